/* locksim: the command line. main() picks the command; each command is a
 * cmd_*.c file over the run API (run/run.h) and the report writers
 * (run/report.h). Exit statuses come from the error table (sim/error.h). */
#include <errno.h>
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
        "  locksim check FILE|DIR...      run scenarios and check their `expect` lines\n"
        "  locksim batch PATH... [opts]   many scenarios x seeds x algorithms on N processes\n"
        "  locksim sweep FILE --vary K=.. a grid of --set values: outcome per cell, heatmap\n"
        "  locksim merge FILE.jsonl...    the shards of a batch or sweep (--shard K/N) as one run\n"
        "  locksim check-trace FILE.jsonl the checker over a recorded trace: the verdict\n"
        "  locksim diff A.jsonl B.jsonl   the first event where two traces diverge\n"
        "  locksim demo [DIR]             the seed's GC-pause timeline, plain lease then fencing\n"
        "  locksim matrix FILE [options]  one fault script against every algorithm: a verdict table\n"
        "  locksim render FILE -o OUT.png one scenario drawn as a PNG or SVG picture (no display)\n"
        "  locksim view FILE [options]    the timeline in a window: play, step, zoom, quiz\n"
        "  locksim explore FILE [options] search a fault budget for a failure; shrink it to a file\n"
        "  locksim real FILE [options]    play it against a real Redis: real and simulated verdicts\n"
        "  locksim list                   lock algorithms (and scenarios in ./scenarios)\n"
        "  locksim hash FILE...           trace hash of each scenario (determinism checks)\n"
        "  locksim help [COMMAND]         this text, or one command's\n"
        "  locksim --version\n"
        "\n"
        "Exit codes (sim/error.h):\n"
        "%EXITS%"
        "\n"
        "`locksim help metrics` lists every figure of the report (docs/metrics.md);\n"
        "`locksim help formats` every output format and the commands that offer it.\n"
        "Every command: --name=value is --name value; -h/--help prints its help; -q/--quiet\n"
        "keeps progress and summaries off stderr (errors still print); -v/--verbose lists every\n"
        "failed run of a batch with its replay command; -- ends the options (a file named\n"
        "-x.lsim after it is a file).\n"
        "Environment: NO_COLOR, or TERM=dumb, disables colour, as --no-color does.\n";

const char cli_usage_run[] = "Usage: locksim run FILE|- [options]   (- reads the scenario from standard input)\n"
                             "\n"
                             "Plays one scenario and prints the verdict (SAFE, UNSAFE or STUCK) with its\n"
                             "details, a timeline on the true-time axis, the scenario's expectations and a\n"
                             "one-line replay command. Exit 1 when an expectation fails.\n"
                             "\n"
                             "The `expect` lines are for the scenario as written: with another seed, any\n"
                             "--set or another algorithm they are not applicable (shown n/a with what was\n"
                             "measured, outcome NOT-APPLICABLE in JSON) and decide nothing, unless --expect.\n"
                             "\n"
                             "Options:\n"
                             "  --seed N            PRNG seed (overrides the scenario's `seed`)\n"
                             "  --set KEY=VALUE     override a parameter: ttl=10s, stock=2, fencing=on,\n"
                             "                      latency=5ms, duration=60s, lock.release=del, ... (repeatable)\n"
                             "  --algo NAME|PATH    swap the lock algorithm, keeping the fault script; a PATH\n"
                             "                      to a .so loads a user-written algorithm (docs/lock-interface.md)\n"
                             "  --trace FILE.jsonl  write the whole trace as JSON Lines (docs/trace-format.md);\n"
                             "                      - is standard output (the report then goes to stderr)\n"
                             "  --trace-format jsonl|chrome  chrome: Chrome Trace Event JSON instead, which\n"
                             "                      opens in Perfetto (ui.perfetto.dev) or chrome://tracing\n"
                             "  --format text|json  report format on stdout (default text)\n"
                             "  --narrate           add a plain-words account of the run (with --format json:\n"
                             "                      a \"narration\" array of lines)\n"
                             "  --no-timeline       leave out the timeline\n"
                             "  --expect            judge the expect lines also under --seed, --set or --algo\n"
                             "  --width N           timeline width in columns (default: terminal, else 100)\n"
                             "  --no-color          plain ASCII (also when NO_COLOR is set or not a terminal)\n"
                             "  --time-limit S      stop a run still going after S seconds of wall time (default\n"
                             "                      600; 0 = none): a plugin callback that never returns, exit 70\n";

const char cli_usage_check[] = "Usage: locksim check [--quiet] [--format text|json|tap|junit] [--seed N]\n"
                               "                     [--set KEY=VALUE]... [--algo NAME|PATH] [--expect] [--update]\n"
                               "                     [--golden DIR] [--no-golden] FILE|DIR...\n"
                               "\n"
                               "Runs each scenario (a DIR stands for every *.lsim below it) and checks its\n"
                               "`expect` lines. text: one line per file and each failed expectation, then\n"
                               "`scenarios: N passed, M failed`; json: one `run --format json` object per line\n"
                               "(JSON Lines; a file that cannot run is an object with \"outcome\":\"ERROR\");\n"
                               "tap: TAP version 13; junit: JUnit XML, a testsuite per file, a testcase per\n"
                               "run (classname scenarios.NAME, name \"ALGO seed=N [KEY=VALUE...]\"), with\n"
                               "times, failures and errors. A run cut short by max-events is TRUNCATED:\n"
                               "nothing is decided and it fails. Exit 1 if any expectation fails or a run is\n"
                               "cut short, 65/66 if a file is malformed or missing (the worst code wins).\n"
                               "With --seed (another than a file's own), --set or another --algo, the expect\n"
                               "lines are not applicable: each file is n/a (NOT-APPLICABLE in json, # SKIP in\n"
                               "tap, <skipped> in junit) and exits 0; --expect judges them anyway.\n"
                               "\n"
                               "Golden traces: the trace of DIR/NAME.lsim is also compared with its recorded\n"
                               "one, DIR/golden/NAME.jsonl (or NAME.jsonl in --golden DIR), by digest; when\n"
                               "they differ, the first divergent event is shown with context and the file\n"
                               "fails. A scenario whose folder has no golden/ is not compared. --update writes\n"
                               "the golden traces that changed or are missing and prints which, only when\n"
                               "every file passes its expect lines: otherwise it writes nothing, names each\n"
                               "failing expectation (FILE:LINE:COL) and exits 1. Not with --seed, --set or\n"
                               "--algo (golden traces are of the scenarios as written).\n"
                               "With --format json, golden failures are reported on stderr.\n";

const char cli_usage_batch[] =
        "Usage: locksim batch PATH... [--seeds LIST] [--algos NAME,...|all] [--set KEY=VALUE]...\n"
        "                     [--jobs N] [--format table|jsonl|csv|junit|tap] [-o|--out FILE]\n"
        "                     [--shard K/N] [--time-limit S] [--expect]\n"
        "\n"
        "Runs every scenario (folders are searched for *.lsim) for every seed of LIST\n"
        "(default: the scenario's own) and every algorithm named (default: the\n"
        "scenario's own; `all` = every built-in one; a path loads a .so), judging each\n"
        "run by its `expect` lines. N worker processes (default: the number of cores)\n"
        "share the list; results come out in list order, so the output does not depend\n"
        "on --jobs. A worker that crashes (a faulty plugin) fails the run it was in with\n"
        "the signal, and the batch goes on. An algorithm of --algos that cannot run a\n"
        "scenario's script (more lock servers than it runs on) is a skipped run (SKIP,\n"
        "said why), not a failure. On a terminal, progress goes to stderr; at the end a\n"
        "summary goes there too, always: runs, passed, failed by reason, skipped, and the\n"
        "first failures with the command that replays each.\n"
        "\n"
        "The expect lines are for the scenario as written: a run at another seed than\n"
        "the file's, with a --set or another algorithm is NOT-APPLICABLE (its verdict\n"
        "and figures reported, nothing judged, counted apart; # SKIP in tap, <skipped>\n"
        "in junit). --expect judges them in every run.\n"
        "\n"
        "Formats: table (one line per scenario and algorithm, then `N passed, M failed`),\n"
        "jsonl (one object per run: scenario, algorithm, seed, overrides, outcome, every\n"
        "metric, trace_hash), csv (the same columns, with a header), junit (a testsuite\n"
        "per scenario file, classname FOLDER.STEM, name \"ALGO seed=N [KEY=VALUE...]\",\n"
        "unique per run), tap.\n"
        "-o/--out FILE is written atomically. Ctrl-C (or SIGTERM, SIGHUP) stops the workers,\n"
        "reports what finished on stderr, leaves any old --out file as it was and exits\n"
        "130; a write that fails (a closed pipe, a full disk) stops the runs too: 73.\n"
        "--time-limit S (default 600, 0 = none) fails a run still going after S seconds\n"
        "(a plugin that never returns): its worker is stopped and the batch goes on.\n"
        "--shard K/N runs only the K-th of N contiguous slices of the run list (the same\n"
        "slices whatever --jobs) and writes shard JSON Lines; `locksim merge` turns the N\n"
        "shard files into any format above, identical to the unsharded run's bytes.\n"
        "--seeds LIST: a seed N, a range A..B (A <= B), or a list of them run in the\n"
        "order written: --seeds 1..3,7,10..12 (seeds 0 to 2147483647, at most 1000\n"
        "items, no seed listed twice).\n"
        "Exit: 0 every run passed (or was not applicable or skipped), 1 one failed or\n"
        "was cut short, else the worst error.\n";

const char cli_usage_merge[] =
        "Usage: locksim merge SHARD.jsonl... [--format FMT] [-o|--out FILE] [--svg OUT.svg] [--png OUT.png]\n"
        "\n"
        "Combines the shard files of one `batch ... --shard K/N` or `sweep ... --shard K/N`\n"
        "run (every K of 1..N once, in any order) into the output the unsharded command\n"
        "prints: the same bytes for every format (batch: table, jsonl, csv, junit, tap;\n"
        "sweep: csv, jsonl, and --svg or --png for the heatmap), and the same exit status.\n"
        "A shard file is data (docs/regression.md, \"Past one machine\"): merge needs only\n"
        "the shards, reads their run list and results as values, and never opens a path,\n"
        "loads an algorithm or takes an option a shard names. A missing, repeated,\n"
        "truncated, forged or foreign shard is an error (64 or 65, with file:line:col)\n"
        "and nothing is written.\n";

const char cli_usage_check_trace[] =
        "Usage: locksim check-trace FILE.jsonl [--scenario FILE.lsim [--expect]]\n"
        "                           [--purpose correctness|efficiency] [--stuck-after DUR]\n"
        "                           [--format text|json] [--no-color]\n"
        "\n"
        "Runs the checker over a recorded trace (docs/trace-format.md; from `locksim run\n"
        "--trace` or from a real system) and prints the verdict block `run` prints, or\n"
        "one JSON object (the `batch --format jsonl` record). Findings already in the\n"
        "file are recomputed. The file does not say the scenario's purpose or its\n"
        "stuck-after: they are the defaults, or the scenario's (--scenario), or given.\n"
        "With --scenario, its `expect` lines are judged against the trace too (each\n"
        "with its measured value; a client they name is the trace's node of that name);\n"
        "for a trace of another seed or algorithm they are not applicable, unless\n"
        "--expect. Exit 0 when the trace was checked (and its expectations hold), 1 when\n"
        "one fails or the trace was cut short, 65 if malformed, 66 if unreadable.\n";

const char cli_usage_sweep[] =
        "Usage: locksim sweep FILE --vary KEY=A..B/STEP|KEY=V1,V2,... [--vary KEY=...]...\n"
        "                     [--seeds LIST] [--algos NAME,...|all] [--set KEY=VALUE]... [--jobs N]\n"
        "                     [--format csv|jsonl] [-o|--out FILE] [--svg OUT.svg] [--png OUT.png]\n"
        "                     [--shard K/N] [--time-limit S]\n"
        "\n"
        "Runs the scenario at every point of a grid of --set values (one to four keys;\n"
        "a range of integers or durations, e.g. lock.ttl=5s..60s/5s, or a list), for\n"
        "every seed of --seeds (N, A..B or a list: 1..3,7, as batch) and algorithm\n"
        "asked, on N worker processes (as batch). Writes one record per cell and\n"
        "algorithm, with a column per key: runs, and how many were safe, double-entry\n"
        "(two clients inside, no damage), damage (a stale write accepted or an update\n"
        "lost), stuck, error; the unsafe fraction; the class (or mixed). --svg draws a\n"
        "heatmap of the classes, one panel per algorithm on shared axes (x the first\n"
        "key, y the second). A third key draws, per algorithm, a panel per value of it\n"
        "titled KEY3=V (small multiples, wrapped into rows), a fourth a section of\n"
        "those per value titled KEY4=V, all under one legend. A cell whose\n"
        "seeds disagree mixes their colours and shows the unsafe percentage. --png\n"
        "draws the same heatmap as a PNG image (both may be given). The picture is\n"
        "titled with the scenario's title line, its file name under it; the classes'\n"
        "colours (light blue safe, yellow double-entry, red damage, purple stuck, black\n"
        "error) stay apart with any common colour blindness. A list of words is\n"
        "labelled at every value, numbers may be thinned but keep the first and last.\n"
        "--shard K/N runs the K-th of N slices of the runs and writes shard JSON Lines;\n"
        "`locksim merge` makes the CSV, JSON Lines, SVG and PNG of the whole grid from them.\n"
        "Expectations are not judged (a cell is another experiment than the file as\n"
        "written). Exit 0, or the worst error of a run (130 on Ctrl-C).\n";

const char cli_usage_diff[] = "Usage: locksim diff A.jsonl B.jsonl [--context N]\n"
                              "\n"
                              "Compares two traces. First what changed in meaning: each trace is judged\n"
                              "afresh by the checker (as a correctness scenario), and the verdict and every\n"
                              "figure that differs are listed in their units (\"lost-updates  1 -> 0\"), then\n"
                              "who held the lock when (each client's acquisitions paired in order: a time or\n"
                              "token that moved), then each client's writes and what the resource did with\n"
                              "them. Then, event by event (time, node, kind, fields), the first event where\n"
                              "they diverge, with N events of context (default 3) before it and after it in\n"
                              "each. Exit 0 when the traces are the same, 1 when they differ, 65/66 if a\n"
                              "file is malformed or unreadable.\n";

const char cli_usage_matrix[] = "Usage: locksim matrix FILE [--algos NAME,NAME,...|all] [--format text|json|csv]\n"
                                "                      [--seed N] [--set KEY=VALUE]... [--time-limit S]\n"
                                "\n"
                                "Plays the scenario's fault script against each algorithm (default: all built-in\n"
                                "ones; a NAME may be a path to a user-written .so) and prints one row per algorithm:\n"
                                "double entries, double-entry time, stale writes accepted/rejected, lost updates,\n"
                                "wrong releases, stuck clients, verdict. An algorithm that cannot run the script\n"
                                "(e.g. too many servers for it) says why in its row; a plugin runs first in a\n"
                                "process of its own, so one that crashes, or runs past --time-limit S (default\n"
                                "600 s), fails its row and not the matrix. The scenario's `expect` lines\n"
                                "are not checked here. Exit 0 unless the file is missing (66) or malformed (65).\n"
                                "  --render OUT.png|OUT.svg  also draw one panel per algorithm, stacked on one time\n"
                                "                      axis (- = PNG on standard output, then no table is printed)\n";

const char cli_usage_render[] =
        "Usage: locksim render FILE -o|--out OUT.png|OUT.svg|OUT.gif [--width W] [--height H]\n"
        "                      [--from T] [--to T] [--at T] [--linear] [--fps N] [--duration T]\n"
        "                      [--algo A] [--seed N] [--set KEY=VALUE]... [--trace REC.jsonl]...\n"
        "       locksim render REC.jsonl -o OUT.png|OUT.svg|OUT.gif [--trace REC2.jsonl]...\n"
        "\n"
        "Runs the scenario and draws its timeline with the verdict banner (title,\n"
        "algorithm, verdict, seed, replay command) as a PNG or an SVG, chosen by the\n"
        "file's extension (or --format png|svg; -o - writes PNG to standard output).\n"
        "Needs no display. The same scenario and seed give the same bytes.\n"
        "  --trace REC.jsonl       a recorded run (locksim real --trace; up to 7) drawn as a\n"
        "                          panel under the simulated one, on the same time axis, its\n"
        "                          banner saying what it was recorded against, at what scale,\n"
        "                          and its verdict from the checker (as check-trace judges it);\n"
        "                          refused, naming the difference, when its nodes are not the\n"
        "                          scenario's; the picture is as tall as the panels unless --height\n"
        "A FILE whose name ends in .jsonl is a trace, drawn as it was recorded: no run,\n"
        "no --seed, --set or --algo.\n"
        "  --width W, --height H   picture size in pixels (default 1280 x 720), exactly: when\n"
        "                          the content is taller, lanes are drawn tighter, then the legend\n"
        "                          is left out (saying so); --height 0 = as tall as the content\n"
        "  --from T, --to T        the time window shown (e.g. --from 30s --to 31s)\n"
        "  --at T                  the run as it stood at T, a slide of its story: only what had\n"
        "                          happened by then, on the whole run's axis; the banner says\n"
        "                          \"running\" until the run is decided, then what decided it\n"
        "  --linear                true time to one scale: idle stretches at their full length\n"
        "                          (by default the whole run draws a stretch with no event for\n"
        "                          a fifth of it short, marked <-23s>; --from/--to are linear)\n"
        "OUT.gif: the reveal as an animation for slides, looping: each frame the picture\n"
        "--at draws, from --from (default 0) to --to (default the finished picture),\n"
        "spaced evenly along the drawn time axis, plus a frame held 1 s at each decisive\n"
        "event (a grant after an expiry, a late write, a violation); the last held 3 s;\n"
        "lanes drawn tighter in every frame when the finished picture needs it to fit.\n"
        "  --fps N                 frames a second of the animation, 1 to 50 (default 4)\n"
        "  --duration T            how long the sweep plays, up to 300s (default 10s): fps x\n"
        "                          duration frames, at most 600 with the decisive ones\n";

const char cli_usage_view[] =
        "Usage: locksim view FILE [FILE...] [--algos A,B,...] [--quiz] [--show-all] [--shots DIR]\n"
        "                    [--width W] [--height H] [--scale S] [--seed N] [--set KEY=VALUE]...\n"
        "                    [--trace REC.jsonl]...\n"
        "\n"
        "Opens the timeline in a window (SDL2) and reveals the run as it plays: only what\n"
        "happened by the cursor is drawn, the verdict says \"running\" until the run has\n"
        "decided it, and every event passed is narrated (the last three sentences below,\n"
        "Up/Down scroll back). Keys: space play/pause, [ ] slower/faster, Right/Left\n"
        "next/previous event, Home/End start/end, a the whole run at once, + - or the\n"
        "wheel zoom, drag to pan, drag on the time axis to scrub, 0 or f fit, n next\n"
        "violation, r reveal (quiz), s screenshot, ? or F1 help, F11 full screen, q or\n"
        "Esc quit. The window reloads when FILE changes on disk.\n"
        "Break it by clicking: a right click on a client's or a server's lane pauses that\n"
        "node there for half the run, a right drag along it for the stretch dragged over\n"
        "(shift: crashes it; ctrl: restarts a crashed node; alt: steps its clock forward\n"
        "by half the run or the drag, alt+shift: back); a middle-button\n"
        "drag from one lane to another cuts their link (a middle click heals every link);\n"
        "the scenario so edited is saved as a new file, locksim-edit-N.lsim in the\n"
        "--shots folder (FILE is never changed), and played again; u undoes the last edit.\n"
        "Knobs: each `param NAME=VALUE range=MIN..MAX` of the scenario is listed under\n"
        "the timeline; k picks one, < and > turn it a step (a 50th of its range), and the\n"
        "run is played again with the same seed, the cursor kept; the change is listed\n"
        "(\"pause=25s (was 27s)\") and saved as a new file as the clicked faults are\n"
        "(a --set of that param no longer applies).\n"
        "Text scale: Ctrl+= and Ctrl+- make the text, lanes and bars bigger or smaller\n"
        "by a quarter, Ctrl+0 returns to the scale the window opened with.\n"
        "  FILE FILE...    one panel per file (failover vs failover-with-wait), on one time\n"
        "                  axis and one cursor; the first file reloads when it changes, and\n"
        "                  right clicks add faults only when one file is shown\n"
        "  --algos A,B     one panel per algorithm, sharing the faults and the cursor\n"
        "  --trace REC.jsonl  a recorded run (locksim real --trace) as a panel under the\n"
        "                  simulated ones, on their time axis and cursor, judged by the\n"
        "                  checker; read once: a reload plays the scenario again and keeps it\n"
        "  --quiz          stop before each decisive event and ask what happens next\n"
        "  --show-all      the whole run at once, as a finished picture (key a)\n"
        "  --shots DIR     screenshots (locksim-shot-N.png) and edits (locksim-edit-N.lsim)\n"
        "                  go there; default: the current folder\n"
        "  --width W, --height H   the window's size at start (default 1280 x 800 at the\n"
        "                  text scale, within the screen)\n"
        "  --scale S       text scale, 0.75 to 3 (default: from the screen, 1 at 720 lines\n"
        "                  or 96 dpi, 1.5 on a 1920x1080 projector, 2 at 1440 lines), at\n"
        "                  most what leaves the timeline two thirds of the window (2.25 at 1080)\n"
        "Without a display it exits 69: draw a picture with locksim render FILE -o out.png.\n";

const char cli_usage_hash[] = "Usage: locksim hash [--seed N] [--set KEY=VALUE]... [--algo NAME|PATH] FILE...\n"
                              "\n"
                              "Prints `HASH  FILE` per scenario: the 64-bit digest of the whole trace. Equal hashes\n"
                              "mean byte-identical traces; `check --format json` and `run --format json`\n"
                              "report the same digest as trace_hash.\n";

const char cli_usage_demo[] = "Usage: locksim demo [DIR]\n"
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
    for (int i = 0; lock_algo_at(i); i++) printf("  %-*s  %s\n", w, lock_algo_at(i)->name, lock_algo_at(i)->summary);
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

/* "  64  text..." wrapped at 80 columns, continued under the text. */
static void print_wrapped(FILE *f, int status, const char *text) {
    fprintf(f, "  %-3d ", status);
    for (int first = 1; *text; first = 0) {
        size_t n = strlen(text);
        if (n > 74) {
            n = 74;
            while (n > 0 && text[n] != ' ') n--;
            if (n == 0) n = strcspn(text, " ");
        }
        fprintf(f, "%s%.*s\n", first ? "" : "      ", (int)n, text);
        text += n;
        while (*text == ' ') text++;
    }
}

/* The main usage, its exit table made from LSIM_EXIT_MAP where it says %EXITS%. */
static int print_main_usage(FILE *f) {
    const char *at = strstr(cli_usage_main, "%EXITS%");
    fprintf(f, "%.*s", (int)(at - cli_usage_main), cli_usage_main);
#define EXIT_ROW_(status, meaning) print_wrapped(f, status, meaning);
    LSIM_EXIT_MAP(EXIT_ROW_)
#undef EXIT_ROW_
    fputs(at + 7, f);
    return 0;
}

/* A command's status, unless its standard output could not be written:
 * then exit 73 with the reason, whatever the command returned (a command
 * that said so itself already returns 73). */
static int stdout_checked(int st) {
    errno = 0;
    int flushed = fflush(stdout) == 0;
    if ((flushed && !ferror(stdout)) || st == cli_exit(LSIM_EOUTPUT)) return st;
    char msg[160];
    snprintf(msg, sizeof msg, "cannot write to standard output: %s", strerror(!flushed && errno ? errno : EIO));
    return cli_fail(LSIM_EOUTPUT, msg);
}

const struct cli_command cli_commands[] = {
        {"run", cmd_run, cli_usage_run, cli_tables_run},
        {"check", cmd_check, cli_usage_check, cli_tables_check},
        {"hash", cmd_hash, cli_usage_hash, NULL},
        {"matrix", cmd_matrix, cli_usage_matrix, cli_tables_matrix},
        {"list", cmd_list, cli_usage_main, NULL},
        {"demo", cmd_demo, cli_usage_demo, NULL},
        {"batch", cmd_batch, cli_usage_batch, cli_tables_batch},
        {"check-trace", cmd_check_trace, cli_usage_check_trace, cli_tables_check_trace},
        {"diff", cmd_diff, cli_usage_diff, cli_tables_diff},
        {"sweep", cmd_sweep, cli_usage_sweep, cli_tables_sweep},
        {"render", cmd_render, cli_usage_render, cli_tables_render},
        {"view", cmd_view, cli_usage_view, cli_tables_view},
        {"explore", cmd_explore, cli_usage_explore, cli_tables_explore},
        {"merge", cmd_merge, cli_usage_merge, cli_tables_merge},
        {"real", cmd_real, cli_usage_real, cli_tables_real},
        {NULL, NULL, NULL, NULL}};

static int dispatch(int argc, char **argv);

int main(int argc, char **argv) {
    /* A closed pipe is a write error (exit 73), not a silent death. */
    signal(SIGPIPE, SIG_IGN);
    return stdout_checked(dispatch(argc, argv));
}

static int dispatch(int argc, char **argv) {
    if (argc < 2) {
        print_main_usage(stderr);
        return cli_exit(LSIM_EUSAGE);
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) return print_main_usage(stdout);
    if (strcmp(cmd, "--version") == 0) {
        printf("locksim %s (lock interface %u, trace format %d)\n", LOCKSIM_VERSION, LOCK_ABI_VERSION,
               TRACE_FORMAT_VERSION);
        return 0;
    }
    if (strcmp(cmd, "help") == 0) {
        const char *t = argc > 2 ? argv[2] : "";
        if (!t[0]) return print_main_usage(stdout);
        if (strcmp(t, "metrics") == 0) return print_metrics();
        if (strcmp(t, "formats") == 0) return cli_print_formats();
        for (const struct cli_command *c = cli_commands; c->name; c++)
            if (strcmp(t, c->name) == 0) {
                if (c->usage == cli_usage_main) return print_main_usage(stdout);
                fputs(c->usage, stdout);
                return 0;
            }
        return cli_usage("no help for '%s'", t);
    }
    for (const struct cli_command *c = cli_commands; c->name; c++)
        if (strcmp(cmd, c->name) == 0) {
            int n = argc - 2, st;
            char **v = argv + 2;
            if (cli_args_normalize(c, &n, &v, &st) != 0) return st;
            return c->fn(n, v);
        }
    return cli_usage("unknown command '%s'", cmd);
}
