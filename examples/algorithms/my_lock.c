/* my_lock.c: a worked example of a user-written lock algorithm for locksim.
 *
 * "ticket": one lock server keeps the holder, a lease deadline by its own
 * monotonic clock, and a counter that hands out a fencing token with every
 * grant. The client attaches the token to its writes; with
 * `resource fencing=on` the resource rejects stale ones.
 *
 * Build (from the repository root):
 *   cc -std=c11 -shared -fPIC -Isim -o build/my_lock.so examples/algorithms/my_lock.c
 * Run:
 *   build/locksim run scenarios/fencing-rejects-stale-write.lsim --algo ./build/my_lock.so
 */
#include <stdio.h>
#include <string.h>

#include "lock.h"

enum { REQ_ACQUIRE = 1, REQ_RELEASE, REPLY };
enum { TIMER_EXPIRE = 1, TIMER_TIMEOUT };

/* The states a run passes through, for `locksim explore`'s coverage table
 * (lock_state; optional). The ids index state_names. */
enum { ST_GRANTED, ST_DENIED, ST_EXPIRED, ST_RELEASED, ST_RELEASE_KEPT, ST_COUNT };
static const char *const state_names[ST_COUNT] = {"granted", "denied", "expired-unknown", "released", "release-kept"};

struct config {
    sim_ns ttl_ns;
};

struct server {
    int holder;          /* client node, -1 = free */
    uint64_t token;      /* token of the current grant */
    uint64_t next_token; /* next token to hand out */
    uint64_t expiry;     /* timer handle */
};

struct client {
    uint32_t req;
    uint64_t token;
    uint64_t timeout;
    int releasing;
};

static void config_default(void *config) {
    struct config *c = config;
    c->ttl_ns = 30 * SIM_NS_PER_S;
}

/* Options come as text; this example knows one, ttl, in whole seconds ("30s"). */
static int option(void *config, const char *key, const char *val, char *err, size_t n) {
    struct config *c = config;
    long secs;
    char unit;
    if (strcmp(key, "ttl") != 0) {
        snprintf(err, n, "unknown option '%s' for ticket; expected ttl", key);
        return LSIM_EUNKNOWN_OPTION;
    }
    if (sscanf(val, "%ld%c", &secs, &unit) != 2 || unit != 's' || secs <= 0) {
        snprintf(err, n, "ttl '%s' is not a whole number of seconds such as 30s", val);
        return LSIM_EBAD_VALUE;
    }
    c->ttl_ns = secs * SIM_NS_PER_S;
    return 0;
}

/* ---- server ---- */

static void server_init(struct lock_ctx *ctx, void *state) {
    (void)ctx;
    struct server *s = state;
    s->holder = -1;
    s->next_token = 1;
}

static void reply(struct lock_ctx *ctx, const struct lock_msg *m, int ok, uint64_t token) {
    struct lock_msg r = {.type = REPLY, .req = m->req, .a = ok, .token = token};
    lock_send(ctx, m->from, &r);
}

static void server_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct server *s = state;
    const struct config *c = lock_config(ctx);
    if (m->type == REQ_ACQUIRE) {
        if (s->holder >= 0) {
            lock_note_deny(ctx, m->from, s->holder);
            lock_state(ctx, ST_DENIED);
            reply(ctx, m, 0, 0);
            return;
        }
        s->holder = m->from;
        s->token = s->next_token++;
        sim_ns now = lock_now(ctx, LOCK_CLOCK_MONO);
        s->expiry = lock_timer(ctx, LOCK_CLOCK_MONO, c->ttl_ns, TIMER_EXPIRE, s->token);
        lock_note_grant(ctx, m->from, s->token, c->ttl_ns, now + c->ttl_ns);
        lock_state(ctx, ST_GRANTED);
        reply(ctx, m, 1, s->token);
    } else if (m->type == REQ_RELEASE) {
        /* Release only the grant the client holds: compare the token. */
        if (s->holder == m->from && s->token == m->token) {
            lock_note_delete(ctx, m->from, s->holder);
            lock_state(ctx, ST_RELEASED);
            lock_cancel(ctx, s->expiry);
            s->holder = -1;
        } else {
            lock_note_keep(ctx, m->from, s->holder);
            lock_state(ctx, ST_RELEASE_KEPT);
        }
        reply(ctx, m, 1, 0);
    }
}

static void server_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    struct server *s = state;
    if (timer == TIMER_EXPIRE && s->holder >= 0 && s->token == arg) {
        lock_note_expire(ctx, s->holder);
        lock_state(ctx, ST_EXPIRED); /* the holder is not told */
        s->holder = -1;
    }
}

/* ---- client ---- */

static void send_req(struct lock_ctx *ctx, struct client *c, int type) {
    struct lock_msg m = {.type = type, .req = ++c->req, .token = c->token};
    lock_send(ctx, lock_server(ctx, 0), &m);
    c->timeout = lock_timer(ctx, LOCK_CLOCK_MONO, SIM_NS_PER_S, TIMER_TIMEOUT, c->req);
}

static void client_acquire(struct lock_ctx *ctx, void *state) {
    struct client *c = state;
    c->releasing = 0;
    send_req(ctx, c, REQ_ACQUIRE);
}

static void client_release(struct lock_ctx *ctx, void *state) {
    struct client *c = state;
    c->releasing = 1;
    send_req(ctx, c, REQ_RELEASE);
}

static void finish(struct lock_ctx *ctx, struct client *c, int ok, uint64_t token) {
    lock_cancel(ctx, c->timeout);
    if (c->releasing) {
        lock_release_done(ctx);
    } else if (ok) {
        c->token = token;
        lock_granted(ctx, token, ((const struct config *)lock_config(ctx))->ttl_ns);
    } else {
        lock_refused(ctx);
    }
}

static void client_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct client *c = state;
    if (m->type == REPLY && m->req == c->req) finish(ctx, c, (int)m->a, m->token);
}

static void client_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    struct client *c = state;
    if (timer == TIMER_TIMEOUT && arg == c->req) finish(ctx, c, 0, 0); /* no answer: not ours */
}

static const struct lock_algo ticket = {
        .abi = LOCK_ABI_VERSION,
        .name = "ticket",
        .summary = "example plugin: a lease with a per-grant fencing token",
        .default_servers = 1,
        .max_servers = 1,
        .config_size = sizeof(struct config),
        .client_size = sizeof(struct client),
        .server_size = sizeof(struct server),
        .config_default = config_default,
        .option = option,
        .client_acquire = client_acquire,
        .client_release = client_release,
        .client_recv = client_recv,
        .client_timer = client_timer,
        .server_init = server_init,
        .server_recv = server_recv,
        .server_timer = server_timer,
        /* Left out, so NULL and 0 (lock.h, interface version 4): grant_quorum,
     * because one server's grant is the service's grant; lock_free,
     * because safety rests on holding the lock (and its token); and
     * server_zero_size, so the engine zeroes the whole server state. */
        .state_names = state_names,
        .nstates = ST_COUNT,
};

const struct lock_algo *locksim_algo(void) { return &ticket; }
