/*
 * launch_torchtitan.c - torchtitan's config for a layout, and the config
 * as data; the config read back into the options the command line would
 * set is launch_torchtitan_read.c's (issue 18).
 *
 * Two versions, two forms (launch_tt_version):
 *   main  torchtitan at pytorch/torchtitan@b5bcd76c66d0 (2026-08-21), the
 *         current one: it configures in Python, a function returning a
 *         Trainer.Config, its --section.option flags frozen
 *         (torchtitan/config/README.md). We derive from the model's shipped
 *         config (torchtitan/models/llama3/config_registry.py, llama3_8b
 *         ...) and set its fields, one plain assignment a line, as the
 *         README's "Writing your own" does. Batches are counted in tokens
 *         (torchtitan/config/configs.py, TrainingConfig), async TP lives
 *         in CompileConfig, float8 is a model converter with rowwise
 *         recipes only (components/quantization/float8.py).
 *   0.2   v0.2.0 to v0.2.2: the TOML keys of torchtitan/config/job_config.py
 *         (checked against v0.2.2, pytorch/torchtitan@73a0e6979dd1; v0.2.0,
 *         @29624e37fa6d, has the same keys written here). The float8
 *         converter is "quantize.linear.float8" (float8.py,
 *         register_model_converter), async TP needs [compile]
 *         (distributed/tensor_parallel.py, maybe_enable_async_tp).
 * v0.1 (torchtitan/config_manager.py: training.compile, [float8],
 * converters = ["float8"], no per-stage module lists) is not written.
 *
 * Pipeline stages: torchtitan builds PP x stages-per-rank stages and
 * without pipeline_parallel_layers_per_stage defaults a looped schedule to
 * 2 stages per rank (distributed/pipeline_parallel.py, pipeline_llm /
 * _get_pipeline_metadata): we always say how many. An even split is
 * pipeline_parallel_layers_per_stage with no lighter end stages; any other
 * split of Megatron-Core's (space/split.c: the embedding or loss counted,
 * first/last stage counts, a layout string) is module_fqns_per_model_part,
 * the exact layers of stage s = chunk x PP + rank as torchtitan places
 * looped stages (pipeline_module_split, _get_stage_indices). Read back,
 * the module lists' (or torchtitan's own split, first_stage_less_layers
 * and last_stage_less_layers weighing the ends) give the split.
 *
 * What a version cannot express is a comment line "# NOT EXPRESSIBLE ...",
 * never a key that means something else; tests/launch/torchtitan_rules.py
 * checks the keys, tests/launch/torchtitan_e2e.sh reads every config back.
 */
#include "launch.h"
#include "launch_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw.h"

/* ---- versions and models --------------------------------------------- */

static const struct {
    const char *label;   /* the output's first line names it */
    const char *names[8]; /* what --torchtitan-version accepts */
} tt_versions[LAUNCH_TT_VERSION_COUNT] = {
    [LAUNCH_TT_MAIN] = {"torchtitan main at pytorch/torchtitan@b5bcd76c66d0 "
                     "(2026-08-21), a Python config",
                     {"main", "current", "b5bcd76", "b5bcd76c66d0"}},
    [LAUNCH_TT_V02] = {"torchtitan v0.2.0 to v0.2.2 (keys of v0.2.2, "
                    "pytorch/torchtitan@73a0e6979dd1), a TOML job config",
                    {"0.2", "v0.2", "0.2.0", "v0.2.0", "0.2.1", "v0.2.1",
                     "0.2.2", "v0.2.2"}},
};

int launch_tt_version_parse(const char *s, int *v, tp_err *e)
{
    for (int i = 0; i < LAUNCH_TT_VERSION_COUNT; i++)
        for (int k = 0; k < 8 && tt_versions[i].names[k]; k++)
            if (tp_streq_ci(s, tt_versions[i].names[k])) {
                *v = i;
                return TP_OK;
            }
    return tp_errf(e, TP_EUSAGE,
                   "--torchtitan-version: expected main (b5bcd76c66d0, "
                   "2026-08-21) or 0.2 (v0.2.0 to v0.2.2), found '%s' "
                   "(v0.1 is not written)",
                   s);
}

/* trainplan's presets torchtitan has, both versions: its Llama 3 flavors
 * are Llama 3.1's (torchtitan/models/llama3/__init__.py, llama3_configs;
 * hf_assets_path Llama-3.1-8B in config_registry.py), the same
 * architecture as Llama 3's for every count trainplan makes. The first
 * row of a flavor is the one a config reads back to. */
const struct launch_tt_model launch_tt_models[] = {
    {"llama3.1-8b", "llama3", "8B", "llama3_8b"},
    {"llama3-8b", "llama3", "8B", "llama3_8b"},
    {"llama3.1-70b", "llama3", "70B", "llama3_70b"},
    {"llama3-70b", "llama3", "70B", "llama3_70b"},
    {"llama3.1-405b", "llama3", "405B", "llama3_405b"},
};
_Static_assert(sizeof launch_tt_models / sizeof launch_tt_models[0]
                   == LAUNCH_TT_MODEL_COUNT,
               "LAUNCH_TT_MODEL_COUNT counts launch_tt_models");

/* The row of m: its preset's name and the same architecture. -1: none. */
static int tt_model_of(const space_model *m)
{
    for (int i = 0; i < LAUNCH_TT_MODEL_COUNT; i++) {
        if (!tp_streq_ci(m->name, launch_tt_models[i].preset)) continue;
        const space_model *p = space_preset_find(launch_tt_models[i].preset, NULL);
        if (p && p->num_layers == m->num_layers && p->hidden == m->hidden
            && p->heads == m->heads && p->kv_heads == m->kv_heads
            && p->ffn_hidden == m->ffn_hidden && p->vocab == m->vocab
            && m->num_experts == 0)
            return i;
    }
    return -1;
}

/* ---- the writer -------------------------------------------------------- */

/* Layers of each of the pp x vpp stages into st[] (stage = chunk x pp +
 * rank): the estimate's split (split.c), exactly. Returns 0; -1 when a
 * stage would hold no module at all (no layer, neither end); -2 for a
 * split Megatron-Core refuses (the estimate's fallback then). */
static int stage_split(const space_model *m, const space_layout *l,
                       int64_t *st)
{
    space_split sp;
    int rc = space_split_resolve(m, l, &sp, NULL, 0) == SPACE_OK ? 0 : -2;
    int64_t n = sp.pp * sp.vpp;
    for (int64_t k = 0; k < n; k++) {
        space_chunk c;
        space_split_chunk(&sp, k % sp.pp, k / sp.pp, &c);
        st[k] = c.layers;
        if (c.layers < 1 && k != 0 && k != n - 1 && !rc) rc = -1;
    }
    return rc;
}

typedef struct tt_out {
    launch_text notes; /* comment lines before the config */
    launch_text body;
    int main_;      /* the Python form */
    int ver;
} tt_out;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void not_expressible(tt_out *w, const char *fmt, ...);

static void not_expressible(tt_out *w, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    launch_text_put(&w->notes, "# NOT EXPRESSIBLE in torchtitan %s: %s\n",
                 w->main_ ? "main" : "v0.2", buf);
}

/* One key: "section.key" in TOML sections the caller opened, or
 * config.section.key in Python. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void key(tt_out *w, const char *section, const char *name,
                const char *fmt, ...);

static void key(tt_out *w, const char *section, const char *name,
                const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (w->main_)
        launch_text_put(&w->body, "    config.%s.%s = %s\n", section, name, buf);
    else
        launch_text_put(&w->body, "%s = %s\n", name, buf);
}

static void section(tt_out *w, const char *name)
{
    if (!w->main_) launch_text_put(&w->body, "\n[%s]\n", name);
}

/* Expert parallelism (issue 19): main's parallelism.expert_parallel_degree
 * (config/configs.py at b5bcd76c66d0: EP borrows ranks from FSDP and TP,
 * the experts unsplit by TP; parallel_dims.py: EP must divide dp_shard x
 * cp x tp); v0.2's also has expert_tensor_parallel_degree, 1 or TP, and
 * expert_parallel_comm_backend, "standard" (all-to-all) or "deepep"
 * (job_config.py, parallel_dims.py at 73a0e6979dd1). dp_shard: the
 * writer's data_parallel_shard_degree. */
static void write_experts(tt_out *w, const space_model *m,
                          const space_layout *l, int64_t dp_shard)
{
    if (m->num_experts <= 0) return;
    int64_t ep = space_layout_ep(l), etp = space_layout_etp(l);
    int64_t region = dp_shard * l->cp * l->tp;
    key(w, "parallelism", "expert_parallel_degree", "%lld", (long long)ep);
    if (w->main_) {
        if (etp != 1 && ep > 1)
            not_expressible(w, "expert TP %lld: main has no "
                            "expert_tensor_parallel_degree; EP borrows the "
                            "TP ranks and the experts are not split by TP "
                            "(config/configs.py)", (long long)etp);
        if (region % ep)
            not_expressible(w, "EP %lld does not divide data_parallel_shard_"
                            "degree x CP x TP = %lld (distributed/"
                            "parallel_dims.py)", (long long)ep,
                            (long long)region);
    } else {
        int ok = ep == 1 || etp == 1 || etp == l->tp;
        key(w, "parallelism", "expert_tensor_parallel_degree", "%lld",
            (long long)(ok ? etp : 1));
        if (!ok)
            not_expressible(w, "expert TP %lld: v0.2 takes 1 or TP (%lld) "
                            "(parallel_dims.py)", (long long)etp,
                            (long long)l->tp);
        if (region % (ep * (ok ? etp : 1)))
            not_expressible(w, "expert TP x EP %lld does not divide "
                            "data_parallel_shard_degree x CP x TP = %lld "
                            "(parallel_dims.py)",
                            (long long)(ep * (ok ? etp : 1)),
                            (long long)region);
        if (l->moe_dispatcher != SPACE_MOE_ALLGATHER)
            key(w, "parallelism", "expert_parallel_comm_backend", "\"%s\"",
                l->moe_dispatcher == SPACE_MOE_FLEX ? "deepep" : "standard");
    }
    if (l->moe_dispatcher == SPACE_MOE_ALLGATHER)
        not_expressible(w, "the allgather token dispatcher: torchtitan's "
                        "expert parallelism dispatches by all-to-all");
    else if (l->moe_dispatcher == SPACE_MOE_FLEX && w->main_)
        not_expressible(w, "the flex (DeepEP) dispatcher: main's config has "
                        "no expert_parallel_comm_backend");
    if (l->moe_comm_overlap == SPACE_MOE_OVERLAP_SHARED)
        not_expressible(w, "Megatron-Core's overlap of the shared experts "
                        "with the MoE dispatch: no torchtitan option");
    else if (l->moe_comm_overlap == SPACE_MOE_OVERLAP_A2A)
        not_expressible(w, "Megatron-Core's 1F1B overlap of the MoE "
                        "dispatch: no torchtitan option");
    if (l->moe_dispatcher == SPACE_MOE_FLEX
        && l->moe_flex_backend == SPACE_MOE_FLEX_HYBRIDEP)
        not_expressible(w, "the flex dispatcher's HybridEP backend: "
                        "torchtitan's backends are standard and deepep");
    if (l->moe_router_pad)
        not_expressible(w, "Megatron-Core's router padding for fp8 "
                        "(--moe-router-padding-for-quantization): no "
                        "torchtitan option");
}

static const char *py_bool(const tt_out *w, int b)
{
    return w->main_ ? (b ? "True" : "False") : (b ? "true" : "false");
}

/* PyTorch's name of l's schedule (torch/distributed/pipelining/
 * schedules.py get_schedule_class, pytorch/pytorch@00722e648b74), what
 * torchtitan's pipeline_parallel_schedule takes; DualPipe, which PyTorch
 * does not have, as 1F1B (the caller says so). */
static const char *tt_schedule_name(const space_layout *l)
{
    switch (l->pp_schedule) {
    case SPACE_PP_ZB1P: return "InterleavedZeroBubble";
    case SPACE_PP_ZBV: return "ZBVZeroBubble";
    case SPACE_PP_DUALPIPEV: return "DualPipeV";
    default: return l->vpp > 1 ? "Interleaved1F1B" : "1F1B";
    }
}

/* The stages: how many, and their modules where the split is uneven. */
static void write_stages(tt_out *w, const space_model *m,
                         const space_layout *l)
{
    int64_t n = l->pp * l->vpp;
    int64_t *st = tp_xmalloc((size_t)n * sizeof *st);
    int how = stage_split(m, l, st);
    int even = m->num_layers % n == 0;
    for (int64_t s = 1; even && s < n; s++) even = st[s] == st[0];
    if (how == -2) {
        not_expressible(w, "Megatron-Core refuses this pipeline split of %lld "
                        "layers over PP %lld x %lld virtual stages",
                        (long long)m->num_layers, (long long)l->pp,
                        (long long)l->vpp);
    } else if (how < 0) {
        not_expressible(w, "PP %lld x %lld virtual stages of %lld layers "
                        "leave a stage without a layer",
                        (long long)l->pp, (long long)l->vpp,
                        (long long)m->num_layers);
    } else if (even) {
        /* ceil((L + 0 + 0) / n-th) stages = PP x VPP (pipeline_llm) */
        key(w, "parallelism", "pipeline_parallel_layers_per_stage", "%lld",
            (long long)st[0]);
        key(w, "parallelism", "pipeline_parallel_first_stage_less_layers",
            "0");
        key(w, "parallelism", "pipeline_parallel_last_stage_less_layers",
            "0");
    } else {
        const char *out = w->main_ ? "lm_head" : "output";
        if (w->main_)
            launch_text_put(&w->body,
                         "    config.parallelism.module_fqns_per_model_part "
                         "= [\n");
        else
            launch_text_put(&w->body, "module_fqns_per_model_part = [\n");
        int64_t layer = 0;
        for (int64_t s = 0; s < n; s++) {
            launch_text_put(&w->body, "%s    [", w->main_ ? "    " : "");
            int first = 1;
            if (s == 0) {
                launch_text_put(&w->body, "\"tok_embeddings\"");
                first = 0;
            }
            for (int64_t k = 0; k < st[s]; k++, layer++) {
                launch_text_put(&w->body, "%s\"layers.%lld\"", first ? "" : ", ",
                             (long long)layer);
                first = 0;
            }
            if (s == n - 1)
                launch_text_put(&w->body, "%s\"norm\", \"%s\"",
                             first ? "" : ", ", out);
            launch_text_put(&w->body, "],\n");
        }
        launch_text_put(&w->body, "%s]\n", w->main_ ? "    " : "");
    }
    free(st);
}

void launch_torchtitan(const launch_plan *c, launch_text *b)
{
    const space_layout *l = c->layout;
    const space_model *m = c->model;
    tt_out w = {{0}, {0}, 0, 0};
    w.ver = c->torchtitan_version >= 0
                    && c->torchtitan_version < LAUNCH_TT_VERSION_COUNT
                ? c->torchtitan_version
                : LAUNCH_TT_MAIN;
    w.main_ = w.ver == LAUNCH_TT_MAIN;
    int mi = tt_model_of(m);
    int64_t dp = l->dp > 0 ? l->dp : 1;
    int shard = l->zero >= SPACE_ZERO_1;
    /* v0.2 replicates without sharding only as DDP, which it refuses
     * beside any other parallelism (models/llama3/infra/parallelize.py,
     * parallelize_llama: "DDP has not supported > 1D parallelism") */
    int ddp_refused = !w.main_ && !shard && dp > 1
                      && l->tp * l->pp * l->cp > 1;
    if (ddp_refused) shard = 1;
    int compile = !l->eager;
    int async_tp = l->tp > 1 && (l->tp_overlap == SPACE_TP_OVERLAP_ASYNC
                                 || l->tp_overlap == SPACE_TP_OVERLAP_ALL);
    int64_t micro = l->mbs > 0 ? l->gbs / (l->mbs * dp) : 0;

    if (l->framework != SPACE_FW_TORCHTITAN)
        launch_text_put(&w.notes,
                     "# trainplan estimated this layout as %s runs it, not "
                     "torchtitan; read back (trainplan estimate "
                     "--torchtitan-config) it is estimated as torchtitan runs "
                     "it\n",
                     space_framework_names[l->framework]);
    if (mi < 0) {
        char known[256] = "";
        for (int i = 0, n = 0; i < LAUNCH_TT_MODEL_COUNT; i++)
            n += snprintf(known + n, sizeof known - (size_t)n, "%s%s",
                          i ? ", " : "", launch_tt_models[i].preset);
        not_expressible(&w, "torchtitan has no model %s (trainplan's presets "
                        "it has: %s); register its architecture as a model "
                        "of your own",
                        m->name, known);
    }

    /* ---- the model ---- */
    int fp8 = l->dtype == HW_FP8;
    /* main's NVFP4 is torchao's prototype (NVFP4LinearConverter,
     * components/quantization/nvfp4.py @b5bcd76c66d0, experimental), not
     * Transformer Engine's NVFP4BlockScaling the estimate assumes; v0.2
     * has none. Not written: the config trains in bf16. */
    if (l->dtype == HW_FP4)
        not_expressible(&w, "NVFP4 as estimated (Transformer Engine's "
                        "NVFP4BlockScaling): %s; without a converter this "
                        "config trains in bf16",
                        w.main_ ? "main's NVFP4LinearConverter is torchao's "
                                  "experimental prototype"
                                : "v0.2 has no NVFP4 converter");
    const char *recipe = NULL; /* torchao's, NULL: none expressible */
    if (fp8) {
        if (l->fp8_recipe == SPACE_FP8_ROWWISE)
            recipe = "rowwise";
        else if (l->fp8_recipe == SPACE_FP8_TENSORWISE && !w.main_)
            recipe = "tensorwise";
        if (!recipe)
            not_expressible(&w, "fp8 with %s scaling: torchtitan's float8 "
                            "converter (torchao) has %s "
                            "(components/quantization/float8.py); without a "
                            "converter it trains in bf16",
                            space_fp8_recipe_names[l->fp8_recipe],
                            w.main_ ? "rowwise and rowwise_with_gw_hp only"
                                    : "tensorwise, rowwise and "
                                      "rowwise_with_gw_hp");
        if (l->fp8_lib == SPACE_FP8_LIB_TE)
            launch_text_put(&w.notes,
                         "# fp8 was estimated with Transformer Engine's "
                         "kernels; torchtitan runs torchao's Float8Linear\n");
    }
    if (w.main_) {
        if (recipe) launch_text_put(&w.body, "from torchtitan.components."
                                          "quantization import "
                                          "Float8LinearConverter\n");
        if (l->recompute == SPACE_RECOMPUTE_FULL
            || l->recompute == SPACE_RECOMPUTE_SELECTIVE_OP)
            launch_text_put(&w.body, "from torchtitan.distributed."
                                  "activation_checkpoint import %s\n",
                         l->recompute == SPACE_RECOMPUTE_FULL ? "FullAC"
                                                              : "SelectiveAC");
        if (mi >= 0)
            launch_text_put(&w.body,
                         "from torchtitan.models.%s import model_registry\n"
                         "from torchtitan.models.%s.config_registry import "
                         "%s\n",
                         launch_tt_models[mi].name, launch_tt_models[mi].name,
                         launch_tt_models[mi].recipe);
        else
            launch_text_put(&w.body, "from torchtitan.trainer import Trainer\n");
        launch_text_put(&w.body, "\n\ndef trainplan_config():\n");
        if (mi >= 0) {
            launch_text_put(&w.body, "    config = %s()\n",
                            launch_tt_models[mi].recipe);
            launch_text_put(&w.body,
                            "    config.model_spec = model_registry(\"%s\"",
                         launch_tt_models[mi].flavor);
            if (recipe)
                launch_text_put(&w.body,
                             ", converters=[Float8LinearConverter.Config("
                             "recipe_name=\"%s\", model_compile_enabled=%s)]",
                             recipe, py_bool(&w, compile));
            launch_text_put(&w.body, ")\n");
        } else {
            launch_text_put(&w.body, "    config = Trainer.Config()\n");
        }
        launch_text_put(&w.notes,
                     "# the estimate timed attention as --attention-backend "
                     "%s; torchtitan main's language models run "
                     "FlexAttention (model_registry's attn_backend "
                     "\"flex\")%s\n",
                     space_attn_names[l->flash],
                     l->pp > 1 ? "" : "; main also captures CUDA graphs, "
                                      "which the estimate does not model");
    } else {
        section(&w, "model");
        key(&w, "model", "name", "\"%s\"", mi >= 0 ? launch_tt_models[mi].name
                                                   : m->name);
        if (mi >= 0) key(&w, "model", "flavor", "\"%s\"",
                         launch_tt_models[mi].flavor);
        if (recipe)
            key(&w, "model", "converters", "[\"quantize.linear.float8\"]");
    }

    /* ---- parallelism ---- */
    section(&w, "parallelism");
    key(&w, "parallelism", "data_parallel_replicate_degree", "%lld",
        (long long)(shard ? 1 : dp));
    key(&w, "parallelism", "data_parallel_shard_degree", "%lld",
        (long long)(shard ? dp : 1));
    if (ddp_refused)
        not_expressible(&w, "DP %lld without sharding beside TP, PP or CP: "
                        "v0.2 runs that only as DDP, alone; FSDP here",
                        (long long)dp);
    else if (shard && l->zero < SPACE_ZERO_3)
        launch_text_put(&w.notes,
                     "# torchtitan shards parameters too (FSDP, ZeRO-3) "
                     "where this layout shards %s only\n",
                     l->zero == SPACE_ZERO_1 ? "optimizer states"
                                             : "gradients and optimizer "
                                               "states");
    key(&w, "parallelism", "tensor_parallel_degree", "%lld", (long long)l->tp);
    if (w.main_)
        key(&w, "parallelism", "enable_sequence_parallel", "%s",
            py_bool(&w, l->tp > 1 ? l->sp : 1));
    else if (l->tp > 1 && !l->sp)
        not_expressible(&w, "TP %lld without sequence parallelism: v0.2 "
                        "always shards the norms' activations over TP "
                        "(models/llama3/infra/parallelize.py, apply_tp)",
                        (long long)l->tp);
    if (async_tp && !compile)
        not_expressible(&w, "async TP without torch.compile: it needs "
                        "compile.enable with \"model\" in compile.components "
                        "(%s)",
                        w.main_ ? "config/configs.py, CompileConfig."
                                  "__post_init__"
                                : "distributed/tensor_parallel.py, "
                                  "maybe_enable_async_tp");
    if (!w.main_)
        key(&w, "parallelism", "enable_async_tensor_parallel", "%s",
            py_bool(&w, async_tp && compile));
    key(&w, "parallelism", "pipeline_parallel_degree", "%lld", (long long)l->pp);
    if (l->pp > 1) {
        key(&w, "parallelism", "pipeline_parallel_schedule", "\"%s\"",
            tt_schedule_name(l));
        if (l->pp_schedule == SPACE_PP_DUALPIPE)
            not_expressible(&w, "DeepSeek's DualPipe (two copies of each "
                            "stage): PyTorch has DualPipeV only "
                            "(get_schedule_class); written as 1F1B");
        write_stages(&w, m, l);
        /* main captures CUDA graphs unless told not to, and refuses them
         * with PP (trainer.py, Trainer.Config._validate_cuda_graphs) */
        if (w.main_)
            key(&w, "training", "disable_cuda_graphs", "True");
        if (w.main_)
            key(&w, "parallelism", "num_pp_microbatches", "%lld",
                (long long)micro);
        else
            key(&w, "parallelism", "pipeline_parallel_microbatch_size", "%lld",
                (long long)l->mbs);
    }
    key(&w, "parallelism", "context_parallel_degree", "%lld", (long long)l->cp);
    if (l->cp > 1) {
        if (!w.main_)
            /* PyTorch's ring passes the key/value shards on by all-to-all */
            key(&w, "parallelism", "context_parallel_rotate_method", "\"%s\"",
                l->cp_comm == SPACE_CP_ALLGATHER ? "allgather" : "alltoall");
        else if (l->cp_comm != SPACE_CP_ALLGATHER)
            not_expressible(&w, "a ring of key/value sends: main has no "
                            "context_parallel_rotate_method and all-gathers "
                            "them");
    }

    write_experts(&w, m, l, shard ? dp : 1);

    /* ---- the batch ---- */
    section(&w, "training");
    if (w.main_) {
        /* tokens: per PP micro-batch per DP rank; per step, all of them.
         * A micro-batch is one packed row of mbs x seq tokens, documents
         * cut at max_context_length (components/data/packing.py): the
         * GEMMs of mbs sequences, attention within each seq-long piece */
        key(&w, "training", "num_tokens_per_microbatch_per_dp_rank", "%lld",
            (long long)(l->mbs * l->seq));
        key(&w, "training", "num_tokens_per_train_step", "%lld",
            (long long)(l->gbs * l->seq));
        key(&w, "training", "max_context_length", "%lld", (long long)l->seq);
    } else {
        /* with PP a rank's batch is split into pipeline micro-batches in
         * one pass; without, a micro-batch is a local batch and torchtitan
         * accumulates gradients up to the global batch */
        key(&w, "training", "local_batch_size", "%lld",
            (long long)(l->pp > 1 ? micro * l->mbs : l->mbs));
        key(&w, "training", "global_batch_size", "%lld", (long long)l->gbs);
        key(&w, "training", "seq_len", "%lld", (long long)l->seq);
    }
    if (l->dtype == HW_FP16)
        not_expressible(&w, "fp16: mixed_precision_param is bfloat16 or "
                        "float32 (config/%s); it stays bfloat16",
                        w.main_ ? "configs.py" : "job_config.py");
    else
        key(&w, "training", "mixed_precision_param", "\"bfloat16\"");

    /* ---- activation checkpointing ---- */
    const char *ac = NULL; /* main: the object; v0.2: the mode */
    const char *sac = NULL;
    switch (l->recompute) {
    case SPACE_RECOMPUTE_NONE:
        ac = w.main_ ? "None" : "\"none\"";
        break;
    case SPACE_RECOMPUTE_FULL:
        if (l->recompute_method == SPACE_RECOMPUTE_BLOCK
            || l->recompute_layers > 1)
            not_expressible(&w, "Megatron-LM's --recompute-method %s "
                            "--recompute-num-layers %lld: torchtitan's full "
                            "mode checkpoints every layer on its own",
                            space_recompute_method_names[l->recompute_method],
                            (long long)l->recompute_layers);
        else
            ac = w.main_ ? "FullAC.Config()" : "\"full\"";
        break;
    case SPACE_RECOMPUTE_SELECTIVE_OP:
        ac = w.main_ ? "SelectiveAC.Config()" : "\"selective\"";
        sac = w.main_ ? NULL : "\"op\"";
        break;
    default:
        /* v0.2's mode "selective" with an integer option checkpoints
         * every n-th layer in full; neither is the attention core */
        not_expressible(&w, "Megatron-LM's selective recompute (the "
                        "attention core) has no torchtitan equivalent: its "
                        "selective modes are op-level (selective-op) and %s",
                        w.main_ ? "memory-budget" : "every n-th layer in full");
    }
    if (!ac)
        launch_text_put(&w.notes,
                     "# no activation checkpointing set: %s\n",
                     w.main_ ? "the base config's applies (llama3_8b: "
                               "SelectiveAC; llama3_70b, llama3_405b: FullAC)"
                             : "v0.2's default applies (mode \"selective\", "
                               "selective_ac_option \"2\": every second "
                               "layer checkpointed in full)");
    if (w.main_) {
        if (ac)
            launch_text_put(&w.body, "    config.activation_checkpoint = %s\n",
                         ac);
    } else if (ac) {
        section(&w, "activation_checkpoint");
        key(&w, "activation_checkpoint", "mode", "%s", ac);
        if (sac) key(&w, "activation_checkpoint", "selective_ac_option", "%s",
                     sac);
    }

    /* ---- memory savers (issue 28): Megatron-Core's; torchtitan's only
     * offload is FSDP2's CPUOffloadPolicy (training.enable_cpu_offload:
     * parameters, gradients and optimizer states on the host), another
     * mechanism, not written ---- */
    if (l->pa_optimizer && l->opt_offload <= 0)
        not_expressible(&w, "Megatron-Core's precision-aware optimizer "
                        "(moments in %s/%s): torchtitan's AdamW keeps its "
                        "states in the parameters' fp32",
                        space_opt_dtype_name(l->exp_avg_dtype),
                        space_opt_dtype_name(l->exp_avg_sq_dtype));
    if (l->opt_offload > 0)
        not_expressible(&w, "Megatron-Core's optimizer CPU offload "
                        "(HybridDeviceOptimizer, %g of the states): "
                        "torchtitan's training.enable_cpu_offload offloads "
                        "FSDP2's parameters and gradients too, not what was "
                        "estimated",
                        l->opt_offload);
    if (l->act_offload_layers > 0 || l->offload_modules)
        not_expressible(&w, "activation offloading to the host "
                        "(Transformer Engine's or Megatron-Core's): no "
                        "torchtitan option");
    if (l->mb_group > 0 && l->vpp > 1)
        not_expressible(&w, "Megatron-Core's micro-batch groups of %lld in "
                        "the interleaved schedule: torchtitan's schedules "
                        "have no such option",
                        (long long)l->mb_group);

    /* ---- compile: the estimate's fused kernels unless eager ---- */
    section(&w, "compile");
    key(&w, "compile", "enable", "%s", py_bool(&w, compile));
    key(&w, "compile", "components", "[\"model\", \"loss\"]");
    if (w.main_)
        key(&w, "compile", "enable_async_tensor_parallel", "%s",
            py_bool(&w, async_tp && compile));
    if (recipe && !w.main_) {
        section(&w, "quantize.linear.float8");
        key(&w, "quantize.linear.float8", "recipe_name", "\"%s\"", recipe);
    }
    if (w.main_) launch_text_put(&w.body, "    return config\n");

    /* ---- what it is, then the notes, then the config ---- */
    int64_t per_node, nodes = launch_nodes(c, &per_node);
    launch_text_put(b, "# %s\n", tt_versions[w.ver].label);
    if (w.main_)
        launch_text_put(b, "# run: NGPU=%lld MODULE=<this file as a module> "
                        "CONFIG=trainplan_config ./run_train.sh, on %lld "
                        "node%s\n",
                     (long long)per_node, (long long)nodes,
                     nodes > 1 ? "s" : "");
    else
        launch_text_put(b, "# run: NGPU=%lld CONFIG_FILE=<this file> "
                        "./run_train.sh, on %lld node%s\n",
                     (long long)per_node, (long long)nodes,
                     nodes > 1 ? "s" : "");
    if (c->iteration_s > 0)
        launch_text_put(b, "# trainplan: %s%s%s, %lld GPUs, %.6g s per "
                        "iteration as %s runs it\n",
                     m->name, c->system ? " on " : "",
                     c->system ? c->system : "",
                     (long long)(l->tp * l->pp * l->cp * dp), c->iteration_s,
                     space_framework_names[l->framework]);
    launch_text_put(b, "%s%s", launch_text_str(&w.notes), launch_text_str(&w.body));
    launch_text_free(&w.notes);
    launch_text_free(&w.body);
}

/* ---- as data ------------------------------------------------------------ */

/* The change of bracket depth over s, outside quotes. */
static int bracket_depth(const char *s)
{
    int depth = 0;
    char q = 0;
    for (; *s; s++) {
        if (q) {
            if (*s == '\\' && s[1]) s++;
            else if (*s == q) q = 0;
        } else if (*s == '"' || *s == '\'') {
            q = *s;
        } else if (*s == '[' || *s == '(') {
            depth++;
        } else if (*s == ']' || *s == ')') {
            depth--;
        }
    }
    return depth;
}

static char *skip_blanks(char *s)
{
    while (*s == ' ') s++;
    return s;
}

/* A value that opens a bracket, with the lines that close it, on one
 * line: "[[\"a\"], [\"b\"]]" for the writer's one-list-a-line form. */
static void whole_value(const char *first, char **p, launch_text *v)
{
    v->n = 0;
    launch_text_put(v, "%s", first);
    int depth = bracket_depth(first);
    char *line;
    while (depth > 0 && (line = launch_next_line(p)) != NULL) {
        char *t = skip_blanks(line);
        size_t n = strlen(t);
        while (n && t[n - 1] == ' ') t[--n] = '\0';
        if (*t == ']' || *t == ')') {
            while (v->n && (v->p[v->n - 1] == ',' || v->p[v->n - 1] == ' '))
                v->p[--v->n] = '\0'; /* a trailing comma before the close */
        } else if (v->n && v->p[v->n - 1] != '[' && v->p[v->n - 1] != '(') {
            launch_text_put(v, " ");
        }
        launch_text_put(v, "%s", t);
        depth += bracket_depth(t);
    }
}

cJSON *launch_torchtitan_json(const char *text, int version)
{
    int main_ = version != LAUNCH_TT_V02;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "version", main_ ? "main" : "0.2");
    cJSON_AddNullToObject(o, "base");
    cJSON *kv = cJSON_AddObjectToObject(o, "config");
    cJSON *notes = cJSON_AddArrayToObject(o, "notes");
    char *buf = tp_xstrdup(text ? text : ""), *p = buf, *line;
    char section[128] = "";
    launch_text v = {0};
    while ((line = launch_next_line(&p)) != NULL) {
        if (*line == '#') {
            launch_json_comment(notes, line);
            continue;
        }
        char *s = skip_blanks(line);
        if (!*s) continue;
        char *eq = strstr(s, " = ");
        if (main_) {
            /* imports, def, return: the frame of the assignments */
            if (!eq || strncmp(s, "config", 6) != 0) continue;
            *eq = '\0';
            whole_value(eq + 3, &p, &v);
            if (strcmp(s, "config") == 0) {
                size_t n = v.n;
                if (n > 2 && strcmp(v.p + n - 2, "()") == 0) v.p[n - 2] = '\0';
                cJSON_ReplaceItemInObjectCaseSensitive(
                    o, "base", cJSON_CreateString(launch_text_str(&v)));
            } else if (strncmp(s, "config.", 7) == 0) {
                launch_json_set(kv, s + 7, launch_text_str(&v));
            }
            continue;
        }
        size_t n = strlen(s);
        if (*s == '[' && s[n - 1] == ']') {
            s[n - 1] = '\0';
            tp_strlcpy(section, s + 1, sizeof section);
            continue;
        }
        if (!eq) continue; /* not written */
        *eq = '\0';
        whole_value(eq + 3, &p, &v);
        char key[256];
        snprintf(key, sizeof key, "%s%s%s", section, *section ? "." : "", s);
        launch_json_set(kv, key, launch_text_str(&v));
    }
    launch_text_free(&v);
    free(buf);
    return o;
}
