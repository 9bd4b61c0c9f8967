/* k8s-lease: leader election as Kubernetes' client-go does it. The lock is a
 * record in the API server (holder, renew time, lease duration, transitions)
 * updated with optimistic concurrency; nothing on the server ever expires
 * it. A candidate takes it over when it has not seen the record change for
 * the lease duration on its own clock, so the candidates' clock rates, not a
 * server's timer, decide when a lease is over. */
#include <stdio.h>
#include <string.h>

#include "lock.h"

/* The source: k8s.io/client-go/tools/leaderelection/leaderelection.go.
 * Its header says the implementation "does not guarantee that only one
 * client is acting as a leader (a.k.a. fencing)": a client acts only on
 * timestamps it captured itself, uses the record's renew time only to see
 * that it changed, and so tolerates any clock skew but not any skew *rate*.
 * What is modelled, in the order tryAcquireOrRenew does it:
 *   - GET the record. Empty (never held, or released): take it with an
 *     update that names the version it read (the API server's
 *     resourceVersion check; a concurrent writer makes it a conflict).
 *   - Held by another: when the record differs from the one last observed,
 *     remember it and the time it was observed (observedTime, on this
 *     client's monotonic clock). Until observedTime + leaseDuration has
 *     passed, the attempt fails (the scenario's `acquire retry=` is the
 *     RetryPeriod, jitter= its JitterFactor 1.2). After it, take it over
 *     with an update naming the observed version; leaderTransitions + 1.
 *   - The leader renews every RetryPeriod with the same conditional update.
 *     When no renewal has succeeded for RenewDeadline (on its own clock),
 *     it stops leading (OnStoppedLeading: it leaves the critical section and
 *     writes nothing more). A renewal answered with a conflict means another
 *     client holds the record: it stops at once.
 * Core clients' defaults: LeaseDuration 15s, RenewDeadline 10s, RetryPeriod
 * 2s (the scenario's retry=); client-go refuses LeaseDuration <=
 * RenewDeadline. A paused leader renews nothing and knows nothing until it
 * runs again: its first timer after the pause may be its next write.
 *
 * The run context (RunOrDie's ctx; here cancel-after=, counted on the
 * leader's monotonic clock from the grant, as a context.WithTimeout or a
 * shutdown signal would end it) ends leadership in the library, not in the
 * program: client-go's renew loop returns and calls OnStoppedLeading, and
 * the code the program runs under the lease goes on unless it watches the
 * context itself. LeaderElectionConfig.ReleaseOnCancel, in our words: when
 * true, the library releases the lock as the context is cancelled (release()
 * writes the record with an empty holder, so a candidate takes it at its
 * next try), and the documentation warns that everything guarded by the
 * lease must have finished before the context is cancelled, or two
 * processes may act on the critical path at once. Here release-on-cancel=on
 * does exactly that, and the program is not told: its later write goes out
 * as written, and is judged by the checker against the next holder's grant
 * (stale). With release-on-cancel=off (client-go's default) the cancelled
 * leader only stops renewing: the record stays until a candidate has seen
 * it unchanged for lease-duration.
 *
 * tokens=on is the seed's fix, not a client-go feature: the record's
 * leaderTransitions count, which grows with every change of holder, is
 * attached to writes as a fencing token, for a resource that checks it
 * (`resource fencing=on`). */

enum k8s_type { K8S_GET = 1, K8S_UPDATE, K8S_REPLY };

struct k8s_config {
    sim_ns lease_ns;       /* LeaseDuration: how long a candidate waits after a change it saw */
    sim_ns renew_ns;       /* RenewDeadline: how long the leader keeps trying to renew */
    sim_ns period_ns;      /* RetryPeriod: the leader's renewal interval */
    sim_ns timeout_ns;     /* a request not answered by then has failed */
    int tokens;            /* 1 = leaderTransitions attached to writes as a fencing token */
    sim_ns cancel_ns;      /* cancel-after: the run context ends this long after the grant; 0 = never */
    int release_on_cancel; /* ReleaseOnCancel: empty the record when the context ends */
};

/* The record in the API server (etcd behind it: it survives a restart).
 * Its renewTime is not kept: no one compares it with a clock, and client-go
 * only sees that the record changed, which the version says. */
struct k8s_server {
    int holder;          /* holder's node, -1 = none (never held, or released) */
    uint64_t version;    /* resourceVersion: changes with every update */
    int64_t transitions; /* leaderTransitions */
};

struct k8s_client {
    uint32_t req;              /* last request id */
    uint32_t get_req, upd_req; /* outstanding GET or update of an acquisition, 0 = none */
    uint32_t renew_req;        /* outstanding renewal, 0 = none */
    uint32_t rel_req;          /* outstanding release, 0 = none */
    uint64_t timeout;          /* timer handle of the outstanding request */
    uint64_t heartbeat;        /* next renewal, 0 = none */
    uint64_t deadline;         /* RenewDeadline timer, 0 = none */
    uint64_t seen_version;     /* observedRecord's version, 0 = none yet */
    sim_ns seen_mono;          /* observedTime, this client's monotonic clock */
    uint64_t version;          /* the version this client last wrote as leader */
    int64_t transitions;       /* leaderTransitions of its leadership */
    int leading;               /* 1 from the grant until release or loss */
    int lost;                  /* 1 once it stopped leading, until the next acquire */
    uint64_t ctx_timer;        /* the run context's end (cancel-after), 0 = none */
    uint32_t cancel_req;       /* outstanding ReleaseOnCancel update, 0 = none */
};

enum { T_TIMEOUT = 1, T_HEARTBEAT, T_DEADLINE, T_CONTEXT };

enum {
    K8S_ST_OBSERVING,
    K8S_ST_TAKEOVER,
    K8S_ST_LEADING,
    K8S_ST_CONFLICT,
    K8S_ST_DEADLINE,
    K8S_ST_CANCELLED,
    K8S_ST_COUNT
};
static const char *const state_names[K8S_ST_COUNT] = {"observing",      "taking-over",           "leading",
                                                      "renew-conflict", "renew-deadline-passed", "context-cancelled"};

static const struct k8s_config *cfg(struct lock_ctx *ctx) { return lock_config(ctx); }

static void defaults(void *config) {
    struct k8s_config *c = config;
    c->lease_ns = 15 * SIM_NS_PER_S;
    c->renew_ns = 10 * SIM_NS_PER_S;
    c->period_ns = 2 * SIM_NS_PER_S;
    c->timeout_ns = SIM_NS_PER_S;
    c->tokens = 0;
}

static int duration(const char *key, const char *val, sim_ns *out, char *err, size_t n) {
    if (lock_parse_duration(val, out) != 0 || *out <= 0) {
        snprintf(err, n, "%s '%s' is not a positive duration such as 15s", key, val);
        return LSIM_EBAD_VALUE;
    }
    return 0;
}

static int option(void *config, const char *key, const char *val, char *err, size_t n) {
    struct k8s_config *c = config;
    if (strcmp(key, "lease-duration") == 0) return duration(key, val, &c->lease_ns, err, n);
    if (strcmp(key, "renew-deadline") == 0) return duration(key, val, &c->renew_ns, err, n);
    if (strcmp(key, "retry-period") == 0) return duration(key, val, &c->period_ns, err, n);
    if (strcmp(key, "request-timeout") == 0) return duration(key, val, &c->timeout_ns, err, n);
    if (strcmp(key, "cancel-after") == 0) return duration(key, val, &c->cancel_ns, err, n);
    if (strcmp(key, "release-on-cancel") == 0) {
        if (lock_parse_bool(val, &c->release_on_cancel) != 0) {
            snprintf(err, n,
                     "release-on-cancel '%s' is not on or off: whether the library empties the "
                     "record when its run context ends (client-go's ReleaseOnCancel)",
                     val);
            return LSIM_EBAD_VALUE;
        }
        return 0;
    }
    if (strcmp(key, "tokens") == 0) {
        if (lock_parse_bool(val, &c->tokens) != 0) {
            snprintf(err, n,
                     "tokens '%s' is not on or off: whether writes carry leaderTransitions as a "
                     "fencing token",
                     val);
            return LSIM_EBAD_VALUE;
        }
        return 0;
    }
    snprintf(err, n,
             "unknown option '%s' for k8s-lease; expected lease-duration, renew-deadline, "
             "retry-period, request-timeout, tokens, cancel-after, release-on-cancel",
             key);
    return LSIM_EUNKNOWN_OPTION;
}

/* client-go's NewLeaderElector: "leaseDuration must be greater than
 * renewDeadline", "renewDeadline must be greater than retryPeriod*JitterFactor". */
static int validate(const void *config, int nservers, char *err, size_t n) {
    const struct k8s_config *c = config;
    (void)nservers;
    if (c->lease_ns <= c->renew_ns) {
        snprintf(err, n,
                 "lease-duration must be longer than renew-deadline (client-go refuses it: a "
                 "candidate would take over while the leader still renews)");
        return LSIM_EBAD_VALUE;
    }
    if (c->renew_ns <= c->period_ns + c->period_ns / 5) {
        snprintf(err, n, "renew-deadline must be longer than 1.2 x retry-period (client-go's JitterFactor)");
        return LSIM_EBAD_VALUE;
    }
    return 0;
}

/* ---- server: the API server's record ---- */

static void server_init(struct lock_ctx *ctx, void *state) {
    struct k8s_server *s = state;
    (void)ctx;
    s->holder = -1;
    s->version = 1;
}

static void reply(struct lock_ctx *ctx, const struct k8s_server *s, const struct lock_msg *m, int ok) {
    struct lock_msg r = {0};
    r.type = K8S_REPLY;
    r.req = m->req;
    r.a = ok;
    r.b = s->holder;
    r.value = s->version;
    r.token = (uint64_t)s->transitions;
    lock_send(ctx, m->from, &r);
}

/* An update names the version it read (m->value) and the holder it writes
 * (m->b: the sender, or -1 to release). */
static void server_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct k8s_server *s = state;
    if (m->type == K8S_GET) {
        reply(ctx, s, m, 1);
        return;
    }
    if (m->type != K8S_UPDATE) return;
    if (m->value != s->version) { /* 409 Conflict: the record moved since it was read */
        if (m->b >= 0 && s->holder >= 0 && s->holder != m->from) lock_note_deny(ctx, m->from, s->holder);
        reply(ctx, s, m, 0);
        return;
    }
    int previous = s->holder;
    s->version++;
    if (m->b < 0) {
        s->holder = -1;
        if (previous >= 0) lock_note_delete(ctx, m->from, previous);
    } else if (previous == m->from) {
        lock_note_renew(ctx, m->from, cfg(ctx)->lease_ns);
    } else {
        s->holder = m->from;
        s->transitions++;
        lock_note_grant(ctx, m->from, cfg(ctx)->tokens ? (uint64_t)s->transitions : 0, cfg(ctx)->lease_ns, SIM_NEVER);
    }
    reply(ctx, s, m, 1);
}

static void server_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    (void)ctx, (void)state, (void)timer, (void)arg;
}

static void server_restart(struct lock_ctx *ctx, void *state) { (void)ctx, (void)state; }

/* ---- client: the elector ---- */

static void cancel(struct lock_ctx *ctx, uint64_t *handle) {
    if (*handle) lock_cancel(ctx, *handle);
    *handle = 0;
}

static uint32_t send(struct lock_ctx *ctx, struct k8s_client *c, int type, uint64_t version, int holder) {
    struct lock_msg m = {0};
    m.type = type;
    m.req = ++c->req;
    m.value = version;
    m.b = holder;
    lock_send(ctx, lock_server(ctx, 0), &m);
    c->timeout = lock_timer_rearm(ctx, c->timeout, LOCK_CLOCK_MONO, cfg(ctx)->timeout_ns, T_TIMEOUT, m.req);
    return m.req;
}

static void stop_leading(struct lock_ctx *ctx, struct k8s_client *c, int state, const char *why) {
    c->leading = 0;
    c->lost = 1;
    c->renew_req = 0;
    cancel(ctx, &c->heartbeat);
    cancel(ctx, &c->deadline);
    lock_state(ctx, state);
    lock_note(ctx, why, (int64_t)c->transitions, 0);
    lock_lost(ctx);
}

static void client_acquire(struct lock_ctx *ctx, void *state) {
    struct k8s_client *c = state;
    c->lost = 0;
    c->get_req = send(ctx, c, K8S_GET, 0, -1);
}

static void refuse(struct lock_ctx *ctx, struct k8s_client *c) {
    c->get_req = c->upd_req = 0;
    cancel(ctx, &c->timeout);
    lock_refused(ctx);
}

static void got_record(struct lock_ctx *ctx, struct k8s_client *c, const struct lock_msg *m) {
    int self = lock_self(ctx);
    c->get_req = 0;
    sim_ns now = lock_now(ctx, LOCK_CLOCK_MONO);
    if (m->value != c->seen_version) { /* a change: observedRecord, observedTime */
        c->seen_version = m->value;
        c->seen_mono = now;
    }
    if (m->b >= 0 && m->b != self && now < c->seen_mono + cfg(ctx)->lease_ns) {
        lock_state(ctx, K8S_ST_OBSERVING);
        refuse(ctx, c); /* "lock is held by %v and has not yet expired" */
        return;
    }
    if (m->b >= 0 && m->b != self) lock_state(ctx, K8S_ST_TAKEOVER);
    c->upd_req = send(ctx, c, K8S_UPDATE, m->value, self);
}

static void arm_renewal(struct lock_ctx *ctx, struct k8s_client *c) {
    c->heartbeat = lock_timer_rearm(ctx, c->heartbeat, LOCK_CLOCK_MONO, cfg(ctx)->period_ns, T_HEARTBEAT, 0);
    c->deadline = lock_timer_rearm(ctx, c->deadline, LOCK_CLOCK_MONO, cfg(ctx)->renew_ns, T_DEADLINE, 0);
}

static void updated(struct lock_ctx *ctx, struct k8s_client *c, const struct lock_msg *m) {
    c->upd_req = 0;
    cancel(ctx, &c->timeout);
    if (!m->a) {
        refuse(ctx, c);
        return;
    }
    c->version = c->seen_version = m->value;
    c->seen_mono = lock_now(ctx, LOCK_CLOCK_MONO);
    c->transitions = (int64_t)m->token;
    c->leading = 1;
    arm_renewal(ctx, c);
    lock_state(ctx, K8S_ST_LEADING);
    if (cfg(ctx)->cancel_ns > 0)
        c->ctx_timer = lock_timer_rearm(ctx, c->ctx_timer, LOCK_CLOCK_MONO, cfg(ctx)->cancel_ns, T_CONTEXT, 0);
    lock_granted(ctx, cfg(ctx)->tokens ? m->token : 0, cfg(ctx)->renew_ns);
}

/* The run context ends while the program is still in its critical section:
 * the library stops leading (and with ReleaseOnCancel empties the record),
 * the program is not told (no lock_lost: its steps go on and its write is
 * sent). */
static void context_cancelled(struct lock_ctx *ctx, struct k8s_client *c) {
    c->ctx_timer = 0;
    if (!c->leading) return;
    c->leading = 0;
    c->renew_req = 0;
    cancel(ctx, &c->heartbeat);
    cancel(ctx, &c->deadline);
    lock_state(ctx, K8S_ST_CANCELLED);
    if (!cfg(ctx)->release_on_cancel) {
        lock_note(ctx,
                  "run context cancelled: stopped renewing, the record stays; the program's critical section goes on",
                  (int64_t)c->transitions, 0);
        return;
    }
    lock_note(ctx, "run context cancelled: ReleaseOnCancel empties the record; the program's critical section goes on",
              (int64_t)c->transitions, 0);
    c->cancel_req = send(ctx, c, K8S_UPDATE, c->version, -1);
}

static void renewed(struct lock_ctx *ctx, struct k8s_client *c, const struct lock_msg *m) {
    c->renew_req = 0;
    cancel(ctx, &c->timeout);
    if (!c->leading) return;
    if (m->a) {
        c->version = c->seen_version = m->value;
        arm_renewal(ctx, c);
    } else if (m->b != lock_self(ctx)) {
        stop_leading(ctx, c, K8S_ST_CONFLICT, "renewal found another holder: stopped leading");
    } else { /* a conflict with itself (a stale version): read again at the next period */
        c->version = m->value;
        c->heartbeat = lock_timer_rearm(ctx, c->heartbeat, LOCK_CLOCK_MONO, cfg(ctx)->period_ns, T_HEARTBEAT, 0);
    }
}

static void client_release(struct lock_ctx *ctx, void *state) {
    struct k8s_client *c = state;
    int was = c->leading;
    c->leading = 0;
    cancel(ctx, &c->heartbeat);
    cancel(ctx, &c->deadline);
    cancel(ctx, &c->ctx_timer);
    if (!was) {
        lock_release_done(ctx);
        return;
    }
    c->rel_req = send(ctx, c, K8S_UPDATE, c->version, -1); /* ReleaseOnCancel: an empty holder */
}

static void client_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct k8s_client *c = state;
    if (m->type != K8S_REPLY || m->req == 0) return;
    if (m->req == c->get_req) got_record(ctx, c, m);
    else if (m->req == c->upd_req) updated(ctx, c, m);
    else if (m->req == c->renew_req) renewed(ctx, c, m);
    else if (m->req == c->cancel_req) { /* the library's own release: the program knows nothing of it */
        c->cancel_req = 0;
        cancel(ctx, &c->timeout);
    } else if (m->req == c->rel_req) {
        c->rel_req = 0;
        cancel(ctx, &c->timeout);
        lock_release_done(ctx);
    }
}

static void client_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    struct k8s_client *c = state;
    if (timer == T_HEARTBEAT) {
        c->heartbeat = 0;
        if (c->leading && !c->renew_req) c->renew_req = send(ctx, c, K8S_UPDATE, c->version, lock_self(ctx));
        else if (c->leading) c->heartbeat = lock_timer(ctx, LOCK_CLOCK_MONO, cfg(ctx)->period_ns, T_HEARTBEAT, 0);
        return;
    }
    if (timer == T_DEADLINE) {
        c->deadline = 0;
        if (c->leading) stop_leading(ctx, c, K8S_ST_DEADLINE, "no renewal within renew-deadline: stopped leading");
        return;
    }
    if (timer == T_CONTEXT) {
        context_cancelled(ctx, c);
        return;
    }
    if (timer != T_TIMEOUT || arg == 0) return;
    c->timeout = 0;
    uint32_t req = (uint32_t)arg;
    if (req == c->get_req || req == c->upd_req) {
        lock_note(ctx, "request timed out", (int64_t)req, 0);
        refuse(ctx, c);
    } else if (req == c->renew_req) { /* retried at the next period, until the deadline */
        c->renew_req = 0;
        if (c->leading) c->heartbeat = lock_timer(ctx, LOCK_CLOCK_MONO, cfg(ctx)->period_ns, T_HEARTBEAT, 0);
    } else if (req == c->cancel_req) {
        c->cancel_req = 0;
    } else if (req == c->rel_req) {
        c->rel_req = 0;
        lock_release_done(ctx);
    }
}

/* A client that has stopped leading writes nothing more (OnStoppedLeading).
 * It knows only what its own timers and replies told it. */
static int client_write_ok(struct lock_ctx *ctx, void *state) {
    (void)ctx;
    const struct k8s_client *c = state;
    return !c->lost;
}

const struct lock_algo algo_k8s_lease = {
        .abi = LOCK_ABI_VERSION,
        .name = "k8s-lease",
        .summary = "Kubernetes client-go leader election: a record taken over after lease-duration on the "
                   "candidate's own clock; no fencing",
        .default_servers = 1,
        .max_servers = 1,
        .config_size = sizeof(struct k8s_config),
        .client_size = sizeof(struct k8s_client),
        .server_size = sizeof(struct k8s_server),
        .config_default = defaults,
        .option = option,
        .validate = validate,
        .client_acquire = client_acquire,
        .client_release = client_release,
        .client_recv = client_recv,
        .client_timer = client_timer,
        .server_init = server_init,
        .server_recv = server_recv,
        .server_timer = server_timer,
        .server_restart = server_restart,
        .client_write_ok = client_write_ok,
        .state_names = state_names,
        .nstates = K8S_ST_COUNT,
};
