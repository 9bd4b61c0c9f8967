/* The engine: event loop, process model (pause, crash, restart), clocks,
 * network (latency, loss, partitions), client programs, the protected
 * resource, and the services that lock algorithms call (lock.h). */
#include "engine.h"

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
    EV_DELIVER,  /* node: message arrives, arg = slot; node-level */
    EV_TIMER,    /* node: timer fires, arg = handle; node-level */
    EV_CONT      /* node: client program continues, arg = epoch; node-level */
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

struct client {
    /* First cache line: what every acquire cycle reads or writes. */
    int state;
    int pc;              /* current step */
    int reps;            /* completed repetitions */
    int holding;         /* believes it holds the lock */
    int attempts;
    int program;
    sim_ns acquire_started_mono; /* for the acquire timeout, by its own clock */
    const struct scn_client *def;
    int repeat;          /* def->repeat, kept here: no miss into the scenario */
    uint32_t grant;      /* ground-truth grant id while holding */
    sim_ns think_ns;     /* def->think_ns */
    uint64_t token;      /* fencing token to attach to writes */
    /* Then the rest. */
    int has_read;
    int64_t read_value;
    int64_t read_version;
    uint64_t read_token;  /* highest token the resource reported in the last read */
    int write_after_read; /* the read was made implicitly by a write step */
    uint32_t req;        /* outstanding resource request id */
    uint64_t res_timer;  /* timeout of the outstanding resource request, 0 = none */
    int point_count[SCN_POINT_COUNT];
};

struct node {
    /* First cache line: what every node-level event reads. */
    int kind;               /* enum trace_node_kind */
    int proc;               /* PROC_* */
    uint32_t epoch;         /* bumped by crash and restart */
    int group;              /* partition group */
    void *algo_state;       /* clients: into engine->client_states; others owned */
    struct client *cl;      /* clients only, points into engine->clients */
    struct sim_clock clk[2]; /* [LOCK_CLOCK_MONO], [LOCK_CLOCK_WALL] */
    /* Then faults and names. */
    uint32_t pause_gen;
    uint32_t slew_gen;
    sim_ns paused_at;
    int64_t slew_ppm;       /* rate added by the current slew */
    int64_t base_ppm;       /* drift without slew */
    struct sim_event *deferred; /* events held while paused (owned) */
    size_t ndeferred, capdeferred;
    char name[SCN_NAME_MAX];
};

struct timer {
    int node;
    uint8_t clock;
    uint8_t owner;    /* TIMER_ALGO or TIMER_PROGRAM */
    uint8_t active;
    uint32_t gen;
    sim_ns deadline_local;
    int id;
    uint64_t arg;
    uint32_t next_free;
};

struct slot {
    struct lock_msg m;
    uint8_t chan;
    uint8_t used;
    uint32_t id;      /* message id for the trace */
    uint32_t grant;   /* resource writes: the writer's grant (ground truth) */
    uint32_t next_free;
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
    struct scenario s;
    const struct lock_algo *algo;
    void *config;           /* owned, algo->config_size bytes */
    struct queue q;
    struct rng rng;
    struct trace tr;
    struct checker ck;
    struct checker_report report;
    sim_ns now;
    uint64_t events;
    int ended;

    struct node *nodes;     /* owned: clients, then servers, then the resource */
    int nnodes, nclients, nservers, resource;
    struct client *clients; /* owned, nclients */
    unsigned char *client_states; /* owned: the clients' algorithm states, contiguous */
    size_t client_stride;   /* bytes per client state: client_size rounded up to 16 */

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

static void emit(struct engine *e, int kind, int node, int peer, uint64_t token,
                 uint32_t grant, int64_t a, int64_t b, const char *text) {
    if (!trace_wants(&e->tr, kind)) { /* neither kept nor read by the checker */
        trace_skip(&e->tr, e->now);
        return;
    }
    struct trace_event ev = {0};
    ev.t = e->now;
    ev.kind = (uint16_t)kind;
    ev.node = node;
    ev.peer = peer;
    ev.token = token;
    ev.grant = grant;
    ev.a = a;
    ev.b = b;
    ev.text = text;
    trace_append(&e->tr, &ev);
}

static void push(struct engine *e, sim_ns t, uint32_t type, int node, uint64_t arg) {
    struct sim_event ev = {.t = t, .type = type, .node = node, .arg = arg};
    if (queue_push(&e->q, &ev) != 0) e->tr.oom = 1; /* reported as an internal error */
}

static int find_node(const struct engine *e, const char *name) {
    for (int i = 0; i < e->nnodes; i++)
        if (strcmp(e->nodes[i].name, name) == 0) return i;
    return -1;
}

static sim_ns local_now(struct engine *e, int node, int clock) {
    return clock_read(&e->nodes[node].clk[clock], e->now);
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
    sim_ns at = clock_true_at(&e->nodes[t->node].clk[t->clock], e->now, t->deadline_local);
    if (at == SIM_NEVER || at > e->s.duration_ns) at = e->s.duration_ns + 1; /* never fires */
    push(e, at, EV_TIMER, t->node, timer_handle(idx, t->gen));
}

static uint64_t timer_add(struct engine *e, int node, int clock, sim_ns delay, int owner,
                          int id, uint64_t arg) {
    uint32_t idx;
    if (e->free_timer) {
        idx = e->free_timer - 1;
        e->free_timer = e->timers[idx].next_free;
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
    t->deadline_local = local_now(e, node, clock) + delay;
    t->id = id;
    t->arg = arg;
    timer_schedule(e, idx);
    return timer_handle(idx, t->gen);
}

static void timer_free(struct engine *e, struct timer *t) {
    t->active = 0;
    t->gen++; /* any queued firing is now stale */
    t->next_free = e->free_timer;
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
        e->free_slot = e->slots[idx].next_free;
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
    memset(&e->slots[idx], 0, sizeof e->slots[idx]);
    e->slots[idx].used = 1;
    return &e->slots[idx];
}

static void slot_free(struct engine *e, uint32_t idx) {
    e->slots[idx].used = 0;
    e->slots[idx].next_free = e->free_slot;
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
    return e->partitioned && e->nodes[a].group != e->nodes[b].group;
}

static void net_send(struct engine *e, int from, int to, int chan, const struct lock_msg *m,
                     uint32_t grant) {
    uint32_t id = ++e->next_msg_id;
    emit(e, TRACE_MSG_SEND, from, to, 0, 0, id, m->type, NULL);
    struct scn_latency lat = e->s.latency;
    uint32_t loss = e->s.loss_ppm;
    const struct link_state *l = link_for(e, from, to);
    if (l) {
        lat = l->lat;
        loss = l->loss_ppm;
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
    s->m = *m;
    s->m.from = from;
    s->m.to = to;
    s->chan = (uint8_t)chan;
    s->id = id;
    s->grant = grant;
    push(e, e->now + delay, EV_DELIVER, to, idx);
}

/* ---- Client program ------------------------------------------------------------- */

static void client_continue_later(struct engine *e, int node) {
    push(e, e->now, EV_CONT, node, e->nodes[node].epoch);
}

static void apply_fault(struct engine *e, const struct scn_fault *f);

/* The client reached a named point: trace it and fire faults attached to it.
 * The program goes on through an EV_CONT event, so a pause applied here takes
 * effect before the client's next action. */
static void reach_point(struct engine *e, int node, enum scn_point p) {
    struct client *c = e->nodes[node].cl;
    int n = ++c->point_count[p];
    emit(e, TRACE_POINT, node, TRACE_NO_NODE, 0, 0, p, n, scn_point_name(p));
    for (int i = 0; i < e->s.nfaults; i++) {
        const struct scn_fault *f = &e->s.faults[i];
        if (f->point == p && f->occurrence == n && strcmp(f->trigger, e->nodes[node].name) == 0)
            apply_fault(e, f);
    }
}

static const struct scn_step *cur_step(struct engine *e, struct client *c) {
    const struct scn_program *p = &e->s.programs[c->program];
    return c->pc < p->nsteps ? &p->steps[c->pc] : NULL;
}

static void cs_exit(struct engine *e, int node, int reason) {
    struct client *c = e->nodes[node].cl;
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
    struct client *c = e->nodes[node].cl;
    c->attempts++;
    c->state = CS_ACQUIRING;
    emit(e, TRACE_ACQUIRE_TRY, node, TRACE_NO_NODE, 0, 0, c->attempts, 0, NULL);
    struct lock_ctx x;
    ctx_init(&x, e, node);
    uint32_t epoch = e->nodes[node].epoch;
    e->algo->client_acquire(&x, e->nodes[node].algo_state);
    if (e->nodes[node].epoch == epoch && c->state == CS_ACQUIRING)
        reach_point(e, node, SCN_POINT_DURING_ACQUIRE);
}

/* Skip to the step after the next release: the critical section is not entered. */
static void skip_critical_section(struct engine *e, struct client *c) {
    const struct scn_program *p = &e->s.programs[c->program];
    int i = c->pc + 1;
    while (i < p->nsteps && p->steps[i].kind != SCN_STEP_RELEASE) i++;
    c->pc = i < p->nsteps ? i + 1 : p->nsteps;
}

static void send_resource(struct engine *e, int node, int type, int64_t value) {
    struct client *c = e->nodes[node].cl;
    struct lock_msg m = {0};
    m.type = type;
    m.req = ++c->req;
    m.a = value;
    m.token = c->token;
    m.b = c->read_version;
    net_send(e, node, e->resource, CHAN_RES, &m, c->grant);
    if (e->s.resource_timeout_ns > 0)
        c->res_timer = timer_add(e, node, LOCK_CLOCK_MONO, e->s.resource_timeout_ns, TIMER_PROGRAM,
                                 PT_RESOURCE, m.req);
}

static void program_step(struct engine *e, int node);

static void program_next(struct engine *e, int node) {
    struct client *c = e->nodes[node].cl;
    c->pc++;
    c->state = CS_IDLE;
    client_continue_later(e, node);
}

/* Run the current step of a client's program. */
static void program_step(struct engine *e, int node) {
    struct client *c = e->nodes[node].cl;
    const struct scn_step *st = cur_step(e, c);
    if (!st) { /* end of one repetition */
        cs_exit(e, node, TRACE_EXIT_END);
        c->reps++;
        if (c->repeat == 0 || c->reps < c->repeat) {
            c->pc = 0;
            if (c->think_ns == 0) { /* no think time: the next repetition starts now, without a timer */
                c->state = CS_IDLE;
                client_continue_later(e, node);
            } else {
                c->state = CS_THINKING;
                timer_add(e, node, LOCK_CLOCK_MONO, c->think_ns, TIMER_PROGRAM, PT_THINK, 0);
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
        c->acquire_started_mono = local_now(e, node, LOCK_CLOCK_MONO);
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
    struct client *c = e->nodes[node].cl;
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
        if (c->read_value <= 0) { /* sold out: nothing to reserve */
            emit(e, TRACE_WRITE_SKIPPED, node, TRACE_NO_NODE, c->token, c->grant, TRACE_SKIP_SOLD_OUT, 0, NULL);
            c->has_read = 0;
            program_next(e, node);
        } else if (e->algo->client_write_ok && !e->algo->client_write_ok(&x, e->nodes[node].algo_state)) {
            emit(e, TRACE_WRITE_SKIPPED, node, TRACE_NO_NODE, c->token, c->grant, TRACE_SKIP_CLIENT_CHECK, 0, NULL);
            c->has_read = 0;
            program_next(e, node);
        } else {
            send_resource(e, node, RES_WRITE, c->read_value - 1);
        }
        break;
    }
    case CS_RELEASING: {
        cs_exit(e, node, TRACE_EXIT_RELEASE);
        emit(e, TRACE_RELEASE_SENT, node, TRACE_NO_NODE, 0, 0, 0, 0, NULL);
        struct lock_ctx x;
        ctx_init(&x, e, node);
        e->algo->client_release(&x, e->nodes[node].algo_state);
        break;
    }
    default:
        break; /* waiting for a reply or a timer */
    }
}

static void program_timer(struct engine *e, int node, int id, uint64_t arg) {
    struct client *c = e->nodes[node].cl;
    switch (id) {
    case PT_RESOURCE:
        /* No answer from the resource in time: the client stops waiting and
         * goes on to its next step (a write that read implicitly is dropped
         * with its read); a write's fate stays unknown to it. */
        c->res_timer = 0;
        if (arg != c->req || (c->state != CS_READING && c->state != CS_WRITING)) break;
        emit(e, TRACE_SRV_NOTE, node, e->resource, 0, 0, (int64_t)arg, c->state == CS_WRITING,
             c->state == CS_WRITING ? "resource write timed out: outcome unknown"
                                    : "resource read timed out");
        c->req++; /* a late reply now answers nothing */
        c->has_read = 0;
        program_next(e, node);
        break;
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

static void program_restart(struct engine *e, int node) {
    struct client *c = e->nodes[node].cl;
    const struct scn_client *def = c->def;
    int program = c->program;
    memset(c, 0, sizeof *c);
    c->def = def;
    c->program = program;
    c->repeat = def->repeat;
    c->think_ns = def->think_ns;
    c->state = CS_IDLE;
}

static void resource_reply(struct engine *e, int node, const struct slot *s) {
    struct client *c = e->nodes[node].cl;
    if (s->m.req != c->req) return; /* an answer to an earlier incarnation, or too late */
    if (c->res_timer) {
        struct timer *t = timer_from_handle(e, c->res_timer);
        if (t) timer_free(e, t);
        c->res_timer = 0;
    }
    if (s->m.type == RES_READ_REPLY && c->state == CS_READING) {
        c->has_read = 1;
        c->read_value = s->m.a;
        c->read_version = s->m.b;
        c->read_token = s->m.token;
        if (c->write_after_read) {
            reach_point(e, node, SCN_POINT_BEFORE_WRITE);
            c->state = CS_WRITING;
            client_continue_later(e, node);
        } else {
            reach_point(e, node, SCN_POINT_BETWEEN_READ_AND_WRITE);
            program_next(e, node);
        }
    } else if (s->m.type == RES_WRITE_REPLY && c->state == CS_WRITING) {
        c->has_read = 0;
        reach_point(e, node, SCN_POINT_AFTER_WRITE);
        program_next(e, node);
    }
}

/* ---- The protected resource ------------------------------------------------------------- */

static void resource_recv(struct engine *e, const struct slot *s) {
    int client = s->m.from;
    struct lock_msg r = {0};
    r.req = s->m.req;
    if (s->m.type == RES_READ) {
        emit(e, TRACE_READ, e->resource, client, 0, s->grant, e->stock, e->version, NULL);
        r.type = RES_READ_REPLY;
        r.a = e->stock;
        r.b = e->version;
        r.token = e->max_token; /* the highest token it has accepted */
    } else if (s->m.type == RES_WRITE) {
        int result = TRACE_WRITE_ACCEPTED;
        if (e->algo->resource_write) {
            struct lock_write w = {.client = client, .token = s->m.token, .value = s->m.a,
                                   .read_version = s->m.b, .version = e->version, .stock = e->stock};
            struct lock_ctx x;
            ctx_init(&x, e, e->resource);
            result = e->algo->resource_write(&x, e->nodes[e->resource].algo_state, &w);
        } else if (e->s.fencing) {
            if (s->m.token == 0) result = TRACE_WRITE_REJECTED_NOTOKEN;
            else if (s->m.token < e->max_token) result = TRACE_WRITE_REJECTED_STALE;
        }
        if (result == TRACE_WRITE_ACCEPTED) {
            e->stock = s->m.a;
            e->version++;
            if (s->m.token > e->max_token) e->max_token = s->m.token;
        }
        emit(e, TRACE_WRITE, e->resource, client, s->m.token, s->grant, s->m.a, result, NULL);
        r.type = RES_WRITE_REPLY;
        r.a = result;
    } else {
        return;
    }
    net_send(e, e->resource, client, CHAN_RES, &r, 0);
}

/* ---- Process and clock faults -------------------------------------------------------- */

static void node_crash(struct engine *e, int node) {
    struct node *n = &e->nodes[node];
    if (n->proc == PROC_CRASHED) return;
    n->proc = PROC_CRASHED;
    n->epoch++;
    n->ndeferred = 0;
    timers_drop_node(e, node);
    emit(e, TRACE_CRASH, node, TRACE_NO_NODE, 0, 0, 0, 0, NULL);
    if (n->cl) cs_exit(e, node, TRACE_EXIT_CRASH);
}

static void node_restart(struct engine *e, int node) {
    struct node *n = &e->nodes[node];
    if (n->proc != PROC_CRASHED) return;
    n->proc = PROC_RUNNING;
    n->epoch++;
    emit(e, TRACE_RESTART, node, TRACE_NO_NODE, 0, 0, 0, 0, NULL);
    struct lock_ctx x;
    ctx_init(&x, e, node);
    if (n->kind == TRACE_NODE_CLIENT) {
        memset(n->algo_state, 0, e->algo->client_size);
        if (e->algo->client_init) e->algo->client_init(&x, n->algo_state);
        program_restart(e, node);
        client_continue_later(e, node);
    } else if (n->kind == TRACE_NODE_SERVER) {
        if (e->algo->server_restart) e->algo->server_restart(&x, n->algo_state);
    }
}

static void node_resume(struct engine *e, int node) {
    struct node *n = &e->nodes[node];
    if (n->proc != PROC_PAUSED) return;
    n->proc = PROC_RUNNING;
    n->pause_gen++;
    emit(e, TRACE_RESUME, node, TRACE_NO_NODE, 0, 0, e->now - n->paused_at, 0, NULL);
    /* What arrived or fell due while paused now runs, in the order it came. */
    for (size_t i = 0; i < n->ndeferred; i++) {
        struct sim_event ev = n->deferred[i];
        ev.t = e->now;
        if (queue_push(&e->q, &ev) != 0) e->tr.oom = 1;
    }
    n->ndeferred = 0;
}

static void node_pause(struct engine *e, int node, sim_ns dur) {
    struct node *n = &e->nodes[node];
    if (n->proc == PROC_CRASHED) return;
    if (n->proc != PROC_PAUSED) {
        n->proc = PROC_PAUSED;
        n->paused_at = e->now;
        n->pause_gen++;
    }
    emit(e, TRACE_PAUSE, node, TRACE_NO_NODE, 0, 0, dur, 0, NULL);
    if (dur > 0) push(e, e->now + dur, EV_RESUME, node, n->pause_gen);
}

static void clock_changed(struct engine *e, int node) { timers_reschedule(e, node); }

static void node_set_rate(struct engine *e, int node) {
    struct node *n = &e->nodes[node];
    int64_t ppm = n->base_ppm + n->slew_ppm;
    if (ppm > CLOCK_PPM_MAX) ppm = CLOCK_PPM_MAX;
    if (ppm < -CLOCK_PPM_MAX) ppm = -CLOCK_PPM_MAX;
    clock_set_ppm(&n->clk[LOCK_CLOCK_WALL], e->now, ppm);
    clock_set_ppm(&n->clk[LOCK_CLOCK_MONO], e->now, n->base_ppm);
    clock_changed(e, node);
}

static void apply_partition(struct engine *e, const struct scn_fault *f) {
    for (int i = 0; i < e->nnodes; i++) e->nodes[i].group = f->ngroups; /* the implicit group */
    for (int g = 0; g < f->ngroups; g++)
        for (int k = 0; k < f->group_len[g]; k++) {
            int n = find_node(e, f->groups[g][k]);
            if (n >= 0) e->nodes[n].group = g;
        }
    e->partitioned = 1;
}

static int set_link(struct engine *e, const struct scn_link *l);

static void apply_fault(struct engine *e, const struct scn_fault *f) {
    int node = f->node[0] ? find_node(e, f->node) : -1;
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
    case SCN_FAULT_CLOCK_STEP:
        if (f->which & SCN_CLOCK_WALL) clock_step(&e->nodes[node].clk[LOCK_CLOCK_WALL], e->now, f->delta_ns);
        if (f->which & SCN_CLOCK_MONO) clock_step(&e->nodes[node].clk[LOCK_CLOCK_MONO], e->now, f->delta_ns);
        emit(e, TRACE_CLOCK_STEP, node, TRACE_NO_NODE, 0, 0, f->delta_ns, f->which, NULL);
        clock_changed(e, node);
        break;
    case SCN_FAULT_CLOCK_DRIFT:
        e->nodes[node].base_ppm = f->ppm;
        emit(e, TRACE_CLOCK_DRIFT, node, TRACE_NO_NODE, 0, 0, f->ppm, 0, NULL);
        node_set_rate(e, node);
        break;
    case SCN_FAULT_CLOCK_SLEW: {
        struct node *n = &e->nodes[node];
        /* Spread delta over dur: the wall clock runs faster or slower by
         * delta/dur, as adjtime() or chrony's slewing does. */
        n->slew_ppm = f->dur_ns > 0 ? (f->delta_ns / f->dur_ns) * 1000000 +
                                          ((f->delta_ns % f->dur_ns) * 1000000) / f->dur_ns
                                    : 0;
        n->slew_gen++;
        emit(e, TRACE_CLOCK_SLEW, node, TRACE_NO_NODE, 0, 0, f->delta_ns, f->dur_ns, NULL);
        node_set_rate(e, node);
        push(e, e->now + f->dur_ns, EV_SLEW_END, node, n->slew_gen);
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
        apply_partition(e, f);
        emit(e, TRACE_PARTITION, TRACE_NO_NODE, TRACE_NO_NODE, 0, 0, f->ngroups, 0,
             trace_intern(&e->tr, text, len));
        break;
    }
    case SCN_FAULT_HEAL:
        e->partitioned = 0;
        emit(e, TRACE_HEAL, TRACE_NO_NODE, TRACE_NO_NODE, 0, 0, 0, 0, NULL);
        break;
    case SCN_FAULT_PROMOTE: {
        struct lock_ctx x;
        ctx_init(&x, e, node);
        emit(e, TRACE_CONTROL, node, TRACE_NO_NODE, 0, 0, LOCK_CONTROL_PROMOTE, 0, "promote");
        if (e->nodes[node].proc != PROC_CRASHED && e->algo->server_control)
            e->algo->server_control(&x, e->nodes[node].algo_state, LOCK_CONTROL_PROMOTE);
        break;
    }
    case SCN_FAULT_LINK:
        if (set_link(e, &f->link) == 0) {
            const struct link_state *l = &e->links[e->nlinks - 1];
            emit(e, TRACE_LINK, l->from, l->to, 0, 0, l->lat.min_ns, l->lat.max_ns, NULL);
        }
        break;
    default:
        break;
    }
}

static int set_link(struct engine *e, const struct scn_link *l) {
    int from = strcmp(l->from, "*") == 0 ? -1 : find_node(e, l->from);
    int to = strcmp(l->to, "*") == 0 ? -1 : find_node(e, l->to);
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

static void deliver(struct engine *e, int node, uint32_t idx) {
    struct slot s = e->slots[idx];
    slot_free(e, idx);
    if (cut_off(e, s.m.from, node)) {
        emit(e, TRACE_MSG_DROP, node, s.m.from, 0, 0, s.id, TRACE_DROP_PARTITION, NULL);
        return;
    }
    emit(e, TRACE_MSG_RECV, node, s.m.from, 0, 0, s.id, s.m.type, NULL);
    struct node *n = &e->nodes[node];
    if (s.chan == CHAN_RES) {
        if (node == e->resource) resource_recv(e, &s);
        else if (n->cl) resource_reply(e, node, &s);
        return;
    }
    struct lock_ctx x;
    ctx_init(&x, e, node);
    if (n->kind == TRACE_NODE_CLIENT) {
        if (e->algo->client_recv) e->algo->client_recv(&x, n->algo_state, &s.m);
    } else if (n->kind == TRACE_NODE_SERVER) {
        if (e->algo->server_recv) e->algo->server_recv(&x, n->algo_state, &s.m);
    }
}

static void fire_timer(struct engine *e, int node, uint64_t h) {
    struct timer *t = timer_from_handle(e, h);
    if (!t) return; /* cancelled or rescheduled */
    int owner = t->owner, id = t->id;
    uint64_t arg = t->arg;
    timer_free(e, t);
    struct node *n = &e->nodes[node];
    if (owner == TIMER_PROGRAM) {
        program_timer(e, node, id, arg);
        return;
    }
    struct lock_ctx x;
    ctx_init(&x, e, node);
    if (n->kind == TRACE_NODE_CLIENT) {
        if (e->algo->client_timer) e->algo->client_timer(&x, n->algo_state, id, arg);
    } else if (n->kind == TRACE_NODE_SERVER) {
        if (e->algo->server_timer) e->algo->server_timer(&x, n->algo_state, id, arg);
    }
}

static int defer(struct engine *e, struct node *n, const struct sim_event *ev) {
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
        apply_fault(e, &e->s.faults[ev->arg]);
        return;
    case EV_RESUME:
        if (e->nodes[ev->node].pause_gen == (uint32_t)ev->arg) node_resume(e, ev->node);
        return;
    case EV_SLEW_END: {
        struct node *n = &e->nodes[ev->node];
        if (n->slew_gen == (uint32_t)ev->arg) {
            n->slew_ppm = 0;
            node_set_rate(e, ev->node);
        }
        return;
    }
    default:
        break;
    }
    /* Node-level events: lost on a crashed node, held while it is paused. */
    struct node *n = &e->nodes[ev->node];
    if (n->proc == PROC_CRASHED) {
        if (ev->type == EV_DELIVER) {
            struct slot *s = &e->slots[ev->arg];
            emit(e, TRACE_MSG_DROP, ev->node, s->m.from, 0, 0, s->id, TRACE_DROP_CRASHED, NULL);
            slot_free(e, (uint32_t)ev->arg);
        }
        return;
    }
    if (n->proc == PROC_PAUSED) {
        defer(e, n, ev);
        return;
    }
    switch (ev->type) {
    case EV_START:
        program_step(e, ev->node);
        break;
    case EV_DELIVER:
        deliver(e, ev->node, (uint32_t)ev->arg);
        break;
    case EV_TIMER:
        fire_timer(e, ev->node, ev->arg);
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
 * node an event a few pops ahead is for, while this one is dispatched. */
static void prefetch_ahead(struct engine *e) {
#if defined(__GNUC__)
    const struct sim_event *ahead = queue_ahead(&e->q, 4);
    if (!ahead || ahead->node < 0 || ahead->node >= e->nnodes) return;
    int nd = ahead->node;
    __builtin_prefetch(&e->nodes[nd]);
    if (nd < e->nclients) {
        __builtin_prefetch(&e->clients[nd]);
        __builtin_prefetch(e->client_states + (size_t)nd * e->client_stride);
        __builtin_prefetch(&e->ck.cl[nd]);
    }
    if (ahead->type == EV_DELIVER && ahead->arg < e->nslots) __builtin_prefetch(&e->slots[ahead->arg]);
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
    if (e->events >= e->s.max_events || queue_pop(&e->q, &ev) != 0) {
        finish(e);
        return 0;
    }
    e->now = ev.t;
    prefetch_ahead(e);
    if (ev.type == EV_END) {
        finish(e);
        return 0;
    }
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
uint64_t lock_read_token(struct lock_ctx *x) {
    const struct client *c = x->e->nodes[x->node].cl;
    return c && c->has_read ? c->read_token : 0;
}

void lock_granted(struct lock_ctx *x, uint64_t token, sim_ns validity_ns) {
    struct engine *e = x->e;
    struct client *c = e->nodes[x->node].cl;
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
    struct client *c = e->nodes[node].cl;
    if (!c || c->state != CS_ACQUIRING) return;
    const struct scn_step *st = cur_step(e, c);
    emit(e, TRACE_ACQUIRE_DENIED, node, TRACE_NO_NODE, 0, 0, c->attempts, 0, NULL);
    sim_ns waited = local_now(e, node, LOCK_CLOCK_MONO) - c->acquire_started_mono;
    sim_ns retry = st->retry_ns ? st->retry_ns : e->s.retry_ns;
    if ((st->tries && c->attempts >= st->tries) ||
        (st->timeout_ns && waited + retry > st->timeout_ns)) {
        emit(e, TRACE_ACQUIRE_FAILED, node, TRACE_NO_NODE, 0, 0, c->attempts, 0, NULL);
        skip_critical_section(e, c);
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
    struct client *c = e->nodes[x->node].cl;
    if (!c || c->state != CS_RELEASING) return;
    reach_point(e, x->node, SCN_POINT_AFTER_RELEASE);
    program_next(e, x->node);
}

void lock_lost(struct lock_ctx *x) {
    struct client *c = x->e->nodes[x->node].cl;
    if (c && c->holding) cs_exit(x->e, x->node, TRACE_EXIT_LOST);
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

static int check_node_name(struct engine *e, const char *name, struct scn_pos pos,
                           struct scn_error *err) {
    if (strcmp(name, "*") == 0 || find_node(e, name) >= 0) return 0;
    char msg[256];
    snprintf(msg, sizeof msg, "no node named '%s' in this run (clients, S1..S%d, R)", name,
             e->nservers);
    return fail(err, &e->s, pos, msg);
}

int engine_new(struct engine **out, const struct scenario *s, const struct engine_opts *opts,
               struct scn_error *err) {
    static const struct engine_opts defaults = {0};
    const struct engine_opts *o = opts ? opts : &defaults;
    *out = NULL;
    struct engine *e = calloc(1, sizeof *e);
    if (!e) return -2;
    int rc = -2;
    if (scenario_copy(&e->s, s) != 0) {
        free(e);
        return -2;
    }
    queue_init(&e->q);
    trace_init(&e->tr, o->keep_trace);
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

    e->nclients = e->s.nclients;
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
    e->nnodes = e->nclients + e->nservers + 1;
    e->resource = e->nnodes - 1;
    e->nodes = calloc((size_t)e->nnodes, sizeof *e->nodes);
    e->clients = calloc((size_t)e->nclients, sizeof *e->clients);
    e->client_stride = ((e->algo->client_size ? e->algo->client_size : 1) + 15) & ~(size_t)15;
    e->client_states = calloc((size_t)e->nclients, e->client_stride);
    if (!e->nodes || !e->clients || !e->client_states) goto out;
    rc = -2;
    for (int i = 0; i < e->nnodes; i++) {
        struct node *n = &e->nodes[i];
        if (i < e->nclients) {
            snprintf(n->name, sizeof n->name, "%s", e->s.clients[i].name);
            n->kind = TRACE_NODE_CLIENT;
            n->cl = &e->clients[i];
            n->cl->def = &e->s.clients[i];
            n->cl->program = e->s.clients[i].program;
            n->cl->repeat = e->s.clients[i].repeat;
            n->cl->think_ns = e->s.clients[i].think_ns;
            n->algo_state = e->client_states + (size_t)i * e->client_stride;
        } else if (i < e->nclients + e->nservers) {
            snprintf(n->name, sizeof n->name, "S%d", i - e->nclients + 1);
            n->kind = TRACE_NODE_SERVER;
            n->algo_state = calloc(1, e->algo->server_size ? e->algo->server_size : 1);
        } else {
            snprintf(n->name, sizeof n->name, "R");
            n->kind = TRACE_NODE_RESOURCE;
            n->algo_state = calloc(1, e->algo->resource_size ? e->algo->resource_size : 1);
        }
        if (!n->algo_state) goto out;
        clock_init(&n->clk[LOCK_CLOCK_MONO], 0, 0);
        clock_init(&n->clk[LOCK_CLOCK_WALL], 0, 0);
        if (trace_add_node(&e->tr, n->name, n->kind) < 0) goto out;
    }
    /* Names used by the scenario must exist now that servers are counted. */
    for (int i = 0; i < e->s.nclocks; i++) {
        const struct scn_clock_init *ci = &e->s.clocks[i];
        if ((rc = check_node_name(e, ci->node, ci->pos, err)) != 0) goto out;
        int n = find_node(e, ci->node);
        e->nodes[n].base_ppm = ci->drift_ppm;
        clock_init(&e->nodes[n].clk[LOCK_CLOCK_MONO], 0, ci->drift_ppm);
        clock_init(&e->nodes[n].clk[LOCK_CLOCK_WALL], ci->wall_offset_ns, ci->drift_ppm);
    }
    for (int i = 0; i < e->s.nlinks; i++) {
        if ((rc = check_node_name(e, e->s.links[i].from, e->s.links[i].pos, err)) != 0) goto out;
        if ((rc = check_node_name(e, e->s.links[i].to, e->s.links[i].pos, err)) != 0) goto out;
        rc = -2;
        if (set_link(e, &e->s.links[i]) != 0) goto out;
    }
    for (int i = 0; i < e->s.nfaults; i++) {
        const struct scn_fault *f = &e->s.faults[i];
        if (f->node[0] && (rc = check_node_name(e, f->node, f->pos, err)) != 0) goto out;
        if (f->kind == SCN_FAULT_LINK &&
            ((rc = check_node_name(e, f->link.from, f->pos, err)) != 0 ||
             (rc = check_node_name(e, f->link.to, f->pos, err)) != 0))
            goto out;
        for (int g = 0; g < f->ngroups; g++)
            for (int k = 0; k < f->group_len[g]; k++)
                if ((rc = check_node_name(e, f->groups[g][k], f->pos, err)) != 0) goto out;
    }
    rc = -2;
    if (checker_init(&e->ck, &e->tr, e->s.purpose, e->s.stuck_after_ns) != 0) goto out;
    e->tr.observe = checker_observe;
    e->tr.advance = checker_advance;
    e->tr.observe_arg = &e->ck;
    e->tr.observe_kinds = CHECKER_KINDS;

    /* Time zero: the resource, the algorithm's nodes, scheduled faults, clients. */
    e->stock = e->s.stock;
    emit(e, TRACE_RUN_START, TRACE_NO_NODE, TRACE_NO_NODE, 0, 0, (int64_t)e->s.seed, e->s.duration_ns, NULL);
    /* b: 1 = the resource checks fencing tokens; 2 = the algorithm's rule decides. */
    emit(e, TRACE_RESOURCE_INIT, e->resource, TRACE_NO_NODE, 0, 0, e->stock,
         e->algo->resource_write ? 2 : e->s.fencing != 0, NULL);
    for (int i = 0; i < e->nnodes; i++) {
        struct lock_ctx x;
        ctx_init(&x, e, i);
        if (e->nodes[i].kind == TRACE_NODE_CLIENT && e->algo->client_init)
            e->algo->client_init(&x, e->nodes[i].algo_state);
        else if (e->nodes[i].kind == TRACE_NODE_SERVER && e->algo->server_init)
            e->algo->server_init(&x, e->nodes[i].algo_state);
    }
    push(e, e->s.duration_ns, EV_END, -1, 0);
    for (int i = 0; i < e->s.nfaults; i++)
        if (e->s.faults[i].point == SCN_POINT_NONE) push(e, e->s.faults[i].at_ns, EV_FAULT, -1, (uint64_t)i);
    for (int i = 0; i < e->nclients; i++) push(e, e->s.clients[i].start_ns, EV_START, i, 0);
    if (e->tr.oom) goto out;
    *out = e;
    return 0;
out:
    engine_free(e);
    return rc;
}

void engine_free(struct engine *e) {
    if (!e) return;
    if (e->nodes)
        for (int i = 0; i < e->nnodes; i++) {
            if (i >= e->nclients) free(e->nodes[i].algo_state);
            free(e->nodes[i].deferred);
        }
    free(e->nodes);
    free(e->clients);
    free(e->client_states);
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
const struct trace *engine_trace(const struct engine *e) { return &e->tr; }
const struct checker_report *engine_report(const struct engine *e) { return &e->report; }
const struct scenario *engine_scenario(const struct engine *e) { return &e->s; }
const struct lock_algo *engine_algo(const struct engine *e) { return e->algo; }
const char *engine_dropped_options(const struct engine *e) { return e->dropped; }
