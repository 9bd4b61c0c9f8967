/* The scenario language, as a user relies on it: scripts parse to exact data
 * (times in ns, steps, points, expectations), and every malformed script is
 * refused with the line and column of the mistake and a sentence about it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "error.h"
#include "scenario.h"
#include "scenario_file.h"

#define S_ (SIM_NS_PER_S)
#define MS_ (SIM_NS_PER_MS)

/* struct scenario is large (~150 KiB): tests share static ones. */
static struct scenario sc, sc2;
static struct scn_error err;

/* scenario_parse() starts from scenario_init(): what *s held before must be
 * closed first (the statics here are always closed or zeroed). */
static int parse_n(struct scenario *s, const char *fname, const char *text, size_t len) {
    scenario_close(s);
    return scenario_parse(s, fname, text, len, &err);
}

static int parse(struct scenario *s, const char *text) { return parse_n(s, "t.lsim", text, strlen(text)); }

/* Parse text that must be valid; show the error when it is not. */
static void parse_ok(struct scenario *s, const char *text) {
    int rc = parse(s, text);

    if (rc != 0) print_error("unexpected error %s:%d:%d: %s\n", err.file, err.pos.line, err.pos.col, err.msg);
    assert_int_equal(rc, 0);
}

/* A file next to this source, in tests/parse_cases/. */
static void case_path(char *buf, size_t n, const char *name) {
    const char *slash = strrchr(__FILE__, '/');
    int dir = slash ? (int)(slash - __FILE__) + 1 : 0;

    snprintf(buf, n, "%.*sparse_cases/%s", dir, __FILE__, name);
}

static const char *const example = "# The seed's timeline: a GC pause outlives the lease.\n"
                                   "title \"GC pause outlives the lease\"\n"
                                   "purpose correctness\n"
                                   "lock lease ttl=30s release=compare-and-delete first-token=41\n"
                                   "resource stock=1 fencing=off\n"
                                   "network latency=0ms\n"
                                   "client A: acquire; read; work 10s; write; release\n"
                                   "client B @31s: acquire retry=1s; read; write; work 5s; release\n"
                                   "@5s pause A 27s\n"
                                   "on B.after-acquire clock S1 step +1s wall\n"
                                   "expect double-entry\n"
                                   "expect stale-write accepted\n"
                                   "expect verdict UNSAFE\n"
                                   "expect double-entry-time >= 1s\n";

/* ---- Defaults ---- */

static void test_defaults_come_from_init(void **state) {
    (void)state;
    /* A fresh scenario holds every documented default. */
    scenario_init(&sc);
    assert_string_equal(sc.title, "");
    assert_int_equal(sc.purpose, SCN_PURPOSE_CORRECTNESS);
    assert_int_equal(sc.seed, 1);
    assert_int_equal(sc.duration_ns, 120 * S_);
    assert_int_equal(sc.stuck_after_ns, 60 * S_);
    assert_int_equal(sc.max_events, 10000000);
    assert_string_equal(sc.algo, "lease");
    assert_int_equal(sc.algo_pos.line, 0);
    assert_int_equal(sc.nservers, 0);
    assert_int_equal(sc.stock, 1);
    assert_int_equal(sc.fencing, 0);
    assert_int_equal(sc.latency.min_ns, MS_);
    assert_int_equal(sc.latency.max_ns, MS_);
    assert_int_equal(sc.loss_ppm, 0);
    assert_int_equal(sc.retry_ns, S_);
    assert_int_equal(sc.nclients + sc.nfaults + sc.nexpects + sc.nopts, 0);
    assert_null(sc.clients);
    /* Closing an empty scenario, and closing twice, are both fine. */
    scenario_close(&sc);
    scenario_close(&sc);

    /* An empty script (or only comments) is the defaults too. */
    parse_ok(&sc, "");
    assert_int_equal(sc.duration_ns, 120 * S_);
    parse_ok(&sc, "# nothing\n\n   \t\n");
    assert_string_equal(sc.file, "t.lsim");
    scenario_close(&sc);
}

static void test_add_client_and_fault_grow(void **state) {
    int i;

    (void)state;
    /* Code (tests, benchmarks) builds scenarios with the same growth functions. */
    scenario_init(&sc);
    for (i = 0; i < 1000; i++) {
        struct scn_client *c = scenario_add_client(&sc);
        assert_non_null(c);
        assert_int_equal(c->repeat, 1); /* new elements are zeroed, repeat once */
        snprintf(c->name, sizeof c->name, "C%d", i);
        assert_non_null(scenario_add_fault(&sc));
    }
    assert_int_equal(sc.nclients, 1000);
    assert_int_equal(sc.nfaults, 1000);
    assert_true(sc.cap_clients >= 1000);
    assert_string_equal(sc.clients[999].name, "C999");
    assert_int_equal(sc.faults[0].occurrence, 1);
    scenario_close(&sc);
    assert_null(sc.clients);
    assert_null(sc.faults);
    assert_int_equal(sc.nclients, 0);
}

/* ---- The example from the brief, value by value ---- */

static void test_example_parses_to_exact_values(void **state) {
    const struct scn_program *pa, *pb;
    const struct scn_fault *f;

    (void)state;
    parse_ok(&sc, example);

    /* Header lines. */
    assert_string_equal(sc.title, "GC pause outlives the lease");
    assert_int_equal(sc.purpose, SCN_PURPOSE_CORRECTNESS);
    assert_string_equal(sc.algo, "lease");
    assert_int_equal(sc.algo_pos.line, 4);
    assert_int_equal(sc.algo_pos.col, 6);
    assert_int_equal(sc.nopts, 3);
    assert_string_equal(scenario_opt(&sc, "ttl")->val, "30s");
    assert_int_equal(scenario_opt(&sc, "ttl")->pos.line, 4);
    assert_int_equal(scenario_opt(&sc, "ttl")->pos.col, 12);
    assert_string_equal(scenario_opt(&sc, "release")->val, "compare-and-delete");
    assert_string_equal(scenario_opt(&sc, "first-token")->val, "41");
    assert_int_equal(scenario_opt(&sc, "first-token")->pos.col, 47);
    assert_null(scenario_opt(&sc, "servers"));
    assert_int_equal(sc.nservers, 0);
    assert_int_equal(sc.stock, 1);
    assert_int_equal(sc.fencing, 0);
    assert_int_equal(sc.latency.min_ns, 0);
    assert_int_equal(sc.latency.max_ns, 0);
    /* Not written: defaults stay. */
    assert_int_equal(sc.seed, 1);
    assert_int_equal(sc.duration_ns, 120 * S_);

    /* Two clients with different programs. */
    assert_int_equal(sc.nclients, 2);
    assert_string_equal(sc.clients[0].name, "A");
    assert_int_equal(sc.clients[0].start_ns, 0);
    assert_int_equal(sc.clients[0].repeat, 1);
    assert_int_equal(sc.clients[0].pos.line, 7);
    assert_string_equal(sc.clients[1].name, "B");
    assert_int_equal(sc.clients[1].start_ns, 31 * S_);
    assert_int_equal(sc.nprograms, 2);
    pa = &sc.programs[sc.clients[0].program];
    pb = &sc.programs[sc.clients[1].program];
    assert_int_equal(pa->nsteps, 5);
    assert_int_equal(pa->steps[0].kind, SCN_STEP_ACQUIRE);
    assert_int_equal(pa->steps[0].retry_ns, 0); /* 0 = the scenario's retry */
    assert_int_equal(pa->steps[1].kind, SCN_STEP_READ);
    assert_int_equal(pa->steps[2].kind, SCN_STEP_WORK);
    assert_int_equal(pa->steps[2].dur_ns, 10 * S_);
    assert_int_equal(pa->steps[2].pos.line, 7);
    assert_int_equal(pa->steps[2].pos.col, 26);
    assert_int_equal(pa->steps[3].kind, SCN_STEP_WRITE);
    assert_int_equal(pa->steps[4].kind, SCN_STEP_RELEASE);
    assert_int_equal(pb->nsteps, 5);
    assert_int_equal(pb->steps[0].retry_ns, S_);
    assert_int_equal(pb->steps[3].kind, SCN_STEP_WORK);
    assert_int_equal(pb->steps[3].dur_ns, 5 * S_);

    /* A pauses at 5s for 27s. */
    assert_int_equal(sc.nfaults, 2);
    f = &sc.faults[0];
    assert_int_equal(f->kind, SCN_FAULT_PAUSE);
    assert_int_equal(f->point, SCN_POINT_NONE);
    assert_int_equal(f->at_ns, 5 * S_);
    assert_string_equal(f->node, "A");
    assert_int_equal(f->dur_ns, 27 * S_);
    assert_int_equal(f->pos.line, 9);
    /* S1's wall clock jumps 1s forward the first time B holds the lock. */
    f = &sc.faults[1];
    assert_int_equal(f->kind, SCN_FAULT_CLOCK_STEP);
    assert_string_equal(f->trigger, "B");
    assert_int_equal(f->point, SCN_POINT_AFTER_ACQUIRE);
    assert_int_equal(f->occurrence, 1);
    assert_string_equal(f->node, "S1");
    assert_int_equal(f->delta_ns, S_);
    assert_int_equal(f->which, SCN_CLOCK_WALL);

    /* Four expectations, kept with their text. */
    assert_int_equal(sc.nexpects, 4);
    assert_int_equal(sc.expects[0].metric, SCN_M_DOUBLE_ENTRIES);
    assert_int_equal(sc.expects[0].cmp, SCN_CMP_GE);
    assert_int_equal(sc.expects[0].value, 1);
    assert_string_equal(sc.expects[0].text, "double-entry");
    assert_int_equal(sc.expects[1].metric, SCN_M_STALE_ACCEPTED);
    assert_int_equal(sc.expects[1].cmp, SCN_CMP_GE);
    assert_string_equal(sc.expects[1].text, "stale-write accepted");
    assert_int_equal(sc.expects[2].metric, SCN_M_VERDICT);
    assert_int_equal(sc.expects[2].cmp, SCN_CMP_EQ);
    assert_int_equal(sc.expects[2].value, SCN_VERDICT_UNSAFE);
    assert_int_equal(sc.expects[3].metric, SCN_M_DOUBLE_ENTRY_NS);
    assert_int_equal(sc.expects[3].cmp, SCN_CMP_GE);
    assert_int_equal(sc.expects[3].value, S_);
    assert_int_equal(sc.expects[3].pos.line, 14);
    scenario_close(&sc);
}

static void test_load_reads_files_and_reports_missing_ones(void **state) {
    char path[512];
    int rc;

    (void)state;
    /* The example as a file parses the same, and keeps the file name. */
    case_path(path, sizeof path, "gc_pause.lsim");
    rc = scenario_load(&sc, path, &err);
    if (rc != 0) print_error("%s:%d:%d: %s\n", err.file, err.pos.line, err.pos.col, err.msg);
    assert_int_equal(rc, 0);
    assert_string_equal(sc.file, path);
    assert_int_equal(sc.nclients, 2);
    assert_int_equal(sc.faults[0].at_ns, 5 * S_);
    scenario_close(&sc);

    /* A file using every statement parses. */
    case_path(path, sizeof path, "everything.lsim");
    rc = scenario_load(&sc, path, &err);
    if (rc != 0) print_error("%s:%d:%d: %s\n", err.file, err.pos.line, err.pos.col, err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(sc.nclients, 12);
    scenario_close(&sc);

    /* A malformed file is -1 with the file name in the error. */
    case_path(path, sizeof path, "bad_step.lsim");
    assert_int_equal(scenario_load(&sc, path, &err), LSIM_EPARSE);
    assert_string_equal(err.file, path);
    assert_int_equal(err.pos.line, 4);
    assert_int_equal(err.pos.col, 20);
    assert_non_null(strstr(err.msg, "unknown step 'wrte'"));
    scenario_close(&sc);

    /* A missing file is -2, saying why. */
    assert_int_equal(scenario_load(&sc, "no/such/file.lsim", &err), LSIM_ENOINPUT);
    assert_string_equal(err.file, "no/such/file.lsim");
    assert_string_equal(err.msg, "cannot open 'no/such/file.lsim': No such file or directory");
    scenario_close(&sc);

    /* A directory cannot be read either, and says so. */
    assert_int_equal(scenario_load(&sc, "/", &err), LSIM_ENOINPUT);
    assert_string_equal(err.msg, "cannot read '/': Is a directory");
    scenario_close(&sc);

    /* "-" reads standard input, named <stdin> in messages. */
    case_path(path, sizeof path, "bad_step.lsim");
    assert_non_null(freopen(path, "rb", stdin));
    assert_int_equal(scenario_load(&sc, "-", &err), LSIM_EPARSE);
    assert_string_equal(err.file, "<stdin>");
    assert_string_equal(sc.file, "<stdin>");
    assert_int_equal(err.pos.line, 4);
    scenario_close(&sc);
}

static void test_load_refuses_files_over_16_mib(void **state) {
    char path[] = "/tmp/locksim_test_parse_XXXXXX";
    int fd;

    (void)state;
    /* A sparse 17 MiB file is refused before parsing. */
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)17 << 20), 0);
    close(fd);
    assert_int_equal(scenario_load(&sc, path, &err), LSIM_ENOINPUT);
    assert_non_null(strstr(err.msg, "larger than 16 MiB"));
    scenario_close(&sc);
    unlink(path);
}

/* ---- Values ---- */

static void test_durations_convert_exactly(void **state) {
    static const struct {
        const char *text;
        sim_ns ns;
    } good[] = {
            {"30s", 30 * S_},
            {"500ms", 500 * MS_},
            {"1.5s", 1500000000},
            {"2m", 120 * S_},
            {"250us", 250000},
            {"7ns", 7},
            {"0s", 0},
            {"0.000000001s", 1},
            {"1.25ms", 1250000},
            {"0.5m", 30 * S_},
            {"1.000000001s", 1000000001},
            {"1000000s", SIM_TIME_MAX},
            {"16666.666666666m", 999999999999960},
    };
    static const char *const bad[] = {
            "30",
            "30sec",
            "30 s",
            "1.5ns",
            "-3s",
            "+3s",
            "1.0000000001s",
            "1000001s",
            "",
            "s",
            "1.s",
            ".5s",
            "99999999999999999999999s",
            "1e3s",
            "5S",
            "16666.6666666667m",
    };
    size_t i;
    sim_ns v;

    (void)state;
    for (i = 0; i < sizeof good / sizeof good[0]; i++) {
        v = -1;
        assert_int_equal(scn_parse_duration(good[i].text, &v), 0);
        assert_int_equal(v, good[i].ns);
    }
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (scn_parse_duration(bad[i], &v) != -1) print_error("'%s' was accepted\n", bad[i]);
        assert_int_equal(scn_parse_duration(bad[i], &v), -1);
    }
    assert_int_equal(scn_parse_duration(NULL, &v), -1);
}

static void test_integers_and_booleans(void **state) {
    int64_t v;
    int b;

    (void)state;
    assert_int_equal(scn_parse_int("41", &v), 0);
    assert_int_equal(v, 41);
    assert_int_equal(scn_parse_int("-9223372036854775808", &v), 0);
    assert_true(v == INT64_MIN);
    assert_int_equal(scn_parse_int("9223372036854775807", &v), 0);
    assert_true(v == INT64_MAX);
    assert_int_equal(scn_parse_int("9223372036854775808", &v), -1);
    assert_int_equal(scn_parse_int("12x", &v), -1);
    assert_int_equal(scn_parse_int("", &v), -1);
    assert_int_equal(scn_parse_bool("on", &b), 0);
    assert_int_equal(b, 1);
    assert_int_equal(scn_parse_bool("No", &b), 0);
    assert_int_equal(b, 0);
    assert_int_equal(scn_parse_bool("true", &b), 0);
    assert_int_equal(b, 1);
    assert_int_equal(scn_parse_bool("maybe", &b), -1);
}

static void test_network_values(void **state) {
    (void)state;
    /* A latency range and a loss in percent. */
    parse_ok(&sc, "network latency=1ms..20ms loss=0.5%\n");
    assert_int_equal(sc.latency.min_ns, MS_);
    assert_int_equal(sc.latency.max_ns, 20 * MS_);
    assert_int_equal(sc.loss_ppm, 5000);
    /* A loss as a fraction, and in ppm. */
    parse_ok(&sc, "network loss=0.005\n");
    assert_int_equal(sc.loss_ppm, 5000);
    parse_ok(&sc, "network loss=1\n");
    assert_int_equal(sc.loss_ppm, 1000000);
    parse_ok(&sc, "network loss=100%\n");
    assert_int_equal(sc.loss_ppm, 1000000);
    parse_ok(&sc, "network loss=0.0001%\n");
    assert_int_equal(sc.loss_ppm, 1);
    parse_ok(&sc, "network loss=250ppm latency=3ms\n");
    assert_int_equal(sc.loss_ppm, 250);
    assert_int_equal(sc.latency.max_ns, 3 * MS_);

    /* Header links and clocks may name clients declared further down. */
    parse_ok(&sc, "link A S1 loss=100%\n"
                  "link * S2 latency=5ms..6ms\n"
                  "clock A drift=-200ppm offset=-3s\n"
                  "clock S1 offset=+1.5s\n"
                  "client A: read\n");
    assert_int_equal(sc.nlinks, 2);
    assert_string_equal(sc.links[0].from, "A");
    assert_string_equal(sc.links[0].to, "S1");
    assert_int_equal(sc.links[0].loss_ppm, 1000000);
    assert_true(sc.links[0].lat.min_ns < 0); /* not given: the network default */
    assert_string_equal(sc.links[1].from, "*");
    assert_true(sc.links[1].loss_ppm == UINT32_MAX); /* not given */
    assert_int_equal(sc.links[1].lat.min_ns, 5 * MS_);
    assert_int_equal(sc.links[1].lat.max_ns, 6 * MS_);
    assert_int_equal(sc.nclocks, 2);
    assert_string_equal(sc.clocks[0].node, "A");
    assert_int_equal(sc.clocks[0].drift_ppm, -200);
    assert_int_equal(sc.clocks[0].wall_offset_ns, -3 * S_);
    assert_int_equal(sc.clocks[0].pos.col, 7);
    assert_int_equal(sc.clocks[1].drift_ppm, 0);
    assert_int_equal(sc.clocks[1].wall_offset_ns, 1500 * MS_);
    scenario_close(&sc);
}

static void test_header_lines(void **state) {
    (void)state;
    parse_ok(&sc, "title \"a \\\"quoted\\\" \\\\ title # not a comment\"  # a comment\n"
                  "description \"UTF-8 is fine: caf\xc3\xa9\"\r\n"
                  "purpose efficiency\n"
                  "seed 18446744073709551615\n"
                  "duration 1.5m\n"
                  "stuck-after 45s\n"
                  "max-events 500\n"
                  "retry 250ms\n"
                  "lock redlock servers=5 ttl=10s drift-factor=0.01\n"
                  "resource stock=1000000000 fencing=on\n");
    assert_string_equal(sc.title, "a \"quoted\" \\ title # not a comment");
    assert_string_equal(sc.description, "UTF-8 is fine: caf\xc3\xa9");
    assert_int_equal(sc.purpose, SCN_PURPOSE_EFFICIENCY);
    assert_true(sc.seed == UINT64_MAX);
    assert_int_equal(sc.duration_ns, 90 * S_);
    assert_int_equal(sc.stuck_after_ns, 45 * S_);
    assert_int_equal(sc.max_events, 500);
    assert_int_equal(sc.retry_ns, 250 * MS_);
    assert_string_equal(sc.algo, "redlock");
    assert_int_equal(sc.nservers, 5);
    assert_int_equal(sc.nopts, 2); /* servers= is not an option */
    assert_string_equal(sc.opts[1].key, "drift-factor");
    assert_string_equal(sc.opts[1].val, "0.01");
    assert_int_equal(sc.stock, 1000000000);
    assert_int_equal(sc.fencing, 1);
    scenario_close(&sc);
}

static void test_text_is_bounded_by_len(void **state) {
    const char text[] = "seed 5\nduration 3s";

    (void)state;
    /* The text is not NUL-terminated: only len bytes count. */
    assert_int_equal(parse_n(&sc, "t", text, 6), 0);
    assert_int_equal(sc.seed, 5);
    assert_int_equal(sc.duration_ns, 120 * S_);
    /* A line cut in the middle of a token ends the token there. */
    assert_int_equal(parse_n(&sc, "t", text, 17), LSIM_EPARSE);
    assert_int_equal(err.pos.line, 2);
    assert_int_equal(err.pos.col, 10);
    assert_non_null(strstr(err.msg, "expected a unit (ns, us, ms, s, m) after '3'"));
    /* CRLF line ends and a byte-order mark are fine. */
    parse_ok(&sc, "\xef\xbb\xbfseed 7\r\nduration 2s\r\n");
    assert_int_equal(sc.seed, 7);
    assert_int_equal(sc.duration_ns, 2 * S_);
    scenario_close(&sc);
}

/* ---- Clients ---- */

static void test_clients_are_staggered_and_share_one_program(void **state) {
    int i;

    (void)state;
    parse_ok(&sc, "clients 3 prefix=W @1s every=10ms repeat=0 think=2s: acquire; write; release\n"
                  "client X @5s: acquire; write; release\n"
                  "client Y: acquire; write; work 1s; release;\n");
    /* W1..W3 start at 1s, 1.01s, 1.02s, repeat until the end, think 2s. */
    assert_int_equal(sc.nclients, 5);
    for (i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "W%d", i + 1);
        assert_string_equal(sc.clients[i].name, name);
        assert_int_equal(sc.clients[i].start_ns, S_ + i * 10 * MS_);
        assert_int_equal(sc.clients[i].repeat, 0);
        assert_int_equal(sc.clients[i].think_ns, 2 * S_);
        assert_int_equal(sc.clients[i].program, sc.clients[0].program);
    }
    /* X has the same steps: it shares the program. Y's differ. */
    assert_int_equal(sc.clients[3].program, sc.clients[0].program);
    assert_int_equal(sc.clients[4].program, 1);
    assert_int_equal(sc.nprograms, 2);
    assert_int_equal(sc.programs[1].nsteps, 4); /* the trailing ';' is fine */

    /* The default prefix is C; every= defaults to 0. */
    parse_ok(&sc, "clients 2: read\n");
    assert_string_equal(sc.clients[0].name, "C1");
    assert_string_equal(sc.clients[1].name, "C2");
    assert_int_equal(sc.clients[1].start_ns, 0);

    /* Acquire options. */
    parse_ok(&sc, "client A repeat=3: acquire retry=2s jitter=100ms tries=4 timeout=1m; work 0s\n");
    assert_int_equal(sc.clients[0].repeat, 3);
    assert_int_equal(sc.programs[0].steps[0].retry_ns, 2 * S_);
    assert_int_equal(sc.programs[0].steps[0].jitter_ns, 100 * MS_);
    assert_int_equal(sc.programs[0].steps[0].tries, 4);
    assert_int_equal(sc.programs[0].steps[0].timeout_ns, 60 * S_);
    assert_int_equal(sc.programs[0].steps[1].dur_ns, 0);

    /* checks-loss: yes (the default) or no, on client and clients lines;
     * printed back only when no. */
    parse_ok(&sc, "client A checks-loss=no: acquire; write\nclient B checks-loss=yes: acquire\n"
                  "client C: acquire\nclients 2 checks-loss=off: acquire\n");
    assert_int_equal(sc.clients[0].ignores_loss, 1);
    assert_int_equal(sc.clients[1].ignores_loss, 0);
    assert_int_equal(sc.clients[2].ignores_loss, 0);
    assert_int_equal(sc.clients[3].ignores_loss, 1);
    assert_int_equal(sc.clients[4].ignores_loss, 1);
    {
        char *txt = NULL;
        size_t len = 0;
        assert_int_equal(scenario_print(&sc, &txt, &len), 0);
        assert_non_null(strstr(txt, "client A checks-loss=no: acquire; write\n"));
        assert_non_null(strstr(txt, "client B: acquire\n"));
        assert_non_null(strstr(txt, "client C2 checks-loss=no: acquire\n"));
        free(txt);
    }
    scenario_close(&sc);
    /* write set=V (an absolute write) is kept and printed back. */
    parse_ok(&sc, "client A: acquire; write set=7 tries=3 backoff=50ms; write; release\n");
    assert_int_equal(sc.programs[0].steps[1].absolute, 1);
    assert_int_equal(sc.programs[0].steps[1].set_value, 7);
    assert_int_equal(sc.programs[0].steps[2].absolute, 0);
    {
        char *txt = NULL;
        size_t len = 0;
        assert_int_equal(scenario_print(&sc, &txt, &len), 0);
        assert_non_null(strstr(txt, "client A: acquire; write set=7 tries=3 backoff=50ms; write; release\n"));
        free(txt);
    }
    scenario_close(&sc);
}

static void test_client_limit_is_reachable(void **state) {
    (void)state;
    /* Exactly SCN_MAX_CLIENTS clients parse; names stay unique by hash. */
    parse_ok(&sc, "clients 150000 every=1us: read\nclients 50000 prefix=D: write\n");
    assert_int_equal(sc.nclients, SCN_MAX_CLIENTS);
    assert_string_equal(sc.clients[SCN_MAX_CLIENTS - 1].name, "D50000");
    assert_int_equal(sc.clients[149999].start_ns, 149999 * SIM_NS_PER_US);
    /* One more is refused, naming the limit. */
    assert_int_equal(parse(&sc, "clients 150000: read\nclients 50001 prefix=D: write\n"), LSIM_EPARSE);
    assert_int_equal(err.pos.line, 2);
    assert_int_equal(err.pos.col, 9);
    assert_non_null(strstr(err.msg, "200001 in all; the limit is 200000"));
    scenario_close(&sc);
}

/* ---- Timed lines ---- */

static void test_relative_times_accumulate(void **state) {
    (void)state;
    parse_ok(&sc, "client A: acquire; read; write; release\n"
                  "+1s pause A\n"                 /* 1s */
                  "+2s resume A\n"                /* 3s */
                  "on A.before-write#2 crash A\n" /* not a time: does not move the clock */
                  "+500ms restart A\n"            /* 3.5s */
                  "@10s heal\n"                   /* 10s */
                  "+0s heal\n");                  /* 10s */
    assert_int_equal(sc.nfaults, 6);
    assert_int_equal(sc.faults[0].at_ns, 1 * S_);
    assert_int_equal(sc.faults[0].dur_ns, 0); /* until resume */
    assert_int_equal(sc.faults[1].at_ns, 3 * S_);
    assert_int_equal(sc.faults[2].point, SCN_POINT_BEFORE_WRITE);
    assert_int_equal(sc.faults[2].occurrence, 2);
    assert_int_equal(sc.faults[2].kind, SCN_FAULT_CRASH);
    assert_int_equal(sc.faults[3].at_ns, 3500 * MS_);
    assert_int_equal(sc.faults[3].kind, SCN_FAULT_RESTART);
    assert_int_equal(sc.faults[4].at_ns, 10 * S_);
    assert_int_equal(sc.faults[5].at_ns, 10 * S_);
    scenario_close(&sc);
}

static void test_every_fault_kind(void **state) {
    const struct scn_fault *f;

    (void)state;
    parse_ok(&sc, "client A: read\nclient B: read\n"
                  "@1s clock S2 step -250ms monotonic\n"
                  "@1s clock A step 1s both\n"
                  "@2s clock S3 drift -300ppm\n"
                  "@3s clock R slew +2s over 10s\n"
                  "@4s partition A S1 | B S2 S3 | R\n"
                  "@5s link B * latency=100ms..200ms\n"
                  "@6s link * S1 loss=0.5\n"
                  "@7s heal\n"
                  "on A.during-acquire pause S1 1.5s\n"
                  "on B.after-release#3 resume S1\n"
                  "@8s promote S2\n");
    assert_int_equal(sc.nfaults, 11);
    f = &sc.faults[0];
    assert_int_equal(f->kind, SCN_FAULT_CLOCK_STEP);
    assert_int_equal(f->delta_ns, -250 * MS_);
    assert_int_equal(f->which, SCN_CLOCK_MONO);
    assert_int_equal(sc.faults[1].which, SCN_CLOCK_BOTH);
    f = &sc.faults[2];
    assert_int_equal(f->kind, SCN_FAULT_CLOCK_DRIFT);
    assert_int_equal(f->ppm, -300);
    f = &sc.faults[3];
    assert_int_equal(f->kind, SCN_FAULT_CLOCK_SLEW);
    assert_int_equal(f->delta_ns, 2 * S_);
    assert_int_equal(f->dur_ns, 10 * S_);
    f = &sc.faults[4];
    assert_int_equal(f->kind, SCN_FAULT_PARTITION);
    assert_int_equal(f->ngroups, 3);
    assert_int_equal(f->group_len[0], 2);
    assert_int_equal(f->group_len[1], 3);
    assert_int_equal(f->group_len[2], 1);
    assert_string_equal(f->groups[1][2], "S3");
    assert_string_equal(f->groups[2][0], "R");
    f = &sc.faults[5];
    assert_int_equal(f->kind, SCN_FAULT_LINK);
    assert_string_equal(f->link.from, "B");
    assert_string_equal(f->link.to, "*");
    assert_int_equal(f->link.lat.min_ns, 100 * MS_);
    assert_int_equal(f->link.lat.max_ns, 200 * MS_);
    assert_true(f->link.loss_ppm == UINT32_MAX); /* not given: unchanged */
    assert_int_equal(sc.faults[6].link.loss_ppm, 500000);
    assert_true(sc.faults[6].link.lat.min_ns < 0);
    assert_int_equal(sc.faults[7].kind, SCN_FAULT_HEAL);
    f = &sc.faults[8];
    assert_int_equal(f->kind, SCN_FAULT_PAUSE);
    assert_int_equal(f->point, SCN_POINT_DURING_ACQUIRE);
    assert_int_equal(f->dur_ns, 1500 * MS_);
    f = &sc.faults[9];
    assert_int_equal(f->kind, SCN_FAULT_RESUME);
    assert_string_equal(f->trigger, "B");
    assert_int_equal(f->point, SCN_POINT_AFTER_RELEASE);
    assert_int_equal(f->occurrence, 3);
    f = &sc.faults[10];
    assert_int_equal(f->kind, SCN_FAULT_PROMOTE);
    assert_string_equal(f->node, "S2");
    assert_int_equal(f->at_ns, 8 * S_);
    scenario_close(&sc);
}

/* ---- Expectations ---- */

static void test_expect_forms(void **state) {
    (void)state;
    parse_ok(&sc, "expect no double-entry   # comments are not part of the text\n"
                  "expect no stale-write rejected\n"
                  "expect stale-write rejected\n"
                  "expect lost-update\n"
                  "expect wrong-release\n"
                  "expect stuck\n"
                  "expect no failed-acquire\n"
                  "expect stuck == 0\n"
                  "expect final-stock != -1\n"
                  "expect acquires < 10\n"
                  "expect writes-accepted <= 3\n"
                  "expect writes-rejected > 0\n"
                  "expect double-entries = 2\n"
                  "expect verdict safe\n"
                  "expect verdict != Stuck\n");
    assert_int_equal(sc.nexpects, 15);
    assert_int_equal(sc.expects[0].metric, SCN_M_DOUBLE_ENTRIES);
    assert_int_equal(sc.expects[0].cmp, SCN_CMP_EQ);
    assert_int_equal(sc.expects[0].value, 0);
    assert_string_equal(sc.expects[0].text, "no double-entry");
    assert_int_equal(sc.expects[1].metric, SCN_M_STALE_REJECTED);
    assert_int_equal(sc.expects[1].value, 0);
    assert_int_equal(sc.expects[2].metric, SCN_M_STALE_REJECTED);
    assert_int_equal(sc.expects[2].cmp, SCN_CMP_GE);
    assert_int_equal(sc.expects[3].metric, SCN_M_LOST_UPDATES);
    assert_int_equal(sc.expects[4].metric, SCN_M_WRONG_RELEASES);
    assert_int_equal(sc.expects[5].metric, SCN_M_STUCK);
    assert_int_equal(sc.expects[5].cmp, SCN_CMP_GE);
    assert_int_equal(sc.expects[6].metric, SCN_M_FAILED_ACQUIRES);
    assert_int_equal(sc.expects[7].metric, SCN_M_STUCK);
    assert_int_equal(sc.expects[7].cmp, SCN_CMP_EQ);
    assert_int_equal(sc.expects[8].metric, SCN_M_FINAL_STOCK);
    assert_int_equal(sc.expects[8].cmp, SCN_CMP_NE);
    assert_int_equal(sc.expects[8].value, -1);
    assert_int_equal(sc.expects[9].cmp, SCN_CMP_LT);
    assert_int_equal(sc.expects[10].cmp, SCN_CMP_LE);
    assert_int_equal(sc.expects[11].cmp, SCN_CMP_GT);
    assert_int_equal(sc.expects[12].cmp, SCN_CMP_EQ);
    assert_int_equal(sc.expects[12].value, 2);
    assert_int_equal(sc.expects[13].value, SCN_VERDICT_SAFE);
    assert_int_equal(sc.expects[14].cmp, SCN_CMP_NE);
    assert_int_equal(sc.expects[14].value, SCN_VERDICT_STUCK);
    /* Long text is truncated to fit. */
    parse_ok(&sc, "expect final-stock >=                                                   "
                  "                                          0\n");
    assert_int_equal(strlen(sc.expects[0].text), sizeof sc.expects[0].text - 1);
    scenario_close(&sc);
}

/* What the sources state: a client's token and grant time, a double entry's
 * interval, a client's writes, whose write was stale. Clients may be
 * declared after the expect line that names them. */
static void test_expect_per_client_forms(void **state) {
    (void)state;
    parse_ok(&sc, "expect B token = 34\n"
                  "expect B acquires at 31s\n"
                  "expect double-entry from 31s to 32.5s\n"
                  "expect A write rejected\n"
                  "expect no A write accepted\n"
                  "expect stale-write by A\n"
                  "expect no stale-write rejected by B\n"
                  "expect B token >= 2\n"
                  "client A: acquire; write; release\n"
                  "client B: acquire; write; release\n");
    assert_int_equal(sc.nexpects, 8);
    assert_int_equal(sc.expects[0].kind, SCN_EXPECT_TOKEN);
    assert_string_equal(sc.expects[0].client, "B");
    assert_int_equal(sc.expects[0].client_index, 1);
    assert_int_equal(sc.expects[0].cmp, SCN_CMP_EQ);
    assert_int_equal(sc.expects[0].value, 34);
    assert_int_equal(sc.expects[1].kind, SCN_EXPECT_ACQUIRES_AT);
    assert_int_equal(sc.expects[1].value, 31 * S_);
    assert_int_equal(sc.expects[2].kind, SCN_EXPECT_DE_SPAN);
    assert_int_equal(sc.expects[2].value, 31 * S_);
    assert_int_equal(sc.expects[2].to_ns, 32 * S_ + 500 * SIM_NS_PER_MS);
    assert_int_equal(sc.expects[2].client_index, -1);
    assert_int_equal(sc.expects[3].kind, SCN_EXPECT_WRITE_REJECTED);
    assert_int_equal(sc.expects[3].client_index, 0);
    assert_int_equal(sc.expects[3].cmp, SCN_CMP_GE);
    assert_int_equal(sc.expects[3].value, 1);
    assert_int_equal(sc.expects[4].kind, SCN_EXPECT_WRITE_ACCEPTED);
    assert_int_equal(sc.expects[4].cmp, SCN_CMP_EQ);
    assert_int_equal(sc.expects[4].value, 0);
    assert_int_equal(sc.expects[5].kind, SCN_EXPECT_STALE_BY);
    assert_int_equal(sc.expects[5].client_index, 0);
    assert_int_equal(sc.expects[6].kind, SCN_EXPECT_STALE_REJECTED_BY);
    assert_int_equal(sc.expects[6].value, 0);
    assert_int_equal(sc.expects[7].cmp, SCN_CMP_GE);
    /* expect [no] CLIENT fenced-out; nothing may follow. */
    parse_ok(&sc, "client A: acquire\nclient B: acquire\nexpect B fenced-out\nexpect no A fenced-out\n");
    assert_int_equal(sc.expects[0].kind, SCN_EXPECT_FENCED_OUT);
    assert_int_equal(sc.expects[0].client_index, 1);
    assert_int_equal(sc.expects[0].cmp, SCN_CMP_GE);
    assert_int_equal(sc.expects[0].value, 1);
    assert_int_equal(sc.expects[1].kind, SCN_EXPECT_FENCED_OUT);
    assert_int_equal(sc.expects[1].client_index, 0);
    assert_int_equal(sc.expects[1].cmp, SCN_CMP_EQ);
    assert_int_equal(sc.expects[1].value, 0);
    assert_int_equal(parse(&sc, "client A: acquire\nexpect A fenced-out now\n"), LSIM_EPARSE);
    assert_int_equal(err.pos.line, 2);
    assert_int_equal(err.pos.col, 21);
    /* The old forms are metric expectations naming no client. */
    parse_ok(&sc, "expect stale-write accepted\nexpect double-entry\n");
    assert_int_equal(sc.expects[0].kind, SCN_EXPECT_METRIC);
    assert_int_equal(sc.expects[0].client_index, -1);
    assert_int_equal(sc.expects[1].kind, SCN_EXPECT_METRIC);
    scenario_close(&sc);
}

static void test_name_tables(void **state) {
    (void)state;
    assert_string_equal(scn_point_name(SCN_POINT_BETWEEN_READ_AND_WRITE), "between-read-and-write");
    assert_string_equal(scn_point_name(SCN_POINT_COUNT), "?");
    assert_string_equal(scn_metric_name(SCN_M_DOUBLE_ENTRY_NS), "double-entry-time");
    assert_string_equal(scn_metric_name(SCN_M_FINAL_STOCK), "final-stock");
    assert_string_equal(scn_verdict_name(SCN_VERDICT_UNSAFE), "UNSAFE");
    assert_string_equal(scn_step_name(SCN_STEP_RELEASE), "release");
    assert_string_equal(scn_fault_name(SCN_FAULT_CLOCK_SLEW), "clock-slew");
    assert_string_equal(scn_fault_name(SCN_FAULT_PROMOTE), "promote");
    assert_string_equal(scn_fault_name((enum scn_fault_kind)99), "?");
}

/* ---- --set and copy ---- */

static void test_set_overrides_after_parsing(void **state) {
    (void)state;
    parse_ok(&sc, example);
    /* Scenario keys. */
    assert_int_equal(scenario_set(&sc, "seed=7", &err), 0);
    assert_int_equal(sc.seed, 7);
    assert_int_equal(scenario_set(&sc, "duration=60s", &err), 0);
    assert_int_equal(sc.duration_ns, 60 * S_);
    assert_int_equal(scenario_set(&sc, "stuck-after=1m", &err), 0);
    assert_int_equal(sc.stuck_after_ns, 60 * S_);
    assert_int_equal(scenario_set(&sc, "max-events=99", &err), 0);
    assert_int_equal(sc.max_events, 99);
    assert_int_equal(scenario_set(&sc, "retry=10ms", &err), 0);
    assert_int_equal(sc.retry_ns, 10 * MS_);
    assert_int_equal(scenario_set(&sc, "purpose=efficiency", &err), 0);
    assert_int_equal(sc.purpose, SCN_PURPOSE_EFFICIENCY);
    assert_int_equal(scenario_set(&sc, "title=Another title", &err), 0);
    assert_string_equal(sc.title, "Another title");
    /* A refused fencing= states nothing (found by fuzz_parse: `fencing=0s`
     * used to mark the flag stated before the value was refused). */
    {
        struct scenario fresh;
        scenario_init(&fresh);
        assert_int_equal(scenario_set(&fresh, "fencing=0s", &err), LSIM_EBAD_VALUE);
        assert_int_equal(fresh.fencing_stated, 0);
        assert_int_equal(scenario_set(&fresh, "fencing=off", &err), 0);
        assert_int_equal(fresh.fencing_stated, 1);
        scenario_close(&fresh);
    }
    /* Resource and network, bare or prefixed. */
    assert_int_equal(scenario_set(&sc, "stock=2", &err), 0);
    assert_int_equal(sc.stock, 2);
    assert_int_equal(scenario_set(&sc, "resource.fencing=on", &err), 0);
    assert_int_equal(sc.fencing, 1);
    assert_int_equal(scenario_set(&sc, "latency=5ms", &err), 0);
    assert_int_equal(sc.latency.min_ns, 5 * MS_);
    assert_int_equal(scenario_set(&sc, "network.latency=1ms..2ms", &err), 0);
    assert_int_equal(sc.latency.max_ns, 2 * MS_);
    assert_int_equal(scenario_set(&sc, "loss=1%", &err), 0);
    assert_int_equal(sc.loss_ppm, 10000);
    /* The lock: algorithm, servers, and options replaced or added. */
    assert_int_equal(scenario_set(&sc, "algo=redlock", &err), 0);
    assert_string_equal(sc.algo, "redlock");
    assert_int_equal(scenario_set(&sc, "servers=5", &err), 0);
    assert_int_equal(sc.nservers, 5);
    assert_int_equal(scenario_set(&sc, "lock.servers=3", &err), 0);
    assert_int_equal(sc.nservers, 3);
    assert_int_equal(scenario_set(&sc, "ttl=10s", &err), 0);
    assert_int_equal(sc.nopts, 3);
    assert_string_equal(scenario_opt(&sc, "ttl")->val, "10s");
    assert_int_equal(scenario_opt(&sc, "ttl")->pos.line, 0);
    assert_int_equal(scenario_set(&sc, "lock.release=delete", &err), 0);
    assert_string_equal(scenario_opt(&sc, "release")->val, "delete");
    assert_int_equal(scenario_set(&sc, "renew=on", &err), 0);
    assert_int_equal(sc.nopts, 4);
    assert_string_equal(scenario_opt(&sc, "renew")->val, "on");

    /* Errors name "--set" and the column within the argument. */
    assert_int_equal(scenario_set(&sc, "duration=30", &err), LSIM_EBAD_VALUE);
    assert_string_equal(err.file, "--set");
    assert_int_equal(err.pos.col, 10);
    assert_non_null(strstr(err.msg, "expected a unit"));
    assert_int_equal(scenario_set(&sc, "latency=5ms..1ms", &err), LSIM_EBAD_VALUE);
    assert_non_null(strstr(err.msg, "backwards"));
    assert_int_equal(scenario_set(&sc, "network.latency=1ms..x", &err), LSIM_EBAD_VALUE);
    assert_int_equal(err.pos.col, 22);
    assert_int_equal(scenario_set(&sc, "resource.colour=red", &err), LSIM_EUNKNOWN_OPTION);
    assert_int_equal(err.pos.col, 1);
    assert_non_null(strstr(err.msg, "expected resource.stock, resource.fencing, resource.timeout, resource.check or "
                                    "resource.guard"));
    assert_int_equal(scenario_set(&sc, "ttl", &err), LSIM_EUSAGE);
    assert_non_null(strstr(err.msg, "expected KEY=VALUE"));
    assert_int_equal(scenario_set(&sc, "ttl=", &err), LSIM_EBAD_VALUE);
    assert_int_equal(err.pos.col, 5);
    assert_int_equal(scenario_set(&sc, "servers=16", &err), LSIM_EBAD_VALUE);
    assert_int_equal(scenario_set(&sc, "stock=-1", &err), LSIM_EBAD_VALUE);
    assert_int_equal(scenario_set(&sc, "fencing=maybe", &err), LSIM_EBAD_VALUE);
    assert_int_equal(scenario_set(&sc, "seed=x", &err), LSIM_EBAD_VALUE);
    assert_int_equal(scenario_set(&sc, "9lives=1", &err), LSIM_EUNKNOWN_OPTION);
    assert_int_equal(scenario_set(&sc, "title=a\tb", &err), LSIM_EBAD_VALUE);
    assert_int_equal(err.pos.col, 8);
    /* A failed --set changes nothing. */
    assert_int_equal(sc.nservers, 3);
    assert_int_equal(sc.stock, 2);
    scenario_close(&sc);
}

/* ---- Parameters ---- */

static const char param_text[] = "param ttl=30s\n"
                                 "param b_start=31s range=0s..60s\n"
                                 "param pause=27s\n"
                                 "param work=10s\n"
                                 "param at=5s\n"
                                 "param backoff=1s\n"
                                 "param units=3 range=1..10\n"
                                 "param lat=2ms\n"
                                 "lock lease ttl=$ttl\n"
                                 "resource stock=$units\n"
                                 "network latency=$lat\n"
                                 "client A: acquire retry=$backoff; read; work $work; write; release\n"
                                 "client B @$b_start: acquire; write; release\n"
                                 "@$at pause A $pause\n";

static void test_params_stand_for_values_everywhere(void **state) {
    (void)state;
    /* Step 1: the defaults are put in place of each $NAME. */
    parse_ok(&sc, param_text);
    assert_int_equal(sc.nparams, 8);
    assert_string_equal(sc.params[1].name, "b_start");
    assert_int_equal(sc.params[1].range, SCN_RANGE_DURATION);
    assert_int_equal(sc.params[1].max, 60 * S_);
    assert_int_equal(sc.params[6].range, SCN_RANGE_INT);
    assert_string_equal(scenario_opt(&sc, "ttl")->val, "30s");
    assert_int_equal(sc.stock, 3);
    assert_int_equal(sc.latency.min_ns, 2 * MS_);
    assert_int_equal(sc.programs[0].steps[0].retry_ns, 1 * S_);
    assert_int_equal(sc.programs[0].steps[2].dur_ns, 10 * S_);
    assert_int_equal(sc.clients[1].start_ns, 31 * S_);
    assert_int_equal(sc.faults[0].at_ns, 5 * S_);
    assert_int_equal(sc.faults[0].dur_ns, 27 * S_);

    /* Step 2: --set of a param re-parses with the override; other --set
     * arguments given before it survive the re-parse. */
    assert_int_equal(scenario_set(&sc, "seed=9", &err), 0);
    assert_int_equal(scenario_set(&sc, "pause=20s", &err), 0);
    assert_int_equal(sc.faults[0].dur_ns, 20 * S_);
    assert_int_equal(sc.seed, 9);
    assert_string_equal(scenario_param(&sc, "pause")->val, "20s");
    assert_string_equal(scenario_param(&sc, "pause")->def, "27s");
    assert_int_equal(scenario_param(&sc, "pause")->overridden, 1);
    assert_int_equal(scenario_set(&sc, "b_start=40s", &err), 0);
    assert_int_equal(sc.clients[1].start_ns, 40 * S_);
    assert_int_equal(sc.faults[0].dur_ns, 20 * S_); /* the first override stays */
    assert_int_equal(scenario_set(&sc, "ttl=10s", &err), 0);
    assert_string_equal(scenario_opt(&sc, "ttl")->val, "10s");

    /* Step 3: a bad value is refused by the code that reads it where it is
     * used, and names that place; the scenario is unchanged. */
    assert_int_equal(scenario_set(&sc, "pause=abc", &err), LSIM_EBAD_VALUE);
    assert_string_equal(err.file, "--set");
    assert_int_equal(err.pos.col, 7);
    assert_string_equal(err.msg, "t.lsim:14:14: expected a duration such as 30s or 500ms, "
                                 "found 'abc' (the value of $pause)");
    assert_int_equal(sc.faults[0].dur_ns, 20 * S_);
    assert_int_equal(scenario_set(&sc, "units=11", &err), LSIM_EBAD_VALUE); /* its range */
    scenario_close(&sc);
    parse_ok(&sc, param_text);
    assert_int_equal(scenario_set(&sc, "b_start=61s", &err), LSIM_EBAD_VALUE);
    assert_non_null(strstr(err.msg, "t.lsim:2:15: the value from --set of param 'b_start' is "
                                    "61s, outside its range 0ns..60s"));
    assert_int_equal(scenario_set(&sc, "work=0.5", &err), LSIM_EBAD_VALUE);
    assert_non_null(strstr(err.msg, "t.lsim:12:46: expected a unit"));
    /* A typo of a param is not taken for a lock option. */
    assert_int_equal(scenario_set(&sc, "paus=20s", &err), LSIM_EUNKNOWN_OPTION);
    assert_non_null(strstr(err.msg, "unknown key 'paus'; expected pause,"));

    /* Step 4: the knob turned to 0 (the low end of range=0s..: a sweep's
     * first column, a slider at its left) is no pause: the line is dropped,
     * while a 0 written as such is still refused as a slip ("pause 0"). */
    assert_int_equal(sc.nfaults, 1);
    assert_int_equal(scenario_set(&sc, "pause=0s", &err), 0);
    assert_int_equal(sc.nfaults, 0);
    assert_int_equal(scenario_set(&sc, "pause=3s", &err), 0);
    assert_int_equal(sc.nfaults, 1);
    assert_int_equal(sc.faults[0].dur_ns, 3 * S_);
    scenario_close(&sc);
}

static void test_param_mistakes_are_refused_at_their_place(void **state) {
    static const struct {
        const char *text;
        int line, col;
        const char *msg;
    } cases[] = {
            {"param pause=27s\n@5s pause A $paus\n", 2, 13,
             "unknown param '$paus'; the params declared above are pause"},
            {"client A: work $w\nparam w=1s\n", 1, 16, "unknown param '$w'; no param is declared above"},
            {"param pause=27s\nparam ttl=3s\nlock lease ttl=$ttl\n", 1, 7, "param 'pause' is declared but never used"},
            {"param p=1s\nparam p=2s\n", 2, 7, "param 'p' is declared twice (first on line 1)"},
            {"param seed=3\n", 1, 7, "'seed' is a header key"},
            {"param 9x=3\n", 1, 7, "'9x' is not a param name"},
            {"param a=1s\nparam b=$a\n", 2, 9, "a param's value cannot use another param"},
            {"param a=70s range=0s..60s\n", 1, 9,
             "the default of param 'a' is 70s, outside its "
             "range 0ns..60s"},
            {"param a=1s range=5s..1s\n", 1, 18, "runs backwards"},
            {"param a=1s range=1s\n", 1, 18, "expected range=MIN..MAX"},
            {"param a=1s\nclient A: work 1$a\n", 2, 17,
             "'$' starts a param only at the start of "
             "a value"},
            {"param a=1s\nclient A: work $a.b\n", 2, 18, "unexpected '.b' after '$a'"},
            {"param a=1s\n$a A\n", 2, 1, "a line cannot start with a param"},
            {"param a=1s\nclient A: work $\n", 2, 17, "expected a param name after '$'"},
            {"param a=5ms..1ms\nnetwork latency=$a\n", 2, 17,
             "latency range '5ms..1ms' runs "
             "backwards; write MIN..MAX (the value "
             "of $a)"},
    };
    size_t i;
    int failures = 0;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = parse_n(&sc, "p.lsim", cases[i].text, strlen(cases[i].text));
        if (rc != LSIM_EPARSE || err.pos.line != cases[i].line || err.pos.col != cases[i].col ||
            strstr(err.msg, cases[i].msg) == NULL) {
            print_error("case %zu: want %d:%d: ...%s...\n         got rc %d, %d:%d: %s\n", i, cases[i].line,
                        cases[i].col, cases[i].msg, rc, err.pos.line, err.pos.col, err.msg);
            failures++;
        }
        scenario_close(&sc);
    }
    assert_int_equal(failures, 0);
}

static void test_faults_that_could_never_act_are_refused(void **state) {
    static const char ok[] = "duration 60s\n"
                             "client A: acquire; work 5s; release\n"
                             "@1s pause A\n"
                             "@2s resume A\n"
                             "@3s pause A 10s\n"
                             "@13s resume A\n" /* at the pause's very end: still paused */
                             "@20s crash A\n"
                             "@20s restart A\n" /* same time, after the crash: fine */
                             "on A.after-acquire crash S1\n"
                             "@30s restart S1\n"; /* S1's crash time is unknown: kept */
    (void)state;
    /* Step 1: faults that do something, including after triggered ones. */
    parse_ok(&sc, ok);
    assert_int_equal(sc.nfaults, 8);

    /* Step 2: a run cut below a timed fault is refused by --set too, and
     * changes nothing. */
    assert_int_equal(scenario_set(&sc, "duration=25s", &err), LSIM_EBAD_VALUE);
    assert_non_null(strstr(err.msg, "t.lsim:10: this restart at 30s would never happen: the "
                                    "run ends at 25s"));
    assert_int_equal(sc.duration_ns, 60 * S_);
    assert_int_equal(scenario_set(&sc, "duration=31s", &err), 0);
    scenario_close(&sc);

    /* Step 3: each fault that could never act, at its line and column. */
    assert_int_equal(parse(&sc, "duration 10s\nclient A: read\n@10s crash A\n"), LSIM_EPARSE);
    assert_int_equal(err.pos.line, 3);
    assert_int_equal(err.pos.col, 1);
    assert_non_null(strstr(err.msg, "this crash at 10s would never happen"));
    assert_int_equal(parse(&sc, "client A: read\n@1s crash A\n@2s restart A\n@3s restart A\n"), LSIM_EPARSE);
    assert_int_equal(err.pos.line, 4);
    assert_int_equal(err.pos.col, 13);
    assert_non_null(strstr(err.msg, "restart A at 3s would do nothing: A has not crashed"));
    assert_int_equal(parse(&sc, "client A: read\n@1s crash A\n@2s resume A\n"), LSIM_EPARSE);
    assert_non_null(strstr(err.msg, "resume A at 2s would do nothing: A has crashed"));
    assert_int_equal(parse(&sc, "client A: read\n@1s pause A 1s\n@2500ms resume A\n"), LSIM_EPARSE);
    assert_non_null(strstr(err.msg, "A's pause ended at 2s"));
    assert_int_equal(parse(&sc, "client A: read\n@1s resume A\n"), LSIM_EPARSE);
    assert_non_null(strstr(err.msg, "A is not paused"));
    scenario_close(&sc);
}

static void test_copy_is_deep(void **state) {
    (void)state;
    parse_ok(&sc, example);
    assert_int_equal(scenario_copy(&sc2, &sc), 0);
    /* Same content, separate arrays. */
    assert_int_equal(sc2.nclients, 2);
    assert_int_equal(sc2.nfaults, 2);
    assert_ptr_not_equal(sc2.clients, sc.clients);
    assert_ptr_not_equal(sc2.faults, sc.faults);
    assert_string_equal(sc2.clients[1].name, "B");
    assert_int_equal(sc2.faults[0].dur_ns, 27 * S_);
    /* Changing or closing the original leaves the copy intact. */
    strcpy(sc.clients[1].name, "Z");
    sc.faults[0].dur_ns = 1;
    assert_int_equal(scenario_set(&sc, "algo=redlock", &err), 0);
    scenario_close(&sc);
    assert_string_equal(sc2.clients[1].name, "B");
    assert_int_equal(sc2.faults[0].dur_ns, 27 * S_);
    assert_string_equal(sc2.algo, "lease");
    /* The copy grows on its own. */
    assert_non_null(scenario_add_client(&sc2));
    assert_int_equal(sc2.nclients, 3);
    scenario_close(&sc2);

    /* Copying an empty scenario is fine too. */
    scenario_init(&sc);
    assert_int_equal(scenario_copy(&sc2, &sc), 0);
    assert_null(sc2.clients);
    scenario_close(&sc2);
    scenario_close(&sc);
}

/* ---- Malformed scripts: where, and what ---- */

struct bad_case {
    const char *name;
    const char *text;
    size_t len; /* 0 = strlen(text) */
    int line, col;
    const char *msg; /* a substring of the message */
};

static const struct bad_case bad_cases[] = {
        {"unknown keyword", "seed 1\nbogus 1\n", 0, 2, 1, "unknown keyword 'bogus'; expected title"},
        {"action without a time", "heal\n", 0, 1, 1, "unknown keyword 'heal'"},
        {"unknown key", "resource stok=2\n", 0, 1, 10,
         "unknown key 'stok' for resource; expected stock=, fencing=, timeout=, check= or guard="},
        {"missing unit", "duration 30\n", 0, 1, 10, "expected a unit (ns, us, ms, s, m) after '30'"},
        {"unit typo", "duration 30sec\n", 0, 1, 10, "unknown unit 'sec' in '30sec'"},
        {"space before unit", "client A: work 30 s\n", 0, 1, 16, "expected a unit"},
        {"negative duration", "client A: work -3s\n", 0, 1, 16, "negative duration '-3s'"},
        {"duration 0", "duration 0s\n", 0, 1, 10, "duration must be more than 0"},
        {"sub-nanosecond", "client A: work 1.5ns\n", 0, 1, 16, "not a whole number of nanoseconds"},
        {"too many decimals", "retry 1.0000000001s\n", 0, 1, 7, "too many decimals"},
        {"time beyond SIM_TIME_MAX", "@2000000s heal\n", 0, 1, 2, "beyond the limit of 1000000s (SIM_TIME_MAX)"},
        {"relative time beyond SIM_TIME_MAX", "+999999s heal\n+2s heal\n", 0, 2, 2, "beyond the limit of 1000000s"},
        {"huge integer", "seed 99999999999999999999\n", 0, 1, 6, "too large"},
        {"negative seed", "seed -1\n", 0, 1, 6, "expected a whole number for the seed"},
        {"max-events 0", "max-events 0\n", 0, 1, 12, "at least 1"},
        {"missing value", "seed\n", 0, 1, 5, "expected a value after 'seed'"},
        {"trailing garbage", "seed 5 6\n", 0, 1, 8, "unexpected '6' after the value"},
        {"trailing garbage after an action", "@1s heal now\n", 0, 1, 10, "unexpected 'now'"},
        {"unterminated string", "title \"GC pause\n", 0, 1, 7, "unterminated string"},
        {"unquoted title", "title GC pause\n", 0, 1, 7, "expected a quoted string after 'title'"},
        {"bad escape", "description \"a \\q\"\n", 0, 1, 16, "unknown escape"},
        {"title too long",
         "title \"0123456789012345678901234567890123456789012345678901234567890123456789"
         "0123456789012345678901234567890123456789012345678901234567890123456789"
         "01234567890123456789\"\n",
         0, 1, 7, "the limit is 159"},
        {"duplicate client", "client A: read\nclient B: read\nclient A: write\n", 0, 3, 8,
         "client 'A' is declared twice (first on line 1)"},
        {"duplicate generated client", "client C2: read\nclients 3: read\n", 0, 2, 9,
         "client 'C2' is declared twice (first on line 1)"},
        {"checks-loss not a yes or no", "client A checks-loss=maybe: read\n", 0, 1, 22,
         "expected on or off (or yes/no, true/false), found 'maybe'"},
        {"checks-loss twice", "client A checks-loss=no checks-loss=no: read\n", 0, 1, 25, "given twice"},
        {"unknown client key", "client A chceks-loss=no: read\n", 0, 1, 10,
         "expected @TIME, repeat=, think= or checks-loss="},
        {"reserved name R", "client R: read\n", 0, 1, 8, "'R' is a reserved name"},
        {"reserved name S2", "client S2: read\n", 0, 1, 8, "'S2' is a reserved name"},
        {"reserved prefix S", "clients 3 prefix=S: read\n", 0, 1, 18, "reserved for lock servers"},
        {"bad client name", "client 9lives: read\n", 0, 1, 8, "is not a client name"},
        {"long client name", "client abcdefghijklmnop: read\n", 0, 1, 8, "longer than 15 characters"},
        {"missing colon after client", "client A acquire; read\n", 0, 1, 10,
         "expected ':' before the steps of client 'A', found 'acquire'"},
        {"missing colon at the end", "client A @1s\n", 0, 1, 13, "expected ':' and the steps"},
        {"empty program", "client A:\n", 0, 1, 10, "client 'A' has no steps"},
        {"empty step", "client A: read;; write\n", 0, 1, 16, "empty step"},
        {"unknown step", "client A: acquire; wrte; release\n", 0, 1, 20,
         "unknown step 'wrte'; expected acquire, read, write, work or release"},
        {"argument to read", "client A: read 5\n", 0, 1, 16, "unexpected '5' after 'read'"},
        {"work without duration", "client A: work; read\n", 0, 1, 15, "expected a duration after 'work'"},
        {"bad acquire option", "client A: acquire tries=x\n", 0, 1, 25, "expected a whole number for tries"},
        {"retry 0", "client A: acquire retry=0s\n", 0, 1, 25, "retry must be more than 0"},
        {"write set= not a number", "client A: write set=x\n", 0, 1, 21, "expected a whole number for set"},
        {"write set= negative", "client A: write set=-1\n", 0, 1, 21, "set"},
        {"write set= twice", "client A: write set=1 set=2\n", 0, 1, 23, "set"},
        {"write unknown option", "client A: write sett=1\n", 0, 1, 17, "set=, tries= or backoff="},
        {"undeclared node in a fault", "client A: read\n@1s pause B\n", 0, 2, 11,
         "unknown node 'B'; expected a client declared above"},
        {"node declared after the fault", "@1s crash A\nclient A: read\n", 0, 1, 11, "unknown node 'A'"},
        {"server out of range", "@1s clock S16 step +1s\n", 0, 1, 11, "no lock server 'S16'"},
        {"undeclared client in on", "client A: read\non Z.after-acquire heal\n", 0, 2, 4,
         "'Z' is not a client declared above"},
        {"unknown point", "client A: read\non A.after-lunch heal\n", 0, 2, 6, "unknown point 'after-lunch'"},
        {"on without point", "client A: read\non A heal\n", 0, 2, 4, "expected CLIENT.POINT"},
        {"bad occurrence", "client A: read\non A.after-write#0 heal\n", 0, 2, 18, "must be between 1 and"},
        {"timed lines out of order", "@5s heal\n@3s heal\n", 0, 2, 1,
         "time 3s is before the previous timed line (5s); timed lines must be in time order"},
        {"time without action", "@5s\n", 0, 1, 4, "expected an action after the time"},
        {"unknown action", "@5s explode R\n", 0, 1, 5, "unknown action 'explode'"},
        {"pause 0", "client A: read\n@1s pause A 0s\n", 0, 2, 13, "a pause of 0 does nothing"},
        {"promote a client", "client A: read\n@1s promote A\n", 0, 2, 13, "only a lock server can be promoted"},
        {"unknown clock change", "@1s clock S1 jump +1s\n", 0, 1, 14, "unknown clock change 'jump'"},
        {"unknown clock kind", "@1s clock S1 step +1s sideways\n", 0, 1, 23, "unknown clock 'sideways'"},
        {"slew without over", "@1s clock S1 slew +1s\n", 0, 1, 22, "expected 'over DUR'"},
        {"drift too large", "@1s clock S1 drift 600000ppm\n", 0, 1, 20, "between -500000 and 500000"},
        {"partition with a name twice", "client A: read\nclient B: read\n@1s partition A B | A\n", 0, 3, 21,
         "node 'A' is in two groups of this partition"},
        {"partition with one group", "client A: read\n@1s partition A\n", 0, 2, 16, "needs two to four groups"},
        {"partition with five groups", "@1s partition S1 | S2 | S3 | S4 | S5\n", 0, 1, 33, "more than 4 groups"},
        {"partition empty group", "@1s partition S1 | | S2\n", 0, 1, 20, "empty group"},
        {"timed link without change", "@1s link S1 S2\n", 0, 1, 15, "expected latency= or loss="},
        {"bad expect metric", "expect double-entrees >= 1\n", 0, 1, 8, "unknown metric 'double-entrees'"},
        {"bad expect op", "expect acquires => 1\n", 0, 1, 17, "unknown comparison '=>'"},
        {"bad verdict", "expect verdict MAYBE\n", 0, 1, 16, "unknown verdict 'MAYBE'; expected SAFE"},
        {"expect no with a metric", "expect no acquires\n", 0, 1, 11, "unknown event 'acquires'"},
        {"expect time without unit", "expect double-entry-time >= 5\n", 0, 1, 29, "expected a unit"},
        {"expect missing value", "expect acquires >=\n", 0, 1, 19, "expected a value after '>='"},
        {"qualifier on the wrong event", "expect lost-update accepted\n", 0, 1, 20, "unexpected 'accepted'"},
        {"duplicate lock option", "lock lease ttl=30s ttl=10s\n", 0, 1, 20,
         "option 'ttl' is given twice (first at col 12)"},
        {"servers=0", "lock lease servers=0\n", 0, 1, 20, "servers must be between 1 and 15"},
        {"lock without algorithm", "lock\n", 0, 1, 5, "expected an algorithm name after 'lock'"},
        {"lock with options only", "lock ttl=30s\n", 0, 1, 6, "expected an algorithm name"},
        {"lock option without value", "lock lease ttl=\n", 0, 1, 16, "missing value after 'ttl='"},
        {"two lock lines", "lock lease\nlock redlock\n", 0, 2, 1,
         "duplicate 'lock' line; lock was already set on line 1"},
        {"two network lines", "network latency=1ms\n\nnetwork loss=1%\n", 0, 3, 1, "duplicate 'network'"},
        {"unknown purpose", "purpose speed\n", 0, 1, 9, "unknown purpose 'speed'"},
        {"bad boolean", "resource fencing=maybe\n", 0, 1, 18, "expected on or off"},
        {"stock too large", "resource stock=1000000001\n", 0, 1, 16, "between 0 and 1000000000"},
        {"loss over 100%", "network loss=150%\n", 0, 1, 14, "more than 100%"},
        {"loss too fine", "network loss=0.00001%\n", 0, 1, 14, "finer than one part per million"},
        {"latency backwards", "network latency=5ms..1ms\n", 0, 1, 17, "runs backwards"},
        {"latency range second part", "network latency=5ms..9\n", 0, 1, 22, "expected a unit"},
        {"drift without ppm", "clock S1 drift=200\n", 0, 1, 16, "expected a drift in ppm"},
        {"step on a header clock", "clock S1 step +1s\n", 0, 1, 10, "a clock change at a time"},
        {"header link to nobody", "link A S1 latency=5ms\n", 0, 1, 6, "unknown node 'A'"},
        {"header link twice", "link S1 S2 loss=1%\nlink S1 S2 loss=2%\n", 0, 2, 6,
         "link S1 -> S2 is given twice (first on line 1)"},
        {"too many clients", "clients 1000000: read\n", 0, 1, 9, "between 1 and 200000"},
        {"NUL byte", "seed 1\0\n", 8, 1, 7, "unexpected byte 0x00"},
        {"bare CR", "seed 1\rduration 2s\n", 0, 1, 7, "unexpected byte 0x0d"},
        {"invalid UTF-8", "title \"caf\xe9\"\n", 0, 1, 11, "unexpected byte 0xe9"},
        {"overlong UTF-8", "# \xc0\xaf\n", 0, 1, 3, "unexpected byte 0xc0"},
        {"punctuation first", ": read\n", 0, 1, 1, "unexpected ':' at the start of a line"},
        {"too many steps",
         "client A: read; read; read; read; read; read; read; read; read; read; read; read; "
         "read; read; read; read; read; read; read; read; read; read; read; read; read; read; "
         "read; read; read; read; read; read; write\n",
         0, 1, 203, "more than 32 steps"},
};

static void test_malformed_scripts_are_refused_precisely(void **state) {
    size_t i;
    int failures = 0;

    (void)state;
    for (i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const struct bad_case *c = &bad_cases[i];
        size_t len = c->len ? c->len : strlen(c->text);
        int rc = parse_n(&sc, "bad.lsim", c->text, len);
        if (rc != LSIM_EPARSE || err.pos.line != c->line || err.pos.col != c->col || strstr(err.msg, c->msg) == NULL ||
            strcmp(err.file, "bad.lsim") != 0) {
            print_error("case '%s': want %d:%d: ...%s...\n             got rc %d, %d:%d: %s\n", c->name, c->line,
                        c->col, c->msg, rc, err.pos.line, err.pos.col, err.msg);
            failures++;
        }
        scenario_close(&sc);
    }
    assert_true(i >= 30);
    assert_int_equal(failures, 0);
}

static void test_long_lines_and_limits(void **state) {
    char *text;
    size_t i, n;

    (void)state;
    /* A line of 4096 bytes is fine; 4097 is refused at column 4097. */
    text = malloc(8192);
    assert_non_null(text);
    memset(text, 'x', 8192);
    text[0] = '#';
    assert_int_equal(parse_n(&sc, "t", text, 4096), 0);
    assert_int_equal(parse_n(&sc, "t", text, 4097), LSIM_EPARSE);
    assert_int_equal(err.pos.line, 1);
    assert_int_equal(err.pos.col, 4097);
    assert_non_null(strstr(err.msg, "longer than 4096 bytes"));
    free(text);

    /* 65 different programs exceed SCN_MAX_PROGRAMS. */
    text = malloc(65 * 40);
    assert_non_null(text);
    for (n = 0, i = 0; i < 65; i++) n += (size_t)sprintf(text + n, "client A%zu: work %zus\n", i, i);
    assert_int_equal(parse_n(&sc, "t", text, n), LSIM_EPARSE);
    assert_int_equal(err.pos.line, 65);
    assert_non_null(strstr(err.msg, "more than 64 different client programs (SCN_MAX_PROGRAMS)"));
    /* ...while 65 clients running one program are fine. */
    for (n = 0, i = 0; i < 65; i++) n += (size_t)sprintf(text + n, "client A%zu: work 1s\n", i);
    assert_int_equal(parse_n(&sc, "t", text, n), 0);
    assert_int_equal(sc.nprograms, 1);
    free(text);

    /* 65 expect lines exceed SCN_MAX_EXPECTS. */
    text = malloc(65 * 16);
    assert_non_null(text);
    for (n = 0, i = 0; i < 65; i++) n += (size_t)sprintf(text + n, "expect stuck\n");
    assert_int_equal(parse_n(&sc, "t", text, n), LSIM_EPARSE);
    assert_int_equal(err.pos.line, 65);
    assert_non_null(strstr(err.msg, "SCN_MAX_EXPECTS"));
    free(text);

    /* 4097 timed lines exceed SCN_MAX_FAULTS. */
    text = malloc(4097 * 10);
    assert_non_null(text);
    for (n = 0, i = 0; i < 4097; i++) n += (size_t)sprintf(text + n, "+1s heal\n");
    assert_int_equal(parse_n(&sc, "t", text, n), LSIM_EPARSE);
    assert_int_equal(err.pos.line, 4097);
    assert_non_null(strstr(err.msg, "SCN_MAX_FAULTS"));
    assert_int_equal(sc.nfaults, SCN_MAX_FAULTS);
    free(text);
    scenario_close(&sc);
}

/* Every prefix of the example, and every single-byte corruption of it,
 * either parses or fails with a position inside the text: never a crash. */
static void test_corrupted_scripts_never_crash(void **state) {
    static const char noise[] = {'\0', '"', ':', ';', '|', '#', '=', '@', '+', '.', ' ', '\n', '\xff', '9', 'S'};
    size_t len = strlen(example), i, k;
    char *buf = malloc(len);

    (void)state;
    assert_non_null(buf);
    for (i = 0; i <= len; i++) {
        if (parse_n(&sc, "t", example, i) != 0) assert_true(err.pos.line >= 1 && err.pos.col >= 1);
        scenario_close(&sc);
    }
    for (i = 0; i < len; i++) {
        for (k = 0; k < sizeof noise; k++) {
            memcpy(buf, example, len);
            buf[i] = noise[k];
            if (parse_n(&sc, "t", buf, len) != 0) {
                assert_true(err.pos.line >= 1 && err.pos.line <= 15);
                assert_true(err.pos.col >= 1 && err.pos.col <= 80);
                assert_true(strlen(err.msg) > 10);
            }
            scenario_close(&sc);
        }
    }
    free(buf);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_defaults_come_from_init),
            cmocka_unit_test(test_add_client_and_fault_grow),
            cmocka_unit_test(test_example_parses_to_exact_values),
            cmocka_unit_test(test_load_reads_files_and_reports_missing_ones),
            cmocka_unit_test(test_load_refuses_files_over_16_mib),
            cmocka_unit_test(test_durations_convert_exactly),
            cmocka_unit_test(test_integers_and_booleans),
            cmocka_unit_test(test_network_values),
            cmocka_unit_test(test_header_lines),
            cmocka_unit_test(test_text_is_bounded_by_len),
            cmocka_unit_test(test_clients_are_staggered_and_share_one_program),
            cmocka_unit_test(test_client_limit_is_reachable),
            cmocka_unit_test(test_relative_times_accumulate),
            cmocka_unit_test(test_every_fault_kind),
            cmocka_unit_test(test_expect_forms),
            cmocka_unit_test(test_expect_per_client_forms),
            cmocka_unit_test(test_name_tables),
            cmocka_unit_test(test_set_overrides_after_parsing),
            cmocka_unit_test(test_params_stand_for_values_everywhere),
            cmocka_unit_test(test_param_mistakes_are_refused_at_their_place),
            cmocka_unit_test(test_faults_that_could_never_act_are_refused),
            cmocka_unit_test(test_copy_is_deep),
            cmocka_unit_test(test_malformed_scripts_are_refused_precisely),
            cmocka_unit_test(test_long_lines_and_limits),
            cmocka_unit_test(test_corrupted_scripts_never_crash),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
