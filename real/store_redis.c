/* The redis backend's store (real/real_int.h, struct real_ops): the lock as
 * the research's Redis demos (docs/reality.md) run it, over RESP to
 * redis-server; the resource is two keys in the same Redis. */
#include "real_int.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "error.h"
#include "redis_lua.h"
#include "resp.h"

/* lease-renew's heartbeat: extend the key only while it holds this client's
 * value (Redisson's watchdog does the same compare-and-pexpire). */
#define LUA_RENEW \
    "if redis.call('GET',KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE',KEYS[1],ARGV[2]) else return 0 end"
/* The resource: stock and version, read together. */
#define LUA_READ "return {tonumber(redis.call('GET',KEYS[1]) or '0'), tonumber(redis.call('GET',KEYS[2]) or '0')}"
#define LUA_WRITE "redis.call('SET',KEYS[1],ARGV[1]) redis.call('INCR',KEYS[2]) return 1"
/* A fenced resource, the scenario's rule (resource fencing=on): a write
 * with no token is refused (3), one lower than the highest accepted is
 * refused (2); equal is let in, as the simulator's resource does. */
#define LUA_FENCED_WRITE \
    "local tok = tonumber(ARGV[2]) if tok == 0 then return 3 end " \
    "local last = tonumber(redis.call('GET',KEYS[3]) or '0') if tok < last then return 2 end " \
    "redis.call('SET',KEYS[3],ARGV[2]) redis.call('SET',KEYS[1],ARGV[1]) redis.call('INCR',KEYS[2]) return 1"

#define emit real_emit
#define point real_point

static int send_req(struct client *cl, int argc, const char *const *argv) {
    real_hop(cl);
    return resp_send(&cl->c, argc, argv);
}

static int recv_reply(struct client *cl, struct resp_reply *r) {
    int rc = resp_recv(&cl->c, r);
    real_hop(cl);
    return rc;
}

/* A command on connection c: the lock's (cl->c) or the resource's. */
static int cmd_on(struct client *cl, struct resp_conn *c, struct resp_reply *r, int argc, const char *const *argv) {
    real_hop(cl);
    if (resp_send(c, argc, argv) != 0 || resp_recv(c, r) != 0) _exit(3);
    real_hop(cl);
    if (r->type == RESP_ERROR) _exit(4);
    return 0;
}

static int cmd(struct client *cl, struct resp_reply *r, int argc, const char *const *argv) {
    return cmd_on(cl, &cl->c, r, argc, argv);
}

/* The resource's connection: its own link through the proxy, else the lock's. */
static struct resp_conn *res_conn(struct client *cl) { return cl->res_port ? &cl->rc : &cl->c; }

#define proxied_connect real_proxied_connect

/* The reply to a lock request sent at sent: through the proxy, given up
 * after the request timeout, as the simulator's client gives up
 * (sim/algo/kv_client.c, T_TIMEOUT): the connection is then opened again
 * on the same link, so a late reply goes to the closed one and is never
 * read (as the simulator ignores it). 1 with the reply in r, 0 timed out. */
static int lock_reply(struct client *cl, struct resp_reply *r, int64_t sent) {
    if (!cl->lock_port) {
        if (recv_reply(cl, r) != 0 || r->type == RESP_ERROR) _exit(3);
        return 1;
    }
    int64_t deadline = sent + real_of(cl, cl->cfg->request_timeout_ns);
    while (!resp_pending(&cl->c)) {
        int64_t left = deadline - now_ns();
        struct pollfd pf = {cl->c.fd, POLLIN, 0};
        if (left <= 0 || poll(&pf, 1, (int)((left + 999999) / 1000000)) < 0) {
            resp_close(&cl->c);
            if (proxied_connect(cl, &cl->c, cl->lock_port) != 0) _exit(3);
            return 0;
        }
        if (pf.revents) break;
    }
    if (resp_recv(&cl->c, r) != 0 || r->type == RESP_ERROR) _exit(3);
    return 1;
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
    case RA_CONSENSUS: /* refused before (refuse.c): another backend's */
    case RA_REDLOCK:
    case RA_ZOOKEEPER:
    case RA_ZK_MULTI: _exit(4);
    }
    int64_t sent = now_ns();
    if (crash_at_send) point(cl, SCN_POINT_DURING_ACQUIRE);
    if (!lock_reply(cl, &r, sent)) return 0; /* timed out: a failed attempt, no answer seen */
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
    case RA_CONSENSUS:
    case RA_REDLOCK:
    case RA_ZOOKEEPER:
    case RA_ZK_MULTI: break;
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

/* A release request and its reply (0: timed out through the proxy). */
static int release_cmd(struct client *cl, struct resp_reply *r, int argc, const char *const *argv) {
    if (send_req(cl, argc, argv) != 0) _exit(3);
    return lock_reply(cl, r, now_ns());
}

static void release(struct client *cl) {
    struct resp_reply r;
    if (cl->cfg->release_del) {
        const char *a[] = {"EVAL", LUA_DEL, "1", "lock"};
        if (!release_cmd(cl, &r, 4, a)) return;
        if (r.type == RESP_BULK) {
            int owner = real_owner_of(cl->s, r.str);
            emit(cl, TRACE_SRV_DELETE, cl->srv, cl->idx, 0, owner, owner != cl->idx);
        }
    } else {
        const char *a[] = {"EVAL", LUA_CAD, "1", "lock", cl->value};
        if (!release_cmd(cl, &r, 5, a)) return;
        if (r.type == RESP_INT && r.integer == 1) emit(cl, TRACE_SRV_DELETE, cl->srv, cl->idx, 0, cl->idx, 0);
        else emit(cl, TRACE_SRV_KEEP, cl->srv, cl->idx, 0, -1, 0);
    }
}

static void read_resource(struct client *cl, int64_t *value, int64_t *version) {
    struct resp_reply r;
    const char *a[] = {"EVAL", LUA_READ, "2", "stock", "stock:version"};
    cmd_on(cl, res_conn(cl), &r, 5, a);
    *value = r.elem[0];
    *version = r.elem[1];
}

static int64_t write_resource(struct client *cl, int64_t value) {
    struct resp_reply r;
    char v[32], tok[32];
    snprintf(v, sizeof v, "%lld", (long long)value);
    snprintf(tok, sizeof tok, "%llu", (unsigned long long)cl->token);
    if (cl->cfg->fenced_resource) {
        const char *a[] = {"EVAL", LUA_FENCED_WRITE, "3", "stock", "stock:version", "fence:last", v, tok};
        cmd_on(cl, res_conn(cl), &r, 8, a);
    } else {
        const char *a[] = {"EVAL", LUA_WRITE, "2", "stock", "stock:version", v};
        cmd_on(cl, res_conn(cl), &r, 6, a);
    }
    return r.integer;
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
    int i = real_owner_of(s, v.str);
    if (i == TRACE_NO_NODE) return;
    struct rec r = {t, REC_OBSERVED_HOLD, i, TRACE_NO_NODE, 0, 0, i, ttl.integer > 0 ? ttl.integer * 1000000LL : 0};
    real_recs_add(l, &r);
}

int real_proxied_connect(struct client *cl, struct resp_conn *c, int port) {
    if (resp_connect(c, port) != 0) return -1;
    int64_t ms = (int64_t)((double)cl->s->duration_ns * cl->scale / 1e6) + RESP_TIMEOUT_MS;
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return 0;
}

/* Through the proxy (proxy.c), a connection per link: the lock's and the resource's. */
static int connect_client(struct client *cl) {
    if (!cl->lock_port) return resp_connect(&cl->c, cl->port);
    return proxied_connect(cl, &cl->c, cl->lock_port) || proxied_connect(cl, &cl->rc, cl->res_port) ? -1 : 0;
}
static void disconnect_client(struct client *cl) {
    resp_close(&cl->c);
    if (cl->res_port) resp_close(&cl->rc);
}

const struct real_ops real_store_redis = {
        .name = "redis",
        .server = "redis-server",
        .start = redis_srv_start,
        .stop = redis_srv_stop,
        .setup = setup_store,
        .connect = connect_client,
        .disconnect = disconnect_client,
        .try_acquire = try_acquire,
        .wait_until = wait_until,
        .release = release,
        .read = read_resource,
        .write = write_resource,
        .observe_hold = observe_hold,
        .skip_lost_release = 0,
};
