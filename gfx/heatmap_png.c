/* The safety-region heatmap as PNG (gfx.h): the SVG's picture
 * (render/heatmap_svg.c) drawn pixel for pixel on the geometry both share
 * (heatmap_geom), with SDL2's software renderer on a surface and SDL2_ttf's
 * DejaVu Sans, saved by the same libpng writer as the timeline. The same
 * heatmap gives the same bytes. */
#include <stdlib.h>
#include <string.h>

#include <SDL.h>
#include <SDL_ttf.h>

#include "error.h"
#include "gfx.h"
#include "heatmap_svg.h"
#include "sdl_paint.h"

/* [size][bold]: title, text, cell percentages, footnote. */
enum { F_TITLE, F_TEXT, F_CELL, F_NOTE, F_COUNT };
static const int font_px[F_COUNT] = {HEATMAP_TITLE_PX, HEATMAP_TEXT_PX, HEATMAP_CELL_PX, HEATMAP_NOTE_PX};

struct hm {
    SDL_Renderer *r;
    TTF_Font *font[F_COUNT][2];
};

enum anchor { A_START, A_MIDDLE, A_END };

static SDL_Color rgb(unsigned c) { return (SDL_Color){(Uint8)(c >> 16), (Uint8)(c >> 8), (Uint8)c, 255}; }

static int fill(struct hm *g, int x, int y, int w, int h, unsigned c) {
    SDL_Rect rc = {x, y, w, h};
    SDL_SetRenderDrawColor(g->r, (Uint8)(c >> 16), (Uint8)(c >> 8), (Uint8)c, 255);
    return SDL_RenderFillRect(g->r, &rc) ? gfx_fail(LSIM_EINTERNAL, "SDL_RenderFillRect", SDL_GetError()) : 0;
}

/* Text with its baseline at y, anchored at x as SVG's text-anchor; rotated
 * a quarter turn anticlockwise about (x, y) when rot (the y axis's key).
 * Characters outside printable ASCII are drawn as '?'. */
static int text(struct hm *g, int x, int y, const char *s, int size, int bold, enum anchor a, int rot) {
    char buf[512];
    size_t n = 0;
    for (; s && *s && n + 1 < sizeof buf; s++) buf[n++] = (*s >= 32 && *s < 127) ? *s : '?';
    buf[n] = '\0';
    if (!n) return 0;
    TTF_Font *f = g->font[size][bold];
    SDL_Surface *ts = TTF_RenderUTF8_Blended(f, buf, rgb(0x000000));
    if (!ts) return gfx_fail(LSIM_EINTERNAL, "TTF_RenderUTF8_Blended", TTF_GetError());
    SDL_Texture *tx = SDL_CreateTextureFromSurface(g->r, ts);
    int rc = 0;
    if (!tx) rc = gfx_fail(LSIM_EINTERNAL, "SDL_CreateTextureFromSurface", SDL_GetError());
    else {
        int w = ts->w, h = ts->h, asc = TTF_FontAscent(f);
        int dx = a == A_START ? 0 : a == A_MIDDLE ? w / 2 : w;
        if (!rot) {
            SDL_Rect dst = {x - dx, y - asc, w, h};
            if (SDL_RenderCopy(g->r, tx, NULL, &dst)) rc = gfx_fail(LSIM_EINTERNAL, "SDL_RenderCopy", SDL_GetError());
        } else {
            /* Unrotated, the text would sit at (x - dx, y - asc); turned
             * -90 degrees about (x, y) it runs upwards from there. */
            SDL_Rect dst = {x - dx, y - asc, w, h};
            SDL_Point c = {dx, asc};
            if (SDL_RenderCopyEx(g->r, tx, NULL, &dst, -90.0, &c, SDL_FLIP_NONE))
                rc = gfx_fail(LSIM_EINTERNAL, "SDL_RenderCopyEx", SDL_GetError());
        }
        SDL_DestroyTexture(tx);
    }
    SDL_FreeSurface(ts);
    return rc;
}

static int draw(struct hm *g, const struct heatmap *h) {
    struct heatmap_geom gm;
    heatmap_geom(h, &gm);
    int rc = fill(g, 0, 0, gm.width, gm.height, 0xffffff);
    if (!rc) rc = text(g, HEATMAP_LEFT, HEATMAP_TITLE_Y, h->title, F_TITLE, 0, A_START, 0);
    for (int p = 0; p < h->npanels && !rc; p++) {
        int x0 = heatmap_panel_x(&gm, p);
        rc = text(g, x0, HEATMAP_TOP - 10, h->panels[p], F_TEXT, 1, A_START, 0);
        for (int y = 0; y < gm.ny && !rc; y++)
            for (int x = 0; x < gm.nx && !rc; x++) {
                const struct heatmap_cell *c =
                    &h->cells[((size_t)p * (size_t)gm.ny + (size_t)y) * (size_t)gm.nx + (size_t)x];
                char col[8];
                heatmap_cell_color(c, col);
                unsigned v = (unsigned)strtoul(col + 1, NULL, 16);
                int cx = x0 + x * HEATMAP_CELL_W, cy = HEATMAP_TOP + y * HEATMAP_CELL_H, n = 0, top = 0;
                for (int k = 0; k < HEATMAP_NCLASS; k++) {
                    n += c->count[k];
                    if (c->count[k] > c->count[top]) top = k;
                }
                /* The SVG's white 1-unit stroke: a pixel of white between cells. */
                rc = fill(g, cx, cy, HEATMAP_CELL_W - 1, HEATMAP_CELL_H - 1, v);
                if (!rc && n && c->count[top] != n) {
                    char pct[16];
                    snprintf(pct, sizeof pct, "%.0f%%", 100.0 * heatmap_unsafe_fraction(c));
                    rc = text(g, cx + HEATMAP_CELL_W / 2, cy + HEATMAP_CELL_H / 2 + 3, pct, F_CELL, 0, A_MIDDLE, 0);
                }
            }
        for (int x = 0; x < gm.nx && !rc; x += gm.every)
            rc = text(g, x0 + x * HEATMAP_CELL_W + HEATMAP_CELL_W / 2, HEATMAP_TOP + gm.ph + 14, h->x_vals[x], F_TEXT,
                      0, A_MIDDLE, 0);
        if (!rc) rc = text(g, x0 + gm.pw / 2, HEATMAP_TOP + gm.ph + 30, h->x_key, F_TEXT, 0, A_MIDDLE, 0);
    }
    for (int y = 0; h->y_key && y < gm.ny && !rc; y++)
        rc = text(g, HEATMAP_LEFT - 6, HEATMAP_TOP + y * HEATMAP_CELL_H + HEATMAP_CELL_H / 2 + 4, h->y_vals[y], F_TEXT,
                  0, A_END, 0);
    if (h->y_key && !rc) rc = text(g, 12, HEATMAP_TOP + gm.ph / 2, h->y_key, F_TEXT, 0, A_MIDDLE, 1);
    for (int k = 0; k < HEATMAP_NCLASS && !rc; k++) {
        int lx = HEATMAP_LEFT + k * HEATMAP_LEGEND_STEP, ly = HEATMAP_TOP + gm.ph + 48;
        rc = fill(g, lx, ly, HEATMAP_SWATCH, HEATMAP_SWATCH, heatmap_class_rgb((enum heatmap_class)k));
        if (!rc) rc = text(g, lx + 16, ly + 10, heatmap_class_name((enum heatmap_class)k), F_TEXT, 0, A_START, 0);
    }
    if (!rc) rc = text(g, HEATMAP_LEFT, HEATMAP_TOP + gm.ph + 76, HEATMAP_NOTE, F_NOTE, 0, A_START, 0);
    return rc;
}

int gfx_heatmap_png(const char *path, FILE *stream, const struct heatmap *h) {
    struct heatmap_geom gm;
    heatmap_geom(h, &gm);
    gfx_clear_error();
    if (gm.width < 1 || gm.height < 1 || gm.nx < 1) return gfx_fail(LSIM_EBAD_VALUE, "empty heatmap", NULL);
    if (TTF_Init() != 0) return gfx_fail(LSIM_EINTERNAL, "TTF_Init", TTF_GetError());
    struct hm g;
    memset(&g, 0, sizeof g);
    int rc = 0;
    static const char *const files[2] = {GFX_FONT_SANS, GFX_FONT_SANS_BOLD};
    for (int s = 0; s < F_COUNT && !rc; s++)
        for (int b = 0; b < 2 && !rc; b++)
            if (!(g.font[s][b] = TTF_OpenFont(files[b], font_px[s])))
                rc = gfx_fail(LSIM_ENOINPUT, files[b], "cannot open the font (Debian package fonts-dejavu-core)");
    SDL_Surface *surf = NULL;
    if (!rc && !(surf = SDL_CreateRGBSurfaceWithFormat(0, gm.width, gm.height, 32, SDL_PIXELFORMAT_XRGB8888)))
        rc = gfx_fail(LSIM_ENOMEM, "SDL_CreateRGBSurfaceWithFormat", SDL_GetError());
    if (!rc && !(g.r = SDL_CreateSoftwareRenderer(surf)))
        rc = gfx_fail(LSIM_EINTERNAL, "SDL_CreateSoftwareRenderer", SDL_GetError());
    if (!rc) rc = draw(&g, h);
    if (!rc) SDL_RenderPresent(g.r);
    if (!rc) {
        FILE *f = path ? fopen(path, "wb") : stream;
        if (!f) rc = gfx_fail(LSIM_EOUTPUT, path, "cannot open for writing");
        else rc = gfx_save_png(surf, f, path ? path : "output stream");
        if (path && f && fclose(f) != 0 && !rc) rc = gfx_fail(LSIM_EOUTPUT, path, "cannot write the PNG");
    }
    for (int s = 0; s < F_COUNT; s++)
        for (int b = 0; b < 2; b++)
            if (g.font[s][b]) TTF_CloseFont(g.font[s][b]);
    if (g.r) SDL_DestroyRenderer(g.r);
    SDL_FreeSurface(surf);
    TTF_Quit();
    return rc;
}
