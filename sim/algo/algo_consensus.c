/* consensus: a lock service replicated on a majority, in the manner of etcd
 * and ZooKeeper. Servers S1..Sn run a compact Raft; the replicated log holds
 * lock operations; leases are kept alive by the client and expired by the
 * leader; a grant's log index (its revision) is the fencing token. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

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
 *    entries receives InstallSnapshot instead.
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
 * leader never expires a lease early. Keep-alives are committed through the log too: etcd renews in the
 * leader's memory, but committing them means only a leader that still
 * reaches a majority can confirm one, which is the property that matters.
 *
 * Waiting (queue=on): etcd's concurrency.Mutex. A client that finds the
 * lock held puts its own key under its lease and waits until every key with
 * a lower create revision is deleted (waitDeletes); its key's create
 * revision is then its fencing token. The waiter's lease is kept alive (and
 * expired) like the holder's; a waiter whose key was deleted meanwhile gets
 * ErrSessionExpired (the check added for etcd-io/etcd#11456). Without
 * queue=on, a client that finds the lock held is refused and polls.
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

#define LOG_CAP 256                  /* entries kept in the log ring */
#define LOG_RESERVE 8                /* slots client requests leave to no-ops and revokes */
#define MAXS LOCK_MAX_SERVERS

/* Log entries: lock operations. */
enum { E_NONE, E_NOOP, E_ACQUIRE, E_RELEASE, E_KEEPALIVE, E_EXPIRE };

/* Messages (struct lock_msg.type). Raft's messages carry terms and indexes
 * packed two to a 64-bit field (both stay far below 2^31 in any run). */
enum {
    M_VOTE = 1,     /* a = term, b = last log index, value = last log term */
    M_VOTE_REPLY,   /* a = term, b = 1 granted */
    M_APPEND,       /* a = (term, leader commit), b = (prev index, prev term),
                       token = (entry term, kind << 28 | (proposer + 1) << 24 |
                       (client + 1)) or 0, req = the client's request id,
                       value = its lease, ttl_ns = the leader's send time */
    M_APPEND_REPLY, /* a = term, b = 1 success, value = match index or hint,
                       ttl_ns = the send time of the message answered */
    M_SNAPSHOT,     /* a = (term, holder node + 1), b = (snapshot index, term),
                       value = lease, token = revision, ttl_ns = send time */
    M_ACQUIRE,      /* client -> server: req, value = lease */
    M_RELEASE,      /* client -> server: req, value = lease */
    M_KEEPALIVE,    /* client -> server: req, value = lease */
    M_REPLY,        /* server -> client: req, a = enum result, b = leader node
                       hint (or -1), token = revision, ttl_ns = lease left */
    M_FORWARD,      /* bound server -> leader (bind=): a = M_ACQUIRE, M_RELEASE or
                       M_KEEPALIVE, b = client node, req, value = lease */
    M_FORWARD_REPLY /* leader -> bound server: an M_REPLY for client node
                       `value`, relayed by the bound server */
};

enum {
    R_GRANTED = 1, /* token = revision */
    R_DENIED,      /* another lease holds the lock */
    R_RELEASED,
    R_NOT_HELD,    /* release: the lock is not under this lease */
    R_RENEWED,
    R_LEASE_GONE,  /* keep-alive: the lease has expired or is expiring */
    R_REDIRECT,    /* not the leader; b = the leader it knows, or -1 */
    R_QUEUED,      /* queue=on: the key is put, behind the holder; wait */
    R_SESSION_EXPIRED /* queue=on: the wait ended, but the waiter's key is gone */
};

enum { ROLE_FOLLOWER, ROLE_CANDIDATE, ROLE_LEADER };
enum { T_ELECTION = 1, T_HEARTBEAT, T_QUORUM, T_LEASE, T_REVOKE, T_WAITER }; /* server timers */
enum { T_REQUEST = 1, T_KEEPALIVE, T_KEEPALIVE_REQUEST };   /* client timers */
enum { OP_NONE, OP_ACQUIRE, OP_RELEASE };

/* States (lock_state), servers' then clients'. */
enum {
    CS_ST_FOLLOWER,        /* server: a follower (every server starts as one) */
    CS_ST_CANDIDATE,       /* server: started an election */
    CS_ST_LEADER,          /* server: elected leader */
    CS_ST_STEPPED_DOWN,    /* server: a leader became a follower (newer term, no quorum) */
    CS_ST_LEASE_GRANTED,   /* state machine: the key put under a client's lease */
    CS_ST_LEASE_DENIED,    /* state machine: the key held under another lease */
    CS_ST_LEASE_RENEWED,   /* state machine: a keep-alive renewed the lease */
    CS_ST_LEASE_LAPSED,    /* state machine: the leader revoked a silent lease */
    CS_ST_RELEASED,        /* state machine: the holder's release deleted the key */
    CS_ST_RELEASE_NOT_HELD,/* state machine: a release under a lease that no longer holds */
    CS_ST_LOG_FULL,        /* server: the log is full, nothing commits */
    CS_ST_SNAPSHOT,        /* server: installed the leader's snapshot */
    CS_ST_ACQUIRING,       /* client: an acquire sent */
    CS_ST_GRANTED,         /* client: the grant in time */
    CS_ST_GRANT_TOO_LATE,  /* client: the grant came back after its lease ran out */
    CS_ST_REFUSED,         /* client: held by another */
    CS_ST_NO_LEADER,       /* client: no server answered as leader */
    CS_ST_LEASE_LOST,      /* client: a keep-alive was refused: the lease is gone */
    CS_ST_COUNT
};
static const char *const state_names[CS_ST_COUNT] = {
    "follower", "candidate", "leader", "stepped-down", "lease-granted", "lease-denied",
    "lease-renewed", "lease-lapsed", "released", "release-not-held", "log-full",
    "snapshot-installed", "acquiring", "granted", "grant-too-late", "refused", "no-leader",
    "lease-lost"};

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
    int kind;                  /* E_* */
    int proposer;              /* server index that appended it as leader */
    int client;                /* client node, or -1 */
    uint32_t creq;             /* the client's request id */
    uint64_t lease;            /* the client's lease */
    int via;                   /* server index that forwarded the request (bind=), or -1;
                                  kept in the proposer's own log only */
};

/* The replicated state machine: one lock key and the lease it is under. */
/* queue=on: a key put behind the holder's, in revision order, with the
 * Lock call that waits on it (etcd's concurrency.Mutex). */
#define QCAP 8
struct cons_waiter {
    int client;                /* client node */
    uint64_t lease;
    uint64_t rev;              /* the key's create revision: its fencing token */
    int alive;                 /* 0 = the key was deleted (lease expired); the call still waits */
    int proposer, via;         /* the server that answers the call (and the one it relays through) */
    uint32_t creq;             /* the call's request id */
    sim_ns deadline;           /* leader: its lease's deadline by the leader's clock */
    int expiring;              /* leader: its revoke is proposed */
};

struct cons_sm {
    int held;
    int owner;                 /* client node, -1 when free */
    uint64_t lease;
    uint64_t revision;         /* log index of the grant */
    int nwait;                 /* queue=on: keys behind the holder's */
    struct cons_waiter wait[QCAP];
};

struct cons_server {
    /* Persistent (survives a crash). */
    int64_t term;
    int voted_for;             /* server index, -1 = none this term */
    int64_t last_index;
    int64_t snap_index;        /* entries up to here are compacted into snap */
    int64_t snap_term;
    struct cons_sm snap;
    struct cons_sm sm;         /* the lock state, with ... */
    int64_t applied;           /* ... the index it has applied (etcd's consistent index) */
    /* Volatile. */
    int n;                     /* servers in this run */
    int self;                  /* this server's index */
    int node0;                 /* node of server 0 (lock_server(ctx, 0)): server f is node
                                  node0 + f, kept so that a message costs no look-up call */
    int role;
    int leader;                /* server index of the known leader, -1 = unknown */
    int64_t commit;            /* highest index known committed */
    sim_ns election_ns;        /* the current randomized election timeout */
    int votes;
    uint8_t granted[MAXS];     /* votes received this term, by server index */
    int64_t next[MAXS];        /* leader: next index to send each follower (pipelined) */
    int64_t match[MAXS];       /* leader: highest index known stored on each follower */
    uint8_t active[MAXS];      /* leader: heard from since the last quorum check */
    sim_ns acked_at[MAXS];     /* leader: latest send time (its clock) a follower answered */
    sim_ns lease_deadline;     /* leader: by its monotonic clock */
    uint64_t expiring;         /* leader: lease whose revoke it has proposed, 0 = none */
    int noted_owner;           /* holder the trace shows for this server, -1 none */
    int campaigns;             /* elections started since it last heard a leader */
    int log_full;              /* 1 = refusing requests for a full log (noted once) */
    uint64_t t_election, t_heartbeat, t_quorum, t_lease, t_revoke; /* timer handles, 0 = none */
    uint64_t t_waiter;         /* queue=on, expiry-check=off: the next waiter's deadline */
    /* Persistent, and last: not zeroed before server_init (server_zero_size);
     * entry i is read only while snap_index < i <= last_index, after
     * log_append wrote it. */
    struct cons_entry log[LOG_CAP]; /* index i lives at log[i % LOG_CAP] */
};

struct cons_client {
    uint64_t lease;            /* this client's lease (its session); 0 = draw one */
    int target;                /* server index it believes leads */
    int op;                    /* OP_* in flight */
    uint32_t req;              /* request id of the operation in flight */
    sim_ns sent_mono;          /* when it was sent, by this client's monotonic clock */
    int asked;                 /* servers asked for this operation */
    uint64_t t_request;
    int holding;               /* holds the lock as far as it knows */
    uint64_t held_lease;       /* the lease the lock was granted under */
    uint64_t revision;
    uint64_t t_keepalive;      /* periodic, every ttl/3 */
    uint32_t ka_req;           /* keep-alive in flight, 0 = none */
    int ka_asked;
    uint64_t t_ka_request;
    uint32_t next_req;
    int queued;                /* queue=on: its key waits behind the holder's */
    int ka_dead;               /* a keep-alive was refused while it waited: the session is over */
};

/* ---- Configuration ------------------------------------------------------------------ */

static void config_default(void *config) {
    struct cons_config *c = config;
    memset(c, 0, sizeof *c);
    c->ttl_ns = 10 * SIM_NS_PER_S;
    c->token = 1;
    c->request_timeout_ns = SIM_NS_PER_S;
    c->election_ns = SIM_NS_PER_S;        /* etcd's default election timeout */
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
enum { BUG_ETCD_11456 = 1u << 0 };
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
        if (p[0] != 'S' || len < 2 || len - 1 >= sizeof num || tmp.nbind >= MAXS)
            return bad(err, n, "bind", val, want);
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
        snprintf(err, n, "first-candidate S%d is not a lock server of this run (S1..S%d)",
                 c->first_candidate, nservers);
        return LSIM_EBAD_VALUE;
    }
    if ((c->bugs & BUG_ETCD_11456) && !c->queue) {
        snprintf(err, n, "bug=etcd-11456 is a bug of etcd's queued Mutex; it needs queue=on");
        return LSIM_EBAD_VALUE;
    }
    for (int i = 0; i < c->nbind; i++) {
        if (c->bind[i] > nservers) {
            snprintf(err, n, "bind names S%d, not a lock server of this run (S1..S%d)", c->bind[i],
                     nservers);
            return LSIM_EBAD_VALUE;
        }
    }
    return 0;
}

static const struct cons_config *cfg(struct lock_ctx *ctx) { return lock_config(ctx); }

/* ---- Notes: lock_note needs text that outlives the run ------------------------------- */

/* "<p>1" .. "<p>199", written out by the preprocessor. */
#define TEN(p, t) p #t "0", p #t "1", p #t "2", p #t "3", p #t "4", p #t "5", p #t "6", \
    p #t "7", p #t "8", p #t "9"
#define TENS(p) TEN(p, 1), TEN(p, 2), TEN(p, 3), TEN(p, 4), TEN(p, 5), TEN(p, 6), TEN(p, 7), \
    TEN(p, 8), TEN(p, 9)
#define TERMS(p) p "1", p "2", p "3", p "4", p "5", p "6", p "7", p "8", p "9", TENS(p), \
    TEN(p "1", 0), TENS(p "1")
static const char *const elected_text[] = {TERMS("elected leader, term ")};
static const char *const campaign_text[] = {TERMS("starts an election, term ")};
#define NTERM_TEXTS ((int64_t)(sizeof elected_text / sizeof elected_text[0]))
_Static_assert(sizeof elected_text / sizeof elected_text[0] == 199, "terms 1..199");

static const char *term_text(const char *const *table, int64_t term, const char *later) {
    return term >= 1 && term <= NTERM_TEXTS ? table[term - 1] : later;
}

/* ---- Small helpers --------------------------------------------------------------------- */

static int64_t pack(int64_t hi, int64_t lo) {
    return (int64_t)(((uint64_t)hi << 32) | ((uint64_t)lo & 0xffffffffu));
}
static int64_t hi32(int64_t v) { return (int64_t)((uint64_t)v >> 32); }
static int64_t lo32(int64_t v) { return (int64_t)((uint64_t)v & 0xffffffffu); }

static int majority(const struct cons_server *s) { return s->n / 2 + 1; }

static sim_ns now_mono(struct lock_ctx *ctx) { return lock_now(ctx, LOCK_CLOCK_MONO); }

static void cancel(struct lock_ctx *ctx, uint64_t *handle) {
    if (*handle) lock_cancel(ctx, *handle);
    *handle = 0;
}

/* Raft's randomized election timeout: uniform in [T, 2T). */
static sim_ns random_timeout(struct lock_ctx *ctx) {
    sim_ns t = cfg(ctx)->election_ns;
    return t + (sim_ns)(lock_random(ctx) % (uint64_t)t);
}

/* (Re)start the election timeout: on every heartbeat a follower hears, so
 * in one call (lock_timer_rearm) rather than a cancel and an arming. */
static void arm_election(struct lock_ctx *ctx, struct cons_server *s) {
    s->t_election = lock_timer_rearm(ctx, s->t_election, LOCK_CLOCK_MONO, s->election_ns, T_ELECTION, 0);
}

/* ---- The log ---------------------------------------------------------------------------- */

static int64_t term_at(const struct cons_server *s, int64_t i) {
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
    if (s->sm.nwait > 0) return; /* InstallSnapshot carries no queue: keep the entries */
    s->snap_term = term_at(s, s->applied);
    s->snap_index = s->applied;
    s->snap = s->sm;
}

/* Append at the end of the log, holding at most cap entries beyond the
 * snapshot. A leader proposing a client request leaves LOG_RESERVE slots
 * free, so that with its log full of uncommitted requests it can still
 * append the no-op that lets them commit. A follower takes everything its
 * leader sends: its own applied index never lags the leader's snapshot. */
static int log_append(struct cons_server *s, const struct cons_entry *e, int64_t cap) {
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

static void arm_waiter_timer(struct lock_ctx *ctx, struct cons_server *s);

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
    if (s->sm.held) restart_lease_ext(ctx, s, extend);
    for (int i = 0; i < s->sm.nwait; i++) {
        s->sm.wait[i].deadline = now_mono(ctx) + c->ttl_ns + extend;
        s->sm.wait[i].expiring = 0;
    }
    arm_waiter_timer(ctx, s);
}

static void send_snapshot(struct lock_ctx *ctx, struct cons_server *s, int f) {
    struct lock_msg m = {0};
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
static void send_append(struct lock_ctx *ctx, struct cons_server *s, int f) {
    int64_t next = s->next[f];
    if (next <= s->snap_index) {
        send_snapshot(ctx, s, f);
        return;
    }
    struct lock_msg m = {0};
    m.type = M_APPEND;
    m.a = pack(s->term, s->commit);
    m.b = pack(next - 1, term_at(s, next - 1));
    m.ttl_ns = now_mono(ctx);
    if (next <= s->last_index) {
        const struct cons_entry *e = entry_at(s, next);
        m.token = (uint64_t)pack(e->term, (int64_t)e->kind << 28 | (int64_t)(e->proposer + 1) << 24 |
                                              (int64_t)(e->client + 1));
        m.req = e->creq;
        m.value = e->lease;
        s->next[f] = next + 1;
    }
    lock_send(ctx, s->node0 + f, &m);
}

static void send_all(struct lock_ctx *ctx, struct cons_server *s) {
    for (int f = 0; f < s->n; f++)
        if (f != s->self) send_append(ctx, s, f);
}

static void reply_client(struct lock_ctx *ctx, int to, uint32_t req, int result, int leader_node,
                         uint64_t revision, sim_ns lease_left) {
    struct lock_msg m = {0};
    m.type = M_REPLY;
    m.req = req;
    m.a = result;
    m.b = leader_node;
    m.token = revision;
    m.ttl_ns = lease_left;
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
static void note_removal(struct lock_ctx *ctx, struct cons_server *s, int record, int owner,
                         int requester, int expired) {
    if (!record && s->noted_owner != owner) return;
    if (expired) lock_note_expire(ctx, owner);
    else lock_note_delete(ctx, requester, owner);
    s->noted_owner = -1;
}

static void forget_lease(struct lock_ctx *ctx, struct cons_server *s) {
    cancel(ctx, &s->t_lease);
    cancel(ctx, &s->t_waiter);
    s->expiring = 0;
}

/* queue=on without the revoke loop (expiry-check=off): one timer, at the
 * earliest deadline among the waiters' leases (the holder's has T_LEASE).
 * A deadline already past (its revoke could not be proposed) is tried again
 * a heartbeat later. */
static void arm_waiter_timer(struct lock_ctx *ctx, struct cons_server *s) {
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
static void answer(struct lock_ctx *ctx, int client, uint32_t creq, int via, int result,
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
        reply_client(ctx, client, creq, result, -1, rev, left);
    }
}

/* queue=on: the waiter under lease, alive or not; -1 if none. */
static int find_waiter(const struct cons_server *s, uint64_t lease) {
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
        int mine = w.proposer == s->self;
        if (!w.alive) {
            if (c->bugs & BUG_ETCD_11456) {
                if (record) {
                    lock_note(ctx, "bug etcd-11456: tells a waiter whose lease expired that it "
                                   "holds the lock", w.client, (int64_t)w.rev);
                    /* The (buggy) service did grant it: record the grant (its
                     * lease already gone), so the checker orders it before the
                     * next waiter's, the one the service's state keeps. */
                    lock_note_grant(ctx, w.client, w.rev, c->ttl_ns, now_mono(ctx));
                }
                if (mine) answer(ctx, w.client, w.creq, w.via, R_GRANTED, w.rev, c->ttl_ns);
            } else {
                if (record)
                    lock_note(ctx, "the waiter's key is gone (its lease expired): session expired",
                              w.client, (int64_t)w.rev);
                if (mine) answer(ctx, w.client, w.creq, w.via, R_SESSION_EXPIRED, 0, 0);
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
            arm_waiter_timer(ctx, s);
        }
        if (record) {
            lock_note_grant(ctx, w.client, w.rev, c->ttl_ns, s->lease_deadline);
            s->noted_owner = w.client;
        }
        if (mine) answer(ctx, w.client, w.creq, w.via, R_GRANTED, w.rev, left);
    }
}

/* Apply committed entry idx to the state machine. Every server does this in
 * the same order with the same result; the leader records the change and the
 * server that proposed the entry answers the client. */
static void apply(struct lock_ctx *ctx, struct cons_server *s, int64_t idx, const struct cons_entry *e) {
    const struct cons_config *c = cfg(ctx);
    int leader = s->role == ROLE_LEADER;     /* keeps lease timers */
    int record = leader && leader_fresh(ctx, s); /* writes the trace record */
    int result = 0;
    uint64_t rev = 0;
    sim_ns left = c->ttl_ns;
    int w = c->queue ? find_waiter(s, e->lease) : -1;
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
                s->sm.wait[w] = (struct cons_waiter){.client = e->client, .lease = e->lease,
                                                     .rev = (uint64_t)idx, .alive = 1};
                if (leader) {
                    s->sm.wait[w].deadline = now_mono(ctx) + c->ttl_ns;
                    arm_waiter_timer(ctx, s);
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
            if (leader) forget_lease(ctx, s);
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
    case E_KEEPALIVE:
        /* etcd's Renew refuses a lease that has expired (Remaining() <= 0)
         * even before the revoke loop has come round to revoke it. */
        if (s->sm.held && s->sm.lease == e->lease &&
            !(leader && (s->expiring == e->lease || now_mono(ctx) >= s->lease_deadline))) {
            result = R_RENEWED;
            lock_state(ctx, CS_ST_LEASE_RENEWED);
            if (leader) restart_lease(ctx, s);
            if (record) lock_note_renew(ctx, s->sm.owner, c->ttl_ns);
        } else if (w >= 0 && s->sm.wait[w].alive &&
                   !(leader && (s->sm.wait[w].expiring || now_mono(ctx) >= s->sm.wait[w].deadline))) {
            result = R_RENEWED; /* a waiter's session is kept alive too */
            if (leader) {
                s->sm.wait[w].deadline = now_mono(ctx) + c->ttl_ns;
                arm_waiter_timer(ctx, s);
            }
        } else {
            result = R_LEASE_GONE;
        }
        break;
    case E_EXPIRE: /* the leader's revoke of a lease that went silent */
        if (s->sm.held && s->sm.lease == e->lease) {
            int owner = s->sm.owner;
            s->sm.held = 0;
            s->sm.owner = -1;
            lock_state(ctx, CS_ST_LEASE_LAPSED);
            if (leader) forget_lease(ctx, s);
            note_removal(ctx, s, record, owner, -1, 1);
            queue_advance(ctx, s, leader, record);
        } else if (w >= 0 && s->sm.wait[w].alive) {
            /* The waiter's key is deleted with its lease; its call waits on. */
            s->sm.wait[w].alive = 0;
            if (record) lock_note(ctx, "lease of a waiting client expired: its key is deleted",
                                  s->sm.wait[w].client, (int64_t)s->sm.wait[w].rev);
        }
        break;
    default: /* E_NOOP: the leader's own marks its promotion */
        if (leader && e->proposer == s->self && e->term == s->term) promote_leases(ctx, s);
        break;
    }
    if (result && e->client >= 0 && e->proposer == s->self)
        answer(ctx, e->client, e->creq, e->via, result, rev, left);
}

static void apply_committed(struct lock_ctx *ctx, struct cons_server *s) {
    while (s->applied < s->commit) {
        s->applied++;
        struct cons_entry e = *entry_at(s, s->applied);
        apply(ctx, s, s->applied, &e);
    }
}

/* Raft 5.3/5.4.2: the highest entry of the current term that a majority
 * stores is committed, and everything before it with it. */
static void advance_commit(struct lock_ctx *ctx, struct cons_server *s) {
    for (int64_t i = s->last_index; i > s->commit; i--) {
        if (term_at(s, i) != s->term) break; /* older terms are not counted */
        int count = 1;
        for (int f = 0; f < s->n; f++)
            if (f != s->self && s->match[f] >= i) count++;
        if (count >= majority(s)) {
            s->commit = i;
            apply_committed(ctx, s);
            if (s->role == ROLE_LEADER) send_all(ctx, s); /* tell followers at once */
            return;
        }
    }
}

static int propose_via(struct lock_ctx *ctx, struct cons_server *s, int kind, int client,
                       uint32_t creq, uint64_t lease, int via) {
    struct cons_entry e = {.term = s->term, .kind = kind, .proposer = s->self, .client = client,
                           .creq = creq, .lease = lease, .via = via};
    if (log_append(s, &e, client >= 0 ? LOG_CAP - LOG_RESERVE : LOG_CAP) != 0) {
        if (!s->log_full++)
            lock_note(ctx, "log full: nothing commits; requests are dropped", s->last_index, 0);
        lock_state(ctx, CS_ST_LOG_FULL);
        return -1;
    }
    s->log_full = 0;
    for (int f = 0; f < s->n; f++) /* followers sent everything before it */
        if (f != s->self && s->next[f] == s->last_index) send_append(ctx, s, f);
    advance_commit(ctx, s); /* a one-server cluster commits at once */
    return 0;
}

static int propose(struct lock_ctx *ctx, struct cons_server *s, int kind, int client, uint32_t creq,
                   uint64_t lease) {
    return propose_via(ctx, s, kind, client, creq, lease, -1);
}

/* ---- Roles ----------------------------------------------------------------------------- */

static void become_follower(struct lock_ctx *ctx, struct cons_server *s, int64_t term, int leader,
                            const char *why) {
    if (s->role == ROLE_LEADER) {
        cancel(ctx, &s->t_heartbeat);
        cancel(ctx, &s->t_quorum);
        forget_lease(ctx, s);
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
    lock_note(ctx, term_text(elected_text, s->term, "elected leader (term in field a)"), s->term,
              s->votes);
    /* Until its no-op applies (promote_leases), the new leader's lessor is
     * not primary: it expires nothing, and a change of leader never expires
     * a lease early. */
    s->expiring = 0;
    forget_lease(ctx, s);
    s->lease_deadline = SIM_TIME_MAX;
    for (int i = 0; i < s->sm.nwait; i++) {
        s->sm.wait[i].deadline = SIM_TIME_MAX;
        s->sm.wait[i].expiring = 0;
    }
    s->t_heartbeat = lock_timer(ctx, LOCK_CLOCK_MONO, cfg(ctx)->heartbeat_ns, T_HEARTBEAT, 0);
    s->t_quorum = lock_timer(ctx, LOCK_CLOCK_MONO, cfg(ctx)->election_ns, T_QUORUM, 0);
    propose(ctx, s, E_NOOP, -1, 0, 0); /* Raft section 8: commit an entry of this term */
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
        lock_note(ctx, term_text(campaign_text, s->term, "starts an election (term in field a)"),
                  s->term, 0);
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
    m.value = (uint64_t)term_at(s, s->last_index);
    for (int f = 0; f < s->n; f++)
        if (f != s->self) lock_send(ctx, s->node0 + f, &m);
}

/* No keep-alive for a whole TTL: revoke the lease through the log. 0, or -1
 * when the log is full. */
static int revoke(struct lock_ctx *ctx, struct cons_server *s) {
    uint64_t lease = s->sm.lease;
    if (propose(ctx, s, E_EXPIRE, -1, 0, lease) != 0) return -1;
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
        if (propose(ctx, s, E_EXPIRE, -1, 0, due[k]) != 0) return;
        int i = find_waiter(s, due[k]);
        if (i >= 0 && s->role == ROLE_LEADER) s->sm.wait[i].expiring = 1;
    }
}

static void arm_revoke_loop(struct lock_ctx *ctx, struct cons_server *s) {
    sim_ns every = cfg(ctx)->expiry_check_ns;
    if (every > 0) s->t_revoke = lock_timer(ctx, LOCK_CLOCK_MONO, every, T_REVOKE, 0);
}

/* ---- Server callbacks -------------------------------------------------------------------- */

static void server_init(struct lock_ctx *ctx, void *state) {
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

static void server_restart(struct lock_ctx *ctx, void *state) {
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
    s->campaigns = 0;
    lock_note(ctx, "restarts with its term, vote, log and lock state from disk", s->term,
              s->last_index);
    s->election_ns = random_timeout(ctx);
    arm_election(ctx, s);
    arm_revoke_loop(ctx, s); /* a new lessor: its loop starts with the process */
}

static void on_vote(struct lock_ctx *ctx, struct cons_server *s, const struct lock_msg *m, int from) {
    int64_t term = m->a, last_index = m->b, last_term = (int64_t)m->value;
    if (term > s->term) become_follower(ctx, s, term, -1, "steps down: a newer term exists");
    int64_t my_last_term = term_at(s, s->last_index);
    int up_to_date = last_term > my_last_term ||
                     (last_term == my_last_term && last_index >= s->last_index);
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

static void on_vote_reply(struct lock_ctx *ctx, struct cons_server *s, const struct lock_msg *m,
                          int from) {
    if (m->a > s->term) {
        become_follower(ctx, s, m->a, -1, "steps down: a newer term exists");
        return;
    }
    if (s->role != ROLE_CANDIDATE || m->a != s->term || !m->b || s->granted[from]) return;
    s->granted[from] = 1;
    if (++s->votes >= majority(s)) become_leader(ctx, s);
}

static void reply_append(struct lock_ctx *ctx, struct cons_server *s, const struct lock_msg *m,
                         int ok, int64_t value) {
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
    if (term > s->term || s->role != ROLE_FOLLOWER)
        become_follower(ctx, s, term, from, "steps down: a newer term exists");
    arm_election(ctx, s);
    s->leader = from;
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
    if (prev >= s->snap_index && term_at(s, prev) != prev_term) {
        /* A conflict: hint at the first index of the conflicting term. */
        int64_t t = term_at(s, prev), h = prev;
        while (h - 1 > s->snap_index && term_at(s, h - 1) == t) h--;
        reply_append(ctx, s, m, 0, h);
        return;
    }
    /* Our log agrees with the leader's up to prev (below the snapshot,
     * entries are committed and agree by Raft's log matching). */
    if (leader_commit > s->commit && prev > s->commit) {
        s->commit = leader_commit < prev ? leader_commit : prev;
        apply_committed(ctx, s);
    }
    int64_t last_new = prev;
    int64_t bits = lo32((int64_t)m->token);
    int kind = (int)(bits >> 28);
    if (kind != E_NONE) {
        struct cons_entry e = {.term = hi32((int64_t)m->token), .kind = kind,
                               .proposer = (int)((bits >> 24) & 0xf) - 1,
                               .client = (int)(bits & 0xffffff) - 1, .creq = m->req,
                               .lease = m->value, .via = -1};
        int64_t idx = prev + 1;
        last_new = idx;
        if (idx > s->snap_index) {
            if (idx <= s->last_index && term_at(s, idx) != e.term)
                s->last_index = idx - 1; /* drop the conflicting suffix */
            if (idx > s->last_index && log_append(s, &e, LOG_CAP) != 0) {
                reply_append(ctx, s, m, 0, idx);
                return;
            }
        }
    }
    if (leader_commit > s->commit) {
        int64_t c = leader_commit < last_new ? leader_commit : last_new;
        if (c > s->commit) {
            s->commit = c;
            apply_committed(ctx, s);
        }
    }
    reply_append(ctx, s, m, 1, last_new > s->snap_index ? last_new : s->snap_index);
}

static void on_snapshot(struct lock_ctx *ctx, struct cons_server *s, const struct lock_msg *m,
                        int from) {
    if (!follow(ctx, s, hi32(m->a), from)) {
        reply_append(ctx, s, m, 0, s->last_index + 1);
        return;
    }
    int64_t si = hi32(m->b), st = lo32(m->b);
    if (si > s->commit) {
        int owner = (int)lo32(m->a) - 1;
        struct cons_sm snap = {.held = owner >= 0, .owner = owner, .lease = m->value,
                               .revision = m->token};
        /* Raft section 7: keep the entries after the snapshot if our log
         * has its last entry; otherwise the whole log is replaced. */
        if (!(si <= s->last_index && term_at(s, si) == st)) s->last_index = si;
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

static void on_append_reply(struct lock_ctx *ctx, struct cons_server *s, const struct lock_msg *m,
                            int f) {
    if (m->a > s->term) {
        become_follower(ctx, s, m->a, -1, "steps down: a newer term exists");
        return;
    }
    if (s->role != ROLE_LEADER || m->a != s->term) return; /* stale */
    s->active[f] = 1;
    if (m->ttl_ns > s->acked_at[f]) s->acked_at[f] = m->ttl_ns;
    int64_t v = (int64_t)m->value;
    if (m->b) {
        if (v > s->match[f]) s->match[f] = v;
        if (s->next[f] < s->match[f] + 1) s->next[f] = s->match[f] + 1;
        /* Tested here, not only in advance_commit's loop: most answers are
         * to heartbeats, with nothing uncommitted, and the call was half
         * of what such an answer cost the leader. */
        if (s->last_index > s->commit) advance_commit(ctx, s);
        if (s->next[f] <= s->last_index) send_append(ctx, s, f); /* catching up */
        return;
    }
    /* Refused: back up to the follower's hint, never below what is known to
     * match. A hint at or beyond next[f] answers an older message: ignored. */
    int64_t next = v > s->match[f] + 1 ? v : s->match[f] + 1;
    if (next < s->next[f]) {
        s->next[f] = next;
        send_append(ctx, s, f);
    }
}

static int entry_kind(int type) {
    return type == M_ACQUIRE ? E_ACQUIRE : type == M_RELEASE ? E_RELEASE : E_KEEPALIVE;
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
        reply_client(ctx, m->from, m->req, R_REDIRECT,
                     s->leader >= 0 ? lock_server(ctx, s->leader) : -1, 0, 0);
        return;
    }
    propose(ctx, s, entry_kind(m->type), m->from, m->req, m->value);
}

/* A request a bound server forwarded: the leader proposes it for the
 * client, to be answered through that server. A server that no longer leads
 * drops it. */
static void on_forward(struct lock_ctx *ctx, struct cons_server *s, const struct lock_msg *m, int from) {
    if (s->role != ROLE_LEADER) return;
    if (m->a != M_ACQUIRE && m->a != M_RELEASE && m->a != M_KEEPALIVE) return;
    propose_via(ctx, s, entry_kind((int)m->a), (int)m->b, m->req, m->value, from);
}

static void server_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct cons_server *s = state;
    if (m->type == M_ACQUIRE || m->type == M_RELEASE || m->type == M_KEEPALIVE) {
        on_client(ctx, s, m);
        return;
    }
    int from = m->from - s->node0; /* lock_server_index, without the call */
    if (from < 0 || from >= s->n || from == s->self) return; /* Raft messages come from servers */
    switch (m->type) {
    case M_VOTE: on_vote(ctx, s, m, from); break;
    case M_VOTE_REPLY: on_vote_reply(ctx, s, m, from); break;
    case M_APPEND: on_append(ctx, s, m, from); break;
    case M_SNAPSHOT: on_snapshot(ctx, s, m, from); break;
    case M_APPEND_REPLY: on_append_reply(ctx, s, m, from); break;
    case M_FORWARD: on_forward(ctx, s, m, from); break;
    case M_FORWARD_REPLY: /* relay the leader's answer to the bound client */
        reply_client(ctx, (int)m->value, m->req, (int)m->a, (int)m->b, m->token, m->ttl_ns);
        break;
    default: break;
    }
}

static void server_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
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
        send_all(ctx, s);
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
                            "steps down: no word from a majority for an election timeout");
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
        if (revoke(ctx, s) != 0)
            s->t_lease = lock_timer(ctx, LOCK_CLOCK_MONO, c->heartbeat_ns, T_LEASE, 0);
        break;
    case T_WAITER:
        s->t_waiter = 0;
        revoke_waiters(ctx, s);
        arm_waiter_timer(ctx, s);
        break;
    case T_REVOKE:
        /* etcd's lessor runLoop: revokeExpiredLeases, then sleep 500ms
         * (server/lease/lessor.go), on every member from its start; only
         * the primary (the promoted leader) finds anything to revoke. A
         * lease is due once its deadline has come (findExpiredLeases skips
         * an item only while now.Before(its expiry)). */
        s->t_revoke = lock_timer(ctx, LOCK_CLOCK_MONO, c->expiry_check_ns, T_REVOKE, 0);
        if (s->role == ROLE_LEADER && s->sm.held && s->expiring != s->sm.lease &&
            now_mono(ctx) >= s->lease_deadline)
            (void)revoke(ctx, s); /* a full log: the next round tries again */
        revoke_waiters(ctx, s);
        break;
    default:
        break;
    }
}

/* `promote S2`: Raft's leadership transfer (TimeoutNow): the server
 * campaigns at once. It wins only with a majority and an up-to-date log. */
static void server_control(struct lock_ctx *ctx, void *state, enum lock_control control) {
    struct cons_server *s = state;
    if (control == LOCK_CONTROL_PROMOTE && s->role != ROLE_LEADER) campaign(ctx, s);
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
    c->t_request = lock_timer_rearm(ctx, c->t_request, LOCK_CLOCK_MONO, cfg(ctx)->request_timeout_ns,
                                    T_REQUEST, c->req);
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
    c->ka_asked++;
    lock_send(ctx, lock_server(ctx, c->target), &m);
    c->t_ka_request = lock_timer_rearm(ctx, c->t_ka_request, LOCK_CLOCK_MONO,
                                       cfg(ctx)->request_timeout_ns, T_KEEPALIVE_REQUEST, c->ka_req);
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

static void on_keepalive_reply(struct lock_ctx *ctx, struct cons_client *c, const struct lock_msg *m) {
    cancel(ctx, &c->t_ka_request);
    if (m->a == R_REDIRECT) {
        ka_next(ctx, c, (int)m->b);
        return;
    }
    c->ka_req = 0;
    c->target = lock_server_index(ctx, m->from);
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
        if (!c->queued) {
            c->queued = 1;
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
        lock_granted(ctx, cfg(ctx)->token ? c->revision : 0, m->ttl_ns);
        return;
    }
    /* Chubby's conservative client lease: what the server had left, less the
     * whole round trip, since the server's clock started no earlier than the
     * request left. A grant that comes back too late is no grant. */
    sim_ns validity = m->ttl_ns - (now_mono(ctx) - c->sent_mono);
    if (op == OP_ACQUIRE && m->a == R_GRANTED && validity <= 0) {
        lock_note(ctx, "the grant came back after its lease would have run out; ignored",
                  (int64_t)m->token, validity);
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
    default:
        break;
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
    .server_init = server_init,
    .server_recv = server_recv,
    .server_timer = server_timer,
    .server_restart = server_restart,
    .server_control = server_control,
    .state_names = state_names,
    .nstates = CS_ST_COUNT,
};
