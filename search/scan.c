/*
 * scan.c - phase 1 of the search (plan.c, search_run): one (system, GPU
 * count) at a time, the grid's layout numbers scanned in order, rejected
 * by the rules of space_grid_check in blocks (a rule that breaks for one
 * number breaks for every number that shares the digits it, and every
 * rule checked before it, reads), the valid layouts pruned by the bounds
 * that need no comparison (memory floor, budget at the time floor), the
 * rest kept with their time floor for phase 2.
 *
 * Not here: estimating or ranking (plan.c).
 */
#include "search_int.h"

#include <math.h>
#include <string.h>

/* The deepest grid field each rule reads (-1: none). A rule's block is
 * the deepest field of its own and of every rule space_grid_check applies
 * before it (check_order). */
static const int rule_dim[SPACE_REJECT_COUNT] = {
    [SPACE_OK] = -1,
    [SPACE_REJECT_GPUS] = SPACE_DIM_CP,
    [SPACE_REJECT_SIZES] = SPACE_DIM_CP,
    [SPACE_REJECT_TP_HEADS] = SPACE_DIM_CP,
    [SPACE_REJECT_TP_KV_HEADS] = SPACE_DIM_CP,
    [SPACE_REJECT_TP_NODE] = SPACE_DIM_CP,
    [SPACE_REJECT_PP_CHUNKS] = SPACE_DIM_VPP,
    [SPACE_REJECT_SPLIT_CONFLICT] = SPACE_DIM_SPLIT,
    [SPACE_REJECT_PP_LAYERS] = SPACE_DIM_SPLIT,
    [SPACE_REJECT_VPP_LAYERS] = SPACE_DIM_SPLIT,
    [SPACE_REJECT_END_VPP] = SPACE_DIM_SPLIT,
    [SPACE_REJECT_MIDDLE] = SPACE_DIM_SPLIT,
    [SPACE_REJECT_MIDDLE_VPP] = SPACE_DIM_SPLIT,
    [SPACE_REJECT_LAYOUT_STAGES] = SPACE_DIM_SPLIT,
    [SPACE_REJECT_LAYOUT_VPP] = SPACE_DIM_SPLIT,
    [SPACE_REJECT_LAYOUT_LAYERS] = SPACE_DIM_SPLIT,
    [SPACE_REJECT_LAYOUT_MTP] = SPACE_DIM_SPLIT,
    [SPACE_REJECT_SPLIT_NONE] = SPACE_DIM_SPLIT,
    [SPACE_REJECT_SPLIT_SAME] = SPACE_DIM_SPLIT,
    [SPACE_REJECT_VPP] = SPACE_DIM_VPP,
    [SPACE_REJECT_GBS] = SPACE_DIM_MBS,
    [SPACE_REJECT_VPP_MICRO] = SPACE_DIM_MBS,
    [SPACE_REJECT_CP_SEQ] = SPACE_DIM_MBS,
    [SPACE_REJECT_SP_SEQ] = SPACE_DIM_SP,
    [SPACE_REJECT_SEQ_POSITIONS] = SPACE_DIM_SP,
    [SPACE_REJECT_VPP_PP2] = SPACE_DIM_VPP,
    [SPACE_REJECT_TP_OVERLAP_SP] = SPACE_DIM_SP,
    [SPACE_REJECT_PP_SCHEDULE] = SPACE_DIM_MBS,
    [SPACE_REJECT_FP8_PARAMS] = SPACE_DIM_ZERO,
    [SPACE_REJECT_EP_DENSE] = SPACE_DIM_ETP,
    [SPACE_REJECT_EP_EXPERTS] = SPACE_DIM_EP,
    [SPACE_REJECT_EP_RANKS] = SPACE_DIM_ETP,
    [SPACE_REJECT_ETP_NODE] = SPACE_DIM_ETP,
    [SPACE_REJECT_FLEX_EP] = SPACE_DIM_ETP,
    [SPACE_REJECT_MOE_SP] = SPACE_DIM_SP,
    [SPACE_REJECT_ETP_TP] = SPACE_DIM_ETP,
    [SPACE_REJECT_SP_TP1] = SPACE_DIM_SP,
    [SPACE_REJECT_ZERO_DP1] = SPACE_DIM_ZERO,
};

/* The order space_grid_check applies the rules in (grid.c, then
 * space_layout_check in layout.c): a rule's block is only exact when this
 * is that order. */
static const space_reject check_order[] = {
    SPACE_REJECT_GPUS,        SPACE_REJECT_ETP_TP,
    SPACE_REJECT_SIZES,
    SPACE_REJECT_TP_HEADS,    SPACE_REJECT_TP_KV_HEADS,
    SPACE_REJECT_TP_NODE,     SPACE_REJECT_EP_DENSE,
    SPACE_REJECT_EP_EXPERTS,  SPACE_REJECT_EP_RANKS,
    SPACE_REJECT_ETP_NODE,    SPACE_REJECT_FLEX_EP,
    SPACE_REJECT_VPP,         SPACE_REJECT_PP_CHUNKS,
    /* the split's (split.c, space_split_resolve) */
    SPACE_REJECT_SPLIT_CONFLICT, SPACE_REJECT_LAYOUT_STAGES,
    SPACE_REJECT_LAYOUT_VPP,  SPACE_REJECT_LAYOUT_LAYERS,
    SPACE_REJECT_LAYOUT_MTP,  SPACE_REJECT_SPLIT_SAME,
    SPACE_REJECT_SPLIT_NONE,  SPACE_REJECT_END_VPP,
    SPACE_REJECT_MIDDLE,      SPACE_REJECT_MIDDLE_VPP,
    SPACE_REJECT_PP_LAYERS,   SPACE_REJECT_VPP_LAYERS,
    SPACE_REJECT_VPP_PP2,
    SPACE_REJECT_GBS,         SPACE_REJECT_VPP_MICRO,
    SPACE_REJECT_PP_SCHEDULE,
    SPACE_REJECT_CP_SEQ,      SPACE_REJECT_SP_SEQ,
    SPACE_REJECT_MOE_SP,
    SPACE_REJECT_SEQ_POSITIONS, SPACE_REJECT_TP_OVERLAP_SP,
    SPACE_REJECT_FP8_PARAMS,  SPACE_REJECT_SP_TP1,
    SPACE_REJECT_ZERO_DP1,
};
_Static_assert(sizeof check_order / sizeof check_order[0]
                   == SPACE_REJECT_COUNT - 1,
               "check_order lists every rule once");

/* The field whose block rule rj rejects at once. */
static space_dim rule_block_dim(space_reject rj)
{
    int deepest = SPACE_DIM_TP;
    for (size_t i = 0; i < sizeof check_order / sizeof check_order[0]; i++) {
        if (rule_dim[check_order[i]] > deepest)
            deepest = rule_dim[check_order[i]];
        if (check_order[i] == rj) break;
    }
    return (space_dim)deepest;
}

/* The time floor of l, or where the search tries other schedules of it
 * (search_request.schedules), the least of theirs: pruning must not drop
 * a layout one of them would make win. fl: the model's FLOPs per token
 * at l's sequence (est_time_floor_of). */
static double floor_time(const search_request *q, const search_system *sy,
                         const space_flops *fl, const space_layout *l)
{
    double f = est_time_floor_of(&sy->ctx, q->model, fl, l);
    if (!q->schedules) return f;
    /* copied again only after an apply (one that fails leaves v as it
     * is): the layout is 504 bytes and most layouts take no schedule */
    space_layout v = *l;
    for (int i = 0; i < SEARCH_SCHEDULES_TRIED; i++) {
        if (!search_schedule_apply(search_schedules_tried[i], &v)) continue;
        double fv = est_time_floor_of(&sy->ctx, q->model, fl, &v);
        if (fv < f) f = fv;
        v = *l;
    }
    return f;
}

/* The entry of st->pp for pipeline size pp (st->pp[0]'s where it has
 * none, which cannot happen for a size of the grids). */
search_pp_stats *search_pp_stats_of(search_stats *st, int64_t pp)
{
    int lo = 0, hi = st->n_pp - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (st->pp[mid].pp < pp) lo = mid + 1;
        else hi = mid;
    }
    return &st->pp[lo];
}

/* Advances the digits dg of a layout number to the first number of the
 * next block of field d (d's digit one up, carried, the deeper ones 0):
 * i = (i / block(d) + 1) x block(d). Returns the shallowest field whose
 * digit went up. */
static int odometer_step(const space_grid *g, int *dg, int d)
{
    for (int k = d + 1; k < SPACE_DIM_COUNT; k++) dg[k] = 0;
    for (int k = d; k >= 0; k--) {
        if (++dg[k] < g->n[k]) return k;
        dg[k] = 0;
    }
    return 0;
}

/* Whether rule rj comes after the rules that read the fields up to expert
 * TP (TP, PP, CP, the GPUs, EP, ETP) in check_order: a layout rejected by
 * it, or valid, passed those. */
static int after_prefix(space_reject rj)
{
    if (rj == SPACE_OK) return 1;
    size_t at = 0, flex = 0;
    for (size_t k = 0; k < sizeof check_order / sizeof check_order[0]; k++) {
        if (check_order[k] == rj) at = k;
        if (check_order[k] == SPACE_REJECT_FLEX_EP) flex = k;
    }
    return at > flex;
}

void search_scan_unit(const search_request *q, int sysi, int64_t gpus,
                      int64_t unit, const verdicts *vd, gather *t)
{
    const search_system *sy = &q->systems[sysi];
    const space_grid *g = &sy->grid;
    const space_model *m = q->model;
    search_stats *st = &t->st;
    int gpn = sy->ctx.tp_across_nodes ? 0 : sy->ctx.sys->gpus_per_node;
    double price = sy->price_usd_per_gpu_hour;
    int64_t size = space_grid_size(g);
    int savers = q->savers && !space_layout_has_saver(&q->base);
    int host = est_host_bw(&sy->ctx) > 0;
    space_params params1; /* the memory floors' (est_memory_floor_of) */
    space_model_params(m, 1, &params1);
    space_flops flops1; /* the time floors' (est_time_floor_of), at the
                           base's sequence */
    space_flops_per_token(m, q->base.seq, 1, SPACE_RECOMPUTE_NONE, &flops1);
    st->enumerated += size;
    /* the digits of layout number i, advanced with it (odometer) */
    int dg[SPACE_DIM_COUNT] = {0};
    /* per rule: does it come after the prefix's rules, and its block */
    static _Thread_local int after_prefix_of[SPACE_REJECT_COUNT], known;
    static _Thread_local space_dim block_dim_of[SPACE_REJECT_COUNT];
    if (!known) {
        for (int r = 0; r < SPACE_REJECT_COUNT; r++) {
            after_prefix_of[r] = after_prefix((space_reject)r);
            block_dim_of[r] = rule_block_dim((space_reject)r);
        }
        known = 1;
    }
    /* the entry of the last pipeline size met (runs of one PP) */
    int64_t last_pp = -1;
    search_pp_stats *last_ps = NULL;
    int64_t blk_of[SPACE_DIM_COUNT];
    for (int d = 0; d < SPACE_DIM_COUNT; d++)
        blk_of[d] = space_grid_block(g, (space_dim)d);
    /* VPP ascending: a PP x VPP too many chunks stays so for the rest */
    int vpp_up = 1;
    for (int k = 1; k < g->n[SPACE_DIM_VPP]; k++)
        vpp_up &= g->v[SPACE_DIM_VPP][k] > g->v[SPACE_DIM_VPP][k - 1];
    /* the rules before VPP's passed for the current digits up to expert
     * TP (they read no later field) */
    int prefix_ok = 0;
    int64_t split_blk = blk_of[SPACE_DIM_SPLIT];
    for (int64_t i = 0; i < size;) {
        space_layout l;
        char why[200];
        space_reject rj;
        /* the first rule, TP x PP x CP dividing the GPUs, from the digits
         * alone (most of a grid fails it) */
        int64_t mp = g->v[SPACE_DIM_TP][dg[SPACE_DIM_TP]]
                     * g->v[SPACE_DIM_PP][dg[SPACE_DIM_PP]]
                     * g->v[SPACE_DIM_CP][dg[SPACE_DIM_CP]];
        int gpus_rule = mp < 1 || gpus % mp, built = 0;
        int8_t *cell = NULL;
        if (!gpus_rule && prefix_ok && i % split_blk == 0) {
            /* at a new (VPP, split): their rules from the table */
            cell = &t->verdict[((sysi * vd->np + dg[SPACE_DIM_PP]) * vd->nv
                                + dg[SPACE_DIM_VPP]) * vd->ns
                               + dg[SPACE_DIM_SPLIT]];
            if (!*cell) {
                space_grid_layout_at(g, dg, gpus, &q->base, &l);
                built = 1;
                *cell = (int8_t)(1 + space_layout_split_check(m, &l, NULL, 0));
            }
        }
        if (gpus_rule) {
            rj = SPACE_REJECT_GPUS;
            l.pp = g->v[SPACE_DIM_PP][dg[SPACE_DIM_PP]];
        } else if (cell && *cell != 1 + SPACE_OK) {
            rj = (space_reject)(*cell - 1);
            l.pp = g->v[SPACE_DIM_PP][dg[SPACE_DIM_PP]];
            gpus_rule = !built; /* the layout to build for a message */
        } else {
            if (!built) space_grid_layout_at(g, dg, gpus, &q->base, &l);
            /* the message only where it becomes the rule's example */
            rj = space_grid_check(m, &l, gpus, gpn, NULL, 0);
            if (after_prefix_of[rj]) prefix_ok = 1;
        }
        if (rj != SPACE_OK) {
            /* the whole block that shares the digits the rule reads */
            space_dim bd = block_dim_of[rj];
            /* too many chunks for PP at this VPP: at every larger VPP too
             * (the rules before it do not read VPP): the rest of the
             * block of the fields before VPP at once */
            if ((rj == SPACE_REJECT_PP_CHUNKS || rj == SPACE_REJECT_VPP)
                && vpp_up)
                bd = SPACE_DIM_ETP; /* the field before VPP */
            /* i is the block's first number: the layouts before it in the
             * block share the digits the rule reads, so they were
             * rejected with it, and the scan never stops inside a
             * block */
            int64_t end = bd == SPACE_DIM_ETP
                              ? (i / blk_of[bd] + 1) * blk_of[bd]
                              : i + blk_of[bd];
            int dg0[SPACE_DIM_COUNT];
            memcpy(dg0, dg, sizeof dg0);
            if (odometer_step(g, dg, bd) <= SPACE_DIM_ETP) prefix_ok = 0;
            int64_t key = unit * size + i;
            if (!st->rejected[rj] || key < t->example_key[rj]) {
                t->example_key[rj] = key;
                if (gpus_rule) space_grid_layout_at(g, dg0, gpus, &q->base, &l);
                space_grid_check(m, &l, gpus, gpn, why, sizeof why);
                tp_strlcpy(st->example[rj], why, sizeof why);
            }
            st->rejected[rj] += end - i;
            if (l.pp != last_pp)
                last_pp = l.pp, last_ps = search_pp_stats_of(st, l.pp);
            last_ps->rejected[rj] += end - i;
            i = end;
            continue;
        }
        st->valid++;
        if (l.pp != last_pp)
            last_pp = l.pp, last_ps = search_pp_stats_of(st, l.pp);
        search_pp_stats *ps = last_ps;
        ps->valid++;
        st->split_valid[g->v[SPACE_DIM_SPLIT][dg[SPACE_DIM_SPLIT]]]++;
        int64_t idx = i++;
        if (odometer_step(g, dg, SPACE_DIM_COUNT - 1) <= SPACE_DIM_ETP)
            prefix_ok = 0;
        if (!q->no_prune) {
            double floor_b = est_memory_floor_of(m, &params1, &l);
            double mem_limit = search_memory_limit(q, sy, &l);
            /* the savers' floors only where the layout's own does not
             * fit (or is NaN, which fmin replaces): they can only lower
             * it, and a layout kept does not read it */
            if (savers && !(floor_b <= mem_limit)) {
                /* what the strongest saver that applies could bring it
                 * down to: the floor of what may still be tried */
                space_layout tl = l;
                if (host && search_saver_apply(SEARCH_SAVER_OPT_OFFLOAD,
                                               SEARCH_SAVER_EIGHTHS, m, &tl))
                    floor_b = fmin(floor_b,
                                   est_memory_floor_of(m, &params1, &tl));
                tl = l;
                if (search_saver_apply(SEARCH_SAVER_PA_BF16, 1, m, &tl))
                    floor_b = fmin(floor_b,
                                   est_memory_floor_of(m, &params1, &tl));
                tl = l;
                if (search_saver_apply(SEARCH_SAVER_FP8_PARAMS, 1, m, &tl))
                    floor_b = fmin(floor_b,
                                   est_memory_floor_of(m, &params1, &tl));
            }
            if (floor_b > mem_limit) {
                st->pruned[SEARCH_PRUNE_MEMORY]++;
                ps->pruned[SEARCH_PRUNE_MEMORY]++;
                search_near_update(&t->near_memory, sysi, gpus, idx, floor_b,
                                   mem_limit, 1, SEARCH_SAVER_NONE, 0);
                continue;
            }
        }
        space_flops fl_other;
        const space_flops *fl = &flops1;
        if (l.seq != q->base.seq) { /* not a field of the grid: never */
            space_flops_per_token(m, l.seq, 1, SPACE_RECOMPUTE_NONE, &fl_other);
            fl = &fl_other;
        }
        double floor_s = floor_time(q, sy, fl, &l);
        if (!q->no_prune) {
            int which;
            double r = search_budget_ratio(q, floor_s, gpus, price, &which);
            if (r > 1) {
                st->pruned[SEARCH_PRUNE_BUDGET]++;
                ps->pruned[SEARCH_PRUNE_BUDGET]++;
                search_near_update(&t->near_budget, sysi, gpus, idx, r, 1, 1,
                                   SEARCH_SAVER_NONE, 0);
                continue;
            }
        }
        if (t->n == t->cap) {
            t->cap = t->cap ? 2 * t->cap : 4096;
            t->c = tp_xrealloc(t->c, (size_t)t->cap * sizeof *t->c);
        }
        t->c[t->n++] = (cand){floor_s, gpus, idx, sysi};
    }
}
