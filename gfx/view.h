/* The window (`locksim view`): the timeline of one or more kept traces in an
 * SDL2 window, drawn by the same code as the PNG (gfx/sdl_paint.h), driven
 * by the keyboard and the mouse; the state and its arithmetic live in
 * render/viewstate.h. The window knows traces only: the front end runs the
 * scenario, re-runs it when the file changes and writes screenshots through
 * the host callbacks below. */
#ifndef LOCKSIM_VIEW_H
#define LOCKSIM_VIEW_H

#include <stddef.h>
#include <stdio.h>

#include "scenario.h"
#include "scene.h"
#include "trace.h"

/* What a load hands the window: n traces (one panel each) and their
 * banners, borrowed until the next successful load or the end of
 * gfx_view_run. */
struct view_load {
    size_t n;
    const struct trace *const *trs;
    const struct scene_banner *banners;
    const struct scenario *scn; /* the first panel's scenario, its knobs (NULL: none); borrowed as trs */
    char error[640];            /* when a load fails: "file:line:col: message" */
};

#define VIEW_WATCH_MAX 8 /* files watched for changes: path and also */

struct view_host {
    void *ctx;
    const char *path; /* the scenario file whose changes reload the window (the
                         host may change what it holds: see edit); NULL = none */
    /* more files whose changes reload the window too (view A.lsim B.lsim:
     * B.lsim), nalso of them, at most VIEW_WATCH_MAX - 1 */
    const char *const *also;
    int nalso;
    /* Run the scenario (again). On success fill *out and return 0; on
     * failure return an LSIM code with out->error, the previous load staying
     * valid. */
    int (*load)(void *ctx, struct view_load *out);
    /* Open path for a screenshot (*f to write to), then close it: ok = 1
     * commits the file, ok = 0 abandons it (err may be NULL then). Return 0
     * or an LSIM code with a sentence in err. */
    int (*shot_open)(void *ctx, const char *path, FILE **f, char *err, size_t errlen);
    int (*shot_close)(void *ctx, int ok, char *err, size_t errlen);
    /* Break it by clicking: add line (a fault at true time at, in the
     * scenario language) to the scenario as it is now, among its timed lines
     * in time order, save that as a new file in dir (NULL: the
     * current folder; never over a file that exists, never over the
     * scenario), and load and watch that file from now on (path then names
     * it); *saved: its path. undo goes back to the file before the last
     * edit (1), or returns 0 when there is none. Both may be NULL (the
     * window then does not offer them). edit returns 0 or an LSIM code with
     * a sentence in err. */
    int (*edit)(void *ctx, const char *line, sim_ns at, const char *dir, char *saved, size_t savedlen, char *err,
                size_t errlen);
    int (*undo)(void *ctx);
    /* A knob turned: the scenario as it is now with its `param NAME=...`
     * line's value replaced by value, saved, loaded and watched as edit
     * does (undo goes back); a --set NAME= of the command line no longer
     * applies. NULL: the window offers no knobs. Returns as edit. */
    int (*set_param)(void *ctx, const char *name, const char *value, const char *dir, char *saved, size_t savedlen,
                     char *err, size_t errlen);
};

struct view_opts {
    int quiz;              /* stop before decisive events and ask */
    int show_all;          /* 1 = the whole run at once (--show-all), not revealed as it plays */
    const char *shots_dir; /* screenshots go here (--shots); NULL = the current folder */
    int width, height;     /* window size at start (0 = 1280 x 800) */
    int scale_pct;         /* text scale, percent (0: from the screen, viewmodel_scale_for_screen) */
    FILE *log;             /* not NULL: one state line per change, for tests */
    int bench_frames;      /* > 0: draw that many frames of each of six kinds
                          (zoomed out, panning, zooming, zoomed in, a
                          cursor step, nothing new), print their median, p95
                          and worst times and the peak RSS, and return */
};

/* Open the window and run until it is closed. Returns 0, LSIM_ENODISPLAY
 * (no display: neither DISPLAY nor WAYLAND_DISPLAY nor SDL_VIDEODRIVER is
 * set, or SDL cannot open video; gfx_error() says which), the load's code
 * when the first load fails, or LSIM_ENOMEM / LSIM_EINTERNAL / LSIM_ENOINPUT
 * (a font missing) with gfx_error(). */
int gfx_view_run(const struct view_host *h, const struct view_opts *o);

#endif
