/* gfx: the pixel backends. The PNG writer draws a scene on a plain pixel
 * array (gfx/raster.c: no SDL, no window, no display, no environment
 * variable), text with FreeType and DejaVu Sans Mono, and saves it with
 * libpng; the sweep heatmap is drawn the same way (DejaVu Sans); the
 * window uses SDL2 and SDL2_ttf. Only front ends
 * that draw link this archive (the binary loads it as two modules, see
 * cli/gfx_mod.c). */
#ifndef LOCKSIM_GFX_H
#define LOCKSIM_GFX_H

#include <stddef.h>
#include <stdio.h>

#include "scene.h"
#include "trace.h"

/* The fonts, from Debian's fonts-dejavu-core. */
#define GFX_FONT_DIR "/usr/share/fonts/truetype/dejavu/"
#define GFX_FONT_MONO GFX_FONT_DIR "DejaVuSansMono.ttf"
#define GFX_FONT_MONO_BOLD GFX_FONT_DIR "DejaVuSansMono-Bold.ttf"
/* The heatmap's proportional font (the SVG asks for sans-serif). */
#define GFX_FONT_SANS GFX_FONT_DIR "DejaVuSans.ttf"
#define GFX_FONT_SANS_BOLD GFX_FONT_DIR "DejaVuSans-Bold.ttf"

/* Write the picture of tr (borrowed, read only) as PNG: to the file at path
 * when path is not NULL, else to stream. v NULL = scene_view_pixels 1280 x
 * 720; the image is v->height tall, or as tall as the content when that is
 * taller or v->height is 0. b (NULL = no banner) heads it. The same trace,
 * banner and view give the same bytes.
 * Returns 0 or a negative code: LSIM_ENOMEM; LSIM_EBAD_VALUE (a view too
 * small); LSIM_ENOINPUT (a font is missing: gfx_error() names the file and
 * the Debian package); LSIM_EOUTPUT (the file cannot be written);
 * LSIM_EINTERNAL (FreeType failed: gfx_error() says how). */
int gfx_render_png(const char *path, FILE *stream, const struct trace *tr, const struct scene_banner *b,
                   const struct scene_view *v);

/* n traces stacked, one panel each, on one time axis (scene_build_panels);
 * banners is NULL or n banners. Returns as gfx_render_png does. */
int gfx_render_png_panels(const char *path, FILE *stream, const struct trace *const *trs, size_t n,
                          const struct scene_banner *banners, const struct scene_view *v);

/* An already built scene (borrowed), built in view v, at least height pixels tall. */
int gfx_write_scene_png(const char *path, FILE *stream, const struct scene *sc, const struct scene_view *v, int height);

/* n traces painted as gfx_render_png_panels draws them, on a new canvas
 * *img (raster_init's: raster_close frees it, also after an error), with
 * fonts open (raster_fonts_open). Returns as gfx_render_png does. */
struct raster;
struct raster_fonts;
int gfx_paint_panels(struct raster *img, struct raster_fonts *fonts, const struct trace *const *trs, size_t n,
                     const struct scene_banner *banners, const struct scene_view *v);

/* Frame i of an animation: the caller fills the n banners (their strings
 * its own, kept until the next call) and the view of frame i, and how long
 * it shows in 1/100 s. Returns 0 or a negative code. */
typedef int (*gfx_gif_frame_fn)(void *ctx, size_t i, struct scene_banner *banners, struct scene_view *v, int *delay_cs);
/* An animated GIF of nframes frames of the n traces trs (borrowed), each
 * painted as gfx_render_png_panels draws the banners and view frame()
 * gives, to f (name for messages, NULL = "output stream"): one fixed
 * palette of 256 colours from render/palette.c (nearest entry for the
 * blends of anti-aliased text), a frame equal to the one before merged into
 * it (shown longer), looping forever. Every frame must have the first's
 * size (give the view a fixed height). The same frames give the same bytes.
 * Returns 0 or a negative code as gfx_render_png does (LSIM_EOUTPUT: a
 * short write, left on f's error flag). */
int gfx_render_gif(FILE *f, const char *name, const struct trace *const *trs, size_t n, size_t nframes,
                   gfx_gif_frame_fn frame, void *ctx);

/* The safety-region heatmap of `locksim sweep` (render/heatmap_svg.h, borrowed)
 * as PNG: the SVG's picture on the same geometry, to the file at path or,
 * when path is NULL, to stream. The same heatmap gives the same bytes.
 * Returns 0 or a negative code as gfx_render_png does. */
struct heatmap;
int gfx_heatmap_png(const char *path, FILE *stream, const struct heatmap *h);

/* Why the last call in this thread failed, in words (static storage; "" after success). */
const char *gfx_error(void);

#endif
