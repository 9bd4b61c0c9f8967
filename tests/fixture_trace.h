/* Fixture shared by the trace-as-data tests (test_trace.c) and the render tests
 * (test_render.c): allocation-failure injection, the seed story's four nodes,
 * and a one-call event builder. Include once, after testutil.h and trace.h:
 * it defines malloc, calloc, realloc and free for the whole binary. */
#ifndef LOCKSIM_FIXTURE_TRACE_H
#define LOCKSIM_FIXTURE_TRACE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

/* ---- Allocation failures (glibc, not under ASan, which owns malloc) ---- */

#if defined(__SANITIZE_ADDRESS__)
#define FAULTS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FAULTS 0
#endif
#endif
#if !defined(FAULTS) && defined(__GLIBC__)
#define FAULTS 1
#endif
#ifndef FAULTS
#define FAULTS 0
#endif

#if FAULTS
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
/* -1: never fail; k >= 0: let k more allocations succeed, then fail all.
 * live counts blocks allocated and not yet freed, to find leaks on the
 * failure paths. */
static long fail_after = -1;
static long live;
static int alloc_fails(void) {
    if (fail_after < 0) return 0;
    if (fail_after == 0) return 1;
    fail_after--;
    return 0;
}
void *malloc(size_t n) {
    void *p = alloc_fails() ? NULL : __libc_malloc(n);
    live += p != NULL;
    return p;
}
void *calloc(size_t n, size_t size) {
    void *p = alloc_fails() ? NULL : __libc_calloc(n, size);
    live += p != NULL;
    return p;
}
void *realloc(void *old, size_t n) {
    void *p = alloc_fails() ? NULL : __libc_realloc(old, n);
    live += p != NULL && old == NULL;
    return p;
}
void free(void *p) {
    live -= p != NULL;
    __libc_free(p);
}

/* Whether failures can be injected here: not under valgrind, whose
 * allocator replaces the one above. */
static TESTUTIL_UNUSED int faults_work(void) {
    void *(*volatile alloc)(size_t) = malloc; /* a call the compiler cannot elide */
    fail_after = 0;
    void *p = alloc(1);
    fail_after = -1;
    if (!p) return 1;
    free(p);
    return 0;
}
#endif

/* ---- The seed story's nodes and events ------------------------------------ */

/* Node indices as seed_nodes adds them; NO = no node (a run-wide event). */
enum { A, B, S1, R, NO = TRACE_NO_NODE };

/* Append one event with these fields (the rest zero). text is NULL or a
 * string that outlives the trace (a literal, or one from trace_intern). */
static TESTUTIL_UNUSED void ev(struct trace *tr, sim_ns t, int kind, int node, int peer, uint64_t token, uint32_t grant,
                               int64_t a, int64_t b, const char *text) {
    struct trace_event e;
    memset(&e, 0, sizeof e);
    e.t = t;
    e.kind = (uint16_t)kind;
    e.node = node;
    e.peer = peer;
    e.token = token;
    e.grant = grant;
    e.a = a;
    e.b = b;
    e.text = text;
    trace_append(tr, &e);
}

/* A fresh trace (trace_init(tr, 1)) with the seed's nodes: clients A and B,
 * lock server S1, resource R, at the indices of the enum above. */
static TESTUTIL_UNUSED void seed_nodes(struct trace *tr) {
    trace_init(tr, 1);
    assert_int_equal(trace_add_node(tr, "A", TRACE_NODE_CLIENT), A);
    assert_int_equal(trace_add_node(tr, "B", TRACE_NODE_CLIENT), B);
    assert_int_equal(trace_add_node(tr, "S1", TRACE_NODE_SERVER), S1);
    assert_int_equal(trace_add_node(tr, "R", TRACE_NODE_RESOURCE), R);
}

#endif
