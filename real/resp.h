/* A small RESP2 client over TCP on 127.0.0.1: enough of the Redis protocol
 * for the redis backend of `locksim real` (commands as arrays of bulk
 * strings; replies: status, error, integer, bulk, nil, arrays of those). */
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

/* A connection: caller-owned, opened by resp_connect, closed by resp_close. */
struct resp_conn {
    int fd;         /* -1 when closed */
    char buf[4096]; /* bytes received, not yet parsed: [off, len) */
    size_t off, len;
};

/* Connect to 127.0.0.1:port, within RESP_TIMEOUT_MS for this and every
 * later send and reply. 0, or -1 (errno says why). */
int resp_connect(struct resp_conn *c, int port);
/* Send one command of argc arguments (NUL-terminated strings). 0 or -1. */
int resp_send(struct resp_conn *c, int argc, const char *const *argv);
/* Read one reply. 0, or -1 on a closed connection, a malformed reply, or
 * none within RESP_TIMEOUT_MS (errno ETIMEDOUT). */
int resp_recv(struct resp_conn *c, struct resp_reply *r);
/* resp_send then resp_recv. */
int resp_command(struct resp_conn *c, struct resp_reply *r, int argc, const char *const *argv);
void resp_close(struct resp_conn *c);

#endif
