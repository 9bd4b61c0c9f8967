/* Paint: the rules that turn scene commands into shapes. Intervals are boxes
 * (hatched when paused, a thin bar while acquiring, a tapering bar for a TTL
 * running out); an event is a thin line across its lane with a badge that
 * carries its symbol; text on a solid style gets a box behind it. */
#include "paint.h"

#include <string.h>

#include "error.h"

#define HATCH_STEP 9 /* pixels between paused stripes */

/* Diagonal stripes (lower left to upper right) clipped to the box. */
static int hatch(const struct paint_ops *ops, void *ctx, int x, int y, int w, int h, struct palette_rgb c) {
    for (int k = x - h; k < x + w; k += HATCH_STEP) {
        int s0 = x - k > 0 ? x - k : 0;
        int s1 = x + w - 1 - k < h - 1 ? x + w - 1 - k : h - 1;
        if (s1 < s0) continue;
        int rc = ops->line(ctx, k + s0, y + h - 1 - s0, k + s1, y + h - 1 - s1, 2, c);
        if (rc) return rc;
    }
    return 0;
}

static int is_fill(int sym) {
    return (sym >= SCENE_SYM_ACQUIRING && sym <= SCENE_SYM_LEASE) || sym == SCENE_SYM_DOUBLE;
}

static int rect(const struct scene_cmd *k, const struct paint_ops *ops, void *ctx) {
    const struct palette_look *lk = palette_look(k->style);
    int x = k->x, y = k->y, w = k->w, h = k->h;
    if (w <= 0 || h <= 0) return 0;
    if (k->frac0 != 1000 || k->frac1 != 1000) { /* a bar running out, bottom-aligned */
        int xs[4] = {x, x + w, x + w, x};
        int ys[4] = {y + h - h * k->frac0 / 1000, y + h - h * k->frac1 / 1000, y + h, y + h};
        return ops->poly(ctx, xs, ys, 4, lk->ink);
    }
    switch (lk->pattern) {
    case PALETTE_THIN: return ops->box(ctx, x, y + h / 2 - h / 6, w, h / 3 > 2 ? h / 3 : 2, lk->fill);
    case PALETTE_HATCH: {
        int rc = ops->box(ctx, x, y, w, h, lk->fill);
        if (!rc && k->style == SCENE_ST_PAUSED) { /* a frame, so a pause on white reads as a span */
            rc = ops->line(ctx, x, y, x + w - 1, y, 1, lk->ink);
            if (!rc) rc = ops->line(ctx, x, y + h - 1, x + w - 1, y + h - 1, 1, lk->ink);
        }
        return rc ? rc : hatch(ops, ctx, x, y, w, h, lk->ink);
    }
    case PALETTE_NONE: return 0;
    default: {
        int rc = ops->box(ctx, x, y, w, h, lk->fill);
        if (!rc && k->style == SCENE_ST_BAND) { /* edges, so the band reads on every lane */
            rc = ops->line(ctx, x, y, x, y + h - 1, 2, lk->ink);
            if (!rc) rc = ops->line(ctx, x + w - 1, y, x + w - 1, y + h - 1, 2, lk->ink);
        }
        return rc;
    }
    }
}

/* An event: a line through the lane at its time and a badge with its symbol.
 * In the legend (no lane), a fill symbol is a swatch and a mark a badge.
 * part: SYM_ALL, or for a lane's symbol SYM_TICK (its line and the lead to
 * a badge moved aside, or the whole of a minor one) and SYM_BADGE (the
 * badge), which paint_scene draws in separate passes so that no event's
 * line crosses another's badge. The tooltip group wraps the badge (or the
 * tick of a minor one). */
enum { SYM_ALL, SYM_TICK, SYM_BADGE };
static int sym(const struct scene_cmd *k, const struct scene_view *v, const struct paint_ops *ops, void *ctx,
               int part) {
    const struct palette_look *lk = palette_look(k->style);
    int rc = 0;
    int fill = is_fill(k->sym),
        grouped = ops->group_begin && k->text && (part == SYM_ALL || fill || (part == SYM_TICK) == (k->minor != 0));
    if (!fill && part == SYM_BADGE && k->minor) return 0;
    if (fill && part == SYM_TICK) return 0;
    if (grouped) rc = ops->group_begin(ctx, k->text);
    int cx = k->x + k->w / 2, ex = k->lane >= 0 ? k->x2 : cx;
    if (!rc && fill) {
        struct scene_cmd sw = *k;
        sw.type = SCENE_CMD_RECT;
        sw.x = k->x - v->char_w / 2;
        sw.w = 2 * v->char_w;
        sw.y = k->y + 3;
        sw.h = k->h - 6;
        rc = rect(&sw, ops, ctx);
    } else if (!rc && k->minor) { /* a tick in its style, framed */
        rc = ops->line(ctx, ex, k->y - 2, ex, k->y + k->h + 1, 4, palette_outline);
        if (!rc) rc = ops->line(ctx, ex, k->y, ex, k->y + k->h - 1, 2, lk->fill);
    } else if (!rc) {
        char s[2] = {scene_sym_char(k->sym), '\0'};
        const char *label = k->label ? k->label : s;
        int bw = k->lane >= 0 ? k->w : v->char_w + 8, bh = v->line_h - 2;
        int by = k->y + (k->h - bh) / 2;
        if (part != SYM_BADGE && k->lane >= 0)
            rc = ops->line(ctx, ex, k->y - 2, ex, k->y + k->h + 1, 2, palette_outline);
        if (part != SYM_BADGE && !rc && k->lane >= 0 && ex != cx) /* moved aside: a lead from its time */
            rc = ops->line(ctx, ex < cx ? ex : cx, k->y - 2, ex < cx ? cx : ex, k->y - 2, 2, palette_outline);
        if (part != SYM_TICK) {
            if (!rc) rc = ops->box(ctx, cx - bw / 2 - 1, by - 1, bw + 2, bh + 2, palette_outline);
            if (!rc) rc = ops->box(ctx, cx - bw / 2, by, bw, bh, lk->fill);
            int tw = (int)strlen(label) * v->char_w;
            if (!rc) rc = ops->text(ctx, cx - tw / 2, by, bh, label, PALETTE_TEXT_PX, 1, lk->ink);
        }
    }
    if (!rc && grouped && ops->group_end) rc = ops->group_end(ctx);
    return rc;
}

static int text(const struct scene_cmd *k, const struct scene_view *v, const struct paint_ops *ops, void *ctx) {
    const struct palette_look *lk = palette_look(k->style);
    int rc = 0;
    if (lk->pattern == PALETTE_SOLID) /* a label on a solid style: ink on a box */
        rc = ops->box(ctx, k->x - 4, k->y + 1, k->w + 8, v->line_h - 2, lk->fill);
    int px = k->style == SCENE_ST_TITLE ? PALETTE_TITLE_PX : PALETTE_TEXT_PX;
    int h = k->style == SCENE_ST_TITLE ? v->line_h + v->line_h / 2 : v->line_h;
    if (!rc) rc = ops->text(ctx, k->x, k->y, h, k->text, px, lk->bold, lk->ink);
    return rc;
}

/* A message: a line and a head at the receiving end, in a group with its tooltip. */
static int arrow(const struct scene_cmd *k, const struct paint_ops *ops, void *ctx) {
    const struct palette_look *lk = palette_look(k->style);
    int rc = 0;
    if (ops->group_begin && k->text) rc = ops->group_begin(ctx, k->text);
    int dx = k->x2 - k->x, dy = k->y2 - k->y;
    /* the head: 14 px back along the line, 6 px either side (integer maths:
     * the direction scaled by the longer of |dx|, |dy|) */
    int adx = dx < 0 ? -dx : dx, ady = dy < 0 ? -dy : dy, l = adx > ady ? adx : ady;
    if (l == 0) l = 1;
    int bx = k->x2 - dx * 14 / l, by = k->y2 - dy * 14 / l;
    int px = -dy * 6 / l, py = dx * 6 / l;
    if (!rc) rc = ops->line(ctx, k->x, k->y, bx, by, 2, lk->ink);
    if (k->style == SCENE_ST_DROP) { /* never arrived: the line to its end, a cross there */
        if (!rc) rc = ops->line(ctx, bx, by, k->x2, k->y2, 2, lk->ink);
        if (!rc) rc = ops->line(ctx, k->x2 - 6, k->y2 - 6, k->x2 + 6, k->y2 + 6, 3, lk->ink);
        if (!rc) rc = ops->line(ctx, k->x2 - 6, k->y2 + 6, k->x2 + 6, k->y2 - 6, 3, lk->ink);
        if (!rc && ops->group_end && k->text) rc = ops->group_end(ctx);
        return rc;
    }
    int xs[3] = {k->x2, bx + px, bx - px}, ys[3] = {k->y2, by + py, by - py};
    if (!rc) rc = ops->poly(ctx, xs, ys, 3, lk->ink);
    if (!rc && ops->group_end && k->text) rc = ops->group_end(ctx);
    return rc;
}

/* The passes of paint_scene, in order: the shapes under the events (the
 * BACK layer, lane fills, grid, axis ticks, legend swatches, TTL bars,
 * arrows); the lines of the lanes' events; their badges; then every text
 * (lane names, the double entries and writes listed, the banner, and the
 * pixel-only labels over the lanes: tokens, "in flight", lags, clock
 * steps, which the scene placed clear of the badges). So neither an arrow,
 * a TTL bar nor another event's line crosses a badge or a word. */
enum { PASS_UNDER, PASS_TICKS, PASS_BADGES, PASS_LABELS, PASS_COUNT };

static int pass_of(const struct scene_cmd *k) {
    if (k->type == SCENE_CMD_SYM && k->lane >= 0) return PASS_TICKS; /* and PASS_BADGES */
    if (k->type == SCENE_CMD_TEXT) return PASS_LABELS;
    return PASS_UNDER;
}

static int paint_one(const struct scene_cmd *k, const struct scene_view *v, const struct paint_ops *ops, void *ctx,
                     int pass) {
    const struct palette_look *lk = palette_look(k->style);
    switch (k->type) {
    case SCENE_CMD_RECT: return rect(k, ops, ctx);
    case SCENE_CMD_SYM: return sym(k, v, ops, ctx, k->lane < 0 ? SYM_ALL : pass == PASS_TICKS ? SYM_TICK : SYM_BADGE);
    case SCENE_CMD_TEXT: return k->text && k->text[0] ? text(k, v, ops, ctx) : 0;
    case SCENE_CMD_LINE:
        if (k->style == SCENE_ST_MESSAGE || k->style == SCENE_ST_DROP || k->style == SCENE_ST_REPLICATION)
            return arrow(k, ops, ctx);
        if (k->style == SCENE_ST_CLOCK) /* a clock against true time: bold */
            return ops->line(ctx, k->x, k->y, k->x2, k->y2, 3, lk->ink);
        if (k->style == SCENE_ST_AXIS) /* a tick: a short stroke under its label */
            return ops->line(ctx, k->x, k->y + k->h / 2, k->x, k->y2, 2, lk->ink);
        return ops->line(ctx, k->x, k->y, k->x2, k->y2, 1, lk->ink);
    default: return 0;
    }
}

int paint_scene(const struct scene *sc, const struct scene_view *v, const struct paint_ops *ops, void *ctx) {
    for (int pass = 0; pass < PASS_COUNT; pass++)
        for (size_t i = 0; i < sc->ncmd; i++) {
            const struct scene_cmd *k = &sc->cmd[i];
            int p = pass_of(k);
            if (p != pass && !(p == PASS_TICKS && pass == PASS_BADGES)) continue;
            int rc = paint_one(k, v, ops, ctx, pass);
            if (rc) return rc;
        }
    return 0;
}
