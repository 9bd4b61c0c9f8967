/* Trace comparison (trace_diff.h): the first divergent event, and a
 * report of it with context. */
#include "trace_diff.h"

#include <stdlib.h>
#include <string.h>

#include "fmt.h"
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
           strcmp(node_name(a, x->peer), node_name(b, y->peer)) == 0 && x->token == y->token &&
           x->grant == y->grant && x->a == y->a && x->b == y->b &&
           strcmp(x->text ? x->text : "", y->text ? y->text : "") == 0;
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

static void print_range(FILE *f, const char *indent, const char *mark, const struct trace *tr, size_t from,
                        size_t to) {
    char line[512];
    for (size_t i = from; i < to && i < tr->len; i++) {
        trace_diff_event(line, sizeof line, tr, &tr->ev[i]);
        fprintf(f, "%s%s%s\n", indent, mark, line);
    }
}

void trace_diff_print(FILE *f, const struct trace *a, const char *name_a, const struct trace *b,
                      const char *name_b, long at, int context, const char *indent) {
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
    fprintf(f, "%sfirst divergence at event #%zu (t=%s); %s has %zu events, %s has %zu\n", indent, i, t, name_a,
            a->len, name_b, b->len);
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
