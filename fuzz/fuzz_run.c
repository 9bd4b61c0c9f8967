/* libFuzzer target: the whole run path on arbitrary bytes. Parse, build the
 * engine, run it on a bounded event budget, check every `expect` line, draw
 * the terminal timeline and the narration, and write the trace as JSON Lines,
 * read it back and write it again. Properties checked: the run stops within
 * its budget; an engine error has a position; the JSONL round trip gives the
 * same bytes and the same trace hash. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"
#include "engine.h"
#include "fuzz_common.h"
#include "lock.h"
#include "trace_jsonl.h"

/* One input must run in milliseconds: a thousand events, a few dozen
 * clients (the limits themselves are exercised by tests/bad/). Measured from
 * the same seeds for 90 s: 4000 events made 73,608 executions reaching 5,432
 * edges, 1000 made 169,356 reaching 5,524: more inputs beat longer runs.
 * -DFUZZ_MAX_EVENTS=N builds another budget. */
#ifndef FUZZ_MAX_EVENTS
#define FUZZ_MAX_EVENTS 1000
#endif
#define FUZZ_MAX_CLIENTS 48
/* The JSON Lines round trip (write, read back, write again) costs a third of
 * an input's time; it runs for one input in FUZZ_ROUNDTRIP_EVERY (by size,
 * so an input always gets the same checks). Two variants from one 2,000-
 * input corpus, side by side for 120 s: every input 26,638 executions and
 * 5,852 edges, one in two 92,525 and 5,853. fuzz_trace fuzzes the reader on
 * its own. */
#ifndef FUZZ_ROUNDTRIP_EVERY
#define FUZZ_ROUNDTRIP_EVERY 2
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Write tr as JSON Lines into a heap buffer (*len bytes, caller frees). */
static char *write_jsonl(const struct trace *tr, size_t *len) {
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    FUZZ_REQUIRE(f != NULL);
    int rc = trace_write_jsonl(f, tr);
    FUZZ_REQUIRE(fclose(f) == 0);
    FUZZ_REQUIRE(rc == 0);
    return buf;
}

static void round_trip(const struct trace *tr) {
    size_t n1 = 0, n2 = 0;
    char *one = write_jsonl(tr, &n1);
    struct trace back;
    char err[256];
    trace_init(&back, 1);
    int rc = trace_read_jsonl(&back, one, n1, err, sizeof err);
    if (rc != 0) fprintf(stderr, "fuzz: reading back the written trace: %s\n", err);
    FUZZ_REQUIRE(rc == 0);
    FUZZ_REQUIRE(back.len == tr->len && back.nnodes == tr->nnodes);
    FUZZ_REQUIRE(trace_hash(&back) == trace_hash(tr));
    char *two = write_jsonl(&back, &n2);
    FUZZ_REQUIRE(n1 == n2 && memcmp(one, two, n1) == 0); /* canonical output */
    free(one);
    free(two);
    trace_close(&back);
}

/* 1 when the text has a `clients N` line with N over FUZZ_MAX_CLIENTS. The
 * run would be cut to FUZZ_MAX_CLIENTS anyway, and making the rest (up to
 * SCN_MAX_CLIENTS, 200,000) under ASan took a third of this target's time:
 * fuzz_parse covers large counts, so such inputs are refused here unparsed
 * (returning -1 keeps them out of the corpus). */
static int too_many_clients(const uint8_t *data, size_t size) {
    static const char kw[] = "clients";
    const size_t kwlen = sizeof kw - 1;
    for (size_t i = 0; i + kwlen < size; i++) {
        if (memcmp(data + i, kw, kwlen) != 0) continue;
        size_t j = i + kwlen;
        while (j < size && (data[j] == ' ' || data[j] == '\t')) j++;
        uint64_t n = 0;
        while (j < size && data[j] >= '0' && data[j] <= '9' && n <= FUZZ_MAX_CLIENTS) n = n * 10 + (data[j++] - '0');
        if (n > FUZZ_MAX_CLIENTS) return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (too_many_clients(data, size)) return -1;
    struct scenario s;
    struct scn_error err;
    memset(&err, 0, sizeof err);
    scenario_init(&s);
    if (scenario_parse(&s, "fuzz.lsim", (const char *)data, size, &err) != 0) {
        scenario_close(&s);
        return 0;
    }
    fuzz_check_scenario(&s);
    if (s.max_events > FUZZ_MAX_EVENTS) s.max_events = FUZZ_MAX_EVENTS;
    if (s.nclients > FUZZ_MAX_CLIENTS) s.nclients = FUZZ_MAX_CLIENTS;

    struct engine *e = NULL;
    /* One input in four runs under another algorithm, as `--algo` and
     * `locksim matrix` do: the fault script is kept, unknown options dropped. */
    struct engine_opts eo = {.algo = NULL, .keep_trace = 1, .lenient_options = 0};
    if (size % 4 == 3) {
        int nalgo = 0;
        while (lock_algo_at(nalgo)) nalgo++;
        eo.algo = lock_algo_at((int)((size / 4) % (size_t)nalgo));
        eo.lenient_options = 1;
    }
    int rc = engine_new(&e, &s, &eo, &err);
    scenario_close(&s);
    FUZZ_REQUIRE(rc == 0 || rc == LSIM_ENOMEM || rc == LSIM_EPARSE || rc == LSIM_EUNKNOWN_OPTION ||
                 rc == LSIM_EBAD_VALUE || rc == LSIM_EPLUGIN);
    if (rc != 0) {
        FUZZ_REQUIRE(e == NULL);
        if (rc != LSIM_ENOMEM) {
            FUZZ_REQUIRE(FUZZ_TERMINATED(err.msg) && err.msg[0] != '\0');
            FUZZ_REQUIRE(err.pos.line >= 1 && err.pos.col >= 1);
        }
        return 0;
    }
    uint64_t events = engine_run(e);
    FUZZ_REQUIRE(events <= FUZZ_MAX_EVENTS);
    FUZZ_REQUIRE(engine_step(e) == 0); /* a finished run stays finished */

    const struct trace *tr = engine_trace(e);
    const struct checker_report *r = engine_report(e);
    const struct scenario *es = engine_scenario(e);
    FUZZ_REQUIRE(!tr->oom);
    FUZZ_REQUIRE(tr->len == tr->count);
    for (size_t i = 1; i < tr->len; i++) FUZZ_REQUIRE(tr->ev[i].t >= tr->ev[i - 1].t);
    FUZZ_REQUIRE(tr->len == 0 || tr->ev[tr->len - 1].t <= es->duration_ns);
    FUZZ_REQUIRE(r->verdict >= SCN_VERDICT_SAFE && r->verdict <= SCN_VERDICT_STUCK);
    FUZZ_REQUIRE(FUZZ_TERMINATED(r->headline) && r->headline[0] != '\0');
    FUZZ_REQUIRE(r->double_entries >= 0 && r->double_entry_ns >= 0);
    FUZZ_REQUIRE(r->acquire_p50_ns <= r->acquire_p99_ns && r->acquire_p99_ns <= r->acquire_max_ns);
    for (int i = 0; i < es->nexpects; i++) {
        int64_t actual = 0;
        int ok = checker_expect_holds(r, &es->expects[i], &actual);
        FUZZ_REQUIRE(ok == 0 || ok == 1);
        if (es->expects[i].kind == SCN_EXPECT_METRIC) FUZZ_REQUIRE(actual == checker_metric(r, es->expects[i].metric));
        else FUZZ_REQUIRE(r->nfacts <= SCN_MAX_EXPECT_CLIENTS);
    }
    fuzz_render(tr, 1 + (int)(size % 300)); /* 1..300 columns */
    if (size % FUZZ_ROUNDTRIP_EVERY == 0) round_trip(tr);
    engine_free(e);
    return 0;
}
