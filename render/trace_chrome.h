/* A trace as Chrome Trace Event JSON (the "JSON Object Format" that
 * Perfetto's UI and chrome://tracing open): one process for the run, one
 * track ("thread") per node, complete events ("X") for what a node was
 * doing over time (acquiring, holding, paused, crashed, a lease as its server
 * sees it), instant events ("i") for grants, writes, expiries and faults,
 * and a track of its own for the double entries. Times are microseconds
 * with three decimals, so nanosecond events keep their order and length. */
#ifndef LOCKSIM_TRACE_CHROME_H
#define LOCKSIM_TRACE_CHROME_H

#include <stdio.h>

#include "trace.h"

/* Write tr (borrowed) to out. Returns 0, LSIM_ENOMEM, or LSIM_EOUTPUT when
 * out reports a write error. */
int trace_write_chrome(FILE *out, const struct trace *tr);

#endif
