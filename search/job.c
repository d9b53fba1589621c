/*
 * job.c - a job's layout: the layout fields and software switches it
 * fixes (the rest SEARCH_UNSET, for the search), and the checks of what
 * it asks for that need the model (MoE sizes, recomputation, memory
 * savers, Megatron-Core's mechanisms), each refusing with the option's
 * name, its value and the range, as Megatron-LM's start-up does.
 */
#include "job.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "search.h"

void search_job_software(const search_job *j, space_layout *l)
{
    space_framework_software((space_framework)j->framework, l);
    unsigned set = j->sw_set;
    if (set & SEARCH_SW_FLASH) l->flash = j->attn_backend;
    if (set & SEARCH_SW_DP) l->no_dp_overlap = j->no_overlap;
    if (set & SEARCH_SW_TP) l->tp_overlap = j->tp_overlap;
    if (set & SEARCH_SW_CP) l->cp_comm = j->cp_comm;
    if (set & SEARCH_SW_SCATTER) l->pp_scatter_gather = j->pp_scatter_gather;
    if (set & SEARCH_SW_EAGER) l->eager = j->eager;
    if (set & SEARCH_SW_PP) l->no_pp_overlap = j->no_pp_overlap;
    if (set & SEARCH_SW_FP8) l->fp8_recipe = j->fp8_recipe;
    l->fp8_params = j->fp8_params;
    l->fp8_attention = j->fp8_attention;
    l->ce_fusion = j->ce_fusion && l->framework == SPACE_FW_MEGATRON_CORE;
    l->n_docs = j->n_docs;
    for (int i = 0; i < j->n_docs; i++)
        l->doc_len[i] = j->doc_len[i], l->doc_share[i] = j->doc_share[i];
    if (set & SEARCH_SW_GRAD) l->grad_bytes = j->grad_bytes;
    if (set & SEARCH_SW_ALLOC) l->alloc_expandable = j->alloc_expandable;
    l->recompute_method = j->recompute_method;
    l->recompute_layers = j->recompute_layers;
    l->recompute_modules = j->recompute_modules;
    l->moe_dispatcher = j->moe_dispatcher;
    l->moe_imbalance = j->moe_imbalance;
    l->moe_comm_overlap = j->moe_comm_overlap;
    l->pp_schedule = j->pp_schedule;
    l->moe_router_pad = j->moe_router_pad;
    l->moe_flex_backend = j->moe_flex_backend;
    l->fp8_act_cache = j->fp8_act_cache;
    /* memory savers and micro-batch groups (issue 28) */
    l->pa_optimizer = j->pa_optimizer;
    l->main_grads_dtype = j->main_grads_dtype;
    l->main_params_dtype = j->main_params_dtype;
    l->exp_avg_dtype = j->exp_avg_dtype;
    l->exp_avg_sq_dtype = j->exp_avg_sq_dtype;
    l->opt_offload = j->opt_offload ? (j->opt_offload_fraction > 0
                                           ? j->opt_offload_fraction
                                           : 1)
                                    : 0;
    l->opt_offload_overlap = j->opt_offload && j->opt_offload_overlap;
    l->act_offload_layers = j->act_offload_layers;
    l->offload_modules = j->fine_grained ? j->offload_modules : 0;
    l->offload_fraction = j->fine_grained && j->offload_fraction > 0
                              ? j->offload_fraction
                              : 0;
    l->mb_group = j->mb_group;
    if (set & SEARCH_SW_PERMUTE) l->moe_permute_fusion = j->moe_permute_fusion;
    if (set & SEARCH_SW_ROUTER) l->moe_router_fusion = j->moe_router_fusion;
    l->fsdp_double_buffer = j->fsdp_double_buffer;
    l->cuda_graph = j->cuda_graph;
    l->cuda_graph_modules = j->cuda_graph_modules;
    l->ce_te = j->ce_te;
}

int search_job_check_savers(const search_job *j, const space_model *m, tp_err *e)
{
    static const struct {
        const char *name;
        size_t off;
    } dtypes[] = {
        {"main-grads-dtype", offsetof(search_job, main_grads_dtype)},
        {"main-params-dtype", offsetof(search_job, main_params_dtype)},
        {"exp-avg-dtype", offsetof(search_job, exp_avg_dtype)},
        {"exp-avg-sq-dtype", offsetof(search_job, exp_avg_sq_dtype)},
    };
    int any = j->pa_optimizer || j->opt_offload || j->act_offload_layers > 0
              || j->fine_grained;
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) {
        int d;
        memcpy(&d, (const char *)j + dtypes[i].off, sizeof d);
        if (d != SPACE_OPT_FP32 && !j->pa_optimizer)
            return tp_errf(e, TP_EUSAGE,
                           "--%s %s needs --use-precision-aware-optimizer "
                           "(Megatron-Core's OptimizerConfig: \"%s can only "
                           "be fp32 when not using precision-aware "
                           "optimizer\")",
                           dtypes[i].name, space_opt_dtype_name(d),
                           i == 0   ? "main_grads_dtype"
                           : i == 1 ? "main_params_dtype"
                           : i == 2 ? "exp_avg_dtype"
                                    : "exp_avg_sq_dtype");
    }
    if (j->opt_offload && !j->pa_optimizer)
        return tp_errf(e, TP_EUSAGE,
                       "--optimizer-cpu-offload needs "
                       "--use-precision-aware-optimizer (Megatron-LM "
                       "validate_args: \"The optimizer cpu offload must be "
                       "used in conjunction with "
                       "`--use-precision-aware-optimizer`\")");
    if ((j->opt_offload_fraction > 0 || j->opt_offload_overlap)
        && !j->opt_offload)
        return tp_errf(e, TP_EUSAGE,
                       "--%s applies to --optimizer-cpu-offload",
                       j->opt_offload_fraction > 0
                           ? "optimizer-offload-fraction"
                           : "overlap-cpu-optimizer-d2h-h2d");
    if (j->pa_optimizer && j->zero >= 0 && j->zero != SPACE_ZERO_1)
        return tp_errf(e, TP_EUSAGE,
                       "--use-precision-aware-optimizer only supported with "
                       "distributed optimizer (Megatron-Core "
                       "get_megatron_optimizer); found ZeRO %d",
                       j->zero);
    if (j->main_grads_dtype == SPACE_OPT_BF16 && (j->sw_set & SEARCH_SW_GRAD)
        && j->grad_bytes == 4)
        return tp_errf(e, TP_EUSAGE,
                       "--main-grads-dtype can only be fp32 when "
                       "--accumulate-allreduce-grads-in-fp32 is set "
                       "(Megatron-LM validate_args)");
    if (j->opt_offload
        && (j->exp_avg_dtype || j->exp_avg_sq_dtype || j->main_params_dtype))
        return tp_errf(e, TP_EUSAGE,
                       "--exp-avg-dtype, --exp-avg-sq-dtype and "
                       "--main-params-dtype have no effect under "
                       "--optimizer-cpu-offload (HybridDeviceOptimizer "
                       "builds its Adams without them): leave them fp32");
    if (j->offload_modules && !j->fine_grained)
        return tp_errf(e, TP_EUSAGE,
                       "--offload-modules applies to "
                       "--fine-grained-activation-offloading");
    if (j->offload_fraction > 0 && !j->fine_grained)
        return tp_errf(e, TP_EUSAGE,
                       "--activation-offload-fraction applies to "
                       "--fine-grained-activation-offloading");
    if (j->fine_grained && !j->offload_modules)
        return tp_errf(e, TP_EUSAGE,
                       "--fine-grained-activation-offloading needs "
                       "--offload-modules (Megatron-Core's TransformerConfig "
                       "asserts a non-empty list)");
    if (j->fine_grained && j->act_offload_layers > 0)
        return tp_errf(e, TP_EUSAGE,
                       "fine_grained_activation_offloading cannot be enabled "
                       "with cpu_offloading (Megatron-Core "
                       "TransformerConfig): --fine-grained-activation-"
                       "offloading and --cpu-offloading-num-layers");
    if (j->act_offload_layers > 0) {
        if (j->act_offload_layers >= m->num_layers)
            return tp_errf(e, TP_EUSAGE,
                           "--cpu-offloading-num-layers %lld: CPU offloading "
                           "can be done only for layers less than %lld "
                           "(Megatron-Core TransformerConfig); expected 1 to "
                           "%lld",
                           (long long)j->act_offload_layers,
                           (long long)m->num_layers,
                           (long long)m->num_layers - 1);
        if (j->pp > 1)
            return tp_errf(e, TP_EUSAGE,
                           "--cpu-offloading-num-layers with "
                           "--pipeline-model-parallel-size %lld: Currently "
                           "there is no support for Pipeline parallelism with "
                           "CPU offloading (Megatron-Core TransformerConfig)",
                           (long long)j->pp);
        if (j->recompute > SPACE_RECOMPUTE_NONE)
            return tp_errf(e, TP_EUSAGE,
                           "--cpu-offloading-num-layers with "
                           "--recompute-granularity %s: CPU offloading does "
                           "not work when activation recomputation is enabled "
                           "(Megatron-Core TransformerConfig)",
                           space_recompute_names[j->recompute]);
    }
    if (j->fine_grained) {
        char why[200];
        space_layout l;
        memset(&l, 0, sizeof l);
        l.framework = SPACE_FW_MEGATRON_CORE;
        l.tp = l.pp = l.cp = l.dp = l.vpp = 1;
        l.offload_modules = j->offload_modules;
        l.recompute = j->recompute > 0 ? (space_recompute)j->recompute
                                       : SPACE_RECOMPUTE_NONE;
        l.recompute_modules = j->recompute_modules;
        if (est_saver_check(NULL, m, &l, NULL, why, sizeof why))
            return tp_errf(e, TP_EUSAGE, "--offload-modules: %s", why);
    }
    if (j->mb_group > 0 && j->vstages == 1 && j->vpp_layers <= 0)
        return tp_errf(e, TP_EUSAGE,
                       "--microbatch-group-size-per-virtual-pipeline-stage "
                       "applies to the interleaved schedule; found one "
                       "virtual stage per pipeline rank");
    if (any && j->framework != SPACE_FW_MEGATRON_CORE)
        return tp_errf(e, TP_EUSAGE,
                       "the precision-aware optimizer, optimizer offload and "
                       "activation offloading are Megatron-Core's; not with "
                       "--framework %s",
                       space_framework_names[j->framework]);
    return TP_OK;
}

int search_job_check_mech(const search_job *j, const space_model *m, tp_err *e)
{
    int mcore = j->framework == SPACE_FW_MEGATRON_CORE;
    const char *fw = space_framework_names[j->framework];
    if ((j->sw_set & SEARCH_SW_PERMUTE) && m->num_experts <= 0
        && !j->from_launch)
        return tp_errf(e, TP_EUSAGE,
                       "--%smoe-permute-fusion: %s is dense (no tokens to "
                       "permute to experts)",
                       j->moe_permute_fusion ? "" : "no-", m->name);
    if ((j->sw_set & SEARCH_SW_ROUTER) && m->num_experts <= 0 && !j->from_launch)
        return tp_errf(e, TP_EUSAGE,
                       "--%smoe-router-fusion: %s is dense (no router)",
                       j->moe_router_fusion ? "" : "no-", m->name);
    if ((j->sw_set & SEARCH_SW_ROUTER) && j->moe_router_fusion && !mcore)
        return tp_errf(e, TP_EUSAGE,
                       "--moe-router-fusion: Megatron-Core's (with Transformer "
                       "Engine); the framework is %s", fw);
    /* DeepSeek-V3's activation storage is modelled over Transformer
     * Engine's fp8 under Megatron-Core (estimator/mem_act.c) */
    if (j->fp8_act_cache != SPACE_FP8_ACT_TE
        && (!mcore || j->precision != HW_FP8))
        return tp_errf(e, TP_EUSAGE,
                       "--fp8-activation-cache %s: what an fp8 run keeps "
                       "for the backward; expected --precision fp8 (or "
                       "mxfp8) and --framework megatron-core, found %s and "
                       "%s",
                       space_fp8_act_cache_names[j->fp8_act_cache],
                       j->precision >= 0 ? hw_dtype_names[j->precision]
                                         : "bf16 (the default)",
                       fw);
    /* Transformer Engine's FP8 dot-product attention runs inside its fp8
     * autocast (DotProductAttention fp8_dpa; Megatron-Core passes
     * TransformerConfig.fp8_dot_product_attention) */
    if (j->fp8_attention
        && (!mcore || (j->precision != HW_FP8 && j->precision != HW_FP4)))
        return tp_errf(e, TP_EUSAGE,
                       "--fp8-dot-product-attention: Transformer Engine's fp8 "
                       "attention under Megatron-Core; expected --precision "
                       "fp8, mxfp8 or nvfp4 and --framework megatron-core, "
                       "found %s and %s",
                       j->precision >= 0 ? hw_dtype_names[j->precision]
                                         : "bf16 (the default)",
                       fw);
    if (j->cuda_graph != SPACE_CG_NONE && !mcore)
        return tp_errf(e, TP_EUSAGE,
                       "--cuda-graph-impl %s: Megatron-Core's CUDA graphs; "
                       "expected --framework megatron-core, found %s",
                       space_cuda_graph_names[j->cuda_graph], fw);
    if (j->fsdp_double_buffer && !mcore)
        return tp_errf(e, TP_EUSAGE,
                       "--fsdp-double-buffer: Megatron-FSDP's (Megatron-"
                       "Core); expected --framework megatron-core, found %s",
                       fw);
    if (j->fsdp_double_buffer && j->zero >= 0 && j->zero < SPACE_ZERO_2)
        return tp_errf(e, TP_EUSAGE,
                       "--fsdp-double-buffer: Megatron-FSDP's buffers, with "
                       "--zero 2 or 3 (found %d)", j->zero);
    if (j->cuda_graph_scope_set
        && (j->cuda_graph == SPACE_CG_NONE
            || j->cuda_graph == SPACE_CG_FULL_ITERATION))
        /* validate_args: the modules must be empty with full_iteration
         * and have no effect without graphs (arguments.py,
         * NVIDIA/Megatron-LM@d98e8a64ddf3) */
        return tp_errf(e, TP_EUSAGE,
                       "--cuda-graph-scope: the modules of per-layer graphs; "
                       "expected --cuda-graph-impl local or "
                       "transformer_engine, found %s",
                       space_cuda_graph_names[j->cuda_graph]);
    unsigned moe_bits = SPACE_CGM_MOE | SPACE_CGM_MOE_ROUTER
                        | SPACE_CGM_MOE_PREPROCESS;
    if ((j->cuda_graph_modules & moe_bits) && m->num_experts <= 0)
        return tp_errf(e, TP_EUSAGE,
                       "--cuda-graph-scope: moe, moe_router and "
                       "moe_preprocess are MoE layers' modules; %s is dense",
                       m->name);
    if ((j->cuda_graph_modules & SPACE_CGM_MOE_PREPROCESS)
        && !(j->cuda_graph_modules & SPACE_CGM_MOE_ROUTER))
        return tp_errf(e, TP_EUSAGE,
                       "--cuda-graph-scope: moe_preprocess needs moe_router "
                       "(TransformerConfig.cuda_graph_modules)");
    if ((j->cuda_graph_modules & SPACE_CGM_MOE)
        && (j->cuda_graph_modules & SPACE_CGM_MOE_ROUTER))
        return tp_errf(e, TP_EUSAGE,
                       "--cuda-graph-scope: moe (the whole MoE layer) and "
                       "moe_router (its router) exclude each other");
    return TP_OK;
}

int search_job_check_moe(const search_job *j, const space_model *m, tp_err *e)
{
    if (m->num_experts <= 0) {
        if (j->ep > 1 || j->etp > 0)
            return tp_errf(e, TP_EUSAGE,
                           "--%s %lld: %s is dense; expert parallelism needs "
                           "a mixture of experts (Megatron-LM validate_args)",
                           j->ep > 1 ? "ep" : "etp",
                           (long long)(j->ep > 1 ? j->ep : j->etp), m->name);
        if (j->moe_imbalance > 0)
            return tp_errf(e, TP_EUSAGE,
                           "--moe-imbalance %g: %s is dense (no experts to "
                           "route to)", j->moe_imbalance, m->name);
        if (j->moe_comm_overlap != SPACE_MOE_OVERLAP_NONE)
            return tp_errf(e, TP_EUSAGE,
                           "--moe-comm-overlap %s: %s is dense (no expert "
                           "dispatch to overlap); expected none",
                           space_moe_overlap_names[j->moe_comm_overlap],
                           m->name);
        if (j->moe_router_pad)
            return tp_errf(e, TP_EUSAGE,
                           "--moe-router-padding: %s is dense (no routing "
                           "map to pad)", m->name);
        if (j->moe_flex_backend != SPACE_MOE_FLEX_DEEPEP)
            return tp_errf(e, TP_EUSAGE,
                           "--moe-flex-backend %s: %s is dense (no expert "
                           "dispatch)",
                           space_moe_flex_backend_names[j->moe_flex_backend],
                           m->name);
        return TP_OK;
    }
    if (j->moe_flex_backend != SPACE_MOE_FLEX_DEEPEP
        && j->moe_dispatcher != SPACE_MOE_FLEX)
        return tp_errf(e, TP_EUSAGE,
                       "--moe-flex-backend %s: a backend of the flex "
                       "dispatcher; expected --moe-dispatcher flex, found %s",
                       space_moe_flex_backend_names[j->moe_flex_backend],
                       space_moe_dispatcher_names[j->moe_dispatcher]);
    if (j->ep > 0 && m->num_experts % j->ep)
        return tp_errf(e, TP_EUSAGE,
                       "--ep %lld: expected a divisor of %s's %lld experts",
                       (long long)j->ep, m->name, (long long)m->num_experts);
    /* Each token goes to top_k distinct experts, so one expert receives
     * at most every token: E / k times the mean. */
    double hi = m->top_k > 0 ? (double)m->num_experts / (double)m->top_k : 1;
    if (j->moe_imbalance > hi)
        return tp_errf(e, TP_EUSAGE,
                       "--moe-imbalance %g: expected 1 to %g for %s (an "
                       "expert receives at most every token: %lld experts / "
                       "top-%lld times the mean)",
                       j->moe_imbalance, hi, m->name,
                       (long long)m->num_experts, (long long)m->top_k);
    return TP_OK;
}

int search_job_check_docs(const search_job *j, tp_err *e)
{
    for (int i = 0; i < j->n_docs; i++)
        if (j->seq_length > 0 && j->doc_len[i] > j->seq_length)
            return tp_errf(e, TP_EUSAGE,
                           "--doc-length %lld: a document longer than the "
                           "packed sequence (--seq-length %lld); expected 1 "
                           "to %lld",
                           (long long)j->doc_len[i], (long long)j->seq_length,
                           (long long)j->seq_length);
    return TP_OK;
}

int search_job_check_recompute(const search_job *j, const space_model *m, tp_err *e)
{
    int method = (j->sw_set & SEARCH_SW_RC_METHOD) != 0;
    if ((method || j->recompute_layers > 0) && j->recompute >= 0
        && j->recompute != SPACE_RECOMPUTE_FULL)
        return tp_errf(e, TP_EUSAGE,
                       "--%s applies to --recompute-granularity full, not %s",
                       method ? "recompute-method" : "recompute-num-layers",
                       space_recompute_names[j->recompute]);
    /* Megatron-Core asks for N whenever the granularity is full
     * (TransformerConfig.__post_init__); uniform groups default to one
     * layer here, as Megatron-LM 2021's --checkpoint-num-layers did. */
    if (method && j->recompute_method == SPACE_RECOMPUTE_BLOCK
        && j->recompute_layers <= 0)
        return tp_errf(e, TP_EUSAGE,
                       "--recompute-method block needs --recompute-num-layers "
                       "N (the layers recomputed of each model chunk, 1 to "
                       "%lld)",
                       (long long)m->num_layers);
    if (j->recompute_layers > m->num_layers)
        return tp_errf(e, TP_EUSAGE,
                       "--recompute-num-layers %lld: expected 1 to %lld (the "
                       "layers of %s)",
                       (long long)j->recompute_layers,
                       (long long)m->num_layers, m->name);
    /* Megatron-Core reads recompute_modules with the selective
     * granularity only (TransformerConfig.__post_init__). */
    if (j->recompute_modules) {
        char names[160];
        space_rc_modules_str(j->recompute_modules, ",", names, sizeof names);
        if (j->recompute >= 0 && j->recompute != SPACE_RECOMPUTE_SELECTIVE)
            return tp_errf(e, TP_EUSAGE,
                           "--recompute-modules %s applies to "
                           "--recompute-granularity selective, not %s",
                           names, space_recompute_names[j->recompute]);
        const char *bad = space_rc_modules_misfit(m, j->recompute_modules);
        if (bad)
            return tp_errf(e, TP_EUSAGE,
                           "--recompute-modules %s: %s has no module '%s' "
                           "(moe, moe_act: experts; shared_experts: shared "
                           "experts; mla_up_proj: MLA; layernorm: a norm of "
                           "its own, in MoE or MLA layers)",
                           names, m->name, bad);
    }
    return TP_OK;
}

int search_job_zero_stage(const search_job *j)
{
    return j->zero >= 0 ? j->zero
                        : space_framework_zero((space_framework)j->framework);
}

int search_job_split(const search_job *j, space_layout *l, tp_err *e)
{
    l->pp_account = j->split_set ? j->pp_account : SEARCH_UNSET;
    l->pp_first = j->pp_first;
    l->pp_last = j->pp_last;
    l->pp_layout = j->pp_layout;
    if (!j->pp_layout) return TP_OK;
    /* a layout string gives VPP: its stages over PP */
    int n = j->pp_layout->n;
    if (l->pp > 0 && n % l->pp == 0 && l->vpp == SEARCH_UNSET)
        l->vpp = n / l->pp;
    if (l->pp > 0 && l->vpp > 0 && (n % l->pp || n / l->pp != l->vpp))
        return tp_errf(e, TP_EUSAGE,
                       "--pipeline-model-parallel-layout: %d stages are not "
                       "PP %lld x VPP %lld (Megatron-LM validate_args, "
                       "Megatron-Core transformer_config.py)",
                       n, (long long)l->pp, (long long)l->vpp);
    return TP_OK;
}

void search_job_init(search_job *j)
{
    memset(j, 0, sizeof *j);
    j->tp = 1;
    j->sp = j->recompute = j->zero = j->precision = -1;
    j->attn_dropout = j->hidden_dropout = -1;
    j->offload_fraction = -1;
}

int search_job_model(const search_job *j, const space_model *given,
                     space_model *m, tp_err *e)
{
    int rc = TP_OK;
    if (given) *m = *given;
    else rc = space_model_resolve(j->model, m, e);
    if (rc) return rc;
    if (j->attn_dropout >= 0) m->attn_dropout = j->attn_dropout;
    if (j->hidden_dropout >= 0) m->hidden_dropout = j->hidden_dropout;
    return TP_OK;
}
int search_job_layout(const search_job *j, const space_model *m,
                      space_layout *l, tp_err *e)
{
    memset(l, 0, sizeof *l);
    l->tp = j->tp_set ? j->tp : SEARCH_UNSET;
    l->pp = j->pp > 0 ? j->pp : SEARCH_UNSET;
    l->cp = j->cp > 0 ? j->cp : SEARCH_UNSET;
    l->dp = SEARCH_UNSET;
    l->mbs = j->mbs > 0 ? j->mbs : SEARCH_UNSET;
    l->gbs = j->gbs;
    l->seq = j->seq_length;
    l->sp = j->sp;
    l->recompute = (space_recompute)j->recompute;
    l->zero = (space_zero)search_job_zero_stage(j);
    l->dtype = j->precision >= 0 ? j->precision : HW_BF16;
    int rc = search_job_check_recompute(j, m, e);
    if (!rc) rc = search_job_check_docs(j, e);
    if (!rc) rc = search_job_check_moe(j, m, e);
    if (!rc) rc = search_job_check_savers(j, m, e);
    if (!rc) rc = search_job_check_mech(j, m, e);
    if (rc) return rc;
    search_job_software(j, l);
    /* MoE: EP and expert TP searched where unset; dense: none (0). */
    int moe = m->num_experts > 0;
    l->ep = j->ep > 0 ? j->ep : moe ? SEARCH_UNSET : 0;
    l->etp = j->etp > 0 ? j->etp : moe ? SEARCH_UNSET : 0;
    l->vpp = j->vstages > 0 ? j->vstages : SEARCH_UNSET;
    /* The pipeline split: the options', else searched (pp_account
     * SEARCH_UNSET: search_complete tries the splits). */
    rc = search_job_split(j, l, e);
    if (rc) return rc;
    if (j->vpp_layers > 0) {
        if (l->pp == SEARCH_UNSET)
            return tp_errf(e, TP_EUSAGE,
                           "--num-layers-per-virtual-pipeline-stage needs "
                           "--pipeline-model-parallel-size");
        /* validate_args: the layers with what the split accounts for, over
         * PP, then over the layers per virtual stage; refused with the
         * uneven first and last stages */
        if (j->pp_first > 0 || j->pp_last > 0 || j->pp_layout)
            return tp_errf(e, TP_EUSAGE,
                           "--num-layers-per-virtual-pipeline-stage with %s: "
                           "Megatron-LM asks for "
                           "--num-virtual-stages-per-pipeline-rank there "
                           "(validate_args)",
                           j->pp_layout ? "--pipeline-model-parallel-layout"
                                        : "--decoder-first/last-pipeline-"
                                          "num-layers");
        int64_t slots = m->num_layers + space_split_accounted(l);
        int64_t per_stage = slots / l->pp;
        if (slots % l->pp || per_stage % j->vpp_layers)
            return tp_errf(e, TP_EUSAGE,
                           "--num-layers-per-virtual-pipeline-stage %lld: "
                           "the %lld layers per pipeline stage (%lld layers%s "
                           "/ PP %lld) are not a multiple of it",
                           (long long)j->vpp_layers, (long long)per_stage,
                           (long long)slots,
                           space_split_accounted(l)
                               ? " with the embedding or loss counted"
                               : "",
                           (long long)l->pp);
        l->vpp = per_stage / j->vpp_layers;
    }
    if (l->seq <= 0)
        return tp_errf(e, TP_EUSAGE, "estimate needs --seq-length");
    if (l->gbs <= 0)
        return tp_errf(e, TP_EUSAGE, "estimate needs --global-batch-size");
    return TP_OK;
}
