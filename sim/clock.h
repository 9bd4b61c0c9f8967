/* A node's clock: piecewise linear in true time.
 *   local(t) = base_local + d + d * ppm / 10^6,  d = t - base_true
 * Each node has two (monotonic and wall). A step moves base_local; a drift
 * change or slew changes ppm from now on. Integer arithmetic only, split so
 * that no product can overflow for times up to SIM_TIME_MAX and |ppm| <= 10^6. */
#ifndef LOCKSIM_CLOCK_H
#define LOCKSIM_CLOCK_H

#include <stdint.h>

#include "vtime.h"

#define CLOCK_PPM_MAX 500000 /* |rate error| allowed: half or one and a half speed */

struct sim_clock {
    sim_ns base_true;  /* true time where the current segment starts */
    sim_ns base_local; /* the clock's reading at base_true */
    int64_t ppm;       /* rate error in this segment, parts per million */
};

void clock_init(struct sim_clock *c, sim_ns offset_ns, int64_t ppm);
/* Reading at true time t (t >= c->base_true). */
sim_ns clock_read(const struct sim_clock *c, sim_ns t);
/* Start a new segment at true time t with a new rate. */
void clock_set_ppm(struct sim_clock *c, sim_ns t, int64_t ppm);
/* Jump the reading by delta at true time t (may go backwards). */
void clock_step(struct sim_clock *c, sim_ns t, sim_ns delta);
/* Earliest true time >= now at which the reading is >= local; SIM_NEVER if
 * it is beyond SIM_TIME_MAX. */
sim_ns clock_true_at(const struct sim_clock *c, sim_ns now, sim_ns local);

#endif
