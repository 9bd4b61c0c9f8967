/* Engine tests, narrated: each runs a small scenario and walks its trace,
 * asserting the virtual times, tokens and verdicts that a user relies on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "engine.h"
#include "narrate.h"

#define S SIM_NS_PER_S
#define MS SIM_NS_PER_MS

static const char *SEED_TIMELINE = "lock %s ttl=30s%s\n"
                                   "resource stock=1 fencing=%s\n"
                                   "network latency=0ms\n"
                                   "duration 60s\n"
                                   "client A: acquire; read; work 10s; write; release\n"
                                   "client B @31s: acquire retry=1s; read; write; work 5s; release\n"
                                   "@5s pause A 27s\n";

static struct engine *seed_run(const char *algo, const char *fencing) {
    char text[1024];
    /* Only a fenced lock service hands out tokens: start them at 41, as the seed does. */
    snprintf(text, sizeof text, SEED_TIMELINE, algo, strcmp(algo, "fenced-lease") == 0 ? " first-token=41" : "",
             fencing);
    return run_text(text);
}

/* The seed's timeline with a plain lease: A's late write is accepted. */
static void test_seed_plain_lease(void **state) {
    (void)state;
    struct engine *e = seed_run("lease", "off");
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A"), B = node_of(tr, "B");

    /* t=0: A acquires; S1 grants with a 30s TTL. */
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 1);
    assert_int_equal(g->t, 0);
    assert_int_equal(g->peer, A);
    assert_int_equal(g->a, 30 * S);
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->t, 0);
    /* t=5: A pauses. */
    assert_int_equal(must(e, TRACE_PAUSE, "A", 1)->t, 5 * S);
    /* t=30: the lease's deadline. Redis keeps the key through that
     * millisecond (keyIsExpired: now > when) and drops it at 30.001s. A does
     * not know: it is still in its CS. */
    const struct trace_event *x = must(e, TRACE_SRV_EXPIRE, "S1", 1);
    assert_int_equal(x->t, 30 * S + 1 * MS);
    assert_int_equal(x->peer, A);
    assert_int_equal(must(e, TRACE_CS_EXIT, "A", 1)->t, 32 * S); /* A leaves only at 32s */
    /* t=31: B acquires, legitimately. A plain lease hands out no token. */
    g = must(e, TRACE_SRV_GRANT, "S1", 2);
    assert_int_equal(g->t, 31 * S);
    assert_int_equal(g->peer, B);
    assert_int_equal(g->token, 0);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 31 * S);
    /* Both are in the critical section from 31s. */
    const struct trace_event *de = must(e, TRACE_DOUBLE_ENTRY_BEGIN, NULL, 1);
    assert_int_equal(de->t, 31 * S);
    /* t=32: A resumes and writes; a plain resource accepts it, no token carried. */
    assert_int_equal(must(e, TRACE_RESUME, "A", 1)->t, 32 * S);
    const struct trace_event *w1 = must(e, TRACE_WRITE, "R", 1);
    const struct trace_event *w2 = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w1->peer, B);
    assert_int_equal(w1->t, 31 * S);
    assert_int_equal(w2->peer, A);
    assert_int_equal(w2->t, 32 * S);
    assert_int_equal(w2->b, TRACE_WRITE_ACCEPTED);
    assert_int_equal(w2->token, 0);
    /* The checker calls it what it is. */
    const struct trace_event *sw = must(e, TRACE_STALE_WRITE, NULL, 1);
    assert_int_equal(sw->node, A);
    assert_int_equal(sw->a, 1);
    const struct trace_event *dend = must(e, TRACE_DOUBLE_ENTRY_END, NULL, 1);
    assert_int_equal(dend->t, 32 * S);
    assert_int_equal(dend->a, 1 * S);

    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(r->double_entries, 1);
    assert_int_equal(r->double_entry_ns, 1 * S);
    assert_int_equal(r->stale_accepted, 1);
    assert_int_equal(r->lost_updates, 1); /* two units sold, stock shows one */
    assert_int_equal(r->final_stock, 0);
    /* A's compare-and-delete finds B's value and keeps B's lock. */
    assert_int_equal(r->wrong_releases, 0);
    assert_non_null(find(e, TRACE_SRV_KEEP, "S1", 1));
    engine_free(e);
}

/* The same timeline with fencing: token 41 is rejected after 42. */
static void test_seed_fenced(void **state) {
    (void)state;
    struct engine *e = seed_run("fenced-lease", "on");
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A"), B = node_of(tr, "B");
    /* A holds token 41, B token 42. */
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->token, 41);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->token, 42);
    /* B writes first with 42: accepted, the resource records 42. */
    const struct trace_event *w1 = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w1->peer, B);
    assert_int_equal(w1->token, 42);
    assert_int_equal(w1->b, TRACE_WRITE_ACCEPTED);
    /* A resumes at 32s and writes with 41: REJECTED (41 < 42). */
    const struct trace_event *w2 = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w2->t, 32 * S);
    assert_int_equal(w2->peer, A);
    assert_int_equal(w2->token, 41);
    assert_int_equal(w2->b, TRACE_WRITE_REJECTED_STALE);
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r->double_entries, 1); /* the lock still let both in */
    assert_int_equal(r->stale_rejected, 1);
    assert_int_equal(r->stale_accepted, 0);
    assert_int_equal(r->lost_updates, 0);
    assert_int_equal(r->final_stock, 0);
    engine_free(e);
}

/* Fencing only protects once the resource has seen the newer token. */
static void test_fencing_late_first_write(void **state) {
    (void)state;
    struct engine *e = run_text("lock fenced-lease ttl=30s first-token=41\n"
                                "resource stock=1 fencing=on\nnetwork latency=0ms\nduration 60s\n"
                                "client A: acquire; read; work 10s; write; release\n"
                                "client B @31s: acquire; read; work 5s; write; release\n"
                                "@5s pause A 27s\n");
    const struct trace_event *w1 = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w1->t, 32 * S);
    assert_int_equal(w1->token, 41);
    assert_int_equal(w1->b, TRACE_WRITE_ACCEPTED); /* nothing higher seen yet */
    const struct trace_event *w2 = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w2->t, 36 * S);
    assert_int_equal(w2->token, 42);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(engine_report(e)->lost_updates, 1);
    engine_free(e);
}

/* A scenario's `clock` line is in the trace at t = 0: the wall clock's
 * start offset as a clock-step flagged TRACE_CLOCK_AT_START, the drift as a
 * clock-drift; a node without one gets neither. */
static void test_clock_line_in_trace(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease\nclock A offset=-3s drift=250ppm\n"
                                "client A: work 1s\nclient B: work 1s\n");
    const struct trace_event *st = must(e, TRACE_CLOCK_STEP, "A", 1);
    assert_int_equal(st->t, 0);
    assert_int_equal(st->a, -3 * S);
    assert_int_equal(st->b, 1 | TRACE_CLOCK_AT_START);
    const struct trace_event *dr = must(e, TRACE_CLOCK_DRIFT, "A", 1);
    assert_int_equal(dr->t, 0);
    assert_int_equal(dr->a, 250);
    const struct trace *tr = engine_trace(e);
    int clocks = 0;
    for (size_t i = 0; i < tr->len; i++)
        clocks += tr->ev[i].kind == TRACE_CLOCK_STEP || tr->ev[i].kind == TRACE_CLOCK_DRIFT;
    assert_int_equal(clocks, 2); /* B has no clock line */
    engine_free(e);
}

/* A client clock running 10% fast ends a 10s work step early, to the ns. */
static void test_drift_changes_timer(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease\nclock A drift=100000ppm\n"
                                "client A: work 10s\n");
    /* local = t + t/10, so 10s of local time is 9.0909090909s of true time,
     * rounded up to the first ns at which the clock reads 10s. */
    assert_int_equal(must(e, TRACE_WORK_END, "A", 1)->t, 9090909091LL);
    engine_free(e);
}

/* Steps move the wall clock only, unless the scenario says monotonic. */
static void test_wall_step_spares_monotonic_timers(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease\nclient A: work 10s\n@1s clock A step +5s wall\n");
    assert_int_equal(must(e, TRACE_WORK_END, "A", 1)->t, 10 * S);
    engine_free(e);
    e = run_text("lock lease\nclient A: work 10s\n@1s clock A step +5s monotonic\n");
    assert_int_equal(must(e, TRACE_WORK_END, "A", 1)->t, 5 * S);
    engine_free(e);
}

/* A server whose wall clock jumps forward expires a key early. */
static void test_server_wall_jump_expires_early(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease ttl=30s\nnetwork latency=0ms\n"
                                "client A: acquire; work 20s; release\n"
                                "@5s clock S1 step +25s wall\n");
    /* The jump lands S1's wall clock exactly on the deadline (30s), where
     * Redis still keeps the key; it is gone one millisecond later. */
    assert_int_equal(must(e, TRACE_SRV_EXPIRE, "S1", 1)->t, 5 * S + 1 * MS);
    engine_free(e);
    /* Expiring by the monotonic clock, the same jump changes nothing: A releases at 20s. */
    e = run_text("lock lease ttl=30s expiry-clock=monotonic\nnetwork latency=0ms\n"
                 "client A: acquire; work 20s; release\n@5s clock S1 step +25s wall\n");
    assert_null(find(e, TRACE_SRV_EXPIRE, "S1", 1));
    assert_int_equal(must(e, TRACE_SRV_DELETE, "S1", 1)->t, 20 * S);
    engine_free(e);
}

/* A paused node's timers fire late, when it resumes. */
static void test_paused_timers_fire_late(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease\nclient A: work 10s\n@5s pause A 20s\n");
    assert_int_equal(must(e, TRACE_RESUME, "A", 1)->t, 25 * S);
    assert_int_equal(must(e, TRACE_WORK_END, "A", 1)->t, 25 * S);
    engine_free(e);
}

/* Messages to a paused server queue and are served on resume in arrival order. */
static void test_paused_server_serves_in_order(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease ttl=60s request-timeout=30s\nnetwork latency=0ms\n"
                                "client A @1s: acquire; work 1s; release\n"
                                "client B @2s: acquire tries=1; work 1s; release\n"
                                "@500ms pause S1 10s\n");
    const struct trace *tr = engine_trace(e);
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 1);
    assert_int_equal(g->t, 10500 * MS);
    assert_int_equal(g->peer, node_of(tr, "A"));
    const struct trace_event *d = must(e, TRACE_SRV_DENY, "S1", 1);
    assert_int_equal(d->t, 10500 * MS);
    assert_int_equal(d->peer, node_of(tr, "B"));
    assert_true(g->seq < d->seq);
    engine_free(e);
}

/* A crashed client's message already in flight still arrives. */
static void test_crashed_nodes_messages_arrive(void **state) {
    (void)state;
    /* Crash at the named point before the write: nothing is sent. */
    struct engine *e = run_text("lock lease\nnetwork latency=0ms\nlink A R latency=5s\nresource stock=3\n"
                                "client A: acquire; read; write; release\n"
                                "on A.before-write crash A\n");
    assert_null(find(e, TRACE_WRITE, "R", 1)); /* crashed before sending */
    engine_free(e);
    e = run_text("lock lease\nnetwork latency=0ms\nlink A R latency=5s\nresource stock=3\n"
                 "client A: acquire; read; write; release\n@11s crash A\n");
    /* read: 0s -> 5s, reply 5s; write sent 5s, arrives 10s, ack back 10s (R->A is 0ms). */
    assert_int_equal(must(e, TRACE_WRITE, "R", 1)->t, 10 * S);
    engine_free(e);
    e = run_text("lock lease\nnetwork latency=0ms\nlink A R latency=5s\nresource stock=3\n"
                 "client A: acquire; read; write; release\n@7s crash A\n");
    /* The write left at 5s; A crashed at 7s; it still lands at 10s. */
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w->t, 10 * S);
    assert_true(must(e, TRACE_CRASH, "A", 1)->seq < w->seq);
    engine_free(e);
}

/* A client whose read is lost stops waiting after the resource timeout and
 * goes on: here to its release, so the next client is not held up. */
static void test_resource_timeout(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease\nresource stock=3 timeout=2s\nnetwork latency=1ms\n"
                                "link A R loss=100%\n"
                                "client A: acquire; write; release\n"
                                "client B @1s: acquire retry=1s; write; release\n");
    /* A holds the lock from 2ms; its read never arrives; at 2.002s it gives up
     * (the write it was reading for is dropped) and releases. */
    const struct trace_event *x = must(e, TRACE_CS_EXIT, "A", 1);
    assert_int_equal(x->t, 2 * S + 2 * MS);
    assert_int_equal(x->a, TRACE_EXIT_RELEASE);
    /* B gets the lock on its next try and sells one unit. */
    assert_true(must(e, TRACE_ACQUIRED, "B", 1)->t > x->t);
    assert_int_equal(engine_report(e)->final_stock, 2);
    assert_int_equal(engine_report(e)->writes_accepted, 1);
    engine_free(e);
}

/* A restarted client never takes a reply meant for its previous life:
 * one still on the wire when it crashed is dropped, and one sent later
 * (to a request of the dead incarnation) answers nothing it asked. */
static void test_restarted_client_ignores_old_replies(void **state) {
    (void)state;
    /* The reply to A's SET leaves S1 at 1s; A crashes at 1.5s, restarts at 1.8s. */
    struct engine *e = run_text("lock lease ttl=10s request-timeout=5s\nnetwork latency=1s\nduration 30s\n"
                                "client A: acquire retry=1s; work 1s; release\n"
                                "@1500ms crash A\n@1800ms restart A\n");
    const struct trace *tr = engine_trace(e);
    const struct trace_event *d = NULL;
    for (int i = 1; (d = find(e, TRACE_MSG_DROP, "A", i)) != NULL; i++)
        if (d->b == TRACE_DROP_CRASHED) break;
    assert_non_null(d);
    assert_int_equal(d->t, 2 * S); /* arrives, addressed to the dead incarnation */
    assert_int_equal(d->peer, node_of(tr, "S1"));
    /* The new A gets the lock only when the old grant expires (11s). */
    assert_true(must(e, TRACE_ACQUIRED, "A", 1)->t > 11 * S);
    engine_free(e);
    /* A crashes at 0.5s and is back at 0.7s, before S1 even answers its first SET. */
    e = run_text("lock lease ttl=10s request-timeout=5s\nnetwork latency=1s\nduration 30s\n"
                 "client A: acquire retry=1s; work 1s; release\n"
                 "@500ms crash A\n@700ms restart A\n");
    /* S1 grants the dead incarnation at 1s; the reply reaches the new A at 2s
     * but matches none of its requests, so it does not "acquire" on it. */
    assert_int_equal(must(e, TRACE_SRV_GRANT, "S1", 1)->t, 1 * S);
    assert_true(must(e, TRACE_ACQUIRED, "A", 1)->t > 11 * S);
    engine_free(e);
}

/* max-events is exact: a run needing N events completes with N, and is
 * reported cut short with N - 1. */
static void test_max_events_exact(void **state) {
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, SEED_TIMELINE, "lease", "", "off");
    struct engine *e = run_text(text);
    uint64_t n = engine_events(e);
    assert_int_equal(engine_truncated(e), 0);
    engine_free(e);
    char more[1100];
    snprintf(more, sizeof more, "max-events %llu\n%s", (unsigned long long)n, text);
    e = run_text(more);
    assert_int_equal(engine_truncated(e), 0);
    assert_int_equal(engine_now(e), 60 * S);
    engine_free(e);
    snprintf(more, sizeof more, "max-events %llu\n%s", (unsigned long long)(n - 1), text);
    e = run_text(more);
    assert_int_equal(engine_truncated(e), 1);
    assert_int_equal(engine_events(e), n - 1);
    assert_true(engine_now(e) < 60 * S);
    engine_free(e);
}

/* An operator's promote reaches a paused server only when it resumes. */
static void test_promote_waits_for_paused_server(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease servers=2\nduration 20s\nclient A @10s: acquire; release\n"
                                "@1s pause S2 5s\n@2s promote S2\n");
    assert_int_equal(must(e, TRACE_CONTROL, "S2", 1)->t, 2 * S); /* the operator acts */
    const struct trace_event *p = NULL;
    for (int i = 1; (p = find(e, TRACE_SRV_NOTE, "S2", i)) != NULL; i++)
        if (p->text && strstr(p->text, "promoted to primary")) break;
    assert_non_null(p);
    assert_int_equal(p->t, 6 * S); /* the process, when it runs again */
    engine_free(e);
}

/* A partition between a client and the lock server: requests are dropped
 * until the heal, then the client gets the lock. */
static void test_partition_and_heal(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease request-timeout=1s\nnetwork latency=1ms\n"
                                "client A @1s: acquire retry=1s; work 1s; release\n"
                                "@0s partition A | S1 R\n@10s heal\n");
    assert_non_null(find(e, TRACE_MSG_DROP, "S1", 1));
    const struct trace_event *a = must(e, TRACE_ACQUIRED, "A", 1);
    assert_true(a->t > 10 * S);
    assert_true(a->t < 12 * S);
    engine_free(e);
}

/* A fault at a named point happens exactly when the client reaches it. */
static void test_pause_at_named_point(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease ttl=10s\nnetwork latency=2ms\n"
                                "client A @3s: acquire; read; write; release\n"
                                "on A.after-acquire pause A 15s\n");
    const struct trace_event *acq = must(e, TRACE_ACQUIRED, "A", 1);
    assert_int_equal(acq->t, 3 * S + 4 * MS);
    assert_int_equal(must(e, TRACE_PAUSE, "A", 1)->t, acq->t);
    /* Its read goes out only after the pause: at 18.004s. */
    assert_int_equal(must(e, TRACE_READ, "R", 1)->t, 18 * S + 6 * MS);
    /* The lease's deadline was 13.002s by S1's clock; it expired at 13.003s,
     * while A slept. */
    assert_int_equal(must(e, TRACE_SRV_EXPIRE, "S1", 1)->t, 13 * S + 3 * MS);
    engine_free(e);
}

/* SETNX without a TTL: a crashed holder blocks everyone. */
static void test_setnx_stuck(void **state) {
    (void)state;
    struct engine *e = run_text("lock setnx\nduration 120s\nstuck-after 60s\n"
                                "client A: acquire; work 10s; release\n"
                                "client B @1s: acquire retry=1s; work 1s; release\n@5s crash A\n");
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_STUCK);
    assert_int_equal(r->stuck, 1);
    assert_int_equal(r->acquires, 1);
    assert_null(find(e, TRACE_ACQUIRED, "B", 1));
    engine_free(e);
}

/* An efficiency lock: double execution is wasted work, not a violation. */
static void test_efficiency_purpose(void **state) {
    (void)state;
    struct engine *e = run_text("purpose efficiency\nlock lease ttl=5s\nnetwork latency=0ms\n"
                                "client A: acquire; work 8s; release\n"
                                "client B @6s: acquire; work 3s; release\n@2s pause A 5s\n");
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->double_entries, 1);
    assert_int_equal(r->double_entry_ns, 2 * S); /* B enters at 6s, A leaves at 8s */
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
}

/* Same scenario and seed: the same trace; random latency draws follow the seed. */
static void test_determinism(void **state) {
    (void)state;
    const char *text = "seed 7\nlock lease ttl=2s\nnetwork latency=1ms..40ms loss=1%\n"
                       "clients 20: acquire retry=10ms jitter=5ms; read; work 50ms; write; release\n"
                       "duration 30s\n";
    struct engine *a = run_text(text), *b = run_text(text);
    assert_int_equal(trace_hash(engine_trace(a)), trace_hash(engine_trace(b)));
    assert_int_equal(engine_trace(a)->len, engine_trace(b)->len);
    engine_free(b);
    char other[512];
    snprintf(other, sizeof other, "%s", text);
    other[5] = '8'; /* seed 8 */
    b = run_text(other);
    assert_int_not_equal(trace_hash(engine_trace(a)), trace_hash(engine_trace(b)));
    engine_free(a);
    engine_free(b);
}

/* Algorithm options are validated with the scenario's line and column. */
static void test_bad_option_position(void **state) {
    (void)state;
    struct scn_error err;
    build_fails("lock lease ttI=30s\nclient A: acquire\n", &err);
    assert_int_equal(err.pos.line, 1);
    assert_int_equal(err.pos.col, 12);
    assert_non_null(strstr(err.msg, "unknown option 'ttI' for lease"));
    /* A fault naming a server that this algorithm does not have. */
    build_fails("lock lease\nclient A: acquire\n@1s crash S3\n", &err);
    assert_int_equal(err.pos.line, 3);
    assert_non_null(strstr(err.msg, "'S3'"));
}

/* Stepping: engine_step advances one event at a time, in time order. */
static void test_step_by_step(void **state) {
    (void)state;
    struct scenario s;
    struct scn_error err;
    const char *text = "lock lease\nclient A: acquire; work 1s; release\n";
    scenario_init(&s);
    assert_int_equal(scenario_parse(&s, "x.lsim", text, strlen(text), &err), 0);
    struct engine *e = NULL;
    assert_int_equal(engine_new(&e, &s, NULL, &err), 0);
    scenario_close(&s);
    sim_ns last = 0;
    int steps = 0;
    while (engine_step(e)) {
        assert_true(engine_now(e) >= last);
        last = engine_now(e);
        steps++;
    }
    assert_int_equal((uint64_t)steps, engine_events(e));
    assert_int_equal(engine_step(e), 0); /* stays ended */
    assert_int_equal(engine_report(e)->acquires, 1);
    engine_free(e);
    engine_free(NULL);
}

/* Option refusals are told apart by their code, never by their text: a
 * lenient build (--algo) drops an unknown key and stops at a bad value. */
static void test_option_codes(void **state) {
    (void)state;
    struct scn_error err;
    /* Strict: an unknown key and a bad value each stop the build, with a position. */
    assert_int_equal(build_text("lock lease ttI=3s\nclient A: acquire\n", &err), LSIM_EUNKNOWN_OPTION);
    assert_int_equal(err.pos.line, 1);
    assert_int_equal(build_text("lock lease ttl=soon\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_non_null(strstr(err.msg, "ttl 'soon'"));
    assert_int_equal(build_text("lock nosuch\nclient A: acquire\n", &err), LSIM_EPARSE);
    /* Lenient, as `--algo lease-renew` on a redlock script: quorum is dropped. */
    struct engine *e = build_engine("lock redlock quorum=2 ttl=5s\nclient A: acquire\n", "lease-renew");
    assert_string_equal(engine_dropped_options(e), "quorum");
    engine_free(e);
    /* Lenient still stops at a bad value of a key the algorithm knows. */
    struct scenario s;
    const char *text = "lock lease ttl=soon\nclient A: acquire\n";
    scenario_init(&s);
    assert_int_equal(scenario_parse(&s, "x.lsim", text, strlen(text), &err), 0);
    struct engine_opts o = {.algo = lock_algo_find("setnx-expire"), .lenient_options = 1};
    assert_int_equal(engine_new(&e, &s, &o, &err), LSIM_EBAD_VALUE);
    assert_null(e);
    scenario_close(&s);
}

/* lock.h's value parsers read the scenario's syntax and answer with codes. */
static void test_lock_parsers(void **state) {
    (void)state;
    sim_ns d = 7;
    int64_t i = 7;
    int b = 7;
    assert_int_equal(lock_parse_duration("500ms", &d), 0);
    assert_int_equal(d, 500 * SIM_NS_PER_MS);
    assert_int_equal(lock_parse_duration("soon", &d), LSIM_EBAD_VALUE);
    assert_int_equal(d, 500 * SIM_NS_PER_MS); /* left as it was */
    assert_int_equal(lock_parse_int("-12", &i), 0);
    assert_int_equal(i, -12);
    assert_int_equal(lock_parse_int("12x", &i), LSIM_EBAD_VALUE);
    assert_int_equal(lock_parse_bool("off", &b), 0);
    assert_int_equal(b, 0);
    assert_int_equal(lock_parse_bool("maybe", &b), LSIM_EBAD_VALUE);
}

/* Faults with nothing to do at run time are not silent: each leaves an
 * "ignored" note in the trace, with its kind and line, and the narration
 * says so. A second pause of a paused node neither extends nor cuts the
 * first one short. */
static void test_ignored_faults(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease ttl=10s\n"
                                "duration 30s\n"
                                "client A: acquire; work 5s; release\n"
                                "client B @1s: acquire retry=1s; release\n"
                                "@2s resume A\n"  /* line 5: A runs */
                                "@3s restart B\n" /* line 6: B has not crashed */
                                "@4s pause A 10s\n"
                                "@5s pause A 1s\n" /* line 8: A is paused already */
                                "@20s crash B\n"
                                "@21s crash B\n"  /* line 10 */
                                "@22s resume B\n" /* line 11: B is down */
                                /* Faults at named points leave A's and B's
                                 * timed faults to the run (the parser refuses
                                 * those it can decide), so each is ignored at
                                 * run time, as here. */
                                "on A.after-release crash A\n"
                                "on B.after-release restart B\n");
    /* t=2s: resuming a running client does nothing, and says so. */
    const struct trace_event *n = must_note(e, "A", NOTE_EXACT, "ignored: A is not paused", 1);
    assert_int_equal(n->t, 2 * S);
    assert_int_equal(n->a, SCN_FAULT_RESUME);
    assert_int_equal(n->b, 5);
    /* t=3s: B has not crashed, so there is nothing to restart. */
    n = must_note(e, "B", NOTE_EXACT, "ignored: B has not crashed", 1);
    assert_int_equal(n->t, 3 * S);
    assert_int_equal(n->a, SCN_FAULT_RESTART);
    assert_int_equal(count(e, TRACE_RESTART, NULL, -3, 0, SIM_TIME_MAX), 0);
    /* t=4s A pauses for 10s; the pause at 5s is ignored: one PAUSE, and A
     * resumes at 14s after 10s, not at 6s. */
    n = must_note(e, "A", NOTE_PREFIX, "ignored: A is already paused", 1);
    assert_int_equal(n->t, 5 * S);
    assert_int_equal(n->b, 8);
    assert_int_equal(count(e, TRACE_PAUSE, "A", -3, 0, SIM_TIME_MAX), 1);
    const struct trace_event *r = must(e, TRACE_RESUME, "A", 1);
    assert_int_equal(r->t, 14 * S);
    assert_int_equal(r->a, 10 * S);
    /* t=21s: a second crash; t=22s: resuming a node that is down. */
    n = must_note(e, "B", NOTE_EXACT, "ignored: B has already crashed", 1);
    assert_int_equal(n->t, 21 * S);
    assert_int_equal(count(e, TRACE_CRASH, "B", -3, 0, SIM_TIME_MAX), 1);
    n = must_note(e, "B", NOTE_EXACT, "ignored: B is down, not paused", 1);
    assert_int_equal(n->t, 22 * S);
    /* The narration names the fault, its line and the reason. */
    char b[256];
    n = must_note(e, "A", NOTE_EXACT, "ignored: A is not paused", 1);
    assert_int_equal(narrate_event(b, sizeof b, engine_trace(e), n), 0);
    assert_string_equal(b, "resume A (line 5) does nothing: A is not paused");
    engine_free(e);
}

/* ---- Timers cancelled and re-armed (engine_timer.c, struct timer) -------- */

/* A server that arms, cancels and re-arms timers as Raft's election timer
 * is reset, and logs every firing: (timer id, true time). Timer ids: 1 A,
 * 2 B, 3 K (the kicker), 4 E, 5 F, 6 C, 7 G, 8 X. */
struct rearm_server {
    uint64_t a, b, c, x;
};
static struct {
    int id[32];
    sim_ns t[32];
    int n;
    uint64_t handle[8]; /* the handles the re-armings returned, in order */
    int nhandle;
    int arm; /* 0 = the server arms nothing; 1 = it re-arms by lock_cancel and lock_timer;
                2 = by lock_timer_rearm */
} rearm_log;

static uint64_t rearm_at(struct lock_ctx *ctx, sim_ns delay, int id) {
    return lock_timer(ctx, LOCK_CLOCK_MONO, delay, id, 0);
}
/* Timer h cancelled and id armed again, in the way rearm_log.arm says. */
static uint64_t rearm_again(struct lock_ctx *ctx, uint64_t h, sim_ns delay, int id) {
    uint64_t n;
    if (rearm_log.arm == 2) {
        n = lock_timer_rearm(ctx, h, LOCK_CLOCK_MONO, delay, id, 0);
    } else {
        lock_cancel(ctx, h);
        n = rearm_at(ctx, delay, id);
    }
    rearm_log.handle[rearm_log.nhandle++] = n;
    return n;
}
static void rearm_server_init(struct lock_ctx *ctx, void *state) {
    struct rearm_server *s = state;
    if (!rearm_log.arm) return;
    s->a = rearm_at(ctx, 10 * MS, 1);
    s->b = rearm_at(ctx, 100 * MS, 2);
    rearm_at(ctx, 5 * MS, 3);
    rearm_at(ctx, 25 * MS, 4); /* E: due with A's re-arming, armed before it */
    s->c = rearm_at(ctx, 12 * MS, 6);
    rearm_at(ctx, 45 * MS, 7); /* G: due with C's second re-arming, armed before it */
    s->x = rearm_at(ctx, 40 * MS, 8);
}
static void rearm_server_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    (void)arg;
    struct rearm_server *s = state;
    rearm_log.id[rearm_log.n] = timer;
    rearm_log.t[rearm_log.n++] = lock_now(ctx, LOCK_CLOCK_MONO);
    if (timer == 3) {                              /* t = 5ms */
        s->a = rearm_again(ctx, s->a, 20 * MS, 1); /* A: 10ms -> 25ms, later than its queued entry */
        s->b = rearm_again(ctx, s->b, 10 * MS, 2); /* B: 100ms -> 15ms, earlier than its queued entry */
        rearm_at(ctx, 20 * MS, 5);                 /* F: due with A, armed after it */
        s->c = rearm_again(ctx, s->c, 35 * MS, 6); /* C: 12ms -> 40ms */
        lock_cancel(ctx, s->x);                    /* X never fires */
        rearm_again(ctx, s->x, 50 * MS, 8);        /* X again, then cancelled: a stale handle arms */
        lock_cancel(ctx, rearm_log.handle[rearm_log.nhandle - 1]);
    } else if (timer == 2) {                       /* t = 15ms */
        s->c = rearm_again(ctx, s->c, 30 * MS, 6); /* C: 40ms -> 45ms, its entry re-queued twice */
    }
}
static void rearm_client_acquire(struct lock_ctx *ctx, void *state) {
    (void)state;
    lock_granted(ctx, 1, 0);
}
static void rearm_client_release(struct lock_ctx *ctx, void *state) {
    (void)state;
    lock_release_done(ctx);
}
static const struct lock_algo rearm_algo = {
        .abi = LOCK_ABI_VERSION,
        .name = "test-rearm",
        .summary = "test only: timers cancelled and re-armed",
        .default_servers = 1,
        .max_servers = 1,
        .client_size = 8,
        .server_size = sizeof(struct rearm_server),
        .client_acquire = rearm_client_acquire,
        .client_release = rearm_client_release,
        .server_init = rearm_server_init,
        .server_timer = rearm_server_timer,
};

static uint64_t rearm_run(const char *faults, int arm) {
    char text[256];
    snprintf(text, sizeof text, "lock lease\nduration 1s\nclient A @100ms: acquire; release\n%s", faults);
    struct scenario s;
    struct scn_error err;
    scenario_init(&s);
    assert_int_equal(scenario_parse(&s, "test.lsim", text, strlen(text), &err), 0);
    struct engine_opts o = {.algo = &rearm_algo, .lenient_options = 1};
    struct engine *e = NULL;
    memset(&rearm_log, 0, sizeof rearm_log);
    rearm_log.arm = arm; /* engine_new runs server_init */
    assert_int_equal(engine_new(&e, &s, &o, &err), 0);
    scenario_close(&s);
    engine_run(e);
    assert_int_equal(engine_now(e), 1 * S);
    uint64_t n = engine_events(e);
    engine_free(e);
    return n;
}

/* A timer re-armed later than its queued entry fires once, at its new
 * deadline, in the place among equal times that its arming gives it (after
 * timers armed before the re-arming, before those armed after), however
 * often it was re-armed; re-armed earlier, it fires at the earlier time
 * only; cancelled, never. A firing held by a pause comes at the resume, in
 * the same order. The run's event count (run-end's a) counts the firings
 * only, not the queue entries the cancels left behind. */
static void test_timer_rearm(void **state) {
    (void)state;
    static const int order[] = {3, 2, 4, 1, 5, 7, 6};
    const sim_ns plain[] = {5 * MS, 15 * MS, 25 * MS, 25 * MS, 25 * MS, 45 * MS, 45 * MS};
    const sim_ns paused[] = {5 * MS, 15 * MS, 30 * MS, 30 * MS, 30 * MS, 45 * MS, 45 * MS};
    uint64_t quiet = rearm_run("", 0);
    assert_int_equal(rearm_log.n, 0);
    uint64_t busy = rearm_run("", 1);
    assert_int_equal(rearm_log.n, 7);
    for (int i = 0; i < 7; i++) {
        assert_int_equal(rearm_log.id[i], order[i]);
        assert_int_equal(rearm_log.t[i], plain[i]);
    }
    assert_int_equal(busy, quiet + 7); /* seven firings; A's, B's, C's and X's stale entries are not events */
    /* S1 paused from 20ms to 30ms (a node with a clock model: the other timer path). */
    uint64_t held = rearm_run("@20ms pause S1 10ms\n", 1);
    assert_int_equal(rearm_log.n, 7);
    for (int i = 0; i < 7; i++) {
        assert_int_equal(rearm_log.id[i], order[i]);
        assert_int_equal(rearm_log.t[i], paused[i]);
    }
    /* The pause and its resume are events, and a held firing counts when it
     * is held and again when it runs (as any held event does): 7 + 3 + 2. */
    assert_int_equal(held, quiet + 12);
    /* lock_timer_rearm does what lock_cancel then lock_timer do: the same
     * firings at the same times in the same order, the same events, the
     * same handles; with and without the pause. */
    for (int paused_run = 0; paused_run < 2; paused_run++) {
        const char *faults = paused_run ? "@20ms pause S1 10ms\n" : "";
        uint64_t two_calls = rearm_run(faults, 1);
        int id[32], nh = rearm_log.nhandle;
        sim_ns t[32];
        uint64_t handle[8];
        memcpy(id, rearm_log.id, sizeof id);
        memcpy(t, rearm_log.t, sizeof t);
        memcpy(handle, rearm_log.handle, sizeof handle);
        assert_int_equal(rearm_run(faults, 2), two_calls);
        assert_int_equal(rearm_log.n, 7);
        assert_int_equal(rearm_log.nhandle, nh);
        assert_memory_equal(rearm_log.id, id, sizeof id);
        assert_memory_equal(rearm_log.t, t, sizeof t);
        assert_memory_equal(rearm_log.handle, handle, sizeof handle);
    }
}

/* engine_new_take builds the same run as engine_new from the scenario's own
 * arrays, and leaves the scenario as scenario_init does (the caller's close
 * frees nothing twice: the sanitizer build checks that). */
static void test_engine_new_take(void **state) {
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, SEED_TIMELINE, "fenced-lease", " first-token=41", "on");
    struct scenario s;
    struct scn_error err;
    scenario_init(&s);
    assert_int_equal(scenario_parse(&s, "test.lsim", text, strlen(text), &err), 0);
    struct engine_opts o = {.hash_trace = 1};
    struct engine *copied = NULL, *taken = NULL;
    assert_int_equal(engine_new(&copied, &s, &o, &err), 0);
    assert_int_equal(s.nclients, 2); /* engine_new leaves s as it was */
    assert_int_equal(engine_new_take(&taken, &s, &o, &err), 0);
    assert_int_equal(s.nclients, 0);
    assert_null(s.clients);
    assert_null(s.programs);
    assert_int_equal(s.nfaults, 0);
    scenario_close(&s);
    engine_run(copied);
    engine_run(taken);
    assert_int_equal(engine_events(taken), engine_events(copied));
    assert_int_equal(trace_hash(engine_trace(taken)), trace_hash(engine_trace(copied)));
    assert_int_equal(engine_scenario(taken)->nclients, 2);
    assert_int_equal(engine_scenario(taken)->nfaults, 1);
    assert_int_equal(engine_report(taken)->stale_rejected, 1);
    engine_free(copied);
    engine_free(taken);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_seed_plain_lease),
            cmocka_unit_test(test_seed_fenced),
            cmocka_unit_test(test_fencing_late_first_write),
            cmocka_unit_test(test_clock_line_in_trace),
            cmocka_unit_test(test_drift_changes_timer),
            cmocka_unit_test(test_wall_step_spares_monotonic_timers),
            cmocka_unit_test(test_server_wall_jump_expires_early),
            cmocka_unit_test(test_paused_timers_fire_late),
            cmocka_unit_test(test_paused_server_serves_in_order),
            cmocka_unit_test(test_crashed_nodes_messages_arrive),
            cmocka_unit_test(test_resource_timeout),
            cmocka_unit_test(test_restarted_client_ignores_old_replies),
            cmocka_unit_test(test_max_events_exact),
            cmocka_unit_test(test_promote_waits_for_paused_server),
            cmocka_unit_test(test_partition_and_heal),
            cmocka_unit_test(test_pause_at_named_point),
            cmocka_unit_test(test_setnx_stuck),
            cmocka_unit_test(test_efficiency_purpose),
            cmocka_unit_test(test_determinism),
            cmocka_unit_test(test_bad_option_position),
            cmocka_unit_test(test_step_by_step),
            cmocka_unit_test(test_option_codes),
            cmocka_unit_test(test_lock_parsers),
            cmocka_unit_test(test_ignored_faults),
            cmocka_unit_test(test_timer_rearm),
            cmocka_unit_test(test_engine_new_take),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
