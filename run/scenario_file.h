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

#endif
