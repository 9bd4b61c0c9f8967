/* The LD_PRELOAD clock shim of `locksim real` (real/clockshim.h): in
 * redis-server only, CLOCK_REALTIME, gettimeofday and time read the real
 * clock shifted by the page the driver writes. Redis 7.0 expires keys by
 * its wall clock (mstime/ustime call gettimeofday); its event loop runs on
 * CLOCK_MONOTONIC, which passes through. Raw system calls only: no malloc,
 * no dlsym (libfaketime's recursion at start-up under jemalloc, research
 * pitfall 6). The shift is re-read on every call. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "clockshim.h"

static const struct clockshim_page *page; /* NULL: no page, the real clock */

__attribute__((constructor)) static void clockshim_init(void) {
    const char *fd = getenv(CLOCKSHIM_FD_ENV);
    if (!fd || !*fd) return;
    void *p = mmap(NULL, CLOCKSHIM_PAGE_BYTES, PROT_READ, MAP_SHARED, atoi(fd), 0);
    if (p != MAP_FAILED) page = p;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
    int r = (int)syscall(SYS_clock_gettime, id, ts);
    if (r == 0 && page && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) {
        struct clockshim_page c;
        clockshim_read(page, &c);
        int64_t rt = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
        int64_t ns = rt + clockshim_shift(&c, rt);
        ts->tv_sec = (time_t)(ns / 1000000000);
        ts->tv_nsec = (long)(ns % 1000000000);
    }
    return r;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    (void)tz;
    struct timespec ts;
    int r = clock_gettime(CLOCK_REALTIME, &ts);
    if (r == 0) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return r;
}

time_t time(time_t *t) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (t) *t = ts.tv_sec;
    return ts.tv_sec;
}
