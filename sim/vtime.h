/* Virtual time for locksim: one integer type, in nanoseconds, named for its unit.
 * Nothing in sim/ ever reads a real clock; all time is sim_ns. */
#ifndef LOCKSIM_VTIME_H
#define LOCKSIM_VTIME_H

#include <stdint.h>

typedef int64_t sim_ns; /* virtual time or duration, nanoseconds */

#define SIM_NS_PER_US ((sim_ns)1000)
#define SIM_NS_PER_MS ((sim_ns)1000000)
#define SIM_NS_PER_S ((sim_ns)1000000000)
#define SIM_NS_PER_MIN ((sim_ns)60 * SIM_NS_PER_S)

/* Largest time a scenario may name or reach: 10^6 s (about 11.6 days).
 * Far below INT64_MAX so that clock arithmetic (drift, offsets, steps)
 * can never overflow; the parser rejects anything beyond it. */
#define SIM_TIME_MAX ((sim_ns)1000000 * SIM_NS_PER_S)
#define SIM_NEVER INT64_MAX /* "no deadline" sentinel, never scheduled */

#endif
