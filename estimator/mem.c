/*
 * mem.c - memory per GPU of a layout: weights, gradients and optimizer
 * states by sharding, as each framework allocates them, activations kept
 * for the backward times the micro-batches in flight on the busiest
 * pipeline stage, and an allowance for what a framework holds besides.
 * The peak of a stage is the larger of two moments: the backward (states,
 * activations, ZeRO-3's gathered layers) and the optimizer step (states
 * and the step's transient copies; the activations are freed by then).
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
 * Under Transformer Engine's fp8 the GEMM inputs are saved in fp8 (1 byte:
 * QKV's and FC1's h, the projection's q_dim / t beside flash attention's
 * 16-bit output, FC2's f / t); norm inputs, q, k, v and the activation's
 * inputs stay 16-bit.
 * Selective recompute drops the softmax output (nothing with flash); full
 * recompute keeps only each layer's input (2h, / t with SP) and rebuilds
 * one layer at a time in the backward (by groups of N with
 * --recompute-method uniform, or only the first N layers of each model
 * chunk with block, act_rank_token); torchtitan's op-level selective
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
 * (bench/validate_memory, bench/results/validate_memory.md) are 11-45 %
 * (24 % on average) above these estimates, the gap of the allocator's
 * reserved pool and the buffers this allowance underestimates; not fitted
 * to them, since they are one framework on one machine. */
#define EST_MEM_CONTEXT_BYTES (1573.0 * 1048576.0)
#define EST_MEM_FRAGMENTATION 0.05

/* Bytes a GEMM input takes as saved for the backward: fp8 where
 * Transformer Engine quantises it (TE 1.x saves the fp8 input or its fp8
 * transpose, transformer_engine/pytorch/module/linear.py, _Linear.forward,
 * NVIDIA/TransformerEngine@e79d915aa0ae (v1.9); layernorm_linear.py saves
 * its fp8 ln_out; TE 2.x saves the quantised input, column-wise data only
 * where it need not be gathered, linear.py, NVIDIA/TransformerEngine@
 * 3cd6870ceb80 (v2.4)), else 16 bits. */
static double gemm_input_bytes(const space_layout *l)
{
    return l->dtype == HW_FP8 && l->fp8_lib == SPACE_FP8_LIB_TE ? 1 : 2;
}

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
    /* The norm inputs stay 16-bit; the GEMM inputs as gemm_input_bytes
     * says (Megatron-Core: TELayerNormColumnParallelLinear for QKV and
     * FC1, TERowParallelLinear for the output projection and FC2). */
    double gin = gemm_input_bytes(l);
    double a = (2 + gin) * h * rep + 2 * (q + 2 * kv) / t;
    if (l->flash) {
        /* Flash attention keeps its 16-bit output, which is the output
         * projection's input: one tensor at 16 bits, the output and its
         * fp8 copy under Transformer Engine. */
        a += 2 * q / t + (gin < 2 ? gin * q / t : 0) + 4 * (double)m->heads / t;
    } else {
        a += gin * q / t;
        double as = (double)m->heads * (double)l->seq / (double)l->cp / t;
        if (l->recompute != SPACE_RECOMPUTE_SELECTIVE || full_layer)
            a += (m->attn_dropout > 0 ? 5 : 2) * as;
    }
    if (m->hidden_dropout > 0) a += 2 * h * rep;
    double mlp = (2 + gin) * h * rep + (gated ? 4 * f : 2 * f) / t
                 + gin * f / t;
    return a + mlp;
}

/* Model chunks of micro-batches in flight on pipeline rank r. */
static double inflight_chunks(const space_layout *l, int64_t r, int64_t micro)
{
    int64_t pp = l->pp, v = l->vpp > 0 ? l->vpp : 1;
    int64_t chunks = v > 1 ? (pp - r - 1) * 2 + (v - 1) * pp + 1 : pp - r;
    if (chunks > micro * v) chunks = micro * v;
    return (double)chunks;
}

/* Activation bytes per token on pipeline rank r: what each model chunk
 * keeps per micro-batch in flight, and the layers rebuilt at once in the
 * backward. Full recomputation (Megatron-Core TransformerBlock.
 * _checkpointed_forward, NVIDIA/Megatron-LM@d580efc68a9f, core_v0.12.0;
 * chunk = the block's layers, one model chunk): uniform keeps the input
 * of each group of N layers and rebuilds a group at a time (N = 1:
 * Megatron-LM 2021's --checkpoint-num-layers default, v2.5); block keeps
 * the input of each of the chunk's first N layers, everything of the
 * others, and rebuilds one layer at a time. */
static double act_rank_token(const space_model *m, const space_layout *l,
                             int64_t r, int64_t micro)
{
    double v = (double)(l->vpp > 0 ? l->vpp : 1);
    double chunk = space_stage_layers(m, l, r) / v;
    double kept_in = act_layer_token(m, l, 0), full = act_layer_token(m, l, 1);
    double per_chunk, rebuilt = 0;
    if (l->recompute == SPACE_RECOMPUTE_FULL
        && l->recompute_method == SPACE_RECOMPUTE_BLOCK
        && l->recompute_layers > 0) {
        double n = space_recompute_layers(m, l, r) / v;
        per_chunk = n * kept_in + (chunk - n) * full;
        rebuilt = n > 0 ? full : 0;
    } else if (l->recompute == SPACE_RECOMPUTE_FULL) {
        double n = (double)(l->recompute_layers > 1 ? l->recompute_layers : 1);
        /* groups of n, the last one shorter (an average chunk of an
         * uneven split keeps its average with groups of one) */
        per_chunk = (n > 1 ? ceil(chunk / n) : chunk) * kept_in;
        rebuilt = fmin(n, chunk) * full;
    } else {
        per_chunk = chunk * kept_in;
        if (l->recompute == SPACE_RECOMPUTE_SELECTIVE_OP) rebuilt = full;
    }
    return inflight_chunks(l, r, micro) * per_chunk + rebuilt;
}

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

void est_state_bytes(const space_layout *l, double params, double *w,
                     double *gr, double *opt)
{
    double shard = (double)(l->dp * l->cp);
    /* FSDP's gradients take the parameters' dtype, fp32. */
    double gb = l->param_fp32 ? 4 : (double)space_grad_bytes(l);
    *w = 2 * params, *gr = gb * params, *opt = 12 * params;
    if (l->param_fp32 && l->zero >= SPACE_ZERO_3) {
        /* No 16-bit shard: the fp32 shard is the parameter (4) and Adam
         * keeps m and v (8); 16-bit copies exist only gathered. */
        *w = 4 * params, *opt = 8 * params;
    }
    if (l->zero >= SPACE_ZERO_1) *opt /= shard;
    if (l->zero >= SPACE_ZERO_2) *gr /= shard;
    if (l->zero >= SPACE_ZERO_3) *w /= shard;
}

double est_step_bytes(const space_layout *l, double params)
{
    if (l->param_fp32 || space_grad_bytes(l) >= 4) return 0;
    return 4 * params
           / (l->zero >= SPACE_ZERO_1 ? (double)(l->dp * l->cp) : 1);
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
        double layers = space_stage_layers(m, l, r);
        double params = layers * layer;
        if (r == 0) params += first;
        if (r == l->pp - 1) params += last;
        double w, gr, opt, live = 0;
        est_state_bytes(l, params, &w, &gr, &opt);
        if (l->zero >= SPACE_ZERO_3) {
            /* Gathered for compute: one layer and the next, prefetched,
             * or up to zero3_live parameters (at least the largest
             * module, the first FFN GEMM). */
            double n = 2 * layer;
            if (l->zero3_live > 0) {
                double fc1 = (double)m->hidden * (double)m->ffn_hidden
                             * (space_act_ffn_gemms(m->act) == 3 ? 2 : 1) / t;
                n = fmin(n, fmax(l->zero3_live, fc1));
            }
            live = 2 * n;
        }
        /* Transformer Engine's fp8 weight workspaces: the fp8 weight and
         * its transpose (row- and column-wise data), 2 bytes per GEMM
         * weight, cached from the first micro-batch to the next step
         * (Megatron-Core passes is_first_microbatch: cache_name "weight"
         * in get_fp8_workspace / get_weight_workspace, linear.py, TE v1.9
         * and v2.4), per module, so ZeRO-3 does not shard them. The LM
         * head and embedding stay 16-bit. */
        double fp8 = 0;
        if (l->dtype == HW_FP8 && l->fp8_lib == SPACE_FP8_LIB_TE) {
            double gw = layers * layer_gemm_weights(m, t);
            if (l->fp8_params) {
                /* --fp8-param-gather: the GEMM weights themselves are
                 * fp8, one byte in the parameter buffer, and only their
                 * transpose is cached, one more (Megatron-Core
                 * distributed_data_parallel.py: a uint8 param buffer;
                 * TE's update_usage on the first micro-batch; Megatron-LM
                 * core_v0.14.0). */
                w -= gw / (l->zero >= SPACE_ZERO_3
                               ? (double)(l->dp * l->cp) : 1);
                fp8 = gw;
            } else {
                fp8 = 2 * gw;
            }
        }
        double act = tokens * act_rank_token(m, l, r, micro);
        if (r == l->pp - 1) act += tokens * 4 * vp / t; /* fp32 softmax of the loss */
        double step = est_step_bytes(l, params);
        /* The backward holds the activations and ZeRO-3's gathered
         * layers; the optimizer step, after both are freed, its fp32
         * gradient copy instead (the frameworks free it before the next
         * forward: Megatron-LM's zero_grad(set_to_none) at the start of
         * train_step, DeepSpeed's "get rid of the fp32 gradients" after
         * the step). */
        double held_b = w + live + gr + opt + fp8 + act;
        double held_s = w + gr + opt + fp8 + step;
        double bwd = held_b + EST_MEM_CONTEXT_BYTES
                     + EST_MEM_FRAGMENTATION * held_b;
        double stp = held_s + EST_MEM_CONTEXT_BYTES
                     + EST_MEM_FRAGMENTATION * held_s;
        double total = fmax(bwd, stp);
        if (total > out->total) {
            out->weights = w + live;
            out->grads = gr;
            out->optimizer = opt;
            out->fp8_weights = fp8;
            out->activations = act;
            out->step_transient = step;
            out->peak_in_step = stp > bwd;
            out->allowance = (stp > bwd ? stp - held_s : bwd - held_b);
            out->backward_peak = bwd;
            out->step_peak = stp;
            out->total = total;
            out->params = params;
            out->stage = r;
        }
    }
}
