/* The etcd backend's store (real/real_int.h, struct real_ops): the
 * consensus lock against a real etcd 3.4 cluster (real/etcd_srv.h), each
 * client speaking HTTP/JSON to a member's gRPC gateway (real/http.h) over
 * loopback; the scenario's server faults done to the members. One process per client
 * holds both its program and its session's keep-alives (every ttl/3, sent
 * without waiting for the answer, which is read at the client's next wait,
 * as clientv3's keep-alive goroutine does beside the work): a SIGSTOP of
 * the process freezes both, as a pause of a Go worker does.
 *   queue=off: an attempt is a txn, "create_revision(lock) = 0 ? put lock
 *     with my lease : range lock" (etcd's Mutex.TryLock);
 *   queue=on: v3lock's Lock (POST /v3/lock/lock), which waits in line and,
 *     since 3.4.4, fails with "session expired" when its key is gone;
 * the token is the lock key's create_revision (read with a range for a
 * queued key: v3lock's header revision is not it, research pitfall 8).
 * The resource is a key in the same etcd; a fenced write is a txn,
 * "value(fence) > my revision zero-padded ? nothing : put fence, put stock"
 * (compares are byte-wise: pitfall 9); guard=owner's write is a txn on the
 * lock key's create_revision (clientv3 Mutex.IsOwner). A release deletes
 * the key if it is still this client's (the same compare), then revokes the
 * lease (the session's end). With a partition, every request goes through
 * the loopback proxy (real/proxy.c: a link to each member, and to the
 * resource through each), and the client gives up on members as the
 * model's does (call_on); the members' own traffic goes through the peer
 * proxy (real/etcd_peer.c). */
#define _GNU_SOURCE /* ppoll: a wait to the nanosecond on a socket */
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
#include "etcd_srv.h"
#include "http.h"
#include "lock.h"

#define emit real_emit

/* A keep-alive answered with no word on the lease (no leader yet, a
 * timeout) is sent again this much later (real time): etcd's own follower
 * waits 50 ms between its tries to forward a renewal. */
#define KA_AGAIN_NS (50 * 1000000LL)
/* A request-timeout is never shorter than this (real time): a busy member's
 * answer takes tens of ms, which is not the scenario's to scale. */
#define REQUEST_TIMEOUT_MIN_NS (300 * 1000000LL)

static struct http_req ka_req; /* the keep-alive in flight (one per client process) */

/* Which member a client process asks (a client is its own process: these
 * are its own). The lock's calls go to its bound member (bind=), or from
 * S1 on, as an etcd client starts with its first endpoint, to the next
 * member when one refuses the connection (crashed): lock_member. The
 * resource is not a lock server: its key lives in the same etcd, reached
 * the same failing-over way whatever the binding (res_member), so a write
 * is not held up by the member a client's lock calls are bound to. */
static int lock_member, res_member, bound;
static int64_t ka_sent; /* when the keep-alive in flight was sent (real ns) */
/* Through the loopback proxy (a run with partitions): this client's links'
 * ports, as proxy_targets lays them out (to S1..Sn, then to the resource
 * through S1..Sn); NULL = straight to the members. */
static const int *link_ports;

/* Where a request to member m goes: its link through the proxy, or the member. */
static int member_port(int res, int m) {
    return link_ports ? link_ports[(res ? etcd_srv_members() : 0) + m] : etcd_srv_port(m);
}

/* The member client k is bound to by bind= (as sim/algo/algo_consensus.c's
 * bound_server: `one` binds the k-th client to the k-th server, a list the
 * k-th client to the k-th server named, the list repeated), or -1. */
static int bound_member(const struct scenario *s, int k, int n) {
    const char *v = NULL;
    for (int i = 0; i < s->nopts; i++)
        if (strcmp(s->opts[i].key, "bind") == 0) v = s->opts[i].val;
    if (!v || strcmp(v, "none") == 0) return -1;
    if (strcmp(v, "one") == 0) return k % n;
    int list[16], nl = 0;
    for (const char *p = v; *p && nl < 16;) {
        list[nl++] = atoi(p + 1) - 1;
        p += strcspn(p, ",");
        if (*p == ',') p++;
    }
    return nl ? list[k % nl] : -1;
}

/* The scenario's request-timeout (the model's: 1 s unless the lock line
 * says), in real ns at the scale, REQUEST_TIMEOUT_MIN_NS at least. */
static int64_t request_timeout(const struct client *cl) {
    sim_ns v = SIM_NS_PER_S;
    for (int i = 0; i < cl->s->nopts; i++)
        if (strcmp(cl->s->opts[i].key, "request-timeout") == 0) scn_parse_duration(cl->s->opts[i].val, &v);
    int64_t ns = real_of(cl, v);
    return ns > REQUEST_TIMEOUT_MIN_NS ? ns : REQUEST_TIMEOUT_MIN_NS;
}

/* Send path+body to a member: the bound one, or the current one of the
 * route and the next ones while they refuse the connection. 0 or -1. */
static int start_on(int res, struct http_req *q, const char *path, const char *body) {
    int *m = res ? &res_member : &lock_member;
    int n = etcd_srv_members();
    for (int tries = 0; tries < n; tries++) {
        if (http_start(q, member_port(res, *m), path, body) == 0) return 0;
        if (!res && bound) return -1;
        *m = (*m + 1) % n;
    }
    return -1;
}

static void b64(const char *s, char *out, size_t n) { http_base64(s, strlen(s), out, n); }

static int64_t ttl_s(const struct client *cl) { return (int64_t)((double)cl->cfg->ttl_ns * cl->scale / 1e9 + 0.5); }

static void schedule_ka(struct client *cl) {
    sim_ns every = cl->cfg->ttl_ns / 3;
    cl->renew_at = now_ns() + real_of(cl, every > 0 ? every : 1);
}

/* The keep-alive's answer: renewed (TTL > 0), or the lease is gone: the
 * keep-alives stop, and a holder that checks for loss leaves its critical
 * section (session.Done()); one that does not goes on. */
static void ka_answer(struct client *cl) {
    int64_t ttl = json_field_int(ka_req.buf, "TTL", 0);
    http_close(&ka_req);
    cl->ka = NULL;
    if (http_status(&ka_req) != 200 || !strstr(ka_req.buf, "\"result\"")) {
        /* not an answer about the lease (no leader, a timeout): ask again */
        cl->renew_at = now_ns() + KA_AGAIN_NS;
        return;
    }
    if (ttl > 0) {
        if (cl->holding) emit(cl, TRACE_SRV_RENEW, cl->srv, cl->idx, 0, cl->cfg->ttl_ns, 0);
        return;
    }
    cl->ka_dead = 1;
    cl->renew_at = 0;
    if (cl->holding && !cl->s->clients[cl->idx].ignores_loss) {
        emit(cl, TRACE_CS_EXIT, cl->idx, TRACE_NO_NODE, cl->token, TRACE_EXIT_LOST, 0);
        cl->holding = 0;
        cl->lost = 1;
    }
}

/* 1 when a keep-alive unanswered within the request-timeout is given up
 * on: a client free to fail over, or any through the proxy. */
static int ka_gives_up(void) { return link_ports || (!bound && etcd_srv_members() > 1); }

/* Keep-alive work due now: read an answer that came, send one that is due. */
static void ka_tick(struct client *cl) {
    if (cl->ka) {
        int st = http_poll(cl->ka);
        if (st == 1 && link_ports && cl->ka->len == 0) st = -1; /* the proxy found the member down */
        if (st == 0 && ka_gives_up() && now_ns() > ka_sent + request_timeout(cl))
            st = -1;  /* no answer within request-timeout: it asks the next member (a bound one, through
                         the proxy, its own again: the model's ka_next) */
        if (st < 0) { /* the member went (crashed): ask again, elsewhere if free to */
            http_close(cl->ka);
            cl->ka = NULL;
            if (!bound) lock_member = (lock_member + 1) % etcd_srv_members();
            cl->renew_at = now_ns();
        }
        if (st == 1) ka_answer(cl);
    }
    if (!cl->ka && cl->lease && !cl->ka_dead && cl->renew_at && now_ns() >= cl->renew_at) {
        char body[64];
        snprintf(body, sizeof body, "{\"ID\":\"%" PRId64 "\"}", cl->lease);
        if (start_on(0, &ka_req, "/v3/lease/keepalive", body) != 0) _exit(3);
        ka_sent = now_ns();
        cl->ka = &ka_req;
        schedule_ka(cl);
    }
}

/* Sleep until abs or until fd (>= 0) is readable, serving keep-alives. */
static void wait_for(struct client *cl, int64_t abs, int fd) {
    for (;;) {
        ka_tick(cl);
        int64_t now = now_ns();
        if (abs && now >= abs) return;
        int64_t wake = abs;
        if (!cl->ka && cl->renew_at && !cl->ka_dead && (wake == 0 || cl->renew_at < wake)) wake = cl->renew_at;
        int64_t ka_late = ka_sent + request_timeout(cl); /* when ka_tick gives up on the one in flight */
        if (cl->ka && ka_gives_up() && (wake == 0 || ka_late < wake)) wake = ka_late;
        struct pollfd p[2];
        int n = 0;
        if (fd >= 0) p[n++] = (struct pollfd){fd, POLLIN, 0};
        if (cl->ka) p[n++] = (struct pollfd){cl->ka->fd, POLLIN, 0};
        if (n == 0) {
            sleep_until(wake);
            continue;
        }
        struct timespec ts, *tp = NULL;
        if (wake) {
            int64_t d = wake > now ? wake - now : 0;
            ts = (struct timespec){(time_t)(d / 1000000000), (long)(d % 1000000000)};
            tp = &ts;
        }
        int r = ppoll(p, (nfds_t)n, tp, NULL);
        if (r > 0 && fd >= 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) return;
    }
}

static void wait_until(struct client *cl, int64_t abs) { wait_for(cl, abs > 0 ? abs : 1, -1); }

/* A request and its whole answer, the latency held each way; keep-alives
 * are served while it waits. bounded: fail after HTTP_TIMEOUT_MS (through
 * the proxy: after the run's end and that). 0, or -1 when, through the
 * proxy, asks members in turn (a bound client: its own, asks times) gave no
 * answer within the request-timeout each, or an error (no leader): the
 * model's client gives up so (sim/algo/algo_consensus.c, op_next); asks = 0
 * asks on. Straight to the members it never returns -1. */
static int call_on(struct client *cl, int res, const char *path, const char *body, struct http_req *q, int bounded,
                   enum scn_point at_send, int asks) {
    real_hop(cl);
    if (start_on(res, q, path, body) != 0) _exit(3);
    if (at_send != SCN_POINT_NONE) real_point(cl, at_send);
    int64_t end = now_ns() + (int64_t)HTTP_TIMEOUT_MS * 1000000;
    if (link_ports) end = cl->t0 + real_of(cl, cl->s->duration_ns) + (int64_t)HTTP_TIMEOUT_MS * 1000000;
    /* A client free to fail over gives a member the scenario's
     * request-timeout, then asks the next (a member restarting, or waiting
     * for a leader, may hold a request for seconds); a bound one waits,
     * except through the proxy, where a cut link's request is gone: it asks
     * its member again, as the model's does. A queued Lock (unbounded)
     * waits for its turn wherever it is. */
    int free_to_go = bounded && ((res || !bound) && etcd_srv_members() > 1);
    int again = free_to_go || (bounded && link_ports);
    int asked = 1;
    int64_t give_up = now_ns() + request_timeout(cl);
    for (;;) {
        int st = http_poll(q);
        if (st == 1 && link_ports && bounded && (q->len == 0 || http_status(q) != 200))
            st = -1; /* the member down (the proxy closed), or an error: no leader */
        if (st == 1) break;
        if (st < 0 && !again) _exit(3);
        if (st < 0 || (again && now_ns() > give_up)) {
            http_close(q);
            if (link_ports && asks && asked >= asks) return -1;
            int *m = res ? &res_member : &lock_member;
            if (res || !bound) *m = (*m + 1) % etcd_srv_members();
            if (start_on(res, q, path, body) != 0) _exit(3);
            asked++;
            give_up = now_ns() + request_timeout(cl);
            continue;
        }
        if (bounded && now_ns() > end) _exit(3);
        int64_t wake = again && give_up < end ? give_up : end;
        wait_for(cl, bounded ? wake : 0, q->fd);
    }
    http_close(q);
    if (http_status(q) == 0) _exit(3);
    real_hop(cl);
    return 0;
}

/* A call of the lock's (lease, lock key): to the client's member. */
static int call(struct client *cl, const char *path, const char *body, struct http_req *q, int bounded,
                enum scn_point at_send, int asks) {
    return call_on(cl, 0, path, body, q, bounded, at_send, asks);
}

/* A new session's lease: 0, or -1 when no member answered (the proxy). */
static int new_lease(struct client *cl) {
    char body[64];
    struct http_req q;
    snprintf(body, sizeof body, "{\"TTL\":\"%" PRId64 "\"}", ttl_s(cl));
    if (call(cl, "/v3/lease/grant", body, &q, 1, SCN_POINT_NONE, etcd_srv_members()) != 0) return -1;
    cl->lease = json_field_int(q.buf, "ID", 0);
    if (!cl->lease) _exit(4);
    cl->ka_dead = 0;
    schedule_ka(cl);
    return 0;
}

static void end_lease(struct client *cl) {
    if (!cl->lease) return;
    char body[64];
    struct http_req q;
    snprintf(body, sizeof body, "{\"ID\":\"%" PRId64 "\"}", cl->lease);
    call(cl, "/v3/lease/revoke", body, &q, 1, SCN_POINT_NONE, 2 * etcd_srv_members()); /* unanswered: it expires */
    cl->lease = 0;
    cl->renew_at = 0;
    cl->ka_dead = 0;
}

/* The create_revision of key (0 when it is gone). */
static int64_t create_rev(struct client *cl, const char *key) {
    char k[200], body[300];
    struct http_req q;
    b64(key, k, sizeof k);
    snprintf(body, sizeof body, "{\"key\":\"%s\"}", k);
    call(cl, "/v3/kv/range", body, &q, 1, SCN_POINT_NONE, 0);
    return json_field_int(q.buf, "create_revision", 0);
}

static int try_acquire(struct client *cl) {
    const struct real_cfg *g = cl->cfg;
    snprintf(cl->value, sizeof cl->value, "%s#%d", cl->s->clients[cl->idx].name, ++cl->acquires);
    /* a new session; no member answered (through the proxy): the attempt
     * fails, as the model's "no leader answered" */
    if ((!cl->lease || cl->ka_dead) && new_lease(cl) != 0) return 0;
    char k[200], v[64], body[1200];
    struct http_req q;
    b64("lock", k, sizeof k);
    b64(cl->value, v, sizeof v);
    int got = 0;
    cl->token = 0;
    cl->rev = 0;
    if (g->queue) {
        snprintf(body, sizeof body, "{\"name\":\"%s\",\"lease\":\"%" PRId64 "\"}", k, cl->lease);
        call(cl, "/v3/lock/lock", body, &q, 0, SCN_POINT_DURING_ACQUIRE, 0);
        char key[200];
        if (json_field(q.buf, "key", key, sizeof key) == 0 && http_unbase64(key, cl->key, sizeof cl->key) > 0) {
            cl->rev = create_rev(cl, cl->key);
            got = cl->rev > 0;
        } else {
            /* "session expired": its key went while it waited; the retry
             * opens a new session, as Mutex.Lock's caller does */
            cl->lease = 0;
            cl->renew_at = 0;
        }
    } else {
        snprintf(body, sizeof body,
                 "{\"compare\":[{\"target\":\"CREATE\",\"key\":\"%s\",\"create_revision\":\"0\"}],"
                 "\"success\":[{\"request_put\":{\"key\":\"%s\",\"value\":\"%s\",\"lease\":\"%" PRId64 "\"}}],"
                 "\"failure\":[{\"request_range\":{\"key\":\"%s\"}}]}",
                 k, k, v, cl->lease, k);
        if (call(cl, "/v3/kv/txn", body, &q, 1, SCN_POINT_DURING_ACQUIRE, etcd_srv_members()) != 0) return 0;
        char ok[8] = "";
        json_field(q.buf, "succeeded", ok, sizeof ok);
        char held[64] = "";
        if (strcmp(ok, "true") == 0) {
            cl->rev = json_field_int(q.buf, "revision", 0);
            snprintf(cl->key, sizeof cl->key, "lock");
            got = cl->rev > 0;
        } else if (json_field(q.buf, "value", held, sizeof held) == 0 && strcmp(held, v) == 0) {
            /* its own value: a try sent again to another member after the
             * first one's answer was given up on had been applied */
            cl->rev = json_field_int(q.buf, "create_revision", 0);
            snprintf(cl->key, sizeof cl->key, "lock");
            got = cl->rev > 0;
        }
    }
    if (got) {
        cl->token = g->tokens ? (uint64_t)cl->rev : 0;
        emit(cl, TRACE_SRV_GRANT, cl->srv, cl->idx, cl->token, g->ttl_ns, 0);
    } else {
        emit(cl, TRACE_SRV_DENY, cl->srv, cl->idx, 0, TRACE_NO_NODE, 0);
    }
    return got;
}

static void release(struct client *cl) {
    char k[200], body[600];
    struct http_req q;
    int deleted = 0;
    if (cl->rev) {
        b64(cl->key, k, sizeof k);
        snprintf(body, sizeof body,
                 "{\"compare\":[{\"target\":\"CREATE\",\"key\":\"%s\",\"create_revision\":\"%" PRId64 "\"}],"
                 "\"success\":[{\"request_delete_range\":{\"key\":\"%s\"}}]}",
                 k, cl->rev, k);
        if (call(cl, "/v3/kv/txn", body, &q, 1, SCN_POINT_NONE, 2 * etcd_srv_members()) != 0) {
            /* unanswered (through the proxy): the leader will expire the lease */
            end_lease(cl);
            cl->rev = 0;
            return;
        }
        char ok[8] = "";
        json_field(q.buf, "succeeded", ok, sizeof ok);
        deleted = strcmp(ok, "true") == 0;
    }
    if (deleted) emit(cl, TRACE_SRV_DELETE, cl->srv, cl->idx, 0, cl->idx, 0);
    else emit(cl, TRACE_SRV_KEEP, cl->srv, cl->idx, 0, -1, 0);
    end_lease(cl);
    cl->rev = 0;
}

static void read_resource(struct client *cl, int64_t *value, int64_t *version) {
    char k[32], body[96], v64[64], v[64];
    struct http_req q;
    b64("stock", k, sizeof k);
    snprintf(body, sizeof body, "{\"key\":\"%s\"}", k);
    call_on(cl, 1, "/v3/kv/range", body, &q, 1, SCN_POINT_NONE, 0);
    *value = 0;
    if (json_field(q.buf, "value", v64, sizeof v64) == 0 && http_unbase64(v64, v, sizeof v) > 0)
        *value = strtoll(v, NULL, 10);
    /* the key's version counts its puts: the set-up's is the first */
    *version = json_field_int(q.buf, "version", 1) - 1;
}

static int64_t write_resource(struct client *cl, int64_t value) {
    const struct real_cfg *g = cl->cfg;
    char ks[32], kf[32], kl[200], num[32], vs[64], tok[32], vt[64], body[1000];
    struct http_req q;
    b64("stock", ks, sizeof ks);
    b64("fence", kf, sizeof kf);
    snprintf(num, sizeof num, "%lld", (long long)value);
    b64(num, vs, sizeof vs);
    const char *put = "{\"request_put\":{\"key\":\"%s\",\"value\":\"%s\"}}";
    char put_stock[200];
    snprintf(put_stock, sizeof put_stock, put, ks, vs);
    if (g->guard_owner) {
        b64(cl->key[0] ? cl->key : "lock", kl, sizeof kl);
        snprintf(body, sizeof body,
                 "{\"compare\":[{\"target\":\"CREATE\",\"key\":\"%s\",\"create_revision\":\"%" PRId64 "\"}],"
                 "\"success\":[%s]}",
                 kl, cl->rev, put_stock);
        call_on(cl, 1, "/v3/kv/txn", body, &q, 1, SCN_POINT_NONE, 0);
        return strstr(q.buf, "\"succeeded\":true") ? TRACE_WRITE_ACCEPTED : TRACE_WRITE_REJECTED_NOT_OWNER;
    }
    if (!g->fenced_resource) {
        snprintf(body, sizeof body, "{\"key\":\"%s\",\"value\":\"%s\"}", ks, vs);
        call_on(cl, 1, "/v3/kv/put", body, &q, 1, SCN_POINT_NONE, 0);
        return TRACE_WRITE_ACCEPTED;
    }
    if (cl->token == 0) return TRACE_WRITE_REJECTED_NOTOKEN;
    snprintf(tok, sizeof tok, "%020llu", (unsigned long long)cl->token);
    b64(tok, vt, sizeof vt);
    char put_fence[200];
    snprintf(put_fence, sizeof put_fence, put, kf, vt);
    /* equal is let in, as the simulator's resource does: refused only when
     * the fence holds a higher revision */
    snprintf(body, sizeof body,
             "{\"compare\":[{\"target\":\"VALUE\",\"key\":\"%s\",\"result\":\"GREATER\",\"value\":\"%s\"}],"
             "\"failure\":[%s,%s]}",
             kf, vt, put_fence, put_stock);
    call_on(cl, 1, "/v3/kv/txn", body, &q, 1, SCN_POINT_NONE, 0);
    return strstr(q.buf, "\"succeeded\":true") ? TRACE_WRITE_REJECTED_STALE : TRACE_WRITE_ACCEPTED;
}

static int post(int port, const char *path, const char *body, struct http_req *q) {
    return http_call(q, port, path, body) == 0 && http_status(q) == 200 ? 0 : -1;
}

/* The scenario's first-candidate=Sk as a member (k - 1), or -1. */
static int first_candidate(const struct scenario *s) {
    int k = -1;
    for (int i = 0; i < s->nopts; i++)
        if (strcmp(s->opts[i].key, "first-candidate") == 0)
            k = s->opts[i].val[0] == 'S' ? atoi(s->opts[i].val + 1) - 1 : -1;
    return k;
}

static int setup_store(const struct redis_srv *srv_, const struct scenario *s, const struct real_cfg *g) {
    (void)g;
    char ks[32], kf[32], num[32], vs[64], zero[64], body[400], err[300];
    struct http_req q;
    /* Every member up again (a run may have left one paused or crashed),
     * the scenario's first candidate leading, as in the simulated run. */
    if (etcd_srv_heal(first_candidate(s), err, sizeof err) != 0) {
        errno = ETIMEDOUT;
        return -1;
    }
    struct redis_srv one = *srv_, *srv = &one;
    one.port = etcd_srv_port(0);
    /* key "\0" to range_end "\0": every key */
    snprintf(body, sizeof body, "{\"key\":\"AA==\",\"range_end\":\"AA==\"}");
    if (post(srv->port, "/v3/kv/deleterange", body, &q) != 0) return -1;
    b64("stock", ks, sizeof ks);
    b64("fence", kf, sizeof kf);
    snprintf(num, sizeof num, "%lld", (long long)s->stock);
    b64(num, vs, sizeof vs);
    b64("00000000000000000000", zero, sizeof zero);
    snprintf(body, sizeof body, "{\"key\":\"%s\",\"value\":\"%s\"}", ks, vs);
    if (post(srv->port, "/v3/kv/put", body, &q) != 0) return -1;
    snprintf(body, sizeof body, "{\"key\":\"%s\",\"value\":\"%s\"}", kf, zero);
    return post(srv->port, "/v3/kv/put", body, &q);
}

/* After a crash: the holder named by the lock key's value (queue=off; a
 * queued key has no value that names its client), and its lease's TTL. */
static void observe_hold(const struct redis_srv *srv_, const struct scenario *s, struct recs *l, int64_t t) {
    char k[32], body[200], v64[128], v[64];
    struct http_req q;
    struct redis_srv one = *srv_, *srv = &one;
    b64("lock", k, sizeof k);
    snprintf(body, sizeof body, "{\"key\":\"%s\"}", k);
    int m = 0; /* the first member that answers */
    while (m < etcd_srv_members() && post(etcd_srv_port(m), "/v3/kv/range", body, &q) != 0) m++;
    if (m == etcd_srv_members()) return;
    one.port = etcd_srv_port(m);
    if (json_field(q.buf, "value", v64, sizeof v64) != 0 || http_unbase64(v64, v, sizeof v) <= 0) return;
    int i = real_owner_of(s, v);
    int64_t lease = json_field_int(q.buf, "lease", 0);
    if (i == TRACE_NO_NODE || !lease) return;
    snprintf(body, sizeof body, "{\"ID\":\"%" PRId64 "\"}", lease);
    if (post(srv->port, "/v3/lease/timetolive", body, &q) != 0) return;
    int64_t ttl = json_field_int(q.buf, "TTL", 0);
    struct rec r = {t, REC_OBSERVED_HOLD, i, TRACE_NO_NODE, 0, 0, i, ttl > 0 ? ttl * 1000000000LL : 0};
    real_recs_add(l, &r);
}

/* A client opens no connection ahead: each request is one (Connection: close). */
static int connect_client(struct client *cl) {
    struct http_req q;
    ka_req.fd = -1;
    int b = bound_member(cl->s, cl->idx, etcd_srv_members());
    link_ports = cl->link_ports;
    bound = b >= 0;
    lock_member = b >= 0 ? b : 0;
    res_member = 0;
    cl->port = etcd_srv_port(lock_member);
    return post(cl->port, "/v3/maintenance/status", "{}", &q);
}

/* The server that leads at scenario time at in the simulated run (its
 * order among the server nodes), by its LOCK_NOTE_LEADER notes; -1. */
static int sim_leader(const struct trace *sim, sim_ns at) {
    int leader = -1;
    for (size_t i = 0; i < sim->len && sim->ev[i].t <= at; i++) {
        const struct trace_event *e = &sim->ev[i];
        if (e->kind != TRACE_SRV_NOTE || !e->text || strncmp(e->text, LOCK_NOTE_LEADER, strlen(LOCK_NOTE_LEADER)))
            continue;
        int k = 0;
        for (int j = 0; j < e->node; j++) k += sim->nodes[j].kind == TRACE_NODE_SERVER;
        leader = k;
    }
    return leader;
}

/* A server fault on a member: the simulated leader's pause or crash goes
 * to the member that leads for real (asked with /v3/maintenance/status). */
static int member_fault(const struct trace *sim, int member, enum scn_fault_kind kind, sim_ns at) {
    int k = member;
    if ((kind == SCN_FAULT_PAUSE || kind == SCN_FAULT_CRASH) && sim_leader(sim, at) == member) {
        int real = etcd_srv_leader();
        if (real >= 0) k = real;
    }
    int rc = -1;
    switch (kind) {
    case SCN_FAULT_PAUSE: rc = etcd_srv_pause(k); break;
    case SCN_FAULT_RESUME: rc = etcd_srv_resume(k); break;
    case SCN_FAULT_CRASH: rc = etcd_srv_crash(k); break;
    case SCN_FAULT_RESTART: rc = etcd_srv_restart(k); break;
    default: break;
    }
    return rc == 0 ? k : -1;
}

/* The proxy's targets (a run with partitions): each member (its lock's
 * calls), then the resource through each member (the resource is a key in
 * the same etcd), as member_port reads them. */
static int proxy_targets(const struct trace *sim, int res_node, struct real_proxy_target *v, int cap) {
    int n = etcd_srv_members(), ns = 0, srv[ETCD_SRV_MAX_MEMBERS];
    for (int i = 0; i < sim->nnodes; i++)
        if (sim->nodes[i].kind == TRACE_NODE_SERVER && ns < n) srv[ns++] = i;
    if (ns != n || 2 * n > cap) return -1;
    for (int m = 0; m < n; m++) {
        v[m] = (struct real_proxy_target){srv[m], etcd_srv_port(m)};
        v[n + m] = (struct real_proxy_target){res_node, etcd_srv_port(m)};
    }
    return 2 * n;
}

static void disconnect_client(struct client *cl) {
    if (cl->ka) http_close(cl->ka);
    cl->ka = NULL;
}

/* As many members as the scenario's lock servers (consensus's default: 3). */
static int start_members(struct redis_srv *srv, const struct scenario *s, double scale, char *err, size_t n) {
    (void)scale;
    int partitions = 0; /* the peer proxy between the members, to cut them */
    for (int i = 0; i < s->nfaults; i++) partitions |= s->faults[i].kind == SCN_FAULT_PARTITION;
    return etcd_srv_start_cut(srv, s->nservers ? s->nservers : 3, partitions, err, n);
}

/* A partition (or heal) between members, through the peer proxy: members
 * k and j cut when f puts Sk+1 and Sj+1 in different groups (the nodes it
 * does not name form one more group, as in the simulator). */
static void member_partition(const struct trace *sim, const struct scn_fault *f) {
    int grp[ETCD_SRV_MAX_MEMBERS], n = 0;
    for (int i = 0; i < sim->nnodes && n < etcd_srv_members(); i++) {
        if (sim->nodes[i].kind != TRACE_NODE_SERVER) continue;
        grp[n] = f->ngroups;
        for (int g = 0; g < f->ngroups; g++)
            for (int k = 0; k < f->group_len[g]; k++)
                if (strcmp(f->groups[g][k], sim->nodes[i].name) == 0) grp[n] = g;
        n++;
    }
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) etcd_srv_cut(a, b, f->kind == SCN_FAULT_PARTITION && grp[a] != grp[b]);
}

const struct real_ops real_store_etcd = {
        .name = "etcd",
        .server = "etcd",
        .start_scn = start_members,
        .stop = etcd_srv_stop,
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
        .member_fault = member_fault,
        .proxy_targets = proxy_targets,
        .member_partition = member_partition,
};
