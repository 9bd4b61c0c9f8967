/* A list of runs on forked worker processes, for `batch` and `sweep`: cells
 * (sets of --set overrides) x scenario files x algorithms x seeds. Worker k
 * of N takes runs k, k+N, ...; each result comes back over the worker's pipe
 * as one record (the summary with its empty text cut) and is handed to the
 * caller in list order, whatever the finishing order, so what the caller
 * prints does not depend on the number of workers. A worker that dies fails
 * the run it was in (named with the signal) and a new worker takes the rest
 * of its slice.
 * SIGINT stops the workers; the runs delivered so far stay delivered. */
#ifndef LOCKSIM_FANOUT_H
#define LOCKSIM_FANOUT_H

#include <stddef.h>

#include "cli.h"
#include "report.h"

#define FANOUT_MAX_ALGOS 64

struct fanout {
    /* The list, cell outermost, then file, algorithm, seed innermost. */
    char *const *files; /* borrowed, nfiles paths */
    int nfiles;
    const struct lock_algo *const *algo; /* borrowed, nalgos; 0 = each scenario's own;
                                        NULL when the runs are preloaded (merge) */
    char *const *algo_name;              /* borrowed: the names as written, for messages */
    const char *const *algo_reg;         /* borrowed: the names they are registered under
                                        (a plugin's own name), for tables and panels */
    int nalgos;
    const struct cli_seeds *seeds; /* borrowed: --seeds, when has_seeds */
    int has_seeds;                 /* 0 = each scenario's seed (or seed below) */
    const char *seed;              /* --seed N, or NULL */
    const char *algo_default;      /* --algo NAME when nalgos == 0, or NULL */
    const char *const *sets;       /* borrowed: --set for every run */
    int nsets;
    const char *const *cell_sets; /* borrowed: cell c adds cell_sets[c * cell_nsets ...] */
    int ncells;                   /* 0 counts as 1 */
    int cell_nsets;
    int lenient_sets;                 /* as run_spec.lenient_sets */
    int hold_expects;                 /* --expect: as run_spec.hold_expects */
    long time_limit_s;                /* a run's wall-clock limit, as cli_runopts has it */
    int jobs;                         /* worker processes, >= 1 */
    int progress;                     /* 1 = a progress line on stderr */
    int progress_clears;              /* 1 = rows share its terminal: clear it before each */
    const char *name;                 /* "batch" or "sweep", for the progress line */
    int shard_k, shard_n;             /* --shard K/N: runs fanout_range(); 0 = the whole list */
    struct report_summary *preloaded; /* borrowed (merge): run i's summary is preloaded[i];
                                        fanout_run delivers them instead of running, and
                                        closes each after its sink; NULL = run the list */
};

/* A sweep's varied key: its values, in order. Up to four keys: the first
 * two are a heatmap panel's x and y, the third one panel per value (facets),
 * the fourth a row of facets per value. */
#define FANOUT_MAX_AXES 4
/* The most cells a sweep's grid may have (the product of its axes' values):
 * 1000 x 1000, the most two keys could make before there were four. */
#define FANOUT_MAX_CELLS 1000000
struct fanout_axis {
    char key[128];
    char **vals; /* owned: free with fanout_axis_free */
    int n;
};
void fanout_axis_free(struct fanout_axis *a);
/* Append a value (len bytes) to the axis. 0, or -1 when out of memory. */
int fanout_axis_push(struct fanout_axis *a, const char *v, size_t len);
/* The cells of a sweep over naxes axes (x, the first, varies fastest): each
 * cell sets KEY=VALUE for every axis. Sets f's cells; *cell_sets receives
 * the owned strings (f->ncells x naxes, some NULL after a failure: free
 * each and the array, also after a failure). Returns 0 or LSIM_ENOMEM. */
int fanout_set_axes(struct fanout *f, const struct fanout_axis *ax, int naxes, char ***cell_sets);
/* The cells of the grid ax[0..naxes), or -1 when more than FANOUT_MAX_CELLS. */
long fanout_axes_cells(const struct fanout_axis *ax, int naxes);
/* The index into ax[k].vals of cell c's value of axis k (x fastest). */
int fanout_cell_value(const struct fanout_axis *ax, int k, int c);

/* Runs in the list, and the coordinates of run i. */
size_t fanout_total(const struct fanout *f);
/* The runs this process delivers, [*lo, *hi): the whole list, or the K-th of
 * N contiguous slices (--shard K/N): lo = total * (K-1) / N, hi = total * K / N.
 * The slicing depends only on the list, never on --jobs. */
void fanout_range(const struct fanout *f, size_t *lo, size_t *hi);
int fanout_file(const struct fanout *f, size_t i);
int fanout_algo(const struct fanout *f, size_t i); /* -1 = the scenario's own */
int fanout_cell(const struct fanout *f, size_t i);
unsigned long long fanout_seed(const struct fanout *f, size_t i); /* when has_seeds */
/* "FILE seed N algo A" (and "set K=V ..." of its cell), as messages name a run. */
void fanout_label(char *buf, size_t n, const struct fanout *f, size_t i);
/* The command that replays run i alone: `locksim run FILE --seed N [--set
 * K=V]... [--algo A]`, each word shell-quoted (cut to n bytes). */
void fanout_replay(char *buf, size_t n, const struct fanout *f, size_t i);

/* Receives run i's summary (judged: its expect lines decide the outcome;
 * file points at f->files; seconds is 0). s is freed after the call unless
 * the sink takes its failures (setting s->failures to NULL). Returns 0 to go
 * on, nonzero to stop the list (its output cannot be written). */
typedef int (*fanout_sink)(void *arg, size_t i, struct report_summary *s);

/* Run the list (its fanout_range() slice; with preloaded summaries, deliver
 * them without running). Returns 0 when every run was delivered, 1 when
 * SIGINT, SIGTERM or SIGHUP stopped it (the runs finished after a gap are
 * delivered too, in order), 2 when the sink stopped it, LSIM_ENOMEM when
 * memory ran out, LSIM_EINTERNAL when a worker could not be started; *done receives the runs delivered. Workers die with
 * the parent (Linux: PR_SET_PDEATHSIG) and hold no other worker's pipe. */
int fanout_run(const struct fanout *f, fanout_sink sink, void *arg, size_t *done);

/* The options batch and sweep share: --seeds N|A..B|LIST, --algos NAME,...|all, --jobs N,
 * --shard K/N (fanout_run_options), and --seed, --set, --algo, --time-limit
 * (cli_getopt's run options). */
struct fanout_opts {
    struct cli_runopts ro;
    const char *algos;      /* as given, or NULL */
    long jobs;              /* default: the cores online */
    struct cli_seeds seeds; /* --seeds, when has_seeds */
    int has_seeds;
    const struct lock_algo *algo[FANOUT_MAX_ALGOS]; /* from --algos, by fanout_opts_apply */
    char *algo_name[FANOUT_MAX_ALGOS];              /* owned: free with fanout_opts_close */
    const char *algo_reg[FANOUT_MAX_ALGOS];         /* borrowed from the algorithms */
    int nalgos;
    long shard_k, shard_n; /* --shard K/N, 0 = none */
};
void fanout_opts_init(struct fanout_opts *o);
/* The option tables batch, sweep and merge share, each declared once (the
 * commands list them in their cli_tables_CMD): the run list's (--seeds,
 * --algos, --jobs, --shard: batch, sweep); the output's (--format, -o,
 * --out, --output: all three); the heatmap's (--svg, --png: sweep, merge).
 * Their codes are FANOUT_OPT_*, above any command's own. */
enum {
    FANOUT_OPT_SEEDS = CLI_OPT_OWN + 0x100,
    FANOUT_OPT_ALGOS,
    FANOUT_OPT_JOBS,
    FANOUT_OPT_SHARD,
    FANOUT_OPT_FORMAT,
    FANOUT_OPT_SVG,
    FANOUT_OPT_PNG,
};
extern const struct option fanout_run_options[], fanout_output_options[], fanout_heatmap_options[];
/* Check the options together (cmd names the command in messages), resolve
 * --algos, and fill f's algorithms, seeds, sets, jobs and progress (not its
 * files or cells; f points into o, which must outlive it). Returns 0, or the
 * exit status after printing the error. */
int fanout_opts_apply(struct fanout_opts *o, const char *cmd, struct fanout *f);
void fanout_opts_close(struct fanout_opts *o);

/* ---- The commands' outputs -------------------------------------------------- */

/* Where batch or sweep writes, and what it must not overwrite. */
struct fanout_dest {
    const char *format;        /* as given, or NULL for the command's default */
    const char *out;           /* "-" = standard output */
    const char *svg, *png;     /* sweep's heatmap files, or NULL */
    const char *const *inputs; /* paths no output may replace (the scenario files;
                                      merge: the shard files) */
    int ninputs;
    int argc; /* the command line, recorded in a shard's header */
    char **argv;
};

/* Take option c of the shared tables above with its value v into o (may be
 * NULL: merge, which has no run options) or d: 1 when c is one of them
 * (*status then 0, or the exit status after a usage error naming it), 0
 * when it is not. */
int fanout_take_opt(struct fanout_opts *o, struct fanout_dest *d, int c, const char *v, int *status);

/* Run (or, preloaded, deliver) the list f and write batch's output: the
 * table, JSON Lines, CSV, JUnit or TAP, or under --shard the shard file.
 * Returns the exit status, after printing any error. */
int batch_output(const struct fanout *f, const struct fanout_dest *d);
/* The same for sweep over file with the axes ax[0..naxes) (f's cells from
 * fanout_set_axes): CSV or JSON Lines of the cells, and the heatmap. */
int sweep_output(const struct fanout *f, const char *file, const struct fanout_axis *ax, int naxes,
                 const struct fanout_dest *d);

#endif
