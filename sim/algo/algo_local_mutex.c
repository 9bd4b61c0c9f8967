/* local-mutex: an in-process lock (Java `synchronized`, ReentrantLock, a
 * Python threading.Lock) used as if it were a distributed one. The seed's
 * anti-pattern: it is scoped to one process's address space, so it works on
 * one instance and protects nothing on two. */
#include <stdio.h>
#include <string.h>

#include "lock.h"

/* The Java Language Specification (17.1) gives every object one monitor,
 * and that object lives in one JVM's heap; a Python threading.Lock lives in
 * one interpreter. Two deployments of the same code, chosen by `mode=`:
 *
 * instances (default): every client is its own process (a replica behind a
 *   load balancer), each with its own mutex in its own memory. The mutex is
 *   always free when its process asks, so every acquire succeeds at once,
 *   with no message: twenty pods hold twenty different monitors.
 *
 * threads: every client is a thread of ONE process and the mutex is shared.
 *   The interface has no shared memory between clients, so lock server S1
 *   stands in for the process's address space: it holds the mutex word and
 *   its queue of blocked threads. Messages to and from S1 cross the network
 *   model, so a scenario should set `link * S1 latency=0ms` and
 *   `link S1 * latency=0ms` (or accept a small latency on lock and unlock).
 *   Acquire blocks, as `synchronized` and Lock.acquire() do: a busy mutex
 *   queues the thread (FIFO, so runs are deterministic; the JVM promises no
 *   order) and unlock hands the mutex to the first waiter. A thread that dies
 *   holding the mutex leaves it held, as a Python threading.Lock does.
 *   "One pause stops them all" (a GC pause stops every thread of the process)
 *   is written in a scenario by pausing every client and S1 at the same time.
 *
 * The engine always builds at least one lock server; in instances mode S1
 * exists and is never sent anything. */

enum lm_mode { LM_MODE_INSTANCES, LM_MODE_THREADS };

/* Messages between a thread and the shared address space (threads mode). */
enum {
    LM_LOCK = 1, /* take the mutex, blocking -> LM_GRANTED (or LM_BUSY if the queue is full) */
    LM_UNLOCK,   /* -> LM_UNLOCKED */
    LM_GRANTED,
    LM_BUSY,
    LM_UNLOCKED
};

/* Blocked threads the address space queues; a thread beyond this many gets
 * LM_BUSY and retries by its program's `retry=` (like a tryLock loop). */
#define LM_MAX_WAITERS 256

struct lm_config {
    int mode; /* enum lm_mode */
};

struct lm_waiter {
    int node;     /* client node of the blocked thread */
    uint32_t req; /* its LM_LOCK request id, echoed in LM_GRANTED */
};

struct lm_server {   /* the shared mutex (threads mode) */
    int owner;       /* thread holding it, -1 = free */
    int head, nwait; /* FIFO ring of blocked threads */
    struct lm_waiter wait[LM_MAX_WAITERS];
};

struct lm_client {
    int locked;   /* instances: this process's own mutex is held */
    uint32_t req; /* threads: id of the outstanding request */
    int phase;    /* threads: LM_LOCK or LM_UNLOCK while waiting, else 0 */
};

static const struct lm_config *cfg(struct lock_ctx *ctx) { return lock_config(ctx); }

static void defaults(void *config) {
    struct lm_config *c = config;
    c->mode = LM_MODE_INSTANCES;
}

static int option(void *config, const char *key, const char *val, char *err, size_t n) {
    struct lm_config *c = config;
    if (strcmp(key, "mode") != 0) {
        snprintf(err, n, "unknown option '%s' for local-mutex; expected mode", key);
        return LSIM_EUNKNOWN_OPTION;
    }
    if (strcmp(val, "instances") == 0) c->mode = LM_MODE_INSTANCES;
    else if (strcmp(val, "threads") == 0) c->mode = LM_MODE_THREADS;
    else {
        snprintf(err, n, "mode '%s' is not instances or threads", val);
        return LSIM_EBAD_VALUE;
    }
    return 0;
}

/* ---- The shared address space (threads mode) -------------------------------- */

static void server_init(struct lock_ctx *ctx, void *state) {
    (void)ctx;
    struct lm_server *s = state;
    s->owner = -1;
}

/* States (lock_state). */
enum {
    LM_ST_OWN_MUTEX,      /* instances: took its process's own mutex (nobody else sees it) */
    LM_ST_SHARED_GRANTED, /* threads: the shared mutex handed to a thread */
    LM_ST_BLOCKED,        /* threads: a thread queued behind the holder */
    LM_ST_BUSY,           /* threads: the wait queue full, refused */
    LM_ST_UNLOCKED,       /* threads: the holder unlocked */
    LM_ST_BAD_UNLOCK,     /* threads: an unlock by a thread that does not hold it */
    LM_ST_MEMORY_LOST,    /* the process restarted: the mutex and its queue are gone */
    LM_ST_COUNT
};
static const char *const state_names[LM_ST_COUNT] = {
        "own-mutex-taken", "shared-mutex-granted", "blocked",    "queue-full",
        "unlocked",        "unlock-by-non-holder", "memory-lost"};

static void answer(struct lock_ctx *ctx, int to, uint32_t req, int type) {
    struct lock_msg r = {0};
    r.type = type;
    r.req = req;
    lock_send(ctx, to, &r);
}

static void hand_to(struct lock_ctx *ctx, struct lm_server *s, int node, uint32_t req) {
    s->owner = node;
    lock_note_grant(ctx, node, 0, 0, SIM_NEVER);
    lock_state(ctx, LM_ST_SHARED_GRANTED);
    answer(ctx, node, req, LM_GRANTED);
}

/* Drop a thread's earlier queue entry: a restarted thread asks afresh. */
static void unqueue(struct lm_server *s, int node) {
    int kept = 0;
    struct lm_waiter tmp[LM_MAX_WAITERS];
    for (int i = 0; i < s->nwait; i++) {
        struct lm_waiter w = s->wait[(s->head + i) % LM_MAX_WAITERS];
        if (w.node != node) tmp[kept++] = w;
    }
    memcpy(s->wait, tmp, (size_t)kept * sizeof tmp[0]);
    s->head = 0;
    s->nwait = kept;
}

static void server_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct lm_server *s = state;
    switch (m->type) {
    case LM_LOCK:
        unqueue(s, m->from);
        if (s->owner < 0) {
            hand_to(ctx, s, m->from, m->req);
        } else if (s->nwait < LM_MAX_WAITERS) {
            s->wait[(s->head + s->nwait++) % LM_MAX_WAITERS] = (struct lm_waiter){m->from, m->req};
            lock_note(ctx, "mutex held by another thread: the caller blocks", m->from, s->owner);
            lock_state(ctx, LM_ST_BLOCKED);
        } else {
            lock_note_deny(ctx, m->from, s->owner);
            lock_state(ctx, LM_ST_BUSY);
            answer(ctx, m->from, m->req, LM_BUSY);
        }
        return;
    case LM_UNLOCK:
        if (s->owner != m->from) {
            /* Python: RuntimeError("release unlocked lock"); Java:
             * IllegalMonitorStateException. The mutex is left as it is. */
            lock_note(ctx, "unlock by a thread that does not hold the mutex: refused", m->from, s->owner);
            lock_state(ctx, LM_ST_BAD_UNLOCK);
        } else {
            lock_note_delete(ctx, m->from, m->from);
            lock_state(ctx, LM_ST_UNLOCKED);
            s->owner = -1;
            if (s->nwait > 0) {
                struct lm_waiter w = s->wait[s->head];
                s->head = (s->head + 1) % LM_MAX_WAITERS;
                s->nwait--;
                hand_to(ctx, s, w.node, w.req);
            }
        }
        answer(ctx, m->from, m->req, LM_UNLOCKED);
        return;
    default: return;
    }
}

/* The process holding the address space died: its memory, and the mutex in
 * it, come back empty. */
static void server_restart(struct lock_ctx *ctx, void *state) {
    struct lm_server *s = state;
    memset(s, 0, sizeof *s);
    s->owner = -1;
    lock_note(ctx, "restarted: the mutex and its queue were in the lost memory", 0, 0);
    lock_state(ctx, LM_ST_MEMORY_LOST);
}

/* ---- Clients ---------------------------------------------------------------------------- */

static void send_req(struct lock_ctx *ctx, struct lm_client *c, int type) {
    struct lock_msg m = {0};
    m.type = type;
    m.req = ++c->req;
    c->phase = type;
    lock_send(ctx, lock_server(ctx, 0), &m);
}

static void client_acquire(struct lock_ctx *ctx, void *state) {
    struct lm_client *c = state;
    if (cfg(ctx)->mode == LM_MODE_THREADS) {
        send_req(ctx, c, LM_LOCK);
        return;
    }
    /* Instances: this process's own mutex. Nobody else can see it, so it is
     * free whenever this process's single worker asks for it. */
    if (c->locked) {
        lock_refused(ctx);
        return;
    }
    c->locked = 1;
    lock_note(ctx, "took its own in-process mutex; other instances have their own", 0, 0);
    lock_state(ctx, LM_ST_OWN_MUTEX);
    lock_granted(ctx, 0, 0);
}

static void client_release(struct lock_ctx *ctx, void *state) {
    struct lm_client *c = state;
    if (cfg(ctx)->mode == LM_MODE_THREADS) {
        send_req(ctx, c, LM_UNLOCK);
        return;
    }
    c->locked = 0;
    lock_release_done(ctx);
}

static void client_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct lm_client *c = state;
    if (m->req != c->req || c->phase == 0) return; /* meant for an earlier incarnation */
    int phase = c->phase;
    c->phase = 0;
    if (phase == LM_LOCK && m->type == LM_GRANTED) lock_granted(ctx, 0, 0);
    else if (phase == LM_LOCK && m->type == LM_BUSY) lock_refused(ctx);
    else if (phase == LM_UNLOCK && m->type == LM_UNLOCKED) lock_release_done(ctx);
    else c->phase = phase;
}

const struct lock_algo algo_local_mutex = {
        .abi = LOCK_ABI_VERSION,
        .name = "local-mutex",
        .summary =
                "in-process mutex (synchronized, threading.Lock): each instance has its own; mode=threads shares one",
        .default_servers = 1,
        .max_servers = 1,
        .config_size = sizeof(struct lm_config),
        .client_size = sizeof(struct lm_client),
        .server_size = sizeof(struct lm_server),
        .config_default = defaults,
        .option = option,
        .client_acquire = client_acquire,
        .client_release = client_release,
        .client_recv = client_recv,
        .server_init = server_init,
        .server_recv = server_recv,
        .server_restart = server_restart,
        .state_names = state_names,
        .nstates = LM_ST_COUNT,
};
