/* A minimal HTTP/1.1 client and JSON field reader (real/http.h). */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int http_start(struct http_req *q, int port, const char *path, const char *body) {
    q->len = 0;
    q->buf[0] = 0;
    q->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (q->fd < 0) return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(q->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct timeval tv = {HTTP_TIMEOUT_MS / 1000, (HTTP_TIMEOUT_MS % 1000) * 1000};
    setsockopt(q->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    while (connect(q->fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (errno == EINTR) continue;
        http_close(q);
        return -1;
    }
    char head[256];
    size_t bl = strlen(body);
    int hl = snprintf(head, sizeof head,
                      "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                      "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                      path, bl);
    if (write_all(q->fd, head, (size_t)hl) != 0 || write_all(q->fd, body, bl) != 0) {
        http_close(q);
        return -1;
    }
    fcntl(q->fd, F_SETFL, O_NONBLOCK);
    return 0;
}

int http_poll(struct http_req *q) {
    for (;;) {
        if (q->len + 1 >= sizeof q->buf) return -1;
        ssize_t got = read(q->fd, q->buf + q->len, sizeof q->buf - 1 - q->len);
        if (got > 0) {
            q->len += (size_t)got;
            q->buf[q->len] = 0;
            continue;
        }
        if (got == 0) return 1;
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
        return -1;
    }
}

int http_call(struct http_req *q, int port, const char *path, const char *body) {
    if (http_start(q, port, path, body) != 0) return -1;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t end = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + HTTP_TIMEOUT_MS;
    for (;;) {
        int st = http_poll(q);
        if (st == 1) break;
        if (st < 0) return -1;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t left = end - ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd p = {q->fd, POLLIN, 0};
        poll(&p, 1, (int)left);
    }
    http_close(q);
    return 0;
}

void http_close(struct http_req *q) {
    if (q->fd >= 0) close(q->fd);
    q->fd = -1;
}

int http_status(const struct http_req *q) {
    int code = 0;
    if (sscanf(q->buf, "HTTP/1.%*d %d", &code) != 1) return 0;
    return code;
}

int json_field(const char *s, const char *field, char *out, size_t n) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", field);
    const char *p = strstr(s, pat);
    if (!p || n == 0) return -1;
    p += strlen(pat);
    size_t k = 0;
    if (*p == '"') {
        p++;
        while (*p && *p != '"' && k + 1 < n) out[k++] = *p++;
    } else {
        while (*p && !strchr(",}] \r\n", *p) && k + 1 < n) out[k++] = *p++;
    }
    out[k] = 0;
    return 0;
}

int64_t json_field_int(const char *s, const char *field, int64_t def) {
    char v[32];
    if (json_field(s, field, v, sizeof v) != 0) return def;
    return strtoll(v, NULL, 10);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void http_base64(const char *p, size_t n, char *out, size_t cap) {
    size_t k = 0;
    for (size_t i = 0; i < n && k + 5 < cap; i += 3) {
        unsigned v = (unsigned char)p[i] << 16;
        if (i + 1 < n) v |= (unsigned char)p[i + 1] << 8;
        if (i + 2 < n) v |= (unsigned char)p[i + 2];
        out[k++] = b64[v >> 18 & 63];
        out[k++] = b64[v >> 12 & 63];
        out[k++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
        out[k++] = i + 2 < n ? b64[v & 63] : '=';
    }
    out[k] = 0;
}

long http_unbase64(const char *s, char *out, size_t cap) {
    size_t k = 0;
    unsigned v = 0;
    int bits = 0;
    for (; *s && *s != '='; s++) {
        const char *c = strchr(b64, *s);
        if (!c) return -1;
        v = v << 6 | (unsigned)(c - b64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (k + 1 >= cap) return -1;
            out[k++] = (char)(v >> bits & 255);
        }
    }
    out[k] = 0;
    return (long)k;
}
