/* Viewmodel: the live demo's behaviour, once for every front end (the SDL2
 * window, gfx/view.c, and the web page, web/web_api.c). On top of the
 * viewstate's arithmetic it keeps each panel's layout as the run stood at
 * the cursor and its banner ("running" until the run is decided), builds
 * the stacked scenes for a width, says each stop in a sentence, writes the
 * status line, paints the overlays (cursor, quiz veil, the current event's
 * frame) with paint.h's primitives, and maps key names to commands with the
 * help that lists them. A front end feeds it input and paints what it built;
 * it knows neither SDL nor the browser. */
#ifndef LOCKSIM_VIEWMODEL_H
#define LOCKSIM_VIEWMODEL_H

#include <stddef.h>

#include "layout.h"
#include "paint.h"
#include "scenario.h"
#include "scene.h"
#include "trace.h"
#include "viewstate.h"

/* The narration history: the last sentences, the current one bright. */
#define VIEWMODEL_NARR_LINES 3

/* ---- Text scale ----
 * Every size of the live view from one scale, in percent: 100 is the
 * PNG's 18 px text; Ctrl+= and Ctrl+- step it by VIEWMODEL_SCALE_STEP
 * between VIEWMODEL_SCALE_MIN and VIEWMODEL_SCALE_MAX, Ctrl+0 resets it. */
#define VIEWMODEL_SCALE_MIN 75
#define VIEWMODEL_SCALE_MAX 300
#define VIEWMODEL_SCALE_STEP 25
struct viewmodel_sizes {
    int scale_pct;         /* what they were made for, clamped */
    int text_px, title_px; /* font sizes, pixels (18 and 26 at 100) */
    int char_w;            /* a character's advance, rounded up (11 at 100) */
    int line_h, lane_h;    /* a line of text, a lane row (26, 40 at 100) */
    int margin, pad;       /* the scenes' border, the bars' left padding */
    int narr_h;            /* the bar under the scenes: knobs, narration and status lines */
};
/* The sizes at scale_pct (clamped to the limits). */
void viewmodel_sizes(int scale_pct, struct viewmodel_sizes *out);
int viewmodel_scale_clamp(int pct);
/* The scale one step up (dir > 0) or down (dir < 0) from pct, to the next
 * multiple of the step, within the limits; dir = 0: 100. */
int viewmodel_scale_step(int pct, int dir);
/* The scale a window opens with on a screen screen_h pixels tall with a
 * vertical dpi of vdpi (0: unknown): 720 lines or 96 dpi are 100, 1080
 * lines 150, 1440 lines 200, whichever is larger, in steps, 100 at least. */
int viewmodel_scale_for_screen(int screen_h, double vdpi);
/* The largest scale up to pct (in steps, VIEWMODEL_SCALE_MIN at least) whose
 * bar under the scenes (narr_h) takes at most a third of a window win_h
 * pixels tall: the timeline keeps two thirds (3.0 on 1080 lines would leave
 * it 60 %, 2.25 is the most there). */
int viewmodel_scale_fit(int pct, int win_h);
/* scene_view_pixels(v, width, 0) with the sizes of sz. */
void viewmodel_scene_view(const struct viewmodel_sizes *sz, struct scene_view *v, int width);

/* ---- Knobs ----
 * A scenario's `param NAME=VALUE range=MIN..MAX` lines, turned in the
 * window (k picks one, < and > turn it a step) or by the page's sliders;
 * the front end runs the scenario again with the new value (same seed). */
#define VIEWMODEL_KNOBS_MAX 16
#define VIEWMODEL_KNOB_STEPS 50 /* a step is about a 50th of the range */
enum { VIEWMODEL_KNOB_DURATION = 'd', VIEWMODEL_KNOB_INT = 'i' };
struct viewmodel_knob {
    char name[SCN_OPT_MAX];
    char value[SCN_OPT_MAX]; /* as the scenario language writes it: "27s" */
    char orig[SCN_OPT_MAX];  /* its value when the view first had it (viewmodel_set_knobs keeps it) */
    int kind;                /* VIEWMODEL_KNOB_DURATION: min, max, cur, step in ns; _INT: units */
    int64_t min, max, cur;
    int64_t step; /* one key press: the range / VIEWMODEL_KNOB_STEPS rounded to 1, 2 or 5 x 10^k, >= 1 */
    int sign;     /* 1: a duration written with its sign ("+10s", a clock step's), and so written back */
};
/* The knobs of scn (its params with a range and a value that reads as one,
 * a --set override included), up to max, in the file's order: their
 * number. scn may be NULL (none). */
int viewmodel_knobs_of(const struct scenario *scn, struct viewmodel_knob *out, int max);
/* Set k to v, clamped to its range, and its value text: 1 when it changed. */
int viewmodel_knob_set(struct viewmodel_knob *k, int64_t v);
/* One step up (dir > 0) or down: 1 when it moved, 0 at the end of its range. */
int viewmodel_knob_turn(struct viewmodel_knob *k, int dir);
/* The scenario text (len bytes) with the value of its line `param NAME=...`
 * replaced by value, the rest byte for byte: *out (NUL-terminated, freed by
 * the caller with free) of *outlen bytes, and 0; -1 when no such line is
 * there, LSIM_ENOMEM. */
int viewmodel_param_edit(const char *text, size_t len, const char *name, const char *value, char **out, size_t *outlen);

struct viewmodel {
    struct viewstate vs;
    /* the current load, borrowed until the next one */
    size_t n;
    const struct trace *const *trs;
    const struct scene_banner *banners; /* NULL: no banners */
    /* owned, n each: the revealed layouts, their indexes, what each was built
     * for (its first rev_nev events, cut at rev_until) and its banner as shown */
    struct layout *lys;
    struct scene_lod **lods;
    size_t *rev_nev;
    sim_ns *rev_until;
    struct scene_banner *rev_banners;
    char (*decided_by)[400];
    int decided_all; /* every panel's verdict is shown */
    /* owned, nsc scenes, stacked, built in sv for built_w x built_h */
    struct scene *scs;
    size_t nsc;
    struct scene_view sv;
    int content_h; /* height of the stacked scenes */
    int dirty;     /* the scenes must be built again */
    int built_w, built_h;
    sim_ns built_t0, built_t1;
    struct viewmodel_sizes sz; /* the text scale's sizes (scale_pct 0: not set, 100 is taken) */
    /* the scenario's knobs (viewmodel_set_knobs), the one k picks, and the
     * one a key turned that the front end has not taken yet (-1: none) */
    struct viewmodel_knob knobs[VIEWMODEL_KNOBS_MAX];
    int nknobs, knob_sel, knob_turned;
};

/* Take n traces and their banners (borrowed until the next load or close):
 * first = 1 starts at the beginning (quiz mode as asked), else the cursor
 * and window are kept where they still fit (a reload). Returns 0 or
 * LSIM_ENOMEM (vm as before). Close with viewmodel_close, also a zeroed vm. */
int viewmodel_load(struct viewmodel *vm, const struct trace *const *trs, const struct scene_banner *banners, size_t n,
                   int first, int quiz);
void viewmodel_close(struct viewmodel *vm);
/* Take scn's knobs (copied; scn may be NULL), keeping the one picked and
 * each knob's orig value of the knobs before of the same name. */
void viewmodel_set_knobs(struct viewmodel *vm, const struct scenario *scn);
/* The knob a key turned since the last call (its index in vm->knobs, its
 * new value there), or -1; the front end runs the scenario with it. */
int viewmodel_knob_taken(struct viewmodel *vm);
/* The knobs in one line: "knobs (k next, < > turn):  [pause=25s (was 27s)]
 * ttl=30s", the picked one in brackets, a changed one with its orig value;
 * "" when there are none. */
void viewmodel_knobs_line(const struct viewmodel *vm, char *out, size_t n);
/* Scale the scenes to scale_pct (viewmodel_sizes; rebuilt at the next update). */
void viewmodel_set_scale(struct viewmodel *vm, int scale_pct);

/* Bring the scenes up to date for an area width pixels wide, of which
 * avail_h are free above the narration: each panel revealed to the cursor,
 * the banners, and the stack built again when anything changed (drawn with
 * lanes a line of text tall when the panels do not fit). Returns 1 when the
 * scenes were built again (paint them), 0 when they are as they were, or a
 * negative LSIM_E* code. */
int viewmodel_update(struct viewmodel *vm, int width, int avail_h);
/* Paint every panel's scene with ops, moved down by dy pixels (a scroll). */
int viewmodel_paint(const struct viewmodel *vm, const struct paint_ops *ops, void *ctx, int dy);
/* Over the painted scenes: the cursor (a line and a marker over the lanes),
 * in quiz mode the veil over what has not happened yet, and a frame around
 * the current event's symbol. Uses ops->box and ops->line only. */
int viewmodel_paint_overlays(const struct viewmodel *vm, const struct paint_ops *ops, void *ctx, int dy);

/* The sentence of stop k ("t=31s  B acquires the lock ..."; k = -1: the
 * start), times as the run's own resolution shows them. */
void viewmodel_narrate(const struct viewmodel *vm, long k, char *out, size_t n);
/* The narration history to show: up to VIEWMODEL_NARR_LINES lines, the
 * oldest first, stop indexes in ks[] (-2 = an empty line); *current is the
 * line that is the current stop, or -1. Returns the number of lines. */
int viewmodel_history(const struct viewmodel *vm, long ks[VIEWMODEL_NARR_LINES], int *current);
/* The status line: "paused 3 s/s  t=31s  window 0s..60s  HINT  [quiz]". */
void viewmodel_status(const struct viewmodel *vm, char *out, size_t n, const char *hint);
/* Events drawn now, over all panels. */
size_t viewmodel_revealed(const struct viewmodel *vm);

/* The trace event under pixel (x, y) of the scenes (y in scene rows) with
 * its tooltip in tip: its seq, or -1 when there is none. */
long viewmodel_hit(const struct viewmodel *vm, int x, int y, char *tip, size_t n);
/* True time under column x of the first panel. */
sim_ns viewmodel_t_at(const struct viewmodel *vm, int x);
/* 1 when (x, y) is on a panel's time axis (where a drag scrubs). */
int viewmodel_on_axis(const struct viewmodel *vm, int x, int y);

/* ---- Break it by clicking ----
 * A click on a node's lane makes a fault there, as a line of the scenario
 * language that the front end adds to the scenario and runs again: a pause
 * of half the run (rounded to 1, 2, 3 or 5 x 10^k: 30s in a 60 s run, long
 * enough to outlive a lease of the run's scale), a crash, a restart (of a
 * node crashed before: the parser refuses it otherwise, saying why), or a
 * step of the node's clock forward or back by that same half-run size. */
enum viewmodel_fault {
    VIEWMODEL_FAULT_PAUSE,
    VIEWMODEL_FAULT_CRASH,
    VIEWMODEL_FAULT_RESTART,   /* "@T restart NODE" */
    VIEWMODEL_FAULT_CLOCK_FWD, /* "@T clock NODE step +D" */
    VIEWMODEL_FAULT_CLOCK_BACK /* "@T clock NODE step -D" */
};
/* The fault line for a click at (x, y) of the scenes ("@12.3s pause A 30s",
 * the time under x rounded to 100 ms, at least 1 ms before the run's end)
 * into out, its time into *at (may be NULL), and 0; -1 (out "") when (x, y)
 * is on no node's lane or off the time axis. */
int viewmodel_fault_line(const struct viewmodel *vm, int x, int y, int fault, char *out, size_t n, sim_ns *at);
/* A right drag along a lane, pressed at column x_from on row y and let go
 * at x_to: the fault as viewmodel_fault_line makes it, but a pause (or a
 * clock step) as long as the stretch dragged over ("@12.3s pause A 4.5s",
 * from the earlier end, in 100 ms steps, at least 100 ms). A drag shorter
 * than VIEWMODEL_DRAG_MIN_PX is a click. Crashes and restarts ignore the
 * drag's length. */
#define VIEWMODEL_DRAG_MIN_PX 6
int viewmodel_fault_drag(const struct viewmodel *vm, int x_from, int x_to, int y, int fault, char *out, size_t n,
                         sim_ns *at);

/* A drag from one lane to another at column x cuts the first node off
 * from the other's side: "@12.3s partition A | B S1 S2" names every other
 * node of the panel (up to 32), so no node is left in a third group (time
 * as viewmodel_fault_line rounds it); a click that starts and ends on one
 * lane heals every link:
 * "@12.3s heal". 0 and the line in out, its time in *at (may be NULL); -1
 * (out "") when y_from is on no node's lane, or y_to on none or another
 * panel's. */
int viewmodel_link_line(const struct viewmodel *vm, int x, int y_from, int y_to, char *out, size_t n, sim_ns *at);

/* ---- Commands and keys ---- */
enum viewmodel_cmd {
    VIEWMODEL_NONE,
    VIEWMODEL_PLAY, /* play / pause (at the end: from the start) */
    VIEWMODEL_SLOWER,
    VIEWMODEL_FASTER,
    VIEWMODEL_NEXT, /* next event */
    VIEWMODEL_PREV,
    VIEWMODEL_HOME,
    VIEWMODEL_END,
    VIEWMODEL_ZOOM_IN, /* 2x around the cursor */
    VIEWMODEL_ZOOM_OUT,
    VIEWMODEL_FIT,
    VIEWMODEL_VIOLATION, /* the next violation, zoomed */
    VIEWMODEL_SHOW_ALL,  /* the whole run at once / as it plays */
    VIEWMODEL_HISTORY_BACK,
    VIEWMODEL_HISTORY_FWD,
    VIEWMODEL_REVEAL,    /* the quiz's answer */
    VIEWMODEL_KNOB_NEXT, /* pick the next knob */
    VIEWMODEL_KNOB_DOWN, /* turn the picked knob a step down / up (see viewmodel_knob_taken) */
    VIEWMODEL_KNOB_UP,
    VIEWMODEL_CMD_COUNT
};
/* Do cmd. Returns 1 when the view changed. */
int viewmodel_do(struct viewmodel *vm, int cmd);
/* The command of a key by name, as SDL (SDL_GetKeyName: "Right", "Space",
 * "Keypad +") or a browser (KeyboardEvent.key: "ArrowRight", " ", "+")
 * names it, case-insensitive; VIEWMODEL_NONE for a key it does not bind. */
int viewmodel_key(const char *name);
/* The help: line i of the keys every front end has ("space        play /
 * pause"), NULL past the last. */
const char *viewmodel_help_line(int i);

#endif
