/* locksim: the command line. Parses arguments, loads scenarios, runs the
 * engine, prints verdicts and timelines, writes traces. Everything it shows
 * comes from the trace and the checker's report. */
#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "engine.h"
#include "fmt.h"
#include "narrate.h"
#include "term.h"
#include "trace_jsonl.h"

#define LOCKSIM_VERSION "0.1.0"

/* Exit codes (documented in --help and README.md; sysexits.h values). */
enum {
    EXIT_OK = 0,        /* run completed and every expect holds */
    EXIT_EXPECT = 1,    /* an expect line failed */
    EXIT_USAGE = 64,    /* bad command line */
    EXIT_DATAERR = 65,  /* malformed scenario */
    EXIT_NOINPUT = 66,  /* file not found or unreadable */
    EXIT_SOFTWARE = 70, /* internal error (out of memory) */
    EXIT_CANTCREAT = 73 /* an output file (--trace) cannot be written */
};

static const char *prog = "locksim";

static const char usage_main[] =
    "locksim " LOCKSIM_VERSION " - a deterministic simulator of distributed-lock pathologies\n"
    "\n"
    "Usage:\n"
    "  locksim run FILE [options]     run one scenario: verdict, timeline, expectations\n"
    "  locksim check FILE...          run scenarios and check their `expect` lines\n"
    "  locksim demo [DIR]             the seed's GC-pause timeline, plain lease then fencing\n"
    "  locksim matrix FILE [options]  one fault script against every algorithm: a verdict table\n"
    "  locksim list                   lock algorithms (and scenarios in ./scenarios)\n"
    "  locksim hash FILE...           trace hash of each scenario (determinism checks)\n"
    "  locksim help [COMMAND]         this text, or one command's\n"
    "  locksim --version\n"
    "\n"
    "Exit codes:\n"
    "  0   run completed and every expect holds\n"
    "  1   an expect line failed\n"
    "  64  usage error (bad command line)\n"
    "  65  malformed scenario (file:line:col: message on stderr)\n"
    "  66  scenario file not found or unreadable\n"
    "  70  internal error (out of memory)\n"
    "  73  an output file cannot be written\n"
    "\n"
    "Environment: NO_COLOR disables colour, as --no-color does.\n";

static const char usage_run[] =
    "Usage: locksim run FILE [options]\n"
    "\n"
    "Plays one scenario and prints the verdict (SAFE, UNSAFE or STUCK) with its\n"
    "details, a timeline on the true-time axis, the scenario's expectations and a\n"
    "one-line replay command.\n"
    "\n"
    "Options:\n"
    "  --seed N            PRNG seed (overrides the scenario's `seed`)\n"
    "  --set KEY=VALUE     override a parameter: ttl=10s, stock=2, fencing=on,\n"
    "                      latency=5ms, duration=60s, lock.release=del, ... (repeatable)\n"
    "  --algo NAME|PATH    swap the lock algorithm, keeping the fault script; a PATH\n"
    "                      to a .so loads a user-written algorithm (docs/lock-interface.md)\n"
    "  --trace FILE.jsonl  write the whole trace as JSON Lines (docs/trace-format.md)\n"
    "  --format text|json  report format on stdout (default text)\n"
    "  --narrate           add a plain-words account of the run\n"
    "  --no-timeline       leave out the timeline\n"
    "  --width N           timeline width in columns (default: terminal, else 100)\n"
    "  --no-color          plain ASCII (also when NO_COLOR is set or not a terminal)\n";

static const char usage_check[] =
    "Usage: locksim check [--quiet] [--format text|json|tap|junit] FILE...\n"
    "\n"
    "Runs each scenario and checks its `expect` lines. text: one line per file and\n"
    "each failed expectation, then `scenarios: N passed, M failed`; json: one `run\n"
    "--format json` object per line (JSON Lines); tap: TAP version 13; junit: one\n"
    "JUnit XML testsuite, one testcase per file. Exit 1 if any expectation fails,\n"
    "65/66 if a file is malformed or missing (the worst code wins).\n";

static const char usage_matrix[] =
    "Usage: locksim matrix FILE [--algos NAME,NAME,...|all] [--format text|json|csv]\n"
    "                      [--seed N] [--set KEY=VALUE]...\n"
    "\n"
    "Plays the scenario's fault script against each algorithm (default: all built-in\n"
    "ones; a NAME may be a path to a user-written .so) and prints one row per algorithm:\n"
    "double entries, double-entry time, stale writes accepted/rejected, lost updates,\n"
    "wrong releases, stuck clients, verdict. An algorithm that cannot run the script\n"
    "(e.g. too many servers for it) says why in its row. The scenario's `expect` lines\n"
    "are not checked here. Exit 0 unless the file is missing (66) or malformed (65).\n";

static const char usage_hash[] =
    "Usage: locksim hash FILE...\n"
    "\n"
    "Prints `HASH  FILE` per scenario: FNV-1a 64 of the whole trace. Equal hashes\n"
    "mean byte-identical traces.\n";

static const char usage_demo[] =
    "Usage: locksim demo [DIR]\n"
    "\n"
    "Plays DIR/gc-pause-outlives-lease.lsim (a plain lease: A's late write is\n"
    "accepted) and DIR/fencing-rejects-stale-write.lsim (token 41 rejected after\n"
    "42), the seed's own timeline. DIR defaults to ./scenarios.\n";

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "%s: ", prog);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see `locksim help`)\n");
    return EXIT_USAGE;
}

/* ---- Options ------------------------------------------------------------- */

struct run_opts {
    const char *file;
    const char *seed;
    const char *sets[64];
    int nsets;
    const char *algo;
    const char *trace_path;
    int json;
    int color;
    int timeline;
    int narrate;
    int width;
    int quiet;
};

/* The last error message printed, for reports that carry it (check --format). */
static char last_error[600];

static void print_scn_error(const struct scn_error *err) {
    if (err->pos.line > 0)
        snprintf(last_error, sizeof last_error, "%s:%d:%d: %s", err->file, err->pos.line, err->pos.col, err->msg);
    else
        snprintf(last_error, sizeof last_error, "%s: %s", err->file, err->msg);
    fprintf(stderr, "%s\n", last_error);
}

/* Load a user-written algorithm from a shared object. */
static const struct lock_algo *load_plugin(const char *path) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "%s: cannot load algorithm '%s': %s\n", prog, path, dlerror());
        return NULL;
    }
    const struct lock_algo *(*get)(void);
    *(void **)(&get) = dlsym(h, "locksim_algo");
    if (!get) {
        fprintf(stderr, "%s: '%s' does not export locksim_algo(); see docs/lock-interface.md\n",
                prog, path);
        return NULL;
    }
    const struct lock_algo *a = get();
    if (!a || a->abi != LOCK_ABI_VERSION) {
        fprintf(stderr,
                "%s: '%s' was built against lock interface version %u; this locksim has version %u: "
                "rebuild it against this sim/lock.h\n",
                prog, path, a ? a->abi : 0, LOCK_ABI_VERSION);
        return NULL;
    }
    return a; /* the handle stays open for the life of the process */
}

static int resolve_algo(const char *name, const struct lock_algo **out) {
    *out = NULL;
    if (!name) return 0;
    if (strchr(name, '/') || strstr(name, ".so")) {
        *out = load_plugin(name);
        return *out ? 0 : EXIT_USAGE;
    }
    *out = lock_algo_find(name);
    if (!*out) {
        fprintf(stderr, "%s: unknown algorithm '%s'; `locksim list` shows them\n", prog, name);
        return EXIT_USAGE;
    }
    return 0;
}

/* Load FILE and apply --seed and --set. Returns 0 or an exit code. */
static int load_scenario(struct scenario *s, const struct run_opts *o) {
    struct scn_error err;
    memset(&err, 0, sizeof err);
    scenario_init(s);
    int rc = scenario_load(s, o->file, &err);
    if (rc == -2) {
        snprintf(last_error, sizeof last_error, "%s", err.msg);
        fprintf(stderr, "%s: %s\n", prog, err.msg);
        return EXIT_NOINPUT;
    }
    if (rc != 0) {
        print_scn_error(&err);
        return EXIT_DATAERR;
    }
    if (o->seed) {
        char kv[96];
        snprintf(kv, sizeof kv, "seed=%s", o->seed);
        if (scenario_set(s, kv, &err) != 0) {
            fprintf(stderr, "%s: --seed %s: %s\n", prog, o->seed, err.msg);
            return EXIT_USAGE;
        }
    }
    for (int i = 0; i < o->nsets; i++)
        if (scenario_set(s, o->sets[i], &err) != 0) {
            fprintf(stderr, "%s: --set %s: %s\n", prog, o->sets[i], err.msg);
            return EXIT_USAGE;
        }
    return 0;
}

/* ---- Report printing ------------------------------------------------------------ */

static const char *fmt_t(char *buf, size_t n, sim_ns t) {
    format_time_ns(buf, n, t);
    return buf;
}

static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}

static void print_replay(FILE *f, const struct run_opts *o, const struct scenario *s) {
    fprintf(f, "locksim run %s --seed %llu", o->file, (unsigned long long)s->seed);
    for (int i = 0; i < o->nsets; i++)
        if (strncmp(o->sets[i], "seed=", 5) != 0) fprintf(f, " --set %s", o->sets[i]);
    if (o->algo) fprintf(f, " --algo %s", o->algo);
}

static int count_failed(const struct scenario *s, const struct checker_report *r) {
    int failed = 0;
    for (int i = 0; i < s->nexpects; i++)
        if (!checker_expect_holds(r, &s->expects[i], NULL)) failed++;
    return failed;
}

static void metric_value(char *buf, size_t n, enum scn_metric m, int64_t v) {
    if (m == SCN_M_VERDICT) snprintf(buf, n, "%s", scn_verdict_name((enum scn_verdict)v));
    else if (m == SCN_M_DOUBLE_ENTRY_NS) format_time_ns(buf, n, v);
    else snprintf(buf, n, "%lld", (long long)v);
}

static void print_text(FILE *f, struct engine *e, const struct run_opts *o) {
    const struct scenario *s = engine_scenario(e);
    const struct checker_report *r = engine_report(e);
    const struct trace *tr = engine_trace(e);
    char b1[32], b2[32], b3[32];
    const char *bold = o->color ? "\033[1m" : "", *off = o->color ? "\033[0m" : "";
    const char *vcol = !o->color ? ""
                       : r->verdict == SCN_VERDICT_SAFE ? "\033[1;32m"
                       : r->verdict == SCN_VERDICT_STUCK ? "\033[1;33m" : "\033[1;31m";
    fprintf(f, "%s%s%s  (%s)\n", bold, s->title[0] ? s->title : "(untitled scenario)", off, o->file);
    fprintf(f, "algorithm %s, %d client%s, seed %llu, %llu events, ends at %s\n", engine_algo(e)->name,
            s->nclients, s->nclients == 1 ? "" : "s", (unsigned long long)s->seed,
            (unsigned long long)engine_events(e), fmt_t(b1, sizeof b1, r->end_ns));
    if (engine_truncated(e))
        fprintf(f, "note: the run stopped after max-events (%llu events) at %s, before its duration; "
                   "raise it with --set max-events=N\n",
                (unsigned long long)s->max_events, fmt_t(b1, sizeof b1, r->end_ns));
    if (engine_dropped_options(e)[0])
        fprintf(f, "note: %s does not use the scenario's option(s): %s\n", engine_algo(e)->name,
                engine_dropped_options(e));
    if (o->timeline) {
        fputc('\n', f);
        struct term_opts to = {.width = o->width, .color = o->color, .legend = 1};
        term_render(f, tr, &to);
    }
    if (o->narrate) {
        fprintf(f, "\nWhat happened:\n");
        narrate_trace(f, tr);
    }
    fprintf(f, "\nVerdict: %s%s%s\n", vcol, r->headline, off);
    fprintf(f, "  double entry     %lld interval%s, %s in total%s\n", (long long)r->double_entries,
            r->double_entries == 1 ? "" : "s", fmt_t(b1, sizeof b1, r->double_entry_ns),
            r->purpose == SCN_PURPOSE_EFFICIENCY && r->double_entries ? " (duplicated work)" : "");
    fprintf(f, "  stale writes     %lld accepted, %lld rejected%s\n", (long long)r->stale_accepted,
            (long long)r->stale_rejected, r->fenced ? " (resource checks fencing tokens)" : "");
    fprintf(f, "  lost updates     %lld (%lld write%s accepted; stock %lld -> %lld)\n",
            (long long)r->lost_updates, (long long)r->writes_accepted, r->writes_accepted == 1 ? "" : "s",
            (long long)r->initial_stock, (long long)r->final_stock);
    fprintf(f, "  wrong releases   %lld\n", (long long)r->wrong_releases);
    fprintf(f, "  stuck clients    %lld\n", (long long)r->stuck);
    fprintf(f, "  acquisitions     %lld ok, %lld gave up, %lld refused attempts; latency p50 %s, p99 %s, max %s\n",
            (long long)r->acquires, (long long)r->failed_acquires, (long long)r->denied_attempts,
            fmt_t(b1, sizeof b1, r->acquire_p50_ns), fmt_t(b2, sizeof b2, r->acquire_p99_ns),
            fmt_t(b3, sizeof b3, r->acquire_max_ns));
    if (s->nexpects) {
        fprintf(f, "\nExpectations:\n");
        for (int i = 0; i < s->nexpects; i++) {
            int64_t actual;
            int ok = checker_expect_holds(r, &s->expects[i], &actual);
            metric_value(b1, sizeof b1, s->expects[i].metric, actual);
            fprintf(f, "  %s%s%s  line %-3d expect %-32s (measured %s)\n",
                    o->color ? (ok ? "\033[32m" : "\033[1;31m") : "", ok ? "ok  " : "FAIL", off,
                    s->expects[i].pos.line, s->expects[i].text, b1);
        }
    }
    fprintf(f, "\nReplay: ");
    print_replay(f, o, s);
    fputc('\n', f);
}

static void print_json(FILE *f, struct engine *e, const struct run_opts *o) {
    const struct scenario *s = engine_scenario(e);
    const struct checker_report *r = engine_report(e);
    fprintf(f, "{\"file\":");
    json_str(f, o->file);
    fprintf(f, ",\"title\":");
    json_str(f, s->title);
    fprintf(f, ",\"algo\":");
    json_str(f, engine_algo(e)->name);
    fprintf(f, ",\"seed\":%llu,\"events\":%llu,\"stopped_at_max_events\":%s,\"end_ns\":%lld,"
               "\"verdict\":\"%s\",\"headline\":",
            (unsigned long long)s->seed, (unsigned long long)engine_events(e),
            engine_truncated(e) ? "true" : "false", (long long)r->end_ns,
            scn_verdict_name(r->verdict));
    json_str(f, r->headline);
    fprintf(f,
            ",\"purpose\":\"%s\",\"fenced\":%s,\"double_entries\":%lld,\"double_entry_ns\":%lld,"
            "\"stale_writes_accepted\":%lld,\"stale_writes_rejected\":%lld,\"lost_updates\":%lld,"
            "\"wrong_releases\":%lld,\"stuck\":%lld,\"acquires\":%lld,\"failed_acquires\":%lld,"
            "\"refused_attempts\":%lld,\"writes_accepted\":%lld,\"writes_rejected\":%lld,"
            "\"initial_stock\":%lld,\"final_stock\":%lld,\"acquire_p50_ns\":%lld,"
            "\"acquire_p99_ns\":%lld,\"acquire_max_ns\":%lld,\"trace_hash\":\"%016llx\",\"expects\":[",
            r->purpose == SCN_PURPOSE_EFFICIENCY ? "efficiency" : "correctness", r->fenced ? "true" : "false",
            (long long)r->double_entries, (long long)r->double_entry_ns, (long long)r->stale_accepted,
            (long long)r->stale_rejected, (long long)r->lost_updates, (long long)r->wrong_releases,
            (long long)r->stuck, (long long)r->acquires, (long long)r->failed_acquires,
            (long long)r->denied_attempts, (long long)r->writes_accepted, (long long)r->writes_rejected,
            (long long)r->initial_stock, (long long)r->final_stock, (long long)r->acquire_p50_ns,
            (long long)r->acquire_p99_ns, (long long)r->acquire_max_ns,
            (unsigned long long)trace_hash(engine_trace(e)));
    for (int i = 0; i < s->nexpects; i++) {
        int64_t actual;
        int ok = checker_expect_holds(r, &s->expects[i], &actual);
        char b[32];
        metric_value(b, sizeof b, s->expects[i].metric, actual);
        fprintf(f, "%s{\"line\":%d,\"expect\":", i ? "," : "", s->expects[i].pos.line);
        json_str(f, s->expects[i].text);
        fprintf(f, ",\"ok\":%s,\"measured\":", ok ? "true" : "false");
        json_str(f, b);
        fputc('}', f);
    }
    fprintf(f, "],\"replay\":\"");
    print_replay(f, o, s);
    fprintf(f, "\"}\n");
}

/* Write the trace to a temporary name and rename it, so that an interrupted
 * run never leaves a half-written file under the requested name. */
static int write_trace_file(const char *path, const struct trace *tr) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "%s: cannot write '%s': %s\n", prog, path, strerror(errno));
        return EXIT_CANTCREAT;
    }
    int rc = trace_write_jsonl(f, tr);
    if (fclose(f) != 0 || rc != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "%s: cannot write '%s': %s\n", prog, path, strerror(errno));
        remove(tmp);
        return EXIT_CANTCREAT;
    }
    return 0;
}

/* Build and run. *out receives the finished engine (caller frees). */
static int run_engine(struct engine **out, const struct scenario *s, const struct lock_algo *algo,
                      int keep) {
    struct engine_opts eo = {.algo = algo, .keep_trace = keep, .lenient_options = algo != NULL};
    struct scn_error err;
    memset(&err, 0, sizeof err);
    int rc = engine_new(out, s, &eo, &err);
    if (rc < 0 && rc != LSIM_ENOMEM && err.pos.line <= 0) {
        /* No place in the file: the offending option came from --set. */
        snprintf(last_error, sizeof last_error, "--set: %s", err.msg);
        fprintf(stderr, "%s: %s\n", prog, last_error);
        return EXIT_USAGE;
    }
    if (rc < 0 && rc != LSIM_ENOMEM) {
        print_scn_error(&err);
        return EXIT_DATAERR;
    }
    if (rc != 0) {
        fprintf(stderr, "%s: out of memory building the run\n", prog);
        return EXIT_SOFTWARE;
    }
    engine_run(*out);
    if (engine_trace(*out)->oom) {
        fprintf(stderr, "%s: out of memory during the run\n", prog);
        engine_free(*out);
        *out = NULL;
        return EXIT_SOFTWARE;
    }
    return 0;
}

static int want_color(int no_color_flag) {
    if (no_color_flag) return 0;
    const char *nc = getenv("NO_COLOR");
    if (nc && nc[0]) return 0;
    return isatty(STDOUT_FILENO);
}

/* The timeline's width: COLUMNS if set, else the terminal's, else 100. */
static int term_width(void) {
    const char *c = getenv("COLUMNS");
    int w = c ? atoi(c) : 0;
    if (w < 40 || w > 1000) {
        struct winsize ws;
        w = isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
    }
    return w >= 40 && w <= 1000 ? w : 100;
}

static int cmd_run(int argc, char **argv) {
    struct run_opts o = {0};
    int no_color = 0;
    o.timeline = 1;
    o.width = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_run, stdout);
            return EXIT_OK;
        } else if (strcmp(a, "--seed") == 0 && has) o.seed = argv[++i];
        else if (strcmp(a, "--set") == 0 && has) {
            if (o.nsets == 64) return usage_error("too many --set options (at most %s)", "64");
            o.sets[o.nsets++] = argv[++i];
        } else if (strcmp(a, "--algo") == 0 && has) o.algo = argv[++i];
        else if (strcmp(a, "--trace") == 0 && has) o.trace_path = argv[++i];
        else if (strcmp(a, "--format") == 0 && has) {
            const char *v = argv[++i];
            if (strcmp(v, "json") == 0) o.json = 1;
            else if (strcmp(v, "text") != 0) return usage_error("--format takes text or json, not '%s'", v);
        } else if (strcmp(a, "--width") == 0 && has) {
            o.width = atoi(argv[++i]);
            if (o.width < 40 || o.width > 1000) return usage_error("--width takes 40..1000, not '%s'", argv[i]);
        } else if (strcmp(a, "--no-color") == 0) no_color = 1;
        else if (strcmp(a, "--narrate") == 0) o.narrate = 1;
        else if (strcmp(a, "--no-timeline") == 0) o.timeline = 0;
        else if (a[0] == '-' && a[1]) return usage_error("unknown or incomplete option '%s' for run", a);
        else if (!o.file) o.file = a;
        else return usage_error("run takes one scenario file; '%s' is a second", a);
    }
    if (!o.file) return usage_error("%s", "run needs a scenario file: locksim run FILE");
    o.color = want_color(no_color);
    if (!o.width) o.width = term_width();

    const struct lock_algo *algo;
    int rc = resolve_algo(o.algo, &algo);
    if (rc) return rc;
    struct scenario s;
    rc = load_scenario(&s, &o);
    if (rc) {
        scenario_close(&s);
        return rc;
    }
    struct engine *e = NULL;
    rc = run_engine(&e, &s, algo, 1);
    scenario_close(&s);
    if (rc) return rc;
    if (o.json) print_json(stdout, e, &o);
    else print_text(stdout, e, &o);
    if (o.trace_path && (rc = write_trace_file(o.trace_path, engine_trace(e))) != 0) {
        engine_free(e);
        return rc;
    }
    int failed = count_failed(engine_scenario(e), engine_report(e));
    engine_free(e);
    if (fflush(stdout) != 0) return EXIT_SOFTWARE;
    return failed ? EXIT_EXPECT : EXIT_OK;
}

/* One scenario's outcome for `check`. */
struct check_result {
    const char *file;
    int rc;                 /* 0 ran, else the exit code of its failure (65, 66, 70) */
    char error[600];        /* when rc != 0 */
    enum scn_verdict verdict;
    int nexpects, failed;
    char failures[2048];    /* one line per failed expectation */
};

static void xml_str(FILE *f, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\n') fputc(*s, f);
        }
    }
}

static void check_one(struct check_result *cr, int json) {
    struct run_opts o = {0};
    o.file = cr->file;
    struct scenario s;
    last_error[0] = 0;
    int rc = load_scenario(&s, &o);
    struct engine *e = NULL;
    if (!rc) rc = run_engine(&e, &s, NULL, 0);
    scenario_close(&s);
    if (rc) {
        cr->rc = rc;
        snprintf(cr->error, sizeof cr->error, "%s", last_error[0] ? last_error : "cannot run");
        return;
    }
    const struct scenario *es = engine_scenario(e);
    const struct checker_report *r = engine_report(e);
    cr->verdict = r->verdict;
    cr->nexpects = es->nexpects;
    size_t len = 0;
    for (int k = 0; k < es->nexpects; k++) {
        int64_t actual;
        if (checker_expect_holds(r, &es->expects[k], &actual)) continue;
        char b[32];
        metric_value(b, sizeof b, es->expects[k].metric, actual);
        int w = snprintf(cr->failures + len, sizeof cr->failures - len, "%s:%d: expect %s: measured %s\n",
                         cr->file, es->expects[k].pos.line, es->expects[k].text, b);
        if (w > 0 && (size_t)w < sizeof cr->failures - len) len += (size_t)w;
        cr->failed++;
    }
    if (es->nexpects == 0) {
        snprintf(cr->failures, sizeof cr->failures, "%s: no expect lines: a scenario must state its outcome\n",
                 cr->file);
        cr->failed++;
    }
    if (json) print_json(stdout, e, &o);
    engine_free(e);
}

static int cmd_check(int argc, char **argv) {
    int quiet = 0, files = 0;
    const char *format = "text";
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            fputs(usage_check, stdout);
            return EXIT_OK;
        }
        if (strcmp(argv[i], "--quiet") == 0) quiet = 1;
        else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) format = argv[++i];
        else if (argv[i][0] == '-') return usage_error("unknown or incomplete option '%s' for check", argv[i]);
        else files++;
    }
    if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "tap") && strcmp(format, "junit"))
        return usage_error("--format takes text, json, tap or junit, not '%s'", format);
    if (files == 0) return usage_error("%s", "check needs at least one scenario file");
    struct check_result *res = calloc((size_t)files, sizeof *res);
    if (!res) return EXIT_SOFTWARE;
    int n = 0, json = strcmp(format, "json") == 0;
    for (int i = 0; i < argc; i++) {
        if (argv[i][0] == '-') {
            if (strcmp(argv[i], "--format") == 0) i++;
            continue;
        }
        res[n].file = argv[i];
        check_one(&res[n++], json);
    }
    int worst = EXIT_OK, passed = 0, failed = 0, expects = 0;
    for (int i = 0; i < n; i++) {
        expects += res[i].nexpects;
        if (res[i].rc) {
            failed++;
            if (res[i].rc > worst) worst = res[i].rc;
        } else if (res[i].failed) {
            failed++;
            if (worst == EXIT_OK) worst = EXIT_EXPECT;
        } else {
            passed++;
        }
    }
    if (strcmp(format, "text") == 0) {
        for (int i = 0; i < n; i++) {
            const struct check_result *r = &res[i];
            if (r->rc) continue; /* already on stderr */
            fputs(r->failures, stdout);
            if (!quiet || r->failed)
                printf("%-4s %s  (%s, %d expectation%s)\n", r->failed ? "FAIL" : "ok", r->file,
                       scn_verdict_name(r->verdict), r->nexpects, r->nexpects == 1 ? "" : "s");
        }
        printf("scenarios: %d passed, %d failed (%d expectations)\n", passed, failed, expects);
    } else if (strcmp(format, "tap") == 0) {
        printf("TAP version 13\n1..%d\n", n);
        for (int i = 0; i < n; i++) {
            const struct check_result *r = &res[i];
            int ok = !r->rc && !r->failed;
            printf("%s %d - %s", ok ? "ok" : "not ok", i + 1, r->file);
            if (!r->rc) printf(" (%s)", scn_verdict_name(r->verdict));
            putchar('\n');
            if (!ok) {
                printf("  ---\n  message: |\n");
                const char *m = r->rc ? r->error : r->failures;
                for (const char *p = m; *p;) {
                    const char *nl = strchr(p, '\n');
                    int l = nl ? (int)(nl - p) : (int)strlen(p);
                    printf("    %.*s\n", l, p);
                    p += l + (nl ? 1 : 0);
                }
                printf("  ...\n");
            }
        }
    } else if (strcmp(format, "junit") == 0) {
        printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        printf("<testsuite name=\"locksim scenarios\" tests=\"%d\" failures=\"%d\" errors=\"0\">\n", n, failed);
        for (int i = 0; i < n; i++) {
            const struct check_result *r = &res[i];
            printf("  <testcase classname=\"scenarios\" name=\"");
            xml_str(stdout, r->file);
            printf("\">");
            if (r->rc || r->failed) {
                printf("<failure message=\"");
                xml_str(stdout, r->rc ? "scenario could not run" : "expectation failed");
                printf("\">");
                xml_str(stdout, r->rc ? r->error : r->failures);
                printf("</failure>");
            } else {
                printf("<system-out>verdict %s</system-out>", scn_verdict_name(r->verdict));
            }
            printf("</testcase>\n");
        }
        printf("</testsuite>\n");
    }
    free(res);
    return worst;
}

/* ---- matrix: one fault script, every algorithm ------------------------------- */

struct matrix_row {
    const char *algo;
    char error[320];          /* why it could not run, or empty */
    struct checker_report r;
};

static void csv_field(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static int cmd_matrix(int argc, char **argv) {
    struct run_opts o = {0};
    const char *algos = "all", *format = "text";
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (strcmp(a, "--help") == 0) {
            fputs(usage_matrix, stdout);
            return EXIT_OK;
        } else if (strcmp(a, "--algos") == 0 && has) algos = argv[++i];
        else if (strcmp(a, "--format") == 0 && has) format = argv[++i];
        else if (strcmp(a, "--seed") == 0 && has) o.seed = argv[++i];
        else if (strcmp(a, "--set") == 0 && has) {
            if (o.nsets == 64) return usage_error("too many --set options (at most %s)", "64");
            o.sets[o.nsets++] = argv[++i];
        } else if (strcmp(a, "--no-color") == 0) {
            /* the matrix is plain text already */
        } else if (a[0] == '-' && a[1]) return usage_error("unknown or incomplete option '%s' for matrix", a);
        else if (!o.file) o.file = a;
        else return usage_error("matrix takes one scenario file; '%s' is a second", a);
    }
    if (!o.file) return usage_error("%s", "matrix needs a scenario file: locksim matrix FILE");
    if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "csv"))
        return usage_error("--format takes text, json or csv, not '%s'", format);

    /* The list of algorithms: all built-ins, or the names given. */
    const struct lock_algo *list[64];
    int n = 0;
    if (strcmp(algos, "all") == 0) {
        for (int i = 0; lock_algo_at(i) && n < 64; i++) list[n++] = lock_algo_at(i);
    } else {
        char buf[2048];
        snprintf(buf, sizeof buf, "%s", algos);
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            if (n == 64) return usage_error("too many algorithms (at most %s)", "64");
            int rc = resolve_algo(tok, &list[n]);
            if (rc) return rc;
            n++;
        }
    }
    if (n == 0) return usage_error("%s", "--algos names no algorithm");

    struct scenario s;
    int rc = load_scenario(&s, &o);
    if (rc) {
        scenario_close(&s);
        return rc;
    }
    struct matrix_row *rows = calloc((size_t)n, sizeof *rows);
    if (!rows) {
        scenario_close(&s);
        return EXIT_SOFTWARE;
    }
    for (int i = 0; i < n; i++) {
        rows[i].algo = list[i]->name;
        struct engine_opts eo = {.algo = list[i], .keep_trace = 0, .lenient_options = 1};
        struct scn_error err;
        memset(&err, 0, sizeof err);
        struct engine *e = NULL;
        int b = engine_new(&e, &s, &eo, &err);
        if (b < 0 && b != LSIM_ENOMEM) {
            snprintf(rows[i].error, sizeof rows[i].error, "cannot run this script: %s", err.msg);
            continue;
        }
        if (b != 0) {
            snprintf(rows[i].error, sizeof rows[i].error, "out of memory");
            continue;
        }
        engine_run(e);
        rows[i].r = *engine_report(e);
        engine_free(e);
    }

    char t[32];
    if (strcmp(format, "csv") == 0) {
        printf("algorithm,verdict,double_entries,double_entry_ns,stale_writes_accepted,"
               "stale_writes_rejected,lost_updates,wrong_releases,stuck,acquires,failed_acquires,note\n");
        for (int i = 0; i < n; i++) {
            const struct checker_report *r = &rows[i].r;
            csv_field(stdout, rows[i].algo);
            if (rows[i].error[0]) {
                printf(",ERROR,,,,,,,,,,");
                csv_field(stdout, rows[i].error);
            } else {
                printf(",%s,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,", scn_verdict_name(r->verdict),
                       (long long)r->double_entries, (long long)r->double_entry_ns, (long long)r->stale_accepted,
                       (long long)r->stale_rejected, (long long)r->lost_updates, (long long)r->wrong_releases,
                       (long long)r->stuck, (long long)r->acquires, (long long)r->failed_acquires);
                csv_field(stdout, r->headline);
            }
            putchar('\n');
        }
    } else if (strcmp(format, "json") == 0) {
        printf("{\"file\":");
        json_str(stdout, o.file);
        printf(",\"title\":");
        json_str(stdout, s.title);
        printf(",\"seed\":%llu,\"rows\":[", (unsigned long long)s.seed);
        for (int i = 0; i < n; i++) {
            const struct checker_report *r = &rows[i].r;
            printf("%s{\"algorithm\":", i ? "," : "");
            json_str(stdout, rows[i].algo);
            if (rows[i].error[0]) {
                printf(",\"error\":");
                json_str(stdout, rows[i].error);
            } else {
                printf(",\"verdict\":\"%s\",\"double_entries\":%lld,\"double_entry_ns\":%lld,"
                       "\"stale_writes_accepted\":%lld,\"stale_writes_rejected\":%lld,\"lost_updates\":%lld,"
                       "\"wrong_releases\":%lld,\"stuck\":%lld,\"acquires\":%lld,\"failed_acquires\":%lld,"
                       "\"headline\":",
                       scn_verdict_name(r->verdict), (long long)r->double_entries, (long long)r->double_entry_ns,
                       (long long)r->stale_accepted, (long long)r->stale_rejected, (long long)r->lost_updates,
                       (long long)r->wrong_releases, (long long)r->stuck, (long long)r->acquires,
                       (long long)r->failed_acquires);
                json_str(stdout, r->headline);
            }
            putchar('}');
        }
        printf("]}\n");
    } else {
        printf("%s  (%s), seed %llu\n", s.title[0] ? s.title : "(untitled scenario)", o.file,
               (unsigned long long)s.seed);
        printf("resource: stock %lld, %s; purpose %s\n\n", (long long)s.stock,
               s.fencing ? "checks fencing tokens" : "does not check tokens",
               s.purpose == SCN_PURPOSE_EFFICIENCY ? "efficiency" : "correctness");
        printf("%-22s %-7s %7s %10s %13s %6s %8s %6s\n", "algorithm", "verdict", "double", "double", "stale writes",
               "lost", "wrong", "stuck");
        printf("%-22s %-7s %7s %10s %13s %6s %8s %6s\n", "", "", "entries", "time", "acc / rej", "upd.",
               "releases", "");
        for (int i = 0; i < n; i++) {
            const struct checker_report *r = &rows[i].r;
            if (rows[i].error[0]) {
                printf("%-22s %s\n", rows[i].algo, rows[i].error);
                continue;
            }
            char sw[32];
            snprintf(sw, sizeof sw, "%lld / %lld", (long long)r->stale_accepted, (long long)r->stale_rejected);
            printf("%-22s %-7s %7lld %10s %13s %6lld %8lld %6lld\n", rows[i].algo, scn_verdict_name(r->verdict),
                   (long long)r->double_entries, fmt_t(t, sizeof t, r->double_entry_ns), sw,
                   (long long)r->lost_updates, (long long)r->wrong_releases, (long long)r->stuck);
        }
        printf("\nReplay one row: locksim run %s --algo NAME", o.file);
        for (int i = 0; i < o.nsets; i++) printf(" --set %s", o.sets[i]);
        printf("\n");
    }
    free(rows);
    scenario_close(&s);
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_SOFTWARE;
}

static int cmd_hash(int argc, char **argv) {
    int worst = EXIT_OK;
    if (argc == 0) return usage_error("%s", "hash needs at least one scenario file");
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            fputs(usage_hash, stdout);
            return EXIT_OK;
        }
        struct run_opts o = {0};
        o.file = argv[i];
        struct scenario s;
        int rc = load_scenario(&s, &o);
        struct engine *e = NULL;
        if (!rc) rc = run_engine(&e, &s, NULL, 1);
        scenario_close(&s);
        if (rc) {
            if (rc > worst) worst = rc;
            continue;
        }
        printf("%016llx  %s\n", (unsigned long long)trace_hash(engine_trace(e)), o.file);
        engine_free(e);
    }
    return worst;
}

static int cmd_list(void) {
    int w = 9; /* strlen("./FILE.so") */
    for (int i = 0; lock_algo_at(i); i++)
        if ((int)strlen(lock_algo_at(i)->name) > w) w = (int)strlen(lock_algo_at(i)->name);
    printf("Lock algorithms:\n");
    for (int i = 0; lock_algo_at(i); i++)
        printf("  %-*s  %s\n", w, lock_algo_at(i)->name, lock_algo_at(i)->summary);
    printf("  %-*s  %s\n", w, "./FILE.so", "a user-written algorithm (docs/lock-interface.md)");
    glob_t g;
    if (glob("scenarios/*.lsim", 0, NULL, &g) != 0) return EXIT_OK;
    printf("\nScenarios (./scenarios):\n");
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct scenario s;
        struct scn_error err;
        scenario_init(&s);
        if (scenario_load(&s, g.gl_pathv[i], &err) == 0) printf("  %-56s %s\n", g.gl_pathv[i], s.title);
        scenario_close(&s);
    }
    globfree(&g);
    return EXIT_OK;
}

static int cmd_demo(int argc, char **argv) {
    const char *dir = "scenarios";
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            fputs(usage_demo, stdout);
            return EXIT_OK;
        }
        dir = argv[i];
    }
    static const char *const files[] = {"gc-pause-outlives-lease.lsim", "fencing-rejects-stale-write.lsim"};
    static const char *const intro[] = {
        "1/2  The seed's timeline with a plain lease (SET NX PX, compare-and-delete):",
        "2/2  The same timeline with fencing tokens checked by the resource:"};
    int worst = EXIT_OK;
    for (int i = 0; i < 2; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        printf("%s%s\n\n", i ? "\n\n" : "", intro[i]);
        fflush(stdout);
        char *args[] = {path, "--narrate"};
        int rc = cmd_run(2, args);
        if (rc > worst) worst = rc;
    }
    return worst;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage_main, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        fputs(usage_main, stdout);
        return EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("locksim %s (lock interface %u, trace format %d)\n", LOCKSIM_VERSION, LOCK_ABI_VERSION,
               TRACE_FORMAT_VERSION);
        return EXIT_OK;
    }
    if (strcmp(cmd, "help") == 0) {
        const char *t = argc > 2 ? argv[2] : "";
        if (!strcmp(t, "run")) fputs(usage_run, stdout);
        else if (!strcmp(t, "check")) fputs(usage_check, stdout);
        else if (!strcmp(t, "hash")) fputs(usage_hash, stdout);
        else if (!strcmp(t, "matrix")) fputs(usage_matrix, stdout);
        else if (!strcmp(t, "demo")) fputs(usage_demo, stdout);
        else if (!t[0] || !strcmp(t, "list")) fputs(usage_main, stdout);
        else return usage_error("no help for '%s'", t);
        return EXIT_OK;
    }
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 2, argv + 2);
    if (strcmp(cmd, "check") == 0) return cmd_check(argc - 2, argv + 2);
    if (strcmp(cmd, "hash") == 0) return cmd_hash(argc - 2, argv + 2);
    if (strcmp(cmd, "matrix") == 0) return cmd_matrix(argc - 2, argv + 2);
    if (strcmp(cmd, "list") == 0) return cmd_list();
    if (strcmp(cmd, "demo") == 0) return cmd_demo(argc - 2, argv + 2);
    return usage_error("unknown command '%s'", cmd);
}
