/*
 * hftables.c - what HuggingFace config.json files say, as tables:
 * the keys each quantity goes by (HF model families name the same
 * quantity differently: n_embd, d_model, hidden_size, ...), one row per
 * quantity with its keys in priority order; the defaults of transformers'
 * config class per model_type, for what a config leaves out; and what
 * each model_type's modelling code hard-wires beyond them (hf_archs).
 * hfconfig.c reads a config with them (space_int.h declares them).
 *
 * Not here: reading, checking or converting a value (hfconfig.c).
 *
 * References: transformers' configuration_*.py and modeling_*.py for each
 * model_type (key names, defaults, what the code hard-wires), and the
 * model cards cited in tests/fixtures/hf.
 */
#include "space_int.h"

/* ---- Keys. Each table mirrors an enum, rows in the enum's order. */

const hf_int_row space_hf_ints[] = {
    [HI_LAYERS] = {"layer count", "num_layers", 1,
                   {"num_hidden_layers", "n_layer", "num_layers", "n_layers"}},
    [HI_HIDDEN] = {"hidden size", "hidden", 1,
                   {"hidden_size", "n_embd", "d_model", "n_embed"}},
    [HI_HEADS] = {"attention head count", "heads", 1,
                  {"num_attention_heads", "n_head", "num_heads"}},
    /* Absent: MHA (kv = heads), or MQA where "multi_query" is true. */
    [HI_KV_HEADS] = {"KV head count", "kv_heads", 1,
                     {"num_key_value_heads", "num_kv_heads", "n_head_kv"}},
    /* Absent: hidden / heads. */
    [HI_HEAD_DIM] = {"head size", "head_dim", 1, {"head_dim"}},
    /* DeepSeek MLA (with kv_lora_rank): the value head size. */
    [HI_V_HEAD_DIM] = {"MLA value head size", "v_head_dim", 0, {"v_head_dim"}},
    /* GPT-2's n_inner: null means 4 x hidden (model_type table). */
    [HI_FFN] = {"FFN size", "ffn_hidden", 1,
                {"intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim"}},
    [HI_VOCAB] = {"vocabulary size", "vocab", 1, {"vocab_size"}},
    [HI_MAX_POS] = {"context length", "max_position", 1,
                    {"max_position_embeddings", "n_positions", "n_ctx",
                     "max_seq_len", "seq_length"}},
    /* Mixtral, Qwen-MoE, DeepSeek. 0 or absent: dense. */
    [HI_EXPERTS] = {"routed expert count", "num_experts", 0,
                    {"num_local_experts", "num_experts", "n_routed_experts"}},
    [HI_TOP_K] = {"experts per token", "top_k", 0, {"num_experts_per_tok"}},
    /* Qwen, DeepSeek; Mixtral's experts use intermediate_size. */
    [HI_MOE_FFN] = {"expert FFN size", "expert_ffn_hidden", 1,
                    {"moe_intermediate_size"}},
    /* Qwen: one shared expert of this size. */
    [HI_SHARED_FFN] = {"shared expert FFN size", "shared_ffn_hidden", 0,
                       {"shared_expert_intermediate_size"}},
    /* DeepSeek: n shared experts of moe_intermediate_size each. */
    [HI_N_SHARED] = {"shared expert count", "shared_experts", 0,
                     {"n_shared_experts"}},
    [HI_FIRST_DENSE] = {"leading dense layers", "first_dense_layers", 0,
                        {"first_k_dense_replace"}},
    [HI_MOE_FREQ] = {"MoE layer frequency", "moe_layer_freq", 1,
                     {"moe_layer_freq"}},
    [HI_SPARSE_STEP] = {"MoE layer step", "moe_layer_freq", 1,
                        {"decoder_sparse_step"}},
    /* Llama 4: layer i is MoE when (i + 1) % step == 0, as Qwen's step. */
    [HI_INTERLEAVE] = {"MoE layer step", "moe_layer_freq", 1,
                       {"interleave_moe_layer_step"}},
    /* Llama 4: the dense layers' FFN (intermediate_size is the experts'). */
    [HI_FFN_MLP] = {"dense FFN size", "ffn_hidden", 1,
                    {"intermediate_size_mlp"}},
    /* DeepSeek MLA. q_lora_rank null or 0: a full query projection;
     * kv_lora_rank 0 (and v_head_dim 0, DeepSeek-V2 configs without MLA):
     * ordinary attention. */
    [HI_Q_LORA] = {"MLA query rank", "q_lora_rank", 0, {"q_lora_rank"}},
    [HI_KV_LORA] = {"MLA KV rank", "kv_lora_rank", 0, {"kv_lora_rank"}},
    [HI_QK_NOPE] = {"MLA query/key head size without RoPE",
                    "qk_nope_head_dim", 0, {"qk_nope_head_dim"}},
    [HI_QK_ROPE] = {"MLA RoPE head size", "qk_rope_head_dim", 0,
                    {"qk_rope_head_dim"}},
    /* DeepSeek group-limited routing; n_group 1 is none. */
    [HI_N_GROUP] = {"expert group count", "router_groups", 0, {"n_group"}},
    [HI_TOPK_GROUP] = {"expert groups per token", "router_topk_groups", 0,
                       {"topk_group"}},
    /* Mistral, Gemma 2/3, gpt-oss, Qwen (with use_sliding_window). */
    [HI_WINDOW] = {"sliding window", "window", 0,
                   {"sliding_window", "sliding_window_size"}},
    /* Llama 4's chunked local attention. */
    [HI_CHUNK] = {"attention chunk", "window", 1, {"attention_chunk_size"}},
    /* Gemma 3 before layer_types: every n-th layer global. */
    [HI_PATTERN] = {"local/global period", "global_every", 1,
                    {"sliding_window_pattern"}},
    /* DeepSeek-V3; Megatron-Bridge's exports name it mtp_num_layers. */
    [HI_MTP] = {"MTP module count", "mtp_layers", 0,
                {"num_nextn_predict_layers", "mtp_num_layers"}},
};
_Static_assert(sizeof space_hf_ints / sizeof space_hf_ints[0] == HI_COUNT,
               "space_hf_ints must have a row per enum hf_int");

const char *const space_hf_bools[][HF_MAX_KEYS] = {
    /* Absent: the model_type's default (PretrainedConfig says true, but
     * LlamaConfig, GPTNeoXConfig, ... say false). */
    [HB_TIED] = {"tie_word_embeddings"},
    /* Llama's attention_bias covers q, k, v and o; Falcon's and
     * StarCoder2's single switch covers every linear layer. */
    [HB_QKV_BIAS] = {"qkv_bias", "attention_bias", "bias", "use_bias",
                     "enable_bias"},
    [HB_OUT_BIAS] = {"attention_bias", "bias", "use_bias", "enable_bias"},
    [HB_MLP_BIAS] = {"mlp_bias", "bias", "use_bias", "enable_bias"},
    /* GPT-NeoX, Falcon. */
    [HB_PARALLEL] = {"use_parallel_residual", "parallel_attn"},
    /* Falcon-7B, StarCoder: one KV head. */
    [HB_MULTI_QUERY] = {"multi_query"},
    /* Falcon-40B/180B: num_kv_heads applies only with this set. */
    [HB_NEW_DECODER] = {"new_decoder_architecture"},
    /* Falcon-RW. */
    [HB_ALIBI] = {"alibi"},
    /* Qwen2/3: sliding_window applies only with this set. */
    [HB_USE_SLIDING] = {"use_sliding_window"},
    /* PhiMoE: a bias on the LM head (vocab parameters, not counted). */
    [HB_LM_HEAD_BIAS] = {"lm_head_bias"},
};
_Static_assert(sizeof space_hf_bools / sizeof space_hf_bools[0] == HB_COUNT,
               "space_hf_bools must have a row per enum hf_bool");

const char *const space_hf_strs[][HF_MAX_KEYS] = {
    [HS_MODEL_TYPE] = {"model_type"},
    [HS_ACT] = {"hidden_act", "hidden_activation", "activation_function",
                "activation"},
    [HS_POS_TYPE] = {"position_embedding_type"},
    [HS_NAME] = {"_name_or_path"},
    /* DeepSeek: "softmax" or "sigmoid" (V3). */
    [HS_SCORING] = {"scoring_func"},
    /* DeepSeek: "greedy", "group_limited_greedy", "noaux_tc" (V3: a
     * per-expert correction bias, e_score_correction_bias). */
    [HS_TOPK_METHOD] = {"topk_method"},
};
_Static_assert(sizeof space_hf_strs / sizeof space_hf_strs[0] == HS_COUNT,
               "space_hf_strs must have a row per enum hf_str");


/* Epsilons and probabilities in [0, 1]; of the epsilons only the presence
 * matters: which one a config carries says which norm its model uses.
 * Soft-caps (Gemma 2: 50 and 30) as space_model's limits. */
const hf_num_row space_hf_nums[] = {
    [HN_RMS_EPS] = {0, 1, {"rms_norm_eps"}},
    [HN_LN_EPS] = {0, 1, {"layer_norm_eps", "layer_norm_epsilon",
                          "norm_epsilon"}},
    [HN_ATTN_DROP] = {0, 1, {"attention_dropout", "attn_pdrop",
                             "attention_probs_dropout_prob"}},
    [HN_HIDDEN_DROP] = {0, 1, {"hidden_dropout", "resid_pdrop",
                               "hidden_dropout_prob"}},
    [HN_ATTN_SOFTCAP] = {0, 1e6, {"attn_logit_softcapping"}},
    [HN_FINAL_SOFTCAP] = {0, 1e6, {"final_logit_softcapping"}},
    /* RoPE on part of each head: GPT-NeoX rotary_pct, Phi and StableLM
     * partial_rotary_factor; GPT-J and CodeGen rotary_dim (dimensions) */
    [HN_ROTARY_FRAC] = {0, 1, {"rotary_pct", "partial_rotary_factor"}},
    [HN_ROTARY_DIM] = {0, 1e6, {"rotary_dim"}},
    /* GPT-NeoX names it rotary_emb_base */
    [HN_ROPE_THETA] = {0, 1e12, {"rope_theta", "rotary_emb_base"}},
};
_Static_assert(sizeof space_hf_nums / sizeof space_hf_nums[0] == HN_COUNT,
               "space_hf_nums must have a row per enum hf_num");


#define RMS SPACE_NORM_RMSNORM
#define LN SPACE_NORM_LAYERNORM
static const hf_type hf_types[] = {
    /* type          gated act                 norm pos           qkv o mlp par tie 4h maxpos emb */
    {"llama",        1, "silu",              RMS, SPACE_POS_ROPE,    0, 0, 0, 0, 0, 0, 0, 0},
    {"mistral",      1, "silu",              RMS, SPACE_POS_ROPE,    0, 0, 0, 0, 0, 0, 0, 0},
    {"mixtral",      1, "silu",              RMS, SPACE_POS_ROPE,    0, 0, 0, 0, 0, 0, 0, 0},
    {"qwen2",        1, "silu",              RMS, SPACE_POS_ROPE,    1, 0, 0, 0, 0, 0, 0, 0},
    {"qwen2_moe",    1, "silu",              RMS, SPACE_POS_ROPE,    1, 0, 0, 0, 0, 0, 0, 0},
    {"qwen3",        1, "silu",              RMS, SPACE_POS_ROPE,    0, 0, 0, 0, 0, 0, 0, 0},
    {"qwen3_moe",    1, "silu",              RMS, SPACE_POS_ROPE,    0, 0, 0, 0, 0, 0, 0, 0},
    {"deepseek_v2",  1, "silu",              RMS, SPACE_POS_ROPE,    0, 0, 0, 0, 0, 0, 0, 0},
    {"deepseek_v3",  1, "silu",              RMS, SPACE_POS_ROPE,    0, 0, 0, 0, 0, 0, 0, 0},
    {"gemma",        1, "gelu_pytorch_tanh", RMS, SPACE_POS_ROPE,    0, 0, 0, 0, 1, 0, 0, 0},
    {"gemma2",       1, "gelu_pytorch_tanh", RMS, SPACE_POS_ROPE,    0, 0, 0, 0, 1, 0, 0, 0},
    /* Gemma 3 (transformers' configuration_gemma3.py: Gemma3TextConfig,
     * and Gemma3Config wrapping it as text_config): GeGLU, tied */
    {"gemma3",       1, "gelu_pytorch_tanh", RMS, SPACE_POS_ROPE,    0, 0, 0, 0, 1, 0, 0, 0},
    {"gemma3_text",  1, "gelu_pytorch_tanh", RMS, SPACE_POS_ROPE,    0, 0, 0, 0, 1, 0, 0, 0},
    {"gpt2",         0, "gelu_new",          LN,  SPACE_POS_LEARNED, 1, 1, 1, 0, 1, 1, 0, 0},
    {"gpt_neox",     0, "gelu",              LN,  SPACE_POS_ROPE,    1, 1, 1, 1, 0, 0, 0, 0},
    {"gptj",         0, "gelu_new",          LN,  SPACE_POS_ROPE,    0, 0, 1, 1, 0, 1, 0, 0},
    {"opt",          0, "relu",              LN,  SPACE_POS_LEARNED, 1, 1, 1, 0, 1, 0, 0, 0},
    {"bloom",        0, "gelu",              LN,  SPACE_POS_ALIBI,   1, 1, 1, 0, 1, 1, 2048, 1},
    {"falcon",       0, "gelu",              LN,  SPACE_POS_ROPE,    0, 0, 0, 1, 1, 1, 2048, 0},
    {"gpt_bigcode",  0, "gelu_pytorch_tanh", LN,  SPACE_POS_LEARNED, 1, 1, 1, 0, 1, 1, 0, 0},
    {"phi",          0, "gelu_new",          LN,  SPACE_POS_ROPE,    1, 1, 1, 1, 0, 0, 0, 0},
    {"starcoder2",   0, "gelu_pytorch_tanh", LN,  SPACE_POS_ROPE,    1, 1, 1, 0, 1, 0, 0, 0},
    {"nemotron",     0, "relu2",             LN,  SPACE_POS_ROPE,    0, 0, 0, 0, 0, 0, 0, 0},
    /* OLMo 2, OLMoE (configuration_olmo2.py, configuration_olmoe.py) */
    {"olmo2",        1, "silu",              RMS, SPACE_POS_ROPE,    0, 0, 0, 0, 0, 0, 0, 0},
    {"olmoe",        1, "silu",              RMS, SPACE_POS_ROPE,    0, 0, 0, 0, 0, 0, 0, 0},
    /* Phi-3/Phi-4-mini: fused qkv_proj and gate_up_proj, the same sizes */
    {"phi3",         1, "silu",              RMS, SPACE_POS_ROPE,    0, 0, 0, 0, 0, 0, 0, 0},
    /* Phi-3.5-MoE: LayerNorms (hf_arch), biases on attention */
    {"phimoe",       1, "silu",              LN,  SPACE_POS_ROPE,    1, 1, 0, 0, 0, 0, 0, 0},
    /* gpt-oss: biases on attention and the experts */
    {"gpt_oss",      1, "silu",              RMS, SPACE_POS_ROPE,    1, 1, 1, 0, 0, 0, 0, 0},
    /* Llama 4 (Llama4TextConfig, as text_config of Llama4Config) */
    {"llama4",       1, "silu",              RMS, SPACE_POS_ROPE,    0, 0, 0, 0, 0, 0, 0, 0},
    {"llama4_text",  1, "silu",              RMS, SPACE_POS_ROPE,    0, 0, 0, 0, 0, 0, 0, 0},
};
#undef RMS
#undef LN


static const hf_arch hf_archs[] = {
    {.model_type = "qwen2", .window_switch = 1},
    /* Qwen2MoeSparseMoeBlock.shared_expert_gate, Linear(h, 1) */
    {.model_type = "qwen2_moe", .shared_gate = 1, .window_switch = 1},
    /* Qwen3Attention.q_norm/k_norm: RMSNorm(head_dim) */
    {.model_type = "qwen3", .qk_norm = 1, .window_switch = 1},
    {.model_type = "qwen3_moe", .qk_norm = 1, .window_switch = 1},
    /* Gemma2DecoderLayer: input, post_attention, pre_feedforward and
     * post_feedforward norms; every other layer local, the first one so
     * (layer_idx % 2 == 0 sliding) */
    {.model_type = "gemma2", .post_norms = 1, .global_every = 2},
    /* Gemma3: the same four norms, q_norm/k_norm of head_dim, five local
     * layers to one global (sliding_window_pattern 6); Gemma3TextConfig's
     * vocab_size 262208 and max_position_embeddings 131072 */
    {.model_type = "gemma3", .qk_norm = 1, .post_norms = 1, .global_every = 6,
     .vocab = 262208, .max_position = 131072},
    {.model_type = "gemma3_text", .qk_norm = 1, .post_norms = 1,
     .global_every = 6, .vocab = 262208, .max_position = 131072},
    /* Olmo2Attention.q_norm RMSNorm(heads x head_dim), k_norm RMSNorm(kv
     * heads x head_dim); OlmoeAttention the same */
    {.model_type = "olmo2", .qk_norm = 2},
    {.model_type = "olmoe", .qk_norm = 2},
    /* PhimoeDecoderLayer: nn.LayerNorm with bias */
    {.model_type = "phimoe", .layernorm = 1},
    /* GptOssAttention.sinks; GptOssTopKRouter's bias; alternating banded
     * and full layers, the first banded */
    {.model_type = "gpt_oss", .attn_sinks = 1, .router_bias = 1,
     .global_every = 2},
    /* Llama4TextMoe: sigmoid of the top-k scores, a shared expert of
     * intermediate_size; no_rope_layers: every 4th layer global (NoPE),
     * the others chunked; Llama4TextL2Norm on Q/K has no weight */
    {.model_type = "llama4", .router_sigmoid = 1, .window_chunked = 1,
     .llama4_ffn = 1, .global_every = 4},
    {.model_type = "llama4_text", .router_sigmoid = 1, .window_chunked = 1,
     .llama4_ffn = 1, .global_every = 4},
};

const hf_arch space_hf_arch_none = {0};

const hf_arch *space_hf_arch_find(const char *model_type)
{
    for (size_t i = 0; i < sizeof hf_archs / sizeof hf_archs[0]; i++)
        if (tp_streq_ci(hf_archs[i].model_type, model_type))
            return &hf_archs[i];
    return &space_hf_arch_none;
}

/* Unknown model_type: PretrainedConfig's defaults (tied), RoPE, no
 * biases; gated iff the activation is silu/swish (no 2-GEMM SiLU FFN is
 * in common use); the activation must be given. */
const hf_type space_hf_generic = {
    NULL, -1, NULL, SPACE_NORM_LAYERNORM, SPACE_POS_ROPE, 0, 0, 0, 0, 1, 0, 0, 0,
};

const hf_type *space_hf_type_find(const char *model_type)
{
    for (size_t i = 0; i < sizeof hf_types / sizeof hf_types[0]; i++)
        if (tp_streq_ci(hf_types[i].model_type, model_type))
            return &hf_types[i];
    return &space_hf_generic;
}
