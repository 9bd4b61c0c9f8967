/* The trace: append-only event log, optional storage, online observer,
 * a machine-independent hash for determinism checks, and the words of its
 * kinds and resource rules. */
#include "trace.h"

#include <stdlib.h>
#include <string.h>

static const char *const kind_names[TRACE_KIND_COUNT] = {
#define KIND_NAME_(name, word, finding, checked) [TRACE_##name] = word,
        TRACE_KIND_MAP(KIND_NAME_)
#undef KIND_NAME_
};

static const struct {
    int64_t value;
    const char *word, *says;
} rules[] = {
#define RULE_ROW_(name, value, word, says) {value, word, says},
        TRACE_RULE_MAP(RULE_ROW_)
#undef RULE_ROW_
};

static int rule_row(int64_t rule) {
    for (int i = 0; i < (int)(sizeof rules / sizeof rules[0]); i++)
        if (rules[i].value == rule) return i;
    return -1;
}

/* The row of rule, or of TRACE_RULE_PLAIN for a value no rule has. */
static int rule_or_plain(int64_t rule) {
    int i = rule_row(rule);
    return i >= 0 ? i : rule_row(TRACE_RULE_PLAIN);
}

int trace_rule_known(int64_t rule) { return rule_row(rule) >= 0; }

const char *trace_rule_word(int64_t rule) { return rules[rule_or_plain(rule)].word; }

const char *trace_rule_says(int64_t rule) { return rules[rule_or_plain(rule)].says; }

void trace_init(struct trace *tr, int keep) {
    memset(tr, 0, sizeof *tr);
    tr->keep = keep;
}

static void strings_free(struct trace_strings *st);

void trace_close(struct trace *tr) {
    free(tr->nodes);
    free(tr->ev);
    strings_free(tr->strings);
    tr->strings = NULL;
    tr->nodes = NULL;
    tr->ev = NULL;
    tr->len = tr->cap = 0;
    tr->nnodes = tr->cap_nodes = 0;
}

int trace_reserve_nodes(struct trace *tr, int n) {
    if (n <= tr->cap_nodes) return 0;
    struct trace_node *nodes = realloc(tr->nodes, (size_t)n * sizeof *nodes);
    if (!nodes) return -1;
    tr->nodes = nodes;
    tr->cap_nodes = n;
    return 0;
}

int trace_reserve_events(struct trace *tr, size_t n) {
    if (n <= tr->cap) return 0;
    if (n > SIZE_MAX / sizeof *tr->ev) return -1;
    struct trace_event *ev = realloc(tr->ev, n * sizeof *ev);
    if (!ev) return -1;
    tr->ev = ev;
    tr->cap = n;
    return 0;
}

int trace_add_node(struct trace *tr, const char *name, int kind) {
    if (tr->nnodes == tr->cap_nodes &&
        trace_reserve_nodes(tr, tr->cap_nodes ? tr->cap_nodes * 2 : 4) != 0) /* grow by doubling */
        return -1;
    struct trace_node *n = &tr->nodes[tr->nnodes];
    memset(n, 0, sizeof *n);
    strncpy(n->name, name, sizeof n->name - 1);
    n->kind = kind;
    return tr->nnodes++;
}

static uint64_t fnv(uint64_t h, uint64_t v, int bytes) { /* FNV-1a, for interned strings */
    for (int i = 0; i < bytes; i++) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 1099511628211ull;
    }
    return h;
}

/* The trace digest (docs/trace-format.md, "Trace hash"): trace.h's
 * trace_hash_fields, each event a fixed list of 64-bit words folded with
 * xxHash64's round; the digest is the accumulator through xxHash64's
 * avalanche. */
#define H_P2 TRACE_H_P2
#define H_P3 0x165667B19E3779F9ull
#define H_SEED 0x27D4EB2F165667C5ull

static uint64_t event_hash(uint64_t h, const struct trace_event *e) {
    return trace_hash_fields(h, e->t, e->kind, e->node, e->peer, e->token, e->grant, e->a, e->b, e->text);
}

static uint64_t h_final(uint64_t h) {
    h ^= h >> 33;
    h *= H_P2;
    h ^= h >> 29;
    h *= H_P3;
    h ^= h >> 32;
    return h;
}

void trace_hash_on(struct trace *tr) {
    tr->hashing = 1;
    tr->hash = H_SEED;
}

uint64_t trace_hash(const struct trace *tr) {
    if (tr->hashing) return h_final(tr->hash);
    uint64_t h = H_SEED;
    for (size_t i = 0; i < tr->len; i++) h = event_hash(h, &tr->ev[i]);
    return h_final(h);
}

void trace_append_own(struct trace *tr, struct trace_event *ev) {
    if (ev->t > tr->last_t) {
        if (tr->advance) tr->advance(tr->observe_arg, ev->t);
        tr->last_t = ev->t;
    }
    ev->seq = tr->count++;
    if (tr->hashing) tr->hash = event_hash(tr->hash, ev);
    if (tr->keep && !tr->oom) {
        if (tr->len == tr->cap) {
            size_t cap = tr->cap ? tr->cap * 2 : 256;
            struct trace_event *n = realloc(tr->ev, cap * sizeof *n);
            if (!n) {
                tr->oom = 1; /* reported by the caller; the run itself goes on */
            } else {
                tr->ev = n;
                tr->cap = cap;
            }
        }
        if (!tr->oom) tr->ev[tr->len++] = *ev;
    }
    if (tr->observe) tr->observe(tr->observe_arg, ev);
}

uint64_t trace_hash_text(uint64_t h, const char *text, size_t len) {
    size_t i = 0; /* 8 bytes a word, little-endian, the last one zero-padded */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; i + 8 <= len; i += 8) { /* a whole word is its bytes as they lie in memory */
        uint64_t w;
        memcpy(&w, text + i, 8);
        h = trace_h_round(h, w);
    }
#endif
    for (; i < len; i += 8) {
        uint64_t w = 0;
        for (size_t k = 0; k < 8 && i + k < len; k++) w |= (uint64_t)(unsigned char)text[i + k] << (8 * k);
        h = trace_h_round(h, w);
    }
    return h;
}

void trace_append(struct trace *tr, const struct trace_event *ev) {
    struct trace_event e = *ev;
    trace_append_own(tr, &e);
}

const char *trace_kind_name(int kind) {
    if (kind < 0 || kind >= TRACE_KIND_COUNT || !kind_names[kind]) return "unknown";
    return kind_names[kind];
}

/* Linear over about 50 names, as a trace line is read: the first byte is
 * compared before the whole name, so most names cost one compare. */
int trace_kind_from_name(const char *name) {
    for (int k = 0; k < TRACE_KIND_COUNT; k++)
        if (kind_names[k] && kind_names[k][0] == name[0] && strcmp(kind_names[k], name) == 0) return k;
    return -1;
}

/* ---- Owned strings: an arena of blocks plus an open-addressing table that
 * finds an equal string already copied. ---- */

struct trace_strblock {
    struct trace_strblock *next;
    size_t used, cap;
    char data[];
};

struct trace_strings {
    struct trace_strblock *blocks; /* newest first */
    const char **slot;             /* nslot entries, a power of two; NULL = free */
    size_t nslot, count;
};

static void strings_free(struct trace_strings *st) {
    if (!st) return;
    while (st->blocks) {
        struct trace_strblock *b = st->blocks;
        st->blocks = b->next;
        free(b);
    }
    free(st->slot);
    free(st);
}

static uint64_t str_hash(const char *s, size_t len) {
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < len; i++) h = fnv(h, (unsigned char)s[i], 1);
    return h;
}

static int strings_grow(struct trace_strings *st) {
    size_t n = st->nslot ? st->nslot * 2 : 64;
    const char **slot = calloc(n, sizeof *slot);
    if (!slot) return -1;
    for (size_t i = 0; i < st->nslot; i++) {
        const char *p = st->slot[i];
        if (!p) continue;
        size_t j = (size_t)str_hash(p, strlen(p)) & (n - 1);
        while (slot[j]) j = (j + 1) & (n - 1);
        slot[j] = p;
    }
    free(st->slot);
    st->slot = slot;
    st->nslot = n;
    return 0;
}

const char *trace_intern(struct trace *tr, const char *s, size_t len) {
    /* A failure marks the trace (tr->oom) so that no caller can drop a text
     * unnoticed: the run is then an error, not a trace with a hole. */
    if (!tr->strings) {
        tr->strings = calloc(1, sizeof *tr->strings);
        if (!tr->strings) return tr->oom = 1, NULL;
    }
    struct trace_strings *st = tr->strings;
    if ((st->count + 1) * 2 > st->nslot && strings_grow(st) != 0) return tr->oom = 1, NULL;
    size_t j = (size_t)str_hash(s, len) & (st->nslot - 1);
    for (; st->slot[j]; j = (j + 1) & (st->nslot - 1))
        if (strlen(st->slot[j]) == len && memcmp(st->slot[j], s, len) == 0) return st->slot[j];
    struct trace_strblock *b = st->blocks;
    if (!b || b->cap - b->used < len + 1) {
        size_t cap = len + 1 > 4096 ? len + 1 : 4096;
        b = malloc(sizeof *b + cap);
        if (!b) return tr->oom = 1, NULL;
        b->used = 0;
        b->cap = cap;
        b->next = st->blocks;
        st->blocks = b;
    }
    char *p = b->data + b->used;
    memcpy(p, s, len);
    p[len] = '\0';
    b->used += len + 1;
    st->slot[j] = p;
    st->count++;
    return p;
}

int trace_copy_golden(struct trace *dst, const struct trace *src) {
    for (int i = 0; i < src->nnodes; i++)
        if (trace_add_node(dst, src->nodes[i].name, src->nodes[i].kind) < 0) return -1;
    memcpy(dst->title, src->title, sizeof dst->title);
    memcpy(dst->algo, src->algo, sizeof dst->algo);
    dst->seed = src->seed;
    dst->golden = 1;
    dst->golden_digest = trace_hash(src);
    dst->omitted = 0;
    for (size_t i = 0; i < src->len; i++) {
        struct trace_event e = src->ev[i];
        if (trace_is_traffic(e.kind)) {
            dst->omitted++;
            continue;
        }
        if (e.text && !(e.text = trace_intern(dst, e.text, strlen(e.text)))) return -1;
        trace_append(dst, &e);
    }
    return dst->oom ? -1 : 0;
}
