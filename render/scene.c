/* Scene: turns a layout and a view into draw commands. Every decision about
 * what is shown (lane order, the double-entry row, which writes get a line,
 * which mark wins a shared cell, the legend) is made in scene*.c, on a grid of
 * time cells and character cells that the view sizes in the backend's units.
 * This file: the legend, the banner, the order of the rows, panels (the
 * symbol table, views and command storage are in scene_cmd.c). */
#include "scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fmt.h"
#include "palette.h"
#include "scene_int.h"

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
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s %s", len > 6 ? ";" : "", what[k][n > 1]);
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
            "clock lane: the node's clock minus true time",          "message dropped on its way (partition, loss)",
            "replication: primary to replica, with the lag",         "leader of the lock service, and its term",
            "lock-delay: the lock withheld after its holder failed",
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
                static const uint8_t st[] = {SCENE_ST_CLOCK, SCENE_ST_DROP, SCENE_ST_REPLICATION, SCENE_ST_LEADER,
                                             SCENE_ST_LOCK_DELAY};
                int x = c->x0 + (k * colw + 2) * v->char_w - v->char_w / 2, ym = c->y + v->line_h / 2;
                if (st[-2 - entries[i]] == SCENE_ST_LEADER || st[-2 - entries[i]] == SCENE_ST_LOCK_DELAY) {
                    /* a band, as in the lanes */
                    scene_add(c, SCENE_CMD_RECT, st[-2 - entries[i]], x, ym - v->line_h / 4, v->char_w + v->char_w / 2,
                              v->line_h / 2);
                } else {
                    struct scene_cmd *l = scene_add(c, SCENE_CMD_LINE, st[-2 - entries[i]], x, ym, 0, 0);
                    if (l) {
                        l->x2 = x + v->char_w;
                        l->y2 = ym;
                    }
                }
                scene_text_at(c, k * colw + 4, c->y, extra_text[-2 - entries[i]], SCENE_ST_LEGEND);
                continue;
            }
            int g = entries[i] < 0 ? SCENE_SYM_WRITE_OK : entries[i], col = k * colw;
            int style = entries[i] < 0 ? SCENE_ST_STALE_WRITE : scene_syms[g].style;
            struct scene_cmd *s = scene_add(c, SCENE_CMD_SYM, style, c->x0 + (col + 2) * v->char_w, c->y, v->char_w,
                                            v->line_h);
            if (s) s->sym = (uint8_t)g;
            const char *what = entries[i] < 0                              ? stale_text
                               : g == SCENE_SYM_WRITE_REJECTED && pictures ? save_text
                               : g == SCENE_SYM_READ && pictures           ? "read at the resource (=N: the value)"
                               : g == SCENE_SYM_ACQUIRED && pictures       ? "acquires the lock (+N: its token)"
                                                                           : scene_syms[g].text;
            scene_text_at(c, col + 4, c->y, what, SCENE_ST_LEGEND);
        }
        c->y += v->line_h;
    }
    if (v->cell_name) scene_wrapped(c, 0, 2, "(a marker hides the interval under it)", SCENE_ST_LEGEND);
    if (c->sc->ngaps)
        scene_wrapped(c, 0, 2, "<~N> on the axis: a stretch of about N with no event, drawn short", SCENE_ST_LEGEND);
}

int scene_layout_for(struct layout *out, const struct trace *tr, const struct scene_view *v) {
    if (!v || !v->reveal) return layout_build(out, tr);
    return layout_build_prefix(out, tr, layout_events_until(tr, v->reveal_ns), v->reveal_ns);
}

int scene_run_end(const struct trace *tr, const struct scene_view *v, sim_ns *out) {
    struct layout ly;
    if (layout_build(&ly, tr) != 0) return -1;
    *out = (v->flags & SCENE_F_FIT) ? scene_fit_end(&ly) : ly.t_end;
    layout_close(&ly);
    return 0;
}

/* The NETWORK row: each partition a hatched span (a terminal: ///) from `partition` to its
 * heal, labelled, then a line per partition naming its groups (the words
 * an SVG can be searched for: "partition", the nodes on each side). */
static void emit_partitions(struct scene_ctx *c) {
    const struct layout *ly = c->ly;
    struct scene *sc = c->sc;
    const struct scene_view *v = c->v;
    int y = c->y, pad = v->lane_h > 2 ? v->lane_h / 6 : 0;
    scene_text_n(c, c->x0, y + (v->lane_h - v->line_h) / 2, "NETWORK", 7, SCENE_ST_LABEL);
    for (size_t i = 0; i < ly->nparts; i++) {
        const struct layout_partition *p = &ly->parts[i];
        int c0, c1;
        if (!scene_span_cells(sc, p->t0, p->t1, p->open, &c0, &c1)) continue;
        scene_min_cells(c, &c0, &c1);
        struct scene_cmd *r = scene_add(c, SCENE_CMD_RECT, SCENE_ST_PARTITION, sc->plot_x + c0 * v->cell_w, y + pad,
                                        (c1 - c0 + 1) * v->cell_w, v->lane_h - 2 * pad);
        if (!r) return;
        if (v->char_w == v->cell_w) { /* a terminal draws it with a character */
            r->sym = SCENE_SYM_PARTITION;
            c->used[SCENE_SYM_PARTITION] = 1;
        }
        r->t0 = p->t0;
        r->t1 = p->t1;
        int room = (c1 - c0 + 1) * v->cell_w / (v->char_w > 0 ? v->char_w : 1);
        if (room >= 14)
            scene_text_n(c, sc->plot_x + c0 * v->cell_w + v->char_w / 2, y + (v->lane_h - v->line_h) / 2, "partitioned",
                         11, SCENE_ST_PARTITION);
    }
    c->y += v->lane_h;
    char t0[32], t1[32], buf[256];
    for (size_t i = 0; i < ly->nparts && i < 4; i++) {
        const struct layout_partition *p = &ly->parts[i];
        format_time_ns(t0, sizeof t0, p->t0);
        format_time_ns(t1, sizeof t1, p->t1);
        if (p->open) snprintf(buf, sizeof buf, "partition from %s (never healed): %s", t0, p->groups);
        else if (p->healed) snprintf(buf, sizeof buf, "partition %s..%s, then healed: %s", t0, t1, p->groups);
        else
            snprintf(buf, sizeof buf, "partition from %s, not healed by %s: %s", t0, t1,
                     p->groups); /* revealed so far */
        scene_wrapped(c, c->lw, 2, buf, SCENE_ST_TEXT);
    }
}

/* Title, then "algorithm  VERDICT  seed", then the checker's one-sentence
 * headline, the replay command and the note. */
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
    if (b->status) {
        part[1] = b->status;
    } else if (r) {
        part[1] = scn_verdict_name(r->verdict);
        pst[1] = r->verdict == SCN_VERDICT_SAFE     ? SCENE_ST_SAFE
                 : r->verdict == SCN_VERDICT_UNSAFE ? SCENE_ST_UNSAFE
                                                    : SCENE_ST_STUCK;
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
    if (b->status) scene_wrapped(c, 0, 2, "the verdict shows once the run has decided it", SCENE_ST_BANNER);
    else if (b->decided_by) scene_wrapped(c, 0, 2, b->decided_by, SCENE_ST_BANNER);
    else if (r && r->headline[0]) scene_wrapped(c, 0, 2, r->headline, SCENE_ST_BANNER);
    if (b->replay) {
        snprintf(buf, sizeof buf, "replay: %s", b->replay);
        scene_wrapped(c, 0, 2, buf, SCENE_ST_BANNER);
    }
    if (b->note) scene_wrapped(c, 0, 2, b->note, SCENE_ST_BANNER);
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
                     const struct scene_banner *b, int y0, const struct layout *gap_src, size_t ngap_src);

static int panels_once(struct scene *sc, const struct layout *lys, size_t n, const struct scene_view *v,
                       const struct scene_banner *banners, int legend_left_out);

/* A picture of a given height (--height) is that tall exactly: when the
 * content is taller, the lanes are drawn as tall as a line of text, then
 * the legend is left out, saying so in one line; what still does not fit is
 * cut by the backend at the height. */
int scene_build_panels(struct scene *sc, const struct layout *lys, size_t n, const struct scene_view *v,
                       const struct scene_banner *banners) {
    int rc = panels_once(sc, lys, n, v, banners, 0);
    if (rc || v->height <= 0 || sc->height <= v->height) return rc;
    struct scene_view tight = *v;
    if (tight.lane_h > tight.line_h) {
        tight.lane_h = tight.line_h;
        scene_close(sc);
        rc = panels_once(sc, lys, n, &tight, banners, 0);
        if (rc || sc->height <= v->height) return rc;
    }
    int dropped = 0;
    if (tight.flags & SCENE_F_LEGEND) {
        tight.flags &= ~(unsigned)SCENE_F_LEGEND;
        scene_close(sc);
        rc = panels_once(sc, lys, n, &tight, banners, 1);
        if (rc || sc->height <= v->height) return rc;
        dropped = 1;
    }
    /* Thousands of clients: as many lanes as fit, the rest named in a row
     * (every panel gives up as many: they share the height). */
    int clients = 0;
    for (int l = 0; n && l < lys[0].nlanes; l++) clients += lys[0].lanes[l].kind == TRACE_NODE_CLIENT;
    int over = (sc->height - v->height + tight.lane_h - 1) / tight.lane_h + 1; /* + the row that names them */
    int per = (over + (int)n - 1) / (int)(n ? n : 1);
    if (clients - per < 1) return 0; /* not even that: the backend cuts at the height */
    tight.max_clients = clients - per;
    scene_close(sc);
    return panels_once(sc, lys, n, &tight, banners, dropped);
}

static int panels_once(struct scene *sc, const struct layout *lys, size_t n, const struct scene_view *v,
                       const struct scene_banner *banners, int legend_left_out) {
    memset(sc, 0, sizeof *sc);
    struct scene_view pv = *v;
    sim_ns t_end = 0;
    int lw = v->label_chars;
    /* the axis and the label column: the whole run's when revealed */
    const struct layout *axis_lys = v->whole ? v->whole : lys;
    size_t naxis = v->whole ? v->nwhole : n;
    for (size_t i = 0; i < n + naxis; i++) {
        const struct layout *ly = i < n ? &lys[i] : &axis_lys[i - n];
        sim_ns e = (v->flags & SCENE_F_FIT) ? scene_fit_end(ly) : ly->t_end;
        if (i < n && e > t_end) t_end = e;
        for (int l = 0; l < ly->nlanes; l++) {
            int w = (int)strnlen(ly->lanes[l].name, sizeof ly->lanes[l].name);
            if (scene_lane_shown(v, l) && w > lw) lw = w;
        }
        if (ly->ndoubles && lw < 12) lw = 12;
        if (ly->nparts && lw < 7) lw = 7; /* NETWORK */
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
        rc = build_one(&one, &lys[i], &pv, banners ? &banners[i] : NULL, y, axis_lys, naxis);
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
    } else if (!rc && n && legend_left_out) {
        struct scene_ctx c;
        memset(&c, 0, sizeof c);
        c.sc = sc;
        c.ly = &lys[n - 1];
        c.v = &pv;
        c.layer = SCENE_LAYER_MAIN;
        c.x0 = v->margin;
        c.cols = (v->width - 2 * v->margin) / v->char_w;
        c.y = y + v->line_h / 2;
        char note[160];
        snprintf(note, sizeof note, "(the legend is left out to fit %d px: a taller --height, or 0, shows it)",
                 v->height);
        scene_wrapped(&c, 0, 2, note, SCENE_ST_LEGEND);
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
                     const struct scene_banner *b, int y0, const struct layout *gap_src, size_t ngap_src) {
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
    if (ly->nparts && lw < 7) lw = 7; /* NETWORK */
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
            if (ly->ndoubles) { /* the bands end with the row, above the lines that list them */
                y_double_end = c.y + v->lane_h;
                scene_emit_doubles(&c);
            }
            continue;
        }
        int shown = 0, cut = 0, first_cut = -1, last_cut = -1;
        for (int l = 0; l < ly->nlanes && !sc->err; l++) {
            const struct layout_lane *lane = &ly->lanes[l];
            if (lane->kind != order[k] || !scene_lane_shown(v, l)) continue;
            if (lane->kind == TRACE_NODE_CLIENT && v->max_clients > 0 && shown == v->max_clients) {
                cut++;
                if (first_cut < 0) first_cut = l;
                last_cut = l;
                continue;
            }
            shown += lane->kind == TRACE_NODE_CLIENT;
            scene_emit_lane(&c, lane, l);
            if (lane->kind == TRACE_NODE_RESOURCE) scene_emit_writes(&c, lane);
            if (lane->kind == TRACE_NODE_SERVER) scene_emit_promotions(&c, lane);
        }
        if (cut && !sc->err) { /* the clients not drawn, named in one row */
            char note[160];
            snprintf(note, sizeof note, "+ %d more client%s, not drawn: %.16s .. %.16s", cut, cut == 1 ? "" : "s",
                     ly->lanes[first_cut].name, ly->lanes[last_cut].name);
            scene_text_n(&c, c.x0, c.y + (v->lane_h - v->line_h) / 2, note, strlen(note), SCENE_ST_LEGEND);
            c.y += v->lane_h;
        }
    }
    /* The network, when the scenario partitions it. */
    if (!sc->err && ly->nparts) emit_partitions(&c);
    /* Nodes of a kind this scene does not know still get their row. */
    for (int l = 0; l < ly->nlanes && !sc->err; l++) {
        const struct layout_lane *lane = &ly->lanes[l];
        if (lane->kind >= TRACE_NODE_CLIENT && lane->kind <= TRACE_NODE_RESOURCE) continue;
        if (scene_lane_shown(v, l)) scene_emit_lane(&c, lane, l);
    }
    if ((v->flags & SCENE_F_BANDS) && !sc->err) {
        /* every double entry shaded from the first lane to the bottom of
         * the double-entry row (not over the lines under it that list
         * them), behind the lanes, and faint tick guides */
        c.layer = SCENE_LAYER_BACK;
        for (size_t i = 0; i < ly->ndoubles && y_double_end >= 0; i++) {
            const struct layout_double *d = &ly->doubles[i];
            int c0, c1;
            if (!scene_span_cells(sc, d->t0, d->t1, d->open, &c0, &c1)) continue;
            scene_min_cells(&c, &c0, &c1);
            struct scene_cmd *r = scene_add(&c, SCENE_CMD_RECT, SCENE_ST_BAND, sc->plot_x + c0 * v->cell_w, y_lanes,
                                            (c1 - c0 + 1) * v->cell_w, y_double_end - y_lanes);
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
        struct scene_cmd *r = scene_add(&c, SCENE_CMD_RECT, SCENE_ST_GAP, sc->plot_x + g->c0 * v->cell_w, y_lanes,
                                        g->ncells * v->cell_w, c.lanes_end - y_lanes);
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

int scene_build_traces(struct scene *sc, const struct trace *const *trs, size_t n, const struct scene_view *v,
                       const struct scene_banner *banners) {
    memset(sc, 0, sizeof *sc);
    size_t nly = v->reveal ? 2 * n : n; /* revealed: the panels', then the whole run's */
    struct layout *lys = calloc(nly ? nly : 1, sizeof *lys);
    if (!lys) return LSIM_ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        if (scene_layout_for(&lys[i], trs[i], v) != 0 || (v->reveal && layout_build(&lys[n + i], trs[i]) != 0))
            rc = LSIM_ENOMEM;
    struct scene_view pv = *v;
    if (v->reveal) {
        pv.whole = lys + n;
        pv.nwhole = n;
    }
    if (!rc) rc = scene_build_panels(sc, lys, n, &pv, banners);
    for (size_t i = 0; i < nly; i++) layout_close(&lys[i]);
    free(lys);
    return rc;
}

int scene_build(struct scene *sc, const struct layout *ly, const struct scene_view *v, const struct scene_banner *b,
                int y0) {
    return build_one(sc, ly, v, b, y0, ly, 1);
}

void scene_close(struct scene *sc) {
    if (!sc) return;
    free(sc->cmd);
    free(sc->text);
    memset(sc, 0, sizeof *sc);
}
