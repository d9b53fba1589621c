/*
 * mem_state.c - parameters and their states: the parameters of each
 * pipeline rank (dense-FFN and MoE layers, the routed experts' shard,
 * embedding, head, MTP modules), their GEMM weights that fp8 caches, and
 * the bytes per parameter of weights, gradients and optimizer states by
 * sharding (est_state_bytes, est_step_bytes). Not here: what the
 * precision-aware optimizer and optimizer offload keep per parameter
 * (offload.c).
 *
 * Bytes per parameter (docs/memory.md derives each with its source):
 *   16-bit weights 2 and an fp32 master, Adam m and v 12 (Megatron-LM,
 *   DeepSpeed; Megatron-LM docs, "Distributed Optimizer": 18 without it,
 *   6 + 12 / DP with it); gradients space_grad_bytes: 4 (fp32 main_grad:
 *   Megatron-LM with bf16) or 2 (Megatron-LM with fp16, DeepSpeed's fp16
 *   ZeRO), and then the optimizer step makes an fp32 copy of the rank's
 *   gradient shard, 4 (all of them without ZeRO), freed after the step.
 *   PyTorch FSDP's mixed precision (space_layout.param_fp32) steps the fp32
 *   parameters themselves: at ZeRO-3, 4 + 4 + 8 over the shard, no 16-bit
 *   shard. The distributed optimizer (ZeRO-1) shards the optimizer states
 *   over the data-parallel ranks (dp x cp: Megatron-Core shards over the
 *   data-parallel group with context parallelism), ZeRO-2 also the
 *   gradients, ZeRO-3 also the weights, which then gathers one layer's
 *   weights at a time. fp8 under Transformer Engine adds its cached fp8
 *   weights and transposes, 2 per GEMM weight of the layers.
 */

#include "est_int.h"

#include <math.h>

/* Weights of one layer's GEMMs on a TP rank: QKV, output projection, FFN
 * (no biases, no norms: Transformer Engine casts only GEMM weights). */
static double layer_gemm_weights(const space_model *m, double t)
{
    double h = (double)m->hidden;
    double hd = (double)(m->head_dim ? m->head_dim : m->hidden / m->heads);
    double q = (double)m->heads * hd, kv = (double)m->kv_heads * hd;
    double f = (double)m->ffn_hidden;
    return (h * (q + 2 * kv) + q * h + space_act_ffn_gemms(m->act) * h * f) / t;
}

/* Weights of one layer's GEMMs on a TP rank, MLA's attention or an MoE
 * layer (moe: its shared experts in the place of the dense FFN; the
 * routed experts apart, expert_gemm_weights). MLA's down projections are
 * whole on every TP rank (multi_latent_attention.py: duplicated TELinear),
 * its up and output projections TP-sharded; the router is no fp8 GEMM. */
double est_layer_gemm_weights_of(const space_model *m, double t, int moe)
{
    if (m->kv_lora_rank <= 0 && !moe) return layer_gemm_weights(m, t);
    double h = (double)m->hidden, a;
    if (m->kv_lora_rank > 0) {
        double H = (double)m->heads, rope = (double)m->qk_rope_head_dim;
        double qk = (double)m->qk_nope_head_dim + rope;
        double kvu = (double)(m->qk_nope_head_dim + m->v_head_dim);
        double ql = (double)m->q_lora_rank, kl = (double)m->kv_lora_rank;
        a = h * (kl + rope) + kl * H * kvu / t
            + H * (double)m->v_head_dim * h / t;
        a += ql > 0 ? h * ql + ql * H * qk / t : h * H * qk / t;
    } else {
        double hd = (double)(m->head_dim ? m->head_dim : m->hidden / m->heads);
        double q = (double)m->heads * hd, kv = (double)m->kv_heads * hd;
        a = (h * (q + 2 * kv) + q * h) / t;
    }
    double f = moe ? (double)(m->shared_experts * m->shared_ffn_hidden)
                   : (double)m->ffn_hidden;
    return a + space_act_ffn_gemms(m->act) * h * f / t;
}

/* The routed experts' GEMM weights of one MoE layer on a rank: E / ep
 * experts, each split over ETP (TE GroupedLinear caches each expert's fp8
 * weight as a dense linear's). */
static double expert_gemm_weights(const space_model *m, const space_layout *l)
{
    if (m->num_experts <= 0) return 0;
    return (double)(m->num_experts / space_layout_ep(l))
           * space_act_ffn_gemms(m->act) * (double)m->hidden
           * (double)m->expert_ffn_hidden / (double)space_layout_etp(l);
}

/* Elements of the largest single GEMM weight of a layer on a TP rank,
 * counting a gated FFN's gate and up projections as one fused weight and
 * the rank's routed experts' FC1 (and FC2) as one grouped weight, over
 * the kinds of layer the rank holds (dense: a dense-FFN layer; moe: an
 * MoE layer). What DeepSeek-V3's framework transposes at once
 * (mem.c, est_fp8_deepseek). */
double est_largest_gemm_weight(const space_model *m, const space_layout *l,
                               int dense, int moe)
{
    double t = (double)l->tp, h = (double)m->hidden, big = 0;
    if (m->kv_lora_rank > 0) {
        double H = (double)m->heads, rope = (double)m->qk_rope_head_dim;
        double qk = (double)m->qk_nope_head_dim + rope;
        double kvu = (double)(m->qk_nope_head_dim + m->v_head_dim);
        double ql = (double)m->q_lora_rank, kl = (double)m->kv_lora_rank;
        big = fmax(h * (kl + rope), kl * H * kvu / t);
        big = fmax(big, H * (double)m->v_head_dim * h / t);
        big = fmax(big, ql > 0 ? fmax(h * ql, ql * H * qk / t) : h * H * qk / t);
    } else {
        double hd = (double)(m->head_dim ? m->head_dim : m->hidden / m->heads);
        double q = (double)m->heads * hd, kv = (double)m->kv_heads * hd;
        big = fmax(h * (q + 2 * kv) / t, q * h / t);
    }
    double up = space_act_ffn_gemms(m->act) - 1; /* gate and up, or up */
    if (dense) {
        double f = (double)m->ffn_hidden;
        big = fmax(big, fmax(up * h * f / t, h * f / t));
    }
    if (moe && m->num_experts > 0) {
        double fs = (double)(m->shared_experts * m->shared_ffn_hidden);
        double el = (double)(m->num_experts / space_layout_ep(l));
        double fe = (double)m->expert_ffn_hidden / (double)space_layout_etp(l);
        big = fmax(big, fmax(up * h * fs / t, h * fs / t));
        big = fmax(big, el * up * h * fe);
    }
    return big;
}

/* est_state_bytes over `shard` data-parallel ranks. */
static void state_bytes(const space_layout *l, double params, double shard,
                        double *w, double *gr, double *opt)
{
    /* FSDP's gradients take the parameters' dtype, fp32. */
    double gb = l->param_fp32 ? 4 : (double)space_grad_bytes(l);
    *w = 2 * params, *gr = gb * params, *opt = 12 * params;
    /* The precision-aware optimizer and optimizer offload (offload.c). */
    if (l->pa_optimizer || l->opt_offload > 0)
        *opt = est_opt_gpu_bytes(l) * params;
    if (l->param_fp32 && l->zero >= SPACE_ZERO_3) {
        /* No 16-bit shard: the fp32 shard is the parameter (4) and Adam
         * keeps m and v (8); 16-bit copies exist only gathered. */
        *w = 4 * params, *opt = 8 * params;
    }
    if (l->zero >= SPACE_ZERO_1) *opt /= shard;
    if (l->zero >= SPACE_ZERO_2) *gr /= shard;
    if (l->zero >= SPACE_ZERO_3) *w /= shard;
}

void est_state_bytes_shard(const space_layout *l, double params, double shard,
                           double *w, double *gr, double *opt)
{
    state_bytes(l, params, shard, w, gr, opt);
}

void est_state_bytes(const space_layout *l, double params, double *w,
                     double *gr, double *opt)
{
    state_bytes(l, params, (double)(l->dp * l->cp), w, gr, opt);
}

double est_step_bytes(const space_layout *l, double params)
{
    if (l->pa_optimizer || l->opt_offload > 0)
        return est_opt_step_bytes(l) * params
               / (l->zero >= SPACE_ZERO_1 ? (double)(l->dp * l->cp) : 1);
    if (l->param_fp32 || space_grad_bytes(l) >= 4) return 0;
    return 4 * params
           / (l->zero >= SPACE_ZERO_1 ? (double)(l->dp * l->cp) : 1);
}

/* The pipeline rank of the last stage (the final norm, the LM head and
 * the loss): the last rank, or under a V schedule rank 0, which holds
 * stages 0 and 2 PP - 1 (torchtitan pipeline_parallel.py
 * _get_pp_rank_to_stage_indices_mapping, style "v" for ScheduleZBVZeroBubble
 * and ScheduleDualPipeV: zip(range(pp), range(num_stages - 1, pp - 1,
 * -1)), pytorch/torchtitan@b5bcd76c; deepseek-ai/DualPipe@3da1bbea
 * examples/example_dualpipev.py: full_modules[rank] and
 * full_modules[pp_size * 2 - 1 - rank]). */
int64_t est_head_rank(const space_layout *l)
{
    return space_pp_schedule_v(l) ? 0 : l->pp - 1;
}

/* The MTP modules pipeline rank r holds: the head's rank's (head,
 * est_head_rank) under a formula split, or where a layout string puts
 * them. */
double est_rank_mtp(const space_split *sp, int64_t r, int64_t head)
{
    double mtp = !sp->lay ? (r == head ? (double)sp->mtp : 0) : 0;
    for (int64_t j = 0; sp->lay && j < sp->vpp; j++) {
        space_chunk c;
        space_split_chunk(sp, r, j, &c);
        mtp += (double)c.mtp;
    }
    return mtp;
}

void est_stage_params_of(const space_model *m, const space_layout *l,
                         const space_params *p, est_stage_params *o)
{
    double t = (double)l->tp;
    o->layer = (double)(p->per_layer - p->norms_per_layer) / t
               + (double)p->norms_per_layer;
    o->first = (double)(p->embedding) / t + (double)(p->position + p->embed_norm);
    double head = p->lm_head ? (double)p->lm_head
                             : l->pp > 1 ? (double)p->embedding : 0;
    o->last = (double)p->final_norm + head / t;
    o->dense_l = o->moe_l = o->xl = 0;
    if (m->num_experts > 0) {
        double routed = est_routed_expert_params(m);
        double shared = est_shared_expert_params(m);
        double norms = (double)p->norms_per_layer;
        o->dense_l = (double)(p->attn_per_layer + p->dense_mlp_per_layer) / t + norms;
        o->moe_l = ((double)p->attn_per_layer + shared) / t + norms
                   + ((double)p->moe_mlp_per_layer - routed - shared);
        o->xl = routed / (double)(space_layout_ep(l) * space_layout_etp(l));
    }
    o->head = est_head_rank(l);
}

/* The parameters of pipeline rank r's own stages (its chunks of the
 * split sp, their MTP modules, the embedding on rank 0, the final norm
 * and head on the last rank), given est_stage_params_of's pieces of l:
 * the return those replicated over EP,
 * *xparams the routed experts' shard. An MoE model's dense-FFN and MoE
 * layers differ: the MoE layer's router (and its bias, the shared
 * experts' gate) is replicated on the TP ranks (router.py: a plain
 * parameter), its shared experts TP-sharded, its routed experts E / ep on
 * each EP rank, each split over ETP (experts.py). DeepSeek-V3's MTP
 * modules: a layer of the model's kind, the 2h x h projection, two norms.
 * mtp_embed: MTP embeds the shifted tokens again on the rank that runs it;
 * with a pipeline the last stage builds an embedding of its own (GPTModel
 * builds one where pre_process or mtp_process, gpt_model.py,
 * NVIDIA/Megatron-LM@d98e8a64ddf3); a tied head is that embedding, already
 * counted (head). */
double est_rank_params(const space_model *m, const space_layout *l,
                       const space_params *pm, const est_stage_params *pieces,
                       const space_split *sp, int64_t r, int mtp_embed,
                       double *xparams)
{
    const space_params p = *pm;
    double t = (double)l->tp;
    const est_stage_params sp_ = *pieces;
    double layer = sp_.layer, first = sp_.first, last = sp_.last;
    double layers = (double)space_split_rank_layers(sp, r);
    double mtp = est_rank_mtp(sp, r, sp_.head);
    double params = layers * layer;
    *xparams = 0;
    if (m->num_experts > 0) {
        double dense_l = sp_.dense_l, moe_l = sp_.moe_l, xl = sp_.xl;
        double nm = est_split_moe_layers(m, sp, r);
        params = (layers - nm) * dense_l + nm * moe_l;
        *xparams = nm * xl;
        if (mtp > 0) {
            double h = (double)m->hidden;
            params += mtp * (moe_l + 2 * h * h / t + (double)p.final_norm * 2);
            *xparams += mtp * xl;
        }
        if (r == 0) params += first;
        if (r == sp_.head) params += last;
    } else {
        if (r == 0) params += first;
        if (r == sp_.head) params += last;
        if (mtp > 0) {
            double h = (double)m->hidden;
            params += mtp * (layer + 2 * h * h / t + (double)p.final_norm * 2);
        }
    }
    if (mtp_embed && mtp > 0 && r > 0 && p.lm_head)
        params += first;
    return params;
}

/* The GEMM weights of rank r's own stages that Transformer Engine caches
 * fp8 copies of: the layers' (a dense-FFN and an MoE layer apart, MTP's
 * layers as MoE layers), *gx the routed experts' of this rank's EP x ETP
 * shard. */
double est_rank_gemm_weights(const space_model *m, const space_layout *l,
                             const space_split *sp, int64_t r, double *gx)
{
    double t = (double)l->tp;
    double layers = (double)space_split_rank_layers(sp, r);
    double gw = layers * est_layer_gemm_weights_of(m, t, 0);
    *gx = 0;
    if (m->num_experts > 0) {
        double nm = est_split_moe_layers(m, sp, r),
               mtp = est_rank_mtp(sp, r, est_head_rank(l));
        gw = (layers - nm) * est_layer_gemm_weights_of(m, t, 0)
             + (nm + mtp) * est_layer_gemm_weights_of(m, t, 1);
        *gx = (nm + mtp) * expert_gemm_weights(m, l);
    }
    return gw;
}
