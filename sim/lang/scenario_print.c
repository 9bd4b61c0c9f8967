/* The scenario written back as text: every field the parser reads, in the
 * language of docs/scenario-format.md, so that scenario_parse() of the text
 * gives the same scenario (params are written as the values they gave). The
 * explorer writes its counterexamples with it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "parse_int.h"

struct buf {
    char *p;
    size_t len, cap;
    int oom;
};

PRINTF_LIKE(2, 3) static void put(struct buf *b, const char *fmt, ...) {
    va_list ap;
    int n;

    if (b->oom) return;
    for (;;) {
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
        n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if (b->p && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t ncap = b->cap ? b->cap * 2 : 4096;
        while (ncap < b->len + (size_t)n + 1) ncap *= 2;
        char *np = realloc(b->p, ncap);
        if (np == NULL) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = ncap;
    }
}

/* A duration as the parser reads it back exactly. */
static const char *dur(char *d, sim_ns v) {
    scn_format_duration(d, 48, v);
    return d;
}

static void put_string(struct buf *b, const char *s) {
    put(b, "\"");
    for (; *s; s++) put(b, "%s%c", *s == '"' || *s == '\\' ? "\\" : "", *s);
    put(b, "\"");
}

static void put_latency(struct buf *b, const struct scn_latency *l) {
    char x[48], y[48];

    if (l->min_ns == l->max_ns) put(b, "latency=%s", dur(x, l->min_ns));
    else put(b, "latency=%s..%s", dur(x, l->min_ns), dur(y, l->max_ns));
}

static void put_loss(struct buf *b, uint32_t ppm) { put(b, "loss=%uppm", (unsigned)ppm); }

/* FROM TO [latency=] [loss=]: fields not given are LAT_UNSET / LOSS_UNSET. */
static void put_link(struct buf *b, const struct scn_link *l) {
    put(b, "link %s %s", l->from, l->to);
    if (l->lat.min_ns != LAT_UNSET) {
        put(b, " ");
        put_latency(b, &l->lat);
    }
    if (l->loss_ppm != LOSS_UNSET) {
        put(b, " ");
        put_loss(b, l->loss_ppm);
    }
}

static void put_step(struct buf *b, const struct scn_step *st) {
    char d[48];

    put(b, "%s", scn_step_name(st->kind));
    if (st->kind == SCN_STEP_WORK) put(b, " %s", dur(d, st->dur_ns));
    if (st->kind == SCN_STEP_WRITE && st->absolute) put(b, " set=%lld", (long long)st->set_value);
    if (st->kind == SCN_STEP_WRITE && st->tries >= 2) put(b, " tries=%d backoff=%s", st->tries, dur(d, st->retry_ns));
    if (st->kind != SCN_STEP_ACQUIRE) return;
    if (st->retry_ns) put(b, " retry=%s", dur(d, st->retry_ns));
    if (st->jitter_ns) put(b, " jitter=%s", dur(d, st->jitter_ns));
    if (st->tries) put(b, " tries=%d", st->tries);
    if (st->timeout_ns) put(b, " timeout=%s", dur(d, st->timeout_ns));
}

static void put_client(struct buf *b, const struct scenario *s, const struct scn_client *c) {
    const struct scn_program *pr = &s->programs[c->program];
    char d[48];
    int i;

    put(b, "client %s", c->name);
    if (c->start_ns) put(b, " @%s", dur(d, c->start_ns));
    if (c->repeat != 1) put(b, " repeat=%d", c->repeat);
    if (c->think_ns) put(b, " think=%s", dur(d, c->think_ns));
    if (c->ignores_loss) put(b, " checks-loss=no");
    put(b, ":");
    for (i = 0; i < pr->nsteps; i++) {
        put(b, i ? "; " : " ");
        put_step(b, &pr->steps[i]);
    }
    put(b, "\n");
}

static const char *clock_word(enum scn_clock_which w) {
    return w == SCN_CLOCK_MONO ? "monotonic" : w == SCN_CLOCK_BOTH ? "both" : "wall";
}

static void put_fault(struct buf *b, const struct scn_fault *f) {
    char d[48], e[48];
    int g, k;

    if (f->point == SCN_POINT_NONE) put(b, "@%s ", dur(d, f->at_ns));
    else if (f->occurrence != 1) put(b, "on %s.%s#%d ", f->trigger, scn_point_name(f->point), f->occurrence);
    else put(b, "on %s.%s ", f->trigger, scn_point_name(f->point));
    switch (f->kind) {
    case SCN_FAULT_PAUSE:
        put(b, "pause %s", f->node);
        if (f->dur_ns) put(b, " %s", dur(d, f->dur_ns));
        break;
    case SCN_FAULT_CLOCK_STEP: put(b, "clock %s step %s %s", f->node, dur(d, f->delta_ns), clock_word(f->which)); break;
    case SCN_FAULT_CLOCK_DRIFT: put(b, "clock %s drift %lldppm", f->node, (long long)f->ppm); break;
    case SCN_FAULT_CLOCK_SLEW:
        put(b, "clock %s slew %s over %s", f->node, dur(d, f->delta_ns), dur(e, f->dur_ns));
        break;
    case SCN_FAULT_PARTITION:
        put(b, "partition");
        for (g = 0; g < f->ngroups; g++) {
            if (g) put(b, " |");
            for (k = 0; k < f->group_len[g]; k++) put(b, " %s", f->groups[g][k]);
        }
        break;
    case SCN_FAULT_HEAL: put(b, "heal"); break;
    case SCN_FAULT_LINK: put_link(b, &f->link); break;
    default: /* resume, crash, restart, promote */ put(b, "%s %s", scn_fault_name(f->kind), f->node); break;
    }
    put(b, "\n");
}

static const char *cmp_word(enum scn_cmp c) {
    static const char *const w[] = {"=", "!=", "<", "<=", ">", ">="};
    return (unsigned)c < 6 ? w[c] : "=";
}

static void put_expect(struct buf *b, const struct scn_expect *x) {
    const struct metric_info *mi = metric_info(x->metric);
    char d[48];

    if (x->text[0]) {
        put(b, "expect %s\n", x->text);
        return;
    }
    if (x->metric == SCN_M_VERDICT)
        put(b, "expect verdict %s%s\n", x->cmp == SCN_CMP_NE ? "!= " : "",
            scn_verdict_name((enum scn_verdict)x->value));
    else if (mi->unit == METRIC_UNIT_NS) put(b, "expect %s %s %s\n", mi->word, cmp_word(x->cmp), dur(d, x->value));
    else put(b, "expect %s %s %lld\n", mi->word, cmp_word(x->cmp), (long long)x->value);
}

static void put_range(struct buf *b, const char *key, sim_ns lo, sim_ns hi) {
    char x[48], y[48];

    put(b, " %s=%s..%s", key, dur(x, lo), dur(y, hi));
}

static void put_explore(struct buf *b, const struct scn_explore *x) {
    static const char *const who[8] = {"", "clients", "servers", "nodes", "resource"};
    char d[48];
    int k, first = 1;

    put(b, "explore");
    for (k = 0; k < SCN_NEM_COUNT; k++) {
        const struct scn_budget *g = &x->k[k];
        if (g->max == 0) continue;
        put(b, "%s %s<=%d", first ? "" : ";", scn_nemesis_name((enum scn_nemesis)k), g->max);
        first = 0;
        if (g->node[0]) put(b, " on %s", g->node);
        else if (g->targets < 8 && who[g->targets] && who[g->targets][0]) put(b, " on %s", who[g->targets]);
        switch (k) {
        case SCN_NEM_PAUSE: put_range(b, "length", g->lo_ns, g->hi_ns); break;
        case SCN_NEM_CLOCK_STEP:
            put_range(b, "delta", g->lo_ns, g->hi_ns);
            put(b, " clock=%s", clock_word(g->which));
            break;
        case SCN_NEM_LATENCY:
            put(b, " max=%s", dur(d, g->hi_ns));
            put_range(b, "length", g->len_lo_ns, g->len_hi_ns);
            break;
        default: put_range(b, "down", g->lo_ns, g->hi_ns); break;
        }
        if (g->at_hi_ns) put_range(b, "at", g->at_lo_ns, g->at_hi_ns);
        if (k == SCN_NEM_PAUSE || k == SCN_NEM_CRASH) put(b, " points=%s", g->points ? "on" : "off");
    }
    put(b, "\n");
}

int scenario_print(const struct scenario *s, char **out, size_t *len) {
    struct buf b = {NULL, 0, 0, 0};
    char d[48];
    int i;

    *out = NULL;
    *len = 0;
    if (s->title[0]) {
        put(&b, "title ");
        put_string(&b, s->title);
        put(&b, "\n");
    }
    if (s->description[0]) {
        put(&b, "description ");
        put_string(&b, s->description);
        put(&b, "\n");
    }
    put(&b, "purpose %s\n", s->purpose == SCN_PURPOSE_EFFICIENCY ? "efficiency" : "correctness");
    put(&b, "seed %llu\n", (unsigned long long)s->seed);
    put(&b, "duration %s\n", dur(d, s->duration_ns));
    put(&b, "stuck-after %s\n", dur(d, s->stuck_after_ns));
    put(&b, "max-events %llu\n", (unsigned long long)s->max_events);
    put(&b, "retry %s\n", dur(d, s->retry_ns));
    put(&b, "lock %s", s->algo);
    if (s->nservers) put(&b, " servers=%d", s->nservers);
    for (i = 0; i < s->nopts; i++) put(&b, " %s=%s", s->opts[i].key, s->opts[i].val);
    put(&b, "\nresource stock=%lld", (long long)s->stock);
    /* Only a stated fencing= is written: fenced-lease honours a stated off
     * (tokens issued, not checked) but checks by default. */
    if (s->fencing || s->fencing_stated) put(&b, " fencing=%s", s->fencing ? "on" : "off");
    if (s->resource_timeout_ns) put(&b, " timeout=%s", dur(d, s->resource_timeout_ns));
    if (s->check_reads) put(&b, " check=reads+writes");
    if (s->guard_owner) put(&b, " guard=owner");
    put(&b, "\nnetwork ");
    put_latency(&b, &s->latency);
    put(&b, " ");
    put_loss(&b, s->loss_ppm);
    put(&b, "\n");
    for (i = 0; i < s->nlinks; i++) {
        put_link(&b, &s->links[i]);
        put(&b, "\n");
    }
    for (i = 0; i < s->nclocks; i++)
        put(&b, "clock %s drift=%lldppm offset=%s\n", s->clocks[i].node, (long long)s->clocks[i].drift_ppm,
            dur(d, s->clocks[i].wall_offset_ns));
    for (i = 0; i < s->nclients; i++) put_client(&b, s, &s->clients[i]);
    if (s->explore.given) put_explore(&b, &s->explore);
    for (i = 0; i < s->nfaults; i++) put_fault(&b, &s->faults[i]);
    for (i = 0; i < s->nexpects; i++) put_expect(&b, &s->expects[i]);
    if (b.oom || b.p == NULL) {
        free(b.p);
        return LSIM_ENOMEM;
    }
    *out = b.p;
    *len = b.len;
    return 0;
}
