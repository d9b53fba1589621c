/*
 * pcg32.h - PCG32 (XSH-RR 64/32) random numbers with stream selection,
 * unbiased bounded draws and O(log n) jump-ahead.
 *
 * Written from the published algorithm: M. E. O'Neill, "PCG: A Family of
 * Simple Fast Space-Efficient Statistically Good Algorithms for Random
 * Number Generation", HMC-CS-2014-0905 (2014), sections 4.3 and 6.3.1;
 * the jump-ahead is F. Brown, "Random Number Generation with Arbitrary
 * Strides", Trans. Am. Nucl. Soc. (1994). State advances by an LCG with
 * multiplier 6364136223846793005; the stream picks the odd increment.
 *
 * Determinism: trainplan derives every random stream from an item's index
 * (stream = index), never from a thread, so results do not depend on the
 * thread count. A pcg32 is a plain value: copy it to fork a generator.
 */
#ifndef TP_PCG32_H
#define TP_PCG32_H

#include <stdint.h>

typedef struct pcg32 {
    uint64_t state;
    uint64_t inc; /* always odd */
} pcg32;

/* Seeds with initial state `seed` on stream `stream` (any 63-bit value). */
void pcg32_seed(pcg32 *r, uint64_t seed, uint64_t stream);

/* Next 32 uniformly distributed bits. */
uint32_t pcg32_next(pcg32 *r);

/* Uniform in [0, bound) without modulo bias; bound 0 returns 0. */
uint32_t pcg32_bounded(pcg32 *r, uint32_t bound);

/* Uniform double in [0, 1) with 53 random bits (two draws). */
double pcg32_double(pcg32 *r);

/* Advances the generator by delta steps in O(log delta); a delta of
 * 2^64 - n steps back by n. */
void pcg32_advance(pcg32 *r, uint64_t delta);

#endif
