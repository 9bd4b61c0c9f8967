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

int gfx_write_scene_png(const char *path, FILE *stream, const struct scene *sc, const struct scene_view *v,
                        int height) {
    int w = sc->width, h = height > 0 ? height : sc->height; /* --height: exactly, the rest cut */
    gfx_clear_error();
    if (w < 1 || h < 1) return fail(LSIM_EBAD_VALUE, "empty image", NULL);
    struct raster img;
    struct raster_fonts fonts;
    int rc = raster_init(&img, w, h, palette_background);
    if (rc) return fail(rc, "out of memory", NULL);
    rc = raster_fonts_open(&fonts);
    if (!rc) rc = raster_paint(&img, &fonts, sc, v);
    if (!rc) {
        FILE *f = path ? fopen(path, "wb") : stream;
        if (!f) rc = fail(LSIM_EOUTPUT, path, "cannot open for writing");
        else rc = gfx_png_write_rgb(img.px, img.w, img.h, img.pitch, f, path ? path : "output stream");
        if (path && f && fclose(f) != 0 && !rc) rc = fail(LSIM_EOUTPUT, path, "cannot write the PNG");
    }
    raster_fonts_close(&fonts);
    raster_close(&img);
    return rc;
}
int gfx_render_png_panels(const char *path, FILE *stream, const struct trace *const *trs, size_t n,
                          const struct scene_banner *banners, const struct scene_view *v) {
    struct scene_view def;
    if (!v) {
        scene_view_pixels(&def, 1280, 720);
        v = &def;
    }
    struct layout *lys = calloc(n ? n : 1, sizeof *lys);
    if (!lys) return fail(LSIM_ENOMEM, "out of memory", NULL);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        if (scene_layout_for(&lys[i], trs[i], v) != 0) rc = fail(LSIM_ENOMEM, "out of memory", NULL);
    struct scene sc;
    memset(&sc, 0, sizeof sc);
    if (!rc && (rc = scene_build_panels(&sc, lys, n, v, banners)) != 0) fail(rc, lsim_strerror(rc), NULL);
    if (!rc) rc = gfx_write_scene_png(path, stream, &sc, v, v->height);
    scene_close(&sc);
    for (size_t i = 0; i < n; i++) layout_close(&lys[i]);
    free(lys);
    return rc;
}

int gfx_render_png(const char *path, FILE *stream, const struct trace *tr, const struct scene_banner *b,
                   const struct scene_view *v) {
    return gfx_render_png_panels(path, stream, &tr, 1, b, v);
}
