/* The explorer's shrink passes on ranged params (explore_int.h): back to
 * their defaults or rounded, then bisected to the tick between the failing
 * value and the nearest value known to pass, each boundary checked again
 * once the fault sizes were bisected too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "explore_int.h"

/* Params back to their defaults, else to a round value. */
int explore_pass_params(struct shrink *sh) {
    struct ctx *c = sh->c;
    int k, g, changed = 0, rc;

    for (k = 0; k < c->nranged; k++) {
        const struct scn_param *q = &c->own.params[c->ranged[k]];
        char keep[SET_MAX];
        const char *eq = strchr(sh->sets[k], '=');
        int64_t v = 0;
        if (q->range == SCN_RANGE_DURATION) scn_parse_duration(eq + 1, &v);
        else scn_parse_int(eq + 1, &v);
        memcpy(keep, sh->sets[k], sizeof keep);
        snprintf(sh->sets[k], sizeof keep, "%s=%s", q->name, q->def);
        if (strcmp(keep, sh->sets[k]) == 0) continue;
        if ((rc = explore_still_fails(sh)) < 0) return rc;
        if (rc) {
            explore_step(sh, "param %s back to its default %s", q->name, q->def);
            changed = 1;
            continue;
        }
        for (g = 0; g < EXPLORE_NLADDER; g++) {
            sim_ns unit = q->range == SCN_RANGE_DURATION ? explore_ladder[g] : (g == 0 ? 10 : 1);
            int64_t r0 = (v + unit / 2) / unit * unit;
            char a[48];
            if (q->range != SCN_RANGE_DURATION && g > 1) break;
            if (r0 < q->min || r0 > q->max || r0 == v) continue;
            if (q->range == SCN_RANGE_DURATION)
                snprintf(sh->sets[k], sizeof keep, "%s=%s", q->name, explore_dur(a, r0));
            else snprintf(sh->sets[k], sizeof keep, "%s=%lld", q->name, (long long)r0);
            if ((rc = explore_still_fails(sh)) < 0) return rc;
            if (rc) {
                explore_step(sh, "param %s rounded to %s", q->name, strchr(sh->sets[k], '=') + 1);
                changed = 1;
                break;
            }
        }
        if (g == EXPLORE_NLADDER || (q->range != SCN_RANGE_DURATION && g > 1)) memcpy(sh->sets[k], keep, sizeof keep);
    }
    return changed;
}

/* A param's value as text (ns for a duration, else units); 0, or nonzero. */
static int param_read(const struct scn_param *q, const char *text, int64_t *v) {
    return q->range == SCN_RANGE_DURATION ? scn_parse_duration(text, v) : scn_parse_int(text, v);
}

/* The value of a NAME=VALUE text of sets[]. */
static int param_value(const struct scn_param *q, const char *set, int64_t *v) {
    const char *eq = strchr(set, '=');

    return eq == NULL ? -1 : param_read(q, eq + 1, v);
}

static void param_set(const struct scn_param *q, char *set, int64_t v) {
    char a[48];

    if (q->range == SCN_RANGE_DURATION) snprintf(set, SET_MAX, "%s=%s", q->name, explore_dur(a, v));
    else snprintf(set, SET_MAX, "%s=%lld", q->name, (long long)v);
}

static const char *param_text(const struct scn_param *q, char *buf, int64_t v) {
    if (q->range == SCN_RANGE_DURATION) return explore_dur(buf, v);
    snprintf(buf, 48, "%lld", (long long)v);
    return buf;
}

/* Each ranged param bisected to the tick (1 ns for a duration, 1 for a
 * count) between its failing value and the nearest value known to pass: its
 * default, else an end of its range. What is left is the failing value
 * closest to that anchor, with the value one tick nearer passing; a param
 * every candidate anchor fails with keeps its value. */
int explore_pass_param_bisect(struct shrink *sh) {
    struct ctx *c = sh->c;
    int k, j, changed = 0, rc;

    for (k = 0; k < c->nranged; k++) {
        const struct scn_param *q = &c->own.params[c->ranged[k]];
        int64_t v, orig, a = 0, cand[3];
        int have = 0;
        char keep[SET_MAX], fails[120], holds[120], t1[48], t2[48];
        if (param_value(q, sh->sets[k], &v) != 0) continue;
        orig = v;
        memcpy(keep, sh->sets[k], sizeof keep);
        if (param_read(q, q->def, &cand[0]) != 0) cand[0] = v; /* skipped below */
        cand[1] = q->min;
        cand[2] = q->max;
        for (j = 0; j < 3 && !have; j++) {
            if (cand[j] == v || cand[j] < q->min || cand[j] > q->max) continue;
            param_set(q, sh->sets[k], cand[j]);
            if ((rc = explore_still_fails(sh)) < 0) return rc;
            if (rc == 0 && sh->last_valid) {
                a = cand[j];
                have = 1;
                explore_outcome_last(sh, holds, sizeof holds);
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
            if ((rc = explore_still_fails(sh)) < 0) return rc;
            if (rc) {
                v = mid;
            } else if (sh->last_valid) {
                a = mid;
                explore_outcome_last(sh, holds, sizeof holds);
            } else {
                break; /* not a valid scenario: stop where we are */
            }
        }
        param_set(q, sh->sets[k], v);
        if ((rc = explore_still_fails(sh)) < 0) return rc;
        if (rc != 1) { /* not monotone after all: keep the value we had */
            memcpy(sh->sets[k], keep, sizeof keep);
            if ((rc = explore_still_fails(sh)) < 0) return rc;
            continue;
        }
        if (v != orig) {
            explore_step(sh, "bisected param %s: %s -> %s", q->name, param_text(q, t1, orig), param_text(q, t2, v));
            changed = 1;
        }
        if ((v > a ? v - a : a - v) == 1 && sh->nparam_boundary < SCN_MAX_PARAMS) {
            explore_outcome(&sh->rep, fails, sizeof fails);
            sh->param_boundary[sh->nparam_boundary].k = k;
            sh->param_boundary[sh->nparam_boundary].fail = v;
            sh->param_boundary[sh->nparam_boundary++].pass = a;
            if (sh->r->nboundary < EXPLORE_MAX_BOUNDARY)
                snprintf(sh->r->boundary[sh->r->nboundary++], sizeof sh->r->boundary[0],
                         "param %.48s %s: %.100s; %s (1 %s %s): %.100s", q->name, param_text(q, t1, v), fails,
                         param_text(q, t2, a), q->range == SCN_RANGE_DURATION ? "ns" : "tick", a < v ? "less" : "more",
                         holds);
        }
    }
    return changed;
}

/* After the fault sizes were bisected too: does the tick next to each param
 * boundary still pass? If not, its boundary line says so. */
int explore_recheck_param_boundaries(struct shrink *sh) {
    int i, b = 0, rc;

    if (sh->nparam_boundary == 0) return 0;
    for (i = 0; i < sh->nparam_boundary; i++) {
        const struct scn_param *q = &sh->c->own.params[sh->c->ranged[sh->param_boundary[i].k]];
        char keep[SET_MAX], *line;
        memcpy(keep, sh->sets[sh->param_boundary[i].k], sizeof keep);
        param_set(q, sh->sets[sh->param_boundary[i].k], sh->param_boundary[i].pass);
        rc = explore_still_fails(sh);
        memcpy(sh->sets[sh->param_boundary[i].k], keep, sizeof keep);
        if (rc < 0) return rc;
        /* The boundary line of this param: the i-th that starts with "param ". */
        for (line = NULL; b < sh->r->nboundary; b++)
            if (strncmp(sh->r->boundary[b], "param ", 6) == 0) {
                line = sh->r->boundary[b++];
                break;
            }
        if (rc == 1 && line) {
            size_t l = strlen(line);
            snprintf(line + l, sizeof sh->r->boundary[0] - l, " (before the fault sizes were bisected; it fails now)");
        }
    }
    rc = explore_still_fails(sh);
    return rc == 1 ? 0 : rc < 0 ? rc : LSIM_EINTERNAL; /* out of memory stays itself */
}
