/*
 * launch_int.h - what the files of launch/ share and nobody else may use
 * (as SQLite's btreeInt.h beside btree.h): the tables and helpers a
 * framework's writer and reader have in common, and the pieces of a reader
 * or of the shell expander split over two files. The public interface is
 * launch.h.
 */
#ifndef TP_LAUNCH_INT_H
#define TP_LAUNCH_INT_H

#include <stddef.h>
#include <stdint.h>

#include "launch.h"

/* ---- Megatron-LM: the flags the reader reads (launch_megatron_flags.c,
 * read by launch_megatron_read.c) ---------------------------------------- */

/* The flags the reader understands, and whether each takes a value
 * (every other flag is skipped with the word after it when that word is
 * not a flag). Names as arguments.py at d98e8a6. */
typedef enum {
    F_NUM_LAYERS, F_HIDDEN, F_FFN, F_HEADS, F_GQA, F_QUERY_GROUPS,
    F_KV_CHANNELS, F_MAX_POS, F_POS_TYPE, F_NORM, F_SWIGLU, F_SQRELU,
    F_QGEGLU, F_UNTIE, F_NO_BIAS, F_QKV_BIAS, F_ATTN_DROP, F_HIDDEN_DROP,
    F_VOCAB, F_TOKENIZER, F_SEQ, F_TP, F_PP, F_CP, F_VSTAGES, F_VLAYERS,
    F_LAYOUT, F_FIRST_LAYERS, F_LAST_LAYERS, F_ACCOUNT_EMBED, F_ACCOUNT_LOSS,
    F_SP, F_MBS, F_GBS,
    F_RC_GRAN, F_RC_METHOD, F_RC_LAYERS, F_RC_ACTIVATIONS, F_RC_MODULES,
    F_DISTOPT,
    F_MFSDP, F_SHARDING, F_TORCH_FSDP2, F_BF16, F_FP16, F_FP8_FORMAT,
    F_FP8_RECIPE, F_FP8_PARAMS, F_FP4_FORMAT, F_FP4_RECIPE, F_FP4_PARAMS,
    F_TP_OVERLAP, F_CP_COMM, F_CE_FUSION,
    F_ATTN_BACKEND, F_FLASH_ATTN, F_OVERLAP_GRAD, F_OVERLAP_PARAM,
    F_NO_P2P_OVERLAP, F_GRAD_BF16, F_GRAD_FP32, F_TRAIN_ITERS, F_TRAIN_SAMPLES,
    F_NNODES,
    F_NPROC, F_EXPERTS, F_MOE_TOPK, F_MOE_FFN, F_MOE_SHARED, F_MOE_SHARED_GATE,
    F_MOE_FREQ, F_MOE_SCORE, F_MOE_GROUPS, F_MOE_GROUP_TOPK, F_MOE_CAPACITY,
    F_EP, F_ETP, F_MOE_DISPATCHER, F_MLA, F_Q_LORA, F_KV_LORA, F_QK_HEAD,
    F_QK_POS, F_V_HEAD, F_QK_NORM, F_MTP, F_MOE_SHARED_OVERLAP,
    F_MOE_A2A_OVERLAP, F_DELAY_WGRAD, F_MOE_FLEX_BACKEND, F_MOE_ROUTER_PAD,
    F_MOE_ROUTER_PAD_FP8,
    /* memory savers and micro-batch groups (issue 28) */
    F_PA_OPT, F_MAIN_GRADS, F_MAIN_PARAMS, F_EXP_AVG, F_EXP_AVG_SQ,
    F_OPT_OFFLOAD, F_OPT_OFFLOAD_FRAC, F_OPT_OFFLOAD_OVERLAP,
    F_TORCH_OPT_OFFLOAD, F_CPU_OFFLOAD_LAYERS, F_CPU_OFFLOADING,
    F_FG_OFFLOAD, F_OFFLOAD_MODULES, F_OFFLOAD_FRAC, F_MB_GROUP,
    F_MOE_PERMUTE, F_MOE_ROUTER, F_FSDP_DB, F_NCCL_UB,
    F_FSDP_MAXPOOL, F_FSDP_GRADS, F_CG_IMPL, F_CG_MODULES, F_CG_SCOPE,
    F_CG_ENABLE, F_CG_EXTERNAL, F_CE_IMPL,
    /* RoPE, local attention, sinks (issue 31) */
    F_ROTARY_PCT, F_ROTARY_BASE, F_WINDOW, F_WINDOW_SKIP, F_SOFTMAX_TYPE,
    F_COUNT
} mg_flag;

/* A flag the reader reads: its name, and whether it takes one value. */
struct launch_mg_flag {
    const char *name;
    int value; /* takes one value */
};
extern const struct launch_mg_flag launch_mg_flags[F_COUNT];

typedef struct mg_seen {
    const char *v[F_COUNT]; /* the value, or "" for a flag; NULL: absent */
    int line[F_COUNT];
} mg_seen;

/* The index of a flag's name ("--nproc_per_node" is --nproc-per-node),
 * or -1 when the reader does not read it. */
int launch_mg_flag_of(const char *name);
/* Flag f's value, when the file gives it, into *out: a whole number in
 * [lo, hi], a probability in [0, 1], a number in [lo, hi]; TP_EDATA naming
 * the file, line, flag and range otherwise. Absent: *out untouched. */
int launch_mg_seen_int(const mg_seen *s, int f, const char *file, long long lo,
                       long long hi, int64_t *out, tp_err *e);
int launch_mg_seen_prob(const mg_seen *s, int f, const char *file, double *out,
                        tp_err *e);
int launch_mg_seen_num(const mg_seen *s, int f, const char *file, double lo,
                       double hi, double *out, tp_err *e);
/* s->v[f] is one of names[0..n-1] (NULL entries skipped): its index, else
 * -1 with TP_EDATA listing them. */
int launch_mg_seen_choice(const mg_seen *s, int f, const char *file,
                          const char *const *names, int n, tp_err *e);
/* The model's RoPE share and base, local-attention window and period and
 * softmax sinks (m->pos already read); its MoE and MLA flags: into m, with
 * Megatron-LM's defaults where absent. TP_OK or TP_EDATA. */
int launch_mg_read_attention_kind(const mg_seen *s, const char *file,
                                  space_model *m, tp_err *e);
int launch_mg_read_moe_mla(const mg_seen *s, const char *file, space_model *m,
                           tp_err *e);

/* ---- NeMo: the names the writers (launch_nemo.c, launch_nemo1.c) and the
 * reader (launch_nemo_read.c) share ---------------------------------------- */

/* The base recipes trainplan's presets run on (launch_nemo.c says which). */
struct launch_nemo_recipe {
    const char *preset, *recipe, *file;
    int comm_overlap;
};
enum { LAUNCH_NEMO_RECIPE_COUNT = 7 };
extern const struct launch_nemo_recipe launch_nemo_recipes[];
/* What the overrides name for a comm_overlap the recipe left None: Bridge
 * instantiates a dict override with a _target_ (training/utils/
 * omegaconf_utils.py _apply_overrides); without one the "++comm_overlap.*"
 * keys make comm_overlap a plain dict, which ConfigContainer.validate()
 * fails on ('dict' object has no attribute 'data_parallel_size',
 * training/config.py). Not written where the recipe set one: the
 * converted dataclass would be rebuilt from a dict, its
 * tp_comm_overlap_cfg a dict too. */
#define LAUNCH_NEMO_COMM_OVERLAP_TARGET \
    "megatron.bridge.training.comm_overlap.CommOverlapConfig"
#define LAUNCH_NEMO_GENERIC_RECIPE "vanilla_gpt_pretrain_config"

/* Mixed-precision recipes for each fp8 scaling (launch_nemo.c). */
struct launch_nemo_mp {
    const char *name;
    int fp8_params, bf16_first_last;
};
extern const struct launch_nemo_mp launch_nemo_mp_fp8[SPACE_FP8_RECIPE_COUNT];
/* GPTModelProvider's activation and gated_linear_unit for each space_act. */
struct launch_nemo_act {
    const char *func;
    int glu;
};
extern const struct launch_nemo_act launch_nemo_act[SPACE_ACT_COUNT];

/* "true" or "false"; x as "KEY SEP x\n" in the fewest digits that read
 * back to the same double; the model's head dimension. */
const char *launch_nemo_tf(int v);
void launch_nemo_put_num(launch_text *b, const char *key, const char *sep,
                         double x);
int64_t launch_nemo_head_dim_of(const space_model *m);
/* The NeMo 1.x form of c's job (launch_nemo1.c). */
void launch_nemo1_write(const launch_plan *c, launch_text *b);

/* ---- NeMo: the keys the reader reads (launch_nemo_keys.c), their values
 * read into the job by launch_nemo_read.c ----------------------------------- */

/* What a key sets. */
typedef enum nemo_kid {
    K_TP, K_PP, K_VPP, K_LAYOUT, K_ACC_EMBED, K_ACC_LOSS, K_PP_FIRST,
    K_PP_LAST, K_CP, K_CP_COMM, K_SP, K_MBS, K_GBS,
    K_SEQ_MODEL, K_SEQ_DATA, K_RC_GRAN, K_RC_METHOD, K_RC_LAYERS, K_RC_MODULES,
    K_MP, K_FP8_PARAMS, K_FP8_DPA, K_DISTOPT, K_FSDP, K_SHARD, K_DP_OVERLAP,
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

/* The keys, each once (a key's name for a message: the row of its id). */
extern const nemo_key launch_nemo_keys[];
extern const int launch_nemo_key_count;
/* The dtype and fp8 recipe of each mixed-precision recipe the reader
 * knows, and the space_opt_dtype of each optimizer-state dtype name: by
 * the index of the name a key gave. */
struct launch_nemo_mp_meaning {
    int dtype, fp8;
};
extern const struct launch_nemo_mp_meaning launch_nemo_mp_meaning[];
extern const int launch_nemo_odtype_of[];

/* key=value (or key: value) into r; TP_EDATA naming file:ln and the key
 * for a key trainplan does not read or a bad value. */
int launch_nemo_read_item(nemo_read *r, const char *key, const char *val,
                          const char *file, int ln, tp_err *e);
/* The words of a launch script's torchrun ... run_recipe.py command:
 * nodes, GPUs per node, recipe, overrides. */
int launch_nemo_read_command_sh(nemo_read *r, const launch_sh_word *w, int n,
                                const char *file, tp_err *e);
/* Whether text is a shell script running torchrun ... run_recipe.py. */
int launch_nemo_is_launch_script(const char *text);
/* One line of overrides or YAML (s modified in place) into r. */
int launch_nemo_read_line(nemo_read *r, char *s, const char *file, int ln,
                          tp_err *e);

/* ---- torchtitan: the presets it has (launch_torchtitan.c), which the
 * reader (launch_torchtitan_read.c) reads a model name and flavor back to --- */

struct launch_tt_model {
    const char *preset, *name, *flavor, *recipe;
};
enum { LAUNCH_TT_MODEL_COUNT = 5 };
extern const struct launch_tt_model launch_tt_models[];


/* ---- the shell expander: launch_shell_expand.c (storage, state, expansion,
 * variables) for launch_shell.c (lexer, commands) ----------------------------- */

enum { SH_WHY_MAX = 400, SH_MAX_WORDS = 200000, SH_MAX_DEPTH = 64 };

typedef struct wvec {
    launch_sh_word *w;
    int n, cap;
} wvec;


typedef struct sh_var {
    char name[64];
    int set, array, exported;
    wvec el; /* the elements (one for a string) */
} sh_var;

/* A text under construction. */
typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;


/* ---- the interpreter's state ------------------------------------------ */

enum { M_RUN, M_UNK, M_SKIP }; /* a command runs, may run, does not */

enum { FR_IF, FR_LOOP, FR_CASE, FR_FUNC, FR_BRACE, FR_PAREN };

typedef struct frame {
    int type, mode, line;
    int taken;   /* FR_IF: a branch ran: 1 surely, 0 not, -1 maybe */
    int cond;    /* FR_IF: reading a condition (1), or skipping one (2) */
    int header;  /* FR_LOOP before `do`; FR_CASE reading a pattern */
    int brace;   /* FR_FUNC: its body's { seen */
} frame;

typedef struct sh_state {
    launch_sh *sh;
    const char *file;
    sh_var *vars;
    int nv, capv;
    frame fr[SH_MAX_DEPTH];
    int nfr;
    int chain_op;     /* the && or || before this command, 0 otherwise */
    int chain_status; /* 1 true, 0 false, -1 unknown */
    int stop;         /* `exit` ran */
    int sourced;      /* a `source`, `.` or `eval` was run */
    tp_err *e;
    int rc;
} sh_state;


/* Every string of a script lives in its pool, freed by launch_sh_free:
 * s (allocated) added; a copy of s[0..n); a formatted message. */
char *launch_sh_pool_add(launch_sh *sh, char *s);
char *launch_sh_pool_strndup(launch_sh *sh, const char *s, size_t n);
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
const char *launch_sh_pool_printf(launch_sh *sh, const char *fmt, ...);
/* x appended to v; n bytes of s, or c, appended to b (NUL-terminated). */
void launch_sh_wvec_push(wvec *v, launch_sh_word x);
void launch_sh_sb_putn(sbuf *b, const char *s, size_t n);
void launch_sh_sb_putc(sbuf *b, char c);
/* M_RUN, M_UNK or M_SKIP: whether a command under frames [0, upto) runs;
 * the line of the innermost frame that may not run, 0 when none. */
int launch_sh_mode_of(const sh_state *st, int upto);
int launch_sh_unk_line(const sh_state *st);
/* The variable name[0..n): NULL when not set (var_find), added when
 * missing (var_get). */
sh_var *launch_sh_var_find(sh_state *st, const char *name, size_t n);
sh_var *launch_sh_var_get(sh_state *st, const char *name, size_t n);
/* The end of a ${...}, $(...) or `...` starting at p (on its opening
 * character), or NULL when it does not end. Quotes inside are skipped. */
const char *launch_sh_match_close(const char *p, const char *end, char open,
                                  char close);
/* The fields of raw word [p, end) appended to out. */
void launch_sh_expand_word(sh_state *st, const char *p, const char *end,
                           int line, int nosplit, wvec *out);
/* Sets v to the words of w (a string when !array). */
void launch_sh_var_assign(sh_state *st, sh_var *v, const wvec *w, int array,
                          int append, int line);
/* [p, end) is NAME=, NAME+= (or NAME[...]= ...): the name's length and
 * where its value starts, or 0. */
size_t launch_sh_assignment_name(const char *p, const char *end, int *append,
                                 const char **value, int *indexed);

#endif
