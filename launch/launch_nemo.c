/*
 * launch_nemo.c - NeMo's job for a layout: the Megatron-Bridge overrides
 * (the NeMo 1 form is launch_nemo1.c's) and the names both forms and the
 * reader share (launch_int.h); the job read back is launch_nemo_read.c's
 * (its keys in launch_nemo_keys.c).
 *
 * Two forms (--nemo-format):
 *  - bridge (default): Hydra-style ConfigContainer overrides, one
 *    key=value a line, for Megatron-Bridge v0.6.0's training entry point
 *    scripts/training/run_recipe.py (NVIDIA-NeMo/Megatron-Bridge@51885cf1,
 *    tag v0.6.0, 2026-08-19; its Megatron-Core is the 3rdparty/Megatron-LM
 *    submodule, NVIDIA/Megatron-LM@cd4afffa). NeMo 2.0's recipes moved
 *    there; v0.6.0 is the newest release tag of the mirror (main at
 *    067f987d is unreleased).
 *  - nemo1: the NeMo 1.x launcher's YAML keys, "key: value" a line, of
 *    examples/nlp/language_modeling/conf/megatron_gpt_config.yaml at
 *    NVIDIA/NeMo v2.4.0 (2381f42f; the file last changed in e564e669,
 *    2025-01-30, and is frozen since).
 * Whatever a form cannot express of what the estimate assumed is a
 * "# ..." comment, never a key with another meaning.
 *
 * Sources (Bridge paths under src/megatron/bridge/ at 51885cf1; Megatron
 * paths at cd4afffa):
 *  - the entry point and its override form: scripts/training/
 *    run_recipe.py (COMMON_OVERRIDE_FIELDS; trailing KEY=VALUE), applied
 *    by training/utils/omegaconf_utils.py (parse_hydra_overrides: struct
 *    mode, so "++" adds a key under a section the recipe left None;
 *    _apply_overrides: such a section is a plain dict unless it names its
 *    class, "++comm_overlap._target_=...", which is instantiated);
 *    dataset.seq_length sets model.seq_length
 *    (recipe_runner.sync_model_dataset_sequence_length).
 *  - the base recipes: recipes/llama/llama3.py, recipes/gpt/vanilla_gpt.py
 *    (aliases of the recipes of recipes/<family>/h100/), and
 *    recipes/gpt/h100/gpt3_175b.py by its own name. The "--recipe" of a
 *    job is one name: given twice with two names it is refused.
 *  - the model keys: models/gpt_provider.py (GPTModelProvider), Megatron's
 *    megatron/core/transformer/transformer_config.py and
 *    megatron/core/model_parallel_config.py; the pipeline layout string:
 *    megatron/core/transformer/pipeline_parallel_layer_layout.py.
 *  - mixed precision: training/mixed_precision.py (the recipe names and
 *    what each sets); overlap: training/comm_overlap.py; Megatron-FSDP:
 *    training/config.py (_validate_and_apply_megatron_fsdp_configs).
 *  - the vocabulary: training/setup.py (_validate_and_set_vocab_size: a
 *    model.vocab_size that is set is used unpadded; null takes the
 *    tokenizer's and pads it as Megatron-LM does, to a multiple of
 *    make_vocab_size_divisible_by x TP, GPTModelProvider.provide); the
 *    recipes' NullTokenizer has tokenizer.vocab_size tokens (Megatron's
 *    megatron/core/tokenizers/text/libraries/null_tokenizer.py).
 */
#include "launch.h"
#include "launch_int.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "hw.h"

#define BRIDGE_TARGET "Megatron-Bridge v0.6.0 (NVIDIA-NeMo/Megatron-Bridge@" \
                      "51885cf1, Megatron-Core NVIDIA/Megatron-LM@cd4afffa)"

const char *const launch_nemo_format_names[LAUNCH_NEMO_FORMAT_COUNT] = {
    [LAUNCH_NEMO_BRIDGE] = "bridge",
    [LAUNCH_NEMO_V1] = "nemo1",
};

/* ---- tables ----------------------------------------------------------- */

/* Base recipes: a trainplan preset whose architecture a library recipe
 * builds (recipes/llama/llama3.py aliases them; run_recipe.py finds them
 * by name in megatron.bridge.recipes, recipe_runner.find_library_recipe).
 * GPT-3 175B's alias gpt3_175b_pretrain_config (recipes/gpt/gpt3_175b.py)
 * is not exported by recipes/gpt/__init__.py, so its H100 function is
 * named. Any other model runs on vanilla_gpt_pretrain_config, whose bare
 * GPTModelProvider takes the model's sizes as overrides.
 * comm_overlap: the recipe sets a CommOverlapConfig (recipes/llama/h100/
 * llama3.py and llama2.py, recipes/gpt/h100/gpt3_175b.py: cfg.comm_overlap
 * = CommOverlapConfig(...)); the others leave it None
 * (recipes/common.py _pretrain_common, vanilla_gpt.py). */
const struct launch_nemo_recipe launch_nemo_recipes[] = {
    {"llama2-7b", "llama2_7b_pretrain_config", "recipes/llama/llama2.py", 1},
    {"llama3-8b", "llama3_8b_pretrain_config", "recipes/llama/llama3.py", 0},
    {"llama3-70b", "llama3_70b_pretrain_config", "recipes/llama/llama3.py",
     1},
    {"llama3.1-8b", "llama31_8b_pretrain_config", "recipes/llama/llama3.py",
     0},
    {"llama3.1-70b", "llama31_70b_pretrain_config", "recipes/llama/llama3.py",
     1},
    {"llama3.1-405b", "llama31_405b_pretrain_config",
     "recipes/llama/llama3.py", 1},
    {"gpt3-175b", "gpt3_175b_pretrain_32gpu_h100_bf16_config",
     "recipes/gpt/h100/gpt3_175b.py", 1},
};
_Static_assert(sizeof launch_nemo_recipes / sizeof launch_nemo_recipes[0]
                   == LAUNCH_NEMO_RECIPE_COUNT,
               "LAUNCH_NEMO_RECIPE_COUNT counts launch_nemo_recipes");
#define GENERIC_FILE "recipes/gpt/vanilla_gpt.py"

/* Mixed-precision recipes (training/mixed_precision.py, the @register'd
 * factories) for a bf16 or fp16 run and for each fp8 scaling; NULL where
 * Bridge has none (torchao's rowwise). fp8_params: the recipe turns on
 * fp8_param_gather; bf16_first_last: it keeps the first and last layers
 * in bf16 (first_last_layers_bf16). */
const struct launch_nemo_mp launch_nemo_mp_fp8[SPACE_FP8_RECIPE_COUNT] = {
    [SPACE_FP8_DELAYED] = {"bf16_with_fp8_delayed_scaling_mixed", 1, 0},
    [SPACE_FP8_TENSORWISE] = {"bf16_with_fp8_current_scaling_mixed", 1, 1},
    [SPACE_FP8_ROWWISE] = {NULL, 0, 0},
    [SPACE_FP8_BLOCKWISE] = {"bf16_with_fp8_subchannel_scaling_mixed", 0, 0},
    [SPACE_FP8_MXFP8] = {"bf16_with_mxfp8_mixed", 1, 0},
};
_Static_assert(sizeof launch_nemo_mp_fp8 / sizeof launch_nemo_mp_fp8[0]
                   == SPACE_FP8_RECIPE_COUNT,
               "launch_nemo_mp_fp8 mirrors space_fp8_recipe");

/* Megatron-FSDP's sharding strategy for a ZeRO stage (ddp.data_parallel_
 * sharding_strategy; Megatron's distributed_data_parallel_config.py). */
static const char *const nemo_sharding[SPACE_ZERO_COUNT] = {
    [SPACE_ZERO_NONE] = "no_shard",
    [SPACE_ZERO_1] = "optim",
    [SPACE_ZERO_2] = "optim_grads",
    [SPACE_ZERO_3] = "optim_grads_params",
};
_Static_assert(sizeof nemo_sharding / sizeof nemo_sharding[0]
                   == SPACE_ZERO_COUNT,
               "nemo_sharding mirrors space_zero");

/* GPTModelProvider's activation (utils/activation_map.py names) and
 * gated_linear_unit for each space_act. */
const struct launch_nemo_act launch_nemo_act[SPACE_ACT_COUNT] = {
    [SPACE_ACT_GELU] = {"gelu", 0},
    [SPACE_ACT_RELU] = {"relu", 0},
    [SPACE_ACT_SQUARED_RELU] = {"squared_relu", 0},
    [SPACE_ACT_SWIGLU] = {"silu", 1},
    [SPACE_ACT_GEGLU] = {"gelu", 1},
};
_Static_assert(sizeof launch_nemo_act / sizeof launch_nemo_act[0] == SPACE_ACT_COUNT,
               "launch_nemo_act mirrors space_act");

static const char *const nemo_norm[SPACE_NORM_COUNT] = {
    [SPACE_NORM_LAYERNORM] = "LayerNorm",
    [SPACE_NORM_RMSNORM] = "RMSNorm",
};
_Static_assert(sizeof nemo_norm / sizeof nemo_norm[0] == SPACE_NORM_COUNT,
               "nemo_norm mirrors space_norm");

/* GPTModelProvider.position_embedding_type; NULL: none it offers. */
static const char *const nemo_pos[SPACE_POS_COUNT] = {
    [SPACE_POS_LEARNED] = "learned_absolute",
    [SPACE_POS_ROPE] = "rope",
    [SPACE_POS_ALIBI] = NULL,
    [SPACE_POS_NONE] = NULL,
};
_Static_assert(sizeof nemo_pos / sizeof nemo_pos[0] == SPACE_POS_COUNT,
               "nemo_pos mirrors space_pos");

/* ---- the model -------------------------------------------------------- */

int64_t launch_nemo_head_dim_of(const space_model *m)
{
    return m->head_dim > 0 ? m->head_dim : m->hidden / m->heads;
}

/* The architecture fields trainplan counts, equal in both models. */
static int same_architecture(const space_model *a, const space_model *b)
{
    return a->num_layers == b->num_layers && a->hidden == b->hidden
           && a->heads == b->heads && a->kv_heads == b->kv_heads
           && launch_nemo_head_dim_of(a) == launch_nemo_head_dim_of(b)
           && a->ffn_hidden == b->ffn_hidden
           && a->vocab == b->vocab && a->act == b->act && a->norm == b->norm
           && a->pos == b->pos && a->tied_embeddings == b->tied_embeddings
           && a->qkv_bias == b->qkv_bias && a->out_bias == b->out_bias
           && a->mlp_bias == b->mlp_bias && a->embed_norm == b->embed_norm
           && a->num_experts == b->num_experts
           && (a->pos != SPACE_POS_LEARNED || a->max_position == b->max_position);
}

/* The base recipe of m: a row of launch_nemo_recipes, or NULL for the generic. */
static const struct launch_nemo_recipe *recipe_of(const space_model *m)
{
    for (int i = 0; i < LAUNCH_NEMO_RECIPE_COUNT; i++) {
        tp_err e = {0};
        const space_model *p = space_preset_find(launch_nemo_recipes[i].preset, &e);
        if (p && strcmp(p->name, m->name) == 0 && same_architecture(p, m))
            return &launch_nemo_recipes[i];
    }
    return NULL;
}

/* ---- writing ---------------------------------------------------------- */

const char *launch_nemo_tf(int v)
{
    return v ? "true" : "false";
}

/* x in the fewest digits that read back to the same double, so the
 * reader's estimate is the writer's (0.1, not 0.10000000000000001). */
void launch_nemo_put_num(launch_text *b, const char *key, const char *sep,
                         double x)
{
    char s[40];
    for (int p = 6; p <= 17; p++) {
        snprintf(s, sizeof s, "%.*g", p, x);
        if (strtod(s, NULL) == x) break;
    }
    launch_text_put(b, "%s%s%s\n", key, sep, s);
}

/* Mixture of experts as GPTModelProvider keys: TransformerConfig's moe_*
 * fields (Megatron-Core at cd4afffa, transformer_config.py), each an
 * override of the same name; the placement of the MoE layers as
 * moe_layer_freq, an int N (layer i MoE when i % N == 0, Megatron-Core's
 * gpt_layer_specs.py) or the list of 0 and 1 per layer it also takes
 * (Union[int, List[int]]). The router's balancing as launch_megatron.c
 * writes it (the same sources). MLA needs MLATransformerConfig's
 * fields, which GPTModelProvider lacks: a comment. */
static void put_bridge_moe(const space_model *m, launch_text *b)
{
    if (m->kv_lora_rank > 0)
        launch_text_put(b, "# not expressible: multi-head latent attention (KV "
                "rank %lld): GPTModelProvider has no MLA fields (Megatron-"
                "Bridge's DeepSeek providers do)\n",
            (long long)m->kv_lora_rank);
    if (m->qk_norm) launch_text_put(b, "model.qk_layernorm=true\n");
    if (m->mtp_layers > 0)
        launch_text_put(b, "model.mtp_num_layers=%lld\n", (long long)m->mtp_layers);
    if (m->num_experts <= 0) return;
    launch_text_put(b, "model.num_moe_experts=%lld\nmodel.moe_router_topk=%lld\n"
            "model.moe_ffn_hidden_size=%lld\n",
        (long long)m->num_experts, (long long)m->top_k,
        (long long)m->expert_ffn_hidden);
    if (m->shared_experts > 0)
        launch_text_put(b, "model.moe_shared_expert_intermediate_size=%lld\n"
                "model.moe_shared_expert_gate=%s\n",
            (long long)(m->shared_experts * m->shared_ffn_hidden),
            launch_nemo_tf(m->shared_expert_gate));
    int64_t L = m->num_layers, k = m->first_dense_layers;
    int64_t f = m->moe_layer_freq > 0 ? m->moe_layer_freq : 1;
    if (k <= 0) {
        launch_text_put(b, "model.moe_layer_freq=%lld\n", (long long)f);
    } else {
        launch_text_put(b, "model.moe_layer_freq=[");
        for (int64_t i = 0; i < L; i++)
            launch_text_put(b, "%s%d", i ? "," : "",
                         i >= k && (i - k) % f == 0);
        launch_text_put(b, "]\n");
    }
    launch_text_put(b, "model.moe_router_score_function=%s\n",
        m->router_sigmoid ? "sigmoid" : "softmax");
    if (m->router_sigmoid)
        launch_text_put(b, "model.moe_router_enable_expert_bias=true\n"
                "model.moe_router_load_balancing_type=seq_aux_loss\n"
                "model.moe_aux_loss_coeff=1e-4\n");
    else
        launch_text_put(b, "model.moe_router_load_balancing_type=aux_loss\n"
                "model.moe_aux_loss_coeff=1e-2\n"
                "model.moe_router_pre_softmax=%s\n", launch_nemo_tf(m->top_k == 1));
    if (m->router_groups > 0)
        launch_text_put(b, "model.moe_router_num_groups=%lld\n"
                "model.moe_router_group_topk=%lld\n",
            (long long)m->router_groups, (long long)m->router_topk_groups);
    if (m->capacity_factor > 0)
        launch_nemo_put_num(b, "model.moe_expert_capacity_factor", "=",
                            m->capacity_factor);
    launch_text_put(b, "model.moe_grouped_gemm=true\n");
    if (m->router_bias)
        launch_text_put(b, "# not expressible: the router's bias (gpt-oss): no "
                "Megatron-Core key; the same GEMM\n");
}

/* The expert layout: ModelParallelConfig's expert_* fields and the
 * dispatcher, always written (Megatron-Core's default dispatcher is
 * allgather, trainplan's all-to-all). */
static void put_bridge_experts(const space_model *m, const space_layout *l,
                               launch_text *b)
{
    if (m->num_experts <= 0) return;
    launch_text_put(b, "model.expert_model_parallel_size=%lld\n"
            "model.expert_tensor_parallel_size=%lld\n"
            "model.moe_token_dispatcher_type=%s\n",
        (long long)space_layout_ep(l), (long long)space_layout_etp(l),
        space_moe_dispatcher_name(l));
    /* the dispatch's overlaps: TransformerConfig's fields of the
     * Megatron-LM flags (launch_megatron.c moe_args) */
    if (l->moe_comm_overlap == SPACE_MOE_OVERLAP_SHARED)
        launch_text_put(b, "model.moe_shared_expert_overlap=true\n");
    if (l->moe_comm_overlap == SPACE_MOE_OVERLAP_A2A)
        launch_text_put(b, "model.overlap_moe_expert_parallel_comm=true\n"
                "model.delay_wgrad_compute=true\n");
    /* the flex dispatcher's backend and the router's padding for fp8
     * (launch_megatron.c moe_args) */
    if (l->moe_dispatcher == SPACE_MOE_FLEX)
        launch_text_put(b, "model.moe_flex_dispatcher_backend=%s\n",
            space_moe_flex_backend_name(l));
    if (l->moe_router_pad)
        launch_text_put(b, "model.moe_router_padding_for_quantization=true\n");
    /* Transformer Engine's fused permutation, as the step time assumes;
     * unfused where the layout's memory says so */
    launch_text_put(b, "model.moe_permute_fusion=%s\n",
                    launch_nemo_tf(l->moe_permute_fusion));
    /* and the fused router (TransformerConfig moe_router_fusion) */
    launch_text_put(b, "model.moe_router_fusion=%s\n",
                    launch_nemo_tf(l->moe_router_fusion));
}

/* The model's sizes as GPTModelProvider keys (the generic recipe), and
 * comments for what GPTModelProvider cannot build. */
static void put_bridge_model(const space_model *m, int64_t seq, launch_text *b)
{
    launch_text_put(b,
        "model.num_layers=%lld\nmodel.hidden_size=%lld\n"
        "model.num_attention_heads=%lld\nmodel.num_query_groups=%lld\n"
        "model.kv_channels=%lld\nmodel.ffn_hidden_size=%lld\n"
        "model.normalization=%s\nmodel.activation_func=%s\n"
        "model.gated_linear_unit=%s\n",
        (long long)m->num_layers, (long long)m->hidden, (long long)m->heads,
        (long long)m->kv_heads, (long long)launch_nemo_head_dim_of(m),
        (long long)m->ffn_hidden, nemo_norm[m->norm], launch_nemo_act[m->act].func,
        launch_nemo_tf(launch_nemo_act[m->act].glu));
    if (nemo_pos[m->pos])
        launch_text_put(b, "model.position_embedding_type=%s\n", nemo_pos[m->pos]);
    /* Megatron-Core biases: Q, K, V have one where add_bias_linear or
     * add_qkv_bias; the output projection and the MLP where
     * add_bias_linear (transformer_config.py, attention.py). */
    int linear = m->out_bias && m->mlp_bias;
    launch_text_put(b,
        "model.share_embeddings_and_output_weights=%s\n"
        "model.add_bias_linear=%s\nmodel.add_qkv_bias=%s\n",
        launch_nemo_tf(m->tied_embeddings), launch_nemo_tf(linear),
        launch_nemo_tf(m->qkv_bias && !linear));
    if (m->out_bias != m->mlp_bias || (linear && !m->qkv_bias))
        launch_text_put(b, "# not expressible: "
                "biases (Q/K/V %d, output %d, MLP %d): Megatron-Core "
                "sets the output and MLP ones together (add_bias_linear)\n",
            m->qkv_bias, m->out_bias, m->mlp_bias);
    /* RoPE's share and base, local attention, sinks (TransformerConfig
     * rotary_percent, rotary_base, window_size, window_attn_skip_freq,
     * softmax_type; a window of W tokens is [W - 1, 0] as
     * models/mistral/mistral_bridge.py converts sliding_window; the
     * provider's defaults 1.0, 10000, none, vanilla) */
    if (m->pos == SPACE_POS_ROPE && m->rotary_fraction > 0
        && m->rotary_fraction < 1)
        launch_text_put(b, "model.rotary_percent=%g\n", m->rotary_fraction);
    if (m->pos == SPACE_POS_ROPE && m->rope_theta > 0 && m->rope_theta != 10000
        && m->rope_theta == floor(m->rope_theta) && m->rope_theta < 2e9)
        launch_text_put(b, "model.rotary_base=%.0f\n", m->rope_theta);
    if (m->window > 0 && !m->window_chunked) {
        launch_text_put(b, "model.window_size=[%lld,0]\n",
            (long long)(m->window - 1));
        if (m->global_every > 0)
            launch_text_put(b, "model.window_attn_skip_freq=%lld\n",
                (long long)m->global_every);
    } else if (m->window > 0) {
        launch_text_put(b, "# not expressible: chunked local attention (Llama "
                "4, chunks of %lld): Megatron-Core has sliding windows only; "
                "these keys attend to the whole context\n",
            (long long)m->window);
    }
    if (m->attn_sinks) launch_text_put(b, "model.softmax_type=learnable\n");
    if (!nemo_pos[m->pos])
        launch_text_put(b, "# not expressible: "
                "position embedding %s: GPTModelProvider offers "
                "learned_absolute, rope, yarn\n",
            space_pos_names[m->pos]);
    if (m->pos == SPACE_POS_LEARNED && m->max_position != seq)
        launch_text_put(b, "# not expressible: "
                "learned positions: the estimate counted %lld, "
                "Megatron-Core builds seq_length (%lld)\n",
            (long long)m->max_position, (long long)seq);
    if (m->parallel_attn_mlp)
        launch_text_put(b, "# parallel attention and MLP residual (GPT-J/NeoX): no "
                "GPTModelProvider key; the estimate's counts do not depend "
                "on it\n");
    if (m->embed_norm)
        launch_text_put(b, "# not expressible: "
                "a norm on the embedding output (BLOOM): no "
                "GPTModelProvider key\n");
    put_bridge_moe(m, b);
}

/* Megatron-Bridge's keys of the memory savers and micro-batch groups
 * (OptimizerConfig and TransformerConfig fields, ConfigContainer at
 * v0.6.0). The precision-aware switch is always written: recipes set it
 * either way (recipes/deepseek/h100/deepseek_v3.py: True with bf16
 * moments). Dtypes are strings Bridge turns into torch.dtype
 * (utils/activation_map.py, str_to_dtype); its "fp8" is
 * torch.float8_e4m3fn, not the torch.uint8 Transformer Engine's FusedAdam
 * takes for fp8 moments, so those are not expressible. The precision-aware
 * optimizer wants optimizer.bf16/fp16 as the model's (config.py,
 * _validate_mixed_precision_consistency). */
static void bridge_savers(const space_layout *l, launch_text *b)
{
    launch_text_put(b, "optimizer.use_precision_aware_optimizer=%s\n",
        launch_nemo_tf(l->pa_optimizer));
    if (l->pa_optimizer) {
        launch_text_put(b, "optimizer.bf16=%s\noptimizer.fp16=%s\n",
            launch_nemo_tf(l->dtype != HW_FP16),
            launch_nemo_tf(l->dtype == HW_FP16));
        static const struct {
            const char *key;
            size_t off;
        } dts[] = {
            {"optimizer.main_grads_dtype", offsetof(space_layout,
                                                    main_grads_dtype)},
            {"optimizer.main_params_dtype", offsetof(space_layout,
                                                     main_params_dtype)},
            {"optimizer.exp_avg_dtype", offsetof(space_layout, exp_avg_dtype)},
            {"optimizer.exp_avg_sq_dtype", offsetof(space_layout,
                                                    exp_avg_sq_dtype)}};
        for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
            int d;
            memcpy(&d, (const char *)l + dts[i].off, sizeof d);
            if (d == SPACE_OPT_FP8)
                launch_text_put(b, "# not expressible: %s fp8 (Megatron-Bridge "
                        "reads 'fp8' as torch.float8_e4m3fn; Transformer "
                        "Engine's FusedAdam takes fp8 states as torch.uint8): "
                        "set it in the recipe\n", dts[i].key);
            else
                launch_text_put(b, "%s=%s\n", dts[i].key, space_opt_dtype_name(d));
        }
    }
    if (l->opt_offload > 0)
        launch_text_put(b, "optimizer.optimizer_cpu_offload=true\n"
                "optimizer.optimizer_offload_fraction=%g\n"
                "optimizer.overlap_cpu_optimizer_d2h_h2d=%s\n",
            l->opt_offload, launch_nemo_tf(l->opt_offload_overlap));
    if (l->act_offload_layers > 0)
        launch_text_put(b, "model.cpu_offloading=true\n"
                "model.cpu_offloading_num_layers=%lld\n"
                "model.cpu_offloading_activations=true\n"
                "model.cpu_offloading_weights=false\n",
            (long long)l->act_offload_layers);
    if (l->offload_modules) {
        char names[160];
        space_off_modules_str(l->offload_modules, ",", names, sizeof names);
        /* config.py _validate_fine_grained_activation_offloading wants
         * NVTE_CPU_OFFLOAD_V1=1 (Transformer Engine >= 2.10): set through
         * ConfigContainer.env_vars, which run_recipe.py applies
         * (recipe_runner.apply_runtime_environment), as Bridge's own
         * perf_recipes/nemotronh/gb200/nemotronh.py does */
        launch_text_put(b, "model.fine_grained_activation_offloading=true\n"
                "model.offload_modules=[%s]\n"
                "model.activation_offload_fraction=%g\n"
                "++env_vars.NVTE_CPU_OFFLOAD_V1=1\n",
            names, l->offload_fraction > 0 ? l->offload_fraction : 1);
    }
    if (l->mb_group > 0 && l->vpp > 1)
        launch_text_put(b, "model.microbatch_group_size_per_vp_stage=%lld\n",
            (long long)l->mb_group);
    if (l->pp_schedule != SPACE_PP_1F1B)
        launch_text_put(b, "# not expressible: the %s pipeline schedule: "
                "Megatron-Core runs 1F1B and interleaved 1F1B only\n",
            space_pp_schedule_name(l));
    if (l->dtype == HW_FP8 && l->fp8_act_cache == SPACE_FP8_ACT_DEEPSEEK_V3)
        launch_text_put(b, "# not expressible: the activations kept as "
                "DeepSeek-V3's framework keeps them (--fp8-activation-cache "
                "deepseek-v3): Megatron-Core keeps Transformer Engine's, more "
                "memory than estimated\n");
}

static void bridge_write(const launch_plan *c, launch_text *b)
{
    const space_layout *l = c->layout;
    const space_model *m = c->model;
    int64_t g, nodes = launch_nodes(c, &g);
    const struct launch_nemo_recipe *rc = recipe_of(m);
    const char *recipe = rc ? rc->recipe : LAUNCH_NEMO_GENERIC_RECIPE;
    launch_text_put(b, "# " BRIDGE_TARGET ": ConfigContainer overrides for "
            "scripts/training/run_recipe.py\n");
    launch_text_put(b, "# launch: torchrun --nnodes %lld --nproc-per-node %lld "
            "scripts/training/run_recipe.py --recipe %s --mode pretrain "
            "<the key=value lines below>\n",
        (long long)nodes, (long long)g, recipe);
    if (rc)
        launch_text_put(b, "# base recipe %s (%s): the %s architecture\n", recipe,
            rc->file, m->name);
    else
        launch_text_put(b, "# base recipe %s (%s): a bare GPTModelProvider with "
                "%s's sizes below\n",
            recipe, GENERIC_FILE, m->name);
    if (l->framework != SPACE_FW_MEGATRON_CORE)
        launch_text_put(b, "# estimated for %s's software; these keys run "
                "Megatron-Core's\n",
            space_framework_names[l->framework]);
    if (!rc) put_bridge_model(m, l->seq, b);
    /* The vocabulary padded as trainplan pads it: model.vocab_size null
     * takes the tokenizer's and pads it (setup.py). */
    launch_text_put(b, "model.vocab_size=null\ntokenizer.vocab_size=%lld\n"
            "model.make_vocab_size_divisible_by=128\n",
        (long long)m->vocab);
    launch_nemo_put_num(b, "model.attention_dropout", "=", m->attn_dropout);
    launch_nemo_put_num(b, "model.hidden_dropout", "=", m->hidden_dropout);

    int64_t v = l->vpp > 1 ? l->vpp : 1;
    launch_text_put(b, "model.tensor_model_parallel_size=%lld\n"
            "model.pipeline_model_parallel_size=%lld\n",
        (long long)l->tp, (long long)l->pp);
    if (v > 1)
        launch_text_put(b, "model.virtual_pipeline_model_parallel_size=%lld\n",
            (long long)v);
    else
        launch_text_put(b, "model.virtual_pipeline_model_parallel_size=null\n");
    /* The split as the estimate has it (split.c), as TransformerConfig's
     * fields of the model provider (Megatron-Core transformer_config.py:
     * pipeline_model_parallel_layout, account_for_embedding/loss_in_
     * pipeline_split, num_layers_in_first/last_pipeline_stage). */
    int acc = l->pp_account > 0 ? l->pp_account : 0;
    if (l->pp_layout)
        launch_text_put(b, "model.pipeline_model_parallel_layout=\"%s\"\n",
            l->pp_layout->text);
    else
        launch_text_put(b, "model.pipeline_model_parallel_layout=null\n");
    launch_text_put(b, "model.account_for_embedding_in_pipeline_split=%s\n"
            "model.account_for_loss_in_pipeline_split=%s\n",
        launch_nemo_tf(acc & SPACE_PP_EMBED), launch_nemo_tf(acc & SPACE_PP_LOSS));
    if (l->pp_first > 0)
        launch_text_put(b, "model.num_layers_in_first_pipeline_stage=%lld\n",
            (long long)l->pp_first);
    else
        launch_text_put(b, "model.num_layers_in_first_pipeline_stage=null\n");
    if (l->pp_last > 0)
        launch_text_put(b, "model.num_layers_in_last_pipeline_stage=%lld\n",
            (long long)l->pp_last);
    else
        launch_text_put(b, "model.num_layers_in_last_pipeline_stage=null\n");
    {
        char why[200];
        space_split sp;
        if (space_split_resolve(m, l, &sp, why, sizeof why) != SPACE_OK)
            launch_text_put(b, "# Megatron-Core refuses this pipeline split: "
                    "%s\n", why);
    }
    launch_text_put(b, "model.context_parallel_size=%lld\nmodel.cp_comm_type=%s\n",
        (long long)l->cp, space_cp_comm_names[l->cp_comm]);
    launch_text_put(b, "model.sequence_parallel=%s\n",
                    launch_nemo_tf(l->sp && l->tp > 1));
    put_bridge_experts(m, l, b);
    launch_text_put(b, "train.micro_batch_size=%lld\ntrain.global_batch_size=%lld\n"
            "dataset.seq_length=%lld\nmodel.seq_length=%lld\n",
        (long long)l->mbs, (long long)l->gbs, (long long)l->seq,
        (long long)l->seq);

    /* Selective recompute reruns Megatron-Core's recompute_modules
     * (transformer_config.py; core_attn unless asked otherwise). */
    if (l->recompute == SPACE_RECOMPUTE_SELECTIVE) {
        char names[160];
        space_rc_modules_str(space_recompute_modules(l), ",", names,
                             sizeof names);
        launch_text_put(b, "model.recompute_granularity=selective\n"
                "model.recompute_modules=[%s]\n"
                "model.recompute_method=null\nmodel.recompute_num_layers=null\n",
            names);
    } else if (l->recompute == SPACE_RECOMPUTE_FULL)
        launch_text_put(b, "model.recompute_granularity=full\n"
                "model.recompute_method=%s\nmodel.recompute_num_layers=%lld\n",
            space_recompute_method_names[l->recompute_method],
            (long long)(l->recompute_layers > 0 ? l->recompute_layers : 1));
    else if (l->recompute == SPACE_RECOMPUTE_NONE)
        launch_text_put(b, "model.recompute_granularity=null\n"
                "model.recompute_method=null\nmodel.recompute_num_layers=null\n");
    else
        launch_text_put(b, "# not expressible: "
                "recompute %s (torchtitan's op-level policy): no "
                "Megatron-Core key; recompute left as the recipe has it\n",
            space_recompute_names[l->recompute]);

    /* Precision: a registered recipe name (a string replaces the recipe's
     * mixed_precision whole; its fields cannot be overridden after). */
    if (l->dtype == HW_FP8) {
        const struct launch_nemo_mp *mp = &launch_nemo_mp_fp8[l->fp8_recipe];
        if (mp->name) {
            launch_text_put(b, "mixed_precision=%s\n", mp->name);
            if (mp->fp8_params && !l->fp8_params)
                launch_text_put(b, "# not expressible: %s gathers fp8 parameters "
                        "(fp8_param_gather=True); the estimate kept 16-bit "
                        "ones (trainplan --fp8-param-gather estimates the "
                        "recipe's)\n",
                    mp->name);
            if (mp->bf16_first_last)
                launch_text_put(b, "# not expressible: "
                        "%s keeps the first and last layers in "
                        "bf16; the estimate ran every layer in fp8\n",
                    mp->name);
        } else {
            launch_text_put(b, "# not expressible: "
                    "fp8 %s scaling: no Megatron-Bridge mixed-"
                    "precision recipe\n",
                space_fp8_recipe_names[l->fp8_recipe]);
        }
        if (l->fp8_lib != SPACE_FP8_LIB_TE)
            launch_text_put(b, "# not expressible: "
                    "estimated for torchao's fp8; Megatron-Bridge "
                    "runs Transformer Engine's\n");
    } else if (l->dtype == HW_FP4) {
        /* fp4 'e2m1', fp4_recipe nvfp4 (mixed_precision.py) */
        launch_text_put(b, "mixed_precision=bf16_with_nvfp4_mixed\n"
                "# not expressible: bf16_with_nvfp4_mixed gathers fp4 "
                "parameters (fp4_param_gather=True); the estimate kept "
                "16-bit ones with Transformer Engine's NVFP4 weight copies\n");
    } else {
        launch_text_put(b, "mixed_precision=%s\n",
            l->dtype == HW_FP16 ? "fp16_mixed" : "bf16_mixed");
    }
    /* fp8 attention: MixedPrecisionConfig.fp8_dot_product_attention, which
     * the recipe's setup copies onto the model config, and a recipe given
     * by name cannot be overridden field by field (above) */
    if (space_fp8_attention(l))
        launch_text_put(b, "# not expressible: fp8 dot-product attention "
                "(MixedPrecisionConfig.fp8_dot_product_attention=True in a "
                "recipe of your own); this recipe runs 16-bit attention\n");
    /* bf16 recipes reduce gradients in fp32, fp16_mixed in fp16
     * (mixed_precision.py; copied onto ddp). */
    int recipe_grad = l->dtype == HW_FP16 ? 2 : 4;
    if (space_grad_bytes(l) != recipe_grad)
        launch_text_put(b, "# not expressible: "
                "gradients reduced in %s by the estimate; the "
                "recipe reduces them in %s\n",
            space_grad_bytes(l) >= 4 ? "fp32" : "16 bits",
            recipe_grad >= 4 ? "fp32" : "16 bits");

    /* ZeRO: the distributed optimizer (ZeRO-1) or Megatron-FSDP, which
     * needs the fsdp_dtensor checkpoint format (config.py). */
    if (l->zero >= SPACE_ZERO_2) {
        launch_text_put(b, "ddp.use_distributed_optimizer=true\n"
                "ddp.use_megatron_fsdp=true\n"
                "ddp.data_parallel_sharding_strategy=%s\n"
                "checkpoint.ckpt_format=fsdp_dtensor\n",
            nemo_sharding[l->zero]);
        if (l->fsdp_double_buffer)
            launch_text_put(b, "ddp.fsdp_double_buffer=true\n");
    } else
        launch_text_put(b, "ddp.use_distributed_optimizer=%s\n"
                "ddp.use_megatron_fsdp=false\n"
                "ddp.data_parallel_sharding_strategy=no_shard\n",
            launch_nemo_tf(l->zero == SPACE_ZERO_1));
    /* Bridge turns the distributed optimizer and the parameter-gather
     * overlap on in both ddp and optimizer when either asks
     * (config.py, _validate_and_sync_distributed_optimizer_settings), and
     * the recipes' optimizers ask: both are written. */
    int pgo = !l->no_dp_overlap && l->zero >= SPACE_ZERO_1;
    launch_text_put(b, "optimizer.use_distributed_optimizer=%s\n",
        launch_nemo_tf(l->zero >= SPACE_ZERO_1));
    launch_text_put(b, "ddp.overlap_grad_reduce=%s\nddp.overlap_param_gather=%s\n"
            "optimizer.overlap_param_gather=%s\n",
        launch_nemo_tf(!l->no_dp_overlap), launch_nemo_tf(pgo),
        launch_nemo_tf(pgo));

    bridge_savers(l, b);

    /* TP overlap: userbuffers (comm_overlap.tp_comm_overlap) needs TP > 1
     * and sequence parallelism, else comm_overlap.py turns it off. */
    int ub = l->tp > 1 && l->tp_overlap == SPACE_TP_OVERLAP_ALL && l->sp;
    if (!rc || !rc->comm_overlap)
        launch_text_put(b, "++comm_overlap._target_="
                        LAUNCH_NEMO_COMM_OVERLAP_TARGET "\n");
    launch_text_put(b, "++comm_overlap.tp_comm_overlap=%s\n", launch_nemo_tf(ub));
    if (l->tp > 1 && l->tp_overlap == SPACE_TP_OVERLAP_ALL && !l->sp)
        launch_text_put(b, "# not expressible: "
                "every TP collective overlapped without sequence "
                "parallelism: Megatron-Bridge overlaps them only with it\n");
    if (l->tp > 1 && l->tp_overlap == SPACE_TP_OVERLAP_NONE)
        launch_text_put(b, "# not expressible: "
                "TP collectives not overlapped: Megatron-Core "
                "overlaps the backward's; no key turns that off\n");
    if (l->tp > 1 && (l->tp_overlap == SPACE_TP_OVERLAP_DTENSOR
                      || l->tp_overlap == SPACE_TP_OVERLAP_ASYNC))
        launch_text_put(b, "# not expressible: "
                "estimated for PyTorch DTensor TP%s, not "
                "Megatron-Core's\n",
            l->tp_overlap == SPACE_TP_OVERLAP_ASYNC ? " with AsyncTP" : "");
    if (l->pp > 1 && v > 1)
        launch_text_put(b, "++comm_overlap.overlap_p2p_comm=%s\n"
                "++comm_overlap.batch_p2p_comm=%s\n",
            launch_nemo_tf(!l->no_pp_overlap), launch_nemo_tf(l->no_pp_overlap));
    launch_text_put(b, "model.cross_entropy_loss_fusion=%s\n",
        launch_nemo_tf(l->ce_fusion || l->ce_te));
    if (l->ce_fusion || l->ce_te)
        launch_text_put(b, "model.cross_entropy_fusion_impl=%s\n",
            l->ce_te ? "te" : "native");
    /* CUDA graphs (TransformerConfig.cuda_graph_impl, cuda_graph_scope,
     * Megatron-Core cd4afffa): their memory pool and the host calls they
     * save are estimated (estimator/host.c) */
    /* Megatron-Bridge v0.6.0 takes "local" only for the full iteration
     * (utils/cuda_graph.py validate_cuda_graph_configuration: scoped
     * capture is transformer_engine's); the full iteration wants the NaN
     * check off (config.py ConfigContainer.validate). */
    if (l->cuda_graph == SPACE_CG_LOCAL) {
        launch_text_put(b, "# not expressible: per-layer CUDA graphs of "
                "Megatron-Core's local implementation: Megatron-Bridge takes "
                "cuda_graph_impl=local only for the full iteration "
                "(transformer_engine captures layers); no graphs set\n");
    } else if (l->cuda_graph) {
        launch_text_put(b, "model.cuda_graph_impl=%s\n", space_cuda_graph_name(l));
        if (l->cuda_graph_modules && l->cuda_graph == SPACE_CG_TE) {
            char names[96];
            space_cgm_str(l->cuda_graph_modules, ",", names, sizeof names);
            launch_text_put(b, "model.cuda_graph_scope=[%s]\n", names);
        }
        if (l->cuda_graph == SPACE_CG_FULL_ITERATION)
            launch_text_put(b, "rerun_state_machine.check_for_nan_in_loss=false\n");
    }
    /* The recipes leave attention_backend None: Transformer Engine picks
     * (the estimate's auto). A Hydra string is not turned into Megatron's
     * AttnBackend enum (omegaconf_utils.py converts dtypes and activations
     * only), so another backend can only be named in a comment. */
    launch_text_put(b, "model.attention_backend=null\n");
    if (l->flash != SPACE_ATTN_AUTO)
        launch_text_put(b, "# not expressible: "
                "attention backend %s: set model.attention_backend "
                "= AttnBackend.%s in the recipe (an override string is not "
                "converted to the enum)\n",
            space_attn_names[l->flash], space_attn_names[l->flash]);

    if (l->pp_scatter_gather)
        launch_text_put(b, "# not expressible: "
                "pipeline sends scatter/gathered over TP: no "
                "Megatron-Core key\n");
    if (l->eager)
        launch_text_put(b, "# not expressible: "
                "estimated for eager PyTorch kernels\n");
    if (l->param_fp32)
        launch_text_put(b, "# not expressible: "
                "estimated with fp32 parameters and no master copy "
                "(PyTorch FSDP); Megatron keeps 16-bit weights and an fp32 "
                "master\n");
    if (l->n_docs > 0)
        launch_text_put(b, "# not expressible: "
                "packed documents: set the dataset's packing; no "
                "override expresses the estimate's length buckets\n");
    /* gpt3_175b's recipe defers the LM head's weight gradient
     * (recipes/gpt/h100/gpt3_175b.py, CommOverlapConfig): say what the
     * estimate assumed either way. */
    if (l->wgrad_defer)
        launch_text_put(b, "++comm_overlap.defer_embedding_wgrad_compute=true\n"
                "++comm_overlap.wgrad_deferral_limit=%lld\n",
            (long long)l->wgrad_defer);
    else
        launch_text_put(b, "++comm_overlap.defer_embedding_wgrad_compute=false\n");
}

/* NeMo 1's MoE keys: expert_model_parallel_size (megatron_gpt_config.yaml)
 * and what megatron_gpt_model.py reads with cfg.get (num_moe_experts,
 * moe_router_topk, moe_grouped_gemm, moe_router_load_balancing_type,
 * moe_aux_loss_coeff); the rest has no key there. */

void launch_nemo(const launch_plan *c, launch_text *b)
{
    if (c->nemo_format == LAUNCH_NEMO_V1)
        launch_nemo1_write(c, b);
    else
        bridge_write(c, b);
}

/* ---- as data ------------------------------------------------------------ */

cJSON *launch_nemo_json(const char *text, int format)
{
    int v1 = format == LAUNCH_NEMO_V1;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "format",
                            launch_nemo_format_names[v1 ? LAUNCH_NEMO_V1
                                                     : LAUNCH_NEMO_BRIDGE]);
    cJSON *kv = cJSON_AddObjectToObject(o, "overrides");
    cJSON *notes = cJSON_AddArrayToObject(o, "notes");
    char *buf = tp_xstrdup(text ? text : ""), *p = buf, *line;
    while ((line = launch_next_line(&p)) != NULL) {
        if (!*line) continue;
        if (*line == '#') {
            launch_json_comment(notes, line);
            continue;
        }
        /* bridge: key=value; nemo1: key: value, maybe "  # why" after */
        char *sep = v1 ? strstr(line, ": ") : strchr(line, '=');
        if (!sep) { /* not written: a line of neither form */
            cJSON_AddItemToArray(notes, cJSON_CreateString(line));
            continue;
        }
        *sep = '\0';
        char *val = sep + (v1 ? 2 : 1);
        char *why = v1 ? strstr(val, "  # ") : NULL;
        if (why) {
            *why = '\0';
            size_t n = strlen(line) + strlen(why + 4) + 3;
            char *note = tp_xmalloc(n);
            snprintf(note, n, "%s: %s", line, why + 4);
            cJSON_AddItemToArray(notes, cJSON_CreateString(note));
            free(note);
        }
        launch_json_set(kv, line, val);
    }
    free(buf);
    return o;
}
