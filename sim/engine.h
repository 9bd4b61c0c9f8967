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
    int hash_trace;               /* 1 = hash every event as it happens, so that
                                     trace_hash() works without keep_trace */
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
int engine_new(struct engine **out, const struct scenario *s, const struct engine_opts *opts, struct scn_error *err);
/* The same, taking s's arrays instead of copying them (a caller that built
 * s for this run only): s is left as scenario_init leaves it, on success or
 * failure, and the caller still closes it. */
int engine_new_take(struct engine **out, struct scenario *s, const struct engine_opts *opts, struct scn_error *err);
void engine_free(struct engine *e); /* engine_free(NULL) is a no-op */

/* Process one event. Returns 1 while the run goes on, 0 once it has ended. */
int engine_step(struct engine *e);
/* Run to the end; returns the number of events processed. */
uint64_t engine_run(struct engine *e);

/* Why a run stopped. Every reason but ENGINE_STOP_END cuts the run short of
 * its duration, before the event that would have passed the limit. */
enum engine_stop {
    ENGINE_STOP_END,        /* the run reached its duration (or ran out of events) */
    ENGINE_STOP_MAX_EVENTS, /* the scenario's max-events were processed */
    ENGINE_STOP_LIVELOCK,   /* true time stopped advancing: ENGINE_LIVELOCK_EVENTS
                               consecutive events at one instant */
    ENGINE_STOP_MEMORY      /* the kept trace would pass ENGINE_TRACE_BUDGET_BYTES */
};

/* The engine looks at its limits every ENGINE_CHECK_EVENTS events (and at
 * max-events exactly), so that they cost the loop nothing more than the
 * max-events test did. */
#define ENGINE_CHECK_EVENTS 1024u
/* A livelock: this many consecutive events at one instant, or 64 per node when
 * that is more (a run whose clients all start together legitimately has a
 * few events per node at one instant). The run stops at the first look
 * after that, so with between this many and ENGINE_CHECK_EVENTS more events
 * at the instant. No catalog scenario comes near: the longest run of events
 * at one instant in scenarios/ is 20. */
#define ENGINE_LIVELOCK_EVENTS 100000u
#define ENGINE_LIVELOCK_PER_NODE 64u
/* The most memory the kept trace (opts.keep_trace) may take: 96 MiB, about
 * 1.5 million events of 64 bytes, so that a whole `locksim run` (engine,
 * checker, trace and the timeline drawn from it) stays below 256 MiB peak
 * resident memory even with 200000 clients (measured: 201 MiB). The run stops
 * cleanly (ENGINE_STOP_MEMORY) at the first look that finds the trace within
 * ENGINE_TRACE_HEADROOM events (4 MiB) of this, so that the events until the
 * next look and the run's end still fit (64 trace events per engine event
 * over ENGINE_CHECK_EVENTS events). A run that
 * does not keep the trace has no such limit: its memory grows with clients
 * and grants, not with events. */
#define ENGINE_TRACE_BUDGET_BYTES ((size_t)96 << 20)
#define ENGINE_TRACE_HEADROOM 65536u

sim_ns engine_now(const struct engine *e);
uint64_t engine_events(const struct engine *e);
/* Why the run stopped; ENGINE_STOP_END until it has. */
enum engine_stop engine_stop_reason(const struct engine *e);
/* The true time the run stopped at (the instant of a livelock; the time of
 * the last event processed for the other limits; the duration at the end). */
sim_ns engine_stop_time(const struct engine *e);
/* 1 when the run stopped before its duration: engine_stop_reason != END. */
int engine_truncated(const struct engine *e);
const struct trace *engine_trace(const struct engine *e); /* borrowed, lives with e */
/* Report; final once engine_step has returned 0. */
const struct checker_report *engine_report(const struct engine *e);
/* The algorithm's states reached so far in this run: bit i for
 * lock_algo.state_names[i] (lock_state). Not part of the trace. */
uint64_t engine_states_reached(const struct engine *e);
/* The engine's copy of the scenario, without its client list: clients is
 * NULL, nclients counts them, the trace's nodes name them. */
const struct scenario *engine_scenario(const struct engine *e);
const struct lock_algo *engine_algo(const struct engine *e);
/* Lock options dropped because the algorithm did not know them (lenient mode). */
const char *engine_dropped_options(const struct engine *e);

#endif
