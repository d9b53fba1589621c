/*
 * op.c - the reports of `trainplan op predict | show | cv`: the operator
 * time models from the command line, so anyone can check them on a split
 * of their own.
 *
 * Splits of `op cv` are deterministic: samples are shuffled by a PCG32
 * stream seeded with --seed whose stream number is the operator's index,
 * fold = position mod k. The extrapolation splits are the issue's: train
 * on hidden size <= 6144 and test on >= 6656; train on sequence length
 * <= 4096 and test on >= 4608.
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static hw_dtype op_dtype(const emit_op_ask *a, const char *op)
{
    if (a->dtype >= 0) return (hw_dtype)a->dtype;
    if (strcmp(op, "gemm") == 0) return HW_BF16;
    if (strcmp(op, "adam") == 0) return HW_FP32;
    return HW_FP16;
}

/* Drops implausible passes (and samples with none left) unless
 * keep_bad; says how many on a->err. */
static int clean(const hw_gpu *g, const emit_op_ask *a, est_sample *s, int n,
                 const char *what)
{
    if (a->keep_bad) return n;
    int k = 0, bad = 0;
    char why[160], first[200] = "";
    for (int i = 0; i < n; i++) {
        if (est_sample_clean(g, &s[i], why, sizeof why)) {
            if (!bad++) snprintf(first, sizeof first, "line %d: %s", s[i].row, why);
            if (!(s[i].fwd_s > 0) && !(s[i].bwd_s > 0)) continue;
        }
        s[k++] = s[i];
    }
    if (bad)
        fprintf(a->err,
                "trainplan: %s: left out implausible times of %d sample(s), "
                "e.g. %s (--keep-bad keeps them)\n",
                what, bad, first);
    return k;
}

int emit_op_predict(const emit_op_ask *a, const hw_db *db, FILE *f,
                    tp_err *e)
{
    int rc;
    const hw_gpu *g = hw_find_gpu(db, a->gpu, e);
    if (!g) return e->status;
    est_sample *tr = NULL, *sh = NULL;
    int ntr = 0, nsh = 0;
    est_fit fit = {0};
    hw_dtype dt = op_dtype(a, a->op);
    if ((rc = est_read_samples(a->train, a->op, dt, &tr, &ntr, e))
        || (rc = est_read_samples(a->shapes, a->op, dt, &sh, &nsh, e)))
        goto done;
    ntr = clean(g, a, tr, ntr, a->train);
    if ((rc = est_fit_samples(g, tr, ntr, &fit, e))) goto done;
    /* Echo the shape columns SHAPES has, in the seed order, then ours. */
    int present[EST_NCOLS] = {0};
    for (int c = 0; c < EST_NCOLS; c++)
        present[c] = nsh > 0 && sh[0].cols[c] >= 0;
    for (int c = 0; c < EST_NCOLS; c++)
        if (present[c]) fprintf(f, "%s,", est_col_names[c]);
    fprintf(f, "F_dur(us),B_dur(us)\n");
    for (int i = 0; i < nsh; i++) {
        est_time t;
        est_fit_predict(g, &fit, &sh[i].op, &t);
        for (int c = 0; c < EST_NCOLS; c++)
            if (present[c]) fprintf(f, "%.17g,", sh[i].cols[c]);
        fprintf(f, "%.3f,%.3f\n", t.fwd_s * 1e6, t.bwd_s * 1e6);
    }
done:
    est_fit_free(&fit);
    free(tr);
    free(sh);
    return rc;
}

int emit_op_show(const emit_op_ask *a, const hw_db *db, FILE *f, tp_err *e)
{
    int rc;
    const double *cols = a->shape;
    const hw_gpu *g = hw_find_gpu(db, a->gpu, e);
    if (!g) return e->status;
    est_op op;
    est_sample_op(a->op, op_dtype(a, a->op), cols, &op);
    est_work w;
    est_op_work(&op, &w);
    est_time roof, floor_t, used;
    est_floor_why fwhy[2];
    est_op_roofline(g, &op, &roof);
    est_op_floor(g, &op, &floor_t, fwhy);
    est_sample *s = NULL;
    int n = 0, bad = 0;
    if ((rc = est_gpu_samples(g, a->op, (int)op.dtype, a->keep_bad, &s, &n,
                              &bad, e))) {
        return rc;
    }
    /* The time the estimator uses: every sample file of the GPU pooled by
     * kernel, the floors, the fp8 bound, the composed GEMM backward. */
    est_models *models = est_models_open(g, a->keep_bad, e);
    if (!models) {
        free(s);
        return e->status;
    }
    est_model_info info;
    int have_fit = est_models_time_info(models, &op, &used, &info);
    est_models_free(models);
    static const char *hdr[] = {"", "forward", "backward"};
    emit_table t;
    emit_table_init(&t, 3, hdr, "lrr");
    char ca[48], cb[48];
#define ROW(label, fa, fb, unit)                                              \
    do {                                                                      \
        emit_fmt_si(ca, sizeof ca, fa, unit);                                 \
        emit_fmt_si(cb, sizeof cb, fb, unit);                                 \
        emit_table_row(&t, label, ca, cb);                                    \
    } while (0)
    ROW("FLOPs", w.fwd_flops, w.bwd_flops, "FLOP");
    ROW("HBM bytes", w.fwd_bytes, w.bwd_bytes, "B");
    ROW("roofline time", roof.fwd_s, roof.bwd_s, "s");
    ROW("floor (peak, HBM)", floor_t.fwd_s, floor_t.bwd_s, "s");
    ROW(have_fit ? "fitted time" : "time (roofline)", used.fwd_s, used.bwd_s,
        "s");
    ROW("achieved", used.fwd_s > 0 ? w.fwd_flops / used.fwd_s : 0,
        used.bwd_s > 0 ? w.bwd_flops / used.bwd_s : 0, "FLOP/s");
    ROW("achieved", used.fwd_s > 0 ? w.fwd_bytes / used.fwd_s : 0,
        used.bwd_s > 0 ? w.bwd_bytes / used.bwd_s : 0, "B/s");
#undef ROW
    if (a->format == EMIT_JSON) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "gpu", g->name);
        cJSON_AddStringToObject(j, "op", a->op);
        cJSON_AddStringToObject(j, "kind", est_op_names[op.kind]);
        cJSON_AddStringToObject(j, "dtype", hw_dtype_names[op.dtype]);
        cJSON_AddNumberToObject(j, "fwd_flops", w.fwd_flops);
        cJSON_AddNumberToObject(j, "bwd_flops", w.bwd_flops);
        cJSON_AddNumberToObject(j, "fwd_bytes", w.fwd_bytes);
        cJSON_AddNumberToObject(j, "bwd_bytes", w.bwd_bytes);
        cJSON_AddNumberToObject(j, "roofline_fwd_s", roof.fwd_s);
        cJSON_AddNumberToObject(j, "roofline_bwd_s", roof.bwd_s);
        cJSON_AddNumberToObject(j, "floor_fwd_s", floor_t.fwd_s);
        cJSON_AddNumberToObject(j, "floor_bwd_s", floor_t.bwd_s);
        /* What the estimator uses (before the in-training kernel
         * efficiency), and whether a fit or the roofline gave it. */
        cJSON_AddNumberToObject(j, "time_fwd_s", used.fwd_s);
        cJSON_AddNumberToObject(j, "time_bwd_s", used.bwd_s);
        cJSON_AddStringToObject(j, "source", have_fit ? "fit" : "roofline");
        cJSON_AddNumberToObject(j, "fit_samples", info.n_samples);
        cJSON_AddBoolToObject(j, "bwd_from_forward_fit", info.bwd_composed);
        cJSON_AddBoolToObject(j, "raised_to_floor_fwd", info.floor_fwd);
        cJSON_AddBoolToObject(j, "raised_to_floor_bwd", info.floor_bwd);
        cJSON_AddBoolToObject(j, "fp8_bound_fwd", info.fp8_bound_fwd);
        cJSON_AddBoolToObject(j, "fp8_bound_bwd", info.fp8_bound_bwd);
        cJSON_AddBoolToObject(j, "fp4_bound_fwd", info.fp4_bound_fwd);
        cJSON_AddBoolToObject(j, "fp4_bound_bwd", info.fp4_bound_bwd);
        cJSON_AddNumberToObject(j, "samples", n);
        cJSON_AddNumberToObject(j, "samples_left_out", bad);
        emit_print_json(f, j);
    } else {
        if (a->format == EMIT_TABLE)
            fprintf(f, "%s on %s (%s), %s\n\n", a->op, g->name,
                    est_op_names[op.kind], hw_dtype_names[op.dtype]);
        emit_table_print(&t, f, a->format);
        if (a->format == EMIT_TABLE) {
            static const char *const bound[] = {"", "the dense peak",
                                                 "the HBM bandwidth"};
            fputc('\n', f);
            if (have_fit)
                fprintf(f, "the time the estimator uses (before its "
                        "in-training kernel efficiency): the %s fit of every "
                        "%s sample file of %s pooled, %d sample(s)\n",
                        est_op_names[op.kind], hw_dtype_names[op.dtype],
                        g->models_like ? g->models_like->name : g->name,
                        info.n_samples);
            else
                fprintf(f, "no fit of %s at %s on %s: the roofline is "
                        "the time the estimator uses\n", est_op_names[op.kind],
                        hw_dtype_names[op.dtype], g->name);
            if (info.bwd_composed)
                fprintf(f, "backward: the data-gradient (m x n by n x k) "
                        "and weight-gradient (k x m by m x n) GEMMs, each "
                        "through the forward fit (no backward samples)\n");
            if (info.floor_fwd || info.floor_bwd)
                fprintf(f, "raised to the floor (%s%s%s): the fit "
                        "extrapolated below what the GPU can do\n",
                        info.floor_fwd ? "forward: " : "",
                        info.floor_fwd ? bound[fwhy[0]] : "",
                        info.floor_bwd ? (info.floor_fwd ? "; backward" : "backward")
                                       : "");
            if (info.fp8_bound_fwd || info.fp8_bound_bwd)
                fprintf(f, "raised to half the 16-bit GEMM of this "
                        "shape (%s): fp8 tensor cores give at most 2x\n",
                        info.fp8_bound_fwd && info.fp8_bound_bwd
                            ? "forward and backward"
                            : info.fp8_bound_fwd ? "forward" : "backward");
            if (info.fp4_bound_fwd || info.fp4_bound_bwd)
                fprintf(f, "raised (%s) to the fp8 GEMM of this shape "
                        "at the fp8 / fp4 peak ratio, or to the 16-bit GEMM "
                        "over %s's measured fp4 speedup (%.2fx), the slower\n",
                        info.fp4_bound_fwd && info.fp4_bound_bwd
                            ? "forward and backward"
                            : info.fp4_bound_fwd ? "forward" : "backward",
                        g->name, g->fp4_gemm_speedup);
            if (n > 0)
                fprintf(f, "%d %s sample(s) of this file name (%d with "
                        "an implausible time left out); nearest:\n", n,
                        a->op, bad);
            /* The three samples nearest in log-shape, with their times. */
            int best[3] = {-1, -1, -1};
            double bd[3] = {INFINITY, INFINITY, INFINITY};
            for (int i = 0; i < n; i++) {
                double d = 0;
                for (int c = 0; c < EST_NCOLS; c++)
                    if (cols[c] > 0 && s[i].cols[c] > 0) {
                        double x = log(cols[c] / s[i].cols[c]);
                        d += x * x;
                    }
                for (int k = 0; k < 3; k++)
                    if (d < bd[k]) {
                        for (int m = 2; m > k; m--) bd[m] = bd[m - 1], best[m] = best[m - 1];
                        bd[k] = d, best[k] = i;
                        break;
                    }
            }
            for (int k = 0; k < 3; k++) {
                if (best[k] < 0) continue;
                const est_sample *x = &s[best[k]];
                fprintf(f, "  line %d:", x->row);
                for (int c = 0; c < EST_NCOLS; c++)
                    if (x->cols[c] > 0)
                        fprintf(f, " %s=%g", est_col_names[c], x->cols[c]);
                double pt[2] = {x->fwd_s, x->bwd_s};
                for (int p = 0; p < 2; p++) {
                    if (pt[p] > 0)
                        fprintf(f, "  %s %.1f us", p ? "bwd" : "fwd",
                                pt[p] * 1e6);
                    else
                        fprintf(f, "  %s -", p ? "bwd" : "fwd");
                }
                fputc('\n', f);
            }
        }
    }
    emit_table_free(&t);
    free(s);
    return TP_OK;
}

/* Mean absolute percentage error of fit on test, per pass. */
typedef struct mape {
    double sum[2];
    int n[2];
} mape;

static void score(const hw_gpu *g, const est_fit *fit, const est_sample *te,
                  int n, mape *m)
{
    for (int i = 0; i < n; i++) {
        est_time t;
        est_fit_predict(g, fit, &te[i].op, &t);
        double pred[2] = {t.fwd_s, t.bwd_s}, meas[2] = {te[i].fwd_s, te[i].bwd_s};
        for (int p = 0; p < 2; p++)
            if (meas[p] > 0 && (p == 0 ? fit->has_fwd : fit->has_bwd)) {
                m->sum[p] += fabs(pred[p] - meas[p]) / meas[p];
                m->n[p]++;
            }
    }
}

static void fmt_mape(char *buf, size_t cap, const mape *m, int p)
{
    if (m->n[p] == 0)
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%.2f", 100 * m->sum[p] / m->n[p]);
}

/* Extrapolation split on column c: train <= lo_max, test >= hi_min. */
static int extrap(const hw_gpu *g, const est_sample *s, int n, int c,
                  double train_max, double test_min, est_sample *tr,
                  est_sample *te, mape *m)
{
    int ntr = 0, nte = 0;
    for (int i = 0; i < n; i++) {
        if (s[i].cols[c] < 0) return 0;
        if (s[i].cols[c] <= train_max) tr[ntr++] = s[i];
        else if (s[i].cols[c] >= test_min) te[nte++] = s[i];
    }
    est_fit fit;
    tp_err fe;
    if (nte == 0) return 0;
    int ok = est_fit_samples(g, tr, ntr, &fit, &fe) == TP_OK;
    if (ok) score(g, &fit, te, nte, m);
    est_fit_free(&fit);
    return ok;
}

/* One row of op cv: k-fold and extrapolation errors of the fit to the
 * samples s[n] (shuffled here by PCG32 stream `stream`), labelled with
 * their source. */
static void cv_row(const hw_gpu *g, const emit_op_ask *a, const char *op,
                   int dt, const char *source, est_sample *s, int n, int bad,
                   uint64_t stream, emit_table *t, cJSON *arr)
{
    pcg32 r;
    pcg32_seed(&r, a->seed, stream);
    for (int i = n - 1; i > 0; i--) {
        int j = (int)pcg32_bounded(&r, (uint32_t)(i + 1));
        est_sample x = s[i];
        s[i] = s[j];
        s[j] = x;
    }
    est_sample *tr = tp_xmalloc((size_t)n * sizeof *tr);
    est_sample *te = tp_xmalloc((size_t)n * sizeof *te);
    mape cv = {{0, 0}, {0, 0}}, xd = cv, xs = cv;
    for (int f = 0; f < a->folds; f++) {
        int ntr = 0, nte = 0;
        for (int i = 0; i < n; i++) {
            if (i % a->folds == f) te[nte++] = s[i];
            else tr[ntr++] = s[i];
        }
        est_fit fit;
        tp_err fe;
        if (est_fit_samples(g, tr, ntr, &fit, &fe) == TP_OK)
            score(g, &fit, te, nte, &cv);
        est_fit_free(&fit);
    }
    extrap(g, s, n, EST_COL_DIM, 6144, 6656, tr, te, &xd);
    extrap(g, s, n, EST_COL_L, 4096, 4608, tr, te, &xs);
    char cells[6][16], ns[16], nb[16];
    fmt_mape(cells[0], 16, &cv, 0);
    fmt_mape(cells[1], 16, &cv, 1);
    fmt_mape(cells[2], 16, &xd, 0);
    fmt_mape(cells[3], 16, &xd, 1);
    fmt_mape(cells[4], 16, &xs, 0);
    fmt_mape(cells[5], 16, &xs, 1);
    snprintf(ns, sizeof ns, "%d", n);
    snprintf(nb, sizeof nb, "%d", bad);
    emit_table_row(t, op, hw_dtype_names[dt], source, ns, nb, cells[0], cells[1],
                  cells[2], cells[3], cells[4], cells[5]);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "op", op);
    cJSON_AddStringToObject(j, "dtype", hw_dtype_names[dt]);
    cJSON_AddStringToObject(j, "source", source);
    cJSON_AddNumberToObject(j, "samples", n);
    cJSON_AddNumberToObject(j, "implausible", bad);
    const mape *ms[3] = {&cv, &xd, &xs};
    static const char *const keys[3][2] = {
        {"cv_fwd_mape_pct", "cv_bwd_mape_pct"},
        {"extrap_dim_fwd_mape_pct", "extrap_dim_bwd_mape_pct"},
        {"extrap_seq_fwd_mape_pct", "extrap_seq_bwd_mape_pct"}};
    for (int k = 0; k < 3; k++)
        for (int p = 0; p < 2; p++)
            if (ms[k]->n[p])
                cJSON_AddNumberToObject(j, keys[k][p],
                                        100 * ms[k]->sum[p] / ms[k]->n[p]);
            else /* no sample to score on: null, as coll cv writes */
                cJSON_AddNullToObject(j, keys[k][p]);
    cJSON_AddItemToArray(arr, j);
    free(tr);
    free(te);
}

int emit_op_cv(const emit_op_ask *a, const hw_db *db, FILE *f, tp_err *e)
{
    int rc = TP_OK;
    const hw_gpu *g = hw_find_gpu(db, a->gpu, e);
    if (!g) return e->status;
    static const char *hdr[] = {"op", "dtype", "source", "samples", "implausible",
                                "cv fwd %",  "cv bwd %",  "dim>6144 fwd %",
                                "dim>6144 bwd %", "seq>4096 fwd %",
                                "seq>4096 bwd %"};
    emit_table t;
    emit_table_init(&t, 11, hdr, "lllrrrrrrrr");
    cJSON *arr = cJSON_CreateArray();
    /* A row per sample file, so each source's accuracy shows on its own,
     * and a pooled row ("all") where an op has several files. */
    for (int oi = 0; est_sample_op_names[oi] && rc == TP_OK; oi++)
    for (int dt = 0; dt < HW_DTYPE_COUNT && rc == TP_OK; dt++) {
        const char *op = est_sample_op_names[oi];
        int files = 0;
        uint64_t stream = (uint64_t)(oi * HW_DTYPE_COUNT + dt) * 64;
        for (int i = 0; i < g->n_measured && rc == TP_OK; i++) {
            const hw_measured *m = &g->measured[i];
            if (strcmp(m->kind, "operator_samples") || strcmp(m->op, op)
                || hw_dtype_parse(m->dtype) != dt)
                continue;
            est_sample *s;
            int n, bad;
            if ((rc = est_measured_samples(g, m, a->keep_bad, &s, &n, &bad, e)))
                break;
            if (n > 0)
                cv_row(g, a, op, dt, tp_basename(m->path), s, n, bad,
                       stream + (uint64_t)++files, &t, arr);
            free(s);
        }
        if (rc || files < 2) continue;
        est_sample *s;
        int n, bad;
        if ((rc = est_gpu_samples(g, op, dt, a->keep_bad, &s, &n, &bad, e))) break;
        if (n > 0) cv_row(g, a, op, dt, "all", s, n, bad, stream, &t, arr);
        free(s);
    }
    if (rc == TP_OK) {
        if (a->format == EMIT_JSON) {
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "gpu", g->name);
            cJSON_AddNumberToObject(j, "folds", a->folds);
            cJSON_AddNumberToObject(j, "seed", (double)a->seed);
            cJSON_AddItemToObject(j, "ops", arr);
            arr = NULL;
            emit_print_json(f, j);
        } else {
            emit_table_print(&t, f, a->format);
        }
    }
    cJSON_Delete(arr);
    emit_table_free(&t);
    return rc;
}
