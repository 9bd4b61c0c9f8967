/* Hardening, as a new user meets it (issue 8): outputs that must never
 * destroy a file, runs cut short that must never pass, typos that must
 * never be silent, plugins refused instead of crashing, replay lines and
 * JSON that survive quotes and spaces. Each test failed before its fix. */
#include "cli_util.h"

#include <fcntl.h>
#include <sys/stat.h>

#define GC "scenarios/gc-pause-outlives-lease.lsim"

/* --trace: devices and FIFOs are written in place, symlinks through, "-" is
 * standard output, an input is never overwritten, a full disk is exit 73. */
static void test_trace_outputs(void **state) {
    (void)state;
    struct stat st;
    /* A FIFO stays a FIFO and receives the whole trace. */
    unlink(sp("lh_fifo"));
    assert_int_equal(mkfifo(sp("lh_fifo"), 0600), 0);
    struct result *r = run(fmt(
            "run " GC " --no-timeline --trace %1$s/lh_fifo & cat %1$s/lh_fifo > %1$s/lh_fifo_out; wait", scratch()));
    assert_int_equal(lstat(sp("lh_fifo"), &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    char buf[65536];
    slurp(sp("lh_fifo_out"), buf, sizeof buf);
    assert_non_null(strstr(buf, "\"format\":\"locksim-trace\""));
    unlink(sp("lh_fifo"));
    unlink(sp("lh_fifo_out"));
    /* /dev/null stays a character device. */
    r = run("run " GC " --no-timeline --trace /dev/null");
    assert_int_equal(r->code, 0);
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    /* A symlink stays a link; its target gets the trace. */
    unlink(sp("lh_link"));
    write_file(sp("lh_target"), "old\n");
    assert_int_equal(symlink(sp("lh_target"), sp("lh_link")), 0);
    r = run(fmt("run " GC " --no-timeline --trace %1$s/lh_link", scratch()));
    assert_int_equal(r->code, 0);
    assert_int_equal(lstat(sp("lh_link"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    slurp(sp("lh_target"), buf, sizeof buf);
    assert_non_null(strstr(buf, "\"format\":\"locksim-trace\""));
    unlink(sp("lh_link"));
    unlink(sp("lh_target"));
    /* "-" is standard output (the report moves to stderr). */
    r = run("run " GC " --no-timeline --trace -");
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "\"format\":\"locksim-trace\""));
    assert_non_null(strstr(r->err, "Verdict: UNSAFE"));
    assert_int_not_equal(stat("-", &st), 0);
    /* The input file is refused, and left as it was. */
    system(fmt("cp " GC " %1$s/lh_in.lsim", scratch()));
    slurp(sp("lh_in.lsim"), buf, sizeof buf);
    size_t before = strlen(buf);
    r = run(fmt("run %1$s/lh_in.lsim --trace %1$s/lh_in.lsim", scratch()));
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "it is the input file"));
    slurp(sp("lh_in.lsim"), buf, sizeof buf);
    assert_int_equal(strlen(buf), before);
    unlink(sp("lh_in.lsim"));
    /* A full device is exit 73 with the reason; so is a full stdout. */
    r = run("run " GC " --no-timeline --trace /dev/full");
    assert_int_equal(r->code, 73);
    assert_non_null(strstr(r->err, "No space left on device"));
    r = run(fmt("run " GC " > /dev/full 2>%1$s/lh_full_err; echo status=$?", scratch()));
    assert_non_null(strstr(r->out, "status=73"));
    slurp(sp("lh_full_err"), buf, sizeof buf);
    assert_non_null(strstr(buf, "cannot write to standard output: No space left on device"));
    unlink(sp("lh_full_err"));
}

/* check --format json carries each run's real trace digest: the one that
 * `hash` and `run --format json` give. */
static void test_check_json_hash(void **state) {
    (void)state;
    struct result *r = run("hash " GC " scenarios/fencing-rejects-stale-write.lsim");
    assert_int_equal(r->code, 0);
    char h1[17] = {0}, h2[17] = {0};
    memcpy(h1, r->out, 16);
    const char *nl = strchr(r->out, '\n');
    assert_non_null(nl);
    memcpy(h2, nl + 1, 16);
    assert_string_not_equal(h1, h2);
    r = run("check --format json " GC " scenarios/fencing-rejects-stale-write.lsim");
    assert_int_equal(r->code, 0);
    assert_true(json_lines_valid(r->out));
    char want[64];
    snprintf(want, sizeof want, "\"trace_hash\":\"%s\"", h1);
    assert_non_null(strstr(r->out, want));
    snprintf(want, sizeof want, "\"trace_hash\":\"%s\"", h2);
    assert_non_null(strstr(r->out, want));
    r = run("run " GC " --format json");
    snprintf(want, sizeof want, "\"trace_hash\":\"%s\"", h1);
    assert_non_null(strstr(r->out, want));
}

/* A run cut short decides nothing: TRUNCATED in every format, exit 1. */
static void test_truncated_never_passes(void **state) {
    (void)state;
    write_file(sp("lh_cut.lsim"), "duration 60s\nmax-events 20\nlock lease ttl=30s\n"
                                  "client A: acquire; work 10s; write; release\n"
                                  "client B @31s: acquire; write; release\n"
                                  "expect no double-entry\n");
    struct result *r = run(fmt("check %1$s/lh_cut.lsim", scratch()));
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->out, fmt("TRUNCATED %1$s/lh_cut.lsim", scratch())));
    assert_non_null(strstr(r->out, "--set max-events=N"));
    assert_non_null(strstr(r->out, "scenarios: 0 passed, 1 failed"));
    r = run(fmt("run %1$s/lh_cut.lsim --no-timeline", scratch()));
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->out, "Verdict: TRUNCATED: the run was cut short at t="));
    assert_non_null(strstr(r->out, "after 20 events (max-events 20)"));
    r = run(fmt("check --format json %1$s/lh_cut.lsim", scratch()));
    assert_int_equal(r->code, 1);
    assert_true(json_lines_valid(r->out));
    assert_non_null(strstr(r->out, "\"outcome\":\"TRUNCATED\""));
    assert_non_null(strstr(r->out, "\"ok\":null"));
    r = run(fmt("check --format tap %1$s/lh_cut.lsim", scratch()));
    assert_non_null(strstr(r->out, fmt("not ok 1 - %1$s/lh_cut.lsim (TRUNCATED)", scratch())));
    r = run(fmt("check --format junit %1$s/lh_cut.lsim", scratch()));
    assert_non_null(strstr(r->out, "failures=\"1\""));
    assert_non_null(strstr(r->out, "TRUNCATED"));
    /* The three-line livelock: zero latency, acquire; release forever. */
    write_file(sp("lh_live.lsim"), "network latency=0ms\nlock lease ttl=30s\n"
                                   "client A repeat=0: acquire; release\nexpect verdict SAFE\n");
    r = run(fmt("check %1$s/lh_live.lsim", scratch()));
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->out, "TRUNCATED"));
    unlink(sp("lh_cut.lsim"));
    unlink(sp("lh_live.lsim"));
}

/* A --set key that the run's algorithm does not have is an error, with the
 * keys it could be; in a matrix, only when no row has it. */
static void test_unknown_keys(void **state) {
    (void)state;
    /* A scenario without params: the key reaches the algorithm, which names its options. */
    struct result *r = run("run scenarios/lease-crashed-holder-expires.lsim --algo lease --set ttI=10s");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "--set ttI=10s: unknown option 'ttI' for lease; expected ttl"));
    r = run("matrix scenarios/lease-crashed-holder-expires.lsim --set tll=40s");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "no algorithm of this matrix has the option 'tll'"));
    /* A scenario with a param `ttl`: the typo is caught before any algorithm sees it. */
    r = run("matrix " GC " --set tll=40s");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "unknown key 'tll'; expected ttl"));
    r = run("matrix " GC " --algos setnx,lease --set ttl=40s");
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "(does not use --set ttl)"));
    r = run("matrix " GC " --algos lease,,fenced-lease");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "empty name"));
}

/* Plugins that would crash the engine are refused at load. */
static void plugin(const char *name, const char *body) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cc -std=c11 -shared -fPIC -Isim -o %s/%s.so -x c - <<'EOF'\n#include \"lock.h\"\n%s\nEOF", scratch(),
             name, body);
    assert_int_equal(system(cmd), 0);
}

static void test_plugins_refused(void **state) {
    (void)state;
    plugin("lh_empty", "static const struct lock_algo a = {.abi = LOCK_ABI_VERSION, .name = \"empty\"};\n"
                       "const struct lock_algo *locksim_algo(void) { return &a; }");
    struct result *r = run(fmt("run " GC " --algo %1$s/lh_empty.so", scratch()));
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "no client_acquire callback"));
    plugin("lh_noname", "static void f(struct lock_ctx *c, void *s) { (void)c; (void)s; }\n"
                        "static const struct lock_algo a = {.abi = LOCK_ABI_VERSION, .client_acquire = f,"
                        " .client_release = f};\n"
                        "const struct lock_algo *locksim_algo(void) { return &a; }");
    r = run(fmt("run " GC " --algo %1$s/lh_noname.so", scratch()));
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, ".name is NULL"));
    assert_null(strstr(r->err, "(null)"));
    /* Version 4: zeroing more of the server state than there is. */
    plugin("lh_zero", "static void f(struct lock_ctx *c, void *s) { (void)c; (void)s; }\n"
                      "static const struct lock_algo a = {.abi = LOCK_ABI_VERSION, .name = \"zero\","
                      " .client_acquire = f, .client_release = f, .server_size = 16, .server_zero_size = 17};\n"
                      "const struct lock_algo *locksim_algo(void) { return &a; }");
    r = run(fmt("run " GC " --algo %1$s/lh_zero.so", scratch()));
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "cannot use algorithm"));
    assert_non_null(strstr(r->err, "its server_zero_size is larger than its server_size"));
    plugin("lh_null", "const struct lock_algo *locksim_algo(void) { return 0; }");
    r = run(fmt("run " GC " --algo %1$s/lh_null.so", scratch()));
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "returned NULL"));
    assert_null(strstr(r->err, "version 0"));
    /* A bare file name ending in .so is looked for in the current folder. */
    char cmd[512], cwd[256];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(cmd, sizeof cmd, "cd %1$s && cp %2$s/" GC " %1$s/lh_gc.lsim &&", scratch(), cwd);
    r = run_in(cmd, "run lh_gc.lsim --algo lh_null.so");
    assert_non_null(strstr(r->err, "returned NULL"));
    r = run("run " GC " --algo nosuch_here.so");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "no algorithm file 'nosuch_here.so' in the current directory"));
    /* `lock ./x.so` in a scenario: found beside the file; refused with 65. */
    system(fmt("mkdir -p %1$s/lh_plug && cp %1$s/lh_null.so %1$s/lh_plug/ && "
               "cc -std=c11 -shared -fPIC -Isim -o %1$s/lh_plug/my_lock.so examples/algorithms/my_lock.c",
               scratch()));
    write_file(sp("lh_plug/ok.lsim"), "lock ./my_lock.so\nresource fencing=on\n"
                                      "client A: acquire; write; release\nexpect verdict SAFE\n");
    r = run_in("cd / &&", fmt("check %1$s/lh_plug/ok.lsim", scratch()));
    assert_int_equal(r->code, 0);
    write_file(sp("lh_plug/bad.lsim"), "lock ./lh_null.so\nclient A: acquire\nexpect verdict SAFE\n");
    r = run(fmt("check %1$s/lh_plug/bad.lsim", scratch()));
    assert_int_equal(r->code, 65);
    assert_non_null(strstr(r->err, fmt("%1$s/lh_plug/bad.lsim:1:6: cannot use algorithm '%1$s/lh_plug/lh_null.so': "
                                       "its locksim_algo() returned NULL",
                                       scratch())));
    system(fmt("rm -rf %1$s/lh_plug", scratch()));
    unlink(sp("lh_empty.so"));
    unlink(sp("lh_noname.so"));
    unlink(sp("lh_null.so"));
    unlink(sp("lh_gc.lsim"));
}

/* The replay line, pasted into a shell, reproduces the output byte for
 * byte, even with spaces and quotes in the path and the overrides; JSON
 * stays valid with quotes, backslashes and control characters. */
static void test_replay_and_json_escaping(void **state) {
    (void)state;
    system(fmt("mkdir -p '%1$s/lh dir' && cp " GC " '%1$s/lh dir/my \"gc\" file.lsim'", scratch()));
    struct result *r = run(
            fmt("run '%1$s/lh dir/my \"gc\" file.lsim' --width 90 --set 'title=Lecture 3 \"demo\" \\ x'", scratch()));
    assert_int_equal(r->code, 0);
    static char first[1 << 21];
    snprintf(first, sizeof first, "%s", r->out);
    const char *rp = strstr(first, "Replay: ");
    assert_non_null(rp);
    char line[2048];
    snprintf(line, sizeof line, "%.*s", (int)(strchr(rp, '\n') - rp - 8), rp + 8);
    assert_non_null(strstr(line, "--width 90"));
    assert_int_equal(strncmp(line, "locksim run ", 12), 0);
    r = run(line + 8); /* "run ..." */
    assert_int_equal(r->code, 0);
    assert_string_equal(r->out, first);
    r = run(fmt("run '%1$s/lh dir/my \"gc\" file.lsim' --format json --narrate --set 'title=a \"q\" \\ b'", scratch()));
    assert_int_equal(r->code, 0);
    assert_true(json_lines_valid(r->out));
    assert_non_null(strstr(r->out, "\"title\":\"a \\\"q\\\" \\\\ b\""));
    assert_non_null(strstr(r->out, "\"narration\":[\"t=0s"));
    write_file(sp("lh_ctl.lsim"), "title \"tab\there\"\nlock lease\nclient A: acquire; write; release\n"
                                  "expect verdict SAFE\n");
    r = run(fmt("check --format json %1$s/lh_ctl.lsim", scratch()));
    assert_true(json_lines_valid(r->out));
    system(fmt("rm -rf '%1$s/lh dir' %1$s/lh_ctl.lsim", scratch()));
}

/* Smaller gaps: strict numbers, folders, stdin, malformed files in every
 * check format, the demo from any folder. */
static void test_smaller_gaps(void **state) {
    (void)state;
    struct result *r = run("run " GC " --width 40.5");
    assert_int_equal(r->code, 64);
    r = run("hash " GC " --seed 3");
    assert_int_equal(r->code, 0);
    assert_null(strstr(r->err, "--seed"));
    assert_int_equal(strlen(r->out), 16 + 2 + strlen(GC) + 1);
    r = run("check scenarios");
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "scenarios: "));
    assert_null(strstr(r->out, " 0 passed"));
    r = run("run - --no-timeline < " GC);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "Verdict: UNSAFE"));
    write_file(sp("lh_bad.lsim"), "lock lease\nclient A: acquire; wrte; release\n");
    r = run(fmt("check --format json %1$s/lh_bad.lsim " GC, scratch()));
    assert_int_equal(r->code, 65);
    assert_true(json_lines_valid(r->out));
    assert_non_null(strstr(r->out, "\"outcome\":\"ERROR\",\"error_code\":\"PARSE\",\"exit_status\":65"));
    r = run(fmt("check --format junit %1$s/lh_bad.lsim " GC, scratch()));
    assert_non_null(strstr(r->out, "errors=\"1\""));
    assert_non_null(strstr(r->out, "time=\""));
    assert_non_null(strstr(r->out, fmt("<error message=\"malformed scenario\">%1$s/lh_bad.lsim:2:20:", scratch())));
    unlink(sp("lh_bad.lsim"));
    r = run_in("cd / &&", "demo");
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "2/2  The same timeline with fencing tokens"));
    assert_non_null(strstr(r->out, "Verdict: SAFE"));
}

/* --trace-format chrome: Chrome Trace Event JSON for Perfetto, with every
 * node a track, the double entry a span of its own, exact microseconds. */
static void test_chrome_trace(void **state) {
    (void)state;
    struct result *r = run(
            fmt("run " GC " --no-timeline --trace %1$s/lh_chrome.json --trace-format chrome", scratch()));
    assert_int_equal(r->code, 0);
    static char buf[1 << 21];
    slurp(sp("lh_chrome.json"), buf, sizeof buf);
    const char *end = json_value(buf);
    assert_non_null(end);
    assert_true(*json_ws(end) == '\0'); /* one JSON object, nothing after it */
    assert_non_null(strstr(buf, "\"traceEvents\":["));
    assert_non_null(strstr(buf, "\"name\":\"thread_name\",\"args\":{\"name\":\"S1\"}"));
    assert_non_null(strstr(buf, "\"cat\":\"double-entry\",\"name\":\"B and A both in the critical section\","
                                "\"ts\":31000000.000,\"dur\":1000000.000"));
    assert_non_null(strstr(buf, "\"name\":\"paused\",\"ts\":5000000.000,\"dur\":27000000.000"));
    assert_non_null(strstr(buf, "STALE write accepted (damage)"));
    unlink(sp("lh_chrome.json"));
    /* Messages are flows from send to receipt or drop (as many ends as
     * starts), with the algorithm's notes and the partition on the tracks:
     * the consensus run whose minority cannot grant. */
    r = run(fmt("run scenarios/consensus-minority-cannot-grant.lsim --no-timeline --trace %1$s/lh_chrome.json "
                "--trace-format chrome",
                scratch()));
    assert_int_equal(r->code, 0);
    slurp(sp("lh_chrome.json"), buf, sizeof buf);
    assert_non_null(json_value(buf));
    int starts = 0, ends = 0, drops = 0;
    for (const char *q = buf; (q = strstr(q, "{\"ph\":\"s\",")); q++) starts++;
    for (const char *q = buf; (q = strstr(q, "{\"ph\":\"f\",\"bp\":\"e\",")); q++) ends++;
    for (const char *q = buf; (q = strstr(q, "\"DROPPED message from ")); q++) drops++;
    assert_int_equal(starts, 2536); /* every msg-send of the trace */
    assert_int_equal(ends, starts); /* 1650 received, 886 dropped */
    assert_int_equal(drops, 886);
    assert_non_null(strstr(buf, "\"cat\":\"fault\",\"name\":\"partition S1 S2 B | S3 S4 S5 A R\""));
    assert_non_null(strstr(buf, "\"cat\":\"note\",\"name\":\"elected leader, term "));
    unlink(sp("lh_chrome.json"));
    r = run("run " GC " --trace-format chrome");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "needs --trace"));
    r = run(fmt("run " GC " --trace %1$s/x.json --trace-format perfetto", scratch()));
    assert_int_equal(r->code, 64);
}

/* A link change carries its loss (trace format 2) and the narration says
 * so, instead of calling a 100% loss a latency change. */
static void test_link_loss_in_trace(void **state) {
    (void)state;
    write_file(sp("lh_link.lsim"), "lock lease\nclient A: acquire; work 5s; write; release\n"
                                   "@1s link A S1 loss=100%\n@2s link A R loss=2.5% latency=3ms\n"
                                   "expect verdict SAFE\n");
    struct result *r = run(fmt("run %1$s/lh_link.lsim --narrate --no-timeline --trace %1$s/lh_link.jsonl", scratch()));
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "link A -> S1 now loses every message"));
    assert_non_null(strstr(r->out, "link A -> R now takes 3ms, and loses 2.5% of messages"));
    static char buf[1 << 16];
    slurp(sp("lh_link.jsonl"), buf, sizeof buf);
    assert_non_null(strstr(buf, "\"version\":5"));
    assert_non_null(strstr(buf, "\"kind\":\"link\",\"node\":\"A\",\"peer\":\"S1\",\"token\":0,\"grant\":1000000"));
    assert_non_null(strstr(buf, "\"peer\":\"R\",\"token\":0,\"grant\":25000,\"a\":3000000,\"b\":3000000"));
    unlink(sp("lh_link.lsim"));
    unlink(sp("lh_link.jsonl"));
}

/* Issue 19: a standard output that cannot be written is exit 73 for every
 * command, the ones that print a table or a help text too. */
static void test_stdout_full_every_command(void **state) {
    (void)state;
    static const char *const cmds[] = {"list",   "help",      "help run",   "help metrics",
                                       "--help", "--version", "run --help", "hash " GC};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        /* "{ locksim ... >/dev/full; echo ...; }": both captured */
        struct result *r = run_in("{", fmt("%s >/dev/full; echo status=$?; }", cmds[i]));
        if (!strstr(r->out, "status=73")) fail_msg("`locksim %s >/dev/full`: %s", cmds[i], r->out);
    }
    /* diff of two traces, the same and different. */
    struct result *r = run(fmt("run " GC " --no-timeline --trace %1$s/lh_d1.jsonl", scratch()));
    assert_int_equal(r->code, 0);
    r = run_in("{", fmt("diff %1$s/lh_d1.jsonl %1$s/lh_d1.jsonl >/dev/full; echo status=$?; }", scratch()));
    assert_non_null(strstr(r->out, "status=73"));
    assert_non_null(strstr(r->err, "cannot write to standard output: No space left on device"));
    unlink(sp("lh_d1.jsonl"));
}

/* Issue 19: server and state counts a plugin cannot mean are refused at
 * load like every other plugin fault (64), with what to change. */
static void test_plugin_counts_refused(void **state) {
    (void)state;
    static const struct {
        const char *fields, *why;
    } cases[] = {
            {".default_servers = -3", "its default_servers must be 0 (meaning one) to LOCK_MAX_SERVERS (15)"},
            {".default_servers = 1000000", "its default_servers must be 0 (meaning one) to LOCK_MAX_SERVERS (15)"},
            {".max_servers = -1", "its max_servers must be 0 (meaning no limit) to LOCK_MAX_SERVERS (15)"},
            {".default_servers = 5, .max_servers = 3", "its default_servers is larger than its max_servers"},
            {".nstates = -1", "its nstates must be 0 to LOCK_MAX_STATES (64)"},
            {".nstates = 65", "its nstates must be 0 to LOCK_MAX_STATES (64)"},
            {".nstates = 2", "it has nstates but no state_names"},
    };
    write_file(sp("lh_count.lsim"), "lock lease\nclient A: acquire; write; release\n");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        plugin("lh_count", fmt("static void f(struct lock_ctx *c, void *s) { (void)c; (void)s; }\n"
                               "static const struct lock_algo a = {.abi = LOCK_ABI_VERSION, .name = \"count\","
                               " .client_acquire = f, .client_release = f, %s};\n"
                               "const struct lock_algo *locksim_algo(void) { return &a; }",
                               cases[i].fields));
        struct result *r = run(fmt("run %1$s/lh_count.lsim --algo %1$s/lh_count.so", scratch()));
        if (r->code != 64 || !strstr(r->err, cases[i].why))
            fail_msg("%s: exit %d, %s", cases[i].fields, r->code, r->err);
    }
    unlink(sp("lh_count.so"));
    unlink(sp("lh_count.lsim"));
}

/* Issue 19: a trace cut at a line boundary (no run-end) is TRUNCATED, exit
 * 1, never SAFE; the JSON record counts the events it read. */
static void test_trace_without_run_end(void **state) {
    (void)state;
    write_file(sp("lh_safe.lsim"), "lock lease\nclient A: acquire; write; release\nexpect verdict SAFE\n");
    struct result *r = run(fmt("run %1$s/lh_safe.lsim --no-timeline --trace %1$s/lh_whole.jsonl", scratch()));
    assert_int_equal(r->code, 0);
    /* Every line but the last (the run-end event). */
    assert_int_equal(system(fmt("head -n -1 %1$s/lh_whole.jsonl > %1$s/lh_cut.jsonl", scratch())), 0);
    r = run(fmt("check-trace %1$s/lh_cut.jsonl", scratch()));
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->out, "Verdict: TRUNCATED: the trace has no run-end event"));
    assert_null(strstr(r->out, "Verdict: SAFE"));
    assert_non_null(strstr(r->err, fmt("%s/lh_cut.jsonl: the trace has no run-end event", scratch())));
    r = run(fmt("check-trace %1$s/lh_cut.jsonl --format json", scratch()));
    assert_int_equal(r->code, 1);
    assert_true(json_lines_valid(r->out));
    assert_non_null(strstr(r->out, "\"outcome\":\"TRUNCATED\""));
    assert_non_null(strstr(r->out, "\"truncated\":true"));
    assert_non_null(strstr(r->err, "no run-end"));
    /* The whole trace: its events as read, not run-end's engine count. */
    r = run(fmt("check-trace %1$s/lh_whole.jsonl --format json", scratch()));
    assert_int_equal(r->code, 0);
    char buf[1 << 16];
    slurp(sp("lh_whole.jsonl"), buf, sizeof buf);
    long lines = 0;
    for (const char *p = buf; *p; p++) lines += *p == '\n';
    assert_non_null(strstr(r->out, fmt("\"events\":%ld,", lines - 1)));
    assert_non_null(strstr(r->out, "\"outcome\":\"RAN\""));
    unlink(sp("lh_safe.lsim"));
    unlink(sp("lh_whole.jsonl"));
    unlink(sp("lh_cut.jsonl"));
}

/* Issue 19: trace files are read within a bound (256 MiB), endless input
 * is refused in bounded memory, and a FIFO with no writer is waited for
 * out loud. */
static void test_trace_input_bounded(void **state) {
    (void)state;
    /* Larger than the limit: refused at once (a sparse file, no disk). */
    assert_int_equal(system(fmt("truncate -s 257M %1$s/lh_big.jsonl", scratch())), 0);
    struct result *r = run(fmt("check-trace %1$s/lh_big.jsonl", scratch()));
    assert_int_equal(r->code, 65);
    assert_non_null(strstr(r->err, fmt("%s/lh_big.jsonl: larger than 256 MiB, the limit of a trace file", scratch())));
    r = run(fmt("diff %1$s/lh_big.jsonl %1$s/lh_big.jsonl", scratch()));
    assert_int_equal(r->code, 65);
    unlink(sp("lh_big.jsonl"));
    /* Endless input, in 600 MB of address space at most. */
    r = run_in(TEST_ADDRESS_LIMIT_OK ? "ulimit -v 600000;" : "", "check-trace /dev/zero");
    assert_int_equal(r->code, 65);
    assert_non_null(strstr(r->err, "/dev/zero: larger than 256 MiB"));
    /* A FIFO: a note while no writer has come, then the trace is read. */
    r = run(fmt("run " GC " --no-timeline --trace %1$s/lh_fifo_src.jsonl", scratch()));
    assert_int_equal(r->code, 0);
    unlink(sp("lh_in_fifo"));
    assert_int_equal(mkfifo(sp("lh_in_fifo"), 0600), 0);
    r = run_in("{", fmt("check-trace %1$s/lh_in_fifo & sleep 1; cat %1$s/lh_fifo_src.jsonl > %1$s/lh_in_fifo; "
                        "wait $!; }",
                        scratch()));
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->err, fmt("locksim: waiting for a writer on FIFO '%s/lh_in_fifo'", scratch())));
    assert_non_null(strstr(r->out, "Verdict: UNSAFE"));
    unlink(sp("lh_in_fifo"));
    unlink(sp("lh_fifo_src.jsonl"));
}

/* Issue 19: a file name (or title) that is not UTF-8 still gives valid JSON
 * Lines and valid JUnit XML from batch: U+FFFD for each bad byte. */
static void test_batch_outputs_valid_utf8(void **state) {
    (void)state;
    system(fmt("mkdir -p %1$s/lh_u8 && cp " GC " %1$s/lh_u8/bad$(printf '\\377')name.lsim", scratch()));
    struct result *r = run(fmt("batch %1$s/lh_u8 --format jsonl > %1$s/lh_u8.jsonl; "
                               "python3 -c 'import json,sys;[json.loads(l) for l in "
                               "sys.stdin.buffer.read().decode(\"utf-8\").splitlines()]' "
                               "< %1$s/lh_u8.jsonl && echo json-ok",
                               scratch()));
    assert_non_null(strstr(r->out, "json-ok"));
    static char buf[1 << 16];
    slurp(sp("lh_u8.jsonl"), buf, sizeof buf);
    assert_non_null(strstr(buf, "bad\xef\xbf\xbdname.lsim"));
    /* An override echoed in "set", refused for its bad byte. */
    r = run(fmt("batch %1$s/lh_u8 --format jsonl --set \"title=t$(printf '\\376\\033')x\" > %1$s/lh_u8.jsonl; "
                "python3 -c 'import json,sys;[json.loads(l) for l in "
                "sys.stdin.buffer.read().decode(\"utf-8\").splitlines()]' "
                "< %1$s/lh_u8.jsonl && echo json-ok",
                scratch()));
    assert_non_null(strstr(r->out, "json-ok"));
    slurp(sp("lh_u8.jsonl"), buf, sizeof buf);
    assert_non_null(strstr(buf, "\"set\":{\"title\":\"t\xef\xbf\xbd\\u001bx\"}"));
    r = run(fmt("batch %1$s/lh_u8 --format junit > %1$s/lh_u8.xml; xmllint --noout %1$s/lh_u8.xml && echo xml-ok",
                scratch()));
    assert_non_null(strstr(r->out, "xml-ok"));
    system(fmt("rm -rf %1$s/lh_u8 %1$s/lh_u8.jsonl %1$s/lh_u8.xml", scratch()));
}

/* Issue 19: control characters from a trace's title or event text reach
 * the terminal escaped ("\x1b"), with --no-color too; UTF-8 stays. */
static void test_trace_text_escaped(void **state) {
    (void)state;
    struct result *r = run(fmt("run " GC " --no-timeline --trace %1$s/lh_esc_src.jsonl", scratch()));
    assert_int_equal(r->code, 0);
    /* The title and the first event's text made hostile (valid JSON). */
    assert_int_equal(
            system(fmt("sed -e '1s/\"title\":\"[^\"]*\"/\"title\":\"ev\\\\u001b]0;x\\\\u0007\\\\u009b \\xc3\\xa9\"/' "
                       "-e '2s/}$/,\"text\":\"r\\\\u001b[31md\\\\u007f\"}/' "
                       "%1$s/lh_esc_src.jsonl > %1$s/lh_esc.jsonl",
                       scratch())),
            0);
    r = run(fmt("check-trace %1$s/lh_esc.jsonl --no-color", scratch()));
    assert_int_equal(r->code, 0);
    assert_null(strchr(r->out, 0x1b));
    assert_non_null(strstr(r->out, "ev\\x1b]0;x\\x07\\u009b \xc3\xa9, algorithm"));
    r = run(fmt("diff %1$s/lh_esc.jsonl %1$s/lh_esc_src.jsonl", scratch()));
    assert_int_equal(r->code, 1);
    assert_null(strchr(r->out, 0x1b));
    assert_null(strchr(r->out, 0x07));
    assert_non_null(strstr(r->out, "\"r\\x1b[31md\\x7f\""));
    unlink(sp("lh_esc.jsonl"));
    unlink(sp("lh_esc_src.jsonl"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_trace_outputs),          cmocka_unit_test(test_check_json_hash),
            cmocka_unit_test(test_truncated_never_passes), cmocka_unit_test(test_unknown_keys),
            cmocka_unit_test(test_plugins_refused),        cmocka_unit_test(test_replay_and_json_escaping),
            cmocka_unit_test(test_smaller_gaps),           cmocka_unit_test(test_chrome_trace),
            cmocka_unit_test(test_link_loss_in_trace),     cmocka_unit_test(test_stdout_full_every_command),
            cmocka_unit_test(test_plugin_counts_refused),  cmocka_unit_test(test_trace_without_run_end),
            cmocka_unit_test(test_trace_input_bounded),    cmocka_unit_test(test_batch_outputs_valid_utf8),
            cmocka_unit_test(test_trace_text_escaped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
