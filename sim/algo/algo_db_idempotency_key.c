/* db-idempotency-key: the seed's "Preventing duplicate side effects ->
 * Idempotency key". S1 is a job queue with at-least-once delivery; its
 * visibility timeout is the lease, so a paused worker's job is delivered again
 * and two workers process the same job. Each job's id travels with its write
 * as an idempotency key, and R applies a key once: the duplicate is ignored. */
#include <string.h>

#include "db.h"

/* Messages (struct lock_msg.type). */
enum {
    IQ_RECEIVE = 1, /* -> IQ_REPLY a=1 token=job id value=receipt handle, or a=0 (nothing visible) */
    IQ_DELETE,      /* value = receipt handle -> IQ_REPLY a=1 deleted, a=0 outdated handle */
    IQ_REPLY
};
enum { W_RECEIVE = 1, W_DELETE };
enum { T_VISIBLE = DB_TIMER_RPC + 1 };

struct iq_config {
    sim_ns visibility_ns;      /* a received job is hidden this long, then delivered again */
    sim_ns request_timeout_ns; /* a client gives up on a reply after this */
};

/* ---- S1: a durable queue of jobs 1, 2, 3 ... ------------------------------------------
 * Semantics follow Amazon SQS's visibility timeout (Developer Guide,
 * "Amazon SQS visibility timeout"): a received message is hidden for the
 * timeout and becomes visible again unless deleted; each delivery has its own
 * receipt handle, and a delete must carry the most recent one. Jobs are served
 * in order, one at a time (the head job until it is deleted), so two workers
 * can only ever hold the same job. */
struct iq_server {
    uint64_t job;           /* id of the head job = its idempotency key (from 1) */
    int in_flight;          /* 1 = delivered and hidden */
    int owner;              /* client of the latest delivery, -1 = none */
    uint64_t receipt;       /* receipt handle of the latest delivery, 0 = none */
    sim_ns reappears_local; /* when it is visible again, by S1's monotonic clock */
    uint64_t timer;         /* visibility timer handle, 0 = none */
};

struct iq_client {
    struct db_rpc rpc;
    uint64_t job;     /* job being processed, 0 = none */
    uint64_t receipt; /* its receipt handle */
};

/* ---- R: the effect, with the keys already applied -------------------------------------
 * Keys are kept in a table of IQ_KEYS_KEPT slots, key k in slot k % IQ_KEYS_KEPT.
 * Job ids are consecutive, so this remembers the most recent 4096 jobs; a
 * duplicate of an older job would be applied again, the retention limit every
 * idempotency store has (Stripe keeps keys for 24 hours). */
#define IQ_KEYS_KEPT 4096
struct iq_resource {
    uint64_t key[IQ_KEYS_KEPT]; /* applied key in its slot, 0 = empty */
};

static const struct iq_config *cfg(struct lock_ctx *ctx) { return lock_config(ctx); }

static void defaults(void *config) {
    struct iq_config *c = config;
    c->visibility_ns = 30 * SIM_NS_PER_S; /* the SQS default */
    c->request_timeout_ns = SIM_NS_PER_S;
}

static int option(void *config, const char *k, const char *v, char *err, size_t n) {
    struct iq_config *c = config;
    if (strcmp(k, "visibility") == 0) return db_opt_duration(k, v, &c->visibility_ns, 0, err, n);
    if (strcmp(k, "request-timeout") == 0) return db_opt_duration(k, v, &c->request_timeout_ns, 0, err, n);
    return db_opt_unknown(err, n, k, "db-idempotency-key", "visibility, request-timeout");
}

/* ---- Server -------------------------------------------------------------------------- */

static void server_init(struct lock_ctx *ctx, void *state) {
    (void)ctx;
    struct iq_server *s = state;
    s->job = 1;
    s->owner = -1;
}

static void arm_visibility(struct lock_ctx *ctx, struct iq_server *s) {
    if (s->timer) lock_cancel(ctx, s->timer);
    s->timer = 0;
    if (!s->in_flight) return;
    sim_ns left_ns = s->reappears_local - lock_now(ctx, LOCK_CLOCK_MONO);
    s->timer = lock_timer(ctx, LOCK_CLOCK_MONO, left_ns, T_VISIBLE, 0);
}

/* States (lock_state). */
enum {
    IQ_ST_DELIVERED,       /* queue: a job delivered (hidden for the visibility timeout) */
    IQ_ST_NOTHING_VISIBLE, /* queue: the head job hidden: nothing to receive */
    IQ_ST_REAPPEARED,      /* queue: the visibility timeout ran out: delivered again later */
    IQ_ST_DELETED,         /* queue: the job deleted with its receipt (done) */
    IQ_ST_STALE_RECEIPT,   /* queue: a delete with an outdated receipt handle */
    IQ_ST_KEY_APPLIED,     /* resource: the first write with a key applied */
    IQ_ST_DUPLICATE,       /* resource: a write with a key already applied: not again */
    IQ_ST_NO_KEY,          /* resource: a write without a key: refused */
    IQ_ST_COUNT
};
static const char *const state_names[IQ_ST_COUNT] = {
        "delivered",     "nothing-visible", "reappeared",           "deleted",
        "stale-receipt", "key-applied",     "duplicate-suppressed", "no-key-refused"};

/* The visibility timeout, checked on every access and by the timer. SQS
 * documents no finer rule; the deadline is taken as inclusive: visible
 * again at now >= reappears (docs/algorithms.md, "Expiry at the exact tick"). */
static void reappear_if_due(struct lock_ctx *ctx, struct iq_server *s) {
    if (!s->in_flight || lock_now(ctx, LOCK_CLOCK_MONO) < s->reappears_local) return;
    s->in_flight = 0;
    if (s->timer) lock_cancel(ctx, s->timer);
    s->timer = 0;
    lock_note(ctx, "visibility timeout: the job is visible again and will be delivered again", (int64_t)s->job, 0);
    lock_note_expire(ctx, s->owner);
    lock_state(ctx, IQ_ST_REAPPEARED);
}

static void reply(struct lock_ctx *ctx, const struct lock_msg *m, int64_t a, uint64_t job, uint64_t receipt) {
    struct lock_msg r = {0};
    r.type = IQ_REPLY;
    r.req = m->req;
    r.a = a;
    r.token = job;
    r.value = receipt;
    lock_send(ctx, m->from, &r);
}

static void server_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct iq_server *s = state;
    reappear_if_due(ctx, s);
    switch (m->type) {
    case IQ_RECEIVE:
        if (s->in_flight) { /* the head job is hidden: nothing to receive */
            lock_note_deny(ctx, m->from, s->owner);
            lock_state(ctx, IQ_ST_NOTHING_VISIBLE);
            reply(ctx, m, 0, 0, 0);
            return;
        }
        s->in_flight = 1;
        s->owner = m->from;
        s->receipt = lock_random(ctx) | 1; /* never 0 */
        s->reappears_local = lock_now(ctx, LOCK_CLOCK_MONO) + cfg(ctx)->visibility_ns;
        lock_note_grant(ctx, m->from, s->job, cfg(ctx)->visibility_ns, s->reappears_local);
        arm_visibility(ctx, s);
        lock_state(ctx, IQ_ST_DELIVERED);
        reply(ctx, m, 1, s->job, s->receipt);
        return;
    case IQ_DELETE:
        if (s->receipt && m->value == s->receipt) {
            lock_note_delete(ctx, m->from, s->owner);
            lock_state(ctx, IQ_ST_DELETED);
            s->job++;
            s->in_flight = 0;
            s->owner = -1;
            s->receipt = 0;
            arm_visibility(ctx, s); /* cancels */
            reply(ctx, m, 1, 0, 0);
        } else {
            lock_note(ctx, "delete with an outdated receipt handle: the job was delivered again or is done",
                      (int64_t)s->job, 0);
            lock_note_keep(ctx, m->from, s->in_flight ? s->owner : -1);
            lock_state(ctx, IQ_ST_STALE_RECEIPT);
            reply(ctx, m, 0, 0, 0);
        }
        return;
    default: return;
    }
}

static void server_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    (void)arg;
    struct iq_server *s = state;
    if (timer != T_VISIBLE) return;
    s->timer = 0;
    reappear_if_due(ctx, s);
    if (s->in_flight) arm_visibility(ctx, s); /* not due yet by S1's clock */
}

/* The queue is durable: jobs, deliveries and receipt handles survive a crash. */
static void server_restart(struct lock_ctx *ctx, void *state) {
    struct iq_server *s = state;
    s->timer = 0; /* the engine dropped every timer at the crash */
    reappear_if_due(ctx, s);
    arm_visibility(ctx, s);
}

/* ---- Client: a worker ------------------------------------------------------------------ */

static void client_acquire(struct lock_ctx *ctx, void *state) {
    struct iq_client *c = state;
    struct lock_msg m = {0};
    c->job = 0;
    c->receipt = 0;
    m.type = IQ_RECEIVE;
    db_rpc_send(ctx, &c->rpc, W_RECEIVE, &m, cfg(ctx)->request_timeout_ns);
}

static void client_release(struct lock_ctx *ctx, void *state) {
    struct iq_client *c = state;
    if (!c->receipt) {
        lock_release_done(ctx);
        return;
    }
    struct lock_msg m = {0};
    m.type = IQ_DELETE;
    m.value = c->receipt;
    db_rpc_send(ctx, &c->rpc, W_DELETE, &m, cfg(ctx)->request_timeout_ns);
}

static void client_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct iq_client *c = state;
    if (m->type != IQ_REPLY || !db_rpc_reply(ctx, &c->rpc, m)) return;
    if (c->rpc.what == W_RECEIVE) {
        if (m->a) {
            c->job = m->token;
            c->receipt = m->value;
            /* The job id is the token the client attaches to its write: the key. */
            lock_granted(ctx, c->job, cfg(ctx)->visibility_ns);
        } else {
            lock_refused(ctx);
        }
    } else {
        c->job = 0;
        c->receipt = 0;
        lock_release_done(ctx);
    }
}

static void client_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    struct iq_client *c = state;
    if (!db_rpc_expired(ctx, &c->rpc, timer, arg)) return;
    if (c->rpc.what == W_RECEIVE) {
        lock_refused(ctx); /* a delivery whose reply was lost reappears after the timeout */
    } else {
        c->job = 0;
        c->receipt = 0;
        lock_release_done(ctx);
    }
}

/* ---- Resource --------------------------------------------------------------------------
 * The write is the job's side effect, sent with an Idempotency-Key header
 * (the IETF httpapi draft "The Idempotency-Key HTTP Header Field"; Stripe's
 * API). The first request with a key is applied and its key stored in the same
 * transaction as the effect; a later one with the same key is not applied
 * again. A real API answers it with the first request's saved response; in
 * locksim it is a rejected write (DB_WRITE_REJECTED_DUPLICATE), because the
 * engine applies every accepted write to the stock again and the checker must
 * count it as not applied. */
static int resource_write(struct lock_ctx *ctx, void *state, const struct lock_write *w) {
    struct iq_resource *r = state;
    if (w->token == 0) {
        lock_note(ctx, "request without an idempotency key: refused", 0, 0);
        lock_state(ctx, IQ_ST_NO_KEY);
        return LOCK_WRITE_REJECTED_NOTOKEN;
    }
    uint64_t *slot = &r->key[w->token % IQ_KEYS_KEPT];
    if (*slot == w->token) {
        lock_note(ctx, "idempotency key already applied: the duplicate is not applied again", (int64_t)w->token, 0);
        lock_state(ctx, IQ_ST_DUPLICATE);
        return DB_WRITE_REJECTED_DUPLICATE;
    }
    *slot = w->token;
    lock_state(ctx, IQ_ST_KEY_APPLIED);
    return LOCK_WRITE_ACCEPTED;
}

const struct lock_algo algo_db_idempotency_key = {
        .abi = LOCK_ABI_VERSION,
        .name = "db-idempotency-key",
        .summary =
                "at-least-once job queue (visibility timeout = lease); the job id is an idempotency key R applies once",
        .default_servers = 1,
        .max_servers = 1,
        .config_size = sizeof(struct iq_config),
        .client_size = sizeof(struct iq_client),
        .server_size = sizeof(struct iq_server),
        .config_default = defaults,
        .option = option,
        .client_acquire = client_acquire,
        .client_release = client_release,
        .client_recv = client_recv,
        .client_timer = client_timer,
        .server_init = server_init,
        .server_recv = server_recv,
        .server_timer = server_timer,
        .server_restart = server_restart,
        .resource_size = sizeof(struct iq_resource),
        .resource_write = resource_write,
        .lock_free = 1,
        .state_names = state_names,
        .nstates = IQ_ST_COUNT,
};
