/* Piecewise-linear clocks with drift, steps and slews (see clock.h). */
#include "clock.h"

#define MILLION 1000000

/* floor(d * ppm / 10^6) for d >= 0, without overflow. Flooring (not C's
 * truncation) keeps the reading exact for slow clocks too. */
static sim_ns mul_ppm(sim_ns d, int64_t ppm) {
    int64_t rest = (d % MILLION) * ppm;
    int64_t q = rest / MILLION;
    if (rest % MILLION < 0) q--;
    return (d / MILLION) * ppm + q;
}

void clock_init(struct sim_clock *c, sim_ns offset_ns, int64_t ppm) {
    c->base_true = 0;
    c->base_local = offset_ns;
    c->ppm = ppm;
}

sim_ns clock_read(const struct sim_clock *c, sim_ns t) {
    sim_ns d = t - c->base_true;
    if (c->ppm == 0) return c->base_local + d; /* no drift: exact without mul_ppm's divisions */
    return c->base_local + d + mul_ppm(d, c->ppm);
}

static void rebase(struct sim_clock *c, sim_ns t) {
    c->base_local = clock_read(c, t);
    c->base_true = t;
}

void clock_set_ppm(struct sim_clock *c, sim_ns t, int64_t ppm) {
    rebase(c, t);
    c->ppm = ppm;
}

void clock_step(struct sim_clock *c, sim_ns t, sim_ns delta) {
    rebase(c, t);
    c->base_local += delta;
}

sim_ns clock_true_at(const struct sim_clock *c, sim_ns now, sim_ns local) {
    if (clock_read(c, now) >= local) return now;
    if (c->ppm == 0) { /* no drift: the inverse is a subtraction, no search */
        sim_ns t = c->base_true + (local - c->base_local);
        return t > SIM_TIME_MAX * 2 ? SIM_NEVER : t;
    }
    sim_ns want = local - c->base_local; /* > 0: local elapsed needed from base */
    int64_t rate = MILLION + c->ppm;     /* > 0 by CLOCK_PPM_MAX */
    /* d ~= want * 10^6 / rate, split to stay in range. */
    sim_ns d = (want / rate) * MILLION + ((want % rate) * MILLION) / rate;
    if (d > SIM_TIME_MAX * 2) return SIM_NEVER;
    while (clock_read(c, c->base_true + d) < local) d++;
    while (d > 0 && clock_read(c, c->base_true + d - 1) >= local) d--;
    sim_ns t = c->base_true + d;
    if (t < now) t = now;
    return t > SIM_TIME_MAX * 2 ? SIM_NEVER : t;
}
