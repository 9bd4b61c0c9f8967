/* The Redis-like lock store and its client (see kv.h). Semantics follow the
 * Redis documentation of SET key value NX PX ttl, DEL, PEXPIRE and the
 * compare-and-delete Lua script of the single-instance locking pattern:
 * keys expire by the server's own clock, lazily on access and actively by
 * a timer.
 *
 * Replication follows the Redis replication documentation, in our own words:
 *  - It is asynchronous. The primary applies a write, answers the client, and
 *    streams the write to its replicas afterwards (here after repl-lag, by the
 *    primary's own monotonic clock, plus the network's latency). A primary
 *    that fails before the stream leaves loses the write for good.
 *  - Replicas acknowledge what they have applied (REPLCONF ACK). WAIT N T
 *    blocks the client until N replicas acknowledged its write or T passed,
 *    and it does NOT roll the write back when it times out: the key stays on
 *    the primary while the client is told "no" (the documentation: WAIT
 *    "does not make Redis a strongly consistent store").
 *  - min-replicas-to-write N with min-replicas-max-lag L: the primary refuses
 *    writes (NOREPLICAS) unless N replicas acknowledged within the last L.
 *    That bounds how long a primary cut off from its replicas keeps
 *    accepting writes; it does not make one write reach any replica.
 *  - Replicas refuse client commands (a read-only replica; here a redirect
 *    naming the primary they follow, as a Sentinel-aware client would learn).
 *  - Failover is Sentinel's: an operator promotes a replica (`promote S2`),
 *    which serves exactly what it had replicated and announces a new
 *    configuration epoch. A primary that hears a higher epoch steps down to
 *    a replica and takes the new primary's data, losing its own unreplicated
 *    writes; until it hears it, there are two primaries (split brain).
 *
 * The stream carries the whole (single-key) state with its offset rather
 * than commands: for one key the two are the same, and a lost or reordered
 * message is healed by the next one or by the primary's heartbeat. The
 * fencing-token counter travels with the key, so a promoted replica goes on
 * with the sequence only if it had the last grant. */
#include "kv.h"

#include <stdio.h>
#include <string.h>

_Static_assert(KV_MAX_SERVERS == LOCK_MAX_SERVERS, "kv.h's KV_MAX_SERVERS must match LOCK_MAX_SERVERS");

enum { PHASE_NONE, PHASE_ACQUIRE, PHASE_RELEASE, PHASE_RELEASE_GET, PHASE_RELEASE_DEL };
enum { T_EXPIRY = 1, T_TIMEOUT, T_REPL, T_PING, T_WAIT, T_CRON };

void kv_config_default(struct kv_config *c, const char *algo_name, unsigned allowed) {
    memset(c, 0, sizeof *c);
    c->ttl_ns = 30 * SIM_NS_PER_S;
    c->release = KV_RELEASE_CAD;
    c->unique_value = 1;
    c->first_token = 1;
    c->expiry_clock = LOCK_CLOCK_WALL;
    /* Redis's own rule at the deadline (redis/src/db.c, keyIsExpired: `return
     * now > when;`, both in milliseconds): the store is Redis, so setnx, lease,
     * lease-renew, setnx-expire, setnx-timestamp and redlock keep it. An
     * algorithm that models another store says so in its defaults
     * (fenced-lease). */
    c->deadline = KV_DEADLINE_REDIS;
    c->persistence = KV_PERSIST_NONE;
    c->request_timeout_ns = SIM_NS_PER_S;
    c->allowed = allowed;
    c->algo_name = algo_name;
    c->replication = KV_REPL_OFF;
    c->wait_timeout_ns = SIM_NS_PER_S;
    c->min_replicas_max_lag_ns = 10 * SIM_NS_PER_S; /* Redis's default */
    c->repl_timeout_ns = 60 * SIM_NS_PER_S;         /* Redis's default */
    for (int i = 0; i < KV_MAX_SERVERS; i++) {
        c->srv_min_replicas[i] = -1;
        c->srv_max_lag_ns[i] = -1;
    }
}

void kv_config_replicated(struct kv_config *c) {
    c->replication = KV_REPL_ASYNC;
    c->allowed |= KV_OPT_REPLICATION;
}

static const struct {
    const char *key;
    unsigned bit;
} kv_keys[] = {
    {"ttl", KV_OPT_TTL},
    {"release", KV_OPT_RELEASE},
    {"value", KV_OPT_VALUE},
    {"first-token", KV_OPT_FIRST_TOKEN},
    {"expiry-clock", KV_OPT_EXPIRY_CLOCK},
    {"deadline", KV_OPT_DEADLINE},
    {"persistence", KV_OPT_PERSISTENCE},
    {"request-timeout", KV_OPT_TIMEOUT},
    {"repl-lag", KV_OPT_REPLICATION},
    {"wait", KV_OPT_REPLICATION},
    {"wait-timeout", KV_OPT_REPLICATION},
    {"min-replicas-to-write", KV_OPT_REPLICATION},
    {"min-replicas-max-lag", KV_OPT_REPLICATION},
    {"repl-timeout", KV_OPT_REPLICATION},
};

static int bad(char *err, size_t n, const char *key, const char *val, const char *expected) {
    snprintf(err, n, "%s '%s' is not %s", key, val, expected);
    return LSIM_EBAD_VALUE;
}

static int replication_option(struct kv_config *c, const char *key, const char *val, char *err,
                              size_t n) {
    int64_t v;
    if (strcmp(key, "repl-lag") == 0) {
        if (lock_parse_duration(val, &c->repl_lag_ns) != 0)
            return bad(err, n, key, val, "a duration such as 500ms (0 = no lag beyond the network)");
        return 0;
    }
    if (strcmp(key, "wait") == 0 || strcmp(key, "min-replicas-to-write") == 0) {
        if (lock_parse_int(val, &v) != 0 || v < 0 || v >= KV_MAX_SERVERS)
            return bad(err, n, key, val, "a number of replicas from 0 to 14");
        if (key[0] == 'w') c->wait_replicas = (int)v;
        else c->min_replicas = (int)v;
        return 0;
    }
    if (strcmp(key, "repl-timeout") == 0) {
        if (lock_parse_duration(val, &c->repl_timeout_ns) != 0 || c->repl_timeout_ns <= 0)
            return bad(err, n, key, val, "a positive duration such as 60s");
        return 0;
    }
    if (strcmp(key, "wait-timeout") == 0) {
        if (lock_parse_duration(val, &c->wait_timeout_ns) != 0 || c->wait_timeout_ns <= 0)
            return bad(err, n, key, val,
                       "a positive duration (Redis's WAIT 0 blocks forever, which a lock client cannot afford)");
        return 0;
    }
    /* min-replicas-max-lag */
    if (lock_parse_duration(val, &c->min_replicas_max_lag_ns) != 0 || c->min_replicas_max_lag_ns <= 0)
        return bad(err, n, key, val, "a positive duration such as 10s");
    return 0;
}

/* `S<n>.KEY=VALUE`: one server's own min-replicas-to-write or
 * min-replicas-max-lag, as each Redis server reads its own configuration (a
 * replica promoted by Sentinel keeps what it was configured with). Returns 1
 * when key has no `S<n>.` prefix or the store is not replicated (the key is
 * then unknown like any other). */
static int server_option(struct kv_config *c, const char *key, const char *val, char *err, size_t n) {
    const char *dot = strchr(key, '.');
    if (key[0] != 'S' || !dot || dot == key + 1 || !(c->allowed & KV_OPT_REPLICATION)) return 1;
    int num = 0;
    for (const char *d = key + 1; d < dot; d++) {
        if (*d < '0' || *d > '9' || num > KV_MAX_SERVERS) return 1;
        num = num * 10 + (*d - '0');
    }
    const char *sub = dot + 1;
    int lag = strcmp(sub, "min-replicas-max-lag") == 0;
    if (!lag && strcmp(sub, "min-replicas-to-write") != 0) {
        snprintf(err, n, "unknown option '%s' for %s; expected a server's own min-replicas-to-write or "
                 "min-replicas-max-lag (as in S2.min-replicas-to-write=0)", key, c->algo_name);
        return LSIM_EUNKNOWN_OPTION;
    }
    if (num < 1 || num > KV_MAX_SERVERS) {
        snprintf(err, n, "option '%s' names no lock server; expected S1..S%d before the '.'", key, KV_MAX_SERVERS);
        return LSIM_EBAD_VALUE;
    }
    struct kv_config tmp = *c; /* the shared rules check the value */
    int rc = replication_option(&tmp, sub, val, err, n);
    if (rc != 0) return rc;
    if (lag) c->srv_max_lag_ns[num - 1] = tmp.min_replicas_max_lag_ns;
    else c->srv_min_replicas[num - 1] = tmp.min_replicas;
    return 0;
}

int kv_validate(const void *config, int nservers, char *err, size_t n) {
    const struct kv_config *c = config;
    for (int i = nservers; i < KV_MAX_SERVERS; i++)
        if (c->srv_min_replicas[i] >= 0 || c->srv_max_lag_ns[i] >= 0) {
            snprintf(err, n, "a per-server option names S%d, but this run has %d lock server%s (S1..S%d)", i + 1,
                     nservers, nservers == 1 ? "" : "s", nservers);
            return LSIM_EBAD_VALUE;
        }
    return 0;
}

int kv_option(struct kv_config *c, const char *key, const char *val, char *err, size_t n) {
    int per_server = server_option(c, key, val, err, n);
    if (per_server != 1) return per_server;
    unsigned bit = 0;
    for (size_t i = 0; i < sizeof kv_keys / sizeof kv_keys[0]; i++)
        if (strcmp(kv_keys[i].key, key) == 0) bit = kv_keys[i].bit;
    if (!(bit & c->allowed)) {
        char list[512] = "";
        for (size_t i = 0; i < sizeof kv_keys / sizeof kv_keys[0]; i++)
            if (kv_keys[i].bit & c->allowed) {
                size_t l = strlen(list);
                snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", kv_keys[i].key);
            }
        if (c->extra_options && c->extra_options[0]) {
            size_t l = strlen(list);
            snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", c->extra_options);
        }
        snprintf(err, n, "unknown option '%s' for %s; expected %s", key, c->algo_name,
                 list[0] ? list : "no options");
        return LSIM_EUNKNOWN_OPTION;
    }
    int64_t v;
    switch (bit) {
    case KV_OPT_TTL:
        if (lock_parse_duration(val, &c->ttl_ns) != 0 || c->ttl_ns <= 0)
            return bad(err, n, "ttl", val, "a positive duration such as 30s");
        return 0;
    case KV_OPT_RELEASE:
        if (strcmp(val, "compare-and-delete") == 0) c->release = KV_RELEASE_CAD;
        else if (strcmp(val, "del") == 0) c->release = KV_RELEASE_DEL;
        else if (strcmp(val, "get-then-del") == 0) c->release = KV_RELEASE_GET_DEL;
        else return bad(err, n, "release", val, "one of compare-and-delete, del, get-then-del");
        return 0;
    case KV_OPT_VALUE:
        if (strcmp(val, "unique") == 0) c->unique_value = 1;
        else if (strcmp(val, "constant") == 0) c->unique_value = 0;
        else return bad(err, n, "value", val, "unique or constant");
        return 0;
    case KV_OPT_FIRST_TOKEN:
        if (lock_parse_int(val, &v) != 0 || v < 1)
            return bad(err, n, "first-token", val, "a positive integer");
        c->first_token = (uint64_t)v;
        return 0;
    case KV_OPT_EXPIRY_CLOCK:
        if (strcmp(val, "wall") == 0) c->expiry_clock = LOCK_CLOCK_WALL;
        else if (strcmp(val, "monotonic") == 0) c->expiry_clock = LOCK_CLOCK_MONO;
        else return bad(err, n, "expiry-clock", val, "wall or monotonic");
        return 0;
    case KV_OPT_DEADLINE:
        if (strcmp(val, "redis") == 0) c->deadline = KV_DEADLINE_REDIS;
        else if (strcmp(val, "inclusive") == 0) c->deadline = KV_DEADLINE_INCLUSIVE;
        else if (strcmp(val, "exclusive") == 0) c->deadline = KV_DEADLINE_EXCLUSIVE;
        else return bad(err, n, "deadline", val,
                        "redis (kept through the deadline's millisecond), inclusive (gone at now >= "
                        "deadline) or exclusive (gone at now > deadline)");
        return 0;
    case KV_OPT_PERSISTENCE:
        if (strcmp(val, "none") == 0) c->persistence = KV_PERSIST_NONE;
        else if (strcmp(val, "always") == 0) c->persistence = KV_PERSIST_ALWAYS;
        else return bad(err, n, "persistence", val, "none or always");
        return 0;
    case KV_OPT_TIMEOUT:
        if (lock_parse_duration(val, &c->request_timeout_ns) != 0 || c->request_timeout_ns <= 0)
            return bad(err, n, "request-timeout", val, "a positive duration");
        return 0;
    case KV_OPT_REPLICATION:
        return replication_option(c, key, val, err, n);
    }
    return LSIM_EBAD_VALUE;
}

/* ---- Server ---------------------------------------------------------------- */

const char *const kv_state_names[KV_ST_COUNT] = {KV_STATE_NAMES};

static const struct kv_config *cfg(struct lock_ctx *ctx) { return lock_config(ctx); }

/* Replication applies: on, and more than one server in this run. */
static int replicating(struct lock_ctx *ctx) {
    return cfg(ctx)->replication != KV_REPL_OFF && lock_nservers(ctx) > 1;
}

static int self_index(struct lock_ctx *ctx) { return lock_server_index(ctx, lock_self(ctx)); }

static sim_ns mono(struct lock_ctx *ctx) { return lock_now(ctx, LOCK_CLOCK_MONO); }

static void cancel(struct lock_ctx *ctx, uint64_t *handle) {
    if (*handle) lock_cancel(ctx, *handle);
    *handle = 0;
}

/* Expiry at the exact tick, as Redis has it (db.c, keyIsExpired: `return
 * now > when;`, both in milliseconds; SET PX stores when = mstime() + ttl).
 * A key is kept while the server's clock, in whole milliseconds, is at or
 * before its deadline's millisecond, and is gone from the next millisecond
 * on: with a TTL of 10 s set at 0, a GET at 10.000999 s still finds it and
 * one at 10.001 s does not. Redis's active expiry cycle applies the same
 * test (`now > t`), so the first instant a key counts as expired is the
 * start of the millisecond after its deadline. Returns that instant. */
static sim_ns redis_expired_from(sim_ns expires) {
    sim_ns ms = expires / SIM_NS_PER_MS;
    if (expires % SIM_NS_PER_MS < 0) ms--; /* floor: a wall clock may be set before 0 */
    return (ms + 1) * SIM_NS_PER_MS;
}

/* The first instant a key with this deadline counts as expired under rule
 * (enum kv_deadline). The stores that are not Redis judge at full resolution:
 * inclusive (`now >= deadline`: ShedLock's `lock_until <= now`, etcd's lessor
 * `Remaining() <= 0`) or exclusive (`now > deadline`). */
static sim_ns expired_from(int rule, sim_ns expires) {
    switch (rule) {
    case KV_DEADLINE_INCLUSIVE: return expires;
    case KV_DEADLINE_EXCLUSIVE: return expires + 1;
    default: return redis_expired_from(expires);
    }
}

int kv_key_expired(int rule, sim_ns now, sim_ns expires) {
    return expires != SIM_NEVER && now >= expired_from(rule, expires);
}

static void arm_expiry(struct lock_ctx *ctx, struct kv_server *s) {
    if (s->expiry_timer) lock_cancel(ctx, s->expiry_timer);
    s->expiry_timer = 0;
    if (s->held && s->expires_local != SIM_NEVER) {
        sim_ns left = expired_from(cfg(ctx)->deadline, s->expires_local) - lock_now(ctx, cfg(ctx)->expiry_clock);
        s->expiry_timer = lock_timer(ctx, cfg(ctx)->expiry_clock, left > 0 ? left : 0, T_EXPIRY, 0);
    }
}

static void replicate(struct lock_ctx *ctx, struct kv_server *s);

/* Lazy expiry, as Redis does on every access. Only a primary expires keys:
 * a replica waits for its primary's DEL, as Redis replicas do. */
static void expire_if_due(struct lock_ctx *ctx, struct kv_server *s) {
    if (s->role != KV_ROLE_PRIMARY) return;
    if (s->held && kv_key_expired(cfg(ctx)->deadline, lock_now(ctx, cfg(ctx)->expiry_clock), s->expires_local)) {
        s->held = 0;
        lock_note_expire(ctx, s->owner);
        lock_state(ctx, KV_ST_EXPIRED_UNKNOWN);
        if (s->expiry_timer) lock_cancel(ctx, s->expiry_timer);
        s->expiry_timer = 0;
        replicate(ctx, s);
    }
}

static void reset_acks(struct kv_server *s) {
    for (int i = 0; i < KV_MAX_SERVERS; i++) {
        s->ack_offset[i] = -1;
        s->ack_at[i] = SIM_NEVER;
        s->link_closed[i] = 0; /* a new primary's replicas attach afresh */
    }
}

/* This server's own min-replicas-to-write and min-replicas-max-lag: its
 * `S<n>.` option, else the lock line's. */
static int min_replicas_here(struct lock_ctx *ctx) {
    int i = self_index(ctx);
    int v = i >= 0 ? cfg(ctx)->srv_min_replicas[i] : -1;
    return v >= 0 ? v : cfg(ctx)->min_replicas;
}

static sim_ns max_lag_here(struct lock_ctx *ctx) {
    int i = self_index(ctx);
    sim_ns v = i >= 0 ? cfg(ctx)->srv_max_lag_ns[i] : -1;
    return v >= 0 ? v : cfg(ctx)->min_replicas_max_lag_ns;
}

static void arm_ping(struct lock_ctx *ctx, struct kv_server *s, sim_ns delay) {
    cancel(ctx, &s->ping_timer);
    if (replicating(ctx) && s->role == KV_ROLE_PRIMARY)
        s->ping_timer = lock_timer(ctx, LOCK_CLOCK_MONO, delay, T_PING, 0);
}

void kv_server_init(struct lock_ctx *ctx, void *state) {
    struct kv_server *s = state;
    s->next_token = cfg(ctx)->first_token;
    s->owner = -1;
    s->role = KV_ROLE_PRIMARY;
    s->epoch = 1;
    s->primary = lock_self(ctx);
    s->synced = 1; /* every server starts empty at offset 0, as the primary does */
    reset_acks(s);
    if (!replicating(ctx)) return;
    if (self_index(ctx) > 0) {
        s->role = KV_ROLE_REPLICA;
        s->primary = lock_server(ctx, 0);
    } else {
        arm_ping(ctx, s, 0); /* first heartbeat at once: replicas answer with an ack */
    }
}

static void reply_err(struct lock_ctx *ctx, int to, uint32_t req, int64_t a, uint64_t value,
                      uint64_t token, int64_t err) {
    struct lock_msg r = {0};
    r.type = KV_REPLY;
    r.req = req;
    r.a = a;
    r.b = err;
    r.value = value;
    r.token = token;
    lock_send(ctx, to, &r);
}

static void reply(struct lock_ctx *ctx, const struct lock_msg *m, int64_t a, uint64_t value,
                  uint64_t token) {
    reply_err(ctx, m->from, m->req, a, value, token, KV_ERR_NONE);
}

static void delete_entry(struct lock_ctx *ctx, struct kv_server *s, int requester) {
    lock_note_delete(ctx, requester, s->owner);
    lock_state(ctx, requester == s->owner ? KV_ST_RELEASED : KV_ST_DELETED_ANOTHERS);
    s->held = 0;
    if (s->expiry_timer) lock_cancel(ctx, s->expiry_timer);
    s->expiry_timer = 0;
    replicate(ctx, s);
}

/* ---- Replication: the primary's side ---------------------------------------- */

static struct kv_snap take_snapshot(const struct kv_server *s) {
    struct kv_snap p = {0};
    p.held = s->held;
    p.owner = s->owner;
    p.value = s->held ? s->value : 0;
    p.last_token = s->next_token - 1;
    p.expires_local = s->held ? s->expires_local : SIM_NEVER;
    p.epoch = s->epoch;
    p.offset = s->offset;
    return p;
}

/* Expiry on the wire. By the wall clock it is the primary's absolute
 * deadline, as Redis 7 propagates SET PX as SET PXAT: a replica whose wall
 * clock disagrees expires the key at another true time. A monotonic clock
 * means nothing on another machine, so it travels as the time left when the
 * message leaves; the replica counts from when it arrives. */
static sim_ns encode_expiry(struct lock_ctx *ctx, const struct kv_snap *p) {
    if (!p->held || p->expires_local == SIM_NEVER) return SIM_NEVER;
    if (cfg(ctx)->expiry_clock == LOCK_CLOCK_WALL) return p->expires_local;
    return p->expires_local - mono(ctx);
}

static sim_ns decode_expiry(struct lock_ctx *ctx, sim_ns wire) {
    if (wire == SIM_NEVER) return SIM_NEVER;
    if (cfg(ctx)->expiry_clock == LOCK_CLOCK_WALL) return wire;
    return mono(ctx) + wire;
}

static void snapshot_msg(struct lock_ctx *ctx, const struct kv_snap *p, struct lock_msg *out) {
    struct lock_msg m = {0};
    m.type = KV_REPL;
    m.req = p->epoch;
    m.a = p->offset;
    m.value = p->value;
    m.token = p->last_token;
    m.b = p->held ? p->owner : -1;
    m.ttl_ns = encode_expiry(ctx, p);
    *out = m;
}

/* To every other server whose replication link is not closed: a primary
 * streams nothing down a closed link. */
static void send_snapshot(struct lock_ctx *ctx, const struct kv_server *s, const struct kv_snap *p) {
    struct lock_msg m;
    snapshot_msg(ctx, p, &m);
    int me = self_index(ctx);
    for (int i = 0; i < lock_nservers(ctx); i++)
        if (i != me && !s->link_closed[i]) lock_send(ctx, lock_server(ctx, i), &m);
}

static void arm_backlog(struct lock_ctx *ctx, struct kv_server *s) {
    cancel(ctx, &s->repl_timer);
    if (s->bl_len > 0)
        s->repl_timer = lock_timer(ctx, LOCK_CLOCK_MONO, s->backlog[s->bl_head].due_mono - mono(ctx),
                                   T_REPL, 0);
}

/* Stream the current state to the other servers, now or after repl-lag. */
static void stream(struct lock_ctx *ctx, struct kv_server *s) {
    if (!replicating(ctx)) return;
    struct kv_snap p = take_snapshot(s);
    if (cfg(ctx)->repl_lag_ns <= 0) {
        send_snapshot(ctx, s, &p);
        return;
    }
    if (s->bl_len == KV_REPL_BACKLOG) {
        /* Like a replica that falls out of Redis's backlog: it misses the
         * oldest held-back state and catches up with a later one. */
        lock_note(ctx, "replication backlog full: the oldest held-back write is skipped", /* a = its offset */
                  s->backlog[s->bl_head].offset, 0);
        s->bl_head = (s->bl_head + 1) % KV_REPL_BACKLOG;
        s->bl_len--;
    }
    p.due_mono = mono(ctx) + cfg(ctx)->repl_lag_ns;
    s->backlog[(s->bl_head + s->bl_len) % KV_REPL_BACKLOG] = p;
    s->bl_len++;
    if (s->bl_len == 1) arm_backlog(ctx, s);
}

/* A write was applied on this primary: it gets the next offset and is
 * streamed. (With one server the offset still counts, for WAIT.) */
static void replicate(struct lock_ctx *ctx, struct kv_server *s) {
    if (cfg(ctx)->replication == KV_REPL_OFF || s->role != KV_ROLE_PRIMARY) return;
    s->offset++;
    stream(ctx, s);
}

static void backlog_due(struct lock_ctx *ctx, struct kv_server *s) {
    s->repl_timer = 0;
    while (s->bl_len > 0 && s->backlog[s->bl_head].due_mono <= mono(ctx)) {
        send_snapshot(ctx, s, &s->backlog[s->bl_head]);
        s->bl_head = (s->bl_head + 1) % KV_REPL_BACKLOG;
        s->bl_len--;
    }
    arm_backlog(ctx, s);
}

static int replicas_at(struct lock_ctx *ctx, const struct kv_server *s, int64_t offset) {
    int n = 0, me = self_index(ctx);
    for (int i = 0; i < lock_nservers(ctx); i++)
        if (i != me && !s->link_closed[i] && s->ack_at[i] != SIM_NEVER && s->ack_offset[i] >= offset) n++;
    return n;
}

/* Redis's count (replication.c, refreshGoodSlavesCount): a replica is good
 * while its link is up (replstate ONLINE) and its last REPLCONF ACK is no
 * older than min-replicas-max-lag. A closed link (CLIENT KILL TYPE replica,
 * or a replica timed out) drops out of the count at once: Redis refreshes
 * it when it frees the replica's client. (Redis measures the lag in whole
 * seconds of server.unixtime; here it is the exact age by the primary's
 * monotonic clock.) */
static int good_replicas(struct lock_ctx *ctx, const struct kv_server *s) {
    int n = 0, me = self_index(ctx);
    sim_ns now = mono(ctx), lag = max_lag_here(ctx);
    for (int i = 0; i < lock_nservers(ctx); i++)
        if (i != me && !s->link_closed[i] && s->ack_at[i] != SIM_NEVER && now - s->ack_at[i] <= lag) n++;
    return n;
}

static void wait_free(struct lock_ctx *ctx, struct kv_wait *w) {
    cancel(ctx, &w->timer);
    w->used = 0;
}

static void check_waits(struct lock_ctx *ctx, struct kv_server *s) {
    for (int k = 0; k < KV_MAX_WAITS; k++) {
        struct kv_wait *w = &s->waits[k];
        if (!w->used) continue;
        int acked = replicas_at(ctx, s, w->offset);
        if (acked < cfg(ctx)->wait_replicas) continue;
        lock_note(ctx, "WAIT: enough replicas acknowledged the grant; answering", /* a = replicas */
                  acked, w->client);
        reply_err(ctx, w->client, w->req, 1, w->value, w->token, KV_ERR_NONE);
        wait_free(ctx, w);
    }
}

/* The SET has been applied (and streamed); its answer waits for acks. */
static void wait_begin(struct lock_ctx *ctx, struct kv_server *s, const struct lock_msg *m) {
    for (int k = 0; k < KV_MAX_WAITS; k++) {
        struct kv_wait *w = &s->waits[k];
        if (w->used) continue;
        w->used = 1;
        w->client = m->from;
        w->req = m->req;
        w->value = s->value;
        w->token = s->token;
        w->offset = s->offset;
        w->timer = lock_timer(ctx, LOCK_CLOCK_MONO, cfg(ctx)->wait_timeout_ns, T_WAIT, (uint64_t)k);
        check_waits(ctx, s);
        return;
    }
    lock_note(ctx, "WAIT: too many blocked clients; the SET stays applied, answered no", m->from, 0);
    reply_err(ctx, m->from, m->req, 0, 0, 0, KV_ERR_WAIT_TIMEOUT);
}

static void wait_timeout(struct lock_ctx *ctx, struct kv_server *s, uint64_t slot) {
    if (slot >= KV_MAX_WAITS || !s->waits[slot].used) return;
    struct kv_wait *w = &s->waits[slot];
    w->timer = 0;
    /* WAIT returns fewer replicas than asked; nothing is undone. */
    lock_state(ctx, KV_ST_WAIT_TIMEOUT);
    lock_note(ctx, "WAIT timed out: the client is told no, but the SET stays on the primary (no rollback)",
              replicas_at(ctx, s, w->offset), cfg(ctx)->wait_replicas); /* a = acked, b = wanted */
    reply_err(ctx, w->client, w->req, 0, 0, 0, KV_ERR_WAIT_TIMEOUT);
    w->used = 0;
}

/* ---- Replication: roles and epochs ------------------------------------------ */

static void send_ack(struct lock_ctx *ctx, const struct kv_server *s, int to) {
    struct lock_msg m = {0};
    m.type = KV_REPL_ACK;
    m.req = s->epoch;
    m.a = s->offset;
    m.b = s->primary;
    lock_send(ctx, to, &m);
}

/* Follow another primary from now on. A primary that steps down stops
 * expiring, streaming and pinging; clients it had blocked in WAIT are
 * answered no when their timeout fires. Its data stay until the new
 * primary's stream replaces them. */
static void follow(struct lock_ctx *ctx, struct kv_server *s, uint32_t epoch, int primary) {
    if (s->role == KV_ROLE_PRIMARY) {
        /* note: a = epoch, b = the other primary */
        if (epoch > s->epoch)
            lock_note(ctx, "steps down to replica: another primary has a newer epoch", epoch, primary);
        else
            lock_note(ctx, "steps down to replica: another primary of the same epoch has a lower number",
                      epoch, primary);
        s->role = KV_ROLE_REPLICA;
        cancel(ctx, &s->expiry_timer);
        cancel(ctx, &s->ping_timer);
        cancel(ctx, &s->repl_timer);
        s->bl_len = 0;
        reset_acks(s);
    }
    s->epoch = epoch;
    s->primary = primary == lock_self(ctx) ? -1 : primary;
    s->synced = 0;
    s->upstream_closed = 0; /* a new link to the new primary */
    cancel(ctx, &s->cron_timer);
}

/* ---- Replication links: closed, timed out, reconnected ----------------------- */

static void send_close(struct lock_ctx *ctx, const struct kv_server *s, int to) {
    struct lock_msg m = {0};
    m.type = KV_REPL_CLOSE;
    m.req = s->epoch;
    lock_send(ctx, to, &m);
}

/* A replica's replicationCron runs once a second; a replica whose link is
 * down connects again at its next run. Its runs fall on the whole seconds
 * of its own monotonic clock (the server started at 0). */
static void arm_cron(struct lock_ctx *ctx, struct kv_server *s) {
    cancel(ctx, &s->cron_timer);
    sim_ns into = mono(ctx) % SIM_NS_PER_S;
    if (into < 0) into += SIM_NS_PER_S;
    s->cron_timer = lock_timer(ctx, LOCK_CLOCK_MONO, SIM_NS_PER_S - into, T_CRON, 0);
}

/* The primary closed this replica's link (the FIN of CLIENT KILL, or the RST
 * its next ACK meets). It stops counting on the stream and reconnects. */
static void upstream_close(struct lock_ctx *ctx, struct kv_server *s, const struct lock_msg *m) {
    if (s->role != KV_ROLE_REPLICA || m->from != s->primary || s->upstream_closed) return;
    s->upstream_closed = 1;
    lock_note(ctx, "replica: its link to the primary was closed; it reconnects at its next cron run (1 s)",
              m->from, 0); /* a = the primary */
    arm_cron(ctx, s);
}

/* replicationCron on a replica whose link is down: connect and PSYNC. A
 * connection that cannot reach the primary (a partition) is tried again a
 * second later. */
static void cron(struct lock_ctx *ctx, struct kv_server *s) {
    s->cron_timer = 0;
    if (s->role != KV_ROLE_REPLICA || !s->upstream_closed || s->primary < 0) return;
    struct lock_msg m = {0};
    m.type = KV_REPL_SYNC;
    m.req = s->epoch;
    m.a = s->offset;
    m.b = s->primary;
    lock_send(ctx, s->primary, &m);
    arm_cron(ctx, s);
}

/* A replica connects (PSYNC). As Redis's putSlaveOnline (or a partial resync)
 * does: its link is up, its ack time is now, and it counts as good again at
 * once; the primary sends it the current state. */
static void sync_recv(struct lock_ctx *ctx, struct kv_server *s, const struct lock_msg *m) {
    int i = lock_server_index(ctx, m->from);
    if (i < 0) return;
    if (s->role != KV_ROLE_PRIMARY || m->req > s->epoch) { /* not its primary: say whom it follows */
        send_ack(ctx, s, m->from);
        return;
    }
    if (s->link_closed[i])
        lock_note(ctx, "a replica reconnected (PSYNC): its link is up and it counts as good again",
                  m->from, 0); /* a = the replica */
    s->link_closed[i] = 0;
    s->ack_at[i] = mono(ctx);
    if (m->req == s->epoch && m->a > s->ack_offset[i]) s->ack_offset[i] = m->a;
    struct kv_snap p = take_snapshot(s);
    struct lock_msg r;
    snapshot_msg(ctx, &p, &r);
    lock_send(ctx, m->from, &r);
}

/* The primary's replicationCron (its heartbeat, once a second): a replica
 * silent for repl-timeout is disconnected ("Disconnecting timedout
 * replica"); a replica whose link is closed is told so, as the RST its next
 * REPLCONF ACK would meet. */
static void check_links(struct lock_ctx *ctx, struct kv_server *s) {
    int me = self_index(ctx);
    sim_ns now = mono(ctx);
    for (int i = 0; i < lock_nservers(ctx); i++) {
        if (i == me) continue;
        if (!s->link_closed[i] && s->ack_at[i] != SIM_NEVER && now - s->ack_at[i] > cfg(ctx)->repl_timeout_ns) {
            s->link_closed[i] = 1;
            lock_note(ctx, "disconnects a replica silent for repl-timeout", lock_server(ctx, i), 0);
        }
        if (s->link_closed[i]) send_close(ctx, s, lock_server(ctx, i));
    }
}

static void apply_snapshot(struct lock_ctx *ctx, struct kv_server *s, const struct lock_msg *m,
                           int new_primary) {
    int held = m->value != 0;
    if (s->held && (!held || s->value != m->value)) {
        if (new_primary)
            lock_note(ctx, "replica: drops a lock the new primary never had", s->owner, (int64_t)s->token);
        else
            lock_note(ctx, "replica: copies a release or expiry from the primary", s->owner, (int64_t)s->token);
    }
    if (held && (!s->held || s->value != m->value))
        lock_note(ctx, "replica: copies a grant from the primary", m->b, (int64_t)m->token); /* a = owner, b = token */
    s->held = held;
    s->value = m->value;
    s->owner = held ? (int)m->b : s->owner;
    s->token = m->token;
    s->next_token = m->token + 1;
    s->expires_local = held ? decode_expiry(ctx, m->ttl_ns) : SIM_NEVER;
    s->offset = m->a;
    s->synced = 1;
}

static void repl_recv(struct lock_ctx *ctx, struct kv_server *s, const struct lock_msg *m) {
    uint32_t epoch = m->req;
    if (epoch < s->epoch) { /* an old primary that has not heard: tell it */
        send_ack(ctx, s, m->from);
        return;
    }
    int moved = 0;
    if (epoch > s->epoch || s->primary != m->from) {
        /* Two primaries in one epoch (two promotions that could not see each
         * other): the lower server number wins, so that they converge. */
        if (epoch == s->epoch && s->primary >= 0 &&
            lock_server_index(ctx, m->from) > lock_server_index(ctx, s->primary))
            return;
        follow(ctx, s, epoch, m->from);
        moved = 1;
    }
    if (moved || !s->synced || m->a > s->offset) apply_snapshot(ctx, s, m, moved || !s->synced);
    if (s->upstream_closed) { /* the answer to its PSYNC: the link is up */
        s->upstream_closed = 0;
        cancel(ctx, &s->cron_timer);
        lock_note(ctx, "replica: reconnected to the primary", m->from, 0);
    }
    send_ack(ctx, s, m->from);
}

static void ack_recv(struct lock_ctx *ctx, struct kv_server *s, const struct lock_msg *m) {
    if (m->req > s->epoch) {
        follow(ctx, s, m->req, (int)m->b);
        return;
    }
    int i = lock_server_index(ctx, m->from);
    if (s->role != KV_ROLE_PRIMARY || m->req < s->epoch || i < 0) return;
    if (s->link_closed[i]) { /* an ACK down a closed link meets a reset */
        send_close(ctx, s, m->from);
        return;
    }
    if (m->a > s->ack_offset[i]) s->ack_offset[i] = m->a; /* acks may arrive out of order */
    s->ack_at[i] = mono(ctx);
    check_waits(ctx, s);
}

/* CLIENT KILL TYPE replica: the primary frees every replica's client at
 * once, and the good-replica count drops with them. */
static void kill_replicas(struct lock_ctx *ctx, struct kv_server *s) {
    if (!replicating(ctx)) {
        lock_note(ctx, "kill-replicas ignored: this store runs without replicas", 0, 0);
        return;
    }
    if (s->role != KV_ROLE_PRIMARY) {
        lock_note(ctx, "kill-replicas: no replica is attached to a replica", 0, 0);
        return;
    }
    int n = 0, me = self_index(ctx);
    for (int i = 0; i < lock_nservers(ctx); i++) {
        if (i == me || s->link_closed[i]) continue;
        s->link_closed[i] = 1;
        send_close(ctx, s, lock_server(ctx, i));
        n++;
    }
    lock_note(ctx, "CLIENT KILL TYPE replica: replica links closed, none counts as good until it reconnects",
              n, 0); /* a = links closed */
}

void kv_server_control(struct lock_ctx *ctx, void *state, enum lock_control c) {
    struct kv_server *s = state;
    if (c == LOCK_CONTROL_KILL_REPLICAS) {
        kill_replicas(ctx, s);
        return;
    }
    if (c != LOCK_CONTROL_PROMOTE) return;
    if (!replicating(ctx)) {
        lock_note(ctx, "promote ignored: this store runs without replicas", 0, 0);
        return;
    }
    if (s->role == KV_ROLE_PRIMARY) {
        lock_note(ctx, "promote: already the primary", s->epoch, 0);
        return;
    }
    /* Sentinel's failover: the replica serves exactly what it replicated. */
    s->role = KV_ROLE_PRIMARY;
    s->epoch++;
    s->primary = lock_self(ctx);
    s->synced = 1;
    reset_acks(s);
    s->upstream_closed = 0;
    cancel(ctx, &s->cron_timer);
    lock_state(ctx, KV_ST_PROMOTED);
    lock_note(ctx, "promoted to primary: serves only what it had replicated", /* a = epoch, b = offset */
              s->epoch, s->offset);
    /* It expires keys by its own clock from now on. */
    expire_if_due(ctx, s);
    arm_expiry(ctx, s);
    /* Announce the epoch at once (Sentinel reconfigures the others); the
     * heartbeat repeats it to servers that cannot hear it yet. */
    struct kv_snap p = take_snapshot(s);
    send_snapshot(ctx, s, &p);
    arm_ping(ctx, s, KV_REPL_PING_NS);
}

/* ---- Client requests at a server ---------------------------------------------- */

static int is_write(int type) {
    return type == KV_SET_NX || type == KV_DEL || type == KV_CAD || type == KV_EXPIRE || type == KV_CAE ||
           type == KV_GETSET || type == KV_DEL_STALE;
}

/* GETSET key value (the SETNX page's recovery step): the key takes the new
 * timestamp whatever it held, and the old value goes back. Who holds the lock
 * then is what the recipe says: the requester won if the old timestamp had
 * passed by its own clock (m->b), and lost otherwise, although its timestamp
 * now stands in the key ("not a problem", says the page). A GETSET on a
 * missing key sets it for nobody: the requester reads no expired timestamp
 * back, so it does not consider itself the holder. */
static void getset(struct lock_ctx *ctx, struct kv_server *s, const struct lock_msg *m) {
    int had = s->held;
    uint64_t old = s->value;
    int won = had && (int64_t)old <= m->b;
    if (won) {
        s->owner = m->from;
        s->token = s->next_token++;
        lock_note_grant(ctx, m->from, 0, 0, SIM_NEVER);
    } else if (had) {
        /* note: a = the old timestamp, b = the requester's reading */
        lock_note(ctx, "GETSET: the old timestamp had not passed; the requester lost, its timestamp stays",
                  (int64_t)old, m->b);
    } else {
        s->owner = -1;
        lock_note(ctx, "GETSET found no key: the timestamp it sets belongs to no holder", m->b, 0);
    }
    s->held = 1;
    s->value = m->value;
    s->expires_local = SIM_NEVER;
    arm_expiry(ctx, s);
    replicate(ctx, s);
    reply(ctx, m, had, had ? old : 0, 0);
}

/* DEL of a lock the client judged dead (the recipe's DEL-then-SETNX
 * recovery). The store's record: if the key still holds a timestamp that had
 * passed by the requester's clock, a dead lock is cleared (noted as an
 * expiry); if another client's fresh timestamp is there by now, the DEL
 * removed a live lock (a wrong release). */
static void del_stale(struct lock_ctx *ctx, struct kv_server *s, const struct lock_msg *m) {
    if (!s->held) {
        lock_note(ctx, "DEL found no key", 0, 0);
    } else if ((int64_t)s->value <= m->b) {
        /* note: a = the timestamp, b = the requester's reading */
        lock_note(ctx, "DEL clears a lock whose timestamp has passed", (int64_t)s->value, m->b);
        lock_note_expire(ctx, s->owner);
        s->held = 0;
        replicate(ctx, s);
    } else {
        /* note: a = the fresh timestamp, b = the requester's reading */
        lock_note(ctx, "DEL to recover a dead lock finds a fresh timestamp: it deletes a live lock",
                  (int64_t)s->value, m->b);
        delete_entry(ctx, s, m->from);
    }
    reply(ctx, m, 1, 0, 0);
}

void kv_server_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct kv_server *s = state;
    if (m->type == KV_REPL || m->type == KV_REPL_ACK || m->type == KV_REPL_CLOSE || m->type == KV_REPL_SYNC) {
        if (cfg(ctx)->replication == KV_REPL_OFF) return;
        if (m->type == KV_REPL) repl_recv(ctx, s, m);
        else if (m->type == KV_REPL_ACK) ack_recv(ctx, s, m);
        else if (m->type == KV_REPL_CLOSE) upstream_close(ctx, s, m);
        else sync_recv(ctx, s, m);
        return;
    }
    if (s->role == KV_ROLE_REPLICA) { /* read-only: send the client to the primary */
        struct lock_msg r = {0};
        r.type = KV_REDIRECT;
        r.req = m->req;
        r.a = s->primary;
        lock_send(ctx, m->from, &r);
        return;
    }
    expire_if_due(ctx, s);
    if (is_write(m->type) && cfg(ctx)->replication != KV_REPL_OFF && min_replicas_here(ctx) > 0) {
        int good = good_replicas(ctx, s);
        if (good < min_replicas_here(ctx)) {
            int closed = 0;
            for (int i = 0; i < lock_nservers(ctx); i++) closed |= s->link_closed[i];
            /* note: a = good replicas, b = min-replicas-to-write */
            lock_note(ctx, closed ? "NOREPLICAS: refuses the write, too few good replicas (a replica's link is closed)"
                                  : "NOREPLICAS: refuses the write, too few replicas acknowledged lately",
                      good, min_replicas_here(ctx));
            lock_state(ctx, KV_ST_NOREPLICAS);
            reply_err(ctx, m->from, m->req, 0, 0, 0, KV_ERR_NOREPLICAS);
            return;
        }
    }
    switch (m->type) {
    case KV_SET_NX:
        if (s->held) {
            lock_note_deny(ctx, m->from, s->owner);
            reply(ctx, m, 0, 0, 0);
            return;
        }
        s->held = 1;
        s->value = m->value;
        s->owner = m->from;
        s->token = s->next_token++;
        s->expires_local = m->ttl_ns > 0 ? lock_now(ctx, cfg(ctx)->expiry_clock) + m->ttl_ns : SIM_NEVER;
        /* The counter runs for every store, but only a fenced algorithm hands
         * the number out as a token: otherwise the trace shows none. */
        lock_note_grant(ctx, m->from, cfg(ctx)->fenced ? s->token : 0, m->ttl_ns, s->expires_local);
        arm_expiry(ctx, s);
        replicate(ctx, s);
        if (cfg(ctx)->replication != KV_REPL_OFF && cfg(ctx)->wait_replicas > 0) wait_begin(ctx, s, m);
        else reply(ctx, m, 1, s->value, s->token);
        return;
    case KV_GET:
        reply(ctx, m, s->held, s->held ? s->value : 0, s->held ? s->token : 0);
        return;
    case KV_GETSET:
        getset(ctx, s, m);
        return;
    case KV_DEL_STALE:
        del_stale(ctx, s, m);
        return;
    case KV_DEL:
        if (s->held) delete_entry(ctx, s, m->from);
        else lock_note(ctx, "DEL found no key", 0, 0);
        reply(ctx, m, 1, 0, 0);
        return;
    case KV_CAD:
        if (s->held && s->value == m->value) {
            delete_entry(ctx, s, m->from);
            reply(ctx, m, 1, 0, 0);
        } else {
            lock_note_keep(ctx, m->from, s->held ? s->owner : -1);
            lock_state(ctx, KV_ST_RELEASE_KEPT);
            reply(ctx, m, 0, 0, 0);
        }
        return;
    case KV_EXPIRE:
        if (s->held) {
            s->expires_local = lock_now(ctx, cfg(ctx)->expiry_clock) + m->ttl_ns;
            lock_note_renew(ctx, s->owner, m->ttl_ns);
            lock_state(ctx, KV_ST_RENEWED);
            arm_expiry(ctx, s);
            replicate(ctx, s);
        }
        reply(ctx, m, s->held, 0, 0);
        return;
    case KV_CAE: /* if GET == value then PEXPIRE: renew only our own lease */
        if (s->held && s->value == m->value) {
            s->expires_local = lock_now(ctx, cfg(ctx)->expiry_clock) + m->ttl_ns;
            lock_note_renew(ctx, s->owner, m->ttl_ns);
            lock_state(ctx, KV_ST_RENEWED);
            arm_expiry(ctx, s);
            replicate(ctx, s);
            reply(ctx, m, 1, s->value, s->token);
        } else {
            reply(ctx, m, 0, 0, 0);
        }
        return;
    default:
        return;
    }
}

void kv_server_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    struct kv_server *s = state;
    switch (timer) {
    case T_EXPIRY:
        s->expiry_timer = 0;
        expire_if_due(ctx, s);
        if (s->held && s->role == KV_ROLE_PRIMARY) arm_expiry(ctx, s); /* the clock went back: not due yet */
        return;
    case T_REPL:
        backlog_due(ctx, s);
        return;
    case T_PING: /* the heartbeat carries the current state, through repl-lag */
        s->ping_timer = 0;
        if (s->role != KV_ROLE_PRIMARY) return;
        check_links(ctx, s);
        stream(ctx, s);
        arm_ping(ctx, s, KV_REPL_PING_NS);
        return;
    case T_WAIT:
        wait_timeout(ctx, s, arg);
        return;
    case T_CRON:
        cron(ctx, s);
        return;
    default:
        return;
    }
}

void kv_server_restart(struct lock_ctx *ctx, void *state) {
    struct kv_server *s = state;
    /* The engine dropped every timer at the crash; what was only in memory
     * (held-back stream, blocked WAITs, replica acks) is gone. */
    s->expiry_timer = s->repl_timer = s->ping_timer = s->cron_timer = 0;
    s->upstream_closed = 0; /* a restarted replica connects afresh */
    s->bl_head = s->bl_len = 0;
    memset(s->waits, 0, sizeof s->waits);
    reset_acks(s);
    if (cfg(ctx)->persistence == KV_PERSIST_NONE) {
        /* Nothing on disk: the lock is gone; the token counter restarts too,
         * which is why a store without persistence cannot issue fencing tokens. */
        s->held = 0;
        s->value = 0;
        s->token = 0;
        s->expires_local = 0;
        s->owner = -1;
        s->next_token = cfg(ctx)->first_token;
        lock_note(ctx, "restarted empty (no persistence)", 0, 0);
        lock_state(ctx, KV_ST_RESTARTED_EMPTY);
        if (s->role == KV_ROLE_REPLICA) {
            s->synced = 0; /* a full resync from the primary's next message */
        } else if (cfg(ctx)->replication != KV_REPL_OFF) {
            /* Redis warns of exactly this: replicas of a primary restarted
             * without persistence copy its empty dataset. */
            replicate(ctx, s);
        }
    } else {
        expire_if_due(ctx, s);
        if (s->role == KV_ROLE_PRIMARY) arm_expiry(ctx, s);
    }
    arm_ping(ctx, s, 0);
}

/* ---- Client ---------------------------------------------------------------- */

/* The client may switch servers: replication on and more than one server. */
static int follows_primary(struct lock_ctx *ctx) {
    return cfg(ctx)->replication != KV_REPL_OFF && lock_nservers(ctx) > 1;
}

static void transmit(struct lock_ctx *ctx, struct kv_client *c) {
    struct lock_msg m = {0};
    m.type = c->type;
    m.req = ++c->req;
    m.value = c->value;
    m.ttl_ns = c->req_ttl_ns;
    if (c->target < 0 || c->target >= lock_nservers(ctx)) c->target = 0;
    lock_send(ctx, lock_server(ctx, c->target), &m);
    if (c->timeout) lock_cancel(ctx, c->timeout);
    /* A SET answered after WAIT may take wait-timeout longer. */
    sim_ns limit = cfg(ctx)->request_timeout_ns;
    if (c->type == KV_SET_NX && cfg(ctx)->replication != KV_REPL_OFF && cfg(ctx)->wait_replicas > 0)
        limit += cfg(ctx)->wait_timeout_ns;
    c->timeout = lock_timer(ctx, LOCK_CLOCK_MONO, limit, T_TIMEOUT, c->req);
}

static void send_req(struct lock_ctx *ctx, struct kv_client *c, int type, int phase, sim_ns ttl) {
    c->type = type;
    c->phase = phase;
    c->req_ttl_ns = ttl;
    c->redirects = 0;
    c->timeouts = 0;
    transmit(ctx, c);
}

void kv_client_init(struct lock_ctx *ctx, void *state) {
    struct kv_client *c = state;
    c->req = lock_incarnation(ctx) << 24;
}

void kv_client_acquire(struct lock_ctx *ctx, void *state) {
    struct kv_client *c = state;
    /* A unique value per attempt, drawn from the engine's PRNG; never 0. */
    c->value = cfg(ctx)->unique_value ? (lock_random(ctx) | 1) : 1;
    c->acquire_sent_mono = lock_now(ctx, LOCK_CLOCK_MONO);
    lock_state(ctx, KV_ST_ACQUIRING);
    send_req(ctx, c, KV_SET_NX, PHASE_ACQUIRE, cfg(ctx)->ttl_ns);
}

void kv_client_release(struct lock_ctx *ctx, void *state) {
    struct kv_client *c = state;
    switch (cfg(ctx)->release) {
    case KV_RELEASE_CAD: send_req(ctx, c, KV_CAD, PHASE_RELEASE, 0); break;
    case KV_RELEASE_DEL: send_req(ctx, c, KV_DEL, PHASE_RELEASE, 0); break;
    default: send_req(ctx, c, KV_GET, PHASE_RELEASE_GET, 0); break;
    }
}

static void done(struct lock_ctx *ctx, struct kv_client *c, const struct lock_msg *m) {
    int phase = c->phase;
    c->phase = PHASE_NONE;
    if (c->timeout) lock_cancel(ctx, c->timeout);
    c->timeout = 0;
    switch (phase) {
    case PHASE_ACQUIRE:
        if (m && m->a) {
            c->token = m->token;
            /* The lease began on the server somewhere between sending and this
             * reply: the client can only count on TTL minus the round trip
             * (the Redis docs' "validity time"). 0 would mean "unbounded". */
            sim_ns validity = 0;
            if (cfg(ctx)->ttl_ns > 0) {
                validity = cfg(ctx)->ttl_ns - (lock_now(ctx, LOCK_CLOCK_MONO) - c->acquire_sent_mono);
                if (validity < 1) validity = 1;
            }
            lock_state(ctx, KV_ST_GRANTED);
            lock_granted(ctx, cfg(ctx)->fenced ? m->token : 0, validity);
        } else {
            lock_state(ctx, KV_ST_REFUSED);
            lock_refused(ctx);
        }
        break;
    case PHASE_RELEASE_GET:
        if (m && m->a && m->value == c->value) { /* still ours, so far as the GET knew */
            send_req(ctx, c, KV_DEL, PHASE_RELEASE_DEL, 0);
            return;
        }
        lock_release_done(ctx);
        break;
    case PHASE_RELEASE:
    case PHASE_RELEASE_DEL:
        lock_release_done(ctx);
        break;
    }
}

/* A replica answered: ask the primary it names, or the next server when it
 * names none (or itself). Bounded, so two confused replicas cannot bounce a
 * request forever. */
static void redirected(struct lock_ctx *ctx, struct kv_client *c, const struct lock_msg *m) {
    int n = lock_nservers(ctx);
    if (++c->redirects > 2 * n) {
        lock_note(ctx, "too many redirects: no primary found", c->redirects - 1, 0);
        done(ctx, c, NULL);
        return;
    }
    int idx = m->a >= 0 ? lock_server_index(ctx, (int)m->a) : -1;
    int from = lock_server_index(ctx, m->from);
    c->target = idx >= 0 && idx != from ? idx : (c->target + 1) % n;
    lock_state(ctx, KV_ST_REDIRECTED);
    lock_note(ctx, "redirected by a replica to the primary it follows", /* a = server asked next */
              lock_server(ctx, c->target), m->a);
    transmit(ctx, c);
}

void kv_client_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct kv_client *c = state;
    if (m->req != c->req || c->phase == PHASE_NONE) return; /* late reply */
    if (m->type == KV_REDIRECT) redirected(ctx, c, m);
    else if (m->type == KV_REPLY) done(ctx, c, m);
}

void kv_client_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    struct kv_client *c = state;
    if (timer != T_TIMEOUT || arg != c->req || c->phase == PHASE_NONE) return;
    c->timeout = 0;
    lock_note(ctx, "request timed out", (int64_t)arg, 0);
    lock_state(ctx, KV_ST_TIMED_OUT);
    if (follows_primary(ctx)) {
        /* The server it asked may be down: ask the next one, each at most once. */
        int n = lock_nservers(ctx);
        c->target = (c->target + 1) % n;
        if (++c->timeouts < n) {
            transmit(ctx, c);
            return;
        }
    }
    done(ctx, c, NULL);
}
