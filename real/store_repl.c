/* The redis-replicated backend's store (real/real_int.h, struct real_ops):
 * the scenario's S1 as a primary redis-server and S2..SN as its replicas
 * (asynchronous replication, as Redis does it), the resource in one more
 * redis-server; lease and fenced-lease clients as the single-Redis backend
 * runs them, which ask the next server when theirs is down or a replica
 * (sim/algo/kv_client.c's timeout and redirect); failover is an operator's
 * REPLICAOF NO ONE on the promoted replica. */
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

#include "error.h"
#include "redis_lua.h"
#include "redis_nodes.h"
#include "resp.h"

/* A client's connections to the lock servers, in its own process. */
struct rp_client {
    int nsrv;                            /* lock servers; the resource's is the next node */
    struct resp_conn c[REDIS_NODES_MAX]; /* fd -1 = not connected */
    int target;                          /* the server it asks (the primary, as far as it knows) */
};

static void drop(struct rp_client *o, int i) {
    if (o->c[i].fd >= 0) resp_close(&o->c[i]);
    o->c[i].fd = -1;
}

/* One lock command to the server the client follows; a down server, a
 * broken connection or a replica's READONLY refusal sends it to the next
 * one, each at most once (kv_client.c: a timed-out request goes to the
 * next server; a replica redirects). 0 with the reply in *r and the server
 * in *at, or -1 when no server took it. during: the acquire's point. */
static int lock_cmd(struct client *cl, int argc, const char *const *argv, struct resp_reply *r, int *at, int during) {
    struct rp_client *o = cl->own;
    const struct redis_nodes *nd = cl->server->nodes;
    for (int tries = 0; tries < o->nsrv; tries++) {
        int i = o->target;
        struct pollfd idle = {o->c[i].fd, POLLIN, 0}; /* closed by a crashed server since */
        if (o->c[i].fd >= 0 && poll(&idle, 1, 0) > 0) drop(o, i);
        if (o->c[i].fd < 0 && resp_connect(&o->c[i], nd->port[i]) != 0) o->c[i].fd = -1;
        if (o->c[i].fd >= 0) {
            real_hop(cl);
            if (resp_send(&o->c[i], argc, argv) == 0) {
                if (during) real_point(cl, SCN_POINT_DURING_ACQUIRE);
                int ok = resp_recv(&o->c[i], r) == 0;
                real_hop(cl);
                if (ok && !(r->type == RESP_ERROR && strncmp(r->str, "READONLY", 8) == 0)) {
                    if (r->type == RESP_ERROR) _exit(4); /* not Redis's answer to our commands */
                    *at = i;
                    return 0;
                }
                if (!ok) drop(o, i);
            } else {
                drop(o, i);
            }
        }
        o->target = (i + 1) % o->nsrv;
    }
    return -1;
}

static int try_acquire(struct client *cl) {
    const struct real_cfg *g = cl->cfg;
    char ttl[32];
    snprintf(cl->value, sizeof cl->value, "%s#%d", cl->s->clients[cl->idx].name, ++cl->acquires);
    long long ttl_ms = (long long)((double)g->ttl_ns * cl->scale / 1e6 + 0.5);
    snprintf(ttl, sizeof ttl, "%lld", ttl_ms < 1 ? 1 : ttl_ms);
    const char *set[] = {"SET", "lock", cl->value, "NX", "PX", ttl};
    const char *fenced[] = {"EVAL", LUA_FENCED_ACQUIRE, "2", "lock", "fence:counter", cl->value, ttl};
    struct resp_reply r;
    int at, fence = g->algo == RA_FENCED;
    cl->token = 0;
    if (lock_cmd(cl, fence ? 7 : 6, fence ? fenced : set, &r, &at, 1) != 0) return 0; /* no server answered */
    int node = cl->srv + at;
    if (!(fence ? r.type == RESP_INT : r.type == RESP_STATUS)) {
        real_emit(cl, TRACE_SRV_DENY, node, cl->idx, 0, TRACE_NO_NODE, 0);
        return 0;
    }
    cl->token = fence ? (uint64_t)r.integer : 0;
    real_emit(cl, TRACE_SRV_GRANT, node, cl->idx, cl->token, g->ttl_ns, 0);
    if (!g->wait_replicas) return 1;
    /* WAIT N T on the same connection (research pitfall 3): fewer replicas
     * than asked is a no to the client; the key stays on the primary. */
    struct rp_client *o = cl->own;
    char want[16], ms[32];
    snprintf(want, sizeof want, "%d", g->wait_replicas);
    snprintf(ms, sizeof ms, "%lld", (long long)((double)g->wait_timeout_ns * cl->scale / 1e6) + 1);
    const char *wait[] = {"WAIT", want, ms};
    if (resp_send(&o->c[at], 3, wait) != 0 || resp_recv(&o->c[at], &r) != 0) {
        drop(o, at);
        return 0;
    }
    real_hop(cl);
    return r.type == RESP_INT && r.integer >= g->wait_replicas;
}

static void release(struct client *cl) {
    struct resp_reply r;
    int at;
    if (cl->cfg->release_del) {
        const char *a[] = {"EVAL", LUA_DEL, "1", "lock"};
        if (lock_cmd(cl, 4, a, &r, &at, 0) == 0 && r.type == RESP_BULK) {
            int owner = real_owner_of(cl->s, r.str);
            real_emit(cl, TRACE_SRV_DELETE, cl->srv + at, cl->idx, 0, owner, owner != cl->idx);
        }
        return;
    }
    const char *a[] = {"EVAL", LUA_CAD, "1", "lock", cl->value};
    if (lock_cmd(cl, 5, a, &r, &at, 0) != 0) return;
    if (r.type == RESP_INT && r.integer == 1) real_emit(cl, TRACE_SRV_DELETE, cl->srv + at, cl->idx, 0, cl->idx, 0);
    else real_emit(cl, TRACE_SRV_KEEP, cl->srv + at, cl->idx, 0, -1, 0);
}


static int connect_client(struct client *cl) {
    struct rp_client *o = calloc(1, sizeof *o);
    if (!o) return -1;
    cl->own = o;
    const struct redis_nodes *nd = cl->server->nodes;
    o->nsrv = nd->n - 1;
    for (int i = 0; i < REDIS_NODES_MAX; i++) o->c[i].fd = -1;
    return resp_connect(&cl->c, nd->port[o->nsrv]);
}

static void disconnect_client(struct client *cl) {
    struct rp_client *o = cl->own;
    if (o)
        for (int i = 0; i < o->nsrv; i++) drop(o, i);
    resp_close(&cl->c);
    free(o);
    cl->own = NULL;
}

static int command(int port, struct resp_reply *r, int argc, const char *const *argv) {
    struct resp_conn c;
    if (resp_connect(&c, port) != 0) return -1;
    int rc = resp_command(&c, r, argc, argv);
    resp_close(&c);
    return rc == 0 && r->type != RESP_ERROR ? 0 : -1;
}

/* SIGSTOP the replicas of primary p and close their links on it (research
 * section 4, "cutlink"): what the primary writes from now on stays on it. A
 * stop alone is not lag: the kernel keeps the bytes and a resumed replica
 * applies them (pitfall 4). */
static void cut_replicas(struct redis_nodes *nd, int nsrv, int p) {
    for (int i = 0; i < nsrv; i++)
        if (i != p && nd->pid[i] > 0 && !nd->stopped[i]) {
            kill(nd->pid[i], SIGSTOP);
            waitpid(nd->pid[i], NULL, WUNTRACED);
            nd->stopped[i] = 1;
        }
    struct resp_reply r;
    const char *kill_repl[] = {"CLIENT", "KILL", "TYPE", "replica"};
    command(nd->port[p], &r, 4, kill_repl);
}

/* Every run starts afresh: S1 a primary, the others its replicas, the
 * replication link settled (a write WAITed for by every replica, pitfall
 * 5), the fence counter replicated; with repl-lag, the replicas then cut
 * off (real_repl_supported has checked that the simulated replicas receive
 * nothing during the run). */
static int setup_store(const struct redis_srv *srv, const struct scenario *s, const struct real_cfg *g) {
    struct redis_srv *w = (struct redis_srv *)srv; /* the table is the store's */
    struct redis_nodes *nd = srv->nodes;
    int n = s->nservers;
    if (nd->pid[n] <= 0 && redis_nodes_start(w, n, NULL) != 0) return -1; /* the resource's, kept */
    for (int i = 0; i < n; i++) redis_nodes_kill(w, i);
    const char *primary[] = {"--repl-diskless-sync-delay", "0", NULL};
    if (redis_nodes_start(w, 0, primary) != 0) return -1;
    char port0[16];
    snprintf(port0, sizeof port0, "%d", nd->port[0]);
    const char *replica[] = {"--replicaof", "127.0.0.1", port0, NULL};
    for (int i = 1; i < n; i++)
        if (redis_nodes_start(w, i, replica) != 0) return -1;
    char stock[32], first[32], want[16];
    snprintf(stock, sizeof stock, "%lld", (long long)s->stock);
    snprintf(first, sizeof first, "%lld", g->first_token - 1);
    snprintf(want, sizeof want, "%d", n - 1);
    struct resp_reply r;
    const char *flush[] = {"FLUSHALL"}, *set[] = {"SET", "stock", stock};
    if (command(nd->port[n], &r, 1, flush) || command(nd->port[n], &r, 3, set)) return -1;
    struct resp_conn c;
    if (resp_connect(&c, nd->port[0]) != 0) return -1;
    const char *counter[] = {"SET", "fence:counter", first}, *waitall[] = {"WAIT", want, "200"};
    /* Two writes in a row acknowledged by every replica: a write taken into
     * a replica's initial sync is acknowledged without any command stream,
     * so only the second shows that the stream flows. */
    int settled = 0;
    for (int k = 0; k < 25 && settled < 2; k++)
        settled = resp_command(&c, &r, 3, counter) == 0 && resp_command(&c, &r, 3, waitall) == 0 &&
                                  r.type == RESP_INT && r.integer == n - 1
                          ? settled + 1
                          : 0;
    resp_close(&c);
    if (settled < 2) return -1;
    if (g->repl_lag_ns) cut_replicas(nd, n, 0);
    return 0;
}

static void rec_at(struct recs *l, int64_t t, int kind, int node, int64_t a) {
    struct rec r = {t, kind, node, TRACE_NO_NODE, 0, 0, a, 0};
    real_recs_add(l, &r);
}

/* A crash is SIGKILL (a crashed primary's replicas, cut off by repl-lag,
 * go on: SIGCONT, their link to it gone); a promotion REPLICAOF NO ONE; a
 * kill-replicas the cut above; a pause SIGSTOP (redlock's). */
static void server_fault(const struct redis_srv *srv, const struct real_cfg *g, const struct scn_fault *f, int i,
                         int node, double scale, int64_t t, struct recs *l) {
    struct redis_nodes *nd = srv->nodes;
    int nsrv = nd->n - 1;
    struct resp_reply r;
    switch (f->kind) {
    case SCN_FAULT_CRASH:
        if (nd->pid[i] <= 0) break;
        redis_nodes_kill((struct redis_srv *)srv, i);
        rec_at(l, t, TRACE_CRASH, node, 0);
        for (int k = 0; k < nsrv; k++)
            if (nd->stopped[k] && !nd->resume_at[k]) {
                kill(nd->pid[k], SIGCONT);
                nd->stopped[k] = 0;
            }
        break;
    case SCN_FAULT_PROMOTE: {
        const char *no_one[] = {"REPLICAOF", "NO", "ONE"};
        if (nd->pid[i] > 0 && command(nd->port[i], &r, 3, no_one) == 0)
            rec_at(l, t, TRACE_CONTROL, node, 1); /* LOCK_CONTROL_PROMOTE */
        break;
    }
    case SCN_FAULT_KILL_REPLICAS:
        if (nd->pid[i] <= 0) break;
        cut_replicas(nd, nsrv, i);
        rec_at(l, t, TRACE_CONTROL, node, 2); /* LOCK_CONTROL_KILL_REPLICAS */
        break;
    default: real_store_redlock.server_fault(srv, g, f, i, node, scale, t, l); break;
    }
}

static void server_tick(const struct redis_srv *srv, int first, int64_t t, struct recs *l) {
    real_store_redlock.server_tick(srv, first, t, l);
}

const struct real_ops real_store_repl = {
        .name = "redis-replicated",
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

static int is_client(const struct scenario *s, const char *name) {
    for (int i = 0; i < s->nclients; i++)
        if (strcmp(s->clients[i].name, name) == 0) return 1;
    return 0;
}

int real_repl_supported(const struct scenario *s, const struct trace *sim, const struct real_cfg *c, char *why,
                        size_t n) {
    char line[16], d[64];
    if (c->algo != RA_LEASE && c->algo != RA_FENCED)
        return refuse(why, n, "algorithm %s: the redis-replicated backend runs lease and fenced-lease", s->algo);
    if (s->nservers < 2 || s->nservers + 1 > REDIS_NODES_MAX)
        return refuse(why, n, "the redis-replicated backend runs a primary and 1 to 14 replicas (servers=%s)",
                      s->nservers < 2 ? "1" : "more");
    if (c->repl_lag_ns) {
        /* The model's lag holds a write back on the primary; on loopback a
         * real replica has it in microseconds. Only a run whose replicas
         * receive nothing from the primary is made real: by cutting them
         * off (a replica stopped, its link killed) until the primary dies. */
        for (size_t k = 0; k < sim->len; k++) {
            const struct trace_event *e = &sim->ev[k];
            if (e->kind == TRACE_MSG_RECV && e->node >= 0 && e->peer >= 0 &&
                sim->nodes[e->node].kind == TRACE_NODE_SERVER && sim->nodes[e->peer].kind == TRACE_NODE_SERVER) {
                snprintf(d, sizeof d, "%g s", (double)c->repl_lag_ns / 1e9);
                return refuse(why, n,
                              "repl-lag=%s: the simulated replicas receive the primary's writes that late, a real "
                              "replica on loopback at once; a delay between them needs a proxy, not built",
                              d);
            }
        }
    }
    if (s->latency.min_ns != s->latency.max_ns || s->loss_ppm || s->nlinks || s->nclocks)
        return refuse(why, n, "%s needs a per-link proxy or a clock shim, not built in the redis-replicated backend",
                      "latency that varies, loss, a link or a clock");
    if (s->resource_timeout_ns || s->check_reads || s->guard_owner)
        return refuse(why, n, "the resource's %s is not built in the redis-replicated backend",
                      "timeout, check or guard");
    int64_t rule = real_sim_rule(sim);
    if (rule != TRACE_RULE_PLAIN && rule != TRACE_RULE_TOKENS &&
        !(rule == TRACE_RULE_ALGORITHM && c->algo == RA_FENCED))
        return refuse(why, n, "the resource's rule is '%s': a plain resource and one that checks tokens are built",
                      trace_rule_word(rule));
    for (int k = 0; k < s->nfaults; k++) {
        const struct scn_fault *f = &s->faults[k];
        snprintf(line, sizeof line, "%d", f->pos.line);
        int client = is_client(s, f->node);
        switch (f->kind) {
        case SCN_FAULT_PAUSE:
        case SCN_FAULT_RESUME:
            if (f->point != SCN_POINT_NONE &&
                (!client || strcmp(f->trigger, f->node) != 0 || f->kind == SCN_FAULT_RESUME))
                return refuse(why, n, "line %s: only a client's pause at a point of its own program is built", line);
            break;
        case SCN_FAULT_CRASH:
        case SCN_FAULT_PROMOTE:
        case SCN_FAULT_KILL_REPLICAS:
            if (client && f->kind == SCN_FAULT_CRASH)
                return refuse(why, n, "line %s: a client's crash is not built in the redis-replicated backend", line);
            if (f->point != SCN_POINT_NONE)
                return refuse(why, n, "line %s: a server's fault at a client's point is not built", line);
            break;
        case SCN_FAULT_RESTART:
            return refuse(why, n,
                          "line %s: a restart (of a client, or of a server as primary or replica) is not built in "
                          "the redis-replicated backend",
                          line);
        default:
            return refuse(why, n,
                          "line %s: partitions, links and clock faults need a per-link proxy or a clock shim, not "
                          "built in the redis-replicated backend",
                          line);
        }
    }
    return real_writes_refused(s, "redis-replicated", why, n);
}
