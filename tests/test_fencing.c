/* fenced-lease's fencing variants (sim/algo/algo_fenced_lease.c), narrated: which
 * token checks are fencing (compare=<, <=, by the resource) and which only
 * look like it (compare=!=, check=client). Exact times, tokens, verdicts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "engine.h"
#include "narrate.h"

#define S SIM_NS_PER_S
#define MS SIM_NS_PER_MS

#include "step_fixture.h" /* step_until_event, so_far (after S: it keeps ours) */

/* Five writes reach the resource in a fixed order of tokens: 42, 42, 41, 43, 43.
 *   A takes token 41 at 0s with a 5s lease and works 10s: it writes at 10s.
 *   B takes 42 at 6s (A's lease expired at 5s) and writes twice at once.
 *   C takes 43 at 12s (B's lease expired at 11s) and writes twice. */
static const char *SEQUENCE = "lock fenced-lease ttl=5s first-token=41 compare=%s\n"
                              "resource stock=10\nnetwork latency=0ms\nduration 30s\n"
                              "client A: acquire; work 10s; write; release\n"
                              "client B @6s: acquire; write; write; work 10s; release\n"
                              "client C @12s: acquire retry=1s; write; write; release\n";

static void expect_sequence(const char *compare, const int want[5]) {
    static const uint64_t tokens[5] = {42, 42, 41, 43, 43};
    static const sim_ns times[5] = {6 * S, 6 * S, 10 * S, 12 * S, 12 * S};
    static const char *writers[5] = {"B", "B", "A", "C", "C"};
    char text[1024];
    snprintf(text, sizeof text, SEQUENCE, compare);
    struct engine *e = run_text(text);
    const struct trace *tr = engine_trace(e);
    for (int i = 0; i < 5; i++) {
        const struct trace_event *w = must(e, TRACE_WRITE, "R", i + 1);
        assert_int_equal(w->t, times[i]);
        assert_int_equal(w->peer, node_of(tr, writers[i]));
        assert_int_equal(w->token, tokens[i]);
        if (w->b != want[i])
            fprintf(stderr, "compare=%s: write %d (token %llu) got %lld, want %d\n", compare, i + 1,
                    (unsigned long long)w->token, (long long)w->b, want[i]);
        assert_int_equal(w->b, want[i]);
    }
    assert_null(find(e, TRACE_WRITE, "R", 6));
    engine_free(e);
}

/* Each compare mode's verdict on the same five writes. */
static void test_compare_modes_on_a_fixed_sequence(void **state) {
    (void)state;
    enum { OK = TRACE_WRITE_ACCEPTED, NO = TRACE_WRITE_REJECTED_STALE };
    /* `<`: only the older token after a newer one (41 after 42) is refused;
     * a holder may write again with its token. */
    const int lt[5] = {OK, OK, NO, OK, OK};
    expect_sequence("<", lt);
    /* `<=`: every write needs a new, higher token: each holder's second
     * write is refused too. */
    const int le[5] = {OK, NO, NO, OK, NO};
    expect_sequence("<=", le);
    { /* B's second write: refused for reusing its token, not for being stale. */
        char text[1024], b[256];
        snprintf(text, sizeof text, SEQUENCE, "<=");
        struct engine *e = run_text(text);
        assert_int_equal(narrate_event(b, sizeof b, engine_trace(e), must(e, TRACE_WRITE, "R", 2)), 0);
        assert_string_equal(b, "R rejects B's write: token 42 was already used by an accepted write");
        assert_int_equal(engine_report(e)->stale_rejected, 1); /* A's 41 only */
        engine_free(e);
    }
    /* `!=`: only a repeat of the last accepted token is refused. 41 after 42
     * is "different" and gets in: the stale write fencing exists to stop. */
    const int ne[5] = {OK, NO, OK, OK, NO};
    expect_sequence("!=", ne);
    /* `first` (etcd's contrib/lock storage): the first write stores 42;
     * B's second write with the equal token is accepted, every other token
     * (41, then C's 43 twice) is refused. */
    const int first[5] = {OK, OK, NO, NO, NO};
    expect_sequence("first", first);
    /* The word aliases name the same rules. */
    expect_sequence("le", le);
}

/* Fenced out: under compare=first, C holds the newest grant and every write
 * of it is refused; A's refusal is a stale write's (B is newer), not a
 * fence-out. Under the other modes the newest holder gets a write in. */
static void test_fenced_out_finding(void **state) {
    (void)state;
    static const char *modes[] = {"first", "<", "<=", "!="};
    static const int64_t want[] = {1, 0, 0, 0};
    for (int m = 0; m < 4; m++) {
        char text[1024];
        snprintf(text, sizeof text, SEQUENCE, modes[m]);
        struct engine *e = run_text(text);
        const struct checker_report *r = engine_report(e);
        if (r->fenced_out != want[m])
            fprintf(stderr, "compare=%s: fenced_out %lld\n", modes[m], (long long)r->fenced_out);
        assert_int_equal(r->fenced_out, want[m]);
        if (m == 0) {
            /* The narration says why C's higher token is refused, and B's equal one is not. */
            char b[256];
            assert_int_equal(narrate_event(b, sizeof b, engine_trace(e), must(e, TRACE_WRITE, "R", 4)), 0);
            assert_string_equal(b, "R rejects C's write: token 43 is not the token 42 stored with the data");
            assert_int_equal(narrate_event(b, sizeof b, engine_trace(e), must(e, TRACE_WRITE, "R", 2)), 0);
            assert_string_equal(b, "R accepts B's write of 8 (token 42)");
            assert_int_equal(r->verdict, SCN_VERDICT_STUCK);
            assert_non_null(strstr(r->headline, "1 client fenced out"));
            assert_int_equal(r->stale_rejected, 1); /* A's 41 */
            assert_int_equal(checker_metric(r, SCN_M_FENCED_OUT), 1);
        } else if (m == 1) {
            assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
        }
        engine_free(e);
    }
}

/* compare=first stores the first write whatever its token: a stale holder
 * whose late write comes first is accepted (the seed's late first write),
 * and then the rightful holder B is fenced out as well. UNSAFE outranks
 * the fence-out in the verdict; the metric still counts B. */
static void test_first_write_recorded_unconditionally(void **state) {
    (void)state;
    struct engine *e = run_text("lock fenced-lease ttl=30s first-token=41 compare=first\n"
                                "resource stock=2\nnetwork latency=0ms\nduration 60s\n"
                                "client A: acquire; read; work 10s; write; release\n"
                                "client B @31s: acquire retry=1s; read; work 5s; write; release\n"
                                "@5s pause A 27s\n");
    int A = node_of(engine_trace(e), "A"), B = node_of(engine_trace(e), "B");
    const struct trace_event *w1 = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w1->t, 32 * S);
    assert_int_equal(w1->peer, A);
    assert_int_equal(w1->token, 41);
    assert_int_equal(w1->b, TRACE_WRITE_ACCEPTED);
    const struct trace_event *w2 = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w2->t, 36 * S);
    assert_int_equal(w2->peer, B);
    assert_int_equal(w2->token, 42);
    assert_int_equal(w2->b, TRACE_WRITE_REJECTED_STALE);
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(r->stale_accepted, 1);
    assert_int_equal(r->fenced_out, 1);
    engine_free(e);
}

static const char *SEED_TIMELINE = "lock fenced-lease ttl=30s first-token=41 compare=%s\n"
                                   "resource stock=1\nnetwork latency=0ms\nduration 60s\n"
                                   "client A: acquire; read; work 10s; write; release\n"
                                   "client B @31s: acquire retry=1s; read; write; work 5s; release\n"
                                   "@5s pause A 27s\n";

/* The seed's timeline: `!=` accepts A's stale 41 after B's 42 (UNSAFE), where
 * `<` rejects it (SAFE). */
static void test_equality_check_is_not_fencing(void **state) {
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, SEED_TIMELINE, "!=");
    struct engine *e = run_text(text);
    int A = node_of(engine_trace(e), "A"), B = node_of(engine_trace(e), "B");
    /* 31s: B writes with 42: accepted, the resource's last token is 42. */
    const struct trace_event *w1 = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w1->t, 31 * S);
    assert_int_equal(w1->peer, B);
    assert_int_equal(w1->token, 42);
    assert_int_equal(w1->b, TRACE_WRITE_ACCEPTED);
    /* 32s: A resumes and writes with 41: 41 != 42, so it is ACCEPTED. */
    const struct trace_event *w2 = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w2->t, 32 * S);
    assert_int_equal(w2->peer, A);
    assert_int_equal(w2->token, 41);
    assert_int_equal(w2->b, TRACE_WRITE_ACCEPTED);
    const struct trace_event *sw = must(e, TRACE_STALE_WRITE, NULL, 1);
    assert_int_equal(sw->node, A);
    assert_int_equal(sw->a, 1);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(engine_report(e)->lost_updates, 1);
    engine_free(e);

    snprintf(text, sizeof text, SEED_TIMELINE, "<");
    e = run_text(text);
    w2 = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w2->t, 32 * S);
    assert_int_equal(w2->token, 41);
    assert_int_equal(w2->b, TRACE_WRITE_REJECTED_STALE);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(engine_report(e)->stale_rejected, 1);
    engine_free(e);
}

static const char *READ_PAUSE_WRITE = "lock fenced-lease ttl=10s first-token=41 check=%s\n"
                                      "resource stock=2\nnetwork latency=1ms\nduration 40s\n"
                                      "client A: acquire; read; write; release\n"
                                      "client B @11s: acquire retry=1s; read; write; release\n"
                                      "on A.%s pause A 15s\n";

/* check=client: A reads (the resource reports no token yet), pauses 15s
 * between its read and its write, and its own check, on that old read,
 * passes. The resource trusts it: the stale write lands. */
static void test_client_check_defeated_by_a_pause(void **state) {
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, READ_PAUSE_WRITE, "client", "between-read-and-write");
    struct engine *e = build_engine(text, NULL);
    int A = node_of(engine_trace(e), "A"), B = node_of(engine_trace(e), "B");
    story_cursor = 0;
    struct trace_event ev; /* a copy: the trace's own may move as it grows */
    /* 3ms: A reads 2; 4ms: it pauses; 10.002s: its lease expires on S1 (the
     * deadline is 10.001s, kept through that millisecond as Redis does). */
    assert_int_equal(step_until_event(e, TRACE_READ, "R")->t, 3 * MS);
    assert_int_equal(step_until_event(e, TRACE_PAUSE, "A")->t, 4 * MS);
    assert_int_equal(step_until_event(e, TRACE_SRV_EXPIRE, "S1")->t, 10 * S + 2 * MS);
    /* 11.005s: B, holding 42, writes 1: accepted, while A is still paused. */
    ev = *step_until_event(e, TRACE_WRITE, "R");
    assert_int_equal(ev.t, 11 * S + 5 * MS);
    assert_int_equal(ev.peer, B);
    assert_int_equal(ev.token, 42);
    assert_int_equal(so_far(e, TRACE_RESUME, "A"), 0);
    /* 15.004s: A resumes; its check, on its read from before the pause,
     * passes (no write is skipped); 15.005s: 41 is accepted. */
    assert_int_equal(step_until_event(e, TRACE_RESUME, "A")->t, 15 * S + 4 * MS);
    ev = *step_until_event(e, TRACE_WRITE, "R");
    assert_int_equal(so_far(e, TRACE_WRITE_SKIPPED, "A"), 0);
    assert_int_equal(ev.t, 15 * S + 5 * MS);
    assert_int_equal(ev.peer, A);
    assert_int_equal(ev.token, 41);
    assert_int_equal(ev.b, TRACE_WRITE_ACCEPTED);
    engine_run(e);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(engine_report(e)->stale_accepted, 1);
    assert_int_equal(engine_report(e)->lost_updates, 1); /* two sold, stock shows one */
    engine_free(e);

    /* The fix: the same run with the resource validating the token. */
    snprintf(text, sizeof text, READ_PAUSE_WRITE, "resource", "between-read-and-write");
    e = run_text(text);
    const struct trace_event *w2 = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w2->t, 15 * S + 5 * MS);
    assert_int_equal(w2->token, 41);
    assert_int_equal(w2->b, TRACE_WRITE_REJECTED_STALE);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(engine_report(e)->final_stock, 1);
    assert_int_equal(engine_report(e)->lost_updates, 0);
    engine_free(e);
}

/* check=client does work when nothing comes between the read and the write:
 * A pauses before reading, reads B's token 42 at 15.005s, and abandons its
 * write: the read reply carries the resource's highest token (lock_read_token). */
static void test_client_check_without_a_pause_between(void **state) {
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, READ_PAUSE_WRITE, "client", "after-acquire");
    struct engine *e = run_text(text);
    /* B writes with 42 at 11.005s; A resumes at 15.002s, reads 1 unit and
     * token 42 at 15.003s, and at 15.004s its check (41 < 42) abandons the write. */
    assert_int_equal(must(e, TRACE_WRITE, "R", 1)->token, 42);
    assert_int_equal(must(e, TRACE_READ, "R", 2)->t, 15 * S + 3 * MS);
    const struct trace_event *sk = must(e, TRACE_WRITE_SKIPPED, "A", 1);
    assert_int_equal(sk->t, 15 * S + 4 * MS);
    assert_int_equal(sk->a, TRACE_SKIP_CLIENT_CHECK);
    assert_int_equal(sk->token, 41);
    assert_null(find(e, TRACE_WRITE, "R", 2));
    assert_int_equal(engine_report(e)->stale_accepted, 0);
    assert_int_equal(engine_report(e)->lost_updates, 0);
    engine_free(e);
}

/* A write with no token (a program that writes without acquiring): the
 * resource refuses it under check=resource; check=client lets it in. */
static void test_write_without_token(void **state) {
    (void)state;
    struct engine *e = run_text("lock fenced-lease\nresource stock=3\n"
                                "client A: write\n");
    assert_int_equal(must(e, TRACE_WRITE, "R", 1)->b, TRACE_WRITE_REJECTED_NOTOKEN);
    assert_int_equal(engine_report(e)->final_stock, 3);
    engine_free(e);
    e = run_text("lock fenced-lease check=client\nresource stock=3\nclient A: write\n");
    assert_int_equal(must(e, TRACE_WRITE, "R", 1)->b, TRACE_WRITE_ACCEPTED);
    assert_int_equal(engine_report(e)->final_stock, 2);
    engine_free(e);
}

/* A rule that is not a fencing check wins over the scenario's `resource
 * fencing=off`: db-conditional-update's WHERE version still refuses the
 * paused client's late UPDATE, and the run is SAFE. (fenced-lease, whose
 * rule is fencing, honours the flag: test_fenced_lease_honours_fencing_off.) */
static void test_algorithm_rule_wins_over_scenario_flag(void **state) {
    (void)state;
    struct engine *e = run_text("lock db-conditional-update\n"
                                "resource stock=1 fencing=off\nnetwork latency=0ms\nduration 60s\n"
                                "client A: acquire; read; work 10s; write; release\n"
                                "client B @31s: acquire; read; write; work 5s; release\n"
                                "@5s pause A 27s\n");
    const struct trace_event *w2 = must(e, TRACE_WRITE, "R", 2);
    assert_int_not_equal(w2->b, TRACE_WRITE_ACCEPTED);
    assert_int_equal(engine_report(e)->stale_accepted, 0);
    assert_int_equal(engine_report(e)->final_stock, 0);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
}

/* Option errors are full sentences at the option's column. */
static void test_options(void **state) {
    (void)state;
    struct scn_error err;
    assert_int_equal(build_text("lock fenced-lease compare=>\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_int_equal(err.pos.col, 19);
    assert_string_equal(err.msg, "compare '>' is not one of <, <=, != (or lt, le, ne) or first: the "
                                 "rule that refuses a token");
    assert_int_equal(build_text("lock fenced-lease check=server\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_string_equal(err.msg, "check 'server' is not resource or client: who compares the token");
    assert_int_equal(build_text("lock fenced-lease comapre=<\nclient A: acquire\n", &err), LSIM_EUNKNOWN_OPTION);
    assert_non_null(strstr(err.msg, "unknown option 'comapre' for fenced-lease; expected ttl, "));
    assert_non_null(strstr(err.msg, ", wait, "));
    assert_non_null(strstr(err.msg, ", compare, check"));
    assert_int_equal(build_text("lock fenced-lease compare=<= check=client servers=3 wait=1\n"
                                "client A: acquire\n",
                                &err),
                     0);
}

/* Options that compose (issue 11, item 11). fenced-lease under the seed's
 * timeline: with fencing unstated or on, its rule rejects A's token 41 at
 * 32s; with `resource fencing=off` stated, the tokens are issued and carried
 * but nothing checks them, and A's stale write is accepted. */
static void test_fenced_lease_honours_fencing_off(void **state) {
    (void)state;
    const char *res[3] = {"resource stock=1\n", "resource stock=1 fencing=on\n", "resource stock=1 fencing=off\n"};
    for (int i = 0; i < 3; i++) {
        char text[768];
        snprintf(text, sizeof text,
                 "lock fenced-lease ttl=30s first-token=41\n%snetwork latency=0ms\nduration 60s\n"
                 "client A: acquire; read; work 10s; write; release\n"
                 "client B @31s: acquire retry=1s; read; write; work 5s; release\n"
                 "@5s pause A 27s\n",
                 res[i]);
        struct engine *e = run_text(text);
        /* 32s: A's write carries token 41 either way. */
        const struct trace_event *w = must(e, TRACE_WRITE, "R", 2);
        assert_int_equal(w->t, 32 * S);
        assert_int_equal(w->token, 41);
        const struct checker_report *r = engine_report(e);
        if (i < 2) {
            assert_int_equal(w->b, TRACE_WRITE_REJECTED_STALE);
            assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
        } else {
            assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
            assert_int_equal(r->stale_accepted, 1);
            assert_int_equal(r->verdict, SCN_VERDICT_UNSAFE);
        }
        engine_free(e);
    }
}

/* lease-renew tokens=on: grants carry the store's counter (1, 2), the
 * scenario's resource rule checks them; tokens=off (the default) hands out
 * none. The frozen heartbeat lets B in at 16s either way. */
static void test_lease_renew_tokens(void **state) {
    (void)state;
    const char *body = "resource stock=5 fencing=on\nnetwork latency=0ms\nduration 60s\n"
                       "client A: acquire; read; work 20s; write; release\n"
                       "client B @10s: acquire retry=1s; read; write; work 10s; release\n"
                       "@7s pause A 10s\n";
    char text[768];
    snprintf(text, sizeof text, "lock lease-renew ttl=9s tokens=on\n%s", body);
    struct engine *e = run_text(text);
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->token, 1);
    const struct trace_event *b = must(e, TRACE_ACQUIRED, "B", 1);
    assert_int_equal(b->t, 16 * S);
    assert_int_equal(b->token, 2);
    /* 20s: A's write with token 1 is rejected, 2 already seen. */
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w->t, 20 * S);
    assert_int_equal(w->token, 1);
    assert_int_equal(w->b, TRACE_WRITE_REJECTED_STALE);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
    /* tokens=off: no token, and fencing=on rejects the tokenless writes. */
    snprintf(text, sizeof text, "lock lease-renew ttl=9s tokens=off\n%s", body);
    e = run_text(text);
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->token, 0);
    assert_int_equal(must(e, TRACE_WRITE, "R", 1)->b, TRACE_WRITE_REJECTED_NOTOKEN);
    engine_free(e);
    /* A bad value says what is expected. */
    struct scn_error err;
    build_fails("lock lease-renew tokens=maybe\nclient A: acquire; release\n", &err);
    assert_non_null(strstr(err.msg, "tokens 'maybe' is not on or off"));
}

/* resource check=reads+writes (Chubby's sequencer checked on every
 * operation), at its boundaries: a read at exactly the highest token seen
 * is served; one token lower is refused; a read without a token is refused;
 * a served read raises the highest seen, so a lower write is refused before
 * any higher write has landed. B's reads run at 6s; A's write at 10s. */
static const char *READS_CHECKED =
        "lock %s ttl=5s\n"
        "resource stock=10 fencing=on check=reads+writes\nnetwork latency=0ms\nduration 30s\n"
        "client A: acquire; read; work 10s; write; release\n"
        "client B @6s: acquire; read; read; work 10s; release\n";

static void test_reads_checked_at_the_boundaries(void **state) {
    (void)state;
    char text[512];
    snprintf(text, sizeof text, READS_CHECKED, "fenced-lease first-token=41");
    struct engine *e = run_text(text);
    int A = node_of(engine_trace(e), "A"), B = node_of(engine_trace(e), "B");
    /* A's read at 0s with 41 (nothing seen yet) is served. */
    const struct trace_event *r1 = must(e, TRACE_READ, "R", 1);
    assert_int_equal(r1->t, 0);
    assert_int_equal(r1->peer, A);
    /* B's two reads with 42: the first raises the highest seen to 42, the
     * second carries exactly 42 and is served too. */
    const struct trace_event *r2 = must(e, TRACE_READ, "R", 2), *r3 = must(e, TRACE_READ, "R", 3);
    assert_int_equal(r2->peer, B);
    assert_int_equal(r3->peer, B);
    assert_int_equal(r2->t, 6 * S);
    assert_int_equal(r3->t, 6 * S);
    assert_null(find(e, TRACE_READ, "R", 4));
    /* No write of 42 has landed, yet A's write with 41 at 10s is refused. */
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w->t, 10 * S);
    assert_int_equal(w->peer, A);
    assert_int_equal(w->token, 41);
    assert_int_equal(w->b, TRACE_WRITE_REJECTED_STALE);
    assert_int_equal(engine_report(e)->stale_rejected, 1);
    assert_int_equal(engine_report(e)->stale_accepted, 0);
    engine_free(e);

    /* Without check=, the same write is accepted (nothing higher written). */
    char plain[512];
    snprintf(plain, sizeof plain, "%s", text);
    char *c = strstr(plain, " check=reads+writes");
    memmove(c, c + strlen(" check=reads+writes"), strlen(c + strlen(" check=reads+writes")) + 1);
    e = run_text(plain);
    w = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    assert_int_equal(engine_report(e)->stale_accepted, 1);
    engine_free(e);
}

/* A read one token below the highest seen is refused at the read, and the
 * write of that read-modify-write is never sent; a read with no token
 * (a lease without tokens) is refused too. */
static void test_read_refused_skips_the_write(void **state) {
    (void)state;
    struct engine *e = run_text("lock fenced-lease ttl=5s first-token=41\n"
                                "resource stock=10 fencing=on check=reads+writes\nnetwork latency=0ms\n"
                                "duration 30s\n"
                                "client A: acquire; work 10s; read; write; release\n"
                                "client B @6s: acquire; read; work 10s; release\n");
    int A = node_of(engine_trace(e), "A");
    const struct trace_event *refused = must_note(
            e, "A", NOTE_EXACT, "read refused by the resource: its token is lower than one already seen", 1);
    assert_int_equal(refused->t, 10 * S);
    assert_int_equal(refused->a, 41);
    assert_int_equal(refused->b, 42);
    const struct trace_event *sk = must(e, TRACE_WRITE_SKIPPED, "A", 1);
    assert_int_equal(sk->t, 10 * S);
    assert_int_equal(sk->a, TRACE_SKIP_READ_REFUSED);
    assert_int_equal(count(e, TRACE_WRITE, "R", A, 0, 30 * S), 0);
    assert_int_equal(engine_report(e)->writes_accepted, 0);
    engine_free(e);

    e = run_text("lock lease ttl=5s\nresource stock=10 fencing=on check=reads+writes\n"
                 "network latency=0ms\nclient A: acquire; read; write; release\n");
    refused = must_note(e, "A", NOTE_EXACT, "read refused by the resource: it carries no fencing token", 1);
    assert_int_equal(refused->t, 0);
    assert_int_equal(must(e, TRACE_WRITE_SKIPPED, "A", 1)->a, TRACE_SKIP_READ_REFUSED);
    assert_null(find(e, TRACE_READ, "R", 1));
    engine_free(e);
}

/* check= takes writes or reads+writes, and reads+writes needs fencing=on. */
static int parse_text(const char *text, struct scn_error *err) {
    struct scenario sc;
    scenario_init(&sc);
    int rc = scenario_parse(&sc, "test.lsim", text, strlen(text), err);
    scenario_close(&sc);
    return rc;
}

static void test_resource_check_option(void **state) {
    (void)state;
    struct scn_error err;
    assert_int_equal(parse_text("resource fencing=on check=reads\nclient A: acquire\n", &err), LSIM_EPARSE);
    assert_int_equal(err.pos.col, 27);
    assert_string_equal(err.msg, "check 'reads' is not writes or reads+writes: which operations the "
                                 "resource checks the token of");
    assert_int_equal(parse_text("resource check=reads+writes stock=2\nclient A: acquire\n", &err), LSIM_EPARSE);
    assert_int_equal(err.pos.line, 1);
    assert_int_equal(err.pos.col, 10);
    assert_string_equal(err.msg, "check=reads+writes checks the fencing token of reads; it needs "
                                 "fencing=on on this line");
    assert_int_equal(parse_text("resource check=writes\nclient A: acquire\n", &err), 0);
    assert_int_equal(parse_text("resource check=reads+writes fencing=on\nclient A: acquire\n", &err), 0);
}

/* --set keeps the resource line's rule: check=reads+writes without fencing
 * is refused and leaves the scenario as it was (before, it was taken and did
 * nothing, and explore, which prints and re-parses each run, failed with no
 * message), and so is fencing=off under it; with fencing on first it is taken. */
static void test_set_check_needs_fencing(void **state) {
    (void)state;
    struct scn_error err;
    struct scenario sc;
    const char *text = "resource stock=2 fencing=off\nclient A: acquire\n";
    scenario_init(&sc);
    assert_int_equal(scenario_parse(&sc, "test.lsim", text, strlen(text), &err), 0);
    assert_int_equal(scenario_set(&sc, "resource.check=reads+writes", &err), LSIM_EBAD_VALUE);
    assert_string_equal(err.file, "--set");
    assert_int_equal(err.pos.col, 16);
    assert_string_equal(err.msg, "check=reads+writes checks the fencing token of reads; it needs "
                                 "fencing=on (--set resource.fencing=on before it)");
    assert_int_equal(sc.check_reads, 0);
    assert_int_equal(sc.fencing, 0);
    assert_int_equal(scenario_set(&sc, "resource.fencing=on", &err), 0);
    assert_int_equal(scenario_set(&sc, "resource.check=reads+writes", &err), 0);
    assert_int_equal(sc.check_reads, 1);
    assert_int_equal(scenario_set(&sc, "fencing=off", &err), LSIM_EBAD_VALUE);
    assert_int_equal(sc.fencing, 1);
    assert_int_equal(sc.check_reads, 1);
    scenario_close(&sc);
}

/* Late, not stale (issue 12): at a resource with a rule, a write under a
 * superseded grant that lands before ANY operation of the newer grant is
 * ordered before the new holder's whole critical section. A (token 1) is
 * paused 11.5 s between read and write, B holds from 11 s (token 2). B
 * works first: A's write at 11.5 s is late (SAFE). B reads at once: the same
 * write lands after B's read, stale (UNSAFE). On a plain resource (lease)
 * the early landing is stale too: nothing ordered it. */
static const char *LATE = "lock %s ttl=10s\nresource stock=2 %s\nnetwork latency=0ms\nduration 30s\n"
                          "client A: acquire; read; write; release\n"
                          "client B @1s: acquire retry=1s; %s; release\n"
                          "on A.between-read-and-write pause A 11.5s\n";

static struct engine *late_run(const char *algo, const char *res, const char *work) {
    char text[512];
    snprintf(text, sizeof text, LATE, algo, res, work);
    return run_text(text);
}

static void test_late_write_is_ordered_not_stale(void **state) {
    (void)state;
    char b[400];
    struct engine *e = late_run("fenced-lease", "fencing=on check=reads+writes", "work 1s; read; write");
    const struct checker_report *r = engine_report(e);
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w->t, 11 * S + 500 * MS);
    assert_int_equal(w->peer, node_of(engine_trace(e), "A"));
    assert_int_equal(w->token, 1);
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    const struct trace_event *l = must(e, TRACE_LATE_WRITE, "A", 1);
    assert_int_equal(l->t, w->t);
    assert_int_equal(l->token, 1);
    assert_null(find(e, TRACE_STALE_WRITE, NULL, 1));
    assert_int_equal(r->late_writes, 1);
    assert_int_equal(r->stale_accepted, 0);
    assert_int_equal(r->lost_updates, 0);
    assert_int_equal(r->double_entries, 1);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    assert_string_equal(r->headline, "SAFE: two clients overlapped; 1 late write reached the resource before "
                                     "any operation of the newer grant, so its history stays in grant order");
    assert_int_equal(narrate_event(b, sizeof b, engine_trace(e), l), 0);
    assert_string_equal(b, "A's write under its lost lock (token 1) was accepted, but B, the new holder, has "
                           "not touched the resource yet: the write still comes first in grant order, no harm");
    engine_free(e);

    /* B reads and writes at once (11 s): A's write at 11.5 s comes after
     * operations of token 2 and is refused by the fence: no late write. */
    e = late_run("fenced-lease", "fencing=on check=reads+writes", "read; write");
    w = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w->t, 11 * S);
    assert_int_equal(w->peer, node_of(engine_trace(e), "B"));
    assert_null(find(e, TRACE_LATE_WRITE, NULL, 1));
    assert_int_equal(engine_report(e)->late_writes, 0);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
    /* Writes checked only, B reads at 11 s and writes at 12 s: the read does
     * not raise the fence, so A's write at 11.5 s (token 1, the highest seen)
     * is accepted after an operation of token 2: stale, and B's write
     * computed from its read loses an update. */
    e = late_run("fenced-lease", "fencing=on", "read; work 1s; write");
    r = engine_report(e);
    w = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w->t, 11 * S + 500 * MS);
    assert_int_equal(w->token, 1);
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    assert_non_null(find(e, TRACE_STALE_WRITE, "A", 1));
    assert_int_equal(r->late_writes, 0);
    assert_int_equal(r->stale_accepted, 1);
    assert_int_equal(r->lost_updates, 1);
    assert_int_equal(r->verdict, SCN_VERDICT_UNSAFE);
    engine_free(e);
    /* A plain resource, the first timing: stale, though nothing is lost. */
    e = late_run("lease", "fencing=off", "work 1s; read; write");
    r = engine_report(e);
    assert_int_equal(must(e, TRACE_WRITE, "R", 1)->t, 11 * S + 500 * MS);
    assert_non_null(find(e, TRACE_STALE_WRITE, "A", 1));
    assert_int_equal(r->late_writes, 0);
    assert_int_equal(r->stale_accepted, 1);
    assert_int_equal(r->lost_updates, 0);
    assert_int_equal(r->verdict, SCN_VERDICT_UNSAFE);
    engine_free(e);
}

/* The narration of a guard's refusal says it is the guard, not a fence. */
static void test_guard_refusal_narrated(void **state) {
    (void)state;
    struct engine *e = run_text("lock fenced-lease ttl=5s first-token=41\nresource stock=10 guard=owner\n"
                                "network latency=0ms\nduration 30s\n"
                                "client A: acquire; read; work 10s; write; release\n"
                                "client B @6s: acquire; read; work 10s; write; release\n");
    char b[300];
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w->t, 10 * S);
    assert_int_equal(w->b, TRACE_WRITE_REJECTED_NOT_OWNER);
    assert_int_equal(narrate_event(b, sizeof b, engine_trace(e), must(e, TRACE_STALE_WRITE, "A", 1)), 0);
    assert_string_equal(b, "the ownership guard works: A's stale write (token 41) was refused (the lock "
                           "service no longer records A as the holder)");
    engine_free(e);
}

/* resource guard=owner (issue 11 item 14): a write is applied only while the
 * lock service records its writer, under its token, as the holder. The
 * holder's write inside its lease is applied (token 41 = the recorded 41);
 * the same write after the lease expired, with no new holder at all, is
 * refused, where a fence that has seen nothing higher accepts it. */
static void test_guard_owner(void **state) {
    (void)state;
    struct engine *e = run_text("lock fenced-lease ttl=5s first-token=41\nresource stock=10 guard=owner\n"
                                "network latency=0ms\nduration 30s\n"
                                "client A: acquire; read; write; work 10s; write; release\n");
    const struct trace_event *w1 = must(e, TRACE_WRITE, "R", 1), *w2 = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w1->t, 0);
    assert_int_equal(w1->token, 41);
    assert_int_equal(w1->b, TRACE_WRITE_ACCEPTED);
    /* 10s: the key expired at 5.001s; nobody holds the lock. */
    assert_int_equal(w2->t, 10 * S);
    assert_int_equal(w2->b, TRACE_WRITE_REJECTED_NOT_OWNER);
    assert_int_equal(must(e, TRACE_RESOURCE_INIT, "R", 1)->b, TRACE_RULE_OWNER);
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->writes_accepted, 1);
    assert_int_equal(r->writes_rejected, 1);
    assert_int_equal(r->fenced_out, 0); /* a first write got in */
    assert_int_equal(r->resource_rule, TRACE_RULE_OWNER);
    engine_free(e);

    e = run_text("lock fenced-lease ttl=5s first-token=41\nresource stock=10 fencing=on\n"
                 "network latency=0ms\nduration 30s\n"
                 "client A: acquire; read; write; work 10s; write; release\n");
    assert_int_equal(must(e, TRACE_WRITE, "R", 2)->b, TRACE_WRITE_ACCEPTED);
    engine_free(e);

    /* A lock without tokens: the record is the owner alone. B, who never
     * acquired, is refused; A, the holder, is applied. */
    e = run_text("lock lease ttl=30s\nresource stock=10 guard=owner\nnetwork latency=0ms\n"
                 "duration 30s\nclient A: acquire; read; work 1s; write; release\n"
                 "client B: read; write\n");
    int A = node_of(engine_trace(e), "A"), B = node_of(engine_trace(e), "B");
    const struct trace_event *wb = must(e, TRACE_WRITE, "R", 1), *wa = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(wb->peer, B);
    assert_int_equal(wb->b, TRACE_WRITE_REJECTED_NOT_OWNER);
    assert_int_equal(wa->peer, A);
    assert_int_equal(wa->t, 1 * S);
    assert_int_equal(wa->b, TRACE_WRITE_ACCEPTED);
    engine_free(e);

    struct scn_error err;
    assert_int_equal(parse_text("resource guard=holder\nclient A: acquire\n", &err), LSIM_EPARSE);
    assert_int_equal(err.pos.col, 16);
    assert_string_equal(err.msg, "guard 'holder' is not none or owner: whether a write needs the lock "
                                 "service to record its writer as the holder");
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_compare_modes_on_a_fixed_sequence),
            cmocka_unit_test(test_equality_check_is_not_fencing),
            cmocka_unit_test(test_fenced_out_finding),
            cmocka_unit_test(test_reads_checked_at_the_boundaries),
            cmocka_unit_test(test_read_refused_skips_the_write),
            cmocka_unit_test(test_resource_check_option),
            cmocka_unit_test(test_set_check_needs_fencing),
            cmocka_unit_test(test_guard_owner),
            cmocka_unit_test(test_guard_refusal_narrated),
            cmocka_unit_test(test_first_write_recorded_unconditionally),
            cmocka_unit_test(test_client_check_defeated_by_a_pause),
            cmocka_unit_test(test_client_check_without_a_pause_between),
            cmocka_unit_test(test_write_without_token),
            cmocka_unit_test(test_algorithm_rule_wins_over_scenario_flag),
            cmocka_unit_test(test_options),
            cmocka_unit_test(test_late_write_is_ordered_not_stale),
            cmocka_unit_test(test_fenced_lease_honours_fencing_off),
            cmocka_unit_test(test_lease_renew_tokens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
