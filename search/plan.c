/*
 * plan.c - the search: every layout of a model on one or more systems at
 * each GPU count asked for, rejected by the rules of space_grid_check,
 * pruned by the lower bounds of estimator/bound.c, estimated in parallel,
 * ranked (top-k) and reduced to the Pareto front of time against cost.
 *
 *  1. Per (system, GPU count), in parallel (scan.c): scan the grid's layout
 *     numbers in order. A rule that breaks for one number breaks for the
 *     whole block of numbers that share the digits it (and every rule
 *     checked before it) reads, so the block is counted at once and
 *     skipped: most of a large grid is rejected in blocks. Valid layouts
 *     whose memory floor exceeds the memory allowed, or whose time floor
 *     already breaks a budget, are pruned; the rest are kept with their
 *     time floor (a list of survivors, never of all layouts).
 *  2. Sort the survivors of every system and count by (time floor,
 *     system, GPUs, number): likely winners first, so the bounds below
 *     tighten early.
 *  3. Take them in chunks (CHUNK_MIN doubling to CHUNK_MAX). The thresholds (the k-th best key,
 *     the front so far) are fixed for a chunk; within it the threads (one
 *     parallel region for all chunks, static schedule, no allocation)
 *     estimate every layout whose floor could still enter the top-k or
 *     the front, then one thread merges the chunk's outcomes in order.
 *     What is pruned and what is kept depends only on the inputs, never
 *     on the thread count, so the answer and the counts are the same at
 *     any thread count.
 *
 * Each estimate of step 3 may try variants of its layout (variants.c):
 * memory savers where it does not fit, CUDA graphs where the host binds,
 * torchtitan's other pipeline schedules.
 *
 * Memory: the survivors of step 1 (32 bytes each), the ranked and the
 * front; every admitted layout only where search_request.keep_points
 * asks (--svg). Without pruning the units are taken a few at a time,
 * steps 1 to 3 for each batch, so the survivors held are a batch's.
 *
 * Branch and bound is exact: a layout is pruned only when its time floor
 * (<= its estimate) ranks strictly after the k-th best found and a point
 * already found strictly dominates the floor's (time, cost).
 *
 * Operator and collective times, a whole layer's time, the end stages'
 * extras and what a layout's pipeline ranks share for its memory are
 * memoized per thread inside the estimator (iter_ops.c, iter_memo.c,
 * mem_memo.c), across the layouts of a search that share them
 * (bench/results/search_speed.md).
 */
#include "search_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Chunks grow from CHUNK_MIN to CHUNK_MAX layouts, doubling: small at
 * first, while the thresholds are still loose and change fast, then
 * large, so the threads meet at a barrier rarely (a waiting thread spins,
 * which costs a working one its core where cores are shared). */
#define CHUNK_MIN 128
#define CHUNK_MAX 4096

/* Without pruning, units (system, GPU count) are taken this many at a
 * time, phase 1 then phase 2, so the survivors held are one batch's
 * (search_run); a number of its own, not of the threads, so the order of
 * the kept points (--svg) is the same at any thread count. */
#define UNITS_PER_BATCH 8

const char *const search_objective_names[SEARCH_OBJECTIVE_COUNT] = {
    [SEARCH_BY_TIME] = "time",
    [SEARCH_BY_THROUGHPUT] = "throughput",
    [SEARCH_BY_TRAIN_TIME] = "time-to-train",
    [SEARCH_BY_COST] = "cost",
};
_Static_assert(sizeof search_objective_names / sizeof search_objective_names[0]
                   == SEARCH_OBJECTIVE_COUNT,
               "search_objective_names names every objective");

const char *const search_prune_names[SEARCH_PRUNE_COUNT] = {
    [SEARCH_PRUNE_MEMORY] = "memory_bound",
    [SEARCH_PRUNE_BUDGET] = "budget_bound",
    [SEARCH_PRUNE_TIME] = "time_bound",
};
_Static_assert(sizeof search_prune_names / sizeof search_prune_names[0]
                   == SEARCH_PRUNE_COUNT,
               "search_prune_names names every search_prune");

const char *const search_miss_names[SEARCH_MISS_COUNT] = {
    [SEARCH_MISS_BUDGET_USD] = "over_budget_usd",
    [SEARCH_MISS_BUDGET_GPU_HOURS] = "over_budget_gpu_hours",
    [SEARCH_MISS_DEADLINE] = "over_deadline",
};
_Static_assert(sizeof search_miss_names / sizeof search_miss_names[0]
                   == SEARCH_MISS_COUNT,
               "search_miss_names names every search_miss");

int search_point_cmp(const search_point *a, const search_point *b,
                     search_objective obj)
{
    double ka = obj == SEARCH_BY_COST ? a->cost_usd : a->iteration_s;
    double kb = obj == SEARCH_BY_COST ? b->cost_usd : b->iteration_s;
    if (ka != kb) return ka < kb ? -1 : 1;
    double sa = obj == SEARCH_BY_COST ? a->iteration_s : a->cost_usd;
    double sb = obj == SEARCH_BY_COST ? b->iteration_s : b->cost_usd;
    if (sa != sb) return sa < sb ? -1 : 1;
    if (a->sys != b->sys) return a->sys < b->sys ? -1 : 1;
    if (a->gpus != b->gpus) return a->gpus < b->gpus ? -1 : 1;
    if (a->idx != b->idx) return a->idx < b->idx ? -1 : 1;
    return 0;
}

void search_point_layout(const search_request *q, const search_point *p,
                         space_layout *l)
{
    space_grid_layout(&q->systems[p->sys].grid, p->idx, p->gpus, &q->base, l);
    if (p->saver != SEARCH_SAVER_NONE)
        search_saver_apply((search_saver)p->saver, p->saver_n, q->model, l);
    if (p->graph) search_graph_apply(q->model, l);
    if (p->schedule) search_schedule_apply(p->schedule, l);
}

void search_point_estimate(const search_request *q, const search_point *p,
                           est_result *r)
{
    space_layout l;
    search_point_layout(q, p, &l);
    est_estimate(&q->systems[p->sys].ctx, q->model, &l, r);
}

void search_answer_free(search_answer *a)
{
    if (!a) return;
    free(a->ranked);
    free(a->front);
    free(a->points);
    free(a->miss);
    memset(a, 0, sizeof *a);
}

/* ---- the state merged between chunks -------------------------------- */

/* 1 where a comes before b: (time floor, system, GPUs, number), a total
 * order (no two candidates share system, GPUs and number). */
static int cand_before(const cand *a, const cand *b)
{
    if (a->floor_s != b->floor_s) return a->floor_s < b->floor_s;
    if (a->sys != b->sys) return a->sys < b->sys;
    if (a->gpus != b->gpus) return a->gpus < b->gpus;
    return a->idx < b->idx;
}

/* Sorts c[n] by cand_before: a merge sort with the comparison inlined
 * (qsort's call per comparison was a twentieth of a sweep's time);
 * tmp holds n. The order is total, so any correct sort gives it. */
static void cand_sort(cand *c, cand *tmp, int64_t n)
{
    enum { RUN = 16 };
    for (int64_t lo = 0; lo < n; lo += RUN) { /* insertion sort of runs */
        int64_t hi = lo + RUN < n ? lo + RUN : n;
        for (int64_t i = lo + 1; i < hi; i++) {
            cand v = c[i];
            int64_t j = i;
            while (j > lo && cand_before(&v, &c[j - 1])) {
                c[j] = c[j - 1];
                j--;
            }
            c[j] = v;
        }
    }
    cand *src = c, *dst = tmp;
    for (int64_t w = RUN; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n;
            int64_t hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = cand_before(&src[j], &src[i]) ? src[j++] : src[i++];
            while (i < mid) dst[k++] = src[i++];
            while (j < hi) dst[k++] = src[j++];
        }
        cand *sw = src;
        src = dst;
        dst = sw;
    }
    if (src != c) memcpy(c, src, (size_t)n * sizeof *c);
}

/* Merges a[na] and b[nb], each sorted by cand_before, into out[na + nb]. */
static void cand_merge(const cand *a, int64_t na, const cand *b, int64_t nb,
                       cand *out)
{
    int64_t i = 0, j = 0, k = 0;
    while (i < na && j < nb)
        out[k++] = cand_before(&b[j], &a[i]) ? b[j++] : a[i++];
    while (i < na) out[k++] = a[i++];
    while (j < nb) out[k++] = b[j++];
}

/* What one estimate left for the merge. */
enum { OUT_PRUNED, OUT_ADMITTED, OUT_INFEASIBLE, OUT_MISSED };
typedef struct outcome {
    int kind;
    int code;          /* est_reason or search_miss */
    double iteration_s, mem_bytes, mem_limit, excess; /* excess: ratio to the limit */
    int saver;         /* search_saver the estimate relies on */
    int64_t saver_n;
    int graph;         /* 1: faster with CUDA graphs (search_graph_apply) */
    int schedule;      /* the schedule it is fastest with; 0: base's */
} outcome;

typedef struct state {
    const search_request *q;
    search_answer *a;
    int64_t cap_points;
    search_point *front;  /* the front so far, ascending cost */
    int n_front, cap_front;
} state;

/* 1 when (t, cost) is strictly dominated by a point of the front so far. */
static int front_dominates(const state *s, double t, double cost)
{
    int lo = 0, hi = s->n_front; /* first index with cost > cost */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (s->front[mid].cost_usd <= cost) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return 0;
    const search_point *f = &s->front[lo - 1]; /* least time within cost */
    return f->iteration_s < t || (f->iteration_s == t && f->cost_usd < cost);
}

/* The exact front of every point inserted, in any order: ascending cost,
 * each strictly faster than every cheaper one; of points equal in time
 * and cost, the first in the total order (search_point_cmp), so the front
 * does not depend on the order of evaluation. */
static void front_insert(state *s, const search_point *p)
{
    search_point *f = s->front;
    /* Weakly dominated (or equal): the front does not change, but for
     * which of two equal points stands in it. */
    for (int i = 0; i < s->n_front && f[i].cost_usd <= p->cost_usd; i++)
        if (f[i].iteration_s <= p->iteration_s) {
            if (f[i].cost_usd == p->cost_usd
                && f[i].iteration_s == p->iteration_s
                && search_point_cmp(p, &f[i], SEARCH_BY_COST) < 0)
                f[i] = *p;
            return;
        }
    if (s->n_front == s->cap_front) {
        s->cap_front = s->cap_front ? 2 * s->cap_front : 64;
        s->front = f = tp_xrealloc(f, (size_t)s->cap_front * sizeof *f);
    }
    /* Drop what p dominates (no cheaper, no faster), put p in cost order. */
    int w = 0;
    for (int i = 0; i < s->n_front; i++) {
        if (f[i].cost_usd >= p->cost_usd && f[i].iteration_s >= p->iteration_s)
            continue;
        f[w++] = f[i];
    }
    s->n_front = w;
    int pos = 0;
    while (pos < s->n_front && f[pos].cost_usd <= p->cost_usd) pos++;
    memmove(&f[pos + 1], &f[pos], (size_t)(s->n_front - pos) * sizeof *f);
    f[pos] = *p;
    s->n_front++;
}

static void topk_insert(state *s, const search_point *p)
{
    search_answer *a = s->a;
    int k = s->q->top_k;
    int n = a->n_ranked;
    if (n == k && search_point_cmp(p, &a->ranked[n - 1], s->q->objective) >= 0)
        return;
    int i = n < k ? n : k - 1;
    while (i > 0 && search_point_cmp(p, &a->ranked[i - 1], s->q->objective) < 0) {
        a->ranked[i] = a->ranked[i - 1];
        i--;
    }
    a->ranked[i] = *p;
    if (n < k) a->n_ranked++;
}

/* Keeps the smaller miss; ties by (system, GPUs, layout number), so the
 * merge of per-thread records does not depend on their order. */
void search_near_update(search_near *nr, int sys, int64_t gpus, int64_t idx,
                        double value, double limit, int from_bound, int saver,
                        int64_t saver_n)
{
    double miss = value - limit, old = nr->value - nr->limit;
    if (nr->have) {
        if (miss > old) return;
        if (miss == old
            && (sys > nr->sys || (sys == nr->sys && gpus > nr->gpus)
                || (sys == nr->sys && gpus == nr->gpus && idx >= nr->idx)))
            return;
    }
    nr->have = 1;
    nr->sys = sys, nr->gpus = gpus, nr->idx = idx;
    nr->value = value, nr->limit = limit, nr->from_bound = from_bound;
    nr->saver = saver, nr->saver_n = saver_n;
}

double search_memory_limit(const search_request *q,
                           const search_system *sy, const space_layout *l)
{
    double cap = sy->ctx.gpu->mem_bytes;
    if (q->max_memory_fraction > 0) return q->max_memory_fraction * cap;
    return cap / (1 + est_memory_margin(l));
}

/* Iterations to train the tokens asked for (0 without). */
static double iterations(const search_request *q)
{
    return q->tokens > 0
               ? q->tokens / ((double)q->base.gbs * (double)q->base.seq)
               : 0;
}

/* Ratio of a (time, GPUs) to the tightest budget; > 1 breaks one. Sets
 * *which to the constraint broken the most. */
double search_budget_ratio(const search_request *q, double iter_s,
                           int64_t gpus, double price, int *which)
{
    double its = iterations(q), worst = 0;
    *which = -1;
    if (its <= 0) return 0;
    double train_s = its * iter_s;
    double gh = train_s * (double)gpus / 3600;
    double r[SEARCH_MISS_COUNT] = {
        q->budget_usd > 0 ? gh * price / q->budget_usd : 0,
        q->budget_gpu_hours > 0 ? gh / q->budget_gpu_hours : 0,
        q->deadline_s > 0 ? train_s / q->deadline_s : 0};
    for (int i = 0; i < SEARCH_MISS_COUNT; i++)
        if (r[i] > worst) worst = r[i], *which = i;
    /* A limit near zero (--budget-usd 1e-300) overflows the ratio to
     * infinity, which JSON prints as null: the ratio is capped at
     * SEARCH_RATIO_MAX, read as "more than" (lib/cmd_search.c). */
    return fmin(worst, SEARCH_RATIO_MAX);
}

/* The pipeline size of layout number idx of g. */
static int64_t pp_of(const space_grid *g, int64_t idx)
{
    return g->v[SPACE_DIM_PP][space_grid_digit(g, idx, SPACE_DIM_PP)];
}

/* ---- phase 2: estimate in chunks, merge in order ------------------------ */

static void judge(const state *s, const cand *cd, int full,
                  const search_point *kth, outcome *o)
{
    const search_request *q = s->q;
    const search_system *sy = &q->systems[cd->sys];
    double price = sy->price_usd_per_gpu_hour;
    if (!q->no_prune && full) {
        double t = cd->floor_s;
        double cost = (double)cd->gpus * t * price / 3600;
        double key = q->objective == SEARCH_BY_COST ? cost : t;
        double kkey = q->objective == SEARCH_BY_COST ? kth->cost_usd
                                                     : kth->iteration_s;
        if (key > kkey && front_dominates(s, t, cost)) {
            o->kind = OUT_PRUNED;
            return;
        }
    }
    space_layout l;
    space_grid_layout(&sy->grid, cd->idx, cd->gpus, &q->base, &l);
    est_result r;
    double mem_limit = search_memory_limit(q, sy, &l);
    /* what does not fit is not timed: only its memory is read below; l
     * passed space_grid_check in phase 1 (scan.c), which holds
     * space_layout_check's rules */
    est_estimate_valid(&sy->ctx, q->model, &l, mem_limit, &r);
    o->saver = SEARCH_SAVER_NONE;
    o->saver_n = 0;
    o->graph = 0;
    o->schedule = 0;
    saver_miss sm = {0, SEARCH_SAVER_NONE, 0};
    if (q->savers
        && ((r.feasible && r.mem.total > mem_limit)
            || r.reason == EST_OUT_OF_MEMORY)
        && !space_layout_has_saver(&l)) {
        /* the last resort: kept only where a saver makes it fit */
        int sv = SEARCH_SAVER_NONE;
        int64_t n = 0;
        if (search_try_savers(q, sy, &l, mem_limit, &r, &sv, &n, &sm))
            o->saver = sv, o->saver_n = n;
    }
    o->iteration_s = r.iteration_s;
    o->mem_bytes = r.mem.total;
    /* out of memory with every saver: the nearest it came, and how */
    if (sm.peak > 0 && o->saver == SEARCH_SAVER_NONE
        && (r.feasible || r.reason == EST_OUT_OF_MEMORY)
        && sm.peak < r.mem.total)
        o->mem_bytes = sm.peak, o->saver = sm.saver, o->saver_n = sm.n;
    o->mem_limit = mem_limit;
    o->excess = 0;
    if (!r.feasible || r.mem.total > mem_limit) {
        o->kind = OUT_INFEASIBLE;
        o->code = r.feasible ? EST_OUT_OF_MEMORY : (int)r.reason;
        return;
    }
    /* the GPU waits on the host: CUDA graphs, where they are faster and
     * their memory pool still fits */
    if (q->graphs && r.time.host_s > 0) {
        space_layout g = r.layout;
        est_result rg;
        if (search_graph_apply(q->model, &g)) {
            est_estimate_within(&sy->ctx, q->model, &g, mem_limit, &rg);
            if (rg.feasible && rg.mem.total <= mem_limit
                && rg.iteration_s < r.iteration_s) {
                o->graph = 1;
                o->iteration_s = rg.iteration_s;
                o->mem_bytes = rg.mem.total;
                r = rg;
            }
        }
    }
    /* torchtitan's pipeline: PyTorch's other schedules, eager, where one
     * is faster and fits */
    if (q->schedules && r.layout.framework == SPACE_FW_TORCHTITAN
        && r.layout.pp > 1 && r.layout.pp_schedule == SPACE_PP_1F1B) {
        est_result best = r;
        for (int i = 0; i < SEARCH_SCHEDULES_TRIED; i++) {
            space_layout v = r.layout;
            est_result rv;
            if (!search_schedule_apply(search_schedules_tried[i], &v))
                continue;
            est_estimate_within(&sy->ctx, q->model, &v, mem_limit, &rv);
            if (rv.feasible && rv.mem.total <= mem_limit
                && rv.iteration_s < best.iteration_s) {
                best = rv;
                o->schedule = search_schedules_tried[i];
            }
        }
        if (o->schedule) {
            r = best;
            o->iteration_s = r.iteration_s;
            o->mem_bytes = r.mem.total;
        }
    }
    int which;
    double br = search_budget_ratio(q, r.iteration_s, cd->gpus, price, &which);
    if (br > 1) {
        o->kind = OUT_MISSED;
        o->code = which;
        o->excess = br;
        return;
    }
    o->kind = OUT_ADMITTED;
}

static void merge(state *s, const cand *cd, const outcome *o)
{
    const search_request *q = s->q;
    search_answer *a = s->a;
    search_stats *st = &a->stats;
    const search_system *sy = &q->systems[cd->sys];
    search_pp_stats *ps = search_pp_stats_of(st, pp_of(&sy->grid, cd->idx));
    if (o->kind == OUT_PRUNED) {
        st->pruned[SEARCH_PRUNE_TIME]++;
        ps->pruned[SEARCH_PRUNE_TIME]++;
        return;
    }
    st->estimated++;
    if (o->kind == OUT_INFEASIBLE) {
        st->infeasible[o->code]++;
        ps->infeasible[o->code]++;
        if (o->code == EST_OUT_OF_MEMORY)
            search_near_update(&a->near_memory, cd->sys, cd->gpus, cd->idx,
                               o->mem_bytes, o->mem_limit, 0, o->saver,
                               o->saver_n);
        return;
    }
    if (o->kind == OUT_MISSED) {
        st->missed[o->code]++;
        ps->missed++;
        search_near_update(&a->near_budget, cd->sys, cd->gpus, cd->idx,
                           o->excess, 1, 0, o->saver, o->saver_n);
        return;
    }
    st->admitted++;
    ps->admitted++;
    if (o->saver != SEARCH_SAVER_NONE) st->saved[o->saver]++;
    search_point p = {o->iteration_s,
                      (double)cd->gpus * o->iteration_s
                          * sy->price_usd_per_gpu_hour / 3600,
                      o->mem_bytes, cd->gpus, cd->idx, cd->sys,
                      o->saver, o->saver_n, o->graph, o->schedule};
    if (o->graph) st->graphed++;
    if (o->schedule) st->scheduled[o->schedule]++;
    if (q->keep_points) {
        if (a->n_points == s->cap_points) {
            s->cap_points = s->cap_points ? 2 * s->cap_points : 1024;
            a->points = tp_xrealloc(a->points,
                                    (size_t)s->cap_points * sizeof *a->points);
        }
        a->points[a->n_points++] = p;
    }
    topk_insert(s, &p);
    front_insert(s, &p);
}

static int max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

static int thread_num(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

int search_run(const search_request *q, search_answer *a, tp_err *e)
{
    memset(a, 0, sizeof *a);
    if (!q->model || q->n_systems < 1 || !q->systems || q->n_gpus < 1
        || q->top_k < 1)
        return tp_errf(e, TP_EUSAGE,
                       "search: needs a model, at least one system, one GPU "
                       "count and top_k >= 1");
    if (!(q->max_memory_fraction >= 0 && q->max_memory_fraction <= 1))
        return tp_errf(e, TP_EUSAGE,
                       "search: max_memory_fraction %g is not in [0, 1]",
                       q->max_memory_fraction);
    if ((q->budget_usd > 0 || q->budget_gpu_hours > 0 || q->deadline_s > 0)
        && !(q->tokens > 0))
        return tp_errf(e, TP_EUSAGE,
                       "search: a budget or deadline needs the tokens to "
                       "train");
    double t0 = 0;
#ifdef _OPENMP
    t0 = omp_get_wtime();
#endif
    int nt = max_threads();
    a->stats.threads = nt;
    /* The pipeline sizes of every grid, ascending, and what they leave
     * out (the report of what the search skipped). */
    {
        search_stats *st = &a->stats;
        for (int si = 0; si < q->n_systems; si++) {
            const space_grid *g = &q->systems[si].grid;
            for (int k = 0; k < g->n[SPACE_DIM_PP]; k++) {
                int64_t v = g->v[SPACE_DIM_PP][k];
                int at = 0;
                while (at < st->n_pp && st->pp[at].pp < v) at++;
                if ((at < st->n_pp && st->pp[at].pp == v)
                    || st->n_pp == SPACE_GRID_MAX)
                    continue;
                memmove(&st->pp[at + 1], &st->pp[at],
                        (size_t)(st->n_pp - at) * sizeof st->pp[0]);
                memset(&st->pp[at], 0, sizeof st->pp[0]);
                st->pp[at].pp = v;
                st->n_pp++;
            }
            if (g->pp_beyond > st->pp_beyond) st->pp_beyond = g->pp_beyond;
            if (g->vpp_beyond > st->vpp_beyond) st->vpp_beyond = g->vpp_beyond;
        }
    }
    a->ranked = tp_xcalloc((size_t)q->top_k, sizeof *a->ranked);

    /* The split verdicts' table: its size over the systems' grids. */
    verdicts vd = {1, 1, 1};
    for (int si = 0; si < q->n_systems; si++) {
        const space_grid *gr = &q->systems[si].grid;
        if (gr->n[SPACE_DIM_PP] > vd.np) vd.np = gr->n[SPACE_DIM_PP];
        if (gr->n[SPACE_DIM_VPP] > vd.nv) vd.nv = gr->n[SPACE_DIM_VPP];
        if (gr->n[SPACE_DIM_SPLIT] > vd.ns) vd.ns = gr->n[SPACE_DIM_SPLIT];
    }
    size_t verdict_n = (size_t)q->n_systems * (size_t)vd.np * (size_t)vd.nv
                       * (size_t)vd.ns;
    /* Units: (system, GPU count) pairs the system can host. */
    int64_t n_units = 0;
    int64_t (*units)[2] = tp_xmalloc((size_t)q->n_systems * (size_t)q->n_gpus
                                     * sizeof *units);
    for (int si = 0; si < q->n_systems; si++) {
        const hw_system *y = q->systems[si].ctx.sys;
        int64_t room = y->max_nodes > 0
                           ? (int64_t)y->max_nodes * y->gpus_per_node : 0;
        for (int gi = 0; gi < q->n_gpus; gi++) {
            int64_t mult = q->systems[si].gpus_multiple;
            if (mult > 1 && q->gpus[gi] % mult) continue; /* not whole nodes */
            if (room > 0 && q->gpus[gi] > room) {
                a->stats.gpu_counts_beyond++;
                continue;
            }
            units[n_units][0] = si;
            units[n_units][1] = q->gpus[gi];
            n_units++;
        }
    }

    /* Units in batches: phase 1 over a batch's units, then phase 2 over
     * its candidates. A pruned search is one batch, all candidates sorted
     * likely winners first so the bounds tighten early (its counts of
     * pruned layouts depend on that order). Without pruning the order
     * changes nothing (the ranked and the front are taken in a total
     * order, the counts are sums), so batches of a few units at a time
     * keep the memory to one batch's candidates, whatever the number of
     * layouts (issue 17: 34 million layouts held 2.2 GB). */
    int64_t batch = q->no_prune ? UNITS_PER_BATCH : n_units;
    if (batch < 1) batch = 1;
    int64_t example_key[SPACE_REJECT_COUNT];
    for (int r = 0; r < SPACE_REJECT_COUNT; r++) example_key[r] = INT64_MAX;
    state s = {q, a, 0, NULL, 0, 0};
    outcome *outs = tp_xmalloc(CHUNK_MAX * sizeof *outs);
    search_point kth = {0};
    int full = 0;
    for (int64_t u0 = 0; u0 < n_units; u0 += batch) {
        int64_t u1 = u0 + batch < n_units ? u0 + batch : n_units;
        /* Phase 1, in parallel over units; per-thread gathers merged by
         * sums and total-order minima, so the order units are taken in
         * changes nothing but the threads' balance: the largest GPU
         * counts (most valid layouts) first, the smallest last. */
        gather *g = tp_xcalloc((size_t)nt, sizeof *g);
        for (int i = 0; i < nt; i++) {
            g[i].verdict = tp_xcalloc(verdict_n, 1);
            g[i].st.n_pp = a->stats.n_pp;
            for (int k = 0; k < a->stats.n_pp; k++)
                g[i].st.pp[k].pp = a->stats.pp[k].pp;
        }
#pragma omp parallel num_threads(nt)
        {
            gather *t = &g[thread_num()];
#pragma omp for schedule(dynamic, 1) nowait
            for (int64_t k = u0; k < u1; k++) {
                int64_t u = u1 - 1 - (k - u0);
                search_scan_unit(q, (int)units[u][0], units[u][1], u, &vd, t);
            }
            /* Likely winners first (the bounds tighten early): each
             * thread sorts its own, merged below */
            cand *tmp = tp_xmalloc((size_t)(t->n > 0 ? t->n : 1) * sizeof *tmp);
            cand_sort(t->c, tmp, t->n);
            free(tmp);
        }
        int64_t n = 0;
        for (int i = 0; i < nt; i++) {
            const search_stats *ts = &g[i].st;
            search_stats *st = &a->stats;
            st->enumerated += ts->enumerated;
            st->valid += ts->valid;
            for (int r = 0; r < SPACE_REJECT_COUNT; r++) {
                st->rejected[r] += ts->rejected[r];
                if (ts->rejected[r] && g[i].example_key[r] < example_key[r]) {
                    example_key[r] = g[i].example_key[r];
                    memcpy(st->example[r], ts->example[r],
                           sizeof st->example[r]);
                }
            }
            for (int p = 0; p < SEARCH_PRUNE_COUNT; p++)
                st->pruned[p] += ts->pruned[p];
            for (int k = 0; k < SPACE_SPLIT_KIND_COUNT; k++)
                st->split_valid[k] += ts->split_valid[k];
            for (int k = 0; k < st->n_pp; k++) {
                search_pp_stats *d = &st->pp[k];
                const search_pp_stats *x = &ts->pp[k];
                d->valid += x->valid;
                for (int r = 0; r < SPACE_REJECT_COUNT; r++)
                    d->rejected[r] += x->rejected[r];
                for (int p = 0; p < SEARCH_PRUNE_COUNT; p++)
                    d->pruned[p] += x->pruned[p];
            }
            const search_near *nm = &g[i].near_memory, *nb = &g[i].near_budget;
            if (nm->have)
                search_near_update(&a->near_memory, nm->sys, nm->gpus,
                                   nm->idx, nm->value, nm->limit,
                                   nm->from_bound, nm->saver, nm->saver_n);
            if (nb->have)
                search_near_update(&a->near_budget, nb->sys, nb->gpus,
                                   nb->idx, nb->value, nb->limit,
                                   nb->from_bound, nb->saver, nb->saver_n);
            n += g[i].n;
        }
        /* The threads' sorted candidates merged one after the other: the
         * order is total, so it is the order of one sort of them all */
        cand *cands = tp_xmalloc((size_t)(n > 0 ? n : 1) * sizeof *cands);
        cand *tmp = tp_xmalloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
        n = 0;
        for (int i = 0; i < nt; i++) {
            cand_merge(cands, n, g[i].c, g[i].n, tmp);
            cand *sw = cands;
            cands = tmp;
            tmp = sw;
            n += g[i].n;
            free(g[i].c);
            free(g[i].verdict);
        }
        free(tmp);
        free(g);

        /* Phase 2: chunks estimated in parallel against the thresholds of
         * the chunks before (fixed within a chunk), merged in order by one
         * thread while the others wait at the barrier. */
#pragma omp parallel num_threads(nt)
        for (int64_t c0 = 0, size = CHUNK_MIN; c0 < n;
             c0 += size, size = size < CHUNK_MAX ? 2 * size : CHUNK_MAX) {
            int64_t c1 = c0 + size < n ? c0 + size : n;
            /* dynamic: a chunk's layouts, sorted by time floor, cost
             * unalike (one that does not fit is not timed), and halves
             * left one thread twice the other's work at 2 threads */
#pragma omp for schedule(dynamic, 16)
            for (int64_t j = c0; j < c1; j++)
                judge(&s, &cands[j], full, &kth, &outs[j - c0]);
#pragma omp single
            {
                for (int64_t j = c0; j < c1; j++)
                    merge(&s, &cands[j], &outs[j - c0]);
                full = a->n_ranked == q->top_k;
                if (full) kth = a->ranked[q->top_k - 1];
            }
        }
        free(cands);
    }
    free(outs);
    free(units);
    /* The front kept as the search went is the exact one (front_insert). */
    a->front = s.front;
    a->n_front = s.n_front;
    /* With nothing admitted the nearest misses are the answer, and one
     * that stands on a pruning bound may be far below what its layout
     * needs (the time floor assumes the GPU's peak): the misses are then
     * taken from the search without pruning, every valid layout
     * estimated, so they are exact; the counts stay this search's. */
    if (a->stats.admitted == 0 && !q->no_prune && !q->rough_misses
        && ((a->near_memory.have && a->near_memory.from_bound)
            || (a->near_budget.have && a->near_budget.from_bound))) {
        search_request q2 = *q;
        q2.no_prune = 1;
        q2.top_k = 1;
        search_answer a2;
        tp_err e2 = {0};
        if (search_run(&q2, &a2, &e2) == TP_OK) {
            a->near_memory = a2.near_memory;
            a->near_budget = a2.near_budget;
        }
        search_answer_free(&a2);
    }
#ifdef _OPENMP
    a->stats.elapsed_s = omp_get_wtime() - t0;
#else
    (void)t0;
#endif
    return TP_OK;
}
