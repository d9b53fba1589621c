/*
 * space_layout.h - what a layout is: one way to lay out a training job
 * in Megatron-LM's terms (space_layout, a plain value), the names of its
 * options, the software that runs it (frameworks, stacks) and which
 * layouts are valid for a model (space_reject, space_layout_check;
 * layout.c, model.c). Included by space.h: include that one.
 */
#ifndef TP_SPACE_LAYOUT_H
#define TP_SPACE_LAYOUT_H

#include <stdint.h>
#include "space_model.h"

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

/* What an fp8 run keeps of its activations for the backward, beyond the
 * fp8 GEMM inputs both keep (estimator/mem_act.c). */
typedef enum space_fp8_act_cache {
    SPACE_FP8_ACT_TE,          /* Transformer Engine under Megatron-Core:
                                  flash attention's 16-bit output beside
                                  the output projection's fp8 copy; the
                                  SwiGLU's 16-bit input and FC2's fp8
                                  input */
    SPACE_FP8_ACT_DEEPSEEK_V3, /* DeepSeek-V3's framework (arXiv 2412.19437
                                  section 3.3.3, "Low-Precision
                                  Activation"): the attention output once,
                                  in E5M6; the MoE experts' SwiGLU input in
                                  fp8, its output recomputed */
    SPACE_FP8_ACT_COUNT
} space_fp8_act_cache;
extern const char *const space_fp8_act_cache_names[SPACE_FP8_ACT_COUNT];

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
    int fp8_act_cache; /* space_fp8_act_cache, with dtype HW_FP8; 0:
                          Transformer Engine's */
    int fp8_params;    /* Transformer Engine fp8 weights as the parameters
                          (Megatron-LM --fp8-param-gather): one byte each in
                          memory and in the distributed optimizer's
                          all-gather; 0: 16-bit parameters */
    int fp8_attention; /* Transformer Engine's fp8 dot-product attention
                          (Megatron-Core TransformerConfig
                          .fp8_dot_product_attention, NeMo's FP8_DPA): the
                          fused attention in fp8, with dtype HW_FP8 or
                          HW_FP4; its time the 16-bit kernel's times the
                          GPU's measured ratio (hwdb fp8_attention) */
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
    int ckpt_full_rerun; /* PyTorch's activation checkpoint reruns the
                          whole block in the backward, as the non-reentrant
                          checkpoint of PyTorch before 2.1 did; 0: it stops
                          once the tensors the backward needs are rebuilt
                          (set_checkpoint_early_stop, on by default since
                          2.1), skipping the block's last GEMM and add
                          (estimator/iter_layer.c) */
    int launch_blocking; /* CUDA_LAUNCH_BLOCKING=1: every kernel launch
                          returns once its kernel has run, so the host never
                          runs ahead and the GPU idles for all of the host's
                          time (estimator/host.c; BigScience on Jean Zay);
                          0: asynchronous launches */
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
    int sac_attn_recompute; /* torchtitan's per-op selective checkpointing
                          recomputes the attention in the backward: SDPA
                          ran its cuDNN kernel, which the policy's save
                          list did not name, so the op was PREFER_RECOMPUTE
                          (torchtitan on compute capability 10.x from
                          pytorch/torchtitan@3b85aa31f, #1196, 2025-05-14,
                          to b39377f9f, #2095, 2025-12-01, which adds
                          _scaled_dot_product_cudnn_attention to the list;
                          estimator/mem_act.c); 0: its output kept */
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

/* Whether l runs its attention in fp8: fp8_attention asked, in an fp8 or
 * fp4 layout (Transformer Engine's FP8 dot-product attention runs inside
 * its fp8 autocast; in 16 bits the flag does nothing). */
int space_fp8_attention(const space_layout *l);

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

#endif
