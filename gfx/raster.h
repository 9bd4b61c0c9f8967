/* Raster: the PNG writer's own drawing, without SDL, and the window's
 * (gfx/view.c paints its scenes with it into its texture). A canvas of
 * pixels and paint.h's four primitives on it, the text through FreeType directly with
 * DejaVu Sans Mono, hinted and grey-scale anti-aliased as SDL2_ttf renders
 * it. `locksim render -o x.png` loads this code as
 * locksim-png.so, which needs libpng and libfreetype only: not libSDL2 and
 * its fifty libraries (X11, Wayland, audio) nor SDL2_ttf's harfbuzz and glib,
 * whose mapping was most of a whole-process render (bench/README.md). */
#ifndef LOCKSIM_RASTER_H
#define LOCKSIM_RASTER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "palette.h"
#include "scene.h"

/* w x h pixels, row after row, pitch bytes apart. A canvas of raster_init
 * is the PNG's: R, G, B bytes, no padding (pitch = 3 w), the rows as they
 * are written. One of raster_wrap is the window's texture: B, G, R, A bytes
 * (SDL_PIXELFORMAT_BGRA32, A = 255), any pitch. Both get the same colours
 * at the same places: the window paints the PNG's pixels. */
struct raster {
    uint8_t *px; /* owned (raster_init) or borrowed (raster_wrap) */
    int w, h;
    size_t pitch;   /* bytes from a row to the next */
    int bpp;        /* bytes per pixel: 3 (R, G, B) or 4 (B, G, R, A) */
    int ro, go, bo; /* byte offsets of red, green and blue in a pixel */
    int dy;         /* added to every y drawn (the window's scroll, negated) */
    int owned;      /* 1 = raster_close frees px */
};

/* One glyph of printable ASCII, rendered once (8-bit coverage). */
struct raster_glyph {
    unsigned char *cov;           /* owned, w * h bytes; NULL before it is rendered */
    int w, h, left, top, advance; /* bitmap size; offsets from the pen on the baseline; advance in px */
    int done;
};

struct raster_font {
    void *face;                /* FT_Face, owned */
    int ascent, height;        /* pixels: baseline below the top; line height */
    struct raster_glyph g[95]; /* ' ' .. '~' */
};

/* The four fonts of a picture, [title size][bold], and the FreeType library. */
struct raster_fonts {
    void *lib; /* FT_Library, owned */
    struct raster_font font[2][2];
};

/* Allocate a w x h RGB canvas filled with colour c. Returns 0 or LSIM_ENOMEM. */
int raster_init(struct raster *r, int w, int h, struct palette_rgb c);
/* A w x h canvas of B, G, R, A pixels at px (borrowed: the caller's, e.g. a
 * locked texture, until it stops drawing), rows pitch bytes apart, filled
 * with colour c. Returns 0, or LSIM_EBAD_VALUE for a size or pitch that
 * cannot be. */
int raster_wrap(struct raster *r, void *px, int w, int h, size_t pitch, struct palette_rgb c);
/* Free what raster_init allocated (nothing for a wrapped canvas) and zero *r. */
void raster_close(struct raster *r);

/* Open the DejaVu fonts. Returns 0, LSIM_ENOINPUT (a font file is missing:
 * gfx_error() names it and the Debian package) or LSIM_EINTERNAL. On error
 * raster_fonts_close still frees what was opened. */
int raster_fonts_open(struct raster_fonts *f);
/* The same fonts at other sizes (the window's text scale): text_px for
 * what is drawn at PALETTE_TEXT_PX, title_px for the title's. */
int raster_fonts_open_px(struct raster_fonts *f, int text_px, int title_px);
void raster_fonts_close(struct raster_fonts *f);

/* One font by itself, for pictures that are not scenes (the heatmap,
 * gfx/heatmap_png.c): FreeType's library in *lib (raster_lib_close frees
 * it), then any number of fonts from it, each a file at a size in pixels,
 * metrics as SDL2_ttf's. Return 0, LSIM_ENOINPUT (gfx_error() names the
 * missing file and the Debian package), LSIM_ENOMEM (FreeType or we ran out
 * of memory: FreeType's allocations are guarded so it never sees a failure,
 * see raster.c) or LSIM_EINTERNAL.
 * raster_font_close after a failed open is safe, and frees what was made. */
int raster_lib_open(void **lib);
void raster_lib_close(void *lib);
int raster_font_open(struct raster_font *rf, void *lib, const char *file, int px);
void raster_font_close(struct raster_font *rf);

/* Text s in colour c, its baseline at y, anchored at x as SVG's
 * text-anchor (0 start, 1 middle, 2 end: the pen starts at x less all or
 * half of the advance); when rot, turned a quarter anticlockwise about
 * (x, y), so it reads upwards, exactly (pixels are moved, not resampled).
 * Characters outside printable ASCII are drawn as '?'. Returns 0,
 * LSIM_EINTERNAL or LSIM_ENOMEM. */
enum raster_anchor { RASTER_START, RASTER_MIDDLE, RASTER_END };
int raster_text(struct raster *r, struct raster_font *f, int x, int y, const char *s, enum raster_anchor a, int rot,
                struct palette_rgb c);
/* The advance of s in pixels (the sum of its glyphs'), in *w. Returns as raster_text. */
int raster_text_width(struct raster_font *f, const char *s, int *w);
/* A filled box clipped to the canvas. */
void raster_fill(struct raster *r, int x, int y, int w, int h, struct palette_rgb c);

/* Paint scene sc (borrowed), built in view v, on r. Returns 0 or the first
 * error (LSIM_ENOMEM, LSIM_EINTERNAL; gfx_error() says how). */
int raster_paint(struct raster *r, struct raster_fonts *f, const struct scene *sc, const struct scene_view *v);

#endif
