/* Scene axis: true time to cells (linear, or compressed around idle
 * stretches), the window and the fitted axis, and the axis rows with their
 * ticks, labels and gap marks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fmt.h"
#include "scene_int.h"

/* The cell of true time t (in the window). Without gaps, the axis's own
 * cell; with gaps, the time of the gaps before t is taken out and their
 * cells put in, and a time inside a gap falls in proportion across it. */
int scene_cell_of(const struct scene *sc, sim_ns t) {
    if (t < sc->t0) t = sc->t0;
    if (!sc->ngaps) return layout_axis_cell(&sc->axis, t - sc->t0);
    sim_ns skipped = 0;
    int extra = 0;
    for (int i = 0; i < sc->ngaps; i++) {
        const struct scene_gap *g = &sc->gaps[i];
        if (t <= g->t0) break;
        if (t < g->t1) return g->c0 + (int)((t - g->t0) * (sim_ns)g->ncells / (g->t1 - g->t0 + 1));
        skipped += g->t1 - g->t0;
        extra += g->ncells + 1; /* t1 itself is the cell after the gap */
    }
    sim_ns d = t - sc->t0 - skipped;
    sim_ns c = (sc->axis.cell_ns > 0 ? d / sc->axis.cell_ns : 0) + extra;
    return c >= sc->axis.ncells ? sc->axis.ncells - 1 : (int)c;
}

/* The cells [*c0, *c1] of true interval [t0, t1] in the window, or 0 when
 * it lies outside. An interval still open at the end of the trace runs to
 * the last cell. */
int scene_span_cells(const struct scene *sc, sim_ns t0, sim_ns t1, int open, int *c0, int *c1) {
    if (t0 > sc->t1 || t1 < sc->t0 || (t1 == sc->t0 && t0 < t1)) return 0;
    sim_ns a = t0 < sc->t0 ? 0 : t0 - sc->t0;
    sim_ns b = t1 > sc->t1 ? sc->t1 - sc->t0 : t1 - sc->t0;
    if (sc->ngaps) { /* to the cell before the one where b begins a cell */
        *c0 = scene_cell_of(sc, sc->t0 + a);
        *c1 = b > a ? scene_cell_of(sc, sc->t0 + b - 1) : *c0;
        if (*c1 < *c0) *c1 = *c0;
    } else {
        layout_axis_span(&sc->axis, a, b, c0, c1);
    }
    if (open || t1 > sc->t1) *c1 = sc->axis.ncells - 1;
    return 1;
}

/* In pictures, widen [*c0, *c1] to at least one character, about its
 * middle, so that a 1 ns double entry on a 60 s axis is still seen. */
void scene_min_cells(const struct scene_ctx *c, int *c0, int *c1) {
    int need = c->v->char_w / c->v->cell_w, have = *c1 - *c0 + 1;
    if (c->v->char_w <= c->v->cell_w || have >= need) return;
    int extra = need - have;
    *c0 -= extra / 2;
    *c1 += extra - extra / 2;
    if (*c0 < 0) *c0 = 0;
    if (*c1 > c->sc->axis.ncells - 1) *c1 = c->sc->axis.ncells - 1;
}

/* The cell of instant t, or -1 outside the window. */
int scene_mark_cell(const struct scene *sc, sim_ns t) {
    if (t < sc->t0 || t > sc->t1) return -1;
    return scene_cell_of(sc, t);
}

int scene_x_of(const struct scene *sc, sim_ns t) {
    if (sc->axis.cell_ns <= 0 || sc->axis.ncells <= 0) return sc->plot_x;
    return sc->plot_x + scene_cell_of(sc, t > sc->t1 ? sc->t1 : t) * (sc->plot_w / sc->axis.ncells);
}

/* Whether a tick at t falls inside a gap (ticks there are not drawn). */
int scene_in_gap(const struct scene *sc, sim_ns t) {
    for (int i = 0; i < sc->ngaps; i++)
        if (t > sc->gaps[i].t0 && t < sc->gaps[i].t1) return 1;
    return 0;
}

static int cmp_ns(const void *a, const void *b) {
    sim_ns x = *(const sim_ns *)a, y = *(const sim_ns *)b;
    return x < y ? -1 : x > y;
}

/* A compressed axis: the stretches of the window with no event (instant,
 * interval end, double entry, message) in any of the nly layouts, longer
 * than a fifth of the window, less a fortieth at each side, become gaps; at
 * most max (and SCENE_MAX_GAPS), the longest ones. Returns 0 or LSIM_ENOMEM. */
int scene_find_gaps(struct scene *sc, const struct layout *lys, size_t nly, int max) {
    size_t n = 2;
    for (size_t j = 0; j < nly; j++) {
        const struct layout *ly = &lys[j];
        n += 2 * ly->ndoubles + 2 * ly->nmsgs;
        for (int l = 0; l < ly->nlanes; l++) n += ly->lanes[l].nmarks + 2 * ly->lanes[l].nspans + ly->lanes[l].nclock;
    }
    sim_ns *t = malloc(n * sizeof *t);
    if (!t) return LSIM_ENOMEM;
    size_t k = 0;
    t[k++] = sc->t0;
    t[k++] = sc->t1;
#define KEEP(x) \
    do { \
        if ((x) > sc->t0 && (x) < sc->t1) t[k++] = (x); \
    } while (0)
    for (size_t j = 0; j < nly; j++) {
        const struct layout *ly = &lys[j];
        for (int l = 0; l < ly->nlanes; l++) {
            const struct layout_lane *ln = &ly->lanes[l];
            for (size_t i = 0; i < ln->nmarks; i++) KEEP(ln->marks[i].t);
            for (size_t i = 0; i < ln->nclock; i++) KEEP(ln->clock[i].t); /* drifts, slews */
            for (size_t i = 0; i < ln->nspans; i++) {
                KEEP(ln->spans[i].t0);
                if (ln->spans[i].end != LAYOUT_END_OPEN) KEEP(ln->spans[i].t1);
            }
        }
        for (size_t i = 0; i < ly->ndoubles; i++) {
            KEEP(ly->doubles[i].t0);
            KEEP(ly->doubles[i].t1);
        }
        for (size_t i = 0; i < ly->nmsgs; i++) {
            KEEP(ly->msgs[i].t0);
            if (ly->msgs[i].fate != 2) KEEP(ly->msgs[i].t1);
        }
    }
#undef KEEP
    qsort(t, k, sizeof *t, cmp_ns);
    sim_ns w = sc->t1 - sc->t0, m = w / 40;
    if (max > SCENE_MAX_GAPS) max = SCENE_MAX_GAPS;
    sc->ngaps = 0;
    for (size_t i = 1; i < k; i++) {
        if (t[i] - t[i - 1] <= w / 5) continue;
        struct scene_gap g = {t[i - 1] + m, t[i] - m, 0, 0};
        int at = sc->ngaps;
        if (sc->ngaps == max) { /* keep the longest: replace the shortest if shorter */
            at = -1;
            for (int j = 0; j < sc->ngaps; j++)
                if (at < 0 || sc->gaps[j].t1 - sc->gaps[j].t0 < sc->gaps[at].t1 - sc->gaps[at].t0) at = j;
            if (at < 0 || sc->gaps[at].t1 - sc->gaps[at].t0 >= g.t1 - g.t0) continue;
            memmove(&sc->gaps[at], &sc->gaps[at + 1], (size_t)(sc->ngaps - at - 1) * sizeof g);
            at = --sc->ngaps;
        }
        sc->gaps[at] = g;
        sc->ngaps++;
    }
    free(t);
    return 0;
}

/* The end of a fitted whole-run window: the last event (an instant, the end
 * of an interval that closed, a double entry, a message, a clock change), plus a twentieth,
 * and never past the end of the run. */
sim_ns scene_fit_end(const struct layout *ly) {
    sim_ns last = 0;
    for (int l = 0; l < ly->nlanes; l++) {
        const struct layout_lane *ln = &ly->lanes[l];
        for (size_t i = 0; i < ln->nmarks; i++)
            if (ln->marks[i].t > last) last = ln->marks[i].t;
        for (size_t i = 0; i < ln->nclock; i++)
            if (ln->clock[i].t > last) last = ln->clock[i].t;
        for (size_t i = 0; i < ln->nspans; i++)
            if (ln->spans[i].end != LAYOUT_END_OPEN && ln->spans[i].t1 > last) last = ln->spans[i].t1;
    }
    for (size_t i = 0; i < ly->ndoubles; i++)
        if (ly->doubles[i].t1 > last) last = ly->doubles[i].t1;
    for (size_t i = 0; i < ly->nmsgs; i++)
        if (ly->msgs[i].fate != 2 && ly->msgs[i].t1 > last) last = ly->msgs[i].t1;
    sim_ns end = last + last / 20;
    return last == 0 || end > ly->t_end ? ly->t_end : end;
}

/* The window, the gaps of a compressed axis (found in the n layouts of
 * gap_src), and the axis fitted to max_cells cells. Returns 0,
 * LSIM_EBAD_VALUE or LSIM_ENOMEM. */
int scene_fit_axis(struct scene_ctx *c, int max_cells, const struct layout *gap_src, size_t ngap_src) {
    struct scene *sc = c->sc;
    const struct scene_view *v = c->v;
    const struct layout *ly = c->ly;
    sc->t0 = v->t0;
    sc->t1 = v->t1;
    if (v->t1 <= v->t0) {
        sc->t0 = 0;
        sc->t1 = (v->flags & SCENE_F_FIT) ? scene_fit_end(ly) : ly->t_end;
    }
    if (sc->t0 < 0) sc->t0 = 0;
    int min_tick = v->min_tick_chars * v->char_w / v->cell_w;
    sim_ns shown = sc->t1 - sc->t0, window_t1 = sc->t1;
    int gap_cells = 0;
    if (v->compressed) {
        gap_cells = 5 * v->char_w / v->cell_w;
        int rc = scene_find_gaps(sc, gap_src, ngap_src, max_cells / 3 / (gap_cells ? gap_cells : 1));
        if (rc) return rc;
        for (int i = 0; i < sc->ngaps; i++) shown -= sc->gaps[i].t1 - sc->gaps[i].t0;
        max_cells -= sc->ngaps * (gap_cells + 2); /* + 1: gaps are cut to whole cells */
    }
    if (layout_axis_fit(&sc->axis, shown, max_cells, min_tick) != 0) return LSIM_EBAD_VALUE;
    if ((v->flags & SCENE_F_STRETCH) && max_cells > 1 && sc->axis.t_end > 0) {
        /* round ticks at least min_tick cells apart; cells of any length */
        struct layout_axis tk;
        int nt = max_cells / (min_tick > 0 ? min_tick : 1);
        if (layout_axis_fit(&tk, sc->axis.t_end, nt > 1 ? nt : 1, 1) != 0) return LSIM_EBAD_VALUE;
        sc->axis.tick_ns = tk.cell_ns;
        sc->axis.unit_ns = tk.unit_ns;
        sc->axis.unit = tk.unit;
        sc->axis.cell_ns = sc->axis.t_end / (max_cells - 1) + 1;
        sc->axis.ncells = (int)(sc->axis.t_end / sc->axis.cell_ns) + 1;
    }
    sc->t1 = sc->t0 + sc->axis.t_end;
    if (sc->ngaps) { /* the gaps' cells, in order */
        /* Each gap a whole number of cells long, so that the cells after it
         * stay aligned with round times as the ticks are. */
        sim_ns kept = window_t1 - sc->t0;
        for (int i = 0; i < sc->ngaps; i++) {
            struct scene_gap *g = &sc->gaps[i];
            sim_ns len = (g->t1 - g->t0) / sc->axis.cell_ns * sc->axis.cell_ns;
            if (len > 0) g->t1 = g->t0 + len;
            kept -= g->t1 - g->t0;
        }
        sc->t1 = window_t1;
        sc->axis.ncells = (int)(kept / sc->axis.cell_ns) + 1 + sc->ngaps * (gap_cells + 1);
        for (int i = 0; i < sc->ngaps; i++) { /* each after the cell of its start */
            struct scene_gap *g = &sc->gaps[i];
            g->c0 = scene_cell_of(sc, g->t0) + 1;
            g->ncells = gap_cells;
        }
    }
    sc->plot_w = sc->axis.ncells * v->cell_w;
    return 0;
}

void scene_emit_axis(struct scene_ctx *c) {
    struct scene *sc = c->sc;
    const struct layout_axis *ax = &sc->axis;
    char lab[32];
    int last_end = -1;
    scene_text_at(c, 0, c->y, "time", SCENE_ST_TEXT);
    sim_ns first = ax->tick_ns > 0 ? (sc->t0 + ax->tick_ns - 1) / ax->tick_ns * ax->tick_ns : sc->t0;
    /* Labels first, remembering the ticks that got one. */
    for (sim_ns t = first; t <= sc->t1; t += ax->tick_ns) {
        if (scene_in_gap(sc, t)) continue;
        int col = sc->plot_x + scene_cell_of(sc, t) * c->v->cell_w;
        int len = layout_axis_label(ax, t, lab, sizeof lab);
        int x = c->v->char_w > 1 ? col - len * c->v->char_w / 2 : col;
        if (x < sc->plot_x - c->v->char_w) x = sc->plot_x - c->v->char_w;
        if (x > last_end && x + len * c->v->char_w <= c->x0 + c->cols * c->v->char_w) {
            scene_text_n(c, x, c->y, lab, (size_t)len, SCENE_ST_AXIS);
            last_end = x + len * c->v->char_w + (c->v->char_w > 1 ? c->v->char_w : 0);
        }
        if (ax->tick_ns <= 0 || t > sc->t1 - ax->tick_ns) break;
    }
    c->y += c->v->line_h;
    for (sim_ns t = first; t <= sc->t1; t += ax->tick_ns) {
        if (scene_in_gap(sc, t)) continue;
        int x = sc->plot_x + scene_cell_of(sc, t) * c->v->cell_w;
        if (x < c->x0 + c->cols * c->v->char_w) {
            struct scene_cmd *k = scene_add(c, SCENE_CMD_LINE, SCENE_ST_AXIS, x, c->y, 1, c->v->line_h);
            if (k) {
                k->x2 = x;
                k->y2 = c->y + c->v->line_h - 1;
                k->t0 = k->t1 = t;
            }
        }
        if (ax->tick_ns <= 0 || t > sc->t1 - ax->tick_ns) break;
    }
    /* each gap of a compressed axis: its length, over it */
    for (int i = 0; i < sc->ngaps; i++) {
        const struct scene_gap *g = &sc->gaps[i];
        char len[32], buf[40];
        /* two significant digits are enough for what was left out */
        sim_ns d = g->t1 - g->t0, p = 1;
        while (d / p >= 100) p *= 10;
        sim_ns r = (d + p / 2) / p * p;
        format_time_ns(len, sizeof len, r);
        snprintf(buf, sizeof buf, r == d ? "<%s>" : "<~%s>", len);
        int w = (int)strlen(buf) * c->v->char_w;
        int mid = sc->plot_x + (g->c0 * 2 + g->ncells) * c->v->cell_w / 2;
        struct scene_cmd *k = scene_text_n(c, mid - w / 2, c->y, buf, strlen(buf), SCENE_ST_GAP);
        if (k) {
            k->t0 = g->t0;
            k->t1 = g->t1;
        }
    }
    c->y += c->v->line_h;
}
