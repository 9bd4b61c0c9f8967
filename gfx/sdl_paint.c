/* SDL paint: paint.h's primitives on an SDL_Renderer with SDL2_ttf, the
 * window's overlays (gfx/view.c). The PNG writer and the window's scenes
 * draw the same primitives without SDL (gfx/raster.c) to the same pixels
 * but for the anti-aliased edges of the text (at most 2 of 255 per channel:
 * the blend rounds differently; tests/test_gfx.c checks it). Nothing is anti-aliased but the text, which SDL2_ttf
 * renders the same way every time. */
#include "sdl_paint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "gfx.h"
#include "paint.h"
#include "pngio.h"

struct gfx {
    SDL_Renderer *r;
    struct gfx_fonts *f;
};

static void color(SDL_Renderer *r, struct palette_rgb c) { SDL_SetRenderDrawColor(r, c.r, c.g, c.b, 255); }

int gfx_paint_box(SDL_Renderer *r, int x, int y, int w, int h, struct palette_rgb c) {
    SDL_Rect rc = {x, y, w, h};
    color(r, c);
    return SDL_RenderFillRect(r, &rc) ? gfx_fail(LSIM_EINTERNAL, "SDL_RenderFillRect", SDL_GetError()) : 0;
}

static int box(void *ctx, int x, int y, int w, int h, struct palette_rgb c) {
    struct gfx *g = ctx;
    return gfx_paint_box(g->r, x, y, w, h, c);
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
                   ? gfx_fail(LSIM_EINTERNAL, "SDL_RenderGeometry", SDL_GetError())
                   : 0;
}

int gfx_paint_line(SDL_Renderer *r, int x0, int y0, int x1, int y1, int width, struct palette_rgb c) {
    color(r, c);
    if (x0 == x1 || y0 == y1) { /* whole pixels, as the SVG's rectangles */
        SDL_Rect rc;
        if (x0 == x1) rc = (SDL_Rect){x0 - width / 2, y0 < y1 ? y0 : y1, width, abs(y1 - y0) + 1};
        else rc = (SDL_Rect){x0 < x1 ? x0 : x1, y0 - width / 2, abs(x1 - x0) + 1, width};
        return SDL_RenderFillRect(r, &rc) ? gfx_fail(LSIM_EINTERNAL, "SDL_RenderFillRect", SDL_GetError()) : 0;
    }
    for (int k = 0; k < width; k++)
        if (SDL_RenderDrawLine(r, x0 + k, y0, x1 + k, y1))
            return gfx_fail(LSIM_EINTERNAL, "SDL_RenderDrawLine", SDL_GetError());
    return 0;
}

static int line(void *ctx, int x0, int y0, int x1, int y1, int width, struct palette_rgb c) {
    struct gfx *g = ctx;
    return gfx_paint_line(g->r, x0, y0, x1, y1, width, c);
}

/* Printable ASCII, as the other backends: n bytes at most with the NUL. */
static size_t ascii(char *buf, size_t n, const char *s) {
    size_t k = 0;
    for (; *s && k + 1 < n; s++) {
        unsigned char ch = (unsigned char)*s;
        buf[k++] = ch < 0x20 || ch > 0x7e ? '?' : (char)ch;
    }
    buf[k] = '\0';
    return k;
}

static TTF_Font *font_for(struct gfx_fonts *f, int px, int bold) { return f->font[px != PALETTE_TEXT_PX][bold != 0]; }

static void cache_flush(struct gfx_fonts *f) {
    for (size_t i = 0; f->cache && i < GFX_TEXT_CACHE; i++)
        if (f->cache[i].t) SDL_DestroyTexture(f->cache[i].t);
    if (f->cache) memset(f->cache, 0, GFX_TEXT_CACHE * sizeof *f->cache);
    f->ncache = 0;
}

/* The slot of a short text in the cache: its own, or the free one where it
 * goes; NULL when the cache cannot be had (then the text is drawn afresh). */
static struct gfx_text_tex *cache_slot(struct gfx_fonts *f, SDL_Renderer *r, const char *s, size_t len, int title,
                                       int bold, struct palette_rgb c) {
    if (len == 0 || len >= sizeof f->cache[0].s) return NULL;
    if (!f->cache && !(f->cache = calloc(GFX_TEXT_CACHE, sizeof *f->cache))) return NULL;
    if (f->cache_r != r || f->ncache >= GFX_TEXT_CACHE / 4 * 3) { /* another renderer, or full: start over */
        cache_flush(f);
        f->cache_r = r;
    }
    uint32_t h = 2166136261u; /* FNV-1a over the text and its look */
    for (size_t i = 0; i < len; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
    h = (h ^ (uint32_t)(title * 2 + bold)) * 16777619u;
    h = (h ^ (uint32_t)(c.r << 16 | c.g << 8 | c.b)) * 16777619u;
    for (size_t k = 0; k < GFX_TEXT_CACHE; k++) {
        struct gfx_text_tex *e = &f->cache[(h + k) % GFX_TEXT_CACHE];
        if (!e->s[0]) return e;
        if (e->px_title == title && e->bold == bold && e->c.r == c.r && e->c.g == c.g && e->c.b == c.b &&
            strcmp(e->s, s) == 0)
            return e;
    }
    return NULL;
}

int gfx_paint_text(SDL_Renderer *r, struct gfx_fonts *f, int x, int y, int h, const char *s, int px, int bold,
                   struct palette_rgb c) {
    char buf[512];
    size_t len = ascii(buf, sizeof buf, s);
    if (!len) return 0;
    int title = px != PALETTE_TEXT_PX;
    struct gfx_text_tex *e = cache_slot(f, r, buf, len, title, bold != 0, c);
    if (e && e->t) { /* drawn before: the same pixels again */
        SDL_Rect dst = {x, y + (h - e->h) / 2, e->w, e->h};
        return SDL_RenderCopy(r, e->t, NULL, &dst) ? gfx_fail(LSIM_EINTERNAL, "SDL_RenderCopy", SDL_GetError()) : 0;
    }
    SDL_Surface *ts = TTF_RenderText_Blended(font_for(f, px, bold), buf, (SDL_Color){c.r, c.g, c.b, 255});
    if (!ts) return gfx_fail(LSIM_ENOMEM, "TTF_RenderText_Blended", TTF_GetError());
    SDL_Texture *t = SDL_CreateTextureFromSurface(r, ts);
    if (!t) {
        SDL_FreeSurface(ts);
        return gfx_fail(LSIM_ENOMEM, "SDL_CreateTextureFromSurface", SDL_GetError());
    }
    SDL_Rect dst = {x, y + (h - ts->h) / 2, ts->w, ts->h};
    int rc = SDL_RenderCopy(r, t, NULL, &dst);
    if (e) { /* kept for the next time */
        memcpy(e->s, buf, len + 1);
        e->px_title = (uint8_t)title;
        e->bold = (uint8_t)(bold != 0);
        e->c = c;
        e->t = t;
        e->w = ts->w;
        e->h = ts->h;
        f->ncache++;
    } else {
        SDL_DestroyTexture(t);
    }
    SDL_FreeSurface(ts);
    return rc ? gfx_fail(LSIM_EINTERNAL, "SDL_RenderCopy", SDL_GetError()) : 0;
}

int gfx_paint_text_line(SDL_Renderer *r, struct gfx_fonts *f, struct gfx_text_line *keep, int x, int y, int h,
                        const char *s, int px, int bold, struct palette_rgb c) {
    char buf[512];
    size_t len = ascii(buf, sizeof buf, s);
    if (!len) return 0;
    bold = bold != 0;
    if (!keep->t || keep->r != r || keep->px != px || keep->bold != bold || keep->c.r != c.r || keep->c.g != c.g ||
        keep->c.b != c.b || strcmp(keep->s, buf) != 0) {
        gfx_text_line_close(keep);
        SDL_Surface *ts = TTF_RenderText_Blended(font_for(f, px, bold), buf, (SDL_Color){c.r, c.g, c.b, 255});
        if (!ts) return gfx_fail(LSIM_ENOMEM, "TTF_RenderText_Blended", TTF_GetError());
        keep->t = SDL_CreateTextureFromSurface(r, ts);
        keep->w = ts->w;
        keep->h = ts->h;
        SDL_FreeSurface(ts);
        if (!keep->t) return gfx_fail(LSIM_ENOMEM, "SDL_CreateTextureFromSurface", SDL_GetError());
        memcpy(keep->s, buf, len + 1);
        keep->px = px;
        keep->bold = bold;
        keep->c = c;
        keep->r = r;
    }
    SDL_Rect dst = {x, y + (h - keep->h) / 2, keep->w, keep->h};
    return SDL_RenderCopy(r, keep->t, NULL, &dst) ? gfx_fail(LSIM_EINTERNAL, "SDL_RenderCopy", SDL_GetError()) : 0;
}

void gfx_text_line_close(struct gfx_text_line *keep) {
    if (keep->t) SDL_DestroyTexture(keep->t);
    memset(keep, 0, sizeof *keep);
}

int gfx_text_width(struct gfx_fonts *f, const char *s, int px, int bold) {
    char buf[512];
    int w = 0, h = 0;
    if (!ascii(buf, sizeof buf, s)) return 0;
    if (TTF_SizeText(font_for(f, px, bold), buf, &w, &h) != 0) return 0;
    return w;
}

static int text(void *ctx, int x, int y, int h, const char *s, int px, int bold, struct palette_rgb c) {
    struct gfx *g = ctx;
    return gfx_paint_text(g->r, g->f, x, y, h, s, px, bold, c);
}

int gfx_fonts_open(struct gfx_fonts *f) { return gfx_fonts_open_px(f, PALETTE_TEXT_PX, PALETTE_TITLE_PX); }

int gfx_fonts_open_px(struct gfx_fonts *f, int text_px, int title_px) {
    static const char *const files[2] = {GFX_FONT_MONO, GFX_FONT_MONO_BOLD};
    for (int t = 0; t < 2; t++)
        for (int b = 0; b < 2; b++) {
            FILE *probe = fopen(files[b], "rb");
            if (!probe)
                return gfx_fail(LSIM_ENOINPUT, files[b],
                                "font missing; install the Debian package fonts-dejavu-core "
                                "(apt-get install fonts-dejavu-core)");
            fclose(probe);
            f->font[t][b] = TTF_OpenFont(files[b], t ? title_px : text_px);
            if (!f->font[t][b]) return gfx_fail(LSIM_EINTERNAL, "TTF_OpenFont", TTF_GetError());
            TTF_SetFontHinting(f->font[t][b], TTF_HINTING_NORMAL);
        }
    return 0;
}

void gfx_fonts_close(struct gfx_fonts *f) {
    cache_flush(f);
    free(f->cache);
    for (int t = 0; t < 2; t++)
        for (int b = 0; b < 2; b++)
            if (f->font[t][b]) TTF_CloseFont(f->font[t][b]);
    memset(f, 0, sizeof *f);
}

int gfx_save_png(SDL_Surface *surf, FILE *f, const char *name) {
    return gfx_png_write(surf->pixels, surf->w, surf->h, (size_t)surf->pitch, f, name);
}

int gfx_paint(SDL_Renderer *r, struct gfx_fonts *f, const struct scene *sc, const struct scene_view *v) {
    static const struct paint_ops ops = {box, poly, line, text, NULL, NULL};
    struct gfx g = {r, f};
    return paint_scene(sc, v, &ops, &g);
}
