/* The consensus lock's private header: its options, its server and client
 * state, the small helpers, and what its three files share (algo_consensus.c:
 * options, client and the algorithm; consensus_log.c: the log, leases,
 * replication, commit and apply; consensus_server.c: roles and server callbacks).
 * Like every algorithm it sees only lock.h. */
#ifndef LOCKSIM_CONSENSUS_INT_H
#define LOCKSIM_CONSENSUS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "lock.h"


/* Sources, in our own words.
 *
 * Raft (Ongaro & Ousterhout, "In Search of an Understandable Consensus
 * Algorithm", USENIX ATC 2014):
 *  - Terms and elections (section 5.2). A follower that hears nothing from a
 *    leader for its election timeout, drawn at random in [T, 2T), becomes a
 *    candidate: it increments its term, votes for itself and asks every
 *    other server for a vote. The timer restarts when the server hears the
 *    current leader or grants a vote, not when it merely sees a higher term
 *    (Figure 2), so a stale candidate cannot keep postponing elections. A server grants at most
 *    one vote per term, and only to a candidate whose log is at least as
 *    up to date as its own (the election restriction, 5.4.1). A majority of
 *    votes makes a leader; any message with a higher term turns a leader or
 *    candidate back into a follower.
 *  - Log replication (5.3). The leader appends each client request to its
 *    log and sends AppendEntries (one entry per message here, pipelined)
 *    carrying the index and term of the entry before it; a follower whose log does not
 *    hold that entry refuses, and the leader backs up (by the follower's
 *    hint of where its log or the conflicting term begins) until the logs
 *    agree, after which the follower's conflicting suffix is replaced.
 *    Empty AppendEntries are the heartbeats.
 *  - Commit (5.3, 5.4.2). An entry is committed once a majority stores it,
 *    and a leader counts replicas only for entries of its own term; older
 *    entries commit with them. Committed entries are applied in index order
 *    on every server; only then does the server that proposed an entry
 *    answer the client. A new leader appends a no-op so that everything
 *    before it commits promptly (section 8).
 *  - Persistence (5.1, 7). Term, vote, log and snapshot survive a crash
 *    (server_restart keeps them: every append counts as written to disk), and
 *    so does the lock state with the index it has applied, as etcd keeps its
 *    backend and consistent index; role, timers and leader bookkeeping are
 *    volatile.
 *    The log is a ring of LOG_CAP entries; applied entries are compacted
 *    into a snapshot of the lock state, and a follower that needs compacted
 *    entries receives InstallSnapshot instead. The snapshot is the whole
 *    state machine, the queued keys too (etcd snapshots its whole backend,
 *    every key; etcdserver sends it in one stream, here one message per
 *    queued key and then the snapshot, which a follower installs only once
 *    it holds every key it announces). So the log compacts while keys wait.
 *  - Clients (section 8): a client sends to the server it believes leads; a
 *    follower answers with a redirect naming the leader it knows, if any; on
 *    a timeout the client tries the next server. With bind= a client talks
 *    to one server only, which forwards to the leader and relays the answer,
 *    as etcd's followers forward proposals and keep-alives and as Jepsen's
 *    clients each talk to one node (Jepsen, "etcd 3.4.3", 2020): pausing
 *    that server stops the client's keep-alives.
 *  - Check-quorum (Ongaro's dissertation, 6.2; etcd raft's CheckQuorum): a
 *    leader that has not heard from a majority within an election timeout
 *    steps down, so a leader cut off from the majority stops posing as one.
 *    Not modelled: PreVote, so a server rejoining from a minority with a
 *    higher term forces one more election, as in plain Raft.
 *
 * etcd leases and revisions: the lock is one key; acquiring is a
 * compare-and-put transaction committed through the log whatever its
 * outcome (as etcd's concurrency.Mutex does), so a deposed leader cannot
 * grant or deny on stale state. The key is attached to the client's lease.
 * Only the leader (etcd's primary lessor) expires leases, by its own
 * monotonic clock, when it has heard no keep-alive for the TTL, and it
 * commits the revoke through the log like any other change. It finds them
 * on a loop, as etcd's lessor runLoop runs revokeExpiredLeases every 500ms
 * (expiry-check): a lease is revoked at the first round at or after its
 * deadline, not at the deadline. A newly elected leader, once the no-op of
 * its term applies, gives every lease its TTL again plus the election
 * timeout (etcd's lessor Promote(ElectionTimeout())), so that a change of
 * leader never expires a lease early.
 *
 * Keep-alives renew the lease in the leader's lessor, not through the log,
 * as etcd does (server/etcdserver/v3_server.go, LeaseRenew: a leader calls
 * lessor.Renew, a follower forwards the keep-alive to the leader; a lease's
 * deadline lives only in the primary lessor's memory). Before it renews, the
 * leader confirms that it still leads, as etcd's LeaseRenew does with
 * ensureLeadership (a ReadIndex round, linearizableReadNotify, added for
 * etcd-io/etcd#15247): the keep-alive waits until a majority has answered a
 * message the leader sent after it arrived, so a deposed leader that has
 * not heard of its successor renews nothing. A lessor that is not primary yet
 * (its no-op not applied) holds the keep-alive until it is. So a lease that
 * is kept alive costs the log nothing.
 *
 * Waiting (queue=on): etcd's concurrency.Mutex. A client that finds the
 * lock held puts its own key under its lease and waits until every key with
 * a lower create revision is deleted (waitDeletes); its key's create
 * revision is then its fencing token. The waiter's lease is kept alive (and
 * expired) like the holder's; a waiter whose key was deleted meanwhile gets
 * ErrSessionExpired (the check added for etcd-io/etcd#11456). Without
 * queue=on, a client that finds the lock held is refused and polls.
 * With bind=, the Lock call runs where etcd runs it: in the server the
 * client is bound to (server/etcdserver/api/v3lock/lock.go: lockServer.Lock
 * builds a concurrency.Mutex on that server's own client and calls
 * m.Lock). Since 3.4.4, client/v3/concurrency/mutex.go's Lock, after
 * waitDeletes, re-reads its own key with a Get, linearizable by default,
 * and returns ErrSessionExpired when the key is gone. So the wait ends in
 * the bound server itself, when it applies the deletion of the last older
 * key (entries carry the server a call came through), and it then asks
 * the leader for its commit index (ReadIndex), applies up to it, and reads its
 * own copy of the lock. The leader answers a ReadIndex only once a majority
 * has answered a heartbeat it sent after the request arrived, and only
 * once its no-op has applied (Ongaro's dissertation, 6.4; etcd's
 * linearizableReadLoop waits for raft's ReadState): a deposed leader that
 * has not heard of its successor cannot answer from a stale commit index,
 * and a bound server asks again the next leader it follows. So a bound
 * server paused while its client's lease ran out answers ErrSessionExpired
 * when it resumes, not a grant.
 * bug=etcd-11456 keeps the old path (the grant relayed as it is).
 * A waiting call lives on one connection, and etcd's client never waits on
 * a dead one (Documentation/learning/design-client.md: "clients should
 * never deadlock waiting for a server to come back from offline"; its
 * balancer fails over and its calls fail with clear errors). Without
 * bind=, the Mutex runs in the client library (client/v3/concurrency):
 * waitDeletes' watch is resumed by clientv3's watcher on the connection the
 * client now has, so when a waiter's keep-alives move to another server,
 * its call is sent again there (a retry under the same lease moves the
 * answer, or finds its key holding). With bind=, a crash of the bound
 * server ends the v3lock Lock RPC: the client, seeing its keep-alive
 * answered by a restarted process (M_REPLY carries the server's boots),
 * is told the call failed (gRPC Unavailable, not retried by clientv3's
 * retry interceptor for a call that is not repeatable), and its next
 * attempt under the same session finds its key.
 *
 * Documented server bugs (bug=): switches that put a published bug back,
 * to show what it does to a correct client; each names its report.
 *
 * Fencing: the revision of a grant is the index of its log entry; indexes
 * only grow, across leaders and crashes, so it is a fencing token in the
 * sense of Chubby's sequencers (Burrows, OSDI 2006) and of ZooKeeper's zxid
 * (Hunt et al., USENIX ATC 2010), as Kleppmann ("How to do distributed
 * locking", 2016) recommends. Consensus decides who holds the lock; it
 * cannot stop a paused holder from writing after its lease is gone. Only
 * the resource, checking the revision, can (resource fencing=on).
 *
 * Clients (Chubby, section 2.8): a client counts its lease conservatively,
 * from when it sent the request, so the validity it reports is the lease
 * the server had left minus the whole round trip, and a grant that comes
 * back later than that is ignored (the retry finds the lock under the same
 * lease, or not). Keep-alives go out every ttl/3 on a client timer, which a
 * pause of the client freezes like any other. A refused keep-alive tells the
 * client its lease is gone, and it leaves the critical section (lock_lost),
 * as an application watching etcd's session.Done() would; it does not check
 * before each write, so after a pause its late write can leave before the
 * refusal arrives.
 *
 * Trace records (lock_note_grant/deny/renew/expire/delete/keep) are made by
 * the leader when it applies the entry, so the checker sees each change
 * once and not on every replica; and only while a majority has answered it
 * within an election timeout (leader_fresh), so that a leader that was
 * paused or cut off and applies entries on answers that waited for it stays
 * silent like a follower. A server that recorded a grant as leader records
 * the lock's removal when it applies it later as a follower, so that the
 * checker's view of that server does not keep a stale holder. One duplicate
 * remains possible: if a leader's commit messages are all lost before it
 * crashes, the next leader records the same grant again, same revision. */

#define LOG_CAP 256   /* entries kept in the log ring */
#define LOG_RESERVE 8 /* slots client requests leave to no-ops and revokes */
#define MAXS LOCK_MAX_SERVERS

/* Log entries: lock operations. */
enum { E_NONE, E_NOOP, E_ACQUIRE, E_RELEASE, E_EXPIRE_UNUSED, E_EXPIRE };
/* (E_EXPIRE_UNUSED: keep-alives were log entries before issue 25; the slot
 * keeps E_EXPIRE's number, which the messages carry.) */

/* Messages (struct lock_msg.type). Raft's messages carry terms and indexes
 * packed two to a 64-bit field (both stay far below 2^31 in any run). */
enum {
    M_VOTE = 1,         /* a = term, b = last log index, value = last log term */
    M_VOTE_REPLY,       /* a = term, b = 1 granted */
    M_APPEND,           /* a = (term, leader commit), b = (prev index, prev term),
                       token = (entry term, kind << 28 | (proposer + 1) << 24 |
                       (via + 1) << 20 | (client + 1)) or 0, req = the client's request id,
                       value = its lease, ttl_ns = the leader's send time */
    M_APPEND_REPLY,     /* a = term, b = 1 success, value = match index or hint,
                       ttl_ns = the send time of the message answered */
    M_SNAPSHOT,         /* a = (term, holder node + 1), b = (snapshot index, term),
                       value = lease, token = revision, ttl_ns = send time,
                       req = keys queued (queue=on), each sent before it */
    M_ACQUIRE,          /* client -> server: req, value = lease */
    M_RELEASE,          /* client -> server: req, value = lease */
    M_KEEPALIVE,        /* client -> server: req, value = lease */
    M_REPLY,            /* server -> client: req, a = enum result, b = leader node
                       hint (or -1), token = revision, ttl_ns = lease left,
                       value = the answering server's boots (its restarts) */
    M_FORWARD,          /* bound server -> leader (bind=): a = M_ACQUIRE, M_RELEASE or
                       M_KEEPALIVE, b = client node, req, value = lease */
    M_FORWARD_REPLY,    /* leader -> bound server: an M_REPLY for client node
                       `value`, relayed by the bound server */
    M_READ_INDEX,       /* bound server -> leader: req = the check's id */
    M_READ_INDEX_REPLY, /* leader -> bound server: req, a = the leader's commit index */
    M_SNAPSHOT_WAITER   /* leader -> follower, before M_SNAPSHOT: one queued key of the
                        snapshot; a = (term, snapshot index), b = (i | alive << 4 |
                        (proposer + 1) << 8 | (via + 1) << 12, client + 1), value = lease, token = its
                        create revision, req = the call's request id */
};

enum {
    R_GRANTED = 1, /* token = revision */
    R_DENIED,      /* another lease holds the lock */
    R_RELEASED,
    R_NOT_HELD, /* release: the lock is not under this lease */
    R_RENEWED,
    R_LEASE_GONE,     /* keep-alive: the lease has expired or is expiring */
    R_REDIRECT,       /* not the leader; b = the leader it knows, or -1 */
    R_QUEUED,         /* queue=on: the key is put, behind the holder; wait */
    R_SESSION_EXPIRED /* queue=on: the wait ended, but the waiter's key is gone */
};

enum { ROLE_FOLLOWER, ROLE_CANDIDATE, ROLE_LEADER };
enum { T_ELECTION = 1, T_HEARTBEAT, T_QUORUM, T_LEASE, T_REVOKE, T_WAITER }; /* server timers */
enum { T_REQUEST = 1, T_KEEPALIVE, T_KEEPALIVE_REQUEST };                    /* client timers */
enum { OP_NONE, OP_ACQUIRE, OP_RELEASE };

/* States (lock_state), servers' then clients'. */
enum {
    CS_ST_FOLLOWER,         /* server: a follower (every server starts as one) */
    CS_ST_CANDIDATE,        /* server: started an election */
    CS_ST_LEADER,           /* server: elected leader */
    CS_ST_STEPPED_DOWN,     /* server: a leader became a follower (newer term, no quorum) */
    CS_ST_LEASE_GRANTED,    /* state machine: the key put under a client's lease */
    CS_ST_LEASE_DENIED,     /* state machine: the key held under another lease */
    CS_ST_LEASE_RENEWED,    /* state machine: a keep-alive renewed the lease */
    CS_ST_LEASE_LAPSED,     /* state machine: the leader revoked a silent lease */
    CS_ST_RELEASED,         /* state machine: the holder's release deleted the key */
    CS_ST_RELEASE_NOT_HELD, /* state machine: a release under a lease that no longer holds */
    CS_ST_LOG_FULL,         /* server: the log is full, nothing commits */
    CS_ST_SNAPSHOT,         /* server: installed the leader's snapshot */
    CS_ST_ACQUIRING,        /* client: an acquire sent */
    CS_ST_GRANTED,          /* client: the grant in time */
    CS_ST_GRANT_TOO_LATE,   /* client: the grant came back after its lease ran out */
    CS_ST_REFUSED,          /* client: held by another */
    CS_ST_NO_LEADER,        /* client: no server answered as leader */
    CS_ST_LEASE_LOST,       /* client: a keep-alive was refused: the lease is gone */
    CS_ST_COUNT
};

struct cons_config {
    sim_ns ttl_ns;             /* lease length */
    int token;                 /* 1 = the revision is handed out as the fencing token */
    sim_ns request_timeout_ns; /* a client tries the next server after this */
    sim_ns election_ns;        /* election timeout T; each draw is in [T, 2T) */
    sim_ns heartbeat_ns;       /* leader's AppendEntries interval */
    int check_quorum;          /* 1 = a leader without a majority steps down */
    int first_candidate;       /* server number (1-based) that campaigns first; 0 = chance */
    sim_ns expiry_check_ns;    /* the lessor's revoke loop period; 0 = revoke at the deadline */
    sim_ns promote_extend_ns;  /* added to every lease when a leader is promoted; -1 = election_ns */
    int queue;                 /* queue=on: etcd's Mutex, waiters queue keys; 0 = they poll */
    unsigned bugs;             /* documented server bugs switched on (BUG_* bits) */
    int nbind;                 /* 0 = clients pick servers and fail over; else clients are bound */
    uint8_t bind[MAXS];        /* client k talks only to server number bind[k % nbind] (1-based);
                                  0 in bind[0] with nbind 1 = round robin (bind=one) */
};

struct cons_entry {
    int64_t term;
    int kind;       /* E_* */
    int proposer;   /* server index that appended it as leader */
    int client;     /* client node, or -1 */
    uint32_t creq;  /* the client's request id */
    uint64_t lease; /* the client's lease */
    int via;        /* server index that forwarded the request (bind=), or -1 */
};

/* The replicated state machine: one lock key and the lease it is under. */
/* queue=on: a key put behind the holder's, in revision order, with the
 * Lock call that waits on it (etcd's concurrency.Mutex). */
#define QCAP 8
struct cons_waiter {
    int client; /* client node */
    uint64_t lease;
    uint64_t rev;      /* the key's create revision: its fencing token */
    int alive;         /* 0 = the key was deleted (lease expired); the call still waits */
    int proposer, via; /* the server that answers the call (and the one it relays through) */
    uint32_t creq;     /* the call's request id */
    sim_ns deadline;   /* leader: its lease's deadline by the leader's clock */
    int expiring;      /* leader: its revoke is proposed */
};

struct cons_sm {
    int held;
    int owner; /* client node, -1 when free */
    uint64_t lease;
    uint64_t revision; /* log index of the grant */
    int nwait;         /* queue=on: keys behind the holder's */
    struct cons_waiter wait[QCAP];
};

/* A keep-alive the leader holds until a majority confirms that it still
 * leads (etcd's ensureLeadership), volatile. */
#define RENEW_CAP 16
struct cons_renewal {
    int used;
    int client;    /* client node */
    uint32_t creq; /* its request id */
    uint64_t lease;
    int via;           /* server index it came through (bind=), or -1 */
    sim_ns asked_mono; /* its arrival, by the leader's monotonic clock */
};

/* A ReadIndex request the leader holds until a majority confirms that it
 * still leads (volatile). */
struct cons_readindex {
    int used;
    int from;          /* server index that asked */
    uint32_t req;      /* its check's id */
    sim_ns asked_mono; /* its arrival, by the leader's monotonic clock */
};

/* A bound server's Lock call whose wait has ended: it re-reads its key
 * once it has applied the leader's commit index (volatile). */
struct cons_lockcheck {
    int used;
    int client;         /* client node */
    uint32_t creq;      /* its request id */
    uint64_t rev;       /* the key's create revision: the grant's token */
    int64_t read_index; /* the leader's commit index; -1 = not known yet */
};

struct cons_server {
    /* Persistent (survives a crash). */
    int64_t term;
    int voted_for; /* server index, -1 = none this term */
    int64_t last_index;
    int64_t snap_index; /* entries up to here are compacted into snap */
    int64_t snap_term;
    struct cons_sm snap;
    struct cons_sm sm; /* the lock state, with ... */
    int64_t applied;   /* ... the index it has applied (etcd's consistent index) */
    uint32_t boots;    /* restarts so far: a client's connection to an earlier process is gone */
    /* Volatile. */
    int n;     /* servers in this run */
    int self;  /* this server's index */
    int node0; /* node of server 0 (lock_server(ctx, 0)): server f is node
                                  node0 + f, kept so that a message costs no look-up call */
    int role;
    int leader;         /* server index of the known leader, -1 = unknown */
    int64_t commit;     /* highest index known committed */
    sim_ns election_ns; /* the current randomized election timeout */
    int votes;
    uint8_t granted[MAXS]; /* votes received this term, by server index */
    int64_t next[MAXS];    /* leader: next index to send each follower (pipelined) */
    int64_t match[MAXS];   /* leader: highest index known stored on each follower */
    uint8_t active[MAXS];  /* leader: heard from since the last quorum check */
    sim_ns acked_at[MAXS]; /* leader: latest send time (its clock) a follower answered */
    sim_ns lease_deadline; /* leader: by its monotonic clock */
    uint64_t expiring;     /* leader: lease whose revoke it has proposed, 0 = none */
    int noted_owner;       /* holder the trace shows for this server, -1 none */
    int campaigns;         /* elections started since it last heard a leader */
    int log_full;          /* 1 = refusing requests for a full log (noted once) */
    uint64_t t_election, t_heartbeat, t_quorum, t_lease, t_revoke; /* timer handles, 0 = none */
    uint64_t t_waiter;                      /* queue=on, expiry-check=off: the next waiter's deadline */
    int primary;                            /* leader: its lessor is primary (its no-op applied) */
    struct cons_renewal renew[RENEW_CAP];   /* leader: keep-alives awaiting confirmation */
    struct cons_lockcheck check[RENEW_CAP]; /* bound server: Lock calls re-reading their key */
    struct cons_readindex reads[RENEW_CAP]; /* leader: ReadIndex requests awaiting confirmation */
    int64_t stage_index;                    /* follower: the snapshot whose queued keys ... */
    unsigned stage_mask;                    /* ... have arrived (bit i = key i) ... */
    struct cons_waiter stage[QCAP];         /* ... into these slots */
    /* Persistent, and last: not zeroed before server_init (server_zero_size);
     * entry i is read only while snap_index < i <= last_index, after
     * log_append wrote it. */
    struct cons_entry log[LOG_CAP]; /* index i lives at log[i % LOG_CAP] */
};

struct cons_client {
    uint64_t lease;   /* this client's lease (its session); 0 = draw one */
    int target;       /* server index it believes leads */
    int op;           /* OP_* in flight */
    uint32_t req;     /* request id of the operation in flight */
    sim_ns sent_mono; /* when it was sent, by this client's monotonic clock */
    int asked;        /* servers asked for this operation */
    uint64_t t_request;
    int holding;         /* holds the lock as far as it knows */
    uint64_t held_lease; /* the lease the lock was granted under */
    uint64_t revision;
    uint64_t t_keepalive; /* periodic, every ttl/3 */
    uint32_t ka_req;      /* keep-alive in flight, 0 = none */
    int ka_asked;
    uint64_t t_ka_request;
    uint32_t next_req;
    int queued;          /* queue=on: its key waits behind the holder's */
    int ka_dead;         /* a keep-alive was refused while it waited: the session is over */
    sim_ns ka_sent_mono; /* when the keep-alive in flight left, by its monotonic clock */
    sim_ns renewed_from; /* queue=on: when the last keep-alive renewed (or the acquire) left */
    int wait_server;     /* queue=on: server index whose connection the waiting call is on */
    uint64_t wait_boots; /* ... and that server's boots when it answered "queued" */
};

/* Bugs of real systems, switched on by bug= (parse_bugs). */
enum { BUG_ETCD_11456 = 1u << 0 };

static inline const struct cons_config *cfg(struct lock_ctx *ctx) { return lock_config(ctx); }

/* ---- Small helpers --------------------------------------------------------------------- */

static inline int64_t pack(int64_t hi, int64_t lo) {
    return (int64_t)(((uint64_t)hi << 32) | ((uint64_t)lo & 0xffffffffu));
}
static inline int64_t hi32(int64_t v) { return (int64_t)((uint64_t)v >> 32); }
static inline int64_t lo32(int64_t v) { return (int64_t)((uint64_t)v & 0xffffffffu); }

static inline int majority(const struct cons_server *s) { return s->n / 2 + 1; }

static inline sim_ns now_mono(struct lock_ctx *ctx) { return lock_now(ctx, LOCK_CLOCK_MONO); }

static inline void cancel(struct lock_ctx *ctx, uint64_t *handle) {
    if (*handle) lock_cancel(ctx, *handle);
    *handle = 0;
}

/* Raft's randomized election timeout: uniform in [T, 2T). */
static inline sim_ns random_timeout(struct lock_ctx *ctx) {
    sim_ns t = cfg(ctx)->election_ns;
    return t + (sim_ns)(lock_random(ctx) % (uint64_t)t);
}

/* (Re)start the election timeout: on every heartbeat a follower hears, so
 * in one call (lock_timer_rearm) rather than a cancel and an arming. */
static inline void arm_election(struct lock_ctx *ctx, struct cons_server *s) {
    s->t_election = lock_timer_rearm(ctx, s->t_election, LOCK_CLOCK_MONO, s->election_ns, T_ELECTION, 0);
}

/* ---- Shared between the files (defined where the comment says) ---------------------- */

/* consensus_log.c */
int64_t cons_term_at(const struct cons_server *s, int64_t i);
/* Append at the end of the log, holding at most cap entries beyond the
 * snapshot. A leader proposing a client request leaves LOG_RESERVE slots
 * free, so that with its log full of uncommitted requests it can still
 * append the no-op that lets them commit. A follower takes everything its
 * leader sends: its own applied index never lags the leader's snapshot. */
int cons_log_append(struct cons_server *s, const struct cons_entry *e, int64_t cap);
/* AppendEntries to follower f: the entry at next[f] if there is one (and
 * next[f] moves past it: entries are pipelined, not sent one round trip at
 * a time), else a heartbeat; always with the leader's commit index. */
void cons_send_append(struct lock_ctx *ctx, struct cons_server *s, int f);
void cons_send_all(struct lock_ctx *ctx, struct cons_server *s);
/* An M_REPLY from server s; value carries s->boots, so that a client can
 * tell that the process its call waits in is not the one it asked (its
 * connection was broken by a crash). */
void cons_reply_client(struct lock_ctx *ctx, const struct cons_server *s, int to, uint32_t req, int result,
                       int leader_node, uint64_t revision, sim_ns lease_left);
void cons_forget_lease(struct lock_ctx *ctx, struct cons_server *s);
/* queue=on without the revoke loop (expiry-check=off): one timer, at the
 * earliest deadline among the waiters' leases (the holder's has T_LEASE).
 * A deadline already past (its revoke could not be proposed) is tried again
 * a heartbeat later. */
void cons_arm_waiter_timer(struct lock_ctx *ctx, struct cons_server *s);
/* queue=on: the waiter under lease, alive or not; -1 if none. */
int cons_find_waiter(const struct cons_server *s, uint64_t lease);
void cons_apply_committed(struct lock_ctx *ctx, struct cons_server *s);
/* Raft 5.3/5.4.2: the highest entry of the current term that a majority
 * stores is committed, and everything before it with it. */
void cons_advance_commit(struct lock_ctx *ctx, struct cons_server *s);
int cons_propose_via(struct lock_ctx *ctx, struct cons_server *s, int kind, int client, uint32_t creq, uint64_t lease,
                     int via);
int cons_propose(struct lock_ctx *ctx, struct cons_server *s, int kind, int client, uint32_t creq, uint64_t lease);
/* A keep-alive at the leader: renewed in its lessor once a majority has
 * answered a message sent after it arrived (answered through via, bind=, or
 * -1). Dropped when the leader holds RENEW_CAP already: the client asks
 * again. */
void cons_keepalive(struct lock_ctx *ctx, struct cons_server *s, int client, uint32_t creq, uint64_t lease, int via);
/* Renew every held keep-alive, and answer every held ReadIndex request,
 * that a majority has now confirmed. */
void cons_renew_confirmed(struct lock_ctx *ctx, struct cons_server *s);
/* A ReadIndex request from server `from` at the leader: answered with the
 * commit index once a majority has answered a message sent after it
 * arrived (Raft dissertation 6.4), and only by a leader whose no-op has
 * applied. Dropped when the leader holds RENEW_CAP already: asked again. */
void cons_read_index(struct lock_ctx *ctx, struct cons_server *s, int from, uint32_t req);
/* The bound server's Lock call after waitDeletes (etcd >= 3.4.4,
 * client/v3/concurrency/mutex.go): Get its own key, linearizably. It asks
 * the leader it follows for its commit index (ReadIndex; a server that
 * knows no leader asks the next one it follows) and answers once it has
 * applied that far (cons_lockchecks_due). A check whose ReadIndex is lost
 * waits on, the client's call with it, as a Lock call blocked on an
 * unreachable leader does. */
void cons_lockcheck_begin(struct lock_ctx *ctx, struct cons_server *s, int client, uint32_t creq, uint64_t rev);
/* consensus_log.c: a bound server's Lock calls whose read index it has
 * now applied re-read their key and answer (called after applying). */
void cons_lockchecks_due(struct lock_ctx *ctx, struct cons_server *s);
/* A leader steps down or restarts: the held keep-alives and ReadIndex
 * requests are dropped unanswered, as etcd's LeaseRenew fails with
 * ErrNotLeader and a pending read with ErrLeaderChanged. */
void cons_drop_renewals(struct cons_server *s);
/* consensus_server.c */
void cons_server_init(struct lock_ctx *ctx, void *state);
void cons_server_restart(struct lock_ctx *ctx, void *state);
void cons_server_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m);
void cons_server_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg);
/* `promote S2`: Raft's leadership transfer (TimeoutNow): the server
 * campaigns at once. It wins only with a majority and an up-to-date log. */
void cons_server_control(struct lock_ctx *ctx, void *state, enum lock_control control);

#endif
