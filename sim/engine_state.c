/* The bottom of the engine: the trace append every model uses and the growth
 * of its pools (the inline helpers beside them, emit, push and
 * continue_later, are in engine_int.h). */
#include <stdlib.h>

#include "engine_int.h"

void eng_emit_append(struct engine *e, int kind, int node, int peer, uint64_t token, uint32_t grant, int64_t a,
                     int64_t b, const char *text) {
    struct trace *tr = &e->tr;
    struct trace_event ev = {.t = e->now,
                             .seq = 0 /* trace_append_own numbers it */,
                             .kind = (uint16_t)kind,
                             .node = node,
                             .peer = peer,
                             .token = token,
                             .grant = grant,
                             .a = a,
                             .b = b,
                             .text = text};
    if (tr->keep || tr->hashing || !tr->observe) {
        trace_append_own(tr, &ev);
        return;
    }
    /* trace_append_own for an event only the observer reads (the checker
     * of a run with neither a kept trace nor a digest), without the call. */
    if (ev.t > tr->last_t) {
        if (tr->advance) tr->advance(tr->observe_arg, ev.t);
        tr->last_t = ev.t;
    }
    ev.seq = tr->count++;
    tr->observe(tr->observe_arg, &ev);
}

void *eng_pool_grow(struct engine *e, void *pool, uint32_t *cap, size_t size) {
    uint32_t n = *cap ? *cap * 2 : 64;
    void *p = realloc(pool, (size_t)n * size);
    if (!p) {
        e->tr.oom = 1;
        return NULL;
    }
    *cap = n;
    return p;
}
