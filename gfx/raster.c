/* Raster (raster.h): paint.h's primitives on a plain pixel array, text with
 * FreeType. The shapes are those of SDL's software drawing (gfx/sdl_paint.c): boxes
 * clipped to the canvas, diagonal lines by Bresenham with both ends drawn
 * and widened by shifting right, polygons filled where the pixel centre is
 * inside, glyphs hinted (FT_LOAD_TARGET_NORMAL, SDL2_ttf's
 * TTF_HINTING_NORMAL) and blended by their coverage. Every step is integer
 * arithmetic or the same floating-point operations in the same order, so the
 * same scene gives the same pixels. */
#include "raster.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <ft2build.h>
#include FT_FREETYPE_H
#include FT_MODULE_H

#include "error.h"
#include "gfx.h"
#include "paint.h"
#include "pngio.h"

static uint8_t *at(const struct raster *r, int x, int y) {
    return r->px + (size_t)y * r->pitch + (size_t)x * (size_t)r->bpp;
}

static void put(const struct raster *r, uint8_t *p, struct palette_rgb c) {
    p[r->ro] = c.r;
    p[r->go] = c.g;
    p[r->bo] = c.b;
}

static void fill(struct raster *r, int x, int y, int w, int h, struct palette_rgb v);

int raster_init(struct raster *r, int w, int h, struct palette_rgb c) {
    memset(r, 0, sizeof *r);
    if (w < 1 || h < 1 || (size_t)w > SIZE_MAX / 3 / (size_t)h) return LSIM_ENOMEM;
    size_t row = (size_t)w * 3;
    r->px = malloc(row * (size_t)h);
    if (!r->px) return LSIM_ENOMEM;
    r->w = w;
    r->h = h;
    r->pitch = row;
    r->bpp = 3;
    r->ro = 0, r->go = 1, r->bo = 2;
    r->owned = 1;
    fill(r, 0, 0, w, h, c);
    return 0;
}

int raster_wrap(struct raster *r, void *px, int w, int h, size_t pitch, struct palette_rgb c) {
    memset(r, 0, sizeof *r);
    if (!px || w < 1 || h < 1 || pitch < (size_t)w * 4 || pitch % 4) return LSIM_EBAD_VALUE;
    r->px = px;
    r->w = w;
    r->h = h;
    r->pitch = pitch;
    r->bpp = 4;
    r->ro = 2, r->go = 1, r->bo = 0; /* B, G, R, A in memory */
    fill(r, 0, 0, w, h, c);
    return 0;
}

void raster_close(struct raster *r) {
    if (r->owned) free(r->px);
    memset(r, 0, sizeof *r);
}

static void fill(struct raster *r, int x, int y, int w, int h, struct palette_rgb v) {
    int x1 = x + w, y1 = y + h;
    if (x < 0) x = 0;
    if (y < 0) y = 0;
    if (x1 > r->w) x1 = r->w;
    if (y1 > r->h) y1 = r->h;
    if (x >= x1 || y >= y1) return;
    if (r->bpp == 4) { /* whole 32-bit pixels, row by row (most boxes are a few pixels wide) */
        uint8_t b[4] = {255, 255, 255, 255};
        put(r, b, v);
        uint32_t pix;
        memcpy(&pix, b, sizeof pix);
        for (int j = y; j < y1; j++) {
            uint32_t *p = (uint32_t *)(void *)at(r, x, j);
            for (int i = 0; i < x1 - x; i++) p[i] = pix;
        }
        return;
    }
    for (int i = x; i < x1; i++) put(r, at(r, i, y), v); /* one row, then copies of it */
    for (int j = y + 1; j < y1; j++) memcpy(at(r, x, j), at(r, x, y), (size_t)(x1 - x) * 3);
}

static void plot(struct raster *r, int x, int y, struct palette_rgb v) {
    if (x >= 0 && y >= 0 && x < r->w && y < r->h) put(r, at(r, x, y), v);
}

static int box(void *ctx, int x, int y, int w, int h, struct palette_rgb c) {
    fill(ctx, x, y, w, h, c);
    return 0;
}

/* A convex polygon: per row, the span between its edges' crossings of the
 * row's centre line; a pixel is in when its centre is (left edge in, right
 * edge out, as a triangle rasteriser's top-left rule). */
static int poly(void *ctx, const int *xs, const int *ys, int n, struct palette_rgb c) {
    struct raster *r = ctx;
    if (n < 3 || n > 8) return 0;
    int ymin = ys[0], ymax = ys[0];
    for (int i = 1; i < n; i++) {
        if (ys[i] < ymin) ymin = ys[i];
        if (ys[i] > ymax) ymax = ys[i];
    }
    if (ymin < 0) ymin = 0;
    if (ymax > r->h) ymax = r->h;
    struct palette_rgb v = c;
    for (int y = ymin; y < ymax; y++) {
        double yc = y + 0.5, lo = 1e300, hi = -1e300;
        for (int i = 0; i < n; i++) {
            int j = (i + 1) % n;
            double ya = ys[i], yb = ys[j];
            if (ya == yb || yc < (ya < yb ? ya : yb) || yc >= (ya < yb ? yb : ya)) continue;
            double xc = xs[i] + (xs[j] - xs[i]) * (yc - ya) / (yb - ya);
            if (xc < lo) lo = xc;
            if (xc > hi) hi = xc;
        }
        if (lo > hi) continue;
        /* pixels x with lo <= x + 0.5 < hi */
        int x0 = (int)ceil(lo - 0.5), x1 = (int)ceil(hi - 0.5) - 1;
        if (x1 >= x0) fill(r, x0, y, x1 - x0 + 1, 1, v);
    }
    return 0;
}

/* Bresenham from (x0, y0) to (x1, y1), both ends drawn. */
static void bresenham(struct raster *r, int x0, int y0, int x1, int y1, struct palette_rgb v) {
    int dx = abs(x1 - x0), sx = x0 < x1 ? 1 : -1, dy = -abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    for (;;) {
        plot(r, x0, y0, v);
        if (x0 == x1 && y0 == y1) break;
        int e2 = 2 * err;
        if (e2 >= dy) {
            err += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            err += dx;
            y0 += sy;
        }
    }
}

static int line(void *ctx, int x0, int y0, int x1, int y1, int width, struct palette_rgb c) {
    struct raster *r = ctx;
    struct palette_rgb v = c;
    if (x0 == x1) { /* whole pixels, as the SVG's rectangles */
        fill(r, x0 - width / 2, y0 < y1 ? y0 : y1, width, abs(y1 - y0) + 1, v);
    } else if (y0 == y1) {
        fill(r, x0 < x1 ? x0 : x1, y0 - width / 2, abs(x1 - x0) + 1, width, v);
    } else {
        for (int k = 0; k < width; k++) bresenham(r, x0 + k, y0, x1 + k, y1, v);
    }
    return 0;
}

/* ---- Text ---------------------------------------------------------------- */

struct ft_guard; /* FreeType's guarded memory, below */
static int ft_code(const struct ft_guard *g, FT_Error err, int otherwise);

/* The glyph of printable character ch (' ' .. '~') in *out, rendered on
 * first use. Returns 0, LSIM_EINTERNAL (FreeType failed) or LSIM_ENOMEM. */
static int glyph(struct raster_font *f, int ch, const struct raster_glyph **out) {
    struct raster_glyph *g = &f->g[ch - ' '];
    *out = g;
    if (g->done) return 0;
    FT_Face face = f->face;
    FT_Error e = FT_Load_Char(face, (FT_ULong)ch, FT_LOAD_DEFAULT | FT_LOAD_TARGET_NORMAL);
    if (!e) e = FT_Render_Glyph(face->glyph, FT_RENDER_MODE_NORMAL);
    int rc = ft_code(face->memory->user, e, LSIM_EINTERNAL);
    if (rc == LSIM_ENOMEM) return gfx_fail(rc, "FreeType", "out of memory rendering a glyph");
    if (rc) return gfx_fail(rc, "FreeType", "cannot render a glyph of a DejaVu font");
    FT_GlyphSlot s = face->glyph;
    const FT_Bitmap *b = &s->bitmap;
    g->w = (int)b->width;
    g->h = (int)b->rows;
    g->left = s->bitmap_left;
    g->top = s->bitmap_top;
    g->advance = (int)((s->advance.x + 32) >> 6);
    if (g->w > 0 && g->h > 0) {
        g->cov = malloc((size_t)g->w * (size_t)g->h);
        if (!g->cov) return gfx_fail(LSIM_ENOMEM, "out of memory", NULL);
        for (int y = 0; y < g->h; y++)
            memcpy(g->cov + (size_t)y * (size_t)g->w, b->buffer + (ptrdiff_t)y * b->pitch, (size_t)g->w);
    }
    g->done = 1;
    return 0;
}

/* Channel d blended towards c by coverage a (1..254): d + (c - d) * a / 256
 * rounded down, as SDL's blit of an ARGB glyph surface onto an XRGB one
 * (SDL_blit_A.c, BlitRGBtoRGBPixelAlpha), so the text looks as the
 * window's. */
static uint8_t blend(uint8_t d, uint8_t c, int a) {
    int t = ((int)c - (int)d) * a;
    return (uint8_t)((int)d + (t >= 0 ? t / 256 : -((-t + 255) / 256)));
}

struct raster_ctx {
    struct raster *r;
    struct raster_fonts *f;
};

/* Glyph coverage (u, v) from the pivot, u along the text and v down from
 * the baseline, to the canvas: as it is, or a quarter turn anticlockwise
 * (along the text is up the canvas, below the baseline is to the right). */
static void blend_at(struct raster *r, int px, int py, unsigned a, struct palette_rgb c) {
    if (!a || px < 0 || px >= r->w || py < 0 || py >= r->h) return;
    uint8_t *p = at(r, px, py);
    if (a == 255) {
        put(r, p, c);
    } else {
        p[r->ro] = blend(p[r->ro], c.r, (int)a);
        p[r->go] = blend(p[r->go], c.g, (int)a);
        p[r->bo] = blend(p[r->bo], c.b, (int)a);
    }
}

/* s with its pen starting u0 along the baseline from the pivot (x, y). */
static int glyphs(struct raster *r, struct raster_font *f, int x, int y, int u0, const char *s, int rot,
                  struct palette_rgb c) {
    int pen = u0;
    for (; *s; s++) {
        int ch = (unsigned char)*s;
        if (ch < 0x20 || ch > 0x7e) ch = '?'; /* printable ASCII, as the other backends */
        const struct raster_glyph *gl;
        int rc = glyph(f, ch, &gl);
        if (rc) return rc;
        for (int j = 0; j < gl->h; j++) {
            int v = j - gl->top; /* below the baseline */
            const unsigned char *cv = gl->cov + (size_t)j * (size_t)gl->w;
            for (int i = 0; i < gl->w; i++) {
                int u = pen + gl->left + i;
                if (rot) blend_at(r, x + v, y - u, cv[i], c);
                else blend_at(r, x + u, y + v, cv[i], c);
            }
        }
        pen += gl->advance;
    }
    return 0;
}

static int text(void *ctx, int x, int y, int h, const char *s, int px, int bold, struct palette_rgb c) {
    struct raster_ctx *g = ctx;
    struct raster_font *f = &g->f->font[px != PALETTE_TEXT_PX][bold != 0];
    return glyphs(g->r, f, 0, y + g->r->dy + (h - f->height) / 2 + f->ascent, x, s, 0, c);
}

int raster_text_width(struct raster_font *f, const char *s, int *w) {
    *w = 0;
    for (; s && *s; s++) {
        int ch = (unsigned char)*s;
        if (ch < 0x20 || ch > 0x7e) ch = '?';
        const struct raster_glyph *gl;
        int rc = glyph(f, ch, &gl);
        if (rc) return rc;
        *w += gl->advance;
    }
    return 0;
}

int raster_text(struct raster *r, struct raster_font *f, int x, int y, const char *s, enum raster_anchor a, int rot,
                struct palette_rgb c) {
    if (!s || !*s) return 0;
    int w = 0, rc = a == RASTER_START ? 0 : raster_text_width(f, s, &w);
    if (rc) return rc;
    return glyphs(r, f, x, y, a == RASTER_START ? 0 : a == RASTER_MIDDLE ? -(w / 2) : -w, s, rot, c);
}

void raster_fill(struct raster *r, int x, int y, int w, int h, struct palette_rgb c) { fill(r, x, y, w, h, c); }

/* ---- Fonts --------------------------------------------------------------- */

/* FreeType's memory, guarded. FreeType does not survive every allocation
 * failure (FT_Load_Glyph can crash after one of its own fails), so it never
 * sees one: when malloc fails, the block comes from a reserve made with the
 * library, the guard notes the shortage, and the call that ran short is
 * then failed by us with LSIM_ENOMEM (ft_code). Reserve blocks are never
 * reused; the reserve goes with the library. */
#define FT_RESERVE_BYTES (512u * 1024u)
struct ft_guard {
    struct FT_MemoryRec_ mem; /* user = this guard */
    FT_Library ft;
    int short_of_memory; /* 1 = FreeType needed the reserve: out of memory */
    size_t used;         /* bytes of reserve handed out */
    _Alignas(max_align_t) unsigned char reserve[FT_RESERVE_BYTES];
};

static void *reserve_take(struct ft_guard *g, size_t n) {
    size_t a = _Alignof(max_align_t);
    n = (n + a - 1) / a * a;
    g->short_of_memory = 1;
    if (n > sizeof g->reserve - g->used) return NULL;
    void *p = g->reserve + g->used;
    g->used += n;
    return p;
}

static int in_reserve(const struct ft_guard *g, const void *p) {
    const unsigned char *b = p;
    return b >= g->reserve && b < g->reserve + sizeof g->reserve;
}

static void *ft_alloc(FT_Memory m, long size) {
    void *p = malloc((size_t)size);
    return p ? p : reserve_take(m->user, (size_t)size);
}

static void ft_free(FT_Memory m, void *block) {
    if (!in_reserve(m->user, block)) free(block);
}

static void *ft_realloc(FT_Memory m, long cur, long size, void *block) {
    struct ft_guard *g = m->user;
    if (!in_reserve(g, block)) {
        void *q = realloc(block, (size_t)size);
        if (q) return q;
    }
    void *q = ft_alloc(m, size);
    if (!q) return NULL;
    memcpy(q, block, (size_t)(cur < size ? cur : size));
    ft_free(m, block);
    return q;
}

/* The code for FreeType's error err (0 = none) in a call on lib's memory
 * (a face's memory->user, or the guard): LSIM_ENOMEM when FreeType said so
 * or ran short and took the reserve, else 0 or otherwise. */
static int ft_code(const struct ft_guard *g, FT_Error err, int otherwise) {
    if (g->short_of_memory || err == FT_Err_Out_Of_Memory) return LSIM_ENOMEM;
    return err ? otherwise : 0;
}

int raster_lib_open(void **lib) {
    *lib = NULL;
    struct ft_guard *g = calloc(1, sizeof *g);
    if (!g) return gfx_fail(LSIM_ENOMEM, "out of memory", NULL);
    g->mem = (struct FT_MemoryRec_){.user = g, .alloc = ft_alloc, .free = ft_free, .realloc = ft_realloc};
    /* What FT_Init_FreeType does, on the guarded memory. */
    FT_Error e = FT_New_Library(&g->mem, &g->ft);
    if (!e) {
        FT_Add_Default_Modules(g->ft);
        FT_Set_Default_Properties(g->ft);
    }
    int rc = ft_code(g, e, LSIM_EINTERNAL);
    if (rc) {
        raster_lib_close(g);
        return gfx_fail(rc, "FreeType", rc == LSIM_ENOMEM ? "out of memory" : "cannot start");
    }
    *lib = g;
    return 0;
}

void raster_lib_close(void *lib) {
    struct ft_guard *g = lib;
    if (!g) return;
    if (g->ft) FT_Done_Library(g->ft);
    free(g);
}

int raster_font_open(struct raster_font *rf, void *lib, const char *file, int px) {
    memset(rf, 0, sizeof *rf);
    struct ft_guard *g = lib;
    FILE *probe = fopen(file, "rb");
    if (!probe && errno == ENOMEM) return gfx_fail(LSIM_ENOMEM, file, "out of memory opening the font");
    if (!probe)
        return gfx_fail(LSIM_ENOINPUT, file,
                        "font missing; install the Debian package fonts-dejavu-core "
                        "(apt-get install fonts-dejavu-core)");
    fclose(probe);
    FT_Face face;
    int rc = ft_code(g, FT_New_Face(g->ft, file, 0, &face), LSIM_EINTERNAL);
    if (rc == 0) rf->face = face;
    if (rc == LSIM_ENOMEM) return gfx_fail(rc, file, "out of memory opening the font");
    if (rc) return gfx_fail(rc, file, "FreeType cannot open the font");
    rc = ft_code(g, FT_Set_Char_Size(face, 0, (FT_F26Dot6)px * 64, 0, 0), LSIM_EINTERNAL);
    if (rc == LSIM_ENOMEM) return gfx_fail(rc, file, "out of memory sizing the font");
    if (rc) return gfx_fail(rc, file, "FreeType cannot size the font");
    /* SDL2_ttf's metrics of a scalable font: ascent and descent
     * rounded up from the face's units, height their difference */
    FT_Fixed scale = face->size->metrics.y_scale;
    int asc = (int)((FT_MulFix(face->ascender, scale) + 63) >> 6);
    int desc = (int)((FT_MulFix(face->descender, scale) + 63) >> 6);
    rf->ascent = asc;
    rf->height = asc - desc;
    return 0;
}

void raster_font_close(struct raster_font *rf) {
    for (int i = 0; i < 95; i++) free(rf->g[i].cov);
    if (rf->face) FT_Done_Face(rf->face);
    memset(rf, 0, sizeof *rf);
}

int raster_fonts_open(struct raster_fonts *f) { return raster_fonts_open_px(f, PALETTE_TEXT_PX, PALETTE_TITLE_PX); }

int raster_fonts_open_px(struct raster_fonts *f, int text_px, int title_px) {
    static const char *const files[2] = {GFX_FONT_MONO, GFX_FONT_MONO_BOLD};
    memset(f, 0, sizeof *f);
    int rc = raster_lib_open(&f->lib);
    for (int t = 0; t < 2 && !rc; t++)
        for (int b = 0; b < 2 && !rc; b++)
            rc = raster_font_open(&f->font[t][b], f->lib, files[b], t ? title_px : text_px);
    return rc;
}

void raster_fonts_close(struct raster_fonts *f) {
    for (int t = 0; t < 2; t++)
        for (int b = 0; b < 2; b++) raster_font_close(&f->font[t][b]);
    raster_lib_close(f->lib);
    memset(f, 0, sizeof *f);
}

/* The callbacks of paint_scene: ctx is a struct raster_ctx; every y moves
 * by the canvas's dy. */
static int box_c(void *ctx, int x, int y, int w, int h, struct palette_rgb c) {
    struct raster *r = ((struct raster_ctx *)ctx)->r;
    return box(r, x, y + r->dy, w, h, c);
}
static int poly_c(void *ctx, const int *xs, const int *ys, int n, struct palette_rgb c) {
    struct raster *r = ((struct raster_ctx *)ctx)->r;
    int moved[8];
    if (n < 3 || n > 8) return 0;
    for (int i = 0; i < n; i++) moved[i] = ys[i] + r->dy;
    return poly(r, xs, moved, n, c);
}
static int line_c(void *ctx, int x0, int y0, int x1, int y1, int width, struct palette_rgb c) {
    struct raster *r = ((struct raster_ctx *)ctx)->r;
    return line(r, x0, y0 + r->dy, x1, y1 + r->dy, width, c);
}

int raster_paint(struct raster *r, struct raster_fonts *f, const struct scene *sc, const struct scene_view *v) {
    static const struct paint_ops ops = {box_c, poly_c, line_c, text, NULL, NULL};
    struct raster_ctx g = {r, f};
    return paint_scene(sc, v, &ops, &g);
}
