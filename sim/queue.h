/* The event queue: a 4-ary min-heap of events stored by value.
 *
 * Order: events pop by increasing time; events with EQUAL time pop in the
 * order they were pushed (first in, first out). Each push takes the next
 * value of a 64-bit insertion counter, and (time, seq) is the heap key, as
 * libuv orders timers by (timeout, start_id). Nothing is allocated per event:
 * the array grows by doubling and is reused. */
#ifndef LOCKSIM_QUEUE_H
#define LOCKSIM_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "vtime.h"

struct sim_event {
    sim_ns t;       /* true time at which it fires */
    uint64_t seq;   /* insertion order, filled in by queue_push */
    uint32_t type;  /* engine-defined event type */
    int32_t node;   /* node the event is for */
    uint64_t arg;   /* engine-defined: message slot, timer id, fault index */
};

struct queue {
    struct sim_event *heap; /* owned */
    size_t len, cap;
    uint64_t next_seq;
};

void queue_init(struct queue *q);
void queue_close(struct queue *q);
/* Returns 0, or -1 when the array cannot grow (the event is not queued). */
int queue_push(struct queue *q, const struct sim_event *ev);
/* Pops the earliest event into *ev; returns 0, or -1 when empty. */
int queue_pop(struct queue *q, struct sim_event *ev);
static inline size_t queue_len(const struct queue *q) { return q->len; }
static inline sim_ns queue_peek_time(const struct queue *q) {
    return q->len ? q->heap[0].t : SIM_NEVER;
}

#endif
