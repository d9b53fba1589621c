/*
 * space_model.h - what a model is: a dense or MoE decoder-only
 * transformer, from a built-in preset or a HuggingFace config.json, with
 * its exact parameter count and FLOPs per token (model.c, presets.c,
 * hfconfig.c, hftables.c). Included by space.h: include that one.
 *
 * FLOP convention (space_flops_per_token): one multiply-add = 2 FLOPs;
 * GEMMs only (norms, activations, softmax, optimizer are not counted, as
 * in Narayanan et al. SC'21 eq. 3 and PaLM's MFU appendix B); the
 * embedding lookup is free; the LM head is counted; attention scores
 * (QK^T) and the weighted sum (AV) count 2 * s_k * head_dim FLOPs each per
 * query token per head, with s_k = the full sequence (causal = 0) or the
 * average visible length (s+1)/2 (causal = 1); a sliding-window layer's
 * s_k is capped by its window (space_flops_per_token). Backward = 2 x
 * forward.
 * Recompute adds a forward of what is recomputed (full: every layer;
 * selective: the attention core), never the LM head.
 */
#ifndef TP_SPACE_MODEL_H
#define TP_SPACE_MODEL_H

#include <stdint.h>
#include <stdio.h>
#include "../hwdb/tp_base.h"

typedef enum space_act {
    SPACE_ACT_GELU,         /* 2 FFN GEMMs: up, down */
    SPACE_ACT_RELU,         /* 2 FFN GEMMs */
    SPACE_ACT_SQUARED_RELU, /* 2 FFN GEMMs (Primer; Nemotron) */
    SPACE_ACT_SWIGLU,       /* 3 FFN GEMMs: gate, up, down */
    SPACE_ACT_GEGLU,        /* 3 FFN GEMMs */
    SPACE_ACT_COUNT
} space_act;

typedef enum space_norm {
    SPACE_NORM_LAYERNORM, /* weight and bias */
    SPACE_NORM_RMSNORM,   /* weight only */
    SPACE_NORM_COUNT
} space_norm;

typedef enum space_pos {
    SPACE_POS_LEARNED, /* max_position x hidden parameters */
    SPACE_POS_ROPE,
    SPACE_POS_ALIBI,
    SPACE_POS_NONE,
    SPACE_POS_COUNT
} space_pos;

extern const char *const space_act_names[SPACE_ACT_COUNT];
extern const char *const space_norm_names[SPACE_NORM_COUNT];
extern const char *const space_pos_names[SPACE_POS_COUNT];

/* Number of FFN GEMMs an activation implies (2 or 3). */
int space_act_ffn_gemms(space_act a);

/* A model: a plain value struct, owns nothing. */
typedef struct space_model {
    char name[64];
    char source[256];        /* where the architecture comes from */
    int64_t num_layers;
    int64_t hidden;          /* d_model */
    int64_t heads;           /* query heads */
    int64_t kv_heads;        /* = heads for MHA, 1 for MQA */
    int64_t head_dim;        /* usually hidden / heads, may differ; 0 = hidden / heads */
    int64_t ffn_hidden;      /* dense FFN inner size */
    int64_t vocab;           /* as in the tokenizer (unpadded) */
    int64_t max_position;    /* context the model was built for */
    space_act act;
    space_norm norm;
    space_pos pos;
    /* RoPE's share of each head's dimensions, 0 to 1; 0 means all (1):
     * GPT-NeoX rotates 25 % (rotary_pct), Phi partial_rotary_factor, GPT-J
     * rotary_dim / head_dim. Launch flags only: the estimator times RoPE
     * over the whole head. */
    double rotary_fraction;
    /* RoPE's base (rope_theta); 0: not recorded (transformers' and
     * Megatron-LM's default 10000 then applies). Launch flags only. */
    double rope_theta;
    int tied_embeddings;     /* LM head shares the input embedding */
    int qkv_bias;            /* bias on the Q, K, V projections */
    int out_bias;            /* bias on the attention output projection */
    int mlp_bias;            /* biases on the FFN GEMMs */
    int parallel_attn_mlp;   /* GPT-J/NeoX parallel residual (no effect on counts) */
    int embed_norm;          /* a norm (of kind norm) on the embedding output,
                                before the first layer: BLOOM's
                                word_embeddings_layernorm */
    /* Dropout probabilities, 0 to 1 (0: none): on the attention
     * probabilities, and on the outputs of attention and FFN before their
     * residual adds. HF configs: attention_dropout / attn_pdrop /
     * attention_probs_dropout_prob; hidden_dropout / resid_pdrop /
     * hidden_dropout_prob. The presets have none. */
    double attn_dropout;
    double hidden_dropout;
    /* MoE. num_experts == 0 means dense. */
    int64_t num_experts;        /* routed experts per MoE layer */
    int64_t top_k;              /* experts per token */
    int64_t expert_ffn_hidden;  /* inner size of one routed expert */
    int64_t shared_experts;     /* always-on experts per MoE layer */
    int64_t shared_ffn_hidden;  /* inner size of one shared expert */
    int64_t first_dense_layers; /* leading layers with a dense FFN */
    int64_t moe_layer_freq;     /* every n-th layer (after the dense ones) is MoE; 1 = all */
    int router_sigmoid;         /* router scores by sigmoid (DeepSeek-V3,
                                   Megatron-Core --moe-router-score-function
                                   sigmoid); 0: softmax */
    int router_bias;            /* router GEMM has a bias (gpt-oss) */
    int64_t router_groups;      /* group-limited routing: experts in this many
                                   groups (DeepSeek n_group); 0: none */
    int64_t router_topk_groups; /* of which each token may use this many
                                   (DeepSeek topk_group) */
    double capacity_factor;     /* tokens an expert takes, over its fair
                                   share; 0: dropless (no capacity) */
    int shared_expert_gate;     /* a sigmoid gate (hidden x 1) on the shared
                                   experts' output (Qwen2-MoE) */
    /* Multi-head latent attention (DeepSeek-V2/V3). kv_lora_rank == 0
     * means ordinary (MHA/GQA/MQA) attention, and the four head sizes
     * below are unused. With MLA, heads are query heads and kv_heads =
     * heads (each head gets its own K and V from the latent); head_dim is
     * the value head size (what the attention output holds per head). */
    int64_t q_lora_rank;        /* query down-projection rank; 0: a full
                                   hidden x heads*(nope+rope) query GEMM */
    int64_t kv_lora_rank;       /* compressed KV latent size */
    int64_t qk_nope_head_dim;   /* per-head query/key size without RoPE */
    int64_t qk_rope_head_dim;   /* per-head decoupled RoPE size (the key's
                                   rope part is shared by all heads) */
    int64_t v_head_dim;         /* per-head value size */
    int qk_norm;                /* norms on the queries and keys, of the
                                   model's norm kind: 0 none; 1 per head, a
                                   head_dim weight each for Q and K (Qwen3,
                                   Gemma 3); 2 over the whole projection,
                                   heads x head_dim for Q and kv_heads x
                                   head_dim for K (OLMo 2, OLMoE). Not with
                                   MLA, whose latent norms are its own */
    /* Sliding-window (local) attention. window == 0: every layer attends
     * to the whole causal context. Otherwise a layer is local (attends to
     * at most `window` previous tokens) unless it is global: layer i
     * (0-based) is global when global_every > 0 and (i + 1) %
     * global_every == 0 (Gemma 2: 2, Gemma 3: 6, gpt-oss: 2; Mistral 7B
     * v0.1: 0, every layer local). */
    int64_t window;
    int64_t global_every;
    int window_chunked;         /* local layers attend within aligned chunks
                                   of `window` tokens, not a sliding window
                                   (Llama 4's attention_chunk_size) */
    int attn_sinks;             /* a learned sink logit per head (gpt-oss):
                                   heads parameters a layer */
    double attn_softcap;        /* tanh soft-capping of attention logits
                                   (Gemma 2); 0: none */
    double final_softcap;       /* of the LM head's logits; 0: none */
    int64_t mtp_layers;         /* DeepSeek-V3 multi-token prediction
                                   modules (each: 2 norms, a 2h x h
                                   projection and one transformer layer,
                                   sharing embedding and head); 0: none */
    int post_norms;             /* norms on the attention and FFN outputs
                                   too, before the residual adds: 4 norms a
                                   layer (Gemma 2 and 3); 0: 2 */
    /* How the publisher's model card counts active parameters: 1 without
     * the input embedding (a lookup, no GEMM), the LM head included, as
     * DeepSeek (V2-Lite 2.4B, V2 21B, V3 37B) and OpenAI's gpt-oss (3.61B,
     * 5.13B) do; 0 every parameter a token touches, as Mistral (Mixtral
     * 12.9B), Qwen (Qwen3-30B-A3B 3.3B) and Meta (Llama 4 Scout 17B) do.
     * Printed counts only (space_params.active_card). */
    int card_active_no_embedding;
} space_model;

/* Parameter counts, exact, in parameters (not bytes). */
typedef struct space_params {
    int64_t vocab_padded;     /* vocab padded to the multiple asked for */
    int64_t embedding;        /* token embedding (padded vocab x hidden) */
    int64_t position;         /* learned position embedding, else 0 */
    int64_t embed_norm;       /* the embedding norm (BLOOM), else 0 */
    int64_t attn_per_layer;   /* Q, K, V, out projections with biases */
    int64_t norms_per_layer;  /* the layer's norm weights (and biases) */
    int64_t dense_mlp_per_layer; /* a dense-FFN layer's FFN */
    int64_t moe_mlp_per_layer;   /* an MoE layer's experts, shared experts, router */
    int64_t dense_layers;     /* count of dense-FFN layers */
    int64_t moe_layers;       /* count of MoE layers */
    int64_t per_layer;        /* a dense layer in total (attn + norms + mlp); for MoE models an MoE layer */
    int64_t layers_total;     /* all transformer layers */
    int64_t final_norm;
    int64_t lm_head;          /* 0 when tied */
    int64_t total;            /* everything: embedding + position + embedding
                                 norm + layers + final norm + head; without
                                 the MTP modules (DeepSeek-V3's "671B") */
    int64_t active;           /* parameters one token touches: top_k of the
                                 routed experts, the shared ones and all
                                 that is not an expert (embedding and head
                                 included, as Mistral's "12.9B active") */
    int64_t active_card;      /* active as the model's card counts it:
                                 without the embedding where
                                 card_active_no_embedding (DeepSeek's
                                 "2.4B"), else active */
    int64_t mtp;              /* the multi-token prediction modules' own
                                 parameters (their norms, projection and
                                 layer; embedding and head are shared):
                                 not in total */
    int64_t checkpoint;       /* total + mtp + the copies of embedding and
                                 head a checkpoint stores with each MTP
                                 module (DeepSeek-V3 on HuggingFace:
                                 "685B"); = total without MTP */
} space_params;

/* Counts parameters with the vocabulary padded up to a multiple of
 * pad_multiple (Megatron pads to 128 x TP; pass 1 for the unpadded count
 * published numbers use). pad_multiple < 1 is treated as 1. m must have
 * passed space_model_validate (its limits keep the int64 sums exact). */
void space_model_params(const space_model *m, int64_t pad_multiple,
                        space_params *out);

/* Megatron-LM's padded vocabulary: smallest multiple of 128 x tp >= vocab. */
int64_t space_vocab_padded(int64_t vocab, int64_t tp);

typedef enum space_recompute {
    SPACE_RECOMPUTE_NONE,
    SPACE_RECOMPUTE_SELECTIVE, /* attention core (QK^T, softmax, AV) */
    SPACE_RECOMPUTE_FULL,      /* every layer's forward */
    /* torchtitan's selective op-level checkpointing (selective_ac_option
     * "op"): keeps the layer input, the attention output and every
     * second matmul's output (in module order q, k, v, o, w1, [w3,] w2);
     * reruns the other matmuls and every cheap op in the backward. */
    SPACE_RECOMPUTE_SELECTIVE_OP,
    SPACE_RECOMPUTE_COUNT
} space_recompute;

extern const char *const space_recompute_names[SPACE_RECOMPUTE_COUNT];

/* The modules selective recomputation reruns (Megatron-Core
 * --recompute-modules, TransformerConfig.recompute_modules, with
 * --recompute-granularity selective; NVIDIA/Megatron-LM@d98e8a64ddf3,
 * megatron/core/transformer/transformer_config.py): bits of
 * space_layout.recompute_modules. "core_attn", "mlp", "moe" and
 * "shared_experts" checkpoint their module (keep its input, rerun its
 * forward in the backward); "layernorm", "moe_act" and "mla_up_proj"
 * discard their output after its use and rebuild it
 * (CheckpointWithoutOutput). */
enum {
    SPACE_RC_CORE_ATTN = 1u << 0,  /* the attention core */
    SPACE_RC_LAYERNORM = 1u << 1,  /* the norms that are modules of their
                                      own (input_layernorm, pre_mlp_layernorm
                                      where not fused into a TE linear) */
    SPACE_RC_MOE_ACT = 1u << 2,    /* the routed experts' activation */
    SPACE_RC_MLA_UP_PROJ = 1u << 3, /* MLA's up projections and RoPE */
    SPACE_RC_MLP = 1u << 4,        /* the dense MLP */
    SPACE_RC_MOE = 1u << 5,        /* the whole MoE layer: router, dispatch,
                                      experts, combine, shared experts */
    SPACE_RC_SHARED_EXPERTS = 1u << 6, /* the shared experts */
    SPACE_RC_COUNT = 7
};
/* Megatron-Core's names of the bits, in bit order. */
extern const char *const space_rc_module_names[SPACE_RC_COUNT];

/* Which layers full recomputation covers (Megatron-LM --recompute-method;
 * Megatron-Core transformer_block.py, TransformerBlock._checkpointed_
 * forward, NVIDIA/Megatron-LM@d580efc68a9f, core_v0.12.0): each model
 * chunk's layers (one pipeline stage's, or one of its chunks under
 * interleaving). */
typedef enum space_recompute_method {
    SPACE_RECOMPUTE_UNIFORM, /* every layer, in groups of N whose input is
                                kept and which are rebuilt together */
    SPACE_RECOMPUTE_BLOCK,   /* the first N layers of each chunk, one at a
                                time; the others keep all their
                                activations */
    SPACE_RECOMPUTE_METHOD_COUNT
} space_recompute_method;
extern const char *const
    space_recompute_method_names[SPACE_RECOMPUTE_METHOD_COUNT];

typedef struct space_flops {
    double fwd;        /* forward FLOPs per token */
    double bwd;        /* backward FLOPs per token (2 x fwd) */
    double recompute;  /* extra forward FLOPs per token from recomputation */
    double total;      /* fwd + bwd + recompute */
    double attn_fwd;   /* of fwd: the attention core (QK^T and AV) */
    double lm_head_fwd;/* of fwd: the LM head */
    double mtp_fwd;    /* of fwd: the MTP modules (projection, layer and
                          their pass through the shared head) */
} space_flops;

/* FLOPs per token at sequence length seq, under the convention at the
 * top of this file. MoE layers count top_k routed experts plus the shared
 * ones plus the router (and Qwen2-MoE's shared-expert gate). MLA counts
 * its down and up projections, QK^T over qk_nope + qk_rope dims and AV
 * over v_head_dim. A local (sliding-window) layer's query sees min(window,
 * i + 1) keys (causal; a chunked one i mod window + 1), averaged over the
 * sequence; non-causal, min(window, s) (chunked: its chunk). MTP modules
 * count in full, as they run in training: the 2h x h projection, their
 * layer and the shared LM head once more (Megatron-LM counts the logits
 * (1 + mtp_num_layers) times: megatron/training/training.py,
 * num_floating_point_operations, and tests/unit_tests/test_training.py).
 * Vocabulary unpadded. */
void space_flops_per_token(const space_model *m, int64_t seq, int causal,
                           space_recompute rc, space_flops *out);

/* Checks a model's fields: positive sizes within sane limits, heads
 * dividing hidden where head_dim was not given, kv_heads dividing heads,
 * MoE fields consistent. where names the model in messages (a file or a
 * preset). Returns TP_OK or TP_EDATA with the field, value and range. */
int space_model_validate(const space_model *m, const char *where, tp_err *e);

/* The range space_model_validate accepts for an int64_t field of
 * space_model, by member name ("hidden", "num_layers", ...), so readers
 * can report it with the file and JSON path. Returns 1 and sets *lo, *hi;
 * 0 (untouched) for an unknown name. */
int space_model_field_range(const char *field, int64_t *lo, int64_t *hi);

/* Presets: a table of well-known models, each with its source. */
int space_preset_count(void);
const space_model *space_preset_at(int i);
/* By name (case-insensitive); NULL and a message with the closest names
 * (TP_EDATA) when unknown. */
const space_model *space_preset_find(const char *name, tp_err *e);

/* Reads a HuggingFace config.json (LLaMA 1-4, Mistral, Mixtral, Qwen2/3
 * and their MoE, DeepSeek V2/V3, gpt-oss, Gemma 1-3, OLMo 2, OLMoE, Phi-3,
 * PhiMoE, GPT-2, GPT-NeoX, Falcon, ... field names; a nested
 * "text_config" is followed) into *out and validates it. Errors name the
 * file, JSON path, value and valid range (TP_EDATA, TP_ENOINPUT). */
int space_model_from_hf_file(const char *path, space_model *out, tp_err *e);

/* The same for a config object already parsed, e.g. a model written
 * inline in a larger file: obj is read, never kept or freed (the caller
 * owns the tree and deletes it). file and path (the JSON path of obj,
 * "$" or NULL for a whole file; at most 256 characters) name it in
 * messages, e.g. "runs.json: $.runs[3].model.hidden_size: ...". */
int space_model_from_hf_json(const cJSON *obj, const char *file,
                             const char *path, space_model *out, tp_err *e);

/* What the config.json obj says about the architecture that a space_model
 * cannot hold, one line each naming the file, the JSON path, the value and
 * what the estimate assumes instead: an unknown model_type, a local/global
 * layer pattern that is not periodic, Qwen's window on only the layers
 * from max_window_layers on, Qwen-MoE's mlp_only_layers, PhiMoE's LM-head
 * bias, cross-attention layers, a low-rank output projection, top-k
 * sparse attention. Written into buf[cap] ('\n' between lines; cut at
 * cap); returns how many there are. Reads obj only. */
int space_hf_unread(const cJSON *obj, const char *file, char *buf, size_t cap);

/* When name_or_path is a config.json: what it says that trainplan does
 * not model (space_hf_unread), each a "trainplan: warning:" line on err,
 * or with strict a TP_EDATA error naming them ("--strict: ..."). TP_OK
 * for presets and clean files; a file that does not load is left to the
 * model reader's message (space_model_resolve). */
int space_model_unread(const char *name_or_path, int strict, FILE *err,
                       tp_err *e);

/* Whether a --model argument names a config.json rather than a preset:
 * it contains '/' or ends in ".json" (any case). */
int space_model_is_path(const char *name_or_path);

/* Resolves NAME_OR_PATH: a preset name, else a path to a config.json
 * (anything containing '/' or ending in ".json" is taken as a path). */
int space_model_resolve(const char *name_or_path, space_model *out, tp_err *e);

#endif
