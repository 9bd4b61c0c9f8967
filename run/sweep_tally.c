/* A sweep's runs and cells (sweep_tally.h), shared by `locksim sweep` and
 * the web page's sweep tab. */
#include "sweep_tally.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sweep_run_one(const struct run_spec *spec, struct report_summary *sum) {
    struct run_result r;
    run_scenario(spec, &r);
    if (run_cannot_run(&r, spec->algo || spec->algo_resolved)) r.rc = LSIM_ESKIPPED; /* a row skipped, said why */
    if (report_summarize(sum, spec->file, &r, 1) != 0) {
        memset(sum, 0, sizeof *sum);
        sum->rc = sum->outcome = LSIM_ENOMEM;
        snprintf(sum->error, sizeof sum->error, "%s", lsim_strerror(LSIM_ENOMEM));
    }
    run_result_close(&r);
}

int sweep_tally_init(struct sweep_tally *t, int nalgos, int ncells) {
    memset(t, 0, sizeof *t);
    t->nalgos = nalgos;
    t->ncells = ncells;
    t->cells = calloc((size_t)nalgos * (size_t)ncells, sizeof *t->cells);
    t->error = calloc((size_t)nalgos * (size_t)ncells, sizeof *t->error);
    t->algo_ran = calloc((size_t)nalgos, sizeof *t->algo_ran);
    return t->cells && t->error && t->algo_ran ? 0 : LSIM_ENOMEM;
}

void sweep_tally_close(struct sweep_tally *t) {
    free(t->cells);
    free(t->error);
    free(t->algo_ran);
    memset(t, 0, sizeof *t);
}

void sweep_tally_add(struct sweep_tally *t, size_t i, int algo, int cell, const struct report_summary *s) {
    int a = algo < 0 ? 0 : algo;
    if (s->title[0] && (!t->title_at || i + 1 < t->title_at)) {
        snprintf(t->title, sizeof t->title, "%s", s->title);
        t->title_at = i + 1;
    }
    size_t at = (size_t)a * (size_t)t->ncells + (size_t)cell;
    t->cells[at].count[heatmap_classify(&s->rep, s->rc != 0)]++;
    if (s->rc && !t->error[at][0]) snprintf(t->error[at], sizeof t->error[at], "%.199s", s->error);
    if (!s->rc && !t->algo_ran[a][0]) snprintf(t->algo_ran[a], sizeof t->algo_ran[a], "%s", s->algo);
}

void sweep_tally_heatmap(const struct sweep_tally *t, const char *const *algo_reg, const char **panels,
                         const char *subtitle, const char *x_key, const char *const *x_vals, int nx, const char *y_key,
                         const char *const *y_vals, int ny, struct heatmap *h) {
    for (int a = 0; a < t->nalgos; a++) panels[a] = algo_reg ? algo_reg[a] : t->algo_ran[a];
    *h = (struct heatmap){.title = t->title[0] ? t->title : subtitle,
                          .subtitle = subtitle,
                          .x_key = x_key,
                          .y_key = y_key,
                          .x_vals = x_vals,
                          .nx = nx,
                          .y_vals = y_key ? y_vals : NULL,
                          .ny = y_key ? ny : 1,
                          .nz = 1, /* a third and fourth key: the caller sets z_* and w_* */
                          .nw = 1,
                          .panels = panels,
                          .npanels = t->nalgos,
                          .cells = t->cells};
}
