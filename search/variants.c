/*
 * variants.c - the variants of a layout the search tries beside the
 * grid's own: the memory savers, the last resort of a layout that does
 * not fit (search_saver_apply, and search_try_savers, which sizes each
 * and keeps the fastest that fits); CUDA graphs where the host binds
 * (search_graph_apply); torchtitan's other pipeline schedules
 * (search_schedule_apply). plan.c calls them on the layouts it estimates.
 *
 * Not here: whether a variant is faster or fits (est_estimate says;
 * plan.c compares).
 */
#include "search_int.h"

const int search_schedules_tried[SEARCH_SCHEDULES_TRIED] = {
    SPACE_PP_ZB1P, SPACE_PP_ZBV, SPACE_PP_DUALPIPEV};

int search_schedule_apply(int s, space_layout *l)
{
    if (l->framework != SPACE_FW_TORCHTITAN || l->pp < 2
        || l->pp_schedule != SPACE_PP_1F1B || s == SPACE_PP_1F1B
        || (unsigned)s >= SPACE_PP_SCHEDULE_COUNT)
        return 0;
    l->pp_schedule = s;
    l->eager = 1;
    return 1;
}

int search_graph_apply(const space_model *m, space_layout *l)
{
    if (l->framework != SPACE_FW_MEGATRON_CORE || l->cuda_graph
        || l->recompute == SPACE_RECOMPUTE_FULL || l->act_offload_layers > 0)
        return 0;
    if (l->recompute == SPACE_RECOMPUTE_SELECTIVE
        && (m->attn_dropout != 0 || m->hidden_dropout != 0))
        return 0;
    l->cuda_graph = SPACE_CG_TE;
    /* a dropless MoE's experts stay eager: the whole layer only where
     * every layer is dense */
    l->cuda_graph_modules = m->num_experts > 0
                                ? SPACE_CGM_ATTN | SPACE_CGM_MOE_ROUTER
                                      | SPACE_CGM_MOE_PREPROCESS
                                : 0;
    return 1;
}

/* ---- memory savers, the last resort of a layout that does not fit ----- */

const char *const search_saver_names[SEARCH_SAVER_COUNT] = {
    [SEARCH_SAVER_NONE] = "none",
    [SEARCH_SAVER_PA_BF16] = "precision_aware_bf16_moments",
    [SEARCH_SAVER_ACT_OFFLOAD] = "activation_offload",
    [SEARCH_SAVER_OPT_OFFLOAD] = "optimizer_offload",
    [SEARCH_SAVER_FP8_PARAMS] = "fp8_param_gather",
};
_Static_assert(sizeof search_saver_names / sizeof search_saver_names[0]
                   == SEARCH_SAVER_COUNT,
               "search_saver_names names every saver");

int search_saver_apply(search_saver s, int64_t n, const space_model *m,
                       space_layout *l)
{
    if (l->framework != SPACE_FW_MEGATRON_CORE || space_layout_has_saver(l))
        return 0;
    switch (s) {
    case SEARCH_SAVER_PA_BF16:
    case SEARCH_SAVER_OPT_OFFLOAD:
        /* the distributed optimizer (Megatron-Core refuses the option
         * without it); ZeRO 1 with DP 1 is Megatron-LM's
         * --use-distributed-optimizer on one rank */
        if (l->zero > SPACE_ZERO_1) return 0;
        if (s == SEARCH_SAVER_OPT_OFFLOAD
            && (n < 1 || n > SEARCH_SAVER_EIGHTHS))
            return 0;
        l->zero = SPACE_ZERO_1;
        l->pa_optimizer = 1;
        if (s == SEARCH_SAVER_PA_BF16) {
            l->exp_avg_dtype = l->exp_avg_sq_dtype = SPACE_OPT_BF16;
        } else {
            l->opt_offload = (double)n / SEARCH_SAVER_EIGHTHS;
            l->opt_offload_overlap = 1;
        }
        return 1;
    case SEARCH_SAVER_FP8_PARAMS:
        /* Megatron-Core refuses --fp8-param-gather without the
         * distributed optimizer or FSDP (space: fp8_params_need_zero);
         * Transformer Engine's fp8 only */
        if (l->dtype != HW_FP8 || l->fp8_lib != SPACE_FP8_LIB_TE
            || l->fp8_params || l->zero == SPACE_ZERO_NONE)
            return 0;
        l->fp8_params = 1;
        return 1;
    case SEARCH_SAVER_ACT_OFFLOAD:
        /* Megatron-Core refuses layer offload beside per-layer CUDA
         * graphs (est_saver_check) */
        if (l->pp != 1 || l->recompute != SPACE_RECOMPUTE_NONE || n < 1
            || n >= m->num_layers
            || (l->cuda_graph && l->cuda_graph != SPACE_CG_FULL_ITERATION))
            return 0;
        l->act_offload_layers = n;
        return 1;
    default:
        return 0;
    }
}

/* The memory of l on sy, as an estimate makes it, without timing it. */
static void saver_memory(const search_system *sy, const space_model *m,
                         const space_layout *l, est_memory *mm)
{
    est_memory_of(m, l, mm);
    est_memory_device(&sy->ctx, m, l, mm);
}

/* The smallest size of saver s in [1, hi] whose peak fits limit (the
 * peak falls as the size grows), or 0 when even hi does not. *hi_mm: the
 * memory at size hi, where the saver applies to l (*hi_ok 1; else 0);
 * *fit_mm: at the size returned, where one is. */
static int64_t saver_size(const search_system *sy, const space_model *m,
                          const space_layout *l, search_saver s, int64_t hi,
                          double limit, est_memory *hi_mm, int *hi_ok,
                          est_memory *fit_mm)
{
    space_layout t = *l;
    *hi_ok = search_saver_apply(s, hi, m, &t);
    if (!*hi_ok) return 0;
    saver_memory(sy, m, &t, hi_mm);
    if (hi_mm->total > limit) return 0;
    *fit_mm = *hi_mm;
    int64_t lo = 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        est_memory mm;
        t = *l;
        search_saver_apply(s, mid, m, &t);
        saver_memory(sy, m, &t, &mm);
        if (mm.total <= limit) {
            hi = mid;
            *fit_mm = mm;
        } else {
            lo = mid + 1;
        }
    }
    return hi;
}

static void saver_miss_keep(saver_miss *sm, double peak, int s, int64_t n)
{
    if (sm->peak == 0 || peak < sm->peak) sm->peak = peak, sm->saver = s, sm->n = n;
}

/* Layout l of system sy does not fit mem_limit: tries each saver that
 * applies, at the smallest size that fits, and keeps in *r, *saver and
 * *n the fastest that is feasible and fits (the first saver of the table
 * on a tie). Returns 1 when one did; else *sm (may be NULL) holds the
 * smallest peak of a saver the hardware can run (sized savers at their
 * largest size), or peak 0. No allocation. */
int search_try_savers(const search_request *q, const search_system *sy,
                      const space_layout *l, double mem_limit,
                      est_result *r, int *saver, int64_t *n, saver_miss *sm)
{
    const space_model *m = q->model;
    int found = 0;
    int host = est_host_bw(&sy->ctx) > 0;
    /* The optimizer savers need the distributed optimizer: a ZeRO-0
     * layout whose ZeRO-1 twin is in the grid leaves them to the twin
     * (the same layout once the saver is on); with DP x CP 1 the grid
     * has no twin (space_grid_check's zero_needs_dp). */
    int zero1_twin = 0;
    if (l->zero == SPACE_ZERO_NONE && l->dp * l->cp > 1)
        for (int k = 0; k < sy->grid.n[SPACE_DIM_ZERO]; k++)
            if (sy->grid.v[SPACE_DIM_ZERO][k] == SPACE_ZERO_1) zero1_twin = 1;
    for (int s = SEARCH_SAVER_NONE + 1; s < SEARCH_SAVER_COUNT; s++) {
        int64_t size = 0;
        est_memory hi_mm; /* saver_size's memory at the largest size */
        est_memory fit_mm; /* and at the size it found */
        int hi_ok = 0, sized = 0;
        if (zero1_twin && s != SEARCH_SAVER_ACT_OFFLOAD)
            continue;
        if (s == SEARCH_SAVER_PA_BF16 || s == SEARCH_SAVER_FP8_PARAMS)
            size = 1;
        else if (!host)
            continue; /* no host link or host memory in hwdb */
        else if (s == SEARCH_SAVER_ACT_OFFLOAD)
            size = saver_size(sy, m, l, (search_saver)s, m->num_layers - 1,
                              mem_limit, &hi_mm, &hi_ok, &fit_mm), sized = 1;
        else
            size = saver_size(sy, m, l, (search_saver)s, SEARCH_SAVER_EIGHTHS,
                              mem_limit, &hi_mm, &hi_ok, &fit_mm), sized = 1;
        space_layout t = *l;
        if (size < 1) {
            /* none fits: how near its largest size comes, memory only */
            int64_t hi = s == SEARCH_SAVER_ACT_OFFLOAD ? m->num_layers - 1
                                                       : SEARCH_SAVER_EIGHTHS;
            /* hi_mm: saver_size's memory of this layout, t at size hi */
            if (sm && hi_ok && search_saver_apply((search_saver)s, hi, m, &t)) {
                char why[8];
                if (est_saver_check(&sy->ctx, m, &t, &hi_mm, why, sizeof why)
                    == 0)
                    saver_miss_keep(sm, hi_mm.total, s, hi);
            }
            continue;
        }
        if (!search_saver_apply((search_saver)s, size, m, &t)) continue;
        /* a sized saver's memory at that size is saver_size's */
        est_result rs;
        est_estimate_with_memory(&sy->ctx, m, &t, mem_limit,
                                 sized ? &fit_mm : NULL, &rs);
        if (sm && (rs.feasible || rs.reason == EST_OUT_OF_MEMORY)
            && rs.mem.total > mem_limit)
            saver_miss_keep(sm, rs.mem.total, s, size);
        if (!rs.feasible || rs.mem.total > mem_limit) continue;
        if (found && !(rs.iteration_s < r->iteration_s)) continue;
        *r = rs;
        *saver = s;
        *n = size;
        found = 1;
    }
    return found;
}
