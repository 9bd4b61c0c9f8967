/* Replication and failover of the Redis-like lock store (sim/algo/kv.c, kv_repl.c), narrated:
 * each test runs a small scenario with a primary and replicas, then walks its
 * trace asserting the virtual times, tokens and verdicts a user relies on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "engine.h"
#include "kv.h"

#define S SIM_NS_PER_S
#define MS SIM_NS_PER_MS

#include "step_fixture.h" /* step_until_event, step_until_note, so_far (after S: it keeps ours) */

/* Note texts of sim/algo/kv.c and kv_repl.c that the tests look for. */
#define N_COPY_GRANT "replica: copies a grant from the primary"
#define N_COPY_RELEASE "replica: copies a release or expiry from the primary"
#define N_DROP "replica: drops a lock the new primary never had"
#define N_PROMOTED "promoted to primary: serves only what it had replicated"
#define N_STEP_DOWN "steps down to replica: another primary has a newer epoch"
#define N_WAIT_OK "WAIT: enough replicas acknowledged the grant; answering"
#define N_WAIT_TIMEOUT "WAIT timed out: the client is told no, but the SET stays on the primary (no rollback)"
#define N_NOREPLICAS "NOREPLICAS: refuses the write, too few replicas acknowledged lately"
#define N_REDIRECT "redirected by a replica to the primary it follows"
#define N_TIMEOUT "request timed out"

/* Seed, "Split brain": the primary answers before its replica has the grant;
 * it crashes; the promoted replica grants the same lock again, with the same
 * token number, because the counter travels with the grant it never got. */
static void test_async_failover_regrants_same_token(void **state) {
    (void)state;
    struct engine *e = build_engine("lock fenced-lease servers=2 ttl=30s first-token=41 repl-lag=1s\n"
                                    "resource stock=1 fencing=on\nnetwork latency=1ms\nduration 20s\n"
                                    "client A: acquire; read; work 10s; write; release\n"
                                    "client B @3s: acquire retry=1s; read; work 2s; write; release\n"
                                    "@500ms crash S1\n@2s promote S2\n",
                                    NULL);
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A"), B = node_of(tr, "B");
    story_cursor = 0;
    struct trace_event ev; /* a copy: the trace's own may move as it grows */

    /* 1ms: S1 grants A token 41, and answers at once: A holds it at 2ms. */
    ev = *step_until_event(e, TRACE_SRV_GRANT, "S1");
    assert_int_equal(ev.t, 1 * MS);
    assert_int_equal(ev.peer, A);
    assert_int_equal(ev.token, 41);
    assert_int_equal(step_until_event(e, TRACE_ACQUIRED, "A")->t, 2 * MS);
    /* The grant waits 1s (repl-lag) in S1's backlog; S1 crashes at 500ms,
     * before S2 copied anything. */
    assert_int_equal(step_until_event(e, TRACE_CRASH, "S1")->t, 500 * MS);
    assert_null(note(e, "S2", NOTE_EXACT, N_COPY_GRANT, 1));
    /* 2s: the operator promotes S2: epoch 2, replication offset 0: it never
     * had A's grant. */
    assert_int_equal(step_until_event(e, TRACE_CONTROL, "S2")->t, 2 * S);
    ev = *step_until_note(e, "S2", N_PROMOTED);
    assert_int_equal(ev.t, 2 * S);
    assert_int_equal(ev.a, 2);
    assert_int_equal(ev.b, 0);
    assert_null(note(e, "S2", NOTE_EXACT, N_COPY_GRANT, 1));
    /* 3s: B asks S1 (its first guess); the request dies with S1. */
    do ev = *step_until_event(e, TRACE_MSG_DROP, "S1");
    while (ev.peer != B);
    assert_int_equal(ev.t, 3 * S + 1 * MS);
    assert_int_equal(ev.b, TRACE_DROP_CRASHED);
    /* 4s: B's request times out; it asks the next server, S2. */
    assert_int_equal(step_until_note(e, "B", N_TIMEOUT)->t, 4 * S);
    /* 4.001s: S2 grants B the lock with token 41 AGAIN. */
    ev = *step_until_event(e, TRACE_SRV_GRANT, "S2");
    assert_int_equal(ev.t, 4 * S + 1 * MS);
    assert_int_equal(ev.peer, B);
    assert_int_equal(ev.token, 41);
    ev = *step_until_event(e, TRACE_ACQUIRED, "B");
    assert_int_equal(ev.t, 4 * S + 2 * MS);
    assert_int_equal(ev.token, 41);
    /* A is still working: both are in the critical section from 4.002s,
     * and nothing has been written yet. */
    assert_int_equal(step_until_event(e, TRACE_DOUBLE_ENTRY_BEGIN, NULL)->t, 4 * S + 2 * MS);
    assert_int_equal(so_far(e, TRACE_WRITE, "R"), 0);
    /* B writes with 41 at 6.005s; A with 41 at 10.005s: equal tokens pass `<`. */
    ev = *step_until_event(e, TRACE_WRITE, "R");
    assert_int_equal(ev.peer, B);
    assert_int_equal(ev.t, 6 * S + 5 * MS);
    ev = *step_until_event(e, TRACE_WRITE, "R");
    assert_int_equal(ev.peer, A);
    assert_int_equal(ev.t, 10 * S + 5 * MS);
    assert_int_equal(ev.token, 41);
    assert_int_equal(ev.b, TRACE_WRITE_ACCEPTED);
    engine_run(e);
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(r->stale_accepted, 1);
    assert_int_equal(r->lost_updates, 1);
    engine_free(e);
}

/* Without lag, the grant reaches S2 1ms after S1 applied it (as A learns it
 * holds the lock): the promoted S2 holds A's lock, continues the token
 * sequence, and serves A's release after A's request to S1 times out. */
static void test_replicated_grant_survives_failover(void **state) {
    (void)state;
    struct engine *e = run_text("lock fenced-lease servers=2 ttl=30s first-token=41\n"
                                "network latency=1ms\nduration 20s\n"
                                "client A: acquire; work 5s; release\n"
                                "client B @3s: acquire retry=1s; work 1s; release\n"
                                "@1s crash S1\n@2s promote S2\n");
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A"), B = node_of(tr, "B");
    /* 2ms: S2 copies the grant (owner A, token 41); A acquires at the same ms:
     * the client was not made to wait for it. */
    const struct trace_event *c = must_note(e, "S2", NOTE_EXACT, N_COPY_GRANT, 1);
    assert_int_equal(c->t, 2 * MS);
    assert_int_equal(c->a, A);
    assert_int_equal(c->b, 41);
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->t, 2 * MS);
    /* 2s: S2 is promoted having applied offset 1 (the grant). */
    assert_int_equal(must_note(e, "S2", NOTE_EXACT, N_PROMOTED, 1)->b, 1);
    /* 4.001s and 5.003s: S2 denies B, naming A as the holder. */
    const struct trace_event *d1 = must(e, TRACE_SRV_DENY, "S2", 1);
    assert_int_equal(d1->t, 4 * S + 1 * MS);
    assert_int_equal(d1->peer, B);
    assert_int_equal(d1->a, A);
    assert_int_equal(must(e, TRACE_SRV_DENY, "S2", 2)->t, 5 * S + 3 * MS);
    /* 5.002s: A releases to S1 (dead); at 6.002s it times out and asks S2,
     * which deletes A's lock at 6.003s. */
    assert_int_equal(must_note(e, "A", NOTE_EXACT, N_TIMEOUT, 1)->t, 6 * S + 2 * MS);
    const struct trace_event *del = must(e, TRACE_SRV_DELETE, "S2", 1);
    assert_int_equal(del->t, 6 * S + 3 * MS);
    assert_int_equal(del->peer, A);
    assert_int_equal(del->b, 0);
    /* 6.005s: B's third attempt: token 42, the sequence goes on. */
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S2", 1);
    assert_int_equal(g->t, 6 * S + 5 * MS);
    assert_int_equal(g->peer, B);
    assert_int_equal(g->token, 42);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(engine_report(e)->double_entries, 0);
    engine_free(e);
}

/* wait=1: S1 answers the SET only after a replica acknowledged it. With a
 * 500ms stream lag the client holds the lock at 504ms, not at 2ms. */
static void test_wait_delays_acquired(void **state) {
    (void)state;
    static const char *text = "lock lease servers=2 ttl=30s repl-lag=500ms%s\n"
                              "network latency=1ms\nduration 5s\n"
                              "client A: acquire; work 1s; release\n";
    char buf[512];
    snprintf(buf, sizeof buf, text, "");
    struct engine *e = run_text(buf);
    /* Without WAIT: granted at 1ms, held at 2ms, copied by S2 only at 502ms. */
    assert_int_equal(must(e, TRACE_SRV_GRANT, "S1", 1)->t, 1 * MS);
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->t, 2 * MS);
    assert_int_equal(must_note(e, "S2", NOTE_EXACT, N_COPY_GRANT, 1)->t, 502 * MS);
    engine_free(e);

    snprintf(buf, sizeof buf, text, " wait=1");
    e = run_text(buf);
    /* 1ms: S1 applies the SET (the grant is real from now on). */
    assert_int_equal(must(e, TRACE_SRV_GRANT, "S1", 1)->t, 1 * MS);
    /* 501ms: the stream leaves S1; 502ms: S2 applies it and acks. */
    assert_int_equal(must_note(e, "S2", NOTE_EXACT, N_COPY_GRANT, 1)->t, 502 * MS);
    /* 503ms: the ack reaches S1; WAIT is satisfied by 1 replica. */
    const struct trace_event *w = must_note(e, "S1", NOTE_EXACT, N_WAIT_OK, 1);
    assert_int_equal(w->t, 503 * MS);
    assert_int_equal(w->a, 1);
    /* 504ms: only now does A learn it holds the lock. */
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->t, 504 * MS);
    assert_int_equal(must(e, TRACE_CS_EXIT, "A", 1)->t, 1504 * MS);
    engine_free(e);
}

/* WAIT does not roll back: with its only replica down, the SET times out in
 * WAIT, A is told "no", and the key stays on S1 (owned by A) until its TTL.
 * B is refused because of a lock that its holder believes it does not have. */
static void test_wait_timeout_keeps_the_write(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease servers=2 ttl=10s wait=1 wait-timeout=1s\n"
                                "network latency=1ms\nduration 20s\n"
                                "client A: acquire tries=1; work 1s; release\n"
                                "client B @2s: acquire tries=1; work 1s; release\n"
                                "client C @12s: acquire tries=1; work 1s; release\n"
                                "@0s crash S2\n");
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A");
    /* 1ms: S1 applies A's SET and blocks the answer in WAIT. */
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 1);
    assert_int_equal(g->t, 1 * MS);
    assert_int_equal(g->peer, A);
    /* 1.001s: WAIT times out with 0 of 1 replicas; A is told no at 1.002s. */
    const struct trace_event *w = must_note(e, "S1", NOTE_EXACT, N_WAIT_TIMEOUT, 1);
    assert_int_equal(w->t, 1 * S + 1 * MS);
    assert_int_equal(w->a, 0);
    assert_int_equal(w->b, 1);
    assert_int_equal(must(e, TRACE_ACQUIRE_DENIED, "A", 1)->t, 1 * S + 2 * MS);
    assert_int_equal(must(e, TRACE_ACQUIRE_FAILED, "A", 1)->t, 1 * S + 2 * MS);
    assert_null(find(e, TRACE_ACQUIRED, "A", 1));
    /* 2.001s: the key is still there: S1 denies B, naming A as the owner. */
    const struct trace_event *d = must(e, TRACE_SRV_DENY, "S1", 1);
    assert_int_equal(d->t, 2 * S + 1 * MS);
    assert_int_equal(d->a, A);
    /* 10.002s: it goes only when its TTL has run out (deadline 10.001s). */
    const struct trace_event *x = must(e, TRACE_SRV_EXPIRE, "S1", 1);
    assert_int_equal(x->t, 10 * S + 2 * MS);
    assert_int_equal(x->peer, A);
    assert_null(find(e, TRACE_SRV_DELETE, "S1", 1));
    /* 12s: C's SET is applied again and times out again: without a live
     * replica, wait=1 can never say yes. */
    assert_int_equal(must(e, TRACE_SRV_GRANT, "S1", 2)->t, 12 * S + 1 * MS);
    assert_int_equal(must_note(e, "S1", NOTE_EXACT, N_WAIT_TIMEOUT, 2)->t, 13 * S + 1 * MS);
    assert_int_equal(engine_report(e)->acquires, 0);
    assert_int_equal(engine_report(e)->failed_acquires, 3);
    engine_free(e);
}

/* min-replicas-to-write=1 with no replica at all: every write is refused. */
static void test_min_replicas_refuses_without_replicas(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease min-replicas-to-write=1\nnetwork latency=1ms\n"
                                "duration 5s\nclient A: acquire tries=1; work 1s; release\n");
    /* 1ms: S1 refuses the SET: 0 good replicas of the 1 required. */
    const struct trace_event *n = must_note(e, "S1", NOTE_EXACT, N_NOREPLICAS, 1);
    assert_int_equal(n->t, 1 * MS);
    assert_int_equal(n->a, 0);
    assert_int_equal(n->b, 1);
    assert_null(find(e, TRACE_SRV_GRANT, "S1", 1));
    assert_int_equal(must(e, TRACE_ACQUIRE_FAILED, "A", 1)->t, 2 * MS);
    assert_int_equal(engine_report(e)->acquires, 0);
    engine_free(e);
}

/* min-replicas-max-lag counts from the last replica ack. S2 acks S1's
 * heartbeats (sent every second from 0s) at 2ms, 1.002s and 2.002s, then
 * crashes at 2.5s: S1 still takes writes up to 2.002 + 3 = 5.002s, no later. */
static void test_min_replicas_max_lag_boundary(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease servers=2 min-replicas-to-write=1 min-replicas-max-lag=3s\n"
                                "network latency=1ms\nduration 10s\n"
                                "client A @5s: acquire tries=1; work 100ms; release\n"
                                "client B @5.1s: acquire tries=1; work 1s; release\n"
                                "@2.5s crash S2\n");
    /* 5.001s: the last ack is 2.999s old: A's SET is accepted. */
    assert_int_equal(must(e, TRACE_SRV_GRANT, "S1", 1)->t, 5 * S + 1 * MS);
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->t, 5 * S + 2 * MS);
    /* 5.101s: 3.099s old: B's SET is refused NOREPLICAS, before the key is
     * even looked at (A still holds it). */
    const struct trace_event *n = must_note(e, "S1", NOTE_EXACT, N_NOREPLICAS, 1);
    assert_int_equal(n->t, 5 * S + 101 * MS);
    assert_int_equal(n->a, 0);
    assert_null(find(e, TRACE_SRV_DENY, "S1", 1));
    /* 5.103s: A's release (a write too) is refused the same way; its key stays. */
    assert_int_equal(must_note(e, "S1", NOTE_EXACT, N_NOREPLICAS, 2)->t, 5 * S + 103 * MS);
    assert_null(find(e, TRACE_SRV_DELETE, "S1", 1));
    assert_int_equal(engine_report(e)->failed_acquires, 1);
    engine_free(e);
}

/* Split brain: a partition leaves S1 (with A) alive while the operator
 * promotes S2 (with B). Two primaries grant the same lock from the same
 * counter state, and their grants overlap; after the heal S1 steps down.
 * (A plain lease hands out no fencing token: the trace shows token 0;
 * failover-async-replication-loses-lock.lsim shows token 41 issued twice.) */
static void test_split_brain_two_primaries(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease servers=2 ttl=30s\nnetwork latency=1ms\nduration 30s\n"
                                "client A @3s: acquire; work 12s; release\n"
                                "client B @3s: acquire retry=1s; work 5s; release\n"
                                "@1s partition A S1 | B S2\n@2s promote S2\n@12s heal\n");
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A"), B = node_of(tr, "B"), S2 = node_of(tr, "S2");
    /* 3.001s: S1, still a primary on its side, grants A. */
    const struct trace_event *g1 = must(e, TRACE_SRV_GRANT, "S1", 1);
    assert_int_equal(g1->t, 3 * S + 1 * MS);
    assert_int_equal(g1->peer, A);
    assert_int_equal(g1->token, 0);
    /* B's request to S1 is cut by the partition; at 4s it times out, and
     * S2, the promoted primary, grants B at 4.001s. */
    const struct trace_event *g2 = must(e, TRACE_SRV_GRANT, "S2", 1);
    assert_int_equal(g2->t, 4 * S + 1 * MS);
    assert_int_equal(g2->peer, B);
    assert_int_equal(g2->token, 0);
    /* Two grants by two servers overlap: neither was deleted or expired
     * before the other was made, and both holders are inside. */
    assert_null(find(e, TRACE_SRV_EXPIRE, NULL, 1));
    assert_true(must(e, TRACE_SRV_DELETE, "S2", 1)->t > g2->t);
    assert_true(must(e, TRACE_CS_EXIT, "A", 1)->t > g2->t);
    const struct trace_event *de = must(e, TRACE_DOUBLE_ENTRY_BEGIN, NULL, 1);
    assert_int_equal(de->t, 4 * S + 2 * MS);
    const struct trace_event *dend = must(e, TRACE_DOUBLE_ENTRY_END, NULL, 1);
    assert_int_equal(dend->t, 9 * S + 2 * MS);
    assert_int_equal(dend->a, 5 * S);
    /* 12s heal; 12.001s: S2's heartbeat reaches S1, which steps down (epoch
     * 2, primary S2) and drops A's lock, which S2 never had. */
    const struct trace_event *sd = must_note(e, "S1", NOTE_EXACT, N_STEP_DOWN, 1);
    assert_int_equal(sd->t, 12 * S + 1 * MS);
    assert_int_equal(sd->a, 2);
    assert_int_equal(sd->b, S2);
    const struct trace_event *dr = must_note(e, "S1", NOTE_EXACT, N_DROP, 1);
    assert_int_equal(dr->t, 12 * S + 1 * MS);
    assert_int_equal(dr->a, A);
    /* 15.002s: A releases to S1, now a replica, which redirects it to S2
     * (15.004s); S2 has no lock of A's and keeps nothing (15.005s). */
    const struct trace_event *rd = must_note(e, "A", NOTE_EXACT, N_REDIRECT, 1);
    assert_int_equal(rd->t, 15 * S + 4 * MS);
    assert_int_equal(rd->a, S2);
    const struct trace_event *k = must(e, TRACE_SRV_KEEP, "S2", 1);
    assert_int_equal(k->t, 15 * S + 5 * MS);
    assert_int_equal(k->peer, A);
    assert_int_equal(k->a, -1);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(engine_report(e)->double_entries, 1);
    engine_free(e);
}

/* Redis's warning ("Safety of replication when master has persistence turned
 * off"): a primary that restarts empty is copied, empty, by its replicas;
 * and with its token counter reset it issues token 1 again. */
static void test_primary_restarts_empty_and_replicas_copy_it(void **state) {
    (void)state;
    struct engine *e = run_text("lock fenced-lease servers=2 persistence=none\nnetwork latency=1ms\n"
                                "duration 10s\n"
                                "client A: acquire; work 5s; release\n"
                                "client B @3s: acquire; work 1s; release\n"
                                "@1s crash S1\n+1s restart S1\n");
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A");
    assert_int_equal(must_note(e, "S2", NOTE_EXACT, N_COPY_GRANT, 1)->t, 2 * MS);
    /* 2s: S1 comes back empty and streams its empty state at once;
     * 2.001s: S2 copies the loss of A's lock. */
    assert_int_equal(must_note(e, "S1", NOTE_EXACT, "restarted empty (no persistence)", 1)->t, 2 * S);
    const struct trace_event *c = must_note(e, "S2", NOTE_EXACT, N_COPY_RELEASE, 1);
    assert_int_equal(c->t, 2 * S + 1 * MS);
    assert_int_equal(c->a, A);
    /* 3.001s: S1 grants B token 1, the number A holds. */
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 2);
    assert_int_equal(g->t, 3 * S + 1 * MS);
    assert_int_equal(g->token, 1);
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->token, 1);
    assert_int_equal(engine_report(e)->double_entries, 1);
    engine_free(e);
}

/* A replica answers clients with a redirect to its primary. Here A's first
 * guess is S2 only after S1 timed out; S2, not promoted, names S1 back. */
static void test_replica_redirects_to_primary(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease servers=2\nnetwork latency=1ms\nduration 10s\n"
                                "link A S1 latency=2s\n"
                                "client A: acquire tries=1; work 1s; release\n");
    const struct trace *tr = engine_trace(e);
    int S1 = node_of(tr, "S1"), S2 = node_of(tr, "S2");
    /* 0s -> S1 takes 2s; at 1s A times out and asks S2. */
    assert_int_equal(must_note(e, "A", NOTE_EXACT, N_TIMEOUT, 1)->t, 1 * S);
    /* 1.001s S2 answers KV_REDIRECT naming S1; A follows at 1.002s. */
    const struct trace_event *m = must(e, TRACE_MSG_RECV, "A", 1);
    assert_int_equal(m->t, 1 * S + 2 * MS);
    assert_int_equal(m->peer, S2);
    assert_int_equal(m->b, KV_REDIRECT);
    const struct trace_event *rd = must_note(e, "A", NOTE_EXACT, N_REDIRECT, 1);
    assert_int_equal(rd->a, S1);
    assert_int_equal(rd->b, S1);
    /* 2s: the first SET lands and is granted (its late reply is ignored);
     * 3.002s: the re-sent SET, with the same value, is denied by that very
     * key; the attempt fails although the key is A's. */
    assert_int_equal(must(e, TRACE_SRV_GRANT, "S1", 1)->t, 2 * S);
    assert_int_equal(must(e, TRACE_SRV_DENY, "S1", 1)->t, 3 * S + 2 * MS);
    assert_null(find(e, TRACE_ACQUIRED, "A", 1));
    engine_free(e);
}

/* Options: the replication keys are the store's, with full-sentence errors;
 * stores run as independent masters (Redlock) do not take them. */
static void test_replication_options(void **state) {
    (void)state;
    struct scn_error err;
    assert_int_equal(build_text("lock lease servers=2 wait=x\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_int_equal(err.pos.col, 22); /* the key's column */
    assert_string_equal(err.msg, "wait 'x' is not a number of replicas from 0 to 14");
    assert_int_equal(build_text("lock setnx servers=2 wait-timeout=0s\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_non_null(strstr(err.msg, "wait-timeout '0s' is not a positive duration"));
    assert_int_equal(build_text("lock lease repl-lag=-1s\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_int_equal(build_text("lock lease servers=15 min-replicas-to-write=14 min-replicas-max-lag=1s "
                                "repl-lag=0s\nclient A: acquire\n",
                                &err),
                     0);

    struct kv_config c;
    char msg[256];
    kv_config_default(&c, "lease", KV_OPT_TTL);
    assert_int_equal(c.replication, KV_REPL_OFF); /* off until the algorithm asks */
    kv_config_replicated(&c);
    assert_int_equal(c.replication, KV_REPL_ASYNC);
    assert_int_equal(kv_option(&c, "wait", "2", msg, sizeof msg), 0);
    assert_int_equal(c.wait_replicas, 2);
    kv_config_default(&c, "independent-masters", KV_OPT_TTL);
    assert_int_equal(c.replication, KV_REPL_OFF);
    assert_int_equal(kv_option(&c, "wait", "1", msg, sizeof msg), LSIM_EUNKNOWN_OPTION);
    assert_string_equal(msg, "unknown option 'wait' for independent-masters; expected ttl");
    engine_free(NULL);
}

/* Two operators promote S2 and S3 while each is cut off: two primaries in
 * epoch 2. On the heal the lower number wins and everyone follows S2. */
static void test_two_promotions_converge(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease servers=3\nnetwork latency=1ms\nduration 10s\n"
                                "client A @5s: acquire; work 1s; release\n"
                                "@1s partition S1 | S2 | S3\n@2s promote S2\n@2s promote S3\n@4s heal\n");
    int S2 = node_of(engine_trace(e), "S2");
    assert_int_equal(must_note(e, "S2", NOTE_EXACT, N_PROMOTED, 1)->a, 2);
    assert_int_equal(must_note(e, "S3", NOTE_EXACT, N_PROMOTED, 1)->a, 2);
    /* 4.001s: S1 (epoch 1) and S3 (epoch 2, higher number) step down to S2. */
    const struct trace_event *s1 = must_note(e, "S1", NOTE_EXACT, N_STEP_DOWN, 1);
    assert_int_equal(s1->t, 4 * S + 1 * MS);
    assert_int_equal(s1->b, S2);
    const struct trace_event *s3 = must_note(
            e, "S3", NOTE_EXACT, "steps down to replica: another primary of the same epoch has a lower number", 1);
    assert_int_equal(s3->t, 4 * S + 1 * MS);
    assert_int_equal(s3->b, S2);
    assert_null(note(e, "S2", NOTE_EXACT, N_STEP_DOWN, 1));
    /* 5s: A asks S1, is redirected (5.002s) and S2 grants (5.003s); both
     * replicas copy the grant at 5.004s. */
    assert_int_equal(must_note(e, "A", NOTE_EXACT, N_REDIRECT, 1)->t, 5 * S + 2 * MS);
    assert_int_equal(must(e, TRACE_SRV_GRANT, "S2", 1)->t, 5 * S + 3 * MS);
    assert_null(find(e, TRACE_SRV_GRANT, "S1", 1));
    assert_null(find(e, TRACE_SRV_GRANT, "S3", 1));
    assert_int_equal(must_note(e, "S1", NOTE_EXACT, N_COPY_GRANT, 1)->t, 5 * S + 4 * MS);
    assert_int_equal(must_note(e, "S3", NOTE_EXACT, N_COPY_GRANT, 1)->t, 5 * S + 4 * MS);
    engine_free(e);
}

/* Promoting the primary, or a store with one server, changes nothing. */
static void test_promote_noops(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease\nclient A: acquire; work 1s; release\n@500ms promote S1\n");
    assert_non_null(must_note(e, "S1", NOTE_EXACT, "promote ignored: this store runs without replicas", 1));
    assert_int_equal(engine_report(e)->acquires, 1);
    engine_free(e);
    e = run_text("lock lease servers=3\nclient A: acquire; work 1s; release\n@500ms promote S1\n");
    const struct trace_event *n = must_note(e, "S1", NOTE_EXACT, "promote: already the primary", 1);
    assert_int_equal(n->a, 1); /* still epoch 1 */
    assert_null(note(e, NULL, NOTE_EXACT, N_STEP_DOWN, 1));
    engine_free(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_async_failover_regrants_same_token),
            cmocka_unit_test(test_replicated_grant_survives_failover),
            cmocka_unit_test(test_wait_delays_acquired),
            cmocka_unit_test(test_wait_timeout_keeps_the_write),
            cmocka_unit_test(test_min_replicas_refuses_without_replicas),
            cmocka_unit_test(test_min_replicas_max_lag_boundary),
            cmocka_unit_test(test_split_brain_two_primaries),
            cmocka_unit_test(test_primary_restarts_empty_and_replicas_copy_it),
            cmocka_unit_test(test_replica_redirects_to_primary),
            cmocka_unit_test(test_replication_options),
            cmocka_unit_test(test_two_promotions_converge),
            cmocka_unit_test(test_promote_noops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
