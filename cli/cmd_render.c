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

int cli_picture_open(struct out_file *out, const char *path, const char *input) {
    char err[600];
    const char *inputs[] = {input};
    int rc = out_open(out, path, inputs, input ? 1 : 0, err, sizeof err);
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
    int st = cli_picture_open(&out, path, input);
    return st ? st : cli_picture_finish(&out, svg, trs, n, banners, v);
}

int cli_parse_window(const char *opt, const char *text, sim_ns *out) {
    if (scn_parse_duration(text, out) != 0 || *out < 0)
        return cli_usage("%s takes a time such as 0s, 31.5s, 250ms or 2m, not '%s'", opt, text);
    return 0;
}

struct render_cmd {
    struct cli_runopts ro;
    const char *file, *out, *format;
    long width, height;
    sim_ns from, to, at;
    int has_from, has_to, has_at;
};

enum { OPT_FORMAT = CLI_OPT_OWN, OPT_WIDTH, OPT_HEIGHT, OPT_FROM, OPT_TO, OPT_AT };
static const struct option render_options[] = {
        {"output", required_argument, NULL, 'o'},      {"format", required_argument, NULL, OPT_FORMAT},
        {"width", required_argument, NULL, OPT_WIDTH}, {"height", required_argument, NULL, OPT_HEIGHT},
        {"from", required_argument, NULL, OPT_FROM},   {"to", required_argument, NULL, OPT_TO},
        {"at", required_argument, NULL, OPT_AT},       {NULL, 0, NULL, 0},
};
const struct option *const cli_tables_render[] = {render_options, NULL};

/* One option of render, or its file: 0, or the exit status. */
static int take_render_option(struct render_cmd *o, int c, const char *v) {
    switch (c) {
    case 'o': o->out = v; return 0;
    case OPT_FORMAT: o->format = v; return 0;
    case OPT_WIDTH: return cli_parse_pixels("--width", v, 320, 8192, &o->width);
    case OPT_HEIGHT: /* 0 = as tall as the content */ return cli_parse_pixels("--height", v, 0, 8192, &o->height);
    case OPT_FROM: o->has_from = 1; return cli_parse_window("--from", v, &o->from);
    case OPT_TO: o->has_to = 1; return cli_parse_window("--to", v, &o->to);
    case OPT_AT: o->has_at = 1; return cli_parse_window("--at", v, &o->at);
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
    return 0;
}

int cmd_render(int argc, char **argv) {
    struct render_cmd o;
    memset(&o, 0, sizeof o);
    int st = parse_render_args(&o, argc, argv), svg = 0;
    if (st) return st < 0 ? 0 : st;
    if ((st = cli_picture_format(o.out, o.format, &svg)) != 0) return st;
    /* Open the output first: writing over the scenario is refused before it runs. */
    struct out_file out;
    if ((st = cli_picture_open(&out, o.out, strcmp(o.file, "-") ? o.file : NULL)) != 0) return st;
    struct run_spec spec = {.file = o.file,
                            .seed = o.ro.seed,
                            .sets = o.ro.sets,
                            .nsets = o.ro.nsets,
                            .algo = o.ro.algo,
                            .keep_trace = 1};
    struct run_result r;
    int rc = run_scenario(&spec, &r);
    if (rc) {
        out_abort(&out);
        run_result_close(&r);
        return cli_fail(rc, r.error);
    }
    struct report_ctx c = {.file = o.file, .algo = o.ro.algo, .sets = o.ro.sets, .nsets = o.ro.nsets};
    struct cli_banner cb;
    if ((rc = cli_banner_fill(&cb, &r, &c)) != 0) {
        out_abort(&out);
        run_result_close(&r);
        return cli_fail(rc, "out of memory writing the replay line");
    }
    struct scene_view v;
    scene_view_pixels(&v, (int)o.width, (int)o.height);
    const struct trace *tr = engine_trace(r.engine);
    v.t0 = o.has_from ? o.from : 0;
    v.t1 = o.has_to ? o.to : (o.has_from ? r.report->end_ns : 0);
    /* The whole run reads best with idle stretches drawn short; a window the
     * user chose is shown in true, linear time. */
    if (o.has_from || o.has_to) v.compressed = 0;
    if (o.has_from && !o.has_to && v.t1 <= v.t0) {
        out_abort(&out);
        run_result_close(&r);
        return cli_usage("--from is at or after the end of the run");
    }
    /* --at T: the run as it stood at T (a slide of the story): what had
     * happened by then, on the whole run's axis, the verdict only once the
     * run has decided it. */
    char decided[500];
    if (o.has_at) {
        v.reveal = 1;
        v.reveal_ns = o.at;
        if (!o.has_to && scene_run_end(tr, &v, &v.t1) != 0) {
            out_abort(&out);
            run_result_close(&r);
            return cli_fail(LSIM_ENOMEM, "");
        }
        viewstate_banner(&cb.b, decided, sizeof decided, tr, layout_events_until(tr, o.at));
    }
    st = cli_picture_finish(&out, svg, &tr, 1, &cb.b, &v);
    run_result_close(&r);
    return st;
}
