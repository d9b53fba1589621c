/*
 * test_pcg32.c - PCG32 against the reference vector of the PCG paper's
 * demo program (seed 42, stream 54), jump-ahead against single steps,
 * and bounded draws.
 */
#include "../hwdb/pcg32.h"
#include "tp_test.h"

static void test_reference_vector(void)
{
    static const uint32_t want[6] = {0xa15c02b7u, 0x7b47f409u, 0xba1d3330u,
                                     0x83d2f293u, 0xbfa4784bu, 0xcbed606eu};
    pcg32 r;
    pcg32_seed(&r, 42u, 54u);
    for (int i = 0; i < 6; i++) TP_CHECK_INT(pcg32_next(&r), want[i]);
}

static void test_advance_equals_steps(void)
{
    static const uint64_t deltas[] = {0, 1, 2, 3, 7, 64, 1000, 12345};
    for (size_t k = 0; k < sizeof deltas / sizeof deltas[0]; k++) {
        pcg32 a, b;
        pcg32_seed(&a, 42u, 54u);
        b = a;
        for (uint64_t i = 0; i < deltas[k]; i++) pcg32_next(&a);
        pcg32_advance(&b, deltas[k]);
        TP_CHECK_INT(a.state, b.state);
        TP_CHECK_INT(pcg32_next(&a), pcg32_next(&b));
    }
}

static void test_advance_backwards(void)
{
    pcg32 a, b;
    pcg32_seed(&a, 7u, 3u);
    b = a;
    for (int i = 0; i < 100; i++) pcg32_next(&a);
    pcg32_advance(&a, (uint64_t)0 - 100u); /* 2^64 - 100: back 100 steps */
    TP_CHECK_INT(a.state, b.state);
}

static void test_streams_differ(void)
{
    pcg32 a, b;
    pcg32_seed(&a, 42u, 54u);
    pcg32_seed(&b, 42u, 55u);
    int same = 0;
    for (int i = 0; i < 16; i++) same += pcg32_next(&a) == pcg32_next(&b);
    TP_CHECK(same < 2);
}

static void test_bounded(void)
{
    pcg32 r;
    pcg32_seed(&r, 1u, 1u);
    int counts[6] = {0};
    for (int i = 0; i < 60000; i++) {
        uint32_t x = pcg32_bounded(&r, 6);
        TP_CHECK(x < 6);
        if (x < 6) counts[x]++;
    }
    /* Each face 10000 expected; 5 sigma is about 456. */
    for (int k = 0; k < 6; k++) TP_CHECK(counts[k] > 9500 && counts[k] < 10500);
    TP_CHECK_INT(pcg32_bounded(&r, 0), 0);
    TP_CHECK_INT(pcg32_bounded(&r, 1), 0);
    /* A bound just above 2^31 rejects almost half of the raw draws. */
    for (int i = 0; i < 1000; i++)
        TP_CHECK(pcg32_bounded(&r, 0x80000001u) < 0x80000001u);
}

static void test_double(void)
{
    pcg32 r;
    pcg32_seed(&r, 9u, 2u);
    double sum = 0;
    for (int i = 0; i < 100000; i++) {
        double x = pcg32_double(&r);
        TP_CHECK(x >= 0.0 && x < 1.0);
        sum += x;
    }
    TP_CHECK(fabs(sum / 100000 - 0.5) < 0.01);
}

int main(void)
{
    TP_RUN(test_reference_vector);
    TP_RUN(test_advance_equals_steps);
    TP_RUN(test_advance_backwards);
    TP_RUN(test_streams_differ);
    TP_RUN(test_bounded);
    TP_RUN(test_double);
    return TP_TEST_EXIT();
}
