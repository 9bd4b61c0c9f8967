/* Tests of the coordination-service algorithms: zookeeper and zookeeper-multi
 * (sim/algo/algo_zookeeper.c) and chubby (sim/algo/algo_chubby.c), at their
 * boundaries: the edges of ZooKeeper's tickTime buckets, the negotiated
 * session timeout, the watch on the predecessor only, the release by path
 * against the release that checks the czxid, the multi-op refusing an
 * expired session whatever its timing; Chubby's KeepAlive cadence, jeopardy,
 * grace and "safe", and a delayed write landing one nanosecond before, at,
 * and one nanosecond after the lock-delay's end; and what each server keeps
 * across its own crash and restart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "engine.h"

#define S SIM_NS_PER_S
#define MS SIM_NS_PER_MS

#include "step_fixture.h" /* step_until_event, step_until_time, so_far */

static struct engine *run_fmt(const char *fmt, ...) {
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return run_text(text);
}

static sim_ns acquired_at(const struct engine *e, const char *who) { return must(e, TRACE_ACQUIRED, who, 1)->t; }

/* ---- zookeeper: the tickTime buckets ---------------------------------------------------
 * A starts at `start`, connects, creates its znode and holds the lock at
 * once (latency 0), and is stopped at that instant, before its first ping:
 * its session's last touch is `start`, so it expires in the bucket
 * roundToNextInterval(start_ms + 1000) of 500 ms ticks, and B, waiting on
 * the watch, holds the lock at that instant. */
static const char *BUCKET = "lock zookeeper session-timeout=1s tick-time=500ms\n"
                            "network latency=0ms\nduration 10s\n"
                            "client A @%lldns: acquire; work 5s; release\n"
                            "client B @%lldns: acquire; release\n"
                            "on A.after-acquire pause A 6s\n";

static sim_ns bucket_takeover(sim_ns start) {
    struct engine *e = run_fmt(BUCKET, (long long)start, (long long)(start + 1));
    sim_ns a = acquired_at(e, "A");
    assert_int_equal(a, start);
    sim_ns t = acquired_at(e, "B");
    /* The expirer's note comes at the same instant. */
    const struct trace_event *n = must_note(e, "S1", NOTE_PREFIX, "session expired", 1);
    assert_int_equal(n->t, t);
    engine_free(e);
    return t;
}

static void test_bucket_edges(void **state) {
    (void)state;
    /* 0 + 1000 ms lies on a tick: the next bucket, 1500 ms (not 1000). */
    assert_int_equal(bucket_takeover(0), 1500 * MS);
    /* One tick of the model (1 ns) either side of 500 ms: the server's clock
     * reads whole milliseconds, 499 ms -> 1500, 500 ms -> 2000. */
    assert_int_equal(bucket_takeover(500 * MS - 1), 1500 * MS);
    assert_int_equal(bucket_takeover(500 * MS), 2000 * MS);
    assert_int_equal(bucket_takeover(500 * MS + 1), 2000 * MS);
    /* The last millisecond of a bucket's range and the first of the next. */
    assert_int_equal(bucket_takeover(999 * MS), 2000 * MS);
    assert_int_equal(bucket_takeover(1000 * MS), 2500 * MS);
}

/* The negotiated timeout is clamped to [2, 20] ticks (ZooKeeperServer's
 * defaults): a 1 s session with a 2 s tick becomes 4 s, bucket
 * roundToNextInterval(4000, 2000) = 6 s; 100 s becomes 40 s. */
static void test_session_timeout_clamped(void **state) {
    (void)state;
    struct engine *e = run_fmt(BUCKET, 0LL, 1LL);
    engine_free(e);
    e = run_text("lock zookeeper session-timeout=1s tick-time=2s\n"
                 "network latency=0ms\nduration 60s\n"
                 "client A: acquire; work 5s; release\n"
                 "client B @1ns: acquire; release\n"
                 "on A.after-acquire pause A 50s\n");
    const struct trace_event *n = must_note(e, "S1", NOTE_PREFIX, "session timeout negotiated", 1);
    assert_int_equal(n->a, 4000);
    assert_int_equal(n->b, 1000);
    assert_int_equal(acquired_at(e, "B"), 6 * S);
    engine_free(e);
    e = run_text("lock zookeeper session-timeout=100s tick-time=2s\n"
                 "network latency=0ms\nduration 60s\n"
                 "client A: acquire; work 5s; release\n"
                 "client B @1ns: acquire; release\n"
                 "on A.after-acquire pause A 50s\n");
    n = must_note(e, "S1", NOTE_PREFIX, "session timeout negotiated", 1);
    assert_int_equal(n->a, 40000);
    assert_int_equal(acquired_at(e, "B"), 42 * S); /* (0 + 40000) / 2000 + 1 ticks */
    engine_free(e);
}

/* Pings keep a session alive: A holds for 20 s with a 1 s session and
 * nobody takes the lock from it. Each ping moves the bucket. */
static void test_pings_keep_session(void **state) {
    (void)state;
    struct engine *e = run_text("lock zookeeper session-timeout=1s tick-time=500ms\n"
                                "network latency=0ms\nduration 30s\n"
                                "client A: acquire; work 20s; release\n"
                                "client B @1s: acquire; release\n");
    assert_int_equal(acquired_at(e, "B"), 20 * S);
    assert_null(note(e, "S1", NOTE_PREFIX, "session expired", 1));
    assert_int_equal(engine_report(e)->double_entries, 0);
    engine_free(e);
}

/* The recipe's watch is on the next lower znode only: when A releases, S1
 * sends one watch event, to B; C, watching B's znode, hears nothing until B
 * releases. No herd. */
static void test_watch_on_predecessor_only(void **state) {
    (void)state;
    struct engine *e = run_text("lock zookeeper\n"
                                "network latency=0ms\nduration 30s\n"
                                "client A: acquire; work 5s; release\n"
                                "client B @1s: acquire; work 5s; release\n"
                                "client C @2s: acquire; release\n");
    const struct trace *tr = engine_trace(e);
    int B = node_of(tr, "B"), C = node_of(tr, "C");
    assert_int_equal(acquired_at(e, "B"), 5 * S);
    assert_int_equal(acquired_at(e, "C"), 10 * S);
    /* At 5 s, S1's messages go to A (its delete's reply) and B (watch, then
     * getChildren's reply), none to C. */
    assert_int_equal(count(e, TRACE_MSG_SEND, "S1", C, 5 * S, 5 * S), 0);
    assert_true(count(e, TRACE_MSG_SEND, "S1", B, 5 * S, 5 * S) >= 2);
    /* The grant's token is the znode's czxid: A's is 3 (createSession 1,
     * parent 2, znode 3), B's 5, C's 7; each later one is higher. */
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->token, 3);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->token, 5);
    assert_int_equal(must(e, TRACE_ACQUIRED, "C", 1)->token, 7);
    engine_free(e);
}

/* zk-ruby/zk #34: the naive release deletes C's znode (a wrong release of
 * C's lock by A, at 22 s); the czxid check deletes nothing. */
static const char *ISSUE34 = "lock zookeeper session-timeout=4s tick-time=2s release-by=%s parent-cleanup=on\n"
                             "resource stock=5 fencing=on\nnetwork latency=0ms\nduration 60s\n"
                             "client A: acquire; work 20s; release\n"
                             "client B @1s: acquire; read; write; release\n"
                             "client C @10s: acquire; read; work 20s; write; release\n"
                             "client D @12s: acquire; read; work 9s; write; release\n"
                             "@2s pause A 20s\n";

/* The first half of the issue's story, common to both releases: A holds
 * the lock and is stopped at 2 s; its session expires in the 6 s bucket
 * (4 s timeout, 2 s ticks) and B, first in line, takes and gives back the
 * lock at once; the parent left empty is deleted, so C's znode at 10 s is
 * sequence 0 again, at A's old path. D queues behind C at 12 s. */
static struct engine *issue34_until_a_resumes(const char *release_by) {
    char text[2048];
    snprintf(text, sizeof text, ISSUE34, release_by);
    struct engine *e = build_engine(text, NULL);
    story_cursor = 0;
    assert_int_equal(step_until_event(e, TRACE_ACQUIRED, "A")->token, 3);
    assert_int_equal(step_until_event(e, TRACE_PAUSE, "A")->t, 2 * S);
    assert_int_equal(step_until_event(e, TRACE_SRV_EXPIRE, "S1")->t, 6 * S);
    const struct trace_event *b = step_until_event(e, TRACE_ACQUIRED, "B");
    assert_int_equal(b->t, 6 * S);
    assert_int_equal(b->token, 5);
    assert_int_equal(step_until_event(e, TRACE_CS_EXIT, "B")->t, 6 * S);
    assert_int_equal(step_until_note(e, "S1", "deleted the empty lock parent")->t, 6 * S);
    const struct trace_event *c = step_until_event(e, TRACE_ACQUIRED, "C");
    assert_int_equal(c->t, 10 * S);
    assert_int_equal(c->token, 12);
    /* A is still paused, still believing it holds token 3. */
    assert_int_equal(step_until_event(e, TRACE_ACQUIRE_START, "D")->t, 12 * S);
    assert_int_equal(step_until_event(e, TRACE_RESUME, "A")->t, 22 * S);
    return e;
}

static void test_release_by_path_vs_czxid(void **state) {
    (void)state;
    /* release-by=path: A's release at 22 s deletes whatever znode is at its
     * path, which is C's now: a wrong release, and D is granted at once
     * while C is still working; C's write at 30 s goes in under D's lock. */
    struct engine *e = issue34_until_a_resumes("path");
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A"), C = node_of(tr, "C");
    const struct trace_event *del = step_until_event(e, TRACE_SRV_DELETE, "S1");
    assert_int_equal(del->t, 22 * S);
    assert_int_equal(del->peer, A); /* at A's request */
    assert_int_equal(del->a, C);    /* C's znode */
    assert_int_equal(step_until_event(e, TRACE_ACQUIRED, "D")->t, 22 * S);
    const struct trace_event *w = step_until_event(e, TRACE_WRITE, "R");
    assert_int_equal(w->t, 30 * S);
    assert_int_equal(w->peer, C);
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED); /* token 12, the highest R has seen */
    step_until_time(e, 60 * S);
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(r->wrong_releases, 1);
    assert_int_equal(r->lost_updates, 1);
    engine_free(e);

    /* release-by=czxid: at 22 s A finds a znode at its path with another
     * czxid (C's 12, not its own 3) and deletes nothing; C keeps the lock
     * until it releases at 30 s, and D is granted then. */
    e = issue34_until_a_resumes("czxid");
    const struct trace_event *n = step_until_note(e, "A", "release: the znode at our path is not ours");
    assert_int_equal(n->t, 22 * S);
    assert_int_equal(n->a, 12);                             /* C's czxid found at the path */
    assert_int_equal(n->b, 3);                              /* A's own */
    assert_int_equal(so_far(e, TRACE_SRV_DELETE, "S1"), 1); /* B's release only */
    assert_int_equal(step_until_event(e, TRACE_CS_EXIT, "C")->t, 30 * S);
    assert_int_equal(step_until_event(e, TRACE_ACQUIRED, "D")->t, 30 * S);
    step_until_time(e, 60 * S);
    r = engine_report(e);
    assert_int_equal(r->wrong_releases, 0);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r->final_stock, 2);
    engine_free(e);
}

/* Once its session has expired, every operation of A is refused by the
 * multi-op, even when nobody else holds the lock yet (A reads at 10 s when
 * its pause ends, writes at 17 s; its session expired at 6 s; B starts only
 * at 20 s). The plain recipe with a
 * separate resource accepts the same write. One nanosecond before the
 * bucket the multi is applied. */
static const char *EXPIRED = "lock %s session-timeout=4s tick-time=2s\n"
                             "resource stock=5 fencing=on\nnetwork latency=0ms\nduration 40s\n"
                             "client A: acquire; read; work %lldns; write; release\n"
                             "client B @20s: acquire; read; write; release\n"
                             "on A.after-acquire pause A 10s\n";

static void test_multi_refuses_expired_session_whatever_timing(void **state) {
    (void)state;
    /* A's only touches are at 0 (pings stopped by the pause): bucket 6 s. */
    struct engine *e = run_fmt(EXPIRED, "zookeeper-multi", (long long)(7 * S));
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w->t, 17 * S);
    assert_int_equal(w->b, TRACE_WRITE_REJECTED_STALE);
    must_note(e, "R", NOTE_PREFIX, "multi failed: the writer's lock znode is gone", 1);
    assert_int_equal(engine_report(e)->final_stock, 4); /* B's write only */
    engine_free(e);

    e = run_fmt(EXPIRED, "zookeeper", (long long)(7 * S));
    w = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w->t, 17 * S);
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED); /* the separate resource cannot know */
    engine_free(e);

    /* A paused until 1 ns before the 6 s bucket: its ping at resume moves
     * the session on, and its multi checks a live znode and is applied. */
    e = run_text("lock zookeeper-multi session-timeout=4s tick-time=2s\n"
                 "resource stock=5\nnetwork latency=0ms\nduration 40s\n"
                 "client A: acquire; read; work 7s; write; release\n"
                 "on A.after-acquire pause A 5999999999ns\n");
    w = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    engine_free(e);
    /* ... and paused to exactly the bucket's instant: the expirer's timer was
     * armed first, the session is gone when A's ping arrives. */
    e = run_text("lock zookeeper-multi session-timeout=4s tick-time=2s\n"
                 "resource stock=5\nnetwork latency=0ms\nduration 40s\n"
                 "client A: acquire; read; work 7s; write; release\n"
                 "on A.after-acquire pause A 6s\n");
    w = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w->b, TRACE_WRITE_REJECTED_STALE);
    must_note(e, "A", NOTE_PREFIX, "SESSIONEXPIRED", 1);
    engine_free(e);
}

static void test_zk_options(void **state) {
    (void)state;
    struct scn_error err;
    build_fails("lock zookeeper tick-time=1.5ms\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "tick-time '1.5ms' is not a positive whole number of milliseconds such as 2000ms");
    build_fails("lock zookeeper release-by=ctime\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "release-by 'ctime' is not path or czxid");
    build_fails("lock zookeeper ttl=3s\nclient A: acquire\n", &err);
    assert_non_null(strstr(err.msg, "unknown option 'ttl' for zookeeper; expected session-timeout"));
    build_fails("lock zookeeper servers=3\nclient A: acquire\n", &err);
}

/* ---- chubby ----------------------------------------------------------------------------- */

/* The master holds each KeepAlive until a quarter of the 12 s lease is
 * left, then extends the lease to a full one: renewals of A's lock at 9 s,
 * 18 s, 27 s ... */
static void test_keepalive_cadence(void **state) {
    (void)state;
    struct engine *e = run_text("lock chubby\nnetwork latency=0ms\nduration 40s\n"
                                "client A: acquire; work 30s; release\n");
    assert_int_equal(must(e, TRACE_SRV_RENEW, "S1", 1)->t, 9 * S);
    assert_int_equal(must(e, TRACE_SRV_RENEW, "S1", 2)->t, 18 * S);
    assert_int_equal(must(e, TRACE_SRV_RENEW, "S1", 3)->t, 27 * S);
    assert_null(note(e, "A", NOTE_PREFIX, "local lease expired", 1));
    engine_free(e);
}

/* A is cut off from the master at 5 s. The master's answer to its first
 * KeepAlive, at 9 s, is lost in the partition, so A's local lease is the
 * one of its session's opening, 12 s: jeopardy at 12 s,
 * grace 45 s, session expired for A at 57 s (it leaves the critical
 * section). The master extended the lease to 21 s when it answered; its
 * session ends then, and the lock-delay keeps the lock until 81 s, after A
 * has learnt: no overlap. With a lock-delay of 10 s, B holds the lock from
 * 31 s to 41 s while A, in jeopardy, still believes it holds it. */
static const char *CUT = "lock chubby lock-delay=%s\nnetwork latency=0ms\nduration 120s\n"
                         "client A: acquire; work 80s; release\n"
                         "client B @1s: acquire; work 10s; release\n"
                         "@5s partition A | S1 B\n";

static void test_jeopardy_grace_and_lock_delay(void **state) {
    (void)state;
    struct engine *e = run_fmt(CUT, "1m");
    assert_int_equal(must_note(e, "A", NOTE_PREFIX, "local lease expired", 1)->t, 12 * S);
    assert_int_equal(must_note(e, "A", NOTE_PREFIX, "session expired", 1)->t, 57 * S);
    const struct trace_event *x = must(e, TRACE_CS_EXIT, "A", 1);
    assert_int_equal(x->t, 57 * S);
    assert_int_equal(x->a, 3); /* lock_lost */
    assert_int_equal(must_note(e, "S1", NOTE_PREFIX, "session lease timed out", 1)->t, 21 * S);
    assert_int_equal(acquired_at(e, "B"), 81 * S);
    assert_int_equal(engine_report(e)->double_entries, 0);
    engine_free(e);

    e = run_fmt(CUT, "10s");
    assert_int_equal(acquired_at(e, "B"), 31 * S);
    assert_int_equal(engine_report(e)->double_entries, 1);
    assert_int_equal(engine_report(e)->de_first_from_ns, 31 * S);
    assert_int_equal(engine_report(e)->de_first_to_ns, 41 * S);
    engine_free(e);
}

/* A KeepAlive that gets through in the grace period saves the session:
 * partition from 17 s to 25 s loses the answer of 18 s; A's local lease
 * (21 s) runs out, A retries every second, the master (lease to 30 s)
 * holds the retry until 27 s and answers: "safe". */
static void test_jeopardy_then_safe(void **state) {
    (void)state;
    struct engine *e = run_text("lock chubby\nnetwork latency=0ms\nduration 60s\n"
                                "client A: acquire; work 40s; release\n"
                                "@17s partition A | S1\n@25s heal\n");
    assert_int_equal(must_note(e, "A", NOTE_PREFIX, "local lease expired", 1)->t, 21 * S);
    assert_int_equal(must_note(e, "A", NOTE_PREFIX, "safe:", 1)->t, 27 * S);
    assert_null(note(e, "A", NOTE_PREFIX, "session expired", 1));
    assert_null(note(e, "S1", NOTE_PREFIX, "session lease timed out", 1));
    assert_int_equal(must(e, TRACE_CS_EXIT, "A", 1)->t, 40 * S);
    engine_free(e);
}

/* The failed holder's write, sent at 2 s into a link of latency L, lands at
 * 2 s + L; A's session ends at 21 s and the lock-delay at 81 s, when B is
 * granted. One nanosecond before the end, and at the very instant (the
 * write was sent before the lock-delay's timer was armed, so it is handled
 * first), the write lands while nobody holds the lock: not stale. One
 * nanosecond after, it lands under B: stale, accepted by the unmodified
 * server, refused by CheckSequencer. */
static const char *DELAYED = "lock chubby sequencer=%s\nresource stock=5\nnetwork latency=0ms\nduration 150s\n"
                             "client A: acquire; read; work 2s; write; release\n"
                             "client B @1s: acquire; read; work 20s; write; release\n"
                             "@1s link A R latency=%lldns\n@3s crash A\n";

static void test_lock_delay_edges(void **state) {
    (void)state;
    const sim_ns edge = 79 * S;
    const sim_ns lat[3] = {edge - 1, edge, edge + 1};
    const int stale[3] = {0, 0, 1};
    for (int i = 0; i < 3; i++) {
        struct engine *e = run_fmt(DELAYED, "off", (long long)lat[i]);
        assert_int_equal(acquired_at(e, "B"), 81 * S);
        const struct trace_event *w = must(e, TRACE_WRITE, "R", 1);
        assert_int_equal(w->t, 2 * S + lat[i]);
        assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
        const struct checker_report *r = engine_report(e);
        assert_int_equal(r->stale_accepted, stale[i]);
        assert_int_equal(r->lost_updates, stale[i]);
        assert_int_equal(r->verdict, stale[i] ? SCN_VERDICT_UNSAFE : SCN_VERDICT_SAFE);
        engine_free(e);

        e = run_fmt(DELAYED, "check", (long long)lat[i]);
        w = must(e, TRACE_WRITE, "R", 1);
        assert_int_equal(w->b, TRACE_WRITE_REJECTED_STALE); /* inside the delay or after: refused */
        r = engine_report(e);
        assert_int_equal(r->stale_accepted, 0);
        assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
        assert_int_equal(r->final_stock, 4);
        engine_free(e);
    }
}

/* lock-delay=0: the lock is free the moment the session ends (21 s). */
static void test_lock_delay_zero_and_bound(void **state) {
    (void)state;
    struct engine *e = run_fmt(DELAYED, "off", (long long)(30 * S));
    engine_free(e);
    e = run_text("lock chubby lock-delay=0s\nnetwork latency=0ms\nduration 60s\n"
                 "client A: acquire; work 30s; release\nclient B @1s: acquire; release\n@3s crash A\n");
    assert_int_equal(acquired_at(e, "B"), 21 * S);
    assert_null(note(e, "S1", NOTE_PREFIX, "lock-delay:", 1));
    engine_free(e);
    struct scn_error err;
    build_fails("lock chubby lock-delay=61s\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "lock-delay '61s' is not a duration from 0 to 1m (Chubby's bound is one minute)");
    build_fails("lock chubby sequencer=newest\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "sequencer 'newest' is not check or off: whether the resource calls CheckSequencer");
}

/* A normal release frees the lock at once: no lock-delay. */
static void test_release_no_lock_delay(void **state) {
    (void)state;
    struct engine *e = run_text("lock chubby\nnetwork latency=0ms\nduration 60s\n"
                                "client A: acquire; work 5s; release\nclient B @1s: acquire; release\n");
    assert_int_equal(acquired_at(e, "B"), 5 * S);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->token, 2);
    engine_free(e);
}

/* A standalone ZooKeeper that crashes keeps its data tree and sessions (the
 * snapshot and log) and restarts every session's timeout: A, whose pings
 * were lost from 3 s to 5 s, keeps the lock and releases at 10 s. */
static void test_zk_server_restart_keeps_sessions(void **state) {
    (void)state;
    struct engine *e = run_text("lock zookeeper session-timeout=4s tick-time=2s\n"
                                "network latency=0ms\nduration 40s\n"
                                "client A: acquire; work 10s; release\n"
                                "client B @1s: acquire; release\n"
                                "@3s crash S1\n@5s restart S1\n");
    assert_null(note(e, "S1", NOTE_PREFIX, "session expired", 1));
    assert_int_equal(acquired_at(e, "B"), 10 * S);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->token, 5);
    assert_int_equal(engine_report(e)->double_entries, 0);
    engine_free(e);
}

/* A Chubby master that restarts (no fail-over modelled) forgets its
 * sessions: A's held KeepAlive died with it, so A's local lease ends at
 * 12 s, its KeepAlive is answered "no such session" and A learns at once
 * that its lock is lost; B's waiting Acquire died too, its session ends at
 * 13 s, and its retry at 14 s opens a new session and gets generation 2. */
static void test_chubby_master_restart_forgets_sessions(void **state) {
    (void)state;
    struct engine *e = run_text("lock chubby\nnetwork latency=0ms\nduration 60s\n"
                                "client A: acquire; work 30s; release\n"
                                "client B @1s: acquire; release\n"
                                "@3s crash S1\n@5s restart S1\n");
    assert_int_equal(must_note(e, "A", NOTE_PREFIX, "session expired", 1)->t, 12 * S);
    const struct trace_event *x = must(e, TRACE_CS_EXIT, "A", 1);
    assert_int_equal(x->t, 12 * S);
    assert_int_equal(x->a, 3);
    assert_int_equal(must_note(e, "B", NOTE_PREFIX, "session expired", 1)->t, 13 * S);
    assert_int_equal(acquired_at(e, "B"), 14 * S);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->token, 2);
    assert_int_equal(engine_report(e)->double_entries, 0);
    engine_free(e);
}

/* curator= (issue 25, model 5): Curator's connection states on the
 * client's own clock. A, cut off from S1 at 10s, last heard from it at 6ms;
 * the negotiated timeout is 40s (60s asked, clamped to 20 ticks of 2s), so
 * readTimeout is 26.666666666s: SUSPENDED at 26.672666666s; the server
 * expires the session at its next tick after 40.006s, 42s; LOST a session
 * timeout after SUSPENDED, 66.672666666s. */
static struct engine *curator_story(const char *mode, const char *heal) {
    char text[1024];
    snprintf(text, sizeof text,
             "lock zookeeper session-timeout=60s curator=%s\nresource stock=10\nnetwork latency=1ms\n"
             "duration 90s\nclient A: acquire; read; work 50s; write; release\n"
             "client B @5s: acquire; read; write; release\n"
             "@10s link A S1 loss=100%%\n@10s link S1 A loss=100%%\n%s",
             mode, heal);
    return build_engine(text, NULL);
}

static void test_curator_waits_for_lost(void **state) {
    (void)state;
    struct engine *e = curator_story("lost", "");
    story_cursor = 0;
    const struct trace_event *ev = step_until_note(e, "A", "SUSPENDED (Curator)");
    assert_int_equal(ev->t, 26672666666);
    assert_int_equal(ev->a, 26666666666); /* readTimeout */
    assert_int_equal(ev->b, 1);           /* holding */
    assert_int_equal(step_until_event(e, TRACE_SRV_EXPIRE, "S1")->t, 42 * S);
    assert_int_equal(step_until_event(e, TRACE_ACQUIRED, "B")->t, 42 * S + 3 * MS);
    ev = step_until_event(e, TRACE_WRITE, "R");
    assert_int_equal(ev->peer, node_of(engine_trace(e), "B"));
    ev = step_until_event(e, TRACE_WRITE, "R");
    assert_int_equal(ev->peer, node_of(engine_trace(e), "A"));
    assert_int_equal(ev->t, 50 * S + 9 * MS);
    assert_int_equal(ev->b, TRACE_WRITE_ACCEPTED);
    ev = step_until_note(e, "A", "LOST (Curator)");
    assert_int_equal(ev->t, 66672666666);
    assert_int_equal(ev->b, 0); /* A had released by then */
    engine_run(e);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_UNSAFE);
    engine_free(e);
}

static void test_curator_stops_on_suspended(void **state) {
    (void)state;
    struct engine *e = curator_story("suspended", "");
    story_cursor = 0;
    const struct trace_event *ev = step_until_event(e, TRACE_CS_EXIT, "A");
    assert_int_equal(ev->t, 26672666666);
    assert_int_equal(ev->a, TRACE_EXIT_LOST);
    engine_run(e);
    assert_int_equal(must(e, TRACE_WRITE_SKIPPED, "A", 1)->a, TRACE_SKIP_LOST);
    assert_int_equal(engine_report(e)->double_entries, 0);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
    /* off (the default): no state is posted at all. */
    e = curator_story("off", "");
    engine_run(e);
    assert_null(note(e, "A", NOTE_PREFIX, "SUSPENDED", 1));
    assert_null(note(e, "A", NOTE_PREFIX, "LOST", 1));
    engine_free(e);
}

/* The link comes back at 30s: A's next ping (40.002s at S1) touches the
 * session before its 42s bucket, the reply says RECONNECTED, and nothing
 * expires; A, which waits for LOST, never stopped, and B gets the lock after
 * A's release. */
static void test_curator_reconnected(void **state) {
    (void)state;
    struct engine *e = curator_story("lost", "@30s link A S1 loss=0%\n@30s link S1 A loss=0%\n");
    engine_run(e);
    const struct trace_event *s = note(e, "A", NOTE_PREFIX, "SUSPENDED (Curator)", 1);
    const struct trace_event *r = note(e, "A", NOTE_PREFIX, "RECONNECTED (Curator)", 1);
    assert_non_null(s);
    assert_non_null(r);
    assert_true(r->t > 30 * S && r->t < 42 * S);
    assert_null(note(e, "A", NOTE_PREFIX, "LOST (Curator)", 1));
    assert_int_equal(so_far(e, TRACE_SRV_EXPIRE, "S1"), 0);
    assert_true(must(e, TRACE_ACQUIRED, "B", 1)->t > 50 * S);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
    struct scn_error err;
    build_fails("lock zookeeper curator=maybe\nclient A: acquire; release\n", &err);
    assert_non_null(strstr(err.msg, "curator 'maybe' is not off (a plain client), suspended (Curator, the work "
                                    "stops on SUSPENDED) or lost (Curator, the work stops on LOST)"));
}

/* curator=suspended and the link back at 30s: A stopped its work at
 * SUSPENDED (26.672666666s), and the recipe's release (InterProcessMutex
 * .release -> LockInternals.deleteOurPath, a guaranteed delete) could not
 * reach S1. A's ping answered at 40.003999999s is RECONNECTED: the session
 * is alive and so is A's znode, which would hold the lock until the
 * session ends (A pings on, so never: before, B never acquired). The
 * guaranteed delete goes through then, and B, watching it, holds the lock
 * 4 ms later, 10 s before A's program would have reached its release. */
static void test_curator_suspended_then_reconnected(void **state) {
    (void)state;
    struct engine *e = curator_story("suspended", "@30s link A S1 loss=0%\n@30s link S1 A loss=0%\n");
    story_cursor = 0;
    /* 26.672666666s: SUSPENDED; A leaves its critical section, lock lost. */
    const struct trace_event *ev = step_until_event(e, TRACE_CS_EXIT, "A");
    assert_int_equal(ev->t, 26672666666);
    assert_int_equal(ev->a, TRACE_EXIT_LOST);
    /* 40.003999999s: S1 answers A's ping: RECONNECTED, and the owed
     * delete of A's znode (sequence 0) leaves at once. */
    ev = step_until_note(e, "A", "RECONNECTED (Curator)");
    assert_int_equal(ev->t, 40003999999);
    ev = step_until_note(e, "A", "RECONNECTED: the recipe's guaranteed delete");
    assert_int_equal(ev->t, 40003999999);
    assert_int_equal(ev->a, 0);
    /* 40.004999999s: S1 deletes it (A's own request), and B's watch fires. */
    ev = step_until_event(e, TRACE_SRV_DELETE, "S1");
    assert_int_equal(ev->t, 40004999999);
    assert_int_equal(ev->peer, node_of(engine_trace(e), "A"));
    /* 40.007999999s: B holds the lock, its znode's czxid the token. */
    ev = step_until_event(e, TRACE_ACQUIRED, "B");
    assert_int_equal(ev->t, 40007999999);
    assert_int_equal(ev->token, 5);
    engine_run(e);
    /* The session never expired; A's write at 50s is not sent. */
    assert_int_equal(so_far(e, TRACE_SRV_EXPIRE, "S1"), 0);
    assert_int_equal(must(e, TRACE_WRITE_SKIPPED, "A", 1)->a, TRACE_SKIP_LOST);
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r->double_entries, 0);
    assert_int_equal(r->starved, 0);
    assert_int_equal(r->final_stock, 9);
    engine_free(e);
}

/* flavor=consul (issue 25, model 5): Consul sessions. A holds the lock from
 * 0s; `fault` cuts it off from S1 or pauses it at 5s. */
static struct engine *consul_story(const char *opts, const char *fault) {
    char text[1024];
    snprintf(text, sizeof text,
             "lock chubby flavor=consul sequencer=off%s\nresource stock=5\nnetwork latency=0ms\nduration 90s\n"
             "client A: acquire; read; work 50s; write; release\n"
             "client B @1s: acquire; read; write; release\n%s",
             opts, fault);
    return run_text(text);
}

static void test_consul_session_invalidated_at_twice_ttl(void **state) {
    (void)state;
    /* No fault: renewals every TTL/2 (7.5s), each answered at once, keep
     * the session; nothing is invalidated and B follows A's release. */
    struct engine *e = consul_story("", "");
    assert_int_equal(must(e, TRACE_SRV_RENEW, "S1", 1)->t, 7 * S + 500 * MS);
    assert_int_equal(must(e, TRACE_SRV_RENEW, "S1", 2)->t, 15 * S);
    assert_null(note(e, "S1", NOTE_PREFIX, "session invalidated", 1));
    assert_int_equal(acquired_at(e, "B"), 50 * S);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
    /* Cut off at 5s: the session, last renewed at its opening (0s), is
     * invalidated at 30s (2 x 15s, not 15s), the lock withheld for the 15s
     * lock-delay; B has it at 45s. A has no local lease and its monitor's
     * answer is lost: it is told nothing and its write at 50s lands. */
    e = consul_story("", "@5s link A S1 loss=100%\n@5s link S1 A loss=100%\n");
    assert_int_equal(must_note(e, "S1", NOTE_PREFIX, "session invalidated: twice its TTL", 1)->t, 30 * S);
    assert_int_equal(acquired_at(e, "B"), 45 * S);
    assert_null(note(e, "A", NOTE_PREFIX, "lock monitor", 1));
    assert_null(note(e, "A", NOTE_PREFIX, "local lease expired", 1)); /* no jeopardy in Consul's client */
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_UNSAFE);
    engine_free(e);
    /* lease=10s, which flavor=consul keeps: invalidated at 20s,
     * B at 35s; lock-delay=0s: B at the invalidation. */
    e = consul_story(" lease=10s", "@5s link A S1 loss=100%\n@5s link S1 A loss=100%\n");
    assert_int_equal(must_note(e, "S1", NOTE_PREFIX, "session invalidated", 1)->t, 20 * S);
    assert_int_equal(acquired_at(e, "B"), 35 * S);
    engine_free(e);
    e = consul_story(" lock-delay=0s", "@5s link A S1 loss=100%\n@5s link S1 A loss=100%\n");
    assert_int_equal(acquired_at(e, "B"), 30 * S);
    engine_free(e);
}

/* The holder learns of the invalidation only from its lock monitor: A,
 * paused 5s-40s, is invalidated at 30s; the monitor's answer waits for it
 * and A leaves the critical section when it resumes at 40s, before its
 * write, and B has the lock at 45s: SAFE. */
static void test_consul_monitor_tells_holder(void **state) {
    (void)state;
    struct engine *e = consul_story("", "@5s pause A 35s\n");
    assert_int_equal(must_note(e, "S1", NOTE_PREFIX, "session invalidated", 1)->t, 30 * S);
    assert_int_equal(must_note(e, "A", NOTE_PREFIX, "lock monitor: the key's session is gone", 1)->t, 40 * S);
    assert_int_equal(must(e, TRACE_CS_EXIT, "A", 1)->t, 40 * S);
    assert_int_equal(acquired_at(e, "B"), 45 * S);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_bucket_edges),
            cmocka_unit_test(test_session_timeout_clamped),
            cmocka_unit_test(test_pings_keep_session),
            cmocka_unit_test(test_watch_on_predecessor_only),
            cmocka_unit_test(test_release_by_path_vs_czxid),
            cmocka_unit_test(test_multi_refuses_expired_session_whatever_timing),
            cmocka_unit_test(test_zk_options),
            cmocka_unit_test(test_keepalive_cadence),
            cmocka_unit_test(test_jeopardy_grace_and_lock_delay),
            cmocka_unit_test(test_jeopardy_then_safe),
            cmocka_unit_test(test_lock_delay_edges),
            cmocka_unit_test(test_lock_delay_zero_and_bound),
            cmocka_unit_test(test_release_no_lock_delay),
            cmocka_unit_test(test_zk_server_restart_keeps_sessions),
            cmocka_unit_test(test_chubby_master_restart_forgets_sessions),
            cmocka_unit_test(test_consul_session_invalidated_at_twice_ttl),
            cmocka_unit_test(test_consul_monitor_tells_holder),
            cmocka_unit_test(test_curator_waits_for_lost),
            cmocka_unit_test(test_curator_stops_on_suspended),
            cmocka_unit_test(test_curator_reconnected),
            cmocka_unit_test(test_curator_suspended_then_reconnected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
