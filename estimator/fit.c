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
#include "est_int.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
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

#define MAX_DIMS EST_MAX_DIMS

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
    case EST_OP_ATTN_CUDNN:
        /* Few published points (bench and paper figures): the sequence,
         * the head dimension and causality only; the roofline carries
         * the batch and heads (its waves). */
        x[0] = log((double)op->sk);
        x[1] = log((double)op->head_dim);
        x[2] = op->causal ? 1 : 0;
        return 3;
    case EST_OP_EMBEDDING:
        x[0] = log((double)op->rows);
        x[1] = log((double)op->cols);
        x[2] = log(op->n > 0 ? (double)op->n : 1);
        return 3;
    case EST_OP_ADAM:
        x[0] = log((double)op->n);
        return 1;
    case EST_OP_MASKED_SOFTMAX: {
        /* Megatron's kernel sizes its per-row loop for the next power of
         * two of the row length (a template per log2 of it): a row just
         * past a power of two costs nearly as much as twice it. */
        double c = (double)op->cols, p2 = 1;
        while (p2 < c) p2 *= 2;
        x[0] = log((double)op->rows);
        x[1] = log(c);
        x[2] = log(p2 / c);
        return 3;
    }
    default:
        x[0] = log((double)op->rows);
        x[1] = log((double)op->cols);
        return 2;
    }
}

/* Features of the clamped, standardised dims: 1, x_i, x_i^2, x_i x_j. */
static int features_at(const est_fit *fit, const double *dims, double *phi)
{
    double x[MAX_DIMS];
    int nd = fit->ndims;
    for (int i = 0; i < nd; i++) {
        double lo = fit->lo[i], hi = fit->hi[i];
        double v = dims[i] < lo ? lo : (dims[i] > hi ? hi : dims[i]);
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

static int features(const est_fit *fit, const est_op *op, double *phi)
{
    double x[MAX_DIMS];
    op_dims(op, x);
    return features_at(fit, x, phi);
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
    /* A dimension that does not vary among the samples gives features
     * that are 0 everywhere (features_at): they carry nothing, and only
     * the others need samples. */
    int vary = 0;
    for (int d = 0; d < fit->ndims; d++) vary += fit->hi[d] > fit->lo[d];
    int p_eff = 1 + vary + vary * (vary + 1) / 2;
    if (used < 2 * p_eff || p == 0) return 0;
    for (int a = 0; a < p; a++)
        for (int c = 0; c < a; c++) A[c * p + a] = A[a * p + c];
    /* The intercept is not penalised. */
    for (int a = 1; a < p; a++) A[a * p + a] += EST_RIDGE * used;
    if (cholesky_solve(A, rhs, p)) return 0;
    memcpy(w, rhs, (size_t)p * sizeof *w);
    fit->nfeat = p;
    return used;
}

/* Rows per k-d tree leaf: below this a scan is cheaper than a split. */
#define KD_LEAF 8

typedef struct kd_key {
    double v;
    int i;
} kd_key;

static int kd_key_cmp(const void *a, const void *b)
{
    const kd_key *x = a, *y = b;
    if (x->v != y->v) return x->v < y->v ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i); /* ties by row: a total order */
}

/* Arranges idx[lo, hi) as an implicit k-d tree over the rows of res:
 * the middle position holds the median on the dimension of widest spread
 * (recorded in split_dim[middle]), rows before it are <= on that
 * dimension, rows after it >=. */
static void kd_build(const double *res, int nd, int stride, int *idx, int lo,
                     int hi, unsigned char *split_dim, kd_key *tmp)
{
    if (hi - lo <= KD_LEAF) return;
    int dim = 0;
    double widest = -1;
    for (int d = 0; d < nd; d++) {
        double a = INFINITY, b = -INFINITY;
        for (int j = lo; j < hi; j++) {
            double v = res[(size_t)idx[j] * (size_t)stride + (size_t)d];
            if (v < a) a = v;
            if (v > b) b = v;
        }
        if (b - a > widest) {
            widest = b - a;
            dim = d;
        }
    }
    for (int j = lo; j < hi; j++) {
        tmp[j - lo].v = res[(size_t)idx[j] * (size_t)stride + (size_t)dim];
        tmp[j - lo].i = idx[j];
    }
    qsort(tmp, (size_t)(hi - lo), sizeof *tmp, kd_key_cmp);
    for (int j = lo; j < hi; j++) idx[j] = tmp[j - lo].i;
    int mid = lo + (hi - lo) / 2;
    split_dim[mid] = (unsigned char)dim;
    kd_build(res, nd, stride, idx, lo, mid, split_dim, tmp);
    kd_build(res, nd, stride, idx, mid + 1, hi, split_dim, tmp);
}

/* Puts the residual rows of fit in k-d tree order. */
static void kd_index(est_fit *fit)
{
    int n = fit->n_res, nd = fit->ndims, stride = nd + 2;
    int *idx = tp_xmalloc((size_t)n * sizeof *idx);
    kd_key *tmp = tp_xmalloc((size_t)n * sizeof *tmp);
    double *sorted = tp_xmalloc((size_t)n * (size_t)stride * sizeof *sorted);
    fit->split_dim = tp_xmalloc((size_t)n);
    memset(fit->split_dim, 0, (size_t)n);
    for (int i = 0; i < n; i++) idx[i] = i;
    kd_build(fit->res, nd, stride, idx, 0, n, fit->split_dim, tmp);
    for (int i = 0; i < n; i++)
        memcpy(sorted + (size_t)i * (size_t)stride,
               fit->res + (size_t)idx[i] * (size_t)stride,
               (size_t)stride * sizeof *sorted);
    free(fit->res);
    fit->res = sorted;
    free(tmp);
    free(idx);
}

/* Running sums of one kernel query. */
typedef struct kd_query {
    const est_fit *fit;
    const double *x;
    int col, skip;
    double inv, cut, num, den;
} kd_query;

static void kd_visit_row(kd_query *q, int j)
{
    int nd = q->fit->ndims;
    const double *row = q->fit->res + (size_t)j * (size_t)(nd + 2);
    double r = row[nd + q->col];
    if (j == q->skip || isnan(r)) return;
    double d2 = 0;
    for (int k = 0; k < nd && d2 <= q->cut; k++) {
        double dx = q->x[k] - row[k];
        d2 += dx * dx;
    }
    if (d2 > q->cut) return; /* weight below exp(-8) */
    double w = exp(d2 * q->inv);
    q->num += w * r;
    q->den += w;
}

static void kd_visit(kd_query *q, int lo, int hi)
{
    while (hi - lo > KD_LEAF) {
        int mid = lo + (hi - lo) / 2, nd = q->fit->ndims;
        int d = q->fit->split_dim[mid];
        double diff = q->x[d] - q->fit->res[(size_t)mid * (size_t)(nd + 2) + (size_t)d];
        kd_visit_row(q, mid);
        /* The far side can hold rows within the cut-off only when the
         * split plane itself is within it. */
        if (diff <= 0) {
            if (diff * diff <= q->cut) kd_visit(q, mid + 1, hi);
            hi = mid;
        } else {
            if (diff * diff <= q->cut) kd_visit(q, lo, mid);
            lo = mid + 1;
        }
    }
    for (int j = lo; j < hi; j++) kd_visit_row(q, j);
}

/* Kernel correction at coordinates x from the residual table, column
 * col (0 fwd, 1 bwd), bandwidth h, leaving out row skip (-1: none). Rows
 * beyond 4 bandwidths (weight below exp(-8)) are not visited. */
static double correction(const est_fit *fit, const double *x, int col,
                         double h, int skip)
{
    kd_query q = {fit, x, col, skip, -0.5 / (h * h), 16 * h * h, 0, 0};
    kd_visit(&q, 0, fit->n_res);
    return q.num / (q.den + EST_SHRINK);
}

/* Picks the bandwidth with the least leave-one-out relative error of the
 * time, or 0 when none beats no correction. The candidates are tried from
 * the narrowest and the search stops two past a minimum (on every shipped
 * sample set this picks what the full search picks). */
static double choose_bandwidth(const est_fit *fit, int col)
{
    int nd = fit->ndims, stride = nd + 2;
    int step = fit->n_res / LOO_MAX + 1, m = (fit->n_res + step - 1) / step;
    double *err = tp_xmalloc((size_t)m * sizeof *err);
    double best_err = 0, best_h = 0, last = INFINITY;
    int n = 0, rises = 0;
    for (int i = 0; i < fit->n_res; i += step) {
        double r = fit->res[(size_t)i * (size_t)stride + (size_t)(nd + col)];
        if (!isnan(r)) {
            best_err += fabs(expm1(r));
            n++;
        }
    }
    for (int b = 0; b < N_BW && n > 0; b++) {
        /* Each row's error in parallel, summed in row order: the same
         * choice at any thread count. */
#pragma omp parallel for schedule(dynamic, 16)
        for (int j = 0; j < m; j++) {
            const double *row = fit->res + (size_t)j * (size_t)step * (size_t)stride;
            double r = row[nd + col];
            err[j] = isnan(r) ? 0
                              : fabs(expm1(r - correction(fit, row, col,
                                                          bandwidths[b], j * step)));
        }
        double sum = 0;
        for (int j = 0; j < m; j++) sum += err[j];
        if (sum < best_err) {
            best_err = sum;
            best_h = bandwidths[b];
            rises = 0;
        } else if (sum > last && ++rises == 2) {
            /* Past the minimum of a U-shaped error curve: the wider
             * bandwidths, which cost the most (their kernels reach
             * every row), cannot win. */
            break;
        }
        last = sum;
    }
    free(err);
    return best_h;
}

/* ---- the correction compiled onto a lattice --------------------------
 *
 * A kernel sum over the residual rows costs about a microsecond per query
 * (tens of rows within the cut-off, an exp each); the estimator asks
 * millions. So the correction is evaluated at the vertices of a lattice
 * (each vertex once, the first time a query needs it) whose knots, per
 * dimension, are the training coordinates (thinned to at least half a
 * bandwidth apart), with knots
 * added 4 bandwidths beyond each edge and on each side of any gap wider
 * than 8 bandwidths, where the kernel sum has faded to ~0. A query
 * interpolates multilinearly between the 2^d vertices around it (exact at
 * the training coordinates) and gets 0 outside the lattice, where the
 * kernel sum is below exp(-8) of its weight anyway. */

#define LAT_MAX_VERTICES 65536
#define LAT_MAX_KNOTS 96

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Knots of one dimension from the sorted coordinates v[n], at least
 * `gap` apart, with the fade-out knots 4h away; returns the count, or
 * cap + 1 when they do not fit in cap. */
static int lattice_dim(const double *v, int n, double gap, double h, double *k,
                       int cap)
{
    int m = 0;
    double fade = 4 * h;
#define PUSH(x) do { if (m >= cap) return cap + 1; k[m++] = (x); } while (0)
    PUSH(v[0] - fade);
    double last = v[0];
    PUSH(v[0]);
    for (int i = 1; i < n; i++) {
        if (v[i] - last < gap) continue;
        if (v[i] - last > 2 * fade) {
            PUSH(last + fade);
            PUSH(v[i] - fade);
        }
        PUSH(v[i]);
        last = v[i];
    }
    PUSH(last + fade);
#undef PUSH
    return m;
}

static void lattice_build(est_fit *fit)
{
    double h = fit->bw_fwd;
    if (h <= 0 || (fit->bw_bwd > 0 && fit->bw_bwd < h)) h = fit->bw_bwd;
    if (h <= 0) return;
    int nd = fit->ndims, stride = nd + 2, n = fit->n_res;
    /* Each dimension's coordinates, sorted once for every retry below. */
    double *v = tp_xmalloc((size_t)nd * (size_t)n * sizeof *v);
    for (int d = 0; d < nd; d++) {
        double *vd = v + (size_t)d * (size_t)n;
        for (int i = 0; i < n; i++)
            vd[i] = fit->res[(size_t)i * (size_t)stride + (size_t)d];
        qsort(vd, (size_t)n, sizeof *vd, cmp_double);
    }
    double *knots = tp_xmalloc((size_t)nd * LAT_MAX_KNOTS * sizeof *knots);
    double gap[MAX_DIMS];
    for (int d = 0; d < nd; d++) gap[d] = h / 2;
    for (;;) {
        /* Widen the spacing of the most crowded dimension until the
         * lattice fits: at most LAT_MAX_KNOTS knots in each dimension
         * (lattice_dim's cap + 1 says one overflowed: its knots stop at
         * the cap, and the last fade-out knot is missing) and at most
         * LAT_MAX_VERTICES in all. */
        long total = 1;
        int worst = 0, over = 0;
        for (int d = 0; d < nd; d++) {
            fit->lat_n[d] = lattice_dim(v + (size_t)d * (size_t)n, n, gap[d], h,
                                        knots + (size_t)d * LAT_MAX_KNOTS,
                                        LAT_MAX_KNOTS);
            total *= fit->lat_n[d];
            over |= fit->lat_n[d] > LAT_MAX_KNOTS;
            if (fit->lat_n[d] > fit->lat_n[worst]) worst = d;
        }
        if (!over && total <= LAT_MAX_VERTICES) break;
        gap[worst] *= 1.5;
    }
    free(v);
    long total = 1;
    int off = 0;
    fit->lat_knots = tp_xmalloc((size_t)nd * LAT_MAX_KNOTS * sizeof *knots);
    for (int d = 0; d < nd; d++) {
        memcpy(fit->lat_knots + off, knots + (size_t)d * LAT_MAX_KNOTS,
               (size_t)fit->lat_n[d] * sizeof *knots);
        off += fit->lat_n[d];
        total *= fit->lat_n[d];
    }
    free(knots);
    fit->lat_c = tp_xmalloc((size_t)total * 2 * sizeof *fit->lat_c);
    for (long i = 0; i < 2 * total; i++)
        atomic_init(&fit->lat_c[i], NAN);
}

/* The fwd and bwd corrections at lattice vertex vtx (row-major), computed
 * on first use. */
static void lattice_vertex(const est_fit *fit, long vtx, double *c)
{
    _Atomic double *slot = fit->lat_c + 2 * vtx;
    c[0] = atomic_load_explicit(&slot[0], memory_order_relaxed);
    c[1] = atomic_load_explicit(&slot[1], memory_order_relaxed);
    if (!isnan(c[0]) && !isnan(c[1])) return;
    double x[MAX_DIMS];
    long rest = vtx;
    int base = 0;
    for (int d = 0; d < fit->ndims; d++) base += fit->lat_n[d];
    for (int d = fit->ndims - 1; d >= 0; d--) { /* last dim fastest */
        base -= fit->lat_n[d];
        x[d] = fit->lat_knots[base + (int)(rest % fit->lat_n[d])];
        rest /= fit->lat_n[d];
    }
    c[0] = fit->bw_fwd > 0 ? correction(fit, x, 0, fit->bw_fwd, -1) : 0;
    c[1] = fit->bw_bwd > 0 ? correction(fit, x, 1, fit->bw_bwd, -1) : 0;
    atomic_store_explicit(&slot[0], c[0], memory_order_relaxed);
    atomic_store_explicit(&slot[1], c[1], memory_order_relaxed);
}

/* The compiled correction at x: c[0] fwd, c[1] bwd. */
static void lattice_eval(const est_fit *fit, const double *x, double *c)
{
    c[0] = c[1] = 0;
    if (!fit->lat_c) return;
    int nd = fit->ndims, cell[MAX_DIMS];
    double t[MAX_DIMS];
    long strides[MAX_DIMS];
    const double *k = fit->lat_knots;
    for (int d = 0; d < nd; d++) {
        int m = fit->lat_n[d];
        if (x[d] < k[0] || x[d] > k[m - 1]) return;
        /* Branch-free binary search for the last knot <= x among the
         * first m - 1 (so the cell's upper knot exists). */
        const double *at = k;
        int len = m - 1;
        while (len > 1) {
            int half = len / 2;
            at = at[half] <= x[d] ? at + half : at;
            len -= half;
        }
        int lo = (int)(at - k);
        cell[d] = lo;
        t[d] = (x[d] - k[lo]) / (k[lo + 1] - k[lo]);
        k += m;
    }
    long s = 1;
    for (int d = nd - 1; d >= 0; d--) {
        strides[d] = s;
        s *= fit->lat_n[d];
    }
    /* The corners' weights and offsets, one dimension at a time; a
     * coordinate exactly on a knot (t = 0) adds no corners. */
    double w[1 << MAX_DIMS];
    long at[1 << MAX_DIMS];
    int nc = 1;
    w[0] = 1;
    at[0] = 0;
    for (int d = 0; d < nd; d++) {
        for (int i = 0; i < nc; i++) at[i] += cell[d] * strides[d];
        if (t[d] == 0) continue;
        for (int i = 0; i < nc; i++) {
            w[nc + i] = w[i] * t[d];
            at[nc + i] = at[i] + strides[d];
            w[i] *= 1 - t[d];
        }
        nc *= 2;
    }
    for (int i = 0; i < nc; i++) {
        double v[2];
        lattice_vertex(fit, at[i], v);
        c[0] += w[i] * v[0];
        c[1] += w[i] * v[1];
    }
}

void est_fit_free(est_fit *fit)
{
    if (!fit) return;
    free(fit->res);
    free(fit->split_dim);
    free(fit->lat_knots);
    free(fit->lat_c);
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
    kd_index(fit);
    fit->bw_fwd = fit->has_fwd ? choose_bandwidth(fit, 0) : 0;
    fit->bw_bwd = fit->has_bwd ? choose_bandwidth(fit, 1) : 0;
    lattice_build(fit);
    return TP_OK;
}

void est_fit_predict(const hw_gpu *g, const est_fit *fit, const est_op *op,
                     est_time *t)
{
    est_op_roofline(g, op, t);
    double phi[EST_MAX_FEATURES], x[MAX_DIMS], c[2];
    op_dims(op, x);
    int p = features_at(fit, x, phi);
    lattice_eval(fit, x, c);
    if (fit->has_fwd) {
        double y = c[0];
        for (int i = 0; i < p; i++) y += fit->w_fwd[i] * phi[i];
        t->fwd_s *= exp(y);
    }
    if (fit->has_bwd) {
        double y = c[1];
        for (int i = 0; i < p; i++) y += fit->w_bwd[i] * phi[i];
        t->bwd_s *= exp(y);
    }
}

/* ---- a fit's bytes, for the fit cache (cache.c) ----------------------- */

void est_fit_write(const est_fit *fit, est_wbuf *b)
{
    int nd = fit->ndims, stride = nd + 2, n_knots = 0;
    est_w_i32(b, (int32_t)fit->kind);
    est_w_i32(b, fit->nfeat);
    est_w_i32(b, nd);
    est_w_i32(b, fit->has_fwd);
    est_w_i32(b, fit->has_bwd);
    est_w_i32(b, fit->n_train);
    est_w_i32(b, fit->n_res);
    est_w_f64s(b, fit->lo, EST_MAX_FEATURES);
    est_w_f64s(b, fit->hi, EST_MAX_FEATURES);
    est_w_f64s(b, fit->w_fwd, EST_MAX_FEATURES);
    est_w_f64s(b, fit->w_bwd, EST_MAX_FEATURES);
    est_w_f64(b, fit->bw_fwd);
    est_w_f64(b, fit->bw_bwd);
    est_w_i32(b, fit->lat_c != NULL);
    for (int d = 0; d < EST_MAX_DIMS; d++) {
        est_w_i32(b, fit->lat_n[d]);
        n_knots += fit->lat_c ? fit->lat_n[d] : 0;
    }
    est_w_f64s(b, fit->res, (size_t)fit->n_res * (size_t)stride);
    est_w_bytes(b, fit->split_dim, (size_t)fit->n_res);
    est_w_f64s(b, fit->lat_knots, (size_t)n_knots);
}

/* The bounds est_fit_samples keeps, checked on what a cache file says. */
static const char *fit_check(const est_fit *f, int has_lat, size_t left)
{
    int nd = f->ndims;
    if ((unsigned)f->kind >= EST_OP_COUNT) return "an operator kind out of range";
    if (nd < 1 || nd > MAX_DIMS) return "a dimension count out of range";
    if (f->nfeat != 1 + nd + nd * (nd + 1) / 2)
        return "a feature count that does not match its dimensions";
    if ((f->has_fwd != 0 && f->has_fwd != 1) || (f->has_bwd != 0 && f->has_bwd != 1)
        || !(f->has_fwd || f->has_bwd))
        return "a fit of neither pass";
    if (f->n_res < 1 || f->n_train < 1
        || (size_t)f->n_res > left / ((size_t)(nd + 2) * sizeof(double) + 1))
        return "a residual count out of range";
    if (!(f->bw_fwd >= 0 && f->bw_fwd < 100 && f->bw_bwd >= 0 && f->bw_bwd < 100))
        return "a kernel bandwidth out of range";
    if (has_lat != (f->bw_fwd > 0 || f->bw_bwd > 0))
        return "a lattice without a bandwidth, or a bandwidth without one";
    long total = 1;
    for (int d = 0; d < EST_MAX_DIMS; d++) {
        int k = f->lat_n[d];
        if (!has_lat || d >= nd) {
            if (k != 0) return "lattice knots beyond its dimensions";
            continue;
        }
        if (k < 2 || k > LAT_MAX_KNOTS) return "a lattice knot count out of range";
        total *= k;
    }
    if (total > LAT_MAX_VERTICES) return "a lattice over its vertex bound";
    return NULL;
}

int est_fit_read(est_fit *fit, est_rbuf *r, char *why, size_t cap)
{
    memset(fit, 0, sizeof *fit);
    fit->kind = (est_op_kind)est_r_i32(r);
    fit->nfeat = est_r_i32(r);
    fit->ndims = est_r_i32(r);
    fit->has_fwd = est_r_i32(r);
    fit->has_bwd = est_r_i32(r);
    fit->n_train = est_r_i32(r);
    fit->n_res = est_r_i32(r);
    est_r_f64s(r, fit->lo, EST_MAX_FEATURES);
    est_r_f64s(r, fit->hi, EST_MAX_FEATURES);
    est_r_f64s(r, fit->w_fwd, EST_MAX_FEATURES);
    est_r_f64s(r, fit->w_bwd, EST_MAX_FEATURES);
    fit->bw_fwd = est_r_f64(r);
    fit->bw_bwd = est_r_f64(r);
    int has_lat = est_r_i32(r);
    for (int d = 0; d < EST_MAX_DIMS; d++) fit->lat_n[d] = est_r_i32(r);
    const char *bad = r->bad ? "truncated" : fit_check(fit, has_lat, est_r_left(r));
    if (bad) {
        snprintf(why, cap, "a %s fit: %s",
                 (unsigned)fit->kind < EST_OP_COUNT ? est_op_names[fit->kind]
                                                    : "?",
                 bad);
        memset(fit, 0, sizeof *fit);
        return -1;
    }
    int nd = fit->ndims, n = fit->n_res, n_knots = 0;
    size_t cells = (size_t)n * (size_t)(nd + 2);
    fit->res = tp_xmalloc(cells * sizeof *fit->res);
    fit->split_dim = tp_xmalloc((size_t)n);
    est_r_f64s(r, fit->res, cells);
    est_r_bytes(r, fit->split_dim, (size_t)n);
    for (int i = 0; i < n && !bad; i++)
        if (fit->split_dim[i] >= nd) bad = "a k-d tree split on no dimension";
    long total = 1;
    if (has_lat) {
        for (int d = 0; d < nd; d++) {
            n_knots += fit->lat_n[d];
            total *= fit->lat_n[d];
        }
        fit->lat_knots = tp_xmalloc((size_t)n_knots * sizeof *fit->lat_knots);
        est_r_f64s(r, fit->lat_knots, (size_t)n_knots);
        /* lattice_eval's search needs each dimension's knots increasing. */
        const double *k = fit->lat_knots;
        for (int d = 0; d < nd && !bad; k += fit->lat_n[d], d++)
            for (int i = 1; i < fit->lat_n[d]; i++)
                if (!(k[i] > k[i - 1]) || !isfinite(k[i]) || !isfinite(k[0])) {
                    bad = "lattice knots not increasing";
                    break;
                }
    }
    if (r->bad) bad = "truncated";
    if (bad) {
        snprintf(why, cap, "a %s fit: %s", est_op_names[fit->kind], bad);
        est_fit_free(fit);
        return -1;
    }
    if (has_lat) {
        fit->lat_c = tp_xmalloc((size_t)total * 2 * sizeof *fit->lat_c);
        for (long i = 0; i < 2 * total; i++) atomic_init(&fit->lat_c[i], NAN);
    }
    return 0;
}
