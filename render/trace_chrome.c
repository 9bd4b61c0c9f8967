/* Chrome Trace Event export (trace_chrome.h): the spans and marks the
 * timelines draw (from the layout), and from the trace itself what the
 * pictures show beside them: every message as a flow from its send to its
 * receipt or its drop, the algorithms' notes (elections, terms, sessions)
 * and the faults (partitions, links, clock drifts and slews) on their
 * nodes' tracks, so Perfetto shows the whole run, not a summary. */
#include "trace_chrome.h"

#include <inttypes.h>
#include <string.h>

#include "error.h"
#include "layout.h"

/* ns as microseconds with exactly three decimals: 31000000001 -> 31000000.001 */
static void us(FILE *f, sim_ns t) {
    uint64_t m = t < 0 ? 0 : (uint64_t)t;
    fprintf(f, "%" PRIu64 ".%03u", m / 1000, (unsigned)(m % 1000));
}

static void str(FILE *f, const char *s) {
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}

static const char *span_title(int kind) {
    switch (kind) {
    case LAYOUT_SPAN_ACQUIRING: return "acquiring";
    case LAYOUT_SPAN_HOLDING: return "in the critical section";
    case LAYOUT_SPAN_PAUSED: return "paused";
    case LAYOUT_SPAN_CRASHED: return "down (crashed)";
    case LAYOUT_SPAN_LEASE: return "lease";
    default: return layout_span_name(kind);
    }
}

static const char *mark_title(const struct layout_mark *m) {
    switch (m->kind) {
    case LAYOUT_MARK_WRITE_OK:
        return m->stale  ? "STALE write accepted (damage)"
               : m->late ? "late write accepted (in grant order, no harm)"
                         : "write accepted";
    case LAYOUT_MARK_WRITE_REJECTED: return m->stale ? "stale write rejected (fencing)" : "write rejected";
    default: return layout_mark_name(m->kind);
    }
}

static void sep(FILE *f, int *first) {
    fputs(*first ? "\n" : ",\n", f);
    *first = 0;
}

static const char *node_name(const struct trace *tr, int n) {
    return n >= 0 && n < tr->nnodes ? tr->nodes[n].name : "?";
}

/* A 1 ns slice that a flow event binds to, on node n's track. */
static void flow_slice(FILE *out, int *first, int n, sim_ns t, const char *cat, const char *name) {
    sep(out, first);
    fprintf(out, "{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"cat\":\"%s\",\"name\":", n + 1, cat);
    str(out, name);
    fputs(",\"ts\":", out);
    us(out, t);
    fputs(",\"dur\":0.001}", out);
}

/* Messages: a flow from each send ("ph":"s") to its receipt or drop
 * ("ph":"f", bound to the enclosing slice), the message id as the flow id. */
static void message(FILE *out, int *first, const struct trace *tr, const struct trace_event *e) {
    char name[96];
    const char *ph = e->kind == TRACE_MSG_SEND ? "s" : "f";
    if (e->kind == TRACE_MSG_SEND)
        snprintf(name, sizeof name, "send #%lld to %s", (long long)e->b, node_name(tr, e->peer));
    else if (e->kind == TRACE_MSG_RECV)
        snprintf(name, sizeof name, "receive #%lld from %s", (long long)e->b, node_name(tr, e->peer));
    else snprintf(name, sizeof name, "DROPPED message from %s", node_name(tr, e->peer));
    flow_slice(out, first, e->node, e->t, e->kind == TRACE_MSG_DROP ? "msg-drop" : "msg", name);
    sep(out, first);
    fprintf(out, "{\"ph\":\"%s\",%s\"pid\":1,\"tid\":%d,\"cat\":\"msg\",\"name\":\"message\",\"id\":%lld,\"ts\":", ph,
            *ph == 'f' ? "\"bp\":\"e\"," : "", e->node + 1, (long long)e->a);
    us(out, e->t);
    fputs("}", out);
}

/* An instant on node n's track (n < 0: across the whole process). */
static void instant(FILE *out, int *first, int n, sim_ns t, const char *cat, const char *name, int64_t a, int64_t b) {
    sep(out, first);
    fprintf(out, "{\"ph\":\"i\",\"s\":\"%s\",\"pid\":1,\"tid\":%d,\"cat\":\"%s\",\"name\":", n < 0 ? "p" : "t",
            n < 0 ? 0 : n + 1, cat);
    str(out, name);
    fputs(",\"ts\":", out);
    us(out, t);
    fprintf(out, ",\"args\":{\"a\":%lld,\"b\":%lld}}", (long long)a, (long long)b);
}

/* What the layout does not carry: messages, notes, network and clock faults. */
static void raw_events(FILE *out, int *first, const struct trace *tr) {
    char name[160];
    for (size_t i = 0; i < tr->len; i++) {
        const struct trace_event *e = &tr->ev[i];
        int n = e->node >= 0 && e->node < tr->nnodes ? e->node : -1;
        switch ((enum trace_kind)e->kind) {
        case TRACE_MSG_SEND:
        case TRACE_MSG_RECV:
        case TRACE_MSG_DROP:
            if (n >= 0) message(out, first, tr, e);
            break;
        case TRACE_SRV_NOTE: instant(out, first, n, e->t, "note", e->text ? e->text : "note", e->a, e->b); break;
        case TRACE_PARTITION:
            snprintf(name, sizeof name, "partition %s", e->text ? e->text : "");
            instant(out, first, -1, e->t, "fault", name, e->a, e->b);
            break;
        case TRACE_HEAL: instant(out, first, -1, e->t, "fault", "heal: every partition ends", e->a, e->b); break;
        case TRACE_LINK:
            snprintf(name, sizeof name, "link %s -> %s changes", node_name(tr, e->node), node_name(tr, e->peer));
            instant(out, first, n, e->t, "fault", name, e->a, e->b);
            break;
        case TRACE_CLOCK_DRIFT:
            snprintf(name, sizeof name, "clock drift %+lld ppm", (long long)e->a);
            instant(out, first, n, e->t, "fault", name, e->a, e->b);
            break;
        case TRACE_CLOCK_SLEW: instant(out, first, n, e->t, "fault", "clock slew", e->a, e->b); break;
        default: break;
        }
    }
}

int trace_write_chrome(FILE *out, const struct trace *tr) {
    struct layout ly;
    if (layout_build(&ly, tr) != 0) return LSIM_ENOMEM;
    int first = 1, dtrack = ly.nlanes; /* the double-entry track after the nodes */
    fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"locksim\",\"title\":", out);
    str(out, tr->title);
    fputs(",\"algo\":", out);
    str(out, tr->algo);
    fprintf(out, ",\"seed\":%" PRIu64 "},\"traceEvents\":[", tr->seed);
    sep(out, &first);
    fputs("{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":", out);
    str(out, tr->title[0] ? tr->title : "locksim run");
    fputs("}}", out);
    for (int i = 0; i < ly.nlanes; i++) {
        const struct layout_lane *l = &ly.lanes[i];
        sep(out, &first);
        fprintf(out, "{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":", i + 1);
        str(out, l->name);
        fprintf(out,
                "}},\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%d}}",
                i + 1, i + 1);
    }
    if (ly.ndoubles) {
        sep(out, &first);
        fprintf(out,
                "{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":\"DOUBLE ENTRY\"}}",
                dtrack + 1);
    }
    for (int i = 0; i < ly.nlanes; i++) {
        const struct layout_lane *l = &ly.lanes[i];
        for (size_t k = 0; k < l->nspans; k++) {
            const struct layout_span *s = &l->spans[k];
            sep(out, &first);
            fputs("{\"ph\":\"X\",\"pid\":1,\"tid\":", out);
            fprintf(out, "%d,\"cat\":\"%s\",\"name\":", i + 1, layout_span_name(s->kind));
            str(out, span_title(s->kind));
            fputs(",\"ts\":", out);
            us(out, s->t0);
            fputs(",\"dur\":", out);
            us(out, s->t1 - s->t0);
            fprintf(out, ",\"args\":{\"ended\":\"%d\"", s->end);
            if (s->token) fprintf(out, ",\"token\":%" PRIu64, s->token);
            if (s->peer >= 0 && s->peer < ly.nlanes) {
                fputs(",\"owner\":", out);
                str(out, ly.lanes[s->peer].name);
            }
            fputs("}}", out);
        }
        for (size_t k = 0; k < l->nmarks; k++) {
            const struct layout_mark *m = &l->marks[k];
            sep(out, &first);
            fprintf(out, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":%d,\"cat\":\"%s\",\"name\":", i + 1,
                    layout_mark_name(m->kind));
            str(out, mark_title(m));
            fputs(",\"ts\":", out);
            us(out, m->t);
            fprintf(out, ",\"args\":{\"seq\":%u", m->seq);
            if (m->token) fprintf(out, ",\"token\":%" PRIu64, m->token);
            if (m->peer >= 0 && m->peer < ly.nlanes) {
                fputs(",\"peer\":", out);
                str(out, ly.lanes[m->peer].name);
            }
            fprintf(out, ",\"value\":%" PRId64 "}}", m->value);
        }
    }
    raw_events(out, &first, tr);
    for (size_t k = 0; k < ly.ndoubles; k++) {
        const struct layout_double *d = &ly.doubles[k];
        sep(out, &first);
        fprintf(out, "{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"cat\":\"double-entry\",\"name\":", dtrack + 1);
        char name[96];
        snprintf(name, sizeof name, "%s and %s both in the critical section",
                 d->a >= 0 && d->a < ly.nlanes ? ly.lanes[d->a].name : "?",
                 d->b >= 0 && d->b < ly.nlanes ? ly.lanes[d->b].name : "?");
        str(out, name);
        fputs(",\"ts\":", out);
        us(out, d->t0);
        fputs(",\"dur\":", out);
        us(out, d->t1 - d->t0);
        fputs("}", out);
    }
    fputs("\n]}\n", out);
    layout_close(&ly);
    return ferror(out) ? LSIM_EOUTPUT : LSIM_OK;
}
