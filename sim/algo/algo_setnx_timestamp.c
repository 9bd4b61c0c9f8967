/* setnx-timestamp: the legacy locking recipe of redis.io's SETNX page
 * ("Design pattern: Locking with SETNX", https://redis.io/docs/latest/commands/setnx/,
 * discouraged there in favour of SET NX PX and Redlock, and documented
 * "because certain existing implementations link to this page").
 *
 * The key never expires in the store. Its value is a timestamp the clients
 * compare: SETNX lock.foo <current Unix time + lock timeout + 1>, the time
 * from which the lock "should no longer be considered valid". A client that
 * SETNX refuses GETs the key; "if such a timestamp is equal to the current
 * Unix time the lock is no longer valid" (and the older page: "<= the
 * current Unix time"), so a stored timestamp <= the reader's now is a dead
 * holder's. Two ways to take it over:
 *   recover=del     DEL lock.foo, then SETNX again: the page's race. Two
 *                   clients that both read the dead timestamp both DEL and
 *                   both SETNX; the second DEL removes the first one's fresh
 *                   lock, and "both C1 and C2 acquired the lock".
 *   recover=getset  GETSET lock.foo <now + timeout + 1> (the default): only
 *                   the client that reads the old, expired timestamp back has
 *                   the lock; a later one reads a fresh timestamp and starts
 *                   over (its own timestamp stays in the key, "not a problem").
 * Release: the page's "IMPORTANT NOTE": a holder checks that its timeout has
 * not expired before it DELs (release-check=on, the default); release-check=off
 * DELs without looking (the key is not the store's `release=`, whose values
 * are the SET pattern's, so `--algo setnx-timestamp` drops that one). Every timestamp is the client's own wall clock
 * (Unix seconds by default, stamp-unit=ms for the millisecond variants): the
 * recipe trusts client clocks, so a client whose clock runs ahead declares a
 * live holder dead. Clients read the clock once per step, when they compute
 * the value they send or compare. One store, no replication. */
#include <stdio.h>
#include <string.h>

#include "kv.h"

#define ALLOWED (KV_OPT_TTL | KV_OPT_PERSISTENCE | KV_OPT_TIMEOUT)

enum { RECOVER_GETSET, RECOVER_DEL };
enum { TS_RELEASE_CHECK, TS_RELEASE_DEL };

struct ts_config {
    struct kv_config kv; /* first: the kv server casts lock_config() to it */
    int recover;         /* RECOVER_* */
    int release;         /* TS_RELEASE_* (release-check=on|off) */
    sim_ns unit_ns;      /* the timestamps' unit: 1 s (Unix time) or 1 ms */
};

enum { P_NONE, P_SETNX, P_GET, P_DEL, P_SETNX_AGAIN, P_GETSET, P_RELEASE };
enum { T_TIMEOUT = 1 };

/* States (lock_state): the store's (the client reports acquiring, granted,
 * refused and timed-out itself; the store's DEL released or
 * deleted-anothers-lock), then what the recipe's client concludes from the
 * timestamps it reads. */
enum {
    TS_ST_HOLDER_LIVE = KV_ST_COUNT, /* GET: the holder's timestamp has not passed */
    TS_ST_STAMP_PASSED,              /* GET: the timestamp has passed, the holder is judged dead */
    TS_ST_KEY_VANISHED,              /* GET or GETSET: the key was gone meanwhile */
    TS_ST_DEL_SENT,                  /* recover=del: DEL of a lock it judged dead */
    TS_ST_SETNX_AGAIN_LOST,          /* recover=del: SETNX after the DEL found a key again */
    TS_ST_GETSET_WON,                /* GETSET read back the expired timestamp: taken over */
    TS_ST_GETSET_READ_LIVE,          /* GETSET read back a live timestamp: another was faster */
    TS_ST_RELEASE_SKIPPED,           /* release: its own timestamp had passed, no DEL */
    TS_ST_COUNT
};
static const char *const state_names[TS_ST_COUNT] = {
        KV_STATE_NAMES "holder-live", "timestamp-passed", "key-vanished",     "del-stale-sent",
        "setnx-again-lost",           "getset-won",       "getset-read-live", "release-skipped-expired"};

struct ts_client {
    uint32_t req;     /* id of the outstanding request */
    int phase;        /* P_*: what the client is waiting for */
    int64_t mine;     /* the timestamp this client wrote last */
    int64_t now;      /* its clock's reading, in stamp units, when it sent the request */
    uint64_t timeout; /* request timeout timer, 0 = none */
};

static const struct ts_config *cfg(struct lock_ctx *ctx) { return lock_config(ctx); }

static void defaults(void *config) {
    struct ts_config *c = config;
    kv_config_default(&c->kv, "setnx-timestamp", ALLOWED);
    c->kv.unique_value = 0;
    c->kv.persistence = KV_PERSIST_ALWAYS; /* a dead holder's timestamp survives a store restart */
    c->kv.extra_options = "recover, release-check, stamp-unit";
    c->recover = RECOVER_GETSET;
    c->release = TS_RELEASE_CHECK;
    c->unit_ns = SIM_NS_PER_S;
}

static int option(void *config, const char *key, const char *val, char *err, size_t n) {
    struct ts_config *c = config;
    if (strcmp(key, "recover") == 0) {
        if (strcmp(val, "getset") == 0) c->recover = RECOVER_GETSET;
        else if (strcmp(val, "del") == 0) c->recover = RECOVER_DEL;
        else {
            snprintf(err, n, "recover '%s' is not getset or del", val);
            return LSIM_EBAD_VALUE;
        }
        return 0;
    }
    if (strcmp(key, "release-check") == 0) {
        int on;
        if (lock_parse_bool(val, &on) != 0) {
            snprintf(err, n, "release-check '%s' is not on or off", val);
            return LSIM_EBAD_VALUE;
        }
        c->release = on ? TS_RELEASE_CHECK : TS_RELEASE_DEL;
        return 0;
    }
    if (strcmp(key, "stamp-unit") == 0) {
        if (strcmp(val, "s") == 0) c->unit_ns = SIM_NS_PER_S;
        else if (strcmp(val, "ms") == 0) c->unit_ns = SIM_NS_PER_MS;
        else {
            snprintf(err, n, "stamp-unit '%s' is not s or ms", val);
            return LSIM_EBAD_VALUE;
        }
        return 0;
    }
    return kv_option(&c->kv, key, val, err, n);
}

/* The lock timeout is added to a timestamp, so it is a whole number of units. */
static int validate(const void *config, int nservers, char *err, size_t n) {
    const struct ts_config *c = config;
    (void)nservers;
    if (c->kv.ttl_ns % c->unit_ns != 0) {
        snprintf(err, n,
                 "ttl is not a whole number of %s; the recipe adds it to a timestamp in %s "
                 "(use stamp-unit=ms for a finer timeout)",
                 c->unit_ns == SIM_NS_PER_S ? "seconds" : "milliseconds",
                 c->unit_ns == SIM_NS_PER_S ? "Unix seconds" : "milliseconds");
        return LSIM_EBAD_VALUE;
    }
    return 0;
}

/* This client's simulated wall clock (lock_now) in stamp units, rounded down,
 * as the recipe's client reads its own clock in whole seconds. */
static int64_t now_stamp(struct lock_ctx *ctx) {
    sim_ns w = lock_now(ctx, LOCK_CLOCK_WALL), u = cfg(ctx)->unit_ns;
    return (int64_t)(w / u - (w % u < 0 ? 1 : 0));
}

static void send_req(struct lock_ctx *ctx, struct ts_client *c, int type, int phase, int64_t value) {
    struct lock_msg m = {0};
    m.type = type;
    m.req = ++c->req;
    m.value = (uint64_t)value;
    m.b = c->now;
    c->phase = phase;
    lock_send(ctx, lock_server(ctx, 0), &m);
    if (c->timeout) lock_cancel(ctx, c->timeout);
    c->timeout = lock_timer(ctx, LOCK_CLOCK_MONO, cfg(ctx)->kv.request_timeout_ns, T_TIMEOUT, c->req);
}

/* SETNX (or GETSET) with a fresh timestamp: now + lock timeout + 1. */
static void send_stamp(struct lock_ctx *ctx, struct ts_client *c, int type, int phase) {
    c->now = now_stamp(ctx);
    c->mine = c->now + cfg(ctx)->kv.ttl_ns / cfg(ctx)->unit_ns + 1;
    send_req(ctx, c, type, phase, c->mine);
}

static void client_init(struct lock_ctx *ctx, void *state) {
    struct ts_client *c = state;
    c->req = lock_incarnation(ctx) << 24;
}

static void client_acquire(struct lock_ctx *ctx, void *state) {
    lock_state(ctx, KV_ST_ACQUIRING);
    send_stamp(ctx, state, KV_SET_NX, P_SETNX);
}

/* It believes it holds the lock until its timestamp comes. */
static void granted(struct lock_ctx *ctx, struct ts_client *c) {
    sim_ns left = c->mine * cfg(ctx)->unit_ns - lock_now(ctx, LOCK_CLOCK_WALL);
    lock_state(ctx, KV_ST_GRANTED);
    lock_granted(ctx, 0, left > 0 ? left : 1);
}

static void client_release(struct lock_ctx *ctx, void *state) {
    struct ts_client *c = state;
    c->now = now_stamp(ctx);
    if (cfg(ctx)->release == TS_RELEASE_CHECK && c->mine <= c->now) {
        /* note: a = its timestamp, b = its clock now */
        lock_note(ctx, "release: its timestamp has passed, so it does not DEL (the recipe's check)", c->mine, c->now);
        lock_state(ctx, TS_ST_RELEASE_SKIPPED);
        lock_release_done(ctx);
        return;
    }
    send_req(ctx, c, KV_DEL, P_RELEASE, 0);
}

/* The answer to the outstanding request (m NULL: it timed out). */
static void done(struct lock_ctx *ctx, struct ts_client *c, const struct lock_msg *m) {
    int phase = c->phase;
    c->phase = P_NONE;
    if (c->timeout) lock_cancel(ctx, c->timeout);
    c->timeout = 0;
    if (phase == P_RELEASE) {
        lock_release_done(ctx);
        return;
    }
    if (!m) {
        lock_state(ctx, KV_ST_TIMED_OUT);
        lock_refused(ctx);
        return;
    }
    switch (phase) {
    case P_SETNX:
        if (m->a) granted(ctx, c);
        else { /* held: is the holder dead? */ lock_state(ctx, KV_ST_REFUSED);
            c->now = now_stamp(ctx);
            send_req(ctx, c, KV_GET, P_GET, 0);
        }
        return;
    case P_GET:
        if (!m->a) { /* gone meanwhile: start over */
            lock_state(ctx, TS_ST_KEY_VANISHED);
            lock_refused(ctx);
        } else if ((int64_t)m->value > c->now) { /* a live holder */
            lock_state(ctx, TS_ST_HOLDER_LIVE);
            lock_refused(ctx);
        } else if (cfg(ctx)->recover == RECOVER_DEL) {
            lock_state(ctx, TS_ST_STAMP_PASSED);
            lock_state(ctx, TS_ST_DEL_SENT);
            /* note: a = the stale timestamp, b = its clock */
            lock_note(ctx, "the lock's timestamp has passed: DEL, then SETNX", (int64_t)m->value, c->now);
            send_req(ctx, c, KV_DEL_STALE, P_DEL, 0);
        } else {
            lock_note(ctx, "the lock's timestamp has passed: GETSET a new one", (int64_t)m->value, c->now);
            lock_state(ctx, TS_ST_STAMP_PASSED);
            send_stamp(ctx, c, KV_GETSET, P_GETSET);
        }
        return;
    case P_DEL: send_stamp(ctx, c, KV_SET_NX, P_SETNX_AGAIN); return;
    case P_SETNX_AGAIN:
        if (m->a) granted(ctx, c);
        else {
            lock_state(ctx, TS_ST_SETNX_AGAIN_LOST);
            lock_refused(ctx);
        }
        return;
    case P_GETSET:
        /* Won only if the old value is still an expired timestamp. */
        if (m->a && (int64_t)m->value <= c->now) {
            lock_state(ctx, TS_ST_GETSET_WON);
            granted(ctx, c);
        } else {
            /* note: a = the timestamp read back, b = its clock */
            lock_note(ctx, "GETSET read back a live timestamp: another client was faster", m->a ? (int64_t)m->value : 0,
                      c->now);
            lock_state(ctx, m->a ? TS_ST_GETSET_READ_LIVE : TS_ST_KEY_VANISHED);
            lock_refused(ctx);
        }
        return;
    default: return;
    }
}

static void client_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct ts_client *c = state;
    if (m->type != KV_REPLY || m->req != c->req || c->phase == P_NONE) return; /* a late reply */
    done(ctx, c, m);
}

static void client_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    struct ts_client *c = state;
    if (timer != T_TIMEOUT || arg != c->req || c->phase == P_NONE) return;
    c->timeout = 0;
    lock_note(ctx, "request timed out", (int64_t)arg, 0);
    done(ctx, c, NULL);
}

const struct lock_algo algo_setnx_timestamp = {
        .abi = LOCK_ABI_VERSION,
        .name = "setnx-timestamp",
        .summary = "redis.io's legacy SETNX recipe: the value is an expiry timestamp clients compare; recover by "
                   "DEL+SETNX or GETSET",
        .default_servers = 1,
        .max_servers = 1,
        .config_size = sizeof(struct ts_config),
        .client_size = sizeof(struct ts_client),
        .config_default = defaults,
        .option = option,
        .validate = validate,
        .client_init = client_init,
        .client_acquire = client_acquire,
        .client_release = client_release,
        .client_recv = client_recv,
        .client_timer = client_timer,
        KV_SERVER_CALLBACKS,
        .state_names = state_names,
        .nstates = TS_ST_COUNT,
};
