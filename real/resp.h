/* The Redis client of the redis backends of `locksim real`, over hiredis
 * (Debian's libhiredis-dev 0.14.1): commands as arrays of bulk strings on
 * 127.0.0.1, replies (status, error, integer, bulk, nil, arrays) copied into
 * a caller-owned struct so the stores never see hiredis's types. */
#ifndef LOCKSIM_RESP_H
#define LOCKSIM_RESP_H

#include <stddef.h>

#define RESP_STR_MAX 256
#define RESP_ARR_MAX 4
/* A connect, a send or a reply that takes longer than this fails (errno
 * ETIMEDOUT) instead of blocking: a server that accepts but never answers
 * (stopped, or not Redis) cannot make the driver wait forever. Redis on
 * loopback answers in well under a millisecond. */
#define RESP_TIMEOUT_MS 2000

enum resp_type { RESP_NIL, RESP_STATUS, RESP_ERROR, RESP_INT, RESP_BULK, RESP_ARRAY };

/* One reply. Strings longer than RESP_STR_MAX - 1 bytes are cut; an array's
 * first RESP_ARR_MAX integer (or numeric bulk) elements are kept in elem[]. */
struct resp_reply {
    enum resp_type type;
    long long integer;            /* RESP_INT */
    char str[RESP_STR_MAX];       /* RESP_STATUS, RESP_ERROR, RESP_BULK */
    int nelem;                    /* RESP_ARRAY: elements in the reply */
    long long elem[RESP_ARR_MAX]; /* RESP_ARRAY: the first ones as integers */
};

struct redisContext;

/* A connection: caller-owned, opened by resp_connect, closed by resp_close.
 * fd is the socket (hiredis's), for poll and setsockopt; fd -1 means closed,
 * and a caller may set it to -1 to mark a struct never opened (ctx is then
 * never read). ctx is hiredis's context, owned by the connection while
 * fd >= 0 and freed by resp_close. */
struct resp_conn {
    int fd;                   /* -1 when closed */
    struct redisContext *ctx; /* hiredis's, valid while fd >= 0 */
};

/* Connect to 127.0.0.1:port, within RESP_TIMEOUT_MS for this and every
 * later send and reply. 0, or -1 with fd -1 (errno says why: ETIMEDOUT,
 * ECONNREFUSED, ...). */
int resp_connect(struct resp_conn *c, int port);
/* Send one command of argc arguments (NUL-terminated strings). 0 or -1. */
int resp_send(struct resp_conn *c, int argc, const char *const *argv);
/* Read one reply. 0, or -1 on a closed connection (errno ECONNRESET), a
 * malformed reply (EPROTO), or none within RESP_TIMEOUT_MS (ETIMEDOUT).
 * After a -1 the connection is dead: every later call fails until
 * resp_close and resp_connect. */
int resp_recv(struct resp_conn *c, struct resp_reply *r);
/* 1 when bytes of a reply were received and not yet returned by resp_recv
 * (poll on fd does not see them), else 0. */
int resp_pending(const struct resp_conn *c);
/* resp_send then resp_recv. */
int resp_command(struct resp_conn *c, struct resp_reply *r, int argc, const char *const *argv);
/* Closes the socket and frees the context; fd becomes -1. A no-op when
 * fd is -1. */
void resp_close(struct resp_conn *c);

#endif
