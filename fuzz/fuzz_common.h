/* Shared by the libFuzzer targets in fuzz/: the invariants every parsed
 * scenario must satisfy (docs/scenario-format.md, "Limits"), and the headless
 * render path (terminal timeline, narration) run over a trace. A violated
 * invariant calls __builtin_trap(), so libFuzzer records the input as a crash. */
#ifndef LOCKSIM_FUZZ_COMMON_H
#define LOCKSIM_FUZZ_COMMON_H

#include <stdio.h>
#include <string.h>

#include "narrate.h"
#include "scenario.h"
#include "term.h"
#include "trace.h"

/* Stop here with a crash that names the broken property in the stack trace. */
#define FUZZ_REQUIRE(cond) \
    do { \
        if (!(cond)) { \
            fprintf(stderr, "fuzz: invariant broken at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            __builtin_trap(); \
        } \
    } while (0)

/* 1 when the fixed-size char array holds a NUL. */
#define FUZZ_TERMINATED(arr) (memchr((arr), '\0', sizeof(arr)) != NULL)

static inline int fuzz_time_ok(sim_ns t) { return t >= 0 && t <= SIM_TIME_MAX; }

static inline void fuzz_check_latency(const struct scn_latency *l, int may_be_unset) {
    if (may_be_unset && l->min_ns == -1 && l->max_ns == -1) return;
    FUZZ_REQUIRE(fuzz_time_ok(l->min_ns) && fuzz_time_ok(l->max_ns));
    FUZZ_REQUIRE(l->min_ns <= l->max_ns);
}

static inline void fuzz_check_link(const struct scn_link *k) {
    FUZZ_REQUIRE(FUZZ_TERMINATED(k->from) && FUZZ_TERMINATED(k->to));
    FUZZ_REQUIRE(k->from[0] && k->to[0]);
    fuzz_check_latency(&k->lat, 1);
    FUZZ_REQUIRE(k->loss_ppm <= 1000000 || k->loss_ppm == UINT32_MAX);
}

/* Everything the parser and scenario_set promise about a scenario they
 * accepted: counts within the limits, times within [0, SIM_TIME_MAX],
 * indices in range, strings terminated, @/+ faults in time order. */
static inline void fuzz_check_scenario(const struct scenario *s) {
    FUZZ_REQUIRE(FUZZ_TERMINATED(s->file) && FUZZ_TERMINATED(s->title));
    FUZZ_REQUIRE(FUZZ_TERMINATED(s->description) && FUZZ_TERMINATED(s->algo));
    FUZZ_REQUIRE(s->purpose == SCN_PURPOSE_CORRECTNESS || s->purpose == SCN_PURPOSE_EFFICIENCY);
    FUZZ_REQUIRE(s->duration_ns > 0 && s->duration_ns <= SIM_TIME_MAX);
    FUZZ_REQUIRE(s->stuck_after_ns > 0 && s->stuck_after_ns <= SIM_TIME_MAX);
    FUZZ_REQUIRE(s->retry_ns > 0 && s->retry_ns <= SIM_TIME_MAX);
    FUZZ_REQUIRE(s->max_events >= 1);
    FUZZ_REQUIRE(s->nopts >= 0 && s->nopts <= SCN_MAX_OPTS);
    for (int i = 0; i < s->nopts; i++) {
        FUZZ_REQUIRE(FUZZ_TERMINATED(s->opts[i].key) && FUZZ_TERMINATED(s->opts[i].val));
        FUZZ_REQUIRE(s->opts[i].key[0] != '\0');
        for (int j = 0; j < i; j++) FUZZ_REQUIRE(strcmp(s->opts[i].key, s->opts[j].key) != 0);
    }
    FUZZ_REQUIRE(s->nservers >= 0 && s->nservers <= SCN_MAX_SERVERS);
    FUZZ_REQUIRE(s->stock >= 0 && s->stock <= 1000000000);
    FUZZ_REQUIRE(s->fencing == 0 || s->fencing == 1);
    fuzz_check_latency(&s->latency, 0);
    FUZZ_REQUIRE(s->loss_ppm <= 1000000);
    FUZZ_REQUIRE(s->nlinks >= 0 && s->nlinks <= SCN_MAX_LINKS);
    for (int i = 0; i < s->nlinks; i++) fuzz_check_link(&s->links[i]);
    FUZZ_REQUIRE(s->nprograms >= 0 && s->nprograms <= SCN_MAX_PROGRAMS);
    for (int p = 0; p < s->nprograms; p++) {
        const struct scn_program *pr = &s->programs[p];
        FUZZ_REQUIRE(pr->nsteps >= 1 && pr->nsteps <= SCN_MAX_STEPS);
        for (int k = 0; k < pr->nsteps; k++) {
            const struct scn_step *st = &pr->steps[k];
            FUZZ_REQUIRE(st->kind >= 0 && st->kind < SCN_STEP_COUNT);
            FUZZ_REQUIRE(fuzz_time_ok(st->dur_ns) && fuzz_time_ok(st->retry_ns));
            FUZZ_REQUIRE(fuzz_time_ok(st->jitter_ns) && fuzz_time_ok(st->timeout_ns));
            FUZZ_REQUIRE(st->tries >= 0 && st->tries <= 1000000000);
        }
    }
    FUZZ_REQUIRE(s->nclients >= 0 && s->nclients <= SCN_MAX_CLIENTS);
    FUZZ_REQUIRE(s->nclients <= s->cap_clients || s->nclients == 0);
    for (int i = 0; i < s->nclients; i++) {
        const struct scn_client *c = &s->clients[i];
        FUZZ_REQUIRE(FUZZ_TERMINATED(c->name) && c->name[0] != '\0');
        FUZZ_REQUIRE(c->program >= 0 && c->program < s->nprograms);
        FUZZ_REQUIRE(fuzz_time_ok(c->start_ns) && fuzz_time_ok(c->think_ns));
        FUZZ_REQUIRE(c->repeat >= 0 && c->repeat <= 1000000000);
    }
    FUZZ_REQUIRE(s->nclocks >= 0 && s->nclocks <= SCN_MAX_CLOCKS);
    for (int i = 0; i < s->nclocks; i++) {
        FUZZ_REQUIRE(FUZZ_TERMINATED(s->clocks[i].node) && s->clocks[i].node[0] != '\0');
        FUZZ_REQUIRE(s->clocks[i].drift_ppm >= -500000 && s->clocks[i].drift_ppm <= 500000);
        FUZZ_REQUIRE(s->clocks[i].wall_offset_ns >= -SIM_TIME_MAX && s->clocks[i].wall_offset_ns <= SIM_TIME_MAX);
    }
    FUZZ_REQUIRE(s->nfaults >= 0 && s->nfaults <= SCN_MAX_FAULTS);
    sim_ns last_at = 0;
    for (int i = 0; i < s->nfaults; i++) {
        const struct scn_fault *f = &s->faults[i];
        FUZZ_REQUIRE(f->kind >= 0 && f->kind < SCN_FAULT_COUNT);
        FUZZ_REQUIRE(f->point >= SCN_POINT_NONE && f->point < SCN_POINT_COUNT);
        FUZZ_REQUIRE(FUZZ_TERMINATED(f->trigger) && FUZZ_TERMINATED(f->node));
        if (f->point == SCN_POINT_NONE) {
            FUZZ_REQUIRE(fuzz_time_ok(f->at_ns));
            FUZZ_REQUIRE(f->at_ns >= last_at); /* @ and + lines are in time order */
            last_at = f->at_ns;
        } else {
            FUZZ_REQUIRE(f->trigger[0] != '\0');
            FUZZ_REQUIRE(f->occurrence >= 1 && f->occurrence <= 1000000000);
        }
        FUZZ_REQUIRE(fuzz_time_ok(f->dur_ns));
        FUZZ_REQUIRE(f->delta_ns >= -SIM_TIME_MAX && f->delta_ns <= SIM_TIME_MAX);
        FUZZ_REQUIRE(f->ppm >= -500000 && f->ppm <= 500000);
        if (f->kind == SCN_FAULT_CLOCK_STEP) FUZZ_REQUIRE(f->which >= SCN_CLOCK_WALL && f->which <= SCN_CLOCK_BOTH);
        if (f->kind == SCN_FAULT_PARTITION) {
            FUZZ_REQUIRE(f->ngroups >= 2 && f->ngroups <= 4);
            for (int g = 0; g < f->ngroups; g++) {
                FUZZ_REQUIRE(f->group_len[g] >= 1 && f->group_len[g] <= SCN_MAX_GROUP);
                for (int k = 0; k < f->group_len[g]; k++)
                    FUZZ_REQUIRE(FUZZ_TERMINATED(f->groups[g][k]) && f->groups[g][k][0]);
            }
        }
        if (f->kind == SCN_FAULT_LINK) fuzz_check_link(&f->link);
    }
    FUZZ_REQUIRE(s->nexpects >= 0 && s->nexpects <= SCN_MAX_EXPECTS);
    for (int i = 0; i < s->nexpects; i++) {
        const struct scn_expect *x = &s->expects[i];
        FUZZ_REQUIRE(x->metric >= 0 && x->metric < SCN_M_COUNT);
        FUZZ_REQUIRE(x->cmp >= SCN_CMP_EQ && x->cmp <= SCN_CMP_GE);
        FUZZ_REQUIRE(FUZZ_TERMINATED(x->text));
        /* The verdict's range holds for metric expectations; the kinds that
         * name a client or a span keep a token, a time or a count in value. */
        if (x->kind == SCN_EXPECT_METRIC && x->metric == SCN_M_VERDICT)
            FUZZ_REQUIRE(x->value >= SCN_VERDICT_SAFE && x->value <= SCN_VERDICT_STUCK);
        FUZZ_REQUIRE(x->kind >= SCN_EXPECT_METRIC && x->kind <= SCN_EXPECT_FENCED_OUT);
        FUZZ_REQUIRE(FUZZ_TERMINATED(x->client));
        if (scn_expect_names_client(x)) FUZZ_REQUIRE(x->client[0] && x->client_index >= 0);
    }
}

/* A sink for rendered text: the formatting runs in full, nothing is kept. */
static inline FILE *fuzz_devnull(void) {
    static FILE *f;
    if (!f) f = fopen("/dev/null", "w");
    FUZZ_REQUIRE(f != NULL);
    return f;
}

/* Draw tr (borrowed) as a user sees it: the timeline at the default width
 * and at `width` columns (any value: the renderer clamps it), with and
 * without colour, the whole narration, and single-event narration for the
 * first, middle and last events. Out of memory is the only allowed
 * failure, and the fuzzer's allocations do not fail, so all must succeed. */
static inline void fuzz_render(const struct trace *tr, int width) {
    FILE *out = fuzz_devnull();
    struct term_opts o;
    term_opts_default(&o);
    FUZZ_REQUIRE(term_render(out, tr, &o) == 0);
    o.width = width;
    o.color = 1;
    FUZZ_REQUIRE(term_render(out, tr, &o) == 0);
    FUZZ_REQUIRE(narrate_trace(out, tr) == 0);
    if (tr->len > 0) {
        size_t pick[3] = {0, tr->len / 2, tr->len - 1};
        for (int i = 0; i < 3; i++) {
            char buf[512];
            int rc = narrate_event(buf, sizeof buf, tr, &tr->ev[pick[i]]);
            FUZZ_REQUIRE(rc == 0 || rc == 1);
            FUZZ_REQUIRE(memchr(buf, '\0', sizeof buf) != NULL);
            if (rc == 1) FUZZ_REQUIRE(buf[0] == '\0');
        }
        /* A small buffer cuts the sentence but must stay terminated. */
        char tiny[8];
        int rc = narrate_event(tiny, sizeof tiny, tr, &tr->ev[tr->len - 1]);
        FUZZ_REQUIRE(rc == 0 || rc == 1);
        FUZZ_REQUIRE(memchr(tiny, '\0', sizeof tiny) != NULL);
    }
    FUZZ_REQUIRE(fflush(out) == 0);
}

#endif
