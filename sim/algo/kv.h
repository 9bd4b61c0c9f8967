/* A Redis-like key-value lock store (the server side) and the client that
 * speaks to it, shared by the lease-family algorithms (setnx, lease,
 * fenced-lease). Each algorithm keeps its own file for its defaults, its
 * options and its struct lock_algo; the protocol lives here once.
 *
 * With several servers and replication on (the default for setnx, lease and
 * fenced-lease), S1 starts as the primary and S2..SN as its replicas, in the
 * manner of Redis replication with Sentinel failover: asynchronous, with
 * optional WAIT and min-replicas-to-write, and promotion by an operator
 * (`promote S2`). Algorithms that use the store as N independent masters
 * (Redlock) keep replication off. */
#ifndef LOCKSIM_KV_H
#define LOCKSIM_KV_H

#include <stddef.h>
#include <stdint.h>

#include "lock.h"

#define KV_MAX_SERVERS 15            /* = LOCK_MAX_SERVERS (checked in kv_config.c) */
#define KV_REPL_BACKLOG 64           /* replication messages a primary may hold back (repl-lag) */
#define KV_MAX_WAITS 16              /* SETs a primary may keep blocked in WAIT at once */
#define KV_REPL_PING_NS SIM_NS_PER_S /* a primary's heartbeat to the other servers */

/* Requests and replies (struct lock_msg.type). */
enum {
    KV_SET_NX = 1, /* value, ttl_ns (0 = no expiry) -> KV_REPLY a=1 set, token */
    KV_GET,        /* -> KV_REPLY a=1 exists, value */
    KV_DEL,        /* -> KV_REPLY a=keys deleted */
    KV_CAD,        /* value: compare-and-delete (the Lua script) -> a=1 deleted */
    KV_EXPIRE,     /* ttl_ns -> a=1 when the key existed */
    KV_CAE,        /* value, ttl_ns: compare-and-pexpire (renewal script) -> a=1 extended */
    KV_REPLY,      /* a = result; when a = 0, b = enum kv_error (0 = plain "no") */
    /* Replication (servers only; never sent when replication is off). */
    KV_REDIRECT, /* a replica's answer to any client request: a = node of the
                      primary it follows, -1 = it knows none */
    KV_REPL,     /* primary -> every other server: its state after a write, or a
                      heartbeat. req = epoch, a = replication offset, value = the
                      key's value (0 = no key), token = last token issued,
                      b = owner node, ttl_ns = expiry (see kv_repl.c, encode_expiry) */
    KV_REPL_ACK, /* server -> primary: req = epoch, a = offset applied,
                      b = node of the primary this server follows */
    /* The legacy SETNX recipe (setnx-timestamp): the key's value is a timestamp
     * the clients compare. b carries the requester's reading of its own clock
     * in the recipe's unit, for the store's record keeping only (which client
     * the recipe makes the holder); a real GETSET or DEL does not carry it. */
    KV_GETSET,    /* value: set it, answer the old one -> a=1 a key existed, value = old */
    KV_DEL_STALE, /* DEL of a lock the client judged expired -> a=1 */
    /* Replication links (appended: the types above keep their numbers). */
    KV_REPL_CLOSE, /* primary -> replica: the link is closed (CLIENT KILL TYPE replica, or
                      the primary timed it out); req = epoch */
    KV_REPL_SYNC   /* replica -> primary: reconnect and PSYNC; req = epoch, a = offset */
};

/* Why a KV_REPLY says no (its b field when a = 0). */
enum kv_error {
    KV_ERR_NONE = 0,
    KV_ERR_NOREPLICAS = 1,  /* min-replicas-to-write: too few good replicas */
    KV_ERR_WAIT_TIMEOUT = 2 /* SET applied but WAIT saw too few acks: NOT rolled back */
};

enum kv_release {
    KV_RELEASE_CAD,    /* atomic compare-and-delete */
    KV_RELEASE_DEL,    /* plain DEL: may delete someone else's lock */
    KV_RELEASE_GET_DEL /* GET, compare in the client, then DEL: check-then-act race */
};

enum kv_persist { KV_PERSIST_NONE, KV_PERSIST_ALWAYS };

/* The rule at a key's deadline (`deadline=`), and the tick it is judged in. */
enum kv_deadline {
    KV_DEADLINE_REDIS = 0, /* kept through the deadline's millisecond: expired at
                              `now > when` in whole milliseconds (Redis, keyIsExpired) */
    KV_DEADLINE_INCLUSIVE, /* expired at `now >= deadline`, full ns resolution */
    KV_DEADLINE_EXCLUSIVE  /* expired at `now > deadline`, full ns resolution */
};

enum kv_replication {
    KV_REPL_OFF = 0,  /* every server is an independent master (Redlock) */
    KV_REPL_ASYNC = 1 /* S1 primary, S2..SN replicas, asynchronous stream */
};

enum kv_role { KV_ROLE_PRIMARY = 0, KV_ROLE_REPLICA = 1 };

/* An algorithm's configuration starts with this struct: kv_server_* and
 * kv_client_* read lock_config() as a struct kv_config. */
struct kv_config {
    sim_ns ttl_ns;             /* lease length; 0 = no TTL */
    int release;               /* enum kv_release */
    int unique_value;          /* 1 = random token as value, 0 = the constant 1 */
    int fenced;                /* 1 = the client attaches the grant's token to writes */
    uint64_t first_token;      /* first fencing token the store issues */
    int expiry_clock;          /* enum lock_clock the store expires keys by */
    int deadline;              /* enum kv_deadline: the rule at a key's deadline */
    int renew_expired;         /* 1 = a renewal of a lapsed key is accepted while nobody
                                 took it since (Azure blob leases; see kv.c, KV_CAE) */
    int takeover;              /* 1 = a SET on a held key succeeds at once with the next
                                 token (a new epoch), as Kafka's InitProducerId; see kv.c */
    sim_ns uncertainty_ns;     /* uncertainty=: the clock-uncertainty bound; a holder
                                 stops acting when its lease, by its own clock, has
                                 this little left (kv_client.c, stasis); 0 = off */
    int persistence;           /* enum kv_persist: what survives a server restart */
    sim_ns request_timeout_ns; /* a client gives up on a reply after this */
    unsigned allowed;          /* KV_OPT_* bits this algorithm accepts */
    const char *algo_name;
    /* Replication (used when replication != KV_REPL_OFF and servers > 1). */
    int replication;                /* enum kv_replication */
    sim_ns repl_lag_ns;             /* repl-lag: the primary holds each replication message
                                 back this long, by its own monotonic clock */
    int wait_replicas;              /* wait=N: answer a granted SET only after N replicas
                                 acknowledged it (Redis WAIT); 0 = at once */
    sim_ns wait_timeout_ns;         /* wait-timeout: then answer "no" (the key stays) */
    int min_replicas;               /* min-replicas-to-write; 0 = off */
    sim_ns min_replicas_max_lag_ns; /* min-replicas-max-lag: a replica is good if
                                 it is connected and its last ack is at most this old */
    sim_ns repl_timeout_ns;         /* repl-timeout: a primary closes the link of a replica
                                 silent this long (Redis's default 60s) */
    /* Per server, as Redis configures each server on its own (`S2.KEY=VALUE`
     * on the lock line): -1 = the lock line's value. Index = server index. */
    int srv_min_replicas[KV_MAX_SERVERS];
    sim_ns srv_max_lag_ns[KV_MAX_SERVERS];
    const char *extra_options; /* the algorithm's own keys, listed after the store's
                                 in "unknown option" errors (static text or NULL) */
};

#define KV_OPT_TTL (1u << 0)
#define KV_OPT_RELEASE (1u << 1)
#define KV_OPT_VALUE (1u << 2)
#define KV_OPT_FIRST_TOKEN (1u << 3)
#define KV_OPT_EXPIRY_CLOCK (1u << 4)
#define KV_OPT_PERSISTENCE (1u << 5)
#define KV_OPT_TIMEOUT (1u << 6)
/* repl-lag, wait, wait-timeout, min-replicas-to-write, min-replicas-max-lag;
 * kv_config_replicated adds it. */
#define KV_OPT_REPLICATION (1u << 7)
#define KV_OPT_DEADLINE (1u << 8)
#define KV_OPT_RENEW_EXPIRED (1u << 9)
#define KV_OPT_TAKEOVER (1u << 10)
#define KV_OPT_UNCERTAINTY (1u << 11)

/* A replication message the primary holds back for repl-lag. */
struct kv_snap {
    int held;
    int owner;
    uint64_t value;
    uint64_t last_token;  /* next_token - 1 at the time */
    sim_ns expires_local; /* primary's deadline by cfg->expiry_clock; SIM_NEVER = none */
    uint32_t epoch;
    int64_t offset;
    sim_ns due_mono; /* send at this reading of the primary's monotonic clock */
};

/* A granted SET blocked in WAIT until enough replicas acknowledge it. */
struct kv_wait {
    int used;
    int client;   /* node to answer */
    uint32_t req; /* its request id */
    uint64_t value, token;
    int64_t offset; /* replication offset the replicas must reach */
    uint64_t timer; /* wait-timeout timer handle */
};

struct kv_server {
    int held;
    uint64_t value;
    int owner;            /* client node whose SET created the entry */
    sim_ns expires_local; /* by cfg->expiry_clock; SIM_NEVER = no expiry */
    uint64_t token;       /* token issued with this entry */
    uint64_t next_token;
    uint64_t expiry_timer;
    int lapsed; /* 1 = the key expired and nothing was written since: its
                              holder's value and owner are still here (renew-expired) */
    /* Replication; "volatile" fields are lost in a crash, the role, epoch and
     * the primary followed survive it (Sentinel rewrites the config file). */
    int role;                                /* enum kv_role */
    uint32_t epoch;                          /* configuration epoch; a promotion bumps it */
    int primary;                             /* node of the primary this server follows (itself
                              when primary), -1 = none known */
    int64_t offset;                          /* replication offset: writes applied. A primary keeps
                              counting across a restart, so that replicas copy
                              even its empty dataset (Redis forces a full resync) */
    int synced;                              /* replica: 0 = must take the next snapshot whatever its offset */
    int64_t ack_offset[KV_MAX_SERVERS];      /* primary: per server index, last acked offset (volatile) */
    sim_ns ack_at[KV_MAX_SERVERS];           /* primary: its monotonic reading then; SIM_NEVER = none */
    struct kv_snap backlog[KV_REPL_BACKLOG]; /* primary: held back for repl-lag (volatile) */
    int bl_head, bl_len;
    uint64_t repl_timer; /* the backlog head's send timer */
    uint64_t ping_timer; /* the heartbeat timer (primary only) */
    /* The replication links' state (volatile). Redis counts only replicas
     * whose link is up (state ONLINE) as good. */
    int link_closed[KV_MAX_SERVERS]; /* primary: per server index, 1 = that replica's link is
                                        closed (killed, or timed out) until it reconnects */
    int upstream_closed;             /* replica: its link to the primary is closed; it reconnects
                              at the next tick of its replication cron (1 s) */
    uint64_t cron_timer;             /* replica: that reconnect timer */
    struct kv_wait waits[KV_MAX_WAITS];
};

struct kv_client {
    uint32_t req;   /* id of the outstanding request */
    int phase;      /* what the outstanding request is for */
    uint64_t value; /* the value this client set */
    uint64_t token;
    uint64_t timeout; /* timer handle */
    /* Which server to ask (replication): the one it believes is primary. */
    int target;               /* server index; starts at 0 (S1) */
    int type;                 /* the outstanding request, to send it again elsewhere */
    sim_ns req_ttl_ns;        /* its ttl_ns */
    int redirects;            /* redirects followed for this request */
    int timeouts;             /* servers that timed out for this request */
    sim_ns acquire_sent_mono; /* when this acquisition's first SET left, by the monotonic clock */
    uint64_t stasis;          /* uncertainty=: the timer that ends the holding, or 0 */
};

/* The states of the store and its client (lock_state ids), XX(NAME, "name"),
 * shared by every algorithm built on it (KV_STATES, or KV_STATE_NAMES first
 * in a longer list; an
 * algorithm's own states are numbered from KV_ST_COUNT on). States that a
 * configuration cannot reach (promoted without replicas, renewed without a
 * renewing client) are listed all the same and read "not reached". */
/* clang-format off */
#define KV_STATE_MAP(XX)                                                                   \
    XX(ACQUIRING, "acquiring")         /* client: a SET NX sent */                        \
    XX(GRANTED, "granted")             /* client: the SET NX answered yes */              \
    XX(REFUSED, "refused")             /* client: held by another, or no answer */        \
    XX(TIMED_OUT, "timed-out")         /* client: no reply in time, outcome unknown */    \
    XX(REDIRECTED, "redirected")       /* client: a replica sent it to the primary */     \
    XX(RELEASED, "released")           /* server: a holder's release deleted its key */   \
    XX(RELEASE_KEPT, "release-kept")   /* server: compare-and-delete found the key gone   \
                                          or another's, and kept it */                    \
    XX(DELETED_ANOTHERS, "deleted-anothers-lock") /* server: a DEL removed another       \
                                          client's key (the wrong release) */             \
    XX(EXPIRED_UNKNOWN, "expired-unknown") /* server: a key expired before its holder   \
                                          released it; the holder is not told */          \
    XX(RENEWED, "renewed")             /* server: EXPIRE or a renewal extended a key */    \
    XX(NOREPLICAS, "noreplicas")       /* server: min-replicas-to-write refused a write */ \
    XX(WAIT_TIMEOUT, "wait-timeout")   /* server: WAIT saw too few acks (the key stays) */ \
    XX(PROMOTED, "promoted")           /* server: a replica became the primary */         \
    XX(RESTARTED_EMPTY, "restarted-empty") /* server: restarted without persistence,     \
                                          its lock gone */
/* clang-format on */

enum kv_state {
#define KV_STATE_ENUM_(name, text) KV_ST_##name,
    KV_STATE_MAP(KV_STATE_ENUM_)
#undef KV_STATE_ENUM_
            KV_ST_COUNT
};

/* The names, in order, for the start of a state_names initialiser. */
#define KV_STATE_TEXT_(name, text) text,
#define KV_STATE_NAMES KV_STATE_MAP(KV_STATE_TEXT_)

extern const char *const kv_state_names[KV_ST_COUNT];

/* The server side of an algorithm whose lock servers are this store with its
 * own client (lease-renew, setnx-expire): `KV_SERVER_CALLBACKS,`. */
#define KV_SERVER_CALLBACKS \
    .server_size = sizeof(struct kv_server), .server_init = kv_server_init, .server_recv = kv_server_recv, \
    .server_timer = kv_server_timer, .server_restart = kv_server_restart

/* The client and server callbacks of an algorithm that is this store plus
 * this client (setnx, lease, fenced-lease), for a struct lock_algo
 * initialiser: `.config_default = ..., .option = ..., KV_ALGO_CALLBACKS,`. */
#define KV_ALGO_CALLBACKS \
    .client_size = sizeof(struct kv_client), .client_init = kv_client_init, .client_acquire = kv_client_acquire, \
    .client_release = kv_client_release, .client_recv = kv_client_recv, .client_timer = kv_client_timer, \
    KV_SERVER_CALLBACKS, .server_control = kv_server_control, .validate = kv_validate

/* The store's states and no others, for a struct lock_algo initialiser. */
#define KV_STATES .state_names = kv_state_names, .nstates = KV_ST_COUNT

/* Fill defaults; replication is off (see kv_config_replicated). */
void kv_config_default(struct kv_config *c, const char *algo_name, unsigned allowed);
/* Run as one primary with asynchronous replicas when given several servers
 * (setnx, lease, fenced-lease); without it every server is an independent
 * master (Redlock). Call after kv_config_default. */
void kv_config_replicated(struct kv_config *c);
/* One key=value of the kv family: 0, LSIM_EUNKNOWN_OPTION for a key not in
 * c's allowed set, LSIM_EBAD_VALUE for a refused value; err says which.
 * `S<n>.min-replicas-to-write` and `S<n>.min-replicas-max-lag` set one
 * server's own value (replicated algorithms only). */
int kv_option(struct kv_config *c, const char *key, const char *val, char *err, size_t errlen);
/* The whole configuration against the run's servers: a per-server option
 * must name a server of this run. 0, or -1 with err. */
int kv_validate(const void *config, int nservers, char *err, size_t errlen);

/* 1 when a key whose deadline is expires (ns, SIM_NEVER = none) counts as
 * expired at now under rule (enum kv_deadline). KV_DEADLINE_REDIS is Redis's
 * rule at the exact tick (db.c keyIsExpired, `now > when` in milliseconds):
 * expired from the millisecond after the deadline's millisecond on;
 * KV_DEADLINE_INCLUSIVE from the deadline itself; KV_DEADLINE_EXCLUSIVE from
 * one nanosecond after it. */
int kv_key_expired(int rule, sim_ns now, sim_ns expires);

void kv_server_init(struct lock_ctx *ctx, void *state);
void kv_server_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m);
void kv_server_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg);
void kv_server_restart(struct lock_ctx *ctx, void *state);
/* LOCK_CONTROL_PROMOTE: a replica becomes the primary with what it has
 * replicated, in a new epoch, and tells the other servers.
 * LOCK_CONTROL_KILL_REPLICAS (CLIENT KILL TYPE replica): a primary closes
 * every replica's link at once; they count as good no more until they
 * reconnect. */
void kv_server_control(struct lock_ctx *ctx, void *state, enum lock_control c);

/* Request ids of each incarnation start at incarnation << 24, so that a
 * restarted client never takes a reply meant for its previous life. */
void kv_client_init(struct lock_ctx *ctx, void *state);
void kv_client_acquire(struct lock_ctx *ctx, void *state);
void kv_client_release(struct lock_ctx *ctx, void *state);
void kv_client_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m);
void kv_client_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg);


#endif
