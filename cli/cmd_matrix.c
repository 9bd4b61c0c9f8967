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
    /* what the run made, freed by matrix_close */
    const struct lock_algo *list[MATRIX_MAX];
    int n, svg;
    struct report_matrix_row *rows; /* n */
    struct run_result *kept;        /* n, with --render: each row's run (and trace) */
    struct scenario shown;          /* the scenario's header facts, for the text heading */
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

static void matrix_close(struct matrix_cmd *o) {
    for (int i = 0; o->rows && i < o->n; i++) report_summary_close(&o->rows[i].sum);
    free(o->rows);
    free_kept(o->kept, o->n);
    scenario_close(&o->shown);
}

/* A plugin's row that crashed or hung in its child: a failed row, with why. */
static int row_died(struct report_matrix_row *row, const char *died) {
    memset(&row->sum, 0, sizeof row->sum);
    row->sum.rc = LSIM_EPLUGIN;
    row->sum.outcome = LSIM_EPLUGIN;
    snprintf(row->sum.error, sizeof row->sum.error, "%s", died);
    return (row->sum.failures = strdup("")) ? 0 : cli_fail(LSIM_ENOMEM, "");
}

/* Run row i: 0 (the row holds its summary, failed or not), or the exit
 * status when the file or an override is wrong for every row alike. */
static int matrix_run_row(struct matrix_cmd *o, int i, int *ran) {
    struct report_matrix_row *row = &o->rows[i];
    row->algo = o->list[i];
    struct run_spec spec = {.file = o->file,
                            .seed = o->ro.seed,
                            .sets = o->ro.sets,
                            .nsets = o->ro.nsets,
                            .algo_resolved = o->list[i],
                            .keep_trace = o->render != NULL,
                            .lenient_sets = 1};
    char died[200];
    if (is_plugin_row(o->algos, i) && row_dies(&spec, &o->ro, died, sizeof died)) return row_died(row, died);
    struct run_result r;
    cli_time_limit_arm(&o->ro, 0);
    int rc = run_scenario(&spec, &r);
    cli_time_limit_disarm();
    int st = 0;
    if (rc && (r.stage == RUN_STAGE_LOAD || r.stage == RUN_STAGE_SET)) st = cli_fail(rc, r.error);
    else if (report_summarize(&row->sum, o->file, &r, 0) != 0) st = cli_fail(LSIM_ENOMEM, "");
    if (st) {
        run_result_close(&r);
        return st;
    }
    if (!rc) {
        note_dropped(row, engine_dropped_options(r.engine), &o->ro);
        if (!*ran) {
            const struct scenario *es = r.scn;
            snprintf(o->shown.title, sizeof o->shown.title, "%s", es->title);
            o->shown.seed = es->seed;
            o->shown.stock = es->stock;
            o->shown.fencing = es->fencing;
            o->shown.purpose = es->purpose;
        }
        ++*ran;
    }
    if (o->kept && !rc) o->kept[i] = r;
    else run_result_close(&r);
    return 0;
}

/* A --set lock option that no row could use is a typo, not a knob. */
static int matrix_check_sets(const struct matrix_cmd *o) {
    for (int k = 0; k < o->ro.nsets; k++) {
        const char *kv = o->ro.sets[k];
        if (strncmp(kv, "lock.", 5) == 0) kv += 5;
        size_t klen = strcspn(kv, "=");
        int users = 0;
        for (int i = 0; i < o->n; i++)
            if (!o->rows[i].sum.rc) users += !run_word_in_list(o->rows[i].dropped, kv, klen);
        if (users == 0)
            return cli_usage("--set %s: no algorithm of this matrix has the option '%.*s'; `locksim help run` "
                             "and docs/algorithms.md list the options",
                             o->ro.sets[k], (int)klen, kv);
    }
    return 0;
}

/* The rows on stdout in format (text, jsonl or csv). */
static void matrix_output(struct matrix_cmd *o, const char *format) {
    struct report_matrix_row *rows = o->rows;
    if (strcmp(format, "csv") == 0) {
        report_csv_header(stdout);
        for (int i = 0; i < o->n; i++) {
            if (rows[i].sum.rc) snprintf(rows[i].sum.algo, sizeof rows[i].sum.algo, "%s", rows[i].algo->name);
            report_csv_row(stdout, &rows[i].sum);
        }
    } else if (strcmp(format, "jsonl") == 0) {
        report_matrix_json(stdout, rows, o->n, o->file, &o->shown);
    } else {
        report_matrix_text(stdout, rows, o->n, o->file, &o->shown, o->ro.sets, o->ro.nsets);
    }
}

/* Everything but the running: the file, the format, the picture's, the
 * algorithms; 0 or the exit status. */
static int matrix_prepare(struct matrix_cmd *o, enum report_format *mf) {
    int st;
    if (!o->file) return cli_usage("matrix needs a scenario file: locksim matrix FILE");
    if ((st = cli_format("matrix", o->format, mf)) != 0) return st;
    if (o->render && (st = cli_picture_format(o->render, NULL, &o->svg)) != 0) return st;
    if ((st = cli_parse_algos(o->algos, o->list, NULL, MATRIX_MAX, &o->n)) != 0) return st;
    o->rows = calloc((size_t)o->n, sizeof *o->rows);
    if (o->render) o->kept = calloc((size_t)o->n, sizeof *o->kept);
    if (!o->rows || (o->render && !o->kept)) return cli_fail(LSIM_ENOMEM, "");
    return 0;
}

int cmd_matrix(int argc, char **argv) {
    struct matrix_cmd o;
    memset(&o, 0, sizeof o);
    scenario_init(&o.shown);
    enum report_format mf = REPORT_FMT_TEXT;
    int st = parse_matrix_args(&o, argc, argv);
    if (st) {
        matrix_close(&o);
        return st < 0 ? 0 : st;
    }
    st = matrix_prepare(&o, &mf);
    const char *format = report_format_name(mf); /* text, jsonl or csv from here on */
    int ran = 0;
    for (int i = 0; i < o.n && !st; i++) st = matrix_run_row(&o, i, &ran);
    if (!st && ran) st = matrix_check_sets(&o);
    if (!st && o.render) {
        st = render_panels(o.render, o.svg, o.file, o.kept, o.n, &o.ro);
        if (st || strcmp(o.render, "-") == 0) format = NULL; /* the picture is on stdout, or it failed */
    }
    if (!st && format) matrix_output(&o, format);
    matrix_close(&o);
    if (st) return st;
    if (fflush(stdout) != 0) return cli_fail(LSIM_EOUTPUT, "cannot write to standard output");
    return 0;
}
