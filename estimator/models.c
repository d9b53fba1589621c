/*
 * models.c - the one interface the estimator times operators through: for
 * a GPU, every (operator kind, dtype) it has measured samples of is fitted
 * once (fit.c), and a query is answered by that fit, or by the fit of the
 * other 16-bit dtype (fp16 and bf16 run the same tensor-core rate and the
 * same memory traffic on every GPU in hwdb), or else by the roofline
 * (op.c).
 *
 * Samples are pooled by what the kernel is, not by where the seed sampled
 * it: the seed's five linear layers are all GEMMs, fitted together on
 * (b, m, n, k), so a GEMM of any role or shape draws on all of them.
 * Flash attention is split by causality, since a causal kernel skips
 * half its blocks and the shape dimensions do not say so.
 *
 * A GPU without samples of its own may name one of the same silicon in
 * hwdb ("operator_models_like": A100 40GB after A100 80GB, H200 after
 * H100 SXM). The fits are made on that GPU's samples against that GPU's
 * roofline, so what they hold is an efficiency by shape; a query then
 * applies it to the asking GPU's own roofline (its peaks and bandwidth).
 *
 * A GEMM fit without backward samples (XLA's tables time forward GEMMs
 * only) times the backward as what it is: the data-gradient GEMM
 * (m x n by n x k) and the weight-gradient GEMM (k x m by m x n), each
 * through the forward fit at its own shape.
 *
 * Two physical bounds hold every answer: no time below est_op_floor (the
 * dense peak of the dtype, the HBM bandwidth), and no fp8 GEMM faster
 * than half the 16-bit GEMM of the same shape on the same GPU.
 *
 * fp4 (NVFP4) GEMMs have no samples anywhere (published tables hold a
 * few shapes each, too few for a fit): their roofline at the fp4 peak,
 * held to at best the fraction of peak the fp8 GEMM of the same shape
 * reaches on the GPU (its fp8 time times the fp8 / fp4 peak ratio: the
 * same block-scaled tensor-core pipeline on Blackwell, tcgen05 MMAs
 * reading scales beside the operands, at 2-3x the rate), and, where hwdb
 * has the GPU's measured fp4 speedup over bf16 (hw_gpu.fp4_gemm_speedup:
 * cuBLAS's NVFP4 GEMMs reach 3.5-3.8x its bf16 ones on B200 and B300, not
 * the 4x and 5.8x of the peaks), to at best the 16-bit GEMM's time over
 * that speedup. The slower bound holds.
 */
#include "est_int.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fits are indexed by kind, dtype and causality (flash attention only). */
#define N_SLOTS (EST_OP_COUNT * HW_DTYPE_COUNT * 2)

struct est_models {
    uint64_t id;           /* unique per open in this process (memo keys) */
    const hw_gpu *g;       /* the GPU asked about: its roofline */
    const hw_gpu *src;     /* the GPU whose samples were fitted */
    est_fit fit[N_SLOTS];
    int has[N_SLOTS];
    int n_samples[N_SLOTS];
};

static int slot(est_op_kind k, int dtype, int causal)
{
    return ((int)k * HW_DTYPE_COUNT + dtype) * 2 + (causal ? 1 : 0);
}

/* Samples of one slot, gathered from every file of g. */
typedef struct bucket {
    est_sample *s;
    int n, cap;
} bucket;

/* ---- the fit cache (cache.c) ------------------------------------------
 *
 * An entry holds every slot's fit of one GPU's samples. Its key: the
 * GPU's hwdb files (the roofline the fits are made against) and every
 * operator_samples file it lists, in order, with the entry's op and
 * dtype; for a GPU that adds samples of its own to the fits it borrows,
 * the same of both GPUs, filed under its own name. That is everything
 * est_models_open reads: the fp8 hygiene reads only the same GPU's 16-bit
 * files (est_samples_fp8_speedup). */

/* Whether g, borrowing another GPU's fits, has operator samples of its
 * own: those replace the borrowed ones slot by slot (est_models_open). */
static int own_samples(const hw_gpu *g)
{
    if (!g->models_like) return 0;
    for (int i = 0; i < g->n_measured; i++)
        if (strcmp(g->measured[i].kind, "operator_samples") == 0) return 1;
    return 0;
}

/* The name g's entry is filed under: the GPU whose samples it holds, g's
 * own where g adds samples to those it borrows. */
static const char *entry_name(const hw_gpu *g)
{
    return own_samples(g) || !g->models_like ? g->name : g->models_like->name;
}

/* Digests one GPU's file and operator_samples files into key; the count
 * of sample files, or -1 when one cannot be read. */
static int digest_gpu(const hw_gpu *x, est_digest *key)
{
    if (!x->file || est_digest_file(key, x->file)) return -1;
    est_digest_str(key, x->base_file ? "merged over" : "alone");
    if (x->base_file && est_digest_file(key, x->base_file)) return -1;
    int files = 0;
    for (int i = 0; i < x->n_measured; i++) {
        const hw_measured *me = &x->measured[i];
        if (strcmp(me->kind, "operator_samples") != 0) continue;
        est_digest_str(key, me->op);
        est_digest_str(key, me->dtype);
        if (est_digest_file(key, me->path)) return -1;
        files++;
    }
    return files;
}

/* The key of g's entry; -1 when it has none (the cache off, a file that
 * cannot be read: the fit then says why; no samples). */
static int models_key(const hw_gpu *g, int keep_bad, est_digest *key)
{
    const hw_gpu *src = g->models_like ? g->models_like : g;
    if (est_cache_key(key, "ops", entry_name(g), keep_bad)) return -1;
    int files = digest_gpu(src, key);
    if (files < 0) return -1;
    if (own_samples(g)) {
        est_digest_str(key, "and its own");
        int more = digest_gpu(g, key);
        if (more < 0) return -1;
        files += more;
    }
    return files > 0 ? 0 : -1; /* nothing to fit, nothing to keep */
}

void est_models_payload(const est_models *m, est_wbuf *b)
{
    est_w_i32(b, N_SLOTS);
    for (int i = 0; i < N_SLOTS; i++) {
        if (!m->n_samples[i]) continue;
        est_w_i32(b, i);
        est_w_i32(b, m->n_samples[i]);
        est_w_i32(b, m->has[i]);
        if (m->has[i]) est_fit_write(&m->fit[i], b);
    }
    est_w_i32(b, -1);
}

uint64_t est_new_id(void)
{
    static _Atomic uint64_t made;
    return atomic_fetch_add(&made, 1) + 1;
}

/* A new, empty est_models of g. */
static est_models *models_new(const hw_gpu *g)
{
    est_models *m = tp_xmalloc(sizeof *m);
    memset(m, 0, sizeof *m);
    m->id = est_new_id();
    m->g = g;
    m->src = g->models_like ? g->models_like : g;
    return m;
}

est_models *est_models_from_payload(const hw_gpu *g, const unsigned char *p,
                                    size_t n, char *why, size_t cap)
{
    est_models *m = models_new(g);
    est_rbuf r = {p, n, 0, 0};
    why[0] = '\0';
    if (est_r_i32(&r) != N_SLOTS)
        snprintf(why, cap, "written for another set of operators");
    for (int last = -1; !why[0];) {
        int i = est_r_i32(&r);
        if (r.bad || i == -1) break;
        int ns = est_r_i32(&r), has = est_r_i32(&r);
        if (i <= last || i >= N_SLOTS || ns <= 0 || (has != 0 && has != 1)) {
            snprintf(why, cap, "a slot out of order or range");
            break;
        }
        last = i;
        m->n_samples[i] = ns;
        if (!has) continue;
        if (est_fit_read(&m->fit[i], &r, why, cap)) break;
        m->has[i] = 1;
        if ((int)m->fit[i].kind != i / (HW_DTYPE_COUNT * 2))
            snprintf(why, cap, "a fit in another operator's slot");
    }
    if (!why[0] && r.bad) snprintf(why, cap, "truncated payload");
    if (!why[0] && est_r_left(&r)) snprintf(why, cap, "bytes after its end");
    if (why[0]) {
        est_models_free(m);
        return NULL;
    }
    return m;
}

static void models_store(const est_models *m, const est_digest *key)
{
    est_wbuf b = {0};
    est_models_payload(m, &b);
    est_cache_put("ops", entry_name(m->g), key, &b);
    free(b.p);
}

/* g's models from the cache, or NULL when there is no good entry. */
static est_models *models_load(const hw_gpu *g, const est_digest *key)
{
    est_cache_entry ent;
    if (!est_cache_get("ops", entry_name(g), key, &ent)) return NULL;
    char why[200];
    est_models *m = est_models_from_payload(g, ent.data + ent.off, ent.n, why,
                                            sizeof why);
    if (!m)
        est_cache_reject(&ent, why);
    else
        est_cache_entry_free(&ent);
    return m;
}

/* Gathers x's operator samples into buckets by slot. */
static int gather(const hw_gpu *x, int keep_bad, bucket *b, tp_err *e)
{
    for (int i = 0; i < x->n_measured; i++) {
        const hw_measured *me = &x->measured[i];
        if (strcmp(me->kind, "operator_samples") != 0) continue;
        est_sample *s;
        int n, bad, rc;
        if ((rc = est_measured_samples(x, me, keep_bad, &s, &n, &bad, e)))
            return rc;
        for (int k = 0; k < n; k++) {
            const est_op *op = &s[k].op; /* its dtype is the file's */
            /* cuDNN attention's few published points: fp16 and bf16
             * (the same tensor-core rate) pooled, causal and not. */
            int dt = op->kind == EST_OP_ATTN_CUDNN && op->dtype == HW_FP16
                         ? HW_BF16 : (int)op->dtype;
            int causal = op->kind == EST_OP_FLASH_ATTN && op->causal;
            bucket *bk = &b[slot(op->kind, dt, causal)];
            if (bk->n == bk->cap) {
                bk->cap = bk->cap ? 2 * bk->cap : 256;
                bk->s = tp_xrealloc(bk->s, (size_t)bk->cap * sizeof *bk->s);
            }
            bk->s[bk->n++] = s[k];
        }
        free(s);
    }
    return TP_OK;
}

est_models *est_models_open(const hw_gpu *g, int keep_bad, tp_err *e)
{
    const hw_gpu *src = g->models_like ? g->models_like : g;
    est_digest key;
    int cached = models_key(g, keep_bad, &key) == 0;
    est_models *m = cached ? models_load(g, &key) : NULL;
    if (m) return m;
    m = models_new(g);
    /* b: the samples of the GPU whose fits g borrows (or g's); own: g's
     * own where it also borrows, which replace the borrowed slot by slot
     * and are fitted against g's own roofline (GB300's attention beside
     * B200's GEMMs). */
    bucket *b = tp_xmalloc(2 * N_SLOTS * sizeof *b), *own = b + N_SLOTS;
    memset(b, 0, 2 * N_SLOTS * sizeof *b);
    int rc = gather(src, keep_bad, b, e);
    if (rc == TP_OK && own_samples(g)) rc = gather(g, keep_bad, own, e);
    /* Each slot's fit is independent and deterministic, so the slots can
     * be fitted in any order on any number of threads. */
    if (rc == TP_OK) {
#pragma omp parallel for schedule(dynamic, 1)
        for (int i = 0; i < N_SLOTS; i++) {
            tp_err fe;
            const bucket *bk = own[i].n ? &own[i] : &b[i];
            const hw_gpu *on = own[i].n ? g : src;
            if (bk->n == 0) continue;
            m->n_samples[i] = bk->n;
            m->has[i] = est_fit_samples(on, bk->s, bk->n, &m->fit[i], &fe)
                        == TP_OK;
            if (!m->has[i]) est_fit_free(&m->fit[i]);
        }
    }
    for (int i = 0; i < 2 * N_SLOTS; i++) free(b[i].s);
    free(b);
    if (rc != TP_OK) {
        est_models_free(m);
        return NULL;
    }
    /* Stored only when the files still digest to the key: one edited
     * while it was being fitted must not file its fits under the old
     * content. */
    est_digest again;
    if (cached && models_key(g, keep_bad, &again) == 0 && again.a == key.a
        && again.b == key.b)
        models_store(m, &key);
    return m;
}

void est_models_free(est_models *m)
{
    if (!m) return;
    for (int i = 0; i < N_SLOTS; i++) est_fit_free(&m->fit[i]);
    free(m);
}

/* The fit that answers op, or NULL for the roofline. */
static const est_fit *fit_for(const est_models *m, const est_op *op)
{
    int c = op->kind == EST_OP_FLASH_ATTN && op->causal; /* cuDNN: pooled */
    int s = slot(op->kind, op->dtype, c);
    if (m->has[s]) return &m->fit[s];
    int sib = op->dtype == HW_FP16 ? HW_BF16 : op->dtype == HW_BF16 ? HW_FP16 : -1;
    if (sib >= 0 && m->has[slot(op->kind, sib, c)])
        return &m->fit[slot(op->kind, sib, c)];
    return NULL;
}

/* A fitted time never below what the hardware allows (est_op_floor): a
 * fit extrapolates a ratio to the roofline, and a ratio learnt where the
 * roofline's tile model is pessimistic must not carry a time below the
 * dense peak or the HBM bandwidth elsewhere. Sets the info's clamp flags. */
static void predict(const est_models *m, const est_fit *f, const est_op *op,
                    est_time *t, est_model_info *info)
{
    est_time lo;
    est_fit_predict(m->g, f, op, t);
    est_op_floor(m->g, op, &lo, NULL);
    if (t->fwd_s < lo.fwd_s) t->fwd_s = lo.fwd_s, info->floor_fwd = 1;
    if (t->bwd_s < lo.bwd_s) t->bwd_s = lo.bwd_s, info->floor_bwd = 1;
}

/* The time of op from fit f (or the roofline), before the fp8 bound. */
static void answer(const est_models *m, const est_fit *f, const est_op *op,
                   est_time *t, est_model_info *info)
{
    if (!f) {
        est_op_roofline(m->g, op, t);
        return;
    }
    info->fitted = 1;
    info->n_samples = f->n_train;
    predict(m, f, op, t, info);
    if (op->kind == EST_OP_GEMM && !f->has_bwd && f->has_fwd) {
        est_op dgrad = *op, wgrad = *op;
        est_time a, b;
        dgrad.n = op->k, dgrad.k = op->n;
        wgrad.m = op->k, wgrad.n = op->n, wgrad.k = op->m;
        predict(m, f, &dgrad, &a, info);
        predict(m, f, &wgrad, &b, info);
        t->bwd_s = a.fwd_s + b.fwd_s;
        info->bwd_composed = 1;
    }
}

int est_models_time_info(const est_models *m, const est_op *op, est_time *t,
                         est_model_info *info)
{
    est_model_info local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    const est_fit *f = fit_for(m, op);
    answer(m, f, op, t, info);
    if (op->kind == EST_OP_GEMM && op->dtype == HW_FP8) {
        /* fp8 tensor cores run at twice the 16-bit rate and an fp8 GEMM
         * also applies its scales: never faster than half the 16-bit
         * GEMM of the same shape on this GPU (the hygiene rule of
         * est_samples_fp8_speedup, applied to predictions, where a fit
         * learnt from a too-fast table would otherwise carry it). */
        est_op o16 = *op;
        o16.dtype = HW_BF16;
        est_model_info i16 = {0};
        est_time t16;
        answer(m, fit_for(m, &o16), &o16, &t16, &i16);
        if (t->fwd_s < t16.fwd_s / EST_FP8_MAX_SPEEDUP)
            t->fwd_s = t16.fwd_s / EST_FP8_MAX_SPEEDUP, info->fp8_bound_fwd = 1;
        if (t->bwd_s < t16.bwd_s / EST_FP8_MAX_SPEEDUP)
            t->bwd_s = t16.bwd_s / EST_FP8_MAX_SPEEDUP, info->fp8_bound_bwd = 1;
    }
    double p4 = m->g->peak_flops[HW_FP4], p8 = m->g->peak_flops[HW_FP8];
    if (op->kind == EST_OP_GEMM && op->dtype == HW_FP4 && !f && p4 > 0
        && p8 > 0) {
        est_op o8 = *op;
        o8.dtype = HW_FP8;
        est_time t8;
        est_models_time_info(m, &o8, &t8, NULL);
        double r = p8 / p4;
        if (t->fwd_s < t8.fwd_s * r)
            t->fwd_s = t8.fwd_s * r, info->fp4_bound_fwd = 1;
        if (t->bwd_s < t8.bwd_s * r)
            t->bwd_s = t8.bwd_s * r, info->fp4_bound_bwd = 1;
        double s4 = m->g->fp4_gemm_speedup;
        if (s4 > 0) {
            est_op o16 = *op;
            o16.dtype = HW_BF16;
            est_time t16;
            est_models_time_info(m, &o16, &t16, NULL);
            if (t->fwd_s < t16.fwd_s / s4)
                t->fwd_s = t16.fwd_s / s4, info->fp4_bound_fwd = 1;
            if (t->bwd_s < t16.bwd_s / s4)
                t->bwd_s = t16.bwd_s / s4, info->fp4_bound_bwd = 1;
        }
    }
    return info->fitted;
}

int est_models_time(const est_models *m, const est_op *op, est_time *t)
{
    return est_models_time_info(m, op, t, NULL);
}

uint64_t est_models_id(const est_models *m)
{
    return m->id;
}

int est_models_samples(const est_models *m, est_op_kind k, int dtype,
                       int causal)
{
    return m ? m->n_samples[slot(k, dtype, causal)] : 0;
}
