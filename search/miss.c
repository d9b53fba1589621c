/*
 * miss.c - when a search admits nothing: the nearest layout in figures a
 * user can act on (GiB, dollars, GPU-hours, days), the limit that binds,
 * and the levers that would make something fit, each checked by running
 * the search again with the lever applied (issue 31 item 2).
 *
 * The levers, in search_lever_kind order:
 *  - precision: fp8 on the systems whose GPU has it (est_precision_check);
 *  - GPUs: one count beyond the range searched, nearest first (x2, /2,
 *    x4, /4, x8, /8 of its ends; below only for a budget, since fewer
 *    GPUs never hold more of a model);
 *  - recomputation: full recomputation where --fix left it out (memory);
 *  - memory savers: offloading, bf16 moments, fp8 parameters where they
 *    were off (memory);
 *  - tokens: the most that fit, from the nearest layout's largest ratio
 *    to its limits (every train figure is linear in the tokens), rounded
 *    down to 3 significant figures;
 *  - price: the highest price per GPU-hour that fits the dollar budget,
 *    from the fewest GPU-hours that meet the other limits (a search by
 *    cost at $1 per GPU-hour), rounded down likewise.
 * Only levers whose search admits a layout are kept, with that search's
 * #1. What it does not do: combine levers, or try another GPU or system
 * (the user lists systems; `hw list` has the others).
 *
 * Cost: nothing on a search that admits something; on a miss, one search
 * per lever tried (top 1, pruned, the nearest misses not made exact:
 * search_request.rough_misses), at most 10.
 */
#include "search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const search_limit_names[SEARCH_LIMIT_COUNT] = {
    [SEARCH_LIMIT_MEMORY] = "memory",
    [SEARCH_LIMIT_BUDGET_USD] = "budget_usd",
    [SEARCH_LIMIT_GPU_HOURS] = "budget_gpu_hours",
    [SEARCH_LIMIT_DEADLINE] = "deadline",
};
_Static_assert(sizeof search_limit_names / sizeof search_limit_names[0]
                   == SEARCH_LIMIT_COUNT,
               "search_limit_names names every limit");

const char *const search_limit_units[SEARCH_LIMIT_COUNT] = {
    [SEARCH_LIMIT_MEMORY] = "bytes",
    [SEARCH_LIMIT_BUDGET_USD] = "usd",
    [SEARCH_LIMIT_GPU_HOURS] = "gpu_hours",
    [SEARCH_LIMIT_DEADLINE] = "s",
};
_Static_assert(sizeof search_limit_units / sizeof search_limit_units[0]
                   == SEARCH_LIMIT_COUNT,
               "search_limit_units gives every limit a unit");

const char *const search_lever_names[SEARCH_LEVER_COUNT] = {
    [SEARCH_LEVER_PRECISION] = "precision",
    [SEARCH_LEVER_GPUS] = "gpus",
    [SEARCH_LEVER_RECOMPUTE] = "recompute",
    [SEARCH_LEVER_SAVERS] = "memory_savers",
    [SEARCH_LEVER_TOKENS] = "tokens",
    [SEARCH_LEVER_PRICE] = "price",
};
_Static_assert(sizeof search_lever_names / sizeof search_lever_names[0]
                   == SEARCH_LEVER_COUNT,
               "search_lever_names names every lever");

/* GPU counts tried beyond each end of the range: the end times or over
 * 2^1 .. 2^GPU_STEPS. */
#define GPU_STEPS 3
/* The lowest price per GPU-hour a lever suggests: a cent. */
#define PRICE_MIN_USD 0.01
/* The largest GPU count a lever suggests (the option's own range). */
#define GPU_COUNT_MAX 10000000

double search_floor3(double v)
{
    if (!(v > 0) || !isfinite(v)) return 0;
    double scale = pow(10, floor(log10(v)) - 2);
    /* 1e-9: 1.5e12 / 1e10 may come out 149.99999999999997 */
    return floor(v / scale + 1e-9) * scale;
}

/* l of system sys at gpus GPUs against q's limits. */
static void figures_of(const search_request *q, int sys, int64_t gpus,
                       const space_layout *l, search_figures *f)
{
    const search_system *sy = &q->systems[sys];
    memset(f, 0, sizeof *f);
    f->layout = *l;
    f->sys = sys;
    f->gpus = gpus;
    est_result r;
    est_estimate(&sy->ctx, q->model, l, &r);
    f->iteration_s = r.iteration_s;
    f->value[SEARCH_LIMIT_MEMORY] = r.mem.total;
    f->limit[SEARCH_LIMIT_MEMORY] = search_memory_limit(q, sy, l);
    if (q->tokens > 0) {
        double its = q->tokens / ((double)q->base.gbs * (double)q->base.seq);
        double train_s = its * r.iteration_s;
        double gh = train_s * (double)gpus / 3600;
        f->value[SEARCH_LIMIT_DEADLINE] = train_s;
        f->value[SEARCH_LIMIT_GPU_HOURS] = gh;
        f->value[SEARCH_LIMIT_BUDGET_USD] = gh * sy->price_usd_per_gpu_hour;
    }
    f->limit[SEARCH_LIMIT_BUDGET_USD] = q->budget_usd;
    f->limit[SEARCH_LIMIT_GPU_HOURS] = q->budget_gpu_hours;
    f->limit[SEARCH_LIMIT_DEADLINE] = q->deadline_s;
}

/* The budget or deadline f exceeds by the largest ratio, and that ratio
 * (0 and SEARCH_LIMIT_MEMORY where q sets none). */
static double worst_ratio(const search_figures *f, search_limit *which)
{
    double worst = 0;
    *which = SEARCH_LIMIT_MEMORY;
    for (int k = SEARCH_LIMIT_BUDGET_USD; k < SEARCH_LIMIT_COUNT; k++) {
        if (!(f->limit[k] > 0)) continue;
        double r = f->value[k] / f->limit[k];
        if (r > worst) worst = r, *which = (search_limit)k;
    }
    return worst;
}

/* Runs q (top 1, pruned, rough misses) and, where it admits a layout,
 * fills lv->best with its #1 and returns 1. sys_of maps q's systems to
 * the caller's (NULL: the same). Counts the search in r. */
static int check(const search_request *q, const int *sys_of, search_lever *lv,
                 search_miss_report *r)
{
    search_request t = *q;
    t.top_k = 1;
    t.keep_points = 0;
    t.no_prune = 0;
    t.rough_misses = 1;
    search_answer a;
    tp_err e = {0};
    r->searches++;
    r->tried |= 1u << lv->kind;
    int ok = search_run(&t, &a, &e) == TP_OK && a.n_ranked > 0;
    if (ok) {
        space_layout l;
        search_point_layout(&t, &a.ranked[0], &l);
        figures_of(&t, a.ranked[0].sys, a.ranked[0].gpus, &l, &lv->best);
        if (sys_of) lv->best.sys = sys_of[lv->best.sys];
    }
    search_answer_free(&a);
    return ok;
}

static search_lever lever(search_lever_kind k, double value, unsigned systems)
{
    search_lever lv;
    memset(&lv, 0, sizeof lv);
    lv.kind = k;
    lv.value = value;
    lv.systems = systems;
    return lv;
}

static void keep(search_miss_report *r, const search_lever *lv)
{
    if (r->n_levers < SEARCH_LEVERS_MAX) r->levers[r->n_levers++] = *lv;
}

/* fp8 on the systems whose GPU has it. */
static void lever_precision(const search_request *q, search_miss_report *r)
{
    if (q->base.dtype != HW_BF16 && q->base.dtype != HW_FP16) return;
    space_layout b = q->base;
    b.dtype = HW_FP8;
    search_system *ys = tp_xmalloc((size_t)q->n_systems * sizeof *ys);
    int *sys_of = tp_xmalloc((size_t)q->n_systems * sizeof *sys_of);
    int n = 0;
    unsigned mask = 0;
    for (int i = 0; i < q->n_systems; i++) {
        char why[200];
        if (est_precision_check(q->systems[i].ctx.gpu, &b, why, sizeof why)
            != EST_FEASIBLE)
            continue;
        ys[n] = q->systems[i];
        sys_of[n++] = i;
        if (i < 32) mask |= 1u << i;
    }
    if (n > 0) {
        search_request t = *q;
        t.base = b;
        t.systems = ys;
        t.n_systems = n;
        search_lever lv = lever(SEARCH_LEVER_PRECISION, HW_FP8, mask);
        if (check(&t, sys_of, &lv, r)) keep(r, &lv);
    }
    free(sys_of);
    free(ys);
}

/* One GPU count beyond the range, the nearest that admits something:
 * above it, and below it where a budget binds. */
static void lever_gpus(const search_request *q, search_miss_report *r)
{
    int64_t lo = q->gpus[0], hi = q->gpus[q->n_gpus - 1];
    int below = r->binding == SEARCH_LIMIT_BUDGET_USD
                || r->binding == SEARCH_LIMIT_GPU_HOURS;
    for (int k = 1; k <= GPU_STEPS; k++) {
        for (int side = 0; side < 2; side++) {
            int64_t g = side == 0 ? hi << k : lo >> k;
            if (side == 1 && (!below || g < 1 || (g << k) != lo)) continue;
            if (side == 0 && g > GPU_COUNT_MAX) continue;
            search_request t = *q;
            t.gpus = &g;
            t.n_gpus = 1;
            search_lever lv = lever(SEARCH_LEVER_GPUS, (double)g, 0);
            if (check(&t, NULL, &lv, r)) {
                keep(r, &lv);
                return;
            }
        }
    }
}

/* Full recomputation where every system's grid leaves it out. */
static void lever_recompute(const search_request *q, search_miss_report *r)
{
    search_system *ys = tp_xmalloc((size_t)q->n_systems * sizeof *ys);
    int added = 0;
    for (int i = 0; i < q->n_systems; i++) {
        ys[i] = q->systems[i];
        space_grid *g = &ys[i].grid;
        int has = 0;
        for (int k = 0; k < g->n[SPACE_DIM_RECOMPUTE]; k++)
            has |= g->v[SPACE_DIM_RECOMPUTE][k] == SPACE_RECOMPUTE_FULL;
        if (!has && g->n[SPACE_DIM_RECOMPUTE] < SPACE_GRID_MAX) {
            g->v[SPACE_DIM_RECOMPUTE][g->n[SPACE_DIM_RECOMPUTE]++] =
                SPACE_RECOMPUTE_FULL;
            added = 1;
        }
    }
    if (added) {
        search_request t = *q;
        t.systems = ys;
        search_lever lv = lever(SEARCH_LEVER_RECOMPUTE, 0, 0);
        if (check(&t, NULL, &lv, r)) {
            lv.value = lv.best.layout.recompute;
            keep(r, &lv);
        }
    }
    free(ys);
}

/* The memory savers, where the request turned them off. */
static void lever_savers(const search_request *q, search_miss_report *r)
{
    if (q->savers) return;
    search_request t = *q;
    t.savers = 1;
    search_lever lv = lever(SEARCH_LEVER_SAVERS, 0, 0);
    if (!check(&t, NULL, &lv, r)) return;
    /* which saver the #1 relies on: the one its layout carries */
    space_layout l = lv.best.layout;
    lv.value = SEARCH_SAVER_NONE;
    if (l.fp8_params && !q->base.fp8_params) lv.value = SEARCH_SAVER_FP8_PARAMS;
    else if (l.act_offload_layers > 0) lv.value = SEARCH_SAVER_ACT_OFFLOAD;
    else if (l.opt_offload > 0) lv.value = SEARCH_SAVER_OPT_OFFLOAD;
    else if (l.pa_optimizer && !q->base.pa_optimizer)
        lv.value = SEARCH_SAVER_PA_BF16;
    keep(r, &lv);
}

/* The most tokens that fit: every train figure is linear in them. */
static void lever_tokens(const search_request *q, search_miss_report *r)
{
    search_limit which;
    double ratio = worst_ratio(&r->nearest, &which);
    if (!(ratio > 1) || !isfinite(ratio)) return;
    double t = floor(search_floor3(q->tokens / ratio));
    if (!(t >= 1)) return;
    search_request qt = *q;
    qt.tokens = t;
    search_lever lv = lever(SEARCH_LEVER_TOKENS, t, 0);
    if (check(&qt, NULL, &lv, r)) {
        keep(r, &lv);
        return;
    }
    /* t can sit exactly on the limit (a dollar budget 10 % under the
     * nearest layout's cost gives tokens x 0.9 to 3 figures), where the
     * figures' rounding decides: the next 3-figure value down then. */
    t = floor(search_floor3(t * (1 - 2e-3)));
    if (!(t >= 1)) return;
    qt.tokens = t;
    lv = lever(SEARCH_LEVER_TOKENS, t, 0);
    if (check(&qt, NULL, &lv, r)) keep(r, &lv);
}

/* The highest price per GPU-hour that fits the dollar budget: the fewest
 * GPU-hours that meet the other limits, by a search of cost at $1 per
 * GPU-hour without the dollar budget, then checked at that price. */
static void lever_price(const search_request *q, search_miss_report *r)
{
    if (!(q->budget_usd > 0) || !(r->nearest.value[SEARCH_LIMIT_BUDGET_USD]
                                  > q->budget_usd))
        return;
    search_system *ys = tp_xmalloc((size_t)q->n_systems * sizeof *ys);
    double top = 0;
    for (int i = 0; i < q->n_systems; i++) {
        ys[i] = q->systems[i];
        ys[i].price_usd_per_gpu_hour = 1;
        if (q->systems[i].price_usd_per_gpu_hour > top)
            top = q->systems[i].price_usd_per_gpu_hour;
    }
    search_request t = *q;
    t.systems = ys;
    t.budget_usd = 0;
    t.objective = SEARCH_BY_COST;
    search_lever lv = lever(SEARCH_LEVER_PRICE, 0, 0);
    if (check(&t, NULL, &lv, r)) {
        double gh = lv.best.value[SEARCH_LIMIT_GPU_HOURS];
        double p = search_floor3(q->budget_usd / gh);
        /* a cut: at or above every price asked for, the price was not
         * what broke the budget; below a cent per GPU-hour, no way out */
        if (p >= PRICE_MIN_USD && p < top) {
            for (int i = 0; i < q->n_systems; i++)
                ys[i].price_usd_per_gpu_hour = p;
            t = *q;
            t.systems = ys;
            lv.value = p;
            if (check(&t, NULL, &lv, r)) keep(r, &lv);
        }
    }
    free(ys);
}

int search_explain_miss(const search_request *q, search_answer *a, tp_err *e)
{
    free(a->miss);
    a->miss = NULL;
    if (!q->model || q->n_systems < 1 || !q->systems || q->n_gpus < 1
        || q->top_k < 1)
        return tp_errf(e, TP_EUSAGE,
                       "search: needs a model, at least one system, one GPU "
                       "count and top_k >= 1");
    if (a->n_ranked > 0 || (!a->near_memory.have && !a->near_budget.have))
        return TP_OK;
    search_miss_report *r = tp_xcalloc(1, sizeof *r);
    const search_near *nr = a->near_budget.have ? &a->near_budget
                                                : &a->near_memory;
    search_point p = {0, 0, 0, nr->gpus, nr->idx, nr->sys, nr->saver,
                      nr->saver_n, 0, 0};
    space_layout l;
    search_point_layout(q, &p, &l);
    figures_of(q, nr->sys, nr->gpus, &l, &r->nearest);
    r->memory_fits = a->near_budget.have;
    if (a->near_budget.have) {
        worst_ratio(&r->nearest, &r->binding);
    } else {
        /* the search's own figures: what it compared */
        r->binding = SEARCH_LIMIT_MEMORY;
        r->nearest.value[SEARCH_LIMIT_MEMORY] = nr->value;
        r->nearest.limit[SEARCH_LIMIT_MEMORY] = nr->limit;
    }
    lever_precision(q, r);
    lever_gpus(q, r);
    if (r->binding == SEARCH_LIMIT_MEMORY) {
        lever_recompute(q, r);
        lever_savers(q, r);
    } else {
        lever_tokens(q, r);
        lever_price(q, r);
    }
    a->miss = r;
    return TP_OK;
}
