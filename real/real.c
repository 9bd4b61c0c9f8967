/* The redis backend of `locksim real` (real/real.h): what it refuses, the
 * client processes, the fault driver and the recording. */
#include "real.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "resp.h"

/* The lock, as the research's Redis demos (docs/reality.md) run it. */
#define LUA_FENCED_ACQUIRE \
    "if redis.call('SET',KEYS[1],ARGV[1],'NX','PX',ARGV[2]) then return redis.call('INCR',KEYS[2]) " \
    "else return false end"
/* lease-renew's heartbeat: extend the key only while it holds this client's
 * value (Redisson's watchdog does the same compare-and-pexpire). */
#define LUA_RENEW "if redis.call('GET',KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE',KEYS[1],ARGV[2]) else return 0 end"
#define LUA_CAD "if redis.call('GET',KEYS[1]) == ARGV[1] then return redis.call('DEL',KEYS[1]) else return 0 end"
/* A plain DEL that also says whose entry it removed (the same effect as DEL). */
#define LUA_DEL "local v = redis.call('GET',KEYS[1]) redis.call('DEL',KEYS[1]) return v"
/* The resource: stock and version, read together. */
#define LUA_READ "return {tonumber(redis.call('GET',KEYS[1]) or '0'), tonumber(redis.call('GET',KEYS[2]) or '0')}"
#define LUA_WRITE "redis.call('SET',KEYS[1],ARGV[1]) redis.call('INCR',KEYS[2]) return 1"
/* A fenced resource, the scenario's rule (resource fencing=on): a write
 * with no token is refused (3), one lower than the highest accepted is
 * refused (2); equal is let in, as the simulator's resource does. */
#define LUA_FENCED_WRITE                                                                                   \
    "local tok = tonumber(ARGV[2]) if tok == 0 then return 3 end "                                         \
    "local last = tonumber(redis.call('GET',KEYS[3]) or '0') if tok < last then return 2 end "             \
    "redis.call('SET',KEYS[3],ARGV[2]) redis.call('SET',KEYS[1],ARGV[1]) redis.call('INCR',KEYS[2]) return 1"

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

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_until(int64_t abs_ns) {
    struct timespec ts = {(time_t)(abs_ns / 1000000000), (long)(abs_ns % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

double real_default_scale(const struct scenario *s) {
    double d = (double)s->duration_ns;
    return d > 0 ? REAL_DEFAULT_SPAN_MS * 1e6 / d : 0.01;
}

/* ---- what can be made real ------------------------------------------------ */

static int refuse(char *why, size_t n, const char *fmt, const char *a, const char *b) {
    snprintf(why, n, fmt, a, b);
    return LSIM_ENOTREAL;
}

static int parse_cfg(const struct scenario *s, struct real_cfg *c, char *why, size_t n) {
    memset(c, 0, sizeof *c);
    c->ttl_ns = 30 * SIM_NS_PER_S;
    c->first_token = 1;
    if (strcmp(s->algo, "lease") == 0) c->algo = RA_LEASE;
    else if (strcmp(s->algo, "fenced-lease") == 0) c->algo = RA_FENCED;
    else if (strcmp(s->algo, "setnx") == 0) {
        c->algo = RA_SETNX;
        c->ttl_ns = 0;
        c->release_del = 1;
    } else if (strcmp(s->algo, "setnx-expire") == 0) c->algo = RA_SETNX_EXPIRE;
    else if (strcmp(s->algo, "lease-renew") == 0) {
        c->algo = RA_RENEW;
        c->renew_every = 3;
    }
    else
        return refuse(why, n, "algorithm %s is not a single-Redis lock: it needs a backend that is not built (%s)",
                      s->algo, "redis runs lease, fenced-lease, setnx, setnx-expire, lease-renew");
    int constant = 0;
    for (int i = 0; i < s->nopts; i++) {
        const char *k = s->opts[i].key, *v = s->opts[i].val;
        if (strcmp(k, "ttl") == 0 && c->algo != RA_SETNX) {
            if (scn_parse_duration(v, &c->ttl_ns) != 0 || c->ttl_ns <= 0)
                return refuse(why, n, "lock option ttl=%s is not a duration the redis backend can set%s", v, "");
        } else if (strcmp(k, "release") == 0) {
            if (strcmp(v, "del") == 0) c->release_del = 1;
            else if (strcmp(v, "compare-and-delete") == 0) c->release_del = 0;
            else
                return refuse(why, n,
                              "lock option release=%s: only del and compare-and-delete are built in the redis "
                              "backend%s",
                              v, "");
        } else if (strncmp(k, "repl", 4) == 0 || strncmp(k, "wait", 4) == 0 || strncmp(k, "min-replicas", 12) == 0) {
            return refuse(why, n,
                          "lock option %s=%s: replication needs a primary and a replica (the redis-replicated "
                          "backend), not built",
                          k, v);
        } else if (strcmp(k, "value") == 0) {
            constant = strcmp(v, "constant") == 0;
        } else if (strcmp(k, "gap") == 0 && c->algo == RA_SETNX_EXPIRE) {
            if (scn_parse_duration(v, &c->gap_ns) != 0) return refuse(why, n, "lock option gap=%s is not a duration%s", v, "");
        } else if (strcmp(k, "renew-every") == 0 && c->algo == RA_RENEW) {
            c->renew_every = atoi(v);
            if (c->renew_every < 1) return refuse(why, n, "renew-every=%s is not a whole number above 0%s", v, "");
        } else if (strcmp(k, "renew-interval") == 0 && c->algo == RA_RENEW) {
            if (scn_parse_duration(v, &c->renew_interval_ns) != 0) return refuse(why, n, "renew-interval=%s is not a duration%s", v, "");
        } else if (strcmp(k, "tokens") == 0 && c->algo == RA_RENEW) {
            c->tokens = strcmp(v, "on") == 0;
        } else if (strcmp(k, "on-lost") == 0 && c->algo == RA_RENEW &&
                   (strcmp(v, "continue") == 0 || strcmp(v, "abort") == 0)) {
            c->on_lost_abort = strcmp(v, "abort") == 0;
        } else if (strcmp(k, "first-token") == 0 && c->algo == RA_FENCED) {
            c->first_token = strtoll(v, NULL, 10);
        } else if (strcmp(k, "request-timeout") == 0 || (strcmp(k, "persistence") == 0) ||
                   (strcmp(k, "expiry-clock") == 0 && strcmp(v, "wall") == 0) ||
                   (strcmp(k, "compare") == 0 && strcmp(v, "<") == 0)) {
            /* nothing to do on loopback with a server that never restarts */
        } else {
            return refuse(why, n, "lock option %s=%s is not built in the redis backend", k, v);
        }
    }
    if (constant && !c->release_del)
        return refuse(why, n,
                      "value=constant with compare-and-delete: the recording could not tell whose entry a release "
                      "removed%s%s",
                      "", "");
    return 0;
}

static const char *fault_reason(enum scn_fault_kind k) {
    switch (k) {
    case SCN_FAULT_CLOCK_STEP:
    case SCN_FAULT_CLOCK_DRIFT:
    case SCN_FAULT_CLOCK_SLEW:
        return "a clock fault needs a CLOCK_REALTIME shim on the process (libfaketime does not work with Debian's "
               "redis-server), not built; the system clock is never touched";
    case SCN_FAULT_PARTITION:
    case SCN_FAULT_HEAL:
    case SCN_FAULT_LINK:
        return "a partition or a link change needs a per-link loopback proxy, not built";
    case SCN_FAULT_PROMOTE:
    case SCN_FAULT_KILL_REPLICAS:
        return "failover and replication need a primary and a replica (the redis-replicated backend), not built";
    case SCN_FAULT_RESTART:
        return "restarting a crashed client (a fresh process with the program from its start) is not built yet";
    default:
        return NULL;
    }
}

/* The simulated run's resource rule (resource-init's b). */
static int64_t sim_rule(const struct trace *sim) {
    for (size_t i = 0; i < sim->len; i++)
        if (sim->ev[i].kind == TRACE_RESOURCE_INIT) return sim->ev[i].b;
    return TRACE_RULE_PLAIN;
}

int real_supported(const struct scenario *s, const struct trace *sim, char *why, size_t n) {
    struct real_cfg c;
    int rc = parse_cfg(s, &c, why, n);
    if (rc) return rc;
    if (s->nservers > 1) return refuse(why, n, "%s lock servers: the redis backend runs one%s", "several", "");
    if (s->latency.min_ns != s->latency.max_ns || s->loss_ppm || s->nlinks)
        return refuse(why, n,
                      "network latency that varies, loss, or a link of its own needs a delaying, dropping "
                      "loopback proxy, not built%s%s",
                      "", "");
    if (s->nclocks)
        return refuse(why, n, "clock offsets and drifts (clock %s) need a CLOCK_REALTIME shim, not built%s",
                      s->clocks[0].node, "");
    if (s->resource_timeout_ns || s->check_reads || s->guard_owner)
        return refuse(why, n, "the resource's %s is not built in the redis backend%s",
                      s->guard_owner ? "guard=owner" : s->check_reads ? "check=reads+writes" : "timeout=", "");
    if (s->nclients > REDIS_SRV_MAX_CHILDREN)
        return refuse(why, n, "more clients than the %s processes the redis backend runs%s", "64", "");
    for (int i = 0; i < s->nfaults; i++) {
        const struct scn_fault *f = &s->faults[i];
        const char *r = fault_reason(f->kind);
        char line[16];
        snprintf(line, sizeof line, "%d", f->pos.line);
        if (r) return refuse(why, n, "line %s: %s", line, r);
        int client = 0;
        for (int k = 0; k < s->nclients; k++)
            if (strcmp(s->clients[k].name, f->node) == 0) client = 1;
        if (!client)
            return refuse(why, n,
                          "line %s: a pause or crash of %s, a lock server: a stopped redis-server still accepts TCP "
                          "connections and later runs what queued, which is another fault; not built",
                          line, f->node);
        if (f->point != SCN_POINT_NONE && strcmp(f->trigger, f->node) != 0)
            return refuse(why, n,
                          "line %s: a fault on %s at another client's point: the driver cannot see a point of "
                          "another process in time; not built",
                          line, f->node);
        if (f->point != SCN_POINT_NONE && f->kind == SCN_FAULT_RESUME)
            return refuse(why, n, "line %s: a resume at a point of %s's own program (it is stopped): not built",
                          line, f->node);
    }
    for (int p = 0; p < s->nprograms; p++) {
        int read = 0;
        for (int k = 0; k < s->programs[p].nsteps; k++) {
            const struct scn_step *st = &s->programs[p].steps[k];
            if (st->kind == SCN_STEP_READ) read = 1;
            if (st->kind == SCN_STEP_WRITE && (!read || st->tries > 1))
                return refuse(why, n, "a write %s: not built in the redis backend%s",
                              read ? "with tries= (a compare-and-set loop)" : "with no read before it", "");
        }
    }
    /* The recording has the simulated run's nodes: clients, one server, the resource. */
    int servers = 0;
    for (int i = 0; i < sim->nnodes; i++) servers += sim->nodes[i].kind == TRACE_NODE_SERVER;
    if (servers != 1) return refuse(why, n, "the simulated run has %s lock servers, the redis backend one%s", "several", "");
    int64_t rule = sim_rule(sim);
    if (rule != TRACE_RULE_PLAIN && rule != TRACE_RULE_TOKENS && !(rule == TRACE_RULE_ALGORITHM && c.algo == RA_FENCED))
        return refuse(why, n,
                      "the resource's rule is '%s': the redis backend builds a plain resource and one that checks "
                      "tokens (a resource with fencing=on, or fenced-lease's own compare=<)%s",
                      trace_rule_word(rule), "");
    return 0;
}

/* ---- a client process -------------------------------------------------------- */

struct client {
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

static void emit(struct client *cl, int kind, int node, int peer, uint64_t token, int64_t a, int64_t b) {
    struct rec r = {now_ns() - cl->t0, kind, node, peer, 0, token, a, b};
    ssize_t w;
    do w = write(cl->evfd, &r, sizeof r);
    while (w < 0 && errno == EINTR);
}

static int64_t real_of(const struct client *cl, sim_ns scn) { return (int64_t)((double)scn * cl->scale); }

/* A named point: the faults the scenario attaches there, done for real by
 * the process itself (a SIGSTOP the driver resumes; SIGKILL). */
static void point(struct client *cl, enum scn_point p) {
    int n = ++cl->occ[p];
    const struct scenario *s = cl->s;
    for (int i = 0; i < s->nfaults; i++) {
        const struct scn_fault *f = &s->faults[i];
        if (f->point != p || f->occurrence != n || strcmp(f->trigger, s->clients[cl->idx].name) != 0) continue;
        if (f->kind == SCN_FAULT_PAUSE) {
            emit(cl, TRACE_PAUSE, cl->idx, TRACE_NO_NODE, 0, f->dur_ns, 0);
            raise(SIGSTOP);
        } else if (f->kind == SCN_FAULT_CRASH) {
            emit(cl, TRACE_CRASH, cl->idx, TRACE_NO_NODE, 0, 0, 0);
            raise(SIGKILL);
        }
    }
}

/* The scenario's constant network latency, one way, made real: the client
 * holds each request that long before sending it, and each reply that long
 * after receiving it (loopback's own tens of microseconds come on top). */
static void hop(const struct client *cl) {
    if (cl->s->latency.min_ns) sleep_until(now_ns() + real_of(cl, cl->s->latency.min_ns));
}

static int send_req(struct client *cl, int argc, const char *const *argv) {
    hop(cl);
    return resp_send(&cl->c, argc, argv);
}

static int recv_reply(struct client *cl, struct resp_reply *r) {
    int rc = resp_recv(&cl->c, r);
    hop(cl);
    return rc;
}

static int cmd(struct client *cl, struct resp_reply *r, int argc, const char *const *argv) {
    if (send_req(cl, argc, argv) != 0 || recv_reply(cl, r) != 0) _exit(3);
    if (r->type == RESP_ERROR) _exit(4);
    return 0;
}

static int owner_of(const struct client *cl, const char *value) {
    size_t k = strcspn(value, "#");
    for (int i = 0; i < cl->s->nclients; i++)
        if (strlen(cl->s->clients[i].name) == k && strncmp(cl->s->clients[i].name, value, k) == 0) return i;
    return TRACE_NO_NODE;
}

/* One attempt: 1 granted (token set), 0 refused. */
static int try_acquire(struct client *cl) {
    const struct real_cfg *g = cl->cfg;
    char ttl[32], gap[32];
    snprintf(cl->value, sizeof cl->value, "%s#%d", cl->s->clients[cl->idx].name, ++cl->acquires);
    long long ttl_ms = (long long)((double)g->ttl_ns * cl->scale / 1e6 + 0.5);
    if (ttl_ms < 1) ttl_ms = 1;
    snprintf(ttl, sizeof ttl, "%lld", ttl_ms);
    struct resp_reply r;
    int crash_at_send = 0;
    switch (g->algo) {
    case RA_LEASE: {
        const char *a[] = {"SET", "lock", cl->value, "NX", "PX", ttl};
        if (send_req(cl, 6, a) != 0) _exit(3);
        crash_at_send = 1;
        break;
    }
    case RA_RENEW:
    case RA_FENCED: {
        /* lease-renew without tokens=on is a plain SET NX PX */
        const char *set[] = {"SET", "lock", cl->value, "NX", "PX", ttl};
        const char *a[] = {"EVAL", LUA_FENCED_ACQUIRE, "2", "lock", "fence:counter", cl->value, ttl};
        int plain = g->algo == RA_RENEW && !g->tokens;
        if (send_req(cl, plain ? 6 : 7, plain ? set : a) != 0) _exit(3);
        crash_at_send = 1;
        break;
    }
    case RA_SETNX:
    case RA_SETNX_EXPIRE: {
        const char *a[] = {"SETNX", "lock", cl->value};
        if (send_req(cl, 3, a) != 0) _exit(3);
        crash_at_send = 1;
        break;
    }
    }
    if (crash_at_send) point(cl, SCN_POINT_DURING_ACQUIRE);
    if (recv_reply(cl, &r) != 0 || r.type == RESP_ERROR) _exit(3);
    int got = 0;
    cl->token = 0;
    switch (g->algo) {
    case RA_LEASE:
        got = r.type == RESP_STATUS;
        if (got) emit(cl, TRACE_SRV_GRANT, cl->srv, cl->idx, 0, g->ttl_ns, 0);
        break;
    case RA_RENEW:
        got = r.type == RESP_STATUS || r.type == RESP_INT;
        if (got) {
            cl->token = r.type == RESP_INT ? (uint64_t)r.integer : 0;
            emit(cl, TRACE_SRV_GRANT, cl->srv, cl->idx, cl->token, g->ttl_ns, 0);
            sim_ns every = g->renew_interval_ns ? g->renew_interval_ns : g->ttl_ns / g->renew_every;
            cl->renew_at = now_ns() + real_of(cl, every);
            cl->lost = 0;
        }
        break;
    case RA_FENCED:
        got = r.type == RESP_INT;
        if (got) {
            cl->token = (uint64_t)r.integer;
            emit(cl, TRACE_SRV_GRANT, cl->srv, cl->idx, cl->token, g->ttl_ns, 0);
        }
        break;
    case RA_SETNX:
        got = r.type == RESP_INT && r.integer == 1;
        if (got) emit(cl, TRACE_SRV_GRANT, cl->srv, cl->idx, 0, 0, 0);
        break;
    case RA_SETNX_EXPIRE:
        got = r.type == RESP_INT && r.integer == 1;
        if (got) {
            emit(cl, TRACE_SRV_GRANT, cl->srv, cl->idx, 0, 0, 0);
            if (g->gap_ns) sleep_until(now_ns() + real_of(cl, g->gap_ns));
            snprintf(gap, sizeof gap, "%s", ttl);
            const char *a[] = {"PEXPIRE", "lock", gap};
            cmd(cl, &r, 3, a); /* as naive code does, its answer is not looked at */
            emit(cl, TRACE_SRV_RENEW, cl->srv, cl->idx, 0, g->ttl_ns, 0);
        }
        break;
    }
    if (!got) emit(cl, TRACE_SRV_DENY, cl->srv, cl->idx, 0, TRACE_NO_NODE, 0);
    return got;
}

/* lease-renew's heartbeat, in the same process as the work (a pause
 * freezes both): extend the lease; a refusal means it is gone: renewing
 * stops, and with on-lost=abort the program is told (lock_lost: it leaves
 * its critical section and skips its writes) unless it ignores the loss
 * (checks-loss=no); with on-lost=continue, the default, it goes on. */
static void renew(struct client *cl) {
    const struct real_cfg *g = cl->cfg;
    char ttl[32];
    long long ttl_ms = (long long)((double)g->ttl_ns * cl->scale / 1e6 + 0.5);
    snprintf(ttl, sizeof ttl, "%lld", ttl_ms < 1 ? 1 : ttl_ms);
    struct resp_reply r;
    const char *a[] = {"EVAL", LUA_RENEW, "1", "lock", cl->value, ttl};
    cmd(cl, &r, 6, a);
    if (r.type == RESP_INT && r.integer == 1) {
        emit(cl, TRACE_SRV_RENEW, cl->srv, cl->idx, 0, g->ttl_ns, 0);
        sim_ns every = g->renew_interval_ns ? g->renew_interval_ns : g->ttl_ns / g->renew_every;
        cl->renew_at = now_ns() + real_of(cl, every);
        return;
    }
    cl->renew_at = 0;
    if (g->on_lost_abort && cl->holding && !cl->s->clients[cl->idx].ignores_loss) {
        emit(cl, TRACE_CS_EXIT, cl->idx, TRACE_NO_NODE, cl->token, TRACE_EXIT_LOST, 0);
        cl->holding = 0;
        cl->lost = 1;
    }
}

/* Wait until abs (real ns), renewing the lease on the way when it is due. */
static void wait_until(struct client *cl, int64_t abs) {
    while (cl->renew_at && cl->renew_at < abs) {
        sleep_until(cl->renew_at);
        renew(cl);
    }
    sleep_until(abs);
}

static void do_release(struct client *cl) {
    cl->renew_at = 0;
    struct resp_reply r;
    if (cl->holding) emit(cl, TRACE_CS_EXIT, cl->idx, TRACE_NO_NODE, cl->token, TRACE_EXIT_RELEASE, 0);
    cl->holding = 0;
    emit(cl, TRACE_RELEASE_SENT, cl->idx, TRACE_NO_NODE, 0, 0, 0);
    if (cl->cfg->release_del) {
        const char *a[] = {"EVAL", LUA_DEL, "1", "lock"};
        cmd(cl, &r, 4, a);
        if (r.type == RESP_BULK) {
            int owner = owner_of(cl, r.str);
            emit(cl, TRACE_SRV_DELETE, cl->srv, cl->idx, 0, owner, owner != cl->idx);
        }
    } else {
        const char *a[] = {"EVAL", LUA_CAD, "1", "lock", cl->value};
        cmd(cl, &r, 5, a);
        if (r.type == RESP_INT && r.integer == 1) emit(cl, TRACE_SRV_DELETE, cl->srv, cl->idx, 0, cl->idx, 0);
        else emit(cl, TRACE_SRV_KEEP, cl->srv, cl->idx, 0, -1, 0);
    }
    point(cl, SCN_POINT_AFTER_RELEASE);
}

/* The program of client idx, from its start time until it ends. */
static void client_main(struct client *cl) {
    const struct scenario *s = cl->s;
    const struct scn_client *me = &s->clients[cl->idx];
    const struct scn_program *p = &s->programs[me->program];
    /* Retry jitter is drawn afresh in every real run (the simulator draws
     * it from its seeded PRNG): a real run is not a replay. */
    uint64_t rng = ((uint64_t)now_ns() ^ (uint64_t)getpid() << 32) * 0x9E3779B97F4A7C15ull | 1;
    sleep_until(cl->t0 + real_of(cl, me->start_ns));
    int64_t read_value = 0, has_read = 0;
    int reps = 0;
    for (; me->repeat == 0 || reps < me->repeat; reps++) {
        if (reps && me->think_ns) wait_until(cl, now_ns() + real_of(cl, me->think_ns));
        for (int pc = 0; pc < p->nsteps; pc++) {
            const struct scn_step *st = &p->steps[pc];
            struct resp_reply r;
            switch (st->kind) {
            case SCN_STEP_ACQUIRE: {
                emit(cl, TRACE_ACQUIRE_START, cl->idx, TRACE_NO_NODE, 0, 0, 0);
                int64_t began = now_ns();
                int attempts = 0;
                for (;;) {
                    attempts++;
                    emit(cl, TRACE_ACQUIRE_TRY, cl->idx, TRACE_NO_NODE, 0, attempts, 0);
                    if (try_acquire(cl)) {
                        cl->holding = 1;
                        emit(cl, TRACE_ACQUIRED, cl->idx, TRACE_NO_NODE, cl->token, cl->cfg->ttl_ns, attempts);
                        point(cl, SCN_POINT_AFTER_ACQUIRE);
                        break;
                    }
                    emit(cl, TRACE_ACQUIRE_DENIED, cl->idx, TRACE_NO_NODE, 0, attempts, 0);
                    sim_ns retry = st->retry_ns ? st->retry_ns : s->retry_ns;
                    if ((st->tries && attempts >= st->tries) ||
                        (st->timeout_ns && now_ns() - began + real_of(cl, retry) > real_of(cl, st->timeout_ns))) {
                        emit(cl, TRACE_ACQUIRE_FAILED, cl->idx, TRACE_NO_NODE, 0, attempts, 0);
                        /* skip to the step after the next release */
                        int k = pc + 1;
                        while (k < p->nsteps && p->steps[k].kind != SCN_STEP_RELEASE) k++;
                        pc = k < p->nsteps ? k : pc;
                        break;
                    }
                    if (st->jitter_ns) {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        retry += (sim_ns)(rng % (uint64_t)(st->jitter_ns + 1));
                    }
                    wait_until(cl, now_ns() + real_of(cl, retry));
                }
                break;
            }
            case SCN_STEP_READ: {
                point(cl, SCN_POINT_BEFORE_READ);
                const char *a[] = {"EVAL", LUA_READ, "2", "stock", "stock:version"};
                cmd(cl, &r, 5, a);
                read_value = r.elem[0];
                has_read = 1;
                emit(cl, TRACE_READ, cl->res, cl->idx, 0, r.elem[0], r.elem[1]);
                point(cl, SCN_POINT_BETWEEN_READ_AND_WRITE);
                break;
            }
            case SCN_STEP_WRITE: {
                point(cl, SCN_POINT_BEFORE_WRITE);
                if (cl->lost) { /* it knows it no longer holds the lock */
                    emit(cl, TRACE_WRITE_SKIPPED, cl->idx, TRACE_NO_NODE, cl->token, TRACE_SKIP_LOST, 0);
                    has_read = 0;
                    break;
                }
                if (!has_read || read_value <= 0) {
                    emit(cl, TRACE_WRITE_SKIPPED, cl->idx, TRACE_NO_NODE, cl->token, TRACE_SKIP_SOLD_OUT, 0);
                    has_read = 0;
                    break;
                }
                char v[32], tok[32];
                snprintf(v, sizeof v, "%lld", (long long)(read_value - 1));
                snprintf(tok, sizeof tok, "%llu", (unsigned long long)cl->token);
                int64_t result;
                if (cl->cfg->fenced_resource) {
                    const char *a[] = {"EVAL", LUA_FENCED_WRITE, "3", "stock", "stock:version", "fence:last", v, tok};
                    cmd(cl, &r, 8, a);
                } else {
                    const char *a[] = {"EVAL", LUA_WRITE, "2", "stock", "stock:version", v};
                    cmd(cl, &r, 6, a);
                }
                result = r.integer;
                emit(cl, TRACE_WRITE, cl->res, cl->idx, cl->token, read_value - 1, result);
                has_read = 0;
                point(cl, SCN_POINT_AFTER_WRITE);
                break;
            }
            case SCN_STEP_WORK:
                emit(cl, TRACE_WORK_START, cl->idx, TRACE_NO_NODE, 0, st->dur_ns, 0);
                wait_until(cl, now_ns() + real_of(cl, st->dur_ns));
                emit(cl, TRACE_WORK_END, cl->idx, TRACE_NO_NODE, 0, 0, 0);
                break;
            case SCN_STEP_RELEASE:
                point(cl, SCN_POINT_BEFORE_RELEASE);
                do_release(cl);
                break;
            case SCN_STEP_COUNT:
                break;
            }
        }
        if (cl->holding) {
            emit(cl, TRACE_CS_EXIT, cl->idx, TRACE_NO_NODE, cl->token, TRACE_EXIT_END, 0);
            cl->holding = 0;
        }
    }
    emit(cl, TRACE_PROGRAM_DONE, cl->idx, TRACE_NO_NODE, 0, reps, 0);
}

/* ---- the driver ----------------------------------------------------------- */

struct recs {
    struct rec *v;
    size_t n, cap;
    uint32_t order;
};

static int recs_add(struct recs *l, const struct rec *r) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        struct rec *v = realloc(l->v, cap * sizeof *v);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n] = *r;
    l->v[l->n++].order = l->order++;
    return 0;
}

static int rec_cmp(const void *x, const void *y) {
    const struct rec *a = x, *b = y;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

static int drain(int fd, struct recs *l) {
    struct rec r;
    for (;;) {
        ssize_t got = read(fd, &r, sizeof r);
        if (got == (ssize_t)sizeof r) {
            if (recs_add(l, &r) != 0) return -1;
            continue;
        }
        if (got < 0 && errno == EINTR) continue;
        return 0;
    }
}

static int setup_store(const struct redis_srv *srv, const struct scenario *s, const struct real_cfg *g) {
    struct resp_conn c;
    struct resp_reply r;
    if (resp_connect(&c, srv->port) != 0) return -1;
    char stock[32], first[32];
    snprintf(stock, sizeof stock, "%lld", (long long)s->stock);
    snprintf(first, sizeof first, "%lld", g->first_token - 1);
    const char *flush[] = {"FLUSHALL"};
    const char *set1[] = {"SET", "stock", stock};
    const char *set2[] = {"SET", "fence:counter", first};
    int rc = resp_command(&c, &r, 1, flush) || resp_command(&c, &r, 3, set1) || resp_command(&c, &r, 3, set2);
    resp_close(&c);
    return rc ? -1 : 0;
}

/* Per-client process state the driver follows. */
struct proc {
    pid_t pid;
    int stopped;          /* 1 while SIGSTOPped */
    int dead;
    int64_t resume_at;    /* real ns of the planned SIGCONT, 0 = none */
    int64_t stopped_at;
};

static void driver_event(struct recs *l, int64_t t, int kind, int node, int64_t a) {
    struct rec r = {t, kind, node, TRACE_NO_NODE, 0, 0, a, 0};
    recs_add(l, &r);
}

/* Ask Redis who holds the lock now (a crashed client may hold it though it
 * never saw the reply that granted it): recorded for the build below. */
static void observe_hold(const struct redis_srv *srv, const struct scenario *s, struct recs *l, int64_t t) {
    struct resp_conn c;
    struct resp_reply v, ttl;
    if (resp_connect(&c, srv->port) != 0) return;
    const char *get[] = {"GET", "lock"}, *pttl[] = {"PTTL", "lock"};
    int ok = resp_command(&c, &v, 2, get) == 0 && resp_command(&c, &ttl, 2, pttl) == 0;
    resp_close(&c);
    if (!ok || v.type != RESP_BULK || ttl.type != RESP_INT) return;
    size_t k = strcspn(v.str, "#");
    for (int i = 0; i < s->nclients; i++)
        if (strlen(s->clients[i].name) == k && strncmp(s->clients[i].name, v.str, k) == 0) {
            struct rec r = {t, REC_OBSERVED_HOLD, i, TRACE_NO_NODE, 0, 0, i,
                            ttl.integer > 0 ? ttl.integer * 1000000LL : 0};
            recs_add(l, &r);
        }
}

static void resume(struct proc *p, int idx, int64_t t, double scale, struct recs *l) {
    kill(p->pid, SIGCONT);
    p->stopped = 0;
    p->resume_at = 0;
    driver_event(l, t, TRACE_RESUME, idx, (int64_t)((double)(t - p->stopped_at) / scale));
}

static void reap(struct proc *ps, int n, int64_t t0) {
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG | WUNTRACED)) > 0) {
        for (int i = 0; i < n; i++) {
            if (ps[i].pid != pid) continue;
            if (WIFSTOPPED(st) && !ps[i].stopped) { /* it stopped itself at a point */
                ps[i].stopped = 1;
                ps[i].stopped_at = now_ns() - t0;
            } else if (WIFEXITED(st) || WIFSIGNALED(st)) {
                ps[i].dead = 1;
                redis_srv_guard_forget(pid);
            }
        }
    }
}

/* The lease of owner ran out at t, as PX promises (not observed). */
static void append_expire(struct trace *out, sim_ns t, int srv_node, int owner) {
    struct trace_event ev;
    memset(&ev, 0, sizeof ev);
    ev.t = t;
    ev.kind = TRACE_SRV_EXPIRE;
    ev.node = srv_node;
    ev.peer = owner;
    trace_append(out, &ev);
}

int real_play(const struct scenario *s, const struct trace *sim, const struct redis_srv *srv, double scale,
              struct trace *out, char *err, size_t n) {
    struct real_cfg cfg;
    char why[400];
    trace_init(out, 1);
    if (parse_cfg(s, &cfg, why, sizeof why) != 0) {
        snprintf(err, n, "%s", why);
        return LSIM_ENOTREAL;
    }
    /* A resource with a rule checks tokens: the scenario's fencing=on, or
     * fenced-lease's own rule (compare=<, the same check), which a stated
     * fencing=off turns off, as in the simulator (tokens issued, unchecked). */
    int64_t rule = sim_rule(sim);
    cfg.fenced_resource = rule == TRACE_RULE_TOKENS ||
                          (rule == TRACE_RULE_ALGORITHM && !(s->fencing_stated && !s->fencing)); /* fencing=off: unchecked */
    int srv_node = -1, res_node = -1;
    for (int i = 0; i < sim->nnodes; i++) {
        if (trace_add_node(out, sim->nodes[i].name, sim->nodes[i].kind) < 0) return LSIM_ENOMEM;
        if (sim->nodes[i].kind == TRACE_NODE_SERVER && srv_node < 0) srv_node = i;
        if (sim->nodes[i].kind == TRACE_NODE_RESOURCE) res_node = i;
    }
    snprintf(out->title, sizeof out->title, "%s", sim->title);
    snprintf(out->algo, sizeof out->algo, "%s", sim->algo);
    out->seed = sim->seed;
    if (setup_store(srv, s, &cfg) != 0) {
        snprintf(err, n, "redis-server on 127.0.0.1:%d did not take the set-up commands", srv->port);
        return LSIM_EINTERNAL;
    }
    int pfd[2];
    if (pipe(pfd) != 0) {
        snprintf(err, n, "pipe: %s", strerror(errno));
        return LSIM_EINTERNAL;
    }
    struct recs l = {0};
    struct proc *ps = calloc((size_t)s->nclients, sizeof *ps);
    if (!ps) {
        close(pfd[0]);
        close(pfd[1]);
        return LSIM_ENOMEM;
    }
    fflush(NULL);
    /* The start instant is chosen once every client is connected (each
     * says so on ready, then reads it from go): no client starts late
     * because a fork or a connect was slow. */
    int ready[2], go[2];
    if (pipe(ready) != 0 || pipe(go) != 0) {
        snprintf(err, n, "pipe: %s", strerror(errno));
        free(ps);
        return LSIM_EINTERNAL;
    }
    int64_t t0 = 0;
    int rc = 0;
    for (int i = 0; i < s->nclients && rc == 0; i++) {
        sigset_t all, old;
        sigfillset(&all);
        sigprocmask(SIG_BLOCK, &all, &old);
        pid_t pid = fork();
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            /* Sleeps end on time: the default 50 us of timer slack per sleep
             * would add up over a client's many short scaled waits. */
            prctl(PR_SET_TIMERSLACK, 1UL);
            signal(SIGINT, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            signal(SIGHUP, SIG_DFL);
            sigprocmask(SIG_SETMASK, &old, NULL);
            close(pfd[0]);
            struct client cl;
            memset(&cl, 0, sizeof cl);
            cl.s = s;
            cl.cfg = &cfg;
            cl.idx = i;
            cl.srv = srv_node;
            cl.res = res_node;
            cl.evfd = pfd[1];
            cl.scale = scale;
            if (resp_connect(&cl.c, srv->port) != 0) _exit(2);
            close(ready[0]);
            close(go[1]);
            char one = 1;
            if (write(ready[1], &one, 1) != 1 || read(go[0], &cl.t0, sizeof cl.t0) != (ssize_t)sizeof cl.t0) _exit(2);
            client_main(&cl);
            resp_close(&cl.c);
            _exit(0);
        }
        if (pid > 0) redis_srv_guard_child(pid);
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (pid < 0) {
            snprintf(err, n, "fork: %s", strerror(errno));
            rc = LSIM_EINTERNAL;
            break;
        }
        ps[i].pid = pid;
    }
    close(pfd[1]);
    close(ready[1]);
    close(go[0]);
    int nready = 0;
    for (char b; rc == 0 && nready < s->nclients && read(ready[0], &b, 1) == 1;) nready++;
    if (rc == 0 && nready < s->nclients) {
        snprintf(err, n, "a client process could not connect to redis-server on 127.0.0.1:%d", srv->port);
        rc = LSIM_EINTERNAL;
    }
    t0 = now_ns() + 5 * 1000000LL;
    for (int i = 0; rc == 0 && i < s->nclients; i++)
        if (write(go[1], &t0, sizeof t0) != (ssize_t)sizeof t0) rc = LSIM_EINTERNAL;
    close(ready[0]);
    close(go[1]);
    fcntl(pfd[0], F_SETFL, O_NONBLOCK);
    int64_t end = (int64_t)((double)s->duration_ns * scale);
    int nf = s->nfaults;
    char *done = calloc((size_t)nf + 1, 1);
    if (!done) rc = LSIM_ENOMEM;
    for (;;) {
        if (rc) break;
        int64_t t = now_ns() - t0;
        if (t >= end) break;
        drain(pfd[0], &l);
        reap(ps, s->nclients, t0);
        /* planned resumes, and stops that need one */
        for (int i = 0; i < s->nclients; i++) {
            if (ps[i].dead) continue;
            if (ps[i].stopped && ps[i].resume_at == 0) {
                /* stopped itself at a point: its pause fault says how long */
                for (int k = 0; k < nf; k++) {
                    const struct scn_fault *f = &s->faults[k];
                    if (!done[k] && f->point != SCN_POINT_NONE && f->kind == SCN_FAULT_PAUSE &&
                        strcmp(f->node, s->clients[i].name) == 0) {
                        done[k] = 1;
                        ps[i].resume_at = f->dur_ns ? ps[i].stopped_at + (int64_t)((double)f->dur_ns * scale) : -1;
                        break;
                    }
                }
                if (ps[i].resume_at == 0) ps[i].resume_at = -1;
            }
            if (ps[i].stopped && ps[i].resume_at > 0 && t >= ps[i].resume_at) resume(&ps[i], i, t, scale, &l);
        }
        /* faults due by time */
        for (int k = 0; k < nf; k++) {
            const struct scn_fault *f = &s->faults[k];
            if (done[k] || f->point != SCN_POINT_NONE || t < (int64_t)((double)f->at_ns * scale)) continue;
            done[k] = 1;
            int i = 0;
            while (i < s->nclients && strcmp(s->clients[i].name, f->node) != 0) i++;
            if (i == s->nclients || ps[i].dead) continue;
            if (f->kind == SCN_FAULT_PAUSE && !ps[i].stopped) {
                kill(ps[i].pid, SIGSTOP);
                int st;
                waitpid(ps[i].pid, &st, WUNTRACED); /* a real stop, confirmed */
                int64_t ts = now_ns() - t0;
                ps[i].stopped = 1;
                ps[i].stopped_at = ts;
                ps[i].resume_at = f->dur_ns ? ts + (int64_t)((double)f->dur_ns * scale) : -1;
                driver_event(&l, ts, TRACE_PAUSE, i, f->dur_ns);
            } else if (f->kind == SCN_FAULT_RESUME && ps[i].stopped) {
                resume(&ps[i], i, t, scale, &l);
            } else if (f->kind == SCN_FAULT_CRASH) {
                kill(ps[i].pid, SIGKILL);
                waitpid(ps[i].pid, NULL, 0);
                redis_srv_guard_forget(ps[i].pid);
                ps[i].dead = 1;
                int64_t tc = now_ns() - t0;
                driver_event(&l, tc, TRACE_CRASH, i, 0);
                observe_hold(srv, s, &l, tc);
            }
        }
        /* wait for an event, at most 1 ms */
        struct pollfd pf = {pfd[0], POLLIN, 0};
        poll(&pf, 1, 1);
    }
    /* The end: every process still there is killed (its program had not
     * finished by the scenario's duration), and what it wrote is read. */
    for (int i = 0; i < s->nclients; i++)
        if (ps[i].pid > 0 && !ps[i].dead) {
            kill(ps[i].pid, SIGKILL);
            waitpid(ps[i].pid, NULL, 0);
            redis_srv_guard_forget(ps[i].pid);
        }
    fcntl(pfd[0], F_SETFL, 0);
    drain(pfd[0], &l);
    close(pfd[0]);
    free(done);
    free(ps);
    if (rc) {
        free(l.v);
        return rc;
    }
    /* The recording, in scenario time. */
    qsort(l.v, l.n, sizeof *l.v, rec_cmp);
    struct trace_event ev;
    memset(&ev, 0, sizeof ev);
    ev.node = ev.peer = TRACE_NO_NODE;
    ev.kind = TRACE_RUN_START;
    ev.a = (int64_t)s->seed;
    ev.b = s->duration_ns;
    trace_append(out, &ev);
    for (size_t i = 0; i < sim->len; i++)
        if (sim->ev[i].kind == TRACE_RESOURCE_INIT) {
            ev = sim->ev[i];
            ev.t = 0;
            trace_append(out, &ev);
            break;
        }
    char note[300];
    snprintf(note, sizeof note,
             "recorded against redis-server on 127.0.0.1:%d, one process per client; time scale %g: t_ns is real "
             "elapsed time / %g",
             srv->port, scale, scale);
    memset(&ev, 0, sizeof ev);
    ev.kind = TRACE_SRV_NOTE;
    ev.node = srv_node;
    ev.peer = TRACE_NO_NODE;
    ev.text = trace_intern(out, note, strlen(note));
    trace_append(out, &ev);
    /* Grants are numbered in the order the clients learnt them; the server's
     * expiry is PX's promise (grant or PEXPIRE time + TTL), not observed. */
    uint32_t grants = 0;
    uint32_t *grant = calloc((size_t)sim->nnodes, sizeof *grant);
    uint64_t *token = calloc((size_t)sim->nnodes, sizeof *token);
    int *in_cs = calloc((size_t)sim->nnodes, sizeof *in_cs);
    if (!grant || !token || !in_cs) rc = LSIM_ENOMEM;
    int owner = -1;
    sim_ns expiry = 0;
    sim_ns endt = s->duration_ns;
    for (size_t i = 0; i < l.n && rc == 0; i++) {
        const struct rec *r = &l.v[i];
        sim_ns t = (sim_ns)((double)r->t / scale);
        if (t > endt) break;
        if (owner >= 0 && expiry && expiry <= t) {
            append_expire(out, expiry, srv_node, owner);
            owner = -1;
        }
        if (r->kind == REC_OBSERVED_HOLD) {
            /* Redis says r->a holds the lock, which the recording had not
             * seen granted: its grant, as the server made it, now. */
            if (owner != r->a) {
                memset(&ev, 0, sizeof ev);
                ev.t = t;
                ev.kind = TRACE_SRV_GRANT;
                ev.node = srv_node;
                ev.peer = (int32_t)r->a;
                ev.a = (int64_t)((double)r->b / scale);
                trace_append(out, &ev);
                owner = (int)r->a;
                expiry = ev.a ? t + ev.a : 0;
            }
            continue;
        }
        memset(&ev, 0, sizeof ev);
        ev.t = t;
        ev.kind = (uint16_t)r->kind;
        ev.node = r->node;
        ev.peer = r->peer;
        ev.token = r->token;
        ev.a = r->a;
        ev.b = r->b;
        int c = (r->kind == TRACE_READ || r->kind == TRACE_WRITE) ? r->peer : r->node;
        switch (r->kind) {
        case TRACE_ACQUIRED:
            grant[c] = ++grants;
            token[c] = r->token;
            in_cs[c] = 1;
            ev.grant = grant[c];
            break;
        case TRACE_READ:
        case TRACE_WRITE:
        case TRACE_WRITE_SKIPPED:
            ev.grant = grant[c];
            break;
        case TRACE_CS_EXIT:
            ev.grant = grant[c];
            in_cs[c] = 0;
            grant[c] = 0;
            break;
        case TRACE_SRV_GRANT:
        case TRACE_SRV_RENEW:
            owner = r->peer;
            expiry = r->a ? t + r->a : 0;
            break;
        case TRACE_SRV_DELETE:
            owner = -1;
            break;
        default:
            break;
        }
        trace_append(out, &ev);
        if (r->kind == TRACE_CRASH && in_cs[c]) { /* a crashed client leaves its critical section */
            memset(&ev, 0, sizeof ev);
            ev.t = t;
            ev.kind = TRACE_CS_EXIT;
            ev.node = c;
            ev.peer = TRACE_NO_NODE;
            ev.token = token[c];
            ev.grant = grant[c];
            ev.a = TRACE_EXIT_CRASH;
            trace_append(out, &ev);
            in_cs[c] = 0;
            grant[c] = 0;
        }
    }
    if (rc == 0 && owner >= 0 && expiry && expiry <= endt) append_expire(out, expiry, srv_node, owner);
    memset(&ev, 0, sizeof ev);
    ev.t = endt;
    ev.kind = TRACE_RUN_END;
    ev.node = ev.peer = TRACE_NO_NODE;
    ev.a = (int64_t)out->len;
    if (rc == 0) trace_append(out, &ev);
    free(grant);
    free(token);
    free(in_cs);
    free(l.v);
    if (rc == 0 && out->oom) rc = LSIM_ENOMEM;
    return rc;
}
