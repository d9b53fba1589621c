/*
 * session_speed.c - what one library call costs with a session
 * (include/trainplan.h tp_open) and without, and how calls on one session
 * scale over threads (issue 32: an estimate on an open session at most
 * 1 ms, median of 1,000; two threads at least 1.8 x one thread's calls per
 * second on 2 cores).
 *
 *     session_speed [CALLS] [SECONDS]    defaults 1000 and 2
 *
 * Prints: the median and 90th percentile of CALLS estimate calls on one
 * session (tp_session_call_json, JSON in and out, as Python calls it), of
 * a pinned layout and of one estimate completes itself, the
 * median of a few calls without a session (each reopens the database and
 * refits the models), the first call on a fresh session (the fit), and
 * the calls per second of 1 and of 2 threads on one session over SECONDS
 * each, with their ratio. Linked against the shared library as a client.
 */
#define _POSIX_C_SOURCE 200809L
#include "trainplan.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A layout pinned but for what estimate completes by itself (the
 * pipeline split, CUDA graphs: 5 layouts tried), as a caller scoring its
 * own layouts asks; and one with only TP and PP given, which estimate
 * completes over 13,200 layouts (micro-batch, recomputation, ZeRO, ...). */
static const char *pinned =
    "{\"model\": \"gpt-neox-20b\", \"system\": \"perlmutter\", \"gpus\": 128, "
    "\"seq_length\": 2048, \"global_batch_size\": 1024, "
    "\"tensor_model_parallel_size\": 4, \"pipeline_model_parallel_size\": 4, "
    "\"context_parallel_size\": 1, \"micro_batch_size\": 1, "
    "\"num_virtual_stages_per_pipeline_rank\": 1, \"recompute_granularity\": "
    "\"selective\", \"zero_stage\": 1, \"sequence_parallel\": true}";
static const char *completed =
    "{\"model\": \"gpt-neox-20b\", \"system\": \"perlmutter\", \"gpus\": 128, "
    "\"seq_length\": 2048, \"global_batch_size\": 1024, "
    "\"tensor_model_parallel_size\": 4, \"pipeline_model_parallel_size\": 4, "
    "\"sequence_parallel\": true}";
static const char *req;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One estimate; exits on failure (a benchmark of a failing call says
 * nothing). */
static void one(tp_session *s)
{
    char *res = NULL, *err = NULL;
    int rc = s ? tp_session_call_json(s, "estimate", req, &res, &err)
               : tp_estimate_json(req, &res, &err);
    if (rc != 0 || !res) {
        fprintf(stderr, "session_speed: estimate failed (%d): %s\n", rc,
                err ? err : "");
        exit(1);
    }
    tp_free(res);
    tp_free(err);
}

typedef struct worker {
    tp_session *s;
    double until;
    long calls;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    while (now_s() < w->until) {
        one(w->s);
        w->calls++;
    }
    return NULL;
}

/* Calls per second of n threads on session s over secs. */
static double rate(tp_session *s, int n, double secs)
{
    pthread_t t[2];
    worker w[2];
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        w[i] = (worker){s, t0 + secs, 0};
        if (pthread_create(&t[i], NULL, work, &w[i]) != 0) {
            fprintf(stderr, "session_speed: pthread_create failed\n");
            exit(1);
        }
    }
    long calls = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(t[i], NULL);
        calls += w[i].calls;
    }
    return (double)calls / (now_s() - t0);
}

int main(int argc, char **argv)
{
    int calls = argc > 1 ? atoi(argv[1]) : 1000;
    double secs = argc > 2 ? atof(argv[2]) : 2;
    if (calls < 1 || !(secs > 0)) {
        fprintf(stderr, "usage: session_speed [CALLS >= 1] [SECONDS > 0]\n");
        return 2;
    }
    req = pinned;
    double t0 = now_s();
    char *err = NULL;
    tp_session *s = tp_open(NULL, &err);
    if (!s) {
        fprintf(stderr, "session_speed: %s\n", err ? err : "tp_open failed");
        return 1;
    }
    double t_open = now_s() - t0;
    t0 = now_s();
    one(s);
    double t_first = now_s() - t0;

    double *dt = malloc((size_t)calls * sizeof *dt);
    double med[2], p90[2];
    for (int k = 1; k >= 0; k--) {
        req = k ? completed : pinned;
        for (int i = 0; i < calls; i++) {
            t0 = now_s();
            one(s);
            dt[i] = now_s() - t0;
        }
        qsort(dt, (size_t)calls, sizeof *dt, cmp_double);
        med[k] = dt[calls / 2], p90[k] = dt[(int)(0.9 * (calls - 1))];
    }

    enum { PLAIN = 10 };
    double pt[PLAIN];
    for (int i = 0; i < PLAIN; i++) {
        t0 = now_s();
        one(NULL);
        pt[i] = now_s() - t0;
    }
    qsort(pt, PLAIN, sizeof *pt, cmp_double);

    double r1 = rate(s, 1, secs), r2 = rate(s, 2, secs);
    printf("session_speed: estimate of gpt-neox-20b on 128 perlmutter GPUs "
           "(TP 4, PP 4), JSON in and out; the pinned layout unless said\n");
    printf("  tp_open:                         %8.3f ms\n", 1e3 * t_open);
    printf("  first call on the session (fit): %8.3f ms\n", 1e3 * t_first);
    printf("  a call on the session, pinned:   %8.3f ms median, %.3f ms p90 "
           "(%d calls; 5 layouts each)\n", 1e3 * med[0], 1e3 * p90[0], calls);
    printf("  a call on the session, TP/PP:    %8.3f ms median, %.3f ms p90 "
           "(%d calls; 13,200 layouts each)\n", 1e3 * med[1], 1e3 * p90[1], calls);
    printf("  a call without a session:        %8.3f ms median (%d calls)\n",
           1e3 * pt[PLAIN / 2], PLAIN);
    printf("  one session, 1 thread:           %8.0f calls/s\n", r1);
    printf("  one session, 2 threads:          %8.0f calls/s (%.2f x 1 "
           "thread)\n", r2, r2 / r1);
    free(dt);
    tp_close(s);
    return 0;
}
