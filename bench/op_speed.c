/*
 * op_speed.c - how long one operator-time prediction takes: the roofline
 * alone, and a fitted model (smooth fit + compiled local correction)
 * loaded from the built-in samples, for every (operator, dtype) a GPU has
 * samples of. Prints the fit time and ns per prediction (forward and
 * backward together) per operator, and the mean over operators; asserts
 * nothing. Also the time to open every fit of a GPU at once
 * (est_models_open), which a plan pays at start-up.
 *
 * usage: op_speed [GPU ...]   (default: a100-80gb gh200 h100-sxm)
 *
 * The shapes are the GPU's own sample shapes with one dimension scaled by
 * a factor in [0.8, 1.2) (PCG32, seed 42, stream 0), so nearly every query
 * is a shape the fit has not seen and falls between lattice knots.
 */
#define _POSIX_C_SOURCE 200809L
#include "est.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { N = 200000 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Times one (op, dtype) of g; adds its ns per prediction to *sum. */
static int time_op(const hw_gpu *g, const char *op, int dtype, est_op *ops,
                   double *roof_sum, double *fit_sum)
{
    tp_err e = {0};
    est_sample *s = NULL;
    int n, bad;
    est_fit fit = {0};
    double t0 = now_s();
    if (est_gpu_samples(g, op, dtype, 0, &s, &n, &bad, &e)
        || est_fit_samples(g, s, n, &fit, &e)) {
        fprintf(stderr, "op_speed: %s %s: %s\n", g->name, op, e.msg);
        free(s);
        est_fit_free(&fit);
        return -1;
    }
    double fit_ms = (now_s() - t0) * 1e3;
    pcg32 r;
    pcg32_seed(&r, 42, 0);
    for (int i = 0; i < N; i++) {
        const est_sample *x = &s[pcg32_bounded(&r, (uint32_t)n)];
        ops[i] = x->op;
        double f = 0.8 + 0.4 * pcg32_double(&r);
        if (ops[i].kind == EST_OP_GEMM) ops[i].m = (int64_t)((double)ops[i].m * f) + 1;
        else if (ops[i].kind == EST_OP_FLASH_ATTN)
            ops[i].sq = ops[i].sk = (int64_t)((double)ops[i].sq * f) + 1;
        else if (ops[i].kind == EST_OP_ADAM) ops[i].n = (int64_t)((double)ops[i].n * f) + 1;
        else ops[i].rows = (int64_t)((double)ops[i].rows * f) + 1;
    }
    double sink = 0;
    est_time t;
    t0 = now_s();
    for (int i = 0; i < N; i++) {
        est_op_roofline(g, &ops[i], &t);
        sink += t.fwd_s + t.bwd_s;
    }
    double roof_ns = (now_s() - t0) / N * 1e9;
    t0 = now_s();
    for (int i = 0; i < N; i++) {
        est_fit_predict(g, &fit, &ops[i], &t);
        sink += t.fwd_s + t.bwd_s;
    }
    double fit_ns = (now_s() - t0) / N * 1e9;
    long vertices = 1;
    for (int d = 0; d < fit.ndims; d++) vertices *= fit.lat_c ? fit.lat_n[d] : 0;
    printf("%-10s %-28s %-5s %7d %8.1f %9ld %9.0f %9.0f  (checksum %.6g)\n",
           g->name, op, hw_dtype_names[dtype < 0 ? HW_FP16 : dtype], n,
           fit_ms, vertices, roof_ns, fit_ns, sink);
    *roof_sum += roof_ns;
    *fit_sum += fit_ns;
    free(s);
    est_fit_free(&fit);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const def[] = {"a100-80gb", "gh200", "h100-sxm"};
    const char *const *gpus = argc > 1 ? (const char *const *)argv + 1 : def;
    int ngpus = argc > 1 ? argc - 1 : 3;
    tp_err e = {0};
    hw_db *db = hw_db_open(NULL, 0, &e);
    if (!db) {
        fprintf(stderr, "op_speed: %s\n", e.msg);
        return 1;
    }
    est_op *ops = tp_xmalloc(N * sizeof *ops);
    printf("%-10s %-28s %-5s %7s %8s %9s %9s %9s\n", "gpu", "op", "dtype",
           "samples", "fit_ms", "lattice", "roof_ns", "fitted_ns");
    int rc = 0;
    for (int gi = 0; gi < ngpus; gi++) {
        const hw_gpu *g = hw_find_gpu(db, gpus[gi], &e);
        if (!g) {
            fprintf(stderr, "op_speed: %s\n", e.msg);
            rc = 1;
            continue;
        }
        double roof = 0, fit = 0;
        int nops = 0;
        for (int i = 0; i < g->n_measured; i++) {
            const hw_measured *m = &g->measured[i];
            if (strcmp(m->kind, "operator_samples")) continue;
            int seen = 0; /* one fit per (op, dtype) */
            for (int j = 0; j < i; j++)
                seen |= !strcmp(g->measured[j].op, m->op)
                        && !strcmp(g->measured[j].dtype, m->dtype);
            if (seen) continue;
            if (time_op(g, m->op, hw_dtype_parse(m->dtype), ops, &roof, &fit) == 0)
                nops++;
            else
                rc = 1;
        }
        double t0 = now_s();
        est_models *mod = est_models_open(g, 0, &e);
        double open_ms = (now_s() - t0) * 1e3;
        if (!mod) {
            fprintf(stderr, "op_speed: %s\n", e.msg);
            rc = 1;
        } else {
            printf("%-10s est_models_open (every fit of the GPU, samples pooled "
                   "per kernel): %.0f ms\n", g->name, open_ms);
        }
        est_models_free(mod);
        if (nops)
            printf("%-10s mean over %d operators: roofline %.0f ns, fitted "
                   "%.0f ns per prediction\n",
                   g->name, nops, roof / nops, fit / nops);
    }
    free(ops);
    hw_db_free(db);
    return rc;
}
