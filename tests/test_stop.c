/* Why a run stops, narrated: its end, max-events, a livelock (true time no
 * longer advances) and the kept trace's memory budget, each with the
 * reason, the stop time and the events processed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "engine.h"

#define S SIM_NS_PER_S
#define MS SIM_NS_PER_MS

/* Build from text, keeping the trace or not, and run to the end. */
static struct engine *run_keep(const char *text, int keep) {
    struct scenario s;
    struct scn_error err;
    scenario_init(&s);
    assert_int_equal(scenario_parse(&s, "stop.lsim", text, strlen(text), &err), 0);
    struct engine_opts o = {.keep_trace = keep};
    struct engine *e = NULL;
    assert_int_equal(engine_new(&e, &s, &o, &err), 0);
    scenario_close(&s);
    engine_run(e);
    return e;
}

/* Zero latency and a program that repeats forever: every event is at t=0. */
static const char *LIVELOCK = "lock lease\n"
                              "network latency=0ms\n"
                              "client A%s repeat=0: acquire; release\n";

/* A run that reaches its duration stops at END, at the duration. */
static void test_stop_end(void **state) {
    (void)state;
    struct engine *e = run_keep("lock lease\nduration 10s\nclient A: acquire; work 1s; release\n", 1);
    assert_int_equal(engine_stop_reason(e), ENGINE_STOP_END);
    assert_int_equal(engine_truncated(e), 0);
    assert_int_equal(engine_stop_time(e), 10 * S);
    engine_free(e);
}

/* max-events 20: twenty events are processed, the 21st is not. */
static void test_stop_max_events(void **state) {
    (void)state;
    struct engine *e = run_keep("lock lease\nmax-events 20\nduration 60s\n"
                                "client A repeat=0 think=1s: acquire; work 1s; release\n",
                                0);
    assert_int_equal(engine_stop_reason(e), ENGINE_STOP_MAX_EVENTS);
    assert_int_equal(engine_truncated(e), 1);
    assert_int_equal(engine_events(e), 20);
    assert_true(engine_stop_time(e) > 0 && engine_stop_time(e) < 60 * S);
    engine_free(e);
}

/* The livelock at t=0 is stopped after ENGINE_LIVELOCK_EVENTS events (at the
 * next look at the limits), with or without the kept trace, and far below
 * max-events (10^7). */
static void test_stop_livelock_at_zero(void **state) {
    (void)state;
    char text[256];
    snprintf(text, sizeof text, LIVELOCK, "");
    for (int keep = 0; keep <= 1; keep++) {
        struct engine *e = run_keep(text, keep);
        /* Step: the run ends by itself, cut short as a livelock at t=0. */
        assert_int_equal(engine_stop_reason(e), ENGINE_STOP_LIVELOCK);
        assert_int_equal(engine_truncated(e), 1);
        assert_int_equal(engine_stop_time(e), 0);
        assert_in_range(engine_events(e), ENGINE_LIVELOCK_EVENTS, ENGINE_LIVELOCK_EVENTS + ENGINE_CHECK_EVENTS);
        /* The kept trace stayed inside its budget and ends with the run's end. */
        const struct trace *tr = engine_trace(e);
        if (keep) {
            assert_true(tr->len * sizeof(struct trace_event) <= ENGINE_TRACE_BUDGET_BYTES);
            assert_int_equal(tr->ev[tr->len - 1].kind, TRACE_RUN_END);
            assert_int_equal(tr->ev[tr->len - 1].a, engine_events(e));
        }
        assert_int_equal(tr->oom, 0);
        engine_free(e);
    }
}

/* A livelock that begins later is reported at its own instant; the events
 * before it do not count towards the bound. */
static void test_stop_livelock_later(void **state) {
    (void)state;
    char text[256];
    snprintf(text, sizeof text, LIVELOCK, " @5s");
    struct engine *e = run_keep(text, 0);
    assert_int_equal(engine_stop_reason(e), ENGINE_STOP_LIVELOCK);
    assert_int_equal(engine_stop_time(e), 5 * S);
    assert_in_range(engine_events(e), ENGINE_LIVELOCK_EVENTS, ENGINE_LIVELOCK_EVENTS + 2 * ENGINE_CHECK_EVENTS);
    engine_free(e);
}

/* Many events at one instant that are not a livelock: the bound grows with
 * the nodes (ENGINE_LIVELOCK_PER_NODE), so 30000 clients that all start at
 * t=0 with zero latency run to their end. */
static void test_stop_many_clients_not_livelock(void **state) {
    (void)state;
    struct engine *e = run_keep("lock lease\nnetwork latency=0ms\nduration 1s\n"
                                "clients 30000: acquire tries=1; release\n",
                                0);
    assert_int_equal(engine_stop_reason(e), ENGINE_STOP_END);
    assert_int_equal(engine_stop_time(e), 1 * S);
    assert_true(engine_events(e) > ENGINE_LIVELOCK_EVENTS); /* all at t=0 */
    engine_free(e);
}

/* 1000 clients polling a held lock every millisecond: time advances, so it
 * is no livelock, but the kept trace would grow past its budget. The run
 * stops cleanly as MEMORY; without the kept trace the same run goes on. */
static void test_stop_memory(void **state) {
    (void)state;
    const char *text = "lock setnx\nduration 120s\nmax-events 1200000\n"
                       "client A: acquire; work 1000s; release\n"
                       "clients 1000 @1ms: acquire retry=1ms; write; release\n";
    struct engine *e = run_keep(text, 1);
    /* Step: stopped before the trace passed its budget, with room for the end. */
    assert_int_equal(engine_stop_reason(e), ENGINE_STOP_MEMORY);
    assert_int_equal(engine_truncated(e), 1);
    const struct trace *tr = engine_trace(e);
    assert_true(tr->len * sizeof(struct trace_event) <= ENGINE_TRACE_BUDGET_BYTES);
    assert_true(tr->len * sizeof(struct trace_event) >=
                ENGINE_TRACE_BUDGET_BYTES - ENGINE_TRACE_HEADROOM * sizeof(struct trace_event));
    assert_int_equal(tr->ev[tr->len - 1].kind, TRACE_RUN_END);
    assert_int_equal(tr->ev[tr->len - 1].t, engine_stop_time(e));
    assert_true(engine_stop_time(e) > 500 * MS && engine_stop_time(e) < 1 * S);
    uint64_t events = engine_events(e);
    engine_free(e);
    /* Without the trace the same run reaches max-events, further on. */
    e = run_keep(text, 0);
    assert_int_equal(engine_stop_reason(e), ENGINE_STOP_MAX_EVENTS);
    assert_int_equal(engine_events(e), 1200000);
    assert_true(engine_events(e) > events);
    engine_free(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_stop_end),
            cmocka_unit_test(test_stop_max_events),
            cmocka_unit_test(test_stop_livelock_at_zero),
            cmocka_unit_test(test_stop_livelock_later),
            cmocka_unit_test(test_stop_many_clients_not_livelock),
            cmocka_unit_test(test_stop_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
