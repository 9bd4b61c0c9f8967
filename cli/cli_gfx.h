/* The picture modules seen from the commands (cli/gfx_mod.c), each loaded
 * with dlopen on first use: gfx_render_png_panels and gfx_heatmap_png
 * (gfx/gfx.h) through locksim-png.so (libpng and FreeType, no SDL);
 * gfx_view_run (gfx/view.h) through locksim-gfx.so (SDL2).
 * cli_gfx_error is the gfx_error of the module called last. */
#ifndef LOCKSIM_CLI_GFX_H
#define LOCKSIM_CLI_GFX_H

#include <stddef.h>
#include <stdio.h>

#include "gfx.h"
#include "view.h"

/* The modules' file names; they lie in the directory of the binary. */
#define CLI_GFX_MODULE "locksim-gfx.so"
#define CLI_PNG_MODULE "locksim-png.so"

/* As gfx_render_png_panels and gfx_view_run; when the module cannot be
 * loaded, LSIM_EINTERNAL, and cli_gfx_error() says why and how to build it. */
int cli_gfx_render_png_panels(const char *path, FILE *stream, const struct trace *const *trs, size_t n,
                              const struct scene_banner *banners, const struct scene_view *v);
/* As gfx_render_gif (gfx.h), through locksim-png.so. */
int cli_gfx_render_gif(FILE *f, const char *name, const struct trace *const *trs, size_t n, size_t nframes,
                       gfx_gif_frame_fn frame, void *ctx);
int cli_gfx_view_run(const struct view_host *h, const struct view_opts *o);
int cli_gfx_heatmap_png(const char *path, FILE *stream, const struct heatmap *h);
/* As gfx_error, or why the module could not be loaded. Static storage. */
const char *cli_gfx_error(void);

#endif
