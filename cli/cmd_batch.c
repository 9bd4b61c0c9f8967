/* `locksim batch`: every scenario under the paths, for every seed and
 * algorithm asked, on N forked worker processes. Results come back over one
 * pipe per worker as fixed-size records (a summary, then its failure text)
 * and are printed in run-list order whatever the finishing order, so the
 * output bytes do not depend on --jobs. A worker that dies (a crashing
 * plugin) fails the run it was in, and a new worker takes the rest of its
 * slice. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"

#define BATCH_MAX_ALGOS 64
#define BATCH_MAX_JOBS 256

/* The run list: index = (file * nalgos + algo) * nseeds + seed. */
struct batch {
    struct cli_paths files;
    const struct lock_algo *algo[BATCH_MAX_ALGOS];
    char *algo_name[BATCH_MAX_ALGOS]; /* as written; owned */
    int nalgos;                       /* 0 = each scenario's own algorithm */
    unsigned long long seed_lo, seed_hi;
    int has_seeds;                    /* 0 = each scenario's own seed */
    struct cli_runopts ro;            /* --set (and --seed/--algo shorthands) */
    size_t total;
    int jobs;
};

static size_t nseeds(const struct batch *b) { return b->has_seeds ? (size_t)(b->seed_hi - b->seed_lo + 1) : 1; }
static size_t nalgos(const struct batch *b) { return b->nalgos ? (size_t)b->nalgos : 1; }
static int run_file(const struct batch *b, size_t i) { return (int)(i / nseeds(b) / nalgos(b)); }
static int run_algo(const struct batch *b, size_t i) { return b->nalgos ? (int)(i / nseeds(b) % nalgos(b)) : -1; }
static unsigned long long run_seed(const struct batch *b, size_t i) { return b->seed_lo + i % nseeds(b); }

/* "FILE seed N algo A", as a crash message names a run. */
static void run_label(char *buf, size_t n, const struct batch *b, size_t i) {
    char seed[32] = "(the scenario's)";
    if (b->has_seeds) snprintf(seed, sizeof seed, "%llu", run_seed(b, i));
    int a = run_algo(b, i);
    snprintf(buf, n, "%s seed %s algo %s", b->files.v[run_file(b, i)], seed,
             a < 0 ? "(the scenario's)" : b->algo_name[a]);
}

/* ---- Workers ---------------------------------------------------------------- */

/* One record on the pipe: the header, then flen bytes of failure text. The
 * summary's pointers are not valid in the parent: it sets them. */
struct wire {
    uint64_t idx;
    uint32_t flen;
    struct report_summary sum;
};

static void run_one(const struct batch *b, size_t i, struct report_summary *sum) {
    char seed[32];
    int a = run_algo(b, i);
    snprintf(seed, sizeof seed, "%llu", run_seed(b, i));
    struct run_spec spec = {.file = b->files.v[run_file(b, i)],
                            .seed = b->has_seeds ? seed : b->ro.seed,
                            .sets = b->ro.sets,
                            .nsets = b->ro.nsets,
                            .algo = a < 0 ? b->ro.algo : NULL,
                            .algo_resolved = a < 0 ? NULL : b->algo[a],
                            .lenient_sets = b->nalgos > 1};
    struct run_result r;
    run_scenario(&spec, &r);
    if (report_summarize(sum, spec.file, &r, 1) != 0) {
        memset(sum, 0, sizeof *sum);
        sum->rc = sum->outcome = LSIM_ENOMEM;
        snprintf(sum->error, sizeof sum->error, "%s", lsim_strerror(LSIM_ENOMEM));
    }
    run_result_close(&r);
}

/* Worker: the runs first, first + step, ... of the list, one record each.
 * careful = flush after every record, so a crash is pinned on its run. */
static void worker_main(const struct batch *b, int fd, size_t first, size_t step, int careful) {
    signal(SIGINT, SIG_DFL);
    FILE *out = fdopen(fd, "w");
    if (!out) _exit(70);
    static char buf[1 << 16];
    setvbuf(out, buf, _IOFBF, sizeof buf);
    for (size_t i = first; i < b->total; i += step) {
        struct wire w;
        memset(&w, 0, sizeof w);
        run_one(b, i, &w.sum);
        const char *fail = w.sum.failures ? w.sum.failures : "";
        w.idx = i;
        w.flen = (uint32_t)strlen(fail);
        if (fwrite(&w, sizeof w, 1, out) != 1 || fwrite(fail, 1, w.flen, out) != w.flen) _exit(73);
        report_summary_close(&w.sum);
        if (careful && fflush(out) != 0) _exit(73);
    }
    _exit(fclose(out) == 0 ? 0 : 73);
}

struct worker {
    pid_t pid;        /* 0 = not running */
    int fd;
    size_t next;      /* the next run of its slice it has not reported */
    int careful;
};

static int spawn(const struct batch *b, struct worker *w, size_t first, int careful) {
    int p[2];
    w->pid = 0;
    w->next = first;
    w->careful = careful;
    if (first >= b->total) return 0;
    if (pipe(p) != 0) return -1;
    fflush(NULL); /* nothing buffered in the parent is written twice */
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        worker_main(b, p[1], first, (size_t)b->jobs, careful);
    }
    close(p[1]);
    w->pid = pid;
    w->fd = p[0];
    return 0;
}

/* Read exactly n bytes: n, 0 at a clean end of file, or -1 (a short record). */
static ssize_t readn(int fd, void *buf, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, (char *)buf + got, n - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return got == 0 && k == 0 ? 0 : -1;
        got += (size_t)k;
    }
    return (ssize_t)got;
}

static const char *signal_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    default: return "a signal";
    }
}

/* ---- Output ------------------------------------------------------------------ */

enum batch_format { FMT_TABLE, FMT_JSONL, FMT_CSV, FMT_JUNIT, FMT_TAP };

/* The table's current group: one scenario and algorithm over the seeds. */
struct group {
    int file, algo, open;
    size_t runs, passed;
    long long verdicts[3]; /* SAFE, UNSAFE, STUCK */
    char algo_ran[48];     /* the algorithm of its first run that ran */
    char first_failure[800];
};

struct emitter {
    const struct batch *b;
    enum batch_format fmt;
    FILE *f;
    struct report_summary **pending; /* indexed by run; owned until emitted */
    struct report_summary *kept;     /* junit, tap: every run, in order */
    size_t next;                     /* next run to emit */
    size_t done, passed;
    int worst;
    struct group g;
};

static void group_close(struct emitter *e) {
    struct group *g = &e->g;
    const struct batch *b = e->b;
    if (!g->open) return;
    char seeds[64] = "scenario's seed";
    if (b->has_seeds) snprintf(seeds, sizeof seeds, "seeds %llu..%llu", b->seed_lo, b->seed_hi);
    fprintf(e->f, "%-4s %s  %s  %s: %zu run%s, %zu passed, %zu failed; SAFE %lld, UNSAFE %lld, STUCK %lld\n",
            g->passed == g->runs ? "ok" : "FAIL", b->files.v[g->file],
            g->algo >= 0 ? b->algo_name[g->algo] : g->algo_ran[0] ? g->algo_ran : "-", seeds, g->runs, g->runs == 1 ? "" : "s",
            g->passed, g->runs - g->passed, g->verdicts[0], g->verdicts[1], g->verdicts[2]);
    if (g->first_failure[0]) fprintf(e->f, "     first failure: %s\n", g->first_failure);
    memset(g, 0, sizeof *g);
}

static void table_add(struct emitter *e, size_t i, const struct report_summary *s) {
    struct group *g = &e->g;
    int file = run_file(e->b, i), algo = run_algo(e->b, i);
    if (g->open && (g->file != file || g->algo != algo)) group_close(e);
    if (!g->open) {
        g->open = 1;
        g->file = file;
        g->algo = algo;
    }
    g->runs++;
    if (!g->algo_ran[0]) snprintf(g->algo_ran, sizeof g->algo_ran, "%s", s->algo);
    if (s->outcome == LSIM_OK) g->passed++;
    if (!s->rc && (int)s->rep.verdict >= 0 && (int)s->rep.verdict < 3) g->verdicts[s->rep.verdict]++;
    if (s->outcome != LSIM_OK && !g->first_failure[0]) {
        const char *why = s->rc ? s->error : s->failures ? s->failures : "";
        size_t l = strcspn(why, "\n");
        snprintf(g->first_failure, sizeof g->first_failure, "seed %llu: %.*s", s->seed, (int)l, why);
    }
}

static void emit_one(struct emitter *e, size_t i, struct report_summary *s) {
    const struct batch *b = e->b;
    e->done++;
    if (s->outcome == LSIM_OK) e->passed++;
    int st = cli_exit(s->outcome);
    if (st > e->worst) e->worst = st;
    switch (e->fmt) {
    case FMT_TABLE: table_add(e, i, s); break;
    case FMT_JSONL: report_json_summary(e->f, s, b->ro.sets, b->ro.nsets); break;
    case FMT_CSV: report_csv_row_sets(e->f, s, b->ro.sets, b->ro.nsets); break;
    case FMT_JUNIT:
    case FMT_TAP: {
        /* One test per run, named by its place in the list. */
        struct report_summary *k = &e->kept[e->done - 1];
        *k = *s;
        char *label = malloc(4400);
        if (label) run_label(label, 4400, b, i);
        k->file = label ? label : "";
        s->failures = NULL; /* moved to k */
        return;
    }
    }
    report_summary_close(s);
}

/* Emit every run that is next in order. all = also those after a gap (the
 * batch was interrupted and the gap will not be filled). */
static void emit_ready(struct emitter *e, int all) {
    for (; e->next < e->b->total; e->next++) {
        struct report_summary *s = e->pending[e->next];
        if (!s) {
            if (all) continue;
            break;
        }
        emit_one(e, e->next, s);
        free(s);
        e->pending[e->next] = NULL;
    }
}

/* ---- The command -------------------------------------------------------------- */

static volatile sig_atomic_t interrupted;
static void on_sigint(int sig) {
    (void)sig;
    interrupted = 1;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress(size_t done, size_t total, double t0, int last) {
    double dt = now_s() - t0, rate = dt > 0 ? (double)done / dt : 0;
    if (last) {
        fprintf(stderr, "\r%-72s\r", "");
        return;
    }
    double eta = rate > 0 ? (double)(total - done) / rate : 0;
    fprintf(stderr, "\rbatch: %zu/%zu runs, %.0f runs/s, ETA %.1fs   ", done, total, rate, eta);
}

/* Record a failed run in the parent (a worker that died in it). */
static int store_failure(struct emitter *e, size_t i, int code, const char *why) {
    struct report_summary *s = calloc(1, sizeof *s);
    if (!s) return -1;
    s->file = e->b->files.v[run_file(e->b, i)];
    s->rc = s->outcome = code;
    s->judged = 1;
    s->seed = e->b->has_seeds ? run_seed(e->b, i) : 0;
    int a = run_algo(e->b, i);
    snprintf(s->algo, sizeof s->algo, "%s", a < 0 ? "" : e->b->algo[a]->name);
    snprintf(s->error, sizeof s->error, "%s", why);
    e->pending[i] = s;
    return 0;
}

/* A worker's pipe is readable: take one record, or see it die. Returns 0,
 * or -1 when out of memory or a new worker cannot be started. */
static int take(struct emitter *e, struct worker *w) {
    const struct batch *b = e->b;
    struct wire rec;
    ssize_t k = readn(w->fd, &rec, sizeof rec);
    if (k == (ssize_t)sizeof rec && rec.idx == w->next) {
        struct report_summary *s = malloc(sizeof *s);
        char *fail = malloc((size_t)rec.flen + 1);
        if (!s || !fail || readn(w->fd, fail, rec.flen) != (ssize_t)rec.flen) {
            free(s);
            free(fail);
            if (!s || !fail) return -1;
            k = -1; /* died mid-record: below */
        } else {
            fail[rec.flen] = '\0';
            *s = rec.sum;
            s->file = b->files.v[run_file(b, rec.idx)];
            s->failures = fail;
            s->seconds = 0; /* wall time would make the bytes differ run to run */
            e->pending[rec.idx] = s;
            w->next += (size_t)b->jobs;
            return 0;
        }
    }
    /* End of file (or a broken record): the worker has finished or died. */
    int st = 0;
    close(w->fd);
    waitpid(w->pid, &st, 0);
    w->pid = 0;
    if (w->next >= b->total || interrupted) return 0;
    if (!w->careful) /* it held records in its buffer: replay them one by one */
        return spawn(b, w, w->next, 1);
    char where[4400], why[640];
    run_label(where, sizeof where, b, w->next);
    if (WIFSIGNALED(st))
        snprintf(why, sizeof why, "worker died with signal %d (%s) during %.500s", WTERMSIG(st),
                 signal_name(WTERMSIG(st)), where);
    else
        snprintf(why, sizeof why, "worker exited with status %d during %.500s", WEXITSTATUS(st), where);
    int a = run_algo(b, w->next);
    int plugin = a >= 0 ? strchr(b->algo_name[a], '/') != NULL || strstr(b->algo_name[a], ".so") != NULL
                        : b->ro.algo && (strchr(b->ro.algo, '/') || strstr(b->ro.algo, ".so"));
    if (store_failure(e, w->next, plugin ? LSIM_EPLUGIN : LSIM_EINTERNAL, why) != 0) return -1;
    return spawn(b, w, w->next + (size_t)b->jobs, 1);
}

static int parse_seeds(const char *s, struct batch *b) {
    const char *dots = strstr(s, "..");
    char lo[32];
    long a, z;
    if (!dots) {
        if (cli_parse_int(s, 0, 0x7fffffffL, &a) != 0) return -1;
        z = a;
    } else {
        if ((size_t)(dots - s) >= sizeof lo) return -1;
        snprintf(lo, sizeof lo, "%.*s", (int)(dots - s), s);
        if (cli_parse_int(lo, 0, 0x7fffffffL, &a) != 0 || cli_parse_int(dots + 2, 0, 0x7fffffffL, &z) != 0 || z < a)
            return -1;
    }
    b->seed_lo = (unsigned long long)a;
    b->seed_hi = (unsigned long long)z;
    b->has_seeds = 1;
    return 0;
}

int cmd_batch(int argc, char **argv) {
    struct batch b;
    memset(&b, 0, sizeof b);
    const char *algos = NULL, *format = "table", *out_path = "-";
    long jobs = sysconf(_SC_NPROCESSORS_ONLN);
    char err[700];
    int st = 0;
    for (int i = 0; i < argc; i++) {
        int took = cli_take_runopt(&b.ro, argc, argv, &i, &st);
        if (took < 0) goto out;
        if (took) continue;
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (strcmp(a, "--help") == 0) {
            fputs(cli_usage_batch, stdout);
            goto out;
        } else if (strcmp(a, "--seeds") == 0 && has) {
            if (parse_seeds(argv[++i], &b) != 0) {
                st = cli_usage("--seeds takes A..B (A <= B) or N, not '%s'", argv[i]);
                goto out;
            }
        } else if (strcmp(a, "--algos") == 0 && has) algos = argv[++i];
        else if (strcmp(a, "--format") == 0 && has) format = argv[++i];
        else if (strcmp(a, "--out") == 0 && has) out_path = argv[++i];
        else if (strcmp(a, "--jobs") == 0 && has) {
            if (cli_parse_int(argv[++i], 1, BATCH_MAX_JOBS, &jobs) != 0) {
                st = cli_usage("--jobs takes a number from 1 to %d, not '%s'", BATCH_MAX_JOBS, argv[i]);
                goto out;
            }
        } else if (a[0] == '-' && a[1]) {
            st = cli_usage("unknown or incomplete option '%s' for batch", a);
            goto out;
        } else if ((st = cli_paths_add(&b.files, a, err, sizeof err)) != 0) {
            st = cli_fail(st, err);
            goto out;
        }
    }
    static const char *const fmts[] = {"table", "jsonl", "csv", "junit", "tap"};
    int fmt = -1;
    for (int k = 0; k < 5; k++)
        if (strcmp(format, fmts[k]) == 0) fmt = k;
    if (fmt < 0) {
        st = cli_usage("--format takes table, jsonl, csv, junit or tap, not '%s'", format);
        goto out;
    }
    if (b.files.n == 0) {
        st = cli_usage("batch needs at least one scenario file or folder");
        goto out;
    }
    if (b.has_seeds && b.ro.seed) {
        st = cli_usage("batch takes --seeds A..B or --seed N, not both");
        goto out;
    }
    if (algos && b.ro.algo) {
        st = cli_usage("batch takes --algos NAME,... or --algo NAME, not both");
        goto out;
    }
    if (algos && (st = cli_parse_algos(algos, b.algo, b.algo_name, BATCH_MAX_ALGOS, &b.nalgos)) != 0) goto out;
    if (jobs < 1) jobs = 1;
    if (jobs > BATCH_MAX_JOBS) jobs = BATCH_MAX_JOBS;
    b.total = (size_t)b.files.n * nalgos(&b) * nseeds(&b);
    if ((size_t)jobs > b.total) jobs = (long)b.total;
    b.jobs = (int)jobs;

    struct out_file of;
    if ((st = out_open(&of, out_path, (const char *const *)b.files.v, b.files.n, err, sizeof err)) != 0) {
        st = cli_fail(st, err);
        goto out;
    }
    struct emitter e = {.b = &b, .fmt = (enum batch_format)fmt, .f = of.f};
    e.pending = calloc(b.total, sizeof *e.pending);
    if (fmt == FMT_JUNIT || fmt == FMT_TAP) e.kept = calloc(b.total, sizeof *e.kept);
    struct worker w[BATCH_MAX_JOBS];
    memset(w, 0, sizeof w);
    if (!e.pending || ((fmt == FMT_JUNIT || fmt == FMT_TAP) && !e.kept)) {
        out_abort(&of);
        free(e.pending);
        st = cli_fail(LSIM_ENOMEM, "");
        goto out;
    }
    if (fmt == FMT_CSV) report_csv_header_sets(e.f, b.ro.sets, b.ro.nsets);

    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint; /* no SA_RESTART: poll returns at once */
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    sigaction(SIGINT, &sa, &old);
    int show = isatty(2), failed_start = 0;
    double t0 = now_s(), shown = 0;
    for (int k = 0; k < b.jobs && !failed_start; k++) failed_start = spawn(&b, &w[k], (size_t)k, 0) != 0;
    while (!failed_start && !interrupted) {
        struct pollfd pf[BATCH_MAX_JOBS];
        int who[BATCH_MAX_JOBS], np = 0;
        for (int k = 0; k < b.jobs; k++)
            if (w[k].pid) {
                pf[np].fd = w[k].fd;
                pf[np].events = POLLIN;
                who[np++] = k;
            }
        if (np == 0) break;
        if (poll(pf, (nfds_t)np, -1) < 0) {
            if (errno == EINTR) continue;
            failed_start = 1;
            break;
        }
        for (int k = 0; k < np && !failed_start; k++)
            if (pf[k].revents) failed_start = take(&e, &w[who[k]]) != 0;
        emit_ready(&e, 0);
        if (show && now_s() - shown > 0.1) {
            progress(e.done, b.total, t0, 0);
            shown = now_s();
        }
    }
    /* Stop what still runs (interrupted, or a worker could not be started). */
    for (int k = 0; k < b.jobs; k++)
        if (w[k].pid) {
            kill(w[k].pid, SIGTERM);
            close(w[k].fd);
            waitpid(w[k].pid, NULL, 0);
        }
    sigaction(SIGINT, &old, NULL);
    if (show) progress(e.done, b.total, t0, 1);
    emit_ready(&e, 1);
    if (fmt == FMT_TABLE) {
        group_close(&e);
        fprintf(e.f, "%zu passed, %zu failed\n", e.passed, e.done - e.passed);
    } else if (fmt == FMT_TAP) report_tap(e.f, e.kept, (int)e.done);
    else if (fmt == FMT_JUNIT) report_junit(e.f, "locksim batch", e.kept, (int)e.done);
    for (size_t k = 0; e.kept && k < e.done; k++) {
        free((char *)e.kept[k].file);
        report_summary_close(&e.kept[k]);
    }
    free(e.kept);
    free(e.pending);
    st = e.worst;
    if (interrupted || failed_start) {
        if (of.mode == OUT_ATOMIC) out_abort(&of);
        else out_commit(&of, err, sizeof err);
        fprintf(stderr, "locksim: %s: %zu of %zu runs finished (%zu passed, %zu failed)%s\n",
                interrupted ? "interrupted" : "a worker could not be started", e.done, b.total, e.passed,
                e.done - e.passed, of.mode == OUT_ATOMIC ? "; the --out file was not written" : "");
        st = interrupted ? 130 : cli_exit(LSIM_EINTERNAL);
    } else if (out_commit(&of, err, sizeof err) != 0) st = cli_fail(LSIM_EOUTPUT, err);
out:
    for (int k = 0; k < b.nalgos; k++) free(b.algo_name[k]);
    cli_paths_free(&b.files);
    return st;
}
