/* Tests of issue 25's model 10, two ways to live with a lock that is not
 * exclusive. takeover=on (sim/algo/kv.c, KV_SET_NX): an acquire on a held
 * key takes it over at once under the next token, as Kafka's InitProducerId
 * bumps the producer epoch; stepped through at the take-over, the old holder
 * still in its critical section, and what stops its late write (an
 * ownership guard) or does not (a plain resource). uncertainty=E
 * (sim/algo/kv_client.c, stasis): the holder stops acting E before its
 * lease ends by its own clock, as CockroachDB's stasis period; safe while
 * the store's clock runs ahead by less than E, and not beyond. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "step_fixture.h" /* S(x): x seconds; step_until_event, so_far */

#include "engine.h"

#define MS SIM_NS_PER_MS

/* A holds from 0s, paused 5s..30s; B asks at 10s. */
static struct engine *zombie(const char *lock, const char *resource) {
    char text[1024];
    snprintf(text, sizeof text,
             "lock %s\n"
             "resource stock=10%s\n"
             "network latency=1ms\n"
             "duration 60s\n"
             "client A: acquire; read; work 10s; write; release\n"
             "client B @10s: acquire; read; write; work 5s; release\n"
             "@5s pause A 25s\n",
             lock, resource);
    return build_engine(text, NULL);
}

static void test_takeover_at_once_with_next_epoch(void **state) {
    (void)state;
    struct engine *e = zombie("fenced-lease ttl=60s takeover=on", " guard=owner");
    story_cursor = 0;
    /* t=10.001s: B's SET reaches S1, which holds A's key for 50s more: it
     * notes the take-over (a = the old holder, b = its token)... */
    const struct trace_event *ev = step_until_note(e, "S1", "takes the lock over");
    assert_int_equal(ev->t, S(10) + MS);
    assert_int_equal(ev->a, node_of(engine_trace(e), "A"));
    assert_int_equal(ev->b, 1);
    /* ...and grants B at once under the next epoch. */
    ev = step_until_event(e, TRACE_SRV_GRANT, "S1");
    assert_int_equal(ev->t, S(10) + MS);
    assert_int_equal(ev->peer, node_of(engine_trace(e), "B"));
    assert_int_equal(ev->token, 2);
    /* A, paused, still believes it holds: both inside from 10.002s. */
    assert_int_equal(step_until_event(e, TRACE_DOUBLE_ENTRY_BEGIN, NULL)->t, S(10) + 2 * MS);
    /* t=30.001s: A's write under epoch 1 is refused by the guard. */
    ev = step_until_event(e, TRACE_WRITE, "R");
    assert_int_equal(ev->peer, node_of(engine_trace(e), "B"));
    assert_int_equal(ev->b, TRACE_WRITE_ACCEPTED);
    ev = step_until_event(e, TRACE_WRITE, "R");
    assert_int_equal(ev->t, S(30) + MS);
    assert_int_equal(ev->peer, node_of(engine_trace(e), "A"));
    assert_int_equal(ev->token, 1);
    assert_int_equal(ev->b, TRACE_WRITE_REJECTED_NOT_OWNER);
    engine_run(e);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(engine_report(e)->final_stock, 9);
    engine_free(e);
}

/* The same take-over with no check at the resource: A's late write lands. */
static void test_takeover_without_check_unsafe(void **state) {
    (void)state;
    struct engine *e = zombie("lease ttl=60s takeover=on", "");
    engine_run(e);
    const struct checker_report *r = engine_report(e);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, S(10) + 2 * MS);
    assert_int_equal(r->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(r->stale_accepted, 1);
    assert_int_equal(r->lost_updates, 1);
    engine_free(e);
}

/* takeover=off (the default): B's SET NX is refused while A's key lives,
 * and B gets the lock only after A's own release (30.003s), with no
 * double entry and nothing noted. */
static void test_takeover_off_refuses(void **state) {
    (void)state;
    struct engine *e = zombie("fenced-lease ttl=60s", " guard=owner");
    engine_run(e);
    assert_null(note(e, "S1", NOTE_PREFIX, "takes the lock over", 1));
    assert_int_equal(must(e, TRACE_SRV_DENY, "S1", 1)->t, S(10) + MS);
    assert_true(must(e, TRACE_ACQUIRED, "B", 1)->t > must(e, TRACE_SRV_DELETE, "S1", 1)->t);
    assert_true(must(e, TRACE_SRV_DELETE, "S1", 1)->t > S(30));
    assert_int_equal(engine_report(e)->double_entries, 0);
    engine_free(e);
}

/* The holder asking again is not a take-over of itself; the option reads on
 * and off, and only the lease and fenced-lease take it. */
static void test_option_values(void **state) {
    (void)state;
    struct engine *e = build_engine("lock lease ttl=60s takeover=on\nnetwork latency=0ms\nduration 10s\n"
                                    "client A: acquire; acquire tries=1; release\n",
                                    NULL);
    engine_run(e);
    assert_null(note(e, "S1", NOTE_PREFIX, "takes the lock over", 1));
    engine_free(e);
    struct scn_error err;
    build_fails("lock lease takeover=yes\nclient A: acquire; release\n", &err);
    assert_non_null(strstr(err.msg, "takeover 'yes' is not on (an acquire on a held key takes it over at once with "
                                    "a new epoch, as Kafka's InitProducerId) or off (a held key refuses it, SET NX)"));
    build_fails("lock lease-renew takeover=on\nclient A: acquire; release\n", &err);
    assert_non_null(strstr(err.msg, "unknown option 'takeover' for lease-renew"));
}

/* A 9s lease, the store's clock stepped ahead by `step` at 2s, A writing
 * at 8.7s what it read at 0s, B polling every 100ms from 1s. */
static struct engine *clock_ahead(const char *bound, const char *step) {
    char text[1024];
    snprintf(text, sizeof text,
             "lock lease ttl=9s%s\nresource stock=10\nnetwork latency=1ms\nduration 30s\n"
             "client A: acquire; read; work 8700ms; write; release\n"
             "client B @1s: acquire retry=100ms; read; write; release\n"
             "@2s clock S1 step +%s\n",
             bound, step);
    return build_engine(text, NULL);
}

static void test_stasis_within_bound(void **state) {
    (void)state;
    struct engine *e = clock_ahead(" uncertainty=500ms", "400ms");
    story_cursor = 0;
    /* t=8.5s by A's clock (it asked at 0s): the bound's 500ms before 9s. */
    const struct trace_event *ev = step_until_note(e, "A", "its lease enters the clock-uncertainty bound");
    assert_int_equal(ev->t, S(8) + 500 * MS);
    assert_int_equal(ev->a, 500 * MS);
    ev = step_until_event(e, TRACE_CS_EXIT, "A");
    assert_int_equal(ev->t, S(8) + 500 * MS);
    assert_int_equal(ev->a, TRACE_EXIT_LOST);
    /* t=8.602s: the store, 400ms ahead, expires the key only now. */
    assert_int_equal(step_until_event(e, TRACE_SRV_EXPIRE, "S1")->t, S(8) + 602 * MS);
    engine_run(e);
    const struct checker_report *r = engine_report(e);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, S(8) + 652 * MS);
    assert_int_equal(must(e, TRACE_WRITE_SKIPPED, "A", 1)->a, TRACE_SKIP_LOST);
    assert_int_equal(r->double_entries, 0);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
}

static void test_stasis_beyond_bound(void **state) {
    (void)state;
    /* Without the bound: A writes at 8.7s, after B: UNSAFE. */
    struct engine *e = clock_ahead("", "400ms");
    engine_run(e);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(engine_report(e)->lost_updates, 1);
    engine_free(e);
    /* A jump of 600ms passes the 500ms bound: the key expires at 8.402s,
     * B enters at 8.448s, before A stops at 8.5s: both inside. */
    e = clock_ahead(" uncertainty=500ms", "600ms");
    engine_run(e);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, S(8) + 448 * MS);
    assert_int_equal(engine_report(e)->double_entries, 1);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_UNSAFE);
    engine_free(e);
    struct scn_error err;
    build_fails("lock lease uncertainty=soon\nclient A: acquire; release\n", &err);
    assert_non_null(strstr(err.msg, "uncertainty 'soon' is not a duration such as 500ms (0 = no check)"));
    build_fails("lock fenced-lease uncertainty=1s\nclient A: acquire; release\n", &err);
    assert_non_null(strstr(err.msg, "unknown option 'uncertainty' for fenced-lease"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_takeover_at_once_with_next_epoch),
            cmocka_unit_test(test_takeover_without_check_unsafe),
            cmocka_unit_test(test_takeover_off_refuses),
            cmocka_unit_test(test_option_values),
            cmocka_unit_test(test_stasis_within_bound),
            cmocka_unit_test(test_stasis_beyond_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
