/* The consensus lock's replicated log and the leader's duties: leases,
 * replication, commit, and applying committed entries to the lease table
 * (sources in consensus_int.h). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "consensus_int.h"

/* ---- The log ---------------------------------------------------------------------------- */

int64_t cons_term_at(const struct cons_server *s, int64_t i) {
    if (i == s->snap_index) return s->snap_term;
    if (i < s->snap_index || i > s->last_index) return -1;
    return s->log[(uint64_t)i % LOG_CAP].term; /* i > snap_index >= 0: a mask */
}

static const struct cons_entry *entry_at(const struct cons_server *s, int64_t i) {
    return &s->log[(uint64_t)i % LOG_CAP]; /* log indices are never negative */
}

/* Fold every applied entry into the snapshot (Raft section 7). */
static void compact(struct cons_server *s) {
    if (s->applied <= s->snap_index) return;
    s->snap_term = cons_term_at(s, s->applied);
    s->snap_index = s->applied;
    s->snap = s->sm;
}

/* Append at the end of the log, holding at most cap entries beyond the
 * snapshot. A leader proposing a client request leaves LOG_RESERVE slots
 * free, so that with its log full of uncommitted requests it can still
 * append the no-op that lets them commit. A follower takes everything its
 * leader sends: its own applied index never lags the leader's snapshot. */
int cons_log_append(struct cons_server *s, const struct cons_entry *e, int64_t cap) {
    if (s->last_index - s->snap_index >= cap) compact(s);
    if (s->last_index - s->snap_index >= cap) return -1;
    s->last_index++;
    s->log[(uint64_t)s->last_index % LOG_CAP] = *e;
    return 0;
}

/* ---- Leader duties: leases, replication, commit ---------------------------------------- */

/* The lease runs for its TTL from now, plus extend_ns (etcd's Lease.refresh).
 * With a revoke loop (expiry-check) the loop finds it due; without one, a
 * timer fires at the deadline itself. */
static void restart_lease_ext(struct lock_ctx *ctx, struct cons_server *s, sim_ns extend_ns) {
    sim_ns len = cfg(ctx)->ttl_ns + extend_ns;
    s->lease_deadline = now_mono(ctx) + len;
    cancel(ctx, &s->t_lease);
    if (cfg(ctx)->expiry_check_ns == 0) s->t_lease = lock_timer(ctx, LOCK_CLOCK_MONO, len, T_LEASE, 0);
}

static void restart_lease(struct lock_ctx *ctx, struct cons_server *s) { restart_lease_ext(ctx, s, 0); }


/* etcd's lessor Promote(extend): the new leader, once it applies the no-op
 * of its own term (etcdserver applyEntryNormal on an empty entry), refreshes
 * every lease to its remaining TTL plus extend, the election timeout. The
 * remaining TTL is the whole TTL: lease checkpointing, which would carry the
 * old leader's count across, is off by default in etcd 3.4 (and records only
 * every 5 minutes when on), so it is not modelled. */
static void promote_leases(struct lock_ctx *ctx, struct cons_server *s) {
    const struct cons_config *c = cfg(ctx);
    sim_ns extend = c->promote_extend_ns < 0 ? c->election_ns : c->promote_extend_ns;
    s->expiring = 0;
    s->primary = 1;
    if (s->sm.held) restart_lease_ext(ctx, s, extend);
    for (int i = 0; i < s->sm.nwait; i++) {
        s->sm.wait[i].deadline = now_mono(ctx) + c->ttl_ns + extend;
        s->sm.wait[i].expiring = 0;
    }
    cons_arm_waiter_timer(ctx, s);
    cons_renew_confirmed(ctx, s); /* keep-alives held until the lessor was primary */
}

/* InstallSnapshot: the queued keys first, one message each, then the
 * snapshot itself, which names how many keys it has. */
static void send_snapshot(struct lock_ctx *ctx, struct cons_server *s, int f) {
    for (int i = 0; i < s->snap.nwait; i++) {
        const struct cons_waiter *w = &s->snap.wait[i];
        struct lock_msg k = {0};
        k.type = M_SNAPSHOT_WAITER;
        k.a = pack(s->term, s->snap_index);
        k.b = pack(i | w->alive << 4 | (w->proposer + 1) << 8 | (w->via + 1) << 12, w->client + 1);
        k.value = w->lease;
        k.token = w->rev;
        k.req = w->creq;
        lock_send(ctx, s->node0 + f, &k);
    }
    struct lock_msg m = {0};
    m.req = (uint32_t)s->snap.nwait;
    m.type = M_SNAPSHOT;
    m.a = pack(s->term, s->snap.held ? s->snap.owner + 1 : 0);
    m.b = pack(s->snap_index, s->snap_term);
    m.value = s->snap.lease;
    m.token = s->snap.revision;
    m.ttl_ns = now_mono(ctx);
    s->next[f] = s->snap_index + 1;
    lock_send(ctx, s->node0 + f, &m);
}

/* AppendEntries to follower f: the entry at next[f] if there is one (and
 * next[f] moves past it: entries are pipelined, not sent one round trip at
 * a time), else a heartbeat; always with the leader's commit index. */
void cons_send_append(struct lock_ctx *ctx, struct cons_server *s, int f) {
    int64_t next = s->next[f];
    if (next <= s->snap_index) {
        send_snapshot(ctx, s, f);
        return;
    }
    struct lock_msg m = {0};
    m.type = M_APPEND;
    m.a = pack(s->term, s->commit);
    m.b = pack(next - 1, cons_term_at(s, next - 1));
    m.ttl_ns = now_mono(ctx);
    if (next <= s->last_index) {
        const struct cons_entry *e = entry_at(s, next);
        m.token = (uint64_t)pack(e->term, (int64_t)e->kind << 28 | (int64_t)(e->proposer + 1) << 24 |
                                                  (int64_t)(e->via + 1) << 20 | (int64_t)(e->client + 1));
        m.req = e->creq;
        m.value = e->lease;
        s->next[f] = next + 1;
    }
    lock_send(ctx, s->node0 + f, &m);
}

void cons_send_all(struct lock_ctx *ctx, struct cons_server *s) {
    for (int f = 0; f < s->n; f++)
        if (f != s->self) cons_send_append(ctx, s, f);
}

void cons_reply_client(struct lock_ctx *ctx, const struct cons_server *s, int to, uint32_t req, int result,
                       int leader_node, uint64_t revision, sim_ns lease_left) {
    struct lock_msg m = {0};
    m.type = M_REPLY;
    m.req = req;
    m.a = result;
    m.b = leader_node;
    m.token = revision;
    m.ttl_ns = lease_left;
    m.value = s->boots;
    lock_send(ctx, to, &m);
}

/* A majority answered messages this leader sent within the last election
 * timeout: the test behind the leader lease of Ongaro's dissertation
 * (6.4.1), used here only to decide who writes trace records, not for
 * safety. A leader that was paused or cut off, and commits on answers that
 * waited for it, fails it: it applies those entries silently, like a
 * follower, and the trace keeps the record of the leader elected meanwhile. */
static int leader_fresh(struct lock_ctx *ctx, const struct cons_server *s) {
    sim_ns since = now_mono(ctx) - cfg(ctx)->election_ns;
    int heard = 1;
    for (int f = 0; f < s->n; f++)
        if (f != s->self && s->acked_at[f] >= since) heard++;
    return heard >= majority(s);
}

/* The lock left the state machine: the leader records it; any other server
 * only clears a holder it once recorded itself (see the note at the top). */
static void note_removal(struct lock_ctx *ctx, struct cons_server *s, int record, int owner, int requester,
                         int expired) {
    if (!record && s->noted_owner != owner) return;
    if (expired) lock_note_expire(ctx, owner);
    else lock_note_delete(ctx, requester, owner);
    s->noted_owner = -1;
}

void cons_forget_lease(struct lock_ctx *ctx, struct cons_server *s) {
    cancel(ctx, &s->t_lease);
    cancel(ctx, &s->t_waiter);
    s->expiring = 0;
}

/* queue=on without the revoke loop (expiry-check=off): one timer, at the
 * earliest deadline among the waiters' leases (the holder's has T_LEASE).
 * A deadline already past (its revoke could not be proposed) is tried again
 * a heartbeat later. */
void cons_arm_waiter_timer(struct lock_ctx *ctx, struct cons_server *s) {
    const struct cons_config *c = cfg(ctx);
    if (!c->queue || c->expiry_check_ns != 0 || s->role != ROLE_LEADER) return;
    cancel(ctx, &s->t_waiter);
    sim_ns first = SIM_TIME_MAX;
    for (int i = 0; i < s->sm.nwait; i++)
        if (s->sm.wait[i].alive && !s->sm.wait[i].expiring && s->sm.wait[i].deadline < first)
            first = s->sm.wait[i].deadline;
    if (first == SIM_TIME_MAX) return;
    sim_ns delay = first - now_mono(ctx);
    s->t_waiter = lock_timer(ctx, LOCK_CLOCK_MONO, delay > 0 ? delay : c->heartbeat_ns, T_WAITER, 0);
}

/* The holder's lease timer without the revoke loop, when a waiter becomes
 * the holder with the deadline its own keep-alives set. */
static void arm_holder_timer(struct lock_ctx *ctx, struct cons_server *s) {
    const struct cons_config *c = cfg(ctx);
    if (c->expiry_check_ns != 0) return;
    cancel(ctx, &s->t_lease);
    sim_ns delay = s->lease_deadline - now_mono(ctx);
    s->t_lease = lock_timer(ctx, LOCK_CLOCK_MONO, delay > 0 ? delay : 0, T_LEASE, 0);
}

/* The answer to a client's call, from the server that proposed it: to the
 * client, or back through the server it is bound to (bind=). */
static void answer(struct lock_ctx *ctx, const struct cons_server *s, int client, uint32_t creq, int via, int result,
                   uint64_t rev, sim_ns left) {
    if (via >= 0 && via != lock_server_index(ctx, lock_self(ctx))) {
        struct lock_msg m = {0};
        m.type = M_FORWARD_REPLY;
        m.req = creq;
        m.a = result;
        m.b = -1;
        m.token = rev;
        m.ttl_ns = left;
        m.value = (uint64_t)client;
        lock_send(ctx, lock_server(ctx, via), &m);
    } else {
        cons_reply_client(ctx, s, client, creq, result, -1, rev, left);
    }
}

/* queue=on: the waiter under lease, alive or not; -1 if none. */
int cons_find_waiter(const struct cons_server *s, uint64_t lease) {
    for (int i = 0; i < s->sm.nwait; i++)
        if (s->sm.wait[i].lease == lease) return i;
    return -1;
}

static void drop_waiter(struct cons_server *s, int i) {
    memmove(&s->sm.wait[i], &s->sm.wait[i + 1], (size_t)(s->sm.nwait - i - 1) * sizeof s->sm.wait[0]);
    s->sm.nwait--;
}

/* queue=on: the holder's key is gone. etcd's Mutex.Lock waits for every
 * key with a lower create revision to be deleted (waitDeletes), then
 * returns. So the first waiter's call returns now. If its key is there, it
 * holds the lock, with its key's create revision as the fencing token. If
 * its key was deleted meanwhile (its lease expired while it waited), etcd
 * since 3.4.4 answers ErrSessionExpired; with bug=etcd-11456 it tells the
 * client it holds the lock anyway, and the next waiter's turn comes at once:
 * its key is now the oldest, so it holds the lock too. */
static void queue_advance(struct lock_ctx *ctx, struct cons_server *s, int leader, int record) {
    const struct cons_config *c = cfg(ctx);
    while (!s->sm.held && s->sm.nwait > 0) {
        struct cons_waiter w = s->sm.wait[0];
        drop_waiter(s, 0);
        /* Who answers the call: with bind=, the server the client is bound
         * to, where etcd's v3lock runs the Mutex, whose waitDeletes sees
         * the last older key go when that server applies its deletion;
         * otherwise the server the client asked (the proposer). */
        int mine = (w.via >= 0 ? w.via : w.proposer) == s->self;
        if (!w.alive) {
            if (c->bugs & BUG_ETCD_11456) {
                if (record) {
                    lock_note(ctx,
                              "bug etcd-11456: tells a waiter whose lease expired that it "
                              "holds the lock",
                              w.client, (int64_t)w.rev);
                    /* The (buggy) service did grant it: record the grant (its
                     * lease already gone), so the checker orders it before the
                     * next waiter's, the one the service's state keeps. */
                    lock_note_grant(ctx, w.client, w.rev, c->ttl_ns, now_mono(ctx));
                }
                if (mine) answer(ctx, s, w.client, w.creq, w.via, R_GRANTED, w.rev, leader ? c->ttl_ns : 0);
            } else {
                if (record)
                    lock_note(ctx, "the waiter's key is gone (its lease expired): session expired", w.client,
                              (int64_t)w.rev);
                if (mine) answer(ctx, s, w.client, w.creq, w.via, R_SESSION_EXPIRED, 0, 0);
            }
            continue;
        }
        s->sm.held = 1;
        s->sm.owner = w.client;
        s->sm.lease = w.lease;
        s->sm.revision = w.rev;
        sim_ns left = c->ttl_ns;
        if (leader) {
            s->lease_deadline = w.deadline;
            s->expiring = w.expiring ? w.lease : 0;
            left = w.deadline > now_mono(ctx) ? w.deadline - now_mono(ctx) : 0;
            arm_holder_timer(ctx, s);
            cons_arm_waiter_timer(ctx, s);
        }
        if (record) {
            lock_note_grant(ctx, w.client, w.rev, c->ttl_ns, s->lease_deadline);
            s->noted_owner = w.client;
        }
        if (!mine) continue;
        /* etcd >= 3.4.4: a bound server that is not the leader re-reads
         * the key linearizably first (cons_lockcheck_begin). */
        if (w.via >= 0 && !leader && !(c->bugs & BUG_ETCD_11456)) cons_lockcheck_begin(ctx, s, w.client, w.creq, w.rev);
        else answer(ctx, s, w.client, w.creq, w.via, R_GRANTED, w.rev, leader ? left : 0); /* 0: the client counts */
    }
}

/* Apply committed entry idx to the state machine. Every server does this in
 * the same order with the same result; the leader records the change and the
 * server that proposed the entry answers the client. */
static void apply(struct lock_ctx *ctx, struct cons_server *s, int64_t idx, const struct cons_entry *e) {
    const struct cons_config *c = cfg(ctx);
    int leader = s->role == ROLE_LEADER;         /* keeps lease timers */
    int record = leader && leader_fresh(ctx, s); /* writes the trace record */
    int result = 0;
    uint64_t rev = 0;
    sim_ns left = c->ttl_ns;
    int w = c->queue ? cons_find_waiter(s, e->lease) : -1;
    switch (e->kind) {
    case E_ACQUIRE: /* if the key is absent, put it under this lease */
        if (!s->sm.held) {
            s->sm.held = 1;
            s->sm.owner = e->client;
            s->sm.lease = e->lease;
            s->sm.revision = (uint64_t)idx;
            result = R_GRANTED;
            rev = (uint64_t)idx;
            lock_state(ctx, CS_ST_LEASE_GRANTED);
            if (leader) restart_lease(ctx, s);
            if (record) {
                lock_note_grant(ctx, e->client, rev, c->ttl_ns, s->lease_deadline);
                s->noted_owner = e->client;
            }
        } else if (s->sm.lease == e->lease) { /* a retry of an acquire that succeeded */
            result = R_GRANTED;
            rev = s->sm.revision;
            if (leader) left = s->lease_deadline > now_mono(ctx) ? s->lease_deadline - now_mono(ctx) : 0;
        } else if (c->queue && (w >= 0 || s->sm.nwait < QCAP)) {
            /* etcd's Mutex: put our own key and wait for the older ones. A
             * retry of a call already queued moves the answer to it. */
            if (w < 0) {
                w = s->sm.nwait++;
                s->sm.wait[w] = (struct cons_waiter){
                        .client = e->client, .lease = e->lease, .rev = (uint64_t)idx, .alive = 1};
                if (leader) {
                    s->sm.wait[w].deadline = now_mono(ctx) + c->ttl_ns;
                    cons_arm_waiter_timer(ctx, s);
                }
                if (record) lock_note(ctx, "queues the request behind the holder", e->client, idx);
            }
            s->sm.wait[w].proposer = e->proposer;
            s->sm.wait[w].via = e->via;
            s->sm.wait[w].creq = e->creq;
            result = R_QUEUED;
            rev = s->sm.wait[w].rev;
        } else {
            result = R_DENIED;
            lock_state(ctx, CS_ST_LEASE_DENIED);
            if (record) lock_note_deny(ctx, e->client, s->sm.owner);
        }
        break;
    case E_RELEASE: /* delete the key only if it is under this lease */
        if (s->sm.held && s->sm.lease == e->lease) {
            int owner = s->sm.owner;
            s->sm.held = 0;
            s->sm.owner = -1;
            result = R_RELEASED;
            lock_state(ctx, CS_ST_RELEASED);
            if (leader) cons_forget_lease(ctx, s);
            note_removal(ctx, s, record, owner, e->client, 0);
            queue_advance(ctx, s, leader, record);
        } else if (w >= 0) { /* a waiter gives up: its key goes */
            drop_waiter(s, w);
            result = R_RELEASED;
        } else {
            result = R_NOT_HELD;
            lock_state(ctx, CS_ST_RELEASE_NOT_HELD);
            if (record) lock_note_keep(ctx, e->client, s->sm.held ? s->sm.owner : -1);
        }
        break;
    case E_EXPIRE: /* the leader's revoke of a lease that went silent */
        if (s->sm.held && s->sm.lease == e->lease) {
            int owner = s->sm.owner;
            s->sm.held = 0;
            s->sm.owner = -1;
            lock_state(ctx, CS_ST_LEASE_LAPSED);
            if (leader) cons_forget_lease(ctx, s);
            note_removal(ctx, s, record, owner, -1, 1);
            queue_advance(ctx, s, leader, record);
        } else if (w >= 0 && s->sm.wait[w].alive) {
            /* The waiter's key is deleted with its lease; its call waits on. */
            s->sm.wait[w].alive = 0;
            if (record)
                lock_note(ctx, "lease of a waiting client expired: its key is deleted", s->sm.wait[w].client,
                          (int64_t)s->sm.wait[w].rev);
        }
        break;
    default: /* E_NOOP: the leader's own marks its promotion */
        if (leader && e->proposer == s->self && e->term == s->term) promote_leases(ctx, s);
        break;
    }
    if (result && e->client >= 0 && e->proposer == s->self)
        answer(ctx, s, e->client, e->creq, e->via, result, rev, left);
}

/* ---- Keep-alives in the leader's lessor ------------------------------------------------ */

/* etcd's lessor.Renew on the primary: a lease that has expired
 * (Remaining() <= 0) or whose revoke is under way is refused, even before
 * the revoke loop has come round to it; a waiter's session is kept alive
 * like the holder's. Returns R_RENEWED or R_LEASE_GONE. */
static int renew(struct lock_ctx *ctx, struct cons_server *s, uint64_t lease) {
    const struct cons_config *c = cfg(ctx);
    sim_ns now = now_mono(ctx);
    if (s->sm.held && s->sm.lease == lease) {
        if (s->expiring == lease || now >= s->lease_deadline) return R_LEASE_GONE;
        lock_state(ctx, CS_ST_LEASE_RENEWED);
        restart_lease(ctx, s);
        if (leader_fresh(ctx, s)) lock_note_renew(ctx, s->sm.owner, c->ttl_ns);
        return R_RENEWED;
    }
    int w = c->queue ? cons_find_waiter(s, lease) : -1;
    if (w < 0 || !s->sm.wait[w].alive || s->sm.wait[w].expiring || now >= s->sm.wait[w].deadline) return R_LEASE_GONE;
    s->sm.wait[w].deadline = now + c->ttl_ns;
    cons_arm_waiter_timer(ctx, s);
    return R_RENEWED;
}

/* A majority (the leader counting itself) answered a message this leader
 * sent at or after `since`, by its monotonic clock: ReadIndex's check. */
static int confirmed_since(const struct cons_server *s, sim_ns since) {
    int heard = 1;
    for (int f = 0; f < s->n; f++)
        if (f != s->self && s->acked_at[f] >= since) heard++;
    return heard >= majority(s);
}

void cons_renew_confirmed(struct lock_ctx *ctx, struct cons_server *s) {
    if (s->role != ROLE_LEADER || !s->primary) return;
    for (int i = 0; i < RENEW_CAP; i++) {
        struct cons_renewal r = s->renew[i];
        if (!r.used || !confirmed_since(s, r.asked_mono)) continue;
        s->renew[i].used = 0;
        int result = renew(ctx, s, r.lease);
        sim_ns left = result == R_RENEWED ? cfg(ctx)->ttl_ns : 0;
        answer(ctx, s, r.client, r.creq, r.via, result, 0, left);
    }
    for (int i = 0; i < RENEW_CAP; i++) {
        struct cons_readindex q = s->reads[i];
        if (!q.used || !confirmed_since(s, q.asked_mono)) continue;
        s->reads[i].used = 0;
        struct lock_msg m = {0};
        m.type = M_READ_INDEX_REPLY;
        m.req = q.req;
        m.a = s->commit;
        lock_send(ctx, s->node0 + q.from, &m);
    }
}

void cons_read_index(struct lock_ctx *ctx, struct cons_server *s, int from, uint32_t req) {
    int slot = -1;
    for (int i = 0; i < RENEW_CAP; i++) {
        if (s->reads[i].used && s->reads[i].from == from && s->reads[i].req == req) slot = i; /* asked again */
        if (slot < 0 && !s->reads[i].used) slot = i;
    }
    if (slot < 0) return;
    s->reads[slot] = (struct cons_readindex){.used = 1, .from = from, .req = req, .asked_mono = now_mono(ctx)};
    if (s->n == 1) cons_renew_confirmed(ctx, s);
    else cons_send_all(ctx, s); /* a heartbeat round at once */
}

void cons_keepalive(struct lock_ctx *ctx, struct cons_server *s, int client, uint32_t creq, uint64_t lease, int via) {
    int slot = -1;
    for (int i = 0; i < RENEW_CAP; i++) {
        if (s->renew[i].used && s->renew[i].client == client) slot = i; /* a retry replaces it */
        if (slot < 0 && !s->renew[i].used) slot = i;
    }
    if (slot < 0) return;
    s->renew[slot] = (struct cons_renewal){
            .used = 1, .client = client, .creq = creq, .lease = lease, .via = via, .asked_mono = now_mono(ctx)};
    if (s->n == 1) cons_renew_confirmed(ctx, s); /* its own majority */
    else cons_send_all(ctx, s);                  /* ReadIndex: a heartbeat round at once */
}

void cons_drop_renewals(struct cons_server *s) {
    memset(s->renew, 0, sizeof s->renew);
    memset(s->check, 0, sizeof s->check);
    memset(s->reads, 0, sizeof s->reads);
    s->primary = 0;
}

void cons_lockcheck_begin(struct lock_ctx *ctx, struct cons_server *s, int client, uint32_t creq, uint64_t rev) {
    int slot = -1;
    for (int i = 0; i < RENEW_CAP && slot < 0; i++)
        if (!s->check[i].used) slot = i;
    if (slot < 0) return; /* the call waits on */
    s->check[slot] = (struct cons_lockcheck){.used = 1, .client = client, .creq = creq, .rev = rev, .read_index = -1};
    if (s->leader < 0 || s->leader == s->self) return; /* asked of the next leader it follows (follow) */
    struct lock_msg r = {0};
    r.type = M_READ_INDEX;
    r.req = creq;
    lock_send(ctx, s->node0 + s->leader, &r);
}

/* The bound servers' re-reads (cons_lockcheck_begin) whose
 * ReadIndex this server has now applied: each answers its client, granted
 * if the key is still the lock's under the same revision. Beside the
 * apply loop, its one caller's reason to run. */
void cons_lockchecks_due(struct lock_ctx *ctx, struct cons_server *s) {
    for (int i = 0; i < RENEW_CAP; i++) {
        struct cons_lockcheck k = s->check[i];
        if (!k.used || k.read_index < 0 || s->applied < k.read_index) continue;
        s->check[i].used = 0;
        /* `len(gresp.Kvs) == 0`: the key is not the lock's under this
         * revision any more (its lease expired and it was deleted). */
        int kept = s->sm.held && s->sm.owner == k.client && s->sm.revision == k.rev;
        if (!kept)
            lock_note(ctx, "the Lock call re-reads its key after waiting: gone, session expired", k.client,
                      (int64_t)k.rev);
        /* lease left 0: this server does not know it; the client counts it */
        cons_reply_client(ctx, s, k.client, k.creq, kept ? R_GRANTED : R_SESSION_EXPIRED, -1, kept ? k.rev : 0, 0);
    }
}

void cons_apply_committed(struct lock_ctx *ctx, struct cons_server *s) {
    while (s->applied < s->commit) {
        s->applied++;
        struct cons_entry e = *entry_at(s, s->applied);
        apply(ctx, s, s->applied, &e);
    }
    cons_lockchecks_due(ctx, s);
}

/* Raft 5.3/5.4.2: the highest entry of the current term that a majority
 * stores is committed, and everything before it with it. */
void cons_advance_commit(struct lock_ctx *ctx, struct cons_server *s) {
    for (int64_t i = s->last_index; i > s->commit; i--) {
        if (cons_term_at(s, i) != s->term) break; /* older terms are not counted */
        int count = 1;
        for (int f = 0; f < s->n; f++)
            if (f != s->self && s->match[f] >= i) count++;
        if (count >= majority(s)) {
            s->commit = i;
            cons_apply_committed(ctx, s);
            if (s->role == ROLE_LEADER) cons_send_all(ctx, s); /* tell followers at once */
            return;
        }
    }
}

int cons_propose_via(struct lock_ctx *ctx, struct cons_server *s, int kind, int client, uint32_t creq, uint64_t lease,
                     int via) {
    struct cons_entry e = {.term = s->term,
                           .kind = kind,
                           .proposer = s->self,
                           .client = client,
                           .creq = creq,
                           .lease = lease,
                           .via = via};
    if (cons_log_append(s, &e, client >= 0 ? LOG_CAP - LOG_RESERVE : LOG_CAP) != 0) {
        if (!s->log_full++) lock_note(ctx, "log full: nothing commits; requests are dropped", s->last_index, 0);
        lock_state(ctx, CS_ST_LOG_FULL);
        return -1;
    }
    s->log_full = 0;
    for (int f = 0; f < s->n; f++) /* followers sent everything before it */
        if (f != s->self && s->next[f] == s->last_index) cons_send_append(ctx, s, f);
    cons_advance_commit(ctx, s); /* a one-server cluster commits at once */
    return 0;
}

int cons_propose(struct lock_ctx *ctx, struct cons_server *s, int kind, int client, uint32_t creq, uint64_t lease) {
    return cons_propose_via(ctx, s, kind, client, creq, lease, -1);
}
