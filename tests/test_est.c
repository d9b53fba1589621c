/*
 * test_est.c - operator work and roofline (scaling, wave quantisation,
 * launch floor), the fitted ratio model (recovers a known ratio, stays
 * physical beyond the grid), the seed shape mapping, sample CSV errors,
 * and sample hygiene; MoE, MLA and sliding-window layers in the
 * iteration (one expert is the dense model plus its router, dispatch
 * volumes, refusals, floors, DeepSeek-V3's memory at its own layout).
 *
 * argv[1]: tests/fixtures; argv[2]: hwdb/data; argv[3]: scratch dir.
 */
#define _POSIX_C_SOURCE 200809L
#include "../estimator/est.h"
#include "../estimator/est_int.h"
#include "tp_test.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *fixtures, *builtin, *scratch;
static hw_db *db;

static const hw_gpu *test_gpu(void)
{
    tp_err e = {0};
    return hw_find_gpu(db, "testgpu", &e);
}

/* The built-in hwdb (argv[2]); a failed check and NULL when it does not
 * open. */
static hw_db *open_builtin(void)
{
    const char *dirs[] = {builtin};
    tp_err e = {0};
    hw_db *b = hw_db_open_dirs(dirs, 1, &e);
    TP_CHECK(b != NULL);
    if (!b) fprintf(stderr, "%s\n", e.msg);
    return b;
}

static est_op gemm(int64_t m, int64_t n, int64_t k)
{
    est_op op = {0};
    op.kind = EST_OP_GEMM;
    op.dtype = HW_BF16;
    op.b = 1, op.m = m, op.n = n, op.k = k;
    return op;
}

static void test_work(void)
{
    est_op op = gemm(1024, 2048, 4096);
    est_work w;
    est_op_work(&op, &w);
    TP_CHECK_REL(w.fwd_flops, 2.0 * 1024 * 2048 * 4096, 1e-15);
    TP_CHECK_REL(w.bwd_flops, 2 * w.fwd_flops, 1e-15);
    TP_CHECK_REL(w.fwd_bytes, 2.0 * (1024 * 4096 + 4096 * 2048 + 1024 * 2048),
                 1e-15);
    est_op fa = {0};
    fa.kind = EST_OP_FLASH_ATTN;
    fa.dtype = HW_FP16;
    fa.b = 2, fa.heads = fa.kv_heads = 16, fa.sq = fa.sk = 4096, fa.head_dim = 128;
    est_op_work(&fa, &w);
    double full = w.fwd_flops;
    TP_CHECK_REL(full, 4.0 * 2 * 16 * 4096 * 4096 * 128, 1e-15);
    TP_CHECK_REL(w.bwd_flops, 2.5 * full, 1e-15);
    fa.causal = 1;
    est_op_work(&fa, &w);
    TP_CHECK_REL(w.fwd_flops, full * (4097.0 / 2) / 4096, 1e-12);
}

static void test_roofline(void)
{
    const hw_gpu *g = test_gpu(); /* 100 SMs, 800 TFLOP/s bf16, 3 TB/s */
    TP_CHECK(g != NULL);
    if (!g) return;
    est_time a, b;
    const double floor_s = 3e-6; /* one kernel's launch floor */
    /* 1280 x 2560 fills the 100 SMs exactly with 128 x 256 tiles (and
     * with the smaller tiles too): compute at the peak, plus the floor. */
    est_op full = gemm(1280, 2560, 8192), more = gemm(1281, 2560, 8192);
    est_work w;
    est_op_work(&full, &w);
    est_op_roofline(g, &full, &a);
    TP_CHECK_REL(a.fwd_s, floor_s + w.fwd_flops / 800e12, 1e-12);
    /* One more row spills into another wave; the best tile (64 x 64: 840
     * tiles, 9 waves instead of 8) costs 9/8 of the compute. */
    est_op_roofline(g, &more, &b);
    TP_CHECK_REL(b.fwd_s - floor_s, 1.125 * (a.fwd_s - floor_s), 1e-12);
    /* Doubling k doubles a compute-bound GEMM's compute. */
    est_op k2 = gemm(1280, 2560, 16384);
    est_op_roofline(g, &k2, &b);
    TP_CHECK_REL(b.fwd_s - floor_s, 2 * (a.fwd_s - floor_s), 1e-12);
    /* Backward: two GEMMs, two launches, at least twice the forward. */
    TP_CHECK(a.bwd_s >= 2 * a.fwd_s * 0.999);
    /* Memory-bound: bytes over 90 % of the HBM bandwidth, plus the floor. */
    est_op gl = {0};
    gl.kind = EST_OP_GELU;
    gl.dtype = HW_FP16;
    gl.rows = 8192, gl.cols = 16384;
    est_op_roofline(g, &gl, &a);
    double mem = 2.0 * 2 * 8192 * 16384 / (0.9 * 3e12);
    TP_CHECK_REL(a.fwd_s, floor_s + mem, 1e-12);
    TP_CHECK_REL(a.bwd_s, floor_s + 1.5 * mem, 1e-12);
    /* A tiny op costs about the launch floor. */
    gl.rows = gl.cols = 8;
    est_op_roofline(g, &gl, &a);
    TP_CHECK_REL(a.fwd_s, floor_s, 1e-3);
    /* Optimizer steps have no backward. */
    est_op ad = {0};
    ad.kind = EST_OP_ADAM;
    ad.dtype = HW_FP32;
    ad.n = 1000000000;
    est_op_roofline(g, &ad, &a);
    TP_CHECK(a.fwd_s > 0.01 && a.bwd_s == 0);
}

/* Synthetic samples: time = roofline x exp(0.5 - 0.2 ln(m/1024)), a ratio
 * the model can represent exactly. */
static int synth(const hw_gpu *g, est_sample *s, int max_m)
{
    int n = 0;
    for (int m = 512; m <= max_m; m *= 2)
        for (int nn = 512; nn <= 8192; nn *= 2)
            for (int k = 512; k <= 8192; k *= 2) {
                est_sample *x = &s[n++];
                memset(x, 0, sizeof *x);
                x->op = gemm(m, nn, k);
                est_time t;
                est_op_roofline(g, &x->op, &t);
                double r = exp(0.5 - 0.2 * log(m / 1024.0));
                x->fwd_s = t.fwd_s * r;
                x->bwd_s = t.bwd_s * r * 1.1;
            }
    return n;
}

static void test_fit(void)
{
    const hw_gpu *g = test_gpu();
    if (!g) return;
    est_sample s[512];
    int n = synth(g, s, 8192);
    est_fit fit;
    tp_err e = {0};
    TP_CHECK_INT(est_fit_samples(g, s, n, &fit, &e), TP_OK);
    TP_CHECK(fit.has_fwd && fit.has_bwd);
    double worst = 0;
    for (int i = 0; i < n; i++) {
        est_time t;
        est_fit_predict(g, &fit, &s[i].op, &t);
        double err = fabs(t.fwd_s - s[i].fwd_s) / s[i].fwd_s;
        if (err > worst) worst = err;
    }
    TP_CHECK(worst < 1e-3);
    /* Beyond the grid the smooth ratio stays at its edge and the local
     * correction (near 0 here: the smooth model is exact) fades: time
     * scales with the roofline. */
    est_op a = gemm(4096, 4096, 16384), b = gemm(4096, 4096, 32768);
    est_time ta, tb, ra, rb;
    est_fit_predict(g, &fit, &a, &ta);
    est_fit_predict(g, &fit, &b, &tb);
    est_op_roofline(g, &a, &ra);
    est_op_roofline(g, &b, &rb);
    TP_CHECK_REL(tb.fwd_s / ta.fwd_s, rb.fwd_s / ra.fwd_s, 1e-4);
    est_fit_free(&fit);
    /* Too few samples is an error, not a wild fit. */
    TP_CHECK_INT(est_fit_samples(g, s, 5, &fit, &e), TP_EDATA);
    TP_CHECK_CONTAINS(e.msg, "too few");
    est_fit_free(&fit);
    est_fit_free(NULL);
}

static void test_seed_shapes(void)
{
    double cols[EST_NCOLS];
    for (int c = 0; c < EST_NCOLS; c++) cols[c] = -1;
    cols[EST_COL_MP] = 2, cols[EST_COL_B] = 4, cols[EST_COL_L] = 2048,
    cols[EST_COL_DIM] = 6144, cols[EST_COL_H] = 48;
    est_op op;
    TP_CHECK_INT(est_sample_op("linear1", HW_FP16, cols, &op), 0);
    TP_CHECK_INT(op.kind, EST_OP_GEMM);
    TP_CHECK_INT(op.m, 8192);
    TP_CHECK_INT(op.k, 6144);
    TP_CHECK_INT(op.n, 3 * 6144 / 2);
    TP_CHECK_INT(est_sample_op("linear_final", HW_FP16, cols, &op), 0);
    TP_CHECK_INT(op.n, 50432 / 2); /* 50257 padded to a multiple of 128 x 2 */
    TP_CHECK_INT(est_sample_op("flash_atten", HW_FP16, cols, &op), 0);
    TP_CHECK_INT(op.heads, 24);
    TP_CHECK_INT(op.head_dim, 128);
    TP_CHECK_INT(op.sq, 2048);
    TP_CHECK_INT(op.causal, 0);
    TP_CHECK_INT(est_sample_op("gelu", HW_FP16, cols, &op), 0);
    TP_CHECK_INT(op.cols, 4 * 6144 / 2);
    TP_CHECK_INT(est_sample_op("nope", HW_FP16, cols, &op), -1);
}

static void test_csv_errors(void)
{
    static const struct {
        const char *name, *text, *want;
    } cases[] = {
        {"empty.csv", "", "empty file"},
        {"badcol.csv", "mp,b,x,F_dur(us)\n1,2,3,4\n", "unknown column 'x'"},
        {"fields.csv", "mp,b,l,dim,F_dur(us)\n1,2,1024\n", ":2: 3 fields"},
        {"nan.csv", "mp,b,l,dim,F_dur(us)\n1,2,1024,nan,5\n", ":2: column 4"},
        {"neg.csv", "mp,b,l,dim,F_dur(us)\n1,-2,1024,4096,5\n", "b = -2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[1024];
        TP_CHECK(tp_test_write(scratch, cases[i].name, cases[i].text, path, sizeof path) == 0);
        est_sample *s = NULL;
        int n = 0;
        tp_err e = {0};
        TP_CHECK_INT(est_read_samples(path, "linear1", HW_FP16, &s, &n, &e),
                     TP_EDATA);
        TP_CHECK_CONTAINS(e.msg, cases[i].name);
        TP_CHECK_CONTAINS(e.msg, cases[i].want);
        TP_CHECK(s == NULL);
    }
    est_sample *s = NULL;
    int n = 0;
    tp_err e = {0};
    TP_CHECK_INT(est_read_samples("/nonexistent.csv", "linear1", HW_FP16, &s,
                                  &n, &e),
                 TP_ENOINPUT);
    char path[1024];
    tp_test_write(scratch, "ok.csv", "mp,b,l,dim,F_dur(us),B_dur(us)\r\n1.0,2.0,1024.0,4096.0,100.5,201\r\n\n",
               path, sizeof path);
    TP_CHECK_INT(est_read_samples(path, "linear3", HW_FP16, &s, &n, &e), TP_OK);
    TP_CHECK_INT(n, 1);
    if (n == 1) {
        TP_CHECK_REL(s[0].fwd_s, 100.5e-6, 1e-12);
        TP_CHECK_REL(s[0].bwd_s, 201e-6, 1e-12);
        TP_CHECK_INT(s[0].op.n, 4 * 4096);
        TP_CHECK(s[0].cols[EST_COL_H] < 0);
    }
    free(s);
}

static void test_hygiene(void)
{
    const hw_gpu *g = test_gpu();
    if (!g) return;
    char why[200];
    est_sample s;
    memset(&s, 0, sizeof s);
    s.op = gemm(8192, 8192, 8192);
    est_work w;
    est_op_work(&s.op, &w);
    s.fwd_s = w.fwd_flops / 900e12; /* above the 800 TFLOP/s peak */
    s.bwd_s = -1;
    TP_CHECK_INT(est_sample_implausible(g, &s, why, sizeof why), EST_BAD_FWD);
    TP_CHECK_CONTAINS(why, "above the 800 TFLOP/s");
    s.fwd_s = w.fwd_flops / 600e12;
    TP_CHECK_INT(est_sample_implausible(g, &s, why, sizeof why), 0);
    est_sample fa;
    memset(&fa, 0, sizeof fa);
    fa.op.kind = EST_OP_FLASH_ATTN;
    fa.op.dtype = HW_FP16;
    fa.op.b = 1, fa.op.heads = fa.op.kv_heads = 8, fa.op.sq = fa.op.sk = 1024,
    fa.op.head_dim = 64;
    fa.fwd_s = 100e-6, fa.bwd_s = 90e-6;
    /* Only the backward is blamed: the forward stays usable. */
    TP_CHECK_INT(est_sample_clean(g, &fa, why, sizeof why), EST_BAD_BWD);
    TP_CHECK_CONTAINS(why, "backward");
    TP_CHECK(fa.fwd_s == 100e-6 && fa.bwd_s < 0);
    fa.bwd_s = 250e-6;
    TP_CHECK_INT(est_sample_implausible(g, &fa, why, sizeof why), 0);
}

/* The shipped samples load through hwdb, and fit. */
static void test_builtin_samples(void)
{
    tp_err e = {0};
    hw_db *b = open_builtin();
    if (!b) return;
    static const char *gpus[] = {"a100-80gb", "gh200", "h100-sxm"};
    for (int i = 0; i < 3; i++) {
        const hw_gpu *g = hw_find_gpu(b, gpus[i], &e);
        est_sample *s = NULL;
        int n = 0, bad = 0;
        TP_CHECK(g != NULL);
        if (!g) continue;
        TP_CHECK_INT(est_gpu_samples(g, "linear1", HW_FP16, 0, &s, &n, &bad, &e), TP_OK);
        TP_CHECK(n >= 100);
        est_fit fit;
        TP_CHECK_INT(est_fit_samples(g, s, n, &fit, &e), TP_OK);
        est_fit_free(&fit);
        free(s);
    }
    hw_db_free(b);
}

/* Nothing beats its roofline: for every GPU of the built-in hwdb (those
 * that borrow another's fits too, on their own peaks) and every operator
 * fit it has, shapes drawn over a range far wider than the samples give
 * times no faster than est_op_floor (the dense peak of the dtype, the HBM
 * bandwidth), and fp8 GEMMs no faster than half the 16-bit GEMM of their
 * shape. */
static int64_t log_draw(pcg32 *r, double lo, double hi)
{
    return (int64_t)llround(exp(log(lo) + pcg32_double(r) * (log(hi) - log(lo))));
}

static void test_floor_sweep(void)
{
    tp_err e = {0};
    hw_db *b = open_builtin();
    if (!b) return;
    static const int dtypes[] = {HW_FP16, HW_BF16, HW_FP8, HW_FP32};
    static const int64_t head_dims[] = {64, 80, 96, 128, 192, 256};
    int slots = 0, shapes = 0, below = 0, fp8_fast = 0;
    for (int gi = 0; gi < hw_gpu_count(b); gi++) {
        const hw_gpu *g = hw_gpu_at(b, gi);
        est_models *m = est_models_open(g, 0, &e);
        TP_CHECK(m != NULL);
        if (!m) continue;
        for (int k = 0; k < EST_OP_COUNT; k++)
            for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++)
                for (int causal = 0; causal < 2; causal++) {
                    if (causal && k != EST_OP_FLASH_ATTN) continue;
                    if (est_models_samples(m, (est_op_kind)k, dtypes[d], causal)
                        == 0)
                        continue;
                    slots++;
                    pcg32 r;
                    pcg32_seed(&r, 42, (uint64_t)(gi * 1000 + k * 10 + (int)d * 2
                                                  + causal));
                    for (int i = 0; i < 400; i++) {
                        est_op op = {0};
                        op.kind = (est_op_kind)k;
                        op.dtype = (hw_dtype)dtypes[d];
                        op.b = log_draw(&r, 1, 8);
                        op.m = log_draw(&r, 8, 131072);
                        op.n = log_draw(&r, 8, 131072);
                        op.k = log_draw(&r, 8, 131072);
                        op.heads = log_draw(&r, 1, 128);
                        op.kv_heads = op.heads;
                        op.head_dim = head_dims[pcg32_bounded(&r, 6)];
                        op.sq = op.sk = log_draw(&r, 64, 131072);
                        op.causal = causal;
                        op.rows = log_draw(&r, 1, 1 << 22);
                        op.cols = log_draw(&r, 16, 262144);
                        op.vocab_parallel = (int)pcg32_bounded(&r, 2);
                        if (k == EST_OP_EMBEDDING) op.n = log_draw(&r, 1000, 262144);
                        if (k == EST_OP_ADAM) op.n = log_draw(&r, 1000, 2e10);
                        est_time t, lo;
                        est_models_time(m, &op, &t);
                        est_op_floor(g, &op, &lo, NULL);
                        shapes++;
                        if (t.fwd_s < lo.fwd_s * (1 - 1e-12)
                            || t.bwd_s < lo.bwd_s * (1 - 1e-12)) {
                            if (below++ < 5)
                                fprintf(stderr, "%s %s %s: %g/%g s below the "
                                        "floor %g/%g s\n", g->name,
                                        est_op_names[k], hw_dtype_names[dtypes[d]],
                                        t.fwd_s, t.bwd_s, lo.fwd_s, lo.bwd_s);
                        }
                        if (k == EST_OP_GEMM && dtypes[d] == HW_FP8) {
                            est_op o16 = op;
                            o16.dtype = HW_BF16;
                            est_time t16;
                            est_models_time(m, &o16, &t16);
                            fp8_fast += t.fwd_s < t16.fwd_s / 2 * (1 - 1e-12)
                                        || t.bwd_s < t16.bwd_s / 2 * (1 - 1e-12);
                        }
                    }
                }
        est_models_free(m);
    }
    TP_CHECK(slots >= 40); /* every GPU with samples, borrowers included */
    TP_CHECK_INT(below, 0);
    TP_CHECK_INT(fp8_fast, 0);
    printf("floor sweep: %d fits, %d shapes\n", slots, shapes);
    hw_db_free(b);
}

/* The one interface: a GPU's samples pooled per kernel and fitted once;
 * fitted where there are samples (the other 16-bit dtype standing in),
 * roofline elsewhere; the same bits at any thread count. */
static void test_models(void)
{
    tp_err e = {0};
    hw_db *b = open_builtin();
    if (!b) return;
    const hw_gpu *g = hw_find_gpu(b, "a100-80gb", &e);
    TP_CHECK(g != NULL);
    if (!g) {
        hw_db_free(b);
        return;
    }
    est_sample *s = NULL;
    int n = 0, bad = 0;
    TP_CHECK_INT(est_gpu_samples(g, "linear3", HW_FP16, 0, &s, &n, &bad, &e), TP_OK);
    omp_set_num_threads(1);
    est_models *m1 = est_models_open(g, 0, &e);
    omp_set_num_threads(2);
    est_models *m2 = est_models_open(g, 0, &e);
    TP_CHECK(m1 != NULL && m2 != NULL);
    if (m1 && m2 && n > 0) {
        /* A measured linear3 shape, asked as a bf16 GEMM: the fp16 GEMM
         * fit (all five linear layers pooled) answers, close to the
         * measurement. */
        est_op op = s[n / 2].op;
        op.dtype = HW_BF16;
        est_time t1, t2, r;
        TP_CHECK_INT(est_models_time(m1, &op, &t1), 1);
        TP_CHECK(fabs(t1.fwd_s / s[n / 2].fwd_s - 1) < 0.15);
        TP_CHECK(est_models_samples(m1, EST_OP_GEMM, HW_FP16, 0) > n);
        est_models_time(m2, &op, &t2);
        TP_CHECK(memcmp(&t1, &t2, sizeof t1) == 0);
        /* No SwiGLU samples: the roofline. */
        est_op sw = {0};
        sw.kind = EST_OP_SWIGLU;
        sw.dtype = HW_BF16;
        sw.rows = 8192, sw.cols = 11008;
        TP_CHECK_INT(est_models_time(m1, &sw, &t1), 0);
        est_op_roofline(g, &sw, &r);
        TP_CHECK(t1.fwd_s == r.fwd_s && t1.bwd_s == r.bwd_s);
    }
    /* The lattice fills in as queries need it: many threads at once give
     * the bits one thread gives. */
    if (m1 && m2 && n > 0) {
        est_models *m3 = est_models_open(g, 0, &e);
        double *seq = calloc((size_t)n, sizeof *seq),
               *par = calloc((size_t)n, sizeof *par);
        for (int i = 0; i < n; i++) {
            est_time t;
            est_models_time(m1, &s[i].op, &t);
            seq[i] = t.fwd_s + t.bwd_s;
        }
        omp_set_num_threads(4);
#pragma omp parallel for schedule(dynamic, 1)
        for (int i = 0; i < n; i++) {
            est_time t;
            est_models_time(m3, &s[n - 1 - i].op, &t);
            par[n - 1 - i] = t.fwd_s + t.bwd_s;
        }
        int same = 1;
        for (int i = 0; i < n; i++) same &= memcmp(&seq[i], &par[i], sizeof seq[i]) == 0;
        TP_CHECK(same);
        free(seq);
        free(par);
        est_models_free(m3);
    }
    est_models_free(m1);
    est_models_free(m2);
    free(s);
    /* A GPU without samples: every op on the roofline. */
    est_models *m0 = est_models_open(test_gpu(), 0, &e);
    TP_CHECK(m0 != NULL);
    if (m0) {
        est_op op = gemm(4096, 4096, 4096);
        est_time t;
        TP_CHECK_INT(est_models_time(m0, &op, &t), 0);
    }
    est_models_free(m0);
    hw_db_free(b);
}

/* A GPU that borrows the fits of one of the same silicon
 * (operator_models_like) gets that GPU's efficiency on its own roofline;
 * a GEMM fit with forward samples only times the backward as the data-
 * and weight-gradient GEMMs through the forward fit. */
static void test_models_borrowed(void)
{
    tp_err e = {0};
    hw_db *b = open_builtin();
    if (!b) return;
    const hw_gpu *a80 = hw_find_gpu(b, "a100-80gb", &e);
    const hw_gpu *a40 = hw_find_gpu(b, "a100-40gb", &e);
    const hw_gpu *h = hw_find_gpu(b, "h100-sxm", &e);
    TP_CHECK(a80 && a40 && h);
    if (!a80 || !a40 || !h) {
        hw_db_free(b);
        return;
    }
    TP_CHECK(a40->models_like == a80);
    TP_CHECK(a80->models_like == NULL);
    est_models *m80 = est_models_open(a80, 0, &e);
    est_models *m40 = est_models_open(a40, 0, &e);
    est_models *mh = est_models_open(h, 0, &e);
    TP_CHECK(m80 && m40 && mh);
    if (m80 && m40 && mh) {
        est_time t80, t40;
        /* Compute-bound: the same peak, the same time. */
        est_op big = gemm(16384, 12288, 4096);
        big.dtype = HW_FP16;
        TP_CHECK_INT(est_models_time(m40, &big, &t40), 1);
        est_models_time(m80, &big, &t80);
        TP_CHECK_REL(t40.fwd_s, t80.fwd_s, 0.02);
        /* Memory-bound: slower by the bandwidth ratio. */
        est_op ln = {0};
        ln.kind = EST_OP_LAYERNORM;
        ln.dtype = HW_FP16;
        ln.rows = 16384, ln.cols = 8192;
        TP_CHECK_INT(est_models_time(m40, &ln, &t40), 1);
        est_models_time(m80, &ln, &t80);
        double bw = a80->mem_bw_bytes_per_s / a40->mem_bw_bytes_per_s;
        TP_CHECK(t40.fwd_s / t80.fwd_s > 0.9 * bw);
        TP_CHECK(t40.fwd_s / t80.fwd_s < 1.1 * bw);
        /* H100: XLA's forward-only GEMM table. */
        est_op f = gemm(8192, 14336, 4096), dg = gemm(8192, 4096, 14336),
               wg = gemm(4096, 14336, 8192);
        est_time tf, td, tw, roof;
        TP_CHECK_INT(est_models_time(mh, &f, &tf), 1);
        est_models_time(mh, &dg, &td);
        est_models_time(mh, &wg, &tw);
        TP_CHECK_REL(tf.bwd_s, td.fwd_s + tw.fwd_s, 1e-12);
        est_op_roofline(h, &f, &roof);
        TP_CHECK(tf.bwd_s > roof.bwd_s);
    }
    est_models_free(m80);
    est_models_free(m40);
    est_models_free(mh);
    hw_db_free(b);
}

/* NVFP4 GEMMs (no fit: too few published shapes): never faster than the
 * 16-bit GEMM of the shape over the GPU's measured fp4 speedup (hwdb
 * fp4_gemm_speedup: 3.78 on B200, cuBLAS via pytorch/ao#2427;
 * 3.48 on B300, TransformerEngine's GEMM profiling guide), nor than the
 * fp8 GEMM at the fp8 / fp4 peak ratio, nor than the fp4 roofline. At
 * 8192^3 on B200 the measured speedup is the tighter bound: 5.7 PFLOP/s
 * against the 6.0 the fp8 bound alone gave (cuBLAS measured 5.4). */
static void test_fp4_gemm(void)
{
    tp_err e = {0};
    hw_db *b = open_builtin();
    if (!b) return;
    const char *names[] = {"b200", "b300"};
    for (int i = 0; i < 2; i++) {
        const hw_gpu *g = hw_find_gpu(b, names[i], &e);
        TP_CHECK(g != NULL);
        if (!g) continue;
        hw_gpu bare = *g; /* the same GPU without the measured speedup */
        bare.fp4_gemm_speedup = 0;
        est_models *m = est_models_open(g, 0, &e), *m0 = est_models_open(&bare, 0, &e);
        TP_CHECK(m && m0);
        if (m && m0) {
            est_op o4 = gemm(8192, 8192, 8192), o8 = o4, o16 = o4;
            o4.dtype = HW_FP4, o8.dtype = HW_FP8, o16.dtype = HW_BF16;
            est_time t4, t8, t16, t40, roof;
            est_model_info info;
            TP_CHECK_INT(est_models_time_info(m, &o4, &t4, &info), 0);
            TP_CHECK(info.fp4_bound_fwd && info.fp4_bound_bwd);
            est_models_time(m, &o8, &t8);
            est_models_time(m, &o16, &t16);
            est_models_time(m0, &o4, &t40);
            est_op_roofline(g, &o4, &roof);
            double r = g->peak_flops[HW_FP8] / g->peak_flops[HW_FP4];
            TP_CHECK_REL(t4.fwd_s, t16.fwd_s / g->fp4_gemm_speedup, 1e-12);
            TP_CHECK_REL(t4.bwd_s, t16.bwd_s / g->fp4_gemm_speedup, 1e-12);
            TP_CHECK(t4.fwd_s >= t8.fwd_s * r && t4.fwd_s >= roof.fwd_s);
            /* Without the figure: the fp8 bound alone, and faster. */
            TP_CHECK_REL(t40.fwd_s, t8.fwd_s * r, 1e-12);
            TP_CHECK(t40.fwd_s < t4.fwd_s);
            double tflops = 2.0 * 8192 * 8192 * 8192 / t4.fwd_s / 1e12;
            if (i == 0) TP_CHECK(tflops > 5300 && tflops < 6000);
            else TP_CHECK(tflops > 4800 && tflops < 5600); /* TE: 5093 */
        }
        est_models_free(m);
        est_models_free(m0);
    }
    hw_db_free(b);
}

/* The in-training kernel efficiency: the layout's stack's constant times
 * the GPU's factor (hwdb, else the GPU whose fits it borrows, else 1);
 * est_ctx.kernel_eff overrides both. */
static void test_kernel_eff(void)
{
    tp_err e = {0};
    hw_db *b = open_builtin();
    if (!b) return;
    const hw_gpu *a80 = hw_find_gpu(b, "a100-80gb", &e);
    const hw_gpu *a40 = hw_find_gpu(b, "a100-40gb", &e);
    const hw_gpu *h = hw_find_gpu(b, "h100-sxm", &e);
    const hw_gpu *h200 = hw_find_gpu(b, "h200", &e);
    TP_CHECK(a80 && a40 && h && h200);
    if (a80 && a40 && h && h200) {
        TP_CHECK(est_gpu_kernel_eff_factor(a80) == 1);
        TP_CHECK(est_gpu_kernel_eff_factor(a40) == 1);
        double fh = est_gpu_kernel_eff_factor(h);
        TP_CHECK(fh > 0.5 && fh < 1.5);
        if (!(h200->kernel_eff_factor > 0))
            TP_CHECK(est_gpu_kernel_eff_factor(h200) == fh);
        /* a GPU with samples of its own but no fitted run (GH200) takes
         * the nearest fitted generation's factor, the H100's, in every
         * estimate, not the A100's 1; another vendor's GPU with none
         * fitted keeps 1 */
        const hw_gpu *gh = hw_find_gpu(b, "gh200", &e);
        const hw_gpu *mi = hw_find_gpu(b, "mi300x", &e);
        TP_CHECK(gh && mi);
        if (gh && !(gh->kernel_eff_factor > 0)) {
            TP_CHECK(gh->kernel_eff_from == h);
            TP_CHECK(est_gpu_kernel_eff_factor(gh) == fh);
        }
        if (mi && !(mi->kernel_eff_factor > 0))
            TP_CHECK(mi->kernel_eff_from == NULL
                     && est_gpu_kernel_eff_factor(mi) == 1);
        for (int s = 0; s < SPACE_STACK_COUNT; s++) {
            double x = est_stack_kernel_eff((space_stack)s)->eff;
            TP_CHECK(x > 0.2 && x <= 1);
        }
        space_layout l;
        memset(&l, 0, sizeof l);
        space_framework_software(SPACE_FW_TORCHTITAN, &l);
        l.eager = 1;
        est_ctx c = {.gpu = h};
        double want = est_stack_kernel_eff(SPACE_STACK_PYTORCH_EAGER)->eff * fh;
        TP_CHECK_REL(est_kernel_eff(&c, &l), want, 1e-12);
        c.gpu = a80;
        space_framework_software(SPACE_FW_MEGATRON_2021, &l);
        TP_CHECK_REL(est_kernel_eff(&c, &l),
                     est_stack_kernel_eff(SPACE_STACK_MEGATRON_2021)->eff,
                     1e-12);
        c.kernel_eff = 0.5;
        TP_CHECK(est_kernel_eff(&c, &l) == 0.5);
    }
    hw_db_free(b);
}

/* The prior of a family no run covers: the nearest generation of its
 * vendor not newer than its own (same generation first; ties by name),
 * else 1. Real hwdb GPUs, made-up factors. */
static void test_kernel_eff_prior(void)
{
    tp_err e = {0};
    hw_db *b = open_builtin();
    if (!b) return;
    const char *names[] = {"a100-80gb", "h100-sxm", "b200", "gh200",
                           "h800", "mi300x", "mi355x"};
    const hw_gpu *g[7];
    int ok = 1;
    for (int i = 0; i < 7; i++) ok &= (g[i] = hw_find_gpu(b, names[i], &e)) != NULL;
    TP_CHECK(ok);
    if (ok) {
        const hw_gpu *a100 = g[0], *h100 = g[1], *b200 = g[2], *gh200 = g[3],
                     *h800 = g[4], *mi300x = g[5], *mi355x = g[6];
        TP_CHECK(hw_gpu_generation(a100) < hw_gpu_generation(h100));
        TP_CHECK(hw_gpu_generation(h100) < hw_gpu_generation(b200));
        TP_CHECK(hw_gpu_generation(gh200) == hw_gpu_generation(h100));
        const hw_gpu *fit3[] = {a100, h100, b200};
        double fac3[] = {1, 0.8, 0.9};
        /* a newer family takes its predecessor's, a same-generation one
         * its sibling's, an older one nothing newer: the reference's 1 */
        TP_CHECK(est_kernel_eff_prior(b200, fit3, fac3, 2) == 0.8);
        TP_CHECK(est_kernel_eff_prior(gh200, fit3, fac3, 3) == 0.8);
        const hw_gpu *fit_ab[] = {a100, b200};
        double fac_ab[] = {1, 0.9};
        TP_CHECK(est_kernel_eff_prior(h100, fit_ab, fac_ab, 2) == 1);
        /* two of one generation: the first by name (h100-sxm < h800) */
        const hw_gpu *fit_hh[] = {h800, h100};
        double fac_hh[] = {0.7, 0.8};
        TP_CHECK(est_kernel_eff_prior(b200, fit_hh, fac_hh, 2) == 0.8);
        /* another vendor's factors are not evidence; none left: 1 */
        TP_CHECK(est_kernel_eff_prior(mi300x, fit3, fac3, 3) == 1);
        const hw_gpu *fit_m[] = {mi300x, h100};
        double fac_m[] = {0.6, 0.8};
        TP_CHECK(est_kernel_eff_prior(mi355x, fit_m, fac_m, 2) == 0.6);
        TP_CHECK(est_kernel_eff_prior(b200, fit_m, fac_m, 0) == 1);
        /* an arch the table does not know */
        hw_gpu odd = *b200;
        snprintf(odd.arch, sizeof odd.arch, "%s", "rubin");
        TP_CHECK(hw_gpu_generation(&odd) == -1);
        TP_CHECK(est_kernel_eff_prior(&odd, fit3, fac3, 3) == 1);
    }
    hw_db_free(b);
}

/* Memory: Megatron's bytes per parameter exactly; the activation formula
 * for GPT; the options move memory the right way. */
static void test_memory(void)
{
    tp_err e = {0};
    const space_model *gpt = space_preset_find("gpt3-175b", &e);
    TP_CHECK(gpt != NULL);
    if (!gpt) return;
    space_layout l = {0};
    l.tp = 8, l.cp = 1, l.pp = 8, l.dp = 4, l.vpp = 1;
    l.mbs = 1, l.gbs = 64, l.seq = 2048;
    l.recompute = SPACE_RECOMPUTE_NONE, l.zero = SPACE_ZERO_NONE;
    l.dtype = HW_BF16, l.flash = 1;
    est_memory a, b;
    est_memory_of(gpt, &l, &a);
    TP_CHECK_REL(a.weights + a.grads + a.optimizer, 18 * a.params, 1e-9);
    l.zero = SPACE_ZERO_1;
    est_memory_of(gpt, &l, &b);
    TP_CHECK_REL(b.weights + b.grads + b.optimizer,
                  (6 + 12.0 / 4) * b.params, 1e-9);
    TP_CHECK(b.total < a.total);
    /* DeepSpeed's fp16 ZeRO-1: 16-bit gradients, 2 + 2 + 12 / DP, and
     * in the optimizer step an fp32 copy of the shard, 4 / DP. */
    space_layout ds = l;
    ds.grad_bytes = 2;
    est_memory_of(gpt, &ds, &b);
    TP_CHECK_REL(b.weights + b.grads + b.optimizer,
                 (4 + 12.0 / 4) * b.params, 1e-9);
    TP_CHECK_REL(b.step_transient, 4.0 / 4 * b.params, 1e-9);
    /* ZeRO-3 gathering module by module holds less than two layers
     * (DeepSpeed's stage3_max_live_parameters; Megatron-Core's ZeRO-3 is
     * Megatron-FSDP, with rules of its own: test_mem.c). */
    space_layout z3 = l;
    z3.framework = SPACE_FW_DEEPSPEED_2021;
    z3.zero = SPACE_ZERO_3, z3.tp = 1, z3.dp = 32; /* 1.8e9 per layer */
    est_memory_of(gpt, &z3, &a);
    z3.zero3_live = 1e9;
    est_memory_of(gpt, &z3, &b);
    TP_CHECK(b.weights < a.weights);
    /* GPT without SP or flash, one stage: h (8 + 24/t) + 2as/t per token
     * per layer, plus the loss's fp32 softmax and 16-bit logits. */
    space_layout g = l;
    g.pp = 1, g.flash = 0, g.zero = SPACE_ZERO_NONE;
    est_memory_of(gpt, &g, &a);
    double h = (double)gpt->hidden, t = 8, s = 2048, as = (double)gpt->heads * s;
    double vp = (double)space_vocab_padded(gpt->vocab, 8);
    double want = s * ((double)gpt->num_layers * (h * (8 + 24 / t) + 2 * as / t)
                       + 6 * vp / t);
    TP_CHECK_REL(a.activations, want, 1e-9);
    /* With dropout: the paper's own h (10 + 24/t) + 5as/t. */
    space_model drop = *gpt;
    drop.attn_dropout = drop.hidden_dropout = 0.1;
    est_memory_of(&drop, &g, &b);
    want = s * ((double)gpt->num_layers * (h * (10 + 24 / t) + 5 * as / t)
                + 6 * vp / t);
    TP_CHECK_REL(b.activations, want, 1e-9);
    /* Selective recompute drops the scores; SP shards the rest; full
     * recompute keeps only layer inputs. */
    g.recompute = SPACE_RECOMPUTE_SELECTIVE;
    est_memory_of(gpt, &g, &b);
    TP_CHECK(b.activations < a.activations);
    g.sp = 1;
    est_memory c;
    est_memory_of(gpt, &g, &c);
    TP_CHECK(c.activations < b.activations);
    g.recompute = SPACE_RECOMPUTE_FULL;
    est_memory_of(gpt, &g, &a);
    TP_CHECK(a.activations < c.activations / 4);
    /* Deeper pipelines keep more micro-batches in flight on stage 0;
     * interleaving keeps more still. */
    space_layout p = l;
    p.zero = SPACE_ZERO_1;
    est_memory_of(gpt, &p, &a);
    TP_CHECK_INT((int)a.stage, 0);
    p.vpp = 3 - 1; /* 96 layers / (8 x 2) */
    est_memory_of(gpt, &p, &b);
    TP_CHECK(b.activations > a.activations);
}


/* ---- MoE, MLA, sliding windows (iter.c, moe.c) --------------------------- */

/* A Llama-like dense model small enough to estimate fast, and its MoE
 * twin: every layer's FFN replaced by `experts` routed experts of the
 * same size, top_k of them per token. */
static space_model small_dense(void)
{
    space_model m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "small");
    m.num_layers = 8, m.hidden = 2048, m.heads = 16, m.kv_heads = 8;
    m.head_dim = 128, m.ffn_hidden = 5632, m.vocab = 32000;
    m.max_position = 1 << 16;
    m.act = SPACE_ACT_SWIGLU, m.norm = SPACE_NORM_RMSNORM;
    m.pos = SPACE_POS_ROPE;
    return m;
}

static space_model small_moe(int64_t experts, int64_t top_k)
{
    space_model m = small_dense();
    m.num_experts = experts, m.top_k = top_k;
    m.expert_ffn_hidden = m.ffn_hidden, m.moe_layer_freq = 1;
    return m;
}

/* DeepSeek-V3 as its config.json gives it (huggingface.co/deepseek-ai/
 * DeepSeek-V3, config.json): 61 layers, the first 3 dense, 256 routed
 * experts of 2048 and one shared, top 8, MLA with q_lora 1536, kv_lora
 * 512, heads of 128 + 64 (rope) and v 128, one MTP module. */
static space_model deepseek_v3(void)
{
    space_model m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "deepseek-v3-like");
    m.num_layers = 61, m.hidden = 7168, m.heads = 128, m.kv_heads = 128;
    m.ffn_hidden = 18432, m.vocab = 129280, m.max_position = 163840;
    m.act = SPACE_ACT_SWIGLU, m.norm = SPACE_NORM_RMSNORM;
    m.pos = SPACE_POS_ROPE;
    m.num_experts = 256, m.top_k = 8, m.expert_ffn_hidden = 2048;
    m.shared_experts = 1, m.shared_ffn_hidden = 2048;
    m.first_dense_layers = 3, m.moe_layer_freq = 1;
    m.router_sigmoid = 1, m.router_groups = 8, m.router_topk_groups = 4;
    m.q_lora_rank = 1536, m.kv_lora_rank = 512;
    m.qk_nope_head_dim = 128, m.qk_rope_head_dim = 64, m.v_head_dim = 128;
    m.mtp_layers = 1;
    return m;
}

static space_layout moe_layout(int64_t tp, int64_t pp, int64_t dp, int64_t ep)
{
    space_layout l;
    memset(&l, 0, sizeof l);
    space_framework_software(SPACE_FW_MEGATRON_CORE, &l);
    l.tp = tp, l.pp = pp, l.cp = 1, l.dp = dp, l.vpp = 1;
    l.mbs = 1, l.gbs = 8 * dp, l.seq = 4096, l.sp = tp > 1;
    l.recompute = SPACE_RECOMPUTE_NONE, l.zero = SPACE_ZERO_1;
    l.dtype = HW_BF16, l.ep = ep, l.etp = 1;
    return l;
}

typedef struct moe_env {
    hw_db *db;
    const hw_system *y;
    est_models *ops;
    est_comm *comm;
    est_ctx c;
} moe_env;

static int moe_env_open(moe_env *v, const char *system)
{
    memset(v, 0, sizeof *v);
    tp_err e = {0};
    v->db = open_builtin();
    if (!v->db) return -1;
    v->y = hw_find_system(v->db, system, &e);
    TP_CHECK(v->y != NULL);
    if (!v->y) return -1;
    v->ops = est_models_open(v->y->gpu, 0, &e);
    v->comm = est_comm_open(v->y, &e);
    TP_CHECK(v->ops != NULL && v->comm != NULL);
    if (!v->ops || !v->comm) return -1;
    v->c = (est_ctx){v->y, v->y->gpu, v->ops, v->comm, 0, 0, NULL};
    return 0;
}

static void moe_env_close(moe_env *v)
{
    est_models_free(v->ops);
    est_comm_free(v->comm);
    hw_db_free(v->db);
}

/* The router's bytes as op.c counts them from Megatron-Core's PyTorch
 * path and Transformer Engine's fused kernels (per token x expert, e = 2:
 * 7e + 38 and 5e + 36 unfused, 2e + 14 and 5e + 20 fused), and an MoE
 * estimate with the fused router no slower than without, the difference
 * the router's time and host launches only. */
static void test_router_fusion(void)
{
    est_op r = {0};
    r.kind = EST_OP_ROUTER, r.dtype = HW_BF16, r.rows = 1000, r.cols = 64;
    est_work w;
    est_op_work(&r, &w);
    TP_CHECK_REL(w.fwd_bytes, 64000.0 * (7 * 2 + 38), 1e-12);
    TP_CHECK_REL(w.bwd_bytes, 64000.0 * (5 * 2 + 36), 1e-12);
    r.kind = EST_OP_ROUTER_FUSED;
    est_op_work(&r, &w);
    TP_CHECK_REL(w.fwd_bytes, 64000.0 * (2 * 2 + 14), 1e-12);
    TP_CHECK_REL(w.bwd_bytes, 64000.0 * (5 * 2 + 20), 1e-12);
    TP_CHECK(strcmp(est_op_names[EST_OP_ROUTER], "moe_router") == 0);

    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model m = small_moe(64, 4);
    space_layout l = moe_layout(1, 1, 8, 8);
    est_result fused, plain;
    l.moe_router_fusion = 1;
    est_estimate(&v.c, &m, &l, &fused);
    l.moe_router_fusion = 0;
    est_estimate(&v.c, &m, &l, &plain);
    TP_CHECK_INT(fused.reason, EST_FEASIBLE);
    TP_CHECK(plain.iteration_s > fused.iteration_s);
    TP_CHECK(plain.time.fwd_s > fused.time.fwd_s && plain.time.bwd_s > fused.time.bwd_s);
    /* memory, the dispatch and the optimizer do not move */
    TP_CHECK(plain.mem.total == fused.mem.total);
    TP_CHECK(plain.time.ep_s == fused.time.ep_s);
    TP_CHECK(plain.time.optimizer_s == fused.time.optimizer_s);
    moe_env_close(&v);
}

/* The count of one kernel kind in k (pass, access, tensor, size), 0 when
 * absent. */
static int cp_count(const est_cp_kernels *k, int pass, est_cp_access op,
                    est_cp_tensor t, double size)
{
    for (int i = 0; i < k->n; i++)
        if (k->k[i].pass == pass && k->k[i].op == op && k->k[i].tensor == t
            && k->k[i].size == size)
            return k->k[i].count;
    return 0;
}

/* Transformer Engine's context-parallel merge kernels, counted branch by
 * branch from NVIDIA/TransformerEngine@40c69e751a47 (v2.8)
 * transformer_engine/pytorch/attention/dot_product_attention/
 * context_parallel.py, AttnFuncWithCPAndKVP2P.forward / .backward and
 * AttnFuncWithCPAndKVAllGather.forward / .backward; in an estimate, on
 * Megatron-Core only and only with CP. */
static void test_cp_merge_kernels(void)
{
    est_cp_kernels k;
    /* CP 2, rank 1 (the second query chunk of the load-balanced split),
     * sbhd. Forward: torch.cat(k, v); the last step's LSE correction; step
     * 0's output scaled into place (out_correction_init), step 1's added
     * whole (step 1 <= rank: the lower triangle). */
    est_cp_kernels_rank(2, 1, SPACE_CP_P2P, 0, &k);
    TP_CHECK_INT(cp_count(&k, 0, EST_CP_COPY, EST_CP_KV, 2), 1);
    TP_CHECK_INT(cp_count(&k, 0, EST_CP_ADD, EST_CP_LSE, 1), 1);
    TP_CHECK_INT(cp_count(&k, 0, EST_CP_COPY, EST_CP_Q, 1), 1);
    TP_CHECK_INT(cp_count(&k, 0, EST_CP_ADD, EST_CP_Q, 1), 1);
    /* Backward: the ring buffer filled with K and V; step 0 (lower
     * triangle, i == cp - rank - 1, rank cp - 1): dq copied whole, dk and
     * dv copied into the first half; step 1 (diagonal): dq, dk, dv added
     * whole. */
    TP_CHECK_INT(cp_count(&k, 1, EST_CP_COPY, EST_CP_KV, 2), 1);
    TP_CHECK_INT(cp_count(&k, 1, EST_CP_COPY, EST_CP_Q, 1), 1);
    TP_CHECK_INT(cp_count(&k, 1, EST_CP_COPY, EST_CP_KV, 0.5), 2);
    TP_CHECK_INT(cp_count(&k, 1, EST_CP_ADD, EST_CP_Q, 1), 1);
    TP_CHECK_INT(cp_count(&k, 1, EST_CP_ADD, EST_CP_KV, 1), 2);
    TP_CHECK_INT(k.n, 9);
    /* bytes per unit Q, KV (no LSE): forward 2 x 2 + 2 + 3, backward
     * 2 x 2 + 2 + 2 x 0.5 x 2 + 3 + 3 x 2 */
    TP_CHECK_REL(est_cp_kernels_bytes(&k, 0, 1, 1, 0), 9, 1e-12);
    TP_CHECK_REL(est_cp_kernels_bytes(&k, 1, 1, 1, 0), 17, 1e-12);
    /* Rank 0 of CP 2: the second half of its queries only at step 1
     * (upper triangle), in both passes; the first step's dk, dv copied
     * whole, the diagonal's first half added, second half copied. */
    est_cp_kernels_rank(2, 0, SPACE_CP_P2P, 0, &k);
    TP_CHECK_INT(cp_count(&k, 0, EST_CP_ADD, EST_CP_Q, 0.5), 1);
    TP_CHECK_INT(cp_count(&k, 0, EST_CP_ADD, EST_CP_LSE, 0.5), 1);
    TP_CHECK_INT(cp_count(&k, 1, EST_CP_COPY, EST_CP_Q, 0.5), 2);
    TP_CHECK_INT(cp_count(&k, 1, EST_CP_ADD, EST_CP_Q, 0.5), 1);
    TP_CHECK_INT(cp_count(&k, 1, EST_CP_COPY, EST_CP_KV, 1), 2);
    TP_CHECK_INT(cp_count(&k, 1, EST_CP_ADD, EST_CP_KV, 0.5), 2);
    TP_CHECK_INT(cp_count(&k, 1, EST_CP_COPY, EST_CP_KV, 0.5), 2);
    TP_CHECK_REL(est_cp_kernels_bytes(&k, 1, 1, 0, 0), 1 + 2.5, 1e-12);
    /* Every rank of CP 4: dq's first query half is written at the
     * diagonal and the rank's r lower-triangle steps, its second half at
     * every step, each first write a copy (2 accesses), the rest adds
     * (3); the output's forward merge likewise (one init, then adds). */
    for (int r = 0; r < 4; r++) {
        est_cp_kernels_rank(4, r, SPACE_CP_P2P, 0, &k);
        double dq = 0.5 * (2 + 3 * r) + 0.5 * (2 + 3 * 3);
        TP_CHECK_REL(est_cp_kernels_bytes(&k, 1, 1, 0, 0), dq, 1e-12);
        double out = 2 + 3 * (r + 0.5 * (3 - r));
        TP_CHECK_REL(est_cp_kernels_bytes(&k, 0, 1, 0, 0), out, 1e-12);
    }
    /* thd (packed documents): step 0 added into a zeroed output
     * (tex.thd_out_correction), and halves read as copies
     * (tex.thd_read_half_tensor): CP 2 rank 1 forward: K and V halves
     * once; backward: q, out, dout halves never (no upper triangle). */
    est_cp_kernels_rank(2, 1, SPACE_CP_P2P, 1, &k);
    TP_CHECK_INT(cp_count(&k, 0, EST_CP_ADD, EST_CP_Q, 1), 2);
    TP_CHECK_INT(cp_count(&k, 0, EST_CP_COPY, EST_CP_Q, 1), 0);
    TP_CHECK_INT(cp_count(&k, 0, EST_CP_COPY, EST_CP_KV, 0.5), 2);
    est_cp_kernels_rank(2, 0, SPACE_CP_P2P, 1, &k);
    TP_CHECK_INT(cp_count(&k, 1, EST_CP_COPY, EST_CP_Q, 0.5), 3 + 2);
    /* All-gather type, CP 2, rank 0: the gathered K and V reordered
     * (forward, and again backward), chunk 1's output copy, dk and dv
     * zeroed and reordered at the gathered size, chunk 1's (id 3) dk and
     * dv added over its 4 chunks of keys (2 x the rank's K). */
    est_cp_kernels_rank(2, 0, SPACE_CP_ALLGATHER, 0, &k);
    TP_CHECK_INT(cp_count(&k, 0, EST_CP_COPY, EST_CP_KV, 2), 2);
    TP_CHECK_INT(cp_count(&k, 0, EST_CP_COPY, EST_CP_Q, 0.5), 1);
    TP_CHECK_INT(cp_count(&k, 1, EST_CP_FILL, EST_CP_KV, 2), 2);
    TP_CHECK_INT(cp_count(&k, 1, EST_CP_COPY, EST_CP_KV, 2), 4);
    TP_CHECK_INT(cp_count(&k, 1, EST_CP_ADD, EST_CP_KV, 2), 2);
    /* No CP, no kernels; the table never overflows. */
    est_cp_kernels_rank(1, 0, SPACE_CP_P2P, 0, &k);
    TP_CHECK_INT(k.n, 0);
    for (int cp = 2; cp <= 64; cp *= 2)
        for (int r = 0; r < cp; r++)
            for (int thd = 0; thd < 2; thd++) {
                est_cp_kernels_rank(cp, r, SPACE_CP_P2P, thd, &k);
                TP_CHECK(k.n <= 16);
            }

    /* The busiest rank found among the end ranks is the busiest of all,
     * at every ratio of query to key-value heads. */
    for (int cp = 2; cp <= 64; cp *= 2)
        for (int thd = 0; thd < 2; thd++)
            for (int comm = 0; comm < SPACE_CP_COMM_COUNT; comm++)
                for (double ratio = 1; ratio <= 16; ratio *= 2)
                    for (int pass = 0; pass < 2; pass++) {
                        double most = -1;
                        for (int r = 0; r < cp; r++) {
                            est_cp_kernels_rank(cp, r, comm, thd, &k);
                            double b = est_cp_kernels_bytes(&k, pass, ratio, 1,
                                                            ratio / 64);
                            if (b > most) most = b;
                        }
                        int r = est_cp_busiest_rank(cp, comm, thd, pass, ratio,
                                                    1, ratio / 64);
                        est_cp_kernels_rank(cp, r, comm, thd, &k);
                        TP_CHECK_REL(est_cp_kernels_bytes(&k, pass, ratio, 1,
                                                          ratio / 64),
                                     most, 1e-12);
                    }

    /* In an estimate: a Megatron-Core CP 2 layer lists the merges
     * (estimate --ops) and they add to its forward and backward; without
     * CP, or under torchtitan (PyTorch's own context parallel), none. */
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model m = small_dense();
    space_layout l = moe_layout(1, 1, 8, 1);
    l.cp = 2, l.dp = 4, l.seq = 8192;
    est_trace *tr = calloc(1, sizeof *tr);
    if (!tr) return;
    est_ctx ct = v.c;
    ct.trace = tr;
    est_result r;
    est_estimate(&ct, &m, &l, &r);
    TP_CHECK_INT(r.reason, EST_FEASIBLE);
    double fwd = 0, bwd = 0;
    int rows = 0;
    for (int i = 0; i < tr->n; i++)
        if (strncmp(tr->row[i].what, "cp_", 3) == 0
            && strcmp(tr->row[i].what, "cp_comm") != 0)
            rows++, fwd += tr->row[i].fwd_s, bwd += tr->row[i].bwd_s;
    TP_CHECK_INT(rows, 9);
    TP_CHECK(fwd > 0 && bwd > fwd);
    /* Memoized per thread (iter_cp.c), the same bits as the traced
     * estimate, which times each kernel: the first estimate without a
     * trace fills the memo, the second reads it; and with memos off. */
    est_result rm[3];
    for (int i = 0; i < 3; i++) {
        est_memo_enable(i < 2);
        est_estimate(&v.c, &m, &l, &rm[i]);
        TP_CHECK(memcmp(&rm[i].time, &r.time, sizeof r.time) == 0);
        TP_CHECK(rm[i].iteration_s == r.iteration_s);
    }
    est_memo_enable(1);
    l.cp = 1, l.dp = 8;
    est_estimate(&ct, &m, &l, &r);
    for (int i = 0; i < tr->n; i++)
        TP_CHECK(strncmp(tr->row[i].what, "cp_", 3) != 0);
    l.cp = 2, l.dp = 4;
    space_framework_software(SPACE_FW_TORCHTITAN, &l);
    est_estimate(&ct, &m, &l, &r);
    for (int i = 0; i < tr->n; i++)
        TP_CHECK(strncmp(tr->row[i].what, "cp_", 3) != 0);
    free(tr);
    moe_env_close(&v);
}

/* An MoE model of one expert, top 1, is the dense model plus its router
 * and its permutations, to the bit: the grouped GEMMs are the dense
 * FFN's GEMMs (one expert of all T tokens), the activation the same. */
static void test_moe_one_expert(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model d = small_dense(), m1 = small_moe(1, 1);
    space_layout l = moe_layout(1, 1, 8, 1);
    est_result rd, rm;
    est_estimate(&v.c, &d, &l, &rd);
    est_estimate(&v.c, &m1, &l, &rm);
    TP_CHECK(rd.iteration_s > 0 && rm.iteration_s > 0);
    TP_CHECK_INT(rm.reason, EST_FEASIBLE);
    double eff = est_kernel_eff(&v.c, &l);
    int64_t T = l.mbs * l.seq, h = d.hidden;
    est_op router = gemm(T, 1, h);
    est_op route = {0}, perm = {0};
    route.kind = l.moe_router_fusion ? EST_OP_ROUTER_FUSED : EST_OP_ROUTER;
    route.dtype = HW_BF16;
    route.rows = T, route.cols = 1;
    perm.kind = EST_OP_PERMUTE, perm.dtype = HW_BF16;
    perm.rows = T, perm.cols = h;
    est_time a, b, c2;
    est_models_time(v.ops, &router, &a);
    est_models_time(v.ops, &route, &b);
    est_models_time(v.ops, &perm, &c2);
    double micro = (double)(l.gbs / (l.mbs * l.dp)), L = (double)d.num_layers;
    double extra_f = micro * L * (a.fwd_s + b.fwd_s + 2 * c2.fwd_s) / eff;
    double extra_b = micro * L * (a.bwd_s + b.bwd_s + 2 * c2.bwd_s) / eff;
    TP_CHECK_REL(rm.time.fwd_s - rd.time.fwd_s, extra_f, 1e-9);
    TP_CHECK_REL(rm.time.bwd_s - rd.time.bwd_s, extra_b, 1e-9);
    TP_CHECK(rm.time.ep_s == 0 && rd.time.ep_s == 0);
    /* Memory: the router's h x 1 per layer more, all of the FFN counted
     * as the expert's. */
    TP_CHECK_REL(rm.mem.params - rd.mem.params, L * (double)h, 1e-12);
    TP_CHECK_REL(rm.mem.expert_params, L * 3.0 * (double)h * (double)d.ffn_hidden,
                 1e-12);
    moe_env_close(&v);
}

/* PyTorch's non-reentrant checkpoint (since 2.1) stops its recomputation
 * before the block's last GEMM and add (bench/data/block_h200): a
 * torchtitan layout's recomputation is the forward less FC2's forward and
 * the residual add's, per layer and micro-batch; with ckpt_full_rerun
 * (PyTorch before 2.1), and under Megatron, the whole forward. */
static void test_checkpoint_early_stop(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model d = small_dense();
    space_layout l = moe_layout(1, 1, 8, 0);
    l.etp = 0;
    space_framework_software(SPACE_FW_TORCHTITAN, &l);
    l.eager = 1, l.zero = SPACE_ZERO_3, l.recompute = SPACE_RECOMPUTE_FULL;
    est_result early, full;
    est_estimate(&v.c, &d, &l, &early);
    l.ckpt_full_rerun = 1;
    est_estimate(&v.c, &d, &l, &full);
    TP_CHECK_INT(early.reason, EST_FEASIBLE);
    TP_CHECK_INT(full.reason, EST_FEASIBLE);
    double eff = est_kernel_eff(&v.c, &l);
    int64_t T = l.mbs * l.seq;
    est_op fc2 = gemm(T, d.hidden, d.ffn_hidden);
    est_op add = {0};
    add.kind = EST_OP_RESADD, add.dtype = HW_BF16;
    add.rows = T, add.cols = d.hidden;
    est_time a, b;
    est_models_time(v.ops, &fc2, &a);
    est_models_time(v.ops, &add, &b);
    double micro = (double)(l.gbs / (l.mbs * l.dp)), L = (double)d.num_layers;
    TP_CHECK_REL(full.time.recompute_s - early.time.recompute_s,
                 micro * L * (a.fwd_s + b.fwd_s) / eff, 1e-9);
    TP_CHECK(early.iteration_s < full.iteration_s);
    /* Megatron-Core reruns the whole layer either way */
    l = moe_layout(1, 1, 8, 0);
    l.etp = 0, l.recompute = SPACE_RECOMPUTE_FULL;
    est_estimate(&v.c, &d, &l, &full);
    l.ckpt_full_rerun = 1;
    est_estimate(&v.c, &d, &l, &early);
    TP_CHECK(full.iteration_s > 0);
    TP_CHECK_REL(early.time.recompute_s, full.time.recompute_s, 1e-12);
    moe_env_close(&v);
}

/* A grouped expert GEMM reads every local expert's weight: with few rows
 * an expert (128 experts, top 4, 4096 tokens: 128 rows each) its time is
 * the roofline of the experts' GEMMs as a batch, above the dense GEMM of
 * all rows; with many rows an expert (8 experts, top 2: 1,024) the dense
 * GEMM's, as before (bench/data/moe_h200: measured 1.7-2.3x the dense
 * GEMM at 128 rows, 0.9-1.1x from 1,000). */
static void test_moe_grouped_floor(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    est_trace *tr = calloc(1, sizeof *tr);
    if (!tr) {
        moe_env_close(&v);
        return;
    }
    static const int64_t cases[2][3] = {{128, 4, 1}, {8, 2, 0}};
    for (int c = 0; c < 2; c++) {
        space_model m = small_moe(cases[c][0], cases[c][1]);
        m.expert_ffn_hidden = 1024;
        space_layout l = moe_layout(1, 1, 8, 1);
        est_ctx ct = v.c;
        ct.trace = tr;
        est_result r;
        est_estimate(&ct, &m, &l, &r);
        TP_CHECK_INT(r.reason, EST_FEASIBLE);
        double eff = est_kernel_eff(&v.c, &l);
        int64_t nle = m.num_experts;
        int64_t rows = l.seq * m.top_k / nle; /* whole 64-row tiles */
        int seen = 0;
        for (int i = 0; i < tr->n && seen < 2; i++) {
            if (strcmp(tr->row[i].what, "grouped_gemm")) continue;
            /* fc1 (gated: 2 x 1024 of 2048), then fc2 (2048 of 1024) */
            int64_t n = seen == 0 ? 2 * 1024 : m.hidden;
            int64_t k = seen == 0 ? m.hidden : 1024;
            est_op dense = gemm(nle * rows, n, k), batch = gemm(rows, n, k);
            batch.b = nle;
            est_time d, b;
            est_models_time(v.ops, &dense, &d);
            est_op_roofline(v.c.gpu, &batch, &b);
            double want_f = fmax(d.fwd_s, b.fwd_s) / eff;
            double want_b = fmax(d.bwd_s, b.bwd_s) / eff;
            TP_CHECK_REL(tr->row[i].fwd_s, want_f, 1e-9);
            TP_CHECK_REL(tr->row[i].bwd_s, want_b, 1e-9);
            if (cases[c][2]) /* the weights' traffic binds */
                TP_CHECK(b.fwd_s > 1.2 * d.fwd_s && b.bwd_s > d.bwd_s);
            else
                TP_CHECK(b.fwd_s < d.fwd_s && b.bwd_s < d.bwd_s);
            seen++;
        }
        TP_CHECK_INT(seen, 2);
    }
    free(tr);
    moe_env_close(&v);
}

/* Megatron-Core's unfused permutation: its backward (index_select's
 * gradient, index_add_) and unpermute's forward (scatter_add_) are atomic
 * adds at the measured 0.051 and 0.111 of HBM bandwidth (estimator/
 * iter_moe.c), with the zeroing and two kernels' floors; the other two
 * passes are the fused path's gathers. */
static void test_moe_unfused_permute(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    est_trace *tr = calloc(2, sizeof *tr);
    if (!tr) {
        moe_env_close(&v);
        return;
    }
    space_model m = small_moe(8, 2);
    space_layout l = moe_layout(1, 1, 8, 1);
    est_result r[2];
    for (int u = 0; u < 2; u++) {
        l.moe_permute_fusion = !u;
        est_ctx ct = v.c;
        ct.trace = &tr[u];
        est_estimate(&ct, &m, &l, &r[u]);
        TP_CHECK_INT(r[u].reason, EST_FEASIBLE);
    }
    TP_CHECK(r[1].iteration_s > r[0].iteration_s);
    double eff = est_kernel_eff(&v.c, &l);
    double bw = v.c.gpu->mem_bw_bytes_per_s;
    double T = (double)(l.mbs * l.seq), h = (double)m.hidden, e = 2;
    double add = T * 2 * h * e, zero = T * h * e / (bw * 0.9) + 6e-6;
    double want_b = (add / (bw * 0.051) + zero) / eff;
    double want_f = (add / (bw * 0.111) + zero) / eff;
    int seen = 0;
    for (int i = 0; i < tr[0].n && i < tr[1].n && seen < 2; i++) {
        TP_CHECK(strcmp(tr[0].row[i].what, tr[1].row[i].what) == 0);
        if (!strcmp(tr[1].row[i].what, "moe_permute")) {
            TP_CHECK_REL(tr[1].row[i].fwd_s, tr[0].row[i].fwd_s, 1e-12);
            TP_CHECK_REL(tr[1].row[i].bwd_s, want_b, 1e-9);
            TP_CHECK(tr[1].row[i].bwd_s > 4 * tr[0].row[i].bwd_s);
            seen++;
        } else if (!strcmp(tr[1].row[i].what, "moe_unpermute")) {
            TP_CHECK_REL(tr[1].row[i].fwd_s, want_f, 1e-9);
            TP_CHECK_REL(tr[1].row[i].bwd_s, tr[0].row[i].bwd_s, 1e-12);
            TP_CHECK(tr[1].row[i].fwd_s > 2 * tr[0].row[i].fwd_s);
            seen++;
        }
    }
    TP_CHECK_INT(seen, 2);
    free(tr);
    moe_env_close(&v);
}

/* Dispatch: nothing crosses ranks at EP 1 (and ETP 1); at EP 8 the
 * all-to-all moves each rank's T x top_k token copies of h at 16 bits,
 * on the busiest rank times the imbalance, twice a pass (dispatch and
 * combine) inside one node of eight; EP 16 crosses nodes and costs
 * more. */
static void test_moe_dispatch(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model m = small_moe(16, 2);
    space_layout l1 = moe_layout(1, 1, 16, 1), l8 = l1, l16 = l1;
    l8.ep = 8, l16.ep = 16;
    est_result r1, r8, r16;
    est_estimate(&v.c, &m, &l1, &r1);
    est_trace *tr = calloc(1, sizeof *tr);
    if (!tr) return;
    est_ctx ct = v.c;
    ct.trace = tr;
    est_estimate(&ct, &m, &l8, &r8);
    est_estimate(&v.c, &m, &l16, &r16);
    TP_CHECK_INT(r1.reason, EST_FEASIBLE);
    TP_CHECK_INT(r8.reason, EST_FEASIBLE);
    TP_CHECK(r1.time.ep_s == 0);
    TP_CHECK(r8.time.ep_s > 0);
    TP_CHECK(r16.time.ep_s > r8.time.ep_s);
    double want = (double)(l8.seq * 2 * m.hidden) * 2
                  * EST_MOE_IMBALANCE_DEFAULT / 1e6;
    int n_a2a = 0;
    for (int i = 0; i < tr->n; i++) {
        const est_trace_row *row = &tr->row[i];
        if (strcmp(row->what, "alltoall") || strcmp(row->where, "moe layer"))
            continue;
        double mb = atof(row->shape);
        if (mb > 1) { /* the tokens (the probabilities are small) */
            TP_CHECK_REL(mb, want, 1e-3);
            TP_CHECK_CONTAINS(row->shape, "over 1x8");
        }
        n_a2a++;
    }
    TP_CHECK_INT(n_a2a, 2); /* one call timed for tokens, one for probs */
    free(tr);
    /* An imbalance of 1 moves less and computes less than 1.5. */
    space_layout lo = l8, hi = l8;
    lo.moe_imbalance = 1, hi.moe_imbalance = 1.5;
    est_result a, b;
    est_estimate(&v.c, &m, &lo, &a);
    est_estimate(&v.c, &m, &hi, &b);
    TP_CHECK(a.time.ep_s < b.time.ep_s);
    TP_CHECK(a.time.fwd_s < b.time.fwd_s);
    TP_CHECK(a.mem.activations < b.mem.activations);
    /* The other dispatchers are timed, and differ. */
    space_layout ag = l8, fx = l8;
    ag.moe_dispatcher = SPACE_MOE_ALLGATHER, fx.moe_dispatcher = SPACE_MOE_FLEX;
    est_estimate(&v.c, &m, &ag, &a);
    est_estimate(&v.c, &m, &fx, &b);
    TP_CHECK(a.time.ep_s > 0 && b.time.ep_s > 0);
    TP_CHECK(a.time.ep_s != r8.time.ep_s && b.time.ep_s != r8.time.ep_s);
    /* Expert TP over the TP ranks adds its gather and reduce-scatter. */
    space_layout t2 = moe_layout(2, 1, 8, 4), t2e = t2;
    t2e.etp = 2;
    est_estimate(&v.c, &m, &t2, &a);
    est_estimate(&v.c, &m, &t2e, &b);
    TP_CHECK_INT(a.reason, EST_FEASIBLE);
    TP_CHECK_INT(b.reason, EST_FEASIBLE);
    TP_CHECK(b.time.ep_s > 0 && a.time.ep_s > 0);
    moe_env_close(&v);
}

/* The flex dispatcher (DeepEP, HybridEP) fuses the copy of each token to
 * its destinations into the dispatch kernel and the weighted sum back into
 * the combine: no moe_permute / moe_unpermute of the Tr x top_k rows, as
 * the all-to-all dispatcher has; the sort of the received rows by local
 * expert stays. */
static void test_moe_flex_fused_permute(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model m = small_moe(16, 2);
    space_layout a2a = moe_layout(1, 1, 16, 1), fx = a2a;
    a2a.ep = fx.ep = 8;
    fx.moe_dispatcher = SPACE_MOE_FLEX;
    est_trace *tr = calloc(2, sizeof *tr);
    if (!tr) return;
    est_ctx ct = v.c;
    est_result ra, rf;
    ct.trace = &tr[0];
    est_estimate(&ct, &m, &a2a, &ra);
    ct.trace = &tr[1];
    est_estimate(&ct, &m, &fx, &rf);
    TP_CHECK_INT(ra.reason, EST_FEASIBLE);
    TP_CHECK_INT(rf.reason, EST_FEASIBLE);
    int perm[2] = {0, 0}, sort[2] = {0, 0};
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < tr[t].n; i++) {
            const est_trace_row *row = &tr[t].row[i];
            if (strcmp(row->where, "moe layer")) continue;
            if (!strcmp(row->what, "moe_permute")
                || !strcmp(row->what, "moe_unpermute"))
                perm[t]++;
            if (!strcmp(row->what, "moe_sort")
                || !strcmp(row->what, "moe_unsort"))
                sort[t]++;
        }
    TP_CHECK_INT(perm[0], 2);
    TP_CHECK_INT(perm[1], 0);
    TP_CHECK_INT(sort[0], 2);
    TP_CHECK_INT(sort[1], 2);
    free(tr);
    moe_env_close(&v);
}

/* GB300 NVL72 keeps GB200 NVL72's NVLink 5 switch fabric (18 switches,
 * 900 GB/s per GPU per direction): inside one rack its collectives take
 * GB200 NVL72's measured tables (hwdb gb300-nvl72.json, measured), so an
 * EP all-to-all of 64 GPUs costs the same on both racks, below the
 * analytical model; a group over two racks stays analytical. */
static void test_nvl72_tables_shared(void)
{
    moe_env a, b;
    if (moe_env_open(&a, "gb200-nvl72")) return;
    if (moe_env_open(&b, "gb300-nvl72")) {
        moe_env_close(&a);
        return;
    }
    est_group g = {64, 4, 16, 0};
    est_coll_info ia, ib;
    double ta = est_coll_time_info(a.comm, a.y, EST_COLL_ALLTOALL, 254.2e6,
                                   &g, &ia);
    double tb = est_coll_time_info(b.comm, b.y, EST_COLL_ALLTOALL, 254.2e6,
                                   &g, &ib);
    TP_CHECK(ia.table != NULL && ib.table != NULL);
    TP_CHECK_REL(tb, ta, 1e-12);
    TP_CHECK(tb < ib.analytical_s);
    est_group two = {144, 4, 36, 0};
    double t2 = est_coll_time_info(b.comm, b.y, EST_COLL_ALLTOALL, 254.2e6,
                                   &two, &ib);
    TP_CHECK(t2 > 0 && ib.table == NULL);
    moe_env_close(&b);
    moe_env_close(&a);
}

/* ZeRO-3 (Megatron-FSDP) of an MoE model: each MoE layer gathers its
 * routed experts (E / ep of them, 16-bit) over the expert data-parallel
 * group, tp x cp x dp / (etp x ep) ranks, and its other parameters over
 * the DP group (megatron_fsdp.py: the expert parameters' own FSDP group);
 * never the whole layer over DP. */
static void test_moe_zero3_gathers(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model m = small_moe(16, 2);
    space_layout l = moe_layout(1, 1, 16, 8); /* edp 2: two nodes, 1 each */
    l.zero = SPACE_ZERO_3, l.no_dp_overlap = 1;
    est_trace *tr = calloc(1, sizeof *tr);
    if (!tr) return;
    est_ctx ct = v.c;
    ct.trace = tr;
    est_result r;
    est_estimate(&ct, &m, &l, &r);
    TP_CHECK_INT(r.reason, EST_FEASIBLE);
    double L = (double)m.num_layers;
    double xmb = 2 * r.mem.expert_params / L / 1e6;
    double dmb = 2 * (r.mem.params - r.mem.expert_params) / L / 1e6;
    int seen_x = 0, seen_d = 0;
    for (int i = 0; i < tr->n; i++) {
        const est_trace_row *row = &tr->row[i];
        if (strcmp(row->what, "allgather") || strcmp(row->where, "iteration"))
            continue;
        double mb = atof(row->shape);
        if (fabs(mb / xmb - 1) < 1e-3) {
            TP_CHECK_CONTAINS(row->shape, "over 2x1");
            seen_x++;
        } else if (fabs(mb / dmb - 1) < 1e-3) {
            TP_CHECK_CONTAINS(row->shape, "over 2x8");
            seen_d++;
        } else {
            TP_CHECK(0 && "a ZeRO-3 gather of neither size");
        }
    }
    TP_CHECK_INT(seen_x, 1);
    TP_CHECK_INT(seen_d, 1);
    free(tr);
    TP_CHECK(r.time.dp_s > 0);
    moe_env_close(&v);
}

/* What is refused, and why: never a memory shortfall. */
static void test_moe_refusals(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model m = small_moe(16, 2);
    est_result r;
    space_layout l = moe_layout(2, 1, 8, 4);
    l.sp = 0;
    /* Megatron-Core's MoE rules are layout rules (space/layout.c). */
    est_estimate(&v.c, &m, &l, &r);
    TP_CHECK_INT(r.reason, EST_INVALID_LAYOUT);
    TP_CHECK_INT(r.reject, SPACE_REJECT_MOE_SP);
    TP_CHECK_CONTAINS(r.message, "sequence parallelism");
    l = moe_layout(1, 1, 8, 3);
    est_estimate(&v.c, &m, &l, &r);
    TP_CHECK_INT(r.reason, EST_INVALID_LAYOUT);
    TP_CHECK_INT(r.reject, SPACE_REJECT_EP_EXPERTS);
    l = moe_layout(1, 1, 8, 16); /* 16 ranks of EP on 8 */
    est_estimate(&v.c, &m, &l, &r);
    TP_CHECK_INT(r.reason, EST_INVALID_LAYOUT);
    TP_CHECK_INT(r.reject, SPACE_REJECT_EP_RANKS);
    space_model odd = m;
    odd.expert_ffn_hidden = 1001;
    l = moe_layout(2, 1, 4, 2);
    l.sp = 1, l.etp = 2;
    est_estimate(&v.c, &odd, &l, &r);
    TP_CHECK_INT(r.reason, EST_MOE_LAYOUT);
    TP_CHECK_CONTAINS(r.message, "expert FFN size 1001");
    /* A capacity factor caps the busiest expert's load: 1.0 drops
     * every token above the mean, so the imbalance (here 1.5) no
     * longer slows the experts; 1.25 keeps a part of it. */
    space_model cap = m;
    l = moe_layout(1, 1, 8, 8);
    l.moe_imbalance = 1.5;
    est_result free_r, c1, c125;
    est_estimate(&v.c, &m, &l, &free_r);
    cap.capacity_factor = 1.0;
    est_estimate(&v.c, &cap, &l, &c1);
    cap.capacity_factor = 1.25;
    est_estimate(&v.c, &cap, &l, &c125);
    TP_CHECK_INT(c1.reason, EST_FEASIBLE);
    TP_CHECK(est_moe_imbalance(&cap, &l) == 1.25);
    TP_CHECK(c1.iteration_s < c125.iteration_s
             && c125.iteration_s < free_r.iteration_s);
    l.moe_imbalance = 1.0;
    est_result bal;
    est_estimate(&v.c, &m, &l, &bal);
    TP_CHECK_REL(c1.iteration_s, bal.iteration_s, 1e-12);
    TP_CHECK_STR(est_reason_names[EST_MOE_LAYOUT], "moe_layout");
    moe_env_close(&v);
}

/* fp8 (Transformer Engine, delayed scaling, H100): a one-expert, top-1
 * MoE is the fp8 dense model plus the router (a 16-bit GEMM), the route
 * and the two permutations, and one difference of casts: the grouped
 * FC1 takes its input from the permutation (one cast-transpose of
 * [T, h]) where the dense FC1's LayerNormLinear has its norm write fp8
 * (a transpose only). The grouped GEMMs are the dense FFN's GEMMs (all
 * T = 4096 rows on the one expert, a multiple of 16: no padding), the
 * expert's weight casts and fp8 copies the dense FFN's. */
static void test_moe_fp8_one_expert(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model d = small_dense(), m1 = small_moe(1, 1);
    space_layout l = moe_layout(1, 1, 8, 1);
    l.dtype = HW_FP8, l.fp8_recipe = SPACE_FP8_DELAYED;
    est_result rd, rm;
    est_estimate(&v.c, &d, &l, &rd);
    est_estimate(&v.c, &m1, &l, &rm);
    TP_CHECK_INT(rd.reason, EST_FEASIBLE);
    TP_CHECK_INT(rm.reason, EST_FEASIBLE);
    double eff = est_kernel_eff(&v.c, &l);
    int64_t T = l.mbs * l.seq, h = d.hidden;
    est_op router = gemm(T, 1, h);
    est_op route = {0}, perm = {0}, q2 = {0}, tr = {0};
    route.kind = l.moe_router_fusion ? EST_OP_ROUTER_FUSED : EST_OP_ROUTER;
    route.dtype = HW_BF16;
    route.rows = T, route.cols = 1;
    perm.kind = EST_OP_PERMUTE, perm.dtype = HW_BF16;
    perm.rows = T, perm.cols = h;
    q2.kind = EST_OP_FP8_QUANT2, q2.dtype = HW_BF16;
    q2.rows = T, q2.cols = h;
    tr = q2;
    tr.kind = EST_OP_FP8_TRANSPOSE;
    est_time a, b, c2, tq, tt;
    est_models_time(v.ops, &router, &a);
    est_models_time(v.ops, &route, &b);
    est_models_time(v.ops, &perm, &c2);
    est_models_time(v.ops, &q2, &tq);
    est_models_time(v.ops, &tr, &tt);
    double micro = (double)(l.gbs / (l.mbs * l.dp)), L = (double)d.num_layers;
    double extra_f = micro * L
                     * (a.fwd_s + b.fwd_s + 2 * c2.fwd_s + tq.fwd_s - tt.fwd_s)
                     / eff;
    double extra_b = micro * L * (a.bwd_s + b.bwd_s + 2 * c2.bwd_s) / eff;
    TP_CHECK_REL(rm.time.fwd_s - rd.time.fwd_s, extra_f, 1e-9);
    TP_CHECK_REL(rm.time.bwd_s - rd.time.bwd_s, extra_b, 1e-9);
    TP_CHECK(rm.mem.fp8_weights == rd.mem.fp8_weights);
    TP_CHECK(rm.mem.fp8_weights > 0);
    moe_env_close(&v);
}

/* fp8 MoE and MLA layers: faster than 16 bits with per-tensor scaling on
 * H100 (and with MXFP8 on GB200), never faster than the fp8 peak allows
 * (est_time_floor), and every Transformer Engine recipe estimated; the
 * routed experts' rows are padded to 16 (MXFP8: 32) with a copy each way
 * (the trace's moe_fp8_pad); nvfp4 with MoE is still refused by name. */
static void test_moe_fp8(void)
{
    moe_env v, bw;
    if (moe_env_open(&v, "eos")) return;
    if (moe_env_open(&bw, "gb200-nvl72")) {
        moe_env_close(&v);
        return;
    }
    space_model ms[3] = {small_moe(16, 2), deepseek_v3(), small_moe(8, 2)};
    ms[2].first_dense_layers = 1, ms[2].moe_layer_freq = 2;
    ms[2].shared_experts = 2, ms[2].shared_ffn_hidden = 1024;
    int checked = 0, faster = 0, compared = 0;
    for (int mi = 0; mi < 3; mi++) {
        int64_t tps[] = {1, 2}, eps[] = {1, 8};
        for (int a = 0; a < 2; a++)
            for (int c = 0; c < 2; c++)
                for (int rec = 0; rec < SPACE_FP8_RECIPE_COUNT; rec++)
                    for (int g = 0; g < 2; g++) {
                        const moe_env *e = g ? &bw : &v;
                        if (rec == SPACE_FP8_ROWWISE) continue; /* torchao's */
                        if ((rec == SPACE_FP8_MXFP8) != (g == 1)) continue;
                        space_layout l = moe_layout(tps[a], 2, 16, eps[c]);
                        if (mi == 1) l.seq = 1024, l.pp = 4;
                        space_layout b16 = l;
                        l.dtype = HW_FP8, l.fp8_recipe = rec;
                        est_result r, r16;
                        est_estimate(&e->c, &ms[mi], &l, &r);
                        TP_CHECK(r.reason != EST_MOE);
                        if (r.iteration_s <= 0) continue;
                        double tf = est_time_floor(&e->c, &ms[mi], &l);
                        TP_CHECK(tf > 0 && r.iteration_s >= tf);
                        TP_CHECK(r.mem.fp8_weights > 0);
                        TP_CHECK(isfinite(r.iteration_s));
                        checked++;
                        if (rec == SPACE_FP8_BLOCKWISE) continue;
                        est_estimate(&e->c, &ms[mi], &b16, &r16);
                        if (r16.iteration_s <= 0) continue;
                        /* Except DeepSeek-V3's 256 experts on one EP
                         * rank: 32 rows an expert at seq 1024, one
                         * 64-row tile each in either precision, where
                         * current scaling's casts cost more than fp8
                         * saves. */
                        if (mi == 1 && eps[c] == 1
                            && rec == SPACE_FP8_TENSORWISE)
                            continue;
                        compared++;
                        faster += r.time.fwd_s + r.time.bwd_s
                                  < r16.time.fwd_s + r16.time.bwd_s;
                    }
    }
    TP_CHECK(checked >= 30);
    TP_CHECK(compared > 0);
    TP_CHECK_INT(faster, compared);
    /* Padding: 16 experts, top 2 on EP 8: each rank's 2 experts get
     * uneven counts; the copies show in the trace, in fp8 only. */
    space_model m = ms[0];
    space_layout l = moe_layout(1, 1, 16, 8);
    l.dtype = HW_FP8;
    est_trace *tr = calloc(1, sizeof *tr);
    if (!tr) return;
    est_ctx ct = v.c;
    ct.trace = tr;
    est_result r;
    est_estimate(&ct, &m, &l, &r);
    int pads = 0, grouped8 = 0;
    for (int i = 0; i < tr->n; i++) {
        if (!strcmp(tr->row[i].what, "moe_fp8_pad")
            || !strcmp(tr->row[i].what, "moe_fp8_unpad"))
            pads++;
        if (!strcmp(tr->row[i].what, "grouped_gemm")) {
            TP_CHECK_CONTAINS(tr->row[i].shape, "fp8");
            grouped8++;
        }
    }
    TP_CHECK_INT(pads, 2);
    TP_CHECK_INT(grouped8, 2);
    l.dtype = HW_BF16;
    est_estimate(&ct, &m, &l, &r);
    for (int i = 0; i < tr->n; i++)
        TP_CHECK(strcmp(tr->row[i].what, "moe_fp8_pad") != 0);
    free(tr);
    /* Refused by name: nvfp4 with MoE or MLA, fp8 MoE under torchao. */
    l = moe_layout(1, 1, 16, 8);
    l.dtype = HW_FP4;
    est_estimate(&bw.c, &m, &l, &r);
    TP_CHECK_INT(r.reason, EST_MOE);
    TP_CHECK_CONTAINS(r.message, "nvfp4");
    l.dtype = HW_FP8, l.fp8_lib = SPACE_FP8_LIB_TORCHAO;
    est_estimate(&v.c, &m, &l, &r);
    TP_CHECK_INT(r.reason, EST_MOE);
    moe_env_close(&bw);
    moe_env_close(&v);
}

/* fp8 dot-product attention (space_layout.fp8_attention, hwdb
 * fp8_attention): on B200 at 8k tokens the attention's forward and
 * backward are the 16-bit kernel's times the measured ratios (the trace
 * names it fp8), the step faster by what the attention saves; nothing
 * else moves; refused by name on a GPU without a measured table (GH200,
 * est_fp8_attention_check, and so est_estimate), and ignored in 16 bits. */
static void test_fp8_attention(void)
{
    moe_env v, gh;
    if (moe_env_open(&v, "dgx-b200")) return;
    space_model m = small_dense();
    space_layout l = moe_layout(1, 1, 8, 1);
    l.seq = 8192, l.dtype = HW_FP8, l.fp8_recipe = SPACE_FP8_TENSORWISE;
    est_trace *tr = calloc(1, sizeof *tr);
    if (!tr) return;
    est_ctx ct = v.c;
    ct.trace = tr;
    est_result a, b;
    est_estimate(&ct, &m, &l, &a);
    double af = 0, ab = 0, bf = 0, bb = 0;
    for (int i = 0; i < tr->n; i++)
        if (!strcmp(tr->row[i].what, "attn_cudnn"))
            af = tr->row[i].fwd_s, ab = tr->row[i].bwd_s;
    l.fp8_attention = 1;
    est_estimate(&ct, &m, &l, &b);
    int named = 0;
    for (int i = 0; i < tr->n; i++)
        if (!strcmp(tr->row[i].what, "attn_cudnn")) {
            bf = tr->row[i].fwd_s, bb = tr->row[i].bwd_s;
            named = strstr(tr->row[i].shape, "fp8") != NULL;
        }
    TP_CHECK(a.reason == EST_FEASIBLE && b.reason == EST_FEASIBLE);
    TP_CHECK(af > 0 && ab > 0 && named);
    TP_CHECK_REL(bf, 0.921 * af, 1e-9);
    TP_CHECK_REL(bb, 0.793 * ab, 1e-9);
    TP_CHECK(b.iteration_s < a.iteration_s);
    TP_CHECK_REL(a.mem.total, b.mem.total, 1e-12);
    /* in 16 bits the flag does nothing */
    l.dtype = HW_BF16;
    est_estimate(&v.c, &m, &l, &b);
    l.fp8_attention = 0;
    est_estimate(&v.c, &m, &l, &a);
    TP_CHECK(a.iteration_s == b.iteration_s);
    free(tr);
    moe_env_close(&v);
    if (moe_env_open(&gh, "vista")) return;
    l.dtype = HW_FP8, l.fp8_attention = 1;
    char why[200];
    TP_CHECK_INT(est_fp8_attention_check(gh.y->gpu, &l, why, sizeof why),
                 EST_NO_FP8);
    TP_CHECK_CONTAINS(why, "gh200");
    /* its precision is not what is refused; the estimate refuses it too */
    TP_CHECK_INT(est_precision_check(gh.y->gpu, &l, why, sizeof why),
                 EST_FEASIBLE);
    est_estimate(&gh.c, &m, &l, &a);
    TP_CHECK_INT(a.reason, EST_NO_FP8);
    TP_CHECK_CONTAINS(a.message, "gh200");
    l.fp8_attention = 0;
    TP_CHECK_INT(est_fp8_attention_check(gh.y->gpu, &l, why, sizeof why),
                 EST_FEASIBLE);
    moe_env_close(&gh);
}

/* A GPU that borrows another's fits may add samples of its own for some
 * operators (GB300: cuDNN attention, hwdb/data/measured/gb300): those
 * replace the borrowed fit for that operator only, fitted against its own
 * roofline, so GB300's attention reproduces its own samples while its
 * GEMMs stay B200's efficiencies on its peaks, within 1 % of GB200's (both
 * 2,500 TFLOP/s in 16 bits). */
static void test_own_samples_beside_borrowed(void)
{
    tp_err e = {0};
    hw_db *b = open_builtin();
    if (!b) return;
    const hw_gpu *g3 = hw_find_gpu(b, "gb300", &e);
    const hw_gpu *g2 = hw_find_gpu(b, "gb200", &e);
    TP_CHECK(g3 && g2 && g3->models_like && g3->n_measured > 0);
    est_models *m3 = g3 ? est_models_open(g3, 0, &e) : NULL;
    est_models *m2 = g2 ? est_models_open(g2, 0, &e) : NULL;
    TP_CHECK(m3 && m2);
    if (m3 && m2) {
        est_op a = {0};
        a.kind = EST_OP_ATTN_CUDNN, a.dtype = HW_BF16, a.b = 1;
        a.heads = 128, a.kv_heads = 8, a.head_dim = 128, a.causal = 1;
        a.sq = a.sk = 8192;
        est_time t3, t2;
        est_models_time(m3, &a, &t3);
        est_models_time(m2, &a, &t2);
        /* GB300's own sample at this shape: 1281 / 4778 us */
        TP_CHECK_REL(t3.fwd_s, 1281e-6, 0.05);
        TP_CHECK_REL(t3.bwd_s, 4778e-6, 0.05);
        TP_CHECK(t3.fwd_s < t2.fwd_s);
        est_op gm = est_gemm(HW_BF16, 8192, 8192, 8192);
        est_models_time(m3, &gm, &t3);
        est_models_time(m2, &gm, &t2);
        /* the same efficiencies on nearly the same roofline (SMs and
         * clocks differ a little) */
        TP_CHECK_REL(t3.fwd_s, t2.fwd_s, 0.01);
    }
    est_models_free(m3);
    est_models_free(m2);
    hw_db_free(b);
}

/* Nothing beats its roofline: over many MoE and MLA layouts the
 * estimate is at least the search's time floor (GEMM FLOPs at the dense
 * peak), and the memory at least the memory floor. */
static void test_moe_floors(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model ms[3] = {small_moe(16, 2), deepseek_v3(), small_moe(8, 2)};
    ms[2].first_dense_layers = 1, ms[2].moe_layer_freq = 2;
    ms[2].shared_experts = 2, ms[2].shared_ffn_hidden = 1024;
    int checked = 0;
    for (int mi = 0; mi < 3; mi++) {
        const space_model *m = &ms[mi];
        int64_t tps[] = {1, 2, 4}, pps[] = {1, 2, 4, 8}, eps[] = {1, 2, 8};
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 4; b++)
                for (int c = 0; c < 3; c++)
                    for (int rc = 0; rc < 3; rc++)
                        for (int d = 0; d < SPACE_MOE_DISPATCHER_COUNT; d++) {
                            space_layout l = moe_layout(tps[a], pps[b], 16, eps[c]);
                            l.recompute = rc, l.moe_dispatcher = d;
                            l.vpp = pps[b] > 1 && m->num_layers % (2 * pps[b]) == 0 ? 2 : 1;
                            l.zero = (a + b) % 2 ? SPACE_ZERO_1 : SPACE_ZERO_NONE;
                            if (mi == 1) l.seq = 1024; /* keep it quick */
                            est_result r;
                            est_estimate(&v.c, m, &l, &r);
                            if (r.iteration_s <= 0) continue;
                            double tf = est_time_floor(&v.c, m, &l);
                            TP_CHECK(tf > 0 && r.iteration_s >= tf);
                            TP_CHECK(est_memory_floor(m, &l) <= r.mem.total);
                            TP_CHECK(isfinite(r.iteration_s));
                            checked++;
                        }
    }
    TP_CHECK(checked > 500);
    moe_env_close(&v);
}

/* DeepSeek-V3's layout (DeepSeek-AI, arXiv 2412.19437, section 3.2: PP
 * 16, EP 64 over 8 nodes, ZeRO-1 data parallelism, 2048 H800s, no TP)
 * fits an 80 GB GPU with full recomputation and a 4096-token sequence:
 * the states of a stage's 4 layers (4 local experts of 256 a layer,
 * their optimizer states over 2 expert-DP ranks), the embedding or head
 * and MTP module, and layer inputs. Its routed experts on a rank are
 * 4 x 3 x 7168 x 2048 weights a layer. */
static void test_deepseek_v3_memory(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model m = deepseek_v3();
    space_layout l = moe_layout(1, 16, 128, 64);
    l.gbs = 15360 / 8, l.recompute = SPACE_RECOMPUTE_FULL;
    /* 61 layers on 16 stages: 3 on the first, 4 on each middle one, 2 on
     * the last beside the MTP module (--decoder-first/last-pipeline-num-
     * layers 3 and 2) */
    l.pp_first = 3, l.pp_last = 2;
    est_result r;
    est_estimate(&v.c, &m, &l, &r);
    TP_CHECK_INT(r.reason, EST_FEASIBLE);
    TP_CHECK(r.mem.total < 80e9);
    TP_CHECK(r.mem.total > 15e9);
    double per_layer = 4.0 * 3 * 7168 * 2048;
    double nm = est_stage_moe_layers(&m, &l, r.mem.stage);
    double mtp = r.mem.stage == l.pp - 1 ? 1 : 0;
    TP_CHECK_REL(r.mem.expert_params, (nm + mtp) * per_layer, 1e-12);
    TP_CHECK(r.time.ep_s > 0);
    /* DeepEP sends a token once to each other node holding one of its
     * experts (at most 4 of the 8 under node-limited routing), not once
     * per expert: less exposed dispatch than the all-to-all's 8 copies;
     * without the node limit, more nodes are reached. */
    space_layout fx = l;
    fx.moe_dispatcher = SPACE_MOE_FLEX;
    est_result rf, ru;
    est_estimate(&v.c, &m, &fx, &rf);
    TP_CHECK(rf.time.ep_s > 0 && rf.time.ep_s < r.time.ep_s);
    space_model free_route = m;
    free_route.router_groups = free_route.router_topk_groups = 0;
    est_estimate(&v.c, &free_route, &fx, &ru);
    TP_CHECK(ru.time.ep_s > rf.time.ep_s);
    /* Without recomputation the activations of 16 micro-batches in
     * flight do not fit: refused as memory, with a time. */
    l.recompute = SPACE_RECOMPUTE_NONE;
    est_estimate(&v.c, &m, &l, &r);
    TP_CHECK_INT(r.reason, EST_OUT_OF_MEMORY);
    TP_CHECK(r.iteration_s > 0);
    moe_env_close(&v);
}

/* est_estimate_within: est_estimate's result, byte for byte, where the
 * peak fits the limit (or there is none); above it the same memory and
 * reason, not timed. */
static void test_estimate_within(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model m = deepseek_v3();
    space_layout l = moe_layout(1, 16, 128, 64);
    l.gbs = 15360 / 8, l.recompute = SPACE_RECOMPUTE_FULL;
    l.pp_first = 3, l.pp_last = 2;
    for (int k = 0; k < 2; k++) {
        /* k 0: feasible; k 1: out of the GPU's memory */
        if (k == 1) l.recompute = SPACE_RECOMPUTE_NONE;
        est_result r, w;
        est_estimate(&v.c, &m, &l, &r);
        TP_CHECK_INT(r.reason, k ? EST_OUT_OF_MEMORY : EST_FEASIBLE);
        est_estimate_within(&v.c, &m, &l, INFINITY, &w);
        TP_CHECK(memcmp(&r, &w, sizeof r) == 0);
        est_estimate_within(&v.c, &m, &l, r.mem.total, &w);
        TP_CHECK(memcmp(&r, &w, sizeof r) == 0);
        est_estimate_within(&v.c, &m, &l, 0.99 * r.mem.total, &w);
        TP_CHECK_INT(w.reason, EST_OUT_OF_MEMORY);
        TP_CHECK_INT(w.feasible, 0);
        TP_CHECK(w.iteration_s == 0 && w.message[0] == '\0');
        TP_CHECK(memcmp(&r.mem, &w.mem, sizeof r.mem) == 0);
        /* with its memory made beforehand (est_memory_of, then
         * est_memory_device), the same bytes */
        est_memory mm;
        est_memory_of(&m, &l, &mm);
        est_memory_device(&v.c, &m, &l, &mm);
        est_estimate_with_memory(&v.c, &m, &l, INFINITY, &mm, &w);
        TP_CHECK(memcmp(&r, &w, sizeof r) == 0);
        est_estimate_with_memory(&v.c, &m, &l, 0.99 * r.mem.total, &mm, &w);
        TP_CHECK_INT(w.reason, EST_OUT_OF_MEMORY);
        TP_CHECK(memcmp(&r.mem, &w.mem, sizeof r.mem) == 0);
    }
    /* TP 1 with SP set is estimated without SP: memory made of the layout
     * with SP is not that layout's, and is made again */
    {
        space_layout s1 = moe_layout(1, 1, 8, 1);
        s1.sp = 1;
        space_model d = small_dense();
        est_result r, w;
        est_estimate(&v.c, &d, &s1, &r);
        est_memory mm;
        memset(&mm, 0, sizeof mm);
        mm.total = 1; /* not its memory */
        est_estimate_with_memory(&v.c, &d, &s1, INFINITY, &mm, &w);
        TP_CHECK(memcmp(&r, &w, sizeof r) == 0);
    }
    /* a layout refused for another reason keeps it */
    space_layout bad = l;
    bad.fp8_lib = SPACE_FP8_LIB_TORCHAO, bad.dtype = HW_FP8;
    est_result r, w;
    est_estimate(&v.c, &m, &bad, &r);
    est_estimate_within(&v.c, &m, &bad, 0, &w);
    TP_CHECK(r.reason != EST_OUT_OF_MEMORY && r.reason != EST_FEASIBLE);
    TP_CHECK(memcmp(&r, &w, sizeof r) == 0);
    moe_env_close(&v);
}

/* MoE layers on pipeline ranks: the leading dense layers on the first,
 * every freq-th after them, the ranks' counts summing to the model's,
 * with uneven stages and with interleaving. */
static void test_moe_stage_layers(void)
{
    space_model m = deepseek_v3();
    space_params p;
    space_model_params(&m, 1, &p);
    int64_t pps[] = {1, 2, 4, 16}, vs[] = {1, 1, 1, 1};
    for (int i = 0; i < 4; i++) {
        space_layout l = moe_layout(1, pps[i], 8, 8);
        l.vpp = vs[i];
        if (l.pp > 1) space_split_kind_apply(SPACE_SPLIT_ENDS, 61, &l);
        TP_CHECK_INT(space_layout_check(&m, &l, 0, NULL, 0), SPACE_OK);
        double sum = 0;
        for (int64_t r = 0; r < l.pp; r++) {
            double n = est_stage_moe_layers(&m, &l, r);
            TP_CHECK(n >= 0 && n <= (double)space_rank_layers(&m, &l, r));
            sum += n;
        }
        TP_CHECK_REL(sum, (double)p.moe_layers, 1e-12);
    }
    space_layout l = moe_layout(1, 16, 8, 8);
    l.pp_first = 3, l.pp_last = 2;
    TP_CHECK(est_stage_moe_layers(&m, &l, 0) == 0); /* 3 layers, all dense */
    TP_CHECK(est_stage_moe_layers(&m, &l, 1) == 4);
    TP_CHECK(est_stage_moe_layers(&m, &l, 15) == 2);
    space_model alt = small_moe(8, 2);
    alt.first_dense_layers = 1, alt.moe_layer_freq = 2; /* 1, 3, 5, 7 */
    space_model_params(&alt, 1, &p);
    TP_CHECK_INT(p.moe_layers, 4);
    l = moe_layout(1, 2, 8, 8);
    l.vpp = 2; /* chunks of 2: rank 0 holds layers 0-1 and 4-5 */
    TP_CHECK_REL(est_stage_moe_layers(&alt, &l, 0), 2, 1e-12);
    TP_CHECK_REL(est_stage_moe_layers(&alt, &l, 1), 2, 1e-12);
    space_model d = small_dense();
    TP_CHECK(est_stage_moe_layers(&d, &l, 0) == 0);
}

/* Sliding windows shorten the attention core of local layers; with every
 * layer global, or a window as long as the sequence, nothing changes.
 * MLA is timed, above its roofline, and its attention runs at the mean
 * of its QK and V head sizes. */
static void test_window_mla(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model d = small_dense(), w = d, g = d, big = d;
    w.window = 1024;
    g.window = 1024, g.global_every = 1;
    big.window = 1 << 20;
    space_layout l = moe_layout(1, 1, 8, 1);
    l.seq = 16384, l.gbs = 8;
    est_result rd, rw, rg, rb;
    est_estimate(&v.c, &d, &l, &rd);
    est_estimate(&v.c, &w, &l, &rw);
    est_estimate(&v.c, &g, &l, &rg);
    est_estimate(&v.c, &big, &l, &rb);
    TP_CHECK(rw.time.fwd_s < rd.time.fwd_s);
    TP_CHECK(rg.time.fwd_s == rd.time.fwd_s);
    TP_CHECK(rb.time.fwd_s == rd.time.fwd_s);
    space_model half = w;
    half.global_every = 2;
    est_result rh;
    est_estimate(&v.c, &half, &l, &rh);
    TP_CHECK(rh.time.fwd_s > rw.time.fwd_s && rh.time.fwd_s < rd.time.fwd_s);
    /* MLA: a DeepSeek-V2-Lite-like dense model (no query latent). */
    space_model mla = d;
    mla.heads = 16, mla.kv_heads = 16, mla.kv_lora_rank = 512;
    mla.qk_nope_head_dim = 128, mla.qk_rope_head_dim = 64;
    mla.v_head_dim = 128;
    est_result rm;
    l.seq = 4096, l.gbs = 8;
    est_trace *tr = calloc(1, sizeof *tr);
    if (!tr) return;
    est_ctx ct = v.c;
    ct.trace = tr;
    est_estimate(&ct, &mla, &l, &rm);
    TP_CHECK_INT(rm.reason, EST_FEASIBLE);
    TP_CHECK(rm.iteration_s >= est_time_floor(&v.c, &mla, &l));
    int seen = 0;
    for (int i = 0; i < tr->n; i++)
        if (strstr(tr->row[i].what, "attn") || strstr(tr->row[i].what, "flash")) {
            TP_CHECK_CONTAINS(tr->row[i].shape, "d160");
            seen++;
        }
    TP_CHECK(seen > 0);
    free(tr);
    /* TP 2 with SP gathers the latents, not the hidden state. */
    space_layout t2 = l;
    t2.tp = 2, t2.sp = 1, t2.dp = 4, t2.etp = 0; /* dense: no expert TP */
    est_estimate(&v.c, &mla, &t2, &rm);
    TP_CHECK_INT(rm.reason, EST_FEASIBLE);
    TP_CHECK(rm.time.tp_s > 0);
    moe_env_close(&v);
}

/* The overlaps of the MoE dispatch (space_moe_overlap): the shared
 * experts' and the 1F1B A2A overlap expose no more dispatch time than
 * none and leave the compute as it was; the A2A overlap exposes it all
 * where no forward runs beside a backward (one micro-batch) and keeps a
 * micro-batch more in flight with VPP; the configurations Megatron-Core
 * refuses are refused by name. */
static void test_moe_comm_overlap(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model m = small_moe(16, 2);
    m.shared_experts = 1, m.shared_ffn_hidden = m.ffn_hidden / 4;
    space_layout l = moe_layout(1, 1, 16, 8); /* 8 micro-batches */
    est_result n, s, a;
    est_estimate(&v.c, &m, &l, &n);
    space_layout ls = l, la = l;
    ls.moe_comm_overlap = SPACE_MOE_OVERLAP_SHARED;
    la.moe_comm_overlap = SPACE_MOE_OVERLAP_A2A;
    est_estimate(&v.c, &m, &ls, &s);
    est_estimate(&v.c, &m, &la, &a);
    TP_CHECK_INT(n.reason, EST_FEASIBLE);
    TP_CHECK_INT(s.reason, EST_FEASIBLE);
    TP_CHECK_INT(a.reason, EST_FEASIBLE);
    TP_CHECK(n.time.ep_s > 0);
    TP_CHECK(s.time.ep_s < n.time.ep_s && s.time.ep_s >= 0);
    TP_CHECK(a.time.ep_s < n.time.ep_s && a.time.ep_s >= 0);
    TP_CHECK(s.iteration_s < n.iteration_s && a.iteration_s < n.iteration_s);
    TP_CHECK(s.time.fwd_s == n.time.fwd_s && a.time.bwd_s == n.time.bwd_s);
    /* Without pipelining, a layer more in flight (combined_1f1b.py). */
    TP_CHECK(a.mem.activations > n.mem.activations);
    TP_CHECK(s.mem.activations == n.mem.activations);
    /* One micro-batch: no forward beside a backward, all exposed. */
    space_layout l1 = l, l1a;
    l1.gbs = l1.mbs * l1.dp;
    l1a = l1;
    l1a.moe_comm_overlap = SPACE_MOE_OVERLAP_A2A;
    est_estimate(&v.c, &m, &l1, &n);
    est_estimate(&v.c, &m, &l1a, &a);
    TP_CHECK_INT(a.reason, EST_FEASIBLE);
    TP_CHECK(a.time.ep_s == n.time.ep_s);
    TP_CHECK(a.mem.activations == n.mem.activations);
    /* Interleaved: one forward more in the warm-up. */
    space_layout lv = moe_layout(1, 2, 8, 8), lva;
    lv.vpp = 2;
    lva = lv;
    lva.moe_comm_overlap = SPACE_MOE_OVERLAP_A2A;
    est_estimate(&v.c, &m, &lv, &n);
    est_estimate(&v.c, &m, &lva, &a);
    TP_CHECK_INT(n.reason, EST_FEASIBLE);
    TP_CHECK_INT(a.reason, EST_FEASIBLE);
    TP_CHECK(a.time.ep_s < n.time.ep_s);
    TP_CHECK(a.mem.activations > n.mem.activations);
    /* Refused as Megatron-Core refuses them (transformer_config.py). */
    struct {
        int ov, ep, pp, vpp, recompute, dispatcher, shared;
        const char *needle;
    } bad[] = {
        {SPACE_MOE_OVERLAP_A2A, 1, 1, 1, SPACE_RECOMPUTE_NONE,
         SPACE_MOE_ALLTOALL, 1, "EP > 1"},
        {SPACE_MOE_OVERLAP_A2A, 8, 1, 1, SPACE_RECOMPUTE_FULL,
         SPACE_MOE_ALLTOALL, 1, "full recomputation"},
        {SPACE_MOE_OVERLAP_A2A, 8, 2, 1, SPACE_RECOMPUTE_NONE,
         SPACE_MOE_ALLTOALL, 1, "VPP > 1"},
        {SPACE_MOE_OVERLAP_A2A, 8, 1, 1, SPACE_RECOMPUTE_NONE,
         SPACE_MOE_ALLGATHER, 1, "alltoall or flex"},
        {SPACE_MOE_OVERLAP_SHARED, 8, 1, 1, SPACE_RECOMPUTE_NONE,
         SPACE_MOE_ALLTOALL, 0, "no shared experts"},
        {SPACE_MOE_OVERLAP_SHARED, 8, 1, 1, SPACE_RECOMPUTE_NONE,
         SPACE_MOE_ALLGATHER, 1, "alltoall or flex"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        space_model mb = m;
        if (!bad[i].shared) mb.shared_experts = 0, mb.shared_ffn_hidden = 0;
        space_layout lb = moe_layout(1, bad[i].pp, 16 / bad[i].pp, bad[i].ep);
        lb.vpp = bad[i].vpp, lb.recompute = bad[i].recompute;
        lb.moe_dispatcher = bad[i].dispatcher;
        lb.moe_comm_overlap = bad[i].ov;
        est_estimate(&v.c, &mb, &lb, &a);
        TP_CHECK_INT(a.reason, EST_MOE_LAYOUT);
        TP_CHECK_CONTAINS(a.message, bad[i].needle);
    }
    /* A dense model has no dispatch to overlap. */
    space_model d = small_dense();
    space_layout ld = moe_layout(1, 1, 16, 0);
    ld.moe_comm_overlap = SPACE_MOE_OVERLAP_SHARED;
    est_estimate(&v.c, &d, &ld, &a);
    TP_CHECK_INT(a.reason, EST_MOE_LAYOUT);
    TP_CHECK_CONTAINS(a.message, "dense");
    moe_env_close(&v);
}

/* Selective recomputation's modules rerun their forwards in the backward:
 * the default is core_attn's; "moe" reruns the MoE layers' router,
 * experts and shared expert (less than the whole forward) and their
 * dispatch and combine; "moe_act" only the experts' activation. */
static void test_recompute_modules_time(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model m = small_moe(16, 2);
    m.shared_experts = 1, m.shared_ffn_hidden = m.ffn_hidden / 4;
    space_layout l = moe_layout(1, 1, 16, 8);
    l.recompute = SPACE_RECOMPUTE_SELECTIVE;
    est_result d, c, mo, act;
    est_estimate(&v.c, &m, &l, &d);
    space_layout lc = l, lm = l, la = l;
    lc.recompute_modules = SPACE_RC_CORE_ATTN;
    lm.recompute_modules = SPACE_RC_CORE_ATTN | SPACE_RC_MOE;
    la.recompute_modules = SPACE_RC_CORE_ATTN | SPACE_RC_MOE_ACT;
    est_estimate(&v.c, &m, &lc, &c);
    est_estimate(&v.c, &m, &lm, &mo);
    est_estimate(&v.c, &m, &la, &act);
    TP_CHECK_INT(d.reason, EST_FEASIBLE);
    TP_CHECK_INT(mo.reason, EST_FEASIBLE);
    TP_CHECK(d.iteration_s == c.iteration_s);
    TP_CHECK(d.time.recompute_s == c.time.recompute_s);
    TP_CHECK(mo.time.recompute_s > c.time.recompute_s);
    TP_CHECK(mo.time.recompute_s - c.time.recompute_s < c.time.fwd_s);
    TP_CHECK(mo.time.ep_s > c.time.ep_s);
    TP_CHECK(mo.mem.activations < c.mem.activations);
    TP_CHECK(act.time.recompute_s > c.time.recompute_s);
    TP_CHECK(act.time.recompute_s < mo.time.recompute_s);
    TP_CHECK(act.time.ep_s == c.time.ep_s);
    /* Refused as Megatron-Core refuses them (transformer_config.py). */
    space_layout lo = lm;
    lo.moe_comm_overlap = SPACE_MOE_OVERLAP_A2A;
    est_estimate(&v.c, &m, &lo, &mo);
    TP_CHECK_INT(mo.reason, EST_MOE_LAYOUT);
    TP_CHECK_CONTAINS(mo.message, "recompute module moe");
    lo = l;
    lo.recompute_modules = SPACE_RC_SHARED_EXPERTS;
    lo.moe_comm_overlap = SPACE_MOE_OVERLAP_SHARED;
    est_estimate(&v.c, &m, &lo, &mo);
    TP_CHECK_INT(mo.reason, EST_MOE_LAYOUT);
    TP_CHECK_CONTAINS(mo.message, "shared_experts");
    lo = la;
    lo.dtype = HW_FP8, lo.fp8_recipe = SPACE_FP8_DELAYED;
    est_estimate(&v.c, &m, &lo, &mo);
    TP_CHECK_INT(mo.reason, EST_MOE_LAYOUT);
    TP_CHECK_CONTAINS(mo.message, "delayed scaling");
    moe_env_close(&v);
}

/* The 1F1B A2A overlap under the flex dispatcher: DeepEP's 20 SMs slow
 * the compute beside it, so the exposed share is larger with the GPU's
 * SM count than without one, and by at most 20 / SMs of the dispatch
 * and combine. */
static void test_moe_overlap_sms(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model m = small_moe(16, 2);
    space_layout l = moe_layout(1, 1, 16, 8);
    l.moe_dispatcher = SPACE_MOE_FLEX;
    est_result n, a, a0;
    est_estimate(&v.c, &m, &l, &n);
    l.moe_comm_overlap = SPACE_MOE_OVERLAP_A2A;
    est_estimate(&v.c, &m, &l, &a);
    hw_gpu g = *v.c.gpu;
    g.sm_count = 0;
    est_ctx c0 = v.c;
    c0.gpu = &g;
    est_estimate(&c0, &m, &l, &a0);
    TP_CHECK_INT(a.reason, EST_FEASIBLE);
    TP_CHECK(a.time.ep_s > a0.time.ep_s);
    TP_CHECK(a.time.ep_s - a0.time.ep_s
             <= 20.0 / v.c.gpu->sm_count * n.time.ep_s * (1 + 1e-12));
    moe_env_close(&v);
}

/* DeepEP across nodes (est_deepep_rdma_s): the tokens a rank sends over
 * the network, each token once to each other node holding one of its
 * experts, move at 0.88 of its NIC's line rate, the share DeepEP's
 * benchmark measures on one 400 Gb/s NIC a GPU (docs/legacy.md: 58 GB/s
 * at EP 32 and 51 at EP 64 counted with the sender's own node, 3/4 and
 * 7/8 of which cross the wire: 43.5 and 44.6 GB/s of 50). EP 32 on eos
 * spans 4 nodes: per rank 4096 tokens of h x 2 bytes, each reaching
 * 4 (1 - (3/4)^k) nodes, 3/4 of them others. */
static void test_moe_deepep_rdma(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    const hw_system *y = v.y;
    double nic = y->nic_bw_bytes_per_s * y->nics_per_node / y->gpus_per_node;
    TP_CHECK_REL(est_deepep_rdma_s(y, 44e6), 44e6 / (0.88 * nic), 1e-12);
    TP_CHECK(est_deepep_rdma_s(y, 0) == 0);
    /* 43.5 GB/s (EP 32) and 44.6 (EP 64) on the wire: within 2 % */
    TP_CHECK(fabs(1e9 / est_deepep_rdma_s(y, 1e9) / 43.5e9 - 1) < 0.02);
    TP_CHECK(fabs(1e9 / est_deepep_rdma_s(y, 1e9) / 44.6e9 - 1) < 0.02);
    space_model m = small_moe(32, 4);
    space_layout l = moe_layout(1, 1, 32, 32);
    l.moe_dispatcher = SPACE_MOE_FLEX, l.moe_imbalance = 1;
    est_trace *tr = calloc(1, sizeof *tr);
    if (!tr) return;
    est_ctx ct = v.c;
    ct.trace = tr;
    est_result r;
    est_estimate(&ct, &m, &l, &r);
    TP_CHECK_INT(r.reason, EST_FEASIBLE);
    double tok = 4096.0 * (double)m.hidden * 2;
    double wire = tok * 4 * (1 - pow(0.75, 4)) * 3 / 4;
    int rows = 0;
    for (int i = 0; i < tr->n; i++) {
        const est_trace_row *row = &tr->row[i];
        if (strcmp(row->what, "deepep_rdma")) continue;
        TP_CHECK_REL(atof(row->shape), wire / 1e6, 1e-3);
        TP_CHECK_REL(row->fwd_s, est_deepep_rdma_s(y, wire), 1e-9);
        rows++;
    }
    TP_CHECK(rows > 0);
    free(tr);
    moe_env_close(&v);
}

/* Count the trace rows named `what` (or `what2`) in the MoE layers. */
static int trace_count(const est_trace *tr, const char *what,
                       const char *what2)
{
    int n = 0;
    for (int i = 0; i < tr->n; i++)
        n += !strcmp(tr->row[i].what, what)
             || (what2 && !strcmp(tr->row[i].what, what2));
    return n;
}

/* The router's padding for quantization (--moe-router-padding-for-
 * quantization) pads each expert's count in the routing map: the fp8
 * padding and unpadding copies vanish, the GEMMs keep their padded rows,
 * the time falls. HybridEP's dispatch sorts and pads: no sort, no unsort,
 * no padding copies, less time than DeepEP. A dense model ignores both. */
static void test_moe_router_pad_hybridep(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model m = small_moe(16, 2);
    space_layout l = moe_layout(1, 1, 16, 8);
    l.dtype = HW_FP8;
    est_trace *tr = calloc(2, sizeof *tr);
    if (!tr) return;
    est_ctx ct = v.c;
    est_result r0, r1;
    space_layout p = l;
    p.moe_router_pad = 1;
    ct.trace = &tr[0];
    est_estimate(&ct, &m, &l, &r0);
    ct.trace = &tr[1];
    est_estimate(&ct, &m, &p, &r1);
    TP_CHECK_INT(r0.reason, EST_FEASIBLE);
    TP_CHECK_INT(r1.reason, EST_FEASIBLE);
    TP_CHECK_INT(trace_count(&tr[0], "moe_fp8_pad", "moe_fp8_unpad"), 2);
    TP_CHECK_INT(trace_count(&tr[1], "moe_fp8_pad", "moe_fp8_unpad"), 0);
    TP_CHECK_INT(trace_count(&tr[1], "grouped_gemm", NULL),
                 trace_count(&tr[0], "grouped_gemm", NULL));
    TP_CHECK(r1.iteration_s < r0.iteration_s);
    /* bf16: no padding either way, the same estimate */
    space_layout b = l, bp = p;
    b.dtype = bp.dtype = HW_BF16;
    est_estimate(&v.c, &m, &b, &r0);
    est_estimate(&v.c, &m, &bp, &r1);
    TP_CHECK(r0.iteration_s == r1.iteration_s);
    /* HybridEP against DeepEP, fp8 */
    space_layout d = l, hy = l;
    d.moe_dispatcher = hy.moe_dispatcher = SPACE_MOE_FLEX;
    hy.moe_flex_backend = SPACE_MOE_FLEX_HYBRIDEP;
    ct.trace = &tr[0];
    est_estimate(&ct, &m, &d, &r0);
    ct.trace = &tr[1];
    est_estimate(&ct, &m, &hy, &r1);
    TP_CHECK_INT(r0.reason, EST_FEASIBLE);
    TP_CHECK_INT(r1.reason, EST_FEASIBLE);
    TP_CHECK_INT(trace_count(&tr[0], "moe_sort", "moe_unsort"), 2);
    TP_CHECK_INT(trace_count(&tr[1], "moe_sort", "moe_unsort"), 0);
    TP_CHECK_INT(trace_count(&tr[0], "moe_fp8_pad", "moe_fp8_unpad"), 2);
    TP_CHECK_INT(trace_count(&tr[1], "moe_fp8_pad", "moe_fp8_unpad"), 0);
    TP_CHECK(r1.iteration_s < r0.iteration_s);
    /* the backend of the alltoall dispatcher means nothing */
    space_layout a = l, ah = l;
    ah.moe_flex_backend = SPACE_MOE_FLEX_HYBRIDEP;
    est_estimate(&v.c, &m, &a, &r0);
    est_estimate(&v.c, &m, &ah, &r1);
    TP_CHECK(r0.iteration_s == r1.iteration_s);
    /* dense: unchanged */
    space_model dm = small_dense();
    space_layout dl = moe_layout(1, 1, 16, 1), dx;
    dl.dtype = HW_FP8;
    dx = dl;
    dx.moe_router_pad = 1, dx.moe_flex_backend = SPACE_MOE_FLEX_HYBRIDEP;
    est_estimate(&v.c, &dm, &dl, &r0);
    est_estimate(&v.c, &dm, &dx, &r1);
    TP_CHECK(r0.iteration_s > 0);
    TP_CHECK(r0.iteration_s == r1.iteration_s);
    TP_CHECK(r0.mem.total == r1.mem.total);
    free(tr);
    moe_env_close(&v);
}

/* ---- memory savers' time and refusals (offload.c, iter.c) ------------- */

/* Transformer Engine's layer offload, against the schedule worked by hand
 * (DefaultOffloadSynchronizer: the offload of layer i starts before layer
 * i + 1's forward and must be done before layer L - n + i's; its reload
 * starts before layer L - 1 - n + i's backward and must be done before
 * layer i's). */
static void test_layer_offload_stall(void)
{
    double f, b;
    /* a copy shorter than a layer, a window of L - n - 1 >= 1 layers:
     * nothing exposed */
    est_layer_offload_stall(4, 2, 1, 2, 0.9, &f, &b);
    TP_CHECK(f == 0 && b == 0);
    /* n = L - 1 (TE warns it prevents overlap): each copy waited for in
     * full, forward and backward */
    est_layer_offload_stall(4, 3, 1, 2, 0.5, &f, &b);
    TP_CHECK_REL(f, 1.5, 1e-12);
    TP_CHECK_REL(b, 1.5, 1e-12);
    /* one layer, a copy of 2.5 layers' forward: its deadline is 2 layers
     * after it starts, 0.5 exposed; the reload has 2 backward layers of 2 */
    est_layer_offload_stall(4, 1, 1, 2, 2.5, &f, &b);
    TP_CHECK_REL(f, 0.5, 1e-12);
    TP_CHECK(b == 0);
    /* none offloaded, or a free link */
    est_layer_offload_stall(4, 0, 1, 2, 5, &f, &b);
    TP_CHECK(f == 0 && b == 0);
}

/* The optimizer step under the savers (iter.c saver_step): the GPU's Adam
 * scaled by the bytes it moves; the host's share through the host link
 * and the host's memory (est_host_bw). */
static void test_saver_step_time(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model m = small_dense();
    space_layout l = moe_layout(1, 1, 8, 0);
    l.etp = 0;
    est_result a, b;
    est_estimate(&v.c, &m, &l, &a);
    TP_CHECK_INT(a.reason, EST_FEASIBLE);
    TP_CHECK(a.time.offload_s == 0);
    l.pa_optimizer = 1;
    l.exp_avg_dtype = l.exp_avg_sq_dtype = SPACE_OPT_BF16;
    /* fp32 gradient read (4), remainders and the bf16 parameter (2 + 2,
     * 2 + 2), bf16 m and v (4 + 4) against Megatron's 4 + 24 + 6 */
    TP_CHECK_REL(est_opt_traffic_ratio(&l), 20.0 / 34, 1e-12);
    est_estimate(&v.c, &m, &l, &b);
    TP_CHECK_INT(b.reason, EST_FEASIBLE);
    TP_CHECK_REL(b.time.optimizer_s, a.time.optimizer_s * 20.0 / 34, 1e-12);
    TP_CHECK(b.mem.optimizer < a.mem.optimizer);
    /* the host link: min(PCIe Gen5 x16's 64 GB/s, 614.4 / 8 GB/s) */
    TP_CHECK_REL(est_host_bw(&v.c), 64e9, 1e-12);
    /* everything on the host, copies overlapped: the host's memory
     * traffic, 40 bytes a parameter at 614.4 / 8 GB/s */
    l.exp_avg_dtype = l.exp_avg_sq_dtype = SPACE_OPT_FP32;
    l.opt_offload = 1, l.opt_offload_overlap = 1;
    est_estimate(&v.c, &m, &l, &b);
    TP_CHECK_INT(b.reason, EST_FEASIBLE);
    double n = b.mem.params / 8;
    TP_CHECK_REL(b.time.optimizer_s, 40 * n / (614.4e9 / 8), 1e-9);
    TP_CHECK(b.mem.optimizer == 0);
    TP_CHECK_REL(b.mem.host, 16 * n, 1e-9);
    /* not overlapped: D2H (4 bytes), the CPU step (34), H2D (2) */
    l.opt_offload_overlap = 0;
    est_estimate(&v.c, &m, &l, &b);
    TP_CHECK_REL(b.time.optimizer_s,
                 6 * n / 64e9 + 34 * n / (614.4e9 / 8), 1e-9);
    moe_env_close(&v);
}

/* The host's side (host.c): the calls a layer issues per pass, counted
 * per stack (Megatron-Core + TE: a TE module 2.7 calls, TE issue #2053's
 * TE/torch Linear CPU time), less what CUDA graphs capture; the GPU waits
 * max(0, host - gpu) plus two calls per sync. */
static void test_host_model(void)
{
    space_model d = small_dense(), m = small_moe(64, 8);
    space_layout l = moe_layout(1, 1, 8, 8);
    l.moe_permute_fusion = 0;
    l.moe_router_fusion = 0;
    est_host_layer h;
    /* a dense layer: 3 TE modules + RoPE x2 + bias-dropout-add, then 2 TE
     * modules + SwiGLU + bias-dropout-add */
    est_host_units(&d, &l, 0, &h);
    TP_CHECK_REL(h.fwd_units, 3 * 2.7 + 3 + 2 * 2.7 + 2, 1e-12);
    TP_CHECK(h.bwd_units == h.fwd_units && h.syncs == 0 && h.graphs == 0);
    /* whole-layer graphs: one launch a pass */
    l.cuda_graph = SPACE_CG_TE;
    est_host_units(&d, &l, 0, &h);
    TP_CHECK_REL(h.fwd_units, 1, 1e-12);
    TP_CHECK_INT(h.graphs, 1);
    l.cuda_graph = SPACE_CG_FULL_ITERATION;
    est_host_units(&d, &l, 0, &h);
    TP_CHECK(h.fwd_units == 0 && h.graphs == 0);
    /* an MoE layer, 8 local experts, unfused permute: the dispatcher
     * syncs once a forward */
    l.cuda_graph = SPACE_CG_NONE;
    est_host_units(&m, &l, 1, &h);
    double attn = 3 * 2.7 + 3, router = 2.7 + 14, pre = 10,
           post = 16 + 2 * 2.7 + 2 + 8 * 1;
    TP_CHECK_REL(h.fwd_units, attn + router + pre + post, 1e-12);
    TP_CHECK_REL(h.pre_units, attn + router + pre, 1e-12);
    TP_CHECK_INT(h.syncs, 1);
    l.moe_permute_fusion = 1;
    est_host_units(&m, &l, 1, &h);
    TP_CHECK_REL(h.fwd_units, attn + router + pre + post - 10, 1e-12);
    /* TE's fused router: the GEMM, its cast, three fused kernels, the
     * tokens per expert's sum and all-reduce (7 for 14) */
    l.moe_router_fusion = 1;
    est_host_units(&m, &l, 1, &h);
    TP_CHECK_REL(h.fwd_units, attn + router + pre + post - 10 - 7, 1e-12);
    l.moe_router_fusion = 0;
    /* attn, moe_router, moe_preprocess graphed: three launches; the
     * dispatch, the experts and the sync stay */
    l.moe_permute_fusion = 0;
    l.cuda_graph = SPACE_CG_TE;
    l.cuda_graph_modules =
        SPACE_CGM_ATTN | SPACE_CGM_MOE_ROUTER | SPACE_CGM_MOE_PREPROCESS;
    est_host_units(&m, &l, 1, &h);
    TP_CHECK_REL(h.fwd_units, post + 3, 1e-12);
    TP_CHECK_REL(h.pre_units, 3, 1e-12);
    TP_CHECK_INT(h.syncs, 1);
    /* the MoE MLP graphed (drop-and-pad): no sync */
    l.cuda_graph_modules = SPACE_CGM_ATTN | SPACE_CGM_MOE;
    est_host_units(&m, &l, 1, &h);
    TP_CHECK_REL(h.fwd_units, 2, 1e-12);
    TP_CHECK_INT(h.syncs, 0);
    /* PyTorch eager and Megatron-LM 2021 have no graphs to use; PyTorch's
     * block measured at 29.7 units without FSDP2's 3, the backward 3.12x,
     * compiled 50.6 and 2.17x (bench/data/moe_h200); Megatron's backward
     * issues as many as its forward */
    TP_CHECK_REL(h.bwd_units, h.fwd_units, 1e-12);
    space_framework_software(SPACE_FW_TORCHTITAN, &l);
    l.eager = 1;
    est_host_units(&d, &l, 0, &h);
    TP_CHECK_REL(h.fwd_units, 29.7 + 3, 1e-12);
    TP_CHECK_REL(h.bwd_units, 3.12 * (29.7 + 3), 1e-12);
    l.eager = 0;
    est_host_units(&d, &l, 0, &h);
    TP_CHECK_REL(h.fwd_units, 50.6 + 3, 1e-12);
    TP_CHECK_REL(h.bwd_units, 2.17 * (50.6 + 3), 1e-12);
    /* the race: the host's excess, plus two calls a sync */
    TP_CHECK_REL(est_host_exposed(3e-3, 1e-3, 0, 1e-5, 0), 2e-3, 1e-12);
    TP_CHECK_REL(est_host_exposed(1e-3, 3e-3, 1, 1e-5, 0), 2e-5, 1e-12);
    /* CUDA_LAUNCH_BLOCKING=1: no race, the GPU idles for every call */
    TP_CHECK_REL(est_host_exposed(1e-3, 3e-3, 0, 1e-5, 1), 1e-3, 1e-12);
    TP_CHECK_REL(est_host_exposed(3e-3, 1e-3, 1, 1e-5, 1), 3e-3, 1e-12);
}

/* A small-active MoE on Grace hosts waits for its host, and CUDA graphs
 * of its attention, router and preprocess take most of that away; the
 * term is in the breakdown, which still sums to the iteration. */
static void test_host_time(void)
{
    moe_env v;
    if (moe_env_open(&v, "gb200-nvl72")) return;
    TP_CHECK_REL(est_host_call_s(&v.c), 37.08e-6, 1e-12);
    space_model m = small_moe(64, 8);
    m.expert_ffn_hidden = 512;
    space_layout l = moe_layout(1, 1, 8, 8);
    l.seq = 2048;
    est_result a, b;
    est_estimate(&v.c, &m, &l, &a);
    TP_CHECK_INT(a.reason, EST_FEASIBLE);
    TP_CHECK(a.time.host_s > 0);
    const est_breakdown *t = &a.time;
    double sum = t->fwd_s + t->bwd_s + t->recompute_s + t->tp_s + t->cp_s
                 + t->pp_p2p_s + t->bubble_s + t->dp_s + t->optimizer_s
                 + t->ep_s + t->offload_s + t->host_s;
    TP_CHECK_REL(sum, a.iteration_s, 1e-9);
    l.cuda_graph = SPACE_CG_TE;
    l.cuda_graph_modules =
        SPACE_CGM_ATTN | SPACE_CGM_MOE_ROUTER | SPACE_CGM_MOE_PREPROCESS;
    est_estimate(&v.c, &m, &l, &b);
    TP_CHECK_INT(b.reason, EST_FEASIBLE);
    TP_CHECK(b.time.host_s < a.time.host_s);
    TP_CHECK(b.iteration_s < a.iteration_s);
    /* everything but the host's side is the same */
    TP_CHECK_REL(b.time.fwd_s, a.time.fwd_s, 1e-12);
    moe_env_close(&v);
}

/* A scaled recipe's dense fp8 GEMMs take ff (forward) and fb (backward)
 * times the per-tensor fp8 GEMM of the same shape on system's GPU; the
 * casts are the recipe's own. */
static void check_scaled_gemm(const char *system, space_fp8_recipe recipe,
                              double ff, double fb)
{
    moe_env v;
    if (moe_env_open(&v, system)) return;
    space_model m = small_moe(16, 2);
    est_trace *tr = calloc(2, sizeof *tr);
    if (!tr) {
        moe_env_close(&v);
        return;
    }
    double sum[2][2] = {{0}};
    int rows[2] = {0};
    for (int i = 0; i < 2; i++) {
        space_layout l = moe_layout(1, 1, 8, 8);
        l.dtype = HW_FP8;
        l.fp8_recipe = i ? recipe : SPACE_FP8_TENSORWISE;
        est_ctx c = v.c;
        c.trace = &tr[i];
        est_result r;
        est_estimate(&c, &m, &l, &r);
        TP_CHECK_INT(r.reason, EST_FEASIBLE);
        for (int k = 0; k < tr[i].n; k++) {
            const est_trace_row *w = &tr[i].row[k];
            /* dense GEMMs: MXFP8 pads each expert's rows to 32, not
             * 16, so the grouped ones differ in shape too */
            if (strcmp(w->what, "gemm") || !strstr(w->shape, "fp8"))
                continue;
            sum[i][0] += w->fwd_s, sum[i][1] += w->bwd_s;
            rows[i]++;
        }
    }
    TP_CHECK(rows[0] > 0);
    TP_CHECK_INT(rows[1], rows[0]);
    TP_CHECK_REL(sum[1][0], ff * sum[0][0], 1e-9);
    TP_CHECK_REL(sum[1][1], fb * sum[0][1], 1e-9);
    free(tr);
    moe_env_close(&v);
}

/* MXFP8 GEMMs take 1.051x the per-tensor fp8 GEMM of the same shape
 * (TransformerEngine's GEMM profiling guide on B300, pre-quantised:
 * 7.161 against 6.812 ms a layer); blockwise fp8 on Hopper 1.136x
 * forward and 1.296x backward (cuBLASLt on an H200, bench/data/
 * fp8_h200: 1 x 128 by 128 x 128 for the forward and the data gradient,
 * 1 x 128 by 1 x 128, 1.455, for the weight gradient). */
static void test_mxfp8_gemm(void)
{
    check_scaled_gemm("gb200-nvl72", SPACE_FP8_MXFP8, 1.051, 1.051);
    check_scaled_gemm("eos", SPACE_FP8_BLOCKWISE, 1.136, 1.296);
}

/* Activation offloading costs only what its copies outlast, and shows
 * as its own term. */
static void test_activation_offload_time(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model m = small_dense();
    space_layout l = moe_layout(1, 1, 8, 0);
    l.etp = 0;
    est_result a, b;
    est_estimate(&v.c, &m, &l, &a);
    double prev = 0;
    for (int64_t n = 1; n < m.num_layers; n++) {
        l.act_offload_layers = n;
        est_estimate(&v.c, &m, &l, &b);
        TP_CHECK_INT(b.reason, EST_FEASIBLE);
        TP_CHECK(b.time.offload_s >= prev);
        prev = b.time.offload_s;
        TP_CHECK(b.mem.activations < a.mem.activations);
        TP_CHECK(fabs(b.iteration_s - a.iteration_s - b.time.offload_s)
                 < 1e-9 * a.iteration_s);
    }
    /* 7 of 8 layers leave no layer to hide the copies under */
    TP_CHECK(prev > 0);
    l.act_offload_layers = 0;
    l.offload_modules = SPACE_OFF_QKV_LINEAR | SPACE_OFF_CORE_ATTN;
    est_estimate(&v.c, &m, &l, &b);
    TP_CHECK_INT(b.reason, EST_FEASIBLE);
    TP_CHECK(b.mem.activations < a.mem.activations);
    TP_CHECK(b.time.offload_s >= 0);
    moe_env_close(&v);
}

/* Megatron-Core's refusals, by name (EST_SAVER), and what hwdb cannot
 * time. */
static void test_saver_refusals(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model m = small_dense();
    space_layout base = moe_layout(1, 1, 8, 0);
    base.etp = 0;
    est_result r;
    space_layout l;
#define REFUSED(stmt, text)                                                   \
    do {                                                                      \
        l = base;                                                             \
        stmt;                                                                 \
        est_estimate(&v.c, &m, &l, &r);                                       \
        TP_CHECK_INT(r.reason, EST_SAVER);                                    \
        TP_CHECK_CONTAINS(r.message, text);                                   \
    } while (0)
    REFUSED(l.exp_avg_dtype = SPACE_OPT_BF16, "exp_avg_dtype can only be fp32");
    REFUSED((l.opt_offload = 1), "needs --use-precision-aware-optimizer");
    REFUSED((l.pa_optimizer = 1, l.zero = SPACE_ZERO_NONE),
            "only supported with distributed optimizer");
    REFUSED((l.pa_optimizer = 1, l.main_grads_dtype = SPACE_OPT_BF16,
             l.grad_bytes = 4),
            "--accumulate-allreduce-grads-in-fp32");
    REFUSED((l.pa_optimizer = 1, l.opt_offload = 1,
             l.exp_avg_dtype = SPACE_OPT_BF16),
            "no effect under --optimizer-cpu-offload");
    REFUSED((l.pa_optimizer = 1, l.opt_offload = 1, l.dtype = HW_FP8,
             l.fp8_recipe = SPACE_FP8_TENSORWISE, l.fp8_params = 1),
            "--fp8-recipe delayed");
    REFUSED((l.act_offload_layers = 8), "layers less than 8");
    REFUSED((l.act_offload_layers = 2, l.pp = 2, l.dp = 4),
            "no support for Pipeline parallelism");
    REFUSED((l.act_offload_layers = 2, l.recompute = SPACE_RECOMPUTE_FULL),
            "does not work when activation recomputation");
    REFUSED((l.act_offload_layers = 2,
             l.offload_modules = SPACE_OFF_CORE_ATTN),
            "cannot be enabled with cpu_offloading");
    REFUSED((l.offload_modules = SPACE_OFF_ATTN_PROJ),
            "attn_proj cannot be set to offload_modules alone");
    REFUSED((l.offload_modules = SPACE_OFF_EXPERT_FC1), "is dense");
    REFUSED((l.offload_modules = SPACE_OFF_ATTN_NORM), "IdentityOp");
    REFUSED((l.pa_optimizer = 1, l.framework = SPACE_FW_TORCHTITAN),
            "Megatron-Core's");
#undef REFUSED
    TP_CHECK_STR(est_reason_names[EST_SAVER], "saver_refused");
    moe_env_close(&v);
    /* a system without the host's memory bandwidth in hwdb, and a host
     * too small for what is offloaded (Vista: 120 GB a GH200 node) */
    moe_env w;
    if (moe_env_open(&w, "jean-zay-a100")) return;
    l = base;
    l.pa_optimizer = 1, l.opt_offload = 1;
    est_estimate(&w.c, &m, &l, &r);
    TP_CHECK_INT(r.reason, EST_SAVER);
    TP_CHECK_CONTAINS(r.message, "host.memory_bw_gb_per_s");
    moe_env_close(&w);
    if (moe_env_open(&w, "vista")) return;
    space_model big = small_dense();
    big.num_layers = 96, big.hidden = 8192, big.heads = 64, big.kv_heads = 8;
    big.ffn_hidden = 28672;
    l = base;
    l.dp = 1, l.gbs = 1, l.seq = 1024, l.pp = 8; /* 8 nodes of 1 GPU */
    l.pa_optimizer = 1, l.opt_offload = 1;
    est_estimate(&w.c, &big, &l, &r);
    TP_CHECK_INT(r.reason, EST_SAVER);
    TP_CHECK_CONTAINS(r.message, "the host memory");
    moe_env_close(&w);
}

/* Micro-batch groups of N: the warm-up holds more, the bubble is the
 * schedule's own (each chunk's forward has its input in time when N >=
 * PP), and the micro-batches need not be a multiple of PP. */
/* The schedules' bubbles (est_pp_bubble) at the papers' closed forms: with
 * W = 0 the zero-bubble ones are 1F1B's (interleaved's for 2 chunks); at
 * F = B - W = W (t = F + B = 3W) ZB-H1 is a third of 1F1B's (Qi et al.
 * section 2.1) and ZB-V none; DualPipe's Table 2 row as given. */
static void test_pp_schedule_bubbles(void)
{
    space_layout l = {0};
    l.pp = 8, l.vpp = 1;
    double t = 3.0, w = 1.0, b = 2.0;
    l.pp_schedule = SPACE_PP_1F1B;
    double f1 = est_pp_bubble(&l, t, w, b, t);
    TP_CHECK_REL(f1, 7 * 3.0, 1e-12);
    l.pp_schedule = SPACE_PP_ZB1P;
    TP_CHECK_REL(est_pp_bubble(&l, t, w, b, t), f1 / 3, 1e-12);
    TP_CHECK_REL(est_pp_bubble(&l, t, 0, b, t), f1, 1e-12);
    l.vpp = 2; /* looped: a chunk's terms */
    TP_CHECK_REL(est_pp_bubble(&l, t, 0, b, t), f1 / 2, 1e-12);
    l.pp_schedule = SPACE_PP_ZBV;
    TP_CHECK(est_pp_bubble(&l, t, w, b, t) == 0);
    TP_CHECK_REL(est_pp_bubble(&l, t, 0, b, t), f1 / 2, 1e-12);
    TP_CHECK(est_pp_bubble(&l, t, 2 * w, b, t) == 0); /* never negative */
    l.vpp = 1, l.pp_schedule = SPACE_PP_DUALPIPE;
    /* (PP / 2 - 1)(F&B + B - 3W) = 3 (2.5 + 2 - 3) */
    TP_CHECK_REL(est_pp_bubble(&l, t, w, b, 2.5), 3 * 1.5, 1e-12);
    l.vpp = 2, l.pp_schedule = SPACE_PP_DUALPIPEV;
    TP_CHECK_REL(est_pp_bubble(&l, t, w, b, 2.5), 7 * 1.5 / 2, 1e-12);
}

/* Megatron-Core's exposed DP bucket (est_dp_tail_params): the bucket that
 * holds the word embedding, at least bucket_size = max(40 M, 1 M x DP x
 * CP) parameters; 0 where Megatron-Core's buckets do not apply. */
static void test_dp_tail_params(void)
{
    space_layout l = {0};
    l.framework = SPACE_FW_MEGATRON_CORE, l.zero = SPACE_ZERO_1;
    l.tp = 1, l.dp = 16, l.cp = 1;
    /* Llama 3.1 8B: 128,256 x 4,096 = 525,336,576, over 13 buckets */
    TP_CHECK_REL(est_dp_tail_params(&l, 4096, 128256), 525336576.0, 1e-15);
    l.tp = 4; /* vocab-parallel: a quarter on each TP rank */
    TP_CHECK_REL(est_dp_tail_params(&l, 4096, 128256), 131334144.0, 1e-15);
    l.tp = 1, l.dp = 64, l.cp = 2; /* the bucket: 128 M > 32000 x 2048 */
    TP_CHECK_REL(est_dp_tail_params(&l, 2048, 32000), 128e6, 1e-15);
    l.dp = 8, l.cp = 1; /* the 40 M floor */
    TP_CHECK_REL(est_dp_tail_params(&l, 1024, 32000), 40e6, 1e-15);
    l.zero = SPACE_ZERO_NONE; /* DDP without the distributed optimizer */
    TP_CHECK_REL(est_dp_tail_params(&l, 1024, 32000), 40e6, 1e-15);
    l.zero = SPACE_ZERO_3;
    TP_CHECK(est_dp_tail_params(&l, 1024, 32000) == 0);
    l.zero = SPACE_ZERO_1, l.framework = SPACE_FW_TORCHTITAN;
    TP_CHECK(est_dp_tail_params(&l, 4096, 128256) == 0);
}

/* End to end on a small model: the schedules' rules, and their time
 * against 1F1B's with the same layout. */
static void test_pp_schedule_time(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model m = small_dense();
    space_layout l = moe_layout(1, 4, 2, 0);
    l.etp = 0, l.vpp = 2, l.gbs = 2 * 8;
    est_result a, r;
    est_estimate(&v.c, &m, &l, &a);
    TP_CHECK_INT(a.reason, EST_FEASIBLE);
    /* the zero-bubble schedules' bubble is smaller, the rest the same */
    l.pp_schedule = SPACE_PP_ZB1P;
    est_estimate(&v.c, &m, &l, &r);
    TP_CHECK_INT(r.reason, EST_FEASIBLE);
    TP_CHECK(r.time.bubble_s < a.time.bubble_s);
    TP_CHECK(r.time.fwd_s == a.time.fwd_s && r.time.bwd_s == a.time.bwd_s);
    l.pp_schedule = SPACE_PP_ZBV;
    est_estimate(&v.c, &m, &l, &r);
    TP_CHECK_INT(r.reason, EST_FEASIBLE);
    TP_CHECK(r.time.bubble_s < a.time.bubble_s);
    /* ZBV and DualPipeV: 2 chunks a rank exactly */
    l.vpp = 1;
    est_estimate(&v.c, &m, &l, &r);
    TP_CHECK_INT(r.reject, SPACE_REJECT_PP_SCHEDULE);
    TP_CHECK_CONTAINS(r.message, "exactly 2 virtual stages");
    /* DualPipeV: micro-batches >= 2 PP (8 here) */
    l.vpp = 2, l.pp_schedule = SPACE_PP_DUALPIPEV, l.gbs = 2 * 4;
    est_estimate(&v.c, &m, &l, &r);
    TP_CHECK_INT(r.reject, SPACE_REJECT_PP_SCHEDULE);
    TP_CHECK_CONTAINS(r.message, "DualPipeV needs micro-batches");
    /* DualPipe: VPP 1, even PP, even micro-batches >= 2 PP */
    l.pp_schedule = SPACE_PP_DUALPIPE, l.vpp = 1, l.gbs = 2 * 8;
    est_estimate(&v.c, &m, &l, &r);
    TP_CHECK_INT(r.reason, EST_FEASIBLE);
    TP_CHECK(r.mem.params > a.mem.params * 1.5); /* both stages' */
    l.gbs = 2 * 6;
    est_estimate(&v.c, &m, &l, &r);
    TP_CHECK_INT(r.reject, SPACE_REJECT_PP_SCHEDULE);
    /* no schedule without a pipeline; PyTorch's refuse compiled stages */
    l.gbs = 2 * 8, l.pp_schedule = SPACE_PP_ZB1P;
    space_framework_software(SPACE_FW_TORCHTITAN, &l);
    l.eager = 0;
    est_estimate(&v.c, &m, &l, &r);
    TP_CHECK_INT(r.reject, SPACE_REJECT_PP_SCHEDULE);
    TP_CHECK_CONTAINS(r.message, "compiled");
    moe_env_close(&v);
}

static void test_microbatch_group_time(void)
{
    moe_env v;
    if (moe_env_open(&v, "eos")) return;
    space_model m = small_dense();
    space_layout l = moe_layout(1, 4, 2, 0);
    l.etp = 0, l.vpp = 2, l.gbs = 2 * 8;
    est_result a, b;
    est_estimate(&v.c, &m, &l, &a);
    TP_CHECK_INT(a.reason, EST_FEASIBLE);
    l.mb_group = 8;
    est_estimate(&v.c, &m, &l, &b);
    TP_CHECK_INT(b.reason, EST_FEASIBLE);
    TP_CHECK(b.time.bubble_s == a.time.bubble_s);
    TP_CHECK(b.mem.activations > a.mem.activations);
    /* 10 micro-batches with PP 4: refused by default, allowed in groups
     * of 5 (the last group 0), refused in groups of 4 (2 left) */
    l.gbs = 2 * 10, l.mb_group = 0;
    est_estimate(&v.c, &m, &l, &b);
    TP_CHECK_INT(b.reject, SPACE_REJECT_VPP_MICRO);
    l.mb_group = 5;
    est_estimate(&v.c, &m, &l, &b);
    TP_CHECK_INT(b.reason, EST_FEASIBLE);
    l.mb_group = 4;
    est_estimate(&v.c, &m, &l, &b);
    TP_CHECK_INT(b.reject, SPACE_REJECT_VPP_MICRO);
    TP_CHECK_CONTAINS(b.message, "groups of 4");
    moe_env_close(&v);
}

/* The error band (band.c): the narrowest basis with enough runs, the
 * band its runs' mean absolute error, the nearest run of that basis, a
 * wider basis for a GPU without runs of the stack, none of another kind
 * counted, the same answer twice. */
static void test_error_band(void)
{
    TP_CHECK(est_n_validated_runs > 100);
    hw_db *b = open_builtin();
    if (!b) return;
    tp_err e = {0};
    const space_model *m = space_preset_find("llama3-70b", &e);
    const hw_gpu *h100 = hw_find_gpu(b, "h100-sxm", &e);
    const hw_gpu *mi = hw_find_gpu(b, "mi300x", &e);
    TP_CHECK(m && h100 && mi);
    if (!m || !h100 || !mi) {
        hw_db_free(b);
        return;
    }
    space_layout l = {0};
    l.tp = 8, l.cp = 1, l.pp = 2, l.dp = 8, l.vpp = 1, l.ep = 1;
    l.mbs = 1, l.gbs = 128, l.seq = 8192, l.dtype = HW_BF16;
    l.framework = SPACE_FW_MEGATRON_CORE;
    est_band x, y;
    est_error_band(h100, m, &l, 128, &x);
    TP_CHECK(x.basis == EST_BAND_STACK_FAMILY);
    TP_CHECK(x.runs >= EST_BAND_MIN_RUNS);
    TP_CHECK(x.mape_pct > 0 && x.mape_pct <= x.worst_pct);
    TP_CHECK(fabs(x.signed_pct) <= x.mape_pct);
    TP_CHECK(x.nearest && !x.nearest->moe
             && x.nearest->stack == SPACE_STACK_MEGATRON_CORE
             && strcmp(x.nearest->family, "h100-sxm") == 0);
    /* the band is the mean absolute error of exactly the basis' runs */
    double sa = 0;
    int k = 0;
    for (int i = 0; i < est_n_validated_runs; i++) {
        const est_validated_run *r = &est_validated_runs[i];
        if (!r->moe && r->stack == SPACE_STACK_MEGATRON_CORE
            && strcmp(r->family, "h100-sxm") == 0)
            sa += fabs(r->err_pct), k++;
    }
    TP_CHECK(k == x.runs);
    TP_CHECK_REL(x.mape_pct, sa / k, 1e-12);
    est_error_band(h100, m, &l, 128, &y);
    TP_CHECK(memcmp(&x, &y, sizeof x) == 0);
    /* no published run on an MI300X: a wider basis */
    est_error_band(mi, m, &l, 128, &y);
    TP_CHECK(y.basis == EST_BAND_STACK || y.basis == EST_BAND_ALL);
    TP_CHECK(y.nearest && strcmp(y.nearest->family, "mi300x") != 0);
    /* an MoE model is banded on MoE runs only */
    const space_model *moe = space_preset_find("mixtral-8x7b", &e);
    TP_CHECK(moe != NULL);
    if (moe) {
        est_error_band(h100, moe, &l, 128, &y);
        TP_CHECK(y.basis != EST_BAND_NONE && y.nearest && y.nearest->moe);
    }
    hw_db_free(b);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_est FIXTURES BUILTIN SCRATCH\n");
        return 2;
    }
    fixtures = argv[1];
    builtin = argv[2];
    scratch = argv[3];
    mkdir(scratch, 0755);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/hw/good", fixtures);
    const char *dirs[] = {dir};
    tp_err e = {0};
    db = hw_db_open_dirs(dirs, 1, &e);
    if (!db) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    TP_RUN(test_work);
    TP_RUN(test_error_band);
    TP_RUN(test_roofline);
    TP_RUN(test_fit);
    TP_RUN(test_seed_shapes);
    TP_RUN(test_csv_errors);
    TP_RUN(test_hygiene);
    TP_RUN(test_builtin_samples);
    TP_RUN(test_models_borrowed);
    TP_RUN(test_fp4_gemm);
    TP_RUN(test_mxfp8_gemm);
    TP_RUN(test_models);
    TP_RUN(test_floor_sweep);
    TP_RUN(test_memory);
    TP_RUN(test_kernel_eff);
    TP_RUN(test_kernel_eff_prior);
    TP_RUN(test_fp8_attention);
    TP_RUN(test_own_samples_beside_borrowed);
    TP_RUN(test_moe_one_expert);
    TP_RUN(test_checkpoint_early_stop);
    TP_RUN(test_moe_grouped_floor);
    TP_RUN(test_moe_unfused_permute);
    TP_RUN(test_moe_dispatch);
    TP_RUN(test_moe_flex_fused_permute);
    TP_RUN(test_moe_deepep_rdma);
    TP_RUN(test_nvl72_tables_shared);
    TP_RUN(test_moe_refusals);
    TP_RUN(test_moe_zero3_gathers);
    TP_RUN(test_moe_floors);
    TP_RUN(test_moe_fp8_one_expert);
    TP_RUN(test_moe_fp8);
    TP_RUN(test_deepseek_v3_memory);
    TP_RUN(test_estimate_within);
    TP_RUN(test_moe_stage_layers);
    TP_RUN(test_window_mla);
    TP_RUN(test_moe_comm_overlap);
    TP_RUN(test_recompute_modules_time);
    TP_RUN(test_moe_overlap_sms);
    TP_RUN(test_moe_router_pad_hybridep);
    TP_RUN(test_layer_offload_stall);
    TP_RUN(test_saver_step_time);
    TP_RUN(test_activation_offload_time);
    TP_RUN(test_host_model);
    TP_RUN(test_host_time);
    TP_RUN(test_saver_refusals);
    TP_RUN(test_microbatch_group_time);
    TP_RUN(test_pp_schedule_bubbles);
    TP_RUN(test_dp_tail_params);
    TP_RUN(test_pp_schedule_time);
    TP_RUN(test_router_fusion);
    TP_RUN(test_cp_merge_kernels);
    hw_db_free(db);
    return TP_TEST_EXIT();
}
