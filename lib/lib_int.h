/*
 * lib_int.h - the library's private header: a command's options parsed
 * into the engine's structs (lib_opts), the parser and the commands that
 * run them, and the session object. Private to lib/ (tests and bench
 * programs that link trainplan_commands read it too); the public
 * interface is include/trainplan.h.
 *
 * Options and subcommands are rows of two tables in table.c; the option
 * table generates getopt_long's struct option[], --help and the bash
 * completion.
 */
#ifndef TP_LIB_INT_H
#define TP_LIB_INT_H

#include <stdint.h>
#include <stdio.h>

#include "hw.h"
#include "space.h"
#include "est.h"
#include "job.h"
#include "emit.h"


#define LIB_MAX_HWDB 16


typedef struct lib_session lib_session;
typedef struct lib_estimate_sink lib_estimate_sink;

typedef struct lib_opts {
    lib_session *session;    /* a library session's database and fitted
                                models (session.c), or NULL: opened here */
    FILE *err;               /* diagnostics: the caller's stream (lib_run);
                                NULL = stderr (read it with lib_err) */
    FILE *out;               /* the caller's data stream (lib_run): what an
                                output given as "-" writes; NULL = none */
    emit_format format;
    int format_set;          /* --format given (sweep refuses what it cannot
                                write rather than ignore it) */
    const char *output;      /* -o FILE, or NULL for stdout */
    int threads;             /* 0 = OpenMP's default */
    uint64_t seed;
    const char *hwdb_dirs[LIB_MAX_HWDB];
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
    int job_kind;            /* lib_job_kind of job_file */
    int near;                /* search --near: the job file is the user's
                                own, compared with the search's best */
    const space_model *model_given; /* a model read from a job file, used
                                instead of --model (search_job_model) */
    const char *log_file;    /* --log FILE: a run's log
                                (estimator/train_log.c) */
    int calibrate;           /* --calibrate-to-log */
    int all_layouts;         /* search --all: every admitted layout in JSON */
    int strict;              /* --strict: a config.json that says what
                                trainplan does not model is an error */
    const char *sbatch;      /* search --sbatch FILE: the winner's
                                Megatron-LM launch script */
    int torchtitan_version;  /* --torchtitan-version: launch_tt_version (launch.h);
                                0 = the current one */
    int nemo_format;         /* --nemo-format: launch_nemo_format */
    int launch_show;         /* --launch: emit_launch_show (text output) */
    int launch_show_set;     /* --launch given (sweep: over the spec's
                                "launch") */
    int record;              /* sweep --record: sweep_record_form */
    int record_set;          /* --record given (over the spec's "record") */
    int no_savers;           /* search --no-memory-savers */
    lib_estimate_sink *estimate_sink; /* estimate: the result into this
                                struct, nothing printed (lib_run_sink) */
} lib_opts;

/* Where o's diagnostics go: o->err, or stderr when unset. */
static inline FILE *lib_err(const lib_opts *o)
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
int lib_run(int argc, char **argv, FILE *out, FILE *err);
/* lib_run with session s (NULL: none) given to the command. */
int lib_run_in(int argc, char **argv, FILE *out, FILE *err, lib_session *s);
/* What `estimate` found, for a library call that takes it as a struct
 * (lib/trainplan.c tp_session_estimate) rather than printed. */
struct lib_estimate_sink {
    int filled;              /* 1 once the estimate ran (else 0) */
    est_result r;            /* the layout estimated, search_complete's pick */
    char system[64], gpu[64]; /* the system's and its GPU's names */
    double gpu_mem_bytes;    /* the GPU's capacity */
    int moe;                 /* the model has experts (JSON: ep and etp) */
    int64_t tried, feasible; /* layouts tried, and of them feasible */
};
/* lib_run_in where an `estimate` fills *sink (memset here first) and
 * writes nothing to out: its JSON, its table, --ops and --log's report
 * are not made. Every check and diagnostic is lib_run_in's, "not
 * feasible" on err included, and so is the status. Other commands run as
 * with lib_run_in, leaving sink->filled 0. */
int lib_run_sink(int argc, char **argv, FILE *out, FILE *err, lib_session *s,
                 lib_estimate_sink *sink);
/* The option parser (opt.c): getopt_long's rules with the caller's state.
 * Zero-initialise, then call lib_getopt_next until it returns -1: each
 * call returns an option's id (struct option's val, or its short
 * character) with its value in arg, or '?' for an option that is not
 * known or is ambiguous (opt 0), lacks its value (opt: its id), or has a
 * value it does not take (opt: its id, no_value 1); bad is the element of
 * argv that holds it. At -1, the arguments are argv[1..npos], in order
 * (argv is rearranged: pass a copy). */
typedef struct lib_getopt {
    int ind;          /* the next element of argv */
    const char *next; /* the rest of a cluster of short options */
    const char *arg;  /* the option's value, NULL without */
    int opt;          /* '?': the option at fault, 0 unknown */
    int no_value;     /* '?': a value given to a flag */
    const char *bad;  /* '?': the element of argv at fault */
    int npos;         /* the arguments gathered into argv[1..npos] */
} lib_getopt;
struct option;
int lib_getopt_next(lib_getopt *g, int argc, char **argv,
                    const char *shortopts, const struct option *longopts);
/* Whether the option table has the long option name: -1 no, 0 a flag,
 * 1 an option with a value. */
int lib_option_kind(const char *name);
/* The i-th long option name of the table, NULL past its end. */
const char *lib_option_name(int i);

/* Which framework's job a file holds (launch.h's readers). */
typedef enum lib_job_kind {
    LIB_JOB_NONE,
    LIB_JOB_MEGATRON,   /* Megatron-LM: a command line or a launch script */
    LIB_JOB_NEMO,       /* NeMo: recipe overrides */
    LIB_JOB_TORCHTITAN, /* torchtitan: a job config */
    LIB_JOB_COUNT
} lib_job_kind;
extern const char *const lib_job_options[LIB_JOB_COUNT];
/* Reads o->job_file ("-": standard input) with the reader of o->job_kind
 * (launch.h) into o->job and *m (job_file.c). */
int lib_read_job(lib_opts *o, space_model *m, tp_err *e);



/* Subcommand handlers. Each returns an exit status (enum tp_status) and
 * on failure leaves its message in e. */
int cmd_model_list(const lib_opts *o, emit_out *out, tp_err *e);
int cmd_model_show(const lib_opts *o, emit_out *out, tp_err *e);
int cmd_hw_list(const lib_opts *o, emit_out *out, tp_err *e);
int cmd_hw_show(const lib_opts *o, emit_out *out, tp_err *e);
int cmd_hw_check(const lib_opts *o, emit_out *out, tp_err *e);
int cmd_op_predict(const lib_opts *o, emit_out *out, tp_err *e);
int cmd_op_show(const lib_opts *o, emit_out *out, tp_err *e);
int cmd_op_cv(const lib_opts *o, emit_out *out, tp_err *e);
int cmd_coll_show(const lib_opts *o, emit_out *out, tp_err *e);
int cmd_coll_cv(const lib_opts *o, emit_out *out, tp_err *e);
int cmd_hw_import_nccl_tests(const lib_opts *o, emit_out *out, tp_err *e);

int cmd_estimate(const lib_opts *o, emit_out *out, tp_err *e);
int cmd_search(const lib_opts *o, emit_out *out, tp_err *e);

/* Parses "NxG" (nodes x GPUs per node) into *nodes, *per_node; TP_EUSAGE
 * with a message otherwise. */
int lib_parse_group(const char *s, int *nodes, int *per_node, tp_err *e);

/* Opens the hardware database the options name (built-in, environment,
 * --hwdb). NULL and e on failure. */
hw_db *lib_open_hwdb(const lib_opts *o, tp_err *e);

/* ---- the search request of a set of options (cmd_search.c) ---------- */
/* Shared by `search` and `sweep`: one function turns options into a
 * search_request and one writes a search answer as JSON, so a sweep's
 * record carries exactly what `search --format json --no-timing` prints. */
#include "setup.h"


/* A library session (lib/trainplan.c tp_open; session.c): the hardware
 * database of dirs (hw_db_open's user directories) opened once, the
 * models and tables fitted once and shared by every command run with it
 * (lib_opts.session), from any number of threads. NULL with the message
 * in e when the database does not open. */
lib_session *lib_session_open(const char *const *dirs, int n, tp_err *e);
void lib_session_close(lib_session *s); /* NULL: nothing */
/* The database a command uses: its session's (*owned 0) unless o names
 * hwdb directories of its own, else opened (*owned 1: the caller frees
 * it). NULL with the message in e. */
hw_db *lib_hwdb_for(const lib_opts *o, int *owned, tp_err *e);
/* The session's cache when db is the session's database, else NULL. */
search_cache *lib_session_cache(const lib_opts *o, const hw_db *db);

/* The search options of o as search_setup_open takes them (its
 * strings point into o), and how a search's answer is written. */
void lib_search_ask(const lib_opts *o, search_ask *a);
void lib_search_form(const lib_opts *o, emit_search_form *f);



/* sweep, merge, diff (cmd_sweep.c over sweep/sweep.h). diff's exit status when
 * it found changes; its output is kept as on success. */
#define LIB_EXIT_CHANGED 3
int cmd_sweep(const lib_opts *o, emit_out *out, tp_err *e);
int cmd_merge(const lib_opts *o, emit_out *out, tp_err *e);
int cmd_diff(const lib_opts *o, emit_out *out, tp_err *e);

/* Registers, once per process, what notes a fork; in a forked child,
 * sets the calling thread's OpenMP thread count to 1 (GNU OpenMP's
 * threads do not survive fork; dispatch.c). lib_dispatch and tp_open
 * call it first. */
void lib_fork_guard(void);

#endif
