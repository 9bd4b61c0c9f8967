/* The engine: event loop, process model (pause, crash, restart), clocks,
 * network (latency, loss, partitions), client programs, the protected
 * resource, and the services that lock algorithms call (lock.h). */
#include "engine.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "queue.h"
#include "rng.h"

/* ---- Events (struct sim_event.type) ---------------------------------- */

enum {
    EV_END,      /* the run's horizon */
    EV_FAULT,    /* arg = fault index; global */
    EV_RESUME,   /* node, arg = pause generation; global */
    EV_SLEW_END, /* node, arg = slew generation; global */
    EV_START,    /* node: client program starts; node-level */
    EV_DELIVER,  /* node: lock-channel message arrives, arg = slot; node-level */
    EV_TIMER,    /* node: timer fires, arg = handle; node-level */
    EV_CONT,     /* node: client program continues, arg = epoch; node-level */
    EV_DELIVER_RES, /* node: resource-channel message arrives, arg = slot; node-level */
    EV_CONTROL   /* node: an operator action (enum lock_control in arg); node-level */
};

enum { PROC_RUNNING, PROC_PAUSED, PROC_CRASHED };

enum { CHAN_LOCK, CHAN_RES };
enum { RES_READ = 1, RES_READ_REPLY, RES_WRITE, RES_WRITE_REPLY };

/* Timers owned by the client program rather than the algorithm. */
enum { TIMER_ALGO, TIMER_PROGRAM };
enum { PT_WORK = 1, PT_RETRY, PT_THINK, PT_RESOURCE };

/* Client program states. */
enum {
    CS_IDLE,
    CS_ACQUIRING,  /* an attempt is in flight inside the algorithm */
    CS_RETRY_WAIT,
    CS_READING,
    CS_WRITING,
    CS_WORKING,
    CS_RELEASING,
    CS_THINKING,
    CS_DONE
};

/* What only read and write steps use, in its own array (engine->rw), which
 * exists only when some program reads or writes; zeroed on restart. */
struct client_rw {
    int64_t read_value;
    int64_t read_version;
    uint64_t read_token;  /* highest token the resource reported in the last read */
    uint64_t res_timer;   /* timeout of the outstanding resource request, 0 = none */
    uint32_t req;         /* outstanding resource request id */
};

/* One node, 48 bytes: what every node-level event reads, and for a client
 * its program. Nodes live in one array of engine->node_stride bytes per
 * node, 64-byte aligned, a client's algorithm state right after its struct
 * node, so that an event for a client with up to 16 bytes of state touches
 * one cache line. What only faulted nodes need (clocks, pauses) is in
 * struct node_ext; what clients share (think time, repeat) in struct profile. */
struct node {
    uint32_t epoch;       /* bumped by crash and restart */
    uint32_t ext;         /* index + 1 into engine->ext; 0 = no fault can touch it:
                             both clocks read true time, it is never paused */
    uint32_t profile;     /* client: index into engine->profiles */
    uint8_t kind;         /* enum trace_node_kind */
    uint8_t proc;         /* PROC_* */
    uint8_t group;        /* partition group */
    uint8_t program;      /* client: index into the scenario's programs */
    uint8_t point_faults; /* client: 1 = some fault fires at one of its points */
    /* The client program's changing state, from here to the end (zeroed on restart). */
    uint8_t state;        /* CS_* */
    uint8_t pc;           /* current step */
    uint8_t holding;      /* believes it holds the lock */
    uint8_t has_read;     /* a read reply came since the last acquire or write */
    uint8_t write_after_read; /* the read was made implicitly by a write step */
    uint8_t lost;         /* the algorithm said the lock is lost (lock_lost): no more writes */
    int32_t reps;         /* completed repetitions */
    int32_t attempts;     /* of the current acquire step */
    uint32_t grant;       /* ground-truth grant id while holding */
    uint64_t token;       /* fencing token to attach to writes */
};
_Static_assert(sizeof(struct node) == 48, "a node and 16 bytes of state are one cache line");
_Static_assert(SCN_MAX_PROGRAMS <= 256 && SCN_MAX_STEPS < 256, "program and pc fit a byte");

/* What a client was given besides its program, shared by the clients of one
 * `clients N` line (consecutive clients with equal values share one). */
struct profile {
    sim_ns think_ns;      /* pause between repetitions, by the client's clock */
    int32_t repeat;       /* times the program runs; 0 = until the run ends */
};

/* Clocks and process faults of a node that a fault or a clock line names. */
struct node_ext {
    struct sim_clock clk[2]; /* [LOCK_CLOCK_MONO], [LOCK_CLOCK_WALL] */
    uint32_t pause_gen;
    uint32_t slew_gen;
    sim_ns paused_at;
    int64_t slew_ppm;       /* rate added by the current slew */
    int64_t base_ppm;       /* drift without slew */
    struct sim_event *deferred; /* events held while paused (owned) */
    size_t ndeferred, capdeferred;
};

/* A fault's node names, resolved when the engine is built (-1 = none). */
struct fault_ref {
    int32_t node;           /* f->node */
    int32_t trigger;        /* client whose point fires it */
    int32_t from, to;       /* LINK: -1 also for "*" */
    int32_t groups;         /* PARTITION: index of its first node in engine->group_nodes */
};

struct timer {
    int32_t node;
    uint32_t gen;
    sim_ns deadline_local;
    union {
        uint64_t arg;       /* while active */
        uint32_t next_free; /* while free: index + 1, 0 = none */
    } u;
    int32_t id;
    uint8_t clock;
    uint8_t owner;          /* TIMER_ALGO or TIMER_PROGRAM */
    uint8_t active;
};
_Static_assert(sizeof(struct timer) == 32, "timers are 32 bytes");

struct slot {
    union {
        struct lock_msg m;  /* while in flight */
        uint32_t next_free; /* while free: index + 1, 0 = none */
    } u;
    uint32_t id;            /* message id for the trace */
    uint32_t grant;         /* resource writes: the writer's grant (ground truth) */
    uint32_t to_epoch;      /* the receiver's incarnation when it was sent */
};

struct lock_ctx {
    struct engine *e;
    int node;
};

struct link_state {
    int from, to;          /* node index, -1 = any */
    struct scn_latency lat;
    uint32_t loss_ppm;
};

struct engine {
    struct scenario s;      /* the scenario's copy, without its client list (see engine_new) */
    const struct lock_algo *algo;
    void *config;           /* owned, algo->config_size bytes */
    struct queue q;
    struct rng rng;
    struct trace tr;
    uint64_t wants;         /* bit k: trace_wants(&tr, k), fixed once the checker observes */
    struct checker ck;
    struct checker_report report;
    sim_ns now;
    uint64_t events;
    int ended;
    int truncated;           /* the run stopped at max_events before its horizon */
    /* One client continuation (EV_CONT) held outside the queue, with the
     * seq it would have had there: engine_step takes it when nothing queued
     * comes before it, so the order is the queue's own, minus a push and a pop. */
    struct sim_event lane;
    int lane_full;
    int prefetch;           /* 1 = the nodes outgrow the caches: prefetch ahead */

    unsigned char *node_mem; /* owned: nnodes nodes of node_stride bytes (see struct node) */
    size_t node_stride;
    int nnodes, nclients, nservers, resource;
    void **other_state;     /* owned: algorithm states of servers, then the resource */
    struct client_rw *rw;   /* owned: nclients, or NULL when no program reads or writes */
    struct profile *profiles; /* owned, nprofiles */
    int nprofiles;
    sim_ns *acquire_mono;   /* owned: per client, when its acquire step began by its
                               monotonic clock; NULL when no acquire step has a timeout */
    uint32_t *points;       /* owned: SCN_POINT_COUNT per client, times each point was
                               reached; NULL when neither the trace nor a fault needs them */
    struct node_ext *ext;   /* owned, n_ext: the nodes faults and clock lines name */
    uint32_t n_ext;
    struct fault_ref *fref; /* owned, one per fault */
    int32_t *group_nodes;   /* owned: partition members, by fault_ref.groups */

    struct timer *timers;   /* owned pool */
    uint32_t ntimers, captimers, free_timer; /* free_timer: index + 1, 0 = none */
    struct slot *slots;     /* owned pool */
    uint32_t nslots, capslots, free_slot;
    uint32_t next_msg_id;
    uint32_t next_grant;

    struct link_state *links; /* owned */
    int nlinks;
    int partitioned;

    /* The protected resource. */
    int64_t stock;
    int64_t version;
    uint64_t max_token;

    char dropped[256];
};

/* ---- Small helpers ----------------------------------------------------- */

static inline struct node *nd(const struct engine *e, int i) {
    return (struct node *)(e->node_mem + (size_t)i * e->node_stride);
}

/* The algorithm's state of node i. */
static inline void *state_of(const struct engine *e, int i) {
    return i < e->nclients ? (void *)(e->node_mem + (size_t)i * e->node_stride + sizeof(struct node))
                           : e->other_state[i - e->nclients];
}

static inline struct node_ext *ext_of(const struct engine *e, const struct node *n) {
    return n->ext ? &e->ext[n->ext - 1] : NULL;
}

#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

/* Build one trace event and append it: the half of emit() for kinds that
 * are kept or observed. */
NOINLINE static void emit_append(struct engine *e, int kind, int node, int peer, uint64_t token,
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

/* Trace an event. Most kinds in a run without a kept trace are read by no
 * one (the checker's are CHECKER_KINDS): those are only counted, inline. */
static inline void emit(struct engine *e, int kind, int node, int peer, uint64_t token,
                        uint32_t grant, int64_t a, int64_t b, const char *text) {
    if (!((e->wants >> kind) & 1)) { /* = !trace_wants(&e->tr, kind), precomputed */
        trace_skip(&e->tr, e->now);
        return;
    }
    emit_append(e, kind, node, peer, token, grant, a, b, text);
}

static void push(struct engine *e, sim_ns t, uint32_t type, int node, uint64_t arg) {
    struct sim_event ev = {.t = t, .type = type, .node = node, .arg = arg};
    if (queue_push(&e->q, &ev) != 0) e->tr.oom = 1; /* reported as an internal error */
}

static sim_ns local_now(struct engine *e, int node, int clock) {
    const struct node_ext *x = ext_of(e, nd(e, node));
    return x ? clock_read(&x->clk[clock], e->now) : e->now;
}

/* ---- Timers ---------------------------------------------------------------- */

static uint64_t timer_handle(uint32_t idx, uint32_t gen) {
    return ((uint64_t)gen << 32) | (uint64_t)(idx + 1);
}

static struct timer *timer_from_handle(struct engine *e, uint64_t h) {
    uint32_t idx = (uint32_t)(h & 0xffffffffu);
    if (idx == 0 || idx > e->ntimers) return NULL;
    struct timer *t = &e->timers[idx - 1];
    if (!t->active || t->gen != (uint32_t)(h >> 32)) return NULL;
    return t;
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
    if (at == SIM_NEVER || at > e->s.duration_ns) at = e->s.duration_ns + 1; /* never fires */
    push(e, at, EV_TIMER, t->node, timer_handle(idx, t->gen));
}

static uint64_t timer_add(struct engine *e, int node, int clock, sim_ns delay, int owner,
                          int id, uint64_t arg) {
    uint32_t idx;
    if (e->free_timer) {
        idx = e->free_timer - 1;
        e->free_timer = e->timers[idx].u.next_free;
    } else {
        if (e->ntimers == e->captimers) {
            uint32_t cap = e->captimers ? e->captimers * 2 : 64;
            struct timer *n = realloc(e->timers, (size_t)cap * sizeof *n);
            if (!n) {
                e->tr.oom = 1;
                return 0;
            }
            e->timers = n;
            e->captimers = cap;
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

static void timer_free(struct engine *e, struct timer *t) {
    t->active = 0;
    t->gen++; /* any queued firing is now stale */
    t->u.next_free = e->free_timer;
    e->free_timer = (uint32_t)(t - e->timers) + 1;
}

/* A node's clock changed: every pending timer on it fires at a new true time. */
static void timers_reschedule(struct engine *e, int node) {
    for (uint32_t i = 0; i < e->ntimers; i++) {
        struct timer *t = &e->timers[i];
        if (!t->active || t->node != node) continue;
        t->gen++;
        timer_schedule(e, i);
    }
}

static void timers_drop_node(struct engine *e, int node) {
    for (uint32_t i = 0; i < e->ntimers; i++)
        if (e->timers[i].active && e->timers[i].node == node) timer_free(e, &e->timers[i]);
}

/* ---- Network ------------------------------------------------------------------- */

static struct slot *slot_new(struct engine *e, uint32_t *idx_out) {
    uint32_t idx;
    if (e->free_slot) {
        idx = e->free_slot - 1;
        e->free_slot = e->slots[idx].u.next_free;
    } else {
        if (e->nslots == e->capslots) {
            uint32_t cap = e->capslots ? e->capslots * 2 : 64;
            struct slot *n = realloc(e->slots, (size_t)cap * sizeof *n);
            if (!n) {
                e->tr.oom = 1;
                return NULL;
            }
            e->slots = n;
            e->capslots = cap;
        }
        idx = e->nslots++;
    }
    *idx_out = idx;
    return &e->slots[idx];
}

static void slot_free(struct engine *e, uint32_t idx) {
    e->slots[idx].u.next_free = e->free_slot;
    e->free_slot = idx + 1;
}

static const struct link_state *link_for(const struct engine *e, int from, int to) {
    const struct link_state *best = NULL;
    for (int i = 0; i < e->nlinks; i++) { /* later lines override earlier ones */
        const struct link_state *l = &e->links[i];
        if ((l->from == -1 || l->from == from) && (l->to == -1 || l->to == to)) best = l;
    }
    return best;
}

static int cut_off(const struct engine *e, int a, int b) {
    return e->partitioned && nd(e, a)->group != nd(e, b)->group;
}

static void net_send(struct engine *e, int from, int to, int chan, const struct lock_msg *m,
                     uint32_t grant) {
    uint32_t id = ++e->next_msg_id;
    emit(e, TRACE_MSG_SEND, from, to, 0, 0, id, m->type, NULL);
    struct scn_latency lat = e->s.latency;
    uint32_t loss = e->s.loss_ppm;
    if (e->nlinks) {
        const struct link_state *l = link_for(e, from, to);
        if (l) {
            lat = l->lat;
            loss = l->loss_ppm;
        }
    }
    if (cut_off(e, from, to)) {
        emit(e, TRACE_MSG_DROP, to, from, 0, 0, id, TRACE_DROP_PARTITION, NULL);
        return;
    }
    if (loss && rng_chance_ppm(&e->rng, loss)) {
        emit(e, TRACE_MSG_DROP, to, from, 0, 0, id, TRACE_DROP_LOSS, NULL);
        return;
    }
    sim_ns delay = lat.min_ns == lat.max_ns ? lat.min_ns : rng_range(&e->rng, lat.min_ns, lat.max_ns);
    uint32_t idx;
    struct slot *s = slot_new(e, &idx);
    if (!s) return;
    /* Field by field: the sender has just written *m so, and a wide copy
     * would wait for those narrow stores to reach the cache. */
    s->u.m.from = from;
    s->u.m.to = to;
    s->u.m.type = m->type;
    s->u.m.req = m->req;
    s->u.m.value = m->value;
    s->u.m.token = m->token;
    s->u.m.ttl_ns = m->ttl_ns;
    s->u.m.a = m->a;
    s->u.m.b = m->b;
    s->id = id;
    s->grant = grant;
    s->to_epoch = nd(e, to)->epoch;
    push(e, e->now + delay, chan == CHAN_RES ? EV_DELIVER_RES : EV_DELIVER, to, idx);
}

/* ---- Client program ------------------------------------------------------------- */

static void client_continue_later(struct engine *e, int node) {
    if (e->lane_full) {
        push(e, e->now, EV_CONT, node, nd(e, node)->epoch);
        return;
    }
    e->lane.t = e->now;
    e->lane.seq = queue_take_seq(&e->q);
    e->lane.type = EV_CONT;
    e->lane.node = node;
    e->lane.arg = nd(e, node)->epoch;
    e->lane_full = 1;
}

static void apply_fault(struct engine *e, int fault);

/* The client reached a named point: trace it and fire faults attached to it.
 * The program goes on through an EV_CONT event, so a pause applied here takes
 * effect before the client's next action. */
static void reach_point(struct engine *e, int node, enum scn_point p) {
    /* Counted only where someone reads the count: the kept trace, or a fault
     * on one of this run's points (e->points is NULL otherwise, and then the
     * event below is not kept either). */
    uint32_t n = e->points ? ++e->points[(size_t)node * SCN_POINT_COUNT + p] : 0;
    emit(e, TRACE_POINT, node, TRACE_NO_NODE, 0, 0, p, n,
         (e->wants >> TRACE_POINT) & 1 ? scn_point_name(p) : NULL);
    if (!nd(e, node)->point_faults) return;
    for (int i = 0; i < e->s.nfaults; i++) {
        const struct scn_fault *f = &e->s.faults[i];
        if (f->point == p && (uint32_t)f->occurrence == n && e->fref[i].trigger == node)
            apply_fault(e, i);
    }
}

static const struct scn_step *cur_step(struct engine *e, const struct node *n) {
    const struct scn_program *p = &e->s.programs[n->program];
    return n->pc < p->nsteps ? &p->steps[n->pc] : NULL;
}

static void cs_exit(struct engine *e, int node, int reason) {
    struct node *c = nd(e, node);
    if (!c->holding) return;
    c->holding = 0;
    emit(e, TRACE_CS_EXIT, node, TRACE_NO_NODE, c->token, c->grant, reason, 0, NULL);
    c->grant = 0;
    c->token = 0;
}

static void ctx_init(struct lock_ctx *x, struct engine *e, int node) {
    x->e = e;
    x->node = node;
}

static void attempt_acquire(struct engine *e, int node) {
    struct node *n = nd(e, node);
    struct node *c = n;
    c->attempts++;
    c->state = CS_ACQUIRING;
    emit(e, TRACE_ACQUIRE_TRY, node, TRACE_NO_NODE, 0, 0, c->attempts, 0, NULL);
    struct lock_ctx x;
    ctx_init(&x, e, node);
    uint32_t epoch = n->epoch;
    e->algo->client_acquire(&x, state_of(e, node));
    if (n->epoch == epoch && c->state == CS_ACQUIRING)
        reach_point(e, node, SCN_POINT_DURING_ACQUIRE);
}

/* Skip to the step after the next release: the critical section is not entered. */
static void skip_critical_section(struct engine *e, struct node *n) {
    const struct scn_program *p = &e->s.programs[n->program];
    int i = n->pc + 1;
    while (i < p->nsteps && p->steps[i].kind != SCN_STEP_RELEASE) i++;
    n->pc = (uint8_t)(i < p->nsteps ? i + 1 : p->nsteps);
}

static void send_resource(struct engine *e, int node, int type, int64_t value) {
    struct node *c = nd(e, node);
    struct client_rw *rw = &e->rw[node];
    struct lock_msg m = {0};
    m.type = type;
    m.req = ++rw->req;
    m.a = value;
    m.token = c->token;
    m.b = rw->read_version;
    net_send(e, node, e->resource, CHAN_RES, &m, c->grant);
    if (e->s.resource_timeout_ns > 0)
        rw->res_timer = timer_add(e, node, LOCK_CLOCK_MONO, e->s.resource_timeout_ns, TIMER_PROGRAM,
                                  PT_RESOURCE, m.req);
}

static void program_step(struct engine *e, int node);

static void program_next(struct engine *e, int node) {
    struct node *c = nd(e, node);
    c->pc++;
    c->state = CS_IDLE;
    client_continue_later(e, node);
}

/* Run the current step of a client's program. */
static void program_step(struct engine *e, int node) {
    struct node *n = nd(e, node);
    struct node *c = n;
    const struct scn_step *st = cur_step(e, n);
    if (!st) { /* end of one repetition */
        cs_exit(e, node, TRACE_EXIT_END);
        c->reps++;
        const struct profile *pf = &e->profiles[n->profile];
        if (pf->repeat == 0 || c->reps < pf->repeat) {
            c->pc = 0;
            if (pf->think_ns == 0) { /* no think time: the next repetition starts now, without a timer */
                c->state = CS_IDLE;
                client_continue_later(e, node);
            } else {
                c->state = CS_THINKING;
                timer_add(e, node, LOCK_CLOCK_MONO, pf->think_ns, TIMER_PROGRAM, PT_THINK, 0);
            }
        } else {
            c->state = CS_DONE;
            emit(e, TRACE_PROGRAM_DONE, node, TRACE_NO_NODE, 0, 0, c->reps, 0, NULL);
        }
        return;
    }
    switch (st->kind) {
    case SCN_STEP_ACQUIRE:
        c->attempts = 0;
        c->has_read = 0;
        c->lost = 0;
        if (e->acquire_mono) e->acquire_mono[node] = local_now(e, node, LOCK_CLOCK_MONO);
        emit(e, TRACE_ACQUIRE_START, node, TRACE_NO_NODE, 0, 0, 0, 0, NULL);
        attempt_acquire(e, node);
        break;
    case SCN_STEP_READ:
        reach_point(e, node, SCN_POINT_BEFORE_READ);
        c->state = CS_READING;
        c->write_after_read = 0;
        client_continue_later(e, node);
        break;
    case SCN_STEP_WRITE:
        if (!c->has_read) { /* a write alone reads first: read-modify-write */
            c->state = CS_READING;
            c->write_after_read = 1;
            send_resource(e, node, RES_READ, 0);
            break;
        }
        reach_point(e, node, SCN_POINT_BEFORE_WRITE);
        c->state = CS_WRITING;
        client_continue_later(e, node);
        break;
    case SCN_STEP_WORK:
        c->state = CS_WORKING;
        emit(e, TRACE_WORK_START, node, TRACE_NO_NODE, 0, 0, st->dur_ns, 0, NULL);
        timer_add(e, node, LOCK_CLOCK_MONO, st->dur_ns, TIMER_PROGRAM, PT_WORK, 0);
        break;
    case SCN_STEP_RELEASE:
        if (!c->holding) {
            program_next(e, node);
            break;
        }
        reach_point(e, node, SCN_POINT_BEFORE_RELEASE);
        c->state = CS_RELEASING;
        client_continue_later(e, node);
        break;
    default:
        program_next(e, node);
        break;
    }
}

/* An EV_CONT: the second half of steps that pass through a named point. */
static void program_cont(struct engine *e, int node) {
    struct node *c = nd(e, node);
    switch (c->state) {
    case CS_IDLE:
        program_step(e, node);
        break;
    case CS_READING:
        if (!c->write_after_read) send_resource(e, node, RES_READ, 0);
        else program_step(e, node);
        break;
    case CS_WRITING: {
        struct lock_ctx x;
        ctx_init(&x, e, node);
        if (e->rw[node].read_value <= 0) { /* sold out: nothing to reserve */
            emit(e, TRACE_WRITE_SKIPPED, node, TRACE_NO_NODE, c->token, c->grant, TRACE_SKIP_SOLD_OUT, 0, NULL);
            c->has_read = 0;
            program_next(e, node);
        } else if (c->lost) { /* it knows it no longer holds the lock */
            emit(e, TRACE_WRITE_SKIPPED, node, TRACE_NO_NODE, c->token, c->grant, TRACE_SKIP_LOST, 0, NULL);
            c->has_read = 0;
            program_next(e, node);
        } else if (e->algo->client_write_ok && !e->algo->client_write_ok(&x, state_of(e, node))) {
            emit(e, TRACE_WRITE_SKIPPED, node, TRACE_NO_NODE, c->token, c->grant, TRACE_SKIP_CLIENT_CHECK, 0, NULL);
            c->has_read = 0;
            program_next(e, node);
        } else {
            send_resource(e, node, RES_WRITE, e->rw[node].read_value - 1);
        }
        break;
    }
    case CS_RELEASING: {
        cs_exit(e, node, TRACE_EXIT_RELEASE);
        emit(e, TRACE_RELEASE_SENT, node, TRACE_NO_NODE, 0, 0, 0, 0, NULL);
        struct lock_ctx x;
        ctx_init(&x, e, node);
        e->algo->client_release(&x, state_of(e, node));
        break;
    }
    default:
        break; /* waiting for a reply or a timer */
    }
}

static void program_timer(struct engine *e, int node, int id, uint64_t arg) {
    struct node *c = nd(e, node);
    switch (id) {
    case PT_RESOURCE: {
        /* No answer from the resource in time: the client stops waiting and
         * goes on to its next step (a write that read implicitly is dropped
         * with its read); a write's fate stays unknown to it. */
        struct client_rw *rw = &e->rw[node];
        rw->res_timer = 0;
        if (arg != rw->req || (c->state != CS_READING && c->state != CS_WRITING)) break;
        emit(e, TRACE_SRV_NOTE, node, e->resource, 0, 0, (int64_t)arg, c->state == CS_WRITING,
             c->state == CS_WRITING ? "resource write timed out: outcome unknown"
                                    : "resource read timed out");
        rw->req++; /* a late reply now answers nothing */
        c->has_read = 0;
        program_next(e, node);
        break;
    }
    case PT_WORK:
        emit(e, TRACE_WORK_END, node, TRACE_NO_NODE, 0, 0, 0, 0, NULL);
        program_next(e, node);
        break;
    case PT_RETRY:
        attempt_acquire(e, node);
        break;
    case PT_THINK:
        c->state = CS_IDLE;
        program_step(e, node);
        break;
    }
}

/* A restarted client starts its program afresh; what it was given (program,
 * repeat, think time) stays. */
static void program_restart(struct engine *e, int node) {
    struct node *n = nd(e, node);
    memset(&n->state, 0, sizeof *n - offsetof(struct node, state));
    n->state = CS_IDLE;
    if (e->rw) memset(&e->rw[node], 0, sizeof e->rw[node]);
    if (e->acquire_mono) e->acquire_mono[node] = 0;
    if (e->points) memset(&e->points[(size_t)node * SCN_POINT_COUNT], 0, SCN_POINT_COUNT * sizeof *e->points);
}

static void resource_reply(struct engine *e, int node, const struct slot *s) {
    struct node *c = nd(e, node);
    struct client_rw *rw = &e->rw[node];
    if (s->u.m.req != rw->req) return; /* an answer to an earlier incarnation, or too late */
    if (rw->res_timer) {
        struct timer *t = timer_from_handle(e, rw->res_timer);
        if (t) timer_free(e, t);
        rw->res_timer = 0;
    }
    if (s->u.m.type == RES_READ_REPLY && c->state == CS_READING) {
        c->has_read = 1;
        rw->read_value = s->u.m.a;
        rw->read_version = s->u.m.b;
        rw->read_token = s->u.m.token;
        if (c->write_after_read) {
            reach_point(e, node, SCN_POINT_BEFORE_WRITE);
            c->state = CS_WRITING;
            client_continue_later(e, node);
        } else {
            reach_point(e, node, SCN_POINT_BETWEEN_READ_AND_WRITE);
            program_next(e, node);
        }
    } else if (s->u.m.type == RES_WRITE_REPLY && c->state == CS_WRITING) {
        c->has_read = 0;
        reach_point(e, node, SCN_POINT_AFTER_WRITE);
        program_next(e, node);
    }
}

/* ---- The protected resource ------------------------------------------------------------- */

static void resource_recv(struct engine *e, const struct slot *s) {
    int client = s->u.m.from;
    struct lock_msg r = {0};
    r.req = s->u.m.req;
    if (s->u.m.type == RES_READ) {
        emit(e, TRACE_READ, e->resource, client, 0, s->grant, e->stock, e->version, NULL);
        r.type = RES_READ_REPLY;
        r.a = e->stock;
        r.b = e->version;
        r.token = e->max_token; /* the highest token it has accepted */
    } else if (s->u.m.type == RES_WRITE) {
        int result = TRACE_WRITE_ACCEPTED;
        if (e->algo->resource_write) {
            struct lock_write w = {.client = client, .token = s->u.m.token, .value = s->u.m.a,
                                   .read_version = s->u.m.b, .version = e->version, .stock = e->stock};
            struct lock_ctx x;
            ctx_init(&x, e, e->resource);
            result = e->algo->resource_write(&x, state_of(e, e->resource), &w);
        } else if (e->s.fencing) {
            if (s->u.m.token == 0) result = TRACE_WRITE_REJECTED_NOTOKEN;
            else if (s->u.m.token < e->max_token) result = TRACE_WRITE_REJECTED_STALE;
        }
        if (result == TRACE_WRITE_ACCEPTED) {
            e->stock = s->u.m.a;
            e->version++;
            if (s->u.m.token > e->max_token) e->max_token = s->u.m.token;
        }
        emit(e, TRACE_WRITE, e->resource, client, s->u.m.token, s->grant, s->u.m.a, result, NULL);
        r.type = RES_WRITE_REPLY;
        r.a = result;
    } else {
        return;
    }
    net_send(e, e->resource, client, CHAN_RES, &r, 0);
}

/* ---- Process and clock faults -------------------------------------------------------- */
/* Only nodes with a struct node_ext are named by faults, so these find one. */

static void node_crash(struct engine *e, int node) {
    struct node *n = nd(e, node);
    if (n->proc == PROC_CRASHED) return;
    n->proc = PROC_CRASHED;
    n->epoch++;
    ext_of(e, n)->ndeferred = 0;
    timers_drop_node(e, node);
    emit(e, TRACE_CRASH, node, TRACE_NO_NODE, 0, 0, 0, 0, NULL);
    if (n->kind == TRACE_NODE_CLIENT) cs_exit(e, node, TRACE_EXIT_CRASH);
}

static void node_restart(struct engine *e, int node) {
    struct node *n = nd(e, node);
    if (n->proc != PROC_CRASHED) return;
    n->proc = PROC_RUNNING;
    n->epoch++;
    emit(e, TRACE_RESTART, node, TRACE_NO_NODE, 0, 0, 0, 0, NULL);
    struct lock_ctx x;
    ctx_init(&x, e, node);
    if (n->kind == TRACE_NODE_CLIENT) {
        memset(state_of(e, node), 0, e->algo->client_size);
        if (e->algo->client_init) e->algo->client_init(&x, state_of(e, node));
        program_restart(e, node);
        client_continue_later(e, node);
    } else if (n->kind == TRACE_NODE_SERVER) {
        if (e->algo->server_restart) e->algo->server_restart(&x, state_of(e, node));
    }
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
    if (n->proc == PROC_CRASHED) return;
    if (n->proc != PROC_PAUSED) {
        n->proc = PROC_PAUSED;
        x->paused_at = e->now;
        x->pause_gen++;
    }
    emit(e, TRACE_PAUSE, node, TRACE_NO_NODE, 0, 0, dur, 0, NULL);
    if (dur > 0) push(e, e->now + dur, EV_RESUME, node, x->pause_gen);
}

static void clock_changed(struct engine *e, int node) { timers_reschedule(e, node); }

static void node_set_rate(struct engine *e, int node) {
    struct node_ext *x = ext_of(e, nd(e, node));
    int64_t ppm = x->base_ppm + x->slew_ppm;
    if (ppm > CLOCK_PPM_MAX) ppm = CLOCK_PPM_MAX;
    if (ppm < -CLOCK_PPM_MAX) ppm = -CLOCK_PPM_MAX;
    clock_set_ppm(&x->clk[LOCK_CLOCK_WALL], e->now, ppm);
    clock_set_ppm(&x->clk[LOCK_CLOCK_MONO], e->now, x->base_ppm);
    clock_changed(e, node);
}

static void apply_partition(struct engine *e, int fault) {
    const struct scn_fault *f = &e->s.faults[fault];
    const int32_t *member = &e->group_nodes[e->fref[fault].groups];
    for (int i = 0; i < e->nnodes; i++) nd(e, i)->group = (uint8_t)f->ngroups; /* the implicit group */
    for (int g = 0; g < f->ngroups; g++)
        for (int k = 0; k < f->group_len[g]; k++, member++)
            if (*member >= 0) nd(e, *member)->group = (uint8_t)g;
    e->partitioned = 1;
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

static int set_link(struct engine *e, int from, int to, const struct scn_link *l);

static void apply_fault(struct engine *e, int fault) {
    const struct scn_fault *f = &e->s.faults[fault];
    const struct fault_ref *r = &e->fref[fault];
    int node = r->node;
    switch (f->kind) {
    case SCN_FAULT_PAUSE:
        node_pause(e, node, f->dur_ns);
        break;
    case SCN_FAULT_RESUME:
        node_resume(e, node);
        break;
    case SCN_FAULT_CRASH:
        node_crash(e, node);
        break;
    case SCN_FAULT_RESTART:
        node_restart(e, node);
        break;
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
    case SCN_FAULT_PARTITION: {
        /* The groups as text for the trace, e.g. "A S1 | B S2 S3". */
        char text[SCN_MAX_GROUP * SCN_NAME_MAX * 4 + 16] = "";
        size_t len = 0;
        for (int g = 0; g < f->ngroups; g++)
            for (int k = 0; k < f->group_len[g]; k++) {
                const char *sep = k ? " " : g ? " | " : "";
                int w = snprintf(text + len, sizeof text - len, "%s%s", sep, f->groups[g][k]);
                if (w > 0 && (size_t)w < sizeof text - len) len += (size_t)w;
            }
        apply_partition(e, fault);
        emit(e, TRACE_PARTITION, TRACE_NO_NODE, TRACE_NO_NODE, 0, 0, f->ngroups, 0,
             trace_intern(&e->tr, text, len));
        break;
    }
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
    case SCN_FAULT_LINK:
        if (set_link(e, r->from, r->to, &f->link) == 0) {
            const struct link_state *l = &e->links[e->nlinks - 1];
            emit(e, TRACE_LINK, l->from, l->to, 0, 0, l->lat.min_ns, l->lat.max_ns, NULL);
        }
        break;
    default:
        break;
    }
}

/* A link line from -> to (node indices, -1 = "*") from now on. */
static int set_link(struct engine *e, int from, int to, const struct scn_link *l) {
    /* A link line may give only one of latency and loss (the parser marks
     * the other negative / above 10^6): that one keeps its current value. */
    const struct link_state *cur = link_for(e, from, to);
    struct scn_latency lat = cur ? cur->lat : e->s.latency;
    uint32_t loss = cur ? cur->loss_ppm : e->s.loss_ppm;
    struct link_state *n = realloc(e->links, (size_t)(e->nlinks + 1) * sizeof *n);
    if (!n) {
        e->tr.oom = 1;
        return -1;
    }
    e->links = n;
    struct link_state *s = &e->links[e->nlinks++];
    s->from = from;
    s->to = to;
    s->lat = l->lat.min_ns < 0 ? lat : l->lat;
    s->loss_ppm = l->loss_ppm > 1000000 ? loss : l->loss_ppm;
    return 0;
}

/* ---- Dispatch ---------------------------------------------------------------------- */

static void deliver(struct engine *e, int node, uint32_t idx, int chan) {
    struct slot s = e->slots[idx];
    slot_free(e, idx);
    if (s.to_epoch != nd(e, node)->epoch) {
        /* Sent to an incarnation that has since crashed: its connection died
         * with it, and the restarted process never sees the message. */
        emit(e, TRACE_MSG_DROP, node, s.u.m.from, 0, 0, s.id, TRACE_DROP_CRASHED, NULL);
        return;
    }
    if (cut_off(e, s.u.m.from, node)) {
        emit(e, TRACE_MSG_DROP, node, s.u.m.from, 0, 0, s.id, TRACE_DROP_PARTITION, NULL);
        return;
    }
    emit(e, TRACE_MSG_RECV, node, s.u.m.from, 0, 0, s.id, s.u.m.type, NULL);
    struct node *n = nd(e, node);
    if (chan == CHAN_RES) {
        if (node == e->resource) resource_recv(e, &s);
        else if (n->kind == TRACE_NODE_CLIENT) resource_reply(e, node, &s);
        return;
    }
    struct lock_ctx x;
    ctx_init(&x, e, node);
    if (n->kind == TRACE_NODE_CLIENT) {
        if (e->algo->client_recv) e->algo->client_recv(&x, state_of(e, node), &s.u.m);
    } else if (n->kind == TRACE_NODE_SERVER) {
        if (e->algo->server_recv) e->algo->server_recv(&x, state_of(e, node), &s.u.m);
    }
}

static void fire_timer(struct engine *e, int node, uint64_t h) {
    struct timer *t = timer_from_handle(e, h);
    if (!t) return; /* cancelled or rescheduled */
    int owner = t->owner, id = t->id;
    uint64_t arg = t->u.arg;
    timer_free(e, t);
    struct node *n = nd(e, node);
    if (owner == TIMER_PROGRAM) {
        program_timer(e, node, id, arg);
        return;
    }
    struct lock_ctx x;
    ctx_init(&x, e, node);
    if (n->kind == TRACE_NODE_CLIENT) {
        if (e->algo->client_timer) e->algo->client_timer(&x, state_of(e, node), id, arg);
    } else if (n->kind == TRACE_NODE_SERVER) {
        if (e->algo->server_timer) e->algo->server_timer(&x, state_of(e, node), id, arg);
    }
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

static void dispatch(struct engine *e, const struct sim_event *ev) {
    switch (ev->type) {
    case EV_FAULT:
        apply_fault(e, (int)ev->arg);
        return;
    case EV_RESUME:
        if (ext_of(e, nd(e, ev->node))->pause_gen == (uint32_t)ev->arg) node_resume(e, ev->node);
        return;
    case EV_SLEW_END: {
        struct node_ext *x = ext_of(e, nd(e, ev->node));
        if (x->slew_gen == (uint32_t)ev->arg) {
            x->slew_ppm = 0;
            node_set_rate(e, ev->node);
        }
        return;
    }
    default:
        break;
    }
    /* Node-level events: lost on a crashed node, held while it is paused. */
    struct node *n = nd(e, ev->node);
    if (n->proc != PROC_RUNNING) {
        if (n->proc == PROC_PAUSED) {
            defer(e, ext_of(e, n), ev);
        } else if (ev->type == EV_DELIVER || ev->type == EV_DELIVER_RES) {
            struct slot *s = &e->slots[ev->arg];
            emit(e, TRACE_MSG_DROP, ev->node, s->u.m.from, 0, 0, s->id, TRACE_DROP_CRASHED, NULL);
            slot_free(e, (uint32_t)ev->arg);
        }
        return;
    }
    switch (ev->type) {
    case EV_START:
        program_step(e, ev->node);
        break;
    case EV_DELIVER:
        deliver(e, ev->node, (uint32_t)ev->arg, CHAN_LOCK);
        break;
    case EV_DELIVER_RES:
        deliver(e, ev->node, (uint32_t)ev->arg, CHAN_RES);
        break;
    case EV_TIMER:
        fire_timer(e, ev->node, ev->arg);
        break;
    case EV_CONTROL:
        if (e->algo->server_control && n->kind == TRACE_NODE_SERVER) {
            struct lock_ctx x;
            ctx_init(&x, e, ev->node);
            e->algo->server_control(&x, state_of(e, ev->node), (enum lock_control)ev->arg);
        }
        break;
    case EV_CONT:
        if ((uint32_t)ev->arg == n->epoch) program_cont(e, ev->node);
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
static inline void prefetch_ahead(struct engine *e) {
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

int engine_step(struct engine *e) {
    if (e->ended) return 0;
    struct sim_event ev;
    /* EV_END sits in the queue from the start, so the queue empties only
     * after it; max_events bounds runs whose events never thin out. */
    if (e->lane_full && !queue_has_before(&e->q, e->lane.t, e->lane.seq)) {
        ev = e->lane; /* what queue_pop would have returned */
        e->lane_full = 0;
    } else if (queue_pop(&e->q, &ev) != 0) {
        finish(e);
        return 0;
    }
    if (ev.type == EV_END) {
        e->now = ev.t;
        finish(e);
        return 0;
    }
    if (e->events >= e->s.max_events) { /* cut short: this event is not processed */
        e->truncated = 1;
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
    while (engine_step(e)) {
    }
    return e->events;
}

/* ---- Services for lock algorithms (lock.h) --------------------------------------------- */

const void *lock_config(struct lock_ctx *x) { return x->e->config; }
int lock_self(struct lock_ctx *x) { return x->node; }
int lock_nservers(struct lock_ctx *x) { return x->e->nservers; }
int lock_server(struct lock_ctx *x, int i) {
    return i >= 0 && i < x->e->nservers ? x->e->nclients + i : -1;
}
int lock_server_index(struct lock_ctx *x, int node) {
    int i = node - x->e->nclients;
    return i >= 0 && i < x->e->nservers ? i : -1;
}
sim_ns lock_now(struct lock_ctx *x, enum lock_clock clock) {
    return local_now(x->e, x->node, clock == LOCK_CLOCK_WALL ? LOCK_CLOCK_WALL : LOCK_CLOCK_MONO);
}
void lock_send(struct lock_ctx *x, int to, const struct lock_msg *m) {
    if (to < 0 || to >= x->e->nnodes || to == x->e->resource) return;
    net_send(x->e, x->node, to, CHAN_LOCK, m, 0);
}
uint64_t lock_timer(struct lock_ctx *x, enum lock_clock clock, sim_ns delay_ns, int timer,
                    uint64_t arg) {
    return timer_add(x->e, x->node, clock == LOCK_CLOCK_WALL ? LOCK_CLOCK_WALL : LOCK_CLOCK_MONO,
                     delay_ns, TIMER_ALGO, timer, arg);
}
void lock_cancel(struct lock_ctx *x, uint64_t handle) {
    struct timer *t = timer_from_handle(x->e, handle);
    if (t && t->node == x->node) timer_free(x->e, t);
}
uint64_t lock_random(struct lock_ctx *x) { return rng_next(&x->e->rng); }
uint32_t lock_incarnation(struct lock_ctx *x) { return nd(x->e, x->node)->epoch / 2; } /* crash and restart: +2 */
/* The client program of node i, or NULL when i is not a client. */
static struct node *client_of(struct engine *e, int i) {
    struct node *n = nd(e, i);
    return n->kind == TRACE_NODE_CLIENT ? n : NULL;
}

uint64_t lock_read_token(struct lock_ctx *x) {
    const struct node *c = client_of(x->e, x->node);
    return c && c->has_read ? x->e->rw[x->node].read_token : 0;
}

void lock_granted(struct lock_ctx *x, uint64_t token, sim_ns validity_ns) {
    struct engine *e = x->e;
    struct node *c = client_of(e, x->node);
    if (!c || c->state != CS_ACQUIRING) return;
    c->holding = 1;
    c->token = token;
    c->grant = ++e->next_grant;
    emit(e, TRACE_ACQUIRED, x->node, TRACE_NO_NODE, token, c->grant, validity_ns, c->attempts, NULL);
    reach_point(e, x->node, SCN_POINT_AFTER_ACQUIRE);
    program_next(e, x->node);
}

void lock_refused(struct lock_ctx *x) {
    struct engine *e = x->e;
    int node = x->node;
    struct node *c = client_of(e, node);
    if (!c || c->state != CS_ACQUIRING) return;
    const struct scn_step *st = cur_step(e, nd(e, node));
    emit(e, TRACE_ACQUIRE_DENIED, node, TRACE_NO_NODE, 0, 0, c->attempts, 0, NULL);
    sim_ns retry = st->retry_ns ? st->retry_ns : e->s.retry_ns;
    if ((st->tries && c->attempts >= st->tries) ||
        (st->timeout_ns && local_now(e, node, LOCK_CLOCK_MONO) - e->acquire_mono[node] + retry > st->timeout_ns)) {
        emit(e, TRACE_ACQUIRE_FAILED, node, TRACE_NO_NODE, 0, 0, c->attempts, 0, NULL);
        skip_critical_section(e, nd(e, node));
        c->state = CS_IDLE;
        client_continue_later(e, node);
        return;
    }
    if (st->jitter_ns) retry += rng_range(&e->rng, 0, st->jitter_ns);
    c->state = CS_RETRY_WAIT;
    timer_add(e, node, LOCK_CLOCK_MONO, retry, TIMER_PROGRAM, PT_RETRY, 0);
}

void lock_release_done(struct lock_ctx *x) {
    struct engine *e = x->e;
    struct node *c = client_of(e, x->node);
    if (!c || c->state != CS_RELEASING) return;
    reach_point(e, x->node, SCN_POINT_AFTER_RELEASE);
    program_next(e, x->node);
}

void lock_lost(struct lock_ctx *x) {
    struct node *c = client_of(x->e, x->node);
    if (c && c->holding) {
        c->lost = 1;
        cs_exit(x->e, x->node, TRACE_EXIT_LOST);
    }
}

void lock_note_grant(struct lock_ctx *x, int owner, uint64_t token, sim_ns ttl_ns,
                     sim_ns expires_local) {
    emit(x->e, TRACE_SRV_GRANT, x->node, owner, token, 0, ttl_ns, expires_local, NULL);
}
void lock_note_deny(struct lock_ctx *x, int requester, int owner) {
    emit(x->e, TRACE_SRV_DENY, x->node, requester, 0, 0, owner, 0, NULL);
}
void lock_note_renew(struct lock_ctx *x, int owner, sim_ns ttl_ns) {
    emit(x->e, TRACE_SRV_RENEW, x->node, owner, 0, 0, ttl_ns, 0, NULL);
}
void lock_note_expire(struct lock_ctx *x, int owner) {
    emit(x->e, TRACE_SRV_EXPIRE, x->node, owner, 0, 0, 0, 0, NULL);
}
void lock_note_delete(struct lock_ctx *x, int requester, int owner) {
    emit(x->e, TRACE_SRV_DELETE, x->node, requester, 0, 0, owner, owner != requester, NULL);
}
void lock_note_keep(struct lock_ctx *x, int requester, int owner) {
    emit(x->e, TRACE_SRV_KEEP, x->node, requester, 0, 0, owner, 0, NULL);
}
void lock_note(struct lock_ctx *x, const char *text, int64_t a, int64_t b) {
    emit(x->e, TRACE_SRV_NOTE, x->node, TRACE_NO_NODE, 0, 0, a, b, text);
}

/* ---- Build ------------------------------------------------------------------------------ */

static int fail(struct scn_error *err, const struct scenario *s, struct scn_pos pos,
                const char *msg) {
    snprintf(err->file, sizeof err->file, "%s", s->file);
    err->pos = pos;
    snprintf(err->msg, sizeof err->msg, "%s", msg);
    return -1;
}

static int configure(struct engine *e, const struct engine_opts *o, struct scn_error *err) {
    char msg[256];
    e->config = calloc(1, e->algo->config_size ? e->algo->config_size : 1);
    if (!e->config) return -2;
    if (e->algo->config_default) e->algo->config_default(e->config);
    for (int i = 0; i < e->s.nopts; i++) {
        const struct scn_opt *op = &e->s.opts[i];
        msg[0] = 0;
        if (!e->algo->option || e->algo->option(e->config, op->key, op->val, msg, sizeof msg) != 0) {
            if (o->lenient_options && strncmp(msg, "unknown option", 14) == 0) {
                size_t l = strlen(e->dropped);
                snprintf(e->dropped + l, sizeof e->dropped - l, "%s%s", l ? " " : "", op->key);
                continue;
            }
            if (!msg[0]) snprintf(msg, sizeof msg, "%s takes no options; found '%s'", e->algo->name, op->key);
            return fail(err, &e->s, op->pos, msg);
        }
    }
    return 0;
}

/* ---- Names, while building ----------------------------------------------------------- */

/* Node names to indices: an open-addressing table over the trace's node
 * names, used only while the engine is built (faults, links and clock lines
 * are resolved to indices once; nothing looks a name up during the run). */
struct name_index {
    const struct trace *tr;
    int32_t *slot;          /* node + 1, 0 = empty; cap is a power of two */
    size_t cap;
};

static uint32_t name_hash(const char *s) {
    uint32_t h = 2166136261u; /* FNV-1a 32 */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int names_build(struct name_index *ix, const struct trace *tr) {
    ix->tr = tr;
    ix->cap = 16;
    while (ix->cap < (size_t)tr->nnodes * 2) ix->cap *= 2;
    ix->slot = calloc(ix->cap, sizeof *ix->slot);
    if (!ix->slot) return -1;
    for (int i = 0; i < tr->nnodes; i++) {
        size_t j = name_hash(tr->nodes[i].name) & (ix->cap - 1);
        for (; ix->slot[j]; j = (j + 1) & (ix->cap - 1))
            if (strcmp(tr->nodes[ix->slot[j] - 1].name, tr->nodes[i].name) == 0) break;
        if (!ix->slot[j]) ix->slot[j] = i + 1; /* the first node of a name wins */
    }
    return 0;
}

/* Index of the node called name, -1 when none (and for "*"). */
static int names_find(const struct name_index *ix, const char *name) {
    for (size_t j = name_hash(name) & (ix->cap - 1); ix->slot[j]; j = (j + 1) & (ix->cap - 1))
        if (strcmp(ix->tr->nodes[ix->slot[j] - 1].name, name) == 0) return ix->slot[j] - 1;
    return -1;
}

static int check_node_name(struct engine *e, const struct name_index *ix, const char *name,
                           struct scn_pos pos, struct scn_error *err) {
    if (strcmp(name, "*") == 0 || names_find(ix, name) >= 0) return 0;
    char msg[256];
    snprintf(msg, sizeof msg, "no node named '%s' in this run (clients, S1..S%d, R)", name,
             e->nservers);
    return fail(err, &e->s, pos, msg);
}

/* Give node i its struct node_ext (clocks reading true time until told
 * otherwise), once. 0, or -1 on OOM. */
static int give_ext(struct engine *e, int i) {
    struct node *n = nd(e, i);
    if (n->ext) return 0;
    struct node_ext *x = realloc(e->ext, (size_t)(e->n_ext + 1) * sizeof *x);
    if (!x) return -1;
    e->ext = x;
    x = &e->ext[e->n_ext++];
    memset(x, 0, sizeof *x);
    clock_init(&x->clk[LOCK_CLOCK_MONO], 0, 0);
    clock_init(&x->clk[LOCK_CLOCK_WALL], 0, 0);
    n->ext = e->n_ext;
    return 0;
}

/* Check and resolve every node name the scenario uses, in the order lines
 * are reported: clock lines, links, then faults. */
static int resolve_names(struct engine *e, const struct name_index *ix, struct scn_error *err) {
    int rc;
    for (int i = 0; i < e->s.nclocks; i++) {
        const struct scn_clock_init *ci = &e->s.clocks[i];
        if ((rc = check_node_name(e, ix, ci->node, ci->pos, err)) != 0) return rc;
        int n = names_find(ix, ci->node);
        if (n < 0) continue; /* "*" names no one */
        if (give_ext(e, n) != 0) return -2;
        struct node_ext *x = ext_of(e, nd(e, n));
        x->base_ppm = ci->drift_ppm;
        clock_init(&x->clk[LOCK_CLOCK_MONO], 0, ci->drift_ppm);
        clock_init(&x->clk[LOCK_CLOCK_WALL], ci->wall_offset_ns, ci->drift_ppm);
    }
    for (int i = 0; i < e->s.nlinks; i++) {
        const struct scn_link *l = &e->s.links[i];
        if ((rc = check_node_name(e, ix, l->from, l->pos, err)) != 0) return rc;
        if ((rc = check_node_name(e, ix, l->to, l->pos, err)) != 0) return rc;
        if (set_link(e, names_find(ix, l->from), names_find(ix, l->to), l) != 0) return -2;
    }
    size_t members = 0;
    for (int i = 0; i < e->s.nfaults; i++)
        for (int g = 0; g < e->s.faults[i].ngroups; g++) members += (size_t)e->s.faults[i].group_len[g];
    e->fref = calloc((size_t)(e->s.nfaults ? e->s.nfaults : 1), sizeof *e->fref);
    e->group_nodes = calloc(members ? members : 1, sizeof *e->group_nodes);
    if (!e->fref || !e->group_nodes) return -2;
    members = 0;
    for (int i = 0; i < e->s.nfaults; i++) {
        const struct scn_fault *f = &e->s.faults[i];
        struct fault_ref *r = &e->fref[i];
        if (f->node[0] && (rc = check_node_name(e, ix, f->node, f->pos, err)) != 0) return rc;
        if (f->kind == SCN_FAULT_LINK &&
            ((rc = check_node_name(e, ix, f->link.from, f->pos, err)) != 0 ||
             (rc = check_node_name(e, ix, f->link.to, f->pos, err)) != 0))
            return rc;
        r->node = f->node[0] ? names_find(ix, f->node) : -1;
        r->from = f->kind == SCN_FAULT_LINK ? names_find(ix, f->link.from) : -1;
        r->to = f->kind == SCN_FAULT_LINK ? names_find(ix, f->link.to) : -1;
        r->groups = (int32_t)members;
        for (int g = 0; g < f->ngroups; g++)
            for (int k = 0; k < f->group_len[g]; k++) {
                if ((rc = check_node_name(e, ix, f->groups[g][k], f->pos, err)) != 0) return rc;
                e->group_nodes[members++] = names_find(ix, f->groups[g][k]);
            }
        r->trigger = -1;
        if (f->point != SCN_POINT_NONE) {
            int t = names_find(ix, f->trigger);
            if (t >= 0 && t < e->nclients) { /* only a client reaches points */
                r->trigger = t;
                nd(e, t)->point_faults = 1;
            }
        }
        if (r->node >= 0 && give_ext(e, r->node) != 0) return -2;
    }
    return 0;
}

/* ---- Build ------------------------------------------------------------------------------ */

int engine_new(struct engine **out, const struct scenario *s, const struct engine_opts *opts,
               struct scn_error *err) {
    static const struct engine_opts defaults = {0};
    const struct engine_opts *o = opts ? opts : &defaults;
    *out = NULL;
    struct engine *e = calloc(1, sizeof *e);
    if (!e) return -2;
    int rc = -2;
    /* The engine keeps the scenario but not its client list: what the run
     * needs of each client goes into its node below, and the trace keeps
     * the names. engine_scenario() shows nclients and clients == NULL. */
    struct scenario view = *s;
    view.clients = NULL;
    view.nclients = view.cap_clients = 0;
    if (scenario_copy(&e->s, &view) != 0) {
        free(e);
        return -2;
    }
    e->s.nclients = s->nclients;
    queue_init(&e->q);
    trace_init(&e->tr, o->keep_trace);
    if (o->hash_trace) trace_hash_on(&e->tr);
    snprintf(e->tr.title, sizeof e->tr.title, "%s", e->s.title);
    e->tr.seed = e->s.seed;
    rng_seed(&e->rng, e->s.seed);

    e->algo = o->algo ? o->algo : lock_algo_find(e->s.algo);
    if (!e->algo) {
        char msg[256];
        snprintf(msg, sizeof msg, "unknown lock algorithm '%s'; `locksim list` shows them", e->s.algo);
        rc = fail(err, &e->s, e->s.algo_pos, msg);
        goto out;
    }
    if (e->algo->abi != LOCK_ABI_VERSION) {
        char msg[256];
        snprintf(msg, sizeof msg, "algorithm '%s' was built for lock interface %u, this locksim has %u",
                 e->algo->name, e->algo->abi, LOCK_ABI_VERSION);
        rc = fail(err, &e->s, e->s.algo_pos, msg);
        goto out;
    }
    snprintf(e->tr.algo, sizeof e->tr.algo, "%s", e->algo->name);
    if ((rc = configure(e, o, err)) != 0) goto out;

    e->nclients = s->nclients;
    e->nservers = e->s.nservers ? e->s.nservers : (e->algo->default_servers ? e->algo->default_servers : 1);
    int maxs = e->algo->max_servers ? e->algo->max_servers : SCN_MAX_SERVERS;
    if (e->nservers > maxs) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s runs on at most %d lock server%s; the scenario asks for %d",
                 e->algo->name, maxs, maxs == 1 ? "" : "s", e->nservers);
        struct scn_pos p = e->s.algo_pos;
        rc = fail(err, &e->s, p, msg);
        goto out;
    }
    if (e->algo->validate) {
        char msg[256] = "";
        if (e->algo->validate(e->config, e->nservers, msg, sizeof msg) != 0) {
            rc = fail(err, &e->s, e->s.algo_pos, msg[0] ? msg : "the lock configuration is not valid");
            goto out;
        }
    }
    if (e->nclients == 0) {
        struct scn_pos p = {1, 1};
        rc = fail(err, &e->s, p, "the scenario has no clients; add a line such as `client A: acquire; write; release`");
        goto out;
    }
    rc = -2;
    e->nnodes = e->nclients + e->nservers + 1;
    e->resource = e->nnodes - 1;
    e->node_stride = sizeof(struct node) + (((e->algo->client_size ? e->algo->client_size : 1) + 15) & ~(size_t)15);
    if (posix_memalign((void **)&e->node_mem, 64, (size_t)e->nnodes * e->node_stride) != 0) {
        e->node_mem = NULL;
        goto out;
    }
    memset(e->node_mem, 0, (size_t)e->nnodes * e->node_stride);
    e->prefetch = (size_t)e->nnodes * e->node_stride > ((size_t)1 << 20); /* beyond a core's L2 share */
    e->other_state = calloc((size_t)(e->nservers + 1), sizeof *e->other_state);
    if (!e->node_mem || !e->other_state) goto out;
    int rw = 0, timeout = 0; /* does any program read or write; give up after a time? */
    for (int p = 0; p < e->s.nprograms; p++)
        for (int k = 0; k < e->s.programs[p].nsteps; k++) {
            const struct scn_step *st = &e->s.programs[p].steps[k];
            rw |= st->kind == SCN_STEP_READ || st->kind == SCN_STEP_WRITE;
            timeout |= st->kind == SCN_STEP_ACQUIRE && st->timeout_ns > 0;
        }
    if (rw && !(e->rw = calloc((size_t)e->nclients, sizeof *e->rw))) goto out;
    if (timeout && !(e->acquire_mono = calloc((size_t)e->nclients, sizeof *e->acquire_mono))) goto out;
    if (!(e->profiles = malloc(sizeof *e->profiles))) goto out;
    if (trace_reserve_nodes(&e->tr, e->nnodes) != 0) goto out;
    for (int i = 0; i < e->nnodes; i++) {
        struct node *n = nd(e, i);
        char name[SCN_NAME_MAX];
        if (i < e->nclients) {
            const struct scn_client *def = &s->clients[i];
            snprintf(name, sizeof name, "%s", def->name);
            n->kind = TRACE_NODE_CLIENT;
            n->program = (uint8_t)def->program;
            struct profile *pf = e->nprofiles ? &e->profiles[e->nprofiles - 1] : NULL;
            if (!pf || pf->think_ns != def->think_ns || pf->repeat != def->repeat) {
                if ((e->nprofiles & (e->nprofiles - 1)) == 0 && e->nprofiles) { /* grow at powers of two */
                    pf = realloc(e->profiles, (size_t)e->nprofiles * 2 * sizeof *pf);
                    if (!pf) goto out;
                    e->profiles = pf;
                }
                pf = &e->profiles[e->nprofiles++];
                pf->think_ns = def->think_ns;
                pf->repeat = def->repeat;
            }
            n->profile = (uint32_t)(e->nprofiles - 1);
        } else if (i < e->nclients + e->nservers) {
            snprintf(name, sizeof name, "S%d", i - e->nclients + 1);
            n->kind = TRACE_NODE_SERVER;
            e->other_state[i - e->nclients] = calloc(1, e->algo->server_size ? e->algo->server_size : 1);
        } else {
            snprintf(name, sizeof name, "R");
            n->kind = TRACE_NODE_RESOURCE;
            e->other_state[i - e->nclients] = calloc(1, e->algo->resource_size ? e->algo->resource_size : 1);
        }
        if (i >= e->nclients && !e->other_state[i - e->nclients]) goto out;
        if (trace_add_node(&e->tr, name, n->kind) < 0) goto out;
    }
    /* Names used by the scenario must exist now that servers are counted. */
    if (e->s.nclocks || e->s.nlinks || e->s.nfaults) {
        struct name_index ix;
        if (names_build(&ix, &e->tr) != 0) goto out;
        rc = resolve_names(e, &ix, err);
        free(ix.slot);
        if (rc != 0) goto out;
        rc = -2;
    }
    if (checker_init(&e->ck, &e->tr, e->s.purpose, e->s.stuck_after_ns) != 0) goto out;
    e->tr.observe = checker_observe;
    e->tr.advance = checker_advance;
    e->tr.observe_arg = &e->ck;
    e->tr.observe_kinds = CHECKER_KINDS;
    for (int k = 0; k < TRACE_KIND_COUNT; k++)
        if (trace_wants(&e->tr, k)) e->wants |= 1ull << k;
    int point_faults = 0;
    for (int i = 0; i < e->s.nfaults; i++) point_faults |= e->s.faults[i].point != SCN_POINT_NONE;
    if ((trace_wants(&e->tr, TRACE_POINT) || point_faults) &&
        !(e->points = calloc((size_t)e->nclients * SCN_POINT_COUNT, sizeof *e->points)))
        goto out;

    /* Time zero: the resource, the algorithm's nodes, scheduled faults, clients. */
    e->stock = e->s.stock;
    emit(e, TRACE_RUN_START, TRACE_NO_NODE, TRACE_NO_NODE, 0, 0, (int64_t)e->s.seed, e->s.duration_ns, NULL);
    /* b: 1 = the resource checks fencing tokens; 2 = the algorithm's rule decides. */
    emit(e, TRACE_RESOURCE_INIT, e->resource, TRACE_NO_NODE, 0, 0, e->stock,
         e->algo->resource_write ? 2 : e->s.fencing != 0, NULL);
    for (int i = 0; i < e->nnodes; i++) {
        struct lock_ctx x;
        ctx_init(&x, e, i);
        if (nd(e, i)->kind == TRACE_NODE_CLIENT && e->algo->client_init)
            e->algo->client_init(&x, state_of(e, i));
        else if (nd(e, i)->kind == TRACE_NODE_SERVER && e->algo->server_init)
            e->algo->server_init(&x, state_of(e, i));
    }
    push(e, e->s.duration_ns, EV_END, -1, 0);
    for (int i = 0; i < e->s.nfaults; i++)
        if (e->s.faults[i].point == SCN_POINT_NONE) push(e, e->s.faults[i].at_ns, EV_FAULT, -1, (uint64_t)i);
    for (int i = 0; i < e->nclients; i++) push(e, s->clients[i].start_ns, EV_START, i, 0);
    if (e->tr.oom) goto out;
    *out = e;
    return 0;
out:
    engine_free(e);
    return rc;
}

void engine_free(struct engine *e) {
    if (!e) return;
    if (e->other_state)
        for (int i = 0; i <= e->nservers; i++) free(e->other_state[i]);
    for (uint32_t i = 0; i < e->n_ext; i++) free(e->ext[i].deferred);
    free(e->other_state);
    free(e->node_mem);
    free(e->rw);
    free(e->profiles);
    free(e->acquire_mono);
    free(e->points);
    free(e->ext);
    free(e->fref);
    free(e->group_nodes);
    free(e->timers);
    free(e->slots);
    free(e->links);
    free(e->config);
    checker_close(&e->ck);
    queue_close(&e->q);
    trace_close(&e->tr);
    scenario_close(&e->s);
    free(e);
}

sim_ns engine_now(const struct engine *e) { return e->now; }
uint64_t engine_events(const struct engine *e) { return e->events; }
int engine_truncated(const struct engine *e) { return e->truncated; }
const struct trace *engine_trace(const struct engine *e) { return &e->tr; }
const struct checker_report *engine_report(const struct engine *e) { return &e->report; }
const struct scenario *engine_scenario(const struct engine *e) { return &e->s; }
const struct lock_algo *engine_algo(const struct engine *e) { return e->algo; }
const char *engine_dropped_options(const struct engine *e) { return e->dropped; }
