/*
 * op.c - the work of each operator (FLOPs and HBM bytes, forward and
 * backward) and its analytical roofline time on a GPU from hwdb.
 *
 * Not here: anything fitted (fit.c). The roofline is deliberately simple
 * and optimistic; the fitted ratio to it carries what it misses.
 *
 * Constants and their sources:
 *  - EST_HBM_EFFICIENCY = 0.90: achievable over datasheet HBM bandwidth.
 *    A device-to-device copy measured 3.0 TB/s on an H100 SXM (datasheet
 *    3.35) and 4.3 TB/s on an H200 (datasheet 4.8), both 0.90
 *    (/work/.library/device/KINDS.md, this workplace's machines, 2026-11).
 *  - EST_LAUNCH_FLOOR_S = 3 us per kernel, added to the roofline time
 *    (launch and ramp-up do not overlap the kernel's own work): the
 *    shortest kernel times in the measured seed samples are 2.9 us (GH200,
 *    gelu forward) and 6.0 us (A100, gelu forward) (shared/data/
 *    seed_samples; rerun: min of F_dur(us)).
 *  - GEMM tiles of 128 x 128 quantised into waves over the SMs: NVIDIA,
 *    "Matrix Multiplication Background User's Guide" (Deep Learning
 *    Performance documentation), sections on tile and wave quantization.
 *  - Flash attention backward = 2.5 x forward FLOPs: T. Dao,
 *    "FlashAttention-2", arXiv 2307.08691, section 3 (the backward runs 5
 *    matrix products where the forward runs 2). Its kernels are compiled
 *    for head dimensions 32, 64, ..., 256 and pad to the next one, and
 *    each thread block takes 128 query rows of one (batch, head); blocks
 *    are quantised into waves over the SMs (same paper, section 3.2, and
 *    the kernel instantiations flash_fwd_hdim32 ... hdim256 of its code).
 */
#include "est.h"

#include <math.h>

#define EST_HBM_EFFICIENCY 0.90
#define EST_LAUNCH_FLOOR_S 3e-6
#define EST_TILE 128.0
/* Last-level cache assumed where hwdb gives none: the largest of any GPU
 * in hwdb (MI300X's 256 MB Infinity Cache), so the floor stays a floor. */
#define EST_MAX_LLC_BYTES (256.0 * 1048576.0)

const char *const est_op_names[EST_OP_COUNT] = {
    [EST_OP_GEMM] = "gemm",
    [EST_OP_FLASH_ATTN] = "flash_attn",
    [EST_OP_LAYERNORM] = "layernorm",
    [EST_OP_RMSNORM] = "rmsnorm",
    [EST_OP_GELU] = "gelu",
    [EST_OP_SWIGLU] = "swiglu",
    [EST_OP_RESADD] = "residual_add",
    [EST_OP_DROPOUT] = "dropout",
    [EST_OP_ROPE] = "rope",
    [EST_OP_SOFTMAX] = "softmax",
    [EST_OP_MASKED_SOFTMAX] = "masked_softmax",
    [EST_OP_EMBEDDING] = "embedding",
    [EST_OP_CROSS_ENTROPY] = "cross_entropy",
    [EST_OP_ADAM] = "adam",
    [EST_OP_FP8_CAST] = "fp8_cast",
    [EST_OP_FP8_QUANT2] = "fp8_quantize_2",
    [EST_OP_FP8_QUANT1] = "fp8_quantize_1",
    [EST_OP_FP8_TRANSPOSE] = "fp8_transpose",
    [EST_OP_AMAX] = "amax",
    [EST_OP_RMSNORM_EAGER] = "rmsnorm_eager",
    [EST_OP_SWIGLU_EAGER] = "swiglu_eager",
    [EST_OP_ROPE_EAGER] = "rope_eager",
    [EST_OP_ROPE_UNFUSED] = "rope_unfused",
    [EST_OP_RMSNORM_UNFUSED] = "rmsnorm_unfused",
    [EST_OP_ATTN_CUDNN] = "attn_cudnn",
    [EST_OP_NVFP4_QUANT] = "nvfp4_quantize_2",
    [EST_OP_PERMUTE] = "permute",
    [EST_OP_ROUTER] = "moe_router",
    [EST_OP_ROUTER_FUSED] = "moe_router_fused",
};
_Static_assert(sizeof est_op_names / sizeof est_op_names[0] == EST_OP_COUNT,
               "est_op_names names every est_op_kind");

double est_dtype_bytes(hw_dtype d)
{
    switch (d) {
    case HW_FP32:
    case HW_TF32:
        return 4;
    case HW_FP8:
        return 1;
    case HW_FP4: /* e2m1 plus NVFP4's e4m3 scale per 16 elements */
        return 0.5 + 1.0 / 16;
    default:
        return 2;
    }
}

/* Bytes moved per element, forward and backward, of the memory-bound
 * ops, in units of the element size e plus fixed bytes (masks, fp32
 * temporaries). Each row: fwd = a_f * e + c_f, bwd = a_b * e + c_b. */
typedef struct mem_traffic {
    double a_f, c_f, a_b, c_b;
} mem_traffic;

static const mem_traffic traffic[EST_OP_COUNT] = {
    /* read x, write y; backward reads dy and x, writes dx */
    [EST_OP_LAYERNORM] = {2, 0, 3, 0},
    [EST_OP_RMSNORM] = {2, 0, 3, 0},
    [EST_OP_GELU] = {2, 0, 3, 0},
    /* per output: read gate and up, write out; backward reads dy, gate,
     * up and writes both gradients */
    [EST_OP_SWIGLU] = {3, 0, 5, 0},
    /* read two, write one; backward copies the gradient once */
    [EST_OP_RESADD] = {3, 0, 2, 0},
    /* plus a one-byte mask written forward, read backward */
    [EST_OP_DROPOUT] = {2, 1, 2, 1},
    [EST_OP_ROPE] = {2, 0, 2, 0},
    [EST_OP_SOFTMAX] = {2, 0, 3, 0},
    /* causal: reads the lower triangle (half), writes the whole row
     * (zeros above the diagonal); backward reads dy and y below the
     * diagonal and writes dx */
    [EST_OP_MASKED_SOFTMAX] = {1.5, 0, 2, 0},
    /* gather: read the rows, write them; backward scatter-adds (the
     * dense zeroing of the table's gradient is added in est_op_work) */
    [EST_OP_EMBEDDING] = {2, 0, 3, 0},
    /* Megatron's vocab-parallel loss reads the logits for the max, then
     * writes and rereads fp32 exponentials; backward reads the fp32
     * softmax and writes the gradient */
    [EST_OP_CROSS_ENTROPY] = {2, 8, 1, 4},
    /* per parameter: read fp32 param, grad, m, v; write param, m, v, and
     * the 16-bit copy of the param */
    [EST_OP_ADAM] = {1, 28, 0, 0},
    /* read twice (amax, then cast), write one byte; backward: the fp8
     * copy transposed for the other GEMM of the backward (read and write
     * a byte), since Hopper's fp8 GEMMs take both operands K-major */
    [EST_OP_FP8_CAST] = {2, 1, 0, 2},
    /* Transformer Engine (transformer_engine/common/transpose/
     * cast_transpose.cu, common/cast/): one read of the 16-bit input, one
     * byte per fp8 copy written (the scales of blockwise and MXFP8, 1/32
     * to 4/128 byte per element, are left out); a transpose reads and
     * writes one byte; amax reads the input once. Forward only. */
    [EST_OP_FP8_QUANT2] = {1, 2, 0, 0},
    [EST_OP_FP8_QUANT1] = {1, 1, 0, 0},
    [EST_OP_FP8_TRANSPOSE] = {0, 2, 0, 0},
    [EST_OP_AMAX] = {1, 0, 0, 0},
    /* NVFP4 (TE NVFP4BlockScaling, transformer_engine/common/recipe/
     * __init__.py; arXiv 2509.25149): one read of the 16-bit
     * input, two e2m1 copies written (rowwise, and columnwise for the
     * other backward GEMM: TE quantises both from the 16-bit tensor, since
     * block scales along rows and along columns differ), each half a byte
     * an element plus an e4m3 scale per 16. The random Hadamard transform
     * of the columnwise copy (16 x 16, in registers) and stochastic
     * rounding add no traffic. Forward only. */
    [EST_OP_NVFP4_QUANT] = {1, 2 * (0.5 + 1.0 / 16), 0, 0},
    /* MoE token permutation (Megatron-Core moe_utils.py permute /
     * unpermute, or Transformer Engine's fused moe_permute kernels with
     * --moe-permute-fusion): each row read once and written once at its
     * new index; the backward is the reverse gather (unpermute's merge of
     * a token's top_k rows, weighted by their probabilities, reads the
     * same rows). No table to zero, unlike an embedding's backward. */
    [EST_OP_PERMUTE] = {2, 0, 2, 0},
    /* An MoE router after its gating GEMM, per token and expert, the
     * logits in 16 bits (e; moe_router_dtype None) and the scores in
     * fp32, with the auxiliary load-balancing loss (aux_loss, as the
     * recipes set it). Megatron-Core's PyTorch path
     * (NVIDIA/Megatron-LM@d98e8a64dd moe/moe_utils.py
     * topk_routing_with_score_function, compute_routing_scores_for_aux_loss,
     * switch_load_balancing_loss_func; moe/router.py): softmax to fp32
     * (r e, w 4), top-k (r 4), the dense probabilities (zeros_like, w e)
     * and routing map (zeros_like, .int(), scatter, .bool(): w e, r e w 4,
     * r 4 w 1), then for the loss the scores again (softmax r e w 4, top-k
     * r 4, the map again e + e + 4 + 5) and their sum over tokens (r 4):
     * 7e + 38 bytes; the scatters write k of E columns (left out).
     * Backward: the two softmaxes' gradients (r y, r dy, w dx: 12 each)
     * with their casts to the logits' dtype (r 4 w e each), the sum's
     * expand (w 4), the two paths' gradients added (r 2e w e): 5e + 36. */
    [EST_OP_ROUTER] = {7, 38, 5, 36},
    /* Transformer Engine's fused router (--moe-router-fusion; TE >= 2.6,
     * transformer_engine/pytorch/router.py fused_topk_with_score_function,
     * fused_compute_score_for_moe_aux_loss, fused_moe_aux_loss): each of
     * the first two reads the logits once and writes the dense fp32
     * probabilities and the one-byte map (e + 5 each), the loss reads the
     * scores (4): 2e + 14. Backward: each reads its output's gradient and
     * its saved fp32 scores and writes the logits' gradient (8 + e each),
     * the loss writes the scores' gradient (4), the two added (3e):
     * 5e + 20. */
    [EST_OP_ROUTER_FUSED] = {2, 14, 5, 20},
    /* Eager composites, kernel by kernel (16-bit e, fp32 4 bytes), from
     * the code they run: torchtitan's Llama (models/llama/model.py,
     * models/norms.py: nn.RMSNorm) on PyTorch 2.5 (at::rms_norm in
     * aten/src/ATen/native/layer_norm.cpp, composite). RMSNorm forward:
     * upcast (r e, w 4), pow (r 4, w 4), mean (r 4), rsqrt on the row
     * sums, mul (r 4, w 4), downcast (r 4, w e), weight mul (r e, w e);
     * backward through autograd: weight mul's two products (4e), downcast
     * (e + 4), mul's two (8 + 8), mean's expand (4), pow (12), the sum of
     * the two paths (12), upcast (4 + e). */
    [EST_OP_RMSNORM_EAGER] = {4, 28, 6, 52},
    /* silu (r e, w e) then mul (r 2e, w e); backward: two products (3e
     * each) and silu's (3e) */
    [EST_OP_SWIGLU_EAGER] = {5, 0, 9, 0},
    /* upcast (r e, w 4), complex multiply (r 4, w 4; the frequencies are
     * one row, broadcast), downcast (r 4, w e); the backward mirrors it */
    [EST_OP_ROPE_EAGER] = {2, 16, 2, 16},
    /* rotate-half, per element of q and k: x * cos (r e + cos, w e), the
     * two halves negated and concatenated (r e, w e, r e, w e), * sin
     * (r e, w e), the add (r 2e, w e); cos and sin are one row per
     * position, broadcast over heads (not counted). Backward through
     * autograd mirrors it. */
    [EST_OP_ROPE_UNFUSED] = {11, 0, 11, 0},
    /* x.norm (r e), divide (r e, w e), weight multiply (r e, w e);
     * backward: the two products' gradients (3e each), the divide's
     * (3e) and the norm's (2e) */
    [EST_OP_RMSNORM_UNFUSED] = {5, 0, 11, 0},
};

/* Kernels an op launches, forward and backward, where more than one:
 * each pays the launch floor. */
static void kernel_counts(const est_op *op, double *f, double *b)
{
    switch (op->kind) {
    case EST_OP_GEMM:
        *f = 1, *b = 2;
        break;
    case EST_OP_RMSNORM_EAGER:
        *f = 7, *b = 10;
        break;
    case EST_OP_SWIGLU_EAGER:
        *f = 2, *b = 3;
        break;
    case EST_OP_ROPE_EAGER:
        *f = 3, *b = 3;
        break;
    case EST_OP_ROPE_UNFUSED:
        *f = 5, *b = 5;
        break;
    case EST_OP_RMSNORM_UNFUSED:
        *f = 4, *b = 7;
        break;
    case EST_OP_ROUTER: /* the kernels of the bytes above, one by one */
        *f = 15, *b = 8;
        break;
    case EST_OP_ROUTER_FUSED: /* three fused kernels each way */
        *f = 3, *b = 3;
        break;
    case EST_OP_ADAM: /* a step: no backward */
    case EST_OP_FP8_QUANT2:
    case EST_OP_FP8_QUANT1:
    case EST_OP_FP8_TRANSPOSE:
    case EST_OP_AMAX:
    case EST_OP_NVFP4_QUANT:
        *f = 1, *b = 0;
        break;
    default:
        *f = 1, *b = 1;
    }
}

void est_op_work(const est_op *op, est_work *w)
{
    double e = est_dtype_bytes(op->dtype);
    w->fwd_flops = w->bwd_flops = w->fwd_bytes = w->bwd_bytes = 0;
    switch (op->kind) {
    case EST_OP_GEMM: {
        double b = op->b > 0 ? (double)op->b : 1, m = (double)op->m,
               n = (double)op->n, k = (double)op->k;
        w->fwd_flops = 2 * b * m * n * k;
        w->fwd_bytes = e * b * (m * k + k * n + m * n);
        /* An fp4 GEMM's output is written in 16 bits (TE's NVFP4 GEMMs
         * return bf16); fp8 keeps its historical one-byte count. */
        if (op->dtype == HW_FP4)
            w->fwd_bytes = b * (e * (m * k + k * n) + 2 * m * n);
        /* data gradient (m x n)(n x k) and weight gradient (k x m)(m x n) */
        w->bwd_flops = 2 * w->fwd_flops;
        w->bwd_bytes = 2 * w->fwd_bytes;
        break;
    }
    case EST_OP_FLASH_ATTN:
    case EST_OP_ATTN_CUDNN: {
        double b = (double)op->b, hq = (double)op->heads,
               hk = (double)(op->kv_heads ? op->kv_heads : op->heads),
               sq = (double)op->sq, sk = (double)op->sk,
               d = (double)op->head_dim;
        /* Causal: each query sees on average (sk + 1) / 2 keys when the
         * query and key sequences coincide. */
        double vis = op->causal ? (sk + 1) / 2 : sk;
        w->fwd_flops = 4 * b * hq * sq * vis * d;
        w->bwd_flops = 2.5 * w->fwd_flops;
        double q = b * sq * hq * d, kv = b * sk * hk * d;
        w->fwd_bytes = e * (2 * q + 2 * kv);     /* q, k, v in; o out */
        w->bwd_bytes = e * (4 * q + 4 * kv);     /* q, k, v, o, do in; dq, dk, dv out */
        break;
    }
    default: {
        const mem_traffic *t = &traffic[op->kind];
        double n = op->kind == EST_OP_ADAM ? (double)op->n
                                           : (double)op->rows * (double)op->cols;
        w->fwd_bytes = (t->a_f * e + t->c_f) * n;
        w->bwd_bytes = (t->a_b * e + t->c_b) * n;
        if (op->kind == EST_OP_EMBEDDING) {
            w->bwd_bytes += e * (double)op->n * (double)op->cols; /* dense dW */
            /* Split over TP ranks, Megatron's VocabParallelEmbedding zeroes
             * the rows of tokens another rank owns: one more read and
             * write of the output (megatron/core/tensor_parallel/
             * layers.py, VocabParallelEmbedding.forward). */
            if (op->vocab_parallel) w->fwd_bytes += 2 * e * n;
        }
        if (op->kind == EST_OP_ADAM) w->fwd_flops = 12 * n;
        break;
    }
    }
}

/* Compute time of an (m x k)(k x n) product, b of them, with output
 * tiles quantised into waves over the SMs. Libraries pick among tile
 * shapes and split the k loop over several blocks when the output has
 * too few tiles to fill the GPU (split-K; NVIDIA CUTLASS documentation,
 * "Efficient GEMM in CUDA", and the Matrix Multiplication Background
 * guide): take the best of those choices, counting the extra pass that
 * sums the split partial results. */
static double gemm_compute_s(int64_t sms, double rate_per_sm, double bw,
                             int64_t b, int64_t m, int64_t n, int64_t k)
{
    /* Integer tile counts: exact, and cheaper than floating ceil. */
    static const int tm_log2[] = {7, 7, 6}, tn_log2[] = {8, 7, 6};
    double best = INFINITY, inv_rate = 1 / rate_per_sm;
    for (int t = 0; t < 3; t++) {
        int64_t tiles1 = b * ((m + (1 << tm_log2[t]) - 1) >> tm_log2[t])
                         * ((n + (1 << tn_log2[t]) - 1) >> tn_log2[t]);
        double tile_flops = 2.0 * (double)(1 << (tm_log2[t] + tn_log2[t]));
        for (int sl = 0; sl <= 3; sl++) { /* split-K by 1, 2, 4, 8 */
            int64_t split = (int64_t)1 << sl;
            if (sl > 0 && k < 256 * split) break;
            int64_t tiles = tiles1 * split, waves;
            if (tiles < ((int64_t)1 << 31)) /* 32-bit division is faster */
                waves = (uint32_t)(tiles + sms - 1) / (uint32_t)sms;
            else
                waves = (tiles + sms - 1) / sms;
            int64_t ks = (k + split - 1) >> sl;
            double s = (double)waves * tile_flops * (double)ks * inv_rate;
            if (sl > 0) /* fp32 partial results written and summed */
                s += 4.0 * (double)b * (double)m * (double)n * (double)split / bw;
            if (s < best) best = s;
        }
    }
    return best;
}

/* Bytes a pass of an op must move however it is implemented, or 0 where
 * the model's traffic is not a floor. GEMMs: each operand read once and
 * the output written once. Norms, activations, adds, softmax and Adam
 * forward: each input read once, each output written once, as modelled.
 * Embedding forward: only its output write is certain (the gathered rows
 * may come from cache when tokens repeat), and split over TP each rank
 * still writes the full [tokens, hidden] output. The others
 * (cross-entropy, RoPE, backward passes of the memory-bound ops) count
 * temporaries an implementation may avoid. */
static double floor_bytes(const est_op *op, const est_work *w, int bwd)
{
    switch (op->kind) {
    case EST_OP_GEMM:
        return bwd ? w->bwd_bytes : w->fwd_bytes;
    case EST_OP_LAYERNORM:
    case EST_OP_RMSNORM:
    case EST_OP_GELU:
    case EST_OP_RESADD:
    case EST_OP_SOFTMAX:
    case EST_OP_ADAM:
        return bwd ? 0 : w->fwd_bytes;
    case EST_OP_EMBEDDING:
        return bwd ? 0
                   : est_dtype_bytes(op->dtype) * (double)op->rows
                         * (double)op->cols;
    default:
        return 0;
    }
}

void est_op_floor(const hw_gpu *g, const est_op *op, est_time *t,
                  est_floor_why *why)
{
    est_work w;
    est_op_work(op, &w);
    double peak = g->peak_flops[op->dtype];
    if (peak <= 0) peak = g->peak_flops[HW_FP16];
    double llc = g->l2_bytes > 0 ? g->l2_bytes : EST_MAX_LLC_BYTES;
    double fl[2] = {w.fwd_flops, w.bwd_flops};
    double by[2] = {floor_bytes(op, &w, 0), floor_bytes(op, &w, 1)};
    double out[2];
    for (int p = 0; p < 2; p++) {
        double c = peak > 0 ? fl[p] / peak : 0;
        /* Traffic that fits in L2 may legitimately beat HBM bandwidth. */
        double m = by[p] > 2 * llc && g->mem_bw_bytes_per_s > 0
                       ? by[p] / g->mem_bw_bytes_per_s
                       : 0;
        out[p] = fmax(c, m);
        if (why) why[p] = out[p] <= 0 ? EST_FLOOR_NONE
                          : c >= m    ? EST_FLOOR_PEAK
                                      : EST_FLOOR_HBM;
    }
    t->fwd_s = out[0];
    t->bwd_s = out[1];
}

void est_op_roofline(const hw_gpu *g, const est_op *op, est_time *t)
{
    est_work w;
    est_op_work(op, &w);
    double peak = g->peak_flops[op->dtype];
    if (peak <= 0) peak = g->peak_flops[HW_FP16];
    double bw = g->mem_bw_bytes_per_s * EST_HBM_EFFICIENCY;
    double cf, cb, kernels_f, kernels_b;
    kernel_counts(op, &kernels_f, &kernels_b);
    if (op->kind == EST_OP_GEMM) {
        int64_t b = op->b > 0 ? op->b : 1, m = op->m, n = op->n, k = op->k;
        int64_t sms = g->sm_count > 0 ? g->sm_count : 1;
        double rate = peak / (double)sms;
        cf = gemm_compute_s(sms, rate, bw, b, m, n, k);
        cb = gemm_compute_s(sms, rate, bw, b, m, k, n)   /* dX = dY W^T */
             + gemm_compute_s(sms, rate, bw, b, k, n, m); /* dW = X^T dY */
    } else if (op->kind == EST_OP_FLASH_ATTN || op->kind == EST_OP_ATTN_CUDNN) {
        double sms = g->sm_count > 0 ? g->sm_count : 1;
        double hd = ceil((double)op->head_dim / 32.0) * 32.0;
        double sk = (double)op->sk, vis = op->causal ? (sk + 1) / 2 : sk;
        double blocks = (double)op->b * (double)op->heads
                        * ceil((double)op->sq / EST_TILE);
        double waves = ceil(blocks / sms);
        cf = waves * (4 * EST_TILE * vis * hd) / (peak / sms);
        cb = 2.5 * cf;
    } else {
        cf = w.fwd_flops / peak;
        cb = w.bwd_flops / peak;
    }
    double mf = w.fwd_bytes / bw, mb = w.bwd_bytes / bw;
    t->fwd_s = fmax(cf, mf) + EST_LAUNCH_FLOOR_S * kernels_f;
    t->bwd_s = kernels_b == 0 ? 0 : fmax(cb, mb) + EST_LAUNCH_FLOOR_S * kernels_b;
}
