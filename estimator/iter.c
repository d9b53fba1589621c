/*
 * iter.c - the time of one training iteration of a dense decoder-only
 * model under a layout: the operators of each layer at the per-rank shapes
 * the layout implies, timed by the operator models (models.c); the TP, CP,
 * PP and DP collectives, timed by the collective models (comm.c) over
 * groups placed as Megatron-LM places them; composed through the pipeline
 * schedule with the overlaps Megatron-LM implements.
 *
 * This file composes (est_estimate): it places the groups, times a layer
 * of each kind and the end stages, sums each pipeline stage over its
 * layers, runs the schedule, adds the data-parallel collectives, the
 * optimizer step and the memory savers. The parts, sharing est_iter_ctx
 * and est_stage_time (est_int.h):
 *   iter_ops.c    one operator or collective timed (memoized, traced),
 *                 group placement;
 *   iter_gemm.c   GEMMs at 16 bits, fp8 or nvfp4 and their casts;
 *   iter_layer.c  a transformer layer (attention, MLA, TP and CP
 *                 overlaps, recompute), the first and last stage extras;
 *   iter_moe.c    an MoE layer's routed experts and their dispatch.
 *
 * Data parallelism: gradient reduction runs in buckets under the backward
 * of the last micro-batch (--overlap-grad-reduce; the last bucket,
 * est_dp_tail_params, is always exposed); the distributed optimizer's
 * parameter all-gather runs under the next forward (--overlap-param-gather)
 * likewise; space_layout's no_dp_overlap turns both off (Megatron-LM's
 * defaults, and its 2021 code). ZeRO-3 gathers each layer's parameters
 * during the previous layer's compute (FSDP prefetch), per micro-batch,
 * and reduce-scatters each micro-batch's gradients; under a pipeline
 * (FSDP2 with PyTorch's pipelining) it gathers once and reduce-scatters
 * once, after the last backward.
 *
 * Pipeline (Narayanan et al., SC'21, section 2.2): with m micro-batches,
 * p stages and v model chunks per stage, an iteration takes
 *   m x t_max + (p - 1) / v x t_mean,
 * t = one micro-batch's forward + backward (+ recompute, exposed TP and
 * CP, and 2 v point-to-point exchanges: 1/TP of the activation each with
 * SP, or without it and with space_layout's pp_scatter_gather plus an
 * all-gather over TP; all of it from every TP rank otherwise, as
 * Megatron-Core sends it) on a stage; each stage timed from its own
 * layers as Megatron-Core's split puts them (space/split.c: the even
 * split, the embedding and/or loss counted as layers, first/last stage
 * counts, a layout string; whole layers), the embedding on the first,
 * the LM head and loss on the last, the MTP modules where they sit;
 * t_max of the slowest stage (the critical one), t_mean over all p
 * stages. The second term is the bubble. Under the interleaved schedule
 * the fill and the drain pass chunk by chunk, each step as long as the
 * longest chunk in it: the bubble is stretched by the most layers any
 * chunk holds over the mean, L / (p v) (1 for an even split; a chunk
 * that gave a layer's slot to the embedding or the loss is not the
 * longest, and its embedding or head time is in t_mean).
 * Under the interleaved schedule Megatron-Core posts the
 * sends and receives of its steady state asynchronously and waits for
 * them only before the chunk that needs them
 * (megatron/core/pipeline_parallel/schedules.py, overlap_p2p_comm, on by
 * default), so there each exchange is exposed only by what it outlasts
 * one chunk's forward (or backward); the fill and the drain, whose sends
 * are not overlapped unless --overlap-p2p-communication-warmup-flush, pay
 * them in full (t_mean keeps them).
 * Other schedules (space_pp_schedule, est_pp_bubble): zero bubble ZB-H1
 * and ZB-V move the weight-gradient GEMMs (est_stage_time.w: half of each
 * GEMM's backward, est_add_gemm) into the bubble; DualPipe and DualPipeV also
 * run a forward chunk beside a backward one in the steady state, the MoE
 * dispatch and combine and the pipeline sends under the other's compute.
 * The V schedules hold the LM head on rank 0; DualPipe's end ranks each
 * run half of the embedding and half of the head. Not modelled: the V
 * placement of an uneven split's layers (the looped one is timed), the
 * per-rank warm-up differences of the schedules' fills.
 *
 * Memory savers (space/savers.c; offload.c has their bytes): the
 * precision-aware optimizer's step scales the fitted Adam by the bytes it
 * moves; optimizer CPU offload adds the gradients' copy to the host, the
 * CPU's AdamW at the host's memory bandwidth and the parameters' copy
 * back (saver_step); activation offloading adds what its copies outlast
 * of the compute they run under (offload_exposed, est_breakdown.offload_s).
 * Micro-batch groups leave the bubble as it is: with groups of N >= PP
 * each chunk's forward finds its input ready, so only the fill and the
 * drain idle, (p - 1) / v of a micro-batch as without them.
 *
 * Deliberately not modelled yet: the tied-embedding gradient all-reduce
 * between first and last stage, data loading, the cost of dropout inside
 * flash attention.
 */

#include "est_int.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Megatron-Core DDP's default gradient bucket: 40 M parameters
 * (megatron/core/distributed/distributed_data_parallel_config.py,
 * bucket_size = max(40000000, 1000000 * dp_size)); the bucket other
 * frameworks are given here (est_dp_tail_params). */
#define EST_GRAD_BUCKET_PARAMS 40e6

/* The parameters of the data-parallel bucket a step cannot hide under
 * Megatron-Core's DDP (0 for other frameworks, whose buckets keep
 * EST_GRAD_BUCKET_PARAMS): the last one the backward fills, whose
 * reduce-scatter (all-reduce without the distributed optimizer) starts
 * after the backward's last GEMM, and the first one the forward needs,
 * whose all-gather the first module's forward pre-hook issues and waits
 * for at once (--align-param-gather off, its default). Both are the same
 * bucket: the buffer lays parameters out in reverse registration order
 * and closes a bucket at the first parameter that takes it to bucket_size
 * or more (Megatron-LM d98e8a64dd, megatron/core/distributed/
 * param_and_grad_buffer.py:980-986, and optimizer/distrib_optimizer.py:
 * 552-569 for the distributed optimizer; finish_param_sync,
 * param_and_grad_buffer.py:556-558), so the word embedding, registered
 * first by GPTModel, ends the last bucket whatever its size. bucket_size
 * defaults to max(40 M, 1 M x the DP x CP ranks) parameters
 * (distributed_data_parallel.py:133-134; training.py:2189, dp_cp_group);
 * MLPerf v5.1's NeMo Llama 3.1 submissions set 134,217,728
 * (University-of-Florida/benchmarks/llama31_8b/implementations/b200_nemo/
 * conf/custom.yaml:165, mlcommons/training_results_v5.1@441d65f4), and
 * ALIGN_PARAM_GATHER=False for 8B (config_common_8b.sh). Llama 3.1 8B's
 * embedding is 525 M parameters: the tail is the embedding's, not a
 * bucket's. Layer 0's parameters left open in that bucket (under
 * bucket_size) are not counted: a lower bound. vp: the padded
 * vocabulary, split over TP (vocab-parallel). */
double est_dp_tail_params(const space_layout *l, int64_t hidden, int64_t vp)
{
    if (l->framework != SPACE_FW_MEGATRON_CORE || l->zero > SPACE_ZERO_1)
        return 0;
    double bucket = fmax(40e6, 1e6 * (double)l->dp * (double)l->cp);
    double emb = (double)vp * (double)hidden / (double)(l->tp > 0 ? l->tp : 1);
    return fmax(bucket, emb);
}

static double stage_total(const est_stage_time *s)
{
    return s->fwd + s->bwd + s->recompute + s->tp + s->cp + s->p2p + s->ep
           + s->offload + s->host;
}

/* Share of the forward passes of pipeline rank `rank`'s model chunks that
 * the combined 1F1B schedule runs beside a backward (the rest: the
 * warm-up's forwards and the drain's backwards, alone).
 * NVIDIA/Megatron-LM@d98e8a64ddf3, megatron/core/pipeline_parallel/
 * schedules.py get_pp_rank_microbatches (interleaved: (pp - r - 1) 2 +
 * (v - 1) x group warm-up steps, the group pp by default, one more with
 * the overlap) and combined_1f1b.py combined_1f1b_schedule_for_no_
 * pipelining (the first forward and the last backward alone). */
static double moe_pair_share(const space_layout *l, int64_t rank,
                             int64_t micro)
{
    int64_t pp = l->pp, v = l->vpp > 1 ? l->vpp : 1;
    double total = (double)(micro * v);
    double warm = pp == 1 ? 1
                          : (double)((pp - rank - 1) * 2 + (v - 1) * pp + 1);
    return total > 0 ? fmax(0, total - warm) / total : 0;
}

const char *const est_reason_names[EST_REASON_COUNT] = {
    [EST_FEASIBLE] = "feasible",
    [EST_INVALID_LAYOUT] = "invalid_layout",
    [EST_OUT_OF_MEMORY] = "out_of_memory",
    [EST_NO_FP8] = "no_fp8",
    [EST_MOE] = "moe_not_modelled",
    [EST_TOO_MANY_GPUS] = "too_many_gpus",
    [EST_MOE_LAYOUT] = "moe_layout",
    [EST_SAVER] = "saver_refused",
};
_Static_assert(sizeof est_reason_names / sizeof est_reason_names[0]
                   == EST_REASON_COUNT,
               "est_reason_names names every est_reason");

const char *est_precision_name(const space_layout *l)
{
    if (l->dtype == HW_FP4) return "nvfp4";
    if (l->dtype == HW_FP8 && l->fp8_recipe == SPACE_FP8_MXFP8) return "mxfp8";
    if (l->dtype < 0 || l->dtype >= HW_DTYPE_COUNT) return "?";
    return hw_dtype_names[l->dtype];
}

/* ---- memory savers' time (offload.c has the bytes) -------------------- */

/* The optimizer step of n parameters under the precision-aware optimizer
 * or optimizer offload. The GPU's Adam is memory-bound: its time scales
 * with the bytes it moves (est_opt_traffic_ratio). Offloaded, the share f
 * of the shard is stepped on the host (HybridDeviceOptimizer.step,
 * NVIDIA/Megatron-LM@d98e8a64ddf3 megatron/core/optimizer/cpu_offloading/
 * hybrid_optimizer.py): its gradients copied to the host (4 bytes each:
 * the D2H copy_ converts to fp32 on the GPU), torch.optim.AdamW over fp32
 * parameter, gradient, m and v (read 16, write 12 bytes of host memory)
 * and the parameters' cast to 16 bits (read 4, write 2) and copy back (2
 * bytes each: a copy_ to the GPU converts on the host, PyTorch aten/src/
 * ATen/native/cuda/Copy.cu), every GPU of a node at once through its host
 * link and the node's CPU memory (est_host_bw). In sequence: the D2H copy,
 * then the CPU step beside the GPU's share, then the H2D copy; with
 * --overlap-cpu-optimizer-d2h-h2d one CPU optimizer per parameter, each
 * starting when its gradient has arrived and copying back when done: the
 * slowest of the copies, the host's memory traffic (the copies' DMA
 * included) and the GPU's share. The CPU step is taken at the host's
 * memory bandwidth: the time its threads could reach at best (torchrun
 * sets OMP_NUM_THREADS=1 per rank unless told otherwise). */
static double saver_step(const est_iter_ctx *x, double n)
{
    const space_layout *l = x->l;
    double f = l->opt_offload > 0 ? fmin(l->opt_offload, 1) : 0;
    double ng = (1 - f) * n, t_gpu = 0;
    if (ng >= 1) {
        est_op a = {0};
        a.kind = EST_OP_ADAM;
        a.dtype = HW_FP32;
        a.n = (int64_t)ng;
        t_gpu = est_op_time(x, &a).fwd_s * est_opt_traffic_ratio(l);
    }
    if (f <= 0) return t_gpu;
    const hw_system *y = x->c->sys;
    double link = est_host_bw(x->c);
    double share = y->host_mem_bw_bytes_per_s
                   / (double)(y->gpus_per_node > 0 ? y->gpus_per_node : 1);
    if (!(link > 0) || !(share > 0)) return t_gpu; /* est_saver_check refuses */
    double nh = f * n;
    double d2h = 4 * nh / link, h2d = 2 * nh / link;
    double cpu = (28 + 6) * nh / share;
    if (l->opt_offload_overlap)
        return fmax(fmax(t_gpu, cpu + 6 * nh / share), fmax(d2h, h2d));
    return d2h + fmax(t_gpu, cpu) + h2d;
}

/* Seconds per micro-batch stage s (nl layers, nm of them MoE) stalls for
 * its activations' trips to the host. Transformer Engine's layer offload
 * (PP 1): est_layer_offload_stall over the layers, each moving its
 * activations in x seconds against the stage's mean layer compute.
 * Fine-grained offloading: the forward does not wait for its copies
 * (fine_grained_offloading_max_inflight_offloads unset: no joins), so
 * what outlasts the forward is paid once; each layer's backward waits for
 * its groups' reload, started one layer ahead. */
static double offload_exposed(const est_iter_ctx *x, const est_stage_time *s,
                              double nl, double nm)
{
    const space_layout *l = x->l;
    const space_model *m = x->m;
    double bw = est_host_bw(x->c);
    if (!(bw > 0) || !(nl > 0)) return 0; /* est_saver_check refuses */
    double o = ((nl - nm) * est_offload_layer_token(m, l, 0)
                + nm * est_offload_layer_token(m, l, 1))
               / nl;
    double xs = (double)x->T * o / bw;
    double cf = s->fwd / nl, cb = s->bwd / nl;
    if (l->act_offload_layers > 0) {
        double f, b;
        est_layer_offload_stall((int64_t)(nl + 0.5), l->act_offload_layers,
                                cf, cb, xs, &f, &b);
        return f + b;
    }
    return fmax(0, nl * (xs - cf)) + nl * fmax(0, xs - cb);
}

est_reason est_precision_check(const hw_gpu *g, const space_layout *l,
                               char *msg, size_t cap)
{
    const char *arch = g->arch[0] ? g->arch : "of unknown architecture";
    const char *need = NULL, *kind = NULL;
    if (l->dtype == HW_FP8 && !(g->peak_flops[HW_FP8] > 0))
        need = "fp8 tensor cores (Hopper, Blackwell, MI300)", kind = "fp8";
    else if (l->dtype == HW_FP8 && l->fp8_recipe == SPACE_FP8_MXFP8
             && strcmp(g->arch, "blackwell") != 0)
        need = "Blackwell's block-scaled tensor cores (b200, gb200, b300, "
               "gb300)",
        kind = "block-scaled";
    else if (l->dtype == HW_FP4 && !(g->peak_flops[HW_FP4] > 0))
        need = "Blackwell's fp4 tensor cores (b200, gb200, b300, gb300)",
        kind = "fp4";
    if (!need) return EST_FEASIBLE;
    snprintf(msg, cap, "%s needs %s; %s is %s, with no %s tensor cores",
             est_precision_name(l), need, g->name, arch, kind);
    return EST_NO_FP8;
}

est_reason est_fp8_attention_check(const hw_gpu *g, const space_layout *l,
                                   char *msg, size_t cap)
{
    if (!space_fp8_attention(l) || hw_gpu_fp8_attention_of(g))
        return EST_FEASIBLE;
    snprintf(msg, cap,
             "no measured fp8 / bf16 attention time for %s (hwdb "
             "fp8_attention), nor for a GPU whose samples it borrows",
             g->name);
    return EST_NO_FP8;
}

double est_pp_bubble(const space_layout *l, double t, double w, double b,
                     double fb)
{
    double pp = (double)l->pp, v = l->vpp > 1 ? (double)l->vpp : 1;
    switch (l->pp_schedule) {
    case SPACE_PP_ZB1P:
        /* ZB-H1 (Qi et al., arXiv 2401.10241, section 2.1; the DeepSeek-V3
         * report, arXiv 2412.19437, Table 2: (PP - 1)(F + B - 2W), B the
         * full backward): each rank's weight gradients fill the drain.
         * Looped over v chunks (PyTorch's ScheduleInterleavedZeroBubble,
         * "implementing the ZB1P schedule"), every term a chunk's, 1 / v
         * of the rank's: DERIVED as interleaving scales 1F1B's bubble. */
        return (pp - 1) / v * fmax(0, t - 2 * w);
    case SPACE_PP_ZBV:
        /* ZB-V (arXiv 2401.10241 section 6): 2 chunks a rank, zero bubble
         * where a chunk's F, input-gradient B and W are equal (Sea AI Lab's
         * comparison, huggingface.co/spaces/sail/pipeline-parallelism-with-
         * controllable-memory description2.md: bubble rate 0, activations
         * 1x of 1F1B). In DeepSeek's terms, over the chunks of PP ranks:
         * (PP - 1)(F + B - 3W), each a chunk's, half of the rank's: zero at
         * F = B - W = W, and at W = 0 the interleaved bubble of 2 chunks
         * (DERIVED: the form of Table 2's DualPipe row with F for F&B). */
        return (pp - 1) / 2 * fmax(0, t - 3 * w);
    case SPACE_PP_DUALPIPE:
        /* Table 2: (PP / 2 - 1)(F&B + B - 3W), a chunk being one of the
         * rank's two stages, which one micro-batch passes once: the rank's
         * own F, B, W per micro-batch. F&B: fb (est_estimate, the steady
         * state's overlap). */
        return (pp / 2 - 1) * fmax(0, fb + b - 3 * w);
    case SPACE_PP_DUALPIPEV:
        /* DualPipe cut in half: PP ranks run 2 PP stages, DualPipe's row
         * with 2 PP for PP and chunks of half a rank's time: (PP - 1)
         * (F&B + B - 3W) / 2. */
        return (pp - 1) / 2 * fmax(0, fb + b - 3 * w);
    default:
        /* 1F1B, interleaved (Narayanan et al., SC'21, section 2.2) */
        return (pp - 1) / v * t;
    }
}

void est_estimate(const est_ctx *c, const space_model *m,
                  const space_layout *l, est_result *r)
{
    est_estimate_within(c, m, l, INFINITY, r);
}

void est_estimate_within(const est_ctx *c, const space_model *m,
                         const space_layout *l, double mem_limit_bytes,
                         est_result *r)
{
    est_estimate_with_memory(c, m, l, mem_limit_bytes, NULL, r);
}

static void estimate(const est_ctx *c, const space_model *m,
                     const space_layout *l, double mem_limit_bytes,
                     const est_memory *mem, int checked, est_result *r);

void est_estimate_with_memory(const est_ctx *c, const space_model *m,
                              const space_layout *l, double mem_limit_bytes,
                              const est_memory *mem, est_result *r)
{
    estimate(c, m, l, mem_limit_bytes, mem, 0, r);
}

void est_estimate_valid(const est_ctx *c, const space_model *m,
                        const space_layout *l, double mem_limit_bytes,
                        est_result *r)
{
    estimate(c, m, l, mem_limit_bytes, NULL, 1, r);
}

/* est_estimate_with_memory; checked: l passed space_layout_check
 * (est_estimate_valid). */
static void estimate(const est_ctx *c, const space_model *m,
                     const space_layout *l, double mem_limit_bytes,
                     const est_memory *mem, int checked, est_result *r)
{
    /* the layout copied byte for byte (l may be r's own), the rest
     * zeroed: each byte written once */
    _Static_assert(offsetof(est_result, layout) == 0,
                   "est_result begins with its layout");
    memmove(&r->layout, l, sizeof r->layout);
    memset((char *)r + sizeof r->layout, 0, sizeof *r - sizeof r->layout);
    if (r->layout.tp == 1 && r->layout.sp) {
        r->layout.sp = 0;
        mem = NULL; /* of a layout the estimate does not read */
    }
    l = &r->layout;
    const hw_system *y = c->sys;
    const hw_gpu *g = c->gpu;
    int gpn = y->gpus_per_node;
    int64_t gpus = l->tp * l->pp * l->cp * l->dp;
    r->gpus = gpus;
    if (mem) {
        r->mem = *mem;
    } else {
        est_memory_of(m, l, &r->mem);
        est_memory_device(c, m, l, &r->mem);
    }
    char why[200];
    space_reject rj = SPACE_OK;
    if (!checked) {
        rj = space_layout_check(m, l, c->tp_across_nodes ? 0 : gpn, why,
                                sizeof why);
    } else if (est_memo_mode() == EST_MEMO_CHECK) {
        est_memo_count_check(space_layout_check(m, l,
                                                c->tp_across_nodes ? 0 : gpn,
                                                NULL, 0) != SPACE_OK);
    }
    if (rj != SPACE_OK) {
        r->reason = EST_INVALID_LAYOUT;
        r->reject = rj;
        snprintf(r->message, sizeof r->message, "%s", why);
        return;
    }
    /* MoE and MLA are modelled as Megatron-Core runs them, dropless, in
     * 16 bits or in fp8 through Transformer Engine; the rest is refused
     * by name, never as a shortfall. */
    int moe = m->num_experts > 0, mla = m->kv_lora_rank > 0;
    const char *not_modelled = NULL;
    if ((moe || mla) && l->framework != SPACE_FW_MEGATRON_CORE)
        not_modelled = "MoE and MLA are modelled as Megatron-Core runs them; "
                       "not under this framework";
    else if ((moe || mla) && l->dtype == HW_FP4)
        not_modelled = "nvfp4 with MoE or MLA layers is not modelled yet";
    else if ((moe || mla) && l->dtype == HW_FP8
             && l->fp8_lib != SPACE_FP8_LIB_TE)
        not_modelled = "fp8 MoE and MLA layers are modelled as Transformer "
                       "Engine runs them; not with torchao";
    else if ((moe || mla) && l->recompute == SPACE_RECOMPUTE_SELECTIVE_OP)
        not_modelled = "op-level checkpointing of MoE or MLA layers is not "
                       "modelled";
    if (not_modelled) {
        r->reason = EST_MOE;
        if (moe)
            snprintf(r->message, sizeof r->message, "%s (%lld experts)",
                     not_modelled, (long long)m->num_experts);
        else
            snprintf(r->message, sizeof r->message, "%s", not_modelled);
        return;
    }
    if (!moe && l->moe_comm_overlap != SPACE_MOE_OVERLAP_NONE) {
        r->reason = EST_MOE_LAYOUT;
        snprintf(r->message, sizeof r->message,
                 "--moe-comm-overlap needs a mixture of experts; %s is dense",
                 m->name);
        return;
    }
    if (moe && est_moe_check(m, l, why, sizeof why)) {
        r->reason = EST_MOE_LAYOUT;
        snprintf(r->message, sizeof r->message, "%s", why);
        return;
    }
    if ((r->reason = est_precision_check(g, l, r->message,
                                         sizeof r->message)) != EST_FEASIBLE
        || (r->reason = est_fp8_attention_check(g, l, r->message,
                                                sizeof r->message))
               != EST_FEASIBLE)
        return;
    /* Memory savers and micro-batch groups (offload.c). */
    if (est_saver_check(c, m, l, &r->mem, r->message, sizeof r->message)) {
        r->reason = EST_SAVER;
        return;
    }
    int blackwell = strcmp(g->arch, "blackwell") == 0;
    if (l->dtype == HW_FP4 && l->fp8_lib != SPACE_FP8_LIB_TE) {
        r->reason = EST_NO_FP8;
        snprintf(r->message, sizeof r->message,
                 "nvfp4 training is Transformer Engine's NVFP4BlockScaling "
                 "(--framework megatron-core); torchao has no NVFP4 training "
                 "recipe modelled here");
        return;
    }
    if (l->dtype == HW_FP8 && l->fp8_recipe == SPACE_FP8_ROWWISE
        && l->fp8_lib == SPACE_FP8_LIB_TE) {
        r->reason = EST_NO_FP8;
        snprintf(r->message, sizeof r->message,
                 "rowwise fp8 scaling is torchao's (--framework torchtitan); "
                 "Transformer Engine has delayed, tensorwise, blockwise, mxfp8");
        return;
    }
    if (y->max_nodes > 0 && gpus > (int64_t)y->max_nodes * gpn) {
        r->reason = EST_TOO_MANY_GPUS;
        snprintf(r->message, sizeof r->message,
                 "%lld GPUs, but %s has %d nodes of %d", (long long)gpus,
                 y->name, y->max_nodes, gpn);
        return;
    }

    /* A caller that keeps nothing above mem_limit_bytes needs no time of
     * a layout that needs more (est_estimate_within). */
    if (r->mem.total > mem_limit_bytes) {
        r->reason = EST_OUT_OF_MEMORY;
        return;
    }

    est_iter_ctx x = {.c = c, .m = m, .l = l, .gemm_dt = (hw_dtype)l->dtype,
                      .act_dt = l->dtype == HW_FP16 ? HW_FP16 : HW_BF16,
                      .eff = est_kernel_eff(c, l), .any_layout_fp8 = blackwell,
                      .hopper = strcmp(g->arch, "hopper") == 0,
                      .host_call_s = est_host_call_s(c)};
    /* cuDNN's fused attention where asked for, or where Transformer
     * Engine picks it (Hopper, Blackwell); FlashAttention-2 otherwise. */
    x.cudnn_attn = l->flash == SPACE_ATTN_CUDNN
                   || (l->flash == SPACE_ATTN_AUTO
                       && (blackwell || strcmp(g->arch, "hopper") == 0));
    x.T = l->mbs * l->seq / l->cp;
    x.Tn = l->sp ? x.T / l->tp : x.T;
    x.vp = space_vocab_padded(m->vocab, l->tp);
    /* PyTorch's LayerNorm is one kernel eager too; its RMSNorm was not
     * before the fused aten::_fused_rms_norm (pytorch/pytorch#153666,
     * 2025; l->rmsnorm_composite, the memory model's flag too). */
    x.norm = m->norm != SPACE_NORM_RMSNORM ? EST_OP_LAYERNORM
             : l->eager && l->rmsnorm_composite ? EST_OP_RMSNORM_EAGER
                                                : EST_OP_RMSNORM;
    x.act_bytes = (double)x.T * (double)m->hidden * est_dtype_bytes(x.act_dt);
    x.tp_group = est_place(l->tp, 1, gpn);
    x.cp_group = est_place(l->cp, l->tp, gpn);
    x.dp_group = est_place(l->dp * l->cp, l->tp, gpn);
    {   /* adjacent pipeline stages: tp x cp x dp ranks apart */
        int64_t stride = l->tp * l->cp * l->dp;
        x.pp_pair = est_place(2, stride, gpn);
    }
    /* Every rank of a node runs its own instance of each of these at the
     * same time: the node's NICs are shared by all of its GPUs. */
    int busy = gpus < gpn ? (int)gpus : gpn;
    x.tp_group.node_busy = x.cp_group.node_busy = busy;
    x.dp_group.node_busy = x.pp_pair.node_busy = busy;
    /* Attention core: MLA's per-head sizes, and sliding windows. */
    x.mla = mla;
    x.attn_hq = m->heads, x.attn_hk = m->kv_heads;
    x.attn_hd = m->head_dim ? m->head_dim : m->hidden / m->heads;
    if (mla) {
        x.attn_hk = m->heads;
        x.attn_hd = (m->qk_nope_head_dim + m->qk_rope_head_dim
                     + m->v_head_dim + 1) / 2;
    }
    x.attn_scale = est_window_scale(m, l->seq);
    /* The expert grid (moe.c): ETP adjacent, EP etp apart, expert DP
     * etp x ep apart. */
    x.ep = space_layout_ep(l), x.etp = space_layout_etp(l);
    x.edp = moe ? est_moe_edp(l) : 1;
    x.imb = est_moe_imbalance(m, l);
    if (moe) {
        x.ep_group = est_place(x.ep, x.etp, gpn);
        x.etp_group = est_place(x.etp, 1, gpn);
        x.eptp_group = est_place(x.ep * x.etp, 1, gpn);
        x.edp_group = est_place(x.edp, x.ep * x.etp, gpn);
        x.ep_group.node_busy = x.etp_group.node_busy = busy;
        x.eptp_group.node_busy = x.edp_group.node_busy = busy;
    }

    est_memo memo; /* x's parts memoized (iter_memo.c) */
    x.memo = est_memo_open(&x, &memo);

    int64_t v = l->vpp, pp = l->pp;
    int64_t micro = l->gbs / (l->mbs * l->dp);
    /* The split (valid: space_layout_check passed). */
    space_split split;
    space_split_resolve(m, l, &split, NULL, 0);
    double layers_per_stage = (double)m->num_layers / (double)pp;
    est_stage_time one = {0}, mo = {0};
    if (c->trace) memset(c->trace, 0, sizeof *c->trace);
    x.where = "layer";
    double wacc = 0; /* weight gradients of what is timed next (w_acc) */
    x.w_acc = &wacc;
    est_layer_time(&x, &one, 0);
    one.w = wacc;
    if (moe) {
        x.where = "moe layer";
        wacc = 0;
        est_layer_time(&x, &mo, 1);
        mo.w = wacc;
    }
    x.w_acc = NULL;
    x.where = "iteration";
    double weight_casts = 0, moe_casts = 0, amax_f = 0, amax_b = 0;
    /* One layer's GEMM weights: QKV [h, q + 2 kv], out [q, h], FC1 [h, f1]
     * (gated: gate and up), FC2 [f, h]; per TP rank. */
    int64_t hd = m->head_dim ? m->head_dim : m->hidden / m->heads;
    int64_t q = m->heads * hd, kv = m->kv_heads * hd, f = m->ffn_hidden;
    int64_t f1 = (space_act_ffn_gemms(m->act) == 3 ? 2 : 1) * f;
    double layer_gemm_params =
        (double)m->hidden * (double)(q + 2 * kv + q + f1 + f) / (double)l->tp;
    int64_t ws[EST_LAYER_WEIGHTS][2];
    int gd, gm = 0;
    int nw = est_layer_weights(&x, 0, ws, &gd);
    if (moe || mla) {
        /* The layers' non-expert GEMM weights, the mean over the model's
         * layers (what --fp8-param-gather gathers in one byte). */
        double lm = 0, L = (double)m->num_layers, dw = 0, mw = 0;
        for (int i = 0; i < nw; i++)
            dw += (double)ws[i][0] * (double)ws[i][1];
        if (moe) {
            lm = (double)est_moe_layers_in(m, 0, m->num_layers);
            int nm = est_layer_weights(&x, 1, ws, &gm);
            for (int i = 0; i < nm - 2; i++)
                mw += (double)ws[i][0] * (double)ws[i][1];
            nw = est_layer_weights(&x, 0, ws, &gd);
        }
        layer_gemm_params = ((L - lm) * dw + lm * mw) / L;
    }
    if ((x.gemm_dt == HW_FP8 || x.gemm_dt == HW_FP4)
        && l->fp8_lib == SPACE_FP8_LIB_TE) {
        weight_casts = est_te_weight_casts(&x, ws, nw);
        if (moe) {
            int nm = est_layer_weights(&x, 1, ws, &gm);
            moe_casts = est_te_weight_casts(&x, ws, nm);
        }
        if (x.gemm_dt == HW_FP8 && l->fp8_recipe == SPACE_FP8_DELAYED) {
            x.where = "micro-batch";
            /* Delayed scaling reduces every fp8 tensor's amax over the TP
             * x CP x DP ranks once per forward of a model chunk (at the
             * exit of its autocast) and once per backward, with one
             * all-reduce each: 3 fp32 forward slots and 2 backward ones
             * per GEMM (TE pytorch/quantization.py
             * reduce_and_update_fp8_tensors; Megatron-LM's
             * get_amax_reduction_group). Latency-bound. */
            est_group amax = est_place(l->tp * l->cp * l->dp, 1, gpn);
            amax.node_busy = gpus < gpn ? (int)gpus : gpn;
            double per_layer = gd;
            if (moe) {
                double L = (double)m->num_layers;
                double lm = (double)est_moe_layers_in(m, 0, m->num_layers);
                per_layer = ((L - lm) * gd + lm * gm) / L;
            }
            double gemms = per_layer * layers_per_stage / (double)l->vpp;
            amax_f = est_iter_coll(&x, EST_COLL_ALLREDUCE, 12 * gemms, &amax);
            amax_b = est_iter_coll(&x, EST_COLL_ALLREDUCE, 8 * gemms, &amax);
            x.where = "iteration";
        }
    }
    est_stage_time first = {0}, last = {0}, mtp_x = {0};
    x.where = "first";
    est_first_stage_extra(&x, &first);
    x.where = "last";
    wacc = 0;
    x.w_acc = &wacc;
    est_last_stage_extra(&x, &last);
    last.w = wacc;
    x.w_acc = NULL;
    /* Where the MTP modules sit: the last stage, or the rank a layout
     * string gives them (split.c). */
    int64_t mtp_rank = pp - 1;
    if (split.lay && m->mtp_layers > 0 && split.lay->mtp_stage >= 0)
        mtp_rank = split.lay->mtp_stage % pp;
    if (m->mtp_layers > 0) {
        /* DeepSeek-V3's multi-token prediction (Megatron-Core
         * multi_token_prediction.py): per module, the embedding and the
         * hidden state normalised, concatenated and projected ([T, 2h] x
         * [2h, h], column-parallel), one transformer layer of the model's
         * kind (MoE in an MoE model), then the shared head and loss
         * again. */
        est_stage_time mt = {0};
        x.where = "mtp";
        wacc = 0;
        x.w_acc = &wacc;
        est_layer_time(&x, &mt, moe);
        double pf = 0, pb = 0;
        est_add_gemm(&x, x.T, m->hidden / l->tp, 2 * m->hidden, EST_GEMM_16BIT,
                     &pf, &pb, NULL);
        est_op n2 = est_elementwise(x.norm, x.act_dt, x.Tn, m->hidden);
        est_add_op(&x, &n2, &pf, &pb);
        est_add_op(&x, &n2, &pf, &pb);
        est_last_stage_extra(&x, &mt);
        x.w_acc = NULL;
        double k = (double)m->mtp_layers;
        /* on the last stage, with its head (as before a layout could
         * place them elsewhere) */
        est_stage_time *to = mtp_rank == pp - 1 ? &last : &mtp_x;
        to->fwd += k * (mt.fwd + pf);
        to->bwd += k * (mt.bwd + pb);
        to->tp += k * mt.tp;
        to->ep += k * mt.ep;
        to->host += k * mt.host;
        to->w += k * wacc;
    }
    x.where = "iteration";

    /* Point-to-point: each stage receives and sends one activation per
     * chunk forward and one gradient backward. */
    double p2p = 0;
    if (pp > 1) {
        double one_send;
        if (l->sp || l->tp == 1) {
            one_send = est_iter_coll(&x, EST_COLL_SENDRECV,
                                     x.act_bytes / (double)l->tp, &x.pp_pair);
        } else if (l->pp_scatter_gather) {
            /* Each TP rank sends its 1/TP slice; the receivers all-gather
             * the slices over the TP group's links (Narayanan et al.,
             * SC'21, section 4.1). */
            one_send = est_iter_coll(&x, EST_COLL_SENDRECV,
                                     x.act_bytes / (double)l->tp, &x.pp_pair)
                       + est_iter_coll(&x, EST_COLL_ALLGATHER, x.act_bytes,
                                       &x.tp_group);
        } else {
            one_send
                = est_iter_coll(&x, EST_COLL_SENDRECV, x.act_bytes, &x.pp_pair);
        }
        p2p = 2 * (double)v * one_send;
    }
    int p2p_overlap = pp > 1 && v > 1 && !l->no_pp_overlap;
    /* Each pipeline rank: its own layers (space_split: the chunks Megatron-
     * Core builds on it), the embedding on rank 0, the head on the last,
     * the MTP modules where they sit. The ranks are taken in the order 0,
     * PP - 1, 1, ..., PP - 2; a run of ranks that hold alike (every
     * middle rank of a formula split of a model whose layers are alike)
     * is timed once and counted as many times. */
    est_stage_time cs_st = {0}, run_st = {0};
    double cs_casts = 0, run_casts = 0, run_fill = 0, run_t = 0;
    /* the schedules' sums over ranks: weight gradients (est_stage_time.w),
     * backward with its recompute, and the steady state's time */
    double run_w = 0, run_b = 0, wsum = 0, bsum = 0, fbsum = 0;
    int dualpipe = l->pp_schedule == SPACE_PP_DUALPIPE
                   || l->pp_schedule == SPACE_PP_DUALPIPEV;
    double tmax = 0, tsum = 0;
    int64_t crit = 0, run = 0;
    double key[4] = {-1, -1, -1, -1};
    int per_rank = l->moe_comm_overlap == SPACE_MOE_OVERLAP_A2A;
    for (int64_t i = 0; i <= pp; i++) {
        int64_t rank = i == 0 ? 0 : i == 1 ? pp - 1 : i - 1;
        double nl = 0, nrec = 0, nm = 0;
        int ends = 1;
        if (i < pp) {
            nl = (double)space_split_rank_layers(&split, rank);
            /* Only the layers recomputed pay for it (--recompute-method
             * block: the first N of each model chunk). */
            nrec = space_split_recompute_layers(&split, l, rank);
            nm = moe ? est_split_moe_layers(m, &split, rank) : 0;
            ends = rank == 0 || rank == pp - 1 || rank == mtp_rank;
        }
        /* the run so far ends here: count it */
        if (run > 0
            && (i == pp || ends || per_rank || key[0] != nl || key[1] != nrec
                || key[2] != nm)) {
            tsum += (double)run * run_fill;
            wsum += (double)run * run_w;
            bsum += (double)run * run_b;
            fbsum += (double)run * run_t;
            if (run_t > tmax) {
                tmax = run_t;
                crit = (int64_t)key[3];
                cs_st = run_st;
                cs_casts = run_casts;
            }
            run = 0;
        }
        if (i == pp) break;
        if (run > 0) { /* alike: one more of the run */
            run++;
            continue;
        }
        est_stage_time st = {0}, *s = &st;
        double casts = weight_casts * nl; /* fp8 weight casts, once per
                                             iteration */
        if (!moe) {
            s->fwd = one.fwd * nl + (double)v * amax_f;
            s->bwd = one.bwd * nl + (double)v * amax_b;
            s->w = one.w * nl;
            s->recompute = one.recompute * nrec;
            s->tp = one.tp * nl + one.rec_tp * nrec;
            s->cp = one.cp * nl + one.rec_cp * nrec;
            s->ep = 0;
            s->host = one.host * nl + one.rec_host * nrec;
        } else {
            /* Dense-FFN and MoE layers of the rank, the recomputed ones in
             * the same proportion. */
            double nd = nl - nm;
            double rm = nl > 0 ? nrec * nm / nl : 0, rd = nrec - rm;
            s->fwd = one.fwd * nd + mo.fwd * nm + (double)v * amax_f;
            s->bwd = one.bwd * nd + mo.bwd * nm + (double)v * amax_b;
            s->w = one.w * nd + mo.w * nm;
            s->recompute = one.recompute * rd + mo.recompute * rm;
            s->tp = one.tp * nd + one.rec_tp * rd + mo.tp * nm
                    + mo.rec_tp * rm;
            s->cp = one.cp * nd + one.rec_cp * rd + mo.cp * nm
                    + mo.rec_cp * rm;
            s->ep = mo.ep * nm + mo.rec_ep * rm;
            s->host = one.host * nd + one.rec_host * rd + mo.host * nm
                      + mo.rec_host * rm;
            if (l->moe_comm_overlap == SPACE_MOE_OVERLAP_A2A) {
                double share = moe_pair_share(l, rank, micro);
                s->ep = (mo.ep * (1 - share) + mo.ep_pair * share) * nm
                        + mo.rec_ep * rm;
            }
            casts = weight_casts * nd + moe_casts * nm;
            if (rank == mtp_rank && m->mtp_layers > 0)
                casts += (double)m->mtp_layers * moe_casts;
        }
        s->p2p = p2p;
        s->offload = 0;
        if (l->act_offload_layers > 0 || l->offload_modules)
            s->offload = offload_exposed(&x, s, nl, nm);
        /* The ends: the embedding on rank 0 and the head on rank PP - 1;
         * a V schedule puts stage 2 PP - 1, the head's, on rank 0 too
         * (torchtitan pipeline_parallel.py _get_pp_rank_to_stage_indices_
         * mapping, style "v"); DualPipe's ranks 0 and PP - 1 each hold
         * stage 0 and stage PP - 1, one for each direction's half of the
         * micro-batches (dualpipe.py: module[phase], is_first_rank /
         * is_last_rank), so each runs half of both. */
        int dual = l->pp_schedule == SPACE_PP_DUALPIPE;
        int64_t head_rank = space_pp_schedule_v(l) ? 0 : pp - 1;
        const est_stage_time *add[3]
            = {rank == 0 || (dual && rank == pp - 1) ? &first : NULL,
               rank == head_rank || (dual && rank == 0) ? &last : NULL,
               rank == mtp_rank && mtp_rank != pp - 1 ? &mtp_x : NULL};
        for (int a = 0; a < 3; a++) {
            if (!add[a]) continue;
            double k = dual && a < 2 ? 0.5 : 1;
            s->fwd += k * add[a]->fwd;
            s->bwd += k * add[a]->bwd;
            s->tp += k * add[a]->tp;
            s->w += k * add[a]->w;
            if (moe) s->ep += k * add[a]->ep;
        }
        /* The fill and the drain pay every exchange. */
        double t_fill = stage_total(s);
        if (dualpipe) {
            /* DualPipe's steady state runs one micro-batch's forward chunk
             * beside another's backward chunk (F&B): each chunk's MoE
             * dispatch and combine and its pipeline sends run under the
             * other chunk's compute (DeepSeek-V3 report section 3.2.1,
             * Figure 4; dualpipe.py _forward_backward_compute_chunk calls
             * the model's overlapped_forward_backward). Compute does not
             * overlap compute on one GPU, so F&B = F + B less the
             * communication hidden, at most all of it; each hidden second
             * slows the compute by the SM share the communication kernels
             * hold (est_moe_comm_sm_share, as the combined 1F1B overlap). TP
             * and CP collectives stay exposed. */
            double cm = s->ep + s->p2p;
            double comp = s->fwd + s->bwd + s->recompute;
            if (cm > 0) {
                double hid = fmin(cm, comp);
                double left = cm - hid + est_moe_comm_sm_share(&x) * hid;
                s->ep *= left / cm;
                s->p2p *= left / cm;
            }
        } else if (p2p_overlap) {
            /* Steady state: each of the v forward and v backward
             * exchanges of a micro-batch runs under one chunk's compute. */
            double cf = s->fwd / (double)v, cb = (s->bwd + s->recompute) / (double)v;
            double send = p2p / (2 * (double)v);
            s->p2p = (double)v * (fmax(0, send - cf) + fmax(0, send - cb));
        }
        run = 1;
        run_st = st, run_casts = casts, run_fill = t_fill;
        run_t = stage_total(s);
        run_w = s->w, run_b = s->bwd + s->recompute;
        key[0] = nl, key[1] = nrec, key[2] = nm, key[3] = (double)rank;
        /* the ends stand alone */
        if (ends) key[0] = -1;
    }
    double tmean = tsum / (double)pp;
    const est_stage_time *cs = &cs_st;
    est_breakdown *b = &r->time;
    double mb = (double)micro;
    /* fp8 weights cast once per iteration (est_te_weight_casts), on the
     * critical stage's layers. */
    b->fwd_s = mb * cs->fwd + cs_casts;
    b->bwd_s = mb * cs->bwd;
    b->recompute_s = mb * cs->recompute;
    b->tp_s = mb * cs->tp;
    b->cp_s = mb * cs->cp;
    b->ep_s = mb * cs->ep;
    b->pp_p2p_s = mb * cs->p2p;
    b->offload_s = mb * cs->offload;
    b->host_s = mb * cs->host;
    b->bubble_s = est_pp_bubble(l, tmean, wsum / (double)pp,
                                bsum / (double)pp, fbsum / (double)pp);
    if (v > 1) {
        /* Interleaved: the fill and the drain pass chunk by chunk, each
         * step as long as the longest chunk in it: the bubble stretched
         * by the most layers a chunk holds over the mean (1 for an even
         * split; a chunk that gave a layer's slot to the embedding or the
         * loss is not the longest). */
        double avg = (double)m->num_layers / (double)(pp * v);
        b->bubble_s *= (double)space_split_max_chunk(&split) / avg;
    }

    /* Data parallelism over dp x cp ranks, for the critical stage's
     * parameters; gradients of space_grad_bytes (as the memory model). */
    double params = r->mem.params;
    double shard = (double)(l->dp * l->cp);
    /* MoE: the routed experts' weights reduce over the expert data-
     * parallel group instead (Megatron-Core DDP keeps expert parameters
     * in buffers of their own, reduced over the expert-DP group;
     * distributed_data_parallel.py, expert_data_parallel_group), in the
     * same window. */
    double xp = r->mem.expert_params, xshard = (double)x.edp;
    int xred = xp > 0 && x.edp > 1;
    if (shard > 1 || xred) {
        double grad_bytes = space_grad_bytes(l) * (params - xp);
        double xgrad = space_grad_bytes(l) * xp;
        double bucket = fmin(1, EST_GRAD_BUCKET_PARAMS / fmax(params, 1));
        /* Megatron-Core: the tail bucket's own collectives, over the DP
         * group (the embedding is not an expert parameter, and stays 16-bit
         * under --fp8-param-gather). It is the first stage's, and under a
         * pipeline the first stage's backward ends the step, so its tail
         * is the one exposed; capped at the critical stage's parameters. */
        double tail = fmin(est_dp_tail_params(l, m->hidden, x.vp), params - xp);
        int mc_tail = tail > 0;
        double rs_tail = 0, ag_tail = 0;
        if (mc_tail) {
            rs_tail = est_iter_coll(&x, l->zero == SPACE_ZERO_NONE
                                            ? EST_COLL_ALLREDUCE
                                            : EST_COLL_REDUCE_SCATTER,
                                    space_grad_bytes(l) * tail, &x.dp_group);
            if (l->zero == SPACE_ZERO_1)
                ag_tail = est_iter_coll(&x, EST_COLL_ALLGATHER, 2 * tail,
                                        &x.dp_group);
        }
        /* Under the last micro-batch's backward, unless not overlapped. */
        double window = l->no_dp_overlap ? 0 : cs->bwd + cs->recompute;
        double fwd_window = l->no_dp_overlap ? 0 : cs->fwd;
        if (l->zero == SPACE_ZERO_NONE) {
            double t = est_iter_coll(&x, EST_COLL_ALLREDUCE, grad_bytes,
                                     &x.dp_group);
            if (xred)
                t += est_iter_coll(&x, EST_COLL_ALLREDUCE, xgrad, &x.edp_group);
            b->dp_s = fmax(mc_tail ? rs_tail : bucket * t, t - window);
        } else {
            double rs = est_iter_coll(&x, EST_COLL_REDUCE_SCATTER, grad_bytes,
                                      &x.dp_group);
            if (xred)
                rs += est_iter_coll(&x, EST_COLL_REDUCE_SCATTER, xgrad,
                                    &x.edp_group);
            /* ZeRO-2/3 keep no unsharded gradients to accumulate into, so
             * every micro-batch reduce-scatters its gradients, under its
             * own backward (DeepSpeed ZeRO-2/3, FSDP without no_sync);
             * ZeRO-1 once, after the last. */
            double rs_times = l->zero >= SPACE_ZERO_2 ? mb : 1;
            /* ZeRO-3 under a pipeline (FSDP2 in PyTorch's pipelining, the
             * one framework that combines them): gradient sync is off
             * for every micro-batch's backward, and after the last one
             * the stage's FSDP post-backward reduce-scatters everything,
             * after the compute (torch/distributed/pipelining/stage.py,
             * backward_maybe_with_nosync); the parameters, not resharded
             * between micro-batches, are gathered once, in the first
             * forward. */
            int fsdp_pp = l->zero == SPACE_ZERO_3 && pp > 1;
            if (fsdp_pp) rs_times = 1, window = 0;
            /* ZeRO-1/2: the 16-bit parameters gathered back after the
             * step (ZeRO-3 keeps them sharded); with fp8 parameters
             * (--fp8-param-gather) the layers' GEMM weights in one byte
             * (Megatron-Core fp8_utils.py, _quantize_param_shard_impl:
             * the shard cast to fp8 before the gather). */
            int fp8p = x.gemm_dt == HW_FP8 && l->fp8_lib == SPACE_FP8_LIB_TE
                       && l->fp8_params;
            double ag_bytes = 2 * (params - xp);
            if (fp8p)
                ag_bytes -= (double)space_split_rank_layers(&split, r->mem.stage)
                            * layer_gemm_params;
            double ag = l->zero == SPACE_ZERO_3
                            ? 0
                            : est_iter_coll(&x, EST_COLL_ALLGATHER, ag_bytes,
                                            &x.dp_group);
            /* The routed experts' shard gathered over expert DP: all
             * GEMM weights, one byte each with fp8 parameters. */
            if (xred && l->zero != SPACE_ZERO_3)
                ag += est_iter_coll(&x, EST_COLL_ALLGATHER, (fp8p ? 1 : 2) * xp,
                                    &x.edp_group);
            b->dp_s = rs_times * fmax(mc_tail ? rs_tail : bucket * rs,
                                      rs - window)
                      + fmax(mc_tail ? ag_tail : bucket * ag,
                             ag - fwd_window); /* 0 if ag is */
            if (l->zero == SPACE_ZERO_3) {
                /* Each layer's parameters gathered for its forward and
                 * again for its backward, under the neighbouring layer's
                 * compute (prefetch), or before it where not overlapped
                 * (DeepSpeed's ZeRO-3 of 2021 prefetched little: DeepSpeed
                 * issues #1174 and #1170); the gradients reduce-scattered
                 * per layer (the term above) as they are produced.
                 * MoE (Megatron-FSDP, megatron_fsdp.py@d98e8a6: expert
                 * parameters in groups of their own, sharded over the
                 * expert data-parallel group, dist_index.get_fsdp_group(
                 * is_expert_parallel=True)): an MoE layer gathers its
                 * other parameters over the DP group and its E / ep
                 * routed experts over the expert-DP group, one after the
                 * other, under the MoE layer's compute. */
                /* r->mem's stage: the one whose params these are. */
                int64_t srank = r->mem.stage;
                double nl_s =
                    fmax((double)space_split_rank_layers(&split, srank), 1);
                double nm_s = moe ? est_split_moe_layers(m, &split, srank) : 0;
                double lp = (params - xp) / nl_s;
                double g1 = est_iter_coll(&x, EST_COLL_ALLGATHER, 2 * lp,
                                          &x.dp_group);
                double g_moe = g1;
                if (nm_s > 0 && xp > 0)
                    g_moe += est_iter_coll(
                        &x, EST_COLL_ALLGATHER, 2 * xp / nm_s,
                        x.edp > 1 ? &x.edp_group : &x.dp_group);
                double ov = l->no_dp_overlap ? 0 : 1;
                double exp_f = (nl_s - nm_s) * fmax(0, g1 - ov * one.fwd)
                               + nm_s * fmax(0, g_moe - ov * mo.fwd);
                double exp_b = (nl_s - nm_s) * fmax(0, g1 - ov * one.bwd)
                               + nm_s * fmax(0, g_moe - ov * mo.bwd);
                if (fsdp_pp)
                    b->dp_s += exp_f;
                else
                    b->dp_s += mb * (exp_f + exp_b);
            }
        }
    }
    /* Optimizer step over the parameters this rank updates. */
    {
        est_op a = {0};
        a.kind = EST_OP_ADAM;
        a.dtype = HW_FP32;
        double n = l->zero >= SPACE_ZERO_1
                       ? (params - xp) / shard + (xp > 0 ? xp / xshard : 0)
                       : params;
        if (l->opt_offload > 0 || l->pa_optimizer) {
            b->optimizer_s = saver_step(&x, n);
        } else {
            a.n = (int64_t)(n > 1 ? n : 1);
            est_time t = est_op_time(&x, &a);
            b->optimizer_s = t.fwd_s;
        }
    }
    r->iteration_s = b->fwd_s + b->bwd_s + b->recompute_s + b->tp_s + b->cp_s
                     + b->pp_p2p_s + b->bubble_s + b->dp_s + b->optimizer_s;
    if (l->act_offload_layers > 0 || l->offload_modules)
        r->iteration_s += b->offload_s;
    if (moe) r->iteration_s += b->ep_s;
    r->iteration_s += b->host_s;
    r->critical_stage = crit;

    /* Model FLOPs: the space.h convention with attention over the whole
     * sequence (non-causal, as Megatron-LM and PaLM count), no recompute. */
    space_flops fl;
    space_flops_per_token(m, l->seq, 0, SPACE_RECOMPUTE_NONE, &fl);
    double tokens = (double)l->gbs * (double)l->seq;
    r->model_flops = (fl.fwd + fl.bwd) * tokens;
    r->tokens_per_s = tokens / r->iteration_s;
    r->model_flops_per_gpu_s = r->model_flops / (r->iteration_s * (double)gpus);
    double peak = g->peak_flops[x.act_dt] > 0 ? g->peak_flops[x.act_dt]
                                              : g->peak_flops[HW_FP16];
    r->mfu = r->model_flops_per_gpu_s / peak;

    if (r->mem.total > g->mem_bytes) {
        r->reason = EST_OUT_OF_MEMORY;
        snprintf(r->message, sizeof r->message,
                 "needs %.2f GiB on pipeline stage %lld, %.2f GiB more than "
                 "the %.2f GiB of %s",
                 r->mem.total / 1073741824.0, (long long)r->mem.stage,
                 (r->mem.total - g->mem_bytes) / 1073741824.0,
                 g->mem_bytes / 1073741824.0, g->name);
        return;
    }
    r->feasible = 1;
}
