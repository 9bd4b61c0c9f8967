/* Output files, one set of rules for everything locksim writes (traces,
 * images, batch results): "-" is standard output; a regular file (or a new
 * path) is written to a temporary file beside it and renamed into place
 * only when complete, so an interrupted run never leaves a half-written
 * file and a failed one leaves the old file as it was; a path that exists
 * and is not a regular file (a terminal, a FIFO, a device such as
 * /dev/null or /dev/full) is written in place, streaming (a FIFO with no
 * reader yet is waited for, after a note on stderr); a symlink is written
 * through, to the end of its chain (its target is replaced atomically or
 * made, the link stays; a loop is an error); the replaced file keeps its
 * owner and mode, a read-only one is refused, and one in a folder that takes
 * no temporary file is written in place; an output path that is one of the
 * run's input files is refused. */
#ifndef LOCKSIM_OUTPUT_H
#define LOCKSIM_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

enum out_mode { OUT_STDOUT, OUT_ATOMIC, OUT_INPLACE };

struct out_file {
    FILE *f; /* write here between out_open and out_commit/out_abort */
    enum out_mode mode;
    char path[4096];  /* as given, for messages */
    char final[4096]; /* the file that receives the bytes (symlinks resolved) */
    char tmp[4200];   /* OUT_ATOMIC: the temporary file, else "" */
    char *buf;        /* owned: f's buffer, when not stdio's own */
};

/* Open path for writing. inputs (ninputs paths, may be NULL) are the files
 * the run reads; writing over one of them is refused with LSIM_EUSAGE.
 * Returns 0, or LSIM_EUSAGE / LSIM_EOUTPUT with a full sentence in err. */
int out_open(struct out_file *o, const char *path, const char *const *inputs, int ninputs, char *err, size_t errlen);
/* Finish: flush, close and (OUT_ATOMIC) rename into place. A write error at
 * any point so far (ENOSPC, EPIPE, EIO) is reported here as LSIM_EOUTPUT
 * with the reason, and the temporary file is removed. */
int out_commit(struct out_file *o, char *err, size_t errlen);
/* Give up: close and remove the temporary file; the old file stays. */
void out_abort(struct out_file *o);

#endif
