/* `locksim check`: run scenarios (files, or every *.lsim below a folder)
 * and hold each to its `expect` lines; report as text, JSON Lines, TAP or
 * JUnit XML. A run cut short is TRUNCATED, never a pass; a file that cannot
 * run is an error in every format. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "checker.h"
#include "cli.h"
#include "input.h"
#include "memtext.h"
#include "output.h"
#include "trace_diff.h"
#include "trace_jsonl.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- Golden traces -----------------------------------------------------------
 * The golden trace of DIR/NAME.lsim is DIR/golden/NAME.jsonl (or NAME.jsonl
 * in the folder --golden names): the recorded trace without its message
 * traffic (trace_copy_golden), so that a changed digest can be shown as the
 * first event that changed, in a file a reviewer reads in a diff. Its header
 * holds the whole run's digest; a golden trace written before that (every
 * event, no digest) is judged by the hash of its events and rewritten by
 * --update (docs/regression.md). */

struct golden_opts {
    const char *dir; /* --golden DIR, or NULL: golden/ beside each scenario */
    int update;      /* --update: write the traces that changed or are new */
    int off;         /* --no-golden, or overrides given: no digest checks */
};

/* GOLDEN_NOMEM: out of memory reading, re-running or writing it: check stops (70). */
enum golden_result { GOLDEN_NONE, GOLDEN_SAME, GOLDEN_FAILED, GOLDEN_WRITTEN, GOLDEN_NOMEM };

static void golden_paths(const struct golden_opts *g, const char *file, char *dir, size_t dn, char *path, size_t pn) {
    const char *slash = strrchr(file, '/');
    const char *base = slash ? slash + 1 : file;
    size_t blen = strlen(base);
    if (blen > 5 && strcmp(base + blen - 5, ".lsim") == 0) blen -= 5;
    if (g->dir) snprintf(dir, dn, "%s", g->dir);
    else if (slash) snprintf(dir, dn, "%.*s/golden", (int)(slash - file), file);
    else snprintf(dir, dn, "golden");
    snprintf(path, pn, "%s/%.*s.jsonl", dir, (int)blen, base);
}

/* The run again, keeping every event (only when a trace is to be shown or written). */
static int rerun_kept(const char *file, struct run_result *r) {
    struct run_spec spec = {.file = file, .keep_trace = 1};
    return run_scenario(&spec, r);
}

static int write_golden(const char *dir, const char *path, const char *file, const struct trace *tr, FILE *m) {
    char err[700];
    struct out_file o;
    struct trace gold;
    trace_init(&gold, 1);
    if (trace_copy_golden(&gold, tr) != 0) {
        trace_close(&gold);
        return LSIM_ENOMEM;
    }
    mkdir(dir, 0777); /* may exist; out_open says what is wrong */
    int rc = out_open(&o, path, &file, 1, err, sizeof err);
    if (rc == 0) {
        (void)trace_write_jsonl(o.f, &gold); /* a write error stays on the stream */
        rc = out_commit(&o, err, sizeof err);
    }
    trace_close(&gold);
    if (rc) fprintf(m, "%s: cannot write its golden trace: %s\n", file, err);
    return rc;
}

/* The golden trace and the run differ: say how, in meaning first, then the
 * first event that moved, comparing like with like (the run without its
 * message traffic when the golden trace leaves it out). Returns
 * GOLDEN_FAILED, or GOLDEN_NOMEM when what changed could not all be said. */
static enum golden_result golden_differs(const char *file, const char *path, const struct trace *gold,
                                         unsigned long long old, const struct run_result *now, FILE *m) {
    const struct trace *cur = engine_trace(now->engine);
    struct trace judged, slim;
    struct checker_report was;
    trace_init(&slim, 1);
    fprintf(m, "%s: trace differs from its golden trace %s (digest %016llx, now %016llx)\n", file, path, old,
            (unsigned long long)now->trace_hash);
    int dm = run_recheck(gold, now->scn->purpose, now->scn->stuck_after_ns, NULL, &judged, &was);
    if (!dm) dm = trace_diff_meaning(m, gold, &was, cur, now->report, 10, "  ");
    trace_close(&judged);
    if (!dm && gold->golden) {
        if (trace_copy_golden(&slim, cur) != 0) dm = -1;
        else cur = &slim;
    }
    long at = dm < 0 ? -1 : trace_diff_first(gold, cur);
    if (dm == 0 && at < 0) /* only what the golden trace leaves out moved */
        fprintf(m,
                "  the same events; only the message traffic changed (msg-send and msg-recv, which golden "
                "traces leave out: %llu then, %llu now)\n",
                (unsigned long long)gold->omitted, (unsigned long long)slim.omitted);
    else if (dm >= 0) {
        if (dm == 0)
            fprintf(m, "  the same in meaning (verdict, metrics, who held the lock when, every write); "
                       "the events moved:\n");
        trace_diff_print(m, gold, "golden", cur, "now", at, 3, "  ");
    }
    trace_close(&slim);
    fprintf(m, "  (if the change is intended: locksim check --update %s)\n", file);
    return dm < 0 ? GOLDEN_NOMEM : GOLDEN_FAILED; /* what changed could not all be said */
}

/* Compare a finished run (r, without its events) with its golden trace, or
 * (--update) write it. Messages go to m. */
static enum golden_result golden_check(const struct golden_opts *g, const char *file, const struct run_result *r,
                                       FILE *m) {
    char dir[4200], path[4400], err[700];
    struct stat st;
    if (g->off || r->rc || strcmp(file, "-") == 0) return GOLDEN_NONE;
    golden_paths(g, file, dir, sizeof dir, path, sizeof path);
    int have = stat(path, &st) == 0;
    if (!have && !g->update) {
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return GOLDEN_NONE; /* no golden traces here */
        fprintf(m, "%s: no golden trace %s (record it with `locksim check --update %s`)\n", file, path, file);
        return GOLDEN_FAILED;
    }
    struct trace gold;
    trace_init(&gold, 1);
    unsigned long long old = 0;
    int lrc = have ? input_load_trace(&gold, path, NULL, err, sizeof err) : LSIM_ENOINPUT;
    int loaded = lrc == 0;
    if (lrc == LSIM_ENOMEM) {
        trace_close(&gold);
        return GOLDEN_NOMEM;
    }
    if (loaded) old = gold.golden ? (unsigned long long)gold.golden_digest : (unsigned long long)trace_hash(&gold);
    enum golden_result res = GOLDEN_SAME;
    if (have && !loaded && !g->update) {
        fprintf(m, "%s: golden trace %s\n", file, err);
        res = GOLDEN_FAILED;
    } else if (!loaded || old != r->trace_hash || (g->update && !gold.golden)) {
        struct run_result now;
        int rr = rerun_kept(file, &now);
        if (rr == LSIM_ENOMEM) res = GOLDEN_NOMEM;
        else if (rr != 0) {
            fprintf(m, "%s: %s\n", file, now.error);
            res = GOLDEN_FAILED;
        } else if (g->update) {
            int wr = write_golden(dir, path, file, engine_trace(now.engine), m);
            res = wr == LSIM_ENOMEM ? GOLDEN_NOMEM : wr ? GOLDEN_FAILED : GOLDEN_WRITTEN;
            if (res == GOLDEN_WRITTEN && loaded && old == now.trace_hash)
                fprintf(m, "rewrote %s without its message traffic: %016llx\n", path, old);
            else if (res == GOLDEN_WRITTEN && loaded)
                fprintf(m, "updated %s: %016llx -> %016llx\n", path, old, (unsigned long long)now.trace_hash);
            else if (res == GOLDEN_WRITTEN) fprintf(m, "new %s: %016llx\n", path, (unsigned long long)now.trace_hash);
        } else {
            res = golden_differs(file, path, &gold, old, &now, m);
        }
        run_result_close(&now);
    }
    trace_close(&gold);
    return res;
}

/* Append text to a summary's failure lines. */
static int add_failure(struct report_summary *s, const char *text) {
    size_t a = strlen(s->failures), b = strlen(text);
    char *n = realloc(s->failures, a + b + 1);
    if (!n) return LSIM_ENOMEM;
    memcpy(n + a, text, b + 1);
    s->failures = n;
    if (s->outcome == LSIM_OK) s->outcome = LSIM_EEXPECT;
    return 0;
}

/* --update records only runs that pass: every file is run and judged first,
 * and unless all of them run, hold their expect lines and finish, nothing is
 * written (a golden trace that contradicts its expect lines would bless a
 * run that `check` itself fails). Each refusal goes to stderr, the failing
 * expectation as FILE:LINE:COL. Returns 0 to go on, or the exit status. */
static int update_refusals(const struct cli_paths *files) {
    int refused = 0, worst = 0;
    for (int i = 0; i < files->n; i++) {
        struct run_spec spec = {.file = files->v[i]};
        struct run_result r;
        struct report_summary s;
        run_scenario(&spec, &r);
        int rc = report_summarize(&s, files->v[i], &r, 2);
        run_result_close(&r);
        if (rc == 0 && s.outcome != LSIM_OK) {
            refused++;
            if (s.rc) cli_fail(s.rc, s.error);
            else fputs(s.failures, stderr);
            if (cli_exit(s.outcome) > worst) worst = cli_exit(s.outcome);
        }
        report_summary_close(&s);
        if (rc) return cli_fail(LSIM_ENOMEM, "");
    }
    if (!refused) return 0;
    fprintf(stderr,
            "locksim: check --update: %d of %d scenario%s %s not pass %s expect lines; no golden trace was "
            "written (an update records only runs whose expectations hold: fix the change, or the expect "
            "lines if the new outcome is intended, then update)\n",
            refused, files->n, files->n == 1 ? "" : "s", refused == 1 ? "does" : "do", refused == 1 ? "its" : "their");
    return worst;
}

enum { OPT_QUIET = CLI_OPT_OWN, OPT_UPDATE, OPT_NO_GOLDEN, OPT_EXPECT, OPT_GOLDEN, OPT_FORMAT };
static const struct option check_options[] = {
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"update", no_argument, NULL, OPT_UPDATE},
        {"no-golden", no_argument, NULL, OPT_NO_GOLDEN},
        {"expect", no_argument, NULL, OPT_EXPECT},
        {"golden", required_argument, NULL, OPT_GOLDEN},
        {"format", required_argument, NULL, OPT_FORMAT},
        {NULL, 0, NULL, 0},
};
const struct option *const cli_tables_check[] = {check_options, NULL};

struct check_cmd {
    struct cli_runopts ro;
    int quiet, hold, json;
    struct golden_opts g;
    const char *format;
    enum report_format fmt;
    struct cli_paths files;
    /* what the runs made */
    struct report_summary *sum; /* files.n */
    int nsum;                   /* summaries to close */
    int gold_same, gold_written;
};

/* check's arguments: 0, -1 after --help, or the exit status. */
static int parse_check_args(struct check_cmd *o, int argc, char **argv) {
    char err[700];
    struct cli_getopt go;
    o->format = "text";
    int st = cli_getopt_init_tables(&go, "check", cli_usage_check, &o->ro, cli_tables_check, argc, argv);
    for (int c; st == 0 && (c = cli_getopt_next(&go)) != CLI_OPT_END;) {
        switch (c) {
        case CLI_OPT_STOP: st = go.status; break;
        case OPT_QUIET: o->quiet = 1; break;
        case OPT_UPDATE: o->g.update = 1; break;
        case OPT_NO_GOLDEN: o->g.off = 1; break;
        case OPT_EXPECT: o->hold = 1; break;
        case OPT_GOLDEN: o->g.dir = go.arg; break;
        case OPT_FORMAT: o->format = go.arg; break;
        default: { /* CLI_OPT_ARG: a file or a folder, in order */
            int rc = cli_paths_add(&o->files, go.arg, err, sizeof err);
            if (rc) st = cli_fail(rc, err);
        }
        }
    }
    cli_getopt_close(&go);
    return st;
}

/* Everything before the runs: 0 or the exit status. */
static int check_prepare(struct check_cmd *o) {
    int st;
    if ((st = cli_format("check", o->format, &o->fmt)) != 0) return st;
    o->json = o->fmt == REPORT_FMT_JSONL;
    if (o->files.n == 0) return cli_usage("check needs at least one scenario file or folder");
    if (o->ro.seed || o->ro.nsets || o->ro.algo) {
        if (o->g.update)
            return cli_usage("check --update records the scenarios as written: no --seed, --set or --algo");
        o->g.off = 1; /* golden traces are of the scenarios as written */
    }
    if (o->g.update && !o->g.off && (st = update_refusals(&o->files)) != 0) return st;
    if (!(o->sum = calloc((unsigned)o->files.n, sizeof *o->sum))) return cli_fail(LSIM_ENOMEM, "");
    return 0;
}

/* Run file i, compare (or write) its golden trace, and write its JSON
 * record with --format json: 0, or LSIM_ENOMEM (nothing is reported as
 * checked that was not: the command stops). */
static int check_one(struct check_cmd *o, int i) {
    const char *file = o->files.v[i];
    struct run_spec spec = {.file = file,
                            .seed = o->ro.seed,
                            .sets = o->ro.sets,
                            .nsets = o->ro.nsets,
                            .algo = o->ro.algo,
                            .keep_trace = 0,
                            .hold_expects = o->hold};
    struct run_result r;
    double t0 = now_s();
    run_scenario(&spec, &r);
    double dt = now_s() - t0;
    struct report_summary *sum = &o->sum[i];
    o->nsum = i + 1;
    if (report_summarize(sum, file, &r, 2) != 0) {
        run_result_close(&r);
        return LSIM_ENOMEM;
    }
    sum->seconds = dt;
    if (r.rc && !o->json) cli_fail(r.rc, r.error); /* on stderr at once, as the run fails */
    struct memtext gm;
    enum golden_result gr = memtext_open(&gm) ? GOLDEN_NOMEM : golden_check(&o->g, file, &r, gm.f);
    if (memtext_close(&gm) != 0) gr = GOLDEN_NOMEM;
    char *gmsg = gm.buf;
    int oom = gr == GOLDEN_NOMEM;
    if (gr == GOLDEN_SAME) o->gold_same++;
    else if (gr == GOLDEN_WRITTEN) o->gold_written++, fputs(gmsg, o->json ? stderr : stdout);
    else if (gr == GOLDEN_FAILED) {
        if (o->json) fputs(gmsg, stderr);
        if (add_failure(sum, gmsg ? gmsg : "") != 0) oom = 1;
    }
    free(gmsg);
    if (o->json && !oom) {
        struct report_ctx c = {.file = file, .algo = o->ro.algo, .sets = o->ro.sets, .nsets = o->ro.nsets};
        if (r.rc) report_json_error(stdout, file, &r);
        else if (report_json(stdout, &r, &c, NULL) != 0) oom = 1;
    }
    run_result_close(&r);
    return oom ? LSIM_ENOMEM : 0;
}

/* The summary in the text, TAP or JUnit format (JSON went out run by run):
 * 0 or the exit status. */
static int check_output(const struct check_cmd *o) {
    int n = o->files.n;
    if (o->fmt == REPORT_FMT_TEXT) report_check_text(stdout, o->sum, n, o->quiet, o->gold_same, o->gold_written);
    else if (o->fmt == REPORT_FMT_TAP) report_tap(stdout, o->sum, n);
    else if (o->fmt == REPORT_FMT_JUNIT && report_junit(stdout, "locksim check", o->sum, n, o->ro.sets, o->ro.nsets))
        return cli_fail(LSIM_ENOMEM, "");
    return 0;
}

int cmd_check(int argc, char **argv) {
    struct check_cmd o;
    memset(&o, 0, sizeof o);
    int st = parse_check_args(&o, argc, argv);
    if (st == 0) st = check_prepare(&o);
    int worst = 0;
    for (int i = 0; st == 0 && i < o.files.n; i++) {
        if (check_one(&o, i) != 0) st = cli_fail(LSIM_ENOMEM, "");
        else if (cli_exit(o.sum[i].outcome) > worst) worst = cli_exit(o.sum[i].outcome);
    }
    if (st == 0) {
        int ost = check_output(&o);
        st = ost ? ost : worst;
        if (fflush(stdout) != 0) st = cli_fail(LSIM_EOUTPUT, "cannot write to standard output");
    }
    for (int i = 0; i < o.nsum; i++) report_summary_close(&o.sum[i]);
    free(o.sum);
    cli_paths_free(&o.files);
    return st < 0 ? 0 : st;
}
