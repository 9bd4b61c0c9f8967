/* The bottom of the engine: the trace append every model uses (the inline
 * helpers beside it, emit, push and continue_later, are in engine_int.h). */
#include "engine_int.h"

void eng_emit_append(struct engine *e, int kind, int node, int peer, uint64_t token,
                     uint32_t grant, int64_t a, int64_t b, const char *text) {
    struct trace_event ev;
    ev.t = e->now;
    ev.seq = 0; /* trace_append_own numbers it */
    ev.kind = (uint16_t)kind;
    ev.node = node;
    ev.peer = peer;
    ev.token = token;
    ev.grant = grant;
    ev.a = a;
    ev.b = b;
    ev.text = text;
    trace_append_own(&e->tr, &ev);
}
