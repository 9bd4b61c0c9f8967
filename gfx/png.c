/* PNG backend: the painted scene (paint.h) drawn on a plain pixel array
 * (gfx/raster.c: boxes, lines, polygons, FreeType's DejaVu text), then
 * encoded by libpng (gfx/pngio.c). No SDL: this file, raster.c and pngio.c
 * are the module locksim-png.so, which loads libpng and libfreetype only,
 * so a whole-process render skips mapping libSDL2's fifty libraries. No
 * display, no environment variable; the same scene gives the same bytes. */
#include "gfx.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "layout.h"
#include "paint.h"
#include "pngio.h"
#include "raster.h"

static int fail(int code, const char *what, const char *detail) { return gfx_fail(code, what, detail); }

/* Paint scene sc (built in view v) on a new canvas *img, height pixels tall
 * (0 = the scene's height): --height exactly, the rest cut. */
static int paint_on(struct raster *img, struct raster_fonts *fonts, const struct scene *sc, const struct scene_view *v,
                    int height) {
    int w = sc->width, h = height > 0 ? height : sc->height;
    if (w < 1 || h < 1) return fail(LSIM_EBAD_VALUE, "empty image", NULL);
    if (raster_init(img, w, h, palette_background) != 0) return fail(LSIM_ENOMEM, "out of memory", NULL);
    return raster_paint(img, fonts, sc, v);
}

static int write_raster(const struct raster *img, const char *path, FILE *stream) {
    FILE *f = path ? fopen(path, "wb") : stream;
    if (!f) return fail(LSIM_EOUTPUT, path, "cannot open for writing");
    int rc = gfx_png_write_rgb(img->px, img->w, img->h, img->pitch, f, path ? path : "output stream");
    if (path && fclose(f) != 0 && !rc) rc = fail(LSIM_EOUTPUT, path, "cannot write the PNG");
    return rc;
}

int gfx_write_scene_png(const char *path, FILE *stream, const struct scene *sc, const struct scene_view *v,
                        int height) {
    gfx_clear_error();
    struct raster img;
    struct raster_fonts fonts;
    memset(&img, 0, sizeof img);
    int rc = raster_fonts_open(&fonts);
    if (!rc) rc = paint_on(&img, &fonts, sc, v, height);
    if (!rc) rc = write_raster(&img, path, stream);
    raster_fonts_close(&fonts);
    raster_close(&img);
    return rc;
}

int gfx_paint_panels(struct raster *img, struct raster_fonts *fonts, const struct trace *const *trs, size_t n,
                     const struct scene_banner *banners, const struct scene_view *v) {
    struct scene sc;
    int rc = scene_build_traces(&sc, trs, n, v, banners);
    if (rc) fail(rc, lsim_strerror(rc), NULL);
    else rc = paint_on(img, fonts, &sc, v, v->height);
    scene_close(&sc);
    return rc;
}

int gfx_render_png_panels(const char *path, FILE *stream, const struct trace *const *trs, size_t n,
                          const struct scene_banner *banners, const struct scene_view *v) {
    struct scene_view def;
    if (!v) {
        scene_view_pixels(&def, 1280, 720);
        v = &def;
    }
    gfx_clear_error();
    struct raster img;
    struct raster_fonts fonts;
    memset(&img, 0, sizeof img);
    int rc = raster_fonts_open(&fonts);
    if (!rc) rc = gfx_paint_panels(&img, &fonts, trs, n, banners, v);
    if (!rc) rc = write_raster(&img, path, stream);
    raster_fonts_close(&fonts);
    raster_close(&img);
    return rc;
}

int gfx_render_png(const char *path, FILE *stream, const struct trace *tr, const struct scene_banner *b,
                   const struct scene_view *v) {
    return gfx_render_png_panels(path, stream, &tr, 1, b, v);
}
