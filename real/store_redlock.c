/* The redlock backend's store (real/real_int.h, struct real_ops): the
 * scenario's N lock servers as N redis-servers of locksim's own
 * (real/redis_nodes.h) and the resource in one more; each client process
 * runs Redlock against them as sim/algo/algo_redlock.c does, and the driver
 * crashes (SIGKILL), restarts (empty: persistence off) and pauses
 * (SIGSTOP) a server for real, and moves its wall clock through the clock
 * shim preloaded into it (clockctl.c). */
#include "real_int.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clockshim.h"
#include "error.h"
#include "redis_lua.h"
#include "redis_nodes.h"
#include "resp.h"

/* The Redlock description (Redis documentation, "Distributed Locks with
 * Redis", as sim/algo/algo_redlock.c reads it): SET key value NX PX ttl on
 * every server at once; a majority of OK replies within the request
 * timeout, and validity = TTL - elapsed - drift > 0 (drift = TTL * 1% +
 * 2 ms), make the lock; otherwise unlock everywhere by compare-and-delete.
 * The SET also returns the server's TIME, so the recording puts each
 * server's grant where the server made it, not where the client read it
 * (a client paused between its requests and their replies learns late). */
#define LUA_SET_NX_TIME \
    "if redis.call('SET',KEYS[1],ARGV[1],'NX','PX',ARGV[2]) then return redis.call('TIME') else return false end"

/* A client's connections to the lock servers, in its own process. */
struct rl_client {
    int nsrv;                            /* lock servers (the resource's is the next node) */
    struct resp_conn c[REDIS_NODES_MAX]; /* fd -1 = not connected */
    unsigned unreachable;                /* bit i: a link with loss=100% from this client to server i */
    unsigned held;                       /* servers whose SET said OK in the lock now held */
    int64_t wall_minus_mono;             /* CLOCK_REALTIME - CLOCK_MONOTONIC, ns, at connect */
    unsigned round_ok;                   /* bit i: server i said OK in this attempt's round */
};

/* The lock servers: the simulated run's server nodes (S1..SN). */
static int nservers(const struct trace *sim) {
    int n = 0;
    for (int i = 0; i < sim->nnodes; i++) n += sim->nodes[i].kind == TRACE_NODE_SERVER;
    return n;
}

static void emit_at(struct client *cl, int64_t t, int kind, int node, int64_t a) {
    struct rec r = {t, kind, node, cl->idx, 0, 0, a, 0};
    ssize_t w;
    do w = write(cl->evfd, &r, sizeof r);
    while (w < 0 && errno == EINTR);
}

/* Server i's port: its link through the proxy (proxy.c), else its own. */
static int port_of(const struct client *cl, int i) {
    return cl->link_ports ? cl->link_ports[i] : cl->server->nodes->port[i];
}

static int conn_up(struct client *cl, int i) {
    struct rl_client *o = cl->own;
    if (o->c[i].fd >= 0) return 1;
    if (resp_connect(&o->c[i], port_of(cl, i)) == 0) return 1;
    o->c[i].fd = -1;
    return 0;
}

static void drop(struct rl_client *o, int i) {
    if (o->c[i].fd >= 0) resp_close(&o->c[i]);
    o->c[i].fd = -1;
}

/* One round: the command built by make_argv to every server in mask at
 * once, then the replies until all are in or the request timeout has
 * passed (replies that arrived by then are read first: a client paused
 * past its timeout still finds them). on_reply sees each (NULL r: no
 * answer, a down server or a broken connection). */
typedef void (*reply_fn)(struct client *cl, int i, const struct resp_reply *r);
/* Returns the round's length as the simulator plays it: the request
 * timeout when a server did not answer (unreachable, down, late), else one
 * round trip. */
static sim_ns round_trip(struct client *cl, unsigned mask, int argc, const char *const *argv, int during_acquire,
                         reply_fn on_reply) {
    struct rl_client *o = cl->own;
    int64_t deadline = now_ns() + real_of(cl, cl->cfg->request_timeout_ns);
    unsigned pending = 0;
    int silent = (mask & o->unreachable) != 0;
    real_hop(cl); /* the requests leave together, after the network's latency */
    for (int i = 0; i < o->nsrv; i++) {
        if (!(mask & (1u << i)) || (o->unreachable & (1u << i))) continue; /* a lost request is never sent */
        /* An idle connection that reads as ready was closed by its server
         * (crashed since): reconnect first, as client libraries do. */
        struct pollfd idle = {o->c[i].fd, POLLIN, 0};
        if (o->c[i].fd >= 0 && poll(&idle, 1, 0) > 0) drop(o, i);
        if (conn_up(cl, i) && resp_send(&o->c[i], argc, argv) == 0) pending |= 1u << i;
        else {
            drop(o, i);
            silent = 1;
            on_reply(cl, i, NULL);
        }
    }
    if (during_acquire) real_point(cl, SCN_POINT_DURING_ACQUIRE);
    /* the unreachable servers never answer: the round waits out its timeout */
    int wait_all = (mask & o->unreachable) != 0;
    while (pending || wait_all) {
        struct pollfd pf[REDIS_NODES_MAX];
        int idx[REDIS_NODES_MAX], np = 0;
        for (int i = 0; i < o->nsrv; i++)
            if (pending & (1u << i)) {
                pf[np] = (struct pollfd){o->c[i].fd, POLLIN, 0};
                idx[np++] = i;
            }
        int64_t left = deadline - now_ns();
        int k = poll(pf, (nfds_t)np, left > 0 ? (int)((left + 999999) / 1000000) : 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            if (now_ns() < deadline) continue;
            break;
        }
        for (int j = 0; j < np; j++) {
            if (!pf[j].revents) continue;
            int i = idx[j];
            struct resp_reply r;
            pending &= ~(1u << i);
            if (resp_recv(&o->c[i], &r) != 0 || r.type == RESP_ERROR) {
                drop(o, i);
                silent = 1;
                on_reply(cl, i, NULL);
            } else {
                on_reply(cl, i, &r);
            }
        }
    }
    for (int i = 0; i < o->nsrv; i++)
        if (pending & (1u << i)) { /* no answer in time: its reply, if any comes, is stale */
            drop(o, i);
            silent = 1;
            on_reply(cl, i, NULL);
        }
    real_hop(cl);
    return silent ? cl->cfg->request_timeout_ns : 2 * cl->s->latency.min_ns;
}

static void on_set(struct client *cl, int i, const struct resp_reply *r) {
    struct rl_client *o = cl->own;
    if (r && r->type == RESP_ARRAY && r->nelem == 2) {
        /* the server's TIME when it ran the SET: its grant, on our clock
         * (the clock shim's shift of that server taken off: the page is
         * mapped in this process too, a fork of the driver) */
        int64_t wall = r->elem[0] * 1000000000LL + r->elem[1] * 1000LL;
        const struct clockshim_page *page = cl->server->nodes->clock[i];
        if (page) {
            struct clockshim_page c;
            clockshim_read(page, &c);
            wall = clockshim_unshift(&c, wall);
        }
        emit_at(cl, wall - o->wall_minus_mono - cl->t0, TRACE_SRV_GRANT, cl->srv + i, cl->cfg->ttl_ns);
        o->round_ok |= 1u << i;
    } else if (r) {
        real_emit(cl, TRACE_SRV_DENY, cl->srv + i, cl->idx, 0, TRACE_NO_NODE, 0);
    }
}

static void on_unlock(struct client *cl, int i, const struct resp_reply *r) {
    if (!r) return;
    if (r->type == RESP_INT && r->integer == 1) real_emit(cl, TRACE_SRV_DELETE, cl->srv + i, cl->idx, 0, cl->idx, 0);
    else real_emit(cl, TRACE_SRV_KEEP, cl->srv + i, cl->idx, 0, -1, 0);
}

static int count(unsigned m) {
    int k = 0;
    for (; m; m &= m - 1) k++;
    return k;
}

static sim_ns unlock_round(struct client *cl, unsigned mask) {
    const char *a[] = {"EVAL", LUA_CAD, "1", "lock", cl->value};
    return round_trip(cl, mask, 5, a, 0, on_unlock);
}

static int try_acquire(struct client *cl) {
    struct rl_client *o = cl->own;
    const struct real_cfg *g = cl->cfg;
    unsigned all = (1u << o->nsrv) - 1u;
    char ttl[32];
    snprintf(cl->value, sizeof cl->value, "%s#%d", cl->s->clients[cl->idx].name, ++cl->acquires);
    long long ttl_ms = (long long)((double)g->ttl_ns * cl->scale / 1e6 + 0.5);
    snprintf(ttl, sizeof ttl, "%lld", ttl_ms < 1 ? 1 : ttl_ms);
    int64_t started = now_ns(); /* step 1, by the monotonic clock */
    o->round_ok = 0;
    const char *a[] = {"EVAL", LUA_SET_NX_TIME, "1", "lock", cl->value, ttl};
    cl->attempt_ns = round_trip(cl, all, 6, a, 1, on_set); /* step 2 */
    /* step 3, in scenario time */
    sim_ns elapsed = (sim_ns)((double)(now_ns() - started) / cl->scale);
    sim_ns drift = g->ttl_ns / 100 + 2 * SIM_NS_PER_MS;
    int q = g->quorum ? g->quorum : o->nsrv / 2 + 1;
    cl->token = 0;
    if (count(o->round_ok) >= q && (!g->elapsed_check || g->ttl_ns - elapsed - drift > 0)) {
        o->held = o->round_ok;
        return 1;
    }
    cl->attempt_ns += unlock_round(cl, g->release_all ? all : o->round_ok); /* step 4 */
    return 0;
}

static void release(struct client *cl) {
    struct rl_client *o = cl->own;
    unlock_round(cl, cl->cfg->release_all ? (1u << o->nsrv) - 1u : o->held);
    o->held = 0;
}

void real_nodes_wait(struct client *cl, int64_t abs) {
    (void)cl;
    sleep_until(abs);
}

/* The resource lives in the last server: the redis backend's own read and
 * write over cl->c (with a token for fenced-lease; Redlock issues none). */
void real_nodes_read(struct client *cl, int64_t *value, int64_t *version) { real_store_redis.read(cl, value, version); }
int64_t real_nodes_write(struct client *cl, int64_t value) { return real_store_redis.write(cl, value); }

static int node_index(const struct scenario *s, const char *name) {
    for (int i = 0; i < s->nclients; i++)
        if (strcmp(s->clients[i].name, name) == 0) return i;
    return -1;
}

static int connect_client(struct client *cl) {
    struct rl_client *o = calloc(1, sizeof *o);
    if (!o) return -1;
    cl->own = o;
    const struct redis_nodes *nd = cl->server->nodes;
    o->nsrv = nd->n - 1;
    for (int i = 0; i < REDIS_NODES_MAX; i++) o->c[i].fd = -1;
    const char *me = cl->s->clients[cl->idx].name;
    for (int k = 0; k < cl->s->nlinks; k++) { /* loss=100%: the request is never sent (through the proxy too) */
        const struct scn_link *ln = &cl->s->links[k];
        int i;
        if (strcmp(ln->from, me) == 0 && sscanf(ln->to, "S%d", &i) == 1 && i >= 1 && i <= o->nsrv &&
            ln->loss_ppm == 1000000)
            o->unreachable |= 1u << (i - 1);
    }
    for (int i = 0; i < o->nsrv; i++)
        if (!(o->unreachable & (1u << i)) && !conn_up(cl, i)) return -1;
    struct timespec w, m;
    clock_gettime(CLOCK_REALTIME, &w);
    clock_gettime(CLOCK_MONOTONIC, &m);
    o->wall_minus_mono = ((int64_t)w.tv_sec - m.tv_sec) * 1000000000LL + (w.tv_nsec - m.tv_nsec);
    /* the resource: over cl->c, or through the proxy over cl->rc (store_redis.c's res_conn) */
    if (cl->res_port) return real_proxied_connect(cl, &cl->rc, cl->res_port);
    return resp_connect(&cl->c, nd->port[o->nsrv]);
}

static void disconnect_client(struct client *cl) {
    struct rl_client *o = cl->own;
    if (o)
        for (int i = 0; i < o->nsrv; i++) drop(o, i);
    resp_close(cl->res_port ? &cl->rc : &cl->c);
    free(o);
    cl->own = NULL;
}

/* The servers of this run (N lock servers and the resource's), started on
 * the first run; before each run every one is up, running and empty. */
static int setup_store(const struct redis_srv *srv, const struct scenario *s, const struct real_cfg *g) {
    (void)g;
    struct redis_nodes *nd = srv->nodes;
    int n = s->nservers ? s->nservers : 5;
    for (int i = 0; i <= n; i++) {
        if (nd->stopped[i]) kill(nd->pid[i], SIGCONT);
        nd->stopped[i] = 0;
        nd->resume_at[i] = nd->restart_at[i] = 0;
        if (nd->pid[i] <= 0 && redis_nodes_start((struct redis_srv *)srv, i, NULL) != 0) return -1;
    }
    char stock[32];
    snprintf(stock, sizeof stock, "%lld", (long long)s->stock);
    for (int i = 0; i <= n; i++) {
        struct resp_conn c;
        struct resp_reply r;
        if (resp_connect(&c, nd->port[i]) != 0) return -1;
        const char *flush[] = {"FLUSHALL"};
        const char *set[] = {"SET", "stock", stock};
        int rc = resp_command(&c, &r, 1, flush) || (i == n && resp_command(&c, &r, 3, set));
        resp_close(&c);
        if (rc) return -1;
    }
    return 0;
}

static void rec_at(struct recs *l, int64_t t, int kind, int node) {
    struct rec r = {t, kind, node, TRACE_NO_NODE, 0, 0, 0, 0};
    real_recs_add(l, &r);
}

/* A crash is SIGKILL (its keys die with it: persistence off); a restart
 * starts it empty on its port, at once or, with delayed-restart=, that much
 * later (antirez's delayed restart: unavailable until every lock it may
 * have granted has expired); a pause is SIGSTOP until SIGCONT. */
static void server_fault(const struct redis_srv *srv, const struct real_cfg *g, const struct scn_fault *f, int i,
                         int node, double scale, int64_t t, struct recs *l) {
    struct redis_nodes *nd = srv->nodes;
    struct redis_srv *w = (struct redis_srv *)srv; /* the table is the store's, not the caller's */
    switch (f->kind) {
    case SCN_FAULT_CRASH:
        if (nd->pid[i] <= 0) break;
        redis_nodes_kill(w, i);
        rec_at(l, t, TRACE_CRASH, node);
        break;
    case SCN_FAULT_RESTART:
        if (nd->pid[i] > 0) break;
        if (g->delayed_restart_ns) {
            nd->restart_at[i] = t + (int64_t)((double)g->delayed_restart_ns * scale);
            break;
        }
        int64_t began = now_ns();
        if (redis_nodes_start(w, i, NULL) == 0) rec_at(l, t + now_ns() - began, TRACE_RESTART, node); /* it answers */
        break;
    case SCN_FAULT_PAUSE:
        if (nd->pid[i] <= 0 || nd->stopped[i]) break;
        kill(nd->pid[i], SIGSTOP);
        waitpid(nd->pid[i], NULL, WUNTRACED);
        nd->stopped[i] = 1;
        nd->resume_at[i] = f->dur_ns ? t + (int64_t)((double)f->dur_ns * scale) : 0;
        rec_at(l, t, TRACE_PAUSE, node);
        break;
    case SCN_FAULT_RESUME:
        if (!nd->stopped[i]) break;
        kill(nd->pid[i], SIGCONT);
        nd->stopped[i] = 0;
        nd->resume_at[i] = 0;
        rec_at(l, t, TRACE_RESUME, node);
        break;
    default: break;
    }
}

static void server_tick(const struct redis_srv *srv, int first, int64_t t, struct recs *l) {
    struct redis_nodes *nd = srv->nodes;
    for (int i = 0; i < nd->n; i++) {
        if (nd->stopped[i] && nd->resume_at[i] && t >= nd->resume_at[i]) {
            kill(nd->pid[i], SIGCONT);
            nd->stopped[i] = 0;
            nd->resume_at[i] = 0;
            rec_at(l, t, TRACE_RESUME, first + i);
        }
        if (nd->restart_at[i] && t >= nd->restart_at[i]) {
            nd->restart_at[i] = 0;
            if (redis_nodes_start((struct redis_srv *)srv, i, NULL) == 0) rec_at(l, t, TRACE_RESTART, first + i);
        }
    }
}

void real_nodes_no_observe(const struct redis_srv *srv, const struct scenario *s, struct recs *l, int64_t t) {
    (void)srv, (void)s, (void)l, (void)t; /* a client's crash is refused (real_redlock_supported) */
}

const struct real_ops real_store_redlock = {
        .name = "redlock",
        .server = "the redis-servers",
        .start = redis_nodes_open,
        .stop = redis_nodes_close,
        .setup = setup_store,
        .connect = connect_client,
        .disconnect = disconnect_client,
        .try_acquire = try_acquire,
        .wait_until = real_nodes_wait,
        .release = release,
        .read = real_nodes_read,
        .write = real_nodes_write,
        .observe_hold = real_nodes_no_observe,
        .skip_lost_release = 0,
        .server_fault = server_fault,
        .server_tick = server_tick,
};

/* ---- What can be made real ------------------------------------------------ */

static int refuse(char *why, size_t n, const char *fmt, const char *a) {
    snprintf(why, n, fmt, a);
    return LSIM_ENOTREAL;
}

int real_redlock_cfg(const struct scenario *s, struct real_cfg *c, char *why, size_t n) {
    c->algo = RA_REDLOCK;
    c->ttl_ns = 10 * SIM_NS_PER_S;
    c->elapsed_check = 1;
    c->release_all = 1;
    c->request_timeout_ns = 50 * SIM_NS_PER_MS;
    for (int i = 0; i < s->nopts; i++) {
        const char *k = s->opts[i].key, *v = s->opts[i].val;
        sim_ns d;
        if (strcmp(k, "ttl") == 0 || strcmp(k, "request-timeout") == 0 || strcmp(k, "delayed-restart") == 0) {
            if (scn_parse_duration(v, &d) != 0 || d < 0)
                return refuse(why, n, "lock option %s is not a duration the redlock backend can set", k);
            if (k[0] == 't') c->ttl_ns = d;
            else if (k[0] == 'r') c->request_timeout_ns = d;
            else c->delayed_restart_ns = d;
        } else if (strcmp(k, "quorum") == 0) {
            c->quorum = atoi(v);
        } else if (strcmp(k, "elapsed-check") == 0 || strcmp(k, "release-all") == 0) {
            int on = strcmp(v, "on") == 0 || strcmp(v, "yes") == 0 || strcmp(v, "true") == 0;
            if (k[0] == 'e') c->elapsed_check = on;
            else c->release_all = on;
        } else if ((strcmp(k, "persistence") == 0 && strcmp(v, "none") == 0) ||
                   (strcmp(k, "deadline") == 0 && strcmp(v, "redis") == 0) || strcmp(k, "expiry-clock") == 0 ||
                   strcmp(k, "elapsed-clock") == 0) {
            /* Redis's own behaviour (expiry by its wall clock); a monotonic
             * expiry with a clock fault is refused (real_redlock_supported) */
        } else {
            char kv[200];
            snprintf(kv, sizeof kv, "%s=%s", k, v);
            return refuse(why, n, "lock option %s is not built in the redlock backend", kv);
        }
    }
    return 0;
}

int real_redlock_needs_proxy(const struct scenario *s) {
    if (!real_needs_proxy(s)) return 0;
    if (s->latency.min_ns != s->latency.max_ns || s->loss_ppm) return 1;
    for (int k = 0; k < s->nfaults; k++)
        if (s->faults[k].kind == SCN_FAULT_PARTITION || s->faults[k].kind == SCN_FAULT_HEAL ||
            s->faults[k].kind == SCN_FAULT_LINK)
            return 1;
    for (int k = 0; k < s->nlinks; k++) { /* a client's request to a server never sent: no proxy for that */
        const struct scn_link *ln = &s->links[k];
        int i;
        if (node_index(s, ln->from) < 0 || sscanf(ln->to, "S%d", &i) != 1 || ln->loss_ppm != 1000000 ||
            ln->lat.min_ns >= 0)
            return 1;
    }
    return 0;
}

int real_redlock_supported(const struct scenario *s, const struct trace *sim, char *why, size_t n) {
    int ns = nservers(sim);
    char line[16];
    if (ns + 1 > REDIS_NODES_MAX || s->nclients > REDIS_SRV_MAX_CHILDREN - REDIS_NODES_MAX)
        return refuse(why, n, "more servers or clients than the redlock backend runs (%s)", "15 and 48");
    /* latency that varies, loss, links and partitions: the loopback proxy
     * (proxy.c) between each client and each server, the resource's too */
    if (s->resource_timeout_ns || s->check_reads || s->guard_owner)
        return refuse(why, n, "%s is not built in the redlock backend", "the resource's timeout, check or guard");
    /* A server's clock: the clock shim in its redis-server (redis_nodes.h),
     * which moves the wall clock Redis 7.0 expires keys by. */
    int clocked = s->nclocks > 0;
    for (int k = 0; k < s->nfaults; k++) {
        enum scn_fault_kind kind = s->faults[k].kind;
        clocked |= kind == SCN_FAULT_CLOCK_STEP || kind == SCN_FAULT_CLOCK_DRIFT || kind == SCN_FAULT_CLOCK_SLEW;
    }
    for (int i = 0; clocked && i < s->nopts; i++)
        if (strcmp(s->opts[i].key, "expiry-clock") == 0 && strcmp(s->opts[i].val, "monotonic") == 0)
            return refuse(why, n,
                          "expiry-clock=monotonic with a clock fault: Redis 7.0 expires keys by its wall clock "
                          "(mstime, from gettimeofday), which the clock shim moves; no Redis 7.0 server expires "
                          "by a clock that a wall-clock fault leaves alone, so the fix (antirez's, %s) cannot "
                          "be made real here",
                          "\"Is Redlock safe?\", 2016");
    if (real_clock_lines_refused(s, sim, why, n)) return LSIM_ENOTREAL;
    if (real_sim_rule(sim) != TRACE_RULE_PLAIN)
        return refuse(why, n, "the resource's rule is '%s': Redlock issues no token; a plain resource is built",
                      trace_rule_word(real_sim_rule(sim)));
    for (int k = 0; k < s->nfaults; k++) {
        const struct scn_fault *f = &s->faults[k];
        snprintf(line, sizeof line, "%d", f->pos.line);
        int client = node_index(s, f->node) >= 0;
        switch (f->kind) {
        case SCN_FAULT_CLOCK_STEP:
        case SCN_FAULT_CLOCK_DRIFT:
        case SCN_FAULT_CLOCK_SLEW:
            if (real_clock_fault_refused(s, sim, f, why, n)) return LSIM_ENOTREAL;
            break;
        case SCN_FAULT_PAUSE:
        case SCN_FAULT_RESUME:
            if (f->point != SCN_POINT_NONE &&
                (!client || strcmp(f->trigger, f->node) != 0 || f->kind == SCN_FAULT_RESUME))
                return refuse(why, n,
                              "line %s: only a client's pause at a point of its own program is built (the "
                              "driver cannot see another process's point in time)",
                              line);
            break;
        case SCN_FAULT_CRASH:
        case SCN_FAULT_RESTART:
            if (client)
                return refuse(why, n,
                              "line %s: a Redlock client's crash or restart: which servers granted it before it "
                              "died is not recorded, not built",
                              line);
            if (f->point != SCN_POINT_NONE)
                return refuse(why, n, "line %s: a server's crash at a client's point is not built", line);
            break;
        case SCN_FAULT_PARTITION:
        case SCN_FAULT_HEAL:
            if (f->point != SCN_POINT_NONE)
                return refuse(why, n,
                              "line %s: a partition or heal at a client's point: the driver, which cuts the "
                              "proxy's links, cannot see a point of another process in time; not built",
                              line);
            break;
        case SCN_FAULT_LINK: break; /* the proxy replays each message's simulated delay */
        default:
            return refuse(why, n,
                          "line %s: a promotion or a replication cut needs replicas; the redlock backend's "
                          "servers are independent, not built",
                          line);
        }
    }
    return real_writes_refused(s, "redlock", why, n);
}
