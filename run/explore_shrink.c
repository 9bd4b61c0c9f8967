/* Shrinking the explorer's first failure (explore_int.h): the failing run
 * re-drawn as units, then passes that drop faults and clients, move times
 * earlier and rounder and shorten sizes, repeated while they change
 * anything, then bisection to the tick; every candidate is built as the
 * file will say it and must fail the same way (explore_candidate.c). The
 * param passes are in explore_params.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "explore_int.h"

/* A fault in a few words, for the steps: "pause A 27.5s at 5s". */
static void describe(const struct scn_fault *f, char *buf, size_t n) {
    char a[48], b[48];
    const char *when = f->point != SCN_POINT_NONE ? "on" : "at";
    char where[2 * SCN_NAME_MAX + 32];

    if (f->point != SCN_POINT_NONE) snprintf(where, sizeof where, "%s.%s", f->trigger, scn_point_name(f->point));
    else snprintf(where, sizeof where, "%s", explore_dur(a, f->at_ns));
    switch (f->kind) {
    case SCN_FAULT_PAUSE: snprintf(buf, n, "pause %s %s %s %s", f->node, explore_dur(b, f->dur_ns), when, where); break;
    case SCN_FAULT_CLOCK_STEP:
        snprintf(buf, n, "clock %s step %s %s %s", f->node, explore_dur(b, f->delta_ns), when, where);
        break;
    case SCN_FAULT_LINK:
        snprintf(buf, n, "link %s %s latency %s %s %s", f->link.from, f->link.to, explore_dur(b, f->link.lat.min_ns),
                 when, where);
        break;
    default: snprintf(buf, n, "%s %s %s %s", scn_fault_name(f->kind), f->node, when, where); break;
    }
}

static int pass_drop_units(struct shrink *sh) {
    int i, changed = 0, rc;

    for (i = sh->nu - 1; i >= 0; i--) {
        struct unit keep = sh->u[i];
        char d[200];
        memmove(&sh->u[i], &sh->u[i + 1], (size_t)(sh->nu - i - 1) * sizeof *sh->u);
        sh->nu--;
        if ((rc = explore_still_fails(sh)) < 0) return rc;
        if (rc) {
            describe(&keep.f[0], d, sizeof d);
            explore_step(sh, "dropped %s%s", d,
                         keep.n == 2 ? (keep.f[1].kind == SCN_FAULT_RESTART ? " (and its restart)" : " (and its end)")
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
static int client_named(const struct shrink *sh, const char *name) {
    const struct scenario *s = &sh->c->own;
    int i, j, g, k;

    for (i = 0; i < sh->nu; i++)
        for (j = 0; j < sh->u[i].n; j++) {
            const struct scn_fault *f = &sh->u[i].f[j];
            if (strcmp(f->node, name) == 0 || strcmp(f->trigger, name) == 0 || strcmp(f->link.from, name) == 0 ||
                strcmp(f->link.to, name) == 0)
                return 1;
            for (g = 0; g < f->ngroups; g++)
                for (k = 0; k < f->group_len[g]; k++)
                    if (strcmp(f->groups[g][k], name) == 0) return 1;
        }
    for (i = 0; i < s->nlinks; i++)
        if (strcmp(s->links[i].from, name) == 0 || strcmp(s->links[i].to, name) == 0) return 1;
    for (i = 0; i < s->nclocks; i++)
        if (strcmp(s->clocks[i].node, name) == 0) return 1;
    return 0;
}

static int pass_drop_clients(struct shrink *sh) {
    const struct scenario *s = &sh->c->own;
    int i, left = 0, changed = 0, rc;

    for (i = 0; i < s->nclients; i++) left += !sh->dropped[i];
    for (i = s->nclients - 1; i >= 0 && left > 1; i--) {
        if (sh->dropped[i] || client_named(sh, s->clients[i].name)) continue;
        sh->dropped[i] = 1;
        if ((rc = explore_still_fails(sh)) < 0) return rc;
        if (rc) {
            explore_step(sh, "dropped client %s", s->clients[i].name);
            left--;
            changed = 1;
        } else {
            sh->dropped[i] = 0;
        }
    }
    return changed;
}

/* Round values, coarsest first. */
const sim_ns explore_ladder[EXPLORE_NLADDER] = {60 * SIM_NS_PER_S,  10 * SIM_NS_PER_S,   5 * SIM_NS_PER_S,
                                                SIM_NS_PER_S,       500 * SIM_NS_PER_MS, 100 * SIM_NS_PER_MS,
                                                10 * SIM_NS_PER_MS, SIM_NS_PER_MS,       SIM_NS_PER_US};

/* Move a timed unit to an earlier, rounder time (its second line keeps its
 * distance): 0, then the value rounded down at each step of the ladder. */
static int pass_round_times(struct shrink *sh) {
    int i, g, changed = 0, rc;

    for (i = 0; i < sh->nu; i++) {
        struct unit *v = &sh->u[i];
        sim_ns t = v->f[0].at_ns, gap = v->n == 2 ? v->f[1].at_ns - t : 0;
        int was = v->moved;
        if (v->f[0].point != SCN_POINT_NONE || t == 0) continue;
        for (g = -1; g < EXPLORE_NLADDER; g++) {
            sim_ns cand = g < 0 ? 0 : t / explore_ladder[g] * explore_ladder[g];
            char a[48], b[48];
            if (cand == t) break; /* already as round as this step */
            if (g >= 0 && cand == (g > 0 ? t / explore_ladder[g - 1] * explore_ladder[g - 1] : 0))
                continue; /* the same value as the coarser step, tried */
            v->f[0].at_ns = cand;
            if (v->n == 2) v->f[1].at_ns = cand + gap;
            v->moved = 1;
            if ((rc = explore_still_fails(sh)) < 0) return rc;
            if (rc) {
                explore_step(sh, "moved %s %s from %s to %s", scn_fault_name(v->f[0].kind),
                             v->f[0].node[0] ? v->f[0].node : v->f[0].link.from, explore_dur(a, t),
                             explore_dur(b, cand));
                changed = 1;
                break;
            }
            v->f[0].at_ns = t;
            if (v->n == 2) v->f[1].at_ns = t + gap;
            v->moved = was;
        }
    }
    return changed;
}

/* The sizes a unit has, by slot: 0 pause length, step delta or spike
 * latency; 1 the gap to the second line (down time, spike length). */
static sim_ns *size_slot(struct unit *v, int slot) {
    struct scn_fault *f = &v->f[0];

    if (slot == 1) return NULL; /* the gap is handled through at_ns */
    switch (f->kind) {
    case SCN_FAULT_PAUSE: return f->dur_ns ? &f->dur_ns : NULL;
    case SCN_FAULT_CLOCK_STEP: return &f->delta_ns;
    case SCN_FAULT_LINK: return f->link.lat.min_ns >= 0 ? &f->link.lat.min_ns : NULL;
    default: return NULL;
    }
}

static void set_size(struct unit *v, int slot, sim_ns val) {
    if (slot == 1) {
        v->f[1].at_ns = v->f[0].at_ns + val;
        return;
    }
    *size_slot(v, slot) = val;
    if (v->f[0].kind == SCN_FAULT_LINK) v->f[0].link.lat.max_ns = val;
}

static sim_ns get_size(struct unit *v, int slot) {
    return slot == 1 ? v->f[1].at_ns - v->f[0].at_ns : *size_slot(v, slot);
}

/* Shorten each size: the smallest round value on the ladder that still
 * fails, then bisection between it and the largest value that passes, to
 * the exact tick (1 ns). A clock step shrinks towards 0 keeping its sign. */
static int pass_sizes(struct shrink *sh, int bisect) {
    int i, slot, g, changed = 0, rc;

    for (i = 0; i < sh->nu; i++) {
        struct unit *v = &sh->u[i];
        if (v->kind < 0) continue; /* the file's own faults keep their sizes */
        for (slot = 0; slot < 2; slot++) {
            sim_ns orig, val, sign, lo, hi;
            char a[48], b[48], what[64];
            if (slot == 0 && size_slot(v, 0) == NULL) continue;
            if (slot == 1 && (v->n != 2 || v->f[0].point != SCN_POINT_NONE)) continue;
            orig = val = get_size(v, slot);
            sign = val < 0 ? -1 : 1;
            val *= sign;
            if (val <= 1) continue;
            if (slot == 1)
                snprintf(what, sizeof what, "%s of %s",
                         v->f[1].kind == SCN_FAULT_RESTART ? "down time" : "spike length",
                         v->f[0].node[0] ? v->f[0].node : v->f[0].link.from);
            else
                snprintf(what, sizeof what, "%s %s",
                         v->f[0].kind == SCN_FAULT_PAUSE        ? "pause of"
                         : v->f[0].kind == SCN_FAULT_CLOCK_STEP ? "clock step of"
                                                                : "latency spike of",
                         v->f[0].node[0] ? v->f[0].node : v->f[0].link.from);
            /* The smallest round value that still fails: ascending. */
            lo = 0;
            hi = val;
            for (g = EXPLORE_NLADDER - 1; g >= 0 && !bisect; g--) {
                sim_ns cand;
                for (cand = explore_ladder[g]; cand < hi; cand += explore_ladder[g]) {
                    set_size(v, slot, sign * cand);
                    if ((rc = explore_still_fails(sh)) < 0) return rc;
                    if (rc) {
                        hi = cand;
                        break;
                    }
                    lo = cand > lo ? cand : lo;
                    if (cand / explore_ladder[g] >= 60) break; /* a coarser step will reach further */
                }
            }
            if (bisect) {
                /* 0 passes (or is no fault at all), hi fails: bisect to the tick. */
                lo = 0;
                while (hi - lo > 1 && sh->r->shrink_runs <= SHRINK_MAX_RUNS) {
                    sim_ns mid = lo + (hi - lo) / 2;
                    set_size(v, slot, sign * mid);
                    if ((rc = explore_still_fails(sh)) < 0) return rc;
                    if (rc) hi = mid;
                    else lo = mid;
                }
                if (hi - lo == 1 && lo > 0 && sh->r->nboundary < EXPLORE_MAX_BOUNDARY) {
                    char fails[120], holds[120] = "not a valid scenario";
                    set_size(v, slot, sign * lo);
                    if ((rc = explore_still_fails(sh)) < 0) return rc;
                    if (sh->last_valid) explore_outcome_last(sh, holds, sizeof holds);
                    explore_outcome(&sh->rep, fails, sizeof fails);
                    snprintf(sh->r->boundary[sh->r->nboundary++], sizeof sh->r->boundary[0],
                             "%.60s %s: %.100s; %s (1 ns less): %.100s", what, explore_dur(a, sign * hi), fails,
                             explore_dur(b, sign * lo), holds);
                }
            }
            set_size(v, slot, sign * hi);
            if (explore_still_fails(sh) != 1) { /* not monotone after all: keep the value we had */
                set_size(v, slot, orig);
                if ((rc = explore_still_fails(sh)) < 0) return rc;
                continue;
            }
            if (sign * hi != orig) {
                explore_step(sh, "%s %s: %s -> %s", bisect ? "bisected" : "shortened", what, explore_dur(a, orig),
                             explore_dur(b, sign * hi));
                changed = 1;
            }
        }
    }
    return changed;
}


/* Re-draw the first failing run as units, and shrink it. */
int explore_shrink(struct ctx *c, struct explore_result *r, const char *algo) {
    struct shrink sh;
    struct unit drawn[MAX_DRAWN];
    struct scenario s;
    uint64_t epoch = c->nranged ? r->first_fail / EXPLORE_PARAM_EPOCH : 0;
    double t0 = explore_now_s();
    int i, n, rc, round;

    memset(&sh, 0, sizeof sh);
    sh.c = c;
    sh.r = r;
    explore_draw_params(c, epoch, sh.sets);
    if ((rc = explore_apply_params(c, sh.sets, &s)) != 0) return rc;
    n = explore_draw_faults(c, &s, r->first_fail, drawn, MAX_DRAWN);
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
    for (i = 0; i < n; i++) sh.u[sh.nu++] = drawn[i];
    for (i = 0; i < sh.nu; i++) r->faults_found += sh.u[i].n;
    r->clients_found = s.nclients;
    scenario_close(&s);
    /* The failure to keep: as the first failing run showed it. */
    {
        struct scenario b;
        struct checker_report rep;
        if ((rc = explore_build(&sh, &b)) != 0) {
            c->unparsed_first = rc == 1;
            rc = rc < 0 ? rc : LSIM_EINTERNAL;
            goto out;
        }
        r->shrink_runs++;
        rc = explore_try(c, &b, NULL, 0, &rep, NULL);
        scenario_close(&b);
        if (rc != 1) {
            rc = rc < 0 ? rc : LSIM_EINTERNAL; /* the written form must fail as the run did */
            goto out;
        }
        sh.verdict = rep.verdict;
        sh.kinds = explore_violations(&rep);
        sh.rep = rep;
    }
    for (round = 0; round < 4; round++) {
        int ch = 0;
        if ((rc = explore_pass_params(&sh)) < 0 || (ch |= rc, rc = pass_drop_units(&sh)) < 0) goto out;
        ch |= rc;
        if ((rc = pass_drop_clients(&sh)) < 0) goto out;
        ch |= rc;
        if ((rc = pass_round_times(&sh)) < 0) goto out;
        ch |= rc;
        if ((rc = pass_sizes(&sh, 0)) < 0) goto out;
        ch |= rc;
        if (!ch || r->shrink_runs > SHRINK_MAX_RUNS) break;
    }
    if ((rc = explore_pass_param_bisect(&sh)) < 0 || (rc = pass_sizes(&sh, 1)) < 0 ||
        (rc = explore_recheck_param_boundaries(&sh)) < 0)
        goto out;
    if ((rc = explore_still_fails(&sh)) != 1) {
        rc = rc < 0 ? rc : LSIM_EINTERNAL;
        goto out;
    }
    r->rep = sh.rep;
    rc = explore_write_file(&sh, algo);
out:
    if (rc < 0 && explore_stopped(c)) rc = LSIM_EINTERRUPTED;
    r->shrink_seconds = explore_now_s() - t0;
    free(sh.u);
    free(sh.dropped);
    return rc;
}
