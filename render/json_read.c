/* The strict one-line JSON reader (json_read.h). */
#include "json_read.h"

#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void json_rd_line(struct json_rd *r, const char *s, size_t len) {
    r->start = r->p = s;
    r->end = s + len;
    if (r->end > r->p && r->end[-1] == '\r') r->end--;
}

int json_fail(struct json_rd *r, const char *fmt, ...) {
    if (r->err && r->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err, r->errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

long json_col(const struct json_rd *r) { return (long)(r->p - r->start) + 1; }

static void ws(struct json_rd *r) {
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t')) r->p++;
}

int json_take(struct json_rd *r, char c) {
    ws(r);
    if (r->p < r->end && *r->p == c) {
        r->p++;
        return 1;
    }
    return 0;
}

int json_peek(struct json_rd *r) {
    ws(r);
    return r->p < r->end ? (unsigned char)*r->p : -1;
}

static int hex4(const char *p, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

/* cp as UTF-8 at out; the number of bytes. */
static size_t put_utf8(char *out, unsigned cp) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* 1 for the bytes a string holds as they are: printable ASCII but '"' and '\\'. */
#define JSON_PLAIN1(b) ((b) >= 0x20 && (b) < 0x7f && (b) != '"' && (b) != '\\')
#define JSON_PLAIN4(b) JSON_PLAIN1(b), JSON_PLAIN1((b) + 1), JSON_PLAIN1((b) + 2), JSON_PLAIN1((b) + 3)
#define JSON_PLAIN_ROW(b) JSON_PLAIN4(b), JSON_PLAIN4((b) + 4), JSON_PLAIN4((b) + 8), JSON_PLAIN4((b) + 12)
static const unsigned char json_plain[256] = {
        JSON_PLAIN_ROW(0x00), JSON_PLAIN_ROW(0x10), JSON_PLAIN_ROW(0x20), JSON_PLAIN_ROW(0x30),
        JSON_PLAIN_ROW(0x40), JSON_PLAIN_ROW(0x50), JSON_PLAIN_ROW(0x60), JSON_PLAIN_ROW(0x70),
};

int json_str(struct json_rd *r, const char *what, size_t *len) {
    if (!json_take(r, '"')) return json_fail(r, "\"%s\": expected a string", what);
    if ((size_t)(r->end - r->start) >= r->scap) return json_fail(r, "\"%s\": the string buffer is too small", what);
    size_t n = 0;
    for (;;) {
        /* A run of printable ASCII other than '"' and '\\' (nearly every
         * byte of a trace) is copied at once: one test a byte. */
        const char *q = r->p;
        while (q < r->end && json_plain[(unsigned char)*q]) q++;
        if (q > r->p) {
            memcpy(r->sbuf + n, r->p, (size_t)(q - r->p));
            n += (size_t)(q - r->p);
            r->p = q;
        }
        if (r->p >= r->end) return json_fail(r, "\"%s\": unterminated string", what);
        unsigned char c = (unsigned char)*r->p;
        if (c == '"') {
            r->p++;
            break;
        }
        if (c < 0x20) return json_fail(r, "\"%s\": control character in a string (escape it)", what);
        if (c == '\\') {
            if (r->end - r->p < 2) return json_fail(r, "\"%s\": unterminated string", what);
            char e = r->p[1];
            const char *simple = e ? strchr("\"\\/bfnrt", e) : NULL;
            if (simple) {
                static const char map[] = "\"\\/\b\f\n\r\t";
                r->sbuf[n++] = map[simple - "\"\\/bfnrt"];
                r->p += 2;
                continue;
            }
            if (e != 'u') return json_fail(r, "\"%s\": bad escape '\\%c'", what, e);
            unsigned cp, lo;
            if (r->end - r->p < 6 || hex4(r->p + 2, &cp) != 0) return json_fail(r, "\"%s\": bad \\u escape", what);
            if (cp >= 0xdc00 && cp <= 0xdfff) return json_fail(r, "\"%s\": lone UTF-16 surrogate", what);
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (r->end - r->p < 12 || r->p[6] != '\\' || r->p[7] != 'u' || hex4(r->p + 8, &lo) != 0 ||
                    lo < 0xdc00 || lo > 0xdfff)
                    return json_fail(r, "\"%s\": lone UTF-16 surrogate", what);
                r->p += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            if (cp == 0) return json_fail(r, "\"%s\": \\u0000 is not allowed", what);
            r->p += 6;
            n += put_utf8(r->sbuf + n, cp); /* never longer than the escape it came from */
            continue;
        }
        size_t l = text_utf8_len((const unsigned char *)r->p, (size_t)(r->end - r->p));
        if (l == 0) return json_fail(r, "\"%s\": invalid UTF-8", what);
        memcpy(r->sbuf + n, r->p, l);
        n += l;
        r->p += l;
    }
    r->sbuf[n] = '\0';
    *len = n;
    return 0;
}

int json_str_into(struct json_rd *r, const char *what, char *dst, size_t cap) {
    size_t len;
    if (json_str(r, what, &len) != 0) return -1;
    if (len >= cap) return json_fail(r, "\"%s\" is longer than %zu bytes", what, cap - 1);
    memcpy(dst, r->sbuf, len + 1);
    return 0;
}

/* -?(0|[1-9][0-9]*): its magnitude in *v (*over when past 2^64 - 1). */
static int digits(struct json_rd *r, const char *what, int *neg, uint64_t *v, int *over) {
    ws(r);
    const char *s = r->p;
    *neg = 0;
    *over = 0;
    *v = 0;
    if (s < r->end && *s == '-') {
        *neg = 1;
        s++;
    }
    if (s >= r->end || *s < '0' || *s > '9') return json_fail(r, "\"%s\": expected an integer", what);
    if (*s == '0' && s + 1 < r->end && s[1] >= '0' && s[1] <= '9') return json_fail(r, "\"%s\": leading zero", what);
    for (; s < r->end && *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (*v > (UINT64_MAX - d) / 10) *over = 1;
        else *v = *v * 10 + d;
    }
    if (s < r->end && (*s == '.' || *s == 'e' || *s == 'E')) return json_fail(r, "\"%s\": expected an integer", what);
    r->p = s;
    return 0;
}

int json_int(struct json_rd *r, const char *what, int64_t lo, int64_t hi, int64_t *out) {
    int neg, over;
    uint64_t v;
    if (digits(r, what, &neg, &v, &over) != 0) return -1;
    if (over || (!neg && v > (uint64_t)INT64_MAX) || (neg && v > (uint64_t)INT64_MAX + 1))
        return json_fail(r, "\"%s\": out of range", what);
    int64_t x = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
    if (x < lo || x > hi) return json_fail(r, "\"%s\": out of range", what);
    *out = x;
    return 0;
}

int json_uint(struct json_rd *r, const char *what, uint64_t hi, uint64_t *out) {
    int neg, over;
    uint64_t v;
    if (digits(r, what, &neg, &v, &over) != 0) return -1;
    if (over || (neg && v) || v > hi) return json_fail(r, "\"%s\": out of range", what);
    *out = v;
    return 0;
}

static int word(struct json_rd *r, const char *w) {
    size_t l = strlen(w);
    ws(r);
    if ((size_t)(r->end - r->p) >= l && memcmp(r->p, w, l) == 0) {
        r->p += l;
        return 1;
    }
    return 0;
}

int json_bool(struct json_rd *r, const char *what, int *out) {
    if (word(r, "true")) *out = 1;
    else if (word(r, "false")) *out = 0;
    else return json_fail(r, "\"%s\": expected true or false", what);
    return 0;
}

int json_null(struct json_rd *r) { return word(r, "null"); }

int json_key(struct json_rd *r) {
    size_t len;
    if (json_peek(r) != '"') return json_fail(r, "expected a key string");
    if (json_str(r, "key", &len) != 0) return -1;
    if (!json_take(r, ':')) return json_fail(r, "expected ':' after key \"%s\"", r->sbuf);
    return 0;
}

/* Our writers put keys in the order of the reader's list, so the search
 * starts where the keys seen so far end: a canonical line costs one compare
 * per key. Any order is accepted all the same. */
int json_key_index(struct json_rd *r, const char *const *keys, int n, uint64_t *seen) {
    if (n > 64) n = 64;
    int from = __builtin_popcountll(*seen);
    for (int j = 0; j < n; j++) {
        int i = (from + j) % n;
        if (keys[i][0] != r->sbuf[0] || strcmp(r->sbuf, keys[i]) != 0) continue;
        if (*seen & ((uint64_t)1 << i)) return json_fail(r, "duplicate key \"%s\"", keys[i]);
        *seen |= (uint64_t)1 << i;
        return i;
    }
    return json_fail(r, "unknown key \"%.100s\"", r->sbuf);
}

int json_next(struct json_rd *r, char close, const char *where) {
    if (json_take(r, ',')) return 1;
    if (json_take(r, close)) return 0;
    return json_fail(r, "expected ',' or '%c' in %s", close, where);
}

int json_missing(struct json_rd *r, const char *const *keys, int n, uint64_t seen, uint64_t optional,
                 const char *where) {
    for (int i = 0; i < n && i < 64; i++)
        if (!(seen & ((uint64_t)1 << i)) && !(optional & ((uint64_t)1 << i)))
            return json_fail(r, "%s: missing key \"%s\"", where, keys[i]);
    return 0;
}

int json_eol(struct json_rd *r) {
    ws(r);
    return r->p == r->end ? 0 : json_fail(r, "unexpected text after the object");
}
