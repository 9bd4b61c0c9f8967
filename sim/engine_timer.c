/* Timers: a pool of 32-byte timers with generation-checked handles, each
 * firing when its node's own clock reaches the deadline (EV_TIMER). */
#include "engine_int.h"

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
    if (at == SIM_NEVER || at > e->s.duration_ns) at = e->s.duration_ns + 1; /* never fires */
    push(e, at, EV_TIMER, t->node, timer_handle(idx, t->gen));
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
        sim_ns at = t->deadline_local = e->now + delay;
        if (at > SIM_TIME_MAX * 2 || at > e->s.duration_ns) at = e->s.duration_ns + 1; /* never fires */
        push(e, at, EV_TIMER, node, timer_handle(idx, t->gen));
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
