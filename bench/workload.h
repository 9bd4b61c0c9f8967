/* The peer benchmark's workload (shared/bench-peers/README.md, "Workload")
 * expressed as a locksim run: N clients and one lease server driven by the
 * real engine (engine_new / engine_step), checker on, trace not kept.
 * Bench-only: the algorithm is passed through engine_opts.algo and is not
 * in the registry. */
#ifndef LOCKSIM_BENCH_WORKLOAD_H
#define LOCKSIM_BENCH_WORKLOAD_H

#include <stdint.h>

#include "checker.h"
#include "lock.h"
#include "scenario.h"

#define WL_LAT_US 100  /* one-way network latency of the reference */
#define WL_LEASE_US 50 /* lease length of the reference */

/* Counts kept by the workload algorithm while a run goes on. One run at a
 * time per process: the algorithm writes these through a file-level
 * pointer set by wl_run (struct lock_algo callbacks have no user argument). */
struct wl_counts {
    uint64_t ref_events; /* reference-equivalent events: think timer fired,
                            request received, reply received */
    uint64_t grants;     /* requests the server granted */
    uint64_t acquired;   /* granted replies the clients received */
};

/* Result of one run of E reference-equivalent events. */
struct wl_result {
    uint64_t ref_events;    /* = E unless the run ended first (it never should) */
    uint64_t engine_events; /* engine events processed, all kinds */
    uint64_t sim_end_us;    /* true time of the E-th reference-equivalent event */
    uint64_t grants;
    double build_s;    /* wall seconds in engine_new (N clients) */
    double loop_s;     /* wall seconds from before engine_new to the E-th event,
                               the reference's timed region plus building the engine */
    uint64_t acquired; /* granted replies received by then */
};

/* The algorithm: the server grants when its clock reads past the current
 * lease (lease_until = now + lease), as the reference's server does; each
 * client waits a think time from its own LCG, sends a request, and on the
 * reply arms its next think timer. Options: seed=N (the reference's SEED,
 * decimal, 0..2^64-1), lease=DUR (default 50us). */
extern const struct lock_algo wl_algo;

/* Fill *s (initialised here; close with scenario_close) with the run:
 * n clients `c0`.. each running `acquire tries=1` forever with no think of
 * their own, fixed latency 100us, seed in the lock options.
 * Returns 0, or -1 on OOM. */
int wl_scenario(struct scenario *s, uint32_t n, uint64_t seed);

/* Build the engine for s (trace not kept, checker on) and step it until
 * e_events reference-equivalent events have been processed. close_s = 1
 * closes s as soon as the engine holds its own copy, so that a memory
 * measurement does not count the caller's copy of N client definitions.
 * Returns 0, -1 when the engine cannot be built, -2 on OOM. */
int wl_run(struct scenario *s, uint64_t e_events, int close_s, struct wl_result *out);

/* Run s to its end (its duration) with engine_run, for checking the
 * workload against the checker: *rep is the final report, *cnt the
 * algorithm's counts. Returns 0, -1 when the engine cannot be built, -2 on OOM. */
int wl_run_to_end(const struct scenario *s, struct checker_report *rep, struct wl_counts *cnt);

#endif
