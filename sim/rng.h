/* The engine's one PRNG: xoshiro256** seeded through splitmix64.
 * Same seed, same sequence, on every machine and optimisation level. */
#ifndef LOCKSIM_RNG_H
#define LOCKSIM_RNG_H

#include <stdint.h>

struct rng {
    uint64_t s[4];
};

void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
/* Uniform integer in [lo, hi] (inclusive), without modulo bias. */
int64_t rng_range(struct rng *r, int64_t lo, int64_t hi);
/* 1 with probability ppm / 1e6. */
int rng_chance_ppm(struct rng *r, uint32_t ppm);

#endif
