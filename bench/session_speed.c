/*
 * session_speed.c - what one library call costs with a session
 * (include/trainplan.h tp_open) and without, and how calls on one session
 * scale over threads (issue 32: an estimate on an open session at most
 * 1 ms, median of 1,000; two threads at least 1.8 x one thread's calls per
 * second on 2 cores).
 *
 *     session_speed [CALLS] [SECONDS] [ROUNDS]    defaults 1000, 1, 5
 *
 * Two calls on one session, both with the request as JSON (as Python
 * calls them): tp_session_estimate_from_json (the result as a struct:
 * Python's trainplan.estimate_struct) and tp_session_call_json (the
 * command's JSON: trainplan.estimate). Prints the median and 90th
 * percentile of CALLS calls of each for a pinned layout, of one estimate
 * completes itself (struct), the median of a few calls without a session
 * (each reopens the database; JSON), the first call on a fresh session
 * (the models load or fit), and the calls per second of 1 and of 2
 * threads on one session: ROUNDS rounds of SECONDS each, 1 and 2 threads
 * alternating, the medians and the median of the rounds' ratios (on a
 * shared machine neighbouring rounds see the same load). Linked against
 * the shared library as a client.
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
static void one(tp_session *s, int structs)
{
    char *res = NULL, *err = NULL;
    tp_estimate_result r;
    int rc = s && structs ? tp_session_estimate_from_json(s, req, &r, &err)
             : s          ? tp_session_call_json(s, "estimate", req, &res, &err)
                          : tp_estimate_json(req, &res, &err);
    if (rc != 0 || (!structs && !res) || (structs && !(r.layout.iteration_time_s > 0))) {
        fprintf(stderr, "session_speed: estimate failed (%d): %s\n", rc,
                err ? err : "");
        exit(1);
    }
    tp_free(res);
    tp_free(err);
}

typedef struct worker {
    tp_session *s;
    int structs;
    double until;
    long calls;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    while (now_s() < w->until) {
        one(w->s, w->structs);
        w->calls++;
    }
    return NULL;
}

/* Calls per second of n threads on session s over secs. */
static double rate(tp_session *s, int structs, int n, double secs)
{
    pthread_t t[2];
    worker w[2];
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        w[i] = (worker){s, structs, t0 + secs, 0};
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

/* The median of v[0..n) (sorts v). */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    int calls = argc > 1 ? atoi(argv[1]) : 1000;
    double secs = argc > 2 ? atof(argv[2]) : 1;
    int rounds = argc > 3 ? atoi(argv[3]) : 5;
    if (calls < 1 || !(secs > 0) || rounds < 1 || rounds > 100) {
        fprintf(stderr, "usage: session_speed [CALLS >= 1] [SECONDS > 0] "
                        "[ROUNDS 1..100]\n");
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
    one(s, 1);
    double t_first = now_s() - t0;

    /* [k][structs]: k 0 pinned, 1 TP/PP (struct only) */
    double *dt = malloc((size_t)calls * sizeof *dt);
    double med[2][2] = {{0}}, p90[2][2] = {{0}};
    for (int k = 0; k < 2; k++)
        for (int st = 1; st >= (k ? 1 : 0); st--) {
            req = k ? completed : pinned;
            int n = k ? (calls + 9) / 10 : calls;
            for (int i = 0; i < n; i++) {
                t0 = now_s();
                one(s, st);
                dt[i] = now_s() - t0;
            }
            qsort(dt, (size_t)n, sizeof *dt, cmp_double);
            med[k][st] = dt[n / 2], p90[k][st] = dt[(int)(0.9 * (n - 1))];
        }
    req = pinned;

    enum { PLAIN = 10 };
    double pt[PLAIN];
    for (int i = 0; i < PLAIN; i++) {
        t0 = now_s();
        one(NULL, 0);
        pt[i] = now_s() - t0;
    }
    qsort(pt, PLAIN, sizeof *pt, cmp_double);

    double r[2][3][100]; /* [structs][1 thread, 2 threads, ratio][round] */
    for (int st = 1; st >= 0; st--)
        for (int i = 0; i < rounds; i++) {
            r[st][0][i] = rate(s, st, 1, secs);
            r[st][1][i] = rate(s, st, 2, secs);
            r[st][2][i] = r[st][1][i] / r[st][0][i];
        }
    printf("session_speed: estimate of gpt-neox-20b on 128 perlmutter GPUs "
           "(TP 4, PP 4), the request as JSON; the pinned layout unless "
           "said\n");
    printf("  tp_open:                         %8.3f ms\n", 1e3 * t_open);
    printf("  first call on the session (fit): %8.3f ms\n", 1e3 * t_first);
    static const char *const way[2] = {"JSON out", "struct out"};
    for (int st = 1; st >= 0; st--)
        printf("  a call, pinned, %-10s       %8.3f ms median, %.3f ms p90 "
               "(%d calls; 5 layouts each)\n", way[st], 1e3 * med[0][st],
               1e3 * p90[0][st], calls);
    printf("  a call, TP/PP, struct out:       %8.3f ms median, %.3f ms p90 "
           "(%d calls; 13,200 layouts each)\n", 1e3 * med[1][1],
           1e3 * p90[1][1], (calls + 9) / 10);
    printf("  a call without a session (JSON): %8.3f ms median (%d calls)\n",
           1e3 * pt[PLAIN / 2], PLAIN);
    for (int st = 1; st >= 0; st--) {
        double lo = r[st][2][0], hi = lo;
        for (int i = 1; i < rounds; i++) {
            lo = r[st][2][i] < lo ? r[st][2][i] : lo;
            hi = r[st][2][i] > hi ? r[st][2][i] : hi;
        }
        double r1 = median(r[st][0], rounds), r2 = median(r[st][1], rounds);
        double ratio = median(r[st][2], rounds);
        printf("  %-10s 1 thread %7.0f calls/s, 2 threads %7.0f calls/s: "
               "%.2f x (median of %d rounds of %g s; %.2f-%.2f)\n", way[st],
               r1, r2, ratio, rounds, secs, lo, hi);
    }
    free(dt);
    tp_close(s);
    return 0;
}
