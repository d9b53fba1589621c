/*
 * host.c - the host side of a layer: what the CPU issues per pass, and how
 * much of it the GPU waits for.
 *
 * The GPU runs a layer's kernels as fast as the host issues them. The host
 * is Python (the framework's modules, autograd, hooks) calling PyTorch's
 * dispatcher, which calls cudaLaunchKernel; it runs ahead of the GPU,
 * queueing kernels, until something makes it wait for the GPU (a
 * synchronisation). Per layer and pass we take
 *
 *     exposed = max(0, host - gpu) + sync
 *
 * or, with CUDA_LAUNCH_BLOCKING=1 (space_layout.launch_blocking), where
 * every launch returns only once its kernel has run, exposed = host: the
 * host cannot run ahead, so each call's time is the GPU's idle time.
 * BigScience trained BLOOM and ran its prequel benchmarks that way on Jean
 * Zay (bigscience-workshop/bigscience train/tr11-176B-ml/tr11-176B-ml.slurm:
 * "export CUDA_LAUNCH_BLOCKING=1", "do not remove or the training will
 * hang"; chronicles-prequel.md, "dealing with JZ hanging": a 200B model on
 * 80 GPUs ran 6 % slower blocking, on 160 GPUs the same, asynchronous
 * launches hung always at 320 GPUs).
 *
 * host = the framework calls the layer issues (est_host_units, counted from
 * the software, section by section) x the host's time per call (hwdb
 * host_launch_us of the GPU's usual host); gpu = the layer's GPU time in
 * that pass (compute and the communication it waits for, iter.c); sync =
 * where the pass makes the host wait for the GPU (Megatron-Core's MoE
 * dispatchers copy the tokens per expert to the host in every MoE layer's
 * forward), the GPU idles from the copy until the host has issued the next
 * kernel: one call's time on either side (EST_HOST_SYNC_UNITS).
 *
 * What this leaves out, deliberately: the host running ahead across layers
 * of different kinds (a GPU-bound dense layer banking time for a host-bound
 * MoE layer: the per-layer max charges each kind alone, an upper bound
 * where kinds mix), the embedding, the head, the optimizer step and the
 * data loader (few calls each), and syncs outside the layers (Megatron's
 * NaN check and loss reporting, once per step or per log interval).
 *
 * CUDA graphs (Megatron-Core --cuda-graph-impl local | transformer_engine
 * with --cuda-graph-modules, or full_iteration) replace a captured
 * section's calls by one graph launch per pass (est_host_units); what
 * cannot be captured (the dispatch and expert GEMMs of a dropless MoE
 * layer, whose sizes the host learns from the sync) keeps its calls and
 * its sync.
 *
 * References: the host's time per call, hwdb host_launch_us (TE issue
 * NVIDIA/TransformerEngine#2053: torch.nn.Linear forward's CPU time per
 * call on DGX H100, GH200 and GB200, and TE's Linear against it); the
 * counts, the table below with the file and function of each framework.
 */
#include "est.h"

#include <math.h>

/* One call, the unit: an eager PyTorch module call issuing one kernel
 * (torch.nn.Linear forward), as hwdb's host_launch_us times it. A
 * Transformer Engine module call is 2.7 units: TE's Linear against
 * torch's on the same host, 90.53 / 33.17 us on GH200 and 99.66 / 37.08
 * on GB200, BF16, TE 2.x of 2025 (NVIDIA/TransformerEngine#2053; the
 * Python of its forward: quantizers, fp8 state, workspace checks,
 * module/linear.py _Linear.forward). */
#define TE 2.7

/* A synchronisation: the blocking copy returns once the GPU has drained
 * its queue, and the GPU then idles until the host has issued the next
 * kernel: a call on either side. */
#define EST_HOST_SYNC_UNITS 2.0

/* Calls per layer section and forward pass, per software stack, and the
 * backward's against the forward's (bwd). Megatron's stacks: the backward
 * issues as many (Transformer Engine's modules and Megatron's fused
 * kernels are Python autograd Functions whose backward mirrors their
 * forward, TE module/linear.py _Linear.backward; not measured). PyTorch's
 * stacks: measured (below). */
typedef struct host_counts {
    double attn;       /* input norm, QKV, RoPE, attention, output
                          projection, its TP collective, residual add */
    double mlp;        /* a dense layer's norm, FC1, activation, FC2,
                          collective, residual add */
    double moe_router; /* an MoE layer's norm and router (gating GEMM,
                          top-k, softmax, load-balancing loss) */
    double moe_router_fused; /* the same with Transformer Engine's fused
                          router kernels (--moe-router-fusion) */
    double shared;     /* its shared experts, where it has them */
    double moe_pre;    /* the dispatcher's preprocess: tokens per expert,
                          their gather over EP x TP, the copies to host */
    double dispatch;   /* permute, all-to-all, sort by local expert and
                          back, all-to-all, unpermute: unfused */
    double dispatch_fused; /* the same with TE's fused permute */
    double experts;    /* the grouped expert MLP: two grouped GEMMs and
                          the activation */
    double per_expert; /* each local expert's share of a grouped GEMM
                          pair (a cuBLAS launch and its output's
                          allocation each, TE GroupedLinear) */
    double bwd;        /* the backward's calls per forward call */
    const char *source;
} host_counts;

static const host_counts counts[SPACE_STACK_COUNT] = {
    /* megatron/model/transformer.py of 2021 (NVIDIA/Megatron-LM@v2.4,
     * ParallelTransformerLayer.forward, ParallelAttention.forward,
     * ParallelMLP.forward): FusedLayerNorm; QKV ColumnParallelLinear;
     * baddbmm, FusedScaleMaskSoftmax, dropout, bmm, the context's
     * permute-contiguous; dense RowParallelLinear with its all-reduce;
     * bias_dropout_add; then the MLP's norm, h_to_4h, bias_gelu, 4h_to_h
     * with its all-reduce, bias_dropout_add. Plain PyTorch modules: a
     * unit each. No MoE. */
    [SPACE_STACK_MEGATRON_2021] = {10, 6, 0, 0, 0, 0, 0, 0, 0, 0, 1,
                                   "Megatron-LM 2021 transformer.py"},
    /* NVIDIA/Megatron-LM@d98e8a64dd transformer_layer.py
     * TransformerLayer._forward_attention: TELayerNormColumnParallelLinear
     * (TE), the fused RoPE for q and k (2), TEDotProductAttention (TE),
     * TERowParallelLinear (TE), bias_dropout_add (1): 3 TE + 3;
     * _forward_mlp: TELayerNormColumnParallelLinear, bias_swiglu,
     * TERowParallelLinear, bias_dropout_add: 2 TE + 2. MoE (moe/
     * moe_layer.py MoELayer.forward): the pre-MLP TENorm (TE) and
     * TopKRouter.forward (router.py: the gating GEMM, its fp32 cast,
     * top-k, softmax, the routing map's scatter, the auxiliary loss's
     * sums and products: 14; with --moe-router-fusion, TE's
     * fused_topk_with_score_function, fused_compute_score_for_moe_aux_loss
     * and fused_moe_aux_loss replace the top-k, softmaxes, scatters and
     * loss arithmetic: the GEMM, its cast, the three, the tokens per
     * expert's sum and all-reduce: 7); SharedExpertMLP (2 TE + 1);
     * MoEAlltoAllTokenDispatcher.preprocess (token_dispatcher.py: the
     * per-expert sum, the splits' reshapes and sums, their gather over
     * EP x TP, the non-blocking copies to host: 10); the dispatch and
     * combine (permute's sort and index, all-to-all, sort_chunks_by_idxs,
     * and back with unpermute's scatter: 16; fused, TE's moe_permute and
     * moe_unpermute: 6); TEGroupedMLP (experts.py: two TE GroupedLinear
     * and the activation with the probabilities: 2 TE + 2, and per local
     * expert half a unit in each GroupedLinear: a cuBLAS launch and an
     * output allocation, NVIDIA/TransformerEngine#1499). */
    [SPACE_STACK_MEGATRON_CORE] = {3 * TE + 3, 2 * TE + 2, TE + 14, TE + 7,
                                   2 * TE + 1, 10, 16, 6, 2 * TE + 2, 1, 1,
                                   "Megatron-Core + TE transformer_layer.py, "
                                   "moe_layer.py, token_dispatcher.py"},
    /* pytorch/torchtitan models/llama3/model.py TransformerBlock.forward
     * (llm-foundry's MPT block alike): RMSNorm, wq, wk, wv, apply_rotary_
     * emb's complex views, products and casts, SDPA and its transposes,
     * wo, residual add; feed_forward: RMSNorm, w1, w3, silu, mul, w2,
     * residual add: 21 kernels forward, 38 backward. MEASURED, not
     * counted: such a block (bench/data/moe_h200, compiled.csv and
     * launch.csv; moesample.py, PyTorch 2.11 on an H200's host, dim 512
     * so that the host bounds it) took the host 26.9, 29.7 and 47.8
     * times an nn.Linear forward of the same run (the unit) in three
     * runs: the median, 29.7, split between attention and MLP as the
     * calls above (16 : 7), plus FSDP2's pre-forward unshard of the
     * block (copy-in, all-gather, copy-out: 3, counted with the
     * attention; not measured); the backward 3.12x the forward (runs:
     * 1.89, 3.12, 3.59; the autograd engine runs it on its device thread
     * with more, costlier calls). The code's own count was 23, the same
     * backward. */
    [SPACE_STACK_PYTORCH_EAGER] = {29.7 * 16 / 23 + 3, 29.7 * 7 / 23, 0, 0,
                                   0, 0, 0, 0, 0, 0, 3.12,
                                   "torchtitan llama3 model.py, eager "
                                   "(measured, H200 host)"},
    /* torch.compile (Inductor) of the same block, as torchtitan compiles
     * each block: MEASURED in the same runs, 19 kernels forward, 31
     * backward (Inductor leaves the complex RoPE to eager aten kernels,
     * "does not support code generation for complex operators"), and no
     * cheaper on the host: 33.7, 50.6 and 58.9 units forward (median
     * 50.6: the compiled graph's guards, AOTAutograd's runtime wrappers
     * and the generated code's launches outweigh the ops it fuses at this
     * size), the backward 2.17x (runs 1.55, 2.17, 3.09). Split as the
     * eager block's (the compiled graph has no sections); FSDP2's unshard
     * as eager. Was an assumption of half a unit per kernel (6.5). */
    [SPACE_STACK_PYTORCH_COMPILED] = {50.6 * 16 / 23 + 3, 50.6 * 7 / 23, 0,
                                      0, 0, 0, 0, 0, 0, 0, 2.17,
                                      "torchtitan llama3 model.py, "
                                      "torch.compile (measured, H200 "
                                      "host)"},
    /* Megatron-DeepSpeed's layers are Megatron-LM 2021's. */
    [SPACE_STACK_DEEPSPEED_2021] = {10, 6, 0, 0, 0, 0, 0, 0, 0, 0, 1,
                                    "Megatron-LM 2021 transformer.py "
                                    "(Megatron-DeepSpeed)"},
};

double est_host_call_s(const est_ctx *c)
{
    return c && c->gpu ? c->gpu->host_launch_s : 0;
}

/* Which sections a per-layer CUDA graph captures (Megatron-Core
 * cuda_graphs.py CudaGraphManager, TE make_graphed_callables through
 * TECudaGraphHelper; CudaGraphModule, enums.py, NVIDIA/Megatron-LM@
 * d98e8a64dd): no module named, the whole layer, but of an MoE layer
 * only what has static shapes (the docs' "not working for MoE dynamic
 * shapes": the router and preprocess); moe, the MoE layer's whole MLP
 * (drop-and-pad only: static shapes, no sync). */
enum {
    HS_ATTN = 1u << 0,
    HS_MLP = 1u << 1,
    HS_ROUTER = 1u << 2,
    HS_PRE = 1u << 3,
    HS_DISPATCH = 1u << 4
};

static unsigned captured(const space_layout *l, int moe, int *graphs)
{
    *graphs = 0;
    if (l->framework != SPACE_FW_MEGATRON_CORE || !l->cuda_graph) return 0;
    if (l->cuda_graph == SPACE_CG_FULL_ITERATION) {
        /* one graph a step: nothing issued per layer but what a dropless
         * MoE layer cannot capture */
        return HS_ATTN | HS_MLP | HS_ROUTER | HS_PRE;
    }
    unsigned g = l->cuda_graph_modules, s = 0;
    if (g == 0) {
        *graphs = 1;
        return moe ? HS_ATTN | HS_ROUTER | HS_PRE : HS_ATTN | HS_MLP;
    }
    if (g & SPACE_CGM_ATTN) s |= HS_ATTN, ++*graphs;
    if (!moe && (g & SPACE_CGM_MLP)) s |= HS_MLP, ++*graphs;
    if (moe && (g & SPACE_CGM_MOE)) {
        s |= HS_ROUTER | HS_PRE | HS_DISPATCH;
        ++*graphs;
    } else if (moe) {
        if (g & SPACE_CGM_MOE_ROUTER) s |= HS_ROUTER, ++*graphs;
        if (g & SPACE_CGM_MOE_PREPROCESS) s |= HS_PRE, ++*graphs;
    }
    return s;
}

void est_host_units(const space_model *m, const space_layout *l, int moe,
                    est_host_layer *out)
{
    const host_counts *k = &counts[space_layout_stack(l)];
    int graphs;
    unsigned cap = captured(l, moe, &graphs);
    double eager = 0, total = 0, pre = 0;
#define SECTION(bit, n)                                                        \
    do {                                                                       \
        total += (n);                                                          \
        if (!(cap & (bit))) eager += (n);                                      \
    } while (0)
    SECTION(HS_ATTN, k->attn);
    if (!moe) {
        SECTION(HS_MLP, k->mlp);
    } else {
        int64_t ep = space_layout_ep(l);
        double nle = (double)m->num_experts / (double)(ep > 0 ? ep : 1);
        double sh = m->shared_experts > 0 ? k->shared : 0;
        SECTION(HS_ROUTER, (l->moe_router_fusion ? k->moe_router_fused
                                                 : k->moe_router) + sh);
        SECTION(HS_PRE, k->moe_pre);
        pre = eager;
        SECTION(HS_DISPATCH, (l->moe_permute_fusion ? k->dispatch_fused
                                                    : k->dispatch)
                                 + k->experts + k->per_expert * nle);
    }
#undef SECTION
    /* Full-iteration graphs leave one launch a step, not a layer. */
    out->graphs = l->cuda_graph == SPACE_CG_FULL_ITERATION ? 0 : graphs;
    out->eager_units = eager;
    out->all_units = total;
    out->fwd_units = eager + (double)out->graphs;
    out->bwd_units = eager * k->bwd + (double)out->graphs;
    /* Every Megatron-Core dispatcher learns the tokens per expert on the
     * host in the forward (token_dispatcher.py: the all-to-all one's
     * _maybe_dtoh_and_synchronize, the all-gather one's .cpu(), DeepEP's
     * host-side wait for its receive counts); the backward reuses them.
     * A captured MoE MLP (drop-and-pad) has static sizes: no sync. */
    out->syncs = moe && !(cap & HS_DISPATCH) ? 1 : 0;
    /* the graphs before the sync: all but a captured MoE MLP's */
    out->pre_units = out->syncs ? pre + (double)out->graphs : 0;
    out->source = k->source;
}

double est_host_exposed(double host_s, double gpu_s, int syncs,
                        double call_s, int blocking)
{
    /* CUDA_LAUNCH_BLOCKING=1 makes every launch wait for its kernel (CUDA
     * C++ Programming Guide, "CUDA Environment Variables": it disables
     * asynchronous kernel launches), so the host issues the next call only
     * after the GPU has finished: the two never overlap and the GPU waits
     * for all of the host's time; the syncs then cost nothing more. */
    if (blocking) return host_s;
    return fmax(0, host_s - gpu_s) + (double)syncs * EST_HOST_SYNC_UNITS
                                         * call_s;
}
