/* A step-level fixture, in the manner of canonical/raft's tests: step the
 * engine until a true time or until an event happens, then assert state and
 * virtual time, then step on. Tests read as the story they tell. */
#ifndef LOCKSIM_STEP_FIXTURE_H
#define LOCKSIM_STEP_FIXTURE_H

#include "testutil.h"

/* S(x): x seconds, unless the test has its own S (test_zk's `6 * S`). */
#ifndef S
#define S(x) ((sim_ns)(x)*SIM_NS_PER_S)
#endif

/* The newest event in the kept trace, or NULL. */
static TESTUTIL_UNUSED const struct trace_event *last_event(const struct engine *e) {
    const struct trace *tr = engine_trace(e);
    return tr->len ? &tr->ev[tr->len - 1] : NULL;
}

/* Step until the engine has processed its first event at or after true
 * time t (or the run ended). Returns 1 while the run goes on. */
static TESTUTIL_UNUSED int step_until_time(struct engine *e, sim_ns t) {
    int on = 1;
    while (on && engine_now(e) < t) on = engine_step(e);
    return on;
}

/* Where the story has got to in the trace: events before it are told. One
 * per engine; step_until_event moves it past the event it returns, so two
 * events that one step appends (a resume, and the double entry the checker
 * announces as time moves) are found one after the other. */
static size_t story_cursor;

/* Step until an event of kind at node (NULL = any) enters the trace after
 * the cursor; it is returned (the trace's own copy). A run that ends first
 * fails the test. */
static TESTUTIL_UNUSED const struct trace_event *step_until_event(struct engine *e, int kind, const char *node) {
    const struct trace *tr = engine_trace(e);
    int want = node ? node_of(tr, node) : -3;
    if (story_cursor > tr->len || tr->len == 0) story_cursor = 0; /* a new story */
    for (int on = 1;;) {
        for (; story_cursor < tr->len; story_cursor++) {
            const struct trace_event *ev = &tr->ev[story_cursor];
            if (ev->kind == kind && (want == -3 || ev->node == want)) {
                story_cursor++;
                return ev;
            }
        }
        if (!on) break;
        on = engine_step(e);
    }
    fprintf(stderr, "the run ended at %lld ns without a %s at %s\n", (long long)engine_now(e), trace_kind_name(kind),
            node ? node : "*");
    fail();
    return NULL;
}

/* Step until an algorithm note (TRACE_SRV_NOTE) at node (NULL = any) whose
 * text starts with prefix enters the trace after the cursor; other notes on
 * the way are passed over. A run that ends first fails the test. */
static TESTUTIL_UNUSED const struct trace_event *step_until_note(struct engine *e, const char *node,
                                                                 const char *prefix) {
    for (;;) {
        const struct trace_event *ev = step_until_event(e, TRACE_SRV_NOTE, node);
        if (ev->text && strncmp(ev->text, prefix, strlen(prefix)) == 0) return ev;
    }
}

/* Events of a kind at a node (NULL = any) so far. */
static TESTUTIL_UNUSED int so_far(const struct engine *e, int kind, const char *node) {
    return count(e, kind, node, -3, 0, INT64_MAX);
}

#endif
