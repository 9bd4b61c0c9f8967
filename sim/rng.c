/* xoshiro256** by Blackman and Vigna (public domain reference), seeded with
 * splitmix64 so that any 64-bit seed, even 0, gives a good state. */
#include "rng.h"

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void rng_seed(struct rng *r, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

uint64_t rng_next(struct rng *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

int64_t rng_range(struct rng *r, int64_t lo, int64_t hi) {
    if (hi <= lo) return lo;
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1; /* 0 means the full 2^64 range */
    if (span == 0) return (int64_t)rng_next(r);
    uint64_t limit = UINT64_MAX - (UINT64_MAX % span); /* reject the biased tail */
    uint64_t v;
    do v = rng_next(r);
    while (v >= limit);
    return (int64_t)((uint64_t)lo + v % span);
}

int rng_chance_ppm(struct rng *r, uint32_t ppm) {
    if (ppm == 0) return 0;
    return (uint32_t)rng_range(r, 0, 999999) < ppm;
}
