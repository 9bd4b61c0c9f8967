/* The client of the Redis-like lock store (kv.c): SET NX PX to acquire, the
 * release kv_config.c chose, a timeout per request, and redirects from
 * replicas to the primary they follow. */
#include "kv_int.h"

#include <stdio.h>
#include <string.h>

enum { PHASE_NONE, PHASE_ACQUIRE, PHASE_RELEASE, PHASE_RELEASE_GET, PHASE_RELEASE_DEL };

/* ---- Client ---------------------------------------------------------------- */

/* The client may switch servers: replication on and more than one server. */
static int follows_primary(struct lock_ctx *ctx) {
    return cfg(ctx)->replication != KV_REPL_OFF && lock_nservers(ctx) > 1;
}

static void transmit(struct lock_ctx *ctx, struct kv_client *c) {
    struct lock_msg m = {0};
    m.type = c->type;
    m.req = ++c->req;
    m.value = c->value;
    m.ttl_ns = c->req_ttl_ns;
    if (c->target < 0 || c->target >= lock_nservers(ctx)) c->target = 0;
    lock_send(ctx, lock_server(ctx, c->target), &m);
    if (c->timeout) lock_cancel(ctx, c->timeout);
    /* A SET answered after WAIT may take wait-timeout longer. */
    sim_ns limit = cfg(ctx)->request_timeout_ns;
    if (c->type == KV_SET_NX && cfg(ctx)->replication != KV_REPL_OFF && cfg(ctx)->wait_replicas > 0)
        limit += cfg(ctx)->wait_timeout_ns;
    c->timeout = lock_timer(ctx, LOCK_CLOCK_MONO, limit, T_TIMEOUT, c->req);
}

static void send_req(struct lock_ctx *ctx, struct kv_client *c, int type, int phase, sim_ns ttl) {
    c->type = type;
    c->phase = phase;
    c->req_ttl_ns = ttl;
    c->redirects = 0;
    c->timeouts = 0;
    transmit(ctx, c);
}

void kv_client_init(struct lock_ctx *ctx, void *state) {
    struct kv_client *c = state;
    c->req = lock_incarnation(ctx) << 24;
}

void kv_client_acquire(struct lock_ctx *ctx, void *state) {
    struct kv_client *c = state;
    /* A unique value per attempt, drawn from the engine's PRNG; never 0. */
    c->value = cfg(ctx)->unique_value ? (lock_random(ctx) | 1) : 1;
    c->acquire_sent_mono = lock_now(ctx, LOCK_CLOCK_MONO);
    if (c->stasis) lock_cancel(ctx, c->stasis); /* an earlier holding's bound */
    c->stasis = 0;
    lock_state(ctx, KV_ST_ACQUIRING);
    send_req(ctx, c, KV_SET_NX, PHASE_ACQUIRE, cfg(ctx)->ttl_ns);
}

/* uncertainty=E, the clock-uncertainty bound: the holder counts on its
 * lease only until E before its end, by its own monotonic clock from when it
 * asked; then it stops acting (lock_lost: it leaves the critical section,
 * and its program's next write is not sent). CockroachDB's leases work so:
 * a lease's last max-offset (default 500ms, the bound on clock offsets
 * between nodes; a node whose offset passes 80% of it shuts itself down) is
 * a "stasis period" in which the leaseholder does not serve (CockroachDB
 * documentation, "Replication layer", leases; Spanner's commit wait is the
 * same idea with TrueTime's bound). Safe without a token while the store's
 * clock and the client's drift apart by less than E over a lease. */
static void stasis_arm(struct lock_ctx *ctx, struct kv_client *c) {
    const struct kv_config *k = cfg(ctx);
    if (k->uncertainty_ns <= 0 || k->ttl_ns <= 0) return;
    sim_ns left = k->ttl_ns - k->uncertainty_ns - (lock_now(ctx, LOCK_CLOCK_MONO) - c->acquire_sent_mono);
    c->stasis = lock_timer(ctx, LOCK_CLOCK_MONO, left > 0 ? left : 0, T_STASIS, c->req);
}

static void stasis_cancel(struct lock_ctx *ctx, struct kv_client *c) {
    if (c->stasis) lock_cancel(ctx, c->stasis);
    c->stasis = 0;
}

void kv_client_release(struct lock_ctx *ctx, void *state) {
    struct kv_client *c = state;
    stasis_cancel(ctx, c);
    switch (cfg(ctx)->release) {
    case KV_RELEASE_CAD: send_req(ctx, c, KV_CAD, PHASE_RELEASE, 0); break;
    case KV_RELEASE_DEL: send_req(ctx, c, KV_DEL, PHASE_RELEASE, 0); break;
    default: send_req(ctx, c, KV_GET, PHASE_RELEASE_GET, 0); break;
    }
}

static void done(struct lock_ctx *ctx, struct kv_client *c, const struct lock_msg *m) {
    int phase = c->phase;
    c->phase = PHASE_NONE;
    if (c->timeout) lock_cancel(ctx, c->timeout);
    c->timeout = 0;
    switch (phase) {
    case PHASE_ACQUIRE:
        if (m && m->a) {
            c->token = m->token;
            /* The lease began on the server somewhere between sending and this
             * reply: the client can only count on TTL minus the round trip
             * (the Redis docs' "validity time"). 0 would mean "unbounded". */
            sim_ns validity = 0;
            if (cfg(ctx)->ttl_ns > 0) {
                validity = cfg(ctx)->ttl_ns - (lock_now(ctx, LOCK_CLOCK_MONO) - c->acquire_sent_mono);
                if (validity < 1) validity = 1;
            }
            lock_state(ctx, KV_ST_GRANTED);
            lock_granted(ctx, cfg(ctx)->fenced ? m->token : 0, validity);
            stasis_arm(ctx, c);
        } else {
            lock_state(ctx, KV_ST_REFUSED);
            lock_refused(ctx);
        }
        break;
    case PHASE_RELEASE_GET:
        if (m && m->a && m->value == c->value) { /* still ours, so far as the GET knew */
            send_req(ctx, c, KV_DEL, PHASE_RELEASE_DEL, 0);
            return;
        }
        lock_release_done(ctx);
        break;
    case PHASE_RELEASE:
    case PHASE_RELEASE_DEL: lock_release_done(ctx); break;
    }
}

/* A replica answered: ask the primary it names, or the next server when it
 * names none (or itself). Bounded, so two confused replicas cannot bounce a
 * request forever. */
static void redirected(struct lock_ctx *ctx, struct kv_client *c, const struct lock_msg *m) {
    int n = lock_nservers(ctx);
    if (++c->redirects > 2 * n) {
        lock_note(ctx, "too many redirects: no primary found", c->redirects - 1, 0);
        done(ctx, c, NULL);
        return;
    }
    int idx = m->a >= 0 ? lock_server_index(ctx, (int)m->a) : -1;
    int from = lock_server_index(ctx, m->from);
    c->target = idx >= 0 && idx != from ? idx : (c->target + 1) % n;
    lock_state(ctx, KV_ST_REDIRECTED);
    lock_note(ctx, "redirected by a replica to the primary it follows", /* a = server asked next */
              lock_server(ctx, c->target), m->a);
    transmit(ctx, c);
}

void kv_client_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct kv_client *c = state;
    if (m->req != c->req || c->phase == PHASE_NONE) return; /* late reply */
    if (m->type == KV_REDIRECT) redirected(ctx, c, m);
    else if (m->type == KV_REPLY) done(ctx, c, m);
}

void kv_client_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    struct kv_client *c = state;
    if (timer == T_STASIS) {
        c->stasis = 0;
        /* note: a = the bound */
        lock_note(ctx, "its lease enters the clock-uncertainty bound: it stops acting on it (uncertainty=)",
                  cfg(ctx)->uncertainty_ns, 0);
        lock_lost(ctx);
        return;
    }
    if (timer != T_TIMEOUT || arg != c->req || c->phase == PHASE_NONE) return;
    c->timeout = 0;
    lock_note(ctx, "request timed out", (int64_t)arg, 0);
    lock_state(ctx, KV_ST_TIMED_OUT);
    if (follows_primary(ctx)) {
        /* The server it asked may be down: ask the next one, each at most once. */
        int n = lock_nservers(ctx);
        c->target = (c->target + 1) % n;
        if (++c->timeouts < n) {
            transmit(ctx, c);
            return;
        }
    }
    done(ctx, c, NULL);
}
