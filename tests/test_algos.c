/* Tests of the local-mutex, setnx-expire and lease-renew algorithms, narrated:
 * each runs a small scenario and walks its trace, asserting the virtual times,
 * messages and verdicts that show what each algorithm does and fails to do. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "step_fixture.h"

#include "engine.h"
#include "kv.h"

#undef S /* step_fixture.h's S(x); here S is the unit */
#define S SIM_NS_PER_S
#define MS SIM_NS_PER_MS

/* ---- local-mutex ------------------------------------------------------------------------ */

/* Seed, "The anti-pattern": two instances, each with its own monitor. */
static void test_local_mutex_instances_grant_at_once(void **state) {
    (void)state;
    struct engine *e = run_text("lock local-mutex\n"
                                "resource stock=1\nnetwork latency=1ms\nduration 30s\n"
                                "client A: acquire; read; work 2s; write; release\n"
                                "client B: acquire; read; work 2s; write; release\n");
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A"), B = node_of(tr, "B"), S1 = node_of(tr, "S1");

    /* t=0: both acquire at once, each from its own process's mutex, with no
     * message at all (and no lock server involved). */
    const struct trace_event *a = must(e, TRACE_ACQUIRED, "A", 1);
    const struct trace_event *b = must(e, TRACE_ACQUIRED, "B", 1);
    assert_int_equal(a->t, 0);
    assert_int_equal(b->t, 0);
    assert_int_equal(a->a, 0); /* believed valid until released */
    assert_int_equal(count(e, TRACE_MSG_SEND, NULL, S1, 0, 30 * S), 0);
    assert_null(find(e, TRACE_SRV_GRANT, NULL, 1));
    assert_int_equal(count(e, TRACE_ACQUIRE_DENIED, NULL, -3, 0, 30 * S), 0);
    /* So both are inside from t=0. */
    const struct trace_event *de = must(e, TRACE_DOUBLE_ENTRY_BEGIN, NULL, 1);
    assert_int_equal(de->t, 0);
    assert_int_equal(de->node, B);
    assert_int_equal(de->peer, A);
    /* t=1ms: both read the last unit; t=2.003s both write 0 and both are accepted. */
    assert_int_equal(must(e, TRACE_READ, "R", 1)->a, 1);
    assert_int_equal(must(e, TRACE_READ, "R", 2)->a, 1);
    const struct trace_event *w1 = must(e, TRACE_WRITE, "R", 1);
    const struct trace_event *w2 = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w1->t, 2 * S + 3 * MS);
    assert_int_equal(w2->t, 2 * S + 3 * MS);
    assert_int_equal(w1->b, TRACE_WRITE_ACCEPTED);
    assert_int_equal(w2->b, TRACE_WRITE_ACCEPTED);

    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(r->acquires, 2);
    assert_int_equal(r->double_entries, 1);
    assert_int_equal(r->lost_updates, 1); /* the last unit sold twice */
    assert_int_equal(r->final_stock, 0);
    engine_free(e);
}

/* Threads of one process share the mutex: B blocks until A unlocks. */
static void test_local_mutex_threads_serialize(void **state) {
    (void)state;
    struct engine *e = run_text("lock local-mutex mode=threads\n"
                                "resource stock=1\nnetwork latency=1ms\nduration 30s\n"
                                "client A: acquire; read; work 1s; write; release\n"
                                "client B: acquire; read; work 1s; write; release\n");
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A"), B = node_of(tr, "B");

    /* t=1ms: both lock requests reach S1 (the shared memory); A's came first. */
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 1);
    assert_int_equal(g->t, 1 * MS);
    assert_int_equal(g->peer, A);
    assert_int_equal(g->b, SIM_NEVER); /* a mutex has no expiry */
    const struct trace_event *blk = note(e, "S1", NOTE_EXACT, "mutex held by another thread: the caller blocks", 1);
    assert_non_null(blk);
    assert_int_equal(blk->t, 1 * MS);
    assert_int_equal(blk->a, B);
    assert_int_equal(blk->b, A);
    /* t=2ms: A holds it. B is blocked, not refused: no retries. */
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->t, 2 * MS);
    assert_int_equal(count(e, TRACE_ACQUIRE_DENIED, NULL, -3, 0, 30 * S), 0);
    assert_int_equal(count(e, TRACE_ACQUIRE_TRY, "B", -3, 0, 30 * S), 1);
    /* A reads at 3ms, works 4ms..1.004s, its write lands at 1.005s, it
     * unlocks at 1.006s; at 1.007s S1 hands the mutex straight to B. */
    assert_int_equal(must(e, TRACE_WRITE, "R", 1)->t, 1 * S + 5 * MS);
    assert_int_equal(must(e, TRACE_CS_EXIT, "A", 1)->t, 1 * S + 6 * MS);
    const struct trace_event *d = must(e, TRACE_SRV_DELETE, "S1", 1);
    assert_int_equal(d->t, 1 * S + 7 * MS);
    assert_int_equal(d->peer, A);
    g = must(e, TRACE_SRV_GRANT, "S1", 2);
    assert_int_equal(g->t, 1 * S + 7 * MS);
    assert_int_equal(g->peer, B);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 1 * S + 8 * MS);
    /* B reads 0 (A took the last unit) and does not write. */
    assert_int_equal(must(e, TRACE_READ, "R", 2)->a, 0);
    assert_int_equal(must(e, TRACE_WRITE_SKIPPED, "B", 1)->a, TRACE_SKIP_SOLD_OUT);

    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r->double_entries, 0);
    assert_int_equal(r->lost_updates, 0);
    assert_int_equal(r->final_stock, 0);
    engine_free(e);
}

/* With zero latency to the shared memory the mutex is as instant as a real
 * monitor, and a pause of the whole process (every thread and the memory)
 * lets nobody in: the one pause stops them all. */
static void test_local_mutex_threads_one_pause_stops_all(void **state) {
    (void)state;
    struct engine *e = run_text("lock local-mutex mode=threads\n"
                                "resource stock=2\nnetwork latency=1ms\n"
                                "link * S1 latency=0ms\nlink S1 * latency=0ms\nduration 30s\n"
                                "client A: acquire; read; work 3s; write; release\n"
                                "client B: acquire; read; work 3s; write; release\n"
                                "@2s pause A 5s\n@2s pause B 5s\n@2s pause S1 5s\n");
    /* t=0: A takes the mutex with no delay; B blocks on it. */
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->t, 0);
    /* The process is frozen 2s..7s: nothing is granted meanwhile. */
    assert_int_equal(count(e, TRACE_SRV_GRANT, "S1", -3, 1, 7 * S - 1), 0);
    /* A's work (1ms..3.001s by its monotonic clock) ends at the resume; its
     * write lands at 7.001s; it unlocks at 7.002s and B takes over at once. */
    assert_int_equal(must(e, TRACE_WRITE, "R", 1)->t, 7 * S + 1 * MS);
    assert_int_equal(must(e, TRACE_CS_EXIT, "A", 1)->t, 7 * S + 2 * MS);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 7 * S + 2 * MS);
    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(r->double_entries, 0);
    assert_int_equal(r->final_stock, 0);
    assert_int_equal(r->writes_accepted, 2);
    engine_free(e);
}

static void test_local_mutex_options(void **state) {
    (void)state;
    struct scn_error err;
    build_fails("lock local-mutex mode=process\nclient A: acquire\n", &err);
    assert_int_equal(err.pos.line, 1);
    assert_int_equal(err.pos.col, 18); /* at the option */
    assert_string_equal(err.msg, "mode 'process' is not instances or threads");
    build_fails("lock local-mutex ttl=5s\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "unknown option 'ttl' for local-mutex; expected mode");
    /* Threads share one address space: one stand-in server at most. */
    build_fails("lock local-mutex servers=2\nclient A: acquire\n", &err);
    assert_non_null(strstr(err.msg, "at most 1 lock server"));
}

/* ---- setnx-expire ----------------------------------------------------------------------- */

/* Without a crash, the second command gives the key its TTL. */
static void test_setnx_expire_sets_ttl(void **state) {
    (void)state;
    struct engine *e = run_text("lock setnx-expire ttl=10s\n"
                                "resource stock=5\nnetwork latency=1ms\nduration 60s\n"
                                "client A: acquire; read; work 5s; write; release\n"
                                "client B @1s: acquire retry=1s; read; write; release\n"
                                "@2s crash A\n");
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A"), B = node_of(tr, "B");
    /* t=0 SETNX leaves; t=1ms S1 sets the key with no expiry. */
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 1);
    assert_int_equal(g->t, 1 * MS);
    assert_int_equal(g->peer, A);
    assert_int_equal(g->a, 0);
    assert_int_equal(g->b, SIM_NEVER);
    /* t=2ms the reply is in and EXPIRE leaves; t=3ms S1 applies the TTL. */
    const struct trace_event *x = must(e, TRACE_SRV_RENEW, "S1", 1);
    assert_int_equal(x->t, 3 * MS);
    assert_int_equal(x->peer, A);
    assert_int_equal(x->a, 10 * S);
    /* t=4ms EXPIRE's reply: only now does A consider itself the holder. */
    const struct trace_event *a = must(e, TRACE_ACQUIRED, "A", 1);
    assert_int_equal(a->t, 4 * MS);
    /* It counts the TTL from when EXPIRE left (2ms): 10s - 2ms of it remain. */
    assert_int_equal(a->a, 10 * S - 2 * MS);
    /* A dies at 2s inside its critical section; the key, with its TTL, is
     * kept through its deadline's millisecond, 3ms + 10s, and is gone from
     * the next (Redis's keyIsExpired: now > when, in ms). B's tries go out every 1.002s from 1s (a 2ms round trip
     * plus 1s): the 10th leaves at 10.018s and wins. */
    x = must(e, TRACE_SRV_EXPIRE, "S1", 1);
    assert_int_equal(x->t, 10 * S + 4 * MS);
    assert_int_equal(x->peer, A);
    g = must(e, TRACE_SRV_GRANT, "S1", 2);
    assert_int_equal(g->t, 10 * S + 19 * MS);
    assert_int_equal(g->peer, B);
    assert_int_equal(must(e, TRACE_SRV_RENEW, "S1", 2)->t, 10 * S + 21 * MS);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 10 * S + 22 * MS);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(engine_report(e)->final_stock, 4);
    engine_free(e);
}

/* The seed's detail 1: a crash between SETNX and EXPIRE leaves a permanent lock. */
static void test_setnx_expire_crash_between_stuck(void **state) {
    (void)state;
    const char *text = "lock setnx-expire ttl=10s gap=100ms\n"
                       "resource stock=5\nnetwork latency=1ms\nduration 120s\nstuck-after 60s\n"
                       "client A: acquire; read; work 5s; write; release\n"
                       "client B @1s: acquire retry=1s; read; write; release\n"
                       "@50ms crash A\n";
    struct engine *e = run_text(text);
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A"), S1 = node_of(tr, "S1");
    /* t=1ms SETNX succeeds: a key with no expiry. */
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 1);
    assert_int_equal(g->t, 1 * MS);
    assert_int_equal(g->peer, A);
    assert_int_equal(g->b, SIM_NEVER);
    /* t=2ms A has SETNX's "1": it knows the key is its own. */
    const struct trace_event *rcv = must(e, TRACE_MSG_RECV, "A", 1);
    assert_int_equal(rcv->t, 2 * MS);
    assert_int_equal(rcv->peer, S1);
    assert_int_equal(rcv->b, KV_REPLY);
    /* t=50ms A dies inside its 100ms gap, before EXPIRE leaves. */
    assert_int_equal(must(e, TRACE_CRASH, "A", 1)->t, 50 * MS);
    assert_int_equal(count(e, TRACE_MSG_SEND, "A", S1, 0, 120 * S), 1); /* SETNX only */
    /* So the key never gets a TTL and never expires: no EXPIRE applied, no
     * expiry, for the whole 120s. B is refused on every try. */
    assert_null(find(e, TRACE_SRV_RENEW, NULL, 1));
    assert_null(find(e, TRACE_SRV_EXPIRE, NULL, 1));
    assert_null(find(e, TRACE_ACQUIRED, NULL, 1));
    assert_true(count(e, TRACE_SRV_DENY, "S1", -3, 1 * S, 120 * S) >= 100);

    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_STUCK);
    assert_int_equal(r->stuck, 1);
    assert_int_equal(r->acquires, 0);
    assert_int_equal(r->final_stock, 5);
    engine_free(e);

    /* Without the crash the gap only delays EXPIRE: sent at 2ms + 100ms,
     * applied at 103ms, and A holds the lock from 104ms. */
    e = run_text("lock setnx-expire ttl=10s gap=100ms\nnetwork latency=1ms\n"
                 "client A: acquire; work 1s; release\n");
    assert_int_equal(must(e, TRACE_SRV_RENEW, "S1", 1)->t, 103 * MS);
    assert_int_equal(must(e, TRACE_ACQUIRED, "A", 1)->t, 104 * MS);
    engine_free(e);
}

/* The crash may also come the moment SETNX has left (the point fires then):
 * the request still reaches the store, and the key is born without a TTL. */
static void test_setnx_expire_crash_during_acquire(void **state) {
    (void)state;
    struct engine *e = run_text("lock setnx-expire ttl=10s\n"
                                "network latency=1ms\nduration 120s\n"
                                "client A: acquire; work 5s; release\n"
                                "client B @1s: acquire retry=1s; work 1s; release\n"
                                "on A.during-acquire crash A\n");
    int A = node_of(engine_trace(e), "A");
    assert_int_equal(must(e, TRACE_CRASH, "A", 1)->t, 0);
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 1);
    assert_int_equal(g->t, 1 * MS);
    assert_int_equal(g->peer, A);
    assert_int_equal(g->b, SIM_NEVER);
    assert_null(find(e, TRACE_SRV_RENEW, NULL, 1));
    assert_null(find(e, TRACE_SRV_EXPIRE, NULL, 1));
    assert_null(find(e, TRACE_ACQUIRED, NULL, 1));
    engine_free(e);

    /* With SET NX PX the same crash leaves a key whose deadline is 1ms + 10s:
     * Redis drops it from the next millisecond. */
    e = run_text("lock lease ttl=10s\nnetwork latency=1ms\nduration 120s\n"
                 "client A: acquire; work 5s; release\n"
                 "client B @1s: acquire retry=1s; work 1s; release\n"
                 "on A.during-acquire crash A\n");
    assert_int_equal(must(e, TRACE_SRV_EXPIRE, "S1", 1)->t, 10 * S + 2 * MS);
    assert_non_null(find(e, TRACE_ACQUIRED, "B", 1));
    engine_free(e);
}

static void test_setnx_expire_options(void **state) {
    (void)state;
    struct scn_error err;
    build_fails("lock setnx-expire gap=soon\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "gap 'soon' is not a duration such as 50ms");
    build_fails("lock setnx-expire fenced=on\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "unknown option 'fenced' for setnx-expire; expected ttl, release, "
                                 "value, expiry-clock, deadline, persistence, request-timeout, gap");
}

/* ---- Redis expiry at the exact tick ------------------------------------------------------ */

/* Redis keeps a key while now <= when, both in milliseconds (db.c,
 * keyIsExpired: `return now > when;`). The rule alone, at -1, 0 and +1 tick
 * (a millisecond) around a 10s deadline, and on a wall clock set before 0. */
static void test_redis_key_expired_rule(void **state) {
    (void)state;
    assert_false(kv_key_expired(KV_DEADLINE_REDIS, 10 * S - 1 * MS, 10 * S));
    assert_false(kv_key_expired(KV_DEADLINE_REDIS, 10 * S, 10 * S));
    assert_false(kv_key_expired(KV_DEADLINE_REDIS, 10 * S + 1 * MS - 1, 10 * S)); /* still the deadline's millisecond */
    assert_true(kv_key_expired(KV_DEADLINE_REDIS, 10 * S + 1 * MS, 10 * S));
    assert_false(kv_key_expired(KV_DEADLINE_REDIS, -1 * MS - 1, -1500 * SIM_NS_PER_US)); /* ms -2 is the deadline's */
    assert_true(kv_key_expired(KV_DEADLINE_REDIS, -1 * MS, -1500 * SIM_NS_PER_US));
    assert_false(kv_key_expired(KV_DEADLINE_REDIS, SIM_TIME_MAX, SIM_NEVER));
}

/* The stores that are not Redis judge the deadline at full resolution:
 * inclusive (ShedLock's `lock_until <= now`, etcd's lessor `Remaining() <=
 * 0`) has the key gone at the deadline itself, exclusive one nanosecond
 * later; neither keeps Redis's millisecond. */
static void test_deadline_rules(void **state) {
    (void)state;
    assert_false(kv_key_expired(KV_DEADLINE_INCLUSIVE, 10 * S - 1, 10 * S));
    assert_true(kv_key_expired(KV_DEADLINE_INCLUSIVE, 10 * S, 10 * S));
    assert_false(kv_key_expired(KV_DEADLINE_EXCLUSIVE, 10 * S, 10 * S));
    assert_true(kv_key_expired(KV_DEADLINE_EXCLUSIVE, 10 * S + 1, 10 * S));
    assert_false(kv_key_expired(KV_DEADLINE_INCLUSIVE, SIM_TIME_MAX, SIM_NEVER));
    assert_false(kv_key_expired(KV_DEADLINE_EXCLUSIVE, SIM_TIME_MAX, SIM_NEVER));
}

/* The rule at the deadline, step by step, for a 10 s lease granted at 0 to
 * A (paused for good) while B asks every microsecond from 9.999 s. Each
 * store's rule decides the instant the key goes and B is granted. */
static sim_ns deadline_story(const char *lock_line, sim_ns *expire_t) {
    char text[512];
    snprintf(text, sizeof text,
             "%s\nresource stock=1 fencing=off\nnetwork latency=0ms\nduration 12s\n"
             "client A: acquire; read; write; release\n"
             "client B @9999ms: acquire retry=1us; read; write; release\n"
             "on A.after-acquire pause A 11s\n",
             lock_line);
    struct engine *e = build_engine(text, NULL);
    story_cursor = 0;
    /* t=0: A is granted the 10 s lease and pauses at once. */
    assert_int_equal(step_until_event(e, TRACE_ACQUIRED, "A")->t, 0);
    /* The store drops the key by its rule; A, paused, is not told. */
    const struct trace_event *ev = step_until_event(e, TRACE_SRV_EXPIRE, "S1");
    *expire_t = ev->t;
    assert_int_equal(so_far(e, TRACE_ACQUIRED, "B"), 0);
    /* B's next try finds the key gone. */
    sim_ns granted = step_until_event(e, TRACE_ACQUIRED, "B")->t;
    engine_free(e);
    return granted;
}

static void test_deadline_rule_per_store(void **state) {
    (void)state;
    sim_ns gone, b;
    /* Redis (lease's default): kept through the deadline's millisecond. */
    b = deadline_story("lock lease ttl=10s", &gone);
    assert_int_equal(gone, 10 * S + 1 * MS);
    assert_int_equal(b, 10 * S + 1 * MS);
    /* Inclusive: gone at the deadline itself (ShedLock, the dsdx lock server). */
    b = deadline_story("lock lease ttl=10s deadline=inclusive", &gone);
    assert_int_equal(gone, 10 * S);
    assert_int_equal(b, 10 * S);
    /* Exclusive: gone one nanosecond after it; B's next try, a microsecond on. */
    b = deadline_story("lock lease ttl=10s deadline=exclusive", &gone);
    assert_int_equal(gone, 10 * S + 1);
    assert_int_equal(b, 10 * S + 1 * SIM_NS_PER_US);
    /* fenced-lease keeps the store's Redis rule by default, and takes the
     * inclusive one when a scenario states it (ShedLock's, etcd's). */
    b = deadline_story("lock fenced-lease ttl=10s", &gone);
    assert_int_equal(gone, 10 * S + 1 * MS);
    b = deadline_story("lock fenced-lease ttl=10s deadline=inclusive", &gone);
    assert_int_equal(gone, 10 * S);
    assert_int_equal(b, 10 * S);
    /* Redis-modelled algorithms keep Redis's rule by default. */
    b = deadline_story("lock setnx-expire ttl=10s", &gone);
    assert_int_equal(gone, 10 * S + 1 * MS);
    b = deadline_story("lock lease-renew ttl=10s", &gone);
    assert_int_equal(gone, 10 * S + 1 * MS);
}

static void test_deadline_option_refused(void **state) {
    (void)state;
    struct scn_error err;
    build_fails("lock lease deadline=soon\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "deadline 'soon' is not redis (kept through the deadline's millisecond), "
                                 "inclusive (gone at now >= deadline) or exclusive (gone at now > deadline)");
    assert_int_equal(err.pos.line, 1);
    assert_int_equal(err.pos.col, 12);
}

/* The same rule in a run: A holds a 10s lease from 0 and is paused right
 * after acquiring; B tries every millisecond from 1s. A pause of TTL - 1ms
 * or exactly the TTL ends while Redis still keeps the key: A's write lands
 * and B waits for the release. One of TTL + 1ms ends after the key expired
 * at 10.001s: B takes the lock at that instant and both sell the unit. */
static void test_redis_expiry_at_the_tick(void **state) {
    (void)state;
    const sim_ns pauses[3] = {10 * S - 1 * MS, 10 * S, 10 * S + 1 * MS};
    for (int i = 0; i < 3; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "lock lease ttl=10s\nresource stock=1 fencing=off\nnetwork latency=0ms\nduration 30s\n"
                 "client A: acquire; read; write; release\n"
                 "client B @1s: acquire retry=1ms; read; write; release\n"
                 "on A.after-acquire pause A %lldms\n",
                 (long long)(pauses[i] / MS));
        struct engine *e = run_text(text);
        int A = node_of(engine_trace(e), "A"), B = node_of(engine_trace(e), "B");
        const struct checker_report *r = engine_report(e);
        const struct trace_event *w = must(e, TRACE_WRITE, "R", 1);
        if (i < 2) {
            /* A resumes at 9.999s or 10s: the key is there, A writes first. */
            assert_int_equal(w->peer, A);
            assert_int_equal(w->t, pauses[i]);
            assert_null(find(e, TRACE_SRV_EXPIRE, "S1", 1));
            assert_int_equal(must(e, TRACE_SRV_DELETE, "S1", 1)->t, pauses[i]);
            assert_int_equal(r->verdict, SCN_VERDICT_SAFE);
        } else {
            /* 10.001s: the first instant with now > when; B's try wins. */
            assert_int_equal(must(e, TRACE_SRV_EXPIRE, "S1", 1)->t, 10 * S + 1 * MS);
            const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 2);
            assert_int_equal(g->t, 10 * S + 1 * MS);
            assert_int_equal(g->peer, B);
            assert_int_equal(r->verdict, SCN_VERDICT_UNSAFE);
            assert_int_equal(r->lost_updates, 1);
        }
        engine_free(e);
    }
}


/* ---- lease-renew ------------------------------------------------------------------------ */

/* The heartbeat renews every ttl/3 while the holder works. */
static void test_lease_renew_interval(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease-renew ttl=9s\n"
                                "resource stock=5\nnetwork latency=0ms\nduration 60s\n"
                                "client A: acquire; read; work 20s; write; release\n"
                                "client B @1s: acquire retry=1s; read; write; release\n");
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A");
    const struct trace_event *g = must(e, TRACE_SRV_GRANT, "S1", 1);
    assert_int_equal(g->t, 0);
    assert_int_equal(g->a, 9 * S);
    /* Renewals at exactly 3s, 6s, ... 18s, each for the full 9s. */
    for (int i = 1; i <= 6; i++) {
        const struct trace_event *rn = must(e, TRACE_SRV_RENEW, "S1", i);
        assert_int_equal(rn->t, (sim_ns)i * 3 * S);
        assert_int_equal(rn->peer, A);
        assert_int_equal(rn->a, 9 * S);
    }
    /* The heartbeat stops with the release at 20s: no renewal of A's after it,
     * and the lease never expired. */
    assert_int_equal(count(e, TRACE_SRV_RENEW, "S1", A, 0, 60 * S), 6);
    assert_null(find(e, TRACE_SRV_EXPIRE, NULL, 1));
    assert_int_equal(must(e, TRACE_SRV_DELETE, "S1", 1)->t, 20 * S);
    /* B is refused throughout and takes over at its first try after 20s. */
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 21 * S);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_SAFE);
    assert_int_equal(engine_report(e)->double_entries, 0);
    engine_free(e);

    /* The next renewal is armed when the previous one's answer arrives (as
     * Redisson's watchdog does), so with 1ms each way the period is 3s + 2ms:
     * granted at 1ms, renewed at 3.003s, 6.005s, 9.007s. */
    e = run_text("lock lease-renew ttl=9s\nnetwork latency=1ms\nduration 10s\n"
                 "client A: acquire; work 20s; release\n");
    assert_int_equal(must(e, TRACE_SRV_RENEW, "S1", 1)->t, 3 * S + 3 * MS);
    assert_int_equal(must(e, TRACE_SRV_RENEW, "S1", 2)->t, 6 * S + 5 * MS);
    assert_int_equal(must(e, TRACE_SRV_RENEW, "S1", 3)->t, 9 * S + 7 * MS);
    engine_free(e);

    /* renew-interval gives the period directly. */
    e = run_text("lock lease-renew ttl=9s renew-interval=2s\nnetwork latency=0ms\nduration 7s\n"
                 "client A: acquire; work 20s; release\n");
    assert_int_equal(count(e, TRACE_SRV_RENEW, "S1", -3, 0, 7 * S), 3);
    assert_int_equal(must(e, TRACE_SRV_RENEW, "S1", 3)->t, 6 * S);
    engine_free(e);
}

/* Seed: "the heartbeat thread can be paused by the same GC pause that stalled the work". */
static void test_lease_renew_pause_freezes_heartbeat(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease-renew ttl=9s\n"
                                "resource stock=5\nnetwork latency=0ms\nduration 60s\n"
                                "client A: acquire; read; work 20s; write; release\n"
                                "client B @10s: acquire retry=1s; read; write; work 10s; release\n"
                                "@7s pause A 10s\n");
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A"), B = node_of(tr, "B"), S1 = node_of(tr, "S1");
    /* t=0 grant; renewals at 3s and 6s; the lease now runs to 6s + 9s = 15s. */
    assert_int_equal(must(e, TRACE_SRV_RENEW, "S1", 1)->t, 3 * S);
    assert_int_equal(must(e, TRACE_SRV_RENEW, "S1", 2)->t, 6 * S);
    /* t=7s..17s A is paused: its heartbeat, due at 9s, is frozen with it. No
     * renewal request leaves A and no renewal of A's happens during the pause. */
    assert_int_equal(must(e, TRACE_PAUSE, "A", 1)->t, 7 * S);
    assert_int_equal(count(e, TRACE_MSG_SEND, "A", S1, 7 * S, 17 * S - 1), 0);
    assert_int_equal(count(e, TRACE_SRV_RENEW, "S1", A, 6 * S + 1, 60 * S), 0);
    /* t=15s is the deadline, last renewal + TTL: Redis keeps the key through
     * that millisecond (keyIsExpired: now > when), so B's try at 15s is
     * refused; t=15.001s the key expires; t=16s B's next try wins. */
    const struct trace_event *x = must(e, TRACE_SRV_EXPIRE, "S1", 1);
    assert_int_equal(x->t, 15 * S + 1 * MS);
    assert_int_equal(x->peer, A);
    assert_int_equal(must(e, TRACE_ACQUIRED, "B", 1)->t, 16 * S);
    /* t=17s A resumes; the overdue heartbeat fires at once and is refused. */
    assert_int_equal(must(e, TRACE_RESUME, "A", 1)->t, 17 * S);
    const struct trace_event *hb = must(e, TRACE_MSG_SEND, "A", 5);
    assert_int_equal(hb->t, 17 * S);
    assert_int_equal(hb->b, KV_CAE);
    const struct trace_event *lost = note(e, "A", NOTE_EXACT, "renewal failed: lock lost", 1);
    assert_non_null(lost);
    assert_int_equal(lost->t, 17 * S);
    assert_int_equal(lost->a, 2); /* renewals that succeeded before */
    assert_int_equal(lost->b, 0); /* on-lost=continue */
    /* t=20s A, like most clients, carries on and writes: accepted, stale. */
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w->t, 20 * S);
    assert_int_equal(w->peer, A);
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    const struct trace_event *de = must(e, TRACE_DOUBLE_ENTRY_BEGIN, NULL, 1);
    assert_int_equal(de->t, 16 * S);
    assert_int_equal(de->node, B);

    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(r->double_entry_ns, 4 * S); /* 16s .. A's release at 20s */
    assert_int_equal(r->stale_accepted, 1);
    assert_int_equal(r->lost_updates, 1);
    engine_free(e);
}

/* on-lost=abort: a client that has learnt its lease is gone abandons the write. */
static void test_lease_renew_on_lost_abort(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease-renew ttl=9s on-lost=abort\n"
                                "resource stock=5\nnetwork latency=0ms\nduration 60s\n"
                                "client A: acquire; read; work 20s; write; release\n"
                                "client B @10s: acquire retry=1s; read; write; work 10s; release\n"
                                "@7s pause A 10s\n");
    const struct trace *tr = engine_trace(e);
    int A = node_of(tr, "A"), B = node_of(tr, "B");
    /* t=17s the renewal is refused and A records the loss (b=1: it will abort). */
    const struct trace_event *lost = note(e, "A", NOTE_EXACT, "renewal failed: lock lost", 1);
    assert_non_null(lost);
    assert_int_equal(lost->t, 17 * S);
    assert_int_equal(lost->b, 1);
    /* t=20s A's work ends; it knows the lock is lost, and the write never leaves. */
    const struct trace_event *sk = must(e, TRACE_WRITE_SKIPPED, "A", 1);
    assert_int_equal(sk->t, 20 * S);
    assert_int_equal(sk->a, TRACE_SKIP_LOST);
    assert_int_equal(count(e, TRACE_WRITE, "R", A, 0, 60 * S), 0);
    assert_int_equal(count(e, TRACE_WRITE, "R", B, 0, 60 * S), 1);
    /* Knowing the lock is lost, A left its critical section at 17s, so its
     * release step has nothing to release: no request reaches S1. */
    const struct trace_event *x = must(e, TRACE_CS_EXIT, "A", 1);
    assert_int_equal(x->t, 17 * S);
    assert_int_equal(x->a, TRACE_EXIT_LOST);
    assert_null(find(e, TRACE_SRV_KEEP, "S1", 1));

    const struct checker_report *r = engine_report(e);
    assert_int_equal(r->stale_accepted, 0);
    assert_int_equal(r->lost_updates, 0);
    assert_int_equal(r->final_stock, 4);
    /* Still UNSAFE: from 16s (B's first try after the key expired at
     * 15.001s) to 17s A was "inside" (paused, believing it held the lock)
     * while B held it, and nothing fenced them. */
    assert_int_equal(r->verdict, SCN_VERDICT_UNSAFE);
    assert_int_equal(r->double_entries, 1);
    assert_int_equal(r->double_entry_ns, 1 * S);
    engine_free(e);
}

/* checks-loss=no (issue 11 item 13): a consensus holder stopped for 4s.
 * Its algorithm learns from a refused keep-alive at 6.004s that the lease is
 * gone. Told (the default), the program leaves its critical section then and
 * skips its write at 6.51s; not told, it stays inside and the write lands at
 * 6.511s, after B's (4.015s): accepted though stale. */
static const char *NEVER_TOLD = "lock consensus ttl=2s first-candidate=S1\n"
                                "resource stock=1 fencing=off\nnetwork latency=1ms\nduration 20s\n"
                                "client A @1s checks-loss=%s: acquire; read; work 5500ms; write; release\n"
                                "client B @3s: acquire retry=500ms; read; write; release\n"
                                "@2s pause A 4s\n";

static void test_program_never_told_of_loss(void **state) {
    (void)state;
    char text[512];
    snprintf(text, sizeof text, NEVER_TOLD, "no");
    struct engine *e = run_text(text);
    int A = node_of(engine_trace(e), "A");
    const struct trace_event *gone = note(e, "A", NOTE_EXACT, "keep-alive refused: its lease is gone", 1);
    assert_non_null(gone);
    assert_int_equal(gone->t, 6 * S + 4 * MS);
    const struct trace_event *untold = note(e, "A", NOTE_EXACT,
                                            "lock lost, but the program is not told (checks-loss=no): it goes on", 1);
    assert_non_null(untold);
    assert_int_equal(untold->t, 6 * S + 4 * MS);
    assert_null(find(e, TRACE_WRITE_SKIPPED, "A", 1));
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w->peer, A);
    assert_int_equal(w->t, 6 * S + 511 * MS);
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    const struct trace_event *x = must(e, TRACE_CS_EXIT, "A", 1);
    assert_int_equal(x->a, TRACE_EXIT_RELEASE);
    assert_int_equal(engine_report(e)->stale_accepted, 1);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_UNSAFE);
    engine_free(e);

    snprintf(text, sizeof text, NEVER_TOLD, "yes");
    e = run_text(text);
    assert_null(note(e, "A", NOTE_EXACT, "lock lost, but the program is not told (checks-loss=no): it goes on", 1));
    x = must(e, TRACE_CS_EXIT, "A", 1);
    assert_int_equal(x->t, 6 * S + 4 * MS);
    assert_int_equal(x->a, TRACE_EXIT_LOST);
    const struct trace_event *sk = must(e, TRACE_WRITE_SKIPPED, "A", 1);
    assert_int_equal(sk->a, TRACE_SKIP_LOST);
    assert_int_equal(count(e, TRACE_WRITE, "R", A, 0, 20 * S), 0);
    assert_int_equal(engine_report(e)->stale_accepted, 0);
    assert_int_equal(engine_report(e)->lost_updates, 0);
    engine_free(e);
}

/* The abort comes too late when the write follows the resume at once: the
 * renewal's refusal is still on the wire when the write leaves. */
static void test_lease_renew_abort_too_late(void **state) {
    (void)state;
    struct engine *e = run_text("lock lease-renew ttl=9s on-lost=abort\n"
                                "resource stock=5\nnetwork latency=1ms\nduration 60s\n"
                                "client A: acquire; read; work 10s; write; release\n"
                                "client B @10s: acquire retry=1s; read; write; work 10s; release\n"
                                "@7s pause A 10s\n");
    int A = node_of(engine_trace(e), "A");
    /* Renewed at 3.003s and 6.005s; the deadline is 15.005s, and the key
     * is gone from the next millisecond. */
    assert_int_equal(must(e, TRACE_SRV_EXPIRE, "S1", 1)->t, 15 * S + 6 * MS);
    /* t=17s A resumes: the overdue heartbeat and the end of the work run
     * together. The write leaves at 17s and lands at 17.001s, accepted; the
     * renewal's refusal reaches A only at 17.002s. */
    const struct trace_event *w = must(e, TRACE_WRITE, "R", 2);
    assert_int_equal(w->peer, A);
    assert_int_equal(w->t, 17 * S + 1 * MS);
    assert_int_equal(w->b, TRACE_WRITE_ACCEPTED);
    assert_int_equal(note(e, "A", NOTE_EXACT, "renewal failed: lock lost", 1)->t, 17 * S + 2 * MS);
    assert_null(find(e, TRACE_WRITE_SKIPPED, "A", 1));
    assert_int_equal(engine_report(e)->stale_accepted, 1);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_UNSAFE);
    engine_free(e);
}

static void test_lease_renew_options(void **state) {
    (void)state;
    struct scn_error err;
    build_fails("lock lease-renew renew-every=3 renew-interval=2s\nclient A: acquire\n", &err);
    assert_int_equal(err.pos.col, 32);
    assert_string_equal(err.msg, "renew-every and renew-interval both set the renewal interval; give one of them");
    build_fails("lock lease-renew renew-every=1\nclient A: acquire\n", &err);
    assert_non_null(strstr(err.msg, "renew-every '1' is not a divisor"));
    build_fails("lock lease-renew on-lost=panic\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "on-lost 'panic' is not continue or abort");
    build_fails("lock lease-renew heartbeat=1s\nclient A: acquire\n", &err);
    assert_string_equal(err.msg, "unknown option 'heartbeat' for lease-renew; expected ttl, release, value, "
                                 "expiry-clock, deadline, renew-expired, persistence, request-timeout, "
                                 "renew-every, renew-interval, on-lost, tokens");
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_local_mutex_instances_grant_at_once),
            cmocka_unit_test(test_local_mutex_threads_serialize),
            cmocka_unit_test(test_local_mutex_threads_one_pause_stops_all),
            cmocka_unit_test(test_local_mutex_options),
            cmocka_unit_test(test_setnx_expire_sets_ttl),
            cmocka_unit_test(test_setnx_expire_crash_between_stuck),
            cmocka_unit_test(test_setnx_expire_crash_during_acquire),
            cmocka_unit_test(test_setnx_expire_options),
            cmocka_unit_test(test_redis_key_expired_rule),
            cmocka_unit_test(test_deadline_rules),
            cmocka_unit_test(test_deadline_rule_per_store),
            cmocka_unit_test(test_deadline_option_refused),
            cmocka_unit_test(test_redis_expiry_at_the_tick),
            cmocka_unit_test(test_lease_renew_interval),
            cmocka_unit_test(test_lease_renew_pause_freezes_heartbeat),
            cmocka_unit_test(test_lease_renew_on_lost_abort),
            cmocka_unit_test(test_program_never_told_of_loss),
            cmocka_unit_test(test_lease_renew_abort_too_late),
            cmocka_unit_test(test_lease_renew_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
