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
#include "viewmodel.h"
#include "viewstate.h"

/* Window chrome (not the timeline's look, which is the palette's). */
static const struct palette_rgb ui_bar = {34, 34, 34}, ui_text = {255, 255, 255}, ui_dim = {200, 200, 200},
                                ui_mark = {240, 228, 66}, /* Okabe-Ito yellow */
        ui_error = {160, 30, 30}, ui_panel = {250, 250, 250};

/* Sizes from the text scale (viewmodel_sizes): a line of the window's own
 * text, and the bar under the scenes (the knobs, the history, the status). */
#define LINE_H (w->vm.sz.line_h)
#define NARR_H (w->vm.sz.narr_h)
#define PAD (w->vm.sz.pad)

struct view {
    const struct view_host *host;
    const struct view_opts *o;
    SDL_Window *win;
    SDL_Renderer *r;
    SDL_Texture *tex; /* the painted scenes at the window's size */
    int tex_w, tex_h;
    struct gfx_fonts fonts;     /* SDL2_ttf: the overlays' text */
    struct raster_fonts rfonts; /* FreeType: the scenes' text, as the PNG's */
    struct view_load ld;        /* the current load (borrowed from the host) */
    struct viewmodel vm;        /* what is revealed, the scenes, the words, the keys */
    int shot_pending;           /* s pressed: write the next frame */
    int w, h;                   /* window size */
    int scroll;                 /* vertical scroll of the scenes, pixels */
    int tex_dirty;
    int help, fullscreen, quit;
    int scale0;        /* the text scale the window opened with (Ctrl+0 returns to it) */
    int fatal;         /* an LSIM code that ends the window (the fonts at a new scale failed) */
    char error[700];   /* a failed reload, shown in the window */
    char status[4600]; /* a passing message (screenshot written, a fault added) */
    Uint32 status_until;
    int mx, my; /* mouse */
    int drag;   /* 0 none, 1 pan, 2 scrub */
    int drag_x;
    int cut_x, cut_y;            /* a middle-button press on a lane (-1: none): its release cuts a link */
    int brk_x, brk_y, brk_fault; /* a right-button press (-1: none): its release adds the fault */
    sim_ns drag_t0;
    struct timespec mtime[VIEW_WATCH_MAX]; /* of the scenario files: path, then also */
    off_t msize[VIEW_WATCH_MAX];
    Uint32 last_poll;
    int reloads;
    long hover; /* the trace event under the mouse (its tooltip shown), -1 none */
    char last_log[600];
    struct gfx_text_line narr_line[VIEWMODEL_NARR_LINES + 2]; /* the narration bar's lines, kept */
};

static int fail(int code, const char *what, const char *detail) { return gfx_fail(code, what, detail); }

/* ---- scenes ------------------------------------------------------------------- */

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
    for (size_t i = 0; i < w->vm.nsc && !rc; i++) rc = raster_paint(&img, &w->rfonts, &w->vm.scs[i], &w->vm.sv);
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

/* The stamps of every watched file: host->path, then host->also. */
static void stamp_all(const struct view_host *h, struct timespec t[VIEW_WATCH_MAX], off_t size[VIEW_WATCH_MAX]) {
    file_stamp(h->path, &t[0], &size[0]);
    for (int i = 1; i < VIEW_WATCH_MAX; i++)
        file_stamp(h->also && i - 1 < h->nalso ? h->also[i - 1] : NULL, &t[i], &size[i]);
}

/* A new load: its layouts built, the old ones freed only when all are. */
static int take_load(struct view *w, const struct view_load *ld, int first) {
    int rc = viewmodel_load(&w->vm, ld->trs, ld->banners, ld->n, first, w->o->quiz);
    if (rc) return fail(rc, "out of memory", NULL);
    viewmodel_set_knobs(&w->vm, w->host->set_param ? ld->scn : NULL);
    w->ld = *ld;
    return 0;
}

/* Run the scenario again (its file changed, or an edit made a new one). */
static void reload(struct view *w) {
    stamp_all(w->host, w->mtime, w->msize);
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

static void poll_file(struct view *w) {
    Uint32 now = SDL_GetTicks();
    if (!w->host->path || now - w->last_poll < 250) return;
    w->last_poll = now;
    struct timespec t[VIEW_WATCH_MAX];
    off_t size[VIEW_WATCH_MAX];
    stamp_all(w->host, t, size);
    for (int i = 0; i < VIEW_WATCH_MAX; i++)
        if (t[i].tv_sec != w->mtime[i].tv_sec || t[i].tv_nsec != w->mtime[i].tv_nsec || size[i] != w->msize[i]) {
            reload(w);
            return;
        }
}

static void say(struct view *w, const char *s) {
    snprintf(w->status, sizeof w->status, "%s", s);
    w->status_until = SDL_GetTicks() + 5000;
    if (w->o->log) {
        fprintf(w->o->log, "view: %s\n", s);
        fflush(w->o->log);
    }
}

/* A fault line added to the scenario as a new file, and the run played again. */
static void add_line(struct view *w, const char *line, sim_ns at) {
    char saved[4200], err[600], s[sizeof saved + 300];
    if (w->host->edit(w->host->ctx, line, at, w->o->shots_dir, saved, sizeof saved, err, sizeof err) != 0) {
        snprintf(s, sizeof s, "not added: %s", err);
        say(w, s);
        return;
    }
    reload(w);
    snprintf(s, sizeof s, "added %s (saved as %s; u undoes)", line, saved);
    say(w, s);
}

/* A knob turned (k picks, < > turn): its param's new value written into
 * the scenario as a new file, and the run played again with the same seed;
 * the cursor and the window stay where they were (a reload keeps them). */
static void turn_knob(struct view *w, int i) {
    const struct viewmodel_knob *k = &w->vm.knobs[i];
    char name[sizeof k->name], value[sizeof k->value], saved[4200], err[600], s[sizeof saved + 400];
    snprintf(name, sizeof name, "%s", k->name);
    snprintf(value, sizeof value, "%s", k->value);
    if (w->host->set_param(w->host->ctx, name, value, w->o->shots_dir, saved, sizeof saved, err, sizeof err) != 0) {
        snprintf(s, sizeof s, "not changed: %s", err);
        say(w, s);
        reload(w); /* the knobs as the file has them again */
        return;
    }
    reload(w);
    snprintf(s, sizeof s, "%s=%s, same seed: saved as %s (u undoes)", name, value, saved);
    say(w, s);
}

/* Break it by clicking: the fault a right click at (x, y) makes (click_fault:
 * its modifiers), or a right drag along the lane from x to x_to (a pause as
 * long as the stretch dragged over), added to the scenario as a new file,
 * and the run played again. */
static void break_at(struct view *w, int x, int x_to, int y, int fault) {
    char line[160];
    sim_ns at;
    if (viewmodel_fault_drag(&w->vm, x, x_to, y + w->scroll, fault, line, sizeof line, &at) != 0) {
        say(w, "right-click a client's or a server's lane to pause it there (shift: crash, ctrl: restart, "
               "alt: clock step +, alt+shift: clock step -)");
        return;
    }
    add_line(w, line, at);
}

/* Partition by dragging: the middle button pressed on one lane and let go
 * on another cuts the link between the two nodes; let go on the same lane,
 * it heals every link. Added and played again as break_at does. */
static void link_at(struct view *w, int x, int y_from, int y_to) {
    char line[160];
    sim_ns at;
    if (viewmodel_link_line(&w->vm, x, y_from + w->scroll, y_to + w->scroll, line, sizeof line, &at) != 0) {
        say(w, "drag with the middle button from one node's lane to another's to cut their link (a click: heal)");
        return;
    }
    add_line(w, line, at);
}

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

/* ---- text scale ---------------------------------------------------------------- */

/* Every size from scale pct (viewmodel_sizes): the fonts opened again at
 * theirs, the scenes built again, scrolled back to the top. */
static int set_scale(struct view *w, int pct) {
    viewmodel_set_scale(&w->vm, pct);
    gfx_fonts_close(&w->fonts);
    raster_fonts_close(&w->rfonts);
    for (int i = 0; i < VIEWMODEL_NARR_LINES + 2; i++) gfx_text_line_close(&w->narr_line[i]);
    int rc = gfx_fonts_open_px(&w->fonts, w->vm.sz.text_px, w->vm.sz.title_px);
    if (!rc) rc = raster_fonts_open_px(&w->rfonts, w->vm.sz.text_px, w->vm.sz.title_px);
    w->scroll = 0;
    w->tex_dirty = 1;
    return rc;
}

/* ---- overlays ----------------------------------------------------------------- */

static void text(struct view *w, int x, int y, const char *s, int bold, struct palette_rgb c) {
    gfx_paint_text(w->r, &w->fonts, x, y, LINE_H, s, PALETTE_TEXT_PX, bold, c);
}


/* The overlays through paint.h's primitives, on the renderer. */
static int ov_box(void *c, int x, int y, int bw, int bh, struct palette_rgb k) {
    return gfx_paint_box(c, x, y, bw, bh, k);
}
static int ov_line(void *c, int x0, int y0, int x1, int y1, int width, struct palette_rgb k) {
    return gfx_paint_line(c, x0, y0, x1, y1, width, k);
}
static const struct paint_ops overlay_ops = {ov_box, NULL, ov_line, NULL, NULL, NULL};

static void frame_box(struct view *w, int x, int y, int bw, int bh, struct palette_rgb fill) {
    gfx_paint_box(w->r, x - 2, y - 2, bw + 4, bh + 4, palette_outline);
    gfx_paint_box(w->r, x, y, bw, bh, fill);
}

/* The open question, or the answer of the one just revealed (while the
 * cursor stays on it), with the right choice marked. */
static void draw_question(struct view *w) {
    long at = viewstate_asking(&w->vm.vs);
    int answered = 0;
    if (at < 0 && w->vm.vs.quiz && viewstate_cur(&w->vm.vs) >= 0 &&
        (w->vm.vs.ev[viewstate_cur(&w->vm.vs)].flags & VIEWSTATE_REVEALED)) {
        at = viewstate_cur(&w->vm.vs);
        answered = 1;
    }
    if (at < 0) return;
    const struct viewstate_event *e = &w->vm.vs.ev[at];
    char q[300], ch[3][96];
    int answer = 0;
    int n = viewstate_question(e, w->vm.trs[e->panel], q, sizeof q, ch, &answer);
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
    text(w, x + 16, y + 8 + LINE_H * (2 + n), answered ? "Right or space goes on." : "Press r (or Enter) to reveal.", 1,
         palette_look(SCENE_ST_ALERT)->ink);
}

/* The narration history (every stop passed, none skipped: the last
 * VIEWMODEL_NARR_LINES, scrollable with Up and Down), the current one
 * bright, then the status line. */
static void draw_narration(struct view *w) {
    int y = w->h - NARR_H;
    gfx_paint_box(w->r, 0, y, w->w, NARR_H, ui_bar);
    char kl[1200];
    viewmodel_knobs_line(&w->vm, kl, sizeof kl);
    gfx_paint_text_line(w->r, &w->fonts, &w->narr_line[VIEWMODEL_NARR_LINES + 1], PAD, y + 4, LINE_H, kl,
                        PALETTE_TEXT_PX, 0, ui_mark);
    y += LINE_H;
    long ks[VIEWMODEL_NARR_LINES];
    int current;
    viewmodel_history(&w->vm, ks, &current);
    for (int r = 0; r < VIEWMODEL_NARR_LINES; r++) {
        char s[600] = "";
        if (ks[r] != -2) viewmodel_narrate(&w->vm, ks[r], s, sizeof s);
        gfx_paint_text_line(w->r, &w->fonts, &w->narr_line[r], PAD, y + 4 + LINE_H * r, LINE_H, s, PALETTE_TEXT_PX,
                            r == current, r == current ? ui_text : ui_dim);
    }
    char s[400];
    const char *st = w->status_until > SDL_GetTicks()  ? w->status
                     : w->vm.content_h > w->h - NARR_H ? "? help  PgDn/PgUp: more below"
                                                       : "";
    viewmodel_status(&w->vm, s, sizeof s, st);
    gfx_paint_text_line(w->r, &w->fonts, &w->narr_line[VIEWMODEL_NARR_LINES], PAD,
                        y + 8 + LINE_H * VIEWMODEL_NARR_LINES, LINE_H, s, PALETTE_TEXT_PX, 0, ui_dim);
}

static void draw_hover(struct view *w) {
    w->hover = -1;
    if (w->drag || w->my >= w->h - NARR_H) return;
    char tip[256];
    long seq = viewmodel_hit(&w->vm, w->mx, w->my + w->scroll, tip, sizeof tip);
    if (seq < 0 && !tip[0]) return;
    int tw = gfx_text_width(&w->fonts, tip, PALETTE_TEXT_PX, 0) + 16;
    int x = w->mx + 14, y = w->my + 18;
    if (x + tw > w->w) x = w->w - tw - 4;
    if (x < 0) x = 0;
    if (y + LINE_H + 4 > w->h - NARR_H) y = w->my - LINE_H - 12;
    frame_box(w, x, y, tw, LINE_H + 4, ui_panel);
    text(w, x + 8, y + 2, tip, 0, palette_outline);
    w->hover = seq;
}

/* The window's own keys, under the ones every front end has (viewmodel_help_line). */
static const char *const window_help[] = {
        "drag on the time axis: scrub      drag elsewhere: pan",
        "right-click a lane: pause that node there (shift: crash it), saved as a new file; u undoes",
        "  right-drag along a lane: a pause as long as the stretch dragged over",
        "  ctrl+right-click: restart a crashed node; alt: step its clock forward (alt+shift: back)",
        "  middle-drag from a lane to another: cut their link (a middle click: heal every link)",
        "s            screenshot (locksim-shot-N.png in the current folder, or --shots DIR)",
        "Ctrl+=  Ctrl+-  Ctrl+0   text scale bigger / smaller / as it opened",
        "PgUp PgDn    scroll panels        F11  full screen",
        "? F1         this help            q  Esc  quit",
        "The window reloads when a scenario file changes on disk.",
};

static void draw_help(struct view *w) {
    int common = 0, own = (int)(sizeof window_help / sizeof window_help[0]);
    while (viewmodel_help_line(common)) common++;
    int n = common + own;
    int most = w->vm.sz.char_w * 96, bw = w->w - 160 < most ? w->w - 160 : most, bh = LINE_H * (n + 2);
    int x = (w->w - bw) / 2, y = (w->h - NARR_H - bh) / 2;
    if (y < 8) y = 8;
    frame_box(w, x, y, bw, bh, ui_panel);
    text(w, x + 16, y + 8, "locksim view: keys", 1, palette_outline);
    for (int i = 0; i < n; i++)
        text(w, x + 16, y + 8 + LINE_H * (i + 1), i < common ? viewmodel_help_line(i) : window_help[i - common], 0,
             palette_outline);
}

static void draw_error(struct view *w) {
    if (!w->error[0]) return;
    /* the message wrapped at the window's width, three lines at most */
    int per = (w->w - 24) / (w->vm.sv.char_w > 0 ? w->vm.sv.char_w : 11), n = 0;
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
    int rc = viewmodel_update(&w->vm, w->w, w->h - NARR_H);
    if (rc < 0) return fail(rc, "out of memory", NULL);
    if (rc > 0) w->tex_dirty = 1;
    rc = w->tex_dirty ? paint_texture(w) : 0;
    if (rc) return rc;
    if (w->tex_w != w->w || w->tex_h != w->h) { /* else the texture covers the window */
        SDL_SetRenderDrawColor(w->r, palette_background.r, palette_background.g, palette_background.b, 255);
        SDL_RenderClear(w->r);
    }
    SDL_RenderCopy(w->r, w->tex, NULL, NULL);
    viewmodel_paint_overlays(&w->vm, &overlay_ops, w->r, -w->scroll);
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
    size_t revealed = viewmodel_revealed(&w->vm); /* events drawn, all panels */
    const char *kind = "-", *qkind = "-";
    if (viewstate_cur(&w->vm.vs) >= 0) {
        const struct viewstate_event *e = &w->vm.vs.ev[viewstate_cur(&w->vm.vs)];
        kind = trace_kind_name(w->vm.trs[e->panel]->ev[e->seq].kind);
    }
    if (viewstate_asking(&w->vm.vs) >= 0) {
        const struct viewstate_event *e = &w->vm.vs.ev[viewstate_asking(&w->vm.vs)];
        qkind = trace_kind_name(w->vm.trs[e->panel]->ev[e->seq].kind);
    }
    snprintf(line, sizeof line,
             "view: cur=%ld kind=%s cursor=%lld t0=%lld t1=%lld playing=%d speed=%d question=%ld "
             "question_kind=%s panels=%zu reloads=%d error=%d help=%d hover=%ld fullscreen=%d size=%dx%d "
             "show_all=%d revealed=%zu decided=%d scale=%d knob=%s verdict=%s",
             viewstate_cur(&w->vm.vs), kind, (long long)w->vm.vs.cursor, (long long)w->vm.vs.t0, (long long)w->vm.vs.t1,
             w->vm.vs.playing, w->vm.vs.speed, viewstate_asking(&w->vm.vs), qkind, w->ld.n, w->reloads,
             w->error[0] != 0, w->help, w->hover, w->fullscreen, w->w, w->h, w->vm.vs.show_all, revealed,
             w->vm.decided_all, w->vm.sz.scale_pct,
             w->vm.knob_sel < w->vm.nknobs ? w->vm.knobs[w->vm.knob_sel].name : "-",
             w->ld.n && w->ld.banners && w->ld.banners[0].report ? scn_verdict_name(w->ld.banners[0].report->verdict)
                                                                 : "-");
    if (strcmp(line, w->last_log) != 0) {
        snprintf(w->last_log, sizeof w->last_log, "%s", line);
        fprintf(w->o->log, "%s\n", line);
        fflush(w->o->log);
    }
}

static void scroll_by(struct view *w, int dy) {
    int max = w->vm.content_h - (w->h - NARR_H);
    w->scroll += dy;
    if (w->scroll > max) w->scroll = max;
    if (w->scroll < 0) w->scroll = 0;
    w->tex_dirty = 1;
}

/* The window's own keys here; the rest by name through the view model,
 * as the web page does. */
static void on_key(struct view *w, const SDL_KeyboardEvent *k) {
    SDL_Keycode c = k->keysym.sym;
    int shift = (k->keysym.mod & KMOD_SHIFT) != 0;
    if (w->help && c != SDLK_F11 && c != SDLK_s) { /* any key closes the help */
        w->help = 0;
        if (c == SDLK_ESCAPE || c == SDLK_QUESTION || c == SDLK_F1 || (c == SDLK_SLASH && shift)) return;
    }
    if (k->keysym.mod & KMOD_CTRL) { /* the text scale: Ctrl+= (or +) bigger, Ctrl+- smaller, Ctrl+0 as it opened */
        int pct = -1;
        if (c == SDLK_EQUALS || c == SDLK_PLUS || c == SDLK_KP_PLUS) pct = viewmodel_scale_step(w->vm.sz.scale_pct, 1);
        if (c == SDLK_MINUS || c == SDLK_KP_MINUS) pct = viewmodel_scale_step(w->vm.sz.scale_pct, -1);
        if (c == SDLK_0 || c == SDLK_KP_0) pct = w->scale0;
        if (pct >= 0) pct = viewmodel_scale_fit(pct, w->h);
        if (pct >= 0) {
            char s[80];
            w->fatal = set_scale(w, pct); /* a font gone since the start: gfx_error() says which */
            snprintf(s, sizeof s, "text scale %d.%02d (Ctrl+= Ctrl+- Ctrl+0)", pct / 100, pct % 100);
            say(w, s);
            return;
        }
    }
    /* < and > turn the picked knob: shift+comma and shift+period on a US
     * layout, a key of their own on others (SDL's names "<", ">") */
    const char *name = SDL_GetKeyName(c);
    if (shift && c == SDLK_COMMA) name = "<";
    if (shift && c == SDLK_PERIOD) name = ">";
    if (viewmodel_key(name) == VIEWMODEL_KNOB_DOWN || viewmodel_key(name) == VIEWMODEL_KNOB_UP) {
        if (!w->vm.nknobs) say(w, "no knobs: this scenario has no `param NAME=VALUE range=MIN..MAX` line");
        else if (!viewmodel_do(&w->vm, viewmodel_key(name))) say(w, "the knob is at the end of its range");
        int i = viewmodel_knob_taken(&w->vm);
        if (i >= 0) turn_knob(w, i);
        return;
    }
    switch (c) {
    case SDLK_s: w->shot_pending = 1; break;
    case SDLK_F1:
    case SDLK_QUESTION: w->help = 1; break;
    case SDLK_SLASH:
        if (shift) w->help = 1;
        break;
    case SDLK_PAGEDOWN: scroll_by(w, (w->h - NARR_H) / 2); break;
    case SDLK_PAGEUP: scroll_by(w, -(w->h - NARR_H) / 2); break;
    case SDLK_F11:
        w->fullscreen = !w->fullscreen;
        SDL_SetWindowFullscreen(w->win, w->fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0);
        break;
    case SDLK_q:
    case SDLK_ESCAPE: w->quit = 1; break;
    case SDLK_u:
        if (w->host->undo && w->host->undo(w->host->ctx)) {
            reload(w);
            char s[4300];
            snprintf(s, sizeof s, "undone: back to %s", w->host->path);
            say(w, s);
        } else say(w, "nothing to undo");
        break;
    default: viewmodel_do(&w->vm, viewmodel_key(name)); break;
    }
}

/* The fault of a right click by its modifiers: none a pause, shift a crash,
 * ctrl a restart, alt a clock step forward (alt+shift: back). */
static int click_fault(SDL_Keymod m) {
    if (m & KMOD_ALT) return (m & KMOD_SHIFT) ? VIEWMODEL_FAULT_CLOCK_BACK : VIEWMODEL_FAULT_CLOCK_FWD;
    if (m & KMOD_CTRL) return VIEWMODEL_FAULT_RESTART;
    return (m & KMOD_SHIFT) ? VIEWMODEL_FAULT_CRASH : VIEWMODEL_FAULT_PAUSE;
}

static void on_event(struct view *w, const SDL_Event *e) {
    switch (e->type) {
    case SDL_QUIT: w->quit = 1; break;
    case SDL_KEYDOWN: on_key(w, &e->key); break;
    case SDL_WINDOWEVENT:
        if (e->window.event == SDL_WINDOWEVENT_SIZE_CHANGED || e->window.event == SDL_WINDOWEVENT_RESIZED) {
            SDL_GetRendererOutputSize(w->r, &w->w, &w->h);
            w->vm.dirty = 1;
            /* smaller: the text too, if its bar would take more than a third */
            if (viewmodel_scale_fit(w->vm.sz.scale_pct, w->h) < w->vm.sz.scale_pct)
                w->fatal = set_scale(w, viewmodel_scale_fit(w->vm.sz.scale_pct, w->h));
        }
        if (e->window.event == SDL_WINDOWEVENT_EXPOSED) w->tex_dirty = 1;
        break;
    case SDL_MOUSEWHEEL: {
        int y = e->wheel.y;
        if (SDL_GetModState() & KMOD_SHIFT) scroll_by(w, -y * 60);
        else if (y) viewstate_zoom(&w->vm.vs, y > 0 ? 1.25 : 0.8, viewmodel_t_at(&w->vm, w->mx));
        break;
    }
    case SDL_MOUSEBUTTONDOWN:
        if (e->button.button == SDL_BUTTON_RIGHT && e->button.y < w->h - NARR_H && w->host->edit) {
            w->brk_x = e->button.x; /* decided on release: a click, or a drag along the lane */
            w->brk_y = e->button.y;
            w->brk_fault = click_fault(SDL_GetModState());
        }
        if (e->button.button == SDL_BUTTON_MIDDLE && e->button.y < w->h - NARR_H && w->host->edit) {
            w->cut_x = e->button.x;
            w->cut_y = e->button.y;
        }
        if (e->button.button == SDL_BUTTON_LEFT && e->button.y < w->h - NARR_H) {
            w->drag = viewmodel_on_axis(&w->vm, e->button.x, e->button.y + w->scroll) ? 2 : 1;
            w->drag_x = e->button.x;
            w->drag_t0 = w->vm.vs.t0;
            if (w->drag == 2) {
                w->vm.vs.playing = 0;
                viewstate_seek(&w->vm.vs, viewmodel_t_at(&w->vm, e->button.x));
            }
        }
        break;
    case SDL_MOUSEBUTTONUP:
        w->drag = 0;
        if (e->button.button == SDL_BUTTON_MIDDLE && w->cut_x >= 0 && w->host->edit)
            link_at(w, w->cut_x, w->cut_y, e->button.y);
        if (e->button.button == SDL_BUTTON_RIGHT && w->brk_x >= 0 && w->host->edit)
            break_at(w, w->brk_x, e->button.x, w->brk_y, w->brk_fault);
        if (e->button.button == SDL_BUTTON_RIGHT) w->brk_x = -1;
        w->cut_x = -1;
        break;
    case SDL_MOUSEMOTION:
        w->mx = e->motion.x;
        w->my = e->motion.y;
        if (w->drag == 2) viewstate_seek(&w->vm.vs, viewmodel_t_at(&w->vm, w->mx));
        else if (w->drag == 1 && w->vm.nsc) {
            const struct scene *sc = &w->vm.scs[0];
            double ns_per_px = (double)(w->vm.vs.t1 - w->vm.vs.t0) / (sc->plot_w > 0 ? sc->plot_w : 1);
            sim_ns want = w->drag_t0 - (sim_ns)((w->mx - w->drag_x) * ns_per_px);
            viewstate_pan(&w->vm.vs, want - w->vm.vs.t0);
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
    struct viewstate *vs = &w->vm.vs;
    sim_ns run = vs->t_end > 0 ? vs->t_end : 1;
    double px_ns = (double)(vs->t1 - vs->t0) / (w->vm.nsc && w->vm.scs[0].plot_w > 0 ? w->vm.scs[0].plot_w : 1000);
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
    default: /* nothing new but the mouse: texture, overlays, present */ w->mx = i % 100; break;
    }
    double a = now_s(), b = a, c = a, cpu0 = cpu_s();
    int rc = 0;
    rc = viewmodel_update(&w->vm, w->w, w->h - NARR_H);
    b = c = now_s();
    if (rc < 0) return fail(rc, "out of memory", NULL);
    if (rc > 0) {
        rc = paint_texture(w);
        c = now_s();
    }
    if (!rc) rc = draw(w, 0);
    if (rc) return rc;
    bs->ms[i] = (now_s() - a) * 1e3;
    bs->cpu_ms[i] = (cpu_s() - cpu0) * 1e3;
    bs->scene_ms += (b - a) * 1e3;
    bs->paint_ms += (c - b) * 1e3;
    bs->cmds = 0;
    for (size_t p = 0; p < w->vm.nsc; p++) bs->cmds += w->vm.scs[p].ncmd;
    return 0;
}

static int bench(struct view *w, int frames) {
    static const char *const names[6] = {
            "zoomed out, a new window each frame", "zoomed out (90 %), panning 4 px a frame",
            "zooming in and out, 8 % a frame",     "zoomed in (1/1000 of the run), panning",
            "a cursor step (scene kept)",          "nothing new (mouse moved)"};
    size_t events = 0, lod_bytes = 0;
    for (size_t p = 0; p < w->ld.n; p++) events += w->vm.trs[p]->len;
    for (size_t p = 0; w->vm.lods && p < w->vm.n; p++) lod_bytes += scene_lod_bytes(w->vm.lods[p]);
    SDL_RendererInfo ri;
    if (SDL_GetRendererInfo(w->r, &ri) != 0) ri.name = "?";
    const char *fa = SDL_GetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION);
    printf("view bench: %zu events, %dx%d, renderer %s%s%s, %d frames of each kind\n", events, w->w, w->h, ri.name,
           strcmp(ri.name, "software") ? "" : ", framebuffer acceleration ",
           strcmp(ri.name, "software") ? "" : (fa ? fa : "(SDL's default)"), frames);
    printf("  %-42s %8s %8s %8s %8s %10s %10s %8s\n", "frame", "median", "p95", "worst", "cpu", "scene_build",
           "painting", "commands");
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
        printf("  %-42s %5.2f ms %5.2f ms %5.2f ms %5.2f ms %7.2f ms %7.2f ms %8zu\n", names[kind], ms[frames / 2],
               ms[i95 < 0 ? 0 : i95], ms[frames - 1], cpu[frames / 2], bs.scene_ms / frames, bs.paint_ms / frames,
               bs.cmds);
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
    viewmodel_close(&w->vm);
    gfx_fonts_close(&w->fonts);
    raster_fonts_close(&w->rfonts);
    for (int i = 0; i < VIEWMODEL_NARR_LINES + 2; i++) gfx_text_line_close(&w->narr_line[i]);
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
    w.hover = -1;
    w.cut_x = -1;
    w.brk_x = -1;
    /* the first load before any window: a malformed file fails at once */
    int rc = h->load(h->ctx, &w.ld);
    if (rc) return fail(rc, w.ld.error[0] ? w.ld.error : lsim_strerror(rc), NULL);
    stamp_all(h, w.mtime, w.msize);
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
    /* The text scale: asked for (--scale), else from the screen's height
     * and dpi (a 1920x1080 projector: 1.5, 27 px text) */
    SDL_Rect screen;
    float vdpi = 0;
    if (SDL_GetDisplayDPI(0, NULL, NULL, &vdpi) != 0) vdpi = 0;
    w.scale0 = o->scale_pct > 0
                       ? viewmodel_scale_clamp(o->scale_pct)
                       : viewmodel_scale_for_screen(SDL_GetDisplayBounds(0, &screen) == 0 ? screen.h : 0, vdpi);
    viewmodel_sizes(w.scale0, &w.vm.sz);
    /* 1280 x 800 at the text scale (the scenes as much room as at 1.0) */
    w.w = o->width > 0 ? o->width : 1280 * w.scale0 / 100;
    w.h = o->height > 0 ? o->height : 800 * w.scale0 / 100;
    /* Not larger than the screen: 1280x800 on a 1280x720 projector would
     * put the title off it. A size asked for (--width, --height) is kept. */
    SDL_Rect usable;
    if (SDL_GetDisplayUsableBounds(0, &usable) == 0 && usable.w > 0 && usable.h > 0) {
        if (o->width <= 0 && w.w > usable.w) w.w = usable.w;
        if (o->height <= 0 && w.h > usable.h - 32) w.h = usable.h - 32 > 240 ? usable.h - 32 : 240; /* title bar */
    }
    if (TTF_Init() != 0) rc = fail(LSIM_EINTERNAL, "TTF_Init", TTF_GetError());
    if (!rc) rc = gfx_fonts_open_px(&w.fonts, w.vm.sz.text_px, w.vm.sz.title_px);
    if (!rc) rc = raster_fonts_open_px(&w.rfonts, w.vm.sz.text_px, w.vm.sz.title_px);
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
    if (!rc && viewmodel_scale_fit(w.scale0, w.h) < w.scale0) { /* the bar a third of the window at most */
        w.scale0 = viewmodel_scale_fit(w.scale0, w.h);
        rc = set_scale(&w, w.scale0);
    }
    if (!rc) rc = take_load(&w, &first, 1);
    if (!rc) w.vm.vs.show_all = o->show_all;
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
        if ((rc = w.fatal) != 0) break;
        double now = now_s();
        if (w.vm.vs.playing) viewstate_play(&w.vm.vs, now - last);
        last = now;
        int reloads = w.reloads, status_on = w.status_until > SDL_GetTicks();
        poll_file(&w);
        int shot = w.shot_pending;
        w.shot_pending = 0;
        /* Nothing happened (no input, not playing, no reload, the status
         * line unchanged): the last frame stays on screen, not drawn again;
         * once a second it is, whatever may have been missed. */
        if (had || w.vm.vs.playing || shot || w.reloads != reloads || w.vm.dirty || w.tex_dirty ||
            status_on != (w.status_until > SDL_GetTicks()) || status_on || now - drawn >= 1.0) {
            rc = draw(&w, shot);
            drawn = now;
        }
        log_state(&w);
        if (!had && !w.vm.vs.playing) SDL_Delay(15);
        else SDL_Delay(1);
    }
    close_view(&w);
    return rc;
}
