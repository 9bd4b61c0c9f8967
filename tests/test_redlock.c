/* Redlock tests, narrated: each runs a small scenario on five lock servers
 * and walks its trace, asserting the virtual times, validity times and
 * verdicts that follow from the Redis documentation's Redlock description:
 * validity = TTL - elapsed - drift, drift = TTL * 1% + 2ms, quorum N/2+1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "step_fixture.h" /* S(x): x seconds; step_until_event */

#include "engine.h"
#include "kv.h"

#define MS SIM_NS_PER_MS

/* Requests of one type sent by a node. */
static int sends_of_type(const struct engine *e, const char *node, int type) {
    int n = 0;
    for (int i = 1;; i++) {
        const struct trace_event *ev = find(e, TRACE_MSG_SEND, node, i);
        if (!ev) return n;
        if (ev->b == type) n++;
    }
}

/* A slow acquisition: the client believes it holds the lock for exactly
 * TTL - elapsed - drift, by its own monotonic clock. */
static void test_validity_is_ttl_minus_elapsed_minus_drift(void **state) {
    (void)state;
    /* Every link takes 5ms, except S5's replies to A, which take 35ms. */
    struct engine *e = build_engine("lock redlock ttl=10s\nnetwork latency=5ms\n"
                                    "link S5 A latency=35ms\n"
                                    "client A: acquire; release\n",
                                    NULL);
    story_cursor = 0;
    /* t=5ms: all five servers grant, one after the other, each for the full 10s. */
    for (int i = 1; i <= 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "S%d", i);
        const struct trace_event *g = step_until_event(e, TRACE_SRV_GRANT, name);
        assert_int_equal(g->t, 5 * MS);
        assert_int_equal(g->a, S(10));
    }
    /* t=40ms: the last reply (S5's) arrives and A decides: a quorum. */
    const struct trace_event *n = step_until_event(e, TRACE_SRV_NOTE, "A");
    assert_ptr_equal(n, must_note(e, "A", NOTE_PREFIX, "quorum of OK replies", 1));
    assert_int_equal(n->a, 5);       /* five OK replies */
    assert_int_equal(n->b, 40 * MS); /* elapsed */
    /* Elapsed = 40ms, drift = 10s * 1% + 2ms = 102ms: validity = 10s - 40ms - 102ms. */
    const struct trace_event *acq = step_until_event(e, TRACE_ACQUIRED, "A");
    assert_int_equal(acq->t, 40 * MS);
    assert_int_equal(acq->a, S(10) - 40 * MS - 102 * MS);
    assert_int_equal(acq->a, 9858 * MS);
    assert_int_equal(acq->token, 0); /* Redlock issues no fencing token */
    engine_free(e);

    /* The drift allowance is an option: 0.5% and no fixed part gives
     * 10s - 40ms - 50ms, however the fraction is written. */
    const char *forms[] = {"0.5%", "0.005", "5000ppm"};
    for (int i = 0; i < 3; i++) {
        char text[256];
        snprintf(text, sizeof text,
                 "lock redlock ttl=10s drift-factor=%s drift-extra=0ms\nnetwork latency=5ms\n"
                 "link S5 A latency=35ms\nclient A: acquire; release\n",
                 forms[i]);
        e = run_text(text);
        assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->a, 9910 * MS);
        engine_free(e);
    }
}

/* Three of five is a majority: two servers cut off cost one request
 * timeout, and the lock is still granted. */
static void test_quorum_three_of_five(void **state) {
    (void)state;
    struct engine *e = build_engine("lock redlock ttl=10s\nnetwork latency=1ms\n"
                                    "client A: acquire tries=1; work 1s; release\n"
                                    "@0s partition A S1 S2 S3 R | S4 S5\n",
                                    NULL);
    story_cursor = 0;
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A");
    /* t=0: the requests to S4 and S5 are dropped by the partition. */
    assert_int_equal(step_until_event(e, TRACE_MSG_DROP, "S4")->b, TRACE_DROP_PARTITION);
    /* t=1ms: S1..S3 grant; S4 and S5 never heard. */
    assert_int_equal(step_until_event(e, TRACE_SRV_GRANT, "S3")->t, 1 * MS);
    /* t=50ms: the request timeout (default 50ms) passes; two servers were silent. */
    const struct trace_event *silent = step_until_event(e, TRACE_SRV_NOTE, "A");
    assert_ptr_equal(silent, must_note(e, "A", NOTE_PREFIX, "request timeout", 1));
    assert_int_equal(silent->t, 50 * MS);
    assert_int_equal(silent->a, 2);
    /* 3 >= 5/2+1: granted, valid for 10s - 50ms - 102ms. */
    const struct trace_event *acq = step_until_event(e, TRACE_ACQUIRED, "A");
    assert_int_equal(acq->t, 50 * MS);
    assert_int_equal(acq->a, 9848 * MS);
    /* t=1.05s: A releases on every server (release-all=on): S1..S3 delete it. */
    for (int i = 1; i <= 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "S%d", i);
        const struct trace_event *d = step_until_event(e, TRACE_SRV_DELETE, name);
        assert_int_equal(d->t, 1051 * MS);
        assert_int_equal(d->peer, A);
    }
    /* To the end: S4 and S5 granted nothing; A sent its delete to all five. */
    engine_run(e);
    assert_null(find(e, TRACE_SRV_GRANT, "S4", 1));
    assert_null(find(e, TRACE_SRV_GRANT, "S5", 1));
    assert_int_equal(sends_of_type(e, "A", KV_CAD), 5);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);

    /* quorum=4 asks more than a majority: the same three OKs are refused. */
    e = run_text("lock redlock ttl=10s quorum=4\nnetwork latency=1ms\n"
                 "client A: acquire tries=1; work 1s; release\n"
                 "@0s partition A S1 S2 S3 R | S4 S5\n");
    const struct trace_event *no = must_note(e, "A", NOTE_PREFIX, "too few servers said OK", 1);
    assert_int_equal(no->a, 3);
    assert_int_equal(no->b, 4);
    assert_null(find(e, TRACE_ACQUIRED, "A", 1));
    engine_free(e);
}

/* Two of five is not a majority: A refuses and unlocks what it got. */
static void test_no_quorum_releases_what_it_got(void **state) {
    (void)state;
    struct engine *e = run_text("lock redlock ttl=10s\nnetwork latency=1ms\n"
                                "client A: acquire tries=1; work 1s; release\n"
                                "@0s partition A S1 S2 R | S3 S4 S5\n");
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A");
    /* t=1ms: S1 and S2 grant. */
    assert_int_equal(must(e, TRACE_SRV_GRANT, "S1", 1)->t, 1 * MS);
    assert_int_equal(must(e, TRACE_SRV_GRANT, "S2", 1)->t, 1 * MS);
    /* t=50ms: the timeout passes with two OKs against a quorum of three. */
    const struct trace_event *no = must_note(e, "A", NOTE_PREFIX, "too few servers said OK", 1);
    assert_int_equal(no->t, 50 * MS);
    assert_int_equal(no->a, 2);
    assert_int_equal(no->b, 3);
    /* t=51ms: A's compare-and-delete removes its own keys from S1 and S2. */
    for (int i = 1; i <= 2; i++) {
        const struct trace_event *d = must(e, TRACE_SRV_DELETE, i == 1 ? "S1" : "S2", 1);
        assert_int_equal(d->t, 51 * MS);
        assert_int_equal(d->peer, A); /* requester */
        assert_int_equal(d->a, A);    /* owner of the deleted key */
        assert_int_equal(d->b, 0);    /* its own */
    }
    /* The unlock went to all five (the documentation's step 4); the three
     * cut off never answer, so the attempt ends one more timeout later. */
    assert_int_equal(sends_of_type(e, "A", KV_CAD), 5);
    assert_int_equal(must(e, TRACE_ACQUIRE_DENIED, "A", 1)->t, 100 * MS);
    assert_int_equal(must(e, TRACE_ACQUIRE_FAILED, "A", 1)->t, 100 * MS);
    assert_null(find(e, TRACE_ACQUIRED, "A", 1));
    /* Nothing is left held: no expiry ever fires. */
    assert_int_equal(count(e, TRACE_SRV_EXPIRE, NULL, -3, 0, SIM_TIME_MAX), 0);
    engine_free(e);

    /* release-all=off unlocks only where SET said OK: two requests, both
     * answered, so the attempt ends at 52ms instead of 100ms. */
    e = run_text("lock redlock ttl=10s release-all=off\nnetwork latency=1ms\n"
                 "client A: acquire tries=1; work 1s; release\n"
                 "@0s partition A S1 S2 R | S3 S4 S5\n");
    assert_int_equal(sends_of_type(e, "A", KV_CAD), 2);
    assert_int_equal(must(e, TRACE_SRV_DELETE, "S2", 1)->t, 51 * MS);
    assert_int_equal(must(e, TRACE_ACQUIRE_DENIED, "A", 1)->t, 52 * MS);
    engine_free(e);
}

/* A pause during acquisition eats the validity; past the TTL, the
 * elapsed-time check refuses a lock that has expired everywhere. */
static void test_elapsed_check_after_pause(void **state) {
    (void)state;
    /* A 4s pause: all five OK, validity 10s - 4s - 102ms, exactly. */
    struct engine *e = run_text("lock redlock ttl=10s\nnetwork latency=1ms\n"
                                "client A: acquire tries=1; release\n"
                                "on A.during-acquire pause A 4s\n");
    const struct trace_event *acq = must(e, TRACE_ACQUIRED, "A", 1);
    assert_int_equal(acq->t, S(4));
    assert_int_equal(acq->a, 5898 * MS);
    engine_free(e);

    /* A 15s pause: the keys' deadline is 10.001s on every server; they
     * expire from the next millisecond. */
    e = run_text("lock redlock ttl=10s\nnetwork latency=1ms\n"
                 "client A: acquire tries=1; release\n"
                 "on A.during-acquire pause A 15s\n");
    assert_int_equal(must(e, TRACE_PAUSE, "A", 1)->t, 0);
    assert_int_equal(must(e, TRACE_SRV_EXPIRE, "S1", 1)->t, 10002 * MS);
    assert_int_equal(count(e, TRACE_SRV_EXPIRE, NULL, -3, 0, SIM_TIME_MAX), 5);
    /* t=15s: A resumes with five OK replies, but 10s - 15s - 102ms < 0. */
    const struct trace_event *late = must_note(e, "A", NOTE_PREFIX, "quorum, but TTL - elapsed - drift <= 0", 1);
    assert_int_equal(late->t, S(15));
    assert_int_equal(late->a, -5102 * MS); /* validity */
    assert_int_equal(late->b, S(15));      /* elapsed */
    assert_null(find(e, TRACE_ACQUIRED, "A", 1));
    /* It unlocks all five; none holds its key any more (owner -1). */
    assert_int_equal(count(e, TRACE_SRV_KEEP, NULL, -3, 0, SIM_TIME_MAX), 5);
    assert_int_equal(must(e, TRACE_SRV_KEEP, "S3", 1)->a, -1);
    assert_int_equal(must(e, TRACE_ACQUIRE_DENIED, "A", 1)->t, 15002 * MS);
    engine_free(e);

    /* The unsafe variant skips the check and believes TTL - drift. */
    e = run_text("lock redlock ttl=10s elapsed-check=off\nnetwork latency=1ms\n"
                 "client A: acquire tries=1; release\n"
                 "on A.during-acquire pause A 15s\n");
    acq = must(e, TRACE_ACQUIRED, "A", 1);
    assert_int_equal(acq->t, S(15));
    assert_int_equal(acq->a, 9898 * MS);
    engine_free(e);
}

/* Measuring the elapsed time by the wall clock: a step back during the
 * acquisition makes the client believe in more time than the TTL. */
static void test_elapsed_by_wall_clock_is_corrupted(void **state) {
    (void)state;
    const char *fmt = "lock redlock ttl=10s elapsed-clock=%s\nnetwork latency=1ms\n"
                      "clock A offset=+100s\n" /* A's wall clock reads 100s ahead */
                      "client A: acquire; release\n"
                      "on A.during-acquire clock A step -5s wall\n";
    char text[256];
    snprintf(text, sizeof text, fmt, "monotonic");
    struct engine *e = run_text(text);
    /* Monotonic: elapsed 2ms, validity 10s - 2ms - 102ms. */
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->a, 9896 * MS);
    engine_free(e);
    snprintf(text, sizeof text, fmt, "wall");
    e = run_text(text);
    /* Wall: "elapsed" = 2ms - 5s, so validity = 10s + 4.998s - 102ms > TTL. */
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->a, 14896 * MS);
    engine_free(e);
}

/* A server's wall clock jumps forward and expires A's key early; B then
 * assembles its own majority (Kleppmann's example). */
static void test_server_wall_jump_expires_early(void **state) {
    (void)state;
    const char *fmt = "lock redlock ttl=10s expiry-clock=%s\nnetwork latency=1ms\nduration 30s\n"
                      "resource stock=2\n"
                      "link A S4 loss=100%%\nlink A S5 loss=100%%\n"
                      "link B S1 loss=100%%\nlink B S2 loss=100%%\n"
                      "client A: acquire; read; work 5s; write; release\n"
                      "client B @2s: acquire retry=1s; read; write; release\n"
                      "@1s clock S3 step +10s wall\n";
    char text[512];
    snprintf(text, sizeof text, fmt, "wall");
    struct engine *e = run_text(text);
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A"), B = node_of(tr, "B");
    /* t=50ms: A holds S1, S2, S3. */
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->t, 50 * MS);
    /* t=1s: S3's clock jumps; A's key there expires 9s early. */
    const struct trace_event *x = must(e, TRACE_SRV_EXPIRE, "S3", 1);
    assert_int_equal(x->t, S(1));
    assert_int_equal(x->peer, A);
    assert_null(find(e, TRACE_SRV_EXPIRE, "S1", 1));
    /* t=2.001s: S3 grants to B, and S4, S5 as well: a second majority. */
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S3", 2);
    assert_int_equal(g->t, 2001 * MS);
    assert_int_equal(g->peer, B);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 2050 * MS);
    assert_int_equal(must(e, TRACE_DOUBLE_ENTRY_BEGIN, NULL, 1)->t, 2050 * MS);
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(r->lost_updates, 1);
    engine_free(e);

    /* Expiring by the monotonic clock, S3 keeps A's key and refuses B. */
    snprintf(text, sizeof text, fmt, "monotonic");
    e = run_text(text);
    tr = engine_trace(e);
    B = node_of(tr, "B");
    assert_null(find(e, TRACE_SRV_EXPIRE, "S3", 1));
    const struct trace_event *d = must(e, TRACE_SRV_DENY, "S3", 1);
    assert_int_equal(d->t, 2001 * MS);
    assert_int_equal(d->peer, B);
    /* B gets in only after A's release at 5.054s: attempts at 2s, 3.1s,
     * 4.2s are refused; the one at 5.3s succeeds. */
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 5350 * MS);
    assert_int_equal(must(e, TRACE_ACQUIRE_DENIED, "B", 3)->t, 4300 * MS);
    r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r->double_entries, 0);
    assert_int_equal(r->final_stock, 0);
    engine_free(e);
}

static const char *RESTART = "lock redlock ttl=10s %s\nnetwork latency=1ms\nduration 30s\nresource stock=2\n"
                             "link A S4 loss=100%%\nlink A S5 loss=100%%\n"
                             "link B S1 loss=100%%\nlink B S2 loss=100%%\n"
                             "client A: acquire; read; work 5s; write; release\n"
                             "client B @3s: acquire retry=2s; read; write; release\n"
                             "@1s crash S3\n@2s restart S3\n";

/* A server restarting without persistence has forgotten A's key. */
static void test_restart_without_persistence_loses_the_key(void **state) {
    (void)state;
    char text[512];
    snprintf(text, sizeof text, RESTART, "persistence=none");
    struct engine *e = run_text(text);
    const struct trace *tr = engine_trace(e);
    int B = node_of(tr, "B");
    /* t=2s: S3 comes back empty. */
    assert_int_equal(must_note(e, "S3", NOTE_PREFIX, "restarted empty", 1)->t, S(2));
    /* t=3.001s: it grants B, whose S3, S4, S5 make a second majority. */
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S3", 2);
    assert_int_equal(g->t, 3001 * MS);
    assert_int_equal(g->peer, B);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 3050 * MS);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(engine_report(e)->double_entries, 1);
    engine_free(e);

    /* With persistence=always the key survives and S3 refuses B. */
    snprintf(text, sizeof text, RESTART, "persistence=always");
    e = run_text(text);
    B = node_of(engine_trace(e), "B");
    const struct trace_event *d = must(e, TRACE_SRV_DENY, "S3", 1);
    assert_int_equal(d->t, 3001 * MS);
    assert_int_equal(d->peer, B);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
}

/* antirez's delayed restart: S3 refuses SET NX for delayed-restart after
 * coming back, so it cannot hand out a lock it may already have given. */
static void test_delayed_restart_refuses_to_grant(void **state) {
    (void)state;
    char text[512];
    snprintf(text, sizeof text, RESTART, "persistence=none delayed-restart=10s");
    struct engine *e = run_text(text);
    const struct trace *tr = engine_trace(e);
    int B = node_of(tr, "B");
    /* t=2s: S3 restarts empty and announces the 10s delay. */
    const struct trace_event *n = must_note(e, "S3", NOTE_PREFIX, "delayed restart: no grants", 1);
    assert_int_equal(n->t, S(2));
    assert_int_equal(n->a, S(10));
    /* t=3.001s: B's SET NX is refused; grants resume at 12s, 8.999s later. */
    const struct trace_event *r1 = must_note(e, "S3", NOTE_PREFIX, "delayed restart: SET NX refused", 1);
    assert_int_equal(r1->t, 3001 * MS);
    assert_int_equal(r1->a, B);
    assert_int_equal(r1->b, 8999 * MS);
    /* Each of B's attempts takes 100ms (a timeout on S1 and S2, then on the
     * unlock) plus its 2s retry: 3s, 5.1s, 7.2s, 9.3s, 11.4s are refused... */
    assert_int_equal(must_note(e, "S3", NOTE_PREFIX, "delayed restart: SET NX refused", 5)->t, 11401 * MS);
    assert_int_equal(must(e, TRACE_ACQUIRE_DENIED, "B", 5)->t, 11500 * MS);
    /* ...and at 13.501s, past the delay, S3 grants again. */
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S3", 2);
    assert_int_equal(g->t, 13501 * MS);
    assert_int_equal(g->peer, B);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 13550 * MS);
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r->double_entries, 0);
    assert_int_equal(r->final_stock, 0);
    engine_free(e);
}

/* The lock line's options are checked with a sentence naming the choices. */
static void test_options_are_validated(void **state) {
    (void)state;
    struct scn_error err;
    assert_int_equal(build_text("lock redlock ttI=3s\nclient A: acquire\n", &err), LSIM_EUNKNOWN_OPTION);
    assert_string_equal(err.msg, "unknown option 'ttI' for redlock; expected ttl, quorum, elapsed-check, "
                                 "elapsed-clock, drift-factor, drift-extra, request-timeout, release-all, "
                                 "expiry-clock, deadline, persistence, delayed-restart");
    assert_int_equal(err.pos.col, 14);
    assert_int_equal(build_text("lock redlock drift-factor=150%\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_non_null(strstr(err.msg, "drift-factor '150%'"));
    assert_int_equal(build_text("lock redlock drift-factor=0.0000001\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_int_equal(build_text("lock redlock quorum=0\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_int_equal(build_text("lock redlock elapsed-clock=tsc\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_string_equal(err.msg, "elapsed-clock 'tsc' is not monotonic or wall");
    assert_int_equal(build_text("lock redlock release=del\nclient A: acquire\n", &err), LSIM_EUNKNOWN_OPTION);
    assert_int_equal(build_text("lock redlock delayed-restart=-1s\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    /* Every option at once, each valid. */
    assert_int_equal(build_text("lock redlock ttl=5s quorum=2 elapsed-check=off elapsed-clock=wall "
                                "drift-factor=2% drift-extra=1ms request-timeout=10ms "
                                "release-all=off expiry-clock=monotonic persistence=always "
                                "delayed-restart=6s\nclient A: acquire\n",
                                &err),
                     0);
    /* Five servers by default, at most fifteen. */
    struct engine *e = run_text("lock redlock\nclient A: acquire; release\n");
    assert_int_equal(count(e, TRACE_SRV_GRANT, NULL, -3, 0, SIM_TIME_MAX), 5);
    engine_free(e);
    e = run_text("lock redlock servers=15\nclient A: acquire; release\n");
    assert_int_equal(count(e, TRACE_SRV_GRANT, NULL, -3, 0, SIM_TIME_MAX), 15);
    engine_free(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_validity_is_ttl_minus_elapsed_minus_drift),
            cmocka_unit_test(test_quorum_three_of_five),
            cmocka_unit_test(test_no_quorum_releases_what_it_got),
            cmocka_unit_test(test_elapsed_check_after_pause),
            cmocka_unit_test(test_elapsed_by_wall_clock_is_corrupted),
            cmocka_unit_test(test_server_wall_jump_expires_early),
            cmocka_unit_test(test_restart_without_persistence_loses_the_key),
            cmocka_unit_test(test_delayed_restart_refuses_to_grant),
            cmocka_unit_test(test_options_are_validated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
