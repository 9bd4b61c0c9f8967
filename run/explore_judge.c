/* Running one candidate of the explorer (explore_int.h): the scenario with
 * extra faults in the parser's order, through the engine, judged by the
 * file's expect lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "explore_int.h"

/* ---- Building and judging a run ---------------------------------------------------- */

/* Faults in the order the parser keeps them: those at named points first
 * (their order among themselves kept), then the timed ones by time (stable). */
int explore_fault_before(const struct scn_fault *a, const struct scn_fault *b) {
    int pa = a->point != SCN_POINT_NONE, pb = b->point != SCN_POINT_NONE;

    if (pa != pb) return pa;
    return !pa && a->at_ns < b->at_ns;
}

void explore_sort_faults(struct scn_fault *f, int n) {
    int i, j;

    for (i = 1; i < n; i++) { /* insertion sort: stable, and n is small */
        struct scn_fault t = f[i];
        for (j = i; j > 0 && explore_fault_before(&t, &f[j - 1]); j--) f[j] = f[j - 1];
        f[j] = t;
    }
}

/* The violation kinds of a report, as bits, for "fails the same way". */
unsigned explore_violations(const struct checker_report *r) {
    return (r->double_entries > 0) | (r->stale_accepted > 0) << 1 | (r->lost_updates > 0) << 2 |
           (r->wrong_releases > 0) << 3 | (r->stuck > 0) << 4;
}

/* 1 when the finished run breaks the scenario's expect lines (or, with
 * none, is not SAFE); 0 otherwise; -1 when it was cut short. */
static int judge(const struct scenario *s, struct engine *e) {
    const struct checker_report *r = engine_report(e);
    int i;

    if (engine_truncated(e)) return -1;
    if (s->nexpects == 0) return r->verdict != SCN_VERDICT_SAFE;
    for (i = 0; i < s->nexpects; i++)
        if (!checker_expect_holds(r, &s->expects[i], NULL)) return 1;
    return 0;
}

/* Run s with extra faults (a read-only view: engine_new copies it). The
 * faults are put in the parser's order through an index sort, so each
 * (large) fault is copied once. */
int explore_try(struct ctx *c, const struct scenario *s, struct scn_fault *extra, int nextra,
                struct checker_report *rep, uint64_t *states) {
    struct scenario view = *s; /* shallow: only read, never closed */
    struct scn_fault stack[32], *all = stack;
    const struct scn_fault *ptr[2 * MAX_DRAWN + 64], **order = ptr;
    struct engine *e;
    struct scn_error err;
    int n = s->nfaults + nextra, rc, i, j;

    if (n > (int)(sizeof stack / sizeof stack[0]) && (all = malloc((size_t)n * sizeof *all)) == NULL)
        return LSIM_ENOMEM;
    if (n > (int)(sizeof ptr / sizeof ptr[0]) && (order = malloc((size_t)n * sizeof *order)) == NULL) {
        if (all != stack) free(all);
        return LSIM_ENOMEM;
    }
    for (i = 0; i < n; i++) { /* insertion sort of pointers: stable */
        const struct scn_fault *f = i < s->nfaults ? &s->faults[i] : &extra[i - s->nfaults];
        for (j = i; j > 0 && explore_fault_before(f, order[j - 1]); j--) order[j] = order[j - 1];
        order[j] = f;
    }
    for (i = 0; i < n; i++) all[i] = *order[i];
    if (order != ptr) free(order);
    view.faults = all;
    view.nfaults = view.cap_faults = n;
    rc = engine_new(&e, &view, &c->eo, &err);
    if (all != stack) free(all);
    if (rc != 0) return rc == LSIM_ENOMEM ? LSIM_ENOMEM : LSIM_EPARSE; /* engine_new's codes are error.h's */
    engine_run(e);
    if (engine_trace(e)->oom) { /* a run that lost events decides nothing: out of memory, as run says */
        engine_free(e);
        return LSIM_ENOMEM;
    }
    rc = judge(s, e);
    if (rep) *rep = *engine_report(e);
    if (states) *states = engine_states_reached(e);
    engine_free(e);
    return rc == -1 ? 2 : rc; /* 2: cut short */
}
