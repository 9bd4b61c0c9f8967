/* Shards of a batch or sweep (--shard K/N) and `locksim merge`: the shard
 * file format (docs/regression.md, "Past one machine"), its writer and its
 * reader.
 *
 * A shard file is data, never instructions: the header states the run list
 * (files, algorithms, seeds, sets, a sweep's axes) as values, and merge
 * rebuilds the list from those values alone. It opens no path a shard
 * names, loads no algorithm, and takes no output option from a shard; the
 * command line the shard was made with ("args") is recorded only to be
 * compared between shards and shown. */
#ifndef LOCKSIM_SHARD_H
#define LOCKSIM_SHARD_H

#include <stdio.h>

#include "fanout.h"

/* The format's version: the header's "locksim_shard" value. Version 1
 * carried each summary's memory as hex and is no longer read. */
#define SHARD_FORMAT 2
/* The longest line a reader takes (a header naming many files is the longest;
 * a record is about the size of its `batch --format jsonl` line). */
#define SHARD_MAX_LINE ((size_t)16 << 20)

/* The first line of a shard file: the format, the command ("batch" or
 * "sweep"), K/N, the runs of the whole list and the slice [first, end) this
 * shard holds, the build, the run list (f's files, algorithms, seeds, --seed,
 * --algo, --set; a sweep's axes ax[0..naxes)), and the command line (argv
 * borrowed; --shard, --jobs, --format, -o/--out/--output, --svg and --png left out). */
void shard_write_header(FILE *out, const char *cmd, int argc, char **argv, const struct fanout *f,
                        const struct fanout_axis *ax, int naxes);
/* One line per run: {"run":I, the `batch --format jsonl` fields (sets: the
 * overrides shown), "failures":TEXT when the run has failure lines}. */
void shard_write_record(FILE *out, size_t i, const struct report_summary *s, const char *const *sets, int nsets);

/* ---- Reading (locksim merge) ---- */

/* A shard file, as read and checked. */
struct shard {
    const char *path; /* borrowed */
    char cmd[16];
    long k, n;
    size_t runs, first, end;
    char build[100];
    /* The run list. */
    char **files;
    int nfiles;
    char **algos, **algo_names; /* as written; as registered (as many once read) */
    int nalgos, nalgo_names;
    int has_seeds;
    struct cli_seeds seeds; /* "seeds": [FIRST,LAST] or [[FIRST,LAST],...] */
    char *seed, *algo;      /* --seed, --algo; NULL when not given */
    char **sets;            /* --set KEY=VALUE */
    int nsets;
    struct fanout_axis axes[FANOUT_MAX_AXES];
    int naxes;
    char **args; /* shown and compared, never obeyed */
    int nargs;
    /* Its records: the summaries of runs first..end, in order (failures owned). */
    struct report_summary *sums;
    size_t nsums;
};

/* Read and check one shard file into *s (zeroed first; free with
 * shard_free, also after an error). Memory grows with what the file holds,
 * never with what its header claims. Returns 0 or the exit status after a
 * message naming file:line:col. */
int shard_read(const char *path, struct shard *s);
/* The same from an open stream (path names it in messages; in stays open). */
int shard_read_stream(FILE *in, const char *path, struct shard *s);
/* NULL when a and b are shards of one run (the same command, N, runs,
 * build, run list and command line), else what differs ("files", ...). */
const char *shard_differs(const struct shard *a, const struct shard *b);
/* The run list s states, as a fanout that names its runs and delivers
 * nothing (no algorithm loaded: names only; f borrows from s). cells
 * receives a sweep's cell sets (f->ncells x f->cell_nsets, owned: free
 * each and the array, also after a failure). Returns 0 or LSIM_ENOMEM. */
int shard_list(const struct shard *s, struct fanout *f, char ***cells);
void shard_free(struct shard *s);

#endif
