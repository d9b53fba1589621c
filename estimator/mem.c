/*
 * mem.c - memory per GPU of a layout: weights, gradients and optimizer
 * states by sharding, as each framework allocates them, activations kept
 * for the backward times the micro-batches in flight on the busiest
 * pipeline stage, and what the runtime holds besides (the caching
 * allocator's cache, the CUDA context, NCCL's buffers, workspaces; below).
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
 *
 * Memory savers (docs/memory.md, "Memory savers"): the precision-aware
 * optimizer's and optimizer offload's states per parameter are
 * offload.c's (est_opt_gpu_bytes, est_opt_step_bytes); Transformer
 * Engine's layer offload keeps L - N layers' activations, fine-grained
 * offloading drops its modules' groups but two layers' (act_rank_token);
 * micro-batch groups of N hold (v - 1) x N warm-up chunks
 * (inflight_chunks); est_memory.host is what leaves for the host.
 * Megatron-Core's own buffers (docs/memory.md, "Megatron-Core's own
 * buffers"): Megatron-FSDP's gathered units, kept-gathered outside
 * parameters and unsharded gradient buckets (mfsdp_buffers); the MoE
 * dispatcher's copies while a layer runs (moe_buffers), its permutation
 * maps kept per layer (moe_permute_state) and DeepEP's or HybridEP's
 * buffers for the whole run (moe_comm_bytes); CUDA graphs' pool, held
 * through the optimizer step (graph_pool_token); Transformer Engine's
 * fused cross-entropy per version. Not here: the step time CUDA graphs
 * save (issue 29).
 */
#include "est.h"

#include <math.h>
#include <string.h>

/* ---- what the runtime holds besides the tensors (docs/memory.md) ----
 *
 * Three levels, each what one measurement shows:
 *   allocated: the live tensors (torch.cuda.max_memory_allocated);
 *   reserved:  the caching allocator's segments (max_memory_reserved):
 *              allocated plus its cached, unused bytes;
 *   device:    what nvidia-smi shows: reserved plus the CUDA context and
 *              NCCL's buffers, which are allocated outside the allocator.
 * What must fit is the live tensors of the larger moment with the context
 * and NCCL's buffers (the allocator gives its cache back before it fails,
 * est_memory_settle); what a measurement after a step shows is more
 * (est_memory.seen_reserved, seen_device). */

/* The caching allocator's cached but unused bytes at a peak, as a share of
 * the main stream's live tensors (fragmentation: freed blocks of other
 * sizes, block rounding), per allocator setting: with expandable segments
 * (one virtual segment per stream, mapped in 2 MiB pages and grown at its
 * end) and without (a cudaMalloc per segment, whose blocks are split but
 * never merged with another segment's; c10/cuda/CUDACachingAllocator.cpp,
 * PyTorch 2.x). What other
 * streams' pools hold is a mechanism of its own (est_memory.stream_pool).
 * Each fitted to the max_memory_reserved and nvidia-smi peaks of the runs
 * that ran with that setting (bench/validate_memory, rerunnable, with
 * each source left out in turn: bench/results/validate_memory.md). */
#define EST_MEM_CACHE_EXPANDABLE 0.1400
#define EST_MEM_CACHE_SEGMENTS 0.1525

/* Bytes an NVFP4 element takes: e2m1, and one e4m3 scale per 16. */
#define NVFP4_BYTES (0.5 + 1.0 / 16)

/* Bytes one quantised copy of an fp8 tensor takes per element under
 * Transformer Engine: one, and with MXFP8 one e8m0 scale per 32 elements
 * of its row (or column) direction (MXFP8Quantizer,
 * transformer_engine/pytorch/csrc/quantizer.cpp,
 * NVIDIA/TransformerEngine@d0067d0da); blockwise's fp32 scale per 128 x
 * 128 block of a weight (and per 1 x 128 of an activation) is below
 * 0.1 %, left out. */
static double fp8_copy_bytes(const space_layout *l)
{
    return l->fp8_recipe == SPACE_FP8_MXFP8 ? 1 + 1.0 / 32 : 1;
}

/* Bytes a GEMM input takes as saved for the backward: fp8 where
 * Transformer Engine quantises it (TE 1.x saves the fp8 input or its fp8
 * transpose, transformer_engine/pytorch/module/linear.py, _Linear.forward,
 * NVIDIA/TransformerEngine@e79d915aa0ae (v1.9); layernorm_linear.py saves
 * its fp8 ln_out; TE 2.x saves the quantised input, column-wise data only
 * where it need not be gathered, linear.py, NVIDIA/TransformerEngine@
 * 3cd6870ceb80 (v2.4)), else 16 bits. */
static double gemm_input_bytes(const space_layout *l)
{
    if (l->fp8_lib != SPACE_FP8_LIB_TE) return 2;
    if (l->dtype == HW_FP8) return fp8_copy_bytes(l);
    /* NVFP4 (TE NVFP4BlockScaling): the quantised input kept for the
     * weight gradient, half a byte an element and an e4m3 scale per 16
     * (transformer_engine/pytorch/tensor/nvfp4_tensor.py; arXiv
     * 2509.25149, section 3). */
    if (l->dtype == HW_FP4) return NVFP4_BYTES;
    return 2;
}

/* The permutations' index maps an MoE layer keeps for its backward, bytes
 * per token of the rank's T (NVIDIA/Megatron-LM@d98e8a64ddf3
 * moe/moe_utils.py permute and sort_chunks_by_idxs, token_dispatcher.py;
 * Transformer Engine's fused kernels, transformer_engine/pytorch/
 * permutation.py and triton/permutation.py make_row_id_map,
 * NVIDIA/TransformerEngine@v2.8). Unfused (PyTorch's index_select), a
 * permutation keeps its sorted indices, 8 bytes (int64) per row it makes;
 * fused (--moe-permute-fusion), a row map of int32 per token and
 * 2 x experts + 1, and a chunk sort an int32 per row. The all-to-all
 * dispatcher permutes the rank's tokens over all E experts before the
 * exchange (its top_k rows per token) and sorts the received rows by
 * local expert after it (unfused: split and concatenate, no index kept);
 * the flex (DeepEP, HybridEP) and all-gather dispatchers permute the
 * received tokens, or every gathered token, over the E / ep local experts.
 * The received rows' own tensors are FC1's input (act_moe_ffn_token). */
static double moe_permute_state(const space_model *m, const space_layout *l)
{
    double rep = l->sp ? 1 / (double)l->tp : 1;
    double k = (double)m->top_k, E = (double)m->num_experts;
    double ep = (double)space_layout_ep(l), etp = (double)space_layout_etp(l);
    double imb = ep > 1 ? est_moe_imbalance(m, l) : 1;
    double rows = etp * k * imb * rep, el = E / ep;
    int fused = l->moe_permute_fusion;
    switch (l->moe_dispatcher) {
    case SPACE_MOE_ALLGATHER: /* every token of the EP x ETP group */
        return fused ? 4 * (2 * el + 1) * ep * etp * rep : 8 * rows;
    case SPACE_MOE_FLEX: {
        /* the tokens received: a token's k choices that land on this
         * rank's experts arrive once (k el / E of them on average) */
        double per = fmax(1, k * el / E);
        return fused ? 4 * (2 * el + 1) * rows / per : 8 * rows;
    }
    default:
        return fused ? 4 * (2 * E + 1) * rep + (el > 1 ? 4 * rows : 0)
                     : 8 * k * rep;
    }
}

/* An MoE layer's FFN activations per token of the rank's T, kept for the
 * backward (Megatron-Core with Transformer Engine, NVIDIA/Megatron-LM@
 * d98e8a64ddf3, megatron/core/transformer/moe/): the norm's input (2h)
 * and its output, the router's and the shared experts' input (gin h),
 * both / t with SP; the router's fp32 scores and its 16-bit logits, 6 E
 * per routed token (moe_utils.py, topk_routing_with_score_function: the
 * fp32 softmax or sigmoid of the logits); the shared experts as a dense FFN of S f_s, TP-sharded; the
 * routed experts (experts.py TEGroupedMLP) over the rows this rank
 * receives, etp x top_k / t per token (T / t tokens routed on each rank
 * with SP), times the imbalance on the busiest EP rank: FC1's input
 * (gin h), FC1's output (gated 4, else 2, x f_e / etp), the activation's
 * output, FC2's input (gin f_e / etp), a fp32 probability per row. The
 * dispatch's buffers (the all-to-all's output, the ETP gather's, the
 * sorted copy) live within one layer's forward or backward: moe_buffers.
 * Selective recomputation's modules rc (space_recompute_modules,
 * Megatron-Core transformer_layer.py and experts.py): "moe" keeps only
 * the MoE layer's input, the norm's output at 16 bits, and the norm's own
 * input; "layernorm" frees the norm's output ("moe" and "layernorm": the
 * norm's input alone); "moe_act" frees the activation's output, which is
 * FC2's saved input at 16 bits (in fp8 FC2 keeps its own fp8 copy, so
 * nothing is freed); "shared_experts" keeps the shared experts' input
 * only, which the router keeps too. */
static double act_moe_ffn_token(const space_model *m, const space_layout *l,
                                unsigned rc, double *router_out)
{
    double t = (double)l->tp, h = (double)m->hidden;
    double rep = l->sp ? 1 / t : 1;
    double gin = gemm_input_bytes(l);
    int gated = space_act_ffn_gemms(m->act) == 3;
    double fs = (double)(m->shared_experts * m->shared_ffn_hidden);
    double etp = (double)space_layout_etp(l), fe = (double)m->expert_ffn_hidden / etp;
    double imb = space_layout_ep(l) > 1 ? est_moe_imbalance(m, l) : 1;
    double rows = etp * (double)m->top_k * imb * rep;
    double mask = m->hidden_dropout > 0 ? h * rep : 0; /* the residual's */
    if (rc & SPACE_RC_MOE) {
        if (router_out) *router_out = 0;
        return 2 * h * rep + (rc & SPACE_RC_LAYERNORM ? 0 : 2 * h * rep) + mask;
    }
    double a = (2 + (rc & SPACE_RC_LAYERNORM ? 0 : gin)) * h * rep
               + 6 * (double)m->num_experts * rep;
    if (fs > 0 && !(rc & SPACE_RC_SHARED_EXPERTS))
        a += ((gated ? 4 : 2) * fs + gin * fs) / t;
    if (router_out) *router_out = a; /* up to the router, shared experts */
    double fc2_in = rc & SPACE_RC_MOE_ACT && gin == 2 ? 0 : gin * fe;
    a += rows * (gin * h + (gated ? 4 : 2) * fe + fc2_in + 4);
    return a + mask + moe_permute_state(m, l);
}

/* Bytes per token of one MoE layer's dispatch and combine buffers beyond
 * what the layer keeps, alive only while that layer runs (forward or
 * backward; counted once, like a rebuilt layer), at 16 bits per row of h
 * (NVIDIA/Megatron-LM@d98e8a64ddf3 moe/moe_layer.py dispatch and combine,
 * token_dispatcher.py, moe_utils.py). rows = the rows the rank's experts
 * receive per token of its T (etp x top_k x imbalance, / t with SP). The
 * rows sorted by local expert are FC1's input, which the layer keeps at 16
 * bits (act_moe_ffn_token): transient only where FC1 keeps its own fp8
 * copy instead. Per dispatcher, the larger of the dispatch and the combine:
 * - all-to-all: the exchange's output (rows / etp), its gather over ETP
 *   (rows, with etp > 1) and the sorted copy; the combine holds FC2's
 *   output and its copy in the exchange's order (2 rows);
 * - flex (DeepEP, HybridEP): the received rows, then their copy sorted by
 *   local expert; the combine 2 rows, as above;
 * - all-gather: every token of the EP x ETP group (ep x etp per token),
 *   then the local experts' rows; the combine FC2's output and its
 *   scatter back to the gathered tokens.
 * The permutation ahead of an all-to-all is freed once the exchange has
 * its output (the layer's locals are reassigned). */
static double moe_buffers(const space_model *m, const space_layout *l)
{
    if (m->num_experts <= 0) return 0;
    double rep = l->sp ? 1 / (double)l->tp : 1;
    double etp = (double)space_layout_etp(l), ep = (double)space_layout_ep(l);
    double imb = ep > 1 ? est_moe_imbalance(m, l) : 1;
    double rows = etp * (double)m->top_k * imb * rep;
    double sorted = gemm_input_bytes(l) < 2 ? rows : 0;
    double disp, comb = 2 * rows;
    switch (l->moe_dispatcher) {
    case SPACE_MOE_ALLGATHER: {
        double gathered = ep * etp * rep;
        disp = gathered + sorted;
        comb = rows + gathered;
        break;
    }
    case SPACE_MOE_FLEX:
        disp = rows + sorted;
        break;
    default:
        disp = rows / etp + (etp > 1 ? rows : 0) + sorted;
    }
    return 2 * (double)m->hidden * fmax(disp, comb);
}

/* Activation bytes per token of one layer kept for the backward: a
 * dense-FFN layer, or with moe an MoE layer. *ffn_out (where not NULL):
 * the part of them its FFN (dense MLP or MoE layer, with the residual's
 * dropout mask after it) keeps, the rest being the attention's;
 * *router_out: of an MoE layer's FFN part, what it keeps up to its router
 * with the shared experts (CUDA graphs' scopes, graph_pool_token). */
static double act_layer_split(const space_model *m, const space_layout *l,
                              int full_layer, int moe, double *ffn_out,
                              double *router_out)
{
    double ffn_dummy, router_dummy;
    if (!ffn_out) ffn_out = &ffn_dummy;
    if (!router_out) router_out = &router_dummy;
    *ffn_out = 0, *router_out = 0;
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
         * the FFN's first GEMM output and, gated, the last one's, which
         * torchtitan's policy saves (every second matrix product: wq, wv,
         * w1, w2; torchtitan/distributed/activation_checkpoint.py) and
         * eager autograd keeps. Compiled, the partitioner saves only what
         * the backward reads, and no backward reads w2's output (it goes
         * into the residual sum): 2h less (torchao's torchtitan Llama 3 8B
         * runs with the compiled loss, bench/results/validate_memory.md;
         * the project's H100 steps are within 1 % either way). */
        double a = 2 * h * rep + 2 * q / t + 2 * kv / t + 2 * q / t;
        a += l->flash ? 4 * (double)m->heads / t
                      : 2 * (double)m->heads * (double)l->seq / (double)l->cp / t;
        *ffn_out = 2 * f / t + (gated && l->eager ? 2 * h * rep : 0);
        return a + 2 * f / t + (gated && l->eager ? 2 * h * rep : 0);
    }
    /* The norm inputs stay 16-bit; the GEMM inputs as gemm_input_bytes
     * says (Megatron-Core: TELayerNormColumnParallelLinear for QKV and
     * FC1, TERowParallelLinear for the output projection and FC2). */
    double gin = gemm_input_bytes(l);
    /* Selective recomputation's modules (act_moe_ffn_token; MLA's input
     * norm is a module of its own, "layernorm" frees its output, the down
     * projections' input; "mla_up_proj" frees the up projections' q, k
     * and v; "mlp" keeps the dense MLP's input only). */
    unsigned rc = full_layer ? 0 : space_recompute_modules(l);
    double a;
    if (m->kv_lora_rank > 0) {
        /* MLA (multi_latent_attention.py): the norm's input and the down
         * projections' shared input, the latents' norm inputs and the up
         * projections' inputs (/ t with SP, as the rank computes them),
         * then q and k of nope + rope and v per head; the attention's
         * output is heads x v_head_dim. */
        double H = (double)m->heads, ql = (double)m->q_lora_rank;
        double qk = (double)(m->qk_nope_head_dim + m->qk_rope_head_dim);
        a = (2 + (rc & SPACE_RC_LAYERNORM ? 0 : gin)) * h * rep
            + (2 + gin) * (ql + (double)m->kv_lora_rank) * rep
            + (rc & SPACE_RC_MLA_UP_PROJ
                   ? 0
                   : 2 * H * (2 * qk + (double)m->v_head_dim) / t);
        q = H * (double)m->v_head_dim;
    } else {
        a = (2 + gin) * h * rep + 2 * (q + 2 * kv) / t;
    }
    if (l->flash) {
        /* Flash attention keeps its 16-bit output, which is the output
         * projection's input: one tensor at 16 bits, the output and its
         * fp8 copy under Transformer Engine. */
        a += 2 * q / t + (gin < 2 ? gin * q / t : 0) + 4 * (double)m->heads / t;
    } else {
        a += gin * q / t;
        double as = (double)m->heads * (double)l->seq / (double)l->cp / t;
        if (!(rc & SPACE_RC_CORE_ATTN))
            a += (m->attn_dropout > 0 ? 5 : 2) * as;
    }
    if (moe) {
        if (m->hidden_dropout > 0) a += h * rep;
        *ffn_out = act_moe_ffn_token(m, l, rc, router_out);
        return a + *ffn_out;
    }
    if (m->hidden_dropout > 0) a += 2 * h * rep;
    double mlp = (2 + gin) * h * rep + (gated ? 4 * f : 2 * f) / t
                 + gin * f / t;
    if (l->eager) {
        /* PyTorch eager code (torchtitan or PyTorch FSDP without
         * torch.compile): SwiGLU as silu(w1 x) * w3 x keeps the product
         * and silu's output too, 2f more than the fused count. Before the
         * fused RMSNorm (l->rmsnorm_composite) the composite kernel
         * upcasts its input and autograd keeps the fp32 copy, 4h per norm
         * more (ATen rms_norm, torch.nn.RMSNorm, which torchtitan uses
         * since pytorch/torchtitan@3b39d7ab0, 2025-03). Measured on an
         * H100 with PyTorch 2.11 (bench/data/memsample_h100): 16h + 8f
         * per token and layer without recomputation, this count exactly. */
        if (m->norm == SPACE_NORM_RMSNORM && l->rmsnorm_composite)
            a += 2 * 4 * h * rep;
        if (gated) mlp += 2 * f / t;
    }
    if (l->gqa_repeat_kv && kv < q) {
        /* torchtitan's Llama before enable_gqa repeats the grouped keys and
         * values to every head before SDPA (repeat_kv in Attention.forward,
         * torchtitan/models/llama3/model/model.py, pytorch/torchtitan@
         * 6fc499f6, 2025-08; removed by ff0829c10, 2026-01-27), and flash
         * attention keeps the repeated copies: 2 x 2(q - kv) more. Measured
         * (bench/data/memsample_h100, w4k-L4-s4096-b1 with and without
         * repeating, h 4096, 32 heads, 8 key-value heads): 192 MiB apart,
         * 3h per token and layer, this count exactly. */
        a += 4 * (q - kv) / t;
    }
    if (rc & SPACE_RC_MLP) mlp = 2 * h * rep; /* its input, the residual */
    *ffn_out = mlp + (m->hidden_dropout > 0 ? h * rep : 0);
    return a + mlp;
}

static double act_layer_token(const space_model *m, const space_layout *l,
                              int full_layer, int moe)
{
    return act_layer_split(m, l, full_layer, moe, NULL, NULL);
}

/* Bytes per token of one layer (moe: an MoE layer) the fine-grained
 * offloading modules of l would move to the host, every group of them
 * (Megatron-Core's fine-grained activation offloading, NVIDIA/Megatron-LM@
 * d98e8a64ddf3: each module's group holds the tensors saved for the
 * backward between its group_start and group_offload, attention.py,
 * multi_latent_attention.py, transformer_layer.py, moe/experts.py), in
 * act_layer_token's and act_moe_ffn_token's terms:
 *   attn_norm: the input norm's input, 2h (/ t with SP), where the norm is
 *     a module of its own (MLA; Transformer Engine fuses it into the QKV
 *     projection otherwise, an IdentityOp that is skipped);
 *   qkv_linear: that fused norm's input and the GEMM's input,
 *     (2 + gin) h; MLA: the down projections' input and the latents'
 *     norms and up projections' inputs;
 *   core_attn: q, k, v, and flash attention's output and log-sum-exp (or
 *     the unfused probabilities);
 *   attn_proj: the output projection's own saved input where it is not
 *     the attention output itself (its fp8 copy; unfused: its input);
 *   mlp_norm: the pre-MLP norm's input, 2h, where it is a module (MoE
 *     layers; fused into FC1 in dense ones);
 *   expert_fc1: the routed rows' FC1 input; moe_act: the activation's
 *     input and FC2's, and the fp32 probability per row (its group closes
 *     after FC2).
 * Dense MLPs have no module to offload. Tensors under the 1 Mi elements
 * of min_offloaded_tensor_size are not told apart (a layer's are larger at
 * the sequence lengths trained). */
static double offload_modules_token(const space_model *m,
                                    const space_layout *l, int moe)
{
    unsigned om = l->offload_modules;
    if (!om) return 0;
    double t = (double)l->tp, h = (double)m->hidden;
    double rep = l->sp ? 1 / t : 1;
    double hd = (double)(m->head_dim ? m->head_dim : m->hidden / m->heads);
    double q = (double)m->heads * hd, kv = (double)m->kv_heads * hd;
    double gin = gemm_input_bytes(l);
    unsigned rc = space_recompute_modules(l);
    double a = 0;
    if (m->kv_lora_rank > 0) {
        double H = (double)m->heads, ql = (double)m->q_lora_rank;
        double qk = (double)(m->qk_nope_head_dim + m->qk_rope_head_dim);
        if (om & SPACE_OFF_ATTN_NORM) a += 2 * h * rep;
        if (om & SPACE_OFF_QKV_LINEAR)
            a += (rc & SPACE_RC_LAYERNORM ? 0 : gin) * h * rep
                 + (2 + gin) * (ql + (double)m->kv_lora_rank) * rep;
        if (om & SPACE_OFF_CORE_ATTN && !(rc & SPACE_RC_MLA_UP_PROJ))
            a += 2 * H * (2 * qk + (double)m->v_head_dim) / t;
        q = H * (double)m->v_head_dim;
    } else {
        if (om & SPACE_OFF_QKV_LINEAR) a += (2 + gin) * h * rep;
        if (om & SPACE_OFF_CORE_ATTN) a += 2 * (q + 2 * kv) / t;
    }
    if (om & SPACE_OFF_CORE_ATTN) {
        if (l->flash) {
            a += 2 * q / t + 4 * (double)m->heads / t;
        } else if (!(rc & SPACE_RC_CORE_ATTN)) {
            double as = (double)m->heads * (double)l->seq / (double)l->cp / t;
            a += (m->attn_dropout > 0 ? 5 : 2) * as;
        }
    }
    if (om & SPACE_OFF_ATTN_PROJ)
        a += l->flash ? (gin < 2 ? gin * q / t : 0) : gin * q / t;
    if (moe && m->num_experts > 0 && !(rc & SPACE_RC_MOE)) {
        int gated = space_act_ffn_gemms(m->act) == 3;
        double etp = (double)space_layout_etp(l);
        double fe = (double)m->expert_ffn_hidden / etp;
        double imb = space_layout_ep(l) > 1 ? est_moe_imbalance(m, l) : 1;
        double rows = etp * (double)m->top_k * imb * rep;
        if (om & SPACE_OFF_MLP_NORM) a += 2 * h * rep;
        if (om & SPACE_OFF_EXPERT_FC1) a += rows * gin * h;
        if (om & SPACE_OFF_MOE_ACT) {
            double fc2_in = rc & SPACE_RC_MOE_ACT && gin == 2 ? 0 : gin * fe;
            a += rows * ((gated ? 4 : 2) * fe + fc2_in + 4);
        }
    }
    return a;
}

/* The share of fine-grained offload groups offloaded
 * (--activation-offload-fraction; 0 read as 1). */
static double offload_share(const space_layout *l)
{
    return l->offload_fraction > 0 ? l->offload_fraction : 1;
}

double est_offload_layer_token(const space_model *m, const space_layout *l,
                               int moe)
{
    if (l->act_offload_layers > 0) return act_layer_token(m, l, 0, moe);
    return offload_share(l) * offload_modules_token(m, l, moe);
}

/* Model chunks of micro-batches in flight on rank r under the schedules
 * other than 1F1B and interleaving (space_pp_schedule), or `chunks` (the
 * 1F1B or interleaved count) where l runs one of those. */
int64_t est_schedule_chunks(const space_layout *l, int64_t r, int64_t chunks)
{
    int64_t pp = l->pp, v = l->vpp > 0 ? l->vpp : 1;
    switch (l->pp_schedule) {
    case SPACE_PP_ZB1P:
        /* ZB-H1 keeps 1F1B's peak (Qi et al., arXiv 2401.10241, section
         * 2.1: the W passes delayed by the warm-up, every rank the same
         * micro-batches in flight as under 1F1B). Looped (PyTorch's
         * ScheduleInterleavedZeroBubble, _get_warmup_ops with
         * multiply_factor 1): (v - 1) PP + (PP - 1 - r) forwards of the
         * warm-up, the next one's with them. */
        return v > 1 ? (v - 1) * pp + (pp - 1 - r) + 1 : pp - r;
    case SPACE_PP_ZBV:
        /* ZB-V: 1F1B's activation memory (the first rank's PP
         * micro-batches of a rank's layers: 2 PP chunks of half of them)
         * on every rank, its chunks balanced (arXiv 2401.10241 section 6;
         * Sea AI Lab's comparison table, activations 1x of 1F1B). */
        return 2 * pp;
    case SPACE_PP_DUALPIPE:
        /* DeepSeek-V3 report Table 2 (deepseek-ai/DualPipe README):
         * PP + 1 micro-batches of a stage, the rank's two stages together. */
        return pp + 1;
    case SPACE_PP_DUALPIPEV:
        /* DualPipe's PP + 1 over its 2 PP stages of half a rank each. */
        return 2 * pp + 1;
    default:
        return chunks;
    }
}

/* Model chunks of micro-batches in flight on pipeline rank r. */
static double inflight_chunks(const space_layout *l, int64_t r, int64_t micro)
{
    int64_t pp = l->pp, v = l->vpp > 0 ? l->vpp : 1;
    /* Micro-batch groups of N (--microbatch-group-size-per-virtual-
     * pipeline-stage): (v - 1) x N of the warm-up (schedules.py,
     * get_pp_rank_microbatches); N = PP by default. */
    int64_t chunks = v > 1 ? (pp - r - 1) * 2 + (v - 1) * space_mb_group(l) + 1
                           : pp - r;
    /* The 1F1B A2A overlap runs one forward more in the warm-up
     * (Megatron-LM@d98e8a64ddf3 schedules.py get_pp_rank_microbatches) */
    if (v > 1 && l->moe_comm_overlap == SPACE_MOE_OVERLAP_A2A) chunks++;
    chunks = est_schedule_chunks(l, r, chunks);
    if (chunks > micro * v) chunks = micro * v;
    return (double)chunks;
}

/* Micro-batches in flight on chunk j of a rank with `chunks` model chunks
 * in flight in all (inflight_chunks): the interleaved schedule runs its
 * forwards chunk by chunk in groups of N micro-batches (Megatron-Core
 * schedules.py, get_model_chunk_id with microbatch_group_size_per_vp_stage
 * N, PP by default: space_mb_group), so the first `chunks` forwards give
 * chunk j a group of N in each full round of N x VPP and what the last
 * round reaches. */
static double inflight_of_chunk(const space_layout *l, int64_t chunks,
                                int64_t j)
{
    int64_t v = l->vpp > 0 ? l->vpp : 1;
    if (v == 1) return (double)chunks;
    int64_t n = space_mb_group(l);
    int64_t round = n * v, full = chunks / round, rest = chunks % round;
    int64_t part = rest - j * n;
    return (double)(full * n + (part < 0 ? 0 : part > n ? n : part));
}

/* What one model chunk of c layers, nm of them MoE, keeps per token for
 * one micro-batch (*per), rebuilds at once in its backward (*rebuilt),
 * and moves to the host under Transformer Engine's layer offload (*host,
 * already taken out of *per); see act_rank_token. */
static void chunk_act(const space_model *m, const space_layout *l, double c,
                      double nm, int64_t micro, double *per, double *rebuilt_out,
                      double *host_out)
{
    *host_out = 0;
    double kept_in = act_layer_token(m, l, 0, 0), full = act_layer_token(m, l, 1, 0);
    double full_max = full, buffers = 0;
    if (c <= 0) {
        *per = *rebuilt_out = 0;
        return;
    }
    if (nm > 0) {
        /* Dense-FFN and MoE layers of a chunk: their mean per layer; the
         * layer rebuilt at once, the larger kind. */
        double km = act_layer_token(m, l, 0, 1), fm = act_layer_token(m, l, 1, 1);
        kept_in = ((c - nm) * kept_in + nm * km) / c;
        full = ((c - nm) * full + nm * fm) / c;
        full_max = fmax(full_max, fm);
        buffers = moe_buffers(m, l);
    }
    double per_chunk, rebuilt = 0;
    if (l->recompute == SPACE_RECOMPUTE_FULL
        && l->recompute_method == SPACE_RECOMPUTE_BLOCK
        && l->recompute_layers > 0) {
        double n = fmin((double)l->recompute_layers, c);
        per_chunk = n * kept_in + (c - n) * full;
        rebuilt = n > 0 ? full_max : 0;
    } else if (l->recompute == SPACE_RECOMPUTE_FULL) {
        double n = (double)(l->recompute_layers > 1 ? l->recompute_layers : 1);
        /* groups of n, the last one shorter */
        per_chunk = (n > 1 ? ceil(c / n) : c) * kept_in;
        rebuilt = fmin(n, c) * full_max;
    } else {
        per_chunk = c * kept_in;
        /* Transformer Engine's layer offload (--cpu-offloading-num-layers
         * N, one model chunk: PP 1): the first N layers' activations leave
         * before the forward ends and come back one layer ahead of their
         * backward, so "(num_layers - num_offloaded_layers) * T" are held
         * (DefaultOffloadSynchronizer, transformer_engine/pytorch/
         * cpu_offload.py, NVIDIA/TransformerEngine@d0067d0da). */
        if (l->act_offload_layers > 0) {
            *host_out = fmin((double)l->act_offload_layers, c) * kept_in;
            per_chunk -= *host_out;
        }
        if (l->recompute == SPACE_RECOMPUTE_SELECTIVE_OP) rebuilt = full;
        /* A checkpointed module's activations exist again while its
         * layer's backward runs: the larger kind of layer's, counted as
         * all the layer drops (in excess where other modules are dropped
         * too). */
        if (space_recompute_modules(l)
            & (SPACE_RC_MLP | SPACE_RC_MOE | SPACE_RC_SHARED_EXPERTS))
            rebuilt = fmax(act_layer_token(m, l, 1, 0)
                               - act_layer_token(m, l, 0, 0),
                           nm > 0 ? act_layer_token(m, l, 1, 1)
                                        - act_layer_token(m, l, 0, 1)
                                  : 0);
    }
    rebuilt += buffers; /* one MoE layer's dispatch at a time */
    /* Without pipelining the combined 1F1B schedule runs micro-batch
     * i + 1's forward of layer j beside micro-batch i's backward of layer
     * L - 1 - j: j + 1 layers kept of the one, L - j of the other, a
     * layer more than one micro-batch (combined_1f1b.py). */
    if (l->pp == 1 && nm > 0 && l->moe_comm_overlap == SPACE_MOE_OVERLAP_A2A
        && micro > 1)
        rebuilt += kept_in;
    *per = per_chunk;
    *rebuilt_out = rebuilt;
}

/* Activation bytes per token on pipeline rank r: what each model chunk
 * keeps per micro-batch in flight on it, and the layers rebuilt at once in
 * the backward, the chunks' layers as the split s puts them (a chunk of
 * its own size each; where every chunk of the rank is alike, inflight x
 * one chunk's). Full recomputation (Megatron-Core TransformerBlock.
 * _checkpointed_forward, NVIDIA/Megatron-LM@d580efc68a9f, core_v0.12.0;
 * chunk = the block's layers, one model chunk): uniform keeps the input
 * of each group of N layers and rebuilds a group at a time (N = 1:
 * Megatron-LM 2021's --checkpoint-num-layers default, v2.5); block keeps
 * the input of each of the chunk's first N layers, everything of the
 * others, and rebuilds one layer at a time. *rebuilt_out: the part
 * rebuilt, which exists only during a layer's backward (the largest of
 * the rank's chunks'). *host_out: what activation offloading keeps on
 * the host instead (layer offload: one chunk's, PP 1; fine-grained: of
 * the rank's layers in flight). */
static double act_rank_token(const space_model *m, const space_layout *l,
                             const space_split *s, int64_t r, int64_t micro,
                             double *rebuilt_out, double *host_out)
{
    int64_t v = s->vpp;
    double chunks = inflight_chunks(l, r, micro);
    space_chunk c0;
    space_split_chunk(s, r, 0, &c0);
    int64_t nm0 = est_moe_layers_in(m, c0.offset, c0.layers);
    /* a formula split of a model whose layers are alike: the rank's
     * chunks are, but where the embedding's or the loss's slot is */
    int alike = 1;
    if (!s->lay && !s->extra && est_moe_uniform(m)) {
        alike = !(r == 0 && s->embed && v > 1)
                && !(r == s->pp - 1 && s->loss && v > 1);
    } else {
        for (int64_t j = 1; j < v && alike; j++) {
            space_chunk c;
            space_split_chunk(s, r, j, &c);
            alike = c.layers == c0.layers
                    && est_moe_layers_in(m, c.offset, c.layers) == nm0;
        }
    }
    double per, rebuilt, host, held, layers, moe_layers;
    if (l->pp_schedule == SPACE_PP_DUALPIPE && s->pp > 1 && v == 1) {
        /* DualPipe (deepseek-ai/DualPipe@3da1bbea dualpipe.py, step):
         * with h = min(r, PP - 1 - r), the rank's stage S_h (its phase 0)
         * runs (PP / 2 - h - 1) x 2 forwards (step 1), h + 1 more (step
         * 2) and one more in the steady state (step 4, F0 ahead of B0)
         * before a backward frees one: PP - h micro-batches in flight;
         * its stage S_(PP - 1 - h) (phase 1) the h + 1 of step 2, steps 3
         * and 4 running a backward before each of its forwards. PP + 1
         * together (Table 2's row), each stage's own layers; each
         * direction has half of the micro-batches. */
        int64_t P = s->pp, h = r < P - 1 - r ? r : P - 1 - r;
        double half = (double)(micro / 2 > 0 ? micro / 2 : 1);
        const int64_t st[2] = {h, P - 1 - h};
        const double in[2] = {fmin((double)(P - h), half),
                              fmin((double)(h + 1), half)};
        double act = 0, most = 0;
        *host_out = layers = moe_layers = 0;
        for (int k = 0; k < 2; k++) {
            space_chunk c;
            space_split_chunk(s, st[k], 0, &c);
            double nm = (double)est_moe_layers_in(m, c.offset, c.layers);
            chunk_act(m, l, (double)c.layers, nm, micro, &per, &rebuilt,
                      &host);
            act += in[k] * per;
            most = fmax(most, rebuilt);
            *host_out += host;
            layers += in[k] * (double)c.layers;
            moe_layers += in[k] * nm;
        }
        *rebuilt_out = most;
        held = act + most;
    } else if (alike) {
        chunk_act(m, l, (double)c0.layers, (double)nm0, micro, &per, &rebuilt,
                  &host);
        *rebuilt_out = rebuilt;
        *host_out = host;
        held = chunks * per + rebuilt;
        layers = chunks * (double)c0.layers;
        moe_layers = chunks * (double)nm0;
    } else {
        double act = 0, most = 0;
        *host_out = layers = moe_layers = 0;
        for (int64_t j = 0; j < v; j++) {
            space_chunk c;
            space_split_chunk(s, r, j, &c);
            double nm = (double)est_moe_layers_in(m, c.offset, c.layers);
            double in = inflight_of_chunk(l, (int64_t)chunks, j);
            chunk_act(m, l, (double)c.layers, nm, micro, &per, &rebuilt,
                      &host);
            act += in * per;
            most = fmax(most, rebuilt);
            *host_out += host;
            layers += in * (double)c.layers;
            moe_layers += in * nm;
        }
        *rebuilt_out = most;
        held = act + most;
    }
    if (l->offload_modules && layers > 0) {
        /* Fine-grained offloading: of the rank's layers in flight, the
         * groups offloaded (the first share of them in forward order,
         * activation_offload_fraction) leave the GPU but for one layer's
         * groups of each module kept as the margin (post_warmup_callback,
         * fine_grained_activation_offload.py) and one layer's reloaded
         * ahead of its backward. */
        double o = offload_modules_token(m, l, 0);
        if (moe_layers > 0)
            o = ((layers - moe_layers) * o
                 + moe_layers * offload_modules_token(m, l, 1))
                / layers;
        *host_out = o * fmax(0, offload_share(l) * layers - 2);
        held -= *host_out;
    }
    return held;
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

/* Weights of one layer's GEMMs on a TP rank, MLA's attention or an MoE
 * layer (moe: its shared experts in the place of the dense FFN; the
 * routed experts apart, expert_gemm_weights). MLA's down projections are
 * whole on every TP rank (multi_latent_attention.py: duplicated TELinear),
 * its up and output projections TP-sharded; the router is no fp8 GEMM. */
static double layer_gemm_weights_of(const space_model *m, double t, int moe)
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

void est_state_bytes_shard(const space_layout *l, double params,
                           double shard, double *w, double *gr, double *opt)
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

/* Frameworks of 2021-22: PyTorch 1.x (eager module loading, cuBLAS
 * workspaces outside the allocator) and NCCL before 2.22 (every ring and
 * tree connected when a communicator is created). */
static int of_2021(const space_layout *l)
{
    return l->framework == SPACE_FW_MEGATRON_2021
           || l->framework == SPACE_FW_DEEPSPEED_2021;
}

/* The stage's output of each micro-batch in flight, per token, where the
 * schedule keeps it until that micro-batch's backward: Megatron-LM of 2021
 * has no deallocate_output_tensor (v2.5; Megatron-Core frees the output
 * after the send, schedules.py, core_v0.12.0), 16 bits, all of h on every
 * TP rank; DeepSpeed's pipeline engine partitions it to 1/t after the send
 * with TP (_exec_forward_pass, deepspeed/runtime/pipe/engine.py,
 * v0.5.10). */
static double pipe_output_token(const space_model *m, const space_layout *l)
{
    if (!of_2021(l) || l->pp < 2) return 0;
    double h = (double)m->hidden;
    return l->framework == SPACE_FW_DEEPSPEED_2021 && l->tp > 1
               ? 2 * h / (double)l->tp
               : 2 * h;
}

/* DeepSpeed's fp16 ZeRO-1/2 gradient bucket (its ipg buffer): 5e8 fp16
 * elements, reduce_bucket_size's default (deepspeed/runtime/zero/
 * constants.py, stage_1_and_2.py, v0.5.10), made in every backward without
 * a pipeline, at the optimizer step under the pipeline engine
 * (reduce_gradients(pipeline_parallel=True)). BLOOM's bf16 optimizer is
 * another code path. */
static double ds_bucket_bytes(const space_layout *l)
{
    return l->framework == SPACE_FW_DEEPSPEED_2021
                   && (l->zero == SPACE_ZERO_1 || l->zero == SPACE_ZERO_2)
                   && space_grad_bytes(l) == 2
               ? 2 * 5e8
               : 0;
}

/* Activation-sized buffers of the last stage's loss, per token, beyond
 * the fp32 softmax kept for the backward: the LM head's 16-bit logits,
 * alive until the loss has been computed from them. */
static double logits_token(const space_layout *l, double vp)
{
    return 2 * vp / (double)l->tp;
}

/* Megatron-FSDP (Megatron-Core --use-megatron-fsdp, ZeRO-2 "optim_grads"
 * and ZeRO-3 "optim_grads_params"), as NVIDIA/Megatron-LM@d98e8a64ddf3
 * runs it (megatron/core/distributed/fsdp/mcore_fsdp_adapter.py,
 * src/megatron_fsdp/megatron_fsdp.py and param_and_grad_buffer.py). Its
 * sharded states are est_state_bytes's: the 16-bit weight buffer (ZeRO-3:
 * sharded), the fp32 main weights (megatron_fsdp_main_params_dtype), the
 * gradient buffer (sharded) and Adam's moments, all over dp x cp. Beyond
 * them:
 * - FSDP units are the transformer layers (fsdp_unit_modules:
 *   TransformerLayer, MoETransformerLayer; a layer's routed experts in
 *   the same unit). Under ZeRO-3 the parameters outside every unit
 *   (embeddings, final norm, LM head, MTP's projections) are gathered at
 *   their first use and kept gathered: their buckets are "preserved"
 *   (AllGatherPipeline.reset(preserve_non_fsdp_units=True),
 *   release_bucket's note), 2 bytes each, through the step too.
 * - The communication size C = max(1e9, 2 x the mean unit's elements)
 *   (suggested_communication_unit_size None: "twice the number of
 *   elements in the FSDP modules", floored at 1e9 by its max()). A
 *   unit's all-gather prefetches the next units until C / 2 elements
 *   more are gathered (suggested_AG_prefetch_size): 1 + ceil(C / 2u)
 *   units of 16-bit weights at once, all of a small model's. Its
 *   unsharded gradient bucket (the gradients' dtype) is made when its
 *   first gradient arrives and is freed only when the reduce-scatter
 *   queue holds more than C elements (wait_for_previous_grad_reduce with
 *   suggested_RS_queue_capacity) or at the backward's end
 *   (_root_post_backward's reset): up to floor(C / u) + 1 units. The
 *   parameters outside units form one bucket per dtype (no bucket size
 *   under the adapter); its unsharded gradients are made at the LM head's
 *   weight gradient on the last stage (Megatron's wgrad accumulation into
 *   main_grad), elsewhere at the backward's end.
 * - --fsdp-double-buffer (FixedPoolAllocator): two persistent buffers of a
 *   unit's size for the weights (ZeRO-3) and two for the gradients, at
 *   most two units in either (_enforce_double_buffer_limit), held
 *   through the step.
 * - On the last stage the final norm, outside every unit, is gathered
 *   with the forward's prefetch from its bucket (the first, ahead of the
 *   units' in parameter order), which gathers the first ceil(C / 2u)
 *   units again after their forward; they stay until the backward's
 *   first all-gather recycles them (release is lazy after
 *   _root_pre_backward), so they are there at the loss.
 * The backward of a micro-batch is taken at four moments: the loss
 * (every activation and the loss's buffers), its first unit (the loss
 * freed, 1 + ceil(C / 2u) units gathered, on the last stage the outside
 * units' gradient bucket), when the gradient queue is full (q units'
 * gradients, q / n of the micro-batch's layer activations freed) and its
 * end (one unit gathered, the queued gradients and the outside units'
 * bucket, the micro-batch's activations freed); u = the stage's mean
 * unit, n = its units per model chunk.
 * Out: the bytes over the generic count (act + loss_bwd) at the largest
 * moment, what the step adds, and for the breakdown the weights and
 * gradients added and the activations freed at that moment. */
typedef struct mfsdp_moment {
    double bwd, step;             /* added to the two moments */
    double weights, grads, act_freed; /* of bwd, by kind */
} mfsdp_moment;

static void mfsdp_buffers(const space_layout *l, double unit_p, double nc,
                          double nonunit_p, int head, double act,
                          double loss_kept, double loss_bwd, double rebuilt,
                          double inflight, mfsdp_moment *o)
{
    memset(o, 0, sizeof *o);
    if (nc <= 0 || unit_p <= 0) return;
    int z3 = l->zero >= SPACE_ZERO_3;
    double gb = (double)space_grad_bytes(l);
    double u = unit_p / (nc * (double)(l->vpp > 0 ? l->vpp : 1));
    double C = fmax(1e9, 2 * u);
    double w_nu = z3 ? 2 * fmax(nonunit_p, 0) : 0;
    double g_nu = gb * fmax(nonunit_p, 0);
    double g_units, q_units, fixed = 0;
    if (l->fsdp_double_buffer) {
        g_units = 0, q_units = 0;
        fixed = (z3 ? 2 * 2 * u : 0) + 2 * gb * u;
    } else {
        g_units = fmin(nc, 1 + ceil(C / 2 / u));
        q_units = fmin(nc, floor(C / u) + 1);
    }
    double w_g = z3 ? 2 * g_units * u : 0;
    double w_pre = z3 && head && !l->fsdp_double_buffer
                       ? 2 * fmin(nc, ceil(C / 2 / u)) * u
                       : 0;
    double a_mb = fmax(act - loss_kept - rebuilt, 0) / fmax(inflight, 1);
    double at_loss = w_nu + w_pre + fixed;
    double first = w_nu + w_g + fixed + (head ? g_nu : 0) - loss_kept
                   - loss_bwd;
    double qfree = l->fsdp_double_buffer ? fmin(nc, 2) : q_units;
    double cap_g = q_units * u * gb + (head ? g_nu : 0);
    double cap = w_nu + w_g + fixed + cap_g - loss_kept - loss_bwd
                 - a_mb * qfree / nc;
    double end_w = w_nu + (z3 && !l->fsdp_double_buffer ? 2 * u : 0);
    double end_g = q_units * u * gb + g_nu;
    double end = end_w + fixed + end_g - loss_kept - loss_bwd - a_mb;
    o->step = w_nu + fixed;
    if (at_loss >= first && at_loss >= cap && at_loss >= end) {
        o->bwd = at_loss, o->weights = w_nu + w_pre + fixed;
    } else if (first >= cap && first >= end) {
        o->bwd = first, o->weights = w_nu + w_g + fixed;
        o->grads = head ? g_nu : 0, o->act_freed = loss_kept + loss_bwd;
    } else if (cap >= end) {
        o->bwd = cap, o->weights = w_nu + w_g + fixed, o->grads = cap_g;
        o->act_freed = loss_kept + loss_bwd + a_mb * qfree / nc;
    } else {
        o->bwd = end, o->weights = end_w + fixed, o->grads = end_g;
        o->act_freed = loss_kept + loss_bwd + a_mb;
    }
}

/* What per-layer CUDA graphs keep in their pool, bytes per token on
 * pipeline rank r: the graphed modules' share of each layer's kept
 * activations, for every micro-batch in flight. Megatron-Core captures
 * the layers' graphs in execution order into one pool
 * (CudaGraphManager.global_mempool, _CudagraphGlobalRecord.
 * create_cudagraphs, cuda_graphs.py, NVIDIA/Megatron-LM@d98e8a64ddf3),
 * one micro-batch's graphs reused without a pipeline
 * (reuse_cudagraphs), one per micro-batch in flight with one; TE's
 * make_graphed_callables (TECudaGraphHelper) likewise, its static inputs
 * reused across micro-batches whose backward has run and, from TE 2.7,
 * the outputs as the next layer's inputs (_reuse_graph_input_output_
 * buffers): each layer's static input is its input, counted among its
 * activations. l->cuda_graph_modules: attn (the attention and its
 * residual), mlp (a dense layer's MLP), moe (an MoE layer's FFN),
 * moe_router (up to the router with the shared experts); none: the
 * whole layer. */
static double graph_pool_token(const space_model *m, const space_layout *l,
                               const space_split *s, int64_t r,
                               int64_t micro)
{
    unsigned g = l->cuda_graph_modules;
    /* the rank's layers in flight, dense and MoE, chunk by chunk as the
     * split s puts them (inflight_of_chunk) */
    double chunks = inflight_chunks(l, r, micro), lay = 0, nm = 0;
    for (int64_t j = 0; j < s->vpp; j++) {
        space_chunk c;
        space_split_chunk(s, r, j, &c);
        double in = inflight_of_chunk(l, (int64_t)chunks, j);
        lay += in * (double)c.layers;
        nm += in * (double)est_moe_layers_in(m, c.offset, c.layers);
    }
    double fd, dense = act_layer_split(m, l, 0, 0, &fd, NULL);
    double dense_g = g == 0 ? dense
                            : (g & SPACE_CGM_ATTN ? dense - fd : 0)
                                  + (g & SPACE_CGM_MLP ? fd : 0);
    double moe_g = 0;
    if (nm > 0) {
        double fm, router, moe = act_layer_split(m, l, 0, 1, &fm, &router);
        moe_g = g == 0 ? moe
                       : (g & SPACE_CGM_ATTN ? moe - fm : 0)
                             + (g & SPACE_CGM_MOE
                                    ? fm
                                    : (g & SPACE_CGM_MOE_ROUTER ? router
                                                                : 0));
    }
    return (lay - nm) * dense_g + nm * moe_g;
}

/* The pipeline rank of the last stage (the final norm, the LM head and
 * the loss): the last rank, or under a V schedule rank 0, which holds
 * stages 0 and 2 PP - 1 (torchtitan pipeline_parallel.py
 * _get_pp_rank_to_stage_indices_mapping, style "v" for ScheduleZBVZeroBubble
 * and ScheduleDualPipeV: zip(range(pp), range(num_stages - 1, pp - 1,
 * -1)), pytorch/torchtitan@b5bcd76c; deepseek-ai/DualPipe@3da1bbea
 * examples/example_dualpipev.py: full_modules[rank] and
 * full_modules[pp_size * 2 - 1 - rank]). */
static int64_t head_rank(const space_layout *l)
{
    return space_pp_schedule_v(l) ? 0 : l->pp - 1;
}

/* The MTP modules pipeline rank r holds: the last stage's rank's under a
 * formula split, or where a layout string puts them. */
static double rank_mtp(const space_layout *l, const space_split *sp,
                       int64_t r)
{
    double mtp = !sp->lay ? (r == head_rank(l) ? (double)sp->mtp : 0) : 0;
    for (int64_t j = 0; sp->lay && j < sp->vpp; j++) {
        space_chunk c;
        space_split_chunk(sp, r, j, &c);
        mtp += (double)c.mtp;
    }
    return mtp;
}

/* What rank_params and stage_of count a rank's parameters from, per TP
 * rank: a layer (space_params.per_layer: the model's mean layer), the
 * first stage's embedding (with position embedding and its norm), the
 * last stage's final norm and head (a tied head is the embedding itself
 * with one stage, a copy of it with several); for MoE models a dense-FFN
 * layer, an MoE layer without its routed experts, and one layer's routed
 * experts on this rank's EP x ETP shard. */
typedef struct stage_params {
    double layer, first, last;
    double dense_l, moe_l, xl;
} stage_params;

static void stage_params_of(const space_model *m, const space_layout *l,
                            const space_params *p, stage_params *o)
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
}

/* The parameters of pipeline rank r's own stages (its chunks of the
 * split sp, their MTP modules, the embedding on rank 0, the final norm
 * and head on the last rank): the return those replicated over EP,
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
static double rank_params(const space_model *m, const space_layout *l,
                          const space_params *pm, const space_split *sp,
                          int64_t r, int mtp_embed, double *xparams)
{
    const space_params p = *pm;
    double t = (double)l->tp;
    stage_params sp_;
    stage_params_of(m, l, pm, &sp_);
    double layer = sp_.layer, first = sp_.first, last = sp_.last;
    double layers = (double)space_split_rank_layers(sp, r);
    double mtp = rank_mtp(l, sp, r);
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
        if (r == head_rank(l)) params += last;
    } else {
        if (r == 0) params += first;
        if (r == head_rank(l)) params += last;
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
static double rank_gemm_weights(const space_model *m, const space_layout *l,
                                const space_split *sp, int64_t r,
                                double *gx)
{
    double t = (double)l->tp;
    double layers = (double)space_split_rank_layers(sp, r);
    double gw = layers * layer_gemm_weights_of(m, t, 0);
    *gx = 0;
    if (m->num_experts > 0) {
        double nm = est_split_moe_layers(m, sp, r), mtp = rank_mtp(l, sp, r);
        gw = (layers - nm) * layer_gemm_weights_of(m, t, 0)
             + (nm + mtp) * layer_gemm_weights_of(m, t, 1);
        *gx = (nm + mtp) * expert_gemm_weights(m, l);
    }
    return gw;
}

/* est_memory_stage with the model's parameters p (space_model_params at
 * Megatron's vocabulary padding for l's TP), counted once by the caller. */
static void stage_of(const space_model *m, const space_layout *l,
                     const space_params *pm, int64_t r, est_memory *out)
{
    memset(out, 0, sizeof *out);
    const space_params p = *pm;
    double t = (double)l->tp;
    stage_params pieces;
    stage_params_of(m, l, pm, &pieces);
    double layer = pieces.layer, first = pieces.first, last = pieces.last;
    int64_t micro = l->gbs / (l->mbs * l->dp);
    if (micro < 1) micro = 1;
    double tokens = (double)l->mbs * (double)l->seq / (double)l->cp;
    double vp = (double)p.vocab_padded;
    space_split sp;
    space_split_resolve(m, l, &sp, NULL, 0);
    double layers = (double)space_split_rank_layers(&sp, r);
    /* The MTP modules on this rank (the last, or a layout's) */
    double mtp = rank_mtp(l, &sp, r);
    /* DualPipe: rank r also holds stage PP - 1 - r whole, for the
     * micro-batches of the other direction (DeepSeek-V3 report Table 2:
     * 2x parameters; deepseek-ai/DualPipe@3da1bbea dualpipe.py: the rank's
     * modules are full_modules[rank] and full_modules[pp - 1 - rank],
     * examples/example_dualpipe.py), with its gradients and optimizer
     * states: its own layers, dense and MoE as the split gives them, so
     * both end ranks hold stage 0 (the embedding) and stage PP - 1 (the
     * head and MTP). The MTP module there shares the embedding and the
     * head with the main model (DeepSeek-V3 report section 3.2.3, "Shared
     * Embedding and Output Head for Multi-Token Prediction": DualPipe puts
     * the shallowest and deepest layers on one rank "to enable the
     * physical sharing"): no embedding of its own. */
    int dual = l->pp_schedule == SPACE_PP_DUALPIPE && l->pp > 1;
    double xparams = 0, xshard = 1;
    double params = rank_params(m, l, &p, &sp, r, !dual, &xparams);
    if (dual) {
        double mx;
        params += rank_params(m, l, &p, &sp, l->pp - 1 - r, 0, &mx);
        xparams += mx;
    }
    /* Megatron-FSDP's units: the transformer layers (and MTP's), each
     * with its routed experts; the rest of the stage's parameters are
     * outside every unit (mfsdp_buffers). */
    double mtp_here = mtp;
    double n_units = layers + mtp_here, unit_params = layers * layer;
    /* MoE: the experts' states sharded by ZeRO over the expert
     * data-parallel group (distributed optimizer's expert buffers). */
    if (m->num_experts > 0) {
        double dense_l = pieces.dense_l, moe_l = pieces.moe_l, xl = pieces.xl;
        double nm = est_split_moe_layers(m, &sp, r);
        unit_params = (layers - nm) * dense_l + nm * (moe_l + xl)
                      + mtp_here * (moe_l + xl + 2 * (double)m->hidden
                                                * (double)m->hidden / t
                               + (double)p.final_norm * 2);
        layer = fmax(dense_l, moe_l + xl);
        int64_t edp = est_moe_edp(l);
        xshard = (double)(edp > 0 ? edp : 1);
    } else if (mtp > 0) {
        double h = (double)m->hidden;
        unit_params += mtp * (layer + 2 * h * h / t + (double)p.final_norm * 2);
    }
    double w, gr, opt, live = 0;
    est_state_bytes(l, params, &w, &gr, &opt);
    if (xparams > 0) {
        double xw, xg, xo;
        state_bytes(l, xparams, xshard, &xw, &xg, &xo);
        w += xw, gr += xg, opt += xo;
        params += xparams;
    }
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
        /* Megatron-FSDP gathers by its own rules: mfsdp_buffers */
        if (l->framework == SPACE_FW_MEGATRON_CORE) live = 0;
        if (l->framework == SPACE_FW_TORCHTITAN && l->param_fp32) {
            /* FSDP2's backward: the unit being rebuilt and the previous
             * one prefetched (2 x 2 bytes), the unit's unsharded 16-bit
             * gradients (2), its fp32 reduce-scatter input (4) and the
             * previous unit's, kept until the next post-backward (4):
             * 14 bytes per parameter of one layer
             * (torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py,
             * _backward_prefetch, comm_ctx.reduce_scatter_state; PyTorch
             * 2.6-era main). With a pipeline torchtitan does not reshard
             * after the forward: the stage's 16-bit weights stay gathered
             * (torchtitan distributed/fsdp.py, reshard_after_forward
             * "default"). And PyTorch's pipeline schedules turn FSDP2's
             * gradient sync and resharding off for every backward micro-batch
             * but the last (torch/distributed/pipelining/stage.py,
             * backward_maybe_with_nosync: set_requires_gradient_sync(False),
             * set_reshard_after_backward(False)), so the stage's gradients
             * accumulate unsharded in the reduce dtype, fp32: 4 bytes per
             * parameter of the stage beside its sharded ones (PyTorch's own
             * test of it, test_fully_shard_*: the pending unsharded gradient
             * of a bf16-compute, fp32-reduce parameter is fp32). */
            live = 14 * layer;
            if (l->pp > 1) live += 2 * params - 4 * layer + 4 * params;
        }
    }
    /* Transformer Engine's fp8 weight workspaces: the fp8 weight and
     * its transpose (row- and column-wise data), 2 bytes per GEMM
     * weight, cached from the first micro-batch to the next step
     * (Megatron-Core passes is_first_microbatch: cache_name "weight"
     * in get_fp8_workspace / get_weight_workspace, linear.py, TE v1.9
     * and v2.4), per module, so ZeRO-3 does not shard them. The LM
     * head and embedding stay 16-bit. */
    double fp8 = 0, fp8_t = 0;
    if (l->dtype == HW_FP8 && l->fp8_lib == SPACE_FP8_LIB_TE) {
        /* Dense-FFN and MoE layers apart; the experts' copies are of
         * this rank's EP x ETP shard; MTP's layers on the last stage
         * (TE workspaces are per module, as for dense layers); DualPipe's
         * second stage's modules as its own. */
        double gx, gw = rank_gemm_weights(m, l, &sp, r, &gx);
        if (dual) {
            double mgx;
            gw += rank_gemm_weights(m, l, &sp, l->pp - 1 - r, &mgx);
            gx += mgx;
        }
        /* Each copy per recipe (fp8_copy_bytes): the per-tensor
         * recipes (delayed, tensorwise) keep the fp8 weight and, for the
         * GEMMs of the backward, its fp8 transpose; blockwise and MXFP8
         * quantise rows and columns apart (row- and column-wise data,
         * each with its scales, on every GPU). TE makes the transpose of
         * a per-tensor copy only where fp8 GEMMs need the TN layout:
         * not on Blackwell (compute capability 10.x, 11.x, 13.x;
         * nvte_is_non_tn_fp8_gemm_supported, Float8Quantizer and
         * Float8CurrentScalingQuantizer::create_tensor, TE v2.4 on,
         * c7702309f): fp8_t, which est_memory_device takes out there. */
        double qb = fp8_copy_bytes(l);
        int per_tensor = l->fp8_recipe == SPACE_FP8_DELAYED
                         || l->fp8_recipe == SPACE_FP8_TENSORWISE;
        double g_all = gw + gx;
        if (l->fp8_params) {
            /* --fp8-param-gather: the GEMM weights themselves are
             * quantised, qb bytes in the parameter buffer (its row-wise
             * data), and only their column-wise copy (the transpose) is
             * cached, qb more (Megatron-Core distributed_data_parallel.py:
             * a uint8 parameter buffer; TE's update_usage on the first
             * micro-batch; Megatron-LM core_v0.14.0). */
            w -= gw * (2 - qb)
                 / (l->zero >= SPACE_ZERO_3 ? (double)(l->dp * l->cp) : 1);
            if (gx > 0) /* the experts' shard: over expert DP */
                w -= gx * (2 - qb) / (l->zero >= SPACE_ZERO_3 ? xshard : 1);
            fp8 = qb * g_all;
        } else {
            fp8 = 2 * qb * g_all;
        }
        fp8_t = per_tensor ? qb * g_all : 0;
    } else if (l->dtype == HW_FP4 && l->fp8_lib == SPACE_FP8_LIB_TE) {
        /* NVFP4: TE caches a row-wise and a column-wise quantised copy of
         * each layer GEMM's weight (block scales along rows and along
         * columns differ), NVFP4_BYTES each, as for fp8 (MoE and MLA with
         * nvfp4 are refused: dense layers only). */
        double wl = layers
                    + (dual ? (double)space_split_rank_layers(&sp, l->pp - 1 - r)
                            : 0);
        fp8 = 2 * NVFP4_BYTES * wl * layer_gemm_weights_of(m, t, 0);
    }
    double rebuilt_tok, host_tok;
    double act = tokens * act_rank_token(m, l, &sp, r, micro, &rebuilt_tok,
                                         &host_tok);
    if (r < l->pp - 1)
        act += tokens * inflight_chunks(l, r, micro) * pipe_output_token(m, l);
    double loss_bwd = 0, loss_kept = 0;
    /* The head's and the loss's rank: the last stage's (head_rank: rank
     * 0 under a V schedule); under DualPipe both end
     * ranks, each the last stage of one direction (dualpipe.py
     * _forward_compute_chunk: is_last_stage on the first rank's phase 1
     * and the last rank's phase 0), one micro-batch of it in flight. */
    int head_here = r == head_rank(l) || (dual && r == 0);
    if (head_here && l->framework == SPACE_FW_TORCHTITAN && !l->eager
        && !l->loss_eager) {
        /* torchtitan's loss compiled with the blocks (pytorch/torchtitan
         * #1033, 2025-04-02): inductor keeps only the 16-bit logits (and
         * a log-sum-exp per row) and its backward writes the 16-bit
         * gradient directly: 2V kept, 2V more at the backward's start
         * (measured on an H100, PyTorch 2.11, Llama 3 8B's vocabulary at
         * 8,192 tokens: 3.91 GiB at the loss's peak against 11.74 GiB
         * eager; bench/data/loss_h100). */
        loss_kept = tokens * 2 * vp / t;
        loss_bwd = tokens * 2 * vp / t;
    } else if (head_here && l->framework == SPACE_FW_TORCHTITAN) {
        /* torchtitan's loss, cross_entropy(pred.float()): the forward
         * keeps log_softmax's fp32 output (the 16-bit logits and their
         * fp32 copy are freed once it exists), and the backward starts by
         * making nll_loss's and log_softmax's fp32 gradients, both alive
         * with it: 4V kept, 8V more at the backward's start (measured on
         * an H100, PyTorch 2.11, bench/data/memsample_h100: 4V after the
         * forward, +8V at the backward's peak, to the MiB). */
        loss_kept = tokens * 4 * vp / t;
        loss_bwd = tokens * 8 * vp / t;
        /* Under TP torchtitan computes it as loss parallelism (on unless
         * --training.disable_loss_parallel): DTensor's own handlers, whose
         * backward makes nll_loss's and log_softmax's gradients in one
         * function, (grad_input + torch.exp(x)) * grad_output beside the
         * zeros it scatters into: grad_input, exp(x), their sum and the
         * product, two of the last three alive at once beside the kept
         * log_softmax: 12V more, not 8V (_nll_loss_and_log_softmax_
         * backward, torch/distributed/tensor/parallel/loss.py,
         * pytorch/pytorch@v2.6.0 to v2.9). */
        if (t > 1) loss_bwd = tokens * 12 * vp / t;
    } else if (head_here && l->ce_te == SPACE_CE_TE_INPLACE) {
        /* Transformer Engine's fused cross-entropy (Megatron-Core
         * --cross-entropy-fusion-impl te, language_module.py
         * compute_language_model_loss, te_parallel_cross_entropy) before
         * TE v2.18: its Triton forward writes the gradient into the
         * 16-bit logits in place and saves them, and the backward scales
         * them in place (transformer_engine/pytorch/triton/
         * cross_entropy.py, cross_entropy_forward returns _input,
         * NVIDIA/TransformerEngine@v2.8): 2 V / t kept, nothing more. */
        loss_kept = tokens * logits_token(l, vp);
    } else if (head_here && l->ce_te == SPACE_CE_TE_FP32) {
        /* Since TE v2.18 (NVIDIA/TransformerEngine@01bbe3eea, 2026-07-09)
         * the forward writes the gradient into a new fp32 buffer
         * (grad_input = torch.empty_like(_input, dtype=torch.float32))
         * and saves that; the 16-bit logits are freed with the forward's
         * locals. The backward scales it in place and returns it, and
         * autograd casts it to the logits' dtype for the LM head's
         * backward (engine.cpp validate_outputs), both alive then: 4 V / t
         * kept, 2 V / t more at the loss's backward. */
        loss_kept = tokens * 4 * vp / t;
        loss_bwd = tokens * logits_token(l, vp);
    } else if (head_here) {
        loss_kept = tokens * (4 * vp / t + logits_token(l, vp));
        /* The fused loss (l->ce_fusion): torch.compile functionalizes
         * the in-place updates the unfused loss makes to its fp32 logits
         * (subtract the max, exp, divide; the gradient's update of the
         * saved softmax), so a new fp32 buffer stands beside the one
         * updated: one more 4 V / t per token at the loss (Megatron-LM's
         * CI golden values, max allocated, tp2 pp2 with and without
         * --cross-entropy-loss-fusion: +390 to +440 MB of a 412 MB
         * 4 V / t on H100, GB200 and the A100 LTS container; +845 MB
         * on one A100 container, not explained). */
        if (l->ce_fusion) loss_bwd = tokens * 4 * vp / t;
        if (l->wgrad_defer) {
            /* Deferred LM-head weight gradients: each deferred
             * micro-batch's 16-bit output gradient (2V/t) and input
             * (2h, /t with SP) stay to the flush; the loss's peak of a
             * later micro-batch sees up to the limit of them, at most
             * the micro-batches before it (Megatron-LM's CI, tp2 pp2,
             * limit 2 of 4: +440 MB measured, 2 x 210 MB here). */
            double n = (double)(micro - 1);
            if (l->wgrad_defer > 0 && (double)l->wgrad_defer < n)
                n = (double)l->wgrad_defer;
            double h = (double)m->hidden;
            loss_kept += n * tokens * (2 * vp / t + 2 * h / (l->sp ? t : 1));
        }
    }
    if (head_here && l->framework == SPACE_FW_TORCHTITAN && t > 1) {
        /* torchtitan's TP plan makes the LM head a ColwiseParallel with
         * input_layouts=Shard(1): DTensor all-gathers the final norm's
         * sequence-sharded output and the matmul saves the gathered
         * tensor for its weight gradient, 2h per token of the whole
         * sequence (Megatron's column-parallel linear saves its shard and
         * gathers again in the backward), alive until the head's
         * backward (apply_tp, models/llama3/infra/parallelize.py,
         * pytorch/torchtitan@9dec370ad26b to 6fc499f6f5b3). */
        loss_kept += tokens * 2 * (double)m->hidden;
    }
    act += loss_kept;
    /* DualPipe: the MTP modules of both stages (one micro-batch of the
     * last stage in flight on either end rank) */
    double mtp_act = mtp + (dual ? rank_mtp(l, &sp, l->pp - 1 - r) : 0);
    if (mtp_act > 0) {
        /* Each MTP module (MultiTokenPredictionLayer,
         * multi_token_prediction.py, NVIDIA/Megatron-LM@d98e8a64ddf3): the
         * shifted tokens' embedding, enorm's saved input (2h), the
         * concatenation of the two normed inputs, eh_proj's input (2h at
         * gin bytes; hnorm's input is the decoder's output, which the
         * final norm keeps already), /t with SP; its layer (one micro-batch
         * in flight on the last stage) and its second pass through the
         * head and the loss. */
        double rep = l->sp ? 1 / t : 1;
        double mtp_in = (2 + 2 * gemm_input_bytes(l)) * (double)m->hidden * rep;
        act += mtp_act * (tokens * (act_layer_token(m, l, 0,
                                                    m->num_experts > 0)
                                    + mtp_in)
                          + loss_kept);
    }
    double step = est_step_bytes(l, params - xparams);
    if (xparams > 0 && est_step_bytes(l, 1) > 0) /* the experts' shard */
        step += (l->pa_optimizer || l->opt_offload > 0
                     ? est_opt_step_bytes(l)
                     : 4)
                * xparams / (l->zero >= SPACE_ZERO_1 ? xshard : 1);
    /* What the host keeps for this rank (offload.c): the optimizer
     * states stepped there, and the offloaded activations. */
    double host = tokens * host_tok;
    if (l->opt_offload > 0) {
        double sh = l->zero >= SPACE_ZERO_1 ? (double)(l->dp * l->cp) : 1;
        host += est_opt_host_bytes(l) * (params - xparams) / sh
                + est_opt_host_bytes(l) * xparams
                      / (l->zero >= SPACE_ZERO_1 ? xshard : 1);
    }
    /* The backward holds the activations and ZeRO-3's gathered
     * layers; the optimizer step, after both are freed, its fp32
     * gradient copy instead (the frameworks free it before the next
     * forward: Megatron-LM's zero_grad(set_to_none) at the start of
     * train_step, DeepSpeed's "get rid of the fp32 gradients" after
     * the step). */
    double bucket = ds_bucket_bytes(l), gr_s = gr;
    if (bucket > 0 && l->zero == SPACE_ZERO_1) {
        /* DeepSpeed's ZeRO-1 step frees the gradients outside the rank's
         * partition, then flattens the partition's 16-bit gradients and
         * copies that to fp32, both alive at once: 2/d + 4/d
         * (DeepSpeedZeroOptimizer.step, stage_1_and_2.py, v0.5.10). */
        double d = (double)(l->dp * l->cp);
        gr_s = gr / d;
        step += 2 * params / d;
    }
    if (l->framework == SPACE_FW_DEEPSPEED_2021 && l->zero == SPACE_ZERO_NONE
        && space_grad_bytes(l) == 2)
        /* DeepSpeed's fp16 optimizer without ZeRO copies each gradient to
         * fp32 and then flattens the copies, both alive at once: 8 bytes
         * per parameter, not 4 (FP16_Optimizer.step,
         * deepspeed/runtime/fp16/fused_optimizer.py, v0.5.10). */
        step += 4 * params;
    /* Megatron-FSDP's own buffers (ZeRO-2 and 3 under Megatron-Core):
     * the moment of its backward that holds the most, and what it keeps
     * through the step. */
    mfsdp_moment fs = {0};
    if (l->framework == SPACE_FW_MEGATRON_CORE && l->zero >= SPACE_ZERO_2) {
        double v = (double)(l->vpp > 0 ? l->vpp : 1);
        mfsdp_buffers(l, unit_params, n_units / v, params - unit_params,
                      head_here, act, loss_kept, loss_bwd,
                      tokens * rebuilt_tok, inflight_chunks(l, r, micro), &fs);
    }
    double held_b = w + live + gr + opt + fp8 + act + loss_bwd
                    + (l->pp > 1 ? 0 : bucket) + fs.bwd;
    double held_s = w + gr_s + opt + fp8 + step + (l->pp > 1 ? bucket : 0)
                    + fs.step;
    out->weights = w + live + fs.weights;
    out->grads = gr + fs.grads;
    out->optimizer = opt;
    out->fp8_weights = fp8;
    out->fp8_transposes = fp8_t;
    out->activations = act + loss_bwd - fs.act_freed;
    out->fsdp_buffers = fs.bwd;
    /* CUDA graphs (Megatron-Core --cuda-graph-impl): the captured
     * forward and backward allocate from one private pool in execution
     * order, so the pool peaks at what the graphed part keeps for the
     * backward, and it stays reserved through the optimizer step, where
     * the step's copies cannot use it (graph_pool_token). */
    if (l->framework == SPACE_FW_MEGATRON_CORE && l->cuda_graph) {
        out->graph_pool = l->cuda_graph == SPACE_CG_FULL_ITERATION
                              ? act + loss_bwd
                              : tokens * graph_pool_token(m, l, &sp, r, micro);
    }
    if (l->framework == SPACE_FW_TORCHTITAN && l->param_fp32
        && l->zero >= SPACE_ZERO_3 && l->pp == 1) {
        /* torchtitan's FSDP2 without a pipeline makes its gradients as
         * the backward goes (set to None after each step; kept across the
         * micro-batches of one step), so its peak is the larger of three
         * moments rather than all gradients beside all activations:
         * - the backward's start: the activations kept (no layer rebuilt
         *   yet by recomputation), the loss's gradients,
         *   and the unit still gathered from the forward ([final norm,
         *   output], not resharded; with the root holding the embeddings,
         *   the last block, then the root gathered again for the output's
         *   backward);
         * - a block's backward after the output's: the activations with
         *   the loss freed, the output's gradients and the FSDP2 working
         *   set of a block (live, 14 bytes per parameter, above);
         * - the backward's end: every gradient, and the last unit's fp32
         *   reduce-scatter input, 4 bytes per parameter of the embedding
         *   unit (with the root holding the embeddings: embedding, final
         *   norm and output).
         * The units: torchtitan's apply_fsdp (models/llama3/infra/
         * parallelize.py) since pytorch/torchtitan@83e694105 (#1094,
         * 2025-07-28); before it, l->fsdp_root_embeddings.
         * Measured on an H100 (PyTorch 2.11, bench/data/memsample_h100)
         * to within a few MiB for each moment. */
        double shard = (double)(l->dp * l->cp);
        double g0 = micro > 1 ? gr : 0;
        double root = l->fsdp_root_embeddings;
        double kept = root ? 2 * layer : 2 * last;
        double again = root ? 2 * (first + last) : 0;
        double lact = act - loss_kept;
        double rebuilt = tokens * rebuilt_tok; /* made in a block's backward */
        double start = w + opt + fp8 + g0 + kept + again + act - rebuilt
                       + loss_bwd;
        double mid = w + opt + fp8 + g0 + live + lact
                     + (root ? 2 * (first + last) + 2 * last : 4 * last / shard);
        double end = w + opt + fp8 + gr + 4 * (root ? first + last : first);
        /* FSDP2 makes each unit's sharded gradients in its
         * reduce-scatter stream (foreach_reduce allocates reduce_output
         * under reduce_scatter_stream, and the sharded gradients are
         * views of it; the reduce-scatter input is the current stream's:
         * torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py,
         * pytorch/pytorch@010ae4a89516), and the caching allocator reuses
         * a freed block only for the stream that made it (its free lists
         * are per stream). So the gradients' pool, at its peak all
         * gradients (the end) and with accumulation the output unit's
         * new shard beside them (mid), is not where the activations
         * freed in the backward go: the main stream's pool peaks on its
         * own, the larger of its moments without the gradients. Measured
         * on an H100 (bench/data/memsample_h100): max_memory_reserved
         * less max_memory_allocated was 12-34 % of the allocated peak,
         * and 3-11 % once the gradients' own pool is counted. */
        double rs_mid = g0 + (root ? 0 : 4 * last / shard);
        out->stream_pool = fmax(gr, rs_mid);
        out->main_peak = fmax(fmax(start - g0, mid - rs_mid),
                              fmax(end - gr, held_s - gr));
        if (start >= mid && start >= end) {
            held_b = start;
            out->weights = w + kept + again;
            out->grads = g0;
            out->activations = act - rebuilt + loss_bwd;
        } else if (mid >= end) {
            held_b = mid;
            out->weights = w + live + (root ? 2 * (first + last) : 0);
            out->grads = g0 + (root ? 2 * last : 4 * last / shard);
            out->activations = lact;
        } else {
            held_b = end;
            out->weights = w + 4 * (root ? first + last : first);
            out->grads = gr;
            out->activations = 0;
        }
    }
    out->step_transient = step;
    out->buffers = bucket;
    out->step_new = step + (l->pp > 1 ? bucket : 0);
    out->alloc_backward = held_b;
    out->alloc_step = held_s;
    if (out->stream_pool <= 0) out->main_peak = fmax(held_b, held_s);
    out->params = params;
    out->expert_params = xparams;
    out->stage = r;
    out->host = host;
    est_memory_settle(out, est_memory_cache_share(l->alloc_expandable));
    if (out->peak_in_step) out->fsdp_buffers = fs.step;
}

void est_memory_stage(const space_model *m, const space_layout *l, int64_t r,
                      est_memory *out)
{
    space_params p;
    space_model_params(m, 128 * l->tp, &p);
    stage_of(m, l, &p, r, out);
}

void est_memory_settle(est_memory *o, double frag)
{
    /* What must fit: the live tensors of each moment with the context and
     * NCCL's buffers. The allocator's cache is not: when a cudaMalloc
     * fails it frees every cached segment no tensor uses and retries
     * (release_cached_blocks in DeviceCachingAllocator::malloc,
     * c10/cuda/CUDACachingAllocator.cpp) before it raises an
     * out-of-memory error. Counting the fitted fragmentation here too made
     * 24 of the published runs of bench/data/validation_runs.json, which
     * ran, "not fit" (2 without); what the cache cannot give back is left
     * to the margin (est_memory_margin). */
    double bwd = o->alloc_backward + o->context + o->nccl + o->moe_comm;
    double stp = o->alloc_step + o->graph_pool + o->context + o->nccl
                 + o->moe_comm;
    o->peak_in_step = stp > bwd;
    o->allocated = fmax(o->alloc_backward, o->alloc_step);
    /* The allocator's segments: the main stream's pool at its own peak
     * with its cached share, and another stream's pool (FSDP2's
     * gradients) beside it, which holds blocks of the same sizes every
     * step (no share). */
    o->reserved = o->stream_pool > 0
                      ? fmax(o->main_peak * (1 + frag) + o->stream_pool,
                             o->allocated)
                      : o->allocated * (1 + frag);
    /* A CUDA graph pool is reserved through the step beside the step's
     * own tensors (its blocks are not max_memory_allocated's while the
     * graphs replay) */
    if (o->graph_pool > 0)
        o->reserved = fmax(o->reserved,
                           o->alloc_step * (1 + frag) + o->graph_pool);
    o->fragmentation = o->reserved - o->allocated;
    o->backward_peak = bwd;
    o->step_peak = stp;
    o->total = fmax(bwd, stp);
    double tensors = o->weights + o->grads + o->optimizer + o->fp8_weights
                     + (o->peak_in_step ? o->step_transient + o->graph_pool
                                        : o->activations);
    o->allowance = o->total - tensors;
    /* After a step the allocator still caches the backward's segments
     * and has added the step's new tensors beside them: a copy of a whole
     * gradient shard, or DeepSpeed's bucket, is larger than any block the
     * activations freed.
     * When memory runs short it frees its cache and retries
     * (c10/cuda/CUDACachingAllocator.cpp), so this is what a measurement
     * shows, not what must fit. */
    o->seen_reserved = fmax(o->alloc_backward * (1 + frag) + o->step_new,
                            o->reserved);
    if (o->stream_pool > 0) o->seen_reserved = o->reserved;
    o->seen_device = o->seen_reserved + o->context + o->nccl + o->moe_comm;
}

/* Whether rank b holds what rank a holds, chunk by chunk (transformer
 * layers, MoE layers, MTP modules). */
static int rank_alike(const space_model *m, const space_split *s, int64_t a,
                      int64_t b)
{
    for (int64_t j = 0; j < s->vpp; j++) {
        space_chunk x, y;
        space_split_chunk(s, a, j, &x);
        space_split_chunk(s, b, j, &y);
        if (x.layers != y.layers || x.mtp != y.mtp
            || est_moe_layers_in(m, x.offset, x.layers)
                   != est_moe_layers_in(m, y.offset, y.layers))
            return 0;
    }
    return 1;
}

void est_memory_of(const space_model *m, const space_layout *l,
                   est_memory *out)
{
    memset(out, 0, sizeof *out);
    space_params p;
    space_model_params(m, 128 * l->tp, &p);
    /* Every rank, but one that holds what a lower rank holds, chunk by
     * chunk: the lower one has as many micro-batches in flight or more
     * (inflight_chunks), so it needs as much or more (rank 0 more still,
     * with the embedding). The last rank (the head) and the MTP modules'
     * stand alone. Ranks in the order 0, PP - 1, 1, ..., PP - 2. */
    space_split sp;
    space_split_resolve(m, l, &sp, NULL, 0);
    int64_t pp = sp.pp, seen[16];
    int n_seen = 0;
    /* A formula split of a model whose layers are alike: the middle ranks
     * all hold alike; rank 1 stands for them. */
    int alike = !sp.lay && !sp.extra && est_moe_uniform(m);
    for (int64_t i = 0; i < pp; i++) {
        int64_t r = i == 0 ? 0 : i == 1 ? pp - 1 : i - 1;
        if (alike && i > 2) break;
        int skip = 0;
        if (i >= 2) { /* a middle rank */
            /* DualPipe: the ranks' second stages (PP - 1 - r) too */
            for (int k = 0; k < n_seen && !skip; k++)
                skip = rank_alike(m, &sp, seen[k], r)
                       && (l->pp_schedule != SPACE_PP_DUALPIPE
                           || rank_alike(m, &sp, pp - 1 - seen[k],
                                         pp - 1 - r));
            if (!skip && n_seen < 16) seen[n_seen++] = r;
        } else if (r != pp - 1 && n_seen < 16) {
            seen[n_seen++] = r;
        }
        if (skip) continue;
        est_memory st;
        stage_of(m, l, &p, r, &st);
        if (st.total > out->total) *out = st;
    }
}

/* ---- the device's share: workspaces, CUDA context, NCCL ----------------
 * Each term's formula and source: docs/memory.md, "What the runtime holds
 * besides the tensors"; tests/test_mem.c checks each. */

#define MIB 1048576.0

static int hopper_or_later(const hw_gpu *g)
{
    return strcmp(g->arch, "hopper") == 0 || strcmp(g->arch, "blackwell") == 0;
}

/* cuBLAS workspace of one PyTorch handle: CUBLAS_WORKSPACE_CONFIG's
 * default ":4096:2:16:8" = 8 MiB + 128 KiB, and ":4096:8" = 32 MiB on
 * Hopper (getChosenWorkspaceSize, aten/src/ATen/cuda/CublasHandlePool.cpp,
 * PyTorch 2.x). Handles are per CPU thread and autograd runs the backward
 * on its own, so a training step uses two. Transformer Engine shares one
 * cuBLASLt workspace among its GEMMs: 32 MiB from compute capability 9, 4
 * MiB before, three with userbuffers (--tp-comm-overlap)
 * (get_cublas_workspace_size_bytes, get_workspace,
 * transformer_engine/pytorch/module/base.py, NVIDIA/TransformerEngine v1.9
 * and v2.4). */
static double workspace_bytes(int h, const space_layout *l)
{
    double ws = 2 * (h ? 32 * MIB : 8 * MIB + 128 * 1024.0);
    if (l->framework == SPACE_FW_MEGATRON_CORE)
        ws += (l->tp_overlap == SPACE_TP_OVERLAP_ALL ? 3 : 1)
              * (h ? 32 * MIB : 4 * MIB);
    return ws;
}

/* Transformer Engine's userbuffers for --tp-comm-overlap, registered with
 * NCCL outside PyTorch's allocator: ten buffers of seq x mbs / cp x hidden
 * (TE 2.4's default set in initialize_ub, base.py, with the shape
 * Megatron-Core passes, megatron/training/initialize.py core_v0.12.0), two
 * bytes each, one for the six all-gather buffers under fp8: 20 (bf16) or
 * 14 (fp8) x s b h / cp bytes. */
static double userbuffer_bytes(const space_model *m, const space_layout *l)
{
    if (l->framework != SPACE_FW_MEGATRON_CORE
        || l->tp_overlap != SPACE_TP_OVERLAP_ALL || l->tp < 2)
        return 0;
    double sbh = (double)l->seq * (double)l->mbs / (double)l->cp
                 * (double)m->hidden;
    return (l->dtype == HW_FP8 ? 14 : 20) * sbh;
}

/* The CUDA context with the kernels it loads. Eager module loading
 * (PyTorch 1.x): 1573 MiB on an A100 ("40GB A100 takes 1573MiB for cuda
 * kernels", bigscience-workshop/bigscience,
 * train/tr11-176B-ml/chronicles-prequel.md). Lazy loading (PyTorch sets
 * CUDA_MODULE_LOADING=LAZY since 1.13, pytorch/pytorch#86509): 274 MiB
 * bare, "around 400MB" (pytorch/pytorch#109888) before the libraries a
 * step loads; 512 MiB taken, not measured on Hopper. Before PyTorch 1.13
 * cuBLAS took its workspaces itself, outside the allocator: here too. */
#define EST_MEM_CONTEXT_EAGER (1573.0 * MIB)
#define EST_MEM_CONTEXT_LAZY (512.0 * MIB)
/* Measured with lazy loading on an H100 (PyTorch 2.11, CUDA 13.0,
 * NCCL 2.28.9; bench/data/memsample_h100, NVML's figure for the process):
 * 520 MiB after the first tensor, 198 MiB more once cuBLAS has run a
 * GEMM (its kernels, outside the allocator), and 564 MiB more once NCCL
 * has made its first communicator and run a collective, with no peer to
 * connect to (its kernels and fixed device structures; the buffers per
 * peer are nccl_bytes's). The estimate takes the 512 above plus the
 * cuBLAS and NCCL figures: 1274 MiB against the 1306 MiB between
 * nvidia-smi and max_memory_reserved after the steps. */
#define EST_MEM_CUBLAS_MODULES (198.0 * MIB)
#define EST_MEM_NCCL_FIXED (564.0 * MIB)

/* NCCL. This GPU's share of one send and one receive connector on one
 * channel: the LL (512 KiB), LL128 (4.6875 MiB) and Simple (NCCL_BUFFSIZE,
 * 4 MiB) buffers, all three always allocated (computeBuffSizes, init.cc),
 * each side's rounded up to 2 MiB over NVLink or PCIe (transport/p2p.cc):
 * 12 MiB; over the network with GPUDirect RDMA the sender keeps Simple and
 * LL128, the receiver all three (transport/net.cc): 8.69 + 9.19 MiB
 * (NVIDIA/nccl v2.18.3, the same at v2.23.4). */
#define NCCL_PAIR_P2P (12.0 * MIB)
#define NCCL_PAIR_NET (17.875 * MIB)

/* Channels of a collective communicator inside a node: 24 on an HGX A100
 * ("Channel 23/24", NVIDIA/nccl-tests#100), 32 on H100 (channel indices
 * above 22, NVIDIA/nccl#1259; 32 p2p channels, NVIDIA/nccl#1685); with one
 * GPU per node, two per NIC the GPU reaches. */
static double nccl_channels(int h)
{
    return h ? 32 : 24;
}

/* One collective communicator of n ranks, `local` of them on this node:
 * its ring and its tree (NCCL before 2.22 connects both when it creates
 * the communicator; after, at the first collective of each algorithm, and
 * every group Megatron creates runs small all-reduces, which take the
 * tree); NVLink SHARP's buffers on NVSwitch nodes of Hopper and later
 * (NCCL_NVLS_ENABLE auto) for a communicator that all-reduces large
 * tensors inside a node: 16 channels x 2 x 1 MiB x local GPUs from NCCL
 * 2.22 (transport/nvls.cc; 1536 MiB per 8 GPUs in 2.17-2.20). */
static double nccl_coll(const est_ctx *c, int h, int64_t n, int64_t local,
                        int nvls)
{
    if (n <= 1) return 0;
    const hw_system *y = c->sys;
    double b;
    if (local <= 1) {
        int per_gpu = y && y->gpus_per_node > 0
                          ? (y->nics_per_node + y->gpus_per_node - 1)
                                / y->gpus_per_node
                          : 1;
        b = 2 * (per_gpu > 0 ? per_gpu : 1) * 2 * NCCL_PAIR_NET;
    } else {
        b = nccl_channels(h) * 2 * NCCL_PAIR_P2P;
    }
    if (nvls && local > 2 && h && y
        && y->intra_topology == HW_TOPO_NVSWITCH)
        b += 16 * 2 * MIB * (double)local;
    return b;
}

/* Ranks of a group of n at stride `stride` (Megatron's rank order: tp,
 * cp, dp, pp) that share this node. */
static int64_t local_ranks(int64_t n, int64_t stride, int gpn)
{
    int64_t per = stride >= gpn ? 1 : gpn / stride;
    return n < per ? n : per;
}

/* The communicators a layout creates and their buffers on one GPU: TP, CP,
 * DP (DP x CP for the gradients with CP), the world's (Megatron's
 * barriers), the first and last stages' embedding group with tied
 * embeddings, and the pipeline's point-to-point sends, connected per peer
 * at the first send: 32 channels x 12 MiB per neighbour inside a node, a
 * pool of 32 channels x 16 steps x 128 KiB each way across nodes
 * (NCCL_P2P_NET_CHUNKSIZE; sharedBuffersInit, transport/net.cc v2.18.3). */
static double nccl_bytes(const est_ctx *c, int h, const space_model *m,
                         const space_layout *l)
{
    int gpn = c->sys && c->sys->gpus_per_node > 0 ? c->sys->gpus_per_node : 8;
    int64_t tp = l->tp, cp = l->cp, dp = l->dp, pp = l->pp;
    if (tp < 1 || cp < 1 || dp < 1 || pp < 1) return 0; /* not a layout */
    int64_t world = tp * cp * dp * pp;
    double b = nccl_coll(c, h, tp, local_ranks(tp, 1, gpn), !l->sp)
               + nccl_coll(c, h, cp, local_ranks(cp, tp, gpn), 0)
               + nccl_coll(c, h, dp * cp, local_ranks(dp * cp, tp, gpn),
                           l->zero == SPACE_ZERO_NONE)
               + nccl_coll(c, h, world, local_ranks(world, 1, gpn), 0);
    if (cp > 1) b += nccl_coll(c, h, dp, local_ranks(dp, tp * cp, gpn), 0);
    if (pp > 1) {
        if (m->tied_embeddings) b += nccl_coll(c, h, 2, 1, 0);
        int64_t stride = tp * cp * dp;
        if (stride < gpn) {
            double peers = l->vpp > 1 || pp > 2 ? 2 : 1;
            b += peers * 32 * NCCL_PAIR_P2P;
        } else {
            b += 2 * 32 * 16 * 128 * 1024.0;
        }
    }
    return b;
}

/* DeepEP's normal-mode buffers (deepseek-ai/DeepEP@v1.2.1, 9af0e0d0e,
 * deep_ep/buffer.py Buffer.get_dispatch_config and get_combine_config,
 * csrc/config.hpp Config.get_nvl_buffer_size_hint and
 * get_rdma_buffer_size_hint, csrc/deep_ep.cpp Buffer::Buffer), as
 * Megatron-Core sizes them (moe/fused_a2a.py get_buffer: the larger hint
 * of the dispatch and combine configs of the group, hidden_bytes = h x
 * max(element size, 2) = 2h; 20 SMs, token_dispatcher.py
 * _DeepepManager, moe_flex_dispatcher_num_sms unset). One buffer for the
 * run, on the EP x ETP group of n ranks: the NVLink buffer, cudaMalloc'd
 * with its barrier signals and pointers, a 32 MiB workspace, and past 8
 * ranks (NUM_MAX_NVL_PEERS) the RDMA buffer from NVSHMEM's heap. DeepEP
 * configures only the group sizes of its table; another takes the next
 * listed size. Per channel (SMs / 2) and NVLink peer (n, at most 8), a
 * received token takes its data, an 8-byte source meta, 128 top-k
 * indices (int64) and weights (fp32) and 128 fp32 scales; over RDMA,
 * twice each, per RDMA peer (n / 8), and 16 bytes more, with the
 * received-token count rounded up to a multiple of the sent chunk. */
static double deepep_bytes(double h, int64_t n)
{
    static const struct {
        int ranks, nvl_recv[2], rdma_send[2], rdma_recv;
    } cfg[] = { /* dispatch, combine */
        {2, {256, 256}, {6, 6}, 128},     {4, {256, 256}, {6, 6}, 128},
        {8, {256, 256}, {6, 6}, 128},     {16, {288, 288}, {20, 12}, 128},
        {24, {288, 288}, {32, 8}, 128},   {32, {288, 288}, {32, 8}, 128},
        {64, {288, 288}, {28, 20}, 128},  {128, {560, 560}, {32, 12}, 128},
        {144, {720, 720}, {12, 8}, 128},  {160, {720, 720}, {12, 8}, 128},
    };
    size_t k = 0;
    while (k + 1 < sizeof cfg / sizeof cfg[0] && cfg[k].ranks < n) k++;
    double ranks = (double)cfg[k].ranks, ch = 20 / 2;
    double nvl_r = fmin(ranks, 8), rdma_r = fmax(floor(ranks / 8), 1);
    double hb = 2 * h, tok = hb + 8 + 128 * 8 + 128 * 4 + 128 * 4;
    double nvl = 0, rdma = 0;
    for (int d = 0; d < 2; d++) {
        double b = ch * nvl_r * (2 * rdma_r + 3) * 4
                   + ch * nvl_r * cfg[k].nvl_recv[d] * tok;
        nvl = fmax(nvl, ceil(b / 128) * 128);
        if (ranks > 8) {
            double s = cfg[k].rdma_send[d];
            double recv = ceil(cfg[k].rdma_recv / s) * s;
            double rb = ch * rdma_r * (8 * 2 + 2) * 2 * 4
                        + ch * rdma_r * recv * 2 * (tok + 16);
            rdma = fmax(rdma, ceil(rb / 128) * 128);
        }
    }
    return nvl + 8 * 4 + 8 * 8 + 8 * 8 + 32 * MIB + rdma;
}

/* HybridEP's buffers (deepseek-ai/DeepEP branch hybrid-ep@94a9f8f,
 * deep_ep/hybrid_ep_buffer.py HybridEPBuffer, csrc/hybrid_ep/buffer/
 * intranode.cu NVLCoordinator::allocate_*_buffers and internode_doca.cu
 * RDMACoordinator::allocate_*_buffers), which Megatron-Core makes at the
 * first dispatch for the rank's t tokens (fused_a2a.py
 * init_hybrid_ep_buffer): over NVLink room for every token of the group
 * of n ranks (the worst case, all routed to one rank): 16-bit data, an
 * fp32 probability per expert of the NVLink domain and an fp32 scale per
 * 128 values, dispatch and combine sharing it (use_shared_buffer); with
 * several NVLink domains (nodes) the RDMA side's staging of the rank's
 * tokens and of the other domains' (dispatch and combine). e = local
 * experts, dom = ranks per NVLink domain. */
static double hybridep_bytes(double h, double t, int64_t n, double e,
                             int64_t dom)
{
    double rpn = (double)(n < dom ? n : dom), nodes = (double)n / rpn;
    double tok = 2 * h + 4 * e * rpn + 4 * (h / 128);
    double b = t * (double)n * tok;
    if (nodes > 1) {
        double other = t * (nodes - 1);
        b += t * (2 * h + 4 * e * rpn * nodes + 4 * (h / 128))
             + other * tok /* dispatch: the other domains' tokens */
             + 2 * other * (2 * h + 4 * e * rpn); /* combine */
    }
    return b;
}

/* The MoE dispatcher's buffers outside PyTorch's allocator
 * (est_memory.moe_comm): the flex dispatcher's backend (DeepEP,
 * HybridEP) with expert parallelism; none for the all-to-all and
 * all-gather dispatchers, whose buffers are tensors (moe_buffers). */
static double moe_comm_bytes(const est_ctx *c, const space_model *m,
                             const space_layout *l)
{
    if (m->num_experts <= 0 || l->moe_dispatcher != SPACE_MOE_FLEX
        || l->framework != SPACE_FW_MEGATRON_CORE)
        return 0;
    int64_t n = space_layout_ep(l) * space_layout_etp(l);
    if (n < 2) return 0;
    double h = (double)m->hidden;
    if (l->moe_flex_backend != SPACE_MOE_FLEX_HYBRIDEP)
        return deepep_bytes(h, n);
    const hw_system *y = c->sys;
    int64_t dom = y && y->scaleup_domain_gpus > 0 ? y->scaleup_domain_gpus
                  : y && y->gpus_per_node > 0     ? y->gpus_per_node
                                                  : 8;
    double t = (double)l->mbs * (double)l->seq / (double)l->cp
               / (l->sp ? (double)l->tp : 1);
    double e = (double)m->num_experts / (double)space_layout_ep(l);
    return hybridep_bytes(h, t, n, e, dom);
}

void est_memory_device(const est_ctx *c, const space_model *m,
                       const space_layout *l, est_memory *mem)
{
    int h = hopper_or_later(c->gpu); /* once: this runs in every estimate */
    double ws = workspace_bytes(h, l);
    if (mem->fp8_transposes > 0 && strcmp(c->gpu->arch, "blackwell") == 0) {
        /* Blackwell runs fp8 GEMMs in every layout: Transformer Engine
         * keeps one copy of a per-tensor-scaled weight (stage_of) */
        double t = mem->fp8_transposes;
        mem->fp8_weights -= t;
        mem->alloc_backward -= t;
        mem->alloc_step -= t;
        mem->main_peak -= t;
        mem->fp8_transposes = 0;
    }
    if (of_2021(l)) {
        mem->workspace = 0;
        mem->context = EST_MEM_CONTEXT_EAGER + ws;
    } else {
        mem->workspace = ws;
        mem->alloc_backward += ws;
        mem->alloc_step += ws;
        mem->main_peak += ws;
        mem->context = EST_MEM_CONTEXT_LAZY + EST_MEM_CUBLAS_MODULES;
    }
    mem->nccl = nccl_bytes(c, h, m, l) + userbuffer_bytes(m, l)
                + (of_2021(l) ? 0 : EST_MEM_NCCL_FIXED);
    mem->moe_comm = moe_comm_bytes(c, m, l);
    est_memory_settle(mem, est_memory_cache_share(l->alloc_expandable));
}

double est_memory_cache_share(int expandable)
{
    return expandable ? EST_MEM_CACHE_EXPANDABLE : EST_MEM_CACHE_SEGMENTS;
}

/* The margin the search adds to an estimated peak before it compares it
 * with the GPU's memory: per framework, the worst of its own runs'
 * under-estimates of what must fit, (measured - ours) / ours, from its
 * max_memory_allocated figures (their shortfall over est_memory.total),
 * or where it has fewer than 10 of those from its reserved or nvidia-smi
 * figures in their own quantity, leaving each source out of the
 * allocator's fit (they hold the allocator's cache, so they over-state
 * it); bench/validate_memory derives each and the memory_margin test holds
 * this table to it (bench/results/validate_memory.md). A framework with
 * fewer than 10 of either has no margin of its own (borrowed): it takes
 * the largest margin from max-allocated figures, lowered where that would
 * refuse one of its own runs that ran to the largest that admits them all
 * (bench/validate_fit --check holds that bound; results/validate_fit.md). */
#define EVIDENCE_MEGATRON_CORE                                               \
    "Margin: the worst under-estimate of 327 max-allocated peaks of "       \
    "Megatron-Core runs (Megatron-LM's CI golden values on A100, H100 and " \
    "GB200; open-sci-ref's 1.7B on A100 64GB, bench/data/memory_runs.json)"  \
    ", as a share of what must fit (a fused-loss run of an older A100 "     \
    "container; the 95th percentile is +2.6 %)."
#define EVIDENCE_MEGATRON_2021                                               \
    "Margin: no measured peak of this framework's own: Megatron-Core's, "  \
    "lowered to the largest that admits every published run of it "         \
    "(Narayanan et al. 2021's 1T on Selene, 0.922 of its GPU); a guess "    \
    "bounded by what ran."
#define EVIDENCE_PYTORCH_FSDP                                                \
    "Margin: no measured peak of this framework's own: the largest that "   \
    "admits every published run of it (llm-foundry's MPT-1B at micro-batch " \
    "10 on A100 40GB, 0.977 of its GPU), below Megatron-Core's; a guess "   \
    "bounded by what ran."
#define EVIDENCE_TORCHTITAN                                                  \
    "Margin: the worst under-estimate of 36 max-allocated peaks of "        \
    "torchtitan-style FSDP2 steps measured on one H100 (bench/data/"        \
    "memsample_h100), as a share of what must fit; no pipeline, tensor "    \
    "parallelism or second rank among them."
#define EVIDENCE_DEEPSPEED                                                   \
    "Margin: the worst under-estimate of 40 nvidia-smi peaks of "           \
    "BigScience's Megatron-DeepSpeed runs, their allocator's cache fitted " \
    "without them (bench/data/memory_runs.json); they hold that cache, so " \
    "they over-state what must fit."
static const struct {
    double margin;
    int borrowed; /* no measured peak of its own */
    const char *evidence;
} margin_of[SPACE_FW_COUNT] = {
    [SPACE_FW_MEGATRON_CORE] = {0.096, 0, EVIDENCE_MEGATRON_CORE},
    [SPACE_FW_MEGATRON_2021] = {0.084, 1, EVIDENCE_MEGATRON_2021},
    [SPACE_FW_TORCHTITAN] = {0.015, 0, EVIDENCE_TORCHTITAN},
    [SPACE_FW_PYTORCH_FSDP] = {0.023, 1, EVIDENCE_PYTORCH_FSDP},
    [SPACE_FW_DEEPSPEED_2021] = {0.132, 0, EVIDENCE_DEEPSPEED},
};

double est_memory_margin(const space_layout *l)
{
    unsigned f = (unsigned)l->framework;
    return margin_of[f < SPACE_FW_COUNT ? f : 0].margin;
}

int est_memory_margin_borrowed(const space_layout *l)
{
    unsigned f = (unsigned)l->framework;
    return margin_of[f < SPACE_FW_COUNT ? f : 0].borrowed;
}

const char *est_memory_evidence(const space_layout *l)
{
    unsigned f = (unsigned)l->framework;
    return margin_of[f < SPACE_FW_COUNT ? f : 0].evidence;
}
