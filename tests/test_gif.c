/* Tests of `locksim render FILE -o story.gif` (issue 21) as a user runs it:
 * the GIF decoded with giflib (DGifSlurp) and its frames composed as a
 * viewer shows them, the PNGs of `render --at` decoded with libpng, then:
 * how many frames and how long each shows for a given --fps, --duration
 * and range; the first frame is `render --at FROM`'s picture and the last
 * the finished one (each pixel the palette's nearest colour to the PNG's);
 * the same bytes twice; the errors (exit 64, 70), nothing left behind. */
#include "cli_util.h"

#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>

#include <gif_lib.h>
#include <png.h>

#define GC "scenarios/gc-pause-outlives-lease.lsim"

/* A decoded GIF: every frame composed over the ones before (disposal
 * "do not dispose"), as R, G, B bytes, and its delay in 1/100 s. */
struct anim {
    int w, h, n;
    uint8_t **rgb;
    int *delay;
    int loops; /* 1 when a NETSCAPE2.0 extension says loop forever */
    GifColorType pal[256];
    int npal;
};

static void anim_free(struct anim *a) {
    for (int i = 0; i < a->n; i++) free(a->rgb[i]);
    free(a->rgb);
    free(a->delay);
    memset(a, 0, sizeof *a);
}

static void decode_gif(const char *path, struct anim *a) {
    memset(a, 0, sizeof *a);
    int err = 0;
    GifFileType *g = DGifOpenFileName(path, &err);
    assert_non_null(g);
    assert_int_equal(DGifSlurp(g), GIF_OK);
    assert_non_null(g->SColorMap); /* one palette for every frame */
    a->w = g->SWidth, a->h = g->SHeight, a->n = g->ImageCount;
    a->npal = g->SColorMap->ColorCount;
    memcpy(a->pal, g->SColorMap->Colors, (size_t)a->npal * sizeof *a->pal);
    a->rgb = calloc((size_t)a->n, sizeof *a->rgb);
    a->delay = calloc((size_t)a->n, sizeof *a->delay);
    assert_non_null(a->rgb);
    assert_non_null(a->delay);
    size_t px = (size_t)a->w * (size_t)a->h * 3;
    for (int i = 0; i < a->n; i++) {
        const SavedImage *im = &g->SavedImages[i];
        a->rgb[i] = malloc(px);
        assert_non_null(a->rgb[i]);
        if (i) memcpy(a->rgb[i], a->rgb[i - 1], px);
        else
            assert_true(im->ImageDesc.Left == 0 && im->ImageDesc.Top == 0 && im->ImageDesc.Width == a->w &&
                        im->ImageDesc.Height == a->h);
        assert_null(im->ImageDesc.ColorMap);
        for (int y = 0; y < im->ImageDesc.Height; y++)
            for (int x = 0; x < im->ImageDesc.Width; x++) {
                int c = im->RasterBits[(size_t)y * im->ImageDesc.Width + x];
                uint8_t *d = a->rgb[i] + (((size_t)(y + im->ImageDesc.Top) * a->w) + x + im->ImageDesc.Left) * 3;
                d[0] = a->pal[c].Red, d[1] = a->pal[c].Green, d[2] = a->pal[c].Blue;
            }
        GraphicsControlBlock gcb;
        assert_int_equal(DGifSavedExtensionToGCB(g, i, &gcb), GIF_OK);
        assert_int_equal(gcb.DisposalMode, DISPOSE_DO_NOT);
        a->delay[i] = gcb.DelayTime;
        for (int e = 0; e < im->ExtensionBlockCount; e++)
            if (im->ExtensionBlocks[e].Function == APPLICATION_EXT_FUNC_CODE &&
                im->ExtensionBlocks[e].ByteCount == 11 && memcmp(im->ExtensionBlocks[e].Bytes, "NETSCAPE2.0", 11) == 0)
                a->loops = 1;
    }
    DGifCloseFile(g, &err);
}

/* A PNG as R, G, B bytes (malloc'd), its size in *w, *h. */
static uint8_t *decode_png(const char *path, int *w, int *h) {
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    assert_true(png_image_begin_read_from_file(&im, path));
    im.format = PNG_FORMAT_RGB;
    uint8_t *px = malloc(PNG_IMAGE_SIZE(im));
    assert_non_null(px);
    assert_true(png_image_finish_read(&im, NULL, px, 0, NULL));
    *w = (int)im.width, *h = (int)im.height;
    return px;
}

/* The palette's nearest colour to c: squared RGB distance, the lowest
 * index on a tie (what the GIF promises for a colour it does not have). */
static const GifColorType *nearest(const struct anim *a, const uint8_t *c) {
    int best = 0;
    long bd = -1;
    for (int i = 0; i < a->npal; i++) {
        long dr = c[0] - a->pal[i].Red, dg = c[1] - a->pal[i].Green, db = c[2] - a->pal[i].Blue;
        long d = dr * dr + dg * dg + db * db;
        if (bd < 0 || d < bd) bd = d, best = i;
    }
    return &a->pal[best];
}

/* How many pixels of frame i are not the palette's nearest to the PNG's
 * at path; *exact counts the PNG's pixels the palette has exactly. */
static long frame_vs_png(const struct anim *a, int i, const char *path, long *exact) {
    int w, h;
    uint8_t *png = decode_png(path, &w, &h);
    assert_int_equal(w, a->w);
    assert_int_equal(h, a->h);
    long bad = 0;
    *exact = 0;
    const GifColorType *n = NULL;
    for (size_t p = 0; p < (size_t)w * (size_t)h; p++) {
        const uint8_t *c = png + 3 * p, *g = a->rgb[i] + 3 * p;
        if (!p || memcmp(c, c - 3, 3) != 0) n = nearest(a, c); /* runs of one colour: looked up once */
        *exact += n->Red == c[0] && n->Green == c[1] && n->Blue == c[2];
        bad += g[0] != n->Red || g[1] != n->Green || g[2] != n->Blue;
    }
    free(png);
    return bad;
}

static int same_file(const char *x, const char *y) {
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", x, y);
    return system(cmd) == 0;
}

/* The default GIF of the seed story: its first frame is `render --at 0s`
 * (nothing of the future: A's first grant only, the banner "running"), its
 * last the finished picture `render` draws, held 3 s; it loops. */
static void test_first_and_last_frames(void **state) {
    (void)state;
    struct result *r = run(fmt("render " GC " -o %s", sp("story.gif")));
    assert_int_equal(r->code, 0);
    assert_int_equal(run(fmt("render " GC " -o %s --at 0s", sp("at0.png")))->code, 0);
    assert_int_equal(run(fmt("render " GC " -o %s", sp("end.png")))->code, 0);
    struct anim a;
    decode_gif(sp("story.gif"), &a);
    assert_int_equal(a.w, 1280);
    assert_int_equal(a.h, 720);
    assert_true(a.loops);
    assert_int_equal(a.npal, 256);
    assert_true(a.n >= 20); /* 40 frames asked, the same pictures merged */
    long exact;
    assert_int_equal(frame_vs_png(&a, 0, sp("at0.png"), &exact), 0);
    assert_true(exact > 1280L * 720 * 95 / 100); /* fills and inks exact: only glyph edges are not */
    assert_int_equal(frame_vs_png(&a, a.n - 1, sp("end.png"), &exact), 0);
    assert_true(exact > 1280L * 720 * 95 / 100);
    assert_true(a.delay[a.n - 1] >= 300);
    /* the first frame is not the last: something is revealed */
    assert_true(memcmp(a.rgb[0], a.rgb[a.n - 1], (size_t)a.w * a.h * 3) != 0);
    anim_free(&a);
}

/* --fps 1 --duration 2s: two evenly spaced frames (0 and the end) and one
 * at each decisive instant between (31 s: B granted after A's lease
 * expired; 32 s: A's late write), each held 1 s, the last 3 s. */
static void test_frame_count(void **state) {
    (void)state;
    assert_int_equal(run(fmt("render " GC " -o %s --fps 1 --duration 2s", sp("few.gif")))->code, 0);
    struct anim a;
    decode_gif(sp("few.gif"), &a);
    assert_int_equal(a.n, 4);
    assert_int_equal(a.delay[0], 100);
    assert_int_equal(a.delay[1], 100);
    assert_int_equal(a.delay[2], 100);
    assert_int_equal(a.delay[3], 300);
    anim_free(&a);
    /* a range: 30 s to 33 s, 2 a second for 3 s: 6 even frames 0.5 s each,
     * the decisive ones at 31 s and 32 s between them, 1 s each */
    assert_int_equal(run(fmt("render " GC " -o %s --from 30s --to 33s --fps 2 --duration 3s", sp("range.gif")))->code,
                     0);
    decode_gif(sp("range.gif"), &a);
    static const int want[] = {50, 50, 100, 50, 50, 100, 50, 300};
    assert_int_equal(a.n, 8);
    for (int i = 0; i < 8; i++) assert_int_equal(a.delay[i], want[i]);
    assert_int_equal(run(fmt("render " GC " -o %s --from 30s --to 33s --at 30s", sp("r30.png")))->code, 0);
    assert_int_equal(run(fmt("render " GC " -o %s --from 30s --to 33s --at 33s", sp("r33.png")))->code, 0);
    long exact;
    assert_int_equal(frame_vs_png(&a, 0, sp("r30.png"), &exact), 0);
    assert_int_equal(frame_vs_png(&a, a.n - 1, sp("r33.png"), &exact), 0);
    anim_free(&a);
    /* the default pace: 4 a second for 10 s; merged frames keep their time,
     * so the delays add up to 39 quarter seconds, 2 decisive seconds and
     * the 3 s hold */
    assert_int_equal(run(fmt("render " GC " -o %s", sp("pace.gif")))->code, 0);
    decode_gif(sp("pace.gif"), &a);
    long sum = 0;
    for (int i = 0; i < a.n; i++) sum += a.delay[i];
    assert_int_equal(sum, 975 + 200 + 300);
    anim_free(&a);
}

/* The same scenario gives the same bytes; the GIF is made through the
 * picture module, so the binary alone cannot, and says so. */
static void test_same_bytes(void **state) {
    (void)state;
    assert_int_equal(run(fmt("render " GC " -o %s --fps 3 --duration 4s", sp("one.gif")))->code, 0);
    assert_int_equal(run(fmt("render " GC " -o %s --fps 3 --duration 4s", sp("two.gif")))->code, 0);
    assert_true(same_file(sp("one.gif"), sp("two.gif")));
    assert_int_equal(run(fmt("render " GC " -o %s --fps 3 --duration 5s", sp("three.gif")))->code, 0);
    assert_false(same_file(sp("one.gif"), sp("three.gif")));
}

/* Nothing but the files a test made itself in dir (no temporary left). */
static int count_files(const char *dir) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void test_errors(void **state) {
    (void)state;
    char dir[1024], alone[1024];
    snprintf(dir, sizeof dir, "%s", sp("errs"));
    snprintf(alone, sizeof alone, "%s", sp("alone"));
    mkdir(dir, 0777);
    static const struct {
        const char *args, *msg;
    } cases[] = {
            {"--fps 0", "--fps takes the animation's frames per second, a whole number from 1 to 50, not '0'"},
            {"--fps 51", "--fps takes the animation's frames per second"},
            {"--duration 0s", "--duration takes the animation's length, more than 0s and at most 300s"},
            {"--duration 301s", "--duration takes the animation's length"},
            {"--fps 50 --duration 20s", "the GIF would have 1004 frames (50 a second for 20s, and 4 decisive "
                                        "events); at most 600: lower --fps or --duration"},
            {"--at 3s", "--at draws one instant; a GIF shows them all"},
            {"--height 0", "the frames of a GIF share one size: give --height N (not 0)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct result *r = run(fmt("render " GC " -o %s/x.gif %s", dir, cases[i].args));
        assert_int_equal(r->code, 64);
        if (!strstr(r->err, cases[i].msg)) fail_msg("%s: %s", cases[i].args, r->err);
    }
    struct result *r = run(fmt("render " GC " -o %s/x.png --fps 4", dir));
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "--fps and --duration shape an animation: name the output OUT.gif"));
    assert_int_equal(count_files(dir), 0);
    /* the binary copied alone: no module beside it, exit 70, nothing written */
    mkdir(alone, 0777);
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s/locksim'", bin(), alone);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/locksim render " GC " -o %s/x.gif 2>%s/err.txt", alone, dir, alone);
    int st = system(cmd);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 70);
    char err[4096];
    slurp(fmt("%s/err.txt", alone), err, sizeof err);
    assert_non_null(strstr(err, "x.gif: the picture module"));
    assert_non_null(strstr(err, "locksim-png.so cannot be loaded"));
    assert_int_equal(count_files(dir), 0);
}

/* Every slide of a story keeps the whole run's axis: at 0 s the 23 s
 * stretch of the GC pause is already drawn short (<~23s>), as in the
 * finished picture, not the whole rest of the run (<~36s>). */
static void test_at_keeps_axis(void **state) {
    (void)state;
    assert_int_equal(run(fmt("render " GC " -o %s --at 0s", sp("a0.svg")))->code, 0);
    assert_int_equal(run(fmt("render " GC " -o %s", sp("fin.svg")))->code, 0);
    static char svg[1 << 20];
    slurp(sp("fin.svg"), svg, sizeof svg);
    assert_non_null(strstr(svg, "~23s"));
    slurp(sp("a0.svg"), svg, sizeof svg);
    assert_non_null(strstr(svg, "~23s"));
    assert_null(strstr(svg, "~36s"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_first_and_last_frames),
            cmocka_unit_test(test_frame_count),
            cmocka_unit_test(test_same_bytes),
            cmocka_unit_test(test_errors),
            cmocka_unit_test(test_at_keeps_axis),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
