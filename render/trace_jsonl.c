/* Traces as JSON Lines: a canonical writer and a strict reader for exactly
 * what it writes (a tiny hand-written JSON subset parser: objects, strings,
 * integers, null, one array of node objects). */
#include "trace_jsonl.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

static const char *const node_kinds[] = {
    [TRACE_NODE_CLIENT] = "client",
    [TRACE_NODE_SERVER] = "server",
    [TRACE_NODE_RESOURCE] = "resource",
};
#define NNODE_KINDS 3

/* ---- Node names: a hash table from name to index ------------------------ */

struct names {
    int *slot;   /* node index + 1; 0 = free */
    size_t n;    /* a power of two */
};

static uint64_t hash_bytes(const char *s, size_t len) {
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

static const char *node_name(const struct trace *tr, int i, size_t *len) {
    const char *s = tr->nodes[i].name;
    *len = strnlen(s, sizeof tr->nodes[i].name);
    return s;
}

/* Find name among tr's nodes: its index, or -1. */
static int names_find(const struct names *nt, const struct trace *tr, const char *s, size_t len) {
    if (!nt->n) return -1;
    for (size_t j = (size_t)hash_bytes(s, len) & (nt->n - 1); nt->slot[j];
         j = (j + 1) & (nt->n - 1)) {
        size_t l;
        const char *p = node_name(tr, nt->slot[j] - 1, &l);
        if (l == len && memcmp(p, s, len) == 0) return nt->slot[j] - 1;
    }
    return -1;
}

/* Index every node of tr. Returns 0, -1 on OOM, or -2 (with *dup set to the
 * node) when two nodes share a name. */
static int names_build(struct names *nt, const struct trace *tr, int *dup) {
    size_t n = 16;
    while (n < (size_t)tr->nnodes * 2) n *= 2;
    nt->slot = calloc(n, sizeof *nt->slot);
    if (!nt->slot) return -1;
    nt->n = n;
    for (int i = 0; i < tr->nnodes; i++) {
        size_t len;
        const char *s = node_name(tr, i, &len);
        size_t j = (size_t)hash_bytes(s, len) & (n - 1);
        for (; nt->slot[j]; j = (j + 1) & (n - 1)) {
            size_t l;
            const char *p = node_name(tr, nt->slot[j] - 1, &l);
            if (l == len && memcmp(p, s, len) == 0) {
                *dup = i;
                return -2;
            }
        }
        nt->slot[j] = i + 1;
    }
    return 0;
}

/* ---- Writer ------------------------------------------------------------- */

static void put_str(FILE *out, const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', out);
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            fputc('\\', out);
            fputc(c, out);
            i++;
        } else if (c < 0x20) {
            switch (c) {
            case '\n': fputs("\\n", out); break;
            case '\r': fputs("\\r", out); break;
            case '\t': fputs("\\t", out); break;
            case '\b': fputs("\\b", out); break;
            case '\f': fputs("\\f", out); break;
            default: fprintf(out, "\\u%04x", c);
            }
            i++;
        } else {
            size_t l = text_utf8_len(p + i, n - i);
            if (l == 0) {
                fputs(TEXT_REPLACEMENT, out); /* for a byte that is not UTF-8 */
                i++;
            } else {
                fwrite(p + i, 1, l, out);
                i += l;
            }
        }
    }
    fputc('"', out);
}

static void put_node(FILE *out, const struct trace *tr, int node) {
    if (node == TRACE_NO_NODE) {
        fputs("null", out);
        return;
    }
    size_t len;
    const char *s = node_name(tr, node, &len);
    put_str(out, s, len);
}

int trace_write_jsonl(FILE *out, const struct trace *tr) {
    /* Check first, so that nothing is written for a trace that cannot be. */
    for (int i = 0; i < tr->nnodes; i++) {
        if (tr->nodes[i].kind < 0 || tr->nodes[i].kind >= NNODE_KINDS) return -1;
        if (tr->nodes[i].name[0] == '\0') return -1;
    }
    struct names nt = {NULL, 0};
    int dup = -1;
    int rc = names_build(&nt, tr, &dup);
    free(nt.slot);
    if (rc != 0) return -1;
    for (size_t i = 0; i < tr->len; i++) {
        const struct trace_event *e = &tr->ev[i];
        if (e->kind >= TRACE_KIND_COUNT ||
            trace_kind_from_name(trace_kind_name(e->kind)) != e->kind)
            return -1;
        if ((e->node != TRACE_NO_NODE && (e->node < 0 || e->node >= tr->nnodes)) ||
            (e->peer != TRACE_NO_NODE && (e->peer < 0 || e->peer >= tr->nnodes)))
            return -1;
    }

    fprintf(out, "{\"format\":\"%s\",\"version\":%d,\"title\":", TRACE_JSONL_FORMAT,
            TRACE_FORMAT_VERSION);
    put_str(out, tr->title, strnlen(tr->title, sizeof tr->title));
    fputs(",\"algo\":", out);
    put_str(out, tr->algo, strnlen(tr->algo, sizeof tr->algo));
    fprintf(out, ",\"seed\":%" PRIu64 ",\"nodes\":[", tr->seed);
    for (int i = 0; i < tr->nnodes; i++) {
        fputs(i ? ",{\"name\":" : "{\"name\":", out);
        put_node(out, tr, i);
        fprintf(out, ",\"kind\":\"%s\"}", node_kinds[tr->nodes[i].kind]);
    }
    fputs("]}\n", out);
    for (size_t i = 0; i < tr->len; i++) {
        const struct trace_event *e = &tr->ev[i];
        fprintf(out, "{\"seq\":%" PRIu32 ",\"t_ns\":%" PRId64 ",\"kind\":\"%s\",\"node\":", e->seq,
                e->t, trace_kind_name(e->kind));
        put_node(out, tr, e->node);
        fputs(",\"peer\":", out);
        put_node(out, tr, e->peer);
        fprintf(out, ",\"token\":%" PRIu64 ",\"grant\":%" PRIu32 ",\"a\":%" PRId64
                     ",\"b\":%" PRId64, e->token, e->grant, e->a, e->b);
        if (e->text) {
            fputs(",\"text\":", out);
            put_str(out, e->text, strlen(e->text));
        }
        fputs("}\n", out);
    }
    return ferror(out) ? -1 : 0;
}

/* ---- Reader ------------------------------------------------------------- */

struct rd {
    struct trace *tr;
    const char *p, *end;  /* the current line, without its newline */
    int line;
    char *err;
    size_t errlen;
    char *sbuf;           /* decoded strings; as long as the longest line + 1 */
    size_t scap;
    struct names names;
    sim_ns last_t;
};

static int fail(struct rd *r, const char *fmt, ...) {
    if (r->err && r->errlen) {
        int k = snprintf(r->err, r->errlen, "line %d: ", r->line);
        if (k >= 0 && (size_t)k < r->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(r->err + k, r->errlen - (size_t)k, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

static void ws(struct rd *r) {
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t')) r->p++;
}

/* Skip whitespace, then take the character c. */
static int take(struct rd *r, char c) {
    ws(r);
    if (r->p < r->end && *r->p == c) {
        r->p++;
        return 1;
    }
    return 0;
}

static int peek(struct rd *r) {
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

/* Parse a JSON string into r->sbuf; *len = its length (NUL-terminated too).
 * what names the value in messages. */
static int str(struct rd *r, const char *what, size_t *len) {
    if (!take(r, '"')) return fail(r, "\"%s\": expected a string", what);
    size_t n = 0;
    for (;;) {
        if (r->p >= r->end) return fail(r, "\"%s\": unterminated string", what);
        unsigned char c = (unsigned char)*r->p;
        if (c == '"') {
            r->p++;
            break;
        }
        if (c < 0x20) return fail(r, "\"%s\": control character in a string (escape it)", what);
        if (c == '\\') {
            if (r->end - r->p < 2) return fail(r, "\"%s\": unterminated string", what);
            char e = r->p[1];
            r->p += 2;
            const char *simple = strchr("\"\\/bfnrt", e);
            if (e && simple) {
                static const char map[] = "\"\\/\b\f\n\r\t";
                r->sbuf[n++] = map[simple - "\"\\/bfnrt"];
                continue;
            }
            if (e != 'u') return fail(r, "\"%s\": bad escape '\\%c'", what, e);
            unsigned cp, lo;
            if (r->end - r->p < 4 || hex4(r->p, &cp) != 0)
                return fail(r, "\"%s\": bad \\u escape", what);
            r->p += 4;
            if (cp >= 0xdc00 && cp <= 0xdfff) return fail(r, "\"%s\": lone UTF-16 surrogate", what);
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (r->end - r->p < 6 || r->p[0] != '\\' || r->p[1] != 'u' ||
                    hex4(r->p + 2, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff)
                    return fail(r, "\"%s\": lone UTF-16 surrogate", what);
                r->p += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            if (cp == 0) return fail(r, "\"%s\": \\u0000 is not allowed", what);
            /* UTF-8 is never longer than the escape it came from. */
            if (cp < 0x80) {
                r->sbuf[n++] = (char)cp;
            } else if (cp < 0x800) {
                r->sbuf[n++] = (char)(0xc0 | (cp >> 6));
                r->sbuf[n++] = (char)(0x80 | (cp & 0x3f));
            } else if (cp < 0x10000) {
                r->sbuf[n++] = (char)(0xe0 | (cp >> 12));
                r->sbuf[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
                r->sbuf[n++] = (char)(0x80 | (cp & 0x3f));
            } else {
                r->sbuf[n++] = (char)(0xf0 | (cp >> 18));
                r->sbuf[n++] = (char)(0x80 | ((cp >> 12) & 0x3f));
                r->sbuf[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
                r->sbuf[n++] = (char)(0x80 | (cp & 0x3f));
            }
            continue;
        }
        size_t l = text_utf8_len((const unsigned char *)r->p, (size_t)(r->end - r->p));
        if (l == 0) return fail(r, "\"%s\": invalid UTF-8", what);
        memcpy(r->sbuf + n, r->p, l);
        n += l;
        r->p += l;
    }
    r->sbuf[n] = '\0';
    *len = n;
    return 0;
}

/* An integer: -?(0|[1-9][0-9]*), within [lo, hi] (as signed) or, when
 * is_unsigned, within [0, uhi]. */
static int integer(struct rd *r, const char *what, int is_unsigned, int64_t lo, int64_t hi,
                   uint64_t uhi, int64_t *sv, uint64_t *uv) {
    ws(r);
    const char *s = r->p;
    int neg = 0;
    if (s < r->end && *s == '-') {
        neg = 1;
        s++;
    }
    if (s >= r->end || *s < '0' || *s > '9') return fail(r, "\"%s\": expected an integer", what);
    if (*s == '0' && s + 1 < r->end && s[1] >= '0' && s[1] <= '9')
        return fail(r, "\"%s\": leading zero", what);
    uint64_t v = 0;
    int over = 0;
    for (; s < r->end && *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) over = 1;
        else v = v * 10 + d;
    }
    if (s < r->end && (*s == '.' || *s == 'e' || *s == 'E'))
        return fail(r, "\"%s\": expected an integer", what);
    r->p = s;
    if (is_unsigned) {
        if (over || (neg && v) || v > uhi) return fail(r, "\"%s\": out of range", what);
        *uv = v;
        return 0;
    }
    /* signed: magnitude up to 2^63 when negative */
    if (over || (!neg && v > (uint64_t)INT64_MAX) || (neg && v > (uint64_t)INT64_MAX + 1))
        return fail(r, "\"%s\": out of range", what);
    int64_t x = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
    if (x < lo || x > hi) return fail(r, "\"%s\": out of range", what);
    *sv = x;
    return 0;
}

static int sint(struct rd *r, const char *what, int64_t lo, int64_t hi, int64_t *out) {
    uint64_t u;
    return integer(r, what, 0, lo, hi, 0, out, &u);
}

static int uint(struct rd *r, const char *what, uint64_t hi, uint64_t *out) {
    int64_t s;
    return integer(r, what, 1, 0, 0, hi, &s, out);
}

static int is_null(struct rd *r) {
    ws(r);
    if (r->end - r->p >= 4 && memcmp(r->p, "null", 4) == 0) {
        r->p += 4;
        return 1;
    }
    return 0;
}

/* Key of the next member: into r->sbuf, then past the colon. */
static int key(struct rd *r, size_t *len) {
    if (peek(r) != '"') return fail(r, "expected a key string");
    if (str(r, "key", len) != 0) return -1;
    if (!take(r, ':')) return fail(r, "expected ':' after key \"%s\"", r->sbuf);
    return 0;
}

/* Look the key up in a list; -1 when unknown (message set). */
static int key_index(struct rd *r, const char *const *keys, int nkeys, unsigned *seen) {
    for (int i = 0; i < nkeys; i++) {
        if (strcmp(r->sbuf, keys[i]) != 0) continue;
        if (*seen & (1u << i)) return fail(r, "duplicate key \"%s\"", keys[i]), -1;
        *seen |= 1u << i;
        return i;
    }
    fail(r, "unknown key \"%s\"", r->sbuf);
    return -1;
}

/* After a member: ',' then another, or '}' to end. Returns 1 more, 0 end. */
static int next_member(struct rd *r, const char *where) {
    if (take(r, ',')) return 1;
    if (take(r, '}')) return 0;
    return fail(r, "expected ',' or '}' in %s", where);
}

static int missing(struct rd *r, const char *const *keys, int nkeys, unsigned seen,
                   unsigned optional, const char *where) {
    for (int i = 0; i < nkeys; i++)
        if (!(seen & (1u << i)) && !(optional & (1u << i)))
            return fail(r, "%s: missing key \"%s\"", where, keys[i]);
    return 0;
}

static int end_of_line(struct rd *r) {
    ws(r);
    if (r->p != r->end) return fail(r, "unexpected text after the object");
    return 0;
}

static int node_object(struct rd *r) {
    static const char *const keys[] = {"name", "kind"};
    char name[16];
    int kind = -1;
    unsigned seen = 0;
    size_t len;
    if (!take(r, '{')) return fail(r, "nodes: expected an object");
    if (!take(r, '}')) {
        int more = 1;
        while (more) {
            if (key(r, &len) != 0) return -1;
            int k = key_index(r, keys, 2, &seen);
            if (k < 0) return -1;
            if (str(r, keys[k], &len) != 0) return -1;
            if (k == 0) {
                if (len == 0) return fail(r, "node name is empty");
                if (len >= sizeof name)
                    return fail(r, "node name \"%s\" is longer than %zu bytes", r->sbuf,
                                sizeof name - 1);
                memcpy(name, r->sbuf, len + 1);
            } else {
                for (int i = 0; i < NNODE_KINDS; i++)
                    if (strcmp(r->sbuf, node_kinds[i]) == 0) kind = i;
                if (kind < 0)
                    return fail(r, "unknown node kind \"%s\" (client, server or resource)",
                                r->sbuf);
            }
            if ((more = next_member(r, "a node")) < 0) return -1;
        }
    }
    if (missing(r, keys, 2, seen, 0, "node") != 0) return -1;
    if (trace_add_node(r->tr, name, kind) < 0) return fail(r, "out of memory");
    return 0;
}

static int header(struct rd *r) {
    static const char *const keys[] = {"format", "version", "title", "algo", "seed", "nodes"};
    enum { K_FORMAT, K_VERSION, K_TITLE, K_ALGO, K_SEED, K_NODES };
    unsigned seen = 0;
    size_t len;
    int64_t version = 0;
    int format_ok = 0;
    if (!take(r, '{')) return fail(r, "expected the header object");
    if (!take(r, '}')) {
        int more = 1;
        while (more) {
            if (key(r, &len) != 0) return -1;
            int k = key_index(r, keys, 6, &seen);
            if (k < 0) return -1;
            switch (k) {
            case K_FORMAT:
                if (str(r, "format", &len) != 0) return -1;
                if (strcmp(r->sbuf, TRACE_JSONL_FORMAT) != 0)
                    return fail(r, "not a locksim trace (format \"%s\", expected \"%s\")",
                                r->sbuf, TRACE_JSONL_FORMAT);
                format_ok = 1;
                break;
            case K_VERSION:
                if (sint(r, "version", INT64_MIN, INT64_MAX, &version) != 0) return -1;
                if (version < 1 || version > TRACE_FORMAT_VERSION)
                    return fail(r, "trace format version %lld is not supported (this build"
                                " reads versions 1 to %d)", (long long)version, TRACE_FORMAT_VERSION);
                break;
            case K_TITLE:
            case K_ALGO: {
                char *dst = k == K_TITLE ? r->tr->title : r->tr->algo;
                size_t cap = k == K_TITLE ? sizeof r->tr->title : sizeof r->tr->algo;
                if (str(r, keys[k], &len) != 0) return -1;
                if (len >= cap)
                    return fail(r, "\"%s\" is longer than %zu bytes", keys[k], cap - 1);
                memcpy(dst, r->sbuf, len + 1);
                break;
            }
            case K_SEED:
                if (uint(r, "seed", UINT64_MAX, &r->tr->seed) != 0) return -1;
                break;
            case K_NODES:
                if (!take(r, '[')) return fail(r, "\"nodes\": expected an array");
                if (!take(r, ']')) {
                    for (;;) {
                        if (node_object(r) != 0) return -1;
                        if (take(r, ',')) continue;
                        if (take(r, ']')) break;
                        return fail(r, "nodes: expected ',' or ']'");
                    }
                }
                break;
            }
            if ((more = next_member(r, "the header")) < 0) return -1;
        }
    }
    if (!format_ok) return fail(r, "not a locksim trace (no \"format\" key in the header)");
    if (missing(r, keys, 6, seen, 0, "header") != 0) return -1;
    if (end_of_line(r) != 0) return -1;
    int dup = -1;
    int rc = names_build(&r->names, r->tr, &dup);
    if (rc == -1) return fail(r, "out of memory");
    if (rc == -2) return fail(r, "duplicate node name \"%s\"", r->tr->nodes[dup].name);
    return 0;
}

/* A node reference: a known name or null. */
static int node_ref(struct rd *r, const char *what, int32_t *out) {
    size_t len;
    if (is_null(r)) {
        *out = TRACE_NO_NODE;
        return 0;
    }
    if (peek(r) != '"') return fail(r, "\"%s\": expected a node name or null", what);
    if (str(r, what, &len) != 0) return -1;
    int i = names_find(&r->names, r->tr, r->sbuf, len);
    if (i < 0) return fail(r, "\"%s\": unknown node \"%s\"", what, r->sbuf);
    *out = i;
    return 0;
}

static int event(struct rd *r) {
    static const char *const keys[] = {"seq", "t_ns", "kind", "node", "peer",
                                       "token", "grant", "a", "b", "text"};
    enum { K_SEQ, K_T, K_KIND, K_NODE, K_PEER, K_TOKEN, K_GRANT, K_A, K_B, K_TEXT };
    struct trace_event e;
    memset(&e, 0, sizeof e);
    e.node = e.peer = TRACE_NO_NODE;
    unsigned seen = 0;
    size_t len;
    uint64_t u;
    int64_t s;
    if (!take(r, '{')) return fail(r, "expected an event object");
    if (!take(r, '}')) {
        int more = 1;
        while (more) {
            if (key(r, &len) != 0) return -1;
            int k = key_index(r, keys, 10, &seen);
            if (k < 0) return -1;
            switch (k) {
            case K_SEQ:
                if (uint(r, "seq", UINT32_MAX, &u) != 0) return -1;
                if (u != r->tr->count)
                    return fail(r, "\"seq\" is %llu, expected %lu", (unsigned long long)u,
                                (unsigned long)r->tr->count);
                break;
            case K_T:
                if (sint(r, "t_ns", 0, SIM_TIME_MAX, &e.t) != 0) return -1;
                if (e.t < r->last_t)
                    return fail(r, "\"t_ns\" goes back in time (%lld after %lld)",
                                (long long)e.t, (long long)r->last_t);
                break;
            case K_KIND: {
                if (str(r, "kind", &len) != 0) return -1;
                int kind = trace_kind_from_name(r->sbuf);
                if (kind < 0) return fail(r, "unknown kind \"%s\"", r->sbuf);
                e.kind = (uint16_t)kind;
                break;
            }
            case K_NODE:
                if (node_ref(r, "node", &e.node) != 0) return -1;
                break;
            case K_PEER:
                if (node_ref(r, "peer", &e.peer) != 0) return -1;
                break;
            case K_TOKEN:
                if (uint(r, "token", UINT64_MAX, &e.token) != 0) return -1;
                break;
            case K_GRANT:
                if (uint(r, "grant", UINT32_MAX, &u) != 0) return -1;
                e.grant = (uint32_t)u;
                break;
            case K_A:
            case K_B:
                if (sint(r, keys[k], INT64_MIN, INT64_MAX, &s) != 0) return -1;
                if (k == K_A) e.a = s;
                else e.b = s;
                break;
            case K_TEXT:
                if (str(r, "text", &len) != 0) return -1;
                e.text = trace_intern(r->tr, r->sbuf, len);
                if (!e.text) return fail(r, "out of memory");
                break;
            }
            if ((more = next_member(r, "an event")) < 0) return -1;
        }
    }
    if (missing(r, keys, 10, seen, 1u << K_TEXT, "event") != 0) return -1;
    if (end_of_line(r) != 0) return -1;
    r->last_t = e.t;
    trace_append(r->tr, &e);
    if (r->tr->oom) return fail(r, "out of memory");
    return 0;
}

int trace_read_jsonl(struct trace *tr, const char *text, size_t len, char *err, size_t errlen) {
    struct rd r;
    memset(&r, 0, sizeof r);
    r.tr = tr;
    r.err = err;
    r.errlen = errlen;
    r.line = 1;
    if (err && errlen) err[0] = '\0';
    if (!tr->keep) return fail(&r, "the trace must keep its events (trace_init(tr, 1))");
    if (tr->nnodes || tr->count) return fail(&r, "the trace to read into is not empty");
    if (len == 0) return fail(&r, "empty input; expected the header");

    /* One buffer for decoded strings, as long as the longest line. */
    size_t longest = 0;
    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if ((size_t)(le - p) > longest) longest = (size_t)(le - p);
        p = nl ? nl + 1 : end;
    }
    r.scap = longest + 1;
    r.sbuf = malloc(r.scap);
    if (!r.sbuf) return fail(&r, "out of memory");

    int rc = 0;
    const char *p = text, *end = text + len;
    while (p < end && rc == 0) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        r.p = p;
        r.end = le;
        if (r.end > r.p && r.end[-1] == '\r') r.end--;
        if (r.end == r.p) rc = fail(&r, r.line == 1 ? "empty line; expected the header"
                                                    : "empty line");
        else if (memchr(r.p, '\0', (size_t)(r.end - r.p)))
            rc = fail(&r, "NUL byte in the input");
        else rc = r.line == 1 ? header(&r) : event(&r);
        p = nl ? nl + 1 : end;
        r.line++;
    }
    free(r.sbuf);
    free(r.names.slot);
    return rc;
}
