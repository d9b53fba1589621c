/*
 * table.h - the option and command tables, private to lib/'s run.c,
 * dispatch.c, table.c and parse.c: the subcommands (lib_commands) and
 * the options (lib_options, which generate getopt's tables, --help, the
 * man page check and bash completion), the options that name files
 * (lib_io_options), the parsers of an option's argument (parse.c) whose
 * messages name the option, and what a call's parse found for
 * dispatch.c (lib_given). run.c and dispatch.c size their per-call
 * arrays by LIB_MAX_OPTIONS and LIB_MAX_COMMANDS, which table.c checks
 * the tables against.
 */
#ifndef TP_LIB_TABLE_H
#define TP_LIB_TABLE_H

#include "lib_int.h"


typedef int (*cmd_fn)(const lib_opts *, emit_out *, tp_err *);

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

typedef struct lib_command {
    const char *group, *verb;
    unsigned bit;
    int min_args, max_args;
    const char *args;
    const char *summary;
    cmd_fn fn;
    int output_is_dir;   /* -o names a directory the command writes into */
    int args_read;       /* its arguments: ARGS_NAMES, ARGS_FILES (read:
                            no output may name one), ARGS_MODEL */
} lib_command;

/* What a command's positional arguments are, for emit_io_check. */
enum {
    ARGS_NAMES, /* names, not files (hw show NAME) */
    ARGS_FILES, /* files the command reads */
    ARGS_MODEL  /* a preset name or a config.json (space_model_is_path) */
};

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
    OPT_FP8_ATTENTION,
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
    OPT_RECORD,
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
 * emit_io_check compares before the command runs (out.c). --model is an
 * input where it names a config.json; --hwdb directories are not
 * compared (an output inside one is not refused). */
/* The options that name a file the call reads or writes: what
 * emit_io_check compares before the command runs (out.c; table.c says
 * which). */
struct lib_io_option {
    int id;
    emit_io_role role;
};
/* File options one call may give (each of the above once or twice). */
#define MAX_IO_GIVEN 64
/* Option ids are below MAX_OPT_ID (run.c checks the table once), so a
 * call marks the options it was given in an array by id. */
enum { MAX_OPT_ID = 1024 };

/* What parsing a call's options found besides its lib_opts (run.c),
 * for the checks made once the command is known (dispatch.c). */
typedef struct lib_given {
    /* the ids given: every option of an id counts as given (aliases) */
    unsigned char seen_id[MAX_OPT_ID];
    /* the file options as given, in order, for emit_io_check */
    struct {
        const char *path;
        int k; /* lib_io_options[k] */
    } io[MAX_IO_GIVEN];
    int n_io;
    const char *bad_format; /* --format's value when not a format */
    int distopt;            /* --use- (1) or --no-use-distributed-optimizer (-1) */
    long long zero_arg;     /* --zero-stage, -1 = not given */
} lib_given;

/* The rest of lib_run_sink once the options are parsed into *o and *gv
 * (dispatch.c): finds the command of the npos positional arguments pos,
 * checks the options against it and the files against each other, and
 * runs it (its data to out_f or -o FILE, diagnostics to err). Returns
 * the exit status. */
int lib_dispatch(lib_opts *o, const lib_given *gv, int npos, char **pos,
                 FILE *out_f, FILE *err);

typedef struct lib_option {
    const char *name;
    int id;          /* short letter, or >= 256 for long-only */
    const char *arg; /* metavariable, NULL for a flag */
    unsigned cmds;   /* subcommands that take it */
    const char *help;
} lib_option;

/* Upper bounds of the tables' rows, for arrays sized at compile time
 * (table.c asserts them; raise them as the tables grow). */
enum { LIB_MAX_OPTIONS = 256, LIB_MAX_COMMANDS = 32 };

extern const lib_command lib_commands[];
extern const int lib_n_commands;
extern const lib_option lib_options[];
extern const int lib_n_options;
extern const struct lib_io_option lib_io_options[];
extern const int lib_n_io_options;

/* The help: every command and option, or with cmd that command's usage
 * and the options it takes. */
void lib_usage(FILE *f, const lib_command *cmd);
/* The command argv names (GROUP VERB, or a group whose verb is ""), for
 * `trainplan COMMAND --help`; NULL where none. */
const lib_command *lib_help_command(int argc, char **argv);
/* Whether option id is one whose value a job file (--megatron-args, ...)
 * gives. */
int lib_job_sets(int id);
/* The row of option id, NULL when none. */
const lib_option *lib_option_by_id(int id);

/* ---- an option's argument (parse.c): each returns TP_OK, or TP_EUSAGE
 * with a message naming --opt, what it expected and what it found --- */

/* How a count or amount may be written, for the messages. */
#define LIB_SI_FORM "a number with an optional SI suffix k, M, G or B, T " \
                    "(powers of 1000)"

/* A whole decimal integer in [lo, hi]. */
int lib_arg_int(const char *opt, const char *s, long long lo, long long hi,
                long long *out, tp_err *e);
/* One of n names (any case) into *out, its index; the message lists them. */
int lib_arg_name(const char *opt, const char *s, const char *const *names,
                 int n, int *out, tp_err *e);
/* --doc-length LEN or LEN:SHARE,...: into o->job's document buckets. */
int lib_arg_docs(const char *s, lib_opts *o, tp_err *e);
/* A number in (0, hi]. */
int lib_arg_pos(const char *opt, const char *s, double hi, const char *unit,
                double *out, tp_err *e);
/* An amount in (0, hi], with an SI suffix (--budget-usd 1.5M). */
int lib_arg_amount(const char *opt, const char *s, double hi,
                   const char *unit, double *out, tp_err *e);
/* A count in [lo, hi], an integer or one with an SI suffix (2k). */
int lib_arg_count(const char *opt, const char *s, long long lo,
                  long long hi, long long *out, tp_err *e);
/* A length or batch size: a plain integer in [lo, hi], an SI suffix
 * refused by name. */
int lib_arg_plain(const char *opt, const char *s, long long lo,
                  long long hi, long long *out, tp_err *e);
/* --deadline: a number with s, m, h, d or w (seconds without). */
int lib_arg_duration(const char *s, double *out, tp_err *e);

#endif
