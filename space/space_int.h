/*
 * space_int.h - internals shared by the files of space/, not part of its
 * public header (space.h): the HuggingFace config.json tables that
 * hftables.c holds and hfconfig.c reads with (the keys of each quantity,
 * in priority order, and what each model_type implies).
 */
#ifndef TP_SPACE_INT_H
#define TP_SPACE_INT_H

#include "space.h"

/* ---- Keys. Each table mirrors an enum, rows in the enum's order. */

enum hf_int {
    HI_LAYERS,
    HI_HIDDEN,
    HI_HEADS,
    HI_KV_HEADS,
    HI_HEAD_DIM,
    HI_V_HEAD_DIM,
    HI_FFN,
    HI_VOCAB,
    HI_MAX_POS,
    HI_EXPERTS,
    HI_TOP_K,
    HI_MOE_FFN,
    HI_SHARED_FFN,
    HI_N_SHARED,
    HI_FIRST_DENSE,
    HI_MOE_FREQ,
    HI_SPARSE_STEP,
    HI_INTERLEAVE,
    HI_FFN_MLP,
    HI_Q_LORA,
    HI_KV_LORA,
    HI_QK_NOPE,
    HI_QK_ROPE,
    HI_N_GROUP,
    HI_TOPK_GROUP,
    HI_WINDOW,
    HI_CHUNK,
    HI_PATTERN,
    HI_MTP,
    HI_COUNT
};

#define HF_MAX_KEYS 6

typedef struct hf_int_row {
    const char *what;  /* in "missing ..." messages */
    const char *range; /* the space_model member whose limits apply */
    int64_t lo;        /* smallest value accepted in a file */
    const char *keys[HF_MAX_KEYS]; /* priority order, NULL-terminated */
} hf_int_row;

extern const hf_int_row space_hf_ints[HI_COUNT];

enum hf_bool {
    HB_TIED,
    HB_QKV_BIAS,
    HB_OUT_BIAS,
    HB_MLP_BIAS,
    HB_PARALLEL,
    HB_MULTI_QUERY,
    HB_NEW_DECODER,
    HB_ALIBI,
    HB_USE_SLIDING,
    HB_LM_HEAD_BIAS,
    HB_COUNT
};

extern const char *const space_hf_bools[HB_COUNT][HF_MAX_KEYS];

enum hf_str {
    HS_MODEL_TYPE,
    HS_ACT,
    HS_POS_TYPE,
    HS_NAME,
    HS_SCORING,
    HS_TOPK_METHOD,
    HS_COUNT
};

extern const char *const space_hf_strs[HS_COUNT][HF_MAX_KEYS];

enum hf_num {
    HN_RMS_EPS,
    HN_LN_EPS,
    HN_ATTN_DROP,
    HN_HIDDEN_DROP,
    HN_ATTN_SOFTCAP,
    HN_FINAL_SOFTCAP,
    HN_ROTARY_FRAC,
    HN_ROTARY_DIM,
    HN_ROPE_THETA,
    HN_COUNT
};

typedef struct hf_num_row {
    double lo, hi;
    const char *keys[HF_MAX_KEYS];
} hf_num_row;

extern const hf_num_row space_hf_nums[HN_COUNT];

/* ---- What each model_type implies when its config is silent: the
 * defaults of transformers' config class, and what its modelling code
 * hard-wires (Qwen2's q, k, v biases; GPT-2's 4h FFN). */
typedef struct hf_type {
    const char *model_type;
    int gated;             /* FFN with a gate: 3 GEMMs */
    const char *act;       /* default hidden_act */
    space_norm norm;       /* when neither epsilon key is present */
    space_pos pos;
    int qkv_bias, out_bias, mlp_bias;
    int parallel;          /* attention and FFN in parallel */
    int tied;              /* default of tie_word_embeddings */
    int ffn_4h;            /* FFN size defaults to 4 x hidden */
    int64_t max_position;  /* default context; 0: the config must say */
    int embed_norm;        /* a norm on the embedding output (BLOOM's
                              word_embeddings_layernorm, which no config
                              key switches) */
} hf_type;

/* ---- What each model_type's modelling code has that no config key
 * switches (transformers' modeling_*.py). Types without a row have none of
 * it. */
typedef struct hf_arch {
    const char *model_type;
    int qk_norm;          /* space_model.qk_norm */
    int post_norms;       /* four norms a layer */
    int attn_sinks;
    int router_bias;      /* a bias on the router GEMM */
    int router_sigmoid;
    int shared_gate;      /* a sigmoid gate on the shared expert */
    int layernorm;        /* LayerNorm although the config says rms_norm_eps */
    int window_switch;    /* sliding_window only with use_sliding_window */
    int window_chunked;   /* the local window is chunked (attention_chunk_size) */
    int llama4_ffn;       /* intermediate_size is the experts' (and the one
                             shared expert's); intermediate_size_mlp the
                             dense layers' */
    int64_t global_every; /* default local/global period with a window */
    int64_t vocab;        /* the config class's vocab_size where a config
                             leaves it out (Gemma 3 27B's text_config
                             does); 0: the config must say */
    int64_t max_position; /* the same for max_position_embeddings */
} hf_arch;

/* The row of model_type (case-insensitive) in the model_type table, or
 * space_hf_generic's defaults for one it does not list. */
const hf_type *space_hf_type_find(const char *model_type);
/* PretrainedConfig's defaults, for a model_type of no row. */
extern const hf_type space_hf_generic;

/* The row of model_type in the modelling-code table, or
 * space_hf_arch_none (nothing hard-wired). */
const hf_arch *space_hf_arch_find(const char *model_type);
extern const hf_arch space_hf_arch_none;

#endif
