/* `locksim matrix`: one fault script against every algorithm asked, one
 * row each, as text, CSV or JSON. A --set key that no algorithm of the
 * matrix has is an error; one that some rows do not use is noted there. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "fmt.h"

#define MATRIX_MAX 64


/* Which --set keys (lock options) did this row drop? */
static void note_dropped(struct report_matrix_row *row, const char *dropped, const struct cli_runopts *ro) {
    size_t len = 0;
    row->dropped[0] = '\0';
    for (int i = 0; i < ro->nsets; i++) {
        const char *kv = ro->sets[i];
        if (strncmp(kv, "lock.", 5) == 0) kv += 5;
        size_t klen = strcspn(kv, "=");
        if (run_word_in_list(dropped, kv, klen) && len + klen + 2 < sizeof row->dropped)
            len += (size_t)snprintf(row->dropped + len, sizeof row->dropped - len, "%s%.*s", len ? " " : "", (int)klen,
                                    kv);
    }
}

/* Is the i-th name of --algos a path (a plugin)? */
static int is_plugin_row(const char *algos, int i) {
    if (strcmp(algos, "all") == 0) return 0;
    const char *p = algos;
    for (int k = 0; k < i && p; k++) p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
    if (!p) return 0;
    size_t l = strcspn(p, ",");
    return memchr(p, '/', l) != NULL;
}

/* Run a plugin's row first in a child process: 1 (with why) when it dies
 * there, of a signal or past its time limit; 0 when it finished, and the
 * parent can run it (again, the same run: it is deterministic). */
static int row_dies(const struct run_spec *spec, const struct cli_runopts *ro, char *why, size_t n) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return 0; /* run it here, unprotected */
    if (pid == 0) {
        struct run_result r;
        cli_time_limit_arm(ro, 1);
        run_scenario(spec, &r);
        _exit(0);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return 0;
    if (!WIFSIGNALED(st)) return 0;
    int sig = WTERMSIG(st);
    if (sig == SIGALRM)
        snprintf(why, n,
                 "the algorithm did not finish within the time limit (--time-limit; a callback that never returns?)");
    else snprintf(why, n, "the algorithm crashed: signal %d (%s)", sig, strsignal(sig));
    return 1;
}

static void free_kept(struct run_result *kept, int n) {
    for (int i = 0; kept && i < n; i++)
        if (kept[i].engine) run_result_close(&kept[i]);
    free(kept);
}

/* --render: one panel per row that ran, stacked on one time axis. */
static int render_panels(const char *path, int svg, const char *file, const struct run_result *kept, int n,
                         const struct cli_runopts *ro) {
    const struct trace **trs = calloc((size_t)n, sizeof *trs);
    struct cli_banner *cbs = calloc((size_t)n, sizeof *cbs);
    struct scene_banner *bs = calloc((size_t)n, sizeof *bs);
    int np = 0, st = 0;
    if (!trs || !cbs || !bs) st = cli_fail(LSIM_ENOMEM, "");
    for (int i = 0; i < n && !st; i++) {
        if (!kept[i].engine) continue;
        struct report_ctx c = {.file = file, .algo = kept[i].algo->name, .sets = ro->sets, .nsets = ro->nsets};
        if (cli_banner_fill(&cbs[np], &kept[i], &c) != 0) {
            st = cli_fail(LSIM_ENOMEM, "out of memory writing the replay line");
            break;
        }
        bs[np] = cbs[np].b;
        trs[np++] = engine_trace(kept[i].engine);
    }
    if (!st && np == 0) st = cli_fail(LSIM_EUSAGE, "--render: no algorithm of the matrix could run the script");
    if (!st) {
        struct scene_view v;
        scene_view_pixels(&v, 1280, 0);
        st = cli_write_picture(path, svg, strcmp(file, "-") ? file : NULL, trs, (size_t)np, bs, &v);
    }
    free(trs);
    free(cbs);
    free(bs);
    return st;
}

struct matrix_cmd {
    struct cli_runopts ro;
    const char *algos, *format, *file, *render;
};

enum { OPT_ALGOS = CLI_OPT_OWN, OPT_ALGO_ONE, OPT_RENDER, OPT_FORMAT };
static const struct option matrix_options[] = {
        {"algos", required_argument, NULL, OPT_ALGOS},
        {"algo", no_argument, NULL, OPT_ALGO_ONE}, /* before the shared --algo: refused with a hint */
        {"render", required_argument, NULL, OPT_RENDER},
        {"format", required_argument, NULL, OPT_FORMAT},
        {NULL, 0, NULL, 0},
};
const struct option *const cli_tables_matrix[] = {matrix_options, NULL};

/* matrix's arguments: 0, -1 after --help, or the exit status. (--no-color
 * is taken: the matrix is plain text already.) */
static int parse_matrix_args(struct matrix_cmd *o, int argc, char **argv) {
    struct cli_getopt g;
    o->algos = "all", o->format = "text";
    int st = cli_getopt_init_tables(&g, "matrix", cli_usage_matrix, &o->ro, cli_tables_matrix, argc, argv);
    for (int c; st == 0 && (c = cli_getopt_next(&g)) != CLI_OPT_END;) {
        if (c == CLI_OPT_STOP) st = g.status;
        else if (c == OPT_ALGO_ONE) st = cli_usage("matrix takes --algos NAME,NAME,... (or all), not --algo");
        else if (c == OPT_ALGOS) o->algos = g.arg;
        else if (c == OPT_RENDER) o->render = g.arg;
        else if (c == OPT_FORMAT) o->format = g.arg;
        else if (!o->file) o->file = g.arg;
        else st = cli_usage("matrix takes one scenario file; '%s' is a second", g.arg);
    }
    cli_getopt_close(&g);
    return st;
}

int cmd_matrix(int argc, char **argv) {
    struct matrix_cmd o;
    memset(&o, 0, sizeof o);
    int st = parse_matrix_args(&o, argc, argv);
    if (st) return st < 0 ? 0 : st;
    struct cli_runopts ro = o.ro;
    const char *algos = o.algos, *format = o.format, *file = o.file, *render = o.render;
    if (!file) return cli_usage("matrix needs a scenario file: locksim matrix FILE");
    enum report_format mf;
    if ((st = cli_format("matrix", format, &mf)) != 0) return st;
    format = report_format_name(mf); /* text, jsonl or csv from here on */
    int svg = 0;
    if (render && (st = cli_picture_format(render, NULL, &svg)) != 0) return st;
    const struct lock_algo *list[MATRIX_MAX];
    int n;
    if ((st = cli_parse_algos(algos, list, NULL, MATRIX_MAX, &n)) != 0) return st;
    /* --render keeps each row's run (and trace) for the picture. */
    struct run_result *kept = render ? calloc((size_t)n, sizeof *kept) : NULL;
    if (render && !kept) return cli_fail(LSIM_ENOMEM, "");

    struct report_matrix_row *rows = calloc((size_t)n, sizeof *rows);
    struct scenario shown; /* the scenario's header facts, for the text heading */
    scenario_init(&shown);
    if (!rows) return cli_fail(LSIM_ENOMEM, "");
    int ran = 0;
    for (int i = 0; i < n; i++) {
        rows[i].algo = list[i];
        struct run_spec spec = {.file = file,
                                .seed = ro.seed,
                                .sets = ro.sets,
                                .nsets = ro.nsets,
                                .algo_resolved = list[i],
                                .keep_trace = render != NULL,
                                .lenient_sets = 1};
        struct run_result r;
        char died[200];
        if (is_plugin_row(algos, i) && row_dies(&spec, &ro, died, sizeof died)) {
            /* A plugin that crashes or hangs fails its own row. */
            memset(&rows[i].sum, 0, sizeof rows[i].sum);
            rows[i].sum.rc = LSIM_EPLUGIN;
            rows[i].sum.outcome = LSIM_EPLUGIN;
            snprintf(rows[i].sum.error, sizeof rows[i].sum.error, "%s", died);
            if (!(rows[i].sum.failures = strdup(""))) {
                for (int k = 0; k < i; k++) report_summary_close(&rows[k].sum);
                free(rows);
                free_kept(kept, i);
                return cli_fail(LSIM_ENOMEM, "");
            }
            continue;
        }
        cli_time_limit_arm(&ro, 0);
        int rc = run_scenario(&spec, &r);
        cli_time_limit_disarm();
        if (rc && (r.stage == RUN_STAGE_LOAD || r.stage == RUN_STAGE_SET)) {
            /* The file or an override is wrong for every row alike. */
            st = cli_fail(rc, r.error);
            run_result_close(&r);
            for (int k = 0; k < i; k++) report_summary_close(&rows[k].sum);
            free(rows);
            free_kept(kept, i);
            return st;
        }
        if (report_summarize(&rows[i].sum, file, &r, 0) != 0) {
            run_result_close(&r);
            for (int k = 0; k < i; k++) report_summary_close(&rows[k].sum);
            free(rows);
            free_kept(kept, i);
            return cli_fail(LSIM_ENOMEM, "");
        }
        if (!rc) {
            note_dropped(&rows[i], engine_dropped_options(r.engine), &ro);
            if (!ran) {
                const struct scenario *es = r.scn;
                snprintf(shown.title, sizeof shown.title, "%s", es->title);
                shown.seed = es->seed;
                shown.stock = es->stock;
                shown.fencing = es->fencing;
                shown.purpose = es->purpose;
            }
            ran++;
        }
        if (kept && !rc) kept[i] = r;
        else run_result_close(&r);
    }
    /* A --set lock option that no row could use is a typo, not a knob. */
    for (int k = 0; k < ro.nsets && ran; k++) {
        const char *kv = ro.sets[k];
        if (strncmp(kv, "lock.", 5) == 0) kv += 5;
        size_t klen = strcspn(kv, "=");
        int users = 0;
        for (int i = 0; i < n; i++) {
            if (rows[i].sum.rc) continue;
            users += !run_word_in_list(rows[i].dropped, kv, klen);
        }
        if (users == 0) {
            st = cli_usage("--set %s: no algorithm of this matrix has the option '%.*s'; `locksim help run` "
                           "and docs/algorithms.md list the options",
                           ro.sets[k], (int)klen, kv);
            for (int i = 0; i < n; i++) report_summary_close(&rows[i].sum);
            free(rows);
            free_kept(kept, n);
            return st;
        }
    }
    if (render) {
        st = render_panels(render, svg, file, kept, n, &ro);
        for (int i = 0; i < n; i++)
            if (kept[i].engine) run_result_close(&kept[i]);
        free(kept);
        kept = NULL;
        if (st || strcmp(render, "-") == 0) format = "none"; /* the picture is on stdout */
    }
    if (strcmp(format, "none") == 0) {
        /* nothing more on stdout: the picture is there, or it failed */
    } else if (strcmp(format, "csv") == 0) {
        report_csv_header(stdout);
        for (int i = 0; i < n; i++) {
            if (rows[i].sum.rc) snprintf(rows[i].sum.algo, sizeof rows[i].sum.algo, "%s", rows[i].algo->name);
            report_csv_row(stdout, &rows[i].sum);
        }
    } else if (strcmp(format, "jsonl") == 0) {
        report_matrix_json(stdout, rows, n, file, &shown);
    } else {
        report_matrix_text(stdout, rows, n, file, &shown, ro.sets, ro.nsets);
    }
    for (int i = 0; i < n; i++) report_summary_close(&rows[i].sum);
    free(rows);
    scenario_close(&shown);
    if (st) return st;
    if (fflush(stdout) != 0) return cli_fail(LSIM_EOUTPUT, "cannot write to standard output");
    return 0;
}
