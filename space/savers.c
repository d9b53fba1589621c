/*
 * savers.c - the settings Megatron-Core users turn on to make a layout
 * fit, as space_layout fields: their names, parsers and tags. What each
 * costs in memory and time is the estimator's (estimator/mem.c,
 * estimator/offload.c); what Megatron-Core refuses is est_saver_check.
 *
 * The settings, as NVIDIA/Megatron-LM@d98e8a64ddf3 runs them:
 *   --use-precision-aware-optimizer with --main-grads-dtype,
 *     --main-params-dtype, --exp-avg-dtype, --exp-avg-sq-dtype
 *     (megatron/training/arguments.py; megatron/core/optimizer/
 *     __init__.py hands the dtypes to Transformer Engine's FusedAdam,
 *     transformer_engine/pytorch/optimizers/fused_adam.py);
 *   --optimizer-cpu-offload, --optimizer-offload-fraction,
 *     --overlap-cpu-optimizer-d2h-h2d (megatron/core/optimizer/
 *     cpu_offloading/hybrid_optimizer.py, HybridDeviceOptimizer);
 *   --cpu-offloading-num-layers (Transformer Engine's
 *     get_cpu_offload_context, transformer_engine/pytorch/cpu_offload.py);
 *   --fine-grained-activation-offloading with --offload-modules and
 *     --activation-offload-fraction (megatron/core/pipeline_parallel/
 *     fine_grained_activation_offload.py);
 *   --microbatch-group-size-per-virtual-pipeline-stage (megatron/core/
 *     pipeline_parallel/schedules.py).
 * Not here: Megatron-FSDP's own dtype switches, the Muon and Lion
 * optimizers, CUDA-graph variants of the offloads.
 */
#include "hw.h"
#include "space.h"

#include <stdio.h>
#include <string.h>

const char *const space_opt_dtype_names[SPACE_OPT_DTYPE_COUNT] = {
    [SPACE_OPT_FP32] = "fp32",
    [SPACE_OPT_BF16] = "bf16",
    [SPACE_OPT_FP16] = "fp16",
    [SPACE_OPT_FP8] = "fp8",
};
_Static_assert(sizeof space_opt_dtype_names / sizeof space_opt_dtype_names[0]
                   == SPACE_OPT_DTYPE_COUNT,
               "space_opt_dtype_names names every dtype");

static const double opt_dtype_bytes[SPACE_OPT_DTYPE_COUNT] = {
    [SPACE_OPT_FP32] = 4,
    [SPACE_OPT_BF16] = 2,
    [SPACE_OPT_FP16] = 2,
    [SPACE_OPT_FP8] = 1,
};
_Static_assert(sizeof opt_dtype_bytes / sizeof opt_dtype_bytes[0]
                   == SPACE_OPT_DTYPE_COUNT,
               "opt_dtype_bytes sizes every dtype");

double space_opt_dtype_bytes(int d)
{
    return opt_dtype_bytes[(unsigned)d < SPACE_OPT_DTYPE_COUNT ? d : 0];
}

const char *space_opt_dtype_name(int d)
{
    return space_opt_dtype_names[(unsigned)d < SPACE_OPT_DTYPE_COUNT ? d : 0];
}

const char *const space_off_module_names[SPACE_OFF_COUNT] = {
    "attn_norm", "qkv_linear", "core_attn", "attn_proj",
    "mlp_norm",  "expert_fc1", "moe_act",
};
_Static_assert(sizeof space_off_module_names / sizeof space_off_module_names[0]
                   == SPACE_OFF_COUNT,
               "space_off_module_names names every module");

size_t space_off_modules_parse(const char *s, unsigned *mask)
{
    *mask = 0;
    const char *p = s;
    while (*p) {
        while (*p && strchr(" \t,[]'\"", *p)) p++;
        if (!*p) break;
        size_t n = strcspn(p, " \t,[]'\"");
        int k = -1;
        for (int b = 0; b < SPACE_OFF_COUNT; b++)
            if (strlen(space_off_module_names[b]) == n
                && strncmp(p, space_off_module_names[b], n) == 0)
                k = b;
        if (k < 0) return (size_t)(p - s) + 1;
        *mask |= 1u << k;
        p += n;
    }
    return *mask ? 0 : 1;
}

void space_off_modules_str(unsigned mask, const char *sep, char *buf,
                           size_t cap)
{
    size_t at = 0;
    if (cap) buf[0] = '\0';
    for (int b = 0; b < SPACE_OFF_COUNT && at < cap; b++)
        if (mask & (1u << b)) {
            int w = snprintf(buf + at, cap - at, "%s%s", at ? sep : "",
                             space_off_module_names[b]);
            if (w < 0) break;
            at += (size_t)w;
        }
}

int space_layout_has_saver(const space_layout *l)
{
    return l->pa_optimizer || l->opt_offload > 0 || l->act_offload_layers > 0
           || l->offload_modules;
}

int64_t space_mb_group(const space_layout *l)
{
    return l->mb_group > 0 ? l->mb_group : l->pp;
}

char *space_savers_tag(const space_layout *l, char *buf, size_t cap)
{
    size_t at = 0;
    if (cap) buf[0] = '\0';
#define PUT(...)                                                              \
    do {                                                                      \
        int w_ = at < cap ? snprintf(buf + at, cap - at, __VA_ARGS__) : 0;    \
        if (w_ > 0) at += (size_t)w_;                                         \
    } while (0)
    if (l->pa_optimizer && l->opt_offload <= 0) {
        PUT("%spa", at ? "_" : "");
        if (l->exp_avg_dtype != SPACE_OPT_FP32
            || l->exp_avg_sq_dtype != SPACE_OPT_FP32) {
            PUT("-%s", space_opt_dtype_name(l->exp_avg_dtype));
            if (l->exp_avg_sq_dtype != l->exp_avg_dtype)
                PUT("-%s", space_opt_dtype_name(l->exp_avg_sq_dtype));
        }
    }
    if (l->opt_offload >= 1)
        PUT("%soo", at ? "_" : "");
    else if (l->opt_offload > 0)
        PUT("%soo%g", at ? "_" : "", 100 * l->opt_offload);
    if (l->act_offload_layers > 0)
        PUT("%sao%lld", at ? "_" : "", (long long)l->act_offload_layers);
    if (l->offload_modules) PUT("%sfo", at ? "_" : "");
    if (l->fp8_params && l->dtype == HW_FP8) PUT("%sfp8pg", at ? "_" : "");
    if (l->mb_group > 0 && l->vpp > 1)
        PUT("%sg%lld", at ? "_" : "", (long long)l->mb_group);
#undef PUT
    if (at >= cap && cap) buf[cap - 1] = '\0';
    return buf;
}
