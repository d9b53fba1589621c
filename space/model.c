/*
 * model.c - what a model costs: exact parameter counts, FLOPs per token,
 * and the checks that keep a space_model's fields sane.
 *
 * Does not: read files (hfconfig.c), hold the preset table (presets.c),
 * or model time or memory (estimator/).
 *
 * References:
 *  - D. Narayanan et al., "Efficient Large-Scale Language Model Training on
 *    GPU Clusters Using Megatron-LM", SC'21, arXiv:2104.04473: eq. 3 and
 *    Appendix (FLOPs per iteration 72 B s l h^2 (1 + s/6h + V/12lh), and
 *    96 B s l h^2 (1 + s/6h + V/16lh) with full recomputation), and the
 *    parameter count behind its Table 1, P = 12 l h^2 (1 + 13/12h +
 *    (V + s)/12lh), which leaves out the final LayerNorm.
 *  - A. Chowdhery et al., "PaLM", arXiv:2204.02311, Appendix B: model FLOPs
 *    per token 6N + 12 L H Q T (attention counted, non-causal).
 *  - V. Korthikanti et al., "Reducing Activation Recomputation in Large
 *    Transformer Models", arXiv:2205.05198, Section 5 (selective recompute
 *    of the attention core).
 */
#include "space.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

const char *const space_act_names[SPACE_ACT_COUNT] = {
    [SPACE_ACT_GELU] = "gelu",
    [SPACE_ACT_RELU] = "relu",
    [SPACE_ACT_SQUARED_RELU] = "squared-relu",
    [SPACE_ACT_SWIGLU] = "swiglu",
    [SPACE_ACT_GEGLU] = "geglu",
};
_Static_assert(sizeof space_act_names / sizeof space_act_names[0]
                   == SPACE_ACT_COUNT,
               "space_act_names must name every space_act");

const char *const space_norm_names[SPACE_NORM_COUNT] = {
    [SPACE_NORM_LAYERNORM] = "layernorm",
    [SPACE_NORM_RMSNORM] = "rmsnorm",
};
_Static_assert(sizeof space_norm_names / sizeof space_norm_names[0]
                   == SPACE_NORM_COUNT,
               "space_norm_names must name every space_norm");

const char *const space_pos_names[SPACE_POS_COUNT] = {
    [SPACE_POS_LEARNED] = "learned",
    [SPACE_POS_ROPE] = "rope",
    [SPACE_POS_ALIBI] = "alibi",
    [SPACE_POS_NONE] = "none",
};
_Static_assert(sizeof space_pos_names / sizeof space_pos_names[0]
                   == SPACE_POS_COUNT,
               "space_pos_names must name every space_pos");

const char *const space_recompute_names[SPACE_RECOMPUTE_COUNT] = {
    [SPACE_RECOMPUTE_NONE] = "none",
    [SPACE_RECOMPUTE_SELECTIVE] = "selective",
    [SPACE_RECOMPUTE_FULL] = "full",
    [SPACE_RECOMPUTE_SELECTIVE_OP] = "selective-op",
};
_Static_assert(sizeof space_recompute_names / sizeof space_recompute_names[0]
                   == SPACE_RECOMPUTE_COUNT,
               "space_recompute_names must name every space_recompute");

const char *const space_rc_module_names[SPACE_RC_COUNT] = {
    "core_attn", "layernorm", "moe_act", "mla_up_proj", "mlp", "moe",
    "shared_experts",
};

const char *const space_recompute_method_names[SPACE_RECOMPUTE_METHOD_COUNT] = {
    [SPACE_RECOMPUTE_UNIFORM] = "uniform",
    [SPACE_RECOMPUTE_BLOCK] = "block",
};
_Static_assert(sizeof space_recompute_method_names
                       / sizeof space_recompute_method_names[0]
                   == SPACE_RECOMPUTE_METHOD_COUNT,
               "space_recompute_method_names names every method");

const char *const space_tp_overlap_names[SPACE_TP_OVERLAP_COUNT] = {
    [SPACE_TP_OVERLAP_BWD] = "backward",
    [SPACE_TP_OVERLAP_NONE] = "none",
    [SPACE_TP_OVERLAP_ALL] = "all",
    [SPACE_TP_OVERLAP_DTENSOR] = "dtensor",
    [SPACE_TP_OVERLAP_ASYNC] = "async-tp",
};

const char *const space_fp8_recipe_names[SPACE_FP8_RECIPE_COUNT] = {
    [SPACE_FP8_DELAYED] = "delayed",
    [SPACE_FP8_TENSORWISE] = "tensorwise",
    [SPACE_FP8_ROWWISE] = "rowwise",
    [SPACE_FP8_BLOCKWISE] = "blockwise",
    [SPACE_FP8_MXFP8] = "mxfp8",
};
_Static_assert(sizeof space_fp8_recipe_names / sizeof space_fp8_recipe_names[0]
                   == SPACE_FP8_RECIPE_COUNT,
               "space_fp8_recipe_names names every recipe");

const char *const space_fp8_act_cache_names[SPACE_FP8_ACT_COUNT] = {
    [SPACE_FP8_ACT_TE] = "te",
    [SPACE_FP8_ACT_DEEPSEEK_V3] = "deepseek-v3",
};
_Static_assert(sizeof space_fp8_act_cache_names
                       / sizeof space_fp8_act_cache_names[0]
                   == SPACE_FP8_ACT_COUNT,
               "space_fp8_act_cache_names names every cache");

const char *const space_attn_names[SPACE_ATTN_COUNT] = {
    [SPACE_ATTN_UNFUSED] = "unfused",
    [SPACE_ATTN_FLASH] = "flash",
    [SPACE_ATTN_CUDNN] = "fused",
    [SPACE_ATTN_AUTO] = "auto",
};
_Static_assert(sizeof space_attn_names / sizeof space_attn_names[0]
                   == SPACE_ATTN_COUNT,
               "space_attn_names names every kernel");

const char *const space_framework_names[SPACE_FW_COUNT] = {
    [SPACE_FW_MEGATRON_CORE] = "megatron-core",
    [SPACE_FW_MEGATRON_2021] = "megatron-lm-2021",
    [SPACE_FW_TORCHTITAN] = "torchtitan",
    [SPACE_FW_PYTORCH_FSDP] = "pytorch-fsdp",
    [SPACE_FW_DEEPSPEED_2021] = "deepspeed-2021",
};

const char *const space_stack_names[SPACE_STACK_COUNT] = {
    [SPACE_STACK_MEGATRON_2021] = "megatron-lm-2021",
    [SPACE_STACK_MEGATRON_CORE] = "megatron-core",
    [SPACE_STACK_PYTORCH_EAGER] = "pytorch-eager",
    [SPACE_STACK_PYTORCH_COMPILED] = "pytorch-compiled",
    [SPACE_STACK_DEEPSPEED_2021] = "deepspeed-2021",
};

/* Each framework's stack, fused or compiled and with space_layout.eager. */
static const struct {
    space_stack stack, eager_stack;
} framework_stacks[SPACE_FW_COUNT] = {
    [SPACE_FW_MEGATRON_CORE] = {SPACE_STACK_MEGATRON_CORE,
                                SPACE_STACK_MEGATRON_CORE},
    [SPACE_FW_MEGATRON_2021] = {SPACE_STACK_MEGATRON_2021,
                                SPACE_STACK_MEGATRON_2021},
    [SPACE_FW_TORCHTITAN] = {SPACE_STACK_PYTORCH_COMPILED,
                             SPACE_STACK_PYTORCH_EAGER},
    [SPACE_FW_PYTORCH_FSDP] = {SPACE_STACK_PYTORCH_COMPILED,
                               SPACE_STACK_PYTORCH_EAGER},
    [SPACE_FW_DEEPSPEED_2021] = {SPACE_STACK_DEEPSPEED_2021,
                                 SPACE_STACK_DEEPSPEED_2021},
};

space_stack space_layout_stack(const space_layout *l)
{
    unsigned f = (unsigned)l->framework;
    if (f >= SPACE_FW_COUNT) f = SPACE_FW_MEGATRON_CORE;
    return l->eager ? framework_stacks[f].eager_stack
                    : framework_stacks[f].stack;
}

void space_framework_software(space_framework f, space_layout *l)
{
    /* PyTorch FSDP (llm-foundry) runs as torchtitan does, eager;
     * DeepSpeed's ZeRO-3 of 2021 around Megatron-LM 2021's model as
     * Megatron-LM 2021, gathering up to stage3_max_live_parameters at
     * once, 1e9 by default (deepspeed/runtime/zero/config.py). */
    int titan = f == SPACE_FW_TORCHTITAN || f == SPACE_FW_PYTORCH_FSDP;
    int m2021 = f == SPACE_FW_MEGATRON_2021 || f == SPACE_FW_DEEPSPEED_2021;
    /* Megatron-LM of 2021: unfused with its fused softmax; Megatron-Core:
     * Transformer Engine's choice (--attention-backend auto, Megatron-LM
     * core_v0.14.0 arguments.py); torchtitan: SDPA's FlashAttention-2
     * (its December 2024 benchmarks; later versions prefer cuDNN or
     * FlexAttention, not modelled). */
    l->flash = m2021                       ? SPACE_ATTN_UNFUSED
               : f == SPACE_FW_MEGATRON_CORE ? SPACE_ATTN_AUTO
                                             : SPACE_ATTN_FLASH;
    l->tp_overlap = m2021   ? SPACE_TP_OVERLAP_NONE
                    : titan ? SPACE_TP_OVERLAP_DTENSOR
                            : SPACE_TP_OVERLAP_BWD;
    l->cp_comm = titan ? SPACE_CP_ALLGATHER : SPACE_CP_P2P;
    l->no_dp_overlap = m2021;
    l->pp_scatter_gather = m2021;
    l->eager = f == SPACE_FW_PYTORCH_FSDP;
    /* Megatron-Core overlaps interleaved 1F1B's sends by default
     * (megatron/training/arguments.py: --no-overlap-p2p-communication is
     * store_false into overlap_p2p_comm; Megatron-LM d98e8a6); Megatron-LM
     * of 2021 had no such overlap, and PyTorch's pipelining waits for each
     * receive before the compute that needs it. */
    l->no_pp_overlap = f != SPACE_FW_MEGATRON_CORE;
    /* fp8: Transformer Engine's delayed scaling under Megatron-LM
     * (--fp8-recipe defaults to delayed, megatron/training/arguments.py);
     * torchao's tensorwise dynamic scaling under torchtitan (its float8
     * converter's recipe_name None, torchtitan v0.2). */
    l->fp8_lib = f == SPACE_FW_TORCHTITAN ? SPACE_FP8_LIB_TORCHAO
                                          : SPACE_FP8_LIB_TE;
    /* (llm-foundry's amp_fp8 is Transformer Engine's fp8_autocast with
     * delayed scaling: composer/core/precision.py, mosaicml/composer
     * 02c872e.) */
    l->fp8_recipe = f == SPACE_FW_TORCHTITAN ? SPACE_FP8_TENSORWISE
                                             : SPACE_FP8_DELAYED;
    /* Gradients: Megatron-LM (2021 and Megatron-Core) by dtype,
     * space_grad_bytes; torchtitan reduces in fp32
     * (mixed_precision_reduce = "float32", torchtitan/config/configs.py,
     * pytorch/torchtitan@b5bcd76c66d0) into FSDP2's sharded gradients,
     * which take the parameters' dtype. FSDP2 keeps the parameters in
     * fp32 and steps them directly (MixedPrecisionPolicy,
     * torch/distributed/_composable/fsdp/_fsdp_api.py,
     * pytorch/pytorch@0b2c60e21da7: "does not require any extra memory to
     * keep a high-precision copy of the parameters for the optimizer
     * step"). fp8: Transformer Engine under Megatron-Core (its
     * TELayerNormColumnParallelLinear and TERowParallelLinear layers,
     * megatron/core/models/gpt/gpt_layer_specs.py, core_v0.12.0), torchao
     * under torchtitan (converters = ["float8"]): fp8_lib above. */
    l->grad_bytes = f == SPACE_FW_TORCHTITAN ? 4 : 0;
    l->param_fp32 = f == SPACE_FW_TORCHTITAN;
    /* (PyTorch FSDP as llm-foundry configures it keeps Megatron-LM's
     * gradient rule and 16-bit parameters here, as bench/validate_runs has
     * estimated its runs; its FSDP1 mixed precision is not modelled.) */
    l->zero3_live = f == SPACE_FW_DEEPSPEED_2021 ? 1e9 : 0;
    /* The caching allocator's expandable segments as each framework's
     * launcher leaves them: torchtitan's run_train.sh sets
     * expandable_segments:True since pytorch/torchtitan@a5e57e4a9
     * (#643, 2024-10-22; PYTORCH_ALLOC_CONF since e629fe58a, 2025-08-15);
     * Megatron-LM's examples export no PYTORCH_CUDA_ALLOC_CONF
     * (NVIDIA/Megatron-LM@d98e8a64ddf3 examples/), so PyTorch's default,
     * off; the 2021 frameworks ran PyTorch 1.x, before the setting
     * existed (PyTorch 2.1); llm-foundry's launcher sets nothing
     * (PyTorch's default). NeMo's Megatron-Bridge recipes set it since
     * NVIDIA-NeMo/Megatron-Bridge@cce495373 (2026-07-20,
     * recipes/utils/environment_utils.py COMMON_RECIPE_ENV_VARS): the
     * NeMo job reader (launch/launch_nemo_read.c) says so. */
    l->alloc_expandable = f == SPACE_FW_TORCHTITAN;
    /* torchtitan passes grouped keys and values to SDPA unrepeated
     * (enable_gqa) since pytorch/torchtitan@ff0829c10 (#2259, 2026-01-27;
     * v0.2.2 and main); a run of an older version says so
     * (space_layout.gqa_repeat_kv; bench/runs.c, feature gqa-repeat-kv). */
    l->gqa_repeat_kv = 0;
    /* MoE token permutation: Transformer Engine's fused kernels, which
     * trainplan's Megatron-LM launches set (--moe-permute-fusion, as the
     * step time is estimated; Megatron-Core's own default is off,
     * transformer_config.py moe_permute_fusion) */
    l->moe_permute_fusion = f == SPACE_FW_MEGATRON_CORE;
    /* The MoE router: Transformer Engine's fused kernels, which trainplan's
     * Megatron-LM launches set (--moe-router-fusion; Megatron-Core's own
     * default is off, transformer_config.py moe_router_fusion) */
    l->moe_router_fusion = f == SPACE_FW_MEGATRON_CORE;
    l->framework = (int)f;
}

int space_framework_zero(space_framework f)
{
    return f == SPACE_FW_TORCHTITAN || f == SPACE_FW_PYTORCH_FSDP
                   || f == SPACE_FW_DEEPSPEED_2021
               ? SPACE_ZERO_3
               : -1;
}

const char *const space_cp_comm_names[SPACE_CP_COMM_COUNT] = {
    [SPACE_CP_P2P] = "p2p",
    [SPACE_CP_ALLGATHER] = "all_gather",
};

/* Gated activations multiply two up-projections (gate and up), so their
 * FFN has a third GEMM (Shazeer, "GLU Variants Improve Transformer",
 * arXiv:2002.05202). */
int space_act_ffn_gemms(space_act a)
{
    return a == SPACE_ACT_SWIGLU || a == SPACE_ACT_GEGLU ? 3 : 2;
}

/* ---- Limits: one table, used by space_model_validate and, through
 * space_model_field_range, by the config.json reader. The bounds are
 * generous (10-100x the largest models published by 2025) yet keep every
 * product in space_model_params inside int64 (the total is checked
 * separately against SPACE_MAX_PARAMS). */

typedef struct field_limit {
    const char *name; /* the space_model member */
    size_t offset;
    int64_t lo, hi;
} field_limit;

#define LIMIT(member, lo, hi) {#member, offsetof(space_model, member), lo, hi}

static const field_limit int64_limits[] = {
    LIMIT(num_layers, 1, 100000),
    LIMIT(hidden, 1, INT64_C(1) << 20),
    LIMIT(heads, 1, 65536),
    LIMIT(kv_heads, 1, 65536),
    LIMIT(head_dim, 0, 65536), /* 0: hidden / heads */
    LIMIT(ffn_hidden, 1, INT64_C(1) << 22),
    LIMIT(vocab, 1, INT64_C(1) << 24),
    LIMIT(max_position, 1, INT64_C(1) << 26),
    LIMIT(num_experts, 0, 65536),
    LIMIT(top_k, 0, 65536),
    LIMIT(expert_ffn_hidden, 0, INT64_C(1) << 22),
    LIMIT(shared_experts, 0, 1024),
    LIMIT(shared_ffn_hidden, 0, INT64_C(1) << 22),
    LIMIT(first_dense_layers, 0, 100000),
    LIMIT(moe_layer_freq, 0, 100000),
    LIMIT(router_groups, 0, 65536),
    LIMIT(router_topk_groups, 0, 65536),
    LIMIT(q_lora_rank, 0, INT64_C(1) << 20),
    LIMIT(kv_lora_rank, 0, INT64_C(1) << 20),
    LIMIT(qk_nope_head_dim, 0, 65536),
    LIMIT(qk_rope_head_dim, 0, 65536),
    LIMIT(v_head_dim, 0, 65536),
    LIMIT(window, 0, INT64_C(1) << 26),
    LIMIT(global_every, 0, 100000),
    LIMIT(mtp_layers, 0, 1000),
};
#undef LIMIT

/* More parameters than this is a typo, not a model (1e15 = 1000x GPT-4
 * rumours); it also keeps int64 sums in space_model_params exact. */
#define SPACE_MAX_PARAMS 1e15

typedef struct int_field {
    const char *name;
    size_t offset;
    int count; /* valid values are [0, count) */
} int_field;

#define INTF(member, n) {#member, offsetof(space_model, member), n}

static const int_field int_fields[] = {
    INTF(act, SPACE_ACT_COUNT),
    INTF(norm, SPACE_NORM_COUNT),
    INTF(pos, SPACE_POS_COUNT),
    INTF(tied_embeddings, 2),
    INTF(qkv_bias, 2),
    INTF(out_bias, 2),
    INTF(mlp_bias, 2),
    INTF(parallel_attn_mlp, 2),
    INTF(embed_norm, 2),
    INTF(router_sigmoid, 2),
    INTF(router_bias, 2),
    INTF(shared_expert_gate, 2),
    INTF(qk_norm, 3),
    INTF(window_chunked, 2),
    INTF(attn_sinks, 2),
    INTF(post_norms, 2),
    INTF(card_active_no_embedding, 2),
};

/* Real-valued fields: [lo, hi], NaN refused. */
typedef struct real_field {
    const char *name;
    size_t offset;
    double lo, hi;
} real_field;

#define REALF(member, lo, hi) {#member, offsetof(space_model, member), lo, hi}

static const real_field real_fields[] = {
    REALF(attn_dropout, 0.0, 1.0),
    REALF(hidden_dropout, 0.0, 1.0),
    /* 0: dropless; Megatron-Core's --moe-expert-capacity-factor is a
     * positive float, 1.0 to 2.0 in practice */
    REALF(capacity_factor, 0.0, 1000.0),
    /* Gemma 2: 50 (attention), 30 (final) */
    REALF(attn_softcap, 0.0, 1e6),
    REALF(final_softcap, 0.0, 1e6),
    /* 0: every dimension rotated */
    REALF(rotary_fraction, 0.0, 1.0),
    /* Llama 3: 5e5, Qwen3: 1e6; huatuogpt-vision: 5e6 */
    REALF(rope_theta, 0.0, 1e12),
};
#undef REALF
#undef INTF

int space_model_field_range(const char *field, int64_t *lo, int64_t *hi)
{
    for (size_t i = 0; i < sizeof int64_limits / sizeof int64_limits[0]; i++)
        if (strcmp(int64_limits[i].name, field) == 0) {
            *lo = int64_limits[i].lo;
            *hi = int64_limits[i].hi;
            return 1;
        }
    return 0;
}

static int64_t field_i64(const space_model *m, size_t offset)
{
    int64_t v;
    memcpy(&v, (const char *)m + offset, sizeof v);
    return v;
}

static int field_int(const space_model *m, size_t offset)
{
    int v;
    memcpy(&v, (const char *)m + offset, sizeof v);
    return v;
}

/* head_dim 0 means "derived": hidden / heads. */
static int64_t eff_head_dim(const space_model *m)
{
    if (m->head_dim > 0) return m->head_dim;
    return m->heads > 0 ? m->hidden / m->heads : 0;
}

static int64_t ceil_to(int64_t v, int64_t multiple)
{
    return (v + multiple - 1) / multiple * multiple;
}

int64_t space_vocab_padded(int64_t vocab, int64_t tp)
{
    /* Megatron-LM pads so each tensor-parallel rank holds a multiple of
     * 128 rows (megatron/training/tokenizer: _vocab_size_with_padding,
     * make_vocab_size_divisible_by = 128). */
    if (tp < 1) tp = 1;
    return ceil_to(vocab, 128 * tp);
}

/* MoE placement: layer i (0-based) has an MoE FFN when
 * i >= first_dense_layers and (i - first_dense_layers) % moe_layer_freq
 * == 0; every other layer has the dense FFN. With freq 1 that is "all
 * after the first k" (DeepSeek's first_k_dense_replace, Mixtral with
 * k = 0). The HF reader maps Qwen's decoder_sparse_step and DeepSeek's
 * moe_layer_freq onto this rule exactly. Returns the count of MoE layers. */
static int64_t moe_layer_count(const space_model *m)
{
    if (m->num_experts <= 0) return 0;
    int64_t freq = m->moe_layer_freq > 0 ? m->moe_layer_freq : 1;
    int64_t first = m->first_dense_layers > 0 ? m->first_dense_layers : 0;
    if (m->num_layers <= first) return 0;
    return (m->num_layers - first - 1) / freq + 1;
}

/* Whether layer i (0-based; i >= num_layers for the MTP modules, which
 * continue the numbering as DeepSeek-V3's layer 61 does) has an MoE FFN. */
static int layer_is_moe(const space_model *m, int64_t i)
{
    if (m->num_experts <= 0) return 0;
    int64_t freq = m->moe_layer_freq > 0 ? m->moe_layer_freq : 1;
    int64_t first = m->first_dense_layers > 0 ? m->first_dense_layers : 0;
    return i >= first && (i - first) % freq == 0;
}

/* Layers that attend globally: all of them without a window, else every
 * global_every-th (layer i global when (i + 1) % global_every == 0). */
static int64_t global_layer_count(const space_model *m)
{
    if (m->window <= 0) return m->num_layers;
    return m->global_every > 0 ? m->num_layers / m->global_every : 0;
}

/* One FFN of inner size f: gemms weight matrices of hidden x f, plus the
 * biases (one per up/gate projection of size f, and hidden on the down
 * projection). */
static int64_t ffn_params(const space_model *m, int64_t f)
{
    int64_t gemms = space_act_ffn_gemms(m->act);
    int64_t p = gemms * m->hidden * f;
    if (m->mlp_bias) p += (gemms - 1) * f + m->hidden;
    return p;
}

void space_model_params(const space_model *m, int64_t pad_multiple,
                        space_params *out)
{
    memset(out, 0, sizeof *out);
    int64_t h = m->hidden, hd = eff_head_dim(m);
    int64_t q = m->heads * hd, kv = m->kv_heads * hd;
    /* LayerNorm has a weight and a bias, RMSNorm a weight only. Every
     * layer has two norms: pre-attention and pre-FFN. GPT-NeoX's parallel
     * residual still has two (input_layernorm, post_attention_layernorm);
     * GPT-J and Falcon-7B share one, so they are over-counted by one norm
     * per layer (< 0.01% of their size). */
    int64_t norm = m->norm == SPACE_NORM_LAYERNORM ? 2 * h : h;

    out->vocab_padded = ceil_to(m->vocab, pad_multiple < 1 ? 1 : pad_multiple);
    out->embedding = out->vocab_padded * h;
    out->position = m->pos == SPACE_POS_LEARNED ? m->max_position * h : 0;
    /* BLOOM normalises the embedding output with a LayerNorm of its own
     * (word_embeddings_layernorm, 2h; BigScience, arXiv:2211.05100,
     * Section 3.2.2 "Embedding LayerNorm"). */
    out->embed_norm = m->embed_norm ? norm : 0;
    /* A norm over n features: weight, and bias for LayerNorm. */
    int64_t per_feature = m->norm == SPACE_NORM_LAYERNORM ? 2 : 1;
    if (m->kv_lora_rank > 0) {
        /* Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434,
         * Section 2.1.2, eqs. 9-14 and the decoupled RoPE of 2.1.3; HF
         * modeling_deepseek.py DeepseekV2Attention): q_a_proj h x
         * q_lora_rank, its norm, q_b_proj q_lora_rank x heads (nope +
         * rope) (or one q_proj h x heads (nope + rope) without q_lora);
         * kv_a_proj_with_mqa h x (kv_lora_rank + rope), its norm,
         * kv_b_proj kv_lora_rank x heads (nope + v); o_proj heads v x h. */
        int64_t qk = m->qk_nope_head_dim + m->qk_rope_head_dim;
        int64_t a = m->q_lora_rank > 0
                        ? h * m->q_lora_rank + per_feature * m->q_lora_rank
                              + m->q_lora_rank * m->heads * qk
                        : h * m->heads * qk;
        a += h * (m->kv_lora_rank + m->qk_rope_head_dim)
             + per_feature * m->kv_lora_rank
             + m->kv_lora_rank * m->heads
                   * (m->qk_nope_head_dim + m->v_head_dim)
             + m->heads * m->v_head_dim * h;
        if (m->out_bias) a += h;
        out->attn_per_layer = a;
    } else {
        out->attn_per_layer = h * q + 2 * h * kv + q * h;
        if (m->qkv_bias) out->attn_per_layer += q + 2 * kv;
        if (m->out_bias) out->attn_per_layer += h;
        /* QK norms: Qwen3's q_norm/k_norm of head_dim (modeling_qwen3.py),
         * OLMo 2's over the whole projections (modeling_olmo2.py). */
        if (m->qk_norm == 1) out->attn_per_layer += per_feature * 2 * hd;
        if (m->qk_norm == 2) out->attn_per_layer += per_feature * (q + kv);
    }
    /* gpt-oss: one learned sink logit per head (modeling_gpt_oss.py,
     * GptOssAttention.sinks). */
    if (m->attn_sinks) out->attn_per_layer += m->heads;
    out->norms_per_layer = (m->post_norms ? 4 : 2) * norm;
    out->dense_mlp_per_layer = ffn_params(m, m->ffn_hidden);
    if (m->num_experts > 0)
        out->moe_mlp_per_layer =
            m->num_experts * ffn_params(m, m->expert_ffn_hidden)
            + m->shared_experts * ffn_params(m, m->shared_ffn_hidden)
            /* router hidden x experts, and a bias of experts: gpt-oss's
             * on the GEMM, DeepSeek-V3's e_score_correction_bias */
            + h * m->num_experts + (m->router_bias ? m->num_experts : 0)
            /* Qwen2-MoE's shared_expert_gate, hidden x 1 */
            + (m->shared_expert_gate ? h : 0);
    out->moe_layers = moe_layer_count(m);
    out->dense_layers = m->num_layers - out->moe_layers;

    int64_t common = out->attn_per_layer + out->norms_per_layer;
    out->per_layer = common
                     + (m->num_experts > 0 ? out->moe_mlp_per_layer
                                           : out->dense_mlp_per_layer);
    out->layers_total = out->dense_layers * (common + out->dense_mlp_per_layer)
                        + out->moe_layers * (common + out->moe_mlp_per_layer);
    out->final_norm = norm;
    out->lm_head = m->tied_embeddings ? 0 : out->vocab_padded * h;
    out->total = out->embedding + out->position + out->embed_norm
                 + out->layers_total + out->final_norm + out->lm_head;
    /* A token goes through top_k of the routed experts; everything else
     * (embeddings and LM head included, as in Mixtral's "12.9B active")
     * counts in full. */
    int64_t idle = m->num_experts > m->top_k ? m->num_experts - m->top_k : 0;
    out->active = out->total
                  - out->moe_layers * idle * ffn_params(m, m->expert_ffn_hidden);
    out->active_card =
        out->active - (m->card_active_no_embedding ? out->embedding : 0);

    /* MTP modules (DeepSeek-V3, arXiv:2412.19437, Section 2.2; Megatron-
     * Core multi_token_prediction.py): each has enorm and hnorm on its
     * two inputs, eh_proj 2h x h, one transformer layer (of the kind the
     * next layer index would have) and its own final norm; the embedding
     * and the head are the main model's. DeepSeek counts the 671B without
     * them; the checkpoint stores them with a copy of embedding and head
     * (its README_WEIGHTS.md: 11.5B unique MTP parameters beside the
     * shared 0.9B embedding and 0.9B head). */
    out->checkpoint = out->total;
    for (int64_t k = 0; k < m->mtp_layers; k++) {
        int64_t layer = common + (layer_is_moe(m, m->num_layers + k)
                                      ? out->moe_mlp_per_layer
                                      : out->dense_mlp_per_layer);
        out->mtp += 3 * norm + 2 * h * h + layer;
        out->checkpoint += out->embedding + out->lm_head;
    }
    out->checkpoint += out->mtp;
}

/*
 * FLOPs per token, forward, one multiply-add = 2 FLOPs, GEMMs only:
 *   projections   2 (h q + 2 h kv + q h)       q = heads hd, kv = kv_heads hd
 *   attention     2 * 2 s_k hd heads            QK^T and AV, s_k below
 *   dense FFN     2 g h f                       g = 2 or 3 GEMMs
 *   MoE FFN       2 g h (top_k f_e + shared f_s) + 2 h E   (router)
 *   LM head       2 h V                         unpadded V; embedding free
 * s_k = s (non-causal, Narayanan/PaLM convention) or (s + 1) / 2 (causal:
 * query i sees i + 1 keys, the mean over i = 0..s-1).
 * For a GPT (g = 2, f = 4h, MHA) this is 24 h^2 + 4 s h per layer and
 * per token; times 3 (backward = 2 x forward, Narayanan eq. 3) gives
 * 72 l h^2 (1 + s/6h) + 6 h V = Narayanan's 72 B s l h^2 (1 + s/6h +
 * V/12lh) divided by B s. Full recomputation adds one forward of the
 * layers (not the LM head): 96 l h^2 (1 + s/6h + V/16lh). Selective
 * recomputation (Korthikanti et al.) adds the attention core only.
 * PaLM's 6N + 12 L H Q T is the same non-causal count with N = the
 * non-embedding GEMM parameters.
 * MLA replaces the projections by 2 (h r_q + r_q n (d_nope + d_rope) +
 * h (r_kv + d_rope) + r_kv n (d_nope + d_v) + n d_v h) (r_q = 0: 2 h n
 * (d_nope + d_rope) for the query) and the core by 2 s_k n (d_nope +
 * d_rope) + 2 s_k n d_v. Local layers take s_k from keys_seen.
 */
/* Mean keys a query sees, over the s queries of a sequence, in a layer
 * whose attention is limited to w tokens (w <= 0: unlimited). Causal,
 * sliding: query i sees min(w, i + 1); chunked: i mod w + 1. Non-causal
 * (the Megatron/PaLM convention of counting the whole square): min(w, s),
 * or the query's whole chunk. */
static double keys_seen(double s, double w, int causal, int chunked)
{
    if (w <= 0 || w >= s) return causal ? (s + 1.0) / 2.0 : s;
    if (chunked) {
        double n = floor(s / w), r = s - n * w; /* full chunks, remainder */
        double sum = causal ? n * w * (w + 1.0) / 2.0 + r * (r + 1.0) / 2.0
                            : n * w * w + r * r;
        return sum / s;
    }
    if (!causal) return w;
    return (w * (w + 1.0) / 2.0 + (s - w) * w) / s;
}

void space_flops_per_token(const space_model *m, int64_t seq, int causal,
                           space_recompute rc, space_flops *out)
{
    memset(out, 0, sizeof *out);
    if (seq < 1) seq = 1; /* a token always sees itself */
    double h = (double)m->hidden, hd = (double)eff_head_dim(m);
    double heads = (double)m->heads;
    double q = heads * hd, kv = (double)m->kv_heads * hd;
    double gemms = space_act_ffn_gemms(m->act);

    /* Projections and the per-key cost of the core (QK^T and AV, 2 FLOPs
     * a multiply-add, per key seen). */
    double proj, core_per_key;
    if (m->kv_lora_rank > 0) {
        double nope = (double)m->qk_nope_head_dim;
        double rope = (double)m->qk_rope_head_dim;
        double v = (double)m->v_head_dim, ql = (double)m->q_lora_rank;
        double kvl = (double)m->kv_lora_rank;
        proj = 2.0 * ((ql > 0 ? h * ql + ql * heads * (nope + rope)
                              : h * heads * (nope + rope))
                      + h * (kvl + rope) + kvl * heads * (nope + v)
                      + heads * v * h);
        core_per_key = 2.0 * heads * (nope + rope) + 2.0 * heads * v;
    } else {
        proj = 2.0 * (h * q + 2.0 * h * kv + q * h);
        core_per_key = 2.0 * 2.0 * hd * heads;
    }
    double s = (double)seq;
    double core_global = core_per_key * keys_seen(s, 0, causal, 0);
    double core_local = core_per_key
                        * keys_seen(s, (double)m->window, causal,
                                    m->window_chunked);
    double dense_ffn = 2.0 * gemms * h * (double)m->ffn_hidden;
    double moe_ffn = 0.0;
    if (m->num_experts > 0)
        moe_ffn = 2.0 * gemms * h
                      * ((double)m->top_k * (double)m->expert_ffn_hidden
                         + (double)m->shared_experts
                               * (double)m->shared_ffn_hidden)
                  + 2.0 * h * (double)m->num_experts
                  + (m->shared_expert_gate ? 2.0 * h : 0.0);

    double n_moe = (double)moe_layer_count(m);
    double n_dense = (double)m->num_layers - n_moe;
    double n_global = (double)global_layer_count(m);
    double n_local = (double)m->num_layers - n_global;
    double layers;
    if (n_local > 0) {
        out->attn_fwd = n_global * core_global + n_local * core_local;
        layers = (double)m->num_layers * proj + out->attn_fwd
                 + n_dense * dense_ffn + n_moe * moe_ffn;
    } else { /* summed as before windows were modelled: same bits */
        out->attn_fwd = (double)m->num_layers * core_global;
        layers = n_dense * (proj + core_global + dense_ffn)
                 + n_moe * (proj + core_global + moe_ffn);
    }

    /* MTP: module k is layer num_layers + k, global or local and dense or
     * MoE by the same rules; eh_proj 2h x h; the shared head once more. */
    double mtp_layers = 0.0;
    for (int64_t k = 0; k < m->mtp_layers; k++) {
        int64_t i = m->num_layers + k;
        int global = m->window <= 0
                     || (m->global_every > 0 && (i + 1) % m->global_every == 0);
        mtp_layers += 2.0 * 2.0 * h * h + proj
                      + (global ? core_global : core_local)
                      + (layer_is_moe(m, i) ? moe_ffn : dense_ffn);
    }
    out->lm_head_fwd = 2.0 * h * (double)m->vocab;
    out->mtp_fwd = mtp_layers + (double)m->mtp_layers * out->lm_head_fwd;
    out->fwd = layers + out->lm_head_fwd + out->mtp_fwd;
    out->bwd = 2.0 * out->fwd;
    if (rc == SPACE_RECOMPUTE_FULL)
        out->recompute = layers + mtp_layers;
    else if (rc == SPACE_RECOMPUTE_SELECTIVE)
        out->recompute = out->attn_fwd;
    out->total = out->fwd + out->bwd + out->recompute;
}

/* Parameter count in double, for the size check before any int64 sum. */
static double approx_params(const space_model *m)
{
    double h = (double)m->hidden, hd = (double)eff_head_dim(m);
    double gemms = space_act_ffn_gemms(m->act);
    double attn = 2.0 * h * hd * ((double)m->heads + (double)m->kv_heads);
    if (m->kv_lora_rank > 0) {
        double n = (double)m->heads, ql = (double)m->q_lora_rank;
        double kvl = (double)m->kv_lora_rank;
        double qk = (double)m->qk_nope_head_dim + (double)m->qk_rope_head_dim;
        attn = (ql > 0 ? (h + n * qk) * ql : h * n * qk)
               + h * (kvl + (double)m->qk_rope_head_dim)
               + kvl * n * ((double)m->qk_nope_head_dim
                            + (double)m->v_head_dim)
               + n * (double)m->v_head_dim * h;
    }
    double ffn = gemms * h * (double)m->ffn_hidden;
    if (m->num_experts > 0)
        ffn += gemms * h
               * ((double)m->num_experts * (double)m->expert_ffn_hidden
                  + (double)m->shared_experts * (double)m->shared_ffn_hidden);
    return ((double)m->num_layers + (double)m->mtp_layers) * (attn + ffn)
           + 2.0 * h * ((double)m->vocab + (double)m->max_position);
}

/* MLA's sizes go together; a window's pattern needs a window. */
static int validate_mla_window(const space_model *m, const char *where,
                               tp_err *e)
{
    if (m->kv_lora_rank > 0) {
        if (m->qk_nope_head_dim + m->qk_rope_head_dim < 1 || m->v_head_dim < 1)
            return tp_errf(e, TP_EDATA,
                           "%s: MLA (kv_lora_rank = %lld) with "
                           "qk_nope_head_dim = %lld, qk_rope_head_dim = %lld, "
                           "v_head_dim = %lld; expected a query/key head of "
                           "at least 1 and v_head_dim in [1, 65536]",
                           where, (long long)m->kv_lora_rank,
                           (long long)m->qk_nope_head_dim,
                           (long long)m->qk_rope_head_dim,
                           (long long)m->v_head_dim);
        if (m->kv_heads != m->heads)
            return tp_errf(e, TP_EDATA,
                           "%s: kv_heads = %lld with MLA (kv_lora_rank = "
                           "%lld), expected heads = %lld (every head has its "
                           "own K and V from the latent)",
                           where, (long long)m->kv_heads,
                           (long long)m->kv_lora_rank, (long long)m->heads);
        if (m->qk_norm || m->qkv_bias)
            return tp_errf(e, TP_EDATA,
                           "%s: %s = 1 with MLA (kv_lora_rank = %lld), "
                           "expected 0 (MLA has its own latent norms and no "
                           "Q/K/V biases)",
                           where, m->qk_norm ? "qk_norm" : "qkv_bias",
                           (long long)m->kv_lora_rank);
    } else {
        static const struct {
            const char *name;
            size_t offset;
        } mla_only[] = {
            {"q_lora_rank", offsetof(space_model, q_lora_rank)},
            {"qk_nope_head_dim", offsetof(space_model, qk_nope_head_dim)},
            {"qk_rope_head_dim", offsetof(space_model, qk_rope_head_dim)},
            {"v_head_dim", offsetof(space_model, v_head_dim)},
        };
        for (size_t i = 0; i < sizeof mla_only / sizeof mla_only[0]; i++) {
            int64_t v = field_i64(m, mla_only[i].offset);
            if (v != 0)
                return tp_errf(e, TP_EDATA,
                               "%s: %s = %lld without MLA (kv_lora_rank = "
                               "0), expected 0, or kv_lora_rank > 0",
                               where, mla_only[i].name, (long long)v);
        }
    }
    if (m->window == 0 && (m->global_every != 0 || m->window_chunked))
        return tp_errf(e, TP_EDATA,
                       "%s: %s = %lld without a window (window = 0), "
                       "expected 0, or window > 0",
                       where,
                       m->global_every ? "global_every" : "window_chunked",
                       (long long)(m->global_every ? m->global_every
                                                   : m->window_chunked));
    return TP_OK;
}

int space_model_validate(const space_model *m, const char *where, tp_err *e)
{
    if (!where || !*where) where = m->name[0] ? m->name : "model";

    for (size_t i = 0; i < sizeof int64_limits / sizeof int64_limits[0]; i++) {
        const field_limit *f = &int64_limits[i];
        int64_t v = field_i64(m, f->offset);
        if (v < f->lo || v > f->hi)
            return tp_errf(e, TP_EDATA,
                           "%s: %s = %lld, expected an integer in [%lld, %lld]",
                           where, f->name, (long long)v, (long long)f->lo,
                           (long long)f->hi);
    }
    for (size_t i = 0; i < sizeof int_fields / sizeof int_fields[0]; i++) {
        const int_field *f = &int_fields[i];
        int v = field_int(m, f->offset);
        if (v < 0 || v >= f->count)
            return tp_errf(e, TP_EDATA,
                           "%s: %s = %d, expected an integer in [0, %d]", where,
                           f->name, v, f->count - 1);
    }

    for (size_t i = 0; i < sizeof real_fields / sizeof real_fields[0]; i++) {
        const real_field *f = &real_fields[i];
        double v;
        memcpy(&v, (const char *)m + f->offset, sizeof v);
        if (!(v >= f->lo && v <= f->hi)) /* NaN fails both */
            return tp_errf(e, TP_EDATA,
                           "%s: %s = %g, expected a number in [%g, %g]", where,
                           f->name, v, f->lo, f->hi);
    }

    if (m->head_dim == 0 && m->hidden % m->heads != 0)
        return tp_errf(e, TP_EDATA,
                       "%s: hidden = %lld is not divisible by heads = %lld, "
                       "and head_dim is not given (0 = hidden / heads); set "
                       "head_dim or fix heads",
                       where, (long long)m->hidden, (long long)m->heads);
    if (m->heads % m->kv_heads != 0)
        return tp_errf(e, TP_EDATA,
                       "%s: kv_heads = %lld does not divide heads = %lld, "
                       "expected a divisor (heads for MHA, 1 for MQA)",
                       where, (long long)m->kv_heads, (long long)m->heads);

    int rc = validate_mla_window(m, where, e);
    if (rc) return rc;

    if (m->num_experts > 0) {
        if (m->top_k < 1 || m->top_k > m->num_experts)
            return tp_errf(e, TP_EDATA,
                           "%s: top_k = %lld, expected an integer in [1, %lld] "
                           "(num_experts)",
                           where, (long long)m->top_k,
                           (long long)m->num_experts);
        if (m->expert_ffn_hidden < 1)
            return tp_errf(e, TP_EDATA,
                           "%s: expert_ffn_hidden = %lld, expected at least 1 "
                           "for an MoE model (num_experts = %lld)",
                           where, (long long)m->expert_ffn_hidden,
                           (long long)m->num_experts);
        if (m->moe_layer_freq < 1)
            return tp_errf(e, TP_EDATA,
                           "%s: moe_layer_freq = %lld, expected at least 1 "
                           "for an MoE model (1 = every layer)",
                           where, (long long)m->moe_layer_freq);
        if (m->first_dense_layers > m->num_layers)
            return tp_errf(e, TP_EDATA,
                           "%s: first_dense_layers = %lld, expected an integer "
                           "in [0, %lld] (num_layers)",
                           where, (long long)m->first_dense_layers,
                           (long long)m->num_layers);
        if (m->shared_experts > 0 && m->shared_ffn_hidden < 1)
            return tp_errf(e, TP_EDATA,
                           "%s: shared_ffn_hidden = %lld, expected at least 1 "
                           "with shared_experts = %lld",
                           where, (long long)m->shared_ffn_hidden,
                           (long long)m->shared_experts);
        if (m->shared_expert_gate && m->shared_experts < 1)
            return tp_errf(e, TP_EDATA,
                           "%s: shared_expert_gate = 1 without shared experts "
                           "(shared_experts = 0), expected 0",
                           where);
        /* Group-limited routing (DeepSeek-V2 Section 2.2.2 "device-limited
         * routing", V3's node-limited n_group / topk_group): the experts
         * split evenly into groups, a token's top_k from topk_groups of
         * them. */
        if (m->router_groups > 0) {
            if (m->num_experts % m->router_groups != 0)
                return tp_errf(e, TP_EDATA,
                               "%s: router_groups = %lld does not divide "
                               "num_experts = %lld, expected a divisor",
                               where, (long long)m->router_groups,
                               (long long)m->num_experts);
            int64_t per = m->num_experts / m->router_groups;
            if (m->router_topk_groups < 1
                || m->router_topk_groups > m->router_groups
                || m->router_topk_groups * per < m->top_k)
                return tp_errf(e, TP_EDATA,
                               "%s: router_topk_groups = %lld, expected an "
                               "integer in [%lld, %lld] (groups of %lld "
                               "experts holding top_k = %lld)",
                               where, (long long)m->router_topk_groups,
                               (long long)((m->top_k + per - 1) / per),
                               (long long)m->router_groups, (long long)per,
                               (long long)m->top_k);
        } else if (m->router_topk_groups != 0) {
            return tp_errf(e, TP_EDATA,
                           "%s: router_topk_groups = %lld without "
                           "router_groups, expected 0",
                           where, (long long)m->router_topk_groups);
        }
    } else {
        /* MoE fields on a dense model mean the caller forgot num_experts. */
        static const struct {
            const char *name;
            size_t offset;
        } moe_only[] = {
            {"top_k", offsetof(space_model, top_k)},
            {"expert_ffn_hidden", offsetof(space_model, expert_ffn_hidden)},
            {"shared_experts", offsetof(space_model, shared_experts)},
            {"shared_ffn_hidden", offsetof(space_model, shared_ffn_hidden)},
            {"first_dense_layers", offsetof(space_model, first_dense_layers)},
            {"router_groups", offsetof(space_model, router_groups)},
            {"router_topk_groups", offsetof(space_model, router_topk_groups)},
        };
        for (size_t i = 0; i < sizeof moe_only / sizeof moe_only[0]; i++) {
            int64_t v = field_i64(m, moe_only[i].offset);
            if (v != 0)
                return tp_errf(e, TP_EDATA,
                               "%s: %s = %lld on a dense model (num_experts = "
                               "0), expected 0, or num_experts > 0",
                               where, moe_only[i].name, (long long)v);
        }
        static const struct {
            const char *name;
            size_t offset;
        } moe_only_int[] = {
            {"router_sigmoid", offsetof(space_model, router_sigmoid)},
            {"router_bias", offsetof(space_model, router_bias)},
            {"shared_expert_gate", offsetof(space_model, shared_expert_gate)},
        };
        for (size_t i = 0; i < sizeof moe_only_int / sizeof moe_only_int[0];
             i++) {
            int v = field_int(m, moe_only_int[i].offset);
            if (v != 0)
                return tp_errf(e, TP_EDATA,
                               "%s: %s = %d on a dense model (num_experts = "
                               "0), expected 0, or num_experts > 0",
                               where, moe_only_int[i].name, v);
        }
        if (m->capacity_factor != 0)
            return tp_errf(e, TP_EDATA,
                           "%s: capacity_factor = %g on a dense model "
                           "(num_experts = 0), expected 0",
                           where, m->capacity_factor);
    }

    double n = approx_params(m);
    if (n > SPACE_MAX_PARAMS)
        return tp_errf(e, TP_EDATA,
                       "%s: about %.3g parameters, more than the %.0e this tool "
                       "accepts; check the sizes",
                       where, n, SPACE_MAX_PARAMS);
    return TP_OK;
}
