/* Tests of `locksim render` and `locksim matrix --render` as a user runs
 * them: exit codes, the file written (PNG signature, SVG that xmllint
 * accepts), the same bytes twice, time windows, and the errors. The pixels
 * themselves are tested in test_gfx.c; this binary does not link SDL. */
#include "cli_util.h"

#include <sys/stat.h>

#define GC "scenarios/gc-pause-outlives-lease.lsim"
#define FENCED "scenarios/fencing-rejects-stale-write.lsim"

static char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static int same_bytes(const char *a, const char *b) {
    size_t la, lb;
    char *x = read_all(a, &la), *y = read_all(b, &lb);
    int same = x && y && la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

static int is_png(const char *path) {
    size_t n;
    char *b = read_all(path, &n);
    int ok = b && n > 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0;
    free(b);
    return ok;
}

static int xmllint_ok(const char *path) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s' 2>/dev/null", path);
    return system(cmd) == 0;
}

static void out_dir(void) {
    mkdir("build", 0777);
    mkdir("build/render_cmd", 0777);
}

/* A PNG is written, needs no display, and repeats byte for byte. */
static void test_png_written_and_repeats(void **state) {
    (void)state;
    out_dir();
    remove("build/render_cmd/a.png");
    /* Step 1: render with no display at all (DISPLAY and WAYLAND_DISPLAY unset). */
    struct result *r = run_in("env -u DISPLAY -u WAYLAND_DISPLAY", "render " GC " -o build/render_cmd/a.png");
    assert_int_equal(r->code, 0);
    assert_true(is_png("build/render_cmd/a.png"));
    /* Step 2: again, to another file: the same bytes. */
    r = run("render " GC " -o build/render_cmd/b.png");
    assert_int_equal(r->code, 0);
    assert_true(same_bytes("build/render_cmd/a.png", "build/render_cmd/b.png"));
    /* Step 3: another seed of a scenario is another picture, not the same bytes. */
    r = run("render " FENCED " -o build/render_cmd/c.png");
    assert_int_equal(r->code, 0);
    assert_false(same_bytes("build/render_cmd/a.png", "build/render_cmd/c.png"));
}

/* What the dynamic loader reported in r (LD_DEBUG=libs on stderr): the PNG
 * module, libpng and FreeType, and none of SDL's libraries. */
static void assert_png_module_only(const struct result *r) {
    assert_non_null(strstr(r->err, "calling init: "));
    assert_non_null(strstr(r->err, "locksim-png.so"));
    assert_non_null(strstr(r->err, "libpng16.so"));
    assert_non_null(strstr(r->err, "libfreetype.so"));
    assert_null(strstr(r->err, "libSDL2"));
    assert_null(strstr(r->err, "libharfbuzz"));
    assert_null(strstr(r->err, "libglib"));
    assert_null(strstr(r->err, "locksim-gfx.so"));
}

/* A PNG loads the picture module without SDL (issue 9, "Speed": SDL2 and
 * SDL2_ttf brought 59 shared libraries to a whole-process render): the
 * dynamic loader's own list of what it initialised (LD_DEBUG=libs) names
 * locksim-png.so, libpng and FreeType, and no libSDL2, harfbuzz or glib;
 * an SVG loads no module at all. The sweep's heatmap (sweep --png, and
 * merge --png of its shards) is drawn by the same module, also without SDL. */
static void test_png_loads_no_sdl(void **state) {
    (void)state;
    out_dir();
    struct result *r = run_in("env LD_DEBUG=libs", "render " GC " -o build/render_cmd/ld.png");
    assert_int_equal(r->code, 0);
    assert_true(is_png("build/render_cmd/ld.png"));
    assert_png_module_only(r);
    /* Step 2: a sweep's heatmap as PNG, 3 x 2 cells. */
    remove("build/render_cmd/hm.png");
    r = run_in("env LD_DEBUG=libs", "sweep " GC " --vary pause=20s,25s,30s --vary ttl=20s,30s "
                                    "--png build/render_cmd/hm.png --out build/render_cmd/hm.csv");
    assert_int_equal(r->code, 0);
    assert_true(is_png("build/render_cmd/hm.png"));
    assert_png_module_only(r);
    /* Step 3: merge --png of two shards of it: the same module, the same bytes. */
    const char *sweep = "sweep " GC " --vary pause=20s,25s,30s --vary ttl=20s,30s";
    char cmd[512];
    for (int k = 1; k <= 2; k++) {
        snprintf(cmd, sizeof cmd, "%s --shard %d/2 --out build/render_cmd/hm%d.jsonl", sweep, k, k);
        assert_int_equal(run(cmd)->code, 0);
    }
    r = run_in("env LD_DEBUG=libs", "merge build/render_cmd/hm1.jsonl build/render_cmd/hm2.jsonl "
                                    "--png build/render_cmd/hm-merged.png --out build/render_cmd/hm-merged.csv");
    assert_int_equal(r->code, 0);
    assert_png_module_only(r);
    assert_true(same_bytes("build/render_cmd/hm.png", "build/render_cmd/hm-merged.png"));
    r = run_in("env LD_DEBUG=libs", "render " GC " -o build/render_cmd/ld.svg");
    assert_int_equal(r->code, 0);
    assert_null(strstr(r->err, "locksim-png.so"));
    assert_null(strstr(r->err, "libfreetype.so"));
}

/* An SVG is valid XML, carries the banner and the story as text, and repeats. */
static void test_svg_valid_and_repeats(void **state) {
    (void)state;
    out_dir();
    struct result *r = run("render " GC " -o build/render_cmd/a.svg");
    assert_int_equal(r->code, 0);
    assert_true(xmllint_ok("build/render_cmd/a.svg"));
    r = run("render " GC " -o build/render_cmd/b.svg");
    assert_int_equal(r->code, 0);
    assert_true(same_bytes("build/render_cmd/a.svg", "build/render_cmd/b.svg"));
    size_t n;
    char *svg = read_all("build/render_cmd/a.svg", &n);
    assert_non_null(svg);
    assert_non_null(strstr(svg, "GC pause outlives the lease")); /* title */
    assert_non_null(strstr(svg, "UNSAFE"));                      /* verdict */
    assert_non_null(strstr(svg, "locksim run " GC " --seed 1")); /* replay */
    assert_non_null(strstr(svg, "DOUBLE ENTRY"));
    free(svg);
}

/* --from/--to show a window: other ticks, and a window of a second shows the
 * half-second tick the whole run does not. */
static void test_time_window(void **state) {
    (void)state;
    out_dir();
    struct result *r = run("render " GC " -o build/render_cmd/w.svg --from 30s --to 32s");
    assert_int_equal(r->code, 0);
    assert_true(xmllint_ok("build/render_cmd/w.svg"));
    size_t n;
    char *svg = read_all("build/render_cmd/w.svg", &n);
    assert_non_null(strstr(svg, ">30.5s<"));
    free(svg);
    svg = read_all("build/render_cmd/a.svg", &n);
    if (!svg) { /* the SVG test did not run first */
        assert_int_equal(run("render " GC " -o build/render_cmd/a.svg")->code, 0);
        svg = read_all("build/render_cmd/a.svg", &n);
    }
    assert_null(strstr(svg, ">30.5s<"));
    free(svg);
    /* the PNG of the window differs from the whole run's */
    assert_int_equal(run("render " GC " -o build/render_cmd/w.png --from 30s --to 32s")->code, 0);
    assert_int_equal(run("render " GC " -o build/render_cmd/whole.png")->code, 0);
    assert_false(same_bytes("build/render_cmd/w.png", "build/render_cmd/whole.png"));
    /* --to before --from, and a time that is not one, are usage errors */
    r = run("render " GC " -o build/render_cmd/x.png --from 32s --to 30s");
    assert_int_equal(r->code, 64);
    r = run("render " GC " -o build/render_cmd/x.png --from soon");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "--from"));
}

/* --linear: the whole run on one scale, no idle stretch drawn short. The
 * seed's story shortens its 27 s pause ("<~23s>", ticks 0s 2s 4s 30s ...);
 * linear, the ticks run 0s 5s 10s ... 35s and no gap is marked. */
static void test_linear_axis(void **state) {
    (void)state;
    out_dir();
    size_t n;
    assert_int_equal(run("render " GC " -o build/render_cmd/c.svg")->code, 0);
    char *svg = read_all("build/render_cmd/c.svg", &n);
    assert_non_null(svg);
    assert_non_null(strstr(svg, "&lt;~23s&gt;"));
    assert_null(strstr(svg, ">15s<"));
    free(svg);
    struct result *r = run("render " GC " -o build/render_cmd/l.svg --linear");
    assert_int_equal(r->code, 0);
    assert_true(xmllint_ok("build/render_cmd/l.svg"));
    svg = read_all("build/render_cmd/l.svg", &n);
    assert_non_null(svg);
    assert_null(strstr(svg, "&lt;~"));
    for (int t = 0; t <= 35; t += 5) {
        char tick[16];
        snprintf(tick, sizeof tick, ">%ds<", t);
        assert_non_null(strstr(svg, tick));
    }
    free(svg);
    assert_int_equal(run("render " GC " -o build/render_cmd/l.png --linear")->code, 0);
    assert_int_equal(run("render " GC " -o build/render_cmd/c.png")->code, 0);
    assert_false(same_bytes("build/render_cmd/l.png", "build/render_cmd/c.png"));
}

/* Size options and standard output. */
static void test_size_and_stdout(void **state) {
    (void)state;
    out_dir();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s render " GC " -o - --width 640 --height 0 > build/render_cmd/s.png", bin());
    assert_int_equal(system(cmd), 0);
    assert_true(is_png("build/render_cmd/s.png"));
    snprintf(cmd, sizeof cmd, "%s render " GC " -o - --format svg > build/render_cmd/s.svg", bin());
    assert_int_equal(system(cmd), 0);
    assert_true(xmllint_ok("build/render_cmd/s.svg"));
    struct result *r = run("render " GC " -o build/render_cmd/x.png --width 10");
    assert_int_equal(r->code, 64);
}

/* Errors: a format we do not write, no output, the input as output, a full
 * disk, a missing or malformed scenario. */
static void test_errors(void **state) {
    (void)state;
    out_dir();
    struct result *r = run("render " GC " -o build/render_cmd/x.bmp");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "PNG"));
    assert_non_null(strstr(r->err, "SVG"));
    r = run("render " GC);
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "-o"));
    write_file("build/render_cmd/in.svg", "scenario \"x\"\n");
    r = run("render build/render_cmd/in.svg -o build/render_cmd/in.svg");
    assert_int_equal(r->code, 64);
    if (access("/dev/full", W_OK) == 0) {
        r = run("render " GC " -o /dev/full --format png");
        assert_int_equal(r->code, 73);
    }
    r = run("render build/render_cmd/none.lsim -o build/render_cmd/x.png");
    assert_int_equal(r->code, 66);
    write_file("build/render_cmd/bad.lsim", "clients A\nttl banana\n");
    r = run("render build/render_cmd/bad.lsim -o build/render_cmd/x.png");
    assert_int_equal(r->code, 65);
    assert_non_null(strstr(r->err, "bad.lsim:"));
    assert_int_not_equal(access("build/render_cmd/x.png", F_OK), 0); /* nothing written */
}

/* matrix --render: one panel per algorithm, PNG or SVG; the table is still printed. */
static void test_matrix_render(void **state) {
    (void)state;
    out_dir();
    struct result *r = run("matrix " GC " --algos lease,fenced-lease --render build/render_cmd/m.png");
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "fenced-lease"));
    assert_true(is_png("build/render_cmd/m.png"));
    r = run("matrix " GC " --algos lease,fenced-lease --render build/render_cmd/m.svg");
    assert_int_equal(r->code, 0);
    assert_true(xmllint_ok("build/render_cmd/m.svg"));
    size_t n;
    char *svg = read_all("build/render_cmd/m.svg", &n);
    assert_non_null(strstr(svg, "algorithm: lease"));
    assert_non_null(strstr(svg, "algorithm: fenced-lease"));
    free(svg);
    r = run("matrix " GC " --algos lease,fenced-lease --render build/render_cmd/m2.png");
    assert_true(same_bytes("build/render_cmd/m.png", "build/render_cmd/m2.png"));
    r = run("matrix " GC " --render build/render_cmd/m.gif");
    assert_int_equal(r->code, 64);
}

/* --at T: the slides of a story. Before the double entry the banner says
 * "running" and nothing later is drawn (no B acquisition); just after it,
 * the verdict and what decided it, not the end's headline; at the run's end
 * the very bytes of the whole picture, SVG and PNG. */
static void test_render_at(void **state) {
    (void)state;
    out_dir();
    size_t n;
    assert_int_equal(run("render " GC " -o build/render_cmd/at20.svg --at 20s")->code, 0);
    assert_true(xmllint_ok("build/render_cmd/at20.svg"));
    char *svg = read_all("build/render_cmd/at20.svg", &n);
    assert_non_null(strstr(svg, ">running<"));
    assert_non_null(strstr(svg, "the verdict shows once the run has decided it"));
    assert_null(strstr(svg, "UNSAFE"));
    assert_null(strstr(svg, "<title>B acquires"));
    assert_null(strstr(svg, "DOUBLE ENTRY"));
    assert_non_null(strstr(svg, "<title>A acquires, t=0s</title>"));
    free(svg);
    assert_int_equal(run("render " GC " -o build/render_cmd/at31.svg --at 31500ms")->code, 0);
    svg = read_all("build/render_cmd/at31.svg", &n);
    assert_non_null(strstr(svg, "UNSAFE at 31s: A and B are both in the critical section"));
    assert_null(strstr(svg, "lost update")); /* the end's headline tells of 32s */
    assert_non_null(strstr(svg, "<title>B acquires, t=31s</title>"));
    assert_null(strstr(svg, "<title>A releases"));
    free(svg);
    assert_int_equal(run("render " GC " -o build/render_cmd/at60.svg --at 60s")->code, 0);
    assert_int_equal(run("render " GC " -o build/render_cmd/all.svg")->code, 0);
    assert_true(same_bytes("build/render_cmd/at60.svg", "build/render_cmd/all.svg"));
    assert_int_equal(run("render " GC " -o build/render_cmd/at60.png --at 60s")->code, 0);
    assert_int_equal(run("render " GC " -o build/render_cmd/all.png")->code, 0);
    assert_true(same_bytes("build/render_cmd/at60.png", "build/render_cmd/all.png"));
    struct result *r = run("render " GC " -o build/render_cmd/x.svg --at later");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "--at takes a time such as"));
}

/* --height is honoured exactly (a 16:9 slide frame can be relied on): five
 * Redlock servers do not fit 720 px with their legend, so the lanes are
 * drawn tighter and the legend is left out, saying so; the PNG and the SVG
 * are 1280 x 720 all the same. */
static void test_height_exact(void **state) {
    (void)state;
    out_dir();
    const char *rl = "scenarios/redlock-gc-pause-after-acquire.lsim";
    assert_int_equal(run(fmt("render %s -o build/render_cmd/h.svg --width 1280 --height 720", rl))->code, 0);
    size_t n;
    char *svg = read_all("build/render_cmd/h.svg", &n);
    assert_non_null(strstr(svg, "width=\"1280\" height=\"720\""));
    assert_non_null(strstr(svg, "the legend is left out to fit 720 px"));
    free(svg);
    assert_int_equal(run(fmt("render %s -o build/render_cmd/h.png --width 1280 --height 720", rl))->code, 0);
    unsigned char head[24];
    FILE *f = fopen("build/render_cmd/h.png", "rb");
    assert_non_null(f);
    assert_int_equal(fread(head, 1, sizeof head, f), sizeof head);
    fclose(f);
    unsigned w = (unsigned)head[16] << 24 | head[17] << 16 | head[18] << 8 | head[19];
    unsigned h = (unsigned)head[20] << 24 | head[21] << 16 | head[22] << 8 | head[23];
    assert_int_equal(w, 1280);
    assert_int_equal(h, 720);
    /* --height 0: as tall as the content, the legend drawn. */
    assert_int_equal(run(fmt("render %s -o build/render_cmd/h0.svg --height 0", rl))->code, 0);
    svg = read_all("build/render_cmd/h0.svg", &n);
    assert_null(strstr(svg, "the legend is left out"));
    assert_non_null(strstr(svg, "server grants a lease"));
    free(svg);
}

/* Thousands of clients in a picture of a set height (issue 19): as many
 * client lanes as fit, then one row naming the others, the servers and the
 * resource still drawn; never cut without a word. */
static void test_many_clients_bounded(void **state) {
    (void)state;
    out_dir();
    FILE *f = fopen("build/render_cmd/many.lsim", "w");
    assert_non_null(f);
    fputs("title \"many clients\"\nlock lease ttl=30s\nresource stock=100000 fencing=off\nduration 60s\n"
          "clients 3000: acquire retry=1s; read; write; release\n",
          f);
    fclose(f);
    assert_int_equal(run("render build/render_cmd/many.lsim -o build/render_cmd/many.svg")->code, 0);
    size_t n;
    char *svg = read_all("build/render_cmd/many.svg", &n);
    assert_non_null(strstr(svg, "height=\"720\""));
    assert_non_null(strstr(svg, "+ 2987 more clients, not drawn: C14 .. C3000"));
    assert_non_null(strstr(svg, ">C13<"));
    assert_null(strstr(svg, ">C14<"));
    assert_non_null(strstr(svg, ">S1<")); /* the server and the resource are still there */
    assert_non_null(strstr(svg, ">R<"));
    free(svg);
}

/* Show the cluster: a partition is a NETWORK row with the groups in words
 * (the SVG can be searched for them), healed or not; a message dropped by
 * it points at the node it never reached (B -> S4 ends on S4's lane, not
 * halfway, on a lane between). */
static void test_partition_drawn(void **state) {
    (void)state;
    out_dir();
    assert_int_equal(run("render scenarios/consensus-minority-cannot-grant.lsim -o build/render_cmd/part.svg")->code,
                     0);
    size_t n;
    char *svg = read_all("build/render_cmd/part.svg", &n);
    assert_non_null(strstr(svg, ">NETWORK</text>"));
    assert_non_null(strstr(svg, ">partition from 0s (never healed): S1 S2 B | S3 S4 S5 A R</text>"));
    int label_y = -1;
    const char *s4 = strstr(svg, "font-weight=\"bold\" fill=\"#1a1a1a\">S4</text>");
    assert_non_null(s4);
    for (const char *q = s4; q > svg && label_y < 0; q--)
        if (strncmp(q, "y=\"", 3) == 0) label_y = atoi(q + 3);
    const char *drop = strstr(svg, "<title>message B -&gt; S4 sent t=6.004s, dropped");
    assert_non_null(drop);
    int x1, y1, x2, y2;
    assert_int_equal(
            sscanf(strstr(drop, "<line "), "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"", &x1, &y1, &x2, &y2), 4);
    assert_true(y2 > label_y - 2 * 26 && y2 <= label_y); /* at S4's lane: its label's line */
    free(svg);
    assert_int_equal(run("render scenarios/consensus-leader-partitioned.lsim -o build/render_cmd/part2.svg")->code, 0);
    svg = read_all("build/render_cmd/part2.svg", &n);
    assert_non_null(strstr(svg, ">partition 3s..30s, then healed: S1 A | S2 S3 S4 S5 B R</text>"));
    free(svg);
}

#define REC "tests/recorded/gc-pause-outlives-lease-redis.jsonl"

/* The height of a PNG, from its IHDR chunk; -1 when it is not one. */
static long png_height(const char *path) {
    size_t n;
    unsigned char *b = (unsigned char *)read_all(path, &n);
    long h = b && n > 24 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0
                     ? (long)b[20] << 24 | (long)b[21] << 16 | (long)b[22] << 8 | (long)b[23]
                     : -1;
    free(b);
    return h;
}

/* The offset of the k-th (from 0) occurrence of needle in hay, or -1. */
static long nth(const char *hay, const char *needle, int k) {
    const char *p = hay;
    for (int i = 0; (p = strstr(p, needle)) != NULL; i++, p++)
        if (i == k) return (long)(p - hay);
    return -1;
}

/* render FILE --trace REC: the simulated run, then the recorded one (a
 * real redis-server run, committed as a fixture) under it on the same
 * axis, with its own banner (what it was recorded against, at what scale,
 * its verdict from the checker) and its own double entry, a second longer
 * than the simulated one's seconds (real times). */
static void test_render_recorded_stacked(void **state) {
    (void)state;
    out_dir();
    struct result *r = run("render " GC " --trace " REC " -o build/render_cmd/st.svg");
    assert_int_equal(r->code, 0);
    assert_true(xmllint_ok("build/render_cmd/st.svg"));
    size_t n;
    char *svg = read_all("build/render_cmd/st.svg", &n);
    assert_non_null(svg);
    /* Step 1: the simulated panel first, its double entry of 1 s. */
    long sim_de = nth(svg, "A and B both in the critical section (1s)", 0);
    long banner = nth(svg, ">Real run: GC pause outlives the lease<", 0);
    assert_true(sim_de > 0 && banner > sim_de);
    /* Step 2: the recorded panel's banner: what the recording says it ran
     * against, at what scale, and the checker's verdict over its events. */
    assert_true(nth(svg,
                    "recorded against redis-server on 127.0.0.1:16384, one process per client; time scale "
                    "0.0416667; the trace",
                    0) > banner);
    assert_true(nth(svg, ">UNSAFE<", 1) > banner);
    /* Step 3: its own double entry, at the real times (real elapsed time / S,
     * 31.006041816 s in the file, drawn to the microsecond), under its
     * banner. */
    long real_de = nth(svg, "^ 31.006042s..32.03644s  A and B both in the critical section (1.030398s)", 0);
    assert_true(real_de > banner);
    assert_true(nth(svg, ">DOUBLE ENTRY<", 1) > banner);
    free(svg);
    /* Step 4: as a PNG, two panels stand taller than the one of the run alone. */
    assert_int_equal(run("render " GC " --trace " REC " -o build/render_cmd/st.png")->code, 0);
    assert_int_equal(run("render " GC " -o build/render_cmd/one.png --height 0")->code, 0);
    long h2 = png_height("build/render_cmd/st.png"), h1 = png_height("build/render_cmd/one.png");
    assert_true(h1 > 300 && h2 > h1 + 300);
}

/* render REC.jsonl: a trace file alone (its name ends in .jsonl), drawn as
 * recorded, judged by the checker; no scenario run, no replay line. */
static void test_render_trace_alone(void **state) {
    (void)state;
    out_dir();
    struct result *r = run("render " REC " -o build/render_cmd/alone.svg");
    assert_int_equal(r->code, 0);
    size_t n;
    char *svg = read_all("build/render_cmd/alone.svg", &n);
    assert_non_null(svg);
    assert_true(nth(svg, ">Real run: GC pause outlives the lease<", 0) > 0);
    assert_true(nth(svg, "(1.030398s)", 0) > 0);
    assert_int_equal(nth(svg, "replay:", 0), -1);
    assert_int_equal(nth(svg, "(1s)", 0), -1); /* no simulated panel */
    free(svg);
    /* a simulated trace given as --trace: not a recording, its times exact */
    assert_int_equal(run("run " GC " --trace build/render_cmd/sim.jsonl")->code, 0);
    r = run("render " GC " --trace build/render_cmd/sim.jsonl -o build/render_cmd/sim2.svg");
    assert_int_equal(r->code, 0);
    svg = read_all("build/render_cmd/sim2.svg", &n);
    assert_non_null(svg);
    long t = nth(svg, ">Trace: GC pause outlives the lease<", 0);
    assert_true(t > 0);
    assert_true(nth(svg, "the trace sim.jsonl (seed 1), judged by the checker again", 0) > t);
    assert_true(nth(svg, "A and B both in the critical section (1s)", 1) > t);
    free(svg);
    /* a trace is not run again: a seed or a --set has nothing to change */
    r = run("render " REC " --seed 3 -o build/render_cmd/alone.svg");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "is a trace (its name ends in .jsonl)"));
}

/* A trace of another scenario (other nodes) is refused, naming the first
 * difference, and nothing is written. */
static void test_render_recorded_mismatch_refused(void **state) {
    (void)state;
    out_dir();
    remove("build/render_cmd/mm.png");
    struct result *r = run("render scenarios/redlock-restart-without-persistence.lsim --trace " REC
                           " -o build/render_cmd/mm.png");
    assert_int_equal(r->code, 65);
    assert_non_null(strstr(r->err, REC ": not a run of scenarios/redlock-restart-without-persistence.lsim: its node "
                                       "4 is R (resource), the scenario's S2 (server)"));
    struct stat st;
    assert_int_equal(stat("build/render_cmd/mm.png", &st), -1);
    /* the output may not be one of the inputs: the trace is one */
    r = run("render " GC " --trace build/render_cmd/st.svg -o build/render_cmd/st.svg");
    assert_int_equal(r->code, 64);
}

/* A malformed line of a trace reaches the user as FILE:N: what is wrong. */
static void test_render_recorded_bad_line(void **state) {
    (void)state;
    out_dir();
    size_t n;
    char *text = read_all(REC, &n);
    assert_non_null(text);
    char *p = strstr(text, "\"kind\":\"acquire-start\""); /* on line 5 */
    assert_non_null(p);
    memcpy(p, "\"kind\":\"acquire-strat\"", 22);
    FILE *f = fopen("build/render_cmd/bad.jsonl", "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    fclose(f);
    free(text);
    struct result *r = run("render " GC " --trace build/render_cmd/bad.jsonl -o build/render_cmd/bad.png");
    assert_int_equal(r->code, 65);
    assert_string_equal(r->err, "build/render_cmd/bad.jsonl:5: unknown kind \"acquire-strat\"\n");
    /* check-trace reads it the same way and says so in the same words */
    r = run("check-trace build/render_cmd/bad.jsonl");
    assert_int_equal(r->code, 65);
    assert_string_equal(r->err, "build/render_cmd/bad.jsonl:5: unknown kind \"acquire-strat\"\n");
    /* view reads it before it opens a window, display or not, the same way */
    r = run_in("env -u DISPLAY -u WAYLAND_DISPLAY -u SDL_VIDEODRIVER",
               "view " GC " --trace build/render_cmd/bad.jsonl");
    assert_int_equal(r->code, 65);
    assert_string_equal(r->err, "build/render_cmd/bad.jsonl:5: unknown kind \"acquire-strat\"\n");
    /* a GIF animates one run: stacked, it is refused */
    r = run("render " GC " --trace " REC " -o build/render_cmd/st.gif --height 720");
    assert_int_equal(r->code, 64);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_png_written_and_repeats),
            cmocka_unit_test(test_png_loads_no_sdl),
            cmocka_unit_test(test_svg_valid_and_repeats),
            cmocka_unit_test(test_time_window),
            cmocka_unit_test(test_linear_axis),
            cmocka_unit_test(test_size_and_stdout),
            cmocka_unit_test(test_errors),
            cmocka_unit_test(test_matrix_render),
            cmocka_unit_test(test_render_at),
            cmocka_unit_test(test_height_exact),
            cmocka_unit_test(test_many_clients_bounded),
            cmocka_unit_test(test_partition_drawn),
            cmocka_unit_test(test_render_recorded_stacked),
            cmocka_unit_test(test_render_trace_alone),
            cmocka_unit_test(test_render_recorded_mismatch_refused),
            cmocka_unit_test(test_render_recorded_bad_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
