/* Redis fidelity (issue 11, items 8 and 15), narrated: the legacy SETNX
 * recipe of redis.io's SETNX page (setnx-timestamp), and min-replicas as
 * Redis counts it (connected replicas only, per-server settings). Each test
 * runs a small scenario and asserts the times, values and verdicts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "engine.h"
#include "kv.h"

#define S SIM_NS_PER_S
#define MS SIM_NS_PER_MS

#include "step_fixture.h" /* step_until_event, step_until_note, so_far (after S: it keeps ours) */

/* ---- setnx-timestamp: the lock's value is its expiry timestamp --------------------------- */

/* H takes the lock at 0s with ttl 10s: value 0 + 10 + 1 = 11 (Unix seconds
 * of its wall clock), and crashes. A comes at `at`. */
static struct engine *dead_holder_run(const char *at, const char *opts) {
    char text[1024];
    snprintf(text, sizeof text,
             "lock setnx-timestamp ttl=10s %s\n"
             "network latency=0ms\nduration 30s\n"
             "client H: acquire; work 20s; release\n"
             "client A @%s: acquire tries=1; work 1s; release\n"
             "@1s crash H\n",
             opts, at);
    return run_text(text);
}

/* The page: a timestamp equal to the current Unix time is no longer valid.
 * At 11s A's clock reads 11 = the stored value: expired, recovered. */
static void test_timestamp_equal_to_now_is_expired(void **state) {
    (void)state;
    struct engine *e = dead_holder_run("11s", "");
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A");
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 1);
    assert_int_equal(g->t, 0);
    const struct trace_event *n = must_note(e, "A", NOTE_EXACT, "the lock's timestamp has passed: GETSET a new one", 1);
    assert_int_equal(n->a, 11); /* the stored timestamp */
    assert_int_equal(n->b, 11); /* A's clock, in seconds */
    const struct trace_event *g2 = must(e, TRACE_SRV_GRANT, "S1", 2);
    assert_int_equal(g2->peer, A);
    assert_int_equal(g2->t, 11 * S);
    const struct trace_event *acq = must(e, TRACE_ACQUIRED, "A", 1);
    assert_int_equal(acq->t, 11 * S);
    assert_int_equal(acq->a, 11 * S); /* it believes it holds until 11 + 10 + 1 = 22 */
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
}

/* One tick before: at 10.999s A's clock reads 10 (whole seconds) < 11: a live
 * holder, refused; its one try is spent. */
static void test_timestamp_after_now_is_live(void **state) {
    (void)state;
    struct engine *e = dead_holder_run("10.999s", "");
    assert_null(find(e, TRACE_ACQUIRED, "A", 1));
    assert_non_null(find(e, TRACE_ACQUIRE_FAILED, "A", 1));
    assert_null(note(e, "A", NOTE_PREFIX, "the lock's timestamp has passed", 1));
    assert_int_equal(count(e, TRACE_MSG_SEND, "A", -3, 0, 30 * S), 2); /* SETNX, GET; no GETSET */
    engine_free(e);
}

/* stamp-unit=ms: value = 0 + 10000 + 1 = 10001 ms. At 10.000s the clock reads
 * 10000 < 10001: live; at 10.001s it reads 10001: expired. */
static void test_timestamp_in_milliseconds(void **state) {
    (void)state;
    struct engine *e = dead_holder_run("10s", "stamp-unit=ms");
    assert_null(find(e, TRACE_ACQUIRED, "A", 1));
    engine_free(e);
    e = dead_holder_run("10.001s", "stamp-unit=ms");
    const struct trace_event *n = must_note(e, "A", NOTE_PREFIX, "the lock's timestamp has passed", 1);
    assert_int_equal(n->a, 10001);
    assert_int_equal(n->b, 10001);
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->t, 10001 * MS);
    engine_free(e);
}

/* GETSET: the loser reads back the winner's fresh timestamp, is refused, and
 * its own timestamp stays in the key; the store still counts the winner as
 * the holder, so the winner's checked DEL is not a wrong release. */
static void test_getset_loser_leaves_its_timestamp(void **state) {
    (void)state;
    struct engine *e = build_engine("lock setnx-timestamp ttl=10s\n"
                                    "network latency=1ms\nduration 40s\n"
                                    "link B S1 latency=2ms\nlink S1 B latency=2ms\n"
                                    "client H: acquire; work 30s; release\n"
                                    "client A @12s: acquire retry=1s; work 5s; release\n"
                                    "client B @11.998s: acquire tries=1; work 5s; release\n"
                                    "@1s crash H\n",
                                    NULL);
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A");
    story_cursor = 0;
    struct trace_event ev; /* a copy: the trace's own may move as it grows */
    /* 1s: H crashes holding the lock (its timestamp: 11). */
    assert_int_equal(step_until_event(e, TRACE_CRASH, "H")->t, 1 * S);
    /* 12.005s: A's GETSET reads back H's 11: A holds (12 + 10 + 1 = 23). */
    assert_int_equal(step_until_event(e, TRACE_ACQUIRED, "A")->t, 12 * S + 6 * MS);
    /* 12.008s: B's GETSET reads back A's 23 at the store: A's entry stays
     * overwritten by B's timestamp, but B does not hold. */
    ev = *step_until_note(e, "S1", "GETSET: the old timestamp had not passed");
    assert_int_equal(ev.t, 12 * S + 8 * MS);
    assert_int_equal(ev.a, 23);
    assert_int_equal(ev.b, 12);
    ev = *step_until_note(e, "B", "GETSET read back a live timestamp");
    assert_int_equal(ev.a, 23);
    assert_int_equal(so_far(e, TRACE_ACQUIRED, "B"), 0);
    /* A's release at 17.006s: its clock says 17 < 23, so it DELs; the entry is its own. */
    ev = *step_until_event(e, TRACE_SRV_DELETE, "S1");
    assert_int_equal(ev.peer, A);
    assert_int_equal(ev.b, 0);
    engine_run(e);
    assert_null(find(e, TRACE_ACQUIRED, "B", 1)); /* B tried once: it never holds */
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->wrong_releases, 0);
    assert_int_equal(r->double_entries, 0);
    engine_free(e);
}

/* The page's release rule: a holder whose timestamp has passed does not DEL
 * (release-check=on); release-check=off deletes whatever is there. A works 12s with a
 * 10s timeout (value 11); B, with tries, takes the lock over at 11s. */
static void test_release_checks_the_timestamp(void **state) {
    (void)state;
    const char *fmt = "lock setnx-timestamp ttl=10s release-check=%s\n"
                      "network latency=0ms\nduration 40s\n"
                      "client A: acquire; work 12s; release\n"
                      "client B @11s: acquire; work 5s; release\n";
    char text[512];
    snprintf(text, sizeof text, fmt, "on");
    struct engine *e = run_text(text);
    const struct trace_event *n = must_note(
            e, "A", NOTE_EXACT, "release: its timestamp has passed, so it does not DEL (the recipe's check)", 1);
    assert_int_equal(n->t, 12 * S);
    assert_int_equal(n->a, 11);
    assert_int_equal(n->b, 12);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 11 * S);
    assert_int_equal(engine_report(e)->wrong_releases, 0);
    assert_int_equal(engine_report(e)->double_entries, 1); /* 11s..12s: the recipe's TTL is advisory */
    engine_free(e);

    snprintf(text, sizeof text, fmt, "off");
    e = run_text(text);
    const struct trace *tr = engine_trace(e);
    const struct trace_event *d = must(e, TRACE_SRV_DELETE, "S1", 1);
    assert_int_equal(d->t, 12 * S);
    assert_int_equal(d->peer, node_of(tr, "A"));
    assert_int_equal(d->a, node_of(tr, "B"));
    assert_int_equal(engine_report(e)->wrong_releases, 1);
    engine_free(e);
}

/* DEL then SETNX of a dead lock is noted as clearing it, not as a wrong
 * release; the DEL that removes another's fresh lock is one. */
static void test_del_recovery_record(void **state) {
    (void)state;
    struct engine *e = dead_holder_run("12s", "recover=del");
    const struct trace_event *n = must_note(e, "S1", NOTE_EXACT, "DEL clears a lock whose timestamp has passed", 1);
    assert_int_equal(n->a, 11);
    assert_int_equal(n->b, 12);
    assert_non_null(find(e, TRACE_SRV_EXPIRE, "S1", 1));
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->t, 12 * S);
    const struct trace_event *d = must(e, TRACE_SRV_DELETE, "S1", 1); /* A's own release */
    assert_int_equal(d->t, 13 * S);
    assert_int_equal(d->b, 0);
    assert_int_equal(engine_report(e)->wrong_releases, 0);
    engine_free(e);
}

/* The page's race with recover=del: B read H's dead 11 before A's DEL, and
 * its DEL lands after A's SETNX: it deletes A's fresh 23, a wrong release,
 * and both hold the lock. */
static void test_del_recovery_race(void **state) {
    (void)state;
    struct engine *e = run_text("lock setnx-timestamp ttl=10s recover=del\n"
                                "network latency=1ms\nduration 40s\n"
                                "link B S1 latency=2ms\nlink S1 B latency=2ms\n"
                                "client H: acquire; work 30s; release\n"
                                "client A @12s: acquire retry=1s; work 5s; release\n"
                                "client B @11.998s: acquire retry=1s; work 5s; release\n"
                                "@1s crash H\n");
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A"), B = node_of(tr, "B");
    const struct trace_event *n = must_note(
            e, "S1", NOTE_EXACT, "DEL to recover a dead lock finds a fresh timestamp: it deletes a live lock", 1);
    assert_int_equal(n->t, 12 * S + 8 * MS);
    assert_int_equal(n->a, 23); /* A's: 12 + 10 + 1 */
    assert_int_equal(n->b, 12); /* B's clock when it read H's 11 */
    const struct trace_event *d = must(e, TRACE_SRV_DELETE, "S1", 1);
    assert_int_equal(d->t, 12 * S + 8 * MS);
    assert_int_equal(d->peer, B);
    assert_int_equal(d->a, A);
    assert_int_equal(d->b, 1);
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->t, 12 * S + 8 * MS);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 12 * S + 14 * MS);
    assert_int_equal(must(e, TRACE_DOUBLE_ENTRY_BEGIN, NULL, 1)->t, 12 * S + 14 * MS);
    engine_free(e);
}

static void test_setnx_timestamp_options(void **state) {
    (void)state;
    struct scn_error err;
    build_fails("lock setnx-timestamp ttl=1500ms\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "ttl is not a whole number of seconds; the recipe adds it to a timestamp in "
                                 "Unix seconds (use stamp-unit=ms for a finer timeout)");
    assert_int_equal(build_text("lock setnx-timestamp ttl=1500ms stamp-unit=ms\nclient A: acquire\n", &err), 0);
    build_fails("lock setnx-timestamp recover=cas\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "recover 'cas' is not getset or del");
    build_fails("lock setnx-timestamp release-check=maybe\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "release-check 'maybe' is not on or off");
    build_fails("lock setnx-timestamp release=del\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "unknown option 'release' for setnx-timestamp; expected ttl, persistence, "
                                 "request-timeout, recover, release-check, stamp-unit");
    build_fails("lock setnx-timestamp value=unique\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "unknown option 'value' for setnx-timestamp; expected ttl, persistence, "
                                 "request-timeout, recover, release-check, stamp-unit");
}

/* ---- min-replicas as Redis counts it: connected replicas, per-server settings ------------ */

#define N_NOREPLICAS_LAG "NOREPLICAS: refuses the write, too few replicas acknowledged lately"
#define N_NOREPLICAS_CLOSED "NOREPLICAS: refuses the write, too few good replicas (a replica's link is closed)"

/* S2 acks S1's heartbeats (every second from 0s) 2ms after each; the
 * partition at 3.5s leaves the ack of 3.002s as the last. With
 * min-replicas-max-lag=3s, S1 takes a write whose SET arrives (1ms after A
 * starts) while the ack is at most 3s old: -1 ms and 0 are good, +1 ms is not. */
static struct engine *max_lag_run(const char *a_at) {
    char text[512];
    snprintf(text, sizeof text,
             "lock lease servers=2 min-replicas-to-write=1 min-replicas-max-lag=3s\n"
             "network latency=1ms\nduration 10s\n"
             "client A @%s: acquire tries=1; work 100ms; release\n"
             "@3.5s partition A S1 | S2\n",
             a_at);
    return run_text(text);
}

static void test_max_lag_boundary_ms(void **state) {
    (void)state;
    struct engine *e = max_lag_run("6s"); /* the ack is 2.999s old */
    assert_int_equal(must(e, TRACE_SRV_GRANT, "S1", 1)->t, 6 * S + 1 * MS);
    engine_free(e);
    e = max_lag_run("6.001s"); /* exactly 3s: still good (lag <= max-lag) */
    assert_int_equal(must(e, TRACE_SRV_GRANT, "S1", 1)->t, 6 * S + 2 * MS);
    /* Only A's release, 100ms later, is refused (a DEL is a write too). */
    assert_int_equal(must_note(e, "S1", NOTE_EXACT, N_NOREPLICAS_LAG, 1)->t, 6 * S + 104 * MS);
    engine_free(e);
    e = max_lag_run("6.002s"); /* 3.001s: not good */
    const struct trace_event *n = must_note(e, "S1", NOTE_EXACT, N_NOREPLICAS_LAG, 1);
    assert_int_equal(n->t, 6 * S + 3 * MS);
    assert_int_equal(n->a, 0);
    assert_null(find(e, TRACE_SRV_GRANT, "S1", 1));
    engine_free(e);
}

/* CLIENT KILL TYPE replica at 5s with no partition: S1 counts no good replica
 * at once (Redis frees the replica's client and refreshes the count), although
 * S2's last ack is under a second old. S2 learns of the close at 5.001s and
 * reconnects at its next replicationCron run, 6s by its clock; its PSYNC
 * reaches S1 at 6.001s, which counts it good again from then on. */
static struct engine *kill_run(const char *a_at) {
    char text[512];
    snprintf(text, sizeof text,
             "lock lease servers=2 min-replicas-to-write=1 min-replicas-max-lag=10s\n"
             "network latency=1ms\nduration 10s\n"
             "client A @%s: acquire tries=1; work 100ms; release\n"
             "@5s kill-replicas S1\n",
             a_at);
    return run_text(text);
}

static void test_kill_replicas_refuses_at_once(void **state) {
    (void)state;
    struct engine *e = kill_run("5.5s");
    const struct trace *tr = engine_trace(e);
    int S1 = node_of(tr, "S1"), S2 = node_of(tr, "S2");
    const struct trace_event *c = must(e, TRACE_CONTROL, "S1", 1);
    assert_int_equal(c->t, 5 * S);
    assert_int_equal(c->a, LOCK_CONTROL_KILL_REPLICAS);
    const struct trace_event *k = must_note(e, "S1", NOTE_PREFIX, "CLIENT KILL TYPE replica", 1);
    assert_int_equal(k->t, 5 * S);
    assert_int_equal(k->a, 1); /* one link closed */
    const struct trace_event *d = must_note(e, "S2", NOTE_PREFIX, "replica: its link to the primary was closed", 1);
    assert_int_equal(d->t, 5 * S + 1 * MS);
    assert_int_equal(d->a, S1);
    /* 5.501s: refused, 0 good of 1, the last ack only 0.499s old. */
    const struct trace_event *n = must_note(e, "S1", NOTE_EXACT, N_NOREPLICAS_CLOSED, 1);
    assert_int_equal(n->t, 5 * S + 501 * MS);
    assert_int_equal(n->a, 0);
    assert_int_equal(n->b, 1);
    /* 6.001s: S2's PSYNC; S1 counts it again. */
    const struct trace_event *r = must_note(e, "S1", NOTE_PREFIX, "a replica reconnected (PSYNC)", 1);
    assert_int_equal(r->t, 6 * S + 1 * MS);
    assert_int_equal(r->a, S2);
    assert_int_equal(must_note(e, "S2", NOTE_EXACT, "replica: reconnected to the primary", 1)->t, 6 * S + 2 * MS);
    assert_int_equal(engine_report(e)->failed_acquires, 1);
    engine_free(e);

    /* Around the reconnect: a SET at 6.000s is refused, one at 6.002s granted. */
    e = kill_run("5.999s");
    assert_int_equal(must_note(e, "S1", NOTE_EXACT, N_NOREPLICAS_CLOSED, 1)->t, 6 * S);
    engine_free(e);
    e = kill_run("6.001s");
    assert_int_equal(must(e, TRACE_SRV_GRANT, "S1", 1)->t, 6 * S + 2 * MS);
    assert_null(note(e, "S1", NOTE_PREFIX, "NOREPLICAS", 1));
    engine_free(e);
}

/* Killed inside a partition, S2 does not hear the close; S1 keeps its link
 * closed and tells S2 so with each heartbeat (the reset its next ACK would
 * meet). After the heal at 8.5s, the 9s heartbeat's close reaches S2 at
 * 9.001s, S2 reconnects at its 10s cron run, and S1 counts it from 10.001s. */
static void test_killed_link_reconnects_after_heal(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease servers=2 min-replicas-to-write=1 min-replicas-max-lag=10s\n"
                                "network latency=1ms\nduration 12s\n"
                                "client A @9.5s: acquire tries=1; work 100ms; release\n"
                                "client B @11s: acquire tries=1; work 100ms; release\n"
                                "@5s partition A S1 | S2\n@5s kill-replicas S1\n@8.5s heal\n");
    assert_int_equal(must_note(e, "S2", NOTE_PREFIX, "replica: its link to the primary was closed", 1)->t,
                     9 * S + 1 * MS);
    assert_int_equal(must_note(e, "S1", NOTE_PREFIX, "a replica reconnected (PSYNC)", 1)->t, 10 * S + 1 * MS);
    /* A at 9.501s: the link is still closed, refused; B at 11.001s: granted. */
    assert_int_equal(must_note(e, "S1", NOTE_EXACT, N_NOREPLICAS_CLOSED, 1)->t, 9 * S + 501 * MS);
    assert_null(find(e, TRACE_ACQUIRED, "A", 1));
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 11 * S + 2 * MS);
    engine_free(e);
}

/* repl-timeout: a primary closes the link of a replica silent that long, at
 * its once-a-second cron. Max-lag 100s would still count S2 (its last ack at
 * 2.002s); the timeout (5s) does not: 7s - 2.002s = 4.998s keeps the link,
 * 8s - 2.002s = 5.998s closes it. */
static void test_repl_timeout_closes_the_link(void **state) {
    (void)state;
    struct engine *e = run_text(
            "lock lease servers=2 min-replicas-to-write=1 min-replicas-max-lag=100s repl-timeout=5s\n"
            "network latency=1ms\nduration 10s\n"
            "client A @7.5s: acquire tries=1; work 100ms; release\n"
            "client B @8.5s: acquire tries=1; work 100ms; release\n"
            "@2.5s partition A B S1 | S2\n");
    const struct trace_event *d = must_note(e, "S1", NOTE_EXACT, "disconnects a replica silent for repl-timeout", 1);
    assert_int_equal(d->t, 8 * S);
    assert_int_equal(d->a, node_of(engine_trace(e), "S2"));
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->t, 7 * S + 502 * MS);
    assert_int_equal(must_note(e, "S1", NOTE_EXACT, N_NOREPLICAS_CLOSED, 1)->t, 8 * S + 501 * MS);
    assert_null(find(e, TRACE_ACQUIRED, "B", 1));
    engine_free(e);
}

/* Per-server settings: S1 requires a replica, S2 (the one promoted) does not.
 * S2, alone after the partition, grants B at once; S1's note names its own
 * setting (b = 1). With S2.min-replicas-max-lag shorter than S1's lag the
 * promoted S2 would refuse as soon as its replica's acks are older. */
static void test_per_server_min_replicas(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease servers=2 min-replicas-to-write=1 S2.min-replicas-to-write=0\n"
                                "network latency=1ms\nduration 10s\n"
                                "client A @3s: acquire tries=1; work 3s; release\n"
                                "client B @3s: acquire tries=1; work 1s; release\n"
                                "@1s partition A S1 | B S2\n@2s promote S2\n");
    const struct trace *tr = engine_trace(e);
    /* S1 still has S2's ack from 1.002s or before (max-lag 10s): A is granted. */
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->t, 3 * S + 2 * MS);
    /* S2 has no replica and requires none: B is granted too (first asking S1,
     * which is cut off: B's request times out at 4s and goes to S2). */
    const struct trace_event *g = find(e, TRACE_SRV_GRANT, "S2", 1);
    assert_non_null(g);
    assert_int_equal(g->peer, node_of(tr, "B"));
    assert_int_equal(g->t, 4 * S + 1 * MS);
    assert_null(note(e, "S2", NOTE_PREFIX, "NOREPLICAS", 1));
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(engine_report(e)->double_entries, 1);
    engine_free(e);

    /* The same with the lock line's setting on S2 too: S2 refuses B. */
    e = run_text("lock lease servers=2 min-replicas-to-write=1\n"
                 "network latency=1ms\nduration 10s\n"
                 "client A @3s: acquire tries=1; work 3s; release\n"
                 "client B @3s: acquire tries=1; work 1s; release\n"
                 "@1s partition A S1 | B S2\n@2s promote S2\n");
    const struct trace_event *n = must_note(e, "S2", NOTE_EXACT, N_NOREPLICAS_LAG, 1);
    assert_int_equal(n->a, 0);
    assert_int_equal(n->b, 1);
    assert_null(find(e, TRACE_SRV_GRANT, "S2", 1));
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);

    /* A server's own max-lag: S1.min-replicas-max-lag=1s, S2 partitioned
     * at 1.5s (last ack 1.002s): A's SET at 2.003s is 1.001s after it. */
    e = run_text("lock lease servers=2 min-replicas-to-write=1 S1.min-replicas-max-lag=1s\n"
                 "network latency=1ms\nduration 5s\n"
                 "client A @2.002s: acquire tries=1; work 1s; release\n"
                 "@1.5s partition A S1 | S2\n");
    assert_int_equal(must_note(e, "S1", NOTE_EXACT, N_NOREPLICAS_LAG, 1)->t, 2 * S + 3 * MS);
    engine_free(e);
    e = run_text("lock lease servers=2 min-replicas-to-write=1 S1.min-replicas-max-lag=1s\n"
                 "network latency=1ms\nduration 5s\n"
                 "client A @2.001s: acquire tries=1; work 1s; release\n"
                 "@1.5s partition A S1 | S2\n");
    assert_int_equal(must(e, TRACE_SRV_GRANT, "S1", 1)->t, 2 * S + 2 * MS);
    engine_free(e);
}

static void test_per_server_option_errors(void **state) {
    (void)state;
    struct scn_error err;
    build_fails("lock lease servers=2 S3.min-replicas-to-write=1\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "a per-server option names S3, but this run has 2 lock servers (S1..S2)");
    build_fails("lock lease servers=2 S0.min-replicas-to-write=1\nclient A: acquire\n", &err);
    assert_string_equal(err.msg,
                        "option 'S0.min-replicas-to-write' names no lock server; expected S1..S15 before the '.'");
    build_fails("lock lease servers=2 S2.ttl=5s\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "unknown option 'S2.ttl' for lease; expected a server's own min-replicas-to-write "
                                 "or min-replicas-max-lag (as in S2.min-replicas-to-write=0)");
    build_fails("lock lease servers=2 S2.min-replicas-to-write=15\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "min-replicas-to-write '15' is not a number of replicas from 0 to 14");
    build_fails("lock lease servers=2 S2.min-replicas-max-lag=0s\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "min-replicas-max-lag '0s' is not a positive duration such as 10s");
    build_fails("lock setnx-expire S1.min-replicas-to-write=1\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "unknown option 'S1.min-replicas-to-write' for setnx-expire; expected ttl, release, "
                                 "value, expiry-clock, deadline, persistence, request-timeout, gap");
    build_fails("lock lease servers=2 repl-timeout=0s\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "repl-timeout '0s' is not a positive duration such as 60s");
    /* kill-replicas names a lock server (a parse error, at its column). */
    struct scenario sc;
    scenario_init(&sc);
    const char *text = "client A: acquire\n@1s kill-replicas A\n";
    assert_int_not_equal(scenario_parse(&sc, "t.lsim", text, strlen(text), &err), 0);
    assert_int_equal(err.pos.line, 2);
    assert_int_equal(err.pos.col, 19);
    assert_string_equal(err.msg, "only a lock server has replication links to kill; expected S1..S15, found 'A'");
    scenario_close(&sc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_timestamp_equal_to_now_is_expired),
            cmocka_unit_test(test_timestamp_after_now_is_live),
            cmocka_unit_test(test_timestamp_in_milliseconds),
            cmocka_unit_test(test_getset_loser_leaves_its_timestamp),
            cmocka_unit_test(test_release_checks_the_timestamp),
            cmocka_unit_test(test_del_recovery_record),
            cmocka_unit_test(test_del_recovery_race),
            cmocka_unit_test(test_setnx_timestamp_options),
            cmocka_unit_test(test_max_lag_boundary_ms),
            cmocka_unit_test(test_kill_replicas_refuses_at_once),
            cmocka_unit_test(test_killed_link_reconnects_after_heal),
            cmocka_unit_test(test_repl_timeout_closes_the_link),
            cmocka_unit_test(test_per_server_min_replicas),
            cmocka_unit_test(test_per_server_option_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
