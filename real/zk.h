/* A minimal ZooKeeper client over TCP on 127.0.0.1: the jute wire protocol
 * (length-prefixed big-endian packets) for the few requests the zookeeper
 * backend sends (connect, create2, delete, exists, getData, setData,
 * getChildren, multi, ping, closeSession), and the watch events the server
 * pushes. No library: the same idea as real/http.c (real/resp.c is hiredis). The
 * caller owns a struct zk_conn (zk_conn_close frees nothing but its socket). */
#ifndef LOCKSIM_ZK_H
#define LOCKSIM_ZK_H

#include <stddef.h>
#include <stdint.h>

/* A connect, send or reply that takes longer than this fails. */
#define ZK_TIMEOUT_MS 2000
#define ZK_PACKET_MAX 8192

/* ZooKeeper's opcodes (ZooDefs.OpCode) and error codes (KeeperException.Code). */
enum zk_op {
    ZK_OP_CREATE = 1,
    ZK_OP_DELETE = 2,
    ZK_OP_EXISTS = 3,
    ZK_OP_GETDATA = 4,
    ZK_OP_SETDATA = 5,
    ZK_OP_GETCHILDREN = 8,
    ZK_OP_PING = 11,
    ZK_OP_CHECK = 13,
    ZK_OP_MULTI = 14,
    ZK_OP_CREATE2 = 15,
    ZK_OP_CLOSE = -11
};
enum zk_err {
    ZK_ERR_OK = 0,
    ZK_ERR_CONNLOSS = -4,
    ZK_ERR_NONODE = -101,
    ZK_ERR_BADVERSION = -103,
    ZK_ERR_NODEEXISTS = -110,
    ZK_ERR_NOTEMPTY = -111,
    ZK_ERR_SESSIONEXPIRED = -112
};
#define ZK_XID_WATCH (-1)
#define ZK_XID_PING (-2)
#define ZK_EVENT_NODE_DELETED 2
#define ZK_EPHEMERAL_SEQUENTIAL 3

/* One connection and its session. */
struct zk_conn {
    int fd;          /* -1 when closed */
    int64_t session; /* the session ID, 0 = none */
    int timeout_ms;  /* negotiated */
    char passwd[16]; /* the session's password, for a reconnect */
    int32_t xid;     /* the last request's */
    size_t have;     /* bytes received and not yet consumed, in in[] */
    size_t skip;     /* the packet zk_poll returned last, consumed at its next call */
    unsigned char in[ZK_PACKET_MAX + 4];
};

/* A request or reply body being built or read. */
struct zk_buf {
    unsigned char *p;
    size_t len, cap, pos;
    int bad; /* a read past the end or a write past cap */
};

/* A node's Stat, the fields the backend reads. */
struct zk_stat {
    int64_t czxid;
    int32_t version;
};

void zk_put_int(struct zk_buf *b, int32_t v);
void zk_put_long(struct zk_buf *b, int64_t v);
void zk_put_bool(struct zk_buf *b, int v);
void zk_put_str(struct zk_buf *b, const char *s); /* also a buffer of bytes */
/* The world:anyone ACL with every permission (ZooDefs.Ids.OPEN_ACL_UNSAFE). */
void zk_put_open_acl(struct zk_buf *b);
int32_t zk_get_int(struct zk_buf *b);
int64_t zk_get_long(struct zk_buf *b);
/* A string or buffer into out (NUL-terminated, cut to n - 1). */
void zk_get_str(struct zk_buf *b, char *out, size_t n);
void zk_get_stat(struct zk_buf *b, struct zk_stat *st);

/* Connect to 127.0.0.1:port and open a session asking for timeout_ms
 * (session 0), or reopen c->session with its password. 0; ZK_ERR_SESSIONEXPIRED
 * when the server says the session is gone (timeOut 0); -1 on a socket error. */
int zk_conn_open(struct zk_conn *c, int port, int timeout_ms, int64_t session, const char *passwd);
void zk_conn_close(struct zk_conn *c);
/* Send one request (xid, op and body); the xid used, or 0 on an error
 * (xid is ZK_XID_PING for a ping, else the next one). */
int32_t zk_send(struct zk_conn *c, int32_t op, const struct zk_buf *body);
/* Read what has arrived without waiting: 1 and a whole packet's reply
 * header in *xid, *err and its body in *body (valid until the next call),
 * 0 when no whole packet is there yet, -1 when the connection is gone. */
int zk_poll(struct zk_conn *c, int32_t *xid, int32_t *err, struct zk_buf *body);
/* For the driver: a request and its reply, waiting at most ZK_TIMEOUT_MS
 * (watch events and ping replies are skipped); the reply's err, or
 * ZK_ERR_CONNLOSS. */
int zk_call(struct zk_conn *c, int32_t op, const struct zk_buf *req, struct zk_buf *reply);
/* 1 when something answers "imok" to "ruok" on 127.0.0.1:port. */
int zk_ruok(int port);
/* 1 when a session can be opened (and closed) on 127.0.0.1:port: the server
 * answers "imok" to ruok before it runs (data loaded, sessions tracked), and
 * closes a connect request's connection until then. */
int zk_session_ok(int port);

#endif
