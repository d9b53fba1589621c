/*
 * launch_torchtitan.c - torchtitan's config for a layout, and a torchtitan
 * config read back into the options the command line would set (issue 18).
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
static const struct {
    const char *preset, *name, *flavor, *recipe;
} tt_models[] = {
    {"llama3.1-8b", "llama3", "8B", "llama3_8b"},
    {"llama3-8b", "llama3", "8B", "llama3_8b"},
    {"llama3.1-70b", "llama3", "70B", "llama3_70b"},
    {"llama3-70b", "llama3", "70B", "llama3_70b"},
    {"llama3.1-405b", "llama3", "405B", "llama3_405b"},
};
#define N_TT_MODELS ((int)(sizeof tt_models / sizeof tt_models[0]))

/* The row of m: its preset's name and the same architecture. -1: none. */
static int tt_model_of(const space_model *m)
{
    for (int i = 0; i < N_TT_MODELS; i++) {
        if (!tp_streq_ci(m->name, tt_models[i].preset)) continue;
        const space_model *p = space_preset_find(tt_models[i].preset, NULL);
        if (p && p->num_layers == m->num_layers && p->hidden == m->hidden
            && p->heads == m->heads && p->kv_heads == m->kv_heads
            && p->ffn_hidden == m->ffn_hidden && p->vocab == m->vocab
            && m->num_experts == 0)
            return i;
    }
    return -1;
}

/* What main's shipped configs set of the fields the reader reads
 * (torchtitan/models/llama3/config_registry.py @b5bcd76c66d0): the
 * defaults of a config derived from one. */
static const struct {
    const char *recipe;
    int64_t tokens_per_mb, context, tp;
    int full_ac, compile, async_tp, fp8_rowwise;
} tt_recipes[] = {
    {"llama3_8b", 8192, 8192, 1, 0, 0, 0, 0},
    {"llama3_70b", 8 * 8192, 8192, 8, 1, 0, 0, 0},
    {"llama3_405b", 2 * 8192, 8192, 8, 1, 1, 1, 1},
};
#define N_TT_RECIPES ((int)(sizeof tt_recipes / sizeof tt_recipes[0]))

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
        for (int i = 0, n = 0; i < N_TT_MODELS; i++)
            n += snprintf(known + n, sizeof known - (size_t)n, "%s%s",
                          i ? ", " : "", tt_models[i].preset);
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
                         tt_models[mi].name, tt_models[mi].name,
                         tt_models[mi].recipe);
        else
            launch_text_put(&w.body, "from torchtitan.trainer import Trainer\n");
        launch_text_put(&w.body, "\n\ndef trainplan_config():\n");
        if (mi >= 0) {
            launch_text_put(&w.body, "    config = %s()\n", tt_models[mi].recipe);
            launch_text_put(&w.body, "    config.model_spec = model_registry(\"%s\"",
                         tt_models[mi].flavor);
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
                     space_attn_names[l->flash], l->pp > 1 ? "" : "; main also captures CUDA graphs, "
                                      "which the estimate does not model");
    } else {
        section(&w, "model");
        key(&w, "model", "name", "\"%s\"", mi >= 0 ? tt_models[mi].name
                                                   : m->name);
        if (mi >= 0) key(&w, "model", "flavor", "\"%s\"", tt_models[mi].flavor);
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

/* ---- the reader ------------------------------------------------------ */

/* One assignment: its dotted key ("parallelism.tensor_parallel_degree";
 * main's whole-object ones: "activation_checkpoint", "model_spec",
 * "=recipe", "=models" for the module model_registry comes from), its
 * value's text and its line. Points into the reader's copy. */
typedef struct tt_kv {
    char key[128];
    const char *val;
    int line;
} tt_kv;

typedef struct tt_job {
    tt_kv *kv;
    int n, cap;
    const char *file;
    int main_;
    const char *fn; /* main: the config function read (NULL: the only one) */
} tt_job;

static void kv_add(tt_job *j, const char *key, const char *val, int line)
{
    if (j->n == j->cap) {
        j->cap = j->cap ? 2 * j->cap : 64;
        j->kv = tp_xrealloc(j->kv, (size_t)j->cap * sizeof *j->kv);
    }
    tp_strlcpy(j->kv[j->n].key, key, sizeof j->kv[j->n].key);
    j->kv[j->n].val = val;
    j->kv[j->n].line = line;
    j->n++;
}

/* The last assignment of key (a later one wins, as in Python). */
static const tt_kv *kv_get(const tt_job *j, const char *key)
{
    for (int i = j->n - 1; i >= 0; i--)
        if (strcmp(j->kv[i].key, key) == 0) return &j->kv[i];
    return NULL;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

/* Cuts a '#' comment outside quotes; returns the bracket depth change. */
static int cut_comment(char *s)
{
    char q = 0;
    int depth = 0;
    for (char *p = s; *p; p++) {
        if (q) {
            if (*p == '\\' && p[1]) p++;
            else if (*p == q) q = 0;
        } else if (*p == '"' || *p == '\'') {
            q = *p;
        } else if (*p == '#') {
            *p = '\0';
            break;
        } else if (*p == '[' || *p == '(') {
            depth++;
        } else if (*p == ']' || *p == ')') {
            depth--;
        }
    }
    return depth;
}

static int bad_line(const tt_job *j, int line, const char *what,
                    const char *text, tp_err *e)
{
    return tp_errf(e, TP_EDATA, "%s:%d: %s: '%.80s'", j->file, line, what,
                   text);
}

/* Splits buf (modified) into assignments. TOML: [section] headers and
 * key = value, arrays across lines. Python: the form the writer prints,
 * config.a.b = value, config = recipe(), imports. */
static int tt_parse(tt_job *j, char *buf, tp_err *e)
{
    char section[96] = "";
    int line = 0;
    char *p = buf;
    /* TOML: a table or key defined twice is invalid (TOML 1.0, "Tables"
     * and "Keys"); torchtitan v0.2's tomllib.load raises on it
     * (torchtitan/config/manager.py at 73a0e6979dd1) */
    tt_kv tables[64];
    int ntables = 0;
    int in_fn = 1; /* main: inside the function read, or top level */
    while (p && *p) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        line++;
        int at = line;
        char *s = p;
        p = nl ? nl + 1 : NULL;
        if (j->main_ && *s && !isspace((unsigned char)*s) && *s != '#'
            && *s != ')') {
            /* a line at column 0: a function's start, or top level */
            if (strncmp(s, "def ", 4) == 0) {
                const char *nm = s + 4;
                size_t k = strcspn(nm, "( :");
                in_fn = !j->fn || (strlen(j->fn) == k
                                   && strncmp(nm, j->fn, k) == 0);
            } else if (strncmp(s, "from ", 5) != 0
                       && strncmp(s, "import ", 7) != 0) {
                in_fn = 1; /* top-level statements are read */
            }
        }
        if (j->main_ && !in_fn && strncmp(s, "from ", 5) != 0
            && strncmp(s, "import ", 7) != 0)
            continue;
        int depth = cut_comment(s);
        /* a value that opens a bracket runs on to where it closes */
        while (depth > 0 && p && *p) {
            nl = strchr(p, '\n');
            if (nl) *nl = '\0';
            line++;
            char *more = p;
            p = nl ? nl + 1 : NULL;
            depth += cut_comment(more);
            size_t n = strlen(s);
            s[n] = ' '; /* join: more follows s in the buffer */
            memmove(s + n + 1, more, strlen(more) + 1);
        }
        if (depth != 0)
            return bad_line(j, at, "unbalanced brackets", s, e);
        s = trim(s);
        if (!*s) continue;
        if (j->main_) {
            if (strncmp(s, "from ", 5) == 0) {
                /* from torchtitan.models.NAME import model_registry */
                const char *pre = "from torchtitan.models.";
                char *imp = strstr(s, " import ");
                if (strncmp(s, pre, strlen(pre)) == 0 && imp
                    && strcmp(trim(imp + 8), "model_registry") == 0) {
                    *imp = '\0';
                    kv_add(j, "=models", s + strlen(pre), at);
                }
                continue;
            }
            if (strncmp(s, "import ", 7) == 0 || strncmp(s, "def ", 4) == 0
                || strcmp(s, "return config") == 0)
                continue;
            char *eq = strstr(s, " = ");
            if (!eq || strncmp(s, "config", 6) != 0)
                return bad_line(j, at, "expected config = BASE() or "
                                "config.SECTION.KEY = VALUE (the form "
                                "trainplan writes)", s, e);
            *eq = '\0';
            char *lhs = trim(s), *rhs = trim(eq + 3);
            if (strcmp(lhs, "config") == 0) {
                size_t n = strlen(rhs);
                if (n < 3 || strcmp(rhs + n - 2, "()") != 0)
                    return bad_line(j, at, "expected config = RECIPE()", rhs,
                                    e);
                rhs[n - 2] = '\0';
                kv_add(j, "=recipe", rhs, at);
            } else if (strcmp(lhs, "config.training") == 0
                       || strcmp(lhs, "config.parallelism") == 0
                       || strcmp(lhs, "config.compile") == 0) {
                /* a whole section would hide the fields read below */
                return bad_line(j, at, "expected its fields one by one, "
                                "config.SECTION.KEY = VALUE", lhs, e);
            } else if (strncmp(lhs, "config.", 7) == 0) {
                kv_add(j, lhs + 7, rhs, at);
            } else {
                return bad_line(j, at, "expected config.SECTION.KEY", lhs, e);
            }
            continue;
        }
        if (*s == '[') {
            size_t n = strlen(s);
            if (s[n - 1] != ']' || s[1] == '[')
                return bad_line(j, at, "expected a [section] header", s, e);
            s[n - 1] = '\0';
            tp_strlcpy(section, trim(s + 1), sizeof section);
            for (int t = 0; t < ntables; t++)
                if (strcmp(tables[t].key, section) == 0)
                    return tp_errf(e, TP_EDATA, "%s:%d: [%s] defined twice "
                                   "(line %d): TOML and torchtitan refuse "
                                   "the file", j->file, at, section,
                                   tables[t].line);
            if (ntables < 64) {
                tp_strlcpy(tables[ntables].key, section,
                           sizeof tables[ntables].key);
                tables[ntables++].line = at;
            }
            continue;
        }
        char *eq = strchr(s, '=');
        if (!eq) return bad_line(j, at, "expected key = value", s, e);
        *eq = '\0';
        char *k = trim(s), *v = trim(eq + 1);
        if (!*k || !*v) return bad_line(j, at, "expected key = value", k, e);
        char full[128];
        snprintf(full, sizeof full, "%s%s%s", section, *section ? "." : "", k);
        const tt_kv *twice = kv_get(j, full);
        if (twice)
            return tp_errf(e, TP_EDATA, "%s:%d: %s given twice (line %d): "
                           "TOML and torchtitan refuse the file", j->file,
                           at, full, twice->line);
        kv_add(j, full, v, at);
    }
    return TP_OK;
}

/* An integer value of key in [lo, hi], or dflt when absent. */
static int get_int(const tt_job *j, const char *key, long long lo,
                   long long hi, long long dflt, long long *out, tp_err *e)
{
    const tt_kv *kv = kv_get(j, key);
    *out = dflt;
    if (!kv) return TP_OK;
    char buf[64];
    size_t n = 0;
    for (const char *s = kv->val; *s && n + 1 < sizeof buf; s++)
        if (*s != '_') buf[n++] = *s; /* TOML's 1_000 */
    buf[n] = '\0';
    if (tp_parse_int(buf, lo, hi, out))
        return tp_errf(e, TP_EDATA,
                       "%s:%d: %s = %s: expected an integer in [%lld, %lld]",
                       j->file, kv->line, key, kv->val, lo, hi);
    return TP_OK;
}

/* A string value (quoted) of key into out, or dflt. */
static int get_str(const tt_job *j, const char *key, const char *dflt,
                   char *out, size_t cap, tp_err *e)
{
    const tt_kv *kv = kv_get(j, key);
    tp_strlcpy(out, dflt, cap);
    if (!kv) return TP_OK;
    const char *v = kv->val;
    size_t n = strlen(v);
    if (n < 2 || (v[0] != '"' && v[0] != '\'') || v[n - 1] != v[0]
        || n - 1 > cap)
        return tp_errf(e, TP_EDATA,
                       "%s:%d: %s = %s: expected a quoted string", j->file,
                       kv->line, key, v);
    memcpy(out, v + 1, n - 2);
    out[n - 2] = '\0';
    return TP_OK;
}

static int get_bool(const tt_job *j, const char *key, int dflt, int *out,
                    tp_err *e)
{
    const tt_kv *kv = kv_get(j, key);
    *out = dflt;
    if (!kv) return TP_OK;
    const char *t = j->main_ ? "True" : "true", *f = j->main_ ? "False"
                                                              : "false";
    if (strcmp(kv->val, t) == 0) *out = 1;
    else if (strcmp(kv->val, f) == 0) *out = 0;
    else
        return tp_errf(e, TP_EDATA, "%s:%d: %s = %s: expected %s or %s",
                       j->file, kv->line, key, kv->val, t, f);
    return TP_OK;
}

/* Inner lists of a list of lists (module_fqns_per_model_part). */
static int64_t count_inner(const char *v)
{
    int depth = 0;
    int64_t n = 0;
    char q = 0;
    for (; *v; v++) {
        if (q) {
            if (*v == q) q = 0;
        } else if (*v == '"' || *v == '\'') {
            q = *v;
        } else if (*v == '[') {
            if (++depth == 2) n++;
        } else if (*v == ']') {
            depth--;
        }
    }
    return n;
}

/* The "layers.N" names in each inner list of a list of lists
 * (module_fqns_per_model_part) into st[0..cap). */
static void layers_per_inner(const char *v, int64_t *st, int64_t cap)
{
    int depth = 0;
    int64_t k = -1;
    char q = 0;
    const char *start = NULL;
    for (; *v; v++) {
        if (q) {
            if (*v == q) {
                q = 0;
                if (k >= 0 && k < cap && v - start > 7
                    && strncmp(start, "layers.", 7) == 0)
                    st[k]++;
            }
        } else if (*v == '"' || *v == '\'') {
            q = *v;
            start = v + 1;
        } else if (*v == '[') {
            if (++depth == 2) k++;
        } else if (*v == ']') {
            depth--;
        }
    }
}

static int unmodelled(const tt_job *j, const char *key, const char *val,
                      const char *why, tp_err *e)
{
    const tt_kv *kv = kv_get(j, key);
    return tp_errf(e, TP_EDATA, "%s:%d: %s = %s: %s", j->file,
                   kv ? kv->line : 0, key, val, why);
}

/* The model: v0.2's [model] name and flavor, main's model_registry
 * module and flavor. */
static int read_model(const tt_job *j, space_model *m, tp_err *e)
{
    char name[64], flavor[64];
    const char *where_name, *where_flavor;
    int rc;
    if (j->main_) {
        const tt_kv *mod = kv_get(j, "=models");
        const tt_kv *ms = kv_get(j, "model_spec");
        tp_strlcpy(name, mod ? mod->val : "", sizeof name);
        flavor[0] = '\0';
        const char *q = ms ? strpbrk(ms->val, "\"'") : NULL;
        if (ms && strncmp(ms->val, "model_registry(", 15) == 0 && q) {
            const char *end = strchr(q + 1, *q);
            size_t n = end ? (size_t)(end - q - 1) : 0;
            if (n >= sizeof flavor) n = sizeof flavor - 1;
            memcpy(flavor, q + 1, n);
            flavor[n] = '\0';
        }
        const tt_kv *rec = kv_get(j, "=recipe");
        if (!ms && rec) /* the model of the shipped config derived from */
            for (int i = 0; i < N_TT_MODELS; i++)
                if (strcmp(rec->val, tt_models[i].recipe) == 0) {
                    tp_strlcpy(name, tt_models[i].name, sizeof name);
                    tp_strlcpy(flavor, tt_models[i].flavor, sizeof flavor);
                    mod = rec;
                    break;
                }
        if (!mod || !flavor[0])
            return tp_errf(e, TP_EDATA,
                           "%s: config.model_spec: expected model_registry("
                           "\"FLAVOR\") of a model imported from "
                           "torchtitan.models.NAME (known: llama3 8B, 70B, "
                           "405B), found %s",
                           j->file, ms ? ms->val : "none");
        where_name = "torchtitan.models";
        where_flavor = "model_registry";
    } else {
        rc = get_str(j, "model.name", "llama3", name, sizeof name, e);
        if (!rc) rc = get_str(j, "model.flavor", "debugmodel", flavor,
                              sizeof flavor, e);
        if (rc) return rc;
        where_name = "model.name";
        where_flavor = "model.flavor";
        /* v0.2.2's 8B_flex and 8B_varlen: the same model, another
         * attention kernel (models/llama3/__init__.py) */
        char *u = strchr(flavor, '_');
        if (u && strcmp(name, "llama3") == 0) *u = '\0';
    }
    for (int i = 0; i < N_TT_MODELS; i++)
        if (strcmp(name, tt_models[i].name) == 0
            && strcmp(flavor, tt_models[i].flavor) == 0) {
            const space_model *p = space_preset_find(tt_models[i].preset, e);
            if (!p) return TP_EINTERNAL;
            *m = *p;
            return space_model_validate(m, j->file, e);
        }
    return tp_errf(e, TP_EDATA,
                   "%s: %s = \"%s\", %s = \"%s\": not a model trainplan knows "
                   "(known: llama3 with flavor 8B, 70B or 405B)",
                   j->file, where_name, name, where_flavor, flavor);
}

/* main's config functions: their names, comma-separated, into list;
 * their count. */
static int tt_functions(const char *text, char *list, size_t cap)
{
    int n = 0;
    size_t used = 0;
    list[0] = '\0';
    for (const char *p = text; *p;) {
        if (strncmp(p, "def ", 4) == 0) {
            size_t k = strcspn(p + 4, "( :\n");
            if (used < cap)
                used += (size_t)snprintf(list + used, cap - used, "%s%.*s",
                                         n ? ", " : "", (int)k, p + 4);
            n++;
        }
        const char *nl = strchr(p, '\n');
        if (!nl) break;
        p = nl + 1;
    }
    return n;
}

int launch_read_torchtitan(const char *text, const char *file,
                           search_job *job, space_model *m, FILE *err,
                           tp_err *e)
{
    return launch_read_torchtitan_fn(text, file, NULL, job, m, err, e);
}

int launch_read_torchtitan_fn(const char *text, const char *file,
                              const char *fn, search_job *job,
                              space_model *m, FILE *err, tp_err *e)
{
    (void)err; /* no notes: every key read either counts or is refused */
    tt_job j = {NULL, 0, 0, file, 0, fn};
    size_t len = strlen(text);
    char *buf = tp_xmalloc(len + 1);
    memcpy(buf, text, len + 1);
    /* Python: the form main is written in (a function returning the
     * config); anything else is read as TOML. */
    j.main_ = strstr(text, "\ndef ") != NULL || strncmp(text, "def ", 4) == 0;
    int rc = TP_OK;
    /* torchtitan runs one config function, the one --config names
     * (torchtitan/config/manager.py at b5bcd76c66d0: --module/--config
     * load it from the module's config_registry): a file of several is
     * not one job; FILE:FUNCTION picks one */
    char fns[512] = "";
    int nfn = j.main_ ? tt_functions(text, fns, sizeof fns) : 0;
    if (fn && !j.main_)
        rc = tp_errf(e, TP_EDATA, "%s: ':%s' names a config function, but "
                     "the file is not a Python config", file, fn);
    char fn_want[160], fn_have[520];
    snprintf(fn_want, sizeof fn_want, ", %.150s,", fn ? fn : "");
    snprintf(fn_have, sizeof fn_have, ", %s,", fns);
    if (!rc && fn && !strstr(fn_have, fn_want))
        rc = tp_errf(e, TP_EDATA, "%s: no config function '%s' (the file "
                     "has %s)", file, fn, fns);
    else if (!rc && !fn && nfn > 1)
        rc = tp_errf(e, TP_EDATA, "%s: %d config functions (%s): torchtitan "
                     "runs one, as --config names it; pick one as "
                     "--torchtitan-config %s:NAME",
                     file, nfn, fns, file);
    if (!rc) rc = tt_parse(&j, buf, e);
    if (rc) goto done;
    /* defaults: the version's (job_config.py / configs.py), and for main
     * the shipped config it derives from */
    int ri = -1;
    if (j.main_) {
        const tt_kv *r = kv_get(&j, "=recipe");
        for (int i = 0; r && i < N_TT_RECIPES; i++)
            if (strcmp(r->val, tt_recipes[i].recipe) == 0) ri = i;
        if (ri < 0) {
            rc = tp_errf(e, TP_EDATA,
                         "%s:%d: config = %s(): expected one of torchtitan's "
                         "llama3_8b, llama3_70b, llama3_405b",
                         file, r ? r->line : 0, r ? r->val : "?");
            goto done;
        }
    }
    rc = read_model(&j, m, e);
    if (rc) goto done;
    long long rep, shard, tp, pp, cp, lps = 0, first_less, last_less;
    rc = get_int(&j, "parallelism.data_parallel_replicate_degree", 1, 65536, 1,
                 &rep, e);
    if (!rc) rc = get_int(&j, "parallelism.data_parallel_shard_degree", -1,
                          10000000, -1, &shard, e);
    if (!rc) rc = get_int(&j, "parallelism.tensor_parallel_degree", 1, 65536,
                          ri >= 0 ? tt_recipes[ri].tp : 1, &tp, e);
    if (!rc) rc = get_int(&j, "parallelism.pipeline_parallel_degree", 1,
                          65536, 1, &pp, e);
    if (!rc) rc = get_int(&j, "parallelism.context_parallel_degree", 1, 65536,
                          1, &cp, e);
    if (!rc) rc = get_int(&j, "parallelism.pipeline_parallel_first_stage_less_"
                          "layers", 0, 1000000, 1, &first_less, e);
    if (!rc) rc = get_int(&j, "parallelism.pipeline_parallel_last_stage_less_"
                          "layers", 0, 1000000, 1, &last_less, e);
    if (!rc && kv_get(&j, "parallelism.pipeline_parallel_layers_per_stage"))
        rc = get_int(&j, "parallelism.pipeline_parallel_layers_per_stage", 1,
                     1000000, 1, &lps, e);
    /* expert parallelism: the models this reader builds are dense ("No
     * effect for non-MoE models", configs.py), so only 1 means what it
     * says */
    long long tt_ep = 1;
    if (!rc) rc = get_int(&j, "parallelism.expert_parallel_degree", 1, 65536,
                          1, &tt_ep, e);
    if (!rc && tt_ep > 1 && m->num_experts <= 0) {
        char v[32];
        snprintf(v, sizeof v, "%lld", tt_ep);
        rc = unmodelled(&j, "parallelism.expert_parallel_degree", v,
                        "the model is dense; expected 1", e);
    }
    if (rc) goto done;
    if (shard == 0) {
        rc = unmodelled(&j, "parallelism.data_parallel_shard_degree", "0",
                        "expected -1 (the ranks left) or 1 and more", e);
        goto done;
    }
    if (rep > 1 && shard > 1) {
        rc = tp_errf(e, TP_EDATA,
                     "%s: data_parallel_replicate_degree %lld with "
                     "data_parallel_shard_degree %lld: HSDP is not modelled "
                     "(give one of them 1)",
                     file, rep, shard);
        goto done;
    }
    if (!j.main_ && rep > 1 && shard == 1 && tp * pp * cp > 1) {
        rc = tp_errf(e, TP_EDATA,
                     "%s: data_parallel_replicate_degree %lld beside TP %lld, "
                     "PP %lld, CP %lld: v0.2 replicates without sharding "
                     "only as DDP, alone (models/llama3/infra/parallelize.py)",
                     file, rep, tp, pp, cp);
        goto done;
    }
    /* GPUs: the degrees' product where the shard degree is given, else
     * what -g says (the ranks left to it, ParallelDims._validate) */
    int64_t fixed = rep * tp * pp * cp, gpus = job->gpus > 0 ? job->gpus : 0;
    if (shard > 0) {
        int64_t g = fixed * shard;
        if (gpus > 0 && gpus != g) {
            rc = tp_errf(e, TP_EUSAGE,
                         "%s: its degrees make %lld GPUs (replicate %lld x "
                         "shard %lld x TP %lld x PP %lld x CP %lld), --gpus "
                         "says %lld",
                         file, (long long)g, rep, shard, tp, pp, cp,
                         (long long)gpus);
            goto done;
        }
        gpus = g;
    } else if (gpus > 0 && gpus % fixed) {
        rc = tp_errf(e, TP_EUSAGE,
                     "%s: --gpus %lld is not a multiple of replicate %lld x "
                     "TP %lld x PP %lld x CP %lld (data_parallel_shard_degree "
                     "= -1 takes the ranks left)",
                     file, (long long)gpus, rep, tp, pp, cp);
        goto done;
    }
    int64_t dp = gpus > 0 ? gpus / (tp * pp * cp) : 0; /* 0: unknown */

    /* the pipeline's stages (pipeline_llm) */
    char sched[64];
    rc = get_str(&j, "parallelism.pipeline_parallel_schedule", "1F1B", sched,
                 sizeof sched, e);
    if (rc) goto done;
    int64_t vstages = 1;
    if (pp > 1) {
        /* PyTorch's schedules trainplan times (tt_schedule_name); GPipe,
         * LoopedBFS and InterleavedGPipe it does not */
        static const struct { const char *name; int sched; } tts[] = {
            {"1F1B", SPACE_PP_1F1B},
            {"Interleaved1F1B", SPACE_PP_1F1B},
            {"InterleavedZeroBubble", SPACE_PP_ZB1P},
            {"ZBVZeroBubble", SPACE_PP_ZBV},
            {"DualPipeV", SPACE_PP_DUALPIPEV},
        };
        int known = -1;
        for (int k = 0; k < (int)(sizeof tts / sizeof tts[0]); k++)
            if (strcmp(sched, tts[k].name) == 0) known = k;
        int single = known == 0;
        if (known < 0) {
            rc = unmodelled(&j, "parallelism.pipeline_parallel_schedule",
                            sched, "trainplan times 1F1B, Interleaved1F1B, "
                            "InterleavedZeroBubble, ZBVZeroBubble and "
                            "DualPipeV",
                            e);
            goto done;
        }
        job->pp_schedule = tts[known].sched;
        const tt_kv *fq = kv_get(&j, "parallelism.module_fqns_per_model_part");
        int64_t stages = fq && strcmp(fq->val, "None") != 0
                             ? count_inner(fq->val)
                         : lps > 0 ? (m->num_layers + first_less + last_less
                                      + lps - 1) / lps
                                   : pp * (single ? 1 : 2);
        int vsched = job->pp_schedule == SPACE_PP_ZBV
                     || job->pp_schedule == SPACE_PP_DUALPIPEV;
        if (stages % pp || (single && stages != pp)
            || (!single && stages < 2 * pp) || (vsched && stages != 2 * pp)) {
            rc = tp_errf(e, TP_EDATA,
                         "%s: %lld pipeline stages on PP %lld under %s: "
                         "torchtitan needs a multiple of PP, one a rank for "
                         "1F1B, two or more for the looped schedules, "
                         "exactly two for ZBVZeroBubble and DualPipeV",
                         file, (long long)stages, pp, sched);
            goto done;
        }
        vstages = stages / pp;
        /* The layers of each stage: the module lists', or torchtitan's
         * own split (_generate_llm_fqn_per_model_part: the embedding and
         * the output weigh first_less and last_less layers; the stages
         * take (L + both) / stages, the first ones one more of what is
         * left, each up to the layers not yet placed), as the estimate's
         * split (space_split_from_stages). */
        int64_t *st = tp_xcalloc((size_t)stages, sizeof *st);
        if (fq && strcmp(fq->val, "None") != 0) {
            layers_per_inner(fq->val, st, stages);
        } else {
            long long eff = m->num_layers + first_less + last_less;
            long long per = eff / stages, extra = eff % stages, placed = 0;
            for (int64_t k = 0; k < stages; k++) {
                long long want = per + (k < extra)
                                 - (k == 0 ? first_less : 0)
                                 - (k == stages - 1 ? last_less : 0);
                if (want < 0) want = 0;
                if (want > m->num_layers - placed)
                    want = m->num_layers - placed;
                st[k] = want;
                placed += want;
            }
        }
        space_layout sl = {0};
        if (space_split_from_stages(m->num_layers, m->mtp_layers, pp, st,
                                    (int)stages, &sl, &job->pp_layout_store)) {
            rc = tp_errf(e, TP_EDATA,
                         "%s: the %lld pipeline stages do not hold the %lld "
                         "layers once each",
                         file, (long long)stages, (long long)m->num_layers);
            free(st);
            goto done;
        }
        free(st);
        job->split_set = 1;
        job->pp_account = sl.pp_account;
        job->pp_first = sl.pp_first;
        job->pp_last = sl.pp_last;
        job->pp_layout = sl.pp_layout;
    }

    /* the batch */
    long long mbs, gbs, seq, micro = 1;
    if (j.main_) {
        long long tok, step;
        rc = get_int(&j, "training.max_context_length", 1, 16777216,
                     tt_recipes[ri].context, &seq, e);
        if (!rc) rc = get_int(&j, "training.num_tokens_per_microbatch_per_dp_"
                              "rank", 1, 1LL << 40,
                              tt_recipes[ri].tokens_per_mb, &tok, e);
        if (!rc) rc = get_int(&j, "training.num_tokens_per_train_step", -1,
                              1LL << 50, -1, &step, e);
        if (!rc && pp > 1)
            rc = get_int(&j, "parallelism.num_pp_microbatches", 1, 1000000, 1,
                         &micro, e);
        if (rc) goto done;
        if (tok % seq) {
            rc = tp_errf(e, TP_EDATA,
                         "%s: num_tokens_per_microbatch_per_dp_rank %lld is "
                         "not a whole number of max_context_length %lld "
                         "sequences",
                         file, tok, seq);
            goto done;
        }
        mbs = tok / seq;
        if (step > 0 && step % seq) {
            rc = tp_errf(e, TP_EDATA,
                         "%s: num_tokens_per_train_step %lld is not a whole "
                         "number of max_context_length %lld sequences",
                         file, step, seq);
            goto done;
        }
        gbs = step > 0 ? step / seq : 0;
    } else {
        long long local, pmbs = 1, glob;
        rc = get_int(&j, "training.seq_len", 1, 16777216, 2048, &seq, e);
        if (!rc) rc = get_int(&j, "training.local_batch_size", 1, 100000000,
                              8, &local, e);
        if (!rc) rc = get_int(&j, "training.global_batch_size", -1, 100000000,
                              -1, &glob, e);
        if (!rc && pp > 1)
            rc = get_int(&j, "parallelism.pipeline_parallel_microbatch_size",
                         1, 1000000, 1, &pmbs, e);
        if (rc) goto done;
        if (pp > 1 && local % pmbs) {
            rc = tp_errf(e, TP_EDATA,
                         "%s: local_batch_size %lld is not a multiple of "
                         "pipeline_parallel_microbatch_size %lld "
                         "(pipeline_parallel.py, build_pipeline_schedule)",
                         file, local, pmbs);
            goto done;
        }
        mbs = pp > 1 ? pmbs : local;
        micro = pp > 1 ? local / pmbs : 1;
        gbs = glob > 0 ? glob : 0;
    }
    if (gbs == 0) {
        if (dp == 0) {
            rc = tp_errf(e, TP_EUSAGE,
                         "%s: the global batch follows the data-parallel "
                         "degree, which data_parallel_shard_degree = -1 "
                         "leaves to the GPUs: give -g/--gpus",
                         file);
            goto done;
        }
        gbs = mbs * micro * dp;
    }
    /* trainplan times one pipeline flush an iteration: under PP every
     * micro-batch of a step in one pass */
    if (pp > 1 && dp > 0 && gbs != mbs * micro * dp) {
        rc = tp_errf(e, TP_EDATA,
                     "%s: global batch %lld is %lld pipeline passes of %lld "
                     "micro-batches of %lld on DP %lld: gradient "
                     "accumulation across pipeline passes is not modelled",
                     file, gbs, gbs / (mbs * micro * dp), micro, mbs,
                     (long long)dp);
        goto done;
    }

    /* precision, compile, AC */
    char mp[32], dtype[32];
    rc = get_str(&j, "training.mixed_precision_param", "bfloat16", mp,
                 sizeof mp, e);
    if (!rc) rc = get_str(&j, "training.dtype", "float32", dtype,
                          sizeof dtype, e);
    if (rc) goto done;
    if (strcmp(mp, "bfloat16") != 0) {
        rc = unmodelled(&j, "training.mixed_precision_param", mp,
                        "trainplan models bfloat16 mixed precision", e);
        goto done;
    }
    if (strcmp(dtype, "float32") != 0) {
        rc = unmodelled(&j, "training.dtype", dtype,
                        "trainplan models fp32 parameters with bf16 compute "
                        "(float32)", e);
        goto done;
    }
    /* FSDP2's CPUOffloadPolicy (training.enable_cpu_offload;
     * torchtitan/distributed/fsdp.py): not Megatron-Core's offloads, which
     * are what trainplan models */
    int cpu_off = 0;
    rc = get_bool(&j, "training.enable_cpu_offload", 0, &cpu_off, e);
    if (rc) goto done;
    if (cpu_off) {
        rc = unmodelled(&j, "training.enable_cpu_offload", "true",
                        "FSDP2's CPU offload (CPUOffloadPolicy: parameters, "
                        "gradients and optimizer states on the host, the "
                        "step there) is not modelled; trainplan models "
                        "Megatron-Core's optimizer and activation offloading",
                        e);
        goto done;
    }
    int compile, async_tp, sp = 1;
    rc = get_bool(&j, "compile.enable", ri >= 0 && tt_recipes[ri].compile,
                  &compile, e);
    if (!rc) rc = get_bool(&j, j.main_ ? "compile.enable_async_tensor_parallel"
                                       : "parallelism.enable_async_tensor_"
                                         "parallel",
                           ri >= 0 && tt_recipes[ri].async_tp, &async_tp, e);
    if (!rc && j.main_)
        rc = get_bool(&j, "parallelism.enable_sequence_parallel", 1, &sp, e);
    if (rc) goto done;
    const tt_kv *comp = kv_get(&j, "compile.components");
    if (comp && !strstr(comp->val, "\"model\"") && !strstr(comp->val, "'model'"))
        compile = 0;
    if (async_tp && !compile) {
        rc = unmodelled(&j, "compile.enable", "false",
                        "async TP needs compile.enable and \"model\" in "
                        "compile.components", e);
        goto done;
    }
    int recompute;
    if (j.main_) {
        const tt_kv *ac = kv_get(&j, "activation_checkpoint");
        const char *v = ac ? ac->val
                           : tt_recipes[ri].full_ac ? "FullAC.Config()"
                                                    : "SelectiveAC.Config()";
        if (strcmp(v, "None") == 0) recompute = SPACE_RECOMPUTE_NONE;
        else if (strcmp(v, "FullAC.Config()") == 0)
            recompute = SPACE_RECOMPUTE_FULL;
        else if (strcmp(v, "SelectiveAC.Config()") == 0)
            recompute = SPACE_RECOMPUTE_SELECTIVE_OP;
        else {
            rc = tp_errf(e, TP_EDATA,
                         "%s:%d: activation_checkpoint = %s: expected None, "
                         "FullAC.Config() or SelectiveAC.Config()",
                         file, ac ? ac->line : 0, v);
            goto done;
        }
    } else {
        char mode[32], opt[32];
        rc = get_str(&j, "activation_checkpoint.mode", "selective", mode,
                     sizeof mode, e);
        if (!rc) rc = get_str(&j, "activation_checkpoint.selective_ac_option",
                              "2", opt, sizeof opt, e);
        if (rc) goto done;
        if (strcmp(mode, "none") == 0) recompute = SPACE_RECOMPUTE_NONE;
        else if (strcmp(mode, "full") == 0) recompute = SPACE_RECOMPUTE_FULL;
        else if (strcmp(mode, "selective") == 0 && strcmp(opt, "op") == 0)
            recompute = SPACE_RECOMPUTE_SELECTIVE_OP;
        else if (strcmp(mode, "selective") == 0 && strcmp(opt, "1") == 0)
            recompute = SPACE_RECOMPUTE_FULL; /* every layer */
        else {
            rc = strcmp(mode, "selective") == 0
                     ? unmodelled(&j, "activation_checkpoint.selective_ac_"
                                  "option", opt,
                                  "full checkpointing of every n-th layer "
                                  "is not modelled (expected \"op\" or "
                                  "\"1\"; the default is \"2\")", e)
                     : unmodelled(&j, "activation_checkpoint.mode", mode,
                                  "expected none, full or selective", e);
            goto done;
        }
    }
    /* fp8: v0.2's converter list, main's converter in model_registry */
    int fp8 = 0, fp8_recipe = SPACE_FP8_TENSORWISE;
    if (j.main_) {
        const tt_kv *ms = kv_get(&j, "model_spec");
        const char *spec = ms ? ms->val : "";
        const char *f = strstr(spec, "Float8LinearConverter.Config(");
        if (!ms && tt_recipes[ri].fp8_rowwise) {
            fp8 = 1; /* llama3_405b's own converter */
            fp8_recipe = SPACE_FP8_ROWWISE;
        }
        if (strstr(spec, "converters") && !f) {
            rc = unmodelled(&j, "model_spec", spec,
                            "the converters trainplan models: "
                            "Float8LinearConverter", e);
            goto done;
        }
        if (f) {
            fp8 = 1;
            fp8_recipe = SPACE_FP8_ROWWISE; /* main's default */
            const char *r = strstr(f, "recipe_name=");
            if (r && strncmp(r + 12, "\"rowwise\"", 9) != 0) {
                rc = unmodelled(&j, "model_spec", r,
                                "trainplan models the rowwise recipe", e);
                goto done;
            }
        }
    } else {
        const tt_kv *cv = kv_get(&j, "model.converters");
        if (cv && strstr(cv->val, "\"quantize.linear.float8\"")) {
            fp8 = 1;
            char rn[32];
            rc = get_str(&j, "quantize.linear.float8.recipe_name", "tensorwise",
                         rn, sizeof rn, e);
            if (rc) goto done;
            if (strcmp(rn, "rowwise") == 0) fp8_recipe = SPACE_FP8_ROWWISE;
            else if (strcmp(rn, "tensorwise") != 0) {
                rc = unmodelled(&j, "quantize.linear.float8.recipe_name", rn,
                                "expected tensorwise or rowwise", e);
                goto done;
            }
        } else if (cv && strcmp(cv->val, "[]") != 0) {
            rc = unmodelled(&j, "model.converters", cv->val,
                            "expected [\"quantize.linear.float8\"] (v0.2 "
                            "registers float8 under that name, "
                            "components/quantization/float8.py; \"float8\" "
                            "is v0.1's and a KeyError in v0.2's "
                            "protocols/model_converter.py)", e);
            goto done;
        }
    }
    char rot[32];
    rc = get_str(&j, "parallelism.context_parallel_rotate_method", "allgather",
                 rot, sizeof rot, e);
    if (rc) goto done;
    if (strcmp(rot, "allgather") != 0 && strcmp(rot, "alltoall") != 0) {
        rc = unmodelled(&j, "parallelism.context_parallel_rotate_method", rot,
                        "expected allgather or alltoall", e);
        goto done;
    }

    /* what the command line would set */
    job->framework = SPACE_FW_TORCHTITAN;
    job->tp = tp;
    job->tp_set = 1;
    job->pp = pp;
    job->cp = cp;
    job->vstages = vstages;
    job->mbs = mbs;
    job->gbs = gbs;
    job->seq_length = seq;
    job->sp = tp > 1 ? sp : 0;
    job->recompute = recompute;
    job->zero = rep > 1 ? SPACE_ZERO_NONE : SPACE_ZERO_3;
    job->precision = fp8 ? HW_FP8 : HW_BF16;
    if (fp8) {
        job->fp8_recipe = fp8_recipe;
        job->sw_set |= SEARCH_SW_FP8;
    }
    job->eager = !compile;
    job->sw_set |= SEARCH_SW_EAGER;
    job->tp_overlap = async_tp ? SPACE_TP_OVERLAP_ASYNC
                             : SPACE_TP_OVERLAP_DTENSOR;
    job->sw_set |= SEARCH_SW_TP;
    job->cp_comm = strcmp(rot, "alltoall") == 0 ? SPACE_CP_P2P
                                               : SPACE_CP_ALLGATHER;
    job->sw_set |= SEARCH_SW_CP;
    if (gpus > 0) job->gpus = gpus;
    rc = TP_OK;
done:
    free(j.kv);
    free(buf);
    return rc;
}
