/*
 * pcg32.c - PCG32 XSH-RR. See pcg32.h for the references.
 */
#include "pcg32.h"

#define PCG32_MULT 6364136223846793005ULL

static void pcg32_step(pcg32 *r)
{
    r->state = r->state * PCG32_MULT + r->inc;
}

void pcg32_seed(pcg32 *r, uint64_t seed, uint64_t stream)
{
    r->state = 0;
    r->inc = (stream << 1) | 1u;
    pcg32_step(r);
    r->state += seed;
    pcg32_step(r);
}

uint32_t pcg32_next(pcg32 *r)
{
    uint64_t old = r->state;
    pcg32_step(r);
    /* XSH-RR: xorshift the high bits down, then rotate by the top 5 bits. */
    uint32_t x = (uint32_t)(((old >> 18) ^ old) >> 27);
    uint32_t rot = (uint32_t)(old >> 59);
    return (x >> rot) | (x << ((32u - rot) & 31u));
}

uint32_t pcg32_bounded(pcg32 *r, uint32_t bound)
{
    if (bound == 0) return 0;
    /* Reject the lowest 2^32 mod bound values so every residue is equally
     * likely; threshold = (2^32 - bound) mod bound. */
    uint32_t threshold = (uint32_t)(0u - bound) % bound;
    for (;;) {
        uint32_t x = pcg32_next(r);
        if (x >= threshold) return x % bound;
    }
}

double pcg32_double(pcg32 *r)
{
    uint64_t hi = pcg32_next(r) >> 5; /* 27 bits */
    uint64_t lo = pcg32_next(r) >> 6; /* 26 bits */
    return (double)((hi << 26) | lo) * (1.0 / 9007199254740992.0);
}

void pcg32_advance(pcg32 *r, uint64_t delta)
{
    /* Brown's method: compose the affine map s -> M s + C with itself by
     * repeated squaring, applying the powers that delta's bits select. */
    uint64_t acc_mult = 1, acc_plus = 0;
    uint64_t cur_mult = PCG32_MULT, cur_plus = r->inc;
    while (delta > 0) {
        if (delta & 1u) {
            acc_mult *= cur_mult;
            acc_plus = acc_plus * cur_mult + cur_plus;
        }
        cur_plus = (cur_mult + 1) * cur_plus;
        cur_mult *= cur_mult;
        delta >>= 1;
    }
    r->state = acc_mult * r->state + acc_plus;
}
