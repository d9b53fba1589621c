/*
 * presets.c - the built-in models: one table row per model, each with the
 * paper, model card or config.json its architecture comes from.
 *
 * Does not: compute anything (model.c) or read files (hfconfig.c). Rows
 * hold the unpadded tokenizer vocabulary except where the source states a
 * padded one (the Megatron tables use 51200 for GPT-2's 50257).
 *
 * References: each row's source. Parameter counts these rows produce are
 * pinned against the published figures in tests/test_space.c. RoPE bases
 * (rope_theta) are those of the config.json copies in tests/fixtures/hf;
 * a row whose file is not there has 0 (not recorded) unless its config
 * class's default applies.
 */
#include "space.h"


/* GPT-style models of the Megatron papers: GELU, 4h FFN, LayerNorm,
 * learned positions, biases everywhere, tied embeddings, vocabulary 51200
 * and sequence 2048 (Narayanan et al. Section 5.1). */
#define MEGATRON_GPT(nm, layers, hid, nheads, src)                             \
    {                                                                         \
        .name = nm, .source = src, .num_layers = layers, .hidden = hid,       \
        .heads = nheads, .kv_heads = nheads, .head_dim = (hid) / (nheads),    \
        .ffn_hidden = 4 * (hid), .vocab = 51200, .max_position = 2048,        \
        .act = SPACE_ACT_GELU, .norm = SPACE_NORM_LAYERNORM,                  \
        .pos = SPACE_POS_LEARNED, .tied_embeddings = 1, .qkv_bias = 1,        \
        .out_bias = 1, .mlp_bias = 1                                          \
    }

/* llm-foundry's MPT benchmark models (scripts/train/yamls/pretrain/
 * mpt-*.yaml): MPTConfig's defaults, i.e. GELU, 4h FFN (expansion_ratio
 * 4), LayerNorm with bias, learned positions (learned_pos_emb true, alibi
 * false), biases on every linear layer (no_bias false), the LM head tied
 * to the embedding, vocabulary 50368 (the GPT-NeoX tokenizer's 50277
 * padded), max_seq_len 2048. These are not the released MPT-7B/30B
 * checkpoints (ALiBi, no biases, vocabulary 50432, 64 heads for 30B). */
#define FOUNDRY_MPT(nm, layers, hid, nheads, yaml)                             \
    {                                                                         \
        .name = nm,                                                           \
        .source = "https://github.com/mosaicml/llm-foundry/blob/"             \
                  "495218376830947dce625efabc4d86be7c47cc45/scripts/train/"   \
                  "yamls/pretrain/" yaml " (MPTConfig defaults); exact "      \
                  "NumParams in scripts/train/benchmarking/README.md",        \
        .num_layers = layers, .hidden = hid, .heads = nheads,                 \
        .kv_heads = nheads, .head_dim = (hid) / (nheads),                     \
        .ffn_hidden = 4 * (hid), .vocab = 50368, .max_position = 2048,        \
        .act = SPACE_ACT_GELU, .norm = SPACE_NORM_LAYERNORM,                  \
        .pos = SPACE_POS_LEARNED, .tied_embeddings = 1, .qkv_bias = 1,        \
        .out_bias = 1, .mlp_bias = 1                                          \
    }

#define NARAYANAN "Narayanan et al., SC'21, arXiv:2104.04473, Table 1 (vocab 51200, seq 2048): https://arxiv.org/abs/2104.04473"
#define NARAYANAN_T2 "Narayanan et al., SC'21, arXiv:2104.04473, Table 2's GPT-3 175B (174.6B: vocab 51200, seq 2048): https://arxiv.org/abs/2104.04473"

/* LLaMA-family decoders: SwiGLU, RMSNorm, RoPE, no biases, untied.
 * theta: rope_theta of the config.json (Llama 3: 500000, tests/fixtures/
 * hf), or LlamaConfig's default 10000 where the file has none (LLaMA,
 * Llama 2; transformers configuration_llama.py); 0 where not checked. */
#define LLAMA(nm, layers, hid, nheads, nkv, ffn, voc, maxpos, theta, src)      \
    {                                                                         \
        .name = nm, .source = src, .num_layers = layers, .hidden = hid,       \
        .heads = nheads, .kv_heads = nkv, .head_dim = (hid) / (nheads),       \
        .ffn_hidden = ffn, .vocab = voc, .max_position = maxpos,              \
        .act = SPACE_ACT_SWIGLU, .norm = SPACE_NORM_RMSNORM,                  \
        .pos = SPACE_POS_ROPE, .rope_theta = theta                            \
    }

static const space_model presets[] = {
    MEGATRON_GPT("gpt3-1.7b", 24, 2304, 24, NARAYANAN),
    MEGATRON_GPT("gpt3-3.6b", 30, 3072, 32, NARAYANAN),
    MEGATRON_GPT("gpt3-7.5b", 36, 4096, 32, NARAYANAN),
    MEGATRON_GPT("gpt3-18b", 40, 6144, 48, NARAYANAN),
    MEGATRON_GPT("gpt3-39b", 48, 8192, 64, NARAYANAN),
    MEGATRON_GPT("gpt3-76b", 60, 10240, 80, NARAYANAN),
    MEGATRON_GPT("gpt3-145b", 80, 12288, 96, NARAYANAN),
    MEGATRON_GPT("gpt3-310b", 96, 16384, 128, NARAYANAN),
    MEGATRON_GPT("gpt3-530b", 105, 20480, 128, NARAYANAN),
    MEGATRON_GPT("gpt3-1t", 128, 25600, 160, NARAYANAN),

    /* Brown et al.: GPT-2 architecture and its 50257-token BPE, 2048
     * context (the alternating sparse attention is not modelled). */
    {
        .name = "gpt3-175b",
        .source = "Brown et al. 2020, arXiv:2005.14165, Table 2.1 and "
                  "Section 2.1: https://arxiv.org/abs/2005.14165",
        .num_layers = 96, .hidden = 12288, .heads = 96, .kv_heads = 96,
        .head_dim = 128, .ffn_hidden = 4 * 12288, .vocab = 50257,
        .max_position = 2048, .act = SPACE_ACT_GELU,
        .norm = SPACE_NORM_LAYERNORM, .pos = SPACE_POS_LEARNED,
        .tied_embeddings = 1, .qkv_bias = 1, .out_bias = 1, .mlp_bias = 1,
    },

    /* The Megatron GPT shapes under the names an earlier version gave
     * them; their source is Narayanan et al. (Korthikanti et al. 2022's
     * runs are held back for an independent check, DEVELOPERS.md). */
    MEGATRON_GPT("megatron-sp-175b", 96, 12288, 96, NARAYANAN_T2),
    MEGATRON_GPT("megatron-sp-530b", 105, 20480, 128, NARAYANAN),
    MEGATRON_GPT("megatron-sp-1t", 128, 25600, 160, NARAYANAN),

    /* BLOOM: ALiBi (no position table), a LayerNorm on the embedding
     * output, biases everywhere, tied LM head. The tokenizer has 250,680
     * tokens; Megatron-DeepSpeed padded it to 250,880 (a multiple of
     * 128 x TP 4), the vocab_size of the released config.json, whose
     * count 176,247,271,424 is space_model_params with pad_multiple 512. */
    {
        .name = "bloom-176b",
        .source = "BigScience, arXiv:2211.05100, Table 3 and Sections 3.2-3.3 "
                  "(70 layers, 14336 hidden, 112 heads, vocabulary 250,680, "
                  "ALiBi, embedding LayerNorm); https://huggingface.co/"
                  "bigscience/bloom/blob/main/config.json",
        .num_layers = 70, .hidden = 14336, .heads = 112, .kv_heads = 112,
        .head_dim = 128, .ffn_hidden = 4 * 14336, .vocab = 250680,
        .max_position = 2048, .act = SPACE_ACT_GELU,
        .norm = SPACE_NORM_LAYERNORM, .pos = SPACE_POS_ALIBI,
        .tied_embeddings = 1, .qkv_bias = 1, .out_bias = 1, .mlp_bias = 1,
        .embed_norm = 1,
    },

    /* Heads: 1b was changed from 24 to 16 in its yaml so that the head
     * size is 128 (FlashAttention); the others have 128 too. */
    FOUNDRY_MPT("llm-foundry-mpt-1b", 24, 2048, 16, "mpt-1b.yaml"),
    FOUNDRY_MPT("llm-foundry-mpt-3b", 32, 2560, 20, "mpt-3b.yaml"),
    FOUNDRY_MPT("llm-foundry-mpt-7b", 32, 4096, 32, "mpt-7b.yaml"),
    FOUNDRY_MPT("llm-foundry-mpt-13b", 40, 5120, 40, "mpt-13b.yaml"),
    FOUNDRY_MPT("llm-foundry-mpt-30b", 48, 7168, 56, "mpt-30b.yaml"),
    FOUNDRY_MPT("llm-foundry-mpt-70b", 80, 8192, 64, "mpt-70b.yaml"),

    /* Rotary on 25% of each head (rotary_pct; base rotary_emb_base 10000),
     * parallel residual with two LayerNorms per layer, untied output
     * embedding (embed_out). */
    {
        .name = "gpt-neox-20b",
        .source = "https://huggingface.co/EleutherAI/gpt-neox-20b/blob/main/"
                  "config.json (Black et al. 2022, arXiv:2204.06745)",
        .num_layers = 44, .hidden = 6144, .heads = 64, .kv_heads = 64,
        .head_dim = 96, .ffn_hidden = 24576, .vocab = 50432,
        .max_position = 2048, .act = SPACE_ACT_GELU,
        .norm = SPACE_NORM_LAYERNORM, .pos = SPACE_POS_ROPE,
        .rotary_fraction = 0.25, .rope_theta = 10000,
        .tied_embeddings = 0, .qkv_bias = 1, .out_bias = 1, .mlp_bias = 1,
        .parallel_attn_mlp = 1,
    },

    LLAMA("llama-13b", 40, 5120, 40, 40, 13824, 32000, 2048, 10000,
          "Touvron et al. 2023, arXiv:2302.13971, Table 2; "
          "https://huggingface.co/huggyllama/llama-13b/blob/main/config.json"),
    /* CodeLlama-7B with its 16 extra infilling tokens (vocab 32016). */
    LLAMA("llemma-7b", 32, 4096, 32, 32, 11008, 32016, 4096, 0,
          "https://huggingface.co/EleutherAI/llemma_7b/blob/main/config.json "
          "(Azerbayev et al. 2023, arXiv:2310.10631)"),
    LLAMA("llama2-7b", 32, 4096, 32, 32, 11008, 32000, 4096, 10000,
          "https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/"
          "config.json (Touvron et al. 2023, arXiv:2307.09288)"),
    LLAMA("llama2-13b", 40, 5120, 40, 40, 13824, 32000, 4096, 10000,
          "https://huggingface.co/meta-llama/Llama-2-13b-hf/blob/main/"
          "config.json (Touvron et al. 2023, arXiv:2307.09288)"),
    LLAMA("llama2-70b", 80, 8192, 64, 8, 28672, 32000, 4096, 10000,
          "https://huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/"
          "config.json (Touvron et al. 2023, arXiv:2307.09288, GQA)"),
    LLAMA("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192, 500000,
          "https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/"
          "config.json"),
    LLAMA("llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192, 500000,
          "https://huggingface.co/meta-llama/Meta-Llama-3-70B/blob/main/"
          "config.json"),
    LLAMA("llama3.1-8b", 32, 4096, 32, 8, 14336, 128256, 131072, 500000,
          "https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/"
          "config.json (Llama 3 Herd, arXiv:2407.21783, Table 3)"),
    LLAMA("llama3.1-70b", 80, 8192, 64, 8, 28672, 128256, 131072, 500000,
          "https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/"
          "config.json (Llama 3 Herd, arXiv:2407.21783, Table 3)"),
    /* 8 KV heads per the paper; the first upload of the config said 16. */
    LLAMA("llama3.1-405b", 126, 16384, 128, 8, 53248, 128256, 131072, 500000,
          "https://huggingface.co/meta-llama/Llama-3.1-405B/blob/main/"
          "config.json (Llama 3 Herd, arXiv:2407.21783, Table 3)"),
    /* Sliding-window attention, 4096 tokens in every layer (Jiang et al.
     * Section 2; config.json's sliding_window). */
    {
        .name = "mistral-7b",
        .source = "https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/"
                  "config.json (Jiang et al. 2023, arXiv:2310.06825)",
        .num_layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8,
        .head_dim = 128, .ffn_hidden = 14336, .vocab = 32000,
        .max_position = 32768, .act = SPACE_ACT_SWIGLU,
        .norm = SPACE_NORM_RMSNORM, .pos = SPACE_POS_ROPE,
        .rope_theta = 10000, .window = 4096,
    },

    /* Every layer is MoE: 8 SwiGLU experts of 14336, top-2, router
     * hidden x 8, no shared expert. */
    {
        .name = "mixtral-8x7b",
        .source = "https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/"
                  "main/config.json (Jiang et al. 2024, arXiv:2401.04088)",
        .num_layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8,
        .head_dim = 128, .ffn_hidden = 14336, .vocab = 32000,
        .max_position = 32768, .act = SPACE_ACT_SWIGLU,
        .norm = SPACE_NORM_RMSNORM, .pos = SPACE_POS_ROPE,
        .rope_theta = 1000000,
        .num_experts = 8, .top_k = 2, .expert_ffn_hidden = 14336,
        .moe_layer_freq = 1,
    },

    /* 8 experts of 16384, top-2, 56 layers; tokenizer v3 (32768). Mistral
     * AI: 141B parameters, 39B active. One of the two models of the
     * Megatron-Core MoE parallel-folding runs (arXiv:2504.14960). */
    {
        .name = "mixtral-8x22b",
        .source = "https://huggingface.co/mistralai/Mixtral-8x22B-v0.1/blob/"
                  "main/config.json; https://mistral.ai/news/mixtral-8x22b "
                  "(141B, 39B active); arXiv:2504.14960",
        .num_layers = 56, .hidden = 6144, .heads = 48, .kv_heads = 8,
        .head_dim = 128, .ffn_hidden = 16384, .vocab = 32768,
        .max_position = 65536, .act = SPACE_ACT_SWIGLU,
        .norm = SPACE_NORM_RMSNORM, .pos = SPACE_POS_ROPE,
        .num_experts = 8, .top_k = 2, .expert_ffn_hidden = 16384,
        .moe_layer_freq = 1,
    },

    /* Qwen2-MoE: 64 routed experts of 2560, top-8, one shared expert of
     * 20480 behind a sigmoid gate, Q/K/V biases. Qwen: 57B total, 14B
     * active (arXiv:2407.10671, Table 1). The other model of
     * arXiv:2504.14960's runs. */
    {
        .name = "qwen2-57b-a14b",
        .source = "https://huggingface.co/Qwen/Qwen2-57B-A14B/blob/main/"
                  "config.json (Qwen2 report, arXiv:2407.10671, Table 1)",
        .num_layers = 28, .hidden = 3584, .heads = 28, .kv_heads = 4,
        .head_dim = 128, .ffn_hidden = 18944, .vocab = 151936,
        .max_position = 131072, .act = SPACE_ACT_SWIGLU,
        .norm = SPACE_NORM_RMSNORM, .pos = SPACE_POS_ROPE, .qkv_bias = 1,
        .num_experts = 64, .top_k = 8, .expert_ffn_hidden = 2560,
        .shared_experts = 1, .shared_ffn_hidden = 20480,
        .shared_expert_gate = 1, .moe_layer_freq = 1,
    },

    /* Qwen3-MoE: 128 experts, top-8, no shared expert, per-head QK
     * RMSNorm, head_dim 128. Qwen: 30.5B total, 3.3B activated; 235B,
     * 22B (model cards; Qwen3 report arXiv:2505.09388, Table 2). */
    {
        .name = "qwen3-30b-a3b",
        .source = "https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/"
                  "config.json (model card: 30.5B, 3.3B activated)",
        .num_layers = 48, .hidden = 2048, .heads = 32, .kv_heads = 4,
        .head_dim = 128, .ffn_hidden = 6144, .vocab = 151936,
        .max_position = 40960, .act = SPACE_ACT_SWIGLU,
        .norm = SPACE_NORM_RMSNORM, .pos = SPACE_POS_ROPE,
        .rope_theta = 1000000, .qk_norm = 1,
        .num_experts = 128, .top_k = 8, .expert_ffn_hidden = 768,
        .moe_layer_freq = 1,
    },
    {
        .name = "qwen3-235b-a22b",
        .source = "https://huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/"
                  "config.json (model card: 235B, 22B activated)",
        .num_layers = 94, .hidden = 4096, .heads = 64, .kv_heads = 4,
        .head_dim = 128, .ffn_hidden = 12288, .vocab = 151936,
        .max_position = 40960, .act = SPACE_ACT_SWIGLU,
        .norm = SPACE_NORM_RMSNORM, .pos = SPACE_POS_ROPE,
        .rope_theta = 1000000, .qk_norm = 1,
        .num_experts = 128, .top_k = 8, .expert_ffn_hidden = 1536,
        .moe_layer_freq = 1,
    },

    /* DeepSeek MLA + DeepSeekMoE. V2-Lite: no query compression, the
     * first layer dense, 64 routed experts and 2 shared of 1408, top-6:
     * 15.7B, 2.4B active (model card). V3: q_lora_rank 1536, 256 routed
     * experts and 1 shared of 2048, top-8 from 4 of 8 groups, sigmoid
     * scores with a correction bias per expert (aux-loss-free balancing),
     * the first 3 layers dense, one MTP module: 671B, 37B active, plus
     * 14B of MTP (arXiv:2412.19437, Sections 2 and 4.2). */
    {
        .name = "deepseek-v2-lite",
        .source = "https://huggingface.co/deepseek-ai/DeepSeek-V2-Lite/blob/"
                  "main/config.json (DeepSeek-V2, arXiv:2405.04434, "
                  "Appendix B: 15.7B, 2.4B active)",
        .num_layers = 27, .hidden = 2048, .heads = 16, .kv_heads = 16,
        .head_dim = 128, .ffn_hidden = 10944, .vocab = 102400,
        .max_position = 163840, .act = SPACE_ACT_SWIGLU,
        .norm = SPACE_NORM_RMSNORM, .pos = SPACE_POS_ROPE,
        .rope_theta = 10000,
        .num_experts = 64, .top_k = 6, .expert_ffn_hidden = 1408,
        .shared_experts = 2, .shared_ffn_hidden = 1408,
        .first_dense_layers = 1, .moe_layer_freq = 1,
        .kv_lora_rank = 512, .qk_nope_head_dim = 128,
        .qk_rope_head_dim = 64, .v_head_dim = 128,
        .card_active_no_embedding = 1,
    },
    {
        .name = "deepseek-v3",
        .source = "https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/"
                  "config.json (DeepSeek-V3, arXiv:2412.19437)",
        .num_layers = 61, .hidden = 7168, .heads = 128, .kv_heads = 128,
        .head_dim = 128, .ffn_hidden = 18432, .vocab = 129280,
        .max_position = 163840, .act = SPACE_ACT_SWIGLU,
        .norm = SPACE_NORM_RMSNORM, .pos = SPACE_POS_ROPE,
        .rope_theta = 10000,
        .num_experts = 256, .top_k = 8, .expert_ffn_hidden = 2048,
        .shared_experts = 1, .shared_ffn_hidden = 2048,
        .first_dense_layers = 3, .moe_layer_freq = 1, .router_sigmoid = 1,
        .router_bias = 1, .router_groups = 8, .router_topk_groups = 4,
        .q_lora_rank = 1536, .kv_lora_rank = 512, .qk_nope_head_dim = 128,
        .qk_rope_head_dim = 64, .v_head_dim = 128, .mtp_layers = 1,
        .card_active_no_embedding = 1,
    },

    /* gpt-oss: alternating banded (128-token window) and full attention,
     * a sink logit per head, biases on Q/K/V/O, on the router and on the
     * experts, SwiGLU experts of 2880, top-4. OpenAI's model card
     * (arXiv:2508.10925, Table 1): 116.83B total, 5.13B active (120b);
     * 20.91B, 3.61B (20b), active counting the unembedding but not the
     * embedding. */
    {
        .name = "gpt-oss-20b",
        .source = "https://huggingface.co/openai/gpt-oss-20b/blob/main/"
                  "config.json (gpt-oss model card, arXiv:2508.10925)",
        .num_layers = 24, .hidden = 2880, .heads = 64, .kv_heads = 8,
        .head_dim = 64, .ffn_hidden = 2880, .vocab = 201088,
        .max_position = 131072, .act = SPACE_ACT_SWIGLU,
        .norm = SPACE_NORM_RMSNORM, .pos = SPACE_POS_ROPE,
        .rope_theta = 150000, .qkv_bias = 1,
        .out_bias = 1, .mlp_bias = 1,
        .num_experts = 32, .top_k = 4, .expert_ffn_hidden = 2880,
        .moe_layer_freq = 1, .router_bias = 1, .window = 128,
        .global_every = 2, .attn_sinks = 1,
        .card_active_no_embedding = 1,
    },
    {
        .name = "gpt-oss-120b",
        .source = "https://huggingface.co/openai/gpt-oss-120b/blob/main/"
                  "config.json (gpt-oss model card, arXiv:2508.10925)",
        .num_layers = 36, .hidden = 2880, .heads = 64, .kv_heads = 8,
        .head_dim = 64, .ffn_hidden = 2880, .vocab = 201088,
        .max_position = 131072, .act = SPACE_ACT_SWIGLU,
        .norm = SPACE_NORM_RMSNORM, .pos = SPACE_POS_ROPE,
        .rope_theta = 150000, .qkv_bias = 1,
        .out_bias = 1, .mlp_bias = 1,
        .num_experts = 128, .top_k = 4, .expert_ffn_hidden = 2880,
        .moe_layer_freq = 1, .router_bias = 1, .window = 128,
        .global_every = 2, .attn_sinks = 1,
        .card_active_no_embedding = 1,
    },

    /* Llama 4 Scout, the language model: every layer MoE, 16 experts of
     * 8192, top-1, and a shared expert of 8192; three layers in four
     * attend within chunks of 8192 tokens (RoPE), the fourth to the whole
     * context without RoPE; QK L2 norm without weights. Meta: 17B active,
     * 109B total with the vision encoder. */
    {
        .name = "llama4-scout",
        .source = "https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E/"
                  "blob/main/config.json (text_config); "
                  "https://ai.meta.com/blog/llama-4-multimodal-intelligence/",
        .num_layers = 48, .hidden = 5120, .heads = 40, .kv_heads = 8,
        .head_dim = 128, .ffn_hidden = 16384, .vocab = 202048,
        .max_position = 10485760, .act = SPACE_ACT_SWIGLU,
        .norm = SPACE_NORM_RMSNORM, .pos = SPACE_POS_ROPE,
        .num_experts = 16, .top_k = 1, .expert_ffn_hidden = 8192,
        .shared_experts = 1, .shared_ffn_hidden = 8192, .moe_layer_freq = 1,
        .router_sigmoid = 1, .window = 8192, .global_every = 4,
        .window_chunked = 1,
    },
};

#undef MEGATRON_GPT
#undef FOUNDRY_MPT
#undef LLAMA

enum { PRESET_COUNT = (int)(sizeof presets / sizeof presets[0]) };

int space_preset_count(void)
{
    return PRESET_COUNT;
}

const space_model *space_preset_at(int i)
{
    return i >= 0 && i < PRESET_COUNT ? &presets[i] : NULL;
}

const space_model *space_preset_find(const char *name, tp_err *e)
{
    for (int i = 0; i < PRESET_COUNT; i++)
        if (tp_streq_ci(presets[i].name, name)) return &presets[i];

    const char *names[PRESET_COUNT];
    for (int i = 0; i < PRESET_COUNT; i++) names[i] = presets[i].name;
    char hint[256];
    tp_suggest(name, names, PRESET_COUNT, hint, sizeof hint);
    if (hint[0])
        tp_errf(e, TP_EDATA, "unknown model '%s'%s", name, hint);
    else
        tp_errf(e, TP_EDATA,
                "unknown model '%s': not one of the %d built-in presets; give "
                "a path to a HuggingFace config.json to load any other",
                name, PRESET_COUNT);
    return NULL;
}
