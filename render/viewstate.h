/* Viewstate: the window's state and arithmetic without SDL, so it is tested
 * as a plain module (tests/test_viewstate.c): the events a cursor steps over
 * (from the kept traces, exact because a run is deterministic), the time
 * window (zoom, pan, fit), play at a speed, the next violation and how far to
 * zoom to see it, the quiz's stop points and questions, and hit-testing a
 * built scene for hover. gfx/view.c draws and feeds it SDL's events. */
#ifndef LOCKSIM_VIEWSTATE_H
#define LOCKSIM_VIEWSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "checker.h"
#include "scene.h"
#include "trace.h"
#include "vtime.h"

enum viewstate_flag {
    VIEWSTATE_VIOLATION = 1, /* a double entry begins, a stale write is accepted,
                                a release removes another's lock */
    VIEWSTATE_DECISIVE = 2,  /* a quiz stop: a grant after an expiry, a late write */
    VIEWSTATE_REVEALED = 4,  /* its quiz question was answered */
};

enum viewstate_quiz {
    VIEWSTATE_QUIZ_NONE,
    VIEWSTATE_QUIZ_GRANT,      /* a server grants the lock after the holder's lease expired */
    VIEWSTATE_QUIZ_LATE_WRITE, /* a write of a client that lost the lock reaches the resource */
};

/* One stop of the cursor: a trace event worth a sentence. */
struct viewstate_event {
    sim_ns t;       /* true time */
    uint32_t seq;   /* index in its trace's ev[] */
    uint16_t panel; /* which trace (0 .. npanels - 1) */
    uint8_t flags;  /* VIEWSTATE_* */
    uint8_t quiz;   /* enum viewstate_quiz */
    sim_ns span_ns; /* a double entry: how long it lasts (0 = an instant) */
};

struct viewstate {
    struct viewstate_event *ev; /* owned, nev stops ordered by (t, panel, seq) */
    size_t nev;
    int npanels;
    sim_ns t_end;   /* the latest end of the panels' runs */
    sim_ns t0, t1;  /* the window shown, t0 < t1 */
    sim_ns cursor;  /* the time cursor */
    long cur1;      /* the current stop's ev index + 1, 0 = before the first
                       (so a zeroed struct is a valid empty state); read it
                       with viewstate_cur */
    int playing;    /* 1 = the cursor moves with the wall clock */
    int speed;      /* play rate = t_end / 20 s, times 2^speed */
    int quiz;       /* 1 = stop before decisive events and ask */
    long question1; /* ev index + 1 of the open question, 0 = none; read it
                       with viewstate_asking */
    int show_all;   /* 1 = the whole run drawn whatever the cursor (`view
                            --show-all`, key a); 0 = revealed as it plays */
    long narr_back; /* the narration history scrolled back this many
                            stops from the current one (0 = follows it) */
    sim_ns tick_ns; /* what times finer than the ms round to (viewstate_time_text) */
};

/* The narrowest window zoom goes to: a 1 ns double entry is then tens of
 * pixels wide on a 1280-pixel plot. */
#define VIEWSTATE_MIN_WINDOW_NS 40

/* Build the stops of n traces (borrowed while vs is used; kept traces: ev[]
 * filled). The window is the whole run, the cursor at 0, no stop current.
 * Returns 0 or LSIM_ENOMEM. Close with viewstate_close (also on a zeroed vs). */
int viewstate_init(struct viewstate *vs, const struct trace *const *trs, size_t n, int quiz);
void viewstate_close(struct viewstate *vs);
/* The same traces re-run (a reload): new stops, the window and the cursor
 * kept where they still fit. Returns 0 or LSIM_ENOMEM (vs is then as before). */
int viewstate_reload(struct viewstate *vs, const struct trace *const *trs, size_t n);

/* The current stop's ev index, -1 before the first (and on a zeroed vs). */
static inline long viewstate_cur(const struct viewstate *vs) {
    return vs->cur1 > 0 && (size_t)vs->cur1 <= vs->nev ? vs->cur1 - 1 : -1;
}
/* The ev index of the open quiz question, -1 when none is open. */
static inline long viewstate_asking(const struct viewstate *vs) {
    return vs->question1 > 0 && (size_t)vs->question1 <= vs->nev ? vs->question1 - 1 : -1;
}

/* Step to the next (dir > 0) or previous (dir < 0) stop; the window follows
 * the cursor when it leaves it. In quiz mode a step onto an unrevealed
 * decisive stop opens its question instead. Returns 1 when it moved (or
 * opened a question), 0 at either end. */
int viewstate_step(struct viewstate *vs, int dir);
/* Jump to the start (before every stop) or to the last stop. */
void viewstate_home(struct viewstate *vs);
void viewstate_end(struct viewstate *vs);
/* Put the cursor at t (clamped to the run); the current stop becomes the
 * last one at or before t. */
void viewstate_seek(struct viewstate *vs, sim_ns t);
/* Play for wall_s seconds: the cursor advances at the play rate, stopping at
 * the end, and in quiz mode just before an unrevealed decisive stop (its
 * question opens, play pauses). Returns 1 when a question opened. */
int viewstate_play(struct viewstate *vs, double wall_s);
/* True nanoseconds per wall second at the current speed. */
double viewstate_rate(const struct viewstate *vs);
/* Answer the open question: the cursor moves onto its stop. 0, or -1 when
 * no question is open. */
int viewstate_reveal(struct viewstate *vs);

/* Zoom by factor (> 1 in, < 1 out) keeping time anchor where it is on
 * screen; the window stays inside [0, t_end] and at least
 * VIEWSTATE_MIN_WINDOW_NS wide. */
void viewstate_zoom(struct viewstate *vs, double factor, sim_ns anchor);
/* Move the window by dt (clamped to the run). */
void viewstate_pan(struct viewstate *vs, sim_ns dt);
/* The whole run. */
void viewstate_fit(struct viewstate *vs);
/* The window [t0, t1] (a shared link's view), kept inside the run and at
 * least VIEWSTATE_MIN_WINDOW_NS wide as zoom and pan keep it. */
void viewstate_window(struct viewstate *vs, sim_ns t0, sim_ns t1);
/* The next violation after the current stop (wrapping to the first):
 * current stop and cursor there, the window zoomed so that it is plainly
 * visible (a double entry fills about an eighth of it). Returns 0, or -1
 * when the run has none. */
int viewstate_next_violation(struct viewstate *vs);

/* The quiz question of stop e of trace tr (borrowed): the question and
 * two or three choices (NUL-terminated, cut to fit), and which choice is
 * right (0-based). Returns the number of choices, 0 when e is not decisive. */
int viewstate_question(const struct viewstate_event *e, const struct trace *tr, char *q, size_t qn, char choices[3][96],
                       int *answer);

/* ---- Reveal as it plays ----
 * What of panel `panel` (its trace tr) is drawn now: its first *nev events,
 * its timeline cut at *until (where what is still open ends), or with
 * show_all the whole run (*nev = tr->len, *until = -1). On a stop, its
 * panel shows up to and with that stop's event, the panels before it in
 * stop order (t, panel, seq) everything of that instant, the ones after it
 * only what came before the instant; between stops (while playing) every
 * event at or before the cursor; before the first stop, nothing. While a
 * quiz question is open, its decisive event and everything after it stay
 * hidden (the question's panel up to the event before it, the others up to
 * the instant before): the answer never shows before it is asked for. */
void viewstate_revealed(const struct viewstate *vs, int panel, const struct trace *tr, size_t *nev, sim_ns *until);
/* 1 when the first nev events of tr decide the run's verdict (r: the
 * checker's report of the whole run): an UNSAFE run at its first violation
 * (a stale write accepted, a release of another's lock, or, where nothing
 * fences, a double entry), any run at its end. 0 while the banner should
 * say "running". */
int viewstate_decided(const struct trace *tr, const struct checker_report *r, size_t nev);
/* The index of the event that decides the verdict (as viewstate_decided
 * finds it) among the first nev events of tr, or -1 (none yet, or the run's
 * end decides). */
long viewstate_deciding_event(const struct trace *tr, const struct checker_report *r, size_t nev);

/* The banner of a panel drawn with its first nev events (b->report: the
 * whole run's): b->status "running" until the run is decided; decided
 * before its end, b->decided_by says by what ("UNSAFE at 31s: A and B are
 * both in the critical section ...", written into buf); at its end, the
 * verdict and its headline as a finished run shows them. */
void viewstate_banner(struct scene_banner *b, char *buf, size_t n, const struct trace *tr, size_t nev);

/* ---- Narration history ----
 * Every stop the cursor has passed is narrated, none skipped, however many
 * share an instant or fly by while playing: the history is the stops
 * 0 .. cur. The lines to show, at most max of them ending narr_back stops
 * before the current one: stops *from .. *to (inclusive; *to < *from when
 * there is none yet). */
void viewstate_history(const struct viewstate *vs, int max, long *from, long *to);
/* Scroll the history by dir stops (> 0 back into the past, < 0 towards the
 * present), clamped; a step or play follows the present again. */
void viewstate_history_scroll(struct viewstate *vs, long dir);

/* ---- Human times ----
 * A time as the scenario's own resolution shows it: exactly when it is
 * exact to the millisecond ("30.001s", "31s"), else rounded to vs->tick_ns,
 * a tenth of the smallest gap between distinct stop times as a power of ten
 * and at most 10 ms, so "26.648146015s" reads "26.65s" where nothing finer
 * matters. */
void viewstate_time_text(char *buf, size_t n, const struct viewstate *vs, sim_ns t);
/* The play speed as a teacher says it: simulated time per wall second
 * ("1 s/s", "0.1 s/s", "2 min/s", "500 ms/s"). */
void viewstate_speed_text(char *buf, size_t n, const struct viewstate *vs);

/* The cell width (scene_view.cell_w) that lets a window of window_ns fill
 * about plot_px pixels: a scene's cells are whole nanoseconds, so a window
 * narrower than the plot in ns gets cells several pixels wide (1 otherwise). */
int viewstate_cell_w(sim_ns window_ns, int plot_px);
/* A built scene's time at pixel column x (clamped to its window). */
sim_ns viewstate_t_of_x(const struct scene *sc, int x);
/* The symbol command of sc under (x, y) that has a tooltip, or that shows
 * a lane's event (its tooltip made on demand: scene_sym_tooltip), nearest
 * first; -1 when there is none. */
long viewstate_hit(const struct scene *sc, int x, int y);
/* The rows of sc's time axis (tick labels and marks): *y0 .. *y1. Returns
 * 0, or -1 when sc has no axis. */
int viewstate_axis_rows(const struct scene *sc, int *y0, int *y1);

#endif
