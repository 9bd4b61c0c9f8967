/* Process helpers for the benchmarks: run a program as a child, keep its
 * stdout, its wall time, page faults and peak resident memory (wait4's
 * rusage); medians; key=value fields of the one-line reports the programs
 * print. */
#ifndef LOCKSIM_BENCH_SPAWN_H
#define LOCKSIM_BENCH_SPAWN_H

#include <stddef.h>
#include <stdint.h>

struct sp_result {
    int exited;      /* 1 = exited normally */
    int status;      /* exit status when exited */
    double wall_s;   /* fork to reaped, seconds */
    long maxrss_kib; /* peak resident set of the child, KiB */
    long minflt;     /* page faults served without I/O (each a fresh page touched) */
    char out[2048];  /* the start of its stdout, NUL-terminated (when captured) */
};

/* Run argv[0] with argv (PATH is not searched: give a path). capture = 1
 * keeps stdout in r->out, else stdout goes to /dev/null; stderr is
 * inherited. Returns 0 when the child ran, -1 when it could not start. */
int sp_run(char *const argv[], int capture, struct sp_result *r);

/* Seconds on CLOCK_MONOTONIC: the one clock of every bench figure. */
double sp_now_s(void);
/* Sort n doubles in place, ascending. */
void sp_sort(double *v, size_t n);
/* Median of n values (n >= 1); the array is sorted in place. */
double sp_median(double *v, size_t n);
/* Quantile q in [0, 1] by nearest rank of the sorted array v. */
double sp_quantile_sorted(const double *v, size_t n, double q);

/* Value of `key=` in a line of space-separated key=value fields. Return 0,
 * or -1 when the key is absent or not a number. */
int sp_field_u64(const char *line, const char *key, uint64_t *out);
int sp_field_f64(const char *line, const char *key, double *out);

#endif
