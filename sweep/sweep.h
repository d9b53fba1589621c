/*
 * sweep.h - `trainplan sweep`, `merge` and `diff` (issue 7) as a module:
 * the sweep spec and its scenarios (sweep_spec.c), the records and the
 * files that hold them (sweep_rec.c), the run (sweep_run.c), merge and
 * CSV (sweep_csv.c) and diff (sweep_diff.c); the command line fills a
 * sweep_opts from its options (lib/cmd_sweep.c).
 *
 * A scenario is one search: one entry of each list of the spec. Scenario
 * k of the cartesian product is numbered in the spec's order, the first
 * list slowest: models, systems, gpus, seq_lengths, global_batch_sizes,
 * precisions, tokens, prices. Its id is the FNV-1a 64 digest of its
 * inputs as text (not of the files they come from), so the same scenario
 * of two nights, or of two specs, has the same id.
 */
#ifndef TP_SWEEP_H
#define TP_SWEEP_H

#include <stdint.h>
#include <stdio.h>

#include "emit.h"
#include "hw.h"
#include "job.h"
#include "setup.h"

/* Exit codes of a sweep stopped by a signal after its current record
 * (128 + signal, as a shell reports it) and of a diff that found changes.
 * README.md and docs/trainplan.1 list them. */
#define SWEEP_EXIT_SIGHUP 129
#define SWEEP_EXIT_SIGINT 130
#define SWEEP_EXIT_SIGTERM 143
#define DIFF_EXIT_CHANGED 3

typedef enum sweep_dim {
    SWEEP_MODELS,
    SWEEP_SYSTEMS,
    SWEEP_GPUS,
    SWEEP_SEQ,
    SWEEP_GBS,
    SWEEP_PRECISIONS,
    SWEEP_TOKENS,
    SWEEP_PRICES,
    SWEEP_DIM_COUNT
} sweep_dim;
/* The spec's keys of the lists, in scenario order. */
extern const char *const sweep_dim_keys[SWEEP_DIM_COUNT];

#define SWEEP_MAX_VALUES 1024
/* hwdb directories of a sweep, the command line's and the spec's
 * together (as the command line takes at most, LIB_MAX_HWDB). */
#define SWEEP_MAX_HWDB 16

/* One scenario as its search takes it: the job, the search's options
 * and how its record writes the answer (the spec's "options" on top of
 * the command line's, then the scenario's entries). */
typedef struct sweep_case {
    search_job job;
    search_ask ask;
    emit_search_form form;
} sweep_case;

/* A call of sweep, merge or diff (sweep_run, sweep_merge, sweep_diff). */
typedef struct sweep_opts {
    char **pos;              /* sweep: the spec; merge: the record files;
                                diff: the old and the new file */
    int npos;
    const char *out_dir;     /* sweep -o FILE: its own file, appended and
                                resumable; NULL or "-": the records go to
                                the caller's stream (emit_out) */
    FILE *err;               /* diagnostics; NULL: stderr */
    emit_format format;
    int format_set;          /* a format given (one sweep cannot write is
                                refused, not ignored) */
    int resume, overwrite, progress;
    int shard_i, shard_n;    /* shard I of N; shard_n 0: the whole spec */
    const char *hwdb_dirs[SWEEP_MAX_HWDB]; /* the command line's, which
                                override the spec's */
    int n_hwdb;
    double threshold;        /* diff: relative change that counts; < 0:
                                0.02 */
    sweep_case base;         /* the command line's job and search options */
    int launch_set;          /* base.form.launch_forms given (--launch): the
                                forms every record carries, whatever the
                                spec's "launch" says; 0: the spec's */
    int record;              /* sweep_record_form, with record_set */
    int record_set;          /* record given (--record): every record's
                                form, whatever the spec's "record" says;
                                0: the spec's */
} sweep_opts;

/* An o with nothing given: a job with nothing fixed (search_job_init),
 * the launches the spec asks for (none unless its "launch" names them),
 * the record form it asks for (compact unless its "record" says full),
 * diff's default threshold. */
void sweep_opts_init(sweep_opts *o);

static inline FILE *sweep_err(const sweep_opts *o)
{
    return o && o->err ? o->err : stderr;
}

/* The commands (sweep_run.c, sweep_csv.c, sweep_diff.c): each returns an
 * exit status (tp_status; DIFF_EXIT_CHANGED, SWEEP_EXIT_SIG*) with the
 * message in e, and writes its data to out (sweep: unless o->out_dir
 * names its own file). */
int sweep_run(const sweep_opts *o, emit_out *out, tp_err *e);
int sweep_merge(const sweep_opts *o, emit_out *out, tp_err *e);
int sweep_diff(const sweep_opts *o, emit_out *out, tp_err *e);
#define SWEEP_MAX_SCENARIOS 10000000

/* What a record's "search" holds, the spec's "record" key (--record over
 * it), which the record's own "record" member names: what a dashboard
 * reads, in fewer bytes a row (compact, the default: sweep_run.c
 * compact_search; issue 32), or what search --format json --no-timing
 * prints (full). */
typedef enum sweep_record_form {
    SWEEP_RECORD_COMPACT, /* 0: a zeroed spec or sweep_opts is the default */
    SWEEP_RECORD_FULL,
    SWEEP_RECORD_COUNT
} sweep_record_form;
extern const char *const sweep_record_names[SWEEP_RECORD_COUNT];
/* A parsed spec: the lists as canonical text (what the record echoes
 * and the id digests) and the options every scenario shares. */
typedef struct sweep_spec {
    int n[SWEEP_DIM_COUNT];          /* values per list (>= 1) */
    char **val[SWEEP_DIM_COUNT];     /* n[d] strings each, owned; "" = unset */
    char **model_path;               /* n[SWEEP_MODELS], owned: the file a
                                        config.json entry is read from (a
                                        relative path from the spec's
                                        folder); NULL for a preset */
    char options_json[2048];         /* the "options" object, unformatted */
    sweep_case base;                 /* the options with "options" applied */
    int64_t count;                   /* scenarios: product of n[] */
    sweep_record_form record;        /* the "record" key (compact when
                                        absent) */
    int launch;                      /* the "launch" key: emit_launch_show,
                                        EMIT_LAUNCH_NONE when absent; base's
                                        launch_forms say the same */
} sweep_spec;

/* Parses the spec text (path names it in messages) on top of the
 * command's options base (n_hwdb: the hwdb directories its command line
 * gave, which leave the spec SWEEP_MAX_HWDB - n_hwdb). Every problem is reported, one a line, each with
 * its JSON path, into *report (the caller frees it; NULL when clean),
 * after before (problems the caller found, one line, e.g. an hwdb
 * directory of the spec that does not load; NULL or "" for none). A key
 * twice is one problem among the others. Models are resolved and
 * systems looked up in db; then every scenario is set up as `search`
 * would (search_setup_open, with cache, which may be NULL) and what fails
 * is reported too. Relative paths (config.json models, hwdb directories)
 * are read from the spec's folder. Returns TP_OK, or TP_EDATA (bad
 * spec). Free with sweep_spec_free (accepts NULL). */
int sweep_spec_parse(const char *path, const char *text, size_t len,
                     const sweep_case *base, int n_hwdb, const hw_db *db,
                     search_cache *cache, const char *before,
                     sweep_spec *s, char **report, tp_err *e);
/* The spec's "hwdb" directories (its optional key: a list, as --hwdb
 * DIR), before the spec is parsed, since they are part of the db it is
 * parsed against: relative ones from the spec's folder (or the working
 * directory where only there), malloc'd into dirs (at most cap); their
 * number. Only directories that exist: whatever is wrong with the key is
 * sweep_spec_parse's to say. */
int sweep_spec_hwdb(const char *path, const char *text, size_t len,
                    char **dirs, int cap);
void sweep_spec_free(sweep_spec *s);

/* Scenario k's options (strings point into s) and its id text (16 hex
 * digits) and canonical inputs (buf). */
void sweep_scenario(const sweep_spec *s, int64_t k, sweep_case *o);
void sweep_scenario_id(const sweep_spec *s, int64_t k, char id[17]);

/* --shard I/N: scenario k belongs to shard k % N (round robin, so every
 * shard gets every model). Returns how many of count belong to shard i,
 * and the j-th of them with sweep_shard_at. */
int64_t sweep_shard_size(int64_t count, int i, int n);
int64_t sweep_shard_at(int64_t j, int i, int n);

/* FNV-1a, 64 bits (Fowler, Noll, Vo; the IETF draft
 * draft-eastlake-fnv's test vectors in tests/test_sweep.c). h0 is the
 * offset basis or a running hash. */
#define SWEEP_FNV_BASIS 0xcbf29ce484222325ull
uint64_t sweep_fnv1a(uint64_t h0, const void *data, size_t len);

/* ---- records (sweep_rec.c) -------------------------------------------- */

/* What a line says of itself. check: FNV-1a 64 of its "version" and its
 * "inputs" (unformatted), so --resume redoes a record written by another
 * version or from other input files; 0 in an expected key = not checked. */
typedef struct sweep_key {
    int64_t index, count;
    char id[17];
    uint64_t check;
    int seal; /* sweep_record_sealed of the line (sweep_record_key only) */
} sweep_key;

/* A record's seal: its last member, "record_fnv1a64", the FNV-1a 64 of
 * every byte of the line before it (from the '{' to the ',' that starts
 * the member), 16 hex digits. A record whose bytes were damaged after
 * it was written (a flipped digit still parses) no longer matches it:
 * --resume redoes it, merge refuses it. Records of versions before the
 * seal have none (and --resume redoes them). */
#define SWEEP_SEAL_KEY "record_fnv1a64"
/* rec[len]: a record as cJSON_PrintUnformatted prints it (an object, its
 * '}' last). Returns the line to write: rec with its seal, then '\n',
 * NUL-terminated; the caller frees it. */
char *sweep_record_seal(const char *rec, size_t len);
/* 1: line[len] (no '\n') ends with a seal that matches its bytes; 0: it
 * has none; -1: it has one that does not match (damaged). */
int sweep_record_sealed(const char *line, size_t len);

/* The check of a record with this version and inputs (may be NULL). */
uint64_t sweep_record_check(const char *version, const cJSON *inputs);

/* Parses one line (len bytes, without its newline) as a record: its
 * index, count and id. Returns 1 when it is one, else 0. */
int sweep_record_key(const char *line, size_t len, sweep_key *k);

/* The lines of buf[len]: starts[i], lens[i] (without '\n') for the
 * complete lines (ending in '\n'); *tail is the byte count of a last,
 * unterminated line (a torn write), 0 if none. Caller frees the arrays. */
int sweep_split_lines(const char *buf, size_t len, size_t **starts,
                      size_t **lens, size_t *tail);

/* --resume: how many complete records at the start of buf[len] are,
 * in order, the expected scenarios want[0..n) (index, count, id, the
 * check where want's is not 0, and a seal that matches the line's
 * bytes); *keep_bytes is where the first record that is not (torn,
 * unparsable, damaged, unsealed, another scenario, version or input
 * files) starts: the file is truncated there. */
int64_t sweep_resume_scan(const char *buf, size_t len, const sweep_key *want,
                          int64_t n, size_t *keep_bytes);

/* --resume, before anything is cut: whether the first line of buf[len]
 * (len > 0) is a record of this call: want[0]'s (index, count and id;
 * its check and seal may differ: it is then redone), or a torn write of
 * one (a prefix of how want[0]'s record starts). Returns 1, or 0 with
 * what the line is, in words, into why[cap]: not a record, a record of
 * another spec, another shard's scenario (spec_count: the spec's
 * scenarios; id_of(k, id, ctx) gives scenario k's id). The caller
 * refuses such a file (nothing of it is ours to cut). */
int sweep_resume_first(const char *buf, size_t len, const sweep_key *want,
                       int64_t n, int64_t spec_count,
                       void (*id_of)(int64_t k, char id[17], void *ctx),
                       void *ctx, char *why, size_t cap);

/* ---- diff (sweep_diff.c) ---------------------------------------------- */

/* What diff compares of one record. */
typedef struct sweep_outcome {
    char id[17];
    int64_t index, count;
    char label[256];        /* model, system, gpus, seq, gbs, ... */
    char status[16];        /* "ok", "infeasible", "error" */
    char layout[128];       /* best layout tag + system, "" if none */
    double time_s, cost_usd; /* best iteration time and cost, 0 if none */
    uint64_t inputs_digest; /* of the record's "inputs" */
    /* What the scenario was asked with, "key\tvalue\n" per member of the
     * record's "scenario" (options as JSON), and the files it read,
     * "name\tdigest\n" per file of its "inputs": diff says which input
     * changed. Cut at their size (a long options object). */
    char dims[384];
    char files[384];
} sweep_outcome;

/* The inputs that differ between a and b, "system eos -> selene; price
 * null -> 2.79" for dims or "eos.json" for files, in why[cap]; the
 * number of differences. */
int sweep_dims_diff(const char *a, const char *b, int values, char *why,
                    size_t cap);

/* Parses a record line into *out. Returns 1 on success. */
int sweep_outcome_parse(const char *line, size_t len, sweep_outcome *out);

typedef enum sweep_change {
    SWEEP_SAME,
    SWEEP_CHANGED, /* layout, status, or time/cost beyond the threshold */
    SWEEP_NEW,
    SWEEP_VANISHED
} sweep_change;

/* Compares a (old) with b (new): SWEEP_SAME or SWEEP_CHANGED, and why in
 * why[cap] ("layout", "time +3.1%", ...). */
sweep_change sweep_compare(const sweep_outcome *a, const sweep_outcome *b,
                           double threshold, char *why, size_t cap);

/* Whether this process was launched by mpirun (Open MPI, or a PMI
 * launcher such as srun): its environment says so (sweep_run.c). */
int sweep_under_mpi(void);

/* ---- CSV and merge (sweep_csv.c) ---------------------------------------- */

/* sweep and merge write records (jsonl, json) or csv; a format they
 * cannot write (table, md) is refused rather than ignored: TP_EUSAGE
 * naming cmd, what it writes (what) and when its CSV is written. */
int sweep_format_refused(const sweep_opts *o, const char *cmd, const char *what,
                         const char *csv_when, tp_err *e);
/* sweep --format csv: the sweep as JSON Lines into a temporary file beside
 * the output, then one CSV row a scenario, written all or nothing. */
int sweep_csv(const sweep_opts *o, emit_out *out, tp_err *e);

#endif
