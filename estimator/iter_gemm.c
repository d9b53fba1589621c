/*
 * iter_gemm.c - the GEMMs of an iteration: a dense GEMM (est_add_gemm,
 * its backward split into data and weight gradients) and a grouped
 * expert GEMM (est_grouped_gemm), at 16 bits, fp8 or nvfp4, with the
 * casts of their operands as the library that runs them does, and the
 * weights' casts once per iteration (est_te_weight_casts). Not here: the
 * amax all-reduces of delayed scaling (iter.c), which GEMMs a layer has
 * (iter_layer.c, iter_moe.c).
 *
 * Precision: fp8 runs the GEMMs of the layers at the fp8 rate (not the LM
 * head, Megatron's own bf16 ColumnParallelLinear, nor the attention
 * core); all else at 16 bits. The casts are those of the library that
 * runs them (space_layout.fp8_lib, fp8_recipe): Transformer Engine fuses
 * the activations' quantisation into the norms where the recipe allows,
 * casts each weight once per iteration, gathers in fp8 under SP and, with
 * delayed scaling, all-reduces the amaxes twice per micro-batch
 * (te_fp8_casts, est_te_weight_casts); torchao casts every operand on every
 * micro-batch. fp8 GEMM rates come from the fitted fp8 samples, bounded
 * below by half the 16-bit GEMM of the same shape (models.c).
 */

#include "est_int.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

/* A one-pass kernel (the fp8 quantisation kinds: forward time only)
 * added to *t, which is the forward or, when `in_bwd`, the backward. */
static void add_kernel(const est_iter_ctx *x, est_op_kind k, int64_t rows,
                       int64_t cols, double *t, int in_bwd)
{
    est_op o = est_elementwise(k, x->act_dt, rows, cols);
    int n0 = est_trace_mark(x);
    *t += est_op_time(x, &o).fwd_s;
    est_trace_row *r = in_bwd ? est_trace_added(x, n0) : NULL;
    if (r) r->bwd_s = r->fwd_s, r->fwd_s = 0;
}

/* The quantisation kernels Transformer Engine runs for one fp8 GEMM of
 * input [m, k] and output [m, n], per micro-batch (the weight is cast once
 * per iteration: est_te_weight_casts). Sources: TransformerEngine v1.12/v2.4
 * module/linear.py, layernorm_linear.py, base.py grad_output_preprocess,
 * pytorch/csrc/extensions/normalization.cpp, common/cast and transpose.
 *  - Hopper needs both operands of an fp8 GEMM K-major, so each operand
 *    used along its other dimension in the backward also exists
 *    transposed; Blackwell's per-tensor GEMMs take any layout (no
 *    transposes); blockwise and MXFP8 write a second, columnwise copy.
 *  - Delayed scaling: the amax is taken inside each cast kernel (from
 *    the previous step's history); the norm of a LayerNormLinear writes
 *    fp8 directly, and on Hopper a transpose of it follows (forward in
 *    TE 2.x; with SP after the backward's re-gather). A Linear's input
 *    gets one cast-transpose kernel.
 *  - Current scaling (tensorwise): a separate amax pass before each cast,
 *    except after a norm, which computes the amax of its output itself
 *    (TE >= 2.7); the norm writes 16 bits and one cast follows.
 *  - Blockwise, MXFP8: the norm writes 16 bits, then one quantise kernel
 *    writes both copies (no norm or activation fusion).
 *  - Output gradient: one cast(-transpose, dbias fused) kernel; under SP
 *    a row-parallel layer's local gradient shard is cast rowwise,
 *    gathered in fp8 and transposed after the gather (per-tensor on
 *    Hopper). */
static void te_fp8_casts(const est_iter_ctx *x, est_gemm_role role, int64_t m,
                         int64_t n, int64_t k, double *fwd, double *bwd)
{
    const space_layout *l = x->l;
    int rec = l->fp8_recipe;
    int per_tensor = rec == SPACE_FP8_DELAYED || rec == SPACE_FP8_TENSORWISE;
    int current = rec == SPACE_FP8_TENSORWISE;
    int no_t = per_tensor && x->any_layout_fp8;
    est_op_kind q = no_t ? EST_OP_FP8_QUANT1 : EST_OP_FP8_QUANT2;
    if (role == EST_GEMM_NORM_IN) {
        if (rec == SPACE_FP8_DELAYED) {
            if (!no_t)
                add_kernel(x, EST_OP_FP8_TRANSPOSE, m, k, l->sp ? bwd : fwd,
                           l->sp);
        } else {
            add_kernel(x, q, m, k, fwd, 0);
        }
    } else {
        if (current) add_kernel(x, EST_OP_AMAX, m, k, fwd, 0);
        add_kernel(x, q, m, k, fwd, 0);
    }
    if (current) add_kernel(x, EST_OP_AMAX, m, n, bwd, 1);
    if (role == EST_GEMM_LINEAR_IN && l->sp && l->tp > 1 && per_tensor
        && !no_t) {
        add_kernel(x, EST_OP_FP8_QUANT1, m / l->tp, n, bwd, 1);
        add_kernel(x, EST_OP_FP8_TRANSPOSE, m, n, bwd, 1);
    } else {
        add_kernel(x, q, m, n, bwd, 1);
    }
}

/* Transformer Engine's NVFP4BlockScaling (transformer_engine/common/
 * recipe/__init__.py, added by NVIDIA/TransformerEngine#2177, 2025; the
 * recipe of "Pretraining Large Language Models with NVFP4", arXiv
 * 2509.25149, its training methodology): all three GEMMs of a
 * linear layer (forward, data and weight gradient) in NVFP4; the
 * attention core, the embedding, the LM head, norms and activations stay
 * 16-bit. Per GEMM of input [m, k] and output [m, n], per micro-batch:
 * the input's global amax (one pass; with the random Hadamard transform
 * the amax of the transformed tensor is taken in the same pass), then one
 * kernel writing its rowwise copy (forward GEMM) and the columnwise copy
 * of its transform (weight gradient); the output gradient likewise in the
 * backward, with stochastic rounding. The norm of a LayerNormLinear
 * writes 16 bits (no norm-quantise fusion is modelled). Weights:
 * est_te_weight_casts. Not modelled: the amax all-reduce over TP under
 * sequence parallelism (latency-bound, a few bytes), fp4 gathers (TP
 * all-gathers stay 16-bit here), and the layers the paper keeps in bf16
 * (its first and last blocks, about 16 % of the linear layers; Megatron
 * runs every layer in fp4 unless told otherwise). */
static void te_fp4_casts(const est_iter_ctx *x, int64_t m, int64_t n, int64_t k,
                         double *fwd, double *bwd)
{
    add_kernel(x, EST_OP_AMAX, m, k, fwd, 0);
    add_kernel(x, EST_OP_NVFP4_QUANT, m, k, fwd, 0);
    add_kernel(x, EST_OP_AMAX, m, n, bwd, 1);
    add_kernel(x, EST_OP_NVFP4_QUANT, m, n, bwd, 1);
}

/* Blockwise-scaled fp8 GEMMs on Hopper (TE Float8BlockScaling: 1 x 128
 * activation and gradient tiles, 128 x 128 weight blocks, through
 * cuBLASLt's VEC128 / BLK128x128 scale modes or DeepGEMM): Hopper's
 * tensor cores apply no block scales, so the kernel promotes each
 * 128-deep partial sum to CUDA-core registers and scales it there
 * (DeepSeek-V3 technical report, arXiv 2412.19437, section 3.3.2),
 * slower than a per-tensor fp8 GEMM, whose scales go in the epilogue.
 * How much slower: MEASURED through cuBLASLt (torch._scaled_mm, PyTorch
 * 2.11 with CUDA 13.0) on an H200 (bench/data/fp8_h200, the sampler's
 * fp8sample.py; ten shapes, DeepSeek-V3's dense GEMMs at 4,096 tokens and
 * squares to 16384 x 7168 x 16384) against the per-tensor-scaled GEMM
 * of the same shape: 1 x 128 activations by 128 x 128 weights (the
 * forward's and the data gradient's GEMMs) 1.07-1.29x, geometric mean
 * 1.136; 1 x 128 by 1 x 128 (the weight gradient's, both operands scaled
 * along the tokens) 1.31-1.63x, 1.455. Forward 1.136, backward their
 * mean, 1.296. (Was 1.33 both ways, derived from DeepGEMM's H800 table
 * against this project's fitted H100 GEMM.) Blackwell applies the blocks
 * in its tensor cores (TE emulates blockwise with MXFP8 GEMMs there), so
 * no factor. */
#define EST_FP8_BLOCKWISE_HOPPER_FWD 1.136
#define EST_FP8_BLOCKWISE_HOPPER_BWD 1.296

/* MXFP8 GEMMs (TE MXFP8BlockScaling: an e8m0 scale per 32 elements along
 * K of each operand, which Blackwell's block-scaled tcgen05 MMAs read
 * from tensor memory beside the operands) against per-tensor fp8 GEMMs
 * of the same shapes, which the fp8 samples time (XLA's sm100 table,
 * scalar scales applied in the epilogue). MEASURED by Transformer
 * Engine's GEMM profiling guide on a B300 (NVIDIA/TransformerEngine@
 * 1609c890ee7d, docs/examples/gemm_profiling/gemm_profiling.rst, the
 * --pre-quantize per-layer table: the 12 GEMMs of a layer of hidden
 * 4096, FFN 16384, at 15,872 tokens, kernels only): MXFP8 7.161 ms
 * against FP8 current scaling 6.812 ms, 1.051 (fprop 1.10, dgrad 1.03,
 * wgrad 1.03). One GPU and one layer; B200's and B300's fp8 tensor cores
 * and peaks are the same. */
#define EST_MXFP8_SLOWDOWN 1.051

/* The time t of an fp8 GEMM (dt) slowed as the layout's scaling recipe
 * slows it against per-tensor scaling: blockwise on Hopper, MXFP8; row,
 * the trace's row of that GEMM (NULL: none), retimed with it. */
static void scaled_gemm_slowdown(const est_iter_ctx *x, hw_dtype dt,
                                 est_time *t, est_trace_row *row)
{
    double ff = 1, fb = 1;
    if (dt == HW_FP8 && x->l->fp8_recipe == SPACE_FP8_BLOCKWISE && x->hopper)
        ff = EST_FP8_BLOCKWISE_HOPPER_FWD, fb = EST_FP8_BLOCKWISE_HOPPER_BWD;
    else if (dt == HW_FP8 && x->l->fp8_recipe == SPACE_FP8_MXFP8)
        ff = fb = EST_MXFP8_SLOWDOWN;
    else
        return;
    t->fwd_s *= ff;
    t->bwd_s *= fb;
    if (row) row->fwd_s = t->fwd_s, row->bwd_s = t->bwd_s;
}

/* GEMM time: forward, and its backward split into data and weight
 * gradients (equal FLOPs, so taken as halves: the fitted models time the
 * backward as a whole), with the fp8 casts of its operands where it runs
 * in fp8 (role not EST_GEMM_16BIT and an fp8 layout). The weight-gradient
 * half goes to *wgrad and to x->w_acc; the casts stay in the backward's
 * input-gradient part. */
est_time est_add_gemm(const est_iter_ctx *x, int64_t m, int64_t n, int64_t k,
                      est_gemm_role role, double *fwd, double *bwd,
                      double *wgrad)
{
    hw_dtype dt = role == EST_GEMM_16BIT ? x->act_dt : x->gemm_dt;
    est_op o = est_gemm(dt, m, n, k);
    int n0 = est_trace_mark(x);
    est_time t = est_op_time(x, &o);
    scaled_gemm_slowdown(x, dt, &t, est_trace_added(x, n0));
    *fwd += t.fwd_s;
    *bwd += t.bwd_s;
    if (wgrad) *wgrad = t.bwd_s / 2;
    if (x->w_acc) *x->w_acc += t.bwd_s / 2;
    if (dt == HW_FP4) {
        te_fp4_casts(x, m, n, k, fwd, bwd);
        return t;
    }
    if (dt != HW_FP8) return t;
    if (x->l->fp8_lib == SPACE_FP8_LIB_TE) {
        te_fp8_casts(x, role, m, n, k, fwd, bwd);
        return t;
    }
    /* torchao's Float8Linear keeps its 16-bit input and weight and casts
     * both on every micro-batch, no weight cache (torchao/float8/
     * float8_linear.py, matmul_with_hp_or_float8_args): the input and the
     * weight quantised before the forward GEMM, the output gradient
     * before the backward ones, each fp8 copy transposed for the other
     * backward GEMM. How much of it torch.compile fuses into neighbouring
     * kernels is not modelled. */
    est_op in = est_elementwise(EST_OP_FP8_CAST, x->act_dt, m, k),
           w = est_elementwise(EST_OP_FP8_CAST, x->act_dt, k, n),
           g = est_elementwise(EST_OP_FP8_CAST, x->act_dt, m, n);
    est_time ti = est_op_time(x, &in), tw = est_op_time(x, &w),
             tg = est_op_time(x, &g);
    *fwd += ti.fwd_s + tw.fwd_s;
    *bwd += ti.bwd_s + tw.bwd_s + tg.fwd_s + tg.bwd_s;
    return t;
}

/* Transformer Engine casts each weight to fp8 (with its transpose on
 * Hopper) once per iteration: it keeps the fp8 copy across micro-batches
 * and Megatron-Core re-arms that cache only on each model chunk's first
 * micro-batch (TE module/base.py get_weight_workspace, is_first_microbatch;
 * megatron/core/pipeline_parallel/schedules.py forward_step). The grouped
 * experts likewise, each expert's weight quantised on the first
 * micro-batch only (TE transformer_engine/pytorch/module/
 * grouped_linear.py, update_ws = is_first_microbatch, quantize_weight per
 * expert; NVIDIA/TransformerEngine@d0067d0da6cb): one pass over the rank's
 * expert weights. Seconds for the n weights of one layer
 * (est_layer_weights). */
double est_te_weight_casts(const est_iter_ctx *x, int64_t (*shape)[2], int n)
{
    const space_layout *l = x->l;
    double t = 0;
    if (x->gemm_dt == HW_FP4) {
        /* NVFP4 weights: 16 x 16 blocks (2D scaling), both copies from
         * one quantise kernel after the global amax (te_fp4_casts). */
        for (int i = 0; i < n; i++) {
            add_kernel(x, EST_OP_AMAX, shape[i][0], shape[i][1], &t, 0);
            add_kernel(x, EST_OP_NVFP4_QUANT, shape[i][0], shape[i][1], &t,
                       0);
        }
        return t;
    }
    if (x->gemm_dt != HW_FP8 || l->fp8_lib != SPACE_FP8_LIB_TE) return 0;
    int per_tensor = l->fp8_recipe == SPACE_FP8_DELAYED
                     || l->fp8_recipe == SPACE_FP8_TENSORWISE;
    est_op_kind k = per_tensor && x->any_layout_fp8 ? EST_OP_FP8_QUANT1
                                                    : EST_OP_FP8_QUANT2;
    for (int i = 0; i < n; i++) {
        if (l->fp8_recipe == SPACE_FP8_TENSORWISE)
            add_kernel(x, EST_OP_AMAX, shape[i][0], shape[i][1], &t, 0);
        add_kernel(x, k, shape[i][0], shape[i][1], &t, 0);
    }
    return t;
}

/* Rows of the M dimension a tensor-core GEMM tile covers at the least:
 * the M of one Hopper warpgroup MMA (wgmma.mma_async m64nNk16, PTX ISA
 * 8.0, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"), also
 * the smallest M of Blackwell's tcgen05.mma. A grouped GEMM tiles each
 * group's rows on its own, so each expert's rows fill whole tiles. */
#define EST_GROUPED_TILE_M 64

/* One grouped expert GEMM (TE GroupedLinear): nle GEMMs of [rows, k] x
 * [k, n], timed as one GEMM of all their rows with each expert's rounded
 * up to whole tiles (EST_GROUPED_TILE_M): a grouped kernel does the same
 * work as that GEMM and cannot beat it, and the operator fits hold only
 * single GEMMs (no measured sample has b > 1, so a batch would be
 * extrapolated: 16 experts of 615 x 3072 x 4096 bf16 came out at 826
 * TFLOP/s on H100, above every measured GEMM). But the dense GEMM reads
 * one weight matrix where the grouped one reads nle: the time is raised,
 * pass by pass, to the roofline of the nle GEMMs as a batch
 * (est_op_roofline with b = nle: every expert's weight, its rows' tiles
 * quantised on their own), scaled by the kernel efficiency as fitted
 * times are. Measured on an H200 (bench/data/moe_h200, the sampler's
 * moesample.py, torch 2.11 with CUDA 13.0): from about 1,000 rows per
 * expert on, TE-style cuBLAS per expert on four streams runs at
 * 0.92-1.15x the dense GEMM and torch._grouped_mm at 0.99-1.26x (mostly
 * 1.08-1.13: its kernel, not modelled), but at 128 rows both take 1.7-2.3x
 * (forward 1.7-1.9x, backward 2.0-2.5x) and at 32 rows 5-8x, where the
 * weights' traffic sets the time (DeepSeek-V3's [7168 x 4096] experts,
 * 32 of them: 630 us for 440 us of weights at 4.3 TB/s); the dense
 * model alone was 45 % short of gpt-oss-120b's 128 experts at 128 rows,
 * this floor 19 % (the kernel streams weights at about 0.75 of HBM's
 * peak, not the 0.9 a copy gets; left as measured). In fp8 with the fp8
 * casts of its inputs and output gradients over all of the rank's rows:
 * Transformer Engine quantises every expert's rows with one
 * split-quantise kernel (grouped_linear.py, _GroupedLinear.forward:
 * tex.split_quantize or tex.group_quantize over m_splits,
 * NVIDIA/TransformerEngine@d0067d0da6cb), the input coming 16-bit from
 * the permutation or the activation and each output gradient this rank's
 * own (EST_GEMM_LOCAL_IN); blockwise scaling pays its Hopper slowdown,
 * and MXFP8 its, as a dense GEMM does. */
void est_grouped_gemm(const est_iter_ctx *x, int64_t nle, int64_t rows,
                      int64_t n, int64_t k, double *fwd, double *bwd)
{
    int64_t tiled = (rows + EST_GROUPED_TILE_M - 1) / EST_GROUPED_TILE_M
                    * EST_GROUPED_TILE_M;
    est_op g = est_gemm(x->gemm_dt, nle * tiled, n, k);
    int n0 = est_trace_mark(x);
    est_time t = est_op_time(x, &g);
    est_trace_row *row = est_trace_added(x, n0);
    if (row) snprintf(row->what, sizeof row->what, "%s", "grouped_gemm");
    scaled_gemm_slowdown(x, x->gemm_dt, &t, row);
    if (nle > 1) {
        est_op batch = est_gemm(x->gemm_dt, tiled, n, k);
        batch.b = nle;
        est_time r;
        est_op_roofline(x->c->gpu, &batch, &r);
        t.fwd_s = fmax(t.fwd_s, r.fwd_s / x->eff);
        t.bwd_s = fmax(t.bwd_s, r.bwd_s / x->eff);
        if (row) row->fwd_s = t.fwd_s, row->bwd_s = t.bwd_s;
    }
    *fwd += t.fwd_s;
    *bwd += t.bwd_s;
    if (x->w_acc) *x->w_acc += t.bwd_s / 2;
    if (x->gemm_dt == HW_FP8)
        te_fp8_casts(x, EST_GEMM_LOCAL_IN, nle * rows, n, k, fwd, bwd);
}
