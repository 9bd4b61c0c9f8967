/* The lock-algorithm interface: one struct of callbacks and a name per
 * algorithm (one file each, listed in algo_registry.c), in the manner of
 * SQLite's sqlite3_vfs. Algorithms see only this header: their own node's
 * clocks, messages, timers and the engine's PRNG. They cannot tell that they
 * are being faulted; pauses, crashes, clock steps and partitions are applied
 * by the engine's models around them.
 *
 * A user-written algorithm is a shared object exporting
 *     const struct lock_algo *locksim_algo(void);
 * whose abi field equals LOCK_ABI_VERSION (see docs/lock-interface.md).
 * This header is all an algorithm includes (with, for the built-in ones, the
 * shared server models sim/algo/kv.h and db.h, which include only it); what
 * it includes itself, error.h and vtime.h, include nothing of the project. */
#ifndef LOCKSIM_LOCK_H
#define LOCKSIM_LOCK_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "vtime.h"

/* 2: option returns a negative LSIM_E code (error.h) instead of -1, and an
 * unknown key is told by LSIM_EUNKNOWN_OPTION, not by the text of err.
 * 3: grant_quorum, lock_free, state_names and nstates at the end of
 * struct lock_algo; enum lock_control gains LOCK_CONTROL_KILL_REPLICAS
 * (server_control may be called with it); lock_server_state (at the end
 * of this file) and lock_state() (marks a state reached: coverage for
 * `locksim explore`). */
#define LOCK_ABI_VERSION 4u

#define LOCK_MAX_SERVERS 15 /* lock servers in a run at most (= SCN_MAX_SERVERS) */
#define LOCK_OPT_MAX 48     /* longest option key or value, with its NUL (= SCN_OPT_MAX) */
#define LOCK_MAX_STATES 64  /* states an algorithm may name (lock_algo.nstates) */

struct lock_ctx; /* the engine's view of one node, valid during a callback only */

enum lock_clock {
    LOCK_CLOCK_MONO = 0, /* monotonic: never stepped unless the scenario says so */
    LOCK_CLOCK_WALL = 1  /* wall clock: steps (NTP jumps, operators) move it */
};

/* A message between clients and lock servers, or between servers. Copied by
 * value into the network; nothing in it is owned. */
struct lock_msg {
    int from;       /* sender node, filled in by the engine */
    int to;         /* receiver node, filled in by the engine */
    int type;       /* algorithm-defined */
    uint32_t req;   /* request id, to match replies with attempts */
    uint64_t value; /* lock value (unique token, or a constant such as 1) */
    uint64_t token; /* fencing token or revision; 0 = none */
    sim_ns ttl_ns;  /* lease length asked for or granted */
    int64_t a, b;   /* algorithm-defined */
};

/* A write arriving at the protected resource, for algorithms that decide
 * writes themselves (fencing variants, database conditional updates). */
struct lock_write {
    int client;           /* writer node */
    uint64_t token;       /* token the client attached (0 = none) */
    int64_t value;        /* value it wants to store */
    int64_t read_version; /* resource version the client read before writing */
    int64_t version;      /* resource version now */
    int64_t stock;        /* value now */
};

/* The answers of a resource rule (lock_algo.resource_write) to one write,
 * XX(NAME, value): one list, from which both enum lock_write_result here and
 * the trace's enum trace_write (trace.h) are made, so their values agree. */
/* clang-format off */
#define LOCK_WRITE_RESULT_MAP(XX)                                                          \
    XX(ACCEPTED, 1)                                                                        \
    XX(REJECTED_STALE, 2)     /* token lower than the highest seen */                      \
    XX(REJECTED_NOTOKEN, 3)   /* fenced resource, no token carried */                      \
    XX(REJECTED_COND, 4)      /* conditional update: version moved */                      \
    XX(REJECTED_UNIQUE, 5)    /* INSERT violates a UNIQUE constraint */                    \
    XX(REJECTED_DUPLICATE, 6) /* idempotency key already applied: not applied again */   \
    XX(REJECTED_NOT_OWNER, 7) /* resource guard=owner: the lock service does not record  \
                                 the writer (with its token) as the lock's holder */
/* clang-format on */

enum lock_write_result {
#define LOCK_WRITE_ENUM_(name, value) LOCK_WRITE_##name = value,
    LOCK_WRITE_RESULT_MAP(LOCK_WRITE_ENUM_)
#undef LOCK_WRITE_ENUM_
};

/* Operator actions on a lock server, delivered as scenario faults. */
enum lock_control {
    LOCK_CONTROL_PROMOTE = 1,      /* make this replica the primary (failover) */
    LOCK_CONTROL_KILL_REPLICAS = 2 /* close this server's replication links at once
                                      (Redis: CLIENT KILL TYPE replica) */
};

struct lock_algo {
    uint32_t abi;        /* LOCK_ABI_VERSION */
    const char *name;    /* as used in `lock NAME` and --algo */
    const char *summary; /* one line for `locksim list` */
    int default_servers; /* lock servers wanted when the scenario does not say */
    int max_servers;     /* 0 = no limit beyond SCN_MAX_SERVERS */
    size_t config_size;  /* bytes of configuration (from lock-line options) */
    size_t client_size;  /* bytes of per-client state, zeroed before client_init */
    size_t server_size;  /* bytes of per-server state, zeroed before server_init */

    /* Configuration. config_default fills defaults; option validates and
     * stores one key=value. It returns 0, or a negative code from error.h
     * with a full sentence in err: LSIM_EUNKNOWN_OPTION for a key it does not
     * know ("unknown option 'ttI' for lease; expected ttl, release, value"),
     * LSIM_EBAD_VALUE for a value it refuses ("ttl '-1s' is not a positive
     * duration such as 30s"). The code, never the text, tells them apart:
     * `run --algo` drops unknown options and stops at bad values. */
    void (*config_default)(void *config);
    int (*option)(void *config, const char *key, const char *val, char *err, size_t errlen);
    /* Optional: check the whole configuration once the number of lock servers
     * is known (e.g. a quorum larger than the servers). 0, or LSIM_EBAD_VALUE
     * with a full sentence in err, as option returns (any other nonzero
     * value is taken as LSIM_EBAD_VALUE). */
    int (*validate)(const void *config, int nservers, char *err, size_t errlen);

    /* Client side. acquire starts one attempt and must end, now or later,
     * in lock_granted() or lock_refused(); release must end in
     * lock_release_done(). A crashed client restarts with fresh state. */
    void (*client_init)(struct lock_ctx *ctx, void *state);
    void (*client_acquire)(struct lock_ctx *ctx, void *state);
    void (*client_release)(struct lock_ctx *ctx, void *state);
    void (*client_recv)(struct lock_ctx *ctx, void *state, const struct lock_msg *m);
    void (*client_timer)(struct lock_ctx *ctx, void *state, int timer, uint64_t arg);

    /* Server side. server_restart runs after a crash, on the state as the
     * crash left it: the algorithm keeps what its persistence model keeps. */
    void (*server_init)(struct lock_ctx *ctx, void *state);
    void (*server_recv)(struct lock_ctx *ctx, void *state, const struct lock_msg *m);
    void (*server_timer)(struct lock_ctx *ctx, void *state, int timer, uint64_t arg);
    void (*server_restart)(struct lock_ctx *ctx, void *state);
    /* Optional: an operator action (failover). NULL = the action has no
     * effect on this algorithm (the trace still records it). */
    void (*server_control)(struct lock_ctx *ctx, void *state, enum lock_control c);

    /* Optional resource rule. NULL = the scenario's rule (`resource fencing=on`
     * rejects a token lower than the highest seen). Otherwise the resource asks
     * this function, with resource_size bytes of state kept at the resource,
     * and it returns an enum lock_write_result value. */
    size_t resource_size;
    int (*resource_write)(struct lock_ctx *ctx, void *state, const struct lock_write *w);
    /* Optional client-side check just before a write leaves the client (the
     * client's own "do I still hold it?"); return 0 to abandon the write. */
    int (*client_write_ok)(struct lock_ctx *ctx, void *state);

    /* Version 3. Optional: how many lock servers' grants (lock_note_grant)
     * to one client make one grant of the lock service, as the service
     * itself counts: Redlock's quorum. The checker orders grants by the
     * instant the service granted them (for a quorum, the grant that
     * completed it), not by when clients learnt of them. NULL = 1: each
     * server grant is a grant of the service. */
    int (*grant_quorum)(const void *config, int nservers);
    /* Version 3. 1 = safety does not rest on holding a lock: acquire takes
     * none (a conditional UPDATE, a UNIQUE constraint) or the algorithm's
     * resource_write absorbs what overlaps (an idempotency key). The checker
     * then judges the run by the resource's history alone (is it a serial
     * order of the clients' read-modify-writes?),
     * and counts overlaps as duplicated work, not as violations. */
    int lock_free;
    /* Version 3. Optional: the states this algorithm's clients and servers pass
     * through ("granted", "expired-unknown", "quorum-missed" ...), for
     * coverage: state_names[i] names the state whose id lock_state() is given
     * as i; nstates of them (at most LOCK_MAX_STATES; 0 with NULL = none).
     * The names are static text, owned by the algorithm. */
    const char *const *state_names;
    int nstates;
    /* Version 4. Optional: how many bytes at the start of a server's state
     * are zeroed before server_init; 0 = all server_size of them. The bytes
     * after are left as the allocator gave them, not zeroed: for a large
     * array the algorithm writes before it reads (a log ring read only up
     * to its last index), which zeroing would cost every run for nothing. */
    size_t server_zero_size;
};

/* ---- Services the engine gives an algorithm (valid inside callbacks). ---- */

const void *lock_config(struct lock_ctx *ctx); /* this run's configuration */
int lock_self(struct lock_ctx *ctx);           /* this node's index */
int lock_nservers(struct lock_ctx *ctx);
int lock_server(struct lock_ctx *ctx, int i);          /* node index of lock server i */
int lock_server_index(struct lock_ctx *ctx, int node); /* i for a server node, else -1 */
/* This node's own reading of one of its clocks. */
sim_ns lock_now(struct lock_ctx *ctx, enum lock_clock clock);
/* Send a message; the network may delay, drop or reorder it. */
void lock_send(struct lock_ctx *ctx, int to, const struct lock_msg *m);
/* Arm a timer that fires when this node's own clock has advanced by delay_ns.
 * Returns a handle (> 0) for lock_cancel. */
uint64_t lock_timer(struct lock_ctx *ctx, enum lock_clock clock, sim_ns delay_ns, int timer, uint64_t arg);
void lock_cancel(struct lock_ctx *ctx, uint64_t handle);
/* lock_cancel(ctx, handle) then lock_timer(ctx, clock, delay_ns, timer, arg),
 * with the same effect and result, in one call: for a timer re-armed again
 * and again (an election timeout that every heartbeat restarts). A handle
 * of 0, or of a timer no longer pending, is only armed. */
uint64_t lock_timer_rearm(struct lock_ctx *ctx, uint64_t handle, enum lock_clock clock, sim_ns delay_ns, int timer,
                          uint64_t arg);
/* Uniform 64-bit draw from the engine's single seeded PRNG. */
uint64_t lock_random(struct lock_ctx *ctx);
/* How many times this node has restarted after a crash (0 at first). A
 * restarted client may use it to keep its request ids apart from those of
 * its previous life, whose replies may still be on the wire. */
uint32_t lock_incarnation(struct lock_ctx *ctx);
/* Client side: the highest fencing token the resource reported in this
 * client's latest read reply (0 = none yet, or no read since acquiring). */
uint64_t lock_read_token(struct lock_ctx *ctx);
/* The scenario's `resource fencing=`: 1 on, 0 off, -1 not stated (or this
 * algorithm was swapped in for the one the file names, whose resource the
 * line describes). An
 * algorithm whose own resource rule is a fencing check honours a stated
 * off by checking nothing (tokens issued but not checked). */
int lock_fencing_stated(struct lock_ctx *ctx);

/* Client outcomes. token is the fencing token the client will attach to its
 * writes (0 = none); validity_ns is how long the client believes it holds
 * the lock (0 = until released). */
void lock_granted(struct lock_ctx *ctx, uint64_t token, sim_ns validity_ns);
void lock_refused(struct lock_ctx *ctx);
void lock_release_done(struct lock_ctx *ctx);
/* The client's algorithm has learnt that it no longer holds the lock (a
 * failed renewal) and the client stops its critical section: it leaves it
 * now, and a later release step has nothing to release. */
void lock_lost(struct lock_ctx *ctx);

/* Server record keeping, for the trace and the checker's ground truth.
 * owner is the client node the entry belongs to. */
void lock_note_grant(struct lock_ctx *ctx, int owner, uint64_t token, sim_ns ttl_ns, sim_ns expires_local);
void lock_note_deny(struct lock_ctx *ctx, int requester, int owner);
void lock_note_renew(struct lock_ctx *ctx, int owner, sim_ns ttl_ns);
void lock_note_expire(struct lock_ctx *ctx, int owner);
void lock_note_delete(struct lock_ctx *ctx, int requester, int owner);
void lock_note_keep(struct lock_ctx *ctx, int requester, int owner);
/* Notes the pictures read (render/layout.c): a server of a replicated lock
 * service that becomes its leader notes text that starts with
 * LOCK_NOTE_LEADER, with a = its term; one that stops leading, text that
 * starts with LOCK_NOTE_STEPS_DOWN. The timeline draws the leadership
 * between them (or the server's crash) on the server's lane. */
#define LOCK_NOTE_LEADER "elected leader"
#define LOCK_NOTE_STEPS_DOWN "steps down"
/* And a lock server that withholds a failed holder's lock from others for a
 * while (Chubby's lock-delay) notes text starting with LOCK_NOTE_LOCK_DELAY
 * (a = how long) when it begins, and LOCK_NOTE_LOCK_DELAY_OVER when it ends. */
#define LOCK_NOTE_LOCK_DELAY "lock-delay:"
#define LOCK_NOTE_LOCK_DELAY_OVER "lock-delay over"
/* Free-form note (text must be a string literal or otherwise outlive the run). */
void lock_note(struct lock_ctx *ctx, const char *text, int64_t a, int64_t b);
/* This node has reached state `state` (an index of lock_algo.state_names);
 * an id outside 0..nstates-1 is ignored. Not a trace event: it changes no
 * trace and no hash, only the run's set of states reached
 * (engine_states_reached), which the explorer counts over its runs. */
void lock_state(struct lock_ctx *ctx, int state);

/* Option values, with the scenario file's own syntax (the parser's rules, so
 * `lock NAME key=value` and a scenario line read a value alike). Each
 * returns 0 and stores the value, or LSIM_EBAD_VALUE and leaves *out as it
 * was. Usable outside callbacks (in option). */
int lock_parse_duration(const char *text, sim_ns *out); /* "30s", "500ms", "1m" */
int lock_parse_int(const char *text, int64_t *out);
int lock_parse_bool(const char *text, int *out); /* on/off, yes/no, true/false */

/* Registry of built-in algorithms. */
const struct lock_algo *lock_algo_find(const char *name);
const struct lock_algo *lock_algo_at(int i); /* NULL past the end */

/* ---- Version 3 ---- */
/* Inside resource_write only: lock server i's state (server_size bytes, read
 * only), for a resource that lives in the lock service, whose check and
 * write are one step of the same servers (a ZooKeeper multi-op that checks
 * the lock znode and sets the data; Chubby's CheckSequencer). NULL when the
 * caller is not the resource, i is not a lock server of the run, or server
 * i is crashed or paused (it could not execute the operation). */
const void *lock_server_state(struct lock_ctx *ctx, int i);

#endif
