/* Internals shared by the redis backend's files (real/real.h is the
 * interface): the lock's configuration read from the scenario, the records
 * client processes and the driver write, and the clock both use.
 * refuse.c decides what can be made real, client.c is a client process,
 * real.c drives the processes and the faults, record.c turns the records
 * into a locksim trace. */
#ifndef LOCKSIM_REAL_INT_H
#define LOCKSIM_REAL_INT_H

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "real.h"
#include "http.h"
#include "resp.h"

enum real_algo {
    RA_LEASE,
    RA_FENCED,
    RA_SETNX,
    RA_SETNX_EXPIRE,
    RA_RENEW,
    RA_CONSENSUS,
    RA_REDLOCK,
    RA_ZOOKEEPER,
    RA_ZK_MULTI
};

/* fenced-lease's compare=, the rule that refuses a token
 * (sim/algo/algo_fenced_lease.c). */
enum real_compare { RC_LT, RC_LE, RC_NE, RC_FIRST };

/* The lock's configuration, from the scenario's lock line. */
struct real_cfg {
    enum real_algo algo;
    sim_ns ttl_ns;            /* 0 = none (setnx) */
    int release_del;          /* 1 = plain DEL, 0 = compare-and-delete */
    int release_get;          /* release=get-then-del: GET, compare in the client, then DEL
                                 (two round trips; release_del is 0) */
    int check_client;         /* fenced-lease check=client: the client compares its token
                                 with the highest its read reported; the resource trusts */
    int compare;              /* fenced-lease compare=: enum real_compare */
    sim_ns uncertainty_ns;    /* lease uncertainty=: the holder stops acting on its lease this
                                 long before its end, by its own clock (0 = off) */
    int renew_expired;        /* lease-renew renew-expired=on: a renewal of a lapsed lease that
                                 nobody leased since succeeds */
    int takeover;             /* takeover=on: an acquire takes a held key over at once, under
                                 the next token (Kafka's producer epoch) */
    int check_reads;          /* resource check=reads+writes (with fencing on): reads carry
                                 the token and are checked, a checked read raises the highest */
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
    /* redlock (store_redlock.c), the simulator's options of the same names */
    int quorum;                /* OK replies needed, 0 = a majority of the servers */
    int elapsed_check;         /* 1: refuse when TTL - elapsed - drift <= 0 */
    int release_all;           /* 1: unlock on every server, 0: where SET said OK */
    sim_ns request_timeout_ns; /* redlock: a round of requests ends by then; the kv family
                                  (1 s): an acquire's reply not come by then, the attempt
                                  failed (kept through the proxy only, where replies can be late) */
    sim_ns delayed_restart_ns; /* a crashed server is started again this long after its restart */
    /* redis-replicated (store_repl.c): kv's replication options */
    sim_ns repl_lag_ns;     /* repl-lag: the model's delay before the primary streams a write */
    int wait_replicas;      /* wait=N: WAIT N after a granting SET, 0 = none */
    sim_ns wait_timeout_ns; /* wait-timeout (1 s) */
    sim_ns zk_session_ns;   /* zookeeper: the session timeout asked for */
    sim_ns zk_tick_ns;      /* zookeeper: the server's tickTime */
    int zk_release_czxid;   /* zookeeper release-by=czxid (0: by path) */
    int zk_parent_cleanup;  /* zookeeper parent-cleanup=on */
    int zk_abort;           /* zookeeper on-expired=abort */
};

/* A record of the driver's own, not a trace kind: after a crash it asked
 * Redis who holds the lock; a = the holder's node, b = PTTL in real ns
 * (0 = no expiry). */
#define REC_OBSERVED_HOLD (-1)

/* Records of the driver's clock control (clockctl.c), not trace kinds:
 * after a clock fault on the server it asked Redis the lock's PTTL: a = 1
 * the key is there, b = its PTTL in real ns; a = 0 it has expired. And the
 * server's wall clock rate from now on: a = ppm. */
#define REC_OBSERVED_TTL (-2)
#define REC_CLOCK_RATE (-3)
/* A client's absolute write (write set=V): a trace write marked "set". */
#define REC_WRITE_SET (-4)
/* A read the resource refused (check=reads+writes): node = the client,
 * peer = the resource, a = the highest token it had seen, b = the refusal
 * (TRACE_WRITE_REJECTED_STALE or _NOTOKEN). */
#define REC_READ_REFUSED (-5)
/* takeover=on: the server took the key over from a = its holder's node,
 * b = that holder's token (the store's counter), for the client granted next. */
#define REC_TAKEOVER (-6)
/* renew-expired=on: the server renewed a = this client's lapsed lease (how
 * long it had been gone is not known to a real run: b = 0). */
#define REC_RENEW_LAPSED (-7)

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
    /* the loopback proxy's ports for this client's links (proxy.c): its lock
     * connection (c) and its resource connection (rc); 0 = no proxy, both
     * go straight to the server over c */
    int lock_port, res_port;
    const int *link_ports; /* through the proxy: this client's port per target (real_proxy's
                              port + idx * ntargets), borrowed; NULL = no proxy */
    struct resp_conn rc;
    const sim_ns *tries;  /* through the proxy: the simulated run's acquire attempts of this */
    size_t ntries, tried; /* client, scenario time, in order; attempts made so far */
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
    int lost;            /* lease-renew: a renewal was refused (lock_lost) */
    int64_t renew_at;    /* lease-renew: real ns of the next renewal, 0 = none */
    int64_t stasis_at;   /* lease uncertainty=: real ns its lease enters the bound, 0 = none */
    uint64_t read_token; /* the highest token the resource reported at the last read */
    int read_refused;    /* the resource refused the last read (2 stale, 3 no token), 0 = served */
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
    /* the redlock and redis-replicated backends' */
    const struct redis_srv *server; /* the store's servers (server->nodes), borrowed */
    void *own;                      /* the store's own state in this process, NULL = none */
    sim_ns attempt_ns;              /* the last attempt's length as the simulator plays it (redlock: a round
                          that a server did not answer lasts the request timeout), scenario ns;
                          0 = one round trip of the constant latency */
};

struct real_proxy_target; /* proxy.c's, below */

/* What a store does for the driver and the client processes: the seam
 * between the program (client.c), the driver (real.c) and a backend
 * (store_redis.c, store_etcd.c). A client's calls run in its own process
 * and emit its records (emit); each may _exit(3) when the store stops
 * answering. */
struct real_ops {
    const char *name;   /* --store NAME */
    const char *server; /* the server's name in messages */
    /* The server (or start_scn below, given the scenario: etcd starts as
     * many members as its lock servers, zookeeper its tickTime). */
    int (*start)(struct redis_srv *srv, char *err, size_t n);
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
    /* A timed fault on lock server i (trace node node), done at real ns t
     * (NULL: the store takes none; refuse.c says so first). */
    void (*server_fault)(const struct redis_srv *srv, const struct real_cfg *g, const struct scn_fault *f, int i,
                         int node, double scale, int64_t t, struct recs *l);
    /* Called on every turn of the driver's loop at real ns t: planned
     * resumes and restarts of servers (NULL = none). first = the first
     * server's trace node. */
    void (*server_tick)(const struct redis_srv *srv, int first, int64_t t, struct recs *l);
    /* Optional (zookeeper): start the server for this scenario at scale
     * (instead of start), and move the run's start t0 (CLOCK_MONOTONIC ns)
     * to a later instant the server's clock needs. */
    int (*start_scn)(struct redis_srv *srv, const struct scenario *s, double scale, char *err, size_t n);
    int64_t (*align_start)(const struct scenario *s, double scale, int64_t t0);
    /* A fault of kind (pause, resume, crash, restart) on lock server member
     * (0 = the simulated run's first server node) at scenario time at, done
     * for real; sim (borrowed) says which server led then. The member it
     * was done on (a pause or crash of the simulated leader goes to the
     * real leader), or -1 when not done. NULL: the store has no such
     * servers (refused before); etcd's members. */
    int (*member_fault)(const struct trace *sim, int member, enum scn_fault_kind kind, sim_ns at);
    /* Optional (etcd): the loopback proxy's targets of a run that needs
     * one (real_needs_proxy), the same for every client, into v (cap of
     * them; res_node is the resource's trace node); their count. A client
     * reaches them through cl->link_ports, in this order. Its links carry
     * HTTP (REAL_PROXY_HTTP). */
    int (*proxy_targets)(const struct trace *sim, int res_node, struct real_proxy_target *v, int cap);
    /* Optional (etcd): a partition or heal f between the lock servers
     * themselves, done now (the proxy's links cut the clients' side). */
    void (*member_partition)(const struct trace *sim, const struct scn_fault *f);
};

extern const struct real_ops real_store_redis, real_store_etcd, real_store_redlock, real_store_repl, real_store_zk;

/* store_redlock.c: what the redlock and redis-replicated stores share: a
 * wait with nothing to keep alive, the resource in the last of their
 * servers (the redis backend's read and write over cl->c), and no look at
 * the lock after a client's crash (refused there). */
void real_nodes_wait(struct client *cl, int64_t abs);
void real_nodes_read(struct client *cl, int64_t *value, int64_t *version);
int64_t real_nodes_write(struct client *cl, int64_t value);
void real_nodes_no_observe(const struct redis_srv *srv, const struct scenario *s, struct recs *l, int64_t t);
/* refuse.c: what the clock shim cannot play, for the redis and redlock
 * backends (0, or LSIM_ENOTREAL with why): a clock line (s->clocks) of a
 * client, or with no shim built; and the clock fault f (a step, drift or
 * slew) on a client, at a point, or of the monotonic clock alone. */
int real_clock_lines_refused(const struct scenario *s, const struct trace *sim, char *why, size_t n);
int real_clock_fault_refused(const struct scenario *s, const struct trace *sim, const struct scn_fault *f, char *why,
                             size_t n);
/* refuse.c: 0 when every write of s follows a read and is neither set=V
 * nor a tries= loop, else LSIM_ENOTREAL saying so for backend. */
int real_writes_refused(const struct scenario *s, const char *backend, char *why, size_t n);
/* store_repl.c: what the redis-replicated backend cannot play. */
int real_repl_supported(const struct scenario *s, const struct trace *sim, const struct real_cfg *c, char *why,
                        size_t n);

/* store_redlock.c: redlock's lock line as a real_cfg; 0 or LSIM_ENOTREAL. */
int real_redlock_cfg(const struct scenario *s, struct real_cfg *c, char *why, size_t n);
/* store_redlock.c: 1 when the redlock backend plays s through the proxy:
 * real_needs_proxy, but not for links that are only a client's requests
 * to a lock server never sent (loss=100%), which the client itself does
 * not send. */
int real_redlock_needs_proxy(const struct scenario *s);
/* store_redlock.c: what the redlock backend cannot play (real_supported's part). */
int real_redlock_supported(const struct scenario *s, const struct trace *sim, char *why, size_t n);

/* refuse_zk.c: the zookeeper locks' options into c (its algo set); what
 * the zookeeper backend cannot play; its default scale. As
 * real_parse_cfg and real_supported. */
int real_zk_parse_cfg(const struct scenario *s, struct real_cfg *c, char *why, size_t n);
int real_zk_supported(const struct scenario *s, const struct trace *sim, const struct real_cfg *c, double scale,
                      char *why, size_t n);
double real_zk_default_scale(const struct scenario *s);
/* refuse.c: a fault the client-process driver can play (on a client, at a
 * point of its own program, not a resume there): 0, or LSIM_ENOTREAL with
 * why; server_fmt ("line %s: ... %s ...": the line and the node) says why
 * the store cannot take a fault on one of its servers. */
int real_client_fault_refused(const struct scenario *s, const struct scn_fault *f, const char *line,
                              const char *server_fmt, char *why, size_t n);

/* client.c: a record of this client's, now. */
void real_emit(struct client *cl, int kind, int node, int peer, uint64_t token, int64_t a, int64_t b);
/* client.c: a named point of this client's program (its faults done). */
void real_point(struct client *cl, enum scn_point p);
/* client.c: scenario ns at scale, in real ns. */
int64_t real_of(const struct client *cl, sim_ns scn);
/* client.c: the scenario's one-way latency, held before a request or after a reply. */
void real_hop(const struct client *cl);
/* client.c: lease uncertainty=: once the holder's lease has entered the
 * clock-uncertainty bound (cl->stasis_at passed), it stops acting on it:
 * it leaves its critical section (lock_lost), as the simulator's client
 * does (sim/algo/kv_client.c, T_STASIS). */
void real_stasis(struct client *cl);
/* client.c: the owner named by a lock value NAME#k, or TRACE_NO_NODE. */
int real_owner_of(const struct scenario *s, const char *value);

/* store_redis.c: connect c to port, a link of the proxy (proxy.c): a
 * reply may take as long as the simulated run's messages took (a write
 * held 20 s), so the receive bound is the whole run plus RESP_TIMEOUT_MS,
 * not RESP_TIMEOUT_MS alone. 0 or -1. */
int real_proxied_connect(struct client *cl, struct resp_conn *c, int port);

/* client.c: the program of client cl->idx, from its start time until it ends. */
void real_client_main(struct client *cl);

/* real.c: the waits between each denied attempt of client node and its
 * next attempt in the simulated run sim, in order, into a malloc'd *out
 * (NULL when none); their count, or -1 when out of memory. */
long real_sim_waits(const struct trace *sim, int node, sim_ns **out);
/* real.c: the times of every acquire attempt of client node in sim, in
 * order, into a malloc'd *out (NULL when none); their count, or -1. */
long real_sim_tries(const struct trace *sim, int node, sim_ns **out);

/* clockctl.c: the lock server's wall clock during a run, moved through
 * the clock shim's page (real/clockshim.h). */
struct clockshim_page;
struct real_clock {
    struct clockshim_page *page; /* borrowed from the server (redis_srv), NULL = no shim */
    int port;                    /* the server's, to ask the lock's PTTL */
    const char *name;            /* the server's name in the scenario (borrowed), NULL = none */
    int node;                    /* its node in the recording */
    double scale;                /* real seconds per scenario second */
    int64_t base_ppm, slew_ppm;  /* drift, and a slew's rate while it lasts, ppm */
    int64_t slew_end;            /* real ns since the start when the slew ends, 0 = none */
};
/* Reset the page to the real clock, then the scenario's clock line for
 * name (its offset and drift), recorded into l at t = 0. */
void real_clock_start(struct real_clock *c, struct clockshim_page *page, int port, const struct scenario *s,
                      const char *name, int node, double scale, struct recs *l);
/* 1 when f is a clock fault of the server, done now (real ns t since the
 * start) and recorded, with the lock's PTTL after it; 0 when it is not. */
int real_clock_fault(struct real_clock *c, const struct scn_fault *f, int64_t t, struct recs *l);
/* A slew that has run its length ends (called every driver round). */
void real_clock_tick(struct real_clock *c, int64_t t, struct recs *l);

/* proxy.c: the per-link loopback proxy, a child process of the driver. */
struct real_proxy {
    pid_t pid;        /* 0 = not running */
    int ctl;          /* the control pipe's write end, -1 = none */
    int *port;        /* per link, ntargets per client: [i * ntargets + k] client i -> target k; owned */
    int nlinks;       /* clients x ntargets */
    int ntargets;     /* what each client reaches through it */
    int *target_node; /* per target: its trace node; owned */
};
/* A target of the proxy's links: a server's (or the resource's) trace node
 * and the port it listens on (127.0.0.1). */
struct real_proxy_target {
    int node, port;
};
/* How the proxy cuts a connection's bytes into messages (its mode):
 * REAL_PROXY_REPLAY, one read is one message, delayed as the simulated
 * run's message of that rank on its link (redis); REAL_PROXY_HTTP, a
 * connection's request and its answer are one message each, whatever
 * their reads (HTTP, Connection: close), delayed by the scenario's
 * latency (etcd). */
#define REAL_PROXY_REPLAY 0
#define REAL_PROXY_HTTP 1
/* 1 when s needs the proxy: latency that varies, loss, links, partitions. */
int real_needs_proxy(const struct scenario *s);
/* Start it between every client and each of the ntargets targets tg
 * (borrowed for the call), replaying the simulated run sim's delays and
 * drops per link at scale. 0, or an LSIM code with a sentence in err
 * (nothing left running). */
int real_proxy_start(struct real_proxy *px, const struct scenario *s, const struct trace *sim,
                     const struct real_proxy_target *tg, int ntargets, int mode, double scale, char *err, size_t n);
/* Cut (1) or heal (0) link (-1 = every link) from now on. */
void real_proxy_cut(struct real_proxy *px, int link, int cut);
/* The partition (or heal) f: every link whose ends it separates is cut. */
void real_proxy_partition(struct real_proxy *px, const struct trace *sim, const struct scn_fault *f);
/* A socket listening on 127.0.0.1 at a free port (into port), or one
 * connected to 127.0.0.1:port (TCP_NODELAY); the fd, or -1 (errno). */
int real_listen_loopback(int *port);
int real_connect_loopback(int port);
/* Kill it by PID and free px. Safe on one never started. */
void real_proxy_stop(struct real_proxy *px);

/* real.c: a child of the driver (a client, the proxy), right after fork
 * with every signal blocked (the old mask in old): killed with the driver,
 * sleeps on time (1 ns of timer slack), the guard's signals back to their
 * defaults, the old mask restored. */
void real_child_init(const sigset_t *old);

/* record.c: append r to l; -1 when out of memory. */
int real_recs_add(struct recs *l, const struct rec *r);
/* record.c: build out (nodes already added) from the records l of a run
 * at scale against redis-server on port; l is sorted here. 0 or an LSIM code. */
int real_record(const struct scenario *s, const struct trace *sim, const struct recs *l, double scale,
                const char *server, int port, int srv_node, struct trace *out);

#endif
