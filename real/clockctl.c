/* The lock server's wall clock in a real run (real/real_int.h): the
 * driver's side of the clock shim (real/clockshim.h). The scenario's clock
 * line and timed clock faults on the server are written into the page the
 * shim in redis-server reads, scaled (a step of 25 s at scale S moves the
 * clock 25 s * S; a rate is a rate), and after each the driver asks Redis
 * the lock's PTTL, so the recording has the expiry Redis now keeps. */
#include "real_int.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "clockshim.h"
#include "resp.h"

static int64_t wall_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The server's wall clock rate, ppm: drift and slew, capped as the
 * simulator caps it (sim/engine_fault.c node_set_rate). */
static int64_t rate_ppm(const struct real_clock *c) {
    int64_t ppm = c->base_ppm + c->slew_ppm;
    if (ppm > CLOCK_PPM_MAX) ppm = CLOCK_PPM_MAX;
    if (ppm < -CLOCK_PPM_MAX) ppm = -CLOCK_PPM_MAX;
    return ppm;
}

/* Move the page: the shift grows by step_ns now, and runs at the current rate from now on. */
static void update(struct real_clock *c, int64_t step_ns) {
    if (!c->page) return;
    struct clockshim_page cur;
    clockshim_read(c->page, &cur);
    int64_t rt = wall_ns();
    clockshim_set(c->page, clockshim_shift(&cur, rt) + step_ns, rt, rate_ppm(c) * 1000);
}

static void record(struct recs *l, int64_t t, int kind, int node, int64_t a, int64_t b) {
    struct rec r = {t, kind, node, TRACE_NO_NODE, 0, 0, a, b};
    real_recs_add(l, &r);
}

/* What Redis keeps now: the lock's PTTL, in real ns by true time. */
static void observe_ttl(const struct real_clock *c, struct recs *l, int64_t t) {
    struct resp_conn conn;
    struct resp_reply r;
    if (resp_connect(&conn, c->port) != 0) return;
    const char *pttl[] = {"PTTL", "lock"};
    int ok = resp_command(&conn, &r, 2, pttl) == 0 && r.type == RESP_INT;
    resp_close(&conn);
    if (!ok || r.integer == -1) return; /* -1: no expiry (setnx), nothing moves */
    record(l, t, REC_OBSERVED_TTL, c->node, r.integer >= 0, r.integer >= 0 ? r.integer * 1000000 : 0);
}

void real_clock_start(struct real_clock *c, struct clockshim_page *page, int port, const struct scenario *s,
                      const char *name, int node, double scale, struct recs *l) {
    memset(c, 0, sizeof *c);
    c->page = page;
    c->port = port;
    c->name = name;
    c->node = node;
    c->scale = scale;
    if (page) clockshim_set(page, 0, wall_ns(), 0);
    for (int i = 0; name && i < s->nclocks; i++) {
        const struct scn_clock_init *k = &s->clocks[i];
        if (strcmp(k->node, name) != 0) continue;
        c->base_ppm = k->drift_ppm;
        update(c, (int64_t)((double)k->wall_offset_ns * scale));
        if (k->wall_offset_ns) record(l, 0, TRACE_CLOCK_STEP, node, k->wall_offset_ns, TRACE_CLOCK_AT_START);
        if (k->drift_ppm) {
            record(l, 0, TRACE_CLOCK_DRIFT, node, k->drift_ppm, 0);
            record(l, 0, REC_CLOCK_RATE, node, rate_ppm(c), 0);
        }
    }
}

int real_clock_fault(struct real_clock *c, const struct scn_fault *f, int64_t t, struct recs *l) {
    if (!c->page || !c->name || strcmp(f->node, c->name) != 0) return 0;
    switch (f->kind) {
    case SCN_FAULT_CLOCK_STEP:
        /* Redis reads its wall clock for expiry; its monotonic clock runs
         * only the event loop, which the shim leaves alone (refuse.c
         * refuses a step of the monotonic clock alone). */
        update(c, (int64_t)((double)f->delta_ns * c->scale));
        record(l, t, TRACE_CLOCK_STEP, c->node, f->delta_ns, f->which);
        break;
    case SCN_FAULT_CLOCK_DRIFT:
        c->base_ppm = f->ppm;
        update(c, 0);
        record(l, t, TRACE_CLOCK_DRIFT, c->node, f->ppm, 0);
        break;
    case SCN_FAULT_CLOCK_SLEW:
        /* delta spread over dur: the rate delta / dur, as the simulator's */
        c->slew_ppm = f->dur_ns > 0 ? (int64_t)((double)f->delta_ns * 1e6 / (double)f->dur_ns) : 0;
        if (c->slew_ppm > 2 * CLOCK_PPM_MAX) c->slew_ppm = 2 * CLOCK_PPM_MAX;
        if (c->slew_ppm < -2 * CLOCK_PPM_MAX) c->slew_ppm = -2 * CLOCK_PPM_MAX;
        c->slew_end = t + (int64_t)((double)f->dur_ns * c->scale);
        update(c, 0);
        record(l, t, TRACE_CLOCK_SLEW, c->node, f->delta_ns, f->dur_ns);
        break;
    default: return 0;
    }
    record(l, t, REC_CLOCK_RATE, c->node, rate_ppm(c), 0);
    observe_ttl(c, l, t);
    return 1;
}

void real_clock_tick(struct real_clock *c, int64_t t, struct recs *l) {
    if (!c->slew_end || t < c->slew_end) return;
    c->slew_end = 0;
    c->slew_ppm = 0;
    update(c, 0);
    record(l, t, REC_CLOCK_RATE, c->node, rate_ppm(c), 0);
}
