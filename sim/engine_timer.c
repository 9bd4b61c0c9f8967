/* Timers: a pool of 32-byte timers with generation-checked handles, each
 * firing when its node's own clock reaches the deadline (EV_TIMER). */
#include <stdlib.h>

#include "engine_int.h"

/* The clamp of timer_arm: a time past the run's end never fires. */
static inline sim_ns clamp_at(const struct engine *e, sim_ns at) {
    return at > SIM_TIME_MAX * 2 || at > e->s.duration_ns ? e->s.duration_ns + 1 : at;
}

/* The slot's carrier (struct timer): its time, or SIM_NEVER when none, and
 * its gen in *gen. Read before the new arming changes the slot. */
static inline sim_ns carrier_of(const struct engine *e, const struct timer *t, uint32_t idx, uint32_t *gen) {
    if (t->carrier == TIMER_CARRIER_OWN) {
        *gen = t->active ? t->gen : t->gen - 1;
        return clamp_at(e, t->deadline_local);
    }
    if (t->carrier == TIMER_CARRIER_SIDE) {
        *gen = e->tside[idx].gen;
        return e->tside[idx].t;
    }
    *gen = 0;
    return SIM_NEVER;
}

/* engine->tside[idx], grown to the timer pool's size; NULL on OOM. */
static struct timer_side *side_of(struct engine *e, uint32_t idx) {
    if (idx >= e->tside_cap) {
        uint32_t cap = e->captimers > idx ? e->captimers : idx + 1;
        struct timer_side *n = realloc(e->tside, (size_t)cap * sizeof *n);
        if (!n) return NULL; /* the caller queues without a carrier: correct, only not lazy */
        e->tside = n;
        e->tside_cap = cap;
    }
    return &e->tside[idx];
}

/* Queue timer idx's firing at true time at, given the slot's carrier as it
 * was (ct, cgen; carrier_of): left to the carrier when that entry comes no
 * later, else pushed, this push becoming the carrier. */
#if defined(__GNUC__)
__attribute__((always_inline)) /* eng_timer_add's path: every timer of the peer workload */
#endif
static inline void
timer_arm(struct engine *e, uint32_t idx, sim_ns at, sim_ns ct, uint32_t cgen, int ext) {
    struct timer *t = &e->timers[idx];
    at = clamp_at(e, at);
    if (ct <= at) { /* the carrier pops first and queues it then */
        struct timer_side *sd = side_of(e, idx);
        if (sd) {
            sd->t = ct;
            sd->gen = cgen;
            sd->due = at;
            sd->due_seq = queue_take_seq(&e->q);
            t->carrier = TIMER_CARRIER_SIDE;
            return;
        }
    }
    push(e, at, EV_TIMER, t->node, timer_handle(idx, t->gen));
    t->carrier = TIMER_CARRIER_OWN;
    if (ext) { /* its time is not deadline_local: kept aside */
        struct timer_side *sd = side_of(e, idx);
        t->carrier = sd ? TIMER_CARRIER_SIDE : TIMER_CARRIER_NONE;
        if (sd) {
            sd->t = at;
            sd->gen = t->gen;
        }
    }
}

/* Timer idx by its node's clock (a node with a clock model: the only ones
 * whose clocks change, eng_timers_reschedule). */
static void timer_schedule(struct engine *e, uint32_t idx, sim_ns ct, uint32_t cgen) {
    struct timer *t = &e->timers[idx];
    const struct node_ext *x = ext_of(e, nd(e, t->node));
    sim_ns at = x                            ? clock_true_at(&x->clk[t->clock], e->now, t->deadline_local)
                : t->deadline_local < e->now ? e->now
                                             : t->deadline_local; /* a clock of true time */
    if (at == SIM_NEVER) at = e->s.duration_ns + 1;               /* never fires */
    timer_arm(e, idx, at, ct, cgen, 1);
}

void eng_timer_requeue(struct engine *e, uint32_t idx) {
    struct timer *t = &e->timers[idx];
    struct timer_side *sd = &e->tside[idx];
    struct sim_event ev = {
            .t = sd->due, .seq = sd->due_seq, .type = EV_TIMER, .node = t->node, .arg = timer_handle(idx, t->gen)};
    sd->t = sd->due;
    sd->gen = t->gen;
    t->carrier = TIMER_CARRIER_SIDE;
    if (queue_push_seq(&e->q, &ev) != 0) e->tr.oom = 1; /* reported as an internal error */
}

/* Arm timer idx, a slot that is not active: its fields, a new gen, and
 * its queue entry (timer_arm), given the carrier its slot has. */
#if defined(__GNUC__)
__attribute__((always_inline)) /* both entry points' whole path */
#endif
static inline uint64_t
timer_set(struct engine *e, uint32_t idx, int node, int clock, sim_ns delay, int owner, int id, uint64_t arg) {
    struct timer *t = &e->timers[idx];
    uint32_t cgen;
    sim_ns ct = carrier_of(e, t, idx, &cgen);
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
        timer_schedule(e, idx, ct, cgen);
    } else { /* a clock that reads true time, where deadline >= now */
        t->deadline_local = e->now + delay;
        timer_arm(e, idx, t->deadline_local, ct, cgen, 0);
    }
    return timer_handle(idx, t->gen);
}

uint64_t eng_timer_add(struct engine *e, int node, int clock, sim_ns delay, int owner, int id, uint64_t arg) {
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
        e->timers[idx].active = 0;
        e->timers[idx].carrier = TIMER_CARRIER_NONE;
    }
    return timer_set(e, idx, node, clock, delay, owner, id, arg);
}

uint64_t eng_timer_rearm(struct engine *e, uint64_t h, int node, int clock, sim_ns delay, int owner, int id,
                         uint64_t arg) {
    struct timer *t = eng_timer_from_handle(e, h);
    if (!t || t->node != node) return eng_timer_add(e, node, clock, delay, owner, id, arg);
    uint32_t idx = (uint32_t)(t - e->timers);
    if (delay < 0) delay = 0;
    /* A timer re-armed lazily already (its carrier aside, on a node without
     * a clock model) and moved no earlier than that carrier, as each
     * heartbeat moves a follower's election timeout: of all timer_set and
     * timer_arm write, only the gen, the arming's fields and the re-armed
     * deadline and seq change (the catalog's re-arms: 118 instructions
     * each to 103 on average, the others being on nodes with a clock model
     * or first re-arms, which take timer_set). */
    if (t->carrier == TIMER_CARRIER_SIDE && !nd(e, node)->ext) {
        struct timer_side *sd = &e->tside[idx];
        sim_ns at = clamp_at(e, e->now + delay);
        if (sd->t <= at) {
            t->gen += 2; /* the cancel's and the arming's */
            t->clock = (uint8_t)clock;
            t->owner = (uint8_t)owner;
            t->id = id;
            t->u.arg = arg;
            t->deadline_local = e->now + delay;
            sd->due = at;
            sd->due_seq = queue_take_seq(&e->q);
            return timer_handle(idx, t->gen);
        }
    }
    /* eng_timer_free would put the slot at the head of the free list, and
     * eng_timer_add take it back from there: the same slot, the free list
     * as it was. Only the free's own marks remain to be made. */
    t->active = 0;
    t->gen++;
    return timer_set(e, idx, node, clock, delay, owner, id, arg);
}

void eng_timers_reschedule(struct engine *e, int node) {
    for (uint32_t i = 0; i < e->ntimers; i++) {
        struct timer *t = &e->timers[i];
        if (!t->active || t->node != node) continue;
        uint32_t cgen;
        sim_ns ct = carrier_of(e, t, i, &cgen);
        t->gen++;
        timer_schedule(e, i, ct, cgen);
    }
}

void eng_timers_drop_node(struct engine *e, int node) {
    for (uint32_t i = 0; i < e->ntimers; i++)
        if (e->timers[i].active && e->timers[i].node == node) eng_timer_free(e, &e->timers[i]);
}
