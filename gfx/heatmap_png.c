/* The safety-region heatmap as PNG (gfx.h): the SVG's picture
 * (render/heatmap_svg.c) drawn pixel for pixel on the geometry both share
 * (heatmap_geom), on the timeline's plain pixel array (gfx/raster.c) with
 * FreeType's DejaVu Sans, saved by the same libpng writer. Part of
 * locksim-png.so, so `sweep --png` and `merge --png` load no SDL. The same
 * heatmap gives the same bytes. */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "gfx.h"
#include "heatmap_svg.h"
#include "pngio.h"
#include "raster.h"

/* [size][bold]: title, text, cell percentages, footnote, a faceted
 * picture's band and section headings. */
enum { F_TITLE, F_TEXT, F_CELL, F_NOTE, F_BAND, F_SECTION, F_COUNT };
static const int font_px[F_COUNT] = {HEATMAP_TITLE_PX, HEATMAP_TEXT_PX, HEATMAP_CELL_PX,
                                     HEATMAP_NOTE_PX,  HEATMAP_BAND_PX, HEATMAP_SECTION_PX};

struct hm {
    struct raster r;
    struct raster_font font[F_COUNT][2];
};

static struct palette_rgb rgb(unsigned c) {
    return (struct palette_rgb){(uint8_t)(c >> 16), (uint8_t)(c >> 8), (uint8_t)c};
}

/* Black text with its baseline at y, anchored at x as SVG's text-anchor;
 * rotated a quarter turn anticlockwise about (x, y) when rot (the y axis's key). */
static int text(struct hm *g, int x, int y, const char *s, int size, int bold, enum raster_anchor a, int rot) {
    return raster_text(&g->r, &g->font[size][bold], x, y, s, a, rot, rgb(0x000000));
}

static int draw(struct hm *g, const struct heatmap *h, const struct heatmap_geom *gm) {
    int rc = text(g, HEATMAP_LEFT, HEATMAP_TITLE_Y, h->title, F_TITLE, 0, RASTER_START, 0);
    if (!rc && h->subtitle)
        rc = raster_text(&g->r, &g->font[F_NOTE][0], HEATMAP_LEFT, HEATMAP_SUBTITLE_Y, h->subtitle, RASTER_START, 0,
                         rgb(0x555555));
    for (int p = 0; p < gm->npanels && !rc; p++) {
        int x0 = heatmap_panel_x(gm, p), y0 = heatmap_panel_y(gm, p), a, z, w;
        heatmap_panel_of(h, gm, p, &a, &z, &w);
        char title[400];
        if (heatmap_panel_starts_section(gm, p)) {
            int sy = heatmap_section_head_y(gm, p);
            if (p) raster_fill(&g->r, 0, sy - HEATMAP_SECTION_PX - 6, gm->width, 1, rgb(HEATMAP_RULE_RGB));
            snprintf(title, sizeof title, "%s=%s", h->w_key, h->w_vals[w]);
            rc = text(g, HEATMAP_LEFT, sy, title, F_SECTION, 1, RASTER_START, 0);
        }
        if (!rc && heatmap_panel_starts_band(gm, p))
            rc = text(g, HEATMAP_LEFT, heatmap_band_head_y(gm, p), h->panels[a], F_BAND, 1, RASTER_START, 0);
        heatmap_panel_title(h, gm, p, title, sizeof title);
        if (!rc) rc = text(g, x0, y0 - 10, title, F_TEXT, !gm->faceted, RASTER_START, 0);
        const struct heatmap_cell *cells = heatmap_panel_cells(h, gm, p);
        for (int y = 0; y < gm->ny && !rc; y++)
            for (int x = 0; x < gm->nx && !rc; x++) {
                const struct heatmap_cell *c = &cells[(size_t)y * (size_t)gm->nx + (size_t)x];
                char col[8];
                heatmap_cell_color(c, col);
                unsigned v = (unsigned)strtoul(col + 1, NULL, 16);
                int cx = x0 + x * HEATMAP_CELL_W, cy = y0 + y * HEATMAP_CELL_H, n = 0, top = 0;
                for (int k = 0; k < HEATMAP_NCLASS; k++) {
                    n += c->count[k];
                    if (c->count[k] > c->count[top]) top = k;
                }
                /* The SVG's white 1-unit stroke: a pixel of white between cells. */
                raster_fill(&g->r, cx, cy, HEATMAP_CELL_W - 1, HEATMAP_CELL_H - 1, rgb(v));
                if (n && c->count[top] != n) {
                    char pct[16];
                    snprintf(pct, sizeof pct, "%.0f%%", 100.0 * heatmap_damage_fraction(c));
                    rc = text(g, cx + HEATMAP_CELL_W / 2, cy + HEATMAP_CELL_H / 2 + 3, pct, F_CELL, 0, RASTER_MIDDLE,
                              0);
                }
            }
        for (int x = 0; x < gm->nx && !rc; x++)
            if (heatmap_x_labelled(h, gm, x))
                rc = text(g, x0 + x * HEATMAP_CELL_W + HEATMAP_CELL_W / 2, heatmap_x_label_y(gm, y0, x), h->x_vals[x],
                          F_TEXT, 0, RASTER_MIDDLE, 0);
        if (!rc) rc = text(g, x0 + gm->pw / 2, heatmap_x_key_y(gm, y0), h->x_key, F_TEXT, 0, RASTER_MIDDLE, 0);
    }
    for (int p = 0; p < gm->npanels && !rc; p++) {
        if (!heatmap_panel_starts_row(gm, p)) continue;
        int y0 = heatmap_panel_y(gm, p);
        for (int y = 0; h->y_key && y < gm->ny && !rc; y++)
            rc = text(g, HEATMAP_LEFT - 6, y0 + y * HEATMAP_CELL_H + HEATMAP_CELL_H / 2 + 4, h->y_vals[y], F_TEXT, 0,
                      RASTER_END, 0);
        if (h->y_key && !rc) rc = text(g, 12, y0 + gm->ph / 2, h->y_key, F_TEXT, 0, RASTER_MIDDLE, 1);
    }
    for (int k = 0; k < HEATMAP_NCLASS && !rc; k++) {
        int lx = HEATMAP_LEFT + k * HEATMAP_LEGEND_STEP, ly = gm->foot + 48;
        raster_fill(&g->r, lx, ly, HEATMAP_SWATCH, HEATMAP_SWATCH, rgb(heatmap_class_rgb((enum heatmap_class)k)));
        rc = text(g, lx + 16, ly + 10, heatmap_class_name((enum heatmap_class)k), F_TEXT, 0, RASTER_START, 0);
    }
    if (!rc) rc = text(g, HEATMAP_LEFT, gm->foot + 76, HEATMAP_NOTE, F_NOTE, 0, RASTER_START, 0);
    return rc;
}

int gfx_heatmap_png(const char *path, FILE *stream, const struct heatmap *h) {
    struct heatmap_geom gm;
    heatmap_geom(h, &gm);
    gfx_clear_error();
    if (gm.width < 1 || gm.height < 1 || gm.nx < 1) return gfx_fail(LSIM_EBAD_VALUE, "empty heatmap", NULL);
    struct hm g;
    memset(&g, 0, sizeof g);
    void *lib = NULL;
    int rc = raster_init(&g.r, gm.width, gm.height, rgb(0xffffff));
    if (rc) rc = gfx_fail(rc, "out of memory", NULL);
    if (!rc) rc = raster_lib_open(&lib);
    static const char *const files[2] = {GFX_FONT_SANS, GFX_FONT_SANS_BOLD};
    for (int s = 0; s < F_COUNT && !rc; s++)
        for (int b = 0; b < 2 && !rc; b++) rc = raster_font_open(&g.font[s][b], lib, files[b], font_px[s]);
    if (!rc) rc = draw(&g, h, &gm);
    if (!rc) {
        FILE *f = path ? fopen(path, "wb") : stream;
        if (!f) rc = gfx_fail(LSIM_EOUTPUT, path, "cannot open for writing");
        else rc = gfx_png_write_rgb(g.r.px, g.r.w, g.r.h, (size_t)g.r.w * 3, f, path ? path : "output stream");
        if (path && f && fclose(f) != 0 && !rc) rc = gfx_fail(LSIM_EOUTPUT, path, "cannot write the PNG");
    }
    for (int s = 0; s < F_COUNT; s++)
        for (int b = 0; b < 2; b++) raster_font_close(&g.font[s][b]);
    raster_lib_close(lib);
    raster_close(&g.r);
    return rc;
}
