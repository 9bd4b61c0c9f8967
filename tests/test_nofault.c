/* The no-fault property (issue 25): a run without faults is never UNSAFE.
 * Every built-in algorithm that can run the script, over every catalog
 * scenario with its faults removed: no scripted or triggered fault (pause,
 * crash, restart, clock step, drift or slew, partition, heal, link change,
 * promote, kill-replicas), no clock offset or rate error, no message loss,
 * no slow link (every link at the network's default latency).
 * What stays is the workload: clients, their programs and timing, the
 * network's latency, the lock's options. A run that cannot be built (too
 * many servers for the algorithm) is skipped as matrix skips it. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "engine.h"
#include "lock.h"
#include "run.h"
#include "scenario_file.h"

/* Algorithms unsafe by design without any fault, with the reason
 * (docs/algorithms.md). */
static const struct {
    const char *algo, *why;
} unsafe_by_design[] = {
        {"local-mutex", "a mutex in one process's memory: two replicas each take their own "
                        "(docs/algorithms.md, local-mutex)"},
        {"setnx-timestamp", "redis.io's legacy SETNX recipe: the lock expires when a client's clock "
                            "passes the stored timestamp, with no renewal, so a critical section longer "
                            "than the timeout is taken over (docs/algorithms.md, setnx-timestamp)"},
};

/* Scenarios whose workload itself breaks a lease-based lock without a fault,
 * with the reason: the lesson they teach is exactly that. */
static const struct {
    const char *file, *why;
} unsafe_workload[] = {
        {"db-plain-update-lost-update.lsim", "condition=off: a plain UPDATE with no WHERE version, "
                                             "no lock at all, the lost update it teaches"},
        {"pg-advisory-session-ends-lock-released.lsim", "idle-session-timeout=30s: the server ends the "
                                                        "worker's idle session and its lock with it while "
                                                        "the worker computes, by configuration"},
        {"k8s-lease-release-on-cancel-mid-section.lsim", "cancel-after=9s release-on-cancel=on: the library "
                                                         "releases while the program still computes, the misuse "
                                                         "client-go's ReleaseOnCancel documentation warns of, by "
                                                         "configuration"},
        {"takeover-zombie-write-lands.lsim", "takeover=on: a newer instance takes the lock from a live one at once, "
                                             "as Kafka's InitProducerId does by design; only an epoch check at the "
                                             "resource (its pair, fenced-lease) keeps it safe"},
};

/* TTL locks that never renew: unsafe by design when the critical section
 * outlasts the TTL (lease_lapsed_in_section). Algorithms that renew (lease-renew,
 * consensus, zookeeper, chubby, k8s-lease) are not excused: a lease of theirs
 * that lapses while its holder works, with no fault, is a bug (issue 25,
 * defect 2 was one). */
static const char *const ttl_without_renewal[] = {"lease", "fenced-lease", "setnx-expire", "redlock"};

static int never_renews(const char *algo) {
    for (size_t i = 0; i < sizeof ttl_without_renewal / sizeof ttl_without_renewal[0]; i++)
        if (strcmp(ttl_without_renewal[i], algo) == 0) return 1;
    return 0;
}

static const char *design_reason(const char *algo) {
    for (size_t i = 0; i < sizeof unsafe_by_design / sizeof unsafe_by_design[0]; i++)
        if (strcmp(unsafe_by_design[i].algo, algo) == 0) return unsafe_by_design[i].why;
    return NULL;
}

static const char *workload_reason(const char *file) {
    for (size_t i = 0; i < sizeof unsafe_workload / sizeof unsafe_workload[0]; i++)
        if (unsafe_workload[i].file && strstr(file, unsafe_workload[i].file)) return unsafe_workload[i].why;
    return NULL;
}

/* A TTL lock without renewal is unsafe by design when the critical section
 * outlasts the lease: the store expires the holder's key while it works,
 * no fault needed (ttl-shorter-than-critical-section.lsim, the seed's "Why a
 * TTL breaks mutual exclusion"). 1 when the trace shows it: a holder's lease
 * expired at the store while that holder was in its critical section. */
static int lease_lapsed_in_section(const struct trace *tr) {
    for (size_t i = 0; i < tr->len; i++) {
        const struct trace_event *x = &tr->ev[i];
        if (x->kind != TRACE_SRV_EXPIRE || x->peer < 0) continue;
        int inside = 0;
        for (size_t j = 0; j < i; j++) {
            const struct trace_event *ev = &tr->ev[j];
            if (ev->node != x->peer) continue;
            if (ev->kind == TRACE_ACQUIRED) inside = 1;
            else if (ev->kind == TRACE_CS_EXIT) inside = 0;
        }
        if (inside) return 1;
    }
    return 0;
}

/* The scenario without its faults. */
static void strip_faults(struct scenario *s) {
    s->nfaults = 0;
    s->nclocks = 0;
    s->loss_ppm = 0;
    s->nlinks = 0; /* a slow or lossy link is the network's fault; the default latency stays */
}

static void test_no_fault_run_is_unsafe(void **state) {
    (void)state;
    DIR *d = opendir("scenarios");
    assert_non_null(d);
    struct dirent *de;
    int files = 0, runs = 0, skipped = 0, unsafe = 0, excused = 0;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".lsim") != 0) continue;
        char path[600];
        snprintf(path, sizeof path, "scenarios/%s", de->d_name);
        struct scenario sc;
        struct scn_error err;
        int rc = scenario_load(&sc, path, &err);
        if (rc != 0) fprintf(stderr, "%s: %s\n", path, err.msg);
        assert_int_equal(rc, 0);
        strip_faults(&sc);
        files++;
        for (int i = 0; lock_algo_at(i); i++) {
            const struct lock_algo *a = lock_algo_at(i);
            struct run_spec spec = {
                    .file = path, .parsed = &sc, .algo_resolved = a, .lenient_sets = 1, .keep_trace = 1};
            struct run_result r;
            run_scenario(&spec, &r);
            if (r.rc != 0) {
                if (!run_cannot_run(&r, 1)) fprintf(stderr, "%s with %s: %s\n", path, a->name, r.error);
                assert_true(run_cannot_run(&r, 1));
                skipped++;
                run_result_close(&r);
                continue;
            }
            runs++;
            if (r.report->verdict == SCN_VERDICT_UNSAFE) {
                const char *why = design_reason(a->name);
                if (!why) why = workload_reason(path);
                if (!why && never_renews(a->name) && lease_lapsed_in_section(engine_trace(r.engine)))
                    why = "the lease ran out in the critical section";
                if (why) {
                    excused++;
                } else {
                    unsafe++;
                    fprintf(stderr, "UNSAFE without faults: %s with %s: %s\n", path, a->name, r.report->headline);
                }
            }
            run_result_close(&r);
        }
        scenario_close(&sc);
    }
    closedir(d);
    fprintf(stderr,
            "no-fault property: %d scenarios, %d runs (%d skipped: cannot run the script), "
            "%d UNSAFE excused by design, %d UNSAFE\n",
            files, runs, skipped, excused, unsafe);
    assert_true(files >= 100);
    assert_int_equal(unsafe, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_no_fault_run_is_unsafe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
