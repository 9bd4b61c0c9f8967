/* Shared includes and helpers for the cmocka test binaries (one binary per module):
 * build and run a scenario text, then find the trace events a test asserts on.
 * Every helper is static and may go unused in a given binary. */
#ifndef LOCKSIM_TESTUTIL_H
#define LOCKSIM_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "engine.h"

#define TESTUTIL_UNUSED __attribute__((unused))

/* ---- Building and running a scenario ---------------------------------------------------- */

/* Parse text (as "test.lsim") and build an engine that keeps its trace, with
 * algo swapped in leniently (as `--algo` does) when not NULL. Any parse or
 * build error fails the test. Not run yet; the caller frees the engine. */
/* The seed's story at the seconds of a teacher's telling: A's lease of 30 s
 * runs out during a 27 s pause, B gets the lock at 31 s, A writes on. */
static TESTUTIL_UNUSED const char testutil_gc_story[] =
        "title \"GC pause outlives the lease\"\n"
        "lock lease ttl=30s release=compare-and-delete\n"
        "resource stock=1 fencing=off\n"
        "network latency=0ms\n"
        "duration 60s\n"
        "client A: acquire; read; work 10s; write; release\n"
        "client B @31s: acquire retry=1s; read; write; work 5s; release\n"
        "@5s pause A 27s\n";

static TESTUTIL_UNUSED struct engine *build_engine(const char *text, const char *algo) {
    struct scenario s;
    struct scn_error err;
    scenario_init(&s);
    if (scenario_parse(&s, "test.lsim", text, strlen(text), &err) != 0) {
        fprintf(stderr, "parse: %d:%d: %s\n", err.pos.line, err.pos.col, err.msg);
        scenario_close(&s);
        fail();
    }
    struct engine_opts o = {.keep_trace = 1};
    if (algo) {
        o.algo = lock_algo_find(algo);
        assert_non_null(o.algo);
        o.lenient_options = 1;
    }
    struct engine *e = NULL;
    int rc = engine_new(&e, &s, &o, &err);
    scenario_close(&s);
    if (rc != 0) {
        fprintf(stderr, "build: %d:%d: %s\n", err.pos.line, err.pos.col, err.msg);
        fail();
    }
    return e;
}

/* Parse text, build an engine that keeps its trace, and run it to the end.
 * The caller frees the engine. */
static TESTUTIL_UNUSED struct engine *run_text(const char *text) {
    struct engine *e = build_engine(text, NULL);
    engine_run(e);
    return e;
}

/* Build only, without a trace: text must parse. Returns engine_new's code;
 * on any code but LSIM_ENOMEM, *err says why (line, column, message) and no engine was made. */
static TESTUTIL_UNUSED int build_text(const char *text, struct scn_error *err) {
    struct scenario s;
    scenario_init(&s);
    assert_int_equal(scenario_parse(&s, "test.lsim", text, strlen(text), err), 0);
    struct engine *e = NULL;
    int rc = engine_new(&e, &s, NULL, err);
    if (rc != 0) assert_null(e);
    engine_free(e);
    scenario_close(&s);
    return rc;
}

/* A scenario that parses but that the engine must refuse (a scenario or an
 * option problem, not out of memory); *err says why. */
static TESTUTIL_UNUSED void build_fails(const char *text, struct scn_error *err) {
    int rc = build_text(text, err);
    assert_true(rc == LSIM_EPARSE || rc == LSIM_EUNKNOWN_OPTION || rc == LSIM_EBAD_VALUE);
}

/* ---- Finding trace events ----------------------------------------------------------------- */

/* The index of the node called name in a trace, or -2 when there is none. */
static TESTUTIL_UNUSED int node_of(const struct trace *tr, const char *name) {
    for (int i = 0; i < tr->nnodes; i++)
        if (strcmp(tr->nodes[i].name, name) == 0) return i;
    return -2;
}

/* The nth (from 1) event of a kind at a node (NULL name = any node), or NULL. */
static TESTUTIL_UNUSED const struct trace_event *find(const struct engine *e, int kind, const char *node, int nth) {
    const struct trace *tr = engine_trace(e);
    int want = node ? node_of(tr, node) : -3;
    for (size_t i = 0; i < tr->len; i++) {
        const struct trace_event *ev = &tr->ev[i];
        if (ev->kind == kind && (want == -3 || ev->node == want) && --nth == 0) return ev;
    }
    return NULL;
}

/* As find, but an event that is not there fails the test. */
static TESTUTIL_UNUSED const struct trace_event *must(const struct engine *e, int kind, const char *node, int nth) {
    const struct trace_event *ev = find(e, kind, node, nth);
    if (!ev) {
        fprintf(stderr, "no %s #%d at %s\n", trace_kind_name(kind), nth, node ? node : "*");
        fail();
    }
    return ev;
}

/* Events of a kind at a node (NULL = any) whose peer is `peer` (-3 = any),
 * within true times [from, to]. Every event of a run lies in [0, SIM_TIME_MAX]. */
static TESTUTIL_UNUSED int count(const struct engine *e, int kind, const char *node, int peer, sim_ns from, sim_ns to) {
    const struct trace *tr = engine_trace(e);
    int want = node ? node_of(tr, node) : -3;
    int n = 0;
    for (size_t i = 0; i < tr->len; i++) {
        const struct trace_event *ev = &tr->ev[i];
        if (ev->kind == kind && (want == -3 || ev->node == want) && (peer == -3 || ev->peer == peer) && ev->t >= from &&
            ev->t <= to)
            n++;
    }
    return n;
}

/* How note and must_note compare a note's text with the one asked for. */
enum note_match {
    NOTE_EXACT,    /* the whole text */
    NOTE_PREFIX,   /* the text starts with it */
    NOTE_CONTAINS, /* the text contains it */
};

/* The nth (from 1) algorithm note (TRACE_SRV_NOTE) at a node (NULL = any node)
 * whose text matches `text` as `how` says, or NULL. */
static TESTUTIL_UNUSED const struct trace_event *note(const struct engine *e, const char *node, enum note_match how,
                                                      const char *text, int nth) {
    for (int i = 1;; i++) {
        const struct trace_event *ev = find(e, TRACE_SRV_NOTE, node, i);
        if (!ev) return NULL;
        if (!ev->text) continue;
        int hit = how == NOTE_EXACT    ? strcmp(ev->text, text) == 0
                  : how == NOTE_PREFIX ? strncmp(ev->text, text, strlen(text)) == 0
                                       : strstr(ev->text, text) != NULL;
        if (hit && --nth == 0) return ev;
    }
}

/* As note, but a note that is not there fails the test. */
static TESTUTIL_UNUSED const struct trace_event *must_note(const struct engine *e, const char *node,
                                                           enum note_match how, const char *text, int nth) {
    const struct trace_event *ev = note(e, node, how, text, nth);
    if (!ev) {
        fprintf(stderr, "no note #%d at %s: %s\n", nth, node ? node : "*", text);
        fail();
    }
    return ev;
}

#endif
