/*
 * table.c - the command line's two tables: its subcommands (lib_commands,
 * which run.c dispatches) and its options (lib_options, one row each:
 * name, id, metavariable, the commands that take it, its help), and what
 * is generated from them: --help and `trainplan COMMAND --help`
 * (lib_usage), the option names the library checks a request against
 * (lib_option_kind, lib_option_name) and the bash completion script
 * (`trainplan completion bash`). Parsing argv is run.c's.
 */
#include "lib_int.h"
#include "table.h"

#include <stdio.h>
#include <string.h>

#ifndef TRAINPLAN_VERSION
#define TRAINPLAN_VERSION "0.0.0"
#endif

/* ---- subcommands ----------------------------------------------------- */


static int cmd_completion(const lib_opts *o, emit_out *out, tp_err *e);

const lib_command lib_commands[] = {
    {"model", "list", CMD_MODEL_LIST, 0, 0, "",
     "list the built-in model presets", cmd_model_list, 0, ARGS_NAMES},
    {"model", "show", CMD_MODEL_SHOW, 1, 1, "NAME|config.json",
     "architecture, parameter counts and FLOPs per token of a model",
     cmd_model_show, 0, ARGS_MODEL},
    {"hw", "list", CMD_HW_LIST, 0, 0, "",
     "list the GPUs and systems of the hardware database", cmd_hw_list, 0,
     ARGS_NAMES},
    {"hw", "show", CMD_HW_SHOW, 1, 1, "NAME",
     "every number of a GPU or system, with its source", cmd_hw_show, 0,
     ARGS_NAMES},
    {"hw", "check", CMD_HW_CHECK, 1, 64, "FILE...",
     "validate GPU or system files and list every problem", cmd_hw_check, 0,
     ARGS_FILES},
    {"hw", "import-nccl-tests", CMD_HW_IMPORT, 1, 256, "-o DIR LOG...",
     "add measured collective tables from nccl-tests logs to hwdb DIR",
     cmd_hw_import_nccl_tests, 1, ARGS_FILES},
    {"op", "predict", CMD_OP_PREDICT, 0, 0, "",
     "fit on --train samples only, predict --shapes (seed CSV format)",
     cmd_op_predict, 0, ARGS_NAMES},
    {"op", "show", CMD_OP_SHOW, 0, 0, "",
     "roofline vs fitted time of one operator shape, and its samples",
     cmd_op_show, 0, ARGS_NAMES},
    {"op", "cv", CMD_OP_CV, 0, 0, "",
     "k-fold and extrapolation error of every fitted operator of a GPU",
     cmd_op_cv, 0, ARGS_NAMES},
    {"coll", "show", CMD_COLL_SHOW, 0, 0, "",
     "time of a collective: analytical, measured, and which is used",
     cmd_coll_show, 0, ARGS_NAMES},
    {"coll", "cv", CMD_COLL_CV, 0, 0, "",
     "error of the analytical model against every measured table of a system",
     cmd_coll_cv, 0, ARGS_NAMES},
    {"estimate", "", CMD_ESTIMATE, 0, 0, "",
     "time, memory and cost of one iteration of a layout (unset fields: "
     "the fastest)",
     cmd_estimate, 0, ARGS_NAMES},
    {"search", "", CMD_SEARCH, 0, 0, "",
     "every valid layout up to --max-gpus: ranked, Pareto front of time "
     "against cost, launch lines",
     cmd_search, 0, ARGS_NAMES},
    /* issue 7: -o of sweep is its own append-only, resumable file (kept
     * in out_dir), not emit/out.c's temporary file */
    {"sweep", "", CMD_SWEEP, 1, 1, "SPEC.json",
     "the search of every scenario of a spec, one JSON Lines record each "
     "(resumable, shardable, MPI)",
     cmd_sweep, 1, ARGS_FILES},
    {"merge", "", CMD_MERGE, 1, 4096, "FILE...",
     "shard outputs of one sweep into the file one process writes",
     cmd_merge, 0, ARGS_FILES},
    {"diff", "", CMD_DIFF, 2, 2, "OLD.jsonl NEW.jsonl",
     "scenarios whose best layout, time or cost changed between two sweeps "
     "(exit 3 if any)",
     cmd_diff, 0, ARGS_FILES},
    {"completion", "bash", CMD_COMPLETION, 0, 0, "",
     "a bash completion script generated from the option table (source "
     "it, or install it as bash-completion/completions/trainplan)",
     cmd_completion, 0, ARGS_NAMES},
};
#define N_COMMANDS ((int)(sizeof lib_commands / sizeof lib_commands[0]))
_Static_assert(N_COMMANDS <= LIB_MAX_COMMANDS, "raise LIB_MAX_COMMANDS");
const int lib_n_commands = N_COMMANDS;

/* ---- options --------------------------------------------------------- */

/* The options that name a file the call reads or writes: what
 * emit_io_check compares before the command runs (out.c). --model is an
 * input where it names a config.json; --hwdb directories are not
 * compared (an output inside one is not refused). */
const struct lib_io_option lib_io_options[] = {
    {OPT_OUTPUT, EMIT_IO_OUT}, /* EMIT_IO_OUT_DIR where the command says */
    {OPT_SVG, EMIT_IO_OUT},
    {OPT_SBATCH, EMIT_IO_OUT},
    {OPT_MODEL, EMIT_IO_IN},
    {OPT_MEGATRON_ARGS, EMIT_IO_IN},
    {OPT_NEMO_OVERRIDES, EMIT_IO_IN},
    {OPT_TORCHTITAN_CONFIG, EMIT_IO_IN},
    {OPT_NEAR, EMIT_IO_IN},
    {OPT_LOG, EMIT_IO_IN},
    {OPT_TRAIN, EMIT_IO_IN},
    {OPT_SHAPES, EMIT_IO_IN},
};
#define N_IO_OPTIONS ((int)(sizeof lib_io_options / sizeof lib_io_options[0]))
const int lib_n_io_options = N_IO_OPTIONS;

const lib_option lib_options[] = {
    {"help", OPT_HELP, NULL, CMD_ALL, "show this help and exit"},
    {"version", OPT_VERSION, NULL, CMD_ALL, "print the version and exit"},
    {"format", OPT_FORMAT, "table|json|csv|jsonl|md", CMD_ALL,
     "output format (default table; jsonl: search only; md: diff only)"},
    {"output", OPT_OUTPUT, "FILE|-", CMD_ALL,
     "write the output to FILE (atomically: all or nothing; - standard "
     "output; an input of the command, or another output's file, is "
     "refused); hw import-nccl-tests: the hwdb directory to write into"},
    {"threads", OPT_THREADS, "N", CMD_ALL,
     "worker threads, 1 to 1024 (default: all cores)"},
    {"seed", OPT_SEED, "N", CMD_ALL,
     "seed for every random stream (default 42)"},
    {"hwdb", OPT_HWDB, "DIR", CMD_ALL,
     "add a hardware database directory (repeatable; also $TRAINPLAN_HWDB)"},
    {"seq-length", OPT_SEQ, "N", CMD_MODEL_SHOW | CMD_ESTIMATE | CMD_SEARCH,
     "sequence length in tokens, a plain integer (8192, not 8k) (model "
     "show: for FLOPs per token, default 2048)"},
    {"tensor-model-parallel-size", OPT_TP, "N",
     CMD_MODEL_SHOW | CMD_ESTIMATE | CMD_SEARCH,
     "TP size (model show: for Megatron's vocabulary padding to 128*TP, "
     "default 1)"},
    {"model", OPT_MODEL, "NAME|config.json", CMD_EST_SEARCH,
     "model preset ('model list') or HuggingFace config.json"},
    {"gpus", OPT_GPUS, "N|LIST|A-B[:STEP]", CMD_EST_SEARCH,
     "GPUs of the job (search: counts to try, e.g. 64,128 or 64-512:64; "
     "SI suffixes allowed, 2k = 2000)"},
    {"pipeline-model-parallel-size", OPT_PP, "N", CMD_EST_SEARCH,
     "pipeline stages"},
    {"context-parallel-size", OPT_CP, "N", CMD_EST_SEARCH,
     "context-parallel ranks (ring attention)"},
    {"num-layers-per-virtual-pipeline-stage", OPT_VPP_LAYERS, "N",
     CMD_EST_SEARCH,
     "layers per model chunk of the interleaved schedule (needs -p)"},
    {"num-virtual-stages-per-pipeline-rank", OPT_VSTAGES, "N", CMD_EST_SEARCH,
     "model chunks per pipeline rank (1 = plain 1F1B)"},
    {"decoder-first-pipeline-num-layers", OPT_PP_FIRST, "N", CMD_EST_SEARCH,
     "pipeline split: layers on the first stage (Megatron-LM's; the middle "
     "stages share the rest evenly; default: the split is searched)"},
    {"decoder-last-pipeline-num-layers", OPT_PP_LAST, "N", CMD_EST_SEARCH,
     "pipeline split: layers on the last stage (Megatron-LM's)"},
    {"account-for-embedding-in-pipeline-split", OPT_PP_ACCOUNT_EMBED, NULL,
     CMD_EST_SEARCH,
     "pipeline split: the embedding counts as a layer (Megatron-LM's: the "
     "first stage builds one layer fewer)"},
    {"account-for-loss-in-pipeline-split", OPT_PP_ACCOUNT_LOSS, NULL,
     CMD_EST_SEARCH,
     "pipeline split: the loss counts as a layer (Megatron-LM's: the last "
     "stage builds one layer fewer)"},
    {"pipeline-model-parallel-layout", OPT_PP_LAYOUT, "LAYOUT",
     CMD_EST_SEARCH,
     "pipeline split: Megatron-Core's layout string, stages split by '|', "
     "E embedding, t layer, m MTP module, L loss, (...)*N and x*N repeat, "
     "e.g. 'Et*7|(t*8|)*14t*7L'; gives VPP (stages / PP)"},
    {"ep", OPT_EP, "N", CMD_EST_SEARCH,
     "MoE: expert-parallel size, a divisor of the experts (Megatron-Core "
     "--expert-model-parallel-size; default: searched)"},
    {"expert-model-parallel-size", OPT_EP, "N", CMD_EST_SEARCH,
     "the same as --ep"},
    {"etp", OPT_ETP, "N", CMD_EST_SEARCH,
     "MoE: expert tensor-parallel size (Megatron-Core "
     "--expert-tensor-parallel-size; default: searched among TP and 1); "
     "etp x ep must divide TP x CP x DP"},
    {"expert-tensor-parallel-size", OPT_ETP, "N", CMD_EST_SEARCH,
     "the same as --etp"},
    {"moe-dispatcher", OPT_MOE_DISPATCHER, "alltoall|allgather|flex",
     CMD_EST_SEARCH,
     "MoE: how tokens reach their experts (Megatron-Core "
     "--moe-token-dispatcher-type; flex: DeepEP, needs etp x ep > 1); "
     "default alltoall"},
    {"moe-comm-overlap", OPT_MOE_COMM_OVERLAP, "none|shared|a2a",
     CMD_EST_SEARCH,
     "MoE: what the dispatch and combine run under (Megatron-Core): none "
     "(exposed), shared (--moe-shared-expert-overlap: the shared experts), "
     "a2a (--overlap-moe-expert-parallel-comm --delay-wgrad-compute: "
     "another micro-batch's compute; EP > 1, no full recompute, VPP with "
     "PP > 1); default none, not searched"},
    {"pipeline-schedule", OPT_PP_SCHEDULE, "1f1b|zb1p|zbv|dualpipe|dualpipev",
     CMD_EST_SEARCH,
     "the pipeline schedule: 1f1b (interleaved with VPP > 1; also "
     "interleaved, Interleaved1F1B), zb1p (zero bubble ZB-H1; torchtitan's "
     "InterleavedZeroBubble, VPP >= 2), zbv (ZBVZeroBubble, VPP 2), "
     "dualpipe (DeepSeek's, VPP 1, even PP, >= 2 PP micro-batches), "
     "dualpipev (DualPipeV, VPP 2, >= 2 PP micro-batches); all but 1f1b "
     "under --framework torchtitan only; default 1f1b. search without it, "
     "torchtitan: zb1p, zbv and dualpipev are tried where PP > 1, eager, "
     "and kept where faster and fitting (tags _zb1p, _zbv, _dpv); given, "
     "the search keeps it"},
    {"moe-router-padding", OPT_MOE_ROUTER_PAD, NULL, CMD_EST_SEARCH,
     "MoE, fp8: the router pads each expert's tokens to the fp8 alignment "
     "(Megatron-Core --moe-router-padding-for-quantization): no padding "
     "copies around the expert GEMMs; default: TE's Fp8Padding copies"},
    {"moe-flex-backend", OPT_MOE_FLEX_BACKEND, "deepep|hybridep",
     CMD_EST_SEARCH,
     "MoE: the flex dispatcher's backend (Megatron-Core "
     "--moe-flex-dispatcher-backend); hybridep dispatches rows sorted by "
     "expert and padded for fp8 (no sort, no padding copies); needs "
     "--moe-dispatcher flex; default deepep"},
    {"fp8-activation-cache", OPT_FP8_ACT_CACHE, "te|deepseek-v3",
     CMD_EST_SEARCH,
     "fp8, Megatron-Core: what the layers keep for the backward; te "
     "(Transformer Engine's fp8 GEMM inputs beside 16-bit attention "
     "outputs and SwiGLU inputs) or deepseek-v3 (DeepSeek-V3's framework, "
     "arXiv 2412.19437 section 3.3.3: the attention output once in E5M6, "
     "the MoE SwiGLU inputs in fp8 and its output recomputed; one fp8 "
     "copy of each weight, transposed as each GEMM needs it; memory "
     "only, no Megatron-LM flag); default te"},
    /* memory savers (issue 28; docs/memory.md) */
    {"use-precision-aware-optimizer", OPT_PA_OPTIMIZER, NULL, CMD_EST_SEARCH,
     "Transformer Engine's FusedAdam keeps the master weights (an fp32 "
     "master of a bf16 weight as its 16 missing bits) and the moments in "
     "the dtypes below (Megatron-Core); needs the distributed optimizer "
     "(implied where --zero-stage is not given)"},
    {"main-grads-dtype", OPT_MAIN_GRADS_DTYPE, "fp32|bf16", CMD_EST_SEARCH,
     "with --use-precision-aware-optimizer: the gradient buffers' dtype "
     "(default fp32)"},
    {"main-params-dtype", OPT_MAIN_PARAMS_DTYPE, "fp32|fp16", CMD_EST_SEARCH,
     "with --use-precision-aware-optimizer: the master weights' dtype "
     "(default fp32)"},
    {"exp-avg-dtype", OPT_EXP_AVG_DTYPE, "fp32|fp16|bf16|fp8", CMD_EST_SEARCH,
     "with --use-precision-aware-optimizer: Adam's first moment's dtype "
     "(default fp32; DeepSeek-V3 trains with bf16)"},
    {"exp-avg-sq-dtype", OPT_EXP_AVG_SQ_DTYPE, "fp32|fp16|bf16|fp8",
     CMD_EST_SEARCH,
     "with --use-precision-aware-optimizer: Adam's second moment's dtype "
     "(default fp32)"},
    {"optimizer-cpu-offload", OPT_OPT_OFFLOAD, NULL, CMD_EST_SEARCH,
     "step the optimizer on the host (Megatron-Core's HybridDeviceOptimizer: "
     "fp32 states in host memory, gradients copied down, parameters copied "
     "back over the host link); needs --use-precision-aware-optimizer and "
     "the system's host link and memory bandwidth in hwdb"},
    {"optimizer-offload-fraction", OPT_OPT_OFFLOAD_FRACTION, "F",
     CMD_EST_SEARCH,
     "with --optimizer-cpu-offload: the share of the optimizer's "
     "parameters stepped on the host, (0, 1] (default 1)"},
    {"overlap-cpu-optimizer-d2h-h2d", OPT_OPT_OFFLOAD_OVERLAP, NULL,
     CMD_EST_SEARCH,
     "with --optimizer-cpu-offload: the copies and the CPU step overlapped, "
     "parameter by parameter"},
    {"cpu-offloading-num-layers", OPT_ACT_OFFLOAD_LAYERS, "N",
     CMD_EST_SEARCH,
     "Transformer Engine's activation offloading: the first N layers' "
     "activations kept on the host between forward and backward, 1 to "
     "layers - 1; PP 1 and no recomputation (implied where not given)"},
    {"fine-grained-activation-offloading", OPT_FINE_GRAINED_OFFLOAD, NULL,
     CMD_EST_SEARCH,
     "Megatron-Core's fine-grained activation offloading of the modules of "
     "--offload-modules (any PP)"},
    {"offload-modules", OPT_OFFLOAD_MODULES, "LIST", CMD_EST_SEARCH,
     "with --fine-grained-activation-offloading: the modules whose saved "
     "tensors go to the host, comma-separated, of attn_norm, qkv_linear, "
     "core_attn, attn_proj, mlp_norm, expert_fc1, moe_act"},
    {"activation-offload-fraction", OPT_OFFLOAD_FRACTION, "F", CMD_EST_SEARCH,
     "with --fine-grained-activation-offloading: the share of offload "
     "groups offloaded, the first in forward order, (0, 1] (default 1)"},
    {"microbatch-group-size-per-virtual-pipeline-stage", OPT_MB_GROUP, "N",
     CMD_EST_SEARCH,
     "the interleaved schedule runs N micro-batches of a model chunk in a "
     "row (PP <= N <= micro-batches; the last group 0 or >= PP): "
     "micro-batches need not be a multiple of PP, (VPP - 1) x N of the "
     "warm-up in flight (default PP)"},
    {"no-memory-savers", OPT_NO_SAVERS, NULL, CMD_SEARCH,
     "search: do not try the memory savers (precision-aware optimizer with "
     "bf16 moments, activation offload, optimizer offload, fp8 parameters) "
     "on layouts that do not fit; default: each layout that does not fit is tried with "
     "each, the fastest that fits kept and named in its tag"},
    {"moe-permute-fusion", OPT_MOE_PERMUTE_FUSION, NULL, CMD_EST_SEARCH,
     "MoE: Transformer Engine's fused token permutation (Megatron-Core "
     "--moe-permute-fusion): each MoE layer keeps a 32-bit map per token "
     "and expert for the backward; trainplan's default with Megatron-Core "
     "(its launches set it)"},
    {"moe-router-fusion", OPT_MOE_ROUTER_FUSION, NULL, CMD_EST_SEARCH,
     "MoE: Transformer Engine's fused router kernels (Megatron-Core "
     "--moe-router-fusion, v0.14 with TE 2.6): top-k, scores and the "
     "load-balancing loss in three kernels each way instead of about 23 "
     "PyTorch ops; trainplan's default with Megatron-Core (its launches set "
     "it)"},
    {"no-moe-router-fusion", OPT_NO_MOE_ROUTER_FUSION, NULL, CMD_EST_SEARCH,
     "MoE: the router as PyTorch's ops (Megatron-Core's default, and every "
     "version before v0.14): more passes over the tokens x experts scores "
     "and more kernel launches"},
    {"no-moe-permute-fusion", OPT_NO_MOE_PERMUTE_FUSION, NULL,
     CMD_EST_SEARCH,
     "MoE: PyTorch's permutation (Megatron-Core's default): 64-bit sorted "
     "indices per row kept instead, and two of its four passes (permute's "
     "backward, unpermute's forward) atomic adds at a measured 5 and 11 % "
     "of HBM bandwidth"},
    {"moe-imbalance", OPT_MOE_IMBALANCE, "X", CMD_EST_SEARCH,
     "MoE: tokens the busiest expert receives over the mean, 1 (perfect "
     "balance) to experts / top-k (default: the estimator's)"},
    {"micro-batch-size", OPT_MBS, "N", CMD_EST_SEARCH,
     "sequences per micro-batch"},
    {"global-batch-size", OPT_GBS, "N", CMD_EST_SEARCH,
     "sequences per iteration, a plain integer"},
    {"sequence-parallel", OPT_SP, NULL, CMD_EST_SEARCH,
     "sequence parallelism (with TP > 1)"},
    {"no-sequence-parallel", OPT_NO_SP, NULL, CMD_EST_SEARCH,
     "no sequence parallelism"},
    {"recompute-granularity", OPT_RECOMPUTE, "none|selective|full|selective-op",
     CMD_EST_SEARCH, "activation recomputation"},
    {"recompute-method", OPT_RECOMPUTE_METHOD, "uniform|block", CMD_EST_SEARCH,
     "with full recomputation: every layer, in groups of --recompute-num-"
     "layers (uniform, default), or only the first --recompute-num-layers "
     "of each model chunk (block)"},
    {"recompute-num-layers", OPT_RECOMPUTE_LAYERS, "N", CMD_EST_SEARCH,
     "with full recomputation: layers per group (uniform, default 1) or "
     "recomputed per model chunk (block), 1 to the model's layers"},
    {"recompute-modules", OPT_RECOMPUTE_MODULES, "LIST", CMD_EST_SEARCH,
     "with selective recomputation (implied when unset): Megatron-Core's "
     "modules to rerun, comma-separated, of core_attn (the default), "
     "layernorm, moe_act, mla_up_proj, mlp, moe, shared_experts"},
    {"accumulate-allreduce-grads-in-fp32", OPT_GRAD_FP32, NULL,
     CMD_EST_SEARCH,
     "fp32 gradient buffers, reduced in fp32 (Megatron-LM's default with "
     "bf16; torchtitan's)"},
    {"grad-reduce-in-bf16", OPT_GRAD_BF16, NULL, CMD_EST_SEARCH,
     "16-bit gradient buffers, reduced in 16 bits, the optimizer stepping "
     "on an fp32 copy of its shard (Megatron-LM's default with fp16)"},
    {"use-distributed-optimizer", OPT_DISTOPT, NULL, CMD_EST_SEARCH,
     "shard optimizer states over DP (ZeRO-1)"},
    {"no-use-distributed-optimizer", OPT_NO_DISTOPT, NULL, CMD_EST_SEARCH,
     "every DP rank keeps all optimizer states"},
    {"zero-stage", OPT_ZERO, "0|1|2|3", CMD_EST_SEARCH,
     "optimizer states (1), gradients (2), parameters (3, FSDP) sharded "
     "over DP"},
    {"precision", OPT_PRECISION, "bf16|fp16|fp8|mxfp8|nvfp4", CMD_EST_SEARCH,
     "GEMM precision (default bf16; fp8: GEMMs at the fp8 rate; mxfp8: fp8 "
     "with --fp8-recipe mxfp8, Blackwell; nvfp4: the linear layers' GEMMs "
     "in NVFP4 at the fp4 rate, Transformer Engine's NVFP4BlockScaling, "
     "Blackwell)"},
    {"fp8-param-gather", OPT_FP8_PARAMS, NULL, CMD_EST_SEARCH,
     "fp8 under Transformer Engine: the layers' weights kept as fp8 "
     "parameters (one byte in memory and in the distributed optimizer's "
     "all-gather, a transposed copy cached); default: 16-bit parameters "
     "with cached fp8 copies"},
    {"fp8-dot-product-attention", OPT_FP8_ATTENTION, NULL, CMD_EST_SEARCH,
     "fp8 or nvfp4 under Transformer Engine: the fused attention in fp8 "
     "(Megatron-Core's fp8_dot_product_attention, NeMo's FP8_DPA), timed as "
     "the 16-bit kernel times the GPU's measured fp8 / bf16 ratio at the "
     "sequence length (hwdb fp8_attention: cuDNN's kernels); Megatron-Core "
     "only; not searched (a numerics choice); default: 16-bit attention"},
    {"doc-length", OPT_DOC_LENGTH, "LEN[:SHARE],...", CMD_EST_SEARCH,
     "packed sequences (fine-tuning): documents of LEN tokens, or several "
     "lengths with the share of the tokens each holds (512:0.3,4096:0.7); "
     "attention runs within each document; default: one document a "
     "sequence"},
    {"fp8-recipe", OPT_FP8_RECIPE, "delayed|tensorwise|rowwise|blockwise|mxfp8",
     CMD_EST_SEARCH,
     "how fp8 operands are scaled (with --precision fp8): per tensor from "
     "the amax history (Transformer Engine's default) or from the tensor "
     "itself, per row (torchao), in 1x128/128x128 blocks, or MXFP8's 1x32 "
     "blocks (Blackwell); default: the framework's"},
    {"overlap-grad-reduce", OPT_OVERLAP, NULL, CMD_EST_SEARCH,
     "gradient reduction under the backward, parameter gather under the "
     "forward (default)"},
    {"tp-comm-overlap", OPT_TP_COMM_OVERLAP, NULL, CMD_EST_SEARCH,
     "every TP collective under its neighbouring GEMM (Megatron-LM's "
     "userbuffer overlap; torchtitan's AsyncTP)"},
    {"tp-overlap", OPT_TP_OVERLAP, "backward|none|all|dtensor|async-tp",
     CMD_EST_SEARCH,
     "which TP collectives hide under GEMMs: Megatron-LM's default, none, "
     "all (the two flags above), or PyTorch DTensor TP as torchtitan runs "
     "it, plain or with AsyncTP"},
    {"no-async-tensor-model-parallel-allreduce", OPT_NO_ASYNC_TP, NULL,
     CMD_EST_SEARCH,
     "no TP collective overlapped (Megatron-LM of 2021; DTensor TP: "
     "--tp-overlap dtensor); default: the backward's under the weight "
     "gradient"},
    {"framework", OPT_FRAMEWORK,
     "megatron-core|megatron-lm-2021|torchtitan|pytorch-fsdp|deepspeed-2021",
     CMD_EST_SEARCH,
     "defaults of the software switches (--tp-overlap, --cp-comm-type, "
     "--attention-backend, --[no-]overlap-grad-reduce, "
     "--scatter-gather-tensors-in-pipeline, --eager, "
     "--[no-]overlap-p2p-communication, --fp8-recipe, the gradient dtype) "
     "and of how it keeps parameters and fp8 weights (docs/memory.md) as "
     "that framework runs; a switch given overrides its default (default "
     "megatron-core); with --eager it also names the software stack whose "
     "in-training kernel efficiency the estimate uses"},
    {"eager", OPT_EAGER, NULL, CMD_EST_SEARCH,
     "PyTorch eager: RMSNorm, SwiGLU and RoPE as the separate kernels of "
     "their PyTorch code (torchtitan without torch.compile); default: "
     "fused"},
    {"overlap-p2p-communication", OPT_PP_OVERLAP, NULL, CMD_EST_SEARCH,
     "interleaved pipeline: sends and receives of the steady state under "
     "the next chunk's compute (Megatron-Core's default)"},
    {"no-overlap-p2p-communication", OPT_NO_PP_OVERLAP, NULL, CMD_EST_SEARCH,
     "interleaved pipeline: every send and receive exposed (Megatron-LM of "
     "2021, PyTorch's pipelining)"},
    {"scatter-gather-tensors-in-pipeline", OPT_PP_SCATTER_GATHER, NULL,
     CMD_EST_SEARCH,
     "pipeline sends without SP split over the TP ranks and re-gathered "
     "(Megatron-LM before Megatron-Core, Megatron-DeepSpeed)"},
    {"cross-entropy-loss-fusion", OPT_CE_FUSION, NULL, CMD_EST_SEARCH,
     "Megatron-Core's fused cross-entropy (its native implementation, "
     "compiled): faster, and one more fp32 logits-sized buffer at the "
     "loss's backward on the last pipeline stage"},
    {"cp-comm-type", OPT_CP_COMM, "p2p|all_gather", CMD_EST_SEARCH,
     "context parallelism's key/value exchange: a ring under the attention "
     "(default) or an all-gather before it"},
    {"attention-backend", OPT_ATTN_BACKEND, "unfused|flash|fused|auto",
     CMD_EST_SEARCH,
     "attention kernel: FlashAttention-2 (flash), cuDNN's fused attention "
     "(fused), Transformer Engine's choice (auto: fused on Hopper and "
     "Blackwell, flash elsewhere), or QK^T, softmax, AV (unfused, keeps "
     "the s x s probabilities); default: the framework's"},
    {"attention-dropout", OPT_ATTN_DROPOUT, "P", CMD_EST_SEARCH,
     "dropout on the attention probabilities, 0 to 1 (default: the "
     "model's; presets have none)"},
    {"hidden-dropout", OPT_HIDDEN_DROPOUT, "P", CMD_EST_SEARCH,
     "dropout before the residual adds, 0 to 1 (default: the model's)"},
    {"no-overlap-grad-reduce", OPT_NO_OVERLAP, NULL, CMD_EST_SEARCH,
     "gradient reduction after the backward (Megatron-LM's default)"},
    {"expandable-segments", OPT_EXPANDABLE, NULL, CMD_EST_SEARCH,
     "PyTorch's caching allocator with PYTORCH_CUDA_ALLOC_CONF="
     "expandable_segments:True: what it caches beside the live tensors "
     "(reserved, nvidia-smi); default: the framework's launcher "
     "(torchtitan's run_train.sh and Megatron-Bridge's recipes set it, "
     "Megatron-LM's examples do not), or a job file's export; this option "
     "overrides both"},
    {"no-expandable-segments", OPT_NO_EXPANDABLE, NULL, CMD_EST_SEARCH,
     "PyTorch's caching allocator without expandable segments (PyTorch's "
     "default)"},
    {"cuda-graph-impl", OPT_CUDA_GRAPH_IMPL,
     "none|local|transformer_engine|full_iteration", CMD_EST_SEARCH,
     "Megatron-Core's CUDA graphs (--cuda-graph-impl): per layer (local, "
     "transformer_engine) or of the whole forward and backward "
     "(full_iteration); their private memory pool is counted, held "
     "through the optimizer step; the captured modules' host calls are "
     "replaced by one graph launch each (host_exposed_s); default none. "
     "search without it: Transformer Engine's per-layer graphs are tried "
     "where the GPU waits on the host and kept where faster and fitting "
     "(tag _cgte); given, even none, the search keeps it"},
    {"cuda-graph-scope", OPT_CUDA_GRAPH_SCOPE, "LIST", CMD_EST_SEARCH,
     "with --cuda-graph-impl local or transformer_engine: what a layer's "
     "graph captures (Megatron-Core --cuda-graph-modules, formerly "
     "--cuda-graph-scope), comma-separated, of attn, mlp, moe, moe_router, "
     "moe_preprocess, or full (the whole layer, the default)"},
    {"fsdp-double-buffer", OPT_FSDP_DOUBLE_BUFFER, NULL, CMD_EST_SEARCH,
     "Megatron-FSDP (Megatron-Core with --zero 2 or 3): two persistent "
     "buffers the size of one layer for the gathered weights and two for "
     "the unsharded gradients (--fsdp-double-buffer), at most two layers "
     "in flight; default: buffers made and freed per layer"},
    {"tokens", OPT_TOKENS, "N", CMD_EST_SEARCH,
     "tokens to train, e.g. 300e9, 300B or 2T (SI suffixes k, M, G or B, "
     "T): time and cost to train"},
    {"gpu", OPT_GPU, "NAME", CMD_OP,
     "GPU name or alias from 'hw list' (op commands)"},
    {"op", OPT_OP, "NAME", CMD_OP_PREDICT | CMD_OP_SHOW | CMD_COLL_SHOW
                               | CMD_HW_IMPORT,
     "operator: a seed-sample name (linear1 ... parallel_cross_entropy_128), "
     "gemm or adam; collective (coll show, hw import-nccl-tests): allreduce, "
     "reducescatter, allgather, alltoall, sendrecv"},
    {"train", OPT_TRAIN, "FILE", CMD_OP_PREDICT,
     "samples to fit on (seed CSV format), nothing else"},
    {"shapes", OPT_SHAPES, "FILE", CMD_OP_PREDICT,
     "shapes to predict (seed CSV format; times, if any, are ignored)"},
    {"shape", OPT_SHAPE, "K=V,...", CMD_OP_SHOW,
     "one shape, e.g. mp=2,b=4,l=2048,dim=6144 or m=4096,n=4096,k=4096"},
    {"dtype", OPT_DTYPE, "fp32|tf32|fp16|bf16|fp8|fp4", CMD_OP,
     "data type of the operator (default fp16; gemm samples: bf16)"},
    {"keep-bad", OPT_KEEP_BAD, NULL, CMD_OP | CMD_COLL | CMD_EST_SEARCH,
     "keep samples and table rows that fail the hygiene checks"},
    {"folds", OPT_FOLDS, "N", CMD_OP_CV,
     "cross-validation folds, 2 to 20 (default 5)"},
    {"system", OPT_SYSTEM, "NAME", CMD_COLL | CMD_HW_IMPORT | CMD_EST_SEARCH,
     "system name or alias from 'hw list' (coll commands; hw "
     "import-nccl-tests, default: the one system with the log's GPU; "
     "search: a comma list, e.g. perlmutter,selene,eos)"},
    {"bytes", OPT_BYTES, "SIZE,...", CMD_COLL_SHOW,
     "bytes per rank, e.g. 1e8, 256MiB, 1GB, 64K (K/M/G: binary, as "
     "nccl-tests -b); a comma list gives a sweep"},
    {"group", OPT_GROUP, "NxG", CMD_COLL_SHOW,
     "the group: N nodes x G GPUs per node, e.g. 2x4"},
    {"nodes", OPT_NODES, "N", CMD_COLL_SHOW | CMD_HW_IMPORT | CMD_ESTIMATE,
     "nodes of the group (with --gpus-per-node; hw import-nccl-tests: "
     "overrides the log's '# Rank' lines; estimate: whole nodes of the "
     "job)"},
    {"gpus-per-node", OPT_GPN, "G", CMD_COLL_SHOW | CMD_HW_IMPORT,
     "GPUs of the group on each node (with --nodes)"},
    {"max-gpus", OPT_MAX_GPUS, "N", CMD_SEARCH,
     "search: at most N GPUs (whole nodes from one node up, unless --gpus; "
     "SI suffixes allowed)"},
    {"min-gpus", OPT_MIN_GPUS, "N", CMD_SEARCH, "search: at least N GPUs"},
    {"objective", OPT_OBJECTIVE, "time|throughput|time-to-train|cost",
     CMD_SEARCH, "search: what to rank by (default time)"},
    {"top", OPT_TOP, "K", CMD_SEARCH,
     "search: layouts in the ranked table, 1 to 1000 (default 10)"},
    {"price", OPT_PRICE, "USD", CMD_SEARCH,
     "search: price per GPU-hour for every system (default: hwdb's)"},
    {"budget-usd", OPT_BUDGET_USD, "USD", CMD_SEARCH,
     "search: most the training may cost, e.g. 1.5M or 1500000 (SI "
     "suffixes k, M, G or B, T; needs --tokens)"},
    {"budget-gpu-hours", OPT_BUDGET_GH, "H", CMD_SEARCH,
     "search: most GPU-hours the training may take, e.g. 250k (SI "
     "suffixes; needs --tokens)"},
    {"deadline", OPT_DEADLINE, "T", CMD_SEARCH,
     "search: longest the training may take, e.g. 30d, 72h, 90m, 3600s "
     "(needs --tokens)"},
    {"fix", OPT_FIX, "K=V,...", CMD_SEARCH,
     "search: pin fields: tp, pp, cp, ep, etp, vpp, split (even, embedding, "
     "loss, embedding+loss, ends), mbs, sp, recompute, zero (e.g. "
     "tp=8,pp=4,recompute=full)"},
    {"max-memory-fraction", OPT_MAX_MEM_FRAC, "F", CMD_SEARCH,
     "search: admit a layout whose estimated peak fits this fraction of a "
     "GPU's memory, (0, 1], instead of the default rule: peak plus the "
     "measured margin of its framework fits the memory"},
    {"ops", OPT_OPS, NULL, CMD_ESTIMATE,
     "estimate: every operator and collective of one layer and one "
     "micro-batch (and of the first and last stage, and once per "
     "iteration) with the time it was given"},
    {"explain", OPT_EXPLAIN, NULL, CMD_SEARCH,
     "search: why the winner wins, term by term, and an example per "
     "rejection rule"},
    {"no-timing", OPT_NO_TIMING, NULL, CMD_SEARCH,
     "search: leave out elapsed time and thread count (comparable output)"},
    {"no-prune", OPT_NO_PRUNE, NULL, CMD_SEARCH,
     "search: estimate every valid layout (no memory or time bound)"},
    {"svg", OPT_SVG, "FILE|-", CMD_SEARCH,
     "search: an SVG to FILE: time against cost by GPU count and system, "
     "the front labelled, the top layouts' time and memory by term (-: "
     "standard output, with -o FILE only)"},
    {"list-options", OPT_LIST_OPTIONS, NULL, CMD_ALL,
     "print every long option name, one per line (for scripts and tests)"},
    {"progress", OPT_PROGRESS, NULL, CMD_SWEEP,
     "sweep: progress line on stderr even when it is not a terminal"},
    {"resume", OPT_RESUME, NULL, CMD_SWEEP,
     "sweep: keep the complete, undamaged records of -o FILE, redo the "
     "rest (a FILE that is not this sweep's output is refused)"},
    {"overwrite", OPT_OVERWRITE, NULL, CMD_SWEEP,
     "sweep: replace an -o FILE that holds records, once the sweep "
     "finishes (without it or --resume such a file is refused)"},
    {"shard", OPT_SHARD, "I/N", CMD_SWEEP,
     "sweep: only scenarios whose index % N == I (0 <= I < N)"},
    {"record", OPT_RECORD, "compact|full", CMD_SWEEP,
     "sweep: what each record's search holds, over the spec's \"record\": "
     "the figures a dashboard reads (compact, the default: at most 8 KB "
     "without launches) or what search --format json --no-timing prints "
     "(full)"},
    {"megatron-args", OPT_MEGATRON_ARGS, "FILE|-", CMD_EST_SEARCH,
     "estimate: the model and layout of a Megatron-LM job, read from its "
     "command line or launch script (pretrain_gpt.py's arguments; #SBATCH "
     "and torchrun lines give the GPUs); with --system, instead of --model "
     "and the layout options (search: as --near)"},
    {"nemo-overrides", OPT_NEMO_OVERRIDES, "FILE|-", CMD_EST_SEARCH,
     "estimate: the model and layout of a NeMo job, read from its recipe "
     "overrides (search: your job, as --near does for Megatron-LM's)"},
    {"torchtitan-config", OPT_TORCHTITAN_CONFIG, "FILE|-", CMD_EST_SEARCH,
     "estimate: the model and layout of a torchtitan job, read from its "
     "job config (search: your job, as --near does for Megatron-LM's)"},
    {"strict", OPT_STRICT, NULL, CMD_MODEL_SHOW | CMD_EST_SEARCH,
     "a config.json that says what trainplan does not model (an unknown "
     "model_type, a local/global pattern that is not periodic, Qwen's "
     "partial windows, mlp_only_layers, ...) is an error (exit 65), not a "
     "warning"},
    {"sbatch", OPT_SBATCH, "FILE|-", CMD_SEARCH,
     "search: write the winner's Megatron-LM launch script to FILE "
     "(atomically; -: standard output, with -o FILE only): sbatch it, or "
     "run it on each node under another scheduler; edit only its paths"},
    {"near", OPT_NEAR, "FILE|-", CMD_SEARCH,
     "search: your own Megatron-LM job (its command line or launch "
     "script, as --megatron-args reads it), estimated as it is and "
     "searched as the same job over every layout (its GPUs unless --gpus "
     "or --max-gpus); prints what the best layout changes and what it "
     "buys"},
    {"all", OPT_ALL_LAYOUTS, NULL, CMD_SEARCH,
     "search, JSON: also every layout estimated and admitted ('admitted': "
     "layout, system, GPUs, time, cost, peak memory; the pruned cannot enter "
     "the top or the front, --no-prune lists them too)"},
    {"log", OPT_LOG, "FILE", CMD_EST_SEARCH,
     "the log of a run of this job (Megatron-LM, Megatron-Bridge, NeMo 2 or "
     "torchtitan: its iteration lines, memory lines and timers): the run's "
     "steady iteration time and peak memory beside the estimate's, term by "
     "term where the log has them (search: with --near, the job's)"},
    {"calibrate-to-log", OPT_CALIBRATE_TO_LOG, NULL, CMD_EST_SEARCH,
     "with --log: the in-training kernel efficiency that makes the estimate "
     "match the run's iteration time, and the estimate at it; search: every "
     "layout searched at it (said in the output)"},
    {"torchtitan-version", OPT_TORCHTITAN_VERSION, "main|0.2", CMD_SEARCH,
     "search: the torchtitan its config targets: main (default; at "
     "b5bcd76c66d0, 2026-08-21: a Python config) or 0.2 (v0.2.0 to "
     "v0.2.2: a TOML job config)"},
    {"nemo-format", OPT_NEMO_FORMAT, "bridge|nemo1", CMD_SEARCH,
     "search: the NeMo launch as Megatron-Bridge v0.6.0 recipe overrides "
     "(bridge, the default) or as the NeMo 1.x launcher's YAML keys "
     "(nemo1)"},
    {"launch", OPT_LAUNCH, "megatron|nemo|torchtitan|all|none",
     CMD_SEARCH | CMD_SWEEP,
     "search, text: print #1's launch for that framework (megatron: the "
     "Megatron-LM launch script; nemo: Megatron-Bridge overrides or NeMo 1.x "
     "keys; torchtitan: its config; all: every form), or none (default: a "
     "line saying how; JSON, JSON Lines and CSV carry every form). sweep: "
     "the launches its records carry, over the spec's \"launch\" (default "
     "none; all: a record 10 times the size)"},
    {"threshold", OPT_THRESHOLD, "F", CMD_DIFF,
     "diff: relative change of time or cost that counts, >= 0 (default "
     "0.02)"},
};
#define N_OPTIONS ((int)(sizeof lib_options / sizeof lib_options[0]))
_Static_assert(N_OPTIONS <= LIB_MAX_OPTIONS, "raise LIB_MAX_OPTIONS");
const int lib_n_options = N_OPTIONS;

/* Options whose values a job file (--megatron-args, ...) gives. */
int lib_job_sets(int id)
{
    static const int ids[] = {
        OPT_MODEL, OPT_TP, OPT_PP, OPT_CP, OPT_VPP_LAYERS, OPT_VSTAGES,
        OPT_MBS, OPT_GBS, OPT_SEQ, OPT_SP, OPT_NO_SP, OPT_RECOMPUTE,
        OPT_RECOMPUTE_METHOD, OPT_RECOMPUTE_LAYERS, OPT_RECOMPUTE_MODULES,
        OPT_DISTOPT,
        OPT_NO_DISTOPT, OPT_ZERO, OPT_PRECISION, OPT_FP8_RECIPE,
        OPT_FP8_PARAMS, OPT_FP8_ATTENTION, OPT_TP_COMM_OVERLAP, OPT_TP_OVERLAP, OPT_NO_ASYNC_TP,
        OPT_CE_FUSION, OPT_CP_COMM, OPT_ATTN_BACKEND, OPT_ATTN_DROPOUT,
        OPT_HIDDEN_DROPOUT, OPT_GRAD_FP32, OPT_GRAD_BF16, OPT_OVERLAP,
        OPT_NO_OVERLAP, OPT_PP_OVERLAP, OPT_NO_PP_OVERLAP, OPT_FRAMEWORK,
        OPT_EAGER, OPT_PP_SCATTER_GATHER, OPT_DOC_LENGTH, OPT_EP, OPT_ETP,
        OPT_MOE_DISPATCHER, OPT_MOE_COMM_OVERLAP, OPT_PP_SCHEDULE,
        OPT_MOE_ROUTER_PAD,
        OPT_MOE_FLEX_BACKEND, OPT_PP_FIRST, OPT_PP_LAST, OPT_PP_ACCOUNT_EMBED,
        OPT_PP_ACCOUNT_LOSS, OPT_PP_LAYOUT, OPT_PA_OPTIMIZER,
        OPT_MAIN_GRADS_DTYPE, OPT_MAIN_PARAMS_DTYPE, OPT_EXP_AVG_DTYPE,
        OPT_EXP_AVG_SQ_DTYPE, OPT_OPT_OFFLOAD, OPT_OPT_OFFLOAD_FRACTION,
        OPT_OPT_OFFLOAD_OVERLAP, OPT_ACT_OFFLOAD_LAYERS,
        OPT_FINE_GRAINED_OFFLOAD, OPT_OFFLOAD_MODULES, OPT_OFFLOAD_FRACTION,
        OPT_MB_GROUP,
        OPT_MOE_PERMUTE_FUSION, OPT_NO_MOE_PERMUTE_FUSION,
        OPT_MOE_ROUTER_FUSION, OPT_NO_MOE_ROUTER_FUSION,
        OPT_CUDA_GRAPH_IMPL, OPT_CUDA_GRAPH_SCOPE, OPT_FSDP_DOUBLE_BUFFER,
        /* not --[no-]expandable-segments: the allocator's setting is the
         * job's environment, which a job file may not show (torchtitan's
         * run_train.sh, a wrapper's export); the option says it */
    };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (ids[i] == id) return 1;
    return 0;
}

/* The command argv names (GROUP VERB, or a group whose verb is ""), for
 * `trainplan COMMAND --help`; NULL where none. */
const lib_command *lib_help_command(int argc, char **argv)
{
    for (int a = 1; a < argc; a++)
        for (int i = 0; i < N_COMMANDS; i++) {
            const lib_command *c = &lib_commands[i];
            if (strcmp(argv[a], c->group) != 0) continue;
            if (c->verb[0] == '\0'
                || (a + 1 < argc && strcmp(argv[a + 1], c->verb) == 0))
                return c;
        }
    return NULL;
}

/* The help's width: what fits a terminal of 100 columns. */
#define HELP_WIDTH 100

/* text from column `at` (where the caller left the line), words wrapped
 * before `width`, continuation lines indented to `at`. Ends the line. */
static void print_wrapped(FILE *f, const char *text, int at, int width)
{
    emit_print_wrapped(f, text, at, at, width);
}

/* The help: every command and option, or with cmd that command's usage
 * and the options it takes. An option's name and argument longer than
 * its column go on a line of their own, the help under them. */
void lib_usage(FILE *f, const lib_command *cmd)
{
    if (cmd) {
        fprintf(f, "usage: trainplan %s%s%s [OPTIONS]%s%s\n\n%s\n",
                cmd->group, cmd->verb[0] ? " " : "", cmd->verb,
                cmd->args[0] ? " " : "", cmd->args, cmd->summary);
    } else {
        fprintf(f, "usage: trainplan [OPTIONS] COMMAND [ARGS]\n\n"
                   "Plans the parallel layout, step time, memory and cost of "
                   "LLM training.\n`trainplan COMMAND --help` lists only "
                   "the options of that command.\n\ncommands:\n");
        for (int i = 0; i < N_COMMANDS; i++) {
            char head[160];
            snprintf(head, sizeof head, "%s %s %s", lib_commands[i].group,
                     lib_commands[i].verb, lib_commands[i].args);
            fprintf(f, "  %-28s ", head);
            print_wrapped(f, lib_commands[i].summary, 31, HELP_WIDTH);
        }
    }
    fprintf(f, "\noptions:\n");
    for (int i = 0; i < N_OPTIONS; i++) {
        if (cmd && !(lib_options[i].cmds & cmd->bit)) continue;
        char head[256];
        if (lib_options[i].id < 256)
            snprintf(head, sizeof head, "-%c, --%s%s%s", lib_options[i].id,
                     lib_options[i].name, lib_options[i].arg ? " " : "",
                     lib_options[i].arg ? lib_options[i].arg : "");
        else
            snprintf(head, sizeof head, "    --%s%s%s", lib_options[i].name,
                     lib_options[i].arg ? " " : "",
                     lib_options[i].arg ? lib_options[i].arg : "");
        if (strlen(head) > 40)
            fprintf(f, "  %s\n  %-40s ", head, "");
        else
            fprintf(f, "  %-40s ", head);
        print_wrapped(f, lib_options[i].help, 43, HELP_WIDTH);
    }
    fprintf(f, "\nnumbers: counts and amounts (--tokens, --budget-usd, "
               "--budget-gpu-hours, --price,\n         --gpus, --max-gpus, "
               "--min-gpus, --nodes) take an SI suffix k, M, G or B, T\n"
               "         (powers of 1000: 2T = 2e12, 1.5M = 1500000); "
               "lengths and batch sizes take\n         plain integers "
               "(8k is 8192 to some and 8000 to others)\n");
    fprintf(f, "\nexit codes: 0 ok, 1 nothing feasible, 64 usage, 65 bad input "
               "data,\n            66 missing file, 70 internal error, 74 I/O "
               "error\n");
    fprintf(f, "            75 sweep -o FILE locked by another sweep; 3 diff "
               "found changes;\n            129/130/143 sweep stopped by "
               "SIGHUP/SIGINT/SIGTERM\n");
}

/* Parses a whole decimal integer in [lo, hi]; 0 on success. */
int lib_option_kind(const char *name)
{
    for (int i = 0; i < N_OPTIONS; i++)
        if (strcmp(lib_options[i].name,
                   name) == 0) return lib_options[i].arg ? 1 : 0;
    return -1;
}

const char *lib_option_name(int i)
{
    return i >= 0 && i < N_OPTIONS ? lib_options[i].name : NULL;
}

const lib_option *lib_option_by_id(int id)
{
    for (int i = 0; i < N_OPTIONS; i++)
        if (lib_options[i].id == id) return &lib_options[i];
    return NULL;
}

/* ---- bash completion, from the two tables ----------------------------- */

/* Whether an option's metavariable lists its values ("a|b|c", lowercase):
 * NAME|config.json or FILE|- name kinds of values, not the values. */
static int arg_is_enum(const char *arg)
{
    if (!arg || !strchr(arg, '|')) return 0;
    for (const char *p = arg; *p; p++)
        if (*p >= 'A' && *p <= 'Z') return 0;
    return 1;
}

/* The values an option completes to, as the script's shell code: the
 * table's list, or names a command prints at completion time. */
static void completion_values(FILE *f, const lib_option *op)
{
    if (arg_is_enum(op->arg)) {
        fputs("COMPREPLY=($(compgen -W \"", f);
        for (const char *p = op->arg; *p; p++) fputc(*p == '|' ? ' ' : *p, f);
        fputs("\" -- \"$cur\"))", f);
    } else if (op->id == OPT_MODEL) {
        /* the presets, and config.json files */
        fputs("COMPREPLY=($(compgen -W \"$(\"$tp\" model list --format csv "
              "2>/dev/null | awk -F, 'NR > 1 { print $1 }')\" -- \"$cur\") "
              "$(compgen -f -- \"$cur\"))", f);
    } else if (op->id == OPT_SYSTEM || op->id == OPT_GPU) {
        /* hw list --format csv: the GPUs' table, a blank line, the
         * systems' */
        fprintf(f, "COMPREPLY=($(compgen -W \"$(\"$tp\" hw list --format csv "
                   "2>/dev/null | awk -F, -v want=%d '/^$/ { b = 1; next } "
                   "$1 == \"gpu\" || $1 == \"system\" { next } b == want "
                   "{ print $1 }')\" -- \"$cur\"))",
                op->id == OPT_SYSTEM);
    } else if (strstr(op->arg, "DIR")) {
        fputs("COMPREPLY=($(compgen -d -- \"$cur\"))", f);
    } else if (strstr(op->arg, "FILE") || strstr(op->arg, "SPEC")) {
        fputs("COMPREPLY=($(compgen -f -- \"$cur\"))", f);
    } else {
        fputs("COMPREPLY=()", f); /* a number or a list: nothing to offer */
    }
}

/* 1 if lib_commands[c] is the first of its group. */
static int first_of_group(int c)
{
    for (int d = 0; d < c; d++)
        if (strcmp(lib_commands[d].group, lib_commands[c].group) == 0) return 0;
    return 1;
}

static int cmd_completion(const lib_opts *o, emit_out *out, tp_err *e)
{
    (void)o;
    (void)e;
    FILE *f = out->f;
    fprintf(f, "# bash completion of trainplan %s, generated from its option "
               "table by\n# `trainplan completion bash`: source it, or "
               "install it as\n# /usr/share/bash-completion/completions/"
               "trainplan.\n", TRAINPLAN_VERSION);
    fputs("_trainplan()\n{\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev= tp=${COMP_WORDS[0]}\n"
          "    [ \"$COMP_CWORD\" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    COMPREPLY=()\n", f);
    /* the options that take a value, so their values are not commands */
    fputs("    local with_value=\"", f);
    for (int i = 0; i < N_OPTIONS; i++)
        if (lib_options[i].arg) {
            fprintf(f, " --%s", lib_options[i].name);
            if (lib_options[i].id < 256) fprintf(f, " -%c", lib_options[i].id);
        }
    fputs(" \"\n", f);
    /* the command so far: the first two words that are not options */
    fputs("    local cmd= n=0 i skip=0 w\n"
          "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
          "        w=${COMP_WORDS[i]}\n"
          "        if [ $skip = 1 ]; then skip=0; continue; fi\n"
          "        case \"$with_value\" in *\" $w \"*) skip=1; continue;; esac\n"
          "        case $w in -*) continue;; esac\n"
          "        if [ $n -lt 2 ]; then cmd=\"$cmd $w\"; n=$((n + 1)); fi\n"
          "    done\n"
          "    cmd=${cmd# }\n", f);
    /* a value of the option before the cursor */
    fputs("    case $prev in\n", f);
    for (int i = 0; i < N_OPTIONS; i++) {
        if (!lib_options[i].arg) continue;
        fprintf(f, "    --%s", lib_options[i].name);
        if (lib_options[i].id < 256) fprintf(f, "|-%c", lib_options[i].id);
        fputs(")\n        ", f);
        completion_values(f, &lib_options[i]);
        fputs("\n        return;;\n", f);
    }
    fputs("    esac\n", f);
    /* options: those of the command given, else all */
    fputs("    if [[ $cur == -* ]]; then\n        local opts\n"
          "        case $cmd in\n", f);
    for (int c = 0; c < N_COMMANDS; c++) {
        const lib_command *k = &lib_commands[c];
        fprintf(f, "        \"%s%s%s\") opts=\"", k->group,
                k->verb[0] ? " " : "", k->verb);
        for (int i = 0; i < N_OPTIONS; i++)
            if (lib_options[i].cmds & k->bit) fprintf(f, " --%s",
                                                      lib_options[i].name);
        fputs("\";;\n", f);
    }
    fputs("        *) opts=\"", f);
    for (int i = 0; i < N_OPTIONS; i++) fprintf(f, " --%s", lib_options[i].name);
    fputs("\";;\n        esac\n"
          "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
          "        return\n    fi\n", f);
    /* the command's words: a group, then its verb */
    fputs("    case $n in\n    0) COMPREPLY=($(compgen -W \"", f);
    for (int c = 0; c < N_COMMANDS; c++)
        if (first_of_group(c)) fprintf(f, " %s", lib_commands[c].group);
    fputs("\" -- \"$cur\"));;\n    1) case $cmd in\n", f);
    for (int c = 0; c < N_COMMANDS; c++) {
        if (!first_of_group(c) || !lib_commands[c].verb[0]) continue;
        fprintf(f, "        %s) COMPREPLY=($(compgen -W \"", lib_commands[c].group);
        for (int d = c; d < N_COMMANDS; d++)
            if (strcmp(lib_commands[d].group, lib_commands[c].group) == 0)
                fprintf(f, " %s", lib_commands[d].verb);
        fputs("\" -- \"$cur\"));;\n", f);
    }
    fputs("        *) COMPREPLY=($(compgen -f -- \"$cur\"));;\n        esac;;\n"
          "    *) COMPREPLY=($(compgen -f -- \"$cur\"));;\n    esac\n}\n"
          "complete -o filenames -F _trainplan trainplan\n", f);
    return TP_OK;
}
