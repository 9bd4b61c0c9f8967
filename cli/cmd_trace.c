/* `locksim check-trace` and `locksim diff`: commands over recorded traces
 * (JSON Lines, docs/trace-format.md). check-trace runs the checker over a
 * trace read back, as it runs online during a simulation, and prints the
 * verdict block `run` prints; diff shows the first event where two traces
 * diverge. */
#include <stdlib.h>
#include <string.h>

#include "checker.h"
#include "cli.h"
#include "fmt.h"
#include "input.h"
#include "text.h"
#include "run.h"
#include "scenario_file.h"
#include "trace_diff.h"

/* Load a trace file; on failure print why and return the exit status. */
static int load(struct trace *tr, const char *path) {
    char err[700];
    trace_init(tr, 1);
    int rc = input_load_trace(tr, path, stderr, err, sizeof err);
    return rc ? cli_fail(rc, err) : 0;
}


/* The expect lines of s (loaded from scn_file) judged against the trace tr
 * (file): each client an expectation names is bound to the trace's node of
 * that name (its index in the trace, which the checker's facts use). 0, or
 * LSIM_EPARSE with "SCN:LINE:COL: ..." in err for a client the trace lacks. */
static int bind_expects(struct scenario *s, const char *scn_file, const struct trace *tr, const char *file, char *err,
                        size_t n) {
    for (int i = 0; i < s->nexpects; i++) {
        struct scn_expect *x = &s->expects[i];
        if (!scn_expect_names_client(x)) continue;
        x->client_index = -1;
        for (int k = 0; k < tr->nnodes; k++)
            if (strcmp(tr->nodes[k].name, x->client) == 0) x->client_index = k;
        if (x->client_index < 0) {
            snprintf(err, n,
                     "%s:%d:%d: expect names client '%s', which the trace %s has no node of: expected "
                     "the trace of this scenario",
                     scn_file, x->client_pos.line, x->client_pos.col, x->client, file);
            return LSIM_EPARSE;
        }
    }
    return 0;
}

/* What makes the recorded run another than the scenario as written (its
 * seed, its algorithm: a trace does not record --set), into na. */
static void trace_changes(char *na, size_t n, const struct trace *tr, const struct scenario *s) {
    size_t l = 0;
    na[0] = '\0';
    if (tr->seed != s->seed)
        l += (size_t)snprintf(na, n, "seed %llu (the file's: %llu)", (unsigned long long)tr->seed,
                              (unsigned long long)s->seed);
    if (l < n && strcmp(tr->algo, s->algo) != 0)
        snprintf(na + l, n - l, "%salgorithm %s (the file's: %s)", l ? ", " : "", tr->algo, s->algo);
}

struct check_trace_cmd {
    const char *file, *scn_file, *purpose_s, *stuck_s, *format;
    int no_color, hold, json;
    /* what the run made */
    struct scenario s;        /* --scenario's, or scenario_init's defaults */
    enum scn_purpose purpose; /* what the trace does not hold: from s or the options */
    sim_ns stuck_after;
    struct trace src, dst; /* the trace read, and as the checker saw it again */
    struct checker_report rep;
    struct run_result r; /* no engine: the report and the scenario judged */
    int cut;             /* no run-end event: the recording was cut short */
    char why[300];       /* why cut */
};

enum { OPT_SCENARIO = CLI_OPT_OWN, OPT_EXPECT, OPT_PURPOSE, OPT_STUCK_AFTER, OPT_FORMAT, OPT_CONTEXT };
static const struct option check_trace_options[] = {
        {"scenario", required_argument, NULL, OPT_SCENARIO}, {"expect", no_argument, NULL, OPT_EXPECT},
        {"purpose", required_argument, NULL, OPT_PURPOSE},   {"stuck-after", required_argument, NULL, OPT_STUCK_AFTER},
        {"format", required_argument, NULL, OPT_FORMAT},     {NULL, 0, NULL, 0},
};
const struct option *const cli_tables_check_trace[] = {check_trace_options, NULL};

/* check-trace's arguments: 0, -1 after --help, or the exit status. */
static int parse_check_trace_args(struct check_trace_cmd *o, int argc, char **argv) {
    struct cli_getopt g;
    o->format = "text";
    int st = cli_getopt_init_tables(&g, "check-trace", cli_usage_check_trace, NULL, cli_tables_check_trace, argc, argv);
    for (int c; st == 0 && (c = cli_getopt_next(&g)) != CLI_OPT_END;) {
        switch (c) {
        case CLI_OPT_STOP: st = g.status; break;
        case OPT_SCENARIO: o->scn_file = g.arg; break;
        case OPT_EXPECT: o->hold = 1; break;
        case OPT_PURPOSE: o->purpose_s = g.arg; break;
        case OPT_STUCK_AFTER: o->stuck_s = g.arg; break;
        case OPT_FORMAT: o->format = g.arg; break;
        default: /* CLI_OPT_ARG */
            if (o->file) st = cli_usage("check-trace takes one trace file; '%s' is a second", g.arg);
            else o->file = g.arg;
        }
    }
    o->no_color = g.no_color;
    cli_getopt_close(&g);
    return st;
}

/* The scenario of --scenario (or the defaults) and what --purpose and
 * --stuck-after make of it: 0 or the exit status. */
static int check_trace_scenario(struct check_trace_cmd *o) {
    struct scn_error e;
    int lrc = o->scn_file ? scenario_load(&o->s, o->scn_file, &e) : 0;
    if (lrc != 0) {
        char msg[700];
        scn_error_place(msg, sizeof msg, &e);
        return cli_fail(lrc, msg);
    }
    o->purpose = o->s.purpose;
    o->stuck_after = o->s.stuck_after_ns;
    const char *p = o->purpose_s;
    if (p && strcmp(p, "correctness") == 0) o->purpose = SCN_PURPOSE_CORRECTNESS;
    else if (p && strcmp(p, "efficiency") == 0) o->purpose = SCN_PURPOSE_EFFICIENCY;
    else if (p) return cli_usage("--purpose takes correctness or efficiency, not '%s'", p);
    if (o->stuck_s && scn_parse_duration(o->stuck_s, &o->stuck_after) != 0)
        return cli_usage("--stuck-after takes a duration such as 60s, not '%s'", o->stuck_s);
    return 0;
}

/* A recording ends with run-end (docs/trace-format.md): without it the file
 * was cut short, and its figures decide nothing. Sets o->cut and o->why. */
static void check_trace_cut(struct check_trace_cmd *o) {
    const struct trace *src = &o->src;
    o->cut = 1;
    for (size_t i = src->len; i-- > 0 && o->cut;)
        if (src->ev[i].kind == TRACE_RUN_END) o->cut = 0;
    if (!o->cut) return;
    char t[32];
    format_time_ns(t, sizeof t, src->len ? src->ev[src->len - 1].t : 0);
    snprintf(o->why, sizeof o->why,
             "the trace has no run-end event: the recording was cut short after %zu event%s (t=%s), "
             "so nothing is decided",
             src->len, src->len == 1 ? "" : "s", t);
}

/* The checker over the trace again, then the scenario's expect lines judged
 * on its report as a run's are. Returns the checker's 0 or LSIM_E* code. */
static int check_trace_judge(struct check_trace_cmd *o) {
    int rc = run_recheck(&o->src, o->purpose, o->stuck_after, o->scn_file ? &o->s : NULL, &o->dst, &o->rep);
    struct run_result *r = &o->r;
    r->scn = &o->s;
    r->report = &o->rep;
    r->truncated = o->cut;
    r->nexpects = o->scn_file ? o->s.nexpects : 0;
    if (r->nexpects && !o->hold) trace_changes(r->not_applicable, sizeof r->not_applicable, &o->src, &o->s);
    for (int i = 0; rc == 0 && !o->cut && !r->not_applicable[0] && i < r->nexpects; i++)
        if (!run_expect(r, i, NULL)) r->failed++;
    return rc;
}

/* The run's JSON record, from a summary of the trace: its events are those
 * read, whatever a run-end event claims; why an expectation failed goes to
 * standard error. */
static void check_trace_json(const struct check_trace_cmd *o) {
    const struct trace *src = &o->src;
    struct report_summary sum;
    memset(&sum, 0, sizeof sum);
    sum.file = o->file;
    snprintf(sum.title, sizeof sum.title, "%s", src->title);
    snprintf(sum.algo, sizeof sum.algo, "%s", src->algo);
    sum.seed = src->seed;
    sum.events = (unsigned long long)src->len;
    sum.truncated = o->cut;
    sum.outcome = run_outcome(&o->r, 0);
    sum.rep = o->rep;
    /* A golden trace's events leave out the message traffic: its digest is
     * the whole run's, in its header, while the findings read agree with
     * the checker's. */
    sum.trace_hash = src->golden && trace_hash(&o->dst) == trace_hash(src) ? src->golden_digest : trace_hash(&o->dst);
    sum.judged = o->scn_file != NULL; /* PASS or FAIL, else RAN */
    sum.nexpects = o->r.nexpects;
    sum.failed = o->r.failed;
    snprintf(sum.not_applicable, sizeof sum.not_applicable, "%s", o->r.not_applicable);
    report_json_summary(stdout, &sum, NULL, 0);
    char err[1400];
    for (int i = 0; !o->cut && !o->r.not_applicable[0] && i < o->r.nexpects; i++)
        if (report_expect_failure(err, sizeof err, o->scn_file, &o->r, i)) fprintf(stderr, "%s\n", err);
}

/* The verdict block `run` prints, headed by what the trace is. */
static void check_trace_text(const struct check_trace_cmd *o) {
    const struct trace *src = &o->src;
    struct report_ctx c = {.file = o->file, .color = cli_want_color(o->no_color), .truncation = o->why};
    char t1[1000], t2[500], t3[200];
    printf("Trace: %s\n  %s, algorithm %s, seed %llu, %zu events\n", text_term(t1, sizeof t1, o->file),
           text_term(t2, sizeof t2, src->title), text_term(t3, sizeof t3, src->algo), (unsigned long long)src->seed,
           src->len);
    if (o->r.nexpects) printf("  judged against the expect lines of %s\n", text_term(t1, sizeof t1, o->scn_file));
    report_text_verdict(stdout, &o->r, &c);
    if (trace_hash(&o->dst) != trace_hash(src))
        printf("  note: the findings recorded in the file differ from the checker's now\n");
    if (o->scn_file && strcmp(src->title, o->s.title) != 0) {
        char t4[500];
        printf("  note: the trace's title is \"%s\", the scenario's \"%s\"\n", text_term(t1, sizeof t1, src->title),
               text_term(t4, sizeof t4, o->s.title));
    }
    report_text_expects(stdout, &o->r, &c); /* those of --scenario, if any */
}

/* Everything before the judging: 0 or the exit status. */
static int check_trace_prepare(struct check_trace_cmd *o) {
    enum report_format fmt;
    int st = cli_format("check-trace", o->format, &fmt);
    if (st) return st;
    o->json = fmt == REPORT_FMT_JSONL;
    if (!o->file) return cli_usage("check-trace needs a trace file (JSON Lines, from `locksim run --trace`)");
    if (o->hold && !o->scn_file) return cli_usage("check-trace --expect needs --scenario FILE.lsim: its expect lines");
    if ((st = check_trace_scenario(o)) != 0) return st;
    if ((st = load(&o->src, o->file)) != 0) return st;
    char err[1400];
    if (o->scn_file && bind_expects(&o->s, o->scn_file, &o->src, o->file, err, sizeof err) != 0)
        return cli_fail(LSIM_EPARSE, err);
    return 0;
}

int cmd_check_trace(int argc, char **argv) {
    struct check_trace_cmd o;
    memset(&o, 0, sizeof o);
    scenario_init(&o.s);
    trace_init(&o.src, 1);
    trace_init(&o.dst, 1);
    int st = parse_check_trace_args(&o, argc, argv);
    if (st == 0) st = check_trace_prepare(&o);
    int rc = 0;
    if (st == 0) {
        check_trace_cut(&o);
        rc = check_trace_judge(&o);
        if (rc == 0 && o.json) check_trace_json(&o);
        else if (rc == 0) check_trace_text(&o);
    }
    trace_close(&o.dst);
    trace_close(&o.src);
    scenario_close(&o.s);
    if (st) return st < 0 ? 0 : st;
    if (rc) return cli_fail(rc, "");
    if (o.cut) {
        char msg[1400];
        snprintf(msg, sizeof msg, "%s: %s", o.file, o.why);
        return cli_fail(LSIM_ETRUNCATED, msg);
    }
    return cli_exit(run_outcome(&o.r, 0)); /* 0, or 1 when an expectation fails; main() checks standard output */
}

/* *t without its message traffic (trace_copy_golden), to be compared with a
 * golden trace. Returns 0, or the exit status after saying why not. */
static int without_traffic(struct trace *t) {
    struct trace g;
    trace_init(&g, 1);
    if (trace_copy_golden(&g, t) != 0) {
        trace_close(&g);
        return cli_fail(LSIM_ENOMEM, "");
    }
    trace_close(t);
    *t = g;
    return 0;
}

static const struct option diff_options[] = {
        {"context", required_argument, NULL, OPT_CONTEXT},
        {NULL, 0, NULL, 0},
};
const struct option *const cli_tables_diff[] = {diff_options, NULL};

/* diff's arguments: the two files into f[]; 0, -1 after --help, or the
 * exit status. */
static int parse_diff_args(const char *f[2], long *context, int argc, char **argv) {
    int nf = 0;
    struct cli_getopt go;
    int st = cli_getopt_init(&go, "diff", cli_usage_diff, NULL, diff_options, argc, argv);
    for (int c; st == 0 && (c = cli_getopt_next(&go)) != CLI_OPT_END;) {
        if (c == CLI_OPT_STOP) st = go.status;
        else if (c == OPT_CONTEXT) {
            if (cli_parse_int(go.arg, 0, 1000, context) != 0)
                st = cli_usage("--context takes a number from 0 to 1000, not '%s'", go.arg);
        } else if (nf == 2) st = cli_usage("diff takes two trace files; '%s' is a third", go.arg);
        else f[nf++] = go.arg;
    }
    cli_getopt_close(&go);
    if (st == 0 && nf != 2) st = cli_usage("diff needs two trace files: locksim diff A.jsonl B.jsonl");
    return st;
}

/* Two traces that differ: what changed in meaning first (each judged afresh,
 * as a correctness scenario with the default stuck-after), then the first
 * divergent raw event at `at`. 0, or the exit status. */
static int diff_report(const char *f[2], struct trace *a, struct trace *b, long at, long context) {
    struct scenario def;
    scenario_init(&def);
    struct trace ca, cb;
    struct checker_report ra, rb;
    int rc = run_recheck(a, def.purpose, def.stuck_after_ns, NULL, &ca, &ra);
    if (!rc) rc = run_recheck(b, def.purpose, def.stuck_after_ns, NULL, &cb, &rb);
    else trace_init(&cb, 1);
    scenario_close(&def);
    printf("A: %s\nB: %s\n", f[0], f[1]);
    int dm = rc ? 0 : trace_diff_meaning(stdout, a, &ra, b, &rb, 20, "");
    if (dm < 0) rc = dm; /* what changed could not all be said */
    else if (!rc && dm == 0)
        printf("The same in meaning (verdict, metrics, who held the lock when, every write); the events "
               "moved:\n");
    trace_close(&ca);
    trace_close(&cb);
    if (rc) return cli_fail(rc, "");
    trace_diff_print(stdout, a, "A", b, "B", at, (int)context, "");
    return 0;
}

int cmd_diff(int argc, char **argv) {
    const char *f[2] = {NULL, NULL};
    long context = 3;
    int st = parse_diff_args(f, &context, argc, argv);
    if (st) return st < 0 ? 0 : st;
    struct trace a, b;
    st = load(&a, f[0]);
    if (!st) st = load(&b, f[1]);
    else trace_init(&b, 1);
    if (!st && a.golden != b.golden) { /* one is a golden trace: compare like with like */
        int g = a.golden ? 0 : 1;      /* the golden one */
        struct trace *full = g ? &a : &b;
        st = without_traffic(full);
        if (!st)
            printf("(%s is a golden trace, without message traffic: %s is compared without its %llu msg-send and "
                   "msg-recv events)\n",
                   f[g], f[1 - g], (unsigned long long)full->omitted);
    }
    if (!st) {
        long at = trace_diff_first(&a, &b);
        int same = at < 0 && strcmp(a.title, b.title) == 0 && strcmp(a.algo, b.algo) == 0 && a.seed == b.seed;
        int traffic = same && a.golden && a.golden_digest != b.golden_digest;
        if (traffic)
            printf("the same events; only the message traffic differs (digest %016llx, %016llx)\n",
                   (unsigned long long)a.golden_digest, (unsigned long long)b.golden_digest);
        else if (same) printf("same: %zu events\n", a.len);
        else st = diff_report(f, &a, &b, at, context);
        if (!st) st = same && !traffic ? 0 : 1;
    }
    trace_close(&a);
    trace_close(&b);
    return st;
}
