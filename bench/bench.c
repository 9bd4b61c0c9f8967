/* locksim-bench: the benchmarks behind `make bench` (bench/README.md).
 *
 *   throughput  the peer workload through the real engine against the bare
 *               binary heap (shared/bench-peers/c/lockbench.c), interleaved
 *               rounds, medians of same-round ratios, checksums compared
 *   memory      peak RSS of one engine run per configuration, each in a
 *               fresh child process (wait4's rusage), at E and 10E events
 *   runcost     `locksim run` on one scenario as a whole process (fork/exec
 *               loop), and in-process parse + run of a scenario catalog
 *   child       one engine run of the peer workload, one report line
 *               (used by throughput and memory)
 *
 * It prints figures and ratios. It never fails on speed; it exits non-zero
 * only when something is wrong (a checksum differs from the reference, a
 * child fails, the checker disagrees with the workload). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "run.h"
#include "viewmodel.h"
#include "spawn.h"
#include "workload.h"

#define MAX_N 8 /* client counts per invocation */
#define MAX_ROUNDS 50

static const char *self_path = "/proc/self/exe";

static const char usage[] =
        "Usage:\n"
        "  locksim-bench throughput [--rounds R] [--clients N,N,..] [--events E,E,..] [--seed S]\n"
        "                           [--ref LOCKBENCH] [--wheel LOCKBENCH_WHEEL]\n"
        "  locksim-bench memory [--clients N,N,..] [--events E]\n"
        "  locksim-bench runcost LOCKSIM SCENARIO [--runs K] [--floor PROGRAM ARGS.. --] [CATALOG.lsim ...]\n"
        "  locksim-bench resim [--runs K] CATALOG.lsim ...\n"
        "  locksim-bench child N E SEED\n";

/* ---- small helpers ------------------------------------------------------- */

static int parse_list(const char *text, uint64_t *out, int max) {
    int n = 0;
    const char *p = text;
    while (*p) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (errno || end == p || n == max) return -1;
        out[n++] = v;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return n;
}

/* 12,345,678 */
static const char *group(uint64_t v, char *buf, size_t len) {
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%" PRIu64, v);
    size_t o = 0;
    for (int i = 0; i < n && o + 2 < len; i++) {
        if (i && (n - i) % 3 == 0) buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    buf[o] = 0;
    return buf;
}

static const char *mega(double v, char *buf, size_t len) {
    snprintf(buf, len, "%.2f M", v / 1e6);
    return buf;
}

static double min_of(const double *v, int n) {
    double m = v[0];
    for (int i = 1; i < n; i++) m = v[i] < m ? v[i] : m;
    return m;
}

static double max_of(const double *v, int n) {
    double m = v[0];
    for (int i = 1; i < n; i++) m = v[i] > m ? v[i] : m;
    return m;
}

static double median_copy(const double *v, int n) {
    double tmp[MAX_ROUNDS];
    memcpy(tmp, v, (size_t)n * sizeof *v);
    return sp_median(tmp, (size_t)n);
}

/* ---- child: one engine run --------------------------------------------------- */

static int cmd_child(int argc, char **argv) {
    if (argc != 3) {
        fputs(usage, stderr);
        return 64;
    }
    uint32_t n = (uint32_t)strtoul(argv[0], NULL, 10);
    uint64_t ev = strtoull(argv[1], NULL, 10);
    uint64_t seed = strtoull(argv[2], NULL, 10);
    if (n == 0 || n > SCN_MAX_CLIENTS || ev == 0) {
        fprintf(stderr, "bench child: N must be 1..%d and E at least 1\n", SCN_MAX_CLIENTS);
        return 64;
    }
    struct scenario s;
    if (wl_scenario(&s, n, seed) != 0) {
        scenario_close(&s);
        fprintf(stderr, "bench child: out of memory building %u clients\n", n);
        return 70;
    }
    struct wl_result r;
    int rc = wl_run(&s, ev, 1, &r);
    if (rc != 0) {
        fprintf(stderr, "bench child: the engine %s\n", rc == -2 ? "ran out of memory" : "refused the scenario");
        return 70;
    }
    printf("engine=locksim N=%u events=%" PRIu64 " sim_end_us=%" PRIu64 " grants=%" PRIu64
           " loop_s=%.6f ev_per_s=%.0f engine_events=%" PRIu64 " engine_ev_per_s=%.0f"
           " build_s=%.6f acquired=%" PRIu64 "\n",
           n, r.ref_events, r.sim_end_us, r.grants, r.loop_s, (double)r.ref_events / r.loop_s, r.engine_events,
           (double)r.engine_events / r.loop_s, r.build_s, r.acquired);
    return r.ref_events == ev ? 0 : 70;
}

/* ---- the workload against the checker ------------------------------------------ */

/* A run to its end: every grant the clients received is an acquisition the
 * checker saw, no two clients held the lock at once, verdict SAFE. */
static int validate_workload(void) {
    struct scenario s;
    if (wl_scenario(&s, 1000, 42) != 0) {
        scenario_close(&s);
        return -1;
    }
    s.duration_ns = 100 * SIM_NS_PER_MS;
    struct checker_report rep;
    struct wl_counts cnt;
    int rc = wl_run_to_end(&s, &rep, &cnt);
    scenario_close(&s);
    int ok = rc == 0 && (uint64_t)rep.acquires == cnt.acquired && rep.double_entries == 0 &&
             rep.verdict == SCN_VERDICT_SAFE && cnt.grants >= cnt.acquired;
    printf("workload check (1000 clients, 100 ms, checker on): %" PRIu64 " reference events, "
           "%" PRIu64 " grants, %" PRId64 " acquisitions seen by the checker, %" PRId64
           " denied attempts, verdict %s: %s\n",
           cnt.ref_events, cnt.grants, rep.acquires, rep.denied_attempts, scn_verdict_name(rep.verdict),
           ok ? "ok" : "MISMATCH");
    return ok ? 0 : -1;
}

/* ---- throughput ---------------------------------------------------------------------- */

struct tp_run {
    double ev_per_s;  /* reference-equivalent (or reference) events per second */
    double eng_per_s; /* engine events per second (locksim only) */
    uint64_t sim_end_us, grants, events;
    long rss_kib;
};

static int run_report(char *const argv[], const char *what, struct tp_run *out) {
    struct sp_result r;
    if (sp_run(argv, 1, &r) != 0 || !r.exited || r.status != 0) {
        fprintf(stderr, "bench: %s failed (%s)\n", what, r.exited ? "non-zero exit" : "did not run");
        return -1;
    }
    memset(out, 0, sizeof *out);
    if (sp_field_f64(r.out, "ev_per_s", &out->ev_per_s) != 0 ||
        sp_field_u64(r.out, "sim_end_us", &out->sim_end_us) != 0 || sp_field_u64(r.out, "grants", &out->grants) != 0 ||
        sp_field_u64(r.out, "events", &out->events) != 0) {
        fprintf(stderr, "bench: %s printed no report line: %s\n", what, r.out);
        return -1;
    }
    sp_field_f64(r.out, "engine_ev_per_s", &out->eng_per_s);
    out->rss_kib = r.maxrss_kib;
    return 0;
}

static int cmd_throughput(int argc, char **argv) {
    uint64_t ns[MAX_N] = {10, 1000, 100000}, es[MAX_N] = {3000000, 3000000, 3000000};
    int nn = 3, ne = 3, rounds = 5;
    uint64_t seed = 42;
    const char *ref = NULL, *wheel = NULL;
    for (int i = 0; i < argc; i++) {
        int has = i + 1 < argc;
        if (!strcmp(argv[i], "--rounds") && has) rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--clients") && has) nn = parse_list(argv[++i], ns, MAX_N);
        else if (!strcmp(argv[i], "--events") && has) ne = parse_list(argv[++i], es, MAX_N);
        else if (!strcmp(argv[i], "--seed") && has) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--ref") && has) ref = argv[++i];
        else if (!strcmp(argv[i], "--wheel") && has) wheel = argv[++i];
        else {
            fputs(usage, stderr);
            return 64;
        }
    }
    if (nn < 1 || ne < 1 || rounds < 1 || rounds > MAX_ROUNDS) {
        fputs(usage, stderr);
        return 64;
    }
    if (validate_workload() != 0) return 1;

    static struct tp_run loc[MAX_N][MAX_ROUNDS], heap[MAX_N][MAX_ROUNDS], whl[MAX_N][MAX_ROUNDS];
    int bad = 0;
    printf("throughput: %d interleaved rounds; per round each N runs locksim%s%s once, each in its own process\n",
           rounds, ref ? ", c-heap2" : "", wheel ? ", c-wheel" : "");
    if (!ref) printf("throughput: no reference program given: no ratio to the bare heap\n");
    fflush(stdout);
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < nn; k++) {
            uint64_t ev = es[k < ne ? k : ne - 1];
            char sn[32], se[32], ss[32];
            snprintf(sn, sizeof sn, "%" PRIu64, ns[k]);
            snprintf(se, sizeof se, "%" PRIu64, ev);
            snprintf(ss, sizeof ss, "%" PRIu64, seed);
            char *largv[] = {(char *)self_path, "child", sn, se, ss, NULL};
            if (run_report(largv, "the locksim engine run", &loc[k][r]) != 0) return 1;
            if (ref) {
                char *rargv[] = {(char *)ref, sn, se, ss, NULL};
                if (run_report(rargv, ref, &heap[k][r]) != 0) return 1;
            }
            if (wheel) {
                char *wargv[] = {(char *)wheel, sn, se, ss, NULL};
                if (run_report(wargv, wheel, &whl[k][r]) != 0) return 1;
            }
        }
        printf("  round %d/%d done\n", r + 1, rounds);
        fflush(stdout);
    }

    printf("\n| N | events E | locksim ref-equiv ev/s | locksim engine ev/s | c-heap2 ev/s | "
           "locksim / c-heap2 (same-round median, min..max) | c-wheel ev/s | checksums at E |\n");
    printf("|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (int k = 0; k < nn; k++) {
        double a[MAX_ROUNDS], b[MAX_ROUNDS], h[MAX_ROUNDS], w[MAX_ROUNDS], ratio[MAX_ROUNDS];
        for (int r = 0; r < rounds; r++) {
            a[r] = loc[k][r].ev_per_s;
            b[r] = loc[k][r].eng_per_s;
            h[r] = heap[k][r].ev_per_s;
            w[r] = whl[k][r].ev_per_s;
            ratio[r] = ref ? a[r] / h[r] : 0;
        }
        const struct tp_run *l0 = &loc[k][0];
        int same = 1;
        for (int r = 0; r < rounds; r++) {
            if (loc[k][r].sim_end_us != l0->sim_end_us || loc[k][r].grants != l0->grants) same = 0;
            if (ref && (heap[k][r].sim_end_us != l0->sim_end_us || heap[k][r].grants != l0->grants ||
                        heap[k][r].events != l0->events))
                same = 0;
            if (wheel && (whl[k][r].sim_end_us != l0->sim_end_us || whl[k][r].grants != l0->grants)) same = 0;
        }
        if (!same) bad = 1;
        char m1[32], m2[32], m3[32], m4[32], g1[32];
        char rs[64] = "n/a";
        if (ref)
            snprintf(rs, sizeof rs, "**%.2fx** (%.2f..%.2f)", median_copy(ratio, rounds), min_of(ratio, rounds),
                     max_of(ratio, rounds));
        printf("| %" PRIu64 " | %s | %s | %s | %s | %s | %s | %s sim_end_us=%" PRIu64 " grants=%" PRIu64 " |\n", ns[k],
               group(l0->events, g1, sizeof g1), mega(median_copy(a, rounds), m1, sizeof m1),
               mega(median_copy(b, rounds), m2, sizeof m2), ref ? mega(median_copy(h, rounds), m3, sizeof m3) : "n/a",
               rs, wheel ? mega(median_copy(w, rounds), m4, sizeof m4) : "n/a",
               !ref   ? "(no reference)"
               : same ? "equal:"
                      : "DIFFERENT:",
               l0->sim_end_us, l0->grants);
        if (!same)
            for (int r = 0; r < rounds; r++)
                fprintf(stderr,
                        "bench: N=%" PRIu64 " round %d: locksim end=%" PRIu64 " grants=%" PRIu64 " c-heap2 end=%" PRIu64
                        " grants=%" PRIu64 "\n",
                        ns[k], r + 1, loc[k][r].sim_end_us, loc[k][r].grants, heap[k][r].sim_end_us, heap[k][r].grants);
    }
    printf("\nlocksim ref-equiv ev/s: timer fired, request received, reply received per wall second, from before\n"
           "engine_new (N clients) to the E-th such event; the engine processes more events than that\n"
           "(engine ev/s: program continuations and zero-length program timers too). A ratio above 1.00\n"
           "means locksim is faster than the bare binary heap; ratios are taken inside one round, so\n"
           "they share that round's machine noise.\n");
    return bad ? 1 : 0;
}

/* ---- memory -------------------------------------------------------------------------- */

static int cmd_memory(int argc, char **argv) {
    uint64_t ns[MAX_N] = {1000, 100000}, e = 1000000;
    uint64_t targets_mib[MAX_N] = {8, 32};
    int nn = 2;
    for (int i = 0; i < argc; i++) {
        int has = i + 1 < argc;
        if (!strcmp(argv[i], "--clients") && has) nn = parse_list(argv[++i], ns, MAX_N);
        else if (!strcmp(argv[i], "--events") && has) e = strtoull(argv[++i], NULL, 10);
        else {
            fputs(usage, stderr);
            return 64;
        }
    }
    if (nn < 1 || e == 0) {
        fputs(usage, stderr);
        return 64;
    }
    printf("memory: peak RSS of one engine run per line, each in a fresh process (wait4 ru_maxrss);\n"
           "trace not kept, checker on; E and 10E events show whether memory grows with simulated time\n\n");
    printf("| N | events | sim_end_us | peak RSS MiB | target MiB | 10E / E |\n|---:|---:|---:|---:|---:|---:|\n");
    for (int k = 0; k < nn; k++) {
        long rss[2];
        for (int j = 0; j < 2; j++) {
            uint64_t ev = j ? 10 * e : e;
            char sn[32], se[32], g[32];
            snprintf(sn, sizeof sn, "%" PRIu64, ns[k]);
            snprintf(se, sizeof se, "%" PRIu64, ev);
            char *cargv[] = {(char *)self_path, "child", sn, se, "42", NULL};
            struct tp_run t;
            if (run_report(cargv, "the locksim engine run", &t) != 0) return 1;
            rss[j] = t.rss_kib;
            char tgt[32] = "";
            if (k < 2 && nn == 2 && ns[0] == 1000 && ns[1] == 100000)
                snprintf(tgt, sizeof tgt, "%" PRIu64, targets_mib[k]);
            char growth[32] = "";
            if (j) snprintf(growth, sizeof growth, "%.2f", (double)rss[1] / (double)rss[0]);
            printf("| %" PRIu64 " | %s | %" PRIu64 " | %.1f | %s | %s |\n", ns[k], group(ev, g, sizeof g), t.sim_end_us,
                   (double)rss[j] / 1024.0, tgt, growth);
            fflush(stdout);
        }
    }
    return 0;
}

/* ---- runcost ------------------------------------------------------------------------- */

static int read_file(const char *path, char **text, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(f);
            return -1;
        }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        cap *= 2;
        char *nb = realloc(buf, cap);
        if (!nb) free(buf);
        buf = nb;
    }
    fclose(f);
    *text = buf;
    *len = n;
    return 0;
}

/* One parse + build + run + free of scenario text, trace not kept.
 * Returns the events processed, or -1. */
static int64_t run_text(const char *name, const char *text, size_t len) {
    struct scenario s;
    struct scn_error err;
    scenario_init(&s);
    if (scenario_parse(&s, name, text, len, &err) != 0) {
        scenario_close(&s);
        return -1;
    }
    struct engine *e;
    struct engine_opts o = {.algo = NULL, .keep_trace = 0, .lenient_options = 0};
    int rc = engine_new(&e, &s, &o, &err);
    scenario_close(&s);
    if (rc != 0) return -1;
    int64_t n = (int64_t)engine_run(e);
    engine_free(e);
    return n;
}

static int cmd_runcost(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage, stderr);
        return 64;
    }
    char *locksim = argv[0], *scen = argv[1];
    int runs = 300;
    char **floor_argv = NULL;
    int i = 2;
    char **catalog = NULL;
    int ncat = 0;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--floor") && i + 1 < argc) {
            floor_argv = &argv[i + 1];
            while (i < argc && strcmp(argv[i], "--")) i++;
            if (i == argc) {
                fputs(usage, stderr);
                return 64;
            }
            argv[i] = NULL; /* terminates floor_argv */
        } else {
            catalog = &argv[i];
            ncat = argc - i;
            break;
        }
    }
    if (runs < 5) runs = 5;

    /* Whole process: fork, exec, parse, run, print the report, exit. */
    char *rargv[] = {locksim, "run", scen, "--no-color", NULL};
    double *wall = calloc((size_t)runs, sizeof *wall), *fwall = calloc((size_t)runs, sizeof *fwall);
    double *flt = calloc((size_t)runs, sizeof *flt), *fflt = calloc((size_t)runs, sizeof *fflt);
    if (!wall || !fwall || !flt || !fflt) return 70;
    long peak = 0, fpeak = 0;
    int failed = 0;
    for (int r = 0; r < runs; r++) { /* interleaved with the floor program, if any */
        struct sp_result res;
        if (sp_run(rargv, 0, &res) != 0 || !res.exited || res.status != 0) failed++;
        wall[r] = res.wall_s;
        flt[r] = (double)res.minflt;
        if (res.maxrss_kib > peak) peak = res.maxrss_kib;
        if (floor_argv) {
            if (sp_run(floor_argv, 0, &res) != 0 || !res.exited || res.status != 0) failed++;
            fwall[r] = res.wall_s;
            fflt[r] = (double)res.minflt;
            if (res.maxrss_kib > fpeak) fpeak = res.maxrss_kib;
        }
    }
    if (failed) {
        fprintf(stderr, "bench: %d of the runs exited with an error\n", failed);
        return 1;
    }
    size_t nr = (size_t)runs;
    sp_median(wall, nr);
    printf("run cost, whole process (fork + exec + parse + run + report + exit), %d runs:\n\n", runs);
    printf("| command | median ms | p10 ms | p90 ms | min ms | page faults (median) | peak RSS MiB |\n"
           "|---|---:|---:|---:|---:|---:|---:|\n");
    printf("| `locksim run %s --no-color` | **%.3f** | %.3f | %.3f | %.3f | %.0f | %.1f |\n", scen,
           1e3 * sp_quantile_sorted(wall, nr, 0.5), 1e3 * sp_quantile_sorted(wall, nr, 0.1),
           1e3 * sp_quantile_sorted(wall, nr, 0.9), 1e3 * wall[0], sp_median(flt, nr), (double)peak / 1024.0);
    if (floor_argv) {
        sp_median(fwall, nr);
        printf("| `%s", floor_argv[0]);
        for (char **a = floor_argv + 1; *a; a++) printf(" %s", *a);
        printf("` (floor) | %.3f | %.3f | %.3f | %.3f | %.0f | %.1f |\n", 1e3 * sp_quantile_sorted(fwall, nr, 0.5),
               1e3 * sp_quantile_sorted(fwall, nr, 0.1), 1e3 * sp_quantile_sorted(fwall, nr, 0.9), 1e3 * fwall[0],
               sp_median(fflt, nr), (double)fpeak / 1024.0);
    }
    printf("\n(page faults: the child's minor faults from wait4's rusage, each a fresh page touched)\n");
    free(wall);
    free(fwall);
    free(flt);
    free(fflt);

    /* In process: the catalog, parse + build + run + free, rounds until 1.5 s. */
    if (ncat == 0) return 0;
    char **texts = calloc((size_t)ncat, sizeof *texts);
    size_t *lens = calloc((size_t)ncat, sizeof *lens);
    double *spent = calloc((size_t)ncat, sizeof *spent);
    int64_t *events = calloc((size_t)ncat, sizeof *events);
    if (!texts || !lens || !spent || !events) return 70;
    for (int k = 0; k < ncat; k++)
        if (read_file(catalog[k], &texts[k], &lens[k]) != 0) {
            fprintf(stderr, "bench: cannot read %s\n", catalog[k]);
            return 66;
        }
    long total_runs = 0, rounds = 0;
    double t0 = sp_now_s(), t = t0;
    while (t - t0 < 1.5 || rounds < 3) {
        for (int k = 0; k < ncat; k++) {
            double a = sp_now_s();
            int64_t n = run_text(catalog[k], texts[k], lens[k]);
            double b = sp_now_s();
            if (n < 0) {
                fprintf(stderr, "bench: %s does not parse or build\n", catalog[k]);
                return 1;
            }
            events[k] = n;
            spent[k] += b - a;
            total_runs++;
        }
        rounds++;
        t = sp_now_s();
    }
    printf("\nrun cost, in process (parse + engine_new + engine_run + free, trace not kept), %d scenarios x %ld "
           "rounds:\n\n",
           ncat, rounds);
    printf("| scenario | events | us per run |\n|---|---:|---:|\n");
    for (int k = 0; k < ncat; k++)
        printf("| %s | %" PRId64 " | %.1f |\n", catalog[k], events[k], 1e6 * spent[k] / (double)rounds);
    printf("\ncatalog: **%.0f runs/s** in process (%ld runs in %.2f s, one core)\n", (double)total_runs / (t - t0),
           total_runs, t - t0);
    for (int k = 0; k < ncat; k++) free(texts[k]);
    free(texts);
    free(lens);
    free(spent);
    free(events);
    return 0;
}

/* ---- resim: what a click in the window costs ----------------------------- */

/* A fault clicked in the window (or the page) re-runs the scenario and shows
 * it again: parse, run keeping the trace, the view model's layouts, the
 * whole run's scenes at 1280 px. Per catalog scenario, the median of K such
 * re-simulations, against the run alone (trace not kept) in the same loop. */
static int cmd_resim(int argc, char **argv) {
    int runs = 20, first = 0;
    if (argc >= 2 && !strcmp(argv[0], "--runs")) {
        runs = atoi(argv[1]);
        first = 2;
    }
    int n = argc - first;
    if (n <= 0 || runs <= 0) {
        fputs(usage, stderr);
        return 64;
    }
    double *whole = calloc((size_t)n, sizeof *whole), *alone = calloc((size_t)n, sizeof *alone);
    double *t = calloc((size_t)runs, sizeof *t), *u = calloc((size_t)runs, sizeof *u);
    int rc = whole && alone && t && u ? 0 : 1, over = 0;
    const char *worst = "";
    double worst_ms = 0;
    for (int i = 0; i < n && !rc; i++) {
        char *text;
        size_t len;
        if (read_file(argv[first + i], &text, &len) != 0) {
            fprintf(stderr, "bench: cannot read %s\n", argv[first + i]);
            rc = 1;
            break;
        }
        for (int k = 0; k < runs && !rc; k++) {
            double a = (1e3 * sp_now_s());
            struct run_spec spec = {.file = argv[first + i], .text = text, .len = len, .keep_trace = 1};
            struct run_result r;
            if (run_scenario(&spec, &r) != 0) rc = 1;
            const struct trace *tr = rc ? NULL : engine_trace(r.engine);
            struct viewmodel vm;
            memset(&vm, 0, sizeof vm);
            if (!rc && viewmodel_load(&vm, &tr, NULL, 1, 1, 0) != 0) rc = 1;
            vm.vs.show_all = 1;
            if (!rc && viewmodel_update(&vm, 1280, 600) < 0) rc = 1;
            viewmodel_close(&vm);
            run_result_close(&r);
            double b = (1e3 * sp_now_s());
            struct run_spec bare = {.file = argv[first + i], .text = text, .len = len};
            if (run_scenario(&bare, &r) != 0) rc = 1;
            run_result_close(&r);
            t[k] = b - a;
            u[k] = (1e3 * sp_now_s()) - b;
        }
        free(text);
        sp_sort(t, (size_t)runs);
        sp_sort(u, (size_t)runs);
        whole[i] = t[runs / 2];
        alone[i] = u[runs / 2];
        over += whole[i] > 50;
        if (whole[i] > worst_ms) {
            worst_ms = whole[i];
            worst = argv[first + i];
        }
    }
    if (!rc) {
        double sw = 0, sa = 0;
        for (int i = 0; i < n; i++) sw += whole[i], sa += alone[i];
        sp_sort(whole, (size_t)n);
        printf("resim: a click's re-simulation (run + trace kept + layouts + the whole run's scenes at 1280 px), "
               "median of %d per scenario, %d catalog scenarios:\n",
               runs, n);
        printf("  median %.2f ms, p95 %.2f ms, worst %.2f ms (%s); %d over 50 ms (target: under 50 ms)\n", whole[n / 2],
               whole[(int)(n * 0.95)], worst_ms, worst, over);
        printf("  same run: the run alone, trace not kept: %.2f ms a scenario on average; the click costs %.1fx that\n",
               sa / n, sa > 0 ? sw / sa : 0.0);
    }
    free(whole), free(alone), free(t), free(u);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage, stderr);
        return 64;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "child")) return cmd_child(argc - 2, argv + 2);
    if (!strcmp(cmd, "throughput")) return cmd_throughput(argc - 2, argv + 2);
    if (!strcmp(cmd, "memory")) return cmd_memory(argc - 2, argv + 2);
    if (!strcmp(cmd, "runcost")) return cmd_runcost(argc - 2, argv + 2);
    if (!strcmp(cmd, "resim")) return cmd_resim(argc - 2, argv + 2);
    fputs(usage, stderr);
    return 64;
}
