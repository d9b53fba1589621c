/*
 * test_miss.c - a search that admits nothing, explained (search/miss.c):
 *  - the nearest layout's figures are the search's own: for a dollar
 *    budget alone, the cost of the cheapest admitted layout of the same
 *    search without the budget; for memory, the shortfall the search
 *    recorded;
 *  - the binding limit is the one the nearest layout exceeds by the
 *    largest ratio, and each limit's status is its value against it;
 *  - every lever reported fits: its #1 meets every limit, and the search
 *    with the lever applied by hand admits a layout;
 *  - the tokens and price levers are the largest that fit, to their 3
 *    significant figures (a 1 % larger value does not);
 *  - nothing is explained where something was admitted;
 *  - the same report at 1, 2 and 4 threads.
 */
#include "search.h"
#include "tp_test.h"

#include <math.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

static hw_db *db;

enum { NSYS = 2 };
static const char *const sys_names[NSYS] = {"perlmutter", "eos"};
static est_models *ops[NSYS];
static est_comm *comm[NSYS];
static search_system systems[NSYS];

static const space_model *model(const char *name)
{
    tp_err e = {0};
    return space_preset_find(name, &e);
}

/* System i with the default grid of m (PP up to 8: quick). */
static const search_system *sys_for(int i, const space_model *m)
{
    static search_system ys[NSYS];
    ys[i] = systems[i];
    space_grid_default(&ys[i].grid, m, ys[i].ctx.sys->gpus_per_node, 8, 0);
    return &ys[i];
}

static search_request request(const space_model *m, const search_system *s,
                              const int64_t *gpus, int ng)
{
    search_request q;
    memset(&q, 0, sizeof q);
    q.model = m;
    q.systems = s;
    q.n_systems = 1;
    memset(&q.base, 0, sizeof q.base);
    q.base.tp = q.base.pp = q.base.cp = q.base.vpp = q.base.mbs = 1;
    q.base.seq = 2048, q.base.gbs = 128, q.base.dtype = HW_BF16;
    q.base.flash = 1;
    q.gpus = gpus;
    q.n_gpus = ng;
    q.objective = SEARCH_BY_TIME;
    q.top_k = 5;
    q.savers = 1;
    return q;
}

/* Whether q admits something; *best its #1 (may be NULL). */
static int admits(search_request q, search_point *best)
{
    search_answer a;
    tp_err e = {0};
    TP_CHECK_INT(search_run(&q, &a, &e), TP_OK);
    int n = a.n_ranked;
    if (n && best) *best = a.ranked[0];
    search_answer_free(&a);
    return n > 0;
}

/* Runs q, which must admit nothing, and explains it into *a. */
static const search_miss_report *explain(const search_request *q,
                                         search_answer *a)
{
    tp_err e = {0};
    TP_CHECK_INT(search_run(q, a, &e), TP_OK);
    TP_CHECK_INT(a->n_ranked, 0);
    TP_CHECK_INT(search_explain_miss(q, a, &e), TP_OK);
    TP_CHECK(a->miss != NULL);
    return a->miss;
}

/* Every lever's #1 meets every limit of the request. */
static void levers_fit(const search_miss_report *r)
{
    for (int i = 0; i < r->n_levers; i++) {
        const search_figures *f = &r->levers[i].best;
        TP_CHECK(f->value[SEARCH_LIMIT_MEMORY] <= f->limit[SEARCH_LIMIT_MEMORY]);
        for (int k = SEARCH_LIMIT_BUDGET_USD; k < SEARCH_LIMIT_COUNT; k++)
            if (f->limit[k] > 0) TP_CHECK(f->value[k] <= f->limit[k]);
        if (i > 0) TP_CHECK(r->levers[i].kind > r->levers[i - 1].kind);
    }
}

static const search_lever *find(const search_miss_report *r,
                                search_lever_kind k)
{
    for (int i = 0; i < r->n_levers; i++)
        if (r->levers[i].kind == k) return &r->levers[i];
    return NULL;
}

static void test_floor3(void)
{
    TP_CHECK(search_floor3(1.5e12) == 1.5e12);
    TP_CHECK_REL(search_floor3(1.8099e12), 1.8e12, 1e-12);
    TP_CHECK_REL(search_floor3(5.4567), 5.45, 1e-12);
    TP_CHECK_REL(search_floor3(999.9), 999, 1e-12);
    TP_CHECK(search_floor3(0) == 0);
    TP_CHECK(search_floor3(-3) == 0);
    TP_CHECK(search_floor3(INFINITY) == 0);
}

/* A dollar budget 10 % under the cheapest layout, on H100s (eos). */
static void test_budget(void)
{
    static const int64_t gpus[] = {8, 16};
    search_request q = request(model("llama3-8b"), sys_for(1, model("llama3-8b")), gpus, 2);
    q.tokens = 2e10;
    /* the cheapest admitted layout without a budget */
    search_request qc = q;
    qc.objective = SEARCH_BY_COST;
    search_point cheap;
    TP_CHECK(admits(qc, &cheap));
    double its = q.tokens / ((double)q.base.gbs * (double)q.base.seq);
    double cost = cheap.cost_usd * its;
    q.budget_usd = 0.9 * cost;
    search_answer a;
    const search_miss_report *r = explain(&q, &a);
    if (!r) return;
    TP_CHECK_INT(r->binding, SEARCH_LIMIT_BUDGET_USD);
    TP_CHECK(r->memory_fits);
    TP_CHECK_REL(r->nearest.value[SEARCH_LIMIT_BUDGET_USD], cost, 1e-9);
    TP_CHECK(r->nearest.limit[SEARCH_LIMIT_BUDGET_USD] == q.budget_usd);
    TP_CHECK(r->nearest.limit[SEARCH_LIMIT_DEADLINE] == 0);
    TP_CHECK_INT(r->nearest.gpus, cheap.gpus);
    levers_fit(r);
    /* tokens: what fits, to 3 figures; 1 % more does not */
    const search_lever *lt = find(r, SEARCH_LEVER_TOKENS);
    TP_CHECK(lt != NULL);
    if (lt) {
        TP_CHECK(lt->value <= 0.9 * q.tokens * (1 + 1e-9));
        TP_CHECK(lt->value >= 0.99 * 0.9 * q.tokens);
        search_request t = q;
        t.tokens = lt->value;
        TP_CHECK(admits(t, NULL));
        t.tokens = ceil(lt->value * 1.01);
        TP_CHECK(!admits(t, NULL));
    }
    /* price: below eos's, and the most that fits to 3 figures */
    const search_lever *lp = find(r, SEARCH_LEVER_PRICE);
    TP_CHECK(lp != NULL);
    if (lp) {
        TP_CHECK(lp->value < q.systems->price_usd_per_gpu_hour);
        search_system ys = *q.systems;
        ys.price_usd_per_gpu_hour = lp->value;
        search_request t = q;
        t.systems = &ys;
        TP_CHECK(admits(t, NULL));
        ys.price_usd_per_gpu_hour = lp->value * 1.01;
        TP_CHECK(!admits(t, NULL));
    }
    /* fp8 on H100: Transformer Engine's fp8 GEMMs are well over 10 %
     * cheaper on an 8B model; the search with it admits */
    const search_lever *lf = find(r, SEARCH_LEVER_PRECISION);
    TP_CHECK(lf != NULL);
    if (lf) {
        TP_CHECK_INT((int)lf->value, HW_FP8);
        TP_CHECK_INT((int)lf->systems, 1);
        TP_CHECK_INT(lf->best.layout.dtype, HW_FP8);
        search_request t = q;
        t.base.dtype = HW_FP8;
        TP_CHECK(admits(t, NULL));
    }
    /* a GPU count beyond 8-16, where one fits, is outside the range */
    const search_lever *lg = find(r, SEARCH_LEVER_GPUS);
    if (lg) TP_CHECK(lg->value > 16 || lg->value < 8);
    TP_CHECK(find(r, SEARCH_LEVER_RECOMPUTE) == NULL);
    TP_CHECK(find(r, SEARCH_LEVER_SAVERS) == NULL);
    TP_CHECK(r->searches >= r->n_levers);
    search_answer_free(&a);
    TP_CHECK(a.miss == NULL);
}

/* A budget and a deadline: the one exceeded by the larger ratio binds,
 * and each is reported against its own limit. */
static void test_two_limits(void)
{
    static const int64_t gpus[] = {8, 16};
    search_request q = request(model("llama3-8b"), sys_for(1, model("llama3-8b")), gpus, 2);
    q.tokens = 2e10;
    search_request qt = q;
    search_point fast;
    TP_CHECK(admits(qt, &fast));
    double its = q.tokens / ((double)q.base.gbs * (double)q.base.seq);
    double train_s = fast.iteration_s * its;
    q.deadline_s = 0.5 * train_s;         /* 2 x over */
    q.budget_usd = 1e12;                  /* met by all */
    search_answer a;
    const search_miss_report *r = explain(&q, &a);
    if (!r) return;
    TP_CHECK_INT(r->binding, SEARCH_LIMIT_DEADLINE);
    const search_figures *f = &r->nearest;
    TP_CHECK_REL(f->value[SEARCH_LIMIT_DEADLINE], train_s, 1e-9);
    TP_CHECK(f->value[SEARCH_LIMIT_BUDGET_USD] <= f->limit[SEARCH_LIMIT_BUDGET_USD]);
    /* twice over the deadline: fp8 alone cannot halve the time, more
     * GPUs can (x4 = 64 H100s) */
    TP_CHECK(find(r, SEARCH_LEVER_PRICE) == NULL); /* no dollar miss */
    const search_lever *lg = find(r, SEARCH_LEVER_GPUS);
    TP_CHECK(lg != NULL && lg->value > 16);
    levers_fit(r);
    search_answer_free(&a);
    /* now the budget binds harder than the deadline */
    q.budget_usd = 0.25 * fast.cost_usd * its;
    r = explain(&q, &a);
    if (r) TP_CHECK_INT(r->binding, SEARCH_LIMIT_BUDGET_USD);
    search_answer_free(&a);
}

/* Nothing fits the memory: GPT-3 175B on 4 and 8 A100 40GB. */
static void test_memory(void)
{
    static const int64_t gpus[] = {4, 8};
    search_request q = request(model("gpt3-175b"), sys_for(0, model("gpt3-175b")), gpus, 2);
    search_answer a;
    const search_miss_report *r = explain(&q, &a);
    if (!r) return;
    TP_CHECK_INT(r->binding, SEARCH_LIMIT_MEMORY);
    TP_CHECK(!r->memory_fits);
    TP_CHECK(r->nearest.value[SEARCH_LIMIT_MEMORY] == a.near_memory.value);
    TP_CHECK(r->nearest.limit[SEARCH_LIMIT_MEMORY] == a.near_memory.limit);
    TP_CHECK(r->nearest.value[SEARCH_LIMIT_MEMORY]
             > r->nearest.limit[SEARCH_LIMIT_MEMORY]);
    /* A100: no fp8 lever; no tokens or price for memory */
    TP_CHECK(find(r, SEARCH_LEVER_PRECISION) == NULL);
    TP_CHECK(find(r, SEARCH_LEVER_TOKENS) == NULL);
    TP_CHECK(find(r, SEARCH_LEVER_PRICE) == NULL);
    const search_lever *lg = find(r, SEARCH_LEVER_GPUS);
    TP_CHECK(lg != NULL && lg->value > 8);
    if (lg) {
        int64_t g = (int64_t)lg->value;
        search_request t = q;
        t.gpus = &g;
        t.n_gpus = 1;
        TP_CHECK(admits(t, NULL));
    }
    levers_fit(r);
    search_answer_free(&a);
}

/* Recomputation pinned out and the savers off: the levers that turn
 * them back on, where they fit (Llama 3 8B at 8k on two H100s: the
 * savers' bf16 moments fit, full recomputation alone does not). */
static void test_memory_levers(void)
{
    static const int64_t two[] = {2};
    search_request q = request(model("llama3-8b"), sys_for(1, model("llama3-8b")), two, 1);
    q.base.seq = 8192;
    q.base.gbs = 8;
    q.savers = 0;
    search_system ys = *q.systems;
    space_grid_fix(&ys.grid, SPACE_DIM_RECOMPUTE, SPACE_RECOMPUTE_NONE);
    q.systems = &ys;
    search_answer a;
    tp_err e = {0};
    TP_CHECK_INT(search_run(&q, &a, &e), TP_OK);
    if (a.n_ranked > 0) { /* the premise: nothing fits */
        TP_CHECK(0);
        search_answer_free(&a);
        return;
    }
    TP_CHECK_INT(search_explain_miss(&q, &a, &e), TP_OK);
    const search_miss_report *r = a.miss;
    TP_CHECK(r != NULL);
    if (!r) return;
    TP_CHECK_INT(r->binding, SEARCH_LIMIT_MEMORY);
    levers_fit(r);
    /* each lever reported is the search with it applied by hand */
    const search_lever *lr = find(r, SEARCH_LEVER_RECOMPUTE);
    const search_lever *ls = find(r, SEARCH_LEVER_SAVERS);
    TP_CHECK(ls != NULL);
    if (lr) {
        TP_CHECK_INT((int)lr->value, SPACE_RECOMPUTE_FULL);
        search_system y2 = *sys_for(1, model("llama3-8b"));
        space_grid_fix(&y2.grid, SPACE_DIM_RECOMPUTE, SPACE_RECOMPUTE_FULL);
        search_request t = q;
        t.systems = &y2;
        TP_CHECK(admits(t, NULL));
    }
    if (ls) {
        TP_CHECK((int)ls->value != SEARCH_SAVER_NONE);
        search_request t = q;
        t.savers = 1;
        TP_CHECK(admits(t, NULL));
    }
    search_answer_free(&a);
}

/* Admitted: nothing to explain. */
static void test_admitted(void)
{
    static const int64_t gpus[] = {8};
    search_request q = request(model("llama3-8b"), sys_for(1, model("llama3-8b")), gpus, 1);
    search_answer a;
    tp_err e = {0};
    TP_CHECK_INT(search_run(&q, &a, &e), TP_OK);
    TP_CHECK(a.n_ranked > 0);
    TP_CHECK_INT(search_explain_miss(&q, &a, &e), TP_OK);
    TP_CHECK(a.miss == NULL);
    search_answer_free(&a);
}

/* The same report at any thread count. */
static void test_threads(void)
{
#ifdef _OPENMP
    static const int64_t gpus[] = {8, 16};
    search_request q = request(model("llama3-8b"), sys_for(1, model("llama3-8b")), gpus, 2);
    q.tokens = 2e10;
    q.budget_usd = 1000;
    q.deadline_s = 86400;
    static const int threads[3] = {1, 2, 4};
    search_miss_report rep[3];
    int saved = omp_get_max_threads();
    for (int i = 0; i < 3; i++) {
        omp_set_num_threads(threads[i]);
        search_answer a;
        const search_miss_report *r = explain(&q, &a);
        memset(&rep[i], 0, sizeof rep[i]);
        if (r) rep[i] = *r;
        search_answer_free(&a);
    }
    omp_set_num_threads(saved);
    for (int i = 1; i < 3; i++) {
        TP_CHECK_INT(rep[i].binding, rep[0].binding);
        TP_CHECK_INT(rep[i].n_levers, rep[0].n_levers);
        TP_CHECK_INT(rep[i].searches, rep[0].searches);
        TP_CHECK(rep[i].nearest.gpus == rep[0].nearest.gpus);
        TP_CHECK(memcmp(rep[i].nearest.value, rep[0].nearest.value,
                        sizeof rep[0].nearest.value) == 0);
        for (int k = 0; k < rep[0].n_levers && k < rep[i].n_levers; k++) {
            TP_CHECK_INT(rep[i].levers[k].kind, rep[0].levers[k].kind);
            TP_CHECK(rep[i].levers[k].value == rep[0].levers[k].value);
            TP_CHECK(rep[i].levers[k].best.iteration_s
                     == rep[0].levers[k].best.iteration_s);
        }
    }
#endif
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_miss HWDB_DIR\n");
        return 2;
    }
    const char *dirs[] = {argv[1]};
    tp_err e = {0};
    db = hw_db_open_dirs(dirs, 1, &e);
    if (!db) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    for (int i = 0; i < NSYS; i++) {
        const hw_system *y = hw_find_system(db, sys_names[i], &e);
        if (!y) {
            fprintf(stderr, "%s\n", e.msg);
            return 1;
        }
        ops[i] = est_models_open(y->gpu, 0, &e);
        comm[i] = ops[i] ? est_comm_open(y, &e) : NULL;
        if (!comm[i]) {
            fprintf(stderr, "%s\n", e.msg);
            return 1;
        }
        memset(&systems[i], 0, sizeof systems[i]);
        systems[i].ctx = (est_ctx){y, y->gpu, ops[i], comm[i], 0, 0, NULL};
        systems[i].price_usd_per_gpu_hour = y->price_usd_per_gpu_hour;
    }
    TP_RUN(test_floor3);
    TP_RUN(test_budget);
    TP_RUN(test_two_limits);
    TP_RUN(test_memory);
    TP_RUN(test_memory_levers);
    TP_RUN(test_admitted);
    TP_RUN(test_threads);
    for (int i = 0; i < NSYS; i++) {
        est_comm_free(comm[i]);
        est_models_free(ops[i]);
    }
    hw_db_free(db);
    return TP_TEST_EXIT();
}
