/* The explorer's search (explore_int.h) on the worker pool (pool.h): run i
 * of the search is drawn from the explorer seed and i alone, so any worker
 * can run it; worker w of N takes runs w, w + N, ... and the parent takes
 * their records in index order, counting each run's coverage, and stops the
 * pool at the first failing run. The runs searched, the first failure and
 * the coverage are therefore those of runs 0 to the first failure, whatever
 * N is. With one job the runs are made in this process. */
#include <sys/wait.h>
#include <stdint.h>
#include <string.h>

#include "error.h"
#include "explore_int.h"
#include "pool.h"

int explore_search_run(struct ctx *c, uint64_t index, uint64_t *states) {
    struct unit u[MAX_DRAWN];
    struct scn_fault flat[2 * MAX_DRAWN];
    uint64_t epoch = c->nranged ? index / EXPLORE_PARAM_EPOCH : 0;
    int n, i, j, m = 0;

    if (!c->epoch_ok || c->epoch != epoch) {
        char sets[SCN_MAX_PARAMS][SET_MAX];
        if (c->epoch_ok) scenario_close(&c->epoch_scn);
        c->epoch_ok = 0;
        explore_draw_params(c, epoch, sets);
        if (explore_apply_params(c, sets, &c->epoch_scn) != 0) return LSIM_ENOMEM;
        c->epoch_ok = 1;
        c->epoch = epoch;
    }
    n = explore_draw_faults(c, &c->epoch_scn, index, u, MAX_DRAWN);
    for (i = 0; i < n; i++)
        for (j = 0; j < u[i].n; j++) flat[m++] = u[i].f[j];
    *states = 0;
    return explore_try(c, &c->epoch_scn, flat, m, NULL, states);
}

/* A run's record: this header, then nlog entries of its draw's log. */
struct run_rec {
    int32_t rc; /* 1 fails, 0 holds, 2 cut short, < 0 an LSIM code */
    uint32_t nlog;
    uint64_t states; /* the algorithm states the run reached, a bit each */
};

/* The search as the pool's argument. */
struct search {
    struct ctx *c;
    struct explore_result *r;
    uint64_t next; /* the run expected next */
    double t0;
    int rc; /* an LSIM code from a run or a worker */
};

/* Worker (or this process, with one job): run i as a record; a failure is
 * sent at once. */
static int compute(void *arg, size_t i, struct pool_rec *out) {
    struct search *se = arg;
    struct ctx *c = se->c;
    struct run_rec h = {0};

    h.rc = explore_search_run(c, i, &h.states);
    h.nlog = (uint32_t)c->nlog;
    if (pool_put(out, &h, sizeof h) != 0 || pool_put(out, c->log, 4 * (size_t)c->nlog) != 0) return -1;
    return h.rc == 1 || h.rc < 0;
}

/* Parent: run i's record, in index order. Counts it and stops at the first
 * failure, an error, or a whole batch past the time limit. */
static int take(void *arg, size_t i, const void *rec, size_t len, int status) {
    struct search *se = arg;
    struct ctx *c = se->c;
    struct explore_result *r = se->r;
    const struct explore_opts *o = c->o;
    struct run_rec h;
    uint64_t states;

    if (i != se->next) return 1; /* past a gap (the search was stopped): not searched in order */
    if (rec == NULL || len < sizeof h || (memcpy(&h, rec, sizeof h), h.nlog > COVER_LOG_MAX) ||
        len != sizeof h + 4 * (size_t)h.nlog) {
        /* The worker died, or sent what is not a record; one that exited 70
         * could not compute its run (out of memory: pool.h). */
        se->rc = rec == NULL && WIFEXITED(status) && WEXITSTATUS(status) == 70 ? LSIM_ENOMEM : LSIM_EINTERNAL;
        return 1;
    }
    if (o->time_s > 0 && i > 0 && i % EXPLORE_BATCH == 0 && explore_now_s() - se->t0 >= o->time_s)
        return 1; /* the time is up, at a whole batch */
    se->next++;
    r->runs++;
    if (h.rc < 0) {
        se->rc = h.rc;
        return 1;
    }
    if (c->nranged > 0 && (i == 0 || i / EXPLORE_PARAM_EPOCH != (i - 1) / EXPLORE_PARAM_EPOCH)) c->cover.params++;
    explore_cover_apply(c, (const char *)rec + sizeof h, (int)h.nlog);
    for (states = h.states; states; states &= states - 1) /* each state reached, once per run */
        c->cover.state_runs[__builtin_ctzll(states)]++;
    if (h.rc == 2) c->cover.truncated++;
    if (h.rc == 1) {
        r->first_fail = i;
        return 1;
    }
    return 0;
}

int explore_search(struct ctx *c, struct explore_result *r) {
    const struct explore_opts *o = c->o;
    uint64_t nbatches = o->budget ? (o->budget + EXPLORE_BATCH - 1) / EXPLORE_BATCH : 0;
    struct search se = {.c = c, .r = r, .t0 = explore_now_s()};
    struct pool p = {.lo = 0,
                     /* the budget in whole batches; a time limit alone, no end;
                        neither: one batch */
                     .hi = nbatches        ? (size_t)(nbatches * EXPLORE_BATCH)
                           : o->time_s > 0 ? SIZE_MAX / 2
                                           : EXPLORE_BATCH,
                     .jobs = o->jobs,
                     .in_process = 1,
                     .rec_max = sizeof(struct run_rec) + 4 * COVER_LOG_MAX,
                     .flush_bytes = 16384, /* a hundred runs or so: a failure is sent at once */
                     .compute = compute,
                     .take = take,
                     .arg = &se,
                     .stop = o->stop};
    size_t done;
    int rc;

    r->first_fail = UINT64_MAX;
    rc = pool_run(&p, &done);
    r->seconds = explore_now_s() - se.t0;
    r->found = r->first_fail != UINT64_MAX;
    if (se.rc) return se.rc;
    if (rc < 0) return rc; /* LSIM_ENOMEM or LSIM_EINTERNAL */
    return rc == 1 && !r->found ? LSIM_EINTERRUPTED : 0;
}
