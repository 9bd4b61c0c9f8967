/* A minimal HTTP/1.1 client over TCP on 127.0.0.1, enough for etcd's
 * gRPC gateway (POST a JSON body, read the whole answer: Connection: close,
 * so the answer ends where the socket does, chunked or not), and the few
 * JSON fields the etcd backend reads out of an answer. */
#ifndef LOCKSIM_HTTP_H
#define LOCKSIM_HTTP_H

#include <stddef.h>
#include <stdint.h>

/* A request or an answer that takes longer than this fails (a stopped or
 * foreign server cannot make a client wait forever); etcd on loopback
 * answers in about a millisecond. A v3lock Lock call waits for the lock,
 * so it is sent with http_start and waited for with poll, unbounded. */
#define HTTP_TIMEOUT_MS 2000
#define HTTP_ANSWER_MAX 4096

/* One request in flight: its socket and what came back so far. */
struct http_req {
    int fd; /* -1 when none */
    size_t len;
    char buf[HTTP_ANSWER_MAX];
};

/* Connect to 127.0.0.1:port and send POST path with body. 0, or -1 (errno). */
int http_start(struct http_req *q, int port, const char *path, const char *body);
/* Read what is there without blocking: 1 when the answer is complete (the
 * server closed), 0 when more is to come, -1 on an error. */
int http_poll(struct http_req *q);
/* http_start, then read the whole answer within HTTP_TIMEOUT_MS. 0 or -1;
 * the answer, NUL-terminated, in q->buf. */
int http_call(struct http_req *q, int port, const char *path, const char *body);
void http_close(struct http_req *q);
/* The HTTP status of a complete answer (200), or 0. */
int http_status(const struct http_req *q);

/* The first JSON value named field after from in s: a string's content or
 * a number or word as written, into out; 0, or -1 when absent. */
int json_field(const char *s, const char *field, char *out, size_t n);
/* The same field as an integer (etcd's gateway writes int64 as strings);
 * def when absent. */
int64_t json_field_int(const char *s, const char *field, int64_t def);
/* Base64 of n bytes of p into out (NUL-terminated). */
void http_base64(const char *p, size_t n, char *out, size_t cap);
/* Base64 decode of s into out (NUL-terminated); its length or -1. */
long http_unbase64(const char *s, char *out, size_t cap);

#endif
