/* Internals shared by the redis backend's files (real/real.h is the
 * interface): the lock's configuration read from the scenario, the records
 * client processes and the driver write, and the clock both use.
 * refuse.c decides what can be made real, client.c is a client process,
 * real.c drives the processes and the faults, record.c turns the records
 * into a locksim trace. */
#ifndef LOCKSIM_REAL_INT_H
#define LOCKSIM_REAL_INT_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "real.h"
#include "http.h"
#include "resp.h"

enum real_algo { RA_LEASE, RA_FENCED, RA_SETNX, RA_SETNX_EXPIRE, RA_RENEW, RA_CONSENSUS };

/* The lock's configuration, from the scenario's lock line. */
struct real_cfg {
    enum real_algo algo;
    sim_ns ttl_ns;            /* 0 = none (setnx) */
    int release_del;          /* 1 = plain DEL, 0 = compare-and-delete */
    sim_ns gap_ns;            /* setnx-expire: wait between SETNX's reply and EXPIRE */
    long long first_token;    /* fenced-lease: the first token */
    int fenced_resource;      /* writes are checked against the highest token accepted */
    int renew_every;          /* lease-renew: renew every ttl / this (default 3) */
    sim_ns renew_interval_ns; /* lease-renew: or every this long (0 = ttl / renew_every) */
    int tokens;               /* lease-renew tokens=on: a fencing token with each grant */
    int on_lost_abort;        /* lease-renew on-lost=abort: a refused renewal ends the
                               critical section (lock_lost); continue (default): it goes on */
    int queue;                /* consensus queue=on: etcd's v3lock Lock (waits in line) */
    int guard_owner;          /* consensus, resource guard=owner: the write is a txn on the
                               lock key's create_revision */
};

/* A record of the driver's own, not a trace kind: after a crash it asked
 * Redis who holds the lock; a = the holder's node, b = PTTL in real ns
 * (0 = no expiry). */
#define REC_OBSERVED_HOLD (-1)

/* One recorded event, as a client process or the driver saw it. */
struct rec {
    int64_t t; /* real ns since the start */
    int32_t kind, node, peer;
    uint32_t order; /* arrival, to keep equal times stable */
    uint64_t token;
    int64_t a, b;
};

/* The records of one run, in arrival order (order numbers them). */
struct recs {
    struct rec *v;
    size_t n, cap;
    uint32_t order;
};

static inline int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void sleep_until(int64_t abs_ns) {
    struct timespec ts = {(time_t)(abs_ns / 1000000000), (long)(abs_ns % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
}

/* refuse.c: the scenario's lock line as a real_cfg; 0, or LSIM_ENOTREAL
 * with the reason in why. */
int real_parse_cfg(const struct scenario *s, struct real_cfg *c, char *why, size_t n);
/* refuse.c: the simulated run's resource rule (resource-init's b). */
int64_t real_sim_rule(const struct trace *sim);

/* client.c: one client process's state, set by the driver before it runs. */
struct client {
    const struct real_ops *ops;
    int port; /* the server's */
    const struct scenario *s;
    const struct real_cfg *cfg;
    int idx;      /* client index = its node */
    int srv, res; /* the server's and the resource's nodes */
    int evfd;     /* where events go */
    int64_t t0;   /* the run's start, CLOCK_MONOTONIC ns */
    double scale;
    struct resp_conn c;
    int occ[SCN_POINT_COUNT]; /* times each point was reached */
    uint64_t token;
    int holding;
    int lost;         /* lease-renew: a renewal was refused (lock_lost) */
    int64_t renew_at; /* lease-renew: real ns of the next renewal, 0 = none */
    int acquires;
    char value[32];      /* this grant's lock value, NAME#k */
    const sim_ns *waits; /* the simulated run's retry waits of this client, in */
    size_t nwaits, used; /* order (retry + its seeded jitter draw), replayed */
    /* the etcd backend's (store_etcd.c) */
    int64_t lease;       /* the session's lease ID, 0 = none */
    char key[128];       /* the lock key this client holds or waits on */
    struct http_req *ka; /* the keep-alive in flight, NULL = none */
    int ka_dead;         /* its lease is gone: keep-alives stopped */
    int64_t rev;         /* the create_revision of its lock key, 0 = none */
};

/* What a store does for the driver and the client processes: the seam
 * between the program (client.c), the driver (real.c) and a backend
 * (store_redis.c, store_etcd.c). A client's calls run in its own process
 * and emit its records (emit); each may _exit(3) when the store stops
 * answering. */
struct real_ops {
    const char *name;   /* --store NAME */
    const char *server; /* the server's name in messages */
    /* servers: the scenario's lock servers (etcd starts as many members) */
    int (*start)(struct redis_srv *srv, int servers, char *err, size_t n);
    void (*stop)(struct redis_srv *srv);
    /* Empty the store and write the resource's and the fence's first values. */
    int (*setup)(const struct redis_srv *srv, const struct scenario *s, const struct real_cfg *g);
    int (*connect)(struct client *cl);
    void (*disconnect)(struct client *cl);
    /* One attempt (a queued one waits for its turn): 1 granted (cl->token
     * set, srv-grant emitted), 0 refused (srv-deny emitted). */
    int (*try_acquire)(struct client *cl);
    /* Wait until abs (real ns), keeping the lease alive on the way. */
    void (*wait_until)(struct client *cl, int64_t abs);
    /* The release request (release-sent already emitted); srv-delete or srv-keep. */
    void (*release)(struct client *cl);
    /* The resource: read (value, version), write (1 accepted, 2 stale, 3 no token). */
    void (*read)(struct client *cl, int64_t *value, int64_t *version);
    int64_t (*write)(struct client *cl, int64_t value);
    /* After a crash: who holds the lock now (REC_OBSERVED_HOLD records). */
    void (*observe_hold)(const struct redis_srv *srv, const struct scenario *s, struct recs *l, int64_t t);
    /* 1: a release step with the lock known lost is skipped, as the
     * simulator's programs do (no release-sent) */
    int skip_lost_release;
    /* A fault of kind (pause, resume, crash, restart) on lock server member
     * (0 = the simulated run's first server node) at scenario time at, done
     * for real; sim (borrowed) says which server led then. The member it
     * was done on (a pause or crash of the simulated leader goes to the
     * real leader), or -1 when not done. NULL: the store has no such
     * servers (refused before). */
    int (*server_fault)(const struct trace *sim, int member, enum scn_fault_kind kind, sim_ns at);
};

extern const struct real_ops real_store_redis, real_store_etcd;

/* client.c: a record of this client's, now. */
void real_emit(struct client *cl, int kind, int node, int peer, uint64_t token, int64_t a, int64_t b);
/* client.c: a named point of this client's program (its faults done). */
void real_point(struct client *cl, enum scn_point p);
/* client.c: scenario ns at scale, in real ns. */
int64_t real_of(const struct client *cl, sim_ns scn);
/* client.c: the scenario's one-way latency, held before a request or after a reply. */
void real_hop(const struct client *cl);
/* client.c: the owner named by a lock value NAME#k, or TRACE_NO_NODE. */
int real_owner_of(const struct scenario *s, const char *value);

/* client.c: the program of client cl->idx, from its start time until it ends. */
void real_client_main(struct client *cl);

/* real.c: the waits between each denied attempt of client node and its
 * next attempt in the simulated run sim, in order, into a malloc'd *out
 * (NULL when none); their count, or -1 when out of memory. */
long real_sim_waits(const struct trace *sim, int node, sim_ns **out);

/* record.c: append r to l; -1 when out of memory. */
int real_recs_add(struct recs *l, const struct rec *r);
/* record.c: build out (nodes already added) from the records l of a run
 * at scale against redis-server on port; l is sorted here. 0 or an LSIM code. */
int real_record(const struct scenario *s, const struct trace *sim, const struct recs *l, double scale,
                const char *server, int port, int srv_node, struct trace *out);

#endif
