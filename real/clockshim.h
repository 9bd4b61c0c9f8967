/* The clock page shared by `locksim real`'s driver and the LD_PRELOAD clock
 * shim in redis-server (real/shim/clockshim.c, built as
 * build/real/locksim-clockshim.so): the shift of that one process's wall
 * clock (CLOCK_REALTIME, gettimeofday, time), an offset and a rate that the
 * driver changes while the server runs. The system clock is never touched. */
#ifndef LOCKSIM_CLOCKSHIM_H
#define LOCKSIM_CLOCKSHIM_H

#include <stdint.h>

/* The environment variable naming the page's file descriptor, inherited by
 * redis-server (an unlinked file: nothing stays on disk). */
#define CLOCKSHIM_FD_ENV "LOCKSIM_CLOCK_FD"
/* The shim's file name, beside the locksim binary under real/ (the build
 * tree) or in ../lib/locksim/ (an installed tree). */
#define CLOCKSHIM_SO "locksim-clockshim.so"
#define CLOCKSHIM_PAGE_BYTES 4096

/* The shifted wall clock at real wall time rt (ns):
 *   rt + off_ns + (rt - anchor_ns) * rate_ppb / 1e9.
 * Written by the driver only (clockshim_set), read by the shim; seq is a
 * sequence lock: odd while a write is under way, so a reader retries. */
struct clockshim_page {
    uint32_t seq;      /* even = stable, odd = being written */
    uint32_t pad;      /* unused, 0 */
    int64_t off_ns;    /* the shift at anchor_ns, ns */
    int64_t anchor_ns; /* real CLOCK_REALTIME, ns, where the rate took effect */
    int64_t rate_ppb;  /* the shifted clock runs 1 + rate_ppb / 1e9 as fast as the real one */
};

/* The shift (ns) at real wall time rt, from a consistent copy of a page. */
static inline int64_t clockshim_shift(const struct clockshim_page *p, int64_t rt) {
    return p->off_ns + (int64_t)((double)(rt - p->anchor_ns) * (double)p->rate_ppb / 1e9);
}

/* The real wall time (ns) at which the shifted clock of a consistent copy
 * of a page reads shifted: the inverse of rt + clockshim_shift(p, rt). */
static inline int64_t clockshim_unshift(const struct clockshim_page *p, int64_t shifted) {
    double since = (double)(shifted - p->anchor_ns - p->off_ns) / (1.0 + (double)p->rate_ppb / 1e9);
    return p->anchor_ns + (int64_t)since;
}

/* A consistent copy of the page (the sequence lock's read side). */
static inline void clockshim_read(const struct clockshim_page *p, struct clockshim_page *out) {
    for (;;) {
        uint32_t s1 = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);
        if (s1 & 1) continue;
        out->off_ns = __atomic_load_n(&p->off_ns, __ATOMIC_RELAXED);
        out->anchor_ns = __atomic_load_n(&p->anchor_ns, __ATOMIC_RELAXED);
        out->rate_ppb = __atomic_load_n(&p->rate_ppb, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&p->seq, __ATOMIC_RELAXED) == s1) return;
    }
}

/* Write the page (the only writer: the driver's process). */
static inline void clockshim_set(struct clockshim_page *p, int64_t off_ns, int64_t anchor_ns, int64_t rate_ppb) {
    __atomic_store_n(&p->seq, p->seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&p->off_ns, off_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&p->anchor_ns, anchor_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&p->rate_ppb, rate_ppb, __ATOMIC_RELAXED);
    __atomic_store_n(&p->seq, p->seq + 1, __ATOMIC_RELEASE);
}

#endif
