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
    unlink("/tmp/lh_fifo");
    assert_int_equal(mkfifo("/tmp/lh_fifo", 0600), 0);
    struct result *r = run("run " GC " --no-timeline --trace /tmp/lh_fifo & cat /tmp/lh_fifo > /tmp/lh_fifo_out; wait");
    assert_int_equal(lstat("/tmp/lh_fifo", &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    char buf[65536];
    slurp("/tmp/lh_fifo_out", buf, sizeof buf);
    assert_non_null(strstr(buf, "\"format\":\"locksim-trace\""));
    unlink("/tmp/lh_fifo");
    unlink("/tmp/lh_fifo_out");
    /* /dev/null stays a character device. */
    r = run("run " GC " --no-timeline --trace /dev/null");
    assert_int_equal(r->code, 0);
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    /* A symlink stays a link; its target gets the trace. */
    unlink("/tmp/lh_link");
    write_file("/tmp/lh_target", "old\n");
    assert_int_equal(symlink("/tmp/lh_target", "/tmp/lh_link"), 0);
    r = run("run " GC " --no-timeline --trace /tmp/lh_link");
    assert_int_equal(r->code, 0);
    assert_int_equal(lstat("/tmp/lh_link", &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    slurp("/tmp/lh_target", buf, sizeof buf);
    assert_non_null(strstr(buf, "\"format\":\"locksim-trace\""));
    unlink("/tmp/lh_link");
    unlink("/tmp/lh_target");
    /* "-" is standard output (the report moves to stderr). */
    r = run("run " GC " --no-timeline --trace -");
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "\"format\":\"locksim-trace\""));
    assert_non_null(strstr(r->err, "Verdict: UNSAFE"));
    assert_int_not_equal(stat("-", &st), 0);
    /* The input file is refused, and left as it was. */
    system("cp " GC " /tmp/lh_in.lsim");
    slurp("/tmp/lh_in.lsim", buf, sizeof buf);
    size_t before = strlen(buf);
    r = run("run /tmp/lh_in.lsim --trace /tmp/lh_in.lsim");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "it is the input file"));
    slurp("/tmp/lh_in.lsim", buf, sizeof buf);
    assert_int_equal(strlen(buf), before);
    unlink("/tmp/lh_in.lsim");
    /* A full device is exit 73 with the reason; so is a full stdout. */
    r = run("run " GC " --no-timeline --trace /dev/full");
    assert_int_equal(r->code, 73);
    assert_non_null(strstr(r->err, "No space left on device"));
    r = run("run " GC " > /dev/full 2>/tmp/lh_full_err; echo status=$?");
    assert_non_null(strstr(r->out, "status=73"));
    slurp("/tmp/lh_full_err", buf, sizeof buf);
    assert_non_null(strstr(buf, "cannot write to standard output: No space left on device"));
    unlink("/tmp/lh_full_err");
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
    write_file("/tmp/lh_cut.lsim", "duration 60s\nmax-events 20\nlock lease ttl=30s\n"
                                   "client A: acquire; work 10s; write; release\n"
                                   "client B @31s: acquire; write; release\n"
                                   "expect no double-entry\n");
    struct result *r = run("check /tmp/lh_cut.lsim");
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->out, "TRUNCATED /tmp/lh_cut.lsim"));
    assert_non_null(strstr(r->out, "--set max-events=N"));
    assert_non_null(strstr(r->out, "scenarios: 0 passed, 1 failed"));
    r = run("run /tmp/lh_cut.lsim --no-timeline");
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->out, "Verdict: TRUNCATED: the run was cut short at t="));
    assert_non_null(strstr(r->out, "after 20 events (max-events 20)"));
    r = run("check --format json /tmp/lh_cut.lsim");
    assert_int_equal(r->code, 1);
    assert_true(json_lines_valid(r->out));
    assert_non_null(strstr(r->out, "\"outcome\":\"TRUNCATED\""));
    assert_non_null(strstr(r->out, "\"ok\":null"));
    r = run("check --format tap /tmp/lh_cut.lsim");
    assert_non_null(strstr(r->out, "not ok 1 - /tmp/lh_cut.lsim (TRUNCATED)"));
    r = run("check --format junit /tmp/lh_cut.lsim");
    assert_non_null(strstr(r->out, "failures=\"1\""));
    assert_non_null(strstr(r->out, "TRUNCATED"));
    /* The three-line livelock: zero latency, acquire; release forever. */
    write_file("/tmp/lh_live.lsim", "network latency=0ms\nlock lease ttl=30s\n"
                                    "client A repeat=0: acquire; release\nexpect verdict SAFE\n");
    r = run("check /tmp/lh_live.lsim");
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->out, "TRUNCATED"));
    unlink("/tmp/lh_cut.lsim");
    unlink("/tmp/lh_live.lsim");
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
             "cc -std=c11 -shared -fPIC -Isim -o /tmp/%s.so -x c - <<'EOF'\n#include \"lock.h\"\n%s\nEOF", name,
             body);
    assert_int_equal(system(cmd), 0);
}

static void test_plugins_refused(void **state) {
    (void)state;
    plugin("lh_empty", "static const struct lock_algo a = {.abi = LOCK_ABI_VERSION, .name = \"empty\"};\n"
                       "const struct lock_algo *locksim_algo(void) { return &a; }");
    struct result *r = run("run " GC " --algo /tmp/lh_empty.so");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "no client_acquire callback"));
    plugin("lh_noname", "static void f(struct lock_ctx *c, void *s) { (void)c; (void)s; }\n"
                        "static const struct lock_algo a = {.abi = LOCK_ABI_VERSION, .client_acquire = f,"
                        " .client_release = f};\n"
                        "const struct lock_algo *locksim_algo(void) { return &a; }");
    r = run("run " GC " --algo /tmp/lh_noname.so");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, ".name is NULL"));
    assert_null(strstr(r->err, "(null)"));
    plugin("lh_null", "const struct lock_algo *locksim_algo(void) { return 0; }");
    r = run("run " GC " --algo /tmp/lh_null.so");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "returned NULL"));
    assert_null(strstr(r->err, "version 0"));
    /* A bare file name ending in .so is looked for in the current folder. */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cd /tmp && cp %s/" GC " /tmp/lh_gc.lsim &&", getcwd(cmd + 300, 200));
    r = run_in(cmd, "run lh_gc.lsim --algo lh_null.so");
    assert_non_null(strstr(r->err, "returned NULL"));
    r = run("run " GC " --algo nosuch_here.so");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "no algorithm file 'nosuch_here.so' in the current directory"));
    /* `lock ./x.so` in a scenario: found beside the file; refused with 65. */
    system("mkdir -p /tmp/lh_plug && cp /tmp/lh_null.so /tmp/lh_plug/ && "
           "cc -std=c11 -shared -fPIC -Isim -o /tmp/lh_plug/my_lock.so examples/algorithms/my_lock.c");
    write_file("/tmp/lh_plug/ok.lsim", "lock ./my_lock.so\nresource fencing=on\n"
                                       "client A: acquire; write; release\nexpect verdict SAFE\n");
    r = run_in("cd / &&", "check /tmp/lh_plug/ok.lsim");
    assert_int_equal(r->code, 0);
    write_file("/tmp/lh_plug/bad.lsim", "lock ./lh_null.so\nclient A: acquire\nexpect verdict SAFE\n");
    r = run("check /tmp/lh_plug/bad.lsim");
    assert_int_equal(r->code, 65);
    assert_non_null(strstr(r->err, "/tmp/lh_plug/bad.lsim:1:6: cannot use algorithm '/tmp/lh_plug/lh_null.so': "
                                   "its locksim_algo() returned NULL"));
    system("rm -rf /tmp/lh_plug");
    unlink("/tmp/lh_empty.so");
    unlink("/tmp/lh_noname.so");
    unlink("/tmp/lh_null.so");
    unlink("/tmp/lh_gc.lsim");
}

/* The replay line, pasted into a shell, reproduces the output byte for
 * byte, even with spaces and quotes in the path and the overrides; JSON
 * stays valid with quotes, backslashes and control characters. */
static void test_replay_and_json_escaping(void **state) {
    (void)state;
    system("mkdir -p '/tmp/lh dir' && cp " GC " '/tmp/lh dir/my \"gc\" file.lsim'");
    struct result *r = run("run '/tmp/lh dir/my \"gc\" file.lsim' --width 90 --set 'title=Lecture 3 \"demo\" \\ x'");
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
    r = run("run '/tmp/lh dir/my \"gc\" file.lsim' --format json --narrate --set 'title=a \"q\" \\ b'");
    assert_int_equal(r->code, 0);
    assert_true(json_lines_valid(r->out));
    assert_non_null(strstr(r->out, "\"title\":\"a \\\"q\\\" \\\\ b\""));
    assert_non_null(strstr(r->out, "\"narration\":[\"t=0s"));
    write_file("/tmp/lh_ctl.lsim", "title \"tab\there\"\nlock lease\nclient A: acquire; write; release\n"
                                   "expect verdict SAFE\n");
    r = run("check --format json /tmp/lh_ctl.lsim");
    assert_true(json_lines_valid(r->out));
    system("rm -rf '/tmp/lh dir' /tmp/lh_ctl.lsim");
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
    write_file("/tmp/lh_bad.lsim", "lock lease\nclient A: acquire; wrte; release\n");
    r = run("check --format json /tmp/lh_bad.lsim " GC);
    assert_int_equal(r->code, 65);
    assert_true(json_lines_valid(r->out));
    assert_non_null(strstr(r->out, "\"outcome\":\"ERROR\",\"error_code\":\"PARSE\",\"exit_status\":65"));
    r = run("check --format junit /tmp/lh_bad.lsim " GC);
    assert_non_null(strstr(r->out, "errors=\"1\""));
    assert_non_null(strstr(r->out, "time=\""));
    assert_non_null(strstr(r->out, "<error message=\"malformed scenario\">/tmp/lh_bad.lsim:2:20:"));
    unlink("/tmp/lh_bad.lsim");
    r = run_in("cd / &&", "demo");
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "2/2  The same timeline with fencing tokens"));
    assert_non_null(strstr(r->out, "Verdict: SAFE"));
}

/* --trace-format chrome: Chrome Trace Event JSON for Perfetto, with every
 * node a track, the double entry a span of its own, exact microseconds. */
static void test_chrome_trace(void **state) {
    (void)state;
    struct result *r = run("run " GC " --no-timeline --trace /tmp/lh_chrome.json --trace-format chrome");
    assert_int_equal(r->code, 0);
    static char buf[1 << 20];
    slurp("/tmp/lh_chrome.json", buf, sizeof buf);
    const char *end = json_value(buf);
    assert_non_null(end);
    assert_true(*json_ws(end) == '\0'); /* one JSON object, nothing after it */
    assert_non_null(strstr(buf, "\"traceEvents\":["));
    assert_non_null(strstr(buf, "\"name\":\"thread_name\",\"args\":{\"name\":\"S1\"}"));
    assert_non_null(strstr(buf, "\"cat\":\"double-entry\",\"name\":\"B and A both in the critical section\","
                                "\"ts\":31000000.000,\"dur\":1000000.000"));
    assert_non_null(strstr(buf, "\"name\":\"paused\",\"ts\":5000000.000,\"dur\":27000000.000"));
    assert_non_null(strstr(buf, "STALE write accepted (damage)"));
    unlink("/tmp/lh_chrome.json");
    r = run("run " GC " --trace-format chrome");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "needs --trace"));
    r = run("run " GC " --trace /tmp/x.json --trace-format perfetto");
    assert_int_equal(r->code, 64);
}

/* A link change carries its loss (trace format 2) and the narration says
 * so, instead of calling a 100% loss a latency change. */
static void test_link_loss_in_trace(void **state) {
    (void)state;
    write_file("/tmp/lh_link.lsim", "lock lease\nclient A: acquire; work 5s; write; release\n"
                                    "@1s link A S1 loss=100%\n@2s link A R loss=2.5% latency=3ms\n"
                                    "expect verdict SAFE\n");
    struct result *r = run("run /tmp/lh_link.lsim --narrate --no-timeline --trace /tmp/lh_link.jsonl");
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "link A -> S1 now loses every message"));
    assert_non_null(strstr(r->out, "link A -> R now takes 3ms, and loses 2.5% of messages"));
    static char buf[1 << 16];
    slurp("/tmp/lh_link.jsonl", buf, sizeof buf);
    assert_non_null(strstr(buf, "\"version\":4"));
    assert_non_null(strstr(buf, "\"kind\":\"link\",\"node\":\"A\",\"peer\":\"S1\",\"token\":0,\"grant\":1000000"));
    assert_non_null(strstr(buf, "\"peer\":\"R\",\"token\":0,\"grant\":25000,\"a\":3000000,\"b\":3000000"));
    unlink("/tmp/lh_link.lsim");
    unlink("/tmp/lh_link.jsonl");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_outputs),         cmocka_unit_test(test_check_json_hash),
        cmocka_unit_test(test_truncated_never_passes), cmocka_unit_test(test_unknown_keys),
        cmocka_unit_test(test_plugins_refused),       cmocka_unit_test(test_replay_and_json_escaping),
        cmocka_unit_test(test_smaller_gaps),          cmocka_unit_test(test_chrome_trace),
        cmocka_unit_test(test_link_loss_in_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
