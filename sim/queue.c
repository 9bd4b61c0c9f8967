/* 4-ary implicit heap keyed by (time, insertion sequence). A 4-ary heap is
 * shallower than a binary one and touches one cache line per level when
 * sifting down, which is where a DES queue spends its time. */
#include "queue.h"

#include <stdlib.h>

#define ARITY 4

static inline int earlier(const struct sim_event *a, const struct sim_event *b) {
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

void queue_init(struct queue *q) {
    q->heap = NULL;
    q->len = q->cap = 0;
    q->next_seq = 0;
}

void queue_close(struct queue *q) {
    free(q->heap);
    q->heap = NULL;
    q->len = q->cap = 0;
}

int queue_push(struct queue *q, const struct sim_event *ev) {
    if (q->len == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 64;
        struct sim_event *h = realloc(q->heap, cap * sizeof *h);
        if (!h) return -1;
        q->heap = h;
        q->cap = cap;
    }
    struct sim_event e = *ev;
    e.seq = q->next_seq++;
    size_t i = q->len++;
    while (i > 0) { /* sift up */
        size_t parent = (i - 1) / ARITY;
        if (!earlier(&e, &q->heap[parent])) break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = e;
    return 0;
}

int queue_pop(struct queue *q, struct sim_event *ev) {
    if (q->len == 0) return -1;
    *ev = q->heap[0];
    struct sim_event last = q->heap[--q->len];
    size_t n = q->len, i = 0;
    for (;;) { /* sift down */
        size_t c = i * ARITY + 1;
        if (c >= n) break;
        size_t best = c, end = c + ARITY < n ? c + ARITY : n;
        for (size_t k = c + 1; k < end; k++)
            if (earlier(&q->heap[k], &q->heap[best])) best = k;
        if (!earlier(&q->heap[best], &last)) break;
        q->heap[i] = q->heap[best];
        i = best;
    }
    if (n) q->heap[i] = last;
    return 0;
}
