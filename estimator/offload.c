/*
 * offload.c - what the memory savers of a layout (space/savers.c) cost:
 * the optimizer's bytes per parameter under Megatron-Core's
 * precision-aware optimizer and optimizer CPU offload, the optimizer
 * step's traffic, the host link each GPU has, the stalls of Transformer
 * Engine's layer offload, and what Megatron-Core refuses (est_saver_check).
 * The activations offloading leaves on the GPU are mem.c's; the step and
 * offload times are composed in iter.c.
 *
 * Bytes per parameter of the rank's optimizer shard (docs/memory.md):
 *   without savers: fp32 master 4, Adam's m and v 4 + 4 (12; the
 *     16-bit weights and the gradients are mem.c's);
 *   --use-precision-aware-optimizer (NVIDIA/Megatron-LM@d98e8a64ddf3,
 *     megatron/core/optimizer/__init__.py and distrib_optimizer.py):
 *     unless fp8 runs with a recipe other than delayed scaling (and fp32
 *     master weights, without offload), Megatron-Core keeps no master
 *     copy: Transformer Engine's FusedAdam holds it ("master_weights":
 *     True, master_weight_dtype = --main-params-dtype) and reads the
 *     gradient buffer in place (use_decoupled_grad: no fp32 copy of a
 *     16-bit gradient); an fp32 master of a bf16 parameter is kept as the
 *     16 bits the bf16 value lacks (OptimizerConfig.store_param_remainders
 *     True with TE >= 2.1; FusedAdam's int16 remainders,
 *     transformer_engine/pytorch/optimizers/fused_adam.py at
 *     NVIDIA/TransformerEngine@d0067d0da): 2; fp16 master 2; the moments
 *     in --exp-avg-dtype and --exp-avg-sq-dtype: 4, 2 or 1 (fp8, e4m3 with
 *     one scale per tensor). With fp8 under another recipe Megatron-Core
 *     keeps its fp32 master (4) and copies the gradients to fp32 as
 *     without the option; only the moments change.
 *     DeepSeek-V3 trains so (arXiv 2412.19437, section 3.3: BF16 moments,
 *     FP32 master weights and gradients).
 *   --optimizer-cpu-offload with --optimizer-offload-fraction f
 *     (megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py,
 *     HybridDeviceOptimizer with param_update_in_fp32): the first f of
 *     the shard's parameters are stepped by torch.optim.AdamW on the CPU,
 *     on a pinned fp32 copy with a pinned fp32 gradient buffer and fp32
 *     m and v (16 bytes each on the host, none on the GPU); the rest by
 *     FusedAdam on an fp32 copy on the GPU with fp32 m and v (12). The
 *     moment dtypes are not passed to either.
 * The step's transient: an fp32 copy of a 16-bit gradient wherever a
 * gradient is cast (Megatron's own master path; HybridDeviceOptimizer's
 * grad.to(fp32) on the GPU, and the D2H copy_, which converts on the GPU
 * when non_blocking, PyTorch aten/src/ATen/native/cuda/Copy.cu
 * copy_kernel_cuda); FusedAdam's fp32 copies of states kept in fp16 or
 * fp8, or in bf16 unless both moments are (get_unscaled_state; bf16
 * moments are unscaled inside the kernel, fuse_unscale).
 */
#include "est.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Whether Transformer Engine's FusedAdam holds the master weights
 * (Megatron-Core's use_precision_aware_optimizer_no_fp8_or_ds_fp8,
 * OptimizerConfig.__post_init__). */
static int te_master(const space_layout *l)
{
    if (!l->pa_optimizer) return 0;
    if (l->opt_offload > 0 || l->main_params_dtype != SPACE_OPT_FP32)
        return 1;
    return !(l->dtype == HW_FP8 && l->fp8_recipe != SPACE_FP8_DELAYED);
}

/* Bytes of the master weight of one parameter under l's precision-aware
 * optimizer. */
static double master_bytes(const space_layout *l)
{
    if (!te_master(l)) return 4;
    if (l->main_params_dtype == SPACE_OPT_FP16) return 2;
    /* fp32 master of a bf16 parameter: its 16 remainder bits */
    return l->dtype != HW_FP16 && !l->fp8_params ? 2 : 4;
}

static int grads_16bit(const space_layout *l)
{
    return space_grad_bytes(l) < 4;
}

double est_opt_gpu_bytes(const space_layout *l)
{
    if (l->opt_offload > 0) return 12 * (1 - fmin(l->opt_offload, 1));
    if (!l->pa_optimizer) return 12;
    return master_bytes(l) + space_opt_dtype_bytes(l->exp_avg_dtype)
           + space_opt_dtype_bytes(l->exp_avg_sq_dtype);
}

double est_opt_host_bytes(const space_layout *l)
{
    return l->opt_offload > 0 ? 16 * fmin(l->opt_offload, 1) : 0;
}

double est_opt_step_bytes(const space_layout *l)
{
    if (l->opt_offload > 0 || !l->pa_optimizer)
        return grads_16bit(l) ? 4 : 0;
    double b = !te_master(l) && grads_16bit(l) ? 4 : 0;
    int fused = l->exp_avg_dtype == SPACE_OPT_BF16
                && l->exp_avg_sq_dtype == SPACE_OPT_BF16;
    if (l->exp_avg_dtype != SPACE_OPT_FP32 && !fused) b += 4;
    if (l->exp_avg_sq_dtype != SPACE_OPT_FP32 && !fused) b += 4;
    if (te_master(l) && l->main_params_dtype == SPACE_OPT_FP16) b += 4;
    return b;
}

/* HBM bytes of one state of s bytes in the step: read and written by the
 * kernel (2 s); a state FusedAdam unscales to fp32 first also pays that
 * copy (s + 4), the kernel's fp32 traffic (8 in place of 2 s), the amax
 * pass (4), the rescale (8) and the cast back (4 + s): 2 s + 24. */
static double state_traffic(double s, int unscaled)
{
    return unscaled ? 2 * s + 24 : 2 * s;
}

/* HBM bytes per parameter of the GPU's step under l. Without the option:
 * the 16-bit gradient cast to fp32 where it is 16-bit (read 2, write 4),
 * the kernel reading the fp32 gradient and reading and writing the fp32
 * master, m and v (28), the master copied to the 16-bit parameter (read
 * 4, write 2). With FusedAdam holding the master: the gradient read in
 * its own dtype, the states in theirs, the 16-bit parameter written
 * (and read, with remainders). */
static double step_traffic(const space_layout *l)
{
    double g = (double)space_grad_bytes(l);
    if (!l->pa_optimizer || l->opt_offload > 0) {
        /* Megatron's master path; HybridDeviceOptimizer's GPU share
         * likewise (its fp32 copy, FusedAdam, the copy back) */
        return (g < 4 ? g + 4 : 0) + 4 + 3 * 8 + 6;
    }
    int fused = l->exp_avg_dtype == SPACE_OPT_BF16
                && l->exp_avg_sq_dtype == SPACE_OPT_BF16;
    double b = state_traffic(space_opt_dtype_bytes(l->exp_avg_dtype),
                             l->exp_avg_dtype != SPACE_OPT_FP32 && !fused)
               + state_traffic(space_opt_dtype_bytes(l->exp_avg_sq_dtype),
                               l->exp_avg_sq_dtype != SPACE_OPT_FP32 && !fused);
    if (te_master(l)) {
        double mb = master_bytes(l);
        int rem = mb == 2 && l->main_params_dtype == SPACE_OPT_FP32;
        b += g + state_traffic(mb, l->main_params_dtype == SPACE_OPT_FP16)
             + 2 + (rem ? 2 : 0);
    } else {
        b += (g < 4 ? g + 4 : 0) + 4 + 8 + 6;
    }
    return b;
}

double est_opt_traffic_ratio(const space_layout *l)
{
    if (!l->pa_optimizer && l->opt_offload <= 0) return 1;
    space_layout plain = *l;
    plain.pa_optimizer = 0;
    plain.opt_offload = 0;
    plain.main_grads_dtype = plain.main_params_dtype = SPACE_OPT_FP32;
    plain.exp_avg_dtype = plain.exp_avg_sq_dtype = SPACE_OPT_FP32;
    return step_traffic(l) / step_traffic(&plain);
}

double est_host_bw(const est_ctx *c)
{
    const hw_system *y = c->sys;
    double link = y->host_link_bw_bytes_per_s > 0
                      ? y->host_link_bw_bytes_per_s
                      : c->gpu->host_link_bw_bytes_per_s;
    int gpn = y->gpus_per_node > 0 ? y->gpus_per_node : 1;
    double share = y->host_mem_bw_bytes_per_s / gpn;
    if (!(link > 0) || !(share > 0)) return 0;
    return fmin(link, share);
}

/* Layers beyond this are simulated in proportion (a stage of that many
 * layers trains nowhere). */
#define SIM_LAYERS 1024

void est_layer_offload_stall(int64_t L, int64_t n, double cf, double cb,
                             double x, double *fwd, double *bwd)
{
    *fwd = *bwd = 0;
    if (n <= 0 || L <= 1 || !(x > 0)) return;
    double scale = 1;
    if (L > SIM_LAYERS) {
        scale = (double)L / SIM_LAYERS;
        n = (int64_t)((double)n / scale);
        L = SIM_LAYERS;
        if (n < 1) n = 1;
    }
    if (n > L - 1) n = L - 1;
    double fin[SIM_LAYERS];
    /* Forward (DefaultOffloadSynchronizer.fwd_step): before layer j the
     * previous layer's offload starts on the offload stream, and every
     * layer i whose deadline is j (j = L - n + i) must have finished. */
    double t = 0, busy = 0;
    for (int64_t j = 0; j < L; j++) {
        if (j >= 1 && j - 1 < n) {
            busy = fmax(t, busy) + x;
            fin[j - 1] = busy;
        }
        int64_t i = j - (L - n);
        if (i >= 0 && i < n) t = fmax(t, fin[i]);
        t += cf;
    }
    *fwd = scale * fmax(0, t - (double)L * cf); /* never below 0 by rounding */
    /* Backward (bwd_step): before layer j's backward, the reload of layer
     * i = j - (L - 1 - n) starts; layer j < n waits for its own. */
    t = 0, busy = 0;
    for (int64_t j = L - 1; j >= 0; j--) {
        int64_t i = j - (L - 1 - n);
        if (i >= 0 && i < n) {
            busy = fmax(t, busy) + x;
            fin[i] = busy;
        }
        if (j < n) t = fmax(t, fin[j]);
        t += cb;
    }
    *bwd = scale * fmax(0, t - (double)L * cb);
}

#define SAY(...)                                                              \
    do {                                                                      \
        if (cap) snprintf(why, cap, __VA_ARGS__);                             \
        return -1;                                                            \
    } while (0)

int est_saver_check(const est_ctx *c, const space_model *m,
                    const space_layout *l, const est_memory *mem, char *why,
                    size_t cap)
{
    if (cap) why[0] = '\0';
    int any_opt = l->pa_optimizer || l->opt_offload > 0
                  || l->main_grads_dtype || l->main_params_dtype
                  || l->exp_avg_dtype || l->exp_avg_sq_dtype;
    int any_act = l->act_offload_layers > 0 || l->offload_modules;
    if (!any_opt && !any_act) return 0;
    if ((any_opt || any_act) && l->framework != SPACE_FW_MEGATRON_CORE)
        SAY("the precision-aware optimizer, optimizer offload and activation "
            "offloading are Megatron-Core's (with Transformer Engine); not "
            "modelled under %s",
            space_framework_names[(unsigned)l->framework < SPACE_FW_COUNT
                                      ? l->framework
                                      : 0]);
    /* The precision-aware optimizer (optimizer_config.py __post_init__,
     * optimizer/__init__.py, arguments.py validate_args). */
    if (!l->pa_optimizer
        && (l->main_grads_dtype || l->main_params_dtype || l->exp_avg_dtype
            || l->exp_avg_sq_dtype))
        SAY("--main-grads-dtype, --main-params-dtype, --exp-avg-dtype and "
            "--exp-avg-sq-dtype other than fp32 need "
            "--use-precision-aware-optimizer (Megatron-Core's "
            "OptimizerConfig: \"exp_avg_dtype can only be fp32 when not "
            "using precision-aware optimizer\")");
    if (l->opt_offload > 0 && !l->pa_optimizer)
        SAY("--optimizer-cpu-offload needs --use-precision-aware-optimizer "
            "(validate_args: \"the hybrid device optimizer reuses the code "
            "path of this flag\")");
    if (l->pa_optimizer && l->zero != SPACE_ZERO_1)
        SAY("--use-precision-aware-optimizer only supported with distributed "
            "optimizer (Megatron-Core get_megatron_optimizer); ZeRO %d here "
            "(Megatron-FSDP's own dtypes are not modelled)",
            (int)l->zero);
    if (l->main_grads_dtype == SPACE_OPT_BF16 && l->grad_bytes == 4)
        SAY("--main-grads-dtype can only be fp32 when "
            "--accumulate-allreduce-grads-in-fp32 is set (validate_args)");
    if (l->main_grads_dtype == SPACE_OPT_BF16 && l->dtype == HW_FP16)
        SAY("--main-grads-dtype bf16 with fp16 training: Megatron-LM applies "
            "it under --bf16 only (validate_args); not modelled");
    if (l->main_grads_dtype != SPACE_OPT_FP32
        && l->main_grads_dtype != SPACE_OPT_BF16)
        SAY("--main-grads-dtype %s: Megatron-LM takes fp32 or bf16",
            space_opt_dtype_name(l->main_grads_dtype));
    if (l->main_params_dtype != SPACE_OPT_FP32
        && l->main_params_dtype != SPACE_OPT_FP16)
        SAY("--main-params-dtype %s: Megatron-LM takes fp32 or fp16 "
            "(FusedAdam: \"only supports fp32/fp16 master weights\")",
            space_opt_dtype_name(l->main_params_dtype));
    if (l->opt_offload > 0) {
        if (l->opt_offload > 1)
            SAY("--optimizer-offload-fraction %g: expected (0, 1]",
                l->opt_offload);
        if (l->fp8_params && l->dtype == HW_FP8
            && l->fp8_recipe != SPACE_FP8_DELAYED)
            SAY("When --fp8-param-gather is enabled, the optimizer cpu "
                "offload must be used in conjunction with --fp8-recipe "
                "delayed (validate_args)");
        if (l->exp_avg_dtype || l->exp_avg_sq_dtype || l->main_params_dtype)
            SAY("--exp-avg-dtype, --exp-avg-sq-dtype and --main-params-dtype "
                "have no effect under --optimizer-cpu-offload: "
                "HybridDeviceOptimizer builds its CPU and GPU Adam without "
                "them (megatron/core/optimizer/__init__.py); refused rather "
                "than ignored");
    }
    /* Transformer Engine's layer offload (transformer_config.py
     * __post_init__). */
    if (l->act_offload_layers > 0) {
        if (l->offload_modules)
            SAY("fine_grained_activation_offloading cannot be enabled with "
                "cpu_offloading (TransformerConfig)");
        if (l->act_offload_layers >= m->num_layers)
            SAY("CPU offloading can be done only for layers less than %lld "
                "(--cpu-offloading-num-layers %lld)",
                (long long)m->num_layers, (long long)l->act_offload_layers);
        if (l->pp > 1)
            SAY("Currently there is no support for Pipeline parallelism with "
                "CPU offloading (--cpu-offloading-num-layers with PP %lld)",
                (long long)l->pp);
        /* NVIDIA/Megatron-LM@d98e8a64ddf3 transformer_config.py
         * __post_init__: per-layer graphs only (full_iteration allowed) */
        if (l->cuda_graph && l->cuda_graph != SPACE_CG_FULL_ITERATION)
            SAY("CUDA graphs not supported with CPU offloading "
                "(--cpu-offloading-num-layers with --cuda-graph-impl %s; "
                "TransformerConfig)", space_cuda_graph_name(l));
        if (l->recompute != SPACE_RECOMPUTE_NONE)
            SAY("CPU offloading does not work when activation recomputation "
                "is enabled (--cpu-offloading-num-layers with %s "
                "recomputation)",
                space_recompute_names[(unsigned)l->recompute
                                              < SPACE_RECOMPUTE_COUNT
                                          ? l->recompute
                                          : 0]);
    }
    /* Fine-grained offloading (transformer_config.py __post_init__). */
    if (l->offload_modules) {
        unsigned om = l->offload_modules, rc = space_recompute_modules(l);
        if (om & SPACE_OFF_ATTN_PROJ && !(om & SPACE_OFF_CORE_ATTN))
            SAY("attn_proj cannot be set to offload_modules alone without "
                "core_attn (TransformerConfig)");
        if (om & (SPACE_OFF_EXPERT_FC1 | SPACE_OFF_MOE_ACT)
            && rc & SPACE_RC_MOE)
            SAY("Cannot offload expert_fc1 or moe_act while recomputing the "
                "entire MoE layer (TransformerConfig: 'moe' in "
                "--recompute-modules)");
        if (om & (SPACE_OFF_EXPERT_FC1 | SPACE_OFF_MOE_ACT | SPACE_OFF_MLP_NORM)
            && m->num_experts <= 0)
            SAY("--offload-modules expert_fc1, moe_act and mlp_norm offload "
                "MoE layers' tensors (a dense layer's pre-MLP norm is fused "
                "into FC1); %s is dense",
                m->name);
        if (om & SPACE_OFF_ATTN_NORM && m->kv_lora_rank <= 0)
            SAY("--offload-modules attn_norm: %s's attention norm is fused "
                "into the QKV projection (an IdentityOp, skipped); offload "
                "qkv_linear",
                m->name);
        if (l->recompute == SPACE_RECOMPUTE_FULL
            || l->recompute == SPACE_RECOMPUTE_SELECTIVE_OP)
            SAY("fine-grained activation offloading with full or op-level "
                "recomputation is not modelled (Megatron-Core pairs it with "
                "selective --recompute-modules)");
        if (l->offload_fraction < 0 || l->offload_fraction > 1)
            SAY("activation_offload_fraction must be in range [0, 1] (%g)",
                l->offload_fraction);
    }
    /* mb_group: the interleaved schedule's only; a layout of one chunk a
     * rank ignores it, as Megatron-Core does (a search that fixes it also
     * tries such layouts), and space_layout_check has its rules. */
    if (!c) return 0;
    int host_side = l->opt_offload > 0 || any_act;
    if (host_side && !(c->gpu->host_link_bw_bytes_per_s > 0)
        && !(c->sys->host_link_bw_bytes_per_s > 0))
        SAY("offloading to the host needs the GPU's host link: hwdb has no "
            "host_link_gb_per_s for %s",
            c->gpu->name);
    if (host_side && !(c->sys->host_mem_bw_bytes_per_s > 0))
        SAY("offloading to the host needs the host's memory bandwidth: hwdb "
            "has no host.memory_bw_gb_per_s for %s",
            c->sys->name);
    if (host_side && mem && c->sys->host_mem_bytes > 0) {
        double node = mem->host * (double)c->sys->gpus_per_node;
        if (node > c->sys->host_mem_bytes)
            SAY("the host memory: %.1f GiB offloaded per GPU, %.0f GiB per "
                "node of %d GPUs, more than %s's %.0f GiB",
                mem->host / 1073741824.0, node / 1073741824.0,
                c->sys->gpus_per_node, c->sys->name,
                c->sys->host_mem_bytes / 1073741824.0);
    }
    return 0;
}
