/* Tests of render/: exact time formatting, the timeline layout, the terminal
 * timeline (against checked-in text under tests/expected/) and narration.
 * The main fixture is the seed story: A holds the lock with token 41, pauses
 * at 5s, its lease expires on S1 at 30s, B acquires with token 42 at 31s, A
 * resumes at 32s and writes with its stale token.
 *
 * Set LOCKSIM_UPDATE_EXPECTED=1 to rewrite the expected files (then read
 * them: they must tell the story). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "fmt.h"
#include "layout.h"
#include "narrate.h"
#include "term.h"
#include "trace.h"

#include "fixture_trace.h"

#define S SIM_NS_PER_S
#define MS SIM_NS_PER_MS

/* ---- The seed fixture ---------------------------------------------------- */

/* The GC-pause-outlives-lease timeline; fenced = the resource checks tokens. */
static void seed_trace(struct trace *tr, int fenced) {
    seed_nodes(tr);
    snprintf(tr->title, sizeof tr->title, "GC pause outlives the lease");
    snprintf(tr->algo, sizeof tr->algo, fenced ? "fenced-lease" : "lease");
    tr->seed = 7;
    ev(tr, 0, TRACE_RUN_START, NO, NO, 0, 0, 7, 40 * S, NULL);
    ev(tr, 0, TRACE_RESOURCE_INIT, R, NO, 0, 0, 10, fenced, NULL);
    /* t=0: A acquires; S1 grants token 41 for 30s; A reads the stock. */
    ev(tr, 0, TRACE_ACQUIRE_START, A, NO, 0, 0, 0, 0, NULL);
    ev(tr, 0, TRACE_SRV_GRANT, S1, A, 41, 1, 30 * S, 30 * S, NULL);
    ev(tr, 0, TRACE_ACQUIRED, A, NO, 41, 1, 30 * S, 0, NULL);
    ev(tr, 0, TRACE_READ, R, A, 0, 0, 10, 0, NULL);
    /* t=5: A pauses (GC) inside the critical section. */
    ev(tr, 5 * S, TRACE_PAUSE, A, NO, 0, 0, 0, 0, NULL);
    /* t=30: the lease expires on S1; A does not know. */
    ev(tr, 30 * S, TRACE_SRV_EXPIRE, S1, A, 0, 1, 0, 0, NULL);
    /* t=31: B acquires legitimately (token 42), reads, writes. */
    ev(tr, 31 * S, TRACE_ACQUIRE_START, B, NO, 0, 0, 0, 0, NULL);
    ev(tr, 31 * S, TRACE_SRV_GRANT, S1, B, 42, 2, 30 * S, 61 * S, NULL);
    ev(tr, 31 * S, TRACE_ACQUIRED, B, NO, 42, 2, 30 * S, 0, NULL);
    ev(tr, 31 * S, TRACE_DOUBLE_ENTRY_BEGIN, B, A, 0, 0, 0, 0, NULL);
    ev(tr, 31 * S, TRACE_READ, R, B, 0, 0, 10, 0, NULL);
    ev(tr, 31 * S, TRACE_WRITE, R, B, 42, 2, 9, TRACE_WRITE_ACCEPTED, NULL);
    /* t=32: A resumes and writes with token 41. */
    ev(tr, 32 * S, TRACE_RESUME, A, NO, 0, 0, 27 * S, 0, NULL);
    ev(tr, 32 * S, TRACE_WRITE, R, A, 41, 1, 9, fenced ? TRACE_WRITE_REJECTED_STALE : TRACE_WRITE_ACCEPTED, NULL);
    ev(tr, 32 * S, TRACE_STALE_WRITE, A, NO, 41, 1, !fenced, 0, NULL);
    ev(tr, 32 * S, TRACE_CS_EXIT, A, NO, 0, 0, TRACE_EXIT_RELEASE, 0, NULL);
    ev(tr, 32 * S, TRACE_DOUBLE_ENTRY_END, B, A, 0, 0, 1 * S, 0, NULL);
    ev(tr, 32 * S, TRACE_SRV_KEEP, S1, A, 0, 0, 0, 0, NULL);
    /* t=35: B releases; S1 deletes B's entry. t=40: the run ends. */
    ev(tr, 35 * S, TRACE_CS_EXIT, B, NO, 0, 0, TRACE_EXIT_RELEASE, 0, NULL);
    ev(tr, 35 * S, TRACE_SRV_DELETE, S1, B, 0, 2, B, 0, NULL);
    ev(tr, 40 * S, TRACE_RUN_END, NO, NO, 0, 0, 22, 0, NULL);
}

static void expect_span(const struct layout_lane *l, size_t i, int kind, sim_ns t0, sim_ns t1, int end, int peer,
                        uint64_t token) {
    assert_true(i < l->nspans);
    const struct layout_span *s = &l->spans[i];
    assert_string_equal(layout_span_name(s->kind), layout_span_name(kind));
    assert_int_equal(s->t0, t0);
    assert_int_equal(s->t1, t1);
    assert_int_equal(s->end, end);
    assert_int_equal(s->peer, peer);
    assert_int_equal(s->token, token);
}

static void expect_mark(const struct layout_lane *l, size_t i, int kind, sim_ns t, int peer, uint64_t token) {
    assert_true(i < l->nmarks);
    const struct layout_mark *m = &l->marks[i];
    assert_string_equal(layout_mark_name(m->kind), layout_mark_name(kind));
    assert_int_equal(m->t, t);
    assert_int_equal(m->peer, peer);
    assert_int_equal(m->token, token);
}

/* Render to a string (caller frees). */
static char *render(const struct trace *tr, int width, int color, int legend, size_t *len) {
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    assert_non_null(f);
    struct term_opts o = {.width = width, .color = color, .legend = legend};
    assert_int_equal(term_render(f, tr, &o), 0);
    fclose(f);
    return buf;
}

/* Compare with tests/expected/<name> (beside this file), or rewrite it when
 * LOCKSIM_UPDATE_EXPECTED is set. */
static void compare_expected(const char *name, const char *got, size_t len) {
    char path[512];
    const char *slash = strrchr(__FILE__, '/');
    int dirlen = slash ? (int)(slash - __FILE__) : 1;
    snprintf(path, sizeof path, "%.*s/expected/%s", dirlen, slash ? __FILE__ : ".", name);
    if (getenv("LOCKSIM_UPDATE_EXPECTED")) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fwrite(got, 1, len, f);
        fclose(f);
        return;
    }
    FILE *f = fopen(path, "rb");
    if (!f) fprintf(stderr, "cannot open %s (run the tests from the repository root)\n", path);
    assert_non_null(f);
    char *want = malloc(len + 2);
    assert_non_null(want);
    size_t n = fread(want, 1, len + 1, f);
    fclose(f);
    if (n != len || memcmp(want, got, len) != 0) fprintf(stderr, "%s differs; got:\n%.*s\n", path, (int)len, got);
    assert_int_equal(n, len);
    assert_memory_equal(want, got, len);
    free(want);
}

/* ---- fmt ------------------------------------------------------------------ */

static void test_format_time_exact(void **state) {
    (void)state;
    char b[64];
    static const struct {
        sim_ns t;
        const char *want;
    } cases[] = {
            {0, "0s"},
            {31 * S, "31s"},
            {31 * S + 500 * MS, "31.5s"},
            {250 * MS, "250ms"},
            {1250 * SIM_NS_PER_US, "1.25ms"},
            {1500, "1.5us"},
            {7, "7ns"},
            {S + 1, "1.000000001s"},
            {-2 * S, "-2s"},
            {SIM_TIME_MAX, "1000000s"},
            {INT64_MIN, "-9223372036.854775808s"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int n = format_time_ns(b, sizeof b, cases[i].t);
        assert_string_equal(b, cases[i].want);
        assert_int_equal(n, (int)strlen(cases[i].want));
    }
    /* A small buffer cuts the text but reports the full length. */
    assert_int_equal(format_time_ns(b, 4, 31 * S + 500 * MS), 5);
    assert_string_equal(b, "31.");
    /* Minutes only for whole minutes; otherwise seconds. */
    format_time_in(b, sizeof b, 120 * S, SIM_NS_PER_MIN, "m");
    assert_string_equal(b, "2m");
    format_time_in(b, sizeof b, 90 * S, SIM_NS_PER_MIN, "m");
    assert_string_equal(b, "90s");
    format_time_in(b, sizeof b, 1500 * MS, S, "s");
    assert_string_equal(b, "1.5s");
}

/* ---- axis ----------------------------------------------------------------- */

static void test_axis_fit(void **state) {
    (void)state;
    struct layout_axis ax;
    char b[32];
    /* 40 s in at most 87 columns: 500 ms a column, ticks every 5 s. */
    assert_int_equal(layout_axis_fit(&ax, 40 * S, 87, 8), 0);
    assert_int_equal(ax.cell_ns, 500 * MS);
    assert_int_equal(ax.ncells, 81);
    assert_int_equal(ax.tick_ns, 5 * S);
    layout_axis_label(&ax, 35 * S, b, sizeof b);
    assert_string_equal(b, "35s");
    /* 10 minutes in 60 columns: 15 s a column, ticks every 2 minutes. */
    assert_int_equal(layout_axis_fit(&ax, 600 * S, 60, 8), 0);
    assert_int_equal(ax.cell_ns, 15 * S);
    assert_int_equal(ax.ncells, 41);
    assert_int_equal(ax.tick_ns, 120 * S);
    layout_axis_label(&ax, 240 * S, b, sizeof b);
    assert_string_equal(b, "4m");
    /* 400 ms: milliseconds. */
    assert_int_equal(layout_axis_fit(&ax, 400 * MS, 87, 8), 0);
    assert_int_equal(ax.cell_ns, 5 * MS);
    layout_axis_label(&ax, 50 * MS, b, sizeof b);
    assert_string_equal(b, "50ms");
    /* 2.5 s: seconds with decimals. */
    assert_int_equal(layout_axis_fit(&ax, 2500 * MS, 87, 8), 0);
    assert_int_equal(ax.cell_ns, 50 * MS);
    assert_int_equal(ax.tick_ns, 500 * MS);
    layout_axis_label(&ax, 1500 * MS, b, sizeof b);
    assert_string_equal(b, "1.5s");
    /* Nothing happened after 0: one cell. No room: an error. */
    assert_int_equal(layout_axis_fit(&ax, 0, 87, 8), 0);
    assert_int_equal(ax.ncells, 1);
    assert_int_equal(layout_axis_fit(&ax, 40 * S, 0, 8), -1);
    /* The longest run there can be still fits. */
    assert_int_equal(layout_axis_fit(&ax, SIM_TIME_MAX, 27, 8), 0);
    assert_true(ax.ncells <= 27);
    assert_int_equal(layout_axis_fit(&ax, INT64_MAX, 27, 1000000000), 0); /* clamped */
    assert_int_equal(ax.t_end, SIM_TIME_MAX);
    assert_true(ax.ncells <= 27 && ax.tick_ns > 0);
}

static void test_axis_cells(void **state) {
    (void)state;
    struct layout_axis ax;
    int c0, c1;
    assert_int_equal(layout_axis_fit(&ax, 40 * S, 87, 8), 0);
    /* [0, 32 s) covers cells 0..63; the next interval starts in cell 64. */
    layout_axis_span(&ax, 0, 32 * S, &c0, &c1);
    assert_int_equal(c0, 0);
    assert_int_equal(c1, 63);
    assert_int_equal(layout_axis_cell(&ax, 32 * S), 64);
    /* An interval inside one cell, even of zero length, gets that cell. */
    layout_axis_span(&ax, 31 * S + 100, 31 * S + 200, &c0, &c1);
    assert_int_equal(c0, 62);
    assert_int_equal(c1, 62);
    layout_axis_span(&ax, 31 * S, 31 * S, &c0, &c1);
    assert_int_equal(c0, 62);
    assert_int_equal(c1, 62);
    /* The end of the run is the last cell. */
    assert_int_equal(layout_axis_cell(&ax, 40 * S), 80);
    assert_int_equal(layout_axis_cell(&ax, 41 * S), 80);
}

/* ---- layout --------------------------------------------------------------- */

static void test_layout_seed(void **state) {
    (void)state;
    struct trace tr;
    seed_trace(&tr, 1);
    struct layout ly;
    assert_int_equal(layout_build(&ly, &tr), 0);
    assert_int_equal(ly.t_end, 40 * S);
    assert_int_equal(ly.nlanes, 4);
    assert_string_equal(ly.lanes[S1].name, "S1");
    assert_int_equal(ly.lanes[R].kind, TRACE_NODE_RESOURCE);

    /* A: acquires at 0 with token 41, holds until 32 s, paused 5..32 s. */
    const struct layout_lane *a = &ly.lanes[A];
    assert_int_equal(a->nspans, 3);
    expect_span(a, 0, LAYOUT_SPAN_ACQUIRING, 0, 0, LAYOUT_END_ACQUIRED, -1, 0);
    expect_span(a, 1, LAYOUT_SPAN_HOLDING, 0, 32 * S, LAYOUT_END_RELEASE, -1, 41);
    assert_int_equal(a->spans[1].grant, 1);
    assert_int_equal(a->spans[1].validity_ns, 30 * S);
    expect_span(a, 2, LAYOUT_SPAN_PAUSED, 5 * S, 32 * S, LAYOUT_END_RESUME, -1, 0);
    assert_int_equal(a->nmarks, 2);
    expect_mark(a, 0, LAYOUT_MARK_ACQUIRED, 0, NO, 41);
    expect_mark(a, 1, LAYOUT_MARK_RELEASE, 32 * S, NO, 0);

    /* B: acquires at 31 s with token 42, releases at 35 s. */
    const struct layout_lane *b = &ly.lanes[B];
    assert_int_equal(b->nspans, 2);
    expect_span(b, 0, LAYOUT_SPAN_ACQUIRING, 31 * S, 31 * S, LAYOUT_END_ACQUIRED, -1, 0);
    expect_span(b, 1, LAYOUT_SPAN_HOLDING, 31 * S, 35 * S, LAYOUT_END_RELEASE, -1, 42);
    assert_int_equal(b->nmarks, 2);
    expect_mark(b, 0, LAYOUT_MARK_ACQUIRED, 31 * S, NO, 42);
    expect_mark(b, 1, LAYOUT_MARK_RELEASE, 35 * S, NO, 0);

    /* S1: A's lease 0..30 s (expired), B's lease 31..35 s (released). */
    const struct layout_lane *s1 = &ly.lanes[S1];
    assert_int_equal(s1->nspans, 2);
    expect_span(s1, 0, LAYOUT_SPAN_LEASE, 0, 30 * S, LAYOUT_END_EXPIRED, A, 41);
    assert_int_equal(s1->spans[0].validity_ns, 30 * S);
    expect_span(s1, 1, LAYOUT_SPAN_LEASE, 31 * S, 35 * S, LAYOUT_END_RELEASE, B, 42);
    assert_int_equal(s1->nmarks, 5);
    expect_mark(s1, 0, LAYOUT_MARK_GRANT, 0, A, 41);
    expect_mark(s1, 1, LAYOUT_MARK_EXPIRE, 30 * S, A, 0);
    expect_mark(s1, 2, LAYOUT_MARK_GRANT, 31 * S, B, 42);
    expect_mark(s1, 3, LAYOUT_MARK_KEEP, 32 * S, A, 0);
    expect_mark(s1, 4, LAYOUT_MARK_DELETE, 35 * S, B, 0);
    assert_int_equal(s1->marks[4].value, B);
    assert_int_equal(s1->marks[4].detail, 0);

    /* R: two reads, B's write accepted, A's stale write rejected. */
    const struct layout_lane *r = &ly.lanes[R];
    assert_int_equal(r->nspans, 0);
    assert_int_equal(r->nmarks, 4);
    expect_mark(r, 0, LAYOUT_MARK_READ, 0, A, 0);
    assert_int_equal(r->marks[0].value, 10);
    expect_mark(r, 1, LAYOUT_MARK_READ, 31 * S, B, 0);
    expect_mark(r, 2, LAYOUT_MARK_WRITE_OK, 31 * S, B, 42);
    assert_int_equal(r->marks[2].value, 9);
    assert_int_equal(r->marks[2].stale, 0);
    expect_mark(r, 3, LAYOUT_MARK_WRITE_REJECTED, 32 * S, A, 41);
    assert_int_equal(r->marks[3].detail, TRACE_WRITE_REJECTED_STALE);
    assert_int_equal(r->marks[3].stale, 1);
    assert_int_equal(r->marks[3].other, B); /* inferred: B holds the newer grant */

    /* The double entry: B and A, 31..32 s. */
    assert_int_equal(ly.ndoubles, 1);
    assert_int_equal(ly.doubles[0].t0, 31 * S);
    assert_int_equal(ly.doubles[0].t1, 32 * S);
    assert_int_equal(ly.doubles[0].a, B);
    assert_int_equal(ly.doubles[0].b, A);
    assert_int_equal(ly.doubles[0].open, 0);

    layout_close(&ly);
    layout_close(&ly); /* safe twice */
    trace_close(&tr);
}

/* Without fencing, A's stale write is accepted and flagged. */
static void test_layout_unfenced_stale_write(void **state) {
    (void)state;
    struct trace tr;
    seed_trace(&tr, 0);
    struct layout ly;
    assert_int_equal(layout_build(&ly, &tr), 0);
    const struct layout_lane *r = &ly.lanes[R];
    expect_mark(r, 3, LAYOUT_MARK_WRITE_OK, 32 * S, A, 41);
    assert_int_equal(r->marks[3].stale, 1);
    assert_int_equal(r->marks[3].other, B);
    assert_int_equal(r->marks[2].stale, 0);
    layout_close(&ly);
    trace_close(&tr);
}

/* A trace cut short: open intervals close at the last event's time. */
static void test_layout_open_intervals(void **state) {
    (void)state;
    struct trace tr;
    seed_nodes(&tr);
    /* A waits 0..2 s, holds from 2 s and pauses at 3 s; B waits from 4 s;
     * S1 grants at 2 s; both in the CS from 5 s; nothing ends. */
    ev(&tr, 0, TRACE_ACQUIRE_START, A, NO, 0, 0, 0, 0, NULL);
    ev(&tr, 2 * S, TRACE_SRV_GRANT, S1, A, 7, 1, 10 * S, 0, NULL);
    ev(&tr, 2 * S, TRACE_ACQUIRED, A, NO, 7, 1, 0, 0, NULL);
    ev(&tr, 3 * S, TRACE_PAUSE, A, NO, 0, 0, 0, 0, NULL);
    ev(&tr, 4 * S, TRACE_ACQUIRE_START, B, NO, 0, 0, 0, 0, NULL);
    ev(&tr, 5 * S, TRACE_DOUBLE_ENTRY_BEGIN, B, A, 0, 0, 0, 0, NULL);
    ev(&tr, 6 * S, TRACE_READ, R, A, 0, 0, 1, 0, NULL);
    struct layout ly;
    assert_int_equal(layout_build(&ly, &tr), 0);
    assert_int_equal(ly.t_end, 6 * S);
    expect_span(&ly.lanes[A], 0, LAYOUT_SPAN_ACQUIRING, 0, 2 * S, LAYOUT_END_ACQUIRED, -1, 0);
    expect_span(&ly.lanes[A], 1, LAYOUT_SPAN_HOLDING, 2 * S, 6 * S, LAYOUT_END_OPEN, -1, 7);
    expect_span(&ly.lanes[A], 2, LAYOUT_SPAN_PAUSED, 3 * S, 6 * S, LAYOUT_END_OPEN, -1, 0);
    expect_span(&ly.lanes[B], 0, LAYOUT_SPAN_ACQUIRING, 4 * S, 6 * S, LAYOUT_END_OPEN, -1, 0);
    expect_span(&ly.lanes[S1], 0, LAYOUT_SPAN_LEASE, 2 * S, 6 * S, LAYOUT_END_OPEN, A, 7);
    assert_int_equal(ly.ndoubles, 1);
    assert_int_equal(ly.doubles[0].t1, 6 * S);
    assert_int_equal(ly.doubles[0].open, 1);
    layout_close(&ly);

    /* Open intervals run to the last column of the chart. */
    size_t len;
    char *out = render(&tr, 60, 0, 0, &len);
    /* 200 ms a column: A waits 0..2 s, holds from 2 s, paused from 3 s, to
     * the end; the double entry from 5 s to the end. */
    assert_non_null(strstr(out, "\nA            ..........+====################\n"));
    assert_non_null(strstr(out, "\nDOUBLE ENTRY                          ^^^^^^\n"));
    assert_non_null(strstr(out, "(still at the end)"));
    free(out);
    trace_close(&tr);
}

/* Crashes: a client's crash ends its critical section; a server's crash
 * ends what it shows; restarts are marked. Renewals extend a lease; a
 * release that removes another client's entry is marked on both sides. */
static void test_layout_crash_renew_wrong_release(void **state) {
    (void)state;
    struct trace tr;
    seed_nodes(&tr);
    ev(&tr, 0, TRACE_SRV_GRANT, S1, A, 1, 1, 10 * S, 0, NULL);
    ev(&tr, 0, TRACE_ACQUIRED, A, NO, 1, 1, 10 * S, 0, NULL);
    ev(&tr, 4 * S, TRACE_SRV_RENEW, S1, A, 0, 1, 20 * S, 0, NULL);
    ev(&tr, 6 * S, TRACE_CRASH, A, NO, 0, 0, 0, 0, NULL);
    ev(&tr, 6 * S, TRACE_CS_EXIT, A, NO, 0, 0, TRACE_EXIT_CRASH, 0, NULL);
    ev(&tr, 7 * S, TRACE_CRASH, S1, NO, 0, 0, 0, 0, NULL);
    ev(&tr, 8 * S, TRACE_RESTART, S1, NO, 0, 0, 0, 0, NULL);
    ev(&tr, 9 * S, TRACE_RESTART, A, NO, 0, 0, 0, 0, NULL);
    ev(&tr, 9 * S, TRACE_CLOCK_STEP, A, NO, 0, 0, -3 * S, 1, NULL);
    ev(&tr, 10 * S, TRACE_SRV_GRANT, S1, B, 2, 2, 10 * S, 0, NULL);
    ev(&tr, 10 * S, TRACE_ACQUIRED, B, NO, 2, 2, 0, 0, NULL);
    ev(&tr, 11 * S, TRACE_SRV_DELETE, S1, A, 0, 2, B, 1, NULL);
    ev(&tr, 11 * S, TRACE_WRONG_RELEASE, A, B, 0, 0, 0, 0, NULL);
    ev(&tr, 12 * S, TRACE_RUN_END, NO, NO, 0, 0, 0, 0, NULL);
    struct layout ly;
    assert_int_equal(layout_build(&ly, &tr), 0);
    const struct layout_lane *a = &ly.lanes[A], *s1 = &ly.lanes[S1];
    expect_span(a, 0, LAYOUT_SPAN_HOLDING, 0, 6 * S, LAYOUT_END_CRASH, -1, 1);
    expect_span(a, 1, LAYOUT_SPAN_CRASHED, 6 * S, 9 * S, LAYOUT_END_RESTART, -1, 0);
    expect_mark(a, 1, LAYOUT_MARK_CRASH, 6 * S, NO, 0);
    expect_mark(a, 2, LAYOUT_MARK_RESTART, 9 * S, NO, 0);
    expect_mark(a, 3, LAYOUT_MARK_CLOCK_STEP, 9 * S, NO, 0);
    assert_int_equal(a->marks[3].value, -3 * S);
    expect_mark(a, 4, LAYOUT_MARK_WRONG_RELEASE, 11 * S, B, 0);
    /* The renewal keeps one lease span, with the new ttl; the crash ends it. */
    expect_span(s1, 0, LAYOUT_SPAN_LEASE, 0, 7 * S, LAYOUT_END_CRASH, A, 1);
    assert_int_equal(s1->spans[0].validity_ns, 20 * S);
    expect_span(s1, 1, LAYOUT_SPAN_CRASHED, 7 * S, 8 * S, LAYOUT_END_RESTART, -1, 0);
    expect_span(s1, 2, LAYOUT_SPAN_LEASE, 10 * S, 11 * S, LAYOUT_END_DELETED_BY_OTHER, B, 2);
    expect_mark(s1, 1, LAYOUT_MARK_RENEW, 4 * S, A, 0);
    expect_mark(s1, 5, LAYOUT_MARK_DELETE, 11 * S, A, 0);
    assert_int_equal(s1->marks[5].detail, 1);
    /* B still holds at the end. */
    expect_span(&ly.lanes[B], 0, LAYOUT_SPAN_HOLDING, 10 * S, 12 * S, LAYOUT_END_OPEN, -1, 2);
    layout_close(&ly);

    /* On the terminal: X crash, x down, * restart, c clock step, ! wrong release. */
    size_t len;
    char *out = render(&tr, 80, 0, 1, &len);
    /* 200 ms a column. A: holds 0..6 s, crashes, down until 9 s (where the
     * restart hides the clock step), then its release removes B's lock at
     * 11 s. S1: renews at 4 s, crashes at 7 s, restarts, grants B at 10 s,
     * deletes B's entry on A's release at 11 s. */
    assert_non_null(strstr(out, "\nA    +=============================Xxxxxxxxxxxxxxx*"
                                "         !\n"));
    assert_non_null(strstr(out, "\nS1   [------------------->--------------Xxxxx*"
                                "         [----!\n"));
    assert_non_null(strstr(out, "! release removed ANOTHER's lock"));
    free(out);
    trace_close(&tr);
}

static void test_layout_empty(void **state) {
    (void)state;
    struct trace tr;
    trace_init(&tr, 1);
    struct layout ly;
    assert_int_equal(layout_build(&ly, &tr), 0);
    assert_int_equal(ly.nlanes, 0);
    assert_int_equal(ly.t_end, 0);
    layout_close(&ly);
    size_t len;
    char *out = render(&tr, 100, 0, 1, &len);
    assert_non_null(strstr(out, "time 0s\n"));
    free(out);
    trace_close(&tr);
}

/* ---- terminal ------------------------------------------------------------- */

static void test_term_seed_fenced_plain(void **state) {
    (void)state;
    struct trace tr;
    seed_trace(&tr, 1);
    size_t len;
    char *out = render(&tr, 100, 0, 1, &len);
    compare_expected("seed_plain_w100.txt", out, len);
    /* The story, in the chart. */
    assert_non_null(strstr(out, "\nA            +=========###"));
    assert_non_null(strstr(out, "REJECTED: stale, 42 already seen"));
    assert_non_null(strstr(out, "\nDOUBLE ENTRY "));
    free(out);
    trace_close(&tr);
}

static void test_term_seed_unfenced_plain(void **state) {
    (void)state;
    struct trace tr;
    seed_trace(&tr, 0);
    size_t len;
    char *out = render(&tr, 100, 0, 1, &len);
    compare_expected("seed_unfenced_plain_w100.txt", out, len);
    assert_non_null(strstr(out, "A write tok 41 value 9 ACCEPTED though stale: B holds the lock"));
    free(out);
    trace_close(&tr);
}

/* A partition in the terminal: a NETWORK row hatched with '/' from the cut
 * to the heal, the groups in words under it, and '/' in the legend (before,
 * the terminal drew no partition at all, so a split brain read as no fault). */
static void test_term_partition_row(void **state) {
    (void)state;
    struct trace tr;
    seed_nodes(&tr);
    snprintf(tr.title, sizeof tr.title, "split");
    snprintf(tr.algo, sizeof tr.algo, "lease");
    ev(&tr, 0, TRACE_RUN_START, NO, NO, 0, 0, 1, 40 * S, NULL);
    ev(&tr, 10 * S, TRACE_PARTITION, NO, NO, 0, 0, 2, 0, "A S1 | B R");
    ev(&tr, 20 * S, TRACE_HEAL, NO, NO, 0, 0, 0, 0, NULL);
    ev(&tr, 40 * S, TRACE_RUN_END, NO, NO, 0, 0, 3, 0, NULL);
    size_t len;
    char *out = render(&tr, 100, 0, 1, &len);
    const char *row = strstr(out, "\nNETWORK");
    assert_non_null(row);
    row++;
    /* the axis: where do 10s and 20s fall? the row's '/' (or the label over
     * them) span exactly those columns */
    const char *axis = strstr(out, "time ");
    assert_non_null(axis);
    const char *t10 = strstr(axis, "10s"), *t20 = strstr(axis, "20s");
    assert_non_null(t10);
    assert_non_null(t20);
    int c10 = (int)(t10 - axis), c20 = (int)(t20 - axis);
    const char *eol = strchr(row, '\n');
    assert_non_null(eol);
    assert_true(eol - row > c20 - 1);
    assert_int_equal(row[c20 - 1], '/');             /* still cut just before 20s */
    assert_int_not_equal(row[c10 - 1], '/');         /* not yet before 10s */
    assert_true(row[c10] == '/' || row[c10] == 'p'); /* from 10s: hatched, or its label */
    assert_non_null(strstr(out, "partition 10s..20s, then healed: A S1 | B R"));
    assert_non_null(strstr(out, "/ network partitioned: links cut"));
    free(out);
    trace_close(&tr);
}

/* Plain mode is pure ASCII and never wider than asked (at least 40). */
static void test_term_width_and_ascii(void **state) {
    (void)state;
    struct trace tr;
    seed_trace(&tr, 1);
    int widths[] = {10, 40, 57, 100, 180};
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        size_t len;
        char *out = render(&tr, widths[w], 0, 1, &len);
        int limit = widths[w] < TERM_MIN_WIDTH ? TERM_MIN_WIDTH : widths[w];
        int col = 0;
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char)out[i];
            if (c == '\n') {
                assert_true(col <= limit);
                col = 0;
                continue;
            }
            assert_true(c >= 0x20 && c < 0x7f);
            col++;
        }
        assert_int_equal(col, 0); /* ends with a newline */
        assert_non_null(strstr(out, "DOUBLE ENTRY"));
        free(out);
    }
    /* A name that is not ASCII is shown with '?' in plain mode. */
    trace_close(&tr);
    trace_init(&tr, 1);
    trace_add_node(&tr, "\xc3\xa9t\xc3\xa9", TRACE_NODE_CLIENT);
    ev(&tr, 0, TRACE_ACQUIRED, 0, NO, 1, 1, 0, 0, NULL);
    size_t len;
    char *out = render(&tr, 40, 0, 0, &len);
    assert_non_null(strstr(out, "??t??"));
    free(out);
    trace_close(&tr);
}

/* Colour mode: the same glyphs with SGR codes; the double entry on red. */
static void test_term_color(void **state) {
    (void)state;
    struct trace tr;
    seed_trace(&tr, 1);
    size_t len;
    char *out = render(&tr, 100, 1, 1, &len);
    assert_non_null(strstr(out, "\x1b[1;37;41m^^\x1b[0m"));
    assert_non_null(strstr(out, "\x1b[1;33m#####"));
    /* Every line that sets a style resets it before its newline: its last
     * escape is a reset. */
    for (char *start = out, *nl; (nl = strchr(start, '\n')) != NULL; start = nl + 1) {
        char *last = NULL;
        for (char *p = start; p < nl; p++)
            if (*p == '\x1b') last = p;
        if (last) assert_memory_equal(last, "\x1b[0m", 4);
    }
    free(out);
    out = render(&tr, 100, 0, 1, &len);
    assert_null(memchr(out, '\x1b', len));
    free(out);
    trace_close(&tr);
}

/* A 1 ms interval in a 40 s run still shows; an instant marker wins over
 * the interval in its column; no legend when asked for none. */
static void test_term_short_and_markers(void **state) {
    (void)state;
    struct trace tr;
    seed_nodes(&tr);
    ev(&tr, 10 * S, TRACE_PAUSE, B, NO, 0, 0, 0, 0, NULL);
    ev(&tr, 10 * S + MS, TRACE_RESUME, B, NO, 0, 0, MS, 0, NULL);
    ev(&tr, 20 * S, TRACE_SRV_GRANT, S1, A, 5, 5, 10 * S, 0, NULL);
    ev(&tr, 40 * S, TRACE_RUN_END, NO, NO, 0, 0, 0, 0, NULL);
    size_t len;
    char *out = render(&tr, 100, 0, 0, &len);
    /* B: one '~' at 10 s (column 20 of the chart, 500 ms a column). */
    assert_non_null(strstr(out, "\nB    "
                                "                    ~\n"));
    /* S1: '[' (the grant marker) hides the first cell of the lease. */
    assert_non_null(strstr(out, "\nS1   "
                                "                                        [---"));
    assert_null(strstr(out, "legend"));
    free(out);
    trace_close(&tr);
}

/* ---- narration ------------------------------------------------------------ */

/* The nth (from 0) event of a kind at a node; one that is not there fails the test. */
static const struct trace_event *nth_event(const struct trace *tr, int kind, int node, int nth) {
    for (size_t i = 0; i < tr->len; i++)
        if (tr->ev[i].kind == kind && tr->ev[i].node == node && nth-- == 0) return &tr->ev[i];
    fail_msg("event %s not found", trace_kind_name(kind));
    return NULL;
}

static void test_narrate_seed(void **state) {
    (void)state;
    struct trace tr;
    seed_trace(&tr, 1);
    char b[256];
    assert_int_equal(narrate_event(b, sizeof b, &tr, nth_event(&tr, TRACE_SRV_EXPIRE, S1, 0)), 0);
    assert_string_equal(b, "S1: lease of A expired; A does not know (it is paused)");
    assert_int_equal(narrate_event(b, sizeof b, &tr, nth_event(&tr, TRACE_ACQUIRED, B, 0)), 0);
    assert_non_null(strstr(b, "B acquires the lock (token 42)"));
    assert_int_equal(narrate_event(b, sizeof b, &tr, nth_event(&tr, TRACE_WRITE, R, 0)), 0);
    assert_string_equal(b, "R accepts B's write of 9 (token 42)");
    assert_int_equal(narrate_event(b, sizeof b, &tr, nth_event(&tr, TRACE_WRITE, R, 1)), 0);
    assert_string_equal(b, "R rejects A's write: token 41 is lower than 42 already seen");
    assert_int_equal(narrate_event(b, sizeof b, &tr, nth_event(&tr, TRACE_DOUBLE_ENTRY_BEGIN, B, 0)), 0);
    assert_non_null(strstr(b, "A and B are both in the critical section"));
    assert_int_equal(narrate_event(b, sizeof b, &tr, nth_event(&tr, TRACE_PAUSE, A, 0)), 0);
    assert_non_null(strstr(b, "inside the critical section"));
    assert_int_equal(narrate_event(b, sizeof b, &tr, nth_event(&tr, TRACE_RESUME, A, 0)), 0);
    assert_string_equal(b, "A resumes after 27s, still believing it holds the lock (token 41)");
    assert_int_equal(narrate_event(b, sizeof b, &tr, nth_event(&tr, TRACE_STALE_WRITE, A, 0)), 0);
    assert_non_null(strstr(b, "fencing works"));
    assert_int_equal(narrate_event(b, sizeof b, &tr, nth_event(&tr, TRACE_SRV_KEEP, S1, 0)), 0);
    assert_non_null(strstr(b, "refuses A's release"));
    trace_close(&tr);

    /* Unfenced: the stale write is accepted, and narration names the holder. */
    seed_trace(&tr, 0);
    assert_int_equal(narrate_event(b, sizeof b, &tr, nth_event(&tr, TRACE_STALE_WRITE, A, 0)), 0);
    assert_non_null(strstr(b, "ACCEPTED while B holds the lock"));
    trace_close(&tr);
}

static void test_narrate_not_worth_it(void **state) {
    (void)state;
    struct trace tr;
    seed_nodes(&tr);
    ev(&tr, 0, TRACE_MSG_SEND, A, S1, 0, 0, 1, 1, NULL);
    ev(&tr, 0, TRACE_ACQUIRE_TRY, A, NO, 0, 0, 1, 0, NULL);
    ev(&tr, 0, TRACE_SRV_NOTE, S1, NO, 0, 0, 0, 0, NULL); /* a note without text */
    char b[64] = "junk";
    for (size_t i = 0; i < tr.len; i++) {
        assert_int_equal(narrate_event(b, sizeof b, &tr, &tr.ev[i]), 1);
        assert_string_equal(b, "");
    }
    trace_close(&tr);
}

/* What the owner was doing when its lease expired decides the sentence. */
static void test_narrate_expire_variants(void **state) {
    (void)state;
    struct trace tr;
    seed_nodes(&tr);
    ev(&tr, 0, TRACE_ACQUIRED, A, NO, 1, 1, 0, 0, NULL);
    ev(&tr, 1 * S, TRACE_SRV_EXPIRE, S1, A, 0, 1, 0, 0, NULL); /* still in the CS, running */
    ev(&tr, 2 * S, TRACE_CS_EXIT, A, NO, 0, 0, TRACE_EXIT_RELEASE, 0, NULL);
    ev(&tr, 3 * S, TRACE_SRV_EXPIRE, S1, A, 0, 1, 0, 0, NULL); /* already out */
    ev(&tr, 4 * S, TRACE_ACQUIRED, B, NO, 2, 2, 0, 0, NULL);
    ev(&tr, 5 * S, TRACE_CRASH, B, NO, 0, 0, 0, 0, NULL);
    ev(&tr, 6 * S, TRACE_SRV_EXPIRE, S1, B, 0, 2, 0, 0, NULL); /* crashed */
    char b[256];
    assert_int_equal(narrate_event(b, sizeof b, &tr, &tr.ev[1]), 0);
    assert_string_equal(b, "S1: lease of A expired; A does not know (it is still in the"
                           " critical section)");
    assert_int_equal(narrate_event(b, sizeof b, &tr, &tr.ev[3]), 0);
    assert_string_equal(b, "S1: lease of A expired");
    assert_int_equal(narrate_event(b, sizeof b, &tr, &tr.ev[6]), 0);
    assert_string_equal(b, "S1: lease of B expired (B had crashed)");
    assert_int_equal(narrate_event(b, sizeof b, &tr, &tr.ev[5]), 0);
    assert_non_null(strstr(b, "B crashes inside the critical section"));
    trace_close(&tr);
}

/* One sentence per remaining kind that matters, with its key words; and
 * the marks the layout gives the new client and server instants. */
static void test_narrate_other_kinds(void **state) {
    (void)state;
    struct trace tr;
    seed_nodes(&tr);
    static const char parts[] = "A S1 | B R";
    ev(&tr, 0, TRACE_RESOURCE_INIT, R, NO, 0, 0, 10, 0, NULL);
    ev(&tr, 1, TRACE_CLOCK_STEP, S1, NO, 0, 0, 10 * S, 1, NULL);
    ev(&tr, 2, TRACE_CLOCK_DRIFT, A, NO, 0, 0, -500, 0, NULL);
    ev(&tr, 3, TRACE_CLOCK_SLEW, A, NO, 0, 0, 2 * S, 10 * S, NULL);
    struct trace_event p;
    memset(&p, 0, sizeof p);
    p.t = 4;
    p.kind = TRACE_PARTITION;
    p.node = p.peer = NO;
    p.a = 2;
    p.text = parts;
    trace_append(&tr, &p);
    ev(&tr, 5, TRACE_HEAL, NO, NO, 0, 0, 0, 0, NULL);
    ev(&tr, 6, TRACE_LINK, A, S1, 0, 0, MS, 2 * MS, NULL);
    ev(&tr, 7, TRACE_ACQUIRE_FAILED, B, NO, 0, 0, 5, 0, NULL);
    ev(&tr, 8, TRACE_SRV_DELETE, S1, A, 0, 2, B, 1, NULL);
    ev(&tr, 9, TRACE_WRONG_RELEASE, A, B, 0, 0, 0, 0, NULL);
    ev(&tr, 10, TRACE_WRITE_SKIPPED, A, NO, 41, 1, TRACE_SKIP_CLIENT_CHECK, 0, NULL);
    ev(&tr, 11, TRACE_CONTROL, S1, NO, 0, 0, 1, 0, NULL);
    ev(&tr, 12, TRACE_CS_EXIT, A, NO, 0, 0, TRACE_EXIT_LOST, 0, NULL);
    ev(&tr, 13, TRACE_WRITE, R, B, 0, 0, 3, TRACE_WRITE_REJECTED_NOTOKEN, NULL);
    ev(&tr, 14, TRACE_WRITE, R, B, 7, 0, 3, TRACE_WRITE_REJECTED_COND, NULL);
    static const char *const want[] = {
            "R starts at 10; it does not check tokens (not fenced)",
            "S1's wall clock jumps forward by 10s",
            "A's clock now drifts -500 ppm (runs slow)",
            "A's wall clock is slewed by +2s over 10s",
            "the network splits: A S1 | B R",
            "the network heals",
            "link A -> S1 now takes 1ms..2ms",
            "B gives up acquiring the lock after 5 attempts",
            "S1 deletes B's lock on A's release: A released a lock that was no longer its own",
            "A's release removed B's lock: B is no longer protected",
            "A does not send its write (token 41): its own check says it may no longer hold the lock",
            "operator: S1 is promoted to primary (failover)",
            "A learns it lost the lock and leaves the critical section",
            "R rejects B's write: it carries no fencing token",
            "R rejects B's write: the value changed since B read it",
    };
    assert_int_equal(tr.len, sizeof want / sizeof want[0]);
    char b[256];
    for (size_t i = 0; i < tr.len; i++) {
        assert_int_equal(narrate_event(b, sizeof b, &tr, &tr.ev[i]), 0);
        assert_string_equal(b, want[i]);
    }
    struct layout ly;
    assert_int_equal(layout_build(&ly, &tr), 0);
    expect_mark(&ly.lanes[A], 1, LAYOUT_MARK_WRITE_SKIPPED, 10, NO, 41);
    assert_int_equal(ly.lanes[A].marks[1].detail, TRACE_SKIP_CLIENT_CHECK);
    expect_mark(&ly.lanes[S1], 2, LAYOUT_MARK_CONTROL, 11, NO, 0);
    expect_mark(&ly.lanes[A], 2, LAYOUT_MARK_LOST, 12, NO, 0);
    layout_close(&ly);
    trace_close(&tr);
}

static void test_narrate_trace_lines(void **state) {
    (void)state;
    struct trace tr;
    seed_trace(&tr, 1);
    char *buf = NULL;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(narrate_trace(f, &tr), 0);
    fclose(f);
    assert_non_null(strstr(buf, "  t=30s        S1: lease of A expired; A does not know (it is"
                                " paused)\n"));
    assert_non_null(strstr(buf, "  t=32s        R rejects A's write: token 41 is lower than 42"
                                " already seen\n"));
    /* One line per narrated event, in order: the same as narrate_event gives. */
    int lines = 0;
    for (char *p = buf; *p; p++) lines += *p == '\n';
    int worth = 0;
    char b[256];
    for (size_t i = 0; i < tr.len; i++) worth += narrate_event(b, sizeof b, &tr, &tr.ev[i]) == 0;
    assert_int_equal(lines, worth);
    assert_int_equal(worth, 23); /* every event of the seed fixture is worth a sentence */
    free(buf);
    trace_close(&tr);
}

/* ---- robustness ----------------------------------------------------------- */

/* Any event with any fields, including node indices out of range and
 * events out of their usual order, lays out, draws and narrates cleanly. */
static void test_any_events(void **state) {
    (void)state;
    struct trace tr;
    seed_nodes(&tr);
    uint64_t x = 88172645463325252ull; /* xorshift64 */
    sim_ns t = 0;
    for (int i = 0; i < 3000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        t += (sim_ns)(x % 4) * 7 * MS;
        ev(&tr, t, (int)(x % TRACE_KIND_COUNT), (int)((x >> 8) % 7) - 1, (int)((x >> 16) % 7) - 1, (x >> 24) % 50,
           (uint32_t)((x >> 32) % 50), (int64_t)(x >> 40) % 9 - 2, (int64_t)(x >> 48) % 6 - 1, NULL);
    }
    struct layout ly;
    assert_int_equal(layout_build(&ly, &tr), 0);
    for (int l = 0; l < ly.nlanes; l++)
        for (size_t i = 0; i < ly.lanes[l].nspans; i++) {
            const struct layout_span *sp = &ly.lanes[l].spans[i];
            assert_true(0 <= sp->t0 && sp->t0 <= sp->t1 && sp->t1 <= ly.t_end);
        }
    layout_close(&ly);
    FILE *devnull = fopen("/dev/null", "w");
    assert_non_null(devnull);
    int widths[] = {40, 100, 300};
    for (int w = 0; w < 3; w++)
        for (int color = 0; color < 2; color++) {
            struct term_opts o = {.width = widths[w], .color = color, .legend = 1};
            assert_int_equal(term_render(devnull, &tr, &o), 0);
        }
    assert_int_equal(narrate_trace(devnull, &tr), 0);
    char b[256];
    for (size_t i = 0; i < tr.len; i += 97) assert_true(narrate_event(b, sizeof b, &tr, &tr.ev[i]) >= 0);
    fclose(devnull);
    trace_close(&tr);
}

/* Write errors are reported. */
static void test_write_errors(void **state) {
    (void)state;
    FILE *f = fopen("/dev/full", "w");
    if (!f) {
        skip();
        return;
    }
    setvbuf(f, NULL, _IONBF, 0);
    struct trace tr;
    seed_trace(&tr, 1);
    assert_int_equal(term_render(f, &tr, NULL), -1);
    assert_int_equal(narrate_trace(f, &tr), -1);
    fclose(f);
    trace_close(&tr);
}

/* ---- out of memory ------------------------------------------------------- */

static void test_out_of_memory(void **state) {
    (void)state;
#if FAULTS
    if (!faults_work()) {
        skip();
        return;
    }
    struct trace tr;
    seed_trace(&tr, 1);
    static char iobuf[1 << 16];
    FILE *devnull = fopen("/dev/null", "w");
    assert_non_null(devnull);
    setvbuf(devnull, iobuf, _IOFBF, sizeof iobuf);
    fputc('x', devnull); /* stdio's own setup before failures start */
    struct term_opts o = {.width = 100, .color = 0, .legend = 1};
    int done[4] = {0, 0, 0, 0};
    for (long k = 0; k < 64 && !(done[0] && done[1] && done[2] && done[3]); k++) {
        struct layout ly;
        char b[128];
        long before = live;
        fail_after = k;
        int rc0 = layout_build(&ly, &tr);
        fail_after = -1;
        if (rc0 == 0) {
            done[0] = 1;
            layout_close(&ly);
        } else {
            assert_int_equal(rc0, -1);
            assert_null(ly.lanes); /* zeroed: nothing to free */
        }
        fail_after = k;
        int rc1 = term_render(devnull, &tr, &o);
        int rc2 = narrate_trace(devnull, &tr);
        int rc3 = narrate_event(b, sizeof b, &tr, &tr.ev[7]);
        fail_after = -1;
        assert_true(rc1 == 0 || rc1 == -1);
        assert_true(rc2 == 0 || rc2 == -1);
        assert_true(rc3 == 0 || rc3 == -1);
        done[1] |= rc1 == 0;
        done[2] |= rc2 == 0;
        done[3] |= rc3 == 0;
        if (k == 0) assert_int_equal(rc1 + rc2 + rc3, -3); /* the first allocation fails */
        assert_int_equal(live, before);                    /* nothing leaked, failed or not */
    }
    assert_true(done[0] && done[1] && done[2] && done[3]);
    fclose(devnull);
    trace_close(&tr);
#else
    skip();
#endif
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_format_time_exact),
            cmocka_unit_test(test_axis_fit),
            cmocka_unit_test(test_axis_cells),
            cmocka_unit_test(test_layout_seed),
            cmocka_unit_test(test_layout_unfenced_stale_write),
            cmocka_unit_test(test_layout_open_intervals),
            cmocka_unit_test(test_layout_crash_renew_wrong_release),
            cmocka_unit_test(test_layout_empty),
            cmocka_unit_test(test_term_seed_fenced_plain),
            cmocka_unit_test(test_term_seed_unfenced_plain),
            cmocka_unit_test(test_term_partition_row),
            cmocka_unit_test(test_term_width_and_ascii),
            cmocka_unit_test(test_term_color),
            cmocka_unit_test(test_term_short_and_markers),
            cmocka_unit_test(test_narrate_seed),
            cmocka_unit_test(test_narrate_not_worth_it),
            cmocka_unit_test(test_narrate_expire_variants),
            cmocka_unit_test(test_narrate_other_kinds),
            cmocka_unit_test(test_narrate_trace_lines),
            cmocka_unit_test(test_any_events),
            cmocka_unit_test(test_write_errors),
            cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests_name("render", tests, NULL, NULL);
}
