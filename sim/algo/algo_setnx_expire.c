/* setnx-expire: SETNX key value, then a separate EXPIRE key ttl, the pattern
 * that predates SET's NX/EX options. Two commands are not one operation: a
 * holder that dies after SETNX and before EXPIRE leaves a key with no TTL,
 * held forever (the seed's detail 1 of "The lease: locks must expire"). */
#include <stdio.h>
#include <string.h>

#include "kv.h"

/* The two-command pattern is what SET's NX and EX options (Redis 2.6.12)
 * replaced; the Redis SET documentation gives `SET resource-name anystring
 * NX EX max-lock-time` as the locking primitive instead. The client: SETNX
 * lock 1, and on success EXPIRE lock ttl. As naive code does, it does not
 * look at EXPIRE's answer: the reply to SETNX already said "you have it".
 *
 * Crashing between the two steps, two ways:
 *   `on A.during-acquire crash A`  the point fires once SETNX is sent; the
 *       request still reaches the store (a dying process's packets do), so
 *       the key is set and EXPIRE never leaves. Works at any latency.
 *   `gap=DUR` with `@T crash A`    after SETNX's reply the client waits gap
 *       (logging, a metrics call, a GC pause) before sending EXPIRE, so a
 *       crash at a true time can land after the client knows it has the key.
 * The server is the shared kv store; the configuration therefore starts with
 * struct kv_config, which kv_server_* read through lock_config(). */

#define ALLOWED \
    (KV_OPT_TTL | KV_OPT_RELEASE | KV_OPT_VALUE | KV_OPT_EXPIRY_CLOCK | KV_OPT_DEADLINE | KV_OPT_PERSISTENCE | \
     KV_OPT_TIMEOUT)

struct sx_config {
    struct kv_config kv; /* first: the kv server casts lock_config() to it */
    sim_ns gap_ns;       /* wait between SETNX's reply and sending EXPIRE */
};

enum { SX_NONE, SX_SETNX, SX_GAP, SX_EXPIRE, SX_RELEASE, SX_RELEASE_GET, SX_RELEASE_DEL };
enum { T_TIMEOUT = 1, T_GAP };

/* States (lock_state): the store's, then those of the two-step acquire. */
enum {
    SX_ST_NO_TTL = KV_ST_COUNT, /* SETNX set the key: no TTL until EXPIRE lands */
    SX_ST_EXPIRE_UNANSWERED,    /* EXPIRE timed out: the key may never expire */
    SX_ST_EXPIRE_NO_KEY,        /* EXPIRE found no key (someone deleted it) */
    SX_ST_COUNT
};
static const char *const state_names[SX_ST_COUNT] = {KV_STATE_NAMES "set-without-ttl", "expire-unanswered",
                                                     "expire-found-no-key"};

struct sx_client {
    uint32_t req;            /* id of the outstanding request */
    int phase;               /* SX_*: what the client is waiting for */
    uint64_t value;          /* the value its SETNX wrote */
    uint64_t timeout;        /* timer handle of the request timeout, 0 = none */
    uint64_t gap;            /* timer handle of the gap before EXPIRE, 0 = none */
    sim_ns expire_sent_mono; /* when the EXPIRE left: the TTL starts after it */
};

static const struct sx_config *cfg(struct lock_ctx *ctx) { return lock_config(ctx); }

static void defaults(void *config) {
    struct sx_config *c = config;
    kv_config_default(&c->kv, "setnx-expire", ALLOWED);
    c->kv.unique_value = 0; /* SETNX lock 1, as the old pattern wrote it */
    c->kv.release = KV_RELEASE_DEL;
    c->kv.persistence = KV_PERSIST_ALWAYS; /* the stuck key survives a store restart */
    c->gap_ns = 0;
}

static int option(void *config, const char *key, const char *val, char *err, size_t n) {
    struct sx_config *c = config;
    if (strcmp(key, "gap") == 0) {
        if (lock_parse_duration(val, &c->gap_ns) != 0) {
            snprintf(err, n, "gap '%s' is not a duration such as 50ms", val);
            return LSIM_EBAD_VALUE;
        }
        return 0;
    }
    int rc = kv_option(&c->kv, key, val, err, n);
    if (rc == LSIM_EUNKNOWN_OPTION) { /* kv's list of keys, then this algorithm's own */
        size_t l = strlen(err);
        snprintf(err + l, n - l, ", gap");
    }
    return rc;
}

static void send_req(struct lock_ctx *ctx, struct sx_client *c, int type, int phase, sim_ns ttl) {
    struct lock_msg m = {0};
    m.type = type;
    m.req = ++c->req;
    m.value = c->value;
    m.ttl_ns = ttl;
    c->phase = phase;
    lock_send(ctx, lock_server(ctx, 0), &m);
    if (c->timeout) lock_cancel(ctx, c->timeout);
    c->timeout = lock_timer(ctx, LOCK_CLOCK_MONO, cfg(ctx)->kv.request_timeout_ns, T_TIMEOUT, c->req);
}

static void client_acquire(struct lock_ctx *ctx, void *state) {
    struct sx_client *c = state;
    c->value = cfg(ctx)->kv.unique_value ? (lock_random(ctx) | 1) : 1;
    lock_state(ctx, KV_ST_ACQUIRING);
    send_req(ctx, c, KV_SET_NX, SX_SETNX, 0); /* step 1: SETNX, no expiry */
}

static void send_expire(struct lock_ctx *ctx, struct sx_client *c) {
    c->expire_sent_mono = lock_now(ctx, LOCK_CLOCK_MONO);
    send_req(ctx, c, KV_EXPIRE, SX_EXPIRE, cfg(ctx)->kv.ttl_ns); /* step 2 */
}

static void client_release(struct lock_ctx *ctx, void *state) {
    struct sx_client *c = state;
    switch (cfg(ctx)->kv.release) {
    case KV_RELEASE_CAD: send_req(ctx, c, KV_CAD, SX_RELEASE, 0); break;
    case KV_RELEASE_DEL: send_req(ctx, c, KV_DEL, SX_RELEASE, 0); break;
    default: send_req(ctx, c, KV_GET, SX_RELEASE_GET, 0); break;
    }
}

/* The answer to the outstanding request (m NULL: it timed out). */
static void done(struct lock_ctx *ctx, struct sx_client *c, const struct lock_msg *m) {
    int phase = c->phase;
    c->phase = SX_NONE;
    if (c->timeout) lock_cancel(ctx, c->timeout);
    c->timeout = 0;
    switch (phase) {
    case SX_SETNX:
        if (!m || !m->a) {
            lock_state(ctx, KV_ST_REFUSED);
            lock_refused(ctx);
            break;
        }
        lock_state(ctx, SX_ST_NO_TTL);
        if (cfg(ctx)->gap_ns > 0) {
            c->phase = SX_GAP;
            c->gap = lock_timer(ctx, LOCK_CLOCK_MONO, cfg(ctx)->gap_ns, T_GAP, 0);
        } else {
            send_expire(ctx, c);
        }
        break;
    case SX_EXPIRE:
        if (!m) { /* no answer: the key may or may not have a TTL now */
            lock_note(ctx, "EXPIRE timed out: the key may have no TTL", 0, 0);
            lock_state(ctx, SX_ST_EXPIRE_UNANSWERED);
            lock_refused(ctx);
            break;
        }
        if (!m->a) {
            lock_note(ctx, "EXPIRE found no key (another client deleted it)", 0, 0);
            lock_state(ctx, SX_ST_EXPIRE_NO_KEY);
        }
        lock_state(ctx, KV_ST_GRANTED);
        { /* the TTL began when EXPIRE reached the server, within the round trip */
            sim_ns validity = cfg(ctx)->kv.ttl_ns - (lock_now(ctx, LOCK_CLOCK_MONO) - c->expire_sent_mono);
            lock_granted(ctx, 0, validity > 0 ? validity : 1);
        }
        break;
    case SX_RELEASE_GET:
        if (m && m->a && m->value == c->value) {
            send_req(ctx, c, KV_DEL, SX_RELEASE_DEL, 0);
            return;
        }
        lock_release_done(ctx);
        break;
    case SX_RELEASE:
    case SX_RELEASE_DEL: lock_release_done(ctx); break;
    default: break;
    }
}

static void client_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct sx_client *c = state;
    if (m->type != KV_REPLY || m->req != c->req || c->phase == SX_NONE || c->phase == SX_GAP) return; /* a late reply */
    done(ctx, c, m);
}

static void client_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    struct sx_client *c = state;
    if (timer == T_GAP) {
        c->gap = 0;
        if (c->phase == SX_GAP) send_expire(ctx, c);
        return;
    }
    if (timer != T_TIMEOUT || arg != c->req || c->phase == SX_NONE || c->phase == SX_GAP) return;
    c->timeout = 0;
    lock_note(ctx, "request timed out", (int64_t)arg, 0);
    lock_state(ctx, KV_ST_TIMED_OUT);
    done(ctx, c, NULL);
}

const struct lock_algo algo_setnx_expire = {
        .abi = LOCK_ABI_VERSION,
        .name = "setnx-expire",
        .summary = "SETNX then a separate EXPIRE: a crash between the two leaves a key that never expires",
        .default_servers = 1,
        .max_servers = 1,
        .config_size = sizeof(struct sx_config),
        .client_size = sizeof(struct sx_client),
        .config_default = defaults,
        .option = option,
        .client_acquire = client_acquire,
        .client_release = client_release,
        .client_recv = client_recv,
        .client_timer = client_timer,
        KV_SERVER_CALLBACKS,
        .state_names = state_names,
        .nstates = SX_ST_COUNT,
};
