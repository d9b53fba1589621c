/*
 * space.h - what a model is: a dense or MoE decoder-only transformer,
 * from a built-in preset or a HuggingFace config.json, with its exact
 * parameter count and FLOPs per token.
 *
 * Later issues add what a layout is and which layouts are valid.
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
#ifndef TP_SPACE_H
#define TP_SPACE_H

#include <stdint.h>
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

/* Whether a --model argument names a config.json rather than a preset:
 * it contains '/' or ends in ".json" (any case). */
int space_model_is_path(const char *name_or_path);

/* Resolves NAME_OR_PATH: a preset name, else a path to a config.json
 * (anything containing '/' or ending in ".json" is taken as a path). */
int space_model_resolve(const char *name_or_path, space_model *out, tp_err *e);

/* ---- layouts ------------------------------------------------------------ */

/* Optimizer-state sharding over the data-parallel ranks. */
typedef enum space_zero {
    SPACE_ZERO_NONE,  /* plain data parallel: every rank holds everything */
    SPACE_ZERO_1,     /* optimizer states sharded (Megatron's distributed optimizer) */
    SPACE_ZERO_2,     /* and gradients */
    SPACE_ZERO_3,     /* and parameters (FSDP) */
    SPACE_ZERO_COUNT
} space_zero;

/* One way to lay out a training job, in Megatron-LM's terms. GPUs =
 * tp x cp x pp x dp. A plain value. */
/* Which TP collectives run under GEMMs (estimator/iter.c says how). */
typedef enum space_tp_overlap {
    SPACE_TP_OVERLAP_BWD,  /* Megatron-LM's default: the backward's
                              input-gradient collectives under the weight
                              gradient */
    SPACE_TP_OVERLAP_NONE, /* none (Megatron-LM 2021; its
                              --no-async-tensor-model-parallel-allreduce) */
    SPACE_TP_OVERLAP_ALL,  /* all (Megatron-LM --tp-comm-overlap) */
    SPACE_TP_OVERLAP_DTENSOR, /* PyTorch DTensor TP (torchtitan): none
                                 overlapped; autograd keeps each gathered
                                 GEMM input, so the backward does not
                                 re-gather it */
    SPACE_TP_OVERLAP_ASYNC,   /* torchtitan's AsyncTP: DTensor TP with the
                                 gather->GEMM and GEMM->reduce-scatter
                                 pairs decomposed into overlapped steps
                                 (forward, recompute, and the backward's
                                 output-gradient gathers) */
    SPACE_TP_OVERLAP_COUNT
} space_tp_overlap;
extern const char *const space_tp_overlap_names[SPACE_TP_OVERLAP_COUNT];

/* How context parallelism exchanges keys and values (iter.c). */
typedef enum space_cp_comm {
    SPACE_CP_P2P,       /* ring: each block sent on while the previous one
                           is attended to (Megatron-Core's default) */
    SPACE_CP_ALLGATHER, /* all of them gathered first (Megatron-Core
                           all_gather; PyTorch context parallel's default) */
    SPACE_CP_COMM_COUNT
} space_cp_comm;
extern const char *const space_cp_comm_names[SPACE_CP_COMM_COUNT];

/* The attention kernel (space_layout.flash), by Megatron-LM's
 * --attention-backend names. */
typedef enum space_attn {
    SPACE_ATTN_UNFUSED, /* QK^T, masked softmax, AV as separate kernels,
                           keeping the s x s probabilities */
    SPACE_ATTN_FLASH,   /* FlashAttention-2 (the flash-attn package,
                           PyTorch SDPA's flash backend) */
    SPACE_ATTN_CUDNN,   /* cuDNN fused attention (Megatron's "fused") */
    SPACE_ATTN_AUTO,    /* what Transformer Engine picks: cuDNN on Hopper
                           and Blackwell, FlashAttention-2 elsewhere
                           (TE attention/dot_product_attention/utils.py
                           get_attention_backend; Megatron-LM's default) */
    SPACE_ATTN_COUNT
} space_attn;
extern const char *const space_attn_names[SPACE_ATTN_COUNT];

/* How fp8 GEMM operands are scaled (estimator/iter.c says which kernels
 * each runs). Names as Megatron-LM's --fp8-recipe, and torchao's rowwise. */
typedef enum space_fp8_recipe {
    SPACE_FP8_DELAYED,    /* per tensor, scale from the amax history
                             (Transformer Engine's DelayedScaling;
                             Megatron-LM's default) */
    SPACE_FP8_TENSORWISE, /* per tensor, scale from this tensor's amax
                             (TE Float8CurrentScaling; torchao's
                             tensorwise dynamic scaling) */
    SPACE_FP8_ROWWISE,    /* one scale per row (torchao's rowwise) */
    SPACE_FP8_BLOCKWISE,  /* 1 x 128 activations and gradients, 128 x 128
                             weights (TE Float8BlockScaling; DeepSeek-V3) */
    SPACE_FP8_MXFP8,      /* 1 x 32 blocks with power-of-two scales
                             (TE MXFP8BlockScaling; Blackwell only) */
    SPACE_FP8_RECIPE_COUNT
} space_fp8_recipe;
extern const char *const space_fp8_recipe_names[SPACE_FP8_RECIPE_COUNT];

/* Which library runs the fp8 GEMMs and casts (iter.c: their kernels;
 * mem.c: what they keep). */
typedef enum space_fp8_lib {
    SPACE_FP8_LIB_TE,      /* Transformer Engine (Megatron-Core, NeMo): fp8
                              copies of the layers' weights and their
                              transposes cached across micro-batches, GEMM
                              inputs saved for the backward in fp8 */
    SPACE_FP8_LIB_TORCHAO, /* torchao's Float8Linear (torchtitan): weights
                              cast per use, nothing cached; inputs saved in
                              16 bits (as their high-precision tensors) */
    SPACE_FP8_LIB_COUNT
} space_fp8_lib;

#define SPACE_MAX_DOC_BUCKETS 8

/* What Megatron-Core counts as a layer of the pipeline split besides the
 * transformer layers (--account-for-embedding-in-pipeline-split,
 * --account-for-loss-in-pipeline-split): bits of space_layout.pp_account. */
enum { SPACE_PP_EMBED = 1, SPACE_PP_LOSS = 2 };

/* The most stages (PP x VPP) a custom layout may have. */
#define SPACE_PP_LAYOUT_MAX 1024

/* A --pipeline-model-parallel-layout string, parsed as Megatron-Core parses
 * it (split.c, space_pp_layout_parse): stage i is model chunk i / PP of
 * pipeline rank i % PP. A job-level value: one per job, read by every
 * layout that points at it (space_layout.pp_layout), never copied per
 * candidate. */
typedef struct space_pp_layout {
    int n;                                 /* stages */
    int32_t t[SPACE_PP_LAYOUT_MAX];        /* transformer layers ('t') */
    int32_t before[SPACE_PP_LAYOUT_MAX];   /* 't' in the stages before */
    int32_t mtp[SPACE_PP_LAYOUT_MAX];      /* MTP layers ('m') */
    uint8_t e[SPACE_PP_LAYOUT_MAX];        /* embeddings ('E') */
    uint8_t loss[SPACE_PP_LAYOUT_MAX];     /* losses ('L') */
    char first, last;   /* the first and the last letter, in layer order */
    int t_after_mtp;    /* a 't' after an 'm', in layer order */
    int64_t n_t, n_e, n_loss, n_mtp; /* letters of each kind */
    int mtp_stages;     /* stages holding an 'm' */
    int mtp_stage;      /* the first of them (-1: none) */
    char text[2048];    /* as given (at most 2047 characters) */
} space_pp_layout;

typedef struct space_layout {
    int64_t tp, cp, pp, dp;
    int64_t vpp;       /* model chunks per pipeline rank (interleaved 1F1B); 1 = none */
    int64_t mbs;       /* micro-batch size, sequences */
    int64_t gbs;       /* global batch size, sequences */
    int64_t seq;       /* sequence length, tokens */
    int sp;            /* sequence parallelism (with tp > 1) */
    space_recompute recompute;
    space_zero zero;
    int dtype;         /* hw_dtype of the GEMMs: HW_BF16, HW_FP16 or HW_FP8 */
    int flash;         /* space_attn: the attention kernel; nonzero ones keep
                          no s x s scores */
    int no_dp_overlap; /* gradient reduction after the backward, parameter
                          gather before the forward (Megatron-LM without
                          --overlap-grad-reduce / --overlap-param-gather);
                          0 by default: overlapped */
    int grad_bytes;    /* bytes per gradient element accumulated and
                          reduced: 4, fp32 (Megatron-LM's main_grad with
                          --accumulate-allreduce-grads-in-fp32), or 2
                          (16-bit: Megatron-LM's fp16 default, its
                          --grad-reduce-in-bf16, DeepSpeed's fp16 ZeRO; the
                          optimizer then steps on an fp32 copy of its
                          shard); 0: as Megatron-LM for dtype
                          (space_grad_bytes) */
    int tp_overlap;    /* space_tp_overlap; 0: Megatron-LM's default */
    int cp_comm;       /* space_cp_comm; 0: ring of point-to-point sends */
    int pp_scatter_gather; /* pipeline sends without SP: each TP rank sends
                          1/TP of the activation, the receiving TP group
                          all-gathers it (Narayanan et al. SC'21, section
                          4.1; Megatron-LM before Megatron-Core and
                          Megatron-DeepSpeed, on by default there); 0: every
                          TP rank sends all of it (Megatron-Core) */
    int eager;         /* PyTorch eager: RMSNorm, SwiGLU and RoPE as the
                          separate kernels of their PyTorch code
                          (torchtitan without torch.compile); 0: fused
                          kernels (Megatron-LM, Transformer Engine,
                          torch.compile) */
    int fp8_recipe;    /* space_fp8_recipe, with dtype HW_FP8; 0: delayed */
    int fp8_lib;       /* space_fp8_lib; 0: Transformer Engine */
    int fp8_params;    /* Transformer Engine fp8 weights as the parameters
                          (Megatron-LM --fp8-param-gather): one byte each in
                          memory and in the distributed optimizer's
                          all-gather; 0: 16-bit parameters */
    /* Packed sequences (fine-tuning): each row of seq tokens holds whole
     * documents, and attention runs within each (iter.c). n_docs buckets
     * of documents doc_len[i] tokens long holding doc_share[i] of the
     * tokens (shares sum to 1); n_docs 0: one document a row. */
    int n_docs;
    int64_t doc_len[SPACE_MAX_DOC_BUCKETS];
    double doc_share[SPACE_MAX_DOC_BUCKETS];
    int no_pp_overlap; /* interleaved 1F1B: every pipeline send and receive
                          exposed (Megatron-LM of 2021, Megatron-Core's
                          --no-overlap-p2p-communication, PyTorch's
                          pipelining); 0 by default: Megatron-Core posts
                          them asynchronously under the next chunk's
                          compute in its steady state (the warm-up and
                          flush sends stay exposed) */
    double zero3_live; /* ZeRO-3: parameters gathered at once; 0 = two
                          whole layers (FSDP units of one layer, the next
                          prefetched); DeepSpeed gathers module by module
                          up to stage3_max_live_parameters (1e9 default) */
    int param_fp32;    /* the parameters themselves are fp32 and the
                          optimizer steps them, no separate master copy:
                          PyTorch FSDP's mixed precision (torchtitan),
                          which under ZeRO-3 keeps no 16-bit shard, only
                          the 16-bit copies gathered for compute; 0: 16-bit
                          weights and an fp32 master in the optimizer
                          (Megatron-LM, DeepSpeed) */
    int gqa_repeat_kv; /* torchtitan's attention repeats the grouped keys
                          and values to every head before SDPA (repeat_kv,
                          which SDPA's flash kernel then keeps for the
                          backward), as torchtitan did before
                          pytorch/torchtitan@ff0829c10 (#2259, 2026-01-27:
                          enable_gqa; v0.2.2 is the first release with
                          it); 0: the keys and values passed unrepeated */
    int rmsnorm_composite; /* PyTorch eager's RMSNorm as its composite ATen
                          code, which keeps an fp32 copy of its input for
                          the backward (PyTorch before the fused
                          aten::_fused_rms_norm of pytorch/pytorch#153666,
                          2025), and times it kernel by kernel
                          (estimator/iter.c, op.c EST_OP_RMSNORM_EAGER);
                          0: the fused kernel, which keeps the 16-bit
                          input (measured, PyTorch 2.11) and runs as one */
    int fsdp_root_embeddings; /* torchtitan's FSDP2 units of early 2025:
                          the blocks, and the root holding the embedding,
                          the final norm and the output projection; 0:
                          the embedding, the blocks and [final norm,
                          output] as units of their own (torchtitan's
                          apply_fsdp since mid 2025) */
    int loss_eager;    /* torchtitan compiled its blocks but ran the loss
                          eagerly, cross_entropy(pred.float()) and its
                          fp32 copies of the logits (before
                          pytorch/torchtitan@bbb1b616e, #1033, 2025-04-02,
                          which compiles the loss with --training.compile);
                          0: the loss compiled wherever the blocks are */
    int ce_fusion;     /* Megatron-Core's --cross-entropy-loss-fusion
                          (the native implementation): its loss functions
                          are compiled by jit_fuser, torch.compile from
                          PyTorch 2.2, which turns the in-place updates of
                          the fp32 logits and softmax into new fp32 buffers
                          beside them (megatron/core/fusions/
                          fused_cross_entropy.py, megatron/core/jit.py);
                          0: the unfused loss, in place */
    int64_t wgrad_defer; /* Megatron-Core's --defer-embedding-wgrad-compute:
                          the LM head's weight gradient of up to this many
                          micro-batches (--wgrad-deferral-limit; -1: every
                          one) computed after the pipeline's flush, so their
                          output gradients and inputs stay until then
                          (megatron/core/tensor_parallel/layers.py,
                          grad_output_buffer, embedding_activation_buffer);
                          0: off */
    int recompute_method; /* space_recompute_method, with full recompute;
                          0: uniform */
    unsigned recompute_modules; /* SPACE_RC_* bits, with selective
                          recompute; 0: Megatron-Core's default, the
                          attention core (space_recompute_modules) */
    int64_t recompute_layers; /* --recompute-num-layers, with full
                          recompute: uniform, the layers of a group (0:
                          1); block, the layers recomputed of each model
                          chunk (0: all; more than a chunk has: all) */
    int framework;     /* space_framework that runs it; with eager, its
                          software stack (space_layout_stack); 0:
                          Megatron-Core */
    /* Mixture of experts (Megatron-Core's MoE parallel folding, arXiv
     * 2504.14960): the expert layers run on their own grid of the same
     * tp x cp x dp ranks of a stage, etp x ep x edp, with edp = tp x cp
     * x dp / (etp x ep) the experts' data parallelism. */
    int64_t ep;        /* expert-parallel size; 0 counts as 1 */
    int64_t etp;       /* expert tensor-parallel size; 0: tp (Megatron's
                          default when --expert-tensor-parallel-size is
                          not given) */
    int moe_dispatcher; /* space_moe_dispatcher; 0: all-to-all */
    double moe_imbalance; /* tokens the busiest expert receives over the
                          mean (>= 1); 0: the default
                          (SPACE_MOE_IMBALANCE_DEFAULT) */
    int moe_comm_overlap; /* space_moe_overlap: what the MoE dispatch and
                          combine run under; 0: nothing (exposed) */
    int moe_router_pad;   /* 1: the router pads each expert's token count
                          to the fp8 alignment in the routing map
                          (Megatron-Core --moe-router-padding-for-
                          quantization): no padding copies before the
                          fp8 grouped GEMMs; 0: TE's Fp8Padding copies */
    int moe_flex_backend; /* space_moe_flex_backend: the flex dispatcher's
                          backend; 0: DeepEP */
    /* The pipeline split (split.c): which layers each pipeline rank and
     * model chunk holds, in Megatron-Core's terms. All 0: its default,
     * L / PP layers a rank, a rank's layers / VPP a chunk. */
    int pp_account;    /* SPACE_PP_EMBED | SPACE_PP_LOSS: the embedding,
                          the loss, count as a layer of the split;
                          negative: not chosen yet (search_complete tries
                          the splits; space_* read it as 0) */
    int64_t pp_first;  /* --decoder-first-pipeline-num-layers; 0: not
                          given (the first rank is a middle one) */
    int64_t pp_last;   /* --decoder-last-pipeline-num-layers; 0: not given */
    const space_pp_layout *pp_layout; /* --pipeline-model-parallel-layout:
                          the job's, which outlives every layout pointing at
                          it; NULL: none */
    int alloc_expandable; /* PyTorch's caching allocator with
                          expandable_segments:True (PYTORCH_CUDA_ALLOC_CONF,
                          or PYTORCH_ALLOC_CONF from PyTorch 2.9): one
                          growing segment per stream instead of a cudaMalloc
                          per segment; what the allocator caches differs
                          (estimator/mem.c, est_memory_cache_share). Set
                          by space_framework_software from the framework's
                          launcher; 0: PyTorch's default, off */
    /* Memory savers and the interleaved schedule's micro-batch groups
     * (issue 28; space/savers.c says what each is in Megatron-Core, the
     * estimator what it costs). 0 everywhere: none of them, as before. */
    int pa_optimizer;     /* --use-precision-aware-optimizer: Transformer
                          Engine's FusedAdam keeps the master weights and
                          the moments, in the dtypes below */
    int main_grads_dtype; /* space_opt_dtype of the gradient buffers
                          (--main-grads-dtype): fp32 (0) or bf16 */
    int main_params_dtype; /* of the master weights (--main-params-dtype):
                          fp32 (0) or fp16 */
    int exp_avg_dtype;    /* of Adam's first moment (--exp-avg-dtype):
                          fp32 (0), fp16, bf16 or fp8 */
    int exp_avg_sq_dtype; /* of its second moment (--exp-avg-sq-dtype) */
    double opt_offload;   /* --optimizer-cpu-offload: the share of this
                          rank's optimizer parameters stepped on the host
                          (--optimizer-offload-fraction, 0 to 1); 0: off */
    int opt_offload_overlap; /* --overlap-cpu-optimizer-d2h-h2d */
    int64_t act_offload_layers; /* --cpu-offloading-num-layers: the first
                          N layers' activations kept on the host between
                          the forward and the backward (Transformer
                          Engine's CPU offload); 0: off */
    unsigned offload_modules; /* --fine-grained-activation-offloading with
                          --offload-modules: SPACE_OFF_* bits; 0: off */
    double offload_fraction; /* --activation-offload-fraction, (0, 1]; 0:
                          1 (every eligible group) */
    int64_t mb_group;     /* --microbatch-group-size-per-virtual-pipeline-
                          stage: micro-batches each model chunk runs in a
                          row; 0: PP (Megatron-Core's default) */
    int pp_schedule;      /* space_pp_schedule (--pipeline-schedule); 0:
                          1F1B, interleaved 1F1B with vpp > 1 */
    /* Memory mechanisms of Megatron-Core (estimator/mem.c, docs/memory.md) */
    int fsdp_double_buffer; /* Megatron-FSDP's --fsdp-double-buffer (ZeRO-2
                          and 3 under Megatron-Core): two persistent
                          buffers for the gathered weights and two for the
                          unsharded gradients, the size of one FSDP unit,
                          alternated (FixedPoolAllocator,
                          param_and_grad_buffer.py); 0: each unit's buffers
                          allocated and freed as it runs */
    int moe_permute_fusion; /* Megatron-Core --moe-permute-fusion: Transformer
                          Engine's fused permute and unpermute, which keep a
                          32-bit map of rows per token and expert instead of
                          the 64-bit sorted indices (moe_utils.py permute) */
    int moe_router_fusion; /* Megatron-Core --moe-router-fusion (v0.14,
                          TE >= 2.6): Transformer Engine's fused top-k,
                          scores and load-balancing loss kernels instead of
                          PyTorch's ops (estimator: EST_OP_ROUTER_FUSED and
                          the router's host launches) */
    int cuda_graph;    /* space_cuda_graph: --cuda-graph-impl; 0: none */
    unsigned cuda_graph_modules; /* SPACE_CGM_* bits: what a per-layer graph
                          captures (--cuda-graph-modules, formerly
                          --cuda-graph-scope); 0: the whole layer */
    int ce_te;         /* space_ce_te: the loss is Transformer Engine's fused
                          cross-entropy (--cross-entropy-fusion-impl te with
                          --cross-entropy-loss-fusion), as its version
                          keeps the gradient; 0: not (ce_fusion says which
                          other) */
} space_layout;

/* ---- memory savers (savers.c) ------------------------------------------ */

/* The dtypes Megatron-Core's precision-aware optimizer keeps a state in
 * (megatron/training/arguments.py, dtype_map; Transformer Engine's
 * FusedAdam: fp8 is its torch.uint8, an e4m3 Float8Tensor with one scale
 * per tensor). */
typedef enum space_opt_dtype {
    SPACE_OPT_FP32,
    SPACE_OPT_BF16,
    SPACE_OPT_FP16,
    SPACE_OPT_FP8,
    SPACE_OPT_DTYPE_COUNT
} space_opt_dtype;
extern const char *const space_opt_dtype_names[SPACE_OPT_DTYPE_COUNT];
/* Bytes an element of d takes (4, 2, 2, 1). */
double space_opt_dtype_bytes(int d);
/* The name of d, the first for a value out of range. */
const char *space_opt_dtype_name(int d);

/* Megatron-Core's fine-grained activation offloading modules
 * (TransformerConfig.offload_modules, NVIDIA/Megatron-LM@d98e8a64ddf3
 * megatron/core/transformer/transformer_config.py): each offloads the
 * tensors its module saves for the backward. */
enum {
    SPACE_OFF_ATTN_NORM = 1u << 0,  /* the attention's input norm, where
                                       it is a module of its own */
    SPACE_OFF_QKV_LINEAR = 1u << 1, /* the QKV projection (with the norm
                                       Transformer Engine fuses into it) */
    SPACE_OFF_CORE_ATTN = 1u << 2,  /* the attention core */
    SPACE_OFF_ATTN_PROJ = 1u << 3,  /* the output projection (needs
                                       core_attn) */
    SPACE_OFF_MLP_NORM = 1u << 4,   /* the pre-MLP norm, where it is a
                                       module of its own */
    SPACE_OFF_EXPERT_FC1 = 1u << 5, /* the routed experts' FC1 */
    SPACE_OFF_MOE_ACT = 1u << 6,    /* the routed experts' activation and
                                       FC2 */
    SPACE_OFF_COUNT = 7
};
extern const char *const space_off_module_names[SPACE_OFF_COUNT];
/* Reads a list of module names (commas or blanks, optionally in [ ]) into
 * *mask. Returns 0, or 1 + the offset in s of the first word that is not
 * one (1 for an empty list). */
size_t space_off_modules_parse(const char *s, unsigned *mask);
/* mask's names in bit order joined by sep into buf[cap] ("" for none). */
void space_off_modules_str(unsigned mask, const char *sep, char *buf,
                           size_t cap);

/* The savers l uses, as a short tag for layout lines and search output
 * ("" for none), joined by '_': "pa" (precision-aware optimizer;
 * "pa-bf16": its moments in bf16, "pa-bf16-fp8": the first and second
 * moment apart), "oo" (optimizer offload; "oo50": half of it), "ao{N}" (N layers'
 * activations offloaded), "fo" (fine-grained offloading), "g{N}"
 * (micro-batch groups of N, interleaved layouts only). space_layout_tag
 * appends it. Returns buf. */
char *space_savers_tag(const space_layout *l, char *buf, size_t cap);

/* Whether l uses any memory saver (not counting mb_group). */
int space_layout_has_saver(const space_layout *l);

/* The interleaved schedule's micro-batch group of l: mb_group, or PP
 * where 0. */
int64_t space_mb_group(const space_layout *l);

/* Megatron-Core's CUDA graph implementations (--cuda-graph-impl,
 * NVIDIA/Megatron-LM@d98e8a64ddf3 transformer_config.py cuda_graph_impl;
 * the memory they hold: estimator/mem.c). */
typedef enum space_cuda_graph {
    SPACE_CG_NONE,           /* eager */
    SPACE_CG_LOCAL,          /* Megatron-Core's per-layer graphs
                                (cuda_graphs.py CudaGraphManager) */
    SPACE_CG_TE,             /* Transformer Engine's make_graphed_callables,
                                per layer and micro-batch (TECudaGraphHelper) */
    SPACE_CG_FULL_ITERATION, /* one graph of the forward and backward of the
                                whole step, the optimizer apart */
    SPACE_CG_COUNT
} space_cuda_graph;
extern const char *const space_cuda_graph_names[SPACE_CG_COUNT];

/* What a per-layer CUDA graph captures (CudaGraphModule, enums.py,
 * NVIDIA/Megatron-LM@d98e8a64ddf3); none: the whole layer. */
enum {
    SPACE_CGM_ATTN = 1u << 0,        /* TransformerLayer._forward_attention */
    SPACE_CGM_MLP = 1u << 1,         /* a dense layer's _forward_mlp */
    SPACE_CGM_MOE = 1u << 2,         /* an MoE layer's _forward_mlp */
    SPACE_CGM_MOE_ROUTER = 1u << 3,  /* an MoE layer up to its router, with
                                        the shared experts */
    SPACE_CGM_MOE_PREPROCESS = 1u << 4, /* MoELayer.preprocess (with
                                        moe_router) */
    SPACE_CGM_COUNT = 5
};
extern const char *const space_cgm_names[SPACE_CGM_COUNT];
/* Reads a list of CUDA graph modules (space_cgm_names; "full" alone: the
 * whole layer, 0), separated by commas or blanks, into *mask. Returns 0,
 * or 1 + the offset in s of the first word that is not one. */
size_t space_cgm_parse(const char *s, unsigned *mask);
/* The names of mask's modules joined by sep into buf[cap] ("" for none). */
void space_cgm_str(unsigned mask, const char *sep, char *buf, size_t cap);
/* The name of l's CUDA graph implementation, the first for one out of
 * range. */
const char *space_cuda_graph_name(const space_layout *l);

/* Transformer Engine's fused cross-entropy by what it keeps for the
 * backward (transformer_engine/pytorch/triton/cross_entropy.py). */
typedef enum space_ce_te {
    SPACE_CE_TE_NONE,
    SPACE_CE_TE_INPLACE, /* the gradient written into the 16-bit logits in
                            place (TE before v2.18) */
    SPACE_CE_TE_FP32,    /* the gradient in a new fp32 buffer (TE v2.18 on,
                            NVIDIA/TransformerEngine@01bbe3eea) */
    SPACE_CE_TE_COUNT
} space_ce_te;

/* The flex dispatcher's backends (Megatron-Core
 * --moe-flex-dispatcher-backend, NVIDIA/Megatron-LM@d98e8a64ddf3,
 * token_dispatcher.py _DeepepManager, _HybridEPManager). */
typedef enum space_moe_flex_backend {
    SPACE_MOE_FLEX_DEEPEP,   /* DeepEP: the received rows sorted by local
                                expert after the dispatch (permute) */
    SPACE_MOE_FLEX_HYBRIDEP, /* HybridEP: the dispatch kernel writes the
                                rows sorted by local expert and padded to
                                the fp8 alignment (no sort, no padding
                                copy) */
    SPACE_MOE_FLEX_COUNT
} space_moe_flex_backend;
extern const char *const space_moe_flex_backend_names[SPACE_MOE_FLEX_COUNT];

/* Megatron-Core's overlaps of the MoE token dispatch and combine with
 * compute (NVIDIA/Megatron-LM@d98e8a64ddf3, transformer_config.py
 * __post_init__). Each is refused where Megatron-Core refuses it
 * (est_moe_check). */
typedef enum space_moe_overlap {
    SPACE_MOE_OVERLAP_NONE,   /* every dispatch and combine exposed */
    SPACE_MOE_OVERLAP_SHARED, /* --moe-shared-expert-overlap: the shared
                                 experts run on a side stream under the
                                 dispatch (FC1) and the combine (FC2);
                                 alltoall or flex dispatcher, shared
                                 experts */
    SPACE_MOE_OVERLAP_A2A,    /* --overlap-moe-expert-parallel-comm (with
                                 --delay-wgrad-compute): the combined 1F1B
                                 schedule runs one micro-batch's forward
                                 layer beside another's backward layer,
                                 each all-to-all under the other's
                                 compute; EP > 1, alltoall or flex, no
                                 full recompute, PP > 1 only with VPP,
                                 at most one MTP layer */
    SPACE_MOE_OVERLAP_COUNT
} space_moe_overlap;
extern const char *const space_moe_overlap_names[SPACE_MOE_OVERLAP_COUNT];

/* The pipeline schedule (--pipeline-schedule). The names are the
 * command line's; torchtitan's parallelism.pipeline_parallel_schedule
 * spells them as PyTorch's get_schedule_class does
 * (torch/distributed/pipelining/schedules.py, pytorch/pytorch@00722e648b74):
 * 1F1B / Interleaved1F1B, InterleavedZeroBubble, ZBVZeroBubble, DualPipeV;
 * DualPipe is deepseek-ai/DualPipe@bb214e82 (dualpipe/dualpipe.py).
 * Megatron-Core (NVIDIA/Megatron-LM@d98e8a64ddf3) runs only the first. */
typedef enum space_pp_schedule {
    SPACE_PP_1F1B,      /* 1F1B (Narayanan et al. SC'21); interleaved 1F1B
                           with vpp > 1 (Megatron-Core's, PyTorch's
                           Schedule1F1B / ScheduleInterleaved1F1B) */
    SPACE_PP_ZB1P,      /* zero bubble ZB-H1 (Qi et al., arXiv 2401.10241,
                           section 2.1): the weight gradients delayed into
                           the drain; looped over vpp chunks (PyTorch's
                           ScheduleInterleavedZeroBubble) */
    SPACE_PP_ZBV,       /* ZB-V (arXiv 2401.10241 section 6): 2 chunks a
                           rank in a V (PyTorch ScheduleZBVZeroBubble) */
    SPACE_PP_DUALPIPE,  /* DualPipe (DeepSeek-V3, arXiv 2412.19437 section
                           3.2.1): micro-batches from both ends, each rank
                           holding stage r and stage PP - 1 - r, a forward
                           and a backward chunk overlapped */
    SPACE_PP_DUALPIPEV, /* DualPipeV: DualPipe cut in half, 2 chunks a rank
                           in a V (PyTorch ScheduleDualPipeV) */
    SPACE_PP_SCHEDULE_COUNT
} space_pp_schedule;
extern const char *const space_pp_schedule_names[SPACE_PP_SCHEDULE_COUNT];
/* l's schedule's name; "interleaved" for 1F1B with vpp > 1. */
const char *space_pp_schedule_name(const space_layout *l);
/* Whether l's schedule places its 2 chunks a rank in a V (ZBV,
 * DualPipeV: stage r and stage 2 PP - 1 - r on rank r, so rank 0 holds the
 * embedding and the LM head). */
int space_pp_schedule_v(const space_layout *l);

/* How tokens reach their experts (Megatron-Core
 * --moe-token-dispatcher-type). */
typedef enum space_moe_dispatcher {
    SPACE_MOE_ALLTOALL,  /* all-to-all over the EP group */
    SPACE_MOE_ALLGATHER, /* all-gather of every EP rank's tokens, each
                            keeping its experts' share; reduce-scatter
                            back */
    SPACE_MOE_FLEX,      /* DeepEP's fused dispatch and combine */
    SPACE_MOE_DISPATCHER_COUNT
} space_moe_dispatcher;
extern const char *const space_moe_dispatcher_names[SPACE_MOE_DISPATCHER_COUNT];

/* Effective ep and etp of a layout (0 read as 1 and as tp). */
int64_t space_layout_ep(const space_layout *l);
int64_t space_layout_etp(const space_layout *l);

/* Bytes per gradient element l accumulates and reduces: l->grad_bytes,
 * or where 0, Megatron-LM's default for l->dtype: 2 with fp16 (fp32
 * accumulation is opt-in), 4 otherwise (bf16 forces it:
 * megatron/training/arguments.py, validate_args). */
int space_grad_bytes(const space_layout *l);

/* The names of l's MoE dispatcher, dispatch overlap and flex backend
 * (space_moe_*_names), the first name for a value out of range. */
const char *space_moe_dispatcher_name(const space_layout *l);
const char *space_moe_overlap_name(const space_layout *l);
const char *space_moe_flex_backend_name(const space_layout *l);

/* The modules layout l reruns: with selective recomputation its
 * recompute_modules, or Megatron-Core's default ["core_attn"] when that
 * is 0; no bits otherwise. */
unsigned space_recompute_modules(const space_layout *l);
/* Reads a list of module names (space_rc_module_names, "up_proj" as
 * mla_up_proj), separated by commas or blanks, optionally in [ ], into
 * *mask. Returns 0, or 1 + the offset in s of the first word that is not a
 * module (and for an empty list, 1). */
size_t space_rc_modules_parse(const char *s, unsigned *mask);
/* The names of mask's modules, in bit order, joined by sep, into buf[cap]
 * ("" for none). */
void space_rc_modules_str(unsigned mask, const char *sep, char *buf,
                          size_t cap);
/* The first module of mask that m does not have (moe, moe_act without
 * experts; shared_experts without shared experts; mla_up_proj without
 * MLA; layernorm on a dense model without MLA, whose norms Transformer
 * Engine fuses into its linears), or NULL. */
const char *space_rc_modules_misfit(const space_model *m, unsigned mask);

/* Layers of pipeline rank r whose forward the backward reruns: all of
 * them with selective recomputation (either kind) and with full
 * recomputation by the uniform method, none without recomputation, and
 * with the block method recompute_layers of each of the rank's model
 * chunks (at most the chunk's layers), on the split of l. */
double space_recompute_layers(const space_model *m, const space_layout *l,
                              int64_t r);

/* The software a layout runs under, as a set of defaults for space_layout's
 * software fields (flash, tp_overlap, cp_comm, no_dp_overlap,
 * pp_scatter_gather, eager, no_pp_overlap, fp8_recipe, fp8_lib,
 * grad_bytes, param_fp32, zero3_live); explicit options override them. */
typedef enum space_framework {
    SPACE_FW_MEGATRON_CORE, /* Megatron-Core: flash attention, the backward's
                               TP collectives overlapped, CP ring, DP
                               overlapped */
    SPACE_FW_MEGATRON_2021, /* Megatron-LM of 2021 (Narayanan et al.):
                               unfused attention with the fused softmax, no
                               TP or DP overlap, pipeline scatter/gather */
    SPACE_FW_TORCHTITAN,    /* torchtitan: SDPA flash attention, DTensor TP,
                               all-gathered CP, FSDP prefetch, compiled */
    SPACE_FW_PYTORCH_FSDP,  /* PyTorch FSDP without torch.compile, as
                               llm-foundry runs it: flash attention, FSDP
                               prefetch, eager */
    SPACE_FW_DEEPSPEED_2021, /* DeepSpeed's ZeRO-3 of 2021 around Megatron-LM
                               2021's model (Narayanan et al. SC'21, section
                               5.3): Megatron-LM 2021's switches, gathers of
                               up to 1e9 parameters, ZeRO-3 */
    SPACE_FW_COUNT
} space_framework;
extern const char *const space_framework_names[SPACE_FW_COUNT];

/* Sets l's software fields to framework f's defaults, and l->framework. */
void space_framework_software(space_framework f, space_layout *l);

/* The software stack that runs a layout: what its kernels run under, as
 * far as their speed inside a training step goes (launch gaps, host
 * overhead, fused or op-by-op kernels, how communication kernels sit
 * beside them). The estimator keeps one in-training kernel efficiency per
 * stack (estimator/kernel_eff.c). */
typedef enum space_stack {
    SPACE_STACK_MEGATRON_2021,   /* Megatron-LM 2021-22: Narayanan et al.'s
                                    PTD-P, BigScience's Megatron-DeepSpeed */
    SPACE_STACK_MEGATRON_CORE,   /* Megatron-Core + Transformer Engine */
    SPACE_STACK_PYTORCH_EAGER,   /* PyTorch eager: llm-foundry's FSDP,
                                    torchtitan without torch.compile */
    SPACE_STACK_PYTORCH_COMPILED, /* torchtitan with torch.compile */
    SPACE_STACK_DEEPSPEED_2021,  /* DeepSpeed ZeRO-3 of 2021 */
    SPACE_STACK_COUNT
} space_stack;
extern const char *const space_stack_names[SPACE_STACK_COUNT];

/* l's stack: its framework's (space_layout.framework; out of range counts
 * as Megatron-Core), where a PyTorch framework (torchtitan, pytorch-fsdp)
 * is eager or compiled as l->eager says. */
space_stack space_layout_stack(const space_layout *l);

/* The ZeRO stage framework f runs when none is asked for (torchtitan,
 * PyTorch FSDP and DeepSpeed's ZeRO-3: 3), or -1 where the stage is left
 * to the search. */
int space_framework_zero(space_framework f);

/* Why a layout is not valid for a model: one row of space_reject_names
 * (and of the rule table in layout.c) each. */
typedef enum space_reject {
    SPACE_OK,
    SPACE_REJECT_SIZES,          /* a size below 1 */
    SPACE_REJECT_TP_HEADS,       /* heads % tp */
    SPACE_REJECT_TP_KV_HEADS,    /* kv heads % tp */
    SPACE_REJECT_TP_NODE,        /* tp > GPUs per node */
    /* The pipeline split (split.c), Megatron-Core's refusals: */
    SPACE_REJECT_PP_CHUNKS,      /* pp x vpp > layers + 2, no layout string:
                                    no split gives every chunk a layer's
                                    slot (the divisibility rules below
                                    refuse every split then) */
    SPACE_REJECT_SPLIT_CONFLICT, /* a layout string with other split
                                    options, or first/last layer counts with
                                    the embedding or loss accounted for */
    SPACE_REJECT_PP_LAYERS,      /* (layers + accounted) % pp */
    SPACE_REJECT_VPP_LAYERS,     /* (layers + accounted) / pp % vpp */
    SPACE_REJECT_END_VPP,        /* first or last rank's layers % vpp */
    SPACE_REJECT_MIDDLE,         /* the middle ranks' layers do not fill
                                    them evenly */
    SPACE_REJECT_MIDDLE_VPP,     /* a middle rank's layers % vpp */
    SPACE_REJECT_LAYOUT_STAGES,  /* layout stages % pp */
    SPACE_REJECT_LAYOUT_VPP,     /* vpp != layout stages / pp */
    SPACE_REJECT_LAYOUT_LAYERS,  /* the layout's E, L, t counts or places */
    SPACE_REJECT_LAYOUT_MTP,     /* the layout's m counts or places */
    SPACE_REJECT_VPP,            /* vpp > 1 with pp = 1 */
    SPACE_REJECT_VPP_MICRO,      /* interleaving: micro-batches % pp */
    SPACE_REJECT_GBS,            /* gbs % (mbs x dp) */
    SPACE_REJECT_CP_SEQ,         /* seq % (2 cp) */
    SPACE_REJECT_SP_SEQ,         /* (seq / cp) % tp with SP */
    SPACE_REJECT_SEQ_POSITIONS,  /* seq > learned positions */
    SPACE_REJECT_VPP_PP2,        /* Megatron-Core interleaving without p2p
                                    overlap on PP 2 */
    SPACE_REJECT_TP_OVERLAP_SP,  /* --tp-comm-overlap without SP */
    SPACE_REJECT_PP_SCHEDULE,    /* a pipeline schedule its framework does
                                    not run, or its chunks, PP or micro-
                                    batches not what its code requires */
    SPACE_REJECT_FP8_PARAMS,     /* fp8 parameters without ZeRO */
    /* Mixture of experts (Megatron-Core's parallel folding): */
    SPACE_REJECT_EP_DENSE,       /* ep > 1 or an etp other than tp on a
                                    dense model */
    SPACE_REJECT_EP_EXPERTS,     /* experts % ep */
    SPACE_REJECT_EP_RANKS,       /* (tp x cp x dp) % (etp x ep) */
    SPACE_REJECT_ETP_NODE,       /* etp > GPUs per node, or not dividing it */
    SPACE_REJECT_FLEX_EP,        /* the flex (DeepEP) dispatcher with
                                    etp x ep = 1 */
    SPACE_REJECT_MOE_SP,         /* MoE with tp > 1 without SP */
    /* Enumeration only (space_grid_check; space_layout_check never
     * returns these): */
    SPACE_REJECT_GPUS,           /* gpus % (tp x pp x cp): no whole DP */
    SPACE_REJECT_ETP_TP,         /* an explicit etp equal to tp where the
                                    grid also holds etp 0 (= tp): the same
                                    layout */
    SPACE_REJECT_SP_TP1,         /* SP with TP 1: the layout without SP */
    SPACE_REJECT_ZERO_DP1,       /* ZeRO with DP x CP 1: the layout without */
    SPACE_REJECT_SPLIT_NONE,     /* the balanced-ends split has no counts
                                    for this PP and VPP */
    SPACE_REJECT_SPLIT_SAME,     /* a split that puts the same layers on
                                    every chunk as one before it in the
                                    grid: the same layout */
    SPACE_REJECT_COUNT
} space_reject;
extern const char *const space_reject_names[SPACE_REJECT_COUNT];

/* Checks l against m under Megatron-LM's rules (layout.c lists them with
 * their sources); gpus_per_node (0 = unknown) keeps TP inside a node.
 * Returns SPACE_OK, or the first rule broken with a message naming the
 * values in why[cap]. */
space_reject space_layout_check(const space_model *m, const space_layout *l,
                                int gpus_per_node, char *why, size_t cap);

/* The rules of space_layout_check that read only PP, VPP and the split
 * (in its order, after those of TP, CP, DP and the experts): interleaving
 * without PP, more chunks than the layers and the embedding and loss can
 * fill, and the split's (split.c). SPACE_OK or the first broken, with why.
 * A search caches its verdict per (PP, VPP, split). */
space_reject space_layout_split_check(const space_model *m,
                                      const space_layout *l, char *why,
                                      size_t cap);

/* ---- the pipeline split (split.c) --------------------------------------
 *
 * Which transformer layers each (pipeline rank, model chunk) holds, as
 * Megatron-Core computes it (NVIDIA/Megatron-LM@d98e8a64ddf3,
 * megatron/core/transformer/transformer_block.py get_num_layers_to_build,
 * transformer_layer.py get_transformer_layer_offset,
 * pipeline_parallel_layer_layout.py): model chunk j of rank r is stage
 * k = j x PP + r, and the stages hold the layers in order. The embedding
 * is on stage 0, the LM head and the loss on the last stage (PP x VPP -
 * 1), always (pre_process, post_process: megatron/training/training.py
 * get_model); the MTP modules on the last stage, or where a custom layout
 * puts them. */

/* A layout's split, resolved once (space_split_resolve) so that any
 * chunk's layers take O(1). A plain value. */
typedef struct space_split {
    int64_t pp, vpp;          /* >= 1 */
    int64_t layers;           /* the model's transformer layers */
    int64_t mtp;              /* its MTP modules */
    /* Formula splits: layer slots of one chunk of the first rank, of a
     * middle one and of the last; the embedding's and the loss's slot
     * (embed, loss) are taken out of stage 0 and the last stage; the
     * first `extra` stages hold one slot more (only the fallback of a
     * split Megatron-Core refuses, as even as integers go). */
    int64_t first, mid, last, extra;
    int embed, loss;
    const space_pp_layout *lay; /* a custom layout: its stages instead */
} space_split;

/* One model chunk. */
typedef struct space_chunk {
    int64_t layers;     /* transformer layers */
    int64_t offset;     /* index of its first layer */
    int embedding;      /* holds the embedding */
    int head;           /* holds the final norm, LM head and loss */
    int64_t mtp;        /* MTP modules it holds */
} space_chunk;

/* Resolves l's split for m into *s and checks it under Megatron-Core's
 * rules (the split rules of space_reject; their order, values and sources
 * in split.c). Returns SPACE_OK, or the first rule broken with a message
 * naming the values in why[cap]; *s is then a fallback split (the layers
 * as even as integers go over PP x VPP stages, the embedding and the head
 * at the ends) that callers may still read. Sizes below 1 read as 1. */
space_reject space_split_resolve(const space_model *m, const space_layout *l,
                                 space_split *s, char *why, size_t cap);
/* The same for a model of `layers` transformer layers and `mtp` MTP
 * modules (all the split reads of it). */
space_reject space_split_resolve_n(int64_t layers, int64_t mtp,
                                   const space_layout *l, space_split *s,
                                   char *why, size_t cap);

/* Chunk j (0 to VPP - 1) of pipeline rank r (0 to PP - 1) of s. */
void space_split_chunk(const space_split *s, int64_t r, int64_t j,
                       space_chunk *out);

/* Transformer layers on pipeline rank r of s, all of its chunks. */
int64_t space_split_rank_layers(const space_split *s, int64_t r);

/* The most transformer layers any chunk of s holds. */
int64_t space_split_max_chunk(const space_split *s);

/* Layers the embedding and the loss add to the split where l accounts
 * for them (0 to 2). */
int space_split_accounted(const space_layout *l);

/* The same for l (resolving its split, a fallback where refused). */
int64_t space_rank_layers(const space_model *m, const space_layout *l,
                          int64_t r);

/* space_recompute_layers of rank r on the resolved split s of l. */
double space_split_recompute_layers(const space_split *s,
                                    const space_layout *l, int64_t r);

/* --decoder-first/last-pipeline-num-layers that balance the ends, the
 * search's uneven split: the middle ranks take the mean L / PP rounded up
 * to a multiple of VPP, the two end ranks (which also hold the embedding,
 * the LM head and the loss) share the rest, the first the larger half,
 * each a positive multiple of VPP. PP 1: none; PP 2: the layers shared
 * alike. Returns 1 and sets *first, *last; 0 where no such split
 * exists. */
int space_split_ends(int64_t layers, int64_t pp, int64_t vpp, int64_t *first,
                     int64_t *last);

/* Whether two resolved formula splits put the same layers on every chunk
 * (a custom layout compares by its stages). */
int space_split_same(const space_split *a, const space_split *b);

/* Parses a --pipeline-model-parallel-layout string as Megatron-Core's
 * PipelineParallelLayerLayout.parse_str_to_list does: commas dropped,
 * "(...)*N" unrolled, then "x*N", '|' between stages, E (embedding), L
 * (loss), t (transformer layer), m (MTP module). Checks the syntax only
 * (the counts are rules of space_split_resolve, which know the model).
 * Returns 0, or -1 with a message naming the character or the limit in
 * why[cap] (an unknown letter, more than SPACE_PP_LAYOUT_MAX stages or a
 * million letters once unrolled). */
int space_pp_layout_parse(const char *s, space_pp_layout *out, char *why,
                          size_t cap);

/* The split that puts st[k] transformer layers on stage k (k = chunk x
 * pp + rank, n = pp x VPP stages, summing to `layers`) into l's split
 * fields (and l->pp, l->vpp): Megatron-Core's even split, the embedding
 * and/or loss accounted for, or first/last stage counts where one of them
 * gives exactly these stages; else a layout string written into *store
 * (E on stage 0, `mtp` MTP modules and L on the last) that l points at.
 * Returns 0, or -1 where the stages do not fit (n not a multiple of pp,
 * another sum, more than SPACE_PP_LAYOUT_MAX stages, a string too long). */
int space_split_from_stages(int64_t layers, int64_t mtp, int64_t pp,
                            const int64_t *st, int n, space_layout *l,
                            space_pp_layout *store);

/* l's split for people: "" for Megatron-Core's default, else e.g.
 * "account for embedding and loss", "first 7, last 7 layers",
 * "layout Et*7|(t*8|)*14t*7L". Returns buf. */
char *space_split_str(const space_layout *l, char *buf, size_t cap);

/* ---- enumeration (grid.c) ---------------------------------------------- */

/* The fields a search chooses, in the order of the enumeration (outermost
 * first); the GPU count is outside the grid (one grid per count). */
typedef enum space_dim {
    SPACE_DIM_TP,
    SPACE_DIM_PP,
    SPACE_DIM_CP,
    SPACE_DIM_EP,   /* MoE only (dense grids: the one value 0) */
    SPACE_DIM_ETP,  /* MoE only; 0 = tp (dense grids: the one value 0) */
    SPACE_DIM_VPP,
    SPACE_DIM_SPLIT, /* space_split_kind */
    SPACE_DIM_MBS,
    SPACE_DIM_SP,
    SPACE_DIM_RECOMPUTE,
    SPACE_DIM_ZERO,
    SPACE_DIM_COUNT
} space_dim;
/* "tp", "pp", "cp", "ep", "etp", "vpp", "split", "mbs", "sp",
 * "recompute", "zero": the keys of --fix. */
extern const char *const space_dim_names[SPACE_DIM_COUNT];

/* The pipeline splits a search tries for each PP and VPP (the values of
 * SPACE_DIM_SPLIT), in the order a duplicate defers to the split before
 * it (SPACE_REJECT_SPLIT_SAME). */
typedef enum space_split_kind {
    SPACE_SPLIT_EVEN,       /* Megatron-Core's default */
    SPACE_SPLIT_EMBED,      /* --account-for-embedding-in-pipeline-split */
    SPACE_SPLIT_LOSS,       /* --account-for-loss-in-pipeline-split */
    SPACE_SPLIT_EMBED_LOSS, /* both */
    SPACE_SPLIT_ENDS,       /* --decoder-first/last-pipeline-num-layers at
                               space_split_ends's counts */
    SPACE_SPLIT_GIVEN,      /* the job's own (the request's base layout) */
    SPACE_SPLIT_KIND_COUNT
} space_split_kind;
/* "even", "embedding", "loss", "embedding+loss", "ends", "given": the
 * values of --fix split=. */
extern const char *const space_split_kind_names[SPACE_SPLIT_KIND_COUNT];

/* The split kind k as l's fields (pp_account, pp_first, pp_last; the
 * layout string left alone) for a model of `layers` transformer layers;
 * SPACE_SPLIT_ENDS without counts for l's PP and VPP marks pp_first and
 * pp_last -1 (SPACE_REJECT_SPLIT_NONE). SPACE_SPLIT_GIVEN leaves l. */
void space_split_kind_apply(space_split_kind k, int64_t layers,
                            space_layout *l);

#define SPACE_GRID_MAX 128

/* Candidate values of each field: a plain value. Layout number i of a
 * grid is the mixed-radix number whose digits index the candidate lists,
 * SPACE_DIM_TP the most significant, so the numbers run in a fixed order
 * and any range of them can be mapped to layouts independently (OpenMP
 * splits them with a static schedule). */
typedef struct space_grid {
    int64_t v[SPACE_DIM_COUNT][SPACE_GRID_MAX];
    int n[SPACE_DIM_COUNT];
    int64_t layers;  /* the model's transformer layers (the splits') */
    /* What the default lists leave out of the range a field could take
     * (the report of what the search skipped): PP values above pp_beyond
     * (0: none left out) up to the layers; VPP values above vpp_beyond
     * (0: none) up to layers / 2. */
    int64_t pp_beyond, vpp_beyond;
} space_grid;

/* The candidates Megatron-LM users pick from: TP powers of two up to
 * max_tp (a node's GPUs, unless TP may cross nodes), PP every size from 1
 * to the layers (up to max_pp and SPACE_GRID_MAX values), CP 1, 2, 4, 8,
 * virtual stages every count from 1 to half the layers (each chunk at
 * least a layer on two ranks; up to SPACE_GRID_MAX), the five pipeline
 * splits of space_split_kind but the job's own, micro-batch 1 to 16
 * sequences in powers of two, SP off and on, recompute none, selective,
 * full, ZeRO 0 and 1 (Megatron-LM's distributed optimizer). Which (PP,
 * VPP, split) Megatron-Core can run is the split rules'. For an MoE model:
 * EP the powers of two that divide the experts, up to the experts and
 * max_ep (the most GPUs searched; 0: no limit), and ETP 0 (= tp,
 * Megatron-Core's default) and 1 (the experts unsplit); a dense model's
 * EP and ETP lists are the one value 0. */
void space_grid_default(space_grid *g, const space_model *m, int64_t max_tp,
                        int64_t max_pp, int64_t max_ep);

/* Pins field d to the single value v (ZeRO 2 and 3 can only be had this
 * way). Returns 0, or -1 when v is out of the field's range (sizes >= 1,
 * ETP >= 0 (0: = tp), SP 0 or 1, recompute 0 to 2, ZeRO 0 to 3, split a
 * space_split_kind). */
int space_grid_fix(space_grid *g, space_dim d, int64_t v);

/* Layouts per GPU count: the product of the list lengths. */
int64_t space_grid_size(const space_grid *g);

/* Layout number idx of g at `gpus` GPUs: the grid's fields, the job's
 * (seq, gbs, dtype, flash, no_dp_overlap) from base, and dp = gpus / (tp
 * x pp x cp), or 0 when that does not divide. */
void space_grid_layout(const space_grid *g, int64_t idx, int64_t gpus,
                       const space_layout *base, space_layout *out);
/* The same for the layout whose digits (the candidate index of each
 * field, SPACE_DIM_TP first) are digit[SPACE_DIM_COUNT]: a scan that keeps
 * them as an odometer needs no division per layout. */
void space_grid_layout_at(const space_grid *g, const int *digit, int64_t gpus,
                          const space_layout *base, space_layout *out);

/* Digit of field d in layout number idx, and the number of layouts that
 * share every digit up to and including d (the size of the block an
 * early rule rejects at once). */
int space_grid_digit(const space_grid *g, int64_t idx, space_dim d);
int64_t space_grid_block(const space_grid *g, space_dim d);

/* space_layout_check for an enumerated layout at `gpus` GPUs: first
 * SPACE_REJECT_GPUS when tp x pp x cp does not divide the GPUs, then
 * SPACE_REJECT_ETP_TP (an etp equal to tp written out, where
 * space_grid_layout marks it as a duplicate of etp 0 by a negative etp),
 * then the rules of space_layout_check, then the two that reject a
 * duplicate (SP with TP 1, ZeRO with DP x CP 1: the same layout as
 * without). */
space_reject space_grid_check(const space_model *m, const space_layout *l,
                              int64_t gpus, int gpus_per_node, char *why,
                              size_t cap);

/* A layout's tag: n{nodes}g{gpus per node}_tp{}pp{}dp{}[cp{}][_ep{}
 * [_etp{}]]_mbs{}[_vpp{}][_sp][_rsel|_rfull[_u{N}|_b{N}]|_rop][_z1|_z2|_z3]
 * [_{space_savers_tag}]
 * (_ep{N}: the expert-parallel size of an MoE layout, one whose ep is
 * set (> 0); _etp{N}: its expert TP where it differs from tp; _u{N}: full
 * recomputation in uniform groups of N > 1 layers, _b{N}: of the first N
 * layers of each model chunk), e.g. n16g8_tp8pp4dp4_mbs2_vpp3
 * (gpus per node is the node's count, or the job's when it is smaller).
 * Returns buf. */
char *space_layout_tag(const space_layout *l, int gpus_per_node, char *buf,
                       size_t cap);

#endif
