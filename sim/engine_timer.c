/* Timers: a pool of 32-byte timers with generation-checked handles, each
 * firing when its node's own clock reaches the deadline (EV_TIMER). */
#include "engine_int.h"

/* Queue timer idx's firing at true time at: pushed, or left to the slot's
 * carrier when that entry comes first (struct timer). */
#if defined(__GNUC__)
__attribute__((always_inline)) /* eng_timer_add's path: every timer of the peer workload */
#endif
static inline void timer_arm(struct engine *e, uint32_t idx, sim_ns at) {
    struct timer *t = &e->timers[idx];
    if (at > SIM_TIME_MAX * 2 || at > e->s.duration_ns) at = e->s.duration_ns + 1; /* never fires */
    if (t->carrier_t <= at) { /* the carrier pops first and queues it then */
        t->due = at;
        t->due_seq = queue_take_seq(&e->q);
        return;
    }
    /* Pushed: this entry is the carrier, and fires it (due is read only
     * after a later arming leaves it to this carrier, which sets it). */
    t->carrier_seq = e->q.next_seq; /* the seq push takes */
    t->carrier_t = at;
    push(e, at, EV_TIMER, t->node, timer_handle(idx, t->gen));
}

static void timer_schedule(struct engine *e, uint32_t idx) {
    struct timer *t = &e->timers[idx];
    const struct node_ext *x = ext_of(e, nd(e, t->node));
    sim_ns at;
    if (x) {
        at = clock_true_at(&x->clk[t->clock], e->now, t->deadline_local);
    } else { /* clock_true_at of a clock that reads true time */
        at = t->deadline_local <= e->now        ? e->now
             : t->deadline_local > SIM_TIME_MAX * 2 ? SIM_NEVER
                                                 : t->deadline_local;
    }
    if (at == SIM_NEVER) at = e->s.duration_ns + 1; /* never fires */
    timer_arm(e, idx, at);
}

void eng_timer_requeue(struct engine *e, uint32_t idx) {
    struct timer *t = &e->timers[idx];
    struct sim_event ev = {.t = t->due, .seq = t->due_seq, .type = EV_TIMER, .node = t->node,
                           .arg = timer_handle(idx, t->gen)};
    t->carrier_t = t->due;
    t->carrier_seq = t->due_seq;
    if (queue_push_seq(&e->q, &ev) != 0) e->tr.oom = 1; /* reported as an internal error */
}

uint64_t eng_timer_add(struct engine *e, int node, int clock, sim_ns delay, int owner, int id,
                       uint64_t arg) {
    uint32_t idx;
    if (e->free_timer) {
        idx = e->free_timer - 1;
        e->free_timer = e->timers[idx].u.next_free;
    } else {
        if (e->ntimers == e->captimers) {
            struct timer *n = eng_pool_grow(e, e->timers, &e->captimers, sizeof *n);
            if (!n) return 0;
            e->timers = n;
        }
        idx = e->ntimers++;
        e->timers[idx].gen = 0;
        e->timers[idx].carrier_t = SIM_NEVER;
    }
    struct timer *t = &e->timers[idx];
    t->node = node;
    t->clock = (uint8_t)clock;
    t->owner = (uint8_t)owner;
    t->active = 1;
    t->gen++;
    if (delay < 0) delay = 0;
    t->id = id;
    t->u.arg = arg;
    if (nd(e, node)->ext) {
        t->deadline_local = local_now(e, node, clock) + delay;
        timer_schedule(e, idx);
    } else { /* timer_schedule for a clock that reads true time, where deadline >= now */
        t->deadline_local = e->now + delay;
        timer_arm(e, idx, t->deadline_local);
    }
    return timer_handle(idx, t->gen);
}

void eng_timers_reschedule(struct engine *e, int node) {
    for (uint32_t i = 0; i < e->ntimers; i++) {
        struct timer *t = &e->timers[i];
        if (!t->active || t->node != node) continue;
        t->gen++;
        timer_schedule(e, i);
    }
}

void eng_timers_drop_node(struct engine *e, int node) {
    for (uint32_t i = 0; i < e->ntimers; i++)
        if (e->timers[i].active && e->timers[i].node == node) eng_timer_free(e, &e->timers[i]);
}
