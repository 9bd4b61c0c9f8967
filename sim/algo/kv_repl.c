/* Replication of the Redis-like lock store (kv.c), its failover and its
 * replication links.
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
#include "kv_int.h"

#include <stdio.h>
#include <string.h>

void kv_reset_acks(struct kv_server *s) {
    for (int i = 0; i < KV_MAX_SERVERS; i++) {
        s->ack_offset[i] = -1;
        s->ack_at[i] = SIM_NEVER;
        s->link_closed[i] = 0; /* a new primary's replicas attach afresh */
    }
}

/* This server's own min-replicas-to-write: its `S<n>.` option, else the
 * lock line's (max_lag_here below is its pair). */
int kv_min_replicas_here(struct lock_ctx *ctx) {
    int i = self_index(ctx);
    int v = i >= 0 ? cfg(ctx)->srv_min_replicas[i] : -1;
    return v >= 0 ? v : cfg(ctx)->min_replicas;
}

void kv_arm_ping(struct lock_ctx *ctx, struct kv_server *s, sim_ns delay) {
    cancel(ctx, &s->ping_timer);
    if (replicating(ctx) && s->role == KV_ROLE_PRIMARY)
        s->ping_timer = lock_timer(ctx, LOCK_CLOCK_MONO, delay, T_PING, 0);
}


/* ---- Replication: the primary's side ---------------------------------------- */

struct kv_snap kv_take_snapshot(const struct kv_server *s) {
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
void kv_send_snapshot(struct lock_ctx *ctx, const struct kv_server *s, const struct kv_snap *p) {
    struct lock_msg m;
    snapshot_msg(ctx, p, &m);
    int me = self_index(ctx);
    for (int i = 0; i < lock_nservers(ctx); i++)
        if (i != me && !s->link_closed[i]) lock_send(ctx, lock_server(ctx, i), &m);
}

static void arm_backlog(struct lock_ctx *ctx, struct kv_server *s) {
    cancel(ctx, &s->repl_timer);
    if (s->bl_len > 0)
        s->repl_timer = lock_timer(ctx, LOCK_CLOCK_MONO, s->backlog[s->bl_head].due_mono - mono(ctx), T_REPL, 0);
}

/* Stream the current state to the other servers, now or after repl-lag. */
void kv_stream(struct lock_ctx *ctx, struct kv_server *s) {
    if (!replicating(ctx)) return;
    struct kv_snap p = kv_take_snapshot(s);
    if (cfg(ctx)->repl_lag_ns <= 0) {
        kv_send_snapshot(ctx, s, &p);
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
void kv_replicate(struct lock_ctx *ctx, struct kv_server *s) {
    if (cfg(ctx)->replication == KV_REPL_OFF || s->role != KV_ROLE_PRIMARY) return;
    s->offset++;
    kv_stream(ctx, s);
}

void kv_backlog_due(struct lock_ctx *ctx, struct kv_server *s) {
    s->repl_timer = 0;
    while (s->bl_len > 0 && s->backlog[s->bl_head].due_mono <= mono(ctx)) {
        kv_send_snapshot(ctx, s, &s->backlog[s->bl_head]);
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

/* This server's own min-replicas-max-lag: its `S<n>.` option, else the lock
 * line's (kv_min_replicas_here in kv.c is its pair). */
static sim_ns max_lag_here(struct lock_ctx *ctx) {
    int i = self_index(ctx);
    sim_ns v = i >= 0 ? cfg(ctx)->srv_max_lag_ns[i] : -1;
    return v >= 0 ? v : cfg(ctx)->min_replicas_max_lag_ns;
}

/* Redis's count (replication.c, refreshGoodSlavesCount): a replica is good
 * while its link is up (replstate ONLINE) and its last REPLCONF ACK is no
 * older than min-replicas-max-lag. A closed link (CLIENT KILL TYPE replica,
 * or a replica timed out) drops out of the count at once: Redis refreshes
 * it when it frees the replica's client. (Redis measures the lag in whole
 * seconds of server.unixtime; here it is the exact age by the primary's
 * monotonic clock.) */
int kv_good_replicas(struct lock_ctx *ctx, const struct kv_server *s) {
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
        kv_reply_err(ctx, w->client, w->req, 1, w->value, w->token, KV_ERR_NONE);
        wait_free(ctx, w);
    }
}

/* The SET has been applied (and streamed); its answer waits for acks. */
void kv_wait_begin(struct lock_ctx *ctx, struct kv_server *s, const struct lock_msg *m) {
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
    kv_reply_err(ctx, m->from, m->req, 0, 0, 0, KV_ERR_WAIT_TIMEOUT);
}

void kv_wait_timeout(struct lock_ctx *ctx, struct kv_server *s, uint64_t slot) {
    if (slot >= KV_MAX_WAITS || !s->waits[slot].used) return;
    struct kv_wait *w = &s->waits[slot];
    w->timer = 0;
    /* WAIT returns fewer replicas than asked; nothing is undone. */
    lock_state(ctx, KV_ST_WAIT_TIMEOUT);
    lock_note(ctx, "WAIT timed out: the client is told no, but the SET stays on the primary (no rollback)",
              replicas_at(ctx, s, w->offset), cfg(ctx)->wait_replicas); /* a = acked, b = wanted */
    kv_reply_err(ctx, w->client, w->req, 0, 0, 0, KV_ERR_WAIT_TIMEOUT);
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
            lock_note(ctx, "steps down to replica: another primary of the same epoch has a lower number", epoch,
                      primary);
        s->role = KV_ROLE_REPLICA;
        cancel(ctx, &s->expiry_timer);
        cancel(ctx, &s->ping_timer);
        cancel(ctx, &s->repl_timer);
        s->bl_len = 0;
        kv_reset_acks(s);
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
void kv_upstream_close(struct lock_ctx *ctx, struct kv_server *s, const struct lock_msg *m) {
    if (s->role != KV_ROLE_REPLICA || m->from != s->primary || s->upstream_closed) return;
    s->upstream_closed = 1;
    lock_note(ctx, "replica: its link to the primary was closed; it reconnects at its next cron run (1 s)", m->from,
              0); /* a = the primary */
    arm_cron(ctx, s);
}

/* replicationCron on a replica whose link is down: connect and PSYNC. A
 * connection that cannot reach the primary (a partition) is tried again a
 * second later. */
void kv_cron(struct lock_ctx *ctx, struct kv_server *s) {
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
void kv_sync_recv(struct lock_ctx *ctx, struct kv_server *s, const struct lock_msg *m) {
    int i = lock_server_index(ctx, m->from);
    if (i < 0) return;
    if (s->role != KV_ROLE_PRIMARY || m->req > s->epoch) { /* not its primary: say whom it follows */
        send_ack(ctx, s, m->from);
        return;
    }
    if (s->link_closed[i])
        lock_note(ctx, "a replica reconnected (PSYNC): its link is up and it counts as good again", m->from,
                  0); /* a = the replica */
    s->link_closed[i] = 0;
    s->ack_at[i] = mono(ctx);
    if (m->req == s->epoch && m->a > s->ack_offset[i]) s->ack_offset[i] = m->a;
    struct kv_snap p = kv_take_snapshot(s);
    struct lock_msg r;
    snapshot_msg(ctx, &p, &r);
    lock_send(ctx, m->from, &r);
}

/* The primary's replicationCron (its heartbeat, once a second): a replica
 * silent for repl-timeout is disconnected ("Disconnecting timedout
 * replica"); a replica whose link is closed is told so, as the RST its next
 * REPLCONF ACK would meet. */
void kv_check_links(struct lock_ctx *ctx, struct kv_server *s) {
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

static void apply_snapshot(struct lock_ctx *ctx, struct kv_server *s, const struct lock_msg *m, int new_primary) {
    int held = m->value != 0;
    if (s->held && (!held || s->value != m->value)) {
        if (new_primary) lock_note(ctx, "replica: drops a lock the new primary never had", s->owner, (int64_t)s->token);
        else lock_note(ctx, "replica: copies a release or expiry from the primary", s->owner, (int64_t)s->token);
    }
    if (held && (!s->held || s->value != m->value))
        lock_note(ctx, "replica: copies a grant from the primary", m->b, (int64_t)m->token); /* a = owner, b = token */
    s->held = held;
    s->lapsed = 0; /* only a primary keeps a lapsed key for renew-expired */
    s->value = m->value;
    s->owner = held ? (int)m->b : s->owner;
    s->token = m->token;
    s->next_token = m->token + 1;
    s->expires_local = held ? decode_expiry(ctx, m->ttl_ns) : SIM_NEVER;
    s->offset = m->a;
    s->synced = 1;
}

void kv_repl_recv(struct lock_ctx *ctx, struct kv_server *s, const struct lock_msg *m) {
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

void kv_ack_recv(struct lock_ctx *ctx, struct kv_server *s, const struct lock_msg *m) {
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
void kv_kill_replicas(struct lock_ctx *ctx, struct kv_server *s) {
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
    lock_note(ctx, "CLIENT KILL TYPE replica: replica links closed, none counts as good until it reconnects", n,
              0); /* a = links closed */
}

/* Sentinel's failover of this replica: 1 when it became the primary (it
 * serves exactly what it replicated), 0 (with a note) when there was
 * nothing to do. kv.c's kv_server_control then expires keys by its clock
 * and calls kv_announce. */
int kv_promote(struct lock_ctx *ctx, struct kv_server *s) {
    if (!replicating(ctx)) {
        lock_note(ctx, "promote ignored: this store runs without replicas", 0, 0);
        return 0;
    }
    if (s->role == KV_ROLE_PRIMARY) {
        lock_note(ctx, "promote: already the primary", s->epoch, 0);
        return 0;
    }
    s->role = KV_ROLE_PRIMARY;
    s->epoch++;
    s->primary = lock_self(ctx);
    s->synced = 1;
    kv_reset_acks(s);
    s->upstream_closed = 0;
    cancel(ctx, &s->cron_timer);
    lock_state(ctx, KV_ST_PROMOTED);
    lock_note(ctx, "promoted to primary: serves only what it had replicated", /* a = epoch, b = offset */
              s->epoch, s->offset);
    return 1;
}

/* A new primary announces its epoch at once (Sentinel reconfigures the
 * others); the heartbeat repeats it to servers that cannot hear it yet. */
void kv_announce(struct lock_ctx *ctx, struct kv_server *s) {
    struct kv_snap p = kv_take_snapshot(s);
    kv_send_snapshot(ctx, s, &p);
    kv_arm_ping(ctx, s, KV_REPL_PING_NS);
}
