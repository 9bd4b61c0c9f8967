/* Out-of-memory injection for whole commands, loaded with LD_PRELOAD (built
 * as build/oom_shim.so; tests/oom_sweep.sh drives it). It counts every
 * allocation the process makes, its own code's and its libraries' (libc,
 * libpng, FreeType, the dynamic loader's once libc is up), and fails one:
 *   LOCKSIM_OOM_AT=N     the N-th allocation (1-based) returns NULL / ENOMEM;
 *   LOCKSIM_OOM_COUNT=1  fail nothing; at exit print "oom-shim: pid P: K
 *                        allocations" on stderr.
 * The count is per process: a forked child starts again at 0 (pthread_atfork),
 * so with N set a batch worker fails its own N-th allocation too. _exit is
 * wrapped so that workers, which leave with _exit, print their count.
 * The real allocator is glibc's __libc_* entry points, so no dlsym. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

static long fail_at = -1; /* -1: not read yet; 0: never fail */
static int count_only;
static long calls; /* allocations of this process so far */

static void init(void) {
    const char *at = getenv("LOCKSIM_OOM_AT"), *c = getenv("LOCKSIM_OOM_COUNT");
    fail_at = at ? strtol(at, NULL, 10) : 0;
    if (fail_at < 0) fail_at = 0;
    count_only = c && c[0] && strcmp(c, "0") != 0;
}

/* 1 when this allocation is the one to fail. */
static int fail_now(void) {
    if (fail_at < 0) init();
    return ++calls == fail_at;
}

static void report(void) {
    if (!count_only) return;
    char buf[96];
    int n = snprintf(buf, sizeof buf, "oom-shim: pid %ld: %ld allocations\n", (long)getpid(), calls);
    if (n > 0 && write(2, buf, (size_t)n) < 0) return;
}

static void child_reset(void) { calls = 0; }

__attribute__((constructor)) static void shim_start(void) {
    if (fail_at < 0) init();
    pthread_atfork(NULL, NULL, child_reset);
}

__attribute__((destructor)) static void shim_end(void) { report(); }

void _exit(int st) {
    report();
    _Exit(st);
}

void *malloc(size_t n) {
    if (fail_now()) return errno = ENOMEM, NULL;
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t m) {
    if (fail_now()) return errno = ENOMEM, NULL;
    return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n) {
    if (n == 0 || p == NULL) {
        if (p == NULL && fail_now()) return errno = ENOMEM, NULL;
        return __libc_realloc(p, n);
    }
    if (fail_now()) return errno = ENOMEM, NULL;
    return __libc_realloc(p, n);
}

void *reallocarray(void *p, size_t n, size_t m) {
    if (m && n > (size_t)-1 / m) return errno = ENOMEM, NULL;
    return realloc(p, n * m);
}

char *strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

char *strndup(const char *s, size_t max) {
    size_t n = strnlen(s, max);
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

int posix_memalign(void **out, size_t align, size_t n) {
    if (fail_now()) return ENOMEM;
    void *p = __libc_memalign(align, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n) {
    if (fail_now()) return errno = ENOMEM, NULL;
    return __libc_memalign(align, n);
}

void *memalign(size_t align, size_t n) {
    if (fail_now()) return errno = ENOMEM, NULL;
    return __libc_memalign(align, n);
}

void *valloc(size_t n) {
    if (fail_now()) return errno = ENOMEM, NULL;
    return __libc_memalign((size_t)sysconf(_SC_PAGESIZE), n);
}
