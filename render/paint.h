/* Paint: the pixel look of a scene, once for every pixel backend. Walks the
 * command list and reduces each command to four primitives (filled box,
 * filled polygon, line, text in a box) in the palette's colours, so the SVG
 * and the PNG show the same shapes at the same places. */
#ifndef LOCKSIM_PAINT_H
#define LOCKSIM_PAINT_H

#include "palette.h"
#include "scene.h"

/* What a backend draws. ctx is the backend's own; coordinates in pixels.
 * Every callback returns 0, or a negative LSIM_E* code that stops the walk. */
struct paint_ops {
    int (*box)(void *ctx, int x, int y, int w, int h, struct palette_rgb c);
    /* a convex polygon of n <= 8 points */
    int (*poly)(void *ctx, const int *xs, const int *ys, int n, struct palette_rgb c);
    int (*line)(void *ctx, int x0, int y0, int x1, int y1, int width, struct palette_rgb c);
    /* text (printable ASCII) whose top-left corner is x, y, vertically
     * centred in a line of height h; px = font size in pixels */
    int (*text)(void *ctx, int x, int y, int h, const char *s, int px, int bold, struct palette_rgb c);
    /* optional: an event's shapes follow until group_end; tip is its tooltip */
    int (*group_begin)(void *ctx, const char *tip);
    int (*group_end)(void *ctx);
};

/* Draw every command of sc, in list order within four passes: what lies
 * under the events (fills, grid, axis, legend swatches, TTL bars, arrows),
 * the lines of the lanes' events, their badges, then every text, so no
 * line, arrow or bar crosses a badge or a word.
 * Returns 0 or the first callback error. */
int paint_scene(const struct scene *sc, const struct scene_view *v, const struct paint_ops *ops, void *ctx);

#endif
