/* Scene: turns a layout and a view into draw commands. Every decision about
 * what is shown (lane order, the double-entry row, which writes get a line,
 * which mark wins a shared cell, the legend) is made in scene*.c, on a grid of
 * time cells and character cells that the view sizes in the backend's units.
 * This file: the symbol table, views, command storage, legend, banner, the
 * order of the rows, panels. */
#include "scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fmt.h"
#include "palette.h"
#include "scene_int.h"

/* Symbols: the terminal's character, the style, the priority of an instant
 * (higher wins a shared cell; 0 = an interval fill) and the legend text. */
const struct scene_sym_info scene_syms[SCENE_SYM_COUNT] = {
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
    [SCENE_SYM_REPL_COPY] = {'{', SCENE_ST_MARK_SERVER, 38, "replica copies a grant from its primary"},
    [SCENE_SYM_REPL_DROP] = {'}', SCENE_ST_MARK_SERVER, 36, "replica copies a release, or drops a lock"},
    [SCENE_SYM_READ] = {'o', SCENE_ST_MARK_NOTE, 20, "read at the resource"},
    [SCENE_SYM_WRITE_OK] = {'W', SCENE_ST_MARK_NOTE, 80, "write accepted by the resource"},
    [SCENE_SYM_WRITE_REJECTED] = {'w', SCENE_ST_WRITE_REJECTED, 82, "write REJECTED by resource (fencing)"},
    [SCENE_SYM_SKIP] = {'s', SCENE_ST_MARK_WARN, 78, "write not sent (lock lost, own check, sold out)"},
    [SCENE_SYM_CLOCK] = {'c', SCENE_ST_MARK_WARN, 88, "clock step: the node's clock jumps"},
    [SCENE_SYM_CONTROL] = {'@', SCENE_ST_MARK_WARN, 85, "operator action (failover: promote; kill-replicas)"},
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
    [SCENE_ST_MESSAGE] = "message", [SCENE_ST_GAP] = "gap", [SCENE_ST_CLOCK] = "clock",
    [SCENE_ST_DROP] = "drop", [SCENE_ST_REPLICATION] = "replication",
};

char scene_sym_char(int sym) { return sym > 0 && sym < SCENE_SYM_COUNT ? scene_syms[sym].ch : ' '; }
const char *scene_sym_text(int sym) {
    return sym > 0 && sym < SCENE_SYM_COUNT ? scene_syms[sym].text : "";
}
int scene_sym_style(int sym) {
    return sym > 0 && sym < SCENE_SYM_COUNT ? scene_syms[sym].style : SCENE_ST_TEXT;
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
    v->lane_h = 40;
    v->cell_w = 1;
    v->margin = 16;
    v->min_tick_chars = 10;
    v->cell_name = NULL;
    v->label_chars = 6; /* the first tick's label, centred on it, clears "time" */
    v->compressed = 1;  /* a 27 s pause and a 1 s double entry in one picture */
    v->flags = SCENE_F_LEGEND | SCENE_F_BANDS | SCENE_F_DETAIL | SCENE_F_TIPS | SCENE_F_STRETCH |
               SCENE_F_FIT | SCENE_F_ARROWS;
}

/* ---- storage and text --------------------------------------------------------------- */



struct scene_cmd *scene_add(struct scene_ctx *c, int type, int style, int x, int y, int w, int h) {
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
size_t scene_store(struct scene_ctx *c, const char *s, size_t len) {
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

void scene_set_text(struct scene_ctx *c, struct scene_cmd *k, const char *s, size_t len) {
    if (k) k->text_at = scene_store(c, s, len);
}

struct scene_cmd *scene_text_n(struct scene_ctx *c, int x, int y, const char *s, size_t len, int style) {
    struct scene_cmd *k = scene_add(c, SCENE_CMD_TEXT, style, x, y, (int)len * c->v->char_w, c->v->line_h);
    scene_set_text(c, k, s, len);
    return k;
}

struct scene_cmd *scene_text_at(struct scene_ctx *c, int col, int y, const char *s, int style) {
    return scene_text_n(c, c->x0 + col * c->v->char_w, y, s, strlen(s), style);
}

/* Text from column col, wrapped at spaces to the line; continuation lines
 * start indent columns further right (the terminal's rule, kept exactly). */
void scene_wrapped(struct scene_ctx *c, int col, int indent, const char *text, int style) {
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
        scene_text_n(c, c->x0 + start * c->v->char_w, c->y, s, take, style);
        c->y += c->v->line_h;
        s += take;
        while (*s == ' ') s++;
        start = col + indent;
    } while (*s);
}

const char *scene_node_name(const struct layout *ly, int n) {
    return n >= 0 && n < ly->nlanes ? ly->lanes[n].name : "?";
}

int scene_lane_shown(const struct scene_view *v, int l) {
    return l >= 64 || !(v->hide >> l & 1);
}
/* ---- the legend, the banner, assembling ----------------------------------------- */

/* "clients A B; lock server S1; resource R", wrapped. */
static void emit_lanes_legend(struct scene_ctx *c) {
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
    scene_wrapped(c, 0, 2, buf, SCENE_ST_LEGEND);
}

static void emit_legend(struct scene_ctx *c) {
    const struct scene_view *v = c->v;
    char step[32], buf[256];
    if (v->cell_name) {
        format_time_ns(step, sizeof step, c->sc->axis.cell_ns);
        snprintf(buf, sizeof buf, "legend: 1 %s = %s of true time", v->cell_name, step);
        scene_wrapped(c, 0, 2, buf, SCENE_ST_LEGEND);
    }
    if (v->cell_name) emit_lanes_legend(c); /* pictures name the lanes beside them */
    int entries[SCENE_SYM_COUNT], n = 0, colw = 0;
    for (int g = 1; g < SCENE_SYM_COUNT; g++) {
        if (!c->used[g] && !(v->also_used && v->also_used[g])) continue;
        entries[n++] = g;
        int w = 4 + (int)strlen(scene_syms[g].text) + 2;
        if (w > colw) colw = w;
    }
    /* pictures: the damage has a colour of its own, so it gets a line */
    static const char stale_text[] = "STALE write accepted: the damage";
    static const char save_text[] = "write REJECTED by fencing: the save";
    int pictures = v->char_w > v->cell_w;
    const unsigned char *also = v->also_used;
    int stale = (c->used_stale || (also && also[SCENE_USED_STALE])) && pictures;
    if (stale) {
        entries[n++] = -1;
        if (4 + (int)sizeof stale_text + 1 > colw) colw = 4 + (int)sizeof stale_text + 1;
    }
    /* pictures: the lines that are not symbols (clock lanes, drops, copies) */
    static const char *const extra_text[] = {
        "clock lane: the node's clock minus true time",
        "message dropped on its way (partition, loss)",
        "replication: primary to replica, with the lag",
    };
    for (int x = 0; x < SCENE_USED_N - SCENE_USED_CLOCK; x++) {
        if (!pictures || !(c->used_extra[x] || (also && also[SCENE_USED_CLOCK + x]))) continue;
        entries[n++] = -2 - x;
        if (4 + (int)strlen(extra_text[x]) + 2 > colw) colw = 4 + (int)strlen(extra_text[x]) + 2;
    }
    int ncol = colw && c->cols / colw >= 2 ? 2 : 1;
    int rows = (n + ncol - 1) / ncol;
    for (int r = 0; r < rows; r++) {
        for (int k = 0; k < ncol; k++) {
            int i = k * rows + r; /* column-major: read down, then across */
            if (i >= n) continue;
            if (entries[i] <= -2) { /* a line in its style, then its words */
                static const uint8_t st[] = {SCENE_ST_CLOCK, SCENE_ST_DROP, SCENE_ST_REPLICATION};
                int x = c->x0 + (k * colw + 2) * v->char_w - v->char_w / 2, ym = c->y + v->line_h / 2;
                struct scene_cmd *l = scene_add(c, SCENE_CMD_LINE, st[-2 - entries[i]], x, ym, 0, 0);
                if (l) {
                    l->x2 = x + v->char_w;
                    l->y2 = ym;
                }
                scene_text_at(c, k * colw + 4, c->y, extra_text[-2 - entries[i]], SCENE_ST_LEGEND);
                continue;
            }
            int g = entries[i] < 0 ? SCENE_SYM_WRITE_OK : entries[i], col = k * colw;
            int style = entries[i] < 0 ? SCENE_ST_STALE_WRITE : scene_syms[g].style;
            struct scene_cmd *s = scene_add(c, SCENE_CMD_SYM, style, c->x0 + (col + 2) * v->char_w, c->y,
                                      v->char_w, v->line_h);
            if (s) s->sym = (uint8_t)g;
            const char *what = entries[i] < 0 ? stale_text
                               : g == SCENE_SYM_WRITE_REJECTED && pictures ? save_text
                               : g == SCENE_SYM_READ && pictures ? "read at the resource (=N: the value)"
                               : g == SCENE_SYM_ACQUIRED && pictures ? "acquires the lock (+N: its token)"
                               : scene_syms[g].text;
            scene_text_at(c, col + 4, c->y, what, SCENE_ST_LEGEND);
        }
        c->y += v->line_h;
    }
    if (v->cell_name) scene_wrapped(c, 0, 2, "(a marker hides the interval under it)", SCENE_ST_LEGEND);
    if (c->sc->ngaps)
        scene_wrapped(c, 0, 2, "<~N> on the axis: a stretch of about N with no event, drawn short",
                SCENE_ST_LEGEND);
}

/* Title, then "algorithm  VERDICT  seed", then the replay command and the
 * checker's one-sentence headline. */
static void emit_banner(struct scene_ctx *c, const struct scene_banner *b) {
    char buf[320];
    if (b->title) {
        /* pictures draw the title larger: wrapped at spaces to its own width */
        int pictures = c->v->char_w > c->v->cell_w;
        int tcols = pictures ? c->cols * PALETTE_TEXT_PX / PALETTE_TITLE_PX : c->cols;
        const char *s = b->title;
        do {
            size_t len = strlen(s), take = len;
            if (tcols > 8 && len > (size_t)tcols) {
                take = 0;
                for (int i = tcols; i > 0; i--)
                    if (s[i] == ' ') {
                        take = (size_t)i;
                        break;
                    }
                if (take == 0) take = (size_t)tcols;
            }
            struct scene_cmd *k = scene_text_n(c, c->x0, c->y, s, take, SCENE_ST_TITLE);
            if (k && pictures) k->w = (int)take * c->v->char_w * PALETTE_TITLE_PX / PALETTE_TEXT_PX;
            c->y += c->v->line_h + c->v->line_h / 2;
            s += take;
            while (*s == ' ') s++;
        } while (*s);
    }
    const struct checker_report *r = b->report;
    int col = 0;
    /* "algorithm: X   VERDICT   seed N", each part on the next line when
     * the line has no room left for it (the badge never leaves the picture) */
    const char *part[3] = {NULL, NULL, NULL};
    char algo[96], seed[64];
    int pst[3] = {SCENE_ST_BANNER, SCENE_ST_BANNER, SCENE_ST_BANNER};
    if (b->algo) snprintf(algo, sizeof algo, "algorithm: %s", b->algo), part[0] = algo;
    if (r) {
        part[1] = scn_verdict_name(r->verdict);
        pst[1] = r->verdict == SCN_VERDICT_SAFE ? SCENE_ST_SAFE
                 : r->verdict == SCN_VERDICT_UNSAFE ? SCENE_ST_UNSAFE : SCENE_ST_STUCK;
    }
    if (b->seed) snprintf(seed, sizeof seed, "seed %s", b->seed), part[2] = seed;
    for (int i = 0; i < 3; i++) {
        if (!part[i]) continue;
        int len = (int)strlen(part[i]);
        if (col && col + len > c->cols) {
            c->y += c->v->line_h;
            col = 0;
        }
        scene_text_at(c, col, c->y, part[i], pst[i]);
        col += len + 3;
    }
    if (col) c->y += c->v->line_h;
    if (r && r->headline[0]) scene_wrapped(c, 0, 2, r->headline, SCENE_ST_BANNER);
    if (b->replay) {
        snprintf(buf, sizeof buf, "replay: %s", b->replay);
        scene_wrapped(c, 0, 2, buf, SCENE_ST_BANNER);
    }
    c->y += c->v->line_h / 4;
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

static int build_one(struct scene *sc, const struct layout *ly, const struct scene_view *v,
                     const struct scene_banner *b, int y0, const struct layout *gap_src,
                     size_t ngap_src);

int scene_build_panels(struct scene *sc, const struct layout *lys, size_t n,
                       const struct scene_view *v, const struct scene_banner *banners) {
    memset(sc, 0, sizeof *sc);
    struct scene_view pv = *v;
    sim_ns t_end = 0;
    int lw = v->label_chars;
    for (size_t i = 0; i < n; i++) {
        const struct layout *ly = &lys[i];
        sim_ns e = (v->flags & SCENE_F_FIT) ? scene_fit_end(ly) : ly->t_end;
        if (e > t_end) t_end = e;
        for (int l = 0; l < ly->nlanes; l++) {
            int w = (int)strnlen(ly->lanes[l].name, sizeof ly->lanes[l].name);
            if (scene_lane_shown(v, l) && w > lw) lw = w;
        }
        if (ly->ndoubles && lw < 12) lw = 12;
    }
    pv.label_chars = lw;
    if (v->t1 <= v->t0) {
        pv.t0 = 0;
        pv.t1 = t_end;
    }
    int y = 0, rc = 0;
    pv.flags = v->flags & ~(unsigned)SCENE_F_LEGEND;
    pv.lod = NULL; /* one index cannot serve several layouts */
    for (size_t i = 0; i < n && !rc; i++) {
        struct scene one;
        rc = build_one(&one, &lys[i], &pv, banners ? &banners[i] : NULL, y, lys, n);
        for (int g = 0; g < SCENE_USED_N; g++) sc->used[g] |= one.used[g];
        if (!rc) rc = append_scene(sc, &one);
        if (!rc) {
            sc->plot_x = one.plot_x;
            sc->plot_w = one.plot_w;
            sc->t0 = one.t0;
            sc->t1 = one.t1;
            sc->axis = one.axis;
            sc->ngaps = one.ngaps;
            memcpy(sc->gaps, one.gaps, sizeof sc->gaps);
            y = one.height - v->margin; /* the next panel's margin is the gap */
        }
        scene_close(&one);
    }
    if (!rc && n && (v->flags & SCENE_F_LEGEND)) { /* one legend for every panel */
        struct scene_ctx c;
        memset(&c, 0, sizeof c);
        c.sc = sc;
        c.ly = &lys[n - 1];
        c.v = &pv;
        c.layer = SCENE_LAYER_MAIN;
        c.x0 = v->margin;
        c.cols = (v->width - 2 * v->margin) / v->char_w;
        c.y = y + v->line_h;
        for (int g = 0; g < SCENE_SYM_COUNT; g++) c.used[g] = sc->used[g];
        c.used_stale = sc->used[SCENE_USED_STALE];
        for (int x = SCENE_USED_CLOCK; x < SCENE_USED_N; x++) c.used_extra[x - SCENE_USED_CLOCK] = sc->used[x];
        emit_legend(&c);
        rc = sc->err;
        y = c.y;
    }
    sc->width = v->width;
    sc->height = y + v->margin;
    sc->err = rc;
    fix_pointers(sc);
    return rc;
}

/* scene_build, with the gaps of a compressed axis found in gap_src (n
 * layouts: stacked panels share their gaps). */
static int build_one(struct scene *sc, const struct layout *ly, const struct scene_view *v,
                     const struct scene_banner *b, int y0, const struct layout *gap_src,
                     size_t ngap_src) {
    memset(sc, 0, sizeof *sc);
    struct scene_ctx c;
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
        if (!scene_lane_shown(v, l)) continue;
        int w = (int)strnlen(ly->lanes[l].name, sizeof ly->lanes[l].name);
        if (w > lw) lw = w;
    }
    if (ly->ndoubles && lw < 12) lw = 12;
    if (lw < v->label_chars) lw = v->label_chars;
    c.lw = lw + 1;
    sc->plot_x = c.x0 + c.lw * v->char_w;
    int max_cells = (v->width - v->margin - sc->plot_x) / v->cell_w;
    if (max_cells < 1) return LSIM_EBAD_VALUE;

    int rc = scene_fit_axis(&c, max_cells, gap_src, ngap_src);
    if (rc) return rc;

    size_t n = (size_t)sc->axis.ncells;
    c.fill = malloc(n);
    c.bits = malloc(n);
    c.win = malloc(n);
    c.winst = malloc(n);
    c.winm = malloc(n * sizeof *c.winm);
    c.lane_y = malloc((ly->nlanes > 0 ? (size_t)ly->nlanes : 1) * sizeof *c.lane_y);
    if (!c.fill || !c.bits || !c.win || !c.winst || !c.winm || !c.lane_y) sc->err = LSIM_ENOMEM;
    for (int l = 0; l < ly->nlanes && c.lane_y; l++) c.lane_y[l] = -1;

    if (!sc->err && b) emit_banner(&c, b);
    if (!sc->err) scene_emit_axis(&c);
    int y_lanes = c.y, y_double_end = -1;
    /* Clients, the double-entry row under them, servers, the resource. */
    static const int order[] = {TRACE_NODE_CLIENT, -1, TRACE_NODE_SERVER, TRACE_NODE_RESOURCE};
    for (size_t k = 0; k < sizeof order / sizeof order[0] && !sc->err; k++) {
        if (order[k] < 0) {
            if (ly->ndoubles) {
                scene_emit_doubles(&c);
                y_double_end = c.y;
            }
            continue;
        }
        for (int l = 0; l < ly->nlanes && !sc->err; l++) {
            const struct layout_lane *lane = &ly->lanes[l];
            if (lane->kind != order[k] || !scene_lane_shown(v, l)) continue;
            scene_emit_lane(&c, lane, l);
            if (lane->kind == TRACE_NODE_RESOURCE) scene_emit_writes(&c, lane);
        }
    }
    /* Nodes of a kind this scene does not know still get their row. */
    for (int l = 0; l < ly->nlanes && !sc->err; l++) {
        const struct layout_lane *lane = &ly->lanes[l];
        if (lane->kind >= TRACE_NODE_CLIENT && lane->kind <= TRACE_NODE_RESOURCE) continue;
        if (scene_lane_shown(v, l)) scene_emit_lane(&c, lane, l);
    }
    if ((v->flags & SCENE_F_BANDS) && !sc->err) {
        /* every double entry shaded from the first lane to the end of the
         * double-entry row, behind the lanes, and faint tick guides */
        c.layer = SCENE_LAYER_BACK;
        for (size_t i = 0; i < ly->ndoubles && y_double_end >= 0; i++) {
            const struct layout_double *d = &ly->doubles[i];
            int c0, c1;
            if (!scene_span_cells(sc, d->t0, d->t1, d->open, &c0, &c1)) continue;
            scene_min_cells(&c, &c0, &c1);
            struct scene_cmd *r = scene_add(&c, SCENE_CMD_RECT, SCENE_ST_BAND, sc->plot_x + c0 * v->cell_w,
                                      y_lanes, (c1 - c0 + 1) * v->cell_w, y_double_end - y_lanes);
            if (r) {
                r->t0 = d->t0;
                r->t1 = d->t1;
            }
        }
        c.layer = SCENE_LAYER_MAIN;
    }
    for (int i = 0; i < sc->ngaps && (v->flags & SCENE_F_BANDS) && !sc->err; i++) {
        /* pictures: the gap shaded across the lanes, behind them */
        const struct scene_gap *g = &sc->gaps[i];
        c.layer = SCENE_LAYER_BACK;
        struct scene_cmd *r = scene_add(&c, SCENE_CMD_RECT, SCENE_ST_GAP, sc->plot_x + g->c0 * v->cell_w,
                                  y_lanes, g->ncells * v->cell_w, c.lanes_end - y_lanes);
        if (r) {
            r->t0 = g->t0;
            r->t1 = g->t1;
        }
        c.layer = SCENE_LAYER_MAIN;
    }
    if ((v->flags & SCENE_F_ARROWS) && !sc->err) scene_emit_arrows(&c);
    if ((v->flags & SCENE_F_BANDS) && !sc->err) { /* faint guides under the ticks */
        const struct layout_axis *ax = &sc->axis;
        c.layer = SCENE_LAYER_BACK;
        sim_ns first = ax->tick_ns > 0 ? (sc->t0 + ax->tick_ns - 1) / ax->tick_ns * ax->tick_ns : sc->t0;
        for (sim_ns t = first; t <= sc->t1 && ax->tick_ns > 0; t += ax->tick_ns) {
            if (scene_in_gap(sc, t)) continue;
            int x = sc->plot_x + scene_cell_of(sc, t) * v->cell_w;
            struct scene_cmd *g = scene_add(&c, SCENE_CMD_LINE, SCENE_ST_GRID, x, y_lanes, 1, c.lanes_end - y_lanes);
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
    free(c.lane_y);
    for (int g = 0; g < SCENE_SYM_COUNT; g++) sc->used[g] = (unsigned char)(c.used[g] != 0);
    sc->used[SCENE_USED_STALE] = (unsigned char)(c.used_stale != 0);
    for (int x = SCENE_USED_CLOCK; x < SCENE_USED_N; x++)
        sc->used[x] = (unsigned char)(c.used_extra[x - SCENE_USED_CLOCK] != 0);
    if (!sc->err) sc->err = order_layers(sc);
    fix_pointers(sc);
    return sc->err;
}

int scene_build(struct scene *sc, const struct layout *ly, const struct scene_view *v,
                const struct scene_banner *b, int y0) {
    return build_one(sc, ly, v, b, y0, ly, 1);
}

void scene_close(struct scene *sc) {
    if (!sc) return;
    free(sc->cmd);
    free(sc->text);
    memset(sc, 0, sizeof *sc);
}
