/*
 * job.h - a training job as its user states it: the model, the job
 * (sequence, batch, tokens, precision) and every layout field and
 * software switch the user fixed, the rest unset (0 or -1) for the
 * search to choose. Plain data: the command line's options fill one
 * (lib/run.c), so do the readers of a framework's launch (launch/);
 * estimate and search read it.
 *
 * pp_layout points into the pp_layout_store of the job it was parsed
 * into: a plain copy of a job keeps pointing at the original's, which
 * must outlive it.
 */
#ifndef TP_SEARCH_JOB_H
#define TP_SEARCH_JOB_H

#include <stdint.h>

#include "space.h"
#include "tp_base.h"

/* Software fields of a layout the user set (search_job.sw_set): the
 * framework's defaults leave them alone. */
enum {
    SEARCH_SW_FLASH = 1u << 0,
    SEARCH_SW_TP = 1u << 1,
    SEARCH_SW_CP = 1u << 2,
    SEARCH_SW_DP = 1u << 3,
    SEARCH_SW_SCATTER = 1u << 4,
    SEARCH_SW_EAGER = 1u << 5,
    SEARCH_SW_PP = 1u << 6,
    SEARCH_SW_FP8 = 1u << 7,
    SEARCH_SW_GRAD = 1u << 8,      /* --accumulate-allreduce-grads-in-fp32,
                                      --grad-reduce-in-bf16 */
    SEARCH_SW_RC_METHOD = 1u << 9, /* --recompute-method given */
    SEARCH_SW_ALLOC = 1u << 10,    /* --[no-]expandable-segments, or the job's
                                      PYTORCH_CUDA_ALLOC_CONF */
    SEARCH_SW_PERMUTE = 1u << 11,  /* --[no-]moe-permute-fusion, or a job's */
    SEARCH_SW_ROUTER = 1u << 12    /* --[no-]moe-router-fusion, or a job's */
};

/* The fields are named after the options that set them (docs/trainplan.1). */
typedef struct search_job {
    int64_t seq_length;      /* 0 = unset */
    int64_t tp;              /* tensor-parallel size for vocab padding */
    int opt_nodes, opt_per_node; /* --nodes, --gpus-per-node (0 = unset) */
    /* estimate: the layout (0 or -1 = unset: searched) and the job */
    const char *model;       /* --model preset or config.json */
    int tp_set;              /* -t given */
    int64_t gpus, pp, cp, mbs, gbs, vpp_layers, vstages;
    int sp, recompute, zero, precision; /* -1 = unset */
    double tokens;           /* --tokens, 0 = unset */
    int no_overlap;          /* --no-overlap-grad-reduce */
    int tp_overlap;          /* space_tp_overlap: 0 = Megatron-LM's default */
    int pp_scatter_gather;   /* --scatter-gather-tensors-in-pipeline */
    int ce_fusion;           /* --cross-entropy-loss-fusion */
    int eager;               /* --eager */
    int no_pp_overlap;       /* --[no-]overlap-p2p-communication */
    int fp8_recipe;          /* --fp8-recipe: space_fp8_recipe */
    int fp8_params;          /* --fp8-param-gather */
    int fp8_attention;       /* --fp8-dot-product-attention */
    int alloc_expandable;    /* --[no-]expandable-segments (SEARCH_SW_ALLOC) */
    int n_docs;              /* --doc-length: packed documents' buckets */
    int64_t doc_len[SPACE_MAX_DOC_BUCKETS];
    double doc_share[SPACE_MAX_DOC_BUCKETS];
    int cp_comm;             /* space_cp_comm: 0 = p2p ring */
    int attn_backend;        /* --attention-backend: space_attn */
    int framework;           /* space_framework: the software's defaults */
    int grad_bytes;          /* 4: --accumulate-allreduce-grads-in-fp32,
                                2: --grad-reduce-in-bf16 (with SEARCH_SW_GRAD) */
    int recompute_method;    /* space_recompute_method (SEARCH_SW_RC_METHOD) */
    int64_t recompute_layers; /* --recompute-num-layers, 0 = unset */
    unsigned recompute_modules; /* --recompute-modules: SPACE_RC_* bits,
                                   0 = unset (Megatron-Core's core_attn) */
    /* mixture of experts (issue 19) */
    int64_t ep, etp;         /* --ep, --etp; 0 = unset (searched) */
    int moe_dispatcher;      /* --moe-dispatcher: space_moe_dispatcher */
    double moe_imbalance;    /* --moe-imbalance, >= 1; 0 = unset */
    int moe_comm_overlap;    /* --moe-comm-overlap: space_moe_overlap */
    int pp_schedule;         /* --pipeline-schedule: space_pp_schedule */
    int pp_schedule_set;     /* --pipeline-schedule given: search keeps it
                                and tries no other */
    int moe_router_pad;      /* --moe-router-padding: 1 */
    int moe_flex_backend;    /* --moe-flex-backend: space_moe_flex_backend */
    int fp8_act_cache;       /* --fp8-activation-cache: space_fp8_act_cache */
    /* the pipeline split (Megatron-LM's options; split.c) */
    int split_set;           /* any of them given (or a job file read):
                                the split is not searched */
    int pp_account;          /* SPACE_PP_EMBED | SPACE_PP_LOSS */
    int64_t pp_first, pp_last; /* --decoder-first/last-pipeline-num-layers,
                                  0 = unset */
    const space_pp_layout *pp_layout; /* --pipeline-model-parallel-layout,
                                         parsed into pp_layout_store of
                                         these options (or of the ones
                                         copied from); NULL = none */
    space_pp_layout pp_layout_store;
    int moe_permute_fusion;  /* --[no-]moe-permute-fusion (SEARCH_SW_PERMUTE) */
    int moe_router_fusion;   /* --[no-]moe-router-fusion (SEARCH_SW_ROUTER) */
    int fsdp_double_buffer;  /* --fsdp-double-buffer */
    int cuda_graph;          /* --cuda-graph-impl: space_cuda_graph */
    unsigned cuda_graph_modules; /* --cuda-graph-scope: SPACE_CGM_* bits */
    int cuda_graph_scope_set; /* --cuda-graph-scope given */
    int cuda_graph_set;      /* --cuda-graph-impl given (or read from a job):
                                search keeps it, and tries no graphs */
    int ce_te;               /* a job's --cross-entropy-fusion-impl te:
                                space_ce_te */
    unsigned sw_set;         /* SEARCH_SW_* bits: software fields set by an
                                option, which the framework leaves alone */
    double attn_dropout, hidden_dropout; /* < 0 = the model's */
    int from_launch;         /* read from a framework's launch (launch/):
                                a switch it sets that the model does not
                                use is not the user's error */
    /* memory savers and micro-batch groups (issue 28; space/savers.c) */
    int pa_optimizer;        /* --use-precision-aware-optimizer */
    int main_grads_dtype;    /* --main-grads-dtype: space_opt_dtype */
    int main_params_dtype;   /* --main-params-dtype */
    int exp_avg_dtype;       /* --exp-avg-dtype */
    int exp_avg_sq_dtype;    /* --exp-avg-sq-dtype */
    int opt_offload;         /* --optimizer-cpu-offload */
    double opt_offload_fraction; /* --optimizer-offload-fraction, 0 = unset
                                    (1, Megatron-LM's default) */
    int opt_offload_overlap; /* --overlap-cpu-optimizer-d2h-h2d */
    int64_t act_offload_layers; /* --cpu-offloading-num-layers, 0 = off */
    int fine_grained;        /* --fine-grained-activation-offloading */
    unsigned offload_modules; /* --offload-modules: SPACE_OFF_* bits */
    double offload_fraction; /* --activation-offload-fraction, < 0 = unset */
    int64_t mb_group;        /* --microbatch-group-size-per-virtual-pipeline-
                                stage, 0 = unset (PP) */
} search_job;

/* A job with nothing fixed: every field unset (0, or -1 where 0 is a
 * value), TP 1 (the command line's defaults). */
void search_job_init(search_job *j);
/* The job's model: given (a model read from a job file) or j->model
 * resolved (a preset or a config.json), with j's dropout overrides.
 * TP_OK, or the resolver's status with its message in e. */
int search_job_model(const search_job *j, const space_model *given,
                     space_model *m, tp_err *e);
/* The layout job j asks for (estimate's, and the job of search --near),
 * SEARCH_UNSET where unset, after the checks below; TP_EUSAGE for fields
 * that do not fit together or with model m. */
int search_job_layout(const search_job *j, const space_model *m,
                      space_layout *l, tp_err *e);
/* l's pipeline split from j (pp_account SEARCH_UNSET where none is given:
 * searched), and VPP from a layout string where PP is known; TP_EUSAGE
 * where the string's stages do not fit PP x VPP. */
int search_job_split(const search_job *j, space_layout *l, tp_err *e);
/* The software switches of j on l: the framework's defaults, then what
 * the user set (sw_set), the documents, the memory savers. */
void search_job_software(const search_job *j, space_layout *l);
/* The ZeRO stage asked for, else the framework's (-1: searched). */
int search_job_zero_stage(const search_job *j);

/* The checks, each TP_OK or TP_EUSAGE naming the option, its value and
 * the range:
 * - recompute: --recompute-method and --recompute-num-layers against the
 *   granularity asked for and m's layers;
 * - docs: --doc-length's documents fit in --seq-length;
 * - mech: Megatron-Core's memory mechanisms (--cuda-graph-impl and
 *   --cuda-graph-scope, --fsdp-double-buffer, --moe-permute-fusion,
 *   --moe-router-fusion) against the framework and m;
 * - moe: --ep, --etp and --moe-imbalance against m (expert parallelism on
 *   a dense model, EP not dividing the experts, an imbalance beyond
 *   experts / top-k, what one expert can receive at most);
 * - savers: the memory savers and micro-batch groups as Megatron-LM's
 *   start-up checks them (est_saver_check has the layout's rules). */
int search_job_check_recompute(const search_job *j, const space_model *m,
                               tp_err *e);
int search_job_check_docs(const search_job *j, tp_err *e);
int search_job_check_mech(const search_job *j, const space_model *m,
                          tp_err *e);
int search_job_check_moe(const search_job *j, const space_model *m,
                         tp_err *e);
int search_job_check_savers(const search_job *j, const space_model *m,
                            tp_err *e);

#endif
