/* The explorer (explore.h): draw runs from a scenario's fault budget, run
 * them on the worker pool in index order, and shrink the first failing run
 * to a small scenario file; this file checks the scenario, sets up the
 * search's inputs and sums up its coverage (the jobs: explore_int.h). Swarm mode follows
 * FoundationDB's simulation testing and Groce et al., "Swarm Testing"
 * (ISSTA 2012): each run enables only a random subset of the fault kinds, so
 * that a fault kind that masks another is sometimes absent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "explore_int.h"

/* ---- The whole exploration ------------------------------------------------------------ */

/* Remove options the algorithm does not take (as --algo does), so the
 * file written names only options it reads. */
static int swap_algo(struct ctx *c, char *err, size_t errlen) {
    struct engine *e;
    struct scn_error se;
    struct engine_opts eo = {.algo = c->o->algo, .lenient_options = 1};
    const char *dropped;
    int rc, i, k;

    rc = engine_new(&e, &c->own, &eo, &se);
    if (rc == LSIM_ENOMEM) /* engine_new's codes are error.h's (engine.h) */
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
            if (l == len && strncmp(p, o, len) == 0) drop = 1;
            p += l;
            while (*p == ' ') p++;
        }
        if (!drop) c->own.opts[k++] = c->own.opts[i];
    }
    c->own.nopts = k;
    /* The file's `resource fencing=` describes the resource of the algorithm
     * it names; one swapped in keeps its own rule, as the engine has it
     * (engine_opts.algo). The copy is about to name the swapped-in algorithm
     * itself, so it no longer says fencing= was stated: fenced-lease still
     * fences on a plain-lease file whose resource line says fencing=off. */
    if (lock_algo_find(c->own.algo) != c->o->algo) c->own.fencing_stated = 0;
    snprintf(c->own.algo, sizeof c->own.algo, "%s", c->o->algo->name);
    engine_free(e);
    return 0;
}

int explore_run(const struct scenario *base, const struct explore_opts *o, struct explore_result *r, char *err,
                size_t errlen) {
    struct ctx *c;
    const struct lock_algo *a;
    int i, k, rc, any = 0;

    memset(r, 0, sizeof *r);
    for (k = 0; k < SCN_NEM_COUNT; k++) any |= base->explore.given && base->explore.k[k].max > 0;
    for (i = 0; i < base->nparams; i++)
        any |= base->params[i].range != SCN_RANGE_NONE && base->params[i].min < base->params[i].max;
    if (!any) {
        snprintf(err, errlen,
                 "%s has nothing to explore: add a fault budget such as `explore "
                 "pauses<=2 length=1s..60s; clock-steps<=1 on servers delta=-30s..30s; "
                 "crashes<=1`, or give a param a range (`param pause=27s range=0s..60s`); see "
                 "docs/scenario-format.md, \"Exploring\"",
                 base->file);
        return LSIM_EUSAGE;
    }
    if ((c = calloc(1, sizeof *c)) == NULL) return LSIM_ENOMEM;
    c->o = o;
    if (scenario_copy(&c->own, base) != 0) {
        free(c);
        return LSIM_ENOMEM;
    }
    rc = 0;
    if (o->algo && (rc = swap_algo(c, err, errlen)) != 0) goto out;
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
        c->points[i] = explore_program_points(&c->own.programs[c->own.clients[i].program]);
    c->eo.algo = o->algo; /* its options are now only those it takes */
    /* Check once that the scenario builds, with its message when it does not. */
    {
        struct engine *e;
        struct scn_error se;
        rc = engine_new(&e, &c->own, &c->eo, &se);
        if (rc != 0) {
            if (rc == LSIM_ENOMEM) snprintf(err, errlen, "%s", lsim_strerror(LSIM_ENOMEM)); /* se untouched */
            else scn_error_place(err, errlen, &se);
            rc = rc == LSIM_ENOMEM ? LSIM_ENOMEM : LSIM_EUSAGE;
            goto out;
        }
        r->algo = engine_algo(e); /* the one that runs: built in, swapped in, or a plugin */
        engine_free(e);
    }
    rc = explore_search(c, r);
    r->cover = c->cover;
    if (rc == 0 && r->found) rc = explore_shrink(c, r, c->own.algo);
    for (i = 0; i < (int)(BITMAP_BITS / 8); i++) r->cover.placements += (uint64_t)__builtin_popcount(c->bitmap[i]);
    for (k = 0; k < SCN_NEM_COUNT; k++) {
        const struct scn_budget *b = &c->own.explore.k[k];
        sim_ns lo = b->at_lo_ns, hi = b->at_hi_ns ? b->at_hi_ns : c->own.duration_ns - 1;
        uint64_t places = 0;
        if (!c->own.explore.given || b->max == 0) continue;
        if (hi >= c->own.duration_ns) hi = c->own.duration_ns - 1;
        places = (uint64_t)(hi / SIM_NS_PER_S - lo / SIM_NS_PER_S + 1);
        if (b->points && k != SCN_NEM_LATENCY)
            for (i = 0; i < c->own.nclients; i++) places += (uint64_t)__builtin_popcount(c->points[i]);
        r->cover.placements_possible += places * (uint64_t)explore_target_count(c, b);
    }
    if (rc == LSIM_EINTERNAL && !err[0] && c->unparsed_first)
        snprintf(err, errlen,
                 "the explorer failed: the counterexample, written as a file, does not "
                 "parse back (%s); a --set may have made a scenario its file could not say",
                 c->unparsed);
    else if (rc == LSIM_EINTERNAL && !err[0])
        snprintf(err, errlen,
                 "the explorer failed (a worker process, or a counterexample that "
                 "did not fail once written)");
out:
    if (c->epoch_ok) scenario_close(&c->epoch_scn);
    scenario_close(&c->own);
    free(c->points);
    free(c->bitmap);
    free(c);
    return rc;
}

void explore_result_close(struct explore_result *r) {
    free(r->text);
    r->text = NULL;
    r->len = 0;
}
