/* `locksim view`: the window (gfx/view.c) over the run API. This file is its
 * host: it runs the scenario once per panel (--algos), re-runs it when the
 * window sees the file change, and writes screenshots through the output
 * rules (run/output.h). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_gfx.h"
#include "view.h"

#define VIEW_MAX 8

struct view_cmd {
    struct cli_runopts ro;
    const char *file, *algos, *log, *shots;
    int quiz, bench_frames, show_all;
    long width, height;
};

/* The host: the runs of the current load and of the one before it (the
 * window may still hold the older until it has taken the new). */
struct host {
    const struct view_cmd *o;
    const char *names[VIEW_MAX];
    int n;
    struct run_result runs[2][VIEW_MAX];
    struct cli_banner cbs[2][VIEW_MAX];
    struct scene_banner bs[2][VIEW_MAX];
    const struct trace *trs[2][VIEW_MAX];
    int cur;           /* which of the two sets is the current load, -1 none */
    struct out_file shot;
};

static void close_set(struct host *h, int k) {
    for (int i = 0; i < h->n; i++)
        if (h->runs[k][i].engine || h->runs[k][i].rc) run_result_close(&h->runs[k][i]);
    memset(h->runs[k], 0, sizeof h->runs[k]);
}

static int load(void *ctx, struct view_load *out) {
    struct host *h = ctx;
    int k = h->cur == 0 ? 1 : 0; /* the set the window does not hold */
    close_set(h, k);
    for (int i = 0; i < h->n; i++) {
        struct run_spec spec = {.file = h->o->file, .seed = h->o->ro.seed, .sets = h->o->ro.sets,
                                .nsets = h->o->ro.nsets, .algo = h->names[i], .keep_trace = 1,
                                .lenient_sets = h->n > 1};
        struct run_result *r = &h->runs[k][i];
        int rc = run_scenario(&spec, r);
        if (rc) {
            snprintf(out->error, sizeof out->error, "%s", r->error);
            close_set(h, k);
            return rc;
        }
        struct report_ctx c = {.file = h->o->file, .algo = h->names[i], .sets = h->o->ro.sets,
                               .nsets = h->o->ro.nsets};
        cli_banner_fill(&h->cbs[k][i], r, &c);
        h->bs[k][i] = h->cbs[k][i].b;
        /* (quiz: the window keeps the verdict hidden, "running", until the
         * run has decided it; shown all at once, it would give answers away) */
        if (h->o->quiz && h->o->show_all) h->bs[k][i].report = NULL;
        h->trs[k][i] = engine_trace(r->engine);
    }
    /* the set the window held stays until the next load replaces it */
    out->n = (size_t)h->n;
    out->trs = h->trs[k];
    out->banners = h->bs[k];
    h->cur = k;
    return 0;
}

static int shot_open(void *ctx, const char *path, FILE **f, char *err, size_t errlen) {
    struct host *h = ctx;
    const char *inputs[] = {h->o->file};
    int rc = out_open(&h->shot, path, inputs, 1, err, errlen);
    *f = rc ? NULL : h->shot.f;
    return rc;
}

static int shot_close(void *ctx, int ok, char *err, size_t errlen) {
    struct host *h = ctx;
    if (!ok) {
        out_abort(&h->shot);
        return 0;
    }
    return out_commit(&h->shot, err, errlen);
}

static int parse_view_args(struct view_cmd *o, int argc, char **argv) {
    int st = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc, took = cli_take_common(&o->ro, cli_usage_view, argc, argv, &i, &st);
        if (took < 0) return st;
        if (took) continue;
        if (strcmp(a, "--algos") == 0 && has) o->algos = argv[++i];
        else if (strcmp(a, "--quiz") == 0) o->quiz = 1;
        else if (strcmp(a, "--show-all") == 0) o->show_all = 1;
        else if (strcmp(a, "--shots") == 0 && has) o->shots = argv[++i];
        else if (strcmp(a, "--script-log") == 0) o->log = "-";
        else if (strcmp(a, "--bench-frames") == 0 && has) {
            long n;
            if (cli_parse_int(argv[++i], 1, 100000, &n) != 0)
                return cli_usage("--bench-frames takes a count from 1 to 100000, not '%s'", argv[i]);
            o->bench_frames = (int)n;
        } else if (strcmp(a, "--width") == 0 && has) {
            if ((st = cli_parse_pixels(a, argv[++i], 320, 8192, &o->width)) != 0) return st;
        } else if (strcmp(a, "--height") == 0 && has) {
            if ((st = cli_parse_pixels(a, argv[++i], 240, 8192, &o->height)) != 0) return st;
        } else if (a[0] == '-' && a[1]) return cli_usage("unknown or incomplete option '%s' for view", a);
        else if (!o->file) o->file = a;
        else return cli_usage("view takes one scenario file; '%s' is a second", a);
    }
    if (!o->file) return cli_usage("view needs a scenario file: locksim view FILE");
    if (strcmp(o->file, "-") == 0)
        return cli_usage("view reads a file it can watch for changes, not standard input");
    if (o->algos && o->ro.algo) return cli_usage("view takes --algo A or --algos A,B,..., not both");
    return 0;
}

int cmd_view(int argc, char **argv) {
    struct view_cmd o;
    memset(&o, 0, sizeof o);
    int st = parse_view_args(&o, argc, argv);
    if (st) return st < 0 ? 0 : st;
    struct host *h = calloc(1, sizeof *h);
    if (!h) return cli_fail(LSIM_ENOMEM, "");
    h->o = &o;
    h->cur = -1;
    char names[1024] = "";
    if (o.algos) {
        snprintf(names, sizeof names, "%s", o.algos);
        for (char *p = names; *p && h->n < VIEW_MAX;) {
            size_t l = strcspn(p, ",");
            if (l == 0) {
                free(h);
                return cli_usage("--algos has an empty name in '%s'; write NAME,NAME,...", o.algos);
            }
            h->names[h->n++] = p;
            if (!p[l]) break;
            p[l] = '\0';
            p += l + 1;
        }
    } else {
        h->names[h->n++] = o.ro.algo;
    }
    struct view_host vh = {.ctx = h, .path = o.file, .load = load, .shot_open = shot_open,
                           .shot_close = shot_close};
    struct view_opts vo = {.quiz = o.quiz, .show_all = o.show_all, .shots_dir = o.shots,
                           .width = (int)o.width, .height = (int)o.height,
                           .log = o.log ? stdout : NULL, .bench_frames = o.bench_frames};
    int rc = cli_gfx_view_run(&vh, &vo);
    close_set(h, 0);
    close_set(h, 1);
    free(h);
    if (rc == LSIM_ENODISPLAY) {
        fprintf(stderr,
                "%s: %s: view needs a display (X11 or Wayland) to open its window.\n"
                "  Draw the same timeline as a picture instead: %s render %s -o out.png\n",
                cli_prog, cli_gfx_error(), cli_prog, o.file);
        return cli_exit(rc);
    }
    if (rc) {
        const char *why = cli_gfx_error();
        return cli_fail(rc, why && why[0] ? why : lsim_strerror(rc));
    }
    return 0;
}
