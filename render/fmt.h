/* Exact time formatting shared by every renderer (terminal, narration,
 * SVG/PNG labels): integer arithmetic only, so "31.5s" never reads 31.499s. */
#ifndef LOCKSIM_FMT_H
#define LOCKSIM_FMT_H

#include <stddef.h>

#include "metric.h"
#include "vtime.h"

/* Write t in the largest unit of s, ms, us, ns in which |t| >= 1 (0 is "0s"),
 * with exactly the decimals it needs: 31s, 31.5s, 250ms, 1.25ms, 1.000000001s,
 * -2s. Returns the length the full text has (as snprintf does); the text in
 * buf is NUL-terminated and cut to n - 1 characters when n is too small. */
int format_time_ns(char *buf, size_t n, sim_ns t);

/* Write t in a given unit: unit_ns is 1, 10^3, 10^6, 10^9 (exact decimals)
 * or any other positive length such as 60 s for minutes, for which a value
 * that is not a whole number of units falls back to format_time_ns.
 * suffix (borrowed) follows the number. With unit_ns = 60 s and suffix "m":
 * 120 s gives "2m", 90 s gives "90s". Returns as format_time_ns does. */
int format_time_in(char *buf, size_t n, sim_ns t, sim_ns unit_ns, const char *suffix);

/* Write value v of metric m in its unit for people: "SAFE", "3", "1.5s".
 * Returns as format_time_ns does. */
int metric_format(char *buf, size_t n, enum scn_metric m, int64_t v);

#endif
