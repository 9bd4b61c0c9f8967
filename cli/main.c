/* locksim: the command line. main() picks the command; each command is a
 * cmd_*.c file over the run API (run/run.h) and the report writers
 * (run/report.h). Exit statuses come from the error table (sim/error.h). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "scenario.h"
#include "scenario_file.h"

const char cli_usage_main[] =
    "locksim " LOCKSIM_VERSION " - a deterministic simulator of distributed-lock pathologies\n"
    "\n"
    "Usage:\n"
    "  locksim run FILE [options]     run one scenario: verdict, timeline, expectations\n"
    "  locksim check FILE...          run scenarios and check their `expect` lines\n"
    "  locksim demo [DIR]             the seed's GC-pause timeline, plain lease then fencing\n"
    "  locksim matrix FILE [options]  one fault script against every algorithm: a verdict table\n"
    "  locksim explore FILE [options] search a fault budget for a failure; shrink it to a file\n"
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

const char cli_usage_run[] =
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

const char cli_usage_check[] =
    "Usage: locksim check [--quiet] [--format text|json|tap|junit] FILE...\n"
    "\n"
    "Runs each scenario and checks its `expect` lines. text: one line per file and\n"
    "each failed expectation, then `scenarios: N passed, M failed`; json: one `run\n"
    "--format json` object per line (JSON Lines); tap: TAP version 13; junit: one\n"
    "JUnit XML testsuite, one testcase per file. Exit 1 if any expectation fails,\n"
    "65/66 if a file is malformed or missing (the worst code wins).\n";

const char cli_usage_matrix[] =
    "Usage: locksim matrix FILE [--algos NAME,NAME,...|all] [--format text|json|csv]\n"
    "                      [--seed N] [--set KEY=VALUE]...\n"
    "\n"
    "Plays the scenario's fault script against each algorithm (default: all built-in\n"
    "ones; a NAME may be a path to a user-written .so) and prints one row per algorithm:\n"
    "double entries, double-entry time, stale writes accepted/rejected, lost updates,\n"
    "wrong releases, stuck clients, verdict. An algorithm that cannot run the script\n"
    "(e.g. too many servers for it) says why in its row. The scenario's `expect` lines\n"
    "are not checked here. Exit 0 unless the file is missing (66) or malformed (65).\n";

const char cli_usage_hash[] =
    "Usage: locksim hash FILE...\n"
    "\n"
    "Prints `HASH  FILE` per scenario: FNV-1a 64 of the whole trace. Equal hashes\n"
    "mean byte-identical traces.\n";

const char cli_usage_demo[] =
    "Usage: locksim demo [DIR]\n"
    "\n"
    "Plays DIR/gc-pause-outlives-lease.lsim (a plain lease: A's late write is\n"
    "accepted) and DIR/fencing-rejects-stale-write.lsim (token 41 rejected after\n"
    "42), the seed's own timeline. DIR defaults to ./scenarios.\n";


int cmd_list(int argc, char **argv) {
    (void)argv;
    if (argc > 0) return cli_usage("list takes no arguments");
    int w = 9; /* strlen("./FILE.so") */
    for (int i = 0; lock_algo_at(i); i++)
        if ((int)strlen(lock_algo_at(i)->name) > w) w = (int)strlen(lock_algo_at(i)->name);
    printf("Lock algorithms:\n");
    for (int i = 0; lock_algo_at(i); i++)
        printf("  %-*s  %s\n", w, lock_algo_at(i)->name, lock_algo_at(i)->summary);
    printf("  %-*s  %s\n", w, "./FILE.so", "a user-written algorithm (docs/lock-interface.md)");
    char buf[4200], err[700], **files;
    int n;
    const char *dir = cli_scenario_dir(buf, sizeof buf);
    if (cli_find_scenarios(dir, &files, &n, err, sizeof err) != 0) return 0;
    if (n) printf("\nScenarios (%s):\n", dir);
    for (int i = 0; i < n; i++) {
        struct scenario s;
        struct scn_error e;
        scenario_init(&s);
        if (scenario_load(&s, files[i], &e) == 0) printf("  %-56s %s\n", files[i], s.title);
        scenario_close(&s);
        free(files[i]);
    }
    free(files);
    return 0;
}

/* docs/metrics.md, from the metric table (a test checks the file equals it). */
static int print_metrics(void) {
    static const char *const units[] = {"verdict", "count", "duration", "units of stock"};
    printf("# Metrics\n\n"
           "Every figure the checker reports, generated from the metric table in\n"
           "`sim/metric.h` by `locksim help metrics` (a test checks this page equals\n"
           "its output). The same names are used everywhere: `expect` lines use the\n"
           "expect word; JSON output (`run --format json`, `check --format json`,\n"
           "`matrix --format json`) uses the key, and so does every CSV header.\n"
           "Durations are true-time nanoseconds in JSON and CSV, and written with a\n"
           "unit (`1.5s`) in `expect` lines and text. `expect [no] SHORTHAND` means\n"
           "`>= 1` (or `== 0` with `no`); the plural of a shorthand works too.\n\n"
           "| expect word | shorthand | JSON key / CSV column | unit | what it measures |\n"
           "|---|---|---|---|---|\n");
    for (int m = 0; m < SCN_M_COUNT; m++) {
        const struct metric_info *mi = metric_info((enum scn_metric)m);
        printf("| `%s` | %s%s%s | `%s` | %s | %s |\n", mi->word, mi->shorthand ? "`" : "",
               mi->shorthand ? mi->shorthand : "", mi->shorthand ? "`" : "", mi->key, units[mi->unit], mi->desc);
    }
    printf("\nA run cut short (by `max-events`) decides no expectation: its outcome is\n"
           "TRUNCATED in every format, and `check` exits 1.\n");
    return 0;
}

int main(int argc, char **argv) {
    /* A closed pipe is a write error (exit 73), not a silent death. */
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2) {
        fputs(cli_usage_main, stderr);
        return cli_exit(LSIM_EUSAGE);
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        fputs(cli_usage_main, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("locksim %s (lock interface %u, trace format %d)\n", LOCKSIM_VERSION, LOCK_ABI_VERSION,
               TRACE_FORMAT_VERSION);
        return 0;
    }
    static const struct {
        const char *name;
        int (*fn)(int, char **);
        const char *usage;
    } cmds[] = {{"run", cmd_run, cli_usage_run},       {"check", cmd_check, cli_usage_check},
                {"hash", cmd_hash, cli_usage_hash},    {"matrix", cmd_matrix, cli_usage_matrix},
                {"list", cmd_list, cli_usage_main},    {"demo", cmd_demo, cli_usage_demo},
                {"explore", cmd_explore, cli_usage_explore}};
    int ncmds = (int)(sizeof cmds / sizeof cmds[0]);
    if (strcmp(cmd, "help") == 0) {
        const char *t = argc > 2 ? argv[2] : "";
        if (!t[0]) {
            fputs(cli_usage_main, stdout);
            return 0;
        }
        if (strcmp(t, "metrics") == 0) return print_metrics();
        for (int i = 0; i < ncmds; i++)
            if (strcmp(t, cmds[i].name) == 0) {
                fputs(cmds[i].usage, stdout);
                return 0;
            }
        return cli_usage("no help for '%s'", t);
    }
    for (int i = 0; i < ncmds; i++)
        if (strcmp(cmd, cmds[i].name) == 0) return cmds[i].fn(argc - 2, argv + 2);
    return cli_usage("unknown command '%s'", cmd);
}
