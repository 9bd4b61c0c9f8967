/* The explorer's counterexample file (explore_int.h): the shrunk candidate
 * printed as a scenario, expect lines that pin its failure, and a comment
 * saying how it was found and shrunk. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "explore_int.h"

/* ---- The counterexample file --------------------------------------------------------- */

static int add_expect(struct scenario *s, enum scn_metric m, enum scn_cmp cmp, int64_t v, const char *text) {
    struct scn_expect *x = scenario_add_expect(s);

    if (x == NULL) return LSIM_ENOMEM;
    x->metric = m;
    x->cmp = cmp;
    x->value = v;
    snprintf(x->text, sizeof x->text, "%s", text);
    return 0;
}

int explore_write_file(struct shrink *sh, const char *algo) {
    struct explore_result *r = sh->r;
    struct scenario s;
    const struct checker_report *rep = &sh->rep;
    char *body, head[EXPLORE_MAX_STEPS * 200 + 4096], line[256];
    size_t blen, hl = 0;
    int i, rc;

    if ((rc = explore_build(sh, &s)) != 0) return rc < 0 ? rc : LSIM_EINTERNAL;
    s.nexpects = 0;
    char verdict[40];
    snprintf(verdict, sizeof verdict, "verdict %s", scn_verdict_name(rep->verdict));
    rc = add_expect(&s, SCN_M_VERDICT, SCN_CMP_EQ, rep->verdict, verdict);
    if (!rc && rep->double_entries) rc = add_expect(&s, SCN_M_DOUBLE_ENTRIES, SCN_CMP_GE, 1, "double-entry");
    if (!rc && rep->stale_accepted) rc = add_expect(&s, SCN_M_STALE_ACCEPTED, SCN_CMP_GE, 1, "stale-write accepted");
    if (!rc && rep->lost_updates) rc = add_expect(&s, SCN_M_LOST_UPDATES, SCN_CMP_GE, 1, "lost-update");
    if (!rc && rep->wrong_releases) rc = add_expect(&s, SCN_M_WRONG_RELEASES, SCN_CMP_GE, 1, "wrong-release");
    if (!rc && rep->stuck) rc = add_expect(&s, SCN_M_STUCK, SCN_CMP_GE, 1, "stuck");
    if (!rc) {
        char t[SCN_TEXT_MAX];
        snprintf(t, sizeof t, "%.100s (explored: %s)", s.title[0] ? s.title : "scenario", algo);
        memcpy(s.title, t, sizeof t);
        rc = scenario_print(&s, &body, &blen);
    }
    r->faults_shrunk = s.nfaults;
    r->clients_shrunk = s.nclients;
    scenario_close(&s);
    if (rc) return rc;
#define HEAD(...) \
    do { \
        int n_ = snprintf(head + hl, sizeof head - hl, __VA_ARGS__); \
        if (n_ > 0) hl += (size_t)n_ < sizeof head - hl ? (size_t)n_ : sizeof head - hl - 1; \
    } while (0)
    HEAD("# Found by `%s`:\n", sh->c->o->command ? sh->c->o->command : "locksim explore");
    HEAD("# explorer seed %llu, run %llu of the search (%llu runs to the first failure),\n",
         (unsigned long long)sh->c->o->seed, (unsigned long long)r->first_fail, (unsigned long long)r->first_fail + 1);
    HEAD("# %d fault%s and %d client%s then; shrunk in %d steps (%llu runs) to %d fault%s and %d "
         "client%s.\n",
         r->faults_found, r->faults_found == 1 ? "" : "s", r->clients_found, r->clients_found == 1 ? "" : "s",
         r->nsteps, (unsigned long long)r->shrink_runs, r->faults_shrunk, r->faults_shrunk == 1 ? "" : "s",
         r->clients_shrunk, r->clients_shrunk == 1 ? "" : "s");
    for (i = 0; i < r->nsteps && i < EXPLORE_MAX_STEPS; i++) {
        snprintf(line, sizeof line, "#   %d. %s\n", i + 1, r->steps[i]);
        HEAD("%s", line);
    }
    for (i = 0; i < r->nboundary; i++) HEAD("# Boundary: %s.\n", r->boundary[i]);
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
