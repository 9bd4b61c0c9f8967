/* The engine's private header: the state every engine file shares (nodes,
 * timers, message slots, the engine struct), the algorithm callback wrappers,
 * and the entry points each model file offers to the files above it. */
#ifndef LOCKSIM_ENGINE_INT_H
#define LOCKSIM_ENGINE_INT_H

/* Layers, bottom up; a file calls only into layers below its own, so the
 * engine's call graph has no loop (STYLE.md, "Splitting a loop"):
 *   1. this header and engine_state.c: shared state, trace append, push
 *   2. engine_timer.c, engine_net.c: services (timers, message transport)
 *   3. engine_resource.c, engine_fault.c: models that call only services
 *   4. engine_program.c: the client program; it asks the fault model to
 *      apply a fault waiting at a point and completes the action returned
 *   5. engine_lock.c (lock.h services), engine_build.c (engine_new)
 *   6. engine.c: the loop and the one dispatch
 * Names shared between engine files carry the eng_ prefix.
 *
 * The engine's invariants (a handle names a pool slot, a node index is in
 * range, virtual time never runs backwards) are assert()s: on in every build
 * without -DNDEBUG (the default, test, sanitizer and -O0 builds). They check
 * what the engine itself made, never a scenario: user input is refused with
 * an error before the engine is built.
 *
 * Hot-path layout kept from the single-file engine, because it earns its
 * speed (make bench): the 48-byte struct node with a client's algorithm
 * state in the same cache line, the one-event lane for EV_CONT, emit()'s
 * precomputed `wants` test, and the small helpers every event runs (emit,
 * push, local_now, continue_later, the timer handle and slot pool helpers,
 * the callback wrappers) as static inline
 * functions here, so that splitting the engine into files adds no call to
 * them. They touch only this layer's state: a helper that calls into a model
 * file lives in the file above it that uses it (engine.c's timer_popped,
 * which may re-queue a timer through engine_timer.c). */

#include <assert.h>
#include <stddef.h>

#include "clock.h"
#include "engine.h"
#include "queue.h"
#include "rng.h"

/* ---- Events (struct sim_event.type) ---------------------------------- */

enum {
    EV_END,         /* the run's horizon */
    EV_FAULT,       /* arg = fault index; global */
    EV_RESUME,      /* node, arg = pause generation; global */
    EV_SLEW_END,    /* node, arg = slew generation; global */
    EV_START,       /* node: client program starts; node-level */
    EV_DELIVER,     /* node: lock-channel message arrives, arg = slot; node-level */
    EV_TIMER,       /* node: timer fires, arg = handle; node-level */
    EV_CONT,        /* node: client program continues, arg = epoch; node-level */
    EV_DELIVER_RES, /* node: resource-channel message arrives, arg = slot; node-level */
    EV_CONTROL      /* node: an operator action (enum lock_control in arg); node-level */
};

enum { PROC_RUNNING, PROC_PAUSED, PROC_CRASHED };

enum { CHAN_LOCK, CHAN_RES };
enum { RES_READ = 1, RES_READ_REPLY, RES_WRITE, RES_WRITE_REPLY };

/* Timers owned by the client program rather than the algorithm. */
enum { TIMER_ALGO, TIMER_PROGRAM };
enum { PT_WORK = 1, PT_RETRY, PT_THINK, PT_RESOURCE, PT_WRITE_RETRY };

/* Client program states. */
enum {
    CS_IDLE,
    CS_ACQUIRING, /* an attempt is in flight inside the algorithm */
    CS_RETRY_WAIT,
    CS_READING,
    CS_WRITING,
    CS_WORKING,
    CS_RELEASING,
    CS_THINKING,
    CS_WRITE_BACKOFF, /* a refused write waits to re-read and write again (write tries=N) */
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
    int32_t read_refused; /* the last read was refused (check=reads+writes): enum
                             trace_write's REJECTED_STALE or _NOTOKEN, 0 = not refused */
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
    uint8_t state;            /* CS_* */
    uint8_t pc;               /* current step */
    uint8_t holding;          /* believes it holds the lock */
    uint8_t has_read;         /* a read reply came since the last acquire or write */
    uint8_t write_after_read; /* the read was made implicitly by a write step */
    uint8_t lost;             /* the algorithm said the lock is lost (lock_lost): no more writes */
    uint8_t write_tries;      /* refused attempts of the current write step (write tries=N) */
    int32_t reps;             /* completed repetitions */
    int32_t attempts;         /* of the current acquire step */
    uint32_t grant;           /* ground-truth grant id while holding */
    uint64_t token;           /* fencing token to attach to writes */
};
_Static_assert(sizeof(struct node) == 48, "a node and 16 bytes of state are one cache line");
_Static_assert(SCN_MAX_PROGRAMS <= 256 && SCN_MAX_STEPS < 256, "program and pc fit a byte");

/* What a client was given besides its program, shared by the clients of one
 * `clients N` line (consecutive clients with equal values share one). */
struct profile {
    sim_ns think_ns;      /* pause between repetitions, by the client's clock */
    int32_t repeat;       /* times the program runs; 0 = until the run ends */
    int32_t ignores_loss; /* checks-loss=no: lock_lost is not told to the program */
};

/* Clocks and process faults of a node that a fault or a clock line names. */
struct node_ext {
    struct sim_clock clk[2]; /* [LOCK_CLOCK_MONO], [LOCK_CLOCK_WALL] */
    uint32_t pause_gen;
    uint32_t slew_gen;
    sim_ns paused_at;
    int64_t slew_ppm;           /* rate added by the current slew */
    int64_t base_ppm;           /* drift without slew */
    struct sim_event *deferred; /* events held while paused (owned) */
    size_t ndeferred, capdeferred;
};

/* A fault's node names, resolved when the engine is built (-1 = none). */
struct fault_ref {
    int32_t node;     /* f->node */
    int32_t trigger;  /* client whose point fires it */
    int32_t from, to; /* LINK: -1 also for "*" */
    int32_t groups;   /* PARTITION: index of its first node in engine->group_nodes */
};

/* A timer re-armed while an earlier arming of its slot is still queued
 * (cancel and re-arm: a Raft election timer reset by every heartbeat) is
 * not queued again when the queued entry comes no later than the new
 * deadline: that entry, the slot's "carrier", pops early and is queued
 * again at the new deadline with the seq the re-arming's own push would
 * have taken, exactly where that push would have put it, and nothing is
 * dispatched (engine.c's timer_popped). A queued entry is known by its handle's
 * generation: (slot, gen) is unique among queued entries.
 *
 * The carrier, by timer.carrier:
 *   TIMER_CARRIER_NONE  no queued entry acts for the slot;
 *   TIMER_CARRIER_OWN   the push of the slot's latest arming, on a node
 *                       without a clock model: its time is that arming's
 *                       deadline_local (clamped as timer_arm does), its
 *                       gen the arming's (gen, or gen - 1 once freed);
 *   TIMER_CARRIER_SIDE  engine->tside[slot] says (time, gen), and the
 *                       re-armed deadline and seq: after a lazy re-arm, and
 *                       for timers on nodes with a clock model.
 * So a timer that is not re-armed costs nothing beyond its 32 bytes. */
enum { TIMER_CARRIER_NONE, TIMER_CARRIER_OWN, TIMER_CARRIER_SIDE };

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
    uint8_t owner; /* TIMER_ALGO or TIMER_PROGRAM */
    uint8_t active;
    uint8_t carrier; /* TIMER_CARRIER_* */
};
_Static_assert(sizeof(struct timer) == 32, "timers are 32 bytes");

struct timer_side {
    sim_ns t;         /* the carrier's time */
    sim_ns due;       /* the re-armed firing (after a lazy re-arm): true time, */
    uint64_t due_seq; /* and queue seq */
    uint32_t gen;     /* the carrier's gen */
};

struct slot {
    union {
        struct lock_msg m;  /* while in flight */
        uint32_t next_free; /* while free: index + 1, 0 = none */
    } u;
    uint32_t id;       /* message id for the trace */
    uint32_t grant;    /* resource writes: the writer's grant (ground truth) */
    uint32_t to_epoch; /* the receiver's incarnation when it was sent */
};

struct lock_ctx {
    struct engine *e;
    int node;
};

struct link_state {
    int from, to; /* node index, -1 = any */
    struct scn_latency lat;
    uint32_t loss_ppm;
};

struct engine {
    struct scenario s; /* the scenario's copy, without its client list (see engine_new) */
    const struct lock_algo *algo;
    int fencing_stated; /* lock_fencing_stated: 1 on, 0 off, -1 not stated or the
                               algorithm was swapped in (engine_opts.algo) */
    void *config;       /* owned, algo->config_size bytes */
    struct queue q;
    struct rng rng;
    struct trace tr;
    uint64_t wants;       /* bit k: trace_wants(&tr, k), fixed once the checker observes */
    uint64_t wants_event; /* bit k: kind k is kept or observed, so the event is built;
                               a wanted kind without it is only hashed */
    struct checker ck;
    struct checker_report report;
    sim_ns now;
    uint64_t events;
    uint64_t states_reached; /* bit i: lock_state(i) was called in this run */
    int ended;
    int stop;                 /* enum engine_stop, once ended */
    uint64_t next_check;      /* events count at which check_limits looks next */
    sim_ns check_t;           /* the time check_limits last saw (-1 before any) */
    uint64_t instant_from;    /* events count when a look first saw check_t */
    uint64_t livelock_events; /* the livelock bound for this run (engine.h) */
    size_t kept_max;          /* trace events the kept trace may hold before the
                               run stops (ENGINE_TRACE_BUDGET_BYTES less
                               ENGINE_TRACE_HEADROOM); SIZE_MAX when not kept */
    /* One client continuation (EV_CONT) held outside the queue, with the
     * seq it would have had there: engine_step takes it when nothing queued
     * comes before it, so the order is the queue's own, minus a push and a pop. */
    struct sim_event lane;
    int lane_full;
    int prefetch; /* 1 = the nodes outgrow the caches: prefetch ahead */

    unsigned char *node_mem; /* owned: nnodes nodes of node_stride bytes (see struct node) */
    size_t node_stride;
    int nnodes, nclients, nservers, resource;
    void **other_state;       /* owned: algorithm states of servers, then the resource */
    struct client_rw *rw;     /* owned: nclients, or NULL when no program reads or writes */
    struct profile *profiles; /* owned, nprofiles */
    int nprofiles;
    sim_ns *acquire_mono; /* owned: per client, when its acquire step began by its
                               monotonic clock; NULL when no acquire step has a timeout */
    uint32_t *points;     /* owned: SCN_POINT_COUNT per client, times each point was
                               reached; NULL when neither the trace nor a fault needs them */
    struct node_ext *ext; /* owned, n_ext: the nodes faults and clock lines name */
    uint32_t n_ext;
    struct fault_ref *fref; /* owned, one per fault */
    int32_t *group_nodes;   /* owned: partition members, by fault_ref.groups */

    struct timer *timers;                    /* owned pool */
    uint32_t ntimers, captimers, free_timer; /* free_timer: index + 1, 0 = none */
    struct timer_side *tside;                /* owned, tside_cap: carriers of TIMER_CARRIER_SIDE, by slot;
                                 allocated by the first that needs one */
    uint32_t tside_cap;
    struct slot *slots; /* owned pool */
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
    /* What the lock service records (lock_note_grant/expire/delete), for
     * resource guard=owner: the holder of the latest grant until it expires
     * or is deleted, as node + 1 (0 = none), and that grant's token. */
    int svc_holder;
    uint64_t svc_token;

    char dropped[256];
};

/* ---- Small helpers ----------------------------------------------------- */

static inline struct node *nd(const struct engine *e, int i) {
    assert(i >= 0 && i < e->nnodes);
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

/* Build one trace event and append it: the half of emit() for kinds that
 * are kept or observed (engine_state.c, kept out of line so that emit's
 * fast path stays small at every call site). */
void eng_emit_append(struct engine *e, int kind, int node, int peer, uint64_t token, uint32_t grant, int64_t a,
                     int64_t b, const char *text);

/* A pool (timers, message slots) of *cap elements of size bytes, all in use,
 * grown to twice as many (64 at first). Returns the moved pool with *cap
 * updated, or NULL on OOM (the pool and *cap unchanged; the trace's oom flag
 * set, reported as an internal error). */
void *eng_pool_grow(struct engine *e, void *pool, uint32_t *cap, size_t size);

/* Trace an event. Most kinds in a run without a kept trace are read by no
 * one (the checker's are CHECKER_KINDS): those are only counted, inline,
 * or when the digest is on, folded into it without building the event. */
#if defined(__GNUC__)
__attribute__((always_inline)) /* at every call site: kind is a constant there */
#endif
static inline void
emit(struct engine *e, int kind, int node, int peer, uint64_t token, uint32_t grant, int64_t a, int64_t b,
     const char *text) {
    if (!((e->wants >> kind) & 1)) { /* = !trace_wants(&e->tr, kind), precomputed */
        trace_skip(&e->tr, e->now);
        return;
    }
    if ((e->wants_event >> kind) & 1) eng_emit_append(e, kind, node, peer, token, grant, a, b, text);
    else trace_append_hash_only(&e->tr, e->now, kind, node, peer, token, grant, a, b, text);
}

/* Queue an event; out of memory is recorded and reported as an internal error. */
static inline void push(struct engine *e, sim_ns t, uint32_t type, int node, uint64_t arg) {
    if (!e->q.wheel_on) { /* a small queue (the catalog's runs): one call, no bucket */
        if (queue_push_small(&e->q, t, type, node, arg) != 0) e->tr.oom = 1;
        return;
    }
    struct sim_event ev = {.t = t, .type = type, .node = node, .arg = arg};
    if (queue_push(&e->q, &ev) != 0) e->tr.oom = 1; /* reported as an internal error */
}

/* Node's own reading of one of its clocks (true time for a node no fault names). */
static inline sim_ns local_now(const struct engine *e, int node, int clock) {
    const struct node_ext *x = ext_of(e, nd(e, node));
    return x ? clock_read(&x->clk[clock], e->now) : e->now;
}

/* The client program of node goes on now, through an EV_CONT: held in the
 * engine's one-event lane when it is free (see struct engine), else queued. */
#if defined(__GNUC__)
__attribute__((always_inline)) /* with push()'s inline small-queue insertion GCC left it out of
                                  line in eng_program_refused: +0.5 % on the peer workload */
#endif
static inline void
continue_later(struct engine *e, int node) {
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

/* ---- Algorithm callbacks, one wrapper each ----------------------------- */
/* In the manner of Redis's connWrite(): every call of the lock_algo vtable
 * goes through one of these; optional callbacks carry their NULL check here. */

#define ENG_CTX(e, node) (&(struct lock_ctx){(e), (node)})

static inline void algo_client_init(struct engine *e, int node) {
    if (e->algo->client_init) e->algo->client_init(ENG_CTX(e, node), state_of(e, node));
}
static inline void algo_client_acquire(struct engine *e, int node) {
    e->algo->client_acquire(ENG_CTX(e, node), state_of(e, node));
}
static inline void algo_client_release(struct engine *e, int node) {
    e->algo->client_release(ENG_CTX(e, node), state_of(e, node));
}
static inline void algo_client_recv(struct engine *e, int node, const struct lock_msg *m) {
    if (e->algo->client_recv) e->algo->client_recv(ENG_CTX(e, node), state_of(e, node), m);
}
static inline void algo_client_timer(struct engine *e, int node, int timer, uint64_t arg) {
    if (e->algo->client_timer) e->algo->client_timer(ENG_CTX(e, node), state_of(e, node), timer, arg);
}
/* 1 when the write may leave the client (no check = it may). */
static inline int algo_client_write_ok(struct engine *e, int node) {
    return !e->algo->client_write_ok || e->algo->client_write_ok(ENG_CTX(e, node), state_of(e, node));
}
static inline void algo_server_init(struct engine *e, int node) {
    if (e->algo->server_init) e->algo->server_init(ENG_CTX(e, node), state_of(e, node));
}
static inline void algo_server_recv(struct engine *e, int node, const struct lock_msg *m) {
    if (e->algo->server_recv) e->algo->server_recv(ENG_CTX(e, node), state_of(e, node), m);
}
static inline void algo_server_timer(struct engine *e, int node, int timer, uint64_t arg) {
    if (e->algo->server_timer) e->algo->server_timer(ENG_CTX(e, node), state_of(e, node), timer, arg);
}
static inline void algo_server_restart(struct engine *e, int node) {
    if (e->algo->server_restart) e->algo->server_restart(ENG_CTX(e, node), state_of(e, node));
}
static inline void algo_server_control(struct engine *e, int node, enum lock_control c) {
    if (e->algo->server_control) e->algo->server_control(ENG_CTX(e, node), state_of(e, node), c);
}
/* The algorithm's answer to a write (enum trace_write), or -1 when it has no
 * rule of its own and the scenario's rule decides. */
static inline int algo_resource_write(struct engine *e, const struct lock_write *w) {
    if (!e->algo->resource_write) return -1;
    return e->algo->resource_write(ENG_CTX(e, e->resource), state_of(e, e->resource), w);
}
static inline void algo_config_default(struct engine *e) {
    if (e->algo->config_default) e->algo->config_default(e->config);
}
/* 0, or a negative LSIM_E code with a sentence in err; an algorithm without
 * the callback takes no options (LSIM_EUNKNOWN_OPTION, err left empty). */
static inline int algo_option(struct engine *e, const char *key, const char *val, char *err, size_t errlen) {
    if (!e->algo->option) return LSIM_EUNKNOWN_OPTION;
    return e->algo->option(e->config, key, val, err, errlen);
}
static inline int algo_validate(struct engine *e, char *err, size_t errlen) {
    return e->algo->validate ? e->algo->validate(e->config, e->nservers, err, errlen) : 0;
}

/* ---- engine_timer.c ----------------------------------------------------- */

/* Arm a timer on node's clock; returns its handle (> 0), or 0 on OOM. */
uint64_t eng_timer_add(struct engine *e, int node, int clock, sim_ns delay, int owner, int id, uint64_t arg);
/* The timer of handle h (when active and on node) cancelled and a timer
 * armed, as freeing it then adding a timer would, to the same slot,
 * handle, queue entries and free list, without the free list's round
 * trip; a stale or 0 handle only arms. */
uint64_t eng_timer_rearm(struct engine *e, uint64_t h, int node, int clock, sim_ns delay, int owner, int id,
                         uint64_t arg);
/* The carrier of timer idx popped before its re-armed deadline: queue it at (due, due_seq). */
void eng_timer_requeue(struct engine *e, uint32_t idx);
/* A handle: the pool index + 1 in the low half, the generation in the high. */
static inline uint64_t timer_handle(uint32_t idx, uint32_t gen) { return ((uint64_t)gen << 32) | (uint64_t)(idx + 1); }
/* The active timer a handle names, or NULL (cancelled, fired, rescheduled). */
static inline struct timer *eng_timer_from_handle(struct engine *e, uint64_t h) {
    uint32_t idx = (uint32_t)(h & 0xffffffffu);
    if (idx == 0 || idx > e->ntimers) return NULL;
    struct timer *t = &e->timers[idx - 1];
    if (!t->active || t->gen != (uint32_t)(h >> 32)) return NULL;
    return t;
}
static inline void eng_timer_free(struct engine *e, struct timer *t) {
    assert(t->active && t >= e->timers && t < e->timers + e->ntimers);
    t->active = 0;
    t->gen++; /* any queued firing is now stale */
    t->u.next_free = e->free_timer;
    e->free_timer = (uint32_t)(t - e->timers) + 1;
}
/* A node's clock changed: every pending timer on it fires at a new true time. */
void eng_timers_reschedule(struct engine *e, int node);
void eng_timers_drop_node(struct engine *e, int node);

/* ---- engine_net.c ------------------------------------------------------- */

/* Send *m (copied) from -> to on a channel; the network may drop or delay it. */
void eng_net_send(struct engine *e, int from, int to, int chan, const struct lock_msg *m, uint32_t grant);
static inline void eng_slot_free(struct engine *e, uint32_t idx) {
    assert(idx < e->nslots);
    e->slots[idx].u.next_free = e->free_slot;
    e->free_slot = idx + 1;
}
/* 1 when a partition separates nodes a and b. */
static inline int eng_cut_off(const struct engine *e, int a, int b) {
    return e->partitioned && nd(e, a)->group != nd(e, b)->group;
}
/* A link line from -> to (node indices, -1 = "*") from now on; 0, or -1 on OOM. */
int eng_set_link(struct engine *e, int from, int to, const struct scn_link *l);

/* ---- engine_resource.c -------------------------------------------------- */

/* A read or write message has reached the resource; it answers the client. */
void eng_resource_recv(struct engine *e, const struct slot *s);

/* ---- engine_fault.c ----------------------------------------------------- */

/* What a fault leaves for the client program to do (the fault model does
 * not call into the program; its caller hands this to eng_program_after_fault). */
enum fault_action {
    FAULT_ACT_NONE,
    FAULT_ACT_CLIENT_CRASHED,  /* the client left any critical section */
    FAULT_ACT_CLIENT_RESTARTED /* the client starts afresh */
};

/* Apply fault number fault now; the action is for node e->fref[fault].node. */
enum fault_action eng_fault_apply(struct engine *e, int fault);
/* An EV_RESUME or EV_SLEW_END of generation gen for node. */
void eng_fault_resume_due(struct engine *e, int node, uint32_t gen);
void eng_fault_slew_end(struct engine *e, int node, uint32_t gen);
/* A node-level event for a node that is not running: held while it is
 * paused, lost (a message is dropped) when it is down. */
void eng_fault_hold(struct engine *e, const struct sim_event *ev);

/* ---- engine_program.c --------------------------------------------------- */

void eng_program_step(struct engine *e, int node); /* EV_START: run the current step */
void eng_program_cont(struct engine *e, int node); /* EV_CONT */
void eng_program_timer(struct engine *e, int node, int id, uint64_t arg);
/* A reply from the resource reached client node. */
void eng_program_resource_reply(struct engine *e, int node, const struct slot *s);
/* Complete what a fault on client node left to do. */
void eng_program_after_fault(struct engine *e, int node, enum fault_action act);
/* The algorithm's outcomes for client node (lock.h's lock_granted ...). */
void eng_program_granted(struct engine *e, int node, uint64_t token, sim_ns validity_ns);
void eng_program_refused(struct engine *e, int node);
void eng_program_release_done(struct engine *e, int node);
void eng_program_lost(struct engine *e, int node);

#endif
