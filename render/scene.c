/* Scene: turns a layout and a view into draw commands. Every decision about
 * what is shown (lane order, the double-entry row, which writes get a line,
 * which mark wins a shared cell, the legend) is made here, on a grid of time
 * cells and character cells that the view sizes in the backend's units. */
#include "scene.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fmt.h"

/* Symbols: the terminal's character, the style, the priority of an instant
 * (higher wins a shared cell; 0 = an interval fill) and the legend text. */
static const struct {
    char ch;
    uint8_t style;
    uint8_t prio;
    const char *text;
} syms[SCENE_SYM_COUNT] = {
    [SCENE_SYM_NONE] = {' ', SCENE_ST_TEXT, 0, ""},
    [SCENE_SYM_ACQUIRING] = {'.', SCENE_ST_ACQUIRING, 0, "acquiring: waiting for the lock"},
    [SCENE_SYM_HOLDING] = {'=', SCENE_ST_HOLDING, 0, "in the critical section (has lock)"},
    [SCENE_SYM_PAUSED_HOLDING] = {'#', SCENE_ST_PAUSED_HOLDING, 0, "in the critical section but PAUSED"},
    [SCENE_SYM_PAUSED] = {'~', SCENE_ST_PAUSED, 0, "paused (GC pause, stall)"},
    [SCENE_SYM_CRASHED] = {'x', SCENE_ST_CRASHED, 0, "down (crashed)"},
    [SCENE_SYM_LEASE] = {'-', SCENE_ST_LEASE, 0, "lease valid as the server sees it"},
    [SCENE_SYM_ACQUIRED] = {'+', SCENE_ST_MARK_OK, 70, "acquires the lock, enters section"},
    [SCENE_SYM_RELEASE] = {'r', SCENE_ST_MARK_OK, 60, "releases the lock, leaves section"},
    [SCENE_SYM_LOST] = {'L', SCENE_ST_MARK_WARN, 65, "learns it lost the lock, leaves"},
    [SCENE_SYM_FAILED] = {'f', SCENE_ST_MARK_WARN, 55, "gives up acquiring"},
    [SCENE_SYM_WRONG_RELEASE] = {'!', SCENE_ST_MARK_BAD, 75, "release removed ANOTHER's lock"},
    [SCENE_SYM_GRANT] = {'[', SCENE_ST_MARK_SERVER, 40, "server grants a lease"},
    [SCENE_SYM_RENEW] = {'>', SCENE_ST_MARK_SERVER, 30, "server renews a lease"},
    [SCENE_SYM_EXPIRE] = {'e', SCENE_ST_MARK_WARN, 50, "lease expires on server (TTL out)"},
    [SCENE_SYM_DELETE] = {']', SCENE_ST_MARK_SERVER, 45, "server deletes lease on release"},
    [SCENE_SYM_KEEP] = {'k', SCENE_ST_MARK_SERVER, 35, "server refuses release (not owner)"},
    [SCENE_SYM_READ] = {'o', SCENE_ST_MARK_NOTE, 20, "read at the resource"},
    [SCENE_SYM_WRITE_OK] = {'W', SCENE_ST_MARK_NOTE, 80, "write accepted by the resource"},
    [SCENE_SYM_WRITE_REJECTED] = {'w', SCENE_ST_WRITE_REJECTED, 82, "write REJECTED by resource (fencing)"},
    [SCENE_SYM_SKIP] = {'s', SCENE_ST_MARK_WARN, 78, "write not sent (lock lost, own check, sold out)"},
    [SCENE_SYM_CLOCK] = {'c', SCENE_ST_MARK_WARN, 88, "clock step: the node's clock jumps"},
    [SCENE_SYM_CONTROL] = {'@', SCENE_ST_MARK_WARN, 85, "operator action (failover: promote)"},
    [SCENE_SYM_CRASH] = {'X', SCENE_ST_MARK_BAD, 100, "crash"},
    [SCENE_SYM_RESTART] = {'*', SCENE_ST_MARK_NOTE, 90, "restart"},
    [SCENE_SYM_DOUBLE] = {'^', SCENE_ST_DOUBLE, 0, "two in the critical section at once"},
};

static const char *const style_names[SCENE_ST_COUNT] = {
    [SCENE_ST_TEXT] = "text", [SCENE_ST_AXIS] = "axis", [SCENE_ST_LABEL] = "label",
    [SCENE_ST_LEGEND] = "legend", [SCENE_ST_ACQUIRING] = "acquiring",
    [SCENE_ST_HOLDING] = "holding", [SCENE_ST_PAUSED_HOLDING] = "paused-holding",
    [SCENE_ST_PAUSED] = "paused", [SCENE_ST_CRASHED] = "crashed", [SCENE_ST_LEASE] = "lease",
    [SCENE_ST_DOUBLE] = "double-entry", [SCENE_ST_ALERT] = "alert",
    [SCENE_ST_MARK_OK] = "mark-ok", [SCENE_ST_MARK_WARN] = "mark-warn",
    [SCENE_ST_MARK_BAD] = "mark-bad", [SCENE_ST_MARK_SERVER] = "mark-server",
    [SCENE_ST_MARK_NOTE] = "mark-note", [SCENE_ST_STALE_WRITE] = "stale-write",
    [SCENE_ST_WRITE_REJECTED] = "write-rejected", [SCENE_ST_BANNER] = "banner",
    [SCENE_ST_SAFE] = "safe", [SCENE_ST_UNSAFE] = "unsafe", [SCENE_ST_STUCK] = "stuck",
    [SCENE_ST_GRID] = "grid", [SCENE_ST_TITLE] = "title", [SCENE_ST_BAND] = "band",
};

char scene_sym_char(int sym) { return sym > 0 && sym < SCENE_SYM_COUNT ? syms[sym].ch : ' '; }
const char *scene_sym_text(int sym) {
    return sym > 0 && sym < SCENE_SYM_COUNT ? syms[sym].text : "";
}
int scene_sym_style(int sym) {
    return sym > 0 && sym < SCENE_SYM_COUNT ? syms[sym].style : SCENE_ST_TEXT;
}
const char *scene_style_name(int style) {
    return style >= 0 && style < SCENE_ST_COUNT ? style_names[style] : "unknown";
}

void scene_view_term(struct scene_view *v, int width, int legend) {
    memset(v, 0, sizeof *v);
    v->width = width;
    v->char_w = v->line_h = v->lane_h = v->cell_w = 1;
    v->min_tick_chars = 8;
    v->cell_name = "column";
    v->flags = legend ? SCENE_F_LEGEND : 0;
}

void scene_view_pixels(struct scene_view *v, int width, int height) {
    memset(v, 0, sizeof *v);
    v->width = width;
    v->height = height;
    v->char_w = 11; /* DejaVu Sans Mono at 18 px advances 10.8 px */
    v->line_h = 26;
    v->lane_h = 42;
    v->cell_w = 1;
    v->margin = 16;
    v->min_tick_chars = 10;
    v->cell_name = NULL;
    v->flags = SCENE_F_LEGEND | SCENE_F_BANDS | SCENE_F_DETAIL | SCENE_F_TIPS | SCENE_F_STRETCH;
}

/* ---- building ----------------------------------------------------------------------- */

struct ctx {
    struct scene *sc;
    const struct layout *ly;
    const struct scene_view *v;
    int x0;          /* left edge (margin) */
    int cols;        /* characters per line */
    int lw;          /* label column, characters, including one space */
    int y;           /* next free y */
    uint8_t layer;   /* layer of commands being added */
    uint8_t *fill;   /* per cell: interval symbol */
    uint8_t *bits;   /* per cell: interval flags */
    uint8_t *win;    /* per cell: winning instant symbol (NONE = none) */
    uint8_t *winst;  /* per cell: its style */
    size_t *winm;    /* per cell: its mark index */
    int used[SCENE_SYM_COUNT]; /* symbols that reached a lane row */
    int used_stale;  /* a stale write accepted was drawn */
    int lanes_end;   /* y under the last lane drawn */
};

static struct scene_cmd *add(struct ctx *c, int type, int style, int x, int y, int w, int h) {
    struct scene *sc = c->sc;
    if (sc->err) return NULL;
    if (sc->ncmd == sc->capcmd) {
        size_t cap = sc->capcmd ? sc->capcmd * 2 : 256;
        struct scene_cmd *p = realloc(sc->cmd, cap * sizeof *p);
        if (!p) {
            sc->err = LSIM_ENOMEM;
            return NULL;
        }
        sc->cmd = p;
        sc->capcmd = cap;
    }
    struct scene_cmd *k = &sc->cmd[sc->ncmd++];
    memset(k, 0, sizeof *k);
    k->type = (uint8_t)type;
    k->style = (uint8_t)style;
    k->layer = c->layer;
    k->x = x;
    k->y = y;
    k->w = w;
    k->h = h;
    k->frac0 = k->frac1 = 1000;
    k->lane = -1;
    k->seq = -1;
    return k;
}

/* Copy s into the scene's storage; returns its offset + 1, or 0 on failure
 * (pointers are fixed up at the end). */
static size_t store(struct ctx *c, const char *s, size_t len) {
    struct scene *sc = c->sc;
    if (sc->err) return 0;
    if (sc->ntext + len + 1 > sc->captext) {
        size_t cap = sc->captext ? sc->captext : 4096;
        while (cap < sc->ntext + len + 1) cap *= 2;
        char *p = realloc(sc->text, cap);
        if (!p) {
            sc->err = LSIM_ENOMEM;
            return 0;
        }
        sc->text = p;
        sc->captext = cap;
    }
    memcpy(sc->text + sc->ntext, s, len);
    sc->text[sc->ntext + len] = '\0';
    sc->ntext += len + 1;
    return sc->ntext - len;
}

static void set_text(struct ctx *c, struct scene_cmd *k, const char *s, size_t len) {
    if (k) k->text_at = store(c, s, len);
}

static struct scene_cmd *text_n(struct ctx *c, int x, int y, const char *s, size_t len, int style) {
    struct scene_cmd *k = add(c, SCENE_CMD_TEXT, style, x, y, (int)len * c->v->char_w, c->v->line_h);
    set_text(c, k, s, len);
    return k;
}

static struct scene_cmd *text_at(struct ctx *c, int col, int y, const char *s, int style) {
    return text_n(c, c->x0 + col * c->v->char_w, y, s, strlen(s), style);
}

/* Text from column col, wrapped at spaces to the line; continuation lines
 * start indent columns further right (the terminal's rule, kept exactly). */
static void wrapped(struct ctx *c, int col, int indent, const char *text, int style) {
    const char *s = text;
    int start = col;
    do {
        int avail = c->cols - start;
        if (avail < 8) { /* no room left on the right: use the whole line */
            start = 0;
            avail = c->cols;
        }
        size_t len = strlen(s), take = len;
        if (len > (size_t)avail) {
            take = 0;
            for (int i = avail; i > 0; i--)
                if (s[i] == ' ') {
                    take = (size_t)i;
                    break;
                }
            if (take == 0) take = (size_t)avail;
        }
        text_n(c, c->x0 + start * c->v->char_w, c->y, s, take, style);
        c->y += c->v->line_h;
        s += take;
        while (*s == ' ') s++;
        start = col + indent;
    } while (*s);
}

static const char *node_name(const struct layout *ly, int n) {
    return n >= 0 && n < ly->nlanes ? ly->lanes[n].name : "?";
}

static int lane_shown(const struct scene_view *v, int l) {
    return l >= 64 || !(v->hide >> l & 1);
}

/* The cells [*c0, *c1] of true interval [t0, t1] in the window, or 0 when
 * it lies outside. An interval still open at the end of the trace runs to
 * the last cell. */
static int span_cells(const struct scene *sc, sim_ns t0, sim_ns t1, int open, int *c0, int *c1) {
    if (t0 > sc->t1 || t1 < sc->t0 || (t1 == sc->t0 && t0 < t1)) return 0;
    sim_ns a = t0 < sc->t0 ? 0 : t0 - sc->t0;
    sim_ns b = t1 > sc->t1 ? sc->t1 - sc->t0 : t1 - sc->t0;
    layout_axis_span(&sc->axis, a, b, c0, c1);
    if (open || t1 > sc->t1) *c1 = sc->axis.ncells - 1;
    return 1;
}

/* In pictures, widen [*c0, *c1] to at least one character, about its
 * middle, so that a 1 ns double entry on a 60 s axis is still seen. */
static void min_cells(const struct ctx *c, int *c0, int *c1) {
    int need = c->v->char_w / c->v->cell_w, have = *c1 - *c0 + 1;
    if (c->v->char_w <= c->v->cell_w || have >= need) return;
    int extra = need - have;
    *c0 -= extra / 2;
    *c1 += extra - extra / 2;
    if (*c0 < 0) *c0 = 0;
    if (*c1 > c->sc->axis.ncells - 1) *c1 = c->sc->axis.ncells - 1;
}

/* The cell of instant t, or -1 outside the window. */
static int mark_cell(const struct scene *sc, sim_ns t) {
    if (t < sc->t0 || t > sc->t1) return -1;
    return layout_axis_cell(&sc->axis, t - sc->t0);
}

int scene_x_of(const struct scene *sc, sim_ns t) {
    sim_ns d = t < sc->t0 ? 0 : t > sc->t1 ? sc->t1 - sc->t0 : t - sc->t0;
    if (sc->axis.cell_ns <= 0 || sc->axis.ncells <= 0) return sc->plot_x;
    int cell = (int)(d / sc->axis.cell_ns);
    if (cell >= sc->axis.ncells) cell = sc->axis.ncells - 1;
    return sc->plot_x + cell * (sc->plot_w / sc->axis.ncells);
}

/* ---- lanes ----------------------------------------------------------------- */

enum { B_ACQ = 1, B_HOLD = 2, B_PAUSE = 4, B_DOWN = 8, B_LEASE = 16 };

static int mark_sym(const struct layout_mark *m) {
    switch (m->kind) {
    case LAYOUT_MARK_ACQUIRED: return SCENE_SYM_ACQUIRED;
    case LAYOUT_MARK_ACQUIRE_FAILED: return SCENE_SYM_FAILED;
    case LAYOUT_MARK_RELEASE: return SCENE_SYM_RELEASE;
    case LAYOUT_MARK_LOST: return SCENE_SYM_LOST;
    case LAYOUT_MARK_WRONG_RELEASE: return SCENE_SYM_WRONG_RELEASE;
    case LAYOUT_MARK_GRANT: return SCENE_SYM_GRANT;
    case LAYOUT_MARK_RENEW: return SCENE_SYM_RENEW;
    case LAYOUT_MARK_EXPIRE: return SCENE_SYM_EXPIRE;
    case LAYOUT_MARK_DELETE: return m->detail ? SCENE_SYM_WRONG_RELEASE : SCENE_SYM_DELETE;
    case LAYOUT_MARK_KEEP: return SCENE_SYM_KEEP;
    case LAYOUT_MARK_READ: return SCENE_SYM_READ;
    case LAYOUT_MARK_WRITE_OK: return SCENE_SYM_WRITE_OK;
    case LAYOUT_MARK_WRITE_REJECTED: return SCENE_SYM_WRITE_REJECTED;
    case LAYOUT_MARK_CLOCK_STEP: return SCENE_SYM_CLOCK;
    case LAYOUT_MARK_CRASH: return SCENE_SYM_CRASH;
    case LAYOUT_MARK_RESTART: return SCENE_SYM_RESTART;
    case LAYOUT_MARK_WRITE_SKIPPED: return SCENE_SYM_SKIP;
    case LAYOUT_MARK_CONTROL: return SCENE_SYM_CONTROL;
    default: return SCENE_SYM_NONE;
    }
}

/* A tooltip for a mark: "B acquires, token 42, t=31s". */
static void tooltip(struct ctx *c, struct scene_cmd *k, const struct layout_lane *lane,
                    const struct layout_mark *m) {
    char buf[200], t[32], tok[40] = "";
    const char *who = lane->name, *peer = node_name(c->ly, m->peer);
    format_time_ns(t, sizeof t, m->t);
    if (m->token) snprintf(tok, sizeof tok, ", token %llu", (unsigned long long)m->token);
    switch (m->kind) {
    case LAYOUT_MARK_ACQUIRED: snprintf(buf, sizeof buf, "%s acquires%s", who, tok); break;
    case LAYOUT_MARK_ACQUIRE_FAILED: snprintf(buf, sizeof buf, "%s gives up acquiring", who); break;
    case LAYOUT_MARK_RELEASE: snprintf(buf, sizeof buf, "%s releases the lock", who); break;
    case LAYOUT_MARK_LOST: snprintf(buf, sizeof buf, "%s learns it lost the lock", who); break;
    case LAYOUT_MARK_WRONG_RELEASE:
        snprintf(buf, sizeof buf, "%s's release removes %s's lock", who, peer);
        break;
    case LAYOUT_MARK_GRANT: snprintf(buf, sizeof buf, "%s grants the lock to %s%s", who, peer, tok); break;
    case LAYOUT_MARK_RENEW: snprintf(buf, sizeof buf, "%s renews %s's lease", who, peer); break;
    case LAYOUT_MARK_EXPIRE: snprintf(buf, sizeof buf, "%s: %s's lease expires", who, peer); break;
    case LAYOUT_MARK_DELETE: snprintf(buf, sizeof buf, "%s deletes the lease on %s's release", who, peer); break;
    case LAYOUT_MARK_KEEP: snprintf(buf, sizeof buf, "%s refuses %s's release", who, peer); break;
    case LAYOUT_MARK_READ: snprintf(buf, sizeof buf, "%s reads %lld", peer, (long long)m->value); break;
    case LAYOUT_MARK_WRITE_OK:
        snprintf(buf, sizeof buf, "%s accepts %s's write%s%s", who, peer, tok,
                 m->stale ? " though it is STALE" : "");
        break;
    case LAYOUT_MARK_WRITE_REJECTED:
        snprintf(buf, sizeof buf, "%s rejects %s's write%s", who, peer, tok);
        break;
    case LAYOUT_MARK_CLOCK_STEP: {
        char d[32];
        format_time_ns(d, sizeof d, m->value);
        snprintf(buf, sizeof buf, "%s's clock steps by %s", who, d);
        break;
    }
    case LAYOUT_MARK_CRASH: snprintf(buf, sizeof buf, "%s crashes", who); break;
    case LAYOUT_MARK_RESTART: snprintf(buf, sizeof buf, "%s restarts", who); break;
    case LAYOUT_MARK_WRITE_SKIPPED: snprintf(buf, sizeof buf, "%s does not send its write%s", who, tok); break;
    case LAYOUT_MARK_CONTROL: snprintf(buf, sizeof buf, "operator action on %s", who); break;
    default: snprintf(buf, sizeof buf, "%s", who); break;
    }
    size_t len = strlen(buf);
    snprintf(buf + len, sizeof buf - len, ", t=%s", t);
    set_text(c, k, buf, strlen(buf));
}

static void place_badges(struct ctx *c, struct scene_cmd *k, size_t n);

/* The lane's cells: interval fills, then the instant that wins each cell
 * (a later instant of equal or higher priority replaces an earlier one). */
static void fill_lane(struct ctx *c, const struct layout_lane *lane) {
    const struct scene *sc = c->sc;
    int n = sc->axis.ncells;
    memset(c->bits, 0, (size_t)n);
    memset(c->win, SCENE_SYM_NONE, (size_t)n);
    for (size_t i = 0; i < lane->nspans; i++) {
        const struct layout_span *s = &lane->spans[i];
        static const uint8_t bit[LAYOUT_SPAN_KIND_COUNT] = {
            [LAYOUT_SPAN_ACQUIRING] = B_ACQ, [LAYOUT_SPAN_HOLDING] = B_HOLD,
            [LAYOUT_SPAN_PAUSED] = B_PAUSE,  [LAYOUT_SPAN_CRASHED] = B_DOWN,
            [LAYOUT_SPAN_LEASE] = B_LEASE,
        };
        int c0, c1;
        if (!span_cells(sc, s->t0, s->t1, s->end == LAYOUT_END_OPEN, &c0, &c1)) continue;
        uint8_t flag = s->kind < LAYOUT_SPAN_KIND_COUNT ? bit[s->kind] : 0;
        for (int k = c0; k <= c1; k++) c->bits[k] |= flag;
    }
    for (int k = 0; k < n; k++) {
        uint8_t b = c->bits[k];
        c->fill[k] = (uint8_t)((b & B_DOWN) ? SCENE_SYM_CRASHED
                               : (b & B_PAUSE) && (b & B_HOLD) ? SCENE_SYM_PAUSED_HOLDING
                               : (b & B_PAUSE) ? SCENE_SYM_PAUSED
                               : (b & B_HOLD) ? SCENE_SYM_HOLDING
                               : (b & B_LEASE) ? SCENE_SYM_LEASE
                               : (b & B_ACQ) ? SCENE_SYM_ACQUIRING : SCENE_SYM_NONE);
    }
    for (size_t i = 0; i < lane->nmarks; i++) {
        const struct layout_mark *m = &lane->marks[i];
        int g = mark_sym(m);
        int cell = mark_cell(sc, m->t);
        if (g == SCENE_SYM_NONE || cell < 0) continue;
        int cur = c->win[cell];
        if (cur == SCENE_SYM_NONE || syms[g].prio >= syms[cur].prio) {
            c->win[cell] = (uint8_t)g;
            c->winst[cell] = (uint8_t)(m->kind == LAYOUT_MARK_WRITE_OK && m->stale
                                           ? SCENE_ST_STALE_WRITE : syms[g].style);
            c->winm[cell] = i;
        }
    }
}

/* Runs of equal cells as rectangles, then the winning instants over them. */
static void emit_cells(struct ctx *c, const struct layout_lane *lane, int lane_idx, int y) {
    const struct scene_view *v = c->v;
    struct scene *sc = c->sc;
    int n = sc->axis.ncells;
    int pad = v->lane_h > 2 ? v->lane_h / 6 : 0;
    for (int k = 0; k < n;) {
        int g = c->fill[k], e = k;
        while (e + 1 < n && c->fill[e + 1] == g) e++;
        if (g != SCENE_SYM_NONE) {
            struct scene_cmd *r = add(c, SCENE_CMD_RECT, syms[g].style, sc->plot_x + k * v->cell_w,
                                      y + pad, (e - k + 1) * v->cell_w, v->lane_h - 2 * pad);
            if (r) {
                r->sym = (uint8_t)g;
                r->lane = lane_idx;
                r->t0 = sc->t0 + (sim_ns)k * sc->axis.cell_ns;
                r->t1 = sc->t0 + (sim_ns)(e + 1) * sc->axis.cell_ns;
            }
        }
        k = e + 1;
    }
    for (int k = 0; k < n; k++) {
        int g = c->win[k] != SCENE_SYM_NONE ? c->win[k] : c->fill[k];
        if (g != SCENE_SYM_NONE) c->used[g] = 1;
    }
    /* Pictures: a write's badge shows its token; a badge that would cover a
     * more important one (higher priority, then earlier) shrinks to a tick. */
    int badges = v->char_w > v->cell_w;
    size_t nwin = 0;
    for (int k = 0; k < n; k++) {
        if (c->win[k] == SCENE_SYM_NONE) continue;
        const struct layout_mark *m = &lane->marks[c->winm[k]];
        char label[24] = "";
        int sym_k = c->win[k];
        if (badges && (sym_k == SCENE_SYM_WRITE_OK || sym_k == SCENE_SYM_WRITE_REJECTED) && m->token)
            snprintf(label, sizeof label, "%llu", (unsigned long long)m->token);
        int chars = label[0] ? (int)strlen(label) : 1;
        int w = badges ? chars * v->char_w + 8 : v->cell_w;
        int x = badges ? sc->plot_x + k * v->cell_w + v->cell_w / 2 - w / 2 : sc->plot_x + k * v->cell_w;
        struct scene_cmd *s = add(c, SCENE_CMD_SYM, c->winst[k], x, y + pad, w, v->lane_h - 2 * pad);
        if (!s) return;
        s->x2 = sc->plot_x + k * v->cell_w + v->cell_w / 2; /* the event's own x */
        s->sym = (uint8_t)sym_k;
        if (c->winst[k] == SCENE_ST_STALE_WRITE) c->used_stale = 1;
        s->lane = lane_idx;
        s->seq = (int32_t)m->seq;
        s->t0 = s->t1 = m->t;
        if (label[0]) s->label_at = store(c, label, strlen(label));
        if (v->flags & SCENE_F_TIPS) tooltip(c, s, lane, m);
        nwin++;
    }
    if (badges && nwin > 1 && !sc->err) place_badges(c, &sc->cmd[sc->ncmd - nwin], nwin);
}

/* Placement order: the damage and the save first, then by priority. */
static int place_prio(const struct scene_cmd *k) {
    if (k->style == SCENE_ST_STALE_WRITE) return 300;
    if (k->style == SCENE_ST_WRITE_REJECTED) return 290;
    return syms[k->sym].prio;
}

static int clear_of(const struct scene_cmd *k, size_t *order, size_t nplaced, int x, int w) {
    for (size_t j = 0; j < nplaced; j++) {
        const struct scene_cmd *b = &k[order[j]];
        if (!b->minor && x < b->x + b->w + 3 && b->x < x + w + 3) return 0;
    }
    return 1;
}

/* Greedy placement: in order of importance (then time), a badge stays at its
 * time if it clears the badges placed so far, else it moves just left or
 * right of the one in its way (at most two badges' widths; its tick stays
 * at its time), else it is minor: a tick only. */
static void place_badges(struct ctx *c, struct scene_cmd *k, size_t n) {
    size_t *order = malloc(n * sizeof *order);
    if (!order) {
        c->sc->err = LSIM_ENOMEM;
        return;
    }
    for (size_t i = 0; i < n; i++) order[i] = i;
    for (size_t i = 1; i < n; i++) { /* insertion sort: stable, n is at most the cells */
        size_t o = order[i], j = i;
        while (j > 0 && place_prio(&k[order[j - 1]]) < place_prio(&k[o])) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = o;
    }
    int lo = c->sc->plot_x - c->v->char_w, hi = c->sc->plot_x + c->sc->plot_w + c->v->char_w;
    for (size_t i = 0; i < n; i++) {
        struct scene_cmd *a = &k[order[i]];
        if (clear_of(k, order, i, a->x, a->w)) continue;
        int best = 0, found = 0;
        for (size_t j = 0; j < i; j++) {
            const struct scene_cmd *b = &k[order[j]];
            if (b->minor) continue;
            int cand[2] = {b->x + b->w + 3, b->x - a->w - 3};
            for (int q = 0; q < 2; q++) {
                int d = cand[q] - a->x;
                if (abs(d) > 2 * a->w || cand[q] < lo || cand[q] + a->w > hi) continue;
                if (!clear_of(k, order, i, cand[q], a->w)) continue;
                if (!found || abs(d) < abs(best)) best = d, found = 1;
            }
        }
        if (found) a->x += best;
        else a->minor = 1;
    }
    free(order);
}

/* One piece of a lease's TTL bar, [from, to], counting down ttl from from. */
static void ttl_piece(struct ctx *c, int lane_idx, int y, int h, sim_ns from, sim_ns to, sim_ns ttl) {
    struct scene *sc = c->sc;
    int a0, a1;
    if (!span_cells(sc, from, to, 0, &a0, &a1)) return;
    sim_ns a = from < sc->t0 ? sc->t0 : from, b = to > sc->t1 ? sc->t1 : to;
    sim_ns left0 = from + ttl - a, left1 = from + ttl - b;
    struct scene_cmd *r = add(c, SCENE_CMD_RECT, SCENE_ST_LEASE, sc->plot_x + a0 * c->v->cell_w, y,
                              (a1 - a0 + 1) * c->v->cell_w, h);
    if (!r) return;
    r->sym = SCENE_SYM_LEASE;
    r->frac0 = (uint16_t)(left0 <= 0 ? 0 : left0 >= ttl ? 1000 : left0 * 1000 / ttl);
    r->frac1 = (uint16_t)(left1 <= 0 ? 0 : left1 >= ttl ? 1000 : left1 * 1000 / ttl);
    r->lane = lane_idx;
    r->t0 = from;
    r->t1 = to;
}

/* Pixel detail over a lane: tokens on critical sections and leases, whose
 * lease it is, the TTL running out, token numbers over writes. */
static void emit_detail(struct ctx *c, const struct layout_lane *lane, int lane_idx, int y) {
    const struct scene_view *v = c->v;
    struct scene *sc = c->sc;
    int pad = v->lane_h > 2 ? v->lane_h / 6 : 0;
    char buf[64];
    uint8_t saved = c->layer;
    c->layer = SCENE_LAYER_EXTRA;
    for (size_t i = 0; i < lane->nspans; i++) {
        const struct layout_span *s = &lane->spans[i];
        int c0, c1;
        if (!span_cells(sc, s->t0, s->t1, s->end == LAYOUT_END_OPEN, &c0, &c1)) continue;
        int x = sc->plot_x + c0 * v->cell_w, w = (c1 - c0 + 1) * v->cell_w;
        if (s->kind == LAYOUT_SPAN_LEASE && s->validity_ns > 0) {
            /* the TTL as this server counts it: full at the grant and at each
             * renewal, shrinking to nothing at the expiry */
            sim_ns from = s->t0, ttl = s->validity_ns;
            for (size_t j = 0; j <= lane->nmarks; j++) {
                const struct layout_mark *m = j < lane->nmarks ? &lane->marks[j] : NULL;
                if (m && (m->kind != LAYOUT_MARK_RENEW || m->peer != s->peer || m->t <= from ||
                          m->t >= s->t1))
                    continue;
                sim_ns to = m ? m->t : s->t1;
                ttl_piece(c, lane_idx, y + v->lane_h - pad - v->lane_h / 5, v->lane_h / 5, from, to, ttl);
                if (!m) break;
                from = m->t;
            }
        }
        if (s->kind != LAYOUT_SPAN_LEASE && s->kind != LAYOUT_SPAN_HOLDING) continue;
        if (s->kind == LAYOUT_SPAN_LEASE)
            snprintf(buf, sizeof buf, s->token ? "held by %s, tok %llu" : "held by %s",
                     node_name(c->ly, s->peer), (unsigned long long)s->token);
        else if (s->token)
            snprintf(buf, sizeof buf, "tok %llu", (unsigned long long)s->token);
        else
            continue;
        /* after the badge that opens the span */
        int len = (int)strlen(buf), skip = v->char_w + 12;
        if (len * v->char_w + 2 * skip > w) continue; /* clear of the badges at both ends */
        struct scene_cmd *k = text_n(c, x + skip, y + pad + (v->lane_h - 2 * pad - v->line_h) / 2, buf,
                                     (size_t)len, s->kind == LAYOUT_SPAN_HOLDING ? SCENE_ST_HOLDING
                                                                                  : SCENE_ST_LABEL);
        if (k) k->lane = lane_idx;
    }
    c->layer = saved;
}

static void emit_lane(struct ctx *c, const struct layout_lane *lane, int lane_idx) {
    const struct scene_view *v = c->v;
    int y = c->y;
    fill_lane(c, lane);
    text_n(c, c->x0, y + (v->lane_h - v->line_h) / 2, lane->name,
           strnlen(lane->name, sizeof lane->name), SCENE_ST_LABEL);
    if (v->lane_h > 1) {
        struct scene_cmd *g = add(c, SCENE_CMD_LINE, SCENE_ST_GRID, c->sc->plot_x, y + v->lane_h - 1,
                                  c->sc->plot_w, 1);
        if (g) {
            g->x2 = c->sc->plot_x + c->sc->plot_w - 1;
            g->y2 = y + v->lane_h - 1;
            g->lane = lane_idx;
        }
    }
    emit_cells(c, lane, lane_idx, y);
    if (v->flags & SCENE_F_DETAIL) emit_detail(c, lane, lane_idx, y);
    c->y += v->lane_h;
    c->lanes_end = c->y;
}

/* ---- the axis, the double-entry row, the writes, the legend -------------------- */

static void emit_axis(struct ctx *c) {
    struct scene *sc = c->sc;
    const struct layout_axis *ax = &sc->axis;
    char lab[32];
    int last_end = -1;
    text_at(c, 0, c->y, "time", SCENE_ST_TEXT);
    sim_ns first = ax->tick_ns > 0 ? (sc->t0 + ax->tick_ns - 1) / ax->tick_ns * ax->tick_ns : sc->t0;
    /* Labels first, remembering the ticks that got one. */
    for (sim_ns t = first; t <= sc->t1; t += ax->tick_ns) {
        int col = sc->plot_x + layout_axis_cell(ax, t - sc->t0) * c->v->cell_w;
        int len = layout_axis_label(ax, t, lab, sizeof lab);
        int x = c->v->char_w > 1 ? col - len * c->v->char_w / 2 : col;
        if (x < sc->plot_x - c->v->char_w) x = sc->plot_x - c->v->char_w;
        if (x > last_end && x + len * c->v->char_w <= c->x0 + c->cols * c->v->char_w) {
            text_n(c, x, c->y, lab, (size_t)len, SCENE_ST_AXIS);
            last_end = x + len * c->v->char_w + (c->v->char_w > 1 ? c->v->char_w : 0);
        }
        if (ax->tick_ns <= 0 || t > sc->t1 - ax->tick_ns) break;
    }
    c->y += c->v->line_h;
    for (sim_ns t = first; t <= sc->t1; t += ax->tick_ns) {
        int x = sc->plot_x + layout_axis_cell(ax, t - sc->t0) * c->v->cell_w;
        if (x < c->x0 + c->cols * c->v->char_w) {
            struct scene_cmd *k = add(c, SCENE_CMD_LINE, SCENE_ST_AXIS, x, c->y, 1, c->v->line_h);
            if (k) {
                k->x2 = x;
                k->y2 = c->y + c->v->line_h - 1;
                k->t0 = k->t1 = t;
            }
        }
        if (ax->tick_ns <= 0 || t > sc->t1 - ax->tick_ns) break;
    }
    c->y += c->v->line_h;
}

static void emit_doubles(struct ctx *c) {
    const struct layout *ly = c->ly;
    struct scene *sc = c->sc;
    const struct scene_view *v = c->v;
    char t0[32], t1[32], len[32], buf[256];
    int y = c->y, pad = v->lane_h > 2 ? v->lane_h / 6 : 0;
    text_n(c, c->x0, y + (v->lane_h - v->line_h) / 2, "DOUBLE ENTRY", 12, SCENE_ST_ALERT);
    for (size_t i = 0; i < ly->ndoubles; i++) {
        const struct layout_double *d = &ly->doubles[i];
        int c0, c1;
        if (!span_cells(sc, d->t0, d->t1, d->open, &c0, &c1)) continue;
        min_cells(c, &c0, &c1);
        struct scene_cmd *r = add(c, SCENE_CMD_RECT, SCENE_ST_DOUBLE, sc->plot_x + c0 * v->cell_w,
                                  y + pad, (c1 - c0 + 1) * v->cell_w, v->lane_h - 2 * pad);
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
            snprintf(buf, sizeof buf, "^ %s..%s  %s and %s both in the critical section"
                     " (still at the end)", t0, t1, node_name(ly, lo), node_name(ly, hi));
        else
            snprintf(buf, sizeof buf, "^ %s..%s  %s and %s both in the critical section (%s)",
                     t0, t1, node_name(ly, lo), node_name(ly, hi), len);
        wrapped(c, c->lw, 2, buf, SCENE_ST_ALERT);
    }
    if (ly->ndoubles > shown) {
        snprintf(buf, sizeof buf, "(%zu more double entries)", ly->ndoubles - shown);
        wrapped(c, c->lw, 2, buf, SCENE_ST_ALERT);
    }
}

/* Which writes get a line of their own under the resource: the rejected
 * ones and the stale ones that got through (the save and the damage). */
static int write_interesting(const struct layout_mark *m) {
    return m->kind == LAYOUT_MARK_WRITE_REJECTED || m->stale;
}

/* One line per write under a resource lane, e.g.
 *   "w t=32s  A write tok 41 value 9 REJECTED: stale, 42 already seen".
 * All writes when there are few, else the rejected and stale ones. */
static void emit_writes(struct ctx *c, const struct layout_lane *lane) {
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
    char t[32], tok[32], why[96], buf[256];
    for (size_t i = 0; i < lane->nmarks; i++) {
        const struct layout_mark *m = &lane->marks[i];
        if (m->kind != LAYOUT_MARK_WRITE_OK && m->kind != LAYOUT_MARK_WRITE_REJECTED) continue;
        uint64_t seen = max_tok;
        if (m->kind == LAYOUT_MARK_WRITE_OK && m->token > max_tok) max_tok = m->token;
        if ((!all && !write_interesting(m)) || shown >= MAX_LINES) continue;
        shown++;
        int ok = m->kind == LAYOUT_MARK_WRITE_OK;
        int style = ok ? (m->stale ? SCENE_ST_STALE_WRITE : SCENE_ST_TEXT) : SCENE_ST_WRITE_REJECTED;
        format_time_ns(t, sizeof t, m->t);
        if (m->token) snprintf(tok, sizeof tok, "tok %llu", (unsigned long long)m->token);
        else snprintf(tok, sizeof tok, "no token");
        if (ok && m->stale && m->other >= 0)
            snprintf(why, sizeof why, "ACCEPTED though stale: %s holds the lock",
                     node_name(c->ly, m->other));
        else if (ok && m->stale)
            snprintf(why, sizeof why, "ACCEPTED though stale");
        else if (ok)
            snprintf(why, sizeof why, "accepted");
        else if (m->detail == TRACE_WRITE_REJECTED_STALE && seen > m->token)
            snprintf(why, sizeof why, "REJECTED: stale, %llu already seen",
                     (unsigned long long)seen);
        else if (m->detail == TRACE_WRITE_REJECTED_STALE)
            snprintf(why, sizeof why, "REJECTED: stale token");
        else if (m->detail == TRACE_WRITE_REJECTED_NOTOKEN)
            snprintf(why, sizeof why, "REJECTED: no fencing token");
        else if (m->detail == TRACE_WRITE_REJECTED_COND)
            snprintf(why, sizeof why, "REJECTED: value changed since read");
        else if (m->detail == TRACE_WRITE_REJECTED_UNIQUE)
            snprintf(why, sizeof why, "REJECTED: unique constraint");
        else if (m->detail == TRACE_WRITE_REJECTED_DUPLICATE)
            snprintf(why, sizeof why, "REJECTED: idempotency key already applied");
        else
            snprintf(why, sizeof why, "REJECTED");
        snprintf(buf, sizeof buf, "%c t=%s  %s write %s value %lld %s",
                 ok ? syms[SCENE_SYM_WRITE_OK].ch : syms[SCENE_SYM_WRITE_REJECTED].ch, t,
                 node_name(c->ly, m->peer), tok, (long long)m->value, why);
        wrapped(c, c->lw, 2, buf, style);
    }
    if (listed > shown || (!all && nwrites > shown)) {
        snprintf(buf, sizeof buf, "(%zu more writes not listed)", nwrites - shown);
        wrapped(c, c->lw, 2, buf, SCENE_ST_TEXT);
    }
}

/* "clients A B; lock server S1; resource R", wrapped. */
static void emit_lanes_legend(struct ctx *c) {
    static const char *const what[3][2] = {
        {"client", "clients"}, {"lock server", "lock servers"}, {"resource", "resources"}};
    char buf[512];
    size_t len = 0;
    len += (size_t)snprintf(buf, sizeof buf, "lanes:");
    for (int k = 0; k < 3; k++) {
        int n = 0;
        for (int l = 0; l < c->ly->nlanes; l++) n += c->ly->lanes[l].kind == k;
        if (!n) continue;
        if (len < sizeof buf)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s %s", len > 6 ? ";" : "",
                                    what[k][n > 1]);
        int shown = 0;
        for (int l = 0; l < c->ly->nlanes && len < sizeof buf; l++) {
            if (c->ly->lanes[l].kind != k) continue;
            if (shown == 8) {
                len += (size_t)snprintf(buf + len, sizeof buf - len, " ... (%d)", n);
                break;
            }
            len += (size_t)snprintf(buf + len, sizeof buf - len, " %s", c->ly->lanes[l].name);
            shown++;
        }
    }
    wrapped(c, 0, 2, buf, SCENE_ST_LEGEND);
}

static void emit_legend(struct ctx *c) {
    const struct scene_view *v = c->v;
    char step[32], buf[256];
    if (v->cell_name) {
        format_time_ns(step, sizeof step, c->sc->axis.cell_ns);
        snprintf(buf, sizeof buf, "legend: 1 %s = %s of true time", v->cell_name, step);
        wrapped(c, 0, 2, buf, SCENE_ST_LEGEND);
    }
    if (v->cell_name) emit_lanes_legend(c); /* pictures name the lanes beside them */
    int entries[SCENE_SYM_COUNT], n = 0, colw = 0;
    for (int g = 1; g < SCENE_SYM_COUNT; g++) {
        if (!c->used[g]) continue;
        entries[n++] = g;
        int w = 4 + (int)strlen(syms[g].text) + 2;
        if (w > colw) colw = w;
    }
    /* pictures: the damage has a colour of its own, so it gets a line */
    static const char stale_text[] = "STALE write accepted: the damage";
    int stale = c->used_stale && v->char_w > v->cell_w;
    if (stale) {
        entries[n++] = -1;
        if (4 + (int)sizeof stale_text + 1 > colw) colw = 4 + (int)sizeof stale_text + 1;
    }
    int ncol = colw && c->cols / colw >= 2 ? 2 : 1;
    int rows = (n + ncol - 1) / ncol;
    for (int r = 0; r < rows; r++) {
        for (int k = 0; k < ncol; k++) {
            int i = k * rows + r; /* column-major: read down, then across */
            if (i >= n) continue;
            int g = entries[i] < 0 ? SCENE_SYM_WRITE_OK : entries[i], col = k * colw;
            int style = entries[i] < 0 ? SCENE_ST_STALE_WRITE : syms[g].style;
            struct scene_cmd *s = add(c, SCENE_CMD_SYM, style, c->x0 + (col + 2) * v->char_w, c->y,
                                      v->char_w, v->line_h);
            if (s) s->sym = (uint8_t)g;
            text_at(c, col + 4, c->y, entries[i] < 0 ? stale_text : syms[g].text, SCENE_ST_LEGEND);
        }
        c->y += v->line_h;
    }
    if (v->cell_name) wrapped(c, 0, 2, "(a marker hides the interval under it)", SCENE_ST_LEGEND);
}

/* Title, then "algorithm  VERDICT  seed", then the replay command and the
 * checker's one-sentence headline. */
static void emit_banner(struct ctx *c, const struct scene_banner *b) {
    char buf[320];
    if (b->title) {
        text_at(c, 0, c->y, b->title, SCENE_ST_TITLE);
        c->y += c->v->line_h + c->v->line_h / 2;
    }
    const struct checker_report *r = b->report;
    int col = 0;
    if (b->algo) {
        snprintf(buf, sizeof buf, "algorithm: %s", b->algo);
        text_at(c, col, c->y, buf, SCENE_ST_BANNER);
        col += (int)strlen(buf) + 3;
    }
    if (r) {
        const char *vn = scn_verdict_name(r->verdict);
        int st = r->verdict == SCN_VERDICT_SAFE ? SCENE_ST_SAFE
                 : r->verdict == SCN_VERDICT_UNSAFE ? SCENE_ST_UNSAFE : SCENE_ST_STUCK;
        struct scene_cmd *k = text_at(c, col, c->y, vn, st);
        (void)k;
        col += (int)strlen(vn) + 3;
    }
    if (b->seed) {
        snprintf(buf, sizeof buf, "seed %s", b->seed);
        text_at(c, col, c->y, buf, SCENE_ST_BANNER);
        col += (int)strlen(buf) + 3;
    }
    if (col) c->y += c->v->line_h;
    if (r && r->headline[0]) wrapped(c, 0, 2, r->headline, SCENE_ST_BANNER);
    if (b->replay) {
        snprintf(buf, sizeof buf, "replay: %s", b->replay);
        wrapped(c, 0, 2, buf, SCENE_ST_BANNER);
    }
    c->y += c->v->line_h / 2;
}

static void fix_pointers(struct scene *sc) {
    for (size_t i = 0; i < sc->ncmd; i++) {
        struct scene_cmd *k = &sc->cmd[i];
        k->text = k->text_at && sc->text ? sc->text + k->text_at - 1 : NULL;
        k->label = k->label_at && sc->text ? sc->text + k->label_at - 1 : NULL;
    }
}

/* Commands of the BACK layer first, keeping the order within each layer. */
static int order_layers(struct scene *sc) {
    if (!sc->ncmd) return 0;
    struct scene_cmd *tmp = malloc(sc->ncmd * sizeof *tmp);
    if (!tmp) return LSIM_ENOMEM;
    size_t n = 0;
    for (int layer = SCENE_LAYER_BACK; layer <= SCENE_LAYER_EXTRA; layer++)
        for (size_t i = 0; i < sc->ncmd; i++)
            if (sc->cmd[i].layer == layer) tmp[n++] = sc->cmd[i];
    memcpy(sc->cmd, tmp, n * sizeof *tmp);
    free(tmp);
    return 0;
}

/* Append src's commands (and their texts) to dst. */
static int append_scene(struct scene *dst, const struct scene *src) {
    if (dst->ncmd + src->ncmd > dst->capcmd) {
        size_t cap = dst->capcmd ? dst->capcmd : 256;
        while (cap < dst->ncmd + src->ncmd) cap *= 2;
        struct scene_cmd *p = realloc(dst->cmd, cap * sizeof *p);
        if (!p) return LSIM_ENOMEM;
        dst->cmd = p;
        dst->capcmd = cap;
    }
    if (dst->ntext + src->ntext > dst->captext) {
        size_t cap = dst->captext ? dst->captext : 4096;
        while (cap < dst->ntext + src->ntext) cap *= 2;
        char *p = realloc(dst->text, cap);
        if (!p) return LSIM_ENOMEM;
        dst->text = p;
        dst->captext = cap;
    }
    if (src->ntext) memcpy(dst->text + dst->ntext, src->text, src->ntext);
    for (size_t i = 0; i < src->ncmd; i++) {
        struct scene_cmd k = src->cmd[i];
        if (k.text_at) k.text_at += dst->ntext;
        if (k.label_at) k.label_at += dst->ntext;
        dst->cmd[dst->ncmd++] = k;
    }
    dst->ntext += src->ntext;
    return 0;
}

int scene_build_panels(struct scene *sc, const struct layout *lys, size_t n,
                       const struct scene_view *v, const struct scene_banner *banners) {
    memset(sc, 0, sizeof *sc);
    struct scene_view pv = *v;
    sim_ns t_end = 0;
    int lw = v->label_chars;
    for (size_t i = 0; i < n; i++) {
        const struct layout *ly = &lys[i];
        if (ly->t_end > t_end) t_end = ly->t_end;
        for (int l = 0; l < ly->nlanes; l++) {
            int w = (int)strnlen(ly->lanes[l].name, sizeof ly->lanes[l].name);
            if (lane_shown(v, l) && w > lw) lw = w;
        }
        if (ly->ndoubles && lw < 12) lw = 12;
    }
    pv.label_chars = lw;
    if (v->t1 <= v->t0) {
        pv.t0 = 0;
        pv.t1 = t_end;
    }
    int y = 0, rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        struct scene one;
        pv.flags = v->flags & (i + 1 == n ? ~0u : ~(unsigned)SCENE_F_LEGEND);
        rc = scene_build(&one, &lys[i], &pv, banners ? &banners[i] : NULL, y);
        if (!rc) rc = append_scene(sc, &one);
        if (!rc) {
            sc->plot_x = one.plot_x;
            sc->plot_w = one.plot_w;
            sc->t0 = one.t0;
            sc->t1 = one.t1;
            sc->axis = one.axis;
            y = one.height - v->margin; /* the next panel's margin is the gap */
        }
        scene_close(&one);
    }
    sc->width = v->width;
    sc->height = y + v->margin;
    sc->err = rc;
    fix_pointers(sc);
    return rc;
}

int scene_build(struct scene *sc, const struct layout *ly, const struct scene_view *v,
                const struct scene_banner *b, int y0) {
    memset(sc, 0, sizeof *sc);
    struct ctx c;
    memset(&c, 0, sizeof c);
    c.sc = sc;
    c.ly = ly;
    c.v = v;
    c.layer = SCENE_LAYER_MAIN;
    c.x0 = v->margin;
    c.y = y0 + v->margin;
    if (v->char_w < 1 || v->line_h < 1 || v->lane_h < 1 || v->cell_w < 1) return LSIM_EBAD_VALUE;
    c.cols = (v->width - 2 * v->margin) / v->char_w;

    /* Label column: lane names, "time", "DOUBLE ENTRY". */
    int lw = 4;
    for (int l = 0; l < ly->nlanes; l++) {
        if (!lane_shown(v, l)) continue;
        int w = (int)strnlen(ly->lanes[l].name, sizeof ly->lanes[l].name);
        if (w > lw) lw = w;
    }
    if (ly->ndoubles && lw < 12) lw = 12;
    if (lw < v->label_chars) lw = v->label_chars;
    c.lw = lw + 1;
    sc->plot_x = c.x0 + c.lw * v->char_w;
    int max_cells = (v->width - v->margin - sc->plot_x) / v->cell_w;
    if (max_cells < 1) return LSIM_EBAD_VALUE;

    sc->t0 = v->t0;
    sc->t1 = v->t1;
    if (v->t1 <= v->t0) {
        sc->t0 = 0;
        sc->t1 = ly->t_end;
    }
    if (sc->t0 < 0) sc->t0 = 0;
    int min_tick = v->min_tick_chars * v->char_w / v->cell_w;
    if (layout_axis_fit(&sc->axis, sc->t1 - sc->t0, max_cells, min_tick) != 0) return LSIM_EBAD_VALUE;
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
    sc->plot_w = sc->axis.ncells * v->cell_w;

    size_t n = (size_t)sc->axis.ncells;
    c.fill = malloc(n);
    c.bits = malloc(n);
    c.win = malloc(n);
    c.winst = malloc(n);
    c.winm = malloc(n * sizeof *c.winm);
    if (!c.fill || !c.bits || !c.win || !c.winst || !c.winm) sc->err = LSIM_ENOMEM;

    if (!sc->err && b) emit_banner(&c, b);
    if (!sc->err) emit_axis(&c);
    int y_lanes = c.y, y_double_end = -1;
    /* Clients, the double-entry row under them, servers, the resource. */
    static const int order[] = {TRACE_NODE_CLIENT, -1, TRACE_NODE_SERVER, TRACE_NODE_RESOURCE};
    for (size_t k = 0; k < sizeof order / sizeof order[0] && !sc->err; k++) {
        if (order[k] < 0) {
            if (ly->ndoubles) {
                emit_doubles(&c);
                y_double_end = c.y;
            }
            continue;
        }
        for (int l = 0; l < ly->nlanes && !sc->err; l++) {
            const struct layout_lane *lane = &ly->lanes[l];
            if (lane->kind != order[k] || !lane_shown(v, l)) continue;
            emit_lane(&c, lane, l);
            if (lane->kind == TRACE_NODE_RESOURCE) emit_writes(&c, lane);
        }
    }
    /* Nodes of a kind this scene does not know still get their row. */
    for (int l = 0; l < ly->nlanes && !sc->err; l++) {
        const struct layout_lane *lane = &ly->lanes[l];
        if (lane->kind >= TRACE_NODE_CLIENT && lane->kind <= TRACE_NODE_RESOURCE) continue;
        if (lane_shown(v, l)) emit_lane(&c, lane, l);
    }
    if ((v->flags & SCENE_F_BANDS) && !sc->err) {
        /* every double entry shaded from the first lane to the end of the
         * double-entry row, behind the lanes, and faint tick guides */
        c.layer = SCENE_LAYER_BACK;
        for (size_t i = 0; i < ly->ndoubles && y_double_end >= 0; i++) {
            const struct layout_double *d = &ly->doubles[i];
            int c0, c1;
            if (!span_cells(sc, d->t0, d->t1, d->open, &c0, &c1)) continue;
            min_cells(&c, &c0, &c1);
            struct scene_cmd *r = add(&c, SCENE_CMD_RECT, SCENE_ST_BAND, sc->plot_x + c0 * v->cell_w,
                                      y_lanes, (c1 - c0 + 1) * v->cell_w, y_double_end - y_lanes);
            if (r) {
                r->t0 = d->t0;
                r->t1 = d->t1;
            }
        }
        c.layer = SCENE_LAYER_MAIN;
    }
    if ((v->flags & SCENE_F_BANDS) && !sc->err) { /* faint guides under the ticks */
        const struct layout_axis *ax = &sc->axis;
        c.layer = SCENE_LAYER_BACK;
        sim_ns first = ax->tick_ns > 0 ? (sc->t0 + ax->tick_ns - 1) / ax->tick_ns * ax->tick_ns : sc->t0;
        for (sim_ns t = first; t <= sc->t1 && ax->tick_ns > 0; t += ax->tick_ns) {
            int x = sc->plot_x + layout_axis_cell(ax, t - sc->t0) * v->cell_w;
            struct scene_cmd *g = add(&c, SCENE_CMD_LINE, SCENE_ST_GRID, x, y_lanes, 1, c.lanes_end - y_lanes);
            if (g) {
                g->x2 = x;
                g->y2 = c.lanes_end - 1;
                g->t0 = g->t1 = t;
            }
            if (t > sc->t1 - ax->tick_ns) break;
        }
        c.layer = SCENE_LAYER_MAIN;
    }
    if ((v->flags & SCENE_F_LEGEND) && !sc->err) {
        c.y += v->line_h;
        emit_legend(&c);
    }
    sc->width = v->width;
    sc->height = c.y + v->margin;
    free(c.fill);
    free(c.bits);
    free(c.win);
    free(c.winst);
    free(c.winm);
    if (!sc->err) sc->err = order_layers(sc);
    fix_pointers(sc);
    return sc->err;
}

void scene_close(struct scene *sc) {
    if (!sc) return;
    free(sc->cmd);
    free(sc->text);
    memset(sc, 0, sizeof *sc);
}
