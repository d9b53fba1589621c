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
 * deterministic, no randomness needed.
 *
 * On top of the smooth fit, a local correction: the kernel-weighted mean
 * of the smooth fit's residuals at training shapes near the query,
 *   c(x) = sum_j K(x, x_j) r_j / (sum_j K(x, x_j) + EST_SHRINK),
 * K Gaussian in log-shape distance (Nadaraya-Watson regression with a
 * shrinkage term that pulls c to 0 where the kernel mass is small, i.e.
 * away from the samples). Its bandwidth is chosen per pass from a short
 * list by leave-one-out error on (a deterministic subset of) the training
 * samples; if no bandwidth beats the smooth fit alone, there is none.
 */
#include "est.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Kernel mass below which the correction is shrunk to half: one sample at
 * 1.55 bandwidths (exp(-1.55^2 / 2) = 0.3). */
#define EST_SHRINK 0.3

/* Candidate bandwidths, in natural-log units of shape (0.1 = shapes about
 * 10 % apart). */
static const double bandwidths[] = {0.05, 0.1, 0.2, 0.35, 0.6, 0.9, 1.3};
#define N_BW ((int)(sizeof bandwidths / sizeof bandwidths[0]))

/* Leave-one-out is scored on at most this many training samples (every
 * k-th), to keep a fit in milliseconds. */
#define LOO_MAX 400

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

/* Kernel correction at coordinates x from the residual table, column
 * col (0 fwd, 1 bwd), bandwidth h, leaving out row skip (-1: none). */
static double correction(const est_fit *fit, const double *x, int col,
                         double h, int skip)
{
    int nd = fit->ndims, stride = nd + 2;
    double inv = -0.5 / (h * h), cut = 16 * h * h, num = 0, den = 0;
    for (int j = 0; j < fit->n_res; j++) {
        const double *row = fit->res + (size_t)j * (size_t)stride;
        double r = row[nd + col];
        if (j == skip || isnan(r)) continue;
        double d2 = 0;
        for (int k = 0; k < nd && d2 <= cut; k++) {
            double dx = x[k] - row[k];
            d2 += dx * dx;
        }
        if (d2 > cut) continue; /* weight below exp(-8) */
        double w = exp(d2 * inv);
        num += w * r;
        den += w;
    }
    return num / (den + EST_SHRINK);
}

/* Picks the bandwidth with the least leave-one-out relative error of the
 * time, or 0 when none beats no correction. */
static double choose_bandwidth(const est_fit *fit, int col)
{
    int nd = fit->ndims, stride = nd + 2;
    int step = fit->n_res / LOO_MAX + 1;
    double best_err = 0, best_h = 0;
    int n = 0;
    for (int i = 0; i < fit->n_res; i += step) {
        double r = fit->res[(size_t)i * (size_t)stride + (size_t)(nd + col)];
        if (!isnan(r)) {
            best_err += fabs(expm1(r));
            n++;
        }
    }
    if (n == 0) return 0;
    for (int b = 0; b < N_BW; b++) {
        double err = 0;
        for (int i = 0; i < fit->n_res; i += step) {
            const double *row = fit->res + (size_t)i * (size_t)stride;
            double r = row[nd + col];
            if (isnan(r)) continue;
            err += fabs(expm1(r - correction(fit, row, col, bandwidths[b], i)));
        }
        if (err < best_err) {
            best_err = err;
            best_h = bandwidths[b];
        }
    }
    return best_h;
}

void est_fit_free(est_fit *fit)
{
    if (!fit) return;
    free(fit->res);
    memset(fit, 0, sizeof *fit);
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
    fit->ndims = nd;
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
    /* Residuals of the smooth fit, for the local correction. */
    int stride = nd + 2;
    fit->res = tp_xmalloc((size_t)n * (size_t)stride * sizeof *fit->res);
    fit->n_res = n;
    for (int i = 0; i < n; i++) {
        double *row = fit->res + (size_t)i * (size_t)stride, phi[EST_MAX_FEATURES];
        op_dims(&s[i].op, row);
        est_time t;
        est_op_roofline(g, &s[i].op, &t);
        int p = features(fit, &s[i].op, phi);
        const double *w[2] = {fit->w_fwd, fit->w_bwd};
        double meas[2] = {s[i].fwd_s, s[i].bwd_s}, roof[2] = {t.fwd_s, t.bwd_s};
        int has[2] = {fit->has_fwd, fit->has_bwd};
        for (int c = 0; c < 2; c++) {
            row[nd + c] = NAN;
            if (!has[c] || !(meas[c] > 0) || !(roof[c] > 0)) continue;
            double y = log(meas[c] / roof[c]);
            for (int k = 0; k < p; k++) y -= w[c][k] * phi[k];
            row[nd + c] = y;
        }
    }
    fit->bw_fwd = fit->has_fwd ? choose_bandwidth(fit, 0) : 0;
    fit->bw_bwd = fit->has_bwd ? choose_bandwidth(fit, 1) : 0;
    return TP_OK;
}

void est_fit_predict(const hw_gpu *g, const est_fit *fit, const est_op *op,
                     est_time *t)
{
    est_op_roofline(g, op, t);
    double phi[EST_MAX_FEATURES], x[MAX_DIMS];
    int p = features(fit, op, phi);
    op_dims(op, x);
    if (fit->has_fwd) {
        double y = 0;
        for (int i = 0; i < p; i++) y += fit->w_fwd[i] * phi[i];
        if (fit->bw_fwd > 0) y += correction(fit, x, 0, fit->bw_fwd, -1);
        t->fwd_s *= exp(y);
    }
    if (fit->has_bwd) {
        double y = 0;
        for (int i = 0; i < p; i++) y += fit->w_bwd[i] * phi[i];
        if (fit->bw_bwd > 0) y += correction(fit, x, 1, fit->bw_bwd, -1);
        t->bwd_s *= exp(y);
    }
}
