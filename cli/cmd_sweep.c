/* `locksim sweep`: one scenario over a grid of --set values (one varied key
 * or two), for every seed and algorithm asked, on the batch workers
 * (cli/fanout.h). One record per grid cell and algorithm (CSV or JSON
 * Lines): how many seeds were safe, double entry without damage, damage,
 * stuck; and a heatmap (render/heatmap_svg.h), one panel per algorithm. */
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
    int nx = ax[0].n;
    for (int c = 0; c < t->ncells; c++)
        for (int a = 0; a < t->nalgos; a++) {
            const struct heatmap_cell *cell = &t->cells[(size_t)a * (size_t)t->ncells + (size_t)c];
            const char *vals[FANOUT_MAX_AXES] = {ax[0].vals[c % nx], naxes > 1 ? ax[1].vals[c / nx] : NULL};
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
        int a = first / t->ncells, c = first % t->ncells, nx = ax[0].n;
        fprintf(stderr, "  first error, %s=%s", ax[0].key, ax[0].vals[c % nx]);
        if (naxes > 1) fprintf(stderr, " %s=%s", ax[1].key, ax[1].vals[c / nx]);
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
        struct out_file sf;
        if ((st = out_open(&sf, d->out, d->inputs, d->ninputs, err, sizeof err)) != 0) {
            st = cli_fail(st, err);
            goto out;
        }
        shard_write_header(sf.f, "sweep", d->argc, d->argv, fo, ax, naxes);
        sink.shard = sf.f;
        int how = fanout_run(fo, sweep_take, &sink, &done);
        int oom = how == LSIM_ENOMEM;
        if (how == 2) { /* a write failed */
            if ((st = out_commit(&sf, err, sizeof err)) == 0) snprintf(err, sizeof err, "%s: a write failed", d->out);
            st = cli_fail(LSIM_EOUTPUT, err);
        } else if (how != 0) {
            out_abort(&sf);
            fprintf(stderr, "locksim: %s: the shard was not written\n",
                    how > 0 ? "interrupted"
                    : oom   ? "out of memory"
                            : "a worker could not be started");
            st = cli_exit(how > 0 ? LSIM_EINTERRUPTED : oom ? LSIM_ENOMEM : LSIM_EINTERNAL);
        } else if ((st = out_commit(&sf, err, sizeof err)) != 0) st = cli_fail(st, err);
        else st = t.worst;
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

int cmd_sweep(int argc, char **argv) {
    struct fanout_opts opts;
    struct fanout_axis ax[FANOUT_MAX_AXES];
    struct fanout fo;
    char **cell_sets = NULL;
    fanout_opts_init(&opts);
    memset(ax, 0, sizeof ax);
    memset(&fo, 0, sizeof fo);
    int naxes = 0, st = 0;
    const char *file = NULL;
    struct fanout_dest d = {.out = "-", .argc = argc, .argv = argv};
    for (int i = 0; i < argc; i++) {
        int took = fanout_take_opt(&opts, argc, argv, &i, &st);
        if (took < 0) goto out;
        if (took) continue;
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (strcmp(a, "--help") == 0) {
            fputs(cli_usage_sweep, stdout);
            goto out;
        } else if (strcmp(a, "--vary") == 0 && has) {
            if (naxes == FANOUT_MAX_AXES) {
                st = cli_usage("sweep takes at most %d --vary keys", FANOUT_MAX_AXES);
                goto out;
            }
            if ((st = parse_vary(argv[++i], &ax[naxes])) != 0) goto out;
            naxes++;
        } else if (strcmp(a, "--format") == 0 && has) d.format = argv[++i];
        else if (strcmp(a, "--out") == 0 && has) d.out = argv[++i];
        else if (strcmp(a, "--svg") == 0 && has) d.svg = argv[++i];
        else if (strcmp(a, "--png") == 0 && has) d.png = argv[++i];
        else if (a[0] == '-' || file) {
            st = cli_usage("unknown, incomplete or extra argument '%s' for sweep", a);
            goto out;
        } else file = a;
    }
    if (!file || naxes == 0) {
        st = cli_usage("sweep needs a scenario file and at least one --vary KEY=...");
        goto out;
    }
    if ((st = fanout_opts_apply(&opts, "sweep", &fo)) != 0) goto out;
    if (fanout_set_axes(&fo, ax, naxes, &cell_sets) != 0) {
        st = cli_fail(LSIM_ENOMEM, "");
        goto out;
    }
    char *files[1] = {(char *)file};
    fo.files = files;
    fo.nfiles = 1;
    d.inputs = &file;
    d.ninputs = 1;
    st = sweep_output(&fo, file, ax, naxes, &d);
out:
    for (int k = 0; k < FANOUT_MAX_AXES; k++) fanout_axis_free(&ax[k]);
    fanout_opts_close(&opts);
    for (size_t c = 0; cell_sets && c < (size_t)fo.ncells * (size_t)fo.cell_nsets; c++) free(cell_sets[c]);
    free(cell_sets);
    return st;
}
