/* The jute wire protocol of ZooKeeper, the few requests the zookeeper
 * backend needs (real/zk.h). Packets are a 4-byte big-endian length and a
 * body; a request body is RequestHeader {xid, type} + the request, a reply
 * ReplyHeader {xid, zxid, err} + the response (ZooKeeper's zookeeper.jute). */
#include "zk.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static void put(struct zk_buf *b, const void *p, size_t n) {
    if (b->len + n > b->cap) {
        b->bad = 1;
        return;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

void zk_put_int(struct zk_buf *b, int32_t v) {
    uint32_t x = htonl((uint32_t)v);
    put(b, &x, 4);
}

void zk_put_long(struct zk_buf *b, int64_t v) {
    zk_put_int(b, (int32_t)((uint64_t)v >> 32));
    zk_put_int(b, (int32_t)(uint32_t)v);
}

void zk_put_bool(struct zk_buf *b, int v) {
    unsigned char x = v ? 1 : 0;
    put(b, &x, 1);
}

void zk_put_str(struct zk_buf *b, const char *s) {
    size_t n = strlen(s);
    zk_put_int(b, (int32_t)n);
    put(b, s, n);
}

void zk_put_open_acl(struct zk_buf *b) {
    zk_put_int(b, 1);  /* one ACL */
    zk_put_int(b, 31); /* ZooDefs.Perms.ALL */
    zk_put_str(b, "world");
    zk_put_str(b, "anyone");
}

static int take(struct zk_buf *b, void *p, size_t n) {
    if (b->pos + n > b->len) {
        b->bad = 1;
        memset(p, 0, n);
        return -1;
    }
    memcpy(p, b->p + b->pos, n);
    b->pos += n;
    return 0;
}

int32_t zk_get_int(struct zk_buf *b) {
    uint32_t x;
    take(b, &x, 4);
    return (int32_t)ntohl(x);
}

int64_t zk_get_long(struct zk_buf *b) {
    uint64_t hi = (uint32_t)zk_get_int(b);
    uint64_t lo = (uint32_t)zk_get_int(b);
    return (int64_t)(hi << 32 | lo);
}

void zk_get_str(struct zk_buf *b, char *out, size_t n) {
    int32_t len = zk_get_int(b);
    if (n) out[0] = 0;
    if (len <= 0) return; /* -1: null */
    if (b->pos + (size_t)len > b->len) {
        b->bad = 1;
        return;
    }
    size_t k = (size_t)len < n ? (size_t)len : n - 1;
    memcpy(out, b->p + b->pos, k);
    out[k] = 0;
    b->pos += (size_t)len;
}

void zk_get_stat(struct zk_buf *b, struct zk_stat *st) {
    st->czxid = zk_get_long(b);
    zk_get_long(b); /* mzxid */
    zk_get_long(b); /* ctime */
    zk_get_long(b); /* mtime */
    st->version = zk_get_int(b);
    zk_get_int(b);  /* cversion */
    zk_get_int(b);  /* aversion */
    zk_get_long(b); /* ephemeralOwner */
    zk_get_int(b);  /* dataLength */
    zk_get_int(b);  /* numChildren */
    zk_get_long(b); /* pzxid */
}

static int64_t ms_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int tcp_open(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    /* Linux bounds connect and blocking writes by SO_SNDTIMEO (socket(7)). */
    struct timeval tv = {ZK_TIMEOUT_MS / 1000, (ZK_TIMEOUT_MS % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    while (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (errno == EINTR) continue;
        close(fd);
        return -1;
    }
    return fd;
}

static int write_all(int fd, const unsigned char *p, size_t n) {
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Send a packet: its length, then head (may be NULL) and body. */
static int send_packet(int fd, const struct zk_buf *head, const struct zk_buf *body) {
    unsigned char out[ZK_PACKET_MAX + 4];
    size_t n = (head ? head->len : 0) + (body ? body->len : 0);
    if (n > ZK_PACKET_MAX) return -1;
    uint32_t len = htonl((uint32_t)n);
    memcpy(out, &len, 4);
    if (head) memcpy(out + 4, head->p, head->len);
    if (body) memcpy(out + 4 + (head ? head->len : 0), body->p, body->len);
    return write_all(fd, out, n + 4);
}

/* Read until a whole packet is in c->in, waiting at most until deadline
 * (ms, 0 = do not wait). 1 with its length in *n, 0 not yet, -1 gone. */
static int fill(struct zk_conn *c, int64_t deadline, size_t *n) {
    if (c->skip) {
        memmove(c->in, c->in + c->skip, c->have - c->skip);
        c->have -= c->skip;
        c->skip = 0;
    }
    for (;;) {
        if (c->have >= 4) {
            uint32_t len;
            memcpy(&len, c->in, 4);
            len = ntohl(len);
            if (len > ZK_PACKET_MAX) return -1;
            if (c->have >= 4 + (size_t)len) {
                *n = len;
                return 1;
            }
        }
        ssize_t r = recv(c->fd, c->in + c->have, sizeof c->in - c->have, MSG_DONTWAIT);
        if (r > 0) {
            c->have += (size_t)r;
            continue;
        }
        if (r == 0) return -1;
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
        int64_t left = deadline - ms_now();
        if (deadline == 0 || left <= 0) return 0;
        struct pollfd p = {c->fd, POLLIN, 0};
        poll(&p, 1, (int)left);
    }
}

int zk_conn_open(struct zk_conn *c, int port, int timeout_ms, int64_t session, const char *passwd) {
    c->fd = tcp_open(port);
    c->have = c->skip = 0;
    c->xid = 0;
    if (c->fd < 0) return -1;
    unsigned char raw[128];
    struct zk_buf b = {raw, 0, sizeof raw, 0, 0};
    zk_put_int(&b, 0);          /* protocolVersion */
    zk_put_long(&b, 0);         /* lastZxidSeen */
    zk_put_int(&b, timeout_ms); /* timeOut */
    zk_put_long(&b, session);   /* sessionId */
    zk_put_int(&b, 16);         /* passwd */
    if (passwd) put(&b, passwd, 16);
    else put(&b, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
    zk_put_bool(&b, 0); /* readOnly */
    size_t n;
    if (send_packet(c->fd, NULL, &b) != 0 || fill(c, ms_now() + ZK_TIMEOUT_MS, &n) != 1) {
        zk_conn_close(c);
        return -1;
    }
    struct zk_buf r = {c->in + 4, n, n, 0, 0};
    zk_get_int(&r); /* protocolVersion */
    int32_t to = zk_get_int(&r);
    int64_t id = zk_get_long(&r);
    char pw[16];
    int32_t pwlen = zk_get_int(&r);
    if (pwlen == 16) take(&r, pw, 16);
    c->skip = 4 + n;
    if (r.bad || to <= 0) {
        zk_conn_close(c);
        return r.bad ? -1 : ZK_ERR_SESSIONEXPIRED;
    }
    c->session = id;
    c->timeout_ms = to;
    memcpy(c->passwd, pw, 16);
    return 0;
}

void zk_conn_close(struct zk_conn *c) {
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    c->have = c->skip = 0;
}

int32_t zk_send(struct zk_conn *c, int32_t op, const struct zk_buf *body) {
    if (c->fd < 0) return 0;
    unsigned char raw[8];
    struct zk_buf h = {raw, 0, sizeof raw, 0, 0};
    int32_t xid = op == ZK_OP_PING ? ZK_XID_PING : ++c->xid;
    zk_put_int(&h, xid);
    zk_put_int(&h, op);
    return send_packet(c->fd, &h, body) == 0 ? xid : 0;
}

int zk_poll(struct zk_conn *c, int32_t *xid, int32_t *err, struct zk_buf *body) {
    if (c->fd < 0) return -1;
    size_t n;
    int st = fill(c, 0, &n);
    if (st != 1) return st;
    struct zk_buf r = {c->in + 4, n, n, 0, 0};
    *xid = zk_get_int(&r);
    zk_get_long(&r); /* zxid */
    *err = zk_get_int(&r);
    c->skip = 4 + n;
    if (r.bad) return -1;
    *body = (struct zk_buf){c->in + 4 + 16, n - 16, n - 16, 0, 0};
    return 1;
}

int zk_call(struct zk_conn *c, int32_t op, const struct zk_buf *req, struct zk_buf *reply) {
    int32_t want = zk_send(c, op, req);
    if (!want) return ZK_ERR_CONNLOSS;
    int64_t end = ms_now() + ZK_TIMEOUT_MS;
    for (;;) {
        int32_t xid, err;
        int st = zk_poll(c, &xid, &err, reply);
        if (st < 0) return ZK_ERR_CONNLOSS;
        if (st == 1) {
            if (xid == want) return err;
            continue;
        }
        int64_t left = end - ms_now();
        if (left <= 0) return ZK_ERR_CONNLOSS;
        struct pollfd p = {c->fd, POLLIN, 0};
        poll(&p, 1, (int)left);
    }
}

int zk_session_ok(int port) {
    struct zk_conn c;
    if (zk_conn_open(&c, port, 4000, 0, NULL) != 0) return 0;
    unsigned char raw[4];
    struct zk_buf b = {raw, 0, sizeof raw, 0, 0}, r;
    int err = zk_call(&c, ZK_OP_CLOSE, &b, &r);
    zk_conn_close(&c);
    return err == ZK_ERR_OK;
}

int zk_ruok(int port) {
    int fd = tcp_open(port);
    if (fd < 0) return 0;
    char buf[8] = "";
    size_t got = 0;
    if (write_all(fd, (const unsigned char *)"ruok", 4) == 0) {
        for (;;) {
            ssize_t r = recv(fd, buf + got, sizeof buf - 1 - got, 0);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            got += (size_t)r;
        }
    }
    close(fd);
    buf[got] = 0;
    return strcmp(buf, "imok") == 0;
}
