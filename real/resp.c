/* The Redis client (real/resp.h) over hiredis's blocking context: one
 * command at a time, its reply converted into struct resp_reply. */
#include "resp.h"

#include <hiredis/hiredis.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

/* errno for a context hiredis marked failed; io_errno is errno as the
 * failing read or write left it. A socket timeout (SO_RCVTIMEO,
 * SO_SNDTIMEO) reads as EAGAIN: ETIMEDOUT, as the header promises. */
static int fail_errno(const redisContext *ctx, int io_errno) {
    int e;
    switch (ctx->err) {
    case REDIS_ERR_IO: e = io_errno == EAGAIN || io_errno == EWOULDBLOCK ? ETIMEDOUT : io_errno; break;
    case REDIS_ERR_EOF: e = ECONNRESET; break;
    case REDIS_ERR_PROTOCOL: e = EPROTO; break;
    case REDIS_ERR_OOM: e = ENOMEM; break;
    default: e = EIO; break;
    }
    return e ? e : EIO;
}

static int fail(struct resp_conn *c, int io_errno) {
    errno = fail_errno(c->ctx, io_errno);
    return -1;
}

int resp_connect(struct resp_conn *c, int port) {
    c->fd = -1;
    c->ctx = NULL;
    struct timeval tv = {RESP_TIMEOUT_MS / 1000, (RESP_TIMEOUT_MS % 1000) * 1000};
    /* hiredis bounds the connect by tv (a non-blocking connect and a poll;
     * a timeout is ETIMEDOUT) and sets TCP_NODELAY; redisSetTimeout bounds
     * every later read and write (SO_RCVTIMEO, SO_SNDTIMEO). */
    redisContext *ctx = redisConnectWithTimeout("127.0.0.1", port, tv);
    int e = errno;
    if (!ctx) {
        errno = ENOMEM;
        return -1;
    }
    if (!ctx->err && redisSetTimeout(ctx, tv) != REDIS_OK) e = errno;
    if (ctx->err) {
        e = fail_errno(ctx, e);
        redisFree(ctx);
        errno = e;
        return -1;
    }
    c->ctx = ctx;
    c->fd = ctx->fd;
    return 0;
}

void resp_close(struct resp_conn *c) {
    if (c->fd >= 0 && c->ctx) redisFree(c->ctx);
    c->ctx = NULL;
    c->fd = -1;
}

int resp_send(struct resp_conn *c, int argc, const char *const *argv) {
    if (c->fd < 0) {
        errno = EBADF;
        return -1;
    }
    /* hiredis takes the arguments as const char **: it reads them only. */
    if (redisAppendCommandArgv(c->ctx, argc, (const char **)argv, NULL) != REDIS_OK) return fail(c, errno);
    /* A write cut by a signal (a SIGSTOP/SIGCONT of this client) is
     * retried: hiredis returns with done still 0. */
    int done = 0;
    while (!done)
        if (redisBufferWrite(c->ctx, &done) != REDIS_OK) return fail(c, errno);
    return 0;
}

/* A hiredis reply element as an integer: its integer, or its digits. */
static long long as_integer(const redisReply *e) {
    if (e->type == REDIS_REPLY_INTEGER) return e->integer;
    return e->str ? strtoll(e->str, NULL, 10) : 0;
}

static void convert(const redisReply *h, struct resp_reply *r) {
    memset(r, 0, sizeof *r);
    switch (h->type) {
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
    case REDIS_REPLY_STRING: {
        r->type = h->type == REDIS_REPLY_STATUS ? RESP_STATUS : h->type == REDIS_REPLY_ERROR ? RESP_ERROR : RESP_BULK;
        size_t n = h->len < sizeof r->str - 1 ? h->len : sizeof r->str - 1;
        memcpy(r->str, h->str, n);
        break;
    }
    case REDIS_REPLY_INTEGER:
        r->type = RESP_INT;
        r->integer = h->integer;
        break;
    case REDIS_REPLY_ARRAY:
        r->type = RESP_ARRAY;
        r->nelem = (int)h->elements;
        for (size_t i = 0; i < h->elements && i < RESP_ARR_MAX; i++) r->elem[i] = as_integer(h->element[i]);
        break;
    default: r->type = RESP_NIL; break;
    }
}

int resp_recv(struct resp_conn *c, struct resp_reply *r) {
    if (c->fd < 0) {
        errno = EBADF;
        return -1;
    }
    /* A reply already read whole comes first; else read what the socket
     * has (one read, bounded by SO_RCVTIMEO; a read cut by a signal is
     * retried) and try again. */
    void *reply = NULL;
    for (;;) {
        if (redisGetReplyFromReader(c->ctx, &reply) != REDIS_OK) return fail(c, errno);
        if (reply) break;
        if (redisBufferRead(c->ctx) != REDIS_OK) return fail(c, errno);
    }
    convert(reply, r);
    freeReplyObject(reply);
    return 0;
}

int resp_pending(const struct resp_conn *c) {
    if (c->fd < 0) return 0;
    const redisReader *rd = c->ctx->reader;
    return rd->pos < rd->len || rd->ridx >= 0;
}

int resp_command(struct resp_conn *c, struct resp_reply *r, int argc, const char *const *argv) {
    if (resp_send(c, argc, argv) != 0) return -1;
    return resp_recv(c, r);
}
