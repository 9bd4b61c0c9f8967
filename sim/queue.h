/* The event queue: events stored by value, popped in (time, insertion) order.
 *
 * Order: events pop by increasing time; events with EQUAL time pop in the
 * order they were pushed (first in, first out). Each push takes the next
 * value of a 64-bit insertion counter, and (time, seq) is the total order,
 * as libuv orders timers by (timeout, start_id). Nothing is allocated per
 * event: every array grows by doubling and is reused.
 *
 * Inside (sim/queue.c says why): while at most QUEUE_SMALL events have been
 * queued at once, only an array sorted latest first (small queues: the catalog's
 * scenarios, whose events are seconds apart); from then on, a timing wheel of QUEUE_SLOTS buckets of
 * QUEUE_BUCKET_NS ns for the near future, a 4-ary heap for events
 * beyond the wheel, and for the current bucket a sorted run consumed from
 * its head plus a small heap for the rare out-of-order push. Any time may
 * be pushed at any moment, including times before the last pop; push and
 * pop are O(1) amortized for events within the wheel's span of the current
 * time, and O(log n) at worst. */
#ifndef LOCKSIM_QUEUE_H
#define LOCKSIM_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "vtime.h"

#define QUEUE_BUCKET_NS 1000 /* bucket width: 1 us */
#define QUEUE_SLOTS 4096     /* buckets on the wheel: a span of 4.096 ms */
#define QUEUE_SMALL 128      /* a sorted array alone until this many events are queued at once */

struct sim_event {
    sim_ns t;      /* true time at which it fires */
    uint64_t seq;  /* insertion order, filled in by queue_push */
    uint32_t type; /* engine-defined event type */
    int32_t node;  /* node the event is for */
    uint64_t arg;  /* engine-defined: message slot, timer id, fault index */
};

struct queue_wheel; /* bucket lists and occupancy bitmaps (sim/queue.c) */
struct queue_chunk; /* up to 31 events of one bucket, in push order */

struct queue {
    size_t len;        /* events queued, in all parts */
    int wheel_on;      /* 0 = every event is in far, sorted latest first (a small queue);
                                  1 = run, near, wheel and far as below (for good) */
    uint64_t next_seq; /* seq of the next push */
    int64_t cur;       /* current bucket: floor(t / QUEUE_BUCKET_NS) */
    /* The current bucket, and anything pushed earlier than it. */
    struct sim_event *run; /* owned: sorted by (t, seq), popped from run_head */
    size_t run_head, run_len, run_cap;
    struct sim_event *near; /* owned: binary heap of pushes that would unsort the run */
    size_t near_len, near_cap;
    /* Buckets cur+1 .. cur+QUEUE_SLOTS-1. */
    struct queue_wheel *wheel;              /* owned, allocated at the first wheel push */
    size_t wheel_len;                       /* events on the wheel */
    struct queue_chunk *pool;               /* owned: chunks; a bucket is a list of them */
    uint32_t pool_len, pool_cap, pool_free; /* pool_free: index + 1, 0 = none */
    /* Buckets from cur+QUEUE_SLOTS on. */
    struct sim_event *far; /* owned: 4-ary heap keyed (t, seq); a small queue's sorted array */
    size_t far_len, far_cap;
};

void queue_init(struct queue *q);
void queue_close(struct queue *q);
/* Returns 0, or -1 when memory cannot grow (the event is not queued). */
int queue_push(struct queue *q, const struct sim_event *ev);
/* queue_push of an event given by its fields, for the cases queue_push_small
 * leaves to it (sim/queue.c). */
int queue_push_fields(struct queue *q, sim_ns t, uint32_t type, int32_t node, uint64_t arg);
/* queue_push of an event given by its fields, meant for a small queue
 * (!q->wheel_on, which the caller tests): the insertion into the sorted
 * array without building the event or finding its bucket. Any other push
 * (the one that makes the queue large, a full array, a queue with its
 * wheel on) takes queue_push. 0, or -1 as queue_push. Inline: in a small
 * run every message and timer is pushed here, most of them past two or
 * three events, and the call was a fifth of the push (bench/README.md). */
static inline int queue_push_small(struct queue *q, sim_ns t, uint32_t type, int32_t node, uint64_t arg) {
    if (q->wheel_on || q->len >= QUEUE_SMALL || q->far_len == q->far_cap)
        return queue_push_fields(q, t, type, node, arg);
    /* Sorted latest first (sim/queue.c): the events that pop before this
     * one move up a place. Its seq is the newest, so equal times pop
     * before it and the scan compares times only. */
    struct sim_event *h = q->far;
    size_t i = q->far_len++;
    while (i > 0 && h[i - 1].t <= t) {
        h[i] = h[i - 1];
        i--;
    }
    h[i].t = t;
    h[i].seq = q->next_seq++;
    h[i].type = type;
    h[i].node = node;
    h[i].arg = arg;
    q->len++;
    return 0;
}
/* Push *ev with the seq it carries, one taken earlier by queue_take_seq
 * (an event whose place in the order was fixed before it could be
 * queued); the same seq must not be queued twice. 0, or -1 as queue_push. */
int queue_push_seq(struct queue *q, const struct sim_event *ev);
/* Pops the earliest event into *ev; returns 0, or -1 when empty. */
int queue_pop(struct queue *q, struct sim_event *ev);
/* queue_pop for the engine's loop, with its two common cases inline: the
 * next event of the current bucket's run (no out-of-order push pending),
 * and a small queue's pop (the last event of its sorted array); anything
 * else calls queue_pop. */
static inline int queue_pop_fast(struct queue *q, struct sim_event *ev) {
    if (q->run_head < q->run_len && q->near_len == 0) { /* the wheel's common case */
        *ev = q->run[q->run_head++];
        q->len--;
        return 0;
    }
    if (q->wheel_on) return queue_pop(q, ev);
    if (q->far_len == 0) return -1;
    *ev = q->far[--q->far_len]; /* the earliest is last; len == far_len while small */
    q->len--;
    return 0;
}
static inline size_t queue_len(const struct queue *q) { return q->len; }
/* Time of the earliest event, SIM_NEVER when empty. */
sim_ns queue_peek_time(const struct queue *q);
/* Take the next insertion seq without queuing anything: for an event the
 * caller holds outside the queue and merges with it by (t, seq) order. */
static inline uint64_t queue_take_seq(struct queue *q) { return q->next_seq++; }
/* 1 when a queued event comes before (t, seq). Valid for t no later than
 * the time of the last pop (or any t before the first pop): events of later
 * buckets are then all later, so only the current bucket's run and near
 * heap are looked at. */
static inline int queue_has_before(const struct queue *q, sim_ns t, uint64_t seq) {
    if (q->run_head < q->run_len) {
        const struct sim_event *r = &q->run[q->run_head];
        if (r->t < t || (r->t == t && r->seq < seq)) return 1;
    }
    if (q->near_len) return q->near[0].t < t || (q->near[0].t == t && q->near[0].seq < seq);
    /* A small queue (run and near empty): the sorted array's last event. */
    if (q->wheel_on || !q->far_len) return 0;
    const struct sim_event *m = &q->far[q->far_len - 1];
    return m->t < t || (m->t == t && m->seq < seq);
}
/* A hint for prefetching: an event due soon after the next pop (about k
 * pops ahead within the current bucket), or NULL. Borrowed until the next
 * push or pop; it may not be exactly the k-th next event. */
static inline const struct sim_event *queue_ahead(const struct queue *q, size_t k) {
    return q->run_head + k < q->run_len ? &q->run[q->run_head + k] : NULL;
}

#endif
