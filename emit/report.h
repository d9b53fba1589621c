/*
 * report.h - the reports of trainplan's inspection commands, each a
 * function of a plain request and, where it reads the hardware database,
 * an open one: the models (model.c), the GPUs and systems and the check of
 * their files (hw.c), the operator models (op.c), the collective models
 * (coll.c), nccl-tests logs imported into a database directory
 * (import.c), and a run's own log against its estimate (train_log.c).
 *
 * The command line parses its options into these requests and opens the
 * database (lib/cmd_report.c); nothing here reads an option, opens a
 * command-line session or exits. Every function writes its data to the
 * stream f in the format asked, returns a status (enum tp_status) and on
 * failure leaves its message in e; warnings go to the request's err.
 * Messages name the options a user gives (--shape, --system): these
 * reports answer the command line's questions.
 */
#ifndef TP_EMIT_REPORT_H
#define TP_EMIT_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "emit.h"

/* ---- models (model.c) --------------------------------------------------- */

/* The built-in presets, a row each (params, shape, MoE); JSON: an array
 * of their architectures and parameter counts. TP_OK. */
int emit_model_list(FILE *f, emit_format fmt);
/* Every architecture field of m, its parameter counts (vocabulary padded
 * to 128 x tp) and FLOPs per token at seq_length (0: 2048), with the
 * conventions they follow. TP_OK. */
int emit_model_show(FILE *f, emit_format fmt, const space_model *m,
                    int64_t seq_length, int64_t tp);

/* ---- GPUs and systems (hw.c) -------------------------------------------- */

/* The GPUs and the systems of db, a table each. TP_OK. */
int emit_hw_list(FILE *f, emit_format fmt, const hw_db *db);
/* Every number of the system or GPU called name (a system first) with its
 * source; a system's table shows its GPU too. TP_EDATA naming the near
 * names of both when neither is there. */
int emit_hw_show(FILE *f, emit_format fmt, const hw_db *db, const char *name,
                 tp_err *e);

/* hw check: GPU or system files checked against the database of
 * hwdb_dirs (hw_db_open's user directories; the built-in one alone when
 * those do not open, as the file under check may be the broken one). */
typedef struct emit_check_ask {
    emit_format format;
    const char *const *files;
    int nfiles;
    const char *const *hwdb_dirs;
    int n_hwdb;
} emit_check_ask;
/* Each file's problems (also its data: they go to f), or "ok" and the
 * measured samples and collective rows that cannot be right. TP_OK when
 * every file is good, else the worst status (TP_ENOINPUT before the
 * others) with "N of M file(s) have problems" in e. */
int emit_hw_check(const emit_check_ask *a, FILE *f, tp_err *e);

/* ---- operator models (op.c) --------------------------------------------- */

typedef struct emit_op_ask {
    emit_format format;
    FILE *err;               /* warnings (samples left out); not NULL */
    const char *gpu;         /* a GPU's name or alias */
    const char *op;          /* a sample file's operator, one of
                                est_sample_op_names (predict, show) */
    int dtype;               /* hw_dtype; -1: the operator's default */
    int keep_bad;            /* keep implausible samples */
    const char *train;       /* predict: the samples fitted */
    const char *shapes;      /* predict: the samples whose shapes are
                                predicted */
    double shape[EST_NCOLS]; /* show: the shape's columns, -1 absent; the
                                ones op needs (est_sample_needs) given */
    int folds;               /* cv: k of k-fold, >= 2 */
    uint64_t seed;           /* cv: the shuffle's PCG32 seed */
} emit_op_ask;
/* op predict: fits the --train samples only and prints, in the seed CSV
 * format, the forward and backward times of every shape of --shapes. */
int emit_op_predict(const emit_op_ask *a, const hw_db *db, FILE *f,
                    tp_err *e);
/* op show: FLOPs, bytes, roofline, floor and the time the estimator uses
 * for one shape of op, and the nearest samples. */
int emit_op_show(const emit_op_ask *a, const hw_db *db, FILE *f, tp_err *e);
/* op cv: k-fold and extrapolation errors of every fitted operator of the
 * GPU, a row per sample file (and pooled where an op has several). The
 * same bytes at any thread count. */
int emit_op_cv(const emit_op_ask *a, const hw_db *db, FILE *f, tp_err *e);

/* ---- collective models (coll.c) ----------------------------------------- */

typedef struct emit_coll_ask {
    emit_format format;
    const char *system;         /* a system's name or alias */
    int kind;                   /* show: est_coll */
    const double *sizes_bytes;  /* show: the sizes, nsizes of them */
    int nsizes;
    int nodes, per_node;        /* show: the group */
    int keep_bad;               /* keep implausible measured rows */
} emit_coll_ask;
/* coll show: the analytical and measured times of a collective of each
 * size over the group, which one the estimator uses, and the bandwidths.
 * TP_EDATA when the group does not fit the system. */
int emit_coll_show(const emit_coll_ask *a, const hw_db *db, FILE *f,
                   tp_err *e);
/* coll cv: the analytical model's error against every measured table of
 * the system, per table and per source. */
int emit_coll_cv(const emit_coll_ask *a, const hw_db *db, FILE *f, tp_err *e);

/* ---- nccl-tests logs into a database directory (import.c) --------------- */

typedef struct emit_import_ask {
    emit_format format;
    FILE *err;                   /* warnings; not NULL */
    const char *system;          /* NULL: the one system of the logs' GPU */
    const char *out_dir;         /* the hardware database directory */
    const est_nccl_test *tests;  /* the logs, parsed (est_nccl_parse) */
    int ntests;
} emit_import_ask;
/* Writes a measured table per collective and group shape of the tests
 * and the system's file listing them into out_dir (import.c says where),
 * all or nothing, and prints what it wrote. TP_EUSAGE when the system is
 * not known nor given, TP_EDATA for a test the system cannot have run,
 * TP_EIO naming the path. */
int emit_nccl_import(const emit_import_ask *a, const hw_db *db, FILE *f,
                     tp_err *e);

/* ---- a run's log against its estimate (train_log.c) --------------------- */

/* The comparison in words to out (the log at path, the estimate's band
 * beside it), and as the "measured" object of j. */
void emit_fed_print(FILE *out, const est_run_fed *f, const char *path,
                    const est_band *band);
void emit_fed_json(cJSON *j, const est_run_fed *f, const char *path);

#endif
