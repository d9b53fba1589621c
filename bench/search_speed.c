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
 * Then the flagship as a user runs it, `trainplan search` as a process
 * (issue 32: at most 50 ms with a warm fit cache): the median wall time
 * of RUNS processes with a warm fit cache (estimator/cache.c), with an
 * empty one (a cold start: every operator model fitted and stored), and
 * with the cache off, each with the search's own share (the "search: X
 * s" line). The processes use a cache folder of their own under $TMPDIR,
 * not the user's. The in-process table above uses the cache as it is.
 *
 * usage: search_speed [MAX_THREADS [JOBS [RUNS [TRAINPLAN]]]]
 * (default 2, every job, 10 runs, the trainplan built beside this).
 * JOBS: only the first JOBS of them (1: the flagship; tests/bench_smoke.sh
 * runs that, untimed, with RUNS 2). RUNS 0: no process timings.
 */
#define _POSIX_C_SOURCE 200809L
#include "search.h"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

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

/* ---- the flagship as a process ---------------------------------------- */

static const char *const flagship_argv[] = {
    "trainplan", "search", "--model", "gpt-neox-20b", "--system", "perlmutter",
    "--max-gpus", "128", "--seq-length", "2048", "--global-batch-size", "1024",
    "--tokens", "300e9", NULL};

/* Empties and removes a cache folder (it holds files only). */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        char p[4400];
        for (struct dirent *e; (e = readdir(d));) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* Runs the flagship once with its standard output in out_path: the wall
 * time, and the search's own from its "search: X s" line (NAN if none).
 * Returns the exit status, or -1 when it could not be started. */
static int flagship_process(const char *exe, const char *out_path,
                            double *wall_s, double *search_s)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path,
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    double t0 = now_s();
    int rc = posix_spawn(&pid, exe, &fa, NULL, (char *const *)flagship_argv,
                         environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return -1;
    int st = 0;
    waitpid(pid, &st, 0);
    *wall_s = now_s() - t0;
    *search_s = NAN;
    FILE *f = fopen(out_path, "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "search: %lf s", search_s) == 1) break;
    if (f) fclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Warm, cold and off, RUNS processes each. */
static int flagship_processes(const char *exe, int runs)
{
    if (access(exe, X_OK) != 0) {
        printf("\nflagship as a process: %s not found (pass its path as the "
               "fourth argument); skipped.\n", exe);
        return 0;
    }
    const char *tmp = getenv("TMPDIR");
    char base[4096], dir[4200], out[4200];
    snprintf(base, sizeof base, "%s/search_speed.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(base)) {
        perror("search_speed: mkdtemp");
        return 1;
    }
    snprintf(dir, sizeof dir, "%s/cache", base);
    snprintf(out, sizeof out, "%s/out.txt", base);
    static const char *const modes[] = {"warm", "cold", "off"};
    double wall[3][64], srch[3][64];
    if (runs > 64) runs = 64;
    int rc = 0;
    unsetenv("TRAINPLAN_CACHE");
    setenv("TRAINPLAN_CACHE_DIR", dir, 1);
    double w, s;
    rc |= flagship_process(exe, out, &w, &s) != 0; /* fills it: warm */
    for (int r = 0; r < runs && !rc; r++)
        for (int m = 0; m < 3 && !rc; m++) { /* interleaved: the same load */
            if (m == 1) {
                snprintf(dir, sizeof dir, "%s/cold%d", base, r);
                setenv("TRAINPLAN_CACHE_DIR", dir, 1);
            }
            if (m == 2) setenv("TRAINPLAN_CACHE", "off", 1);
            rc |= flagship_process(exe, out, &wall[m][r], &srch[m][r]) != 0;
            if (m == 1) remove_dir(dir);
            unsetenv("TRAINPLAN_CACHE");
            snprintf(dir, sizeof dir, "%s/cache", base);
            setenv("TRAINPLAN_CACHE_DIR", dir, 1);
        }
    remove_dir(dir);
    unlink(out);
    rmdir(base);
    unsetenv("TRAINPLAN_CACHE_DIR");
    if (rc) {
        fprintf(stderr, "search_speed: %s search failed\n", exe);
        return 1;
    }
    printf("\nflagship as a process (trainplan search, default threads), "
           "median of %d:\n\n| fit cache | wall s | of which the search s |\n"
           "|---|---:|---:|\n", runs);
    for (int m = 0; m < 3; m++)
        printf("| %s | %.3f | %.3f |\n", modes[m], median(wall[m], runs),
               median(srch[m], runs));
    return 0;
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
    int runs = argc > 3 ? atoi(argv[3]) : 10;
    if (runs > 0)
        rc |= flagship_processes(argc > 4 ? argv[4] : TRAINPLAN_EXE, runs);
    return rc;
}
