/*
 * launch.h - how to run a layout, one file per framework: Megatron-LM
 * (launch_megatron.c), NeMo (launch_nemo.c, launch_nemo1.c), torchtitan
 * (launch_torchtitan.c); the growable text they write into and the job
 * they describe (launch.c). What the files share is launch_int.h's.
 *
 * It reads the other way too: a framework's launch back into the job it
 * runs (search_job, search/job.h) and the model it trains
 * (launch_megatron_read.c, launch_nemo_read.c, launch_torchtitan_read.c).
 * The commands (search, estimate, sweep) fill a launch_plan and print what
 * the writers return; nothing here prints, but the readers' notes.
 */
#ifndef TP_LAUNCH_H
#define TP_LAUNCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "job.h"
#include "space.h"
#include "tp_base.h"

/* Which NeMo a launch targets (--nemo-format; launch_nemo.c). */
typedef enum launch_nemo_format {
    LAUNCH_NEMO_BRIDGE, /* Megatron-Bridge recipe overrides (NeMo 2.0's
                           successor): the default */
    LAUNCH_NEMO_V1,     /* the NeMo 1.x launcher's YAML keys */
    LAUNCH_NEMO_FORMAT_COUNT
} launch_nemo_format;
extern const char *const launch_nemo_format_names[LAUNCH_NEMO_FORMAT_COUNT];


/* Text that grows as it is written; aborts with a message when memory
 * runs out (as every allocation of the CLI). Zero-initialise, write with
 * launch_text_put, free with launch_text_free. p is NUL-terminated once
 * anything was written (NULL before). */
typedef struct launch_text {
    char *p;
    size_t n, cap;
} launch_text;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void launch_text_put(launch_text *t, const char *fmt, ...);
void launch_text_free(launch_text *t);
/* t's text, "" when nothing was written. */
const char *launch_text_str(const launch_text *t);

/* The job a launch describes: the layout, the model, where it runs and
 * what was estimated for it. Pointers are borrowed. */
typedef struct launch_plan {
    const space_layout *layout;
    const space_model *model;
    const char *model_ref;  /* --model as given (a preset or a config.json
                               path), NULL when unknown */
    const char *system;     /* the system's name, NULL when unknown */
    int gpus_per_node;      /* the system's, 0 when unknown */
    const char *gpu_arch;   /* the GPU's hwdb arch ("hopper",
                               "blackwell"), NULL when unknown */
    double tokens;          /* tokens to train, 0 when unknown */
    double iteration_s;     /* the estimated iteration, 0 when unknown */
    int torchtitan_version; /* launch_tt_version the torchtitan config targets */
    int nemo_format;        /* launch_nemo_format of launch_nemo */
} launch_plan;

/* Nodes of the job and the GPUs it uses on each (the node's count, or the
 * job's where it is smaller). */
int64_t launch_nodes(const launch_plan *c, int64_t *per_node);

/* Megatron-LM: torchrun (with its c10d rendezvous at $MASTER_ADDR) and
 * pretrain_gpt.py's arguments on one line: the model, the layout, the
 * precision, the batch; not the data, tokenizer, iterations or
 * hyperparameters, which the script below adds. The environment the
 * script exports or unsets leads the line (NAME=value words, then
 * `env -u NAME`): the three forms write it and the arguments from one
 * list. What Megatron-LM cannot express is a trailing "  # ..." comment. */
void launch_megatron(const launch_plan *c, launch_text *out);

/* Megatron-LM: a launch script that runs as written but for its paths:
 * #SBATCH lines and srun under Slurm, torchrun's c10d rendezvous under any
 * other scheduler, the environment Megatron-LM asserts, pretrain_gpt.py's
 * arguments (the line above plus iterations, hyperparameters, data,
 * tokenizer and checkpoints). */
void launch_megatron_script(const launch_plan *c, launch_text *out);

/* The Megatron-LM flags that differ from `from` to `to`, one a line:
 * "  --flag A -> B", "+ --flag [V]" (added), "- --flag [V]" (dropped);
 * nothing when they launch alike. */
void launch_megatron_diff(const launch_plan *from, const launch_plan *to,
                              launch_text *out);

/* NeMo's job in c->nemo_format: Megatron-Bridge's ConfigContainer
 * overrides, one "key=value" a line (the default), or the NeMo 1.x
 * launcher's YAML keys, one "key: value" a line; a first comment line
 * names the version targeted, "# ..." lines what it cannot express. */
void launch_nemo(const launch_plan *c, launch_text *out);

/* The torchtitan versions a config can target (launch_torchtitan.c says
 * what differs): the current one, which configures in Python, first. */
typedef enum launch_tt_version {
    LAUNCH_TT_MAIN, /* main at b5bcd76c66d0 (2026-08-21): a Python config */
    LAUNCH_TT_V02,  /* v0.2.0 to v0.2.2: a TOML job config */
    LAUNCH_TT_VERSION_COUNT
} launch_tt_version;

/* --torchtitan-version's value ("main", "0.2", "v0.2.2", ...) into *v;
 * TP_EUSAGE naming the value and the known ones otherwise. */
int launch_tt_version_parse(const char *s, int *v, tp_err *e);

/* torchtitan's job config for c->torchtitan_version: its first line names
 * the version; what the version cannot express is a comment line starting
 * "# NOT EXPRESSIBLE", never a key. */
void launch_torchtitan(const launch_plan *c, launch_text *out);

/* ---- the launches as data (issue 20) ------------------------------------
 * What the writers above write, split into its parts for programs: each
 * part exactly as the text has it (a value's text in the framework's own
 * syntax, not converted), so the text and the data cannot disagree. The
 * caller deletes the object. */

/* Megatron-LM: {"args": pretrain_gpt.py's arguments as launch_megatron's
 * line passes them, one element a shell word (a list flag's values each
 * their own), "notes": what Megatron-LM cannot express, the line's
 * trailing comment, "env": {NAME: value} the line sets, "unset": [NAME]
 * it removes}. */
cJSON *launch_megatron_json(const launch_plan *c);
/* NeMo: text is launch_nemo's in format (launch_nemo_format):
 * {"format": "bridge" or "nemo1", "overrides": {key: value text} in the
 * text's order (a "++" prefix kept: key=value is the line), "notes": the
 * comment lines without "# ", a nemo1 key's trailing comment as
 * "KEY: comment"}. */
cJSON *launch_nemo_json(const char *text, int format);
/* torchtitan: text is launch_torchtitan's for version (launch_tt_version):
 * {"version": "main" or "0.2", "base": the function main's config starts
 * from ("Trainer.Config", "llama3_8b"; null for 0.2), "config": {dotted
 * key ("parallelism.tensor_parallel_degree"): value text (Python's syntax
 * for main, TOML's for 0.2; a list that the text spreads over lines on
 * one line)}, "notes": the comment lines without "# "}. */
cJSON *launch_torchtitan_json(const char *text, int version);

/* Helpers of the three: o[key] = value, a later key replacing an earlier
 * one (as Hydra and Python read them); a comment line into notes without
 * its "# "; the next line of *p (split in place), NULL at the end. */
void launch_json_set(cJSON *o, const char *key, const char *value);
void launch_json_comment(cJSON *notes, const char *line);
char *launch_next_line(char **p);

/* ---- a launch script's commands (launch_shell.c, issue 30) -------------
 * The script read as `env -i bash FILE` runs it: its own variables
 * expanded as bash expands them, the branches of conditions it can
 * evaluate taken; what the file does not say (the environment, the
 * arguments, $(...)) is marked unknown with the reason, for the reader to
 * refuse where the value matters. */
enum {
    LAUNCH_SH_UNKNOWN = 1, /* part of the word is not known from the file */
    LAUNCH_SH_HEAD = 2,    /* ... its start: it could be a flag */
    LAUNCH_SH_SPLIT = 4,   /* ... an unquoted expansion: any number of words */
    LAUNCH_SH_ASSIGN = 8   /* NAME=value, an assignment (value expanded) */
};

typedef struct launch_sh_word {
    const char *s;   /* the word after expansion, quotes removed; an
                        unknown part is left out */
    const char *why; /* LAUNCH_SH_UNKNOWN: which variable and why, with the
                        file:line where it became unknown */
    int line;        /* the line the word starts on */
    unsigned flags;  /* LAUNCH_SH_* */
    int at;          /* LAUNCH_SH_UNKNOWN: where in s the unknown part was */
} launch_sh_word;

/* One simple command that runs (or may run): words [first, first + n) of
 * the script, its prefix assignments first (LAUNCH_SH_ASSIGN); a bare
 * assignment is a command of assignments only. cond_line: the line of
 * the condition, loop or function it may run under, 0 when it surely
 * runs. */
typedef struct launch_sh_cmd {
    int first, n, line, cond_line;
} launch_sh_cmd;

typedef struct launch_sh {
    launch_sh_word *w;
    int nw, capw;
    launch_sh_cmd *c;
    int nc, capc;
    char **pool; /* the strings, freed with the script */
    int npool, cappool;
} launch_sh;

/* Reads text (file names it in messages) into *sh. TP_OK, or TP_EDATA for
 * a quote, $( or ${ that does not end, naming file:line. Free *sh with
 * launch_sh_free (also after an error; NULL is a no-op). */
int launch_sh_read(const char *text, const char *file, launch_sh *sh, tp_err *e);
void launch_sh_free(launch_sh *sh);
/* w's reason for LAUNCH_SH_UNKNOWN. */
const char *launch_sh_why(const launch_sh_word *w);

/* ---- reading a job back in (issue 18) ---------------------------------
 * Each reader takes the text of a framework's job (file names it in
 * messages: the path, or "<stdin>"), and sets in *j what the command-line
 * options would set for the same job (the layout and job fields: tp and
 * tp_set, pp, cp, vstages, mbs, gbs, seq_length, sp, recompute and its
 * method, zero, precision, the software switches with their sw_set bits,
 * gpus or opt_nodes where the job says) and *m to the model it trains
 * (validated). *j arrives with the command line's defaults. A note on
 * what a flag changes goes to err (NULL: stderr). Returns TP_OK, or
 * TP_EDATA with a message naming the file, the line or key, the value
 * and what was expected. */
int launch_read_megatron(const char *text, const char *file, search_job *j,
                         space_model *m, FILE *err, tp_err *e);
/* NeMo: Megatron-Bridge overrides (key=value, one a line or blank-
 * separated; the "# launch:" or torchrun line names the recipe and the
 * GPUs) or NeMo 1 YAML keys (key: value); the recipe's model, or the model
 * keys over GPTModelProvider's defaults (launch_nemo_read.c). */
int launch_read_nemo(const char *text, const char *file, search_job *j,
                     space_model *m, FILE *err, tp_err *e);
int launch_read_torchtitan(const char *text, const char *file,
                           search_job *j, space_model *m, FILE *err,
                           tp_err *e);
/* torchtitan's reader for the config function fn of a Python config (the
 * :FUNCTION of --torchtitan-config FILE:FUNCTION); NULL: the file's only
 * one (a file of several is TP_EDATA listing them). */
int launch_read_torchtitan_fn(const char *text, const char *file,
                              const char *fn, search_job *j,
                              space_model *m, FILE *err, tp_err *e);

#endif
