/*
 * bound.c - cheap lower bounds of what est_memory_of and est_estimate
 * return, for the search to reject or skip layouts without estimating
 * them (branch and bound). Each must never exceed the full figure, or the
 * search could drop a layout that belongs to the answer; tests/test_enum.c
 * checks both over many layouts and every system.
 *
 * Memory: the weights, gradients and optimizer states (est_state_bytes,
 * as est_memory_of counts them) of the parameters of the transformer
 * layers on one pipeline stage, at least L / PP of them (MoE: the mean
 * over stages, with the experts sharded by EP x ETP and their states by
 * the expert data-parallel group); activations, the embedding, the head
 * and the allowance, which est_memory_of adds on top, are left out.
 *
 * Time: the GEMM FLOPs of an iteration (space.h convention; the attention
 * core and the memory-bound operators left out, recomputation of full
 * layers counted, at the smallest share of layers any stage recomputes),
 * per GPU, at the GPU's best dense peak among the
 * precisions the layout uses, stretched by the pipeline's fill and drain:
 * the estimate takes m x t_max + (p - 1) / v x t_mean per iteration
 * (iter.c, after Narayanan et al. SC'21 section 2.2), which is at least
 * (m + (p - 1) / v) x t_mean, and m x t_mean is at least the compute of a
 * GPU's share of the iteration. Data-parallel communication and the
 * optimizer step only add. The bound holds as long as no operator runs
 * above the dense peak, which the sample hygiene (est_sample_implausible)
 * is there to ensure.
 */
#include "est.h"

#include <math.h>

double est_memory_floor(const space_model *m, const space_layout *l)
{
    space_params p;
    space_model_params(m, 1, &p);
    return est_memory_floor_of(m, &p, l);
}

double est_memory_floor_of(const space_model *m, const space_params *pm,
                           const space_layout *l)
{
    const space_params p = *pm;
    double t = (double)(l->tp > 0 ? l->tp : 1);
    double layers = (double)m->num_layers / (double)(l->pp > 0 ? l->pp : 1);
    double params = layers * (double)(p.per_layer - p.norms_per_layer) / t;
    double w, gr, opt;
    if (m->num_experts > 0) {
        /* MoE: the stages' mean of the layers' parameters (at most the
         * busiest stage's, which est_memory_of finds among the ranks it
         * compares), dense-FFN and MoE layers apart, the routed experts
         * sharded by EP x ETP and their states by the expert data-
         * parallel group, as mem.c keeps them. */
        int64_t edp = est_moe_edp(l);
        double routed = est_routed_expert_params(m);
        double shared = est_shared_expert_params(m);
        double pp = (double)(l->pp > 0 ? l->pp : 1);
        double nm = (double)p.moe_layers, nd = (double)p.dense_layers;
        double dense_l = (double)(p.attn_per_layer + p.dense_mlp_per_layer) / t;
        double moe_l = ((double)p.attn_per_layer + shared) / t
                       + ((double)p.moe_mlp_per_layer - routed - shared);
        double xl = routed / (double)(space_layout_ep(l) * space_layout_etp(l));
        double xw, xg, xo;
        est_state_bytes(l, (nd * dense_l + nm * moe_l) / pp, &w, &gr, &opt);
        est_state_bytes_shard(l, nm * xl / pp, (double)(edp > 0 ? edp : 1), &xw,
                              &xg, &xo);
        return w + gr + opt + xw + xg + xo;
    }
    est_state_bytes(l, params, &w, &gr, &opt);
    /* fp8 parameters (--fp8-param-gather): the GEMM weights take one
     * byte, and on Blackwell no cached copy beside them (mem.c) */
    if (l->fp8_params && l->dtype == HW_FP8) w /= 2;
    return w + gr + opt;
}

double est_time_floor(const est_ctx *c, const space_model *m,
                      const space_layout *l)
{
    space_flops fl;
    space_flops_per_token(m, l->seq, 1, SPACE_RECOMPUTE_NONE, &fl);
    return est_time_floor_of(c, m, &fl, l);
}

double est_time_floor_of(const est_ctx *c, const space_model *m,
                         const space_flops *flops, const space_layout *l)
{
    const hw_gpu *g = c->gpu;
    const space_flops fl = *flops;
    double gemm_fwd = fl.fwd - fl.attn_fwd;
    double rec = l->recompute == SPACE_RECOMPUTE_FULL
                     ? fl.fwd - fl.attn_fwd - fl.lm_head_fwd
                     : 0;
    /* Partial recomputation (--recompute-method block): at least the
     * smallest share of its layers any stage recomputes, so the stages'
     * mean is at least that. */
    if (rec > 0 && l->pp >= 1 && l->recompute_method == SPACE_RECOMPUTE_BLOCK
        && l->recompute_layers > 0) {
        double share = 1;
        space_split s;
        space_split_resolve(m, l, &s, NULL, 0);
        for (int64_t r = 0; r < s.pp; r++) {
            double n = (double)space_split_rank_layers(&s, r);
            if (n > 0)
                share = fmin(share, space_split_recompute_layers(&s, l, r) / n);
        }
        rec *= share;
    }
    double tokens = (double)l->gbs * (double)l->seq;
    double gpus = (double)(l->tp * l->pp * l->cp * l->dp);
    if (!(gpus > 0) || l->mbs < 1) return 0;
    double peak = g->peak_flops[HW_BF16];
    if (g->peak_flops[HW_FP16] > peak) peak = g->peak_flops[HW_FP16];
    if ((l->dtype == HW_FP8 || l->dtype == HW_FP4)
        && g->peak_flops[l->dtype] > peak)
        peak = g->peak_flops[l->dtype];
    if (!(peak > 0)) return 0;
    /* Every operator time is divided by the kernel efficiency, and none
     * is below its FLOPs at peak (sample hygiene), so neither is this. */
    double compute = tokens * (3 * gemm_fwd + rec) / gpus / peak
                     / est_kernel_eff(c, l);
    double micro = (double)(l->gbs / (l->mbs * l->dp));
    double v = (double)(l->vpp > 0 ? l->vpp : 1);
    /* 1F1B's bubble; the other schedules hide part of theirs (zero
     * bubble, DualPipe): none counted, so the floor stays below them */
    double stretch = micro >= 1 && l->pp_schedule == SPACE_PP_1F1B
                         ? 1 + (double)(l->pp - 1) / (v * micro)
                         : 1;
    return compute * stretch;
}
