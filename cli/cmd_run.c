/* `locksim run`, `hash` and `demo`: one scenario played and reported, its
 * trace digest, and the seed's own timeline twice. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fmt.h"
#include "memtext.h"
#include "narrate.h"
#include "output.h"
#include "term.h"
#include "trace_chrome.h"
#include "trace_jsonl.h"

struct run_cmd {
    struct cli_runopts ro;
    const char *file;
    const char *trace_path;
    int chrome; /* --trace-format chrome */
    int json, color, timeline, narrate, width;
    int hold; /* --expect: judge the expect lines under overrides too */
};

enum { OPT_TRACE = CLI_OPT_OWN, OPT_TRACE_FORMAT, OPT_FORMAT, OPT_WIDTH, OPT_NARRATE, OPT_EXPECT, OPT_NO_TIMELINE };
static const struct option run_options[] = {
        {"trace", required_argument, NULL, OPT_TRACE},
        {"trace-format", required_argument, NULL, OPT_TRACE_FORMAT},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"width", required_argument, NULL, OPT_WIDTH},
        {"narrate", no_argument, NULL, OPT_NARRATE},
        {"expect", no_argument, NULL, OPT_EXPECT},
        {"no-timeline", no_argument, NULL, OPT_NO_TIMELINE},
        {NULL, 0, NULL, 0},
};
const struct option *const cli_tables_run[] = {run_options, NULL};

/* One option of run (g->arg its value): 0, or the exit status. */
static int take_run_option(struct run_cmd *o, int c, const char *v) {
    enum report_format f;
    long w;
    switch (c) {
    case OPT_TRACE: o->trace_path = v; return 0;
    case OPT_TRACE_FORMAT:
        if (strcmp(v, "chrome") == 0) o->chrome = 1;
        else if (strcmp(v, "jsonl") != 0) return cli_usage("--trace-format takes jsonl or chrome, not '%s'", v);
        return 0;
    case OPT_FORMAT: {
        int bad = cli_format("run", v, &f);
        if (bad) return bad;
        o->json = f == REPORT_FMT_JSONL;
        return 0;
    }
    case OPT_WIDTH:
        if (cli_parse_int(v, 40, 1000, &w) != 0)
            return cli_usage("--width takes a whole number of columns from 40 to 1000, not '%s'", v);
        o->width = (int)w;
        return 0;
    case OPT_NARRATE: o->narrate = 1; return 0;
    case OPT_EXPECT: o->hold = 1; return 0;
    default: /* OPT_NO_TIMELINE */ o->timeline = 0; return 0;
    }
}

static int parse_run_args(struct run_cmd *o, int argc, char **argv) {
    struct cli_getopt g;
    int st = cli_getopt_init_tables(&g, "run", cli_usage_run, &o->ro, cli_tables_run, argc, argv);
    if (st) return st;
    o->timeline = 1;
    for (int c; st == 0 && (c = cli_getopt_next(&g)) != CLI_OPT_END;) {
        if (c == CLI_OPT_STOP) st = g.status;
        else if (c != CLI_OPT_ARG) st = take_run_option(o, c, g.arg);
        else if (!o->file) o->file = g.arg;
        else st = cli_usage("run takes one scenario file; '%s' is a second", g.arg);
    }
    int no_color = g.no_color;
    cli_getopt_close(&g);
    if (st) return st;
    if (!o->file) return cli_usage("run needs a scenario file: locksim run FILE (or - for standard input)");
    if (o->chrome && !o->trace_path) return cli_usage("--trace-format chrome needs --trace FILE.json");
    o->color = cli_want_color(no_color);
    if (!o->width) o->width = cli_term_width();
    return 0;
}

/* The narration as one string (owned by the caller), or NULL. */
static char *narration_text(const struct trace *tr) {
    struct memtext m;
    int bad = memtext_open(&m) != 0 || narrate_trace(m.f, tr) != 0;
    if (memtext_close(&m) != 0 || bad) {
        free(m.buf);
        return NULL;
    }
    return m.buf;
}

/* The text report; 0, or LSIM_ENOMEM when the timeline or the narration
 * could not be drawn (what came before it is written). */
static int print_text(FILE *f, const struct run_result *r, const struct run_cmd *o, const struct report_ctx *c) {
    const struct scenario *s = r->scn;
    const struct checker_report *rep = r->report;
    char b1[32];
    const char *bold = o->color ? "\033[1m" : "", *off = o->color ? "\033[0m" : "";
    fprintf(f, "%s%s%s  (%s)\n", bold, s->title[0] ? s->title : "(untitled scenario)", off, o->file);
    format_time_ns(b1, sizeof b1, rep->end_ns);
    fprintf(f, "algorithm %s, %d client%s, seed %llu, %llu events, ends at %s\n", r->algo->name, s->nclients,
            s->nclients == 1 ? "" : "s", (unsigned long long)s->seed, (unsigned long long)engine_events(r->engine), b1);
    if (engine_dropped_options(r->engine)[0])
        fprintf(f, "note: %s does not use the scenario's option(s): %s\n", r->algo->name,
                engine_dropped_options(r->engine));
    if (o->timeline) {
        fputc('\n', f);
        struct term_opts to = {.width = o->width, .color = o->color, .legend = 1};
        /* A failed write stays on f for the caller's check (73); else it was memory. */
        if (term_render(f, engine_trace(r->engine), &to) != 0 && !ferror(f)) return LSIM_ENOMEM;
    }
    if (o->narrate) {
        fprintf(f, "\nWhat happened:\n");
        if (narrate_trace(f, engine_trace(r->engine)) != 0 && !ferror(f)) return LSIM_ENOMEM;
    }
    report_text_verdict(f, r, c);
    report_text_expects(f, r, c);
    fprintf(f, "\nReplay: ");
    report_replay(f, r, c);
    fputc('\n', f);
    return 0;
}

static int write_trace(const char *path, const char *input, const struct trace *tr, int chrome) {
    struct out_file out;
    char err[600];
    const char *inputs[] = {input};
    int rc = out_open(&out, path, inputs, 1, err, sizeof err);
    if (rc) return cli_fail(rc, err);
    /* A write error stays on the stream: out_commit reports it. */
    if (chrome && trace_write_chrome(out.f, tr) == LSIM_ENOMEM) {
        out_abort(&out);
        return cli_fail(LSIM_ENOMEM, "out of memory writing the Chrome trace");
    }
    if (!chrome) (void)trace_write_jsonl(out.f, tr);
    rc = out_commit(&out, err, sizeof err);
    return rc ? cli_fail(rc, err) : 0;
}

int cmd_run(int argc, char **argv) {
    struct run_cmd o;
    memset(&o, 0, sizeof o);
    int st = parse_run_args(&o, argc, argv);
    if (st) return st < 0 ? 0 : st;
    struct run_spec spec = {.file = o.file,
                            .seed = o.ro.seed,
                            .sets = o.ro.sets,
                            .nsets = o.ro.nsets,
                            .algo = o.ro.algo,
                            .keep_trace = 1,
                            .hold_expects = o.hold};
    struct run_result r;
    cli_time_limit_arm(&o.ro, 0);
    int rc = run_scenario(&spec, &r);
    cli_time_limit_disarm();
    if (rc) {
        run_result_close(&r);
        return cli_fail(rc, r.error);
    }
    struct report_ctx c = {.file = o.file,
                           .algo = o.ro.algo,
                           .sets = o.ro.sets,
                           .nsets = o.ro.nsets,
                           /* the text's timeline depends on the width: the replay says it */
                           .width = !o.json && o.timeline ? o.width : 0,
                           .color = o.color};
    /* The report goes to stdout, unless the trace does (--trace -). */
    int trace_on_stdout = o.trace_path && strcmp(o.trace_path, "-") == 0;
    FILE *rf = trace_on_stdout ? stderr : stdout;
    if (o.json) {
        char *narr = o.narrate ? narration_text(engine_trace(r.engine)) : NULL;
        if (o.narrate && !narr) {
            run_result_close(&r);
            return cli_fail(LSIM_ENOMEM, "out of memory writing the narration");
        }
        rc = report_json(rf, &r, &c, narr);
        free(narr);
    } else {
        rc = print_text(rf, &r, &o, &c);
    }
    if (rc) {
        run_result_close(&r);
        return cli_fail(rc, "out of memory writing the report");
    }
    if (o.trace_path && (st = write_trace(o.trace_path, o.file, engine_trace(r.engine), o.chrome)) != 0) {
        run_result_close(&r);
        return st;
    }
    int outcome = run_outcome(&r, 0);
    run_result_close(&r);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        char why[200];
        snprintf(why, sizeof why, "cannot write to standard output: %s", strerror(errno ? errno : EIO));
        return cli_fail(LSIM_EOUTPUT, why);
    }
    return cli_exit(outcome);
}

int cmd_hash(int argc, char **argv) {
    struct cli_runopts ro;
    memset(&ro, 0, sizeof ro);
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    int nfiles = 0, worst = 0;
    if (!files) return cli_fail(LSIM_ENOMEM, "");
    struct cli_getopt g;
    int st = cli_getopt_init(&g, "hash", cli_usage_hash, &ro, NULL, argc, argv);
    for (int c; st == 0 && (c = cli_getopt_next(&g)) != CLI_OPT_END;) {
        if (c == CLI_OPT_STOP) st = g.status;
        else files[nfiles++] = g.arg; /* CLI_OPT_ARG: the table has no option of its own */
    }
    cli_getopt_close(&g);
    if (st) {
        free(files);
        return st < 0 ? 0 : st;
    }
    if (nfiles == 0) {
        free(files);
        return cli_usage("hash needs at least one scenario file");
    }
    for (int i = 0; i < nfiles; i++) {
        struct run_spec spec = {.file = files[i],
                                .seed = ro.seed,
                                .sets = ro.sets,
                                .nsets = ro.nsets,
                                .algo = ro.algo,
                                .keep_trace = 0};
        struct run_result r;
        cli_time_limit_arm(&ro, 0);
        int rc = run_scenario(&spec, &r);
        cli_time_limit_disarm();
        if (rc) {
            int s = cli_fail(rc, r.error);
            if (s > worst) worst = s;
        } else {
            printf("%016llx  %s\n", (unsigned long long)r.trace_hash, files[i]);
        }
        run_result_close(&r);
    }
    free(files);
    return worst;
}

int cmd_demo(int argc, char **argv) {
    char buf[4200];
    const char *dir = NULL;
    struct cli_getopt g;
    int st = cli_getopt_init(&g, "demo", cli_usage_demo, NULL, NULL, argc, argv);
    for (int c; st == 0 && (c = cli_getopt_next(&g)) != CLI_OPT_END;) {
        if (c == CLI_OPT_STOP) st = g.status;
        else if (dir) st = cli_usage("demo takes at most one folder; '%s' is a second", g.arg);
        else dir = g.arg;
    }
    cli_getopt_close(&g);
    if (st) return st < 0 ? 0 : st;
    if (!dir) dir = cli_scenario_dir(buf, sizeof buf);
    static const char *const files[] = {"gc-pause-outlives-lease.lsim", "fencing-rejects-stale-write.lsim"};
    static const char *const intro[] = {"1/2  The seed's timeline with a plain lease (SET NX PX, compare-and-delete):",
                                        "2/2  The same timeline with fencing tokens checked by the resource:"};
    int worst = 0;
    for (int i = 0; i < 2; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        FILE *probe = fopen(path, "r");
        if (!probe) {
            fprintf(stderr,
                    "%s: demo cannot find '%s'; run it from the locksim folder or give the "
                    "scenarios folder: locksim demo DIR\n",
                    cli_prog, path);
            return cli_exit(LSIM_ENOINPUT);
        }
        fclose(probe);
        printf("%s%s\n\n", i ? "\n\n" : "", intro[i]);
        fflush(stdout);
        char *args[] = {path, "--narrate"};
        int rc = cmd_run(2, args);
        if (rc > worst) worst = rc;
    }
    return worst;
}
