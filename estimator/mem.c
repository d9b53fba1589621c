/*
 * mem.c - memory per GPU of a layout: weights, gradients and optimizer
 * states by sharding, activations kept for the backward times the
 * micro-batches in flight on the busiest pipeline stage, and an allowance
 * for what a framework holds besides.
 *
 * Bytes per parameter (Megatron-LM with mixed precision; Megatron-LM
 * docs, "Distributed Optimizer": 18 bytes per parameter without it, 6 +
 * 12 / DP with it): 16-bit weights 2, fp32 gradients 4 (main_grad
 * accumulated in fp32), fp32 master weights + Adam m + v 12. With 16-bit
 * gradients (space_layout.grad_bytes 2: DeepSpeed's fp16 ZeRO) the
 * gradients take 2 and the step an fp32 copy of the rank's shard, 4. The
 * distributed optimizer (ZeRO-1) shards the 12 over the data-parallel
 * ranks (dp x cp: Megatron-Core shards over the data-parallel group with
 * context parallelism), ZeRO-2 also the 4, ZeRO-3 also the 2, which then
 * gathers one layer's weights at a time.
 *
 * Activations per token per layer, bytes, at 16 bits (after Korthikanti et
 * al., "Reducing Activation Recomputation in Large Transformer Models",
 * arXiv 2205.05198, section 4, generalised to GQA, any FFN size and gated
 * FFNs):
 *   attention: norm input 2h, QKV GEMM input 2h (both / t only with
 *     sequence parallelism), q, k, v 2 (q_dim + 2 kv_dim) / t; with flash
 *     attention its output 2 q_dim / t (also the output projection's
 *     input) and the fp32 log-sum-exp 4 heads / t; without, the softmax
 *     output 2 heads s / t and the projection input 2 q_dim / t;
 *   MLP: norm input 2h and FC1 input 2h (/ t with SP), the activation's
 *     input(s) 2f / t (gated: 4f / t) and FC2's input 2f / t.
 * For GPT (q = kv = h, f = 4h) without SP or flash attention this gives
 * h (8 + 24/t) + 2as/t bytes per token without dropout; with dropout the
 * paper's h (10 + 24/t) + 5as/t: the 1-byte masks of the hidden dropout
 * after attention and after the MLP, 2h (/ t with SP), and, without flash
 * attention, the attention dropout's mask and output, 3as/t (flash keeps
 * only its random seed).
 * Selective recompute drops the softmax output (nothing with flash); full
 * recompute keeps only each layer's input (2h, / t with SP) and rebuilds
 * one layer at a time in the backward; torchtitan's op-level selective
 * checkpointing keeps the layer input, q, v, the attention output, the
 * FFN's first GEMM output and (gated) its last, and rebuilds the rest one
 * layer at a time.
 *
 * In flight on pipeline rank r (Megatron-LM schedules.py: warm-up
 * micro-batches pp - r - 1 for 1F1B; (pp - r - 1) x 2 + (vpp - 1) x pp
 * for the interleaved schedule, plus the one in its steady state), each
 * of L / (pp x vpp) layers, capped by the micro-batches of an iteration.
 * The last stage also keeps the fp32 softmax of the vocab-parallel
 * cross-entropy, 4 V / t per token, for one micro-batch.
 */
#include "est.h"

#include <math.h>
#include <string.h>

/* Framework allowance. The CUDA context with its loaded kernels: 1573 MiB
 * on an A100 40GB, as BigScience measured it ("40GB A100 takes 1573MiB
 * for cuda kernels", bigscience-workshop/bigscience,
 * train/tr11-176B-ml/chronicles-prequel.md); taken for every GPU. The
 * caching allocator's fragmentation and the framework's buffers (NCCL
 * communicators, DeepSpeed's 5e8-element reduce and all-gather buckets):
 * 5 % of the tensors held, an ASSUMPTION. BigScience's measured peaks
 * (bench/validate_memory, bench/results/validate_memory.md) are 10-25 %
 * above these estimates, the gap of the allocator and buffers this
 * allowance underestimates; not fitted to them, since they are one
 * framework on one machine. */
#define EST_MEM_CONTEXT_BYTES (1573.0 * 1048576.0)
#define EST_MEM_FRAGMENTATION 0.05

/* Activation bytes per token of one layer kept for the backward. */
static double act_layer_token(const space_model *m, const space_layout *l,
                              int full_layer)
{
    double t = (double)l->tp, h = (double)m->hidden;
    double rep = l->sp ? 1 / t : 1; /* replicated along TP unless SP */
    double hd = (double)(m->head_dim ? m->head_dim : m->hidden / m->heads);
    double q = (double)m->heads * hd, kv = (double)m->kv_heads * hd;
    double f = (double)m->ffn_hidden;
    int gated = space_act_ffn_gemms(m->act) == 3;
    if (l->recompute == SPACE_RECOMPUTE_FULL && !full_layer)
        return 2 * h * rep;
    if (l->recompute == SPACE_RECOMPUTE_SELECTIVE_OP && !full_layer) {
        /* Layer input; the q and v projections' outputs; the attention
         * output (with flash its log-sum-exp, else the probabilities);
         * the FFN's first GEMM output and, gated, the last one's. */
        double a = 2 * h * rep + 2 * q / t + 2 * kv / t + 2 * q / t;
        a += l->flash ? 4 * (double)m->heads / t
                      : 2 * (double)m->heads * (double)l->seq / (double)l->cp / t;
        return a + 2 * f / t + (gated ? 2 * h * rep : 0);
    }
    double a = 4 * h * rep + 2 * (q + 2 * kv) / t;
    if (l->flash) {
        a += 2 * q / t + 4 * (double)m->heads / t;
    } else {
        a += 2 * q / t;
        double as = (double)m->heads * (double)l->seq / (double)l->cp / t;
        if (l->recompute != SPACE_RECOMPUTE_SELECTIVE || full_layer)
            a += (m->attn_dropout > 0 ? 5 : 2) * as;
    }
    if (m->hidden_dropout > 0) a += 2 * h * rep;
    double mlp = 4 * h * rep + (gated ? 4 * f : 2 * f) / t + 2 * f / t;
    return a + mlp;
}

/* Layer-chunks of micro-batches in flight on pipeline rank r. */
static double inflight_layers(const space_model *m, const space_layout *l,
                              int64_t r, int64_t micro)
{
    int64_t pp = l->pp, v = l->vpp > 0 ? l->vpp : 1;
    int64_t chunks = v > 1 ? (pp - r - 1) * 2 + (v - 1) * pp + 1 : pp - r;
    if (chunks > micro * v) chunks = micro * v;
    return (double)chunks * space_stage_layers(m, l, r) / (double)v;
}

void est_state_bytes(const space_layout *l, double params, double *w,
                     double *gr, double *opt)
{
    double shard = (double)(l->dp * l->cp);
    double gb = l->grad_bytes > 0 ? (double)l->grad_bytes : 4;
    *w = 2 * params, *gr = gb * params, *opt = 12 * params;
    if (l->zero >= SPACE_ZERO_1) *opt /= shard;
    if (l->zero >= SPACE_ZERO_2) *gr /= shard;
    if (l->zero >= SPACE_ZERO_3) *w /= shard;
    /* 16-bit gradients: the optimizer steps on an fp32 copy of this
     * rank's shard (all of them without ZeRO). */
    if (gb < 4) *gr += 4 * params / (l->zero >= SPACE_ZERO_1 ? shard : 1);
}

void est_memory_of(const space_model *m, const space_layout *l,
                   est_memory *out)
{
    memset(out, 0, sizeof *out);
    space_params p;
    space_model_params(m, 128 * l->tp, &p);
    double t = (double)l->tp;
    double layer = (double)(p.per_layer - p.norms_per_layer) / t
                   + (double)p.norms_per_layer;
    double first = (double)(p.embedding) / t + (double)(p.position + p.embed_norm);
    /* The last stage: final norm and LM head; a tied head is the
     * embedding itself with one stage, a copy of it with several. */
    double head = p.lm_head ? (double)p.lm_head
                            : l->pp > 1 ? (double)p.embedding : 0;
    double last = (double)p.final_norm + head / t;
    int64_t micro = l->gbs / (l->mbs * l->dp);
    if (micro < 1) micro = 1;
    double tokens = (double)l->mbs * (double)l->seq / (double)l->cp;
    double vp = (double)p.vocab_padded;
    /* Stage 0 and the last stage bound every rank but the middle ones'
     * extra layer of an uneven split (space_stage_layers): rank 1, which
     * has the most micro-batches in flight of those, then too. */
    int64_t ranks[3] = {0, l->pp - 1, 1};
    int n_ranks = l->pp > 2 && space_stage_layers(m, l, 1)
                                   > space_stage_layers(m, l, 0)
                      ? 3
                      : 2;
    for (int s = 0; s < n_ranks; s++) {
        int64_t r = ranks[s];
        double params = space_stage_layers(m, l, r) * layer;
        if (r == 0) params += first;
        if (r == l->pp - 1) params += last;
        double w, gr, opt;
        est_state_bytes(l, params, &w, &gr, &opt);
        if (l->zero >= SPACE_ZERO_3) {
            /* Gathered for compute: one layer and the next, prefetched,
             * or up to zero3_live parameters (at least the largest
             * module, the first FFN GEMM). */
            double live = 2 * layer;
            if (l->zero3_live > 0) {
                double fc1 = (double)m->hidden * (double)m->ffn_hidden
                             * (space_act_ffn_gemms(m->act) == 3 ? 2 : 1) / t;
                live = fmin(live, fmax(l->zero3_live, fc1));
            }
            w += 2 * live;
        }
        double act = tokens * act_layer_token(m, l, 0) * inflight_layers(m, l, r, micro);
        if (l->recompute == SPACE_RECOMPUTE_FULL
            || l->recompute == SPACE_RECOMPUTE_SELECTIVE_OP)
            act += tokens * act_layer_token(m, l, 1); /* the layer being rebuilt */
        if (r == l->pp - 1) act += tokens * 4 * vp / t; /* fp32 softmax of the loss */
        double held = w + gr + opt + act;
        double allow = EST_MEM_CONTEXT_BYTES + EST_MEM_FRAGMENTATION * held;
        if (held + allow > out->total) {
            out->weights = w;
            out->grads = gr;
            out->optimizer = opt;
            out->activations = act;
            out->allowance = allow;
            out->total = held + allow;
            out->params = params;
            out->stage = r;
        }
    }
}
