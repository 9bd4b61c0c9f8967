/* The explorer (explore.h): draw runs from a scenario's fault budget, run
 * them on worker processes in batches merged in index order, and shrink the
 * first failing run to a small scenario file. Swarm mode follows
 * FoundationDB's simulation testing and Groce et al., "Swarm Testing"
 * (ISSTA 2012): each run enables only a random subset of the fault kinds, so
 * that a fault kind that masks another is sometimes absent. */
#include "explore.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "error.h"
#include "fmt.h"
#include "rng.h"

#define BITMAP_BITS (1u << 20) /* distinct placements, by hash */
#define MAX_DRAWN 256          /* faults one run may add */
#define SHRINK_MAX_RUNS 20000  /* the shrinker gives up after this many runs */
#define SET_MAX (2 * SCN_OPT_MAX + 8) /* one NAME=VALUE for a param */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static const char *dur(char *buf, sim_ns v)
{
    format_time_ns(buf, 48, v);
    return buf;
}

/* ---- The search's fixed inputs ---------------------------------------------------- */

/* One drawn fault: one line, or two that belong together (a crash and its
 * restart, a latency spike and its end). Shrinking keeps them together. */
struct unit {
    struct scn_fault f[2];
    int n;
    int kind;  /* enum scn_nemesis, or -1 for a fault of the file itself */
    int idx;   /* kind -1: the fault's index in the file (its values come from the
                  params in use, so they are taken afresh at each build) */
    int moved; /* kind -1: 1 = at_ns of f[0] replaces the file's time */
};

struct ctx {
    struct scenario own;         /* the file's scenario, the algorithm swapped in */
    const struct explore_opts *o;
    struct engine_opts eo;
    int nservers;
    int ranged[SCN_MAX_PARAMS];  /* indexes of params with a range */
    int nranged;
    unsigned *points;            /* owned: per client, a bit per named point its program has */
    /* Per process: the scenario for the current epoch's param values. */
    struct scenario epoch_scn;
    uint64_t epoch;
    int epoch_ok;
    struct explore_cover cover;
    unsigned char *bitmap;       /* owned: BITMAP_BITS bits */
    char unparsed[400];          /* why the last candidate's text did not parse back */
    int unparsed_first;          /* 1: the first failure's own text did not */
};

/* The named points a program reaches (a bit per enum scn_point). */
static unsigned program_points(const struct scn_program *pr)
{
    unsigned m = 0;
    int i;

    for (i = 0; i < pr->nsteps; i++) {
        switch (pr->steps[i].kind) {
        case SCN_STEP_ACQUIRE:
            m |= 1u << SCN_POINT_DURING_ACQUIRE | 1u << SCN_POINT_AFTER_ACQUIRE;
            break;
        case SCN_STEP_READ:
            m |= 1u << SCN_POINT_BEFORE_READ;
            if (i + 1 < pr->nsteps && pr->steps[i + 1].kind == SCN_STEP_WRITE)
                m |= 1u << SCN_POINT_BETWEEN_READ_AND_WRITE;
            break;
        case SCN_STEP_WRITE:
            m |= 1u << SCN_POINT_BEFORE_WRITE | 1u << SCN_POINT_AFTER_WRITE;
            break;
        case SCN_STEP_RELEASE:
            m |= 1u << SCN_POINT_BEFORE_RELEASE | 1u << SCN_POINT_AFTER_RELEASE;
            break;
        default:
            break;
        }
    }
    return m;
}

/* The i-th node of a target set: clients, then servers, then R. */
static int target_count(const struct ctx *c, const struct scn_budget *b)
{
    if (b->node[0])
        return 1;
    return ((b->targets & SCN_TARGET_CLIENTS) ? c->own.nclients : 0) +
           ((b->targets & SCN_TARGET_SERVERS) ? c->nservers : 0) +
           ((b->targets & SCN_TARGET_RESOURCE) ? 1 : 0);
}

static void target_name(const struct ctx *c, const struct scn_budget *b, int i, char *out)
{
    if (b->node[0]) {
        snprintf(out, SCN_NAME_MAX, "%s", b->node);
        return;
    }
    if (b->targets & SCN_TARGET_CLIENTS) {
        if (i < c->own.nclients) {
            snprintf(out, SCN_NAME_MAX, "%s", c->own.clients[i].name);
            return;
        }
        i -= c->own.nclients;
    }
    if ((b->targets & SCN_TARGET_SERVERS) && i < c->nservers) {
        snprintf(out, SCN_NAME_MAX, "S%d", i + 1);
        return;
    }
    snprintf(out, SCN_NAME_MAX, "R");
}

/* ---- Drawing one run ------------------------------------------------------------- */

/* The param values of an epoch, as --set NAME=VALUE texts. */
static void draw_params(const struct ctx *c, uint64_t epoch, char sets[][SET_MAX])
{
    struct rng g;
    int k;

    rng_seed(&g, mix64(c->o->seed ^ 0x70617261ull) ^ mix64(epoch));
    for (k = 0; k < c->nranged; k++) {
        const struct scn_param *q = &c->own.params[c->ranged[k]];
        int64_t v = rng_range(&g, q->min, q->max);
        if (q->range == SCN_RANGE_DURATION)
            snprintf(sets[k], SET_MAX, "%s=%lldns", q->name, (long long)v);
        else
            snprintf(sets[k], SET_MAX, "%s=%lld", q->name, (long long)v);
    }
}

/* The scenario for param values sets (nranged of them): a copy of own,
 * re-parsed with each. 0, or an LSIM code (a value that does not fit). */
static int apply_params(const struct ctx *c, char sets[][SET_MAX], struct scenario *out)
{
    struct scn_error err;
    int k, rc;

    if (scenario_copy(out, &c->own) != 0)
        return LSIM_ENOMEM;
    for (k = 0; k < c->nranged; k++)
        if ((rc = scenario_set(out, sets[k], &err)) != 0) {
            scenario_close(out);
            return rc;
        }
    return 0;
}

/* Where a drawn fault happens: a named point of a client, or a true time in
 * the budget's window. Returns the time (or -1 for a point). */
static sim_ns place(struct ctx *c, const struct scenario *s, const struct scn_budget *b,
                    struct rng *g, struct scn_fault *f, int kind)
{
    sim_ns lo = b->at_lo_ns, hi = b->at_hi_ns ? b->at_hi_ns : s->duration_ns - 1;

    if (hi >= s->duration_ns)
        hi = s->duration_ns - 1;
    if (b->points && s->nclients > 0 && rng_range(g, 0, 1) == 0) {
        int cl = (int)rng_range(g, 0, s->nclients - 1), n = 0, pick, p;
        unsigned m = c->points[cl];
        for (p = 0; p < SCN_POINT_COUNT; p++)
            n += (m >> p) & 1;
        if (n > 0) {
            pick = (int)rng_range(g, 0, n - 1);
            for (p = 0; p < SCN_POINT_COUNT; p++)
                if (((m >> p) & 1) && pick-- == 0)
                    break;
            snprintf(f->trigger, sizeof f->trigger, "%s", s->clients[cl].name);
            f->point = (enum scn_point)p;
            f->occurrence = 1;
            c->cover.point[kind][p]++;
            return -1;
        }
    }
    f->point = SCN_POINT_NONE;
    f->at_ns = lo <= hi ? rng_range(g, lo, hi) : lo;
    c->cover.kind_timed[kind]++;
    return f->at_ns;
}

static void note_placement(struct ctx *c, int kind, const struct scn_fault *f)
{
    uint64_t h = mix64((uint64_t)kind * 1000003u);
    const char *p;

    for (p = f->node; *p; p++)
        h = mix64(h ^ (unsigned char)*p);
    if (f->point != SCN_POINT_NONE) {
        for (p = f->trigger; *p; p++)
            h = mix64(h ^ (unsigned char)*p);
        h = mix64(h ^ (0x100u + f->point));
    } else {
        h = mix64(h ^ (uint64_t)(f->at_ns / SIM_NS_PER_S));
    }
    h &= BITMAP_BITS - 1;
    c->bitmap[h >> 3] |= (unsigned char)(1u << (h & 7));
}

/* A fault with only what a drawn fault uses cleared (a whole struct
 * scn_fault is 2 KiB, most of it partition groups, which stay unused). */
static void fault_init(struct scn_fault *f, enum scn_fault_kind kind, const char *node)
{
    memset(f, 0, offsetof(struct scn_fault, groups));
    memset(f->group_len, 0, sizeof *f - offsetof(struct scn_fault, group_len));
    f->kind = kind;
    f->occurrence = 1;
    f->which = SCN_CLOCK_WALL;
    memcpy(f->node, node, strlen(node) + 1);
}

/* The faults of run `index` on scenario s, into u[] (at most max); returns
 * how many units. Crashes of one node never overlap (so each restart has a
 * crash before it). */
static int draw_faults(struct ctx *c, const struct scenario *s, uint64_t index, struct unit *u,
                       int max)
{
    const struct scn_explore *x = &c->own.explore;
    struct rng g;
    unsigned enabled = (1u << SCN_NEM_COUNT) - 1;
    int k, n = 0, i;

    rng_seed(&g, mix64(c->o->seed) ^ mix64(index ^ 0x72756eull));
    if (c->o->swarm) {
        unsigned budgeted = 0;
        for (k = 0; k < SCN_NEM_COUNT; k++)
            budgeted |= (unsigned)(x->k[k].max > 0) << k;
        do /* a random non-empty subset of the kinds budgeted */
            enabled = (unsigned)rng_next(&g) & budgeted;
        while (enabled == 0 && budgeted != 0);
    }
    for (k = 0; k < SCN_NEM_COUNT; k++) {
        const struct scn_budget *b = &x->k[k];
        int count, ntarget;
        if (b->max == 0 || !((enabled >> k) & 1) || (ntarget = target_count(c, b)) == 0)
            continue;
        count = (int)rng_range(&g, 0, b->max);
        for (i = 0; i < count && n < max; i++) {
            struct unit *v = &u[n];
            char node[SCN_NAME_MAX];
            sim_ns at, size = rng_range(&g, b->lo_ns, b->hi_ns);
            target_name(c, b, (int)rng_range(&g, 0, ntarget - 1), node);
            v->kind = k;
            v->n = 1;
            switch (k) {
            case SCN_NEM_PAUSE:
                fault_init(&v->f[0], SCN_FAULT_PAUSE, node);
                v->f[0].dur_ns = size > 0 ? size : 1;
                place(c, s, b, &g, &v->f[0], k);
                break;
            case SCN_NEM_CLOCK_STEP:
                fault_init(&v->f[0], SCN_FAULT_CLOCK_STEP, node);
                v->f[0].delta_ns = size;
                v->f[0].which = b->which;
                place(c, s, b, &g, &v->f[0], k);
                if (size == 0)
                    continue;
                break;
            case SCN_NEM_LATENCY: {
                sim_ns len = rng_range(&g, b->len_lo_ns, b->len_hi_ns);
                struct scn_budget timed = *b;
                timed.points = 0;
                fault_init(&v->f[0], SCN_FAULT_LINK, node);
                v->f[0].node[0] = '\0';
                snprintf(v->f[0].link.from, sizeof v->f[0].link.from, "%s", node);
                snprintf(v->f[0].link.to, sizeof v->f[0].link.to, "*");
                v->f[0].link.lat.min_ns = v->f[0].link.lat.max_ns = size;
                v->f[0].link.loss_ppm = UINT32_MAX; /* unchanged */
                at = place(c, s, &timed, &g, &v->f[0], k);
                if (len > 0 && at + len < s->duration_ns) {
                    v->f[1] = v->f[0];
                    v->f[1].at_ns = at + len;
                    v->f[1].link.lat = s->latency;
                    v->n = 2;
                }
                break;
            }
            default: { /* SCN_NEM_CRASH */
                int j, overlap = 0;
                fault_init(&v->f[0], SCN_FAULT_CRASH, node);
                at = place(c, s, b, &g, &v->f[0], k);
                if (at >= 0 && at + size < s->duration_ns) {
                    fault_init(&v->f[1], SCN_FAULT_RESTART, node);
                    v->f[1].at_ns = at + size;
                    v->n = 2;
                }
                /* One crash of a node at a time: drop one that overlaps. */
                for (j = 0; j < n && !overlap; j++)
                    if (u[j].kind == SCN_NEM_CRASH && strcmp(u[j].f[0].node, node) == 0)
                        overlap = 1;
                for (j = 0; j < s->nfaults && !overlap; j++)
                    if ((s->faults[j].kind == SCN_FAULT_CRASH ||
                         s->faults[j].kind == SCN_FAULT_RESTART) &&
                        strcmp(s->faults[j].node, node) == 0)
                        overlap = 1;
                if (overlap)
                    continue;
                break;
            }
            }
            c->cover.kind[k]++;
            note_placement(c, k, &v->f[0]);
            n++;
        }
    }
    return n;
}

/* ---- Building and judging a run ---------------------------------------------------- */

/* Faults in the order the parser keeps them: those at named points first
 * (their order among themselves kept), then the timed ones by time (stable). */
static int fault_before(const struct scn_fault *a, const struct scn_fault *b)
{
    int pa = a->point != SCN_POINT_NONE, pb = b->point != SCN_POINT_NONE;

    if (pa != pb)
        return pa;
    return !pa && a->at_ns < b->at_ns;
}

static void sort_faults(struct scn_fault *f, int n)
{
    int i, j;

    for (i = 1; i < n; i++) { /* insertion sort: stable, and n is small */
        struct scn_fault t = f[i];
        for (j = i; j > 0 && fault_before(&t, &f[j - 1]); j--)
            f[j] = f[j - 1];
        f[j] = t;
    }
}

/* The violation kinds of a report, as bits, for "fails the same way". */
static unsigned violations(const struct checker_report *r)
{
    return (r->double_entries > 0) | (r->stale_accepted > 0) << 1 | (r->lost_updates > 0) << 2 |
           (r->wrong_releases > 0) << 3 | (r->stuck > 0) << 4;
}

/* 1 when the finished run breaks the scenario's expect lines (or, with
 * none, is not SAFE); 0 otherwise; -1 when it was cut short. */
static int judge(const struct scenario *s, struct engine *e)
{
    const struct checker_report *r = engine_report(e);
    int i;

    if (engine_truncated(e))
        return -1;
    if (s->nexpects == 0)
        return r->verdict != SCN_VERDICT_SAFE;
    for (i = 0; i < s->nexpects; i++)
        if (!checker_expect_holds(r, &s->expects[i], NULL))
            return 1;
    return 0;
}

/* Run s with extra faults (a read-only view: engine_new copies it). The
 * faults are put in the parser's order through an index sort, so each
 * (large) fault is copied once. */
static int run_view(struct ctx *c, const struct scenario *s, struct scn_fault *extra, int nextra,
                    struct checker_report *rep, uint64_t *states)
{
    struct scenario view = *s; /* shallow: only read, never closed */
    struct scn_fault stack[32], *all = stack;
    const struct scn_fault *ptr[2 * MAX_DRAWN + 64], **order = ptr;
    struct engine *e;
    struct scn_error err;
    int n = s->nfaults + nextra, rc, i, j;

    if (n > (int)(sizeof stack / sizeof stack[0]) &&
        (all = malloc((size_t)n * sizeof *all)) == NULL)
        return LSIM_ENOMEM;
    if (n > (int)(sizeof ptr / sizeof ptr[0]) &&
        (order = malloc((size_t)n * sizeof *order)) == NULL) {
        if (all != stack)
            free(all);
        return LSIM_ENOMEM;
    }
    for (i = 0; i < n; i++) { /* insertion sort of pointers: stable */
        const struct scn_fault *f = i < s->nfaults ? &s->faults[i] : &extra[i - s->nfaults];
        for (j = i; j > 0 && fault_before(f, order[j - 1]); j--)
            order[j] = order[j - 1];
        order[j] = f;
    }
    for (i = 0; i < n; i++)
        all[i] = *order[i];
    if (order != ptr)
        free(order);
    view.faults = all;
    view.nfaults = view.cap_faults = n;
    rc = engine_new(&e, &view, &c->eo, &err);
    if (all != stack)
        free(all);
    if (rc != 0)
        return rc == -2 ? LSIM_ENOMEM : LSIM_EPARSE;
    engine_run(e);
    rc = judge(s, e);
    if (rep)
        *rep = *engine_report(e);
    if (states)
        *states = engine_states_reached(e);
    engine_free(e);
    return rc == -1 ? 2 : rc; /* 2: cut short */
}

/* One run of the search: 1 fails, 0 holds, 2 cut short, or < 0. */
static int search_run(struct ctx *c, uint64_t index)
{
    struct unit u[MAX_DRAWN];
    struct scn_fault flat[2 * MAX_DRAWN];
    uint64_t epoch = c->nranged ? index / EXPLORE_PARAM_EPOCH : 0;
    uint64_t states = 0;
    int n, i, j, m = 0, rc;

    if (!c->epoch_ok || c->epoch != epoch) {
        char sets[SCN_MAX_PARAMS][SET_MAX];
        if (c->epoch_ok)
            scenario_close(&c->epoch_scn);
        c->epoch_ok = 0;
        draw_params(c, epoch, sets);
        if (apply_params(c, sets, &c->epoch_scn) != 0)
            return LSIM_ENOMEM;
        c->epoch_ok = 1;
        c->epoch = epoch;
        c->cover.params += c->nranged > 0;
    }
    n = draw_faults(c, &c->epoch_scn, index, u, MAX_DRAWN);
    for (i = 0; i < n; i++)
        for (j = 0; j < u[i].n; j++)
            flat[m++] = u[i].f[j];
    rc = run_view(c, &c->epoch_scn, flat, m, NULL, &states);
    for (; states; states &= states - 1) /* each state reached, once per run */
        c->cover.state_runs[__builtin_ctzll(states)]++;
    return rc;
}

/* ---- Workers ------------------------------------------------------------------------ */

struct batch_reply {
    uint64_t first_fail;  /* UINT64_MAX = none in this worker's share */
    uint64_t runs;
    uint64_t truncated;
    int rc;               /* 0, or an LSIM code */
};

/* Worker w of n: the runs of batch whose index is w modulo n, up to its
 * first failure (later ones cannot be the first). */
static void run_share(struct ctx *c, uint64_t batch, int w, int n, struct batch_reply *out)
{
    uint64_t i, lo = batch * EXPLORE_BATCH;

    out->first_fail = UINT64_MAX;
    out->runs = out->truncated = 0;
    out->rc = 0;
    for (i = lo + (uint64_t)w; i < lo + EXPLORE_BATCH; i += (uint64_t)n) {
        int rc = search_run(c, i);
        out->runs++;
        if (rc < 0) {
            out->rc = rc;
            return;
        }
        if (rc == 2)
            out->truncated++;
        if (rc == 1) {
            out->first_fail = i;
            return;
        }
    }
}

/* All n bytes to (writing) or from fd, through EINTR; 0, or -1 at an error
 * or the end of the pipe. */
static int io_all(int fd, void *p, size_t n, int writing)
{
    char *b = p;
    while (n > 0) {
        ssize_t k = writing ? write(fd, b, n) : read(fd, b, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

static int write_all(int fd, const void *p, size_t n) { return io_all(fd, (void *)p, n, 1); }
static int read_all(int fd, void *p, size_t n) { return io_all(fd, p, n, 0); }

struct worker {
    pid_t pid;
    int to, from; /* pipe ends: commands in, replies out */
};

/* The worker's loop: a batch number in, a reply out; UINT64_MAX ends it
 * with the coverage. */
static void worker_main(struct ctx *c, int w, int n, int in, int out)
{
    uint64_t batch;
    struct batch_reply rep;

    while (read_all(in, &batch, sizeof batch) == 0) {
        if (batch == UINT64_MAX) {
            write_all(out, &c->cover, sizeof c->cover);
            write_all(out, c->bitmap, BITMAP_BITS / 8);
            break;
        }
        run_share(c, batch, w, n, &rep);
        if (write_all(out, &rep, sizeof rep) < 0)
            break;
    }
    _exit(0);
}

static int start_workers(struct ctx *c, struct worker *ws, int n)
{
    int w;

    fflush(NULL);
    for (w = 0; w < n; w++) {
        int a[2], b[2];
        if (pipe(a) != 0 || pipe(b) != 0)
            return LSIM_EINTERNAL;
        ws[w].pid = fork();
        if (ws[w].pid < 0)
            return LSIM_EINTERNAL;
        if (ws[w].pid == 0) {
            int k;
            close(a[1]);
            close(b[0]);
            for (k = 0; k < w; k++) {
                close(ws[k].to);
                close(ws[k].from);
            }
            worker_main(c, w, n, a[0], b[1]);
        }
        close(a[0]);
        close(b[1]);
        ws[w].to = a[1];
        ws[w].from = b[0];
    }
    return 0;
}

/* End the workers and merge their coverage (in worker order). */
static int stop_workers(struct ctx *c, struct worker *ws, int n)
{
    uint64_t end = UINT64_MAX;
    unsigned char *bm = malloc(BITMAP_BITS / 8);
    int w, rc = bm ? 0 : LSIM_ENOMEM;
    size_t i;

    for (w = 0; w < n; w++) {
        struct explore_cover cv;
        int k, p;
        if (write_all(ws[w].to, &end, sizeof end) == 0 &&
            read_all(ws[w].from, &cv, sizeof cv) == 0 && bm &&
            read_all(ws[w].from, bm, BITMAP_BITS / 8) == 0) {
            for (k = 0; k < SCN_NEM_COUNT; k++) {
                c->cover.kind[k] += cv.kind[k];
                c->cover.kind_timed[k] += cv.kind_timed[k];
                for (p = 0; p < SCN_POINT_COUNT; p++)
                    c->cover.point[k][p] += cv.point[k][p];
            }
            c->cover.params += cv.params;
            for (k = 0; k < LOCK_MAX_STATES; k++)
                c->cover.state_runs[k] += cv.state_runs[k];
            for (i = 0; i < BITMAP_BITS / 8; i++)
                c->bitmap[i] |= bm[i];
        } else if (rc == 0) {
            rc = LSIM_EINTERNAL;
        }
        close(ws[w].to);
        close(ws[w].from);
        waitpid(ws[w].pid, NULL, 0);
    }
    free(bm);
    return rc;
}

/* The search: batches in order until one holds a failure, the budget is
 * spent or the time is up. */
static int search(struct ctx *c, struct explore_result *r)
{
    const struct explore_opts *o = c->o;
    struct worker ws[EXPLORE_MAX_JOBS];
    int n = o->jobs < 1 ? 1 : o->jobs > EXPLORE_MAX_JOBS ? EXPLORE_MAX_JOBS : o->jobs;
    uint64_t batch, nbatches = o->budget ? (o->budget + EXPLORE_BATCH - 1) / EXPLORE_BATCH : 0;
    double t0 = now_s();
    int rc = 0, w;

    r->first_fail = UINT64_MAX;
    if (n > 1 && (rc = start_workers(c, ws, n)) != 0)
        return rc;
    for (batch = 0; nbatches == 0 || batch < nbatches; batch++) {
        if (o->time_s > 0 && now_s() - t0 >= o->time_s)
            break;
        if (n == 1) {
            struct batch_reply rep;
            run_share(c, batch, 0, 1, &rep);
            r->runs += rep.runs;
            c->cover.truncated += rep.truncated;
            if (rep.rc)
                rc = rep.rc;
            r->first_fail = rep.first_fail;
        } else {
            for (w = 0; w < n; w++)
                if (write_all(ws[w].to, &batch, sizeof batch) < 0)
                    rc = LSIM_EINTERNAL;
            for (w = 0; w < n; w++) {
                struct batch_reply rep;
                if (read_all(ws[w].from, &rep, sizeof rep) < 0) {
                    rc = LSIM_EINTERNAL;
                    continue;
                }
                r->runs += rep.runs;
                c->cover.truncated += rep.truncated;
                if (rep.rc && !rc)
                    rc = rep.rc;
                if (rep.first_fail < r->first_fail)
                    r->first_fail = rep.first_fail;
            }
        }
        if (rc || r->first_fail != UINT64_MAX)
            break;
        if (nbatches == 0 && o->time_s <= 0)
            break; /* neither budget nor time: one batch */
    }
    r->seconds = now_s() - t0;
    if (n > 1) {
        int src = stop_workers(c, ws, n);
        if (!rc)
            rc = src;
    }
    r->found = r->first_fail != UINT64_MAX;
    return rc;
}

/* ---- Shrinking ----------------------------------------------------------------------- */

struct shrink {
    struct ctx *c;
    char sets[SCN_MAX_PARAMS][SET_MAX]; /* the param values */
    struct unit *u;                /* owned: nu units, the file's faults first */
    int nu;
    unsigned char *dropped;        /* owned: per client of own, 1 = removed */
    enum scn_verdict verdict;      /* the failure to keep: its verdict ... */
    unsigned kinds;                /* ... and its kinds of violation */
    struct explore_result *r;
    struct checker_report rep;     /* of the last run that still failed */
    struct checker_report last;    /* of the last run made (when last_valid) */
    int last_valid;
    int last_held;                 /* 1 when that run kept the file's expect lines */
    struct {                       /* params bisected to a tick */
        int k;                     /* index into ranged */
        int64_t fail, pass;        /* the failing value kept, and the tick next to it */
    } param_boundary[SCN_MAX_PARAMS];
    int nparam_boundary;
};

/* How a run ended, in a few words: "SAFE", "UNSAFE with a stale write". */
static void outcome(const struct checker_report *r, char *buf, size_t n)
{
    static const char *const kinds[5] = {"double entry", "stale write", "lost update",
                                         "wrong release", "stuck client"};
    unsigned v = violations(r);
    size_t l;
    int k, first = 1;

    snprintf(buf, n, "%s", scn_verdict_name(r->verdict));
    for (k = 0; k < 5; k++) {
        if (!((v >> k) & 1))
            continue;
        l = strlen(buf);
        snprintf(buf + l, n - l, "%s%s", first ? " with a " : ", a ", kinds[k]);
        first = 0;
    }
}

/* The outcome of the last run made, for the passing side of a boundary:
 * with expect lines that it kept, it says so (its verdict may be UNSAFE
 * when the file expects UNSAFE). */
static void outcome_last(const struct shrink *sh, char *buf, size_t n)
{
    size_t l;

    outcome(&sh->last, buf, n);
    l = strlen(buf);
    if (sh->last_held && sh->c->own.nexpects > 0)
        snprintf(buf + l, n - l, " (the file's expect lines hold)");
}

/* The candidate as a parsed scenario: params applied, faults of the units,
 * dropped clients removed, then printed and parsed back, so that what runs
 * is exactly what the file will say. 0, 1 (not a valid scenario), < 0. */
static int build(struct shrink *sh, struct scenario *out)
{
    struct ctx *c = sh->c;
    struct scenario s;
    struct scn_error err;
    char *text;
    size_t len;
    int i, j, k, rc;

    struct scn_fault *file_faults;
    int nfile;

    if ((rc = apply_params(c, sh->sets, &s)) != 0)
        return rc == LSIM_ENOMEM ? rc : 1;
    nfile = s.nfaults;
    file_faults = malloc((size_t)(nfile + 1) * sizeof *file_faults);
    if (file_faults == NULL) {
        scenario_close(&s);
        return LSIM_ENOMEM;
    }
    if (nfile)
        memcpy(file_faults, s.faults, (size_t)nfile * sizeof *file_faults);
    s.nfaults = 0;
    for (i = 0; i < sh->nu; i++)
        for (j = 0; j < sh->u[i].n; j++) {
            struct scn_fault *f = scenario_add_fault(&s);
            if (f == NULL) {
                free(file_faults);
                scenario_close(&s);
                return LSIM_ENOMEM;
            }
            if (sh->u[i].kind >= 0 || sh->u[i].idx >= nfile) {
                *f = sh->u[i].f[j];
                continue;
            }
            *f = file_faults[sh->u[i].idx];
            if (sh->u[i].moved)
                f->at_ns = sh->u[i].f[0].at_ns;
        }
    free(file_faults);
    sort_faults(s.faults, s.nfaults);
    for (i = 0, k = 0; i < s.nclients; i++)
        if (!sh->dropped[i])
            s.clients[k++] = s.clients[i];
    s.nclients = k;
    s.nparams = 0; /* printed as values */
    s.explore.given = 0;
    rc = scenario_print(&s, &text, &len);
    scenario_close(&s);
    if (rc != 0)
        return LSIM_ENOMEM;
    scenario_init(out);
    rc = scenario_parse(out, c->own.file, text, len, &err);
    free(text);
    if (rc == LSIM_ENOMEM)
        return rc;
    if (rc != 0) {
        snprintf(c->unparsed, sizeof c->unparsed, "line %d col %d: %s", err.pos.line,
                     err.pos.col, err.msg);
        scenario_close(out);
        return 1;
    }
    return 0;
}

/* 1 when the candidate still fails the same way, 0 when not (or invalid). */
static int still_fails(struct shrink *sh)
{
    struct scenario s;
    struct checker_report rep;
    int rc = build(sh, &s);

    sh->last_valid = 0;
    if (rc != 0)
        return rc < 0 ? rc : 0;
    sh->r->shrink_runs++;
    rc = run_view(sh->c, &s, NULL, 0, &rep, NULL);
    scenario_close(&s);
    if (rc < 0)
        return rc;
    sh->last = rep;
    sh->last_valid = 1;
    sh->last_held = rc == 0;
    if (rc != 1 || rep.verdict != sh->verdict || (violations(&rep) & sh->kinds) != sh->kinds)
        return 0;
    sh->rep = rep;
    return 1;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void step(struct shrink *sh, const char *fmt, ...)
{
    struct explore_result *r = sh->r;
    va_list ap;

    if (r->nsteps < EXPLORE_MAX_STEPS) {
        va_start(ap, fmt);
        vsnprintf(r->steps[r->nsteps], sizeof r->steps[0], fmt, ap);
        va_end(ap);
    }
    r->nsteps++;
}

/* A fault in a few words, for the steps: "pause A 27.5s at 5s". */
static void describe(const struct scn_fault *f, char *buf, size_t n)
{
    char a[48], b[48];
    const char *when = f->point != SCN_POINT_NONE ? "on" : "at";
    char where[2 * SCN_NAME_MAX + 32];

    if (f->point != SCN_POINT_NONE)
        snprintf(where, sizeof where, "%s.%s", f->trigger, scn_point_name(f->point));
    else
        snprintf(where, sizeof where, "%s", dur(a, f->at_ns));
    switch (f->kind) {
    case SCN_FAULT_PAUSE:
        snprintf(buf, n, "pause %s %s %s %s", f->node, dur(b, f->dur_ns), when, where);
        break;
    case SCN_FAULT_CLOCK_STEP:
        snprintf(buf, n, "clock %s step %s %s %s", f->node, dur(b, f->delta_ns), when, where);
        break;
    case SCN_FAULT_LINK:
        snprintf(buf, n, "link %s %s latency %s %s %s", f->link.from, f->link.to,
                 dur(b, f->link.lat.min_ns), when, where);
        break;
    default:
        snprintf(buf, n, "%s %s %s %s", scn_fault_name(f->kind), f->node, when, where);
        break;
    }
}

static int pass_drop_units(struct shrink *sh)
{
    int i, changed = 0, rc;

    for (i = sh->nu - 1; i >= 0; i--) {
        struct unit keep = sh->u[i];
        char d[200];
        memmove(&sh->u[i], &sh->u[i + 1], (size_t)(sh->nu - i - 1) * sizeof *sh->u);
        sh->nu--;
        if ((rc = still_fails(sh)) < 0)
            return rc;
        if (rc) {
            describe(&keep.f[0], d, sizeof d);
            step(sh, "dropped %s%s", d, keep.n == 2 ? (keep.f[1].kind == SCN_FAULT_RESTART
                                                           ? " (and its restart)"
                                                           : " (and its end)")
                                                     : "");
            changed = 1;
            continue;
        }
        memmove(&sh->u[i + 1], &sh->u[i], (size_t)(sh->nu - i) * sizeof *sh->u);
        sh->u[i] = keep;
        sh->nu++;
    }
    return changed;
}

/* 1 when a fault or a header line names client `name`. */
static int client_named(const struct shrink *sh, const char *name)
{
    const struct scenario *s = &sh->c->own;
    int i, j, g, k;

    for (i = 0; i < sh->nu; i++)
        for (j = 0; j < sh->u[i].n; j++) {
            const struct scn_fault *f = &sh->u[i].f[j];
            if (strcmp(f->node, name) == 0 || strcmp(f->trigger, name) == 0 ||
                strcmp(f->link.from, name) == 0 || strcmp(f->link.to, name) == 0)
                return 1;
            for (g = 0; g < f->ngroups; g++)
                for (k = 0; k < f->group_len[g]; k++)
                    if (strcmp(f->groups[g][k], name) == 0)
                        return 1;
        }
    for (i = 0; i < s->nlinks; i++)
        if (strcmp(s->links[i].from, name) == 0 || strcmp(s->links[i].to, name) == 0)
            return 1;
    for (i = 0; i < s->nclocks; i++)
        if (strcmp(s->clocks[i].node, name) == 0)
            return 1;
    return 0;
}

static int pass_drop_clients(struct shrink *sh)
{
    const struct scenario *s = &sh->c->own;
    int i, left = 0, changed = 0, rc;

    for (i = 0; i < s->nclients; i++)
        left += !sh->dropped[i];
    for (i = s->nclients - 1; i >= 0 && left > 1; i--) {
        if (sh->dropped[i] || client_named(sh, s->clients[i].name))
            continue;
        sh->dropped[i] = 1;
        if ((rc = still_fails(sh)) < 0)
            return rc;
        if (rc) {
            step(sh, "dropped client %s", s->clients[i].name);
            left--;
            changed = 1;
        } else {
            sh->dropped[i] = 0;
        }
    }
    return changed;
}

/* Round values, coarsest first. */
static const sim_ns ladder[] = {60 * SIM_NS_PER_S, 10 * SIM_NS_PER_S, 5 * SIM_NS_PER_S,
                                SIM_NS_PER_S,      500 * SIM_NS_PER_MS, 100 * SIM_NS_PER_MS,
                                10 * SIM_NS_PER_MS, SIM_NS_PER_MS,     SIM_NS_PER_US};
#define NLADDER ((int)(sizeof ladder / sizeof ladder[0]))

/* Move a timed unit to an earlier, rounder time (its second line keeps its
 * distance): 0, then the value rounded down at each step of the ladder. */
static int pass_round_times(struct shrink *sh)
{
    int i, g, changed = 0, rc;

    for (i = 0; i < sh->nu; i++) {
        struct unit *v = &sh->u[i];
        sim_ns t = v->f[0].at_ns, gap = v->n == 2 ? v->f[1].at_ns - t : 0;
        int was = v->moved;
        if (v->f[0].point != SCN_POINT_NONE || t == 0)
            continue;
        for (g = -1; g < NLADDER; g++) {
            sim_ns cand = g < 0 ? 0 : t / ladder[g] * ladder[g];
            char a[48], b[48];
            if (cand == t)
                break; /* already as round as this step */
            if (g >= 0 && cand == (g > 0 ? t / ladder[g - 1] * ladder[g - 1] : 0))
                continue; /* the same value as the coarser step, tried */
            v->f[0].at_ns = cand;
            if (v->n == 2)
                v->f[1].at_ns = cand + gap;
            v->moved = 1;
            if ((rc = still_fails(sh)) < 0)
                return rc;
            if (rc) {
                step(sh, "moved %s %s from %s to %s", scn_fault_name(v->f[0].kind),
                     v->f[0].node[0] ? v->f[0].node : v->f[0].link.from, dur(a, t), dur(b, cand));
                changed = 1;
                break;
            }
            v->f[0].at_ns = t;
            if (v->n == 2)
                v->f[1].at_ns = t + gap;
            v->moved = was;
        }
    }
    return changed;
}

/* The sizes a unit has, by slot: 0 pause length, step delta or spike
 * latency; 1 the gap to the second line (down time, spike length). */
static sim_ns *size_slot(struct unit *v, int slot)
{
    struct scn_fault *f = &v->f[0];

    if (slot == 1)
        return NULL; /* the gap is handled through at_ns */
    switch (f->kind) {
    case SCN_FAULT_PAUSE:
        return f->dur_ns ? &f->dur_ns : NULL;
    case SCN_FAULT_CLOCK_STEP:
        return &f->delta_ns;
    case SCN_FAULT_LINK:
        return f->link.lat.min_ns >= 0 ? &f->link.lat.min_ns : NULL;
    default:
        return NULL;
    }
}

static void set_size(struct unit *v, int slot, sim_ns val)
{
    if (slot == 1) {
        v->f[1].at_ns = v->f[0].at_ns + val;
        return;
    }
    *size_slot(v, slot) = val;
    if (v->f[0].kind == SCN_FAULT_LINK)
        v->f[0].link.lat.max_ns = val;
}

static sim_ns get_size(struct unit *v, int slot)
{
    return slot == 1 ? v->f[1].at_ns - v->f[0].at_ns : *size_slot(v, slot);
}

/* Shorten each size: the smallest round value on the ladder that still
 * fails, then bisection between it and the largest value that passes, to
 * the exact tick (1 ns). A clock step shrinks towards 0 keeping its sign. */
static int pass_sizes(struct shrink *sh, int bisect)
{
    int i, slot, g, changed = 0, rc;

    for (i = 0; i < sh->nu; i++) {
        struct unit *v = &sh->u[i];
        if (v->kind < 0)
            continue; /* the file's own faults keep their sizes */
        for (slot = 0; slot < 2; slot++) {
            sim_ns orig, val, sign, lo, hi;
            char a[48], b[48], what[64];
            if (slot == 0 && size_slot(v, 0) == NULL)
                continue;
            if (slot == 1 && (v->n != 2 || v->f[0].point != SCN_POINT_NONE))
                continue;
            orig = val = get_size(v, slot);
            sign = val < 0 ? -1 : 1;
            val *= sign;
            if (val <= 1)
                continue;
            if (slot == 1)
                snprintf(what, sizeof what, "%s of %s", v->f[1].kind == SCN_FAULT_RESTART
                         ? "down time" : "spike length", v->f[0].node[0] ? v->f[0].node
                         : v->f[0].link.from);
            else
                snprintf(what, sizeof what, "%s %s", v->f[0].kind == SCN_FAULT_PAUSE ? "pause of"
                         : v->f[0].kind == SCN_FAULT_CLOCK_STEP ? "clock step of"
                         : "latency spike of", v->f[0].node[0] ? v->f[0].node
                         : v->f[0].link.from);
            /* The smallest round value that still fails: ascending. */
            lo = 0;
            hi = val;
            for (g = NLADDER - 1; g >= 0 && !bisect; g--) {
                sim_ns cand;
                for (cand = ladder[g]; cand < hi; cand += ladder[g]) {
                    set_size(v, slot, sign * cand);
                    if ((rc = still_fails(sh)) < 0)
                        return rc;
                    if (rc) {
                        hi = cand;
                        break;
                    }
                    lo = cand > lo ? cand : lo;
                    if (cand / ladder[g] >= 60)
                        break; /* a coarser step will reach further */
                }
            }
            if (bisect) {
                /* 0 passes (or is no fault at all), hi fails: bisect to the tick. */
                lo = 0;
                while (hi - lo > 1 && sh->r->shrink_runs <= SHRINK_MAX_RUNS) {
                    sim_ns mid = lo + (hi - lo) / 2;
                    set_size(v, slot, sign * mid);
                    if ((rc = still_fails(sh)) < 0)
                        return rc;
                    if (rc)
                        hi = mid;
                    else
                        lo = mid;
                }
                if (hi - lo == 1 && lo > 0 && sh->r->nboundary < EXPLORE_MAX_BOUNDARY) {
                    char fails[120], holds[120] = "not a valid scenario";
                    set_size(v, slot, sign * lo);
                    if ((rc = still_fails(sh)) < 0)
                        return rc;
                    if (sh->last_valid)
                        outcome_last(sh, holds, sizeof holds);
                    outcome(&sh->rep, fails, sizeof fails);
                    snprintf(sh->r->boundary[sh->r->nboundary++], sizeof sh->r->boundary[0],
                             "%.60s %s: %.100s; %s (1 ns less): %.100s", what, dur(a, sign * hi), fails,
                             dur(b, sign * lo), holds);
                }
            }
            set_size(v, slot, sign * hi);
            if (still_fails(sh) != 1) { /* not monotone after all: keep the value we had */
                set_size(v, slot, orig);
                if ((rc = still_fails(sh)) < 0)
                    return rc;
                continue;
            }
            if (sign * hi != orig) {
                step(sh, "%s %s: %s -> %s", bisect ? "bisected" : "shortened", what,
                     dur(a, orig), dur(b, sign * hi));
                changed = 1;
            }
        }
    }
    return changed;
}

/* Params back to their defaults, else to a round value. */
static int pass_params(struct shrink *sh)
{
    struct ctx *c = sh->c;
    int k, g, changed = 0, rc;

    for (k = 0; k < c->nranged; k++) {
        const struct scn_param *q = &c->own.params[c->ranged[k]];
        char keep[SET_MAX];
        const char *eq = strchr(sh->sets[k], '=');
        int64_t v = 0;
        if (q->range == SCN_RANGE_DURATION)
            scn_parse_duration(eq + 1, &v);
        else
            scn_parse_int(eq + 1, &v);
        memcpy(keep, sh->sets[k], sizeof keep);
        snprintf(sh->sets[k], sizeof keep, "%s=%s", q->name, q->def);
        if (strcmp(keep, sh->sets[k]) == 0)
            continue;
        if ((rc = still_fails(sh)) < 0)
            return rc;
        if (rc) {
            step(sh, "param %s back to its default %s", q->name, q->def);
            changed = 1;
            continue;
        }
        for (g = 0; g < NLADDER; g++) {
            sim_ns unit = q->range == SCN_RANGE_DURATION ? ladder[g] : (g == 0 ? 10 : 1);
            int64_t r0 = (v + unit / 2) / unit * unit;
            char a[48];
            if (q->range != SCN_RANGE_DURATION && g > 1)
                break;
            if (r0 < q->min || r0 > q->max || r0 == v)
                continue;
            if (q->range == SCN_RANGE_DURATION)
                snprintf(sh->sets[k], sizeof keep, "%s=%s", q->name, dur(a, r0));
            else
                snprintf(sh->sets[k], sizeof keep, "%s=%lld", q->name, (long long)r0);
            if ((rc = still_fails(sh)) < 0)
                return rc;
            if (rc) {
                step(sh, "param %s rounded to %s", q->name, strchr(sh->sets[k], '=') + 1);
                changed = 1;
                break;
            }
        }
        if (g == NLADDER || (q->range != SCN_RANGE_DURATION && g > 1))
            memcpy(sh->sets[k], keep, sizeof keep);
    }
    return changed;
}

/* A param's value as text (ns for a duration, else units); 0, or nonzero. */
static int param_read(const struct scn_param *q, const char *text, int64_t *v)
{
    return q->range == SCN_RANGE_DURATION ? scn_parse_duration(text, v) : scn_parse_int(text, v);
}

/* The value of a NAME=VALUE text of sets[]. */
static int param_value(const struct scn_param *q, const char *set, int64_t *v)
{
    const char *eq = strchr(set, '=');

    return eq == NULL ? -1 : param_read(q, eq + 1, v);
}

static void param_set(const struct scn_param *q, char *set, int64_t v)
{
    char a[48];

    if (q->range == SCN_RANGE_DURATION)
        snprintf(set, SET_MAX, "%s=%s", q->name, dur(a, v));
    else
        snprintf(set, SET_MAX, "%s=%lld", q->name, (long long)v);
}

static const char *param_text(const struct scn_param *q, char *buf, int64_t v)
{
    if (q->range == SCN_RANGE_DURATION)
        return dur(buf, v);
    snprintf(buf, 48, "%lld", (long long)v);
    return buf;
}

/* Each ranged param bisected to the tick (1 ns for a duration, 1 for a
 * count) between its failing value and the nearest value known to pass: its
 * default, else an end of its range. What is left is the failing value
 * closest to that anchor, with the value one tick nearer passing; a param
 * every candidate anchor fails with keeps its value. */
static int pass_param_bisect(struct shrink *sh)
{
    struct ctx *c = sh->c;
    int k, j, changed = 0, rc;

    for (k = 0; k < c->nranged; k++) {
        const struct scn_param *q = &c->own.params[c->ranged[k]];
        int64_t v, orig, a = 0, cand[3];
        int have = 0;
        char keep[SET_MAX], fails[120], holds[120], t1[48], t2[48];
        if (param_value(q, sh->sets[k], &v) != 0)
            continue;
        orig = v;
        memcpy(keep, sh->sets[k], sizeof keep);
        if (param_read(q, q->def, &cand[0]) != 0)
            cand[0] = v; /* skipped below */
        cand[1] = q->min;
        cand[2] = q->max;
        for (j = 0; j < 3 && !have; j++) {
            if (cand[j] == v || cand[j] < q->min || cand[j] > q->max)
                continue;
            param_set(q, sh->sets[k], cand[j]);
            if ((rc = still_fails(sh)) < 0)
                return rc;
            if (rc == 0 && sh->last_valid) {
                a = cand[j];
                have = 1;
                outcome_last(sh, holds, sizeof holds);
            }
        }
        if (!have) {
            memcpy(sh->sets[k], keep, sizeof keep);
            continue;
        }
        /* a passes, v fails: halve the distance until they are one tick apart. */
        while ((v > a ? v - a : a - v) > 1 && sh->r->shrink_runs <= SHRINK_MAX_RUNS) {
            int64_t mid = a + (v - a) / 2;
            param_set(q, sh->sets[k], mid);
            if ((rc = still_fails(sh)) < 0)
                return rc;
            if (rc) {
                v = mid;
            } else if (sh->last_valid) {
                a = mid;
                outcome_last(sh, holds, sizeof holds);
            } else {
                break; /* not a valid scenario: stop where we are */
            }
        }
        param_set(q, sh->sets[k], v);
        if ((rc = still_fails(sh)) < 0)
            return rc;
        if (rc != 1) { /* not monotone after all: keep the value we had */
            memcpy(sh->sets[k], keep, sizeof keep);
            if ((rc = still_fails(sh)) < 0)
                return rc;
            continue;
        }
        if (v != orig) {
            step(sh, "bisected param %s: %s -> %s", q->name, param_text(q, t1, orig),
                 param_text(q, t2, v));
            changed = 1;
        }
        if ((v > a ? v - a : a - v) == 1 && sh->nparam_boundary < SCN_MAX_PARAMS) {
            outcome(&sh->rep, fails, sizeof fails);
            sh->param_boundary[sh->nparam_boundary].k = k;
            sh->param_boundary[sh->nparam_boundary].fail = v;
            sh->param_boundary[sh->nparam_boundary++].pass = a;
            if (sh->r->nboundary < EXPLORE_MAX_BOUNDARY)
                snprintf(sh->r->boundary[sh->r->nboundary++], sizeof sh->r->boundary[0],
                         "param %.48s %s: %.100s; %s (1 %s %s): %.100s", q->name,
                         param_text(q, t1, v), fails, param_text(q, t2, a),
                         q->range == SCN_RANGE_DURATION ? "ns" : "tick",
                         a < v ? "less" : "more", holds);
        }
    }
    return changed;
}

/* After the fault sizes were bisected too: does the tick next to each param
 * boundary still pass? If not, its boundary line says so. */
static int recheck_param_boundaries(struct shrink *sh)
{
    int i, b = 0, rc;

    if (sh->nparam_boundary == 0)
        return 0;
    for (i = 0; i < sh->nparam_boundary; i++) {
        const struct scn_param *q = &sh->c->own.params[sh->c->ranged[sh->param_boundary[i].k]];
        char keep[SET_MAX], *line;
        memcpy(keep, sh->sets[sh->param_boundary[i].k], sizeof keep);
        param_set(q, sh->sets[sh->param_boundary[i].k], sh->param_boundary[i].pass);
        rc = still_fails(sh);
        memcpy(sh->sets[sh->param_boundary[i].k], keep, sizeof keep);
        if (rc < 0)
            return rc;
        /* The boundary line of this param: the i-th that starts with "param ". */
        for (line = NULL; b < sh->r->nboundary; b++)
            if (strncmp(sh->r->boundary[b], "param ", 6) == 0) {
                line = sh->r->boundary[b++];
                break;
            }
        if (rc == 1 && line) {
            size_t l = strlen(line);
            snprintf(line + l, sizeof sh->r->boundary[0] - l,
                     " (before the fault sizes were bisected; it fails now)");
        }
    }
    return still_fails(sh) == 1 ? 0 : LSIM_EINTERNAL;
}

/* ---- The counterexample file --------------------------------------------------------- */

static int add_expect(struct scenario *s, enum scn_metric m, enum scn_cmp cmp, int64_t v,
                      const char *text)
{
    struct scn_expect *x = scenario_add_expect(s);

    if (x == NULL)
        return LSIM_ENOMEM;
    x->metric = m;
    x->cmp = cmp;
    x->value = v;
    snprintf(x->text, sizeof x->text, "%s", text);
    return 0;
}

static int write_file(struct shrink *sh, const char *algo)
{
    struct explore_result *r = sh->r;
    struct scenario s;
    const struct checker_report *rep = &sh->rep;
    char *body, head[EXPLORE_MAX_STEPS * 200 + 4096], line[256];
    size_t blen, hl = 0;
    int i, rc;

    if ((rc = build(sh, &s)) != 0)
        return rc < 0 ? rc : LSIM_EINTERNAL;
    s.nexpects = 0;
    char verdict[40];
    snprintf(verdict, sizeof verdict, "verdict %s", scn_verdict_name(rep->verdict));
    rc = add_expect(&s, SCN_M_VERDICT, SCN_CMP_EQ, rep->verdict, verdict);
    if (!rc && rep->double_entries)
        rc = add_expect(&s, SCN_M_DOUBLE_ENTRIES, SCN_CMP_GE, 1, "double-entry");
    if (!rc && rep->stale_accepted)
        rc = add_expect(&s, SCN_M_STALE_ACCEPTED, SCN_CMP_GE, 1, "stale-write accepted");
    if (!rc && rep->lost_updates)
        rc = add_expect(&s, SCN_M_LOST_UPDATES, SCN_CMP_GE, 1, "lost-update");
    if (!rc && rep->wrong_releases)
        rc = add_expect(&s, SCN_M_WRONG_RELEASES, SCN_CMP_GE, 1, "wrong-release");
    if (!rc && rep->stuck)
        rc = add_expect(&s, SCN_M_STUCK, SCN_CMP_GE, 1, "stuck");
    if (!rc) {
        char t[SCN_TEXT_MAX];
        snprintf(t, sizeof t, "%.100s (explored: %s)", s.title[0] ? s.title : "scenario", algo);
        memcpy(s.title, t, sizeof t);
        rc = scenario_print(&s, &body, &blen);
    }
    r->faults_shrunk = s.nfaults;
    r->clients_shrunk = s.nclients;
    scenario_close(&s);
    if (rc)
        return rc;
#define HEAD(...)                                                                             \
    do {                                                                                      \
        int n_ = snprintf(head + hl, sizeof head - hl, __VA_ARGS__);                          \
        if (n_ > 0)                                                                           \
            hl += (size_t)n_ < sizeof head - hl ? (size_t)n_ : sizeof head - hl - 1;          \
    } while (0)
    HEAD("# Found by `%s`:\n", sh->c->o->command ? sh->c->o->command : "locksim explore");
    HEAD("# explorer seed %llu, run %llu of the search (%llu runs to the first failure),\n",
         (unsigned long long)sh->c->o->seed, (unsigned long long)r->first_fail,
         (unsigned long long)r->first_fail + 1);
    HEAD("# %d fault%s and %d client%s then; shrunk in %d steps (%llu runs) to %d fault%s and %d "
         "client%s.\n", r->faults_found, r->faults_found == 1 ? "" : "s", r->clients_found,
         r->clients_found == 1 ? "" : "s", r->nsteps, (unsigned long long)r->shrink_runs,
         r->faults_shrunk, r->faults_shrunk == 1 ? "" : "s", r->clients_shrunk,
         r->clients_shrunk == 1 ? "" : "s");
    for (i = 0; i < r->nsteps && i < EXPLORE_MAX_STEPS; i++) {
        snprintf(line, sizeof line, "#   %d. %s\n", i + 1, r->steps[i]);
        HEAD("%s", line);
    }
    for (i = 0; i < r->nboundary; i++)
        HEAD("# Boundary: %s.\n", r->boundary[i]);
    HEAD("# %s\n", rep->headline);
#undef HEAD
    r->text = malloc(hl + blen + 1);
    if (r->text == NULL) {
        free(body);
        return LSIM_ENOMEM;
    }
    memcpy(r->text, head, hl);
    memcpy(r->text + hl, body, blen);
    r->text[hl + blen] = '\0';
    r->len = hl + blen;
    free(body);
    return 0;
}

/* Re-draw the first failing run as units, and shrink it. */
static int shrink(struct ctx *c, struct explore_result *r, const char *algo)
{
    struct shrink sh;
    struct unit drawn[MAX_DRAWN];
    struct scenario s;
    uint64_t epoch = c->nranged ? r->first_fail / EXPLORE_PARAM_EPOCH : 0;
    double t0 = now_s();
    int i, n, rc, round;

    memset(&sh, 0, sizeof sh);
    sh.c = c;
    sh.r = r;
    draw_params(c, epoch, sh.sets);
    if ((rc = apply_params(c, sh.sets, &s)) != 0)
        return rc;
    n = draw_faults(c, &s, r->first_fail, drawn, MAX_DRAWN);
    sh.u = calloc((size_t)(s.nfaults + n + 1), sizeof *sh.u);
    sh.dropped = calloc((size_t)c->own.nclients + 1, 1);
    if (sh.u == NULL || sh.dropped == NULL) {
        scenario_close(&s);
        free(sh.u);
        free(sh.dropped);
        return LSIM_ENOMEM;
    }
    for (i = 0; i < s.nfaults; i++) {
        sh.u[sh.nu].f[0] = s.faults[i];
        sh.u[sh.nu].n = 1;
        sh.u[sh.nu].idx = i;
        sh.u[sh.nu++].kind = -1;
    }
    for (i = 0; i < n; i++)
        sh.u[sh.nu++] = drawn[i];
    for (i = 0; i < sh.nu; i++)
        r->faults_found += sh.u[i].n;
    r->clients_found = s.nclients;
    scenario_close(&s);
    /* The failure to keep: as the first failing run showed it. */
    {
        struct scenario b;
        struct checker_report rep;
        if ((rc = build(&sh, &b)) != 0) {
            c->unparsed_first = rc == 1;
            rc = rc < 0 ? rc : LSIM_EINTERNAL;
            goto out;
        }
        r->shrink_runs++;
        rc = run_view(c, &b, NULL, 0, &rep, NULL);
        scenario_close(&b);
        if (rc != 1) {
            rc = rc < 0 ? rc : LSIM_EINTERNAL; /* the written form must fail as the run did */
            goto out;
        }
        sh.verdict = rep.verdict;
        sh.kinds = violations(&rep);
        sh.rep = rep;
    }
    for (round = 0; round < 4; round++) {
        int ch = 0;
        if ((rc = pass_params(&sh)) < 0 || (ch |= rc, rc = pass_drop_units(&sh)) < 0)
            goto out;
        ch |= rc;
        if ((rc = pass_drop_clients(&sh)) < 0)
            goto out;
        ch |= rc;
        if ((rc = pass_round_times(&sh)) < 0)
            goto out;
        ch |= rc;
        if ((rc = pass_sizes(&sh, 0)) < 0)
            goto out;
        ch |= rc;
        if (!ch || r->shrink_runs > SHRINK_MAX_RUNS)
            break;
    }
    if ((rc = pass_param_bisect(&sh)) < 0 || (rc = pass_sizes(&sh, 1)) < 0 ||
        (rc = recheck_param_boundaries(&sh)) < 0)
        goto out;
    if ((rc = still_fails(&sh)) != 1) {
        rc = rc < 0 ? rc : LSIM_EINTERNAL;
        goto out;
    }
    r->rep = sh.rep;
    rc = write_file(&sh, algo);
out:
    r->shrink_seconds = now_s() - t0;
    free(sh.u);
    free(sh.dropped);
    return rc;
}

/* ---- The whole exploration ------------------------------------------------------------ */

/* Remove options the algorithm does not take (as --algo does), so the
 * file written names only options it reads. */
static int swap_algo(struct ctx *c, char *err, size_t errlen)
{
    struct engine *e;
    struct scn_error se;
    struct engine_opts eo = {.algo = c->o->algo, .lenient_options = 1};
    const char *dropped;
    int rc, i, k;

    rc = engine_new(&e, &c->own, &eo, &se);
    if (rc == -2)
        return LSIM_ENOMEM;
    if (rc != 0) {
        snprintf(err, errlen, "%s cannot run %s: %s", c->o->algo->name, c->own.file, se.msg);
        return LSIM_EUSAGE;
    }
    dropped = engine_dropped_options(e);
    for (i = 0, k = 0; i < c->own.nopts; i++) {
        const char *o = c->own.opts[i].key, *p = dropped;
        size_t len = strlen(o);
        int drop = 0;
        while (*p) {
            size_t l = strcspn(p, " ");
            if (l == len && strncmp(p, o, len) == 0)
                drop = 1;
            p += l;
            while (*p == ' ')
                p++;
        }
        if (!drop)
            c->own.opts[k++] = c->own.opts[i];
    }
    c->own.nopts = k;
    /* The file's `resource fencing=` describes the resource of the algorithm
     * it names; one swapped in keeps its own rule, as the engine has it
     * (engine_opts.algo). The copy is about to name the swapped-in algorithm
     * itself, so it no longer says fencing= was stated: fenced-lease still
     * fences on a plain-lease file whose resource line says fencing=off. */
    if (lock_algo_find(c->own.algo) != c->o->algo)
        c->own.fencing_stated = 0;
    snprintf(c->own.algo, sizeof c->own.algo, "%s", c->o->algo->name);
    engine_free(e);
    return 0;
}

int explore_run(const struct scenario *base, const struct explore_opts *o,
                struct explore_result *r, char *err, size_t errlen)
{
    struct ctx *c;
    const struct lock_algo *a;
    int i, k, rc, any = 0;

    memset(r, 0, sizeof *r);
    for (k = 0; k < SCN_NEM_COUNT; k++)
        any |= base->explore.given && base->explore.k[k].max > 0;
    for (i = 0; i < base->nparams; i++)
        any |= base->params[i].range != SCN_RANGE_NONE && base->params[i].min < base->params[i].max;
    if (!any) {
        snprintf(err, errlen, "%s has nothing to explore: add a fault budget such as `explore "
                 "pauses<=2 length=1s..60s; clock-steps<=1 on servers delta=-30s..30s; "
                 "crashes<=1`, or give a param a range (`param pause=27s range=0s..60s`); see "
                 "docs/scenario-format.md, \"Exploring\"", base->file);
        return LSIM_EUSAGE;
    }
    if ((c = calloc(1, sizeof *c)) == NULL)
        return LSIM_ENOMEM;
    c->o = o;
    if (scenario_copy(&c->own, base) != 0) {
        free(c);
        return LSIM_ENOMEM;
    }
    rc = 0;
    if (o->algo && (rc = swap_algo(c, err, errlen)) != 0)
        goto out;
    a = o->algo ? o->algo : lock_algo_find(c->own.algo);
    c->nservers = c->own.nservers ? c->own.nservers : a && a->default_servers ? a->default_servers : 1;
    for (i = 0; i < c->own.nparams; i++)
        if (c->own.params[i].range != SCN_RANGE_NONE && c->own.params[i].min < c->own.params[i].max)
            c->ranged[c->nranged++] = i;
    c->points = calloc((size_t)c->own.nclients + 1, sizeof *c->points);
    c->bitmap = calloc(BITMAP_BITS / 8, 1);
    if (c->points == NULL || c->bitmap == NULL) {
        rc = LSIM_ENOMEM;
        goto out;
    }
    for (i = 0; i < c->own.nclients; i++)
        c->points[i] = program_points(&c->own.programs[c->own.clients[i].program]);
    c->eo.algo = o->algo; /* its options are now only those it takes */
    /* Check once that the scenario builds, with its message when it does not. */
    {
        struct engine *e;
        struct scn_error se;
        rc = engine_new(&e, &c->own, &c->eo, &se);
        if (rc != 0) {
            snprintf(err, errlen, "%s:%d:%d: %s", se.file, se.pos.line, se.pos.col, se.msg);
            rc = rc == -2 ? LSIM_ENOMEM : LSIM_EUSAGE;
            goto out;
        }
        r->algo = engine_algo(e); /* the one that runs: built in, swapped in, or a plugin */
        engine_free(e);
    }
    rc = search(c, r);
    r->cover = c->cover;
    if (rc == 0 && r->found)
        rc = shrink(c, r, c->own.algo);
    for (i = 0; i < (int)(BITMAP_BITS / 8); i++)
        r->cover.placements += (uint64_t)__builtin_popcount(c->bitmap[i]);
    for (k = 0; k < SCN_NEM_COUNT; k++) {
        const struct scn_budget *b = &c->own.explore.k[k];
        sim_ns lo = b->at_lo_ns, hi = b->at_hi_ns ? b->at_hi_ns : c->own.duration_ns - 1;
        uint64_t places = 0;
        if (!c->own.explore.given || b->max == 0)
            continue;
        if (hi >= c->own.duration_ns)
            hi = c->own.duration_ns - 1;
        places = (uint64_t)(hi / SIM_NS_PER_S - lo / SIM_NS_PER_S + 1);
        if (b->points && k != SCN_NEM_LATENCY)
            for (i = 0; i < c->own.nclients; i++)
                places += (uint64_t)__builtin_popcount(c->points[i]);
        r->cover.placements_possible += places * (uint64_t)target_count(c, b);
    }
    if (rc == LSIM_EINTERNAL && !err[0] && c->unparsed_first)
        snprintf(err, errlen, "the explorer failed: the counterexample, written as a file, does not "
                 "parse back (%s); a --set may have made a scenario its file could not say",
                 c->unparsed);
    else if (rc == LSIM_EINTERNAL && !err[0])
        snprintf(err, errlen, "the explorer failed (a worker process, or a counterexample that "
                 "did not fail once written)");
out:
    if (c->epoch_ok)
        scenario_close(&c->epoch_scn);
    scenario_close(&c->own);
    free(c->points);
    free(c->bitmap);
    free(c);
    return rc;
}

void explore_result_close(struct explore_result *r)
{
    free(r->text);
    r->text = NULL;
    r->len = 0;
}
