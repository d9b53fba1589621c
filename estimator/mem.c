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
 * This file puts a pipeline stage together (est_memory_stage, stage_of),
 * picks the busiest (est_memory_of), settles the moments against the
 * caching allocator (est_memory_settle) and holds the allocator's fitted
 * cached share and the search's margins. The terms, sharing est_int.h:
 *   mem_state.c   parameters per rank and their weights, gradients and
 *                 optimizer states (bytes per parameter);
 *   mem_act.c     activations per layer and in flight per pipeline rank,
 *                 CUDA graphs' pool;
 *   mem_buf.c     the frameworks' own buffers: 2021 pipelines' outputs,
 *                 DeepSpeed's bucket, the logits, Megatron-FSDP's units;
 *   mem_device.c  the device's share: workspaces, CUDA context, NCCL,
 *                 DeepEP's and HybridEP's buffers.
 *
 * Memory savers (docs/memory.md, "Memory savers"): the precision-aware
 * optimizer's and optimizer offload's states per parameter are
 * offload.c's (est_opt_gpu_bytes, est_opt_step_bytes); Transformer
 * Engine's layer offload keeps L - N layers' activations, fine-grained
 * offloading drops its modules' groups but two layers' (est_act_rank_token);
 * micro-batch groups of N hold (v - 1) x N warm-up chunks
 * (est_inflight_chunks); est_memory.host is what leaves for the host.
 * Megatron-Core's own buffers (docs/memory.md, "Megatron-Core's own
 * buffers"): Megatron-FSDP's gathered units, kept-gathered outside
 * parameters and unsharded gradient buckets (est_mfsdp_buffers); the MoE
 * dispatcher's copies while a layer runs (moe_buffers), its permutation
 * maps kept per layer (moe_permute_state) and DeepEP's or HybridEP's
 * buffers for the whole run (moe_comm_bytes); CUDA graphs' pool, held
 * through the optimizer step (est_graph_pool_token); Transformer Engine's
 * fused cross-entropy per version. Not here: the step time CUDA graphs
 * save (issue 29).
 */

#include "est_int.h"

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
#define EST_MEM_CACHE_EXPANDABLE 0.1425
#define EST_MEM_CACHE_SEGMENTS 0.1525

void est_stage_common_make(const space_model *m, const space_layout *l,
                           est_stage_common *c)
{
    memset(c, 0, sizeof *c); /* the padding too: the memo compares bytes */
    space_model_params(m, 128 * l->tp, &c->p);
    space_split_resolve(m, l, &c->sp, NULL, 0);
    est_stage_params_of(m, l, &c->p, &c->pieces);
    est_act_layers_of(m, l, &c->acts);
}

/* What a stage holds where settling puts its peak at the optimizer step
 * (stage_settle): Megatron-FSDP's buffers, and the fp8 weight copies. */
typedef struct stage_step {
    double fsdp, fp8;
} stage_step;

/* est_memory_stage of rank r with what its ranks share, cm (its layers'
 * activations in *acts, a copy of cm's: their MoE terms filled where a
 * chunk first holds some), before it is settled (stage_settle): its total
 * not yet set, *at_step what it holds at the step. */
static void stage_of(const space_model *m, const space_layout *l,
                     const est_stage_common *cm, est_act_layers *acts,
                     int64_t r, est_memory *out, stage_step *at_step)
{
    memset(out, 0, sizeof *out);
    const space_params *pm = &cm->p;
    const space_split *sp = &cm->sp;
    const space_params p = *pm;
    double t = (double)l->tp;
    const est_stage_params pieces = cm->pieces;
    double layer = pieces.layer, first = pieces.first, last = pieces.last;
    int64_t micro = l->gbs / (l->mbs * l->dp);
    if (micro < 1) micro = 1;
    double tokens = (double)l->mbs * (double)l->seq / (double)l->cp;
    double vp = (double)p.vocab_padded;
    double layers = (double)space_split_rank_layers(sp, r);
    /* The MTP modules on this rank (the last, or a layout's) */
    double mtp = est_rank_mtp(sp, r, pieces.head);
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
    double params = est_rank_params(m, l, &p, &pieces, sp, r, !dual, &xparams);
    if (dual) {
        double mx;
        params += est_rank_params(m, l, &p, &pieces, sp, l->pp - 1 - r, 0,
                                  &mx);
        xparams += mx;
    }
    /* Megatron-FSDP's units: the transformer layers (and MTP's), each
     * with its routed experts; the rest of the stage's parameters are
     * outside every unit (est_mfsdp_buffers). */
    double mtp_here = mtp;
    double n_units = layers + mtp_here, unit_params = layers * layer;
    /* MoE: the experts' states sharded by ZeRO over the expert
     * data-parallel group (distributed optimizer's expert buffers). */
    if (m->num_experts > 0) {
        double dense_l = pieces.dense_l, moe_l = pieces.moe_l, xl = pieces.xl;
        double nm = est_split_moe_layers(m, sp, r);
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
        est_state_bytes_shard(l, xparams, xshard, &xw, &xg, &xo);
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
        /* Megatron-FSDP gathers by its own rules: est_mfsdp_buffers */
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
    double fp8 = 0, fp8_t = 0, fp8_x = 0;
    if (l->dtype == HW_FP8 && l->fp8_lib == SPACE_FP8_LIB_TE) {
        /* Dense-FFN and MoE layers apart; the experts' copies are of
         * this rank's EP x ETP shard; MTP's layers on the last stage
         * (TE workspaces are per module, as for dense layers); DualPipe's
         * second stage's modules as its own. */
        double gx, gw = est_rank_gemm_weights(m, l, sp, r, &gx);
        if (dual) {
            double mgx;
            gw += est_rank_gemm_weights(m, l, sp, l->pp - 1 - r, &mgx);
            gx += mgx;
        }
        /* Each copy per recipe (est_fp8_weight_copy_bytes): the per-tensor
         * recipes (delayed, tensorwise) keep the fp8 weight and, for the
         * GEMMs of the backward, its fp8 transpose; blockwise and MXFP8
         * quantise rows and columns apart (row- and column-wise data,
         * each with its scales, on every GPU). TE makes the transpose of
         * a per-tensor copy only where fp8 GEMMs need the TN layout:
         * not on Blackwell (compute capability 10.x, 11.x, 13.x;
         * nvte_is_non_tn_fp8_gemm_supported, Float8Quantizer and
         * Float8CurrentScalingQuantizer::create_tensor, TE v2.4 on,
         * c7702309f): fp8_t, which est_memory_device takes out there. */
        double qb = est_fp8_weight_copy_bytes(l);
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
        } else if (est_fp8_deepseek(l)) {
            /* DeepSeek-V3's framework (--fp8-activation-cache
             * deepseek-v3) keeps one fp8 copy of each weight, with its
             * 128 x 128 blocks' scales, and transposes it for the GEMMs
             * that need the other layout as they run, one weight at a
             * time: its training profile (deepseek-ai/profile-data@
             * 4496024 train.json, a DualPipe forward and backward chunk
             * of 4 MoE layers at EP 64 on H800) runs no weight
             * quantisation, and a cuda::batched_transpose of fp8 data
             * exactly one weight's 128 x 128 tiles before each GEMM that
             * needs it: in the backward the shared expert's down and
             * gate-up weights (896 and 1792 tiles: 7168 x 2048 and
             * 4096 x 7168), the output, q-up, kv-up, kv-down and q-down
             * projections (7168, 2304, 1024, 280, 672); in the forward
             * the rank's 4 routed experts' FC1 and FC2 as one group each
             * (7168, 3584), every chunk of the steady phase. The
             * transposed copy lives while its GEMM runs: fp8_x, the
             * largest such weight of the rank's layers, at the backward
             * (est_largest_gemm_weight). */
            double nm = est_split_moe_layers(m, sp, r);
            int dense_here = nm < layers, moe_here = nm > 0 || mtp > 0;
            if (dual) {
                int64_t r2 = l->pp - 1 - r;
                double nm2 = est_split_moe_layers(m, sp, r2);
                dense_here |= nm2 < (double)space_split_rank_layers(sp, r2);
                moe_here |= nm2 > 0 || est_rank_mtp(sp, r2, pieces.head) > 0;
            }
            fp8 = qb * g_all;
            fp8_x = qb * est_largest_gemm_weight(m, l, dense_here, moe_here);
        } else {
            fp8 = 2 * qb * g_all;
        }
        /* no cached transpose under DeepSeek-V3's framework */
        fp8_t = per_tensor && !est_fp8_deepseek(l) ? qb * g_all : 0;
    } else if (l->dtype == HW_FP4 && l->fp8_lib == SPACE_FP8_LIB_TE) {
        /* NVFP4: TE caches a row-wise and a column-wise quantised copy of
         * each layer GEMM's weight (block scales along rows and along
         * columns differ), EST_NVFP4_BYTES each, as for fp8 (MoE and MLA with
         * nvfp4 are refused: dense layers only). */
        double wl = layers
                    + (dual ? (double)space_split_rank_layers(sp, l->pp - 1 - r)
                            : 0);
        fp8 = 2 * EST_NVFP4_BYTES * wl * est_layer_gemm_weights_of(m, t, 0);
    }
    double rebuilt_tok, host_tok;
    double act = tokens
                 * est_act_rank_token(m, l, sp, r, micro, acts,
                                      &rebuilt_tok, &host_tok);
    if (r < l->pp - 1)
        act += tokens * est_inflight_chunks(l, r, micro)
               * est_pipe_output_token(m, l);
    double loss_bwd = 0, loss_kept = 0;
    /* The head's and the loss's rank: the last stage's (est_head_rank: rank
     * 0 under a V schedule); under DualPipe both end
     * ranks, each the last stage of one direction (dualpipe.py
     * _forward_compute_chunk: is_last_stage on the first rank's phase 1
     * and the last rank's phase 0), one micro-batch of it in flight. */
    int head_here = r == pieces.head || (dual && r == 0);
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
        loss_kept = tokens * est_logits_token(l, vp);
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
        loss_bwd = tokens * est_logits_token(l, vp);
    } else if (head_here) {
        loss_kept = tokens * (4 * vp / t + est_logits_token(l, vp));
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
    double mtp_act
        = mtp + (dual ? est_rank_mtp(sp, l->pp - 1 - r, pieces.head) : 0);
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
        double mtp_in = (2 + 2 * est_gemm_input_bytes(l)) * (double)m->hidden
                        * rep;
        act += mtp_act
               * (tokens * (est_act_layer_token(m, l, 0, m->num_experts > 0)
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
    double bucket = est_ds_bucket_bytes(l), gr_s = gr;
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
    est_mfsdp_moment fs = {0};
    if (l->framework == SPACE_FW_MEGATRON_CORE && l->zero >= SPACE_ZERO_2) {
        double v = (double)(l->vpp > 0 ? l->vpp : 1);
        est_mfsdp_buffers(l, unit_params, n_units / v, params - unit_params,
                          head_here, act, loss_kept, loss_bwd,
                          tokens * rebuilt_tok,
                          est_inflight_chunks(l, r, micro), &fs);
    }
    double held_b = w + live + gr + opt + fp8 + fp8_x + act + loss_bwd
                    + (l->pp > 1 ? 0 : bucket) + fs.bwd;
    double held_s = w + gr_s + opt + fp8 + step + (l->pp > 1 ? bucket : 0)
                    + fs.step;
    out->weights = w + live + fs.weights;
    out->grads = gr + fs.grads;
    out->optimizer = opt;
    out->fp8_weights = fp8 + fp8_x;
    out->fp8_transposes = fp8_t;
    out->activations = act + loss_bwd - fs.act_freed;
    out->fsdp_buffers = fs.bwd;
    /* CUDA graphs (Megatron-Core --cuda-graph-impl): the captured
     * forward and backward allocate from one private pool in execution
     * order, so the pool peaks at what the graphed part keeps for the
     * backward, and it stays reserved through the optimizer step, where
     * the step's copies cannot use it (est_graph_pool_token). */
    if (l->framework == SPACE_FW_MEGATRON_CORE && l->cuda_graph) {
        out->graph_pool
            = l->cuda_graph == SPACE_CG_FULL_ITERATION
                  ? act + loss_bwd
                  : tokens * est_graph_pool_token(m, l, sp, r, micro);
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
    at_step->fsdp = fs.step;
    at_step->fp8 = fp8; /* fp8_x: backward only */
}

/* The larger of a stage's two moments with the context and NCCL's
 * buffers: est_memory_settle's total, before it is settled. */
static double moments_total(const est_memory *o)
{
    double bwd = o->alloc_backward + o->context + o->nccl + o->moe_comm;
    double stp = o->alloc_step + o->graph_pool + o->context + o->nccl
                 + o->moe_comm;
    return fmax(bwd, stp);
}

/* Settles stage_of's stage against the caching allocator. */
static void stage_settle(const space_layout *l, est_memory *out,
                         const stage_step *at_step)
{
    est_memory_settle(out, est_memory_cache_share(l->alloc_expandable));
    if (out->peak_in_step) out->fsdp_buffers = at_step->fsdp;
    if (out->peak_in_step) out->fp8_weights = at_step->fp8;
}

void est_memory_stage(const space_model *m, const space_layout *l, int64_t r,
                      est_memory *out)
{
    est_stage_common buf;
    const est_stage_common *cm = est_stage_common_of(m, l, &buf);
    est_act_layers acts = cm->acts;
    stage_step at_step;
    stage_of(m, l, cm, &acts, r, out, &at_step);
    stage_settle(l, out, &at_step);
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
    /* moments_total (stage_of's ranks compared before one is settled)
     * must stay this total */
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
    est_stage_common buf;
    const est_stage_common *cm = est_stage_common_of(m, l, &buf);
    est_act_layers acts = cm->acts;
    /* Every rank, but one that holds what a lower rank holds, chunk by
     * chunk: the lower one has as many micro-batches in flight or more
     * (est_inflight_chunks), so it needs as much or more (rank 0 more still,
     * with the embedding). The last rank (the head) and the MTP modules'
     * stand alone. Ranks in the order 0, PP - 1, 1, ..., PP - 2. */
    const space_split sp = cm->sp;
    int64_t pp = sp.pp, seen[16];
    int n_seen = 0;
    double best = 0; /* the busiest rank's total */
    stage_step best_step = {0, 0};
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
        /* only the busiest is settled: the ranks compare by the total
         * settling gives (moments_total) */
        est_memory st;
        stage_step at_step;
        double total;
        stage_of(m, l, cm, &acts, r, &st, &at_step);
        if ((total = moments_total(&st)) > best) {
            *out = st;
            best = total, best_step = at_step;
        }
    }
    if (best > 0) stage_settle(l, out, &best_step);
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
