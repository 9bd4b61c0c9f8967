/* The window: SDL2 events in, the scene painted by raster_paint (the PNG's
 * own painter, gfx/raster.c) into a texture when the view changes, and over it each frame the
 * cursor, the current event, the quiz, the narration line, hover details
 * and the help. All the arithmetic is in render/viewstate.c. */
#include "view.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <SDL.h>
#include <SDL_ttf.h>

#include "error.h"
#include "fmt.h"
#include "gfx.h"
#include "layout.h"
#include "narrate.h"
#include "raster.h"
#include "sdl_paint.h"
#include "viewstate.h"

/* Window chrome (not the timeline's look, which is the palette's). */
static const struct palette_rgb ui_bar = {34, 34, 34}, ui_text = {255, 255, 255},
                                ui_dim = {200, 200, 200}, ui_cursor = {0, 0, 0},
                                ui_mark = {240, 228, 66},     /* Okabe-Ito yellow */
                                ui_veil = {236, 236, 236}, ui_error = {160, 30, 30},
                                ui_panel = {250, 250, 250};

#define LINE_H 26
#define NARR_LINES 3 /* the narration history: the last sentences, the current one bright */
#define NARR_H (LINE_H * (NARR_LINES + 1) + 14) /* the history, then the status line */

struct view {
    const struct view_host *host;
    const struct view_opts *o;
    SDL_Window *win;
    SDL_Renderer *r;
    SDL_Texture *tex;        /* the painted scenes at the window's size */
    int tex_w, tex_h;
    struct gfx_fonts fonts;  /* SDL2_ttf: the overlays' text */
    struct raster_fonts rfonts; /* FreeType: the scenes' text, as the PNG's */
    struct view_load ld;     /* the current load (borrowed from the host) */
    struct layout *lys;      /* owned, ld.n layouts */
    struct scene_lod **lods; /* owned, ld.n: each layout's index (binary search, buckets) */
    struct scene *scs;       /* owned, ld.n scenes, stacked */
    struct scene_view sv;    /* the view they were built in */
    unsigned sv_flags;       /* scene_view_pixels' flags */
    int shot_pending;        /* s pressed: write the next frame */
    size_t nsc;
    struct viewstate vs;
    int w, h;                /* window size */
    int scroll;              /* vertical scroll of the scenes, pixels */
    int content_h;           /* height of the stacked scenes */
    int scene_dirty, tex_dirty;
    sim_ns built_t0, built_t1;
    int help, fullscreen, quit;
    char error[700];         /* a failed reload, shown in the window */
    char status[200];        /* a passing message (screenshot written) */
    Uint32 status_until;
    long narr_cur;           /* the stop narrated in narr[] */
    char narr[600];
    int mx, my;              /* mouse */
    int drag;                /* 0 none, 1 pan, 2 scrub */
    int drag_x;
    sim_ns drag_t0;
    struct timespec mtime;   /* of the scenario file */
    off_t msize;
    Uint32 last_poll;
    int reloads;
    long hover;              /* the trace event under the mouse (its tooltip shown), -1 none */
    char last_log[600];
    struct gfx_text_line narr_line[NARR_LINES + 1]; /* the narration bar's lines, kept */
    /* Reveal as it plays: per panel, what its layout was built for (its
     * first rev_nev events, cut at rev_until), and its banner as shown
     * ("running" until the run is decided). */
    size_t *rev_nev;
    sim_ns *rev_until;
    struct scene_banner *rev_banners;
    char (*decided_by)[400]; /* per panel: rev_banners[i].decided_by's text */
    int decided_all;         /* every panel's verdict is shown */
};

static int fail(int code, const char *what, const char *detail) { return gfx_fail(code, what, detail); }

/* ---- scenes ------------------------------------------------------------------- */

static void free_scenes(struct view *w) {
    for (size_t i = 0; i < w->nsc; i++) scene_close(&w->scs[i]);
    free(w->scs);
    w->scs = NULL;
    w->nsc = 0;
}

static void free_layouts(struct view *w, struct layout *lys, struct scene_lod **lods, size_t n) {
    (void)w;
    for (size_t i = 0; lods && i < n; i++) scene_lod_free(lods[i]);
    free(lods);
    for (size_t i = 0; lys && i < n; i++) layout_close(&lys[i]);
    free(lys);
}

/* The label column every panel shares (as scene_build_panels does): at
 * least scene_view_pixels' own, so that the first tick's label clears
 * "time" however short the lane names are. */
static int label_chars(const struct view *w, int at_least) {
    int lw = at_least;
    for (size_t i = 0; i < w->ld.n; i++) {
        const struct layout *ly = &w->lys[i];
        for (int l = 0; l < ly->nlanes; l++) {
            int n = (int)strnlen(ly->lanes[l].name, sizeof ly->lanes[l].name);
            if (n > lw) lw = n;
        }
        if (ly->ndoubles && lw < 12) lw = 12;
        if (ly->nparts && lw < 7) lw = 7; /* NETWORK */
    }
    return lw;
}

/* One scene per panel in the current window, stacked; the legend under the last. */
/* The panels stacked once, with lanes lane_h tall. */
static int build_stack(struct view *w, struct scene_view *v) {
    free_scenes(w);
    w->scs = calloc(w->ld.n ? w->ld.n : 1, sizeof *w->scs);
    if (!w->scs) return fail(LSIM_ENOMEM, "out of memory", NULL);
    w->nsc = w->ld.n;
    int y = 0;
    unsigned char used[SCENE_USED_N]; /* what the panels above the last show: one legend for all */
    memset(used, 0, sizeof used);
    for (size_t i = 0; i < w->ld.n; i++) {
        /* no tooltips: draw_hover makes the one under the mouse */
        v->flags = w->sv_flags & ~(unsigned)SCENE_F_TIPS & (i + 1 == w->ld.n ? ~0u : ~(unsigned)SCENE_F_LEGEND);
        v->also_used = i + 1 == w->ld.n ? used : NULL;
        v->lod = w->lods ? w->lods[i] : NULL;
        struct scene_banner b, *bp = w->ld.banners ? &b : NULL;
        if (bp) {
            b = w->rev_banners[i];
            b.replay = NULL; /* the window has no use for the command line: room for the lanes */
            /* a panel under one of the same scenario does not repeat its title */
            if (i > 0 && b.title && w->rev_banners[0].title && strcmp(b.title, w->rev_banners[0].title) == 0)
                b.title = NULL;
        }
        int rc = scene_build(&w->scs[i], &w->lys[i], v, bp, y);
        v->also_used = NULL;
        v->lod = NULL;
        if (rc) return fail(rc, "scene_build", lsim_strerror(rc));
        for (int g = 0; g < SCENE_USED_N; g++) used[g] |= w->scs[i].used[g];
        y = w->scs[i].height - v->margin;
    }
    w->content_h = y + v->margin;
    return 0;
}

/* One scene per panel in the current window, stacked; the legend under the
 * last. Panels that do not fit above the narration are drawn again with
 * lanes as tall as a line of text (two algorithms at 1280x720). */
static int build_scenes(struct view *w) {
    struct scene_view v;
    scene_view_pixels(&v, w->w, 0);
    v.compressed = 0; /* the cursor, hover, scrub and zoom map pixels to time linearly */
    w->sv_flags = v.flags;
    v.label_chars = label_chars(w, v.label_chars);
    v.t0 = w->vs.t0;
    v.t1 = w->vs.t1;
    v.cell_w = viewstate_cell_w(v.t1 - v.t0, w->w - 2 * v.margin - (v.label_chars + 1) * v.char_w);
    int rc = build_stack(w, &v);
    if (!rc && w->content_h > w->h - NARR_H && v.lane_h > v.line_h) {
        v.lane_h = v.line_h;
        rc = build_stack(w, &v);
    }
    if (rc) return rc;
    w->sv = v;
    w->built_t0 = w->vs.t0;
    w->built_t1 = w->vs.t1;
    w->scene_dirty = 0;
    w->tex_dirty = 1;
    return 0;
}

/* Paint the scenes into the texture with the PNG's painter (gfx/raster.c)
 * on the texture's own pixels, locked: the same pixels as `locksim render -o
 * x.png` gives for that scene, written by plain stores. SDL's renderer made
 * one call, one clip and one fill loop per box (about 28,000 zoomed out
 * over a million events: 27 ms a frame; bench/README.md, "The window"). */
static int paint_texture(struct view *w) {
    if (!w->tex || w->tex_w != w->w || w->tex_h != w->h) {
        if (w->tex) SDL_DestroyTexture(w->tex);
        w->tex = SDL_CreateTexture(w->r, SDL_PIXELFORMAT_BGRA32, SDL_TEXTUREACCESS_STREAMING, w->w, w->h);
        if (!w->tex) return fail(LSIM_EINTERNAL, "SDL_CreateTexture", SDL_GetError());
        SDL_SetTextureBlendMode(w->tex, SDL_BLENDMODE_NONE);
        w->tex_w = w->w;
        w->tex_h = w->h;
    }
    void *px = NULL;
    int pitch = 0;
    if (SDL_LockTexture(w->tex, NULL, &px, &pitch) != 0) return fail(LSIM_EINTERNAL, "SDL_LockTexture", SDL_GetError());
    struct raster img;
    int rc = raster_wrap(&img, px, w->w, w->h, (size_t)pitch, palette_background);
    if (rc) rc = fail(rc, "SDL_LockTexture", "a texture of an unexpected pitch");
    img.dy = -w->scroll;
    for (size_t i = 0; i < w->nsc && !rc; i++) rc = raster_paint(&img, &w->rfonts, &w->scs[i], &w->sv);
    raster_close(&img);
    SDL_UnlockTexture(w->tex);
    w->tex_dirty = 0;
    return rc;
}

/* ---- loading ------------------------------------------------------------------ */

static void file_stamp(const char *path, struct timespec *t, off_t *size) {
    struct stat st;
    memset(t, 0, sizeof *t);
    *size = -1;
    if (path && stat(path, &st) == 0) {
        *t = st.st_mtim;
        *size = st.st_size;
    }
}

/* Layouts of a new load; the old ones are freed only when all are built. */
static int take_load(struct view *w, const struct view_load *ld, int first) {
    struct layout *lys = calloc(ld->n ? ld->n : 1, sizeof *lys);
    struct scene_lod **lods = calloc(ld->n ? ld->n : 1, sizeof *lods);
    if (!lys || !lods) {
        free(lys);
        free(lods);
        return fail(LSIM_ENOMEM, "out of memory", NULL);
    }
    for (size_t i = 0; i < ld->n; i++)
        if (layout_build(&lys[i], ld->trs[i]) != 0 || scene_lod_build(&lods[i], &lys[i]) != 0) {
            free_layouts(w, lys, lods, ld->n);
            return fail(LSIM_ENOMEM, "out of memory", NULL);
        }
    int rc = first ? viewstate_init(&w->vs, ld->trs, ld->n, w->o->quiz)
                   : viewstate_reload(&w->vs, ld->trs, ld->n);
    if (rc) {
        free_layouts(w, lys, lods, ld->n);
        return fail(rc, "out of memory", NULL);
    }
    size_t *rn = calloc(ld->n ? ld->n : 1, sizeof *rn);
    sim_ns *ru = calloc(ld->n ? ld->n : 1, sizeof *ru);
    struct scene_banner *rb = calloc(ld->n ? ld->n : 1, sizeof *rb);
    char(*db)[400] = calloc(ld->n ? ld->n : 1, sizeof *db);
    if (!rn || !ru || !rb || !db) {
        free(rn), free(ru), free(rb), free(db);
        free_layouts(w, lys, lods, ld->n);
        return fail(LSIM_ENOMEM, "out of memory", NULL);
    }
    for (size_t i = 0; i < ld->n; i++) { /* built whole: what reveal_layouts compares with */
        rn[i] = ld->trs[i]->len;
        ru[i] = -1;
    }
    free_layouts(w, w->lys, w->lods, w->ld.n);
    free(w->rev_nev), free(w->rev_until), free(w->rev_banners), free(w->decided_by);
    w->decided_by = db;
    w->rev_nev = rn;
    w->rev_until = ru;
    w->rev_banners = rb;
    w->lys = lys;
    w->lods = lods;
    w->ld = *ld;
    w->scene_dirty = 1;
    w->narr_cur = -2;
    return 0;
}

/* Each panel's layout as the run stood at the cursor (viewstate_revealed),
 * rebuilt only when that changed, and its banner: the verdict once the run
 * has decided it, "running" before. */
static int reveal_layouts(struct view *w) {
    w->decided_all = 1;
    for (size_t i = 0; i < w->ld.n; i++) {
        const struct trace *tr = w->ld.trs[i];
        size_t nev;
        sim_ns until;
        viewstate_revealed(&w->vs, (int)i, tr, &nev, &until);
        if (nev != w->rev_nev[i] || until != w->rev_until[i]) {
            struct layout ly;
            if (layout_build_prefix(&ly, tr, nev, until) != 0) return fail(LSIM_ENOMEM, "out of memory", NULL);
            scene_lod_free(w->lods[i]); /* it points into the layout it indexes */
            w->lods[i] = NULL;
            layout_close(&w->lys[i]);
            w->lys[i] = ly;
            w->rev_nev[i] = (size_t)-1; /* until the index is built too */
            if (scene_lod_build(&w->lods[i], &w->lys[i]) != 0) return fail(LSIM_ENOMEM, "out of memory", NULL);
            w->rev_nev[i] = nev;
            w->rev_until[i] = until;
            w->scene_dirty = 1;
        }
        if (!w->ld.banners) continue;
        struct scene_banner b = w->ld.banners[i];
        char was[sizeof w->decided_by[0]];
        snprintf(was, sizeof was, "%s", w->decided_by[i]);
        viewstate_banner(&b, w->decided_by[i], sizeof w->decided_by[i], tr, nev);
        if (b.status) w->decided_all = 0;
        if ((b.status == NULL) != (w->rev_banners[i].status == NULL) || !w->rev_banners[i].title ||
            (b.decided_by == NULL) != (w->rev_banners[i].decided_by == NULL) || strcmp(was, w->decided_by[i]) != 0)
            w->scene_dirty = 1;
        w->rev_banners[i] = b;
    }
    return 0;
}

static void poll_file(struct view *w) {
    Uint32 now = SDL_GetTicks();
    if (!w->host->path || now - w->last_poll < 250) return;
    w->last_poll = now;
    struct timespec t;
    off_t size;
    file_stamp(w->host->path, &t, &size);
    if (t.tv_sec == w->mtime.tv_sec && t.tv_nsec == w->mtime.tv_nsec && size == w->msize) return;
    w->mtime = t;
    w->msize = size;
    struct view_load ld;
    memset(&ld, 0, sizeof ld);
    int rc = w->host->load(w->host->ctx, &ld);
    w->reloads++;
    if (rc) {
        snprintf(w->error, sizeof w->error, "%s", ld.error[0] ? ld.error : lsim_strerror(rc));
        return;
    }
    if (take_load(w, &ld, 0) != 0) {
        snprintf(w->error, sizeof w->error, "%s", gfx_error());
        return;
    }
    w->error[0] = '\0';
}

/* ---- screenshot --------------------------------------------------------------- */

/* A new locksim-shot-N.png in --shots DIR or the current folder (never
 * among the scenarios), reserved with O_EXCL so nothing is overwritten. */
static int shot_name(const struct view *w, char *buf, size_t n) {
    char dir[4096] = ".";
    if (w->o->shots_dir && w->o->shots_dir[0]) snprintf(dir, sizeof dir, "%s", w->o->shots_dir);
    for (int k = 1; k < 100000; k++) {
        snprintf(buf, n, "%s/locksim-shot-%d.png", strcmp(dir, "/") ? dir : "", k);
        int fd = open(buf, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd >= 0) {
            close(fd);
            return 0;
        }
    }
    return -1;
}

static void screenshot(struct view *w) {
    char path[4200], err[600] = "";
    int rc = shot_name(w, path, sizeof path) ? LSIM_EOUTPUT : 0;
    if (rc) snprintf(err, sizeof err, "no free name for a screenshot");
    SDL_Surface *s = NULL;
    if (!rc) {
        s = SDL_CreateRGBSurfaceWithFormat(0, w->w, w->h, 32, SDL_PIXELFORMAT_ARGB8888);
        if (!s || SDL_RenderReadPixels(w->r, NULL, SDL_PIXELFORMAT_ARGB8888, s->pixels, s->pitch) != 0) {
            rc = LSIM_EINTERNAL;
            snprintf(err, sizeof err, "cannot read the window: %s", SDL_GetError());
        }
    }
    FILE *f = NULL;
    if (!rc) rc = w->host->shot_open(w->host->ctx, path, &f, err, sizeof err);
    if (!rc) {
        int ok = gfx_save_png(s, f, path) == 0;
        if (!ok) snprintf(err, sizeof err, "cannot write %.400s: %.150s", path, gfx_error());
        int crc = w->host->shot_close(w->host->ctx, ok, ok ? err : NULL, sizeof err);
        rc = ok ? crc : LSIM_EOUTPUT;
    }
    SDL_FreeSurface(s);
    if (rc) {
        remove(path);
        snprintf(w->status, sizeof w->status, "screenshot failed: %.150s", err);
    } else {
        snprintf(w->status, sizeof w->status, "screenshot: %.170s", path);
    }
    w->status_until = SDL_GetTicks() + 4000;
    if (w->o->log) {
        fprintf(w->o->log, "view: shot %s %s\n", rc ? "failed" : "written", rc ? err : path);
        fflush(w->o->log);
    }
}

/* ---- overlays ----------------------------------------------------------------- */

static void text(struct view *w, int x, int y, const char *s, int bold, struct palette_rgb c) {
    gfx_paint_text(w->r, &w->fonts, x, y, LINE_H, s, PALETTE_TEXT_PX, bold, c);
}

/* The scene of panel p and the y offset of the scenes on screen. */
static int screen_y(const struct view *w, int y) { return y - w->scroll; }

/* The sentence of stop k ("t=31s  B acquires the lock ..."), times as the
 * run's own resolution shows them. */
static void narrate_stop(const struct view *w, long k, char *out, size_t n) {
    if (k < 0) {
        snprintf(out, n, "The start of the run: press Right to step, space to play.");
        return;
    }
    const struct viewstate_event *e = &w->vs.ev[k];
    const struct trace *tr = w->ld.trs[e->panel];
    char s[500], t[32];
    if (narrate_event(s, sizeof s, tr, &tr->ev[e->seq]) != 0 || !s[0]) snprintf(s, sizeof s, "(event %u)", e->seq);
    viewstate_time_text(t, sizeof t, &w->vs, e->t);
    if (w->ld.n > 1) snprintf(out, n, "t=%s  [%s]  %s", t, tr->algo, s);
    else snprintf(out, n, "t=%s  %s", t, s);
}

/* The narration of the current stop, cached. */
static const char *narration(struct view *w) {
    if (w->narr_cur == w->vs.cur) return w->narr;
    w->narr_cur = w->vs.cur;
    narrate_stop(w, w->vs.cur, w->narr, sizeof w->narr);
    return w->narr;
}

/* Lines from y0 to y1 of every panel's lanes: the first lane top to the
 * last lane bottom (the grid guides tell). */
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
    for (long i = vs->cur + 1; i < (long)vs->nev; i++)
        if ((vs->ev[i].flags & VIEWSTATE_DECISIVE) && !(vs->ev[i].flags & VIEWSTATE_REVEALED)) return 1;
    return vs->question >= 0;
}

static void draw_cursor(struct view *w) {
    long cur = w->vs.cur;
    for (size_t p = 0; p < w->nsc; p++) {
        const struct scene *sc = &w->scs[p];
        int y0, y1;
        lanes_extent(sc, &y0, &y1);
        if (y0 < 0) continue;
        int cx = scene_x_of(sc, w->vs.cursor);
        int in = w->vs.cursor >= sc->t0 && w->vs.cursor <= sc->t1;
        if (w->vs.quiz && in && quiz_ahead(&w->vs)) { /* the future is hidden until it happens */
            /* before an open question: up to its badge; else just past the
             * badge of the event at the cursor, which has happened */
            int vx = cx + 11;
            if (w->vs.question >= 0) {
                sim_ns next = w->vs.ev[w->vs.question].t;
                vx = next > sc->t1 ? sc->plot_x + sc->plot_w : scene_x_of(sc, next) - 8;
                if (vx <= cx) vx = cx + 1;
            }
            /* from above the lanes (the bands reach up to the axis) */
            gfx_paint_box(w->r, vx, screen_y(w, y0 - 8), sc->plot_x + sc->plot_w - vx + 12, y1 - y0 + 8, ui_veil);
            /* and the open question's own badge whole: a wide one ("13")
             * reaches left of the veil, and its colour is the answer */
            if (w->vs.question >= 0 && w->vs.ev[w->vs.question].panel == p)
                for (size_t i = 0; i < sc->ncmd; i++) {
                    const struct scene_cmd *k = &sc->cmd[i];
                    if (k->type == SCENE_CMD_SYM && k->seq == (int32_t)w->vs.ev[w->vs.question].seq)
                        gfx_paint_box(w->r, k->x - 1, screen_y(w, k->y - 1), k->w + 2, k->h + 2, ui_veil);
                }
            /* and what the scene says about it in words: the write notes
             * under the lanes, the double entry's caption */
            gfx_paint_box(w->r, 0, screen_y(w, y1 + 1), w->w, sc->height - y1 - 1, ui_veil);
            for (size_t i = 0; i < sc->ncmd; i++) {
                const struct scene_cmd *k = &sc->cmd[i];
                if (k->type == SCENE_CMD_TEXT && k->style == SCENE_ST_ALERT && k->x >= sc->plot_x)
                    gfx_paint_box(w->r, k->x, screen_y(w, k->y), k->w, w->sv.line_h, ui_veil);
            }
        }
        if (in) { /* a thin line that leaves the symbols readable, and a marker over the lanes */
            gfx_paint_line(w->r, cx, screen_y(w, y0 - 6), cx, screen_y(w, y1 + 6), 1, ui_cursor);
            for (int r = 0; r < 8; r++)
                gfx_paint_box(w->r, cx - 7 + r, screen_y(w, y0 - 16 + r), 15 - 2 * r, 1, ui_cursor);
        }
        /* the current event: a yellow frame around its symbol */
        if (cur >= 0 && w->vs.ev[cur].panel == p) {
            uint32_t seq = w->vs.ev[cur].seq;
            for (size_t i = 0; i < sc->ncmd; i++) {
                const struct scene_cmd *k = &sc->cmd[i];
                if (k->type != SCENE_CMD_SYM || k->seq != (int32_t)seq) continue;
                int x = k->x, y = screen_y(w, k->y);
                for (int b = 0; b < 5; b++) { /* yellow inside, black outside: seen on any fill */
                    struct palette_rgb c = b < 2 ? ui_mark : ui_cursor;
                    gfx_paint_line(w->r, x - 2 - b, y - 2 - b, x + k->w + 1 + b, y - 2 - b, 1, c);
                    gfx_paint_line(w->r, x - 2 - b, y + k->h + 1 + b, x + k->w + 1 + b, y + k->h + 1 + b, 1, c);
                    gfx_paint_line(w->r, x - 2 - b, y - 2 - b, x - 2 - b, y + k->h + 1 + b, 1, c);
                    gfx_paint_line(w->r, x + k->w + 1 + b, y - 2 - b, x + k->w + 1 + b, y + k->h + 1 + b, 1, c);
                }
            }
        }
    }
}

static void frame_box(struct view *w, int x, int y, int bw, int bh, struct palette_rgb fill) {
    gfx_paint_box(w->r, x - 2, y - 2, bw + 4, bh + 4, palette_outline);
    gfx_paint_box(w->r, x, y, bw, bh, fill);
}

/* The open question, or the answer of the one just revealed (while the
 * cursor stays on it), with the right choice marked. */
static void draw_question(struct view *w) {
    long at = w->vs.question;
    int answered = 0;
    if (at < 0 && w->vs.quiz && w->vs.cur >= 0 && (w->vs.ev[w->vs.cur].flags & VIEWSTATE_REVEALED)) {
        at = w->vs.cur;
        answered = 1;
    }
    if (at < 0) return;
    const struct viewstate_event *e = &w->vs.ev[at];
    char q[300], ch[3][96];
    int answer = 0;
    int n = viewstate_question(e, w->ld.trs[e->panel], q, sizeof q, ch, &answer);
    if (!n) return;
    int bw = w->w - 200, bh = LINE_H * (n + 3) + 16, x = 100, y = w->h - NARR_H - bh - 24;
    frame_box(w, x, y, bw, bh, ui_panel);
    text(w, x + 16, y + 8, answered ? "The answer:" : "What happens next?", 1, palette_outline);
    text(w, x + 16, y + 8 + LINE_H, q, 0, palette_outline);
    for (int i = 0; i < n; i++) {
        char line[300];
        int right = answered && i == answer;
        snprintf(line, sizeof line, "%c) %.96s%s", (char)('A' + i), ch[i], right ? "   <- this" : "");
        if (right) gfx_paint_box(w->r, x + 24, y + 8 + LINE_H * (2 + i), bw - 48, LINE_H, ui_mark);
        text(w, x + 32, y + 8 + LINE_H * (2 + i), line, right, palette_outline);
    }
    text(w, x + 16, y + 8 + LINE_H * (2 + n),
         answered ? "Right or space goes on." : "Press r (or Enter) to reveal.", 1,
         palette_look(SCENE_ST_ALERT)->ink);
}

/* The narration history (every stop passed, none skipped: the last
 * NARR_LINES, scrollable with Up and Down), the current one bright, then
 * the status line. */
static void draw_narration(struct view *w) {
    int y = w->h - NARR_H;
    gfx_paint_box(w->r, 0, y, w->w, NARR_H, ui_bar);
    long from, to;
    viewstate_history(&w->vs, NARR_LINES, &from, &to);
    (void)narration(w);
    int row = NARR_LINES - (int)(to - from + 1); /* the newest at the bottom of the history */
    if (to < 0) { /* nothing passed yet */
        row = NARR_LINES - 1;
        from = to = -1;
    }
    for (int r = 0; r < NARR_LINES; r++) {
        long k = from + (r - row);
        char s[600] = "";
        if (r >= row && k <= to) {
            if (k == w->vs.cur) snprintf(s, sizeof s, "%s", w->narr);
            else narrate_stop(w, k, s, sizeof s);
        }
        int current = r >= row && k == w->vs.cur;
        gfx_paint_text_line(w->r, &w->fonts, &w->narr_line[r], 12, y + 4 + LINE_H * r, LINE_H, s,
                            PALETTE_TEXT_PX, current, current ? ui_text : ui_dim);
    }
    char s[400], a[32], b[32], c[32], sp[32];
    viewstate_time_text(a, sizeof a, &w->vs, w->vs.t0);
    viewstate_time_text(b, sizeof b, &w->vs, w->vs.t1);
    viewstate_time_text(c, sizeof c, &w->vs, w->vs.cursor);
    viewstate_speed_text(sp, sizeof sp, &w->vs);
    const char *st = w->status_until > SDL_GetTicks() ? w->status
                     : w->content_h > w->h - NARR_H ? "? help  PgDn/PgUp: more below"
                                                    : "";
    snprintf(s, sizeof s, "%s %s  t=%s  window %s..%s  %s%s%s%s", w->vs.playing ? "playing" : "paused", sp, c, a, b,
             st[0] ? st : "? help", w->vs.quiz ? "  [quiz]" : "", w->vs.show_all ? "  [whole run: a]" : "",
             w->vs.narr_back ? "  [history: Down returns]" : "");
    gfx_paint_text_line(w->r, &w->fonts, &w->narr_line[NARR_LINES], 12, y + 8 + LINE_H * NARR_LINES, LINE_H, s,
                        PALETTE_TEXT_PX, 0, ui_dim);
}

static void draw_hover(struct view *w) {
    w->hover = -1;
    if (w->drag || w->my >= w->h - NARR_H) return;
    for (size_t p = 0; p < w->nsc; p++) {
        long k = viewstate_hit(&w->scs[p], w->mx, w->my + w->scroll);
        if (k < 0) continue;
        char made[256];
        const char *tip = w->scs[p].cmd[k].text;
        if (!tip) {
            if (scene_sym_tooltip(made, sizeof made, &w->lys[p], &w->scs[p].cmd[k]) != 0) continue;
            tip = made;
        }
        int tw = gfx_text_width(&w->fonts, tip, PALETTE_TEXT_PX, 0) + 16;
        int x = w->mx + 14, y = w->my + 18;
        if (x + tw > w->w) x = w->w - tw - 4;
        if (x < 0) x = 0;
        if (y + LINE_H + 4 > w->h - NARR_H) y = w->my - LINE_H - 12;
        frame_box(w, x, y, tw, LINE_H + 4, ui_panel);
        text(w, x + 8, y + 2, tip, 0, palette_outline);
        w->hover = (long)w->scs[p].cmd[k].seq;
        return;
    }
}

static const char *const help_lines[] = {
    "space        play / pause",
    "[  ]         slower / faster",
    "Right  Left  next / previous event (exact: the run is replayed from its trace)",
    "Home  End    start / end",
    "drag on the time axis: scrub      drag elsewhere: pan",
    "+  -  wheel  zoom in / out        0  f  fit the whole run",
    "n            next violation (double entry, stale write accepted, wrong release)",
    "a            the whole run at once / as it plays (only what happened by the cursor)",
    "Up  Down     the narration's earlier sentences / back to the present",
    "r  Enter     reveal the quiz answer",
    "s            screenshot (locksim-shot-N.png in the current folder, or --shots DIR)",
    "PgUp PgDn    scroll panels        F11  full screen",
    "? F1         this help            q  Esc  quit",
    "The window reloads when the scenario file changes on disk.",
};

static void draw_help(struct view *w) {
    int n = (int)(sizeof help_lines / sizeof help_lines[0]);
    int bw = w->w - 160 < 1000 ? w->w - 160 : 1000, bh = LINE_H * (n + 2);
    int x = (w->w - bw) / 2, y = (w->h - NARR_H - bh) / 2;
    if (y < 8) y = 8;
    frame_box(w, x, y, bw, bh, ui_panel);
    text(w, x + 16, y + 8, "locksim view: keys", 1, palette_outline);
    for (int i = 0; i < n; i++) text(w, x + 16, y + 8 + LINE_H * (i + 1), help_lines[i], 0, palette_outline);
}

static void draw_error(struct view *w) {
    if (!w->error[0]) return;
    /* the message wrapped at the window's width, three lines at most */
    int per = (w->w - 24) / (w->sv.char_w > 0 ? w->sv.char_w : 11), n = 0;
    char lines[3][256];
    const char *p = w->error;
    while (*p && n < 3 && per > 10) {
        int len = (int)strlen(p);
        if (len > per) {
            len = per;
            while (len > per / 2 && p[len] != ' ') len--; /* at a space when one is near */
            if (p[len] != ' ') len = per;
        }
        if (len > 255) len = 255;
        snprintf(lines[n++], sizeof lines[0], "%.*s", len, p);
        p += len;
        while (*p == ' ') p++;
    }
    int bh = LINE_H * (n + 1) + 12;
    gfx_paint_box(w->r, 0, 0, w->w, bh, ui_error);
    text(w, 12, 4, "The scenario does not load; the window shows the last good run:", 1, ui_text);
    for (int i = 0; i < n; i++) text(w, 12, 4 + LINE_H * (i + 1), lines[i], 0, ui_text);
}

static int draw(struct view *w, int shot) {
    int rc = reveal_layouts(w);
    if (!rc && (w->scene_dirty || w->built_t0 != w->vs.t0 || w->built_t1 != w->vs.t1)) rc = build_scenes(w);
    if (!rc && w->tex_dirty) rc = paint_texture(w);
    if (rc) return rc;
    if (w->tex_w != w->w || w->tex_h != w->h) { /* else the texture covers the window */
        SDL_SetRenderDrawColor(w->r, palette_background.r, palette_background.g, palette_background.b, 255);
        SDL_RenderClear(w->r);
    }
    SDL_RenderCopy(w->r, w->tex, NULL, NULL);
    draw_cursor(w);
    draw_question(w);
    draw_narration(w);
    draw_error(w);
    if (w->help) draw_help(w);
    else draw_hover(w);
    if (shot) screenshot(w);
    SDL_RenderPresent(w->r);
    return 0;
}

/* ---- input ---------------------------------------------------------------------- */

static void log_state(struct view *w) {
    if (!w->o->log) return;
    char line[600];
    size_t revealed = 0; /* events drawn, all panels */
    for (size_t i = 0; w->rev_nev && i < w->ld.n; i++) revealed += w->rev_nev[i];
    const char *kind = "-", *qkind = "-";
    if (w->vs.cur >= 0) {
        const struct viewstate_event *e = &w->vs.ev[w->vs.cur];
        kind = trace_kind_name(w->ld.trs[e->panel]->ev[e->seq].kind);
    }
    if (w->vs.question >= 0) {
        const struct viewstate_event *e = &w->vs.ev[w->vs.question];
        qkind = trace_kind_name(w->ld.trs[e->panel]->ev[e->seq].kind);
    }
    snprintf(line, sizeof line,
             "view: cur=%ld kind=%s cursor=%lld t0=%lld t1=%lld playing=%d speed=%d question=%ld "
             "question_kind=%s panels=%zu reloads=%d error=%d help=%d hover=%ld fullscreen=%d size=%dx%d "
             "show_all=%d revealed=%zu decided=%d",
             w->vs.cur, kind, (long long)w->vs.cursor, (long long)w->vs.t0, (long long)w->vs.t1,
             w->vs.playing, w->vs.speed, w->vs.question, qkind, w->ld.n, w->reloads, w->error[0] != 0,
             w->help, w->hover, w->fullscreen, w->w, w->h, w->vs.show_all, revealed, w->decided_all);
    if (strcmp(line, w->last_log) != 0) {
        snprintf(w->last_log, sizeof w->last_log, "%s", line);
        fprintf(w->o->log, "%s\n", line);
        fflush(w->o->log);
    }
}

/* Time under x in the first panel. */
static sim_ns t_at(const struct view *w, int x) {
    return w->nsc ? viewstate_t_of_x(&w->scs[0], x) : 0;
}

static int on_axis(const struct view *w, int x, int y) {
    for (size_t p = 0; p < w->nsc; p++) {
        int y0, y1;
        const struct scene *sc = &w->scs[p];
        if (viewstate_axis_rows(sc, &y0, &y1) == 0 && y + w->scroll >= y0 - 4 && y + w->scroll <= y1 + 4 &&
            x >= sc->plot_x - 4 && x <= sc->plot_x + sc->plot_w + 4)
            return 1;
    }
    return 0;
}

static void scroll_by(struct view *w, int dy) {
    int max = w->content_h - (w->h - NARR_H);
    w->scroll += dy;
    if (w->scroll > max) w->scroll = max;
    if (w->scroll < 0) w->scroll = 0;
    w->tex_dirty = 1;
}

static void on_key(struct view *w, const SDL_KeyboardEvent *k) {
    SDL_Keycode c = k->keysym.sym;
    int shift = (k->keysym.mod & KMOD_SHIFT) != 0;
    struct viewstate *vs = &w->vs;
    if (w->help && c != SDLK_F11 && c != SDLK_s) { /* any key closes the help */
        w->help = 0;
        if (c == SDLK_ESCAPE || c == SDLK_QUESTION || c == SDLK_F1 || (c == SDLK_SLASH && shift)) return;
    }
    switch (c) {
    case SDLK_SPACE:
        if (vs->question < 0) {
            if (!vs->playing && vs->cursor >= vs->t_end) viewstate_home(vs);
            vs->playing = !vs->playing;
        }
        break;
    case SDLK_RIGHTBRACKET: case SDLK_PERIOD: if (vs->speed < 12) vs->speed++; break;
    case SDLK_LEFTBRACKET: case SDLK_COMMA: if (vs->speed > -12) vs->speed--; break;
    case SDLK_RIGHT: vs->playing = 0; viewstate_step(vs, 1); vs->narr_back = 0; break;
    case SDLK_LEFT: vs->playing = 0; viewstate_step(vs, -1); vs->narr_back = 0; break;
    case SDLK_UP: viewstate_history_scroll(vs, 1); break;
    case SDLK_DOWN: viewstate_history_scroll(vs, -1); break;
    case SDLK_a: vs->show_all = !vs->show_all; break;
    case SDLK_HOME: vs->playing = 0; viewstate_home(vs); break;
    case SDLK_END: vs->playing = 0; viewstate_end(vs); break;
    case SDLK_PLUS: case SDLK_EQUALS: case SDLK_KP_PLUS: viewstate_zoom(vs, 2.0, vs->cursor); break;
    case SDLK_MINUS: case SDLK_KP_MINUS: viewstate_zoom(vs, 0.5, vs->cursor); break;
    case SDLK_0: case SDLK_KP_0: case SDLK_f: viewstate_fit(vs); break;
    case SDLK_n: vs->playing = 0; viewstate_next_violation(vs); break;
    case SDLK_r: case SDLK_RETURN: case SDLK_KP_ENTER: viewstate_reveal(vs); break;
    case SDLK_s: w->shot_pending = 1; break;
    case SDLK_F1: case SDLK_QUESTION: w->help = 1; break;
    case SDLK_SLASH: if (shift) w->help = 1; break;
    case SDLK_PAGEDOWN: scroll_by(w, (w->h - NARR_H) / 2); break;
    case SDLK_PAGEUP: scroll_by(w, -(w->h - NARR_H) / 2); break;
    case SDLK_F11:
        w->fullscreen = !w->fullscreen;
        SDL_SetWindowFullscreen(w->win, w->fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0);
        break;
    case SDLK_q: case SDLK_ESCAPE: w->quit = 1; break;
    default: break;
    }
}

static void on_event(struct view *w, const SDL_Event *e) {
    switch (e->type) {
    case SDL_QUIT: w->quit = 1; break;
    case SDL_KEYDOWN: on_key(w, &e->key); break;
    case SDL_WINDOWEVENT:
        if (e->window.event == SDL_WINDOWEVENT_SIZE_CHANGED || e->window.event == SDL_WINDOWEVENT_RESIZED) {
            SDL_GetRendererOutputSize(w->r, &w->w, &w->h);
            w->scene_dirty = 1;
        }
        if (e->window.event == SDL_WINDOWEVENT_EXPOSED) w->tex_dirty = 1;
        break;
    case SDL_MOUSEWHEEL: {
        int y = e->wheel.y;
        if (SDL_GetModState() & KMOD_SHIFT) scroll_by(w, -y * 60);
        else if (y) viewstate_zoom(&w->vs, y > 0 ? 1.25 : 0.8, t_at(w, w->mx));
        break;
    }
    case SDL_MOUSEBUTTONDOWN:
        if (e->button.button == SDL_BUTTON_LEFT && e->button.y < w->h - NARR_H) {
            w->drag = on_axis(w, e->button.x, e->button.y) ? 2 : 1;
            w->drag_x = e->button.x;
            w->drag_t0 = w->vs.t0;
            if (w->drag == 2) {
                w->vs.playing = 0;
                viewstate_seek(&w->vs, t_at(w, e->button.x));
            }
        }
        break;
    case SDL_MOUSEBUTTONUP: w->drag = 0; break;
    case SDL_MOUSEMOTION:
        w->mx = e->motion.x;
        w->my = e->motion.y;
        if (w->drag == 2) viewstate_seek(&w->vs, t_at(w, w->mx));
        else if (w->drag == 1 && w->nsc) {
            const struct scene *sc = &w->scs[0];
            double ns_per_px = (double)(w->vs.t1 - w->vs.t0) / (sc->plot_w > 0 ? sc->plot_w : 1);
            sim_ns want = w->drag_t0 - (sim_ns)((w->mx - w->drag_x) * ns_per_px);
            viewstate_pan(&w->vs, want - w->vs.t0);
        }
        break;
    default: break;
    }
}

/* ---- the run -------------------------------------------------------------------- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --bench-frames: frame times, median and 95th percentile over N frames of
 * each kind, each frame through draw() (scene built if the window moved,
 * painted into the texture, overlays, present). */
struct bench_set {
    double *ms;      /* owned by bench(), frames entries */
    double *cpu_ms;  /* owned by bench(), frames entries: this process's CPU time per frame */
    double scene_ms; /* summed scene_build time */
    double paint_ms; /* summed painting of the scene into the texture */
    size_t cmds;     /* scene commands of the last frame (all panels) */
};

/* CPU time of this process (all its threads), seconds: on a machine shared
 * with other work a frame's wall time includes the waits for a core, its
 * CPU time does not (nor the X server's share of the present). */
static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One frame: move the window (kind), then draw it, timing the parts. */
static int bench_frame(struct view *w, int kind, int i, int frames, struct bench_set *bs) {
    struct viewstate *vs = &w->vs;
    sim_ns run = vs->t_end > 0 ? vs->t_end : 1;
    double px_ns = (double)(vs->t1 - vs->t0) / (w->nsc && w->scs[0].plot_w > 0 ? w->scs[0].plot_w : 1000);
    switch (kind) {
    case 0: /* zoomed out: the whole run, a new window each frame (1 ns off) */
        viewstate_fit(vs);
        vs->t1 -= (i & 1);
        break;
    case 1: /* zoomed out, panning: 90 % of the run, 4 pixels a frame */
        if (i == 0) {
            viewstate_fit(vs);
            vs->t1 = vs->t0 + run / 10 * 9;
        } else {
            viewstate_pan(vs, (sim_ns)(4 * px_ns) * (((i / 25) & 1) ? -1 : 1));
        }
        break;
    case 2: /* zooming: from the whole run in by 8 % a frame, and out again */
        if (i == 0) viewstate_fit(vs);
        else viewstate_zoom(vs, i < frames / 2 ? 1.08 : 1 / 1.08, vs->t0 + (vs->t1 - vs->t0) / 3);
        break;
    case 3: /* zoomed in to a thousandth of the run, panning 4 pixels a frame */
        if (i == 0) {
            viewstate_fit(vs);
            vs->t0 = run / 2;
            vs->t1 = vs->t0 + run / 1000 + 1;
        } else {
            viewstate_pan(vs, (sim_ns)(4 * px_ns) > 0 ? (sim_ns)(4 * px_ns) : 1);
        }
        break;
    case 4: /* a cursor step: the scene kept, the narration replayed */
        if (i == 0) viewstate_fit(vs);
        else viewstate_step(vs, 1);
        break;
    default: /* nothing new but the mouse: texture, overlays, present */
        w->mx = i % 100;
        break;
    }
    double a = now_s(), b = a, c = a, cpu0 = cpu_s();
    int rc = 0;
    if (w->scene_dirty || w->built_t0 != vs->t0 || w->built_t1 != vs->t1) {
        rc = build_scenes(w);
        b = now_s();
        if (!rc) rc = paint_texture(w);
        c = now_s();
    }
    if (!rc) rc = draw(w, 0);
    if (rc) return rc;
    bs->ms[i] = (now_s() - a) * 1e3;
    bs->cpu_ms[i] = (cpu_s() - cpu0) * 1e3;
    bs->scene_ms += (b - a) * 1e3;
    bs->paint_ms += (c - b) * 1e3;
    bs->cmds = 0;
    for (size_t p = 0; p < w->nsc; p++) bs->cmds += w->scs[p].ncmd;
    return 0;
}

static int bench(struct view *w, int frames) {
    static const char *const names[6] = {
        "zoomed out, a new window each frame", "zoomed out (90 %), panning 4 px a frame",
        "zooming in and out, 8 % a frame", "zoomed in (1/1000 of the run), panning",
        "a cursor step (scene kept)", "nothing new (mouse moved)"};
    size_t events = 0, lod_bytes = 0;
    for (size_t p = 0; p < w->ld.n; p++) events += w->ld.trs[p]->len;
    for (size_t p = 0; w->lods && p < w->ld.n; p++) lod_bytes += scene_lod_bytes(w->lods[p]);
    SDL_RendererInfo ri;
    if (SDL_GetRendererInfo(w->r, &ri) != 0) ri.name = "?";
    const char *fa = SDL_GetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION);
    printf("view bench: %zu events, %dx%d, renderer %s%s%s, %d frames of each kind\n", events, w->w, w->h,
           ri.name, strcmp(ri.name, "software") ? "" : ", framebuffer acceleration ",
           strcmp(ri.name, "software") ? "" : (fa ? fa : "(SDL's default)"), frames);
    printf("  %-42s %8s %8s %8s %8s %10s %10s %8s\n", "frame", "median", "p95", "worst", "cpu",
           "scene_build", "painting", "commands");
    double *ms = calloc((size_t)frames, sizeof *ms), *cpu = calloc((size_t)frames, sizeof *cpu);
    if (!ms || !cpu) {
        free(ms);
        free(cpu);
        return fail(LSIM_ENOMEM, "out of memory", NULL);
    }
    int rc = 0;
    for (int kind = 0; kind < 6 && !rc; kind++) {
        struct bench_set bs = {ms, cpu, 0, 0, 0};
        for (int i = 0; i < frames && !rc; i++) rc = bench_frame(w, kind, i, frames, &bs);
        if (rc) break;
        qsort(ms, (size_t)frames, sizeof *ms, cmp_double);
        qsort(cpu, (size_t)frames, sizeof *cpu, cmp_double);
        int i95 = (frames * 95 + 99) / 100 - 1;
        printf("  %-42s %5.2f ms %5.2f ms %5.2f ms %5.2f ms %7.2f ms %7.2f ms %8zu\n", names[kind],
               ms[frames / 2], ms[i95 < 0 ? 0 : i95], ms[frames - 1], cpu[frames / 2], bs.scene_ms / frames,
               bs.paint_ms / frames, bs.cmds);
    }
    free(ms);
    free(cpu);
    if (rc) return rc;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("  (median, p95, worst: wall time of a frame; cpu: median CPU time of this process in a\n"
           "  frame, without the waits for a core of a busy machine nor the X server's share;\n"
           "  scene_build and painting: mean per frame, 0 when the scene was kept)\n"
           "  level-of-detail index: %.1f MB; peak RSS of the window so far: %.1f MB\n",
           (double)lod_bytes / 1e6, (double)ru.ru_maxrss / 1024.0);
    return 0;
}

/* Is r an OpenGL renderer that SDL chose by itself (SDL_RENDER_DRIVER not
 * set) drawn by a software rasteriser (Mesa llvmpipe, softpipe, swrast: a
 * display without a GPU, such as Xvfb)? There, SDL's software renderer
 * paints a 1M-event scene 2 to 3 times faster and presents in a fifth of
 * the time (bench/README.md, "The window"). */
static int gl_in_software(SDL_Renderer *r) {
    SDL_RendererInfo ri;
    const char *want = SDL_GetHint(SDL_HINT_RENDER_DRIVER);
    if ((want && want[0]) || SDL_GetRendererInfo(r, &ri) != 0 || strncmp(ri.name, "opengl", 6) != 0) return 0;
    typedef const unsigned char *(*get_string_fn)(unsigned);
    get_string_fn get = (get_string_fn)SDL_GL_GetProcAddress("glGetString");
    const char *name = get ? (const char *)get(0x1F01 /* GL_RENDERER */) : NULL;
    return name && (strstr(name, "llvmpipe") || strstr(name, "softpipe") || strstr(name, "swrast") ||
                    strstr(name, "Software Rasterizer"));
}

static void close_view(struct view *w) {
    free_scenes(w);
    free_layouts(w, w->lys, w->lods, w->ld.n);
    viewstate_close(&w->vs);
    gfx_fonts_close(&w->fonts);
    raster_fonts_close(&w->rfonts);
    for (int i = 0; i <= NARR_LINES; i++) gfx_text_line_close(&w->narr_line[i]);
    free(w->rev_nev);
    free(w->rev_until);
    free(w->rev_banners);
    free(w->decided_by);
    if (w->tex) SDL_DestroyTexture(w->tex);
    if (w->r) SDL_DestroyRenderer(w->r);
    if (w->win) SDL_DestroyWindow(w->win);
    TTF_Quit();
    SDL_Quit();
}

int gfx_view_run(const struct view_host *h, const struct view_opts *o) {
    gfx_clear_error();
    const char *d = getenv("DISPLAY"), *wl = getenv("WAYLAND_DISPLAY"), *drv = getenv("SDL_VIDEODRIVER");
    if (!(d && d[0]) && !(wl && wl[0]) && !(drv && drv[0]))
        return fail(LSIM_ENODISPLAY, "no display (DISPLAY and WAYLAND_DISPLAY are not set)", NULL);
    struct view w;
    memset(&w, 0, sizeof w);
    w.host = h;
    w.o = o;
    w.narr_cur = -2;
    w.hover = -1;
    /* the first load before any window: a malformed file fails at once */
    int rc = h->load(h->ctx, &w.ld);
    if (rc) return fail(rc, w.ld.error[0] ? w.ld.error : lsim_strerror(rc), NULL);
    file_stamp(h->path, &w.mtime, &w.msize);
    /* Unless the environment says otherwise: the software renderer's window
     * surface goes to X by XShm, not through an OpenGL texture (SDL's Linux
     * default, which on a display without a GPU costs a software-GL upload
     * and draw of the whole window every frame: 18 ms of an unchanged frame
     * at 1280x800 on Xvfb, against 3 ms); and draw calls are queued and run
     * together (SDL batches only when no driver was asked for by name). */
    SDL_SetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION, "0");
    SDL_SetHint(SDL_HINT_RENDER_BATCHING, "1");
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        rc = fail(LSIM_ENODISPLAY, "SDL cannot open a window", SDL_GetError());
        SDL_Quit();
        return rc;
    }
    struct view_load first = w.ld;
    memset(&w.ld, 0, sizeof w.ld);
    w.w = o->width > 0 ? o->width : 1280;
    w.h = o->height > 0 ? o->height : 800;
    /* Not larger than the screen: 1280x800 on a 1280x720 projector would
     * put the title off it. A size asked for (--width, --height) is kept. */
    SDL_Rect usable;
    if (SDL_GetDisplayUsableBounds(0, &usable) == 0 && usable.w > 0 && usable.h > 0) {
        if (o->width <= 0 && w.w > usable.w) w.w = usable.w;
        if (o->height <= 0 && w.h > usable.h - 32) w.h = usable.h - 32 > 240 ? usable.h - 32 : 240; /* title bar */
    }
    if (TTF_Init() != 0) rc = fail(LSIM_EINTERNAL, "TTF_Init", TTF_GetError());
    if (!rc) rc = gfx_fonts_open(&w.fonts);
    if (!rc) rc = raster_fonts_open(&w.rfonts);
    if (!rc && !(w.win = SDL_CreateWindow("locksim view", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, w.w, w.h,
                                          SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI)))
        rc = fail(LSIM_ENODISPLAY, "SDL_CreateWindow", SDL_GetError());
    if (!rc && !(w.r = SDL_CreateRenderer(w.win, -1, SDL_RENDERER_TARGETTEXTURE)))
        rc = fail(LSIM_EINTERNAL, "SDL_CreateRenderer", SDL_GetError());
    if (!rc && gl_in_software(w.r)) { /* SDL's own software renderer is faster */
        SDL_DestroyRenderer(w.r);
        if (!(w.r = SDL_CreateRenderer(w.win, -1, SDL_RENDERER_SOFTWARE | SDL_RENDERER_TARGETTEXTURE)))
            rc = fail(LSIM_EINTERNAL, "SDL_CreateRenderer", SDL_GetError());
    }
    if (!rc) SDL_GetRendererOutputSize(w.r, &w.w, &w.h);
    if (!rc) rc = take_load(&w, &first, 1);
    if (!rc) w.vs.show_all = o->show_all;
    if (!rc && o->bench_frames > 0) {
        rc = bench(&w, o->bench_frames);
        close_view(&w);
        return rc;
    }
    if (!rc) rc = draw(&w, 0);
    if (!rc && o->log) {
        fprintf(o->log, "view: ready\n");
        log_state(&w);
    }
    double last = now_s(), drawn = last;
    while (!rc && !w.quit) {
        SDL_Event e;
        int had = 0;
        while (SDL_PollEvent(&e)) {
            on_event(&w, &e);
            had = 1;
        }
        double now = now_s();
        if (w.vs.playing) viewstate_play(&w.vs, now - last);
        last = now;
        int reloads = w.reloads, status_on = w.status_until > SDL_GetTicks();
        poll_file(&w);
        int shot = w.shot_pending;
        w.shot_pending = 0;
        /* Nothing happened (no input, not playing, no reload, the status
         * line unchanged): the last frame stays on screen, not drawn again;
         * once a second it is, whatever may have been missed. */
        if (had || w.vs.playing || shot || w.reloads != reloads || w.scene_dirty || w.tex_dirty ||
            status_on != (w.status_until > SDL_GetTicks()) || status_on || now - drawn >= 1.0) {
            rc = draw(&w, shot);
            drawn = now;
        }
        log_state(&w);
        if (!had && !w.vs.playing) SDL_Delay(15);
        else SDL_Delay(1);
    }
    close_view(&w);
    return rc;
}
