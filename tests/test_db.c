/* Tests of the database alternatives to a lock (sim/algo_db_*.c), narrated:
 * each runs the seed's pause against a conditional UPDATE, a UNIQUE
 * constraint, a SKIP LOCKED row claim or an idempotency key, and walks the
 * trace asserting who wrote when, with what result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "db.h"
#include "engine.h"

#define S SIM_NS_PER_S
#define MS SIM_NS_PER_MS

#include "step_fixture.h" /* step_until_event, step_until_note, so_far (after S: it keeps ours) */

/* The seed's GC-pause timeline ("Why a TTL breaks mutual exclusion"). */
static const char *SEED_PAUSE = "lock %s\n"
                                "resource stock=1 fencing=%s\n"
                                "network latency=0ms\nduration 60s\n"
                                "client A: acquire; read; work 10s; write; release\n"
                                "client B @31s: acquire; read; write; work 5s; release\n"
                                "@5s pause A 27s\n";

/* One pending job, workers A and B (db-lease-without-constraint.lsim and its fixes). */
static const char *JOB = "lock %s\n"
                         "resource stock=1 fencing=%s\n"
                         "network latency=0ms\nduration 60s\n"
                         "client A: acquire; read; work 10s; write; release\n"
                         "client B @20s: acquire retry=1s; read; write; work 5s; release\n"
                         "@5s pause A 27s\n";

static struct engine *run_fmt(const char *fmt, const char *lock, const char *fencing) {
    char text[1024];
    snprintf(text, sizeof text, fmt, lock, fencing);
    return run_text(text);
}

/* ---- db-conditional-update ----------------------------------------------------------- */

/* The seed's pause against UPDATE ... WHERE version: exactly A's late write
 * fails. Told step by step: each assertion holds when the story reaches it. */
static void test_conditional_update_rejects_late_write(void **state) {
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, SEED_PAUSE, "db-conditional-update", "on");
    struct engine *e = build_engine(text, NULL);
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A"), B = node_of(tr, "B"), S1 = node_of(tr, "S1");
    story_cursor = 0;
    struct trace_event ev; /* a copy: the trace's own may move as it grows */

    /* t=0: A "acquires" at once: no lock, no token, no validity bound
     * (nothing can expire). */
    ev = *step_until_event(e, TRACE_ACQUIRED, "A");
    assert_int_equal(ev.t, 0);
    assert_int_equal(ev.token, 0);
    assert_int_equal(ev.a, 0);
    /* t=0: A reads 1 unit left, at version 0. */
    ev = *step_until_event(e, TRACE_READ, "R");
    assert_int_equal(ev.peer, A);
    assert_int_equal(ev.a, 1);
    assert_int_equal(ev.b, 0);
    /* t=5..32: A is paused. At 31s B reads (1, v0) and its UPDATE ... WHERE
     * version=0 matches: accepted, while A has not resumed yet. */
    assert_int_equal(step_until_event(e, TRACE_PAUSE, "A")->t, 5 * S);
    ev = *step_until_event(e, TRACE_READ, "R");
    assert_int_equal(ev.t, 31 * S);
    assert_int_equal(ev.peer, B);
    assert_int_equal(ev.b, 0);
    ev = *step_until_event(e, TRACE_WRITE, "R");
    assert_int_equal(ev.t, 31 * S);
    assert_int_equal(ev.peer, B);
    assert_int_equal(ev.a, 0);
    assert_int_equal(ev.b, TRACE_WRITE_ACCEPTED);
    assert_int_equal(so_far(e, TRACE_RESUME, "A"), 0);
    /* t=32: A resumes; its UPDATE ... WHERE version=0 finds version 1: 0 rows. */
    assert_int_equal(step_until_event(e, TRACE_RESUME, "A")->t, 32 * S);
    ev = *step_until_event(e, TRACE_WRITE, "R");
    assert_int_equal(ev.t, 32 * S);
    assert_int_equal(ev.peer, A);
    assert_int_equal(ev.a, 0);
    assert_int_equal(ev.b, TRACE_WRITE_REJECTED_COND);
    const struct trace_event *n = note(e, "R", NOTE_CONTAINS, "matched 0 rows", 1); /* said as it refused */
    assert_non_null(n);
    assert_int_equal(n->t, 32 * S);
    assert_int_equal(n->a, 0); /* the version A read */
    assert_int_equal(n->b, 1); /* the version now */
    engine_run(e);
    assert_null(find(e, TRACE_WRITE, "R", 3)); /* nothing else was written */
    for (size_t i = 0; i < tr->len; i++)       /* no message to any lock server, ever */
        if (tr->ev[i].kind == TRACE_MSG_SEND) assert_int_not_equal(tr->ev[i].peer, S1);
    /* The checker: no lock was taken, so no write is stale; A's refused
     * UPDATE is duplicated work; one unit, sold once. */
    assert_null(find(e, TRACE_STALE_WRITE, NULL, 1));
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r->writes_accepted, 1);
    assert_int_equal(r->writes_rejected, 1);
    assert_int_equal(r->duplicated_work, 1);
    assert_int_equal(r->stale_rejected, 0);
    assert_int_equal(r->stale_accepted, 0);
    assert_int_equal(r->lost_updates, 0);
    assert_int_equal(r->final_stock, 0);
    engine_free(e);

    /* The same timeline with a lease and an unchecking resource: A's write is accepted. */
    e = run_fmt(SEED_PAUSE, "lease ttl=30s", "off");
    const struct trace_event *w2 = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w2->t, 32 * S);
    assert_int_equal(w2->peer, A);
    assert_int_equal(w2->b, TRACE_WRITE_ACCEPTED);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(engine_report(e)->lost_updates, 1);
    engine_free(e);
}

/* No pause needed: two clients that read the same version race, and the
 * database lets exactly the first UPDATE through. */
static void test_conditional_update_concurrent_readers(void **state) {
    (void)state;
    struct engine *e = run_text("lock db-conditional-update\nresource stock=5 fencing=on\n"
                                "network latency=1ms\n"
                                "client A: acquire; read; write; release\n"
                                "client B: acquire; read; write; release\n");
    /* Both reads arrive at 1ms and see (5, v0); both writes arrive at 3ms. */
    assert_int_equal(must(e, TRACE_READ, "R", 1)->t, 1 * MS);
    assert_int_equal(must(e, TRACE_READ, "R", 2)->t, 1 * MS);
    const struct trace_event *w1 = must(e, TRACE_WRITE, "R", 1);
    const struct trace_event *w2 = must(e, TRACE_WRITE, "R", 2);
    const struct trace *tr = engine_trace(e);
    assert_int_equal(w1->t, 3 * MS);
    assert_int_equal(w1->peer, node_of(tr, "A")); /* A sent first */
    assert_int_equal(w1->b, TRACE_WRITE_ACCEPTED);
    assert_int_equal(w2->t, 3 * MS);
    assert_int_equal(w2->peer, node_of(tr, "B"));
    assert_int_equal(w2->b, TRACE_WRITE_REJECTED_COND);
    /* 5 -> 4, once: B's 4 was computed from a version that had moved. */
    assert_int_equal(engine_report(e)->final_stock, 4);
    assert_int_equal(engine_report(e)->lost_updates, 0);
    engine_free(e);
}

/* `--algo db-conditional-update` on the seed's lease scenario: the lease's
 * options are dropped by name and the same pause is harmless. */
static void test_conditional_update_swapped_in(void **state) {
    (void)state;
    const char *text = "lock lease ttl=30s release=compare-and-delete\n"
                       "resource stock=1 fencing=on\nnetwork latency=0ms\nduration 60s\n"
                       "client A: acquire; read; work 10s; write; release\n"
                       "client B @31s: acquire retry=1s; read; write; work 5s; release\n"
                       "@5s pause A 27s\n";
    struct engine *e = build_engine(text, "db-conditional-update");
    assert_string_equal(engine_dropped_options(e), "ttl release");
    engine_run(e);
    assert_int_equal(must(e, TRACE_WRITE, "R", 2)->b, TRACE_WRITE_REJECTED_COND);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
}

/* The compare-and-set loop (`write tries=N backoff=D`), at its boundary: B's
 * UPDATE is refused at 2.503s (A wrote at 1.003s); B backs off 100ms, re-reads
 * at 2.605s, and C's write lands at 2.606s, between B's re-read and B's second
 * UPDATE (2.607s), which is refused too. With tries=2 that was the last try:
 * B gives up and sells nothing. With tries=3 B backs off 200ms (doubled),
 * re-reads (3, v2) and sells at 2.811s. No lock is taken: SAFE either way,
 * every refused UPDATE counted as duplicated work, never as a stale write. */
static struct engine *cas_loop(int tries) {
    char text[640];
    snprintf(text, sizeof text,
             "lock db-conditional-update\nresource stock=5\nnetwork latency=1ms\nduration 10s\n"
             "client A: acquire; read; work 1s; write; release\n"
             "client B @500ms: acquire; read; work 2s; write tries=%d backoff=100ms; release\n"
             "client C @2.603s: acquire; read; write; release\n",
             tries);
    return run_text(text);
}

static void test_conditional_update_retry_loop(void **state) {
    (void)state;
    struct engine *e = cas_loop(2);
    const struct trace *tr = engine_trace(e);
    int b = node_of(tr, "B");
    /* Write 2 is B's first UPDATE, refused; write 3 is C's; write 4 is B's retry, refused. */
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w->peer, b);
    assert_int_equal(w->t, 2503 * MS);
    assert_int_equal(w->b, TRACE_WRITE_REJECTED_COND);
    assert_int_equal(must(e, TRACE_WRITE, "R", 3)->peer, node_of(tr, "C"));
    assert_int_equal(must(e, TRACE_WRITE, "R", 3)->t, 2606 * MS);
    w = must(e, TRACE_WRITE, "R", 4);
    assert_int_equal(w->peer, b);
    assert_int_equal(w->t, 2607 * MS);
    assert_int_equal(w->a, 3); /* computed from the re-read 4 */
    assert_int_equal(w->b, TRACE_WRITE_REJECTED_COND);
    assert_null(find(e, TRACE_WRITE, "R", 5)); /* the loop ran out of tries */
    /* B's notes: the back-off (attempt 1, 100ms), then giving up on attempt 2. */
    const struct trace_event *n1 = must(e, TRACE_SRV_NOTE, "B", 1), *n2 = must(e, TRACE_SRV_NOTE, "B", 2);
    assert_int_equal(n1->a, 1);
    assert_int_equal(n1->b, 100 * MS);
    assert_int_equal(n2->a, 2);
    assert_string_equal(n2->text, "write refused on its last try: the compare-and-set loop gives up");
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r->writes_accepted, 2);
    assert_int_equal(r->duplicated_work, 2);
    assert_int_equal(r->stale_accepted + r->stale_rejected, 0);
    assert_int_equal(r->final_stock, 3);
    engine_free(e);

    /* One more try: the back-off doubles to 200ms and B sells. */
    e = cas_loop(3);
    w = must(e, TRACE_WRITE, "R", 5);
    assert_int_equal(w->peer, node_of(engine_trace(e), "B"));
    assert_int_equal(w->t, 2811 * MS); /* refused reply 2.608s + 200ms, read 2ms, write 1ms */
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    assert_int_equal(must(e, TRACE_SRV_NOTE, "B", 2)->b, 200 * MS);
    r = engine_report(e);
    assert_int_equal(r->final_stock, 2);
    assert_int_equal(r->lost_updates, 0);
    assert_int_equal(r->duplicated_work, 2);
    engine_free(e);
}

/* condition=off is the plain UPDATE: both racing buyers are accepted and the
 * resource's history has no serial order: a lost update, UNSAFE, with no
 * write called stale (no lock was taken). */
static void test_plain_update_loses_update(void **state) {
    (void)state;
    struct engine *e = run_text("lock db-conditional-update condition=off\nresource stock=5\n"
                                "network latency=1ms\n"
                                "client A: acquire; read; write; release\n"
                                "client B: acquire; read; write; release\n");
    assert_int_equal(must(e, TRACE_WRITE, "R", 2)->b, TRACE_WRITE_ACCEPTED);
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(r->lost_updates, 1);
    assert_int_equal(r->stale_accepted, 0);
    assert_int_equal(r->duplicated_work, 0);
    assert_true(r->lock_free);
    engine_free(e);
}

/* ---- db-unique-constraint -------------------------------------------------------------- */

/* db-unique-constraint.lsim: the second insert of unit 2 is refused. */
static void test_unique_constraint_rejects_second_insert(void **state) {
    (void)state;
    struct engine *e = run_text("lock db-unique-constraint\nresource stock=2 fencing=on\n"
                                "network latency=0ms\nduration 60s\n"
                                "client A: acquire; read; work 10s; write; release\n"
                                "client B @31s: acquire; read; write; release\n"
                                "client C @33s: acquire; read; write; release\n"
                                "@5s pause A 27s\n");
    const struct trace *tr = engine_trace(e);
    /* t=0: A reads 2 left: it will take unit 2. */
    assert_int_equal(must(e, TRACE_READ, "R", 1)->a, 2);
    /* t=31: B reads 2 too and inserts unit 2 (writes 1): accepted. */
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w->t, 31 * S);
    assert_int_equal(w->peer, node_of(tr, "B"));
    assert_int_equal(w->a, 1);
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    /* t=32: A resumes and inserts unit 2 again: the constraint refuses it. */
    w = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w->t, 32 * S);
    assert_int_equal(w->peer, node_of(tr, "A"));
    assert_int_equal(w->a, 1);
    assert_int_equal(w->b, DB_WRITE_REJECTED_UNIQUE);
    const struct trace_event *n = note(e, "R", NOTE_CONTAINS, "violates UNIQUE", 1);
    assert_non_null(n);
    assert_int_equal(n->t, 32 * S);
    assert_int_equal(n->a, 2); /* the unit */
    /* t=33: C reads 1 (A's refused insert left the stock alone) and takes unit 1. */
    const struct trace_event *rd = must(e, TRACE_READ, "R", 3);
    assert_int_equal(rd->t, 33 * S);
    assert_int_equal(rd->a, 1);
    w = must(e, TRACE_WRITE, "R", 3);
    assert_int_equal(w->peer, node_of(tr, "C"));
    assert_int_equal(w->a, 0);
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r->writes_accepted, 2);
    assert_int_equal(r->writes_rejected, 1);
    assert_int_equal(r->lost_updates, 0);
    assert_int_equal(r->final_stock, 0);
    engine_free(e);
}

/* A unit beyond the modelled table (1..2^20) is refused with a note, never
 * wrapped onto another unit's row. */
static void test_unique_constraint_bound(void **state) {
    (void)state;
    struct engine *e = run_text("lock db-unique-constraint\nresource stock=1048577\n"
                                "network latency=0ms\n"
                                "client A: acquire; read; write; release\n");
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w->b, DB_WRITE_REJECTED_UNIQUE);
    assert_non_null(note(e, "R", NOTE_CONTAINS, "outside the modelled table", 1));
    assert_int_equal(engine_report(e)->final_stock, 1048577);
    engine_free(e);
    /* The table's last unit, 1048576, is an ordinary insert. */
    e = run_text("lock db-unique-constraint\nresource stock=1048576\nnetwork latency=0ms\n"
                 "client A: acquire; read; write; release\n");
    assert_int_equal(must(e, TRACE_WRITE, "R", 1)->b, TRACE_WRITE_ACCEPTED);
    assert_int_equal(engine_report(e)->final_stock, 1048575);
    engine_free(e);
}

/* ---- db-skip-locked ------------------------------------------------------------------------ */

/* A taken row is skipped at once: the refusal comes back in the same instant
 * (latency 0), or after exactly one round trip, never after the holder. */
static void test_skip_locked_refuses_at_once(void **state) {
    (void)state;
    struct engine *e = run_text("lock db-skip-locked\nnetwork latency=0ms\n"
                                "client A: acquire; work 10s; release\n"
                                "client B @1s: acquire tries=1; work 1s; release\n");
    const struct trace *tr = engine_trace(e);
    /* t=0: A claims the row in transaction 1. */
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 1);
    assert_int_equal(g->t, 0);
    assert_int_equal(g->token, 1);
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->token, 1);
    /* t=1s: B's claim finds it locked: skipped, and B hears so at 1s. */
    assert_int_equal(must(e, TRACE_ACQUIRE_TRY, "B", 1)->t, 1 * S);
    const struct trace_event *d = must(e, TRACE_SRV_DENY, "S1", 1);
    assert_int_equal(d->t, 1 * S);
    assert_int_equal(d->peer, node_of(tr, "B"));
    assert_int_equal(d->a, node_of(tr, "A")); /* the holder */
    assert_int_equal(must(e, TRACE_ACQUIRE_DENIED, "B", 1)->t, 1 * S);
    assert_int_equal(must(e, TRACE_ACQUIRE_FAILED, "B", 1)->t, 1 * S);
    assert_null(find(e, TRACE_ACQUIRED, "B", 1));
    /* A commits at 10s: only then is the row free. */
    assert_int_equal(must(e, TRACE_SRV_DELETE, "S1", 1)->t, 10 * S);
    engine_free(e);

    /* With 1ms links: the refusal takes one round trip (2ms), while A holds on to 10s. */
    e = run_text("lock db-skip-locked\nnetwork latency=1ms\n"
                 "client A: acquire; work 10s; release\n"
                 "client B @1s: acquire tries=1; work 1s; release\n");
    assert_int_equal(must(e, TRACE_SRV_DENY, "S1", 1)->t, 1 * S + 1 * MS);
    assert_int_equal(must(e, TRACE_ACQUIRE_DENIED, "B", 1)->t, 1 * S + 2 * MS);
    assert_int_equal(must(e, TRACE_SRV_DELETE, "S1", 1)->t, 10 * S + 3 * MS);
    engine_free(e);
}

/* db-skip-locked-job-claim.lsim: the pause ends no transaction, so B skips
 * the job until A commits, and then finds it done. */
static void test_skip_locked_paused_worker_keeps_claim(void **state) {
    (void)state;
    struct engine *e = run_fmt(JOB, "db-skip-locked", "off");
    const struct trace *tr = engine_trace(e);
    /* B polls from 20s to 32s, once a second: 13 skips, each at its try. */
    assert_int_equal(count(e, TRACE_ACQUIRE_DENIED, "B", -3, 0, SIM_TIME_MAX), 13);
    assert_int_equal(must(e, TRACE_ACQUIRE_DENIED, "B", 1)->t, 20 * S);
    assert_int_equal(must(e, TRACE_ACQUIRE_DENIED, "B", 13)->t, 32 * S);
    /* t=32: A resumes; transaction 1 is still open: A's write is accepted. */
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w->t, 32 * S);
    assert_int_equal(w->peer, node_of(tr, "A"));
    assert_int_equal(w->token, 1);
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    /* A commits at 32s; B claims at 33s in transaction 2, reads 0: the job is done. */
    const struct trace_event *del = must(e, TRACE_SRV_DELETE, "S1", 1);
    assert_int_equal(del->t, 32 * S);
    assert_int_equal(del->peer, node_of(tr, "A"));
    const struct trace_event *acq = must(e, TRACE_ACQUIRED, "B", 1);
    assert_int_equal(acq->t, 33 * S);
    assert_int_equal(acq->token, 2);
    assert_int_equal(must(e, TRACE_WRITE_SKIPPED, "B", 1)->a, TRACE_SKIP_SOLD_OUT);
    assert_null(find(e, TRACE_WRITE, "R", 2));
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r->double_entries, 0);
    assert_int_equal(r->writes_accepted, 1);
    assert_int_equal(r->final_stock, 0);
    engine_free(e);
}

/* db-skip-locked-tx-timeout.lsim: the database aborts A's transaction at 20s;
 * B does the job; A's late UPDATE fails on the closed connection. */
static void test_skip_locked_tx_timeout_ends_claim_and_write(void **state) {
    (void)state;
    struct engine *e = run_fmt(JOB, "db-skip-locked tx-timeout=20s", "on");
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A");
    /* t=20: transaction 1 is aborted by the database. */
    const struct trace_event *n = note(e, "S1", NOTE_CONTAINS, "transaction_timeout", 1);
    assert_non_null(n);
    assert_int_equal(n->t, 20 * S);
    assert_int_equal(n->a, 1);
    const struct trace_event *x = must(e, TRACE_SRV_EXPIRE, "S1", 1);
    assert_int_equal(x->t, 20 * S);
    assert_int_equal(x->peer, A);
    /* t=20: B's first poll finds the row free: transaction 2; B does the job. */
    const struct trace_event *acq = must(e, TRACE_ACQUIRED, "B", 1);
    assert_int_equal(acq->t, 20 * S);
    assert_int_equal(acq->token, 2);
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w->t, 20 * S);
    assert_int_equal(w->token, 2);
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    /* t=32: A resumes, learns its connection is closed, and its UPDATE is not sent. */
    n = note(e, "A", NOTE_CONTAINS, "closed the connection", 1);
    assert_non_null(n);
    assert_int_equal(n->t, 32 * S);
    const struct trace_event *sk = must(e, TRACE_WRITE_SKIPPED, "A", 1);
    assert_int_equal(sk->t, 32 * S);
    assert_int_equal(sk->a, TRACE_SKIP_CLIENT_CHECK);
    assert_int_equal(sk->token, 1);
    assert_null(find(e, TRACE_WRITE, "R", 2));
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r->writes_accepted, 1);
    assert_int_equal(r->stale_accepted, 0);
    assert_int_equal(r->final_stock, 0);
    engine_free(e);
}

/* The abort notice to A is lost (S1 -> A drops everything from 15s): A's
 * UPDATE does leave, and R refuses it, since transaction 2 has written. */
static void test_skip_locked_resource_refuses_ended_transaction(void **state) {
    (void)state;
    struct engine *e = run_text("lock db-skip-locked tx-timeout=20s\n"
                                "resource stock=1 fencing=on\nnetwork latency=0ms\nduration 60s\n"
                                "client A: acquire; read; work 10s; write; release\n"
                                "client B @20s: acquire retry=1s; read; write; work 5s; release\n"
                                "@5s pause A 27s\n@15s link S1 A loss=100%\n");
    const struct trace *tr = engine_trace(e);
    assert_null(note(e, "A", NOTE_CONTAINS, "closed the connection", 1)); /* A never hears */
    /* B's write with transaction 2 at 20s, then A's with transaction 1 at 32s. */
    assert_int_equal(must(e, TRACE_WRITE, "R", 1)->token, 2);
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w->t, 32 * S);
    assert_int_equal(w->peer, node_of(tr, "A"));
    assert_int_equal(w->token, 1);
    assert_int_equal(w->b, TRACE_WRITE_REJECTED_STALE);
    assert_non_null(note(e, "R", NOTE_CONTAINS, "transaction that has ended", 1));
    /* A's COMMIT reaches S1, which answers ROLLBACK; the answer is lost, and
     * A's release completes when its request times out, 1s later. */
    const struct trace_event *n = note(e, "S1", NOTE_CONTAINS, "already ended", 1);
    assert_non_null(n);
    assert_int_equal(n->t, 32 * S);
    n = note(e, "A", NOTE_CONTAINS, "request timed out", 1);
    assert_non_null(n);
    assert_int_equal(n->t, 33 * S);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(engine_report(e)->final_stock, 0);
    engine_free(e);
}

/* A crashed worker's row stays locked until the database ends its
 * transaction: never, by default (STUCK), or at the transaction timeout. */
static void test_skip_locked_crashed_worker(void **state) {
    (void)state;
    const char *fmt = "lock db-skip-locked%s\nresource stock=1\nnetwork latency=0ms\n"
                      "duration 120s\nstuck-after 60s\n"
                      "client A: acquire; read; work 10s; write; release\n"
                      "client B @1s: acquire retry=1s; read; write; release\n@5s crash A\n";
    char text[512];
    snprintf(text, sizeof text, fmt, "");
    struct engine *e = run_text(text);
    assert_null(find(e, TRACE_ACQUIRED, "B", 1));
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_STUCK);
    assert_int_equal(engine_report(e)->stuck, 1);
    engine_free(e);

    snprintf(text, sizeof text, fmt, " tx-timeout=10s");
    e = run_text(text);
    const struct trace_event *acq = must(e, TRACE_ACQUIRED, "B", 1);
    assert_int_equal(acq->t, 10 * S); /* the abort at 10s, B's poll at 10s */
    assert_int_equal(acq->token, 2);
    assert_int_equal(must(e, TRACE_WRITE, "R", 1)->b, TRACE_WRITE_ACCEPTED);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(engine_report(e)->final_stock, 0);
    engine_free(e);
}

/* ---- db-idempotency-key ----------------------------------------------------------------- */

/* db-idempotency-key.lsim: job 1 is delivered twice; key 1 is applied once. */
static void test_idempotency_key_drops_duplicate(void **state) {
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, JOB, "db-idempotency-key visibility=30s", "on");
    strcat(text, "client C @40s: acquire; read; write; release\n");
    struct engine *e = run_text(text);
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A"), B = node_of(tr, "B");
    /* t=0: A receives job 1: its key is 1. */
    const struct trace_event *acq = must(e, TRACE_ACQUIRED, "A", 1);
    assert_int_equal(acq->t, 0);
    assert_int_equal(acq->token, 1);
    assert_int_equal(acq->a, 30 * S);
    /* t=30: the visibility timeout passes; job 1 goes to B, key 1 again. */
    assert_int_equal(must(e, TRACE_SRV_EXPIRE, "S1", 1)->t, 30 * S);
    acq = must(e, TRACE_ACQUIRED, "B", 1);
    assert_int_equal(acq->t, 30 * S);
    assert_int_equal(acq->token, 1);
    /* t=30: B's write with key 1 is applied. */
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w->t, 30 * S);
    assert_int_equal(w->peer, B);
    assert_int_equal(w->token, 1);
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    /* t=32: A resumes and writes with key 1: the duplicate is not applied. */
    w = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w->t, 32 * S);
    assert_int_equal(w->peer, A);
    assert_int_equal(w->token, 1);
    assert_int_equal(w->b, DB_WRITE_REJECTED_DUPLICATE);
    assert_non_null(note(e, "R", NOTE_CONTAINS, "already applied", 1));
    /* A's delete carries the first delivery's receipt: refused, B keeps the job. */
    const struct trace_event *k = must(e, TRACE_SRV_KEEP, "S1", 1);
    assert_int_equal(k->t, 32 * S);
    assert_int_equal(k->peer, A);
    assert_int_equal(k->a, B);
    /* t=35: B deletes job 1; C, at 40s, receives job 2 (a new key) and finds nothing left. */
    const struct trace_event *del = must(e, TRACE_SRV_DELETE, "S1", 1);
    assert_int_equal(del->t, 35 * S);
    assert_int_equal(del->peer, B);
    acq = must(e, TRACE_ACQUIRED, "C", 1);
    assert_int_equal(acq->t, 40 * S);
    assert_int_equal(acq->token, 2);
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r->writes_accepted, 1);
    assert_int_equal(r->writes_rejected, 1);
    assert_int_equal(r->duplicated_work, 1); /* A ran the job again for nothing */
    assert_int_equal(r->stale_rejected, 0);  /* db-idempotency-key is judged by R's history */
    assert_int_equal(r->wrong_releases, 0);
    assert_int_equal(r->lost_updates, 0);
    assert_int_equal(r->final_stock, 0);
    engine_free(e);

    /* The same job under a plain lease (db-lease-without-constraint.lsim): done twice. */
    e = run_fmt(JOB, "lease ttl=30s", "off");
    w = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w->t, 32 * S);
    assert_int_equal(w->peer, A);
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(engine_report(e)->lost_updates, 1);
    engine_free(e);
}

/* The key protects whichever run writes first: here A's late run lands first
 * and B's is the duplicate. Judged by R's history (issue 11, item 2), that is
 * as SAFE as the other order: A's write is not stale, B's is duplicated work. */
static void test_idempotency_key_order_free(void **state) {
    (void)state;
    struct engine *e = run_text("lock db-idempotency-key visibility=30s\n"
                                "resource stock=1 fencing=on\nnetwork latency=0ms\nduration 60s\n"
                                "client A: acquire; read; work 10s; write; release\n"
                                "client B @20s: acquire retry=1s; read; work 5s; write; release\n"
                                "@5s pause A 27s\n");
    const struct trace *tr = engine_trace(e);
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w->t, 32 * S);
    assert_int_equal(w->peer, node_of(tr, "A"));
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    w = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w->t, 35 * S);
    assert_int_equal(w->peer, node_of(tr, "B"));
    assert_int_equal(w->b, DB_WRITE_REJECTED_DUPLICATE);
    assert_int_equal(engine_report(e)->writes_accepted, 1);
    assert_int_equal(engine_report(e)->lost_updates, 0);
    assert_int_equal(engine_report(e)->final_stock, 0);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(engine_report(e)->stale_accepted, 0);
    assert_int_equal(engine_report(e)->duplicated_work, 1);
    engine_free(e);
}

/* ---- Options -------------------------------------------------------------------------------- */

/* The engine refuses text at line 1, column col, with a message containing msg_part. */
static void refused_at(const char *text, int col, const char *msg_part) {
    struct scn_error err;
    build_fails(text, &err);
    assert_int_equal(err.pos.line, 1);
    assert_int_equal(err.pos.col, col);
    if (!strstr(err.msg, msg_part)) {
        fprintf(stderr, "message: %s\n", err.msg);
        fail();
    }
}

/* Options are checked by name and value, at the option's column. */
static void test_options(void **state) {
    (void)state;
    refused_at("lock db-conditional-update ttl=30s\nclient A: acquire\n", 28,
               "unknown option 'ttl' for db-conditional-update");
    refused_at("lock db-unique-constraint x=1\nclient A: acquire\n", 27, "unknown option 'x' for db-unique-constraint");
    refused_at("lock db-skip-locked ttl=30s\nclient A: acquire\n", 21,
               "unknown option 'ttl' for db-skip-locked; expected tx-timeout, request-timeout");
    refused_at("lock db-skip-locked tx-timeout=soon\nclient A: acquire\n", 21, "tx-timeout 'soon' is not a duration");
    refused_at("lock db-idempotency-key visibility=0s\nclient A: acquire\n", 25,
               "visibility '0s' is not a positive duration");
    refused_at("lock db-skip-locked servers=2\nclient A: acquire\n", 6, "db-skip-locked runs on at most 1 lock server");
}

/* ---- pg-advisory and pg-advisory-xact -------------------------------------------------
 * A holds the lock from 0s (latency 0) and computes 60s without a query; B
 * and C wait in pg_advisory_lock from 1s and 2s. `timeout` is the idle
 * timeout (session, or in transaction for xact); 0 is PostgreSQL's default,
 * off. */
static struct engine *pg_story(const char *algo, const char *timeout) {
    char text[1024];
    snprintf(text, sizeof text,
             "lock %s %s=%s\n"
             "resource stock=5\n"
             "network latency=0ms\nduration 120s\n"
             "client A: acquire; read; work 60s; write; release\n"
             "client B @1s: acquire; read; write; work 5s; release\n"
             "client C @2s: acquire; read; write; release\n",
             algo, strcmp(algo, "pg-advisory") == 0 ? "idle-session-timeout" : "idle-tx-timeout", timeout);
    return run_text(text);
}

static void test_pg_session_ends_with_idle_timeout(void **state) {
    (void)state;
    /* Off: A keeps the lock through its work; B, then C, in arrival order. */
    struct engine *e = pg_story("pg-advisory", "0s");
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 60 * S);
    assert_int_equal(must(e, TRACE_ACQUIRED, "C", 1)->t, 65 * S);
    assert_null(note(e, "S1", NOTE_PREFIX, "idle_session_timeout", 1));
    engine_free(e);
    /* 30s: the server ends A's session 30s after the grant, to the
     * nanosecond, and B has the lock at that instant; A writes on at 60s
     * (accepted: the store is not in the database) and its unlock fails. */
    e = pg_story("pg-advisory", "30s");
    assert_int_equal(must_note(e, "S1", NOTE_PREFIX, "idle_session_timeout: session terminated", 1)->t, 30 * S);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 30 * S);
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 3); /* B's at 30s, C's at 35s, then A's */
    assert_int_equal(w->t, 60 * S);
    assert_int_equal(w->peer, node_of(engine_trace(e), "A"));
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    assert_int_equal(must_note(e, "A", NOTE_EXACT, "unlock failed: server closed the connection unexpectedly", 1)->t,
                     60 * S);
    /* B's own session, idle 5s in its work, is not ended: it releases, and C follows. */
    assert_int_equal(must(e, TRACE_ACQUIRED, "C", 1)->t, 35 * S);
    engine_free(e);
}

static void test_pg_xact_write_ends_with_transaction(void **state) {
    (void)state;
    /* The same at transaction level: at 30s the transaction is rolled back,
     * B has the lock, and A's UPDATE at 60s is refused (its transaction is gone). */
    struct engine *e = pg_story("pg-advisory-xact", "30s");
    assert_int_equal(must_note(e, "S1", NOTE_PREFIX, "idle_in_transaction_session_timeout", 1)->t, 30 * S);
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->token, 1);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->token, 2);
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w->peer, node_of(engine_trace(e), "B"));
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    int a = node_of(engine_trace(e), "A");
    int refused = 0;
    for (int i = 1; find(e, TRACE_WRITE, "R", i); i++) {
        w = find(e, TRACE_WRITE, "R", i);
        if (w->peer == a) {
            assert_int_equal(w->t, 60 * S);
            assert_int_equal(w->b, TRACE_WRITE_REJECTED_NOT_OWNER);
            refused++;
        }
    }
    assert_int_equal(refused, 1);
    engine_free(e);
    /* Without the timeout A's UPDATE is in its live transaction: accepted. */
    e = pg_story("pg-advisory-xact", "0s");
    w = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w->peer, a);
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    engine_free(e);
}

/* MySQL GET_LOCK (flavor=mysql, wait_timeout 28800s by default): A takes
 * the lock at 0s on one pooled connection and releases it on `conn`. On
 * another connection RELEASE_LOCK returns 0 and the lock stays with the
 * first, idle in the pool, until the server closes it at wait_timeout; on
 * the same one it returns 1 and B has the lock at once. */
static struct engine *mysql_story(const char *conn, const char *extra) {
    char text[1024];
    snprintf(text, sizeof text,
             "lock pg-advisory flavor=mysql release-connection=%s%s\n"
             "resource stock=5\nnetwork latency=0ms\nduration 30000s\n"
             "client A: acquire; read; write; release\n"
             "client B @1s: acquire; read; write; release\n",
             conn, extra);
    return run_text(text);
}

static void test_mysql_release_on_other_connection(void **state) {
    (void)state;
    /* Another connection: RELEASE_LOCK returns 0 at 0s, the lock stays. */
    struct engine *e = mysql_story("other", "");
    const struct trace_event *n = must_note(e, "A", NOTE_PREFIX, "RELEASE_LOCK on another pooled connection returns 0",
                                            1);
    assert_int_equal(n->t, 0);
    /* B waits in GET_LOCK until wait_timeout (28800s after the grant)
     * closes the first connection, to the nanosecond. */
    assert_int_equal(must_note(e, "S1", NOTE_PREFIX, "wait_timeout: connection closed", 1)->t, 28800 * S);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 28800 * S);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
    /* wait-timeout=60s (a server set shorter): B has it at 60s. */
    e = mysql_story("other", " wait-timeout=60s");
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 60 * S);
    engine_free(e);
    /* The same connection: released at 0s; B has it when it asks, at 1s. */
    e = mysql_story("same", "");
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 1 * S);
    assert_null(note(e, "A", NOTE_PREFIX, "RELEASE_LOCK", 1));
    assert_null(note(e, "S1", NOTE_PREFIX, "wait_timeout", 1));
    engine_free(e);
    /* MySQL has no transaction-level GET_LOCK; release-connection is same or other. */
    refused_at("lock pg-advisory-xact flavor=mysql\nclient A: acquire\n", 23,
               "flavor 'mysql' is not postgresql (MySQL has no transaction-level GET_LOCK)");
    refused_at("lock pg-advisory release-connection=pool\nclient A: acquire\n", 18,
               "release-connection 'pool' is not same or other");
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_conditional_update_rejects_late_write),
            cmocka_unit_test(test_conditional_update_concurrent_readers),
            cmocka_unit_test(test_conditional_update_swapped_in),
            cmocka_unit_test(test_conditional_update_retry_loop),
            cmocka_unit_test(test_plain_update_loses_update),
            cmocka_unit_test(test_unique_constraint_rejects_second_insert),
            cmocka_unit_test(test_unique_constraint_bound),
            cmocka_unit_test(test_skip_locked_refuses_at_once),
            cmocka_unit_test(test_skip_locked_paused_worker_keeps_claim),
            cmocka_unit_test(test_skip_locked_tx_timeout_ends_claim_and_write),
            cmocka_unit_test(test_skip_locked_resource_refuses_ended_transaction),
            cmocka_unit_test(test_skip_locked_crashed_worker),
            cmocka_unit_test(test_idempotency_key_drops_duplicate),
            cmocka_unit_test(test_idempotency_key_order_free),
            cmocka_unit_test(test_options),
            cmocka_unit_test(test_pg_session_ends_with_idle_timeout),
            cmocka_unit_test(test_pg_xact_write_ends_with_transaction),
            cmocka_unit_test(test_mysql_release_on_other_connection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
