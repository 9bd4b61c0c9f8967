/* Reading an input file whole, for every reader of files (scenarios,
 * traces): "-" is standard input, a directory is refused, a named FIFO with
 * no writer yet is waited for out loud, and the bytes read are bounded, so
 * endless input (/dev/zero) is refused instead of filling memory. */
#ifndef LOCKSIM_INPUT_H
#define LOCKSIM_INPUT_H

#include <stddef.h>
#include <stdio.h>

#include "trace.h"

#define INPUT_TRACE_MAX_BYTES ((size_t)256 << 20) /* a trace file (docs/trace-format.md) */

/* Open path for reading; "-" is standard input. A directory is refused
 * (NULL, errno EISDIR). A named FIFO with nothing to read after 100 ms (no
 * writer has opened it yet) does not block silently: "locksim: waiting for
 * a writer on FIFO 'PATH' to send its data" goes to note (may be NULL) and
 * the wait goes on. Returns the stream (close it with input_close), or NULL
 * with errno set. */
FILE *input_open(const char *path, FILE *note);
/* Close what input_open returned; standard input is left open. */
void input_close(FILE *f);

/* All of f into *buf (*n bytes; owned by the caller, free() it; NULL when
 * nothing was allocated), reading at most max_bytes + 1 bytes. Returns 0;
 * LSIM_ENOINPUT on a read error (errno says why); LSIM_ENOMEM; or
 * LSIM_EPARSE when f holds more than max_bytes (*buf is then NULL; a
 * regular file is refused by its size, unread). */
int input_read_all(FILE *f, size_t max_bytes, char **buf, size_t *n);

/* Read the JSON Lines trace at path ("-" = standard input; a FIFO waited
 * for with a note on note) into tr (initialised with trace_init(tr, 1) and
 * empty; the caller closes it either way), at most INPUT_TRACE_MAX_BYTES.
 * Returns 0, or with "PATH: reason" in err: LSIM_ENOINPUT (missing or
 * unreadable), LSIM_EPARSE (larger than the limit, or malformed:
 * "PATH:N: ...", N the line), LSIM_ENOMEM. */
int input_load_trace(struct trace *tr, const char *path, FILE *note, char *err, size_t errlen);

#endif
