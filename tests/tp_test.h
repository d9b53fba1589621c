/*
 * tp_test.h - the few macros our unit tests need. Each test program is a
 * main() that calls TP_RUN(fn) for each test and returns TP_TEST_EXIT().
 * A failed check prints file:line and the values, and the test goes on,
 * so one run shows every failure.
 */
#ifndef TP_TEST_H
#define TP_TEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int tp_test_failures;
static int tp_test_checks;

#define TP_CHECK(cond)                                                        \
    do {                                                                      \
        tp_test_checks++;                                                     \
        if (!(cond)) {                                                        \
            tp_test_failures++;                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,  \
                    #cond);                                                   \
        }                                                                     \
    } while (0)

#define TP_CHECK_INT(a, b)                                                    \
    do {                                                                      \
        long long tp_a_ = (long long)(a), tp_b_ = (long long)(b);             \
        tp_test_checks++;                                                     \
        if (tp_a_ != tp_b_) {                                                 \
            tp_test_failures++;                                               \
            fprintf(stderr, "%s:%d: %s == %s: %lld != %lld\n", __FILE__,      \
                    __LINE__, #a, #b, tp_a_, tp_b_);                          \
        }                                                                     \
    } while (0)

/* |a - b| <= rel * |b| (b is the expected value). */
#define TP_CHECK_REL(a, b, rel)                                               \
    do {                                                                      \
        double tp_a_ = (double)(a), tp_b_ = (double)(b);                      \
        tp_test_checks++;                                                     \
        if (!(fabs(tp_a_ - tp_b_) <= (rel) * fabs(tp_b_))) {                  \
            tp_test_failures++;                                               \
            fprintf(stderr, "%s:%d: %s ~ %s (rel %g): %.17g vs %.17g\n",      \
                    __FILE__, __LINE__, #a, #b, (double)(rel), tp_a_, tp_b_); \
        }                                                                     \
    } while (0)

#define TP_CHECK_STR(a, b)                                                    \
    do {                                                                      \
        const char *tp_a_ = (a), *tp_b_ = (b);                                \
        tp_test_checks++;                                                     \
        if (!tp_a_ || !tp_b_ || strcmp(tp_a_, tp_b_) != 0) {                  \
            tp_test_failures++;                                               \
            fprintf(stderr, "%s:%d: %s == %s: \"%s\" != \"%s\"\n", __FILE__,  \
                    __LINE__, #a, #b, tp_a_ ? tp_a_ : "(null)",               \
                    tp_b_ ? tp_b_ : "(null)");                                \
        }                                                                     \
    } while (0)

/* Checks that haystack contains needle. */
#define TP_CHECK_CONTAINS(hay, needle)                                        \
    do {                                                                      \
        const char *tp_h_ = (hay), *tp_n_ = (needle);                         \
        tp_test_checks++;                                                     \
        if (!tp_h_ || !strstr(tp_h_, tp_n_)) {                                \
            tp_test_failures++;                                               \
            fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n",        \
                    __FILE__, __LINE__, tp_h_ ? tp_h_ : "(null)", tp_n_);     \
        }                                                                     \
    } while (0)

#define TP_RUN(fn)                                                            \
    do {                                                                      \
        int tp_before_ = tp_test_failures;                                    \
        fn();                                                                 \
        fprintf(stderr, "%s %s\n", tp_test_failures == tp_before_ ? "ok  " : "FAIL", #fn); \
    } while (0)

#define TP_TEST_EXIT()                                                        \
    (fprintf(stderr, "%d checks, %d failed\n", tp_test_checks,                \
             tp_test_failures),                                               \
     tp_test_failures ? 1 : 0)

/* Writes text to dir/name, the path into path[cap]; 0 or -1. Not every
 * test uses it. */
static inline int tp_test_write(const char *dir, const char *name,
                                const char *text, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f) == 0 ? 0 : -1;
}

#endif
