/*
 * moe.c - what the estimator needs to know about a mixture-of-experts
 * model under a layout, shared by iter.c (time), mem.c (memory) and
 * bound.c (lower bounds): which layers of a pipeline rank are MoE layers,
 * how many parameters the routed and shared experts hold, the expert
 * grid Megatron-Core builds, and the load-imbalance factor.
 *
 * The expert grid (Megatron-Core's "MoE parallel folding", Liu et al.,
 * arXiv 2504.14960; megatron/core/parallel_state.py, initialize_model_
 * parallel, NVIDIA/Megatron-LM@d98e8a64ddf3): the tp x cp x dp ranks of a
 * pipeline stage are regrouped as etp x ep x edp, in the rank order
 * "tp-ep-dp-pp" with tp = the expert TP size (the RankGenerator of the
 * experts, order tp-cp-ep-dp-pp with cp = 1), so an ETP group is etp
 * consecutive ranks, an EP group ep ranks etp apart, and an expert data-
 * parallel group edp ranks etp x ep apart.
 *
 * Token dropping with a capacity factor is modelled as a cap on the
 * busiest expert's load (est_moe_imbalance); padding every expert to its
 * capacity (--moe-pad-expert-input-to-capacity) and expert-choice routing
 * are not.
 */
#include "est.h"

#include <math.h>
#include <stdio.h>

/* The default imbalance: tokens the busiest expert (and, taken as the
 * same, the busiest EP rank) receives in a micro-batch over the mean, for
 * dropless routing balanced by an auxiliary loss or by DeepSeek-V3's
 * bias (auxiliary-loss-free) balancing. An assumption, not fitted: the
 * middle of the 1.1-1.3 that balanced routers reach per batch (Wang et
 * al., "Auxiliary-Loss-Free Load Balancing Strategy for Mixture-of-
 * Experts", arXiv 2408.15664, measure it as MaxVio = max load / mean - 1),
 * below the capacity factor 1.25 Switch Transformer ran at to drop few
 * tokens (Fedus et al., arXiv 2101.03961, section 2.2). Replace by a
 * measured per-expert token distribution (moe_imbalance) where one is
 * known. What the held-out runs say (issue 29; not fitted, and no one
 * factor fits both): the Megatron MoE Model Zoo's paired figures, dropless
 * against forced balance, read through this estimator's own time per unit
 * of imbalance, put the busiest EP rank of Mixtral-8x22B at EP 8 (aux
 * loss 1e-2; 445 vs 465 TFLOPS) near 1.06 and of Qwen3-235B-A22B at EP 8
 * (aux loss 1e-3; 16K-128K, step ratios 1.245 to 1.09) near 1.6, each
 * pair consistent across its rows: the balance a router reaches depends on
 * its loss and model, which the estimator does not model. */
double est_moe_imbalance(const space_model *m, const space_layout *l)
{
    double f = l->moe_imbalance > 0 && isfinite(l->moe_imbalance)
                   ? l->moe_imbalance
                   : EST_MOE_IMBALANCE_DEFAULT;
    if (f < 1) f = 1;
    /* A capacity factor C caps every expert at C x its fair share of the
     * tokens; the rest are dropped before the dispatch (Megatron-Core
     * moe_utils.py, topk_routing_with_score_function / apply capacity:
     * --moe-expert-capacity-factor without --moe-pad-expert-input-to-
     * capacity), so the busiest expert receives min(f, C) x the mean. */
    if (m->capacity_factor > 0 && f > m->capacity_factor)
        f = m->capacity_factor;
    return f;
}

/* MoE layers among layer indices [0, x): space.h's placement rule, layer
 * i is MoE when i >= first_dense_layers and (i - first_dense_layers) %
 * moe_layer_freq == 0. */
static int64_t moe_before(const space_model *m, int64_t x)
{
    int64_t first = m->first_dense_layers > 0 ? m->first_dense_layers : 0;
    int64_t freq = m->moe_layer_freq > 0 ? m->moe_layer_freq : 1;
    if (x > m->num_layers) x = m->num_layers;
    return x <= first ? 0 : (x - first - 1) / freq + 1;
}

int64_t est_moe_layers_in(const space_model *m, int64_t first, int64_t n)
{
    if (m->num_experts <= 0 || n <= 0) return 0;
    return moe_before(m, first + n) - moe_before(m, first);
}

int est_moe_uniform(const space_model *m)
{
    return m->num_experts <= 0
           || (m->first_dense_layers <= 0 && m->moe_layer_freq <= 1);
}

double est_split_moe_layers(const space_model *m, const space_split *s,
                            int64_t r)
{
    if (m->num_experts <= 0) return 0;
    int64_t n = 0;
    for (int64_t j = 0; j < s->vpp; j++) {
        space_chunk c;
        space_split_chunk(s, r, j, &c);
        n += est_moe_layers_in(m, c.offset, c.layers);
    }
    return (double)n;
}

double est_stage_moe_layers(const space_model *m, const space_layout *l,
                            int64_t r)
{
    if (m->num_experts <= 0) return 0;
    space_split s;
    space_split_resolve(m, l, &s, NULL, 0);
    return est_split_moe_layers(m, &s, r);
}

/* One FFN of inner size f, as space_model_params counts it: gemms weight
 * matrices of hidden x f and, with mlp_bias, their biases. */
static double ffn_params(const space_model *m, int64_t f)
{
    double g = (double)space_act_ffn_gemms(m->act), h = (double)m->hidden;
    double p = g * h * (double)f;
    if (m->mlp_bias) p += (g - 1) * (double)f + h;
    return p;
}

double est_routed_expert_params(const space_model *m)
{
    if (m->num_experts <= 0) return 0;
    return (double)m->num_experts * ffn_params(m, m->expert_ffn_hidden);
}

double est_shared_expert_params(const space_model *m)
{
    if (m->num_experts <= 0 || m->shared_experts <= 0) return 0;
    return (double)m->shared_experts * ffn_params(m, m->shared_ffn_hidden);
}

int64_t est_moe_edp(const space_layout *l)
{
    int64_t ep = space_layout_ep(l), etp = space_layout_etp(l);
    int64_t n = l->tp * l->cp * l->dp;
    if (ep < 1 || etp < 1 || n < 1 || n % (ep * etp)) return 0;
    return n / (ep * etp);
}

int est_moe_check(const space_model *m, const space_layout *l, char *why,
                  size_t cap)
{
    if (cap) why[0] = '\0';
    int64_t etp = space_layout_etp(l);
    if (m->num_experts > 0 && etp > 1 && m->expert_ffn_hidden % etp) {
        if (cap)
            snprintf(why, cap,
                     "ETP %lld does not divide the expert FFN size %lld "
                     "(TEGroupedMLP splits it over the expert TP ranks)",
                     (long long)etp, (long long)m->expert_ffn_hidden);
        return -1;
    }
    /* The recompute modules' rules (transformer_config.py __post_init__,
     * NVIDIA/Megatron-LM@d98e8a64ddf3): moe_act and layernorm in fp8
     * refuse delayed scaling. */
    unsigned rc = space_recompute_modules(l);
    if ((rc & (SPACE_RC_MOE_ACT | SPACE_RC_LAYERNORM)) && l->dtype == HW_FP8
        && l->fp8_recipe == SPACE_FP8_DELAYED) {
        if (cap)
            snprintf(why, cap,
                     "--recompute-modules moe_act or layernorm in fp8 needs "
                     "a current-scaling recipe, not delayed scaling "
                     "(Megatron-Core transformer_config.py)");
        return -1;
    }
    /* The overlaps' rules (NVIDIA/Megatron-LM@d98e8a64ddf3,
     * transformer_config.py __post_init__): the shared experts' overlap
     * needs the alltoall or flex dispatcher (a ValueError) and does
     * nothing without shared experts (refused here as a likely mistake);
     * the 1F1B A2A overlap needs EP > 1, alltoall or flex, no full
     * recomputation, VPP when PP > 1, a 16-bit model and at most one
     * MTP layer; recomputing the shared experts refuses their overlap,
     * recomputing the MoE layer the 1F1B A2A overlap. */
    int ov = l->moe_comm_overlap;
    const char *no = NULL;
    if (m->num_experts <= 0 || ov == SPACE_MOE_OVERLAP_NONE)
        return 0;
    if (ov < 0 || ov >= SPACE_MOE_OVERLAP_COUNT)
        no = "an unknown MoE overlap";
    else if (l->moe_dispatcher == SPACE_MOE_ALLGATHER)
        no = "it needs the alltoall or flex dispatcher";
    else if (ov == SPACE_MOE_OVERLAP_SHARED
             && (m->shared_experts <= 0 || m->shared_ffn_hidden <= 0))
        no = "the model has no shared experts to overlap";
    else if (ov == SPACE_MOE_OVERLAP_A2A && space_layout_ep(l) < 2)
        no = "it needs expert parallelism (EP > 1)";
    else if (ov == SPACE_MOE_OVERLAP_A2A
             && l->recompute == SPACE_RECOMPUTE_FULL)
        no = "it refuses full recomputation";
    else if (ov == SPACE_MOE_OVERLAP_A2A && (rc & SPACE_RC_MOE))
        no = "it refuses recomputing the MoE layer (recompute module moe)";
    else if (ov == SPACE_MOE_OVERLAP_SHARED && (rc & SPACE_RC_SHARED_EXPERTS))
        no = "it refuses recomputing the shared experts (recompute module "
             "shared_experts)";
    else if (ov == SPACE_MOE_OVERLAP_A2A && l->pp > 1 && l->vpp < 2)
        no = "with PP > 1 it needs virtual pipeline stages (VPP > 1)";
    else if (ov == SPACE_MOE_OVERLAP_A2A && l->dtype == HW_FP32)
        no = "it needs a bf16 or fp16 model";
    else if (ov == SPACE_MOE_OVERLAP_A2A && m->mtp_layers > 1)
        no = "it supports at most one MTP layer";
    if (!no) return 0;
    if (cap)
        snprintf(why, cap,
                 "--moe-comm-overlap %s: %s (Megatron-Core "
                 "transformer_config.py)",
                 ov >= 0 && ov < SPACE_MOE_OVERLAP_COUNT
                     ? space_moe_overlap_names[ov]
                     : "?",
                 no);
    return -1;
}
