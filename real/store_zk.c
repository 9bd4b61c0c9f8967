/* The zookeeper backend's store (real/real_int.h, struct real_ops): the
 * lock recipe of the ZooKeeper documentation
 * (zookeeper.apache.org/doc/current/recipes.html#sc_recipes_Locks), as
 * sim/algo/algo_zookeeper.c models it, against a real ZooKeeper 3.8, each
 * client speaking the jute protocol (real/zk.h) over loopback:
 *   a session opened at the first acquire (and again after it expired, as
 *     zk-ruby reopens it), pinged every timeout/3 from the client's own
 *     process (the model's schedule; ClientCnxn pings when idle for half of
 *     readTimeout), so a SIGSTOP of the process stops its pings and the
 *     server expires the session for real, at its tickTime bucket;
 *   acquire: create2 an EPHEMERAL_SEQUENTIAL /lock/lock- (the parent made
 *     first when missing), getChildren: the lowest sequence holds the lock;
 *     else exists() with a watch on the next lower znode, and getChildren
 *     again when it is deleted. The token is the znode's czxid;
 *   release: delete the znode by its path (release-by=path), or only if
 *     its czxid is still ours (release-by=czxid); parent-cleanup=on then
 *     deletes the parent when it is empty (zk-ruby's locker);
 * The resource lives in the same ZooKeeper: the znode /stock (its version
 * is the resource's version). For the zookeeper lock it is a separate
 * service, so it is reached through a session of its own, not the lock's
 * (reopened when it has gone): a plain write is setData; with fencing=on a
 * multi(setData(/fence, token, version read), setData(/stock)) after
 * reading /fence, refused when the token is lower than /fence's (equal is
 * let in, as the simulator's resource does), and retried when /fence moved
 * meanwhile. zookeeper-multi's write is multi(check(lock znode),
 * setData(/stock)) in the lock's own session: refused whole once the
 * session has expired or the znode is gone. */
#define _GNU_SOURCE /* ppoll */
#include "real_int.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "zk.h"
#include "zk_srv.h"

#define emit real_emit
#define LOCK_PARENT "/lock"

/* The client process's ZooKeeper state (one client per process). */
static struct {
    struct zk_conn lock; /* the lock's session */
    struct zk_conn res;  /* the resource's own session */
    int64_t next_ping;   /* real ns of the next ping, 0 = none */
    int64_t ping_every;  /* real ns: the negotiated timeout / 3 */
    int expired;         /* the lock's session is known to be gone */
    int have_node;       /* a znode of ours (path) may exist */
    char path[160];
    int64_t czxid;
    char watched[160]; /* the predecessor whose deletion we wait for */
    int fired;         /* its watch fired */
} z;

static unsigned char out_raw[ZK_PACKET_MAX];

static struct zk_buf out(void) { return (struct zk_buf){out_raw, 0, sizeof out_raw, 0, 0}; }

static int session_ms(const struct client *cl) { return (int)((double)cl->cfg->zk_session_ns * cl->scale / 1e6 + 0.5); }

/* The session is gone (told SESSIONEXPIRED): a holder with on-expired=abort
 * leaves its critical section; one that goes on (the default) is not told
 * anything else. */
static void learn_expired(struct client *cl) {
    if (z.expired) return;
    z.expired = 1;
    z.next_ping = 0;
    zk_conn_close(&z.lock);
    if (cl->holding && cl->cfg->zk_abort) {
        emit(cl, TRACE_CS_EXIT, cl->idx, TRACE_NO_NODE, cl->token, TRACE_EXIT_LOST, 0);
        cl->holding = 0;
        cl->lost = 1;
        z.have_node = 0;
    }
}

/* The connection went: reconnect to the same session, as ClientCnxn does;
 * the server says whether it still lives. A watch set on the old
 * connection is not set again here (ClientCnxn sends setWatches): a waiter
 * is woken instead, and the recipe looks at the children again. */
static void conn_gone(struct client *cl) {
    int64_t id = z.lock.session;
    char pw[16];
    memcpy(pw, z.lock.passwd, 16);
    zk_conn_close(&z.lock);
    if (z.expired) return;
    int rc = zk_conn_open(&z.lock, cl->port, session_ms(cl), id, pw);
    if (rc == ZK_ERR_SESSIONEXPIRED) learn_expired(cl);
    else if (rc != 0) _exit(3);
    else z.fired = 1;
}

/* Serve the lock's session until the reply to want arrives (want != 0), the
 * watched znode is deleted (watch), or until (real ns, 0 = no bound): pings
 * when due, watch events and ping answers read. The reply's err (its body
 * in *body), 1 when the watch fired or until came, or ZK_ERR_CONNLOSS /
 * ZK_ERR_SESSIONEXPIRED when the connection went. */
static int serve(struct client *cl, int32_t want, int watch, int64_t until, struct zk_buf *body) {
    for (;;) {
        int64_t now = now_ns();
        if (z.lock.fd >= 0 && z.next_ping && now >= z.next_ping) {
            if (!zk_send(&z.lock, ZK_OP_PING, NULL)) {
                conn_gone(cl);
                if (want) return z.expired ? ZK_ERR_SESSIONEXPIRED : ZK_ERR_CONNLOSS;
            }
            z.next_ping = now + z.ping_every;
        }
        while (z.lock.fd >= 0) {
            int32_t xid, err;
            struct zk_buf b;
            int st = zk_poll(&z.lock, &xid, &err, &b);
            if (st < 0) {
                conn_gone(cl);
                if (want) return z.expired ? ZK_ERR_SESSIONEXPIRED : ZK_ERR_CONNLOSS;
                break;
            }
            if (st == 0) break;
            if (err == ZK_ERR_SESSIONEXPIRED && (xid == ZK_XID_PING || xid == want)) learn_expired(cl);
            if (xid == ZK_XID_WATCH) {
                int32_t type = zk_get_int(&b);
                char path[160];
                zk_get_int(&b); /* state */
                zk_get_str(&b, path, sizeof path);
                if (type == ZK_EVENT_NODE_DELETED && strcmp(path, z.watched) == 0) z.fired = 1;
                continue;
            }
            if (want && xid == want) {
                *body = b;
                return err;
            }
        }
        if (watch && (z.fired || z.expired || z.lock.fd < 0)) return z.fired ? 1 : ZK_ERR_SESSIONEXPIRED;
        if (want && z.lock.fd < 0) return ZK_ERR_SESSIONEXPIRED;
        now = now_ns();
        if (until && now >= until) return 1;
        int64_t wake = until;
        if (z.lock.fd >= 0 && z.next_ping && (wake == 0 || z.next_ping < wake)) wake = z.next_ping;
        if (z.lock.fd < 0) {
            sleep_until(wake);
            continue;
        }
        struct pollfd p = {z.lock.fd, POLLIN, 0};
        struct timespec ts, *tp = NULL;
        if (wake) {
            int64_t d = wake > now ? wake - now : 0;
            ts = (struct timespec){(time_t)(d / 1000000000), (long)(d % 1000000000)};
            tp = &ts;
        }
        ppoll(&p, 1, tp, NULL);
    }
}

/* A request on the lock's session and its reply, the latency held each
 * way; pings are served while it waits. Bounded by ZK_TIMEOUT_MS. */
static int request(struct client *cl, int32_t op, const struct zk_buf *b, struct zk_buf *reply, enum scn_point at) {
    real_hop(cl);
    if (z.expired || z.lock.fd < 0) return ZK_ERR_SESSIONEXPIRED;
    int32_t x = zk_send(&z.lock, op, b);
    if (at != SCN_POINT_NONE) real_point(cl, at);
    int err;
    if (!x) {
        conn_gone(cl);
        err = z.expired ? ZK_ERR_SESSIONEXPIRED : ZK_ERR_CONNLOSS;
    } else {
        err = serve(cl, x, 0, now_ns() + (int64_t)ZK_TIMEOUT_MS * 1000000, reply);
        if (err == 1) _exit(3); /* no answer within ZK_TIMEOUT_MS */
    }
    real_hop(cl);
    return err;
}

static void new_session(struct client *cl) {
    zk_conn_close(&z.lock);
    if (zk_conn_open(&z.lock, cl->port, session_ms(cl), 0, NULL) != 0) _exit(3);
    z.expired = 0;
    z.ping_every = (int64_t)z.lock.timeout_ms * 1000000 / 3;
    if (z.ping_every <= 0) z.ping_every = 1;
    z.next_ping = now_ns() + z.ping_every;
}

/* The sequence number of a child's name (its last 10 digits). */
static int64_t seq_of(const char *name) {
    size_t n = strlen(name);
    return n >= 10 ? strtoll(name + n - 10, NULL, 10) : -1;
}

static int create_node(struct client *cl, enum scn_point at) {
    for (int round = 0; round < 2; round++) {
        struct zk_buf b = out(), r;
        zk_put_str(&b, LOCK_PARENT "/lock-");
        zk_put_str(&b, cl->value);
        zk_put_open_acl(&b);
        zk_put_int(&b, ZK_EPHEMERAL_SEQUENTIAL);
        int err = request(cl, ZK_OP_CREATE2, &b, &r, round == 0 ? at : SCN_POINT_NONE);
        if (err == ZK_ERR_OK) {
            struct zk_stat st;
            zk_get_str(&r, z.path, sizeof z.path);
            zk_get_stat(&r, &st);
            z.czxid = st.czxid;
            z.have_node = 1;
            return 0;
        }
        if (err != ZK_ERR_NONODE) return err;
        /* the parent is missing: the client's mkdir -p of it, then the create */
        b = out();
        zk_put_str(&b, LOCK_PARENT);
        zk_put_str(&b, "");
        zk_put_open_acl(&b);
        zk_put_int(&b, 0);
        err = request(cl, ZK_OP_CREATE, &b, &r, SCN_POINT_NONE);
        if (err != ZK_ERR_OK && err != ZK_ERR_NODEEXISTS) return err;
    }
    return ZK_ERR_NONODE;
}

/* getChildren of the parent: the path of the next lower znode into pred
 * ("" when ours is the lowest); 0, ZK_ERR_NONODE when ours is gone, or the
 * error. */
static int predecessor(struct client *cl, char *pred, size_t n) {
    struct zk_buf b = out(), r;
    zk_put_str(&b, LOCK_PARENT);
    zk_put_bool(&b, 0);
    int err = request(cl, ZK_OP_GETCHILDREN, &b, &r, SCN_POINT_NONE);
    if (err != ZK_ERR_OK) return err;
    const char *mine = strrchr(z.path, '/') + 1;
    int64_t me = seq_of(mine), best = -1;
    int found = 0;
    pred[0] = 0;
    int32_t count = zk_get_int(&r);
    for (int32_t i = 0; i < count && !r.bad; i++) {
        char name[160];
        zk_get_str(&r, name, sizeof name);
        int64_t q = seq_of(name);
        if (strcmp(name, mine) == 0) found = 1;
        else if (q < me && q > best) {
            char path[sizeof LOCK_PARENT + sizeof name];
            snprintf(path, sizeof path, "%s/%s", LOCK_PARENT, name);
            if (strlen(path) < n) { /* (a path too long for pred is no znode of the recipe's) */
                best = q;
                memcpy(pred, path, strlen(path) + 1);
            }
        }
    }
    return found ? 0 : ZK_ERR_NONODE;
}

static int try_acquire(struct client *cl) {
    snprintf(cl->value, sizeof cl->value, "%s#%d", cl->s->clients[cl->idx].name, ++cl->acquires);
    if (z.lock.fd < 0 || z.expired) new_session(cl);
    z.have_node = 0;
    cl->token = 0;
    int err = create_node(cl, SCN_POINT_DURING_ACQUIRE), denied = 0;
    while (err == 0) {
        char pred[160];
        err = predecessor(cl, pred, sizeof pred);
        if (err == ZK_ERR_NONODE) z.have_node = 0; /* our znode is gone */
        if (err) break;
        if (!pred[0]) {
            cl->token = (uint64_t)z.czxid;
            emit(cl, TRACE_SRV_GRANT, cl->srv, cl->idx, cl->token, 0, INT64_MAX);
            return 1;
        }
        if (!denied++) emit(cl, TRACE_SRV_DENY, cl->srv, cl->idx, 0, TRACE_NO_NODE, 0);
        /* exists() with a watch on the next lower znode, then wait for it */
        struct zk_buf b = out(), r;
        zk_put_str(&b, pred);
        zk_put_bool(&b, 1);
        snprintf(z.watched, sizeof z.watched, "%s", pred);
        z.fired = 0;
        err = request(cl, ZK_OP_EXISTS, &b, &r, SCN_POINT_NONE);
        if (err == ZK_ERR_NONODE) {
            err = 0; /* deleted meanwhile: look again */
            continue;
        }
        if (err) break;
        err = serve(cl, 0, 1, 0, &r);
        if (err == 1) err = 0;
    }
    if (!denied) emit(cl, TRACE_SRV_DENY, cl->srv, cl->idx, 0, TRACE_NO_NODE, 0);
    return 0;
}

static void release(struct client *cl) {
    if (!z.have_node) return;
    const struct real_cfg *g = cl->cfg;
    for (int round = 0; round < 2; round++) {
        if (z.lock.fd < 0 || z.expired) new_session(cl); /* zk-ruby reopens, then deletes */
        /* getData first: whose znode is at our path (for the recording;
         * release-by=czxid also decides on it) */
        struct zk_buf b = out(), r;
        zk_put_str(&b, z.path);
        zk_put_bool(&b, 0);
        int err = request(cl, ZK_OP_GETDATA, &b, &r, SCN_POINT_NONE);
        if (err == ZK_ERR_SESSIONEXPIRED) continue;
        int owner = TRACE_NO_NODE;
        struct zk_stat st = {0, 0};
        if (err == ZK_ERR_OK) {
            char data[64];
            zk_get_str(&r, data, sizeof data);
            zk_get_stat(&r, &st);
            owner = real_owner_of(cl->s, data);
        }
        if (err != ZK_ERR_OK || (g->zk_release_czxid && st.czxid != z.czxid)) {
            emit(cl, TRACE_SRV_KEEP, cl->srv, cl->idx, 0, owner, 0);
            break;
        }
        b = out();
        zk_put_str(&b, z.path);
        zk_put_int(&b, -1);
        err = request(cl, ZK_OP_DELETE, &b, &r, SCN_POINT_NONE);
        if (err == ZK_ERR_SESSIONEXPIRED) continue;
        if (err == ZK_ERR_OK) emit(cl, TRACE_SRV_DELETE, cl->srv, cl->idx, 0, owner, owner != cl->idx);
        else emit(cl, TRACE_SRV_KEEP, cl->srv, cl->idx, 0, TRACE_NO_NODE, 0);
        break;
    }
    z.have_node = 0;
    if (g->zk_parent_cleanup) {
        struct zk_buf b = out(), r;
        zk_put_str(&b, LOCK_PARENT);
        zk_put_int(&b, -1);
        request(cl, ZK_OP_DELETE, &b, &r, SCN_POINT_NONE); /* NOTEMPTY: others wait */
    }
}

/* A request on the resource's own session, reopened once when it has gone. */
static int res_call(struct client *cl, int32_t op, const struct zk_buf *b, struct zk_buf *r) {
    real_hop(cl);
    int err = ZK_ERR_CONNLOSS;
    for (int round = 0; round < 2; round++) {
        if (z.res.fd < 0 && zk_conn_open(&z.res, cl->port, 20 * session_ms(cl), 0, NULL) != 0) _exit(3);
        err = zk_call(&z.res, op, b, r);
        if (err != ZK_ERR_CONNLOSS && err != ZK_ERR_SESSIONEXPIRED) break;
        zk_conn_close(&z.res);
    }
    real_hop(cl);
    if (err == ZK_ERR_CONNLOSS || err == ZK_ERR_SESSIONEXPIRED) _exit(3);
    return err;
}

/* getData of a znode holding a number: the number and the znode's version. */
static int get_number(struct client *cl, const char *path, int64_t *v, int32_t *version) {
    struct zk_buf b = out(), r;
    zk_put_str(&b, path);
    zk_put_bool(&b, 0);
    int err = res_call(cl, ZK_OP_GETDATA, &b, &r);
    char data[64];
    struct zk_stat st = {0, 0};
    zk_get_str(&r, data, sizeof data);
    zk_get_stat(&r, &st);
    *v = err == ZK_ERR_OK ? strtoll(data, NULL, 10) : 0;
    *version = st.version;
    return err;
}

static void read_resource(struct client *cl, int64_t *value, int64_t *version) {
    int32_t ver = 0;
    get_number(cl, "/stock", value, &ver);
    *version = ver;
}

static void put_set(struct zk_buf *b, const char *path, int64_t v, int32_t version) {
    char num[32];
    snprintf(num, sizeof num, "%" PRId64, v);
    zk_put_str(b, path);
    zk_put_str(b, num);
    zk_put_int(b, version);
}

static void put_multi_head(struct zk_buf *b, int32_t type, int done) {
    zk_put_int(b, type);
    zk_put_bool(b, done);
    zk_put_int(b, -1);
}

/* A multi's answer: applied when its first result is not an error. */
static int multi_applied(int err, struct zk_buf *r) { return err == ZK_ERR_OK && zk_get_int(r) != -1 && !r->bad; }

static int64_t write_resource(struct client *cl, int64_t value) {
    const struct real_cfg *g = cl->cfg;
    struct zk_buf b = out(), r;
    if (g->algo == RA_ZK_MULTI) {
        if (cl->token == 0) return TRACE_WRITE_REJECTED_NOTOKEN;
        put_multi_head(&b, ZK_OP_CHECK, 0);
        zk_put_str(&b, z.path);
        zk_put_int(&b, -1);
        put_multi_head(&b, ZK_OP_SETDATA, 0);
        put_set(&b, "/stock", value, -1);
        put_multi_head(&b, -1, 1);
        int err = request(cl, ZK_OP_MULTI, &b, &r, SCN_POINT_NONE);
        return multi_applied(err, &r) ? TRACE_WRITE_ACCEPTED : TRACE_WRITE_REJECTED_STALE;
    }
    if (!g->fenced_resource) {
        put_set(&b, "/stock", value, -1);
        res_call(cl, ZK_OP_SETDATA, &b, &r);
        return TRACE_WRITE_ACCEPTED;
    }
    if (cl->token == 0) return TRACE_WRITE_REJECTED_NOTOKEN;
    for (;;) {
        int64_t last;
        int32_t fv;
        if (get_number(cl, "/fence", &last, &fv) != ZK_ERR_OK) _exit(4);
        if ((int64_t)cl->token < last) return TRACE_WRITE_REJECTED_STALE;
        b = out();
        put_multi_head(&b, ZK_OP_SETDATA, 0);
        put_set(&b, "/fence", (int64_t)cl->token, fv);
        put_multi_head(&b, ZK_OP_SETDATA, 0);
        put_set(&b, "/stock", value, -1);
        put_multi_head(&b, -1, 1);
        if (multi_applied(res_call(cl, ZK_OP_MULTI, &b, &r), &r)) return TRACE_WRITE_ACCEPTED;
        /* /fence moved since it was read: read it again */
    }
}

static void wait_until(struct client *cl, int64_t abs) {
    struct zk_buf r;
    serve(cl, 0, 0, abs > 0 ? abs : 1, &r);
}

/* The driver's own session: every request answered, or -1. */
static int setup_call(struct zk_conn *c, int32_t op, const struct zk_buf *b, int ok2) {
    struct zk_buf r;
    int err = zk_call(c, op, b, &r);
    return err == ZK_ERR_OK || err == ok2 ? 0 : -1;
}

/* Empty the store: the lock's parent and its children (a previous run's
 * killed clients' ephemeral znodes among them: their sessions are left to
 * expire), and /stock and /fence written afresh (version 0). */
static int setup_once(const struct redis_srv *srv, const struct scenario *s) {
    struct zk_conn c;
    if (zk_conn_open(&c, srv->port, 30000, 0, NULL) != 0) return -1;
    struct zk_buf b = out(), r;
    zk_put_str(&b, LOCK_PARENT);
    zk_put_bool(&b, 0);
    int err = zk_call(&c, ZK_OP_GETCHILDREN, &b, &r), rc = 0;
    if (err == ZK_ERR_OK) {
        static char names[256][64];
        int32_t n = zk_get_int(&r);
        if (n > 256) n = 256;
        for (int32_t i = 0; i < n; i++) zk_get_str(&r, names[i], sizeof names[i]);
        for (int32_t i = 0; i < n && rc == 0; i++) {
            char path[100];
            snprintf(path, sizeof path, "%s/%s", LOCK_PARENT, names[i]);
            b = out();
            zk_put_str(&b, path);
            zk_put_int(&b, -1);
            rc = setup_call(&c, ZK_OP_DELETE, &b, ZK_ERR_NONODE);
        }
    } else if (err != ZK_ERR_NONODE) {
        rc = -1;
    }
    const char *gone[] = {LOCK_PARENT, "/stock", "/fence"};
    for (int i = 0; i < 3 && rc == 0; i++) {
        b = out();
        zk_put_str(&b, gone[i]);
        zk_put_int(&b, -1);
        rc = setup_call(&c, ZK_OP_DELETE, &b, ZK_ERR_NONODE);
    }
    const char *made[] = {"/stock", "/fence"};
    for (int i = 0; i < 2 && rc == 0; i++) {
        char num[32];
        snprintf(num, sizeof num, "%lld", i == 0 ? (long long)s->stock : 0LL);
        b = out();
        zk_put_str(&b, made[i]);
        zk_put_str(&b, num);
        zk_put_open_acl(&b);
        zk_put_int(&b, 0);
        rc = setup_call(&c, ZK_OP_CREATE, &b, 0);
    }
    b = out();
    zk_call(&c, ZK_OP_CLOSE, &b, &r);
    zk_conn_close(&c);
    if (rc) errno = EPROTO;
    return rc;
}

/* A JVM just started, on a loaded machine, can take longer than
 * ZK_TIMEOUT_MS over its first requests (classes still loading): the set-up
 * is tried up to 5 times, each on a new connection. */
static int setup_store(const struct redis_srv *srv, const struct scenario *s, const struct real_cfg *g) {
    (void)g;
    int rc = -1;
    for (int i = 0; i < 5 && rc != 0; i++) rc = setup_once(srv, s);
    return rc;
}

/* A crashed client's znode stays until its session expires, which the
 * waiters see for themselves: nothing to ask. */
static void observe_hold(const struct redis_srv *srv, const struct scenario *s, struct recs *l, int64_t t) {
    (void)srv;
    (void)s;
    (void)l;
    (void)t;
}

/* A client opens its session at its first acquire (the model's CONNECT):
 * here only that the server answers. */
static int connect_client(struct client *cl) {
    memset(&z, 0, sizeof z);
    z.lock.fd = z.res.fd = -1;
    return zk_ruok(cl->port) ? 0 : -1;
}

static void disconnect_client(struct client *cl) {
    (void)cl;
    zk_conn_close(&z.lock);
    zk_conn_close(&z.res);
}

/* tickTime at the run's scale, in real ms (refuse_zk.c checks it is whole). */
static int tick_ms(const struct scenario *s, double scale) {
    struct real_cfg c;
    char why[200];
    if (real_parse_cfg(s, &c, why, sizeof why) != 0) return 0;
    return (int)((double)c.zk_tick_ns * scale / 1e6 + 0.5);
}

static int start_server(struct redis_srv *srv, const struct scenario *s, double scale, char *err, size_t n) {
    return zk_srv_start(srv, tick_ms(s, scale), err, n);
}

/* The run starts on a tick of the server's clock: ZooKeeper's ExpiryQueue
 * puts sessions in buckets at whole multiples of tickTime of its
 * Time.currentElapsedTime(), System.nanoTime() / 10^6, which the JVM reads
 * from CLOCK_MONOTONIC on Linux, as now_ns() does. So the real buckets fall
 * where the simulated ones do, tickTime apart from the start. */
static int64_t align_start(const struct scenario *s, double scale, int64_t t0) {
    int64_t tick = (int64_t)tick_ms(s, scale) * 1000000;
    return tick > 0 ? (t0 + tick - 1) / tick * tick : t0;
}

const struct real_ops real_store_zk = {
        .name = "zookeeper",
        .server = "zookeeper",
        .start_scn = start_server,
        .stop = zk_srv_stop,
        .setup = setup_store,
        .connect = connect_client,
        .disconnect = disconnect_client,
        .try_acquire = try_acquire,
        .wait_until = wait_until,
        .release = release,
        .read = read_resource,
        .write = write_resource,
        .observe_hold = observe_hold,
        .skip_lost_release = 1,
        .align_start = align_start,
};
