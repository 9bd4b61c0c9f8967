/* The checker: ground truth from the simulator's global view. It observes
 * every trace event as it is appended (so it works online, step by step, and
 * equally on a recorded trace), appends its findings to the trace as events,
 * and summarises the run in a report with one headline verdict. */
#ifndef LOCKSIM_CHECKER_H
#define LOCKSIM_CHECKER_H

#include <stddef.h>
#include <stdint.h>

#include "scenario.h"
#include "trace.h"

#define CHECKER_EXACT_SAMPLES 1024 /* latencies kept exactly; beyond, a histogram */
#define CHECKER_HIST_BUCKETS (64 * 32)

/* What one client did, recorded online for the clients that expect lines
 * name (checker_watch), never for every client. */
struct checker_fact {
    int node;              /* the client */
    uint64_t first_token;  /* token of its first grant, 0 = no grant or no token */
    sim_ns first_acquired; /* true time of its first grant, -1 = never granted */
    int32_t writes_accepted;
    int32_t writes_rejected;
    int32_t stale_accepted; /* its writes under a superseded grant, accepted */
    int32_t stale_rejected;
    int32_t fenced_out; /* 1 once a grant of it was fenced out (fence_settle) */
};

struct checker_report {
    enum scn_verdict verdict;
    enum scn_purpose purpose;
    int fenced;                    /* the resource has a rule: resource_rule is not plain */
    enum trace_rule resource_rule; /* what decides its writes: resource-init's b, as it is */
    int lock_free;                 /* resource_rule is TRACE_RULE_NO_LOCK: the algorithm takes no
                                   lock, the run is judged by the resource's history and
                                   overlaps are duplicated work */
    int64_t duplicated_work;       /* lock-free runs: writes the algorithm's rule refused
                                   (0 rows matched, UNIQUE violated, key already applied) */
    int64_t non_serial_writes;     /* lock-free runs: accepted writes computed from a read
                                   that another accepted write had overtaken */
    int64_t double_entries;        /* intervals with >= 2 clients in the CS */
    sim_ns double_entry_ns;        /* total true time with >= 2 in the CS */
    int64_t stale_accepted;        /* writes under a superseded grant, accepted */
    int64_t stale_rejected;
    int64_t late_writes;  /* writes under a superseded grant that a resource with a
                                   rule accepted before any operation of a newer grant
                                   (in grant order: no harm) */
    int64_t lost_updates; /* sold - (initial - final stock), when > 0; counted from
                                   the latest absolute write (write set=V) when any */
    int64_t wrong_releases;
    int64_t stuck;      /* clients waiting past stuck-after on a dead owner */
    int64_t fenced_out; /* clients with a grant under which every write, none
                                   stale, was refused by the fence (checker_fence_*) */
    int64_t acquires;
    int64_t failed_acquires;
    int64_t starved;       /* clients that began an acquisition and never acquired */
    sim_ns unavailable_ns; /* true time in which a client was acquiring and no
                                   client was in the critical section */
    int64_t denied_attempts;
    int64_t writes_accepted;
    int64_t writes_rejected;
    int64_t repeated_writes; /* accepted absolute writes (write set=V) of the value the
                                resource already held: work done again, no change */
    int64_t initial_stock;
    int64_t final_stock;
    sim_ns acquire_p50_ns; /* acquisition latency, ACQUIRE_START to ACQUIRED */
    sim_ns acquire_p99_ns;
    sim_ns acquire_max_ns;
    sim_ns end_ns;
    char headline[200];      /* one sentence: why this verdict */
    sim_ns de_first_from_ns; /* the first double entry: start, -1 = none */
    sim_ns de_first_to_ns;   /* and end (the run's end when still open) */
    int nfacts;              /* watched clients, at most SCN_MAX_EXPECT_CLIENTS */
    struct checker_fact facts[SCN_MAX_EXPECT_CLIENTS];
};

/* Per node, 32 bytes (10^5 clients are 3.2 MB): what the checker follows
 * for every client. Crashes and lock holders, which only some nodes have,
 * are kept apart. */
struct checker_client {
    sim_ns cs_since;   /* -1 = not in the critical section */
    sim_ns wait_since; /* -1 = not acquiring */
    sim_ns waited_ns;  /* how long it waited before giving up; -1 = has not given up */
    uint32_t grant;    /* ground-truth id of its latest grant (0 = none, or a newer
                               service grant is pending: CHECKER_PENDING) */
    uint32_t rank;     /* that grant's place in the lock service's own grant order */
};

enum {
    CHECKER_CLIENT = 1,  /* the node is a client (from the trace's nodes) */
    CHECKER_CRASHED = 2, /* the node has an entry in checker.crash */
    CHECKER_WATCHED = 4, /* the node has an entry in checker.r.facts */
    CHECKER_PENDING = 8, /* the service has granted to it (rank set), the client has
                               not yet learnt of it */
    /* Fenced out (fence_note, fence_settle): under the client's current grant, */
    CHECKER_FENCE_REFUSED = 16,  /* a write not stale was refused by the fence */
    CHECKER_FENCE_ACCEPTED = 32, /* a write was accepted */
    CHECKER_FENCED_OUT = 64,     /* counted in fenced_out (once per client) */
    /* Progress: */
    CHECKER_TRIED = 128, /* began at least one acquisition */
    CHECKER_GOT = 256    /* acquired at least once */
};

struct checker_crash { /* a node that crashed or restarted */
    int node;
    sim_ns crashed_at;   /* last crash, -1 = never crashed */
    sim_ns restarted_at; /* last restart, -1 = never restarted */
};

struct checker_hold { /* what one lock server holds, as the trace says */
    int owner;        /* client node, or -1 */
    sim_ns since;
};

struct checker {
    struct trace *tr; /* borrowed: findings are appended here */
    enum scn_purpose purpose;
    sim_ns stuck_after_ns;
    struct checker_client *cl;   /* owned, indexed by node */
    uint16_t *flags;             /* owned, indexed by node: CHECKER_* bits */
    struct checker_crash *crash; /* owned: ncrash nodes, in order of their first crash or restart */
    int ncrash, capcrash;
    struct checker_hold *hold; /* owned: nodes hold_first .. hold_first + nhold - 1, the lock
                                  servers and any other node that recorded a grant */
    int hold_first, nhold;
    int srv_grants; /* a lock server has recorded a grant (srv-grant) */
    int nnodes;
    int in_cs;            /* clients now in the critical section */
    int nwait;            /* clients now acquiring (wait_since set) */
    sim_ns unavail_since; /* since when some client is acquiring and none is in the
                               critical section (the lock is unavailable), -1 = not so */
    int de_first, de_second;
    sim_ns de_since;  /* start of the current double-entry interval, -1 none */
    int de_announced; /* it has lasted past its first instant: counted */
    uint32_t g1, g2;  /* newest grant, and newest grant of another client, in the
                               order clients learnt of them (ground-truth ids) */
    int c1;           /* client of g1 */
    /* The lock service's own grant order (see service_grant in checker.c). */
    int quorum;            /* server grants that make one grant of the service */
    uint32_t next_rank;    /* ranks handed out so far */
    uint32_t r1, r2;       /* highest rank acquired, and highest of another client */
    int rc1;               /* client of r1 */
    uint32_t seen_rank;    /* highest rank of an operation that reached the resource
                               (a read, or an accepted write) */
    int64_t *read_version; /* owned, indexed by node, lock-free runs only (else NULL):
                               the resource version of the client's latest read */
    /* The stock account of lost updates: the value the latest accepted
     * absolute write set (the initial stock before any), and the accepted
     * writes counted until then; each read-modify-write since sells one. */
    int64_t base_stock;
    int64_t base_writes;
    struct checker_report r;
    int64_t nlat; /* latencies recorded */
    /* Last, and not cleared by checker_init (16 KiB a run): exact[0..nlat)
     * is written before it is read, and hist is filled from exact only when
     * the samples first overflow exact. */
    sim_ns exact[CHECKER_EXACT_SAMPLES];
    uint32_t hist[CHECKER_HIST_BUCKETS];
};
/* The bytes of struct checker that checker_init clears (everything before exact). */
#define CHECKER_CLEARED offsetof(struct checker, exact)

/* tr must have all nodes registered. Returns 0 or -1 on OOM. */
int checker_init(struct checker *c, struct trace *tr, enum scn_purpose purpose, sim_ns stuck_after_ns);
void checker_close(struct checker *c);
/* Record per-client facts for client node (for expect lines that name it),
 * from now on. Returns 0, or -1 when node is not a client or
 * SCN_MAX_EXPECT_CLIENTS are already watched. Watching a node twice is a no-op. */
int checker_watch(struct checker *c, int node);
/* The facts of a watched node, or NULL. */
const struct checker_fact *checker_fact_of(const struct checker_report *r, int node);
/* Trace kinds checker_observe acts on; it ignores every other kind. They
 * are the `checked` column of TRACE_KIND_MAP (trace.h). Its switch has a
 * case of its own for each of them and takes the labels of the others from
 * the map, with no default: a kind marked checked with no case there fails
 * the build (-Wswitch), and so does a case for a kind marked unchecked
 * (a duplicate case). */
#define CHECKER_KIND_BIT_(name, word, finding, checked) | (uint64_t)(checked) << TRACE_##name
#define CHECKER_KINDS (0 TRACE_KIND_MAP(CHECKER_KIND_BIT_))
/* The trace observer and its advance hook (arg = struct checker *). */
void checker_observe(void *arg, const struct trace_event *ev);
void checker_advance(void *arg, sim_ns t);
/* A hint for a simulator about to append events for node: start loading
 * the checker's entry for it. */
static inline void checker_prefetch(const struct checker *c, int node) {
#if defined(__GNUC__)
    __builtin_prefetch(&c->cl[node]);
#else
    (void)c;
    (void)node;
#endif
}
/* Close open intervals at end_ns and fill *out. */
void checker_finish(struct checker *c, sim_ns end_ns, struct checker_report *out);
/* Value of one metric in a report. */
int64_t checker_metric(const struct checker_report *r, enum scn_metric m);
/* 1 when the expectation holds; *actual receives the measured value: the
 * metric; for a per-client kind the token, the first grant's time (-1
 * never) or the count of writes; for SCN_EXPECT_DE_SPAN the first double
 * entry's start (-1 none; its end is r->de_first_to_ns). */
int checker_expect_holds(const struct checker_report *r, const struct scn_expect *x, int64_t *actual);

#endif
