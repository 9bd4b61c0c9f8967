/* What the redis and etcd backends can make real (real/real.h): the
 * scenario's lock line read into a real_cfg, and every fault, algorithm or
 * option a store cannot play refused with one sentence saying why. */
#include "real_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clockshim.h"
#include "error.h"
#include "etcd_srv.h"

/* The longest real run the etcd backend plays: a TTL of 1 s at least can
 * make a long scenario last minutes (refused, saying so). */
#define REAL_ETCD_MAX_RUN_S 30

int real_store_start(const struct real_ops *ops, const struct scenario *s, double scale, struct redis_srv *srv,
                     char *err, size_t n) {
    return ops->start_scn ? ops->start_scn(srv, s, scale, err, n) : ops->start(srv, err, n);
}

void real_store_stop(const struct real_ops *ops, struct redis_srv *srv) { ops->stop(srv); }

/* The consensus lock's TTL (10 s unless ttl= says), for the etcd scale. */
static sim_ns consensus_ttl(const struct scenario *s) {
    sim_ns ttl = 10 * SIM_NS_PER_S;
    for (int i = 0; i < s->nopts; i++)
        if (strcmp(s->opts[i].key, "ttl") == 0 && scn_parse_duration(s->opts[i].val, &ttl) != 0) ttl = 0;
    return ttl;
}

/* The default scales (real_default_scale), per backend. etcd: the lease
 * TTL in 1 s (etcd grants whole seconds, 1 s at least). */
static double etcd_scale(const struct scenario *s) {
    sim_ns ttl = consensus_ttl(s);
    return ttl > 0 ? 1e9 / (double)ttl : 0.01;
}

/* The whole duration in span_ms of real time. */
static double span_scale(const struct scenario *s, double span_ms) {
    double d = (double)s->duration_ns;
    return d > 0 ? span_ms * 1e6 / d : 0.01;
}

/* redis and redis-replicated: through the proxy, its replayed delays race
 * the request timeout. */
static double kv_scale(const struct scenario *s) {
    return span_scale(s, real_needs_proxy(s) ? REAL_PROXY_SPAN_MS : REAL_DEFAULT_SPAN_MS);
}

/* redlock: a server's restart (fork, exec, PING) takes 20 to 130 ms of
 * real time on a loaded machine, which must stay small against the
 * scenario's second between a restart and the next request. And a round's
 * request timeout (50 ms) at least REAL_REDLOCK_TIMEOUT_MS of real time: at
 * 8 ms (S = 0.167) a reply came too late on a machine at load 12, and a
 * client missed its quorum. */
static double redlock_scale(const struct scenario *s) {
    double scale = span_scale(s, REAL_REDLOCK_SPAN_MS);
    struct real_cfg c;
    char why[300];
    if (real_parse_cfg(s, &c, why, sizeof why) == 0 && c.request_timeout_ns > 0 &&
        scale < REAL_REDLOCK_TIMEOUT_MS * 1e6 / (double)c.request_timeout_ns)
        scale = REAL_REDLOCK_TIMEOUT_MS * 1e6 / (double)c.request_timeout_ns;
    return scale;
}
static int refuse(char *why, size_t n, const char *fmt, const char *a, const char *b) {
    snprintf(why, n, fmt, a, b);
    return LSIM_ENOTREAL;
}

/* consensus's options, as an etcd cluster can play them. */
static int parse_consensus(const struct scenario *s, struct real_cfg *c, char *why, size_t n) {
    for (int i = 0; i < s->nopts; i++) {
        const char *k = s->opts[i].key, *v = s->opts[i].val;
        if (strcmp(k, "ttl") == 0) {
            if (scn_parse_duration(v, &c->ttl_ns) != 0 || c->ttl_ns <= 0)
                return refuse(why, n, "lock option ttl=%s is not a duration the etcd backend can set%s", v, "");
        } else if (strcmp(k, "token") == 0) {
            c->tokens = strcmp(v, "none") != 0;
        } else if (strcmp(k, "queue") == 0) {
            c->queue = strcmp(v, "on") == 0;
        } else if (strcmp(k, "bug") == 0 && strcmp(v, "none") != 0) {
            return refuse(why, n,
                          "lock option bug=%s puts back a bug that the installed etcd (%s) has fixed (3.4.4 "
                          "checks that the waiter's key still exists); a real etcd cannot be made to have it",
                          v, "3.4.23");
        } else if (strcmp(k, "expiry-check") == 0 && strcmp(v, "500ms") != 0) {
            return refuse(why, n,
                          "lock option expiry-check=%s: etcd's lessor checks for expired leases every 500 ms of "
                          "real time, fixed in its code%s",
                          v, "");
        } else if (strcmp(k, "first-candidate") == 0 || strcmp(k, "request-timeout") == 0 ||
                   strcmp(k, "election-timeout") == 0 || strcmp(k, "heartbeat") == 0 ||
                   strcmp(k, "check-quorum") == 0 || strcmp(k, "promote-extend") == 0 ||
                   strcmp(k, "expiry-check") == 0 || strcmp(k, "bug") == 0 || strcmp(k, "bind") == 0 ||
                   strcmp(k, "servers") == 0) {
            /* elections and timeouts: etcd's own (heartbeat 50 ms, election 500 ms of real time);
             * bind=: each client asks its member (store_etcd.c) */
        } else {
            return refuse(why, n, "lock option %s=%s is not built in the etcd backend", k, v);
        }
    }
    return 0;
}

/* etcd's lock, consensus: token=revision is its default. */
static int parse_etcd(const struct scenario *s, struct real_cfg *c, char *why, size_t n) {
    c->algo = RA_CONSENSUS;
    c->ttl_ns = 10 * SIM_NS_PER_S;
    c->tokens = 1;
    c->guard_owner = s->guard_owner;
    return parse_consensus(s, c, why, n);
}

/* The single-Redis locks' options (redis-replicated's too). */
static int parse_kv(const struct scenario *s, struct real_cfg *c, char *why, size_t n) {
    if (strcmp(s->algo, "lease") == 0) c->algo = RA_LEASE;
    else if (strcmp(s->algo, "fenced-lease") == 0) c->algo = RA_FENCED;
    else if (strcmp(s->algo, "setnx") == 0) {
        c->algo = RA_SETNX;
        c->ttl_ns = 0;
        c->release_del = 1;
    } else if (strcmp(s->algo, "setnx-expire") == 0) c->algo = RA_SETNX_EXPIRE;
    else {
        c->algo = RA_RENEW; /* lease-renew, the last in real_backends' list */
        c->renew_every = 3;
    }
    int constant = 0;
    for (int i = 0; i < s->nopts; i++) {
        const char *k = s->opts[i].key, *v = s->opts[i].val;
        if (strcmp(k, "ttl") == 0 && c->algo != RA_SETNX) {
            if (scn_parse_duration(v, &c->ttl_ns) != 0 || c->ttl_ns <= 0)
                return refuse(why, n, "lock option ttl=%s is not a duration the redis backend can set%s", v, "");
        } else if (strcmp(k, "release") == 0) {
            c->release_del = strcmp(v, "del") == 0;
            c->release_get = strcmp(v, "get-then-del") == 0;
            if (!c->release_del && !c->release_get && strcmp(v, "compare-and-delete") != 0)
                return refuse(why, n,
                              "lock option release=%s: only del, compare-and-delete and get-then-del are built in "
                              "the redis backend%s",
                              v, "");
        } else if ((strcmp(k, "repl-lag") == 0 || strcmp(k, "wait-timeout") == 0) &&
                   (c->algo == RA_LEASE || c->algo == RA_FENCED)) { /* redis-replicated's */
            if (scn_parse_duration(v, k[0] == 'r' ? &c->repl_lag_ns : &c->wait_timeout_ns) != 0)
                return refuse(why, n, "lock option %s=%s is not a duration", k, v);
        } else if (strcmp(k, "wait") == 0 && (c->algo == RA_LEASE || c->algo == RA_FENCED)) {
            c->wait_replicas = atoi(v);
        } else if (strncmp(k, "repl", 4) == 0 || strncmp(k, "wait", 4) == 0 || strncmp(k, "min-replicas", 12) == 0) {
            return refuse(why, n,
                          "lock option %s=%s: not built in the redis-replicated backend (min-replicas-max-lag "
                          "counts whole seconds of real time, which a scaled run cannot keep)",
                          k, v);
        } else if (strcmp(k, "value") == 0) {
            constant = strcmp(v, "constant") == 0;
        } else if (strcmp(k, "gap") == 0 && c->algo == RA_SETNX_EXPIRE) {
            if (scn_parse_duration(v, &c->gap_ns) != 0)
                return refuse(why, n, "lock option gap=%s is not a duration%s", v, "");
        } else if (strcmp(k, "renew-every") == 0 && c->algo == RA_RENEW) {
            c->renew_every = atoi(v);
            if (c->renew_every < 1) return refuse(why, n, "renew-every=%s is not a whole number above 0%s", v, "");
        } else if (strcmp(k, "renew-interval") == 0 && c->algo == RA_RENEW) {
            if (scn_parse_duration(v, &c->renew_interval_ns) != 0)
                return refuse(why, n, "renew-interval=%s is not a duration%s", v, "");
        } else if (strcmp(k, "tokens") == 0 && c->algo == RA_RENEW) {
            c->tokens = strcmp(v, "on") == 0;
        } else if (strcmp(k, "on-lost") == 0 && c->algo == RA_RENEW &&
                   (strcmp(v, "continue") == 0 || strcmp(v, "abort") == 0)) {
            c->on_lost_abort = strcmp(v, "abort") == 0;
        } else if (strcmp(k, "first-token") == 0 && c->algo == RA_FENCED) {
            c->first_token = strtoll(v, NULL, 10);
        } else if (strcmp(k, "request-timeout") == 0) {
            if (scn_parse_duration(v, &c->request_timeout_ns) != 0 || c->request_timeout_ns <= 0)
                return refuse(why, n, "lock option request-timeout=%s is not a duration%s", v, "");
        } else if (strcmp(k, "compare") == 0 && c->algo == RA_FENCED && strcmp(v, "<") && strcmp(v, "lt")) {
            static const char *const rules[] = {"<=", "le", "!=", "ne", "first"};
            static const int codes[] = {RC_LE, RC_LE, RC_NE, RC_NE, RC_FIRST};
            size_t r = 0;
            while (r < sizeof rules / sizeof *rules && strcmp(v, rules[r])) r++;
            if (r == sizeof rules / sizeof *rules)
                return refuse(why, n, "lock option compare=%s is not one of <, <=, != or first%s", v, "");
            c->compare = codes[r];
        } else if (strcmp(k, "renew-expired") == 0 && c->algo == RA_RENEW &&
                   (strcmp(v, "on") == 0 || strcmp(v, "off") == 0)) {
            c->renew_expired = strcmp(v, "on") == 0;
        } else if (strcmp(k, "uncertainty") == 0 && c->algo == RA_LEASE) {
            if (scn_parse_duration(v, &c->uncertainty_ns) != 0 || c->uncertainty_ns < 0)
                return refuse(why, n, "lock option uncertainty=%s is not a duration%s", v, "");
        } else if (strcmp(k, "deadline") == 0 && strcmp(v, "redis") != 0) {
            return refuse(why, n,
                          "lock option deadline=%s: Redis 7.0 keeps a key through its PX deadline's millisecond and "
                          "drops it after (db.c keyIsExpired: now > when, in whole ms), and no option changes that "
                          "rule; a PX 1 ms shorter would drop it at the deadline only to the millisecond, while the "
                          "option decides at the deadline's nanosecond (a client resuming at that very instant); "
                          "not built%s",
                          v, "");
        } else if (strcmp(k, "takeover") == 0 && (c->algo == RA_LEASE || c->algo == RA_FENCED) &&
                   (strcmp(v, "on") == 0 || strcmp(v, "off") == 0)) {
            c->takeover = strcmp(v, "on") == 0;
        } else if (strcmp(k, "check") == 0 && c->algo == RA_FENCED &&
                   (strcmp(v, "client") == 0 || strcmp(v, "resource") == 0)) {
            c->check_client = strcmp(v, "client") == 0; /* the client's own compare, on its read's news */
        } else if ((strcmp(k, "persistence") == 0) || (strcmp(k, "expiry-clock") == 0 && strcmp(v, "wall") == 0) ||
                   strcmp(k, "deadline") == 0 ||
                   (strcmp(k, "compare") == 0 && (strcmp(v, "<") == 0 || strcmp(v, "lt") == 0))) {
            /* nothing to do on loopback with a server that never restarts */
        } else {
            return refuse(why, n, "lock option %s=%s is not built in the redis backend", k, v);
        }
    }
    c->check_reads = s->check_reads && s->fencing; /* the simulator checks reads only with fencing on */
    if (c->renew_expired && (c->release_del || c->release_get))
        return refuse(why, n,
                      "renew-expired=on with release=%s: a DEL of another client's key would leave its value in "
                      "lock:last, where the renewal looks%s",
                      c->release_del ? "del" : "get-then-del", "");
    if (constant && !c->release_del)
        return refuse(why, n,
                      "value=constant with compare-and-delete or get-then-del: the recording could not tell whose "
                      "entry a release removed%s%s",
                      "", "");
    return 0;
}

static const char *fault_reason(enum scn_fault_kind k) {
    switch (k) {
    case SCN_FAULT_PROMOTE:
    case SCN_FAULT_KILL_REPLICAS:
        return "failover and replication need a primary and a replica (the redis-replicated backend), not built";
    case SCN_FAULT_RESTART:
        return "restarting a crashed client (a fresh process with the program from its start) is not built yet";
    default: return NULL;
    }
}

/* The simulated run's resource rule (resource-init's b). */
int64_t real_sim_rule(const struct trace *sim) {
    for (size_t i = 0; i < sim->len; i++)
        if (sim->ev[i].kind == TRACE_RESOURCE_INIT) return sim->ev[i].b;
    return TRACE_RULE_PLAIN;
}

/* A tie on a lease's deadline: in the simulated run a paused client resumes
 * at the very instant a lease runs out (a pause exactly as long as the TTL). The simulator keeps a key at its deadline and expires it after,
 * as Redis does (db.c keyIsExpired: `now > when`, in whole milliseconds), so
 * the simulated verdict rests on two events at one instant. A real run
 * cannot put them at one instant: PX counts whole milliseconds, each request
 * costs tens of microseconds and a SIGCONT is a wake-up, so which side of the
 * deadline the resume lands on is sub-millisecond chance at any scale. (A
 * retry denied on the deadline only moves a takeover by one retry: the
 * report shows that as a time, not refused.)
 * Sets *at to the deadline; 1 when there is one. */
/* A fault the client-process driver can play: on a client, at a point of
 * its own program, not a resume there (it is stopped). 0, or the refusal
 * with why; server_fmt ("line %s: ... %s ...", the line and the node) says
 * why this store cannot take a fault on one of its servers. */
static int client_fault_refused(const struct scenario *s, const struct scn_fault *f, const char *line,
                                const char *server_fmt, char *why, size_t n) {
    int client = 0;
    for (int k = 0; k < s->nclients; k++)
        if (strcmp(s->clients[k].name, f->node) == 0) client = 1;
    if (!client) return refuse(why, n, server_fmt, line, f->node);
    if (f->point != SCN_POINT_NONE && strcmp(f->trigger, f->node) != 0)
        return refuse(why, n,
                      "line %s: a fault on %s at another client's point: the driver cannot see a point of "
                      "another process in time; not built",
                      line, f->node);
    if (f->point != SCN_POINT_NONE && f->kind == SCN_FAULT_RESUME)
        return refuse(why, n, "line %s: a resume at a point of %s's own program (it is stopped): not built", line,
                      f->node);
    return 0;
}

/* A clock of node (a `clock` line, or a clock fault at where) that the
 * redis backend cannot move: a client's (its process is a fork of locksim,
 * which the clock shim preloaded into redis-server does not reach), or the
 * server's without the shim. 0 when the server's, with the shim. */
static int clock_refused(const struct scenario *s, const struct trace *sim, const char *node, const char *where,
                         char *why, size_t n) {
    int server = 0;
    for (int i = 0; i < sim->nnodes; i++)
        if (sim->nodes[i].kind == TRACE_NODE_SERVER && strcmp(sim->nodes[i].name, node) == 0) server = 1;
    if (!server) {
        snprintf(why, n,
                 "%s: the clock of %s, a client: the client processes are forks of locksim, which the clock "
                 "shim (preloaded into redis-server only) does not reach; not built",
                 where, node);
        return LSIM_ENOTREAL;
    }
    char shim[4096];
    if (redis_srv_clockshim(shim, sizeof shim) != 0) {
        snprintf(why, n,
                 "%s: the clock of %s needs the clock shim %s (make builds it as build/real/%s, beside the "
                 "binary); it was not found",
                 where, node, CLOCKSHIM_SO, CLOCKSHIM_SO);
        return LSIM_ENOTREAL;
    }
    (void)s;
    return 0;
}

int real_clock_lines_refused(const struct scenario *s, const struct trace *sim, char *why, size_t n) {
    for (int i = 0; i < s->nclocks; i++) {
        int refused = clock_refused(s, sim, s->clocks[i].node, "clock", why, n);
        if (refused) return refused;
    }
    return 0;
}

int real_clock_fault_refused(const struct scenario *s, const struct trace *sim, const struct scn_fault *f, char *why,
                             size_t n) {
    char where[32];
    snprintf(where, sizeof where, "line %d", f->pos.line);
    int refused = clock_refused(s, sim, f->node, where, why, n);
    if (!refused && f->point != SCN_POINT_NONE)
        refused = refuse(why, n,
                         "%s: a clock fault on %s at a client's point: the driver cannot see a point of "
                         "another process in time; not built",
                         where, f->node);
    if (!refused && f->kind == SCN_FAULT_CLOCK_STEP && f->which == SCN_CLOCK_MONO)
        refused = refuse(why, n,
                         "%s: a step of %s's monotonic clock alone: Redis 7.0 expires keys by its wall "
                         "clock (gettimeofday), its monotonic clock runs only its event loop, and the "
                         "clock shim moves the wall clock",
                         where, f->node);
    return refused;
}

/* What a real run against Redis can tell apart, in ms of real time: Redis
 * expires a key when its millisecond clock is past the PX deadline
 * (db.c keyIsExpired), PX counts whole ms, and a scaled TTL is rounded to
 * one; two instants nearer than this may come out either way. */
#define REAL_REDIS_RESOLUTION_MS 2

/* The smallest gap, in scenario ns, between a paused client's resume and
 * the deadline of the lease it was paused in (still running, or just run
 * out), or -1 when no resume comes near a deadline; *at is the deadline. */
static sim_ns deadline_gap(const struct trace *sim, sim_ns *at) {
    sim_ns deadline = 0, best = -1;
    for (size_t i = 0; i < sim->len; i++) {
        const struct trace_event *e = &sim->ev[i];
        if (e->kind == TRACE_SRV_GRANT || e->kind == TRACE_SRV_RENEW) deadline = e->a > 0 ? e->t + e->a : 0;
        else if (e->kind == TRACE_SRV_DELETE) deadline = 0; /* an expiry keeps it: a resume just after */
        else if (deadline && e->kind == TRACE_RESUME) {
            sim_ns gap = e->t > deadline ? e->t - deadline : deadline - e->t;
            if (best < 0 || gap < best) {
                best = gap;
                *at = deadline;
            }
        }
    }
    return best;
}

int real_writes_refused(const struct scenario *s, const char *backend, char *why, size_t n) {
    for (int p = 0; p < s->nprograms; p++) {
        int read = 0;
        for (int k = 0; k < s->programs[p].nsteps; k++) {
            const struct scn_step *st = &s->programs[p].steps[k];
            if (st->kind == SCN_STEP_READ) read = 1;
            if (st->kind == SCN_STEP_WRITE && (st->absolute || !read || st->tries > 1))
                return refuse(why, n, "a write %s: not built in the %s backend",
                              st->absolute ? "set=V"
                              : read       ? "with tries="
                                           : "with no read before it",
                              backend);
        }
    }
    return 0;
}

/* The group of partition f that node name is in (the nodes it does not
 * name form one more group, as in the simulator). */
static int partition_group(const struct scn_fault *f, const char *name) {
    for (int g = 0; g < f->ngroups; g++)
        for (int k = 0; k < f->group_len[g]; k++)
            if (strcmp(f->groups[g][k], name) == 0) return g;
    return f->ngroups;
}

/* A partition the etcd backend can make real: the clients' links go
 * through the loopback proxy, the members' peer traffic through the peer
 * proxy; the resource is a key in the members, so it cannot be cut off
 * from them. */
static int etcd_partition_refused(const struct trace *sim, const struct scn_fault *f, const char *line, char *why,
                                  size_t n) {
    const char *res = NULL;
    int servers = 0, with_res = 0; /* lock servers, and those on the resource's side */
    for (int k = 0; k < sim->nnodes; k++)
        if (sim->nodes[k].kind == TRACE_NODE_RESOURCE) res = sim->nodes[k].name;
    for (int k = 0; res && k < sim->nnodes; k++) {
        if (sim->nodes[k].kind != TRACE_NODE_SERVER) continue;
        servers++;
        with_res += partition_group(f, sim->nodes[k].name) == partition_group(f, res);
    }
    if (servers && !with_res)
        return refuse(why, n,
                      "line %s: a partition that cuts the resource %s off from every lock server: the etcd "
                      "backend's resource is a key in the same etcd members; not built",
                      line, res);
    return 0;
}

/* What the etcd backend cannot play: more than ETCD_SRV_MAX_MEMBERS
 * servers, a server fault at a client's point, clocks, a partition between
 * members (or between them and the resource), latency that varies, loss,
 * links, and a TTL that is not whole seconds of real time. A partition that
 * cuts clients off goes through the proxy (real.c). A pause, crash, resume or
 * restart of a server at a time is done to its member (real.c). */
static int etcd_supported(const struct scenario *s, const struct trace *sim, const struct real_cfg *c, double scale,
                          char *why, size_t n) {
    char a[64], b[64];
    double ttl_real = (double)c->ttl_ns * scale / 1e9;
    if (ttl_real < 1 - 1e-9 || fabs(ttl_real - floor(ttl_real + 0.5)) > 1e-6) {
        snprintf(a, sizeof a, "%g s", (double)c->ttl_ns / 1e9);
        snprintf(b, sizeof b, "%g s of real time at scale %g", ttl_real, scale);
        return refuse(why, n,
                      "the lease TTL of %s would last %s: etcd grants leases in whole seconds, 1 s at least "
                      "(--scale must make it so)",
                      a, b);
    }
    double run_s = (double)s->duration_ns * scale / 1e9;
    if (run_s > REAL_ETCD_MAX_RUN_S) {
        snprintf(a, sizeof a, "%g s", (double)s->duration_ns / 1e9);
        snprintf(b, sizeof b, "%g s of real time per run (over %d s)", run_s, REAL_ETCD_MAX_RUN_S);
        return refuse(why, n,
                      "with the lease TTL at 1 s of real time at least (etcd's whole seconds), the scenario's %s "
                      "would last %s",
                      a, b);
    }
    if (s->latency.min_ns != s->latency.max_ns || s->loss_ppm || s->nlinks)
        return refuse(why, n,
                      "network latency that varies, loss, or a link of its own: the etcd client's HTTP requests "
                      "are not the model's messages one for one (an acquire is a lease grant and a txn), so the "
                      "loopback proxy cannot replay the simulated run's delay and loss of each message on them; "
                      "not built%s%s",
                      "", "");
    if (s->nclocks)
        return refuse(why, n,
                      "clock offsets and drifts (clock %s) would have to act inside etcd's lessor and Raft "
                      "timers; a real etcd runs on the machine's clock, which is never touched%s",
                      s->clocks[0].node, "");
    if (s->resource_timeout_ns || s->check_reads)
        return refuse(why, n, "the resource's %s is not built in the etcd backend%s",
                      s->check_reads ? "check=reads+writes" : "timeout=", "");
    if (s->nclients + ETCD_SRV_MAX_MEMBERS > REDIS_SRV_MAX_CHILDREN) /* members are guarded children too */
        return refuse(why, n, "more clients than the %s processes the etcd backend runs%s", "59", "");
    if (s->nservers > ETCD_SRV_MAX_MEMBERS) {
        snprintf(a, sizeof a, "%d", s->nservers);
        return refuse(why, n, "%s lock servers: the etcd backend runs a cluster of %s members at most", a, "5");
    }
    for (int i = 0; i < s->nfaults; i++) {
        const struct scn_fault *f = &s->faults[i];
        char line[16];
        snprintf(line, sizeof line, "%d", f->pos.line);
        if (f->kind == SCN_FAULT_LINK)
            return refuse(why, n, "line %s: a link's own delay or loss on the etcd backend: %s", line,
                          "the client's HTTP requests are not the model's messages one for one; not built");
        if ((f->kind == SCN_FAULT_PARTITION || f->kind == SCN_FAULT_HEAL) && f->point != SCN_POINT_NONE)
            return refuse(why, n,
                          "line %s: a partition or heal at a client's point: the driver, which cuts the proxy's "
                          "links, cannot see a point of another process in time; not built%s",
                          line, "");
        if (f->kind == SCN_FAULT_PARTITION) {
            int refused = etcd_partition_refused(sim, f, line, why, n);
            if (refused) return refused;
        }
        if (f->kind == SCN_FAULT_PARTITION || f->kind == SCN_FAULT_HEAL)
            continue; /* the proxy cuts each client's links to the members and the resource */
        if (f->kind == SCN_FAULT_CLOCK_STEP || f->kind == SCN_FAULT_CLOCK_DRIFT || f->kind == SCN_FAULT_CLOCK_SLEW)
            return refuse(why, n,
                          "line %s: a clock fault inside etcd (its lessor and Raft timers run on the machine's "
                          "monotonic clock, which is never touched): %s",
                          line, "not built");
        int server = 0;
        for (int k = 0; k < sim->nnodes; k++)
            server |= sim->nodes[k].kind == TRACE_NODE_SERVER && strcmp(sim->nodes[k].name, f->node) == 0;
        if (server && f->point != SCN_POINT_NONE)
            return refuse(why, n,
                          "line %s: a fault on %s, an etcd member, at a client's point: the driver cannot see "
                          "a point of another process in time; not built",
                          line, f->node);
        if (server && (f->kind == SCN_FAULT_PAUSE || f->kind == SCN_FAULT_RESUME || f->kind == SCN_FAULT_CRASH ||
                       f->kind == SCN_FAULT_RESTART))
            continue; /* SIGSTOP, SIGCONT, SIGKILL, or the member started again on its data dir */
        const char *r = fault_reason(f->kind);
        if (r) return refuse(why, n, "line %s: %s", line, r);
        int refused = client_fault_refused(s, f, line, "line %s: a fault of this kind on %s: not built", why, n);
        if (refused) return refused;
    }
    if (real_writes_refused(s, "etcd", why, n)) return LSIM_ENOTREAL;
    int64_t rule = real_sim_rule(sim);
    if (rule != TRACE_RULE_PLAIN && rule != TRACE_RULE_TOKENS && rule != TRACE_RULE_OWNER)
        return refuse(why, n,
                      "the resource's rule is '%s': the etcd backend builds a plain resource, one that checks "
                      "revisions (fencing=on) and one guarded by ownership (guard=owner)%s",
                      trace_rule_word(rule), "");
    return 0;
}

/* What the redis backend cannot play: several servers, a client's clock, a
 * pause or crash of the server, and more (real --help lists them). */
static int redis_supported(const struct scenario *s, const struct trace *sim, const struct real_cfg *cfg, double scale,
                           char *why, size_t n) {
    if (s->nservers > 1) return refuse(why, n, "%s lock servers: the redis backend runs one%s", "several", "");
    /* latency that varies, loss and links: the loopback proxy (proxy.c) */
    if (real_clock_lines_refused(s, sim, why, n)) return LSIM_ENOTREAL;
    if (s->resource_timeout_ns)
        return refuse(why, n, "the resource's %s is not built in the redis backend%s", "timeout=", "");
    if (s->nclients > REDIS_SRV_MAX_CHILDREN)
        return refuse(why, n, "more clients than the %s processes the redis backend runs%s", "64", "");
    for (int i = 0; i < s->nfaults; i++) {
        const struct scn_fault *f = &s->faults[i];
        const char *r = fault_reason(f->kind);
        char line[16];
        snprintf(line, sizeof line, "%d", f->pos.line);
        if (f->kind == SCN_FAULT_LINK) continue; /* the proxy replays each message's simulated delay */
        if ((f->kind == SCN_FAULT_PARTITION || f->kind == SCN_FAULT_HEAL) && f->point != SCN_POINT_NONE)
            return refuse(why, n,
                          "line %s: a partition or heal at a client's point: the driver, which cuts the proxy's "
                          "links, cannot see a point of another process in time; not built%s",
                          line, "");
        if (f->kind == SCN_FAULT_PARTITION || f->kind == SCN_FAULT_HEAL) continue; /* the proxy cuts links */
        if (f->kind == SCN_FAULT_CLOCK_STEP || f->kind == SCN_FAULT_CLOCK_DRIFT || f->kind == SCN_FAULT_CLOCK_SLEW) {
            int refused = real_clock_fault_refused(s, sim, f, why, n);
            if (refused) return refused;
            continue;
        }
        if (r) return refuse(why, n, "line %s: %s", line, r);
        int refused = client_fault_refused(
                s, f, line,
                "line %s: a pause or crash of %s, a lock server: a stopped redis-server still accepts TCP "
                "connections and later runs what queued, which is another fault; not built",
                why, n);
        if (refused) return refused;
    }
    for (int p = 0; p < s->nprograms; p++) {
        int read = 0;
        for (int k = 0; k < s->programs[p].nsteps; k++) {
            const struct scn_step *st = &s->programs[p].steps[k];
            if (st->kind == SCN_STEP_READ) read = 1;
            if (st->kind == SCN_STEP_WRITE && ((!st->absolute && !read) || st->tries > 1))
                return refuse(why, n, "a write %s: not built in the redis backend%s",
                              st->tries > 1 ? "with tries= (a compare-and-set loop)" : "with no read before it", "");
        }
    }
    /* The recording has the simulated run's nodes: clients, one server, the resource. */
    int servers = 0;
    for (int i = 0; i < sim->nnodes; i++) servers += sim->nodes[i].kind == TRACE_NODE_SERVER;
    if (servers != 1)
        return refuse(why, n, "the simulated run has %s lock servers, the redis backend one%s", "several", "");
    int64_t rule = real_sim_rule(sim);
    if (rule != TRACE_RULE_PLAIN && rule != TRACE_RULE_TOKENS && rule != TRACE_RULE_OWNER &&
        !(rule == TRACE_RULE_ALGORITHM && cfg->algo == RA_FENCED))
        return refuse(why, n,
                      "the resource's rule is '%s': the redis backend builds a plain resource, one that checks "
                      "tokens (a resource with fencing=on, or fenced-lease's own compare=), and one guarded by "
                      "ownership (guard=owner)%s",
                      trace_rule_word(rule), "");
    sim_ns tie = 0, gap = deadline_gap(sim, &tie);
    if (gap == 0) {
        snprintf(why, n,
                 "its verdict rests on two events at one instant: at %.9gs a paused client resumes as the lease runs "
                 "out, and the simulator keeps the key at its deadline as Redis does; a real "
                 "run decides that tie by sub-millisecond timing (PX counts whole ms), so it cannot confirm it at any "
                 "scale",
                 (double)tie / 1e9);
        return LSIM_ENOTREAL;
    }
    if (scale <= 0) scale = kv_scale(s);
    if (gap > 0 && (double)gap * scale < REAL_REDIS_RESOLUTION_MS * 1e6) {
        snprintf(why, n,
                 "its verdict rests on a paused client resuming %.6g ms from the lease's deadline (%.9gs), which at "
                 "scale %g is %.3g ms of real time: Redis expires by a millisecond clock and PX counts whole ms, so a "
                 "real run cannot tell the two apart; --scale %.3g or more puts them %d ms of real time apart",
                 (double)gap / 1e6, (double)tie / 1e9, scale, (double)gap * scale / 1e6,
                 REAL_REDIS_RESOLUTION_MS * 1e6 / (double)gap, REAL_REDIS_RESOLUTION_MS);
        return LSIM_ENOTREAL;
    }
    return 0;
}

int real_client_fault_refused(const struct scenario *s, const struct scn_fault *f, const char *line,
                              const char *server_fmt, char *why, size_t n) {
    return client_fault_refused(s, f, line, server_fmt, why, n);
}

/* The wrappers that give each backend's checks one shape. */
static int redlock_supported(const struct scenario *s, const struct trace *sim, const struct real_cfg *c, double scale,
                             char *why, size_t n) {
    (void)c, (void)scale;
    return real_redlock_supported(s, sim, why, n);
}

static int repl_supported(const struct scenario *s, const struct trace *sim, const struct real_cfg *c, double scale,
                          char *why, size_t n) {
    (void)scale;
    if (c->release_get || c->check_client || c->compare != RC_LT || c->takeover)
        return refuse(why, n, "lock option %s is built in the redis backend only, not in %s",
                      c->release_get    ? "release=get-then-del"
                      : c->check_client ? "check=client"
                      : c->takeover     ? "takeover=on"
                                        : "compare= other than <",
                      "redis-replicated");
    return real_repl_supported(s, sim, c, why, n);
}

/* redis-replicated is the default for lease and fenced-lease on several servers. */
static int repl_chooses(const struct scenario *s) {
    return s->nservers > 1 && (strcmp(s->algo, "lease") == 0 || strcmp(s->algo, "fenced-lease") == 0);
}

/* A lock with replication options needs redis-replicated. */
static int repl_claims(const struct real_cfg *c) { return c->repl_lag_ns || c->wait_replicas; }

/* One backend of `locksim real`: adding one is one entry in real_backends. */
struct real_backend {
    const char *name;           /* --store NAME */
    const struct real_ops *ops; /* its store */
    const char *algos;          /* the algorithms it runs, ", " between, as refusals list them;
                                   NULL: none of its own (redis-replicated runs two of redis's) */
    /* Its lock options of those algorithms into c (defaults set); 0 or LSIM_ENOTREAL. */
    int (*parse_cfg)(const struct scenario *s, struct real_cfg *c, char *why, size_t n);
    /* 1: it is the store for s when --store is not given (NULL: when it runs s's algorithm). */
    int (*chooses)(const struct scenario *s);
    /* 1: the lock c can be played by this backend only (NULL: its algorithms are, and it
     * plays no other); refused with elsewhere (a format given the algorithm and the
     * --store) on another backend, or another lock on this one. */
    int (*claims)(const struct real_cfg *c);
    const char *elsewhere;
    /* The scale when none is given (real_default_scale). */
    double (*default_scale)(const struct scenario *s);
    /* What it cannot play, for a lock it runs, at scale (never 0 here). */
    int (*supported)(const struct scenario *s, const struct trace *sim, const struct real_cfg *c, double scale,
                     char *why, size_t n);
};

/* Listed as the user reads them (--store's error, the refusal of an
 * algorithm no backend runs); consulted last first: a later entry's claim
 * on a lock comes before an earlier one's, and redis is the store of last
 * resort. */
static const struct real_backend real_backends[] = {
        {"redis", &real_store_redis, "lease, fenced-lease, setnx, setnx-expire, lease-renew", parse_kv, NULL, NULL,
         NULL, kv_scale, redis_supported},
        {"etcd", &real_store_etcd, "consensus", parse_etcd, NULL, NULL,
         "algorithm %s does not run on the %s backend (consensus runs on etcd, the single-Redis locks on redis)",
         etcd_scale, etcd_supported},
        {"redis-replicated", &real_store_repl, NULL, NULL, repl_chooses, repl_claims,
         "replication options (repl-lag=, wait=) need a primary and replicas: --store redis-replicated", kv_scale,
         repl_supported},
        {"redlock", &real_store_redlock, "redlock", real_redlock_cfg, NULL, NULL,
         "algorithm %s does not run on the %s backend (redlock runs on redlock only)", redlock_scale,
         redlock_supported},
        {"zookeeper", &real_store_zk, "zookeeper, zookeeper-multi", real_zk_parse_cfg, NULL, NULL,
         "algorithm %s does not run on the %s backend (zookeeper and zookeeper-multi run on zookeeper only)",
         real_zk_default_scale, real_zk_supported},
};
#define REAL_NBACKENDS ((int)(sizeof real_backends / sizeof real_backends[0]))

/* 1 when algo is one of b's algorithms. */
static int runs(const struct real_backend *b, const char *algo) {
    size_t len = strlen(algo);
    if (len == 0) return 0;
    for (const char *p = b->algos; p && (p = strstr(p, algo)) != NULL; p += len)
        if ((p == b->algos || p[-1] == ' ') && (p[len] == ',' || p[len] == '\0')) return 1;
    return 0;
}

static const struct real_backend *backend_of(const struct real_ops *ops) {
    for (int i = 0; i < REAL_NBACKENDS; i++)
        if (real_backends[i].ops == ops) return &real_backends[i];
    return NULL;
}

const struct real_ops *real_store(const char *name) {
    for (int i = 0; i < REAL_NBACKENDS; i++)
        if (strcmp(real_backends[i].name, name) == 0) return real_backends[i].ops;
    return NULL;
}

void real_store_names(char *buf, size_t n) {
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < REAL_NBACKENDS && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%s",
                               i == 0                    ? ""
                               : i == REAL_NBACKENDS - 1 ? " and "
                                                         : ", ",
                               real_backends[i].name);
}

const char *real_store_for(const struct scenario *s) {
    for (int i = REAL_NBACKENDS - 1; i >= 0; i--) {
        const struct real_backend *b = &real_backends[i];
        if (b->chooses ? b->chooses(s) : runs(b, s->algo)) return b->name;
    }
    return real_backends[0].name;
}

double real_default_scale(const struct real_ops *ops, const struct scenario *s) {
    const struct real_backend *b = backend_of(ops);
    return b ? b->default_scale(s) : 0.01;
}

int real_parse_cfg(const struct scenario *s, struct real_cfg *c, char *why, size_t n) {
    memset(c, 0, sizeof *c);
    c->ttl_ns = 30 * SIM_NS_PER_S;
    c->first_token = 1;
    c->wait_timeout_ns = SIM_NS_PER_S;
    c->request_timeout_ns = SIM_NS_PER_S; /* the simulator's kv client's (sim/algo/kv_config.c) */
    char list[400];
    size_t at = 0;
    for (int i = 0; i < REAL_NBACKENDS; i++) {
        const struct real_backend *b = &real_backends[i];
        if (runs(b, s->algo)) return b->parse_cfg(s, c, why, n);
        if (b->algos && at < sizeof list)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s runs %s", at ? "; " : "", b->name, b->algos);
    }
    return refuse(why, n, "algorithm %s needs a backend that is not built (%s)", s->algo, list);
}

int real_supported(const struct real_ops *ops, const struct scenario *s, const struct trace *sim, double scale,
                   char *why, size_t n) {
    struct real_cfg c;
    int rc = real_parse_cfg(s, &c, why, n);
    if (rc) return rc;
    for (int i = REAL_NBACKENDS - 1; i >= 0; i--) {
        const struct real_backend *b = &real_backends[i];
        int mine = ops == b->ops, claimed = b->claims ? b->claims(&c) : runs(b, s->algo);
        if (b->elsewhere && claimed != mine && (claimed || !b->claims))
            return refuse(why, n, b->elsewhere, s->algo, ops->name);
        if (mine) return b->supported(s, sim, &c, scale > 0 ? scale : b->default_scale(s), why, n);
    }
    return refuse(why, n, "the %s store is not in real_backends%s", ops->name, "");
}
