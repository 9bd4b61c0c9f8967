/* The shrinker's candidate (explore_int.h): a candidate built as the file
 * will say it, whether it still fails the same way, how a run ended in a few
 * words, and the steps log. Used by the passes (explore_shrink.c,
 * explore_params.c) and by the writer (explore_write.c), below all three, so
 * that none of them includes another's functions in a circle. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "explore_int.h"
/* How a run ended, in a few words: "SAFE", "UNSAFE with a stale write". */
void explore_outcome(const struct checker_report *r, char *buf, size_t n) {
    static const char *const kinds[5] = {"double entry", "stale write", "lost update", "wrong release", "stuck client"};
    unsigned v = explore_violations(r);
    size_t l;
    int k, first = 1;

    snprintf(buf, n, "%s", scn_verdict_name(r->verdict));
    for (k = 0; k < 5; k++) {
        if (!((v >> k) & 1)) continue;
        l = strlen(buf);
        snprintf(buf + l, n - l, "%s%s", first ? " with a " : ", a ", kinds[k]);
        first = 0;
    }
}

/* The outcome of the last run made, for the passing side of a boundary:
 * with expect lines that it kept, it says so (its verdict may be UNSAFE
 * when the file expects UNSAFE). */
void explore_outcome_last(const struct shrink *sh, char *buf, size_t n) {
    size_t l;

    explore_outcome(&sh->last, buf, n);
    l = strlen(buf);
    if (sh->last_held && sh->c->own.nexpects > 0) snprintf(buf + l, n - l, " (the file's expect lines hold)");
}

/* The candidate as a parsed scenario: params applied, faults of the units,
 * dropped clients removed, then printed and parsed back, so that what runs
 * is exactly what the file will say. 0, 1 (not a valid scenario), < 0. */
int explore_build(struct shrink *sh, struct scenario *out) {
    struct ctx *c = sh->c;
    struct scenario s;
    struct scn_error err;
    char *text;
    size_t len;
    int i, j, k, rc;

    struct scn_fault *file_faults;
    int nfile;

    if ((rc = explore_apply_params(c, sh->sets, &s)) != 0) return rc == LSIM_ENOMEM ? rc : 1;
    nfile = s.nfaults;
    file_faults = malloc((size_t)(nfile + 1) * sizeof *file_faults);
    if (file_faults == NULL) {
        scenario_close(&s);
        return LSIM_ENOMEM;
    }
    if (nfile) memcpy(file_faults, s.faults, (size_t)nfile * sizeof *file_faults);
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
            if (sh->u[i].moved) f->at_ns = sh->u[i].f[0].at_ns;
        }
    free(file_faults);
    explore_sort_faults(s.faults, s.nfaults);
    for (i = 0, k = 0; i < s.nclients; i++)
        if (!sh->dropped[i]) s.clients[k++] = s.clients[i];
    s.nclients = k;
    s.nparams = 0; /* printed as values */
    s.explore.given = 0;
    rc = scenario_print(&s, &text, &len);
    scenario_close(&s);
    if (rc != 0) return LSIM_ENOMEM;
    scenario_init(out);
    rc = scenario_parse(out, c->own.file, text, len, &err);
    free(text);
    if (rc == LSIM_ENOMEM) return rc;
    if (rc != 0) {
        snprintf(c->unparsed, sizeof c->unparsed, "line %d col %d: %s", err.pos.line, err.pos.col, err.msg);
        scenario_close(out);
        return 1;
    }
    return 0;
}

/* 1 when the candidate still fails the same way, 0 when not (or invalid). */
int explore_still_fails(struct shrink *sh) {
    struct scenario s;
    struct checker_report rep;
    int rc;

    sh->last_valid = 0;
    if (explore_stopped(sh->c)) return LSIM_EINTERRUPTED;
    rc = explore_build(sh, &s);
    if (rc != 0) return rc < 0 ? rc : 0;
    sh->r->shrink_runs++;
    rc = explore_try(sh->c, &s, NULL, 0, &rep, NULL);
    scenario_close(&s);
    if (rc < 0) return rc;
    sh->last = rep;
    sh->last_valid = 1;
    sh->last_held = rc == 0;
    if (rc != 1 || rep.verdict != sh->verdict || (explore_violations(&rep) & sh->kinds) != sh->kinds) return 0;
    sh->rep = rep;
    return 1;
}

void explore_step(struct shrink *sh, const char *fmt, ...) {
    struct explore_result *r = sh->r;
    va_list ap;

    if (r->nsteps < EXPLORE_MAX_STEPS) {
        va_start(ap, fmt);
        vsnprintf(r->steps[r->nsteps], sizeof r->steps[0], fmt, ap);
        va_end(ap);
    }
    r->nsteps++;
}
