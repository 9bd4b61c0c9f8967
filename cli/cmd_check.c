/* `locksim check`: run scenarios (files, or every *.lsim below a folder)
 * and hold each to its `expect` lines; report as text, JSON Lines, TAP or
 * JUnit XML. A run cut short is TRUNCATED, never a pass; a file that cannot
 * run is an error in every format. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cmd_check(int argc, char **argv) {
    struct cli_runopts ro;
    memset(&ro, 0, sizeof ro);
    int quiet = 0, st = 0;
    const char *format = "text";
    struct cli_paths files = {0};
    char err[700];
    for (int i = 0; i < argc; i++) {
        int took = cli_take_runopt(&ro, argc, argv, &i, &st);
        if (took < 0) goto out;
        if (took) continue;
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0) {
            fputs(cli_usage_check, stdout);
            goto out;
        } else if (strcmp(a, "--quiet") == 0) quiet = 1;
        else if (strcmp(a, "--format") == 0 && i + 1 < argc) format = argv[++i];
        else if (a[0] == '-' && a[1]) {
            st = cli_usage("unknown or incomplete option '%s' for check", a);
            goto out;
        } else {
            int rc = cli_paths_add(&files, a, err, sizeof err);
            if (rc) {
                st = cli_fail(rc, err);
                goto out;
            }
        }
    }
    int json = strcmp(format, "json") == 0;
    if (!json && strcmp(format, "text") && strcmp(format, "tap") && strcmp(format, "junit")) {
        st = cli_usage("--format takes text, json, tap or junit, not '%s'", format);
        goto out;
    }
    if (files.n == 0) {
        st = cli_usage("check needs at least one scenario file or folder");
        goto out;
    }
    struct report_summary *sum = calloc((size_t)files.n, sizeof *sum);
    if (!sum) {
        st = cli_fail(LSIM_ENOMEM, "");
        goto out;
    }
    int passed = 0, failed = 0, expects = 0, worst = 0;
    for (int i = 0; i < files.n; i++) {
        struct run_spec spec = {.file = files.v[i], .seed = ro.seed, .sets = ro.sets, .nsets = ro.nsets,
                                .algo = ro.algo, .keep_trace = 0};
        struct run_result r;
        double t0 = now_s();
        run_scenario(&spec, &r);
        double dt = now_s() - t0;
        if (report_summarize(&sum[i], files.v[i], &r, 2) != 0) {
            run_result_close(&r);
            st = cli_fail(LSIM_ENOMEM, "");
            for (int k = 0; k <= i; k++) report_summary_close(&sum[k]);
            free(sum);
            goto out;
        }
        sum[i].seconds = dt;
        if (r.rc && !json) cli_fail(r.rc, r.error); /* on stderr at once, as the run fails */
        if (json) {
            struct report_ctx c = {.file = files.v[i], .algo = ro.algo, .sets = ro.sets, .nsets = ro.nsets};
            if (r.rc) report_json_error(stdout, files.v[i], &r);
            else report_json(stdout, &r, &c, NULL);
        }
        run_result_close(&r);
        int status = cli_exit(sum[i].outcome);
        if (status > worst) worst = status;
        expects += sum[i].nexpects;
        if (sum[i].outcome == LSIM_OK) passed++;
        else failed++;
    }
    if (strcmp(format, "text") == 0) {
        for (int i = 0; i < files.n; i++) {
            const struct report_summary *s = &sum[i];
            if (s->rc) continue; /* already on stderr */
            fputs(s->failures, stdout);
            if (!quiet || s->outcome != LSIM_OK) {
                const char *word = s->outcome == LSIM_OK ? "ok" : s->truncated ? "TRUNCATED" : "FAIL";
                printf("%-4s %s  (%s, %d expectation%s)\n", word, s->file,
                       s->truncated ? "not decided" : scn_verdict_name(s->rep.verdict), s->nexpects,
                       s->nexpects == 1 ? "" : "s");
            }
        }
        printf("scenarios: %d passed, %d failed (%d expectations)\n", passed, failed, expects);
    } else if (strcmp(format, "tap") == 0) {
        report_tap(stdout, sum, files.n);
    } else if (strcmp(format, "junit") == 0) {
        report_junit(stdout, "locksim scenarios", sum, files.n);
    }
    for (int i = 0; i < files.n; i++) report_summary_close(&sum[i]);
    free(sum);
    st = worst;
    if (fflush(stdout) != 0) st = cli_fail(LSIM_EOUTPUT, "cannot write to standard output");
out:
    cli_paths_free(&files);
    return st;
}
