/* consensus: a lock service replicated on a majority, in the manner of etcd
 * and ZooKeeper. Servers S1..Sn run a compact Raft; the replicated log holds
 * lock operations; leases are kept alive by the client and expired by the
 * leader; a grant's log index (its revision) is the fencing token.
 * Options, the client and the algorithm here; the log in consensus_log.c,
 * the servers in consensus_server.c; sources in consensus_int.h. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "consensus_int.h"

static const char *const state_names[CS_ST_COUNT] = {
        "follower",      "candidate",    "leader",         "stepped-down",     "lease-granted", "lease-denied",
        "lease-renewed", "lease-lapsed", "released",       "release-not-held", "log-full",      "snapshot-installed",
        "acquiring",     "granted",      "grant-too-late", "refused",          "no-leader",     "lease-lost"};

/* ---- Configuration ------------------------------------------------------------------ */

static void config_default(void *config) {
    struct cons_config *c = config;
    memset(c, 0, sizeof *c);
    c->ttl_ns = 10 * SIM_NS_PER_S;
    c->token = 1;
    c->request_timeout_ns = SIM_NS_PER_S;
    c->election_ns = SIM_NS_PER_S;         /* etcd's default election timeout */
    c->heartbeat_ns = 100 * SIM_NS_PER_MS; /* etcd's default heartbeat interval */
    c->check_quorum = 1;
    c->expiry_check_ns = 500 * SIM_NS_PER_MS; /* etcd's lessor runLoop */
    c->promote_extend_ns = -1;                /* etcd: Promote(ElectionTimeout()) */
}

static int bad(char *err, size_t n, const char *key, const char *val, const char *expected) {
    snprintf(err, n, "%s '%s' is not %s", key, val, expected);
    return LSIM_EBAD_VALUE;
}

/* Documented server bugs, switched on with bug=NAME (a comma-separated
 * list, or none), each reproducing a published report. */
static const struct {
    const char *name;
    unsigned bit;
} cons_bugs[] = {
        /* etcd-io/etcd#11456, "Locks return without checking whether the lease
     * is still held" (found by Jepsen, 2019): a waiter whose lease expired
     * while it waited for the lock is told it holds the lock when the keys
     * before its own are gone. Fixed in etcd 3.4.4 / 3.5 (Mutex.Lock checks
     * that its own key still exists: ErrSessionExpired). Needs queue=on. */
        {"etcd-11456", BUG_ETCD_11456},
};

static int parse_bugs(struct cons_config *c, const char *val, char *err, size_t n) {
    if (strcmp(val, "none") == 0) {
        c->bugs = 0;
        return 0;
    }
    unsigned bugs = 0;
    const char *p = val;
    while (*p) {
        size_t len = strcspn(p, ","), i;
        for (i = 0; i < sizeof cons_bugs / sizeof cons_bugs[0]; i++)
            if (strlen(cons_bugs[i].name) == len && strncmp(p, cons_bugs[i].name, len) == 0) break;
        if (i == sizeof cons_bugs / sizeof cons_bugs[0] || len == 0)
            return bad(err, n, "bug", val, "a known server bug (etcd-11456), or none");
        bugs |= cons_bugs[i].bit;
        p += len;
        if (*p == ',' && *++p == '\0') return bad(err, n, "bug", val, "a known server bug (etcd-11456), or none");
    }
    c->bugs = bugs;
    return 0;
}

/* bind=none | one | S2,S3,...: Jepsen's clients each talk to one server of
 * the group (client k to node k, round robin: bind=one), or as listed, the
 * k-th client (in file order) to the k-th server named, the list repeated. */
static int parse_bind(struct cons_config *c, const char *val, char *err, size_t n) {
    const char *want = "none, one, or a list of lock servers such as S2,S3";
    if (strcmp(val, "none") == 0) {
        c->nbind = 0;
        return 0;
    }
    if (strcmp(val, "one") == 0) {
        c->nbind = 1;
        c->bind[0] = 0;
        return 0;
    }
    struct cons_config tmp = *c;
    tmp.nbind = 0;
    const char *p = val;
    while (*p) {
        char num[8];
        size_t len = strcspn(p, ",");
        if (p[0] != 'S' || len < 2 || len - 1 >= sizeof num || tmp.nbind >= MAXS) return bad(err, n, "bind", val, want);
        memcpy(num, p + 1, len - 1);
        num[len - 1] = '\0';
        int64_t v;
        if (lock_parse_int(num, &v) != 0 || v < 1 || v > MAXS) return bad(err, n, "bind", val, want);
        tmp.bind[tmp.nbind++] = (uint8_t)v;
        p += len;
        if (*p == ',' && *++p == '\0') return bad(err, n, "bind", val, want);
    }
    if (tmp.nbind == 0) return bad(err, n, "bind", val, want);
    *c = tmp;
    return 0;
}

static int option(void *config, const char *key, const char *val, char *err, size_t n) {
    struct cons_config *c = config;
    sim_ns *dur = NULL;
    if (strcmp(key, "ttl") == 0) dur = &c->ttl_ns;
    else if (strcmp(key, "request-timeout") == 0) dur = &c->request_timeout_ns;
    else if (strcmp(key, "election-timeout") == 0) dur = &c->election_ns;
    else if (strcmp(key, "heartbeat") == 0) dur = &c->heartbeat_ns;
    if (dur) {
        sim_ns v;
        if (lock_parse_duration(val, &v) != 0 || v < SIM_NS_PER_US)
            return bad(err, n, key, val, "a duration of at least 1us, such as 10s");
        *dur = v;
        return 0;
    }
    if (strcmp(key, "token") == 0) {
        if (strcmp(val, "revision") == 0) c->token = 1;
        else if (strcmp(val, "none") == 0) c->token = 0;
        else return bad(err, n, key, val, "revision or none");
        return 0;
    }
    if (strcmp(key, "check-quorum") == 0) {
        if (lock_parse_bool(val, &c->check_quorum) != 0) return bad(err, n, key, val, "on or off");
        return 0;
    }
    if (strcmp(key, "expiry-check") == 0 || strcmp(key, "promote-extend") == 0) {
        int check = key[0] == 'e';
        sim_ns v;
        if (check && strcmp(val, "off") == 0) v = 0;
        else if (!check && strcmp(val, "election-timeout") == 0) v = -1;
        else if (lock_parse_duration(val, &v) != 0 || v < 0)
            return bad(err, n, key, val,
                       check ? "a duration such as 500ms, or off"
                             : "a duration such as 1s (0s for none), or election-timeout");
        if (check) c->expiry_check_ns = v;
        else c->promote_extend_ns = v;
        return 0;
    }
    if (strcmp(key, "bind") == 0) return parse_bind(c, val, err, n);
    if (strcmp(key, "bug") == 0) return parse_bugs(c, val, err, n);
    if (strcmp(key, "queue") == 0) {
        if (lock_parse_bool(val, &c->queue) != 0) return bad(err, n, key, val, "on or off");
        return 0;
    }
    if (strcmp(key, "first-candidate") == 0) {
        int64_t num;
        if (strcmp(val, "none") == 0) {
            c->first_candidate = 0;
            return 0;
        }
        if (val[0] != 'S' || lock_parse_int(val + 1, &num) != 0 || num < 1 || num > MAXS)
            return bad(err, n, key, val, "a lock server S1..S15, or none");
        c->first_candidate = (int)num;
        return 0;
    }
    snprintf(err, n,
             "unknown option '%s' for consensus; expected ttl, token, request-timeout, "
             "election-timeout, heartbeat, check-quorum, first-candidate, expiry-check, "
             "promote-extend, bind, queue, bug",
             key);
    return LSIM_EUNKNOWN_OPTION;
}

static int validate(const void *config, int nservers, char *err, size_t n) {
    const struct cons_config *c = config;
    if (c->first_candidate > nservers) {
        snprintf(err, n, "first-candidate S%d is not a lock server of this run (S1..S%d)", c->first_candidate,
                 nservers);
        return LSIM_EBAD_VALUE;
    }
    if ((c->bugs & BUG_ETCD_11456) && !c->queue) {
        snprintf(err, n, "bug=etcd-11456 is a bug of etcd's queued Mutex; it needs queue=on");
        return LSIM_EBAD_VALUE;
    }
    for (int i = 0; i < c->nbind; i++) {
        if (c->bind[i] > nservers) {
            snprintf(err, n, "bind names S%d, not a lock server of this run (S1..S%d)", c->bind[i], nservers);
            return LSIM_EBAD_VALUE;
        }
    }
    return 0;
}

/* ---- Client ---------------------------------------------------------------------------- */

/* The server a bound client talks to (bind=), or -1 when it is free to fail
 * over. Clients are the first nodes, in file order (A is 0), so lock_self is
 * the client's number k. */
static int bound_server(struct lock_ctx *ctx) {
    const struct cons_config *c = cfg(ctx);
    if (!c->nbind) return -1;
    int k = lock_self(ctx), n = lock_nservers(ctx);
    if (c->bind[0] == 0) return k % n; /* bind=one: round robin, as Jepsen's clients */
    return c->bind[k % c->nbind] - 1;
}

static void client_init(struct lock_ctx *ctx, void *state) {
    struct cons_client *c = state;
    int b = bound_server(ctx);
    c->target = b >= 0 ? b : 0; /* like an etcd client, it starts with its first endpoint */
}

/* The next server to ask: the bound one again, else the hint, else the next. */
static int next_target(struct lock_ctx *ctx, const struct cons_client *c, int hint_node) {
    int b = bound_server(ctx);
    if (b >= 0) return b;
    int n = lock_nservers(ctx);
    int hint = hint_node >= 0 ? lock_server_index(ctx, hint_node) : -1;
    return hint >= 0 && hint != c->target ? hint : (c->target + 1) % n;
}

static void send_op(struct lock_ctx *ctx, struct cons_client *c) {
    struct lock_msg m = {0};
    m.type = c->op == OP_ACQUIRE ? M_ACQUIRE : M_RELEASE;
    m.req = c->req = ++c->next_req;
    m.value = c->op == OP_ACQUIRE ? c->lease : c->held_lease;
    m.ttl_ns = cfg(ctx)->ttl_ns;
    c->sent_mono = now_mono(ctx);
    c->asked++;
    lock_send(ctx, lock_server(ctx, c->target), &m);
    c->t_request = lock_timer_rearm(ctx, c->t_request, LOCK_CLOCK_MONO, cfg(ctx)->request_timeout_ns, T_REQUEST,
                                    c->req);
}

/* The server asked is not the leader (or did not answer): follow its hint,
 * else try the next server (a bound client asks its own server again);
 * after as many tries as there are servers (twice for a release), give up
 * on this attempt. */
static void op_next(struct lock_ctx *ctx, struct cons_client *c, int hint_node) {
    int n = lock_nservers(ctx);
    c->target = next_target(ctx, c, hint_node);
    if (c->asked < (c->op == OP_ACQUIRE ? n : 2 * n)) {
        send_op(ctx, c);
        return;
    }
    int op = c->op;
    c->op = OP_NONE;
    cancel(ctx, &c->t_request);
    if (op == OP_ACQUIRE) {
        lock_note(ctx, "no leader answered; this attempt fails", c->asked, 0);
        lock_state(ctx, CS_ST_NO_LEADER);
        lock_refused(ctx);
    } else {
        lock_note(ctx, "release unanswered; the leader will expire the lease", c->asked, 0);
        c->holding = 0;
        lock_release_done(ctx);
    }
}

static void ka_send(struct lock_ctx *ctx, struct cons_client *c) {
    struct lock_msg m = {0};
    m.type = M_KEEPALIVE;
    m.req = c->ka_req = ++c->next_req;
    m.value = c->held_lease;
    c->ka_sent_mono = now_mono(ctx);
    c->ka_asked++;
    lock_send(ctx, lock_server(ctx, c->target), &m);
    c->t_ka_request = lock_timer_rearm(ctx, c->t_ka_request, LOCK_CLOCK_MONO, cfg(ctx)->request_timeout_ns,
                                       T_KEEPALIVE_REQUEST, c->ka_req);
}

static void ka_next(struct lock_ctx *ctx, struct cons_client *c, int hint_node) {
    int n = lock_nservers(ctx);
    c->target = next_target(ctx, c, hint_node);
    if (c->ka_asked < n) ka_send(ctx, c);
    else c->ka_req = 0; /* the next period tries again */
}

static void ka_stop(struct lock_ctx *ctx, struct cons_client *c) {
    cancel(ctx, &c->t_keepalive);
    cancel(ctx, &c->t_ka_request);
    c->ka_req = 0;
}

static sim_ns ka_interval(struct lock_ctx *ctx) {
    sim_ns t = cfg(ctx)->ttl_ns / 3;
    return t > 0 ? t : 1;
}

static void client_acquire(struct lock_ctx *ctx, void *state) {
    struct cons_client *c = state;
    if (!c->lease) c->lease = lock_random(ctx) | 1; /* a new session: never 0 */
    c->op = OP_ACQUIRE;
    c->asked = 0;
    lock_state(ctx, CS_ST_ACQUIRING);
    send_op(ctx, c);
}

static void client_release(struct lock_ctx *ctx, void *state) {
    struct cons_client *c = state;
    ka_stop(ctx, c);
    if (c->ka_dead) { /* its session ended while it waited: the next acquire opens a new one */
        c->lease = 0;
        c->ka_dead = 0;
    }
    c->op = OP_RELEASE;
    c->asked = 0;
    send_op(ctx, c); /* sent even if the lease is known lost: the server decides */
}

/* A waiting Lock call lives on one connection, to the server that answered
 * "queued" (wait_server). A keep-alive renewed through another server, or
 * through a process of that server that has restarted since (its boots
 * differ), shows that the connection is gone: etcd's client never waits on
 * a dead connection (the client design document, "clients should never
 * deadlock waiting for a server to come back from offline"). Without bind=
 * the Mutex runs in the client library, whose watch (waitDeletes) is
 * resumed on the connection the client now has (clientv3's watcher
 * re-creates its streams on the new endpoint): the call is sent again
 * there; a retry under the same lease finds its key, queued or holding
 * (apply: "a retry of a call already queued moves the answer to it").
 * With bind= the call is v3lock's Lock RPC on the bound server, which the
 * crash ended: gRPC fails it (Unavailable), and clientv3 does not retry a
 * call that is not repeatable, so the client is told it failed; it keeps
 * its session, so its next attempt finds its key again. */
static void wait_connection_lost(struct lock_ctx *ctx, struct cons_client *c) {
    if (bound_server(ctx) < 0) {
        lock_note(ctx, "its connection moved to another server: the waiting Lock call resumes there",
                  c->wait_server + 1, c->target + 1);
        c->wait_server = c->target;
        c->asked = 0;
        send_op(ctx, c);
        return;
    }
    lock_note(ctx, "the Lock call fails: the server it waited in restarted, its connection gone", c->wait_server + 1,
              (int64_t)c->wait_boots);
    cancel(ctx, &c->t_request);
    ka_stop(ctx, c);
    c->op = OP_NONE;
    c->queued = 0;
    lock_refused(ctx);
}

static void on_keepalive_reply(struct lock_ctx *ctx, struct cons_client *c, const struct lock_msg *m) {
    cancel(ctx, &c->t_ka_request);
    if (m->a == R_REDIRECT) {
        ka_next(ctx, c, (int)m->b);
        return;
    }
    c->ka_req = 0;
    c->target = lock_server_index(ctx, m->from);
    if (m->a == R_RENEWED) c->renewed_from = c->ka_sent_mono;
    if (m->a == R_RENEWED && c->queued && c->op == OP_ACQUIRE && !c->holding &&
        (c->target != c->wait_server || m->value != c->wait_boots)) {
        wait_connection_lost(ctx, c);
        return;
    }
    if (m->a == R_LEASE_GONE && c->queued && !c->holding) {
        /* etcd 3.4's Mutex.Lock watches only the keys before its own: the
         * session's end does not end the wait (etcd-io/etcd#19597). The
         * keep-alives stop, as clientv3's keep-alive loop does. */
        ka_stop(ctx, c);
        c->ka_dead = 1;
        lock_note(ctx, "keep-alive refused while waiting: its lease is gone; the wait goes on", 0, 0);
        return;
    }
    if (m->a == R_LEASE_GONE && c->holding) {
        /* The lease is gone: so is the lock. A new session (lease) serves
         * the next acquire. */
        c->holding = 0;
        ka_stop(ctx, c);
        c->lease = 0;
        lock_note(ctx, "keep-alive refused: its lease is gone", 0, 0);
        lock_state(ctx, CS_ST_LEASE_LOST);
        lock_lost(ctx);
    }
}

static void client_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct cons_client *c = state;
    if (m->type != M_REPLY) return;
    if (c->ka_req && m->req == c->ka_req) {
        on_keepalive_reply(ctx, c, m);
        return;
    }
    if (c->op == OP_NONE || m->req != c->req) return; /* a late answer to an earlier request */
    cancel(ctx, &c->t_request);
    if (m->a == R_REDIRECT) {
        op_next(ctx, c, (int)m->b);
        return;
    }
    if (m->a == R_QUEUED && c->op == OP_ACQUIRE) {
        /* Its key is put; the answer comes when the older keys are gone.
         * Meanwhile the session (lease) is kept alive. */
        c->target = lock_server_index(ctx, m->from);
        c->wait_server = c->target;
        c->wait_boots = m->value;
        if (!c->queued) {
            c->queued = 1;
            c->renewed_from = c->sent_mono;
            c->held_lease = c->lease;
            c->ka_asked = 0;
            cancel(ctx, &c->t_keepalive);
            c->t_keepalive = lock_timer(ctx, LOCK_CLOCK_MONO, ka_interval(ctx), T_KEEPALIVE, 0);
            lock_note(ctx, "waits for the keys before its own to go", (int64_t)m->token, 0);
        }
        return;
    }
    int op = c->op;
    int was_queued = c->queued;
    c->op = OP_NONE;
    c->queued = 0;
    c->target = lock_server_index(ctx, m->from);
    if (op == OP_ACQUIRE && m->a == R_SESSION_EXPIRED) {
        /* Mutex.Lock's ErrSessionExpired: a new session serves the retry. */
        ka_stop(ctx, c);
        c->lease = 0;
        c->ka_dead = 0;
        lock_note(ctx, "the lock call fails: its session expired while it waited", 0, 0);
        lock_refused(ctx);
        return;
    }
    if (op == OP_ACQUIRE && m->a == R_GRANTED && was_queued) {
        /* The wait is not a round trip: the client takes the lock as told
         * (Mutex.Lock returns nil), with the lease as the server reports it. */
        c->holding = 1;
        c->held_lease = c->lease;
        c->revision = m->token;
        if (!c->ka_dead && !c->t_keepalive) {
            c->ka_asked = 0;
            c->t_keepalive = lock_timer(ctx, LOCK_CLOCK_MONO, ka_interval(ctx), T_KEEPALIVE, 0);
        }
        /* A bound server's Lock call does not know the lease's deadline
         * (ttl_ns 0): the client counts it from its own last renewal, as
         * Chubby's client does, and never as 0 (0 means "until released"). */
        sim_ns left = m->ttl_ns;
        if (left <= 0) left = cfg(ctx)->ttl_ns - (now_mono(ctx) - c->renewed_from);
        lock_granted(ctx, cfg(ctx)->token ? c->revision : 0, left > 0 ? left : 1);
        return;
    }
    /* Chubby's conservative client lease: what the server had left, less the
     * whole round trip, since the server's clock started no earlier than the
     * request left. A grant that comes back too late is no grant. */
    sim_ns validity = m->ttl_ns - (now_mono(ctx) - c->sent_mono);
    if (op == OP_ACQUIRE && m->a == R_GRANTED && validity <= 0) {
        lock_note(ctx, "the grant came back after its lease would have run out; ignored", (int64_t)m->token, validity);
        lock_state(ctx, CS_ST_GRANT_TOO_LATE);
        lock_refused(ctx);
    } else if (op == OP_ACQUIRE && m->a == R_GRANTED) {
        c->holding = 1;
        c->held_lease = c->lease;
        c->revision = m->token;
        c->ka_asked = 0;
        c->t_keepalive = lock_timer(ctx, LOCK_CLOCK_MONO, ka_interval(ctx), T_KEEPALIVE, 0);
        lock_state(ctx, CS_ST_GRANTED);
        lock_granted(ctx, cfg(ctx)->token ? c->revision : 0, validity);
    } else if (op == OP_ACQUIRE) {
        lock_state(ctx, CS_ST_REFUSED);
        lock_refused(ctx);
    } else {
        c->holding = 0;
        lock_release_done(ctx);
    }
}

static void client_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    struct cons_client *c = state;
    switch (timer) {
    case T_REQUEST:
        if (c->op == OP_NONE || arg != c->req) return;
        c->t_request = 0;
        op_next(ctx, c, -1);
        break;
    case T_KEEPALIVE:
        c->t_keepalive = 0;
        if (!c->holding && !c->queued) return;
        c->t_keepalive = lock_timer(ctx, LOCK_CLOCK_MONO, ka_interval(ctx), T_KEEPALIVE, 0);
        if (!c->ka_req) {
            c->ka_asked = 0;
            ka_send(ctx, c);
        }
        break;
    case T_KEEPALIVE_REQUEST:
        if (!c->ka_req || arg != c->ka_req) return;
        c->t_ka_request = 0;
        ka_next(ctx, c, -1);
        break;
    default: break;
    }
}

const struct lock_algo algo_consensus = {
        .abi = LOCK_ABI_VERSION,
        .name = "consensus",
        .summary = "Raft-replicated lease service (etcd/ZooKeeper-like): majority commit, "
                   "leader-expired leases, revision as fencing token; bug=etcd-11456",
        .default_servers = 3,
        .max_servers = 0,
        .config_size = sizeof(struct cons_config),
        .client_size = sizeof(struct cons_client),
        .server_size = sizeof(struct cons_server),
        .server_zero_size = offsetof(struct cons_server, log), /* the log ring is read only up to last_index */
        .config_default = config_default,
        .option = option,
        .validate = validate,
        .client_init = client_init,
        .client_acquire = client_acquire,
        .client_release = client_release,
        .client_recv = client_recv,
        .client_timer = client_timer,
        .server_init = cons_server_init,
        .server_recv = cons_server_recv,
        .server_timer = cons_server_timer,
        .server_restart = cons_server_restart,
        .server_control = cons_server_control,
        .state_names = state_names,
        .nstates = CS_ST_COUNT,
};
