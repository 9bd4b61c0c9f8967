/* redlock: the Redlock algorithm across N independent Redis-like servers
 * (sim/algo/kv.c), with the options that show where its safety argument rests:
 * the elapsed-time check, the clock it is measured by, the drift allowance,
 * the servers' expiry clock, persistence, and delayed restarts. */
#include <stdio.h>
#include <string.h>

#include "kv.h"

/* The algorithm follows the Redis documentation, "Distributed Locks with
 * Redis" (the Redlock description), in our own words:
 *
 *  1. The client reads the current time (here: its monotonic clock, unless
 *     elapsed-clock=wall).
 *  2. It sends SET key value NX PX ttl, with one random value for this
 *     attempt, to all N servers at once (the documentation's "multiplexing"
 *     advice), each request with a timeout small against the TTL so that a
 *     dead server costs little (the documentation suggests 5-50ms for a 10s
 *     TTL; we default to 50ms).
 *  3. When every server has answered or the timeout has passed, it computes
 *     the time elapsed since step 1. The lock is acquired if and only if a
 *     majority (N/2+1) said OK and the time left is positive:
 *         validity = TTL - elapsed - drift,  drift = TTL * 1% + 2ms
 *     (the drift allowance of the reference implementations: 1% for clock
 *     rate differences between the servers, plus 2ms for Redis's 1ms expiry
 *     precision).
 *  4. Otherwise it unlocks every server, even those that did not answer OK
 *     (a SET may have succeeded with its reply lost), by the same
 *     compare-and-delete script as the single-instance lock, and the attempt
 *     fails. Retrying after a random delay is the caller's job: here, the
 *     client program's `acquire retry=.. jitter=..`.
 *
 * Where the argument is contested: Kleppmann ("How to do distributed
 * locking", 2016) showed that the algorithm's safety rests on timing
 * assumptions. (a) A server whose wall clock jumps expires a key early, and
 * a second client can then assemble its own majority
 * (scenarios/redlock-clock-jump.lsim). (b) A process pause, a network delay
 * or a GC pause after the validity check cannot be detected, and Redlock
 * issues no fencing token, so the resource cannot reject the late writer
 * (scenarios/redlock-gc-pause-after-acquire.lsim). antirez replied ("Is
 * Redlock safe?", 2016) that servers should expire keys by a monotonic
 * clock (expiry-clock=monotonic), that the elapsed-time check of step 3
 * catches pauses and delays *during* acquisition (elapsed-check), that a
 * pause after acquisition defeats every lock with auto-release alike, and,
 * for restarts without persistence, that a crashed server should stay
 * unavailable for longer than the TTL ("delayed restarts", delayed-restart=).
 * Each option below makes one side of that exchange runnable. */

#define ALLOWED_KV (KV_OPT_TTL | KV_OPT_EXPIRY_CLOCK | KV_OPT_DEADLINE | KV_OPT_PERSISTENCE | KV_OPT_TIMEOUT)
#define PPM 1000000

struct redlock_config {
    struct kv_config kv;       /* first: kv_server_* read lock_config() as a struct kv_config */
    int quorum;                /* OK replies needed; 0 = a majority, N/2+1 of this run's servers */
    int elapsed_check;         /* 1 = refuse when TTL - elapsed - drift <= 0 (step 3) */
    int elapsed_clock;         /* enum lock_clock the client measures the elapsed time by */
    int64_t drift_ppm;         /* drift allowance per unit of TTL, ppm (10000 = 1%) */
    sim_ns drift_extra_ns;     /* added to the drift allowance (2ms) */
    int release_all;           /* 1 = unlock on every server; 0 = only where SET said OK */
    sim_ns delayed_restart_ns; /* a restarted server refuses SET NX for this long; 0 = never */
};

static const char *const option_names =
        "ttl, quorum, elapsed-check, elapsed-clock, drift-factor, drift-extra, request-timeout, "
        "release-all, expiry-clock, deadline, persistence, delayed-restart";

static void config_default(void *config) {
    struct redlock_config *c = config;
    memset(c, 0, sizeof *c);
    kv_config_default(&c->kv, "redlock", ALLOWED_KV);
    c->kv.ttl_ns = 10 * SIM_NS_PER_S;              /* the documentation's example TTL */
    c->kv.request_timeout_ns = 50 * SIM_NS_PER_MS; /* small against the TTL (step 2) */
    c->kv.unique_value = 1;                        /* one random value per attempt */
    c->kv.persistence = KV_PERSIST_NONE;           /* a plain Redis without fsync=always */
    c->kv.expiry_clock = LOCK_CLOCK_WALL;          /* Redis expires keys by unix time */
    c->kv.deadline = KV_DEADLINE_REDIS;            /* and keeps them through the deadline's
                                                      millisecond (db.c, keyIsExpired) */
    c->quorum = 0;
    c->elapsed_check = 1;
    c->elapsed_clock = LOCK_CLOCK_MONO;
    c->drift_ppm = 10000;
    c->drift_extra_ns = 2 * SIM_NS_PER_MS;
    c->release_all = 1;
    c->delayed_restart_ns = 0;
}

/* "1%", "0.01" or "10000ppm" -> ppm in [0, 10^6], exactly; -1 if malformed
 * or finer than 1 ppm. */
static int ratio_ppm(const char *t, int64_t *out) {
    size_t n = strlen(t);
    if (n > 3 && strcmp(t + n - 3, "ppm") == 0) {
        char num[LOCK_OPT_MAX];
        if (n - 3 >= sizeof num) return -1;
        memcpy(num, t, n - 3);
        num[n - 3] = 0;
        int64_t v;
        if (lock_parse_int(num, &v) != 0 || v < 0 || v > PPM) return -1;
        *out = v;
        return 0;
    }
    int pct = n > 1 && t[n - 1] == '%';
    size_t end = pct ? n - 1 : n;
    int64_t scale = pct ? 10000 : PPM; /* ppm per unit written */
    int64_t ip = 0, frac = 0, fscale = 1;
    size_t i = 0;
    int digits = 0;
    for (; i < end && t[i] >= '0' && t[i] <= '9'; i++, digits++) {
        ip = ip * 10 + (t[i] - '0');
        if (ip > 100) return -1;
    }
    if (i < end && t[i] == '.') {
        for (i++; i < end && t[i] >= '0' && t[i] <= '9'; i++, digits++) {
            if (fscale >= scale) { /* beyond 1 ppm: only zeros allowed */
                if (t[i] != '0') return -1;
                continue;
            }
            frac = frac * 10 + (t[i] - '0');
            fscale *= 10;
        }
    }
    if (i != end || digits == 0) return -1;
    int64_t v = ip * scale + frac * (scale / fscale);
    if (v > PPM) return -1;
    *out = v;
    return 0;
}

static int bad(char *err, size_t n, const char *key, const char *val, const char *expected) {
    snprintf(err, n, "%s '%s' is not %s", key, val, expected);
    return LSIM_EBAD_VALUE;
}

static int option(void *config, const char *key, const char *val, char *err, size_t n) {
    struct redlock_config *c = config;
    int64_t v;
    if (strcmp(key, "quorum") == 0) {
        if (lock_parse_int(val, &v) != 0 || v < 1 || v > LOCK_MAX_SERVERS)
            return bad(err, n, key, val, "a number of servers from 1 to 15");
        c->quorum = (int)v;
        return 0;
    }
    if (strcmp(key, "elapsed-check") == 0) {
        if (lock_parse_bool(val, &c->elapsed_check) != 0) return bad(err, n, key, val, "on or off");
        return 0;
    }
    if (strcmp(key, "elapsed-clock") == 0) {
        if (strcmp(val, "monotonic") == 0) c->elapsed_clock = LOCK_CLOCK_MONO;
        else if (strcmp(val, "wall") == 0) c->elapsed_clock = LOCK_CLOCK_WALL;
        else return bad(err, n, key, val, "monotonic or wall");
        return 0;
    }
    if (strcmp(key, "drift-factor") == 0) {
        if (ratio_ppm(val, &c->drift_ppm) != 0)
            return bad(err, n, key, val, "a fraction of the TTL such as 1%, 0.01 or 10000ppm (0 to 100%)");
        return 0;
    }
    if (strcmp(key, "drift-extra") == 0) {
        if (lock_parse_duration(val, &c->drift_extra_ns) != 0 || c->drift_extra_ns < 0)
            return bad(err, n, key, val, "a duration such as 2ms");
        return 0;
    }
    if (strcmp(key, "release-all") == 0) {
        if (lock_parse_bool(val, &c->release_all) != 0) return bad(err, n, key, val, "on or off");
        return 0;
    }
    if (strcmp(key, "delayed-restart") == 0) {
        if (lock_parse_duration(val, &c->delayed_restart_ns) != 0 || c->delayed_restart_ns < 0)
            return bad(err, n, key, val, "a duration such as 15s (0 = off)");
        return 0;
    }
    if (strcmp(key, "ttl") == 0 || strcmp(key, "request-timeout") == 0 || strcmp(key, "expiry-clock") == 0 ||
        strcmp(key, "deadline") == 0 || strcmp(key, "persistence") == 0)
        return kv_option(&c->kv, key, val, err, n);
    snprintf(err, n, "unknown option '%s' for redlock; expected %s", key, option_names);
    return LSIM_EUNKNOWN_OPTION;
}

static const struct redlock_config *cfg(struct lock_ctx *ctx) { return lock_config(ctx); }

/* A quorum the servers cannot reach would refuse every attempt: say so up front. */
static int validate(const void *config, int nservers, char *err, size_t n) {
    const struct redlock_config *c = config;
    if (c->quorum > nservers) {
        snprintf(err, n,
                 "quorum=%d is more than the %d lock server%s of this run; use servers=N or a "
                 "smaller quorum",
                 c->quorum, nservers, nservers == 1 ? "" : "s");
        return LSIM_EBAD_VALUE;
    }
    return 0;
}

static int quorum_of(struct lock_ctx *ctx) { return cfg(ctx)->quorum ? cfg(ctx)->quorum : lock_nservers(ctx) / 2 + 1; }

/* The lock service's own grant: the instant the quorum'th server granted
 * (lock_algo.grant_quorum), whenever the client hears of it. */
static int grant_quorum(const void *config, int nservers) {
    const struct redlock_config *c = config;
    return c->quorum ? c->quorum : nservers / 2 + 1;
}

/* The drift allowance for a TTL: TTL * drift_ppm / 10^6 + extra, split so
 * that no product overflows for TTLs up to SIM_TIME_MAX. */
static sim_ns drift_of(const struct redlock_config *c) {
    sim_ns ttl = c->kv.ttl_ns;
    return (ttl / PPM) * c->drift_ppm + ((ttl % PPM) * c->drift_ppm) / PPM + c->drift_extra_ns;
}

static int count(unsigned mask) {
    int k = 0;
    for (; mask; mask &= mask - 1) k++;
    return k;
}

/* ---- Server: the kv store, plus antirez's delayed restart ---------------- */

struct redlock_server {
    struct kv_server kv;     /* first: kv_server_* see only this */
    int delaying;            /* 1 = restarted recently: SET NX refused until grants_from_mono */
    sim_ns grants_from_mono; /* by this server's monotonic clock */
};

/* States (lock_state): the servers' (the store's, sim/algo/kv.h), then the
 * client's rounds. */
enum {
    RL_ST_QUORUM_REACHED = KV_ST_COUNT, /* a majority said OK in time: acquired */
    RL_ST_QUORUM_MISSED,                /* too few OK replies: unlock, attempt fails */
    RL_ST_VALIDITY_TOO_SHORT,           /* a quorum, but TTL - elapsed - drift <= 0 */
    RL_ST_SERVER_SILENT,                /* a round timed out: some servers did not answer */
    RL_ST_DELAYED_RESTART,              /* a restarted server refused a SET NX (delay) */
    RL_ST_COUNT
};
static const char *const state_names[RL_ST_COUNT] = {KV_STATE_NAMES "quorum-reached", "quorum-missed",
                                                     "validity-too-short", "server-silent", "delayed-restart-refused"};

static void server_init(struct lock_ctx *ctx, void *state) { kv_server_init(ctx, state); }

static void server_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct redlock_server *s = state;
    if (s->delaying && m->type == KV_SET_NX) {
        sim_ns left = s->grants_from_mono - lock_now(ctx, LOCK_CLOCK_MONO);
        if (left > 0) {
            /* Unavailable for locking, as antirez's delayed restart asks: with
             * a delay longer than the TTL, every lock it may have granted
             * before the crash has expired before it grants again. */
            /* note: a = requester, b = ns until grants resume */
            lock_note(ctx, "delayed restart: SET NX refused", m->from, left);
            lock_state(ctx, RL_ST_DELAYED_RESTART);
            struct lock_msg r = {0};
            r.type = KV_REPLY;
            r.req = m->req;
            lock_send(ctx, m->from, &r);
            return;
        }
        s->delaying = 0;
    }
    kv_server_recv(ctx, state, m);
}

static void server_restart(struct lock_ctx *ctx, void *state) {
    struct redlock_server *s = state;
    kv_server_restart(ctx, state);
    s->delaying = 0;
    if (cfg(ctx)->delayed_restart_ns > 0) {
        s->delaying = 1;
        s->grants_from_mono = lock_now(ctx, LOCK_CLOCK_MONO) + cfg(ctx)->delayed_restart_ns;
        lock_note(ctx, "delayed restart: no grants until the delay has passed", /* a = delay */
                  cfg(ctx)->delayed_restart_ns, 0);
    }
}

/* ---- Client ---------------------------------------------------------------- */

enum { PH_NONE, PH_ACQUIRE, PH_UNLOCK, PH_RELEASE };
enum { T_ROUND = 1 };

struct redlock_client {
    int phase;         /* what the current round of requests is for (PH_*) */
    uint32_t req;      /* request id shared by every request of the round */
    uint64_t value;    /* this attempt's random value (never 0) */
    sim_ns started;    /* elapsed clock's reading when the attempt began */
    unsigned asked;    /* bit i: server i was sent a request this round */
    unsigned answered; /* bit i: server i has replied */
    unsigned ok;       /* bit i: server i replied OK */
    unsigned held;     /* servers whose SET said OK in the lock now held */
    uint64_t timer;    /* handle of the round's timeout */
};

static unsigned all_servers(struct lock_ctx *ctx) { return (1u << lock_nservers(ctx)) - 1u; }

static void round_end(struct lock_ctx *ctx, struct redlock_client *c);

/* Send one request to every server in mask. The requests leave together, so
 * their per-request timeouts all fall at the same instant: one timer. */
static void round_start(struct lock_ctx *ctx, struct redlock_client *c, int type, int phase, unsigned mask) {
    c->phase = phase;
    c->req++;
    c->asked = mask;
    c->answered = 0;
    c->ok = 0;
    for (int i = 0; i < lock_nservers(ctx); i++) {
        if (!(mask & (1u << i))) continue;
        struct lock_msg m = {0};
        m.type = type;
        m.req = c->req;
        m.value = c->value;
        m.ttl_ns = type == KV_SET_NX ? cfg(ctx)->kv.ttl_ns : 0;
        lock_send(ctx, lock_server(ctx, i), &m);
    }
    if (c->timer) lock_cancel(ctx, c->timer);
    c->timer = 0;
    if (!mask) {
        round_end(ctx, c);
        return;
    }
    c->timer = lock_timer(ctx, LOCK_CLOCK_MONO, cfg(ctx)->kv.request_timeout_ns, T_ROUND, c->req);
}

static void client_acquire(struct lock_ctx *ctx, void *state) {
    struct redlock_client *c = state;
    c->value = lock_random(ctx) | 1;
    c->held = 0;
    c->started = lock_now(ctx, cfg(ctx)->elapsed_clock); /* step 1 */
    lock_state(ctx, KV_ST_ACQUIRING);
    round_start(ctx, c, KV_SET_NX, PH_ACQUIRE, all_servers(ctx)); /* step 2 */
}

/* Step 3 and 4: every answer is in, or the timeout has passed. */
static void decide(struct lock_ctx *ctx, struct redlock_client *c) {
    const struct redlock_config *k = cfg(ctx);
    int got = count(c->ok), q = quorum_of(ctx);
    sim_ns elapsed = lock_now(ctx, k->elapsed_clock) - c->started;
    sim_ns drift = drift_of(k);
    sim_ns validity = k->kv.ttl_ns - elapsed - drift;
    if (got >= q && (!k->elapsed_check || validity > 0)) {
        c->held = c->ok;
        c->phase = PH_NONE;
        /* note: a = OK replies, b = elapsed ns */
        lock_note(ctx, "quorum of OK replies in time: lock acquired", got, elapsed);
        lock_state(ctx, RL_ST_QUORUM_REACHED);
        lock_state(ctx, KV_ST_GRANTED);
        if (!k->elapsed_check) {
            /* The unsafe variant measures nothing: it believes the whole TTL
             * less the drift allowance is still ahead of it. */
            validity = k->kv.ttl_ns - drift;
            if (validity <= 0) validity = 1;
        }
        lock_granted(ctx, 0, validity);
        return;
    }
    lock_state(ctx, got < q ? RL_ST_QUORUM_MISSED : RL_ST_VALIDITY_TOO_SHORT);
    if (got < q) /* note: a = OK replies, b = quorum */
        lock_note(ctx, "too few servers said OK: unlocking, attempt fails", got, q);
    else /* note: a = validity ns (<= 0), b = elapsed ns */
        lock_note(ctx, "quorum, but TTL - elapsed - drift <= 0: unlocking, attempt fails", validity, elapsed);
    /* Step 4: unlock everywhere, including servers that did not say OK. */
    round_start(ctx, c, KV_CAD, PH_UNLOCK, k->release_all ? all_servers(ctx) : c->ok);
}

static void round_end(struct lock_ctx *ctx, struct redlock_client *c) {
    if (c->timer) lock_cancel(ctx, c->timer);
    c->timer = 0;
    switch (c->phase) {
    case PH_ACQUIRE:
        decide(ctx, c); /* grants (phase none) or starts the unlock round */
        break;
    case PH_UNLOCK:
        c->phase = PH_NONE;
        lock_state(ctx, KV_ST_REFUSED);
        lock_refused(ctx);
        break;
    case PH_RELEASE:
        c->phase = PH_NONE;
        c->held = 0;
        lock_release_done(ctx);
        break;
    default: break;
    }
}

static void client_release(struct lock_ctx *ctx, void *state) {
    struct redlock_client *c = state;
    round_start(ctx, c, KV_CAD, PH_RELEASE, cfg(ctx)->release_all ? all_servers(ctx) : c->held);
}

static void client_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct redlock_client *c = state;
    if (m->type != KV_REPLY || m->req != c->req || c->phase == PH_NONE) return; /* late reply */
    int i = lock_server_index(ctx, m->from);
    if (i < 0) return;
    unsigned bit = 1u << i;
    if (!(c->asked & bit) || (c->answered & bit)) return;
    c->answered |= bit;
    if (m->a) c->ok |= bit;
    if (c->answered == c->asked) round_end(ctx, c);
}

static void client_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    struct redlock_client *c = state;
    if (timer != T_ROUND || arg != c->req || c->phase == PH_NONE) return;
    c->timer = 0;
    /* note: a = servers that did not answer */
    lock_note(ctx, "request timeout: some servers did not answer", count(c->asked & ~c->answered), 0);
    lock_state(ctx, RL_ST_SERVER_SILENT);
    round_end(ctx, c);
}

const struct lock_algo algo_redlock = {
        .abi = LOCK_ABI_VERSION,
        .name = "redlock",
        .summary = "Redlock: SET NX PX on a majority of N servers (default 5); validity = TTL - elapsed - drift",
        .default_servers = 5,
        .max_servers = LOCK_MAX_SERVERS,
        .config_size = sizeof(struct redlock_config),
        .client_size = sizeof(struct redlock_client),
        .server_size = sizeof(struct redlock_server),
        .config_default = config_default,
        .option = option,
        .validate = validate,
        .client_acquire = client_acquire,
        .client_release = client_release,
        .client_recv = client_recv,
        .client_timer = client_timer,
        .server_init = server_init,
        .server_recv = server_recv,
        .server_timer = kv_server_timer,
        .server_restart = server_restart,
        .grant_quorum = grant_quorum,
        .state_names = state_names,
        .nstates = RL_ST_COUNT,
};
