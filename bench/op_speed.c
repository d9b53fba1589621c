/*
 * op_speed.c - how long one operator-time prediction takes: the roofline
 * alone, and a fitted model (smooth fit + local correction) loaded from
 * the built-in samples. Prints ns per prediction; asserts nothing.
 *
 * usage: op_speed [GPU] [OP]   (default a100-80gb linear1)
 */
#define _POSIX_C_SOURCE 200809L
#include "est.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    const char *gpu = argc > 1 ? argv[1] : "a100-80gb";
    const char *opname = argc > 2 ? argv[2] : "linear1";
    tp_err e = {0};
    hw_db *db = hw_db_open(NULL, 0, &e);
    const hw_gpu *g = db ? hw_find_gpu(db, gpu, &e) : NULL;
    if (!g) {
        fprintf(stderr, "op_speed: %s\n", e.msg);
        hw_db_free(db);
        return 1;
    }
    est_sample *s;
    int n, bad;
    est_fit fit = {0};
    double t0 = now_s();
    if (est_gpu_samples(g, opname, -1, 0, &s, &n, &bad, &e)
        || est_fit_samples(g, s, n, &fit, &e)) {
        fprintf(stderr, "op_speed: %s\n", e.msg);
        return 1;
    }
    double fit_s = now_s() - t0;
    /* Shapes drawn around the samples (PCG32, stream 0). */
    enum { N = 200000 };
    est_op *ops = tp_xmalloc(N * sizeof *ops);
    pcg32 r;
    pcg32_seed(&r, 42, 0);
    for (int i = 0; i < N; i++) {
        const est_sample *x = &s[pcg32_bounded(&r, (uint32_t)n)];
        ops[i] = x->op;
        double f = 0.8 + 0.4 * pcg32_double(&r);
        if (ops[i].kind == EST_OP_GEMM) ops[i].m = (int64_t)(ops[i].m * f) + 1;
        else if (ops[i].kind == EST_OP_FLASH_ATTN) ops[i].sq = ops[i].sk = (int64_t)(ops[i].sq * f) + 1;
        else ops[i].rows = (int64_t)(ops[i].rows * f) + 1;
    }
    double sink = 0;
    est_time t;
    t0 = now_s();
    for (int i = 0; i < N; i++) {
        est_op_roofline(g, &ops[i], &t);
        sink += t.fwd_s;
    }
    double roof_ns = (now_s() - t0) / N * 1e9;
    t0 = now_s();
    for (int i = 0; i < N; i++) {
        est_fit_predict(g, &fit, &ops[i], &t);
        sink += t.fwd_s;
    }
    double fit_ns = (now_s() - t0) / N * 1e9;
    printf("gpu %s op %s: %d samples (%d left out), fit in %.1f ms\n", g->name,
           opname, n, bad, fit_s * 1e3);
    printf("roofline prediction: %.0f ns\n", roof_ns);
    printf("fitted prediction:   %.0f ns (residual table %d rows, bandwidths "
           "fwd %.2f bwd %.2f)\n",
           fit_ns, fit.n_res, fit.bw_fwd, fit.bw_bwd);
    printf("(checksum %g)\n", sink);
    free(ops);
    free(s);
    est_fit_free(&fit);
    hw_db_free(db);
    return 0;
}
