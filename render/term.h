/* Terminal timeline: draws a layout as text, one row per lane, on a
 * round-numbered true-time axis (the whole run or any window of it), with
 * write annotations, the double-entry row and a legend; what goes where is
 * the scene's (scene.h), this is one backend of it. Plain mode is pure ASCII; colour mode adds ANSI SGR
 * escapes around the same glyphs. Whether to use colour (--no-color,
 * NO_COLOR, isatty) is the caller's decision. */
#ifndef LOCKSIM_TERM_H
#define LOCKSIM_TERM_H

#include <stdio.h>

#include "layout.h"
#include "trace.h"
#include "vtime.h"

#define TERM_MIN_WIDTH 40

struct term_opts {
    int width;      /* columns of the whole output, clamped to >= TERM_MIN_WIDTH */
    int color;      /* 1 = ANSI colours, 0 = plain ASCII */
    int legend;     /* 1 = print the legend under the chart */
    sim_ns t0, t1;  /* true-time window shown, ns; t1 <= t0 (0/0) = the whole run */
    int compressed; /* 1 = idle stretches shrink to a gap marked <25s> */
};

/* width 100, no colour, legend on, the whole run, a linear axis. */
void term_opts_default(struct term_opts *o);

/* Lay out tr (borrowed, read only) and draw it to out. o may be NULL for
 * the defaults. Returns 0, or -1 when out of memory or on a write error. */
int term_render(FILE *out, const struct trace *tr, const struct term_opts *o);

/* Draw an already built layout (borrowed, read only). Same returns. */
int term_render_layout(FILE *out, const struct layout *ly, const struct term_opts *o);

#endif
