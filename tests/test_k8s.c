/* Tests of k8s-lease (sim/algo/algo_k8s_lease.c), client-go's leader
 * election, at its boundaries: a candidate takes over exactly lease-duration
 * after the last change it observed, on its own clock; a fast clock takes
 * over sooner; the leader stops leading exactly renew-deadline after its last
 * successful renewal; leaderTransitions as the token; and the configurations
 * client-go refuses. Latency is 0, so every instant below is exact. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "engine.h"

#define S SIM_NS_PER_S
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
    struct engine *e = takeover("");
    /* A's grant, and its one renewal at 2s. */
    assert_int_equal(must(e, TRACE_SRV_GRANT, "S1", 1)->t, 0);
    assert_int_equal(must(e, TRACE_SRV_RENEW, "S1", 1)->t, 2 * S);
    assert_null(find(e, TRACE_SRV_RENEW, "S1", 2));
    /* B's try at 17.5s is the first at or after 2.5s + 15s: it takes over
     * then, and not before (its try at 16.5s was refused). */
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 17500 * MS);
    assert_int_equal(must(e, TRACE_SRV_GRANT, "S1", 2)->t, 17500 * MS);
    engine_free(e);

    /* One second more of lease-duration: one try later. */
    char text[1024];
    snprintf(text, sizeof text, TAKEOVER, "");
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
    struct engine *e = run_text("lock k8s-lease\n"
                                "resource stock=5\n"
                                "network latency=0ms\n"
                                "duration 40s\n"
                                "client A: acquire; read; work 20s; write; release\n"
                                "@5s link A S1 loss=100%\n"
                                "@5s link S1 A loss=100%\n");
    assert_int_equal(count(e, TRACE_SRV_RENEW, "S1", -3, 0, 40 * S), 2);
    const struct trace_event *n = must_note(e, "A", NOTE_PREFIX, "no renewal within renew-deadline", 1);
    assert_int_equal(n->t, 14 * S);
    const struct trace_event *x = must(e, TRACE_CS_EXIT, "A", 1);
    assert_int_equal(x->t, 14 * S);
    assert_int_equal(x->a, 3); /* left because the lock was lost */
    assert_non_null(find(e, TRACE_WRITE_SKIPPED, "A", 1));
    assert_int_equal(count(e, TRACE_WRITE, "R", -3, 0, 40 * S), 0);
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_takeover_after_lease_duration_observed),
        cmocka_unit_test(test_fast_clock_takes_over_sooner),
        cmocka_unit_test(test_renew_deadline_stops_the_leader),
        cmocka_unit_test(test_transitions_as_token),
        cmocka_unit_test(test_refused_configurations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
