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

static _Thread_local char last_error[256];

const char *gfx_error(void) { return last_error; }

static int fail(int code, const char *what, const char *detail) {
    snprintf(last_error, sizeof last_error, "%s%s%s", what, detail && detail[0] ? ": " : "",
             detail ? detail : "");
    return code;
}

struct gfx {
    SDL_Renderer *r;
    TTF_Font *font[2][2]; /* [title][bold] */
};

static void color(struct gfx *g, struct palette_rgb c) {
    SDL_SetRenderDrawColor(g->r, c.r, c.g, c.b, 255);
}

static int box(void *ctx, int x, int y, int w, int h, struct palette_rgb c) {
    struct gfx *g = ctx;
    SDL_Rect rc = {x, y, w, h};
    color(g, c);
    return SDL_RenderFillRect(g->r, &rc) ? fail(LSIM_EINTERNAL, "SDL_RenderFillRect", SDL_GetError()) : 0;
}

/* A convex polygon as a fan of triangles (SDL_RenderGeometry). */
static int poly(void *ctx, const int *xs, const int *ys, int n, struct palette_rgb c) {
    struct gfx *g = ctx;
    SDL_Vertex vx[8];
    int idx[18], ni = 0;
    if (n < 3 || n > 8) return 0;
    for (int i = 0; i < n; i++) {
        vx[i].position.x = (float)xs[i];
        vx[i].position.y = (float)ys[i];
        vx[i].color = (SDL_Color){c.r, c.g, c.b, 255};
        vx[i].tex_coord.x = vx[i].tex_coord.y = 0;
    }
    for (int i = 1; i + 1 < n; i++) {
        idx[ni++] = 0;
        idx[ni++] = i;
        idx[ni++] = i + 1;
    }
    return SDL_RenderGeometry(g->r, NULL, vx, n, idx, ni)
               ? fail(LSIM_EINTERNAL, "SDL_RenderGeometry", SDL_GetError()) : 0;
}

static int line(void *ctx, int x0, int y0, int x1, int y1, int width, struct palette_rgb c) {
    struct gfx *g = ctx;
    color(g, c);
    if (x0 == x1 || y0 == y1) { /* whole pixels, as the SVG's rectangles */
        SDL_Rect rc;
        if (x0 == x1) rc = (SDL_Rect){x0 - width / 2, y0 < y1 ? y0 : y1, width, abs(y1 - y0) + 1};
        else rc = (SDL_Rect){x0 < x1 ? x0 : x1, y0 - width / 2, abs(x1 - x0) + 1, width};
        return SDL_RenderFillRect(g->r, &rc) ? fail(LSIM_EINTERNAL, "SDL_RenderFillRect", SDL_GetError()) : 0;
    }
    for (int k = 0; k < width; k++)
        if (SDL_RenderDrawLine(g->r, x0 + k, y0, x1 + k, y1))
            return fail(LSIM_EINTERNAL, "SDL_RenderDrawLine", SDL_GetError());
    return 0;
}

static int text(void *ctx, int x, int y, int h, const char *s, int px, int bold,
                struct palette_rgb c) {
    struct gfx *g = ctx;
    char buf[512];
    size_t n = 0;
    for (; *s && n + 1 < sizeof buf; s++) { /* printable ASCII, as the other backends */
        unsigned char ch = (unsigned char)*s;
        buf[n++] = ch < 0x20 || ch > 0x7e ? '?' : (char)ch;
    }
    buf[n] = '\0';
    if (!n) return 0;
    TTF_Font *f = g->font[px != PALETTE_TEXT_PX][bold != 0];
    SDL_Surface *ts = TTF_RenderText_Blended(f, buf, (SDL_Color){c.r, c.g, c.b, 255});
    if (!ts) return fail(LSIM_ENOMEM, "TTF_RenderText_Blended", TTF_GetError());
    SDL_Texture *t = SDL_CreateTextureFromSurface(g->r, ts);
    if (!t) {
        SDL_FreeSurface(ts);
        return fail(LSIM_ENOMEM, "SDL_CreateTextureFromSurface", SDL_GetError());
    }
    SDL_Rect dst = {x, y + (h - ts->h) / 2, ts->w, ts->h};
    int rc = SDL_RenderCopy(g->r, t, NULL, &dst);
    SDL_DestroyTexture(t);
    SDL_FreeSurface(ts);
    return rc ? fail(LSIM_EINTERNAL, "SDL_RenderCopy", SDL_GetError()) : 0;
}

/* The surface's rows (XRGB8888: B, G, R, X bytes in memory) as an 8-bit RGB
 * PNG. libpng rather than IMG_SavePNG for speed: IMG_SavePNG gives libpng its
 * defaults (zlib level 6, adaptive filters), 55 to 90 ms for 1280x720 here;
 * zlib level 1 with no filter takes about 20 ms for a file a third larger.
 * No time stamp or text chunk is written, so the bytes depend on the pixels
 * only. Returns 0 or LSIM_EOUTPUT / LSIM_ENOMEM. */
static int save_png(SDL_Surface *surf, FILE *f, const char *name) {
    png_structp p = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
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

static int open_fonts(struct gfx *g) {
    static const char *const files[2] = {GFX_FONT_MONO, GFX_FONT_MONO_BOLD};
    for (int t = 0; t < 2; t++)
        for (int b = 0; b < 2; b++) {
            FILE *probe = fopen(files[b], "rb");
            if (!probe)
                return fail(LSIM_ENOINPUT, files[b],
                            "font missing; install the Debian package fonts-dejavu-core "
                            "(apt-get install fonts-dejavu-core)");
            fclose(probe);
            g->font[t][b] = TTF_OpenFont(files[b], t ? PALETTE_TITLE_PX : PALETTE_TEXT_PX);
            if (!g->font[t][b]) return fail(LSIM_EINTERNAL, "TTF_OpenFont", TTF_GetError());
            TTF_SetFontHinting(g->font[t][b], TTF_HINTING_NORMAL);
        }
    return 0;
}

int gfx_write_scene_png(const char *path, FILE *stream, const struct scene *sc,
                        const struct scene_view *v, int height) {
    static const struct paint_ops ops = {box, poly, line, text, NULL, NULL};
    int w = sc->width, h = height > sc->height ? height : sc->height;
    last_error[0] = '\0';
    if (w < 1 || h < 1) return fail(LSIM_EBAD_VALUE, "empty image", NULL);
    if (TTF_Init() != 0) return fail(LSIM_EINTERNAL, "TTF_Init", TTF_GetError());
    struct gfx g;
    memset(&g, 0, sizeof g);
    int rc = 0;
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_XRGB8888);
    if (!surf) rc = fail(LSIM_ENOMEM, "SDL_CreateRGBSurfaceWithFormat", SDL_GetError());
    if (!rc && !(g.r = SDL_CreateSoftwareRenderer(surf)))
        rc = fail(LSIM_EINTERNAL, "SDL_CreateSoftwareRenderer", SDL_GetError());
    if (!rc) rc = open_fonts(&g);
    if (!rc) {
        color(&g, palette_background);
        SDL_RenderClear(g.r);
        rc = paint_scene(sc, v, &ops, &g);
    }
    if (!rc) SDL_RenderPresent(g.r);
    if (!rc) {
        FILE *f = path ? fopen(path, "wb") : stream;
        if (!f) rc = fail(LSIM_EOUTPUT, path, "cannot open for writing");
        else rc = save_png(surf, f, path ? path : "output stream");
        if (path && f && fclose(f) != 0 && !rc) rc = fail(LSIM_EOUTPUT, path, "cannot write the PNG");
    }
    for (int t = 0; t < 2; t++)
        for (int b = 0; b < 2; b++)
            if (g.font[t][b]) TTF_CloseFont(g.font[t][b]);
    if (g.r) SDL_DestroyRenderer(g.r);
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
