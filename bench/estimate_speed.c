/*
 * estimate_speed.c - how long one iteration estimate (est_estimate) takes,
 * fitted operator models loaded: GPT-3 175B on Selene (A100, fitted seed
 * samples) and Llama 3 70B on Eos (H100, fitted XLA and sampler GEMMs),
 * over a spread of layouts (TP, PP, micro-batch, recompute, ZeRO, CP),
 * each estimated many times. Prints microseconds per estimate and the
 * time to open the models. Asserts nothing.
 *
 * usage: estimate_speed [ROUNDS]   (default 2000)
 */
#define _POSIX_C_SOURCE 199309L
#include "est.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int run(hw_db *db, const char *sys, const char *model, int rounds)
{
    tp_err e = {0};
    const hw_system *y = hw_find_system(db, sys, &e);
    const space_model *m = space_preset_find(model, &e);
    if (!y || !m) {
        fprintf(stderr, "estimate_speed: %s\n", e.msg);
        return 1;
    }
    double t0 = now_s();
    est_models *ops = est_models_open(y->gpu, 0, &e);
    est_comm *comm = ops ? est_comm_open(y, &e) : NULL;
    double t_open = now_s() - t0;
    if (!ops || !comm) {
        fprintf(stderr, "estimate_speed: %s\n", e.msg);
        est_models_free(ops);
        return 1;
    }
    est_ctx c = {y, y->gpu, ops, comm, 0, 0, NULL};
    space_layout ls[64];
    int n = 0;
    static const int64_t tps[] = {2, 4, 8}, pps[] = {1, 2, 4, 8}, mbss[] = {1, 2, 4};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 4; b++)
            for (int k = 0; k < 3 && n < 64; k++) {
                space_layout *l = &ls[n++];
                memset(l, 0, sizeof *l);
                l->tp = tps[a], l->pp = pps[b], l->cp = 1, l->vpp = 1;
                l->dp = 256 / (l->tp * l->pp);
                l->mbs = mbss[k], l->gbs = 1536, l->seq = 2048;
                l->sp = 1, l->recompute = (space_recompute)(k % 3);
                l->zero = (space_zero)(a % 2), l->dtype = HW_BF16, l->flash = 1;
            }
    est_result r;
    double sink = 0;
    t0 = now_s();
    for (int i = 0; i < rounds; i++)
        for (int j = 0; j < n; j++) {
            est_estimate(&c, m, &ls[j], &r);
            sink += r.iteration_s;
        }
    double dt = now_s() - t0;
    printf("%-10s %-12s %3d layouts x %d: %.2f us per estimate   (models "
           "opened in %.3f s; checksum %.6g)\n",
           sys, model, n, rounds, 1e6 * dt / ((double)n * rounds), t_open, sink);
    est_comm_free(comm);
    est_models_free(ops);
    return 0;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 2000;
    if (rounds < 1) rounds = 1;
    tp_err e = {0};
    hw_db *db = hw_db_open(NULL, 0, &e);
    if (!db) {
        fprintf(stderr, "estimate_speed: %s\n", e.msg);
        return 1;
    }
    int rc = run(db, "selene", "gpt3-175b", rounds);
    rc |= run(db, "eos", "llama3-70b", rounds);
    hw_db_free(db);
    return rc;
}
