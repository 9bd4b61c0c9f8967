/* Private to real/'s backend files: real_refuse.c (what can be made real),
 * real_client.c (a client process) and real.c (the driver and the
 * recording). The configuration read from the lock line, the record a
 * client process sends the driver, and the two clocks' helpers. */
#ifndef LOCKSIM_REAL_INT_H
#define LOCKSIM_REAL_INT_H

#include "real.h"

#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "resp.h"

enum real_algo { RA_LEASE, RA_FENCED, RA_SETNX, RA_SETNX_EXPIRE, RA_RENEW };

/* The lock's configuration, from the scenario's lock line. */
struct real_cfg {
    enum real_algo algo;
    sim_ns ttl_ns;          /* 0 = none (setnx) */
    int release_del;        /* 1 = plain DEL, 0 = compare-and-delete */
    sim_ns gap_ns;          /* setnx-expire: wait between SETNX's reply and EXPIRE */
    long long first_token;  /* fenced-lease: the first token */
    int fenced_resource;    /* writes are checked against the highest token accepted */
    int renew_every;        /* lease-renew: renew every ttl / this (default 3) */
    sim_ns renew_interval_ns; /* lease-renew: or every this long (0 = ttl / renew_every) */
    int tokens;             /* lease-renew tokens=on: a fencing token with each grant */
    int on_lost_abort;      /* lease-renew on-lost=abort: a refused renewal ends the
                               critical section (lock_lost); continue (default): it goes on */
};

/* A record of the driver's own, not a trace kind: after a crash it asked
 * Redis who holds the lock; a = the holder's node, b = PTTL in real ns
 * (0 = no expiry). */
#define REC_OBSERVED_HOLD (-1)

/* One recorded event, as a client process or the driver saw it. */
struct rec {
    int64_t t;              /* real ns since the start */
    int32_t kind, node, peer;
    uint32_t order;         /* arrival, to keep equal times stable */
    uint64_t token;
    int64_t a, b;
};

static inline int64_t real_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void real_sleep_until(int64_t abs_ns) {
    struct timespec ts = {(time_t)(abs_ns / 1000000000), (long)(abs_ns % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

/* The lock line's configuration in *c: 0, or -1 with the reason in why. */
int real_parse_cfg(const struct scenario *s, struct real_cfg *c, char *why, size_t n);

/* The simulated run's resource rule (its resource-init event's b). */
int64_t real_sim_rule(const struct trace *sim);

/* One client process's state (real_client.c). */
struct real_client {
    const struct scenario *s;
    const struct real_cfg *cfg;
    int idx;                  /* client index = its node */
    int srv, res;             /* the server's and the resource's nodes */
    int evfd;                 /* where events go */
    int64_t t0;               /* the run's start, CLOCK_MONOTONIC ns */
    double scale;
    struct resp_conn c;
    int occ[SCN_POINT_COUNT]; /* times each point was reached */
    uint64_t token;
    int holding;
    int lost;                 /* lease-renew: a renewal was refused (lock_lost) */
    int64_t renew_at;         /* lease-renew: real ns of the next renewal, 0 = none */
    int acquires;
    char value[32];           /* this grant's lock value, NAME#k */
};

/* The client's program, run in its own process until it ends: records go
 * to cl->evfd. */
void real_client_main(struct real_client *cl);

#endif
