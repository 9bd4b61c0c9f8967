/* Tests of renew-expired (sim/algo/kv.c, renews_lapsed): Azure blob leases'
 * rule that a lease may be renewed after it expired as long as the blob was
 * not leased again since. Stepped through at the instants it decides: the
 * key lapses at its deadline's millisecond (Redis's rule is kept), the
 * holder's renewal after its pause brings it back with the same grant, and
 * a lease taken by another client in the gap, or a release, ends the chance.
 * Latency is 0, so every instant below is exact. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "step_fixture.h" /* S(x): x seconds; step_until_event, so_far */

#include "engine.h"

#define MS SIM_NS_PER_MS

/* A's 15s lease, renewed every 5s (at 5s, deadline 20s); paused 7s to 27s;
 * B asks once a second from b_at and works b_work (" work 10s;" or "")
 * before its write. */
static struct engine *paused_holder(const char *opts, const char *b_at, const char *b_work) {
    char text[1024];
    snprintf(text, sizeof text,
             "lock lease-renew ttl=15s renew-every=3 on-lost=abort%s\n"
             "resource stock=5\n"
             "network latency=0ms\n"
             "duration 60s\n"
             "client A: acquire; read; work 30s; write; release\n"
             "client B @%s: acquire retry=1s; read;%s write; release\n"
             "@7s pause A 20s\n",
             opts, b_at, b_work);
    return build_engine(text, NULL);
}

static void test_lapsed_lease_renewed_when_nobody_took_it(void **state) {
    (void)state;
    struct engine *e = paused_holder(" renew-expired=on", "40s", "");
    story_cursor = 0;
    /* t=5s: the heartbeat's one renewal before the pause: deadline 20s. */
    assert_int_equal(step_until_event(e, TRACE_SRV_RENEW, "S1")->t, S(5));
    /* t=20.001s: the key lapses (Redis's millisecond rule still holds). */
    const struct trace_event *ev = step_until_event(e, TRACE_SRV_EXPIRE, "S1");
    assert_int_equal(ev->t, S(20) + MS);
    assert_int_equal(ev->peer, node_of(engine_trace(e), "A"));
    /* t=27s: A resumes; its renewal, due since 10s, finds the key lapsed and
     * untaken: it comes back, 7s after its deadline, and is renewed. */
    ev = step_until_event(e, TRACE_SRV_NOTE, "S1");
    assert_int_equal(ev->t, S(27));
    assert_string_equal(ev->text, "renews a lapsed lease: nobody leased it since it expired (renew-expired=on)");
    assert_int_equal(ev->a, node_of(engine_trace(e), "A"));
    assert_int_equal(ev->b, S(7)); /* gone since the deadline 20s, by S1's clock */
    assert_int_equal(step_until_event(e, TRACE_SRV_RENEW, "S1")->t, S(27));
    /* t=30s: A's write lands; no client ever saw the lock lost. */
    ev = step_until_event(e, TRACE_WRITE, "R");
    assert_int_equal(ev->t, S(30));
    assert_int_equal(ev->b, TRACE_WRITE_ACCEPTED);
    engine_run(e);
    assert_int_equal(so_far(e, TRACE_WRITE_SKIPPED, "A"), 0);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, S(40));
    assert_int_equal(engine_report(e)->writes_accepted, 2);
    engine_free(e);
}

/* Off (the default, Redis's rule): the same renewal at 27s is refused, and A
 * abandons its write. */
static void test_off_refuses_the_lapsed_renewal(void **state) {
    (void)state;
    struct engine *e = paused_holder("", "40s", "");
    engine_run(e);
    assert_null(note(e, "S1", NOTE_PREFIX, "renews a lapsed lease", 1));
    assert_int_equal(must_note(e, "A", NOTE_PREFIX, "renewal failed: lock lost", 1)->t, S(27));
    assert_int_equal(so_far(e, TRACE_SRV_RENEW, "S1"), 1); /* only the one at 5s */
    assert_int_equal(so_far(e, TRACE_WRITE_SKIPPED, "A"), 1);
    assert_int_equal(engine_report(e)->writes_accepted, 1);
    engine_free(e);
}

/* B leases the key in the gap (at 21s, holding it to 31s): the blob "has
 * been leased again", so A's renewal at 27s is refused even with
 * renew-expired=on, and A learns it lost the lock. */
static void test_leased_again_in_the_gap_refuses(void **state) {
    (void)state;
    struct engine *e = paused_holder(" renew-expired=on", "21s", " work 10s;");
    engine_run(e);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, S(21));
    assert_null(note(e, "S1", NOTE_PREFIX, "renews a lapsed lease", 1));
    assert_int_equal(must_note(e, "A", NOTE_PREFIX, "renewal failed: lock lost", 1)->t, S(27));
    assert_int_equal(so_far(e, TRACE_WRITE_SKIPPED, "A"), 1);
    engine_free(e);
}

/* B leased and released in the gap (at 21s; it works no time): the key is
 * gone, not lapsed, and the renewal is refused as after A's own release. */
static void test_released_in_the_gap_refuses(void **state) {
    (void)state;
    struct engine *e = paused_holder(" renew-expired=on", "21s", "");
    engine_run(e);
    assert_int_equal(must(e, TRACE_SRV_DELETE, "S1", 1)->t, S(21));
    assert_int_equal(must_note(e, "A", NOTE_PREFIX, "renewal failed: lock lost", 1)->t, S(27));
    assert_null(note(e, "S1", NOTE_PREFIX, "renews a lapsed lease", 1));
    engine_free(e);
}

/* A's own release in flight past its renewal: A's renewal sent at 5s is
 * slowed to arrive at 5.9s (A -> S1 latency 900ms from 4s to 5.2s), after
 * A's release (5.5s, no delay) deleted the key. A deleted key did not lapse:
 * the renewal is refused, and B gets the lock at 8s. (Without the lapsed
 * mark, the key's holder and value would still match and A's released
 * lease would come back until 20.9s, with B waiting until 21s.) */
static void test_renewal_after_own_release_refused(void **state) {
    (void)state;
    struct engine *e = build_engine("lock lease-renew ttl=15s renew-every=3 on-lost=abort renew-expired=on\n"
                                    "network latency=0ms\n"
                                    "duration 60s\n"
                                    "client A: acquire; work 5500ms; release\n"
                                    "client B @8s: acquire retry=1s; work 1s; release\n"
                                    "@4s link A S1 latency=900ms\n"
                                    "@5200ms link A S1 latency=0ms\n",
                                    NULL);
    story_cursor = 0;
    assert_int_equal(step_until_event(e, TRACE_SRV_DELETE, "S1")->t, S(5) + 500 * MS);
    engine_run(e);
    assert_int_equal(so_far(e, TRACE_SRV_RENEW, "S1"), 0);
    assert_null(note(e, "S1", NOTE_PREFIX, "renews a lapsed lease", 1));
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, S(8));
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
}

/* The option reads on and off only, and only lease-renew takes it. */
static void test_option_values(void **state) {
    (void)state;
    struct scn_error err;
    build_fails("lock lease-renew renew-expired=yes\nclient A: acquire; release\n", &err);
    assert_non_null(strstr(err.msg, "renew-expired 'yes' is not on (a lapsed lease is renewed while nobody took "
                                    "it, as Azure blob leases do) or off (an expired key is gone, as in Redis)"));
    build_fails("lock lease renew-expired=on\nclient A: acquire; release\n", &err);
    assert_non_null(strstr(err.msg, "unknown option 'renew-expired' for lease"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_lapsed_lease_renewed_when_nobody_took_it),
            cmocka_unit_test(test_off_refuses_the_lapsed_renewal),
            cmocka_unit_test(test_leased_again_in_the_gap_refuses),
            cmocka_unit_test(test_released_in_the_gap_refuses),
            cmocka_unit_test(test_renewal_after_own_release_refused),
            cmocka_unit_test(test_option_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
