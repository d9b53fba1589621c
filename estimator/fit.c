/*
 * fit.c - fitted operator models: the measured time's ratio to the
 * roofline, log r, as a quadratic in the op's log-shape dimensions, each
 * dimension clamped to the range the samples cover.
 *
 * Why this shape: the roofline already scales with FLOPs and bytes, so
 * what is left (kernel efficiency by shape) is smooth in log-shape and
 * saturates for large shapes. Clamping makes the ratio constant beyond
 * the grid, so an extrapolated time is the roofline's time at the new
 * shape times the efficiency at the grid's edge: it keeps growing with the
 * work, unlike a tree ensemble, which returns the edge's time.
 *
 * Fitting is ridge regression solved by Cholesky on the normal equations:
 * deterministic, no randomness needed. Cross-validation (cv.c) uses PCG32
 * streams for its folds.
 */
#include "est.h"

#include <math.h>
#include <string.h>

/* Ridge penalty per sample on the standardised features: small enough to
 * leave well-sampled directions alone, large enough to keep collinear
 * columns (e.g. sq and sk always equal) from blowing up. */
#define EST_RIDGE 1e-4

#define MAX_DIMS 5

/* The log-shape dimensions an op kind's efficiency depends on. */
static int op_dims(const est_op *op, double *x)
{
    switch (op->kind) {
    case EST_OP_GEMM:
        x[0] = log((double)op->m);
        x[1] = log((double)op->n);
        x[2] = log((double)op->k);
        x[3] = log(op->b > 0 ? (double)op->b : 1);
        return 4;
    case EST_OP_FLASH_ATTN:
        x[0] = log((double)op->b);
        x[1] = log((double)op->heads);
        x[2] = log((double)op->sq);
        x[3] = log((double)op->sk);
        x[4] = log((double)op->head_dim);
        return 5;
    case EST_OP_EMBEDDING:
        x[0] = log((double)op->rows);
        x[1] = log((double)op->cols);
        x[2] = log(op->n > 0 ? (double)op->n : 1);
        return 3;
    case EST_OP_ADAM:
        x[0] = log((double)op->n);
        return 1;
    default:
        x[0] = log((double)op->rows);
        x[1] = log((double)op->cols);
        return 2;
    }
}

/* Features of the clamped, standardised dims: 1, x_i, x_i^2, x_i x_j. */
static int features(const est_fit *fit, const est_op *op, double *phi)
{
    double x[MAX_DIMS];
    int nd = op_dims(op, x);
    for (int i = 0; i < nd; i++) {
        double lo = fit->lo[i], hi = fit->hi[i];
        double v = x[i] < lo ? lo : (x[i] > hi ? hi : x[i]);
        double half = (hi - lo) / 2;
        x[i] = half > 1e-12 ? (v - (lo + hi) / 2) / half : 0;
    }
    int p = 0;
    phi[p++] = 1;
    for (int i = 0; i < nd; i++) phi[p++] = x[i];
    for (int i = 0; i < nd; i++)
        for (int j = i; j < nd; j++) phi[p++] = x[i] * x[j];
    return p;
}

/* Solves (A + ridge) w = b for symmetric positive definite A (p x p) by
 * Cholesky, in place. Returns -1 if A is not positive definite. */
static int cholesky_solve(double *A, double *b, int p)
{
    for (int j = 0; j < p; j++) {
        double d = A[j * p + j];
        for (int k = 0; k < j; k++) d -= A[j * p + k] * A[j * p + k];
        if (d <= 0) return -1;
        d = sqrt(d);
        A[j * p + j] = d;
        for (int i = j + 1; i < p; i++) {
            double s = A[i * p + j];
            for (int k = 0; k < j; k++) s -= A[i * p + k] * A[j * p + k];
            A[i * p + j] = s / d;
        }
    }
    for (int i = 0; i < p; i++) { /* L y = b */
        double s = b[i];
        for (int k = 0; k < i; k++) s -= A[i * p + k] * b[k];
        b[i] = s / A[i * p + i];
    }
    for (int i = p - 1; i >= 0; i--) { /* L^T w = y */
        double s = b[i];
        for (int k = i + 1; k < p; k++) s -= A[k * p + i] * b[k];
        b[i] = s / A[i * p + i];
    }
    return 0;
}

static int fit_pass(const hw_gpu *g, const est_sample *s, int n, int bwd,
                    est_fit *fit, double *w)
{
    enum { P = EST_MAX_FEATURES };
    double A[P * P], rhs[P], phi[P];
    memset(A, 0, sizeof A);
    memset(rhs, 0, sizeof rhs);
    int p = 0, used = 0;
    for (int i = 0; i < n; i++) {
        double meas = bwd ? s[i].bwd_s : s[i].fwd_s;
        if (!(meas > 0)) continue;
        est_time t;
        est_op_roofline(g, &s[i].op, &t);
        double roof = bwd ? t.bwd_s : t.fwd_s;
        if (!(roof > 0)) continue;
        double y = log(meas / roof);
        p = features(fit, &s[i].op, phi);
        for (int a = 0; a < p; a++) {
            rhs[a] += phi[a] * y;
            for (int c = 0; c <= a; c++) A[a * p + c] += phi[a] * phi[c];
        }
        used++;
    }
    if (used < 2 * p || p == 0) return 0;
    for (int a = 0; a < p; a++)
        for (int c = 0; c < a; c++) A[c * p + a] = A[a * p + c];
    /* The intercept is not penalised. */
    for (int a = 1; a < p; a++) A[a * p + a] += EST_RIDGE * used;
    if (cholesky_solve(A, rhs, p)) return 0;
    memcpy(w, rhs, (size_t)p * sizeof *w);
    fit->nfeat = p;
    return used;
}

int est_fit_samples(const hw_gpu *g, const est_sample *s, int n, est_fit *fit,
                    tp_err *e)
{
    memset(fit, 0, sizeof *fit);
    if (n <= 0)
        return tp_errf(e, TP_EDATA, "no samples to fit");
    fit->kind = s[0].op.kind;
    double x[MAX_DIMS];
    int nd = op_dims(&s[0].op, x);
    for (int d = 0; d < nd; d++) fit->lo[d] = fit->hi[d] = x[d];
    for (int i = 1; i < n; i++) {
        if (s[i].op.kind != fit->kind)
            return tp_errf(e, TP_EINTERNAL, "samples of mixed operators");
        op_dims(&s[i].op, x);
        for (int d = 0; d < nd; d++) {
            if (x[d] < fit->lo[d]) fit->lo[d] = x[d];
            if (x[d] > fit->hi[d]) fit->hi[d] = x[d];
        }
    }
    int nf = fit_pass(g, s, n, 0, fit, fit->w_fwd);
    int nb = fit_pass(g, s, n, 1, fit, fit->w_bwd);
    fit->has_fwd = nf > 0;
    fit->has_bwd = nb > 0;
    fit->n_train = nf > nb ? nf : nb;
    if (!fit->has_fwd && !fit->has_bwd)
        return tp_errf(e, TP_EDATA,
                       "%s: %d usable samples are too few to fit (need at "
                       "least twice the %d features)",
                       est_op_names[fit->kind], n, fit->nfeat ? fit->nfeat : 1);
    return TP_OK;
}

void est_fit_predict(const hw_gpu *g, const est_fit *fit, const est_op *op,
                     est_time *t)
{
    est_op_roofline(g, op, t);
    double phi[EST_MAX_FEATURES];
    int p = features(fit, op, phi);
    if (fit->has_fwd) {
        double y = 0;
        for (int i = 0; i < p; i++) y += fit->w_fwd[i] * phi[i];
        t->fwd_s *= exp(y);
    }
    if (fit->has_bwd) {
        double y = 0;
        for (int i = 0; i < p; i++) y += fit->w_bwd[i] * phi[i];
        t->bwd_s *= exp(y);
    }
}
