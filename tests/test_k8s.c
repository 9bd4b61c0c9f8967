/* Tests of k8s-lease (sim/algo/algo_k8s_lease.c), client-go's leader
 * election, at its boundaries: a candidate takes over exactly lease-duration
 * after the last change it observed, on its own clock; a fast clock takes
 * over sooner; the leader stops leading exactly renew-deadline after its last
 * successful renewal; leaderTransitions as the token; and the configurations
 * client-go refuses. Latency is 0, so every instant below is exact. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "step_fixture.h" /* S(x): x seconds; step_until_event, so_far */

#include "engine.h"

#define MS SIM_NS_PER_MS

/* A leads from 0s and renews at 2s, then crashes at 3s (before its renewal
 * at 4s). B tries every second from 1.5s: at 2.5s it sees the record of A's
 * 2s renewal (a new version: observedTime 2.5s by its clock), and each try
 * after finds it unchanged. */
static const char *TAKEOVER = "lock k8s-lease\n"
                              "resource stock=5\n"
                              "network latency=0ms\n"
                              "duration 40s\n"
                              "%s"
                              "client A: acquire; read; work 30s; write; release\n"
                              "client B @1500ms: acquire retry=1s; read; write; release\n"
                              "@3s crash A\n";

static struct engine *takeover(const char *extra) {
    char text[1024];
    snprintf(text, sizeof text, TAKEOVER, extra);
    return run_text(text);
}

static void test_takeover_after_lease_duration_observed(void **state) {
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, TAKEOVER, "");
    struct engine *e = build_engine(text, NULL);
    story_cursor = 0;
    /* t=0: S1 grants A the lock. */
    const struct trace_event *ev = step_until_event(e, TRACE_SRV_GRANT, "S1");
    assert_int_equal(ev->t, 0);
    assert_int_equal(ev->peer, node_of(engine_trace(e), "A"));
    /* t=2s: A's one renewal; at 3s it crashes before the next. */
    assert_int_equal(step_until_event(e, TRACE_SRV_RENEW, "S1")->t, S(2));
    assert_int_equal(step_until_event(e, TRACE_CRASH, "A")->t, S(3));
    /* t=17s: B's try at 16.5s was refused: 2.5s + 15s has not passed. */
    step_until_time(e, S(17));
    assert_int_equal(so_far(e, TRACE_ACQUIRED, "B"), 0);
    /* t=17.5s: B's try is the first at or after 2.5s + 15s: it takes over. */
    ev = step_until_event(e, TRACE_SRV_GRANT, "S1");
    assert_int_equal(ev->t, 17500 * MS);
    assert_int_equal(ev->peer, node_of(engine_trace(e), "B"));
    assert_int_equal(step_until_event(e, TRACE_ACQUIRED, "B")->t, 17500 * MS);
    /* To the end: S1 saw no renewal after A's crash. */
    engine_run(e);
    assert_null(find(e, TRACE_SRV_RENEW, "S1", 2));
    engine_free(e);

    /* One second more of lease-duration: one try later. */
    char *p = strstr(text, "lock k8s-lease\n");
    assert_non_null(p);
    char longer[1100];
    snprintf(longer, sizeof longer, "lock k8s-lease lease-duration=16s\n%s", p + strlen("lock k8s-lease\n"));
    e = run_text(longer);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 18500 * MS);
    engine_free(e);
}

/* B's clock runs 25% fast: its tries come every 0.8s of true time, and
 * 15s of its clock pass in 12s. It observes A's 2s renewal at its try at
 * 2.3s, and takes over at its first try at or after 2.3s + 12s = 14.3s. */
static void test_fast_clock_takes_over_sooner(void **state) {
    (void)state;
    struct engine *e = takeover("clock B drift=250000ppm\n");
    sim_ns t = must(e, TRACE_ACQUIRED, "B", 1)->t;
    assert_true(t >= 14300 * MS);
    assert_true(t < 14300 * MS + 800 * MS);
    engine_free(e);
}

/* The leader cut off from S1 at 5s: renewals at 2s and 4s succeeded, the
 * one at 6s and after are lost; at 14s (4s + renew-deadline 10s) A stops
 * leading: it leaves the critical section and its write is not sent. */
static void test_renew_deadline_stops_the_leader(void **state) {
    (void)state;
    struct engine *e = build_engine("lock k8s-lease\n"
                                    "resource stock=5\n"
                                    "network latency=0ms\n"
                                    "duration 40s\n"
                                    "client A: acquire; read; work 20s; write; release\n"
                                    "@5s link A S1 loss=100%\n"
                                    "@5s link S1 A loss=100%\n",
                                    NULL);
    story_cursor = 0;
    /* t=2s, 4s: A's renewals reach S1; from 5s the link loses them. */
    assert_int_equal(step_until_event(e, TRACE_SRV_RENEW, "S1")->t, S(2));
    assert_int_equal(step_until_event(e, TRACE_SRV_RENEW, "S1")->t, S(4));
    /* t=14s (4s + renew-deadline 10s): A stops leading, saying why, and
     * leaves the critical section because the lock was lost. */
    const struct trace_event *n = step_until_event(e, TRACE_SRV_NOTE, "A");
    assert_int_equal(n->t, S(14));
    assert_ptr_equal(n, must_note(e, "A", NOTE_PREFIX, "no renewal within renew-deadline", 1));
    const struct trace_event *x = step_until_event(e, TRACE_CS_EXIT, "A");
    assert_int_equal(x->t, S(14));
    assert_int_equal(x->a, 3); /* left because the lock was lost */
    /* t=20s: its work done, A does not send its write. */
    assert_int_equal(step_until_event(e, TRACE_WRITE_SKIPPED, "A")->t, S(20));
    /* To the end: no renewal after 4s, and the resource saw no write. */
    engine_run(e);
    assert_int_equal(count(e, TRACE_SRV_RENEW, "S1", -3, 0, S(40)), 2);
    assert_int_equal(count(e, TRACE_WRITE, "R", -3, 0, S(40)), 0);
    engine_free(e);
}

/* tokens=on: the first leader's token is 1, the one who takes over gets 2;
 * off, no token at all. */
static void test_transitions_as_token(void **state) {
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, TAKEOVER, "");
    struct engine *e = run_text(text);
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->token, 0);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->token, 0);
    engine_free(e);
    char *p = strstr(text, "lock k8s-lease\n");
    char fenced[1100];
    snprintf(fenced, sizeof fenced, "lock k8s-lease tokens=on\n%s", p + strlen("lock k8s-lease\n"));
    e = run_text(fenced);
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->token, 1);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->token, 2);
    engine_free(e);
}

/* NewLeaderElector's checks, and an unknown option, at the line. */
static void test_refused_configurations(void **state) {
    (void)state;
    struct scn_error err;
    build_fails("lock k8s-lease lease-duration=10s\nclient A: acquire; release\n", &err);
    assert_non_null(strstr(err.msg, "lease-duration must be longer than renew-deadline"));
    build_fails("lock k8s-lease retry-period=9s\nclient A: acquire; release\n", &err);
    assert_non_null(strstr(err.msg, "1.2 x retry-period"));
    build_fails("lock k8s-lease lease=15s\nclient A: acquire; release\n", &err);
    assert_non_null(strstr(err.msg, "unknown option 'lease' for k8s-lease; expected lease-duration"));
    assert_int_equal(err.pos.line, 1);
    build_fails("lock k8s-lease renew-deadline=-1s\nclient A: acquire; release\n", &err);
    assert_non_null(strstr(err.msg, "renew-deadline '-1s' is not a positive duration"));
}

/* ReleaseOnCancel (release-on-cancel=on): A's run context ends at 9s while
 * its program computes on. The library empties the record at 9s; B's try at
 * 9.5s takes it at once; A's program, never told, writes at 12s and its write
 * is judged stale: written without the lock. Off (client-go's default), the
 * cancelled leader only stops renewing: B takes over at 25.5s, after A's
 * write, and A's release at 12s releases nothing. */
static const char *CANCEL = "lock k8s-lease cancel-after=9s release-on-cancel=%s\n"
                            "resource stock=5\n"
                            "network latency=0ms\n"
                            "duration 60s\n"
                            "client A: acquire; read; work 12s; write; release\n"
                            "client B @1500ms: acquire retry=2s; read; work 1s; write; release\n";

static void test_release_on_cancel_mid_section(void **state) {
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, CANCEL, "on");
    struct engine *e = build_engine(text, NULL);
    const struct trace *tr = engine_trace(e);
    story_cursor = 0;
    /* t=8s: A's last renewal; the context ends at 9s. */
    assert_int_equal(step_until_event(e, TRACE_SRV_GRANT, "S1")->t, 0);
    for (int i = 1; i <= 4; i++) assert_int_equal(step_until_event(e, TRACE_SRV_RENEW, "S1")->t, S(2 * i));
    /* t=9s: the library empties the record: S1 deletes A's hold at A's own
     * request, and A's program is told nothing (no cs-exit). */
    const struct trace_event *ev = step_until_event(e, TRACE_SRV_DELETE, "S1");
    assert_int_equal(ev->t, S(9));
    assert_int_equal(ev->peer, node_of(tr, "A"));
    assert_int_equal(so_far(e, TRACE_CS_EXIT, "A"), 0);
    must_note(e, "A", NOTE_EXACT,
              "run context cancelled: ReleaseOnCancel empties the record; the program's critical section goes on", 1);
    /* t=9.5s: B finds the record empty and takes it at once. */
    assert_int_equal(step_until_event(e, TRACE_ACQUIRED, "B")->t, 9500 * MS);
    /* t=12s: A's write, computed from the stock it read at 0s, goes out and
     * is judged stale: it was written without the lock. */
    ev = step_until_event(e, TRACE_STALE_WRITE, NULL);
    assert_int_equal(ev->t, S(12));
    assert_int_equal(ev->node, node_of(tr, "A"));
    assert_int_equal(ev->a, 1); /* accepted by the plain resource */
    engine_run(e);
    assert_int_equal(so_far(e, TRACE_WRITE_SKIPPED, "A"), 0);
    assert_int_equal(engine_report(e)->lost_updates, 1);
    assert_int_equal(so_far(e, TRACE_SRV_DELETE, "S1"), 2); /* the library's at 9s, B's release */
    engine_free(e);

    snprintf(text, sizeof text, CANCEL, "off");
    e = run_text(text);
    must_note(e, "A", NOTE_EXACT,
              "run context cancelled: stopped renewing, the record stays; the program's critical section goes on", 1);
    assert_int_equal(so_far(e, TRACE_SRV_RENEW, "S1"), 4); /* 2s..8s, none after 9s */
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 25500 * MS);
    assert_null(find(e, TRACE_STALE_WRITE, NULL, 1));
    assert_int_equal(so_far(e, TRACE_SRV_DELETE, "S1"), 1); /* B's release only */
    engine_free(e);

    struct scn_error err;
    build_fails("lock k8s-lease release-on-cancel=maybe\nclient A: acquire; release\n", &err);
    assert_non_null(strstr(err.msg, "release-on-cancel 'maybe' is not on or off"));
    build_fails("lock k8s-lease cancel-after=0s\nclient A: acquire; release\n", &err);
    assert_non_null(strstr(err.msg, "cancel-after '0s' is not a positive duration"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_takeover_after_lease_duration_observed),
            cmocka_unit_test(test_fast_clock_takes_over_sooner),
            cmocka_unit_test(test_renew_deadline_stops_the_leader),
            cmocka_unit_test(test_transitions_as_token),
            cmocka_unit_test(test_refused_configurations),
            cmocka_unit_test(test_release_on_cancel_mid_section),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
