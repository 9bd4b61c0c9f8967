/* `locksim sweep`: one scenario over a grid of --set values (one to four
 * varied keys), for every seed and algorithm asked, on the batch workers
 * (cli/fanout.h). One record per grid cell and algorithm (CSV or JSON
 * Lines): how many seeds were safe, double entry without damage, damage,
 * stuck; and a heatmap (render/heatmap_svg.h), one panel per algorithm (and
 * with a third key, per value of it: facets). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "fanout.h"
#include "cli_gfx.h"
#include "heatmap_svg.h"
#include "output.h"
#include "shard.h"
#include "sweep_tally.h"

#define SWEEP_MAX_VALUES 1000

/* A duration in the largest unit that divides it: 20s, 1500ms, 2m. */
static void format_duration(char *buf, size_t n, sim_ns t) {
    static const struct {
        const char *u;
        sim_ns ns;
    } units[] = {{"m", 60000000000LL}, {"s", 1000000000LL}, {"ms", 1000000LL}, {"us", 1000LL}, {"ns", 1}};
    for (size_t k = t == 0 ? 1 : 0; /* 0s, not 0m */ k < sizeof units / sizeof *units; k++)
        if (t % units[k].ns == 0) {
            snprintf(buf, n, "%lld%s", (long long)(t / units[k].ns), units[k].u);
            return;
        }
}

/* KEY=A..B/STEP (integers or durations) or KEY=v1,v2,... Returns 0 or prints a usage error. */
static int parse_vary(const char *arg, struct fanout_axis *a) {
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1] || (size_t)(eq - arg) >= sizeof a->key)
        return cli_usage("--vary takes KEY=A..B/STEP or KEY=V1,V2,..., not '%s'", arg);
    snprintf(a->key, sizeof a->key, "%.*s", (int)(eq - arg), arg);
    const char *spec = eq + 1, *dots = strstr(spec, ".."), *slash = strchr(spec, '/');
    if (!dots) {
        for (const char *p = spec;;) {
            size_t l = strcspn(p, ",");
            if (l == 0) return cli_usage("--vary %s has an empty value in '%s'", a->key, spec);
            if (a->n == SWEEP_MAX_VALUES)
                return cli_usage("--vary %s: too many values (at most %d)", a->key, SWEEP_MAX_VALUES);
            if (fanout_axis_push(a, p, l) != 0) return cli_fail(LSIM_ENOMEM, "");
            if (!p[l]) return 0;
            p += l + 1;
        }
    }
    if (!slash || slash < dots) return cli_usage("--vary %s: a range needs a step: A..B/STEP, e.g. 0s..60s/1s", a->key);
    char lo[64], hi[64], step[64];
    if ((size_t)(dots - spec) >= sizeof lo || (size_t)(slash - dots - 2) >= sizeof hi ||
        strlen(slash + 1) >= sizeof step)
        return cli_usage("--vary %s: '%s' is too long", a->key, spec);
    snprintf(lo, sizeof lo, "%.*s", (int)(dots - spec), spec);
    snprintf(hi, sizeof hi, "%.*s", (int)(slash - dots - 2), dots + 2);
    snprintf(step, sizeof step, "%s", slash + 1);
    int64_t il, ih, is;
    sim_ns dl, dh, ds;
    int ints = scn_parse_int(lo, &il) == 0 && scn_parse_int(hi, &ih) == 0 && scn_parse_int(step, &is) == 0;
    if (!ints &&
        (scn_parse_duration(lo, &dl) != 0 || scn_parse_duration(hi, &dh) != 0 || scn_parse_duration(step, &ds) != 0))
        return cli_usage("--vary %s: '%s' is neither integers nor durations A..B/STEP", a->key, spec);
    if (ints) dl = il, dh = ih, ds = is;
    if (ds <= 0 || dh < dl) return cli_usage("--vary %s: '%s' needs A <= B and a step above 0", a->key, spec);
    if ((dh - dl) / ds >= SWEEP_MAX_VALUES)
        return cli_usage("--vary %s: '%s' has more than %d values", a->key, spec, SWEEP_MAX_VALUES);
    for (sim_ns v = dl; v <= dh; v += ds) {
        char buf[64];
        if (ints) snprintf(buf, sizeof buf, "%lld", (long long)v);
        else format_duration(buf, sizeof buf, v);
        if (fanout_axis_push(a, buf, strlen(buf)) != 0) return cli_fail(LSIM_ENOMEM, "");
    }
    return 0;
}

/* The cells' counts (run/sweep_tally.h), and the worst exit status. */
struct tally {
    struct sweep_tally c;
    int worst;
};

struct sweep_sink {
    struct tally *t;
    const struct fanout *f;
    FILE *shard; /* --shard: each run is a record here, nothing tallied */
};

static int sweep_take(void *arg, size_t i, struct report_summary *s) {
    struct sweep_sink *k = arg;
    struct tally *t = k->t;
    if (k->shard) {
        const struct fanout *f = k->f;
        shard_write_record(k->shard, i, s, f->cell_sets + (size_t)fanout_cell(f, i) * (size_t)f->cell_nsets,
                           f->cell_nsets);
        if (s->rc && cli_exit(s->rc) > t->worst) t->worst = cli_exit(s->rc);
        return ferror(k->shard);
    }
    sweep_tally_add(&t->c, i, fanout_algo(k->f, i), fanout_cell(k->f, i), s);
    if (s->rc && cli_exit(s->rc) > t->worst) t->worst = cli_exit(s->rc);
    return 0;
}

static void write_records(FILE *f, int csv, const struct fanout_axis *ax, int naxes, const struct sweep_tally *t,
                          const struct fanout *fo) {
    if (csv) {
        for (int k = 0; k < naxes; k++) {
            report_csv_str(f, ax[k].key);
            fputc(',', f);
        }
        fputs("algorithm,runs", f);
        for (int k = 0; k < HEATMAP_NCLASS; k++) fprintf(f, ",%s", heatmap_class_name((enum heatmap_class)k));
        fputs(",damage_fraction,double_entry_fraction,class,note\n", f);
    }
    for (int c = 0; c < t->ncells; c++)
        for (int a = 0; a < t->nalgos; a++) {
            const struct heatmap_cell *cell = &t->cells[(size_t)a * (size_t)t->ncells + (size_t)c];
            const char *vals[FANOUT_MAX_AXES];
            for (int k = 0; k < naxes; k++) vals[k] = ax[k].vals[fanout_cell_value(ax, k, c)];
            const char *algo = fo->nalgos ? fo->algo_reg[a] : t->algo_ran[a];
            int runs = 0, top = 0;
            for (int k = 0; k < HEATMAP_NCLASS; k++) {
                runs += cell->count[k];
                if (cell->count[k] > cell->count[top]) top = k;
            }
            const char *cls = runs && cell->count[top] == runs ? heatmap_class_name((enum heatmap_class)top) : "mixed";
            const char *note = t->error[(size_t)a * (size_t)t->ncells + (size_t)c];
            if (csv) {
                for (int k = 0; k < naxes; k++) {
                    report_csv_str(f, vals[k]);
                    fputc(',', f);
                }
                report_csv_str(f, algo);
                fprintf(f, ",%d", runs);
                for (int k = 0; k < HEATMAP_NCLASS; k++) fprintf(f, ",%d", cell->count[k]);
                fprintf(f, ",%.4f,%.4f,%s,", heatmap_damage_fraction(cell), heatmap_overlap_fraction(cell), cls);
                report_csv_str(f, note);
                fputc('\n', f);
            } else {
                fputs("{\"set\":{", f);
                for (int k = 0; k < naxes; k++) {
                    if (k) fputc(',', f);
                    report_json_str(f, ax[k].key);
                    fputc(':', f);
                    report_json_str(f, vals[k]);
                }
                fputs("},\"algorithm\":", f);
                report_json_str(f, algo);
                fprintf(f, ",\"runs\":%d", runs);
                for (int k = 0; k < HEATMAP_NCLASS; k++)
                    fprintf(f, ",\"%s\":%d", heatmap_class_name((enum heatmap_class)k), cell->count[k]);
                fprintf(f, ",\"damage_fraction\":%.4f,\"double_entry_fraction\":%.4f,\"class\":\"%s\"",
                        heatmap_damage_fraction(cell), heatmap_overlap_fraction(cell), cls);
                if (note[0]) {
                    fputs(",\"error\":", f);
                    report_json_str(f, note);
                }
                fputs("}\n", f);
            }
        }
}

/* The heatmap from the tally, written atomically to path: SVG, or PNG when png. */
static int write_heatmap(const char *path, int png, const struct fanout_dest *d, const char *subtitle,
                         const struct fanout_axis *ax, int naxes, const struct sweep_tally *t,
                         const struct fanout *fo) {
    const char *panels[FANOUT_MAX_ALGOS];
    struct heatmap h;
    sweep_tally_heatmap(t, fo->nalgos ? fo->algo_reg : NULL, panels, subtitle, ax[0].key,
                        (const char *const *)ax[0].vals, ax[0].n, naxes > 1 ? ax[1].key : NULL,
                        naxes > 1 ? (const char *const *)ax[1].vals : NULL, naxes > 1 ? ax[1].n : 1, &h);
    /* a third and a fourth key: facets and sections (render/heatmap_svg.h) */
    h.z_key = naxes > 2 ? ax[2].key : NULL;
    h.z_vals = naxes > 2 ? (const char *const *)ax[2].vals : NULL;
    h.nz = naxes > 2 ? ax[2].n : 1;
    h.w_key = naxes > 3 ? ax[3].key : NULL;
    h.w_vals = naxes > 3 ? (const char *const *)ax[3].vals : NULL;
    h.nw = naxes > 3 ? ax[3].n : 1;
    char err[700];
    struct out_file o;
    int rc = out_open(&o, path, d->inputs, d->ninputs, err, sizeof err);
    if (rc) return cli_fail(rc, err);
    if (png) {
        int g = cli_gfx_heatmap_png(NULL, o.f, &h);
        if (g && g != LSIM_EOUTPUT) { /* a short write: out_commit names the reason */
            out_abort(&o);
            snprintf(err, sizeof err, "%.500s: %s", path, cli_gfx_error()[0] ? cli_gfx_error() : lsim_strerror(g));
            return cli_fail(g, err);
        }
    } else {
        (void)heatmap_svg_write(o.f, &h); /* a write error stays on the stream */
    }
    rc = out_commit(&o, err, sizeof err);
    return rc ? cli_fail(rc, err) : 0;
}

/* The last words on stderr: the runs by class, and the first error with
 * its cell and algorithm (an error is otherwise only a note in the CSV). */
static void summary(const struct sweep_tally *t, const struct fanout *fo, const struct fanout_axis *ax, int naxes) {
    long long n[HEATMAP_NCLASS] = {0}, runs = 0;
    int first = -1;
    for (size_t c = 0; c < (size_t)t->nalgos * (size_t)t->ncells; c++) {
        for (int k = 0; k < HEATMAP_NCLASS; k++) n[k] += t->cells[c].count[k], runs += t->cells[c].count[k];
        if (first < 0 && t->error[c][0]) first = (int)c;
    }
    fprintf(stderr, "locksim: sweep: %lld runs (%d cell%s x %d algorithm%s):", runs, t->ncells,
            t->ncells == 1 ? "" : "s", t->nalgos, t->nalgos == 1 ? "" : "s");
    for (int k = 0; k < HEATMAP_NCLASS; k++)
        fprintf(stderr, "%s %s %lld", k ? "," : "", heatmap_class_name((enum heatmap_class)k), n[k]);
    fputc('\n', stderr);
    if (first >= 0) {
        int a = first / t->ncells, c = first % t->ncells;
        fprintf(stderr, "  first error,");
        for (int k = 0; k < naxes; k++) fprintf(stderr, " %s=%s", ax[k].key, ax[k].vals[fanout_cell_value(ax, k, c)]);
        fprintf(stderr, " algo %s: %s\n", fo->nalgos ? fo->algo_reg[a] : "(the scenario's)", t->error[first]);
    }
}

/* Two outputs of one command on one file would leave only the last. */
static int same_path(const char *a, const char *b) {
    if (!a || !b || strcmp(a, "-") == 0 || strcmp(b, "-") == 0) return 0;
    if (strcmp(a, b) == 0) return 1;
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Run sweep's slice under --shard into the shard file d->out (sink's
 * records as they come). The exit status. */
static int sweep_shard(const struct fanout *fo, const struct fanout_axis *ax, int naxes, const struct fanout_dest *d,
                       struct sweep_sink *sink) {
    struct out_file sf;
    char err[700];
    size_t done;
    int st;
    if ((st = out_open(&sf, d->out, d->inputs, d->ninputs, err, sizeof err)) != 0) return cli_fail(st, err);
    shard_write_header(sf.f, "sweep", d->argc, d->argv, fo, ax, naxes);
    sink->shard = sf.f;
    int how = fanout_run(fo, sweep_take, sink, &done);
    int oom = how == LSIM_ENOMEM;
    if (how == 2) { /* a write failed */
        if ((st = out_commit(&sf, err, sizeof err)) == 0) snprintf(err, sizeof err, "%s: a write failed", d->out);
        return cli_fail(LSIM_EOUTPUT, err);
    }
    if (how != 0) {
        out_abort(&sf);
        fprintf(stderr, "locksim: %s: the shard was not written\n",
                how > 0 ? "interrupted"
                : oom   ? "out of memory"
                        : "a worker could not be started");
        return cli_exit(how > 0 ? LSIM_EINTERRUPTED : oom ? LSIM_ENOMEM : LSIM_EINTERNAL);
    }
    if ((st = out_commit(&sf, err, sizeof err)) != 0) return cli_fail(st, err);
    return sink->t->worst;
}

int sweep_output(const struct fanout *fo, const char *file, const struct fanout_axis *ax, int naxes,
                 const struct fanout_dest *d) {
    const char *format = d->format;
    int shard = fo->shard_n && !fo->preloaded, st = 0;
    char err[700];
    enum report_format fmt = REPORT_FMT_CSV;
    if (format && (st = cli_format("sweep", format, &fmt)) != 0) return st;
    if (shard && ((format && fmt != REPORT_FMT_JSONL) || d->svg || d->png))
        return cli_usage("sweep --shard writes JSON Lines for `locksim merge`, which writes --format csv|jsonl, "
                         "--svg and --png; not %s here",
                         d->svg   ? "--svg"
                         : d->png ? "--png"
                                  : "--format csv");
    if (!format) fmt = shard ? REPORT_FMT_JSONL : REPORT_FMT_CSV;
    int csv = fmt == REPORT_FMT_CSV;
    const char *outs[3] = {strcmp(d->out, "-") == 0 ? NULL : d->out, d->svg, d->png};
    static const char *const opt[3] = {"--out", "--svg", "--png"};
    for (int x = 0; x < 3; x++)
        for (int y = x + 1; y < 3; y++)
            if (same_path(outs[x], outs[y]))
                return cli_usage("%s and %s name the same file '%s': give each output its own", opt[x], opt[y],
                                 outs[y]);
    struct tally t;
    t.worst = 0;
    if (sweep_tally_init(&t.c, fo->nalgos ? fo->nalgos : 1, fo->ncells) != 0) {
        st = cli_fail(LSIM_ENOMEM, "");
        goto out;
    }
    struct sweep_sink sink = {.t = &t, .f = fo};
    size_t done;
    if (shard) { /* a shard: one record per run as it comes */
        st = sweep_shard(fo, ax, naxes, d, &sink);
        goto out;
    }
    int how = fanout_run(fo, sweep_take, &sink, &done);
    int oom = how == LSIM_ENOMEM;
    if (how >= 0 && cli_verbosity >= 0) summary(&t.c, fo, ax, naxes);
    if (how != 0) {
        fprintf(stderr, "locksim: %s: %zu of %zu runs finished; nothing was written\n",
                how > 0 ? "interrupted"
                : oom   ? "out of memory"
                        : "a worker could not be started",
                done, fanout_total(fo));
        st = cli_exit(how > 0 ? LSIM_EINTERRUPTED : oom ? LSIM_ENOMEM : LSIM_EINTERNAL);
        goto out;
    }
    struct out_file of;
    if ((st = out_open(&of, d->out, d->inputs, d->ninputs, err, sizeof err)) != 0) {
        st = cli_fail(st, err);
        goto out;
    }
    write_records(of.f, csv, ax, naxes, &t.c, fo);
    if ((st = out_commit(&of, err, sizeof err)) != 0) {
        st = cli_fail(st, err);
        goto out;
    }
    if (d->svg || d->png) {
        /* The scenario's own title (issue 24); its file name, without the
         * directories, small under it. */
        const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
        if (d->svg && (st = write_heatmap(d->svg, 0, d, base, ax, naxes, &t.c, fo)) != 0) goto out;
        if (d->png && (st = write_heatmap(d->png, 1, d, base, ax, naxes, &t.c, fo)) != 0) goto out;
    }
    st = t.worst;
out:
    sweep_tally_close(&t.c);
    return st;
}

enum { OPT_VARY = CLI_OPT_OWN };
static const struct option sweep_options[] = {
        {"vary", required_argument, NULL, OPT_VARY},
        {NULL, 0, NULL, 0},
};
const struct option *const cli_tables_sweep[] = {sweep_options, fanout_run_options, fanout_output_options,
                                                 fanout_heatmap_options, NULL};

/* What sweep's command line asks. */
struct sweep_cmd {
    struct fanout_opts opts;
    struct fanout_axis ax[FANOUT_MAX_AXES]; /* owned: fanout_axis_free */
    int naxes;
    const char *file;
    struct fanout_dest d;
};

/* One option or argument of sweep: 0, or the exit status. */
static int take_sweep_arg(struct sweep_cmd *c, int code, const char *v) {
    int st;
    if (fanout_take_opt(&c->opts, &c->d, code, v, &st)) return st;
    if (code == OPT_VARY) {
        if (c->naxes == FANOUT_MAX_AXES)
            return cli_usage("sweep takes at most %d --vary keys (x, y, a facet per value, a row of facets per "
                             "value), not '--vary %s' as a %dth",
                             FANOUT_MAX_AXES, v, FANOUT_MAX_AXES + 1);
        if ((st = parse_vary(v, &c->ax[c->naxes])) != 0) return st;
        c->naxes++;
        return 0;
    }
    /* CLI_OPT_ARG: the scenario file */
    if (strcmp(v, "-") == 0)
        return cli_usage("sweep reads a scenario file, not standard input (every worker would read it)");
    if (c->file) return cli_usage("unknown, incomplete or extra argument '%s' for sweep", v);
    c->file = v;
    return 0;
}

/* Read the command line into c: 0, -1 after --help, or the exit status. */
static int parse_sweep_args(struct sweep_cmd *c, int argc, char **argv) {
    struct cli_getopt g;
    int st = cli_getopt_init_tables(&g, "sweep", cli_usage_sweep, &c->opts.ro, cli_tables_sweep, argc, argv);
    for (int code; st == 0 && (code = cli_getopt_next(&g)) != CLI_OPT_END;)
        st = code == CLI_OPT_STOP ? g.status : take_sweep_arg(c, code, g.arg);
    cli_getopt_close(&g);
    if (st) return st;
    if (!c->file || c->naxes == 0) return cli_usage("sweep needs a scenario file and at least one --vary KEY=...");
    if (fanout_axes_cells(c->ax, c->naxes) < 0)
        return cli_usage("sweep's --vary keys make a grid of more than %d cells (the product of their values)",
                         FANOUT_MAX_CELLS);
    return 0;
}

int cmd_sweep(int argc, char **argv) {
    struct sweep_cmd c;
    struct fanout fo;
    char **cell_sets = NULL;
    memset(&c, 0, sizeof c);
    memset(&fo, 0, sizeof fo);
    fanout_opts_init(&c.opts);
    c.d = (struct fanout_dest){.out = "-", .argc = argc, .argv = argv};
    int st = parse_sweep_args(&c, argc, argv);
    if (st == 0 && (st = fanout_opts_apply(&c.opts, "sweep", &fo)) == 0) {
        if (fanout_set_axes(&fo, c.ax, c.naxes, &cell_sets) != 0) st = cli_fail(LSIM_ENOMEM, "");
        char *files[1] = {(char *)c.file};
        fo.files = files;
        fo.nfiles = 1;
        c.d.inputs = &c.file;
        c.d.ninputs = 1;
        if (st == 0) st = sweep_output(&fo, c.file, c.ax, c.naxes, &c.d);
    }
    for (int k = 0; k < FANOUT_MAX_AXES; k++) fanout_axis_free(&c.ax[k]);
    fanout_opts_close(&c.opts);
    for (size_t i = 0; cell_sets && i < (size_t)fo.ncells * (size_t)fo.cell_nsets; i++) free(cell_sets[i]);
    free(cell_sets);
    return st < 0 ? 0 : st;
}
