/* The Redis-like lock store and its client (see kv.h). Semantics follow the
 * Redis documentation of SET key value NX PX ttl, DEL, PEXPIRE and the
 * compare-and-delete Lua script of the single-instance locking pattern:
 * keys expire by the server's own clock, lazily on access and actively by
 * a timer. */
#include "kv.h"

#include <stdio.h>
#include <string.h>

#include "scenario.h"

enum { PHASE_NONE, PHASE_ACQUIRE, PHASE_RELEASE, PHASE_RELEASE_GET, PHASE_RELEASE_DEL };
enum { T_EXPIRY = 1, T_TIMEOUT };

void kv_config_default(struct kv_config *c, const char *algo_name, unsigned allowed) {
    memset(c, 0, sizeof *c);
    c->ttl_ns = 30 * SIM_NS_PER_S;
    c->release = KV_RELEASE_CAD;
    c->unique_value = 1;
    c->first_token = 1;
    c->expiry_clock = LOCK_CLOCK_WALL;
    c->persistence = KV_PERSIST_NONE;
    c->request_timeout_ns = SIM_NS_PER_S;
    c->allowed = allowed;
    c->algo_name = algo_name;
}

static const struct {
    const char *key;
    unsigned bit;
} kv_keys[] = {
    {"ttl", KV_OPT_TTL},
    {"release", KV_OPT_RELEASE},
    {"value", KV_OPT_VALUE},
    {"first-token", KV_OPT_FIRST_TOKEN},
    {"expiry-clock", KV_OPT_EXPIRY_CLOCK},
    {"persistence", KV_OPT_PERSISTENCE},
    {"request-timeout", KV_OPT_TIMEOUT},
};

static int bad(char *err, size_t n, const char *key, const char *val, const char *expected) {
    snprintf(err, n, "%s '%s' is not %s", key, val, expected);
    return -1;
}

int kv_option(struct kv_config *c, const char *key, const char *val, char *err, size_t n) {
    unsigned bit = 0;
    for (size_t i = 0; i < sizeof kv_keys / sizeof kv_keys[0]; i++)
        if (strcmp(kv_keys[i].key, key) == 0) bit = kv_keys[i].bit;
    if (!(bit & c->allowed)) {
        char list[160] = "";
        for (size_t i = 0; i < sizeof kv_keys / sizeof kv_keys[0]; i++)
            if (kv_keys[i].bit & c->allowed) {
                size_t l = strlen(list);
                snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", kv_keys[i].key);
            }
        snprintf(err, n, "unknown option '%s' for %s; expected %s", key, c->algo_name,
                 list[0] ? list : "no options");
        return -1;
    }
    int64_t v;
    switch (bit) {
    case KV_OPT_TTL:
        if (scn_parse_duration(val, &c->ttl_ns) != 0 || c->ttl_ns <= 0)
            return bad(err, n, "ttl", val, "a positive duration such as 30s");
        return 0;
    case KV_OPT_RELEASE:
        if (strcmp(val, "compare-and-delete") == 0) c->release = KV_RELEASE_CAD;
        else if (strcmp(val, "del") == 0) c->release = KV_RELEASE_DEL;
        else if (strcmp(val, "get-then-del") == 0) c->release = KV_RELEASE_GET_DEL;
        else return bad(err, n, "release", val, "one of compare-and-delete, del, get-then-del");
        return 0;
    case KV_OPT_VALUE:
        if (strcmp(val, "unique") == 0) c->unique_value = 1;
        else if (strcmp(val, "constant") == 0) c->unique_value = 0;
        else return bad(err, n, "value", val, "unique or constant");
        return 0;
    case KV_OPT_FIRST_TOKEN:
        if (scn_parse_int(val, &v) != 0 || v < 1)
            return bad(err, n, "first-token", val, "a positive integer");
        c->first_token = (uint64_t)v;
        return 0;
    case KV_OPT_EXPIRY_CLOCK:
        if (strcmp(val, "wall") == 0) c->expiry_clock = LOCK_CLOCK_WALL;
        else if (strcmp(val, "monotonic") == 0) c->expiry_clock = LOCK_CLOCK_MONO;
        else return bad(err, n, "expiry-clock", val, "wall or monotonic");
        return 0;
    case KV_OPT_PERSISTENCE:
        if (strcmp(val, "none") == 0) c->persistence = KV_PERSIST_NONE;
        else if (strcmp(val, "always") == 0) c->persistence = KV_PERSIST_ALWAYS;
        else return bad(err, n, "persistence", val, "none or always");
        return 0;
    case KV_OPT_TIMEOUT:
        if (scn_parse_duration(val, &c->request_timeout_ns) != 0 || c->request_timeout_ns <= 0)
            return bad(err, n, "request-timeout", val, "a positive duration");
        return 0;
    }
    return -1;
}

/* ---- Server ---------------------------------------------------------------- */

static const struct kv_config *cfg(struct lock_ctx *ctx) { return lock_config(ctx); }

static void arm_expiry(struct lock_ctx *ctx, struct kv_server *s) {
    if (s->expiry_timer) lock_cancel(ctx, s->expiry_timer);
    s->expiry_timer = 0;
    if (s->held && s->expires_local != SIM_NEVER) {
        sim_ns left = s->expires_local - lock_now(ctx, cfg(ctx)->expiry_clock);
        s->expiry_timer = lock_timer(ctx, cfg(ctx)->expiry_clock, left, T_EXPIRY, 0);
    }
}

/* Lazy expiry, as Redis does on every access. */
static void expire_if_due(struct lock_ctx *ctx, struct kv_server *s) {
    if (s->held && s->expires_local != SIM_NEVER &&
        lock_now(ctx, cfg(ctx)->expiry_clock) >= s->expires_local) {
        s->held = 0;
        lock_note_expire(ctx, s->owner);
        if (s->expiry_timer) lock_cancel(ctx, s->expiry_timer);
        s->expiry_timer = 0;
    }
}

void kv_server_init(struct lock_ctx *ctx, void *state) {
    struct kv_server *s = state;
    s->next_token = cfg(ctx)->first_token;
    s->owner = -1;
}

static void reply(struct lock_ctx *ctx, const struct lock_msg *m, int64_t a, uint64_t value,
                  uint64_t token) {
    struct lock_msg r = {0};
    r.type = KV_REPLY;
    r.req = m->req;
    r.a = a;
    r.value = value;
    r.token = token;
    lock_send(ctx, m->from, &r);
}

static void delete_entry(struct lock_ctx *ctx, struct kv_server *s, int requester) {
    lock_note_delete(ctx, requester, s->owner);
    s->held = 0;
    if (s->expiry_timer) lock_cancel(ctx, s->expiry_timer);
    s->expiry_timer = 0;
}

void kv_server_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct kv_server *s = state;
    expire_if_due(ctx, s);
    switch (m->type) {
    case KV_SET_NX:
        if (s->held) {
            lock_note_deny(ctx, m->from, s->owner);
            reply(ctx, m, 0, 0, 0);
            return;
        }
        s->held = 1;
        s->value = m->value;
        s->owner = m->from;
        s->token = s->next_token++;
        s->expires_local = m->ttl_ns > 0 ? lock_now(ctx, cfg(ctx)->expiry_clock) + m->ttl_ns : SIM_NEVER;
        lock_note_grant(ctx, m->from, s->token, m->ttl_ns, s->expires_local);
        arm_expiry(ctx, s);
        reply(ctx, m, 1, s->value, s->token);
        return;
    case KV_GET:
        reply(ctx, m, s->held, s->held ? s->value : 0, s->held ? s->token : 0);
        return;
    case KV_DEL:
        if (s->held) delete_entry(ctx, s, m->from);
        else lock_note(ctx, "DEL found no key", 0, 0);
        reply(ctx, m, 1, 0, 0);
        return;
    case KV_CAD:
        if (s->held && s->value == m->value) {
            delete_entry(ctx, s, m->from);
            reply(ctx, m, 1, 0, 0);
        } else {
            lock_note_keep(ctx, m->from, s->held ? s->owner : -1);
            reply(ctx, m, 0, 0, 0);
        }
        return;
    case KV_EXPIRE:
        if (s->held) {
            s->expires_local = lock_now(ctx, cfg(ctx)->expiry_clock) + m->ttl_ns;
            lock_note_renew(ctx, s->owner, m->ttl_ns);
            arm_expiry(ctx, s);
        }
        reply(ctx, m, s->held, 0, 0);
        return;
    case KV_CAE: /* if GET == value then PEXPIRE: renew only our own lease */
        if (s->held && s->value == m->value) {
            s->expires_local = lock_now(ctx, cfg(ctx)->expiry_clock) + m->ttl_ns;
            lock_note_renew(ctx, s->owner, m->ttl_ns);
            arm_expiry(ctx, s);
            reply(ctx, m, 1, s->value, s->token);
        } else {
            reply(ctx, m, 0, 0, 0);
        }
        return;
    default:
        return;
    }
}

void kv_server_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    (void)arg;
    struct kv_server *s = state;
    if (timer != T_EXPIRY) return;
    s->expiry_timer = 0;
    expire_if_due(ctx, s);
    if (s->held) arm_expiry(ctx, s); /* the clock went back: not due yet */
}

void kv_server_restart(struct lock_ctx *ctx, void *state) {
    struct kv_server *s = state;
    s->expiry_timer = 0; /* the engine dropped every timer at the crash */
    if (cfg(ctx)->persistence == KV_PERSIST_NONE) {
        /* Nothing on disk: the lock is gone; the token counter restarts too,
         * which is why a store without persistence cannot issue fencing tokens. */
        uint64_t first = cfg(ctx)->first_token;
        memset(s, 0, sizeof *s);
        s->owner = -1;
        s->next_token = first;
        lock_note(ctx, "restarted empty (no persistence)", 0, 0);
        return;
    }
    expire_if_due(ctx, s);
    arm_expiry(ctx, s);
}

/* ---- Client ---------------------------------------------------------------- */

static void send_req(struct lock_ctx *ctx, struct kv_client *c, int type, int phase, sim_ns ttl) {
    struct lock_msg m = {0};
    m.type = type;
    m.req = ++c->req;
    m.value = c->value;
    m.ttl_ns = ttl;
    c->phase = phase;
    lock_send(ctx, lock_server(ctx, 0), &m);
    if (c->timeout) lock_cancel(ctx, c->timeout);
    c->timeout = lock_timer(ctx, LOCK_CLOCK_MONO, cfg(ctx)->request_timeout_ns, T_TIMEOUT, c->req);
}

void kv_client_acquire(struct lock_ctx *ctx, void *state) {
    struct kv_client *c = state;
    /* A unique value per attempt, drawn from the engine's PRNG; never 0. */
    c->value = cfg(ctx)->unique_value ? (lock_random(ctx) | 1) : 1;
    send_req(ctx, c, KV_SET_NX, PHASE_ACQUIRE, cfg(ctx)->ttl_ns);
}

void kv_client_release(struct lock_ctx *ctx, void *state) {
    struct kv_client *c = state;
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
            lock_granted(ctx, cfg(ctx)->fenced ? m->token : 0, cfg(ctx)->ttl_ns);
        } else {
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
    case PHASE_RELEASE_DEL:
        lock_release_done(ctx);
        break;
    }
}

void kv_client_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct kv_client *c = state;
    if (m->type != KV_REPLY || m->req != c->req || c->phase == PHASE_NONE) return; /* late reply */
    done(ctx, c, m);
}

void kv_client_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    struct kv_client *c = state;
    if (timer != T_TIMEOUT || arg != c->req || c->phase == PHASE_NONE) return;
    c->timeout = 0;
    lock_note(ctx, "request timed out", (int64_t)arg, 0);
    done(ctx, c, NULL);
}
