/*
 * runs.c - the layout of a published run (bench/runs.h).
 */
#include "runs.h"

#include <stdlib.h>
#include <string.h>

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* The index of string v among names[0..n), or -1 (v not a string, or
 * none of them). */
static int name_index(const cJSON *v, const char *const *names, int n)
{
    for (int k = 0; cJSON_IsString(v) && k < n; k++)
        if (strcmp(v->valuestring, names[k]) == 0) return k;
    return -1;
}

/* An integer layout field, or SEARCH_UNSET for null or absent. */
static int64_t field_i(const cJSON *l, const char *k)
{
    const cJSON *v = get(l, k);
    return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : SEARCH_UNSET;
}

static int has_feature(const cJSON *feat, const char *name)
{
    const cJSON *fe;
    cJSON_ArrayForEach(fe, feat)
        if (cJSON_IsString(fe) && strcmp(fe->valuestring, name) == 0) return 1;
    return 0;
}

/* The software each source's runs ran, from the sources' own descriptions
 * ("framework" in bench/data/published_runs.json); a run's
 * layout.framework, where present, says it instead. Other sources:
 * Megatron-Core. */
static const struct {
    const char *source;
    space_framework fw;
} source_framework[] = {
    /* "Megatron-LM (2021)" */
    {"narayanan2021_sc21", SPACE_FW_MEGATRON_2021},
    /* "Megatron-DeepSpeed (bigscience fork)" of 2021-22 */
    {"bigscience_bloom_tr11", SPACE_FW_MEGATRON_2021},
    {"bigscience_tr11_prequel", SPACE_FW_MEGATRON_2021},
    /* "Megatron-Core r0.8.0" */
    {"megatron_lm_readme_h100_2024", SPACE_FW_MEGATRON_CORE},
    /* NVIDIA's MLPerf Training submissions run NeMo on Megatron-Core and
     * Transformer Engine */
    {"mlperf_training", SPACE_FW_MEGATRON_CORE},
    /* "Composer + llm-foundry (PyTorch FSDP)", no torch.compile */
    {"llm_foundry_mpt_benchmarks", SPACE_FW_PYTORCH_FSDP},
    /* "torchtitan (PyTorch FSDP2/DTensor)", compiled where the run lists
     * torch.compile */
    {"torchtitan_benchmarks", SPACE_FW_TORCHTITAN},
    /* torchtitan v0.2.2, eager (Crusoe Cloud's results table), and
     * torchtitan with torch.compile (torchao's float8 tables):
     * bench/data/published_runs_added.json */
    {"crusoe_torchtitan", SPACE_FW_TORCHTITAN},
    {"torchao_float8_training", SPACE_FW_TORCHTITAN},
};

/* An expert-parallel degree k of l into *out: absent, 0 (the space_layout
 * default: ep 1, etp = tp); null, SEARCH_UNSET (not published: searched);
 * else the number, which must be a positive integer. 0, or TP_EDATA. */
static int field_moe(const cJSON *l, const char *k, const char *path, int i,
                     int64_t *out, tp_err *e)
{
    const cJSON *v = get(l, k);
    *out = !v ? 0 : cJSON_IsNull(v) ? SEARCH_UNSET : 1;
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsNumber(v))
        return tp_errf(e, TP_EDATA,
                       "%s: $.runs[%d].layout.%s: expected a positive integer "
                       "or null, found another type",
                       path, i, k);
    if (!(v->valuedouble >= 1 && v->valuedouble <= 1 << 20)
        || v->valuedouble != (double)(int64_t)v->valuedouble)
        return tp_errf(e, TP_EDATA,
                       "%s: $.runs[%d].layout.%s: expected a positive integer "
                       "(1 to 1048576) or null, found %g",
                       path, i, k, v->valuedouble);
    *out = (int64_t)v->valuedouble;
    return 0;
}

/* The expert-parallel fields of the MoE runs (bench/data/
 * moe_validation_runs.json): ep, etp, moe_dispatcher (a name of
 * space_moe_dispatcher_names; null or absent: all-to-all, the
 * space_layout default) and moe_imbalance (>= 1, the busiest expert's
 * tokens over the mean; null or absent: the estimator's default). Dense
 * runs leave them out and keep the defaults. 0, or TP_EDATA with e set. */
static int moe_fields(const cJSON *l, const char *path, int i,
                      space_layout *w, tp_err *e)
{
    if (field_moe(l, "ep", path, i, &w->ep, e)
        || field_moe(l, "etp", path, i, &w->etp, e))
        return e->status;
    const cJSON *d = get(l, "moe_dispatcher");
    if (d && !cJSON_IsNull(d)) {
        int k = name_index(d, space_moe_dispatcher_names,
                           SPACE_MOE_DISPATCHER_COUNT);
        if (k < 0)
            return tp_errf(e, TP_EDATA,
                           "%s: $.runs[%d].layout.moe_dispatcher: expected one "
                           "of alltoall, allgather, flex, found %s%s%s",
                           path, i, cJSON_IsString(d) ? "'" : "",
                           cJSON_IsString(d) ? d->valuestring : "another type",
                           cJSON_IsString(d) ? "'" : "");
        w->moe_dispatcher = k;
    }
    const cJSON *im = get(l, "moe_imbalance");
    if (cJSON_IsNumber(im)) {
        if (!(im->valuedouble >= 1))
            return tp_errf(e, TP_EDATA,
                           "%s: $.runs[%d].layout.moe_imbalance: expected a "
                           "number >= 1 (the busiest expert's tokens over the "
                           "mean), found %g",
                           path, i, im->valuedouble);
        w->moe_imbalance = im->valuedouble;
    }
    return 0;
}

int bench_layout_read(const cJSON *l, const char *src, const char *path,
                      int i, space_layout *out, tp_err *e)
{
    space_layout w;
    memset(&w, 0, sizeof w);
    w.tp = field_i(l, "tp");
    w.pp = field_i(l, "pp");
    w.cp = field_i(l, "cp");
    w.dp = field_i(l, "dp");
    w.vpp = field_i(l, "vpp");
    w.mbs = field_i(l, "micro_batch_size");
    w.gbs = field_i(l, "global_batch_size");
    w.seq = field_i(l, "seq_length");
    const cJSON *sp = get(l, "sequence_parallel");
    w.sp = cJSON_IsBool(sp) ? cJSON_IsTrue(sp) : SEARCH_UNSET;
    const cJSON *rcj = get(l, "recompute");
    w.recompute = (space_recompute)SEARCH_UNSET;
    int rk = name_index(rcj, space_recompute_names, SPACE_RECOMPUTE_COUNT);
    if (rk >= 0) w.recompute = (space_recompute)rk;
    const cJSON *rv = get(l, "recompute_variant");
    if (cJSON_IsString(rv) && strcmp(rv->valuestring, "torchtitan-op-sac") == 0)
        w.recompute = SPACE_RECOMPUTE_SELECTIVE_OP;
    static const char rc_pre[] = "megatron-recompute-modules:";
    if (cJSON_IsString(rv)
        && strncmp(rv->valuestring, rc_pre, sizeof rc_pre - 1) == 0) {
        if (space_rc_modules_parse(rv->valuestring + sizeof rc_pre - 1,
                                   &w.recompute_modules))
            return tp_errf(e, TP_EDATA,
                           "%s: run %d (%s): recompute_variant '%s': expected "
                           "Megatron-Core module names after "
                           "'megatron-recompute-modules: '",
                           path, i, src, rv->valuestring);
        w.recompute = SPACE_RECOMPUTE_SELECTIVE;
    }
    w.zero = (space_zero)field_i(l, "zero_stage");
    const cJSON *pr = get(l, "precision");
    int dt = cJSON_IsString(pr) ? hw_dtype_parse(pr->valuestring) : -1;
    /* "fp4": NVFP4 (Transformer Engine's NVFP4BlockScaling) */
    w.dtype = dt == HW_FP8 || dt == HW_FP16 || dt == HW_FP4 ? dt : HW_BF16;
    const cJSON *shj = get(l, "sharding");
    const char *sharding = cJSON_IsString(shj) ? shj->valuestring : "";
    /* What the source's software did, not a fit: the defaults of its
     * framework (space_framework_software), then what the run lists. */
    int fw = SPACE_FW_MEGATRON_CORE;
    for (size_t k = 0; k < sizeof source_framework / sizeof source_framework[0];
         k++)
        if (strcmp(src, source_framework[k].source) == 0)
            fw = source_framework[k].fw;
    /* Narayanan et al.'s ZeRO-3 baseline ran DeepSpeed around their
     * Megatron-LM model (section 5.3). */
    if (fw == SPACE_FW_MEGATRON_2021
        && strcmp(sharding, "deepspeed-zero3") == 0)
        fw = SPACE_FW_DEEPSPEED_2021;
    const cJSON *fwj = get(l, "framework");
    if (fwj && !cJSON_IsNull(fwj)) {
        fw = name_index(fwj, space_framework_names, SPACE_FW_COUNT);
        if (fw < 0)
            return tp_errf(e, TP_EDATA,
                           "%s: $.runs[%d].layout.framework: expected one of "
                           "megatron-core, megatron-lm-2021, torchtitan, "
                           "pytorch-fsdp, deepspeed-2021, found %s%s%s",
                           path, i, cJSON_IsString(fwj) ? "'" : "",
                           cJSON_IsString(fwj) ? fwj->valuestring
                                               : "another type",
                           cJSON_IsString(fwj) ? "'" : "");
    }
    space_framework_software((space_framework)fw, &w);
    const cJSON *feat = get(l, "features");
    int compiled = has_feature(feat, "torch.compile");
    /* Megatron-Core's overlaps of the MoE dispatch where the run lists
     * them (moe_validation_runs.json: the Model Zoo's ep-a2a-overlap is
     * --overlap-moe-expert-parallel-comm). */
    if (has_feature(feat, "ep-a2a-overlap"))
        w.moe_comm_overlap = SPACE_MOE_OVERLAP_A2A;
    else if (has_feature(feat, "moe-shared-expert-overlap"))
        w.moe_comm_overlap = SPACE_MOE_OVERLAP_SHARED;
    /* the router's padding for quantization and the flex dispatcher's
     * HybridEP backend where the run lists them (moe_validation_runs.json:
     * the Model Zoo's fp8 and mxfp8 runs, its DISPATCHER=hybridep runs,
     * the DeepSeek-V3 GB200 guide's final state) */
    w.moe_router_pad = has_feature(feat, "moe-router-padding");
    if (has_feature(feat, "hybridep"))
        w.moe_flex_backend = SPACE_MOE_FLEX_HYBRIDEP;
    w.fp8_params = has_feature(feat, "fp8-param-gather");
    /* NeMo's FP8_DPA (the MLPerf configs' config_common_fp8attn.sh):
     * Transformer Engine's fp8 attention, timed where hwdb measures it */
    w.fp8_attention = has_feature(feat, "fp8-attention");
    /* Megatron-Core's CUDA graphs where the run lists them: "cuda-graphs"
     * (Transformer Engine's per-layer graphs of the whole layer, unless
     * said otherwise), "cuda-graph-impl=NAME" (space_cuda_graph_names),
     * "cuda-graph-scope=a,b" (the modules; the generators write which,
     * and say in the run's assumed where the source does not). They
     * remove the captured modules' host calls (estimator/host.c). */
    if (fw == SPACE_FW_MEGATRON_CORE && has_feature(feat, "cuda-graphs")) {
        w.cuda_graph = SPACE_CG_TE;
        const cJSON *cf;
        cJSON_ArrayForEach(cf, feat) {
            if (!cJSON_IsString(cf)) continue;
            const char *v = cf->valuestring;
            if (strncmp(v, "cuda-graph-impl=", 16) == 0) {
                for (int k = 1; k < SPACE_CG_COUNT; k++)
                    if (strcmp(v + 16, space_cuda_graph_names[k]) == 0)
                        w.cuda_graph = k;
            } else if (strncmp(v, "cuda-graph-scope=", 17) == 0
                       && space_cgm_parse(v + 17, &w.cuda_graph_modules)) {
                return tp_errf(e, TP_EDATA,
                               "%s: $.runs[%d].layout.features: '%s': not a "
                               "list of CUDA graph modules (attn, mlp, moe, "
                               "moe_router, moe_preprocess)",
                               path, i, v);
            }
        }
        if (w.cuda_graph == SPACE_CG_FULL_ITERATION) w.cuda_graph_modules = 0;
    }
    /* the interleaved schedule's micro-batch groups where the run lists
     * them (memory_runs.json: Megatron-LM's CI tunable_overlap cases,
     * --microbatch-group-size-per-virtual-pipeline-stage) */
    const cJSON *mg;
    cJSON_ArrayForEach(mg, feat)
        if (cJSON_IsString(mg)
            && strncmp(mg->valuestring, "microbatch-group-size-per-vp-stage=",
                       35) == 0)
            w.mb_group = strtoll(mg->valuestring + 35, NULL, 10);
    /* llm-foundry's attention is the one its run lists (flash, triton or
     * PyTorch's). */
    if (strcmp(src, "llm_foundry_mpt_benchmarks") == 0)
        w.flash = has_feature(feat, "flash-attention");
    /* Megatron-LM's --attention-backend where the run names it (memory
     * runs: the unfused softmax keeps the scores, the fused kernels do
     * not). */
    static const struct {
        const char *feature;
        int attn;
    } backends[] = {
        {"attention-backend=unfused", SPACE_ATTN_UNFUSED},
        {"attention-backend=local", SPACE_ATTN_UNFUSED},
        {"attention-backend=flash", SPACE_ATTN_FLASH},
        {"attention-backend=fused", SPACE_ATTN_CUDNN},
        {"attention-backend=auto", SPACE_ATTN_AUTO},
    };
    const cJSON *fe;
    cJSON_ArrayForEach(fe, feat)
        for (size_t k = 0; k < sizeof backends / sizeof backends[0]; k++)
            if (cJSON_IsString(fe)
                && strncmp(fe->valuestring, backends[k].feature,
                           strlen(backends[k].feature)) == 0)
                w.flash = backends[k].attn;
    /* TP: --tp-comm-overlap or AsyncTP where the run lists them. The
     * 2021 default (no TP overlap) is assumed from Megatron-LM's history;
     * BigScience also ran with CUDA_LAUNCH_BLOCKING=1, which serialises
     * every kernel (its feature, below). */
    if (has_feature(feat, "tp-comm-overlap"))
        w.tp_overlap = SPACE_TP_OVERLAP_ALL;
    if (fw == SPACE_FW_TORCHTITAN && has_feature(feat, "async-tp"))
        w.tp_overlap = SPACE_TP_OVERLAP_ASYNC;
    /* PyTorch without torch.compile runs norms, SwiGLU and RoPE op by op,
     * and is the eager stack. */
    if (fw == SPACE_FW_TORCHTITAN || fw == SPACE_FW_PYTORCH_FSDP)
        w.eager = !compiled;
    /* Runs on PyTorch before its fused RMSNorm, and on torchtitan before
     * the embedding and the output projection became FSDP units of their
     * own, say so (space_layout.rmsnorm_composite, fsdp_root_embeddings). */
    w.rmsnorm_composite = has_feature(feat, "composite-rmsnorm");
    /* torchtitan before enable_gqa (pytorch/torchtitan@ff0829c10,
     * 2026-01-27) repeated the grouped keys and values: every torchtitan
     * run older than that, unless it says gqa-native (torchtitan v0.2.2's,
     * our own sampler's enable_gqa configuration). */
    if (fw == SPACE_FW_TORCHTITAN)
        w.gqa_repeat_kv = !has_feature(feat, "gqa-native");
    w.fsdp_root_embeddings = has_feature(feat, "fsdp-root-embeddings");
    /* CUDA_LAUNCH_BLOCKING=1 where the run lists it (BigScience on Jean
     * Zay: estimator/host.c). */
    w.launch_blocking = has_feature(feat, "cuda-launch-blocking");
    w.ckpt_full_rerun = has_feature(feat, "checkpoint-full-rerun");
    w.loss_eager = has_feature(feat, "eager-loss");
    /* torchtitan's per-op checkpointing recomputed SDPA's cuDNN kernel,
     * which it runs first on Blackwell, from mid to late 2025
     * (space_layout.sac_attn_recompute) */
    w.sac_attn_recompute = has_feature(feat, "sac-recomputes-cudnn-attention");
    if (fw == SPACE_FW_MEGATRON_CORE
        && has_feature(feat, "defer-embedding-wgrad-compute")) {
        w.wgrad_defer = -1;
        const cJSON *wf;
        cJSON_ArrayForEach(wf, feat)
            if (cJSON_IsString(wf)
                && strncmp(wf->valuestring, "wgrad-deferral-limit=", 21) == 0
                && atoi(wf->valuestring + 21) > 0)
                w.wgrad_defer = atoi(wf->valuestring + 21);
    }
    w.ce_fusion = fw == SPACE_FW_MEGATRON_CORE
                  && has_feature(feat, "cross-entropy-loss-fusion");
    /* Transformer Engine's fused loss (--cross-entropy-fusion-impl te):
     * in place before TE v2.18, an fp32 gradient since (estimator/mem.c) */
    if (fw == SPACE_FW_MEGATRON_CORE && has_feature(feat, "te-cross-entropy"))
        w.ce_te = has_feature(feat, "te-cross-entropy-fp32")
                      ? SPACE_CE_TE_FP32
                      : SPACE_CE_TE_INPLACE;
    /* Megatron-LM's CI configs list every flag they set: the MoE
     * permutation is fused only where --moe-permute-fusion is among them
     * (Megatron-Core's default is PyTorch's); elsewhere the framework's
     * default, as trainplan's launches run it. */
    if (strcmp(src, "megatron_lm_ci") == 0
        || strcmp(src, "megatron_ci_golden") == 0) {
        w.moe_permute_fusion = has_feature(feat, "moe-permute-fusion");
        w.moe_router_fusion = has_feature(feat, "moe-router-fusion");
    }
    /* The router's fused kernels came with Megatron-Core v0.14 (2025-09,
     * Megatron-LM README's news): a run of an older version says so. */
    if (has_feature(feat, "no-moe-router-fusion")) w.moe_router_fusion = 0;
    /* Gradient reduction overlapped where listed, and in FSDP: Megatron-
     * FSDP's full sharding turns on overlap_grad_reduce and
     * overlap_param_gather itself (megatron_fsdp.py@d98e8a6, MegatronFSDP
     * __init__, "optim_grads_params"). */
    int fsdp = strncmp(sharding, "fsdp", 4) == 0
               || strcmp(sharding, "megatron-fsdp") == 0;
    w.no_dp_overlap = !(has_feature(feat, "overlap-grad-reduce") || fsdp);
    /* Megatron-LM with fp16 accumulates and all-reduces gradients in fp16
     * unless --accumulate-allreduce-grads-in-fp32 (opt-in; only bf16
     * forces it: megatron/arguments.py, 2021 to today). */
    if (strcmp(src, "narayanan2021_sc21") == 0 && w.dtype == HW_FP16)
        w.grad_bytes = 2;
    /* 16-bit gradient buffers where the run's code says so (Megatron-LM
     * --grad-reduce-in-bf16; the MLPerf NeMo 2.0 Llama 3.1 submissions'
     * grad_reduce_in_fp32=False, bench/data/make_validation_runs.py) */
    if (has_feature(feat, "grad-reduce-in-bf16")) w.grad_bytes = 2;
    /* DeepSpeed's fp16 ZeRO keeps 16-bit gradients (its bf16 optimizer,
     * BLOOM's, accumulates them in fp32 like Megatron-LM); its ZeRO-3
     * gathers module by module (space_framework_software). */
    if (strcmp(sharding, "deepspeed-zero1") == 0
        || strcmp(sharding, "deepspeed-zero3") == 0)
        w.grad_bytes = 2;
    if (strcmp(sharding, "deepspeed-zero3") == 0) w.zero3_live = 1e9;
    /* NeMo 1.x's distributed_fused_adam (Apex DistributedFusedAdam), as
     * MLPerf's GPT-3 runs it: a contiguous gradient buffer reduced in bf16
     * ("contiguous_grad_buffer: True", "grad_sync_dtype: bf16" in every
     * round's config: conf/megatron_gpt_config.yaml of v3.0,
     * conf/optim/distributed_fused_adam.yaml of v3.1 to v4.1,
     * mlcommons/training_results_v3.0 to v4.1 NVIDIA/benchmarks/gpt3),
     * the optimizer stepping on the fp32 shard it reduces into (Apex
     * apex/contrib/optimizers/distributed_fused_adam.py). */
    if (strcmp(sharding, "apex-distributed-fused-adam") == 0) w.grad_bytes = 2;
    /* Megatron-Core's precision-aware optimizer (--use-precision-aware-
     * optimizer) with its moments' dtype: features
     * "precision-aware-optimizer" and "exp-avg-dtype=D" (both moments D,
     * a space_opt_dtype name). */
    if (has_feature(feat, "precision-aware-optimizer")) {
        w.pa_optimizer = 1;
        const cJSON *pf;
        cJSON_ArrayForEach(pf, feat) {
            if (!cJSON_IsString(pf)
                || strncmp(pf->valuestring, "exp-avg-dtype=", 14) != 0)
                continue;
            for (int d = 0; d < SPACE_OPT_DTYPE_COUNT; d++)
                if (strcmp(pf->valuestring + 14, space_opt_dtype_names[d]) == 0)
                    w.exp_avg_dtype = w.exp_avg_sq_dtype = d;
        }
    }
    /* What an fp8 run keeps of its activations, where its software is not
     * Transformer Engine's (feature "fp8-activation-cache=NAME", a
     * space_fp8_act_cache name: the DeepSeek-V3 report's run). */
    {
        const cJSON *pf;
        cJSON_ArrayForEach(pf, feat) {
            if (!cJSON_IsString(pf)
                || strncmp(pf->valuestring, "fp8-activation-cache=", 21) != 0)
                continue;
            for (int k = 0; k < SPACE_FP8_ACT_COUNT; k++)
                if (strcmp(pf->valuestring + 21, space_fp8_act_cache_names[k])
                    == 0)
                    w.fp8_act_cache = k;
        }
    }
    /* The fp8 recipe the run names (torchtitan's tensorwise or rowwise,
     * Transformer Engine's delayed, ...). */
    const cJSON *fr = get(l, "fp8_recipe");
    int fk = name_index(fr, space_fp8_recipe_names, SPACE_FP8_RECIPE_COUNT);
    if (fk >= 0) w.fp8_recipe = fk;
    const cJSON *ps = get(l, "pipeline_schedule");
    if (w.vpp == SEARCH_UNSET && cJSON_IsString(ps)
        && strcmp(ps->valuestring, "interleaved-1f1b") != 0)
        w.vpp = 1;
    /* The schedules beyond 1F1B (space_pp_schedule): "dualpipe" (the
     * DeepSeek-V3 report), "zero-bubble" (the DeepSeek-V2 report's
     * "zero-bubble pipeline parallelism", Qi et al.: read as ZB-H1, the
     * one of the paper's handcrafted schedules that keeps 1F1B's memory),
     * or a space_pp_schedule name. */
    if (cJSON_IsString(ps)) {
        if (strcmp(ps->valuestring, "zero-bubble") == 0)
            w.pp_schedule = SPACE_PP_ZB1P;
        for (int k = 1; k < SPACE_PP_SCHEDULE_COUNT; k++)
            if (strcmp(ps->valuestring, space_pp_schedule_names[k]) == 0)
                w.pp_schedule = k;
    }
    /* Memory runs (bench/data/memory_runs.json) say more: how full
     * recomputation grouped its layers, and where gradients were reduced
     * in fp32 or 16 bits. */
    const cJSON *rm = get(l, "recompute_method");
    int mk = name_index(rm, space_recompute_method_names,
                        SPACE_RECOMPUTE_METHOD_COUNT);
    if (mk >= 0) w.recompute_method = mk;
    int64_t rn = field_i(l, "recompute_num_layers");
    if (rn > 0) w.recompute_layers = rn;
    const cJSON *gf = get(l, "grad_reduce_fp32");
    if (cJSON_IsBool(gf)) w.grad_bytes = cJSON_IsTrue(gf) ? 4 : 2;
    /* The caching allocator's expandable segments where the run says
     * (PYTORCH_CUDA_ALLOC_CONF as its launcher set it), else its
     * framework's launcher default (space_framework_software). */
    const cJSON *xs = get(l, "expandable_segments");
    if (cJSON_IsBool(xs)) w.alloc_expandable = cJSON_IsTrue(xs);
    int rc = moe_fields(l, path, i, &w, e);
    if (rc) return rc;
    *out = w;
    return 0;
}

int bench_split_read(const cJSON *l, const space_model *m, const char *path,
                     int i, space_layout *w, space_pp_layout **store,
                     tp_err *e)
{
    *store = NULL;
    w->pp_account = SEARCH_UNSET;
    w->pp_first = w->pp_last = 0;
    w->pp_layout = NULL;
    const cJSON *ae = get(l, "account_for_embedding_in_pipeline_split"),
                *al = get(l, "account_for_loss_in_pipeline_split"),
                *lay = get(l, "pipeline_model_parallel_layout");
    int64_t f = field_i(l, "decoder_first_pipeline_num_layers"),
            la = field_i(l, "decoder_last_pipeline_num_layers");
    int given = cJSON_IsTrue(ae) || cJSON_IsTrue(al) || f > 0 || la > 0
                || cJSON_IsString(lay);
    if (given) {
        w->pp_account = (cJSON_IsTrue(ae) ? SPACE_PP_EMBED : 0)
                        | (cJSON_IsTrue(al) ? SPACE_PP_LOSS : 0);
        w->pp_first = f > 0 ? f : 0;
        w->pp_last = la > 0 ? la : 0;
        if (cJSON_IsString(lay)) {
            char why[320];
            *store = tp_xmalloc(sizeof **store);
            if (space_pp_layout_parse(lay->valuestring, *store, why,
                                      sizeof why))
                return tp_errf(e, TP_EDATA,
                               "%s: $.runs[%d].layout.pipeline_model_parallel_"
                               "layout: %s", path, i, why);
            w->pp_layout = *store;
            if (w->pp > 0 && (*store)->n % w->pp == 0
                && w->vpp == SEARCH_UNSET)
                w->vpp = (*store)->n / w->pp;
        }
        return 0;
    }
    const cJSON *st = get(l, "layers_per_stage");
    int n = cJSON_GetArraySize(st);
    if (!cJSON_IsArray(st) || n < 1 || w->pp < 1) return 0;
    int64_t *v = tp_xcalloc((size_t)n, sizeof *v);
    const cJSON *x;
    int k = 0;
    cJSON_ArrayForEach(x, st) v[k++] = cJSON_IsNumber(x) ? (int64_t)x->valuedouble : -1;
    int rc = 0;
    if (n == w->pp) {
        /* one entry a rank: the split as options that do not depend on
         * VPP (the even split; the ends one layer lighter with the
         * embedding or the loss counted; else first/last counts) */
        int64_t mid = n > 2 ? v[1] : v[0], sum = 0;
        int alike = 1;
        for (int r = 1; r < n - 1; r++) alike &= v[r] == mid;
        for (int r = 0; r < n; r++) sum += v[r];
        if (sum != m->num_layers || !alike) {
            rc = tp_errf(e, TP_EDATA,
                         "%s: $.runs[%d].layout.layers_per_stage: %lld layers "
                         "with middle ranks that differ; expected the "
                         "model's %lld, the middle ranks alike",
                         path, i, (long long)sum, (long long)m->num_layers);
        } else if (n > 1 && v[0] == mid && v[n - 1] == mid) {
            w->pp_account = 0;
        } else if (n > 2 && v[0] == mid - 1 && v[n - 1] == mid - 1) {
            w->pp_account = SPACE_PP_EMBED | SPACE_PP_LOSS;
        } else if (n > 2 && v[0] == mid - 1 && v[n - 1] == mid) {
            w->pp_account = SPACE_PP_EMBED;
        } else if (n > 2 && v[0] == mid && v[n - 1] == mid - 1) {
            w->pp_account = SPACE_PP_LOSS;
        } else {
            w->pp_account = 0;
            w->pp_first = v[0];
            w->pp_last = v[n - 1];
        }
    } else {
        /* one entry a stage (PP x VPP of them) */
        *store = tp_xmalloc(sizeof **store);
        space_layout t = *w;
        if (space_split_from_stages(m->num_layers, m->mtp_layers, w->pp, v, n,
                                    &t, *store))
            rc = tp_errf(e, TP_EDATA,
                         "%s: $.runs[%d].layout.layers_per_stage: %d stages "
                         "do not hold the model's %lld layers on PP %lld",
                         path, i, n, (long long)m->num_layers,
                         (long long)w->pp);
        else if (w->vpp != SEARCH_UNSET && w->vpp != t.vpp)
            rc = tp_errf(e, TP_EDATA,
                         "%s: $.runs[%d].layout.layers_per_stage: %d stages "
                         "are not PP %lld x VPP %lld",
                         path, i, n, (long long)w->pp, (long long)w->vpp);
        if (!rc) {
            w->vpp = t.vpp;
            w->pp_account = t.pp_account;
            w->pp_first = t.pp_first, w->pp_last = t.pp_last;
            w->pp_layout = t.pp_layout;
        }
        if (!w->pp_layout) {
            free(*store);
            *store = NULL;
        }
    }
    free(v);
    return rc;
}

void bench_split_settle(const space_model *m, space_layout *w)
{
    if (w->pp_account >= 0) return;
    for (int k = SPACE_SPLIT_EVEN; k < SPACE_SPLIT_GIVEN; k++) {
        space_layout t = *w;
        space_split s;
        space_split_kind_apply((space_split_kind)k, m->num_layers, &t);
        if (t.pp_first >= 0
            && space_split_resolve(m, &t, &s, NULL, 0) == SPACE_OK) {
            *w = t;
            return;
        }
    }
    w->pp_account = 0;
}

int bench_model_extras(const cJSON *run, const char *path, int i,
                       space_model *m, tp_err *e)
{
    const cJSON *dj = get(run, "dropout");
    if (cJSON_IsObject(dj)) {
        m->attn_dropout = cJSON_GetNumberValue(get(dj, "attention"));
        m->hidden_dropout = cJSON_GetNumberValue(get(dj, "hidden"));
    }
    const cJSON *o = get(run, "model_overrides");
    if (!o || cJSON_IsNull(o)) return 0;
    const cJSON *cf = get(o, "capacity_factor");
    if (cf && !cJSON_IsNull(cf)) {
        if (!cJSON_IsNumber(cf) || !(cf->valuedouble >= 1))
            return tp_errf(e, TP_EDATA,
                           "%s: $.runs[%d].model_overrides.capacity_factor: "
                           "expected a number >= 1 or null (dropless)",
                           path, i);
        m->capacity_factor = cf->valuedouble;
    }
    return 0;
}

const bench_opened *bench_open_system(bench_opened *cache, int *n, int max,
                                      const hw_system *y, tp_err *e)
{
    for (int i = 0; i < *n; i++)
        if (cache[i].sys == y) return &cache[i];
    if (*n == max) {
        tp_errf(e, TP_EINTERNAL, "more than %d systems", max);
        return NULL;
    }
    bench_opened *o = &cache[*n];
    memset(o, 0, sizeof *o);
    o->sys = y;
    /* Models are per GPU: reuse another system's of the same GPU. */
    for (int i = 0; i < *n; i++)
        if (cache[i].sys->gpu == y->gpu) o->ops = cache[i].ops;
    if (!o->ops) o->ops = est_models_open(y->gpu, 0, e);
    if (!o->ops) return NULL;
    o->comm = est_comm_open(y, e);
    if (!o->comm) return NULL;
    (*n)++;
    return o;
}

void bench_close_systems(bench_opened *cache, int n)
{
    for (int i = 0; i < n; i++) {
        est_comm_free(cache[i].comm);
        int shared = 0;
        for (int j = 0; j < i; j++) shared |= cache[j].ops == cache[i].ops;
        if (!shared) est_models_free(cache[i].ops);
    }
}
