/* CLI tests: the locksim binary as a user runs it. Exit codes, error
 * messages with file:line:col, the replay line, --set, --algo, --trace,
 * JSON output and the plugin example. LOCKSIM_BIN names the binary. */
#include "cli_util.h"
#include "metric.h"

/* The seed scenario: UNSAFE verdict, expectations met, exit 0, replay line. */
static void test_run_seed_scenario(void **state) {
    (void)state;
    struct result *r = run("run scenarios/gc-pause-outlives-lease.lsim --width 100");
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "Verdict: UNSAFE"));
    assert_non_null(strstr(r->out, "lost updates     1"));
    assert_non_null(strstr(r->out, "Replay: locksim run scenarios/gc-pause-outlives-lease.lsim --seed 1"));
    assert_null(strstr(r->out, "\033[")); /* NO_COLOR: plain ASCII */
}

/* Absolute writes (write set=V) read as such wherever a run is shown: the
 * write list says "set", the repeat says it changed nothing, the report
 * counts it, and the narration says writing it again changes nothing. */
static void test_absolute_writes_shown(void **state) {
    (void)state;
    struct result *r = run("run scenarios/efficiency-lock-idempotent-write.lsim --narrate");
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "W t=8.003s  A write no token set 1 accepted late: before any operation of B\n"));
    assert_non_null(strstr(r->out, "W t=9.003s  B write no token set 1 accepted: the value already held, no change\n"));
    assert_non_null(strstr(r->out, "  repeated writes  1 (absolute writes of the value already held: done again, "
                                   "no change)\n"));
    assert_non_null(strstr(r->out, "R accepts B's absolute write of 1 (no token): writing it again changes nothing"));
    r = run("run scenarios/efficiency-lock-counter-write.lsim");
    assert_null(strstr(r->out, "repeated writes"));
    assert_non_null(strstr(r->out, "write no token value 9"));
}

/* The consensus servers' leadership, drawn from their notes (lock.h's
 * LOCK_NOTE_LEADER / LOCK_NOTE_STEPS_DOWN): in the partitioned-leader story
 * S5 leads term 2 through the partition, S4 term 19 after the heal, and the
 * SVG carries the words, so pictures can be searched. */
static void test_consensus_leaders_drawn(void **state) {
    (void)state;
    char svg[600];
    snprintf(svg, sizeof svg, "%s", sp("locksim_leaders.svg"));
    struct result *r = run(fmt("render scenarios/consensus-leader-partitioned.lsim -o %s", svg));
    assert_int_equal(r->code, 0);
    static char buf[1 << 20];
    slurp(svg, buf, sizeof buf);
    assert_non_null(strstr(buf, ">leader, term 2<"));
    assert_non_null(strstr(buf, ">leader, term 19<"));
    assert_non_null(strstr(buf, "leader of the lock service, and its term"));
    assert_non_null(strstr(buf, "partition"));
    remove(svg);
}

/* Every command reads its options with getopt_long from its tables (cli/cli.c
 * holds the shared ones, cli/fanout.c those of batch, sweep and merge): a missing value names the option, an
 * unknown one too (a short one says where a file named -x goes), a value may
 * begin with '-', and the options come before, between or after the files. */
static void test_option_tables(void **state) {
    (void)state;
    struct result *r = run("run scenarios/gc-pause-outlives-lease.lsim --trace");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "locksim: --trace needs a value"));
    r = run("run scenarios/gc-pause-outlives-lease.lsim --bogus");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "unknown or incomplete option '--bogus' for run"));
    r = run("run -x.lsim");
    assert_non_null(strstr(r->err, "unknown option '-x' for run (a file whose name starts with '-' goes after --)"));
    r = run("run scenarios/gc-pause-outlives-lease.lsim --set -x=1");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "unknown key '-x'")); /* the value reached the scenario, not the parser */
    r = run("hash --seed=3 scenarios/gc-pause-outlives-lease.lsim scenarios/fencing-rejects-stale-write.lsim");
    assert_int_equal(r->code, 0);
    static char once[sizeof r->out];
    memcpy(once, r->out, sizeof once);
    r = run("hash scenarios/gc-pause-outlives-lease.lsim --seed 3 scenarios/fencing-rejects-stale-write.lsim");
    assert_string_equal(r->out, once);
    r = run("hash scenarios/gc-pause-outlives-lease.lsim --jobs 2");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "unknown or incomplete option '--jobs' for hash"));
    r = run("demo --seed 2");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "'--seed' for demo"));
    r = run("diff --context");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "locksim: --context needs a value"));
    r = run("check-trace a.jsonl b.jsonl");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "check-trace takes one trace file; 'b.jsonl' is a second"));
    r = run("render scenarios/gc-pause-outlives-lease.lsim --format svg -o -"); /* -o -: standard output */
    assert_int_equal(r->code, 0);
    static char svg[sizeof r->out];
    memcpy(svg, r->out, sizeof svg);
    assert_non_null(strstr(svg, "<svg"));
    r = run("render --output=- --format=svg scenarios/gc-pause-outlives-lease.lsim");
    assert_string_equal(r->out, svg);
    r = run("render scenarios/gc-pause-outlives-lease.lsim -o");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "locksim: -o needs a value"));
    r = run("real scenarios/gc-pause-outlives-lease.lsim --repeat");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "locksim: --repeat needs a value"));
    /* batch, sweep and merge read tables too: --seeds=1..3 is --seeds 1..3
     * byte for byte, an abbreviation is the option it abbreviates. */
    r = run("batch scenarios/ttl-with-headroom.lsim --seeds 1..3 --format jsonl -q");
    assert_int_equal(r->code, 0);
    memcpy(once, r->out, sizeof once);
    assert_non_null(strstr(once, "\"seed\":3,"));
    r = run("batch --seeds=1..3 --format=jsonl -q scenarios/ttl-with-headroom.lsim");
    assert_string_equal(r->out, once);
    r = run("batch scenarios/ttl-with-headroom.lsim --seeds 1..3 --form=jsonl -q");
    assert_string_equal(r->out, once);
    r = run("batch scenarios/ttl-with-headroom.lsim --see 1..3"); /* --seed or --seeds? */
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "unknown or incomplete option '--see' for batch"));
    static const char *const fan[] = {"sweep", "merge"};
    for (int k = 0; k < 2; k++) {
        r = run(fmt("%s -h", fan[k]));
        assert_int_equal(r->code, 0);
        assert_non_null(strstr(r->out, fmt("Usage: locksim %s ", fan[k])));
        assert_string_equal(r->err, "");
        r = run(fmt("%s x.jsonl --bogus", fan[k]));
        assert_int_equal(r->code, 64);
        assert_non_null(strstr(r->err, fmt("unknown or incomplete option '--bogus' for %s", fan[k])));
        r = run(fmt("%s x.jsonl --svg", fan[k]));
        assert_int_equal(r->code, 64);
        assert_non_null(strstr(r->err, "locksim: --svg needs a value"));
    }
    r = run("batch scenarios/ttl-with-headroom.lsim --jobs");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "locksim: --jobs needs a value"));
    r = run("sweep scenarios/ttl-with-headroom.lsim --vary");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "locksim: --vary needs a value"));
    r = run("batch scenarios/ttl-with-headroom.lsim --expect=yes");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "--expect takes no value (found '--expect=yes')"));
    r = run("merge x.jsonl --seeds 1..2"); /* merge takes no run options: the shards say them */
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "unknown or incomplete option '--seeds' for merge"));
    r = run("sweep - --vary pause=1s,2s");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "sweep reads a scenario file, not standard input"));
}

/* --seeds of batch and sweep: N, A..B, or a list of them in the order
 * written (1..3,7,10..12); an empty item, a range backwards, a seed listed
 * twice (also inside a range) or more than 1000 items: 64, saying which. */
static void test_seed_lists(void **state) {
    (void)state;
    struct result *r = run("batch scenarios/ttl-with-headroom.lsim --seeds 10..12,1..3,7 --format csv -q");
    assert_int_equal(r->code, 0);
    static const int order[] = {10, 11, 12, 1, 2, 3, 7};
    const char *p = r->out;
    for (int k = 0; k < 7; k++) {
        p = strstr(p, fmt("\"lease\",%d,", order[k]));
        assert_non_null(p);
    }
    assert_null(strstr(r->out, "\"lease\",4,"));
    r = run("batch scenarios/ttl-with-headroom.lsim --seeds 1..3,7,10..12");
    assert_non_null(strstr(r->out, "lease  seeds 1..3,7,10..12: 7 runs, 1 passed"));
    r = run("batch scenarios/ttl-with-headroom.lsim --seeds 5"); /* one item: as before */
    assert_non_null(strstr(r->out, "lease  seeds 5..5: 1 run,"));
    r = run("sweep scenarios/ttl-with-headroom.lsim --vary lock.ttl=1s --seeds 2,9");
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "\"1s\",\"lease\",2,"));
    static const struct {
        const char *seeds, *says;
    } bad[] = {
            {"1,,2", "--seeds has an empty item in '1,,2'; write N, A..B or a list: 1..3,7,10..12"},
            {"1,", "--seeds has an empty item in '1,'"},
            {"5..1", "'5..1' is neither"},
            {"1..3,x", "--seeds takes seeds N or ranges A..B (A <= B, from 0 to 2147483647), alone or in a list "
                       "(1..3,7,10..12); 'x' is neither"},
            {"2147483648", "'2147483648' is neither"},
            {"1,5,9,5", "--seeds 1,5,9,5: seed 5 is listed twice"},
            {"1..10,7", "--seeds 1..10,7: seed 7 is listed twice"},
            {"8..12,1..9", "seed 8 is listed twice"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        r = run(fmt("batch scenarios/ttl-with-headroom.lsim --seeds %s", bad[k].seeds));
        assert_int_equal(r->code, 64);
        if (!strstr(r->err, bad[k].says)) fprintf(stderr, "--seeds %s: %s", bad[k].seeds, r->err);
        assert_non_null(strstr(r->err, bad[k].says));
        assert_int_equal(
                run(fmt("sweep scenarios/ttl-with-headroom.lsim --vary lock.ttl=1s --seeds %s", bad[k].seeds))->code,
                64);
    }
    static char many[8000];
    size_t l = 0;
    for (int k = 0; k < 1001; k++) l += (size_t)snprintf(many + l, sizeof many - l, "%s%d", k ? "," : "", k);
    r = run(fmt("batch scenarios/ttl-with-headroom.lsim --seeds %s", many));
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "--seeds lists more than 1000 items; a range A..B is one item"));
    assert_non_null(strstr(run("help batch")->out, "--seeds 1..3,7,10..12 (seeds 0 to 2147483647, at most 1000\n"));
    assert_non_null(strstr(run("help sweep")->out, "every seed of --seeds (N, A..B or a list: 1..3,7, as batch)"));
    r = run("batch scenarios/ttl-with-headroom.lsim --seeds 1,2 --seed 3");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "batch takes --seeds LIST or --seed N, not both"));
}

/* The conventions every command shares (cli/args.c): --name=value is
 * --name value byte for byte; -h and --help after any command print its
 * help and exit 0; `--` ends the options, so a file named -x.lsim runs;
 * -q leaves a passing batch's stderr empty; -v lists every failed run with
 * its replay command; a flag given a value is refused; TERM=dumb gets no
 * colour on a terminal (run through script(1), which gives it one). */
static void test_command_line_conventions(void **state) {
    (void)state;
    struct result *r = run("run scenarios/gc-pause-outlives-lease.lsim --seed 7 --format json");
    assert_int_equal(r->code, 0);
    static char once[sizeof r->out];
    memcpy(once, r->out, sizeof once);
    r = run("run scenarios/gc-pause-outlives-lease.lsim --seed=7 --format=json");
    assert_int_equal(r->code, 0);
    assert_string_equal(r->out, once);
    static const char *const cmds[] = {"run",  "check", "hash",   "matrix", "demo",    "batch", "check-trace",
                                       "diff", "sweep", "render", "view",   "explore", "merge", "real"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        r = run(fmt("%s scenarios/gc-pause-outlives-lease.lsim -h", cmds[i]));
        assert_int_equal(r->code, 0);
        assert_non_null(strstr(r->out, fmt("Usage: locksim %s", cmds[i])));
        assert_int_equal(run(fmt("%s --help", cmds[i]))->code, 0);
    }
    assert_int_equal(system(fmt("cp scenarios/gc-pause-outlives-lease.lsim %s/-x.lsim", scratch())), 0);
    r = run(fmt("run --seed 2 -- %s/-x.lsim", scratch()));
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "GC pause outlives the lease"));
    assert_non_null(strstr(r->out, "seed 2"));
    r = run("run -x.lsim"); /* without --, an option it does not know */
    assert_int_equal(r->code, 64);
    r = run("batch scenarios/gc-pause-outlives-lease.lsim -q");
    assert_int_equal(r->code, 0);
    assert_string_equal(r->err, "");
    r = run("batch scenarios/ttl-with-headroom.lsim --seeds 1..4 --set lock.ttl=1s --expect -v");
    assert_int_equal(r->code, 1);
    assert_non_null(
            strstr(r->err, "    replay: locksim run scenarios/ttl-with-headroom.lsim --seed 4 --set lock.ttl=1s"));
    assert_null(strstr(r->err, "more failed runs"));
    r = run("batch scenarios/ttl-with-headroom.lsim --seeds 1..4 --set lock.ttl=1s --expect");
    assert_non_null(strstr(r->err, "  ... and 1 more failed runs (-v lists them all)"));
    r = run("run --no-color=yes scenarios/gc-pause-outlives-lease.lsim");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "--no-color takes no value (found '--no-color=yes')"));
    assert_int_equal(system(fmt("script -qc 'TERM=xterm %1$s run scenarios/gc-pause-outlives-lease.lsim' /dev/null | "
                                "grep -q \"$(printf '\\033')\"",
                                bin())),
                     0);
    assert_int_equal(system(fmt("script -qc 'TERM=dumb %1$s run scenarios/gc-pause-outlives-lease.lsim' /dev/null | "
                                "grep -q \"$(printf '\\033')\"",
                                bin())) == 0,
                     0);
    remove(sp("-x.lsim"));
    /* One name for the file a command writes: -o, --out, --output. */
    r = run(fmt("sweep scenarios/gc-pause-outlives-lease.lsim --vary pause=10s..20s/10s -o %s", sp("o.csv")));
    assert_int_equal(r->code, 0);
    static char csv[4096];
    slurp(sp("o.csv"), csv, sizeof csv);
    assert_non_null(strstr(csv, "\"20s\",\"lease\",1,"));
    assert_int_equal(run(fmt("render scenarios/gc-pause-outlives-lease.lsim --out=%s", sp("o.svg")))->code, 0);
    slurp(sp("o.svg"), csv, sizeof csv);
    assert_non_null(strstr(csv, "<svg"));
    assert_int_equal(run(fmt("batch scenarios/gc-pause-outlives-lease.lsim --output %s", sp("o.txt")))->code, 0);
    slurp(sp("o.txt"), csv, sizeof csv);
    assert_non_null(strstr(csv, "ok   scenarios/gc-pause-outlives-lease.lsim"));
    remove(sp("o.csv")), remove(sp("o.svg")), remove(sp("o.txt"));
}

/* An expectation that fails gives exit 1 and says what was measured. The
 * file's expect lines are for the scenario as written: under --set they are
 * not applicable (exit 0, each shown n/a with its measured value) unless
 * --expect holds the run to them. */
static void test_failed_expect_exit_1(void **state) {
    (void)state;
    struct result *r = run("run scenarios/gc-pause-outlives-lease.lsim --set lock.ttl=40s --expect");
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->out, "  FAIL  line 19  expect verdict UNSAFE                   (measured SAFE)\n"));
    assert_non_null(strstr(r->out, "Verdict: SAFE"));
    assert_non_null(strstr(r->out, "--set lock.ttl=40s")); /* replay keeps the override */
    r = run("run scenarios/gc-pause-outlives-lease.lsim --set lock.ttl=40s");
    assert_int_equal(r->code, 0);
    assert_null(strstr(r->out, "FAIL"));
    assert_non_null(strstr(r->out, "\nExpectations: not applicable: set lock.ttl=40s changes the scenario they were "
                                   "written for (--expect judges them)\n"
                                   "  n/a   line 19  expect verdict UNSAFE                   (measured SAFE)\n"));
    /* Another seed is another experiment too; the file's own seed is not. */
    r = run("run scenarios/gc-pause-outlives-lease.lsim --seed 2 --format json");
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "\"outcome\":\"NOT-APPLICABLE\",\"truncated\":false,"
                                   "\"not_applicable\":\"seed 2 (the file's: 1)\""));
    assert_non_null(strstr(r->out, "{\"line\":19,\"expect\":\"verdict UNSAFE\",\"ok\":null,\"measured\":\"UNSAFE\"}"));
    r = run("run scenarios/gc-pause-outlives-lease.lsim --seed 1 --format json");
    assert_non_null(strstr(r->out, "\"outcome\":\"PASS\""));
    assert_null(strstr(r->out, "not_applicable"));
}

/* --algo swaps the algorithm and keeps the fault script. */
static void test_algo_swap(void **state) {
    (void)state;
    struct result *r = run("run scenarios/gc-pause-outlives-lease.lsim --algo fenced-lease --set fencing=on "
                           "--no-timeline");
    assert_non_null(strstr(r->out, "algorithm fenced-lease"));
    assert_non_null(strstr(r->out, "Verdict: SAFE"));
    /* The file expects UNSAFE of its own algorithm: not of this one. */
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "Expectations: not applicable: set fencing=on, algorithm fenced-lease (the file's: "
                                   "lease) changes the scenario"));
    r = run("run scenarios/gc-pause-outlives-lease.lsim --algo fenced-lease --set fencing=on --no-timeline --expect");
    assert_int_equal(r->code, 1);
    /* --algo naming the file's own algorithm keeps its expectations. */
    assert_int_equal(run("run scenarios/gc-pause-outlives-lease.lsim --algo lease --no-timeline")->code, 0);
    assert_null(strstr(run("run scenarios/gc-pause-outlives-lease.lsim --algo lease --no-timeline")->out, "n/a"));
}

/* A malformed scenario: file:line:col and exit 65. */
static void test_malformed_exit_65(void **state) {
    (void)state;
    write_file(sp("locksim_bad.lsim"), "lock lease\nclient A: acquire; wrte; release\n");
    struct result *r = run(fmt("run %1$s/locksim_bad.lsim", scratch()));
    assert_int_equal(r->code, 65);
    assert_non_null(strstr(r->err, sp("locksim_bad.lsim:2:20: ")));
    assert_non_null(strstr(r->err, "wrte"));
    /* An unknown algorithm option is reported where it was written. */
    write_file(sp("locksim_bad.lsim"), "lock lease ttI=30s\nclient A: acquire\n");
    r = run(fmt("run %1$s/locksim_bad.lsim", scratch()));
    assert_int_equal(r->code, 65);
    assert_non_null(strstr(r->err, sp("locksim_bad.lsim:1:12: unknown option 'ttI' for lease")));
    remove(sp("locksim_bad.lsim"));
}

/* Missing file: exit 66. Usage errors: exit 64. */
static void test_missing_and_usage(void **state) {
    (void)state;
    struct result *r = run("run /nonexistent/x.lsim");
    assert_int_equal(r->code, 66);
    assert_non_null(strstr(r->err, "x.lsim"));
    r = run("frobnicate");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "unknown command 'frobnicate'"));
    r = run("run");
    assert_int_equal(r->code, 64);
    r = run("run scenarios/gc-pause-outlives-lease.lsim --format yaml");
    assert_int_equal(r->code, 64);
    r = run("run scenarios/gc-pause-outlives-lease.lsim --algo nosuch");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "unknown algorithm 'nosuch'"));
}

/* Help and version say what the program does, with the exit codes. */
static void test_help_version_list(void **state) {
    (void)state;
    struct result *r = run("--help");
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "65  malformed input (a scenario, trace or shard file)"));
    r = run("help run");
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "--set KEY=VALUE"));
    r = run("--version");
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "locksim "));
    r = run("list");
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "fenced-lease"));
    assert_non_null(strstr(r->out, "setnx"));
    assert_non_null(strstr(r->out, "gc-pause-outlives-lease.lsim"));
}

/* JSON report and a JSON Lines trace; the same seed gives the same bytes. */
static void test_json_and_trace_reproducible(void **state) {
    (void)state;
    struct result *r = run(fmt("run scenarios/fencing-rejects-stale-write.lsim --format json "
                               "--trace %1$s/locksim_t1.jsonl",
                               scratch()));
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "\"verdict\":\"SAFE\""));
    assert_non_null(strstr(r->out, "\"stale_writes_rejected\":1"));
    run(fmt("run scenarios/fencing-rejects-stale-write.lsim --format json --trace %1$s/locksim_t2.jsonl", scratch()));
    static char a[1 << 20], b[1 << 20];
    slurp(sp("locksim_t1.jsonl"), a, sizeof a);
    slurp(sp("locksim_t2.jsonl"), b, sizeof b);
    assert_true(strlen(a) > 100);
    assert_string_equal(a, b);
    assert_non_null(strstr(a, "\"format\":\"locksim-trace\""));
    remove(sp("locksim_t1.jsonl"));
    remove(sp("locksim_t2.jsonl"));
}

/* `check` runs every expectation and reports per file. */
static void test_check_command(void **state) {
    (void)state;
    struct result *r = run("check scenarios/gc-pause-outlives-lease.lsim scenarios/setnx-crashed-holder-stuck.lsim");
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "scenarios: 2 passed, 0 failed"));
    /* Lab formats: TAP and JUnit carry a failing file's message. */
    write_file(sp("locksim_fail.lsim"), "lock lease\nclient A: acquire; release\nexpect verdict UNSAFE\n");
    r = run(fmt("check --format tap scenarios/setnx-crashed-holder-stuck.lsim %1$s/locksim_fail.lsim", scratch()));
    assert_int_equal(r->code, 1);
    assert_non_null(
            strstr(r->out, fmt("TAP version 13\n1..2\nok 1 - scenarios/setnx-crashed-holder-stuck.lsim (STUCK)\n"
                               "not ok 2 - %1$s/locksim_fail.lsim (SAFE)\n",
                               scratch())));
    assert_non_null(strstr(r->out, sp("locksim_fail.lsim:3:1: expect verdict UNSAFE: measured SAFE")));
    r = run(fmt("check --format junit scenarios/setnx-crashed-holder-stuck.lsim %1$s/locksim_fail.lsim", scratch()));
    assert_non_null(strstr(r->out, "<testsuites name=\"locksim check\" tests=\"2\" failures=\"1\""));
    assert_non_null(
            strstr(r->out, "<testcase classname=\"scenarios.setnx-crashed-holder-stuck\" name=\"setnx seed=1\""));
    assert_non_null(strstr(r->out, "<failure message=\"expectation failed\">"));
    r = run("check --format json scenarios/setnx-crashed-holder-stuck.lsim");
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "\"verdict\":\"STUCK\""));
    remove(sp("locksim_fail.lsim"));
}

/* The verdict matrix: one fault script, one row per algorithm, in three formats. */
static void test_matrix(void **state) {
    (void)state;
    struct result *r = run("matrix scenarios/gc-pause-outlives-lease.lsim --algos setnx,lease,fenced-lease");
    assert_int_equal(r->code, 0);
    /* setnx has no TTL: B waits for A's release, no overlap. */
    assert_non_null(strstr(r->out, "setnx                  SAFE"));
    assert_non_null(strstr(r->out, "lease                  UNSAFE          1         1s         1 / 0"));
    r = run("matrix scenarios/gc-pause-outlives-lease.lsim --algos lease --format csv");
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "file,algorithm,seed,outcome,verdict,double_entries,double_entry_ns,"
                                   "stale_writes_accepted,"));
    assert_non_null(strstr(r->out, "\"lease\",1,RAN,UNSAFE,1,1000000000,1,0,0,1,0,0,0,2,0,"));
    r = run("matrix scenarios/fencing-rejects-stale-write.lsim --algos fenced-lease --format json");
    assert_non_null(strstr(r->out, "\"algorithm\":\"fenced-lease\",\"outcome\":\"RAN\",\"verdict\":\"SAFE\""));
    r = run("matrix scenarios/gc-pause-outlives-lease.lsim --algos lease,nosuch");
    assert_int_equal(r->code, 64);
}

/* The worked plugin example builds against sim/lock.h and runs. */
static void test_plugin_example(void **state) {
    (void)state;
    int st = system(fmt("cc -std=c11 -Wall -Wextra -Werror -shared -fPIC -Isim "
                        "-o %1$s/locksim_my_lock.so examples/algorithms/my_lock.c",
                        scratch()));
    assert_int_equal(st, 0);
    struct result *r = run(fmt("run scenarios/fencing-rejects-stale-write.lsim --algo %1$s/locksim_my_lock.so "
                               "--no-timeline",
                               scratch()));
    assert_non_null(strstr(r->out, "algorithm ticket"));
    assert_non_null(strstr(r->out, "Verdict: SAFE"));
    /* A plugin built for another interface version is refused. */
    st = system(fmt("cc -std=c11 -shared -fPIC -Isim "
                    "-o %1$s/locksim_old.so -x c - <<'EOF'\n"
                    "#include \"lock.h\"\n"
                    "static const struct lock_algo old = {.abi = 999, .name = \"old\"};\n"
                    "const struct lock_algo *locksim_algo(void) { return &old; }\n"
                    "EOF",
                    scratch()));
    assert_int_equal(st, 0);
    r = run(fmt("run scenarios/fencing-rejects-stale-write.lsim --algo %1$s/locksim_old.so", scratch()));
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "interface version 999"));
    remove(sp("locksim_my_lock.so"));
    remove(sp("locksim_old.so"));
}

/* `run --format json` names the resource's rule: the lock service's guard,
 * no lock at all, the algorithm's own rule, fencing tokens, or none. */
static void test_json_resource_rule(void **state) {
    (void)state;
    static const char *const cases[][2] = {
            {"scenarios/etcd-txn-guarded-put.lsim", "\"resource_rule\":\"owner\""},
            {"scenarios/db-conditional-update-race.lsim", "\"resource_rule\":\"no-lock\""},
            {"scenarios/db-skip-locked-job-claim.lsim", "\"resource_rule\":\"algorithm\""},
            {"scenarios/consensus-revision-fenced.lsim", "\"resource_rule\":\"tokens\""},
            {"scenarios/gc-pause-outlives-lease.lsim", "\"resource_rule\":\"plain\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[256];
        snprintf(args, sizeof args, "run %s --format json", cases[i][0]);
        struct result *r = run(args);
        if (!strstr(r->out, cases[i][1])) print_error("%s: no %s\n", cases[i][0], cases[i][1]);
        assert_non_null(strstr(r->out, cases[i][1]));
    }
}

/* docs/regression.md's table of the run record names every top-level key
 * that `run --format json` writes (a truncated run's too); the metric keys
 * are docs/metrics.md's, checked against the metric table elsewhere. */
static void test_json_record_keys_documented(void **state) {
    (void)state;
    static char doc[65536];
    slurp("docs/regression.md", doc, sizeof doc);
    const char *table = strstr(doc, "## The run record");
    assert_non_null(table);
    const char *runs[] = {"run scenarios/gc-pause-outlives-lease.lsim --format json --narrate",
                          "run scenarios/gc-pause-outlives-lease.lsim --format json --set max-events=10"};
    for (size_t k = 0; k < 2; k++) {
        struct result *r = run(runs[k]);
        int depth = 0, keys = 0;
        for (const char *p = r->out; *p; p++) {
            if (*p == '{' || *p == '[') depth++;
            else if (*p == '}' || *p == ']') depth--;
            else if (*p == '"') {
                const char *q = p + 1;
                while (*q && *q != '"') q += *q == '\\' ? 2 : 1;
                if (depth == 1 && q[0] == '"' && q[1] == ':') {
                    char key[64], want[80];
                    int isk = 0;
                    snprintf(key, sizeof key, "%.*s", (int)(q - p - 1), p + 1);
                    for (int m = 0; m < SCN_M_COUNT; m++) isk |= strcmp(metric_info((enum scn_metric)m)->key, key) == 0;
                    snprintf(want, sizeof want, "`%s`", key);
                    if (!isk && !strstr(table, want)) print_error("docs/regression.md: no key %s\n", want);
                    assert_true(isk || strstr(table, want) != NULL);
                    keys++;
                }
                p = q;
            }
        }
        assert_true(keys > 30);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_run_seed_scenario),
            cmocka_unit_test(test_failed_expect_exit_1),
            cmocka_unit_test(test_algo_swap),
            cmocka_unit_test(test_malformed_exit_65),
            cmocka_unit_test(test_missing_and_usage),
            cmocka_unit_test(test_help_version_list),
            cmocka_unit_test(test_json_and_trace_reproducible),
            cmocka_unit_test(test_check_command),
            cmocka_unit_test(test_matrix),
            cmocka_unit_test(test_plugin_example),
            cmocka_unit_test(test_json_resource_rule),
            cmocka_unit_test(test_json_record_keys_documented),
            cmocka_unit_test(test_absolute_writes_shown),
            cmocka_unit_test(test_consensus_leaders_drawn),
            cmocka_unit_test(test_command_line_conventions),
            cmocka_unit_test(test_option_tables),
            cmocka_unit_test(test_seed_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
