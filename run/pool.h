/* One pool of forked worker processes, for every command that fans a list
 * of items out (batch and sweep through cli/fanout.c, explore's search).
 * Worker k of N computes items lo + k, lo + k + N, ... into records, opaque
 * bytes the caller defines, and sends them over its own pipe; the parent
 * hands each record to the caller in item order, whatever the finishing
 * order, so what the caller does with them does not depend on N. A worker
 * that dies fails the item it was in (the caller is told its wait status)
 * and a new worker takes the rest of its slice. Workers die with the parent
 * (Linux: PR_SET_PDEATHSIG) and hold no other worker's pipe. */
#ifndef LOCKSIM_POOL_H
#define LOCKSIM_POOL_H

#include <signal.h>
#include <stddef.h>

#define POOL_MAX_JOBS 256

/* The signals that stop a list: Ctrl-C, and what scancel, timeout, systemd
 * and a closed terminal send. A caller that wants a stop catches them (its
 * handler sets pool.stop, without SA_RESTART so the pool's wait returns);
 * workers take them back to their default action. */
#define POOL_NSTOP 3
extern const int pool_stop_signals[POOL_NSTOP];

/* The record being written by pool.compute (opaque). */
struct pool_rec;
/* Append n bytes to the record. 0, or -1 when out of memory. */
int pool_put(struct pool_rec *r, const void *p, size_t n);

/* Worker side: compute item i, appending its record with pool_put. Returns
 * 0, 1 to have this record (and those before it) sent at once, or -1 when
 * the item cannot be computed (the worker then exits with status 70). */
typedef int (*pool_compute_fn)(void *arg, size_t i, struct pool_rec *r);
/* Parent side: item i's record, len bytes, borrowed for the call; rec is
 * NULL when the worker died computing it (wait_status says how). Returns 0
 * to go on, nonzero to stop the list. */
typedef int (*pool_take_fn)(void *arg, size_t i, const void *rec, size_t len, int wait_status);
/* Parent side, about every 0.1 s: items taken so far of total. */
typedef void (*pool_progress_fn)(void *arg, size_t done, size_t total, double seconds);

struct pool {
    size_t lo, hi;                   /* the items, [lo, hi) */
    int jobs;                        /* worker processes, 1 to POOL_MAX_JOBS (at most hi - lo used) */
    int in_process;                  /* 1 (with jobs 1): compute in this process, no fork */
    size_t rec_max;                  /* the longest record compute writes, in bytes: a
                                longer header on a pipe is a broken worker */
    size_t flush_bytes;              /* a worker writes once it holds this many bytes;
                                0 = 256 KiB (few, large writes) */
    void (*worker_start)(void *arg); /* in each worker, after the fork; or NULL */
    pool_compute_fn compute;
    pool_take_fn take;
    pool_progress_fn progress;   /* or NULL */
    void *arg;                   /* borrowed: passed to the callbacks (each worker has its
                                own copy of what it points to, from the fork) */
    volatile sig_atomic_t *stop; /* borrowed: nonzero = stop (set by the caller's
                                signal handler), or NULL */
};

/* Run the list. Returns 0 when every item was taken, 1 when *stop stopped
 * it (items finished after a gap are taken too, in order), 2 when take
 * stopped it, LSIM_ENOMEM when memory ran out (here, or for a fork or a
 * worker), LSIM_EINTERNAL when a worker could not be started for another
 * reason (no pipe, no process); *done receives the items taken. */
int pool_run(const struct pool *p, size_t *done);

/* "SIGSEGV", ..., or "a signal": the name messages give a worker's death. */
const char *pool_signal_name(int sig);

#endif
