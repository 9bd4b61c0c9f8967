/* The event queue: a timing wheel for the near future, a 4-ary heap beyond
 * it, and a sorted run for the bucket being popped.
 *
 * Why: a discrete-event simulation pushes most events a short, bounded delay
 * ahead (network latency, timers) or at the current time (continuations),
 * and pops them in time order. A heap pays O(log n) levels, most of them
 * cache misses once n is large, for each; a bucket queue pays O(1). This is
 * the calendar queue of R. Brown ("Calendar queues: a fast O(1) priority
 * queue implementation for the simulation event set problem", CACM 31(10),
 * 1988) in the fixed-width form of Varghese and Lauck's hashed timing wheel
 * (SOSP 1987), with an overflow heap for far events playing the part of the
 * ladder queue's "top" (Tang, Goh and Thng, ACM TOMACS 15(3), 2005), so the
 * worst case stays O(log n):
 *
 *   bucket b       holds times [b * W, (b + 1) * W), W = QUEUE_BUCKET_NS;
 *   cur            the bucket being popped: its events are in `run` (sorted,
 *                  consumed from the head) and `near` (a binary heap);
 *   cur+1 .. cur+SLOTS-1   the wheel: per bucket a list of chunks of events
 *                  in push order, so draining a bucket is a few memcpy;
 *   beyond         `far`, a 4-ary heap; a bucket's far events join its wheel
 *                  events when it becomes current.
 *
 * FIFO among equal times: every event carries its insertion seq, and each
 * part is ordered by (t, seq). A bucket's list is in push order, hence seq
 * order, and is also in time order unless a push went behind its last event
 * (then the bucket is marked messy). When a bucket becomes current its
 * events form the run, sorted by (t, seq) when messy or joined by far
 * events. A push into the current bucket is appended to the run when it
 * sorts after the run's last event (true for every push at the current
 * time once the run holds one time, the common case), else it goes to
 * `near`. Pop takes the smaller of the run's head and near's top.
 *
 * The bucket width, 1 us, suits events microseconds to milliseconds apart,
 * which is what latencies, leases and pauses in scenarios are; and since
 * scenario times are whole microseconds in practice, a bucket then holds
 * one time and its run is in order without sorting. Any other spacing is
 * still correct, only closer to heap speed.
 *
 * Small queues: a queue that has never held more than QUEUE_SMALL events
 * is the far array alone (wheel_on = 0), kept sorted latest first: a pop
 * takes the last event, a push moves up the events that come before it.
 * The catalog's scenarios hold a few dozen events at most, seconds apart:
 * the wheel's 4 ms span would send nearly every push to the far heap
 * anyway, and each pop through advance() (next bucket, counting the far
 * events of the bucket, moving them to the run) costs several times a heap
 * pop; and most pushes (a message, a continuation) land near the earliest
 * end, so an insertion moves few events where a heap pop sifts through
 * every level (measured: bench/README.md, round 3). The first push past
 * QUEUE_SMALL turns the wheel on for good: the array, reversed, is a heap
 * (sorted earliest first), every event then in far, after the current
 * bucket, which is what advance() expects of far events, so nothing else
 * moves. */
#include "queue.h"

#include <stdlib.h>
#include <string.h>

#define SLOTS QUEUE_SLOTS
#define MASK ((int64_t)SLOTS - 1)
#define WORDS (SLOTS / 64)
#ifndef CHUNK
#define CHUNK 15 /* events per chunk: 8 + 15 * 32 = 488 bytes */
#endif
#define FAR_ARITY 4      /* far_pop's tournament assumes 4 */
#define SORT_SMALL 24    /* insertion sort up to this many run events, else heapify */
#define SHRINK_MIN 65536 /* run and near give memory back from this capacity on */

#if defined(__GNUC__)
#define COLD __attribute__((noinline, cold)) /* keeps push and pop small and leaf-like */
#else
#define COLD
#endif

_Static_assert((SLOTS & (SLOTS - 1)) == 0 && SLOTS >= 128 && SLOTS <= 64 * 64,
               "QUEUE_SLOTS must be a power of two in 128..4096 (one summary word)");
_Static_assert(CHUNK < 16 && QUEUE_BUCKET_NS <= 4096, "queue_wheel.info packs a count and an offset");

struct queue_chunk {
    uint32_t next; /* pool index + 1 of the bucket's next chunk, 0 = last */
    uint32_t n;    /* events in ev[] */
    struct sim_event ev[CHUNK];
};

struct queue_wheel {
    uint32_t head[SLOTS];  /* first chunk of the bucket: pool index + 1, 0 = empty */
    uint32_t tail[SLOTS];  /* last chunk */
    uint16_t info[SLOTS];  /* events in the last chunk (low 4 bits), and the time of the
                              bucket's latest push as ns into the bucket (the rest):
                              a push reads these instead of the chunk it writes to */
    uint64_t bits[WORDS];  /* bucket has events */
    uint64_t messy[WORDS]; /* bucket's events are not in time order */
    uint64_t summary;      /* bit w: bits[w] != 0 */
};

static inline int earlier(const struct sim_event *a, const struct sim_event *b) {
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

/* Bucket of a time: floor(t / width), so negative times order too. The
 * width is a constant, so the division compiles to a multiplication. */
static inline int64_t bucket_of(sim_ns t) { return t >= 0 ? t / QUEUE_BUCKET_NS : -((-(t + 1)) / QUEUE_BUCKET_NS) - 1; }

/* While the queue is small (wheel_on = 0), cur is far after every bucket: each
 * push then misses the wheel's fast path (which pays nothing for it) and
 * goes to push_small; the run's fast path is tested only once the wheel is
 * on (run_cap is 0 before). */
#define SMALL_CUR (INT64_MAX / 2)

void queue_init(struct queue *q) {
    memset(q, 0, sizeof *q);
    q->cur = SMALL_CUR;
}

void queue_close(struct queue *q) {
    free(q->run);
    free(q->near);
    free(q->wheel);
    free(q->pool);
    free(q->far);
    memset(q, 0, sizeof *q);
    q->cur = SMALL_CUR;
}

/* Make room for need elements in a doubling array; 0 or -1. */
static int reserve(void *arrp, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return 0;
    size_t ncap = *cap ? *cap : 64;
    while (ncap < need) ncap *= 2;
    if (ncap > SIZE_MAX / size) return -1;
    void *n = realloc(*(void **)arrp, ncap * size);
    if (!n) return -1;
    *(void **)arrp = n;
    *cap = ncap;
    return 0;
}

/* An empty run or near array that a burst made large (all clients starting
 * at once) goes back to a size near what is needed now; rarely, so no
 * allocation happens per event. */
static void shrink(struct sim_event **arr, size_t *cap, size_t need) {
    if (*cap < SHRINK_MIN || need * 16 > *cap) return;
    size_t ncap = 1024;
    while (ncap < need * 4) ncap *= 2;
    struct sim_event *n = realloc(*arr, ncap * sizeof *n);
    if (n) {
        *arr = n;
        *cap = ncap;
    }
}

/* ---- near: binary min-heap ------------------------------------------------ */

static void near_sift_up(struct sim_event *h, size_t i, struct sim_event e) {
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!earlier(&e, &h[p])) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

static void near_sift_down(struct sim_event *h, size_t n, size_t i, struct sim_event e) {
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && earlier(&h[c + 1], &h[c])) c++;
        if (!earlier(&h[c], &e)) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = e;
}

COLD static void near_pop(struct queue *q, struct sim_event *ev) {
    *ev = q->near[0];
    size_t n = --q->near_len;
    if (n) near_sift_down(q->near, n, 0, q->near[n]);
}

/* ---- far: 4-ary min-heap ---------------------------------------------------- */

static void far_push(struct queue *q, const struct sim_event *ev) {
    struct sim_event *h = q->far;
    size_t i = q->far_len++;
    while (i > 0) {
        size_t p = (i - 1) / FAR_ARITY;
        if (!earlier(ev, &h[p])) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = *ev;
}

/* Sift-down from the root with the last event; the best of four children
 * is found by a tournament whose two first rounds are independent (fewer
 * instructions and branches than a loop over the children). Keys (t, seq)
 * are unique, so the order popped is the same for any heap. */
static void far_pop(struct queue *q, struct sim_event *ev) {
    struct sim_event *h = q->far;
    *ev = h[0];
    size_t n = --q->far_len, i = 0;
    if (n == 0) return;
    const struct sim_event *last = &h[n];
    for (;;) {
        size_t c = i * FAR_ARITY + 1, best;
        if (c + FAR_ARITY <= n) {
            size_t a = earlier(&h[c + 1], &h[c]) ? c + 1 : c;
            size_t b = earlier(&h[c + 3], &h[c + 2]) ? c + 3 : c + 2;
            best = earlier(&h[b], &h[a]) ? b : a;
        } else {
            if (c >= n) break;
            best = c;
            for (size_t k = c + 1; k < n; k++)
                if (earlier(&h[k], &h[best])) best = k;
        }
        if (!earlier(&h[best], last)) break;
        h[i] = h[best];
        i = best;
    }
    h[i] = *last;
}

/* Far events in bucket nb: the heap's top subtree whose buckets equal nb. */
static size_t far_count(const struct queue *q, size_t i, int64_t nb) {
    if (i >= q->far_len || bucket_of(q->far[i].t) != nb) return 0;
    size_t n = 1;
    for (size_t k = 1; k <= FAR_ARITY; k++) n += far_count(q, i * FAR_ARITY + k, nb);
    return n;
}

/* ---- wheel ------------------------------------------------------------------ */

static inline void set_bit(uint64_t *words, size_t s) { words[s / 64] |= 1ull << (s % 64); }
static inline int has_bit(const uint64_t *words, size_t s) { return (words[s / 64] >> (s % 64)) & 1; }

/* A fresh chunk at the end of bucket s for an event off ns into the bucket
 * (the slow path of a wheel push: first push to the bucket, or its last
 * chunk is full). Marks the bucket messy when the event goes behind the
 * latest push; the caller writes the event and info[s]. NULL when memory
 * cannot grow. */
COLD static struct queue_chunk *chunk_append(struct queue *q, size_t s, uint32_t off) {
    struct queue_wheel *w = q->wheel;
    if (!w) {
        w = q->wheel = calloc(1, sizeof *w); /* 41 KiB, once a run has a large queue */
        if (!w) return NULL;
    }
    uint32_t i;
    if (q->pool_free) {
        i = q->pool_free - 1;
        q->pool_free = q->pool[i].next;
    } else {
        if (q->pool_len == q->pool_cap) {
            if (q->pool_cap > UINT32_MAX / 4) return NULL;
            uint32_t cap = q->pool_cap ? q->pool_cap * 2 : 16;
            struct queue_chunk *n = realloc(q->pool, (size_t)cap * sizeof *n);
            if (!n) return NULL;
            q->pool = n;
            q->pool_cap = cap;
        }
        i = q->pool_len++;
    }
    struct queue_chunk *c = &q->pool[i];
    c->next = 0;
    c->n = 0;
    uint32_t last = w->tail[s];
    if (last) {
        if (off < (uint32_t)(w->info[s] >> 4)) set_bit(w->messy, s);
        q->pool[last - 1].next = i + 1;
    } else {
        w->head[s] = i + 1;
        set_bit(w->bits, s);
        w->summary |= 1ull << (s / 64);
    }
    w->tail[s] = i + 1;
    return c;
}

static void slot_clear(struct queue_wheel *w, size_t s) {
    w->head[s] = w->tail[s] = 0;
    w->info[s] = 0;
    w->messy[s / 64] &= ~(1ull << (s % 64));
    w->bits[s / 64] &= ~(1ull << (s % 64));
    if (!w->bits[s / 64]) w->summary &= ~(1ull << (s / 64));
}

/* Distance from slot p to the first non-empty slot at or after it, going
 * round the wheel; the wheel must not be empty. */
static size_t wheel_next(const struct queue_wheel *w, size_t p) {
    size_t i = p / 64;
    uint64_t m = w->bits[i] & (~0ull << (p % 64));
    size_t pos;
    if (m) {
        pos = i * 64 + (size_t)__builtin_ctzll(m);
    } else {
        uint64_t above = i + 1 < 64 ? w->summary & (~0ull << (i + 1)) : 0;
        uint64_t sm = above ? above : w->summary; /* wrap round */
        size_t i2 = (size_t)__builtin_ctzll(sm);
        pos = i2 * 64 + (size_t)__builtin_ctzll(w->bits[i2]);
    }
    return pos >= p ? pos - p : pos + SLOTS - p;
}

/* The first non-empty bucket after cur; *from_wheel says whether the wheel
 * has events in it (far may have some too). Events must remain outside run
 * and near. */
static int64_t next_bucket(const struct queue *q, int *from_wheel) {
    int64_t nb = INT64_MAX;
    *from_wheel = 0;
    if (q->wheel_len) {
        nb = q->cur + 1 + (int64_t)wheel_next(q->wheel, (size_t)((q->cur + 1) & MASK));
        *from_wheel = 1;
    }
    if (q->far_len && bucket_of(q->far[0].t) < nb) {
        nb = bucket_of(q->far[0].t);
        *from_wheel = 0;
    }
    return nb;
}

/* ---- the current bucket ----------------------------------------------------- */

static void insertion_sort(struct sim_event *a, size_t n) {
    for (size_t i = 1; i < n; i++) {
        struct sim_event e = a[i];
        size_t j = i;
        while (j > 0 && earlier(&e, &a[j - 1])) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = e;
    }
}

/* Run and near are empty and events remain: make the next non-empty bucket
 * current, moving its wheel events and its far events into the run.
 * Returns -1, with nothing moved, when the run cannot grow. */
COLD static int advance(struct queue *q) {
    int from_wheel;
    int64_t nb = next_bucket(q, &from_wheel);
    struct queue_wheel *w = q->wheel;
    size_t s = (size_t)(nb & MASK);
    int far_joins = q->far_len && bucket_of(q->far[0].t) == nb; /* else far_count is 0 */
    size_t need = far_joins ? far_count(q, 0, nb) : 0;
    if (from_wheel)
        for (uint32_t i = w->head[s]; i; i = q->pool[i - 1].next) need += q->pool[i - 1].n;
    shrink(&q->run, &q->run_cap, need);
    shrink(&q->near, &q->near_cap, 0);
    if (reserve(&q->run, &q->run_cap, need, sizeof *q->run) != 0) return -1;
    q->cur = nb;
    q->run_head = q->run_len = 0;
    int sorted = 1;
    if (from_wheel) {
        sorted = !has_bit(w->messy, s);
        for (uint32_t i = w->head[s]; i; i = q->pool[i - 1].next) {
            const struct queue_chunk *c = &q->pool[i - 1];
            struct sim_event *dst = q->run + q->run_len;
            if (c->n == CHUNK) {
                memcpy(dst, c->ev, sizeof c->ev);
            } else {
                for (uint32_t k = 0; k < c->n; k++) dst[k] = c->ev[k]; /* a few: no call */
            }
            q->run_len += c->n;
        }
        q->pool[w->tail[s] - 1].next = q->pool_free; /* the whole list is free */
        q->pool_free = w->head[s];
        q->wheel_len -= q->run_len;
        slot_clear(w, s);
    }
    while (far_joins && q->far_len && bucket_of(q->far[0].t) == nb) {
        struct sim_event ev;
        far_pop(q, &ev);
        if (q->run_len && earlier(&ev, &q->run[q->run_len - 1])) sorted = 0;
        q->run[q->run_len++] = ev;
    }
    if (sorted) return 0;
    if (q->run_len > SORT_SMALL && reserve(&q->near, &q->near_cap, q->run_len, sizeof *q->near) == 0) {
        memcpy(q->near, q->run, q->run_len * sizeof *q->run); /* heapify: O(n) */
        q->near_len = q->run_len;
        q->run_len = 0;
        for (size_t i = q->near_len / 2; i-- > 0;) near_sift_down(q->near, q->near_len, i, q->near[i]);
    } else {
        insertion_sort(q->run, q->run_len);
    }
    return 0;
}

/* Out of memory in advance(): pop the earliest event of the next bucket in
 * place, in O(bucket size), allocating nothing. cur stays, so every part
 * keeps its invariant; the bucket is marked messy. */
COLD static void pop_in_place(struct queue *q, struct sim_event *ev) {
    int from_wheel;
    int64_t nb = next_bucket(q, &from_wheel);
    struct queue_wheel *w = q->wheel;
    size_t s = (size_t)(nb & MASK);
    struct sim_event *best = NULL;
    if (from_wheel)
        for (uint32_t i = w->head[s]; i; i = q->pool[i - 1].next)
            for (uint32_t k = 0; k < q->pool[i - 1].n; k++)
                if (!best || earlier(&q->pool[i - 1].ev[k], best)) best = &q->pool[i - 1].ev[k];
    if (q->far_len && (!best || earlier(&q->far[0], best))) {
        far_pop(q, ev);
        return;
    }
    /* Fill the hole with the bucket's last event; drop an emptied last chunk. */
    uint32_t t = w->tail[s], prev = 0;
    struct queue_chunk *tc = &q->pool[t - 1];
    *ev = *best;
    *best = tc->ev[--tc->n];
    set_bit(w->messy, s);
    if (tc->n == 0) {
        for (uint32_t i = w->head[s]; i != t; i = q->pool[i - 1].next) prev = i;
        tc->next = q->pool_free;
        q->pool_free = t;
        if (prev) {
            q->pool[prev - 1].next = 0;
            w->tail[s] = prev;
        } else {
            slot_clear(w, s);
        }
    }
    if (w->tail[s]) /* the count of what is now the last chunk (an earlier one is full) */
        w->info[s] = (uint16_t)((w->info[s] & ~15u) | q->pool[w->tail[s] - 1].n);
    q->wheel_len--;
}

/* ---- API ---------------------------------------------------------------------- */

/* The first push past QUEUE_SMALL: the queue becomes the wheel's. Run, near
 * and wheel are empty and every event is in far. The earliest event's bucket
 * becomes current, its far events moving to the run in order (all N clients
 * starting at one time then fill the run in order, as they would have from
 * the start); the rest stay in far, after the current bucket. Without room
 * for the run, cur goes just before that bucket, which is as correct. */
COLD static void wheel_on(struct queue *q) {
    q->wheel_on = 1;
    q->run_head = q->run_len = 0;
    if (!q->far_len) return;
    /* Sorted latest first until now; earliest first, it is a heap. */
    for (size_t i = 0, j = q->far_len - 1; i < j; i++, j--) {
        struct sim_event x = q->far[i];
        q->far[i] = q->far[j];
        q->far[j] = x;
    }
    int64_t b = bucket_of(q->far[0].t);
    if (reserve(&q->run, &q->run_cap, q->far_len, sizeof *q->run) != 0) {
        q->cur = b - 1;
        return;
    }
    q->cur = b;
    while (q->far_len && bucket_of(q->far[0].t) == b) far_pop(q, &q->run[q->run_len++]);
}

#if defined(__GNUC__)
__attribute__((noinline)) /* out of queue_push's fast path for the wheel */
#endif
static int
push_small(struct queue *q, const struct sim_event *ev, uint64_t seq, int newest) {
    if (q->far_len == q->far_cap && reserve(&q->far, &q->far_cap, q->far_len + 1, sizeof *q->far) != 0) return -1;
    /* Insertion into the array sorted latest first: the events that come
     * before this one (most pushes are a message latency or less ahead, so
     * few) move up one place; the event is written once, field by field. */
    struct sim_event *h = q->far;
    sim_ns t = ev->t;
    size_t i = q->far_len++;
    if (newest) { /* seq is later than every queued one: equal times come before it */
        while (i > 0 && h[i - 1].t <= t) {
            h[i] = h[i - 1];
            i--;
        }
    } else {
        while (i > 0 && (h[i - 1].t < t || (h[i - 1].t == t && h[i - 1].seq < seq))) {
            h[i] = h[i - 1];
            i--;
        }
    }
    h[i].t = t;
    h[i].seq = seq;
    h[i].type = ev->type;
    h[i].node = ev->node;
    h[i].arg = ev->arg;
    q->len++;
    return 0;
}

/* Pushes other than to a wheel bucket with room or to the end of the run,
 * and every push of queue_push_seq: e carries its seq, which need not be
 * the latest (keyed = 1, a wheel bucket it joins is then marked messy). */
COLD static int push_slow(struct queue *q, struct sim_event e, int keyed) {
    if (!q->wheel_on) { /* cur = SMALL_CUR sent it here */
        if (q->len < QUEUE_SMALL) return push_small(q, &e, e.seq, !keyed);
        wheel_on(q);
    }
    int64_t b = bucket_of(e.t), d = b - q->cur;
    if (d > 0 && d < SLOTS) { /* only a keyed push comes here, or a push after wheel_on */
        size_t s = (size_t)(b & MASK);
        uint32_t off = (uint32_t)(e.t - b * QUEUE_BUCKET_NS);
        struct queue_wheel *w = q->wheel;
        uint32_t t = w ? w->tail[s] : 0, n = w ? w->info[s] & 15u : 0, prev = w ? w->info[s] >> 4 : 0;
        struct queue_chunk *c;
        if (t && n < CHUNK) {
            c = &q->pool[t - 1];
        } else if (!(c = chunk_append(q, s, off))) {
            return -1;
        } else {
            w = q->wheel;
            n = 0;
        }
        if (t && (keyed || off < prev)) set_bit(w->messy, s); /* behind an event of the bucket */
        c->ev[n] = e;
        c->n = n + 1;
        w->info[s] = (uint16_t)((n + 1) | (t && prev > off ? prev : off) << 4);
        q->wheel_len++;
    } else if (d <= 0) { /* the current bucket, or earlier */
        if (q->run_head == q->run_len) q->run_head = q->run_len = 0;
        if (q->run_len == 0 || !earlier(&e, &q->run[q->run_len - 1])) {
            if (reserve(&q->run, &q->run_cap, q->run_len + 1, sizeof *q->run) != 0) return -1;
            q->run[q->run_len++] = e;
        } else {
            if (reserve(&q->near, &q->near_cap, q->near_len + 1, sizeof *q->near) != 0) return -1;
            near_sift_up(q->near, q->near_len++, e);
        }
    } else {
        if (reserve(&q->far, &q->far_cap, q->far_len + 1, sizeof *q->far) != 0) return -1;
        far_push(q, &e);
    }
    q->len++;
    return 0;
}

int queue_push_seq(struct queue *q, const struct sim_event *ev) { return push_slow(q, *ev, 1); }

int queue_push(struct queue *q, const struct sim_event *ev) {
    int64_t b = bucket_of(ev->t);
    int64_t d = b - q->cur;
    if (d > 0 && d < SLOTS) { /* the wheel: the common case */
        size_t s = (size_t)(b & MASK);
        struct queue_wheel *w = q->wheel;
        uint32_t t = w ? w->tail[s] : 0;
        uint32_t off = (uint32_t)(ev->t - b * QUEUE_BUCKET_NS), n = w ? w->info[s] & 15u : 0;
        struct queue_chunk *c;
        if (t && n < CHUNK) { /* room in the last chunk: no read of the chunk itself */
            if (off < (uint32_t)(w->info[s] >> 4)) set_bit(w->messy, s);
            c = &q->pool[t - 1];
        } else if (!(c = chunk_append(q, s, off))) {
            return -1;
        } else {
            w = q->wheel;
            n = 0;
        }
        struct sim_event *dst = &c->ev[n];
        dst->t = ev->t;
        dst->seq = q->next_seq++;
        dst->type = ev->type;
        dst->node = ev->node;
        dst->arg = ev->arg;
        c->n = n + 1;
        w->info[s] = (uint16_t)((n + 1) | off << 4);
        q->wheel_len++;
        q->len++;
        return 0;
    }
    if (!q->wheel_on) { /* a small queue: cur = SMALL_CUR, d < 0, run and near empty */
        if (q->len < QUEUE_SMALL) return push_small(q, ev, q->next_seq++, 1);
    } else if (d <= 0 && (q->run_head == q->run_len || q->run[q->run_len - 1].t <= ev->t) &&
               q->run_len < q->run_cap) { /* the current bucket, in run order: common too */
        if (q->run_head == q->run_len) q->run_head = q->run_len = 0;
        struct sim_event *dst = &q->run[q->run_len++];
        dst->t = ev->t; /* field by field: *ev was just written so, and is read back so */
        dst->seq = q->next_seq++;
        dst->type = ev->type;
        dst->node = ev->node;
        dst->arg = ev->arg;
        q->len++;
        return 0;
    }
    struct sim_event e = *ev;
    e.seq = q->next_seq;
    if (push_slow(q, e, 0) != 0) return -1;
    q->next_seq++;
    return 0;
}

int queue_push_fields(struct queue *q, sim_ns t, uint32_t type, int32_t node, uint64_t arg) {
    struct sim_event ev = {.t = t, .type = type, .node = node, .arg = arg};
    return queue_push(q, &ev);
}

#if defined(__GNUC__)
__attribute__((noinline)) /* out of queue_pop's path for the wheel */
#endif
static int
pop_small(struct queue *q, struct sim_event *ev) {
    if (q->far_len == 0) return -1;
    *ev = q->far[--q->far_len]; /* the earliest is last */
    q->len--;
    return 0;
}

int queue_pop(struct queue *q, struct sim_event *ev) {
    for (;;) {
        if (q->run_head < q->run_len) {
            if (q->near_len == 0 || earlier(&q->run[q->run_head], &q->near[0])) *ev = q->run[q->run_head++];
            else near_pop(q, ev);
            break;
        }
        if (q->near_len) {
            near_pop(q, ev);
            break;
        }
        if (q->len == 0) return -1;
        if (!q->wheel_on) return pop_small(q, ev); /* run and near are always empty then */
        if (advance(q) != 0) {
            pop_in_place(q, ev);
            break;
        }
    }
    q->len--;
    return 0;
}

sim_ns queue_peek_time(const struct queue *q) {
    if (q->len == 0) return SIM_NEVER;
    if (!q->wheel_on) return q->far[q->far_len - 1].t;
    sim_ns t = SIM_NEVER;
    if (q->run_head < q->run_len) t = q->run[q->run_head].t;
    if (q->near_len && q->near[0].t < t) t = q->near[0].t;
    if (q->run_head < q->run_len || q->near_len) return t;
    int from_wheel;
    int64_t nb = next_bucket(q, &from_wheel);
    if (from_wheel)
        for (uint32_t i = q->wheel->head[nb & MASK]; i; i = q->pool[i - 1].next)
            for (uint32_t k = 0; k < q->pool[i - 1].n; k++)
                if (q->pool[i - 1].ev[k].t < t) t = q->pool[i - 1].ev[k].t;
    if (q->far_len && q->far[0].t < t) t = q->far[0].t;
    return t;
}
