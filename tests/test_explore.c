/* The explorer, as a user relies on it: the explore line parses to an exact
 * budget and every malformed one is refused at its line and column; a
 * scenario printed and parsed back runs the same trace; a search over the
 * shared budget finds the seed's pause-past-TTL story and shrinks it to the
 * exact tick; the same seed gives the same file whatever --jobs is; and the
 * command line writes a file that `locksim check` passes. */
#include "cli_util.h"

#include <dirent.h>

#include "error.h"
#include "explore.h"
#include "kv.h"
#include "scenario.h"
#include "scenario_file.h"

#define S_ (SIM_NS_PER_S)

static struct scenario sc, sc2;
static struct scn_error err;

static int parse(struct scenario *s, const char *text) {
    scenario_close(s);
    return scenario_parse(s, "t.lsim", text, strlen(text), &err);
}

static const char *const head = "lock lease ttl=10s\n"
                                "client A: acquire; read; write; release\n";

/* ---- The explore line ------------------------------------------------------------ */

/* The line of the issue parses to the budget it reads as. */
static void test_explore_line_parses_to_its_budget(void **state) {
    char text[1024];
    const struct scn_budget *k = sc.explore.k;

    (void)state;
    snprintf(text, sizeof text,
             "%sexplore pauses<=2 length=0s..60s; clock-steps<=1 on servers "
             "delta=-30s..30s; latency-spikes<=3 max=5s; crashes<=1\n",
             head);
    assert_int_equal(parse(&sc, text), 0);
    assert_true(sc.explore.given);
    assert_int_equal(sc.explore.pos.line, 3);
    /* pauses<=2 length=0s..60s: any pause up to 60s (0 means "from 1 ns"), on clients */
    assert_int_equal(k[SCN_NEM_PAUSE].max, 2);
    assert_int_equal(k[SCN_NEM_PAUSE].lo_ns, 1);
    assert_int_equal(k[SCN_NEM_PAUSE].hi_ns, 60 * S_);
    assert_int_equal(k[SCN_NEM_PAUSE].targets, SCN_TARGET_CLIENTS);
    assert_true(k[SCN_NEM_PAUSE].points);
    /* clock-steps<=1 on servers delta=-30s..30s */
    assert_int_equal(k[SCN_NEM_CLOCK_STEP].max, 1);
    assert_int_equal(k[SCN_NEM_CLOCK_STEP].targets, SCN_TARGET_SERVERS);
    assert_int_equal(k[SCN_NEM_CLOCK_STEP].lo_ns, -30 * S_);
    assert_int_equal(k[SCN_NEM_CLOCK_STEP].hi_ns, 30 * S_);
    /* latency-spikes<=3 max=5s: latency 0..5s, lasting the default 1s..10s */
    assert_int_equal(k[SCN_NEM_LATENCY].max, 3);
    assert_int_equal(k[SCN_NEM_LATENCY].hi_ns, 5 * S_);
    assert_int_equal(k[SCN_NEM_LATENCY].len_lo_ns, S_);
    assert_int_equal(k[SCN_NEM_LATENCY].len_hi_ns, 10 * S_);
    /* crashes<=1: the defaults, down 1s..30s, on clients */
    assert_int_equal(k[SCN_NEM_CRASH].max, 1);
    assert_int_equal(k[SCN_NEM_CRASH].lo_ns, S_);
    assert_int_equal(k[SCN_NEM_CRASH].hi_ns, 30 * S_);
    /* A named node, a window, no named points. */
    snprintf(text, sizeof text,
             "%sexplore pauses<=1 on A length=1s..9s at=2s..5s "
             "points=off\n",
             head);
    assert_int_equal(parse(&sc, text), 0);
    assert_string_equal(k[SCN_NEM_PAUSE].node, "A");
    assert_int_equal(k[SCN_NEM_PAUSE].hi_ns, 9 * S_);
    assert_int_equal(k[SCN_NEM_PAUSE].at_lo_ns, 2 * S_);
    assert_int_equal(k[SCN_NEM_PAUSE].at_hi_ns, 5 * S_);
    assert_false(k[SCN_NEM_PAUSE].points);
    assert_int_equal(k[SCN_NEM_CRASH].max, 0); /* not budgeted */
}

/* Every malformed explore line: line 3, the column of the mistake, a fix. */
static void test_explore_line_errors(void **state) {
    static const struct {
        const char *line;
        int col;
        const char *msg;
    } cases[] = {
            {"explore", 8, "expected a fault budget after 'explore'"},
            {"explore pauss<=2", 9, "unknown fault kind 'pauss'; expected pauses"},
            {"explore pauses", 15, "expected '<=N' after 'pauses'"},
            {"explore pauses<=", 17, "expected a count after '<='"},
            {"explore pauses<=0", 17, "between 1 and 64"},
            {"explore pauses<=2;", 19, "expected another fault kind after ';'"},
            {"explore ; crashes<=1", 9, "empty item before ';'"},
            {"explore pauses<=1; pauses<=2", 20, "pauses is budgeted twice"},
            {"explore pauses<=2 delta=1s..2s", 19, "unknown key 'delta' for pauses"},
            {"explore pauses<=2 length=5s", 26, "expected a range MIN..MAX"},
            {"explore pauses<=2 length=5s..1s", 26, "runs backwards"},
            {"explore pauses<=2 length=0s..0s", 26, "a pause of length 0 does nothing"},
            {"explore pauses<=2 length=1s..2s length=1s..3s", 33, "'length' is given twice"},
            {"explore pauses<=2 on", 21, "expected clients, servers, nodes, resource or a node"},
            {"explore pauses<=2 on Q", 22, "unknown node 'Q'"},
            {"explore clock-steps<=1 delta=-1s..xs", 35, "expected"},
            {"explore clock-steps<=1 clock=sundial", 30, "unknown clock 'sundial'"},
            {"explore latency-spikes<=1 max=0s", 31, "does nothing"},
            {"explore crashes<=1 points=maybe", 27, "maybe"},
            {"explore crashes<=1 at=200s..300s", 9, "the window of crashes starts at 200s"},
            {"explore crashes<=1 frequently", 20, "expected down=, at= or points= after 'crashes'"},
    };
    char text[512];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(text, sizeof text, "%s%s\n", head, cases[i].line);
        assert_int_equal(parse(&sc, text), LSIM_EPARSE);
        if (err.pos.line != 3 || err.pos.col != cases[i].col || !strstr(err.msg, cases[i].msg))
            print_error("case '%s': got %d:%d: %s\n", cases[i].line, err.pos.line, err.pos.col, err.msg);
        assert_int_equal(err.pos.line, 3);
        assert_int_equal(err.pos.col, cases[i].col);
        assert_non_null(strstr(err.msg, cases[i].msg));
    }
    /* Two explore lines: the second is refused, naming the first. */
    snprintf(text, sizeof text, "%sexplore pauses<=1\nexplore crashes<=1\n", head);
    assert_int_equal(parse(&sc, text), LSIM_EPARSE);
    assert_int_equal(err.pos.line, 4);
    assert_non_null(strstr(err.msg, "duplicate 'explore' line (first on line 3)"));
}

/* ---- The printer ------------------------------------------------------------------ */

static uint64_t hash_of(const struct scenario *s) {
    struct engine *e;
    struct scn_error e2;
    struct engine_opts o = {.hash_trace = 1};
    uint64_t h;

    assert_int_equal(engine_new(&e, s, &o, &e2), 0);
    engine_run(e);
    h = trace_hash(engine_trace(e));
    engine_free(e);
    return h;
}

/* Every catalog scenario, printed and parsed back, runs the same trace, and
 * printing the parsed text again gives the same text (a fixed point). */
static void test_print_round_trip_over_the_catalog(void **state) {
    DIR *d = opendir("scenarios");
    struct dirent *de;
    int n = 0;

    (void)state;
    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        char path[600], *t1, *t2;
        size_t l1, l2, len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".lsim") != 0) continue;
        snprintf(path, sizeof path, "scenarios/%s", de->d_name);
        scenario_close(&sc);
        assert_int_equal(scenario_load(&sc, path, &err), 0);
        assert_int_equal(scenario_print(&sc, &t1, &l1), 0);
        scenario_close(&sc2);
        int rc = scenario_parse(&sc2, path, t1, l1, &err);
        if (rc != 0)
            print_error("%s printed does not parse: %d:%d: %s\n%s", path, err.pos.line, err.pos.col, err.msg, t1);
        assert_int_equal(rc, 0);
        if (hash_of(&sc) != hash_of(&sc2)) print_error("%s: the printed scenario runs a different trace\n", path);
        assert_true(hash_of(&sc) == hash_of(&sc2));
        assert_int_equal(sc2.explore.given, sc.explore.given);
        for (int k = 0; k < SCN_NEM_COUNT; k++) {
            assert_int_equal(sc2.explore.k[k].max, sc.explore.k[k].max);
            assert_true(sc2.explore.k[k].lo_ns == sc.explore.k[k].lo_ns);
            assert_true(sc2.explore.k[k].hi_ns == sc.explore.k[k].hi_ns);
        }
        assert_int_equal(scenario_print(&sc2, &t2, &l2), 0);
        assert_int_equal(l1, l2);
        assert_memory_equal(t1, t2, l1);
        free(t1);
        free(t2);
        n++;
    }
    closedir(d);
    assert_true(n >= 40);
}

/* ---- Search and shrink -------------------------------------------------------------- */

static void load(struct scenario *s, const char *path) {
    int rc;

    scenario_close(s);
    rc = scenario_load(s, path, &err);
    if (rc != 0) print_error("%s: %s\n", path, err.msg);
    assert_int_equal(rc, 0);
}

/* The shared budget against a plain lease (ttl 10s): the explorer finds the
 * seed's story by itself (a pause of A inside its critical section that
 * outlives the lease), drops every other fault, and bisects the pause to
 * the exact boundary: 10 s + 1 ns fails, 10 s passes. */
static void test_search_finds_the_seeds_story_at_the_tick(void **state) {
    struct explore_opts o = {.seed = 1, .budget = 4096, .jobs = 1};
    struct explore_result r;
    char msg[800] = "";

    (void)state;
    load(&sc, "scenarios/explore-budget.lsim");
    assert_int_equal(explore_run(&sc, &o, &r, msg, sizeof msg), 0);
    /* Found early: 15 runs with seed 1. */
    assert_true(r.found);
    assert_int_equal(r.first_fail + 1, 15);
    /* Shrunk from 7 faults to the one that tells the story. */
    assert_int_equal(r.faults_found, 7);
    assert_int_equal(r.faults_shrunk, 1);
    assert_non_null(strstr(r.text, "\non A.between-read-and-write pause A 11.000000001s\n"));
    assert_int_equal(r.nboundary, 1);
    assert_string_equal(r.boundary[0], "pause of A 11.000000001s: UNSAFE with a stale write, a "
                                       "lost update; 11s (1 ns less): UNSAFE with a stale write");
    /* The file pins the failure, and says how it was found. */
    assert_non_null(strstr(r.text, "expect verdict UNSAFE\n"));
    assert_non_null(strstr(r.text, "expect stale-write accepted\n"));
    assert_non_null(strstr(r.text, "# explorer seed 1, run 14 of the search"));
    /* The file parses and fails as it says. Step by step down from the boundary:
     * Redis keeps the key through its deadline's millisecond (keyIsExpired is
     * now > when), so B's retry at 10 s is refused and its next, at 11 s,
     * takes the lock. At 11 s + 1 ns A resumes after B has read, so A's late
     * write is accepted and B's overwrites it (a lost update); at exactly
     * 11 s A resumes in the tick of B's grant and writes before B reads (a
     * stale write, nothing lost); 1 ns earlier nobody else holds the lock
     * yet when A writes (SAFE). */
    scenario_close(&sc2);
    assert_int_equal(scenario_parse(&sc2, "ce.lsim", r.text, r.len, &err), 0);
    {
        static const struct {
            sim_ns pause_ns;
            enum scn_verdict v;
            int stale, lost;
        } steps[] = {{11 * S_ + 1, SCN_VERDICT_UNSAFE, 1, 1},
                     {11 * S_, SCN_VERDICT_UNSAFE, 1, 0},
                     {11 * S_ - 1, SCN_VERDICT_SAFE, 0, 0}};
        struct engine_opts eo = {0};
        for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
            struct engine *e;
            sc2.faults[0].dur_ns = steps[i].pause_ns;
            assert_int_equal(engine_new(&e, &sc2, &eo, &err), 0);
            engine_run(e);
            assert_int_equal(engine_report(e)->verdict, steps[i].v);
            assert_int_equal(engine_report(e)->stale_accepted, steps[i].stale);
            assert_int_equal(engine_report(e)->lost_updates, steps[i].lost);
            engine_free(e);
        }
    }
    explore_result_close(&r);
}

/* Same explorer seed, same counterexample, byte for byte, on 1 or 2 workers
 * and with swarm mode too. */
static void test_same_seed_same_file_whatever_the_jobs(void **state) {
    struct explore_opts o = {.seed = 7, .budget = 20000, .jobs = 1};
    struct explore_result a, b;
    char msg[800] = "";
    int swarm;

    (void)state;
    load(&sc, "scenarios/explore-budget.lsim");
    o.algo = lock_algo_find("fenced-lease");
    assert_non_null(o.algo);
    for (swarm = 0; swarm < 2; swarm++) {
        o.swarm = swarm;
        o.jobs = 1;
        assert_int_equal(explore_run(&sc, &o, &a, msg, sizeof msg), 0);
        o.jobs = 2;
        assert_int_equal(explore_run(&sc, &o, &b, msg, sizeof msg), 0);
        assert_true(a.found && b.found);
        assert_true(a.first_fail == b.first_fail);
        assert_int_equal(a.len, b.len);
        assert_memory_equal(a.text, b.text, a.len);
        explore_result_close(&a);
        explore_result_close(&b);
    }
}

/* A search that finds nothing reports what it covered, the same on 1 or 2
 * workers: setnx never expires, so no pause breaks it. */
static void test_nothing_found_reports_coverage(void **state) {
    struct explore_opts o = {.seed = 1, .budget = 4096, .jobs = 1};
    struct explore_result a, b;
    char msg[800] = "";
    int k;

    (void)state;
    load(&sc, "scenarios/explore-budget.lsim");
    o.algo = lock_algo_find("setnx");
    assert_int_equal(explore_run(&sc, &o, &a, msg, sizeof msg), 0);
    o.jobs = 2;
    assert_int_equal(explore_run(&sc, &o, &b, msg, sizeof msg), 0);
    assert_false(a.found);
    assert_int_equal(a.runs, 4096);
    assert_int_equal(b.runs, 4096);
    assert_true(a.cover.placements > 200);
    assert_true(a.cover.placements <= a.cover.placements_possible);
    assert_true(a.cover.placements == b.cover.placements);
    for (k = 0; k < SCN_NEM_COUNT; k++) {
        assert_true(a.cover.kind[k] > 0);
        assert_true(a.cover.kind[k] == b.cover.kind[k]);
    }
    assert_true(a.cover.point[SCN_NEM_PAUSE][SCN_POINT_AFTER_ACQUIRE] > 0);
    /* The algorithm's states: every run acquires; no key ever expires (setnx
     * has no TTL), so no DEL ever removes another client's key: the two
     * states a pause would need to break it are never reached, and the
     * table says why nothing was found. The counts do not depend on --jobs. */
    assert_ptr_equal(a.algo, o.algo);
    assert_int_equal(a.algo->nstates, KV_ST_COUNT);
    assert_string_equal(a.algo->state_names[KV_ST_EXPIRED_UNKNOWN], "expired-unknown");
    assert_true(a.cover.state_runs[KV_ST_ACQUIRING] == 4096);
    assert_true(a.cover.state_runs[KV_ST_GRANTED] > 4000); /* all but runs whose A crashed */
    assert_true(a.cover.state_runs[KV_ST_REFUSED] > 0);    /* B's retries while A holds */
    assert_true(a.cover.state_runs[KV_ST_RELEASED] > 0);
    assert_true(a.cover.state_runs[KV_ST_EXPIRED_UNKNOWN] == 0);
    assert_true(a.cover.state_runs[KV_ST_DELETED_ANOTHERS] == 0);
    assert_true(a.cover.state_runs[KV_ST_PROMOTED] == 0); /* one server: no replicas */
    for (k = 0; k < LOCK_MAX_STATES; k++) assert_true(a.cover.state_runs[k] == b.cover.state_runs[k]);
    explore_result_close(&a);
    explore_result_close(&b);
}

/* The states a run passes through, as the algorithm reports them: the seed's
 * own story with a plain lease (A acquires, pauses 27 s, its lease expires
 * at 30 s unknown to it, B takes the lock at 31 s and releases it, and A's
 * compare-and-delete finds B's value and keeps the key) reaches exactly
 * acquiring, granted, released, release-kept and expired-unknown; reporting
 * them changes neither the trace nor its hash. */
static void test_states_of_the_seeds_story(void **state) {
    struct engine *e;
    struct engine_opts eo = {.hash_trace = 1};
    uint64_t want = 1ull << KV_ST_ACQUIRING | 1ull << KV_ST_GRANTED | 1ull << KV_ST_RELEASED |
                    1ull << KV_ST_RELEASE_KEPT | 1ull << KV_ST_EXPIRED_UNKNOWN;

    (void)state;
    load(&sc, "scenarios/gc-pause-outlives-lease.lsim");
    assert_int_equal(engine_new(&e, &sc, &eo, &err), 0);
    assert_true(engine_states_reached(e) == 0); /* nothing yet */
    engine_run(e);
    assert_true(engine_states_reached(e) == want);
    engine_free(e);
    /* With --set pause=20s A resumes at 25 s, before its lease runs out: SAFE,
     * and expired-unknown and release-kept are not reached. */
    assert_int_equal(scenario_set(&sc, "pause=20s", &err), 0);
    assert_int_equal(engine_new(&e, &sc, &eo, &err), 0);
    engine_run(e);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    assert_true(engine_states_reached(e) == (1ull << KV_ST_ACQUIRING | 1ull << KV_ST_GRANTED | 1ull << KV_ST_RELEASED));
    engine_free(e);
}

/* The names of the states a run reached, in the algorithm's order,
 * separated by spaces. */
static void reached_names(const char *path, char *out, size_t n) {
    struct engine *e;
    struct engine_opts eo = {.hash_trace = 1};
    const struct lock_algo *a;
    uint64_t bits;
    int k;

    load(&sc, path);
    assert_int_equal(engine_new(&e, &sc, &eo, &err), 0);
    engine_run(e);
    a = engine_algo(e);
    bits = engine_states_reached(e);
    out[0] = '\0';
    for (k = 0; k < a->nstates; k++)
        if (bits >> k & 1) snprintf(out + strlen(out), n - strlen(out), "%s%s", out[0] ? " " : "", a->state_names[k]);
    engine_free(e);
}

/* The four algorithms added after the first figures name their states, and
 * a catalog story reaches exactly the ones it tells: the DEL race deletes
 * another's lock after both judged the timestamp passed; the zk-ruby story
 * expires A's session while it holds, deletes the parent, reuses a sequence
 * number and deletes B's znode by path, where release-by=czxid keeps it;
 * zookeeper-multi fails the expired writer's multi; Chubby's lock-delay
 * follows a master-ended session, the checked sequencer rejects the late
 * write, and a holder cut off past its grace period learns it lost the lock.
 * No state is a trace event (test_states_of_the_seeds_story). */
static void test_states_of_the_newer_algorithms(void **state) {
    static const struct {
        const char *path, *want;
    } cases[] = {
            {"scenarios/setnx-timestamp-del-race.lsim",
             "acquiring granted refused deleted-anothers-lock timestamp-passed "
             "del-stale-sent"},
            {"scenarios/setnx-timestamp-getset.lsim", "acquiring granted refused released holder-live timestamp-passed "
                                                      "getset-won getset-read-live"},
            {"scenarios/setnx-timestamp-skewed-clock.lsim",
             "acquiring granted refused deleted-anothers-lock timestamp-passed "
             "getset-won"},
            {"scenarios/zookeeper-release-by-path-deletes-new-holder.lsim",
             "session-established session-reopened znode-created "
             "watching-predecessor predecessor-gone lowest-znode "
             "session-expired-holding expirer-closed-session holder-znode-expired "
             "released release-by-path-deleted-another parent-deleted "
             "sequence-reused"},
            {"scenarios/zookeeper-release-checks-czxid.lsim",
             "session-established session-reopened znode-created "
             "watching-predecessor predecessor-gone lowest-znode "
             "session-expired-holding expirer-closed-session holder-znode-expired "
             "released release-czxid-mismatch parent-deleted sequence-reused"},
            {"scenarios/zookeeper-multi-refuses-expired-session.lsim",
             "session-established session-reopened znode-created "
             "watching-predecessor predecessor-gone lowest-znode "
             "session-expired-holding expirer-closed-session holder-znode-expired "
             "released multi-applied multi-failed"},
            {"scenarios/chubby-lock-delay-covers-delayed-write.lsim",
             "session-open keepalive-held keepalive-answered acquire-queued granted "
             "master-ended-session lock-delay lock-delay-over released "
             "sequencer-unchecked"},
            {"scenarios/chubby-sequencer-checked.lsim",
             "session-open keepalive-held keepalive-answered acquire-queued granted "
             "master-ended-session lock-delay lock-delay-over released "
             "sequencer-accepted sequencer-rejected"},
            {"scenarios/chubby-lock-delay-shorter-than-grace.lsim",
             "session-open keepalive-held keepalive-answered acquire-queued granted "
             "jeopardy session-expired lock-lost master-ended-session lock-delay "
             "lock-delay-over released sequencer-unchecked"},
    };
    char got[2048];
    size_t i;
    int wrong = 0;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        reached_names(cases[i].path, got, sizeof got);
        if (strcmp(got, cases[i].want) != 0) {
            print_error("%s reaches '%s', not '%s'\n", cases[i].path, got, cases[i].want);
            wrong++;
        }
    }
    assert_int_equal(wrong, 0);
}

/* An algorithm that names more states than lock.h allows is refused when
 * the run is built, with its name and the limit, never a crash. */
static void test_too_many_states_is_refused(void **state) {
    struct lock_algo bad = *lock_algo_find("lease");
    struct engine *e = NULL;
    struct engine_opts eo = {.algo = &bad};

    (void)state;
    bad.nstates = LOCK_MAX_STATES + 1;
    assert_int_equal(parse(&sc, head), 0);
    assert_int_equal(engine_new(&e, &sc, &eo, &err), LSIM_EPLUGIN);
    assert_non_null(strstr(err.msg, "algorithm 'lease' names 65 states; lock.h allows 0 to 64"));
    bad.nstates = 3;
    bad.state_names = NULL;
    assert_int_equal(engine_new(&e, &sc, &eo, &err), LSIM_EPLUGIN);
    assert_non_null(strstr(err.msg, "with state_names for each"));
}

/* The planted bug (a lease released with plain DEL) is found and shrunk to a
 * wrong-release story: a client that was paused past its lease deletes the
 * lock of the client that took it over. */
static void test_planted_bug_shrinks_to_a_wrong_release(void **state) {
    struct explore_opts o = {.seed = 1, .budget = 20000, .jobs = 1};
    struct explore_result r;
    char msg[800] = "";

    (void)state;
    load(&sc, "examples/explore/planted-release-del.lsim");
    assert_int_equal(explore_run(&sc, &o, &r, msg, sizeof msg), 0);
    assert_true(r.found);
    assert_true(r.rep.wrong_releases >= 1);
    assert_non_null(strstr(r.text, "expect wrong-release\n"));
    assert_true(r.clients_shrunk < r.clients_found); /* a client was not needed */
    assert_true(r.faults_shrunk <= 2);
    explore_result_close(&r);
}

/* A param with a range is bisected to the tick as fault sizes are. A pause
 * of A between its read and its write, `$pause` in 1s..55s, against a 10 s
 * lease that B (retrying every 1 s from 1 s) takes at 11 s: the search draws
 * a pause far past the lease, the shrinker rounds it to 40 s, then bisects
 * between the default 1 s (SAFE) and 40 s to 11 s + 1 ns, the smallest
 * pause that still gives a stale write and a lost update. */
static const char *const param_story = "param pause=1s range=1s..55s\n"
                                       "lock lease ttl=10s\n"
                                       "resource stock=2 fencing=off\n"
                                       "network latency=0ms\n"
                                       "duration 60s\n"
                                       "client A: acquire; read; write; release\n"
                                       "client B @1s: acquire retry=1s; read; write; release\n"
                                       "on A.between-read-and-write pause A $pause\n"
                                       "expect verdict SAFE\n";

static void test_ranged_param_is_bisected_to_the_tick(void **state) {
    struct explore_opts o = {.seed = 1, .budget = 2048, .jobs = 1};
    struct explore_result r, r2;
    char msg[800] = "";

    (void)state;
    assert_int_equal(parse(&sc, param_story), 0);
    assert_int_equal(explore_run(&sc, &o, &r, msg, sizeof msg), 0);
    assert_true(r.found);
    /* The steps: rounded, then bisected to the exact nanosecond. */
    assert_int_equal(r.nsteps, 2);
    assert_string_equal(r.steps[0], "param pause rounded to 40s");
    assert_string_equal(r.steps[1], "bisected param pause: 40s -> 11.000000001s");
    /* The boundary, in the report and as a comment of the file. */
    assert_int_equal(r.nboundary, 1);
    assert_string_equal(r.boundary[0], "param pause 11.000000001s: UNSAFE with a stale write, a "
                                       "lost update; 11s (1 ns less): UNSAFE with a stale write");
    assert_non_null(strstr(r.text, "# Boundary: param pause 11.000000001s: UNSAFE"));
    /* The value is written into the fault line (params are printed as values). */
    assert_non_null(strstr(r.text, "\non A.between-read-and-write pause A 11.000000001s\n"));
    assert_non_null(strstr(r.text, "expect lost-update\n"));
    /* Each side of the boundary, run through the engine from the file's own
     * scenario with --set: 11 s + 1 ns loses an update, 11 s does not (A
     * writes in the tick of B's grant, before B reads), 1 s is SAFE. */
    {
        static const struct {
            const char *set;
            enum scn_verdict v;
            int stale, lost;
        } sides[] = {{"pause=11000000001ns", SCN_VERDICT_UNSAFE, 1, 1},
                     {"pause=11s", SCN_VERDICT_UNSAFE, 1, 0},
                     {"pause=1s", SCN_VERDICT_SAFE, 0, 0}};
        struct engine_opts eo = {0};
        for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++) {
            struct engine *e;
            assert_int_equal(parse(&sc2, param_story), 0);
            assert_int_equal(scenario_set(&sc2, sides[i].set, &err), 0);
            assert_int_equal(engine_new(&e, &sc2, &eo, &err), 0);
            engine_run(e);
            assert_int_equal(engine_report(e)->verdict, sides[i].v);
            assert_int_equal(engine_report(e)->stale_accepted, sides[i].stale);
            assert_int_equal(engine_report(e)->lost_updates, sides[i].lost);
            engine_free(e);
        }
    }
    /* Two workers: the same file, byte for byte. */
    o.jobs = 2;
    assert_int_equal(explore_run(&sc, &o, &r2, msg, sizeof msg), 0);
    assert_int_equal(r.len, r2.len);
    assert_memory_equal(r.text, r2.text, r.len);
    explore_result_close(&r);
    explore_result_close(&r2);
    /* Two ranged params and a file that expects UNSAFE (the seed's story,
     * pause 27s and ttl 30s): a run breaks the file when its story changes.
     * pause is bisected from the 50 s it was rounded to down to its default
     * 27 s, where the file's expect lines hold again (A resumes at 32 s, one
     * second into B's hold: 1 ns more changes the double entry's length);
     * then ttl from its default 30 s up to 32 s - 1 ns, where B, who asks
     * from 31 s every second, still gets the lock at 32 s (at 32 s it would
     * not, and the run is SAFE). */
    o.jobs = 1;
    load(&sc, "scenarios/gc-pause-outlives-lease.lsim");
    assert_int_equal(explore_run(&sc, &o, &r, msg, sizeof msg), 0);
    assert_true(r.found);
    assert_int_equal(r.nboundary, 2);
    assert_string_equal(r.boundary[0], "param pause 27.000000001s: UNSAFE with a double entry, a "
                                       "stale write, a lost update; 27s (1 ns less): UNSAFE with "
                                       "a double entry, a stale write, a lost update (the file's "
                                       "expect lines hold)");
    assert_string_equal(r.boundary[1], "param ttl 31.999999999s: UNSAFE with a double entry, a "
                                       "stale write, a lost update; 32s (1 ns more): SAFE");
    assert_non_null(strstr(r.text, "\nlock lease ttl=31.999999999s release=compare-and-delete\n"));
    assert_non_null(strstr(r.text, "\n@5s pause A 27.000000001s\n"));
    explore_result_close(&r);
}

/* The figures table of docs/explore.md ("Every algorithm under one budget")
 * is what the explorer finds: each row is run (seed 1, budget 100000, or the
 * N of a row's "none found in N runs", one worker) with its algorithm and --set, and its outcome, runs to the first
 * failure (or "none found in N runs"), states reached and every fault line it
 * quotes must match. Every algorithm of the registry has a row. */
static char *cell(char **p) {
    char *c = *p, *bar = strchr(c, '|');
    char *end;

    if (bar == NULL) return NULL;
    *bar = '\0';
    *p = bar + 1;
    while (*c == ' ') c++;
    end = c + strlen(c);
    while (end > c && end[-1] == ' ') *--end = '\0';
    return c;
}

static void test_the_figures_table_is_what_explore_finds(void **state) {
    static char doc[65536];
    char *line, *save = NULL, *table;
    int rows = 0, covered[64] = {0}, i;

    (void)state;
    slurp("docs/explore.md", doc, sizeof doc);
    table = strstr(doc, "| algorithm | --set | found | runs to first failure | states reached |");
    assert_non_null(table);
    for (line = strtok_r(table, "\n", &save); line && line[0] == '|'; line = strtok_r(NULL, "\n", &save)) {
        char *p = line + 1, *algo = cell(&p), *set = cell(&p), *found = cell(&p), *runs = cell(&p), *states = cell(&p),
             *story = cell(&p), *q;
        struct explore_opts o = {.seed = 1, .budget = 100000, .jobs = 1};
        struct explore_result r;
        char msg[800] = "", want[64], sets[200], *save_set = NULL;
        unsigned long long none_in;
        int reached = 0, named, k;
        assert_non_null(story);
        if (strcmp(algo, "algorithm") == 0 || strncmp(algo, "---", 3) == 0) continue;
        /* A row that found nothing says its budget: "none found in N runs"
         * (the search rounds the budget up to whole batches of 1024). */
        if (sscanf(runs, "none found in %llu runs", &none_in) == 1) o.budget = none_in;
        o.algo = lock_algo_find(algo);
        if (o.algo == NULL) print_error("docs/explore.md names '%s', not an algorithm\n", algo);
        assert_non_null(o.algo);
        for (i = 0; lock_algo_at(i); i++) covered[i] |= lock_algo_at(i) == o.algo;
        load(&sc, "scenarios/explore-budget.lsim");
        /* The --set cell: settings separated by spaces, applied in order. */
        snprintf(sets, sizeof sets, "%s", set);
        for (q = strtok_r(sets, " ", &save_set); q; q = strtok_r(NULL, " ", &save_set)) {
            int rc = scenario_set(&sc, q, &err);
            if (rc != 0) print_error("%s: --set %s: %s\n", algo, q, err.msg);
            assert_int_equal(rc, 0);
        }
        assert_int_equal(explore_run(&sc, &o, &r, msg, sizeof msg), 0);
        if (strcmp(found, "yes") == 0) {
            assert_true(r.found);
            snprintf(want, sizeof want, "%llu", (unsigned long long)r.first_fail + 1);
        } else {
            assert_false(r.found);
            snprintf(want, sizeof want, "none found in %llu runs", (unsigned long long)r.runs);
        }
        if (strcmp(runs, want) != 0)
            print_error("%s %s: the table says '%s', explore gives '%s'\n", algo, set, runs, want);
        assert_string_equal(runs, want);
        for (k = 0; k < r.algo->nstates; k++) reached += r.cover.state_runs[k] > 0;
        named = r.algo->nstates;
        snprintf(want, sizeof want, "%d of %d", reached, named);
        if (strcmp(states, want) != 0)
            print_error("%s %s: states '%s' in the table, %s explored\n", algo, set, states, want);
        assert_string_equal(states, want);
        /* Each fault line quoted (`on ...` or `@...`) is a line of the file. */
        for (q = strchr(story, '`'); q; q = strchr(q + 1, '`')) {
            char quoted[300], *close = strchr(q + 1, '`');
            assert_non_null(close);
            snprintf(quoted, sizeof quoted, "\n%.*s\n", (int)(close - q - 1), q + 1);
            if ((q[1] == '@' || strncmp(q + 1, "on ", 3) == 0) && !strstr(r.text, quoted))
                print_error("%s %s: the file has no line%s", algo, set, quoted);
            if (q[1] == '@' || strncmp(q + 1, "on ", 3) == 0) assert_non_null(strstr(r.text, quoted));
            q = close;
        }
        explore_result_close(&r);
        rows++;
    }
    assert_true(rows >= 13);
    for (i = 0; lock_algo_at(i); i++) {
        if (!covered[i]) print_error("docs/explore.md has no row for %s\n", lock_algo_at(i)->name);
        assert_true(covered[i]);
    }
}

/* A scenario its file could not say (reads checked without the fence, as
 * the C API can set it and --set now refuses): the first failure's text
 * does not parse back, and the explorer says so, with the parser's line,
 * column and reason, instead of failing with no message. */
static void test_a_failure_that_does_not_parse_back_says_why(void **state) {
    struct explore_opts o = {.seed = 1, .budget = 4096, .jobs = 1};
    struct explore_result r;
    char msg[800] = "";

    (void)state;
    load(&sc, "scenarios/explore-budget.lsim");
    o.algo = lock_algo_find("fenced-lease");
    sc.check_reads = 1; /* with the file's fencing=off */
    assert_int_equal(explore_run(&sc, &o, &r, msg, sizeof msg), LSIM_EINTERNAL);
    if (!strstr(msg, "does not parse back (line 9 col 18: check=reads+writes checks the fencing token"))
        print_error("message: %s\n", msg);
    assert_non_null(strstr(msg, "the explorer failed: the counterexample, written as a file, does not "
                                "parse back (line 9 col 18: check=reads+writes checks the fencing token "
                                "of reads; it needs fencing=on on this line); a --set may have made a "
                                "scenario its file could not say"));
    explore_result_close(&r);
}

/* Nothing to explore: refused with what to add. */
static void test_refuses_a_scenario_with_nothing_to_explore(void **state) {
    struct explore_opts o = {.seed = 1, .budget = 10, .jobs = 1};
    struct explore_result r;
    char msg[800] = "";

    (void)state;
    assert_int_equal(parse(&sc, head), 0);
    assert_int_equal(explore_run(&sc, &o, &r, msg, sizeof msg), LSIM_EUSAGE);
    assert_non_null(strstr(msg, "has nothing to explore: add a fault budget such as `explore "
                                "pauses<=2"));
    assert_non_null(strstr(msg, "range=0s..60s"));
}

/* ---- The command line ------------------------------------------------------------------- */

static void test_cli_writes_a_file_that_check_passes(void **state) {
    struct result *r;
    char a[8192], b[8192];

    (void)state;
    remove(sp("locksim_explore_1.lsim"));
    r = run(fmt("explore scenarios/explore-budget.lsim --budget 4096 -o %1$s/locksim_explore_1.lsim", scratch()));
    assert_int_equal(r->code, 1); /* found: the file's expectation is broken */
    assert_non_null(strstr(r->out, "15 runs to the first failure"));
    assert_non_null(strstr(r->out, "boundary: pause of A 11.000000001s: UNSAFE"));
    r = run(fmt("check %1$s/locksim_explore_1.lsim", scratch()));
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "1 passed, 0 failed"));
    slurp(sp("locksim_explore_1.lsim"), a, sizeof a);
    /* The same with two workers, byte for byte; the search stops at the
     * first failure whatever --jobs is, so the report counts the same runs
     * (the states table is of runs 0 to 14 on either). */
    r = run(fmt("explore scenarios/explore-budget.lsim --budget 4096 --jobs 2 -o "
                "%1$s/locksim_explore_2.lsim",
                scratch()));
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->out, "search: 15 runs in "));
    assert_non_null(strstr(r->out, "15 runs to the first failure"));
    assert_non_null(strstr(r->out, "(runs reaching each, of 15 runs)"));
    slurp(sp("locksim_explore_2.lsim"), b, sizeof b);
    assert_string_equal(a, b);
    remove(sp("locksim_explore_1.lsim"));
    remove(sp("locksim_explore_2.lsim"));
    /* Nothing found: exit 0 and the coverage table. */
    r = run("explore scenarios/explore-budget.lsim --algos setnx --budget 2048");
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "none found in 2048 runs"));
    assert_non_null(strstr(r->out, "distinct fault placements"));
    assert_non_null(strstr(r->out, "between-read-and-write"));
    assert_non_null(strstr(r->out, "algorithm states of setnx: 5 of 14 reached (runs reaching "
                                   "each, of 2048 runs)\n  acquiring                        2048\n"));
    assert_non_null(strstr(r->out, "\n  expired-unknown                     0  not reached\n"));
}

static void test_cli_errors(void **state) {
    struct result *r;

    (void)state;
    r = run("explore scenarios/ttl-with-headroom.lsim");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "has nothing to explore"));
    r = run("explore");
    assert_int_equal(r->code, 64);
    r = run("explore scenarios/explore-budget.lsim --jobs 0");
    assert_int_equal(r->code, 64);
    r = run("explore scenarios/explore-budget.lsim --time soon");
    assert_int_equal(r->code, 64);
    r = run("explore /nonexistent.lsim");
    assert_int_equal(r->code, 66);
    r = run("explore scenarios/explore-budget.lsim --algos nosuch");
    assert_int_equal(r->code, 64);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_explore_line_parses_to_its_budget),
            cmocka_unit_test(test_explore_line_errors),
            cmocka_unit_test(test_print_round_trip_over_the_catalog),
            cmocka_unit_test(test_search_finds_the_seeds_story_at_the_tick),
            cmocka_unit_test(test_same_seed_same_file_whatever_the_jobs),
            cmocka_unit_test(test_nothing_found_reports_coverage),
            cmocka_unit_test(test_states_of_the_seeds_story),
            cmocka_unit_test(test_too_many_states_is_refused),
            cmocka_unit_test(test_planted_bug_shrinks_to_a_wrong_release),
            cmocka_unit_test(test_ranged_param_is_bisected_to_the_tick),
            cmocka_unit_test(test_states_of_the_newer_algorithms),
            cmocka_unit_test(test_the_figures_table_is_what_explore_finds),
            cmocka_unit_test(test_a_failure_that_does_not_parse_back_says_why),
            cmocka_unit_test(test_refuses_a_scenario_with_nothing_to_explore),
            cmocka_unit_test(test_cli_writes_a_file_that_check_passes),
            cmocka_unit_test(test_cli_errors),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);

    scenario_close(&sc);
    scenario_close(&sc2);
    return rc;
}
