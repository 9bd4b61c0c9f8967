/* The animated GIF of a reveal (`render FILE -o story.gif`, issue 21): each
 * frame painted as the PNG is (gfx_paint_panels), mapped to one fixed
 * palette made from the project's (render/palette.c) and encoded by giflib.
 * Part of locksim-png.so, so the binary itself needs no image library.
 *
 * The palette is the same for every picture: the styles' fills and inks
 * first, exactly, then what anti-aliased text makes of them (an ink part
 * covering the background or a fill); any other colour goes to the nearest
 * entry (the lowest index on a tie). So a box's colour is exact, a glyph's
 * edge nearly so, and the same frames give the same bytes. A frame like the
 * one before it is not written again: the one before is shown longer; a
 * frame written holds only the rectangle where it differs from the last one
 * written (drawn over it: disposal "do not dispose"), which keeps a reveal
 * small. The animation loops forever (NETSCAPE2.0). */
#include "gfx.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gif_lib.h>

#include "error.h"
#include "palette.h"
#include "pngio.h"
#include "raster.h"

#define NCOLORS 256

/* A colour's index in p[0 .. n-1], or -1. */
static int find(const struct palette_rgb *p, int n, struct palette_rgb c) {
    for (int i = 0; i < n; i++)
        if (p[i].r == c.r && p[i].g == c.g && p[i].b == c.b) return i;
    return -1;
}

static void add(struct palette_rgb *p, int *n, struct palette_rgb c) {
    if (*n < NCOLORS && find(p, *n, c) < 0) p[(*n)++] = c;
}

/* ink covering k / parts of under, rounded */
static struct palette_rgb mix(struct palette_rgb ink, struct palette_rgb under, int k, int parts) {
    struct palette_rgb m;
    m.r = (uint8_t)((under.r * (parts - k) + ink.r * k + parts / 2) / parts);
    m.g = (uint8_t)((under.g * (parts - k) + ink.g * k + parts / 2) / parts);
    m.b = (uint8_t)((under.b * (parts - k) + ink.b * k + parts / 2) / parts);
    return m;
}

/* The palette, in this order while there is room: the background, the
 * outline, every style's fill and ink; each ink over the background at 1/8
 * .. 7/8; each style's ink over its own fill at 1/4, 1/2, 3/4; every ink
 * over every fill at 1/2. Unused entries repeat entry 0. */
static void build_palette(struct palette_rgb p[NCOLORS]) {
    int n = 0;
    add(p, &n, palette_background);
    add(p, &n, palette_outline);
    for (int s = 0; s < SCENE_ST_COUNT; s++) {
        add(p, &n, palette_look(s)->fill);
        add(p, &n, palette_look(s)->ink);
    }
    for (int s = 0; s < SCENE_ST_COUNT; s++)
        for (int k = 1; k < 8; k++) add(p, &n, mix(palette_look(s)->ink, palette_background, k, 8));
    for (int s = 0; s < SCENE_ST_COUNT; s++)
        for (int k = 1; k < 4; k++) add(p, &n, mix(palette_look(s)->ink, palette_look(s)->fill, k, 4));
    for (int s = 0; s < SCENE_ST_COUNT; s++)
        for (int t = 0; t < SCENE_ST_COUNT; t++) add(p, &n, mix(palette_look(s)->ink, palette_look(t)->fill, 1, 2));
    for (int i = n; i < NCOLORS; i++) p[i] = p[0];
}

/* The nearest entry of the palette (squared RGB distance, the lowest index
 * on a tie), each colour looked up once: an open-addressed table of the
 * colours seen (a frame has a few thousand at most). */
#define CACHE_SIZE 65536
struct quant {
    struct palette_rgb pal[NCOLORS];
    uint32_t key[CACHE_SIZE]; /* colour + 1, 0 = empty */
    uint8_t idx[CACHE_SIZE];
    size_t used;
};

static uint8_t nearest(const struct quant *q, struct palette_rgb c) {
    int best = 0;
    long bd = -1;
    for (int i = 0; i < NCOLORS; i++) {
        long dr = (long)c.r - q->pal[i].r, dg = (long)c.g - q->pal[i].g, db = (long)c.b - q->pal[i].b;
        long d = dr * dr + dg * dg + db * db;
        if (bd < 0 || d < bd) {
            bd = d;
            best = i;
        }
    }
    return (uint8_t)best;
}

static uint8_t quantise(struct quant *q, struct palette_rgb c) {
    uint32_t k = ((uint32_t)c.r << 16 | (uint32_t)c.g << 8 | c.b) + 1;
    uint32_t h = (k * 2654435761u) >> 16;
    for (;; h = (h + 1) & (CACHE_SIZE - 1)) {
        if (q->key[h] == k) return q->idx[h];
        if (!q->key[h]) break;
    }
    uint8_t i = nearest(q, c);
    if (q->used < CACHE_SIZE / 2) { /* past half full, look up without keeping */
        q->key[h] = k;
        q->idx[h] = i;
        q->used++;
    }
    return i;
}

static int put_bytes(GifFileType *g, const GifByteType *b, int n) {
    return (int)fwrite(b, 1, (size_t)n, (FILE *)g->UserData);
}

/* giflib's error as ours: a short write stays on the stream (the caller
 * names it), want of memory is LSIM_ENOMEM, anything else internal. */
static int gif_fail(int err, FILE *f, const char *name) {
    if (err == E_GIF_ERR_WRITE_FAILED || ferror(f)) return gfx_fail(LSIM_EOUTPUT, name, "cannot write the GIF");
    if (err == E_GIF_ERR_NOT_ENOUGH_MEM) return gfx_fail(LSIM_ENOMEM, "giflib: out of memory", NULL);
    const char *why = GifErrorString(err);
    return gfx_fail(LSIM_EINTERNAL, "giflib", why ? why : "unknown error");
}

struct anim {
    GifFileType *g;
    int w, h;
    uint8_t *last, *pend, *cur; /* w * h indices each: the last frame written, the one waiting, the new one */
    int have_last, have_pend;
    long pend_cs; /* how long the waiting frame shows, in 1/100 s */
};

static int start(struct anim *a, FILE *f, const char *name, const struct quant *q) {
    int err = 0;
    a->g = EGifOpen(f, put_bytes, &err);
    if (!a->g) return gif_fail(err, f, name);
    GifColorType colors[NCOLORS];
    for (int i = 0; i < NCOLORS; i++) colors[i] = (GifColorType){q->pal[i].r, q->pal[i].g, q->pal[i].b};
    ColorMapObject *map = GifMakeMapObject(NCOLORS, colors);
    if (!map) return gfx_fail(LSIM_ENOMEM, "giflib: out of memory", NULL);
    EGifSetGifVersion(a->g, true);
    int ok = EGifPutScreenDesc(a->g, a->w, a->h, 8, 0, map) == GIF_OK;
    GifFreeMapObject(map);
    /* loop forever: the NETSCAPE2.0 application extension, count 0 */
    static const GifByteType loop[3] = {1, 0, 0};
    ok = ok && EGifPutExtensionLeader(a->g, APPLICATION_EXT_FUNC_CODE) == GIF_OK &&
         EGifPutExtensionBlock(a->g, 11, "NETSCAPE2.0") == GIF_OK && EGifPutExtensionBlock(a->g, 3, loop) == GIF_OK &&
         EGifPutExtensionTrailer(a->g) == GIF_OK;
    return ok ? 0 : gif_fail(a->g->Error, f, name);
}

/* The waiting frame: the rectangle where it differs from the last one written. */
static int flush(struct anim *a, FILE *f, const char *name) {
    int x0 = 0, y0 = 0, x1 = a->w - 1, y1 = a->h - 1;
    if (a->have_last) {
        x0 = a->w, y0 = a->h, x1 = -1, y1 = -1;
        for (int y = 0; y < a->h; y++) {
            const uint8_t *p = a->pend + (size_t)y * a->w, *l = a->last + (size_t)y * a->w;
            if (memcmp(p, l, (size_t)a->w) == 0) continue;
            if (y < y0) y0 = y;
            y1 = y;
            int x = 0, xe = a->w - 1;
            while (p[x] == l[x]) x++;
            while (p[xe] == l[xe]) xe--;
            if (x < x0) x0 = x;
            if (xe > x1) x1 = xe;
        }
        if (x1 < 0) x0 = y0 = x1 = y1 = 0; /* the same picture (only a first frame repeats): one pixel */
    }
    GraphicsControlBlock gcb = {.DisposalMode = DISPOSE_DO_NOT,
                                .UserInputFlag = false,
                                .DelayTime = (int)(a->pend_cs > 65535 ? 65535 : a->pend_cs),
                                .TransparentColor = NO_TRANSPARENT_COLOR};
    GifByteType ext[4];
    EGifGCBToExtension(&gcb, ext);
    int ok = EGifPutExtension(a->g, GRAPHICS_EXT_FUNC_CODE, 4, ext) == GIF_OK &&
             EGifPutImageDesc(a->g, x0, y0, x1 - x0 + 1, y1 - y0 + 1, false, NULL) == GIF_OK;
    for (int y = y0; ok && y <= y1; y++) ok = EGifPutLine(a->g, a->pend + (size_t)y * a->w + x0, x1 - x0 + 1) == GIF_OK;
    if (!ok) return gif_fail(a->g->Error, f, name);
    uint8_t *t = a->last;
    a->last = a->pend;
    a->pend = t;
    a->have_last = 1;
    a->have_pend = 0;
    return 0;
}

/* Frame i: painted, mapped to the palette, then either merged into the
 * waiting frame (the same picture) or the waiting frame written and this
 * one waiting. */
static int add_frame(struct anim *a, struct quant *q, const struct raster *img, long delay_cs, FILE *f,
                     const char *name) {
    for (int y = 0; y < a->h; y++) {
        const uint8_t *s = img->px + (size_t)y * img->pitch;
        uint8_t *d = a->cur + (size_t)y * a->w;
        for (int x = 0; x < a->w; x++, s += 3) d[x] = quantise(q, (struct palette_rgb){s[0], s[1], s[2]});
    }
    if (a->have_pend && memcmp(a->cur, a->pend, (size_t)a->w * a->h) == 0) {
        a->pend_cs += delay_cs;
        return 0;
    }
    int rc = a->have_pend ? flush(a, f, name) : 0;
    if (rc) return rc;
    uint8_t *t = a->pend;
    a->pend = a->cur;
    a->cur = t;
    a->have_pend = 1;
    a->pend_cs = delay_cs;
    return 0;
}

int gfx_render_gif(FILE *f, const char *name, const struct trace *const *trs, size_t n, size_t nframes,
                   gfx_gif_frame_fn frame, void *ctx) {
    gfx_clear_error();
    if (!name) name = "output stream";
    struct quant *q = calloc(1, sizeof *q);
    struct scene_banner *banners = calloc(n ? n : 1, sizeof *banners);
    struct anim a;
    memset(&a, 0, sizeof a);
    struct raster_fonts fonts;
    int rc = !q || !banners ? gfx_fail(LSIM_ENOMEM, "out of memory", NULL) : raster_fonts_open(&fonts);
    if (q) build_palette(q->pal);
    for (size_t i = 0; i < nframes && !rc; i++) {
        struct scene_view v;
        int delay_cs = 0;
        if ((rc = frame(ctx, i, banners, &v, &delay_cs)) != 0) {
            gfx_fail(rc, lsim_strerror(rc), NULL);
            break;
        }
        struct raster img;
        memset(&img, 0, sizeof img);
        rc = gfx_paint_panels(&img, &fonts, trs, n, banners, &v);
        if (!rc && i == 0) {
            a.w = img.w, a.h = img.h;
            size_t px = (size_t)a.w * (size_t)a.h;
            a.last = malloc(px), a.pend = malloc(px), a.cur = malloc(px);
            if (!a.last || !a.pend || !a.cur) rc = gfx_fail(LSIM_ENOMEM, "out of memory", NULL);
            else rc = start(&a, f, name, q);
        } else if (!rc && (img.w != a.w || img.h != a.h)) {
            rc = gfx_fail(LSIM_EINTERNAL, "the frames of the animation differ in size", NULL);
        }
        if (!rc) rc = add_frame(&a, q, &img, delay_cs, f, name);
        raster_close(&img);
    }
    if (!rc && a.have_pend) rc = flush(&a, f, name);
    if (a.g) {
        int err = 0;
        if (EGifCloseFile(a.g, &err) != GIF_OK && !rc) rc = gif_fail(err, f, name);
    }
    if (!rc && (fflush(f) != 0 || ferror(f))) rc = gfx_fail(LSIM_EOUTPUT, name, "cannot write the GIF");
    if (q && banners) raster_fonts_close(&fonts);
    free(a.last);
    free(a.pend);
    free(a.cur);
    free(banners);
    free(q);
    return rc;
}
