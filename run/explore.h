/* The explorer: search the fault budget of a scenario (its `explore` line and
 * its ranged params) for a run that breaks its `expect` lines, then shrink
 * that run to the smallest scenario that still fails the same way, and write
 * it as an ordinary scenario file. Every run of the search is drawn from a
 * PRNG seeded by the explorer seed and the run's index, so the search, the
 * shrinking and the file are the same for the same seed, whatever the number
 * of worker processes. Faults are added to a copy of the scenario as timed
 * lines (or lines at named points); the engine is never touched. */
#ifndef LOCKSIM_EXPLORE_H
#define LOCKSIM_EXPLORE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "checker.h"
#include "lock.h"
#include "scenario.h"

#define EXPLORE_BATCH \
    2048 /* the budget counts whole batches, and a time limit
                                   is checked between them; the search stops at the
                                   first failing run */
#define EXPLORE_PARAM_EPOCH \
    64 /* runs that share one draw of the params (a re-parse
                                   costs about three runs) */
#define EXPLORE_MAX_JOBS 64
#define EXPLORE_MAX_STEPS 128  /* shrink steps recorded */
#define EXPLORE_MAX_BOUNDARY 8 /* boundary lines recorded */

struct explore_opts {
    uint64_t seed;                /* the explorer seed */
    uint64_t budget;              /* runs at most (rounded up to whole batches); 0 = no limit */
    double time_s;                /* wall-clock limit in seconds; 0 = none */
    int jobs;                     /* worker processes; 1 = this process */
    int swarm;                    /* 1 = each run enables a random subset of the fault kinds */
    const struct lock_algo *algo; /* NULL = the scenario's own algorithm */
    const char *command;          /* how the search was asked for, for the file's comment */
    volatile sig_atomic_t *stop;  /* borrowed, or NULL: nonzero = stop now (a signal
                                   handler sets it); explore_run then returns
                                   LSIM_EINTERRUPTED with what it has */
};

/* What the search tried (over the runs it made). */
struct explore_cover {
    uint64_t kind[SCN_NEM_COUNT];                   /* faults drawn per kind */
    uint64_t kind_timed[SCN_NEM_COUNT];             /* of them, placed at a true time */
    uint64_t point[SCN_NEM_COUNT][SCN_POINT_COUNT]; /* placed at each named point */
    uint64_t params;                                /* param draws */
    uint64_t placements;                            /* distinct (kind, node, point or whole second) tried */
    uint64_t placements_possible;                   /* how many such placements the budget allows */
    uint64_t truncated;                             /* runs cut short by max-events (not judged) */
    uint64_t state_runs[LOCK_MAX_STATES];           /* runs that reached each state of the
                                       algorithm (lock_state; indexes of its state_names) */
};

struct explore_result {
    int found;           /* 1 = a failing run was found (and shrunk) */
    uint64_t runs;       /* runs searched: 0 to first_fail, or all of the budget */
    uint64_t first_fail; /* index of the first failing run: first_fail + 1 runs */
    double seconds;      /* wall time of the search */
    double shrink_seconds;
    uint64_t shrink_runs;                     /* runs made by the shrinker */
    int nsteps;                               /* shrink steps taken */
    char steps[EXPLORE_MAX_STEPS][160];       /* one line each */
    char boundary[EXPLORE_MAX_BOUNDARY][400]; /* sizes and params pinned to the tick, with
                                                 the outcome on each side */
    int nboundary;
    int faults_found, faults_shrunk; /* faults in the first failing run and after shrinking */
    int clients_found, clients_shrunk;
    struct checker_report rep; /* the shrunk run's report */
    char *text;                /* owned: the counterexample file, NUL-terminated */
    size_t len;
    struct explore_cover cover;
    const struct lock_algo *algo; /* borrowed (static): the algorithm explored, whose
                                     state_names name cover.state_runs; NULL = unknown */
};

/* Search and shrink. base is borrowed for the call (its kept source is used
 * to re-parse with param values). Returns 0 (r->found says whether a
 * failure was found), LSIM_EUSAGE with err when there is nothing to explore
 * (no explore line and no ranged param) or the algorithm cannot run it,
 * LSIM_ENOMEM, LSIM_EINTERNAL when a worker process fails, or
 * LSIM_EINTERRUPTED when o->stop was set: r then says what was searched
 * (runs, seconds, cover) and, when found, the first failure and the shrink
 * steps taken so far (no text). Free r with explore_result_close(). */
int explore_run(const struct scenario *base, const struct explore_opts *o, struct explore_result *r, char *err,
                size_t errlen);
void explore_result_close(struct explore_result *r);

#endif
