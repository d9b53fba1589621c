/*
 * search_speed.c - how fast the layout search (search/plan.c) is: for the
 * README's flagship (GPT-NeoX-20B on up to 128 GPUs of Perlmutter), Llama
 * 3 70B on up to 1024 H100s (Eos), GPT-3 175B on up to 4096 A100s
 * (Selene) and a 1T model on up to 16384 H100s (Megatron-Core's H100
 * cluster), each with and without pruning and at 1 and 2 threads: layouts
 * enumerated, rejected by rules, pruned by bounds, estimated, wall time
 * (the search alone, and with start-up: hwdb, operator models and
 * collective tables loaded), and layouts per second per thread; with and
 * without the memoized operator times (est_memo_enable). Also what one
 * estimate costs, with and without them. Asserts nothing.
 *
 * usage: search_speed [MAX_THREADS [JOBS]]   (default 2, every job)
 * JOBS: only the first JOBS of them (1: the flagship; tests/bench_smoke.sh
 * runs that, untimed).
 */
#define _POSIX_C_SOURCE 199309L
#include "search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct job {
    const char *name, *model, *system;
    int64_t max_gpus, seq, gbs;
    double tokens;
} job;

static const job jobs[] = {
    {"flagship", "gpt-neox-20b", "perlmutter", 128, 2048, 1024, 300e9},
    {"llama3-70b", "llama3-70b", "eos", 1024, 8192, 2048, 15e12},
    {"gpt3-175b", "gpt3-175b", "selene", 4096, 2048, 1536, 300e9},
    {"1t", "gpt3-1t", "megatron-core-h100", 16384, 2048, 3072, 450e9},
    /* a mixture of experts: EP x expert TP in the grid (issue 19) */
    {"mixtral", "mixtral-8x7b", "eos", 256, 4096, 1024, 1e12},
};

static void set_threads(int t)
{
#ifdef _OPENMP
    omp_set_num_threads(t);
#else
    (void)t;
#endif
}

/* One search from scratch: open everything, search, free. */
static int run(const job *j, int threads, int no_prune, int memo, int savers,
               double *est_us)
{
    set_threads(threads);
    est_memo_enable(memo);
    double t0 = now_s();
    tp_err e = {0};
    hw_db *db = hw_db_open(NULL, 0, &e);
    const hw_system *y = db ? hw_find_system(db, j->system, &e) : NULL;
    const space_model *m = space_preset_find(j->model, &e);
    est_models *ops = y ? est_models_open(y->gpu, 0, &e) : NULL;
    est_comm *comm = ops ? est_comm_open(y, &e) : NULL;
    if (!comm || !m) {
        fprintf(stderr, "search_speed: %s\n", e.msg);
        est_models_free(ops);
        hw_db_free(db);
        return 1;
    }
    search_system s;
    memset(&s, 0, sizeof s);
    s.ctx = (est_ctx){y, y->gpu, ops, comm, 0, 0, NULL};
    s.price_usd_per_gpu_hour = y->price_usd_per_gpu_hour;
    space_grid_default(&s.grid, m, y->gpus_per_node, j->max_gpus, j->max_gpus);
    int64_t *gpus = malloc((size_t)(j->max_gpus / y->gpus_per_node + 1) * sizeof *gpus);
    int n = 0;
    for (int64_t g = y->gpus_per_node; g <= j->max_gpus; g += y->gpus_per_node)
        gpus[n++] = g;
    search_request q;
    memset(&q, 0, sizeof q);
    q.model = m;
    q.systems = &s;
    q.n_systems = 1;
    q.base.tp = q.base.pp = q.base.cp = q.base.vpp = q.base.mbs = 1;
    q.base.seq = j->seq, q.base.gbs = j->gbs, q.base.dtype = HW_BF16;
    q.base.flash = 1;
    q.gpus = gpus;
    q.n_gpus = n;
    q.objective = SEARCH_BY_TIME;
    q.top_k = 10;
    q.tokens = j->tokens;
    q.max_memory_fraction = 1;
    q.no_prune = no_prune;
    q.savers = savers; /* the memory savers tried on what does not fit */
    q.keep_points = 1; /* est_us samples the admitted layouts */
    double t1 = now_s();
    search_answer a;
    int rc = search_run(&q, &a, &e);
    double t2 = now_s();
    if (rc) {
        fprintf(stderr, "search_speed: %s\n", e.msg);
    } else {
        const search_stats *st = &a.stats;
        int64_t rej = 0, pruned = 0;
        for (int i = 1; i < SPACE_REJECT_COUNT; i++) rej += st->rejected[i];
        for (int i = 0; i < SEARCH_PRUNE_COUNT; i++) pruned += st->pruned[i];
        double ws = t2 - t1;
        int64_t saved = 0;
        for (int i = 1; i < SEARCH_SAVER_COUNT; i++) saved += st->saved[i];
        printf("| %-10s | %-7s | %-4s | %-6s | %d | %10lld | %10lld | %7lld | "
               "%7lld (%lld mem, %lld time) | %7lld | %7lld | %7.3f | %7.3f | "
               "%9.0f | %12.0f |\n",
               j->name, no_prune ? "off" : "on", memo ? "on" : "off",
               savers ? "on" : "off", threads,
               (long long)st->enumerated, (long long)rej, (long long)st->valid,
               (long long)pruned, (long long)st->pruned[SEARCH_PRUNE_MEMORY],
               (long long)st->pruned[SEARCH_PRUNE_TIME],
               (long long)st->estimated, (long long)saved, ws, t2 - t0,
               (double)st->estimated / ws / threads,
               (double)st->enumerated / ws / threads);
        /* one estimate's cost, from the winner's neighbourhood */
        if (est_us && a.n_points > 0) {
            int64_t k = a.n_points < 2000 ? a.n_points : 2000;
            est_result r;
            for (int on = 1; on >= 0; on--) {
                est_memo_enable(on);
                double t3 = now_s();
                for (int rep = 0; rep < 5; rep++)
                    for (int64_t i = 0; i < k; i++)
                        search_point_estimate(&q, &a.points[i], &r);
                est_us[1 - on] = 1e6 * (now_s() - t3) / (5.0 * (double)k);
            }
            est_memo_enable(memo);
        }
    }
    search_answer_free(&a);
    free(gpus);
    est_comm_free(comm);
    est_models_free(ops);
    hw_db_free(db);
    return rc;
}

int main(int argc, char **argv)
{
    int max_t = argc > 1 ? atoi(argv[1]) : 2;
    if (max_t < 1) max_t = 1;
    size_t n_jobs = sizeof jobs / sizeof jobs[0];
    if (argc > 2 && atoi(argv[2]) >= 1 && (size_t)atoi(argv[2]) < n_jobs)
        n_jobs = (size_t)atoi(argv[2]);
    printf("| search     | pruning | memo | savers | threads | enumerated | "
           "rejected (rules) | valid | pruned (bounds) | estimated | admitted "
           "with a saver | search s | with start-up s | estimated/s/thread | "
           "enumerated/s/thread |\n");
    printf("|---|---|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|"
           "---:|\n");
    int rc = 0;
    double us[sizeof jobs / sizeof jobs[0]][2] = {{0}};
    /* pruning and memoization on; the same with the memory savers
     * (issue 28), the command line's default; memoization off; pruning
     * off */
    static const int cfg[][3] = {{0, 1, 0}, {0, 1, 1}, {0, 0, 0}, {1, 1, 0}};
    for (size_t i = 0; i < n_jobs; i++)
        for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++)
            for (int t = 1; t <= max_t; t *= 2)
                rc |= run(&jobs[i], t, cfg[c][0], cfg[c][1], cfg[c][2],
                          c == 0 && t == 1 ? us[i] : NULL);
    est_memo_enable(1);
    printf("\none estimate, memoized operator times / not:");
    for (size_t i = 0; i < n_jobs; i++)
        printf("%s %.2f / %.2f us (%s)", i ? "," : "", us[i][0], us[i][1],
               jobs[i].name);
    printf(".\n");
    return rc;
}
