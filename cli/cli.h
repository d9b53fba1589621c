/*
 * cli.h - internals of the trainplan command line: the parsed options,
 * the output writer and the table printer shared by the subcommands.
 *
 * Options and subcommands are rows of two tables in main.c; the option
 * table generates getopt_long's struct option[] and --help.
 */
#ifndef TP_CLI_H
#define TP_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "hw.h"
#include "space.h"
#include "est.h"
#include "job.h"

/* JSON Lines (CLI_JSONL) only where a command says so (search). */
typedef enum cli_format { CLI_TABLE, CLI_JSON, CLI_CSV, CLI_JSONL, CLI_MD, CLI_FORMAT_COUNT } cli_format;
/* CLI_MD (markdown): diff only. */

#define CLI_MAX_HWDB 16


typedef struct cli_session cli_session;
typedef struct cli_estimate_sink cli_estimate_sink;

typedef struct cli_opts {
    cli_session *session;    /* a library session's database and fitted
                                models (session.c), or NULL: opened here */
    FILE *err;               /* diagnostics: the caller's stream (cli_run);
                                NULL = stderr (read it with cli_err) */
    FILE *out;               /* the caller's data stream (cli_run): what an
                                output given as "-" writes; NULL = none */
    cli_format format;
    int format_set;          /* --format given (sweep refuses what it cannot
                                write rather than ignore it) */
    const char *output;      /* -o FILE, or NULL for stdout */
    int threads;             /* 0 = OpenMP's default */
    uint64_t seed;
    const char *hwdb_dirs[CLI_MAX_HWDB];
    int n_hwdb;
    const char *gpu;         /* op: --gpu */
    const char *op;          /* op: --op */
    const char *train;       /* op predict: --train */
    const char *shapes;      /* op predict: --shapes */
    const char *shape;       /* op show: --shape k=v,... */
    int dtype;               /* --dtype, -1 = the operator's default */
    int keep_bad;            /* --keep-bad: keep implausible samples */
    int folds;               /* op cv: --folds */
    const char *system;      /* coll, hw import-nccl-tests: --system */
    const char *bytes;       /* coll show: --bytes (unparsed list) */
    int nodes, per_node;     /* coll show: --group NxG (0 = unset) */
    const char *out_dir;     /* -o of a command that writes a directory */
    search_job job;          /* the model, the job and the layout fields
                                the options fix (search/job.h) */
    const char *gpus_arg;    /* --gpus as given (search: a list or range) */
    /* search */
    int64_t min_gpus, max_gpus;   /* 0 = unset */
    int objective;           /* search_objective */
    int top_k;               /* --top, 0 = default */
    double price;            /* --price, 0 = the system's */
    double budget_usd, budget_gpu_hours, deadline_s; /* 0 = none */
    double max_mem_fraction; /* 0 = unset (1) */
    const char *fix;         /* --fix K=V,... */
    int explain, no_timing, no_prune;
    int ops;                 /* estimate --ops: the operators timed */
    const char *svg;         /* --svg FILE */
    int npos;                /* positional arguments after GROUP VERB */
    char **pos;
    /* sweep, merge, diff (issue 7) */
    int progress;            /* --progress: progress line even off a terminal */
    int resume;              /* --resume */
    int overwrite;           /* --overwrite: replace -o FILE at the end */
    int shard_i, shard_n;    /* --shard I/N; shard_n 0 = unset */
    double threshold;        /* diff --threshold, < 0 = unset (0.02) */
    /* issue 18: a framework's job read back in (estimate, search --near) */
    const char *job_file;    /* --megatron-args, --nemo-overrides or
                                --torchtitan-config: a file, or "-" */
    int job_kind;            /* cli_job_kind of job_file */
    int near;                /* search --near: the job file is the user's
                                own, compared with the search's best */
    const space_model *model_given; /* a model read from a job file, used
                                instead of --model (cli_model) */
    const char *log_file;    /* --log FILE: a run's log (train_log.c) */
    int calibrate;           /* --calibrate-to-log */
    int all_layouts;         /* search --all: every admitted layout in JSON */
    int strict;              /* --strict: a config.json that says what
                                trainplan does not model is an error */
    const char *sbatch;      /* search --sbatch FILE: the winner's
                                Megatron-LM launch script */
    int torchtitan_version;  /* --torchtitan-version: launch_tt_version (launch.h);
                                0 = the current one */
    int nemo_format;         /* --nemo-format: launch_nemo_format */
    int launch_show;         /* --launch: cli_launch_show (text output) */
    int launch_show_set;     /* --launch given (sweep: default every form) */
    int no_savers;           /* search --no-memory-savers */
    cli_estimate_sink *estimate_sink; /* estimate: the result into this
                                struct, nothing printed (cli_run_sink) */
} cli_opts;

/* Where o's diagnostics go: o->err, or stderr when unset. */
static inline FILE *cli_err(const cli_opts *o)
{
    return o && o->err ? o->err : stderr;
}

/* The command line (run.c): parses argv with the option table (table.c; opt.c:
 * the state is the call's own), runs the command, writes its data to out
 * (or -o FILE) and every diagnostic to err, and returns the exit status
 * (README.md). Never exits; rearranges argv, so pass a copy. Calls of
 * estimate, search and model on one session run in parallel; commands
 * that write files or install signal handlers (sweep, -o, --svg) are the
 * caller's to serialize (lib/trainplan.c does). */
int cli_run(int argc, char **argv, FILE *out, FILE *err);
/* cli_run with session s (NULL: none) given to the command. */
int cli_run_in(int argc, char **argv, FILE *out, FILE *err, cli_session *s);
/* What `estimate` found, for a library call that takes it as a struct
 * (lib/trainplan.c tp_session_estimate) rather than printed. */
struct cli_estimate_sink {
    int filled;              /* 1 once the estimate ran (else 0) */
    est_result r;            /* the layout estimated, search_complete's pick */
    char system[64], gpu[64]; /* the system's and its GPU's names */
    double gpu_mem_bytes;    /* the GPU's capacity */
    int moe;                 /* the model has experts (JSON: ep and etp) */
    int64_t tried, feasible; /* layouts tried, and of them feasible */
};
/* cli_run_in where an `estimate` fills *sink (memset here first) and
 * writes nothing to out: its JSON, its table, --ops and --log's report
 * are not made. Every check and diagnostic is cli_run_in's, "not
 * feasible" on err included, and so is the status. Other commands run as
 * with cli_run_in, leaving sink->filled 0. */
int cli_run_sink(int argc, char **argv, FILE *out, FILE *err, cli_session *s,
                 cli_estimate_sink *sink);
/* The option parser (opt.c): getopt_long's rules with the caller's state.
 * Zero-initialise, then call cli_getopt_next until it returns -1: each
 * call returns an option's id (struct option's val, or its short
 * character) with its value in arg, or '?' for an option that is not
 * known or is ambiguous (opt 0), lacks its value (opt: its id), or has a
 * value it does not take (opt: its id, no_value 1); bad is the element of
 * argv that holds it. At -1, the arguments are argv[1..npos], in order
 * (argv is rearranged: pass a copy). */
typedef struct cli_getopt {
    int ind;          /* the next element of argv */
    const char *next; /* the rest of a cluster of short options */
    const char *arg;  /* the option's value, NULL without */
    int opt;          /* '?': the option at fault, 0 unknown */
    int no_value;     /* '?': a value given to a flag */
    const char *bad;  /* '?': the element of argv at fault */
    int npos;         /* the arguments gathered into argv[1..npos] */
} cli_getopt;
struct option;
int cli_getopt_next(cli_getopt *g, int argc, char **argv,
                    const char *shortopts, const struct option *longopts);
/* Whether the option table has the long option name: -1 no, 0 a flag,
 * 1 an option with a value. */
int cli_option_kind(const char *name);
/* The i-th long option name of the table, NULL past its end. */
const char *cli_option_name(int i);
/* Lets out.c and sweep install their SIGHUP, SIGINT and SIGTERM handlers
 * (the command line's main does; a library call otherwise installs none).
 * cli_signals_owned says whether it was called. */
void cli_own_signals(void);
int cli_signals_owned(void);

/* Which framework's job a file holds (launch.h's readers). */
typedef enum cli_job_kind {
    CLI_JOB_NONE,
    CLI_JOB_MEGATRON,   /* Megatron-LM: a command line or a launch script */
    CLI_JOB_NEMO,       /* NeMo: recipe overrides */
    CLI_JOB_TORCHTITAN, /* torchtitan: a job config */
    CLI_JOB_COUNT
} cli_job_kind;
extern const char *const cli_job_options[CLI_JOB_COUNT];
/* Reads o->job_file ("-": standard input) with the reader of o->job_kind
 * (launch.h) into o->job and *m (job_file.c). */
int cli_read_job(cli_opts *o, space_model *m, tp_err *e);

/* Which launches a search's text prints for #1 (--launch); JSON carries
 * every form whatever this says. */
typedef enum cli_launch_show {
    CLI_LAUNCH_NONE,       /* a line saying how to get them: the default */
    CLI_LAUNCH_MEGATRON,   /* Megatron-LM's launch script */
    CLI_LAUNCH_NEMO,       /* NeMo: Megatron-Bridge overrides or 1.x YAML */
    CLI_LAUNCH_TORCHTITAN, /* torchtitan's config */
    CLI_LAUNCH_ALL,        /* all three, the estimate's framework first */
    CLI_LAUNCH_SHOW_COUNT
} cli_launch_show;
extern const char *const cli_launch_show_names[CLI_LAUNCH_SHOW_COUNT];
/* The launch forms a JSON row carries (launch and launch_args). */
enum {
    CLI_LAUNCH_FORM_MEGATRON = 1u << 0,   /* megatron, megatron_sbatch */
    CLI_LAUNCH_FORM_NEMO = 1u << 1,
    CLI_LAUNCH_FORM_TORCHTITAN = 1u << 2, /* torchtitan_config */
    CLI_LAUNCH_FORM_ALL = 7u
};
/* The forms --launch SHOW asks for (none: 0, all: every one). */
unsigned cli_launch_forms(int show);

/* Output goes to stdout; to a device or FIFO directly; or to a temporary
 * file beside -o FILE (beside a symbolic link's target: the link stays)
 * that is renamed over it only when the command succeeded, so a failed or
 * signalled run never leaves a half-written file nor a temporary one
 * (out.c). A replaced file keeps its mode, a new one gets 0666 & ~umask. */
typedef struct cli_out {
    FILE *f;
    const char *path;   /* as given, for messages; NULL for stdout */
    char target[4096];  /* path with symbolic links followed */
    char tmp[4096];     /* temporary path while writing ("" when direct) */
    int direct;         /* a device or FIFO, written in place */
    int slot;           /* out.c's signal clean-up slot of tmp, -1 none */
    int borrowed;       /* the caller's stream (cli_out_stream): not closed */
    int pending;        /* finished, the temporary file not yet renamed */
} cli_out;

/* Opens the output path names: "-" (or NULL) is the caller's stream
 * (cli_out_stream: never closed; NULL caller: TP_EINTERNAL, as
 * cli_io_check refuses such a "-" first), a device, FIFO or descriptor
 * path (/dev/stdout) is written directly, a regular file through a
 * temporary file. TP_OK, or TP_EIO naming path and reason. */
int cli_out_open(cli_out *o, const char *path, FILE *caller, tp_err *e);
/* A writer on the caller's open stream f (standard output, or a library
 * caller's memory stream): cli_out_close flushes and checks it but leaves
 * it open. TP_OK. */
int cli_out_stream(cli_out *o, FILE *f);
/* Closes; on ok flushes, syncs and renames the temporary file into place,
 * else removes it. Every write, flush, sync, close and rename error
 * (standard output's too) is TP_EIO naming the path and the reason;
 * errors when !ok are not reported (the command's own error is). */
int cli_out_close(cli_out *o, int ok, tp_err *e);
/* cli_out_close in two steps, for outputs that must all be complete
 * before any is put in place (hw import-nccl-tests): cli_out_finish
 * flushes, syncs and closes (TP_EIO as cli_out_close; the temporary file
 * is then removed), cli_out_commit renames a finished file into place
 * (TP_EIO where it cannot), cli_out_discard drops an output at any stage
 * (its temporary file removed; a no-op once committed). */
int cli_out_finish(cli_out *o, tp_err *e);
int cli_out_commit(cli_out *o, tp_err *e);
void cli_out_discard(cli_out *o);
/* The file path names once its symbolic links are followed (a dangling
 * link's target need not exist) into out[cap]. TP_OK or TP_EIO. */
int cli_out_resolve(const char *path, char *out, size_t cap, tp_err *e);
/* Whether a path (links followed) names a process's open descriptor:
 * under /dev/fd/, or /proc/PID/fd/ (where /dev/stdout leads). Such a path
 * is written in place, appended to, never renamed over: the file behind
 * it is held open by its owner (a shell's > or >>). */
int cli_out_names_fd(const char *path);

/* A path one call reads or writes, for cli_io_check. */
typedef enum cli_io_role {
    CLI_IO_IN,      /* read: a job file, a spec, a config.json, a log */
    CLI_IO_OUT,     /* a file written: -o, --svg, --sbatch; "-" is the
                       caller's stream */
    CLI_IO_OUT_DIR  /* a directory written into (hw import-nccl-tests -o):
                       "-" refused */
} cli_io_role;
typedef struct cli_io {
    const char *what;  /* the option ("-o", "--sbatch") or argument ("the
                          spec") that names it, for messages */
    const char *path;  /* as given; "-": standard input or the caller's
                          stream */
    cli_io_role role;
    int implicit;      /* the command's output without -o (path "-") */
} cli_io;
/* Refuses, with TP_EUSAGE naming both paths and their options, what
 * would lose data before anything is written: an output that is one of
 * the inputs, or one file named by two outputs (the same file: device and
 * inode where it exists, else the real path of its directory and its
 * name; only regular files and files to be, as two writers of /dev/null
 * lose nothing); "-" as a directory output; "-" for an output when
 * another output already writes the caller's stream. caller is the
 * stream "-" writes (its descriptor, where it has one, identifies
 * /dev/stdout's file). TP_OK otherwise. */
int cli_io_check(const cli_io *io, int n, FILE *caller, tp_err *e);

/* A table of strings, printed aligned (table format) or as RFC 4180 CSV.
 * A cell that is CLI_MISSING shows as such in a table and is an empty
 * cell in CSV, where JSON writes null. */
#define CLI_MISSING "-"
typedef struct cli_table {
    int ncols;
    const char **headers;
    const char *align;   /* per column 'l' or 'r' */
    int nrows, cap;
    char **cells;        /* nrows x ncols, owned */
} cli_table;

void cli_table_init(cli_table *t, int ncols, const char **headers,
                    const char *align);
/* Appends a row of ncols cells, each formatted from the printf-style
 * strings in order; cells are copied. */
void cli_table_row(cli_table *t, ...);
/* The same from an array of n cells (missing ones empty). */
void cli_table_rowv(cli_table *t, const char *const *cells, int n);
void cli_table_print(const cli_table *t, FILE *f, cli_format fmt);
void cli_table_free(cli_table *t);

/* The layout of the JSON outputs (docs/output-formats.md, docs/schemas/):
 * one integer for all of them, bumped when a key is removed or renamed or
 * changes type, unit or meaning; a new key does not bump it. */
#define CLI_SCHEMA_VERSION 1
/* Puts "schema_version" first in v, an object, or in each object of v, an
 * array (model list, hw check print arrays; readers of them stay as they
 * were), unless it is there already; returns v. cli_print_json does it;
 * JSON Lines records (search, sweep) call it themselves. */
cJSON *cli_json_version(cJSON *v);

/* Adds to object o "recompute_modules": the names of the modules l's
 * selective recomputation reruns (space_recompute_modules), an array. */
void cli_json_rc_modules(cJSON *o, const space_layout *l);

/* Adds to object o "pipeline_split": l's split options as Megatron-LM
 * names them (null where not given), the rule that refuses it (null),
 * and the transformer layers of every stage (chunk k / PP of rank k % PP)
 * and of every pipeline rank as Megatron-Core builds them, and the stage
 * of the MTP modules (null without). */
void cli_json_split(cJSON *o, const space_model *m, const space_layout *l);

/* Prints a JSON output document, pretty, with a trailing newline, with its
 * schema_version (cli_json_version), and deletes it. */
void cli_print_json(FILE *f, cJSON *v);
/* text printed from column `at` (where the caller left the line), words
 * wrapped before `width`, continuation lines indented to `indent`; a word
 * longer than the room stands alone. Runs of blanks become one. Ends the
 * line. */
void cli_print_wrapped(FILE *f, const char *text, int at, int indent,
                       int width);
/* The width search and estimate texts wrap their prose to. */
#define CLI_TEXT_WIDTH 100
/* A paragraph of prose, printf-formatted, wrapped to CLI_TEXT_WIDTH with
 * continuation lines indented by `indent` (a leading indent of the text
 * is kept); fmt's trailing newline is dropped, one is printed. */
void cli_wrapf(FILE *f, int indent, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Human-readable numbers: 6.74e9 -> "6.74 B" params, bytes -> "80.0 GiB",
 * FLOP/s -> "989.5 TFLOP/s", s -> "2.0 us". */
void cli_fmt_count(char *buf, size_t cap, double v);
void cli_fmt_si(char *buf, size_t cap, double v, const char *unit);
void cli_fmt_bytes(char *buf, size_t cap, double bytes);

/* Subcommand handlers. Each returns an exit status (enum tp_status) and
 * on failure leaves its message in e. */
int cmd_model_list(const cli_opts *o, cli_out *out, tp_err *e);
int cmd_model_show(const cli_opts *o, cli_out *out, tp_err *e);
int cmd_hw_list(const cli_opts *o, cli_out *out, tp_err *e);
int cmd_hw_show(const cli_opts *o, cli_out *out, tp_err *e);
int cmd_hw_check(const cli_opts *o, cli_out *out, tp_err *e);
int cmd_op_predict(const cli_opts *o, cli_out *out, tp_err *e);
int cmd_op_show(const cli_opts *o, cli_out *out, tp_err *e);
int cmd_op_cv(const cli_opts *o, cli_out *out, tp_err *e);
int cmd_coll_show(const cli_opts *o, cli_out *out, tp_err *e);
int cmd_coll_cv(const cli_opts *o, cli_out *out, tp_err *e);
int cmd_hw_import_nccl_tests(const cli_opts *o, cli_out *out, tp_err *e);
/* The model of --model with the options' dropout overrides, and the
 * software choices of the options (attention backend, overlaps) on a
 * layout: shared by estimate and search (cmd_estimate.c). */
int cli_model(const cli_opts *o, space_model *m, tp_err *e);

/* When name_or_path is a config.json: what it says that trainplan does
 * not model (space_hf_unread), each a "trainplan: warning:" line on
 * standard error, or with strict a TP_EDATA error naming them. TP_OK
 * for presets and clean files; a file that does not load is left to the
 * model reader's message. */
int cli_model_unread(const char *name_or_path, int strict, FILE *err,
                     tp_err *e);

/* l's memory savers as the "memory_savers" object of o (estimate's layout,
 * search's rows; docs/output-formats.md), and in words into buf[cap] (""
 * for none; out.c). */
void cli_json_savers(cJSON *o, const space_layout *l);
char *cli_savers_text(const space_layout *l, char *buf, size_t cap);
/* An estimate's error band (est_error_band) as the "error_band" object of
 * o (docs/output-formats.md), and in words into buf[cap] (out.c). */
struct est_band;
void cli_json_band(cJSON *o, const struct est_band *b);
char *cli_band_text(const struct est_band *b, char *buf, size_t cap);
/* A named figure of an estimate (a time term, a memory term): the
 * estimator's (est_term; est_time_terms gives the time terms, in the one
 * order of every output). */
typedef est_term cli_term;

/* A training run's log read back (train_log.c): which framework wrote
 * it, the steady iteration time (or torchtitan's tokens/s per GPU, which
 * needs the job to become a time), the peak memory it printed. */
typedef enum cli_log_kind {
    CLI_LOG_NONE,
    CLI_LOG_MEGATRON,   /* Megatron-LM, Megatron-Bridge */
    CLI_LOG_NEMO,       /* NeMo 2 (Lightning) */
    CLI_LOG_TORCHTITAN,
    CLI_LOG_KIND_COUNT
} cli_log_kind;
extern const char *const cli_log_kind_names[CLI_LOG_KIND_COUNT];

typedef struct cli_train_log {
    int kind;                   /* cli_log_kind */
    int lines;                  /* iteration lines read */
    int used;                   /* of them in the median (warm-up out) */
    double iteration_s;         /* median; 0 for torchtitan */
    double tps_per_gpu;         /* torchtitan's median tps; else 0 */
    double max_allocated_bytes; /* Megatron's largest max allocated; 0 */
    double max_reserved_bytes;  /* its largest max reserved, torchtitan's
                                   memory; 0 where none is printed */
    int memory_lines;           /* Megatron memory lines read */
    double fwd_bwd_s, optimizer_s; /* Megatron's timers; NAN without */
} cli_train_log;

/* Reads the log at path: TP_OK, TP_ENOINPUT (no file) or TP_EDATA (no
 * iteration line, or lines of two frameworks), naming the file. */
int cli_train_log_read(const char *path, cli_train_log *out, tp_err *e);

/* A run's log against the estimate of its job (train_log.c). */
struct est_ctx;
struct est_result;
struct est_band;
typedef struct cli_run_fed {
    const cli_train_log *log;
    double measured_s;   /* the run's iteration time (torchtitan: from tps) */
    double estimated_s;
    double est_fwd_bwd_s, est_optimizer_s;
    double est_allocated, est_reserved; /* max_memory_allocated/reserved */
    /* --calibrate-to-log */
    int calibrated;      /* 1 found, -1 the run is faster than the estimate
                            at a kernel efficiency of 1, 0 not asked */
    double eff0, eff;    /* the kernel efficiency before and after */
    double calibrated_s;
} cli_run_fed;

/* Sets the log lg beside r, the estimate of its job (model m on c); with
 * calibrate, the in-training kernel efficiency at which r's layout takes
 * the run's time. */
void cli_fed_back(cli_run_fed *f, const cli_train_log *lg,
                  const struct est_ctx *c, const space_model *m,
                  const struct est_result *r, int calibrate);
/* The comparison in words to out, with the estimate's band; as the
 * "measured" object of j. */
void cli_fed_print(FILE *out, const cli_run_fed *f, const char *path,
                   const struct est_band *band);
void cli_fed_json(cJSON *j, const cli_run_fed *f, const char *path);

int cmd_estimate(const cli_opts *o, cli_out *out, tp_err *e);
int cmd_search(const cli_opts *o, cli_out *out, tp_err *e);

/* Parses "NxG" (nodes x GPUs per node) into *nodes, *per_node; TP_EUSAGE
 * with a message otherwise. */
int cli_parse_group(const char *s, int *nodes, int *per_node, tp_err *e);

/* Opens the hardware database the options name (built-in, environment,
 * --hwdb). NULL and e on failure. */
hw_db *cli_open_hwdb(const cli_opts *o, tp_err *e);

/* ---- the search request of a set of options (cmd_search.c) ---------- */
/* Shared by `search` and `sweep`: one function turns options into a
 * search_request and one writes a search answer as JSON, so a sweep's
 * record carries exactly what `search --format json --no-timing` prints. */
#include "search_cache.h"
#include "search.h"

#define CLI_MAX_SYSTEMS 16

typedef struct cli_search {
    space_model m;
    search_system sys[CLI_MAX_SYSTEMS];
    est_models *ops[CLI_MAX_SYSTEMS];
    est_comm *comm[CLI_MAX_SYSTEMS];
    int ns;
    int64_t *counts;
    int n_counts;
    search_request q;          /* points into this struct: do not copy it */
    int torchtitan_version;    /* the launch's (cli_opts.torchtitan_version) */
    int nemo_format;           /* --nemo-format of the launches */
    int all_layouts;           /* --all: "admitted" in the JSON */
    unsigned launch_forms;     /* CLI_LAUNCH_FORM_* the JSON rows carry: all
                                  (a search), what sweep --launch asks */
} cli_search;

/* A library session (lib/trainplan.c tp_open; session.c): the hardware
 * database of dirs (hw_db_open's user directories) opened once, the
 * models and tables fitted once and shared by every command run with it
 * (cli_opts.session), from any number of threads. NULL with the message
 * in e when the database does not open. */
cli_session *cli_session_open(const char *const *dirs, int n, tp_err *e);
void cli_session_close(cli_session *s); /* NULL: nothing */
/* The database a command uses: its session's (*owned 0) unless o names
 * hwdb directories of its own, else opened (*owned 1: the caller frees
 * it). NULL with the message in e. */
hw_db *cli_hwdb_for(const cli_opts *o, int *owned, tp_err *e);
/* The session's cache when db is the session's database, else NULL. */
search_cache *cli_session_cache(const cli_opts *o, const hw_db *db);

/* Checks the search options of o (model, systems, GPU counts, --fix,
 * budgets) against db and fills *s with the request. db (and cache, when
 * not NULL: models and tables come from it and stay in it) must outlive
 * s. Returns TP_OK, or the status with its message in e (s is then
 * empty). Free with cli_search_close (accepts NULL and an empty s). */
int cli_search_open(const cli_opts *o, const hw_db *db, search_cache *cache,
                    cli_search *s, tp_err *e);
void cli_search_close(cli_search *s);
/* The JSON object `search --format json` prints for answer a, with its
 * schema_version; timing 0 leaves out elapsed time and threads. The
 * caller deletes it. */
cJSON *cli_search_json(const cli_search *s, const search_answer *a, int timing);

/* A count or amount as the options read it (parse.c): a number with an
 * optional SI suffix k or K (1e3), M (1e6), G or B (1e9), T (1e12),
 * e.g. 2T, 1.5M; a result within 1e-9 of a whole number is that number.
 * 0 on success, -1 (out unchanged) otherwise. */
int cli_parse_si(const char *s, double *out);
/* A count in [lo, hi]: a strict integer (tp_parse_int: not 8.0, not 1e1),
 * or digits[.digits] and an SI suffix whose value is whole (1.5k). 0 on
 * success, -1 (out unchanged) otherwise. */
int cli_parse_count(const char *s, long long lo, long long hi, long long *out);

/* A search that admitted nothing, in words (search_miss.c): a->miss of
 * search_explain_miss; each does nothing where it is NULL.
 * cli_miss_print: the nearest layout against each limit, the one that
 * binds, and the levers that fit, a line each. cli_miss_line: the same
 * on one line (standard error). cli_miss_json: their fields into the
 * nearest_miss object nm. cli_miss_lever_option: the options a lever
 * adds, e.g. "--precision fp8" or "--tokens 1.8T". */
void cli_miss_print(FILE *f, const search_request *q, const search_answer *a);
void cli_miss_line(const search_request *q, const search_answer *a, char *buf,
                   size_t cap);
void cli_miss_json(cJSON *nm, const search_request *q, const search_answer *a);
void cli_miss_lever_option(const search_request *q, const search_lever *lv,
                           char *buf, size_t cap);
/* CSV rows of a miss: the nearest layout ("nearest_miss"), then each
 * lever's #1 ("lever"); at most cap, their number returned. The strings
 * point into the report, q's systems or the row. */
typedef struct cli_miss_csv_row {
    const char *set, *system, *binding;
    int rank;
    const search_figures *f;
    char tag[96];
    double limit, excess;   /* the binding limit and f's excess over it,
                               in search_limit_units */
    char lever[200];        /* "" for the nearest */
} cli_miss_csv_row;
int cli_miss_csv_rows(const search_request *q, const search_answer *a,
                      cli_miss_csv_row *rows, int cap);

/* The CSV cells of a layout's fields as `search --format csv` writes them
 * (cmd_search.c), also a sweep's best layout (cmd_sweep.c): c[2..9] TP,
 * PP, VPP, CP, DP, micro-batch, SP, ZeRO; c[21], c[22] EP and expert TP,
 * empty unless moe. Other cells of c are left as they are. */
void cli_csv_layout_cells(char c[][48], const space_layout *l, int moe);

/* sweep, merge, diff (cmd_sweep.c, cmd_diff.c). diff's exit status when
 * it found changes; its output is kept as on success. */
#define CLI_EXIT_CHANGED 3
int cmd_sweep(const cli_opts *o, cli_out *out, tp_err *e);
int cmd_merge(const cli_opts *o, cli_out *out, tp_err *e);
int cmd_diff(const cli_opts *o, cli_out *out, tp_err *e);

#endif
