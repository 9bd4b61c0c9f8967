/* chubby: Google's Chubby lock service as Burrows describes it ("The Chubby
 * lock service for loosely-coupled distributed systems", OSDI 2006), with one
 * master, S1 (the cell's replicas and master fail-over are not modelled).
 *
 * Sessions and KeepAlives (section 2.8). Opening a session gives it a lease
 * (lease=, 12s by default in the paper). The client sends a KeepAlive, the
 * master blocks it until the lease is close to its end (here: a quarter of
 * the lease before it, locksim's choice; the paper gives no number), then
 * extends the lease to a full lease from that moment and answers; the client
 * sends the next KeepAlive at once. The client keeps a local lease timeout,
 * a conservative approximation of the master's: the KeepAlive's send time,
 * plus how long the master held it, plus the lease it granted (the master
 * cannot have answered earlier than that). When the local lease runs out the
 * session is in jeopardy: the client keeps trying KeepAlives for a grace
 * period (grace=, 45s); one that gets through saves the session ("safe"),
 * otherwise the session has expired for the client: it learns its locks are
 * lost (lock_lost). The master ends the session at its own lease timeout.
 *
 * Locks, lock-delay and sequencers (section 2.4). Acquire blocks until the
 * lock is granted. When a lock becomes free because its holder's session
 * ended (the holder failed or became inaccessible), the master withholds it
 * from others for the lock-delay (lock-delay=, default and bound 1 minute,
 * "clients may specify any lock-delay up to some bound, currently one
 * minute"); a normal Release frees it at once. Each grant increments the
 * lock's generation number; the client's sequencer carries it, and is the
 * token attached to writes. A server that checks sequencers
 * (sequencer=check, the default) calls CheckSequencer: R asks S1's state
 * (lock_server_state) whether this generation still holds the lock, so a
 * late request of a failed holder is refused whenever it lands, in the
 * lock-delay or after it. sequencer=off is the unmodified server the
 * lock-delay exists for: it accepts every request, and only the delay stands
 * between a holder's delayed request and the next holder.
 *
 * Consul sessions (flavor=consul), whose design follows Chubby's (Consul
 * docs, "Sessions": "The design of sessions in Consul is heavily influenced
 * by Google Chubby"). A session has a TTL (lease=, here 15s, the TTL of the
 * sessions `consul lock` and the Go API's Lock open, api/lock.go
 * DefaultLockSessionTTL). The docs: the TTL "represents a lower bound for
 * invalidation; that is, Consul will not expire the session before the TTL
 * is reached, but it is allowed to delay the expiration past the TTL";
 * the servers wait twice the TTL from the last renewal (agent/consul
 * session_ttl.go: ttl * SessionTTLMultiplier, 2). A renewal (PUT
 * /v1/session/renew) is answered at once, not held; the client renews every
 * TTL/2 (api.Session.RenewPeriodic). When a session holding a lock is
 * invalidated the lock is withheld for the lock-delay (default 15s, at most
 * 60s), as Chubby's. The client keeps no local lease: a holder learns that
 * its session is gone only from the server, by its lock monitor's blocking
 * query on the lock key (api/lock.go monitorLock: it returns when the key's
 * session changes, and the lock's channel closes) or by a renewal refused
 * ("session not found"). A holder cut off from the servers learns nothing
 * and works on. The sequencer is the key's LockIndex with the session (the
 * docs: "a sequencer ... similar to Chubby"): sequencer=check has the
 * resource ask whether this grant still holds the lock. */
#include <stdio.h>
#include <string.h>

#include "lock.h"

#define CB_MAX 256 /* sessions and waiters the master keeps at once */

enum {
    CB_OPEN = 1,  /* -> value = session id, ttl_ns = lease */
    CB_KEEPALIVE, /* value = session -> (held) ttl_ns = lease granted, b = how long the master held it */
    CB_ACQUIRE,   /* value = session -> (blocks) a = 1, token = generation */
    CB_RELEASE,   /* value = session, token = generation */
    CB_REPLY,     /* a = 1 ok; a = 0 with b = 1: the session is unknown (expired) */
    CB_KA_REPLY,  /* the answer to a KeepAlive: ttl_ns = lease granted, b = held for */
    CB_MONITOR    /* consul: the holder's blocking query returns: value = session, its lock is gone */
};

enum cb_seq { CB_SEQ_CHECK, CB_SEQ_OFF };

struct cb_config {
    sim_ns lease_ns;
    sim_ns grace_ns;
    sim_ns lock_delay_ns;
    int sequencer; /* enum cb_seq */
    int consul;    /* flavor=consul: TTL sessions invalidated at 2x TTL, renewals every TTL/2, no local lease */
    int lease_set, delay_set; /* lease= / lock-delay= given: flavor=consul keeps them */
};

struct cb_session {
    uint64_t id; /* 0 = free */
    int owner;
    sim_ns lease_end; /* master's monotonic clock */
    uint64_t expiry;  /* timer handle */
    uint32_t ka_req;  /* a held KeepAlive, 0 = none */
    sim_ns ka_since;
    uint64_t ka_timer;
};

struct cb_waiter {
    int used;
    int client;
    uint32_t req;
    uint64_t session;
};

struct cb_server {
    uint64_t next_session;
    uint64_t generation; /* of the latest grant */
    int held;
    int holder; /* client node */
    uint64_t holder_session;
    sim_ns delay_until; /* lock-delay end (master's monotonic clock); 0 = none */
    uint64_t delay_timer;
    struct cb_session sess[CB_MAX];
    struct cb_waiter wait[CB_MAX];
    int nwait_seq; /* insertion counter for FIFO order */
    int order[CB_MAX];
};

enum { T_EXPIRY = 1, T_KA, T_DELAY, T_JEOPARDY, T_GRACE, T_RETRY, T_RENEW };

#define CONSUL_TTL_MULTIPLIER 2 /* agent/consul/session_ttl.go: SessionTTLMultiplier */

/* States (lock_state): what a client, the master or the resource knows then. */
enum {
    CB_ST_SESSION_OPEN,
    CB_ST_KA_HELD,
    CB_ST_KA_ANSWERED,
    CB_ST_QUEUED,
    CB_ST_GRANTED,
    CB_ST_JEOPARDY,
    CB_ST_GRACE_SAFE,
    CB_ST_SESSION_EXPIRED,
    CB_ST_LOCK_LOST,
    CB_ST_MASTER_ENDED,
    CB_ST_LOCK_DELAY,
    CB_ST_LOCK_DELAY_OVER,
    CB_ST_RELEASED,
    CB_ST_RELEASE_REFUSED,
    CB_ST_UNKNOWN_SESSION,
    CB_ST_MASTER_RESTARTED,
    CB_ST_SEQ_ACCEPTED,
    CB_ST_SEQ_REJECTED,
    CB_ST_SEQ_UNCHECKED,
    CB_ST_COUNT
};
static const char *const state_names[CB_ST_COUNT] = {
        "session-open",         /* client: the master opened its session */
        "keepalive-held",       /* master: a KeepAlive held until near the lease's end */
        "keepalive-answered",   /* client: a KeepAlive answered, its local lease moved */
        "acquire-queued",       /* master: the lock is held or in lock-delay, the request waits */
        "granted",              /* client: holds the lock, its sequencer = the generation */
        "jeopardy",             /* client: its local lease ran out, grace period begins */
        "grace-safe",           /* client: a KeepAlive got through in the grace period */
        "session-expired",      /* client: grace over, or the master says the session ended */
        "lock-lost",            /* client: its session ended while it held the lock */
        "master-ended-session", /* master: a session's lease timed out */
        "lock-delay",           /* master: a failed holder's lock withheld from others */
        "lock-delay-over",      /* master: the lock can be granted again */
        "released",             /* master: a normal release, no lock-delay */
        "release-refused",      /* master: a release by a generation that no longer holds */
        "session-unknown",      /* master: a request of a session it no longer has */
        "master-restarted",     /* master: restarted, every session and lock forgotten */
        "sequencer-accepted",   /* R: CheckSequencer: this generation holds the lock */
        "sequencer-rejected",   /* R: no sequencer, a stale one, or no master to ask */
        "sequencer-unchecked"}; /* R: sequencer=off, the request is accepted unchecked */

struct cb_client {
    uint32_t req;
    uint64_t session; /* 0 = none */
    int opening;
    uint32_t open_req, acq_req, rel_req;
    int ka_out;     /* KeepAlives sent since the last answer */
    sim_ns ka_sent; /* monotonic: when the earliest of them left */
    uint64_t jeopardy_timer, grace_timer, retry_timer;
    int jeopardy;
    int acquiring;
    uint64_t generation; /* held, 0 = none */
};

static const struct cb_config *cfg(struct lock_ctx *ctx) { return lock_config(ctx); }
static sim_ns mono(struct lock_ctx *ctx) { return lock_now(ctx, LOCK_CLOCK_MONO); }

static void defaults(void *config) {
    struct cb_config *c = config;
    c->lease_ns = 12 * SIM_NS_PER_S;
    c->grace_ns = 45 * SIM_NS_PER_S;
    c->lock_delay_ns = 60 * SIM_NS_PER_S;
    c->sequencer = CB_SEQ_CHECK;
}

static int option(void *config, const char *key, const char *val, char *err, size_t n) {
    struct cb_config *c = config;
    sim_ns v;
    if (strcmp(key, "lease") == 0 || strcmp(key, "grace") == 0) {
        if (lock_parse_duration(val, &v) != 0 || v <= 0) {
            snprintf(err, n, "%s '%s' is not a positive duration such as %s", key, val, key[0] == 'l' ? "12s" : "45s");
            return LSIM_EBAD_VALUE;
        }
        if (key[0] == 'l') {
            c->lease_ns = v;
            c->lease_set = 1;
        } else {
            c->grace_ns = v;
        }
        return 0;
    }
    if (strcmp(key, "lock-delay") == 0) {
        if (lock_parse_duration(val, &v) != 0 || v > 60 * SIM_NS_PER_S) {
            snprintf(err, n, "lock-delay '%s' is not a duration from 0 to 1m (Chubby's bound is one minute)", val);
            return LSIM_EBAD_VALUE;
        }
        c->lock_delay_ns = v;
        c->delay_set = 1;
        return 0;
    }
    if (strcmp(key, "flavor") == 0) {
        if (strcmp(val, "chubby") == 0) c->consul = 0;
        else if (strcmp(val, "consul") == 0) c->consul = 1;
        else {
            snprintf(err, n, "flavor '%s' is not chubby or consul", val);
            return LSIM_EBAD_VALUE;
        }
        /* Consul's defaults: 15s TTL (api/lock.go), 15s lock-delay. */
        if (!c->lease_set) c->lease_ns = (c->consul ? 15 : 12) * SIM_NS_PER_S;
        if (!c->delay_set) c->lock_delay_ns = (c->consul ? 15 : 60) * SIM_NS_PER_S;
        return 0;
    }
    if (strcmp(key, "sequencer") == 0) {
        if (strcmp(val, "check") == 0) c->sequencer = CB_SEQ_CHECK;
        else if (strcmp(val, "off") == 0) c->sequencer = CB_SEQ_OFF;
        else {
            snprintf(err, n, "sequencer '%s' is not check or off: whether the resource calls CheckSequencer", val);
            return LSIM_EBAD_VALUE;
        }
        return 0;
    }
    snprintf(err, n, "unknown option '%s' for chubby; expected lease, grace, lock-delay, sequencer, flavor", key);
    return LSIM_EUNKNOWN_OPTION;
}

/* ---- S1: the master ------------------------------------------------------------- */

static void cancel(struct lock_ctx *ctx, uint64_t *h) {
    if (*h) lock_cancel(ctx, *h);
    *h = 0;
}

static struct cb_session *session_of(struct cb_server *s, uint64_t id) {
    if (!id) return NULL;
    for (int i = 0; i < CB_MAX; i++)
        if (s->sess[i].id == id) return &s->sess[i];
    return NULL;
}

static void send_reply(struct lock_ctx *ctx, int to, uint32_t req, int64_t a, int64_t b, uint64_t value, uint64_t token,
                       sim_ns ttl) {
    struct lock_msg r = {0};
    r.type = CB_REPLY;
    r.req = req;
    r.a = a;
    r.b = b;
    r.value = value;
    r.token = token;
    r.ttl_ns = ttl;
    lock_send(ctx, to, &r);
}

/* How long the master keeps a session from its opening or renewal: the
 * lease, or with flavor=consul twice the TTL (session_ttl.go). */
static sim_ns master_lease(const struct cb_config *c) {
    return c->consul ? CONSUL_TTL_MULTIPLIER * c->lease_ns : c->lease_ns;
}

static void arm_expiry(struct lock_ctx *ctx, struct cb_session *se) {
    cancel(ctx, &se->expiry);
    sim_ns d = se->lease_end - mono(ctx);
    se->expiry = lock_timer(ctx, LOCK_CLOCK_MONO, d > 0 ? d : 0, T_EXPIRY, se->id);
}

static void grant(struct lock_ctx *ctx, struct cb_server *s, const struct cb_waiter *w) {
    const struct cb_session *se = session_of(s, w->session);
    s->held = 1;
    s->holder = w->client;
    s->holder_session = w->session;
    s->generation++;
    lock_note_grant(ctx, w->client, s->generation, cfg(ctx)->lease_ns, se ? se->lease_end : SIM_NEVER);
    send_reply(ctx, w->client, w->req, 1, 0, w->session, s->generation, 0);
}

/* The lock is free and out of its lock-delay: the longest waiter gets it. */
static void grant_next(struct lock_ctx *ctx, struct cb_server *s) {
    if (s->held || s->delay_until) return;
    int best = -1;
    for (int i = 0; i < CB_MAX; i++)
        if (s->wait[i].used && (best < 0 || s->order[i] < s->order[best])) best = i;
    if (best < 0) return;
    struct cb_waiter w = s->wait[best];
    s->wait[best].used = 0;
    grant(ctx, s, &w);
}

static void expire_session(struct lock_ctx *ctx, struct cb_server *s, struct cb_session *se) {
    lock_note(ctx,
              cfg(ctx)->consul ? "session invalidated: twice its TTL passed without a renewal"
                               : "session lease timed out at the master: the session ends",
              (int64_t)se->id, se->owner);
    for (int i = 0; i < CB_MAX; i++)
        if (s->wait[i].used && s->wait[i].session == se->id) s->wait[i].used = 0;
    lock_state(ctx, CB_ST_MASTER_ENDED);
    if (s->held && s->holder_session == se->id) {
        lock_note_expire(ctx, s->holder);
        s->held = 0;
        if (cfg(ctx)->consul) { /* the holder's monitor (a blocking query on the key) returns */
            struct lock_msg mo = {0};
            mo.type = CB_MONITOR;
            mo.req = 1;
            mo.value = se->id;
            lock_send(ctx, se->owner, &mo);
        }
        sim_ns d = cfg(ctx)->lock_delay_ns;
        if (d > 0) {
            lock_state(ctx, CB_ST_LOCK_DELAY);
            s->delay_until = mono(ctx) + d;
            lock_note(ctx, LOCK_NOTE_LOCK_DELAY " the failed holder's lock is withheld from others", d,
                      (int64_t)s->generation);
            s->delay_timer = lock_timer(ctx, LOCK_CLOCK_MONO, d, T_DELAY, 0);
        }
    }
    cancel(ctx, &se->ka_timer);
    cancel(ctx, &se->expiry);
    memset(se, 0, sizeof *se);
    grant_next(ctx, s);
}

/* Answer a held KeepAlive: a full lease from now. */
static void answer_keepalive(struct lock_ctx *ctx, struct cb_server *s, struct cb_session *se) {
    sim_ns now = mono(ctx);
    se->lease_end = now + master_lease(cfg(ctx));
    arm_expiry(ctx, se);
    /* The lock lives as long as its holder's session: its lease is renewed. */
    if (s->held && s->holder_session == se->id) lock_note_renew(ctx, se->owner, cfg(ctx)->lease_ns);
    struct lock_msg r = {0};
    r.type = CB_KA_REPLY;
    r.req = se->ka_req;
    r.a = 1;
    r.b = now - se->ka_since;
    r.value = se->id;
    r.ttl_ns = cfg(ctx)->lease_ns;
    lock_send(ctx, se->owner, &r);
    se->ka_req = 0;
    se->ka_timer = 0;
}

static void server_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct cb_server *s = state;
    if (m->type == CB_OPEN) {
        struct cb_session *se = NULL;
        for (int i = 0; i < CB_MAX && !se; i++)
            if (!s->sess[i].id) se = &s->sess[i];
        if (!se) {
            lock_note(ctx, "too many sessions for the model (256): refused", m->from, 0);
            send_reply(ctx, m->from, m->req, 0, 0, 0, 0, 0);
            return;
        }
        se->id = ++s->next_session;
        se->owner = m->from;
        se->lease_end = mono(ctx) + master_lease(cfg(ctx));
        arm_expiry(ctx, se);
        send_reply(ctx, m->from, m->req, 1, 0, se->id, 0, cfg(ctx)->lease_ns);
        return;
    }
    struct cb_session *se = session_of(s, m->value);
    if (!se) { /* the session has ended: the client must learn it is gone */
        lock_state(ctx, CB_ST_UNKNOWN_SESSION);
        send_reply(ctx, m->from, m->req, 0, 1, m->value, 0, 0);
        return;
    }
    switch (m->type) {
    case CB_KEEPALIVE: {
        cancel(ctx, &se->ka_timer);
        se->ka_req = m->req;
        se->ka_since = mono(ctx);
        sim_ns hold = se->lease_end - cfg(ctx)->lease_ns / 4 - se->ka_since;
        if (hold <= 0 || cfg(ctx)->consul) answer_keepalive(ctx, s, se); /* Consul: renewals answered at once */
        else {
            lock_state(ctx, CB_ST_KA_HELD);
            se->ka_timer = lock_timer(ctx, LOCK_CLOCK_MONO, hold, T_KA, se->id);
        }
        return;
    }
    case CB_ACQUIRE: {
        if (s->held && s->holder_session == se->id) { /* already ours */
            send_reply(ctx, m->from, m->req, 1, 0, se->id, s->generation, 0);
            return;
        }
        int slot = -1;
        for (int i = 0; i < CB_MAX && slot < 0; i++)
            if (!s->wait[i].used) slot = i;
        if (slot < 0) {
            send_reply(ctx, m->from, m->req, 0, 0, se->id, 0, 0);
            return;
        }
        s->wait[slot] = (struct cb_waiter){.used = 1, .client = m->from, .req = m->req, .session = se->id};
        s->order[slot] = ++s->nwait_seq;
        if (s->held) lock_note_deny(ctx, m->from, s->holder);
        if (s->held || s->delay_until) lock_state(ctx, CB_ST_QUEUED);
        grant_next(ctx, s);
        return;
    }
    case CB_RELEASE:
        if (s->held && s->holder_session == se->id && s->generation == m->token) {
            lock_note_delete(ctx, m->from, s->holder);
            lock_state(ctx, CB_ST_RELEASED);
            s->held = 0; /* a normal release: no lock-delay */
            send_reply(ctx, m->from, m->req, 1, 0, se->id, m->token, 0);
            grant_next(ctx, s);
        } else {
            lock_state(ctx, CB_ST_RELEASE_REFUSED);
            send_reply(ctx, m->from, m->req, 0, 0, se->id, m->token, 0);
        }
        return;
    default: return;
    }
}

static void server_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    struct cb_server *s = state;
    if (timer == T_DELAY) {
        s->delay_timer = 0;
        s->delay_until = 0;
        lock_note(ctx, LOCK_NOTE_LOCK_DELAY_OVER ": the lock can be granted again", (int64_t)s->generation, 0);
        lock_state(ctx, CB_ST_LOCK_DELAY_OVER);
        grant_next(ctx, s);
        return;
    }
    struct cb_session *se = session_of(s, arg);
    if (!se) return;
    if (timer == T_KA) {
        se->ka_timer = 0;
        if (se->ka_req) answer_keepalive(ctx, s, se);
    } else if (timer == T_EXPIRY) {
        se->expiry = 0;
        if (mono(ctx) >= se->lease_end) expire_session(ctx, s, se);
        else arm_expiry(ctx, se);
    }
}

/* A master that restarts has lost its volatile session state; the lock's
 * generation survives (Chubby keeps lock state in its replicated database).
 * Without fail-over modelled, a restarted master forgets every session and
 * lock: their clients learn it at their next KeepAlive. */
static void server_restart(struct lock_ctx *ctx, void *state) {
    struct cb_server *s = state;
    lock_state(ctx, CB_ST_MASTER_RESTARTED);
    if (s->held) lock_note_expire(ctx, s->holder);
    uint64_t gen = s->generation, next = s->next_session;
    memset(s, 0, sizeof *s);
    s->generation = gen;
    s->next_session = next;
}

/* ---- Client ---------------------------------------------------------------------- */

static uint32_t send_msg(struct lock_ctx *ctx, struct cb_client *c, int type, uint64_t token) {
    struct lock_msg m = {0};
    m.type = type;
    m.req = ++c->req;
    m.value = c->session;
    m.token = token;
    lock_send(ctx, lock_server(ctx, 0), &m);
    return m.req;
}

static void client_init(struct lock_ctx *ctx, void *state) {
    struct cb_client *c = state;
    c->req = lock_incarnation(ctx) << 24;
}

static void send_keepalive(struct lock_ctx *ctx, struct cb_client *c) {
    if (!c->ka_out) c->ka_sent = mono(ctx);
    c->ka_out = 1;
    send_msg(ctx, c, CB_KEEPALIVE, 0);
}

static void set_local_lease(struct lock_ctx *ctx, struct cb_client *c, sim_ns end) {
    cancel(ctx, &c->jeopardy_timer);
    if (cfg(ctx)->consul) return; /* Consul's client keeps no local lease: no jeopardy */
    sim_ns d = end - mono(ctx);
    c->jeopardy_timer = lock_timer(ctx, LOCK_CLOCK_MONO, d > 0 ? d : 0, T_JEOPARDY, 0);
}

static void session_over(struct lock_ctx *ctx, struct cb_client *c) {
    lock_note(ctx, "session expired: its locks are lost", (int64_t)c->session, c->generation != 0);
    lock_state(ctx, CB_ST_SESSION_EXPIRED);
    c->session = 0;
    c->ka_out = 0;
    c->open_req = 0;
    c->jeopardy = 0;
    cancel(ctx, &c->jeopardy_timer);
    cancel(ctx, &c->grace_timer);
    cancel(ctx, &c->retry_timer);
    if (c->generation) {
        c->generation = 0;
        lock_state(ctx, CB_ST_LOCK_LOST);
        lock_lost(ctx);
    }
    if (c->acquiring) {
        c->acquiring = 0;
        c->acq_req = 0;
        lock_refused(ctx);
    }
    if (c->rel_req) {
        c->rel_req = 0;
        lock_release_done(ctx);
    }
}

static void client_acquire(struct lock_ctx *ctx, void *state) {
    struct cb_client *c = state;
    c->acquiring = 1;
    if (!c->session) {
        c->open_req = send_msg(ctx, c, CB_OPEN, 0);
        return;
    }
    c->acq_req = send_msg(ctx, c, CB_ACQUIRE, 0);
}

static void client_release(struct lock_ctx *ctx, void *state) {
    struct cb_client *c = state;
    if (!c->session || !c->generation) {
        c->generation = 0;
        lock_release_done(ctx);
        return;
    }
    c->rel_req = send_msg(ctx, c, CB_RELEASE, c->generation);
}

static void client_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct cb_client *c = state;
    if (m->type == CB_KA_REPLY) {
        if (!c->session || m->value != c->session || !c->ka_out) return;
        c->ka_out = 0;
        /* Conservative: the master answered no earlier than send + hold,
         * counted from the earliest KeepAlive not yet answered. */
        set_local_lease(ctx, c, c->ka_sent + m->b + m->ttl_ns);
        lock_state(ctx, CB_ST_KA_ANSWERED);
        if (cfg(ctx)->consul) return; /* the next renewal is on the TTL/2 timer */
        if (c->jeopardy) {
            lock_state(ctx, CB_ST_GRACE_SAFE);
            c->jeopardy = 0;
            cancel(ctx, &c->grace_timer);
            cancel(ctx, &c->retry_timer);
            lock_note(ctx, "safe: a KeepAlive got through in the grace period", (int64_t)c->session, 0);
        }
        send_keepalive(ctx, c);
        return;
    }
    if (m->type == CB_MONITOR) {
        if (!c->session || m->value != c->session) return;
        lock_note(ctx, "lock monitor: the key's session is gone (its blocking query returned)", (int64_t)c->session,
                  c->generation != 0);
        session_over(ctx, c);
        return;
    }
    if (m->type != CB_REPLY || m->req == 0) return;
    if (m->a == 0 && m->b == 1) { /* the master says the session has ended */
        if (c->session && m->value == c->session) session_over(ctx, c);
        return;
    }
    if (m->req == c->open_req) {
        c->open_req = 0;
        if (!m->a) {
            if (c->acquiring) {
                c->acquiring = 0;
                lock_refused(ctx);
            }
            return;
        }
        c->session = m->value;
        lock_state(ctx, CB_ST_SESSION_OPEN);
        c->jeopardy = 0;
        set_local_lease(ctx, c, mono(ctx) + m->ttl_ns);
        if (cfg(ctx)->consul) { /* RenewPeriodic: a renewal every TTL/2 */
            cancel(ctx, &c->retry_timer);
            c->retry_timer = lock_timer(ctx, LOCK_CLOCK_MONO, cfg(ctx)->lease_ns / 2, T_RENEW, 0);
        } else {
            send_keepalive(ctx, c);
        }
        if (c->acquiring) c->acq_req = send_msg(ctx, c, CB_ACQUIRE, 0);
    } else if (m->req == c->acq_req) {
        c->acq_req = 0;
        if (!c->acquiring) { /* granted after the program gave up: give it back */
            if (m->a) send_msg(ctx, c, CB_RELEASE, m->token);
            return;
        }
        c->acquiring = 0;
        if (m->a) {
            c->generation = m->token;
            lock_state(ctx, CB_ST_GRANTED);
            lock_granted(ctx, m->token, 0);
        } else {
            lock_refused(ctx);
        }
    } else if (m->req == c->rel_req) {
        c->rel_req = 0;
        c->generation = 0;
        lock_release_done(ctx);
    }
}

static void client_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    (void)arg;
    struct cb_client *c = state;
    switch (timer) {
    case T_JEOPARDY:
        c->jeopardy_timer = 0;
        if (!c->session) return;
        c->jeopardy = 1;
        lock_state(ctx, CB_ST_JEOPARDY);
        lock_note(ctx, "local lease expired: the session is in jeopardy (grace period begins)", (int64_t)c->session, 0);
        c->grace_timer = lock_timer(ctx, LOCK_CLOCK_MONO, cfg(ctx)->grace_ns, T_GRACE, 0);
        send_keepalive(ctx, c);
        c->retry_timer = lock_timer(ctx, LOCK_CLOCK_MONO, SIM_NS_PER_S, T_RETRY, 0);
        return;
    case T_RETRY: /* in jeopardy: try again every second */
        c->retry_timer = 0;
        if (!c->jeopardy) return;
        send_keepalive(ctx, c);
        c->retry_timer = lock_timer(ctx, LOCK_CLOCK_MONO, SIM_NS_PER_S, T_RETRY, 0);
        return;
    case T_RENEW: /* Consul: renew every TTL/2, answered or not */
        c->retry_timer = 0;
        if (!c->session) return;
        send_keepalive(ctx, c);
        c->retry_timer = lock_timer(ctx, LOCK_CLOCK_MONO, cfg(ctx)->lease_ns / 2, T_RENEW, 0);
        return;
    case T_GRACE:
        c->grace_timer = 0;
        if (c->jeopardy) session_over(ctx, c);
        return;
    default: return;
    }
}

/* CheckSequencer at the resource: is this generation still the lock's holder? */
static int resource_write(struct lock_ctx *ctx, void *state, const struct lock_write *w) {
    (void)state;
    if (cfg(ctx)->sequencer == CB_SEQ_OFF) {
        lock_state(ctx, CB_ST_SEQ_UNCHECKED);
        return LOCK_WRITE_ACCEPTED;
    }
    if (w->token == 0) {
        lock_state(ctx, CB_ST_SEQ_REJECTED);
        lock_note(ctx, "request without a sequencer: refused", 0, 0);
        return LOCK_WRITE_REJECTED_NOTOKEN;
    }
    const struct cb_server *s = lock_server_state(ctx, 0);
    if (!s) {
        lock_state(ctx, CB_ST_SEQ_REJECTED);
        lock_note(ctx, "CheckSequencer failed: the Chubby master is not answering", (int64_t)w->token, 0);
        return LOCK_WRITE_REJECTED_STALE;
    }
    if (s->held && s->generation == w->token && s->holder == w->client) {
        lock_state(ctx, CB_ST_SEQ_ACCEPTED);
        return LOCK_WRITE_ACCEPTED;
    }
    lock_state(ctx, CB_ST_SEQ_REJECTED);
    lock_note(ctx, "CheckSequencer: the sequencer's lock generation no longer holds the lock", (int64_t)w->token,
              (int64_t)s->generation);
    return LOCK_WRITE_REJECTED_STALE;
}

const struct lock_algo algo_chubby = {
        .abi = LOCK_ABI_VERSION,
        .name = "chubby",
        .summary = "Chubby: sessions with KeepAlive, local lease, jeopardy and grace; lock-delay after a failed "
                   "holder; sequencer = generation",
        .default_servers = 1,
        .max_servers = 1,
        .config_size = sizeof(struct cb_config),
        .client_size = sizeof(struct cb_client),
        .server_size = sizeof(struct cb_server),
        .config_default = defaults,
        .option = option,
        .client_init = client_init,
        .client_acquire = client_acquire,
        .client_release = client_release,
        .client_recv = client_recv,
        .client_timer = client_timer,
        .server_recv = server_recv,
        .server_timer = server_timer,
        .server_restart = server_restart,
        .resource_size = 0,
        .resource_write = resource_write,
        .state_names = state_names,
        .nstates = CB_ST_COUNT,
};
