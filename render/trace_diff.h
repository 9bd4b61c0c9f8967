/* Comparing two traces for regression work (run/input.h reads the files):
 * find the first event where two traces diverge, and print it with a few
 * events of context, each event on one line (time, node, kind, fields).
 * Used by `locksim check` against golden traces and by `locksim diff`. */
#ifndef LOCKSIM_TRACE_DIFF_H
#define LOCKSIM_TRACE_DIFF_H

#include <stddef.h>
#include <stdio.h>

#include "trace.h"

/* Index of the first stored event where a and b differ, comparing time,
 * kind, node and peer by name, token, grant, a, b and text; when one trace
 * is a prefix of the other, the shorter one's length; -1 when the events
 * are the same. */
long trace_diff_first(const struct trace *a, const struct trace *b);

/* One event as one line, no newline: "#SEQ t=TIME NODE KIND" and the fields
 * that are set (peer, token, grant, a, b, text). */
void trace_diff_event(char *buf, size_t n, const struct trace *tr, const struct trace_event *ev);

/* The report of a divergence at index at (from trace_diff_first): a line
 * naming the event and its time, up to context events before it (the same
 * in both), then the event and up to context events after it from each
 * trace, marked "- NAME_A" and "+ NAME_B". Header differences (title,
 * algorithm, seed) come first. indent (e.g. "  ") starts every line. */
void trace_diff_print(FILE *f, const struct trace *a, const char *name_a, const struct trace *b,
                      const char *name_b, long at, int context, const char *indent);

#endif
