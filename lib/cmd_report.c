/*
 * cmd_report.c - the inspection commands (model, hw, op, coll, hw
 * import-nccl-tests): each checks its options, parses their values into
 * the request of its report (emit/report.h), opens the hardware database
 * and calls the report. What a report prints and computes is emit/'s.
 */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "lib_int.h"
#include "report.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* TP_EUSAGE "'cmd' needs opt" when the option's value v is not given. */
static int need(const char *v, const char *opt, const char *cmd, tp_err *e)
{
    if (v) return TP_OK;
    return tp_errf(e, TP_EUSAGE, "'%s' needs %s", cmd, opt);
}

/* ---- model list, model show ------------------------------------------ */

int cmd_model_list(const lib_opts *o, emit_out *out, tp_err *e)
{
    (void)e;
    return emit_model_list(out->f, o->format);
}

int cmd_model_show(const lib_opts *o, emit_out *out, tp_err *e)
{
    space_model m;
    int rc = space_model_unread(o->pos[0], o->strict, lib_err(o), e);
    if (rc) return rc;
    rc = space_model_resolve(o->pos[0], &m, e);
    if (rc) return rc;
    return emit_model_show(out->f, o->format, &m, o->job.seq_length,
                           o->job.tp);
}

/* ---- hw list, hw show, hw check -------------------------------------- */

int cmd_hw_list(const lib_opts *o, emit_out *out, tp_err *e)
{
    hw_db *db = lib_open_hwdb(o, e);
    if (!db) return e->status;
    int rc = emit_hw_list(out->f, o->format, db);
    hw_db_free(db);
    return rc;
}

int cmd_hw_show(const lib_opts *o, emit_out *out, tp_err *e)
{
    hw_db *db = lib_open_hwdb(o, e);
    if (!db) return e->status;
    int rc = emit_hw_show(out->f, o->format, db, o->pos[0], e);
    hw_db_free(db);
    return rc;
}

int cmd_hw_check(const lib_opts *o, emit_out *out, tp_err *e)
{
    emit_check_ask a = {.format = o->format,
                        .files = (const char *const *)o->pos,
                        .nfiles = o->npos, .hwdb_dirs = o->hwdb_dirs,
                        .n_hwdb = o->n_hwdb};
    return emit_hw_check(&a, out->f, e);
}

/* ---- op predict, op show, op cv -------------------------------------- */

/* TP_EDATA, with the nearest names and the known ones, when op is not an
 * operator of the sample files (est_sample_op_names). */
static int check_op_name(const char *op, tp_err *e)
{
    int n = 0;
    while (est_sample_op_names[n]) n++;
    for (int i = 0; i < n; i++)
        if (strcmp(op, est_sample_op_names[i]) == 0) return TP_OK;
    char hint[256], known[512];
    tp_suggest(op, est_sample_op_names, n, hint, sizeof hint);
    size_t at = 0;
    known[0] = '\0';
    for (int i = 0; i < n && at < sizeof known; i++)
        at += (size_t)snprintf(known + at, sizeof known - at, "%s%s",
                               i ? ", " : "", est_sample_op_names[i]);
    return tp_errf(e, TP_EDATA, "unknown operator '%s'%s (known: %s)", op,
                   hint, known);
}

/* Parses "k=v,k=v" into cols (absent = -1). */
static int parse_shape(const char *spec, double *cols, tp_err *e)
{
    for (int c = 0; c < EST_NCOLS; c++) cols[c] = -1;
    char *buf = tp_xstrdup(spec), *save = NULL;
    int rc = TP_OK, n = 0;
    for (char *kv = strtok_r(buf, ",", &save); kv && !rc;
         kv = strtok_r(NULL, ",", &save), n++) {
        char *eq = strchr(kv, '=');
        int c = -1;
        if (eq) {
            *eq = '\0';
            for (int k = 0; k < EST_NCOLS; k++)
                if (strcmp(kv, est_col_names[k]) == 0) c = k;
        }
        long long v = 0;
        if (c < 0 || tp_parse_int(eq + 1, 1, 999999999999LL, &v))
            rc = tp_errf(e, TP_EUSAGE,
                         "--shape: expected K=V pairs with K one of mp, b, "
                         "h, l, dim, m, n, k, params and V a whole number in "
                         "[1, 1e12), found '%s'",
                         spec);
        else if (cols[c] > 0)
            rc = tp_errf(e, TP_EUSAGE, "--shape '%s': %s given twice", spec,
                         est_col_names[c]);
        else
            cols[c] = (double)v;
    }
    free(buf);
    if (!rc && n == 0)
        rc = tp_errf(e, TP_EUSAGE,
                     "--shape: expected K=V pairs such as mp=1,b=2,l=1024,"
                     "dim=4096, found '%s'",
                     spec);
    return rc;
}

/* The request of the op commands' options (no shape: all absent). */
static emit_op_ask op_ask(const lib_opts *o)
{
    emit_op_ask a = {.format = o->format, .err = lib_err(o), .gpu = o->gpu,
                     .op = o->op, .dtype = o->dtype, .keep_bad = o->keep_bad,
                     .train = o->train, .shapes = o->shapes,
                     .folds = o->folds, .seed = o->seed};
    for (int c = 0; c < EST_NCOLS; c++) a.shape[c] = -1;
    return a;
}

/* Runs report with a on the database the options name. */
static int op_run(int (*report)(const emit_op_ask *, const hw_db *, FILE *,
                                tp_err *),
                  const emit_op_ask *a, const lib_opts *o, emit_out *out,
                  tp_err *e)
{
    hw_db *db = lib_open_hwdb(o, e);
    if (!db) return e->status;
    int rc = report(a, db, out->f, e);
    hw_db_free(db);
    return rc;
}

int cmd_op_predict(const lib_opts *o, emit_out *out, tp_err *e)
{
    int rc;
    if ((rc = need(o->gpu, "--gpu", "op predict", e))
        || (rc = need(o->op, "--op", "op predict", e))
        || (rc = need(o->train, "--train", "op predict", e))
        || (rc = need(o->shapes, "--shapes", "op predict", e))
        || (rc = check_op_name(o->op, e)))
        return rc;
    emit_op_ask a = op_ask(o);
    return op_run(emit_op_predict, &a, o, out, e);
}

int cmd_op_show(const lib_opts *o, emit_out *out, tp_err *e)
{
    int rc;
    if ((rc = need(o->gpu, "--gpu", "op show", e))
        || (rc = need(o->op, "--op", "op show", e))
        || (rc = need(o->shape, "--shape", "op show", e))
        || (rc = check_op_name(o->op, e)))
        return rc;
    emit_op_ask a = op_ask(o);
    if ((rc = parse_shape(o->shape, a.shape, e))) return rc;
    int needs[EST_NCOLS];
    est_sample_needs(o->op, needs);
    for (int c = 0; c < EST_NCOLS; c++)
        if (needs[c] && !(a.shape[c] > 0)) {
            char list[96];
            est_sample_needs_str(needs, list, sizeof list);
            return tp_errf(e, TP_EUSAGE,
                           "--shape '%s': no %s; --op %s needs %s (mp "
                           "defaults to 1)",
                           o->shape, est_col_names[c], o->op, list);
        }
    return op_run(emit_op_show, &a, o, out, e);
}

int cmd_op_cv(const lib_opts *o, emit_out *out, tp_err *e)
{
    int rc = need(o->gpu, "--gpu", "op cv", e);
    if (rc) return rc;
    emit_op_ask a = op_ask(o);
    return op_run(emit_op_cv, &a, o, out, e);
}

/* ---- coll show, coll cv ---------------------------------------------- */

/* Parses one size: a number, optionally with K/M/G/T (binary, as
 * nccl-tests -b), KiB/MiB/GiB/TiB, or KB/MB/GB/TB (decimal), and B. */
static int parse_bytes(const char *s, double *out, tp_err *e)
{
    static const struct {
        const char *suffix;
        double mul;
    } units[] = {{"", 1},       {"B", 1},          {"K", 1024.0},
                 {"KiB", 1024.0}, {"KB", 1e3},     {"M", 1048576.0},
                 {"MiB", 1048576.0}, {"MB", 1e6},  {"G", 1073741824.0},
                 {"GiB", 1073741824.0}, {"GB", 1e9}, {"T", 1099511627776.0},
                 {"TiB", 1099511627776.0}, {"TB", 1e12}};
    /* The number, then the unit: the letters at the end (an exponent's
     * 'e' is followed by a digit or a sign). */
    size_t n = strlen(s), k = n;
    while (k > 0 && isalpha((unsigned char)s[k - 1])) k--;
    double v = 0;
    int unit = -1;
    char num[64];
    if (k > 0 && k < sizeof num) {
        memcpy(num, s, k);
        num[k] = '\0';
        if (!tp_parse_num(num, &v))
            for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
                if (tp_streq_ci(s + k, units[i].suffix)) unit = (int)i;
    }
    if (unit < 0 || !(v * units[unit].mul >= 1)
        || v * units[unit].mul > 1e15)
        return tp_errf(e, TP_EUSAGE,
                       "--bytes: expected sizes from 1 B to 1e15 B such as "
                       "1e8, 256MiB, 1GB or 64K, found '%s'",
                       s);
    *out = v * units[unit].mul;
    return TP_OK;
}

/* The est_coll that s names, or minus TP_EDATA (e says the nearest and
 * the known names). */
static int parse_coll(const char *s, tp_err *e)
{
    int k = est_coll_parse(s);
    if (k >= 0) return k;
    char hint[256];
    tp_suggest(s, est_coll_names, EST_COLL_COUNT, hint, sizeof hint);
    return -tp_errf(e, TP_EDATA,
                    "unknown collective '%s'%s (known: allreduce, "
                    "reducescatter, allgather, alltoall, sendrecv)",
                    s, hint);
}

/* Runs report with a on the database the options name. */
static int coll_run(int (*report)(const emit_coll_ask *, const hw_db *,
                                  FILE *, tp_err *),
                    const emit_coll_ask *a, const lib_opts *o, emit_out *out,
                    tp_err *e)
{
    hw_db *db = lib_open_hwdb(o, e);
    if (!db) return e->status;
    int rc = report(a, db, out->f, e);
    hw_db_free(db);
    return rc;
}

int cmd_coll_show(const lib_opts *o, emit_out *out, tp_err *e)
{
    int rc;
    if ((rc = need(o->system, "--system", "coll show", e))
        || (rc = need(o->op, "--op", "coll show", e))
        || (rc = need(o->bytes, "--bytes", "coll show", e)))
        return rc;
    int nodes = o->nodes, per_node = o->per_node;
    if (nodes && (o->job.opt_nodes || o->job.opt_per_node))
        return tp_errf(e, TP_EUSAGE,
                       "give the group as --group NxG or as --nodes and "
                       "--gpus-per-node, not both");
    if (!nodes) {
        if (!o->job.opt_nodes || !o->job.opt_per_node)
            return tp_errf(e, TP_EUSAGE,
                           "'coll show' needs the group: --group NxG, or "
                           "--nodes N and --gpus-per-node G");
        nodes = o->job.opt_nodes;
        per_node = o->job.opt_per_node;
    }
    int kind = parse_coll(o->op, e);
    if (kind < 0) return -kind;
    /* The sizes. */
    double sizes[64];
    int ns = 0;
    char *list = tp_xstrdup(o->bytes);
    for (char *p = list;;) {
        char *c = strchr(p, ',');
        if (c) *c = '\0';
        if (ns == 64)
            rc = tp_errf(e, TP_EUSAGE, "--bytes: at most 64 sizes");
        else
            rc = parse_bytes(p, &sizes[ns++], e);
        if (rc || !c) break;
        p = c + 1;
    }
    free(list);
    if (rc) return rc;
    emit_coll_ask a = {.format = o->format, .system = o->system,
                       .kind = kind, .sizes_bytes = sizes, .nsizes = ns,
                       .nodes = nodes, .per_node = per_node,
                       .keep_bad = o->keep_bad};
    return coll_run(emit_coll_show, &a, o, out, e);
}

int cmd_coll_cv(const lib_opts *o, emit_out *out, tp_err *e)
{
    int rc = need(o->system, "--system", "coll cv", e);
    if (rc) return rc;
    emit_coll_ask a = {.format = o->format, .system = o->system,
                       .keep_bad = o->keep_bad};
    return coll_run(emit_coll_cv, &a, o, out, e);
}

/* ---- hw import-nccl-tests -------------------------------------------- */

int cmd_hw_import_nccl_tests(const lib_opts *o, emit_out *out, tp_err *e)
{
    if (!o->out_dir)
        return tp_errf(e, TP_EUSAGE,
                       "'hw import-nccl-tests' needs -o DIR, the hardware "
                       "database directory to write into");
    if (!o->job.opt_nodes != !o->job.opt_per_node)
        return tp_errf(e, TP_EUSAGE,
                       "--nodes and --gpus-per-node go together");
    int op = -1;
    if (o->op) {
        op = est_coll_parse(o->op);
        if (op < 0)
            return tp_errf(e, TP_EDATA,
                           "--op: unknown collective '%s' (known: allreduce, "
                           "reducescatter, allgather, alltoall, sendrecv)",
                           o->op);
    }
    /* Parse every log first: nothing is written unless all are good. */
    est_nccl_test *tests = NULL;
    int nt = 0, rc = TP_OK;
    for (int i = 0; i < o->npos && rc == TP_OK; i++)
        rc = est_nccl_parse(o->pos[i], op, o->job.opt_nodes,
                            o->job.opt_per_node, &tests, &nt, e);
    hw_db *db = rc ? NULL : lib_open_hwdb(o, e);
    if (db) {
        emit_import_ask a = {.format = o->format, .err = lib_err(o),
                             .system = o->system, .out_dir = o->out_dir,
                             .tests = tests, .ntests = nt};
        rc = emit_nccl_import(&a, db, out->f, e);
    } else if (!rc) {
        rc = e->status;
    }
    hw_db_free(db);
    est_nccl_free(tests, nt);
    return rc;
}
