/* Scene: what to draw for a layout in a view, as a list of draw commands
 * (rectangles, lines, symbol cells, text) with semantic styles and no colour,
 * in the manner of rxi/microui's command list. Lane order, which writes are
 * annotated, the legend and which mark wins a shared cell are decided here
 * once; the terminal, SVG and PNG backends only walk the list. */
#ifndef LOCKSIM_SCENE_H
#define LOCKSIM_SCENE_H

#include <stddef.h>
#include <stdint.h>

#include "checker.h"
#include "layout.h"
#include "vtime.h"

/* What a command shows. A backend picks colour, pattern and font from it. */
enum scene_style {
    SCENE_ST_TEXT,           /* plain text: "time", legend text, accepted write lines */
    SCENE_ST_AXIS,           /* tick labels and tick marks */
    SCENE_ST_LABEL,          /* a lane's name */
    SCENE_ST_LEGEND,         /* legend frame and captions */
    SCENE_ST_ACQUIRING,      /* client waiting for the lock */
    SCENE_ST_HOLDING,        /* client in the critical section */
    SCENE_ST_PAUSED_HOLDING, /* in the critical section but paused */
    SCENE_ST_PAUSED,         /* paused (hatched in pictures) */
    SCENE_ST_CRASHED,        /* down */
    SCENE_ST_LEASE,          /* lease valid as a server sees it */
    SCENE_ST_DOUBLE,         /* two clients in the critical section at once */
    SCENE_ST_ALERT,          /* text about a double entry */
    SCENE_ST_MARK_OK,        /* acquire, release */
    SCENE_ST_MARK_WARN,      /* lost, gave up, expiry, skip, clock step, operator */
    SCENE_ST_MARK_BAD,       /* crash, release of another's lock */
    SCENE_ST_MARK_SERVER,    /* grant, renew, delete, keep */
    SCENE_ST_MARK_NOTE,      /* read, accepted write, restart */
    SCENE_ST_STALE_WRITE,    /* a stale write the resource accepted: the damage */
    SCENE_ST_WRITE_REJECTED, /* a write fencing refused: the save */
    SCENE_ST_BANNER,         /* banner text: title, algorithm, seed, replay */
    SCENE_ST_SAFE,           /* verdict SAFE */
    SCENE_ST_UNSAFE,         /* verdict UNSAFE */
    SCENE_ST_STUCK,          /* verdict STUCK (or any other verdict) */
    SCENE_ST_GRID,           /* faint lines: lane separators, tick guides */
    SCENE_ST_TITLE,          /* the banner's title */
    SCENE_ST_BAND,           /* a double entry shaded across the lanes, behind them */
    SCENE_ST_MESSAGE,        /* a message in flight long enough to see: an arrow */
    SCENE_ST_GAP,            /* a shortened idle stretch of a compressed axis */
    SCENE_ST_CLOCK,          /* a node's clock against true time, its steps' labels */
    SCENE_ST_DROP,           /* a message dropped on its way: an arrow ending in a cross */
    SCENE_ST_REPLICATION,    /* a grant copied from a primary to a replica, with its lag */
    SCENE_ST_PARTITION,      /* a network partition in force: the NETWORK row */
    SCENE_ST_LEADER,         /* a server leading a replicated lock service: a band, its term */
    SCENE_ST_LOCK_DELAY,     /* a lock withheld after its holder failed (lock-delay): a band */
    SCENE_ST_COUNT
};

/* The symbol of a cell or a fill, in legend order (the terminal's glyphs). */
enum scene_sym {
    SCENE_SYM_NONE,
    SCENE_SYM_ACQUIRING,
    SCENE_SYM_HOLDING,
    SCENE_SYM_PAUSED_HOLDING,
    SCENE_SYM_PAUSED,
    SCENE_SYM_CRASHED,
    SCENE_SYM_LEASE,
    SCENE_SYM_ACQUIRED,
    SCENE_SYM_RELEASE,
    SCENE_SYM_LOST,
    SCENE_SYM_FAILED,
    SCENE_SYM_WRONG_RELEASE,
    SCENE_SYM_GRANT,
    SCENE_SYM_RENEW,
    SCENE_SYM_EXPIRE,
    SCENE_SYM_DELETE,
    SCENE_SYM_KEEP,
    SCENE_SYM_REPL_COPY,
    SCENE_SYM_REPL_DROP,
    SCENE_SYM_READ,
    SCENE_SYM_WRITE_OK,
    SCENE_SYM_WRITE_REJECTED,
    SCENE_SYM_SKIP,
    SCENE_SYM_CLOCK,
    SCENE_SYM_CONTROL,
    SCENE_SYM_CRASH,
    SCENE_SYM_RESTART,
    SCENE_SYM_DOUBLE,
    SCENE_SYM_PARTITION, /* the terminal's NETWORK row (pictures hatch it by style) */
    SCENE_SYM_COUNT
};

/* The terminal's character for a symbol (' ' for NONE), and the legend's
 * words for it ("" for NONE). Static strings. */
char scene_sym_char(int sym);
const char *scene_sym_text(int sym);
/* The style a symbol has when nothing overrides it. */
int scene_sym_style(int sym);
/* Short stable names ("holding", "stale-write") for tests and debugging. */
const char *scene_style_name(int style);

enum scene_cmd_type {
    SCENE_CMD_RECT, /* x, y, w, h; sym = fill symbol; frac0/frac1 taper it */
    SCENE_CMD_LINE, /* x, y to x2, y2; MESSAGE, DROP (ends in a cross) and
                        REPLICATION styles: an arrow, text = its tooltip */
    SCENE_CMD_SYM,  /* one symbol cell at x, y, w wide and h high */
    SCENE_CMD_TEXT, /* text with its top-left corner at x, y; w = its width */
};

/* Where a command belongs. Within a layer, the list is in drawing order. */
enum scene_layer {
    SCENE_LAYER_BACK,  /* behind the lanes: double-entry bands across lanes */
    SCENE_LAYER_MAIN,  /* everything a text terminal shows */
    SCENE_LAYER_EXTRA, /* pixel-only detail over the lanes: token labels on
                          spans and writes, TTL bars, the banner */
};

struct scene_cmd {
    uint8_t type;             /* enum scene_cmd_type */
    uint8_t style;            /* enum scene_style */
    uint8_t sym;              /* enum scene_sym: RECT fill, SYM symbol; else NONE */
    uint8_t layer;            /* enum scene_layer */
    int x, y, w, h;           /* backend units; RECT/SYM: box; TEXT: top-left, w = chars * char_w */
    int x2, y2;               /* LINE: end point; SYM: x2 = the event's own x (a
                          badge may sit beside it so as not to cover another) */
    uint16_t frac0, frac1;    /* RECT: height kept at the left and right ends, per
                              mille of h, bottom-aligned (1000/1000 = plain
                              box; 1000/0 = a bar running out) */
    int lane;                 /* layout lane it belongs to, or -1 */
    int32_t seq;              /* SYM: the trace event it shows (layout_mark.seq), or -1 */
    sim_ns t0, t1;            /* true time it shows (RECT: interval; SYM: t0 = t1) */
    const char *text;         /* TEXT: the text; SYM: a tooltip ("B acquires, token
                          42, t=31s") or NULL. Owned by the scene. */
    const char *label;        /* SYM in pictures: what its badge shows instead of the
                          symbol's character (a write's token), or NULL. Owned. */
    uint8_t minor;            /* SYM: 1 = drawn as a tick only, its badge would cover
                          a more important one's */
    size_t text_at, label_at; /* private: offsets in the scene's storage + 1 */
};

/* A level-of-detail index of one layout, for windows over a long trace:
 * per lane, the largest span end up to each span (so a window finds its
 * spans by binary search) and, for a lane of more than 4096 spans and marks,
 * the run cut into SCENE_LOD_BUCKETS buckets, each with the interval flags
 * of the spans that touch it and the mark that wins it, summed pairwise
 * into a pyramid up to the whole run; per message block, the longest
 * flight (so that a zoomed-out window skips the blocks too short to draw)
 * and per lane whether it has copies to replicas. scene_build uses the
 * buckets when a cell spans at least 4 of them on a linear axis: what is
 * smaller than a pixel is merged, a pixel column costing the O(log) pyramid
 * nodes over its buckets instead of its events. Build once per layout; the
 * layout must outlive it. */
#define SCENE_LOD_BUCKETS 65536
struct scene_lod;
/* Returns 0 or LSIM_ENOMEM (*out NULL). Free with scene_lod_free (NULL is a no-op). */
int scene_lod_build(struct scene_lod **out, const struct layout *ly);
void scene_lod_free(struct scene_lod *lod);
/* Bytes it holds. */
size_t scene_lod_bytes(const struct scene_lod *lod);

/* The window and canvas to draw a layout into. */
struct scene_view {
    sim_ns t0, t1;                  /* true-time window shown; t1 <= t0 (e.g. 0/0) = the whole run */
    int width;                      /* canvas width, backend units (terminal: columns) */
    int height;                     /* canvas height, units; 0 = as tall as the content */
    int char_w;                     /* width of one character, units (terminal 1) */
    int line_h;                     /* height of a text line, units (terminal 1) */
    int lane_h;                     /* height of a lane row, units (terminal 1) */
    int cell_w;                     /* width of one time cell, units (terminal 1, pixels 1) */
    int margin;                     /* blank border around everything, units (terminal 0) */
    int min_tick_chars;             /* at least this many characters between ticks (terminal 8) */
    const char *cell_name;          /* the legend's "1 column = 10s" ("column"); NULL =
                          no such line and no "(a marker hides ...)" note */
    int label_chars;                /* at least this many characters of lane labels (0 = fit
                          the names); stacked panels share one to share the axis */
    uint64_t hide;                  /* bit i set: lane i is not shown (lanes >= 64 always are) */
    int compressed;                 /* 1 = idle stretches (no event for a fifth of the window)
                          shrink to a marked gap labelled with its length */
    unsigned flags;                 /* SCENE_F_* */
    const struct scene_lod *lod;    /* NULL, or the index of the layout drawn
                          (borrowed; scene_build_panels ignores it) */
    const unsigned char *also_used; /* NULL, or SCENE_USED_N flags (a scene's
                          used[]) the legend lists as well: stacked panels
                          built one at a time share the last one's legend */
    int max_clients;                /* 0 = every client's lane; else at most this many, the
                          others named in one row ("+ 2980 more clients, not
                          drawn: C21 .. C3000"): a picture of a set height
                          with thousands of clients (scene_build_panels) */
    int reveal;                     /* 1 = draw the run as it stood at reveal_ns (`render
                          --at`): the backends that take traces build each
                          panel's layout with layout_build_prefix(tr,
                          layout_events_until(tr, reveal_ns), reveal_ns) */
    sim_ns reveal_ns;
    const struct layout *whole; /* NULL, or the whole run's layouts of a revealed picture
                          (nwhole, borrowed: scene_build_traces sets them):
                          the compressed axis's gaps and the label column
                          come from them, so every slide of a story has the
                          same axis, the first as the last */
    size_t nwhole;
};

/* The layout a backend draws for tr in view v: the whole run, or with
 * v->reveal what had happened by v->reveal_ns. Returns 0 or -1 (out of
 * memory), as layout_build. */
int scene_layout_for(struct layout *out, const struct trace *tr, const struct scene_view *v);
/* Where the whole run's window ends in view v (a little after the last
 * event with SCENE_F_FIT, else the run's end): the window a revealed
 * picture keeps, so that every slide of a story has the same axis.
 * Returns 0 or -1 (out of memory). */
int scene_run_end(const struct trace *tr, const struct scene_view *v, sim_ns *out);

enum {
    SCENE_F_LEGEND = 1,   /* the legend under the chart */
    SCENE_F_BANDS = 2,    /* BACK layer: double entries shaded from the first lane to
                              the double-entry row, tick guides, compressed gaps */
    SCENE_F_DETAIL = 4,   /* EXTRA layer: token labels, TTL bars, who holds a lease */
    SCENE_F_TIPS = 8,     /* tooltips on symbols */
    SCENE_F_STRETCH = 16, /* the axis fills the width (any ns per cell, ticks
                              still round); else cells are round (1, 2, 5 x 10^k) */
    SCENE_F_FIT = 32,     /* the whole-run window ends a little after the last
                              event instead of at the end of the run */
    SCENE_F_ARROWS = 64,  /* messages whose flight is at least two characters
                              wide on the axis, dropped messages and copies to
                              replicas, as arrows (EXTRA layer) */
};

/* A scene's used[]: one flag per symbol drawn in a lane, then these. */
enum {
    SCENE_USED_STALE = SCENE_SYM_COUNT, /* a stale write accepted */
    SCENE_USED_CLOCK,                   /* a clock lane */
    SCENE_USED_DROP,                    /* a dropped message */
    SCENE_USED_REPL,                    /* a copy to a replica */
    SCENE_USED_LEADER,                  /* a leader's band */
    SCENE_USED_LOCK_DELAY,              /* a lock-delay's band */
    SCENE_USED_N
};

/* The verdict banner over a picture: the caller fills it. All borrowed for
 * the duration of scene_build; NULL strings are left out. */
struct scene_banner {
    const char *status;                  /* NULL, or shown in place of the verdict
                                             while the run is still going ("running"),
                                             with the headline's line saying so */
    const char *decided_by;              /* NULL, or shown in place of the headline
                                             (which may tell of what comes later) when
                                             the run is shown before its end: the event
                                             that decided the verdict, in words */
    const char *title;                   /* scenario title */
    const char *algo;                    /* algorithm name */
    const char *seed;                    /* seed as text */
    const char *replay;                  /* the command that replays the run */
    const char *note;                    /* NULL, or a line drawn as it is under the
                                             headline (a recorded run: what it was
                                             recorded against, at what scale) */
    const struct checker_report *report; /* verdict and counts; NULL = no verdict */
};

/* The terminal's view: width columns, everything 1 unit, legend as asked. */
void scene_view_term(struct scene_view *v, int width, int legend);
/* A picture's view: width x height pixels, 18 px text in 11 x 26 px cells
 * (DejaVu Sans Mono at 18 px), 40 px lanes, 16 px margins, every flag on,
 * a compressed axis. With SCENE_F_DETAIL, a node whose clock steps, drifts
 * or slews gets a 30 px lane under its own: its wall clock minus true time,
 * a jump drawn as a jump and labelled ("+25s"). */
void scene_view_pixels(struct scene_view *v, int width, int height);

#define SCENE_MAX_GAPS 8

/* An idle stretch of a compressed axis: true time [t0, t1] drawn in cells
 * c0 .. c0 + ncells - 1. */
struct scene_gap {
    sim_ns t0, t1;
    int c0, ncells;
};

/* A built scene: the commands and the storage behind them. */
struct scene {
    struct scene_cmd *cmd; /* owned, ncmd commands in drawing order (BACK, MAIN, EXTRA) */
    size_t ncmd, capcmd;
    char *text; /* owned storage behind cmd[].text */
    size_t ntext, captext;
    int width, height;                     /* extent used, units (height includes every line) */
    int plot_x, plot_w;                    /* the time axis: x of its first cell, its width in units */
    sim_ns t0, t1;                         /* the window actually shown (true ns) */
    struct layout_axis axis;               /* fitted to t1 - t0 (less the gaps); without gaps
                               cell c shows t0 + [c, c+1) * cell_ns */
    struct scene_gap gaps[SCENE_MAX_GAPS]; /* compressed axis: the gaps, in time order */
    int ngaps;
    int err;                          /* first error while building (LSIM_ENOMEM), else 0 */
    unsigned char used[SCENE_USED_N]; /* symbols drawn in lanes, then
                              SCENE_USED_*: what the legend lists */
};

/* Build the commands for ly (borrowed, read only; the scene keeps no
 * pointer into it) in view v. b may be NULL (no banner); when given, the
 * banner heads the picture. y0 offsets every command (for stacked panels).
 * Returns 0, LSIM_ENOMEM or LSIM_EBAD_VALUE (a view that cannot hold the
 * lane labels and one cell); on error the scene holds what was built so far
 * and must still be closed. Close with scene_close, also safe on a zeroed scene. */
int scene_build(struct scene *sc, const struct layout *ly, const struct scene_view *v, const struct scene_banner *b,
                int y0);
void scene_close(struct scene *sc);

/* Several layouts stacked in one scene, panel i under panel i - 1, all on
 * one time axis: the window (when v's is 0/0) runs to the latest t_end (or
 * fitted end, SCENE_F_FIT), a compressed axis has the gaps idle in every
 * panel, and
 * the label column is as wide as the widest panel needs. banners is NULL or
 * n banners (one per panel). One legend closes the stack, when v
 * asks for one, listing what any panel shows. Returns as scene_build does. */
int scene_build_panels(struct scene *sc, const struct layout *lys, size_t n, const struct scene_view *v,
                       const struct scene_banner *banners);

/* scene_build_panels of n traces (borrowed): each panel's layout made
 * with scene_layout_for, and with v->reveal the whole run's as well, for
 * the axis (v->whole). What the SVG and PNG backends draw. Returns as
 * scene_build does (LSIM_ENOMEM for a layout). */
int scene_build_traces(struct scene *sc, const struct trace *const *trs, size_t n, const struct scene_view *v,
                       const struct scene_banner *banners);

/* The tooltip a SYM command k of a lane would carry with SCENE_F_TIPS ("B
 * acquires, token 42, t=31s"), made from ly (the layout the scene was built
 * from) into buf (n bytes, truncated): a window builds its scenes without
 * tooltips and makes only the one under the mouse. Returns 0, or -1 (buf
 * "") when k is not a lane's symbol of ly. */
int scene_sym_tooltip(char *buf, size_t n, const struct layout *ly, const struct scene_cmd *k);

/* The x of true time t in a built scene (clamped to the plot), and its cell. */
int scene_x_of(const struct scene *sc, sim_ns t);
int scene_cell_of(const struct scene *sc, sim_ns t);

#endif
