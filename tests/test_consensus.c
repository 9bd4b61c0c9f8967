/* Tests of the consensus lock (sim/algo/algo_consensus.c, consensus_log.c and
 * consensus_server.c), narrated: each runs a scenario on Raft-replicated lock
 * servers and walks its trace, asserting the
 * virtual times, revisions and verdicts that a user relies on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "step_fixture.h"

#include "engine.h"

#undef S /* step_fixture.h's S(x); here S is the unit */
#define S SIM_NS_PER_S
#define MS SIM_NS_PER_MS

static int is_server(const struct engine *e, int node) {
    const struct trace *tr = engine_trace(e);
    return node >= 0 && node < tr->nnodes && tr->nodes[node].kind == TRACE_NODE_SERVER;
}

/* A leader is elected and grants with revision = log index. */
static void test_elected_leader_grants_log_index(void **state) {
    (void)state;
    struct engine *e = run_text("lock consensus first-candidate=S1\n"
                                "network latency=1ms\nduration 10s\n"
                                "client A @2s: acquire; work 1s; release\n"
                                "client B @4s: acquire; release\n");
    int A = node_of(engine_trace(e), "A"), B = node_of(engine_trace(e), "B");
    /* t=1s: S1's election timeout (exactly T with first-candidate) ends: it
     * campaigns for term 1. */
    const struct trace_event *c = note(e, "S1", NOTE_PREFIX, "starts an election, term 1", 1);
    assert_non_null(c);
    assert_int_equal(c->t, 1 * S);
    /* t=1.002s: one vote back (1ms each way) makes 2 of 3: a majority. */
    const struct trace_event *l = note(e, "S1", NOTE_PREFIX, "elected leader, term 1", 1);
    assert_non_null(l);
    assert_int_equal(l->t, 1 * S + 2 * MS);
    assert_int_equal(l->a, 1); /* term */
    assert_int_equal(l->b, 2); /* votes */
    assert_null(note(e, "S2", NOTE_PREFIX, "elected leader", 1));
    assert_null(note(e, "S3", NOTE_PREFIX, "elected leader", 1));
    /* Log: 1 = the leader's no-op. A's request arrives at 2.001s as entry 2,
     * reaches S2 and S3 at 2.002s, their acks at 2.003s commit it: S1
     * applies it and records the grant with revision 2 and a lease of 10s
     * by its own clock. */
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 1);
    assert_int_equal(g->t, 2 * S + 3 * MS);
    assert_int_equal(g->peer, A);
    assert_int_equal(g->token, 2);
    assert_int_equal(g->a, 10 * S);
    assert_int_equal(g->b, 12 * S + 3 * MS);
    /* Only the leader records it, once. */
    assert_int_equal(count(e, TRACE_SRV_GRANT, "S2", -3, 0, SIM_TIME_MAX) +
                             count(e, TRACE_SRV_GRANT, "S3", -3, 0, SIM_TIME_MAX),
                     0);
    /* t=2.004s: the answer reaches A: revision 2 is its fencing token. A
     * counts its lease from when it sent the request (Chubby's conservative
     * client lease): 10s less the 4ms round trip. */
    const struct trace_event *a = must(e, TRACE_ACQUIRED, "A", 1);
    assert_int_equal(a->t, 2 * S + 4 * MS);
    assert_int_equal(a->token, 2);
    assert_int_equal(a->a, 10 * S - 4 * MS);
    /* t=3.004s A releases: entry 3 is committed at 3.007s, and the lock is deleted. */
    const struct trace_event *d = must(e, TRACE_SRV_DELETE, "S1", 1);
    assert_int_equal(d->t, 3 * S + 7 * MS);
    assert_int_equal(d->peer, A);
    assert_int_equal(d->b, 0); /* its own lock */
    /* t=4s B acquires: entry 4, so revision 4. */
    const struct trace_event *b = must(e, TRACE_ACQUIRED, "B", 1);
    assert_int_equal(b->t, 4 * S + 4 * MS);
    assert_int_equal(b->token, 4);
    assert_int_equal(must(e, TRACE_SRV_GRANT, "S1", 2)->peer, B);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
}

/* With token=none the revision still orders grants on the server, but the
 * client gets no token to attach. */
static void test_token_none(void **state) {
    (void)state;
    struct engine *e = run_text("lock consensus first-candidate=S1 token=none\n"
                                "network latency=1ms\nduration 5s\n"
                                "client A @2s: acquire; release\n");
    assert_int_equal(must(e, TRACE_SRV_GRANT, "S1", 1)->token, 2);
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->token, 0);
    engine_free(e);
}

/* The minority side of a partition elects no leader and grants nothing. */
static void test_minority_refuses_grant(void **state) {
    (void)state;
    struct engine *e = run_text("lock consensus first-candidate=S1\n"
                                "resource stock=2\nnetwork latency=1ms\nduration 30s\n"
                                "client A @3s: acquire timeout=10s; read; write; release\n"
                                "client B @3s: acquire timeout=10s; read; write; release\n"
                                "@0s partition S1 B | S2 S3 A R\n");
    /* t=1s: S1 campaigns first, but its vote requests are dropped: one vote
     * of three is not a majority, in term 1 or any later one. */
    assert_int_equal(note(e, "S1", NOTE_PREFIX, "starts an election, term 1", 1)->t, 1 * S);
    assert_null(note(e, "S1", NOTE_PREFIX, "elected leader", 1));
    assert_non_null(find(e, TRACE_MSG_DROP, "S2", 1));
    /* S2 and S3 are two of three: one of them is elected. */
    const struct trace_event *l = note(e, NULL, NOTE_PREFIX, "elected leader", 1);
    assert_non_null(l);
    assert_true(l->node == node_of(engine_trace(e), "S2") || l->node == node_of(engine_trace(e), "S3"));
    /* S1 records no grant; B is never told it holds the lock, and gives up. */
    assert_null(find(e, TRACE_SRV_GRANT, "S1", 1));
    assert_null(find(e, TRACE_ACQUIRED, "B", 1));
    assert_non_null(find(e, TRACE_ACQUIRE_FAILED, "B", 1));
    assert_non_null(note(e, "B", NOTE_PREFIX, "no leader answered", 1));
    /* A, on the majority side, gets the lock from the majority's leader. */
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, NULL, 1);
    assert_int_equal(g->node, l->node);
    assert_int_equal(g->peer, node_of(engine_trace(e), "A"));
    assert_non_null(find(e, TRACE_ACQUIRED, "A", 1));
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r->acquires, 1);
    assert_int_equal(r->failed_acquires, 1);
    assert_int_equal(r->double_entries, 0);
    engine_free(e);
}

/* A leader cut off with a client keeps appending but cannot commit: it
 * never grants, steps down after an election timeout, and the majority
 * elects a new leader that grants the other client. */
static void test_partitioned_leader_cannot_grant(void **state) {
    (void)state;
    static const char *text = "lock consensus servers=5 first-candidate=S1 check-quorum=%s\n"
                              "resource stock=2\nnetwork latency=1ms\nduration 30s\n"
                              "client A @3500ms: acquire timeout=10s; read; write; release\n"
                              "client B @5s: acquire timeout=15s; read; write; release\n"
                              "@3s partition S1 A | S2 S3 S4 S5 B R\n";
    char buf[512];
    snprintf(buf, sizeof buf, text, "on");
    struct engine *e = run_text(buf);
    /* t=1.002s S1 leads term 1 (two votes back make 3 of 5). */
    assert_int_equal(note(e, "S1", NOTE_PREFIX, "elected leader, term 1", 1)->t, 1 * S + 2 * MS);
    /* t=3.5s A asks S1, which still believes it leads: it appends the request,
     * but no follower receives it, so it never commits and A hears nothing. */
    assert_null(find(e, TRACE_SRV_GRANT, "S1", 1));
    assert_null(find(e, TRACE_ACQUIRED, "A", 1));
    assert_non_null(find(e, TRACE_ACQUIRE_FAILED, "A", 1));
    /* Check-quorum: S1 checks every election timeout (1s) from 1.002s; at
     * 4.002s it has heard no follower since 3.002s and steps down. */
    const struct trace_event *down = note(e, "S1", NOTE_PREFIX, "steps down: no word from a majority", 1);
    assert_non_null(down);
    assert_int_equal(down->t, 4 * S + 2 * MS);
    /* The four on the other side elect a leader of term 2 after their
     * randomized timeouts (1s..2s after S1's last heartbeat at 2.903s). */
    const struct trace_event *l = note(e, NULL, NOTE_PREFIX, "elected leader, term 2", 1);
    assert_non_null(l);
    assert_int_not_equal(l->node, node_of(engine_trace(e), "S1"));
    assert_true(l->t > 3 * S + 900 * MS && l->t < 5 * S);
    /* It grants B, with a revision above everything committed before. */
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, NULL, 1);
    assert_int_equal(g->node, l->node);
    assert_int_equal(g->peer, node_of(engine_trace(e), "B"));
    assert_true(g->token >= 3);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(engine_report(e)->acquires, 1);
    engine_free(e);

    /* Without check-quorum S1 never notices it lost the majority, and still
     * never grants: it cannot commit. */
    snprintf(buf, sizeof buf, text, "off");
    e = run_text(buf);
    assert_null(note(e, "S1", NOTE_PREFIX, "steps down", 1));
    assert_null(find(e, TRACE_SRV_GRANT, "S1", 1));
    assert_null(find(e, TRACE_ACQUIRED, "A", 1));
    assert_non_null(find(e, TRACE_ACQUIRED, "B", 1));
    engine_free(e);
}

/* The deposed leader's uncommitted entry is overwritten when it rejoins:
 * even once it leads again, A's request it alone stored never takes effect. */
static void test_deposed_leader_entry_overwritten(void **state) {
    (void)state;
    struct engine *e = run_text("lock consensus first-candidate=S1\n"
                                "network latency=1ms\nduration 30s\n"
                                "client A @3500ms: acquire tries=1; release\n"
                                "client B @16s: acquire tries=1; release\n"
                                "@3s partition S1 A | S2 S3 B R\n"
                                "@10s heal\n@15s promote S1\n");
    /* t=3.5s S1, cut off, appends A's request as entry 2 (term 1) and steps
     * down at 4.002s; A gets no answer and gives up. */
    assert_int_equal(note(e, "S1", NOTE_PREFIX, "steps down: no word from a majority", 1)->t, 4 * S + 2 * MS);
    assert_null(find(e, TRACE_ACQUIRED, "A", 1));
    /* The majority's leader (term 2) puts its no-op at index 2. After the
     * heal S1 takes the majority's log; at 15s the operator has it campaign
     * (Raft's leadership transfer): its log is now up to date, so it wins. */
    const struct trace_event *l = note(e, "S1", NOTE_PREFIX, "elected leader", 2);
    assert_non_null(l);
    assert_int_equal(l->t, 15 * S + 2 * MS);
    /* t=16s B asks S1: free, so granted. Every entry before B's is a
     * leader's no-op (one per election), and A's entry 2 is gone. */
    int elections = 0;
    while (note(e, NULL, NOTE_PREFIX, "elected leader", elections + 1)) elections++;
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 1);
    assert_int_equal(g->t, 16 * S + 3 * MS);
    assert_int_equal(g->peer, node_of(engine_trace(e), "B"));
    assert_int_equal(g->token, (uint64_t)elections + 1);
    assert_int_equal(count(e, TRACE_SRV_GRANT, NULL, -3, 0, SIM_TIME_MAX), 1);
    engine_free(e);
}

/* A committed grant survives the leader's crash: the new leader knows the
 * holder, keeps its lease and denies a second client. */
static void test_grant_survives_leader_crash(void **state) {
    (void)state;
    struct engine *e = run_text("lock consensus first-candidate=S1\n"
                                "resource stock=5\nnetwork latency=1ms\nduration 30s\n"
                                "client A @2s: acquire; read; work 10s; write; release\n"
                                "client B @8s: acquire retry=1s; read; write; work 3s; release\n"
                                "@5s crash S1\n@6s restart S1\n");
    int A = node_of(engine_trace(e), "A"), B = node_of(engine_trace(e), "B");
    /* t=2.003s S1 commits A's grant, revision 2, on S1 and S2 (and S3). */
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 1);
    assert_int_equal(g->t, 2 * S + 3 * MS);
    assert_int_equal(g->token, 2);
    /* t=5s the leader crashes. S2 and S3 elect a new leader for term 2. */
    assert_int_equal(must(e, TRACE_CRASH, "S1", 1)->t, 5 * S);
    const struct trace_event *l = note(e, NULL, NOTE_PREFIX, "elected leader, term 2", 1);
    assert_non_null(l);
    assert_true(l->node == node_of(engine_trace(e), "S2") || l->node == node_of(engine_trace(e), "S3"));
    assert_true(l->t > 5 * S && l->t < 8 * S);
    /* t=6s S1 restarts with its term, vote, log and lock state, as a follower. */
    assert_int_equal(note(e, "S1", NOTE_PREFIX, "restarts with its term, vote, log and lock state", 1)->t, 6 * S);
    assert_null(note(e, "S1", NOTE_PREFIX, "elected leader", 2));
    /* The new leader had A's grant in its log: it renews A's lease on A's
     * keep-alives (every ttl/3 = 3.333333333s from 2.004s; the one at
     * 5.337s found S1 down and no leader yet) ... */
    const struct trace_event *rn = must(e, TRACE_SRV_RENEW, NULL, 1);
    assert_int_equal(rn->node, l->node);
    assert_int_equal(rn->peer, A);
    assert_true(rn->t > l->t);
    /* ... and denies B, naming A as the holder. */
    const struct trace_event *d = must(e, TRACE_SRV_DENY, NULL, 1);
    assert_int_equal(d->node, l->node);
    assert_int_equal(d->peer, B);
    assert_int_equal(d->a, A);
    assert_true(d->t >= 8 * S);
    /* A releases at 12.008s; only then is B granted, with a higher revision. */
    const struct trace_event *x = must(e, TRACE_CS_EXIT, "A", 1);
    assert_int_equal(x->t, 12 * S + 8 * MS);
    const struct trace_event *b = must(e, TRACE_ACQUIRED, "B", 1);
    assert_true(b->t > x->t);
    assert_true(b->token > 2);
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r->double_entries, 0);
    assert_int_equal(r->lost_updates, 0);
    assert_int_equal(r->final_stock, 3);
    engine_free(e);
}

static const char *PAUSE_TIMELINE = "lock consensus ttl=10s first-candidate=S1\n"
                                    "resource stock=1 fencing=%s\nnetwork latency=1ms\nduration 40s\n"
                                    "client A @2s: acquire; read; work 5s; write; release\n"
                                    "client B @13s: acquire retry=1s; read; write; work 5s; release\n"
                                    "@3s pause A 20s\n";

static struct engine *pause_run(const char *fencing) {
    char text[1024];
    snprintf(text, sizeof text, PAUSE_TIMELINE, fencing);
    return run_text(text);
}

/* The lease expires on the leader after the TTL without keep-alives while
 * the client is paused; the next grant's revision is higher. */
static void test_lease_expires_while_paused(void **state) {
    (void)state;
    struct engine *e = pause_run("off");
    int A = node_of(engine_trace(e), "A"), B = node_of(engine_trace(e), "B");
    /* t=2.003s grant, revision 2; the leader's deadline is 12.003s by its
     * monotonic clock. A pauses at 3s, before its first keep-alive (due at
     * 2.004s + 3.333333333s): no renewal ever reaches the leader. */
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 1);
    assert_int_equal(g->token, 2);
    assert_int_equal(g->b, 12 * S + 3 * MS);
    assert_int_equal(must(e, TRACE_PAUSE, "A", 1)->t, 3 * S);
    for (int i = 1; find(e, TRACE_SRV_RENEW, NULL, i); i++)
        assert_int_not_equal(find(e, TRACE_SRV_RENEW, NULL, i)->peer, A);
    /* The lease is due at 12.003s, but S1's revoke loop runs every 500ms
     * from its start (etcd's lessor runLoop): at 12.5s it finds the lease
     * due and proposes the revoke (entry 3); committed and applied at
     * 12.502s: A's lease is gone, and only the leader says so. */
    const struct trace_event *x = must(e, TRACE_SRV_EXPIRE, "S1", 1);
    assert_int_equal(x->t, 12 * S + 502 * MS);
    assert_int_equal(x->peer, A);
    assert_int_equal(count(e, TRACE_SRV_EXPIRE, NULL, -3, 0, SIM_TIME_MAX), 1);
    /* t=13s B acquires: entry 4, revision 4 > 2. */
    const struct trace_event *b = must(e, TRACE_ACQUIRED, "B", 1);
    assert_int_equal(b->t, 13 * S + 4 * MS);
    assert_int_equal(b->token, 4);
    assert_int_equal(must(e, TRACE_SRV_GRANT, "S1", 2)->peer, B);
    /* A is still "in" its critical section, paused: consensus cannot help. */
    const struct trace_event *de = must(e, TRACE_DOUBLE_ENTRY_BEGIN, NULL, 1);
    assert_int_equal(de->t, 13 * S + 4 * MS);
    /* t=23s A resumes and writes at once (its work ended during the pause);
     * an unfenced resource accepts revision 2 after revision 4. */
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w->t, 23 * S + 1 * MS);
    assert_int_equal(w->peer, A);
    assert_int_equal(w->token, 2);
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(r->stale_accepted, 1);
    assert_int_equal(r->lost_updates, 1);
    engine_free(e);
}

/* The revision rejects the stale write on a fenced resource. */
/* Expiry at the exact tick, as etcd has it: a lease is expired once its
 * remaining time is <= 0 (server/lease/lessor.go: Lease.expired() is
 * `l.Remaining() <= 0`, and the lessor revokes an item unless
 * `now.Before(item.time)`), in Go's nanoseconds; Renew on an expired lease
 * waits for the revoke and fails. ZooKeeper's ExpiryQueue agrees at the
 * tick (poll() returns nothing while `now < nextExpirationTime`). Here the
 * leader's deadline is 12s (granted at 2s, TTL 10s, no latency) and A,
 * paused from its grant, sends its overdue keep-alive the instant it
 * resumes: 1ns before the deadline it renews; at the deadline and 1ns
 * after, the lease is already revoked. 12s is a round of the leader's
 * revoke loop (every 500ms from 0), so the revoke is at 12s with the loop
 * as without it (expiry-check=off). */
static void test_lease_expiry_at_the_tick(void **state) {
    (void)state;
    const sim_ns pauses[3] = {10 * S - 1, 10 * S, 10 * S + 1};
    for (int k = 0; k < 6; k++) {
        int i = k % 3;
        char text[512];
        snprintf(text, sizeof text,
                 "lock consensus ttl=10s%s\nnetwork latency=0ms\nduration 40s\n"
                 "client A: acquire; work 5s; release\n"
                 "on A.after-acquire pause A %lldns\n",
                 k >= 3 ? " expiry-check=off" : "", (long long)pauses[i]);
        struct engine *e = run_text(text);
        /* t=2s: elected, the leader grants; the lease runs to 12s. */
        const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 1);
        assert_int_equal(g->t, 2 * S);
        assert_int_equal(g->b, 12 * S);
        const struct trace_event *x = find(e, TRACE_SRV_EXPIRE, "S1", 1);
        if (i == 0) {
            /* 11.999999999s: the keep-alive arrives with 1ns left: renewed. */
            assert_null(x);
            assert_non_null(find(e, TRACE_SRV_RENEW, "S1", 1));
        } else {
            /* 12s: Remaining() is 0, the lease is expired and revoked. */
            assert_non_null(x);
            assert_int_equal(x->t, 12 * S);
            assert_null(find(e, TRACE_SRV_RENEW, "S1", 1));
        }
        engine_free(e);
    }
}

/* The revoke loop at the boundary (etcd's lessor runLoop: revokeExpiredLeases
 * every 500ms). TTL 10.2s from the grant at 2s: due at 12.2s, between the
 * loop's rounds at 12s and 12.5s. A keep-alive 1ns before the deadline
 * renews; at the deadline and 1ns after it is refused at once (Renew of an
 * expired lease fails), though the lease is revoked only at the next round,
 * 12.5s. With expiry-check=off the revoke is at the deadline itself. */
static void test_revoke_loop_at_the_tick(void **state) {
    (void)state;
    const sim_ns pauses[3] = {10200 * MS - 1, 10200 * MS, 10200 * MS + 1};
    for (int off = 0; off < 2; off++) {
        for (int i = 0; i < 3; i++) {
            char text[512];
            snprintf(text, sizeof text,
                     "lock consensus ttl=10200ms%s\nnetwork latency=0ms\nduration 40s\n"
                     "client A: acquire; work 5s; release\n"
                     "on A.after-acquire pause A %lldns\n",
                     off ? " expiry-check=off" : "", (long long)pauses[i]);
            struct engine *e = run_text(text);
            const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 1);
            assert_int_equal(g->t, 2 * S);
            assert_int_equal(g->b, 12 * S + 200 * MS);
            const struct trace_event *x = find(e, TRACE_SRV_EXPIRE, "S1", 1);
            const struct trace_event *n = note(e, "A", NOTE_PREFIX, "keep-alive refused", 1);
            if (i == 0) {
                assert_null(x);
                assert_null(n);
                assert_int_equal(must(e, TRACE_SRV_RENEW, "S1", 1)->t, 12 * S + 200 * MS - 1);
            } else {
                assert_null(find(e, TRACE_SRV_RENEW, "S1", 1));
                assert_non_null(x);
                assert_int_equal(x->t, off ? 12 * S + 200 * MS : 12 * S + 500 * MS);
                /* A learns at once that its lease is gone. */
                assert_non_null(n);
                assert_int_equal(n->t, 2 * S + pauses[i]);
            }
            engine_free(e);
        }
    }
}

static void test_revision_fences_stale_write(void **state) {
    (void)state;
    struct engine *e = pause_run("on");
    int A = node_of(engine_trace(e), "A"), B = node_of(engine_trace(e), "B");
    /* B writes first with revision 4: accepted, the resource records 4. */
    const struct trace_event *w1 = must(e, TRACE_WRITE, "R", 1);
    assert_int_equal(w1->t, 13 * S + 7 * MS);
    assert_int_equal(w1->peer, B);
    assert_int_equal(w1->token, 4);
    assert_int_equal(w1->b, TRACE_WRITE_ACCEPTED);
    /* A resumes at 23s and writes with revision 2: REJECTED (2 < 4). */
    const struct trace_event *w2 = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w2->t, 23 * S + 1 * MS);
    assert_int_equal(w2->peer, A);
    assert_int_equal(w2->token, 2);
    assert_int_equal(w2->b, TRACE_WRITE_REJECTED_STALE);
    /* A's release finds the lock no longer its own: nothing is deleted. */
    const struct trace_event *k = must(e, TRACE_SRV_KEEP, "S1", 1);
    assert_int_equal(k->peer, A);
    assert_int_equal(count(e, TRACE_SRV_DELETE, NULL, -3, 0, SIM_TIME_MAX), 1); /* B's own release */
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r->double_entries, 1); /* the lock still let both in */
    assert_int_equal(r->stale_rejected, 1);
    assert_int_equal(r->stale_accepted, 0);
    assert_int_equal(r->lost_updates, 0);
    assert_int_equal(r->final_stock, 0);
    engine_free(e);
}

/* Keep-alives every ttl/3 hold a lease far beyond its TTL. */
static void test_keepalives_hold_lease(void **state) {
    (void)state;
    struct engine *e = run_text("lock consensus ttl=3s first-candidate=S1\n"
                                "network latency=1ms\nduration 30s\n"
                                "client A @2s: acquire; work 10s; release\n"
                                "client B @6s: acquire retry=1s; release\n");
    int A = node_of(engine_trace(e), "A");
    /* A is granted at 2.004s; its keep-alives leave every 1s and each is
     * committed 3ms later: the first renewal is at 3.007s. */
    const struct trace_event *r1 = must(e, TRACE_SRV_RENEW, "S1", 1);
    assert_int_equal(r1->t, 3 * S + 7 * MS);
    assert_int_equal(r1->peer, A);
    assert_int_equal(r1->a, 3 * S);
    assert_int_equal(must(e, TRACE_SRV_RENEW, "S1", 2)->t, 4 * S + 7 * MS);
    /* Never expired; B is denied until A releases at 12.004s. */
    assert_null(find(e, TRACE_SRV_EXPIRE, NULL, 1));
    assert_non_null(find(e, TRACE_SRV_DENY, "S1", 1));
    assert_true(must(e, TRACE_ACQUIRED, "B", 1)->t > 12 * S + 4 * MS);
    assert_int_equal(engine_report(e)->double_entries, 0);
    engine_free(e);
}

/* A crashed holder stops its keep-alives; the leader expires its lease
 * after the TTL and the waiting client gets the lock: nobody is stuck. */
static void test_crashed_holder_expires(void **state) {
    (void)state;
    struct engine *e = run_text("lock consensus ttl=5s first-candidate=S1\n"
                                "network latency=1ms\nduration 30s\n"
                                "client A @2s: acquire; work 20s; release\n"
                                "client B @3s: acquire retry=1s; release\n"
                                "@4s crash A\n");
    /* A's last renewal was committed at 3.673666666s (keep-alive at
     * 2.004s + 1.666666666s, plus 3ms): due at 8.673666666s. The revoke
     * loop's next round is at 9s; the revoke commits 2ms later. */
    const struct trace_event *r = must(e, TRACE_SRV_RENEW, "S1", 1);
    assert_int_equal(r->t, 3 * S + 673666666);
    const struct trace_event *x = must(e, TRACE_SRV_EXPIRE, "S1", 1);
    assert_int_equal(x->t, 9 * S + 2 * MS);
    assert_true(x->t - 2 * MS - (r->t + 5 * S) < 500 * MS);
    assert_true(must(e, TRACE_ACQUIRED, "B", 1)->t > x->t);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(engine_report(e)->stuck, 0);
    engine_free(e);
}

/* The first round of a revoke loop that runs every 500ms from a server's
 * start (at 0) at or after t. */
static sim_ns next_beat(sim_ns t) { return (t + 500 * MS - 1) / (500 * MS) * (500 * MS); }

/* A new leader refreshes every lease when it applies the no-op of its term
 * (etcd's lessor Promote(ElectionTimeout()) from applyEntryNormal): the
 * lease of a holder that went silent under the old leader gets its whole
 * TTL again plus the election timeout, so it expires later than the old
 * leader's deadline, never earlier, and not never. */
static void test_new_leader_restarts_lease(void **state) {
    (void)state;
    static const char *opts[2] = {"", " expiry-check=off promote-extend=0s"};
    for (int i = 0; i < 2; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "lock consensus ttl=10s first-candidate=S1%s\n"
                 "network latency=1ms\nduration 40s\n"
                 "client A @2s: acquire; work 20s; release\n"
                 "client B @3s: acquire retry=1s; release\n"
                 "@3s crash A\n@4s crash S1\n",
                 opts[i]);
        struct engine *e = run_text(text);
        /* S1's deadline for A was 12.003s; S1 is gone at 4s. */
        assert_int_equal(must(e, TRACE_SRV_GRANT, "S1", 1)->b, 12 * S + 3 * MS);
        const struct trace_event *l = note(e, NULL, NOTE_PREFIX, "elected leader, term 2", 1);
        assert_non_null(l);
        /* Its no-op commits one round trip (2ms) after the election: the
         * lease runs 10s + 1s from then. The revoke loop's next round finds
         * it due, and the revoke takes 2ms to commit. Without the loop and
         * the extension: exactly 10s after the promotion, plus the commit. */
        sim_ns promoted = l->t + 2 * MS;
        const struct trace_event *x = must(e, TRACE_SRV_EXPIRE, NULL, 1);
        assert_int_equal(x->node, l->node);
        assert_int_equal(x->peer, node_of(engine_trace(e), "A"));
        if (i == 0) assert_int_equal(x->t, next_beat(promoted + 11 * S) + 2 * MS);
        else assert_int_equal(x->t, promoted + 10 * S + 2 * MS);
        assert_true(x->t > 12 * S + 3 * MS);
        assert_true(must(e, TRACE_ACQUIRED, "B", 1)->t > x->t);
        assert_int_equal(engine_report(e)->stuck, 0);
        engine_free(e);
    }
}

/* A follower cut off long enough for the leader to compact its log past
 * what it holds catches up by snapshot, and is then part of the majority
 * that decides the lock. */
static void test_snapshot_catches_up_follower(void **state) {
    (void)state;
    /* B's acquire every 100ms while A holds the lock is one log entry each
     * (keep-alives are not: they renew in the leader's lessor): more than
     * the 256-entry ring while S3 is away. */
    struct engine *e = run_text("lock consensus ttl=300ms request-timeout=50ms first-candidate=S1\n"
                                "network latency=1ms\nduration 50s\n"
                                "client A @2s: acquire; work 40s; release\n"
                                "client B @3s: acquire retry=100ms; release\n"
                                "@3s partition S3 | S1 S2 A B R\n"
                                "@35s heal\n"
                                "@37s crash S2\n");
    /* S3 rejoins with a higher term (it kept campaigning); the leader steps
     * down and a leader with the whole log is elected again. */
    const struct trace_event *h = must(e, TRACE_HEAL, NULL, 1);
    const struct trace_event *snap = note(e, "S3", NOTE_PREFIX, "installs the leader's snapshot", 1);
    assert_non_null(snap);
    assert_true(snap->t > h->t && snap->t < 37 * S);
    /* S3 left at index 12 or so; the leader's ring starts far beyond it. */
    assert_true(snap->a > 200);
    /* From 37s S2 is down: every commit needs S3. A's lease is still renewed,
     * B is denied, and B gets the lock only after A's release at 42s. */
    const struct trace_event *last_renew = NULL;
    for (int i = 1; find(e, TRACE_SRV_RENEW, NULL, i); i++) last_renew = find(e, TRACE_SRV_RENEW, NULL, i);
    assert_non_null(last_renew);
    assert_true(last_renew->t > 41 * S);
    assert_null(find(e, TRACE_SRV_EXPIRE, NULL, 1));
    int denied_after_crash = count(e, TRACE_SRV_DENY, NULL, -3, 38 * S, INT64_MAX);
    assert_true(denied_after_crash > 0);
    const struct trace_event *x = must(e, TRACE_CS_EXIT, "A", 1);
    const struct trace_event *b = must(e, TRACE_ACQUIRED, "B", 1);
    assert_true(b->t > x->t);
    assert_true(b->token > (uint64_t)snap->a);
    assert_int_equal(engine_report(e)->double_entries, 0);
    engine_free(e);
}

/* A holder cut off from every server keeps believing in its lease until a
 * keep-alive gets through and is refused: then it learns it lost the lock. */
static void test_cut_off_holder_learns_lease_lost(void **state) {
    (void)state;
    struct engine *e = run_text("lock consensus ttl=3s first-candidate=S1\n"
                                "network latency=1ms\nduration 25s\n"
                                "client A @2s: acquire; work 20s; release\n"
                                "client B @6s: acquire retry=500ms; work 1s; release\n"
                                "@3s partition A | S1 S2 S3 B R\n@9s heal\n");
    int A = node_of(engine_trace(e), "A");
    /* Granted at 2.003s; A's keep-alives from 3.004s on are all dropped: the
     * lease is due 3s after the grant, at 5.003s; the revoke loop's round at
     * 5.5s revokes it, committed at 5.502s. */
    const struct trace_event *x = must(e, TRACE_SRV_EXPIRE, "S1", 1);
    assert_int_equal(x->t, 5 * S + 502 * MS);
    assert_int_equal(x->peer, A);
    /* B gets the lock at 6.004s; A, on the other side, still believes. */
    const struct trace_event *b = must(e, TRACE_ACQUIRED, "B", 1);
    assert_int_equal(b->t, 6 * S + 4 * MS);
    assert_int_equal(b->token, 4);
    assert_int_equal(engine_report(e)->double_entries, 1);
    assert_int_equal(engine_report(e)->double_entry_ns, 1 * S);
    /* After the heal a keep-alive reaches the leader, which refuses it: A
     * learns the lease is gone and leaves the critical section (lock_lost),
     * long before its work would have ended; its release has nothing to do. */
    const struct trace_event *n = note(e, "A", NOTE_PREFIX, "keep-alive refused", 1);
    assert_non_null(n);
    assert_true(n->t > 9 * S && n->t < 11 * S);
    const struct trace_event *lost = must(e, TRACE_CS_EXIT, "A", 1);
    assert_int_equal(lost->a, TRACE_EXIT_LOST);
    assert_int_equal(lost->t, n->t);
    assert_null(find(e, TRACE_RELEASE_SENT, "A", 1));
    engine_free(e);
}

/* The client counts its lease from when it sent the request (Chubby's
 * conservative client lease): a grant delayed past the TTL is no grant. */
static void test_late_grant_ignored(void **state) {
    (void)state;
    struct engine *e = run_text("lock consensus first-candidate=S1 request-timeout=20s\n"
                                "network latency=1ms\nduration 30s\n"
                                "link S1 A latency=12s\n"
                                "client A @2s: acquire retry=1s; work 1s; release\n"
                                "client B @13s: acquire retry=1s; work 5s; release\n"
                                "@5s link S1 A latency=1ms\n");
    /* t=2.003s S1 grants A revision 2, but its answer spends 12s on the way.
     * A sends no keep-alive (it does not know it holds the lock): the lease
     * is due at 12.003s, S1's revoke loop expires it at 12.5s (committed
     * 12.502s) and S1 grants B at 13.003s. */
    assert_int_equal(must(e, TRACE_SRV_GRANT, "S1", 1)->token, 2);
    assert_int_equal(must(e, TRACE_SRV_EXPIRE, "S1", 1)->t, 12 * S + 502 * MS);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 13 * S + 4 * MS);
    /* t=14.003s the grant reaches A, 12.003s after A asked: more than the
     * 10s lease. A ignores it rather than join B in the critical section. */
    const struct trace_event *n = note(e, "A", NOTE_PREFIX, "the grant came back after its lease", 1);
    assert_non_null(n);
    assert_int_equal(n->t, 14 * S + 3 * MS);
    assert_int_equal(n->a, 2);
    assert_int_equal(n->b, 10 * S - (12 * S + 3 * MS)); /* validity left: negative */
    /* A gets the lock only after B's release, with a new revision. */
    const struct trace_event *a = must(e, TRACE_ACQUIRED, "A", 1);
    assert_true(a->t > must(e, TRACE_CS_EXIT, "B", 1)->t);
    assert_true(a->token > 4);
    assert_int_equal(engine_report(e)->double_entries, 0);
    engine_free(e);
}

/* Each change of the lock is recorded once, by the leader that applies it,
 * not again by a leader that was away or restarted. */
static void test_records_once(void **state) {
    (void)state;
    /* S1 appends A's request at 2.001s and pauses 0.5ms later; S2 and S3 store
     * it and answer while S1 sleeps. They elect a new leader, which commits
     * the entry, records the grant (revision 2) and answers A's retry. */
    struct engine *e = run_text("lock consensus first-candidate=S1\n"
                                "network latency=1ms\nduration 12s\n"
                                "client A @2s: acquire retry=100ms; work 1s; release\n"
                                "@2001500us pause S1 5s\n");
    const struct trace_event *l = note(e, NULL, NOTE_PREFIX, "elected leader, term 2", 1);
    assert_non_null(l);
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, NULL, 1);
    assert_int_equal(g->node, l->node);
    assert_int_equal(g->token, 2);
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->token, 2);
    /* t=7.0015s S1 resumes and, before it sees the new term, commits entry 2
     * on the answers that waited for it. Those answer messages it sent 5s
     * ago: it applies the entry silently, and records nothing at all. */
    assert_int_equal(must(e, TRACE_RESUME, "S1", 1)->t, 7 * S + 1500 * SIM_NS_PER_US);
    assert_non_null(note(e, "S1", NOTE_PREFIX, "steps down: a newer term exists", 1));
    assert_int_equal(count(e, TRACE_SRV_GRANT, NULL, -3, 0, SIM_TIME_MAX), 1);
    assert_int_equal(count(e, TRACE_SRV_GRANT, "S1", -3, 0, SIM_TIME_MAX) +
                             count(e, TRACE_SRV_DELETE, "S1", -3, 0, SIM_TIME_MAX),
                     0);
    engine_free(e);

    /* A restarted server keeps its lock state and applied index on disk, so
     * when it leads again it does not apply, and record, old entries twice. */
    e = run_text("lock consensus first-candidate=S1\n"
                 "network latency=1ms\nduration 10s\n"
                 "client A @2s: acquire; work 1s; release\n"
                 "@4s crash S1\n@4500ms restart S1\n@4600ms promote S1\n");
    assert_int_equal(note(e, "S1", NOTE_PREFIX, "elected leader, term 2", 1)->t, 4602 * MS);
    assert_int_equal(count(e, TRACE_SRV_GRANT, NULL, -3, 0, SIM_TIME_MAX), 1);
    assert_int_equal(count(e, TRACE_SRV_DELETE, NULL, -3, 0, SIM_TIME_MAX), 1);
    engine_free(e);
}

/* A leader alone keeps appending requests it cannot commit until its log
 * is full; the last slots are kept for the no-op of a later term, so once
 * a majority is back and it is elected again, everything commits. */
static void test_full_log_still_commits(void **state) {
    (void)state;
    struct engine *e = run_text("lock consensus first-candidate=S1 check-quorum=off "
                                "request-timeout=5ms\n"
                                "network latency=1ms\nduration 15s\n"
                                "client A @2500ms: acquire retry=5ms; work 1s; release\n"
                                "@2s crash S2\n@2s crash S3\n@10s crash S1\n"
                                "@11s restart S1\n@11s restart S2\n@11s restart S3\n"
                                "@11001ms promote S1\n");
    /* From 2.5s, every attempt of A appends one entry S1 cannot commit:
     * 248 of them fill the ring, less the reserve (noted once). */
    const struct trace_event *full = note(e, "S1", NOTE_PREFIX, "log full", 1);
    assert_non_null(full);
    assert_int_equal(full->a, 249); /* the no-op of term 1, then 248 requests */
    assert_true(full->t < 10 * S);
    /* t=11.001s S1, whose log is the most complete, is elected for term 2
     * and appends its no-op in a reserved slot; replicating 250 entries to
     * S2 and S3 commits A's first request: revision 2. */
    assert_int_equal(note(e, "S1", NOTE_PREFIX, "elected leader, term 2", 1)->t, 11 * S + 3 * MS);
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, NULL, 1); /* the first grant */
    assert_int_equal(g->node, node_of(engine_trace(e), "S1"));
    assert_true(g->t > 11 * S && g->t < 12 * S);
    assert_int_equal(g->token, 2);
    assert_true(must(e, TRACE_ACQUIRED, "A", 1)->t > g->t);
    engine_free(e);
}

/* One server is a majority of one: it elects itself and commits alone. */
static void test_single_server(void **state) {
    (void)state;
    struct engine *e = run_text("lock consensus servers=1 first-candidate=S1\n"
                                "network latency=1ms\nduration 5s\n"
                                "client A @2s: acquire; release\n");
    assert_int_equal(note(e, "S1", NOTE_PREFIX, "elected leader, term 1", 1)->t, 1 * S);
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 1);
    assert_int_equal(g->t, 2 * S + 1 * MS);
    assert_int_equal(g->token, 2);
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->t, 2 * S + 2 * MS);
    engine_free(e);
}

/* Chaos: partitions, crashes, restarts, pauses of servers and loss, on
 * several seeds. Whatever happens, Raft's election safety holds (at most one
 * leader per term) and the lock service's own record is a sequence: a grant
 * only when nobody holds the lock, revisions strictly increasing, and every
 * client's ACQUIRED revisions increasing too. (Mutual exclusion itself is not
 * an invariant: a client cut off from the leader keeps believing in a lease
 * that expired, which is the seed's point.) */
static void test_chaos_invariants(void **state) {
    (void)state;
    for (int seed = 1; seed <= 12; seed++) {
        char text[2048];
        snprintf(text, sizeof text,
                 "lock consensus servers=5 ttl=2s request-timeout=300ms\n"
                 "seed %d\nresource stock=1000\nnetwork latency=1ms..15ms loss=2%%\n"
                 "link * R loss=0%%\nlink R * loss=0%%\n" /* the resource has no retries */
                 "duration 120s\n"
                 "clients 4 @1s every=250ms repeat=0 think=200ms: acquire retry=300ms jitter=200ms; "
                 "read; write; work 300ms; release\n"
                 "@10s partition S1 S2 C1 | S3 S4 S5 C2 C3 C4 R\n"
                 "@18s heal\n@22s crash S3\n@25s pause S4 3s\n@29s restart S3\n"
                 "@35s partition S1 S3 | S2 S4 S5 C1 C2 C3 C4 R\n@44s heal\n"
                 "@50s crash S1\n@51s crash S2\n@56s restart S1\n@58s restart S2\n"
                 "@70s partition S5 C1 | S1 S2 S3 S4 C2 C3 C4 R\n@80s heal\n"
                 "@90s crash S4\n@91s crash S5\n@95s restart S4\n@96s restart S5\n",
                 seed);
        struct engine *e = run_text(text);
        const struct trace *tr = engine_trace(e);
        int leaders[512] = {0}; /* leader node + 1 per term */
        uint64_t held = 0, last = 0;
        int holder = -1, grants = 0;
        uint64_t client_last[64] = {0};
        int gave_up[64] = {0};
        for (size_t i = 0; i < tr->len; i++) {
            const struct trace_event *ev = &tr->ev[i];
            if (ev->kind == TRACE_SRV_NOTE && ev->text && strncmp(ev->text, "elected leader", 14) == 0) {
                assert_true(ev->a > 0 && ev->a < 512);
                if (leaders[ev->a] && leaders[ev->a] != ev->node + 1) {
                    fprintf(stderr, "seed %d: two leaders in term %lld\n", seed, (long long)ev->a);
                    fail();
                }
                leaders[ev->a] = ev->node + 1;
            } else if (ev->kind == TRACE_SRV_GRANT) {
                assert_true(is_server(e, ev->node));
                if (ev->token == held && ev->peer == holder) continue; /* a new leader re-records it */
                if (held) {
                    fprintf(stderr, "seed %d t=%lld: grant %llu while %llu is held\n", seed, (long long)ev->t,
                            (unsigned long long)ev->token, (unsigned long long)held);
                    fail();
                }
                assert_true(ev->token > last);
                held = last = ev->token;
                holder = ev->peer;
                grants++;
            } else if ((ev->kind == TRACE_SRV_EXPIRE && ev->peer == holder) ||
                       (ev->kind == TRACE_SRV_DELETE && ev->a == holder)) {
                held = 0;
                holder = -1;
            } else if (ev->kind == TRACE_SRV_NOTE && ev->text && strncmp(ev->text, "release unanswered", 18) == 0) {
                gave_up[ev->node] = 1;
            } else if (ev->kind == TRACE_ACQUIRED) {
                /* The same revision again only when the release never reached
                 * the service: the lock stayed under the client's lease, and
                 * re-acquiring finds it, as etcd's Mutex finds its own key. */
                assert_true(ev->node >= 0 && ev->node < 64);
                assert_true(ev->token > client_last[ev->node] ||
                            (ev->token == client_last[ev->node] && gave_up[ev->node]));
                client_last[ev->node] = ev->token;
                gave_up[ev->node] = 0;
            }
        }
        assert_true(grants > 10); /* the run made progress between the faults */
        engine_free(e);
    }
}

/* bind=: a client talks to one server only, which forwards to the leader
 * and relays the answer (etcd's followers forward proposals and keep-alives;
 * Jepsen's clients each talk to one node). Two hops more each way. */
static void test_bound_client_forwards(void **state) {
    (void)state;
    struct engine *e = run_text("lock consensus first-candidate=S1 bind=S2\n"
                                "network latency=1ms\nduration 10s\n"
                                "client A @2s: acquire; work 1s; release\n");
    int A = node_of(engine_trace(e), "A");
    /* t=2s A asks S2, a follower: no redirect, S2 forwards to S1 (2.002s),
     * the entry commits at 2.004s, the answer goes back to S2 (2.005s) and
     * on to A (2.006s). */
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 1);
    assert_int_equal(g->t, 2 * S + 4 * MS);
    assert_int_equal(g->peer, A);
    const struct trace_event *a = must(e, TRACE_ACQUIRED, "A", 1);
    assert_int_equal(a->t, 2 * S + 6 * MS);
    assert_int_equal(a->token, 2);
    /* A never sent anything to S1 or S3. */
    for (int i = 1; find(e, TRACE_MSG_SEND, "A", i); i++)
        assert_int_equal(find(e, TRACE_MSG_SEND, "A", i)->peer, node_of(engine_trace(e), "S2"));
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
    /* bind=one: the k-th client to server k, round robin (A to S1, B to S2,
     * C to S3, D to S1 again). */
    e = run_text("lock consensus first-candidate=S1 bind=one\n"
                 "network latency=1ms\nduration 10s\n"
                 "client A @2s: acquire; release\nclient B @3s: acquire; release\n"
                 "client C @4s: acquire; release\nclient D @5s: acquire; release\n");
    static const char *const clients[4] = {"A", "B", "C", "D"}, *const servers[4] = {"S1", "S2", "S3", "S1"};
    for (int k = 0; k < 4; k++) {
        assert_non_null(find(e, TRACE_ACQUIRED, clients[k], 1));
        for (int i = 1; find(e, TRACE_MSG_SEND, clients[k], i); i++)
            assert_int_equal(find(e, TRACE_MSG_SEND, clients[k], i)->peer, node_of(engine_trace(e), servers[k]));
    }
    engine_free(e);
}

/* Jepsen's etcd finding: pausing the server a client is bound to stops its
 * keep-alives; its lease lapses while it works on. Without bind= the client
 * fails over to another server and keeps its lease. */
static void test_bound_client_lease_lapses(void **state) {
    (void)state;
    static const char *text = "lock consensus ttl=5s first-candidate=S1 bind=%s\n"
                              "resource stock=2 fencing=off\nnetwork latency=1ms\nduration 40s\n"
                              "client A @2s: acquire; read; work 15s; write; release\n"
                              "client B @5s: acquire retry=500ms; read; write; release\n"
                              "@4s pause S2 20s\n";
    char buf[512];
    snprintf(buf, sizeof buf, text, "S2,S3");
    struct engine *e = run_text(buf);
    int A = node_of(engine_trace(e), "A");
    /* The last renewal S1 commits for A is at 3.676666666s, before S2
     * stops; due at 8.676666666s, revoked at the loop's round at 9s. */
    const struct trace_event *r = NULL;
    for (int i = 1; find(e, TRACE_SRV_RENEW, "S1", i); i++) r = find(e, TRACE_SRV_RENEW, "S1", i);
    assert_non_null(r);
    assert_int_equal(r->t, 3 * S + 676666666);
    const struct trace_event *x = must(e, TRACE_SRV_EXPIRE, "S1", 1);
    assert_int_equal(x->t, 9 * S + 2 * MS);
    assert_int_equal(x->peer, A);
    /* B, through S3, holds the lock from 9.054s with revision 12 (A's
     * keep-alives take no log index); A writes
     * at 17.009s with revision 2, accepted: a lost update. */
    const struct trace_event *b = must(e, TRACE_ACQUIRED, "B", 1);
    assert_int_equal(b->t, 9 * S + 54 * MS);
    assert_int_equal(b->token, 12);
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w->peer, A);
    assert_int_equal(w->t, 17 * S + 9 * MS);
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(engine_report(e)->lost_updates, 1);
    engine_free(e);
    /* Unbound, A's keep-alives time out at S2 and go to S3: never expired. */
    snprintf(buf, sizeof buf, text, "none");
    e = run_text(buf);
    assert_null(find(e, TRACE_SRV_EXPIRE, NULL, 1));
    assert_true(must(e, TRACE_ACQUIRED, "B", 1)->t > must(e, TRACE_CS_EXIT, "A", 1)->t);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(engine_report(e)->double_entries, 0);
    engine_free(e);
}

/* queue=on, etcd's Mutex: a client that finds the lock held puts its own
 * key and waits; when the holder's key goes, the oldest waiter holds the
 * lock, with its key's create revision as the token. No polling. */
static void test_queue_waiter_granted_in_order(void **state) {
    (void)state;
    struct engine *e = run_text("lock consensus first-candidate=S1 queue=on\n"
                                "network latency=1ms\nduration 20s\n"
                                "client A @2s: acquire; work 5s; release\n"
                                "client B @3s: acquire; work 1s; release\n"
                                "client C @4s: acquire; work 1s; release\n");
    /* t=3s B's acquire is entry 3: queued, and B is told to wait. */
    const struct trace_event *q = note(e, "S1", NOTE_PREFIX, "queues the request behind the holder", 1);
    assert_non_null(q);
    assert_int_equal(q->t, 3 * S + 3 * MS);
    assert_int_equal(q->a, node_of(engine_trace(e), "B"));
    assert_int_equal(q->b, 3);
    assert_non_null(note(e, "B", NOTE_PREFIX, "waits for the keys before its own", 1));
    /* t=7.004s A releases; committed at 7.007s: B's key is the oldest, B
     * holds the lock with revision 3, told at 7.008s. C still waits. */
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 2);
    assert_int_equal(g->t, 7 * S + 7 * MS);
    assert_int_equal(g->peer, node_of(engine_trace(e), "B"));
    assert_int_equal(g->token, 3);
    const struct trace_event *b = must(e, TRACE_ACQUIRED, "B", 1);
    assert_int_equal(b->t, 7 * S + 8 * MS);
    assert_int_equal(b->token, 3);
    /* C, queued after B, follows B's release; nobody polled. */
    const struct trace_event *c = must(e, TRACE_ACQUIRED, "C", 1);
    assert_true(c->t > must(e, TRACE_CS_EXIT, "B", 1)->t);
    const struct trace_event *qc = note(e, "S1", NOTE_PREFIX, "queues the request behind the holder", 2);
    assert_int_equal(qc->a, node_of(engine_trace(e), "C"));
    assert_int_equal(c->token, (uint64_t)qc->b); /* its key's revision, from 4s */
    assert_true(c->token > 3);
    assert_null(find(e, TRACE_ACQUIRE_DENIED, NULL, 1));
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(engine_report(e)->double_entries, 0);
    engine_free(e);
}

/* etcd #11456 at the boundary of the revoke loop. B queues at 3s and is
 * paused until 12.001s, so its lease (TTL 9s - 1ns, 9s, 9s + 1ns) is due at
 * 12s - 1ns, 12s or 12s + 1ns; A releases at 12.2s. Due by the loop's round
 * at 12s: B's key is deleted at 12s, and at A's release the bug tells B it
 * holds the lock while C, next, holds it too; the fixed server fails B's
 * call and C alone holds it. Due 1ns after the round: B's key is still
 * there at 12.2s (the next round is 12.5s), so B holds the lock
 * legitimately, bug or not. */
static void test_bug_11456_at_the_tick(void **state) {
    (void)state;
    const sim_ns ttls[3] = {9 * S - 1, 9 * S, 9 * S + 1};
    for (int bug = 0; bug < 2; bug++) {
        for (int i = 0; i < 3; i++) {
            char text[768];
            snprintf(text, sizeof text,
                     "lock consensus ttl=%lldns first-candidate=S1 queue=on%s\n"
                     "network latency=0ms\nduration 30s\n"
                     "client A @2s: acquire; work 10200ms; release\n"
                     "client B @3s: acquire; work 1s; release\n"
                     "client C @4s: acquire; work 1s; release\n"
                     "@3001ms pause B 9s\n",
                     (long long)ttls[i], bug ? " bug=etcd-11456" : "");
            struct engine *e = run_text(text);
            int B = node_of(engine_trace(e), "B"), C = node_of(engine_trace(e), "C");
            const struct trace_event *q = note(e, "S1", NOTE_PREFIX, "queues the request", 1);
            assert_non_null(q);
            assert_int_equal(q->t, 3 * S);
            assert_int_equal(q->a, B);
            const struct trace_event *gone = note(e, "S1", NOTE_PREFIX, "lease of a waiting client expired", 1);
            const struct trace_event *b = find(e, TRACE_ACQUIRED, "B", 1);
            const struct trace_event *c = must(e, TRACE_ACQUIRED, "C", 1);
            if (i < 2) {
                assert_non_null(gone);
                assert_int_equal(gone->t, 12 * S);
                assert_int_equal(gone->a, B);
                assert_int_equal(c->t, 12 * S + 200 * MS);
                if (bug) {
                    /* Told it holds the lock, with its dead key's revision. */
                    assert_non_null(b);
                    assert_int_equal(b->t, 12 * S + 200 * MS);
                    assert_int_equal(b->token, (uint64_t)q->b);
                    assert_non_null(note(e, "S1", NOTE_PREFIX, "bug etcd-11456", 1));
                    const struct trace_event *de = must(e, TRACE_DOUBLE_ENTRY_BEGIN, NULL, 1);
                    assert_int_equal(de->t, 12 * S + 200 * MS);
                    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_UNSAFE);
                } else {
                    const struct trace_event *f = note(e, "B", NOTE_PREFIX, "the lock call fails", 1);
                    assert_non_null(f);
                    assert_int_equal(f->t, 12 * S + 200 * MS);
                    assert_true(b == NULL || b->t >= must(e, TRACE_CS_EXIT, "C", 1)->t);
                    assert_int_equal(engine_report(e)->double_entries, 0);
                    assert_null(note(e, "S1", NOTE_PREFIX, "bug etcd-11456", 1));
                }
            } else {
                /* B's key survives to A's release: B is the holder. */
                assert_null(gone);
                const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 2);
                assert_int_equal(g->t, 12 * S + 200 * MS);
                assert_int_equal(g->peer, B);
                assert_int_equal(g->token, (uint64_t)q->b);
                assert_non_null(b);
                assert_int_equal(b->token, (uint64_t)q->b);
                /* Its keep-alive at 12.001s came after the deadline: the
                 * round at 12.5s revokes the lease and C holds the lock. */
                const struct trace_event *x = must(e, TRACE_SRV_EXPIRE, "S1", 1);
                assert_int_equal(x->t, 12 * S + 500 * MS);
                assert_int_equal(x->peer, B);
                assert_int_equal(c->t, 12 * S + 500 * MS);
                assert_int_equal(must(e, TRACE_SRV_GRANT, "S1", 3)->peer, C);
                assert_null(note(e, "S1", NOTE_PREFIX, "bug etcd-11456", 1));
            }
            engine_free(e);
        }
    }
}

/* queue=on without the revoke loop (expiry-check=off): a waiter's lease is
 * revoked at its deadline itself, to the nanosecond, like the holder's. */
static void test_queue_waiter_expiry_without_loop(void **state) {
    (void)state;
    const sim_ns ttls[3] = {9 * S - 1, 9 * S, 9 * S + 1};
    for (int i = 0; i < 3; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "lock consensus ttl=%lldns first-candidate=S1 queue=on expiry-check=off\n"
                 "network latency=0ms\nduration 30s\n"
                 "client A @2s: acquire; work 10200ms; release\n"
                 "client B @3s: acquire; work 1s; release\n"
                 "@3001ms pause B 9s\n",
                 (long long)ttls[i]);
        struct engine *e = run_text(text);
        /* B queued at 3s; its lease is due at 3s + TTL and revoked then. */
        const struct trace_event *gone = note(e, "S1", NOTE_PREFIX, "lease of a waiting client expired", 1);
        assert_non_null(gone);
        assert_int_equal(gone->t, 3 * S + ttls[i]);
        /* A's release at 12.2s finds B's key gone: B's call fails. */
        const struct trace_event *f = note(e, "B", NOTE_PREFIX, "the lock call fails", 1);
        assert_non_null(f);
        assert_int_equal(f->t, 12 * S + 200 * MS);
        engine_free(e);
    }
}

/* Options are checked, with messages that name what is expected. */
/* Issue 25, defect 2: with queue=on a waiter's key stops compaction
 * (InstallSnapshot carries no queue), and keep-alives were log entries, so a
 * holder working 110 s with a waiter queued filled the 256-entry log ("log
 * full"), its keep-alives were dropped, its lease lapsed while it worked and
 * the waiter was granted: UNSAFE with no fault at all. Keep-alives now renew
 * the lease in the leader's lessor, as etcd's do; the log holds only the
 * no-op, the two acquires and the release. Told step by step. */
static void test_queue_keepalives_fault_free_safe(void **state) {
    (void)state;
    struct engine *e = build_engine("lock consensus ttl=2s first-candidate=S1 queue=on\n"
                                    "resource stock=2 fencing=off\nnetwork latency=1ms\n"
                                    "duration 200s\n"
                                    "client A @2s: acquire; read; work 110s; write; release\n"
                                    "client B @3s: acquire; read; write; release\n",
                                    NULL);
    story_cursor = 0;
    int A = node_of(engine_trace(e), "A");
    /* t=2.004s: A is granted with revision 2 (the no-op of term 1 is 1). */
    const struct trace_event *ev = step_until_event(e, TRACE_ACQUIRED, "A");
    assert_int_equal(ev->t, 2 * S + 4 * MS);
    assert_int_equal(ev->token, 2);
    /* t=3.004s: B's key is put behind A's: create revision 3, and it waits. */
    assert_true(step_until_time(e, 3 * S + 10 * MS));
    ev = must_note(e, "S1", NOTE_EXACT, "queues the request behind the holder", 1);
    assert_int_equal(ev->b, 3);
    /* t=60s: A's keep-alives (every 2s/3) have renewed its lease at the
     * leader the whole time, none through the log: nothing expired, the
     * log is not full, B still waits. */
    assert_true(step_until_time(e, 60 * S));
    assert_true(so_far(e, TRACE_SRV_RENEW, "S1") > 80);
    assert_int_equal(so_far(e, TRACE_SRV_EXPIRE, NULL), 0);
    assert_null(note(e, "S1", NOTE_PREFIX, "log full", 1));
    assert_int_equal(so_far(e, TRACE_ACQUIRED, "B"), 0);
    /* t=112.004s: A writes and releases; B's call returns with its key's
     * revision, 3: no keep-alive took a revision. */
    ev = step_until_event(e, TRACE_ACQUIRED, "B");
    assert_true(ev->t > 112 * S);
    assert_int_equal(ev->token, 3);
    assert_int_equal(must(e, TRACE_SRV_RENEW, "S1", 1)->peer, A);
    engine_run(e);
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    assert_false(engine_truncated(e));
    assert_int_equal(r->double_entries, 0);
    assert_int_equal(r->lost_updates, 0);
    assert_null(note(e, "S1", NOTE_PREFIX, "log full", 1));
    engine_free(e);
}

/* Issue 25, defect 2, the part keep-alives left: a queue of keys stopped
 * compaction (InstallSnapshot carried no queue), so whatever else went
 * through the log while keys waited filled it. Here A works 150 s with 8
 * keys queued behind it (QCAP) and two more clients polling every second:
 * each refused attempt is a log entry. Before, the 5-server log filled at
 * 122.477 s ("log full"), A's release at 152 s was dropped, and the lock
 * stood unavailable 16.5 s until A's lease was revoked. The snapshot now
 * carries the queued keys, and the log compacts while they wait. */
static const char *polling_queue(const char *servers, const char *faults) {
    static char text[1200];
    int n = snprintf(text, sizeof text,
                     "lock consensus servers=%s ttl=2s first-candidate=S1 queue=on\n"
                     "resource stock=20 fencing=off\nnetwork latency=1ms\nduration 300s\n"
                     "client A @2s: acquire; read; work 150s; write; release\n",
                     servers);
    for (const char *c = "BCDEFGHIJK"; *c; c++)
        n += snprintf(text + n, sizeof text - (size_t)n, "client %c @3s: acquire; read; write; release\n", *c);
    snprintf(text + n, sizeof text - (size_t)n, "%s", faults);
    return text;
}

static void test_queue_compacts_with_waiters(void **state) {
    (void)state;
    struct engine *e = run_text(polling_queue("5", ""));
    /* Hundreds of refused attempts went through the log, and it never filled. */
    assert_true(so_far(e, TRACE_ACQUIRE_DENIED, NULL) > 250);
    assert_null(note(e, NULL, NOTE_PREFIX, "log full", 1));
    /* A releases at 152.004 s; B, first in the queue, holds the lock at
     * once with its key's revision, 3: no 16.5 s gap. */
    const struct trace_event *x = must(e, TRACE_CS_EXIT, "A", 1);
    const struct trace_event *b = must(e, TRACE_ACQUIRED, "B", 1);
    assert_int_equal(b->token, 3);
    assert_true(b->t - x->t < 20 * MS);
    assert_true(engine_report(e)->unavailable_ns < 1 * S);
    /* The leader's traffic stays flat: at most 2,600 messages in any 10 s
     * (five servers heartbeating, twelve sessions kept alive). */
    for (sim_ns t = 0; t < 300 * S; t += 10 * S)
        assert_true(count(e, TRACE_MSG_SEND, NULL, -3, t, t + 10 * S - 1) <= 2600);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
    /* Three servers, S3 down from 5 s to 125 s: it comes back behind the
     * leader's snapshot, installs it with the eight queued keys, and, made
     * leader at 140 s, ends their waits in order when A releases. */
    e = run_text(polling_queue("3", "@5s crash S3\n@125s restart S3\n@140s promote S3\n"));
    const struct trace_event *snap = must_note(e, "S3", NOTE_PREFIX, "installs the leader's snapshot of the lock state",
                                               1);
    assert_int_equal(snap->t, 125 * S + 5 * MS);
    assert_true(snap->a > 200); /* the snapshot's index */
    assert_true(must_note(e, "S3", NOTE_PREFIX, "elected leader, term 2", 1)->t < 141 * S);
    const char *order = "BCDEFGHI";
    for (int i = 0; order[i]; i++) {
        const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S3", i + 1);
        assert_int_equal(g->peer, node_of(engine_trace(e), (char[]){order[i], 0}));
        assert_int_equal(g->token, (uint64_t)(3 + i));
    }
    assert_null(note(e, NULL, NOTE_PREFIX, "log full", 1));
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
}

/* Issue 25, defect 3: a waiter bound to a paused server (bind=, queue=on).
 * B waits through S2; S2 is paused at 10 s, so B's keep-alives stop. A
 * releases at 12.008 s and the leader ends B's wait (rev 3), but the word
 * sits in paused S2 while B's lease runs out: revoked at 15.002 s, and C,
 * next in line, holds the lock from 15.008 s. When S2 resumes at 30 s, etcd
 * >= 3.4.4's Lock call (run in S2, server/etcdserver/api/v3lock/lock.go)
 * re-reads B's key after waiting (client/v3/concurrency/mutex.go) and finds
 * it gone: ErrSessionExpired, not a grant. bug=etcd-11456 keeps the old
 * path: B is told it holds the lock beside C. */
static void test_bound_waiter_paused_server(void **state) {
    (void)state;
    static const char *text = "lock consensus servers=3 ttl=5s first-candidate=S1 bind=S3,S2 queue=on%s\n"
                              "resource stock=3 fencing=off\nnetwork latency=1ms\nduration 60s\n"
                              "client A @2s: acquire; read; write; work 10s; release\n"
                              "client B @3s: acquire; read; write; release\n"
                              "client C @4s: acquire; read; write; work 20s; release\n"
                              "@10s pause S2 20s\n";
    char buf[600];
    snprintf(buf, sizeof buf, text, "");
    struct engine *e = build_engine(buf, NULL);
    story_cursor = 0;
    int B = node_of(engine_trace(e), "B");
    /* t=12.014s: A has released; S1 ends B's wait, its key holds the lock. */
    const struct trace_event *ev = step_until_event(e, TRACE_SRV_GRANT, "S1");
    ev = step_until_event(e, TRACE_SRV_GRANT, "S1");
    assert_int_equal(ev->peer, B);
    assert_int_equal(ev->token, 3);
    /* t=15.002s: B's lease, unrenewed since S2 stopped, is revoked. */
    ev = step_until_event(e, TRACE_SRV_EXPIRE, "S1");
    assert_int_equal(ev->peer, B);
    assert_int_equal(ev->t, 15 * S + 2 * MS);
    /* t=15.008s: C holds the lock: its wait ended at 15.002s, and S3, the
     * server it is bound to, re-read its key first: a ReadIndex that S1
     * answers once a heartbeat round confirms it still leads (4 ms). */
    ev = step_until_event(e, TRACE_ACQUIRED, "C");
    assert_int_equal(ev->t, 15 * S + 8 * MS);
    /* t=30s: S2 resumes; its Lock call re-reads B's key: gone. */
    ev = step_until_event(e, TRACE_RESUME, "S2");
    assert_int_equal(ev->t, 30 * S);
    assert_true(step_until_time(e, 31 * S));
    ev = must_note(e, "S2", NOTE_PREFIX, "the Lock call re-reads its key after waiting: gone", 1);
    assert_int_equal(ev->a, B);
    assert_true(ev->t > 30 * S);
    assert_int_equal(so_far(e, TRACE_ACQUIRED, "B"), 0);
    engine_run(e);
    /* B asks again with a new session and holds the lock after C. */
    assert_true(must(e, TRACE_ACQUIRED, "B", 1)->t > must(e, TRACE_CS_EXIT, "C", 1)->t);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(engine_report(e)->double_entries, 0);
    assert_true(must(e, TRACE_ACQUIRED, "C", 1)->t < 30 * S);
    engine_free(e);
    /* bug=etcd-11456: the grant is relayed as it is; B and C overlap. */
    snprintf(buf, sizeof buf, text, " bug=etcd-11456");
    e = run_text(buf);
    assert_true(must(e, TRACE_ACQUIRED, "B", 1)->t > 30 * S);
    assert_null(note(e, "S2", NOTE_PREFIX, "the Lock call re-reads its key", 1));
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_UNSAFE);
    engine_free(e);
}

/* Five servers, B bound to S2 (paused 10s-40s) and C to S4; S1 and S2, with
 * B, cut off from the rest from 13s to 50s; C asks at c_at. */
static const char *cut_off_leader(const char *c_at) {
    static char text[700];
    snprintf(text, sizeof text,
             "lock consensus servers=5 ttl=5s first-candidate=S1 bind=S1,S2,S4 queue=on check-quorum=off\n"
             "resource stock=3 fencing=off\nnetwork latency=1ms\nduration 90s\n"
             "client A @2s: acquire; read; write; work 10s; release\n"
             "client B @3s: acquire; read; write; release\n"
             "client C @%s: acquire; read; write; work 40s; release\n"
             "@10s pause S2 30s\n@13s partition S1 S2 B | S3 S4 S5 A C R\n@50s heal\n",
             c_at);
    return text;
}

/* Issue 25, defect 3, the leader's confirmation: a ReadIndex is answered
 * only once a majority has answered a heartbeat sent after it arrived
 * (Raft dissertation 6.4). Five servers, check-quorum=off so that a leader
 * cut off keeps believing it leads. B waits behind A through S2, paused
 * 10s-40s. A releases at 12.008s and S1 ends B's wait (revision 3); the word
 * sits in paused S2. At 13s S1 and S2 (with B) are cut off from S3, S4, S5:
 * S5 leads term 2 from 14.313s, revokes B's silent lease at 20.502s and
 * grants C. When S2 resumes at 40s, its Lock call asks S1, still leader in
 * its own eyes, for a ReadIndex. Before, S1 answered at once with its
 * stale commit index, S2 read its own stale copy (B's key there) and B was
 * told it holds the lock at 40.003s beside C: UNSAFE with bug=none. S1 can
 * confirm nothing now; after the heal at 50s S1 steps down, S2 asks S5,
 * and B's key is gone: session expired. */
static void test_stale_leader_read_index(void **state) {
    (void)state;
    struct engine *e = build_engine(cut_off_leader("15s"), NULL);
    story_cursor = 0;
    int B = node_of(engine_trace(e), "B");
    /* t=12.011s: S1 ends B's wait: B's key (revision 3) holds the lock. */
    const struct trace_event *ev = step_until_event(e, TRACE_SRV_GRANT, "S1");
    ev = step_until_event(e, TRACE_SRV_GRANT, "S1");
    assert_int_equal(ev->peer, B);
    assert_int_equal(ev->token, 3);
    assert_int_equal(ev->t, 12 * S + 11 * MS);
    /* t=20.502s: the majority's leader S5 revokes B's silent lease, and C
     * holds the lock from 20.508s. */
    ev = step_until_event(e, TRACE_SRV_EXPIRE, "S5");
    assert_int_equal(ev->peer, B);
    assert_int_equal(ev->t, 20 * S + 502 * MS);
    assert_int_equal(step_until_event(e, TRACE_ACQUIRED, "C")->t, 20 * S + 508 * MS);
    /* t=40s..50s: S2 resumes and asks S1, which leads no majority: no
     * answer, and B is not granted. */
    assert_int_equal(step_until_event(e, TRACE_RESUME, "S2")->t, 40 * S);
    assert_true(step_until_time(e, 50 * S));
    assert_int_equal(so_far(e, TRACE_ACQUIRED, "B"), 0);
    assert_null(note(e, "S2", NOTE_PREFIX, "the Lock call re-reads its key", 1));
    /* After the heal S2 follows S5 and asks it: B's key is gone. */
    ev = step_until_note(e, "S2", "the Lock call re-reads its key after waiting: gone");
    assert_int_equal(ev->a, B);
    assert_true(ev->t > 50 * S && ev->t < 51 * S);
    engine_run(e);
    /* B asks again with a new session and holds the lock after C. */
    assert_true(must(e, TRACE_ACQUIRED, "B", 1)->t > must(e, TRACE_CS_EXIT, "C", 1)->t);
    assert_int_equal(engine_report(e)->double_entries, 0);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
}

/* The wait ends where etcd's v3lock runs it: in the bound server, when it
 * applies the deletion of the last older key (entries now carry the server
 * a call came through). Before, only the leader that had proposed the key
 * answered, through the bound server: C, queued at 4s through S4 while S1
 * led, was never answered once S1 was cut off with S2 at 13s, although S5
 * revoked B's lease at 20.502s and C's key held the lock. Now S4 ends C's
 * wait itself, re-reads the key through S5 (ReadIndex) and C holds the
 * lock at 20.508s, its validity counted from its own last renewal. */
static void test_bound_waiter_outlives_its_proposer(void **state) {
    (void)state;
    struct engine *e = run_text(cut_off_leader("4s"));
    /* C's key (revision 4) was proposed by S1 at 4.004s. */
    const struct trace_event *q = must_note(e, "S1", NOTE_EXACT, "queues the request behind the holder", 2);
    assert_int_equal(q->b, 4);
    const struct trace_event *x = must(e, TRACE_SRV_EXPIRE, "S5", 1);
    assert_int_equal(x->t, 20 * S + 502 * MS);
    const struct trace_event *c = must(e, TRACE_ACQUIRED, "C", 1);
    assert_int_equal(c->t, 20 * S + 508 * MS);
    assert_int_equal(c->token, 4);
    assert_true(c->a > 0 && c->a < 5 * S); /* counted from its last renewal, not a full TTL */
    /* B: told its session expired after the heal, then the lock after C. */
    assert_true(must_note(e, "S2", NOTE_PREFIX, "the Lock call re-reads its key after waiting: gone", 1)->t > 50 * S);
    assert_true(must(e, TRACE_ACQUIRED, "B", 1)->t > must(e, TRACE_CS_EXIT, "C", 1)->t);
    assert_int_equal(engine_report(e)->double_entries, 0);
    assert_int_equal(engine_report(e)->starved, 0);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
}

/* bug=etcd-11456 with bind=: B's key was deleted while B was paused
 * (5s-13s); when A releases, the bound server S2 tells B it holds the lock
 * (the bug). The validity B believes is counted from its own last renewal,
 * which left before 5s: nothing (1 ns, as 0 means "until released"), not
 * the full TTL that S2, which does not know the lease's deadline, used to
 * report. C, bound to S3, is granted too: UNSAFE either way. */
static void test_bug_11456_bound_validity(void **state) {
    (void)state;
    struct engine *e = run_text("lock consensus ttl=5s first-candidate=S1 queue=on bug=etcd-11456 bind=S1,S2,S3\n"
                                "resource stock=3 fencing=off\nnetwork latency=1ms\nduration 30s\n"
                                "client A @2s: acquire; read; write; work 12s; release\n"
                                "client B @3s: acquire; read; write; work 2s; release\n"
                                "client C @4s: acquire; read; write; work 2s; release\n"
                                "@5s pause B 8s\n");
    const struct trace_event *b = must(e, TRACE_ACQUIRED, "B", 1);
    assert_int_equal(b->t, 14 * S + 13 * MS);
    assert_int_equal(b->token, 3);
    assert_int_equal(b->a, 1);
    const struct trace_event *c = must(e, TRACE_ACQUIRED, "C", 1);
    assert_int_equal(c->t, 14 * S + 13 * MS);
    assert_true(c->a > 4 * S && c->a < 5 * S);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_UNSAFE);
    engine_free(e);
}

/* Issue 25, hang (a): B, bound to S2, waits behind A. A releases at
 * 12.01s; S1 ends B's wait at 12.014s, S2 applies it and asks S1 for its
 * commit index (the re-read of etcd >= 3.4.4); S2 crashes at 12.016s,
 * before the answer, and restarts at 12.5s without the call. Before, B
 * waited for the rest of the run while its keep-alives, relayed by the new
 * S2, kept its key holding the lock: nobody could ever take it. Now the
 * keep-alive answered by S2's new process shows that the connection the
 * call was on is gone: the Lock call fails (gRPC Unavailable, not retried),
 * and B's next attempt, in the same session, finds its key: token 3. */
static void test_bound_waiter_server_crash_fails_call(void **state) {
    (void)state;
    struct engine *e = build_engine("lock consensus servers=3 ttl=5s first-candidate=S1 bind=S3,S2 queue=on\n"
                                    "resource stock=3 fencing=off\nnetwork latency=1ms\nduration 60s\n"
                                    "client A @2s: acquire; read; write; work 10s; release\n"
                                    "client B @3s: acquire; read; write; release\n"
                                    "@12.016s crash S2\n@12.5s restart S2\n",
                                    NULL);
    story_cursor = 0;
    int B = node_of(engine_trace(e), "B");
    /* t=12.014s: S1 ends B's wait: B's key holds the lock (revision 3). */
    const struct trace_event *ev = step_until_event(e, TRACE_SRV_GRANT, "S1");
    ev = step_until_event(e, TRACE_SRV_GRANT, "S1");
    assert_int_equal(ev->peer, B);
    assert_int_equal(ev->t, 12 * S + 14 * MS);
    /* t=12.016s: S2 crashes with the re-read pending; 12.5s: it restarts. */
    assert_int_equal(step_until_event(e, TRACE_CRASH, "S2")->t, 12 * S + 16 * MS);
    assert_int_equal(step_until_event(e, TRACE_RESTART, "S2")->t, 12 * S + 500 * MS);
    /* B's next keep-alive comes back from the new process: the call fails. */
    ev = step_until_note(e, "B", "the Lock call fails: the server it waited in restarted");
    assert_true(ev->t > 12 * S + 500 * MS && ev->t < 14 * S);
    assert_int_equal(ev->a, 2); /* S2 */
    /* B tries again in the same session: its key still holds the lock. */
    ev = step_until_event(e, TRACE_ACQUIRED, "B");
    assert_true(ev->t < 15 * S);
    assert_int_equal(ev->token, 3);
    engine_run(e);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(engine_report(e)->double_entries, 0);
    engine_free(e);
}

/* Issue 25, hang (b), without bind=: B's call waits in S1, the leader that
 * queued its key; S1 is cut off alone at 5s and S2 leads from 6.495s. B's
 * keep-alives fail over to S2. Before, only S1 (the proposer) could end
 * B's wait, so when A released at 12.01s and S2 gave B's key the lock, B
 * heard nothing until the heal at 40s, its key holding the lock all along.
 * Now the keep-alive renewed through S2 shows that B's connection has moved:
 * the call goes again to S2 (clientv3's watch resumes on its new
 * connection), the retry moves the answer to S2, and B holds the lock at
 * once when A releases. */
static void test_waiter_follows_its_connection(void **state) {
    (void)state;
    struct engine *e = build_engine("lock consensus servers=3 ttl=5s first-candidate=S1 queue=on\n"
                                    "resource stock=3 fencing=off\nnetwork latency=1ms\nduration 60s\n"
                                    "client A @2s: acquire; read; write; work 10s; release\n"
                                    "client B @3s: acquire; read; write; release\n"
                                    "@5s partition S1 | S2 S3 A B R\n@40s heal\n",
                                    NULL);
    story_cursor = 0;
    int B = node_of(engine_trace(e), "B");
    /* t=3.004s: S1 queues B's key behind A's (revision 3). */
    const struct trace_event *ev = step_until_note(e, "S1", "queues the request behind the holder");
    assert_int_equal(ev->a, B);
    assert_int_equal(ev->b, 3);
    /* S2 leads from 6.495s; B's keep-alive, failed over, is renewed there. */
    ev = step_until_note(e, "B", "its connection moved to another server");
    assert_true(ev->t > 6 * S + 495 * MS && ev->t < 10 * S);
    assert_int_equal(ev->a, 1); /* from S1 ... */
    assert_int_equal(ev->b, 2); /* ... to S2 */
    /* t=12.011s: S2 gives B's key the lock; B is told at once. */
    ev = step_until_event(e, TRACE_SRV_GRANT, "S2");
    assert_int_equal(ev->peer, B);
    assert_int_equal(ev->token, 3);
    ev = step_until_event(e, TRACE_ACQUIRED, "B");
    assert_int_equal(ev->t, 12 * S + 12 * MS);
    assert_int_equal(ev->token, 3);
    engine_run(e);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    engine_free(e);
}

static void test_options(void **state) {
    (void)state;
    struct scn_error err;
    assert_int_equal(build_text("lock consensus tll=3s\nclient A: acquire\n", &err), LSIM_EUNKNOWN_OPTION);
    assert_string_equal(err.msg, "unknown option 'tll' for consensus; expected ttl, token, "
                                 "request-timeout, election-timeout, heartbeat, check-quorum, "
                                 "first-candidate, expiry-check, promote-extend, bind, queue, bug");
    assert_int_equal(build_text("lock consensus expiry-check=-1s\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_string_equal(err.msg, "expiry-check '-1s' is not a duration such as 500ms, or off");
    assert_int_equal(build_text("lock consensus promote-extend=soon\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_string_equal(err.msg, "promote-extend 'soon' is not a duration such as 1s (0s for none), "
                                 "or election-timeout");
    assert_int_equal(build_text("lock consensus token=zxid\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_string_equal(err.msg, "token 'zxid' is not revision or none");
    assert_int_equal(build_text("lock consensus first-candidate=S0\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_string_equal(err.msg, "first-candidate 'S0' is not a lock server S1..S15, or none");
    assert_int_equal(build_text("lock consensus first-candidate=S4\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_string_equal(err.msg, "first-candidate S4 is not a lock server of this run (S1..S3)");
    assert_int_equal(build_text("lock consensus ttl=0s\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_string_equal(err.msg, "ttl '0s' is not a duration of at least 1us, such as 10s");
    assert_int_equal(build_text("lock consensus servers=7 ttl=5s election-timeout=500ms "
                                "heartbeat=50ms check-quorum=off request-timeout=2s\n"
                                "client A: acquire\n",
                                &err),
                     0);
    assert_int_equal(build_text("lock consensus bind=S2,\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_string_equal(err.msg, "bind 'S2,' is not none, one, or a list of lock servers such as S2,S3");
    assert_int_equal(build_text("lock consensus bind=S2,S4\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_string_equal(err.msg, "bind names S4, not a lock server of this run (S1..S3)");
    assert_int_equal(build_text("lock consensus bind=one\nclient A: acquire\n", &err), 0);
    assert_int_equal(build_text("lock consensus bug=etcd-1145\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_string_equal(err.msg, "bug 'etcd-1145' is not a known server bug (etcd-11456), or none");
    assert_int_equal(build_text("lock consensus bug=etcd-11456\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_string_equal(err.msg, "bug=etcd-11456 is a bug of etcd's queued Mutex; it needs queue=on");
    assert_int_equal(build_text("lock consensus queue=on expiry-check=off\nclient A: acquire\n", &err), 0);
    assert_int_equal(build_text("lock consensus queue=fifo\nclient A: acquire\n", &err), LSIM_EBAD_VALUE);
    assert_string_equal(err.msg, "queue 'fifo' is not on or off");
    assert_int_equal(build_text("lock consensus queue=on bug=etcd-11456\nclient A: acquire\n", &err), 0);
    /* Three servers unless the scenario says otherwise. */
    assert_int_equal(lock_algo_find("consensus")->default_servers, 3);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_elected_leader_grants_log_index),
            cmocka_unit_test(test_token_none),
            cmocka_unit_test(test_minority_refuses_grant),
            cmocka_unit_test(test_partitioned_leader_cannot_grant),
            cmocka_unit_test(test_deposed_leader_entry_overwritten),
            cmocka_unit_test(test_grant_survives_leader_crash),
            cmocka_unit_test(test_lease_expires_while_paused),
            cmocka_unit_test(test_lease_expiry_at_the_tick),
            cmocka_unit_test(test_revoke_loop_at_the_tick),
            cmocka_unit_test(test_revision_fences_stale_write),
            cmocka_unit_test(test_keepalives_hold_lease),
            cmocka_unit_test(test_crashed_holder_expires),
            cmocka_unit_test(test_new_leader_restarts_lease),
            cmocka_unit_test(test_snapshot_catches_up_follower),
            cmocka_unit_test(test_cut_off_holder_learns_lease_lost),
            cmocka_unit_test(test_late_grant_ignored),
            cmocka_unit_test(test_records_once),
            cmocka_unit_test(test_full_log_still_commits),
            cmocka_unit_test(test_single_server),
            cmocka_unit_test(test_chaos_invariants),
            cmocka_unit_test(test_bound_client_forwards),
            cmocka_unit_test(test_bound_client_lease_lapses),
            cmocka_unit_test(test_queue_waiter_granted_in_order),
            cmocka_unit_test(test_bug_11456_at_the_tick),
            cmocka_unit_test(test_queue_waiter_expiry_without_loop),
            cmocka_unit_test(test_queue_keepalives_fault_free_safe),
            cmocka_unit_test(test_queue_compacts_with_waiters),
            cmocka_unit_test(test_bound_waiter_paused_server),
            cmocka_unit_test(test_stale_leader_read_index),
            cmocka_unit_test(test_bound_waiter_outlives_its_proposer),
            cmocka_unit_test(test_bug_11456_bound_validity),
            cmocka_unit_test(test_bound_waiter_server_crash_fails_call),
            cmocka_unit_test(test_waiter_follows_its_connection),
            cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
