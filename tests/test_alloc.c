/* Allocation failure, swept: for every catalog scenario, parse, build and
 * run fail at each allocation in turn (the k-th malloc, calloc or realloc
 * returns NULL). Each run must end cleanly, either unaffected or with
 * LSIM_ENOMEM (exit 70) and "out of memory" in its message, never a crash,
 * never another error, and with every allocation it made freed again. A run
 * that succeeds has the trace hash of the run with memory (a text dropped
 * for want of memory, such as a partition's groups, changes it).
 * The binary is linked with -Wl,--wrap for the allocator (see Makefile):
 * malloc, calloc, realloc, posix_memalign and free. */
#define _XOPEN_SOURCE 700 /* glob */
#include <glob.h>
#include <stdlib.h>

#include "testutil.h"

#include "run.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
int __real_posix_memalign(void **p, size_t align, size_t n);

static long calls;   /* allocations seen while armed */
static long fail_at; /* the call that fails (1-based); 0 = none */
static long live;    /* allocations not yet freed, while armed */
static int armed;

static int should_fail(void) {
    if (!armed) return 0;
    return ++calls == fail_at;
}

void *__wrap_malloc(size_t n) {
    if (should_fail()) return NULL;
    void *p = __real_malloc(n);
    if (p && armed) live++;
    return p;
}

void *__wrap_calloc(size_t n, size_t m) {
    if (should_fail()) return NULL;
    void *p = __real_calloc(n, m);
    if (p && armed) live++;
    return p;
}

void *__wrap_realloc(void *p, size_t n) {
    if (should_fail()) return NULL;
    void *q = __real_realloc(p, n);
    if (q && !p && armed) live++;
    return q;
}

int __wrap_posix_memalign(void **p, size_t align, size_t n) {
    if (should_fail()) return 12; /* ENOMEM */
    int rc = __real_posix_memalign(p, align, n);
    if (rc == 0 && armed) live++;
    return rc;
}

void __wrap_free(void *p) {
    if (p && armed) live--;
    __real_free(p);
}

static char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = __real_malloc(1 << 20);
    *len = fread(buf, 1, (1 << 20) - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

/* One run of text with the k-th allocation failing (0: none). Returns the
 * number of allocations the run made; *hash is the trace hash of a run that
 * succeeded. */
static long run_once(const char *name, const char *text, size_t len, long k, int *rc_out, uint64_t *hash) {
    struct run_spec spec = {.file = name, .text = text, .len = len, .keep_trace = 1};
    struct run_result r;
    calls = 0;
    live = 0;
    fail_at = k;
    armed = 1;
    int rc = run_scenario(&spec, &r);
    *hash = rc == 0 ? r.trace_hash : 0;
    run_result_close(&r);
    armed = 0;
    if (rc != 0 && rc != LSIM_ENOMEM)
        fprintf(stderr, "%s: allocation %ld failing gave %s: %s\n", name, k, lsim_errname(rc), r.error);
    assert_true(rc == 0 || rc == LSIM_ENOMEM);
    if (rc == LSIM_ENOMEM) assert_non_null(strstr(r.error, "out of memory"));
    if (live != 0) fprintf(stderr, "%s: allocation %ld failing leaked %ld blocks\n", name, k, live);
    assert_int_equal(live, 0);
    *rc_out = rc;
    return calls;
}

static void test_every_allocation_fails_in_turn(void **state) {
    (void)state;
    glob_t g;
    assert_int_equal(glob("scenarios/*.lsim", 0, NULL, &g), 0);
    long total = 0, ooms = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        size_t len;
        char *text = read_all(g.gl_pathv[i], &len);
        int rc;
        uint64_t want, got;
        long n = run_once(g.gl_pathv[i], text, len, 0, &rc, &want);
        assert_int_equal(rc, 0);
        for (long k = 1; k <= n; k++) {
            run_once(g.gl_pathv[i], text, len, k, &rc, &got);
            ooms += rc == LSIM_ENOMEM;
            if (rc == 0 && got != want)
                fprintf(stderr,
                        "%s: allocation %ld failing gave a run that succeeded with trace hash %016llx, "
                        "not %016llx\n",
                        g.gl_pathv[i], k, (unsigned long long)got, (unsigned long long)want);
            if (rc == 0) assert_true(got == want);
        }
        total += n;
        __real_free(text);
    }
    fprintf(stderr, "alloc: %zu scenarios, %ld allocations failed in turn, %ld runs ended in ENOMEM\n", g.gl_pathc,
            total, ooms);
    assert_true(ooms > 0);
    globfree(&g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_every_allocation_fails_in_turn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
