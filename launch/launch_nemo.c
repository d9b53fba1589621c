/*
 * launch_nemo.c - NeMo's job for a layout, written and read back.
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
 * The reader takes either form back (and "key: value" YAML lines, and a
 * torchrun ... run_recipe.py command line, or a launch script of one read
 * through the shell expander, launch_shell.c) into the options the command
 * line would set. It does not run Hydra: it reads the keys trainplan
 * writes and the model keys of GPTModelProvider, refuses other model,
 * ddp, mixed-precision and comm-overlap keys (it cannot tell what they
 * change) and skips the sections that do not change an iteration
 * (checkpoint, logger, optimizer, scheduler, ...).
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

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "hw.h"

#define BRIDGE_TARGET "Megatron-Bridge v0.6.0 (NVIDIA-NeMo/Megatron-Bridge@" \
                      "51885cf1, Megatron-Core NVIDIA/Megatron-LM@cd4afffa)"
#define NEMO1_TARGET "NeMo 1.x launcher YAML (examples/nlp/language_modeling/" \
                     "conf/megatron_gpt_config.yaml, NVIDIA/NeMo v2.4.0)"

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
static const struct nemo_recipe {
    const char *preset, *recipe, *file;
    int comm_overlap;
} nemo_recipes[] = {
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
/* What the overrides name for a comm_overlap the recipe left None: Bridge
 * instantiates a dict override with a _target_ (training/utils/
 * omegaconf_utils.py _apply_overrides); without one the "++comm_overlap.*"
 * keys make comm_overlap a plain dict, which ConfigContainer.validate()
 * fails on ('dict' object has no attribute 'data_parallel_size',
 * training/config.py). Not written where the recipe set one: the
 * converted dataclass would be rebuilt from a dict, its
 * tp_comm_overlap_cfg a dict too. */
#define COMM_OVERLAP_TARGET "megatron.bridge.training.comm_overlap.CommOverlapConfig"
#define N_RECIPES ((int)(sizeof nemo_recipes / sizeof nemo_recipes[0]))
#define GENERIC_RECIPE "vanilla_gpt_pretrain_config"
#define GENERIC_FILE "recipes/gpt/vanilla_gpt.py"

/* Mixed-precision recipes (training/mixed_precision.py, the @register'd
 * factories) for a bf16 or fp16 run and for each fp8 scaling; NULL where
 * Bridge has none (torchao's rowwise). fp8_params: the recipe turns on
 * fp8_param_gather; bf16_first_last: it keeps the first and last layers
 * in bf16 (first_last_layers_bf16). */
static const struct nemo_mp {
    const char *name;
    int fp8_params, bf16_first_last;
} nemo_mp_fp8[SPACE_FP8_RECIPE_COUNT] = {
    [SPACE_FP8_DELAYED] = {"bf16_with_fp8_delayed_scaling_mixed", 1, 0},
    [SPACE_FP8_TENSORWISE] = {"bf16_with_fp8_current_scaling_mixed", 1, 1},
    [SPACE_FP8_ROWWISE] = {NULL, 0, 0},
    [SPACE_FP8_BLOCKWISE] = {"bf16_with_fp8_subchannel_scaling_mixed", 0, 0},
    [SPACE_FP8_MXFP8] = {"bf16_with_mxfp8_mixed", 1, 0},
};
_Static_assert(sizeof nemo_mp_fp8 / sizeof nemo_mp_fp8[0]
                   == SPACE_FP8_RECIPE_COUNT,
               "nemo_mp_fp8 mirrors space_fp8_recipe");

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
static const struct {
    const char *func;
    int glu;
} nemo_act[SPACE_ACT_COUNT] = {
    [SPACE_ACT_GELU] = {"gelu", 0},
    [SPACE_ACT_RELU] = {"relu", 0},
    [SPACE_ACT_SQUARED_RELU] = {"squared_relu", 0},
    [SPACE_ACT_SWIGLU] = {"silu", 1},
    [SPACE_ACT_GEGLU] = {"gelu", 1},
};
_Static_assert(sizeof nemo_act / sizeof nemo_act[0] == SPACE_ACT_COUNT,
               "nemo_act mirrors space_act");

/* NeMo 1's model.activation values (megatron_gpt_config.yaml comment). */
static const char *const nemo1_act[SPACE_ACT_COUNT] = {
    [SPACE_ACT_GELU] = "gelu",
    [SPACE_ACT_RELU] = NULL, /* not among NeMo 1's activations */
    [SPACE_ACT_SQUARED_RELU] = "squared-relu",
    [SPACE_ACT_SWIGLU] = "swiglu",
    [SPACE_ACT_GEGLU] = "geglu",
};
_Static_assert(sizeof nemo1_act / sizeof nemo1_act[0] == SPACE_ACT_COUNT,
               "nemo1_act mirrors space_act");

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

static int64_t head_dim_of(const space_model *m)
{
    return m->head_dim > 0 ? m->head_dim : m->hidden / m->heads;
}

/* The architecture fields trainplan counts, equal in both models. */
static int same_architecture(const space_model *a, const space_model *b)
{
    return a->num_layers == b->num_layers && a->hidden == b->hidden
           && a->heads == b->heads && a->kv_heads == b->kv_heads
           && head_dim_of(a) == head_dim_of(b) && a->ffn_hidden == b->ffn_hidden
           && a->vocab == b->vocab && a->act == b->act && a->norm == b->norm
           && a->pos == b->pos && a->tied_embeddings == b->tied_embeddings
           && a->qkv_bias == b->qkv_bias && a->out_bias == b->out_bias
           && a->mlp_bias == b->mlp_bias && a->embed_norm == b->embed_norm
           && a->num_experts == b->num_experts
           && (a->pos != SPACE_POS_LEARNED || a->max_position == b->max_position);
}

/* The base recipe of m: a row of nemo_recipes, or NULL for the generic. */
static const struct nemo_recipe *recipe_of(const space_model *m)
{
    for (int i = 0; i < N_RECIPES; i++) {
        tp_err e = {0};
        const space_model *p = space_preset_find(nemo_recipes[i].preset, &e);
        if (p && strcmp(p->name, m->name) == 0 && same_architecture(p, m))
            return &nemo_recipes[i];
    }
    return NULL;
}

/* ---- writing ---------------------------------------------------------- */

static const char *tf(int v)
{
    return v ? "true" : "false";
}

/* x in the fewest digits that read back to the same double, so the
 * reader's estimate is the writer's (0.1, not 0.10000000000000001). */
static void put_num(launch_text *b, const char *key, const char *sep, double x)
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
            tf(m->shared_expert_gate));
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
                "model.moe_router_pre_softmax=%s\n", tf(m->top_k == 1));
    if (m->router_groups > 0)
        launch_text_put(b, "model.moe_router_num_groups=%lld\n"
                "model.moe_router_group_topk=%lld\n",
            (long long)m->router_groups, (long long)m->router_topk_groups);
    if (m->capacity_factor > 0)
        put_num(b, "model.moe_expert_capacity_factor", "=", m->capacity_factor);
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
    launch_text_put(b, "model.moe_permute_fusion=%s\n", tf(l->moe_permute_fusion));
    /* and the fused router (TransformerConfig moe_router_fusion) */
    launch_text_put(b, "model.moe_router_fusion=%s\n", tf(l->moe_router_fusion));
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
        (long long)m->kv_heads, (long long)head_dim_of(m),
        (long long)m->ffn_hidden, nemo_norm[m->norm], nemo_act[m->act].func,
        tf(nemo_act[m->act].glu));
    if (nemo_pos[m->pos])
        launch_text_put(b, "model.position_embedding_type=%s\n", nemo_pos[m->pos]);
    /* Megatron-Core biases: Q, K, V have one where add_bias_linear or
     * add_qkv_bias; the output projection and the MLP where
     * add_bias_linear (transformer_config.py, attention.py). */
    int linear = m->out_bias && m->mlp_bias;
    launch_text_put(b,
        "model.share_embeddings_and_output_weights=%s\n"
        "model.add_bias_linear=%s\nmodel.add_qkv_bias=%s\n",
        tf(m->tied_embeddings), tf(linear), tf(m->qkv_bias && !linear));
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
        tf(l->pa_optimizer));
    if (l->pa_optimizer) {
        launch_text_put(b, "optimizer.bf16=%s\noptimizer.fp16=%s\n",
            tf(l->dtype != HW_FP16), tf(l->dtype == HW_FP16));
        static const struct {
            const char *key;
            size_t off;
        } dts[] = {
            {"optimizer.main_grads_dtype", offsetof(space_layout, main_grads_dtype)},
            {"optimizer.main_params_dtype", offsetof(space_layout, main_params_dtype)},
            {"optimizer.exp_avg_dtype", offsetof(space_layout, exp_avg_dtype)},
            {"optimizer.exp_avg_sq_dtype", offsetof(space_layout, exp_avg_sq_dtype)}};
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
            l->opt_offload, tf(l->opt_offload_overlap));
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
    const struct nemo_recipe *rc = recipe_of(m);
    const char *recipe = rc ? rc->recipe : GENERIC_RECIPE;
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
    put_num(b, "model.attention_dropout", "=", m->attn_dropout);
    put_num(b, "model.hidden_dropout", "=", m->hidden_dropout);

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
        tf(acc & SPACE_PP_EMBED), tf(acc & SPACE_PP_LOSS));
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
    launch_text_put(b, "model.sequence_parallel=%s\n", tf(l->sp && l->tp > 1));
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
        const struct nemo_mp *mp = &nemo_mp_fp8[l->fp8_recipe];
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
            tf(l->zero == SPACE_ZERO_1));
    /* Bridge turns the distributed optimizer and the parameter-gather
     * overlap on in both ddp and optimizer when either asks
     * (config.py, _validate_and_sync_distributed_optimizer_settings), and
     * the recipes' optimizers ask: both are written. */
    int pgo = !l->no_dp_overlap && l->zero >= SPACE_ZERO_1;
    launch_text_put(b, "optimizer.use_distributed_optimizer=%s\n",
        tf(l->zero >= SPACE_ZERO_1));
    launch_text_put(b, "ddp.overlap_grad_reduce=%s\nddp.overlap_param_gather=%s\n"
            "optimizer.overlap_param_gather=%s\n",
        tf(!l->no_dp_overlap), tf(pgo), tf(pgo));

    bridge_savers(l, b);

    /* TP overlap: userbuffers (comm_overlap.tp_comm_overlap) needs TP > 1
     * and sequence parallelism, else comm_overlap.py turns it off. */
    int ub = l->tp > 1 && l->tp_overlap == SPACE_TP_OVERLAP_ALL && l->sp;
    if (!rc || !rc->comm_overlap)
        launch_text_put(b, "++comm_overlap._target_=" COMM_OVERLAP_TARGET "\n");
    launch_text_put(b, "++comm_overlap.tp_comm_overlap=%s\n", tf(ub));
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
            tf(!l->no_pp_overlap), tf(l->no_pp_overlap));
    launch_text_put(b, "model.cross_entropy_loss_fusion=%s\n",
        tf(l->ce_fusion || l->ce_te));
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
static void put_nemo1_moe(const space_model *m, const space_layout *l,
                          launch_text *b)
{
    if (m->kv_lora_rank > 0)
        launch_text_put(b, "# not expressible: multi-head latent attention (KV "
                "rank %lld): NeMo 1's GPT model has no MLA ranks\n",
            (long long)m->kv_lora_rank);
    if (m->num_experts <= 0) return;
    launch_text_put(b, "model.num_moe_experts: %lld  # read by "
                "megatron_gpt_model.py (cfg.get)\n"
            "model.moe_router_topk: %lld  # read by megatron_gpt_model.py\n"
            "model.moe_grouped_gemm: true  # read by megatron_gpt_model.py\n"
            "model.expert_model_parallel_size: %lld\n",
        (long long)m->num_experts, (long long)m->top_k,
        (long long)space_layout_ep(l));
    if (m->expert_ffn_hidden != m->ffn_hidden)
        launch_text_put(b, "# not expressible: experts of inner size %lld (the "
                "dense FFN's is %lld): NeMo 1 sizes them as "
                "model.ffn_hidden_size\n",
            (long long)m->expert_ffn_hidden, (long long)m->ffn_hidden);
    if (m->shared_experts > 0 || m->first_dense_layers > 0
        || m->moe_layer_freq > 1 || m->router_sigmoid || m->router_groups > 0)
        launch_text_put(b, "# not expressible: shared experts, dense layers "
                "among the MoE ones, sigmoid or group-limited routing: no "
                "NeMo 1 key\n");
    if (space_layout_etp(l) != l->tp)
        launch_text_put(b, "# not expressible: expert TP %lld (TP %lld): NeMo 1 "
                "has no expert_tensor_parallel_size key\n",
            (long long)space_layout_etp(l), (long long)l->tp);
    if (l->moe_dispatcher != SPACE_MOE_ALLGATHER)
        launch_text_put(b, "# not expressible: the %s dispatcher: NeMo 1 has no "
                "moe_token_dispatcher_type key (Megatron-Core's allgather)\n",
            space_moe_dispatcher_name(l));
    if (l->moe_comm_overlap != SPACE_MOE_OVERLAP_NONE)
        launch_text_put(b, "# not expressible: the MoE dispatch's %s overlap: "
                "NeMo 1 has no key for it\n",
            space_moe_overlap_name(l));
    if (l->moe_router_pad)
        launch_text_put(b, "# not expressible: the router's padding for fp8: "
                "NeMo 1 has no key for it\n");
}

/* The NeMo 1.x launcher's keys: today's output with what the YAML cannot
 * express as comments (context parallelism, uneven chunks, ZeRO-2/3,
 * fp8 scalings other than delayed). */
static void nemo1_write(const launch_plan *c, launch_text *b)
{
    const space_layout *l = c->layout;
    const space_model *m = c->model;
    int64_t g, nodes = launch_nodes(c, &g);
    int64_t L = m->num_layers, v = l->vpp > 1 ? l->vpp : 1;
    launch_text_put(b, "# " NEMO1_TARGET "\n");
    if (l->framework != SPACE_FW_MEGATRON_CORE)
        launch_text_put(b, "# estimated for %s's software; these keys run "
                "Megatron-Core's\n",
            space_framework_names[l->framework]);
    launch_text_put(b, "trainer.num_nodes: %lld\ntrainer.devices: %lld\n",
        (long long)nodes, (long long)g);
    launch_text_put(b, "trainer.precision: %s\n",
        l->dtype == HW_FP16 ? "16-mixed" : "bf16-mixed");
    launch_text_put(b, "model.num_layers: %lld\nmodel.hidden_size: %lld\n"
            "model.ffn_hidden_size: %lld\nmodel.num_attention_heads: %lld\n"
            "model.num_query_groups: %lld\nmodel.kv_channels: %lld\n"
            "model.normalization: %s\n",
        (long long)L, (long long)m->hidden, (long long)m->ffn_hidden,
        (long long)m->heads, (long long)m->kv_heads, (long long)head_dim_of(m),
        space_norm_names[m->norm]);
    if (nemo1_act[m->act])
        launch_text_put(b, "model.activation: %s\n", nemo1_act[m->act]);
    else
        launch_text_put(b, "# not expressible: "
                "activation %s, not among NeMo 1's\n",
            space_act_names[m->act]);
    launch_text_put(b, "model.position_embedding_type: %s\n",
        m->pos == SPACE_POS_LEARNED ? "learned_absolute"
                                    : space_pos_names[m->pos]);
    launch_text_put(b, "model.max_position_embeddings: %lld\n",
        (long long)m->max_position);
    if (m->qkv_bias == m->out_bias && m->out_bias == m->mlp_bias)
        launch_text_put(b, "model.bias: %s\n", tf(m->qkv_bias));
    else
        launch_text_put(b, "# not expressible: biases (Q/K/V %d, output %d, MLP "
                "%d); NeMo 1 has "
                "one switch (model.bias)\n",
            m->qkv_bias, m->out_bias, m->mlp_bias);
    launch_text_put(b, "model.share_embeddings_and_output_weights: %s\n",
        tf(m->tied_embeddings));
    put_num(b, "model.hidden_dropout", ": ", m->hidden_dropout);
    put_num(b, "model.attention_dropout", ": ", m->attn_dropout);
    launch_text_put(b, "model.make_vocab_size_divisible_by: 128\n"
            "# vocabulary %lld: NeMo 1 takes it from model.tokenizer\n",
        (long long)m->vocab);
    launch_text_put(b, "model.tensor_model_parallel_size: %lld\n"
            "model.pipeline_model_parallel_size: %lld\n",
        (long long)l->tp, (long long)l->pp);
    /* NeMo 1 splits the layers evenly only (megatron_gpt_model.py): any
     * other split of Megatron-Core's is not expressible */
    char split[2200];
    space_split_str(l, split, sizeof split);
    if (L % (l->pp * v) || split[0])
        launch_text_put(b, "# not expressible: the pipeline split%s%s%s: NeMo 1 "
                "splits %lld layers over PP %lld x %lld chunks evenly only\n",
            split[0] ? " (" : "", split, split[0] ? ")" : "",
            (long long)L, (long long)l->pp, (long long)v);
    else if (v > 1)
        launch_text_put(b, "model.virtual_pipeline_model_parallel_size: %lld\n",
            (long long)v);
    else
        launch_text_put(b, "model.virtual_pipeline_model_parallel_size: null\n");
    if (l->pp > 1 && v > 1 && L % (l->pp * v) == 0)
        launch_text_put(b, "model.overlap_p2p_comm: %s\nmodel.batch_p2p_comm: %s\n",
            tf(!l->no_pp_overlap), tf(l->no_pp_overlap));
    /* Not in the YAML, but the model reads it (cfg.get in
     * megatron_base_model.py, MegatronBaseModel.__init__): as a Hydra
     * override it takes a '+'. NeMo 1 has no CP exchange key (the ring). */
    launch_text_put(b, "model.context_parallel_size: %lld  # not in "
                "megatron_gpt_config.yaml; NeMo's megatron_base_model.py reads "
                "it (+model.context_parallel_size=%lld as an override)\n",
            (long long)l->cp, (long long)l->cp);
    if (l->cp > 1 && l->cp_comm != SPACE_CP_P2P)
        launch_text_put(b, "# not expressible: CP exchange %s; NeMo 1 has no key "
                "for it\n",
            space_cp_comm_names[l->cp_comm]);
    launch_text_put(b, "model.sequence_parallel: %s\n", tf(l->sp && l->tp > 1));
    put_nemo1_moe(m, l, b);
    launch_text_put(b, "model.micro_batch_size: %lld\nmodel.global_batch_size: %lld\n",
        (long long)l->mbs, (long long)l->gbs);
    launch_text_put(b, "model.encoder_seq_length: %lld\n", (long long)l->seq);
    if (l->recompute == SPACE_RECOMPUTE_NONE)
        launch_text_put(b, "model.activations_checkpoint_granularity: null\n");
    else if (l->recompute == SPACE_RECOMPUTE_SELECTIVE) {
        launch_text_put(b, "model.activations_checkpoint_granularity: selective\n");
        if (space_recompute_modules(l) != SPACE_RC_CORE_ATTN) {
            char names[160];
            space_rc_modules_str(space_recompute_modules(l), ",", names,
                                 sizeof names);
            launch_text_put(b, "# not expressible: recompute modules %s (NeMo "
                    "1's selective is the attention core)\n", names);
        }
    }
    else if (l->recompute == SPACE_RECOMPUTE_FULL)
        launch_text_put(b, "model.activations_checkpoint_granularity: full\n"
                "model.activations_checkpoint_method: %s\n"
                "model.activations_checkpoint_num_layers: %lld\n",
            space_recompute_method_names[l->recompute_method],
            (long long)(l->recompute_layers > 0 ? l->recompute_layers : 1));
    else
        launch_text_put(b, "# not expressible: recompute %s (torchtitan's "
                "op-level policy); NeMo 1's selective is the attention core\n",
            space_recompute_names[l->recompute]);
    /* NeMo 1's fp8 is Transformer Engine's delayed scaling (fp8_hybrid,
     * fp8_amax_history_len); it has no recipe key. */
    if (l->dtype == HW_FP8 && l->fp8_recipe == SPACE_FP8_DELAYED)
        launch_text_put(b, "model.fp8: true\nmodel.fp8_hybrid: true\n");
    else if (l->dtype == HW_FP4)
        launch_text_put(b, "# not expressible: NVFP4; NeMo 1 has delayed fp8 "
                "scaling only: these keys train in bf16\n");
    else if (l->dtype == HW_FP8)
        launch_text_put(b, "# not expressible: fp8 %s scaling; NeMo 1 has delayed "
                "scaling only\n",
            space_fp8_recipe_names[l->fp8_recipe]);
    /* fp8 weights as the parameters: read with cfg.get by
     * megatron_base_model.py (setup_optimization), not in the YAML */
    if (l->dtype == HW_FP8 && l->fp8_recipe == SPACE_FP8_DELAYED
        && l->fp8_params)
        launch_text_put(b, "model.fp8_params: true  # not in "
                "megatron_gpt_config.yaml; megatron_base_model.py reads it\n");
    if (l->tp > 1 && l->tp_overlap == SPACE_TP_OVERLAP_ALL)
        launch_text_put(b, "model.ub_tp_comm_overlap: true\n");
    if (l->zero <= SPACE_ZERO_1)
        launch_text_put(b, "model.optim.name: %s\n",
            l->zero == SPACE_ZERO_1 ? "distributed_fused_adam" : "fused_adam");
    else
        launch_text_put(b, "# not expressible: ZeRO-%d; NeMo 1's "
                "distributed_fused_adam is the distributed optimizer\n",
            (int)l->zero);
    /* Memory savers: NeMo 1 has Transformer Engine's layer offload
     * (megatron_gpt_config.yaml: model.cpu_offloading*), nothing else. */
    if (l->act_offload_layers > 0)
        launch_text_put(b, "model.cpu_offloading: true\n"
                "model.cpu_offloading_num_layers: %lld\n"
                "model.cpu_offloading_activations: true\n"
                "model.cpu_offloading_weights: false\n",
            (long long)l->act_offload_layers);
    if (l->pa_optimizer || l->opt_offload > 0)
        launch_text_put(b, "# not expressible: %s: NeMo 1's optimizers (Apex's "
                "distributed_fused_adam, fused_adam) have no key for "
                "Megatron-Core's\n",
            l->opt_offload > 0 ? "the optimizer stepped on the host"
                               : "the precision-aware optimizer's dtypes");
    if (l->offload_modules)
        launch_text_put(b, "# not expressible: fine-grained activation "
                "offloading: NeMo 1 has no key for it\n");
    if (l->mb_group > 0 && l->vpp > 1)
        launch_text_put(b, "# not expressible: micro-batch groups of %lld: NeMo "
                "1 has no key for microbatch_group_size_per_vp_stage\n",
            (long long)l->mb_group);
    if (l->pp_schedule != SPACE_PP_1F1B)
        launch_text_put(b, "# not expressible: the %s pipeline schedule: "
                "Megatron-Core runs 1F1B and interleaved 1F1B only\n",
            space_pp_schedule_name(l));
}

void launch_nemo(const launch_plan *c, launch_text *b)
{
    if (c->nemo_format == LAUNCH_NEMO_V1)
        nemo1_write(c, b);
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

/* ---- reading ---------------------------------------------------------- */

/* What a key sets. */
typedef enum nemo_kid {
    K_TP, K_PP, K_VPP, K_LAYOUT, K_ACC_EMBED, K_ACC_LOSS, K_PP_FIRST,
    K_PP_LAST, K_CP, K_CP_COMM, K_SP, K_MBS, K_GBS,
    K_SEQ_MODEL, K_SEQ_DATA, K_RC_GRAN, K_RC_METHOD, K_RC_LAYERS, K_RC_MODULES,
    K_MP, K_FP8_PARAMS, K_DISTOPT, K_FSDP, K_SHARD, K_DP_OVERLAP,
    K_PARAM_GATHER, K_TP_UB, K_P2P_OVERLAP, K_P2P_BATCH, K_CE, K_CE_IMPL,
    K_ATTN, K_ATTN_DROP, K_HID_DROP, K_VOCAB_MODEL, K_VOCAB_TOK, K_DIVISIBLE,
    K_LAYERS, K_HIDDEN, K_HEADS, K_GROUPS, K_KV_CH, K_FFN, K_NORM, K_ACT_FUNC,
    K_GLU, K_POS, K_TIED, K_BIAS_LINEAR, K_QKV_BIAS, K_MAXPOS, K_WGRAD_DEFER,
    /* NeMo 1 */
    K_NODES, K_DEVICES, K_PRECISION1, K_ACT1, K_BIAS1, K_FP8_1, K_FP8_HYBRID,
    K_OPTIM1, K_DISTOPT_OPT, K_PARAM_GATHER_OPT,
    /* mixture of experts (issue 19) */
    K_EXPERTS, K_MOE_TOPK, K_MOE_FFN, K_MOE_SHARED, K_MOE_SHARED_GATE,
    K_MOE_FREQ, K_MOE_SCORE, K_MOE_GROUPS, K_MOE_GROUP_TOPK, K_MOE_CAPACITY,
    K_EP, K_ETP, K_MOE_DISPATCHER, K_QK_NORM, K_MTP,
    K_MOE_SHARED_OVERLAP, K_MOE_A2A_OVERLAP, K_DELAY_WGRAD,
    K_MOE_FLEX_BACKEND, K_MOE_ROUTER_PAD,
    K_MOE_PERMUTE, K_MOE_ROUTER, K_FSDP_DB, K_CG_IMPL, K_CG_SCOPE,
    K_MOE_INERT, /* keys trainplan writes that change no estimate (the
                    grouped GEMMs and fused permutation it assumes, the
                    balancing loss) */
    /* memory savers and micro-batch groups (issue 28) */
    K_PA_OPT, K_MAIN_GRADS, K_MAIN_PARAMS, K_EXP_AVG, K_EXP_AVG_SQ,
    K_OPT_OFFLOAD, K_OPT_OFFLOAD_FRAC, K_OPT_OFFLOAD_OVERLAP, K_OPT_INERT,
    K_CPU_OFFLOAD, K_CPU_OFFLOAD_LAYERS, K_CPU_OFFLOAD_ACT, K_CPU_OFFLOAD_W,
    K_FG_OFFLOAD, K_OFFLOAD_MODULES, K_OFFLOAD_FRAC, K_MB_GROUP,
    K_CO_TARGET, /* comm_overlap's class: changes no estimate (issue 31) */
    K_ROTARY_PCT, K_ROTARY_BASE, K_WINDOW, K_WINDOW_SKIP, K_SOFTMAX,
    K_COUNT
} nemo_kid;

typedef enum vkind {
    V_INT,  /* an integer in [lo, hi] */
    V_BOOL, /* true or false */
    V_FRAC, /* a number in [0, 1] */
    V_NAME, /* one of names */
    V_STR,  /* any text */
    V_NUM   /* a number in [lo, hi] */
} vkind;

/* One key trainplan reads: its value kind, and whether null is allowed
 * (the recipe's or Megatron's default then). */
typedef struct nemo_key {
    const char *key;
    nemo_kid id;
    vkind kind;
    int null_ok;
    long long lo, hi;
    const char *const *names; /* V_NAME: NULL-terminated */
} nemo_key;

static const char *const n_bool[] = {"true", "false", NULL};
static const char *const n_co_target[] = {COMM_OVERLAP_TARGET, NULL};
static const char *const n_cp_comm[] = {"p2p", "all_gather", NULL};
static const char *const n_rc_gran[] = {"selective", "full", NULL};
static const char *const n_rc_method[] = {"uniform", "block", NULL};
static const char *const n_shard[] = {"no_shard", "optim", "optim_grads",
                                      "optim_grads_params", NULL};
static const char *const n_ce_impl[] = {"native", "te", NULL};
/* space_cuda_graph */
static const char *const n_cg_impl[] = {"none", "local", "transformer_engine",
                                        "full_iteration", NULL};
static const char *const n_attn[] = {"unfused", "flash", "fused", "auto", NULL};
/* Megatron-Core's names, then NeMo 1's (megatron_gpt_config.yaml) */
static const char *const n_norm[] = {"LayerNorm", "RMSNorm", "layernorm",
                                     "rmsnorm", NULL};
static const char *const n_act[] = {"gelu", "relu", "squared_relu", "relu2",
                                    "silu", NULL};
static const char *const n_pos[] = {"learned_absolute", "rope", NULL};
static const char *const n_softmax[] = {"vanilla", "learnable", NULL};
static const char *const n_score[] = {"softmax", "sigmoid", NULL};
static const char *const n_dispatcher[] = {"alltoall", "allgather", "flex",
                                           NULL}; /* space_moe_dispatcher */
static const char *const n_flex_backend[] = {"deepep", "hybridep", NULL};
/* space_moe_flex_backend */
static const char *const n_prec1[] = {"bf16", "bf16-mixed", "16", "16-mixed",
                                      NULL};
static const char *const n_act1[] = {"gelu", "squared-relu", "swiglu", "geglu",
                                     NULL};
static const char *const n_optim1[] = {"fused_adam", "distributed_fused_adam",
                                       NULL};
/* torch.dtype names Megatron-Bridge's str_to_dtype takes for the
 * optimizer's states (utils/activation_map.py, DTYPE_MAP), as
 * space_opt_dtype (odtype_of) */
static const char *const n_odtype[] = {
    "fp32", "float32", "torch.float32", "bf16", "bfloat16", "torch.bfloat16",
    "fp16", "float16", "torch.float16", "fp8", "float8_e4m3fn",
    "torch.float8_e4m3fn", NULL};
static const int odtype_of[] = {
    SPACE_OPT_FP32, SPACE_OPT_FP32, SPACE_OPT_FP32, SPACE_OPT_BF16,
    SPACE_OPT_BF16, SPACE_OPT_BF16, SPACE_OPT_FP16, SPACE_OPT_FP16,
    SPACE_OPT_FP16, SPACE_OPT_FP8,  SPACE_OPT_FP8,  SPACE_OPT_FP8};
_Static_assert(sizeof n_odtype / sizeof n_odtype[0] - 1
                   == sizeof odtype_of / sizeof odtype_of[0],
               "odtype_of mirrors n_odtype");
/* Mixed-precision recipes this reader knows, with the hyphenated names
 * @register adds (mixed_precision.py); their meaning is mp_meaning. */
static const char *const n_mp[] = {
    "bf16_mixed", "fp16_mixed", "bf16_with_fp8_delayed_scaling_mixed",
    "bf16_with_fp8_current_scaling_mixed",
    "bf16_with_fp8_subchannel_scaling_mixed", "bf16_with_mxfp8_mixed",
    "bf16_with_nvfp4_mixed", NULL};
/* bf16_with_nvfp4_mixed also gathers fp4 parameters, which trainplan does
 * not model: read as NVFP4 with 16-bit parameters. */
static const struct { int dtype, fp8; } mp_meaning[] = {
    {HW_BF16, 0}, {HW_FP16, 0}, {HW_FP8, SPACE_FP8_DELAYED},
    {HW_FP8, SPACE_FP8_TENSORWISE}, {HW_FP8, SPACE_FP8_BLOCKWISE},
    {HW_FP8, SPACE_FP8_MXFP8}, {HW_FP4, 0},
};
_Static_assert(sizeof n_mp / sizeof n_mp[0] - 1
                   == sizeof mp_meaning / sizeof mp_meaning[0],
               "mp_meaning mirrors n_mp");

#define BIG (1LL << 40)
static const nemo_key nemo_keys[] = {
    /* Megatron-Bridge ConfigContainer keys */
    {"model.tensor_model_parallel_size", K_TP, V_INT, 0, 1, 65536, NULL},
    {"model.pipeline_model_parallel_size", K_PP, V_INT, 0, 1, 65536, NULL},
    {"model.virtual_pipeline_model_parallel_size", K_VPP, V_INT, 1, 1, 65536,
     NULL},
    {"model.pipeline_model_parallel_layout", K_LAYOUT, V_STR, 1, 0, 0, NULL},
    {"model.account_for_embedding_in_pipeline_split", K_ACC_EMBED, V_BOOL, 0,
     0, 0, n_bool},
    {"model.account_for_loss_in_pipeline_split", K_ACC_LOSS, V_BOOL, 0, 0, 0,
     n_bool},
    {"model.num_layers_in_first_pipeline_stage", K_PP_FIRST, V_INT, 1, 1,
     100000, NULL},
    {"model.num_layers_in_last_pipeline_stage", K_PP_LAST, V_INT, 1, 1,
     100000, NULL},
    {"model.context_parallel_size", K_CP, V_INT, 0, 1, 65536, NULL},
    {"model.cp_comm_type", K_CP_COMM, V_NAME, 1, 0, 0, n_cp_comm},
    {"model.sequence_parallel", K_SP, V_BOOL, 0, 0, 0, n_bool},
    {"train.micro_batch_size", K_MBS, V_INT, 0, 1, BIG, NULL},
    {"train.global_batch_size", K_GBS, V_INT, 0, 1, BIG, NULL},
    {"model.seq_length", K_SEQ_MODEL, V_INT, 0, 1, BIG, NULL},
    {"dataset.seq_length", K_SEQ_DATA, V_INT, 0, 1, BIG, NULL},
    {"dataset.sequence_length", K_SEQ_DATA, V_INT, 0, 1, BIG, NULL},
    {"model.recompute_granularity", K_RC_GRAN, V_NAME, 1, 0, 0, n_rc_gran},
    {"model.recompute_method", K_RC_METHOD, V_NAME, 1, 0, 0, n_rc_method},
    {"model.recompute_num_layers", K_RC_LAYERS, V_INT, 1, 1, 100000, NULL},
    {"model.recompute_modules", K_RC_MODULES, V_STR, 1, 0, 0, NULL},
    {"mixed_precision", K_MP, V_NAME, 0, 0, 0, n_mp},
    {"mixed_precision.fp8_param_gather", K_FP8_PARAMS, V_BOOL, 0, 0, 0, n_bool},
    {"ddp.use_distributed_optimizer", K_DISTOPT, V_BOOL, 0, 0, 0, n_bool},
    {"optimizer.use_distributed_optimizer", K_DISTOPT_OPT, V_BOOL, 0, 0, 0,
     n_bool},
    {"optimizer.overlap_param_gather", K_PARAM_GATHER_OPT, V_BOOL, 0, 0, 0,
     n_bool},
    {"ddp.use_megatron_fsdp", K_FSDP, V_BOOL, 0, 0, 0, n_bool},
    {"ddp.data_parallel_sharding_strategy", K_SHARD, V_NAME, 0, 0, 0, n_shard},
    {"ddp.overlap_grad_reduce", K_DP_OVERLAP, V_BOOL, 0, 0, 0, n_bool},
    {"ddp.overlap_param_gather", K_PARAM_GATHER, V_BOOL, 0, 0, 0, n_bool},
    {"comm_overlap.tp_comm_overlap", K_TP_UB, V_BOOL, 0, 0, 0, n_bool},
    /* the class a comm_overlap the recipe left None is built as */
    {"comm_overlap._target_", K_CO_TARGET, V_NAME, 0, 0, 0, n_co_target},
    {"comm_overlap.overlap_p2p_comm", K_P2P_OVERLAP, V_BOOL, 1, 0, 0, n_bool},
    {"comm_overlap.batch_p2p_comm", K_P2P_BATCH, V_BOOL, 1, 0, 0, n_bool},
    {"comm_overlap.defer_embedding_wgrad_compute", K_WGRAD_DEFER, V_BOOL, 1, 0,
     0, n_bool},
    {"model.overlap_p2p_comm", K_P2P_OVERLAP, V_BOOL, 0, 0, 0, n_bool},
    {"model.batch_p2p_comm", K_P2P_BATCH, V_BOOL, 0, 0, 0, n_bool},
    {"model.cross_entropy_loss_fusion", K_CE, V_BOOL, 0, 0, 0, n_bool},
    {"model.cross_entropy_fusion_impl", K_CE_IMPL, V_NAME, 0, 0, 0, n_ce_impl},
    {"model.attention_backend", K_ATTN, V_NAME, 1, 0, 0, n_attn},
    {"model.attention_dropout", K_ATTN_DROP, V_FRAC, 0, 0, 0, NULL},
    {"model.hidden_dropout", K_HID_DROP, V_FRAC, 0, 0, 0, NULL},
    {"model.vocab_size", K_VOCAB_MODEL, V_INT, 1, 1, 1LL << 24, NULL},
    {"tokenizer.vocab_size", K_VOCAB_TOK, V_INT, 0, 1, 1LL << 24, NULL},
    {"model.make_vocab_size_divisible_by", K_DIVISIBLE, V_INT, 0, 128, 128,
     NULL},
    {"model.num_layers", K_LAYERS, V_INT, 0, 1, 100000, NULL},
    {"model.hidden_size", K_HIDDEN, V_INT, 0, 1, 1LL << 20, NULL},
    {"model.num_attention_heads", K_HEADS, V_INT, 0, 1, 65536, NULL},
    {"model.num_query_groups", K_GROUPS, V_INT, 1, 1, 65536, NULL},
    {"model.kv_channels", K_KV_CH, V_INT, 1, 1, 65536, NULL},
    {"model.ffn_hidden_size", K_FFN, V_INT, 0, 1, 1LL << 22, NULL},
    {"model.normalization", K_NORM, V_NAME, 0, 0, 0, n_norm},
    {"model.activation_func", K_ACT_FUNC, V_NAME, 0, 0, 0, n_act},
    {"model.gated_linear_unit", K_GLU, V_BOOL, 0, 0, 0, n_bool},
    {"model.position_embedding_type", K_POS, V_NAME, 0, 0, 0, n_pos},
    {"model.share_embeddings_and_output_weights", K_TIED, V_BOOL, 0, 0, 0,
     n_bool},
    {"model.add_bias_linear", K_BIAS_LINEAR, V_BOOL, 0, 0, 0, n_bool},
    {"model.add_qkv_bias", K_QKV_BIAS, V_BOOL, 0, 0, 0, n_bool},
    /* issue 31: RoPE's share and base, local attention, sinks */
    {"model.rotary_percent", K_ROTARY_PCT, V_NUM, 0, 0, 1, NULL},
    {"model.rotary_base", K_ROTARY_BASE, V_NUM, 0, 1, 1000000000000LL, NULL},
    {"model.window_size", K_WINDOW, V_STR, 1, 0, 0, NULL},
    {"model.window_attn_skip_freq", K_WINDOW_SKIP, V_INT, 1, 1, 100000, NULL},
    {"model.softmax_type", K_SOFTMAX, V_NAME, 0, 0, 0, n_softmax},
    /* mixture of experts: TransformerConfig / ModelParallelConfig fields
     * (also read by NeMo 1 where it has them) */
    {"model.num_moe_experts", K_EXPERTS, V_INT, 1, 1, 1000000, NULL},
    {"model.moe_router_topk", K_MOE_TOPK, V_INT, 0, 1, 1000000, NULL},
    {"model.moe_ffn_hidden_size", K_MOE_FFN, V_INT, 1, 1, 1LL << 22, NULL},
    {"model.moe_shared_expert_intermediate_size", K_MOE_SHARED, V_INT, 1, 1,
     1LL << 22, NULL},
    {"model.moe_shared_expert_gate", K_MOE_SHARED_GATE, V_BOOL, 0, 0, 0,
     n_bool},
    {"model.moe_layer_freq", K_MOE_FREQ, V_STR, 0, 0, 0, NULL},
    {"model.moe_router_score_function", K_MOE_SCORE, V_NAME, 0, 0, 0, n_score},
    {"model.moe_router_num_groups", K_MOE_GROUPS, V_INT, 1, 1, 1000000, NULL},
    {"model.moe_router_group_topk", K_MOE_GROUP_TOPK, V_INT, 1, 1, 1000000,
     NULL},
    {"model.moe_expert_capacity_factor", K_MOE_CAPACITY, V_NUM, 1, 0, 1000000,
     NULL},
    {"model.expert_model_parallel_size", K_EP, V_INT, 0, 1, 1000000, NULL},
    {"model.expert_tensor_parallel_size", K_ETP, V_INT, 1, 1, 65536, NULL},
    {"model.moe_token_dispatcher_type", K_MOE_DISPATCHER, V_NAME, 0, 0, 0,
     n_dispatcher},
    {"model.qk_layernorm", K_QK_NORM, V_BOOL, 0, 0, 0, n_bool},
    {"model.mtp_num_layers", K_MTP, V_INT, 1, 0, 1000, NULL},
    {"model.moe_shared_expert_overlap", K_MOE_SHARED_OVERLAP, V_BOOL, 0, 0, 0,
     n_bool},
    {"model.overlap_moe_expert_parallel_comm", K_MOE_A2A_OVERLAP, V_BOOL, 0,
     0, 0, n_bool},
    {"model.delay_wgrad_compute", K_DELAY_WGRAD, V_BOOL, 0, 0, 0, n_bool},
    {"model.moe_flex_dispatcher_backend", K_MOE_FLEX_BACKEND, V_NAME, 0, 0, 0,
     n_flex_backend},
    {"model.moe_router_padding_for_quantization", K_MOE_ROUTER_PAD, V_BOOL,
     0, 0, 0, n_bool},
    {"model.moe_grouped_gemm", K_MOE_INERT, V_BOOL, 0, 0, 0, n_bool},
    {"model.moe_permute_fusion", K_MOE_PERMUTE, V_BOOL, 0, 0, 0, n_bool},
    {"model.moe_router_fusion", K_MOE_ROUTER, V_BOOL, 0, 0, 0, n_bool},
    {"ddp.fsdp_double_buffer", K_FSDP_DB, V_BOOL, 0, 0, 0, n_bool},
    {"model.cuda_graph_impl", K_CG_IMPL, V_NAME, 0, 0, 0, n_cg_impl},
    {"model.cuda_graph_scope", K_CG_SCOPE, V_STR, 1, 0, 0, NULL},
    {"model.cuda_graph_modules", K_CG_SCOPE, V_STR, 1, 0, 0, NULL},
    {"model.moe_router_load_balancing_type", K_MOE_INERT, V_STR, 0, 0, 0, NULL},
    {"model.moe_aux_loss_coeff", K_MOE_INERT, V_STR, 0, 0, 0, NULL},
    {"model.moe_router_enable_expert_bias", K_MOE_INERT, V_BOOL, 0, 0, 0,
     n_bool},
    {"model.moe_router_pre_softmax", K_MOE_INERT, V_BOOL, 0, 0, 0, n_bool},
    /* memory savers (issue 28): OptimizerConfig and TransformerConfig
     * fields; NeMo 1 has model.cpu_offloading* under the same names */
    {"optimizer.use_precision_aware_optimizer", K_PA_OPT, V_BOOL, 0, 0, 0,
     n_bool},
    {"optimizer.main_grads_dtype", K_MAIN_GRADS, V_NAME, 0, 0, 0, n_odtype},
    {"optimizer.main_params_dtype", K_MAIN_PARAMS, V_NAME, 0, 0, 0, n_odtype},
    {"optimizer.exp_avg_dtype", K_EXP_AVG, V_NAME, 0, 0, 0, n_odtype},
    {"optimizer.exp_avg_sq_dtype", K_EXP_AVG_SQ, V_NAME, 0, 0, 0, n_odtype},
    {"optimizer.optimizer_cpu_offload", K_OPT_OFFLOAD, V_BOOL, 0, 0, 0, n_bool},
    {"optimizer.optimizer_offload_fraction", K_OPT_OFFLOAD_FRAC, V_FRAC, 0, 0,
     0, NULL},
    {"optimizer.overlap_cpu_optimizer_d2h_h2d", K_OPT_OFFLOAD_OVERLAP, V_BOOL,
     0, 0, 0, n_bool},
    {"optimizer.bf16", K_OPT_INERT, V_BOOL, 0, 0, 0, n_bool},
    {"optimizer.fp16", K_OPT_INERT, V_BOOL, 0, 0, 0, n_bool},
    {"model.cpu_offloading", K_CPU_OFFLOAD, V_BOOL, 0, 0, 0, n_bool},
    {"model.cpu_offloading_num_layers", K_CPU_OFFLOAD_LAYERS, V_INT, 0, 0,
     100000, NULL},
    {"model.cpu_offloading_activations", K_CPU_OFFLOAD_ACT, V_BOOL, 0, 0, 0,
     n_bool},
    {"model.cpu_offloading_weights", K_CPU_OFFLOAD_W, V_BOOL, 0, 0, 0, n_bool},
    {"model.fine_grained_activation_offloading", K_FG_OFFLOAD, V_BOOL, 0, 0, 0,
     n_bool},
    {"model.offload_modules", K_OFFLOAD_MODULES, V_STR, 1, 0, 0, NULL},
    {"model.activation_offload_fraction", K_OFFLOAD_FRAC, V_FRAC, 0, 0, 0,
     NULL},
    {"model.microbatch_group_size_per_vp_stage", K_MB_GROUP, V_INT, 1, 1,
     1000000, NULL},
    /* NeMo 1 megatron_gpt_config.yaml keys (with the model sizes above
     * where the names agree) */
    {"trainer.num_nodes", K_NODES, V_INT, 0, 1, 1000000, NULL},
    {"trainer.devices", K_DEVICES, V_INT, 0, 1, 1024, NULL},
    {"trainer.precision", K_PRECISION1, V_NAME, 0, 0, 0, n_prec1},
    {"model.micro_batch_size", K_MBS, V_INT, 0, 1, BIG, NULL},
    {"model.global_batch_size", K_GBS, V_INT, 0, 1, BIG, NULL},
    {"model.encoder_seq_length", K_SEQ_DATA, V_INT, 0, 1, BIG, NULL},
    {"model.max_position_embeddings", K_MAXPOS, V_INT, 0, 1, 1LL << 26, NULL},
    {"model.activation", K_ACT1, V_NAME, 0, 0, 0, n_act1},
    {"model.bias", K_BIAS1, V_BOOL, 0, 0, 0, n_bool},
    {"model.activations_checkpoint_granularity", K_RC_GRAN, V_NAME, 1, 0, 0,
     n_rc_gran},
    {"model.activations_checkpoint_method", K_RC_METHOD, V_NAME, 1, 0, 0,
     n_rc_method},
    {"model.activations_checkpoint_num_layers", K_RC_LAYERS, V_INT, 1, 1,
     100000, NULL},
    {"model.fp8", K_FP8_1, V_BOOL, 0, 0, 0, n_bool},
    {"model.fp8_hybrid", K_FP8_HYBRID, V_BOOL, 0, 0, 0, n_bool},
    {"model.fp8_params", K_FP8_PARAMS, V_BOOL, 0, 0, 0, n_bool},
    {"model.ub_tp_comm_overlap", K_TP_UB, V_BOOL, 0, 0, 0, n_bool},
    {"model.optim.name", K_OPTIM1, V_NAME, 0, 0, 0, n_optim1},
};
#define N_KEYS ((int)(sizeof nemo_keys / sizeof nemo_keys[0]))

/* Sections whose keys change nothing trainplan estimates (paths, logging,
 * learning rates, data sources, checkpoints): skipped. */
static const char *const nemo_skipped[] = {
    "checkpoint.", "logger.", "optimizer.", "scheduler.", "rng.",
    "validation.", "profiling.", "dist.", "ft.", "straggler.",
    "nvrx_straggler.", "env_vars.", "rerun_state_machine.",
    "tensor_inspect.", "inprocess_restart.", "train.", "dataset.",
    "tokenizer.", "exp_manager.", "trainer.", "model.optim.",
    "model.tokenizer.", "model.data.", "name", "run.",
};

/* One value a key was given: the integer, number or name index. */
typedef struct nemo_val {
    int set, null;
    long long i;
    double x;
    int name;
    char s[512];
    int line;
} nemo_val;

typedef struct nemo_read {
    nemo_val v[K_COUNT];
    long long nnodes, nproc;
    char recipe[128];
    int recipe_line;
} nemo_read;

static const nemo_key *key_find(const char *k)
{
    for (int i = 0; i < N_KEYS; i++)
        if (strcmp(nemo_keys[i].key, k) == 0) return &nemo_keys[i];
    return NULL;
}

static void join_names(const char *const *names, char *out, size_t cap)
{
    out[0] = '\0';
    for (int i = 0; names[i]; i++) {
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%s", i ? ", " : "", names[i]);
    }
}

/* Parses value s of key k (line ln of file) into r. */
static int set_value(nemo_read *r, const nemo_key *k, const char *s,
                     const char *file, int ln, tp_err *e)
{
    nemo_val *v = &r->v[k->id];
    memset(v, 0, sizeof *v);
    v->set = 1;
    v->line = ln;
    snprintf(v->s, sizeof v->s, "%s", s);
    if (strcmp(s, "null") == 0 || strcmp(s, "None") == 0
        || strcmp(s, "~") == 0) {
        if (!k->null_ok)
            return tp_errf(e, TP_EDATA, "%s:%d: %s: null is not a value "
                           "trainplan can estimate; give one",
                           file, ln, k->key);
        v->null = 1;
        return TP_OK;
    }
    char names[512];
    switch (k->kind) {
    case V_INT:
        if (tp_parse_int(s, k->lo, k->hi, &v->i))
            return tp_errf(e, TP_EDATA, "%s:%d: %s: expected an integer in "
                           "[%lld, %lld]%s, found '%s'",
                           file, ln, k->key, k->lo, k->hi,
                           k->null_ok ? " or null" : "", s);
        return TP_OK;
    case V_FRAC:
        if (tp_parse_num(s, &v->x) || !(v->x >= 0 && v->x <= 1))
            return tp_errf(e, TP_EDATA, "%s:%d: %s: expected a probability "
                           "in [0, 1], found '%s'", file, ln, k->key, s);
        return TP_OK;
    case V_BOOL:
    case V_NAME:
        for (int i = 0; k->names[i]; i++) {
            /* Python's True/False as well as YAML's true/false */
            if (strcmp(s, k->names[i]) == 0
                || (k->kind == V_BOOL && tp_streq_ci(s, k->names[i]))) {
                v->name = i;
                v->i = k->kind == V_BOOL ? i == 0 : i;
                return TP_OK;
            }
            /* @register's hyphenated names (mixed_precision.py) */
            if (k->id == K_MP) {
                char h[128];
                snprintf(h, sizeof h, "%s", k->names[i]);
                for (char *p = h; *p; p++)
                    if (*p == '_') *p = '-';
                if (strcmp(s, h) == 0) {
                    v->name = i;
                    v->i = i;
                    return TP_OK;
                }
            }
        }
        join_names(k->names, names, sizeof names);
        return tp_errf(e, TP_EDATA, "%s:%d: %s: expected one of %s%s, found "
                       "'%s'", file, ln, k->key, names,
                       k->null_ok ? ", null" : "", s);
    case V_STR:
        return TP_OK;
    case V_NUM:
        if (tp_parse_num(s, &v->x) || !(v->x >= (double)k->lo)
            || v->x > (double)k->hi)
            return tp_errf(e, TP_EDATA, "%s:%d: %s: expected a number in "
                           "[%lld, %lld]%s, found '%s'", file, ln, k->key,
                           k->lo, k->hi, k->null_ok ? " or null" : "", s);
        return TP_OK;
    }
    return TP_OK;
}

/* Reads key=value (or key: value) item kv. */
static int read_item(nemo_read *r, const char *key, const char *val,
                     const char *file, int ln, tp_err *e)
{
    if (key[0] == '~')
        return tp_errf(e, TP_EDATA, "%s:%d: %s: deleting a key (~) leaves "
                       "the recipe's default, which trainplan does not "
                       "know; give the value", file, ln, key);
    while (*key == '+') key++;
    const nemo_key *k = key_find(key);
    if (k) return set_value(r, k, val, file, ln, e);
    for (size_t i = 0; i < sizeof nemo_skipped / sizeof nemo_skipped[0]; i++)
        if (strncmp(key, nemo_skipped[i], strlen(nemo_skipped[i])) == 0)
            return TP_OK;
    return tp_errf(e, TP_EDATA, "%s:%d: %s: not a key trainplan reads (it "
                   "reads the layout, batch, precision, overlap and model-"
                   "size keys that trainplan search writes); remove it or "
                   "set what it means with estimate's options", file, ln, key);
}

/* The next whitespace-separated word of *p, quotes kept together and
 * removed; NUL-terminated in place. NULL at the end. */
static char *next_word(char **p)
{
    char *s = *p;
    while (*s && isspace((unsigned char)*s)) s++;
    if (!*s) return NULL;
    char *w = s, *o = s;
    char q = 0;
    for (; *s; s++) {
        if (q) {
            if (*s == q) q = 0;
            else *o++ = *s;
        } else if (*s == '"' || *s == '\'') {
            q = *s;
        } else if (isspace((unsigned char)*s)) {
            s++;
            break;
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
    *p = s;
    return w;
}

/* --recipe's value at file:ln into r. One recipe a job: the same name
 * again (the writer's "# launch:" line beside the command) is one; two
 * names are TP_EDATA naming both, as the Megatron-LM reader refuses a
 * flag given twice with two values and the torchtitan one a key. */
static int set_recipe(nemo_read *r, const char *v, const char *file, int ln,
                      tp_err *e)
{
    if (r->recipe[0] && strncmp(r->recipe, v, sizeof r->recipe - 1) != 0)
        return tp_errf(e, TP_EDATA, "%s:%d: --recipe given twice, as '%s' "
                       "(line %d) and '%s': one recipe a job", file, ln,
                       r->recipe, r->recipe_line, v);
    if (!r->recipe[0]) r->recipe_line = ln;
    snprintf(r->recipe, sizeof r->recipe, "%s", v);
    return TP_OK;
}

/* A torchrun ... run_recipe.py command (or the writer's "# launch:"
 * line): the nodes, the GPUs per node, the recipe, and any key=value. */
static int read_command(nemo_read *r, char *p, const char *file, int ln,
                        int items, tp_err *e)
{
    char *w;
    while ((w = next_word(&p)) != NULL) {
        long long *want = NULL;
        const char *flag = w;
        char *eq = strchr(w, '=');
        if (strncmp(w, "--", 2) == 0) {
            char *arg = NULL;
            if (eq) *eq = '\0', arg = eq + 1;
            int is_rec = strcmp(w, "--recipe") == 0;
            if (strcmp(w, "--nnodes") == 0) want = &r->nnodes;
            else if (strcmp(w, "--nproc-per-node") == 0
                     || strcmp(w, "--nproc_per_node") == 0)
                want = &r->nproc;
            else if (!is_rec) continue; /* --mode pretrain and the like */
            if (!arg) arg = next_word(&p);
            if (!arg)
                return tp_errf(e, TP_EDATA, "%s:%d: %s needs a value", file,
                               ln, flag);
            if (is_rec) {
                int rc = set_recipe(r, arg, file, ln, e);
                if (rc) return rc;
            } else if (tp_parse_int(arg, 1, 1000000, want)) {
                return tp_errf(e, TP_EDATA, "%s:%d: %s: expected an integer "
                               "in [1, 1000000], found '%s'", file, ln, flag,
                               arg);
            }
        } else if (eq && items && eq != w) {
            *eq = '\0';
            int rc = read_item(r, w, eq + 1, file, ln, e);
            if (rc) return rc;
        }
    }
    return TP_OK;
}

/* A torchrun ... run_recipe.py command as the shell expanded it
 * (launch_shell.c): the nodes, the GPUs per node, the recipe, and its
 * key=value overrides. A value not known from the file is refused where
 * it is read (an override trainplan reads, the recipe), and so is a word
 * of unknown start after the script (it could hold overrides); torchrun's
 * counts then come from --gpus, as for any count that is not a number. */
static int read_command_sh(nemo_read *r, const launch_sh_word *w, int n,
                           const char *file, tp_err *e)
{
    int after = 0;
    for (int i = 0; i < n; i++) {
        const char *s = w[i].s;
        int ln = w[i].line, unk = (w[i].flags & LAUNCH_SH_UNKNOWN) != 0;
        size_t len = strlen(s);
        if (w[i].flags & LAUNCH_SH_ASSIGN) continue;
        if (len >= 3 && strcmp(s + len - 3, ".py") == 0) {
            after = 1;
            continue;
        }
        const char *eq = strchr(s, '=');
        if (unk && after
            && ((w[i].flags & LAUNCH_SH_HEAD)
                || (size_t)w[i].at <= (eq ? (size_t)(eq - s) : len)))
            return tp_errf(e, TP_EDATA, "%s:%d: an argument of the recipe "
                           "script that could hold overrides is not known "
                           "from the file: %s; set it in the file (or "
                           "remove it)", file, ln, launch_sh_why(&w[i]));
        if (strncmp(s, "--", 2) == 0) {
            char flag[64];
            size_t fl = eq ? (size_t)(eq - s) : len;
            if (fl >= sizeof flag) continue;
            memcpy(flag, s, fl);
            flag[fl] = '\0';
            long long *want = NULL;
            int is_rec = strcmp(flag, "--recipe") == 0;
            if (strcmp(flag, "--nnodes") == 0) want = &r->nnodes;
            else if (strcmp(flag, "--nproc-per-node") == 0
                     || strcmp(flag, "--nproc_per_node") == 0)
                want = &r->nproc;
            else if (!is_rec) continue;
            const launch_sh_word *vw = &w[i];
            const char *arg = eq ? eq + 1 : NULL;
            if (!arg) {
                if (i + 1 >= n)
                    return tp_errf(e, TP_EDATA, "%s:%d: %s needs a value",
                                   file, ln, flag);
                vw = &w[++i];
                arg = vw->s;
            }
            if (vw->flags & LAUNCH_SH_UNKNOWN) {
                if (!is_rec) continue;
                return tp_errf(e, TP_EDATA, "%s:%d: --recipe: its value is "
                               "not known from the file: %s", file, ln,
                               launch_sh_why(vw));
            }
            if (is_rec) {
                int rc = set_recipe(r, arg, file, ln, e);
                if (rc) return rc;
            } else if (tp_parse_int(arg, 1, 1000000, want)) {
                return tp_errf(e, TP_EDATA, "%s:%d: %s: expected an integer "
                               "in [1, 1000000], found '%s'", file, ln, flag,
                               arg);
            }
        } else if (eq && eq != s && after) {
            char key[256];
            size_t kl = (size_t)(eq - s);
            if (kl >= sizeof key) kl = sizeof key - 1;
            memcpy(key, s, kl);
            key[kl] = '\0';
            if (unk) {
                const char *k = key;
                while (*k == '+') k++;
                int skipped = 0;
                for (size_t j = 0;
                     j < sizeof nemo_skipped / sizeof nemo_skipped[0]; j++)
                    if (strncmp(k, nemo_skipped[j], strlen(nemo_skipped[j]))
                        == 0)
                        skipped = 1;
                if (skipped) continue;
                return tp_errf(e, TP_EDATA, "%s:%d: %s: its value is not "
                               "known from the file: %s", file, ln, key,
                               launch_sh_why(&w[i]));
            }
            int rc = read_item(r, key, eq + 1, file, ln, e);
            if (rc) return rc;
        }
    }
    return TP_OK;
}

/* A job written as a shell script: a torchrun ... run_recipe.py command
 * not in a comment (over continuation lines, with variables). */
static int is_launch_script(const char *text)
{
    for (const char *p = text; *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        const char *s = p;
        while (s < p + n && isspace((unsigned char)*s)) s++;
        if (s < p + n && *s != '#') {
            char line[4096];
            size_t k = (size_t)(p + n - s) < sizeof line - 1
                           ? (size_t)(p + n - s) : sizeof line - 1;
            memcpy(line, s, k);
            line[k] = '\0';
            if (strstr(line, "torchrun") || strstr(line, "run_recipe.py"))
                return 1;
        }
        p = eol ? eol + 1 : p + n;
    }
    return 0;
}

/* One line: a comment ("# launch:" read), a YAML "key: value", or
 * key=value words. */
static int read_line(nemo_read *r, char *s, const char *file, int ln,
                     tp_err *e)
{
    while (*s && isspace((unsigned char)*s)) s++;
    if (s[0] == '#') {
        if (strncmp(s, "# launch:", 9) == 0)
            return read_command(r, s + 9, file, ln, 0, e);
        return TP_OK;
    }
    /* a comment after the value, outside quotes */
    char q = 0;
    for (char *p = s; *p; p++) {
        if (q) {
            if (*p == q) q = 0;
        } else if (*p == '"' || *p == '\'') {
            q = *p;
        } else if (*p == '#' && (p == s || isspace((unsigned char)p[-1]))) {
            *p = '\0';
            break;
        }
    }
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    if (!n) return TP_OK;
    if (strstr(s, "torchrun") || strstr(s, "run_recipe.py"))
        return read_command(r, s, file, ln, 1, e);
    char *eq = strchr(s, '='), *colon = strchr(s, ':');
    if (colon && (!eq || colon < eq)
        && (colon[1] == '\0' || isspace((unsigned char)colon[1]))) {
        *colon = '\0';
        char *k = s, *v = colon + 1;
        size_t kn = strlen(k);
        while (kn && isspace((unsigned char)k[kn - 1])) k[--kn] = '\0';
        char *vv = next_word(&v);
        if (!vv)
            return tp_errf(e, TP_EDATA, "%s:%d: %s: a YAML section; write "
                           "each key on its own line as section.key: value",
                           file, ln, k);
        return read_item(r, k, vv, file, ln, e);
    }
    char *p = s, *w;
    while ((w = next_word(&p)) != NULL) {
        char *weq = strchr(w, '=');
        if (!weq || weq == w)
            return tp_errf(e, TP_EDATA, "%s:%d: expected key=value (or key: "
                           "value), found '%s'", file, ln, w);
        *weq = '\0';
        int rc = read_item(r, w, weq + 1, file, ln, e);
        if (rc) return rc;
    }
    return TP_OK;
}

#define SET(id) (r->v[id].set && !r->v[id].null)
#define IV(id) (r->v[id].i)

/* The model the keys describe: the base recipe's preset with the model
 * keys over it, or (the generic recipe, or none) the model keys alone
 * over GPTModelProvider's defaults (LayerNorm, GeLU, learned positions,
 * tied embeddings, biases: gpt_provider.py, transformer_config.py). */
/* model.moe_layer_freq: an int N (layer i MoE when i % N == 0) or a list
 * of 0 and 1 per layer, into m's leading dense layers and frequency;
 * TP_EDATA when the list is not trainplan's placement (k dense layers,
 * then one MoE layer every f). */
static int moe_freq(const nemo_val *v, const char *file, space_model *m,
                    tp_err *e)
{
    long long f;
    if (!strchr(v->s, '[')) {
        if (tp_parse_int(v->s, 1, 100000, &f))
            return tp_errf(e, TP_EDATA, "%s:%d: model.moe_layer_freq: "
                           "expected an integer in [1, 100000] or a list of "
                           "0 and 1 per layer, found '%s'", file, v->line,
                           v->s);
        m->first_dense_layers = 0;
        m->moe_layer_freq = f;
        return TP_OK;
    }
    int64_t L = m->num_layers, n = 0, k = -1, step = 0, bad = 0;
    for (const char *p = v->s; *p && !bad; p++) {
        if (*p == '[' || *p == ']' || *p == ',' || *p == ' ') continue;
        if (*p != '0' && *p != '1') {
            bad = 1;
            break;
        }
        if (*p == '1') {
            if (k < 0) k = n;
            else if (!step) step = n - k;
        }
        n++;
    }
    if (!step) step = 1;
    for (int64_t i = 0, j = 0; !bad && v->s[j]; j++) {
        char c = v->s[j];
        if (c != '0' && c != '1') continue;
        bad = (c == '1') != (k >= 0 && i >= k && (i - k) % step == 0);
        i++;
    }
    if (bad || n != L || k < 0)
        return tp_errf(e, TP_EDATA, "%s:%d: model.moe_layer_freq %s: expected "
                       "%lld 0s and 1s: leading dense layers (0), then one "
                       "MoE layer (1) every N, which is what trainplan "
                       "models", file, v->line, v->s, (long long)L);
    m->first_dense_layers = k;
    m->moe_layer_freq = step;
    return TP_OK;
}

/* The MoE keys into m (Megatron-Core's defaults where absent:
 * moe_router_topk 2, moe_ffn_hidden_size = ffn_hidden_size, softmax,
 * every layer MoE, dropless). */
static int build_moe(const nemo_read *r, const char *file, space_model *m,
                     tp_err *e)
{
    if (SET(K_QK_NORM)) m->qk_norm = (int)IV(K_QK_NORM);
    if (SET(K_MTP)) m->mtp_layers = IV(K_MTP);
    if (!SET(K_EXPERTS)) {
        if (SET(K_EP) && IV(K_EP) > 1)
            return tp_errf(e, TP_EDATA, "%s:%d: model.expert_model_parallel_"
                           "size %lld without model.num_moe_experts: expert "
                           "parallelism needs a mixture of experts", file,
                           r->v[K_EP].line, IV(K_EP));
        return TP_OK;
    }
    m->num_experts = IV(K_EXPERTS);
    m->top_k = SET(K_MOE_TOPK) ? IV(K_MOE_TOPK) : 2;
    m->expert_ffn_hidden = SET(K_MOE_FFN) ? IV(K_MOE_FFN) : m->ffn_hidden;
    m->shared_experts = m->shared_ffn_hidden = 0;
    if (SET(K_MOE_SHARED)) {
        /* one shared expert of the total size: the same GEMMs */
        m->shared_experts = 1;
        m->shared_ffn_hidden = IV(K_MOE_SHARED);
        m->shared_expert_gate = SET(K_MOE_SHARED_GATE) && IV(K_MOE_SHARED_GATE);
    }
    m->first_dense_layers = 0;
    m->moe_layer_freq = 1;
    if (SET(K_MOE_FREQ)) {
        int rc = moe_freq(&r->v[K_MOE_FREQ], file, m, e);
        if (rc) return rc;
    }
    m->router_sigmoid = SET(K_MOE_SCORE) && r->v[K_MOE_SCORE].name == 1;
    m->router_groups = SET(K_MOE_GROUPS) ? IV(K_MOE_GROUPS) : 0;
    m->router_topk_groups = SET(K_MOE_GROUP_TOPK) ? IV(K_MOE_GROUP_TOPK) : 0;
    m->capacity_factor = SET(K_MOE_CAPACITY) ? r->v[K_MOE_CAPACITY].x : 0;
    return TP_OK;
}

static int build_model(const nemo_read *r, const char *file, int64_t seq,
                       space_model *m, tp_err *e)
{
    const struct nemo_recipe *rc = NULL;
    if (r->recipe[0] && strcmp(r->recipe, GENERIC_RECIPE) != 0) {
        for (int i = 0; i < N_RECIPES; i++)
            if (strcmp(nemo_recipes[i].recipe, r->recipe) == 0)
                rc = &nemo_recipes[i];
        if (!rc) {
            char known[1024] = GENERIC_RECIPE;
            for (int i = 0; i < N_RECIPES; i++) {
                size_t n = strlen(known);
                snprintf(known + n, sizeof known - n, ", %s",
                         nemo_recipes[i].recipe);
            }
            return tp_errf(e, TP_EDATA, "%s:%d: --recipe %s: not a recipe "
                           "trainplan knows the model of; expected one of %s "
                           "(or %s with the model's sizes as model.* keys)",
                           file, r->recipe_line, r->recipe, known,
                           GENERIC_RECIPE);
        }
    }
    memset(m, 0, sizeof *m);
    if (rc) {
        const space_model *p = space_preset_find(rc->preset, e);
        if (!p) return TP_EINTERNAL;
        *m = *p;
    } else {
        static const nemo_kid need[] = {K_LAYERS, K_HIDDEN, K_HEADS, K_FFN};
        for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
            if (!SET(need[i])) {
                const char *k = "";
                for (int j = 0; j < N_KEYS; j++)
                    if (nemo_keys[j].id == need[i]) {
                        k = nemo_keys[j].key;
                        break;
                    }
                return tp_errf(e, TP_EDATA, "%s: no %s: %s builds a bare "
                               "GPTModelProvider, so the model's sizes must "
                               "be given (or name a recipe with --recipe in "
                               "a '# launch:' or torchrun line)",
                               file, k, r->recipe[0] ? r->recipe
                                                      : "no recipe named; "
                                                        GENERIC_RECIPE);
            }
        snprintf(m->name, sizeof m->name, "%.63s",
                 r->recipe[0] ? r->recipe : "nemo-overrides");
        snprintf(m->source, sizeof m->source, "%s (NeMo / Megatron-Bridge "
                 "model keys)", file);
        m->act = SPACE_ACT_GELU;
        m->norm = SPACE_NORM_LAYERNORM;
        m->pos = SPACE_POS_LEARNED;
        m->tied_embeddings = 1;
        m->qkv_bias = m->out_bias = m->mlp_bias = 1;
    }
    if (SET(K_LAYERS)) m->num_layers = IV(K_LAYERS);
    if (SET(K_HIDDEN)) m->hidden = IV(K_HIDDEN);
    if (SET(K_HEADS)) m->heads = m->kv_heads = IV(K_HEADS);
    if (SET(K_GROUPS)) m->kv_heads = IV(K_GROUPS);
    if (!rc && !SET(K_GROUPS)) m->kv_heads = m->heads;
    if (SET(K_KV_CH)) m->head_dim = IV(K_KV_CH);
    if (SET(K_FFN)) m->ffn_hidden = IV(K_FFN);
    if (SET(K_NORM)) m->norm = (space_norm)(r->v[K_NORM].name % 2);
    if (SET(K_POS))
        m->pos = r->v[K_POS].name == 0 ? SPACE_POS_LEARNED : SPACE_POS_ROPE;
    if (SET(K_TIED)) m->tied_embeddings = (int)IV(K_TIED);
    if (SET(K_ROTARY_PCT))
        m->rotary_fraction = r->v[K_ROTARY_PCT].x < 1 ? r->v[K_ROTARY_PCT].x
                                                       : 0;
    if (SET(K_ROTARY_BASE)) m->rope_theta = r->v[K_ROTARY_BASE].x;
    else if (!rc && m->pos == SPACE_POS_ROPE) m->rope_theta = 10000;
    if (m->pos != SPACE_POS_ROPE) m->rotary_fraction = m->rope_theta = 0;
    if (SET(K_WINDOW)) {
        /* [L, R] (a list, or Python's tuple); L -1: no window */
        long long left, right;
        char tail;
        const char *w = r->v[K_WINDOW].s;
        if ((sscanf(w, " [ %lld , %lld ] %c", &left, &right, &tail) != 2
             && sscanf(w, " ( %lld , %lld ) %c", &left, &right, &tail) != 2)
            || left >= 100000000 || (left >= 0 && right != 0))
            return tp_errf(e, TP_EDATA, "%s:%d: model.window_size: expected "
                           "[LEFT,0] (LEFT -1 to 99999999: a causal window of "
                           "LEFT + 1 tokens) or null, found '%s'", file,
                           r->v[K_WINDOW].line, w);
        m->window = left >= 0 ? left + 1 : 0;
        m->window_chunked = 0;
        if (m->window == 0) m->global_every = 0;
    }
    if (SET(K_WINDOW_SKIP) && m->window > 0) m->global_every = IV(K_WINDOW_SKIP);
    if (SET(K_SOFTMAX)) m->attn_sinks = r->v[K_SOFTMAX].name;
    if (SET(K_ACT_FUNC) || SET(K_GLU)) {
        static const char *const fn[] = {"gelu", "relu", "squared_relu",
                                         "squared_relu", "silu"};
        const char *f = SET(K_ACT_FUNC) ? fn[r->v[K_ACT_FUNC].name]
                        : m->act == SPACE_ACT_SWIGLU ? "silu"
                                                     : nemo_act[m->act].func;
        int glu = SET(K_GLU) ? (int)IV(K_GLU) : nemo_act[m->act].glu;
        int found = -1;
        for (int a = 0; a < SPACE_ACT_COUNT; a++)
            if (strcmp(nemo_act[a].func, f) == 0 && nemo_act[a].glu == glu)
                found = a;
        if (found < 0)
            return tp_errf(e, TP_EDATA, "%s:%d: model.activation_func %s with "
                           "model.gated_linear_unit %s: not an activation "
                           "trainplan models (gelu, relu, squared_relu; gelu "
                           "or silu gated)", file,
                           r->v[SET(K_ACT_FUNC) ? K_ACT_FUNC : K_GLU].line, f,
                           tf(glu));
        m->act = (space_act)found;
    }
    if (SET(K_ACT1)) {
        static const space_act a1[] = {SPACE_ACT_GELU, SPACE_ACT_SQUARED_RELU,
                                       SPACE_ACT_SWIGLU, SPACE_ACT_GEGLU};
        m->act = a1[r->v[K_ACT1].name];
    }
    /* Megatron-Core: Q/K/V biased with add_bias_linear or add_qkv_bias,
     * the output projection and the MLP with add_bias_linear. */
    if (SET(K_BIAS_LINEAR)) m->out_bias = m->mlp_bias = (int)IV(K_BIAS_LINEAR);
    if (SET(K_BIAS_LINEAR) || SET(K_QKV_BIAS))
        m->qkv_bias = m->out_bias || (SET(K_QKV_BIAS) && IV(K_QKV_BIAS));
    if (SET(K_BIAS1)) m->qkv_bias = m->out_bias = m->mlp_bias = (int)IV(K_BIAS1);
    /* A model.vocab_size that is set is used as it is (no padding);
     * trainplan pads every vocabulary, which is the same where it is
     * already a multiple of 128 x TP. */
    if (SET(K_VOCAB_MODEL)) m->vocab = IV(K_VOCAB_MODEL);
    else if (SET(K_VOCAB_TOK)) m->vocab = IV(K_VOCAB_TOK);
    else if (!rc)
        return tp_errf(e, TP_EDATA, "%s: no vocabulary: give "
                       "tokenizer.vocab_size (the unpadded count; "
                       "model.vocab_size=null pads it)", file);
    if (SET(K_ATTN_DROP)) m->attn_dropout = r->v[K_ATTN_DROP].x;
    if (SET(K_HID_DROP)) m->hidden_dropout = r->v[K_HID_DROP].x;
    /* Learned positions: Megatron-Core builds seq_length of them
     * (GPTModel max_sequence_length); a preset keeps its own count. */
    if (SET(K_MAXPOS)) m->max_position = IV(K_MAXPOS);
    else if (!rc) m->max_position = seq;
    int mrc = build_moe(r, file, m, e);
    if (mrc) return mrc;
    return space_model_validate(m, file, e);
}

int launch_read_nemo(const char *text, const char *file, search_job *j,
                     space_model *m, FILE *err, tp_err *e)
{
    (void)err; /* no notes: every key read either counts or is refused */
    nemo_read *r = tp_xmalloc(sizeof *r);
    memset(r, 0, sizeof *r);
    size_t n = strlen(text);
    char *buf = tp_xmalloc(n + 1);
    memcpy(buf, text, n + 1);
    int rc = TP_OK, ln = 0;
    if (is_launch_script(text)) {
        /* the shell's words of each command: the launch's, and stray
         * key=value override lines as the line reader takes them */
        launch_sh sh;
        rc = launch_sh_read(text, file, &sh, e);
        for (int c = 0; !rc && c < sh.nc; c++) {
            const launch_sh_word *w = &sh.w[sh.c[c].first];
            int nw = sh.c[c].n, launch = 0;
            for (int i = 0; i < nw; i++) {
                size_t len = strlen(w[i].s);
                if (strcmp(tp_basename(w[i].s), "torchrun") == 0
                    || (len >= 13
                        && strcmp(w[i].s + len - 13, "run_recipe.py") == 0))
                    launch = 1;
            }
            if (launch) {
                rc = read_command_sh(r, w, nw, file, e);
            } else if (!(w[0].flags & (LAUNCH_SH_ASSIGN | LAUNCH_SH_UNKNOWN))
                       && strchr(w[0].s, '=') && strchr(w[0].s, '.')) {
                for (int i = 0; !rc && i < nw; i++) {
                    char *eq = strchr(w[i].s, '=');
                    if (!eq || eq == w[i].s) continue;
                    char key[256];
                    size_t kl = (size_t)(eq - w[i].s);
                    if (kl >= sizeof key) kl = sizeof key - 1;
                    memcpy(key, w[i].s, kl);
                    key[kl] = '\0';
                    rc = read_item(r, key, eq + 1, file, w[i].line, e);
                }
            }
        }
        launch_sh_free(&sh);
        buf[0] = '\0';
    }
    for (char *s = buf; s && !rc;) {
        char *nl = strchr(s, '\n');
        if (nl) *nl = '\0';
        ln++;
        size_t k = strlen(s);
        if (k && s[k - 1] == '\r') s[k - 1] = '\0';
        rc = read_line(r, s, file, ln, e);
        s = nl ? nl + 1 : NULL;
    }
    free(buf);
    if (!rc) {
        int64_t seq = SET(K_SEQ_DATA) ? IV(K_SEQ_DATA)
                      : SET(K_SEQ_MODEL) ? IV(K_SEQ_MODEL) : 0;
        rc = build_model(r, file, seq, m, e);
    }
    if (rc) {
        free(r);
        return rc;
    }
    j->framework = SPACE_FW_MEGATRON_CORE;
    /* The allocator: Megatron-Bridge v0.6.0's recipes default
     * PYTORCH_CUDA_ALLOC_CONF to expandable_segments:True (env_vars from
     * recipes/utils/environment_utils.py COMMON_RECIPE_ENV_VARS, set by
     * training/config.py apply_environment_variables unless the
     * launcher's environment has it); NeMo 1's launcher YAML sets nothing
     * (PyTorch's default, off). --[no-]expandable-segments says what the
     * environment does instead. */
    int nemo1 = SET(K_PRECISION1) || SET(K_FP8_1) || SET(K_OPTIM1)
                || SET(K_NODES) || SET(K_DEVICES) || SET(K_ACT1)
                || SET(K_BIAS1);
    if (!(j->sw_set & SEARCH_SW_ALLOC))
        j->alloc_expandable = !nemo1, j->sw_set |= SEARCH_SW_ALLOC;
    if (SET(K_TP)) j->tp = IV(K_TP), j->tp_set = 1;
    if (SET(K_PP)) j->pp = IV(K_PP);
    if (SET(K_CP)) j->cp = IV(K_CP);
    if (r->v[K_VPP].set) j->vstages = SET(K_VPP) ? IV(K_VPP) : 1;
    /* The pipeline split: the provider's fields, Megatron-Core's even
     * split where none is given; its rules are the estimate's (split.c). */
    j->split_set = 1;
    if (SET(K_LAYOUT)) {
        const nemo_val *v = &r->v[K_LAYOUT];
        char lwhy[320];
        if (space_pp_layout_parse(v->s, &j->pp_layout_store, lwhy,
                                  sizeof lwhy))
            rc = tp_errf(e, TP_EDATA, "%s:%d: model.pipeline_model_parallel_"
                         "layout: %s", file, v->line, lwhy);
        else if (j->pp <= 0 || j->pp_layout_store.n % j->pp)
            rc = tp_errf(e, TP_EDATA, "%s:%d: model.pipeline_model_parallel_"
                         "layout '%s': %d stages are not a multiple of "
                         "model.pipeline_model_parallel_size (%lld)",
                         file, v->line, v->s, j->pp_layout_store.n,
                         (long long)j->pp);
        else if (SET(K_VPP) && IV(K_VPP) != j->pp_layout_store.n / j->pp)
            rc = tp_errf(e, TP_EDATA, "%s:%d: model.virtual_pipeline_model_"
                         "parallel_size %lld: the layout has %lld chunks a "
                         "rank", file, r->v[K_VPP].line, IV(K_VPP),
                         (long long)(j->pp_layout_store.n / j->pp));
        if (!rc) {
            j->vstages = j->pp_layout_store.n / j->pp;
            j->pp_layout = &j->pp_layout_store;
        }
    }
    if (SET(K_ACC_EMBED) && IV(K_ACC_EMBED)) j->pp_account |= SPACE_PP_EMBED;
    if (SET(K_ACC_LOSS) && IV(K_ACC_LOSS)) j->pp_account |= SPACE_PP_LOSS;
    if (SET(K_PP_FIRST)) j->pp_first = IV(K_PP_FIRST);
    if (SET(K_PP_LAST)) j->pp_last = IV(K_PP_LAST);
    /* a split Megatron-Core refuses is refused here, where the file is
     * known (the rules and their sources: split.c) */
    if (!rc) {
        space_layout t;
        memset(&t, 0, sizeof t);
        t.pp = j->pp > 0 ? j->pp : 1;
        t.vpp = j->vstages > 0 ? j->vstages : 1;
        t.pp_account = j->pp_account;
        t.pp_first = j->pp_first, t.pp_last = j->pp_last;
        t.pp_layout = j->pp_layout;
        space_split sp;
        char swhy[320];
        space_reject rj = space_split_resolve(m, &t, &sp, swhy, sizeof swhy);
        int line = SET(K_LAYOUT)     ? r->v[K_LAYOUT].line
                   : SET(K_PP_FIRST) ? r->v[K_PP_FIRST].line
                   : SET(K_PP_LAST)  ? r->v[K_PP_LAST].line
                   : SET(K_ACC_EMBED) ? r->v[K_ACC_EMBED].line
                   : SET(K_ACC_LOSS) ? r->v[K_ACC_LOSS].line
                                     : r->v[K_PP].line;
        if (rj != SPACE_OK)
            rc = tp_errf(e, TP_EDATA, "%s:%d: the pipeline split: %s (%s)",
                         file, line, swhy, space_reject_names[rj]);
    }
    if (SET(K_SP)) j->sp = (int)IV(K_SP);
    /* experts: Megatron-Core's defaults EP 1, expert TP = TP, allgather
     * (ModelParallelConfig, TransformerConfig) */
    if (m->num_experts > 0) {
        j->ep = SET(K_EP) ? IV(K_EP) : 1;
        j->etp = SET(K_ETP) ? IV(K_ETP) : j->tp_set ? j->tp : 1;
        j->moe_dispatcher = SET(K_MOE_DISPATCHER)
                                ? r->v[K_MOE_DISPATCHER].name
                                : SPACE_MOE_ALLGATHER;
        if (SET(K_MOE_A2A_OVERLAP) && IV(K_MOE_A2A_OVERLAP))
            j->moe_comm_overlap = SPACE_MOE_OVERLAP_A2A;
        else if (SET(K_MOE_SHARED_OVERLAP) && IV(K_MOE_SHARED_OVERLAP))
            j->moe_comm_overlap = SPACE_MOE_OVERLAP_SHARED;
        /* the backend counts for the flex dispatcher only */
        if (SET(K_MOE_FLEX_BACKEND) && j->moe_dispatcher == SPACE_MOE_FLEX)
            j->moe_flex_backend = r->v[K_MOE_FLEX_BACKEND].name;
        if (SET(K_MOE_ROUTER_PAD) && IV(K_MOE_ROUTER_PAD))
            j->moe_router_pad = 1;
    }
    if (SET(K_MBS)) j->mbs = IV(K_MBS);
    if (SET(K_GBS)) j->gbs = IV(K_GBS);
    /* run_recipe.py sets model.seq_length from dataset.seq_length */
    if (SET(K_SEQ_DATA)) j->seq_length = IV(K_SEQ_DATA);
    else if (SET(K_SEQ_MODEL)) j->seq_length = IV(K_SEQ_MODEL);
    if (r->v[K_RC_GRAN].set) {
        j->recompute = r->v[K_RC_GRAN].null ? SPACE_RECOMPUTE_NONE
                       : r->v[K_RC_GRAN].name == 0 ? SPACE_RECOMPUTE_SELECTIVE
                                                   : SPACE_RECOMPUTE_FULL;
        if (j->recompute == SPACE_RECOMPUTE_FULL && SET(K_RC_METHOD)) {
            j->recompute_method = r->v[K_RC_METHOD].name;
            j->sw_set |= SEARCH_SW_RC_METHOD;
        }
        if (j->recompute == SPACE_RECOMPUTE_FULL && SET(K_RC_LAYERS))
            j->recompute_layers = IV(K_RC_LAYERS);
    }
    if (!rc && SET(K_RC_MODULES) && j->recompute == SPACE_RECOMPUTE_SELECTIVE
        && space_rc_modules_parse(r->v[K_RC_MODULES].s, &j->recompute_modules))
        rc = tp_errf(e, TP_EDATA, "%s:%d: model.recompute_modules %s: "
                     "expected a list of core_attn, layernorm, moe_act, "
                     "mla_up_proj, mlp, moe, shared_experts, or null", file,
                     r->v[K_RC_MODULES].line, r->v[K_RC_MODULES].s);
    if (SET(K_MP)) {
        int i = r->v[K_MP].name;
        j->precision = mp_meaning[i].dtype;
        if (j->precision == HW_FP8) {
            j->fp8_recipe = mp_meaning[i].fp8;
            j->sw_set |= SEARCH_SW_FP8;
            /* as the recipe runs: most gather fp8 parameters */
            j->fp8_params = nemo_mp_fp8[j->fp8_recipe].fp8_params;
        }
    }
    if (SET(K_PRECISION1))
        j->precision = r->v[K_PRECISION1].name < 2 ? HW_BF16 : HW_FP16;
    if (SET(K_FP8_1) && IV(K_FP8_1)) {
        /* NeMo 1's fp8 is delayed scaling */
        j->precision = HW_FP8;
        j->fp8_recipe = SPACE_FP8_DELAYED;
        j->sw_set |= SEARCH_SW_FP8;
    }
    if (SET(K_FP8_PARAMS)) j->fp8_params = (int)IV(K_FP8_PARAMS);
    if (SET(K_FSDP) && IV(K_FSDP))
        j->zero = SET(K_SHARD) ? r->v[K_SHARD].name : SPACE_ZERO_3;
    else if (SET(K_DISTOPT) || SET(K_DISTOPT_OPT))
        /* either turns it on in both (config.py,
         * _validate_and_sync_distributed_optimizer_settings) */
        j->zero = (SET(K_DISTOPT) && IV(K_DISTOPT))
                          || (SET(K_DISTOPT_OPT) && IV(K_DISTOPT_OPT))
                      ? SPACE_ZERO_1
                      : SPACE_ZERO_NONE;
    if (SET(K_OPTIM1))
        j->zero = r->v[K_OPTIM1].name == 1 ? SPACE_ZERO_1 : SPACE_ZERO_NONE;
    if (SET(K_DP_OVERLAP)) {
        j->no_overlap = !IV(K_DP_OVERLAP);
        j->sw_set |= SEARCH_SW_DP;
    }
    if (SET(K_TP_UB)) {
        j->tp_overlap = IV(K_TP_UB) ? SPACE_TP_OVERLAP_ALL : SPACE_TP_OVERLAP_BWD;
        j->sw_set |= SEARCH_SW_TP;
    }
    if (SET(K_P2P_OVERLAP)) {
        j->no_pp_overlap = !IV(K_P2P_OVERLAP);
        j->sw_set |= SEARCH_SW_PP;
    }
    /* the fused loss: Megatron-Core's native one, or Transformer Engine's
     * (cross_entropy_fusion_impl te, which Megatron-Core only warns
     * about), read as today's TE keeps it: an fp32 gradient (v2.18 on) */
    if (SET(K_CE)) {
        int te = SET(K_CE_IMPL) && r->v[K_CE_IMPL].name == 1;
        j->ce_fusion = IV(K_CE) && !te;
        j->ce_te = IV(K_CE) && te ? SPACE_CE_TE_FP32 : SPACE_CE_TE_NONE;
    }
    if (SET(K_MOE_PERMUTE) && SET(K_EXPERTS)) {
        j->moe_permute_fusion = (int)IV(K_MOE_PERMUTE);
        j->sw_set |= SEARCH_SW_PERMUTE;
    }
    if (SET(K_MOE_ROUTER) && SET(K_EXPERTS)) {
        j->moe_router_fusion = (int)IV(K_MOE_ROUTER);
        j->sw_set |= SEARCH_SW_ROUTER;
    }
    if (SET(K_FSDP_DB)) j->fsdp_double_buffer = (int)IV(K_FSDP_DB);
    if (SET(K_CG_IMPL)) j->cuda_graph = r->v[K_CG_IMPL].name;
    if (!rc && SET(K_CG_SCOPE)) {
        /* the deprecated scope's "full_iteration" is the implementation
         * (cuda_graph_config.py CUDA_GRAPH_MODULES_DEPRECATIONS) */
        char mods[512];
        snprintf(mods, sizeof mods, "%s", r->v[K_CG_SCOPE].s);
        char *fi = strstr(mods, "full_iteration");
        if (fi && strncmp(fi, "full_iteration_inference", 24) != 0) {
            j->cuda_graph = SPACE_CG_FULL_ITERATION;
            memset(fi, ' ', 14);
        }
        if (space_cgm_parse(mods, &j->cuda_graph_modules))
            rc = tp_errf(e, TP_EDATA, "%s:%d: %s %s: expected full, "
                         "full_iteration or a list of attn, mlp, moe, "
                         "moe_router, moe_preprocess", file,
                         r->v[K_CG_SCOPE].line, "model.cuda_graph_scope",
                         r->v[K_CG_SCOPE].s);
        else if (j->cuda_graph == SPACE_CG_LOCAL || j->cuda_graph == SPACE_CG_TE)
            j->cuda_graph_scope_set = j->cuda_graph_modules != 0;
        else
            j->cuda_graph_modules = 0;
    }
    /* null (the recipes' None): Transformer Engine picks, trainplan's
     * auto */
    if (r->v[K_ATTN].set) {
        j->attn_backend = SET(K_ATTN) ? r->v[K_ATTN].name : SPACE_ATTN_AUTO;
        j->sw_set |= SEARCH_SW_FLASH;
    }
    if (SET(K_CP_COMM)) {
        j->cp_comm = r->v[K_CP_COMM].name;
        j->sw_set |= SEARCH_SW_CP;
    }
    /* memory savers and micro-batch groups (issue 28): what Megatron-Core
     * refuses of them is search_job_check_savers' and est_saver_check's */
    if (SET(K_PA_OPT)) j->pa_optimizer = (int)IV(K_PA_OPT);
    {
        const struct {
            nemo_kid k;
            const char *key;
            int *out;
        } dts[] = {{K_MAIN_GRADS, "optimizer.main_grads_dtype",
                    &j->main_grads_dtype},
                   {K_MAIN_PARAMS, "optimizer.main_params_dtype",
                    &j->main_params_dtype},
                   {K_EXP_AVG, "optimizer.exp_avg_dtype", &j->exp_avg_dtype},
                   {K_EXP_AVG_SQ, "optimizer.exp_avg_sq_dtype",
                    &j->exp_avg_sq_dtype}};
        for (size_t i = 0; !rc && i < sizeof dts / sizeof dts[0]; i++) {
            if (!SET(dts[i].k)) continue;
            int d = odtype_of[r->v[dts[i].k].name];
            if (d == SPACE_OPT_FP8)
                rc = tp_errf(e, TP_EDATA, "%s:%d: %s fp8: Megatron-Bridge "
                             "reads it as torch.float8_e4m3fn, which Transformer "
                             "Engine's FusedAdam refuses (fp8 states are "
                             "torch.uint8 there); not a launch that runs",
                             file, r->v[dts[i].k].line, dts[i].key);
            *dts[i].out = d;
        }
    }
    if (SET(K_OPT_OFFLOAD) && IV(K_OPT_OFFLOAD)) {
        j->opt_offload = 1;
        if (SET(K_OPT_OFFLOAD_FRAC)) {
            j->opt_offload_fraction = r->v[K_OPT_OFFLOAD_FRAC].x;
            if (!rc && !(j->opt_offload_fraction > 0))
                rc = tp_errf(e, TP_EDATA, "%s:%d: optimizer.optimizer_"
                             "offload_fraction 0: nothing offloaded; set "
                             "optimizer.optimizer_cpu_offload=false",
                             file, r->v[K_OPT_OFFLOAD_FRAC].line);
        }
        j->opt_offload_overlap = SET(K_OPT_OFFLOAD_OVERLAP)
                                 && IV(K_OPT_OFFLOAD_OVERLAP);
    }
    /* TransformerConfig: cpu_offloading with cpu_offloading_num_layers;
     * Transformer Engine offloads nothing without activations
     * (get_cpu_offload_context: weights alone are a no-op) */
    if (SET(K_CPU_OFFLOAD) && IV(K_CPU_OFFLOAD)
        && !(SET(K_CPU_OFFLOAD_ACT) && !IV(K_CPU_OFFLOAD_ACT))) {
        j->act_offload_layers = SET(K_CPU_OFFLOAD_LAYERS)
                                    ? IV(K_CPU_OFFLOAD_LAYERS)
                                    : 0;
        if (!rc && j->act_offload_layers <= 0)
            rc = tp_errf(e, TP_EDATA, "%s:%d: model.cpu_offloading true "
                         "without model.cpu_offloading_num_layers >= 1 "
                         "(TransformerConfig's default 0 offloads no layer); "
                         "give the layers",
                         file, r->v[K_CPU_OFFLOAD].line);
    }
    if (!rc && SET(K_FG_OFFLOAD) && IV(K_FG_OFFLOAD)) {
        j->fine_grained = 1;
        if (!SET(K_OFFLOAD_MODULES)
            || space_off_modules_parse(r->v[K_OFFLOAD_MODULES].s,
                                       &j->offload_modules))
            rc = tp_errf(e, TP_EDATA, "%s:%d: model.offload_modules %s: "
                         "expected a list of attn_norm, qkv_linear, "
                         "core_attn, attn_proj, mlp_norm, expert_fc1, "
                         "moe_act",
                         file,
                         r->v[SET(K_OFFLOAD_MODULES) ? K_OFFLOAD_MODULES
                                                     : K_FG_OFFLOAD].line,
                         SET(K_OFFLOAD_MODULES) ? r->v[K_OFFLOAD_MODULES].s
                                                : "(none)");
        if (!rc && SET(K_OFFLOAD_FRAC)) {
            j->offload_fraction = r->v[K_OFFLOAD_FRAC].x;
            if (!(j->offload_fraction > 0))
                rc = tp_errf(e, TP_EDATA, "%s:%d: model.activation_offload_"
                             "fraction 0: nothing offloaded",
                             file, r->v[K_OFFLOAD_FRAC].line);
        }
    }
    if (SET(K_MB_GROUP)) j->mb_group = IV(K_MB_GROUP);
    if (!rc && SET(K_WGRAD_DEFER) && IV(K_WGRAD_DEFER))
        rc = tp_errf(e, TP_EDATA, "%s:%d: comm_overlap.defer_embedding_wgrad_"
                     "compute: estimate has no option for it; remove it",
                     file, r->v[K_WGRAD_DEFER].line);
    long long nodes = r->nnodes ? r->nnodes : SET(K_NODES) ? IV(K_NODES) : 0;
    long long per = r->nproc ? r->nproc : SET(K_DEVICES) ? IV(K_DEVICES) : 0;
    if (!rc && (nodes > 0) != (per > 0))
        rc = tp_errf(e, TP_EDATA, "%s: %s given without %s: the GPUs are "
                     "nodes x GPUs per node", file,
                     nodes ? "the nodes" : "the GPUs per node",
                     nodes ? "the GPUs per node (--nproc-per-node, "
                             "trainer.devices)"
                           : "the nodes (--nnodes, trainer.num_nodes)");
    if (!rc && nodes > 0) {
        if (j->gpus > 0 && j->gpus != nodes * per)
            rc = tp_errf(e, TP_EUSAGE, "--gpus %lld and %s (%lld nodes x %lld "
                         "GPUs) disagree", (long long)j->gpus, file, nodes,
                         per);
        j->gpus = nodes * per;
    }
    free(r);
    return rc;
}
