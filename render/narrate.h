/* Narration: one plain-words sentence per event that matters, for a teacher
 * walking a class through a run ("S1: lease of A expired; A does not know
 * (it is paused)"). Reads the trace only. */
#ifndef LOCKSIM_NARRATE_H
#define LOCKSIM_NARRATE_H

#include <stddef.h>
#include <stdio.h>

#include "trace.h"

/* Write the sentence for ev (borrowed; usually &tr->ev[i], but a copy seen
 * by an observer works too) into buf (n bytes, NUL-terminated, cut to fit).
 * What each node knows at that moment (in the critical section? paused?
 * crashed? the highest token the resource has accepted?) is replayed from
 * tr's stored events with seq < ev->seq, so one call costs O(events before)
 * and one table of nodes. Returns 0 when a sentence was written, 1 when the
 * event is not worth narrating (messages, retries, work steps; buf is then
 * ""), -1 when out of memory. */
int narrate_event(char *buf, size_t n, const struct trace *tr, const struct trace_event *ev);

/* Print every narrated event of tr, one line each, in trace order:
 *   "  t=31s       B acquires the lock (token 42)"
 * Keeps the per-node state incrementally, so it is O(events). Returns 0, or
 * -1 when out of memory or on a write error. */
int narrate_trace(FILE *out, const struct trace *tr);

#endif
