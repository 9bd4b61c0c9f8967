/* db-skip-locked: the seed's "Ensuring one worker processes a job -> SELECT ...
 * FOR UPDATE SKIP LOCKED on a queue table". S1 is the database's lock manager
 * for the job's row, R is the row's data: the claim is a row lock held by a
 * transaction, the write is an UPDATE in that transaction, release is COMMIT.
 * The lock and the data share the transaction, so they cannot diverge: when
 * the database ends the transaction, the claim and the right to write end together. */
#include <string.h>

#include "db.h"

/* Messages (struct lock_msg.type). */
enum {
    SL_CLAIM = 1, /* BEGIN; SELECT ... FOR UPDATE SKIP LOCKED LIMIT 1 -> SL_REPLY a=1 token=txid, or a=0 */
    SL_COMMIT,    /* token = txid -> SL_REPLY a=1 committed, a=0 rolled back (it had ended) */
    SL_CLOSE,     /* req = an unanswered claim: the client closes that connection */
    SL_REPLY,
    SL_ABORTED /* server -> client: token = txid; the database ended it and closed the connection */
};
enum { W_CLAIM = 1, W_COMMIT };
enum { T_TX_TIMEOUT = DB_TIMER_RPC + 1 };

struct sl_config {
    sim_ns tx_timeout_ns;      /* abort a transaction this long after BEGIN; 0 = never */
    sim_ns request_timeout_ns; /* a client gives up on a reply after this */
};

struct sl_server {
    uint64_t next_txid; /* durable (WAL-logged, as PostgreSQL's xid counter): never reused */
    uint64_t txid;      /* transaction holding the row lock; 0 = the row is free */
    int owner;          /* client node of that transaction, -1 = none */
    uint32_t claim_req; /* the owner's request id for its claim */
    uint64_t timer;     /* transaction-timeout timer handle, 0 = none */
};

struct sl_client {
    struct db_rpc rpc;
    uint64_t txid;   /* our open transaction, 0 = none */
    int conn_closed; /* the database ended our transaction and closed the connection */
};

/* What the table knows about transactions: see resource_write. */
struct sl_resource {
    uint64_t newest_txid; /* highest transaction id that has written the row */
};

static const struct sl_config *cfg(struct lock_ctx *ctx) { return lock_config(ctx); }

static void defaults(void *config) {
    struct sl_config *c = config;
    c->tx_timeout_ns = 0; /* PostgreSQL's transaction_timeout is off by default */
    c->request_timeout_ns = SIM_NS_PER_S;
}

static int option(void *config, const char *k, const char *v, char *err, size_t n) {
    struct sl_config *c = config;
    if (strcmp(k, "tx-timeout") == 0) return db_opt_duration(k, v, &c->tx_timeout_ns, 1, err, n);
    if (strcmp(k, "request-timeout") == 0) return db_opt_duration(k, v, &c->request_timeout_ns, 0, err, n);
    return db_opt_unknown(err, n, k, "db-skip-locked", "tx-timeout, request-timeout");
}

/* ---- S1: the database's row lock ----------------------------------------------------
 * PostgreSQL documents SKIP LOCKED (SELECT, "The Locking Clause"): rows that
 * cannot be locked immediately are skipped, so a worker never waits for
 * another's claim; it sees no job and polls again. A row lock lasts until its
 * transaction ends: COMMIT, ROLLBACK, or the database aborting it. The abort
 * modelled here is PostgreSQL 17's transaction_timeout (option tx-timeout),
 * measured from BEGIN by S1's monotonic clock; the session is terminated, so
 * the client's driver learns that its connection is closed. */

static void server_init(struct lock_ctx *ctx, void *state) {
    (void)ctx;
    struct sl_server *s = state;
    s->next_txid = 1;
    s->owner = -1;
}

static void reply(struct lock_ctx *ctx, const struct lock_msg *m, int64_t a, uint64_t token) {
    struct lock_msg r = {0};
    r.type = SL_REPLY;
    r.req = m->req;
    r.a = a;
    r.token = token;
    lock_send(ctx, m->from, &r);
}

static void forget_tx(struct lock_ctx *ctx, struct sl_server *s) {
    if (s->timer) lock_cancel(ctx, s->timer);
    s->timer = 0;
    s->txid = 0;
    s->owner = -1;
    s->claim_req = 0;
}

static void tell_aborted(struct lock_ctx *ctx, int client, uint64_t txid) {
    struct lock_msg m = {0};
    m.type = SL_ABORTED;
    m.token = txid;
    lock_send(ctx, client, &m);
}

/* States (lock_state). */
enum {
    SL_ST_CLAIMED,          /* server: FOR UPDATE SKIP LOCKED locked the row for a transaction */
    SL_ST_SKIPPED,          /* server: the row was locked: skipped */
    SL_ST_COMMITTED,        /* server: the transaction committed */
    SL_ST_LATE_COMMIT,      /* server: COMMIT of a transaction already ended: ROLLBACK */
    SL_ST_CLOSED,           /* server: the client dropped its connection: rolled back */
    SL_ST_TX_TIMEOUT,       /* server: transaction_timeout aborted the holder */
    SL_ST_RESTART_ROLLBACK, /* server: restarted with a transaction open: rolled back */
    SL_ST_CLAIM_TIMED_OUT,  /* client: no answer to its claim */
    SL_ST_WRITE_ON_CLOSED,  /* client: its UPDATE failed on a closed connection */
    SL_ST_COUNT
};
static const char *const state_names[SL_ST_COUNT] = {"claimed",
                                                     "skipped",
                                                     "committed",
                                                     "commit-after-end",
                                                     "connection-closed",
                                                     "transaction-timeout",
                                                     "restart-rolled-back",
                                                     "claim-timed-out",
                                                     "write-on-closed-connection"};

static void server_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct sl_server *s = state;
    switch (m->type) {
    case SL_CLAIM:
        if (s->txid) { /* locked by an open transaction: skipped, at once */
            lock_note_deny(ctx, m->from, s->owner);
            lock_state(ctx, SL_ST_SKIPPED);
            reply(ctx, m, 0, 0);
            return;
        }
        s->txid = s->next_txid++;
        s->owner = m->from;
        s->claim_req = m->req;
        sim_ns tmo = cfg(ctx)->tx_timeout_ns;
        lock_note_grant(ctx, m->from, s->txid, tmo, tmo ? lock_now(ctx, LOCK_CLOCK_MONO) + tmo : SIM_NEVER);
        if (tmo) s->timer = lock_timer(ctx, LOCK_CLOCK_MONO, tmo, T_TX_TIMEOUT, s->txid);
        lock_state(ctx, SL_ST_CLAIMED);
        reply(ctx, m, 1, s->txid);
        return;
    case SL_COMMIT:
        if (s->txid && s->txid == m->token && s->owner == m->from) {
            lock_note_delete(ctx, m->from, s->owner);
            lock_state(ctx, SL_ST_COMMITTED);
            forget_tx(ctx, s);
            reply(ctx, m, 1, m->token);
        } else {
            lock_note(ctx, "COMMIT of a transaction the database already ended: ROLLBACK", (int64_t)m->token, 0);
            lock_state(ctx, SL_ST_LATE_COMMIT);
            reply(ctx, m, 0, m->token);
        }
        return;
    case SL_CLOSE: /* the client gave up on its claim's reply and dropped the connection */
        if (s->txid && s->owner == m->from && s->claim_req == m->req) {
            lock_note(ctx, "the client closed its connection: its transaction is rolled back", (int64_t)s->txid, 0);
            lock_state(ctx, SL_ST_CLOSED);
            lock_note_delete(ctx, m->from, s->owner);
            forget_tx(ctx, s);
        }
        return;
    default: return;
    }
}

static void server_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    struct sl_server *s = state;
    if (timer != T_TX_TIMEOUT) return;
    s->timer = 0;
    if (!s->txid || s->txid != arg) return;
    lock_note(ctx, "transaction_timeout: the transaction is aborted and its connection closed", (int64_t)s->txid, 0);
    lock_note_expire(ctx, s->owner);
    lock_state(ctx, SL_ST_TX_TIMEOUT);
    tell_aborted(ctx, s->owner, s->txid);
    forget_tx(ctx, s);
}

/* A database crash rolls back every open transaction and loses the in-memory
 * row locks; the transaction counter is durable. The owner's connection broke
 * with the crash: its driver reports it, modelled as a notice at restart. */
static void server_restart(struct lock_ctx *ctx, void *state) {
    struct sl_server *s = state;
    s->timer = 0; /* the engine dropped every timer at the crash */
    if (s->txid) {
        lock_note(ctx, "restarted: open transactions rolled back, row locks gone", (int64_t)s->txid, 0);
        lock_state(ctx, SL_ST_RESTART_ROLLBACK);
        tell_aborted(ctx, s->owner, s->txid);
    }
    forget_tx(ctx, s);
}

/* ---- Client: a worker with a database connection ------------------------------------- */

static void client_acquire(struct lock_ctx *ctx, void *state) {
    struct sl_client *c = state;
    struct lock_msg m = {0};
    c->txid = 0;
    c->conn_closed = 0; /* a fresh connection from the pool */
    m.type = SL_CLAIM;
    db_rpc_send(ctx, &c->rpc, W_CLAIM, &m, cfg(ctx)->request_timeout_ns);
}

static void client_release(struct lock_ctx *ctx, void *state) {
    struct sl_client *c = state;
    if (!c->txid || c->conn_closed) {
        /* Nothing to commit: the driver fails COMMIT on a closed connection at once. */
        c->txid = 0;
        lock_release_done(ctx);
        return;
    }
    struct lock_msg m = {0};
    m.type = SL_COMMIT;
    m.token = c->txid;
    db_rpc_send(ctx, &c->rpc, W_COMMIT, &m, cfg(ctx)->request_timeout_ns);
}

static void client_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct sl_client *c = state;
    if (m->type == SL_ABORTED) {
        if (c->txid && m->token == c->txid && !c->conn_closed) {
            c->conn_closed = 1;
            lock_note(ctx, "the database ended its transaction and closed the connection", (int64_t)m->token, 0);
        }
        return;
    }
    if (m->type != SL_REPLY || !db_rpc_reply(ctx, &c->rpc, m)) return;
    if (c->rpc.what == W_CLAIM) {
        if (m->a) {
            c->txid = m->token;
            lock_granted(ctx, c->txid, cfg(ctx)->tx_timeout_ns);
        } else {
            lock_refused(ctx); /* skipped: no job for this worker now */
        }
    } else {
        c->txid = 0;
        lock_release_done(ctx);
    }
}

static void client_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    struct sl_client *c = state;
    if (!db_rpc_expired(ctx, &c->rpc, timer, arg)) return;
    if (c->rpc.what == W_CLAIM) {
        /* The claim may have been granted with its reply lost: close that
         * connection, so the database rolls back whatever it began. */
        struct lock_msg m = {0};
        m.type = SL_CLOSE;
        m.req = (uint32_t)arg;
        lock_send(ctx, lock_server(ctx, 0), &m);
        lock_state(ctx, SL_ST_CLAIM_TIMED_OUT);
        lock_refused(ctx);
    } else {
        c->txid = 0; /* the outcome of a COMMIT whose reply is lost is unknown */
        lock_release_done(ctx);
    }
}

/* The UPDATE goes over the transaction's connection: once the database has
 * closed it, the driver fails the statement without sending it. */
static int client_write_ok(struct lock_ctx *ctx, void *state) {
    const struct sl_client *c = state;
    if (c->conn_closed) lock_state(ctx, SL_ST_WRITE_ON_CLOSED);
    return !c->conn_closed;
}

/* ---- R: the row's data -------------------------------------------------------------------
 * In a database the row and its lock are one system, and an UPDATE in a
 * transaction that has ended cannot happen. locksim's resource is a separate
 * node that no lock server can message (lock_send to R is dropped), and
 * resource_write sees only R's own state, so R cannot know that S1 ended a
 * transaction. What it can know soundly: transaction ids grow, and once a
 * newer transaction has written the row, every older one has ended (the
 * newer one could only lock the row after). So R refuses a write from a
 * transaction older than the newest that has written, and a write from no
 * transaction at all. Together with the driver's closed connection above,
 * that catches every late write except one that leaves the client before the
 * abort notice arrives and reaches R before the new owner's first write (the
 * hole fencing tokens also have). A server-to-resource channel in lock.h
 * would make it exact: S1 would tell R when each transaction ends.
 * A second simplification: a write takes effect when it arrives, not at
 * COMMIT, so a write whose transaction is aborted afterwards stays applied
 * (a database would roll it back and the next claimant would redo the job;
 * for this one-job row the final data is the same). */
static int resource_write(struct lock_ctx *ctx, void *state, const struct lock_write *w) {
    struct sl_resource *r = state;
    if (w->token == 0) {
        lock_note(ctx, "UPDATE from no claiming transaction: refused", 0, 0);
        return LOCK_WRITE_REJECTED_NOTOKEN;
    }
    if (w->token < r->newest_txid) {
        lock_note(ctx, "UPDATE from a transaction that has ended: a newer one has claimed the row", (int64_t)w->token,
                  (int64_t)r->newest_txid);
        return LOCK_WRITE_REJECTED_STALE;
    }
    r->newest_txid = w->token;
    return LOCK_WRITE_ACCEPTED;
}

const struct lock_algo algo_db_skip_locked = {
        .abi = LOCK_ABI_VERSION,
        .name = "db-skip-locked",
        .summary = "job claim as a row lock in a DB transaction (FOR UPDATE SKIP LOCKED); taken = skipped at once; "
                   "COMMIT releases",
        .default_servers = 1,
        .max_servers = 1,
        .config_size = sizeof(struct sl_config),
        .client_size = sizeof(struct sl_client),
        .server_size = sizeof(struct sl_server),
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
        .resource_size = sizeof(struct sl_resource),
        .resource_write = resource_write,
        .client_write_ok = client_write_ok,
        .state_names = state_names,
        .nstates = SL_ST_COUNT,
};
