/*
 * emit.h - how trainplan writes what it found: the output writer (a file
 * written whole or not at all, the caller's stream, a device), the check
 * of a call's paths, aligned tables and CSV, JSON documents and the
 * helpers that put a layout's fields into them, human-readable numbers
 * and wrapped prose. Used by the sweep, the library and the command line;
 * above launch/ and search/ (emit_search.c writes a search's answer).
 */
#ifndef TP_EMIT_H
#define TP_EMIT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "hw.h"
#include "space.h"
#include "est.h"
#include "setup.h"

/* JSON Lines (EMIT_JSONL) only where a command says so (search). */
typedef enum emit_format { EMIT_TABLE, EMIT_JSON, EMIT_CSV, EMIT_JSONL, EMIT_MD, EMIT_FORMAT_COUNT } emit_format;
/* EMIT_MD (markdown): diff only. */

/* Lets out.c and sweep install their SIGHUP, SIGINT and SIGTERM handlers
 * (the command line's main does; a library call otherwise installs none).
 * emit_signals_owned says whether it was called. */
void emit_own_signals(void);
int emit_signals_owned(void);

/* Output goes to stdout; to a device or FIFO directly; or to a temporary
 * file beside -o FILE (beside a symbolic link's target: the link stays)
 * that is renamed over it only when the command succeeded, so a failed or
 * signalled run never leaves a half-written file nor a temporary one
 * (out.c). A replaced file keeps its mode, a new one gets 0666 & ~umask. */
typedef struct emit_out {
    FILE *f;
    const char *path;   /* as given, for messages; NULL for stdout */
    char target[4096];  /* path with symbolic links followed */
    char tmp[4096];     /* temporary path while writing ("" when direct) */
    int direct;         /* a device or FIFO, written in place */
    int slot;           /* out.c's signal clean-up slot of tmp, -1 none */
    int borrowed;       /* the caller's stream (emit_out_stream): not closed */
    int pending;        /* finished, the temporary file not yet renamed */
} emit_out;

/* Opens the output path names: "-" (or NULL) is the caller's stream
 * (emit_out_stream: never closed; NULL caller: TP_EINTERNAL, as
 * emit_io_check refuses such a "-" first), a device, FIFO or descriptor
 * path (/dev/stdout) is written directly, a regular file through a
 * temporary file. TP_OK, or TP_EIO naming path and reason. */
int emit_out_open(emit_out *o, const char *path, FILE *caller, tp_err *e);
/* A writer on the caller's open stream f (standard output, or a library
 * caller's memory stream): emit_out_close flushes and checks it but leaves
 * it open. TP_OK. */
int emit_out_stream(emit_out *o, FILE *f);
/* Closes; on ok flushes, syncs and renames the temporary file into place,
 * else removes it. Every write, flush, sync, close and rename error
 * (standard output's too) is TP_EIO naming the path and the reason;
 * errors when !ok are not reported (the command's own error is). */
int emit_out_close(emit_out *o, int ok, tp_err *e);
/* emit_out_close in two steps, for outputs that must all be complete
 * before any is put in place (hw import-nccl-tests): emit_out_finish
 * flushes, syncs and closes (TP_EIO as emit_out_close; the temporary file
 * is then removed), emit_out_commit renames a finished file into place
 * (TP_EIO where it cannot), emit_out_discard drops an output at any stage
 * (its temporary file removed; a no-op once committed). */
int emit_out_finish(emit_out *o, tp_err *e);
int emit_out_commit(emit_out *o, tp_err *e);
void emit_out_discard(emit_out *o);
/* The file path names once its symbolic links are followed (a dangling
 * link's target need not exist) into out[cap]. TP_OK or TP_EIO. */
int emit_out_resolve(const char *path, char *out, size_t cap, tp_err *e);
/* Whether a path (links followed) names a process's open descriptor:
 * under /dev/fd/, or /proc/PID/fd/ (where /dev/stdout leads). Such a path
 * is written in place, appended to, never renamed over: the file behind
 * it is held open by its owner (a shell's > or >>). */
int emit_out_names_fd(const char *path);

/* A path one call reads or writes, for emit_io_check. */
typedef enum emit_io_role {
    EMIT_IO_IN,      /* read: a job file, a spec, a config.json, a log */
    EMIT_IO_OUT,     /* a file written: -o, --svg, --sbatch; "-" is the
                       caller's stream */
    EMIT_IO_OUT_DIR  /* a directory written into (hw import-nccl-tests -o):
                       "-" refused */
} emit_io_role;
typedef struct emit_io {
    const char *what;  /* the option ("-o", "--sbatch") or argument ("the
                          spec") that names it, for messages */
    const char *path;  /* as given; "-": standard input or the caller's
                          stream */
    emit_io_role role;
    int implicit;      /* the command's output without -o (path "-") */
} emit_io;
/* Refuses, with TP_EUSAGE naming both paths and their options, what
 * would lose data before anything is written: an output that is one of
 * the inputs, or one file named by two outputs (the same file: device and
 * inode where it exists, else the real path of its directory and its
 * name; only regular files and files to be, as two writers of /dev/null
 * lose nothing); "-" as a directory output; "-" for an output when
 * another output already writes the caller's stream. caller is the
 * stream "-" writes (its descriptor, where it has one, identifies
 * /dev/stdout's file). TP_OK otherwise. */
int emit_io_check(const emit_io *io, int n, FILE *caller, tp_err *e);

/* A table of strings, printed aligned (table format) or as RFC 4180 CSV.
 * A cell that is EMIT_MISSING shows as such in a table and is an empty
 * cell in CSV, where JSON writes null. */
#define EMIT_MISSING "-"
typedef struct emit_table {
    int ncols;
    const char **headers;
    const char *align;   /* per column 'l' or 'r' */
    int nrows, cap;
    char **cells;        /* nrows x ncols, owned */
} emit_table;

void emit_table_init(emit_table *t, int ncols, const char **headers,
                    const char *align);
/* Appends a row of ncols cells, each formatted from the printf-style
 * strings in order; cells are copied. */
void emit_table_row(emit_table *t, ...);
/* The same from an array of n cells (missing ones empty). */
void emit_table_rowv(emit_table *t, const char *const *cells, int n);
void emit_table_print(const emit_table *t, FILE *f, emit_format fmt);
void emit_table_free(emit_table *t);

/* The layout of the JSON outputs (docs/output-formats.md, docs/schemas/):
 * one integer for all of them, bumped when a key is removed or renamed or
 * changes type, unit or meaning; a new key does not bump it. */
#define EMIT_SCHEMA_VERSION 1
/* Puts "schema_version" first in v, an object, or in each object of v, an
 * array (model list, hw check print arrays; readers of them stay as they
 * were), unless it is there already; returns v. emit_print_json does it;
 * JSON Lines records (search, sweep) call it themselves. */
cJSON *emit_json_version(cJSON *v);

/* Adds to object o "recompute_modules": the names of the modules l's
 * selective recomputation reruns (space_recompute_modules), an array. */
void emit_json_rc_modules(cJSON *o, const space_layout *l);

/* Adds to object o "pipeline_split": l's split options as Megatron-LM
 * names them (null where not given), the rule that refuses it (null),
 * and the transformer layers of every stage (chunk k / PP of rank k % PP)
 * and of every pipeline rank as Megatron-Core builds them, and the stage
 * of the MTP modules (null without). */
void emit_json_split(cJSON *o, const space_model *m, const space_layout *l);

/* Prints a JSON output document, pretty, with a trailing newline, with its
 * schema_version (emit_json_version), and deletes it. */
void emit_print_json(FILE *f, cJSON *v);
/* text printed from column `at` (where the caller left the line), words
 * wrapped before `width`, continuation lines indented to `indent`; a word
 * longer than the room stands alone. Runs of blanks become one. Ends the
 * line. */
void emit_print_wrapped(FILE *f, const char *text, int at, int indent,
                       int width);
/* Each line of s indented by two blanks (empty lines left empty). */
void emit_print_indented(FILE *f, const char *s);
/* The width search and estimate texts wrap their prose to. */
#define EMIT_TEXT_WIDTH 100
/* A paragraph of prose, printf-formatted, wrapped to EMIT_TEXT_WIDTH with
 * continuation lines indented by `indent` (a leading indent of the text
 * is kept); fmt's trailing newline is dropped, one is printed. */
void emit_wrapf(FILE *f, int indent, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Human-readable numbers: 6.74e9 -> "6.74 B" params, bytes -> "80.0 GiB",
 * FLOP/s -> "989.5 TFLOP/s", s -> "2.0 us". */
void emit_fmt_count(char *buf, size_t cap, double v);
void emit_fmt_si(char *buf, size_t cap, double v, const char *unit);
void emit_fmt_bytes(char *buf, size_t cap, double bytes);

/* l's memory savers as the "memory_savers" object of o (estimate's layout,
 * search's rows; docs/output-formats.md), and in words into buf[cap] (""
 * for none; out.c). */
void emit_json_savers(cJSON *o, const space_layout *l);
char *emit_savers_text(const space_layout *l, char *buf, size_t cap);
/* An estimate's error band (est_error_band) as the "error_band" object of
 * o (docs/output-formats.md), and in words into buf[cap] (out.c). */
struct est_band;
void emit_json_band(cJSON *o, const struct est_band *b);
char *emit_band_text(const struct est_band *b, char *buf, size_t cap);

/* ---- an estimate (estimate.c) -------------------------------------------- */
/* One estimate as `estimate` writes it. Every pointer outlives the call. */
typedef struct emit_estimate {
    const est_ctx *ctx;       /* the system, its GPU, the models and kernel
                                 efficiency the estimate used */
    const space_model *m;
    const space_layout *want; /* the layout asked for: its SEARCH_UNSET
                                 fields were chosen (search_complete) */
    const est_result *r;      /* the estimate of the layout chosen */
    int64_t tried, feasible;  /* search_complete's counts */
    double tokens;            /* tokens to train, 0: none (no cost) */
    const est_run_fed *fed;   /* a run's log against r (est_fed_back), or
                                 NULL: no log */
    const char *log_path;     /* that log, as the user named it */
    int ops;                  /* also each operator timed (est_trace) */
} emit_estimate;
/* The object `estimate --format json` prints (docs/output-formats.md);
 * the caller prints (emit_print_json) or deletes it. */
cJSON *emit_estimate_json(const emit_estimate *a);
/* The estimate in words and tables (fmt: a table format, its tables in
 * it): layout, software, time term by term with its error band, memory of
 * the busiest GPU and of every stage, the cost, the log, the operators. */
void emit_estimate_text(FILE *f, emit_format fmt, const emit_estimate *a);

/* ---- a search's answer (search.c) ---------------------------------------- */
/* The launch forms a JSON row carries (launch and launch_args). */
enum {
    EMIT_LAUNCH_FORM_MEGATRON = 1u << 0,   /* megatron, megatron_sbatch */
    EMIT_LAUNCH_FORM_NEMO = 1u << 1,
    EMIT_LAUNCH_FORM_TORCHTITAN = 1u << 2, /* torchtitan_config */
    EMIT_LAUNCH_FORM_ALL = 7u
};
/* Which launches a search's text prints for #1 (--launch); JSON carries
 * every form whatever this says. */
typedef enum emit_launch_show {
    EMIT_LAUNCH_NONE,       /* a line saying how to get them: the default */
    EMIT_LAUNCH_MEGATRON,   /* Megatron-LM's launch script */
    EMIT_LAUNCH_NEMO,       /* NeMo: Megatron-Bridge overrides or 1.x YAML */
    EMIT_LAUNCH_TORCHTITAN, /* torchtitan's config */
    EMIT_LAUNCH_ALL,        /* all three, the estimate's framework first */
    EMIT_LAUNCH_SHOW_COUNT
} emit_launch_show;
extern const char *const emit_launch_show_names[EMIT_LAUNCH_SHOW_COUNT];
/* The forms --launch SHOW asks for (none: 0, all: every one). */
unsigned emit_launch_forms(int show);

/* How a search's answer is written. */
typedef struct emit_search_form {
    int torchtitan_version;    /* launch_tt_version of the launches */
    int nemo_format;           /* launch_nemo_format of the launches */
    int all_layouts;           /* "admitted": every admitted layout */
    unsigned launch_forms;     /* EMIT_LAUNCH_FORM_*: the launches each row
                                  carries (a search: every one; a sweep's
                                  records: what its spec asks) */
    int launch_show;           /* emit_launch_show: #1's launches in the
                                  text */
    int titan_first;           /* the estimates assumed torchtitan: its
                                  launch first */
} emit_search_form;

/* The JSON object `search --format json` prints for answer a of search s
 * written as f says, with its schema_version; timing 0 leaves out
 * elapsed time and threads. The caller deletes it. */
cJSON *emit_search_json(const search_setup *s, const emit_search_form *f,
                        const search_answer *a, int timing);

/* --svg FILE: the picture of answer a of search q (plot/svg.c; version
 * in its subtitle) written whole or not at all to path ("-": the caller's
 * stream, emit_out_open). TP_OK or TP_EIO with the message in e. */
int emit_search_svg(const char *path, FILE *caller, const search_request *q,
                    const search_answer *a, const char *version, tp_err *e);

/* A search that admitted nothing, in words (miss.c): a->miss of
 * search_explain_miss; each does nothing where it is NULL.
 * emit_miss_print: the nearest layout against each limit, the one that
 * binds, and the levers that fit, a line each. emit_miss_line: the same
 * on one line (standard error). emit_miss_json: their fields into the
 * nearest_miss object nm. emit_miss_lever_option: the options a lever
 * adds, e.g. "--precision fp8" or "--tokens 1.8T". */
void emit_miss_print(FILE *f, const search_request *q, const search_answer *a);
void emit_miss_line(const search_request *q, const search_answer *a, char *buf,
                   size_t cap);
void emit_miss_json(cJSON *nm, const search_request *q, const search_answer *a);
void emit_miss_lever_option(const search_request *q, const search_lever *lv,
                           char *buf, size_t cap);
/* CSV rows of a miss: the nearest layout ("nearest_miss"), then each
 * lever's #1 ("lever"); at most cap, their number returned. The strings
 * point into the report, q's systems or the row. */
typedef struct emit_miss_csv_row {
    const char *set, *system, *binding;
    int rank;
    const search_figures *f;
    char tag[96];
    double limit, excess;   /* the binding limit and f's excess over it,
                               in search_limit_units */
    char lever[200];        /* "" for the nearest */
} emit_miss_csv_row;
int emit_miss_csv_rows(const search_request *q, const search_answer *a,
                      emit_miss_csv_row *rows, int cap);

/* The CSV cells of a layout's fields as `search --format csv` writes them
 * (search.c), also a sweep's best layout (sweep_run.c): c[2..9] TP,
 * PP, VPP, CP, DP, micro-batch, SP, ZeRO; c[21], c[22] EP and expert TP,
 * empty unless moe. Other cells of c are left as they are. */
void emit_csv_layout_cells(char c[][48], const space_layout *l, int moe);

#endif
