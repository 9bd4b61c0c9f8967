/* SDL paint: the one drawing of a scene on an SDL_Renderer, shared by the
 * PNG writer (a software renderer on a surface) and the window (gfx/view.c),
 * so both show the same pixels: paint.h's four primitives done with SDL2
 * and SDL2_ttf (DejaVu Sans Mono). */
#ifndef LOCKSIM_SDL_PAINT_H
#define LOCKSIM_SDL_PAINT_H

#include <SDL.h>
#include <SDL_ttf.h>

#include "palette.h"
#include "scene.h"

/* The four fonts a picture uses, opened once: [title size][bold]. */
struct gfx_fonts {
    TTF_Font *font[2][2]; /* owned; close with gfx_fonts_close */
};

/* Open the DejaVu fonts (TTF_Init must have been called). Returns 0,
 * LSIM_ENOINPUT (a font file is missing: gfx_error() names it and the Debian
 * package) or LSIM_EINTERNAL. On error the fonts opened so far stay in *f
 * and gfx_fonts_close still frees them. */
int gfx_fonts_open(struct gfx_fonts *f);
/* Close every font of *f (also a zeroed one) and zero it. */
void gfx_fonts_close(struct gfx_fonts *f);

/* Paint scene sc (borrowed), built in view v, on r with fonts f (both
 * borrowed). The caller clears and presents. Returns 0 or the first error
 * (LSIM_ENOMEM, LSIM_EINTERNAL; gfx_error() says how). */
int gfx_paint(SDL_Renderer *r, struct gfx_fonts *f, const struct scene *sc,
              const struct scene_view *v);

/* The primitives themselves, for a front end's own overlays (the window's
 * cursor, narration and help): the same look as the scene's. Return as
 * gfx_paint does. */
int gfx_paint_box(SDL_Renderer *r, int x, int y, int w, int h, struct palette_rgb c);
int gfx_paint_line(SDL_Renderer *r, int x0, int y0, int x1, int y1, int width,
                   struct palette_rgb c);
/* Text (printable ASCII; others shown as '?') with its top-left corner at
 * x, y, vertically centred in a line of height h; px is PALETTE_TEXT_PX or
 * PALETTE_TITLE_PX. */
int gfx_paint_text(SDL_Renderer *r, struct gfx_fonts *f, int x, int y, int h, const char *s,
                   int px, int bold, struct palette_rgb c);
/* The width in pixels s would take in that font (0 on error). */
int gfx_text_width(struct gfx_fonts *f, const char *s, int px, int bold);

/* A 32-bit surface's pixels as an 8-bit RGB PNG on f (gfx/png.c: no time
 * stamp, so the bytes depend on the pixels only). name is for messages.
 * Returns 0 or LSIM_EOUTPUT / LSIM_ENOMEM. */
int gfx_save_png(SDL_Surface *surf, FILE *f, const char *name);

/* Record why a call failed, for gfx_error() (gfx.h); returns code.
 * gfx_clear_error() empties it. */
int gfx_fail(int code, const char *what, const char *detail);
void gfx_clear_error(void);

#endif
