/* Shards of a batch or sweep (--shard K/N) and `locksim merge`: the shard
 * file format (docs/regression.md, "Past one machine") and its writer. */
#ifndef LOCKSIM_SHARD_H
#define LOCKSIM_SHARD_H

#include <stdio.h>

#include "fanout.h"

/* The first line of a shard file: the command ("batch" or "sweep"), its
 * arguments as given (argc/argv borrowed; --shard, --jobs, --format, --out
 * and --svg left out: merge takes its own), K/N, the runs of the whole list
 * and the slice [lo, hi) this shard holds, and a build stamp (merge refuses
 * shards of another build: records carry the summary's bytes). */
void shard_write_header(FILE *out, const char *cmd, int argc, char **argv, const struct fanout *f);
/* One line per run: {"run":I, the `batch --format jsonl` fields (sets: the
 * overrides shown), "wire":"HEX"}; HEX is the summary's bytes and its
 * failure text, what merge restores. */
void shard_write_record(FILE *out, size_t i, const struct report_summary *s, const char *const *sets, int nsets);

/* ---- Reading (locksim merge) ---- */

/* A shard file's header, as read. */
struct shard {
    const char *path;
    char cmd[16];
    long k, n;
    size_t runs, first, end;
    char build[100];
    char **args;
    int nargs;
};

/* Read one shard file: its header into *s, its records into sums (indexed by
 * run, sums[i] must be empty); first is the first file's header (NULL when
 * this is the first). Returns 0 or the exit status after a message. */
int shard_read(const char *path, struct shard *s, struct report_summary **sums, size_t *nsums,
               const struct shard *first);
void shard_free(struct shard *s);

#endif
