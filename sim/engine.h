/* The engine: builds nodes, clocks, network, lock algorithm and resource
 * from a scenario, then runs it one event at a time. Each step pops the
 * earliest event (ties by insertion order), dispatches it, and appends what
 * happened to the trace, where the checker sees it at once. */
#ifndef LOCKSIM_ENGINE_H
#define LOCKSIM_ENGINE_H

#include "checker.h"
#include "error.h"
#include "lock.h"
#include "scenario.h"
#include "trace.h"

struct engine;

struct engine_opts {
    const struct lock_algo *algo; /* NULL = the scenario's algorithm by name */
    int keep_trace;               /* 1 = store every event (for output) */
    int lenient_options;          /* 1 = drop lock options the algorithm does not know
                                     (used when --algo swaps the algorithm) */
};

/* Build an engine for scenario s (copied; s may be freed afterwards).
 * Returns 0, or a negative code of error.h, with *err filled in for every
 * code but LSIM_ENOMEM (file:line:col of the offending scenario line; line 0
 * when the option came from --set rather than the file):
 *   LSIM_ENOMEM           out of memory (err untouched)
 *   LSIM_EPARSE           a scenario problem: unknown algorithm or node name,
 *                         too many servers, no clients
 *   LSIM_EUNKNOWN_OPTION  a lock option the algorithm does not know
 *   LSIM_EBAD_VALUE       a lock option's value refused, or a configuration
 *                         the algorithm's validate refuses
 *   LSIM_EPLUGIN          opts->algo was built for another LOCK_ABI_VERSION
 * On failure *out is NULL. */
int engine_new(struct engine **out, const struct scenario *s,
               const struct engine_opts *opts, struct scn_error *err);
void engine_free(struct engine *e); /* engine_free(NULL) is a no-op */

/* Process one event. Returns 1 while the run goes on, 0 once it has ended. */
int engine_step(struct engine *e);
/* Run to the end; returns the number of events processed. */
uint64_t engine_run(struct engine *e);

sim_ns engine_now(const struct engine *e);
uint64_t engine_events(const struct engine *e);
/* 1 when the run stopped at the scenario's max-events before its duration. */
int engine_truncated(const struct engine *e);
const struct trace *engine_trace(const struct engine *e); /* borrowed, lives with e */
/* Report; final once engine_step has returned 0. */
const struct checker_report *engine_report(const struct engine *e);
/* The engine's copy of the scenario, without its client list: clients is
 * NULL, nclients counts them, the trace's nodes name them. */
const struct scenario *engine_scenario(const struct engine *e);
const struct lock_algo *engine_algo(const struct engine *e);
/* Lock options dropped because the algorithm did not know them (lenient mode). */
const char *engine_dropped_options(const struct engine *e);

#endif
