/* A small RESP2 client (real/resp.h): blocking sockets on loopback, one
 * command at a time. */
#include "resp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

int resp_connect(struct resp_conn *c, int port) {
    c->off = c->len = 0;
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (c->fd < 0) return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    /* Linux bounds connect by SO_SNDTIMEO too (socket(7)). A read cut by a
     * SIGSTOP/SIGCONT of the client fails with EINTR and is retried. */
    struct timeval tv = {RESP_TIMEOUT_MS / 1000, (RESP_TIMEOUT_MS % 1000) * 1000};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    while (connect(c->fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (errno == EINTR) continue;
        int e = errno == EINPROGRESS || errno == EAGAIN ? ETIMEDOUT : errno;
        close(c->fd);
        c->fd = -1;
        errno = e;
        return -1;
    }
    return 0;
}

void resp_close(struct resp_conn *c) {
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
}

static int write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) errno = ETIMEDOUT;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int resp_send(struct resp_conn *c, int argc, const char *const *argv) {
    char out[2048];
    size_t n = (size_t)snprintf(out, sizeof out, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        size_t l = strlen(argv[i]);
        if (n + l + 32 > sizeof out) return -1;
        n += (size_t)snprintf(out + n, sizeof out - n, "$%zu\r\n", l);
        memcpy(out + n, argv[i], l);
        n += l;
        out[n++] = '\r';
        out[n++] = '\n';
    }
    return write_all(c->fd, out, n);
}

/* One line without its CRLF into line (cut at max-1). 0 or -1. */
static int read_line(struct resp_conn *c, char *line, size_t max) {
    size_t k = 0;
    for (;;) {
        while (c->off < c->len) {
            char ch = c->buf[c->off++];
            if (ch == '\n') {
                if (k && line[k - 1] == '\r') k--;
                line[k] = 0;
                return 0;
            }
            if (k + 1 < max) line[k++] = ch;
        }
        ssize_t r = read(c->fd, c->buf, sizeof c->buf);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) errno = ETIMEDOUT;
        if (r <= 0) return -1;
        c->off = 0;
        c->len = (size_t)r;
    }
}

/* n bytes of a bulk string and its CRLF; the first max-1 kept in s. */
static int read_bulk(struct resp_conn *c, long long n, char *s, size_t max) {
    long long need = n + 2, k = 0;
    while (need > 0) {
        if (c->off == c->len) {
            ssize_t r = read(c->fd, c->buf, sizeof c->buf);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) errno = ETIMEDOUT;
            if (r <= 0) return -1;
            c->off = 0;
            c->len = (size_t)r;
        }
        char ch = c->buf[c->off++];
        if (k < n && (size_t)k + 1 < max) s[k] = ch;
        k++;
        need--;
    }
    s[(size_t)n + 1 < max ? (size_t)n : max - 1] = 0;
    return 0;
}

static int recv_depth(struct resp_conn *c, struct resp_reply *r, int depth) {
    char line[RESP_STR_MAX];
    memset(r, 0, sizeof *r);
    if (read_line(c, line, sizeof line) != 0 || !line[0]) return -1;
    char *end;
    switch (line[0]) {
    case '+':
    case '-':
        r->type = line[0] == '+' ? RESP_STATUS : RESP_ERROR;
        snprintf(r->str, sizeof r->str, "%s", line + 1);
        return 0;
    case ':':
        r->type = RESP_INT;
        r->integer = strtoll(line + 1, &end, 10);
        return *end ? -1 : 0;
    case '$': {
        long long n = strtoll(line + 1, &end, 10);
        if (*end) return -1;
        if (n < 0) {
            r->type = RESP_NIL;
            return 0;
        }
        r->type = RESP_BULK;
        return read_bulk(c, n, r->str, sizeof r->str);
    }
    case '*': {
        long long n = strtoll(line + 1, &end, 10);
        if (*end || depth > 2) return -1;
        if (n < 0) {
            r->type = RESP_NIL;
            return 0;
        }
        r->type = RESP_ARRAY;
        r->nelem = (int)n;
        for (long long i = 0; i < n; i++) {
            struct resp_reply e;
            if (recv_depth(c, &e, depth + 1) != 0) return -1;
            if (i < RESP_ARR_MAX) r->elem[i] = e.type == RESP_INT ? e.integer : strtoll(e.str, NULL, 10);
        }
        return 0;
    }
    default: return -1;
    }
}

int resp_recv(struct resp_conn *c, struct resp_reply *r) { return recv_depth(c, r, 0); }

int resp_command(struct resp_conn *c, struct resp_reply *r, int argc, const char *const *argv) {
    if (resp_send(c, argc, argv) != 0) return -1;
    return resp_recv(c, r);
}
