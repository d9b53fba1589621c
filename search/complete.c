/*
 * complete.c - fills the layout fields a user left unset with the values
 * that make the iteration fastest, by estimating every combination of
 * candidates (a few thousand at most; each estimate is microseconds):
 * the fastest the search would admit (peak plus the margin fits), else the
 * fastest that fits without the margin, else the nearest miss.
 *
 * Candidates are the values Megatron-LM users pick from: TP a power of
 * two within a node, PP any size up to the layers that divides the GPUs,
 * CP up to 8, virtual stages 1, 2, 3, 4, 6 or 8 (the search tries every
 * count; these are the ones published runs that do not say theirs ran),
 * the pipeline splits of space_split_kind
 * (even, the embedding and/or the loss counted as layers, balanced ends),
 * micro-batches of 1 to 16 sequences; for an MoE model, EP a power of two
 * dividing the experts and expert TP = TP or 1. Validity is
 * space_layout_check's (the split's rules too); feasibility (memory, fp8)
 * est_estimate's.
 *
 * Deterministic: the combinations are numbered in a fixed order, each
 * thread keeps its best (time, number), and the threads' bests are merged
 * by (time, number), so the answer does not depend on the thread count.
 */
#include "search.h"

#include <stdio.h>
#include <string.h>

/* Below this many combinations search_complete runs serially. */
#define COMPLETE_SERIAL_BELOW 256
#define MAX_CAND SPACE_GRID_MAX

typedef struct cand {
    int64_t v[MAX_CAND];
    int n;
} cand;

static void cand_one(cand *c, int64_t v)
{
    c->v[0] = v;
    c->n = 1;
}

static void cand_list(cand *c, int64_t want, const int64_t *vals, int n)
{
    if (want != SEARCH_UNSET) {
        cand_one(c, want);
        return;
    }
    c->n = 0;
    for (int i = 0; i < n && c->n < MAX_CAND; i++) c->v[c->n++] = vals[i];
}

/* How a result ranks: 0 feasible with the search's margin (its peak plus
 * est_memory_margin fits: what `trainplan search` admits), 1 feasible only
 * without it, 2 out of memory, 3 invalid or otherwise infeasible. */
static int rank_of(const est_result *r, double mem_bytes)
{
    if (r->feasible)
        return r->mem.total * (1 + est_memory_margin(&r->layout)) <= mem_bytes
                   ? 0 : 1;
    return r->reason == EST_OUT_OF_MEMORY ? 2 : 3;
}

/* Is a better than b? Admitted beats feasible, feasible infeasible; then
 * time (feasible) or the memory excess (out of memory) or nothing
 * (invalid); then order. */
static int better(const est_result *a, int64_t ia, const est_result *b,
                  int64_t ib, double mem_bytes)
{
    int ra = rank_of(a, mem_bytes), rb = rank_of(b, mem_bytes);
    if (ra != rb) return ra < rb;
    if (ra <= 1 && a->iteration_s != b->iteration_s)
        return a->iteration_s < b->iteration_s;
    if (ra == 2 && a->mem.total != b->mem.total)
        return a->mem.total < b->mem.total;
    return ia < ib;
}

enum { ND = 11 }; /* tp pp cp ep etp vpp split mbs sp recompute zero */

/* Combination idx of dims as a layout into *l, from want. Returns 0 to
 * estimate it; 1 to leave it (no whole DP, SP or expert TP that change
 * nothing at TP 1, interleaving without PP, a split that puts the same
 * layers on every chunk as a split before it); 2 for a split Megatron-
 * Core refuses (not estimated, but kept to say why if nothing else is
 * left). */
static int layout_of(const space_layout *want, const cand *const *dims,
                     const int64_t *idx, const space_model *m, int64_t gpus,
                     space_layout *l)
{
    *l = *want;
    l->tp = dims[0]->v[idx[0]];
    l->pp = dims[1]->v[idx[1]];
    l->cp = dims[2]->v[idx[2]];
    l->ep = dims[3]->v[idx[3]];
    l->etp = dims[4]->v[idx[4]];
    l->vpp = dims[5]->v[idx[5]];
    l->mbs = dims[7]->v[idx[7]];
    l->sp = (int)dims[8]->v[idx[8]];
    l->recompute = (space_recompute)dims[9]->v[idx[9]];
    l->zero = (space_zero)dims[10]->v[idx[10]];
    int64_t mp = l->tp * l->pp * l->cp;
    if (mp < 1 || gpus % mp) return 1;
    l->dp = gpus / mp;
    if (want->dp != SEARCH_UNSET && l->dp != want->dp) return 1;
    if (l->tp == 1 && want->sp == SEARCH_UNSET && idx[8] != 0)
        return 1; /* SP on and off are one layout at TP 1 */
    if (l->tp == 1 && want->etp == SEARCH_UNSET && idx[4] != 0)
        return 1; /* so are expert TP 1 and expert TP = TP */
    if (want->vpp == SEARCH_UNSET && l->vpp > 1 && l->pp < 2) return 1;
    const cand *split = dims[6];
    space_split_kind_apply((space_split_kind)split->v[idx[6]], m->num_layers,
                           l);
    if (split->n == 1 && want->vpp != SEARCH_UNSET) return 0;
    space_split me;
    if (l->pp_first < 0 || space_split_resolve(m, l, &me, NULL, 0) != SPACE_OK)
        return 2;
    for (int k = 0; k < idx[6]; k++) {
        space_layout t = *l;
        space_split other;
        space_split_kind_apply((space_split_kind)split->v[k], m->num_layers,
                               &t);
        if (t.pp_first >= 0
            && space_split_resolve(m, &t, &other, NULL, 0) == SPACE_OK
            && space_split_same(&me, &other))
            return 1;
    }
    return 0;
}

int search_complete(const est_ctx *c, const space_model *m,
                    const space_layout *want, int64_t gpus, est_result *best,
                    int64_t *n_tried, int64_t *n_feasible)
{
    int gpn = c->sys->gpus_per_node;
    double mem = c->gpu->mem_bytes;
    cand tp, pp, cp, ep, etp, vpp, split, mbs, sp, rc, zero;
    {
        int64_t v[MAX_CAND];
        int n = 0;
        for (int64_t t = 1; t <= gpn && t <= gpus && n < MAX_CAND; t *= 2)
            v[n++] = t;
        cand_list(&tp, want->tp, v, n);
        n = 0;
        /* every PP that divides the GPUs (the split rules say which the
         * layers allow) */
        for (int64_t p = 1; p <= m->num_layers && p <= gpus && n < MAX_CAND;
             p++)
            if (gpus % p == 0) v[n++] = p;
        cand_list(&pp, want->pp, v, n);
        /* the virtual stages users pick from (the search tries every
         * count; a published run that does not say its VPP ran one of
         * these) */
        n = 0;
        for (int64_t x = 1; x <= m->num_layers / 2 && n < MAX_CAND; x++)
            v[n++] = x;
        if (n == 0) v[n++] = 1;
        cand_list(&vpp, want->vpp, v, n);
        /* the splits of space_split_kind but the job's own; the job's
         * where it gives one */
        n = 0;
        for (int k = 0; k < SPACE_SPLIT_GIVEN; k++) v[n++] = k;
        cand_list(&split, want->pp_account < 0 ? SEARCH_UNSET
                                               : SPACE_SPLIT_GIVEN,
                  v, n);
        /* MoE: EP the powers of two dividing the experts, up to the GPUs
         * (space_grid_default's); a dense model's 0 stays. */
        n = 0;
        for (int64_t x = 1; m->num_experts > 0 && x <= m->num_experts
                            && x <= gpus && n < MAX_CAND;
             x *= 2)
            if (m->num_experts % x == 0) v[n++] = x;
        if (n == 0) v[n++] = 0;
        cand_list(&ep, want->ep, v, n);
    }
    static const int64_t cps[] = {1, 2, 4, 8},
                         mbss[] = {1, 2, 4, 8, 16}, sps[] = {1, 0},
                         rcs[] = {SPACE_RECOMPUTE_NONE,
                                  SPACE_RECOMPUTE_SELECTIVE,
                                  SPACE_RECOMPUTE_FULL},
                         zeros[] = {SPACE_ZERO_1, SPACE_ZERO_NONE};
    /* expert TP: = TP (0, Megatron-Core's default) first, then 1 */
    static const int64_t etps[] = {0, 1};
    cand_list(&cp, want->cp, cps, 4);
    cand_list(&etp, want->etp, etps, m->num_experts > 0 ? 2 : 1);
    cand_list(&mbs, want->mbs, mbss, 5);
    cand_list(&sp, want->sp, sps, 2);
    cand_list(&rc, (int)want->recompute, rcs, 3);
    cand_list(&zero, (int)want->zero, zeros, 2);
    const cand *dims[] = {&tp, &pp, &cp, &ep, &etp, &vpp, &split, &mbs, &sp,
                          &rc, &zero};
    int64_t total = 1;
    for (int d = 0; d < ND; d++) total *= dims[d]->n;

    est_result glob = {0};
    /* refused: the first combination whose split Megatron-Core refuses,
     * not estimated but kept to say why when nothing else is left */
    int64_t glob_i = -1, feasible = 0, refused = INT64_MAX;
    /* A few combinations (a layout given whole, as a library caller
     * scoring its own asks) are estimated on the calling thread: a
     * thread team costs more than the estimates (microseconds each), and
     * far more where the machine's cores are busy. The answer is the
     * same either way (ties broken by index). */
#pragma omp parallel if (total > COMPLETE_SERIAL_BELOW)
    {
        est_result mine = {0}, r;
        int64_t mine_i = -1, my_feasible = 0, my_refused = INT64_MAX;
#pragma omp for schedule(static)
        for (int64_t i = 0; i < total; i++) {
            int64_t k = i, idx[ND];
            for (int d = ND - 1; d >= 0; d--) {
                idx[d] = k % dims[d]->n;
                k /= dims[d]->n;
            }
            space_layout l;
            int skip = layout_of(want, dims, idx, m, gpus, &l);
            if (skip == 2 && i < my_refused) my_refused = i;
            if (skip) continue;
            est_estimate(c, m, &l, &r);
            if (r.feasible) my_feasible++;
            if (mine_i < 0 || better(&r, i, &mine, mine_i, mem)) {
                mine = r;
                mine_i = i;
            }
        }
#pragma omp critical
        {
            feasible += my_feasible;
            if (my_refused < refused) refused = my_refused;
            if (mine_i >= 0
                && (glob_i < 0 || better(&mine, mine_i, &glob, glob_i, mem))) {
                glob = mine;
                glob_i = mine_i;
            }
        }
    }
    if (glob_i < 0 && refused != INT64_MAX) {
        /* only refused splits: the first of them, estimated, says why */
        int64_t k = refused, idx[ND];
        for (int d = ND - 1; d >= 0; d--) {
            idx[d] = k % dims[d]->n;
            k /= dims[d]->n;
        }
        space_layout l;
        layout_of(want, dims, idx, m, gpus, &l);
        est_estimate(c, m, &l, &glob);
        glob_i = refused;
    }
    if (n_tried) *n_tried = total;
    if (n_feasible) *n_feasible = feasible;
    if (glob_i < 0) { /* no combination divides the GPUs */
        memset(best, 0, sizeof *best);
        space_layout *l = &best->layout;
        *l = *want; /* unset fields shown at their plainest value */
        if (l->tp < 1) l->tp = 1;
        if (l->pp < 1) l->pp = 1;
        if (l->cp < 1) l->cp = 1;
        if (l->vpp < 1) l->vpp = 1;
        if (l->mbs < 1) l->mbs = 1;
        if (l->dp < 1) l->dp = 0;
        if (l->ep < 0) l->ep = m->num_experts > 0 ? 1 : 0;
        if (l->pp_account < 0) l->pp_account = 0;
        if (l->etp < 0) l->etp = 0;
        if (l->sp < 0) l->sp = 0;
        if ((int)l->recompute < 0) l->recompute = SPACE_RECOMPUTE_NONE;
        if ((int)l->zero < 0) l->zero = SPACE_ZERO_NONE;
        best->gpus = gpus;
        best->reason = EST_INVALID_LAYOUT;
        best->reject = SPACE_REJECT_GPUS;
        snprintf(best->message, sizeof best->message,
                 "no combination of TP x PP x CP divides %lld GPUs%s",
                 (long long)gpus,
                 want->dp != SEARCH_UNSET ? " with the DP size given" : "");
        return 0;
    }
    *best = glob;
    return best->feasible;
}
