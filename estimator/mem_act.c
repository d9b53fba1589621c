/*
 * mem_act.c - activation memory: the bytes per token each layer keeps for
 * the backward (dense and MoE, every recompute mode, fp8 and nvfp4 saved
 * inputs, the MoE dispatcher's buffers and maps), what fine-grained
 * offloading moves, the micro-batches and model chunks in flight on a
 * pipeline rank under each schedule, and what per-layer CUDA graphs keep
 * in their pool. Not here: parameters and states (mem_state.c), the
 * loss's and frameworks' buffers (mem_buf.c, mem.c's stage_of).
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
 * chunk with block, est_act_rank_token); torchtitan's op-level selective
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

#include "est_int.h"

#include <math.h>
#include <string.h>

/* An fp8 element and its share of the recipe's scales: MXFP8's e8m0 byte
 * per 32 elements, blockwise's fp32 per block_elems (its tile or block),
 * nothing per element for the per-tensor recipes. */
static double fp8_scaled_bytes(const space_layout *l, double block_elems)
{
    return l->fp8_recipe == SPACE_FP8_MXFP8       ? 1 + 1.0 / 32
           : l->fp8_recipe == SPACE_FP8_BLOCKWISE ? 1 + 4.0 / block_elems
                                                  : 1;
}

/* Bytes one quantised copy of an fp8 activation (or gradient) takes per
 * element under Transformer Engine: one, and its scales: with MXFP8 one
 * e8m0 byte per 32 elements of its row (or column) direction
 * (MXFP8Quantizer), with blockwise scaling one fp32 per 1 x 128 tile
 * (Float8BlockQuantizer, block_scaling_dim 1: 4/128, 3.1 %), per-tensor
 * recipes one scale a tensor (nothing per element).
 * transformer_engine/pytorch/csrc/quantizer.cpp, NVIDIA/TransformerEngine@
 * d0067d0da. Until 2026-11 the blockwise tiles' scales were left out
 * (this comment called them "below 0.1 %", which holds for a weight's
 * 128 x 128 blocks only: est_fp8_weight_copy_bytes). */
double est_fp8_copy_bytes(const space_layout *l)
{
    return fp8_scaled_bytes(l, 128);
}

/* The same for a weight's copy: MXFP8 as an activation's; blockwise one
 * fp32 per 128 x 128 block (block_scaling_dim 2: 4/16384). */
double est_fp8_weight_copy_bytes(const space_layout *l)
{
    return fp8_scaled_bytes(l, 128 * 128);
}

/* Bytes a GEMM input takes as saved for the backward: fp8 where
 * Transformer Engine quantises it (TE 1.x saves the fp8 input or its fp8
 * transpose, transformer_engine/pytorch/module/linear.py, _Linear.forward,
 * NVIDIA/TransformerEngine@e79d915aa0ae (v1.9); layernorm_linear.py saves
 * its fp8 ln_out; TE 2.x saves the quantised input, column-wise data only
 * where it need not be gathered, linear.py, NVIDIA/TransformerEngine@
 * 3cd6870ceb80 (v2.4)), else 16 bits. */
double est_gemm_input_bytes(const space_layout *l)
{
    if (l->fp8_lib != SPACE_FP8_LIB_TE) return 2;
    if (l->dtype == HW_FP8) return est_fp8_copy_bytes(l);
    /* NVFP4 (TE NVFP4BlockScaling): the quantised input kept for the
     * weight gradient, half a byte an element and an e4m3 scale per 16
     * (transformer_engine/pytorch/tensor/nvfp4_tensor.py; arXiv
     * 2509.25149, section 3). */
    if (l->dtype == HW_FP4) return EST_NVFP4_BYTES;
    return 2;
}

/* DeepSeek-V3's framework keeps less of an fp8 run's activations than
 * Transformer Engine under Megatron-Core (--fp8-activation-cache
 * deepseek-v3; DeepSeek-V3 technical report, arXiv 2412.19437v2, section
 * 3.3.3 "Low-Precision Storage and Communication", "Low-Precision
 * Activation"): the GEMM inputs in fp8, as TE's, and
 *   (1) "Inputs of the Linear after the attention operator": kept once, in
 *       "a customized E5M6 data format", for the attention's backward and
 *       the projection's weight gradient alike (TE: flash attention's
 *       16-bit output and the projection's fp8 copy beside it);
 *       EST_E5M6_BYTES each;
 *   (2) "Inputs of the SwiGLU operator in MoE": "we cache the inputs of
 *       the SwiGLU operator and recompute its output in the backward
 *       pass", the inputs "in FP8": a byte and its tile's scale share
 *       (est_fp8_copy_bytes) for each of the 2 f_e inputs of
 *       a row, no FC2 input kept (TE: 16-bit inputs and FC2's fp8 copy of
 *       the output); the MoE layer's experts, routed and shared (a shared
 *       expert is one of DeepSeekMoE's experts, section 2.1.2), not the
 *       dense layers' MLPs; the output exists again, at 16 bits and in
 *       fp8 for FC2's weight gradient, while one layer's backward runs;
 *   and with MLA's up projections recomputed, "We recompute all RMSNorm
 *   operations and MLA up-projections during back-propagation" (section
 *   3.2.3): the latents' norms too, so the up projections' input is not
 *   kept, only the latents.
 * Not modelled: the fp8 dispatch ("we quantize the activation before MoE
 * up-projections into FP8 and then apply dispatch components"): the
 * dispatch's buffers shrink, but the combine, "in BF16", is the larger of
 * the two (moe_buffers). The fp8 copies carry their 1 x 128 tiles' fp32
 * scales (est_fp8_copy_bytes), as section 3.3.2's fine-grained
 * quantization has them. */
int est_fp8_deepseek(const space_layout *l)
{
    return l->fp8_act_cache == SPACE_FP8_ACT_DEEPSEEK_V3 && l->dtype == HW_FP8
           && l->fp8_lib == SPACE_FP8_LIB_TE;
}

/* Whether MLA's up projections keep their input, the latents' norm
 * output (est_gemm_input_bytes: Transformer Engine's fp8 copy, or 16
 * bits). Recomputed ("mla_up_proj"), they do not, in Megatron-Core's and
 * DeepSeek-V3's framework alike: Megatron-Core's Transformer Engine spec
 * fuses the latents' norms into the up projections (qk_layernorm:
 * linear_q_up_proj and linear_kv_up_proj are TELayerNormColumnParallelLinear,
 * q_layernorm and kv_layernorm IdentityOp; gpt_layer_specs.py
 * get_gpt_layer_with_transformer_engine_submodules), and the recomputed
 * block (MLASelfAttention.qkv_up_checkpoint, a CheckpointWithoutOutput;
 * multi_latent_attention.py get_query_key_value_tensors) keeps only its
 * inputs, the latents before their norms, which are kept anyway (the 2
 * bytes of the norm input); DeepSeek-V3 "recompute[s] all RMSNorm
 * operations and MLA up-projections" (arXiv 2412.19437v2 section 3.2.3).
 * NVIDIA/Megatron-LM@d98e8a64ddf3. Until 2026-11 this kept the fp8 copy
 * under Megatron-Core, (2 + g) where the code keeps 2. */
static int mla_up_in(unsigned rc)
{
    return !(rc & SPACE_RC_MLA_UP_PROJ);
}

/* An E5M6 element: 1 sign, 5 exponent and 6 mantissa bits, 12 bits. The
 * report does not say how it is packed; a 16-bit container would hold
 * less range and precision than bf16 at bf16's size, so the format is
 * read as stored in its 12 bits. */
#define EST_E5M6_BYTES 1.5

/* Bytes per FFN hidden unit of one expert row (or token of a shared
 * expert) kept of the activation's input(s) (*act_in: gated 2 f_e inputs)
 * and of FC2's input (*fc2_in, the activation's output); rc_frees_out:
 * selective recomputation's moe_act frees a 16-bit output. */
static void expert_act_bytes(const space_layout *l, int gated,
                             int rc_frees_out, double *act_in, double *fc2_in)
{
    double gin = est_gemm_input_bytes(l);
    if (gated && est_fp8_deepseek(l)) {
        *act_in = 2 * est_fp8_copy_bytes(l), *fc2_in = 0;
        return;
    }
    *act_in = gated ? 4 : 2;
    *fc2_in = rc_frees_out && gin == 2 ? 0 : gin;
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
    double gin = est_gemm_input_bytes(l);
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
    double act_in, fc2_in;
    expert_act_bytes(l, gated, 0, &act_in, &fc2_in);
    if (fs > 0 && !(rc & SPACE_RC_SHARED_EXPERTS))
        a += (act_in + fc2_in) * fs / t;
    if (router_out) *router_out = a; /* up to the router, shared experts */
    expert_act_bytes(l, gated, (rc & SPACE_RC_MOE_ACT) != 0, &act_in, &fc2_in);
    a += rows * (gin * h + (act_in + fc2_in) * fe + 4);
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
    double sorted = est_gemm_input_bytes(l) < 2 ? rows : 0;
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

/* Bytes per token of the SwiGLU output DeepSeek-V3's framework recomputes
 * in an MoE layer's backward (est_fp8_deepseek): at 16 bits and its fp8 copy
 * for FC2's weight gradient, the rank's expert rows and the shared
 * experts; 0 otherwise. */
static double swiglu_rebuilt(const space_model *m, const space_layout *l)
{
    if (space_act_ffn_gemms(m->act) != 3 || !est_fp8_deepseek(l)) return 0;
    double rep = l->sp ? 1 / (double)l->tp : 1;
    double etp = (double)space_layout_etp(l);
    double imb = space_layout_ep(l) > 1 ? est_moe_imbalance(m, l) : 1;
    double rows = etp * (double)m->top_k * imb * rep;
    double per = 2 + est_gemm_input_bytes(l);
    return per * (rows * (double)m->expert_ffn_hidden / etp
                  + (double)(m->shared_experts * m->shared_ffn_hidden)
                        / (double)l->tp);
}

/* Activation bytes per token of one layer kept for the backward: a
 * dense-FFN layer, or with moe an MoE layer. *ffn_out (where not NULL):
 * the part of them its FFN (dense MLP or MoE layer, with the residual's
 * dropout mask after it) keeps, the rest being the attention's;
 * *router_out: of an MoE layer's FFN part, what it keeps up to its router
 * with the shared experts (CUDA graphs' scopes, est_graph_pool_token). */
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
         * the project's H100 steps are within 1 % either way).
         * The attention's output is kept only where its op is in the save
         * list: flash and memory-efficient SDPA. torchtitan runs SDPA's
         * cuDNN kernel first on compute capability 10.x (Blackwell;
         * ScaledDotProductAttention._init_backend, models/attention.py,
         * pytorch/torchtitan@3b85aa31f, #1196, 2025-05-14), whose op
         * (_scaled_dot_product_cudnn_attention) the list left out until
         * pytorch/torchtitan@b39377f9f (#2095, 2025-12-01; issue #2091
         * "to avoid recomputing attention during backward"): the policy
         * says PREFER_RECOMPUTE, which the compiled partitioner treats as
         * must-recompute (torch/_functorch/partitioners.py must_recompute)
         * and eager checkpointing as not cached, so neither its output
         * nor its statistics stay; the attention runs again in the
         * layer's backward, among what is rebuilt (l->sac_attn_recompute;
         * pytorch/ao's B200 runs at torchtitan@6fc499f6). */
        double a = 2 * h * rep + 2 * q / t + 2 * kv / t;
        if (!l->sac_attn_recompute)
            a += 2 * q / t
                 + (l->flash ? 4 * (double)m->heads / t
                             : 2 * (double)m->heads * (double)l->seq
                                   / (double)l->cp / t);
        *ffn_out = 2 * f / t + (gated && l->eager ? 2 * h * rep : 0);
        return a + 2 * f / t + (gated && l->eager ? 2 * h * rep : 0);
    }
    /* The norm inputs stay 16-bit; the GEMM inputs as est_gemm_input_bytes
     * says (Megatron-Core: TELayerNormColumnParallelLinear for QKV and
     * FC1, TERowParallelLinear for the output projection and FC2). */
    double gin = est_gemm_input_bytes(l);
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
        int up_in = mla_up_in(rc);
        a = (2 + (rc & SPACE_RC_LAYERNORM ? 0 : gin)) * h * rep
            + (2 + (up_in ? gin : 0)) * (ql + (double)m->kv_lora_rank) * rep
            + (rc & SPACE_RC_MLA_UP_PROJ
                   ? 0
                   : 2 * H * (2 * qk + (double)m->v_head_dim) / t);
        q = H * (double)m->v_head_dim;
    } else {
        a = (2 + gin) * h * rep + 2 * (q + 2 * kv) / t;
    }
    /* The output projection's input kept once in E5M6 by DeepSeek-V3's
     * framework (est_fp8_deepseek) */
    double proj_in = est_fp8_deepseek(l) ? EST_E5M6_BYTES * q / t : -1;
    if (l->flash) {
        /* Flash attention keeps its 16-bit output, which is the output
         * projection's input: one tensor at 16 bits, the output and its
         * fp8 copy under Transformer Engine. */
        a += (proj_in >= 0 ? proj_in : 2 * q / t + (gin < 2 ? gin * q / t : 0))
             + 4 * (double)m->heads / t;
    } else {
        a += proj_in >= 0 ? proj_in : gin * q / t;
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

double est_act_layer_token(const space_model *m, const space_layout *l,
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
 * est_act_layer_token's and act_moe_ffn_token's terms:
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
    double gin = est_gemm_input_bytes(l);
    unsigned rc = space_recompute_modules(l);
    double a = 0;
    if (m->kv_lora_rank > 0) {
        double H = (double)m->heads, ql = (double)m->q_lora_rank;
        double qk = (double)(m->qk_nope_head_dim + m->qk_rope_head_dim);
        if (om & SPACE_OFF_ATTN_NORM) a += 2 * h * rep;
        int up_in = mla_up_in(rc);
        if (om & SPACE_OFF_QKV_LINEAR)
            a += (rc & SPACE_RC_LAYERNORM ? 0 : gin) * h * rep
                 + (2 + (up_in ? gin : 0)) * (ql + (double)m->kv_lora_rank)
                       * rep;
        if (om & SPACE_OFF_CORE_ATTN && !(rc & SPACE_RC_MLA_UP_PROJ))
            a += 2 * H * (2 * qk + (double)m->v_head_dim) / t;
        q = H * (double)m->v_head_dim;
    } else {
        if (om & SPACE_OFF_QKV_LINEAR) a += (2 + gin) * h * rep;
        if (om & SPACE_OFF_CORE_ATTN) a += 2 * (q + 2 * kv) / t;
    }
    int ds = est_fp8_deepseek(l); /* the output kept once, in E5M6 */
    if (om & SPACE_OFF_CORE_ATTN) {
        if (l->flash) {
            a += (ds ? EST_E5M6_BYTES : 2) * q / t + 4 * (double)m->heads / t;
        } else if (!(rc & SPACE_RC_CORE_ATTN)) {
            double as = (double)m->heads * (double)l->seq / (double)l->cp / t;
            a += (m->attn_dropout > 0 ? 5 : 2) * as;
        }
    }
    if (om & SPACE_OFF_ATTN_PROJ)
        a += ds ? (l->flash ? 0 : EST_E5M6_BYTES * q / t)
                : l->flash ? (gin < 2 ? gin * q / t : 0) : gin * q / t;
    if (moe && m->num_experts > 0 && !(rc & SPACE_RC_MOE)) {
        int gated = space_act_ffn_gemms(m->act) == 3;
        double etp = (double)space_layout_etp(l);
        double fe = (double)m->expert_ffn_hidden / etp;
        double imb = space_layout_ep(l) > 1 ? est_moe_imbalance(m, l) : 1;
        double rows = etp * (double)m->top_k * imb * rep;
        if (om & SPACE_OFF_MLP_NORM) a += 2 * h * rep;
        if (om & SPACE_OFF_EXPERT_FC1) a += rows * gin * h;
        if (om & SPACE_OFF_MOE_ACT) {
            double act_in, fc2_in;
            expert_act_bytes(l, gated, (rc & SPACE_RC_MOE_ACT) != 0, &act_in,
                             &fc2_in);
            a += rows * ((act_in + fc2_in) * fe + 4);
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
    if (l->act_offload_layers > 0) return est_act_layer_token(m, l, 0, moe);
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
double est_inflight_chunks(const space_layout *l, int64_t r, int64_t micro)
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
 * in flight in all (est_inflight_chunks): the interleaved schedule runs its
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

void est_act_layers_of(const space_model *m, const space_layout *l,
                       est_act_layers *a)
{
    memset(a, 0, sizeof *a);
    a->kept = est_act_layer_token(m, l, 0, 0);
    a->full = est_act_layer_token(m, l, 1, 0);
}

/* a's MoE layers' terms, the first time a chunk holds MoE layers. */
static void act_layers_moe(const space_model *m, const space_layout *l,
                           est_act_layers *a)
{
    if (a->have_moe) return;
    a->kept_moe = est_act_layer_token(m, l, 0, 1);
    a->full_moe = est_act_layer_token(m, l, 1, 1);
    a->buffers = moe_buffers(m, l);
    a->swiglu = swiglu_rebuilt(m, l);
    a->have_moe = 1;
}

/* What one model chunk of c layers, nm of them MoE, keeps per token for
 * one micro-batch (*per), rebuilds at once in its backward (*rebuilt),
 * and moves to the host under Transformer Engine's layer offload (*host,
 * already taken out of *per), its layers' terms from a; see
 * est_act_rank_token. */
static void chunk_act(const space_model *m, const space_layout *l,
                      est_act_layers *a, double c, double nm, int64_t micro,
                      double *per, double *rebuilt_out, double *host_out)
{
    *host_out = 0;
    double kept_in = a->kept, full = a->full;
    double full_max = full, buffers = 0;
    if (c <= 0) {
        *per = *rebuilt_out = 0;
        return;
    }
    if (nm > 0) {
        /* Dense-FFN and MoE layers of a chunk: their mean per layer; the
         * layer rebuilt at once, the larger kind. */
        act_layers_moe(m, l, a);
        double km = a->kept_moe, fm = a->full_moe;
        kept_in = ((c - nm) * kept_in + nm * km) / c;
        full = ((c - nm) * full + nm * fm) / c;
        full_max = fmax(full_max, fm);
        buffers = a->buffers;
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
            rebuilt = fmax(a->full - a->kept,
                           nm > 0 ? a->full_moe - a->kept_moe : 0);
    }
    rebuilt += buffers; /* one MoE layer's dispatch at a time */
    if (nm > 0) rebuilt += a->swiglu;
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
 * the rank's layers in flight). a: est_act_layers_of's of m and l, which
 * ranks share (their MoE layers' terms filled where first needed). */
double est_act_rank_token(const space_model *m, const space_layout *l,
                          const space_split *s, int64_t r, int64_t micro,
                          est_act_layers *a, double *rebuilt_out,
                          double *host_out)
{
    int64_t v = s->vpp;
    double chunks = est_inflight_chunks(l, r, micro);
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
            chunk_act(m, l, a, (double)c.layers, nm, micro, &per, &rebuilt,
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
        chunk_act(m, l, a, (double)c0.layers, (double)nm0, micro, &per,
                  &rebuilt, &host);
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
            chunk_act(m, l, a, (double)c.layers, nm, micro, &per, &rebuilt,
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
double est_graph_pool_token(const space_model *m, const space_layout *l,
                            const space_split *s, int64_t r, int64_t micro)
{
    unsigned g = l->cuda_graph_modules;
    /* the rank's layers in flight, dense and MoE, chunk by chunk as the
     * split s puts them (inflight_of_chunk) */
    double chunks = est_inflight_chunks(l, r, micro), lay = 0, nm = 0;
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
