/* Runs on forked workers, delivered in list order (fanout.h). One pipe per
 * worker carries records: a header, the summary packed, its failure text. */
#define _GNU_SOURCE /* F_SETPIPE_SZ (Linux): without it the pipe keeps its size */
#include "fanout.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h> /* mallopt */
#endif
#include <fcntl.h>
#include <stddef.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "scenario_file.h"

#define FANOUT_MAX_JOBS 256

/* The signals that stop a list: Ctrl-C, and what scancel, timeout, systemd
 * and a closed terminal send. */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NSTOP ((int)(sizeof stop_signals / sizeof *stop_signals))

/* ---- Shared options -------------------------------------------------------- */

void fanout_opts_init(struct fanout_opts *o) {
    memset(o, 0, sizeof *o);
    o->jobs = sysconf(_SC_NPROCESSORS_ONLN);
}

int fanout_take_opt(struct fanout_opts *o, int argc, char **argv, int *i, int *status) {
    int took = cli_take_runopt(&o->ro, argc, argv, i, status);
    if (took) return took;
    const char *a = argv[*i];
    if (*i + 1 >= argc) return 0;
    if (strcmp(a, "--seeds") == 0) {
        if (cli_parse_seeds(argv[++*i], &o->seed_lo, &o->seed_hi) != 0) {
            *status = cli_usage("--seeds takes A..B (A <= B) or N, not '%s'", argv[*i]);
            return -1;
        }
        o->has_seeds = 1;
    } else if (strcmp(a, "--algos") == 0) o->algos = argv[++*i];
    else if (strcmp(a, "--shard") == 0) {
        const char *v = argv[++*i], *sl = strchr(v, '/');
        char k[32];
        long n = 0;
        int ok = sl && sl > v && (size_t)(sl - v) < sizeof k;
        if (ok) snprintf(k, sizeof k, "%.*s", (int)(sl - v), v);
        ok = ok && cli_parse_int(sl + 1, 1, 1000000, &n) == 0 && cli_parse_int(k, 1, n, &o->shard_k) == 0;
        if (!ok) {
            *status = cli_usage("--shard takes K/N with 1 <= K <= N (e.g. --shard 2/3 runs the second of three slices), not '%s'", v);
            return -1;
        }
        o->shard_n = n;
    }
    else if (strcmp(a, "--jobs") == 0) {
        if (cli_parse_int(argv[++*i], 1, FANOUT_MAX_JOBS, &o->jobs) != 0) {
            *status = cli_usage("--jobs takes a number from 1 to %d, not '%s'", FANOUT_MAX_JOBS, argv[*i]);
            return -1;
        }
    } else return 0;
    return 1;
}

int fanout_opts_apply(struct fanout_opts *o, const char *cmd, struct fanout *f) {
    if (o->has_seeds && o->ro.seed) return cli_usage("%s takes --seeds A..B or --seed N, not both", cmd);
    if (o->algos && o->ro.algo) return cli_usage("%s takes --algos NAME,... or --algo NAME, not both", cmd);
    int st;
    if (o->algos && (st = cli_parse_algos(o->algos, o->algo, o->algo_name, FANOUT_MAX_ALGOS, &o->nalgos)) != 0)
        return st;
    for (int k = 0; k < o->nalgos; k++) o->algo_reg[k] = o->algo[k]->name;
    f->algo = o->algo;
    f->algo_name = o->algo_name;
    f->algo_reg = o->algo_reg;
    f->nalgos = o->nalgos;
    f->seed_lo = o->seed_lo;
    f->seed_hi = o->seed_hi;
    f->has_seeds = o->has_seeds;
    f->seed = o->ro.seed;
    f->algo_default = o->ro.algo;
    f->sets = o->ro.sets;
    f->nsets = o->ro.nsets;
    f->lenient_sets = o->nalgos > 1;
    f->time_limit_s = o->ro.time_limit_s;
    f->jobs = (int)(o->jobs < 1 ? 1 : o->jobs);
    f->progress = isatty(2);
    f->progress_clears = f->progress && isatty(1);
    f->name = cmd;
    f->shard_k = (int)o->shard_k;
    f->shard_n = (int)o->shard_n;
    return 0;
}

void fanout_axis_free(struct fanout_axis *a) {
    for (int i = 0; i < a->n; i++) free(a->vals[i]);
    free(a->vals);
    memset(a, 0, sizeof *a);
}

int fanout_axis_push(struct fanout_axis *a, const char *v, size_t len) {
    char **nv = realloc(a->vals, (size_t)(a->n + 1) * sizeof *nv);
    if (!nv) return -1;
    a->vals = nv;
    if (!(a->vals[a->n] = strndup(v, len))) return -1;
    a->n++;
    return 0;
}

int fanout_set_axes(struct fanout *f, const struct fanout_axis *ax, int naxes, char ***cell_sets) {
    int ncells = ax[0].n * (naxes > 1 ? ax[1].n : 1);
    char **cs = calloc((size_t)ncells * (size_t)naxes, sizeof *cs);
    *cell_sets = cs;
    if (!cs) return LSIM_ENOMEM;
    f->cell_sets = (const char *const *)cs;
    f->ncells = ncells;
    f->cell_nsets = naxes;
    for (int c = 0; c < ncells; c++)
        for (int k = 0; k < naxes; k++) {
            const char *v = ax[k].vals[k == 0 ? c % ax[0].n : c / ax[0].n];
            size_t l = strlen(ax[k].key) + strlen(v) + 2;
            char *kv = malloc(l);
            if (!kv) return LSIM_ENOMEM;
            snprintf(kv, l, "%s=%s", ax[k].key, v);
            cs[(size_t)c * (size_t)naxes + (size_t)k] = kv;
        }
    return 0;
}

void fanout_opts_close(struct fanout_opts *o) {
    for (int k = 0; k < o->nalgos; k++) free(o->algo_name[k]);
    o->nalgos = 0;
}

static size_t nseeds(const struct fanout *f) {
    return f->has_seeds ? (size_t)(f->seed_hi - f->seed_lo + 1) : 1;
}
static size_t nalgos(const struct fanout *f) { return f->nalgos ? (size_t)f->nalgos : 1; }
static size_t ncells(const struct fanout *f) { return f->ncells ? (size_t)f->ncells : 1; }
/* Runs per cell. */
static size_t per_cell(const struct fanout *f) { return (size_t)f->nfiles * nalgos(f) * nseeds(f); }

size_t fanout_total(const struct fanout *f) { return ncells(f) * per_cell(f); }
void fanout_range(const struct fanout *f, size_t *lo, size_t *hi) {
    size_t t = fanout_total(f);
    *lo = 0;
    *hi = t;
    if (f->shard_n > 0 && !f->preloaded) {
        *lo = t * (size_t)(f->shard_k - 1) / (size_t)f->shard_n;
        *hi = t * (size_t)f->shard_k / (size_t)f->shard_n;
    }
}
int fanout_cell(const struct fanout *f, size_t i) { return (int)(i / per_cell(f)); }
int fanout_file(const struct fanout *f, size_t i) { return (int)(i % per_cell(f) / nseeds(f) / nalgos(f)); }
int fanout_algo(const struct fanout *f, size_t i) { return f->nalgos ? (int)(i / nseeds(f) % nalgos(f)) : -1; }
unsigned long long fanout_seed(const struct fanout *f, size_t i) { return f->seed_lo + i % nseeds(f); }

void fanout_label(char *buf, size_t n, const struct fanout *f, size_t i) {
    char seed[32] = "(the scenario's)";
    if (f->has_seeds) snprintf(seed, sizeof seed, "%llu", fanout_seed(f, i));
    else if (f->seed) snprintf(seed, sizeof seed, "%s", f->seed);
    int a = fanout_algo(f, i);
    size_t l = (size_t)snprintf(buf, n, "%s seed %s algo %s", f->files[fanout_file(f, i)], seed,
                                a >= 0 ? f->algo_name[a] : f->algo_default ? f->algo_default : "(the scenario's)");
    const char *const *cs = f->cell_sets ? f->cell_sets + (size_t)fanout_cell(f, i) * (size_t)f->cell_nsets : NULL;
    for (int k = 0; cs && k < f->cell_nsets && l < n; k++)
        l += (size_t)snprintf(buf + l, n - l, "%s%s", k ? " " : " set ", cs[k]);
}

void fanout_replay(char *buf, size_t n, const struct fanout *f, size_t i) {
    FILE *m = fmemopen(buf, n, "w");
    if (!m) {
        snprintf(buf, n, "%s", "locksim run ...");
        return;
    }
    setvbuf(m, NULL, _IONBF, 0);
    fputs("locksim run ", m);
    report_shell_word(m, f->files[fanout_file(f, i)]);
    if (f->has_seeds) fprintf(m, " --seed %llu", fanout_seed(f, i));
    else if (f->seed) fprintf(m, " --seed %s", f->seed);
    for (int k = 0; k < f->nsets; k++) {
        fputs(" --set ", m);
        report_shell_word(m, f->sets[k]);
    }
    const char *const *cs = f->cell_sets ? f->cell_sets + (size_t)fanout_cell(f, i) * (size_t)f->cell_nsets : NULL;
    for (int k = 0; cs && k < f->cell_nsets; k++) {
        fputs(" --set ", m);
        report_shell_word(m, cs[k]);
    }
    int a = fanout_algo(f, i);
    const char *algo = a >= 0 ? f->algo_name[a] : f->algo_default;
    if (algo) {
        fputs(" --algo ", m);
        report_shell_word(m, algo);
    }
    fclose(m);
    buf[n - 1] = '\0';
}

/* ---- Workers ---------------------------------------------------------------- */

/* One record on the pipe: this header, then len bytes of the summary packed
 * (wire_pack), then flen bytes of failure text. */
struct wire {
    uint64_t idx;
    uint32_t len;
    uint32_t flen;
};
/* A failure text is cut to this on the pipe (none comes near it): a header
 * with more, or with a summary longer than its struct, is no worker's. */
#define WIRE_MAX_FAIL ((uint32_t)1 << 26)

/* The summary's text fields are fixed-size arrays, mostly empty (the error
 * alone is 640 bytes and "" in a run that worked), and its facts are an array
 * of which nfacts are used: on the pipe each of these takes only its used
 * bytes, and everything between them goes as it is (so a field added to the
 * summary travels without a change here). A 2,120-byte summary packs to
 * about 400 bytes. In order of offset; the pointers (file, failures) go as
 * garbage and the parent sets them. */
#define WIRE_STR(field) {offsetof(struct report_summary, field), sizeof ((struct report_summary *)0)->field, 0}
static const struct wire_hole {
    size_t off, cap;
    size_t elem; /* 0 = a NUL-terminated string; else the facts, elem bytes each */
} wire_holes[] = {
    WIRE_STR(error),
    WIRE_STR(title),
    WIRE_STR(algo),
    WIRE_STR(rep.headline),
    {offsetof(struct report_summary, rep.facts), sizeof ((struct report_summary *)0)->rep.facts,
     sizeof(struct checker_fact)},
};
_Static_assert(offsetof(struct report_summary, rep.nfacts) < offsetof(struct report_summary, rep.facts),
               "the facts' count travels before them");

/* Packed size of s, at most sizeof *s. */
static size_t wire_pack(char *out, const struct report_summary *s) {
    const char *in = (const char *)s;
    size_t pos = 0, len = 0;
    for (size_t h = 0; h < sizeof wire_holes / sizeof *wire_holes; h++) {
        const struct wire_hole *w = &wire_holes[h];
        memcpy(out + len, in + pos, w->off - pos);
        len += w->off - pos;
        size_t n = w->elem ? (size_t)(s->rep.nfacts > 0 ? s->rep.nfacts : 0) * w->elem
                           : strnlen(in + w->off, w->cap - 1) + 1;
        if (n > w->cap) n = w->cap;
        memcpy(out + len, in + w->off, n);
        if (!w->elem) out[len + n - 1] = '\0'; /* a string cut at its cap still ends */
        len += n;
        pos = w->off + w->cap;
    }
    memcpy(out + len, in + pos, sizeof *s - pos);
    return len + sizeof *s - pos;
}

/* Unpack len bytes into *s; -1 when they are not a packed summary. */
static int wire_unpack(struct report_summary *s, const char *in, size_t len) {
    char *out = (char *)s;
    size_t pos = 0, got = 0;
    for (size_t h = 0; h < sizeof wire_holes / sizeof *wire_holes; h++) {
        const struct wire_hole *w = &wire_holes[h];
        if (len - got < w->off - pos) return -1;
        memcpy(out + pos, in + got, w->off - pos);
        got += w->off - pos;
        size_t n;
        if (w->elem) {
            if (s->rep.nfacts < 0 || (size_t)s->rep.nfacts * w->elem > w->cap) return -1;
            n = (size_t)s->rep.nfacts * w->elem;
        } else {
            const char *nul = memchr(in + got, '\0', len - got < w->cap ? len - got : w->cap);
            if (!nul) return -1;
            n = (size_t)(nul - (in + got)) + 1;
        }
        if (len - got < n) return -1;
        memcpy(out + w->off, in + got, n);
        memset(out + w->off + n, 0, w->cap - n);
        got += n;
        pos = w->off + w->cap;
    }
    if (len - got != sizeof *s - pos) return -1;
    memcpy(out + pos, in + got, sizeof *s - pos);
    return 0;
}

/* A worker's parsed files: each scenario file is read and parsed once per
 * worker, and every run of it starts from a copy (run_spec.parsed), as if
 * it had read the file itself. A file that does not load is not kept: each
 * of its runs reads it again and reports its own error. */
struct parsed_file {
    int state; /* 0 = not tried, 1 = parsed, -1 = failed */
    struct scenario s;
    /* A sweep: the file with the latest cell's sets applied (each param set
     * parses the text again, twice a run for two axes), for the runs of
     * that cell, which then apply only their seed. */
    int cell_state; /* 0 = none, 1 = cell_s is cell's, -1 = cell's sets fail: apply them per run */
    int cell;
    struct scenario cell_s;
};

static const struct scenario *parsed_of(struct parsed_file *cache, const char *path) {
    if (!cache) return NULL;
    if (cache->state == 0) {
        struct scn_error err;
        cache->state = scenario_load(&cache->s, path, &err) == 0 ? 1 : -1;
        if (cache->state < 0) scenario_close(&cache->s);
    }
    return cache->state > 0 ? &cache->s : NULL;
}

/* The parsed file with sets[] applied, as run_scenario's load would apply
 * them after the seed, for cell of a sweep; NULL when that cannot stand
 * for it: a set names the seed (then the seed's place among the sets
 * counts), or a set fails (each run reports its own error). */
static const struct scenario *cell_of(struct parsed_file *pf, int cell, const char *const *sets, int nsets) {
    for (int k = 0; k < nsets; k++)
        if (strncmp(sets[k], "seed=", 5) == 0) return NULL;
    if (pf->cell_state == 0 || pf->cell != cell) {
        if (pf->cell_state > 0) scenario_close(&pf->cell_s);
        pf->cell = cell;
        pf->cell_state = -1;
        if (scenario_copy(&pf->cell_s, &pf->s) != 0) return NULL;
        struct scn_error err;
        int k = 0;
        while (k < nsets && scenario_set(&pf->cell_s, sets[k], &err) == 0) k++;
        if (k < nsets) {
            scenario_close(&pf->cell_s);
            return NULL;
        }
        pf->cell_state = 1;
    }
    return pf->cell_state > 0 ? &pf->cell_s : NULL;
}

static void run_one(const struct fanout *f, size_t i, struct report_summary *sum, struct parsed_file *cache) {
    char seed[32];
    const char *sets[2 * CLI_MAX_SETS + 8];
    int nsets = 0, a = fanout_algo(f, i);
    for (int k = 0; k < f->nsets && nsets < (int)(sizeof sets / sizeof *sets); k++) sets[nsets++] = f->sets[k];
    const char *const *cs = f->cell_sets ? f->cell_sets + (size_t)fanout_cell(f, i) * (size_t)f->cell_nsets : NULL;
    for (int k = 0; cs && k < f->cell_nsets && nsets < (int)(sizeof sets / sizeof *sets); k++) sets[nsets++] = cs[k];
    snprintf(seed, sizeof seed, "%llu", fanout_seed(f, i));
    int fi = fanout_file(f, i);
    const struct scenario *parsed = parsed_of(cache ? &cache[fi] : NULL, f->files[fi]), *cell = NULL;
    if (parsed && cs) cell = cell_of(&cache[fi], fanout_cell(f, i), sets, nsets);
    struct run_spec spec = {.file = f->files[fi],
                            .parsed = cell ? cell : parsed,
                            .sets_applied = cell != NULL,
                            .seed = f->has_seeds ? seed : f->seed,
                            .sets = sets,
                            .nsets = nsets,
                            .algo = a < 0 ? f->algo_default : NULL,
                            .algo_resolved = a < 0 ? NULL : f->algo[a],
                            .lenient_sets = f->lenient_sets};
    struct run_result r;
    run_scenario(&spec, &r);
    if (run_cannot_run(&r, spec.algo || spec.algo_resolved)) r.rc = LSIM_ESKIPPED; /* a row skipped, said why */
    if (report_summarize(sum, spec.file, &r, 1) != 0) {
        memset(sum, 0, sizeof *sum);
        sum->rc = sum->outcome = LSIM_ENOMEM;
        snprintf(sum->error, sizeof sum->error, "%s", lsim_strerror(LSIM_ENOMEM));
    }
    run_result_close(&r);
}

/* Write all n bytes (the parent may read them in pieces). */
static int write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Close every descriptor from fd up. */
static void closefrom_(int fd) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    if (close_range((unsigned)fd, ~0u, 0) == 0) return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    for (long k = fd; k < (max > 0 ? max : 1024); k++) close((int)k);
}

/* Worker: the runs first, first + jobs, ... of the list, one record each.
 * Records are gathered in a buffer and written whole, so the parent never
 * waits in the middle of a record while the worker computes the next run,
 * and reads many records a call. careful = write after every record, so a
 * crash is pinned on its run. */
static void worker_main(const struct fanout *f, int fd, size_t first, int careful) {
    for (int k = 0; k < NSTOP; k++) signal(stop_signals[k], SIG_DFL);
#ifdef M_TRIM_THRESHOLD
    /* Give nothing back to the system between runs: a run that frees more
     * than glibc's 128 KiB at the heap's top had it shrink the heap, and the
     * next run grow it again (97 scenarios x 1,000 seeds at --jobs 2: 2,824
     * brk calls, each shrink a TLB flush, each growth page faults). A fixed
     * trim threshold also fixes the mmap threshold at 128 KiB, which sends
     * those blocks to mmap and munmap each run instead (1,005 pairs): both
     * are raised. The heap stays at its largest run's size, as flat in the
     * number of runs as before. */
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
#endif
    static char buf[1 << 18], packed[sizeof(struct report_summary)];
    static struct report_summary sum;
    size_t len = 0, lo, total;
    fanout_range(f, &lo, &total);
    struct parsed_file *cache = calloc((size_t)f->nfiles, sizeof *cache); /* NULL: parse every run */
    for (size_t i = first; i < total; i += (size_t)f->jobs) {
        memset(&sum, 0, sizeof sum);
        /* A run past its time limit kills this worker with SIGALRM: the
         * parent fails that run, names it, and a new worker goes on. */
        struct cli_runopts limit = {.time_limit_s = f->time_limit_s};
        cli_time_limit_arm(&limit, 1);
        run_one(f, i, &sum, cache);
        cli_time_limit_disarm();
        const char *fail = sum.failures ? sum.failures : "";
        size_t flen = strlen(fail);
        struct wire w = {.idx = i, .len = (uint32_t)wire_pack(packed, &sum),
                         .flen = (uint32_t)(flen < WIRE_MAX_FAIL ? flen : WIRE_MAX_FAIL)};
        size_t rec = sizeof w + w.len + w.flen;
        if (len + rec > sizeof buf) {
            if (write_all(fd, buf, len) != 0) _exit(73);
            len = 0;
        }
        if (rec > sizeof buf) { /* a very long failure text: on its own */
            if (write_all(fd, (const char *)&w, sizeof w) != 0 || write_all(fd, packed, w.len) != 0 ||
                write_all(fd, fail, w.flen) != 0)
                _exit(73);
        } else {
            memcpy(buf + len, &w, sizeof w);
            memcpy(buf + len + sizeof w, packed, w.len);
            memcpy(buf + len + sizeof w + w.len, fail, w.flen);
            len += rec;
        }
        report_summary_close(&sum);
        if (careful && len) {
            if (write_all(fd, buf, len) != 0) _exit(73);
            len = 0;
        }
    }
    _exit(write_all(fd, buf, len) == 0 && close(fd) == 0 ? 0 : 73);
}

/* A worker as the parent sees it. Its pipe is read in large pieces into buf
 * (one read call brings a hundred records or more), and records are taken
 * from there in order, while they fit in the window. */
struct worker {
    pid_t pid;        /* 0 = not running, or reaped */
    int fd;           /* -1 = its pipe has been read to the end (or was never open) */
    int status;       /* its wait status, once reaped */
    size_t next;      /* the next run of its slice it has not reported */
    int careful;
    char *buf;        /* owned, kept across respawns: bytes read, [start, end) not yet taken */
    size_t start, end, cap;
};

static int spawn(const struct fanout *f, struct worker *w, size_t first, int careful) {
    int p[2];
    w->pid = 0;
    w->fd = -1;
    w->next = first;
    w->careful = careful;
    w->start = w->end = 0;
    size_t lo, hi;
    fanout_range(f, &lo, &hi);
    if (first >= hi) return 0;
    if (pipe(p) != 0) return -1;
#ifdef F_SETPIPE_SZ
    /* Room for the worker's whole 256 KiB buffer and more: a write then
     * seldom waits for the parent, and there are a quarter as many of them
     * (on a virtual machine each write and its wake-up cost tens of us). */
    (void)fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
#endif
    fflush(NULL); /* nothing buffered in the parent is written twice */
    pid_t parent = getpid();
    (void)parent;
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
#ifdef __linux__
        /* Die with the parent, even one killed with SIGKILL (and if it died
         * before this line, now). */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(70);
#endif
        /* Hold no descriptor but the standard ones and this pipe: a sibling's
         * pipe held open here would keep that sibling writing to a parent
         * that is gone. */
        close(p[0]);
        int keep = p[1] > 3 ? 3 : p[1];
        if (keep != p[1] && (dup2(p[1], keep) < 0 || close(p[1]) != 0)) _exit(70);
        closefrom_(keep + 1);
        worker_main(f, keep, first, careful);
    }
    close(p[1]);
    w->pid = pid;
    w->fd = p[0];
    return 0;
}

/* The whole record at the head of w's buffer: its size, with its header in
 * *h, or 0 when not all of it has been read (*need: the bytes it takes,
 * once its header is in). *broken = 1 when the header is one no worker
 * writes (then 0, and no more is needed). */
static size_t head_record(const struct worker *w, struct wire *h, size_t *need, int *broken) {
    size_t have = w->end - w->start;
    *need = sizeof *h;
    *broken = 0;
    if (have < sizeof *h) return 0;
    memcpy(h, w->buf + w->start, sizeof *h);
    if (h->len > sizeof(struct report_summary) || h->flen > WIRE_MAX_FAIL) {
        *broken = 1;
        return 0;
    }
    *need = sizeof *h + (size_t)h->len + (size_t)h->flen;
    return have >= *need ? *need : 0;
}

/* Close w's pipe and wait for the worker (kill it first when it may still
 * run); its wait status is kept. */
static void reap(struct worker *w, int kill_it) {
    if (kill_it) kill(w->pid, SIGKILL);
    close(w->fd);
    w->fd = -1;
    w->status = 0;
    waitpid(w->pid, &w->status, 0);
    w->pid = 0;
}

/* w's pipe is readable: one read into its buffer, or its end of file (the
 * worker is reaped then). Returns 0, or -1 when out of memory. */
static int fill(struct worker *w) {
    struct wire h;
    size_t need;
    int broken;
    head_record(w, &h, &need, &broken);
    if (w->start > 0 && w->end - w->start < need) { /* keep the unread bytes at the front */
        memmove(w->buf, w->buf + w->start, w->end - w->start);
        w->end -= w->start;
        w->start = 0;
    }
    size_t want = w->cap ? w->cap : (size_t)1 << 18;
    while (want < need || want - w->end < 4096) want *= 2;
    if (want != w->cap) {
        char *b = realloc(w->buf, want);
        if (!b) return -1;
        w->buf = b;
        w->cap = want;
    }
    ssize_t k;
    do k = read(w->fd, w->buf + w->end, w->cap - w->end);
    while (k < 0 && errno == EINTR);
    if (k > 0) {
        w->end += (size_t)k;
        return 0;
    }
    reap(w, 0); /* the end (or a broken pipe): the worker has finished or died */
    return 0;
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
    case SIGALRM: return "SIGALRM: the run passed its --time-limit";
    default: return "a signal";
    }
}

/* ---- The parent ---------------------------------------------------------------- */

/* The reorder window: runs are delivered in list order, and those that
 * arrive ahead of the next one wait in a ring of WINDOW_MIN (or more, with
 * many jobs) slots. A worker is read only while its next run fits in the
 * window, so one that runs ahead blocks on its pipe instead of the parent
 * holding its results: memory stays flat in the number of runs. The slots
 * and their failure-text buffers are reused: no allocation per run. */
#define WINDOW_MIN 256

struct slot {
    int full;
    struct report_summary sum; /* the summary delivered (its pointers set here) */
    char *fail;        /* owned: failure-text buffer, reused */
    size_t fail_cap;
};

struct order {
    const struct fanout *f;
    struct slot *ring;               /* window slots, run i at (i - lo) & (window - 1) */
    size_t window;                   /* a power of two, at least the jobs */
    size_t lo, hi;                   /* fanout_range() */
    size_t next;                     /* next run to deliver */
    size_t done;
    fanout_sink sink;
    void *arg;
    int stopped;                     /* the sink said stop */
    int shown;                       /* a progress line is on the terminal the rows go to */
};

static struct slot *slot_of(struct order *o, size_t i) { return &o->ring[(i - o->lo) & (o->window - 1)]; }
static int in_window(const struct order *o, size_t i) { return i < o->next + o->window; }

/* Room for n bytes of failure text and its NUL in the slot; 0 or -1. */
static int slot_reserve(struct slot *sl, size_t n) {
    if (sl->fail && n < sl->fail_cap) return 0;
    size_t cap = sl->fail_cap ? sl->fail_cap : 64;
    while (cap <= n) cap *= 2;
    char *p = realloc(sl->fail, cap);
    if (!p) return -1;
    sl->fail = p;
    sl->fail_cap = cap;
    return 0;
}

/* Deliver every run that is next in order. all = also those after a gap
 * (the list was interrupted and the gap will not be filled). */
static void deliver_ready(struct order *o, int all) {
    for (; o->next < o->hi; o->next++) {
        struct slot *sl = slot_of(o, o->next);
        if (!sl->full) {
            if (all) continue;
            break;
        }
        struct report_summary *s = &sl->sum;
        if (o->shown) { /* a row must not start after the progress line */
            fprintf(stderr, "\r%-72s\r", "");
            o->shown = 0;
        }
        if (!o->stopped) {
            o->stopped = o->sink(o->arg, o->next, s) != 0;
            o->done++;
        }
        if (!s->failures) { /* the sink took the slot's buffer */
            sl->fail = NULL;
            sl->fail_cap = 0;
        }
        sl->full = 0;
    }
}

static volatile sig_atomic_t interrupted;
static void on_stop_signal(int sig) {
    (void)sig;
    interrupted = 1;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress(const char *name, size_t done, size_t total, double t0) {
    double dt = now_s() - t0, rate = dt > 0 ? (double)done / dt : 0;
    double eta = rate > 0 ? (double)(total - done) / rate : 0;
    fprintf(stderr, "\r%s: %zu/%zu runs, %.0f runs/s, ETA %.1fs   ", name, done, total, rate, eta);
}

/* A failed run recorded in the parent (a worker died in it). */
static int store_failure(struct order *o, size_t i, int code, const char *why) {
    const struct fanout *f = o->f;
    struct slot *sl = slot_of(o, i);
    struct report_summary *s = &sl->sum;
    memset(s, 0, sizeof *s);
    if (slot_reserve(sl, 0) != 0) return -1;
    sl->fail[0] = '\0';
    s->failures = sl->fail;
    s->file = f->files[fanout_file(f, i)];
    s->rc = s->outcome = code;
    s->judged = 1;
    s->seed = f->has_seeds ? fanout_seed(f, i) : 0;
    int a = fanout_algo(f, i);
    snprintf(s->algo, sizeof s->algo, "%s", a < 0 ? "" : f->algo[a]->name);
    snprintf(s->error, sizeof s->error, "%s", why);
    sl->full = 1;
    return 0;
}

static int is_plugin(const char *name) { return name && (strchr(name, '/') || strstr(name, ".so")); }

/* Take w's whole records that fit in the window into their slots; when its
 * pipe has ended before its slice did, see it as dead: a worker that held
 * records in its buffer is started again careful from its next run, and a
 * careful one fails that run and a new one takes the rest. Returns the
 * records taken, or -1 when out of memory or a new worker cannot be started. */
static int drain(struct order *o, struct worker *w) {
    const struct fanout *f = o->f;
    int took = 0, broken = 0;
    struct wire h;
    size_t n, need;
    while (in_window(o, w->next) && ((n = head_record(w, &h, &need, &broken)) != 0 || broken)) {
        struct slot *sl = slot_of(o, w->next); /* free: w->next is in the window, not yet stored */
        struct report_summary *s = &sl->sum;
        if (broken || h.idx != w->next || wire_unpack(s, w->buf + w->start + sizeof h, h.len) != 0) {
            /* Not a record of this worker's: stop it and see it as dead. */
            if (w->fd >= 0) reap(w, 1);
            w->start = w->end = 0;
            break;
        }
        if (slot_reserve(sl, h.flen) != 0) return -1;
        memcpy(sl->fail, w->buf + w->start + sizeof h + h.len, h.flen);
        sl->fail[h.flen] = '\0';
        s->file = f->files[fanout_file(f, w->next)];
        s->failures = sl->fail;
        s->seconds = 0; /* wall time would make the output differ run to run */
        sl->full = 1;
        w->start += n;
        w->next += (size_t)f->jobs;
        took++;
    }
    if (w->fd >= 0 || head_record(w, &h, &need, &broken) != 0 || w->next >= o->hi || interrupted) return took;
    if (!w->careful) /* it held records in its buffer: replay them one by one */
        return spawn(f, w, w->next, 1) != 0 ? -1 : took;
    char where[4400], why[640];
    int st = w->status;
    fanout_label(where, sizeof where, f, w->next);
    if (WIFSIGNALED(st))
        snprintf(why, sizeof why, "worker died with signal %d (%s) during %.500s", WTERMSIG(st),
                 signal_name(WTERMSIG(st)), where);
    else
        snprintf(why, sizeof why, "worker exited with status %d during %.500s", WEXITSTATUS(st), where);
    int a = fanout_algo(f, w->next);
    int plugin = is_plugin(a >= 0 ? f->algo_name[a] : f->algo_default);
    if (store_failure(o, w->next, plugin ? LSIM_EPLUGIN : LSIM_EINTERNAL, why) != 0) return -1;
    return spawn(f, w, w->next + (size_t)f->jobs, 1) != 0 ? -1 : took + 1;
}

/* Merge: the preloaded summaries, in order, nothing run. */
static int deliver_preloaded(const struct fanout *f, fanout_sink sink, void *arg, size_t *done) {
    size_t total = fanout_total(f);
    *done = 0;
    int stop = 0;
    for (size_t i = 0; i < total; i++) {
        struct report_summary *s = &f->preloaded[i];
        s->file = f->files[fanout_file(f, i)];
        if (!stop) {
            stop = sink(arg, i, s) != 0;
            ++*done;
        }
        report_summary_close(s);
    }
    return stop ? 2 : 0;
}

int fanout_run(const struct fanout *f, fanout_sink sink, void *arg, size_t *done) {
    if (f->preloaded) return deliver_preloaded(f, sink, arg, done);
    size_t lo, hi;
    fanout_range(f, &lo, &hi);
    size_t total = hi - lo;
    struct order o = {.f = f, .sink = sink, .arg = arg, .lo = lo, .hi = hi, .next = lo};
    int jobs = f->jobs < 1 ? 1 : f->jobs > FANOUT_MAX_JOBS ? FANOUT_MAX_JOBS : f->jobs;
    struct fanout fj = *f;
    fj.jobs = (size_t)jobs > total ? (int)(total ? total : 1) : jobs;
    f = &fj;
    o.f = f;
    *done = 0;
    o.window = WINDOW_MIN;
    while (o.window < 4 * (size_t)fj.jobs) o.window *= 2;
    o.ring = calloc(o.window, sizeof *o.ring);
    if (!o.ring) return -1;
    struct worker w[FANOUT_MAX_JOBS];
    memset(w, 0, sizeof w);
    struct sigaction sa, old[NSTOP];
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal; /* no SA_RESTART: poll returns at once */
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    for (int k = 0; k < NSTOP; k++) sigaction(stop_signals[k], &sa, &old[k]);
    int failed = 0;
    double t0 = now_s(), shown = 0;
    for (int k = 0; k < f->jobs && !failed; k++) failed = spawn(f, &w[k], lo + (size_t)k, 0) != 0;
    while (!failed && !interrupted && !o.stopped) {
        /* Take what the buffers hold, as the window moves on, before waiting. */
        int took;
        do {
            took = 0;
            for (int k = 0; k < f->jobs && !failed; k++) {
                int n = drain(&o, &w[k]);
                if (n < 0) failed = 1;
                else took += n;
            }
            deliver_ready(&o, 0);
        } while (took && !failed);
        if (f->progress && now_s() - shown > 0.1) {
            progress(f->name ? f->name : "batch", o.done, total, t0);
            o.shown = f->progress_clears;
            shown = now_s();
        }
        struct pollfd pf[FANOUT_MAX_JOBS];
        int who[FANOUT_MAX_JOBS], np = 0;
        for (int k = 0; k < f->jobs; k++)
            if (w[k].fd >= 0 && in_window(&o, w[k].next)) { /* else it waits, blocked on its full pipe */
                pf[np].fd = w[k].fd;
                pf[np].events = POLLIN;
                who[np++] = k;
            }
        if (np == 0 || failed) break;
        if (poll(pf, (nfds_t)np, -1) < 0) {
            if (errno == EINTR) continue;
            failed = 1;
            break;
        }
        for (int k = 0; k < np && !failed; k++)
            if (pf[k].revents) failed = fill(&w[who[k]]) != 0;
    }
    /* Stop what still runs (interrupted, or a worker could not be started). */
    for (int k = 0; k < f->jobs; k++) {
        if (w[k].pid) {
            kill(w[k].pid, SIGTERM);
            if (w[k].fd >= 0) close(w[k].fd);
            waitpid(w[k].pid, NULL, 0);
        }
        free(w[k].buf);
    }
    for (int k = 0; k < NSTOP; k++) sigaction(stop_signals[k], &old[k], NULL);
    if (f->progress) fprintf(stderr, "\r%-72s\r", "");
    deliver_ready(&o, 1);
    for (size_t k = 0; k < o.window; k++) free(o.ring[k].fail);
    free(o.ring);
    *done = o.done;
    return failed ? -1 : interrupted ? 1 : o.stopped ? 2 : 0;
}
