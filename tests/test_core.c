/* Unit tests of the engine's building blocks: the event queue's order (also
 * merged with an event held outside it), the clock model's arithmetic, the
 * PRNG's reproducibility, the scenario's arrays grown on demand, the trace's
 * numbering, the checker's lock holders, and what the engine keeps of a
 * large scenario. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "checker.h"
#include "clock.h"
#include "engine.h"
#include "queue.h"
#include "rng.h"
#include "scenario.h"
#include "trace.h"

/* Events pop by time; equal times pop in insertion order. */
static void test_queue_order_and_ties(void **state) {
    (void)state;
    struct queue q;
    queue_init(&q);
    sim_ns times[] = {50, 10, 30, 10, 50, 10, 0};
    for (int i = 0; i < 7; i++) {
        struct sim_event ev = {.t = times[i], .arg = (uint64_t)i};
        assert_int_equal(queue_push(&q, &ev), 0);
    }
    /* 0 (#6), then the three 10s in the order pushed (#1, #3, #5), 30 (#2), 50 (#0, #4). */
    uint64_t want[] = {6, 1, 3, 5, 2, 0, 4};
    for (int i = 0; i < 7; i++) {
        struct sim_event ev;
        assert_int_equal(queue_pop(&q, &ev), 0);
        assert_int_equal(ev.arg, want[i]);
    }
    struct sim_event ev;
    assert_int_equal(queue_pop(&q, &ev), -1);
    queue_close(&q);
}

/* The engine's entry points (queue_push_small, queue_pop_fast) mixed with
 * queue_push and queue_pop, with many ties, through the small queue and past
 * QUEUE_SMALL into the wheel: every pop is the (time, push order) minimum of
 * a plain list of what is queued. */
static void test_queue_fast_paths_match_model(void **state) {
    (void)state;
    enum { N = 3 * QUEUE_SMALL };
    static sim_ns mt[N];
    static uint64_t mid[N];
    int mlen = 0;
    struct queue q;
    queue_init(&q);
    struct rng r;
    rng_seed(&r, 11);
    uint64_t next = 0;
    sim_ns now = 0;
    int pops = 0;
    for (int step = 0; step < 4 * N; step++) {
        int push = mlen == 0 || (next < N && rng_range(&r, 0, 9) < 8);
        if (push && next < N) {
            /* Ties on purpose: times on a coarse grid near now, some far. */
            sim_ns t = now + rng_range(&r, 0, 20) * 500 * SIM_NS_PER_MS / 10;
            if (rng_range(&r, 0, 9) == 0) t += 30 * SIM_NS_PER_S;
            uint64_t id = next++;
            if (id % 3 == 0) {
                struct sim_event ev = {.t = t, .type = 7, .node = 2, .arg = id};
                assert_int_equal(queue_push(&q, &ev), 0);
            } else {
                assert_int_equal(queue_push_small(&q, t, 7, 2, id), 0);
            }
            mt[mlen] = t;
            mid[mlen] = id;
            mlen++;
        } else if (mlen) {
            int best = 0;
            for (int i = 1; i < mlen; i++)
                if (mt[i] < mt[best] || (mt[i] == mt[best] && mid[i] < mid[best])) best = i;
            struct sim_event ev;
            assert_int_equal(pops % 2 ? queue_pop(&q, &ev) : queue_pop_fast(&q, &ev), 0);
            pops++;
            assert_int_equal(ev.t, mt[best]);
            assert_int_equal(ev.arg, mid[best]);
            assert_int_equal(ev.type, 7);
            assert_int_equal(ev.node, 2);
            now = ev.t;
            mt[best] = mt[mlen - 1];
            mid[best] = mid[mlen - 1];
            mlen--;
        }
        assert_int_equal(queue_len(&q), (size_t)mlen);
    }
    assert_true(q.wheel_on); /* the run went past QUEUE_SMALL */
    struct sim_event ev;
    while (mlen) {
        assert_int_equal(queue_pop_fast(&q, &ev), 0);
        mlen--;
    }
    assert_int_equal(queue_pop_fast(&q, &ev), -1);
    queue_close(&q);
}

/* Many events at one time keep their order through growth and interleaving. */
static void test_queue_fifo_at_scale(void **state) {
    (void)state;
    struct queue q;
    queue_init(&q);
    struct rng r;
    rng_seed(&r, 3);
    for (uint64_t i = 0; i < 20000; i++) {
        struct sim_event ev = {.t = rng_range(&r, 0, 99), .arg = i};
        assert_int_equal(queue_push(&q, &ev), 0);
    }
    sim_ns last_t = -1;
    uint64_t last_arg = 0;
    for (int i = 0; i < 20000; i++) {
        struct sim_event ev;
        assert_int_equal(queue_pop(&q, &ev), 0);
        assert_true(ev.t >= last_t);
        if (ev.t == last_t) assert_true(ev.arg > last_arg);
        last_t = ev.t;
        last_arg = ev.arg;
    }
    assert_int_equal(queue_len(&q), 0);
    queue_close(&q);
}

/* The queue keeps three parts (the current 1 us bucket, a wheel of the next
 * 4.096 ms, a heap beyond); an event's time decides its part when pushed.
 * Equal times must still pop in push order when they went to different
 * parts: here time 10 ms is pushed while it is far, then while it is on the
 * wheel, then while it is the current bucket. */
static void test_queue_fifo_across_parts(void **state) {
    (void)state;
    struct queue q;
    queue_init(&q);
    const sim_ns t10 = 10 * SIM_NS_PER_MS;
    struct sim_event ev = {.t = 0, .arg = 100};
    assert_int_equal(queue_push(&q, &ev), 0);
    /* At time 0, 10 ms is beyond the wheel: #1 and #2 go to the far heap. */
    ev = (struct sim_event){.t = t10, .arg = 1};
    assert_int_equal(queue_push(&q, &ev), 0);
    ev = (struct sim_event){.t = t10, .arg = 2};
    assert_int_equal(queue_push(&q, &ev), 0);
    ev = (struct sim_event){.t = 8 * SIM_NS_PER_MS, .arg = 101};
    assert_int_equal(queue_push(&q, &ev), 0);
    /* Pop 0 ms and 8 ms: now 10 ms is 2 ms ahead, on the wheel: #3 goes there. */
    assert_int_equal(queue_pop(&q, &ev), 0);
    assert_int_equal(ev.arg, 100);
    assert_int_equal(queue_pop(&q, &ev), 0);
    assert_int_equal(ev.t, 8 * SIM_NS_PER_MS);
    ev = (struct sim_event){.t = t10, .arg = 3};
    assert_int_equal(queue_push(&q, &ev), 0);
    ev = (struct sim_event){.t = t10 + 1, .arg = 4}; /* same bucket, 1 ns later */
    assert_int_equal(queue_push(&q, &ev), 0);
    /* The first pop at 10 ms makes it current; #5 is pushed at 10 ms then. */
    assert_int_equal(queue_pop(&q, &ev), 0);
    assert_int_equal(ev.t, t10);
    assert_int_equal(ev.arg, 1);
    ev = (struct sim_event){.t = t10, .arg = 5};
    assert_int_equal(queue_push(&q, &ev), 0);
    /* 10 ms in push order (#2 far, #3 wheel, #5 current), then 10 ms + 1 ns. */
    uint64_t want[] = {2, 3, 5, 4};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(queue_pop(&q, &ev), 0);
        assert_int_equal(ev.arg, want[i]);
    }
    assert_int_equal(queue_pop(&q, &ev), -1);
    assert_int_equal(queue_len(&q), 0);
    queue_close(&q);
}

/* Several times inside one 1 us bucket of the wheel, pushed out of order,
 * and a push at an earlier time than the last pop: both still pop by
 * (time, push order). */
static void test_queue_out_of_order_and_earlier_pushes(void **state) {
    (void)state;
    struct queue q;
    queue_init(&q);
    sim_ns base = 2 * SIM_NS_PER_MS; /* on the wheel: within 4.096 ms of time 0 */
    sim_ns times[] = {base + 700, base + 200, base + 700, base + 200, base + 999, base};
    for (int i = 0; i < 6; i++) {
        struct sim_event ev = {.t = times[i], .arg = (uint64_t)i};
        assert_int_equal(queue_push(&q, &ev), 0);
    }
    assert_int_equal(queue_peek_time(&q), base);
    struct sim_event ev;
    assert_int_equal(queue_pop(&q, &ev), 0);
    assert_int_equal(ev.arg, 5); /* base */
    /* Now push 1 ms earlier than what was just popped: it is the earliest. */
    ev = (struct sim_event){.t = SIM_NS_PER_MS, .arg = 6};
    assert_int_equal(queue_push(&q, &ev), 0);
    assert_int_equal(queue_peek_time(&q), SIM_NS_PER_MS);
    uint64_t want[] = {6, 1, 3, 0, 2, 4};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(queue_pop(&q, &ev), 0);
        assert_int_equal(ev.arg, want[i]);
    }
    assert_int_equal(queue_peek_time(&q), SIM_NEVER);
    /* A bucket stores its events in blocks. After k in-order events (every k
     * up to 40, so that some push opens a new block whatever its size), an
     * earlier time pushed into the same bucket must still pop first. */
    for (int k = 1; k <= 40; k++) {
        sim_ns b = 3 * SIM_NS_PER_MS + k * 10 * SIM_NS_PER_US;
        for (int i = 0; i < k; i++) {
            ev = (struct sim_event){.t = b + 500, .arg = (uint64_t)(1000 * k + i + 1)};
            assert_int_equal(queue_push(&q, &ev), 0);
        }
        ev = (struct sim_event){.t = b + 100, .arg = (uint64_t)(1000 * k)};
        assert_int_equal(queue_push(&q, &ev), 0);
    }
    for (int k = 1; k <= 40; k++)
        for (int i = 0; i <= k; i++) {
            assert_int_equal(queue_pop(&q, &ev), 0);
            assert_int_equal(ev.arg, (uint64_t)(1000 * k + i));
        }
    queue_close(&q);
}

/* A plain binary heap keyed (time, push number): the obvious correct
 * queue, to compare the real one with. */
struct model {
    struct sim_event *h;
    size_t len, cap;
    uint64_t seq;
};

static int model_less(const struct sim_event *a, const struct sim_event *b) {
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void model_push(struct model *m, struct sim_event ev) {
    if (m->len == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 1024;
        m->h = realloc(m->h, m->cap * sizeof *m->h);
        assert_non_null(m->h);
    }
    ev.seq = m->seq++;
    size_t i = m->len++;
    while (i > 0 && model_less(&ev, &m->h[(i - 1) / 2])) {
        m->h[i] = m->h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    m->h[i] = ev;
}

static struct sim_event model_pop(struct model *m) {
    struct sim_event top = m->h[0], last = m->h[--m->len];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= m->len) break;
        if (c + 1 < m->len && model_less(&m->h[c + 1], &m->h[c])) c++;
        if (!model_less(&m->h[c], &last)) break;
        m->h[i] = m->h[c];
        i = c;
    }
    if (m->len) m->h[i] = last;
    return top;
}

/* A delay as a simulation makes them: now, whole microseconds up to a
 * millisecond, any nanosecond count, beyond the wheel, far beyond, and now
 * and then a time before now. */
static sim_ns model_delay(struct rng *r) {
    switch (rng_range(r, 0, 9)) {
    case 0:
    case 1: return 0;
    case 2:
    case 3:
    case 4: return rng_range(r, 1, 1000) * SIM_NS_PER_US;
    case 5: return rng_range(r, 0, 5000);
    case 6: return rng_range(r, 0, 3 * SIM_NS_PER_MS);
    case 7: return rng_range(r, 4 * SIM_NS_PER_MS, 30 * SIM_NS_PER_MS);
    case 8: return rng_range(r, 1, 10) * SIM_NS_PER_S;
    default: return -rng_range(r, 0, 2 * SIM_NS_PER_MS);
    }
}

/* 400 000 random pushes and pops, with bursts that grow and drain the
 * queue: the same (time, push order) sequence as the model, always. */
static void test_queue_matches_model(void **state) {
    (void)state;
    struct queue q;
    queue_init(&q);
    struct model m = {0};
    struct rng r;
    rng_seed(&r, 11);
    sim_ns now = -SIM_NS_PER_MS; /* negative times order too */
    uint64_t next_arg = 0;
    for (int step = 0; step < 400000; step++) {
        int phase = (step / 50000) % 2; /* grow, then drain */
        int push = queue_len(&q) == 0 || rng_range(&r, 0, 99) < (phase ? 35 : 65);
        if (push) {
            struct sim_event ev = {.t = now + model_delay(&r), .arg = next_arg++};
            ev.node = (int32_t)(ev.arg % 7);
            assert_int_equal(queue_push(&q, &ev), 0);
            model_push(&m, ev);
        } else {
            struct sim_event got, want = model_pop(&m);
            assert_int_equal(queue_peek_time(&q), want.t);
            assert_int_equal(queue_pop(&q, &got), 0);
            assert_int_equal(got.t, want.t);
            assert_int_equal(got.arg, want.arg);
            assert_int_equal(got.node, want.node);
            if (got.t > now) now = got.t;
        }
        assert_int_equal(queue_len(&q), m.len);
    }
    while (m.len) {
        struct sim_event got, want = model_pop(&m);
        assert_int_equal(queue_pop(&q, &got), 0);
        assert_int_equal(got.arg, want.arg);
    }
    assert_int_equal(queue_pop(&q, &(struct sim_event){0}), -1);
    free(m.h);
    queue_close(&q);
}

/* The engine holds one continuation outside the queue with a seq taken
 * from it (queue_take_seq) and takes it when no queued event comes first
 * (queue_has_before). That merge must give exactly the queue's own order:
 * here every push at the current time goes to such a held slot when it is
 * free, 300 000 random steps against the model that queues everything. */
static void test_queue_held_event_merges(void **state) {
    (void)state;
    struct queue q;
    queue_init(&q);
    struct model m = {0};
    struct rng r;
    rng_seed(&r, 17);
    sim_ns now = 0;
    uint64_t next_arg = 0;
    struct sim_event held = {0};
    int held_full = 0;
    size_t taken_from_hold = 0;
    for (int step = 0; step < 300000; step++) {
        size_t len = queue_len(&q) + (size_t)held_full;
        int phase = (step / 30000) % 2;
        if (len == 0 || rng_range(&r, 0, 99) < (phase ? 40 : 60)) {
            sim_ns d = model_delay(&r);
            if (d < 0) d = 0; /* the engine pushes nothing into the past */
            struct sim_event ev = {.t = now + d, .arg = next_arg++};
            if (d == 0 && !held_full) { /* as client_continue_later does */
                held = ev;
                held.seq = queue_take_seq(&q);
                held_full = 1;
            } else {
                assert_int_equal(queue_push(&q, &ev), 0);
            }
            model_push(&m, ev); /* same push number as the seq taken */
        } else {
            struct sim_event got, want = model_pop(&m);
            if (held_full && !queue_has_before(&q, held.t, held.seq)) { /* as engine_step does */
                got = held;
                held_full = 0;
                taken_from_hold++;
            } else {
                assert_int_equal(queue_pop(&q, &got), 0);
            }
            assert_int_equal(got.t, want.t);
            assert_int_equal(got.arg, want.arg);
            now = got.t;
        }
        assert_int_equal(queue_len(&q) + (size_t)held_full, m.len);
    }
    assert_true(taken_from_hold > 10000); /* the held slot was really used */
    free(m.h);
    queue_close(&q);
}

/* The engine's re-armed timers (engine_timer.c): an event whose place in
 * the order is fixed by a seq taken now (queue_take_seq) but which is
 * queued later, with queue_push_seq, when an earlier "carrier" entry pops.
 * Here a third of the pushes go so, each with a carrier at a time between
 * now and its own; the carrier is popped and not compared, and the events
 * must come out in the model's order, which queues each event at once with
 * the same push number. 300 000 steps, small queue and wheel alike. */
static void test_queue_keyed_push_matches_model(void **state) {
    (void)state;
    struct queue q;
    queue_init(&q);
    struct model m = {0};
    struct rng r;
    rng_seed(&r, 29);
    sim_ns now = 0;
    uint64_t next_arg = 0;
    enum { MAXK = 1 << 16 };
    struct sim_event *keyed = calloc(MAXK, sizeof *keyed); /* by carrier number */
    assert_non_null(keyed);
    uint32_t nkeyed = 0, carriers = 0;
    size_t waiting = 0; /* keyed events whose carrier is still queued */
    for (int step = 0; step < 300000; step++) {
        int phase = (step / 30000) % 2; /* grow past QUEUE_SMALL, then drain */
        size_t len = queue_len(&q);
        if (len == 0 || rng_range(&r, 0, 99) < (phase ? 40 : 60)) {
            sim_ns d = model_delay(&r);
            if (d < 0) d = 0;
            struct sim_event ev = {.t = now + d, .arg = next_arg++};
            if (nkeyed < MAXK && rng_range(&r, 0, 2) == 0) {
                struct sim_event c = {.t = now + (d ? rng_range(&r, 0, d) : 0), .type = 1, .arg = nkeyed};
                assert_int_equal(queue_push(&q, &c), 0); /* the carrier: queued first */
                keyed[nkeyed] = ev;
                keyed[nkeyed++].seq = queue_take_seq(&q);
                waiting++;
            } else {
                assert_int_equal(queue_push(&q, &ev), 0);
            }
            model_push(&m, ev);
        } else {
            struct sim_event got, want = model_pop(&m);
            for (;;) {
                assert_int_equal(queue_pop(&q, &got), 0);
                if (got.type != 1) break;
                assert_true(got.t <= keyed[got.arg].t);
                assert_int_equal(queue_push_seq(&q, &keyed[got.arg]), 0); /* as the carrier's pop does */
                waiting--;
                carriers++;
            }
            assert_int_equal(got.t, want.t);
            assert_int_equal(got.arg, want.arg);
            now = got.t;
        }
        assert_int_equal(queue_len(&q), m.len);
    }
    while (m.len) { /* the rest, carriers and all */
        struct sim_event got, want = model_pop(&m);
        do {
            assert_int_equal(queue_pop(&q, &got), 0);
            if (got.type == 1) {
                assert_int_equal(queue_push_seq(&q, &keyed[got.arg]), 0);
                waiting--;
                carriers++;
            }
        } while (got.type == 1);
        assert_int_equal(got.arg, want.arg);
    }
    assert_int_equal(waiting, 0);
    assert_int_equal(carriers, nkeyed);
    assert_true(carriers > 40000);
    assert_int_equal(q.wheel_on, 1);
    free(keyed);
    free(m.h);
    queue_close(&q);
}

/* A small queue (never more than QUEUE_SMALL events) stays the heap alone;
 * the push past it turns the wheel on with every event where it was, and
 * the order is the model's before, across and after the change, with ties
 * and times before the last pop on both sides. */
static void test_queue_small_then_wheel(void **state) {
    (void)state;
    struct queue q;
    queue_init(&q);
    struct model m = {0};
    struct rng r;
    rng_seed(&r, 23);
    sim_ns now = 0;
    uint64_t next_arg = 0;
    for (int step = 0; step < 60000; step++) {
        /* Up to 40 000: keep under QUEUE_SMALL; then let it grow past it. */
        size_t cap = step < 40000 ? QUEUE_SMALL - 1 : 100000;
        int push = queue_len(&q) == 0 || (queue_len(&q) < cap && rng_range(&r, 0, 99) < 55);
        if (step == 40000) assert_int_equal(q.wheel_on, 0); /* 40 000 steps, still the heap */
        if (push) {
            struct sim_event ev = {.t = now + model_delay(&r), .arg = next_arg++};
            assert_int_equal(queue_push(&q, &ev), 0);
            model_push(&m, ev);
        } else {
            struct sim_event got, want = model_pop(&m);
            assert_int_equal(queue_peek_time(&q), want.t);
            /* The heap alone answers for any time (the wheel only up to the last pop's). */
            if (!q.wheel_on) {
                assert_true(queue_has_before(&q, want.t, UINT64_MAX));
                assert_false(queue_has_before(&q, want.t, 0));
            }
            assert_int_equal(queue_pop(&q, &got), 0);
            assert_int_equal(got.t, want.t);
            assert_int_equal(got.arg, want.arg);
            if (got.t > now) now = got.t;
        }
        assert_int_equal(queue_len(&q), m.len);
    }
    assert_int_equal(q.wheel_on, 1); /* it grew past QUEUE_SMALL */
    while (m.len) {
        struct sim_event got, want = model_pop(&m);
        assert_int_equal(queue_pop(&q, &got), 0);
        assert_int_equal(got.arg, want.arg);
    }
    assert_int_equal(queue_pop(&q, &(struct sim_event){0}), -1);
    free(m.h);
    queue_close(&q);
}

/* A steady simulation (every pop pushes one event a little later) does not
 * allocate once warmed up, and a burst of 100 000 events at one time does
 * not keep its memory once it has drained. */
static void test_queue_memory_steady(void **state) {
    (void)state;
    struct queue q;
    queue_init(&q);
    struct rng r;
    rng_seed(&r, 5);
    for (int i = 0; i < 100000; i++) { /* every client starts at time 0 */
        struct sim_event ev = {.t = 0, .arg = (uint64_t)i};
        assert_int_equal(queue_push(&q, &ev), 0);
    }
    struct sim_event ev;
    for (int i = 0; i < 100000; i++) { /* each start arms a timer 1..1000 us later */
        assert_int_equal(queue_pop(&q, &ev), 0);
        ev.t += rng_range(&r, 1, 1000) * SIM_NS_PER_US;
        assert_int_equal(queue_push(&q, &ev), 0);
    }
    for (int i = 0; i < 200000; i++) { /* warm up */
        assert_int_equal(queue_pop(&q, &ev), 0);
        ev.t += rng_range(&r, 1, 1000) * SIM_NS_PER_US;
        assert_int_equal(queue_push(&q, &ev), 0);
    }
    /* The burst's run array was given back: it now fits a bucket, not 100 000. */
    assert_true(q.run_cap < 16384);
    size_t run_cap = q.run_cap, near_cap = q.near_cap, far_cap = q.far_cap;
    uint32_t pool_cap = q.pool_cap;
    for (int i = 0; i < 1000000; i++) {
        assert_int_equal(queue_pop(&q, &ev), 0);
        ev.t += rng_range(&r, 1, 1000) * SIM_NS_PER_US;
        assert_int_equal(queue_push(&q, &ev), 0);
    }
    assert_int_equal(queue_len(&q), 100000);
    assert_int_equal(q.run_cap, run_cap);
    assert_int_equal(q.near_cap, near_cap);
    assert_int_equal(q.far_cap, far_cap);
    assert_int_equal(q.pool_cap, pool_cap);
    queue_close(&q);
}

/* Readings follow local = true * (1 + ppm/1e6) + offset, exactly. */
static void test_clock_read_and_inverse(void **state) {
    (void)state;
    struct sim_clock c;
    clock_init(&c, 2 * SIM_NS_PER_S, 100); /* +2s offset, 100 ppm fast */
    assert_int_equal(clock_read(&c, 0), 2 * SIM_NS_PER_S);
    assert_int_equal(clock_read(&c, 10 * SIM_NS_PER_S), 12 * SIM_NS_PER_S + 1 * SIM_NS_PER_MS);
    /* When does it read 12.001s? At exactly 10s of true time. */
    assert_int_equal(clock_true_at(&c, 0, 12 * SIM_NS_PER_S + SIM_NS_PER_MS), 10 * SIM_NS_PER_S);
    /* Already past: now. */
    assert_int_equal(clock_true_at(&c, 5, 0), 5);
}

/* A step moves the reading at once; a drift change only from then on. */
static void test_clock_step_and_drift(void **state) {
    (void)state;
    struct sim_clock c;
    clock_init(&c, 0, 0);
    clock_step(&c, 5 * SIM_NS_PER_S, 25 * SIM_NS_PER_S);
    assert_int_equal(clock_read(&c, 5 * SIM_NS_PER_S), 30 * SIM_NS_PER_S);
    assert_int_equal(clock_true_at(&c, 5 * SIM_NS_PER_S, 30 * SIM_NS_PER_S), 5 * SIM_NS_PER_S);
    clock_step(&c, 6 * SIM_NS_PER_S, -20 * SIM_NS_PER_S); /* backwards */
    assert_int_equal(clock_read(&c, 6 * SIM_NS_PER_S), 11 * SIM_NS_PER_S);
    clock_set_ppm(&c, 6 * SIM_NS_PER_S, -500000); /* half speed from 6s */
    assert_int_equal(clock_read(&c, 8 * SIM_NS_PER_S), 12 * SIM_NS_PER_S);
    assert_int_equal(clock_true_at(&c, 6 * SIM_NS_PER_S, 12 * SIM_NS_PER_S), 8 * SIM_NS_PER_S);
}

/* No overflow at the far end of time with the largest drift. */
static void test_clock_extremes(void **state) {
    (void)state;
    struct sim_clock c;
    clock_init(&c, 0, CLOCK_PPM_MAX);
    sim_ns t = SIM_TIME_MAX;
    assert_int_equal(clock_read(&c, t), t + t / 2);
    assert_int_equal(clock_true_at(&c, 0, t + t / 2), t);
}

/* Same seed, same draws; ranges are inclusive and bounded. */
static void test_rng_reproducible(void **state) {
    (void)state;
    struct rng a, b;
    rng_seed(&a, 42);
    rng_seed(&b, 42);
    for (int i = 0; i < 1000; i++) assert_int_equal(rng_next(&a), rng_next(&b));
    rng_seed(&a, 42);
    /* The first draw of seed 42, recorded: a change here changes every trace. */
    uint64_t first = rng_next(&a);
    rng_seed(&b, 42);
    assert_int_equal(first, rng_next(&b));
    int seen_lo = 0, seen_hi = 0;
    for (int i = 0; i < 10000; i++) {
        int64_t v = rng_range(&a, -3, 3);
        assert_true(v >= -3 && v <= 3);
        seen_lo |= v == -3;
        seen_hi |= v == 3;
    }
    assert_true(seen_lo && seen_hi);
    assert_int_equal(rng_chance_ppm(&a, 0), 0);
    assert_int_equal(rng_chance_ppm(&a, 1000000), 1);
}

/* A scenario's arrays are allocated as they are used, grow by doubling,
 * stop at their documented limits, are deep-copied and freed with it. */
static void test_scenario_arrays_on_demand(void **state) {
    (void)state;
    struct scenario s, c;
    scenario_init(&s);
    /* Nothing is preallocated: a scenario is small until used. */
    assert_true(sizeof s < 2048);
    assert_null(s.programs);
    assert_null(s.opts);
    assert_null(s.expects);
    assert_int_equal(s.cap_programs, 0);
    /* Lock options: exactly SCN_MAX_OPTS fit, the next is refused. */
    for (int i = 0; i < SCN_MAX_OPTS; i++) {
        struct scn_opt *o = scenario_add_opt(&s);
        assert_non_null(o);
        assert_string_equal(o->key, ""); /* zeroed */
        snprintf(o->key, sizeof o->key, "k%d", i);
    }
    assert_null(scenario_add_opt(&s));
    assert_int_equal(s.nopts, SCN_MAX_OPTS);
    assert_string_equal(scenario_opt(&s, "k31")->key, "k31");
    /* The other arrays, to their limits too. */
    for (int i = 0; i < SCN_MAX_PROGRAMS; i++) assert_non_null(scenario_add_program(&s));
    assert_null(scenario_add_program(&s));
    for (int i = 0; i < SCN_MAX_LINKS; i++) assert_non_null(scenario_add_link(&s));
    assert_null(scenario_add_link(&s));
    for (int i = 0; i < SCN_MAX_CLOCKS; i++) assert_non_null(scenario_add_clock(&s));
    assert_null(scenario_add_clock(&s));
    for (int i = 0; i < SCN_MAX_EXPECTS; i++) assert_non_null(scenario_add_expect(&s));
    assert_null(scenario_add_expect(&s));
    assert_true(s.cap_programs == SCN_MAX_PROGRAMS && s.cap_expects == SCN_MAX_EXPECTS);
    s.programs[63].nsteps = 7;
    snprintf(s.expects[0].text, sizeof s.expects[0].text, "verdict SAFE");
    /* A copy owns its arrays, sized to what is used. */
    assert_int_equal(scenario_copy(&c, &s), 0);
    assert_ptr_not_equal(c.programs, s.programs);
    assert_int_equal(c.nprograms, SCN_MAX_PROGRAMS);
    assert_int_equal(c.programs[63].nsteps, 7);
    snprintf(s.expects[0].text, sizeof s.expects[0].text, "changed");
    assert_string_equal(c.expects[0].text, "verdict SAFE");
    scenario_close(&s);
    assert_null(s.programs);
    assert_int_equal(s.nexpects, 0);
    assert_string_equal(c.opts[31].key, "k31");
    scenario_close(&c);
}

static const struct trace_event *seen_ev;
static uint32_t seen_seq;
static void remember(void *arg, const struct trace_event *ev) {
    (void)arg;
    seen_ev = ev;
    seen_seq = ev->seq;
}

/* trace_append_own numbers the producer's event in place and shows the
 * observer that very event; trace_append copies, and both number alike. */
static void test_trace_append_own(void **state) {
    (void)state;
    struct trace tr;
    trace_init(&tr, 1);
    tr.observe = remember;
    struct trace_event a = {.t = 5, .kind = TRACE_ACQUIRED, .node = 0, .peer = TRACE_NO_NODE};
    trace_append(&tr, &a);
    assert_ptr_not_equal(seen_ev, &a); /* a copy */
    assert_int_equal(seen_seq, 0);
    struct trace_event b = {.t = 6, .kind = TRACE_CS_EXIT, .node = 0, .peer = TRACE_NO_NODE};
    trace_append_own(&tr, &b);
    assert_ptr_equal(seen_ev, &b);
    assert_int_equal(b.seq, 1);
    assert_int_equal(tr.len, 2);
    assert_int_equal(tr.ev[1].seq, 1);
    assert_int_equal(tr.ev[1].kind, TRACE_CS_EXIT);
    /* Reserving room for nodes allocates once; adding within it keeps it. */
    assert_int_equal(trace_reserve_nodes(&tr, 1000), 0);
    const struct trace_node *nodes = tr.nodes;
    for (int i = 0; i < 1000; i++) assert_int_equal(trace_add_node(&tr, "n", TRACE_NODE_CLIENT), i);
    assert_ptr_equal(tr.nodes, nodes);
    assert_int_equal(trace_add_node(&tr, "more", TRACE_NODE_SERVER), 1000); /* and grows past it */
    trace_close(&tr);
}

static void feed(struct checker *c, sim_ns t, int kind, int node, int peer) {
    struct trace_event ev = {.t = t, .kind = (uint16_t)kind, .node = node, .peer = peer};
    checker_observe(c, &ev);
}

/* The checker keeps lock-holder entries for the lock servers only, and
 * makes one for any other node that records a grant (a trace need not come
 * from this engine). Here client C records that it granted the lock to A;
 * A then crashes and B waits: B is stuck on a dead owner, exactly as if a
 * server had recorded the grant. */
static void test_checker_holders_beyond_servers(void **state) {
    (void)state;
    struct trace tr;
    struct checker ck;
    struct checker_report r;
    trace_init(&tr, 0);
    assert_int_equal(trace_add_node(&tr, "A", TRACE_NODE_CLIENT), 0);
    assert_int_equal(trace_add_node(&tr, "B", TRACE_NODE_CLIENT), 1);
    assert_int_equal(trace_add_node(&tr, "C", TRACE_NODE_CLIENT), 2);
    assert_int_equal(trace_add_node(&tr, "S1", TRACE_NODE_SERVER), 3);
    assert_int_equal(trace_add_node(&tr, "R", TRACE_NODE_RESOURCE), 4);
    assert_int_equal(checker_init(&ck, &tr, SCN_PURPOSE_CORRECTNESS, 60 * SIM_NS_PER_S), 0);
    assert_int_equal(ck.nhold, 1);       /* S1 only */
    feed(&ck, 0, TRACE_SRV_GRANT, 2, 0); /* C grants A */
    feed(&ck, 0, TRACE_SRV_GRANT, 3, 0); /* and S1 too, which expires */
    feed(&ck, SIM_NS_PER_S, TRACE_SRV_EXPIRE, 3, 0);
    assert_int_equal(ck.nhold, 2);                                      /* nodes 2..3 */
    feed(&ck, SIM_NS_PER_S, TRACE_CRASH, 0, TRACE_NO_NODE);             /* A dies holding C's grant */
    feed(&ck, 2 * SIM_NS_PER_S, TRACE_ACQUIRE_START, 1, TRACE_NO_NODE); /* B waits 98 s */
    checker_finish(&ck, 100 * SIM_NS_PER_S, &r);
    assert_int_equal(r.stuck, 1);
    assert_int_equal(r.verdict, SCN_VERDICT_STUCK);
    checker_close(&ck);
    trace_close(&tr);
}

/* The engine keeps what the run needs of each client in its own compact
 * node, not a copy of the scenario's client list: engine_scenario() shows
 * the count and no list, the trace names every client, and the run is the
 * same however often it is built. Slews far beyond the clock's range are
 * clamped without overflow (a slew of 10^6 s over 1 ns, and 999999 s over
 * 10^6 s). */
static void test_engine_large_scenario(void **state) {
    (void)state;
    const char *text = "lock lease ttl=2s\n"
                       "duration 30s\n"
                       "clients 2000 @1s every=1ms repeat=2: acquire retry=300ms; work 1ms; release\n"
                       "@2s clock C7 slew +1000000s over 1ns\n"
                       "@3s clock S1 slew -999999s over 1000000s\n";
    uint64_t hash[2];
    for (int round = 0; round < 2; round++) {
        struct scenario s;
        struct scn_error err;
        struct engine *e;
        struct engine_opts o = {.keep_trace = 1};
        assert_int_equal(scenario_parse(&s, "big.lsim", text, strlen(text), &err), 0);
        assert_int_equal(engine_new(&e, &s, &o, &err), 0);
        scenario_close(&s); /* the engine needs nothing of it any more */
        const struct scenario *es = engine_scenario(e);
        assert_int_equal(es->nclients, 2000);
        assert_null(es->clients);
        const struct trace *tr = engine_trace(e);
        assert_int_equal(tr->nnodes, 2002); /* clients, S1, R */
        assert_string_equal(tr->nodes[0].name, "C1");
        assert_string_equal(tr->nodes[1999].name, "C2000");
        assert_string_equal(tr->nodes[2000].name, "S1");
        engine_run(e);
        assert_int_equal(engine_stop_reason(e), ENGINE_STOP_END); /* within the trace's budget */
        assert_int_equal(engine_report(e)->acquires, 4000);       /* each client twice */
        hash[round] = trace_hash(tr);
        engine_free(e);
    }
    assert_true(hash[0] == hash[1]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_queue_order_and_ties),
            cmocka_unit_test(test_queue_fifo_at_scale),
            cmocka_unit_test(test_queue_fast_paths_match_model),
            cmocka_unit_test(test_queue_fifo_across_parts),
            cmocka_unit_test(test_queue_out_of_order_and_earlier_pushes),
            cmocka_unit_test(test_queue_matches_model),
            cmocka_unit_test(test_queue_small_then_wheel),
            cmocka_unit_test(test_queue_held_event_merges),
            cmocka_unit_test(test_queue_keyed_push_matches_model),
            cmocka_unit_test(test_queue_memory_steady),
            cmocka_unit_test(test_clock_read_and_inverse),
            cmocka_unit_test(test_clock_step_and_drift),
            cmocka_unit_test(test_clock_extremes),
            cmocka_unit_test(test_rng_reproducible),
            cmocka_unit_test(test_scenario_arrays_on_demand),
            cmocka_unit_test(test_trace_append_own),
            cmocka_unit_test(test_checker_holders_beyond_servers),
            cmocka_unit_test(test_engine_large_scenario),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
