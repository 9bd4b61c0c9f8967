/* The checker, fed recorded traces (as `check-trace` and a trace from a real
 * lock service would feed it): it must reach the same report as the online
 * run, and the kinds outside CHECKER_KINDS must change nothing, as
 * checker.h promises. Every catalog scenario's trace is replayed three ways:
 * every event, only the CHECKER_KINDS events, and every event with a
 * synthetic event of every other kind injected before each one. */
#define _XOPEN_SOURCE 700 /* glob */
#include <glob.h>
#include <stdlib.h>

#include "testutil.h"

#include "checker.h"
#include "engine.h"
#include "run.h"
#include "scenario_file.h"

enum replay_mode { ALL, MASK_ONLY, INJECT };

static int is_finding(int kind) { return trace_kind_is_finding(kind); }

static int in_mask(int kind) { return (int)((CHECKER_KINDS >> kind) & 1); }

/* Replay src through a fresh checker; its findings go to a scratch trace. */
static void replay(const struct trace *src, const struct scenario *s, enum replay_mode mode,
                   struct checker_report *out) {
    struct trace t2;
    struct checker c;
    trace_init(&t2, 1);
    for (int i = 0; i < src->nnodes; i++) assert_true(trace_add_node(&t2, src->nodes[i].name, src->nodes[i].kind) >= 0);
    assert_int_equal(checker_init(&c, &t2, s->purpose, s->stuck_after_ns), 0);
    t2.observe = checker_observe;
    t2.observe_arg = &c;
    t2.advance = checker_advance;
    int other = 0;
    for (size_t i = 0; i < src->len; i++) {
        const struct trace_event *ev = &src->ev[i];
        if (is_finding(ev->kind)) continue; /* the checker derives these itself */
        if (mode == MASK_ONLY && !in_mask(ev->kind)) continue;
        if (mode == INJECT) {
            /* One event of the next kind outside the mask, with fields that
             * would matter if the checker looked at them. */
            do other = (other + 1) % TRACE_KIND_COUNT;
            while (in_mask(other) || is_finding(other));
            struct trace_event junk = {.t = ev->t,
                                       .kind = (uint16_t)other,
                                       .node = ev->node,
                                       .peer = ev->peer,
                                       .token = 99,
                                       .grant = ev->grant,
                                       .a = 1,
                                       .b = 2,
                                       .text = NULL};
            trace_append(&t2, &junk);
        }
        trace_append(&t2, ev);
    }
    checker_finish(&c, src->len ? src->ev[src->len - 1].t : 0, out);
    checker_close(&c);
    trace_close(&t2);
}

static void assert_same_report(const struct checker_report *a, const struct checker_report *b, const char *what) {
    for (int m = 0; m < SCN_M_COUNT; m++) {
        if (m == SCN_M_END_NS) continue; /* replay ends at the last event, the run at its duration */
        int64_t x = checker_metric(a, (enum scn_metric)m), y = checker_metric(b, (enum scn_metric)m);
        if (x != y)
            fprintf(stderr, "%s: %s differs: %lld vs %lld\n", what, metric_info((enum scn_metric)m)->word, (long long)x,
                    (long long)y);
        assert_true(x == y);
    }
    assert_string_equal(a->headline, b->headline);
}

static void test_replay_every_scenario(void **state) {
    (void)state;
    glob_t g;
    assert_int_equal(glob("scenarios/*.lsim", 0, NULL, &g), 0);
    assert_true(g.gl_pathc >= 40);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct run_spec spec = {.file = g.gl_pathv[i], .keep_trace = 1};
        struct run_result r;
        assert_int_equal(run_scenario(&spec, &r), 0);
        const struct trace *tr = engine_trace(r.engine);
        struct checker_report all, mask, inject;
        replay(tr, r.scn, ALL, &all);
        replay(tr, r.scn, MASK_ONLY, &mask);
        replay(tr, r.scn, INJECT, &inject);
        /* Offline equals online, and the other kinds change nothing. */
        assert_same_report(&all, r.report, g.gl_pathv[i]);
        assert_same_report(&mask, &all, g.gl_pathv[i]);
        assert_same_report(&inject, &all, g.gl_pathv[i]);
        run_result_close(&r);
    }
    globfree(&g);
}

/* The mask is not wider than it needs: each kind in it changes the report of
 * some catalog trace when it is left out. */
static void test_mask_kinds_matter(void **state) {
    (void)state;
    glob_t g;
    assert_int_equal(glob("scenarios/*.lsim", 0, NULL, &g), 0);
    uint64_t mattered = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct run_spec spec = {.file = g.gl_pathv[i], .keep_trace = 1};
        struct run_result r;
        assert_int_equal(run_scenario(&spec, &r), 0);
        const struct trace *tr = engine_trace(r.engine);
        struct checker_report all;
        replay(tr, r.scn, ALL, &all);
        for (int k = 0; k < TRACE_KIND_COUNT; k++) {
            if (!in_mask(k) || ((mattered >> k) & 1)) continue;
            /* Leave kind k out by copying the trace without it. */
            struct trace t3;
            trace_init(&t3, 1);
            for (int n = 0; n < tr->nnodes; n++) trace_add_node(&t3, tr->nodes[n].name, tr->nodes[n].kind);
            for (size_t e = 0; e < tr->len; e++)
                if (tr->ev[e].kind != k) trace_append(&t3, &tr->ev[e]);
            struct checker_report without;
            replay(&t3, r.scn, ALL, &without);
            trace_close(&t3);
            for (int m = 0; m < SCN_M_COUNT; m++)
                if (m != SCN_M_END_NS &&
                    checker_metric(&without, (enum scn_metric)m) != checker_metric(&all, (enum scn_metric)m))
                    mattered |= 1ull << k;
            if (strcmp(without.headline, all.headline) != 0) mattered |= 1ull << k;
        }
        run_result_close(&r);
    }
    globfree(&g);
    for (int k = 0; k < TRACE_KIND_COUNT; k++)
        if (in_mask(k) && !((mattered >> k) & 1)) fprintf(stderr, "kind %s never mattered\n", trace_kind_name(k));
    /* A restart and a server-side expiry only matter to a client stuck
     * behind a dead owner, which the catalog never un-sticks that way:
     * test_dead_owner shows them mattering. */
    uint64_t must = CHECKER_KINDS & ~((1ull << TRACE_RESTART) | (1ull << TRACE_SRV_EXPIRE));
    assert_true((mattered & must) == must);
}

/* A's request reaches S1 after A crashed (it was in flight): S1 grants the
 * lock to a dead owner, and B waits behind it: STUCK after stuck-after,
 * unless the lease expires on the server or A comes back (the checker counts
 * a grant that arrived while its owner was down as dead only until then). */
static int64_t stuck_with(int expire, int restart) {
    struct trace t;
    struct checker c;
    trace_init(&t, 1);
    int a = trace_add_node(&t, "A", TRACE_NODE_CLIENT), b = trace_add_node(&t, "B", TRACE_NODE_CLIENT);
    int s1 = trace_add_node(&t, "S1", TRACE_NODE_SERVER);
    assert_int_equal(checker_init(&c, &t, SCN_PURPOSE_CORRECTNESS, 30 * SIM_NS_PER_S), 0);
    t.observe = checker_observe;
    t.observe_arg = &c;
    t.advance = checker_advance;
    struct trace_event evs[] = {
            {.t = 0, .kind = TRACE_ACQUIRE_START, .node = a, .peer = -1},
            {.t = SIM_NS_PER_S, .kind = TRACE_CRASH, .node = a, .peer = -1},
            {.t = SIM_NS_PER_S + 500, .kind = TRACE_SRV_GRANT, .node = s1, .peer = a, .a = 0},
            {.t = 2 * SIM_NS_PER_S, .kind = TRACE_ACQUIRE_START, .node = b, .peer = -1},
            {.t = 3 * SIM_NS_PER_S, .kind = restart ? TRACE_RESTART : TRACE_HEAL, .node = a, .peer = -1},
            {.t = 5 * SIM_NS_PER_S, .kind = expire ? TRACE_SRV_EXPIRE : TRACE_SRV_NOTE, .node = s1, .peer = a},
            {.t = 100 * SIM_NS_PER_S, .kind = TRACE_ACQUIRE_DENIED, .node = b, .peer = -1, .a = 9},
    };
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++) trace_append(&t, &evs[i]);
    struct checker_report rep;
    checker_finish(&c, 100 * SIM_NS_PER_S, &rep);
    checker_close(&c);
    trace_close(&t);
    return rep.stuck;
}

static void test_dead_owner(void **state) {
    (void)state;
    assert_int_equal(stuck_with(0, 0), 1); /* S1 still holds it for dead A: B is stuck */
    assert_int_equal(stuck_with(1, 0), 0); /* the lease expired on S1 */
    assert_int_equal(stuck_with(0, 1), 0); /* A restarted */
}

/* Per-client facts, recorded only for the clients expect lines name: the
 * seed's timeline with fenced-lease from token 33 (A 33, B 34, B at 31s,
 * double entry 31s..32s, A's write rejected as stale). Each expectation is
 * judged at its value and one tick off either side. */
static void test_expect_facts(void **state) {
    (void)state;
    const char *base = "lock fenced-lease ttl=30s first-token=33\nresource stock=1\nnetwork latency=0ms\n"
                       "duration 60s\n"
                       "client A: acquire; read; work 10s; write; release\n"
                       "client B @31s: acquire retry=1s; read; write; work 5s; release\n"
                       "client C @50s: acquire; release\n"
                       "@5s pause A 27s\n"
                       "expect B token = 34\nexpect B acquires at 31s\nexpect double-entry from 31s to 32s\n"
                       "expect A write rejected\nexpect stale-write rejected by A\n";
    struct engine *e = run_text(base);
    const struct checker_report *r = engine_report(e);
    const struct scenario *sc = engine_scenario(e);
    /* Only A and B are watched: C, named by no expect line, has no facts. */
    assert_int_equal(r->nfacts, 2);
    assert_null(checker_fact_of(r, 2));
    const struct checker_fact *b = checker_fact_of(r, 1);
    assert_non_null(b);
    assert_int_equal(b->first_token, 34);
    assert_int_equal(b->first_acquired, 31 * SIM_NS_PER_S);
    assert_int_equal(b->writes_accepted, 1);
    const struct checker_fact *a = checker_fact_of(r, 0);
    assert_int_equal(a->first_token, 33);
    assert_int_equal(a->writes_rejected, 1);
    assert_int_equal(a->stale_rejected, 1);
    assert_int_equal(r->de_first_from_ns, 31 * SIM_NS_PER_S);
    assert_int_equal(r->de_first_to_ns, 32 * SIM_NS_PER_S);
    for (int i = 0; i < sc->nexpects; i++) assert_true(checker_expect_holds(r, &sc->expects[i], NULL));
    /* One tick off either side fails: 1 token, 1 ns. */
    struct scn_expect x = sc->expects[0];
    int64_t got;
    for (int d = -1; d <= 1; d += 2) {
        x = sc->expects[0];
        x.value += d;
        assert_false(checker_expect_holds(r, &x, &got));
        assert_int_equal(got, 34);
        x = sc->expects[1];
        x.value += d;
        assert_false(checker_expect_holds(r, &x, &got));
        assert_int_equal(got, 31 * SIM_NS_PER_S);
        x = sc->expects[2];
        x.value += d;
        assert_false(checker_expect_holds(r, &x, NULL));
        x = sc->expects[2];
        x.to_ns += d;
        assert_false(checker_expect_holds(r, &x, NULL));
    }
    /* A client that is watched but never granted: no token, never acquired. */
    x = sc->expects[1];
    x.client_index = 2; /* C: not watched in this run */
    assert_false(checker_expect_holds(r, &x, &got));
    assert_int_equal(got, -1);
    engine_free(e);
}

/* ---- The lock service's own grant order (issue 11, item 1) -------------- */

/* The serial-order test of a lock-free run, by the versions reads saw: B
 * reads version 0 and writes after A's accepted write replaced version 0:
 * not serial. At the boundary, a read at the same instant as A's write
 * counts by the trace's order: just before it, overtaken; just after it
 * (version 1, B writes 3), serial. */
static int64_t non_serial_with(int b_reads_first, sim_ns b_read_at);

/* A checker over a hand-made trace: nclients clients A, B, ... then nservers
 * servers S1, ...; resource-init says quorum and b (1 fenced, 2 rule, 3 no lock). */
struct story {
    struct trace t;
    struct checker c;
    int node[8];
};

static void story_begin(struct story *st, int nclients, int nservers, int quorum, int b) {
    static const char *const names[8] = {"A", "B", "S1", "S2", "S3", "S4", "S5", "R"};
    trace_init(&st->t, 1);
    for (int i = 0; i < nclients; i++) st->node[i] = trace_add_node(&st->t, names[i], TRACE_NODE_CLIENT);
    for (int i = 0; i < nservers; i++) st->node[2 + i] = trace_add_node(&st->t, names[2 + i], TRACE_NODE_SERVER);
    st->node[7] = trace_add_node(&st->t, "R", TRACE_NODE_RESOURCE);
    assert_int_equal(checker_init(&st->c, &st->t, SCN_PURPOSE_CORRECTNESS, 0), 0);
    st->t.observe = checker_observe;
    st->t.observe_arg = &st->c;
    st->t.advance = checker_advance;
    struct trace_event init = {.t = 0,
                               .kind = TRACE_RESOURCE_INIT,
                               .node = st->node[7],
                               .peer = -1,
                               .grant = (uint32_t)quorum,
                               .a = 5,
                               .b = b};
    trace_append(&st->t, &init);
}

static void ev(struct story *st, sim_ns t, int kind, int node, int peer, uint32_t grant, int64_t a, int64_t b) {
    struct trace_event e = {.t = t, .kind = (uint16_t)kind, .node = node, .peer = peer, .grant = grant, .a = a, .b = b};
    trace_append(&st->t, &e);
}

/* The client of the n-th stale-write finding (from 1), or -9 when none. */
static int stale_writer(const struct story *st, int n) {
    for (size_t i = 0; i < st->t.len; i++)
        if (st->t.ev[i].kind == TRACE_STALE_WRITE && --n == 0) return st->t.ev[i].node;
    return -9;
}

static void story_end(struct story *st, struct checker_report *rep) {
    checker_finish(&st->c, 60 * SIM_NS_PER_S, rep);
    checker_close(&st->c);
}

/* Kleppmann's Redlock timeline (redlock-pause-during-acquire.lsim): five
 * servers grant A at 1ms, expire at 10s, grant B at 11.001s; B learns at
 * 11.002s (ground-truth grant 1), A only at 15s (grant 2). Learnt order makes
 * A's grant the newer; the service's order makes B's. A's write is stale,
 * B's is not. */
static void test_quorum_order_redlock(void **state) {
    (void)state;
    struct story st;
    story_begin(&st, 2, 5, 3, 0);
    int A = st.node[0], B = st.node[1], R = st.node[7];
    for (int s = 0; s < 5; s++) ev(&st, SIM_NS_PER_MS, TRACE_SRV_GRANT, st.node[2 + s], A, 0, 0, 0);
    for (int s = 0; s < 5; s++) ev(&st, 10 * SIM_NS_PER_S, TRACE_SRV_EXPIRE, st.node[2 + s], A, 0, 0, 0);
    for (int s = 0; s < 5; s++) ev(&st, 11001 * SIM_NS_PER_MS, TRACE_SRV_GRANT, st.node[2 + s], B, 0, 0, 0);
    ev(&st, 11002 * SIM_NS_PER_MS, TRACE_ACQUIRED, B, -1, 1, 0, 1);
    ev(&st, 15 * SIM_NS_PER_S, TRACE_ACQUIRED, A, -1, 2, 0, 1);
    ev(&st, 15003 * SIM_NS_PER_MS, TRACE_WRITE, R, A, 2, 4, TRACE_WRITE_ACCEPTED);
    ev(&st, 16005 * SIM_NS_PER_MS, TRACE_WRITE, R, B, 1, 4, TRACE_WRITE_ACCEPTED);
    struct checker_report rep;
    story_end(&st, &rep);
    assert_int_equal(rep.stale_accepted, 1);
    assert_int_equal(stale_writer(&st, 1), A);  /* the culprit */
    assert_int_equal(stale_writer(&st, 2), -9); /* B's write is not stale */
    assert_int_equal(rep.verdict, SCN_VERDICT_UNSAFE);
    trace_close(&st.t);
}

/* The grant that completes the quorum decides, not the first: three
 * servers, quorum 2. S1 grants A at 1ms (one of two); S2 and S3 grant B at
 * 2ms (B's quorum: the service granted B first); B's keys expire at 4ms and
 * S2 grants A at 5ms (A's quorum). Clients learn in the other order: A at
 * 6ms (grant 1), B at 7ms (grant 2). By the first server grant A would be
 * older and by learnt order B newer; by the quorum A is newer: B's write is
 * the stale one. */
static void test_quorum_completing_grant(void **state) {
    (void)state;
    struct story st;
    story_begin(&st, 2, 3, 2, 0);
    int A = st.node[0], B = st.node[1], R = st.node[7];
    int S1 = st.node[2], S2 = st.node[3], S3 = st.node[4];
    ev(&st, 1 * SIM_NS_PER_MS, TRACE_SRV_GRANT, S1, A, 0, 0, 0);
    ev(&st, 2 * SIM_NS_PER_MS, TRACE_SRV_GRANT, S2, B, 0, 0, 0);
    ev(&st, 2 * SIM_NS_PER_MS, TRACE_SRV_GRANT, S3, B, 0, 0, 0);
    ev(&st, 4 * SIM_NS_PER_MS, TRACE_SRV_EXPIRE, S2, B, 0, 0, 0);
    ev(&st, 4 * SIM_NS_PER_MS, TRACE_SRV_EXPIRE, S3, B, 0, 0, 0);
    ev(&st, 5 * SIM_NS_PER_MS, TRACE_SRV_GRANT, S2, A, 0, 0, 0);
    ev(&st, 5 * SIM_NS_PER_MS, TRACE_SRV_GRANT, S2, A, 0, 0, 0); /* a re-grant is no new grant */
    ev(&st, 6 * SIM_NS_PER_MS, TRACE_ACQUIRED, A, -1, 1, 0, 1);
    ev(&st, 7 * SIM_NS_PER_MS, TRACE_ACQUIRED, B, -1, 2, 0, 1);
    ev(&st, 8 * SIM_NS_PER_MS, TRACE_WRITE, R, A, 1, 4, TRACE_WRITE_ACCEPTED);
    ev(&st, 9 * SIM_NS_PER_MS, TRACE_WRITE, R, B, 2, 4, TRACE_WRITE_ACCEPTED);
    struct checker_report rep;
    story_end(&st, &rep);
    assert_int_equal(rep.stale_accepted, 1);
    assert_int_equal(stale_writer(&st, 1), B);
    trace_close(&st.t);

    /* Quorum 1 (the same events, no resource-init quorum): S1's grant to A at
     * 1ms is A's service grant, B's at 2ms is newer: A's write is stale. */
    story_begin(&st, 2, 3, 0, 0);
    A = st.node[0], B = st.node[1], R = st.node[7];
    S1 = st.node[2], S2 = st.node[3], S3 = st.node[4];
    ev(&st, 1 * SIM_NS_PER_MS, TRACE_SRV_GRANT, S1, A, 0, 0, 0);
    ev(&st, 2 * SIM_NS_PER_MS, TRACE_SRV_GRANT, S2, B, 0, 0, 0);
    ev(&st, 6 * SIM_NS_PER_MS, TRACE_ACQUIRED, A, -1, 1, 0, 1);
    ev(&st, 7 * SIM_NS_PER_MS, TRACE_ACQUIRED, B, -1, 2, 0, 1);
    ev(&st, 8 * SIM_NS_PER_MS, TRACE_WRITE, R, A, 1, 4, TRACE_WRITE_ACCEPTED);
    ev(&st, 9 * SIM_NS_PER_MS, TRACE_WRITE, R, B, 2, 4, TRACE_WRITE_ACCEPTED);
    story_end(&st, &rep);
    assert_int_equal(stale_writer(&st, 1), A);
    assert_int_equal(stale_writer(&st, 2), -9);
    trace_close(&st.t);
}

/* Equal grant times: two single servers grant A and B at the same instant
 * (split brain); the trace's order breaks the tie, as the event queue's
 * insertion order does. Whoever was granted second in the trace holds the
 * newer grant, whatever order the clients learn in. */
static int stale_at_equal_times(int a_first) {
    struct story st;
    story_begin(&st, 2, 2, 0, 0);
    int A = st.node[0], B = st.node[1], R = st.node[7];
    int first = a_first ? A : B, second = a_first ? B : A;
    ev(&st, SIM_NS_PER_S, TRACE_SRV_GRANT, st.node[2], first, 0, 0, 0);
    ev(&st, SIM_NS_PER_S, TRACE_SRV_GRANT, st.node[3], second, 0, 0, 0);
    ev(&st, SIM_NS_PER_S + 1, TRACE_ACQUIRED, B, -1, 1, 0, 1);
    ev(&st, SIM_NS_PER_S + 2, TRACE_ACQUIRED, A, -1, 2, 0, 1);
    ev(&st, 2 * SIM_NS_PER_S, TRACE_WRITE, R, A, 2, 4, TRACE_WRITE_ACCEPTED);
    ev(&st, 2 * SIM_NS_PER_S, TRACE_WRITE, R, B, 1, 4, TRACE_WRITE_ACCEPTED);
    struct checker_report rep;
    story_end(&st, &rep);
    assert_int_equal(rep.stale_accepted, 1);
    int who = stale_writer(&st, 1);
    trace_close(&st.t);
    return who;
}

static void test_equal_grant_times(void **state) {
    (void)state;
    assert_int_equal(stale_at_equal_times(1), 0); /* A granted first: A (node 0) is stale */
    assert_int_equal(stale_at_equal_times(0), 1); /* B granted first: B is stale */
}

/* An algorithm that takes no lock (resource-init b = 3) is judged by the
 * resource's history: A's winning compare-and-set after B "acquired" is not
 * stale, B's refused one is duplicated work. The same trace with b = 2 (a
 * rule, but a lock) is the old judgement: A's write stale and UNSAFE. Two
 * accepted writes of the same value with no lock are a lost update. */
static struct checker_report lock_free_story(int b, int64_t b_result) {
    struct story st;
    story_begin(&st, 2, 1, 0, b);
    int A = st.node[0], B = st.node[1], R = st.node[7];
    ev(&st, 0, TRACE_ACQUIRED, A, -1, 1, 0, 1);
    ev(&st, 500 * SIM_NS_PER_MS, TRACE_ACQUIRED, B, -1, 2, 0, 1);
    ev(&st, 1 * SIM_NS_PER_S, TRACE_WRITE, R, A, 1, 4, TRACE_WRITE_ACCEPTED);
    ev(&st, 2 * SIM_NS_PER_S, TRACE_WRITE, R, B, 2, 4, b_result);
    struct checker_report rep;
    story_end(&st, &rep);
    trace_close(&st.t);
    return rep;
}

static int64_t non_serial_with(int b_reads_first, sim_ns b_read_at) {
    struct story st;
    story_begin(&st, 2, 1, 0, 3);
    int A = st.node[0], B = st.node[1], R = st.node[7];
    ev(&st, 0, TRACE_READ, R, A, 0, 5, 0);
    if (b_reads_first) ev(&st, b_read_at, TRACE_READ, R, B, 0, 5, 0);
    ev(&st, SIM_NS_PER_S, TRACE_WRITE, R, A, 0, 4, TRACE_WRITE_ACCEPTED);
    if (!b_reads_first) ev(&st, b_read_at, TRACE_READ, R, B, 0, 4, 1);
    ev(&st, 2 * SIM_NS_PER_S, TRACE_WRITE, R, B, 0, b_reads_first ? 4 : 3, TRACE_WRITE_ACCEPTED);
    struct checker_report rep;
    story_end(&st, &rep);
    trace_close(&st.t);
    assert_int_equal(rep.verdict, rep.non_serial_writes ? SCN_VERDICT_UNSAFE : SCN_VERDICT_SAFE);
    assert_int_equal(rep.lost_updates, rep.non_serial_writes); /* here the stock shows it too */
    return rep.non_serial_writes;
}

static void test_lock_free_serial_order(void **state) {
    (void)state;
    assert_int_equal(non_serial_with(1, 500 * SIM_NS_PER_MS), 1); /* B read before A's write */
    assert_int_equal(non_serial_with(1, SIM_NS_PER_S), 1);        /* the same instant, just before it */
    assert_int_equal(non_serial_with(0, SIM_NS_PER_S), 0);        /* the same instant, just after: serial */
}

static void test_lock_free_judged_by_history(void **state) {
    (void)state;
    struct checker_report r = lock_free_story(3, TRACE_WRITE_REJECTED_COND);
    assert_int_equal(r.verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r.stale_accepted + r.stale_rejected, 0);
    assert_int_equal(r.duplicated_work, 1);
    assert_int_equal(r.final_stock, 4);
    assert_true(r.lock_free);
    assert_int_equal(r.resource_rule, TRACE_RULE_NO_LOCK);
    /* The same history under a lock: A's write under its superseded grant
     * lands before anything of B's. At a resource with a rule (b 2) it is
     * a late write, in grant order; at a plain one (b 0) it is stale. */
    r = lock_free_story(2, TRACE_WRITE_REJECTED_COND);
    assert_int_equal(r.verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r.stale_accepted, 0);
    assert_int_equal(r.late_writes, 1);
    assert_int_equal(r.duplicated_work, 0);
    r = lock_free_story(0, TRACE_WRITE_REJECTED_COND);
    assert_int_equal(r.verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(r.stale_accepted, 1);
    assert_int_equal(r.late_writes, 0);
    r = lock_free_story(3, TRACE_WRITE_ACCEPTED);
    assert_int_equal(r.verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(r.lost_updates, 1);
    assert_int_equal(r.non_serial_writes, 1); /* B's read (version 0) was overtaken by A's write */
    assert_int_equal(r.duplicated_work, 0);
    /* A refusal that is no conflict (a fencing refusal) is not duplicated work. */
    r = lock_free_story(3, TRACE_WRITE_REJECTED_NOTOKEN);
    assert_int_equal(r.duplicated_work, 0);
}

/* Absolute writes (write set=V, model 9 of issue 25): the efficiency lock's
 * pause story with A's write landing at 8s and B's at 7s or 9s. */
static struct checker_report absolute_story(const char *a_write, const char *b_write, const char *b_work,
                                            const char *stock) {
    char text[800];
    snprintf(text, sizeof text,
             "purpose efficiency\nlock lease ttl=5s\nresource stock=%s\nduration 60s\n"
             "client A: acquire; work 8s; %s; release\n"
             "client B @6s: acquire retry=1s; work %s; %s; release\n"
             "@2s pause A 5s\n",
             stock, a_write, b_work, b_write);
    struct engine *e = run_text(text);
    struct checker_report r = *engine_report(e);
    engine_free(e);
    return r;
}

static void test_absolute_write_repeated(void **state) {
    (void)state;
    /* A's write (8s) lands before B's (9s): late, and B's repeats it. */
    struct checker_report r = absolute_story("write set=1", "write set=1", "3s", "0");
    assert_int_equal(r.verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r.double_entries, 1);
    assert_int_equal(r.repeated_writes, 1);
    assert_int_equal(r.late_writes, 1);
    assert_int_equal(r.stale_accepted, 0);
    assert_int_equal(r.lost_updates, 0);
    assert_int_equal(r.final_stock, 1);
    assert_non_null(strstr(r.headline, "1 write repeated a value already written"));
    /* The same jobs as read-modify-writes: a lost update, efficiency or not. */
    r = absolute_story("read; write", "read; write", "3s", "10");
    assert_int_equal(r.verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(r.repeated_writes, 0);
    assert_int_equal(r.lost_updates, 0); /* A read 9 after its pause: no lost update, a stale write */
    assert_int_equal(r.stale_accepted, 1);
}

static void test_absolute_write_stale_when_it_undoes(void **state) {
    (void)state;
    /* B writes 2 at 7s; A's stale write of 1 at 8s undoes it: stale. */
    struct checker_report r = absolute_story("write set=1", "write set=2", "1s", "0");
    assert_int_equal(r.verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(r.stale_accepted, 1);
    assert_int_equal(r.repeated_writes, 0);
    assert_int_equal(r.final_stock, 1);
    /* The same value twice in that order is a repeat, not harm. */
    r = absolute_story("write set=2", "write set=2", "1s", "0");
    assert_int_equal(r.verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r.stale_accepted, 0);
    assert_int_equal(r.repeated_writes, 1);
    /* Different values, A's landing first: B's overwrites it (late, SAFE). */
    r = absolute_story("write set=1", "write set=2", "3s", "0");
    assert_int_equal(r.verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r.late_writes, 1);
    assert_int_equal(r.repeated_writes, 0);
    assert_int_equal(r.final_stock, 2);
}

/* An absolute write starts the stock account again: units are sold from
 * the value it set, not from the initial stock. */
static void test_absolute_write_resets_stock_account(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease ttl=30s\nresource stock=10\nduration 60s\n"
                                "client A: acquire; write set=20; release\n"
                                "client B @5s: acquire; read; write; release\n");
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r->writes_accepted, 2);
    assert_int_equal(r->final_stock, 19);
    assert_int_equal(r->lost_updates, 0); /* without the new account: 2 sold - (10 - 19) = 11 */
    engine_free(e);
    /* And a lost update after it is still one. */
    e = run_text("lock lease ttl=2s\nresource stock=10\nduration 60s\n"
                 "client A: acquire; write set=20; read; work 5s; write; release\n"
                 "client B @3s: acquire retry=1s; read; work 5s; write; release\n");
    r = engine_report(e);
    assert_int_equal(r->final_stock, 19);
    assert_int_equal(r->lost_updates, 1);
    assert_int_equal(r->verdict, SCN_VERDICT_UNSAFE);
    engine_free(e);
}

/* checker_watch refuses non-clients and a 17th client, and a second watch
 * of the same client is a no-op. */
static void test_watch_limits(void **state) {
    (void)state;
    struct trace t;
    struct checker c;
    trace_init(&t, 1);
    char name[16];
    for (int i = 0; i < SCN_MAX_EXPECT_CLIENTS + 1; i++) {
        snprintf(name, sizeof name, "C%d", i);
        assert_true(trace_add_node(&t, name, TRACE_NODE_CLIENT) >= 0);
    }
    int s1 = trace_add_node(&t, "S1", TRACE_NODE_SERVER);
    assert_int_equal(checker_init(&c, &t, SCN_PURPOSE_CORRECTNESS, 0), 0);
    assert_int_equal(checker_watch(&c, s1), -1);
    for (int i = 0; i < SCN_MAX_EXPECT_CLIENTS; i++) assert_int_equal(checker_watch(&c, i), 0);
    assert_int_equal(checker_watch(&c, 0), 0);
    assert_int_equal(c.r.nfacts, SCN_MAX_EXPECT_CLIENTS);
    assert_int_equal(checker_watch(&c, SCN_MAX_EXPECT_CLIENTS), -1);
    checker_close(&c);
    trace_close(&t);
}

/* A sweep worker applies a cell's sets once to the parsed file and runs
 * each seed of the cell from that (run_spec.sets_applied: only the seed is
 * set per run). That must be the run that applying the seed and then the
 * sets gives: same digest, events, verdict figures and failed expectations,
 * over params (each set parses the text again) and a lock option. */
static void test_sets_applied_once_per_cell(void **state) {
    (void)state;
    struct scenario file;
    struct scn_error err;
    scenario_init(&file);
    assert_int_equal(scenario_load(&file, "scenarios/gc-pause-outlives-lease.lsim", &err), 0);
    static const char *const cells[][2] = {
            {"pause=1s", "ttl=10s"}, {"pause=27s", "ttl=10s"}, {"pause=27s", "ttl=30s"}, {"pause=12s", "lock.ttl=5s"}};
    int differed = 0;
    uint64_t first = 0;
    for (size_t c = 0; c < sizeof cells / sizeof *cells; c++) {
        struct scenario cell;
        assert_int_equal(scenario_copy(&cell, &file), 0);
        for (int k = 0; k < 2; k++) assert_int_equal(scenario_set(&cell, cells[c][k], &err), 0);
        for (int seed = 1; seed <= 3; seed++) {
            char sd[8];
            snprintf(sd, sizeof sd, "%d", seed);
            struct run_spec each = {.file = "gc", .parsed = &file, .seed = sd, .sets = cells[c], .nsets = 2};
            struct run_spec once = each;
            once.parsed = &cell;
            once.sets_applied = 1;
            struct run_result a, b;
            assert_int_equal(run_scenario(&each, &a), 0);
            assert_int_equal(run_scenario(&once, &b), 0);
            assert_int_equal(b.trace_hash, a.trace_hash);
            assert_int_equal(engine_events(b.engine), engine_events(a.engine));
            assert_int_equal(b.scn->seed, (uint64_t)seed);
            assert_int_equal(b.failed, a.failed);
            assert_int_equal(b.report->stale_accepted, a.report->stale_accepted);
            assert_int_equal(b.report->double_entries, a.report->double_entries);
            if (c == 0 && seed == 1) first = a.trace_hash;
            else differed |= a.trace_hash != first;
            run_result_close(&a);
            run_result_close(&b);
        }
        scenario_close(&cell);
    }
    assert_true(differed); /* the cells are different runs */
    scenario_close(&file);
}

/* Progress beside safety (issue 25): A holds the lock 1s..11s; B asks at
 * 2s and is refused until it gives up at 20s; C asks at 30s and the run ends
 * at 40s with C still asking. Unavailable: 0s..1s (A's own acquisition:
 * asking, no one inside), 11s..20s (B asking, no one inside) and 30s..40s
 * (C), 20s in all; not 2s..11s, when A was inside; B and C never acquired. The verdict stays
 * SAFE, and its headline says who never got the lock. */
static void test_progress_beside_safety(void **state) {
    (void)state;
    struct trace t;
    struct checker c;
    trace_init(&t, 1);
    int a = trace_add_node(&t, "A", TRACE_NODE_CLIENT), b = trace_add_node(&t, "B", TRACE_NODE_CLIENT);
    int cc = trace_add_node(&t, "C", TRACE_NODE_CLIENT);
    assert_int_equal(checker_init(&c, &t, SCN_PURPOSE_CORRECTNESS, 0), 0);
    t.observe = checker_observe;
    t.observe_arg = &c;
    t.advance = checker_advance;
    const sim_ns S = SIM_NS_PER_S;
    struct trace_event evs[] = {
            {.t = 0, .kind = TRACE_ACQUIRE_START, .node = a, .peer = -1},
            {.t = 1 * S, .kind = TRACE_ACQUIRED, .node = a, .peer = -1, .grant = 1, .token = 1},
            {.t = 2 * S, .kind = TRACE_ACQUIRE_START, .node = b, .peer = -1},
            {.t = 3 * S, .kind = TRACE_ACQUIRE_DENIED, .node = b, .peer = -1},
            {.t = 11 * S, .kind = TRACE_CS_EXIT, .node = a, .peer = -1},
            {.t = 12 * S, .kind = TRACE_ACQUIRE_DENIED, .node = b, .peer = -1},
            {.t = 20 * S, .kind = TRACE_ACQUIRE_FAILED, .node = b, .peer = -1},
            {.t = 30 * S, .kind = TRACE_ACQUIRE_START, .node = cc, .peer = -1},
    };
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++) trace_append(&t, &evs[i]);
    struct checker_report rep;
    checker_finish(&c, 40 * S, &rep);
    assert_int_equal(rep.verdict, SCN_VERDICT_SAFE);
    assert_int_equal(rep.starved, 2);
    assert_int_equal(rep.unavailable_ns, 20 * S);
    assert_int_equal(checker_metric(&rep, SCN_M_STARVED), 2);
    assert_string_equal(rep.headline, "SAFE, but B and C never acquired (2 attempts refused): never more "
                                      "than one client in the critical section");
    checker_close(&c);
    trace_close(&t);

    /* Nobody ever acquired: the headline says that nothing ran. */
    trace_init(&t, 1);
    a = trace_add_node(&t, "A", TRACE_NODE_CLIENT);
    assert_int_equal(checker_init(&c, &t, SCN_PURPOSE_CORRECTNESS, 0), 0);
    t.observe = checker_observe;
    t.observe_arg = &c;
    struct trace_event e = {.t = 5 * S, .kind = TRACE_ACQUIRE_START, .node = a, .peer = -1};
    trace_append(&t, &e);
    checker_finish(&c, 10 * S, &rep);
    assert_int_equal(rep.starved, 1);
    assert_int_equal(rep.unavailable_ns, 5 * S);
    assert_string_equal(rep.headline, "SAFE, but no client ever acquired the lock: nothing ran, so nothing "
                                      "could go wrong");
    checker_close(&c);
    trace_close(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_sets_applied_once_per_cell),
            cmocka_unit_test(test_replay_every_scenario),
            cmocka_unit_test(test_mask_kinds_matter),
            cmocka_unit_test(test_dead_owner),
            cmocka_unit_test(test_expect_facts),
            cmocka_unit_test(test_watch_limits),
            cmocka_unit_test(test_quorum_order_redlock),
            cmocka_unit_test(test_quorum_completing_grant),
            cmocka_unit_test(test_equal_grant_times),
            cmocka_unit_test(test_lock_free_judged_by_history),
            cmocka_unit_test(test_lock_free_serial_order),
            cmocka_unit_test(test_progress_beside_safety),
            cmocka_unit_test(test_absolute_write_repeated),
            cmocka_unit_test(test_absolute_write_stale_when_it_undoes),
            cmocka_unit_test(test_absolute_write_resets_stock_account),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
