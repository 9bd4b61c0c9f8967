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
/* renew-expired=on (sim/algo/kv.c, renews_lapsed): a grant also keeps its
 * value in lock:last, which the next grant overwrites; a renewal finding
 * the key gone while lock:last still holds its value (it expired, and
 * nobody leased it since) sets it again (2), as Azure Blob's lease renewal
 * does. The acquire: SET NX PX, lock:last, and with tokens=on the token. */
#define LUA_RENEW_LAPSED_ACQUIRE \
    "if not redis.call('SET',KEYS[1],ARGV[1],'NX','PX',ARGV[2]) then return false end " \
    "redis.call('SET',KEYS[3],ARGV[1]) " \
    "if ARGV[3] == '1' then return redis.call('INCR',KEYS[2]) end return redis.status_reply('OK')"
#define LUA_RENEW_LAPSED \
    "if redis.call('GET',KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE',KEYS[1],ARGV[2]) end " \
    "if redis.call('EXISTS',KEYS[1]) == 0 and redis.call('GET',KEYS[2]) == ARGV[1] then " \
    "redis.call('SET',KEYS[1],ARGV[1],'PX',ARGV[2]) return 2 end return 0"
/* The resource: stock, version and the highest token it has seen (what a
 * read reports, engine_resource.c's max_token), read together. With reads
 * checked (ARGV[2] = 1: resource check=reads+writes, Chubby's sequencer
 * check) a read with no token is refused (3), one lower than the highest
 * seen is refused (2), and one served raises the highest; the highest
 * reported is the one before this read, as the simulator's resource does. */
#define LUA_READ \
    "local max = tonumber(redis.call('GET',KEYS[3]) or '0') local tok = tonumber(ARGV[1]) " \
    "if ARGV[2] == '1' then if tok == 0 then return {0,0,max,3} end if tok < max then return {0,0,max,2} end " \
    "if tok > max then redis.call('SET',KEYS[3],ARGV[1]) end end " \
    "return {tonumber(redis.call('GET',KEYS[1]) or '0'), tonumber(redis.call('GET',KEYS[2]) or '0'), max, 0}"
/* A write, atomic in Redis as the simulator's resource decides one
 * (engine_resource.c, algo_fenced_lease.c). KEYS: stock, version, the
 * highest token seen (fence:last), the highest a write was accepted with
 * (fence:high), the last accepted write's (fence:stored), the lock. ARGV:
 * the value, the token, reads checked (1/0), the rule: p plain (none), t the
 * scenario's fencing=on (a write with no token refused (3), one lower than
 * the highest seen refused (2); equal is let in), or fenced-lease's compare=
 * at the resource: < <= != first (against the highest accepted, the last
 * accepted); and with resource guard=owner the writer's lock value: the
 * write is refused (7, not the owner) unless the lock holds it, first of
 * all, as the simulator's guard_op checks the lock service's holder. */
#define LUA_WRITE \
    "if ARGV[5] ~= '' and redis.call('GET',KEYS[6]) ~= ARGV[5] then return 7 end " \
    "local tok = tonumber(ARGV[2]) local max = tonumber(redis.call('GET',KEYS[3]) or '0') " \
    "local high = tonumber(redis.call('GET',KEYS[4]) or '0') local last = tonumber(redis.call('GET',KEYS[5]) or '0') " \
    "local rule = ARGV[4] " \
    "if ARGV[3] == '1' then if tok == 0 then return 3 end if tok < max then return 2 end end " \
    "if rule ~= 'p' and tok == 0 then return 3 end " \
    "if (rule == 't' and tok < max) or (rule == '<' and tok < high) or (rule == '<=' and tok <= high) or " \
    "(rule == '!=' and last ~= 0 and tok == last) or (rule == 'first' and last ~= 0 and tok ~= last) then return 2 " \
    "end " \
    "redis.call('SET',KEYS[1],ARGV[1]) redis.call('INCR',KEYS[2]) redis.call('SET',KEYS[5],ARGV[2]) " \
    "if tok > high then redis.call('SET',KEYS[4],ARGV[2]) end " \
    "if tok > max then redis.call('SET',KEYS[3],ARGV[2]) end return 1"

/* takeover=on's acquire (sim/algo/kv.c, KV_SET_NX): a key held by another
 * client (its value's NAME#k names another NAME) is taken over at once; then
 * SET NX PX and the next count of the store's counter. The reply: false
 * refused, else "TOKEN" or "TOKEN OLDVALUE" when it took the key over. */
#define LUA_TAKEOVER_ACQUIRE \
    "local old = redis.call('GET',KEYS[1]) local took = '' " \
    "if old and string.match(old,'^[^#]*') ~= ARGV[3] then redis.call('DEL',KEYS[1]) took = ' '..old end " \
    "if not redis.call('SET',KEYS[1],ARGV[1],'NX','PX',ARGV[2]) then return false end " \
    "return tostring(redis.call('INCR',KEYS[2]))..took"

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

/* takeover=on's reply (LUA_TAKEOVER_ACQUIRE): the server's takeover
 * recorded before the grant, as the simulator notes it. 1 granted. */
static int took_over(struct client *cl, const struct resp_reply *r) {
    const struct real_cfg *g = cl->cfg;
    if (r->type != RESP_BULK) {
        emit(cl, TRACE_SRV_DENY, cl->srv, cl->idx, 0, TRACE_NO_NODE, 0);
        return 0;
    }
    char *old;
    long long tok = strtoll(r->str, &old, 10);
    if (*old == ' ') {
        int owner = real_owner_of(cl->s, old + 1);
        emit(cl, REC_TAKEOVER, cl->srv, TRACE_NO_NODE, 0, owner, tok - 1);
    }
    cl->token = g->algo == RA_FENCED ? (uint64_t)tok : 0;
    emit(cl, TRACE_SRV_GRANT, cl->srv, cl->idx, cl->token, g->ttl_ns, 0);
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
    if (g->takeover) { /* lease, fenced-lease (refuse.c) */
        const char *a[] = {"EVAL", LUA_TAKEOVER_ACQUIRE,        "2", "lock", "fence:counter", cl->value,
                           ttl,    cl->s->clients[cl->idx].name};
        if (send_req(cl, 8, a) != 0) _exit(3);
        crash_at_send = 1;
    }
    switch (g->takeover ? RA_CONSENSUS : g->algo) {
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
        const char *lapsed[] = {"EVAL", LUA_RENEW_LAPSED_ACQUIRE, "3", "lock", "fence:counter", "lock:last", cl->value,
                                ttl,    g->tokens ? "1" : "0"};
        int plain = g->algo == RA_RENEW && !g->tokens;
        if (g->renew_expired) {
            if (send_req(cl, 9, lapsed) != 0) _exit(3);
        } else if (send_req(cl, plain ? 6 : 7, plain ? set : a) != 0) _exit(3);
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
    case RA_CONSENSUS: /* sent above (takeover=on), or refused before (refuse.c): another backend's */
        if (g->takeover) break;
        _exit(4);
    case RA_REDLOCK:
    case RA_ZOOKEEPER:
    case RA_ZK_MULTI: _exit(4);
    }
    int64_t sent = now_ns();
    if (crash_at_send) point(cl, SCN_POINT_DURING_ACQUIRE);
    if (!lock_reply(cl, &r, sent)) return 0; /* timed out: a failed attempt, no answer seen */
    int got = 0;
    cl->token = 0;
    if (g->takeover) return took_over(cl, &r);
    switch (g->algo) {
    case RA_LEASE:
        got = r.type == RESP_STATUS;
        if (got) emit(cl, TRACE_SRV_GRANT, cl->srv, cl->idx, 0, g->ttl_ns, 0);
        /* uncertainty=: the lease counted from when it asked, less the bound
         * (sim/algo/kv_client.c, stasis_arm) */
        if (got && g->uncertainty_ns) cl->stasis_at = sent + real_of(cl, g->ttl_ns - g->uncertainty_ns);
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
    const char *lapsed[] = {"EVAL", LUA_RENEW_LAPSED, "2", "lock", "lock:last", cl->value, ttl};
    if (g->renew_expired) cmd(cl, &r, 7, lapsed);
    else cmd(cl, &r, 6, a);
    if (r.type == RESP_INT && r.integer == 2) emit(cl, REC_RENEW_LAPSED, cl->srv, TRACE_NO_NODE, 0, cl->idx, 0);
    if (r.type == RESP_INT && (r.integer == 1 || r.integer == 2)) {
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
    if (cl->stasis_at && cl->stasis_at < abs) { /* uncertainty=: it stops acting on its lease then */
        sleep_until(cl->stasis_at);
        real_stasis(cl);
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
    if (cl->cfg->release_get) {
        /* get-then-del: GET, compare in the client, then DEL, two round
         * trips (sim/algo/kv_client.c, PHASE_RELEASE_GET): the key may
         * expire and be granted to another client in between, and the DEL
         * then removes that client's lock. Not ours (or gone): no DEL. */
        const char *get[] = {"GET", "lock"};
        if (!release_cmd(cl, &r, 2, get)) return;
        if (r.type != RESP_BULK || strcmp(r.str, cl->value) != 0) return;
    }
    if (cl->cfg->release_del || cl->cfg->release_get) {
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
    char tok[32];
    snprintf(tok, sizeof tok, "%llu", (unsigned long long)cl->token);
    const char *a[] = {"EVAL",          LUA_READ,     "3", "stock",
                       "stock:version", "fence:last", tok, cl->cfg->check_reads ? "1" : "0"};
    cmd_on(cl, res_conn(cl), &r, 8, a);
    if (r.type != RESP_ARRAY || r.nelem != 4) _exit(4);
    *value = r.elem[0];
    *version = r.elem[1];
    cl->read_token = (uint64_t)r.elem[2];
    cl->read_refused = (int)r.elem[3];
}

/* The resource's rule for a write, LUA_WRITE's ARGV[4], the simulated
 * run's (engine_resource.c): fenced-lease's compare= at the resource unless
 * the client checks (check=client: the resource trusts every write) or the
 * scenario says fencing=off; else the scenario's fencing=on. Stated apart
 * from real.c's fenced_resource, which a guard=owner resource turns off
 * though the simulator applies these rules after the guard. */
static const char *write_rule(const struct client *cl) {
    static const char *const compare[] = {"<", "<=", "!=", "first"};
    const struct real_cfg *g = cl->cfg;
    const struct scenario *s = cl->s;
    if (g->algo == RA_FENCED) return g->check_client || (s->fencing_stated && !s->fencing) ? "p" : compare[g->compare];
    return s->fencing ? "t" : "p";
}

static int64_t write_resource(struct client *cl, int64_t value) {
    struct resp_reply r;
    char v[32], tok[32];
    snprintf(v, sizeof v, "%lld", (long long)value);
    snprintf(tok, sizeof tok, "%llu", (unsigned long long)cl->token);
    const char *a[] = {"EVAL",
                       LUA_WRITE,
                       "6",
                       "stock",
                       "stock:version",
                       "fence:last",
                       "fence:high",
                       "fence:stored",
                       "lock",
                       v,
                       tok,
                       cl->cfg->check_reads ? "1" : "0",
                       write_rule(cl),
                       cl->s->guard_owner ? cl->value : ""};
    cmd_on(cl, res_conn(cl), &r, 14, a);
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
