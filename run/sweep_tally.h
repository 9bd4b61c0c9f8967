/* The cells of a sweep (issue 22): one run of a grid cell and algorithm,
 * summarized as batch judges it, and the counts by class per cell that
 * the heatmap (render/heatmap_svg.h) draws. Platform-free, so both the
 * command line (cli/cmd_sweep.c, runs on worker processes) and the web
 * page (web/web_sweep.c, runs in a Web Worker) tally alike and draw the
 * same picture. */
#ifndef LOCKSIM_SWEEP_TALLY_H
#define LOCKSIM_SWEEP_TALLY_H

#include <stddef.h>

#include "heatmap_svg.h"
#include "report.h"
#include "run.h"

/* Run spec and summarize it into *sum as a sweep's run: judged by its
 * expect lines, and a row the algorithm cannot run (swapped: spec names an
 * algorithm) is skipped (LSIM_ESKIPPED) with why. Out of memory leaves
 * sum->rc LSIM_ENOMEM with its message. Close sum with report_summary_close. */
void sweep_run_one(const struct run_spec *spec, struct report_summary *sum);

/* Counts per (algorithm, cell) and the first error of each. */
struct sweep_tally {
    struct heatmap_cell *cells; /* owned: [algo][cell] */
    char (*error)[200];         /* owned: [algo][cell], "" when none */
    char (*algo_ran)[48];       /* owned: [algo], the name of the algorithm that ran */
    int nalgos, ncells;
    char title[160]; /* the scenario's title, from the first run in the list that has one */
    size_t title_at; /* that run's index, + 1 (0: none yet) */
};
/* Zeroed counts for nalgos x ncells. 0, or LSIM_ENOMEM (then close it). */
int sweep_tally_init(struct sweep_tally *t, int nalgos, int ncells);
void sweep_tally_close(struct sweep_tally *t);
/* Count run i of the list (algo: its algorithm's index, -1 = the
 * scenario's own; cell: its grid cell) from its summary. The lowest index
 * names the title, so any delivery order titles alike. */
void sweep_tally_add(struct sweep_tally *t, size_t i, int algo, int cell, const struct report_summary *s);

/* The heatmap of the tally: panels[] (t->nalgos, the caller's array)
 * receives the names, algo_reg[a] when given, else the algorithm that ran;
 * h borrows panels, the axes and t. y_key NULL for one axis; one facet and
 * one section (nz = nw = 1) until the caller sets z_* and w_*. The title is
 * the scenario's, or subtitle (the file name) when it has none. */
void sweep_tally_heatmap(const struct sweep_tally *t, const char *const *algo_reg, const char **panels,
                         const char *subtitle, const char *x_key, const char *const *x_vals, int nx, const char *y_key,
                         const char *const *y_vals, int ny, struct heatmap *h);

#endif
