/* `locksim explore`: search a scenario's fault budget for a run that breaks
 * its expectations, shrink it, and write the counterexample as a scenario
 * file (run/explore.h); per algorithm with --algos, then a summary table. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "explore.h"
#include "output.h"
#include "scenario.h"
#include "scenario_file.h"

const char cli_usage_explore[] =
        "Usage: locksim explore FILE [--budget RUNS | --time 30s] [--seed S] [--algos A,B|all]\n"
        "                       [--jobs N] [--swarm] [--set KEY=VALUE]... [-o counterexample.lsim]\n"
        "\n"
        "Searches the scenario's fault budget (its `explore` line, and its params with a\n"
        "range) for a run that breaks its `expect` lines (with none: a run that is not\n"
        "SAFE), then shrinks that run (fewest faults and clients, rounder and shorter\n"
        "times, fault sizes and ranged params bisected to the exact tick) and writes it\n"
        "as an ordinary scenario file that `locksim check` passes. The same --seed gives\n"
        "the same file, byte for byte, whatever --jobs is. The report ends with the\n"
        "algorithm's states and how many of the runs searched reached each.\n"
        "\n"
        "Options:\n"
        "  --budget RUNS   runs at most (default 100000; whole batches of 2048)\n"
        "  --time DUR      stop searching after this much wall time (30s, 2m)\n"
        "  --seed S        the explorer seed (default 1)\n"
        "  --algos LIST    explore with each of these algorithms (comma-separated, or all);\n"
        "                  default: the scenario's own\n"
        "  --jobs N        worker processes (default 1)\n"
        "  --swarm         each run enables a random subset of the fault kinds\n"
        "  --set KEY=VALUE override a scenario value first, as `run --set` does\n"
        "  -o FILE         write the counterexample here (with several algorithms, FILE\n"
        "                  gets .ALGO before its .lsim); default: print it\n"
        "Exit: 0 nothing found, 1 a counterexample was found, 64/65/66 as `run`; 130 when\n"
        "interrupted (Ctrl-C, TERM, HUP), after saying on stderr what was searched and the\n"
        "best found so far.\n";

/* "out.lsim" -> "out.lease.lsim" when several algorithms share -o. */
static void out_name(char *buf, size_t n, const char *path, const char *algo, int several) {
    size_t l = strlen(path);

    if (!several) snprintf(buf, n, "%s", path);
    else if (l > 5 && strcmp(path + l - 5, ".lsim") == 0) snprintf(buf, n, "%.*s.%s.lsim", (int)(l - 5), path, algo);
    else snprintf(buf, n, "%s.%s", path, algo);
}

static void print_cover(const struct explore_result *r) {
    static const char *const kind_head[SCN_NEM_COUNT] = {"pauses", "clock-steps", "latency-spikes", "crashes"};
    int k, p;

    printf("covered: %llu distinct fault placements of %llu the budget allows (kind, node, named "
           "point or whole second)",
           (unsigned long long)r->cover.placements, (unsigned long long)r->cover.placements_possible);
    if (r->cover.params) printf(", %llu draws of the params", (unsigned long long)r->cover.params);
    if (r->cover.truncated) printf(", %llu runs cut short (not judged)", (unsigned long long)r->cover.truncated);
    printf("\n  %-24s", "faults placed");
    for (k = 0; k < SCN_NEM_COUNT; k++) printf(" %14s", kind_head[k]);
    printf("\n  %-24s", "at a true time");
    for (k = 0; k < SCN_NEM_COUNT; k++) printf(" %14llu", (unsigned long long)r->cover.kind_timed[k]);
    for (p = SCN_POINT_NONE + 1; p < SCN_POINT_COUNT; p++) {
        printf("\n  %-24s", scn_point_name((enum scn_point)p));
        for (k = 0; k < SCN_NEM_COUNT; k++) printf(" %14llu", (unsigned long long)r->cover.point[k][p]);
    }
    printf("\n  %-24s", "in all");
    for (k = 0; k < SCN_NEM_COUNT; k++) printf(" %14llu", (unsigned long long)r->cover.kind[k]);
    printf("\n");
}

/* The algorithm's states (lock_algo.state_names): how many runs reached each. */
static int states_reached(const struct explore_result *r) {
    int i, n = 0;

    for (i = 0; r->algo && i < r->algo->nstates; i++) n += r->cover.state_runs[i] > 0;
    return n;
}

static void print_states(const struct explore_result *r) {
    int i, width = 26;

    if (!r->algo || r->algo->nstates == 0) {
        printf("algorithm states: %s names none (lock_algo.state_names)\n", r->algo ? r->algo->name : "the algorithm");
        return;
    }
    printf("algorithm states of %s: %d of %d reached (runs reaching each, of %llu runs)\n", r->algo->name,
           states_reached(r), r->algo->nstates, (unsigned long long)r->runs);
    for (i = 0; i < r->algo->nstates; i++) /* names of 26 characters or fewer keep the column */
        if ((int)strlen(r->algo->state_names[i]) > width) width = (int)strlen(r->algo->state_names[i]);
    for (i = 0; i < r->algo->nstates; i++)
        printf("  %-*s %10llu%s\n", width, r->algo->state_names[i], (unsigned long long)r->cover.state_runs[i],
               r->cover.state_runs[i] ? "" : "  not reached");
}

/* Interrupted (SIGINT, SIGTERM, SIGHUP): what was searched, and the best
 * found so far, on stderr. */
static void report_interrupted(const char *algo, const struct explore_opts *o, const struct explore_result *r) {
    char of[64] = "";

    if (o->budget)
        snprintf(of, sizeof of, " of the budget's %llu",
                 (unsigned long long)((o->budget + EXPLORE_BATCH - 1) / EXPLORE_BATCH * EXPLORE_BATCH));
    else if (o->time_s > 0) snprintf(of, sizeof of, " of a %gs search", o->time_s);
    fprintf(stderr, "locksim: interrupted: explore (algorithm %s) searched %llu runs%s in %.3fs", algo,
            (unsigned long long)r->runs, of, r->seconds);
    if (!r->found) {
        fprintf(stderr, "; nothing failed yet\n");
        return;
    }
    fprintf(stderr,
            "; the best found so far: run %llu fails (%d fault%s, %d client%s), shrunk in "
            "%d step%s (%llu runs) when stopped; no file written (run again with --budget %llu "
            "to shrink it)\n",
            (unsigned long long)r->first_fail, r->faults_found, r->faults_found == 1 ? "" : "s", r->clients_found,
            r->clients_found == 1 ? "" : "s", r->nsteps, r->nsteps == 1 ? "" : "s", (unsigned long long)r->shrink_runs,
            (unsigned long long)r->first_fail + 1);
}

#define EXPLORE_ALGOS_MAX 64

struct row {
    char algo[48];
    int found;
    unsigned long long runs, first;
    int faults;
    int states, nstates; /* algorithm states reached, of those it names */
    char what[200];
};

static int explore_one(const char *file, const struct scenario *s, struct explore_opts *o, const char *outpath,
                       int several, struct row *row) {
    struct explore_result r;
    char err[800] = "", path[4200];
    const char *algo = o->algo ? o->algo->name : s->algo;
    int rc = explore_run(s, o, &r, err, sizeof err);

    snprintf(row->algo, sizeof row->algo, "%s", algo);
    if (rc == LSIM_EINTERRUPTED) {
        report_interrupted(algo, o, &r);
        explore_result_close(&r);
        return cli_exit(rc);
    }
    if (rc) {
        explore_result_close(&r);
        return cli_fail(rc, err);
    }
    printf("== explore %s, algorithm %s, explorer seed %llu, %s, %d job%s\n", file, algo, (unsigned long long)o->seed,
           o->swarm ? "swarm (a random subset of kinds per run)" : "every kind in every run", o->jobs,
           o->jobs == 1 ? "" : "s");
    printf("search: %llu runs in %.3fs: %.0f runs/s", (unsigned long long)r.runs, r.seconds,
           r.seconds > 0 ? (double)r.runs / r.seconds : 0.0);
    row->found = r.found;
    row->runs = r.runs;
    row->states = states_reached(&r);
    row->nstates = r.algo ? r.algo->nstates : 0;
    if (!r.found) {
        printf("; none found in %llu runs\n", (unsigned long long)r.runs);
        print_cover(&r);
        print_states(&r);
        snprintf(row->what, sizeof row->what, "none found in %llu runs", (unsigned long long)r.runs);
        explore_result_close(&r);
        return 0;
    }
    row->first = (unsigned long long)r.first_fail + 1;
    row->faults = r.faults_shrunk;
    printf("; first failure at run %llu (%llu runs to the first failure)\n", (unsigned long long)r.first_fail,
           (unsigned long long)r.first_fail + 1);
    printf("shrink: %d steps, %llu runs in %.3fs: faults %d -> %d, clients %d -> %d\n", r.nsteps,
           (unsigned long long)r.shrink_runs, r.shrink_seconds, r.faults_found, r.faults_shrunk, r.clients_found,
           r.clients_shrunk);
    for (int i = 0; i < r.nsteps && i < EXPLORE_MAX_STEPS; i++) printf("  %d. %s\n", i + 1, r.steps[i]);
    for (int i = 0; i < r.nboundary; i++) printf("boundary: %s\n", r.boundary[i]);
    printf("found: %s\n", r.rep.headline);
    print_states(&r);
    /* The story in one line: the fault lines of the file. */
    {
        size_t used = 0;
        const char *p = r.text;
        row->what[0] = '\0';
        while (p && *p) {
            const char *nl = strchr(p, '\n');
            size_t l = nl ? (size_t)(nl - p) : strlen(p);
            if ((p[0] == '@' || strncmp(p, "on ", 3) == 0) && used + l + 3 < sizeof row->what) {
                snprintf(row->what + used, sizeof row->what - used, "%s%.*s", used ? "; " : "", (int)l, p);
                used = strlen(row->what);
            }
            p = nl ? nl + 1 : NULL;
        }
    }
    if (outpath) {
        struct out_file of;
        const char *inputs[1] = {file};
        out_name(path, sizeof path, outpath, algo, several);
        rc = out_open(&of, path, inputs, 1, err, sizeof err);
        if (rc == 0) {
            fwrite(r.text, 1, r.len, of.f);
            rc = out_commit(&of, err, sizeof err);
        }
        if (rc) {
            explore_result_close(&r);
            return cli_fail(rc, err);
        }
        printf("wrote %s (locksim check %s passes)\n", path, path);
    } else {
        printf("---- counterexample ----\n%s", r.text);
    }
    explore_result_close(&r);
    return 1;
}

struct explore_cmd {
    struct cli_runopts ro; /* its --set values */
    struct explore_opts o;
    const char *file, *algos, *outpath;
};

enum { OPT_SET = CLI_OPT_OWN, OPT_BUDGET, OPT_TIME, OPT_SEED, OPT_ALGOS, OPT_JOBS, OPT_SWARM };
/* explore's own --seed (the search's, any 64-bit number) and --set; no --algo. */
static const struct option explore_options[] = {
        {"set", required_argument, NULL, OPT_SET},
        {"budget", required_argument, NULL, OPT_BUDGET},
        {"time", required_argument, NULL, OPT_TIME},
        {"seed", required_argument, NULL, OPT_SEED},
        {"algos", required_argument, NULL, OPT_ALGOS},
        {"jobs", required_argument, NULL, OPT_JOBS},
        {"swarm", no_argument, NULL, OPT_SWARM},
        {"output", required_argument, NULL, 'o'},
        {NULL, 0, NULL, 0},
};
const struct option *const cli_tables_explore[] = {explore_options, NULL};

/* One option of explore, or its file: 0, or the exit status. */
static int take_explore_option(struct explore_cmd *x, int c, const char *a) {
    long v;
    sim_ns t;
    char *end;
    switch (c) {
    case OPT_SET:
        if (x->ro.nsets == CLI_MAX_SETS) return cli_usage("too many --set options (at most %d)", CLI_MAX_SETS);
        x->ro.sets[x->ro.nsets++] = a;
        return 0;
    case OPT_BUDGET:
        if (cli_parse_int(a, 1, 2000000000L, &v) != 0)
            return cli_usage("--budget takes a number of runs from 1 to 2000000000, not '%s'", a);
        x->o.budget = (uint64_t)v;
        return 0;
    case OPT_TIME:
        if (scn_parse_duration(a, &t) != 0 || t <= 0)
            return cli_usage("--time takes a duration such as 30s or 2m, not '%s'", a);
        x->o.time_s = (double)t / 1e9;
        x->o.budget = 0;
        return 0;
    case OPT_SEED:
        errno = 0;
        x->o.seed = strtoull(a, &end, 10);
        if (!a[0] || *end || a[0] == '-' || errno) return cli_usage("--seed takes a number, not '%s'", a);
        return 0;
    case OPT_ALGOS: x->algos = a; return 0;
    case OPT_JOBS:
        if (cli_parse_int(a, 1, EXPLORE_MAX_JOBS, &v) != 0)
            return cli_usage("--jobs takes a number from 1 to %d, not '%s'", EXPLORE_MAX_JOBS, a);
        x->o.jobs = (int)v;
        return 0;
    case OPT_SWARM: x->o.swarm = 1; return 0;
    case 'o': x->outpath = a; return 0;
    default: /* CLI_OPT_ARG */
        if (x->file) return cli_usage("explore takes one scenario file, not '%s' as well", a);
        x->file = a;
        return 0;
    }
}

/* explore's arguments: 0, -1 after --help, or the exit status. */
static int parse_explore_args(struct explore_cmd *x, int argc, char **argv) {
    struct cli_getopt g;
    x->o.seed = 1;
    x->o.jobs = 1;
    x->o.budget = 100000;
    int st = cli_getopt_init_tables(&g, "explore", cli_usage_explore, NULL, cli_tables_explore, argc, argv);
    for (int c; st == 0 && (c = cli_getopt_next(&g)) != CLI_OPT_END;)
        st = c == CLI_OPT_STOP ? g.status : take_explore_option(x, c, g.arg);
    cli_getopt_close(&g);
    return st;
}

/* The command that reproduces this search, without --algos (each row adds
 * its own), into out. */
static void explore_cmdline(const struct explore_cmd *x, char *out, size_t n) {
    size_t cl = (size_t)snprintf(out, n, "locksim explore");
    for (int i = 0; i < x->ro.nsets; i++)
        cl += (size_t)snprintf(out + cl, cl < n ? n - cl : 0, " --set %s", x->ro.sets[i]);
    cl += (size_t)snprintf(out + cl, cl < n ? n - cl : 0, " %s", x->file);
    if (x->o.budget)
        cl += (size_t)snprintf(out + cl, cl < n ? n - cl : 0, " --budget %llu", (unsigned long long)x->o.budget);
    else cl += (size_t)snprintf(out + cl, cl < n ? n - cl : 0, " --time %gs", x->o.time_s);
    snprintf(out + cl, cl < n ? n - cl : 0, " --seed %llu%s", (unsigned long long)x->o.seed,
             x->o.swarm ? " --swarm" : "");
}

/* The scenario with the --set values applied: 0 or the exit status. */
static int explore_load(const struct explore_cmd *x, struct scenario *s) {
    struct scn_error err;
    char msg[700];
    int rc = scenario_load(s, x->file, &err);
    if (rc) {
        scn_error_place(msg, sizeof msg, &err);
        return cli_fail(rc, msg);
    }
    for (int i = 0; i < x->ro.nsets; i++) {
        if ((rc = scenario_set(s, x->ro.sets[i], &err)) != 0) {
            snprintf(msg, sizeof msg, "--set %s: %s", x->ro.sets[i], err.msg);
            return cli_fail(rc, msg);
        }
    }
    return 0;
}

/* With several algorithms: a table of what each search found. */
static void print_rows(const struct row *rows, int n) {
    printf("%-22s %-6s %10s %8s %7s  %s\n", "algorithm", "found", "runs", "faults", "states",
           "minimal failing scenario (its fault lines)");
    for (int i = 0; i < n; i++) {
        char runs[32], states[32];
        snprintf(runs, sizeof runs, "%llu", rows[i].found ? rows[i].first : rows[i].runs);
        snprintf(states, sizeof states, "%d/%d", rows[i].states, rows[i].nstates);
        printf("%-22s %-6s %10s %8d %7s  %s\n", rows[i].algo, rows[i].found ? "yes" : "no", runs, rows[i].faults,
               states, rows[i].what);
    }
    printf("(runs: to the first failure when found, else runs searched; states: algorithm "
           "states reached in the runs searched, of those it names)\n");
}

/* One search per algorithm (the scenario's own when list[0] is NULL), the
 * number that found a failing run in *found: 0, or the exit status of a
 * search that failed (it ends the command). */
static int explore_all(struct explore_cmd *x, const struct scenario *s, const struct lock_algo *const *list, int n,
                       struct row *rows, int *found) {
    char cmdline[1024], cmd[1200];
    explore_cmdline(x, cmdline, sizeof cmdline);
    int st = 0, several = n > 1;
    *found = 0;
    x->o.stop = cli_stop_catch(); /* Ctrl-C, TERM, HUP: a partial report and 130 */
    for (int i = 0; i < n; i++) {
        x->o.algo = list[i];
        snprintf(cmd, sizeof cmd, "%s%s%s", cmdline, list[i] ? " --algos " : "", list[i] ? list[i]->name : "");
        x->o.command = cmd;
        memset(&rows[i], 0, sizeof rows[i]);
        int r = explore_one(x->file, s, &x->o, x->outpath, several, &rows[i]);
        if (r > 1) {
            st = r;
            break;
        }
        *found += r;
        if (several) printf("\n");
    }
    cli_stop_release();
    return st;
}

int cmd_explore(int argc, char **argv) {
    struct explore_cmd x;
    memset(&x, 0, sizeof x);
    int st = parse_explore_args(&x, argc, argv);
    if (st) return st < 0 ? 0 : st;
    if (!x.file) return cli_usage("explore needs a scenario file");
    struct scenario s;
    scenario_init(&s);
    /* The algorithms: the scenario's own, or each of --algos. */
    const struct lock_algo *list[EXPLORE_ALGOS_MAX] = {NULL};
    int n = 1;
    if ((st = explore_load(&x, &s)) == 0 && x.algos) st = cli_parse_algos(x.algos, list, NULL, EXPLORE_ALGOS_MAX, &n);
    struct row rows[EXPLORE_ALGOS_MAX];
    int found = 0;
    if (st == 0) st = explore_all(&x, &s, list, n, rows, &found);
    scenario_close(&s);
    if (st) return st;
    if (n > 1) print_rows(rows, n);
    if (fflush(stdout) != 0) return cli_fail(LSIM_EOUTPUT, "cannot write to standard output");
    return found ? 1 : 0;
}
