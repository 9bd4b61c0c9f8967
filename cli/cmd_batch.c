/* `locksim batch`: every scenario under the paths, for every seed and
 * algorithm asked, on N forked worker processes (cli/fanout.h), printed in
 * run-list order so the output bytes do not depend on --jobs. */
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
    struct report_group r;
};

struct emitter {
    const struct fanout *b;
    enum batch_format fmt;
    FILE *f;
    struct report_summary *kept;      /* junit, tap: every run, in order */
    size_t done, passed, skipped, na; /* na: expectations not applicable (outcome OK) */
    size_t by_outcome[3];             /* failed runs: FAIL, TRUNCATED, ERROR */
    size_t first[3];                  /* the first failed runs, for the summary */
    char first_why[3][300];
    int nfirst;
    int worst;
    int oom; /* 1 = a run's record could not be kept: the batch stops, 70 */
    struct group g;
};

static void group_close(struct emitter *e) {
    struct group *g = &e->g;
    const struct fanout *b = e->b;
    if (!g->open) return;
    char seeds[200] = "scenario's seed";
    if (b->has_seeds) {
        memcpy(seeds, "seeds ", 6);
        cli_seeds_format(seeds + 6, sizeof seeds - 6, b->seeds);
    }
    report_group_write(e->f, &g->r, b->files[g->file], g->algo >= 0 ? b->algo_name[g->algo] : NULL, seeds);
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
    report_group_add(&g->r, s);
}

static int emit_one(void *arg, size_t i, struct report_summary *s) {
    struct emitter *e = arg;
    const struct fanout *b = e->b;
    e->done++;
    if (s->outcome == LSIM_OK && s->not_applicable[0]) e->na++;
    else if (s->outcome == LSIM_OK) e->passed++;
    else if (s->outcome == LSIM_ESKIPPED) e->skipped++;
    else {
        e->by_outcome[s->outcome == LSIM_EEXPECT ? 0 : s->outcome == LSIM_ETRUNCATED ? 1 : 2]++;
        const char *why = s->rc ? s->error : s->failures ? s->failures : "";
        if (cli_verbosity > 0) { /* -v: every failed run, as it ends, with its replay command */
            char label[4400], replay[4400];
            fanout_label(label, sizeof label, b, i);
            fanout_replay(replay, sizeof replay, b, i);
            fprintf(stderr, "  %s: %.*s\n    replay: %s\n", label, (int)strcspn(why, "\n"), why, replay);
        } else if (e->nfirst < 3) {
            e->first[e->nfirst] = i;
            snprintf(e->first_why[e->nfirst++], sizeof e->first_why[0], "%.*s", (int)strcspn(why, "\n"), why);
        }
    }
    int st = cli_exit(s->outcome);
    if (st > e->worst) e->worst = st;
    switch (e->fmt) {
    case FMT_TABLE: table_add(e, i, s); break;
    case FMT_JSONL: report_json_summary(e->f, s, b->sets, b->nsets); break;
    case FMT_SHARD: shard_write_record(e->f, i, s, b->sets, b->nsets); break;
    case FMT_CSV: report_csv_row_sets(e->f, s, b->sets, b->nsets); break;
    case FMT_JUNIT:
    case FMT_TAP: {
        /* One test per run: TAP names it by its place in the list; JUnit by
         * its file, algorithm and seed, which a run that could not be made
         * takes from the list. */
        struct report_summary *k = s; /* merge's: kept where it is (e->kept is b->preloaded) */
        if (!b->preloaded) {
            k = &e->kept[e->done - 1];
            *k = *s;
            s->failures = NULL; /* moved to k */
        }
        int a = fanout_algo(b, i);
        const char *algo = a >= 0 ? b->algo_reg[a] : b->algo_default;
        if (!k->algo[0] && algo) snprintf(k->algo, sizeof k->algo, "%s", algo);
        if (k->rc && b->has_seeds) k->seed = fanout_seed(b, i);
        char buf[4400];
        fanout_label(buf, sizeof buf, b, i);
        char *label = strdup(buf); /* its own length: a batch may keep 10^5 of them */
        k->label = label;          /* owned by k (NULL: out of memory, the batch stops) */
        if (!label) return e->oom = 1;
        break;
    }
    }
    return ferror(e->f); /* a closed pipe or a full disk: stop running */
}

/* The last words on stderr, whatever the format and wherever the output
 * went: the runs, how they ended, and the first failures with the command
 * that replays each. */
/* Runs that neither passed, nor were skipped, nor had their expect lines not applicable. */
static size_t failed_runs(const struct emitter *e) { return e->done - e->passed - e->skipped - e->na; }

/* ", N not applicable (...)" when there are such runs. */
static void say_not_applicable(FILE *f, size_t na) {
    if (na)
        fprintf(f,
                ", %zu not applicable (runs with another seed, --set or algorithm than the file's: their "
                "expect lines are not judged without --expect)",
                na);
}

static void summary(const struct emitter *e, size_t total) {
    size_t failed = failed_runs(e);
    fprintf(stderr, "locksim: batch: %zu of %zu runs: %zu passed, %zu failed", e->done, total, e->passed, failed);
    if (failed)
        fprintf(stderr, " (expectation failed %zu, truncated %zu, error %zu)", e->by_outcome[0], e->by_outcome[1],
                e->by_outcome[2]);
    say_not_applicable(stderr, e->na);
    if (e->skipped) fprintf(stderr, ", %zu skipped (an algorithm that cannot run a scenario)", e->skipped);
    fputc('\n', stderr);
    for (int k = 0; k < e->nfirst; k++) {
        char label[4400], replay[4400];
        fanout_label(label, sizeof label, e->b, e->first[k]);
        fanout_replay(replay, sizeof replay, e->b, e->first[k]);
        fprintf(stderr, "  %s: %s\n    replay: %s\n", label, e->first_why[k], replay);
    }
    if (failed > (size_t)e->nfirst && cli_verbosity <= 0)
        fprintf(stderr, "  ... and %zu more failed runs (-v lists them all)\n", failed - (size_t)e->nfirst);
}

/* ---- Output ------------------------------------------------------------------ */

int batch_output(const struct fanout *b, const struct fanout_dest *d) {
    const char *format = d->format;
    int fmt = FMT_TABLE, st;
    char err[700];
    enum report_format rf = REPORT_FMT_TEXT;
    if (format && (st = cli_format("batch", format, &rf)) != 0) return st;
    fmt = rf == REPORT_FMT_JSONL   ? FMT_JSONL
          : rf == REPORT_FMT_CSV   ? FMT_CSV
          : rf == REPORT_FMT_JUNIT ? FMT_JUNIT
          : rf == REPORT_FMT_TAP   ? FMT_TAP
                                   : FMT_TABLE;
    if (b->shard_n && !b->preloaded) {
        /* A shard is always the shard JSON Lines; merge writes the formats. */
        if (format && rf != REPORT_FMT_JSONL)
            return cli_usage("batch --shard writes JSON Lines for `locksim merge` (which writes --format %s), "
                             "not --format %s",
                             format, format);
        fmt = FMT_SHARD;
    }
    size_t total, lo, hi;
    fanout_range(b, &lo, &hi);
    total = hi - lo;

    struct out_file of;
    if ((st = out_open(&of, d->out, d->inputs, d->ninputs, err, sizeof err)) != 0) return cli_fail(st, err);
    struct emitter e = {.b = b, .fmt = (enum batch_format)fmt, .f = of.f};
    if (fmt == FMT_JUNIT || fmt == FMT_TAP) e.kept = b->preloaded; /* merge: in place, in order from 0 */
    if ((fmt == FMT_JUNIT || fmt == FMT_TAP) && !e.kept && !(e.kept = calloc(total ? total : 1, sizeof *e.kept))) {
        out_abort(&of);
        return cli_fail(LSIM_ENOMEM, "");
    }
    if (fmt == FMT_CSV) report_csv_header_sets(e.f, b->sets, b->nsets);
    if (fmt == FMT_SHARD) shard_write_header(e.f, "batch", d->argc, d->argv, b, NULL, 0);
    size_t done;
    int how = fanout_run(b, emit_one, &e, &done);
    if (e.oom) (void)0; /* no report from records that are not all there */
    else if (fmt == FMT_TABLE) {
        group_close(&e);
        fprintf(e.f, "%zu passed, %zu failed", e.passed, failed_runs(&e));
        say_not_applicable(e.f, e.na);
        if (e.skipped) fprintf(e.f, ", %zu skipped (an algorithm that cannot run a scenario)", e.skipped);
        fputc('\n', e.f);
    } else if (fmt == FMT_TAP) report_tap(e.f, e.kept, (int)e.done);
    else if (fmt == FMT_JUNIT && report_junit(e.f, "locksim batch", e.kept, (int)e.done, b->sets, b->nsets) != 0)
        e.oom = 1;
    for (size_t k = 0; e.kept && k < e.done; k++) {
        free((char *)e.kept[k].label);
        e.kept[k].label = NULL;
        report_summary_close(&e.kept[k]);
    }
    if (e.kept != b->preloaded) free(e.kept);
    st = e.worst;
    if (e.oom || how == LSIM_ENOMEM) {
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
                how > 0 ? "interrupted" : "a worker could not be started", e.done, total, e.passed, failed_runs(&e),
                of.mode == OUT_ATOMIC ? "; the --out file was not written" : "");
        st = cli_exit(how > 0 ? LSIM_EINTERRUPTED : LSIM_EINTERNAL);
    } else if (out_commit(&of, err, sizeof err) != 0) st = cli_fail(LSIM_EOUTPUT, err);
    if (how >= 0 && cli_verbosity >= 0) summary(&e, total);
    return st;
}

/* ---- The command -------------------------------------------------------------- */

enum { OPT_EXPECT = CLI_OPT_OWN };
static const struct option batch_options[] = {
        {"expect", no_argument, NULL, OPT_EXPECT},
        {NULL, 0, NULL, 0},
};
const struct option *const cli_tables_batch[] = {batch_options, fanout_run_options, fanout_output_options, NULL};

/* What batch's command line asks. */
struct batch_cmd {
    struct fanout_opts fo;
    struct cli_paths files; /* owned: cli_paths_free */
    struct fanout_dest d;
    int hold; /* --expect */
};

/* One option or argument of batch: 0, or the exit status. */
static int take_batch_arg(struct batch_cmd *c, int code, const char *v) {
    int st;
    char err[700];
    if (fanout_take_opt(&c->fo, &c->d, code, v, &st)) return st;
    if (code == OPT_EXPECT) {
        c->hold = 1;
        return 0;
    }
    /* CLI_OPT_ARG: a scenario file or folder */
    if (strcmp(v, "-") == 0)
        return cli_usage("batch reads scenario files, not standard input (every worker would read it)");
    if ((st = cli_paths_add(&c->files, v, err, sizeof err)) != 0) return cli_fail(st, err);
    return 0;
}

/* Read the command line into c: 0, -1 after --help, or the exit status. */
static int parse_batch_args(struct batch_cmd *c, int argc, char **argv) {
    struct cli_getopt g;
    int st = cli_getopt_init_tables(&g, "batch", cli_usage_batch, &c->fo.ro, cli_tables_batch, argc, argv);
    for (int code; st == 0 && (code = cli_getopt_next(&g)) != CLI_OPT_END;)
        st = code == CLI_OPT_STOP ? g.status : take_batch_arg(c, code, g.arg);
    cli_getopt_close(&g);
    if (st) return st;
    if (c->files.n == 0) return cli_usage("batch needs at least one scenario file or folder");
    return 0;
}

int cmd_batch(int argc, char **argv) {
    struct batch_cmd c;
    struct fanout b;
    memset(&c, 0, sizeof c);
    memset(&b, 0, sizeof b);
    fanout_opts_init(&c.fo);
    c.d = (struct fanout_dest){.out = "-", .argc = argc, .argv = argv};
    int st = parse_batch_args(&c, argc, argv);
    if (st == 0 && (st = fanout_opts_apply(&c.fo, "batch", &b)) == 0) {
        b.hold_expects = c.hold;
        b.files = c.files.v;
        b.nfiles = c.files.n;
        c.d.inputs = (const char *const *)c.files.v;
        c.d.ninputs = c.files.n;
        st = batch_output(&b, &c.d);
    }
    fanout_opts_close(&c.fo);
    cli_paths_free(&c.files);
    return st < 0 ? 0 : st;
}
