/* The engine's top: the loop (engine_step, engine_run), the one dispatch
 * that hands each event to the model it names, and the accessors. */
#include "engine_int.h"

static void deliver(struct engine *e, int node, uint32_t idx, int chan) {
    assert(idx < e->nslots); /* eng_net_send queued a slot it holds */
    struct slot s = e->slots[idx];
    eng_slot_free(e, idx);
    if (s.to_epoch != nd(e, node)->epoch) {
        /* Sent to an incarnation that has since crashed: its connection died
         * with it, and the restarted process never sees the message. */
        emit(e, TRACE_MSG_DROP, node, s.u.m.from, 0, 0, s.id, TRACE_DROP_CRASHED, NULL);
        return;
    }
    if (eng_cut_off(e, s.u.m.from, node)) {
        emit(e, TRACE_MSG_DROP, node, s.u.m.from, 0, 0, s.id, TRACE_DROP_PARTITION, NULL);
        return;
    }
    emit(e, TRACE_MSG_RECV, node, s.u.m.from, 0, 0, s.id, s.u.m.type, NULL);
    struct node *n = nd(e, node);
    if (chan == CHAN_RES) {
        if (node == e->resource) eng_resource_recv(e, &s);
        else if (n->kind == TRACE_NODE_CLIENT) eng_program_resource_reply(e, node, &s);
        return;
    }
    if (n->kind == TRACE_NODE_CLIENT) algo_client_recv(e, node, &s.u.m);
    else if (n->kind == TRACE_NODE_SERVER) algo_server_recv(e, node, &s.u.m);
}

/* An EV_TIMER popped: 1 when it fires a timer (dispatch it); 0 when it is
 * stale (the timer was cancelled or re-armed) or re-queued itself at the
 * re-armed deadline: not an event of the run. Inline beside the loop, its
 * one caller, and above engine_timer.c, whose eng_timer_requeue it calls. */
static inline int timer_popped(struct engine *e, const struct sim_event *ev) {
    uint32_t idx = (uint32_t)(ev->arg & 0xffffffffu);
    assert(idx >= 1 && idx <= e->ntimers); /* the engine queued it from a pool slot */
    uint32_t gen = (uint32_t)(ev->arg >> 32);
    struct timer *t = &e->timers[idx - 1];
    if (t->active && t->gen == gen) {
        t->carrier = TIMER_CARRIER_NONE; /* it was the carrier, or (held by a pause) there is none */
        return 1;
    }
    if (t->carrier == TIMER_CARRIER_OWN) {
        if (!t->active && gen == t->gen - 1) t->carrier = TIMER_CARRIER_NONE; /* cancelled */
    } else if (t->carrier == TIMER_CARRIER_SIDE && e->tside[idx - 1].gen == gen) {
        t->carrier = TIMER_CARRIER_NONE;
        if (t->active) eng_timer_requeue(e, idx - 1);
    }
    return 0;
}
/* A timer's firing that timer_popped let through in this engine_step. */
static void fire_timer(struct engine *e, int node, uint64_t h) {
    struct timer *t = &e->timers[(uint32_t)h - 1];
    assert(t->active && t->node == node && t->gen == (uint32_t)(h >> 32)); /* timer_popped let it through */
    int owner = t->owner, id = t->id;
    uint64_t arg = t->u.arg;
    eng_timer_free(e, t);
    struct node *n = nd(e, node);
    if (owner == TIMER_PROGRAM) eng_program_timer(e, node, id, arg);
    else if (n->kind == TRACE_NODE_CLIENT) algo_client_timer(e, node, id, arg);
    else if (n->kind == TRACE_NODE_SERVER) algo_server_timer(e, node, id, arg);
}

static void dispatch(struct engine *e, const struct sim_event *ev) {
    switch (ev->type) {
    case EV_FAULT: {
        int f = (int)ev->arg;
        eng_program_after_fault(e, e->fref[f].node, eng_fault_apply(e, f));
        return;
    }
    case EV_RESUME: eng_fault_resume_due(e, ev->node, (uint32_t)ev->arg); return;
    case EV_SLEW_END: eng_fault_slew_end(e, ev->node, (uint32_t)ev->arg); return;
    default: break;
    }
    /* Node-level events: lost on a crashed node, held while it is paused. */
    struct node *n = nd(e, ev->node);
    if (n->proc != PROC_RUNNING) {
        eng_fault_hold(e, ev);
        return;
    }
    switch (ev->type) {
    case EV_START: eng_program_step(e, ev->node); break;
    case EV_DELIVER: deliver(e, ev->node, (uint32_t)ev->arg, CHAN_LOCK); break;
    case EV_DELIVER_RES: deliver(e, ev->node, (uint32_t)ev->arg, CHAN_RES); break;
    case EV_TIMER: fire_timer(e, ev->node, ev->arg); break;
    case EV_CONTROL:
        if (n->kind == TRACE_NODE_SERVER) algo_server_control(e, ev->node, (enum lock_control)ev->arg);
        break;
    case EV_CONT:
        if ((uint32_t)ev->arg == n->epoch) eng_program_cont(e, ev->node);
        break;
    }
}

static void finish(struct engine *e) {
    e->ended = 1;
    emit(e, TRACE_RUN_END, TRACE_NO_NODE, TRACE_NO_NODE, 0, 0, (int64_t)e->events, 0, NULL);
    checker_finish(&e->ck, e->now, &e->report);
}

/* Memory-level parallelism for large runs: start loading the state of the
 * node an event a few pops ahead is for, while this one is dispatched.
 * Inlined by force: GCC deems a function that only loads and prefetches
 * free of side effects and drops calls to it before inlining. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void
prefetch_ahead(struct engine *e) {
#if defined(__GNUC__)
    const struct sim_event *ahead = queue_ahead(&e->q, 4);
    if (!ahead || ahead->node < 0 || ahead->node >= e->nnodes) return;
    int i = ahead->node;
    const unsigned char *n = e->node_mem + (size_t)i * e->node_stride;
    __builtin_prefetch(n);
    if (i < e->nclients) {
        __builtin_prefetch(n + e->node_stride - 1); /* the algorithm state's last line */
        checker_prefetch(&e->ck, i);
    }
    if ((ahead->type == EV_DELIVER || ahead->type == EV_DELIVER_RES) && ahead->arg < e->nslots)
        __builtin_prefetch(&e->slots[ahead->arg]);
    uint32_t ti = (uint32_t)ahead->arg;
    if (ahead->type == EV_TIMER && ti >= 1 && ti <= e->ntimers) __builtin_prefetch(&e->timers[ti - 1]);
#else
    (void)e;
#endif
}

/* The limits of engine.h for the event at time t, the events-th: the reason
 * to stop, or ENGINE_STOP_END (then the next look is scheduled). max-events
 * is exact; a livelock is seen at the first look once time has stood still
 * for livelock_events events since a look first saw this instant; the kept
 * trace is stopped ENGINE_TRACE_HEADROOM events short of its budget. */
static int check_limits(struct engine *e, sim_ns t) {
    if (e->events >= e->s.max_events) return ENGINE_STOP_MAX_EVENTS;
    if (t != e->check_t) { /* time has moved since the last look */
        e->check_t = t;
        e->instant_from = e->events;
    } else if (e->events - e->instant_from >= e->livelock_events) {
        return ENGINE_STOP_LIVELOCK;
    }
    if (e->tr.len >= e->kept_max) return ENGINE_STOP_MEMORY;
    e->next_check = e->events + ENGINE_CHECK_EVENTS;
    if (e->next_check > e->s.max_events) e->next_check = e->s.max_events;
    return ENGINE_STOP_END;
}

int engine_step(struct engine *e) {
    if (e->ended) return 0;
    struct sim_event ev;
    /* EV_END sits in the queue from the start, so the queue empties only
     * after it; max_events bounds runs whose events never thin out. */
    for (;;) {
        if (e->lane_full && !queue_has_before(&e->q, e->lane.t, e->lane.seq)) {
            ev = e->lane; /* what queue_pop would have returned */
            e->lane_full = 0;
            break;
        }
        if (queue_pop_fast(&e->q, &ev) != 0) {
            finish(e);
            return 0;
        }
        /* A cancelled timer's entry, or a re-armed one's going back in the
         * queue at its new deadline, is no event: the run never sees it. */
        if (ev.type != EV_TIMER || timer_popped(e, &ev)) break;
    }
    assert(ev.t >= e->now); /* virtual time never runs backwards */
    if (ev.type == EV_END) {
        e->now = ev.t;
        finish(e);
        return 0;
    }
    /* Limits, looked at every ENGINE_CHECK_EVENTS events (one compare per
     * event, as max-events alone took): the run is cut short and this event
     * is not processed. */
    if (e->events >= e->next_check && (e->stop = check_limits(e, ev.t)) != ENGINE_STOP_END) {
        finish(e);
        return 0;
    }
    e->now = ev.t;
    if (e->prefetch) prefetch_ahead(e);
    e->events++;
    dispatch(e, &ev);
    return 1;
}

uint64_t engine_run(struct engine *e) {
    while (engine_step(e)) {}
    return e->events;
}

sim_ns engine_now(const struct engine *e) { return e->now; }
uint64_t engine_events(const struct engine *e) { return e->events; }
enum engine_stop engine_stop_reason(const struct engine *e) { return (enum engine_stop)e->stop; }
sim_ns engine_stop_time(const struct engine *e) { return e->now; }
int engine_truncated(const struct engine *e) { return e->stop != ENGINE_STOP_END; }
uint64_t engine_states_reached(const struct engine *e) { return e->states_reached; }
const struct trace *engine_trace(const struct engine *e) { return &e->tr; }
const struct checker_report *engine_report(const struct engine *e) { return &e->report; }
const struct scenario *engine_scenario(const struct engine *e) { return &e->s; }
const struct lock_algo *engine_algo(const struct engine *e) { return e->algo; }
const char *engine_dropped_options(const struct engine *e) { return e->dropped; }
