/*
 * samples.c - measured-sample files: the operator names and CSV format
 * of the samples released with Zhang et al. 2025 (arXiv 2509.22832;
 * shared/data/seed_samples/README.md), mapped to our operators at
 * per-rank shapes, and our own columns (m, n, k; params) for GEMM tables
 * and optimizer steps (bench/sampler writes both).
 *
 * Shapes, per that README: linear1 = QKV GEMM (b l, d) x (d, 3d/mp);
 * linear2 = (b l, d/mp) x (d/mp, d); linear3 = (b l, d) x (d, 4d/mp);
 * linear4 = (b l, 4d/mp) x (4d/mp, d); linear_final = (b l, d) x (d,
 * V_p/mp) with V_p = 50257 padded to a multiple of 128 mp; flash_atten =
 * non-causal, q/k/v [b, l, h/mp, d/h]; layernorm, RMSlayernorm, res_add on
 * [l, b, d] (the seed's RMSlayernorm is GPT-NeoX's unfused module: hwdb
 * names those files RMSlayernorm_unfused; ours time PyTorch's fused
 * F.rms_norm); gelu on [l, b, 4d/mp]; embedding lookup of a (V_p/mp, d)
 * table; parallel_cross_entropy_128 on [b, l, V_p/mp]; RoPE on q and k
 * [l, b, h/mp, d/h]; softmax on [b, h/mp, l, l]; optimizer = one
 * DeepSpeed FusedAdam step over `params` parameters.
 */
#include "est.h"

#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const est_col_names[EST_NCOLS] = {
    [EST_COL_MP] = "mp", [EST_COL_B] = "b",   [EST_COL_H] = "h",
    [EST_COL_L] = "l",   [EST_COL_DIM] = "dim", [EST_COL_M] = "m",
    [EST_COL_N] = "n",   [EST_COL_K] = "k",   [EST_COL_PARAMS] = "params"};
_Static_assert(sizeof est_col_names / sizeof est_col_names[0] == EST_NCOLS,
               "est_col_names names every est_col");

const char *const est_sample_op_names[] = {
    "linear1", "linear2", "linear3", "linear4", "linear_final",
    "flash_atten", "flash_atten_causal", "flash_atten_cudnn",
    "flash_atten_cudnn_causal", "layernorm", "RMSlayernorm",
    "RMSlayernorm_unfused", "gelu",
    "res_add", "embedding", "parallel_cross_entropy_128", "RoPE", "softmax",
    "ScaledUpperTriangMaskedSoftmax",
    "gemm", "adam", "optimizer", NULL};

/* GPT-NeoX-like vocabulary of the seed samples (their README). */
#define SEED_VOCAB 50257

/* A column's value, 1 where absent. */
static double col(const double *cols, int c)
{
    return cols[c] > 0 ? cols[c] : 1;
}

int est_sample_op(const char *name, hw_dtype dtype, const double *cols,
                  est_op *op)
{
    memset(op, 0, sizeof *op);
    op->dtype = dtype;
    double mp = col(cols, EST_COL_MP), b = col(cols, EST_COL_B),
           h = col(cols, EST_COL_H), l = col(cols, EST_COL_L),
           dim = col(cols, EST_COL_DIM);
    int64_t tokens = (int64_t)(b * l), d = (int64_t)dim, t = (int64_t)mp;
    int64_t vp = space_vocab_padded(SEED_VOCAB, t);
    op->b = 1;
    if (strcmp(name, "linear1") == 0) {
        op->kind = EST_OP_GEMM;
        op->m = tokens, op->k = d, op->n = 3 * d / t;
    } else if (strcmp(name, "linear2") == 0) {
        op->kind = EST_OP_GEMM;
        op->m = tokens, op->k = d / t, op->n = d;
    } else if (strcmp(name, "linear3") == 0) {
        op->kind = EST_OP_GEMM;
        op->m = tokens, op->k = d, op->n = 4 * d / t;
    } else if (strcmp(name, "linear4") == 0) {
        op->kind = EST_OP_GEMM;
        op->m = tokens, op->k = 4 * d / t, op->n = d;
    } else if (strcmp(name, "linear_final") == 0) {
        op->kind = EST_OP_GEMM;
        op->m = tokens, op->k = d, op->n = vp / t;
    } else if (strcmp(name, "flash_atten") == 0
               || strcmp(name, "flash_atten_causal") == 0
               || strcmp(name, "flash_atten_cudnn") == 0
               || strcmp(name, "flash_atten_cudnn_causal") == 0) {
        op->kind = strstr(name, "_cudnn") ? EST_OP_ATTN_CUDNN
                                          : EST_OP_FLASH_ATTN;
        op->b = (int64_t)b;
        op->heads = op->kv_heads = (int64_t)(h / mp);
        op->sq = op->sk = (int64_t)l;
        op->head_dim = (int64_t)(dim / h);
        op->causal = strstr(name, "_causal") != NULL;
    } else if (strcmp(name, "layernorm") == 0) {
        op->kind = EST_OP_LAYERNORM;
        op->rows = tokens, op->cols = d;
    } else if (strcmp(name, "RMSlayernorm") == 0) {
        op->kind = EST_OP_RMSNORM;
        op->rows = tokens, op->cols = d;
    } else if (strcmp(name, "RMSlayernorm_unfused") == 0) {
        op->kind = EST_OP_RMSNORM_UNFUSED;
        op->rows = tokens, op->cols = d;
    } else if (strcmp(name, "gelu") == 0) {
        op->kind = EST_OP_GELU;
        op->rows = tokens, op->cols = 4 * d / t;
    } else if (strcmp(name, "res_add") == 0) {
        op->kind = EST_OP_RESADD;
        op->rows = tokens, op->cols = d;
    } else if (strcmp(name, "embedding") == 0) {
        op->kind = EST_OP_EMBEDDING;
        op->rows = tokens, op->cols = d, op->n = vp / t;
        op->vocab_parallel = t > 1;
    } else if (strcmp(name, "parallel_cross_entropy_128") == 0) {
        op->kind = EST_OP_CROSS_ENTROPY;
        op->rows = tokens, op->cols = vp / t;
    } else if (strcmp(name, "RoPE") == 0) {
        /* Both samplers time the rotate-half form (the seed's GPT-NeoX
         * code, our bench/sampler), never a fused kernel. */
        op->kind = EST_OP_ROPE_UNFUSED;
        op->rows = tokens, op->cols = 2 * d / t; /* q and k */
    } else if (strcmp(name, "softmax") == 0) {
        op->kind = EST_OP_SOFTMAX;
        op->rows = (int64_t)(b * (h / mp) * l), op->cols = (int64_t)l;
    } else if (strcmp(name, "ScaledUpperTriangMaskedSoftmax") == 0) {
        op->kind = EST_OP_MASKED_SOFTMAX;
        op->rows = (int64_t)(b * (h / mp) * l), op->cols = (int64_t)l;
    } else if (strcmp(name, "gemm") == 0) {
        op->kind = EST_OP_GEMM;
        op->b = (int64_t)b;
        op->m = (int64_t)col(cols, EST_COL_M);
        op->n = (int64_t)col(cols, EST_COL_N);
        op->k = (int64_t)col(cols, EST_COL_K);
    } else if (strcmp(name, "adam") == 0 || strcmp(name, "optimizer") == 0) {
        op->kind = EST_OP_ADAM;
        op->n = (int64_t)col(cols, EST_COL_PARAMS);
    } else {
        return -1;
    }
    return 0;
}

int est_sample_needs(const char *name, int need[EST_NCOLS])
{
    static const struct {
        const char *prefix; /* names starting so */
        int cols[4];
    } table[] = {
        {"flash_atten", {EST_COL_B, EST_COL_H, EST_COL_L, EST_COL_DIM}},
        {"softmax", {EST_COL_B, EST_COL_H, EST_COL_L, -1}},
        {"ScaledUpperTriangMaskedSoftmax", {EST_COL_B, EST_COL_H, EST_COL_L, -1}},
        {"parallel_cross_entropy", {EST_COL_B, EST_COL_L, -1, -1}},
        {"gemm", {EST_COL_M, EST_COL_N, EST_COL_K, -1}},
        {"adam", {EST_COL_PARAMS, -1, -1, -1}},
        {"optimizer", {EST_COL_PARAMS, -1, -1, -1}},
    };
    est_op probe;
    double ones[EST_NCOLS];
    for (int i = 0; i < EST_NCOLS; i++) ones[i] = 1, need[i] = 0;
    if (est_sample_op(name, HW_FP16, ones, &probe)) return -1;
    const int *cols = NULL;
    static const int bld[4] = {EST_COL_B, EST_COL_L, EST_COL_DIM, -1};
    for (size_t i = 0; i < sizeof table / sizeof table[0] && !cols; i++)
        if (strncmp(name, table[i].prefix, strlen(table[i].prefix)) == 0)
            cols = table[i].cols;
    if (!cols) cols = bld; /* the GEMMs, norms, activations, embedding */
    int n = 0;
    for (int i = 0; i < 4; i++)
        if (cols[i] >= 0) need[cols[i]] = 1, n++;
    return n;
}

void est_sample_needs_str(const int need[EST_NCOLS], char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int c = 0; c < EST_NCOLS && len < cap; c++)
        if (need[c])
            len += (size_t)snprintf(buf + len, cap - len, "%s%s",
                                    len ? ", " : "", est_col_names[c]);
}

#define MAX_COLS 16

/* Time columns: forward, backward, and the names an optimizer step's
 * single time goes by (ours, the seed's per-parameter-count file). */
static const char *const fwd_names[] = {"F_dur(us)", "step_dur(us)", "dur",
                                        NULL};
/* Seed optimizer columns that describe the model, not the shape. */
static const char *const ignored_names[] = {"num_layers", "hidden_size",
                                            "param_tensors", NULL};

static int in_list(const char *s, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (strcmp(s, list[i]) == 0) return 1;
    return 0;
}

int est_read_samples(const char *path, const char *op_name, hw_dtype dtype,
                     est_sample **out, int *n_out, tp_err *e)
{
    *out = NULL;
    *n_out = 0;
    est_op probe;
    double ones[EST_NCOLS];
    for (int i = 0; i < EST_NCOLS; i++) ones[i] = 1;
    if (est_sample_op(op_name, dtype, ones, &probe) != 0)
        return tp_errf(e, TP_EDATA, "unknown operator '%s'", op_name);
    char *text;
    size_t len;
    int rc = tp_read_file(path, (size_t)256 << 20, &text, &len, e);
    if (rc) return rc;
    /* The lines end at a NUL: every row after one would go unread. */
    if (memchr(text, '\0', len)) {
        free(text);
        return tp_errf(e, TP_EDATA, "%s: a binary file (a NUL byte), expected "
                                    "a CSV text file", path);
    }
    tp_csv r;
    tp_csv_init(&r, text, len, path, 0);
    int lineno = 0, ncols = 0;
    int col_of[EST_NCOLS], col_f = -1, col_b = -1;
    for (int i = 0; i < EST_NCOLS; i++) col_of[i] = -1;
    int cap = 0, n = 0;
    est_sample *s = NULL;
    rc = TP_OK;
    for (;;) {
        char *f[MAX_COLS + 1];
        int nf = tp_csv_next(&r, f, MAX_COLS, e);
        if (nf <= 0) {
            if (nf < 0) rc = TP_EDATA; /* the message is in e */
            break;
        }
        lineno = r.line;
        if (nf == 1 && f[0][0] == '\0') continue; /* blank line */
        if (ncols == 0) { /* header */
            ncols = nf;
            if (nf > MAX_COLS) {
                rc = tp_errf(e, TP_EDATA, "%s:1: more than %d columns", path,
                             MAX_COLS);
                break;
            }
            for (int c = 0; c < nf; c++) {
                int known = 0;
                for (int k = 0; k < EST_NCOLS; k++)
                    if (strcmp(f[c], est_col_names[k]) == 0)
                        col_of[k] = c, known = 1;
                if (in_list(f[c], fwd_names)) col_f = c, known = 1;
                if (strcmp(f[c], "B_dur(us)") == 0) col_b = c, known = 1;
                if (in_list(f[c], ignored_names)) known = 1;
                if (!known) {
                    rc = tp_errf(e, TP_EDATA,
                                 "%s:1: column %d: unknown column '%s' "
                                 "(expected mp, b, h, l, dim, m, n, k, "
                                 "params, F_dur(us), B_dur(us))",
                                 path, c + 1, f[c]);
                    break;
                }
            }
            if (rc) break;
            int need[EST_NCOLS];
            est_sample_needs(op_name, need);
            for (int k = 0; k < EST_NCOLS && !rc; k++)
                if (need[k] && col_of[k] < 0) {
                    char list[96];
                    est_sample_needs_str(need, list, sizeof list);
                    rc = tp_errf(e, TP_EDATA,
                                 "%s:1: no column %s: operator %s needs "
                                 "%s (mp defaults to 1)",
                                 path, est_col_names[k], op_name, list);
                }
            if (rc) break;
            continue;
        }
        if (nf != ncols) {
            rc = tp_errf(e, TP_EDATA, "%s:%d: %d fields, the header has %d",
                         path, lineno, nf, ncols);
            break;
        }
        double v[MAX_COLS];
        for (int c = 0; c < nf; c++) {
            if (tp_parse_num(f[c], &v[c])) {
                rc = tp_errf(e, TP_EDATA,
                             "%s:%d: column %d: expected a number, found '%s'",
                             path, lineno, c + 1, f[c]);
                break;
            }
        }
        if (rc) break;
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            s = tp_xrealloc(s, (size_t)cap * sizeof *s);
        }
        est_sample *x = &s[n];
        memset(x, 0, sizeof *x);
        for (int k = 0; k < EST_NCOLS; k++) {
            x->cols[k] = col_of[k] >= 0 ? v[col_of[k]] : -1;
            /* Shapes are whole and positive where given (the seeds write
             * 1024.0): a fractional one would split a layer's heads or
             * its TP ranks in parts, and mp 0.5 divided by zero. */
            double y = col_of[k] >= 0 ? v[col_of[k]] : 1;
            if (!(y >= 1 && y < 1e12) || y != floor(y)) {
                rc = tp_errf(e, TP_EDATA,
                             "%s:%d: %s = %g, expected a whole number in "
                             "[1, 1e12)",
                             path, lineno, est_col_names[k], y);
                break;
            }
        }
        if (rc) break;
        /* A time is positive, or -1 where it was not measured (the
         * project's own files); anything else is an error, never a row
         * dropped without a word. */
        for (int c = 0; c < 2 && !rc; c++) {
            int at = c == 0 ? col_f : col_b;
            if (at >= 0 && !(v[at] > 0) && v[at] != -1)
                rc = tp_errf(e, TP_EDATA,
                             "%s:%d: %s = %g: expected a time > 0 us, or -1 "
                             "where it was not measured",
                             path, lineno, c == 0 ? "F_dur(us)" : "B_dur(us)",
                             v[at]);
        }
        if (rc) break;
        est_sample_op(op_name, dtype, x->cols, &x->op);
        x->fwd_s = col_f >= 0 ? v[col_f] * 1e-6 : -1;
        x->bwd_s = col_b >= 0 ? v[col_b] * 1e-6 : -1;
        x->row = lineno;
        n++;
    }
    free(text);
    if (rc == TP_OK && ncols == 0)
        rc = tp_errf(e, TP_EDATA, "%s: empty file, expected a CSV header",
                     path);
    if (rc) {
        free(s);
        return rc;
    }
    *out = s;
    *n_out = n;
    return TP_OK;
}

int est_sample_implausible(const hw_gpu *g, const est_sample *s, char *why,
                           size_t cap)
{
    est_time fl;
    est_floor_why by[2];
    est_op_floor(g, &s->op, &fl, by);
    est_work w;
    est_op_work(&s->op, &w);
    double peak = g->peak_flops[s->op.dtype];
    if (peak <= 0) peak = g->peak_flops[HW_FP16];
    static const char *const pass[2] = {"forward", "backward"};
    int bad = 0;
    why[0] = '\0';
    double t[2] = {s->fwd_s, s->bwd_s}, floor_s[2] = {fl.fwd_s, fl.bwd_s};
    double flops[2] = {w.fwd_flops, w.bwd_flops};
    for (int p = 0; p < 2; p++) {
        if (!(t[p] > 0) || t[p] >= floor_s[p]) continue;
        if (!bad && by[p] == EST_FLOOR_PEAK)
            snprintf(why, cap,
                     "%s achieves %.0f TFLOP/s, above the %.0f TFLOP/s "
                     "dense peak",
                     pass[p], flops[p] / t[p] / 1e12, peak / 1e12);
        else if (!bad)
            snprintf(why, cap,
                     "%s moves %.2f TB/s, above the %.2f TB/s HBM "
                     "bandwidth",
                     pass[p], floor_s[p] * g->mem_bw_bytes_per_s / t[p] / 1e12,
                     g->mem_bw_bytes_per_s / 1e12);
        bad |= p ? EST_BAD_BWD : EST_BAD_FWD;
    }
    if ((s->op.kind == EST_OP_FLASH_ATTN || s->op.kind == EST_OP_ATTN_CUDNN)
        && s->fwd_s > 0 && s->bwd_s > 0
        && s->bwd_s <= s->fwd_s) {
        if (!bad)
            snprintf(why, cap,
                     "flash-attention backward (%.1f us) no slower than its "
                     "forward (%.1f us), though it does 2.5x the FLOPs",
                     s->bwd_s * 1e6, s->fwd_s * 1e6);
        bad |= EST_BAD_BWD;
    }
    return bad;
}

int est_sample_clean(const hw_gpu *g, est_sample *s, char *why, size_t cap)
{
    int bad = est_sample_implausible(g, s, why, cap);
    if (bad & EST_BAD_FWD) s->fwd_s = -1;
    if (bad & EST_BAD_BWD) s->bwd_s = -1;
    return bad;
}

/* GEMM shapes compared by (b, m, n, k). */
static int cmp_gemm_shape(const void *a, const void *b)
{
    const est_op *x = &((const est_sample *)a)->op,
                 *y = &((const est_sample *)b)->op;
    int64_t kx[4] = {x->b, x->m, x->n, x->k}, ky[4] = {y->b, y->m, y->n, y->k};
    for (int i = 0; i < 4; i++)
        if (kx[i] != ky[i]) return kx[i] < ky[i] ? -1 : 1;
    return 0;
}

int est_samples_fp8_speedup(const hw_gpu *g, const est_sample *s, int n,
                            int *bad, char *why, size_t cap, tp_err *e)
{
    why[0] = '\0';
    int any = 0;
    for (int k = 0; k < n; k++)
        any |= s[k].op.kind == EST_OP_GEMM && s[k].op.dtype == HW_FP8;
    if (!any) return 0;
    /* The GPU's plausible 16-bit GEMM times, sorted by shape. */
    est_sample *ref = NULL;
    int nref = 0;
    for (int i = 0; i < g->n_measured; i++) {
        const hw_measured *m = &g->measured[i];
        int dt = hw_dtype_parse(m->dtype);
        if (strcmp(m->kind, "operator_samples") != 0
            || (dt != HW_BF16 && dt != HW_FP16))
            continue;
        est_sample *r;
        int nr;
        if (est_read_samples(m->path, m->op, (hw_dtype)dt, &r, &nr, e)) {
            free(ref);
            return -1;
        }
        ref = tp_xrealloc(ref, (size_t)(nref + nr) * sizeof *ref);
        char w[160];
        for (int k = 0; k < nr; k++)
            if (r[k].op.kind == EST_OP_GEMM
                && !est_sample_clean(g, &r[k], w, sizeof w))
                ref[nref++] = r[k];
        free(r);
    }
    if (nref) qsort(ref, (size_t)nref, sizeof *ref, cmp_gemm_shape);
    int count = 0;
    for (int k = 0; k < n; k++) {
        bad[k] = 0;
        if (s[k].op.kind != EST_OP_GEMM || s[k].op.dtype != HW_FP8) continue;
        const est_sample *r = nref ? bsearch(&s[k], ref, (size_t)nref,
                                             sizeof *ref, cmp_gemm_shape)
                                   : NULL;
        if (!r) continue;
        double t8[2] = {s[k].fwd_s, s[k].bwd_s}, t16[2] = {r->fwd_s, r->bwd_s};
        for (int p = 0; p < 2; p++)
            if (t8[p] > 0 && t16[p] > 0 && t16[p] > EST_FP8_MAX_SPEEDUP * t8[p]) {
                if (!count && !bad[k])
                    snprintf(why, cap,
                             "%s %.2fx as fast as the 16-bit GEMM of the same "
                             "shape (%.1f us against %.1f us); fp8 tensor "
                             "cores give at most %.0fx",
                             p ? "backward" : "forward", t16[p] / t8[p],
                             t8[p] * 1e6, t16[p] * 1e6, EST_FP8_MAX_SPEEDUP);
                bad[k] |= p ? EST_BAD_BWD : EST_BAD_FWD;
            }
        count += bad[k] != 0;
    }
    free(ref);
    return count;
}

int est_measured_samples(const hw_gpu *g, const hw_measured *m, int keep_bad,
                         est_sample **out, int *n_out, int *n_bad, tp_err *e)
{
    int dt = hw_dtype_parse(m->dtype);
    est_sample *s;
    int ns, n = 0;
    *out = NULL;
    *n_out = *n_bad = 0;
    int rc = est_read_samples(m->path, m->op, dt < 0 ? HW_FP16 : (hw_dtype)dt,
                              &s, &ns, e);
    if (rc) return rc;
    int *ratio = NULL;
    if (!keep_bad && dt == HW_FP8) {
        char why[200];
        ratio = tp_xmalloc((size_t)(ns > 0 ? ns : 1) * sizeof *ratio);
        if (est_samples_fp8_speedup(g, s, ns, ratio, why, sizeof why, e) < 0) {
            free(ratio);
            free(s);
            return e->status;
        }
    }
    for (int k = 0; k < ns; k++) {
        char why[160];
        int bad = keep_bad ? 0 : est_sample_clean(g, &s[k], why, sizeof why);
        if (ratio && ratio[k]) {
            if (ratio[k] & EST_BAD_FWD) s[k].fwd_s = -1;
            if (ratio[k] & EST_BAD_BWD) s[k].bwd_s = -1;
            bad |= ratio[k];
        }
        if (bad) {
            (*n_bad)++;
            if (!(s[k].fwd_s > 0) && !(s[k].bwd_s > 0)) continue;
        }
        s[n++] = s[k];
    }
    free(ratio);
    *out = s;
    *n_out = n;
    return TP_OK;
}

int est_gpu_samples(const hw_gpu *g, const char *op, int dtype, int keep_bad,
                    est_sample **out, int *n_out, int *n_bad, tp_err *e)
{
    *out = NULL;
    *n_out = 0;
    *n_bad = 0;
    est_sample *all = NULL;
    int n = 0;
    for (int i = 0; i < g->n_measured; i++) {
        const hw_measured *m = &g->measured[i];
        if (strcmp(m->kind, "operator_samples") != 0 || strcmp(m->op, op) != 0)
            continue;
        int dt = hw_dtype_parse(m->dtype);
        if (dtype < 0) dtype = dt;
        if (dt != dtype) continue;
        est_sample *s;
        int ns, bad;
        int rc = est_measured_samples(g, m, keep_bad, &s, &ns, &bad, e);
        if (rc) {
            free(all);
            return rc;
        }
        all = tp_xrealloc(all, (size_t)(n + ns) * sizeof *all);
        memcpy(all + n, s, (size_t)ns * sizeof *s);
        n += ns;
        *n_bad += bad;
        free(s);
    }
    *out = all;
    *n_out = n;
    return TP_OK;
}
