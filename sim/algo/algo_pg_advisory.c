/* pg-advisory and pg-advisory-xact: PostgreSQL advisory locks, the lock
 * that dies with its connection. A session-level lock (pg_advisory_lock) belongs to the
 * database session: when the server ends the session, the lock is released
 * and the next waiter has it, while the program that took it keeps working
 * and is told nothing until it next speaks to the database. A
 * transaction-level lock (pg_advisory_xact_lock) ends with its transaction,
 * and so do the writes made in it. */
#include <stdio.h>
#include <string.h>

#include "db.h"

/* Sources: PostgreSQL documentation, "Advisory Locks" (13.3.5): "Once
 * acquired at session level, an advisory lock is held until explicitly
 * released or the session ends"; "transaction-level lock requests ... are
 * automatically released at the end of the transaction". The session ends
 * when the server terminates it: idle_session_timeout (PostgreSQL 14:
 * "Terminate any session that has been idle (that is, waiting for a client
 * query), but not within an open transaction, for longer than the specified
 * amount of time"), idle_in_transaction_session_timeout for a session idle
 * inside a transaction, both off (0) by default and often set by operators
 * and hosted databases; MySQL's GET_LOCK behaves the same way ("a lock
 * obtained with GET_LOCK() is released ... implicitly when your session
 * terminates", wait_timeout). pg_advisory_lock waits for a lock another
 * session holds, in arrival order here.
 *
 * What is modelled: S1 is the database. A client's acquire opens a session
 * (a new one per acquisition: its number travels in every message) and asks
 * for the lock; it is granted at once or when the holder lets go. While the
 * program works it sends nothing, so its session is idle from the grant:
 * with pg-advisory, idle-session-timeout after the grant S1 terminates the
 * session and the lock goes to the next waiter; the holder learns it only at
 * its release, which then fails ("server closed the connection
 * unexpectedly"). The resource is elsewhere (another service, a file, an
 * API): it accepts every write. With pg-advisory-xact the lock is taken in a
 * transaction that also holds the program's writes: the resource is a table
 * of the same database, and a write is applied only by the transaction that
 * still holds the lock (S1's state at the write's arrival); a transaction
 * ended by idle-tx-timeout rolls its writes back, so they are refused.
 * The idle timer counts from the grant, as the program sends nothing else to
 * S1 before its write.
 *
 * MySQL (flavor=mysql), the reference manual, "Locking Functions": "A lock
 * obtained with GET_LOCK() is released explicitly by executing
 * RELEASE_LOCK() or implicitly when your session terminates (either
 * normally or abnormally)"; RELEASE_LOCK "Returns 1 if the lock was
 * released, 0 if the lock was not established by this thread (in which
 * case the lock is not released)". The session ends when the server closes
 * a connection idle for wait_timeout ("The number of seconds the server
 * waits for activity on a noninteractive connection before closing it",
 * default 28800, which flavor=mysql takes). PostgreSQL's
 * pg_advisory_unlock likewise returns false, with a warning, for a lock the
 * session does not hold. release-connection=other: the program takes
 * the lock on one connection of a pool and releases it on another (it
 * gave the first back to the pool between the two calls): the release
 * fails, and the lock stays with the pooled connection, idle in the pool,
 * until the server closes it. */

enum { PG_LOCK = 1, PG_UNLOCK, PG_REPLY };
enum { W_LOCK = 1, W_UNLOCK };
enum { T_IDLE = DB_TIMER_RPC + 1 };

#define PG_MAX_WAITERS 256

struct pg_config {
    int xact;                  /* 1 = pg-advisory-xact: the lock and the writes in one transaction */
    sim_ns idle_session_ns;    /* idle_session_timeout: 0 = off (PostgreSQL's default) */
    sim_ns idle_tx_ns;         /* idle_in_transaction_session_timeout: 0 = off */
    sim_ns request_timeout_ns; /* the client gives up on a reply after this */
    int mysql;                 /* flavor=mysql: GET_LOCK / RELEASE_LOCK and wait_timeout's words */
    int release_other;         /* release-connection=other: the release goes on another pooled connection */
};

struct pg_waiter {
    int node;
    uint32_t session;
    uint32_t req;
};

struct pg_server {
    int holder;       /* node holding the lock, -1 = none */
    uint32_t session; /* its session */
    uint64_t idle;    /* idle timer handle, 0 = none */
    uint64_t grants;  /* grants so far (the trace's token for xact) */
    int nwait;
    struct pg_waiter wait[PG_MAX_WAITERS]; /* pg_advisory_lock callers, in arrival order */
};

struct pg_client {
    struct db_rpc rpc;
    uint32_t session; /* this acquisition's session, 0 = none yet */
};

enum { PG_ST_WAITING, PG_ST_GRANTED, PG_ST_TERMINATED, PG_ST_RELEASE_FAILED, PG_ST_COUNT };
static const char *const state_names[PG_ST_COUNT] = {"waiting", "granted", "session-terminated", "release-failed"};

static const struct pg_config *cfg(struct lock_ctx *ctx) { return lock_config(ctx); }

static void defaults_of(struct pg_config *c, int xact) {
    c->xact = xact;
    c->idle_session_ns = 0;
    c->idle_tx_ns = 0;
    c->request_timeout_ns = SIM_NS_PER_S;
}

static void defaults(void *config) { defaults_of(config, 0); }
static void defaults_xact(void *config) { defaults_of(config, 1); }

#define MYSQL_WAIT_TIMEOUT_NS (28800 * SIM_NS_PER_S) /* wait_timeout's default: 8 hours */

static int option(void *config, const char *k, const char *v, char *err, size_t n) {
    struct pg_config *c = config;
    if (strcmp(k, "flavor") == 0) {
        if (strcmp(v, "postgresql") == 0) c->mysql = 0;
        else if (strcmp(v, "mysql") == 0 && !c->xact) c->mysql = 1;
        else {
            snprintf(err, n, "flavor '%s' is not %s", v,
                     c->xact ? "postgresql (MySQL has no transaction-level GET_LOCK)" : "postgresql or mysql");
            return LSIM_EBAD_VALUE;
        }
        if (c->mysql && c->idle_session_ns == 0) c->idle_session_ns = MYSQL_WAIT_TIMEOUT_NS;
        return 0;
    }
    if (strcmp(k, "release-connection") == 0) {
        if (strcmp(v, "same") == 0) c->release_other = 0;
        else if (strcmp(v, "other") == 0) c->release_other = 1;
        else {
            snprintf(err, n, "release-connection '%s' is not same or other", v);
            return LSIM_EBAD_VALUE;
        }
        return 0;
    }
    if (strcmp(k, "wait-timeout") == 0 && !c->xact) return db_opt_duration(k, v, &c->idle_session_ns, 0, err, n);
    if (strcmp(k, "idle-session-timeout") == 0) return db_opt_duration(k, v, &c->idle_session_ns, 1, err, n);
    if (strcmp(k, "idle-tx-timeout") == 0) return db_opt_duration(k, v, &c->idle_tx_ns, 1, err, n);
    if (strcmp(k, "request-timeout") == 0) return db_opt_duration(k, v, &c->request_timeout_ns, 0, err, n);
    return db_opt_unknown(err, n, k, c->xact ? "pg-advisory-xact" : "pg-advisory",
                          c->xact ? "idle-session-timeout, idle-tx-timeout, request-timeout, release-connection, flavor"
                                  : "idle-session-timeout, wait-timeout, idle-tx-timeout, request-timeout, "
                                    "release-connection, flavor");
}

/* The idle timeout that ends the holder's session: idle_session_timeout
 * applies outside a transaction, idle_in_transaction_session_timeout inside. */
static sim_ns idle_limit(const struct pg_config *c) { return c->xact ? c->idle_tx_ns : c->idle_session_ns; }

/* ---- server: the database ---- */

static void server_init(struct lock_ctx *ctx, void *state) {
    struct pg_server *s = state;
    (void)ctx;
    s->holder = -1;
}

static void reply(struct lock_ctx *ctx, int to, uint32_t req, int ok, uint64_t token) {
    struct lock_msg r = {0};
    r.type = PG_REPLY;
    r.req = req;
    r.a = ok;
    r.token = token;
    lock_send(ctx, to, &r);
}

static void grant(struct lock_ctx *ctx, struct pg_server *s, int node, uint32_t session, uint32_t req) {
    s->holder = node;
    s->session = session;
    s->grants++;
    uint64_t token = cfg(ctx)->xact ? s->grants : 0;
    lock_note_grant(ctx, node, token, 0, SIM_NEVER);
    sim_ns idle = idle_limit(cfg(ctx));
    if (idle > 0) s->idle = lock_timer_rearm(ctx, s->idle, LOCK_CLOCK_MONO, idle, T_IDLE, 0);
    reply(ctx, node, req, 1, token);
}

/* The lock is free: the longest waiter has it. */
static void hand_on(struct lock_ctx *ctx, struct pg_server *s) {
    if (s->idle) lock_cancel(ctx, s->idle);
    s->idle = 0;
    s->holder = -1;
    if (s->nwait == 0) return;
    struct pg_waiter w = s->wait[0];
    memmove(s->wait, s->wait + 1, (size_t)(s->nwait - 1) * sizeof s->wait[0]);
    s->nwait--;
    grant(ctx, s, w.node, w.session, w.req);
}

static void server_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct pg_server *s = state;
    uint32_t session = (uint32_t)m->value;
    if (m->type == PG_LOCK) {
        if (s->holder < 0) {
            grant(ctx, s, m->from, session, m->req);
        } else if (s->nwait < PG_MAX_WAITERS) {
            lock_note_deny(ctx, m->from, s->holder); /* it waits: pg_advisory_lock blocks */
            s->wait[s->nwait++] = (struct pg_waiter){m->from, session, m->req};
        } else {
            reply(ctx, m->from, m->req, 0, 0); /* too many connections */
        }
    } else if (m->type == PG_UNLOCK) {
        /* pg_advisory_unlock, or COMMIT for xact: only the session that holds it. */
        int ours = s->holder == m->from && s->session == session;
        if (ours) {
            lock_note_delete(ctx, m->from, m->from);
            hand_on(ctx, s);
        }
        reply(ctx, m->from, m->req, ours, 0);
    }
}

static void server_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    struct pg_server *s = state;
    (void)arg;
    if (timer != T_IDLE) return;
    s->idle = 0;
    if (s->holder < 0) return;
    lock_state(ctx, PG_ST_TERMINATED);
    lock_note(ctx,
              cfg(ctx)->xact    ? "idle_in_transaction_session_timeout: transaction rolled back, its lock released"
              : cfg(ctx)->mysql ? "wait_timeout: connection closed, its GET_LOCK lock released"
                                : "idle_session_timeout: session terminated, its advisory lock released",
              s->holder, s->session);
    lock_note_expire(ctx, s->holder);
    hand_on(ctx, s);
}

/* A restarted database has no sessions: every lock and waiter is gone. */
static void server_restart(struct lock_ctx *ctx, void *state) {
    struct pg_server *s = state;
    (void)ctx;
    s->holder = -1;
    s->idle = 0;
    s->nwait = 0;
}

/* ---- client ---- */

static void client_acquire(struct lock_ctx *ctx, void *state) {
    struct pg_client *c = state;
    struct lock_msg m = {0};
    c->session = (lock_incarnation(ctx) << 20) + ((c->session + 1) & 0xfffff); /* a new connection */
    m.type = PG_LOCK;
    m.value = c->session;
    lock_state(ctx, PG_ST_WAITING);
    /* pg_advisory_lock waits as long as it takes: no client-side timeout. */
    db_rpc_send(ctx, &c->rpc, W_LOCK, &m, 0);
}

static void client_release(struct lock_ctx *ctx, void *state) {
    struct pg_client *c = state;
    struct lock_msg m = {0};
    m.type = PG_UNLOCK;
    /* release-connection=other: another connection of the pool, another
     * session (the next number: sessions are per client and incarnation). */
    m.value = cfg(ctx)->release_other ? c->session + 1 : c->session;
    db_rpc_send(ctx, &c->rpc, W_UNLOCK, &m, cfg(ctx)->request_timeout_ns);
}

static void client_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct pg_client *c = state;
    if (m->type != PG_REPLY || !db_rpc_reply(ctx, &c->rpc, m)) return;
    if (c->rpc.what == W_LOCK) {
        if (m->a) {
            lock_state(ctx, PG_ST_GRANTED);
            lock_granted(ctx, m->token, 0);
        } else {
            lock_refused(ctx);
        }
        return;
    }
    if (!m->a && cfg(ctx)->release_other) { /* not this session's lock: it stays */
        lock_state(ctx, PG_ST_RELEASE_FAILED);
        lock_note(ctx,
                  cfg(ctx)->mysql ? "RELEASE_LOCK on another pooled connection returns 0: the lock stays with the first"
                                  : "pg_advisory_unlock on another pooled connection returns false: the lock stays "
                                    "with the first",
                  c->session + 1, c->session);
    } else if (!m->a) { /* the session was gone: the program learns it only now */
        lock_state(ctx, PG_ST_RELEASE_FAILED);
        lock_note(ctx, "unlock failed: server closed the connection unexpectedly", c->session, 0);
    }
    lock_release_done(ctx);
}

static void client_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    struct pg_client *c = state;
    if (!db_rpc_expired(ctx, &c->rpc, timer, arg)) return;
    if (c->rpc.what == W_LOCK) lock_refused(ctx);
    else lock_release_done(ctx);
}

/* pg-advisory-xact: the write is an UPDATE in the transaction that took the
 * lock, applied only while that transaction holds it (S1's state as the
 * write arrives, its grant as the token); a rolled-back transaction's write
 * is refused. (pg-advisory has no rule: its resource is outside the
 * database, the scenario's `resource` line says what it checks.) */
static int resource_write(struct lock_ctx *ctx, void *state, const struct lock_write *w) {
    (void)state;
    const struct pg_server *s = lock_server_state(ctx, 0);
    if (!s || s->holder != w->client || w->token != s->grants) return LOCK_WRITE_REJECTED_NOT_OWNER;
    return LOCK_WRITE_ACCEPTED;
}

#define PG_CALLBACKS \
    .abi = LOCK_ABI_VERSION, .default_servers = 1, .max_servers = 1, .config_size = sizeof(struct pg_config), \
    .client_size = sizeof(struct pg_client), .server_size = sizeof(struct pg_server), .option = option, \
    .client_acquire = client_acquire, .client_release = client_release, .client_recv = client_recv, \
    .client_timer = client_timer, .server_init = server_init, .server_recv = server_recv, \
    .server_timer = server_timer, .server_restart = server_restart, .state_names = state_names, .nstates = PG_ST_COUNT

const struct lock_algo algo_pg_advisory = {
        PG_CALLBACKS,
        .name = "pg-advisory",
        .summary = "PostgreSQL session-level advisory lock (pg_advisory_lock): released when the server "
                   "ends the session (idle-session-timeout) while the program works on",
        .config_default = defaults,
};

const struct lock_algo algo_pg_advisory_xact = {
        PG_CALLBACKS,
        .name = "pg-advisory-xact",
        .summary = "PostgreSQL transaction-level advisory lock (pg_advisory_xact_lock) with the writes "
                   "in the same transaction: when it ends, its writes are refused",
        .config_default = defaults_xact,
        .resource_write = resource_write,
};
