/* Trace comparison (trace_diff.h): the first divergent event, and a
 * report of it with context. */
#include "trace_diff.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fmt.h"
#include "metric.h"
#include "text.h"

static const char *node_name(const struct trace *tr, int node) {
    return node >= 0 && node < tr->nnodes ? tr->nodes[node].name : "-";
}

/* A node's name as a terminal shows it (out: 80 bytes). */
static const char *node_shown(char *out, const struct trace *tr, int node) {
    return text_term(out, 80, node_name(tr, node));
}

static int same_event(const struct trace *a, const struct trace_event *x, const struct trace *b,
                      const struct trace_event *y) {
    return x->t == y->t && x->kind == y->kind && strcmp(node_name(a, x->node), node_name(b, y->node)) == 0 &&
           strcmp(node_name(a, x->peer), node_name(b, y->peer)) == 0 && x->token == y->token && x->grant == y->grant &&
           x->a == y->a && x->b == y->b && strcmp(x->text ? x->text : "", y->text ? y->text : "") == 0;
}

long trace_diff_first(const struct trace *a, const struct trace *b) {
    size_t n = a->len < b->len ? a->len : b->len;
    for (size_t i = 0; i < n; i++)
        if (!same_event(a, &a->ev[i], b, &b->ev[i])) return (long)i;
    return a->len == b->len ? -1 : (long)n;
}

void trace_diff_event(char *buf, size_t n, const struct trace *tr, const struct trace_event *ev) {
    char t[32];
    format_time_ns(t, sizeof t, ev->t);
    char nm[80];
    size_t l = (size_t)snprintf(buf, n, "#%u t=%s %s %s", ev->seq, t, node_shown(nm, tr, ev->node),
                                trace_kind_name(ev->kind));
#define ADD_(...) \
    if (l < n) l += (size_t)snprintf(buf + l, n - l, __VA_ARGS__)
    if (ev->peer != TRACE_NO_NODE) ADD_(" peer=%s", node_shown(nm, tr, ev->peer));
    if (ev->token) ADD_(" token=%llu", (unsigned long long)ev->token);
    if (ev->grant) ADD_(" grant=%u", ev->grant);
    if (ev->a) ADD_(" a=%lld", (long long)ev->a);
    if (ev->b) ADD_(" b=%lld", (long long)ev->b);
    char text[400];
    if (ev->text) ADD_(" \"%s\"", text_term(text, sizeof text, ev->text));
#undef ADD_
}

static void print_range(FILE *f, const char *indent, const char *mark, const struct trace *tr, size_t from, size_t to) {
    char line[512];
    for (size_t i = from; i < to && i < tr->len; i++) {
        trace_diff_event(line, sizeof line, tr, &tr->ev[i]);
        fprintf(f, "%s%s%s\n", indent, mark, line);
    }
}

void trace_diff_print(FILE *f, const struct trace *a, const char *name_a, const struct trace *b, const char *name_b,
                      long at, int context, const char *indent) {
    char t1[400], t2[400];
    if (strcmp(a->title, b->title) != 0)
        fprintf(f, "%stitle: \"%s\" vs \"%s\"\n", indent, text_term(t1, sizeof t1, a->title),
                text_term(t2, sizeof t2, b->title));
    if (strcmp(a->algo, b->algo) != 0)
        fprintf(f, "%salgorithm: %s vs %s\n", indent, text_term(t1, sizeof t1, a->algo),
                text_term(t2, sizeof t2, b->algo));
    if (a->seed != b->seed)
        fprintf(f, "%sseed: %llu vs %llu\n", indent, (unsigned long long)a->seed, (unsigned long long)b->seed);
    if (at < 0) return;
    size_t i = (size_t)at;
    const struct trace_event *x = i < a->len ? &a->ev[i] : NULL, *y = i < b->len ? &b->ev[i] : NULL;
    char t[32];
    format_time_ns(t, sizeof t, x && y ? (x->t < y->t ? x->t : y->t) : x ? x->t : y->t);
    fprintf(f, "%sfirst divergence at event #%zu (t=%s); %s has %zu events, %s has %zu\n", indent, i, t, name_a, a->len,
            name_b, b->len);
    size_t from = i > (size_t)context ? i - (size_t)context : 0;
    int w = (int)(strlen(name_a) > strlen(name_b) ? strlen(name_a) : strlen(name_b));
    char mark[128];
    snprintf(mark, sizeof mark, "  %-*s ", w, "");
    print_range(f, indent, mark, a, from, i);
    snprintf(mark, sizeof mark, "- %-*s ", w, name_a);
    if (!x) fprintf(f, "%s%s(ends)\n", indent, mark);
    print_range(f, indent, mark, a, i, i + 1 + (size_t)context);
    snprintf(mark, sizeof mark, "+ %-*s ", w, name_b);
    if (!y) fprintf(f, "%s%s(ends)\n", indent, mark);
    print_range(f, indent, mark, b, i, i + 1 + (size_t)context);
}

/* ---- What changed in meaning ---- */

/* The events of one kind, grouped by node (the event's node, or with
 * by_peer its peer: a write's writer) and in order within each: node n's
 * are ev[off[n] .. off[n + 1]). Indices into tr->ev. */
struct by_node {
    size_t *ev, *off;
};

static int key_of(const struct trace *tr, size_t i, int kind, int by_peer) {
    const struct trace_event *e = &tr->ev[i];
    int n = by_peer ? e->peer : e->node;
    return e->kind == kind && n >= 0 && n < tr->nnodes ? n : -1;
}

static int by_node_init(struct by_node *g, const struct trace *tr, int kind, int by_peer) {
    size_t nn = (size_t)tr->nnodes;
    g->off = calloc(nn + 2, sizeof *g->off);
    size_t total = 0;
    for (size_t i = 0; g->off && i < tr->len; i++) {
        int n = key_of(tr, i, kind, by_peer);
        if (n >= 0) {
            g->off[n + 2]++;
            total++;
        }
    }
    g->ev = malloc((total ? total : 1) * sizeof *g->ev);
    if (!g->off || !g->ev) return LSIM_ENOMEM;
    for (size_t n = 2; n < nn + 2; n++) g->off[n] += g->off[n - 1];
    for (size_t i = 0; i < tr->len; i++) {
        int n = key_of(tr, i, kind, by_peer);
        if (n >= 0) g->ev[g->off[n + 1]++] = i;
    }
    return 0;
}

static void by_node_close(struct by_node *g) {
    free(g->ev);
    free(g->off);
}

/* The node of tr named like node n of other: the same index when the names
 * agree (the usual case), else a search; -1 when tr has none. */
static int same_node(const struct trace *tr, const struct trace *other, int n) {
    const char *name = other->nodes[n].name;
    if (n < tr->nnodes && strcmp(tr->nodes[n].name, name) == 0) return n;
    for (int i = 0; i < tr->nnodes; i++)
        if (strcmp(tr->nodes[i].name, name) == 0) return i;
    return -1;
}

static const char *write_result(int64_t b) {
    switch (b) {
    case TRACE_WRITE_ACCEPTED: return "accepted";
    case TRACE_WRITE_REJECTED_STALE: return "rejected (stale token)";
    case TRACE_WRITE_REJECTED_NOTOKEN: return "rejected (no token)";
    case TRACE_WRITE_REJECTED_COND: return "rejected (condition failed)";
    case TRACE_WRITE_REJECTED_UNIQUE: return "rejected (unique constraint)";
    case TRACE_WRITE_REJECTED_DUPLICATE: return "rejected (duplicate)";
    case TRACE_WRITE_REJECTED_NOT_OWNER: return "rejected (not the owner)";
    default: return "rejected";
    }
}

/* One part of the report: a title, then lines while under max; every line
 * counted. */
struct part {
    FILE *f;
    const char *indent;
    const char *title;
    int max, shown, found;
};

static void part_line(struct part *p, const char *what, const char *a, const char *b) {
    if (p->found++ == 0) fprintf(p->f, "%s%s\n", p->indent, p->title);
    if (p->shown >= p->max) return;
    p->shown++;
    fprintf(p->f, "%s  %s%s -> %s\n", p->indent, what, a, b);
}

static int part_end(struct part *p) {
    if (p->found > p->shown) fprintf(p->f, "%s  ... and %d more\n", p->indent, p->found - p->shown);
    return p->found;
}

static void acquired_text(char *buf, size_t n, const struct trace_event *e) {
    char t[32];
    if (!e) {
        snprintf(buf, n, "never");
        return;
    }
    format_time_ns(t, sizeof t, e->t);
    if (e->token) snprintf(buf, n, "at %s, token %llu", t, (unsigned long long)e->token);
    else snprintf(buf, n, "at %s", t);
}

static void write_text(char *buf, size_t n, const struct trace_event *e) {
    char t[32];
    if (!e) {
        snprintf(buf, n, "none");
        return;
    }
    format_time_ns(t, sizeof t, e->t);
    snprintf(buf, n, "at %s, value %lld, %s", t, (long long)e->a, write_result(e->b));
}

/* Client n of a (side 0) or of b (side 1, only those a has not): its
 * acquisitions (writes with is_write) in both traces, paired in order. */
static void client_events(struct part *q, const struct trace *a, const struct by_node *ga, const struct trace *b,
                          const struct by_node *gb, int side, int n, int is_write) {
    int na = side == 0 ? n : -1, nb = side == 0 ? same_node(b, a, n) : n;
    size_t ka = na >= 0 ? ga->off[na + 1] - ga->off[na] : 0, kb = nb >= 0 ? gb->off[nb + 1] - gb->off[nb] : 0;
    char x[120], y[120], what[120], nm[80];
    for (size_t k = 0; k < ka || k < kb; k++) {
        const struct trace_event *ea = k < ka ? &a->ev[ga->ev[ga->off[na] + k]] : NULL;
        const struct trace_event *eb = k < kb ? &b->ev[gb->ev[gb->off[nb] + k]] : NULL;
        if (ea && eb && ea->t == eb->t && ea->token == eb->token && (!is_write || (ea->a == eb->a && ea->b == eb->b)))
            continue;
        if (is_write) {
            write_text(x, sizeof x, ea);
            write_text(y, sizeof y, eb);
        } else {
            acquired_text(x, sizeof x, ea);
            acquired_text(y, sizeof y, eb);
        }
        snprintf(what, sizeof what, "%s %s (#%zu): ", node_shown(nm, side == 0 ? a : b, n),
                 is_write ? "writes" : "acquires", k + 1);
        part_line(q, what, x, y);
    }
}

/* Every client's acquisitions or writes, a's clients then b's others. */
static int clients(struct part *q, const struct trace *a, const struct by_node *ga, const struct trace *b,
                   const struct by_node *gb, int is_write) {
    for (int n = 0; n < a->nnodes; n++)
        if (a->nodes[n].kind == TRACE_NODE_CLIENT) client_events(q, a, ga, b, gb, 0, n, is_write);
    for (int n = 0; n < b->nnodes; n++)
        if (b->nodes[n].kind == TRACE_NODE_CLIENT && same_node(a, b, n) < 0)
            client_events(q, a, ga, b, gb, 1, n, is_write);
    return part_end(q);
}

int trace_diff_meaning(FILE *f, const struct trace *a, const struct checker_report *ra, const struct trace *b,
                       const struct checker_report *rb, int max_lines, const char *indent) {
    int found = 0;
    char x[200], y[200], what[64];
    /* The verdict and the metrics, in their units. */
    struct part p = {f, indent, "What the checker says:", max_lines, 0, 0};
    for (int m = 0; m < SCN_M_COUNT; m++) {
        int64_t va = checker_metric(ra, (enum scn_metric)m), vb = checker_metric(rb, (enum scn_metric)m);
        if (va == vb || m == SCN_M_END_NS) continue;
        metric_format(x, sizeof x, (enum scn_metric)m, va);
        metric_format(y, sizeof y, (enum scn_metric)m, vb);
        snprintf(what, sizeof what, "%-22s ", metric_info((enum scn_metric)m)->word);
        part_line(&p, what, x, y);
    }
    found += part_end(&p);
    /* Who held the lock when, and the writes: each client's, paired in order. */
    struct by_node ga = {0}, gb = {0}, wa = {0}, wb = {0};
    if (by_node_init(&ga, a, TRACE_ACQUIRED, 0) || by_node_init(&gb, b, TRACE_ACQUIRED, 0) ||
        by_node_init(&wa, a, TRACE_WRITE, 1) || by_node_init(&wb, b, TRACE_WRITE, 1)) {
        found = LSIM_ENOMEM;
        goto out;
    }
    struct part q = {f, indent, "Who held the lock when:", max_lines, 0, 0};
    found += clients(&q, a, &ga, b, &gb, 0);
    struct part w = {f, indent, "Writes at the resource:", max_lines, 0, 0};
    found += clients(&w, a, &wa, b, &wb, 1);
out:
    by_node_close(&ga);
    by_node_close(&gb);
    by_node_close(&wa);
    by_node_close(&wb);
    return found;
}
