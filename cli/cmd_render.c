/* `locksim render`: one scenario run and drawn as a PNG or SVG picture (no
 * display needed), and the helpers `matrix --render` and `view` share: the
 * verdict banner of a run, the picture format of a file name, and writing
 * stacked panels through the output rules (run/output.h). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "cli_gfx.h"
#include "scenario.h"
#include "svg.h"
#include "viewstate.h"

int cli_banner_fill(struct cli_banner *cb, const struct run_result *r, const struct report_ctx *c) {
    memset(cb, 0, sizeof *cb);
    snprintf(cb->seed, sizeof cb->seed, "%llu", r->scn ? (unsigned long long)r->scn->seed : 0ull);
    FILE *m = fmemopen(cb->replay, sizeof cb->replay, "w");
    if (!m) return LSIM_ENOMEM; /* a picture without its replay line is not the picture asked for */
    report_replay(m, r, c);
    fclose(m);
    cb->replay[sizeof cb->replay - 1] = '\0';
    const struct trace *tr = engine_trace(r->engine);
    cb->b = (struct scene_banner){.title = tr->title[0] ? tr->title : "(untitled scenario)",
                                  .algo = r->algo ? r->algo->name : tr->algo,
                                  .seed = cb->seed,
                                  .replay = cb->replay,
                                  .report = r->report};
    return 0;
}

int cli_picture_format(const char *path, const char *format, int *svg) {
    if (format) {
        enum report_format f;
        int st = cli_format("render", format, &f);
        if (st) return st;
        *svg = f == REPORT_FMT_SVG;
        return 0;
    }
    size_t n = strlen(path);
    if (strcmp(path, "-") == 0) *svg = 0; /* standard output: PNG unless --format svg */
    else if (n > 4 && strcasecmp(path + n - 4, ".png") == 0) *svg = 0;
    else if (n > 4 && strcasecmp(path + n - 4, ".svg") == 0) *svg = 1;
    else
        return cli_usage("'%s': the picture formats are PNG and SVG; name the file OUT.png or "
                         "OUT.svg (or give --format png|svg)",
                         path);
    return 0;
}

int cli_picture_open(struct out_file *out, const char *path, const char *const *inputs, int ninputs) {
    char err[600];
    int rc = out_open(out, path, inputs, ninputs, err, sizeof err);
    return rc ? cli_fail(rc, err) : 0;
}

int cli_picture_finish(struct out_file *out, int svg, const struct trace *const *trs, size_t n,
                       const struct scene_banner *banners, const struct scene_view *v) {
    char err[4400];
    int rc = svg ? svg_render_panels(out->f, trs, n, banners, v)
                 : cli_gfx_render_png_panels(NULL, out->f, trs, n, banners, v);
    if (rc == LSIM_EOUTPUT) rc = 0; /* a short write: out_commit names the reason */
    if (rc) {
        out_abort(out);
        snprintf(err, sizeof err, "%.4000s: %s", out->path,
                 svg || !cli_gfx_error()[0] ? lsim_strerror(rc) : cli_gfx_error());
        return cli_fail(rc, err);
    }
    rc = out_commit(out, err, sizeof err);
    return rc ? cli_fail(rc, err) : 0;
}

int cli_write_picture(const char *path, int svg, const char *input, const struct trace *const *trs, size_t n,
                      const struct scene_banner *banners, const struct scene_view *v) {
    struct out_file out;
    const char *inputs[] = {input};
    int st = cli_picture_open(&out, path, inputs, input ? 1 : 0);
    return st ? st : cli_picture_finish(&out, svg, trs, n, banners, v);
}

/* A GIF's limits: the frame rate, the animation's length, the frames in all. */
#define GIF_MAX_FPS 50
#define GIF_MAX_DURATION (300 * (sim_ns)1000000000)
#define GIF_MAX_FRAMES 600
#define GIF_DEFAULT_FPS 4
#define GIF_DEFAULT_DURATION (10 * (sim_ns)1000000000)

int cli_parse_window(const char *opt, const char *text, sim_ns *out) {
    if (scn_parse_duration(text, out) != 0 || *out < 0)
        return cli_usage("%s takes a time such as 0s, 31.5s, 250ms or 2m, not '%s'", opt, text);
    return 0;
}

struct render_cmd {
    struct cli_runopts ro;
    const char *file, *out, *format;
    long width, height, fps;
    sim_ns from, to, at, duration;
    int has_from, has_to, has_at, has_fps, has_duration, has_height;
    int linear;                               /* --linear: idle stretches at their full length */
    int file_is_trace;                        /* FILE ends in .jsonl: a trace drawn as recorded, no run */
    const char *traces[CLI_MAX_RECORDED + 1]; /* --trace: each a panel under the first */
    int ntraces;
};

enum {
    OPT_FORMAT = CLI_OPT_OWN,
    OPT_WIDTH,
    OPT_HEIGHT,
    OPT_FROM,
    OPT_TO,
    OPT_AT,
    OPT_FPS,
    OPT_DURATION,
    OPT_LINEAR,
    OPT_TRACE
};
static const struct option render_options[] = {
        {"output", required_argument, NULL, 'o'},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"width", required_argument, NULL, OPT_WIDTH},
        {"height", required_argument, NULL, OPT_HEIGHT},
        {"from", required_argument, NULL, OPT_FROM},
        {"to", required_argument, NULL, OPT_TO},
        {"at", required_argument, NULL, OPT_AT},
        {"fps", required_argument, NULL, OPT_FPS},
        {"duration", required_argument, NULL, OPT_DURATION},
        {"linear", no_argument, NULL, OPT_LINEAR},
        {"trace", required_argument, NULL, OPT_TRACE},
        {NULL, 0, NULL, 0},
};
const struct option *const cli_tables_render[] = {render_options, NULL};

/* One option of render, or its file: 0, or the exit status. */
static int take_render_option(struct render_cmd *o, int c, const char *v) {
    switch (c) {
    case 'o': o->out = v; return 0;
    case OPT_FORMAT: o->format = v; return 0;
    case OPT_WIDTH: return cli_parse_pixels("--width", v, 320, 8192, &o->width);
    case OPT_HEIGHT: /* 0 = as tall as the content */
        o->has_height = 1;
        return cli_parse_pixels("--height", v, 0, 8192, &o->height);
    case OPT_TRACE:
        if (o->ntraces == CLI_MAX_RECORDED)
            return cli_usage("render draws at most %d --trace files under the scenario's run; '%s' is one more",
                             CLI_MAX_RECORDED, v);
        o->traces[o->ntraces++] = v;
        return 0;
    case OPT_FROM: o->has_from = 1; return cli_parse_window("--from", v, &o->from);
    case OPT_TO: o->has_to = 1; return cli_parse_window("--to", v, &o->to);
    case OPT_AT: o->has_at = 1; return cli_parse_window("--at", v, &o->at);
    case OPT_LINEAR: o->linear = 1; return 0;
    case OPT_FPS:
        o->has_fps = 1;
        if (cli_parse_int(v, 1, GIF_MAX_FPS, &o->fps) == 0) return 0;
        return cli_usage("--fps takes the animation's frames per second, a whole number from 1 to %d, not '%s'",
                         GIF_MAX_FPS, v);
    case OPT_DURATION:
        o->has_duration = 1;
        if (scn_parse_duration(v, &o->duration) != 0 || o->duration <= 0 || o->duration > GIF_MAX_DURATION)
            return cli_usage("--duration takes the animation's length, more than 0s and at most %ds (such as "
                             "10s or 1500ms), not '%s'",
                             (int)(GIF_MAX_DURATION / 1000000000), v);
        return 0;
    default: /* CLI_OPT_ARG */
        if (o->file) return cli_usage("render takes one scenario file; '%s' is a second", v);
        o->file = v;
        return 0;
    }
}

static int parse_render_args(struct render_cmd *o, int argc, char **argv) {
    struct cli_getopt g;
    o->width = 1280;
    o->height = 720;
    int st = cli_getopt_init_tables(&g, "render", cli_usage_render, &o->ro, cli_tables_render, argc, argv);
    for (int c; st == 0 && (c = cli_getopt_next(&g)) != CLI_OPT_END;)
        st = c == CLI_OPT_STOP ? g.status : take_render_option(o, c, g.arg);
    cli_getopt_close(&g);
    if (st) return st;
    if (!o->file) return cli_usage("render needs a scenario file: locksim render FILE -o OUT.png");
    if (!o->out) return cli_usage("render needs an output: -o OUT.png or -o OUT.svg (- for standard output)");
    if (o->has_from && o->has_to && o->to <= o->from) return cli_usage("--to must be later than --from");
    size_t n = strlen(o->file);
    o->file_is_trace = n > 6 && strcasecmp(o->file + n - 6, ".jsonl") == 0;
    if (o->file_is_trace && (o->ro.seed || o->ro.nsets || o->ro.algo))
        return cli_usage("%s is a trace (its name ends in .jsonl), drawn as it was recorded: --seed, --set and "
                         "--algo change a scenario's run; give the scenario FILE.lsim --trace %s",
                         o->file, o->file);
    return 0;
}

/* The view and banner of the picture: the time window asked for, and with
 * --at (or a frame of a GIF) the run as it stood at that instant. v and b
 * start as cmd_render sets them; decided holds the banner's words. Returns
 * 0 or the exit status. */
static int reveal_at(struct scene_view *v, struct scene_banner *b, char *decided, size_t n, const struct trace *tr,
                     const struct render_cmd *o, sim_ns at) {
    /* --at T: the run as it stood at T (a slide of the story): what had
     * happened by then, on the whole run's axis, the verdict only once the
     * run has decided it. */
    v->reveal = 1;
    v->reveal_ns = at;
    if (!o->has_to && scene_run_end(tr, v, &v->t1) != 0) return cli_fail(LSIM_ENOMEM, "");
    viewstate_banner(b, decided, n, tr, layout_events_until(tr, at));
    return 0;
}

/* ---- render -o x.gif: the reveal as an animation ----
 * The frames are times in simulated time, FROM .. TO (the run's fitted end
 * unless --to), each drawn as `render --at T` draws it: fps x duration
 * frames evenly spaced along the picture's time axis (the first at FROM,
 * the last at TO, or at the run's end when TO is the axis's fitted end, so
 * it is the finished picture), so the story sweeps the picture at a steady pace and a
 * stretch drawn short passes as fast as it is drawn, each shown 1/fps s;
 * plus one at every decisive event (a grant after an expiry, a late write,
 * a violation) held GIF_DECISIVE_CS, so no decisive moment is skipped
 * however close two come; the last frame is held GIF_HOLD_CS. */
#define GIF_DECISIVE_CS 100
#define GIF_HOLD_CS 300

struct gif_frames {
    const struct render_cmd *o;
    const struct trace *tr;
    struct scene_view v0;  /* the view before the reveal */
    struct scene_banner b; /* the whole run's banner */
    sim_ns *t;             /* the frames' times */
    int *cs;               /* and how long each shows */
    size_t n;
    char decided[500];
};

static int gif_frame(void *ctx, size_t i, struct scene_banner *banners, struct scene_view *v, int *delay_cs) {
    struct gif_frames *g = ctx;
    *v = g->v0;
    banners[0] = g->b;
    *delay_cs = g->cs[i];
    int st = reveal_at(v, &banners[0], g->decided, sizeof g->decided, g->tr, g->o, g->t[i]);
    return st ? LSIM_ENOMEM : 0;
}

static int cmp_ns(const void *a, const void *b) {
    sim_ns x = *(const sim_ns *)a, y = *(const sim_ns *)b;
    return (x > y) - (x < y);
}

/* The first time in [from, to] drawn at pixel column x or right of it
 * (scene_x_of grows with time; a compressed axis draws idle stretches short). */
static sim_ns time_at_x(const struct scene *sc, int x, sim_ns from, sim_ns to) {
    while (from < to) {
        sim_ns mid = from + (to - from) / 2;
        if (scene_x_of(sc, mid) >= x) to = mid;
        else from = mid + 1;
    }
    return from;
}

/* The times of the frames and their delays, in g (owned: free t and cs).
 * Returns 0 or the exit status. */
static int gif_plan(struct gif_frames *g, sim_ns from, sim_ns to, sim_ns last, const struct scene *sc) {
    const struct render_cmd *o = g->o;
    long fps = o->has_fps ? o->fps : GIF_DEFAULT_FPS;
    sim_ns dur = o->has_duration ? o->duration : GIF_DEFAULT_DURATION;
    /* frames of the even spacing: fps x duration, at least 2 (FROM and TO) */
    long double even_ld = (long double)fps * (long double)dur / 1e9L + 0.5L;
    size_t even = even_ld < 2 ? 2 : (size_t)even_ld;
    struct viewstate vs;
    memset(&vs, 0, sizeof vs);
    if (viewstate_init(&vs, &g->tr, 1, 0) != 0) return cli_fail(LSIM_ENOMEM, "out of memory planning the GIF");
    size_t extra = 0;
    for (size_t i = 0; i < vs.nev; i++)
        if (vs.ev[i].flags & (VIEWSTATE_DECISIVE | VIEWSTATE_VIOLATION) && vs.ev[i].t > from && vs.ev[i].t < to)
            extra++;
    if (even + extra > GIF_MAX_FRAMES) {
        viewstate_close(&vs);
        return cli_usage("the GIF would have %zu frames (%ld a second for %.3gs, and %zu decisive events); at "
                         "most %d: lower --fps or --duration",
                         even + extra, fps, (double)dur / 1e9, extra, GIF_MAX_FRAMES);
    }
    g->t = malloc((even + extra) * sizeof *g->t);
    g->cs = malloc((even + extra) * sizeof *g->cs);
    sim_ns *dec = malloc((extra ? extra : 1) * sizeof *dec);
    if (!g->t || !g->cs || !dec) {
        free(dec);
        viewstate_close(&vs);
        return cli_fail(LSIM_ENOMEM, "out of memory planning the GIF");
    }
    size_t nd = 0;
    for (size_t i = 0; i < vs.nev; i++)
        if (vs.ev[i].flags & (VIEWSTATE_DECISIVE | VIEWSTATE_VIOLATION) && vs.ev[i].t > from && vs.ev[i].t < to)
            dec[nd++] = vs.ev[i].t;
    viewstate_close(&vs);
    qsort(dec, nd, sizeof *dec, cmp_ns);
    int x0 = scene_x_of(sc, from), x1 = scene_x_of(sc, to);
    /* merge the even times (delays summing to the duration exactly) and the
     * decisive ones, an instant once */
    size_t n = 0, d = 0;
    for (size_t k = 0; k < even; k++) {
        sim_ns t = k == 0          ? from
                   : k == even - 1 ? last
                                   : time_at_x(sc, x0 + (int)((long)(x1 - x0) * (long)k / (long)(even - 1)), from, to);
        int on_decisive = 0; /* a decisive instant falls on this even frame */
        for (; d < nd && dec[d] <= t; d++) {
            on_decisive |= dec[d] == t;
            if (dec[d] < t && (n == 0 || g->t[n - 1] != dec[d])) {
                g->t[n] = dec[d];
                g->cs[n++] = GIF_DECISIVE_CS;
            }
        }
        long c0 = (long)((200 * (long)k / fps + 1) / 2), c1 = (long)((200 * (long)(k + 1) / fps + 1) / 2);
        g->t[n] = t;
        g->cs[n++] = on_decisive && c1 - c0 < GIF_DECISIVE_CS ? GIF_DECISIVE_CS : (int)(c1 - c0);
    }
    g->cs[n - 1] = GIF_HOLD_CS;
    g->n = n;
    free(dec);
    return 0;
}

/* The animation to out, committed (or aborted: nothing half-written).
 * Returns 0 or the exit status. */
static int write_gif(struct out_file *out, const struct render_cmd *o, const struct trace *tr,
                     const struct scene_view *v, const struct scene_banner *b, sim_ns run_end) {
    struct gif_frames g;
    memset(&g, 0, sizeof g);
    g.o = o, g.tr = tr, g.v0 = *v, g.b = *b;
    /* the frames' range: the window every frame shows (as --at draws it) */
    struct scene_view w = *v;
    struct scene_banner wb = *b;
    int st = reveal_at(&w, &wb, g.decided, sizeof g.decided, tr, o, v->t0);
    struct scene sc;
    memset(&sc, 0, sizeof sc);
    if (!st && scene_build_traces(&sc, &tr, 1, &w, &wb) != 0)
        st = cli_fail(LSIM_ENOMEM, "out of memory planning the GIF");
    /* the last frame: the finished picture (the run at its end, on the
     * fitted axis), or --to's instant */
    sim_ns last = o->has_to || run_end < w.t1 ? w.t1 : run_end;
    if (!st) st = gif_plan(&g, v->t0, w.t1, last, &sc);
    scene_close(&sc);
    /* When the finished picture needs its lanes drawn tighter to fit the
     * height (scene_build_panels), every frame draws them so: lanes that
     * shrink halfway through, as the legend grows, would jump. */
    struct scene_view fin = *v;
    struct scene_banner fb = *b;
    char words[500];
    if (!st) st = reveal_at(&fin, &fb, words, sizeof words, tr, o, last);
    fin.height = 0;
    if (!st && scene_build_traces(&sc, &tr, 1, &fin, &fb) != 0)
        st = cli_fail(LSIM_ENOMEM, "out of memory planning the GIF");
    if (!st && v->height > 0 && sc.height > v->height && g.v0.lane_h > g.v0.line_h) g.v0.lane_h = g.v0.line_h;
    scene_close(&sc);
    int rc = st ? 0 : cli_gfx_render_gif(out->f, out->path, &tr, 1, g.n, gif_frame, &g);
    free(g.t);
    free(g.cs);
    if (st) {
        out_abort(out);
        return st;
    }
    char err[4400];
    if (rc == LSIM_EOUTPUT) rc = 0; /* a short write: out_commit names the reason */
    if (rc) {
        out_abort(out);
        snprintf(err, sizeof err, "%.4000s: %s", out->path, cli_gfx_error()[0] ? cli_gfx_error() : lsim_strerror(rc));
        return cli_fail(rc, err);
    }
    rc = out_commit(out, err, sizeof err);
    return rc ? cli_fail(rc, err) : 0;
}

/* 1 when path names a GIF. */
static int is_gif(const char *path) {
    size_t n = strlen(path);
    return n > 4 && strcasecmp(path + n - 4, ".gif") == 0;
}

/* The options only a GIF takes, and a GIF's own rules: 0 or the exit status. */
static int check_gif_options(const struct render_cmd *o, int gif) {
    if (!gif && (o->has_fps || o->has_duration))
        return cli_usage("--fps and --duration shape an animation: name the output OUT.gif");
    if (!gif) return 0;
    if (o->has_at) return cli_usage("--at draws one instant; a GIF shows them all (--from and --to choose which)");
    if (o->format) return cli_usage("a GIF is chosen by its name, OUT.gif: leave out --format");
    if (o->height == 0) return cli_usage("the frames of a GIF share one size: give --height N (not 0)");
    return 0;
}

/* What a render draws: the scenario's run (unless FILE is a trace), then
 * each --trace file, a panel each on one time axis. */
struct render_panels {
    struct run_result r; /* the scenario's run; engine NULL when FILE is a trace */
    struct cli_banner cb;
    struct cli_recorded rec[CLI_MAX_RECORDED + 1];
    int nrec;
    const struct trace *trs[CLI_MAX_RECORDED + 1];
    struct scene_banner bs[CLI_MAX_RECORDED + 1];
    size_t n;
    sim_ns end_ns; /* the first panel's run end */
};

static void render_panels_close(struct render_panels *p) {
    for (int i = 0; i < p->nrec; i++) cli_recorded_close(&p->rec[i]);
    if (p->r.engine || p->r.rc) run_result_close(&p->r);
}

/* One trace file as the next panel, judged as a run of s (NULL: the
 * defaults), its nodes those of the first panel's (unless it is the first):
 * 0 or the exit status. */
static int add_trace(struct render_panels *p, const char *path, const struct scenario *s, const char *first) {
    struct cli_recorded *rc = &p->rec[p->nrec++];
    int st = cli_recorded_load(rc, path, s);
    char err[4000];
    if (!st && p->n && cli_recorded_match(p->trs[0], first, &rc->dst, path, err, sizeof err) != 0)
        st = cli_fail(LSIM_EPARSE, err);
    if (st) return st;
    p->trs[p->n] = &rc->dst;
    p->bs[p->n++] = rc->b;
    return 0;
}

/* The panels of o into p (closed by render_panels_close either way): 0 or
 * the exit status. */
static int render_load(struct render_panels *p, const struct render_cmd *o) {
    const struct scenario *s = NULL;
    int st;
    if (o->file_is_trace) {
        if ((st = add_trace(p, o->file, NULL, o->file)) != 0) return st;
        p->end_ns = p->rec[0].rep.end_ns;
    } else {
        struct run_spec spec = {.file = o->file,
                                .seed = o->ro.seed,
                                .sets = o->ro.sets,
                                .nsets = o->ro.nsets,
                                .algo = o->ro.algo,
                                .keep_trace = 1};
        int rc = run_scenario(&spec, &p->r);
        if (rc) return cli_fail(rc, p->r.error);
        struct report_ctx c = {.file = o->file, .algo = o->ro.algo, .sets = o->ro.sets, .nsets = o->ro.nsets};
        if (cli_banner_fill(&p->cb, &p->r, &c) != 0)
            return cli_fail(LSIM_ENOMEM, "out of memory writing the replay line");
        p->trs[0] = engine_trace(p->r.engine);
        p->bs[0] = p->cb.b;
        p->n = 1;
        p->end_ns = p->r.report->end_ns;
        s = p->r.scn;
    }
    for (int i = 0; i < o->ntraces; i++)
        if ((st = add_trace(p, o->traces[i], s, o->file)) != 0) return st;
    return 0;
}

int cmd_render(int argc, char **argv) {
    struct render_cmd o;
    memset(&o, 0, sizeof o);
    int st = parse_render_args(&o, argc, argv), svg = 0;
    if (st) return st < 0 ? 0 : st;
    int gif = is_gif(o.out);
    if ((st = check_gif_options(&o, gif)) != 0) return st;
    if (gif && o.ntraces)
        return cli_usage("a GIF animates one run; draw it stacked with recorded runs as OUT.png or OUT.svg");
    if (!gif && (st = cli_picture_format(o.out, o.format, &svg)) != 0) return st;
    /* Open the output first: writing over the scenario (or a trace) is
     * refused before it runs. */
    const char *inputs[CLI_MAX_RECORDED + 2];
    int ninputs = 0;
    if (strcmp(o.file, "-") != 0) inputs[ninputs++] = o.file;
    for (int i = 0; i < o.ntraces; i++)
        if (strcmp(o.traces[i], "-") != 0) inputs[ninputs++] = o.traces[i];
    struct out_file out;
    if ((st = cli_picture_open(&out, o.out, inputs, ninputs)) != 0) return st;
    struct render_panels *p = calloc(1, sizeof *p);
    if (!p) {
        out_abort(&out);
        return cli_fail(LSIM_ENOMEM, "");
    }
    if ((st = render_load(p, &o)) != 0) {
        out_abort(&out);
        render_panels_close(p);
        free(p);
        return st;
    }
    struct scene_view v;
    /* stacked panels: as tall as they are, unless --height says */
    scene_view_pixels(&v, (int)o.width, p->n > 1 && !o.has_height ? 0 : (int)o.height);
    const struct trace *tr = p->trs[0];
    v.t0 = o.has_from ? o.from : 0;
    v.t1 = o.has_to ? o.to : (o.has_from ? p->end_ns : 0);
    /* The whole run reads best with idle stretches drawn short; a window the
     * user chose, or --linear, is shown in true, linear time. */
    if (o.has_from || o.has_to || o.linear) v.compressed = 0;
    char decided[CLI_MAX_RECORDED + 1][500];
    if (o.has_from && !o.has_to && v.t1 <= v.t0) {
        out_abort(&out);
        st = cli_usage("--from is at or after the end of the run");
    } else if (gif) st = write_gif(&out, &o, tr, &v, &p->bs[0], p->end_ns);
    else if (o.has_at && (st = reveal_at(&v, &p->bs[0], decided[0], sizeof decided[0], tr, &o, o.at)) != 0)
        out_abort(&out);
    else {
        for (size_t i = 1; o.has_at && i < p->n; i++) /* each recorded run as it stood at --at */
            viewstate_banner(&p->bs[i], decided[i], sizeof decided[i], p->trs[i], layout_events_until(p->trs[i], o.at));
        st = cli_picture_finish(&out, svg, p->trs, p->n, p->bs, &v);
    }
    render_panels_close(p);
    free(p);
    return st;
}
