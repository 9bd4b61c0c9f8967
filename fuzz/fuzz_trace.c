/* libFuzzer target: the JSON Lines trace reader (trace_read_jsonl) on
 * arbitrary bytes, then everything a user does with a recorded trace: draw it
 * (timeline, narration), check it (the checker replays its events), and
 * write it again. Properties checked: an error says "line N: ..."; an
 * accepted trace writes canonically (write, read, write gives equal bytes)
 * and keeps its hash. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"
#include "fuzz_common.h"
#include "trace_jsonl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *write_jsonl(const struct trace *tr, size_t *len) {
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    FUZZ_REQUIRE(f != NULL);
    int rc = trace_write_jsonl(f, tr);
    FUZZ_REQUIRE(fclose(f) == 0);
    FUZZ_REQUIRE(rc == 0);
    return buf;
}

/* The checker on a recorded trace: a fresh trace with the same nodes, the
 * checker observing it, every event appended in order. */
static void replay_checker(const struct trace *tr) {
    struct trace live;
    struct checker ck;
    struct checker_report rep;
    trace_init(&live, 0);
    for (int i = 0; i < tr->nnodes; i++) FUZZ_REQUIRE(trace_add_node(&live, tr->nodes[i].name, tr->nodes[i].kind) == i);
    FUZZ_REQUIRE(checker_init(&ck, &live, SCN_PURPOSE_CORRECTNESS, 60 * SIM_NS_PER_S) == 0);
    live.observe = checker_observe;
    live.observe_arg = &ck;
    sim_ns end = 0;
    for (size_t i = 0; i < tr->len; i++) {
        trace_append(&live, &tr->ev[i]);
        end = tr->ev[i].t;
    }
    checker_finish(&ck, end, &rep);
    FUZZ_REQUIRE(rep.verdict >= SCN_VERDICT_SAFE && rep.verdict <= SCN_VERDICT_STUCK);
    FUZZ_REQUIRE(FUZZ_TERMINATED(rep.headline) && rep.headline[0] != '\0');
    FUZZ_REQUIRE(rep.double_entries >= 0 && rep.double_entry_ns >= 0);
    checker_close(&ck);
    trace_close(&live);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct trace tr;
    char err[200];
    trace_init(&tr, 1);
    int rc = trace_read_jsonl(&tr, (const char *)data, size, err, sizeof err);
    FUZZ_REQUIRE(rc == 0 || rc == -1);
    if (rc != 0) {
        FUZZ_REQUIRE(memchr(err, '\0', sizeof err) != NULL);
        FUZZ_REQUIRE(strncmp(err, "line ", 5) == 0);
        trace_close(&tr);
        /* The same failure with a tiny message buffer, and with none. */
        char tiny[4];
        trace_init(&tr, 1);
        FUZZ_REQUIRE(trace_read_jsonl(&tr, (const char *)data, size, tiny, sizeof tiny) == -1);
        FUZZ_REQUIRE(memchr(tiny, '\0', sizeof tiny) != NULL);
        trace_close(&tr);
        trace_init(&tr, 1);
        FUZZ_REQUIRE(trace_read_jsonl(&tr, (const char *)data, size, NULL, 0) == -1);
        trace_close(&tr);
        return 0;
    }
    FUZZ_REQUIRE(err[0] == '\0');
    for (size_t i = 0; i < tr.len; i++) {
        FUZZ_REQUIRE(tr.ev[i].seq == i);
        FUZZ_REQUIRE(tr.ev[i].t >= 0 && tr.ev[i].t <= SIM_TIME_MAX);
        FUZZ_REQUIRE(i == 0 || tr.ev[i].t >= tr.ev[i - 1].t);
        FUZZ_REQUIRE(tr.ev[i].kind < TRACE_KIND_COUNT);
        FUZZ_REQUIRE(tr.ev[i].node >= TRACE_NO_NODE && tr.ev[i].node < tr.nnodes);
        FUZZ_REQUIRE(tr.ev[i].peer >= TRACE_NO_NODE && tr.ev[i].peer < tr.nnodes);
    }

    size_t n1 = 0, n2 = 0;
    char *one = write_jsonl(&tr, &n1);
    struct trace back;
    trace_init(&back, 1);
    rc = trace_read_jsonl(&back, one, n1, err, sizeof err);
    if (rc != 0) fprintf(stderr, "fuzz: reading back the written trace: %s\n", err);
    FUZZ_REQUIRE(rc == 0);
    FUZZ_REQUIRE(trace_hash(&back) == trace_hash(&tr));
    char *two = write_jsonl(&back, &n2);
    FUZZ_REQUIRE(n1 == n2 && memcmp(one, two, n1) == 0);
    free(one);
    free(two);
    trace_close(&back);

    fuzz_render(&tr, 1 + (int)(size % 300)); /* 1..300 columns */
    replay_checker(&tr);
    trace_close(&tr);
    return 0;
}
