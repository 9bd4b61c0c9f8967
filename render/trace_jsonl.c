/* Traces as JSON Lines: a canonical writer and a strict reader for exactly
 * what it writes (a tiny hand-written JSON subset parser: objects, strings,
 * integers, null, one array of node objects). */
#include "trace_jsonl.h"

#include "json_read.h"

#include <ctype.h>
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
/* Fewer bytes than any valid event line has: its nine required keys with
 * one-digit values already take 85 (`{"seq":0,"t_ns":0,"kind":"heal",...}`). */
#define TRACE_JSONL_MIN_EVENT 64

/* ---- Node names: a hash table from name to index ------------------------ */

struct names {
    int *slot; /* node index + 1; 0 = free */
    size_t n;  /* a power of two */
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
    for (size_t j = (size_t)hash_bytes(s, len) & (nt->n - 1); nt->slot[j]; j = (j + 1) & (nt->n - 1)) {
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
        if (e->kind >= TRACE_KIND_COUNT || trace_kind_from_name(trace_kind_name(e->kind)) != e->kind) return -1;
        if ((e->node != TRACE_NO_NODE && (e->node < 0 || e->node >= tr->nnodes)) ||
            (e->peer != TRACE_NO_NODE && (e->peer < 0 || e->peer >= tr->nnodes)))
            return -1;
    }

    fprintf(out, "{\"format\":\"%s\",\"version\":%d,\"title\":", TRACE_JSONL_FORMAT, TRACE_FORMAT_VERSION);
    put_str(out, tr->title, strnlen(tr->title, sizeof tr->title));
    fputs(",\"algo\":", out);
    put_str(out, tr->algo, strnlen(tr->algo, sizeof tr->algo));
    fprintf(out, ",\"seed\":%" PRIu64, tr->seed);
    if (tr->golden) /* a golden trace: the whole run's digest, and how many events it leaves out */
        fprintf(out, ",\"digest\":\"%016" PRIx64 "\",\"omitted\":%" PRIu64, tr->golden_digest, tr->omitted);
    fputs(",\"nodes\":[", out);
    for (int i = 0; i < tr->nnodes; i++) {
        fputs(i ? ",{\"name\":" : "{\"name\":", out);
        put_node(out, tr, i);
        fprintf(out, ",\"kind\":\"%s\"}", node_kinds[tr->nodes[i].kind]);
    }
    fputs("]}\n", out);
    for (size_t i = 0; i < tr->len; i++) {
        const struct trace_event *e = &tr->ev[i];
        fprintf(out, "{\"seq\":%" PRIu32 ",\"t_ns\":%" PRId64 ",\"kind\":\"%s\",\"node\":", e->seq, e->t,
                trace_kind_name(e->kind));
        put_node(out, tr, e->node);
        fputs(",\"peer\":", out);
        put_node(out, tr, e->peer);
        fprintf(out, ",\"token\":%" PRIu64 ",\"grant\":%" PRIu32 ",\"a\":%" PRId64 ",\"b\":%" PRId64, e->token,
                e->grant, e->a, e->b);
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
    struct json_rd j; /* the current line; strings decode into j.sbuf */
    struct trace *tr;
    int line;
    struct names names;
    sim_ns last_t;
};

/* A message about the current line (the reader adds "line N: "). */
static int fail(struct rd *r, const char *fmt, ...) {
    if (r->j.err && r->j.errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->j.err, r->j.errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int node_object(struct rd *r) {
    static const char *const keys[] = {"name", "kind"};
    char name[16];
    int kind = -1;
    uint64_t seen = 0;
    size_t len;
    if (!json_take(&r->j, '{')) return fail(r, "nodes: expected an object");
    if (!json_take(&r->j, '}')) {
        int more = 1;
        while (more) {
            if (json_key(&r->j) != 0) return -1;
            int k = json_key_index(&r->j, keys, 2, &seen);
            if (k < 0) return -1;
            if (json_str(&r->j, keys[k], &len) != 0) return -1;
            if (k == 0) {
                if (len == 0) return fail(r, "node name is empty");
                if (len >= sizeof name)
                    return fail(r, "node name \"%s\" is longer than %zu bytes", r->j.sbuf, sizeof name - 1);
                memcpy(name, r->j.sbuf, len + 1);
            } else {
                for (int i = 0; i < NNODE_KINDS; i++)
                    if (strcmp(r->j.sbuf, node_kinds[i]) == 0) kind = i;
                if (kind < 0) return fail(r, "unknown node kind \"%s\" (client, server or resource)", r->j.sbuf);
            }
            if ((more = json_next(&r->j, '}', "a node")) < 0) return -1;
        }
    }
    if (json_missing(&r->j, keys, 2, seen, 0, "node") != 0) return -1;
    if (trace_add_node(r->tr, name, kind) < 0) return fail(r, "out of memory");
    return 0;
}

static int header(struct rd *r) {
    static const char *const keys[] = {"format", "version", "title", "algo", "seed", "nodes", "digest", "omitted"};
    enum { K_FORMAT, K_VERSION, K_TITLE, K_ALGO, K_SEED, K_NODES, K_DIGEST, K_OMITTED };
    const uint64_t golden_keys = 1u << K_DIGEST | 1u << K_OMITTED; /* a golden trace's, both or neither */
    uint64_t seen = 0;
    size_t len;
    int64_t version = 0;
    int format_ok = 0;
    if (!json_take(&r->j, '{')) return fail(r, "expected the header object");
    if (!json_take(&r->j, '}')) {
        int more = 1;
        while (more) {
            if (json_key(&r->j) != 0) return -1;
            int k = json_key_index(&r->j, keys, 8, &seen);
            if (k < 0) return -1;
            switch (k) {
            case K_FORMAT:
                if (json_str(&r->j, "format", &len) != 0) return -1;
                if (strcmp(r->j.sbuf, TRACE_JSONL_FORMAT) != 0)
                    return fail(r, "not a locksim trace (format \"%s\", expected \"%s\")", r->j.sbuf,
                                TRACE_JSONL_FORMAT);
                format_ok = 1;
                break;
            case K_VERSION:
                if (json_int(&r->j, "version", INT64_MIN, INT64_MAX, &version) != 0) return -1;
                if (version < 1 || version > TRACE_FORMAT_VERSION)
                    return fail(r,
                                "trace format version %lld is not supported (this build"
                                " reads versions 1 to %d)",
                                (long long)version, TRACE_FORMAT_VERSION);
                break;
            case K_TITLE:
            case K_ALGO: {
                char *dst = k == K_TITLE ? r->tr->title : r->tr->algo;
                size_t cap = k == K_TITLE ? sizeof r->tr->title : sizeof r->tr->algo;
                if (json_str(&r->j, keys[k], &len) != 0) return -1;
                if (len >= cap) return fail(r, "\"%s\" is longer than %zu bytes", keys[k], cap - 1);
                memcpy(dst, r->j.sbuf, len + 1);
                break;
            }
            case K_SEED:
                if (json_uint(&r->j, "seed", UINT64_MAX, &r->tr->seed) != 0) return -1;
                break;
            case K_DIGEST: {
                if (json_str(&r->j, "digest", &len) != 0) return -1;
                uint64_t d = 0;
                size_t i = 0;
                for (; i < len && i < 16 && isxdigit((unsigned char)r->j.sbuf[i]); i++)
                    d = d << 4 | (uint64_t)(isdigit((unsigned char)r->j.sbuf[i]) ? r->j.sbuf[i] - '0'
                                                                                 : (r->j.sbuf[i] | 0x20) - 'a' + 10);
                if (len != 16 || i != 16)
                    return fail(r, "\"digest\": expected 16 hexadecimal digits, found \"%.40s\"", r->j.sbuf);
                r->tr->golden_digest = d;
                break;
            }
            case K_OMITTED:
                if (json_uint(&r->j, "omitted", UINT64_MAX, &r->tr->omitted) != 0) return -1;
                break;
            case K_NODES:
                if (!json_take(&r->j, '[')) return fail(r, "\"nodes\": expected an array");
                if (!json_take(&r->j, ']')) {
                    for (;;) {
                        if (node_object(r) != 0) return -1;
                        if (json_take(&r->j, ',')) continue;
                        if (json_take(&r->j, ']')) break;
                        return fail(r, "nodes: expected ',' or ']'");
                    }
                }
                break;
            }
            if ((more = json_next(&r->j, '}', "the header")) < 0) return -1;
        }
    }
    if (!format_ok) return fail(r, "not a locksim trace (no \"format\" key in the header)");
    if (json_missing(&r->j, keys, 6, seen, 0, "header") != 0) return -1;
    if ((seen & golden_keys) && (seen & golden_keys) != golden_keys)
        return fail(r, "header: \"digest\" and \"omitted\" come together (a golden trace), found only \"%s\"",
                    seen & 1u << K_DIGEST ? "digest" : "omitted");
    r->tr->golden = (seen & golden_keys) != 0;
    if (json_eol(&r->j) != 0) return -1;
    int dup = -1;
    int rc = names_build(&r->names, r->tr, &dup);
    if (rc == -1) return fail(r, "out of memory");
    if (rc == -2) return fail(r, "duplicate node name \"%s\"", r->tr->nodes[dup].name);
    return 0;
}

/* A node reference: a known name or null. */
static int node_ref(struct rd *r, const char *what, int32_t *out) {
    size_t len;
    if (json_null(&r->j)) {
        *out = TRACE_NO_NODE;
        return 0;
    }
    if (json_peek(&r->j) != '"') return fail(r, "\"%s\": expected a node name or null", what);
    if (json_str(&r->j, what, &len) != 0) return -1;
    int i = names_find(&r->names, r->tr, r->j.sbuf, len);
    if (i < 0) return fail(r, "\"%s\": unknown node \"%s\"", what, r->j.sbuf);
    *out = i;
    return 0;
}

static int event(struct rd *r) {
    static const char *const keys[] = {"seq", "t_ns", "kind", "node", "peer", "token", "grant", "a", "b", "text"};
    enum { K_SEQ, K_T, K_KIND, K_NODE, K_PEER, K_TOKEN, K_GRANT, K_A, K_B, K_TEXT };
    struct trace_event e;
    memset(&e, 0, sizeof e);
    e.node = e.peer = TRACE_NO_NODE;
    uint64_t seen = 0;
    size_t len;
    uint64_t u;
    int64_t s;
    if (!json_take(&r->j, '{')) return fail(r, "expected an event object");
    if (!json_take(&r->j, '}')) {
        int more = 1;
        while (more) {
            if (json_key(&r->j) != 0) return -1;
            int k = json_key_index(&r->j, keys, 10, &seen);
            if (k < 0) return -1;
            switch (k) {
            case K_SEQ:
                if (json_uint(&r->j, "seq", UINT32_MAX, &u) != 0) return -1;
                if (u != r->tr->count)
                    return fail(r, "\"seq\" is %llu, expected %lu", (unsigned long long)u, (unsigned long)r->tr->count);
                break;
            case K_T:
                if (json_int(&r->j, "t_ns", 0, SIM_TIME_MAX, &e.t) != 0) return -1;
                if (e.t < r->last_t)
                    return fail(r, "\"t_ns\" goes back in time (%lld after %lld)", (long long)e.t,
                                (long long)r->last_t);
                break;
            case K_KIND: {
                if (json_str(&r->j, "kind", &len) != 0) return -1;
                int kind = trace_kind_from_name(r->j.sbuf);
                if (kind < 0) return fail(r, "unknown kind \"%s\"", r->j.sbuf);
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
                if (json_uint(&r->j, "token", UINT64_MAX, &e.token) != 0) return -1;
                break;
            case K_GRANT:
                if (json_uint(&r->j, "grant", UINT32_MAX, &u) != 0) return -1;
                e.grant = (uint32_t)u;
                break;
            case K_A:
            case K_B:
                if (json_int(&r->j, keys[k], INT64_MIN, INT64_MAX, &s) != 0) return -1;
                if (k == K_A) e.a = s;
                else e.b = s;
                break;
            case K_TEXT:
                if (json_str(&r->j, "text", &len) != 0) return -1;
                e.text = trace_intern(r->tr, r->j.sbuf, len);
                if (!e.text) return fail(r, "out of memory");
                break;
            }
            if ((more = json_next(&r->j, '}', "an event")) < 0) return -1;
        }
    }
    if (json_missing(&r->j, keys, 10, seen, 1u << K_TEXT, "event") != 0) return -1;
    if (json_eol(&r->j) != 0) return -1;
    r->last_t = e.t;
    trace_append(r->tr, &e);
    if (r->tr->oom) return fail(r, "out of memory");
    return 0;
}

int trace_read_jsonl(struct trace *tr, const char *text, size_t len, char *err, size_t errlen) {
    struct rd r;
    char msg[400] = "";
    memset(&r, 0, sizeof r);
    r.tr = tr;
    r.j.err = msg;
    r.j.errlen = sizeof msg;
    r.line = 1;
    int rc = 0;
    if (!tr->keep) rc = fail(&r, "the trace must keep its events (trace_init(tr, 1))");
    else if (tr->nnodes || tr->count) rc = fail(&r, "the trace to read into is not empty");
    else if (len == 0) rc = fail(&r, "empty input; expected the header");
    if (!rc) {
        /* One buffer for decoded strings, as long as the longest line. */
        size_t longest = 0, lines = 0;
        for (const char *p = text, *end = text + len; p < end; lines++) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            const char *le = nl ? nl : end;
            if ((size_t)(le - p) > longest) longest = (size_t)(le - p);
            p = nl ? nl + 1 : end;
        }
        r.j.scap = longest + 1;
        r.j.sbuf = malloc(r.j.scap);
        if (!r.j.sbuf) rc = fail(&r, "out of memory");
        /* Room for an event a line after the header, at once instead of by
         * doubling; no more than one a TRACE_JSONL_MIN_EVENT bytes of input,
         * so that a file of empty lines cannot make it reserve much. A failed
         * reservation is no error: appending grows the array as before. */
        size_t want = lines > 1 ? lines - 1 : 0;
        if (want > len / TRACE_JSONL_MIN_EVENT) want = len / TRACE_JSONL_MIN_EVENT;
        if (!rc) (void)trace_reserve_events(tr, want);
    }
    const char *p = text, *end = text + len;
    while (!rc && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        json_rd_line(&r.j, p, (size_t)(le - p));
        if (r.j.end == r.j.p) rc = fail(&r, r.line == 1 ? "empty line; expected the header" : "empty line");
        else if (memchr(r.j.p, '\0', (size_t)(r.j.end - r.j.p))) rc = fail(&r, "NUL byte in the input");
        else rc = r.line == 1 ? header(&r) : event(&r);
        p = nl ? nl + 1 : end;
        if (!rc) r.line++;
    }
    if (rc && err && errlen) snprintf(err, errlen, "line %d: %s", r.line, msg);
    else if (err && errlen) err[0] = '\0';
    free(r.j.sbuf);
    free(r.names.slot);
    return rc;
}
