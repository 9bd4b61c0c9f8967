/* The Redis-like lock store's server: its key, the rule at its deadline and
 * the requests at a server (see kv.h). Semantics follow the Redis documentation of SET key value NX PX ttl, DEL, PEXPIRE and the
 * compare-and-delete Lua script of the single-instance locking pattern:
 * keys expire by the server's own clock, lazily on access and actively by
 * a timer.
 *
 * Replication is kv_repl.c, the client kv_client.c, the options kv_config.c. */
#include "kv_int.h"

#include <stdio.h>
#include <string.h>

/* ---- Server ---------------------------------------------------------------- */

const char *const kv_state_names[KV_ST_COUNT] = {KV_STATE_NAMES};

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

void kv_arm_expiry(struct lock_ctx *ctx, struct kv_server *s) {
    if (s->expiry_timer) lock_cancel(ctx, s->expiry_timer);
    s->expiry_timer = 0;
    if (s->held && s->expires_local != SIM_NEVER) {
        sim_ns left = expired_from(cfg(ctx)->deadline, s->expires_local) - lock_now(ctx, cfg(ctx)->expiry_clock);
        s->expiry_timer = lock_timer(ctx, cfg(ctx)->expiry_clock, left > 0 ? left : 0, T_EXPIRY, 0);
    }
}

/* Lazy expiry, as Redis does on every access. Only a primary expires keys:
 * a replica waits for its primary's DEL, as Redis replicas do. */
void kv_expire_if_due(struct lock_ctx *ctx, struct kv_server *s) {
    if (s->role != KV_ROLE_PRIMARY) return;
    if (s->held && kv_key_expired(cfg(ctx)->deadline, lock_now(ctx, cfg(ctx)->expiry_clock), s->expires_local)) {
        s->held = 0;
        s->lapsed = 1;
        lock_note_expire(ctx, s->owner);
        lock_state(ctx, KV_ST_EXPIRED_UNKNOWN);
        if (s->expiry_timer) lock_cancel(ctx, s->expiry_timer);
        s->expiry_timer = 0;
        kv_replicate(ctx, s);
    }
}

void kv_server_init(struct lock_ctx *ctx, void *state) {
    struct kv_server *s = state;
    s->next_token = cfg(ctx)->first_token;
    s->owner = -1;
    s->role = KV_ROLE_PRIMARY;
    s->epoch = 1;
    s->primary = lock_self(ctx);
    s->synced = 1; /* every server starts empty at offset 0, as the primary does */
    kv_reset_acks(s);
    if (!replicating(ctx)) return;
    if (self_index(ctx) > 0) {
        s->role = KV_ROLE_REPLICA;
        s->primary = lock_server(ctx, 0);
    } else {
        kv_arm_ping(ctx, s, 0); /* first heartbeat at once: replicas answer with an ack */
    }
}


static void reply(struct lock_ctx *ctx, const struct lock_msg *m, int64_t a, uint64_t value, uint64_t token) {
    kv_reply_err(ctx, m->from, m->req, a, value, token, KV_ERR_NONE);
}

static void delete_entry(struct lock_ctx *ctx, struct kv_server *s, int requester) {
    lock_note_delete(ctx, requester, s->owner);
    lock_state(ctx, requester == s->owner ? KV_ST_RELEASED : KV_ST_DELETED_ANOTHERS);
    s->held = 0;
    s->lapsed = 0;
    if (s->expiry_timer) lock_cancel(ctx, s->expiry_timer);
    s->expiry_timer = 0;
    kv_replicate(ctx, s);
}

/* Azure Blob Storage's Lease Blob operation (REST API reference, "Lease
 * Blob", action renew), in our words: a lease lasts 15 to 60 seconds (or
 * forever); renew restarts its clock when the lease ID matches, and it may
 * be renewed even after it has expired, as long as the blob has not been
 * leased again since (the lease's state is then Expired, not Available). A
 * release, or another client's lease in between, ends that chance. With
 * renew-expired=on the store keeps the same rule: a compare-and-pexpire on
 * a key that lapsed, with nothing written since, from its holder with its
 * value, brings the key back with the same value and token. Redis has no
 * such rule (an expired key is gone), so the option is off by default. */
static int renews_lapsed(struct lock_ctx *ctx, const struct kv_server *s, const struct lock_msg *m) {
    return cfg(ctx)->renew_expired && s->lapsed && s->value == m->value && s->owner == m->from;
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
    s->lapsed = 0;
    s->value = m->value;
    s->expires_local = SIM_NEVER;
    kv_arm_expiry(ctx, s);
    kv_replicate(ctx, s);
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
        s->lapsed = 0;
        kv_replicate(ctx, s);
    } else {
        /* note: a = the fresh timestamp, b = the requester's reading */
        lock_note(ctx, "DEL to recover a dead lock finds a fresh timestamp: it deletes a live lock", (int64_t)s->value,
                  m->b);
        delete_entry(ctx, s, m->from);
    }
    reply(ctx, m, 1, 0, 0);
}

void kv_server_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct kv_server *s = state;
    if (m->type == KV_REPL || m->type == KV_REPL_ACK || m->type == KV_REPL_CLOSE || m->type == KV_REPL_SYNC) {
        if (cfg(ctx)->replication == KV_REPL_OFF) return;
        if (m->type == KV_REPL) kv_repl_recv(ctx, s, m);
        else if (m->type == KV_REPL_ACK) kv_ack_recv(ctx, s, m);
        else if (m->type == KV_REPL_CLOSE) kv_upstream_close(ctx, s, m);
        else kv_sync_recv(ctx, s, m);
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
    kv_expire_if_due(ctx, s);
    if (is_write(m->type) && cfg(ctx)->replication != KV_REPL_OFF && kv_min_replicas_here(ctx) > 0) {
        int good = kv_good_replicas(ctx, s);
        if (good < kv_min_replicas_here(ctx)) {
            int closed = 0;
            for (int i = 0; i < lock_nservers(ctx); i++) closed |= s->link_closed[i];
            /* note: a = good replicas, b = min-replicas-to-write */
            lock_note(ctx,
                      closed ? "NOREPLICAS: refuses the write, too few good replicas (a replica's link is closed)"
                             : "NOREPLICAS: refuses the write, too few replicas acknowledged lately",
                      good, kv_min_replicas_here(ctx));
            lock_state(ctx, KV_ST_NOREPLICAS);
            kv_reply_err(ctx, m->from, m->req, 0, 0, 0, KV_ERR_NOREPLICAS);
            return;
        }
    }
    switch (m->type) {
    case KV_SET_NX:
        if (s->held && cfg(ctx)->takeover && s->owner != m->from) {
            /* takeover=on: the newest claimant wins at once, under the next
             * token, while the old holder may still be alive and working.
             * Kafka's InitProducerId for a transactional.id already in use
             * bumps the producer epoch: "the latest one to be started fences
             * the previous instances" (Kafka documentation, producer config
             * transactional.id; KIP-98). Only a resource that checks the
             * epoch (fenced-lease) stops the old instance's writes.
             * note: a = the holder taken over, b = its token */
            lock_note(ctx, "takes the lock over from its holder at once: a new epoch (takeover=on)", s->owner,
                      (int64_t)s->token);
            s->held = 0;
        }
        if (s->held) {
            lock_note_deny(ctx, m->from, s->owner);
            reply(ctx, m, 0, 0, 0);
            return;
        }
        s->held = 1;
        s->lapsed = 0;
        s->value = m->value;
        s->owner = m->from;
        s->token = s->next_token++;
        s->expires_local = m->ttl_ns > 0 ? lock_now(ctx, cfg(ctx)->expiry_clock) + m->ttl_ns : SIM_NEVER;
        /* The counter runs for every store, but only a fenced algorithm hands
         * the number out as a token: otherwise the trace shows none. */
        lock_note_grant(ctx, m->from, cfg(ctx)->fenced ? s->token : 0, m->ttl_ns, s->expires_local);
        kv_arm_expiry(ctx, s);
        kv_replicate(ctx, s);
        if (cfg(ctx)->replication != KV_REPL_OFF && cfg(ctx)->wait_replicas > 0) kv_wait_begin(ctx, s, m);
        else reply(ctx, m, 1, s->value, s->token);
        return;
    case KV_GET: reply(ctx, m, s->held, s->held ? s->value : 0, s->held ? s->token : 0); return;
    case KV_GETSET: getset(ctx, s, m); return;
    case KV_DEL_STALE: del_stale(ctx, s, m); return;
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
            kv_arm_expiry(ctx, s);
            kv_replicate(ctx, s);
        }
        reply(ctx, m, s->held, 0, 0);
        return;
    case KV_CAE: /* if GET == value then PEXPIRE: renew only our own lease */
        if (!s->held && renews_lapsed(ctx, s, m)) {
            s->held = 1;
            s->lapsed = 0;
            /* note: a = the holder, b = how long the key had been gone */
            lock_note(ctx, "renews a lapsed lease: nobody leased it since it expired (renew-expired=on)", s->owner,
                      lock_now(ctx, cfg(ctx)->expiry_clock) - s->expires_local);
        }
        if (s->held && s->value == m->value) {
            s->expires_local = lock_now(ctx, cfg(ctx)->expiry_clock) + m->ttl_ns;
            lock_note_renew(ctx, s->owner, m->ttl_ns);
            lock_state(ctx, KV_ST_RENEWED);
            kv_arm_expiry(ctx, s);
            kv_replicate(ctx, s);
            reply(ctx, m, 1, s->value, s->token);
        } else {
            reply(ctx, m, 0, 0, 0);
        }
        return;
    default: return;
    }
}

void kv_server_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    struct kv_server *s = state;
    switch (timer) {
    case T_EXPIRY:
        s->expiry_timer = 0;
        kv_expire_if_due(ctx, s);
        if (s->held && s->role == KV_ROLE_PRIMARY) kv_arm_expiry(ctx, s); /* the clock went back: not due yet */
        return;
    case T_REPL: kv_backlog_due(ctx, s); return;
    case T_PING: /* the heartbeat carries the current state, through repl-lag */
        s->ping_timer = 0;
        if (s->role != KV_ROLE_PRIMARY) return;
        kv_check_links(ctx, s);
        kv_stream(ctx, s);
        kv_arm_ping(ctx, s, KV_REPL_PING_NS);
        return;
    case T_WAIT: kv_wait_timeout(ctx, s, arg); return;
    case T_CRON: kv_cron(ctx, s); return;
    default: return;
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
    kv_reset_acks(s);
    if (cfg(ctx)->persistence == KV_PERSIST_NONE) {
        /* Nothing on disk: the lock is gone; the token counter restarts too,
         * which is why a store without persistence cannot issue fencing tokens. */
        s->held = 0;
        s->lapsed = 0;
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
            kv_replicate(ctx, s);
        }
    } else {
        kv_expire_if_due(ctx, s);
        if (s->role == KV_ROLE_PRIMARY) kv_arm_expiry(ctx, s);
    }
    kv_arm_ping(ctx, s, 0);
}

void kv_server_control(struct lock_ctx *ctx, void *state, enum lock_control c) {
    struct kv_server *s = state;
    if (c == LOCK_CONTROL_KILL_REPLICAS) kv_kill_replicas(ctx, s);
    if (c != LOCK_CONTROL_PROMOTE || !kv_promote(ctx, s)) return;
    /* It expires keys by its own clock from now on. */
    kv_expire_if_due(ctx, s);
    kv_arm_expiry(ctx, s);
    kv_announce(ctx, s);
}
