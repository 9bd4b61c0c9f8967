/* Comparing two traces for regression work (run/input.h reads the files):
 * find the first event where two traces diverge, and print it with a few
 * events of context, each event on one line (time, node, kind, fields).
 * Used by `locksim check` against golden traces and by `locksim diff`. */
#ifndef LOCKSIM_TRACE_DIFF_H
#define LOCKSIM_TRACE_DIFF_H

#include <stddef.h>
#include <stdio.h>

#include "checker.h"
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
void trace_diff_print(FILE *f, const struct trace *a, const char *name_a, const struct trace *b, const char *name_b,
                      long at, int context, const char *indent);

/* What changed in meaning, before any raw event: ra and rb are the
 * checker's reports of a and b (checker_finish over each). Lines for the
 * verdict and every metric that differs (in its unit, "1 -> 0"), then who
 * held the lock when (each client's acquisitions paired in order: a time or
 * a token that moved, one that happens in only one trace), then the writes
 * at the resource (paired in order: time, writer, value, accepted or why
 * refused). At most max_lines lines per part, then "... and N more".
 * Returns the number of differences found (0: the same in meaning), or
 * LSIM_ENOMEM (negative) when they could not all be found. */
int trace_diff_meaning(FILE *f, const struct trace *a, const struct checker_report *ra, const struct trace *b,
                       const struct checker_report *rb, int max_lines, const char *indent);

#endif
