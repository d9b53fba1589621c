/*
 * run.c - the trainplan command line as a function (cli_run, behind the
 * library's tp_run): parses options from one table, dispatches
 * subcommands from another, and turns statuses into exit codes. Data
 * goes to the caller's stream (or -o FILE), diagnostics to its error
 * stream; nothing here exits, and a second call in one process starts
 * afresh. The executable's main() (lib/tool.c) is one call of tp_run.
 *
 * Exit codes (README.md, docs/trainplan.1): 0 ok, 1 nothing feasible,
 * 64 usage, 65 bad input data, 66 missing file, 70 internal, 74 I/O,
 * 75 a sweep's -o locked by another sweep; 3 diff found changes,
 * 129/130/143 a sweep stopped by SIGHUP/SIGINT/SIGTERM.
 */
#include "cli.h"
#include "launch.h"
#include "search.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#ifndef TRAINPLAN_VERSION
#define TRAINPLAN_VERSION "0.0.0"
#endif

/* ---- subcommands ----------------------------------------------------- */

typedef int (*cmd_fn)(const cli_opts *, cli_out *, tp_err *);

enum {
    CMD_MODEL_LIST = 1u << 0,
    CMD_MODEL_SHOW = 1u << 1,
    CMD_HW_LIST = 1u << 2,
    CMD_HW_SHOW = 1u << 3,
    CMD_HW_CHECK = 1u << 4,
    CMD_OP_PREDICT = 1u << 5,
    CMD_OP_SHOW = 1u << 6,
    CMD_OP_CV = 1u << 7,
    CMD_COLL_SHOW = 1u << 8,
    CMD_COLL_CV = 1u << 9,
    CMD_HW_IMPORT = 1u << 10,
    CMD_ESTIMATE = 1u << 11,
    CMD_SEARCH = 1u << 12,
    CMD_SWEEP = 1u << 13,
    CMD_MERGE = 1u << 14,
    CMD_DIFF = 1u << 15,
    CMD_COMPLETION = 1u << 16,
    CMD_EST_SEARCH = CMD_ESTIMATE | CMD_SEARCH,
    CMD_OP = CMD_OP_PREDICT | CMD_OP_SHOW | CMD_OP_CV,
    CMD_COLL = CMD_COLL_SHOW | CMD_COLL_CV,
    CMD_ALL = 0x1ffffu
};

typedef struct cli_command {
    const char *group, *verb;
    unsigned bit;
    int min_args, max_args;
    const char *args;
    const char *summary;
    cmd_fn fn;
    int output_is_dir;   /* -o names a directory the command writes into */
    int args_read;       /* its arguments: ARGS_NAMES, ARGS_FILES (read:
                            no output may name one), ARGS_MODEL */
} cli_command;

/* What a command's positional arguments are, for cli_io_check. */
enum {
    ARGS_NAMES, /* names, not files (hw show NAME) */
    ARGS_FILES, /* files the command reads */
    ARGS_MODEL  /* a preset name or a config.json (space_model_is_path) */
};

static int cmd_completion(const cli_opts *o, cli_out *out, tp_err *e);

static const cli_command commands[] = {
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
     * in out_dir), not cli/out.c's temporary file */
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
#define N_COMMANDS ((int)(sizeof commands / sizeof commands[0]))

/* ---- options --------------------------------------------------------- */

enum opt_id {
    OPT_HELP = 'h',
    OPT_VERSION = 'V',
    OPT_FORMAT = 'f',
    OPT_OUTPUT = 'o',
    OPT_TP = 't',
    OPT_SEQ = 's',
    OPT_THREADS = 256,
    OPT_SEED,
    OPT_HWDB,
    OPT_LIST_OPTIONS,
    OPT_GPU,
    OPT_OP,
    OPT_TRAIN,
    OPT_SHAPES,
    OPT_SHAPE,
    OPT_DTYPE,
    OPT_KEEP_BAD,
    OPT_FOLDS,
    OPT_SYSTEM,
    OPT_BYTES,
    OPT_GROUP,
    OPT_NODES,
    OPT_GPN,
    OPT_PP = 'p',
    OPT_CP = 'c',
    OPT_MBS = 'b',
    OPT_GBS = 'B',
    OPT_GPUS = 'g',
    OPT_MODEL = 'm',
    OPT_RECOMPUTE = 'r',
    OPT_VPP_LAYERS = 300,
    OPT_VSTAGES,
    OPT_SP,
    OPT_NO_SP,
    OPT_DISTOPT,
    OPT_NO_DISTOPT,
    OPT_ZERO,
    OPT_PRECISION,
    OPT_TOKENS,
    OPT_OVERLAP,
    OPT_NO_OVERLAP,
    OPT_MAX_GPUS,
    OPT_MIN_GPUS,
    OPT_OBJECTIVE,
    OPT_TOP,
    OPT_PRICE,
    OPT_BUDGET_USD,
    OPT_BUDGET_GH,
    OPT_DEADLINE,
    OPT_FIX,
    OPT_MAX_MEM_FRAC,
    OPT_OPS,
    OPT_EXPLAIN,
    OPT_NO_TIMING,
    OPT_NO_PRUNE,
    OPT_SVG,
    OPT_TP_COMM_OVERLAP,
    OPT_NO_ASYNC_TP,
    OPT_TP_OVERLAP,
    OPT_ATTN_BACKEND,
    OPT_ATTN_DROPOUT,
    OPT_HIDDEN_DROPOUT,
    OPT_CP_COMM,
    OPT_FP8_RECIPE,
    OPT_DOC_LENGTH,
    OPT_FP8_PARAMS,
    OPT_PP_SCATTER_GATHER,
    OPT_CE_FUSION,
    OPT_EAGER,
    OPT_PP_OVERLAP,
    OPT_NO_PP_OVERLAP,
    OPT_FRAMEWORK,
    OPT_RECOMPUTE_METHOD,
    OPT_RECOMPUTE_LAYERS,
    OPT_RECOMPUTE_MODULES,
    OPT_GRAD_FP32,
    OPT_GRAD_BF16,
    OPT_PROGRESS,
    OPT_RESUME,
    OPT_OVERWRITE,
    OPT_SHARD,
    OPT_THRESHOLD,
    OPT_MEGATRON_ARGS,
    OPT_NEMO_OVERRIDES,
    OPT_TORCHTITAN_CONFIG,
    OPT_NEAR,
    OPT_SBATCH,
    OPT_TORCHTITAN_VERSION,
    OPT_NEMO_FORMAT,
    OPT_LAUNCH,
    OPT_STRICT,
    OPT_EP,
    OPT_ETP,
    OPT_MOE_DISPATCHER,
    OPT_MOE_IMBALANCE,
    OPT_MOE_COMM_OVERLAP,
    OPT_PP_SCHEDULE,
    OPT_MOE_ROUTER_PAD,
    OPT_MOE_FLEX_BACKEND,
    OPT_FP8_ACT_CACHE,
    OPT_PP_FIRST,
    OPT_PP_LAST,
    OPT_PP_ACCOUNT_EMBED,
    OPT_PP_ACCOUNT_LOSS,
    OPT_PP_LAYOUT,
    OPT_EXPANDABLE,
    OPT_NO_EXPANDABLE,
    /* memory savers and micro-batch groups (issue 28) */
    OPT_PA_OPTIMIZER,
    OPT_MAIN_GRADS_DTYPE,
    OPT_MAIN_PARAMS_DTYPE,
    OPT_EXP_AVG_DTYPE,
    OPT_EXP_AVG_SQ_DTYPE,
    OPT_OPT_OFFLOAD,
    OPT_OPT_OFFLOAD_FRACTION,
    OPT_OPT_OFFLOAD_OVERLAP,
    OPT_ACT_OFFLOAD_LAYERS,
    OPT_FINE_GRAINED_OFFLOAD,
    OPT_OFFLOAD_MODULES,
    OPT_OFFLOAD_FRACTION,
    OPT_MB_GROUP,
    OPT_NO_SAVERS,
    OPT_CUDA_GRAPH_IMPL,
    OPT_CUDA_GRAPH_SCOPE,
    OPT_FSDP_DOUBLE_BUFFER,
    OPT_MOE_PERMUTE_FUSION,
    OPT_NO_MOE_PERMUTE_FUSION,
    OPT_MOE_ROUTER_FUSION,
    OPT_NO_MOE_ROUTER_FUSION,
    /* your own run fed back (issue 31) */
    OPT_LOG,
    OPT_CALIBRATE_TO_LOG,
    OPT_ALL_LAYOUTS
};

/* The options that name a file the call reads or writes: what
 * cli_io_check compares before the command runs (out.c). --model is an
 * input where it names a config.json; --hwdb directories are not
 * compared (an output inside one is not refused). */
static const struct {
    int id;
    cli_io_role role;
} io_options[] = {
    {OPT_OUTPUT, CLI_IO_OUT}, /* CLI_IO_OUT_DIR where the command says */
    {OPT_SVG, CLI_IO_OUT},
    {OPT_SBATCH, CLI_IO_OUT},
    {OPT_MODEL, CLI_IO_IN},
    {OPT_MEGATRON_ARGS, CLI_IO_IN},
    {OPT_NEMO_OVERRIDES, CLI_IO_IN},
    {OPT_TORCHTITAN_CONFIG, CLI_IO_IN},
    {OPT_NEAR, CLI_IO_IN},
    {OPT_LOG, CLI_IO_IN},
    {OPT_TRAIN, CLI_IO_IN},
    {OPT_SHAPES, CLI_IO_IN},
};
#define N_IO_OPTIONS ((int)(sizeof io_options / sizeof io_options[0]))
/* File options one call may give (each of the above once or twice). */
#define MAX_IO_GIVEN 64

typedef struct cli_option {
    const char *name;
    int id;          /* short letter, or >= 256 for long-only */
    const char *arg; /* metavariable, NULL for a flag */
    unsigned cmds;   /* subcommands that take it */
    const char *help;
} cli_option;

static const cli_option options[] = {
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
     "the MoE SwiGLU inputs in fp8 and its output recomputed; memory "
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
     "indices per row kept instead; memory only, the step time stays the "
     "fused one's"},
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
     "the launches its records carry (default all; none: records about a "
     "tenth the size)"},
    {"threshold", OPT_THRESHOLD, "F", CMD_DIFF,
     "diff: relative change of time or cost that counts, >= 0 (default "
     "0.02)"},
};
#define N_OPTIONS ((int)(sizeof options / sizeof options[0]))

static const char *const format_names[CLI_FORMAT_COUNT] = {"table", "json",
                                                           "csv", "jsonl", "md"};
_Static_assert(sizeof format_names / sizeof format_names[0] == CLI_FORMAT_COUNT,
               "format_names mirrors cli_format");

/* Options whose values a job file (--megatron-args, ...) gives. */
static int job_sets(int id)
{
    static const int ids[] = {
        OPT_MODEL, OPT_TP, OPT_PP, OPT_CP, OPT_VPP_LAYERS, OPT_VSTAGES,
        OPT_MBS, OPT_GBS, OPT_SEQ, OPT_SP, OPT_NO_SP, OPT_RECOMPUTE,
        OPT_RECOMPUTE_METHOD, OPT_RECOMPUTE_LAYERS, OPT_RECOMPUTE_MODULES,
        OPT_DISTOPT,
        OPT_NO_DISTOPT, OPT_ZERO, OPT_PRECISION, OPT_FP8_RECIPE,
        OPT_FP8_PARAMS, OPT_TP_COMM_OVERLAP, OPT_TP_OVERLAP, OPT_NO_ASYNC_TP,
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
static const cli_command *help_command(int argc, char **argv)
{
    for (int a = 1; a < argc; a++)
        for (int i = 0; i < N_COMMANDS; i++) {
            const cli_command *c = &commands[i];
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
    cli_print_wrapped(f, text, at, at, width);
}

/* The help: every command and option, or with cmd that command's usage
 * and the options it takes. An option's name and argument longer than
 * its column go on a line of their own, the help under them. */
static void usage(FILE *f, const cli_command *cmd)
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
            snprintf(head, sizeof head, "%s %s %s", commands[i].group,
                     commands[i].verb, commands[i].args);
            fprintf(f, "  %-28s ", head);
            print_wrapped(f, commands[i].summary, 31, HELP_WIDTH);
        }
    }
    fprintf(f, "\noptions:\n");
    for (int i = 0; i < N_OPTIONS; i++) {
        if (cmd && !(options[i].cmds & cmd->bit)) continue;
        char head[256];
        if (options[i].id < 256)
            snprintf(head, sizeof head, "-%c, --%s%s%s", options[i].id,
                     options[i].name, options[i].arg ? " " : "",
                     options[i].arg ? options[i].arg : "");
        else
            snprintf(head, sizeof head, "    --%s%s%s", options[i].name,
                     options[i].arg ? " " : "",
                     options[i].arg ? options[i].arg : "");
        if (strlen(head) > 40)
            fprintf(f, "  %s\n  %-40s ", head, "");
        else
            fprintf(f, "  %-40s ", head);
        print_wrapped(f, options[i].help, 43, HELP_WIDTH);
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
static int parse_int(const char *opt, const char *s, long long lo,
                     long long hi, long long *out, tp_err *e)
{
    long long v;
    if (tp_parse_int(s, lo, hi, &v))
        return tp_errf(e, TP_EUSAGE,
                       "--%s: expected an integer in [%lld, %lld], found '%s'",
                       opt, lo, hi, s);
    *out = v;
    return TP_OK;
}

/* One of n names (any case) into *out, its index; the message lists
 * them all. */
static int parse_name(const char *opt, const char *s,
                      const char *const *names, int n, int *out, tp_err *e)
{
    for (int i = 0; i < n; i++)
        if (tp_streq_ci(s, names[i])) {
            *out = i;
            return TP_OK;
        }
    char list[256] = "";
    size_t len = 0;
    for (int i = 0; i < n && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                                i == 0 ? "" : i == n - 1 ? " or " : ", ",
                                names[i]);
    return tp_errf(e, TP_EUSAGE, "--%s: expected %s, found '%s'", opt, list, s);
}

/* --doc-length LEN or LEN:SHARE,LEN:SHARE,...: the documents packed into
 * a sequence, by length, with the share of the tokens each length holds
 * (summing to 1). */
static int parse_docs(const char *s, cli_opts *o, tp_err *e)
{
    char buf[512];
    if (strlen(s) >= sizeof buf)
        return tp_errf(e, TP_EUSAGE, "--doc-length: too long (at most %d "
                       "characters)", (int)sizeof buf - 1);
    tp_strlcpy(buf, s, sizeof buf);
    int n = 0;
    double sum = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n == SPACE_MAX_DOC_BUCKETS)
            return tp_errf(e, TP_EUSAGE, "--doc-length '%s': at most %d "
                           "lengths", s, SPACE_MAX_DOC_BUCKETS);
        char *colon = strchr(t, ':');
        if (colon) *colon = '\0';
        long long len;
        if (tp_parse_int(t, 1, 10000000, &len))
            return tp_errf(e, TP_EUSAGE, "--doc-length '%s': expected a "
                           "document length in [1, 10000000] tokens, found "
                           "'%s'", s, t);
        double share = 1;
        if (colon) {
            if (tp_parse_num(colon + 1, &share) || !(share > 0) || share > 1)
                return tp_errf(e, TP_EUSAGE, "--doc-length '%s': expected "
                               "the share of tokens in (0, 1] after '%lld:', "
                               "found '%s'", s, len, colon + 1);
        } else if (strchr(s, ',')) {
            return tp_errf(e, TP_EUSAGE, "--doc-length '%s': with several "
                           "lengths give each its share, LEN:SHARE", s);
        }
        o->job.doc_len[n] = len, o->job.doc_share[n] = share;
        sum += share;
        n++;
    }
    if (n == 0 || fabs(sum - 1) > 1e-3)
        return tp_errf(e, TP_EUSAGE, "--doc-length '%s': the shares sum to "
                       "%g; expected 1", s, sum);
    o->job.n_docs = n;
    return TP_OK;
}

/* The SI suffixes a count or an amount may carry: powers of 1000, as
 * "2T tokens" and "$1.5M" are written (never 1024: a sequence of "8k"
 * means 8192, so lengths and batch sizes take none, parse_plain). G and
 * B are both 1e9 (giga, billion). */
static const struct { char c; double mul; } si_suffixes[] = {
    {'k', 1e3}, {'K', 1e3}, {'M', 1e6}, {'G', 1e9}, {'B', 1e9}, {'T', 1e12}};

int cli_parse_si(const char *s, double *out)
{
    char num[64];
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n >= sizeof num) return -1;
    memcpy(num, s, n + 1);
    double mul = 1;
    for (size_t i = 0; i < sizeof si_suffixes / sizeof si_suffixes[0]; i++)
        if (num[n - 1] == si_suffixes[i].c) {
            mul = si_suffixes[i].mul;
            num[n - 1] = '\0';
            break;
        }
    double v;
    if (tp_parse_num(num, &v)) return -1;
    v *= mul;
    if (!isfinite(v)) return -1;
    /* 1.1T is 1.1 x 1e12 in binary: 1100000000000.0002; a count it
     * names is whole */
    if (mul > 1 && fabs(v - nearbyint(v)) <= 1e-9 * fabs(v)) v = nearbyint(v);
    *out = v;
    return 0;
}

int cli_parse_count(const char *s, long long lo, long long hi, long long *out)
{
    size_t n = s ? strlen(s) : 0;
    if (n < 2 || isdigit((unsigned char)s[n - 1]))
        return tp_parse_int(s, lo, hi, out);
    /* a suffix: digits[.digits] before it, no sign, no exponent (as a
     * plain count is strict: 8.0 and 1e1 are refused, issue 17) */
    size_t i = 0, digits = 0;
    while (i < n - 1 && isdigit((unsigned char)s[i])) i++, digits++;
    if (i < n - 1 && s[i] == '.') {
        i++;
        while (i < n - 1 && isdigit((unsigned char)s[i])) i++, digits++;
    }
    double v;
    if (i != n - 1 || digits == 0 || cli_parse_si(s, &v) || v != floor(v)
        || v < (double)lo || v > (double)hi)
        return -1;
    *out = (long long)v;
    return 0;
}

/* How a count or amount may be written, for the messages. */
#define SI_FORM "a number with an optional SI suffix k, M, G or B, T " \
                "(powers of 1000)"

/* Parses a number in (0, hi]; 0 on success. */
static int parse_pos(const char *opt, const char *s, double hi,
                     const char *unit, double *out, tp_err *e)
{
    double v;
    if (tp_parse_num(s, &v) || !(v > 0) || v > hi)
        return tp_errf(e, TP_EUSAGE,
                       "--%s: expected a number (%s) in (0, %g], found '%s'",
                       opt, unit, hi, s);
    *out = v;
    return TP_OK;
}

/* An amount in (0, hi], with an SI suffix (--budget-usd 1.5M); 0 on
 * success. */
static int parse_amount(const char *opt, const char *s, double hi,
                        const char *unit, double *out, tp_err *e)
{
    double v;
    if (cli_parse_si(s, &v) || !(v > 0) || v > hi)
        return tp_errf(e, TP_EUSAGE,
                       "--%s: expected %s in (0, %g], %s (e.g. 1.5M), found "
                       "'%s'",
                       opt, unit, hi, SI_FORM, s);
    *out = v;
    return TP_OK;
}

/* A count in [lo, hi], an integer or one with an SI suffix (--max-gpus
 * 2k); 0 on success. */
static int parse_count(const char *opt, const char *s, long long lo,
                       long long hi, long long *out, tp_err *e)
{
    long long v;
    if (cli_parse_count(s, lo, hi, &v))
        return tp_errf(e, TP_EUSAGE,
                       "--%s: expected an integer in [%lld, %lld], or one "
                       "with an SI suffix k, M, G or B, T (2k = 2000), found "
                       "'%s'",
                       opt, lo, hi, s);
    *out = v;
    return TP_OK;
}

/* A length or batch size: a plain integer in [lo, hi]. A suffix is
 * refused by name: "8k" is 8192 to most who write it and 8000 in SI. */
static int parse_plain(const char *opt, const char *s, long long lo,
                       long long hi, long long *out, tp_err *e)
{
    double v;
    size_t n = strlen(s);
    if (n > 1 && !isdigit((unsigned char)s[n - 1]) && !cli_parse_si(s, &v))
        return tp_errf(e, TP_EUSAGE,
                       "--%s: '%s' has an SI suffix, which this option does "
                       "not take (8k is 8192 to some, 8000 to others); "
                       "expected the plain integer in [%lld, %lld], e.g. %s",
                       opt, s, lo, hi,
                       strcmp(opt, "seq-length") == 0 ? "8192" : "1024");
    return parse_int(opt, s, lo, hi, out, e);
}

/* A duration: a number with s, m, h, d or w (seconds without). */
static int parse_duration(const char *s, double *out, tp_err *e)
{
    static const struct { char c; double s; } units[] = {
        {'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}, {'w', 604800}};
    /* The number, then at most one unit letter. */
    char num[64];
    size_t n = strlen(s);
    double mul = 1, v = 0;
    int bad = n == 0 || n >= sizeof num;
    if (!bad) {
        memcpy(num, s, n + 1);
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (num[n - 1] == units[i].c) mul = units[i].s, num[n - 1] = '\0';
        bad = tp_parse_num(num, &v) != 0;
    }
    if (bad || !(v > 0) || v * mul > 3.2e9)
        return tp_errf(e, TP_EUSAGE,
                       "--deadline: expected a duration in (0, 100 years], "
                       "e.g. 30d, 72h, 90m or 3600s, found '%s'",
                       s);
    *out = v * mul;
    return TP_OK;
}

int cli_option_kind(const char *name)
{
    for (int i = 0; i < N_OPTIONS; i++)
        if (strcmp(options[i].name, name) == 0) return options[i].arg ? 1 : 0;
    return -1;
}

const char *cli_option_name(int i)
{
    return i >= 0 && i < N_OPTIONS ? options[i].name : NULL;
}

static const cli_option *option_by_id(int id)
{
    for (int i = 0; i < N_OPTIONS; i++)
        if (options[i].id == id) return &options[i];
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
static void completion_values(FILE *f, const cli_option *op)
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

/* 1 if commands[c] is the first of its group. */
static int first_of_group(int c)
{
    for (int d = 0; d < c; d++)
        if (strcmp(commands[d].group, commands[c].group) == 0) return 0;
    return 1;
}

static int cmd_completion(const cli_opts *o, cli_out *out, tp_err *e)
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
        if (options[i].arg) {
            fprintf(f, " --%s", options[i].name);
            if (options[i].id < 256) fprintf(f, " -%c", options[i].id);
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
        if (!options[i].arg) continue;
        fprintf(f, "    --%s", options[i].name);
        if (options[i].id < 256) fprintf(f, "|-%c", options[i].id);
        fputs(")\n        ", f);
        completion_values(f, &options[i]);
        fputs("\n        return;;\n", f);
    }
    fputs("    esac\n", f);
    /* options: those of the command given, else all */
    fputs("    if [[ $cur == -* ]]; then\n        local opts\n"
          "        case $cmd in\n", f);
    for (int c = 0; c < N_COMMANDS; c++) {
        const cli_command *k = &commands[c];
        fprintf(f, "        \"%s%s%s\") opts=\"", k->group,
                k->verb[0] ? " " : "", k->verb);
        for (int i = 0; i < N_OPTIONS; i++)
            if (options[i].cmds & k->bit) fprintf(f, " --%s", options[i].name);
        fputs("\";;\n", f);
    }
    fputs("        *) opts=\"", f);
    for (int i = 0; i < N_OPTIONS; i++) fprintf(f, " --%s", options[i].name);
    fputs("\";;\n        esac\n"
          "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
          "        return\n    fi\n", f);
    /* the command's words: a group, then its verb */
    fputs("    case $n in\n    0) COMPREPLY=($(compgen -W \"", f);
    for (int c = 0; c < N_COMMANDS; c++)
        if (first_of_group(c)) fprintf(f, " %s", commands[c].group);
    fputs("\" -- \"$cur\"));;\n    1) case $cmd in\n", f);
    for (int c = 0; c < N_COMMANDS; c++) {
        if (!first_of_group(c) || !commands[c].verb[0]) continue;
        fprintf(f, "        %s) COMPREPLY=($(compgen -W \"", commands[c].group);
        for (int d = c; d < N_COMMANDS; d++)
            if (strcmp(commands[d].group, commands[c].group) == 0)
                fprintf(f, " %s", commands[d].verb);
        fputs("\" -- \"$cur\"));;\n", f);
    }
    fputs("        *) COMPREPLY=($(compgen -f -- \"$cur\"));;\n        esac;;\n"
          "    *) COMPREPLY=($(compgen -f -- \"$cur\"));;\n    esac\n}\n"
          "complete -o filenames -F _trainplan trainplan\n", f);
    return TP_OK;
}

int cli_run(int argc, char **argv, FILE *out_f, FILE *err)
{
    return cli_run_in(argc, argv, out_f, err, NULL);
}

int cli_run_in(int argc, char **argv, FILE *out_f, FILE *err, cli_session *session)
{
    cli_opts o;
    memset(&o, 0, sizeof o);
    o.session = session;
    o.seed = 42;
    o.job.tp = 1;
    o.dtype = -1;
    o.folds = 5;
    o.job.sp = o.job.recompute = o.job.zero = o.job.precision = -1;
    o.job.attn_dropout = o.job.hidden_dropout = -1;
    o.threshold = -1;
    o.job.offload_fraction = -1;
    tp_err e = {0}, ge = {0};
    int distopt = 0;      /* --use- (1) or --no-use-distributed-optimizer (-1) */
    long long zero_arg = -1; /* --zero-stage */
    o.err = err;

    /* Generate getopt's tables from ours. */
    struct option longopts[N_OPTIONS + 1];
    char shortopts[2 * N_OPTIONS + 2];
    size_t ns = 0;
    for (int i = 0; i < N_OPTIONS; i++) {
        longopts[i] = (struct option){options[i].name,
                                      options[i].arg ? required_argument
                                                     : no_argument,
                                      NULL, options[i].id};
        if (options[i].id < 256) {
            shortopts[ns++] = (char)options[i].id;
            if (options[i].arg) shortopts[ns++] = ':';
        }
    }
    longopts[N_OPTIONS] = (struct option){NULL, 0, NULL, 0};
    shortopts[ns] = '\0';

    int seen[N_OPTIONS] = {0};
    /* the file options as given, in order, for cli_io_check */
    struct {
        const char *path;
        int k; /* io_options[k] */
    } io_given[MAX_IO_GIVEN];
    int n_io_given = 0;
    cli_getopt g = {0};
    int c, rc = TP_OK;
    const char *bad_format = NULL; /* --format's value when not a format */
    while ((c = cli_getopt_next(&g, argc, argv, shortopts, longopts)) != -1) {
        long long v = 0;
        if (c == '?') {
            const cli_option *bad = g.opt ? option_by_id(g.opt) : NULL;
            if (bad && g.no_value)
                fprintf(err, "trainplan: --%s takes no value (found '%s')\n",
                        bad->name, g.bad);
            else if (bad && g.opt < 256 && g.bad[1] != '-')
                fprintf(err, "trainplan: -%c needs an argument\n", g.opt);
            else if (bad)
                fprintf(err, "trainplan: --%s needs an argument\n",
                        bad->name);
            else
                fprintf(err, "trainplan: unknown option '%s' (try --help)\n",
                        g.bad);
            return TP_EUSAGE;
        }
        for (int i = 0; i < N_OPTIONS; i++)
            if (options[i].id == c) seen[i] = 1;
        for (int k = 0; k < N_IO_OPTIONS; k++) {
            if (io_options[k].id != c) continue;
            if (n_io_given == MAX_IO_GIVEN) {
                fprintf(err, "trainplan: more than %d file options; give "
                             "each once\n", MAX_IO_GIVEN);
                return TP_EUSAGE;
            }
            io_given[n_io_given].path = g.arg;
            io_given[n_io_given].k = k;
            n_io_given++;
        }
        switch (c) {
        case OPT_HELP:
            usage(out_f, help_command(argc, argv));
            return TP_OK;
        case OPT_VERSION:
            fprintf(out_f, "trainplan %s\n", TRAINPLAN_VERSION);
            return TP_OK;
        case OPT_LIST_OPTIONS:
            for (int i = 0; i < N_OPTIONS; i++) fprintf(out_f, "--%s\n", options[i].name);
            return TP_OK;
        case OPT_FORMAT: {
            int k = -1;
            for (int i = 0; i < CLI_FORMAT_COUNT; i++)
                if (tp_streq_ci(g.arg, format_names[i])) k = i;
            if (k < 0) { /* said once the command is known */
                bad_format = g.arg;
                break;
            }
            o.format = (cli_format)k;
            o.format_set = 1;
            break;
        }
        case OPT_OUTPUT:
            o.output = g.arg;
            break;
        case OPT_THREADS:
            rc = parse_int("threads", g.arg, 1, 1024, &v, &e);
            o.threads = (int)v;
            break;
        case OPT_SEED:
            rc = parse_int("seed", g.arg, 0, LLONG_MAX, &v, &e);
            o.seed = (uint64_t)v;
            break;
        case OPT_HWDB:
            if (o.n_hwdb == CLI_MAX_HWDB)
                rc = tp_errf(&e, TP_EUSAGE, "--hwdb: at most %d directories",
                             CLI_MAX_HWDB);
            else
                o.hwdb_dirs[o.n_hwdb++] = g.arg;
            break;
        case OPT_SEQ:
            rc = parse_plain("seq-length", g.arg, 1, 16777216, &v, &e);
            o.job.seq_length = v;
            break;
        case OPT_TP:
            rc = parse_int("tensor-model-parallel-size", g.arg, 1, 65536, &v,
                           &e);
            o.job.tp = v;
            o.job.tp_set = 1;
            break;
        case OPT_MODEL:
            o.job.model = g.arg;
            break;
        case OPT_GPUS: /* an integer for estimate, a list for search:
                          checked by the command */
            o.gpus_arg = g.arg;
            o.job.gpus = parse_count("gpus", g.arg, 1, 10000000, &v, &ge) ? -1 : v;
            break;
        case OPT_MAX_GPUS:
            rc = parse_count("max-gpus", g.arg, 1, 10000000, &v, &e);
            o.max_gpus = v;
            break;
        case OPT_MIN_GPUS:
            rc = parse_count("min-gpus", g.arg, 1, 10000000, &v, &e);
            o.min_gpus = v;
            break;
        case OPT_TOP:
            rc = parse_int("top", g.arg, 1, 1000, &v, &e);
            o.top_k = (int)v;
            break;
        case OPT_OBJECTIVE:
            rc = parse_name("objective", g.arg, search_objective_names,
                            SEARCH_OBJECTIVE_COUNT, &o.objective, &e);
            break;
        case OPT_PRICE:
            rc = parse_amount("price", g.arg, 1e6,
                              "a price in USD per GPU-hour", &o.price, &e);
            break;
        case OPT_BUDGET_USD:
            rc = parse_amount("budget-usd", g.arg, 1e15, "an amount in USD",
                              &o.budget_usd, &e);
            break;
        case OPT_BUDGET_GH:
            rc = parse_amount("budget-gpu-hours", g.arg, 1e15,
                              "a number of GPU-hours", &o.budget_gpu_hours, &e);
            break;
        case OPT_DEADLINE:
            rc = parse_duration(g.arg, &o.deadline_s, &e);
            break;
        case OPT_FIX:
            o.fix = g.arg;
            break;
        case OPT_MAX_MEM_FRAC:
            rc = parse_pos("max-memory-fraction", g.arg, 1, "fraction",
                           &o.max_mem_fraction, &e);
            break;
        case OPT_EXPLAIN:
            o.explain = 1;
            break;
        case OPT_OPS:
            o.ops = 1;
            break;
        case OPT_NO_TIMING:
            o.no_timing = 1;
            break;
        case OPT_NO_PRUNE:
            o.no_prune = 1;
            break;
        case OPT_SVG:
            o.svg = g.arg;
            break;
        case OPT_PP:
            rc = parse_int("pipeline-model-parallel-size", g.arg, 1, 65536,
                           &v, &e);
            o.job.pp = v;
            break;
        case OPT_CP:
            rc = parse_int("context-parallel-size", g.arg, 1, 65536, &v, &e);
            o.job.cp = v;
            break;
        case OPT_VPP_LAYERS:
            rc = parse_int("num-layers-per-virtual-pipeline-stage", g.arg, 1,
                           1000000, &v, &e);
            o.job.vpp_layers = v;
            break;
        case OPT_VSTAGES:
            rc = parse_int("num-virtual-stages-per-pipeline-rank", g.arg, 1,
                           1024, &v, &e);
            o.job.vstages = v;
            break;
        case OPT_PP_FIRST:
            rc = parse_int("decoder-first-pipeline-num-layers", g.arg, 1,
                           100000, &v, &e);
            o.job.pp_first = v;
            o.job.split_set = 1;
            break;
        case OPT_PP_LAST:
            rc = parse_int("decoder-last-pipeline-num-layers", g.arg, 1,
                           100000, &v, &e);
            o.job.pp_last = v;
            o.job.split_set = 1;
            break;
        case OPT_PP_ACCOUNT_EMBED:
            o.job.pp_account |= SPACE_PP_EMBED;
            o.job.split_set = 1;
            break;
        case OPT_PP_ACCOUNT_LOSS:
            o.job.pp_account |= SPACE_PP_LOSS;
            o.job.split_set = 1;
            break;
        case OPT_PP_LAYOUT: {
            char why[320];
            if (space_pp_layout_parse(g.arg, &o.job.pp_layout_store, why,
                                      sizeof why))
                rc = tp_errf(&e, TP_EUSAGE, "--pipeline-model-parallel-"
                             "layout: %s", why);
            o.job.pp_layout = &o.job.pp_layout_store;
            o.job.split_set = 1;
            break;
        }
        case OPT_MBS:
            rc = parse_plain("micro-batch-size", g.arg, 1, 1000000, &v, &e);
            o.job.mbs = v;
            break;
        case OPT_GBS:
            rc = parse_plain("global-batch-size", g.arg, 1, 100000000, &v, &e);
            o.job.gbs = v;
            break;
        case OPT_SP:
            o.job.sp = 1;
            break;
        case OPT_NO_SP:
            o.job.sp = 0;
            break;
        case OPT_RECOMPUTE:
            rc = parse_name("recompute-granularity", g.arg,
                            space_recompute_names, SPACE_RECOMPUTE_COUNT,
                            &o.job.recompute, &e);
            break;
        case OPT_RECOMPUTE_METHOD:
            rc = parse_name("recompute-method", g.arg,
                            space_recompute_method_names,
                            SPACE_RECOMPUTE_METHOD_COUNT, &o.job.recompute_method,
                            &e);
            o.job.sw_set |= SEARCH_SW_RC_METHOD;
            break;
        case OPT_RECOMPUTE_LAYERS:
            rc = parse_int("recompute-num-layers", g.arg, 1, 1000000, &v, &e);
            o.job.recompute_layers = v;
            break;
        case OPT_RECOMPUTE_MODULES: {
            size_t bad = space_rc_modules_parse(g.arg, &o.job.recompute_modules);
            if (bad)
                rc = tp_errf(&e, TP_EUSAGE,
                             "--recompute-modules: expected a comma-separated "
                             "list of core_attn, layernorm, moe_act, "
                             "mla_up_proj, mlp, moe, shared_experts, found "
                             "'%s'%s%s",
                             g.arg, bad > 1 ? " at " : "",
                             bad > 1 ? g.arg + bad - 1 : "");
            break;
        }
        case OPT_GRAD_FP32:
        case OPT_GRAD_BF16: {
            int want = c == OPT_GRAD_FP32 ? 4 : 2;
            if ((o.job.sw_set & SEARCH_SW_GRAD) && o.job.grad_bytes != want)
                rc = tp_errf(&e, TP_EUSAGE,
                             "--accumulate-allreduce-grads-in-fp32 and "
                             "--grad-reduce-in-bf16 contradict each other: "
                             "give one");
            o.job.grad_bytes = want;
            o.job.sw_set |= SEARCH_SW_GRAD;
            break;
        }
        case OPT_DISTOPT:
        case OPT_NO_DISTOPT:
            if (distopt && distopt != (c == OPT_DISTOPT ? 1 : -1))
                rc = tp_errf(&e, TP_EUSAGE,
                             "--use-distributed-optimizer and "
                             "--no-use-distributed-optimizer: give one");
            distopt = c == OPT_DISTOPT ? 1 : -1;
            break;
        case OPT_ZERO:
            rc = parse_int("zero-stage", g.arg, 0, 3, &v, &e);
            zero_arg = v;
            break;
        case OPT_PRECISION:
            o.job.precision = hw_dtype_parse(g.arg);
            if (tp_streq_ci(g.arg, "mxfp8")) { /* fp8 in MXFP8 blocks */
                o.job.precision = HW_FP8;
                o.job.fp8_recipe = SPACE_FP8_MXFP8;
                o.job.sw_set |= SEARCH_SW_FP8;
            } else if (tp_streq_ci(g.arg, "nvfp4")) {
                o.job.precision = HW_FP4;
            } else if (o.job.precision != HW_BF16 && o.job.precision != HW_FP16
                       && o.job.precision != HW_FP8) {
                rc = tp_errf(&e, TP_EUSAGE,
                             "--precision: expected bf16, fp16, fp8, mxfp8 "
                             "or nvfp4, found '%s'",
                             g.arg);
            }
            break;
        case OPT_OVERLAP:
            o.job.no_overlap = 0;
            o.job.sw_set |= SEARCH_SW_DP;
            break;
        case OPT_NO_OVERLAP:
            o.job.no_overlap = 1;
            o.job.sw_set |= SEARCH_SW_DP;
            break;
        case OPT_TP_COMM_OVERLAP:
            o.job.tp_overlap = SPACE_TP_OVERLAP_ALL;
            o.job.sw_set |= SEARCH_SW_TP;
            break;
        case OPT_NO_ASYNC_TP:
            o.job.tp_overlap = SPACE_TP_OVERLAP_NONE;
            o.job.sw_set |= SEARCH_SW_TP;
            break;
        case OPT_TP_OVERLAP:
            rc = parse_name("tp-overlap", g.arg, space_tp_overlap_names,
                            SPACE_TP_OVERLAP_COUNT, &o.job.tp_overlap, &e);
            o.job.sw_set |= SEARCH_SW_TP;
            break;
        case OPT_CE_FUSION:
            o.job.ce_fusion = 1;
            break;
        case OPT_PP_SCATTER_GATHER:
            o.job.pp_scatter_gather = 1;
            o.job.sw_set |= SEARCH_SW_SCATTER;
            break;
        case OPT_PP_OVERLAP:
        case OPT_NO_PP_OVERLAP:
            o.job.no_pp_overlap = c == OPT_NO_PP_OVERLAP;
            o.job.sw_set |= SEARCH_SW_PP;
            break;
        case OPT_EAGER:
            o.job.eager = 1;
            o.job.sw_set |= SEARCH_SW_EAGER;
            break;
        case OPT_FRAMEWORK:
            rc = parse_name("framework", g.arg, space_framework_names,
                            SPACE_FW_COUNT, &o.job.framework, &e);
            break;
        case OPT_FP8_PARAMS:
            o.job.fp8_params = 1;
            break;
        case OPT_EXPANDABLE:
        case OPT_NO_EXPANDABLE:
            o.job.alloc_expandable = c == OPT_EXPANDABLE;
            o.job.sw_set |= SEARCH_SW_ALLOC;
            break;
        case OPT_DOC_LENGTH:
            rc = parse_docs(g.arg, &o, &e);
            break;
        case OPT_FP8_RECIPE:
            rc = parse_name("fp8-recipe", g.arg, space_fp8_recipe_names,
                            SPACE_FP8_RECIPE_COUNT, &o.job.fp8_recipe, &e);
            o.job.sw_set |= SEARCH_SW_FP8;
            break;
        case OPT_CP_COMM:
            rc = parse_name("cp-comm-type", g.arg, space_cp_comm_names,
                            SPACE_CP_COMM_COUNT, &o.job.cp_comm, &e);
            o.job.sw_set |= SEARCH_SW_CP;
            break;
        case OPT_ATTN_BACKEND:
            rc = parse_name("attention-backend", g.arg, space_attn_names,
                            SPACE_ATTN_COUNT, &o.job.attn_backend, &e);
            o.job.sw_set |= SEARCH_SW_FLASH;
            break;
        case OPT_ATTN_DROPOUT:
        case OPT_HIDDEN_DROPOUT: {
            const char *name = c == OPT_ATTN_DROPOUT ? "attention-dropout"
                                                     : "hidden-dropout";
            double p = -1;
            if (tp_parse_num(g.arg, &p) || !(p >= 0 && p <= 1))
                rc = tp_errf(&e, TP_EUSAGE,
                             "--%s: expected a probability from 0 to 1, "
                             "found '%s'",
                             name, g.arg);
            else if (c == OPT_ATTN_DROPOUT)
                o.job.attn_dropout = p;
            else
                o.job.hidden_dropout = p;
            break;
        }
        case OPT_TOKENS: {
            double t = 0;
            if (cli_parse_si(g.arg, &t) || !(t >= 1) || t > 1e18
                || t != floor(t))
                rc = tp_errf(&e, TP_EUSAGE,
                             "--tokens: expected a whole number of tokens in "
                             "[1, 1e18], %s, e.g. 300e9, 300B or 2T, found "
                             "'%s'",
                             SI_FORM, g.arg);
            o.job.tokens = t;
            break;
        }
        case OPT_GPU:
            o.gpu = g.arg;
            break;
        case OPT_OP:
            o.op = g.arg;
            break;
        case OPT_TRAIN:
            o.train = g.arg;
            break;
        case OPT_SHAPES:
            o.shapes = g.arg;
            break;
        case OPT_SHAPE:
            o.shape = g.arg;
            break;
        case OPT_DTYPE:
            o.dtype = hw_dtype_parse(g.arg);
            if (o.dtype < 0)
                rc = tp_errf(&e, TP_EUSAGE,
                             "--dtype: expected fp32, tf32, fp16, bf16, "
                             "fp8 or fp4, found '%s'",
                             g.arg);
            break;
        case OPT_KEEP_BAD:
            o.keep_bad = 1;
            break;
        case OPT_FOLDS:
            rc = parse_int("folds", g.arg, 2, 20, &v, &e);
            o.folds = (int)v;
            break;
        case OPT_SYSTEM:
            o.system = g.arg;
            break;
        case OPT_BYTES:
            o.bytes = g.arg;
            break;
        case OPT_GROUP:
            rc = cli_parse_group(g.arg, &o.nodes, &o.per_node, &e);
            break;
        case OPT_NODES:
            rc = parse_count("nodes", g.arg, 1, 1000000, &v, &e);
            o.job.opt_nodes = (int)v;
            break;
        case OPT_GPN:
            rc = parse_int("gpus-per-node", g.arg, 1, 4096, &v, &e);
            o.job.opt_per_node = (int)v;
            break;
        /* issue 7: sweep, merge, diff */
        case OPT_PROGRESS:
            o.progress = 1;
            break;
        case OPT_RESUME:
            o.resume = 1;
            break;
        case OPT_OVERWRITE:
            o.overwrite = 1;
            break;
        case OPT_SHARD: {
            long long i = -1, n = 0;
            if (tp_parse_int_pair(g.arg, "/", 0, 999999, 1, 1000000, &i, &n)
                || i >= n)
                rc = tp_errf(&e, TP_EUSAGE,
                             "--shard: expected I/N with 0 <= I < N <= "
                             "1000000, e.g. 0/4, found '%s'",
                             g.arg);
            o.shard_i = (int)i;
            o.shard_n = (int)n;
            break;
        }
        case OPT_THRESHOLD: {
            double t = -1;
            if (tp_parse_num(g.arg, &t) || !(t >= 0) || t > 1e6)
                rc = tp_errf(&e, TP_EUSAGE,
                             "--threshold: expected a relative change >= 0, "
                             "e.g. 0.02, found '%s'",
                             g.arg);
            o.threshold = t;
            break;
        }
        case OPT_SBATCH:
            o.sbatch = g.arg;
            break;
        case OPT_EP:
            rc = parse_int("ep", g.arg, 1, 1000000, &v, &e);
            o.job.ep = v;
            break;
        case OPT_ETP:
            rc = parse_int("etp", g.arg, 1, 1024, &v, &e);
            o.job.etp = v;
            break;
        case OPT_MOE_DISPATCHER:
            rc = parse_name("moe-dispatcher", g.arg,
                            space_moe_dispatcher_names,
                            SPACE_MOE_DISPATCHER_COUNT, &o.job.moe_dispatcher, &e);
            break;
        case OPT_MOE_COMM_OVERLAP:
            rc = parse_name("moe-comm-overlap", g.arg,
                            space_moe_overlap_names, SPACE_MOE_OVERLAP_COUNT,
                            &o.job.moe_comm_overlap, &e);
            break;
        case OPT_PP_SCHEDULE: {
            /* PyTorch's names (get_schedule_class) as aliases */
            static const struct { const char *alias; int sched; } pt[] = {
                {"interleaved", SPACE_PP_1F1B},
                {"Interleaved1F1B", SPACE_PP_1F1B},
                {"InterleavedZeroBubble", SPACE_PP_ZB1P},
                {"ZBVZeroBubble", SPACE_PP_ZBV},
            };
            int hit = 0;
            for (size_t i = 0; i < sizeof pt / sizeof pt[0]; i++)
                if (tp_streq_ci(g.arg, pt[i].alias)) {
                    o.job.pp_schedule = pt[i].sched;
                    hit = 1;
                }
            if (!hit)
                rc = parse_name("pipeline-schedule", g.arg,
                                space_pp_schedule_names,
                                SPACE_PP_SCHEDULE_COUNT, &o.job.pp_schedule, &e);
            o.job.pp_schedule_set = 1;
            break;
        }
        case OPT_MOE_ROUTER_PAD:
            o.job.moe_router_pad = 1;
            break;
        case OPT_PA_OPTIMIZER:
            o.job.pa_optimizer = 1;
            break;
        case OPT_MAIN_GRADS_DTYPE:
        case OPT_MAIN_PARAMS_DTYPE:
        case OPT_EXP_AVG_DTYPE:
        case OPT_EXP_AVG_SQ_DTYPE: {
            /* Megatron-LM's argparse choices for each */
            static const char *const grads[] = {"fp32", "bf16"};
            static const char *const params[] = {"fp32", "fp16"};
            static const int grads_d[] = {SPACE_OPT_FP32, SPACE_OPT_BF16};
            static const int params_d[] = {SPACE_OPT_FP32, SPACE_OPT_FP16};
            int k = 0;
            if (c == OPT_MAIN_GRADS_DTYPE) {
                rc = parse_name("main-grads-dtype", g.arg, grads, 2, &k, &e);
                o.job.main_grads_dtype = grads_d[k];
            } else if (c == OPT_MAIN_PARAMS_DTYPE) {
                rc = parse_name("main-params-dtype", g.arg, params, 2, &k,
                                &e);
                o.job.main_params_dtype = params_d[k];
            } else {
                rc = parse_name(c == OPT_EXP_AVG_DTYPE ? "exp-avg-dtype"
                                                       : "exp-avg-sq-dtype",
                                g.arg, space_opt_dtype_names,
                                SPACE_OPT_DTYPE_COUNT, &k, &e);
                if (c == OPT_EXP_AVG_DTYPE)
                    o.job.exp_avg_dtype = k;
                else
                    o.job.exp_avg_sq_dtype = k;
            }
            break;
        }
        case OPT_OPT_OFFLOAD:
            o.job.opt_offload = 1;
            break;
        case OPT_OPT_OFFLOAD_FRACTION:
            rc = parse_pos("optimizer-offload-fraction", g.arg, 1,
                           "a share of the optimizer's parameters",
                           &o.job.opt_offload_fraction, &e);
            break;
        case OPT_OPT_OFFLOAD_OVERLAP:
            o.job.opt_offload_overlap = 1;
            break;
        case OPT_ACT_OFFLOAD_LAYERS:
            rc = parse_int("cpu-offloading-num-layers", g.arg, 1, 1000000, &v,
                           &e);
            o.job.act_offload_layers = v;
            break;
        case OPT_FINE_GRAINED_OFFLOAD:
            o.job.fine_grained = 1;
            break;
        case OPT_OFFLOAD_MODULES: {
            size_t bad = space_off_modules_parse(g.arg, &o.job.offload_modules);
            if (bad)
                rc = tp_errf(&e, TP_EUSAGE,
                             "--offload-modules: expected a comma-separated "
                             "list of attn_norm, qkv_linear, core_attn, "
                             "attn_proj, mlp_norm, expert_fc1, moe_act, found "
                             "'%s'%s%s",
                             g.arg, bad > 1 ? " at " : "",
                             bad > 1 ? g.arg + bad - 1 : "");
            break;
        }
        case OPT_OFFLOAD_FRACTION: {
            double x = -1;
            if (tp_parse_num(g.arg, &x) || !(x > 0) || x > 1)
                rc = tp_errf(&e, TP_EUSAGE,
                             "--activation-offload-fraction: expected a share "
                             "of the offload groups in (0, 1] (0 offloads "
                             "nothing: leave out --fine-grained-activation-"
                             "offloading), found '%s'",
                             g.arg);
            o.job.offload_fraction = x;
            break;
        }
        case OPT_MB_GROUP:
            rc = parse_int("microbatch-group-size-per-virtual-pipeline-stage",
                           g.arg, 1, 1000000, &v, &e);
            o.job.mb_group = v;
            break;
        case OPT_NO_SAVERS:
            o.no_savers = 1;
            break;
        case OPT_MOE_PERMUTE_FUSION:
        case OPT_NO_MOE_PERMUTE_FUSION:
            o.job.moe_permute_fusion = c == OPT_MOE_PERMUTE_FUSION;
            o.job.sw_set |= SEARCH_SW_PERMUTE;
            break;
        case OPT_MOE_ROUTER_FUSION:
        case OPT_NO_MOE_ROUTER_FUSION:
            o.job.moe_router_fusion = c == OPT_MOE_ROUTER_FUSION;
            o.job.sw_set |= SEARCH_SW_ROUTER;
            break;
        case OPT_FSDP_DOUBLE_BUFFER:
            o.job.fsdp_double_buffer = 1;
            break;
        case OPT_CUDA_GRAPH_IMPL:
            rc = parse_name("cuda-graph-impl", g.arg, space_cuda_graph_names,
                            SPACE_CG_COUNT, &o.job.cuda_graph, &e);
            o.job.cuda_graph_set = 1;
            break;
        case OPT_CUDA_GRAPH_SCOPE: {
            size_t bad = space_cgm_parse(g.arg, &o.job.cuda_graph_modules);
            if (bad)
                rc = tp_errf(&e, TP_EUSAGE,
                             "--cuda-graph-scope: expected full, or a "
                             "comma-separated list of attn, mlp, moe, "
                             "moe_router, moe_preprocess, found '%s'%s%s",
                             g.arg, bad > 1 ? " at " : "",
                             bad > 1 ? g.arg + bad - 1 : "");
            o.job.cuda_graph_scope_set = 1;
            break;
        }
        case OPT_FP8_ACT_CACHE:
            rc = parse_name("fp8-activation-cache", g.arg,
                            space_fp8_act_cache_names, SPACE_FP8_ACT_COUNT,
                            &o.job.fp8_act_cache, &e);
            break;
        case OPT_MOE_FLEX_BACKEND:
            rc = parse_name("moe-flex-backend", g.arg,
                            space_moe_flex_backend_names, SPACE_MOE_FLEX_COUNT,
                            &o.job.moe_flex_backend, &e);
            break;
        case OPT_MOE_IMBALANCE: {
            double x = 0;
            if (tp_parse_num(g.arg, &x) || !(x >= 1) || x > 1e6)
                rc = tp_errf(&e, TP_EUSAGE,
                             "--moe-imbalance: expected the busiest expert's "
                             "tokens over the mean, a number >= 1 (1: "
                             "perfect balance), found '%s'",
                             g.arg);
            o.job.moe_imbalance = x;
            break;
        }
        case OPT_STRICT:
            o.strict = 1;
            break;
        case OPT_LOG:
            o.log_file = g.arg;
            break;
        case OPT_ALL_LAYOUTS:
            o.all_layouts = 1;
            break;
        case OPT_CALIBRATE_TO_LOG:
            o.calibrate = 1;
            break;
        case OPT_NEAR:
            if (o.job_file)
                rc = o.near ? tp_errf(&e, TP_EUSAGE, "--near given twice: "
                                      "give one job file")
                            : tp_errf(&e, TP_EUSAGE, "--near and --%s: give "
                                      "one job file",
                                      cli_job_options[o.job_kind]);
            o.job_file = g.arg;
            o.job.from_launch = 1;
            o.job_kind = CLI_JOB_MEGATRON;
            o.near = 1;
            break;
        case OPT_NEMO_FORMAT:
            rc = parse_name("nemo-format", g.arg, launch_nemo_format_names,
                            LAUNCH_NEMO_FORMAT_COUNT, &o.nemo_format, &e);
            break;
        case OPT_LAUNCH:
            rc = parse_name("launch", g.arg, cli_launch_show_names,
                            CLI_LAUNCH_SHOW_COUNT, &o.launch_show, &e);
            o.launch_show_set = 1;
            break;
        case OPT_MEGATRON_ARGS:
        case OPT_NEMO_OVERRIDES:
        case OPT_TORCHTITAN_CONFIG: {
            int k = c == OPT_MEGATRON_ARGS ? CLI_JOB_MEGATRON
                    : c == OPT_NEMO_OVERRIDES ? CLI_JOB_NEMO
                                              : CLI_JOB_TORCHTITAN;
            /* one job file: a second one (the same option too) would
             * silently replace the first */
            if (o.job_file && o.job_kind == k && !o.near)
                rc = tp_errf(&e, TP_EUSAGE, "--%s given twice: give one "
                             "job file", cli_job_options[k]);
            else if (o.job_file)
                rc = tp_errf(&e, TP_EUSAGE,
                             "--%s and --%s: give one job file",
                             o.near ? "near" : cli_job_options[o.job_kind],
                             cli_job_options[k]);
            o.job_file = g.arg;
            o.job.from_launch = 1;
            o.job_kind = k;
            break;
        }
        case OPT_TORCHTITAN_VERSION:
            rc = launch_tt_version_parse(g.arg, &o.torchtitan_version, &e);
            break;
        default:
            rc = tp_errf(&e, TP_EINTERNAL, "option %d has no handler", c);
        }
        if (rc) {
            fprintf(err, "trainplan: %s\n", e.msg);
            return rc;
        }
    }
    int npos = g.npos;
    char **pos = argv + 1;
    if (bad_format) {
        /* sweep and merge write records or their CSV (cmd_sweep.c) */
        if (npos >= 1 && (!strcmp(pos[0], "sweep") || !strcmp(pos[0], "merge")))
            fprintf(err, "trainplan: %s --format: expected jsonl (its "
                         "records, the default; json is the same) or csv "
                         "(one row a scenario), found '%s'\n",
                    pos[0], bad_format);
        else
            fprintf(err, "trainplan: --format: expected table, json, csv or "
                         "jsonl (md: diff only), found '%s'\n",
                    bad_format);
        return TP_EUSAGE;
    }
    /* A one-word command (verb "") takes no subcommand. */
    int one_word = 0;
    for (int i = 0; npos >= 1 && i < N_COMMANDS; i++)
        if (!commands[i].verb[0] && strcmp(commands[i].group, pos[0]) == 0)
            one_word = 1;
    if (npos < 2 && !one_word) {
        if (npos == 0) {
            usage(err, NULL);
        } else {
            fprintf(err, "trainplan: '%s' needs a subcommand:", pos[0]);
            for (int i = 0; i < N_COMMANDS; i++)
                if (strcmp(commands[i].group, pos[0]) == 0)
                    fprintf(err, " %s", commands[i].verb);
            fprintf(err, " (try --help)\n");
        }
        return TP_EUSAGE;
    }
    const cli_command *cmd = NULL;
    for (int i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].group, pos[0]) == 0
            && (one_word ? !commands[i].verb[0]
                         : strcmp(commands[i].verb, pos[1]) == 0))
            cmd = &commands[i];
    if (!cmd) {
        const char *names[N_COMMANDS];
        char joined[N_COMMANDS][48];
        for (int i = 0; i < N_COMMANDS; i++) {
            snprintf(joined[i], sizeof joined[i], "%s %s", commands[i].group,
                     commands[i].verb);
            names[i] = joined[i];
        }
        char want[96], hint[256];
        snprintf(want, sizeof want, "%s %s", pos[0], pos[1]);
        tp_suggest(want, names, N_COMMANDS, hint, sizeof hint);
        fprintf(err, "trainplan: unknown command '%s'%s (try --help)\n",
                want, hint);
        return TP_EUSAGE;
    }
    /* The ZeRO stage from --zero-stage and the distributed-optimizer
     * flags, which must agree: --use-distributed-optimizer is ZeRO-1 or
     * more, --no-use-distributed-optimizer ZeRO-0. */
    if (zero_arg >= 0 && distopt
        && (distopt > 0) != (zero_arg >= 1)) {
        fprintf(err,
                "trainplan: --zero-stage %lld and --%suse-distributed-"
                "optimizer disagree (the distributed optimizer is ZeRO-1 or "
                "more); give one\n",
                zero_arg, distopt > 0 ? "" : "no-");
        return TP_EUSAGE;
    }
    if (zero_arg >= 0)
        o.job.zero = (int)zero_arg;
    else if (distopt)
        o.job.zero = distopt > 0 ? 1 : 0;
    /* Modules are read with the selective granularity only (Megatron-Core
     * TransformerConfig): given alone, they ask for it. */
    if (o.job.recompute_modules && o.job.recompute < 0)
        o.job.recompute = SPACE_RECOMPUTE_SELECTIVE;
    /* The precision-aware optimizer runs with the distributed optimizer
     * only, and Transformer Engine's layer offload with one pipeline stage
     * and no recomputation: given alone, they ask for them. */
    if (o.job.pa_optimizer && o.job.zero < 0) o.job.zero = 1;
    if (o.job.act_offload_layers > 0 && o.job.pp <= 0) o.job.pp = 1;
    if (o.job.act_offload_layers > 0 && o.job.recompute < 0)
        o.job.recompute = SPACE_RECOMPUTE_NONE;
    for (int i = 0; i < N_OPTIONS; i++)
        if (seen[i] && !(options[i].cmds & cmd->bit)) {
            fprintf(err, "trainplan: --%s does not apply to '%s %s'\n",
                    options[i].name, cmd->group, cmd->verb);
            return TP_EUSAGE;
        }
    /* A job file gives the model and the layout: an option that would set
     * them too is a contradiction, not an override. */
    if (o.job_file)
        for (int i = 0; i < N_OPTIONS; i++)
            if (seen[i] && job_sets(options[i].id)) {
                fprintf(err,
                        "trainplan: --%s and --%s: the job file gives the "
                        "model and the layout; drop --%s or edit the file\n",
                        o.near ? "near" : cli_job_options[o.job_kind],
                        options[i].name, options[i].name);
                return TP_EUSAGE;
            }
    if (o.calibrate && !o.log_file) {
        fprintf(err, "trainplan: --calibrate-to-log needs --log FILE (the "
                     "run to calibrate to)\n");
        return TP_EUSAGE;
    }
    if (o.format == CLI_JSONL && cmd->bit != CMD_SEARCH && cmd->bit != CMD_SWEEP
        && cmd->bit != CMD_MERGE) {
        fprintf(err, "trainplan: --format jsonl applies to 'search', "
                     "'sweep' and 'merge' only\n");
        return TP_EUSAGE;
    }
    /* sweep and merge say what they write (cmd_sweep.c) */
    if (o.format == CLI_MD && cmd->bit != CMD_DIFF && cmd->bit != CMD_SWEEP
        && cmd->bit != CMD_MERGE) {
        fprintf(err, "trainplan: --format md applies to 'diff' only\n");
        return TP_EUSAGE;
    }
    o.npos = npos - (one_word ? 1 : 2);
    o.pos = pos + (one_word ? 1 : 2);
    if (o.npos < cmd->min_args || o.npos > cmd->max_args) {
        fprintf(err, "trainplan: usage: trainplan %s %s %s\n", cmd->group,
                cmd->verb, cmd->args);
        return TP_EUSAGE;
    }
    /* Every file the call reads and writes, before anything is written:
     * no output may replace an input or another output (out.c). */
    {
        int n_io = 0;
        cli_io *io = tp_xcalloc((size_t)(n_io_given + o.npos + 1), sizeof *io);
        char names[MAX_IO_GIVEN][64];
        int has_output = 0;
        for (int i = 0; i < n_io_given; i++)
            if (io_options[io_given[i].k].id == OPT_OUTPUT) has_output = 1;
        /* Without -o the command's data goes to the caller's stream. */
        if (!has_output)
            io[n_io++] = (cli_io){"standard output", "-", CLI_IO_OUT, 1};
        for (int i = 0; i < n_io_given; i++) {
            int k = io_given[i].k, id = io_options[k].id;
            const cli_option *opt = option_by_id(id);
            cli_io *x = &io[n_io];
            x->path = io_given[i].path;
            x->role = io_options[k].role;
            if (id == OPT_OUTPUT) {
                x->what = "-o";
                /* sweep's -o is its records' file; import's a directory */
                if (cmd->output_is_dir && cmd->bit != CMD_SWEEP)
                    x->role = CLI_IO_OUT_DIR;
            } else {
                snprintf(names[i], sizeof names[i], "--%s", opt->name);
                x->what = names[i];
            }
            /* a preset's name is no file */
            if (id == OPT_MODEL && !space_model_is_path(x->path)) continue;
            n_io++;
        }
        for (int i = 0; i < o.npos; i++) {
            if (cmd->args_read == ARGS_NAMES
                || (cmd->args_read == ARGS_MODEL
                    && !space_model_is_path(o.pos[i])))
                continue;
            io[n_io++] = (cli_io){cmd->bit == CMD_SWEEP  ? "the spec"
                                  : cmd->bit == CMD_DIFF ? (i ? "NEW" : "OLD")
                                  : cmd->args_read == ARGS_MODEL ? "the model"
                                                                 : "the input",
                                  o.pos[i], CLI_IO_IN, 0};
        }
        rc = cli_io_check(io, n_io, out_f, &e);
        free(io);
        if (rc) {
            fprintf(err, "trainplan: %s\n", e.msg);
            return rc;
        }
    }
    o.out = out_f;

#ifdef _OPENMP
    /* The thread count is the calling thread's: set for this call only. */
    int threads_before = omp_get_max_threads();
    if (o.threads > 0) omp_set_num_threads(o.threads);
#endif

    /* -o of a command that writes a directory is its argument, not where
     * stdout goes. */
    if (cmd->output_is_dir) {
        o.out_dir = o.output;
        o.output = NULL;
    }
    cli_out out;
    rc = cli_out_open(&out, o.output, out_f, &e); /* NULL, "-": out_f */
    if (rc) {
        fprintf(err, "trainplan: %s\n", e.msg);
    } else {
        rc = cmd->fn(&o, &out, &e);
        /* A nothing-feasible result (1) is still output worth keeping,
         * and so is a diff that found changes (3). */
        int keep = rc == TP_OK || rc == TP_INFEASIBLE
                   || (cmd->bit == CMD_DIFF && rc == CLI_EXIT_CHANGED);
        tp_err ce = {0};
        int crc = cli_out_close(&out, keep, &ce);
        /* An output that could not be written (a full disk, /dev/full, a
         * size limit) is 74 even when the command found changes (3): the
         * report the caller relies on is not there. */
        if (crc) {
            fprintf(err, "trainplan: %s\n", ce.msg);
            rc = crc;
        } else if (rc != TP_OK && rc != TP_INFEASIBLE) {
            fprintf(err, "trainplan: %s\n", e.msg);
        }
    }
#ifdef _OPENMP
    if (o.threads > 0) omp_set_num_threads(threads_before);
#endif
    return rc;
}
