/* PNG backend: the painted scene (paint.h) drawn by SDL2's software renderer
 * into a surface, the way SDL's testdrawchessboard.c draws without a window,
 * then encoded by libpng.
 * The software renderer needs no video subsystem, so no display and no
 * SDL_VIDEODRIVER; nothing is anti-aliased but the text, which SDL2_ttf
 * renders the same way every time. The surface is 32-bit: SDL's software
 * line drawing refuses 24-bit surfaces. */
#include "gfx.h"

#include <stdlib.h>
#include <string.h>

#include <png.h>
#include <SDL.h>
#include <SDL_ttf.h>

#include "error.h"
#include "layout.h"
#include "paint.h"
#include "sdl_paint.h"

static int fail(int code, const char *what, const char *detail) {
    return gfx_fail(code, what, detail);
}

/* The surface's rows (XRGB8888: B, G, R, X bytes in memory) as an 8-bit RGB
 * PNG. libpng rather than IMG_SavePNG for speed: IMG_SavePNG gives libpng its
 * defaults (zlib level 6, adaptive filters), 55 to 90 ms for 1280x720 here;
 * zlib level 1 with no filter takes about 20 ms for a file a third larger.
 * No time stamp or text chunk is written, so the bytes depend on the pixels
 * only. Returns 0 or LSIM_EOUTPUT / LSIM_ENOMEM. */
/* libpng's errors come back through setjmp below, its warnings are
 * dropped: nothing is printed to stderr from a library. */
static void png_fail(png_structp p, png_const_charp msg) {
    (void)msg;
    png_longjmp(p, 1);
}

static void png_warn(png_structp p, png_const_charp msg) {
    (void)p;
    (void)msg;
}

int gfx_save_png(SDL_Surface *surf, FILE *f, const char *name) {
    png_structp p = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, png_fail, png_warn);
    png_infop info = p ? png_create_info_struct(p) : NULL;
    if (!info) {
        png_destroy_write_struct(&p, NULL);
        return fail(LSIM_ENOMEM, "png_create_write_struct", NULL);
    }
    if (setjmp(png_jmpbuf(p))) { /* libpng reports every error here, e.g. a short write */
        png_destroy_write_struct(&p, &info);
        return fail(LSIM_EOUTPUT, name, "cannot write the PNG");
    }
    png_init_io(p, f);
    png_set_compression_level(p, 1);
    png_set_filter(p, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
    png_set_IHDR(p, info, (png_uint_32)surf->w, (png_uint_32)surf->h, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
    png_write_info(p, info);
    if (SDL_BYTEORDER == SDL_LIL_ENDIAN) png_set_bgr(p);
    png_set_filler(p, 0, SDL_BYTEORDER == SDL_LIL_ENDIAN ? PNG_FILLER_AFTER : PNG_FILLER_BEFORE);
    for (int y = 0; y < surf->h; y++) png_write_row(p, (png_bytep)surf->pixels + (size_t)y * (size_t)surf->pitch);
    png_write_end(p, info);
    png_destroy_write_struct(&p, &info);
    if (fflush(f) != 0 || ferror(f)) return fail(LSIM_EOUTPUT, name, "cannot write the PNG");
    return 0;
}

int gfx_write_scene_png(const char *path, FILE *stream, const struct scene *sc,
                        const struct scene_view *v, int height) {
    int w = sc->width, h = height > sc->height ? height : sc->height;
    gfx_clear_error();
    if (w < 1 || h < 1) return fail(LSIM_EBAD_VALUE, "empty image", NULL);
    if (TTF_Init() != 0) return fail(LSIM_EINTERNAL, "TTF_Init", TTF_GetError());
    struct gfx_fonts fonts;
    SDL_Renderer *r = NULL;
    memset(&fonts, 0, sizeof fonts);
    int rc = 0;
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_XRGB8888);
    if (!surf) rc = fail(LSIM_ENOMEM, "SDL_CreateRGBSurfaceWithFormat", SDL_GetError());
    if (!rc && !(r = SDL_CreateSoftwareRenderer(surf)))
        rc = fail(LSIM_EINTERNAL, "SDL_CreateSoftwareRenderer", SDL_GetError());
    if (!rc) rc = gfx_fonts_open(&fonts);
    if (!rc) {
        SDL_SetRenderDrawColor(r, palette_background.r, palette_background.g, palette_background.b, 255);
        SDL_RenderClear(r);
        rc = gfx_paint(r, &fonts, sc, v);
    }
    if (!rc) SDL_RenderPresent(r);
    if (!rc) {
        FILE *f = path ? fopen(path, "wb") : stream;
        if (!f) rc = fail(LSIM_EOUTPUT, path, "cannot open for writing");
        else rc = gfx_save_png(surf, f, path ? path : "output stream");
        if (path && f && fclose(f) != 0 && !rc) rc = fail(LSIM_EOUTPUT, path, "cannot write the PNG");
    }
    gfx_fonts_close(&fonts);
    if (r) SDL_DestroyRenderer(r);
    SDL_FreeSurface(surf);
    TTF_Quit();
    return rc;
}

int gfx_render_png_panels(const char *path, FILE *stream, const struct trace *const *trs,
                          size_t n, const struct scene_banner *banners,
                          const struct scene_view *v) {
    struct scene_view def;
    if (!v) {
        scene_view_pixels(&def, 1280, 720);
        v = &def;
    }
    struct layout *lys = calloc(n ? n : 1, sizeof *lys);
    if (!lys) return fail(LSIM_ENOMEM, "out of memory", NULL);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        if (layout_build(&lys[i], trs[i]) != 0) rc = fail(LSIM_ENOMEM, "out of memory", NULL);
    struct scene sc;
    memset(&sc, 0, sizeof sc);
    if (!rc && (rc = scene_build_panels(&sc, lys, n, v, banners)) != 0)
        fail(rc, lsim_strerror(rc), NULL);
    if (!rc) rc = gfx_write_scene_png(path, stream, &sc, v, v->height);
    scene_close(&sc);
    for (size_t i = 0; i < n; i++) layout_close(&lys[i]);
    free(lys);
    return rc;
}

int gfx_render_png(const char *path, FILE *stream, const struct trace *tr,
                   const struct scene_banner *b, const struct scene_view *v) {
    return gfx_render_png_panels(path, stream, &tr, 1, b, v);
}
