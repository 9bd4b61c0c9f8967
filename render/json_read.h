/* A strict reader for one line of JSON at a time, for the formats locksim
 * writes and reads back (shard files, cli/shard.c; traces,
 * render/trace_jsonl.c): objects, arrays, strings (valid UTF-8, escapes
 * decoded, no NUL), integers (no fraction, no exponent, range-checked),
 * true, false and null. No recursion the caller does not write: a reader
 * walks its own format, member by member, naming each value in messages.
 *
 * Every function returns 0 (or the documented value) on success and -1 after
 * writing one sentence into r->err; r->p then points where the error is, so
 * json_col() gives its column. Nothing is allocated: strings are decoded
 * into r->sbuf, which the caller provides, at least as long as the line + 1
 * (an escape never decodes to more bytes than it takes).
 *
 * Why not jansson or json-c (both well kept in Debian): render/ and run/
 * are also compiled to WebAssembly by Debian's emscripten, offline, which
 * cannot link a native Debian library, and bundling a copy would be a second
 * JSON library to keep; both build a tree of allocated values, where a
 * 10^6-event trace is read here line by line with no allocation per value;
 * and their errors do not name the member ("line 12: \"grant\": expected an
 * integer") that a user fixing a hand-edited shard or trace needs. What is
 * given up: a general reader; ours takes only the shapes our writers
 * produce, and is fuzzed (fuzz/fuzz_trace.c, fuzz/fuzz_shard.c). */
#ifndef LOCKSIM_JSON_READ_H
#define LOCKSIM_JSON_READ_H

#include <stddef.h>
#include <stdint.h>

struct json_rd {
    const char *start, *p, *end; /* the line (without its newline), the cursor */
    char *sbuf;                  /* borrowed: decoded strings land here, NUL-terminated */
    size_t scap;                 /* its size: at least end - start + 1 */
    char *err;                   /* borrowed: the message of the first error */
    size_t errlen;
};

/* Point r at the line [s, s + len) (no newline; a trailing "\r" is dropped). */
void json_rd_line(struct json_rd *r, const char *s, size_t len);
/* Write the message (printf-style) and return -1. */
int json_fail(struct json_rd *r, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;
/* The 1-based column of the cursor. */
long json_col(const struct json_rd *r);

/* Skip blanks, then take c: 1 when taken, 0 when the next character is
 * another one. */
int json_take(struct json_rd *r, char c);
/* Skip blanks; the next character, or -1 at the end of the line. */
int json_peek(struct json_rd *r);
/* A string into r->sbuf; *len is its length. what names it in messages. */
int json_str(struct json_rd *r, const char *what, size_t *len);
/* A string of at most cap - 1 bytes, copied into dst. */
int json_str_into(struct json_rd *r, const char *what, char *dst, size_t cap);
/* An integer within [lo, hi]. */
int json_int(struct json_rd *r, const char *what, int64_t lo, int64_t hi, int64_t *out);
/* An unsigned integer within [0, hi]. */
int json_uint(struct json_rd *r, const char *what, uint64_t hi, uint64_t *out);
/* true or false. */
int json_bool(struct json_rd *r, const char *what, int *out);
/* 1 when null was taken, 0 when the next value is not null. */
int json_null(struct json_rd *r);
/* An object member's key, then its colon: the key is in r->sbuf. */
int json_key(struct json_rd *r);
/* The key in r->sbuf looked up in keys[0..n) (n <= 64): its index, with bit
 * index set in *seen; -1 for an unknown or repeated key. */
int json_key_index(struct json_rd *r, const char *const *keys, int n, uint64_t *seen);
/* After a value in an object (close '}') or array (close ']'): 1 when a
 * comma says another follows, 0 when the close ends it, -1 otherwise. */
int json_next(struct json_rd *r, char close, const char *where);
/* -1 naming the first key of keys[0..n) neither seen nor optional. */
int json_missing(struct json_rd *r, const char *const *keys, int n, uint64_t seen, uint64_t optional,
                 const char *where);
/* 0 when only blanks are left on the line. */
int json_eol(struct json_rd *r);

#endif
