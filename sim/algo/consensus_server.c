/* The consensus lock's servers: Raft roles (follower, candidate, leader),
 * revocation, and the server callbacks of lock.h (sources in consensus_int.h). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "consensus_int.h"

/* ---- Notes: lock_note needs text that outlives the run ------------------------------- */

/* "<p>1" .. "<p>199", written out by the preprocessor. */
#define TEN(p, t) p #t "0", p #t "1", p #t "2", p #t "3", p #t "4", p #t "5", p #t "6", p #t "7", p #t "8", p #t "9"
#define TENS(p) TEN(p, 1), TEN(p, 2), TEN(p, 3), TEN(p, 4), TEN(p, 5), TEN(p, 6), TEN(p, 7), TEN(p, 8), TEN(p, 9)
#define TERMS(p) p "1", p "2", p "3", p "4", p "5", p "6", p "7", p "8", p "9", TENS(p), TEN(p "1", 0), TENS(p "1")
static const char *const elected_text[] = {TERMS(LOCK_NOTE_LEADER ", term ")};
static const char *const campaign_text[] = {TERMS("starts an election, term ")};
#define NTERM_TEXTS ((int64_t)(sizeof elected_text / sizeof elected_text[0]))
_Static_assert(sizeof elected_text / sizeof elected_text[0] == 199, "terms 1..199");

static const char *term_text(const char *const *table, int64_t term, const char *later) {
    return term >= 1 && term <= NTERM_TEXTS ? table[term - 1] : later;
}

/* ---- Roles ----------------------------------------------------------------------------- */

static void become_follower(struct lock_ctx *ctx, struct cons_server *s, int64_t term, int leader, const char *why) {
    if (s->role == ROLE_LEADER) {
        cancel(ctx, &s->t_heartbeat);
        cancel(ctx, &s->t_quorum);
        cons_forget_lease(ctx, s);
        cons_drop_renewals(s);
        lock_note(ctx, why, s->term, term);
        lock_state(ctx, CS_ST_STEPPED_DOWN);
    }
    if (term > s->term) {
        s->term = term;
        s->voted_for = -1;
        s->election_ns = random_timeout(ctx); /* a new draw per term, as etcd does */
    }
    s->role = ROLE_FOLLOWER;
    s->leader = leader;
    lock_state(ctx, CS_ST_FOLLOWER);
    /* Raft's Figure 2: the election timer restarts only on hearing the
     * current leader or granting a vote, so a stale candidate's higher term
     * does not keep postponing everyone's election. A former leader had none. */
    if (!s->t_election) arm_election(ctx, s);
}

static void become_leader(struct lock_ctx *ctx, struct cons_server *s) {
    s->role = ROLE_LEADER;
    s->leader = s->self;
    s->campaigns = 0;
    lock_state(ctx, CS_ST_LEADER);
    cancel(ctx, &s->t_election);
    for (int f = 0; f < s->n; f++) {
        s->next[f] = s->last_index + 1;
        s->match[f] = 0;
        s->active[f] = 0;
        s->acked_at[f] = INT64_MIN;
    }
    lock_note(ctx, term_text(elected_text, s->term, LOCK_NOTE_LEADER " (term in field a)"), s->term, s->votes);
    /* Until its no-op applies (promote_leases), the new leader's lessor is
     * not primary: it expires nothing, and a change of leader never expires
     * a lease early. */
    s->expiring = 0;
    cons_forget_lease(ctx, s);
    cons_drop_renewals(s);
    s->lease_deadline = SIM_TIME_MAX;
    for (int i = 0; i < s->sm.nwait; i++) {
        s->sm.wait[i].deadline = SIM_TIME_MAX;
        s->sm.wait[i].expiring = 0;
    }
    s->t_heartbeat = lock_timer(ctx, LOCK_CLOCK_MONO, cfg(ctx)->heartbeat_ns, T_HEARTBEAT, 0);
    s->t_quorum = lock_timer(ctx, LOCK_CLOCK_MONO, cfg(ctx)->election_ns, T_QUORUM, 0);
    cons_propose(ctx, s, E_NOOP, -1, 0, 0); /* Raft section 8: commit an entry of this term */
}

static void campaign(struct lock_ctx *ctx, struct cons_server *s) {
    s->term++;
    s->voted_for = s->self;
    s->role = ROLE_CANDIDATE;
    s->leader = -1;
    lock_state(ctx, CS_ST_CANDIDATE);
    memset(s->granted, 0, sizeof s->granted);
    s->granted[s->self] = 1;
    s->votes = 1;
    if (s->campaigns++ == 0) /* once per run of failed elections, not every retry */
        lock_note(ctx, term_text(campaign_text, s->term, "starts an election (term in field a)"), s->term, 0);
    s->election_ns = random_timeout(ctx);
    arm_election(ctx, s);
    if (s->votes >= majority(s)) {
        become_leader(ctx, s);
        return;
    }
    struct lock_msg m = {0};
    m.type = M_VOTE;
    m.a = s->term;
    m.b = s->last_index;
    m.value = (uint64_t)cons_term_at(s, s->last_index);
    for (int f = 0; f < s->n; f++)
        if (f != s->self) lock_send(ctx, s->node0 + f, &m);
}

/* No keep-alive for a whole TTL: revoke the lease through the log. 0, or -1
 * when the log is full. */
static int revoke(struct lock_ctx *ctx, struct cons_server *s) {
    uint64_t lease = s->sm.lease;
    if (cons_propose(ctx, s, E_EXPIRE, -1, 0, lease) != 0) return -1;
    if (s->role == ROLE_LEADER && s->sm.held && s->sm.lease == lease) s->expiring = lease;
    return 0;
}

/* queue=on: the leases of waiters that went silent are revoked too (their
 * keys go; their calls wait on). Proposals may apply at once (one server),
 * so the due leases are listed first. */
static void revoke_waiters(struct lock_ctx *ctx, struct cons_server *s) {
    uint64_t due[QCAP];
    int n = 0;
    if (s->role != ROLE_LEADER) return;
    for (int i = 0; i < s->sm.nwait; i++) {
        struct cons_waiter *w = &s->sm.wait[i];
        if (w->alive && !w->expiring && now_mono(ctx) >= w->deadline) due[n++] = w->lease;
    }
    for (int k = 0; k < n; k++) {
        if (cons_propose(ctx, s, E_EXPIRE, -1, 0, due[k]) != 0) return;
        int i = cons_find_waiter(s, due[k]);
        if (i >= 0 && s->role == ROLE_LEADER) s->sm.wait[i].expiring = 1;
    }
}

static void arm_revoke_loop(struct lock_ctx *ctx, struct cons_server *s) {
    sim_ns every = cfg(ctx)->expiry_check_ns;
    if (every > 0) s->t_revoke = lock_timer(ctx, LOCK_CLOCK_MONO, every, T_REVOKE, 0);
}

/* ---- Server callbacks -------------------------------------------------------------------- */

void cons_server_init(struct lock_ctx *ctx, void *state) {
    struct cons_server *s = state;
    const struct cons_config *c = cfg(ctx);
    s->n = lock_nservers(ctx);
    s->node0 = lock_server(ctx, 0);
    s->self = lock_self(ctx) - s->node0;
    s->voted_for = -1;
    s->leader = -1;
    s->noted_owner = -1;
    s->sm.owner = s->snap.owner = -1;
    lock_state(ctx, CS_ST_FOLLOWER);
    /* first-candidate: that server times out after exactly T, the others
     * only after 1.5T or more, as a test fixture elects a chosen server. */
    if (c->first_candidate == 0) {
        s->election_ns = random_timeout(ctx);
    } else if (c->first_candidate - 1 == s->self) {
        s->election_ns = c->election_ns;
    } else {
        sim_ns half = c->election_ns / 2 > 0 ? c->election_ns / 2 : 1;
        s->election_ns = c->election_ns + half + (sim_ns)(lock_random(ctx) % (uint64_t)half);
    }
    arm_election(ctx, s);
    arm_revoke_loop(ctx, s);
}

void cons_server_restart(struct lock_ctx *ctx, void *state) {
    struct cons_server *s = state;
    /* The engine dropped every timer at the crash. Term, vote, log and
     * snapshot are on disk, and so is the lock state with the index it has
     * applied (etcd's backend and its consistent index), so nothing is
     * applied twice; what was applied is committed. Everything else starts
     * again. */
    s->t_election = s->t_heartbeat = s->t_quorum = s->t_lease = s->t_revoke = s->t_waiter = 0;
    s->role = ROLE_FOLLOWER;
    s->leader = -1;
    s->commit = s->applied;
    s->votes = 0;
    s->expiring = 0;
    s->noted_owner = -1; /* the checker forgot this server's holder at the crash */
    cons_drop_renewals(s);
    s->campaigns = 0;
    s->boots++; /* the crash closed every client connection to the old process */
    lock_note(ctx, "restarts with its term, vote, log and lock state from disk", s->term, s->last_index);
    s->election_ns = random_timeout(ctx);
    arm_election(ctx, s);
    arm_revoke_loop(ctx, s); /* a new lessor: its loop starts with the process */
}

static void on_vote(struct lock_ctx *ctx, struct cons_server *s, const struct lock_msg *m, int from) {
    int64_t term = m->a, last_index = m->b, last_term = (int64_t)m->value;
    if (term > s->term) become_follower(ctx, s, term, -1, LOCK_NOTE_STEPS_DOWN ": a newer term exists");
    int64_t my_last_term = cons_term_at(s, s->last_index);
    int up_to_date = last_term > my_last_term || (last_term == my_last_term && last_index >= s->last_index);
    int granted = 0;
    if (term == s->term && (s->voted_for < 0 || s->voted_for == from) && up_to_date) {
        s->voted_for = from;
        granted = 1;
        arm_election(ctx, s);
    }
    struct lock_msg r = {0};
    r.type = M_VOTE_REPLY;
    r.a = s->term;
    r.b = granted;
    lock_send(ctx, m->from, &r);
}

static void on_vote_reply(struct lock_ctx *ctx, struct cons_server *s, const struct lock_msg *m, int from) {
    if (m->a > s->term) {
        become_follower(ctx, s, m->a, -1, LOCK_NOTE_STEPS_DOWN ": a newer term exists");
        return;
    }
    if (s->role != ROLE_CANDIDATE || m->a != s->term || !m->b || s->granted[from]) return;
    s->granted[from] = 1;
    if (++s->votes >= majority(s)) become_leader(ctx, s);
}

static void reply_append(struct lock_ctx *ctx, struct cons_server *s, const struct lock_msg *m, int ok, int64_t value) {
    struct lock_msg r = {0};
    r.type = M_APPEND_REPLY;
    r.a = s->term;
    r.b = ok;
    r.value = (uint64_t)value;
    r.ttl_ns = m->ttl_ns; /* the leader's send time, echoed */
    lock_send(ctx, m->from, &r);
}

/* A message from the leader of term `term`: follow it. Returns 0 when the
 * message is from a stale leader and must be refused. */
static int follow(struct lock_ctx *ctx, struct cons_server *s, int64_t term, int from) {
    if (term < s->term) return 0;
    int known = s->leader;
    if (term > s->term || s->role != ROLE_FOLLOWER)
        become_follower(ctx, s, term, from, LOCK_NOTE_STEPS_DOWN ": a newer term exists");
    arm_election(ctx, s);
    s->leader = from;
    /* A Lock call whose ReadIndex is unanswered asks the leader it now
     * follows (the one asked may have been deposed, and drops it). */
    for (int i = 0; known != from && i < RENEW_CAP; i++)
        if (s->check[i].used && s->check[i].read_index < 0) {
            struct lock_msg r = {0};
            r.type = M_READ_INDEX;
            r.req = s->check[i].creq;
            lock_send(ctx, s->node0 + from, &r);
        }
    s->campaigns = 0;
    return 1;
}

static void on_append(struct lock_ctx *ctx, struct cons_server *s, const struct lock_msg *m, int from) {
    int64_t term = hi32(m->a), leader_commit = lo32(m->a);
    int64_t prev = hi32(m->b), prev_term = lo32(m->b);
    if (!follow(ctx, s, term, from)) {
        reply_append(ctx, s, m, 0, s->last_index + 1);
        return;
    }
    if (prev > s->last_index) { /* a gap: ask for what follows our last entry */
        reply_append(ctx, s, m, 0, s->last_index + 1);
        return;
    }
    if (prev >= s->snap_index && cons_term_at(s, prev) != prev_term) {
        /* A conflict: hint at the first index of the conflicting term. */
        int64_t t = cons_term_at(s, prev), h = prev;
        while (h - 1 > s->snap_index && cons_term_at(s, h - 1) == t) h--;
        reply_append(ctx, s, m, 0, h);
        return;
    }
    /* Our log agrees with the leader's up to prev (below the snapshot,
     * entries are committed and agree by Raft's log matching). */
    if (leader_commit > s->commit && prev > s->commit) {
        s->commit = leader_commit < prev ? leader_commit : prev;
        cons_apply_committed(ctx, s);
    }
    int64_t last_new = prev;
    int64_t bits = lo32((int64_t)m->token);
    int kind = (int)(bits >> 28);
    if (kind != E_NONE) {
        struct cons_entry e = {.term = hi32((int64_t)m->token),
                               .kind = kind,
                               .proposer = (int)((bits >> 24) & 0xf) - 1,
                               .client = (int)(bits & 0xfffff) - 1,
                               .creq = m->req,
                               .lease = m->value,
                               .via = (int)((bits >> 20) & 0xf) - 1};
        int64_t idx = prev + 1;
        last_new = idx;
        if (idx > s->snap_index) {
            if (idx <= s->last_index && cons_term_at(s, idx) != e.term)
                s->last_index = idx - 1; /* drop the conflicting suffix */
            if (idx > s->last_index && cons_log_append(s, &e, LOG_CAP) != 0) {
                reply_append(ctx, s, m, 0, idx);
                return;
            }
        }
    }
    if (leader_commit > s->commit) {
        int64_t c = leader_commit < last_new ? leader_commit : last_new;
        if (c > s->commit) {
            s->commit = c;
            cons_apply_committed(ctx, s);
        }
    }
    reply_append(ctx, s, m, 1, last_new > s->snap_index ? last_new : s->snap_index);
}

static void on_snapshot(struct lock_ctx *ctx, struct cons_server *s, const struct lock_msg *m, int from) {
    if (!follow(ctx, s, hi32(m->a), from)) {
        reply_append(ctx, s, m, 0, s->last_index + 1);
        return;
    }
    int64_t si = hi32(m->b), st = lo32(m->b);
    int nwait = (int)m->req;
    if (si > s->commit && nwait > 0 && (nwait > QCAP || s->stage_index != si || s->stage_mask != (1u << nwait) - 1u)) {
        /* A queued key of this snapshot is missing: refuse, and the
         * leader sends the snapshot again, keys first. */
        reply_append(ctx, s, m, 0, s->snap_index);
        return;
    }
    if (si > s->commit) {
        int owner = (int)lo32(m->a) - 1;
        struct cons_sm snap = {.held = owner >= 0, .owner = owner, .lease = m->value, .revision = m->token};
        snap.nwait = nwait;
        for (int i = 0; i < nwait; i++) snap.wait[i] = s->stage[i];
        s->stage_mask = 0;
        /* Raft section 7: keep the entries after the snapshot if our log
         * has its last entry; otherwise the whole log is replaced. */
        if (!(si <= s->last_index && cons_term_at(s, si) == st)) s->last_index = si;
        s->snap_index = si;
        s->snap_term = st;
        s->snap = snap;
        s->sm = snap;
        s->commit = s->applied = si;
        if (s->noted_owner >= 0 && !(snap.held && snap.owner == s->noted_owner)) {
            lock_note_expire(ctx, s->noted_owner);
            s->noted_owner = -1;
        }
        lock_note(ctx, "installs the leader's snapshot of the lock state", si, st);
        lock_state(ctx, CS_ST_SNAPSHOT);
    }
    reply_append(ctx, s, m, 1, si);
}

/* One queued key of the leader's snapshot, ahead of the snapshot itself:
 * staged until the snapshot arrives. */
static void on_snapshot_waiter(struct cons_server *s, const struct lock_msg *m) {
    if (hi32(m->a) < s->term) return; /* a stale leader's */
    int64_t si = lo32(m->a), bits = hi32(m->b);
    int i = (int)(bits & 0xf);
    if (i >= QCAP) return;
    if (s->stage_index != si) {
        s->stage_index = si;
        s->stage_mask = 0;
    }
    s->stage[i] = (struct cons_waiter){.client = (int)lo32(m->b) - 1,
                                       .lease = m->value,
                                       .rev = m->token,
                                       .alive = (int)(bits >> 4 & 1),
                                       .proposer = (int)(bits >> 8 & 0xf) - 1,
                                       .via = (int)(bits >> 12 & 0xf) - 1,
                                       .creq = m->req};
    s->stage_mask |= 1u << i;
}

static void on_append_reply(struct lock_ctx *ctx, struct cons_server *s, const struct lock_msg *m, int f) {
    if (m->a > s->term) {
        become_follower(ctx, s, m->a, -1, LOCK_NOTE_STEPS_DOWN ": a newer term exists");
        return;
    }
    if (s->role != ROLE_LEADER || m->a != s->term) return; /* stale */
    s->active[f] = 1;
    if (m->ttl_ns > s->acked_at[f]) s->acked_at[f] = m->ttl_ns;
    cons_renew_confirmed(ctx, s);
    int64_t v = (int64_t)m->value;
    if (m->b) {
        if (v > s->match[f]) s->match[f] = v;
        if (s->next[f] < s->match[f] + 1) s->next[f] = s->match[f] + 1;
        /* Tested here, not only in advance_commit's loop: most answers are
         * to heartbeats, with nothing uncommitted, and the call was half
         * of what such an answer cost the leader. */
        if (s->last_index > s->commit) cons_advance_commit(ctx, s);
        if (s->next[f] <= s->last_index) cons_send_append(ctx, s, f); /* catching up */
        return;
    }
    /* Refused: back up to the follower's hint, never below what is known to
     * match. A hint at or beyond next[f] answers an older message: ignored. */
    int64_t next = v > s->match[f] + 1 ? v : s->match[f] + 1;
    if (next < s->next[f]) {
        s->next[f] = next;
        cons_send_append(ctx, s, f);
    }
}

/* A client's call at the leader: an acquire or a release is proposed
 * through the log; a keep-alive goes to the leader's lessor. */
static void lead_call(struct lock_ctx *ctx, struct cons_server *s, int type, int client, uint32_t creq, uint64_t lease,
                      int via) {
    if (type == M_KEEPALIVE) cons_keepalive(ctx, s, client, creq, lease, via);
    else cons_propose_via(ctx, s, type == M_ACQUIRE ? E_ACQUIRE : E_RELEASE, client, creq, lease, via);
}

/* A client's request. Without bind= a follower redirects the client to the
 * leader it knows (Raft section 8). With bind= the client talks to this
 * server only, and a follower forwards the request to the leader, as etcd
 * does (a proposal goes to the leader through raft, a LeaseKeepAlive is
 * forwarded to the primary lessor): the answer comes back the same way. A
 * follower that knows no leader drops it; the client asks again. */
static void on_client(struct lock_ctx *ctx, struct cons_server *s, const struct lock_msg *m) {
    if (s->role != ROLE_LEADER && cfg(ctx)->nbind) {
        if (s->leader < 0 || s->leader == s->self) return;
        struct lock_msg f = *m;
        f.type = M_FORWARD;
        f.a = m->type;
        f.b = m->from;
        lock_send(ctx, lock_server(ctx, s->leader), &f);
        return;
    }
    if (s->role != ROLE_LEADER) {
        cons_reply_client(ctx, s, m->from, m->req, R_REDIRECT, s->leader >= 0 ? lock_server(ctx, s->leader) : -1, 0, 0);
        return;
    }
    lead_call(ctx, s, m->type, m->from, m->req, m->value, -1);
}

/* A request a bound server forwarded: the leader proposes it for the
 * client, to be answered through that server. A server that no longer leads
 * drops it. */
static void on_forward(struct lock_ctx *ctx, struct cons_server *s, const struct lock_msg *m, int from) {
    if (s->role != ROLE_LEADER) return;
    if (m->a != M_ACQUIRE && m->a != M_RELEASE && m->a != M_KEEPALIVE) return;
    lead_call(ctx, s, (int)m->a, (int)m->b, m->req, m->value, from);
}

void cons_server_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct cons_server *s = state;
    if (m->type == M_ACQUIRE || m->type == M_RELEASE || m->type == M_KEEPALIVE) {
        on_client(ctx, s, m);
        return;
    }
    int from = m->from - s->node0;                           /* lock_server_index, without the call */
    if (from < 0 || from >= s->n || from == s->self) return; /* Raft messages come from servers */
    switch (m->type) {
    case M_VOTE: on_vote(ctx, s, m, from); break;
    case M_VOTE_REPLY: on_vote_reply(ctx, s, m, from); break;
    case M_APPEND: on_append(ctx, s, m, from); break;
    case M_SNAPSHOT: on_snapshot(ctx, s, m, from); break;
    case M_SNAPSHOT_WAITER: on_snapshot_waiter(s, m); break;
    case M_APPEND_REPLY: on_append_reply(ctx, s, m, from); break;
    case M_FORWARD: on_forward(ctx, s, m, from); break;
    case M_FORWARD_REPLY: /* relay the leader's answer to the bound client */
        cons_reply_client(ctx, s, (int)m->value, m->req, (int)m->a, -1, m->token, m->ttl_ns);
        break;
    case M_READ_INDEX: /* ReadIndex: the commit index, once confirmed */
        if (s->role == ROLE_LEADER) cons_read_index(ctx, s, from, m->req);
        break;
    case M_READ_INDEX_REPLY:
        for (int i = 0; i < RENEW_CAP; i++)
            if (s->check[i].used && s->check[i].creq == m->req && s->check[i].read_index < 0)
                s->check[i].read_index = m->a;
        cons_lockchecks_due(ctx, s);
        break;
    default: break;
    }
}

void cons_server_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    (void)arg;
    struct cons_server *s = state;
    const struct cons_config *c = cfg(ctx);
    switch (timer) {
    case T_ELECTION:
        s->t_election = 0;
        if (s->role != ROLE_LEADER) campaign(ctx, s);
        break;
    case T_HEARTBEAT:
        s->t_heartbeat = 0;
        if (s->role != ROLE_LEADER) break;
        cons_send_all(ctx, s);
        s->t_heartbeat = lock_timer(ctx, LOCK_CLOCK_MONO, c->heartbeat_ns, T_HEARTBEAT, 0);
        break;
    case T_QUORUM: {
        s->t_quorum = 0;
        if (s->role != ROLE_LEADER) break;
        int heard = 1;
        for (int f = 0; f < s->n; f++) {
            if (f != s->self && s->active[f]) heard++;
            s->active[f] = 0;
        }
        if (c->check_quorum && heard < majority(s)) {
            become_follower(ctx, s, s->term, -1,
                            LOCK_NOTE_STEPS_DOWN ": no word from a majority for an election timeout");
            break;
        }
        s->t_quorum = lock_timer(ctx, LOCK_CLOCK_MONO, c->election_ns, T_QUORUM, 0);
        break;
    }
    case T_LEASE:
        s->t_lease = 0;
        if (s->role != ROLE_LEADER || !s->sm.held || s->expiring == s->sm.lease) break;
        /* Due at the deadline itself, as etcd has it (server/lease/lessor.go:
         * Lease.expired() is Remaining() <= 0, and the revoke loop keeps an
         * item only while now.Before(its expiry); ZooKeeper's ExpiryQueue
         * agrees), so a keep-alive arriving at the deadline is too late. */
        if (now_mono(ctx) < s->lease_deadline) { /* not due yet (a renewal raced the timer) */
            s->t_lease = lock_timer(ctx, LOCK_CLOCK_MONO, s->lease_deadline - now_mono(ctx), T_LEASE, 0);
            break;
        }
        if (revoke(ctx, s) != 0) s->t_lease = lock_timer(ctx, LOCK_CLOCK_MONO, c->heartbeat_ns, T_LEASE, 0);
        break;
    case T_WAITER:
        s->t_waiter = 0;
        revoke_waiters(ctx, s);
        cons_arm_waiter_timer(ctx, s);
        break;
    case T_REVOKE:
        /* etcd's lessor runLoop: revokeExpiredLeases, then sleep 500ms
         * (server/lease/lessor.go), on every member from its start; only
         * the primary (the promoted leader) finds anything to revoke. A
         * lease is due once its deadline has come (findExpiredLeases skips
         * an item only while now.Before(its expiry)). */
        s->t_revoke = lock_timer(ctx, LOCK_CLOCK_MONO, c->expiry_check_ns, T_REVOKE, 0);
        if (s->role == ROLE_LEADER && s->sm.held && s->expiring != s->sm.lease && now_mono(ctx) >= s->lease_deadline)
            (void)revoke(ctx, s); /* a full log: the next round tries again */
        revoke_waiters(ctx, s);
        break;
    default: break;
    }
}

/* `promote S2`: Raft's leadership transfer (TimeoutNow): the server
 * campaigns at once. It wins only with a majority and an up-to-date log. */
void cons_server_control(struct lock_ctx *ctx, void *state, enum lock_control control) {
    struct cons_server *s = state;
    if (control == LOCK_CONTROL_PROMOTE && s->role != ROLE_LEADER) campaign(ctx, s);
}
