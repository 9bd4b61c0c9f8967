/* The peer workload as a locksim algorithm plus scenario, and the loop that
 * runs it through the real engine until E reference-equivalent events.
 *
 * Mapping of the reference (shared/bench-peers/c/lockbench.c) onto locksim:
 *   TIMER  -> the client's think timer fires (an algorithm timer): it sends
 *             the request;
 *   REQ    -> the server receives the request (server_recv): lease check;
 *   REPLY  -> the client receives the answer (client_recv).
 * The client program is `acquire tries=1`, repeated forever with no think of
 * its own, so each reply ends one acquire (lock_granted or lock_refused) and
 * the program starts the next one at once. The engine's own events for that
 * (program continuation, zero-length program timer, client start) are real
 * engine work, counted in engine_events but not in ref_events.
 *
 * Order of ties: the reference breaks equal times FIFO, and every one of its
 * events pushes exactly one event while it is processed. The reply handler
 * therefore arms the next think timer FIRST, before telling the engine the
 * outcome; the engine's extra events all fire at the current time and push
 * nothing the reference would see. So the reference-equivalent events are
 * pushed in the same relative order as in the reference, and their (time,
 * insertion) order, sim_end and grant count are identical. */
#include "workload.h"

#include "spawn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"

enum { WL_REQ = 1, WL_REPLY = 2 };
enum { WL_TIMER_THINK = 1 };

#define WL_LCG_A 6364136223846793005ULL /* Knuth's MMIX LCG, as the reference */
#define WL_LCG_C 1442695040888963407ULL
#define WL_GOLDEN 0x9E3779B97F4A7C15ULL

struct wl_config {
    uint64_t seed;   /* the reference's SEED */
    sim_ns lease_ns; /* lease length */
};

struct wl_client {
    uint64_t lcg; /* this client's LCG state */
    int armed;    /* a think timer is pending */
};

struct wl_server {
    sim_ns lease_until; /* by the server's monotonic clock; 0 = free */
    uint64_t next_token;
};

static struct wl_counts *counts; /* the current run's counters (see workload.h) */

static void config_default(void *config) {
    struct wl_config *c = config;
    c->seed = 42;
    c->lease_ns = WL_LEASE_US * SIM_NS_PER_US;
}

static int option(void *config, const char *key, const char *val, char *err, size_t errlen) {
    struct wl_config *c = config;
    if (strcmp(key, "seed") == 0) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(val, &end, 10);
        if (errno || end == val || *end || val[0] == '-') {
            snprintf(err, errlen, "seed takes a decimal integer 0..2^64-1, not '%s'", val);
            return -1;
        }
        c->seed = v;
        return 0;
    }
    if (strcmp(key, "lease") == 0) {
        if (scn_parse_duration(val, &c->lease_ns) != 0 || c->lease_ns <= 0) {
            snprintf(err, errlen, "lease takes a duration above 0 such as 50us, not '%s'", val);
            return -1;
        }
        return 0;
    }
    snprintf(err, errlen, "unknown option '%s' for peer-workload; expected seed, lease", key);
    return -1;
}

/* Think time in microseconds, 1..1000: the reference's think_us(). */
static sim_ns think_ns(struct wl_client *c) {
    c->lcg = c->lcg * WL_LCG_A + WL_LCG_C;
    return (sim_ns)(1 + ((c->lcg >> 33) % 1000)) * SIM_NS_PER_US;
}

static void arm_think(struct lock_ctx *ctx, struct wl_client *c) {
    lock_timer(ctx, LOCK_CLOCK_MONO, think_ns(c), WL_TIMER_THINK, 0);
    c->armed = 1;
}

static void client_init(struct lock_ctx *ctx, void *state) {
    const struct wl_config *cfg = lock_config(ctx);
    struct wl_client *c = state;
    /* The reference seeds client `id` with seed ^ (id * golden); clients are
     * nodes 0..N-1 in locksim, in the same order. */
    c->lcg = cfg->seed ^ ((uint64_t)lock_self(ctx) * WL_GOLDEN);
    c->armed = 0;
}

/* An attempt is the think wait followed by one request. The first attempt
 * arms the think timer here; later ones find it armed by the last reply. */
static void client_acquire(struct lock_ctx *ctx, void *state) {
    struct wl_client *c = state;
    if (!c->armed) arm_think(ctx, c);
}

static void client_release(struct lock_ctx *ctx, void *state) {
    (void)state;
    lock_release_done(ctx); /* the lease lapses on its own at the server */
}

static void client_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    (void)arg;
    struct wl_client *c = state;
    if (timer != WL_TIMER_THINK) return;
    c->armed = 0;
    counts->ref_events++; /* reference TIMER */
    struct lock_msg m = {0};
    m.type = WL_REQ;
    lock_send(ctx, lock_server(ctx, 0), &m);
}

static void client_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct wl_client *c = state;
    if (m->type != WL_REPLY) return;
    counts->ref_events++; /* reference REPLY */
    arm_think(ctx, c);    /* first: same insertion order as the reference */
    if (m->a) {
        counts->acquired++;
        lock_granted(ctx, m->token, m->ttl_ns);
    } else {
        lock_refused(ctx);
    }
}

static void server_init(struct lock_ctx *ctx, void *state) {
    (void)ctx;
    struct wl_server *s = state;
    s->lease_until = 0;
    s->next_token = 1;
}

static void server_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    const struct wl_config *cfg = lock_config(ctx);
    struct wl_server *s = state;
    if (m->type != WL_REQ) return;
    counts->ref_events++; /* reference REQ */
    sim_ns now = lock_now(ctx, LOCK_CLOCK_MONO);
    struct lock_msg r = {0};
    r.type = WL_REPLY;
    if (now >= s->lease_until) {
        s->lease_until = now + cfg->lease_ns;
        r.a = 1;
        r.token = s->next_token++;
        r.ttl_ns = cfg->lease_ns;
        counts->grants++;
        lock_note_grant(ctx, m->from, r.token, cfg->lease_ns, s->lease_until);
    } else {
        lock_note_deny(ctx, m->from, -1);
    }
    lock_send(ctx, m->from, &r);
}

const struct lock_algo wl_algo = {
        .abi = LOCK_ABI_VERSION,
        .name = "peer-workload",
        .summary = "bench only: the peer benchmark's lease server and think-time clients",
        .default_servers = 1,
        .max_servers = 1,
        .config_size = sizeof(struct wl_config),
        .client_size = sizeof(struct wl_client),
        .server_size = sizeof(struct wl_server),
        .config_default = config_default,
        .option = option,
        .client_init = client_init,
        .client_acquire = client_acquire,
        .client_release = client_release,
        .client_recv = client_recv,
        .client_timer = client_timer,
        .server_init = server_init,
        .server_recv = server_recv,
};

int wl_scenario(struct scenario *s, uint32_t n, uint64_t seed) {
    scenario_init(s);
    snprintf(s->file, sizeof s->file, "<peer-workload>");
    snprintf(s->title, sizeof s->title, "peer benchmark workload, %u clients", n);
    snprintf(s->algo, sizeof s->algo, "%s", wl_algo.name);
    s->purpose = SCN_PURPOSE_EFFICIENCY; /* leases overlap by design; nothing is written */
    s->seed = seed;
    s->duration_ns = SIM_TIME_MAX;
    s->max_events = UINT64_MAX;
    s->nservers = 1;
    s->latency.min_ns = s->latency.max_ns = WL_LAT_US * SIM_NS_PER_US;
    struct scn_opt *o_seed = scenario_add_opt(s), *o_lease = scenario_add_opt(s);
    struct scn_program *prog = scenario_add_program(s);
    if (!o_seed || !o_lease || !prog) return -1;
    snprintf(o_seed->key, sizeof o_seed->key, "seed");
    snprintf(o_seed->val, sizeof o_seed->val, "%llu", (unsigned long long)seed);
    snprintf(o_lease->key, sizeof o_lease->key, "lease");
    snprintf(o_lease->val, sizeof o_lease->val, "%dus", WL_LEASE_US);
    struct scn_step *st = &prog->steps[0];
    st->kind = SCN_STEP_ACQUIRE;
    st->tries = 1; /* a denied request ends the attempt: the client thinks again */
    prog->nsteps = 1;
    for (uint32_t i = 0; i < n; i++) {
        struct scn_client *c = scenario_add_client(s);
        if (!c) return -1;
        snprintf(c->name, sizeof c->name, "c%u", i);
        c->start_ns = 0;
        c->program = 0;
        c->repeat = 0; /* until the run ends */
        c->think_ns = 0;
    }
    return 0;
}

int wl_run(struct scenario *s, uint64_t e_events, int close_s, struct wl_result *out) {
    struct wl_counts c = {0, 0, 0};
    struct engine_opts o = {.algo = &wl_algo, .keep_trace = 0, .lenient_options = 0};
    struct scn_error err;
    struct engine *e;
    memset(out, 0, sizeof *out);
    counts = &c;
    double t0 = sp_now_s();
    int rc = engine_new(&e, s, &o, &err);
    if (close_s) scenario_close(s);
    double t1 = sp_now_s();
    if (rc != 0) {
        counts = NULL;
        return rc == LSIM_ENOMEM ? -2 : -1;
    }
    while (c.ref_events < e_events && engine_step(e)) {}
    double t2 = sp_now_s();
    out->ref_events = c.ref_events;
    out->engine_events = engine_events(e);
    out->sim_end_us = (uint64_t)(engine_now(e) / SIM_NS_PER_US);
    out->grants = c.grants;
    out->acquired = c.acquired;
    out->build_s = t1 - t0;
    out->loop_s = t2 - t0;
    int oom = engine_trace(e)->oom;
    engine_free(e);
    counts = NULL;
    return oom ? -2 : 0;
}

int wl_run_to_end(const struct scenario *s, struct checker_report *rep, struct wl_counts *cnt) {
    struct engine_opts o = {.algo = &wl_algo, .keep_trace = 0, .lenient_options = 0};
    struct scn_error err;
    struct engine *e;
    memset(cnt, 0, sizeof *cnt);
    counts = cnt;
    int rc = engine_new(&e, s, &o, &err);
    if (rc != 0) {
        counts = NULL;
        return rc == LSIM_ENOMEM ? -2 : -1;
    }
    engine_run(e);
    *rep = *engine_report(e);
    int oom = engine_trace(e)->oom;
    engine_free(e);
    counts = NULL;
    return oom ? -2 : 0;
}
