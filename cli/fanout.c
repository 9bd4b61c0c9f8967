/* The run list of batch and sweep (fanout.h) on the worker pool (run/pool.h):
 * which run index i is, running it in a worker, and its summary packed as
 * the pool's record: the packed length, the summary packed, its failure text. */
#include "fanout.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "pool.h"
#include "scenario_file.h"
#include "sweep_tally.h"

#define FANOUT_MAX_JOBS POOL_MAX_JOBS

/* ---- Shared options -------------------------------------------------------- */

void fanout_opts_init(struct fanout_opts *o) {
    memset(o, 0, sizeof *o);
    o->jobs = sysconf(_SC_NPROCESSORS_ONLN);
}

const struct option fanout_run_options[] = {
        {"seeds", required_argument, NULL, FANOUT_OPT_SEEDS},
        {"algos", required_argument, NULL, FANOUT_OPT_ALGOS},
        {"jobs", required_argument, NULL, FANOUT_OPT_JOBS},
        {"shard", required_argument, NULL, FANOUT_OPT_SHARD},
        {NULL, 0, NULL, 0},
};
const struct option fanout_output_options[] = {
        {"format", required_argument, NULL, FANOUT_OPT_FORMAT},
        {"out", required_argument, NULL, 'o'},
        {"output", required_argument, NULL, 'o'},
        {NULL, 0, NULL, 0},
};
const struct option fanout_heatmap_options[] = {
        {"svg", required_argument, NULL, FANOUT_OPT_SVG},
        {"png", required_argument, NULL, FANOUT_OPT_PNG},
        {NULL, 0, NULL, 0},
};

/* --shard K/N: 0, or the exit status after a usage error. */
static int parse_shard(struct fanout_opts *o, const char *v) {
    const char *sl = strchr(v, '/');
    char k[32];
    long n = 0;
    int ok = sl && sl > v && (size_t)(sl - v) < sizeof k;
    if (ok) snprintf(k, sizeof k, "%.*s", (int)(sl - v), v);
    ok = ok && cli_parse_int(sl + 1, 1, 1000000, &n) == 0 && cli_parse_int(k, 1, n, &o->shard_k) == 0;
    if (!ok)
        return cli_usage("--shard takes K/N with 1 <= K <= N (e.g. --shard 2/3 runs the second of three slices), "
                         "not '%s'",
                         v);
    o->shard_n = n;
    return 0;
}

/* One option of fanout_run_options: 0 or the exit status. */
static int take_run_opt(struct fanout_opts *o, int c, const char *v) {
    switch (c) {
    case FANOUT_OPT_SEEDS: {
        char err[400];
        if (cli_parse_seeds(v, &o->seeds, err, sizeof err) != 0) return cli_usage("%s", err);
        o->has_seeds = 1;
        return 0;
    }
    case FANOUT_OPT_ALGOS: o->algos = v; return 0;
    case FANOUT_OPT_SHARD: return parse_shard(o, v);
    default: /* FANOUT_OPT_JOBS */
        if (cli_parse_int(v, 1, FANOUT_MAX_JOBS, &o->jobs) != 0)
            return cli_usage("--jobs takes a number from 1 to %d, not '%s'", FANOUT_MAX_JOBS, v);
        return 0;
    }
}

int fanout_take_opt(struct fanout_opts *o, struct fanout_dest *d, int c, const char *v, int *status) {
    *status = 0;
    switch (c) {
    case FANOUT_OPT_SEEDS:
    case FANOUT_OPT_ALGOS:
    case FANOUT_OPT_JOBS:
    case FANOUT_OPT_SHARD:
        if (!o) return 0;
        *status = take_run_opt(o, c, v);
        return 1;
    case FANOUT_OPT_FORMAT: d->format = v; return 1;
    case 'o': d->out = v; return 1;
    case FANOUT_OPT_SVG: d->svg = v; return 1;
    case FANOUT_OPT_PNG: d->png = v; return 1;
    default: return 0;
    }
}

int fanout_opts_apply(struct fanout_opts *o, const char *cmd, struct fanout *f) {
    if (o->has_seeds && o->ro.seed) return cli_usage("%s takes --seeds LIST or --seed N, not both", cmd);
    if (o->algos && o->ro.algo) return cli_usage("%s takes --algos NAME,... or --algo NAME, not both", cmd);
    int st;
    if (o->algos && (st = cli_parse_algos(o->algos, o->algo, o->algo_name, FANOUT_MAX_ALGOS, &o->nalgos)) != 0)
        return st;
    for (int k = 0; k < o->nalgos; k++) o->algo_reg[k] = o->algo[k]->name;
    f->algo = o->algo;
    f->algo_name = o->algo_name;
    f->algo_reg = o->algo_reg;
    f->nalgos = o->nalgos;
    f->seeds = &o->seeds;
    f->has_seeds = o->has_seeds;
    f->seed = o->ro.seed;
    f->algo_default = o->ro.algo;
    f->sets = o->ro.sets;
    f->nsets = o->ro.nsets;
    f->lenient_sets = o->nalgos > 1;
    f->time_limit_s = o->ro.time_limit_s;
    f->jobs = (int)(o->jobs < 1 ? 1 : o->jobs);
    f->progress = isatty(2) && cli_verbosity >= 0;
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

long fanout_axes_cells(const struct fanout_axis *ax, int naxes) {
    long n = 1;
    for (int k = 0; k < naxes; k++) {
        if (ax[k].n < 1 || (long long)n * ax[k].n > FANOUT_MAX_CELLS) return -1;
        n *= ax[k].n;
    }
    return n;
}

int fanout_cell_value(const struct fanout_axis *ax, int k, int c) {
    for (int j = 0; j < k; j++) c /= ax[j].n;
    return c % ax[k].n;
}

int fanout_set_axes(struct fanout *f, const struct fanout_axis *ax, int naxes, char ***cell_sets) {
    long cells = fanout_axes_cells(ax, naxes);
    if (cells < 0 || naxes < 1 || naxes > FANOUT_MAX_AXES) {
        *cell_sets = NULL;
        return LSIM_ENOMEM;
    }
    int ncells = (int)cells;
    char **cs = calloc((size_t)ncells * (size_t)naxes, sizeof *cs);
    *cell_sets = cs;
    if (!cs) return LSIM_ENOMEM;
    f->cell_sets = (const char *const *)cs;
    f->ncells = ncells;
    f->cell_nsets = naxes;
    for (int c = 0; c < ncells; c++)
        for (int k = 0; k < naxes; k++) {
            const char *v = ax[k].vals[fanout_cell_value(ax, k, c)];
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

static size_t nseeds(const struct fanout *f) { return f->has_seeds ? (size_t)f->seeds->count : 1; }
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
unsigned long long fanout_seed(const struct fanout *f, size_t i) { return cli_seeds_at(f->seeds, i % nseeds(f)); }

void fanout_label(char *buf, size_t n, const struct fanout *f, size_t i) {
    char seed[32] = "(the scenario's)";
    if (f->has_seeds) snprintf(seed, sizeof seed, "%llu", fanout_seed(f, i));
    else if (f->seed) snprintf(seed, sizeof seed, "%s", f->seed);
    int a = fanout_algo(f, i);
    size_t l = (size_t)snprintf(buf, n, "%s seed %s algo %s", f->files[fanout_file(f, i)], seed,
                                a >= 0            ? f->algo_name[a]
                                : f->algo_default ? f->algo_default
                                                  : "(the scenario's)");
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
#define WIRE_STR(field) \
    { offsetof(struct report_summary, field), sizeof((struct report_summary *)0)->field, 0 }
static const struct wire_hole {
    size_t off, cap;
    size_t elem; /* 0 = a NUL-terminated string; else the facts, elem bytes each */
} wire_holes[] = {
        WIRE_STR(error),
        WIRE_STR(title),
        WIRE_STR(algo),
        WIRE_STR(rep.headline),
        {offsetof(struct report_summary, rep.facts), sizeof((struct report_summary *)0)->rep.facts,
         sizeof(struct checker_fact)},
        WIRE_STR(not_applicable),
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
                            .lenient_sets = f->lenient_sets,
                            .hold_expects = f->hold_expects};
    sweep_run_one(&spec, sum);
}

/* ---- The list on the pool ------------------------------------------------------ */

/* One fanout_run: the pool's argument, in the parent and (a copy from the
 * fork) in each worker. */
struct fan_run {
    const struct fanout *f;
    fanout_sink sink;
    void *arg;
    struct parsed_file *cache; /* a worker's: its parsed files (NULL: parse every run) */
    struct report_summary sum; /* the parent's: the summary being delivered */
    char *fail;                /* owned: failure-text buffer, reused unless the sink takes it */
    size_t fail_cap;
    int nomem; /* the parent ran out of memory */
    int shown; /* a progress line is on the terminal the rows go to */
};

static void fan_worker_start(void *arg) {
    struct fan_run *fr = arg;
    fr->cache = calloc((size_t)fr->f->nfiles, sizeof *fr->cache);
    cli_time_limit_catch(1); /* once: each run only sets and clears the alarm */
}

/* Worker: run i, its summary packed once, as the record. */
static int fan_compute(void *arg, size_t i, struct pool_rec *r) {
    struct fan_run *fr = arg;
    static char packed[sizeof(struct report_summary)];
    struct report_summary *sum = &fr->sum;
    memset(sum, 0, sizeof *sum);
    /* A run past its time limit kills this worker with SIGALRM: the
     * parent fails that run, names it, and a new worker goes on. */
    struct cli_runopts limit = {.time_limit_s = fr->f->time_limit_s};
    cli_time_limit_start(&limit);
    run_one(fr->f, i, sum, fr->cache);
    cli_time_limit_disarm();
    const char *fail = sum->failures ? sum->failures : "";
    size_t flen = strlen(fail);
    uint32_t len = (uint32_t)wire_pack(packed, sum);
    int rc = pool_put(r, &len, sizeof len) != 0 || pool_put(r, packed, len) != 0 ||
             pool_put(r, fail, flen < WIRE_MAX_FAIL ? flen : WIRE_MAX_FAIL) != 0;
    report_summary_close(sum);
    return rc ? -1 : 0;
}

/* Room for n bytes of failure text and its NUL; 0 or -1. */
static int fail_reserve(struct fan_run *fr, size_t n) {
    if (fr->fail && n < fr->fail_cap) return 0;
    size_t cap = fr->fail_cap ? fr->fail_cap : 64;
    while (cap <= n) cap *= 2;
    char *p = realloc(fr->fail, cap);
    if (!p) return -1;
    fr->fail = p;
    fr->fail_cap = cap;
    return 0;
}

static int is_plugin(const char *name) { return name && (strchr(name, '/') || strstr(name, ".so")); }

/* A failed run recorded in the parent: the worker died in it (st, its wait
 * status), or sent what is not a record. */
static void store_failure(struct fan_run *fr, size_t i, int st, int broken) {
    const struct fanout *f = fr->f;
    struct report_summary *s = &fr->sum;
    char where[4400];
    int a = fanout_algo(f, i);
    memset(s, 0, sizeof *s);
    s->rc = s->outcome = is_plugin(a >= 0 ? f->algo_name[a] : f->algo_default) ? LSIM_EPLUGIN : LSIM_EINTERNAL;
    s->judged = 1;
    s->seed = f->has_seeds ? fanout_seed(f, i) : 0;
    snprintf(s->algo, sizeof s->algo, "%s", a < 0 ? "" : f->algo[a]->name);
    fanout_label(where, sizeof where, f, i);
    if (broken) snprintf(s->error, sizeof s->error, "worker sent a broken record during %.500s", where);
    else if (WIFSIGNALED(st))
        snprintf(s->error, sizeof s->error, "worker died with signal %d (%s) during %.500s", WTERMSIG(st),
                 pool_signal_name(WTERMSIG(st)), where);
    else snprintf(s->error, sizeof s->error, "worker exited with status %d during %.500s", WEXITSTATUS(st), where);
}

/* Parent: run i's record (or its worker's death) to the sink. */
static int fan_take(void *arg, size_t i, const void *rec, size_t len, int st) {
    struct fan_run *fr = arg;
    const struct fanout *f = fr->f;
    struct report_summary *s = &fr->sum;
    const char *in = rec;
    uint32_t plen = 0;
    size_t flen = 0;
    int broken = rec && (len < sizeof plen || (memcpy(&plen, in, sizeof plen), plen > len - sizeof plen) ||
                         wire_unpack(s, in + sizeof plen, plen) != 0);
    if (rec && !broken) flen = len - sizeof plen - plen;
    if (fail_reserve(fr, flen) != 0) {
        fr->nomem = 1;
        return 1;
    }
    if (!rec || broken) store_failure(fr, i, st, broken);
    else memcpy(fr->fail, in + sizeof plen + plen, flen);
    fr->fail[flen] = '\0';
    s->file = f->files[fanout_file(f, i)];
    s->label = NULL;
    s->failures = fr->fail;
    s->seconds = 0;  /* wall time would make the output differ run to run */
    if (fr->shown) { /* a row must not start after the progress line */
        fprintf(stderr, "\r%-72s\r", "");
        fr->shown = 0;
    }
    int stop = fr->sink(fr->arg, i, s) != 0;
    if (!s->failures) { /* the sink took the buffer */
        fr->fail = NULL;
        fr->fail_cap = 0;
    }
    return stop;
}

static void fan_progress(void *arg, size_t done, size_t total, double dt) {
    struct fan_run *fr = arg;
    double rate = dt > 0 ? (double)done / dt : 0;
    double eta = rate > 0 ? (double)(total - done) / rate : 0;
    fprintf(stderr, "\r%s: %zu/%zu runs, %.0f runs/s, ETA %.1fs   ", fr->f->name ? fr->f->name : "batch", done, total,
            rate, eta);
    fr->shown = fr->f->progress_clears;
}

/* Merge: the preloaded summaries, in order, nothing run. They stay where
 * they are, owned by merge, which closes them after the output: JUnit and
 * TAP read them in place instead of keeping copies (a merge of 192,000 runs
 * would otherwise hold them twice). */
static int deliver_preloaded(const struct fanout *f, fanout_sink sink, void *arg, size_t *done) {
    size_t total = fanout_total(f);
    *done = 0;
    for (size_t i = 0; i < total; i++) {
        struct report_summary *s = &f->preloaded[i];
        s->file = f->files[fanout_file(f, i)];
        ++*done;
        if (sink(arg, i, s) != 0) return 2;
    }
    return 0;
}


int fanout_run(const struct fanout *f, fanout_sink sink, void *arg, size_t *done) {
    if (f->preloaded) return deliver_preloaded(f, sink, arg, done);
    size_t lo, hi;
    fanout_range(f, &lo, &hi);
    struct fan_run fr = {.f = f, .sink = sink, .arg = arg};
    struct pool p = {.lo = lo,
                     .hi = hi,
                     .jobs = f->jobs,
                     .rec_max = sizeof(uint32_t) + sizeof(struct report_summary) + WIRE_MAX_FAIL,
                     .worker_start = fan_worker_start,
                     .compute = fan_compute,
                     .take = fan_take,
                     .progress = f->progress ? fan_progress : NULL,
                     .arg = &fr};
    p.stop = cli_stop_catch();
    int rc = pool_run(&p, done);
    cli_stop_release();
    if (f->progress) fprintf(stderr, "\r%-72s\r", "");
    free(fr.fail);
    return fr.nomem ? LSIM_ENOMEM : rc;
}
