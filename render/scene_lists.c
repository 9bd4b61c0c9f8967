/* Scene lists: the rows of text under the lanes that say in words what the
 * lanes show: the double-entry row with its intervals, and the lines that
 * list a resource's writes (accepted, stale or rejected, and why). */
#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "scene_int.h"

void scene_emit_doubles(struct scene_ctx *c) {
    const struct layout *ly = c->ly;
    struct scene *sc = c->sc;
    const struct scene_view *v = c->v;
    char t0[32], t1[32], len[32], buf[256];
    int y = c->y, pad = v->lane_h > 2 ? v->lane_h / 6 : 0;
    scene_text_n(c, c->x0, y + (v->lane_h - v->line_h) / 2, "DOUBLE ENTRY", 12, SCENE_ST_ALERT);
    for (size_t i = 0; i < ly->ndoubles; i++) {
        const struct layout_double *d = &ly->doubles[i];
        int c0, c1;
        if (!scene_span_cells(sc, d->t0, d->t1, d->open, &c0, &c1)) continue;
        scene_min_cells(c, &c0, &c1);
        struct scene_cmd *r = scene_add(c, SCENE_CMD_RECT, SCENE_ST_DOUBLE, sc->plot_x + c0 * v->cell_w, y + pad,
                                        (c1 - c0 + 1) * v->cell_w, v->lane_h - 2 * pad);
        if (!r) return;
        r->sym = SCENE_SYM_DOUBLE;
        r->t0 = d->t0;
        r->t1 = d->t1;
        c->used[SCENE_SYM_DOUBLE] = 1;
    }
    c->y += v->lane_h;
    size_t shown = ly->ndoubles < 6 ? ly->ndoubles : 6;
    for (size_t i = 0; i < shown; i++) {
        const struct layout_double *d = &ly->doubles[i];
        int lo = d->a < d->b ? d->a : d->b, hi = d->a < d->b ? d->b : d->a;
        format_time_ns(t0, sizeof t0, d->t0);
        format_time_ns(t1, sizeof t1, d->t1);
        format_time_ns(len, sizeof len, d->t1 - d->t0);
        if (d->open)
            snprintf(buf, sizeof buf,
                     "^ %s..%s  %s and %s both in the critical section"
                     " (still at the end)",
                     t0, t1, scene_node_name(ly, lo), scene_node_name(ly, hi));
        else
            snprintf(buf, sizeof buf, "^ %s..%s  %s and %s both in the critical section (%s)", t0, t1,
                     scene_node_name(ly, lo), scene_node_name(ly, hi), len);
        scene_wrapped(c, c->lw, 2, buf, SCENE_ST_ALERT);
    }
    if (ly->ndoubles > shown) {
        snprintf(buf, sizeof buf, "(%zu more double entries)", ly->ndoubles - shown);
        scene_wrapped(c, c->lw, 2, buf, SCENE_ST_ALERT);
    }
}

/* Which writes get a line of their own under the resource: the rejected
 * ones and the stale ones that got through (the save and the damage). */
static int write_interesting(const struct layout_mark *m) {
    return m->kind == LAYOUT_MARK_WRITE_REJECTED || m->stale || m->late;
}

/* One line per write under a resource lane, e.g.
 *   "w t=32s  A write tok 41 value 9 REJECTED: stale, 42 already seen".
 * All writes when there are few, else the rejected and stale ones. */
void scene_emit_writes(struct scene_ctx *c, const struct layout_lane *lane) {
    enum { MAX_LINES = 8 };
    size_t nwrites = 0, ninteresting = 0;
    for (size_t i = 0; i < lane->nmarks; i++) {
        const struct layout_mark *m = &lane->marks[i];
        if (m->kind != LAYOUT_MARK_WRITE_OK && m->kind != LAYOUT_MARK_WRITE_REJECTED) continue;
        nwrites++;
        ninteresting += (size_t)write_interesting(m);
    }
    int all = nwrites <= MAX_LINES;
    size_t shown = 0, listed = all ? nwrites : ninteresting;
    uint64_t max_tok = 0;
    int64_t held = INT64_MIN; /* the value the last accepted write left, while known */
    char t[32], tok[32], why[96], buf[256];
    for (size_t i = 0; i < lane->nmarks; i++) {
        const struct layout_mark *m = &lane->marks[i];
        if (m->kind != LAYOUT_MARK_WRITE_OK && m->kind != LAYOUT_MARK_WRITE_REJECTED) continue;
        uint64_t seen = max_tok;
        int repeated = m->kind == LAYOUT_MARK_WRITE_OK && m->set && m->value == held;
        if (m->kind == LAYOUT_MARK_WRITE_OK && m->token > max_tok) max_tok = m->token;
        if (m->kind == LAYOUT_MARK_WRITE_OK) held = m->value;
        if ((!all && !write_interesting(m)) || shown >= MAX_LINES) continue;
        shown++;
        int ok = m->kind == LAYOUT_MARK_WRITE_OK;
        int style = ok ? (m->stale ? SCENE_ST_STALE_WRITE : SCENE_ST_TEXT) : SCENE_ST_WRITE_REJECTED;
        format_time_ns(t, sizeof t, m->t);
        if (m->token) snprintf(tok, sizeof tok, "tok %llu", (unsigned long long)m->token);
        else snprintf(tok, sizeof tok, "no token");
        if (ok && m->stale && m->other >= 0)
            snprintf(why, sizeof why, "ACCEPTED though stale: %s holds the lock", scene_node_name(c->ly, m->other));
        else if (ok && m->stale) snprintf(why, sizeof why, "ACCEPTED though stale");
        else if (ok && m->late && m->other >= 0)
            snprintf(why, sizeof why, "accepted late: before any operation of %s", scene_node_name(c->ly, m->other));
        else if (ok && m->late) snprintf(why, sizeof why, "accepted late: before any newer operation");
        else if (ok && repeated) snprintf(why, sizeof why, "accepted: the value already held, no change");
        else if (ok) snprintf(why, sizeof why, "accepted");
        else if (m->detail == TRACE_WRITE_REJECTED_STALE && seen > m->token)
            snprintf(why, sizeof why, "REJECTED: stale, %llu already seen", (unsigned long long)seen);
        else if (m->detail == TRACE_WRITE_REJECTED_STALE) snprintf(why, sizeof why, "REJECTED: stale token");
        else if (m->detail == TRACE_WRITE_REJECTED_NOTOKEN) snprintf(why, sizeof why, "REJECTED: no fencing token");
        else if (m->detail == TRACE_WRITE_REJECTED_COND)
            snprintf(why, sizeof why, "REJECTED: value changed since read");
        else if (m->detail == TRACE_WRITE_REJECTED_UNIQUE) snprintf(why, sizeof why, "REJECTED: unique constraint");
        else if (m->detail == TRACE_WRITE_REJECTED_NOT_OWNER) snprintf(why, sizeof why, "REJECTED: not the holder");
        else if (m->detail == TRACE_WRITE_REJECTED_DUPLICATE)
            snprintf(why, sizeof why, "REJECTED: idempotency key already applied");
        else snprintf(why, sizeof why, "REJECTED");
        snprintf(buf, sizeof buf, "%c t=%s  %s write %s %s %lld %s",
                 ok ? scene_syms[SCENE_SYM_WRITE_OK].ch : scene_syms[SCENE_SYM_WRITE_REJECTED].ch, t,
                 scene_node_name(c->ly, m->peer), tok, m->set ? "set" : "value", (long long)m->value, why);
        scene_wrapped(c, c->lw, 2, buf, style);
    }
    if (listed > shown || (!all && nwrites > shown)) {
        snprintf(buf, sizeof buf, "(%zu more writes not listed)", nwrites - shown);
        scene_wrapped(c, c->lw, 2, buf, SCENE_ST_TEXT);
    }
}

/* One line under a server's lane per promotion that lacked a lock, e.g.
 *   "@ t=2s  S2 promoted to primary without A's lock (token 41): the grant
 *   never reached it". */
void scene_emit_promotions(struct scene_ctx *c, const struct layout_lane *lane) {
    char t[32], tok[40], buf[256];
    for (size_t i = 0; i < lane->nmarks; i++) {
        const struct layout_mark *m = &lane->marks[i];
        if (m->kind != LAYOUT_MARK_CONTROL || m->value != 1) continue;
        format_time_ns(t, sizeof t, m->t);
        if (m->token) snprintf(tok, sizeof tok, " (token %llu)", (unsigned long long)m->token);
        else tok[0] = 0;
        snprintf(buf, sizeof buf, "%c t=%s  %s promoted to primary without %s's lock%s: the grant never reached it",
                 scene_syms[SCENE_SYM_CONTROL].ch, t, lane->name, scene_node_name(c->ly, m->peer), tok);
        scene_wrapped(c, c->lw, 2, buf, SCENE_ST_ALERT);
    }
}
