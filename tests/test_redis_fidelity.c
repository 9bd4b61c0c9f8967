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
    struct engine *e = run_text("lock setnx-timestamp ttl=10s\n"
                                "network latency=1ms\nduration 40s\n"
                                "link B S1 latency=2ms\nlink S1 B latency=2ms\n"
                                "client H: acquire; work 30s; release\n"
                                "client A @12s: acquire retry=1s; work 5s; release\n"
                                "client B @11.998s: acquire tries=1; work 5s; release\n"
                                "@1s crash H\n");
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A");
    /* 12.005s: A's GETSET reads back H's 11: A holds (12 + 10 + 1 = 23). */
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->t, 12 * S + 6 * MS);
    /* 12.008s: B's GETSET reads back A's 23 at the store. */
    const struct trace_event *n = must_note(e, "S1", NOTE_PREFIX, "GETSET: the old timestamp had not passed", 1);
    assert_int_equal(n->t, 12 * S + 8 * MS);
    assert_int_equal(n->a, 23);
    assert_int_equal(n->b, 12);
    const struct trace_event *l = must_note(e, "B", NOTE_PREFIX, "GETSET read back a live timestamp", 1);
    assert_int_equal(l->a, 23);
    assert_null(find(e, TRACE_ACQUIRED, "B", 1));
    /* A's release at 17.006s: its clock says 17 < 23, so it DELs; the entry is its own. */
    const struct trace_event *d = must(e, TRACE_SRV_DELETE, "S1", 1);
    assert_int_equal(d->peer, A);
    assert_int_equal(d->b, 0);
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
    const struct trace_event *n =
        must_note(e, "A", NOTE_EXACT, "release: its timestamp has passed, so it does not DEL (the recipe's check)", 1);
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timestamp_equal_to_now_is_expired),
        cmocka_unit_test(test_timestamp_after_now_is_live),
        cmocka_unit_test(test_timestamp_in_milliseconds),
        cmocka_unit_test(test_getset_loser_leaves_its_timestamp),
        cmocka_unit_test(test_release_checks_the_timestamp),
        cmocka_unit_test(test_del_recovery_record),
        cmocka_unit_test(test_setnx_timestamp_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
