/* lease-renew: a SET NX PX lease kept alive by a background heartbeat that
 * extends the TTL while the holder works. It helps with long critical
 * sections, but the seed's point stands: the heartbeat runs in the same
 * process, so the GC pause that stalls the work stalls the heartbeat too. */
#include <stdio.h>
#include <string.h>

#include "kv.h"

/* The heartbeat follows Redisson's lock watchdog: after the lease is granted
 * the client renews it every ttl/3 (lockWatchdogTimeout 30s, renewed every
 * 10s), with a script that extends the key only if it still holds this
 * client's value (if GET == value then PEXPIRE, here KV_CAE), and it arms the
 * next renewal when the previous one has succeeded. A renewal that is refused
 * or not answered within request-timeout means the lease is gone; the client
 * stops renewing and, with on-lost=abort, abandons its next write (checked
 * just before the write leaves, through client_write_ok). Most clients only
 * log the failure and carry on, which is on-lost=continue, the default.
 *
 * The heartbeat is an ordinary timer on the client's monotonic clock, so a
 * pause of the client freezes it along with the work: a renewal that fell
 * due during the pause runs when the process resumes, too late if the lease
 * expired meanwhile. The configuration starts with struct kv_config, which
 * the kv server reads through lock_config().
 *
 * tokens=on composes the heartbeat with fencing tokens, as Hazelcast's
 * FencedLock (a fence per acquisition, kept alive by session heartbeats)
 * and Redisson's watchdog with a token do: each grant carries the store's
 * increasing counter, the client attaches it to every write, and the
 * scenario's resource rule (`resource fencing=on`) rejects a stale one. The
 * heartbeat still freezes with the process; the token is what stops the
 * late write. The counter restarts with a server that has no persistence,
 * so tokens=on turns persistence=always on unless told otherwise.
 *
 * renew-expired=on (the store's option, kv.c's renews_lapsed) lets a renewal
 * that arrives after the lease lapsed succeed while nobody leased the key
 * since, as Azure blob leases do; the heartbeat itself is unchanged. */

#define ALLOWED \
    (KV_OPT_TTL | KV_OPT_RELEASE | KV_OPT_VALUE | KV_OPT_EXPIRY_CLOCK | KV_OPT_DEADLINE | KV_OPT_PERSISTENCE | \
     KV_OPT_TIMEOUT | KV_OPT_RENEW_EXPIRED)

enum lr_on_lost { LR_LOST_CONTINUE, LR_LOST_ABORT };

struct lr_config {
    struct kv_config kv;      /* first: the kv server casts lock_config() to it */
    int renew_every;          /* divisor k: renew every ttl/k (default 3) */
    sim_ns renew_interval_ns; /* fixed interval instead of ttl/k; 0 = use k */
    int on_lost;              /* enum lr_on_lost */
    const char *renew_key;    /* which of renew-every / renew-interval was given, or NULL */
    int persistence_set;      /* persistence= was given: tokens=on leaves it alone */
};

enum { T_TIMEOUT = 1, T_HEARTBEAT };

/* States (lock_state): the store's, then the heartbeat's. */
enum {
    LR_ST_RENEWING = KV_ST_COUNT, /* a renewal (compare-and-pexpire) sent */
    LR_ST_RENEW_FAILED,           /* a renewal answered no: the lease was gone */
    LR_ST_RENEW_TIMED_OUT,        /* a renewal not answered: presumed lost */
    LR_ST_COUNT
};
static const char *const state_names[LR_ST_COUNT] = {KV_STATE_NAMES "renewing", "renewal-failed", "renewal-timed-out"};

struct lr_client {
    uint32_t req;                                     /* last request id issued */
    uint32_t acq_req;                                 /* outstanding SET NX PX, 0 = none */
    uint32_t renew_req;                               /* outstanding renewal, 0 = none */
    uint32_t rel_req;                                 /* outstanding release request, 0 = none */
    int rel_get;                                      /* 1: rel_req is the GET of get-then-del */
    uint64_t acq_timeout, renew_timeout, rel_timeout; /* timer handles, 0 = none */
    uint64_t heartbeat;                               /* timer handle of the next renewal, 0 = none */
    uint64_t value;                                   /* this grant's value */
    sim_ns acq_sent_mono;                             /* when the SET left, by the monotonic clock */
    int renewing;                                     /* 1 from the grant until release or loss */
    int lost;                                         /* 1 once a renewal failed, until the next acquire */
    int64_t renewals;                                 /* successful renewals of this grant */
};

static const struct lr_config *cfg(struct lock_ctx *ctx) { return lock_config(ctx); }

static void defaults(void *config) {
    struct lr_config *c = config;
    kv_config_default(&c->kv, "lease-renew", ALLOWED);
    c->renew_every = 3;
    c->renew_interval_ns = 0;
    c->on_lost = LR_LOST_CONTINUE;
    c->renew_key = NULL;
    c->persistence_set = 0;
}

static int renew_twice(struct lr_config *c, const char *key, char *err, size_t n) {
    if (c->renew_key && strcmp(c->renew_key, key) != 0) {
        snprintf(err, n, "%s and %s both set the renewal interval; give one of them", c->renew_key, key);
        return LSIM_EBAD_VALUE;
    }
    return 0;
}

static int option(void *config, const char *key, const char *val, char *err, size_t n) {
    struct lr_config *c = config;
    int64_t k;
    if (strcmp(key, "renew-every") == 0) {
        if (renew_twice(c, "renew-every", err, n) != 0) return LSIM_EBAD_VALUE;
        if (lock_parse_int(val, &k) != 0 || k < 2 || k > 1000000) {
            snprintf(err, n, "renew-every '%s' is not a divisor of the TTL from 2 to 1000000 (3 renews every ttl/3)",
                     val);
            return LSIM_EBAD_VALUE;
        }
        c->renew_every = (int)k;
        c->renew_interval_ns = 0;
        c->renew_key = "renew-every";
        return 0;
    }
    if (strcmp(key, "renew-interval") == 0) {
        if (renew_twice(c, "renew-interval", err, n) != 0) return LSIM_EBAD_VALUE;
        if (lock_parse_duration(val, &c->renew_interval_ns) != 0 || c->renew_interval_ns <= 0) {
            snprintf(err, n, "renew-interval '%s' is not a positive duration such as 10s", val);
            return LSIM_EBAD_VALUE;
        }
        c->renew_key = "renew-interval";
        return 0;
    }
    if (strcmp(key, "tokens") == 0) {
        if (lock_parse_bool(val, &c->kv.fenced) != 0) {
            snprintf(err, n, "tokens '%s' is not on or off: whether grants carry a fencing token", val);
            return LSIM_EBAD_VALUE;
        }
        if (c->kv.fenced && !c->persistence_set) c->kv.persistence = KV_PERSIST_ALWAYS;
        return 0;
    }
    if (strcmp(key, "persistence") == 0) c->persistence_set = 1;
    if (strcmp(key, "on-lost") == 0) {
        if (strcmp(val, "continue") == 0) c->on_lost = LR_LOST_CONTINUE;
        else if (strcmp(val, "abort") == 0) c->on_lost = LR_LOST_ABORT;
        else {
            snprintf(err, n, "on-lost '%s' is not continue or abort", val);
            return LSIM_EBAD_VALUE;
        }
        return 0;
    }
    int rc = kv_option(&c->kv, key, val, err, n);
    if (rc == LSIM_EUNKNOWN_OPTION) { /* kv's list of keys, then this algorithm's own */
        size_t l = strlen(err);
        snprintf(err + l, n - l, ", renew-every, renew-interval, on-lost, tokens");
    }
    return rc;
}

static sim_ns renew_interval(struct lock_ctx *ctx) {
    const struct lr_config *c = cfg(ctx);
    sim_ns every = c->renew_interval_ns > 0 ? c->renew_interval_ns : c->kv.ttl_ns / c->renew_every;
    return every > 0 ? every : 1; /* a TTL shorter than k ns still moves time on */
}

static uint32_t send_req(struct lock_ctx *ctx, struct lr_client *c, int type, sim_ns ttl, uint64_t *timeout) {
    struct lock_msg m = {0};
    m.type = type;
    m.req = ++c->req;
    m.value = c->value;
    m.ttl_ns = ttl;
    lock_send(ctx, lock_server(ctx, 0), &m);
    if (*timeout) lock_cancel(ctx, *timeout);
    *timeout = lock_timer(ctx, LOCK_CLOCK_MONO, cfg(ctx)->kv.request_timeout_ns, T_TIMEOUT, m.req);
    return m.req;
}

static void cancel(struct lock_ctx *ctx, uint64_t *handle) {
    if (*handle) lock_cancel(ctx, *handle);
    *handle = 0;
}

static void arm_heartbeat(struct lock_ctx *ctx, struct lr_client *c) {
    cancel(ctx, &c->heartbeat);
    c->heartbeat = lock_timer(ctx, LOCK_CLOCK_MONO, renew_interval(ctx), T_HEARTBEAT, 0);
}

/* Stop the heartbeat and forget any renewal in flight. */
static void stop_renewing(struct lock_ctx *ctx, struct lr_client *c) {
    c->renewing = 0;
    c->renew_req = 0;
    cancel(ctx, &c->heartbeat);
    cancel(ctx, &c->renew_timeout);
}

static void client_acquire(struct lock_ctx *ctx, void *state) {
    struct lr_client *c = state;
    stop_renewing(ctx, c);
    c->lost = 0;
    c->renewals = 0;
    c->value = cfg(ctx)->kv.unique_value ? (lock_random(ctx) | 1) : 1;
    c->acq_sent_mono = lock_now(ctx, LOCK_CLOCK_MONO);
    lock_state(ctx, KV_ST_ACQUIRING);
    c->acq_req = send_req(ctx, c, KV_SET_NX, cfg(ctx)->kv.ttl_ns, &c->acq_timeout);
}

static void client_release(struct lock_ctx *ctx, void *state) {
    struct lr_client *c = state;
    stop_renewing(ctx, c);
    c->rel_get = 0;
    switch (cfg(ctx)->kv.release) {
    case KV_RELEASE_CAD: c->rel_req = send_req(ctx, c, KV_CAD, 0, &c->rel_timeout); break;
    case KV_RELEASE_DEL: c->rel_req = send_req(ctx, c, KV_DEL, 0, &c->rel_timeout); break;
    default:
        c->rel_get = 1;
        c->rel_req = send_req(ctx, c, KV_GET, 0, &c->rel_timeout);
        break;
    }
}

/* A renewal was refused (timed_out 0) or not answered (1): the lease is gone. */
static void lost(struct lock_ctx *ctx, struct lr_client *c, int timed_out) {
    stop_renewing(ctx, c);
    c->lost = 1;
    lock_state(ctx, timed_out ? LR_ST_RENEW_TIMED_OUT : LR_ST_RENEW_FAILED);
    lock_note(ctx, timed_out ? "renewal timed out: lock presumed lost" : "renewal failed: lock lost", c->renewals,
              cfg(ctx)->on_lost == LR_LOST_ABORT);
    /* on-lost=abort: the client acts on it and leaves the critical section. */
    if (cfg(ctx)->on_lost == LR_LOST_ABORT) lock_lost(ctx);
}

static void acquire_done(struct lock_ctx *ctx, struct lr_client *c, const struct lock_msg *m) {
    c->acq_req = 0;
    cancel(ctx, &c->acq_timeout);
    if (m && m->a) {
        c->renewing = 1;
        arm_heartbeat(ctx, c);
        /* The lease started somewhere in the round trip: count from the send. */
        sim_ns validity = cfg(ctx)->kv.ttl_ns - (lock_now(ctx, LOCK_CLOCK_MONO) - c->acq_sent_mono);
        lock_state(ctx, KV_ST_GRANTED);
        lock_granted(ctx, cfg(ctx)->kv.fenced ? m->token : 0, validity > 0 ? validity : 1);
    } else {
        lock_state(ctx, KV_ST_REFUSED);
        lock_refused(ctx);
    }
}

static void renew_done(struct lock_ctx *ctx, struct lr_client *c, const struct lock_msg *m) {
    c->renew_req = 0;
    cancel(ctx, &c->renew_timeout);
    if (m && m->a) {
        c->renewals++;
        arm_heartbeat(ctx, c);
    } else {
        lost(ctx, c, m == NULL);
    }
}

static void release_done(struct lock_ctx *ctx, struct lr_client *c, const struct lock_msg *m) {
    c->rel_req = 0;
    cancel(ctx, &c->rel_timeout);
    if (c->rel_get && m && m->a && m->value == c->value) { /* still ours, so far as GET knew */
        c->rel_get = 0;
        c->rel_req = send_req(ctx, c, KV_DEL, 0, &c->rel_timeout);
        return;
    }
    lock_release_done(ctx);
}

static void client_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct lr_client *c = state;
    if (m->type != KV_REPLY || m->req == 0) return;
    if (m->req == c->acq_req) acquire_done(ctx, c, m);
    else if (m->req == c->renew_req) renew_done(ctx, c, m);
    else if (m->req == c->rel_req) release_done(ctx, c, m);
    /* else: a late reply to a request the client has given up on */
}

static void client_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    struct lr_client *c = state;
    if (timer == T_HEARTBEAT) {
        c->heartbeat = 0;
        if (!c->renewing) return;
        lock_state(ctx, LR_ST_RENEWING);
        c->renew_req = send_req(ctx, c, KV_CAE, cfg(ctx)->kv.ttl_ns, &c->renew_timeout);
        return;
    }
    if (timer != T_TIMEOUT || arg == 0) return;
    uint32_t req = (uint32_t)arg;
    if (req == c->acq_req) {
        c->acq_timeout = 0;
        lock_note(ctx, "request timed out", (int64_t)req, 0);
        lock_state(ctx, KV_ST_TIMED_OUT);
        acquire_done(ctx, c, NULL);
    } else if (req == c->renew_req) {
        c->renew_timeout = 0;
        renew_done(ctx, c, NULL);
    } else if (req == c->rel_req) {
        c->rel_timeout = 0;
        lock_note(ctx, "request timed out", (int64_t)req, 0);
        lock_state(ctx, KV_ST_TIMED_OUT);
        release_done(ctx, c, NULL);
    }
}

/* The client's own check before a write: with on-lost=abort, a client that
 * has learnt its lease is gone does not write. It knows only what a renewal
 * told it; a lease that expired during a pause is unknown until the next
 * renewal's answer arrives. */
static int client_write_ok(struct lock_ctx *ctx, void *state) {
    const struct lr_client *c = state;
    return !(cfg(ctx)->on_lost == LR_LOST_ABORT && c->lost);
}

const struct lock_algo algo_lease_renew = {
        .abi = LOCK_ABI_VERSION,
        .name = "lease-renew",
        .summary = "SET NX PX lease renewed by a heartbeat every ttl/3 (Redisson's watchdog); a pause freezes the "
                   "heartbeat too",
        .default_servers = 1,
        .max_servers = 1,
        .config_size = sizeof(struct lr_config),
        .client_size = sizeof(struct lr_client),
        .config_default = defaults,
        .option = option,
        .client_acquire = client_acquire,
        .client_release = client_release,
        .client_recv = client_recv,
        .client_timer = client_timer,
        KV_SERVER_CALLBACKS,
        .client_write_ok = client_write_ok,
        .state_names = state_names,
        .nstates = LR_ST_COUNT,
};
