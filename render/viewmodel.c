/* Viewmodel: the live demo's behaviour for every front end (viewmodel.h):
 * what is revealed, the scenes, the sentences, the overlays, the keys. */
#include "viewmodel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "narrate.h"

/* The overlays' look: a black cursor, the Okabe-Ito yellow frame, a light
 * grey veil over what has not happened yet. */
static const struct palette_rgb vm_cursor = {0, 0, 0}, vm_mark = {240, 228, 66}, vm_veil = {236, 236, 236};

/* ---- loading ---------------------------------------------------------------- */

static void free_scenes(struct viewmodel *vm) {
    for (size_t i = 0; i < vm->nsc; i++) scene_close(&vm->scs[i]);
    free(vm->scs);
    vm->scs = NULL;
    vm->nsc = 0;
}

static void free_layouts(struct layout *lys, struct scene_lod **lods, size_t n) {
    for (size_t i = 0; lods && i < n; i++) scene_lod_free(lods[i]);
    free(lods);
    for (size_t i = 0; lys && i < n; i++) layout_close(&lys[i]);
    free(lys);
}

int viewmodel_load(struct viewmodel *vm, const struct trace *const *trs, const struct scene_banner *banners, size_t n,
                   int first, int quiz) {
    size_t k = n ? n : 1;
    struct layout *lys = calloc(k, sizeof *lys);
    struct scene_lod **lods = calloc(k, sizeof *lods);
    size_t *rn = calloc(k, sizeof *rn);
    sim_ns *ru = calloc(k, sizeof *ru);
    struct scene_banner *rb = calloc(k, sizeof *rb);
    char(*db)[400] = calloc(k, sizeof *db);
    int rc = lys && lods && rn && ru && rb && db ? 0 : LSIM_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        if (layout_build(&lys[i], trs[i]) != 0 || scene_lod_build(&lods[i], &lys[i]) != 0) rc = LSIM_ENOMEM;
        rn[i] = trs[i]->len; /* built whole: what viewmodel_update compares with */
        ru[i] = -1;
    }
    if (!rc) rc = first ? viewstate_init(&vm->vs, trs, n, quiz) : viewstate_reload(&vm->vs, trs, n);
    if (rc) {
        free_layouts(lys, lods, n);
        free(rn), free(ru), free(rb), free(db);
        return rc;
    }
    free_layouts(vm->lys, vm->lods, vm->n);
    free(vm->rev_nev), free(vm->rev_until), free(vm->rev_banners), free(vm->decided_by);
    vm->lys = lys;
    vm->lods = lods;
    vm->rev_nev = rn;
    vm->rev_until = ru;
    vm->rev_banners = rb;
    vm->decided_by = db;
    vm->n = n;
    vm->trs = trs;
    vm->banners = banners;
    vm->dirty = 1;
    vm->knob_turned = -1;
    return 0;
}

void viewmodel_set_scale(struct viewmodel *vm, int scale_pct) {
    viewmodel_sizes(scale_pct, &vm->sz);
    vm->dirty = 1;
}

void viewmodel_close(struct viewmodel *vm) {
    free_scenes(vm);
    free_layouts(vm->lys, vm->lods, vm->n);
    viewstate_close(&vm->vs);
    free(vm->rev_nev), free(vm->rev_until), free(vm->rev_banners), free(vm->decided_by);
    memset(vm, 0, sizeof *vm);
}

/* ---- the scenes --------------------------------------------------------------- */

/* Each panel's layout as the run stood at the cursor (viewstate_revealed),
 * rebuilt only when that changed, and its banner: the verdict once the run
 * has decided it, "running" before. */
static int reveal(struct viewmodel *vm) {
    vm->decided_all = 1;
    for (size_t i = 0; i < vm->n; i++) {
        const struct trace *tr = vm->trs[i];
        size_t nev;
        sim_ns until;
        viewstate_revealed(&vm->vs, (int)i, tr, &nev, &until);
        if (nev != vm->rev_nev[i] || until != vm->rev_until[i]) {
            struct layout ly;
            if (layout_build_prefix(&ly, tr, nev, until) != 0) return LSIM_ENOMEM;
            scene_lod_free(vm->lods[i]); /* it points into the layout it indexes */
            vm->lods[i] = NULL;
            layout_close(&vm->lys[i]);
            vm->lys[i] = ly;
            vm->rev_nev[i] = (size_t)-1; /* until the index is built too */
            if (scene_lod_build(&vm->lods[i], &vm->lys[i]) != 0) return LSIM_ENOMEM;
            vm->rev_nev[i] = nev;
            vm->rev_until[i] = until;
            vm->dirty = 1;
        }
        if (!vm->banners) continue;
        struct scene_banner b = vm->banners[i];
        char was[sizeof vm->decided_by[0]];
        snprintf(was, sizeof was, "%s", vm->decided_by[i]);
        viewstate_banner(&b, vm->decided_by[i], sizeof vm->decided_by[i], tr, nev);
        if (b.status) vm->decided_all = 0;
        if ((b.status == NULL) != (vm->rev_banners[i].status == NULL) || !vm->rev_banners[i].title ||
            (b.decided_by == NULL) != (vm->rev_banners[i].decided_by == NULL) || strcmp(was, vm->decided_by[i]) != 0)
            vm->dirty = 1;
        vm->rev_banners[i] = b;
    }
    return 0;
}

/* The label column every panel shares (as scene_build_panels does): at
 * least scene_view_pixels' own, so that the first tick's label clears
 * "time" however short the lane names are. */
static int label_chars(const struct viewmodel *vm, int at_least) {
    int lw = at_least;
    for (size_t i = 0; i < vm->n; i++) {
        const struct layout *ly = &vm->lys[i];
        for (int l = 0; l < ly->nlanes; l++) {
            int n = (int)strnlen(ly->lanes[l].name, sizeof ly->lanes[l].name);
            if (n > lw) lw = n;
        }
        if (ly->ndoubles && lw < 12) lw = 12;
        if (ly->nparts && lw < 7) lw = 7; /* NETWORK */
    }
    return lw;
}

/* The panels stacked once in view v, one legend under the last for all. */
static int build_stack(struct viewmodel *vm, struct scene_view *v, unsigned flags) {
    free_scenes(vm);
    vm->scs = calloc(vm->n ? vm->n : 1, sizeof *vm->scs);
    if (!vm->scs) return LSIM_ENOMEM;
    vm->nsc = vm->n;
    int y = 0;
    unsigned char used[SCENE_USED_N]; /* what the panels above the last show */
    memset(used, 0, sizeof used);
    for (size_t i = 0; i < vm->n; i++) {
        /* no tooltips: viewmodel_hit makes the one under the mouse */
        v->flags = flags & ~(unsigned)SCENE_F_TIPS & (i + 1 == vm->n ? ~0u : ~(unsigned)SCENE_F_LEGEND);
        v->also_used = i + 1 == vm->n ? used : NULL;
        v->lod = vm->lods ? vm->lods[i] : NULL;
        struct scene_banner b, *bp = vm->banners ? &b : NULL;
        if (bp) {
            b = vm->rev_banners[i];
            b.replay = NULL; /* a live view has no use for the command line: room for the lanes */
            /* a panel under one of the same scenario does not repeat its title */
            if (i > 0 && b.title && vm->rev_banners[0].title && strcmp(b.title, vm->rev_banners[0].title) == 0)
                b.title = NULL;
        }
        int rc = scene_build(&vm->scs[i], &vm->lys[i], v, bp, y);
        v->also_used = NULL;
        v->lod = NULL;
        if (rc) return rc;
        for (int g = 0; g < SCENE_USED_N; g++) used[g] |= vm->scs[i].used[g];
        y = vm->scs[i].height - v->margin;
    }
    vm->content_h = y + v->margin;
    return 0;
}

int viewmodel_update(struct viewmodel *vm, int width, int avail_h) {
    int rc = reveal(vm);
    if (rc) return rc;
    if (!vm->dirty && vm->built_w == width && vm->built_h == avail_h && vm->built_t0 == vm->vs.t0 &&
        vm->built_t1 == vm->vs.t1 && vm->scs)
        return 0;
    struct scene_view v;
    if (!vm->sz.scale_pct) viewmodel_sizes(100, &vm->sz);
    viewmodel_scene_view(&vm->sz, &v, width);
    v.compressed = 0; /* the cursor, hover, scrub and zoom map pixels to time linearly */
    unsigned flags = v.flags;
    v.label_chars = label_chars(vm, v.label_chars);
    v.t0 = vm->vs.t0;
    v.t1 = vm->vs.t1;
    v.cell_w = viewstate_cell_w(v.t1 - v.t0, width - 2 * v.margin - (v.label_chars + 1) * v.char_w);
    rc = build_stack(vm, &v, flags);
    if (!rc && vm->content_h > avail_h && v.lane_h > v.line_h) { /* lanes a line of text tall */
        v.lane_h = v.line_h;
        rc = build_stack(vm, &v, flags);
    }
    if (rc) return rc;
    v.flags = flags;
    vm->sv = v;
    vm->built_w = width;
    vm->built_h = avail_h;
    vm->built_t0 = vm->vs.t0;
    vm->built_t1 = vm->vs.t1;
    vm->dirty = 0;
    return 1;
}

/* A paint_ops that moves every shape down by dy. */
struct shifted {
    const struct paint_ops *ops;
    void *ctx;
    int dy;
};
static int sh_box(void *c, int x, int y, int w, int h, struct palette_rgb k) {
    struct shifted *s = c;
    return s->ops->box(s->ctx, x, y + s->dy, w, h, k);
}
static int sh_poly(void *c, const int *xs, const int *ys, int n, struct palette_rgb k) {
    struct shifted *s = c;
    int y2[8];
    for (int i = 0; i < n && i < 8; i++) y2[i] = ys[i] + s->dy;
    return s->ops->poly(s->ctx, xs, y2, n, k);
}
static int sh_line(void *c, int x0, int y0, int x1, int y1, int w, struct palette_rgb k) {
    struct shifted *s = c;
    return s->ops->line(s->ctx, x0, y0 + s->dy, x1, y1 + s->dy, w, k);
}
static int sh_text(void *c, int x, int y, int h, const char *t, int px, int bold, struct palette_rgb k) {
    struct shifted *s = c;
    return s->ops->text(s->ctx, x, y + s->dy, h, t, px, bold, k);
}
static int sh_begin(void *c, const char *tip) {
    struct shifted *s = c;
    return s->ops->group_begin ? s->ops->group_begin(s->ctx, tip) : 0;
}
static int sh_end(void *c) {
    struct shifted *s = c;
    return s->ops->group_end ? s->ops->group_end(s->ctx) : 0;
}

int viewmodel_paint(const struct viewmodel *vm, const struct paint_ops *ops, void *ctx, int dy) {
    static const struct paint_ops shift = {sh_box, sh_poly, sh_line, sh_text, sh_begin, sh_end};
    struct shifted s = {ops, ctx, dy};
    for (size_t i = 0; i < vm->nsc; i++) {
        int rc = paint_scene(&vm->scs[i], &vm->sv, dy ? &shift : ops, dy ? (void *)&s : ctx);
        if (rc) return rc;
    }
    return 0;
}

/* ---- overlays ----------------------------------------------------------------- */

/* The rows of a scene's lanes: the first lane's top to the last's bottom. */
static void lanes_extent(const struct scene *sc, int *y0, int *y1) {
    *y0 = -1;
    *y1 = -1;
    for (size_t i = 0; i < sc->ncmd; i++) {
        const struct scene_cmd *k = &sc->cmd[i];
        if (k->layer == SCENE_LAYER_MAIN && k->lane >= 0) {
            if (*y0 < 0 || k->y < *y0) *y0 = k->y;
            if (k->y + k->h > *y1) *y1 = k->y + k->h;
        }
    }
}

/* An unanswered quiz stop after the current one? */
static int quiz_ahead(const struct viewstate *vs) {
    for (long i = viewstate_cur(vs) + 1; i < (long)vs->nev; i++)
        if ((vs->ev[i].flags & VIEWSTATE_DECISIVE) && !(vs->ev[i].flags & VIEWSTATE_REVEALED)) return 1;
    return viewstate_asking(vs) >= 0;
}

/* In quiz mode, what has not happened yet is veiled in panel p. */
static int paint_veil(const struct viewmodel *vm, size_t p, int y0, int y1, const struct paint_ops *o, void *c,
                      int dy) {
    const struct viewstate *vs = &vm->vs;
    const struct scene *sc = &vm->scs[p];
    int cx = scene_x_of(sc, vs->cursor), rc = 0;
    /* before an open question: up to its badge; else just past the badge
     * of the event at the cursor, which has happened */
    int vx = cx + 11;
    if (viewstate_asking(vs) >= 0) {
        sim_ns next = vs->ev[viewstate_asking(vs)].t;
        vx = next > sc->t1 ? sc->plot_x + sc->plot_w : scene_x_of(sc, next) - 8;
        if (vx <= cx) vx = cx + 1;
    }
    /* from above the lanes (the bands reach up to the axis) */
    rc = o->box(c, vx, y0 - 8 + dy, sc->plot_x + sc->plot_w - vx + 12, y1 - y0 + 8, vm_veil);
    /* and the open question's own badge whole: a wide one ("13") reaches
     * left of the veil, and its colour is the answer */
    if (viewstate_asking(vs) >= 0 && vs->ev[viewstate_asking(vs)].panel == p)
        for (size_t i = 0; !rc && i < sc->ncmd; i++) {
            const struct scene_cmd *k = &sc->cmd[i];
            if (k->type == SCENE_CMD_SYM && k->seq == (int32_t)vs->ev[viewstate_asking(vs)].seq)
                rc = o->box(c, k->x - 1, k->y - 1 + dy, k->w + 2, k->h + 2, vm_veil);
        }
    /* and what the scene says about it in words: the write notes under the
     * lanes, the double entry's caption */
    if (!rc) rc = o->box(c, 0, y1 + 1 + dy, vm->built_w, sc->height - y1 - 1, vm_veil);
    for (size_t i = 0; !rc && i < sc->ncmd; i++) {
        const struct scene_cmd *k = &sc->cmd[i];
        if (k->type == SCENE_CMD_TEXT && k->style == SCENE_ST_ALERT && k->x >= sc->plot_x)
            rc = o->box(c, k->x, k->y + dy, k->w, vm->sv.line_h, vm_veil);
    }
    return rc;
}

/* A frame around symbol k: yellow inside, black outside, seen on any fill. */
static int paint_frame(const struct scene_cmd *k, const struct paint_ops *o, void *c, int dy) {
    int x = k->x, y = k->y + dy, rc = 0;
    for (int b = 0; b < 5 && !rc; b++) {
        struct palette_rgb col = b < 2 ? vm_mark : vm_cursor;
        rc = o->line(c, x - 2 - b, y - 2 - b, x + k->w + 1 + b, y - 2 - b, 1, col);
        if (!rc) rc = o->line(c, x - 2 - b, y + k->h + 1 + b, x + k->w + 1 + b, y + k->h + 1 + b, 1, col);
        if (!rc) rc = o->line(c, x - 2 - b, y - 2 - b, x - 2 - b, y + k->h + 1 + b, 1, col);
        if (!rc) rc = o->line(c, x + k->w + 1 + b, y - 2 - b, x + k->w + 1 + b, y + k->h + 1 + b, 1, col);
    }
    return rc;
}

int viewmodel_paint_overlays(const struct viewmodel *vm, const struct paint_ops *o, void *c, int dy) {
    const struct viewstate *vs = &vm->vs;
    int rc = 0;
    for (size_t p = 0; p < vm->nsc && !rc; p++) {
        const struct scene *sc = &vm->scs[p];
        int y0, y1;
        lanes_extent(sc, &y0, &y1);
        if (y0 < 0) continue;
        int cx = scene_x_of(sc, vs->cursor);
        int in = vs->cursor >= sc->t0 && vs->cursor <= sc->t1;
        if (vs->quiz && in && quiz_ahead(vs)) rc = paint_veil(vm, p, y0, y1, o, c, dy);
        if (!rc && in) { /* a thin line that leaves the symbols readable, and a marker over the lanes */
            rc = o->line(c, cx, y0 - 6 + dy, cx, y1 + 6 + dy, 1, vm_cursor);
            for (int r = 0; r < 8 && !rc; r++) rc = o->box(c, cx - 7 + r, y0 - 16 + r + dy, 15 - 2 * r, 1, vm_cursor);
        }
        /* the current event: a frame around its symbol */
        if (viewstate_cur(vs) >= 0 && vs->ev[viewstate_cur(vs)].panel == p)
            for (size_t i = 0; !rc && i < sc->ncmd; i++) {
                const struct scene_cmd *k = &sc->cmd[i];
                if (k->type == SCENE_CMD_SYM && k->seq == (int32_t)vs->ev[viewstate_cur(vs)].seq)
                    rc = paint_frame(k, o, c, dy);
            }
    }
    return rc;
}

/* ---- words ---------------------------------------------------------------------- */

void viewmodel_narrate(const struct viewmodel *vm, long k, char *out, size_t n) {
    if (k < 0 || (size_t)k >= vm->vs.nev) {
        snprintf(out, n, "The start of the run: press Right to step, space to play.");
        return;
    }
    const struct viewstate_event *e = &vm->vs.ev[k];
    const struct trace *tr = vm->trs[e->panel];
    char s[500], t[32];
    if (narrate_event(s, sizeof s, tr, &tr->ev[e->seq]) != 0 || !s[0]) snprintf(s, sizeof s, "(event %u)", e->seq);
    viewstate_time_text(t, sizeof t, &vm->vs, e->t);
    if (vm->n > 1) snprintf(out, n, "t=%s  [%s]  %s", t, tr->algo, s);
    else snprintf(out, n, "t=%s  %s", t, s);
}

int viewmodel_history(const struct viewmodel *vm, long ks[VIEWMODEL_NARR_LINES], int *current) {
    long from, to;
    viewstate_history(&vm->vs, VIEWMODEL_NARR_LINES, &from, &to);
    int row = VIEWMODEL_NARR_LINES - (int)(to - from + 1); /* the newest at the bottom */
    if (to < 0) {                                          /* nothing passed yet: the start's line */
        row = VIEWMODEL_NARR_LINES - 1;
        from = to = -1;
    }
    *current = -1;
    for (int r = 0; r < VIEWMODEL_NARR_LINES; r++) {
        long k = from + (r - row);
        ks[r] = r >= row && k <= to ? k : -2;
        if (ks[r] != -2 && k == viewstate_cur(&vm->vs)) *current = r;
    }
    return VIEWMODEL_NARR_LINES;
}

void viewmodel_status(const struct viewmodel *vm, char *out, size_t n, const char *hint) {
    const struct viewstate *vs = &vm->vs;
    char a[32], b[32], c[32], sp[32];
    viewstate_time_text(a, sizeof a, vs, vs->t0);
    viewstate_time_text(b, sizeof b, vs, vs->t1);
    viewstate_time_text(c, sizeof c, vs, vs->cursor);
    viewstate_speed_text(sp, sizeof sp, vs);
    snprintf(out, n, "%s %s  t=%s  window %s..%s  %s%s%s%s", vs->playing ? "playing" : "paused", sp, c, a, b,
             hint && hint[0] ? hint : "? help", vs->quiz ? "  [quiz]" : "", vs->show_all ? "  [whole run: a]" : "",
             vs->narr_back ? "  [history: Down returns]" : "");
}

size_t viewmodel_revealed(const struct viewmodel *vm) {
    size_t r = 0;
    for (size_t i = 0; vm->rev_nev && i < vm->n; i++) r += vm->rev_nev[i];
    return r;
}

/* ---- pointing --------------------------------------------------------------------- */

long viewmodel_hit(const struct viewmodel *vm, int x, int y, char *tip, size_t n) {
    for (size_t p = 0; p < vm->nsc; p++) {
        long k = viewstate_hit(&vm->scs[p], x, y);
        if (k < 0) continue;
        const struct scene_cmd *c = &vm->scs[p].cmd[k];
        if (c->text) snprintf(tip, n, "%s", c->text);
        else if (scene_sym_tooltip(tip, n, &vm->lys[p], c) != 0) continue;
        return (long)c->seq;
    }
    if (n) tip[0] = '\0';
    return -1;
}

sim_ns viewmodel_t_at(const struct viewmodel *vm, int x) { return vm->nsc ? viewstate_t_of_x(&vm->scs[0], x) : 0; }

int viewmodel_on_axis(const struct viewmodel *vm, int x, int y) {
    for (size_t p = 0; p < vm->nsc; p++) {
        int y0, y1;
        const struct scene *sc = &vm->scs[p];
        if (viewstate_axis_rows(sc, &y0, &y1) == 0 && y >= y0 - 4 && y <= y1 + 4 && x >= sc->plot_x - 4 &&
            x <= sc->plot_x + sc->plot_w + 4)
            return 1;
    }
    return 0;
}

/* ---- break it by clicking ---------------------------------------------------------- */

/* ms as the scenario language writes a time: "12.3s", "30s", "250ms". */
/* The client's or server's lane under (x, y) of the scenes, x on its
 * panel's time axis, and that panel into *scp; NULL when there is none. A
 * lane's row: its label, centred in it, names it (drawn whatever has been
 * revealed of the run). */
static const struct layout_lane *lane_at(const struct viewmodel *vm, int x, int y, const struct scene **scp) {
    for (size_t p = 0; p < vm->nsc; p++) {
        const struct scene *sc = &vm->scs[p];
        if (x < sc->plot_x || x >= sc->plot_x + sc->plot_w) continue;
        /* the label nearest to y within half a lane: rows drawn a line of
         * text tall are closer than lane_h, and the nearest is the one meant;
         * a tie is the first row below a grid line, the lower lane's */
        const struct layout_lane *best = NULL;
        int best_d = vm->sv.lane_h / 2;
        for (size_t i = 0; i < sc->ncmd; i++) {
            const struct scene_cmd *k = &sc->cmd[i];
            int d = y - (k->y + vm->sv.line_h / 2);
            if (d < 0) d = -d;
            if (k->type != SCENE_CMD_TEXT || k->style != SCENE_ST_LABEL || !k->text || d > best_d) continue;
            const struct layout_lane *ln = NULL;
            for (int l = 0; l < vm->lys[p].nlanes && !ln; l++)
                if (strncmp(vm->lys[p].lanes[l].name, k->text, sizeof vm->lys[p].lanes[l].name) == 0)
                    ln = &vm->lys[p].lanes[l];
            if (!ln || (ln->kind != TRACE_NODE_CLIENT && ln->kind != TRACE_NODE_SERVER)) continue;
            best = ln;
            best_d = d;
        }
        if (best) {
            *scp = sc;
            return best;
        }
    }
    return NULL;
}

/* The time under x of sc as a fault's time: rounded to 100 ms, at least
 * 1 ms before the run's end; in ms. */
static long long fault_ms(const struct viewmodel *vm, const struct scene *sc, int x) {
    long long end_ms = (long long)(vm->vs.t_end / 1000000), at = (long long)(viewstate_t_of_x(sc, x) / 1000000);
    at = (at + 50) / 100 * 100;
    if (at >= end_ms) at = end_ms - 1;
    return at < 0 ? 0 : at;
}

/* The fault line of a right click at x (x_to == x) or of a right drag from
 * x to x_to along a lane: a drag's pause (or clock step) is as long as the
 * stretch dragged over, from its earlier end; a click's is half the run. */
static int fault_line(const struct viewmodel *vm, int x, int x_to, int y, int fault, char *out, size_t n,
                      sim_ns *at_ns) {
    if (n) out[0] = '\0';
    const struct scene *sc = NULL;
    const struct layout_lane *ln = lane_at(vm, x, y, &sc);
    if (!ln) return -1;
    int dragged = abs(x_to - x) >= VIEWMODEL_DRAG_MIN_PX;
    int x0 = dragged && x_to < x ? x_to : x, x1 = dragged && x_to < x ? x : x_to;
    long long end_ms = (long long)(vm->vs.t_end / 1000000), at = fault_ms(vm, sc, x0);
    char t[32], d[32];
    scn_format_duration(t, sizeof t, (sim_ns)(at)*SIM_NS_PER_MS);
    if (at_ns) *at_ns = (sim_ns)at * 1000000;
    if (fault == VIEWMODEL_FAULT_CRASH || fault == VIEWMODEL_FAULT_RESTART) {
        snprintf(out, n, "@%s %s %s", t, fault == VIEWMODEL_FAULT_CRASH ? "crash" : "restart", ln->name);
        return 0;
    }
    long long len;
    if (dragged) { /* the stretch dragged over, in the same 100 ms steps as the time */
        long long to = (long long)(viewstate_t_of_x(sc, x1) / 1000000);
        to = (to + 50) / 100 * 100;
        len = to - at >= 100 ? to - at : 100;
    } else {
        long long half = end_ms / 2, unit = 1; /* half the run, as 1, 2, 3 or 5 x 10^k ms */
        while (unit * 10 <= half) unit *= 10;
        len = half >= 5 * unit ? 5 * unit : half >= 3 * unit ? 3 * unit : half >= 2 * unit ? 2 * unit : unit;
    }
    scn_format_duration(d, sizeof d, (sim_ns)(len > 0 ? len : 1) * SIM_NS_PER_MS);
    if (fault == VIEWMODEL_FAULT_CLOCK_FWD || fault == VIEWMODEL_FAULT_CLOCK_BACK)
        snprintf(out, n, "@%s clock %s step %c%s", t, ln->name, fault == VIEWMODEL_FAULT_CLOCK_FWD ? '+' : '-', d);
    else snprintf(out, n, "@%s pause %s %s", t, ln->name, d);
    return 0;
}

int viewmodel_fault_line(const struct viewmodel *vm, int x, int y, int fault, char *out, size_t n, sim_ns *at_ns) {
    return fault_line(vm, x, x, y, fault, out, n, at_ns);
}

int viewmodel_fault_drag(const struct viewmodel *vm, int x_from, int x_to, int y, int fault, char *out, size_t n,
                         sim_ns *at_ns) {
    return fault_line(vm, x_from, x_to, y, fault, out, n, at_ns);
}

int viewmodel_link_line(const struct viewmodel *vm, int x, int y_from, int y_to, char *out, size_t n, sim_ns *at_ns) {
    if (n) out[0] = '\0';
    const struct scene *sa = NULL, *sb = NULL;
    const struct layout_lane *a = lane_at(vm, x, y_from, &sa), *b = lane_at(vm, x, y_to, &sb);
    if (!a) return -1;
    char t[32];
    long long at = fault_ms(vm, sa, x);
    scn_format_duration(t, sizeof t, (sim_ns)(at)*SIM_NS_PER_MS);
    if (at_ns) *at_ns = (sim_ns)at * 1000000;
    if (b == a) snprintf(out, n, "@%s heal", t);
    else if (b && sb == sa) {
        /* A cut off from the other side: every other node of the panel named
         * (unnamed nodes would form a third group, cut from the target too) */
        const struct layout *ly = &vm->lys[sa - vm->scs];
        size_t w = (size_t)snprintf(out, n, "@%s partition %s |", t, a->name);
        for (int l = 0, named = 0; l < ly->nlanes && named < 32 && w < n; l++) {
            if (&ly->lanes[l] == a) continue;
            w += (size_t)snprintf(out + w, n - w, " %s", ly->lanes[l].name);
            named++;
        }
        if (w >= n) {
            if (n) out[0] = '\0';
            return -1;
        }
    } else return -1;
    return 0;
}

/* ---- commands and keys ------------------------------------------------------------ */

int viewmodel_do(struct viewmodel *vm, int cmd) {
    struct viewstate *vs = &vm->vs;
    switch ((enum viewmodel_cmd)cmd) {
    case VIEWMODEL_PLAY:
        if (viewstate_asking(vs) >= 0) return 0;
        if (!vs->playing && vs->cursor >= vs->t_end) viewstate_home(vs);
        vs->playing = !vs->playing;
        return 1;
    case VIEWMODEL_SLOWER:
        if (vs->speed > -12) vs->speed--;
        return 1;
    case VIEWMODEL_FASTER:
        if (vs->speed < 12) vs->speed++;
        return 1;
    case VIEWMODEL_NEXT:
        vs->playing = 0;
        viewstate_step(vs, 1);
        vs->narr_back = 0;
        return 1;
    case VIEWMODEL_PREV:
        vs->playing = 0;
        viewstate_step(vs, -1);
        vs->narr_back = 0;
        return 1;
    case VIEWMODEL_HOME:
        vs->playing = 0;
        viewstate_home(vs);
        return 1;
    case VIEWMODEL_END:
        vs->playing = 0;
        viewstate_end(vs);
        return 1;
    case VIEWMODEL_ZOOM_IN: viewstate_zoom(vs, 2.0, vs->cursor); return 1;
    case VIEWMODEL_ZOOM_OUT: viewstate_zoom(vs, 0.5, vs->cursor); return 1;
    case VIEWMODEL_FIT: viewstate_fit(vs); return 1;
    case VIEWMODEL_VIOLATION:
        vs->playing = 0;
        viewstate_next_violation(vs);
        return 1;
    case VIEWMODEL_SHOW_ALL: vs->show_all = !vs->show_all; return 1;
    case VIEWMODEL_HISTORY_BACK: viewstate_history_scroll(vs, 1); return 1;
    case VIEWMODEL_HISTORY_FWD: viewstate_history_scroll(vs, -1); return 1;
    case VIEWMODEL_REVEAL: return viewstate_reveal(vs) == 0;
    case VIEWMODEL_KNOB_NEXT:
        if (!vm->nknobs) return 0;
        vm->knob_sel = (vm->knob_sel + 1) % vm->nknobs;
        return 1;
    case VIEWMODEL_KNOB_DOWN:
    case VIEWMODEL_KNOB_UP:
        if (vm->knob_sel >= vm->nknobs ||
            !viewmodel_knob_turn(&vm->knobs[vm->knob_sel], cmd == VIEWMODEL_KNOB_UP ? 1 : -1))
            return 0;
        vm->knob_turned = vm->knob_sel;
        return 1;
    case VIEWMODEL_NONE:
    case VIEWMODEL_CMD_COUNT: break;
    }
    return 0;
}

/* Every binding, in help order: the key names SDL and browsers give
 * ('|' between names), and the help line. */
static const struct {
    int cmd;
    const char *names;
    const char *help;
} bindings[] = {
        {VIEWMODEL_PLAY, "space| ", "space        play / pause"},
        {VIEWMODEL_SLOWER, "[|,", "[  ]         slower / faster"},
        {VIEWMODEL_FASTER, "]|.", NULL},
        {VIEWMODEL_NEXT, "right|arrowright",
         "Right  Left  next / previous event (exact: the run is replayed from its trace)"},
        {VIEWMODEL_PREV, "left|arrowleft", NULL},
        {VIEWMODEL_HOME, "home", "Home  End    start / end"},
        {VIEWMODEL_END, "end", NULL},
        {VIEWMODEL_ZOOM_IN, "+|=|keypad +", "+  -  wheel  zoom in / out        0  f  fit the whole run"},
        {VIEWMODEL_ZOOM_OUT, "-|keypad -", NULL},
        {VIEWMODEL_FIT, "0|keypad 0|f", NULL},
        {VIEWMODEL_VIOLATION, "n", "n            next violation (double entry, stale write accepted, wrong release)"},
        {VIEWMODEL_SHOW_ALL, "a",
         "a            the whole run at once / as it plays (only what happened by the cursor)"},
        {VIEWMODEL_HISTORY_BACK, "up|arrowup", "Up  Down     the narration's earlier sentences / back to the present"},
        {VIEWMODEL_HISTORY_FWD, "down|arrowdown", NULL},
        {VIEWMODEL_REVEAL, "r|return|enter|keypad enter", "r  Enter     reveal the quiz answer"},
        {VIEWMODEL_KNOB_NEXT, "k", "k  <  >      pick a knob (a param of the scenario), turn it a step down / up"},
        {VIEWMODEL_KNOB_DOWN, "<", NULL},
        {VIEWMODEL_KNOB_UP, ">", NULL},
};

int viewmodel_key(const char *name) {
    size_t len = strlen(name);
    for (size_t i = 0; len && i < sizeof bindings / sizeof bindings[0]; i++)
        for (const char *p = bindings[i].names; *p;) {
            size_t l = strcspn(p, "|");
            if (l == len && strncasecmp(p, name, l) == 0) return bindings[i].cmd;
            p += l + (p[l] == '|');
        }
    return VIEWMODEL_NONE;
}

const char *viewmodel_help_line(int i) {
    for (size_t k = 0; k < sizeof bindings / sizeof bindings[0]; k++)
        if (bindings[k].help && i-- == 0) return bindings[k].help;
    return NULL;
}
