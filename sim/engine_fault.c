/* Faults and the process model: pause, resume, crash and restart of a node,
 * clock steps, drift and slews, partitions and link changes, operator
 * actions. Only nodes with a struct node_ext are named by faults. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"

/* A fault that finds nothing to do at run time (a resume of a node that is
 * not paused, a restart of one that has not crashed, a second pause): the
 * trace says so with a note, "ignored: A is not paused", a = the fault's
 * kind, b = its line in the scenario. */
static void ignored(struct engine *e, int fault, const char *why) {
    const struct scn_fault *f = &e->s.faults[fault];
    int node = e->fref[fault].node;
    const char *text = NULL;
    if ((e->wants >> TRACE_SRV_NOTE) & 1) { /* the text only where someone reads it */
        char buf[SCN_NAME_MAX + 96];
        int len = snprintf(buf, sizeof buf, "ignored: %s %s", e->tr.nodes[node].name, why);
        if (len < 0 || (size_t)len >= sizeof buf) len = (int)strlen(buf);
        if (!(text = trace_intern(&e->tr, buf, (size_t)len))) e->tr.oom = 1;
    }
    emit(e, TRACE_SRV_NOTE, node, TRACE_NO_NODE, 0, 0, f->kind, f->pos.line, text);
}

/* The process faults, each on a node in the state it needs (see eng_fault_apply). */
static enum fault_action node_crash(struct engine *e, int node) {
    struct node *n = nd(e, node);
    n->proc = PROC_CRASHED;
    n->epoch++;
    ext_of(e, n)->ndeferred = 0;
    eng_timers_drop_node(e, node);
    emit(e, TRACE_CRASH, node, TRACE_NO_NODE, 0, 0, 0, 0, NULL);
    return n->kind == TRACE_NODE_CLIENT ? FAULT_ACT_CLIENT_CRASHED : FAULT_ACT_NONE;
}

static enum fault_action node_restart(struct engine *e, int node) {
    struct node *n = nd(e, node);
    n->proc = PROC_RUNNING;
    n->epoch++;
    emit(e, TRACE_RESTART, node, TRACE_NO_NODE, 0, 0, 0, 0, NULL);
    if (n->kind == TRACE_NODE_CLIENT) return FAULT_ACT_CLIENT_RESTARTED; /* the program starts it */
    if (n->kind == TRACE_NODE_SERVER) algo_server_restart(e, node);
    return FAULT_ACT_NONE;
}

static void node_resume(struct engine *e, int node) {
    struct node *n = nd(e, node);
    struct node_ext *x = ext_of(e, n);
    if (n->proc != PROC_PAUSED) return;
    n->proc = PROC_RUNNING;
    x->pause_gen++;
    emit(e, TRACE_RESUME, node, TRACE_NO_NODE, 0, 0, e->now - x->paused_at, 0, NULL);
    /* What arrived or fell due while paused now runs, in the order it came. */
    for (size_t i = 0; i < x->ndeferred; i++) {
        struct sim_event ev = x->deferred[i];
        ev.t = e->now;
        if (queue_push(&e->q, &ev) != 0) e->tr.oom = 1;
    }
    x->ndeferred = 0;
}

static void node_pause(struct engine *e, int node, sim_ns dur) {
    struct node *n = nd(e, node);
    struct node_ext *x = ext_of(e, n);
    n->proc = PROC_PAUSED;
    x->paused_at = e->now;
    x->pause_gen++;
    emit(e, TRACE_PAUSE, node, TRACE_NO_NODE, 0, 0, dur, 0, NULL);
    if (dur > 0) push(e, e->now + dur, EV_RESUME, node, x->pause_gen);
}

static void clock_changed(struct engine *e, int node) { eng_timers_reschedule(e, node); }

static void node_set_rate(struct engine *e, int node) {
    struct node_ext *x = ext_of(e, nd(e, node));
    int64_t ppm = x->base_ppm + x->slew_ppm;
    if (ppm > CLOCK_PPM_MAX) ppm = CLOCK_PPM_MAX;
    if (ppm < -CLOCK_PPM_MAX) ppm = -CLOCK_PPM_MAX;
    clock_set_ppm(&x->clk[LOCK_CLOCK_WALL], e->now, ppm);
    clock_set_ppm(&x->clk[LOCK_CLOCK_MONO], e->now, x->base_ppm);
    clock_changed(e, node);
}

/* The partition's groups from now on, and in the trace as text, e.g.
 * "A S1 | B S2 S3". */
static void apply_partition(struct engine *e, int fault) {
    const struct scn_fault *f = &e->s.faults[fault];
    char text[SCN_MAX_GROUP * SCN_NAME_MAX * 4 + 16] = "";
    size_t len = 0;
    for (int g = 0; g < f->ngroups; g++)
        for (int k = 0; k < f->group_len[g]; k++) {
            const char *sep = k ? " " : g ? " | " : "";
            int w = snprintf(text + len, sizeof text - len, "%s%s", sep, f->groups[g][k]);
            if (w > 0 && (size_t)w < sizeof text - len) len += (size_t)w;
        }
    const int32_t *member = &e->group_nodes[e->fref[fault].groups];
    for (int i = 0; i < e->nnodes; i++) nd(e, i)->group = (uint8_t)f->ngroups; /* the implicit group */
    for (int g = 0; g < f->ngroups; g++)
        for (int k = 0; k < f->group_len[g]; k++, member++)
            if (*member >= 0) nd(e, *member)->group = (uint8_t)g;
    e->partitioned = 1;
    emit(e, TRACE_PARTITION, TRACE_NO_NODE, TRACE_NO_NODE, 0, 0, f->ngroups, 0, trace_intern(&e->tr, text, len));
}

/* The rate a slew adds, trunc(delta * 10^6 / dur) ppm, without overflow for
 * any times: beyond +-2 * CLOCK_PPM_MAX every rate ends up clamped alike in
 * node_set_rate (drift is within +-CLOCK_PPM_MAX), so larger ones are that. */
static int64_t slew_ppm(sim_ns delta, sim_ns dur) {
    if (dur <= 0) return 0;
    const int64_t cap = 2 * CLOCK_PPM_MAX;
    if (delta / dur != 0) return delta > 0 ? cap : -cap; /* |delta / dur| >= 1: 10^6 ppm or more */
    int64_t r = delta < 0 ? -delta : delta, q = 0;       /* r < dur */
    for (int digit = 0; digit < 6; digit++) {            /* long division: r * 10^6 / dur */
        r *= 10;                                         /* < 10 * dur: no overflow */
        q = q * 10 + r / dur;
        r %= dur;
    }
    if (q > cap) q = cap;
    return delta < 0 ? -q : q;
}

/* pause, resume, crash, restart: applied to a node in the state each needs,
 * ignored (with a note) otherwise. */
static enum fault_action process_fault(struct engine *e, int fault) {
    const struct scn_fault *f = &e->s.faults[fault];
    int node = e->fref[fault].node;
    int proc = nd(e, node)->proc;
    switch (f->kind) {
    case SCN_FAULT_PAUSE:
        /* A pause of a paused node does nothing: the first pause goes on to
         * its own end (a second one neither extends nor cuts it short). */
        if (proc == PROC_CRASHED) ignored(e, fault, "is down");
        else if (proc == PROC_PAUSED) ignored(e, fault, "is already paused; the first pause goes on");
        else node_pause(e, node, f->dur_ns);
        break;
    case SCN_FAULT_RESUME:
        if (proc == PROC_PAUSED) node_resume(e, node);
        else ignored(e, fault, proc == PROC_CRASHED ? "is down, not paused" : "is not paused");
        break;
    case SCN_FAULT_CRASH:
        if (proc != PROC_CRASHED) return node_crash(e, node);
        ignored(e, fault, "has already crashed");
        break;
    default: /* SCN_FAULT_RESTART */
        if (proc == PROC_CRASHED) return node_restart(e, node);
        ignored(e, fault, "has not crashed");
        break;
    }
    return FAULT_ACT_NONE;
}

enum fault_action eng_fault_apply(struct engine *e, int fault) {
    const struct scn_fault *f = &e->s.faults[fault];
    const struct fault_ref *r = &e->fref[fault];
    int node = r->node;
    switch (f->kind) {
    case SCN_FAULT_PAUSE:
    case SCN_FAULT_RESUME:
    case SCN_FAULT_CRASH:
    case SCN_FAULT_RESTART: return process_fault(e, fault);
    case SCN_FAULT_CLOCK_STEP: {
        struct node_ext *x = ext_of(e, nd(e, node));
        if (f->which & SCN_CLOCK_WALL) clock_step(&x->clk[LOCK_CLOCK_WALL], e->now, f->delta_ns);
        if (f->which & SCN_CLOCK_MONO) clock_step(&x->clk[LOCK_CLOCK_MONO], e->now, f->delta_ns);
        emit(e, TRACE_CLOCK_STEP, node, TRACE_NO_NODE, 0, 0, f->delta_ns, f->which, NULL);
        clock_changed(e, node);
        break;
    }
    case SCN_FAULT_CLOCK_DRIFT:
        ext_of(e, nd(e, node))->base_ppm = f->ppm;
        emit(e, TRACE_CLOCK_DRIFT, node, TRACE_NO_NODE, 0, 0, f->ppm, 0, NULL);
        node_set_rate(e, node);
        break;
    case SCN_FAULT_CLOCK_SLEW: {
        struct node_ext *x = ext_of(e, nd(e, node));
        /* Spread delta over dur: the wall clock runs faster or slower by
         * delta/dur, as adjtime() or chrony's slewing does. */
        x->slew_ppm = slew_ppm(f->delta_ns, f->dur_ns);
        x->slew_gen++;
        emit(e, TRACE_CLOCK_SLEW, node, TRACE_NO_NODE, 0, 0, f->delta_ns, f->dur_ns, NULL);
        node_set_rate(e, node);
        push(e, e->now + f->dur_ns, EV_SLEW_END, node, x->slew_gen);
        break;
    }
    case SCN_FAULT_PARTITION: apply_partition(e, fault); break;
    case SCN_FAULT_HEAL:
        e->partitioned = 0;
        emit(e, TRACE_HEAL, TRACE_NO_NODE, TRACE_NO_NODE, 0, 0, 0, 0, NULL);
        break;
    case SCN_FAULT_PROMOTE:
        /* The operator acts now (the trace says so); the process acts when it
         * runs: at once, or on resume if paused, or never if it is down. */
        emit(e, TRACE_CONTROL, node, TRACE_NO_NODE, 0, 0, LOCK_CONTROL_PROMOTE, 0, "promote");
        push(e, e->now, EV_CONTROL, node, LOCK_CONTROL_PROMOTE);
        break;
    case SCN_FAULT_KILL_REPLICAS: /* the same path: the operator acts now, the process when it runs */
        emit(e, TRACE_CONTROL, node, TRACE_NO_NODE, 0, 0, LOCK_CONTROL_KILL_REPLICAS, 0, "kill-replicas");
        push(e, e->now, EV_CONTROL, node, LOCK_CONTROL_KILL_REPLICAS);
        break;
    case SCN_FAULT_LINK:
        if (eng_set_link(e, r->from, r->to, &f->link) == 0) {
            const struct link_state *l = &e->links[e->nlinks - 1];
            emit(e, TRACE_LINK, l->from, l->to, 0, l->loss_ppm, l->lat.min_ns, l->lat.max_ns, NULL);
        }
        break;
    default: break;
    }
    return FAULT_ACT_NONE;
}

static int defer(struct engine *e, struct node_ext *n, const struct sim_event *ev) {
    if (n->ndeferred == n->capdeferred) {
        size_t cap = n->capdeferred ? n->capdeferred * 2 : 8;
        struct sim_event *d = realloc(n->deferred, cap * sizeof *d);
        if (!d) {
            e->tr.oom = 1;
            return -1;
        }
        n->deferred = d;
        n->capdeferred = cap;
    }
    n->deferred[n->ndeferred++] = *ev;
    return 0;
}

void eng_fault_resume_due(struct engine *e, int node, uint32_t gen) {
    if (ext_of(e, nd(e, node))->pause_gen == gen) node_resume(e, node);
}

void eng_fault_slew_end(struct engine *e, int node, uint32_t gen) {
    struct node_ext *x = ext_of(e, nd(e, node));
    if (x->slew_gen == gen) {
        x->slew_ppm = 0;
        node_set_rate(e, node);
    }
}

void eng_fault_hold(struct engine *e, const struct sim_event *ev) {
    struct node *n = nd(e, ev->node);
    if (n->proc == PROC_PAUSED) {
        defer(e, ext_of(e, n), ev);
    } else if (ev->type == EV_DELIVER || ev->type == EV_DELIVER_RES) {
        struct slot *s = &e->slots[ev->arg];
        emit(e, TRACE_MSG_DROP, ev->node, s->u.m.from, 0, 0, s->id, TRACE_DROP_CRASHED, NULL);
        eng_slot_free(e, (uint32_t)ev->arg);
    }
}
