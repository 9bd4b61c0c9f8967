/* Tests of the pictures (gfx/png.c, render/svg.c): two catalog scenarios are
 * run and drawn to build/pictures/ as PNG and SVG; the PNG pixels must equal the
 * references under tests/golden/, the bytes must repeat, and the SVG must
 * parse (xmllint) and carry the story as text (token numbers, "DOUBLE
 * ENTRY", tooltips). This binary, alone among the tests, links gfx and SDL.
 *
 * Set LOCKSIM_UPDATE_GOLDEN=1 to rewrite the references (then look at them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>

#include <SDL.h>
#include <SDL_image.h>
#include <SDL_ttf.h>

#include "testutil.h"

#include "error.h"
#include "gfx.h"
#include "heatmap_svg.h"
#include "layout.h"
#include "raster.h"
#include "sdl_paint.h"
#include "svg.h"

/* The repository root, from this file's path (tests run from the root). */
static void repo_path(char *buf, size_t n, const char *rel) {
    const char *slash = strrchr(__FILE__, '/');
    int dirlen = slash ? (int)(slash - __FILE__) : 1;
    snprintf(buf, n, "%.*s/../%s", dirlen, slash ? __FILE__ : ".", rel);
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) fprintf(stderr, "cannot open %s\n", path);
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    if (len) *len = (size_t)n;
    return buf;
}

/* A scenario of the catalog, run to the end with its trace. */
static struct engine *run_scenario(const char *name) {
    char path[512];
    snprintf(path, sizeof path, "scenarios/%s.lsim", name);
    char full[600];
    repo_path(full, sizeof full, path);
    char *text = slurp(full, NULL);
    struct engine *e = run_text(text);
    free(text);
    return e;
}

struct picture {
    struct engine *e;
    char seed[32];
    char replay[300];
    struct scene_banner b;
};

static void picture_init(struct picture *p, const char *name) {
    p->e = run_scenario(name);
    const struct trace *tr = engine_trace(p->e);
    snprintf(p->seed, sizeof p->seed, "%llu", (unsigned long long)tr->seed);
    snprintf(p->replay, sizeof p->replay, "locksim run scenarios/%s.lsim --seed %s", name, p->seed);
    p->b = (struct scene_banner){
            .title = tr->title, .algo = tr->algo, .seed = p->seed, .replay = p->replay, .report = engine_report(p->e)};
}

static void out_path(char *buf, size_t n, const char *name, const char *ext) {
    mkdir("build", 0777);
    mkdir("build/pictures", 0777);
    snprintf(buf, n, "build/pictures/%s.%s", name, ext);
}

/* The pixels of a PNG file, as RGB24 rows. */
static SDL_Surface *load_rgb(const char *path) {
    SDL_Surface *s = IMG_Load(path);
    if (!s) fprintf(stderr, "IMG_Load %s: %s\n", path, IMG_GetError());
    assert_non_null(s);
    SDL_Surface *c = SDL_ConvertSurfaceFormat(s, SDL_PIXELFORMAT_RGB24, 0);
    SDL_FreeSurface(s);
    assert_non_null(c);
    return c;
}

/* Exact pixel equality with tests/golden/<name>.png: the same FreeType and
 * DejaVu fonts draw the same pixels (no tolerance). */
static void check_golden(const char *name, const char *png) {
    char rel[256], golden[600];
    snprintf(rel, sizeof rel, "tests/golden/%s.png", name);
    repo_path(golden, sizeof golden, rel);
    if (getenv("LOCKSIM_UPDATE_GOLDEN")) {
        size_t len;
        char *bytes = slurp(png, &len);
        FILE *f = fopen(golden, "wb");
        assert_non_null(f);
        fwrite(bytes, 1, len, f);
        fclose(f);
        free(bytes);
        return;
    }
    SDL_Surface *a = load_rgb(png), *b = load_rgb(golden);
    assert_int_equal(a->w, b->w);
    assert_int_equal(a->h, b->h);
    long differ = 0;
    for (int y = 0; y < a->h; y++)
        differ += memcmp((char *)a->pixels + y * a->pitch, (char *)b->pixels + y * b->pitch, (size_t)a->w * 3) != 0;
    if (differ) fprintf(stderr, "%s: %ld rows differ from %s\n", png, differ, golden);
    assert_int_equal(differ, 0);
    SDL_FreeSurface(a);
    SDL_FreeSurface(b);
}

static void draw_both(const char *name, struct picture *p, char *png, char *svg, size_t n) {
    out_path(png, n, name, "png");
    out_path(svg, n, name, "svg");
    const struct trace *tr = engine_trace(p->e);
    int rc = gfx_render_png(png, NULL, tr, &p->b, NULL);
    if (rc) fprintf(stderr, "gfx: %s\n", gfx_error());
    assert_int_equal(rc, 0);
    FILE *f = fopen(svg, "wb");
    assert_non_null(f);
    assert_int_equal(svg_render(f, tr, &p->b, NULL), 0);
    assert_int_equal(fclose(f), 0);
}

static int xmllint_ok(const char *path) {
    char cmd[700];
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", path);
    return system(cmd) == 0;
}

/* Run a catalog scenario, draw it to build/pictures/NAME.png and .svg,
 * compare the PNG with its reference, check the SVG parses; returns the SVG
 * text (the caller frees it) and leaves the run in *p (engine_free p->e). */
static char *draw_checked(const char *name, struct picture *p) {
    char png[300], svg[300];
    picture_init(p, name);
    draw_both(name, p, png, svg, sizeof png);
    check_golden(name, png);
    assert_true(xmllint_ok(svg));
    return slurp(svg, NULL);
}

/* The default scenario: a plain lease, A's GC pause outlives it, B gets the
 * lock, A's stale write (no tokens here) is accepted: UNSAFE, double entry. */
static void test_gc_pause(void **state) {
    (void)state;
    struct picture p;
    char *x = draw_checked("gc-pause-outlives-lease", &p);
    /* The SVG: the story as text. */
    assert_non_null(strstr(x, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" xml:space=\"preserve\""));
    assert_non_null(strstr(x, ">GC pause outlives the lease</text>"));
    assert_non_null(strstr(x, ">UNSAFE</text>"));
    assert_non_null(strstr(x, ">DOUBLE ENTRY</text>"));
    assert_non_null(strstr(x, "both in the critical section"));
    assert_non_null(strstr(x, "ACCEPTED though stale: B holds the lock"));
    assert_non_null(strstr(x, "<title>A acquires, t=0s</title>"));
    assert_non_null(strstr(x, "<title>B acquires, t=31s</title>"));
    assert_non_null(strstr(x, "though it is STALE, t=32s</title>"));
    assert_non_null(strstr(x, "<polygon")); /* the TTL running out */
    free(x);
    engine_free(p.e);
}

/* Fencing: the same pause, but the resource rejects A's token: the save. */
static void test_fencing(void **state) {
    (void)state;
    struct picture p;
    char *x = draw_checked("fencing-rejects-stale-write", &p);
    assert_non_null(strstr(x, "REJECTED: stale"));
    assert_non_null(strstr(x, "rejects A&apos;s write, token 41, t=32s"));
    assert_non_null(strstr(x, ">algorithm: fenced-lease</text>"));
    free(x);
    engine_free(p.e);
}

/* Same scene, same bytes: twice to a file, once to a stream. */
static void test_deterministic(void **state) {
    (void)state;
    struct picture p;
    picture_init(&p, "gc-pause-outlives-lease");
    const struct trace *tr = engine_trace(p.e);
    char a[300], b[300];
    out_path(a, sizeof a, "det-a", "png");
    out_path(b, sizeof b, "det-b", "png");
    assert_int_equal(gfx_render_png(a, NULL, tr, &p.b, NULL), 0);
    FILE *f = fopen(b, "wb");
    assert_non_null(f);
    assert_int_equal(gfx_render_png(NULL, f, tr, &p.b, NULL), 0);
    fclose(f);
    size_t la, lb;
    char *ba = slurp(a, &la), *bb = slurp(b, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(ba, bb, la);
    free(ba);
    free(bb);
    /* SVG: the same bytes twice. */
    char *s1 = NULL, *s2 = NULL;
    size_t n1 = 0, n2 = 0;
    FILE *m1 = open_memstream(&s1, &n1), *m2 = open_memstream(&s2, &n2);
    assert_int_equal(svg_render(m1, tr, &p.b, NULL), 0);
    assert_int_equal(svg_render(m2, tr, &p.b, NULL), 0);
    fclose(m1);
    fclose(m2);
    assert_int_equal(n1, n2);
    assert_memory_equal(s1, s2, n1);
    free(s1);
    free(s2);
    engine_free(p.e);
}

/* Panels: the same faults under lease and fenced-lease, on one axis. */
static void test_panels(void **state) {
    (void)state;
    struct picture p[2];
    picture_init(&p[0], "gc-pause-outlives-lease");
    picture_init(&p[1], "fencing-rejects-stale-write");
    const struct trace *trs[2] = {engine_trace(p[0].e), engine_trace(p[1].e)};
    struct scene_banner bs[2] = {p[0].b, p[1].b};
    char png[300], svg[300];
    out_path(png, sizeof png, "panels", "png");
    out_path(svg, sizeof svg, "panels", "svg");
    struct scene_view v;
    scene_view_pixels(&v, 1280, 0);
    assert_int_equal(gfx_render_png_panels(png, NULL, trs, 2, bs, &v), 0);
    FILE *f = fopen(svg, "wb");
    assert_non_null(f);
    assert_int_equal(svg_render_panels(f, trs, 2, bs, &v), 0);
    fclose(f);
    assert_true(xmllint_ok(svg));
    char *x = slurp(svg, NULL);
    assert_non_null(strstr(x, ">algorithm: lease</text>"));
    assert_non_null(strstr(x, ">algorithm: fenced-lease</text>"));
    free(x);
    engine_free(p[0].e);
    engine_free(p[1].e);
}

/* Zoom: 29.5 s .. 33 s of the default scenario, as PNG and SVG. */
static void test_zoom(void **state) {
    (void)state;
    struct picture p;
    picture_init(&p, "gc-pause-outlives-lease");
    const struct trace *tr = engine_trace(p.e);
    struct scene_view v;
    scene_view_pixels(&v, 1280, 720);
    v.t0 = 29 * SIM_NS_PER_S + 500 * SIM_NS_PER_MS;
    v.t1 = 33 * SIM_NS_PER_S;
    char png[300], svg[300];
    out_path(png, sizeof png, "gc-pause-zoom", "png");
    out_path(svg, sizeof svg, "gc-pause-zoom", "svg");
    assert_int_equal(gfx_render_png(png, NULL, tr, &p.b, &v), 0);
    FILE *f = fopen(svg, "wb");
    assert_non_null(f);
    assert_int_equal(svg_render(f, tr, &p.b, &v), 0);
    fclose(f);
    assert_true(xmllint_ok(svg));
    char *x = slurp(svg, NULL);
    assert_non_null(strstr(x, ">30s</text>"));
    assert_non_null(strstr(x, ">31s</text>"));
    assert_null(strstr(x, "<title>A acquires")); /* at 0 s, outside the window */
    assert_non_null(strstr(x, "<title>B acquires, t=31s</title>"));
    free(x);
    engine_free(p.e);
}

/* Errors: a file that cannot be opened, a view too small. */
static void test_errors(void **state) {
    (void)state;
    struct picture p;
    picture_init(&p, "gc-pause-outlives-lease");
    const struct trace *tr = engine_trace(p.e);
    assert_int_equal(gfx_render_png("/nonexistent/dir/x.png", NULL, tr, &p.b, NULL), LSIM_EOUTPUT);
    assert_non_null(strstr(gfx_error(), "/nonexistent/dir/x.png"));
    struct scene_view v;
    scene_view_pixels(&v, 100, 100);
    assert_int_equal(gfx_render_png("build/pictures/small.png", NULL, tr, &p.b, &v), LSIM_EBAD_VALUE);
    FILE *full = fopen("/dev/full", "w");
    if (full) {
        setvbuf(full, NULL, _IONBF, 0);
        assert_int_equal(svg_render(full, tr, &p.b, NULL), LSIM_EOUTPUT);
        assert_int_equal(gfx_render_png(NULL, full, tr, &p.b, NULL), LSIM_EOUTPUT);
        assert_non_null(strstr(gfx_error(), "cannot write the PNG"));
        fclose(full);
    }
    engine_free(p.e);
}

/* The cost of the default scenario's PNG in process (not a timed test: it
 * prints the figure). */
static void test_timing(void **state) {
    (void)state;
    struct picture p;
    picture_init(&p, "gc-pause-outlives-lease");
    const struct trace *tr = engine_trace(p.e);
    enum { N = 20 };
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < N; i++) {
        FILE *f = fopen("/dev/null", "wb");
        assert_int_equal(gfx_render_png(NULL, f, tr, &p.b, NULL), 0);
        fclose(f);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / N;
    printf("gfx: PNG of gc-pause-outlives-lease, 1280x720, in process: %.2f ms each (%d runs)\n", ms, N);
    engine_free(p.e);
}

/* The window paints its scenes with the PNG's painter on its texture's
 * B, G, R, A pixels (raster_wrap, gfx/view.c): one scene painted on the
 * PNG's RGB canvas and on such a texture, padded rows and all, gives the
 * same colours at every pixel; scrolled by 100 px (dy), the same rows 100
 * px up; and SDL's own drawing of it (the window's painter before) differs
 * only at the anti-aliased edges of the text, by 2 of 255 at most. */
static void test_window_paints_png_pixels(void **state) {
    (void)state;
    struct picture p;
    picture_init(&p, "gc-pause-outlives-lease");
    struct layout ly;
    assert_int_equal(layout_build(&ly, engine_trace(p.e)), 0);
    struct scene_view v;
    scene_view_pixels(&v, 1280, 720);
    struct scene sc;
    memset(&sc, 0, sizeof sc);
    assert_int_equal(scene_build(&sc, &ly, &v, &p.b, 0), 0);
    int w = sc.width, h = sc.height;
    struct raster_fonts fonts;
    assert_int_equal(raster_fonts_open(&fonts), 0);
    /* the PNG's canvas */
    struct raster png;
    assert_int_equal(raster_init(&png, w, h, palette_background), 0);
    assert_int_equal(raster_paint(&png, &fonts, &sc, &v), 0);
    /* a texture's: rows 4 pixels longer than the picture */
    size_t pitch = (size_t)(w + 4) * 4;
    uint8_t *tex = malloc(pitch * (size_t)h), *scrolled = malloc(pitch * (size_t)h);
    assert_non_null(tex);
    assert_non_null(scrolled);
    struct raster win, win2;
    assert_int_equal(raster_wrap(&win, tex, w, h, pitch, palette_background), 0);
    assert_int_equal(raster_paint(&win, &fonts, &sc, &v), 0);
    assert_int_equal(raster_wrap(&win2, scrolled, w, h, pitch, palette_background), 0);
    win2.dy = -100;
    assert_int_equal(raster_paint(&win2, &fonts, &sc, &v), 0);
    long differ = 0, differ_scrolled = 0, coloured = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const uint8_t *a = png.px + (size_t)y * png.pitch + (size_t)x * 3;
            const uint8_t *b = tex + (size_t)y * pitch + (size_t)x * 4;
            differ += a[0] != b[2] || a[1] != b[1] || a[2] != b[0] || b[3] != 255;
            coloured += a[0] != palette_background.r || a[1] != palette_background.g;
            if (y + 100 < h) {
                const uint8_t *c = scrolled + (size_t)y * pitch + (size_t)x * 4;
                const uint8_t *d = tex + (size_t)(y + 100) * pitch + (size_t)x * 4;
                differ_scrolled += memcmp(c, d, 4) != 0;
            }
        }
    assert_int_equal(differ, 0);
    assert_int_equal(differ_scrolled, 0);
    assert_true(coloured > 10000); /* a picture, not a blank canvas */
    /* the same scene through SDL's software renderer and SDL2_ttf */
    assert_int_equal(TTF_Init(), 0);
    struct gfx_fonts gf;
    memset(&gf, 0, sizeof gf);
    assert_int_equal(gfx_fonts_open(&gf), 0);
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_ARGB8888);
    assert_non_null(surf);
    SDL_Renderer *r = SDL_CreateSoftwareRenderer(surf);
    assert_non_null(r);
    SDL_SetRenderDrawColor(r, palette_background.r, palette_background.g, palette_background.b, 255);
    SDL_RenderClear(r);
    assert_int_equal(gfx_paint(r, &gf, &sc, &v), 0);
    SDL_RenderPresent(r);
    long near = 0, far = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const uint8_t *a = png.px + (size_t)y * png.pitch + (size_t)x * 3;
            Uint32 q = ((const Uint32 *)(const void *)((const uint8_t *)surf->pixels +
                                                       (size_t)y * (size_t)surf->pitch))[x];
            int d[3] = {abs((int)a[0] - (int)(q >> 16 & 255)), abs((int)a[1] - (int)(q >> 8 & 255)),
                        abs((int)a[2] - (int)(q & 255))};
            int m = d[0] > d[1] ? d[0] : d[1];
            if (d[2] > m) m = d[2];
            near += m > 0 && m <= 2;
            far += m > 2;
        }
    printf("gfx: window painter vs SDL's: %ld pixels differ by 1 or 2 of 255, %ld by more\n", near, far);
    assert_int_equal(far, 0);
    /* a texture too narrow for its rows is refused */
    struct raster bad;
    assert_int_equal(raster_wrap(&bad, tex, w, h, (size_t)w * 4 - 4, palette_background), LSIM_EBAD_VALUE);
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(surf);
    gfx_fonts_close(&gf);
    TTF_Quit();
    raster_close(&win);
    raster_close(&win2);
    free(tex);
    free(scrolled);
    raster_close(&png);
    raster_fonts_close(&fonts);
    scene_close(&sc);
    layout_close(&ly);
    engine_free(p.e);
}


/* ---- The sweep heatmap as PNG (gfx/heatmap_png.c) ---------------------------- */

static unsigned pixel_at(const SDL_Surface *s, int x, int y) {
    const Uint8 *p = (const Uint8 *)s->pixels + (size_t)y * (size_t)s->pitch + (size_t)x * 3;
    return (unsigned)p[0] << 16 | (unsigned)p[1] << 8 | p[2];
}

/* A known 3 x 2 grid, two panels: every pure class, a mixed cell and an
 * empty one, at the pixels the shared geometry puts them. */
static void test_heatmap_png(void **state) {
    (void)state;
    static const char *const xs[] = {"10s", "20s", "30s"}, *const ys[] = {"1s", "2s"};
    static const char *const panels[] = {"lease", "fenced-lease"};
    struct heatmap_cell cells[2 * 2 * 3];
    memset(cells, 0, sizeof cells);
    /* [panel][y][x] */
    cells[0].count[HEATMAP_SAFE] = 1;
    cells[1].count[HEATMAP_DAMAGE] = 1;
    cells[2].count[HEATMAP_SAFE] = 1, cells[2].count[HEATMAP_DAMAGE] = 3; /* mixed, 75% unsafe */
    cells[3].count[HEATMAP_STUCK] = 2;
    cells[4].count[HEATMAP_OVERLAP] = 1;
    /* cells[5]: no runs */
    cells[6].count[HEATMAP_ERROR] = 1;
    cells[7].count[HEATMAP_SAFE] = 2;
    cells[8].count[HEATMAP_OVERLAP] = 1;
    for (int k = 9; k < 12; k++) cells[k].count[HEATMAP_SAFE] = 1;
    struct heatmap h = {.title = "known grid",
                        .subtitle = "grid.lsim",
                        .x_key = "pause",
                        .y_key = "lock.ttl",
                        .x_vals = xs,
                        .nx = 3,
                        .y_vals = ys,
                        .ny = 2,
                        .panels = panels,
                        .npanels = 2,
                        .cells = cells};
    char a[512], b[512];
    out_path(a, sizeof a, "heatmap-a", "png");
    out_path(b, sizeof b, "heatmap-b", "png");
    assert_int_equal(gfx_heatmap_png(a, NULL, &h), 0);
    assert_int_equal(gfx_heatmap_png(b, NULL, &h), 0);
    /* The same heatmap, the same bytes. */
    size_t la, lb;
    char *ba = slurp(a, &la), *bb = slurp(b, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(ba, bb, la);
    free(ba);
    free(bb);
    SDL_Surface *s = load_rgb(a);
    /* 90 + 2 panels x (3 x 28 + 40) = 338, widened to the legend's 90 + 5 x 110;
     * 56 + 2 x 22 + 84 tall. */
    assert_int_equal(s->w, 640);
    assert_int_equal(s->h, 184);
    /* The colour-blind-safe palette (issue 24); the mixed cell is 1 safe + 3 damage. */
    static const unsigned want[12] = {0xa6dcf0, 0xc0392b, 0xba625c, 0x762a83, 0xf0e442, 0xffffff,
                                      0x212121, 0xa6dcf0, 0xf0e442, 0xa6dcf0, 0xa6dcf0, 0xa6dcf0};
    for (int p = 0; p < 2; p++)
        for (int y = 0; y < 2; y++)
            for (int x = 0; x < 3; x++) {
                int cx = 90 + p * (3 * 28 + 40) + x * 28, cy = 56 + y * 22;
                unsigned w = want[(p * 2 + y) * 3 + x];
                assert_int_equal(pixel_at(s, cx + 2, cy + 2), w);
                assert_int_equal(pixel_at(s, cx + 25, cy + 19), w);
                /* The white line between cells, as the SVG's stroke. */
                assert_int_equal(pixel_at(s, cx + 27, cy + 5), 0xffffff);
                assert_int_equal(pixel_at(s, cx + 5, cy + 21), 0xffffff);
            }
    /* The mixed cell carries its percentage: dark text pixels near its middle;
     * a pure cell carries none. */
    int dark = 0, dark_pure = 0;
    for (int y = 56 + 4; y < 56 + 20; y++)
        for (int x = 0; x < 20; x++) {
            unsigned m = pixel_at(s, 90 + 2 * 28 + 4 + x, y), q = pixel_at(s, 90 + 28 + 4 + x, y);
            if ((m >> 16) < 0x60 && ((m >> 8) & 0xff) < 0x40) dark++;
            if (q != 0xc0392b) dark_pure++;
        }
    assert_true(dark > 5);
    assert_int_equal(dark_pure, 0);
    /* The y axis's key "lock.ttl" reads upwards left of the values, centred
     * on the panel's height (baseline x = 12, middle y = 56 + 22): its dark
     * pixels stand taller than wide, within a column at x 0 .. 19. */
    int x_lo = 640, x_hi = -1, y_lo = 184, y_hi = -1;
    for (int y = 0; y < 184; y++)
        for (int x = 0; x < 40; x++)
            if ((pixel_at(s, x, y) >> 16) < 0x80) {
                if (x < x_lo) x_lo = x;
                if (x > x_hi) x_hi = x;
                if (y < y_lo) y_lo = y;
                if (y > y_hi) y_hi = y;
            }
    assert_true(x_lo >= 0 && x_hi < 20);
    assert_true(y_hi - y_lo > 3 * (x_hi - x_lo));
    assert_true(y_lo < 56 + 22 - 10 && y_hi > 56 + 22 + 10);
    assert_true(abs((y_lo + y_hi) / 2 - (56 + 22)) <= 2);
    /* The file name, small and grey under the title (issue 24): grey ink
     * between the title's baseline (20) and the panels' names, none after 90 + 60. */
    int grey = 0, grey_far = 0;
    for (int y = 24; y < 37; y++)
        for (int x = 90; x < 640; x++) {
            unsigned v = pixel_at(s, x, y);
            if (v != 0xffffff) {
                if (x < 150) grey++;
                else grey_far++;
            }
        }
    assert_true(grey > 10);
    assert_int_equal(grey_far, 0);
    /* Numeric x values thinned to every 2nd: 10s and 30s (first and last)
     * drawn, 20s not: no ink under the middle column. */
    int mid = 0;
    for (int y = 56 + 44 + 3; y < 56 + 44 + 17; y++)
        for (int x = 90 + 28 + 4; x < 90 + 28 + 24; x++) mid += pixel_at(s, x, y) != 0xffffff;
    assert_int_equal(mid, 0);
    /* The legend's swatches, in class order, 110 px apart under the panels. */
    for (int k = 0; k < HEATMAP_NCLASS; k++)
        assert_int_equal(pixel_at(s, 90 + k * 110 + 6, 56 + 44 + 48 + 6), heatmap_class_rgb((enum heatmap_class)k));
    assert_int_equal(heatmap_class_rgb(HEATMAP_DAMAGE), 0xc0392b);
    SDL_FreeSurface(s);
    /* An output that cannot be opened is an output error, named. */
    assert_int_equal(gfx_heatmap_png("/nonexistent-dir/h.png", NULL, &h), LSIM_EOUTPUT);
    assert_non_null(strstr(gfx_error(), "/nonexistent-dir/h.png"));
}

/* ---- Badges and labels apart, over the whole catalog ------------------------ */

static int meet(const struct scene_cmd *a, const struct scene_cmd *b) {
    return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h && b->y < a->y + a->h;
}

/* Overlaps in a built picture scene: two badges of one lane, a badge over a
 * text, or a pixel-only label (EXTRA text) over a badge, another label or a
 * line of text (MAIN: lane names, the double entries and writes listed);
 * an arrow's label (not a span's or a clock's, which sit on their lane)
 * over a double entry on its row. Printed. */
static int overlaps(const struct scene *sc, const char *what) {
    int bad = 0;
    for (size_t i = 0; i < sc->ncmd; i++) {
        const struct scene_cmd *a = &sc->cmd[i];
        int a_badge = a->type == SCENE_CMD_SYM && a->lane >= 0 && !a->minor;
        int a_label = a->type == SCENE_CMD_TEXT && a->layer == SCENE_LAYER_EXTRA && a->style != SCENE_ST_CLOCK &&
                      a->style != SCENE_ST_HOLDING && a->style != SCENE_ST_LABEL;
        int a_span_label = a->type == SCENE_CMD_TEXT && a->layer == SCENE_LAYER_EXTRA && !a_label;
        if (!a_badge && !a_label && !a_span_label) continue;
        for (size_t j = 0; j < sc->ncmd; j++) {
            const struct scene_cmd *b = &sc->cmd[j];
            if (j == i) continue;
            int b_badge = b->type == SCENE_CMD_SYM && b->lane >= 0 && !b->minor;
            int b_text = b->type == SCENE_CMD_TEXT && b->text && b->text[0];
            int b_double = b->type == SCENE_CMD_RECT && b->style == SCENE_ST_DOUBLE;
            int clash = (a_badge && b_badge && a->lane == b->lane && j > i) || (a_badge && b_text) ||
                        ((a_label || a_span_label) && b_badge) ||
                        ((a_label || a_span_label) && b_text && (b->layer != SCENE_LAYER_EXTRA || j > i)) ||
                        (a_label && b_double);
            if (!clash || !meet(a, b)) continue;
            fprintf(stderr, "%s: %s %s at %d,%d %dx%d meets %s %s at %d,%d %dx%d\n", what, a_badge ? "badge" : "label",
                    a_badge ? (a->label ? a->label : "") : a->text, a->x, a->y, a->w, a->h, b_badge ? "badge" : "text",
                    b_badge ? (b->label ? b->label : "") : b->text, b->x, b->y, b->w, b->h);
            bad++;
        }
    }
    return bad;
}

/* Every catalog scenario drawn as render draws it, at 1280 x 720 and 800 x
 * 600, and zoomed to 1 s (1280 px) and 300 ms (800 px) around its first
 * double entry: no badge covers another of its lane or a text, no label
 * covers a badge, another label or a line of text, no arrow's label the
 * double-entry row's shading. */
static void test_catalog_apart(void **state) {
    (void)state;
    char dir[512];
    repo_path(dir, sizeof dir, "scenarios");
    DIR *d = opendir(dir);
    assert_non_null(d);
    int files = 0, scenes = 0, bad = 0;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        size_t n = strlen(de->d_name);
        if (n < 6 || strcmp(de->d_name + n - 5, ".lsim") != 0) continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(n - 5), de->d_name);
        struct picture p;
        picture_init(&p, name);
        struct layout ly;
        assert_int_equal(layout_build(&ly, engine_trace(p.e)), 0);
        /* width, height, and a window around the first double entry (0 = the whole run) */
        static const struct {
            int w, h;
            sim_ns window;
        } views[4] = {{1280, 720, 0}, {800, 600, 0}, {1280, 720, SIM_NS_PER_S}, {800, 600, 300 * SIM_NS_PER_MS}};
        for (int k = 0; k < 4; k++) {
            struct scene_view v;
            scene_view_pixels(&v, views[k].w, views[k].h);
            if (views[k].window) {
                if (!ly.ndoubles) continue;
                sim_ns half = views[k].window / 2;
                v.t0 = ly.doubles[0].t0 > half ? ly.doubles[0].t0 - half : 0;
                v.t1 = v.t0 + views[k].window;
            }
            struct scene sc;
            assert_int_equal(scene_build(&sc, &ly, &v, &p.b, 0), 0);
            char what[300];
            snprintf(what, sizeof what, "%s %dx%d %s", name, views[k].w, views[k].h,
                     views[k].window ? "zoomed" : "whole run");
            bad += overlaps(&sc, what);
            scenes++;
            scene_close(&sc);
        }
        layout_close(&ly);
        engine_free(p.e);
        files++;
    }
    closedir(d);
    printf("gfx: %d scenarios, %d pictures, %d overlaps\n", files, scenes, bad);
    assert_true(files >= 90);
    assert_int_equal(bad, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_gc_pause),      cmocka_unit_test(test_fencing),
            cmocka_unit_test(test_deterministic), cmocka_unit_test(test_panels),
            cmocka_unit_test(test_zoom),          cmocka_unit_test(test_errors),
            cmocka_unit_test(test_timing),        cmocka_unit_test(test_window_paints_png_pixels),
            cmocka_unit_test(test_heatmap_png),   cmocka_unit_test(test_catalog_apart),
    };
    return cmocka_run_group_tests_name("gfx", tests, NULL, NULL);
}
