/* Scenario files: read a file (or standard input) into memory and hand
 * the bytes to scenario_parse(). This is the one place that reads a
 * scenario from the file system; sim/ only ever sees a buffer. */
#ifndef LOCKSIM_SCENARIO_FILE_H
#define LOCKSIM_SCENARIO_FILE_H

#include "scenario.h"

/* Read and parse the file at path; a path of "-" reads standard input, shown
 * as "<stdin>" in messages and in s->file. *s is initialised first (as by
 * scenario_parse) and must be closed with scenario_close() whatever the
 * result. Returns 0, or:
 *   LSIM_ENOINPUT  missing, unreadable, a directory, or larger than 16 MiB
 *                  (err->msg says why, with strerror; err->pos is 0:0);
 *   LSIM_ENOMEM    out of memory while reading or parsing;
 *   LSIM_EPARSE    a malformed scenario (err at file:line:col). */
int scenario_load(struct scenario *s, const char *path, struct scn_error *err);

/* Where a line of a fault at true time at (a fault clicked in the window or
 * the page) goes in a scenario's text of len bytes: timed lines must stay in
 * time order, and a `+DUR` line keeps the line it counts from, so before the
 * first `@` line later than at (the byte offset where its line starts), else
 * at the end (len). A text that does not parse: len. */
size_t scenario_text_fault_place(const char *text, size_t len, sim_ns at);

#endif
