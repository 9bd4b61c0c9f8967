/* The seed's own timeline, told step by step ("Why a TTL breaks mutual
 * exclusion"): A acquires a 30 s lease and pauses at 5 s; the lease expires
 * at 30 s while A is paused; B acquires at 31 s; A resumes at 32 s believing
 * it still holds the lock. With a plain lease A's late write lands; with a
 * fencing token it is rejected. Each step asserts what the run shows at
 * that moment of virtual time, not only how it ends. */
#include "step_fixture.h"

static const char plain[] = "lock lease ttl=30s release=compare-and-delete\n"
                            "resource stock=1 fencing=off\nnetwork latency=0ms\nduration 60s\n"
                            "client A: acquire; read; work 10s; write; release\n"
                            "client B @31s: acquire retry=1s; read; write; work 5s; release\n"
                            "@5s pause A 27s\n";

static const char fenced[] = "lock fenced-lease ttl=30s first-token=41\n"
                             "resource stock=1 fencing=on\nnetwork latency=0ms\nduration 60s\n"
                             "client A: acquire; read; work 10s; write; release\n"
                             "client B @31s: acquire retry=1s; read; write; work 5s; release\n"
                             "@5s pause A 27s\n";

/* Up to A's resumption: the same story for both algorithms. */
static struct engine *tell_until_resume(const char *text, uint64_t *token_a, uint64_t *token_b) {
    struct engine *e = build_engine(text, NULL);
    story_cursor = 0;
    /* t=0: A gets the lock at once (zero latency). */
    const struct trace_event *ev = step_until_event(e, TRACE_ACQUIRED, "A");
    assert_int_equal(ev->t, 0);
    *token_a = ev->token;
    /* t=5s: the GC pause begins, planned for 27 s. */
    ev = step_until_event(e, TRACE_PAUSE, "A");
    assert_int_equal(ev->t, S(5));
    assert_int_equal(ev->a, S(27));
    /* t=30.001s: the lease expires on the server, the millisecond after its
     * deadline (Redis keeps a key while now <= when); A, paused, is not told. */
    ev = step_until_event(e, TRACE_SRV_EXPIRE, NULL);
    assert_int_equal(ev->t, S(30) + SIM_NS_PER_MS);
    assert_int_equal(ev->peer, node_of(engine_trace(e), "A"));
    assert_int_equal(so_far(e, TRACE_CS_EXIT, "A"), 0); /* A still believes it holds it */
    /* t=31s: B asks and is granted the lock, legitimately. */
    ev = step_until_event(e, TRACE_ACQUIRED, "B");
    assert_int_equal(ev->t, S(31));
    *token_b = ev->token;
    /* t=31s: B reads 1 and writes 0 at once: the unit is sold, rightly. */
    ev = step_until_event(e, TRACE_WRITE, NULL);
    assert_int_equal(ev->t, S(31));
    assert_int_equal(ev->peer, node_of(engine_trace(e), "B"));
    assert_int_equal(ev->token, *token_b);
    assert_int_equal(ev->b, TRACE_WRITE_ACCEPTED);
    /* Paused A still believes it holds the lock: by the global view, two
     * clients are in the critical section from 31 s on. */
    ev = step_until_event(e, TRACE_DOUBLE_ENTRY_BEGIN, NULL);
    assert_int_equal(ev->t, S(31));
    /* t=32s: A resumes, believing it holds the lock. */
    ev = step_until_event(e, TRACE_RESUME, "A");
    assert_int_equal(ev->t, S(32));
    assert_int_equal(ev->a, S(27));
    return e;
}

static void test_plain_lease_sells_twice(void **state) {
    (void)state;
    uint64_t ta, tb;
    struct engine *e = tell_until_resume(plain, &ta, &tb);
    assert_int_equal(ta, 0); /* a plain lease hands out no token */
    assert_int_equal(tb, 0);
    /* A's late write of the same unit lands too. */
    const struct trace_event *w = step_until_event(e, TRACE_WRITE, NULL);
    assert_int_equal(w->t, S(32));
    assert_int_equal(w->peer, node_of(engine_trace(e), "A"));
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    const struct trace_event *stale = step_until_event(e, TRACE_STALE_WRITE, "A");
    assert_int_equal(stale->a, 1); /* accepted: the damage */
    engine_run(e);
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(r->double_entries, 1);
    assert_int_equal(r->double_entry_ns, S(1)); /* 31 s .. 32 s: A leaves after its write */
    assert_int_equal(r->lost_updates, 1);
    engine_free(e);
}

static void test_fencing_rejects_token_41(void **state) {
    (void)state;
    uint64_t ta, tb;
    struct engine *e = tell_until_resume(fenced, &ta, &tb);
    assert_int_equal(ta, 41); /* first-token=41 */
    assert_int_equal(tb, 42);
    /* The resource has seen 42; A's write with 41 arrives later: rejected. */
    const struct trace_event *w = step_until_event(e, TRACE_WRITE, NULL);
    assert_int_equal(w->t, S(32));
    assert_int_equal(w->token, 41);
    assert_int_equal(w->b, TRACE_WRITE_REJECTED_STALE);
    engine_run(e);
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r->stale_rejected, 1);
    assert_int_equal(r->stale_accepted, 0);
    assert_int_equal(r->final_stock, 0);
    engine_free(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_plain_lease_sells_twice),
            cmocka_unit_test(test_fencing_rejects_token_41),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
