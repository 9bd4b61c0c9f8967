/* SDL paint: paint.h's four primitives done with SDL2 and SDL2_ttf
 * (DejaVu Sans Mono) on an SDL_Renderer: the window's overlays (cursor,
 * narration, quiz, help, tooltips) and, in tests/test_gfx.c, a whole scene
 * as SDL draws it, against which the painter of the PNG and of the
 * window's scenes (gfx/raster.c) is checked. */
#ifndef LOCKSIM_SDL_PAINT_H
#define LOCKSIM_SDL_PAINT_H

#include <SDL.h>
#include <SDL_ttf.h>

#include "palette.h"
#include "pngio.h"
#include "scene.h"

/* A short text drawn once, kept as a texture of one renderer. */
struct gfx_text_tex {
    char s[32]; /* the text (printable ASCII), "" = free slot */
    uint8_t px_title, bold;
    struct palette_rgb c;
    SDL_Texture *t; /* owned */
    int w, h;
};

/* The four fonts a picture uses, opened once: [title size][bold], and a
 * cache of the textures of short texts (badges, labels, ticks) for the
 * renderer that drew them last: a window repainting a scene makes no text
 * twice. */
#define GFX_TEXT_CACHE 16384
struct gfx_fonts {
    TTF_Font *font[2][2];       /* owned; close with gfx_fonts_close */
    struct gfx_text_tex *cache; /* owned, GFX_TEXT_CACHE slots (open addressing) or NULL */
    size_t ncache;              /* slots in use */
    SDL_Renderer *cache_r;      /* the renderer the textures belong to (borrowed) */
};

/* Open the DejaVu fonts (TTF_Init must have been called). Returns 0,
 * LSIM_ENOINPUT (a font file is missing: gfx_error() names it and the Debian
 * package) or LSIM_EINTERNAL. On error the fonts opened so far stay in *f
 * and gfx_fonts_close still frees them. */
int gfx_fonts_open(struct gfx_fonts *f);
/* The same fonts at other sizes (the window's text scale): text_px for
 * what is drawn at PALETTE_TEXT_PX, title_px for the title's. */
int gfx_fonts_open_px(struct gfx_fonts *f, int text_px, int title_px);
/* Close every font of *f (also a zeroed one), destroy its cached textures
 * (before their renderer is destroyed) and zero it. */
void gfx_fonts_close(struct gfx_fonts *f);

/* Paint scene sc (borrowed), built in view v, on r with fonts f (both
 * borrowed), one SDL call per box (the window paints its scenes with
 * raster_paint instead, 4 times faster zoomed out over a million events). The caller clears and presents. Returns 0 or the first error
 * (LSIM_ENOMEM, LSIM_EINTERNAL; gfx_error() says how). */
int gfx_paint(SDL_Renderer *r, struct gfx_fonts *f, const struct scene *sc, const struct scene_view *v);

/* The primitives themselves, for a front end's own overlays (the window's
 * cursor, narration and help): the same look as the scene's. Return as
 * gfx_paint does. */
int gfx_paint_box(SDL_Renderer *r, int x, int y, int w, int h, struct palette_rgb c);
int gfx_paint_line(SDL_Renderer *r, int x0, int y0, int x1, int y1, int width, struct palette_rgb c);
/* Text (printable ASCII; others shown as '?') with its top-left corner at
 * x, y, vertically centred in a line of height h; px is PALETTE_TEXT_PX or
 * PALETTE_TITLE_PX. */
int gfx_paint_text(SDL_Renderer *r, struct gfx_fonts *f, int x, int y, int h, const char *s, int px, int bold,
                   struct palette_rgb c);
/* One line of text kept as a texture by its caller (the window's narration
 * and status lines, longer than the cache's texts): drawn as
 * gfx_paint_text draws it, made again only when the text, look or
 * renderer changes. Zero it before the first use; gfx_text_line_close
 * destroys the texture (before its renderer is destroyed). */
struct gfx_text_line {
    char s[512]; /* the text drawn (printable ASCII) */
    int px, bold;
    struct palette_rgb c;
    SDL_Renderer *r; /* borrowed: the renderer of t */
    SDL_Texture *t;  /* owned, or NULL */
    int w, h;
};
int gfx_paint_text_line(SDL_Renderer *r, struct gfx_fonts *f, struct gfx_text_line *keep, int x, int y, int h,
                        const char *s, int px, int bold, struct palette_rgb c);
void gfx_text_line_close(struct gfx_text_line *keep);

/* The width in pixels s would take in that font (0 on error). */
int gfx_text_width(struct gfx_fonts *f, const char *s, int px, int bold);

/* Write a 32-bit surface (XRGB8888 or ARGB8888, alpha dropped) to f as an
 * RGB PNG with libpng (gfx/pngio.c, the PNG module's encoder too): the
 * window's screenshot and the heatmap, so the module needs no SDL2_image. name is for messages.
 * Returns 0, LSIM_ENOMEM or LSIM_EOUTPUT (gfx_error() says why). */
int gfx_save_png(SDL_Surface *surf, FILE *f, const char *name);

#endif
