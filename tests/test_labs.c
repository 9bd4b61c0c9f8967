/* Lab and regression commands through the binary: `batch` (order, formats,
 * a crashing worker, Ctrl-C, memory flat in the runs), golden trace digests in `check` with the
 * first divergent event, `diff`, `check-trace` against `run`, and shards
 * (--shard K/N) merged back into the bytes of the unsharded run. */
#define _XOPEN_SOURCE 700 /* realpath, in cli_util.h */
#define _DEFAULT_SOURCE   /* wait4 */
#include <glob.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "cli_util.h"
#include "heatmap_svg.h"

/* The catalog's size: the batch totals below follow it. */
static int catalog_size(void) {
    glob_t g;
    if (glob("scenarios/*.lsim", 0, NULL, &g) != 0) return 0;
    int n = (int)g.gl_pathc;
    globfree(&g);
    return n;
}

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* Batch output is in run-list order: the same bytes for 1, 2 and 3 jobs. */
static void test_batch_order_independent_of_jobs(void **state) {
    (void)state;
    static char one[1 << 21];
    /* Each scenario's expectations are judged at its own seed only: the
     * other seeds are not applicable, and the whole catalog passes. */
    struct result *r = run("batch scenarios --seeds 1..4 --format jsonl --jobs 2");
    assert_int_equal(r->code, 0);
    /* Three catalog scenarios are written for a seed past 4: all their runs are not applicable. */
    int n = catalog_size();
    assert_non_null(strstr(r->err, fmt("locksim: batch: %d of %d runs: %d passed, 0 failed, %d not applicable (runs "
                                       "with another seed, --set or algorithm than the file's: their expect lines are "
                                       "not judged without --expect)\n",
                                       4 * n, 4 * n, n - 3, 3 * n + 3)));
    assert_non_null(strstr(r->out, "\"seed\":2,\"set\":{},\"outcome\":\"NOT-APPLICABLE\",\"not_applicable\":"
                                   "\"seed 2 (the file's: 1)\",\"events\":"));
    /* --expect: 1, the seed-varying scenarios' expectations hold for their own seed only. */
    r = run("batch scenarios --seeds 1..4 --format jsonl --jobs 1 --expect");
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->out, "{\"scenario\":\"scenarios/gc-pause-near-ttl-retry-jitter.lsim\",\"title\":"
                                   "\"A pause just past the TTL: who wins depends on B's retry jitter\",\"algorithm\":"
                                   "\"lease\",\"seed\":1,\"set\":{},\"outcome\":\"FAIL\""));
    snprintf(one, sizeof one, "%s", r->out);
    /* One line per scenario and seed; the first is the first file, seed 1. */
    assert_true(count_lines(one) >= 4 * 50);
    assert_int_equal(count_lines(one) % 4, 0);
    const char *first = "{\"scenario\":\"scenarios/azure-lease-expired-renew-refused.lsim\"";
    assert_true(strncmp(one, first, strlen(first)) == 0);
    assert_non_null(strstr(one, "\"seed\":1,\"set\":{},\"outcome\":\"PASS\""));
    for (int jobs = 2; jobs <= 3; jobs++) {
        char args[128];
        snprintf(args, sizeof args, "batch scenarios --seeds 1..4 --format jsonl --jobs %d --expect", jobs);
        r = run(args);
        assert_int_equal(r->code, 1);
        assert_string_equal(r->out, one);
    }
    /* Piped: no progress line on stderr, only the summary: the runs, how
     * they failed, the first failures with their replay commands. */
    assert_null(strchr(r->err, '\r'));
    /* 12 expectations of the catalog hold only for the scenario's own seed. */
    int runs = 4 * catalog_size();
    char want[160];
    snprintf(want, sizeof want,
             "locksim: batch: %d of %d runs: %d passed, 12 failed (expectation failed 12, "
             "truncated 0, error 0)\n  scenarios/",
             runs, runs, runs - 12);
    assert_true(strncmp(r->err, want, strlen(want)) == 0);
    assert_non_null(strstr(r->err, "\n    replay: locksim run scenarios/"));
    assert_non_null(strstr(r->err, "\n  ... and 9 more failed runs (-v lists them all)\n"));
}

/* The same six runs (2 algorithms x 3 seeds, one override) in a format,
 * held to the file's expect lines (--expect). */
static struct result *batch_format(const char *format) {
    char args[512];
    snprintf(args, sizeof args,
             "batch scenarios/gc-pause-outlives-lease.lsim --seeds 1..3 --algos lease,fenced-lease "
             "--set lock.ttl=10s --format %s --expect",
             format);
    return run(args);
}

/* The same without --expect: no run is the scenario as written, so every
 * format says its expectations are not applicable, distinctly, and the
 * batch passes. Seed 1 of the file's own algorithm without --set is. */
static void test_batch_not_applicable(void **state) {
    (void)state;
    const char *runs = "batch scenarios/gc-pause-outlives-lease.lsim --seeds 1..2 --algos lease,fenced-lease";
    struct result *r = run(fmt("%s --format jsonl", runs));
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "\"algorithm\":\"lease\",\"seed\":1,\"set\":{},\"outcome\":\"PASS\",\"events\""));
    assert_non_null(strstr(r->out, "\"algorithm\":\"lease\",\"seed\":2,\"set\":{},\"outcome\":\"NOT-APPLICABLE\","
                                   "\"not_applicable\":\"seed 2 (the file's: 1)\",\"events\":40,\"truncated\":false,"
                                   "\"expects\":10,\"failed_expects\":0,"));
    assert_non_null(strstr(r->out,
                           "\"algorithm\":\"fenced-lease\",\"seed\":1,\"set\":{},\"outcome\":\"NOT-APPLICABLE\","
                           "\"not_applicable\":\"algorithm fenced-lease (the file's: lease)\""));
    r = run(fmt("%s --format csv", runs));
    assert_non_null(
            strstr(r->out, "\"scenarios/gc-pause-outlives-lease.lsim\",\"fenced-lease\",2,NOT-APPLICABLE,SAFE,"));
    r = run(fmt("%s --format tap", runs));
    assert_non_null(strstr(r->out,
                           "\nok 4 - scenarios/gc-pause-outlives-lease.lsim seed 2 algo fenced-lease (SAFE) # SKIP "
                           "expectations not applicable: seed 2 (the file's: 1), algorithm fenced-lease (the "
                           "file's: lease) changes the scenario they were written for (--expect judges them)\n"));
    r = run(fmt("%s --format junit", runs));
    assert_non_null(strstr(r->out, "tests=\"4\" failures=\"0\" errors=\"0\" skipped=\"3\""));
    assert_non_null(strstr(r->out,
                           "<skipped message=\"expectations not applicable: seed 2 (the file&apos;s: 1) changes "
                           "the scenario they were written for (--expect judges them)\"/><system-out>verdict "
                           "UNSAFE</system-out>"));
    r = run(runs);
    assert_non_null(strstr(r->out, "ok   scenarios/gc-pause-outlives-lease.lsim  lease  seeds 1..2: 2 runs, 1 passed, "
                                   "0 failed, 1 not applicable; SAFE 0, UNSAFE 2, STUCK 0\n"));
    assert_non_null(strstr(r->out,
                           "n/a  scenarios/gc-pause-outlives-lease.lsim  fenced-lease  seeds 1..2: 2 runs, 0 passed, "
                           "0 failed, 2 not applicable; SAFE 2, UNSAFE 0, STUCK 0\n"));
    assert_non_null(strstr(r->out, "\n1 passed, 0 failed, 3 not applicable (runs with another seed"));
    /* Sharded and merged: the same bytes, the reason carried by the shards. */
    static char one[1 << 21];
    r = run(fmt("%s --format jsonl", runs));
    memcpy(one, r->out, sizeof one);
    assert_int_equal(system(fmt("%1$s %2$s --shard 1/2 --out %3$s/na1.jsonl 2>/dev/null && "
                                "%1$s %2$s --shard 2/2 --out %3$s/na2.jsonl 2>/dev/null",
                                bin(), runs, scratch())),
                     0);
    r = run(fmt("merge %1$s/na2.jsonl %1$s/na1.jsonl --format jsonl", scratch()));
    assert_int_equal(r->code, 0);
    assert_string_equal(r->out, one);
}

/* Every format: JSON Lines records with every override and metric, CSV with
 * one column count, TAP's plan, JUnit's counts, the table's totals. */
static void test_batch_formats(void **state) {
    (void)state;
    struct result *r = batch_format("jsonl");
    assert_int_equal(r->code, 1); /* fenced-lease does not give the UNSAFE the file expects */
    assert_int_equal(count_lines(r->out), 6);
    assert_non_null(strstr(r->out, "\"algorithm\":\"fenced-lease\",\"seed\":3,\"set\":{\"lock.ttl\":\"10s\"},"
                                   "\"outcome\":\"FAIL\""));
    assert_non_null(strstr(r->out, "\"lost_updates\":1,"));
    assert_non_null(strstr(r->out, "\"end_ns\":60000000000,\"trace_hash\":\""));
    r = batch_format("csv");
    assert_int_equal(count_lines(r->out), 7);
    assert_true(strncmp(r->out, "file,algorithm,seed,\"set.lock.ttl\",outcome,verdict,", 50) == 0);
    /* Every row has as many fields as the header (commas outside quotes). */
    int commas[8] = {0}, row = 0, quoted = 0;
    for (const char *p = r->out; *p && row < 8; p++) {
        if (*p == '"') quoted = !quoted;
        if (*p == ',' && !quoted) commas[row]++;
        if (*p == '\n') row++;
    }
    for (int i = 1; i < 7; i++) assert_int_equal(commas[i], commas[0]);
    assert_non_null(strstr(r->out, "\"scenarios/gc-pause-outlives-lease.lsim\",\"lease\",2,\"10s\",PASS,UNSAFE,"));
    r = batch_format("tap");
    assert_non_null(strstr(r->out, "TAP version 13\n1..6\nok 1 - scenarios/gc-pause-outlives-lease.lsim seed 1 "
                                   "algo lease (UNSAFE)\n"));
    assert_non_null(strstr(r->out, "not ok 6 - scenarios/gc-pause-outlives-lease.lsim seed 3 algo fenced-lease"));
    r = batch_format("junit");
    assert_non_null(strstr(r->out, "<testsuites name=\"locksim batch\" tests=\"6\" failures=\"3\" errors=\"0\""));
    int cases = 0;
    for (const char *p = r->out; (p = strstr(p, "<testcase ")) != NULL; p++) cases++;
    assert_int_equal(cases, 6);
    assert_non_null(strstr(r->out, "<testcase classname=\"scenarios.gc-pause-outlives-lease\" name=\"fenced-lease "
                                   "seed=3 lock.ttl=10s\" file=\"scenarios/gc-pause-outlives-lease.lsim\""));
    assert_non_null(strstr(r->out, "</testsuite>\n</testsuites>\n"));
    r = batch_format("table");
    assert_non_null(strstr(r->out, "ok   scenarios/gc-pause-outlives-lease.lsim  lease  seeds 1..3: 3 runs, 3 passed, "
                                   "0 failed; SAFE 0, UNSAFE 3, STUCK 0\n"));
    assert_non_null(strstr(r->out, "FAIL scenarios/gc-pause-outlives-lease.lsim  fenced-lease  seeds 1..3"));
    assert_non_null(strstr(r->out, "\n3 passed, 3 failed\n"));
    /* Usage errors. */
    assert_int_equal(run("batch scenarios --seeds 5..2")->code, 64);
    assert_int_equal(run("batch scenarios --format yaml")->code, 64);
    assert_int_equal(run("batch")->code, 64);
    assert_int_equal(run("batch /nonexistent")->code, 66);
    assert_int_equal(run("batch - < scenarios/ttl-with-headroom.lsim")->code, 64);
}

/* JUnit XML as a CI dashboard (Jenkins, GitLab) reads it: well-formed,
 * one <testsuite> per scenario file, classname = the file's folders and
 * stem joined by dots, name = algorithm, seed and params, every (classname,
 * name) unique, the counts of each suite and of the whole equal to its
 * cases, every string escaped. tests/junit_check.py checks the structure. */
static void test_junit_for_ci_dashboards(void **state) {
    (void)state;
    char d[4200];
    snprintf(d, sizeof d, "%s", sp("ci&<j>"));
    assert_int_equal(system(fmt("rm -rf '%1$s' && mkdir -p '%1$s' && cp scenarios/gc-pause-outlives-lease.lsim "
                                "'%1$s/gc.pause.lsim' && printf 'lock lease\\nclient A: wrte\\n' > '%1$s/bad.lsim'",
                                d)),
                     0);
    struct result *r = run(fmt("batch '%s' scenarios/fencing-rejects-stale-write.lsim --seeds 1..2 --algos "
                               "lease,fenced-lease,local-mutex --set 'stuck-after=30s' --format junit --out %s",
                               d, sp("ci.xml")));
    assert_int_equal(r->code, 65); /* bad.lsim */
    r = run(fmt("-- 2>/dev/null; python3 tests/junit_check.py %s", sp("ci.xml")));
    assert_string_equal(r->out, "junit: 18 testcases in 3 testsuites, names unique, counts agree\n");
    static char xml[1 << 16];
    slurp(sp("ci.xml"), xml, sizeof xml);
    /* Folders and stem as a dotted class, with the folder's '&' and '<' escaped. */
    const char *cls = strstr(xml, "classname=\"tmp.");
    assert_non_null(cls);
    assert_non_null(strstr(xml, "ci&amp;&lt;j&gt;.gc_pause\" name=\"fenced-lease seed=2 stuck-after=30s\" file=\""));
    assert_non_null(strstr(xml, "<testsuite name=\"scenarios.fencing-rejects-stale-write\" tests=\"6\" failures=\"0\" "
                                "errors=\"0\" skipped=\"6\""));
    /* A file that cannot be parsed: an error per run, named by the list. */
    assert_non_null(strstr(xml, "ci&amp;&lt;j&gt;.bad\" name=\"lease seed=1 stuck-after=30s\""));
    /* The same file twice in check: the second case is "#2", still unique. */
    r = run("check --format junit scenarios/ttl-with-headroom.lsim ./scenarios/ttl-with-headroom.lsim");
    assert_int_equal(r->code, 0);
    write_file(sp("ci.xml"), r->out);
    r = run(fmt("-- 2>/dev/null; python3 tests/junit_check.py %s", sp("ci.xml")));
    assert_string_equal(r->out, "junit: 2 testcases in 1 testsuites, names unique, counts agree\n");
    slurp(sp("ci.xml"), xml, sizeof xml);
    assert_non_null(strstr(xml, "name=\"lease seed=1 #2\" file=\"./scenarios/ttl-with-headroom.lsim\""));
    assert_int_equal(system(fmt("rm -rf '%s' %s", d, sp("ci.xml"))), 0);
}

/* A plugin whose client_acquire dereferences NULL: each of its runs fails
 * with the signal and the run it was in; the other runs go on. */
static void test_batch_crashing_worker(void **state) {
    (void)state;
    int st = system(fmt("sed 's/^static void client_acquire(struct lock_ctx \\*ctx, void \\*state) {/&"
                        " *(volatile int *)0 = 0;/' examples/algorithms/my_lock.c > %1$s/locksim_bad.c && "
                        "cc -std=c11 -shared -fPIC -Isim -o %1$s/locksim_bad.so %1$s/locksim_bad.c",
                        scratch()));
    assert_int_equal(st, 0);
    /* Under ASan (make sanitize) the worker would report the SEGV and exit
     * 1: let the signal kill it, as it does in a normal build. */
    setenv("ASAN_OPTIONS", "handle_segv=0", 1);
    static char one[1 << 21];
    struct result *r = run(fmt("batch scenarios/fencing-rejects-stale-write.lsim --seeds 1..3 "
                               "--algos fenced-lease,%1$s/locksim_bad.so --format jsonl --jobs 1",
                               scratch()));
    assert_int_equal(r->code, 64); /* a plugin that cannot be used */
    assert_int_equal(count_lines(r->out), 6);
    assert_non_null(
            strstr(r->out, "\"algorithm\":\"fenced-lease\",\"seed\":3,\"set\":{},\"outcome\":\"NOT-APPLICABLE\""));
    assert_non_null(strstr(r->out, fmt("worker died with signal 11 (SIGSEGV) during "
                                       "scenarios/fencing-rejects-stale-write.lsim seed 2 algo %1$s/locksim_bad.so",
                                       scratch())));
    snprintf(one, sizeof one, "%s", r->out);
    r = run(fmt("batch scenarios/fencing-rejects-stale-write.lsim --seeds 1..3 "
                "--algos fenced-lease,%1$s/locksim_bad.so --format jsonl --jobs 2",
                scratch()));
    assert_string_equal(r->out, one);
    r = run(fmt("batch scenarios/fencing-rejects-stale-write.lsim --seeds 1..3 --algos %1$s/locksim_bad.so",
                scratch()));
    assert_non_null(strstr(r->out, "first failure: seed 1: worker died with signal 11 (SIGSEGV)"));
    assert_non_null(strstr(r->out, "\n0 passed, 3 failed\n"));
    unsetenv("ASAN_OPTIONS");
    remove(sp("locksim_bad.c"));
    remove(sp("locksim_bad.so"));
}

/* A plugin that aborts costs matrix only its own row; one that loops
 * forever is stopped by the per-run time limit, in batch (that run fails,
 * the others run), matrix (its row) and run (exit 70, said why). */
static void test_plugin_abort_and_loop(void **state) {
    (void)state;
    int st = system(fmt("sed 's/^static void client_acquire(struct lock_ctx \\*ctx, void \\*state) {/& abort();/' "
                        "examples/algorithms/my_lock.c | sed '1i #include <stdlib.h>' > %1$s/abort.c && "
                        "cc -std=c11 -shared -fPIC -Isim -o %1$s/abort.so %1$s/abort.c && "
                        "sed 's/^static void client_acquire(struct lock_ctx \\*ctx, void \\*state) {/& for (;;) {}/' "
                        "examples/algorithms/my_lock.c > %1$s/loop.c && "
                        "cc -std=c11 -shared -fPIC -Isim -o %1$s/loop.so %1$s/loop.c",
                        scratch()));
    assert_int_equal(st, 0);
    setenv("ASAN_OPTIONS", "handle_abort=0", 1);
    struct result *r = run(
            fmt("matrix scenarios/fencing-rejects-stale-write.lsim --algos lease,%s,fenced-lease", sp("abort.so")));
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "cannot run this script: the algorithm crashed: signal 6 (Aborted)"));
    assert_non_null(strstr(r->out, "\nlease "));
    assert_non_null(strstr(r->out, "\nfenced-lease "));
    r = run(fmt("matrix scenarios/fencing-rejects-stale-write.lsim --algos %s,fenced-lease --time-limit 1",
                sp("loop.so")));
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "did not finish within the time limit"));
    assert_non_null(strstr(r->out, "\nfenced-lease "));
    r = run(fmt("batch scenarios/fencing-rejects-stale-write.lsim --seeds 1..2 --algos fenced-lease,%s "
                "--time-limit 1 --format jsonl --jobs 2",
                sp("loop.so")));
    assert_int_equal(r->code, 64);
    assert_int_equal(count_lines(r->out), 4);
    assert_non_null(strstr(r->out, "worker died with signal 14 (SIGALRM: the run passed its --time-limit) during "
                                   "scenarios/fencing-rejects-stale-write.lsim seed 1 algo "));
    assert_non_null(
            strstr(r->out, "\"algorithm\":\"fenced-lease\",\"seed\":2,\"set\":{},\"outcome\":\"NOT-APPLICABLE\""));
    r = run(fmt("run scenarios/fencing-rejects-stale-write.lsim --algo %s --time-limit 1", sp("loop.so")));
    assert_int_equal(r->code, 70);
    assert_non_null(strstr(r->err, "the run did not finish within its time limit of 1 s"));
    assert_int_equal(run("run scenarios/fencing-rejects-stale-write.lsim --time-limit 1.5")->code, 64);
    unsetenv("ASAN_OPTIONS");
}

/* An algorithm that cannot run a scenario's script (more lock servers than
 * it runs on) is a skipped row in every format, said why, never an error:
 * the exit status is the one of the runs that could run. */
static void test_batch_skips_what_cannot_run(void **state) {
    (void)state;
    const char *f = "scenarios/consensus-leader-partitioned.lsim";
    int alone = run(fmt("batch %s --seeds 1..2 --algos consensus", f))->code;
    struct result *r = run(fmt("batch %s --seeds 1..2 --algos local-mutex,consensus --format jsonl", f));
    assert_int_equal(r->code, alone);
    assert_non_null(strstr(r->out, "\"algorithm\":\"\",\"seed\":0,\"set\":{},\"outcome\":\"SKIP\",\"error_code\":"
                                   "\"SKIPPED\",\"exit_status\":0,\"error\":\"scenarios/consensus-leader-partitioned."
                                   "lsim:11:6: local-mutex runs on at most 1 lock server; the scenario asks for 5\"}"));
    assert_non_null(strstr(r->err, "2 skipped (an algorithm that cannot run a scenario)"));
    r = run(fmt("batch %s --seeds 1..2 --algos local-mutex,consensus", f));
    assert_non_null(strstr(r->out,
                           "skip scenarios/consensus-leader-partitioned.lsim  local-mutex  seeds 1..2: 2 runs "
                           "skipped: scenarios/consensus-leader-partitioned.lsim:11:6: local-mutex runs on at most 1"));
    assert_non_null(strstr(r->out, ", 2 skipped (an algorithm that cannot run a scenario)\n"));
    r = run(fmt("batch %s --seeds 1..2 --algos local-mutex,consensus --format junit", f));
    /* Two runs skipped, and consensus at seed 2 not applicable (its file's seed is 1). */
    assert_non_null(strstr(r->out, "tests=\"4\" failures=\"0\" errors=\"0\" skipped=\"3\""));
    assert_non_null(
            strstr(r->out, "<skipped message=\"scenarios/consensus-leader-partitioned.lsim:11:6: local-mutex runs"));
    r = run(fmt("batch %s --seeds 1..2 --algos local-mutex,consensus --format tap", f));
    assert_non_null(
            strstr(r->out, "ok 1 - scenarios/consensus-leader-partitioned.lsim seed 1 algo local-mutex # SKIP "));
    /* A sweep whose runs all fail says why on stderr, not only in the CSV. */
    r = run("sweep scenarios/gc-pause-outlives-lease.lsim --vary nosuch=1,2 --out /dev/null");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "locksim: sweep: 2 runs (2 cells x 1 algorithm): safe 0, double-entry 0, damage 0, "
                                   "stuck 0, error 2\n  first error, nosuch=1 algo (the scenario's): --set: unknown "
                                   "option 'nosuch'"));
}

/* On a terminal (script(1) gives one), a progress line on stderr with runs
 * done out of the total, the rate and the ETA, cleared at the end. */
static void test_batch_progress_on_terminal(void **state) {
    (void)state;
    /* script(1) is util-linux's (Debian's essential bsdutils): always there. */
    assert_int_equal(system("command -v script >/dev/null 2>&1"), 0);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             fmt("script -qec '%%s batch scenarios --seeds 1..20 --jobs 2 --format jsonl --out /dev/null' /dev/null "
                 ">%1$s/locksim_progress 2>&1",
                 scratch()),
             bin());
    assert_int_equal(system(cmd), 0); /* other seeds than the files' own: not applicable */
    static char buf[1 << 16];
    slurp(sp("locksim_progress"), buf, sizeof buf);
    assert_non_null(strstr(buf, "\rbatch: "));
    /* "N/TOTAL runs, " with TOTAL = scenarios x 20 seeds */
    const char *slash = strstr(buf, "\rbatch: ");
    assert_non_null(slash = strchr(slash, '/'));
    while (*++slash >= '0' && *slash <= '9') {}
    assert_int_equal(strncmp(slash, " runs, ", 7), 0);
    assert_non_null(strstr(buf, " runs/s, ETA "));
    remove(sp("locksim_progress"));
}

/* Ctrl-C: the batch stops, says what finished, exits 130, and the --out
 * file is not left half-written (an old one stays as it was). */
static void test_batch_sigint(void **state) {
    (void)state;
    /* Ctrl-C, and what Slurm's scancel, timeout and systemd (TERM) or a
     * closed terminal (HUP) send: the same report, 130, the old --out file
     * kept, no temporary file and no worker left. 1.5 s: long after the
     * handler is installed even on a loaded machine (0.5 s once lost the
     * race), long before 5.6 million runs finish. */
    static const char *const sigs[] = {"INT", "TERM", "HUP"};
    for (int k = 0; k < 3; k++) {
        write_file(sp("locksim_batch_out.jsonl"), "old\n");
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 fmt("%%s batch scenarios --seeds 1..100000 --format jsonl --jobs 2 --out %1$s/locksim_batch_out.jsonl "
                     "2>%1$s/locksim_batch_err & pid=$!; sleep 1.5; kill -%2$s $pid; wait $pid; echo $? "
                     ">%1$s/locksim_batch_rc",
                     scratch(), sigs[k]),
                 bin());
        assert_int_equal(system(cmd), 0);
        char buf[4096];
        slurp(sp("locksim_batch_rc"), buf, sizeof buf);
        assert_string_equal(buf, "130\n");
        slurp(sp("locksim_batch_err"), buf, sizeof buf);
        assert_non_null(strstr(buf, "locksim: interrupted: "));
        assert_non_null(strstr(buf, "the --out file was not written"));
        slurp(sp("locksim_batch_out.jsonl"), buf, sizeof buf);
        assert_string_equal(buf, "old\n");
        assert_int_equal(system(fmt("ls %1$s/.locksim_batch_out.jsonl.tmp.* >/dev/null 2>&1", scratch())),
                         512 /* ls: status 2 */);
        assert_int_equal(system(fmt("pgrep -f '[b]atch scenarios .*%s/locksim_batch_out.jsonl' >/dev/null", scratch())),
                         256 /* none */);
    }
    /* A parent killed outright (-9) takes its workers with it. */
    assert_int_equal(system(fmt("%s batch scenarios --seeds 1..100000 --format jsonl --jobs 2 --out %s/killed.jsonl "
                                "2>/dev/null & pid=$!; sleep 1; kill -9 $pid; wait $pid; sleep 0.3",
                                bin(), scratch())),
                     0);
    assert_int_equal(system(fmt("pgrep -f '[b]atch scenarios .*%s/killed.jsonl' >/dev/null", scratch())), 256);
    /* A closed standard output stops the runs at the first failed write. */
    assert_int_equal(system(fmt("bash -c '%s batch scenarios --seeds 1..2000 --format jsonl --jobs 2 2>%s/pipe_err "
                                "| head -c 10 >/dev/null; exit ${PIPESTATUS[0]}'",
                                bin(), scratch())) >>
                             8,
                     73);
    char err[4096];
    slurp(sp("pipe_err"), err, sizeof err);
    assert_non_null(strstr(err, "locksim: batch stopped after "));
    assert_non_null(strstr(err, fmt(" of %d runs: its output cannot be written", 2000 * catalog_size())));
    assert_non_null(strstr(err, "Broken pipe"));
    remove(sp("locksim_batch_out.jsonl"));
    remove(sp("locksim_batch_err"));
    remove(sp("locksim_batch_rc"));
}

static void test_explore_sigint(void **state) {
    (void)state;
    /* Ctrl-C (and TERM) during a long search: 130, and stderr says what was
     * searched (runs of the budget, in how long) and that nothing failed
     * yet (setnx never fails this budget); no worker is left. */
    static const char *const sigs[] = {"INT", "TERM"};
    for (int k = 0; k < 2; k++) {
        char cmd[1024], buf[4096];
        snprintf(cmd, sizeof cmd,
                 /* setsid: explore leads a session of its own (sh's
                  * background child is no group leader, so setsid execs in
                  * place and $! is explore), and "no worker left" looks at
                  * that session only, not at other explore processes on the
                  * machine (other test runs). */
                 fmt("setsid %%s explore scenarios/explore-budget.lsim --algos setnx --budget 2000000000 "
                     "--jobs 2 >/dev/null 2>%1$s/locksim_explore_err & pid=$!; sleep 1.5; kill -%2$s $pid; "
                     "wait $pid; echo $? >%1$s/locksim_explore_rc; n=0; "
                     "while pgrep -s $pid >/dev/null && [ $n -lt 20 ]; do sleep 0.05; n=$((n+1)); done; "
                     "pgrep -s $pid >%1$s/locksim_explore_left; true",
                     scratch(), sigs[k]),
                 bin());
        assert_int_equal(system(cmd), 0);
        slurp(sp("locksim_explore_rc"), buf, sizeof buf);
        assert_string_equal(buf, "130\n");
        slurp(sp("locksim_explore_err"), buf, sizeof buf);
        assert_non_null(strstr(buf, "locksim: interrupted: explore (algorithm setnx) searched "));
        assert_non_null(strstr(buf, " runs of the budget's 2000001024 in "));
        assert_non_null(strstr(buf, "; nothing failed yet\n"));
        slurp(sp("locksim_explore_left"), buf, sizeof buf);
        assert_string_equal(buf, ""); /* no process of explore's session is left */
    }
    remove(sp("locksim_explore_err"));
    remove(sp("locksim_explore_rc"));
    remove(sp("locksim_explore_left"));
}

/* Peak RSS in KiB of `locksim ARGS` (stdout to /dev/null), the largest of
 * the batch parent and its workers (wait4 counts the waited-for children). */
static long peak_rss_kib(const char *args) {
    char cmd[1024];
    /* Under ASan (make sanitize) freed blocks wait in a quarantine of up to
     * 256 MiB, so RSS would grow with the number of frees, not with live
     * memory: measure with the quarantine off (other binaries ignore it). */
    snprintf(cmd, sizeof cmd,
             "ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0\" exec %s %s >/dev/null 2>&1", bin(),
             args);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    struct rusage ru;
    assert_true(pid > 0 && wait4(pid, &st, 0, &ru) == pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    return ru.ru_maxrss;
}

/* Memory is flat in the number of runs: the parent holds a window of
 * results, not one per run, and a worker that runs ahead waits on its pipe.
 * Before the window, 100,000 runs took 19 MiB here against 2.2 at 1,000. */
static void test_batch_memory_flat(void **state) {
    (void)state;
    long small = peak_rss_kib("batch scenarios/gc-pause-outlives-lease.lsim --seeds 1..1000 --format jsonl --jobs 2");
    long large = peak_rss_kib("batch scenarios/gc-pause-outlives-lease.lsim --seeds 1..100000 --format jsonl --jobs 2");
    printf("peak RSS: 1,000 runs %ld KiB, 100,000 runs %ld KiB\n", small, large);
    assert_true(large < small + 1024);
}

/* check compares each trace with its golden trace: a deliberately changed
 * scenario (in a temporary copy) fails, and the report points at the first
 * event that changed, in both versions; --update records it and says so. */
static void test_check_golden_divergence(void **state) {
    (void)state;
    assert_int_equal(system(fmt("rm -rf %1$s/locksim_gold && mkdir -p %1$s/locksim_gold && "
                                "cp scenarios/gc-pause-outlives-lease.lsim %1$s/locksim_gold/",
                                scratch())),
                     0);
    struct result *r = run(fmt("check --update %1$s/locksim_gold", scratch()));
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, fmt("new %1$s/locksim_gold/golden/gc-pause-outlives-lease.jsonl: ", scratch())));
    r = run(fmt("check %1$s/locksim_gold", scratch()));
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "1 golden traces matched"));
    /* B works 4 s instead of 5 s: every expectation still holds... */
    assert_int_equal(system(fmt("sed -i 's/write; work 5s; release/write; work 4s; release/' "
                                "%1$s/locksim_gold/gc-pause-outlives-lease.lsim",
                                scratch())),
                     0);
    assert_int_equal(run(fmt("check --no-golden %1$s/locksim_gold", scratch()))->code, 0);
    r = run(fmt("check %1$s/locksim_gold", scratch()));
    /* ...but the trace changed, and check says where: event 26 of the golden
     * trace (which leaves out message traffic), B's work. */
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->out, fmt("%1$s/locksim_gold/gc-pause-outlives-lease.lsim: trace differs from its golden "
                                       "trace %1$s/locksim_gold/golden/gc-pause-outlives-lease.jsonl",
                                       scratch())));
    /* B's shorter work changes no figure, no grant and no write. */
    assert_non_null(strstr(r->out, "  the same in meaning (verdict, metrics, who held the lock when, every write); "
                                   "the events moved:\n  first divergence at event #26 (t=31s); golden has 49 "
                                   "events, now has 49\n"));
    assert_non_null(strstr(r->out, "           #25 t=31s B point a=6 b=1 \"after-write\"\n"
                                   "  - golden #26 t=31s B work-start a=5000000000\n"
                                   "  - golden #27 t=31s B double-entry-begin peer=A\n"));
    assert_non_null(strstr(r->out, "  + now    #26 t=31s B work-start a=4000000000\n"));
    assert_non_null(strstr(r->out, fmt("FAIL %1$s/locksim_gold/gc-pause-outlives-lease.lsim", scratch())));
    /* The same in TAP, where CI reads it. */
    r = run(fmt("check --format tap %1$s/locksim_gold", scratch()));
    assert_non_null(strstr(r->out, fmt("not ok 1 - %1$s/locksim_gold/gc-pause-outlives-lease.lsim", scratch())));
    assert_non_null(strstr(r->out, "first divergence at event #26"));
    /* An intended change: --update rewrites it and prints the digests. */
    r = run(fmt("check --update %1$s/locksim_gold", scratch()));
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, fmt("updated %1$s/locksim_gold/golden/gc-pause-outlives-lease.jsonl: ", scratch())));
    assert_int_equal(run(fmt("check %1$s/locksim_gold", scratch()))->code, 0);
    /* A change in message traffic alone (here: the golden digest edited, as
     * a change that moved only msg-send/msg-recv would leave it) fails too,
     * and says that only the traffic moved. */
    assert_int_equal(system(fmt("sed -i -E 's/\"digest\":\"[0-9a-f]{16}\"/\"digest\":\"0123456789abcdef\"/' "
                                "%1$s/locksim_gold/golden/gc-pause-outlives-lease.jsonl",
                                scratch())),
                     0);
    r = run(fmt("check %1$s/locksim_gold", scratch()));
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->out, "(digest 0123456789abcdef, now "));
    assert_non_null(strstr(r->out, "  the same events; only the message traffic changed (msg-send and msg-recv, "
                                   "which golden traces leave out: 32 then, 32 now)\n"));
    assert_int_equal(run(fmt("check --update %1$s/locksim_gold", scratch()))->code, 0);
    /* A golden trace of the earlier form (every event, no digest) is judged
     * by its events' hash, and --update rewrites it without the traffic. */
    assert_int_equal(run(fmt("run %1$s/locksim_gold/gc-pause-outlives-lease.lsim --no-timeline --trace "
                             "%1$s/locksim_gold/golden/gc-pause-outlives-lease.jsonl",
                             scratch()))
                             ->code,
                     0);
    r = run(fmt("check %1$s/locksim_gold", scratch()));
    assert_int_equal(r->code, 0);
    r = run(fmt("check --update %1$s/locksim_gold", scratch()));
    assert_non_null(strstr(r->out, fmt("rewrote %1$s/locksim_gold/golden/gc-pause-outlives-lease.jsonl without its "
                                       "message traffic: ",
                                       scratch())));
    /* A scenario added beside golden traces without its own fails. */
    assert_int_equal(system(fmt("cp scenarios/ttl-with-headroom.lsim %1$s/locksim_gold/", scratch())), 0);
    r = run(fmt("check %1$s/locksim_gold", scratch()));
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->out, fmt("no golden trace %1$s/locksim_gold/golden/ttl-with-headroom.jsonl", scratch())));
    /* Overrides are not compared with golden traces; --update refuses them. */
    assert_int_equal(
            run(fmt("check --set lock.ttl=30s %1$s/locksim_gold/gc-pause-outlives-lease.lsim", scratch()))->code, 0);
    assert_int_equal(run(fmt("check --update --seed 2 %1$s/locksim_gold", scratch()))->code, 64);
    assert_int_equal(system(fmt("rm -rf %1$s/locksim_gold", scratch())), 0);
}

/* The catalog's golden traces are exactly what --update writes now: check
 * compares the digest in their header, so an event edited by hand (or a
 * writer change) would otherwise go unseen. */
static void test_golden_traces_are_current(void **state) {
    (void)state;
    char d[4200];
    snprintf(d, sizeof d, "%s", sp("locksim_regold"));
    assert_int_equal(system(fmt("rm -rf %1$s && mkdir -p %1$s", d)), 0);
    struct result *r = run(fmt("check --update --golden %s scenarios", d));
    assert_int_equal(r->code, 0);
    assert_int_equal(system(fmt("diff -r -q scenarios/golden %s", d)), 0);
    /* Small enough to read in a review: no file over 256 KiB. */
    assert_int_equal(system("test -z \"$(find scenarios/golden -name '*.jsonl' -size +256k)\""), 0);
    assert_int_equal(system(fmt("rm -rf %s", d)), 0);
}

/* check --update blesses only runs that pass: a change that breaks an
 * expect line (a TTL past the pause: the run is SAFE, the file expects
 * UNSAFE) is refused with the line and column of the expectation, exit 1,
 * and no golden trace is written or rewritten, also not the other file's. */
static void test_check_update_refuses_failing(void **state) {
    (void)state;
    char d[4200];
    snprintf(d, sizeof d, "%s", sp("locksim_bless")); /* sp()'s buffer is reused */
    assert_int_equal(system(fmt("rm -rf %1$s && mkdir -p %1$s && cp scenarios/gc-pause-outlives-lease.lsim "
                                "scenarios/ttl-with-headroom.lsim %1$s/",
                                d)),
                     0);
    struct result *r = run(fmt("check --update %s", d));
    assert_int_equal(r->code, 0);
    char before[1 << 14];
    slurp(fmt("%s/golden/gc-pause-outlives-lease.jsonl", d), before, sizeof before);
    /* The lease now outlives the pause, and a third file is new. */
    assert_int_equal(system(fmt("sed -i 's/^param ttl=30s/param ttl=40s/' %1$s/gc-pause-outlives-lease.lsim && "
                                "cp scenarios/fencing-rejects-stale-write.lsim %1$s/",
                                d)),
                     0);
    r = run(fmt("check --update %s", d));
    assert_int_equal(r->code, 1); /* README's table: an expect line failed */
    assert_non_null(
            strstr(r->err, fmt("%s/gc-pause-outlives-lease.lsim:19:1: expect verdict UNSAFE: measured SAFE\n", d)));
    assert_non_null(strstr(r->err, "locksim: check --update: 1 of 3 scenarios does not pass its expect lines; "
                                   "no golden trace was written"));
    assert_null(strstr(r->out, "updated "));
    assert_null(strstr(r->out, "new "));
    char after[1 << 14];
    slurp(fmt("%s/golden/gc-pause-outlives-lease.jsonl", d), after, sizeof after);
    assert_string_equal(before, after);
    assert_int_equal(access(fmt("%s/golden/fencing-rejects-stale-write.jsonl", d), F_OK), -1);
    /* The file as it was: the update goes through for every file. */
    assert_int_equal(system(fmt("cp scenarios/gc-pause-outlives-lease.lsim %1$s/", d)), 0);
    r = run(fmt("check --update %s", d));
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, fmt("new %s/golden/fencing-rejects-stale-write.jsonl: ", d)));
    assert_int_equal(system(fmt("rm -rf %s", d)), 0);
}

/* diff: 0 for the same trace; otherwise 1, what changed in meaning (the
 * checker's figures, who held the lock when, the writes), then the first
 * divergent event. */
static void test_diff(void **state) {
    (void)state;
    run(fmt("run scenarios/gc-pause-outlives-lease.lsim --trace %1$s/locksim_d1.jsonl", scratch()));
    run(fmt("run scenarios/gc-pause-outlives-lease.lsim --set lock.ttl=31s --trace %1$s/locksim_d2.jsonl", scratch()));
    struct result *r = run(fmt("diff %1$s/locksim_d1.jsonl %1$s/locksim_d1.jsonl", scratch()));
    assert_int_equal(r->code, 0);
    assert_string_equal(r->out, "same: 81 events\n");
    r = run(fmt("diff %1$s/locksim_d1.jsonl %1$s/locksim_d2.jsonl --context 1", scratch()));
    assert_int_equal(r->code, 1);
    /* In meaning: with a 31s TTL B's grant moves from 31s to 32s (its
     * first try after the key's expiry at 31.001s), so no double entry,
     * and B's write is not made (A's sold the stock). */
    assert_non_null(strstr(r->out, fmt("A: %1$s/locksim_d1.jsonl\nB: %1$s/locksim_d2.jsonl\nWhat the checker says:\n"
                                       "  double-entries         1 -> 0\n",
                                       scratch())));
    assert_non_null(strstr(r->out, "\nWho held the lock when:\n  B acquires (#1): at 31s -> at 32s\n"));
    assert_non_null(strstr(r->out, "\nWrites at the resource:\n  B writes (#1): at 31s, value 0, accepted -> none\n"));
    /* Then the raw events: the grant's TTL is the first difference (srv-grant at t=0, a = ttl). */
    assert_non_null(strstr(r->out, "\nfirst divergence at event #7 (t=0s); A has 81 events, B has 82\n"));
    assert_non_null(strstr(r->out, "- A #"));
    assert_non_null(strstr(r->out, "srv-grant peer=A a=30000000000"));
    assert_non_null(strstr(r->out, "srv-grant peer=A a=31000000000"));
    /* Against a golden trace (no message traffic), the run's trace is
     * compared without its messages, and the note says so. */
    r = run(fmt("diff %1$s/locksim_d1.jsonl scenarios/golden/gc-pause-outlives-lease.jsonl", scratch()));
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, fmt("(scenarios/golden/gc-pause-outlives-lease.jsonl is a golden trace, without "
                                       "message traffic: %1$s/locksim_d1.jsonl is compared without its 32 msg-send "
                                       "and msg-recv events)\nsame: 49 events\n",
                                       scratch())));
    r = run(fmt("diff scenarios/golden/gc-pause-outlives-lease.jsonl %1$s/locksim_d2.jsonl", scratch()));
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->out, "  double-entries         1 -> 0\n"));
    write_file(sp("locksim_d3.jsonl"), "not a trace\n");
    assert_int_equal(run(fmt("diff %1$s/locksim_d1.jsonl %1$s/locksim_d3.jsonl", scratch()))->code, 65);
    assert_int_equal(run(fmt("diff %1$s/locksim_d1.jsonl /nonexistent.jsonl", scratch()))->code, 66);
    assert_int_equal(run(fmt("diff %1$s/locksim_d1.jsonl", scratch()))->code, 64);
    remove(sp("locksim_d1.jsonl"));
    remove(sp("locksim_d2.jsonl"));
    remove(sp("locksim_d3.jsonl"));
}

/* The value of "key": in a JSON line, as text (up to , or }). */
static void json_field(const char *json, const char *key, char *out, size_t n) {
    char k[80];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(json, k);
    out[0] = '\0';
    if (!p) return;
    p += strlen(k);
    size_t l = *p == '"' ? strcspn(p + 1, "\"") + 2 : strcspn(p, ",}");
    snprintf(out, n, "%.*s", (int)l, p);
}

/* The recorded trace of these tests: a name of this process's own (other
 * checkouts may run the suite at the same time). */
static const char *ct_path(void) {
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, fmt("%1$s/locksim_ct_%%ld.jsonl", scratch()), (long)getpid());
    return path;
}

/* check-trace over every catalog scenario's recorded trace gives the
 * verdict, headline and every figure that run gave; its "events" are the
 * trace's own. */
static void test_check_trace_matches_run(void **state) {
    (void)state;
    static const char *const keys[] = {"verdict",
                                       "headline",
                                       "double_entries",
                                       "double_entry_ns",
                                       "stale_writes_accepted",
                                       "stale_writes_rejected",
                                       "lost_updates",
                                       "wrong_releases",
                                       "stuck",
                                       "fenced_out",
                                       "acquires",
                                       "failed_acquires",
                                       "refused_attempts",
                                       "writes_accepted",
                                       "writes_rejected",
                                       "duplicated_work",
                                       "initial_stock",
                                       "final_stock",
                                       "acquire_p50_ns",
                                       "acquire_p99_ns",
                                       "acquire_max_ns",
                                       "end_ns",
                                       "trace_hash",
                                       "seed",
                                       "title",
                                       "outcome"};
    FILE *ls = popen("ls scenarios/*.lsim", "r");
    assert_non_null(ls);
    char file[512];
    static char ran[1 << 21];
    int n = 0;
    while (fgets(file, sizeof file, ls)) {
        file[strcspn(file, "\n")] = '\0';
        char args[1200];
        snprintf(args, sizeof args, "run %s --format json --trace %s", file, ct_path());
        struct result *r = run(args);
        snprintf(ran, sizeof ran, "%s", r->out);
        snprintf(args, sizeof args, "check-trace %s --scenario %s --format json", ct_path(), file);
        r = run(args);
        assert_int_equal(r->code, 0);
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            char a[512], b[512];
            json_field(ran, keys[k], a, sizeof a);
            json_field(r->out, keys[k], b, sizeof b);
            if (strcmp(a, b) != 0) fprintf(stderr, "%s: %s: run %s, check-trace %s\n", file, keys[k], a, b);
            assert_true(a[0] != '\0');
            assert_string_equal(a, b);
        }
        /* "events" counts the events read (the lines after the header),
         * not what the file's run-end claims the engine processed. */
        static char text[1 << 24];
        slurp(ct_path(), text, sizeof text);
        long lines = 0;
        for (const char *p = text; *p; p++) lines += *p == '\n';
        char ev[32];
        json_field(r->out, "events", ev, sizeof ev);
        assert_int_equal(atol(ev), lines - 1);
        n++;
    }
    pclose(ls);
    assert_true(n >= 50);
    /* The text form is run's verdict block, line for line. */
    char args[1200];
    snprintf(args, sizeof args, "run scenarios/heartbeat-frozen-by-pause.lsim --no-timeline --trace %s", ct_path());
    struct result *r = run(args);
    char *v = strstr(r->out, "\nVerdict: "), *e = v ? strstr(v, "\nExpectations:") : NULL;
    assert_non_null(e);
    snprintf(ran, sizeof ran, "%.*s", (int)(e - v), v);
    snprintf(args, sizeof args, "check-trace %s", ct_path());
    r = run(args);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, ran));
    snprintf(args, sizeof args, "check-trace %s --purpose nonsense", ct_path());
    assert_int_equal(run(args)->code, 64);
    assert_int_equal(run("check-trace /nonexistent.jsonl")->code, 66);
    remove(ct_path());
}

/* check-trace --scenario judges the scenario's expect lines against a
 * trace recorded elsewhere: each line with its measured value, exit 1 when
 * one fails; not applicable to a trace of another algorithm or seed. */
static void test_check_trace_judges_expects(void **state) {
    (void)state;
    const char *gc = "scenarios/gc-pause-outlives-lease.lsim";
    /* A trace recorded with a shorter pause: SAFE, where the file says UNSAFE
     * (a trace does not record --set: it is judged as the scenario's). */
    run(fmt("run %s --set pause=20s --trace %s", gc, ct_path()));
    struct result *r = run(fmt("check-trace %s --scenario %s", ct_path(), gc));
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->out, fmt("  judged against the expect lines of %s\n", gc)));
    assert_non_null(strstr(
            r->out, "\nExpectations:\n  FAIL  line 19  expect verdict UNSAFE                   (measured SAFE)\n"));
    assert_non_null(strstr(r->out, "  ok    line 24  expect wrong-releases = 0               (measured 0)\n"));
    r = run(fmt("check-trace %s --scenario %s --format json", ct_path(), gc));
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->out, "\"outcome\":\"FAIL\",\"events\":"));
    assert_non_null(strstr(r->out, "\"expects\":10,\"failed_expects\":7,"));
    assert_non_null(strstr(r->err, fmt("%s:19:1: expect verdict UNSAFE: measured SAFE\n", gc)));
    /* The file's own run passes. */
    run(fmt("run %s --trace %s", gc, ct_path()));
    r = run(fmt("check-trace %s --scenario %s", ct_path(), gc));
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "  ok    line 19  expect verdict UNSAFE                   (measured UNSAFE)\n"));
    /* Another algorithm's trace: not applicable, unless --expect. */
    run(fmt("run %s --algo fenced-lease --set fencing=on --trace %s", gc, ct_path()));
    r = run(fmt("check-trace %s --scenario %s", ct_path(), gc));
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "\nExpectations: not applicable: algorithm fenced-lease (the file's: lease) changes "
                                   "the scenario they were written for (--expect judges them)\n  n/a   line 19"));
    r = run(fmt("check-trace %s --scenario %s --format json", ct_path(), gc));
    assert_non_null(strstr(r->out, "\"outcome\":\"NOT-APPLICABLE\",\"not_applicable\":\"algorithm fenced-lease "
                                   "(the file's: lease)\""));
    assert_int_equal(run(fmt("check-trace %s --scenario %s --expect", ct_path(), gc))->code, 1);
    /* A trace cut short decides nothing: TRUNCATED, exit 1, no expectation judged. */
    run(fmt("run %s --trace %s", gc, ct_path()));
    assert_int_equal(system(fmt("head -n 20 %1$s > %1$s.cut && mv %1$s.cut %1$s", ct_path())), 0);
    r = run(fmt("check-trace %s --scenario %s", ct_path(), gc));
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->out, "Expectations: (not decided: the run was cut short)\n  ----  line 19"));
    /* A client the trace does not have: the scenario's line and column, 65. */
    write_file(sp("zed.lsim"),
               "lock lease\nclient A: acquire; release\nclient Zed: acquire\nexpect Zed acquires at 1s\n");
    r = run(fmt("check-trace %s --scenario %s", ct_path(), sp("zed.lsim")));
    assert_int_equal(r->code, 65);
    assert_non_null(strstr(r->err, fmt("%s:4:8: expect names client 'Zed', which the trace %s has no node of: expected "
                                       "the trace of this scenario\n",
                                       sp("zed.lsim"), ct_path())));
    assert_int_equal(run(fmt("check-trace %s --expect", ct_path()))->code, 64);
    remove(ct_path());
    remove(sp("zed.lsim"));
}

/* The seed-varying catalog scenarios: the unsafe fractions over seeds
 * 1..1000 that docs/scenarios.md and their comments state. */
static void test_seed_varying_fractions(void **state) {
    (void)state;
    struct result *r = run("batch scenarios/lease-headroom-vs-network-delay.lsim "
                           "scenarios/fenced-lease-vs-network-delay.lsim scenarios/gc-pause-near-ttl-retry-jitter.lsim "
                           "--seeds 1..1000 --expect");
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->out, "scenarios/fenced-lease-vs-network-delay.lsim  fenced-lease  seeds 1..1000: 1000 "
                                   "runs, 15 passed, 985 failed; SAFE 955, UNSAFE 45, STUCK 0\n"));
    assert_non_null(strstr(r->out, "scenarios/gc-pause-near-ttl-retry-jitter.lsim  lease  seeds 1..1000: 1000 runs, "
                                   "240 passed, 760 failed; SAFE 760, UNSAFE 240, STUCK 0\n"));
    assert_non_null(strstr(r->out, "scenarios/lease-headroom-vs-network-delay.lsim  lease  seeds 1..1000: 1000 runs, "
                                   "60 passed, 940 failed; SAFE 796, UNSAFE 204, STUCK 0\n"));
    assert_non_null(strstr(r->out, "\n315 passed, 2685 failed\n"));
}

/* sweep on a small known grid: the seed's GC pause (5s..32s) against the
 * TTL, for lease and fenced-lease. The lease loses an update while the TTL
 * ends before the pause does; fenced-lease turns the overlap into a
 * rejected stale write (double entry, no damage). Both are safe from a TTL
 * equal to the pause's end on: at 32s the key's deadline is the instant A
 * resumes, and Redis keeps a key through its deadline's millisecond. */
/* Issue 24: a list of words (--vary mode=a,b,c) is labelled at every value,
 * though the cells are narrower than a label's spacing (staggered when a
 * word is wider than a cell); numbers are thinned
 * to every 2nd but keep the last even when it falls between. */
static void test_heatmap_axis_labels(void **state) {
    (void)state;
    static const char *const words[] = {"off", "on", "strict", "lax"}, *const nums[] = {"1", "2", "3", "4"};
    static const char *const panels[] = {"lease"};
    struct heatmap_cell cells[4];
    memset(cells, 0, sizeof cells);
    struct heatmap h = {.title = "t",
                        .x_key = "mode",
                        .x_vals = words,
                        .nx = 4,
                        .ny = 1,
                        .panels = panels,
                        .npanels = 1,
                        .cells = cells};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(heatmap_svg_write(f, &h), 0);
    fclose(f);
    for (int i = 0; i < 4; i++) assert_non_null(strstr(buf, fmt("text-anchor=\"middle\">%s</text>", words[i])));
    /* "strict" is wider than its 28 px cell: every other label drops a line
     * (cells 56..78, labels at 92 and 104), so neighbours do not run together;
     * the key goes under both. */
    assert_non_null(strstr(buf, "<text x=\"104\" y=\"92\" text-anchor=\"middle\">off</text>"));
    assert_non_null(strstr(buf, "<text x=\"132\" y=\"104\" text-anchor=\"middle\">on</text>"));
    assert_non_null(strstr(buf, "<text x=\"160\" y=\"92\" text-anchor=\"middle\">strict</text>"));
    assert_non_null(strstr(buf, "<text x=\"146\" y=\"120\" text-anchor=\"middle\">mode</text>"));
    free(buf);
    /* Words no wider than a cell stay on one line. */
    h.nx = 2;
    f = open_memstream(&buf, &len);
    assert_int_equal(heatmap_svg_write(f, &h), 0);
    fclose(f);
    assert_non_null(strstr(buf, "<text x=\"132\" y=\"92\" text-anchor=\"middle\">on</text>"));
    assert_non_null(strstr(buf, "<text x=\"118\" y=\"108\" text-anchor=\"middle\">mode</text>"));
    free(buf);
    h.nx = 4;
    h.x_vals = nums;
    f = open_memstream(&buf, &len);
    assert_int_equal(heatmap_svg_write(f, &h), 0);
    fclose(f);
    assert_non_null(strstr(buf, "text-anchor=\"middle\">1</text>"));
    assert_null(strstr(buf, "text-anchor=\"middle\">2</text>"));
    assert_null(strstr(buf, "text-anchor=\"middle\">3</text>")); /* too close to the last */
    assert_non_null(strstr(buf, "text-anchor=\"middle\">4</text>"));
    free(buf);
}

/* Issue 24: panels that would make the picture wider than 1600 px wrap into
 * rows, each row with its y axis, the legend under the last row. */
static void test_heatmap_panels_wrap(void **state) {
    (void)state;
    static const char *x[30], *const ys[] = {"1s"}, *const panels[] = {"lease", "fenced-lease"};
    static char xv[30][12]; /* "%d" of any int: what -O1 asks of the bound */
    for (int i = 0; i < 30; i++) snprintf(xv[i], sizeof xv[i], "%d", i), x[i] = xv[i];
    static struct heatmap_cell cells[2 * 30];
    for (int i = 0; i < 2 * 30; i++) cells[i].count[HEATMAP_SAFE] = 1;
    struct heatmap h = {.title = "t",
                        .x_key = "pause",
                        .y_key = "ttl",
                        .x_vals = x,
                        .nx = 30,
                        .y_vals = ys,
                        .ny = 1,
                        .panels = panels,
                        .npanels = 2,
                        .cells = cells};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(heatmap_svg_write(f, &h), 0);
    fclose(f);
    /* 90 + 2 x (30 x 28 + 40) = 1850 > 1600: one panel a row, 90 + 880 wide;
     * the second row's cells start 22 + 64 below the first's. */
    assert_non_null(strstr(buf, "width=\"970\" height=\"248\""));
    char *second = strstr(buf, "data-algo=\"fenced-lease\"");
    assert_non_null(second);
    assert_non_null(strstr(second, "data-x=\"0\" data-y=\"1s\" data-class=\"safe\" x=\"90\" y=\"142\""));
    assert_non_null(strstr(buf, "<text x=\"84\" y=\"157\" text-anchor=\"end\">1s</text>"));
    free(buf);
}

static void test_sweep_grid_and_heatmap(void **state) {
    (void)state;
    struct result *r = run(fmt("sweep scenarios/gc-pause-outlives-lease.lsim --vary lock.ttl=30s..34s/2s "
                               "--algos lease,fenced-lease --svg %1$s/locksim_sweep.svg",
                               scratch()));
    assert_int_equal(r->code, 0);
    assert_string_equal(r->out, "\"lock.ttl\",algorithm,runs,safe,double-entry,damage,stuck,error,damage_fraction,"
                                "double_entry_fraction,class,note\n"
                                "\"30s\",\"lease\",1,0,0,1,0,0,1.0000,0.0000,damage,\"\"\n"
                                /* fenced: two inside, no damage; the verdict is SAFE, so is the measure */
                                "\"30s\",\"fenced-lease\",1,0,1,0,0,0,0.0000,1.0000,double-entry,\"\"\n"
                                "\"32s\",\"lease\",1,1,0,0,0,0,0.0000,0.0000,safe,\"\"\n"
                                "\"32s\",\"fenced-lease\",1,1,0,0,0,0,0.0000,0.0000,safe,\"\"\n"
                                "\"34s\",\"lease\",1,1,0,0,0,0,0.0000,0.0000,safe,\"\"\n"
                                "\"34s\",\"fenced-lease\",1,1,0,0,0,0,0.0000,0.0000,safe,\"\"\n");
    /* The heatmap: two panels, three cells each, in the class colours. */
    static char svg[1 << 16];
    slurp(sp("locksim_sweep.svg"), svg, sizeof svg);
    char *lease = strstr(svg, "<g class=\"panel\" data-algo=\"lease\">");
    char *fenced = strstr(svg, "<g class=\"panel\" data-algo=\"fenced-lease\">");
    assert_non_null(lease);
    assert_non_null(fenced);
    assert_true(lease < fenced);
    *fenced = '\0'; /* lease's panel is before fenced-lease's */
    assert_non_null(strstr(lease, "data-x=\"30s\" data-y=\"\" data-class=\"damage\" x=\"90\" y=\"56\" width=\"28\" "
                                  "height=\"22\" fill=\"#c0392b\""));
    assert_non_null(strstr(lease, "data-x=\"34s\" data-y=\"\" data-class=\"safe\" x=\"146\" y=\"56\" width=\"28\" "
                                  "height=\"22\" fill=\"#a6dcf0\""));
    *fenced = '<';
    assert_non_null(strstr(fenced, "data-x=\"30s\" data-y=\"\" data-class=\"double-entry\" x=\"214\" y=\"56\" "
                                   "width=\"28\" height=\"22\" fill=\"#f0e442\""));
    assert_non_null(strstr(svg, "</svg>\n"));
    /* Issue 24: the title is the scenario's `title` line, the file name a
     * small subtitle without its directories; no path in the picture. */
    assert_non_null(strstr(svg, "font-size=\"14\">GC pause outlives the lease</text>\n"
                                "<text class=\"subtitle\" x=\"90\" y=\"34\" font-size=\"9\" fill=\"#555555\">"
                                "gc-pause-outlives-lease.lsim</text>\n"));
    assert_null(strstr(svg, "scenarios/"));
    /* Numbers may be thinned, never the first and last: 30s and 34s. */
    assert_non_null(strstr(svg, "text-anchor=\"middle\">30s</text>"));
    assert_non_null(strstr(svg, "text-anchor=\"middle\">34s</text>"));
    /* Seeds that disagree: the cell mixes the colours by count (27 safe,
     * 73 damage) and shows the unsafe percentage. */
    r = run(fmt("sweep scenarios/gc-pause-near-ttl-retry-jitter.lsim --vary lock.ttl=29s --seeds 1..100 --format jsonl "
                "--svg %1$s/locksim_sweep.svg",
                scratch()));
    assert_int_equal(r->code, 0);
    assert_string_equal(r->out, "{\"set\":{\"lock.ttl\":\"29s\"},\"algorithm\":\"lease\",\"runs\":100,\"safe\":27,"
                                "\"double-entry\":0,\"damage\":73,\"stuck\":0,\"error\":0,\"damage_fraction\":0.7300,"
                                "\"double_entry_fraction\":0.0000,"
                                "\"class\":\"mixed\"}\n");
    slurp(sp("locksim_sweep.svg"), svg, sizeof svg);
    assert_non_null(strstr(svg, "data-class=\"mixed\" x=\"90\" y=\"56\" width=\"28\" height=\"22\" fill=\"#b96560\""));
    assert_non_null(strstr(svg, ">73%</text>"));
    /* Two axes: a row per value of the second; the same bytes for any --jobs. */
    r = run("sweep scenarios/gc-pause-outlives-lease.lsim --vary lock.ttl=20s..40s/10s --vary fencing=off,on "
            "--jobs 1");
    static char one[1 << 21];
    snprintf(one, sizeof one, "%s", r->out);
    assert_non_null(strstr(one, "\"lock.ttl\",\"fencing\",algorithm,"));
    assert_non_null(strstr(one, "\"40s\",\"on\",\"lease\",1,1,0,0,0,0,0.0000,0.0000,safe,\"\"\n"));
    assert_string_equal(run("sweep scenarios/gc-pause-outlives-lease.lsim --vary lock.ttl=20s..40s/10s "
                            "--vary fencing=off,on --jobs 2")
                                ->out,
                        one);
    /* Usage errors. */
    assert_int_equal(run("sweep scenarios/gc-pause-outlives-lease.lsim")->code, 64);
    assert_int_equal(run("sweep scenarios/gc-pause-outlives-lease.lsim --vary ttl=5s..1s/1s")->code, 64);
    assert_int_equal(run("sweep scenarios/gc-pause-outlives-lease.lsim --vary ttl=1s..5s")->code, 64);
    /* Two outputs on one file: refused before anything runs. */
    r = run(fmt("sweep scenarios/gc-pause-outlives-lease.lsim --vary ttl=1s,2s --out %1$s --svg %1$s", sp("same.out")));
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "--out and --svg name the same file"));
    assert_int_equal(access(sp("same.out"), F_OK), -1);
    /* A shard writes JSON Lines only; merge draws the pictures. */
    r = run("sweep scenarios/gc-pause-outlives-lease.lsim --vary ttl=1s,2s --shard 1/2 --png /nonexistent/x.png");
    assert_int_equal(r->code, 64);
    /* A key the scenario does not know fails every run: the worst error. */
    r = run("sweep scenarios/gc-pause-outlives-lease.lsim --vary nosuch=1,2");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->out, ",0,0,0,0,1,0.0000,0.0000,error,\"--set: unknown option 'nosuch' for lease"));
    remove(sp("locksim_sweep.svg"));
}

/* Issue 24: three and four --vary keys. The records carry every key; the
 * heatmap draws a band per algorithm, a facet per value of the third key
 * ("KEY3=V" above it) and a section per value of the fourth ("KEY4=V"). */
static void test_sweep_facets(void **state) {
    (void)state;
    const char *args = "sweep scenarios/gc-pause-outlives-lease.lsim --vary pause=25s,30s,35s --vary ttl=20s,40s "
                       "--vary fencing=off,on --algos lease";
    struct result *r = run(fmt("%s --svg %s", args, sp("facets.svg")));
    assert_int_equal(r->code, 0);
    /* CSV: a column per key, named by it, and nx * ny * nz = 3 * 2 * 2 rows. */
    assert_ptr_equal(strstr(r->out, "\"pause\",\"ttl\",\"fencing\",algorithm,runs,"), r->out);
    assert_int_equal(count_lines(r->out), 1 + 12);
    /* Fencing turns the damage at pause 30s, TTL 20s into a rejected double entry. */
    assert_non_null(strstr(r->out, "\n\"30s\",\"20s\",\"off\",\"lease\",1,0,0,1,0,0,1.0000,0.0000,damage,\"\"\n"));
    assert_non_null(strstr(r->out, "\n\"30s\",\"20s\",\"on\",\"lease\",1,0,1,0,0,0,0.0000,1.0000,double-entry,\"\"\n"));
    assert_non_null(strstr(r->err, "locksim: sweep: 12 runs (12 cells x 1 algorithm)"));
    /* JSON Lines: a member per key in "set". */
    r = run(fmt("%s --format jsonl", args));
    assert_int_equal(r->code, 0);
    assert_int_equal(count_lines(r->out), 12);
    assert_non_null(strstr(r->out, "{\"set\":{\"pause\":\"35s\",\"ttl\":\"40s\",\"fencing\":\"on\"},"
                                   "\"algorithm\":\"lease\","));
    /* The SVG: the algorithm's band, then a facet per fencing value, side
     * by side; the same cell is damage in one and double entry in the other. */
    static char svg[1 << 17];
    slurp(sp("facets.svg"), svg, sizeof svg);
    char *band = strstr(svg,
                        "<text class=\"band\" x=\"90\" y=\"52\" font-size=\"12\" font-weight=\"bold\">lease</text>");
    char *off = strstr(svg, "<g class=\"panel\" data-algo=\"lease\" data-z=\"off\">\n"
                            "<text x=\"90\" y=\"74\" class=\"facet\">fencing=off</text>");
    char *on = strstr(svg, "<g class=\"panel\" data-algo=\"lease\" data-z=\"on\">\n"
                           "<text x=\"214\" y=\"74\" class=\"facet\">fencing=on</text>");
    assert_non_null(band);
    assert_non_null(off);
    assert_non_null(on);
    assert_true(band < off && off < on);
    assert_non_null(strstr(off, "data-x=\"30s\" data-y=\"20s\" data-class=\"damage\" x=\"118\" y=\"84\""));
    assert_non_null(strstr(on, "data-x=\"30s\" data-y=\"20s\" data-class=\"double-entry\" x=\"242\" y=\"84\""));
    assert_non_null(strstr(svg, "<title>pause=30s ttl=20s fencing=on algo lease, double-entry 1</title>"));
    /* One legend for the whole picture. */
    assert_non_null(strstr(svg, ">safe</text>"));
    assert_null(strstr(strstr(svg, ">safe</text>") + 1, ">safe</text>"));
    /* Four keys: a section per value of the fourth, a grey rule before the second. */
    r = run(fmt("%s --vary latency=1ms,500ms --svg %s --png %s", args, sp("facets.svg"), sp("facets.png")));
    assert_int_equal(r->code, 0);
    assert_int_equal(count_lines(r->out), 1 + 24);
    assert_ptr_equal(strstr(r->out, "\"pause\",\"ttl\",\"fencing\",\"latency\",algorithm,"), r->out);
    slurp(sp("facets.svg"), svg, sizeof svg);
    char *s1 = strstr(svg, "font-size=\"14\" font-weight=\"bold\">latency=1ms</text>");
    char *s2 = strstr(svg, "font-size=\"14\" font-weight=\"bold\">latency=500ms</text>");
    assert_non_null(s1);
    assert_non_null(s2);
    assert_true(s1 < s2);
    assert_non_null(strstr(svg, "data-w=\"500ms\""));
    assert_non_null(strstr(s1, "height=\"1\" fill=\"#bbbbbb\"/>"));
    char png[16];
    slurp(sp("facets.png"), png, sizeof png);
    assert_memory_equal(png, "\x89PNG\r\n", 6);
    /* Facets narrower than their titles are spaced by the titles: 12
     * characters at 7 px and 12 px apart, not one 28 px cell and a 40 px gap. */
    r = run(fmt("sweep scenarios/gc-pause-outlives-lease.lsim --vary pause=30s --vary ttl=20s "
                "--vary lock.ttl=20s,40s --algos lease --svg %s",
                sp("facets.svg")));
    assert_int_equal(r->code, 0);
    slurp(sp("facets.svg"), svg, sizeof svg);
    assert_non_null(strstr(svg, "<text x=\"90\" y=\"74\" class=\"facet\">lock.ttl=20s</text>"));
    assert_non_null(strstr(svg, "<text x=\"186\" y=\"74\" class=\"facet\">lock.ttl=40s</text>"));
    /* Five keys, or a grid past a million cells: usage errors before anything runs. */
    r = run("sweep scenarios/gc-pause-outlives-lease.lsim --vary a=1 --vary b=1 --vary c=1 --vary d=1 --vary e=1");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "sweep takes at most 4 --vary keys"));
    assert_non_null(strstr(r->err, "not '--vary e=1' as a 5th"));
    assert_string_equal(r->out, "");
    r = run("sweep scenarios/gc-pause-outlives-lease.lsim --vary a=1..101/1 --vary b=1..101/1 --vary c=1..101/1 "
            "--vary d=1,2");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "a grid of more than 1000000 cells"));
    remove(sp("facets.svg"));
    remove(sp("facets.png"));
}

/* ---- Shards and merge ----------------------------------------------------------- */

static char shard_dir[128];

static int same_file(const char *a, const char *b) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cmp -s %s/%s %s/%s", shard_dir, a, shard_dir, b);
    return system(cmd) == 0;
}

/* `batch|sweep ARGS --shard k/3 --out DIR/sK.jsonl` for k = 1..3 (with
 * different --jobs: the slices do not depend on it). */
static void make_shards(const char *args, int code) {
    snprintf(shard_dir, sizeof shard_dir, fmt("%1$s/locksim_shard.%%d", scratch()), (int)getpid());
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", shard_dir, shard_dir);
    assert_int_equal(system(cmd), 0);
    for (int k = 1; k <= 3; k++) {
        snprintf(cmd, sizeof cmd, "%s --shard %d/3 --jobs %d --out %s/s%d.jsonl", args, k, k, shard_dir, k);
        assert_int_equal(run(cmd)->code, code);
    }
}

/* A batch in three shards, merged (in any order) into every format: the
 * bytes and exit status of the unsharded batch. */
static void test_shard_merge_batch(void **state) {
    (void)state;
    const char *args = "batch scenarios --seeds 1..3 --algos lease,fenced-lease --set stuck-after=30s --expect";
    make_shards(args, 1);
    /* Each shard: its header, then its slice of the 2 x 3 x N runs in order. */
    char path[256];
    static char text[1 << 16];
    snprintf(path, sizeof path, "%s/s2.jsonl", shard_dir);
    slurp(path, text, sizeof text);
    assert_true(strncmp(text, "{\"locksim_shard\":2,\"command\":\"batch\",\"shard\":2,\"of\":3,", 52) == 0);
    assert_non_null(strstr(text, "\"args\":[\"scenarios\",\"--seeds\",\"1..3\",\"--algos\",\"lease,fenced-lease\","
                                 "\"--set\",\"stuck-after=30s\",\"--expect\"]}\n{\"run\":"));
    static const char *const fmts[] = {"table", "jsonl", "csv", "junit", "tap"};
    for (int k = 0; k < 5; k++) {
        char cmd[1024], u[32], m[32];
        snprintf(u, sizeof u, "u.%s", fmts[k]);
        snprintf(m, sizeof m, "m.%s", fmts[k]);
        snprintf(cmd, sizeof cmd, "%s --format %s --out %s/%s", args, fmts[k], shard_dir, u);
        assert_int_equal(run(cmd)->code, 1);
        snprintf(cmd, sizeof cmd, "merge %s/s3.jsonl %s/s1.jsonl %s/s2.jsonl --format %s --out %s/%s", shard_dir,
                 shard_dir, shard_dir, fmts[k], shard_dir, m);
        assert_int_equal(run(cmd)->code, 1);
        assert_true(same_file(u, m));
    }
    /* Without --out, on standard output too. */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "merge %s/s1.jsonl %s/s2.jsonl %s/s3.jsonl", shard_dir, shard_dir, shard_dir);
    struct result *r = run(cmd);
    static char merged[1 << 21];
    snprintf(merged, sizeof merged, "%s", r->out);
    r = run(args);
    assert_string_equal(merged, r->out);
}

/* A seed list (--seeds 4,1..2,9: in the order written) in three shards,
 * for batch and sweep: merged, the bytes of the unsharded run, and each
 * shard's header states the list. */
static void test_shard_merge_seed_list(void **state) {
    (void)state;
    const char *args = "batch scenarios/gc-pause-outlives-lease.lsim scenarios/ttl-with-headroom.lsim "
                       "--seeds 4,1..2,9 --expect";
    make_shards(args, 0);
    char path[256], cmd[1024];
    static char text[1 << 16];
    snprintf(path, sizeof path, "%s/s1.jsonl", shard_dir);
    slurp(path, text, sizeof text);
    assert_non_null(strstr(text, "\"seeds\":[[4,4],[1,2],[9,9]],"));
    static const char *const fmts[] = {"table", "jsonl", "junit"};
    for (int k = 0; k < 3; k++) {
        snprintf(cmd, sizeof cmd, "merge %1$s/s2.jsonl %1$s/s3.jsonl %1$s/s1.jsonl --format %2$s", shard_dir, fmts[k]);
        static char merged[1 << 21];
        struct result *r = run(cmd);
        assert_int_equal(r->code, 0);
        snprintf(merged, sizeof merged, "%s", r->out);
        r = run(fmt("%s --format %s", args, fmts[k]));
        assert_int_equal(r->code, 0);
        assert_string_equal(merged, r->out);
        if (k == 0) assert_non_null(strstr(merged, "  seeds 4,1..2,9: 4 runs,"));
        if (k == 1) assert_non_null(strstr(merged, "\"seed\":4,"));
    }
    /* Shards of another list are shards of another run. */
    snprintf(cmd, sizeof cmd, "%s --seeds 4,1..2,8 --shard 1/3 --out %s/o1.jsonl",
             "batch scenarios/gc-pause-outlives-lease.lsim scenarios/ttl-with-headroom.lsim", shard_dir);
    assert_int_equal(run(cmd)->code, 0);
    snprintf(cmd, sizeof cmd, "merge %1$s/o1.jsonl %1$s/s2.jsonl %1$s/s3.jsonl", shard_dir);
    struct result *r = run(cmd);
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "their seeds differ"));
    args = "sweep scenarios/ttl-with-headroom.lsim --vary lock.ttl=1s,30s --seeds 3,1";
    make_shards(args, 0);
    snprintf(cmd, sizeof cmd, "merge %1$s/s3.jsonl %1$s/s1.jsonl %1$s/s2.jsonl", shard_dir);
    static char swept[1 << 21];
    snprintf(swept, sizeof swept, "%s", run(cmd)->out);
    assert_string_equal(swept, run(args)->out);
    assert_non_null(strstr(swept, "\"1s\",\"lease\",2,0,0,2,0,0,"));
}

/* The sweep args in three shards, merged: the CSV, JSON Lines, SVG and PNG
 * bytes of the unsharded sweep. */
static void shard_merge_sweep(const char *args) {
    make_shards(args, 0);
    char cmd[1024];
    for (int csv = 0; csv < 2; csv++) {
        const char *f = csv ? "csv" : "jsonl";
        snprintf(cmd, sizeof cmd, "%s --format %s --out %s/u.%s --svg %s/u.svg --png %s/u.png", args, f, shard_dir, f,
                 shard_dir, shard_dir);
        assert_int_equal(run(cmd)->code, 0);
        snprintf(cmd, sizeof cmd,
                 "merge %s/s2.jsonl %s/s3.jsonl %s/s1.jsonl --format %s --out %s/m.%s --svg %s/m.svg --png %s/m.png",
                 shard_dir, shard_dir, shard_dir, f, shard_dir, f, shard_dir, shard_dir);
        assert_int_equal(run(cmd)->code, 0);
        assert_true(same_file(csv ? "u.csv" : "u.jsonl", csv ? "m.csv" : "m.jsonl"));
        assert_true(same_file("u.svg", "m.svg"));
        assert_true(same_file("u.png", "m.png"));
        char png[16];
        snprintf(cmd, sizeof cmd, "%s/u.png", shard_dir);
        slurp(cmd, png, sizeof png);
        assert_memory_equal(png, "\x89PNG\r\n", 6);
    }
}

/* A two-axis sweep over two algorithms and two seeds; a three-axis one
 * (issue 24: facets), whose shards' header carries the third axis. */
static void test_shard_merge_sweep(void **state) {
    (void)state;
    shard_merge_sweep("sweep scenarios/gc-pause-outlives-lease.lsim --vary pause=5s..40s/5s --vary ttl=10s,30s "
                      "--algos lease,fenced-lease --seeds 1..2");
    shard_merge_sweep("sweep scenarios/gc-pause-outlives-lease.lsim --vary pause=20s..40s/5s --vary ttl=20s,35s "
                      "--vary fencing=off,on --algos lease,fenced-lease --seeds 1..2");
    static char text[1 << 16];
    slurp(fmt("%s/s2.jsonl", shard_dir), text, sizeof text);
    assert_non_null(strstr(text, "\"vary\":[{\"key\":\"pause\",\"values\":[\"20s\",\"25s\",\"30s\",\"35s\",\"40s\"]},"
                                 "{\"key\":\"ttl\",\"values\":[\"20s\",\"35s\"]},"
                                 "{\"key\":\"fencing\",\"values\":[\"off\",\"on\"]}]"));
}

/* A missing, repeated, cut or foreign shard is an error that says which; a
 * bad --shard is a usage error; a shard writes only JSON Lines. */
static void test_shard_errors(void **state) {
    (void)state;
    make_shards("batch scenarios/gc-pause-outlives-lease.lsim --seeds 1..7", 0);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "merge %s/s1.jsonl %s/s3.jsonl", shard_dir, shard_dir);
    struct result *r = run(cmd);
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "shard 2/3 is missing (got 1/3 3/3)"));
    assert_string_equal(r->out, "");
    snprintf(cmd, sizeof cmd, "merge %s/s1.jsonl %s/s2.jsonl %s/s2.jsonl", shard_dir, shard_dir, shard_dir);
    r = run(cmd);
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "shard 2/3 is given twice"));
    /* A shard cut after its first record: incomplete. */
    snprintf(cmd, sizeof cmd, "head -2 %s/s2.jsonl > %s/cut.jsonl", shard_dir, shard_dir);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "merge %s/s1.jsonl %s/cut.jsonl %s/s3.jsonl", shard_dir, shard_dir, shard_dir);
    r = run(cmd);
    assert_int_equal(r->code, 65);
    assert_non_null(strstr(r->err, "cut.jsonl: shard 2/3 is incomplete: 1 of its 2 runs"));
    /* Shards of another run. */
    snprintf(cmd, sizeof cmd,
             "batch scenarios/gc-pause-outlives-lease.lsim --seeds 1..8 --shard 2/3 --out %s/other.jsonl", shard_dir);
    assert_int_equal(run(cmd)->code, 0);
    snprintf(cmd, sizeof cmd, "merge %s/s1.jsonl %s/other.jsonl %s/s3.jsonl", shard_dir, shard_dir, shard_dir);
    r = run(cmd);
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "are shards of different runs"));
    /* Not a shard at all. */
    snprintf(cmd, sizeof cmd, "merge scenarios/gc-pause-outlives-lease.lsim");
    r = run(cmd);
    assert_int_equal(r->code, 65);
    assert_non_null(strstr(r->err, "gc-pause-outlives-lease.lsim:1:1: not a shard file"));
    assert_int_equal(run("batch scenarios --shard 0/3")->code, 64);
    assert_int_equal(run("batch scenarios --shard 4/3")->code, 64);
    r = run("batch scenarios --shard 2");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "--shard takes K/N with 1 <= K <= N"));
    assert_int_equal(run("batch scenarios --shard 1/2 --format csv")->code, 64);
    assert_int_equal(
            run("sweep scenarios/gc-pause-outlives-lease.lsim --vary pause=5s,6s --shard 1/2 --svg x.svg")->code, 64);
    snprintf(cmd, sizeof cmd, "rm -rf %s", shard_dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- Forged shards ------------------------------------------------------------- */

/* dst: src with the first `from` replaced by `to` (which must be there). */
static void forge(const char *src, const char *dst, const char *from, const char *to) {
    static char text[1 << 16], out[1 << 16];
    slurp(src, text, sizeof text);
    char *at = strstr(text, from);
    if (!at) fprintf(stderr, "forge: '%s' is not in %s\n", from, src);
    assert_non_null(at);
    snprintf(out, sizeof out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    write_file(dst, out);
}

/* merge F1 F2 (forged copies in the scratch folder): the exit status and a
 * piece of what it says on stderr. */
static void merge_expect(const char *f1, const char *f2, int code, const char *says) {
    struct result *r = run(fmt("merge %s %s --format jsonl", f1, f2));
    if (r->code != code || !strstr(r->err, says))
        fprintf(stderr, "merge %s %s: exit %d, stderr: %s(expected %d and '%s')\n", f1, f2, r->code, r->err, code,
                says);
    assert_int_equal(r->code, code);
    assert_non_null(strstr(r->err, says));
}

/* A sweep shard's axes are bounded as the command line's are: at most four
 * (fuzz/fuzz_shard.c reads the same), at most a million cells, whatever
 * its "runs" claims. */
static void test_shard_forged_vary(void **state) {
    (void)state;
    static char s1[256], g1[256], vary[4096];
    snprintf(s1, sizeof s1, "%s", sp("v1.jsonl"));
    snprintf(g1, sizeof g1, "%s", sp("vg1.jsonl"));
    assert_int_equal(
            run(fmt("sweep scenarios/gc-pause-outlives-lease.lsim --vary pause=5s,6s --shard 1/1 --out %s", s1))->code,
            0);
    assert_int_equal(run(fmt("merge %s --out /dev/null", s1))->code, 0);
    /* Five axes. */
    forge(s1, g1, "\"vary\":[",
          "\"vary\":[{\"key\":\"a\",\"values\":[\"1\"]},{\"key\":\"b\",\"values\":[\"1\"]},"
          "{\"key\":\"c\",\"values\":[\"1\"]},{\"key\":\"d\",\"values\":[\"1\"]},");
    struct result *r = run(fmt("merge %s", g1));
    assert_int_equal(r->code, 65);
    assert_non_null(strstr(r->err, "\"vary\": more than 4 axes"));
    /* Four axes of 32 values: 1048576 cells. */
    size_t l = (size_t)snprintf(vary, sizeof vary, "\"vary\":[");
    for (int k = 0; k < 4; k++) {
        l += (size_t)snprintf(vary + l, sizeof vary - l, "%s{\"key\":\"k%d\",\"values\":[", k ? "," : "", k);
        for (int v = 0; v < 32; v++) l += (size_t)snprintf(vary + l, sizeof vary - l, "%s\"%d\"", v ? "," : "", v);
        l += (size_t)snprintf(vary + l, sizeof vary - l, "]}");
    }
    snprintf(vary + l, sizeof vary - l, "],\"args\"");
    forge(s1, g1, "\"vary\":[{\"key\":\"pause\",\"values\":[\"5s\",\"6s\"]}],\"args\"", vary);
    r = run(fmt("merge %s", g1));
    assert_int_equal(r->code, 65);
    assert_non_null(strstr(r->err, "\"vary\": a grid of more than 1000000 cells"));
    remove(s1);
    remove(g1);
}

/* A shard file is data: merge takes no option, path or code from it. Every
 * header field forged is refused or, where it is only shown (args) or a
 * name (algos), obeyed never; memory follows what the file holds. */
static void test_shard_forged(void **state) {
    (void)state;
    /* Paths of their own: fmt()'s buffers rotate. */
    static char s1[256], s2[256], g1[256], g2[256], victim[256], marker[256], evil[256];
    snprintf(s1, sizeof s1, "%s", sp("f1.jsonl"));
    snprintf(s2, sizeof s2, "%s", sp("f2.jsonl"));
    snprintf(g1, sizeof g1, "%s", sp("g1.jsonl"));
    snprintf(g2, sizeof g2, "%s", sp("g2.jsonl"));
    snprintf(victim, sizeof victim, "%s", sp("victim.txt"));
    snprintf(marker, sizeof marker, "%s", sp("loaded.txt"));
    snprintf(evil, sizeof evil, "%s", sp("evil.so"));
    for (int k = 1; k <= 2; k++)
        assert_int_equal(run(fmt("batch scenarios/gc-pause-outlives-lease.lsim --seeds 1..4 --algos lease "
                                 "--shard %d/2 --out %s",
                                 k, k == 1 ? s1 : s2))
                                 ->code,
                         0);
    static char good[1 << 21];
    snprintf(good, sizeof good, "%s", run(fmt("merge %s %s --format jsonl", s1, s2))->out);
    assert_string_equal(good, run("batch scenarios/gc-pause-outlives-lease.lsim --seeds 1..4 --algos lease "
                                  "--format jsonl")
                                      ->out);
    /* The args of both shards say --out VICTIM and load a plugin: merge
     * writes standard output as asked, VICTIM stays, no code is loaded. */
    write_file(victim, "mine\n");
    write_file(sp("evil.c"), fmt("#include <stdio.h>\n__attribute__((constructor)) static void boom(void) {\n"
                                 "  FILE *f = fopen(\"%s\", \"w\"); if (f) fclose(f); }\n",
                                 marker));
    assert_int_equal(system(fmt("cc -shared -fPIC -o %s %s", evil, sp("evil.c"))), 0);
    static char args[1024];
    snprintf(args, sizeof args, "\"args\":[\"--out\",\"%s\",\"--algos\",\"%s,lease\",\"scenarios\"]", victim, evil);
    for (int k = 0; k < 2; k++)
        forge(k ? s2 : s1, k ? g2 : g1,
              "\"args\":[\"scenarios/gc-pause-outlives-lease.lsim\",\"--seeds\",\"1..4\","
              "\"--algos\",\"lease\"]",
              args);
    struct result *r = run(fmt("merge %s %s --format jsonl", g1, g2));
    assert_int_equal(r->code, 0);
    assert_string_equal(r->out, good);
    char text[64];
    slurp(victim, text, sizeof text);
    assert_string_equal(text, "mine\n");
    /* The list's algorithm names are names: shown, never loaded. */
    for (int k = 0; k < 2; k++)
        forge(k ? s2 : s1, k ? g2 : g1, "\"algos\":[\"lease\"]", fmt("\"algos\":[\"%s\"]", evil));
    r = run(fmt("merge %s %s", g1, g2));
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, evil)); /* the table names the group by it */
    assert_int_equal(access(marker, F_OK), -1);
    /* One shard's args differ: shards of different runs. */
    forge(s1, g1, "\"args\":[\"scenarios", "\"args\":[\"--out\",\"x\",\"scenarios");
    merge_expect(g1, s2, 64, "are shards of different runs (their command lines differ)");
    /* A seed list longer than a shard may state. */
    static char seeds_1001[16000];
    size_t l = (size_t)snprintf(seeds_1001, sizeof seeds_1001, "\"seeds\":[");
    for (int k = 0; k < 1001; k++)
        l += (size_t)snprintf(seeds_1001 + l, sizeof seeds_1001 - l, "%s[%d,%d]", k ? "," : "", k, k);
    snprintf(seeds_1001 + l, sizeof seeds_1001 - l, "]");
    /* Each header field, forged in one shard (or both, where the two must agree). */
    static const struct {
        const char *from, *to;
        int both, code;
        const char *says;
    } cases[] = {
            {"\"locksim_shard\":2", "\"locksim_shard\":1", 0, 65,
             "g1.jsonl:1:18: shard format 1: this build reads format 2"},
            {"\"command\":\"batch\"", "\"command\":\"run\"", 1, 65, "expected \"batch\" or \"sweep\""},
            {"\"shard\":1", "\"shard\":0", 0, 65, "\"shard\": out of range"},
            {"\"of\":2", "\"of\":1", 0, 64, "their number of shards differ"},
            {"\"of\":2", "\"of\":1000001", 1, 65, "\"of\": out of range"},
            {"\"runs\":4", "\"runs\":10000000", 1, 65, "\"runs\" is 10000000, but the run list it states has 4 runs"},
            {"\"first\":0", "\"first\":1", 0, 65, "g1.jsonl:2:8: run 0 where run 1 comes next"},
            {"\"end\":2", "\"end\":1", 0, 65, "g1.jsonl:3:1: a record past the shard's last run (0)"},
            {"\"end\":2", "\"end\":5", 0, 65, "the shard header is inconsistent"},
            {"\"build\":\"locksim ", "\"build\":\"other ", 0, 64, "their build differ"},
            {"\"files\":[", "\"files\":[\"/etc/passwd\",", 1, 65,
             "\"runs\" is 4, but the run list it states has 8 runs"},
            {"\"files\":[\"scenarios/gc-pause-outlives-lease.lsim\"]", "\"files\":[]", 1, 65, "at least one file"},
            {"\"algo_names\":[\"lease\"]", "\"algo_names\":[]", 1, 65, "\"algos\" and \"algo_names\" differ in length"},
            {"\"seeds\":[1,4]", "\"seeds\":[1,40000000]", 1, 65, "but the run list it states has 40000000 runs"},
            {"\"seeds\":[1,4]", "\"seeds\":[4,1]", 1, 65, "the last seed is below the first"},
            {"\"seeds\":[1,4]", "\"seeds\":[0,18446744073709551615]", 1, 65, "has more than"},
            {"\"seeds\":[1,4]", "\"seeds\":[[1,2],[2,4]]", 1, 65, "\"seeds\": seed 2 is listed twice"},
            {"\"seeds\":[1,4]", "\"seeds\":[[1,2],[4,3]]", 1, 65, "4..3: the last seed is below the first"},
            {"\"seeds\":[1,4]", "\"seeds\":[[1,2],3]", 1, 65, "expected [FIRST,LAST], a list of them, or null"},
            {"\"seeds\":[1,4]", seeds_1001, 1, 65, "\"seeds\": more than 1000 items"},
            {"\"seed\":null", "\"seed\":5", 1, 65, "\"seed\": expected a string"},
            {"\"algo\":null", "\"algo\":[]", 1, 65, "\"algo\": expected a string"},
            {"\"sets\":[]", "\"sets\":[\"noequals\"]", 1, 65, "'noequals' is not KEY=VALUE"},
            {"\"vary\":[]", "\"vary\":[{\"key\":\"ttl\",\"values\":[\"1s\"]}]", 1, 65, "a batch varies none"},
            {"\"args\":[", "\"evil\":1,\"args\":[", 1, 65, "unknown key \"evil\""},
            {"\"args\":[", "\"runs\":4,\"args\":[", 1, 65, "duplicate key \"runs\""},
            {",\"args\":[\"scenarios/gc-pause-outlives-lease.lsim\",\"--seeds\",\"1..4\",\"--algos\",\"lease\"]", "", 1,
             65, "missing key \"args\""},
            /* Records. */
            {"{\"run\":1,", "{\"run\":7,", 0, 65, "g1.jsonl:3:8: run 7 where run 1 comes next"},
            {"\"scenario\":\"scenarios/gc", "\"scenario\":\"/etc/passwd\",\"x\":\"", 0, 65,
             "\"scenario\" is not the file the header's list gives run 0"},
            {"\"trace_hash\":\"", "\"trace_hash\":\"zzzzzzzzzzzzzzzz\",\"x\":\"", 0, 65,
             "expected 16 lower-case hex digits"},
            {"\"outcome\":\"PASS\"", "\"outcome\":\"ERROR\"", 0, 65,
             "\"outcome\" is \"ERROR\" in a record without \"error_code\""},
            {"\"outcome\":\"PASS\"", "\"outcome\":\"WIN\"", 0, 65, "\"outcome\" is \"WIN\""},
            {"\"verdict\":\"", "\"verdict\":\"X", 0, 65, "unknown verdict"},
            {"\"acquires\":", "\"acquires\":1.5,\"x\":", 0, 65, "\"acquires\": expected an integer"},
            {"\"set\":{}", "\"set\":{\"ttl\":\"1s\"}", 0, 65, "\"set\" differs from the --set values"},
            {"\"events\":", "\"error_code\":\"NOMEM\",\"events\":", 0, 65, "missing key \"exit_status\""},
            {"\"events\":", "\"error_code\":\"NOMEM\",\"exit_status\":70,\"error\":\"\",\"events\":", 0, 65,
             "the fields of both"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        forge(s1, g1, cases[c].from, cases[c].to);
        if (cases[c].both) forge(s2, g2, cases[c].from, cases[c].to);
        merge_expect(g1, cases[c].both ? g2 : s2, cases[c].code, cases[c].says);
    }
    /* A forged run count under a 256 MB address-space limit: refused as
     * malformed (65), not out of memory (the claim is never allocated). */
    forge(s1, g1, "\"runs\":4", "\"runs\":10000000");
    forge(g1, g1, "\"end\":2", "\"end\":5000000");
    forge(s2, g2, "\"runs\":4", "\"runs\":10000000");
    forge(g2, g2, "\"first\":2,\"end\":4", "\"first\":5000000,\"end\":10000000");
    r = run_in(TEST_ADDRESS_LIMIT_OK ? "ulimit -v 262144;" : "", fmt("merge %s %s", g1, g2));
    assert_int_equal(r->code, 65);
    /* A cut line, a line past the limit, an empty file. */
    write_file(g1, "{\"locksim_shard\":2,\"command\":\"ba");
    merge_expect(g1, s2, 65, "g1.jsonl:1:");
    write_file(g1, "");
    merge_expect(g1, s2, 65, "g1.jsonl:1:1: an empty file");
    assert_int_equal(system(fmt("head -c 17000000 /dev/zero | tr '\\0' ' ' > %s", g1)), 0);
    merge_expect(g1, s2, 65, "a line longer than 16777216 bytes");
    /* Merge's own output over one of its inputs: refused (64), the input intact. */
    static char before[1 << 16], after[1 << 16];
    slurp(s1, before, sizeof before);
    r = run(fmt("merge --out %s %s %s", s1, s1, s2));
    assert_int_equal(r->code, 64);
    slurp(s1, after, sizeof after);
    assert_string_equal(before, after);
    /* Size: shards hold little more than the merged JSON Lines (format 1's
     * hex dumps were 7x). */
    struct stat a, b, m;
    assert_int_equal(run(fmt("merge %s %s --format jsonl --out %s", s1, s2, sp("m.jsonl")))->code, 0);
    assert_int_equal(stat(s1, &a) | stat(s2, &b) | stat(sp("m.jsonl"), &m), 0);
    assert_true(a.st_size + b.st_size < 2 * m.st_size);
}

/* examples/cluster/: the GNU parallel script in local mode and through
 * --sshlogin ":" (this machine, the path a host list takes), and the Slurm
 * array task run by hand for each task id, each merged: the unsharded CSV. */
static void test_cluster_examples(void **state) {
    (void)state;
    assert_int_equal(system("command -v parallel >/dev/null"), 0); /* `make deps` installs it */
    make_shards("batch scenarios/gc-pause-outlives-lease.lsim --seeds 1..5", 0);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "batch scenarios --seeds 1..2 --algos lease,redlock --format csv --out %s/u.csv",
             shard_dir);
    assert_int_equal(run(cmd)->code, 0); /* other algorithms and seeds: not applicable */
    snprintf(cmd, sizeof cmd,
             "LOCKSIM=%s examples/cluster/parallel.sh -n 4 -b %s -d %s/p -- batch scenarios --seeds 1..2 "
             "--algos lease,redlock -- --format csv --out %s/local.csv >/dev/null 2>&1; test $? = 0",
             bin(), bin(), shard_dir, shard_dir);
    assert_int_equal(system(cmd), 0);
    assert_true(same_file("u.csv", "local.csv"));
    snprintf(cmd, sizeof cmd,
             "examples/cluster/parallel.sh -n 3 -S : -b %s -d %s/q -- batch scenarios --seeds 1..2 "
             "--algos lease,redlock -- --format csv --out %s/ssh.csv >/dev/null 2>&1; test $? = 0",
             bin(), shard_dir, shard_dir);
    assert_int_equal(system(cmd), 0);
    assert_true(same_file("u.csv", "ssh.csv"));
    snprintf(cmd, sizeof cmd,
             "export LOCKSIM=%s SHARD_DIR=%s/slurm LOCKSIM_ARGS='batch scenarios --seeds 1..2 "
             "--algos lease,redlock' MERGE_ARGS='--format csv --out %s/slurm.csv' SLURM_ARRAY_TASK_COUNT=3; "
             "for k in 1 2 3; do SLURM_ARRAY_TASK_ID=$k bash examples/cluster/slurm-shard.sbatch || exit 1; done; "
             "bash examples/cluster/slurm-merge.sbatch; test $? = 0",
             bin(), shard_dir, shard_dir);
    assert_int_equal(system(cmd), 0);
    assert_true(same_file("u.csv", "slurm.csv"));
    snprintf(cmd, sizeof cmd, "rm -rf %s", shard_dir);
    assert_int_equal(system(cmd), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_batch_order_independent_of_jobs),
            cmocka_unit_test(test_batch_formats),
            cmocka_unit_test(test_batch_not_applicable),
            cmocka_unit_test(test_junit_for_ci_dashboards),
            cmocka_unit_test(test_batch_crashing_worker),
            cmocka_unit_test(test_plugin_abort_and_loop),
            cmocka_unit_test(test_batch_skips_what_cannot_run),
            cmocka_unit_test(test_batch_progress_on_terminal),
            cmocka_unit_test(test_batch_sigint),
            cmocka_unit_test(test_explore_sigint),
            cmocka_unit_test(test_batch_memory_flat),
            cmocka_unit_test(test_check_golden_divergence),
            cmocka_unit_test(test_golden_traces_are_current),
            cmocka_unit_test(test_check_update_refuses_failing),
            cmocka_unit_test(test_diff),
            cmocka_unit_test(test_check_trace_matches_run),
            cmocka_unit_test(test_check_trace_judges_expects),
            cmocka_unit_test(test_seed_varying_fractions),
            cmocka_unit_test(test_sweep_grid_and_heatmap),
            cmocka_unit_test(test_sweep_facets),
            cmocka_unit_test(test_heatmap_axis_labels),
            cmocka_unit_test(test_heatmap_panels_wrap),
            cmocka_unit_test(test_shard_merge_batch),
            cmocka_unit_test(test_shard_merge_seed_list),
            cmocka_unit_test(test_shard_merge_sweep),
            cmocka_unit_test(test_shard_forged_vary),
            cmocka_unit_test(test_shard_errors),
            cmocka_unit_test(test_shard_forged),
            cmocka_unit_test(test_cluster_examples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
