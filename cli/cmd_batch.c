/* `locksim batch`: every scenario under the paths, for every seed and
 * algorithm asked, on N forked worker processes (cli/fanout.h), printed in
 * run-list order so the output bytes do not depend on --jobs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fanout.h"
#include "output.h"
#include "shard.h"

/* ---- Output ------------------------------------------------------------------ */

enum batch_format { FMT_TABLE, FMT_JSONL, FMT_CSV, FMT_JUNIT, FMT_TAP, FMT_SHARD };

/* The table's current group: one scenario and algorithm over the seeds. */
struct group {
    int file, algo, open;
    size_t runs, passed;
    long long verdicts[3]; /* SAFE, UNSAFE, STUCK */
    char algo_ran[48];     /* the algorithm of its first run that ran */
    char first_failure[800];
};

struct emitter {
    const struct fanout *b;
    enum batch_format fmt;
    FILE *f;
    struct report_summary *kept;     /* junit, tap: every run, in order */
    size_t done, passed;
    int worst;
    int oom;                         /* 1 = a run's record could not be kept: the batch stops, 70 */
    struct group g;
};

static void group_close(struct emitter *e) {
    struct group *g = &e->g;
    const struct fanout *b = e->b;
    if (!g->open) return;
    char seeds[64] = "scenario's seed";
    if (b->has_seeds) snprintf(seeds, sizeof seeds, "seeds %llu..%llu", b->seed_lo, b->seed_hi);
    fprintf(e->f, "%-4s %s  %s  %s: %zu run%s, %zu passed, %zu failed; SAFE %lld, UNSAFE %lld, STUCK %lld\n",
            g->passed == g->runs ? "ok" : "FAIL", b->files[g->file],
            g->algo >= 0 ? b->algo_name[g->algo] : g->algo_ran[0] ? g->algo_ran : "-", seeds, g->runs, g->runs == 1 ? "" : "s",
            g->passed, g->runs - g->passed, g->verdicts[0], g->verdicts[1], g->verdicts[2]);
    if (g->first_failure[0]) fprintf(e->f, "     first failure: %s\n", g->first_failure);
    memset(g, 0, sizeof *g);
}

static void table_add(struct emitter *e, size_t i, const struct report_summary *s) {
    struct group *g = &e->g;
    int file = fanout_file(e->b, i), algo = fanout_algo(e->b, i);
    if (g->open && (g->file != file || g->algo != algo)) group_close(e);
    if (!g->open) {
        g->open = 1;
        g->file = file;
        g->algo = algo;
    }
    g->runs++;
    if (!g->algo_ran[0]) snprintf(g->algo_ran, sizeof g->algo_ran, "%s", s->algo);
    if (s->outcome == LSIM_OK) g->passed++;
    if (!s->rc && (int)s->rep.verdict >= 0 && (int)s->rep.verdict < 3) g->verdicts[s->rep.verdict]++;
    if (s->outcome != LSIM_OK && !g->first_failure[0]) {
        const char *why = s->rc ? s->error : s->failures ? s->failures : "";
        size_t l = strcspn(why, "\n");
        snprintf(g->first_failure, sizeof g->first_failure, "seed %llu: %.*s", s->seed, (int)l, why);
    }
}

static int emit_one(void *arg, size_t i, struct report_summary *s) {
    struct emitter *e = arg;
    const struct fanout *b = e->b;
    e->done++;
    if (s->outcome == LSIM_OK) e->passed++;
    int st = cli_exit(s->outcome);
    if (st > e->worst) e->worst = st;
    switch (e->fmt) {
    case FMT_TABLE: table_add(e, i, s); break;
    case FMT_JSONL: report_json_summary(e->f, s, b->sets, b->nsets); break;
    case FMT_SHARD: shard_write_record(e->f, i, s, b->sets, b->nsets); break;
    case FMT_CSV: report_csv_row_sets(e->f, s, b->sets, b->nsets); break;
    case FMT_JUNIT:
    case FMT_TAP: {
        /* One test per run, named by its place in the list. */
        struct report_summary *k = &e->kept[e->done - 1];
        *k = *s;
        char *label = malloc(4400);
        if (label) fanout_label(label, 4400, b, i);
        k->file = label; /* owned by k (NULL: out of memory, the batch stops) */
        s->failures = NULL; /* moved to k */
        if (!label) return e->oom = 1;
        break;
    }
    }
    return ferror(e->f); /* a closed pipe or a full disk: stop running */
}

/* ---- Output ------------------------------------------------------------------ */

static const char *const fmts[] = {"table", "jsonl", "csv", "junit", "tap"};

int batch_output(const struct fanout *b, const struct fanout_dest *d) {
    const char *format = d->format;
    int fmt = -1, st;
    char err[700];
    if (b->shard_n && !b->preloaded) {
        /* A shard is always the shard JSON Lines; merge writes the formats. */
        if (format && strcmp(format, "jsonl") != 0)
            return cli_usage("batch --shard writes JSON Lines for `locksim merge` (which writes --format %s), "
                             "not --format %s", format, format);
        format = "jsonl";
        fmt = FMT_SHARD;
    }
    if (!format) format = "table";
    for (int k = 0; k < 5 && fmt < 0; k++)
        if (strcmp(format, fmts[k]) == 0) fmt = k;
    if (fmt < 0) return cli_usage("--format takes table, jsonl, csv, junit or tap, not '%s'", format);
    size_t total, lo, hi;
    fanout_range(b, &lo, &hi);
    total = hi - lo;

    struct out_file of;
    if ((st = out_open(&of, d->out, d->inputs, d->ninputs, err, sizeof err)) != 0) return cli_fail(st, err);
    struct emitter e = {.b = b, .fmt = (enum batch_format)fmt, .f = of.f};
    if ((fmt == FMT_JUNIT || fmt == FMT_TAP) && !(e.kept = calloc(total ? total : 1, sizeof *e.kept))) {
        out_abort(&of);
        return cli_fail(LSIM_ENOMEM, "");
    }
    if (fmt == FMT_CSV) report_csv_header_sets(e.f, b->sets, b->nsets);
    if (fmt == FMT_SHARD) shard_write_header(e.f, "batch", d->argc, d->argv, b, NULL, 0);
    size_t done;
    errno = 0;
    int how = fanout_run(b, emit_one, &e, &done);
    int run_errno = errno; /* why a worker could not be started (ENOMEM: out of memory) */
    if (e.oom) (void)0; /* no report from records that are not all there */
    else if (fmt == FMT_TABLE) {
        group_close(&e);
        fprintf(e.f, "%zu passed, %zu failed\n", e.passed, e.done - e.passed);
    } else if (fmt == FMT_TAP) report_tap(e.f, e.kept, (int)e.done);
    else if (fmt == FMT_JUNIT) report_junit(e.f, "locksim batch", e.kept, (int)e.done);
    for (size_t k = 0; e.kept && k < e.done; k++) {
        free((char *)e.kept[k].file);
        report_summary_close(&e.kept[k]);
    }
    free(e.kept);
    st = e.worst;
    if (e.oom || (how < 0 && lsim_errno_code(run_errno, 0))) {
        out_abort(&of);
        fprintf(stderr, "locksim: batch stopped after %zu of %zu runs: out of memory\n", e.done, total);
        st = cli_exit(LSIM_ENOMEM);
    } else if (how == 2) { /* a write failed: say why, after how many runs */
        if (out_commit(&of, err, sizeof err) == 0) snprintf(err, sizeof err, "%s: a write failed", d->out);
        fprintf(stderr, "locksim: batch stopped after %zu of %zu runs: its output cannot be written\n", e.done, total);
        st = cli_fail(LSIM_EOUTPUT, err);
    } else if (how != 0) {
        if (of.mode == OUT_ATOMIC) out_abort(&of);
        else out_commit(&of, err, sizeof err);
        fprintf(stderr, "locksim: %s: %zu of %zu runs finished (%zu passed, %zu failed)%s\n",
                how > 0 ? "interrupted" : "a worker could not be started", e.done, total, e.passed,
                e.done - e.passed, of.mode == OUT_ATOMIC ? "; the --out file was not written" : "");
        st = cli_exit(how > 0 ? LSIM_EINTERRUPTED : LSIM_EINTERNAL);
    } else if (out_commit(&of, err, sizeof err) != 0) st = cli_fail(LSIM_EOUTPUT, err);
    return st;
}

/* ---- The command -------------------------------------------------------------- */

int cmd_batch(int argc, char **argv) {
    struct fanout_opts fo;
    struct cli_paths files = {0};
    struct fanout b;
    fanout_opts_init(&fo);
    memset(&b, 0, sizeof b);
    struct fanout_dest d = {.out = "-", .argc = argc, .argv = argv};
    char err[700];
    int st = 0;
    for (int i = 0; i < argc; i++) {
        int took = fanout_take_opt(&fo, argc, argv, &i, &st);
        if (took < 0) goto out;
        if (took) continue;
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (strcmp(a, "--help") == 0) {
            fputs(cli_usage_batch, stdout);
            goto out;
        } else if (strcmp(a, "--format") == 0 && has) d.format = argv[++i];
        else if (strcmp(a, "--out") == 0 && has) d.out = argv[++i];
        else if (a[0] == '-' && a[1]) {
            st = cli_usage("unknown or incomplete option '%s' for batch", a);
            goto out;
        } else if (strcmp(a, "-") == 0) {
            st = cli_usage("batch reads scenario files, not standard input (every worker would read it)");
            goto out;
        } else if ((st = cli_paths_add(&files, a, err, sizeof err)) != 0) {
            st = cli_fail(st, err);
            goto out;
        }
    }
    if (files.n == 0) {
        st = cli_usage("batch needs at least one scenario file or folder");
        goto out;
    }
    if ((st = fanout_opts_apply(&fo, "batch", &b)) != 0) goto out;
    b.files = files.v;
    b.nfiles = files.n;
    d.inputs = (const char *const *)files.v;
    d.ninputs = files.n;
    st = batch_output(&b, &d);
out:
    fanout_opts_close(&fo);
    cli_paths_free(&files);
    return st;
}
