/*
 * iter.c - the time of one training iteration of a dense decoder-only
 * model under a layout: the operators of each layer at the per-rank shapes
 * the layout implies, timed by the operator models (models.c); the TP, CP,
 * PP and DP collectives, timed by the collective models (comm.c) over
 * groups placed as Megatron-LM places them; composed through the pipeline
 * schedule with the overlaps Megatron-LM implements.
 *
 * Per micro-batch and layer, forward (backward mirrors it):
 *   norm, [SP: all-gather], QKV GEMM (q + 2 kv columns / TP), RoPE,
 *   attention (flash, or QK^T + softmax + AV), output GEMM, TP all-reduce
 *   [SP: reduce-scatter], residual add, norm, [SP: all-gather], FC1 (gated:
 *   gate and up fused, 2f / TP columns), activation, FC2, TP all-reduce
 *   [SP: reduce-scatter], residual add. With attention dropout, the
 *   unfused path runs a dropout kernel on the probabilities (flash
 *   attention drops inside its kernel: not timed apart); hidden dropout is
 *   fused into the residual adds (its mask's traffic is added to them).
 * First stage: embedding lookup (vocab split over TP, then its all-reduce
 *   or reduce-scatter), learned positions, BLOOM's embedding norm. Last
 *   stage: final norm, [SP: all-gather], LM head (padded vocab / TP),
 *   vocab-parallel cross-entropy and its three small all-reduces.
 *
 * TP overlaps (space_layout.tp_overlap). Megatron-LM's default: forward TP
 * collectives are exposed; in the backward the input-gradient all-reduce
 * (or reduce-scatter) of a column-parallel GEMM runs while its weight
 * gradient is computed, and with SP the re-gather of the GEMM input runs
 * under the data gradient (megatron/core/tensor_parallel/layers.py,
 * LinearWithGradAccumulationAndAsyncCommunication); a GEMM's backward is
 * split evenly between its data and weight gradients (same FLOPs). None:
 * every TP collective exposed (PyTorch DTensor TP, Megatron-LM before
 * its asynchronous all-reduce). All: every collective under its
 * neighbouring GEMM (Megatron-LM --tp-comm-overlap, torchtitan AsyncTP),
 * exposed only where it outlasts it. Ring
 * attention's KV exchange for the next step runs under the current step's
 * attention (Megatron-Core / Transformer Engine context parallelism).
 * Gradient reduction runs in buckets under the backward of the last
 * micro-batch (--overlap-grad-reduce; the last bucket, at most
 * EST_GRAD_BUCKET_PARAMS, is always exposed); the distributed optimizer's
 * parameter all-gather runs under the next forward (--overlap-param-gather)
 * likewise; space_layout's no_dp_overlap turns both off (Megatron-LM's
 * defaults, and its 2021 code). ZeRO-3 gathers each layer's parameters
 * during the previous layer's compute (FSDP prefetch), per micro-batch,
 * and reduce-scatters each micro-batch's gradients; under a pipeline
 * (FSDP2 with PyTorch's pipelining) it gathers once and reduce-scatters
 * once, after the last backward.
 *
 * Pipeline (Narayanan et al., SC'21, section 2.2): with m micro-batches,
 * p stages and v model chunks per stage, an iteration takes
 *   m x t_max + (p - 1) / v x t_mean,
 * t = one micro-batch's forward + backward (+ recompute, exposed TP and
 * CP, and 2 v point-to-point exchanges: 1/TP of the activation each with
 * SP, or without it and with space_layout's pp_scatter_gather plus an
 * all-gather over TP; all of it from every TP rank otherwise, as
 * Megatron-Core sends it) on a stage; each stage timed from its own
 * layers as Megatron-Core's split puts them (space/split.c: the even
 * split, the embedding and/or loss counted as layers, first/last stage
 * counts, a layout string; whole layers), the embedding on the first,
 * the LM head and loss on the last, the MTP modules where they sit;
 * t_max of the slowest stage (the critical one), t_mean over all p
 * stages. The second term is the bubble. Under the interleaved schedule
 * the fill and the drain pass chunk by chunk, each step as long as the
 * longest chunk in it: the bubble is stretched by the most layers any
 * chunk holds over the mean, L / (p v) (1 for an even split; a chunk
 * that gave a layer's slot to the embedding or the loss is not the
 * longest, and its embedding or head time is in t_mean).
 * Under the interleaved schedule Megatron-Core posts the
 * sends and receives of its steady state asynchronously and waits for
 * them only before the chunk that needs them
 * (megatron/core/pipeline_parallel/schedules.py, overlap_p2p_comm, on by
 * default), so there each exchange is exposed only by what it outlasts
 * one chunk's forward (or backward); the fill and the drain, whose sends
 * are not overlapped unless --overlap-p2p-communication-warmup-flush, pay
 * them in full (t_mean keeps them).
 Other schedules (space_pp_schedule, est_pp_bubble): zero bubble ZB-H1
 * and ZB-V move the weight-gradient GEMMs (stage_time.w: half of each
 * GEMM's backward, add_gemm) into the bubble; DualPipe and DualPipeV also
 * run a forward chunk beside a backward one in the steady state, the MoE
 * dispatch and combine and the pipeline sends under the other's compute.
 * The V schedules hold the LM head on rank 0; DualPipe's end ranks each
 * run half of the embedding and half of the head. Not modelled: the V
 * placement of an uneven split's layers (the looped one is timed), the
 * per-rank warm-up differences of the schedules' fills.
 *
 * Recompute: selective reruns the attention core's forward in the
 * backward (Korthikanti et al., arXiv 2205.05198); full reruns the whole
 * layer forward, its TP collectives included, of the layers
 * space_recompute_layers names (--recompute-method block: the first N of
 * each model chunk; uniform: all); torchtitan's op-level
 * selective checkpointing reruns the cheap ops and the matmuls whose
 * outputs it does not keep (k, o, and the FFN's middle one).
 *
 * Precision: fp8 runs the GEMMs of the layers at the fp8 rate (not the LM
 * head, Megatron's own bf16 ColumnParallelLinear, nor the attention
 * core); all else at 16 bits. The casts are those of the library that
 * runs them (space_layout.fp8_lib, fp8_recipe): Transformer Engine fuses
 * the activations' quantisation into the norms where the recipe allows,
 * casts each weight once per iteration, gathers in fp8 under SP and, with
 * delayed scaling, all-reduces the amaxes twice per micro-batch
 * (te_fp8_casts, te_weight_casts); torchao casts every operand on every
 * micro-batch. fp8 GEMM rates come from the fitted fp8 samples, bounded
 * below by half the 16-bit GEMM of the same shape (models.c).
 *
 * MoE (as Megatron-Core with Transformer Engine runs it; moe_routed and
 * moe.c): each pipeline stage's dense-FFN and MoE layers are timed
 * apart; an MoE layer has the router, the token permutations, the
 * dispatch and combine over the expert grid (all-to-all, all-gather or
 * DeepEP, exposed: est_breakdown.ep_s, less what l->moe_comm_overlap
 * hides under the shared experts or, in the combined 1F1B schedule,
 * under another micro-batch's compute), the grouped expert GEMMs at the
 * busiest EP rank's tokens (the imbalance factor), the shared experts as
 * a TP-sharded dense FFN; the routed experts' gradients reduce over the
 * expert data-parallel group, the rest over DP x CP. MLA (mla_qkv) and
 * sliding windows (window_scale) change the attention block; DeepSeek's
 * MTP modules add a layer, a projection and a second head pass on the
 * last stage. fp8 (Transformer Engine, every recipe) runs MLA's
 * projections, the shared experts and the grouped expert GEMMs in fp8
 * with their casts, the expert rows padded for fp8 (grouped_gemm,
 * fp8_expert_rows), each expert's weight cast once per iteration
 * (layer_weights); the router and the dispatch stay 16-bit. Refused by
 * name (EST_MOE): MoE or MLA under another framework, with nvfp4, with
 * torchao's fp8, or with op-level checkpointing; a
 * capacity factor caps the busiest expert's load (est_moe_imbalance);
 * expert grids Megatron-Core refuses: EST_MOE_LAYOUT.
 *
 * Memory savers (space/savers.c; offload.c has their bytes): the
 * precision-aware optimizer's step scales the fitted Adam by the bytes it
 * moves; optimizer CPU offload adds the gradients' copy to the host, the
 * CPU's AdamW at the host's memory bandwidth and the parameters' copy
 * back (saver_step); activation offloading adds what its copies outlast
 * of the compute they run under (offload_exposed, est_breakdown.offload_s).
 * Micro-batch groups leave the bubble as it is: with groups of N >= PP
 * each chunk's forward finds its input ready, so only the fill and the
 * drain idle, (p - 1) / v of a micro-batch as without them.
 *
 * Deliberately not modelled yet: the tied-embedding gradient all-reduce
 * between first and last stage, data loading, the cost of dropout inside
 * flash attention.
 */
#include "est.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Megatron-Core DDP's default gradient bucket: 40 M parameters
 * (megatron/core/distributed/distributed_data_parallel_config.py,
 * bucket_size = max(40000000, 1000000 * dp_size)). */
#define EST_GRAD_BUCKET_PARAMS 40e6

/* Per micro-batch and pipeline stage, seconds. */
typedef struct stage_time {
    double fwd, bwd, recompute, tp, cp, p2p;
    /* of one layer (layer_time): the TP and CP collectives its full
     * recomputation reruns, added for the layers recomputed */
    double rec_tp, rec_cp;
    double ep, rec_ep; /* MoE dispatch and combine, exposed; rerun */
    /* of one MoE layer under the 1F1B A2A overlap (moe_overlap_a2a): the
     * exposed dispatch and combine of a forward layer run beside another
     * micro-batch's backward layer; the stage loop weighs it with ep by
     * the share of layers so paired */
    double ep_pair;
    /* activations to the host and back, where they outlast the compute
     * they run under (offload.c); 0 without activation offloading */
    double offload;
    /* the weight-gradient GEMMs' part of bwd (add_gemm, grouped_gemm):
     * what the zero-bubble schedules move into the bubble */
    double w;
    /* the GPU waiting for the host (host.c): of a layer's forward and
     * backward; of its forward again where fully recomputed */
    double host, rec_host;
} stage_time;

static double stage_total(const stage_time *s)
{
    return s->fwd + s->bwd + s->recompute + s->tp + s->cp + s->p2p + s->ep
           + s->offload + s->host;
}

typedef struct iter_ctx {
    const est_ctx *c;
    const space_model *m;
    const space_layout *l;
    hw_dtype gemm_dt, act_dt;
    est_group tp_group, cp_group, dp_group, pp_pair;
    int64_t T;            /* tokens per rank and micro-batch */
    int64_t Tn;           /* rows of norms and adds (T / TP with SP) */
    int64_t vp;           /* padded vocabulary */
    double act_bytes;     /* the [T, hidden] activation at 16 bits: what
                             TP collectives move */
    est_op_kind norm;     /* the model's norm */
    double eff;           /* in-training kernel efficiency (kernel_eff) */
    int any_layout_fp8;   /* fp8 GEMMs take operands in any layout
                             (Blackwell: no transposed copies) */
    int cudnn_attn;       /* fused attention is cuDNN's (est_estimate) */
    int hopper;           /* the GPU is Hopper (blockwise fp8 GEMMs) */
    const char *where;    /* the trace's section being timed */
    /* Attention core per layer: query and key/value heads (all TP ranks)
     * and the head size the kernel runs at (MLA: the mean of the QK and
     * V head sizes, which gives its FLOPs and bytes exactly, est_op_work);
     * attn_scale: the sliding-window layers' saving, averaged over the
     * layers (window_scale), 1 without windows. */
    int64_t attn_hq, attn_hk, attn_hd;
    int mla;              /* multi-head latent attention (kv_lora_rank) */
    double attn_scale;
    /* MoE (moe_routed): expert-parallel and expert-TP sizes, the busiest
     * EP rank's tokens over the mean, and the groups of the expert grid
     * (moe.c): EP (etp apart), ETP (adjacent), EP x ETP (the allgather
     * and flex dispatchers' group), expert data parallel. */
    int64_t ep, etp, edp;
    double imb;
    est_group ep_group, etp_group, eptp_group, edp_group;
    /* where add_gemm and grouped_gemm add their weight gradients' time
     * (est_estimate points it at the stage_time being built); NULL: not
     * kept */
    double *w_acc;
    double host_call_s;   /* the host's time per framework call (host.c);
                             0: the host not modelled */
} iter_ctx;

/* Appends a row to the estimate's trace, when it keeps one. */
static void trace_add(const iter_ctx *x, const char *what, const char *shape,
                      double fwd_s, double bwd_s)
{
    est_trace *tr = x->c->trace;
    if (!tr) return;
    if (tr->n == EST_TRACE_ROWS) {
        tr->dropped++;
        return;
    }
    est_trace_row *r = &tr->row[tr->n++];
    snprintf(r->what, sizeof r->what, "%s", what);
    snprintf(r->where, sizeof r->where, "%s", x->where ? x->where : "");
    snprintf(r->shape, sizeof r->shape, "%s", shape);
    r->fwd_s = fwd_s;
    r->bwd_s = bwd_s;
}

static void trace_op(const iter_ctx *x, const est_op *o, const est_time *t)
{
    if (!x->c->trace) return;
    char shape[48];
    if (o->kind == EST_OP_GEMM)
        snprintf(shape, sizeof shape, "%s%lld x %lld x %lld %s",
                 o->b > 1 ? "batched " : "", (long long)o->m, (long long)o->n,
                 (long long)o->k, hw_dtype_names[o->dtype]);
    else if (o->kind == EST_OP_FLASH_ATTN || o->kind == EST_OP_ATTN_CUDNN)
        snprintf(shape, sizeof shape, "b%lld h%lld/%lld s%lld d%lld%s",
                 (long long)o->b, (long long)o->heads, (long long)o->kv_heads,
                 (long long)o->sq, (long long)o->head_dim,
                 o->causal ? " causal" : "");
    else if (o->kind == EST_OP_ADAM)
        snprintf(shape, sizeof shape, "%lld params", (long long)o->n);
    else
        snprintf(shape, sizeof shape, "%lld x %lld", (long long)o->rows,
                 (long long)o->cols);
    trace_add(x, est_op_names[o->kind], shape, t->fwd_s, t->bwd_s);
}

/* ---- memoized operator times -------------------------------------------
 *
 * A search estimates thousands of layouts that share most operator shapes
 * (the same TP, micro-batch and sequence give the same GEMMs), so each
 * thread keeps the times it has asked for in a direct-mapped table of its
 * own: no locks, no allocation, and since a time is a pure function of
 * the models and the op, a hit returns the bits a miss would compute. */
#define MEMO_SLOTS 4096 /* power of two */

/* A memo key: the models' id and every field of the op, as numbers
 * (an est_op has padding, which a memcmp of the struct would read). */
#define MEMO_KEY 16

typedef struct memo_slot {
    int64_t key[MEMO_KEY]; /* key[0]: est_models_id, 0 when empty */
    est_time t;
} memo_slot;

static _Thread_local memo_slot memo[MEMO_SLOTS];
static int memo_on = 1;

void est_memo_enable(int on)
{
    memo_on = on;
}

static void memo_key(uint64_t ops, const est_op *o, int64_t *k)
{
    const int64_t v[MEMO_KEY] = {(int64_t)ops, o->kind, o->dtype, o->b,
                                 o->m, o->n, o->k, o->heads, o->kv_heads,
                                 o->sq, o->sk, o->head_dim, o->causal,
                                 o->rows, o->cols, o->vocab_parallel};
    memcpy(k, v, sizeof v);
}

static uint64_t memo_hash(const int64_t *k)
{
    /* Each field times an odd constant of its own, summed, then one
     * multiply-xorshift (the 64-bit golden-ratio constant of Fibonacci
     * hashing, Knuth TAOCP vol. 3 6.4): enough to spread the few shapes a
     * search meets over the table, and the products are independent, so
     * the CPU runs them side by side (a chain of 16 multiplies was a
     * tenth of a search's time, bench/results/sweep_speed.md). */
    uint64_t h = 0;
    for (int i = 0; i < MEMO_KEY; i++)
        h += (uint64_t)k[i] * (0x9e3779b97f4a7c15u + 2 * (uint64_t)i);
    h ^= h >> 32;
    h *= 0x9e3779b97f4a7c15u;
    return h ^ (h >> 29);
}

/* 1 where keys a and b are equal: the fields in a loop the compiler
 * unrolls, not a call to memcmp. */
static int memo_same(const int64_t *a, const int64_t *b)
{
    int64_t d = 0;
    for (int i = 0; i < MEMO_KEY; i++) d |= a[i] ^ b[i];
    return d == 0;
}

static est_time op_time(const iter_ctx *x, const est_op *op)
{
    est_time t;
    const est_models *ops = x->c->ops;
    if (memo_on) {
        int64_t key[MEMO_KEY];
        memo_key(est_models_id(ops), op, key);
        memo_slot *sl = &memo[memo_hash(key) & (MEMO_SLOTS - 1)];
        if (memo_same(sl->key, key)) {
            t = sl->t;
        } else {
            est_models_time(ops, op, &t);
            memcpy(sl->key, key, sizeof key);
            sl->t = t;
        }
    } else {
        est_models_time(ops, op, &t);
    }
    t.fwd_s /= x->eff;
    t.bwd_s /= x->eff;
    trace_op(x, op, &t);
    return t;
}

/* Collective times, memoized as operator times are: a search asks for the
 * same few (a layer's TP all-reduce, the DP gradient reduce-scatter at a
 * DP size) thousands of times, and each costs a pass over NCCL's
 * algorithms and protocols and a table lookup (est_coll_time). A time is
 * a pure function of the tables (their id), the system, the collective,
 * the bytes and the group; tables without an id (none) are not kept. */
#define COLL_MEMO_SLOTS 1024 /* power of two */

typedef struct coll_memo_slot {
    uint64_t comm;        /* est_comm_id; 0 when empty */
    const hw_system *sys;
    uint64_t bytes;       /* the double's bits */
    int kind, size, per_node, nodes, node_busy;
    double t;
} coll_memo_slot;

static _Thread_local coll_memo_slot coll_memo[COLL_MEMO_SLOTS];

static double coll_time(const iter_ctx *x, est_coll k, double bytes,
                        const est_group *g)
{
    uint64_t id = est_comm_id(x->c->comm), b;
    if (!memo_on || !id)
        return est_coll_time(x->c->comm, x->c->sys, k, bytes, g);
    memcpy(&b, &bytes, sizeof b);
    uint64_t h = id * 0x9e3779b97f4a7c15u + b * 0xbf58476d1ce4e5b9u
                 + (uint64_t)k * 0x94d049bb133111ebu
                 + (uint64_t)g->size * 0xd6e8feb86659fd93u
                 + (uint64_t)g->per_node * 0xa0761d6478bd642fu
                 + (uint64_t)g->nodes * 0xe7037ed1a0b428dbu
                 + (uint64_t)g->node_busy * 0x8ebc6af09c88c6e3u
                 + (uint64_t)(uintptr_t)x->c->sys;
    h ^= h >> 32;
    h *= 0x9e3779b97f4a7c15u;
    h ^= h >> 29;
    coll_memo_slot *s = &coll_memo[h & (COLL_MEMO_SLOTS - 1)];
    if (s->comm == id && s->sys == x->c->sys && s->bytes == b
        && s->kind == (int)k && s->size == g->size
        && s->per_node == g->per_node && s->nodes == g->nodes
        && s->node_busy == g->node_busy)
        return s->t;
    double t = est_coll_time(x->c->comm, x->c->sys, k, bytes, g);
    *s = (coll_memo_slot){id, x->c->sys, b, (int)k, g->size, g->per_node,
                          g->nodes, g->node_busy, t};
    return t;
}

static double coll(const iter_ctx *x, est_coll k, double bytes,
                   const est_group *g)
{
    if (g->size <= 1 || bytes <= 0) return 0;
    double t = coll_time(x, k, bytes, g);
    t = isfinite(t) ? t : 0;
    if (x->c->trace) {
        char shape[48];
        snprintf(shape, sizeof shape, "%.4g MB over %dx%d", bytes / 1e6,
                 g->nodes, g->per_node);
        trace_add(x, est_coll_names[k], shape, t, 0);
    }
    return t;
}

/* A group of `size` ranks whose consecutive members are `stride` global
 * ranks apart, on nodes of gpn GPUs (rank order tp-cp-dp-pp). */
static est_group place(int64_t size, int64_t stride, int gpn)
{
    est_group g = {(int)size, 1, (int)size, 0};
    if (size <= 1) {
        g.per_node = 1, g.nodes = 1;
        return g;
    }
    if (stride < gpn && gpn % stride == 0) {
        int64_t fit = gpn / stride;
        int64_t per = fit < size ? fit : size;
        while (per > 1 && size % per) per--;
        g.per_node = (int)per;
        g.nodes = (int)(size / per);
    }
    return g;
}

static est_op gemm(hw_dtype dt, int64_t m, int64_t n, int64_t k)
{
    est_op o = {0};
    o.kind = EST_OP_GEMM;
    o.dtype = dt;
    o.b = 1, o.m = m, o.n = n, o.k = k;
    return o;
}

static est_op elementwise(est_op_kind kind, hw_dtype dt, int64_t rows,
                          int64_t cols)
{
    est_op o = {0};
    o.kind = kind;
    o.dtype = dt;
    o.rows = rows, o.cols = cols;
    return o;
}

/* Where an fp8 GEMM's input comes from. Megatron-Core's Transformer
 * Engine layers: QKV and FC1 are TE LayerNormLinear modules, whose norm
 * can write fp8 itself (column-parallel); the attention output
 * projection and FC2 are plain TE Linear modules, fed by the attention
 * core and by Megatron's own SwiGLU/GeLU kernel in 16 bits (row-parallel)
 * (megatron/core/models/gpt/gpt_layer_specs.py,
 * get_gpt_layer_with_transformer_engine_spec, Megatron-LM core_v0.14.0). */
typedef enum gemm_role {
    GEMM_16BIT,   /* not an fp8 GEMM (the LM head, attention) */
    GEMM_NORM_IN, /* input from a LayerNormLinear's norm */
    GEMM_LINEAR_IN, /* input from the caller, 16-bit */
    /* input from the caller, 16-bit, on a layer whose output gradient is
     * this rank's own (no TP gather of it under SP): the grouped expert
     * GEMMs, MLA's duplicated down projections, a column-parallel Linear
     * without a norm */
    GEMM_LOCAL_IN
} gemm_role;

/* A one-pass kernel (the fp8 quantisation kinds: forward time only)
 * added to *t, which is the forward or, when `in_bwd`, the backward. */
static void add_kernel(const iter_ctx *x, est_op_kind k, int64_t rows,
                       int64_t cols, double *t, int in_bwd)
{
    est_op o = elementwise(k, x->act_dt, rows, cols);
    *t += op_time(x, &o).fwd_s;
    est_trace *tr = x->c->trace;
    if (tr && in_bwd && tr->n > 0) { /* the row op_time just added */
        est_trace_row *r = &tr->row[tr->n - 1];
        r->bwd_s = r->fwd_s;
        r->fwd_s = 0;
    }
}

/* The quantisation kernels Transformer Engine runs for one fp8 GEMM of
 * input [m, k] and output [m, n], per micro-batch (the weight is cast once
 * per iteration: te_weight_casts). Sources: TransformerEngine v1.12/v2.4
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
static void te_fp8_casts(const iter_ctx *x, gemm_role role, int64_t m,
                         int64_t n, int64_t k, double *fwd, double *bwd)
{
    const space_layout *l = x->l;
    int rec = l->fp8_recipe;
    int per_tensor = rec == SPACE_FP8_DELAYED || rec == SPACE_FP8_TENSORWISE;
    int current = rec == SPACE_FP8_TENSORWISE;
    int no_t = per_tensor && x->any_layout_fp8;
    est_op_kind q = no_t ? EST_OP_FP8_QUANT1 : EST_OP_FP8_QUANT2;
    if (role == GEMM_NORM_IN) {
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
    if (role == GEMM_LINEAR_IN && l->sp && l->tp > 1 && per_tensor && !no_t) {
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
 * te_weight_casts. Not modelled: the amax all-reduce over TP under
 * sequence parallelism (latency-bound, a few bytes), fp4 gathers (TP
 * all-gathers stay 16-bit here), and the layers the paper keeps in bf16
 * (its first and last blocks, about 16 % of the linear layers; Megatron
 * runs every layer in fp4 unless told otherwise). */
static void te_fp4_casts(const iter_ctx *x, int64_t m, int64_t n, int64_t k,
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
 * How much slower: DeepGEMM's own table of its dense fp8 GEMMs on H800
 * (deepseek-ai/DeepGEMM@55ab91f7, README.md, "Normal GEMMs for dense
 * models", the six M = 4096 rows: 1009, 1125, 751, 1426, 1265, 1168
 * TFLOP/s) against this project's fitted per-tensor fp8 GEMM of H100
 * SXM at the same shapes (`trainplan op show --gpu h100-sxm --op gemm
 * --dtype fp8 --shape b=1,m=4096,n=N,k=K`, forward: 1532, 1417, 1261,
 * 1608, 1533, 1444 TFLOP/s; H800 has H100 SXM's compute): ratios 1.52,
 * 1.26, 1.68, 1.13, 1.21, 1.24, geometric mean 1.33. DERIVED across two
 * sources (DeepSeek's H800 clocks may differ from XLA's H100); Blackwell
 * applies the blocks in its tensor cores (TE emulates blockwise with
 * MXFP8 GEMMs there), so no factor. */
#define EST_FP8_BLOCKWISE_HOPPER_SLOWDOWN 1.33

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

/* The time t of a scaled fp8 GEMM slowed by factor f (the trace's row
 * too). */
static void scaled_gemm_slowdown(const iter_ctx *x, est_time *t, double f)
{
    t->fwd_s *= f;
    t->bwd_s *= f;
    est_trace *tr = x->c->trace;
    if (tr && tr->n > 0) { /* the row op_time just added */
        tr->row[tr->n - 1].fwd_s = t->fwd_s;
        tr->row[tr->n - 1].bwd_s = t->bwd_s;
    }
}

/* GEMM time: forward, and its backward split into data and weight
 * gradients (equal FLOPs, so taken as halves: the fitted models time the
 * backward as a whole), with the fp8 casts of its operands where it runs
 * in fp8 (role not GEMM_16BIT and an fp8 layout). The weight-gradient
 * half goes to *wgrad and to x->w_acc; the casts stay in the backward's
 * input-gradient part. */
static est_time add_gemm(const iter_ctx *x, int64_t m, int64_t n, int64_t k,
                         gemm_role role, double *fwd, double *bwd,
                         double *wgrad)
{
    hw_dtype dt = role == GEMM_16BIT ? x->act_dt : x->gemm_dt;
    est_op o = gemm(dt, m, n, k);
    est_time t = op_time(x, &o);
    if (dt == HW_FP8 && x->l->fp8_recipe == SPACE_FP8_BLOCKWISE
        && x->hopper)
        scaled_gemm_slowdown(x, &t, EST_FP8_BLOCKWISE_HOPPER_SLOWDOWN);
    if (dt == HW_FP8 && x->l->fp8_recipe == SPACE_FP8_MXFP8)
        scaled_gemm_slowdown(x, &t, EST_MXFP8_SLOWDOWN);
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
    est_op in = elementwise(EST_OP_FP8_CAST, x->act_dt, m, k),
           w = elementwise(EST_OP_FP8_CAST, x->act_dt, k, n),
           g = elementwise(EST_OP_FP8_CAST, x->act_dt, m, n);
    est_time ti = op_time(x, &in), tw = op_time(x, &w), tg = op_time(x, &g);
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
 * expert weights. Seconds for the n weights of one layer (layer_weights). */
static double te_weight_casts(const iter_ctx *x, int64_t (*shape)[2],
                              int n)
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

static void add_op(const iter_ctx *x, const est_op *o, double *fwd,
                   double *bwd)
{
    est_time t = op_time(x, o);
    *fwd += t.fwd_s;
    *bwd += t.bwd_s;
}

/* Sliding-window attention (space_model.window): a local layer's query i
 * sees min(i + 1, w) keys of a causal row of s, sum w (w + 1) / 2 +
 * (s - w) w over the row, against s (s + 1) / 2 for a global layer
 * (FlashAttention's window_size, which skips the blocks outside the
 * window: its work scales with the keys seen). Returns the attention
 * core's time over the global one's, averaged over the layers: the
 * global ones (every global_every-th, space.h) at 1. Attention sinks and
 * logit soft-capping are elementwise inside the kernel: not timed. */
static double window_scale(const space_model *m, int64_t seq)
{
    if (m->window <= 0 || m->window >= seq) return 1;
    double w = (double)m->window, s = (double)seq;
    double local = (w * (w + 1) / 2 + (s - w) * w) / (s * (s + 1) / 2);
    double L = (double)m->num_layers;
    double global = m->global_every > 0
                        ? (double)(m->num_layers / m->global_every) / L
                        : 0;
    return global + (1 - global) * local;
}

/* Attention core of one layer for one micro-batch (per rank): forward and
 * backward compute, and the exposed CP exchange, forward and backward. */
static void attention(const iter_ctx *x, double *fwd, double *bwd,
                      double *cp_fwd, double *cp_bwd)
{
    const space_layout *l = x->l;
    int64_t hq = x->attn_hq / l->tp, hk = x->attn_hk / l->tp;
    int64_t hd = x->attn_hd;
    int64_t s = l->seq / l->cp;
    *cp_fwd = *cp_bwd = 0;
    /* One ring step's message: this rank's K and V block. */
    double p = l->cp > 1
                   ? coll(x, EST_COLL_SENDRECV,
                          2.0 * (double)(l->mbs * s * (hk > 0 ? hk : 1) * hd)
                              * est_dtype_bytes(x->act_dt),
                          &x->cp_group)
                   : 0;
    if (!l->flash) {
        /* Unfused: scores GEMM, masked softmax, weighted sum (the causal
         * mask does not save GEMM work). The softmax is Megatron's fused
         * scale-mask-softmax kernel where its conditions hold, PyTorch's
         * otherwise (megatron/core/fusions/fused_softmax.py,
         * is_kernel_available: 16-bit input, 16 < keys <= 4096, queries,
         * keys and batch x heads multiples of 4). */
        est_op qk = gemm(x->act_dt, s, l->seq, hd);
        qk.b = l->mbs * hq;
        est_op av = gemm(x->act_dt, s, hd, l->seq);
        av.b = l->mbs * hq;
        int fused = l->seq > 16 && l->seq <= 4096 && s % 4 == 0
                    && l->seq % 4 == 0 && (l->mbs * hq) % 4 == 0;
        est_op sm = elementwise(fused ? EST_OP_MASKED_SOFTMAX : EST_OP_SOFTMAX,
                                x->act_dt, l->mbs * hq * s, l->seq);
        add_op(x, &qk, fwd, bwd);
        add_op(x, &sm, fwd, bwd);
        if (x->m->attn_dropout > 0) { /* on the probabilities: a kernel */
            est_op dr = elementwise(EST_OP_DROPOUT, x->act_dt,
                                    l->mbs * hq * s, l->seq);
            add_op(x, &dr, fwd, bwd);
        }
        add_op(x, &av, fwd, bwd);
        *cp_fwd = (double)(l->cp - 1) * p;
        *cp_bwd = 2 * (double)(l->cp - 1) * p;
        return;
    }
    est_op fa = {0};
    fa.kind = x->cudnn_attn ? EST_OP_ATTN_CUDNN : EST_OP_FLASH_ATTN;
    fa.dtype = x->act_dt;
    fa.heads = hq, fa.kv_heads = hk > 0 ? hk : 1;
    fa.head_dim = hd;
    fa.causal = 1;
    /* Each document attends to itself only: a packed row of seq tokens is
     * for each length bucket share x seq / length documents of that
     * length (one bucket, the whole row, without packing), run as one
     * variable-length kernel per bucket (cuDNN's THD layout with
     * cu_seqlens, flash-attn's varlen). Under CP every document is split
     * over the ranks as a row is, and the ring moves the whole row's
     * keys and values at each step. */
    est_time diag = {0, 0}, h = {0, 0};
    int nb = l->n_docs > 0 ? l->n_docs : 1;
    for (int i = 0; i < nb; i++) {
        int64_t d = l->n_docs > 0 ? l->doc_len[i] : l->seq;
        double docs = l->n_docs > 0 ? l->doc_share[i] * (double)l->seq
                                          / (double)d
                                    : 1;
        double rows = (double)l->mbs * docs;
        fa.b = (int64_t)ceil(rows - 1e-9);
        if (fa.b < 1) fa.b = 1;
        double scale = rows / (double)fa.b; /* a fractional document */
        fa.sq = fa.sk = d / l->cp > 0 ? d / l->cp : 1;
        est_time t = op_time(x, &fa);
        diag.fwd_s += scale * t.fwd_s;
        diag.bwd_s += scale * t.bwd_s;
        if (l->cp == 1) continue;
        /* Ring attention with load-balanced causal chunks: after the
         * causal diagonal block, each of the cp - 1 steps computes half a
         * block (half the queries against the whole KV block, or the
         * reverse), while the next KV block (and, backward, its gradient)
         * travels. */
        est_op half = fa;
        half.causal = 0;
        half.sq = fa.sk / 2 > 0 ? fa.sk / 2 : 1;
        t = op_time(x, &half);
        h.fwd_s += scale * t.fwd_s;
        h.bwd_s += scale * t.bwd_s;
    }
    *fwd += diag.fwd_s;
    *bwd += diag.bwd_s;
    if (l->cp == 1) return;
    double steps = (double)(l->cp - 1);
    *fwd += steps * h.fwd_s;
    *bwd += steps * h.bwd_s;
    /* Exchange i + 1 travels during step i: the first under the
     * diagonal block, the rest under half blocks. Backward moves the KV
     * block and its gradient. */
    if (l->cp_comm == SPACE_CP_ALLGATHER) {
        /* All-gather of every rank's K and V before the attention, and
         * the reduce-scatter of their gradients after its backward, not
         * overlapped (Megatron-Core --cp-comm-type all_gather; PyTorch's
         * context parallel with its default all-gather rotation). */
        double kv = 2.0 * (double)(l->mbs * s * (hk > 0 ? hk : 1) * hd)
                    * est_dtype_bytes(x->act_dt) * (double)l->cp;
        *cp_fwd = coll(x, EST_COLL_ALLGATHER, kv, &x->cp_group);
        *cp_bwd = *cp_fwd + coll(x, EST_COLL_REDUCE_SCATTER, kv, &x->cp_group);
        return;
    }
    *cp_fwd = fmax(0, p - diag.fwd_s) + (steps - 1) * fmax(0, p - h.fwd_s);
    *cp_bwd = fmax(0, 2 * p - diag.bwd_s)
              + (steps - 1) * fmax(0, 2 * p - h.bwd_s);
}

/* Adds op o to *fwd, *bwd as add_op does, naming its trace row `what`
 * (a kernel timed as an op of another name, e.g. a token permutation as
 * the embedding's gather). */
static void add_named(const iter_ctx *x, const est_op *o, const char *what,
                      double *fwd, double *bwd)
{
    est_trace *tr = x->c->trace;
    int n0 = tr ? tr->n : 0;
    add_op(x, o, fwd, bwd);
    if (tr && tr->n > n0)
        snprintf(tr->row[tr->n - 1].what, sizeof tr->row[0].what, "%s", what);
}

/* Multi-head latent attention's projections, one micro-batch, per rank
 * (Megatron-Core MLASelfAttention, megatron/core/transformer/
 * multi_latent_attention.py, get_query_key_value_tensors,
 * NVIDIA/Megatron-LM@d98e8a64ddf3; the TE spec's layer classes): the
 * query and KV down projections are TELinear "duplicated" (whole weights
 * on every TP rank, over the rank's own tokens: T / TP with SP), each
 * latent is RMS-normalised, then the column-parallel up projections run
 * over all T tokens (the latents gathered under SP): q [T, q_lora] x
 * [q_lora, heads (nope + rope) / TP] (or, without a query latent, q
 * [T, h] x [h, heads (nope + rope) / TP]) and kv [T, kv_lora] x [kv_lora,
 * heads (nope + v) / TP]; RoPE on the query's rope part and on the one
 * shared rope key. *g_up, *w_up: the up projections' time and weight
 * gradient, under which the latents' TP collectives run; *up_f: the
 * forward of the up projections and RoPE (what --recompute-modules
 * mla_up_proj reruns). Under fp8 every
 * projection is a Transformer Engine linear in fp8 (the attention core
 * stays 16-bit): the down projections plain TELinear layers fed by the
 * layer's own norm (GEMM_LOCAL_IN: their output gradients are this
 * rank's), the up projections TELayerNormColumnParallelLinear layers that
 * fuse the latents' norms (qk_layernorm; gpt_layer_specs.py,
 * get_gpt_layer_with_transformer_engine_spec, multi_latent_attention
 * branch, NVIDIA/Megatron-LM@d98e8a64ddf3), a query without a latent a
 * plain column-parallel TELinear. */
static void mla_qkv(const iter_ctx *x, double *fwd, double *bwd,
                    est_time *g_up, double *w_up, double *up_f)
{
    const space_model *m = x->m;
    int64_t tp = x->l->tp, h = m->hidden, T = x->T, Tn = x->Tn;
    int64_t H = m->heads, rope = m->qk_rope_head_dim;
    int64_t qk = m->qk_nope_head_dim + rope, kvu = m->qk_nope_head_dim
                                                     + m->v_head_dim;
    int64_t ql = m->q_lora_rank, kl = m->kv_lora_rank;
    if (ql > 0) add_gemm(x, Tn, ql, h, GEMM_LOCAL_IN, fwd, bwd, NULL);
    add_gemm(x, Tn, kl + rope, h, GEMM_LOCAL_IN, fwd, bwd, NULL);
    est_op o;
    if (ql > 0) {
        o = elementwise(x->norm, x->act_dt, Tn, ql);
        add_op(x, &o, fwd, bwd);
    }
    o = elementwise(x->norm, x->act_dt, Tn, kl);
    add_op(x, &o, fwd, bwd);
    double wq, wkv;
    est_time a = ql > 0 ? add_gemm(x, T, H * qk / tp, ql, GEMM_NORM_IN, fwd,
                                   bwd, &wq)
                        : add_gemm(x, T, H * qk / tp, h, GEMM_LOCAL_IN, fwd,
                                   bwd, &wq);
    est_time b = add_gemm(x, T, H * kvu / tp, kl, GEMM_NORM_IN, fwd, bwd,
                          &wkv);
    g_up->fwd_s = a.fwd_s + b.fwd_s;
    g_up->bwd_s = a.bwd_s + b.bwd_s;
    *w_up = wq + wkv;
    *up_f = g_up->fwd_s;
    if (m->pos == SPACE_POS_ROPE || rope > 0) {
        double f0 = *fwd;
        o = elementwise(EST_OP_ROPE, x->act_dt, T, H * rope / tp + rope);
        add_op(x, &o, fwd, bwd);
        *up_f += *fwd - f0;
    }
}

/* DeepEP's dispatch (or combine), one pass, per rank (deepseek-ai/DeepEP
 * normal kernels, which Megatron-Core's flex dispatcher calls:
 * token_dispatcher.py _DeepepManager; the ETP ranks are folded into its
 * group, each expert repeated on each ETP rank): a token crosses the
 * network once to each other scale-up domain (NVLink domain: a node, or
 * NVL72's rack) that holds one of its experts, and is forwarded over
 * NVLink to each rank there that does; both run at once, so the slower
 * sets the time. Under uniform routing a token's top_k experts fall in
 * M (1 - (1 - 1/M)^top_k) of the M domains the EP group spans, and on
 * ep (1 - (1 - 1/ep)^top_k) of its ranks; group-limited routing
 * (router_topk_groups of router_groups, DeepSeek-V3's node-limited
 * routing, arXiv 2412.19437 section 2.1.2) caps the domains. Each is
 * timed as an all-to-all whose scale-up or network part moves exactly
 * those bytes (comm.c's pairwise model, in which a rank's input buffer
 * includes its own share, as the all-to-all dispatcher's does). */
static double deepep_time(const iter_ctx *x, int64_t Tr, double imb)
{
    const space_model *m = x->m;
    const hw_system *y = x->c->sys;
    double k = (double)m->top_k, ep = (double)x->ep;
    double tok = (double)Tr * (double)x->etp * (double)m->hidden
                 * est_dtype_bytes(x->act_dt) * imb;
    const est_group *g = &x->eptp_group;
    if (g->size <= 1) return 0; /* DeepEP needs ETP x EP > 1 */
    int gpn = y->gpus_per_node > 0 ? y->gpus_per_node : 1;
    int dn = y->scaleup_domain_gpus / gpn;
    if (dn < 1) dn = 1;
    int M = (g->nodes + dn - 1) / dn;
    int q = g->size / M; /* ranks of the group in one domain */
    double ranks = ep * (1 - pow(1 - 1 / ep, k));
    if (M <= 1)
        return coll(x, EST_COLL_ALLTOALL, tok * ranks, g);
    double doms = (double)M * (1 - pow(1 - 1 / (double)M, k));
    if (m->router_groups > 0 && m->router_topk_groups > 0) {
        double G = (double)m->router_groups, Gk = (double)m->router_topk_groups;
        double cap = G >= M ? fmin(Gk, (double)M) : Gk * (double)M / G;
        doms = fmin(doms, cap);
    }
    double cross = tok * doms * (double)(M - 1) / (double)M;
    double n = (double)g->size;
    double t_net = coll(x, EST_COLL_ALLTOALL, cross * n / (n - (double)q), g);
    double t_su = 0;
    if (q > 1) {
        est_group dom = place(q, 1, gpn);
        dom.node_busy = g->node_busy;
        t_su = coll(x, EST_COLL_ALLTOALL, tok * ranks, &dom);
    }
    return fmax(t_net, t_su);
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
 * TFLOP/s on H100, above every measured GEMM). In fp8 with the fp8 casts
 * of its inputs and output gradients over all of the rank's rows: Transformer
 * Engine quantises every expert's rows with one split-quantise kernel
 * (grouped_linear.py, _GroupedLinear.forward: tex.split_quantize or
 * tex.group_quantize over m_splits, NVIDIA/TransformerEngine@
 * d0067d0da6cb), the input coming 16-bit from the permutation or the
 * activation and each output gradient this rank's own (GEMM_LOCAL_IN);
 * blockwise scaling pays its Hopper slowdown, and MXFP8 its, as a dense
 * GEMM does. */
static void grouped_gemm(const iter_ctx *x, int64_t nle, int64_t rows,
                         int64_t n, int64_t k, double *fwd, double *bwd)
{
    int64_t tiled = (rows + EST_GROUPED_TILE_M - 1) / EST_GROUPED_TILE_M
                    * EST_GROUPED_TILE_M;
    est_op g = gemm(x->gemm_dt, nle * tiled, n, k);
    if (x->gemm_dt != HW_FP8) {
        double b0 = *bwd;
        add_named(x, &g, "grouped_gemm", fwd, bwd);
        if (x->w_acc) *x->w_acc += (*bwd - b0) / 2; /* as add_gemm's */
        return;
    }
    est_trace *tr = x->c->trace;
    int n0 = tr ? tr->n : 0;
    est_time t = op_time(x, &g);
    if (tr && tr->n > n0)
        snprintf(tr->row[tr->n - 1].what, sizeof tr->row[0].what, "%s",
                 "grouped_gemm");
    if (x->l->fp8_recipe == SPACE_FP8_BLOCKWISE && x->hopper)
        scaled_gemm_slowdown(x, &t, EST_FP8_BLOCKWISE_HOPPER_SLOWDOWN);
    if (x->l->fp8_recipe == SPACE_FP8_MXFP8)
        scaled_gemm_slowdown(x, &t, EST_MXFP8_SLOWDOWN);
    *fwd += t.fwd_s;
    *bwd += t.bwd_s;
    if (x->w_acc) *x->w_acc += t.bwd_s / 2;
    te_fp8_casts(x, GEMM_LOCAL_IN, nle * rows, n, k, fwd, bwd);
}

/* Rows per local expert as an fp8 grouped GEMM runs them: Megatron-Core
 * pads each expert's rows to a multiple of 16 (MXFP8: 32) with TE's
 * Fp8Padding before FC1 and strips it after FC2 with Fp8Unpadding
 * (megatron/core/transformer/moe/experts.py, TEGroupedMLP: the
 * quantization_padding fallback unless the router pads; moe_utils.py
 * get_align_size_for_quantization; fp8_utils.py get_fp8_align_size,
 * NVIDIA/Megatron-LM@d98e8a64ddf3). With one expert and one EP rank the
 * count is exact (every routed row is local) and padded up; otherwise
 * each expert's count varies from step to step and its padding is, in the
 * mean, half the alignment. *copy: whether TE copies the rows (it
 * returns the input unchanged when no count needs padding:
 * transformer_engine/pytorch/module/fp8_padding.py, Fp8Padding.forward,
 * NVIDIA/TransformerEngine@d0067d0da6cb). No copy either where the rows
 * arrive padded: the router's own padding (l->moe_router_pad,
 * --moe-router-padding-for-quantization: token_dispatcher.py pads the
 * routing map, pad_routing_map, so each expert's count is a multiple of
 * the alignment) or HybridEP's dispatch (_HybridEPManager.dispatch passes
 * pad_multiple to hybrid_ep_dispatch); the GEMM rows are rounded up as
 * before (the extra routed rows carry zero probability). */
static int64_t fp8_expert_rows(const iter_ctx *x, int64_t nle, int64_t rows,
                               int *copy)
{
    int64_t a = x->l->fp8_recipe == SPACE_FP8_MXFP8 ? 32 : 16;
    int64_t p = nle == 1 && x->ep == 1 ? (rows + a - 1) / a * a : rows + a / 2;
    int padded = x->l->moe_router_pad
                 || (x->l->moe_dispatcher == SPACE_MOE_FLEX
                     && x->l->moe_flex_backend == SPACE_MOE_FLEX_HYBRIDEP);
    *copy = p != rows && !padded;
    return p;
}

/* An MoE layer's routed experts, one micro-batch, per rank: compute into
 * *fwd, *bwd; the dispatch and combine, all exposed, into *ep_f, *ep_b,
 * and apart, of one direction, into *disp, *comb (the backward moves the
 * same volumes the other way); the experts' activation's forward into
 * *act_f (what --recompute-modules moe_act reruns).
 * Megatron-Core with Transformer Engine (NVIDIA/Megatron-LM@d98e8a64ddf3,
 * megatron/core/transformer/moe/):
 *  - router.py TopKRouter: the gating GEMM [Tr, h] x [h, E] in the input's
 *    dtype (moe_router_dtype None by default, transformer_config.py), over
 *    the rank's own tokens Tr (T / TP: MoE needs SP with TP); the scores,
 *    top-k, routing map and load-balancing loss over [Tr, E]
 *    (moe_utils.py topk_routing_with_score_function and the aux loss's:
 *    PyTorch's ops, or Transformer Engine's fused router kernels with
 *    l->moe_router_fusion; op.c EST_OP_ROUTER, EST_OP_ROUTER_FUSED);
 *  - token_dispatcher.py MoEAlltoAllTokenDispatcher: permute (gather the
 *    Tr x top_k token copies of h), all-to-all of them and of their
 *    probabilities over the EP group, all-gather over the expert-TP group
 *    (dispatch_postprocess), a second permutation sorting the received
 *    rows by local expert (when a rank has several); the combine mirrors
 *    it: unsort, reduce-scatter over ETP, all-to-all, unpermute
 *    (scatter-add back to Tr rows). MoEAllGatherTokenDispatcher instead
 *    gathers every token of the ETP x EP group (and its routing map and
 *    probabilities) and reduce-scatters the output back. MoEFlexToken-
 *    Dispatcher (DeepEP) sends each token once to each EP rank that holds
 *    one of its experts (expected ep (1 - (1 - 1/ep)^top_k) of them under
 *    uniform routing), to every ETP rank there, as one fused exchange over
 *    the ETP x EP group;
 *  - experts.py TEGroupedMLP (--moe-grouped-gemm): E / ep local experts
 *    as one grouped GEMM each for FC1 ([rows, h] x [h, g f_e / etp]) and
 *    FC2, with the activation between. The rank receives etp x Tr x top_k
 *    rows (all of its ETP group's tokens routed to its experts; E / ep
 *    experts of E, from ep ranks), times the imbalance x->imb on the
 *    busiest EP rank (EP > 1; with one EP rank every token is local and
 *    the rank's total is exact);
 *  - nothing of the dispatch overlaps compute by default; the shared
 *    experts' overlap and the 1F1B A2A overlap (l->moe_comm_overlap)
 *    are layer_time's and moe_overlap_a2a's;
 *  - fp8 (Transformer Engine): the grouped GEMMs in fp8 over padded rows
 *    (grouped_gemm, fp8_expert_rows), the padding and unpadding copies
 *    of the [rows, h] input and output each way; the router GEMM stays
 *    16-bit (router.py gating: router_gating_linear in the input's dtype,
 *    not an fp8 layer); the dispatch moves 16-bit tokens (no fp8
 *    dispatch modelled). */
static void moe_routed(const iter_ctx *x, double *fwd, double *bwd,
                       double *ep_f, double *ep_b, double *disp,
                       double *comb, double *act_f)
{
    const space_model *m = x->m;
    const space_layout *l = x->l;
    int64_t h = m->hidden, E = m->num_experts, k = m->top_k;
    int64_t ep = x->ep, etp = x->etp, nle = E / ep;
    int64_t fe = m->expert_ffn_hidden / etp, Tr = x->Tn;
    int gated = space_act_ffn_gemms(m->act) == 3;
    double imb = ep > 1 ? x->imb : 1, e = est_dtype_bytes(x->act_dt);
    add_gemm(x, Tr, E, h, GEMM_16BIT, fwd, bwd, NULL);
    est_op o = elementwise(l->moe_router_fusion ? EST_OP_ROUTER_FUSED : EST_OP_ROUTER,
                           x->act_dt, Tr, E);
    add_named(x, &o, "moe_route", fwd, bwd);
    /* Permutations are row gathers, backward the reverse (op.c,
     * EST_OP_PERMUTE: memory-bound, no table to zero as an embedding's
     * backward has). The flex dispatcher has none before the exchange:
     * its backends fuse the copy of each token to its destinations into
     * the dispatch kernel and the weighted sum back into the combine
     * (token_dispatcher.py MoEFlexTokenDispatcher.token_dispatch, "fused
     * permutation and AlltoAll communication", NVIDIA/Megatron-LM@
     * d98e8a64ddf3; docs/discussions/deepseek-v3-gb200-optimization,
     * @79e8592b, section 2.1.1: the flex dispatcher "fuses the global
     * permute into the communication kernel"). */
    if (l->moe_dispatcher != SPACE_MOE_FLEX) {
        est_op perm = elementwise(EST_OP_PERMUTE, x->act_dt, Tr * k, h);
        add_named(x, &perm, "moe_permute", fwd, bwd);
        add_named(x, &perm, "moe_unpermute", fwd, bwd);
    }
    double sent = (double)(Tr * k) * (double)h * e;
    double rows = (double)etp * (double)(Tr * k) * imb;
    /* dispatch, combine, and their sum in the order the exposed time
     * always had (the same bits as before the split) */
    double d = 0, cb = 0, comm = 0;
    if (l->moe_dispatcher == SPACE_MOE_ALLGATHER) {
        double all = (double)(etp * ep * Tr);
        d = coll(x, EST_COLL_ALLGATHER, all * (double)h * e, &x->eptp_group)
            + coll(x, EST_COLL_ALLGATHER, all * (double)E * 5,
                   &x->eptp_group);
        cb = coll(x, EST_COLL_REDUCE_SCATTER, all * (double)h * e,
                  &x->eptp_group);
        comm = d + cb;
    } else if (l->moe_dispatcher == SPACE_MOE_FLEX) {
        d = cb = deepep_time(x, Tr, imb);
        comm = 2 * d;
    } else {
        double a2a = coll(x, EST_COLL_ALLTOALL, sent * imb, &x->ep_group);
        double pr = coll(x, EST_COLL_ALLTOALL, (double)(Tr * k) * 4 * imb,
                         &x->ep_group);
        d = a2a + pr, cb = a2a;
        comm = 2 * a2a + pr;
        if (etp > 1) {
            double ag = coll(x, EST_COLL_ALLGATHER, (double)etp * sent * imb,
                             &x->etp_group);
            double rs = coll(x, EST_COLL_REDUCE_SCATTER,
                             (double)etp * sent * imb, &x->etp_group);
            d += ag, cb += rs;
            comm += ag + rs;
        }
    }
    *disp = d;
    *comb = cb;
    *ep_f += comm;
    *ep_b += comm;
    int64_t mrows = (int64_t)ceil(rows / (double)nle - 1e-9);
    if (mrows < 1) mrows = 1;
    /* HybridEP's dispatch writes the rows already sorted by local expert
     * (_HybridEPManager.get_permuted_hidden_states_by_experts returns its
     * input, NVIDIA/Megatron-LM@d98e8a64ddf3 token_dispatcher.py). */
    int sorted = l->moe_dispatcher == SPACE_MOE_FLEX
                 && l->moe_flex_backend == SPACE_MOE_FLEX_HYBRIDEP;
    if (nle > 1 && !sorted) {
        est_op sort = elementwise(EST_OP_PERMUTE, x->act_dt, nle * mrows, h);
        add_named(x, &sort, "moe_sort", fwd, bwd);
        add_named(x, &sort, "moe_unsort", fwd, bwd);
    }
    int copy = 0;
    if (x->gemm_dt == HW_FP8) {
        int64_t prow = fp8_expert_rows(x, nle, mrows, &copy);
        if (copy) {
            est_op pad = elementwise(EST_OP_PERMUTE, x->act_dt, nle * mrows,
                                     h);
            add_named(x, &pad, "moe_fp8_pad", fwd, bwd);
        }
        mrows = prow;
    }
    grouped_gemm(x, nle, mrows, (gated ? 2 : 1) * fe, h, fwd, bwd);
    o = elementwise(gated ? EST_OP_SWIGLU : EST_OP_GELU, x->act_dt,
                    nle * mrows, fe);
    double a0 = *fwd;
    add_op(x, &o, fwd, bwd);
    *act_f = *fwd - a0;
    grouped_gemm(x, nle, mrows, h, fe, fwd, bwd);
    if (copy) {
        est_op unpad = elementwise(EST_OP_PERMUTE, x->act_dt, nle * mrows, h);
        add_named(x, &unpad, "moe_fp8_unpad", fwd, bwd);
    }
}

/* The 1F1B A2A overlap (--overlap-moe-expert-parallel-comm): the exposed
 * dispatch and combine of an MoE layer's forward run beside another
 * micro-batch's backward of an MoE layer, seconds, from the compute of
 * each side's attention block (attn_f, attn_b: everything before the
 * dispatch) and MoE block (mlp_f, mlp_b: shared and routed experts) and
 * the dispatch and combine of one direction (the backward's move the same
 * volumes). NVIDIA/Megatron-LM@d98e8a64ddf3, megatron/core/models/common/
 * model_chunk_schedule_plan.py TransformerLayerSchedulePlan.run, a
 * compute stream and a communication stream:
 *   comm: combine_bwd      | dispatch_fwd -> dispatch_bwd | combine_fwd
 *   comp: attention_fwd    | mlp_bwd -> mlp_bwd_dw -> mlp_fwd | attention_bwd
 * The backward MLP needs its combine, the forward MLP its dispatch, the
 * dispatch backward the MLP's data gradient (half of mlp_b: the weight
 * gradient is the other half, run after it, --delay-wgrad-compute), and
 * the attention backward the dispatch backward. The communication kernels
 * hold sm_share of the GPU's SMs while they run (moe_comm_sm_share): the
 * compute beside them runs on the rest, so work C beside communication c
 * (c <= C / (1 - sm_share)) ends at C + sm_share c instead of C; each
 * hidden second of dispatch or combine costs sm_share seconds. Not
 * modelled: that the router and the permutations sit in the attention
 * side's node (counted with the MoE block here). Returns the exposed time
 * with that slowdown, >= 0, at most disp + comb each way. */
static double moe_overlap_a2a(double attn_f, double attn_b, double mlp_f,
                              double mlp_b, double disp, double comb,
                              double sm_share)
{
    double w1 = fmax(0, comb - attn_f);
    double disp_b_end = fmax(disp, mlp_b / 2) + disp;
    double mlp_end = fmax(mlp_b, disp) + mlp_f;
    double w2 = fmax(mlp_end, disp_b_end) - (mlp_b + mlp_f);
    double w3 = fmax(0, comb - attn_b);
    double exposed = w1 + w2 + w3, all = 2 * (disp + comb);
    return fmin(exposed + sm_share * fmax(0, all - exposed), all);
}

/* Share of the GPU's SMs that the dispatch and combine kernels hold while
 * they run, slowing the compute overlapped with them. The flex
 * dispatcher's backends run on a fixed SM count: DeepEP 20 (Megatron-Core
 * calls set_deepep_num_sms(20) when moe_flex_dispatcher_num_sms is unset,
 * token_dispatcher.py _DeepepManager, NVIDIA/Megatron-LM@d98e8a64ddf3;
 * DeepEP's own default, Buffer.num_sms = 20 in deep_ep/buffer.py),
 * HybridEP 24 (transformer_config.py moe_hybridep_num_sms: int = 24,
 * NVIDIA/Megatron-LM@8c5cf05ece, 2026-04-28; 16 from 3df200905e,
 * 2025-11-18). The GPU's SMs: hwdb's sm_count. The all-to-all and
 * all-gather dispatchers run NCCL kernels, whose CTA count NCCL picks per
 * call: not modelled (0). */
static double moe_comm_sm_share(const iter_ctx *x)
{
    const space_layout *l = x->l;
    int sms = x->c->gpu ? x->c->gpu->sm_count : 0;
    if (l->moe_dispatcher != SPACE_MOE_FLEX || sms <= 0) return 0;
    double used = l->moe_flex_backend == SPACE_MOE_FLEX_HYBRIDEP ? 24 : 20;
    return fmin(1, used / (double)sms);
}

/* Share of the forward passes of pipeline rank `rank`'s model chunks that
 * the combined 1F1B schedule runs beside a backward (the rest: the
 * warm-up's forwards and the drain's backwards, alone).
 * NVIDIA/Megatron-LM@d98e8a64ddf3, megatron/core/pipeline_parallel/
 * schedules.py get_pp_rank_microbatches (interleaved: (pp - r - 1) 2 +
 * (v - 1) x group warm-up steps, the group pp by default, one more with
 * the overlap) and combined_1f1b.py combined_1f1b_schedule_for_no_
 * pipelining (the first forward and the last backward alone). */
static double moe_pair_share(const space_layout *l, int64_t rank,
                             int64_t micro)
{
    int64_t pp = l->pp, v = l->vpp > 1 ? l->vpp : 1;
    double total = (double)(micro * v);
    double warm = pp == 1 ? 1
                          : (double)((pp - rank - 1) * 2 + (v - 1) * pp + 1);
    return total > 0 ? fmax(0, total - warm) / total : 0;
}

/* One transformer layer, one micro-batch, per rank: a dense-FFN layer, or
 * with moe an MoE layer (its shared experts in the place of the dense
 * FFN, TP-sharded as Megatron-Core's SharedExpertMLP is, and the routed
 * experts, moe_routed). */
static void layer_time(const iter_ctx *x, stage_time *st, int moe)
{
    const space_model *m = x->m;
    const space_layout *l = x->l;
    int64_t tp = l->tp, h = m->hidden, T = x->T, Tn = x->Tn;
    int64_t hd = m->head_dim ? m->head_dim : m->hidden / m->heads;
    int64_t q = m->heads * hd, kv = m->kv_heads * hd, f = m->ffn_hidden;
    if (x->mla) q = m->heads * m->v_head_dim; /* the output projection's */
    if (moe) f = m->shared_experts * m->shared_ffn_hidden;
    int mlp = f > 0;
    int gated = space_act_ffn_gemms(m->act) == 3;
    double fwd = 0, bwd = 0, w_qkv, w_fc1 = 0;
    double fwd_gemm = 0; /* the GEMMs' share of fwd */
    unsigned rc = space_recompute_modules(l);
    est_op o = elementwise(x->norm, x->act_dt, Tn, h);
    add_op(x, &o, &fwd, &bwd);
    double norm_f = fwd; /* one norm's forward (fwd started at 0) */
    add_op(x, &o, &fwd, &bwd); /* the second norm */
    o = elementwise(EST_OP_RESADD, x->act_dt, Tn, h);
    est_time ra = op_time(x, &o);
    if (m->hidden_dropout > 0) {
        /* Megatron-LM fuses the hidden dropout into the residual add
         * (bias_dropout_add): its 1-byte mask is written forward and read
         * backward, on top of the add's 3 and 2 elements. */
        double b = est_dtype_bytes(x->act_dt);
        ra.fwd_s *= (3 * b + 1) / (3 * b);
        ra.bwd_s *= (2 * b + 1) / (2 * b);
    }
    fwd += 2 * ra.fwd_s;
    bwd += 2 * ra.bwd_s;
    double f0 = fwd, up_f = 0, act_f = 0;
    est_time g_qkv;
    if (x->mla) {
        mla_qkv(x, &fwd, &bwd, &g_qkv, &w_qkv, &up_f);
    } else {
        g_qkv = add_gemm(x, T, (q + 2 * kv) / tp, h, GEMM_NORM_IN, &fwd, &bwd,
                         &w_qkv);
    }
    fwd_gemm += fwd - f0;
    if (m->pos == SPACE_POS_ROPE && !x->mla) {
        o = elementwise(l->eager ? EST_OP_ROPE_EAGER : EST_OP_ROPE, x->act_dt,
                        T, (q + kv) / tp);
        add_op(x, &o, &fwd, &bwd);
    }
    double afwd = 0, abwd = 0, cpf, cpb;
    attention(x, &afwd, &abwd, &cpf, &cpb);
    if (m->window > 0) { /* local layers see at most `window` keys */
        afwd *= x->attn_scale;
        abwd *= x->attn_scale;
    }
    f0 = fwd;
    est_time g_o = add_gemm(x, T, h, q / tp, GEMM_LINEAR_IN, &fwd, &bwd, NULL);
    est_time g_fc1 = {0, 0}, g_fc2 = {0, 0};
    double sh_f0 = fwd, sh_b0 = bwd, sh1f = 0, sh1b = 0; /* shared FC1 */
    /* An MoE layer's norm is a module of its own (the router reads it
     * too), so its shared experts' FC1 is a plain column-parallel
     * TELinear (gpt_layer_specs.py: pre_mlp_layernorm a layer norm with
     * experts, IdentityOp without). */
    if (mlp)
        g_fc1 = add_gemm(x, T, (gated ? 2 : 1) * f / tp, h,
                         moe ? GEMM_LOCAL_IN : GEMM_NORM_IN, &fwd, &bwd,
                         &w_fc1);
    fwd_gemm += fwd - f0;
    if (mlp) {
        o = elementwise(!gated ? EST_OP_GELU
                        : l->eager ? EST_OP_SWIGLU_EAGER
                                   : EST_OP_SWIGLU,
                        x->act_dt, T, f / tp);
        add_op(x, &o, &fwd, &bwd);
        sh1f = fwd - sh_f0, sh1b = bwd - sh_b0;
        f0 = fwd;
        g_fc2 = add_gemm(x, T, h, f / tp, GEMM_LINEAR_IN, &fwd, &bwd, NULL);
        fwd_gemm += fwd - f0;
    }
    double epf = 0, epb = 0, ep_pair = 0;
    double pre_f = fwd; /* an MoE layer's forward before its dispatch */
    if (moe) {
        double disp, comb;
        moe_routed(x, &fwd, &bwd, &epf, &epb, &disp, &comb, &act_f);
        int ov = l->moe_comm_overlap;
        /* The shared experts' FC1 and activation run under the dispatch,
         * FC2 under the combine (token_dispatcher.py MoEAlltoAll-
         * TokenDispatcher.token_dispatch: linear_fc1_forward_and_act;
         * token_combine: linear_fc2_forward; on SharedExpertMLP.stream);
         * autograd runs each backward on its forward's stream, so the
         * backward pairs them the same way. */
        if (ov == SPACE_MOE_OVERLAP_SHARED) {
            double sh2f = g_fc2.fwd_s, sh2b = g_fc2.bwd_s;
            epf = fmax(0, disp - sh1f) + fmax(0, comb - sh2f);
            epb = fmax(0, comb - sh2b) + fmax(0, disp - sh1b);
        } else if (ov == SPACE_MOE_OVERLAP_A2A) {
            double mlp_f = fwd - sh_f0, mlp_b = bwd - sh_b0;
            double rec = rc & SPACE_RC_CORE_ATTN ? afwd : 0;
            ep_pair = moe_overlap_a2a(fwd + afwd - mlp_f,
                                      bwd + abwd + rec - mlp_b, mlp_f, mlp_b,
                                      disp, comb, moe_comm_sm_share(x));
        }
    }

    /* TP collectives of the activation [T, h] at 16 bits; tpf_mlp: the
     * forward's of the dense MLP or the shared experts. */
    double tpf = 0, tpb = 0, tpf_mlp = 0;
    if (tp > 1) {
        double bytes = x->act_bytes;
        /* Exposed part of a collective of time c run under GEMM work of
         * time g, or all of it where this overlap is not done. */
#define UNDER(c, g, done) ((done) ? fmax(0, (c) - (g)) : (c))
        /* A collective the GEMM depends on (or that depends on it) only
         * overlaps once both are cut into the TP ring's steps: one step
         * stays exposed (Megatron-LM's userbuffers, AsyncTP). */
#define SPLIT(c, g, done) ((done) ? fmax((c) / (double)tp, (c) - (g)) : (c))
        int ov = l->tp_overlap;
        int all = ov == SPACE_TP_OVERLAP_ALL;
        int async = ov == SPACE_TP_OVERLAP_ASYNC;
        int dtensor = async || ov == SPACE_TP_OVERLAP_DTENSOR;
        int bwd_ov = ov == SPACE_TP_OVERLAP_BWD || all;
        if (l->sp) {
            double rs = coll(x, EST_COLL_REDUCE_SCATTER, bytes, &x->tp_group);
            /* Transformer Engine's fp8 layers gather in fp8: the
             * column-parallel inputs (forward, and their re-gather in the
             * backward) and the row-parallel output gradients, one byte
             * an element; reduce-scatters stay 16-bit (TE module/
             * linear.py, layernorm_linear.py, base.py
             * grad_output_preprocess; blockwise gathers 16 bits in TE
             * 2.3-2.4). Current scaling also all-reduces each
             * column-parallel input's amax over TP. */
            int te8 = x->gemm_dt == HW_FP8 && l->fp8_lib == SPACE_FP8_LIB_TE
                      && !dtensor && l->fp8_recipe != SPACE_FP8_BLOCKWISE;
            double ag = coll(x, EST_COLL_ALLGATHER, te8 ? bytes / 2 : bytes,
                             &x->tp_group);
            if (te8 && l->fp8_recipe == SPACE_FP8_TENSORWISE)
                tpf += 2 * coll(x, EST_COLL_ALLREDUCE, 4, &x->tp_group);
            /* MLA gathers its latents (and the shared rope key) for the up
             * projections instead of the hidden state, and reduce-
             * scatters their input gradients. Under fp8 the up
             * projections' TE layers gather the latents in fp8; the rope
             * key is gathered apart, 16-bit
             * (multi_latent_attention.py, gather_from_sequence_parallel_
             * region(k_pos_emb)). */
            double ag_a = ag, rs_a = rs;
            if (x->mla && te8) {
                double e = est_dtype_bytes(x->act_dt);
                double lat = (double)T
                             * ((double)((m->q_lora_rank > 0 ? m->q_lora_rank
                                                             : h)
                                         + m->kv_lora_rank)
                                + e * (double)m->qk_rope_head_dim);
                ag_a = coll(x, EST_COLL_ALLGATHER, lat, &x->tp_group);
                rs_a = coll(x, EST_COLL_REDUCE_SCATTER,
                            (double)T * e
                                * (double)((m->q_lora_rank > 0
                                                ? m->q_lora_rank
                                                : h)
                                           + m->kv_lora_rank
                                           + m->qk_rope_head_dim),
                            &x->tp_group);
            } else if (x->mla) {
                double lat = (double)T * est_dtype_bytes(x->act_dt)
                             * (double)((m->q_lora_rank > 0 ? m->q_lora_rank
                                                            : h)
                                        + m->kv_lora_rank
                                        + m->qk_rope_head_dim);
                ag_a = coll(x, EST_COLL_ALLGATHER, lat, &x->tp_group);
                rs_a = coll(x, EST_COLL_REDUCE_SCATTER, lat, &x->tp_group);
            }
            /* Forward: each block's input gathered before its column-
             * parallel GEMM, its output reduce-scattered after its row-
             * parallel one (an MoE layer without shared experts: the
             * attention's only; its dispatcher moves the tokens). */
            int fwd_ov = all || async;
            double ex = SPLIT(ag_a, g_qkv.fwd_s, fwd_ov)
                        + SPLIT(rs, g_o.fwd_s, fwd_ov);
            if (mlp) {
                tpf_mlp = SPLIT(ag, g_fc1.fwd_s, fwd_ov)
                          + SPLIT(rs, g_fc2.fwd_s, fwd_ov);
                ex = ex + tpf_mlp;
            }
            tpf += ex;
            if (!dtensor && (!mlp || x->mla)) {
                tpb = SPLIT(ag, g_o.bwd_s / 2, all);
                if (mlp) tpb += SPLIT(ag, g_fc2.bwd_s / 2, all);
                tpb += UNDER(ag_a, w_qkv, bwd_ov) + UNDER(rs_a, w_qkv, bwd_ov);
                if (mlp)
                    tpb += UNDER(ag, w_fc1, bwd_ov) + UNDER(rs, w_fc1, bwd_ov);
            } else if (dtensor && (!mlp || x->mla)) {
                tpb = SPLIT(ag, g_o.bwd_s / 2, async) + rs_a;
                if (mlp) tpb += SPLIT(ag, g_fc2.bwd_s / 2, async) + rs;
                if (l->recompute == SPACE_RECOMPUTE_SELECTIVE_OP)
                    tpb += ag_a + (mlp ? ag : 0);
            } else if (!dtensor) {
                /* Megatron-LM: the output gradient gathered before the
                 * row-parallel GEMMs' data gradient; the input, kept
                 * sharded, re-gathered under the column-parallel GEMM's
                 * data gradient and its gradient reduce-scattered under
                 * its weight gradient (each half of the GEMM's
                 * backward). */
                tpb = SPLIT(ag, g_o.bwd_s / 2, all)
                      + SPLIT(ag, g_fc2.bwd_s / 2, all)
                      + UNDER(ag, w_qkv, bwd_ov) + UNDER(ag, w_fc1, bwd_ov)
                      + UNDER(rs, w_qkv, bwd_ov) + UNDER(rs, w_fc1, bwd_ov);
            } else {
                /* DTensor: the output gradients gathered (AsyncTP
                 * decomposes these with their data-gradient GEMMs) and
                 * the input gradients reduce-scattered, exposed: AsyncTP
                 * finds no GEMM->reduce-scatter pair there, the
                 * reduce-scatter's input being a sum of GEMMs (pytorch
                 * PR 149946; torch/_inductor/fx_passes/
                 * micro_pipeline_tp.py). The gathered inputs were kept by
                 * autograd, except under torchtitan's op-level
                 * checkpointing, whose save list keeps reduce-scatter
                 * outputs but not all-gather ones: those are gathered
                 * again, exposed, for the weight gradients. */
                tpb = SPLIT(ag, g_o.bwd_s / 2, async)
                      + SPLIT(ag, g_fc2.bwd_s / 2, async) + 2 * rs;
                if (l->recompute == SPACE_RECOMPUTE_SELECTIVE_OP)
                    tpb += 2 * ag;
            }
        } else if (!x->mla) {
            double ar = coll(x, EST_COLL_ALLREDUCE, bytes, &x->tp_group);
            tpf_mlp = SPLIT(ar, g_fc2.fwd_s, all);
            tpf = SPLIT(ar, g_o.fwd_s, all) + tpf_mlp;
            tpb = UNDER(ar, w_qkv, bwd_ov) + UNDER(ar, w_fc1, bwd_ov);
        } else {
            /* MLA without SP (a dense model: MoE needs SP with TP): the
             * up projections' input gradients all-reduced at the latents'
             * size. */
            double ar = coll(x, EST_COLL_ALLREDUCE, bytes, &x->tp_group);
            double lat = (double)T * est_dtype_bytes(x->act_dt)
                         * (double)((m->q_lora_rank > 0 ? m->q_lora_rank : h)
                                    + m->kv_lora_rank);
            double ar_a = coll(x, EST_COLL_ALLREDUCE, lat, &x->tp_group);
            tpf_mlp = SPLIT(ar, g_fc2.fwd_s, all);
            tpf = SPLIT(ar, g_o.fwd_s, all) + tpf_mlp;
            tpb = UNDER(ar_a, w_qkv, bwd_ov) + UNDER(ar, w_fc1, bwd_ov);
        }
#undef UNDER
#undef SPLIT
    }
    st->fwd += fwd + afwd;
    st->bwd += bwd + abwd;
    st->tp += tpf + tpb;
    st->cp += cpf + cpb;
    st->ep += epf + epb;
    st->ep_pair += ep_pair;
    /* The host's side (host.c): the layer's calls against its kernels in
     * each pass. An MoE layer's forward waits for the GPU at its
     * dispatcher's sync, so its two halves are each their own race: the
     * attention, router and preprocess (the TP collectives are theirs);
     * then the dispatch, experts and combine, issued to an idle GPU. */
    double host_f = 0;
    if (x->host_call_s > 0) {
        est_host_layer hl;
        est_host_units(m, l, moe, &hl);
        double u = x->host_call_s;
        double gf = fwd + afwd + tpf + cpf + epf;
        double gb = bwd + abwd + tpb + cpb + epb;
        if (hl.syncs) {
            double gpre = pre_f + afwd + tpf + cpf;
            host_f = est_host_exposed(hl.pre_units * u, gpre, hl.syncs, u)
                     + est_host_exposed((hl.fwd_units - hl.pre_units) * u,
                                        gf - gpre, 0, u);
        } else {
            host_f = est_host_exposed(hl.fwd_units * u, gf, 0, u);
        }
        double host_b = est_host_exposed(hl.bwd_units * u, gb, 0, u);
        st->host += host_f + host_b;
        if (x->c->trace) {
            char shape[48];
            snprintf(shape, sizeof shape, "%.0f calls, %d sync%s, %d graph%s",
                     hl.fwd_units, hl.syncs, hl.syncs == 1 ? "" : "s",
                     hl.graphs, hl.graphs == 1 ? "" : "s");
            trace_add(x, "host_exposed", shape, host_f, host_b);
        }
    }
    if (l->recompute == SPACE_RECOMPUTE_FULL) {
        st->recompute += fwd + afwd;
        st->rec_tp += tpf;
        st->rec_cp += cpf;
        st->rec_ep += epf;
        st->rec_host += host_f;
    } else if (l->recompute == SPACE_RECOMPUTE_SELECTIVE) {
        /* Each module's forward again (space_recompute_modules; Megatron-
         * Core transformer_layer.py and experts.py: checkpointed modules
         * rerun with their collectives, the MoE layer with its dispatch
         * and combine; output-discarding ones rerun their op). The norms
         * that are modules of their own: an MoE layer's pre-MLP norm (the
         * router reads it) and MLA's input norm (its down projections are
         * plain linears); the others are fused into Transformer Engine's
         * LayerNormLinear (IdentityOp in the layer spec,
         * gpt_layer_specs.py). */
        double r = 0;
        if (rc & SPACE_RC_CORE_ATTN) r += afwd;
        if (rc & SPACE_RC_LAYERNORM) r += ((moe ? 1 : 0) + (x->mla ? 1 : 0))
                                          * norm_f;
        if (rc & SPACE_RC_MLA_UP_PROJ) r += up_f;
        if (moe && (rc & SPACE_RC_MOE)) {
            r += fwd - sh_f0;
            st->rec_tp += tpf_mlp;
            st->rec_ep += epf;
        } else if (moe) {
            if (rc & SPACE_RC_MOE_ACT) r += act_f;
            if (mlp && (rc & SPACE_RC_SHARED_EXPERTS)) {
                r += sh1f + g_fc2.fwd_s;
                st->rec_tp += tpf_mlp;
            }
        } else if (mlp && (rc & SPACE_RC_MLP)) {
            r += fwd - sh_f0 + norm_f; /* FC1's fused norm with it */
            st->rec_tp += tpf_mlp;
        }
        st->recompute += r;
    } else if (l->recompute == SPACE_RECOMPUTE_SELECTIVE_OP) {
        /* Every cheap op again, and the matmuls whose outputs were not
         * kept: k, o, and the FFN's second (gated: w3 of w1, w3, w2;
         * plain: w2 of w1, w2). */
        est_op k = gemm(x->gemm_dt, T, kv / tp, h), wo = gemm(x->gemm_dt, T, h, q / tp);
        est_op ff = gated ? gemm(x->gemm_dt, T, f / tp, h)
                          : gemm(x->gemm_dt, T, h, f / tp);
        st->recompute += (fwd - fwd_gemm) + op_time(x, &k).fwd_s
                         + op_time(x, &wo).fwd_s + op_time(x, &ff).fwd_s;
    }
}

/* Embedding and its collective (first stage), one micro-batch. */
static void first_stage_extra(const iter_ctx *x, stage_time *st)
{
    const space_model *m = x->m;
    const space_layout *l = x->l;
    int64_t T = x->T, Tn = x->Tn, h = m->hidden, vp = x->vp;
    est_op e = elementwise(EST_OP_EMBEDDING, x->act_dt, T, h);
    e.n = vp / l->tp;
    e.vocab_parallel = l->tp > 1;
    add_op(x, &e, &st->fwd, &st->bwd);
    if (m->pos == SPACE_POS_LEARNED) {
        est_op a = elementwise(EST_OP_RESADD, x->act_dt, Tn, h);
        add_op(x, &a, &st->fwd, &st->bwd);
    }
    if (m->embed_norm) {
        est_op n = elementwise(x->norm, x->act_dt, Tn, h);
        add_op(x, &n, &st->fwd, &st->bwd);
    }
    if (l->tp > 1)
        st->tp += coll(x, l->sp ? EST_COLL_REDUCE_SCATTER : EST_COLL_ALLREDUCE,
                       x->act_bytes, &x->tp_group);
}

/* Final norm, LM head, loss (last stage), one micro-batch. */
static void last_stage_extra(const iter_ctx *x, stage_time *st)
{
    const space_model *m = x->m;
    const space_layout *l = x->l;
    int64_t T = x->T, Tn = x->Tn, h = m->hidden, vp = x->vp;
    est_op n = elementwise(x->norm, x->act_dt, Tn, h);
    add_op(x, &n, &st->fwd, &st->bwd);
    double wg;
    add_gemm(x, T, vp / l->tp, h, GEMM_16BIT, &st->fwd, &st->bwd, &wg);
    est_op ce = elementwise(EST_OP_CROSS_ENTROPY, x->act_dt, T, vp / l->tp);
    add_op(x, &ce, &st->fwd, &st->bwd);
    if (l->tp > 1) {
        double bytes = x->act_bytes;
        if (l->sp) { /* gather before the head, scatter its input gradient */
            st->tp += coll(x, EST_COLL_ALLGATHER, bytes, &x->tp_group);
            st->tp += fmax(0, coll(x, EST_COLL_REDUCE_SCATTER, bytes,
                                   &x->tp_group) - wg);
        } else {
            st->tp += fmax(0, coll(x, EST_COLL_ALLREDUCE, bytes, &x->tp_group)
                                  - wg);
        }
        /* Vocab-parallel cross-entropy: max, sum of exponentials and the
         * target logit, each an all-reduce of T fp32 values. */
        st->tp += 3 * coll(x, EST_COLL_ALLREDUCE, 4.0 * (double)T,
                           &x->tp_group);
    }
}

/* The GEMM weights of one layer on this rank, as [rows, cols] in shape
 * (at most EST_LAYER_WEIGHTS), for te_weight_casts; returns how many.
 * *gemms: the layer's fp8 GEMMs, each with its own scaling state (a
 * grouped GEMM's experts each). A dense-FFN layer: QKV [h, q + 2 kv] (MLA:
 * its down projections, whole on every TP rank, and its up projections),
 * out [q, h], FC1 [h, f1] (gated: gate and up), FC2 [f, h]; an MoE layer:
 * the attention, its shared experts as one FFN, and its E / ep local
 * experts' FC1 and FC2, each split over ETP, as one pass each (their
 * router stays 16-bit). */
#define EST_LAYER_WEIGHTS 9
static int layer_weights(const iter_ctx *x, int moe,
                         int64_t (*shape)[2], int *gemms)
{
    const space_model *m = x->m;
    int64_t tp = x->l->tp, h = m->hidden, n = 0;
    int64_t hd = m->head_dim ? m->head_dim : m->hidden / m->heads;
    int64_t q = m->heads * hd, kv = m->kv_heads * hd, f = m->ffn_hidden;
    int64_t g = space_act_ffn_gemms(m->act) == 3 ? 2 : 1;
#define W(r, c) (shape[n][0] = (r), shape[n][1] = (c), n++)
    if (x->mla) {
        int64_t H = m->heads, rope = m->qk_rope_head_dim;
        int64_t qk = m->qk_nope_head_dim + rope;
        int64_t kvu = m->qk_nope_head_dim + m->v_head_dim;
        int64_t ql = m->q_lora_rank, kl = m->kv_lora_rank;
        if (ql > 0) {
            W(h, ql);
            W(ql, H * qk / tp);
        } else {
            W(h, H * qk / tp);
        }
        W(h, kl + rope);
        W(kl, H * kvu / tp);
        W(H * m->v_head_dim / tp, h);
    } else {
        W(h, (q + 2 * kv) / tp);
        W(q / tp, h);
    }
    if (moe) f = m->shared_experts * m->shared_ffn_hidden;
    if (f > 0) {
        W(h, g * f / tp);
        W(f / tp, h);
    }
    *gemms = (int)n;
    if (moe) {
        int64_t nle = m->num_experts / x->ep;
        int64_t fe = m->expert_ffn_hidden / x->etp;
        W(nle * h, g * fe);
        W(nle * fe, h);
        *gemms += (int)(2 * nle);
    }
#undef W
    return (int)n;
}

const char *const est_reason_names[EST_REASON_COUNT] = {
    [EST_FEASIBLE] = "feasible",
    [EST_INVALID_LAYOUT] = "invalid_layout",
    [EST_OUT_OF_MEMORY] = "out_of_memory",
    [EST_NO_FP8] = "no_fp8",
    [EST_MOE] = "moe_not_modelled",
    [EST_TOO_MANY_GPUS] = "too_many_gpus",
    [EST_MOE_LAYOUT] = "moe_layout",
    [EST_SAVER] = "saver_refused",
};
_Static_assert(sizeof est_reason_names / sizeof est_reason_names[0]
                   == EST_REASON_COUNT,
               "est_reason_names names every est_reason");

const char *est_precision_name(const space_layout *l)
{
    if (l->dtype == HW_FP4) return "nvfp4";
    if (l->dtype == HW_FP8 && l->fp8_recipe == SPACE_FP8_MXFP8) return "mxfp8";
    if (l->dtype < 0 || l->dtype >= HW_DTYPE_COUNT) return "?";
    return hw_dtype_names[l->dtype];
}

/* ---- memory savers' time (offload.c has the bytes) -------------------- */

/* The optimizer step of n parameters under the precision-aware optimizer
 * or optimizer offload. The GPU's Adam is memory-bound: its time scales
 * with the bytes it moves (est_opt_traffic_ratio). Offloaded, the share f
 * of the shard is stepped on the host (HybridDeviceOptimizer.step,
 * NVIDIA/Megatron-LM@d98e8a64ddf3 megatron/core/optimizer/cpu_offloading/
 * hybrid_optimizer.py): its gradients copied to the host (4 bytes each:
 * the D2H copy_ converts to fp32 on the GPU), torch.optim.AdamW over fp32
 * parameter, gradient, m and v (read 16, write 12 bytes of host memory)
 * and the parameters' cast to 16 bits (read 4, write 2) and copy back (2
 * bytes each: a copy_ to the GPU converts on the host, PyTorch aten/src/
 * ATen/native/cuda/Copy.cu), every GPU of a node at once through its host
 * link and the node's CPU memory (est_host_bw). In sequence: the D2H copy,
 * then the CPU step beside the GPU's share, then the H2D copy; with
 * --overlap-cpu-optimizer-d2h-h2d one CPU optimizer per parameter, each
 * starting when its gradient has arrived and copying back when done: the
 * slowest of the copies, the host's memory traffic (the copies' DMA
 * included) and the GPU's share. The CPU step is taken at the host's
 * memory bandwidth: the time its threads could reach at best (torchrun
 * sets OMP_NUM_THREADS=1 per rank unless told otherwise). */
static double saver_step(const iter_ctx *x, double n)
{
    const space_layout *l = x->l;
    double f = l->opt_offload > 0 ? fmin(l->opt_offload, 1) : 0;
    double ng = (1 - f) * n, t_gpu = 0;
    if (ng >= 1) {
        est_op a = {0};
        a.kind = EST_OP_ADAM;
        a.dtype = HW_FP32;
        a.n = (int64_t)ng;
        t_gpu = op_time(x, &a).fwd_s * est_opt_traffic_ratio(l);
    }
    if (f <= 0) return t_gpu;
    const hw_system *y = x->c->sys;
    double link = est_host_bw(x->c);
    double share = y->host_mem_bw_bytes_per_s
                   / (double)(y->gpus_per_node > 0 ? y->gpus_per_node : 1);
    if (!(link > 0) || !(share > 0)) return t_gpu; /* est_saver_check refuses */
    double nh = f * n;
    double d2h = 4 * nh / link, h2d = 2 * nh / link;
    double cpu = (28 + 6) * nh / share;
    if (l->opt_offload_overlap)
        return fmax(fmax(t_gpu, cpu + 6 * nh / share), fmax(d2h, h2d));
    return d2h + fmax(t_gpu, cpu) + h2d;
}

/* Seconds per micro-batch stage s (nl layers, nm of them MoE) stalls for
 * its activations' trips to the host. Transformer Engine's layer offload
 * (PP 1): est_layer_offload_stall over the layers, each moving its
 * activations in x seconds against the stage's mean layer compute.
 * Fine-grained offloading: the forward does not wait for its copies
 * (fine_grained_offloading_max_inflight_offloads unset: no joins), so
 * what outlasts the forward is paid once; each layer's backward waits for
 * its groups' reload, started one layer ahead. */
static double offload_exposed(const iter_ctx *x, const stage_time *s,
                              double nl, double nm)
{
    const space_layout *l = x->l;
    const space_model *m = x->m;
    double bw = est_host_bw(x->c);
    if (!(bw > 0) || !(nl > 0)) return 0; /* est_saver_check refuses */
    double o = ((nl - nm) * est_offload_layer_token(m, l, 0)
                + nm * est_offload_layer_token(m, l, 1))
               / nl;
    double xs = (double)x->T * o / bw;
    double cf = s->fwd / nl, cb = s->bwd / nl;
    if (l->act_offload_layers > 0) {
        double f, b;
        est_layer_offload_stall((int64_t)(nl + 0.5), l->act_offload_layers,
                                cf, cb, xs, &f, &b);
        return f + b;
    }
    return fmax(0, nl * (xs - cf)) + nl * fmax(0, xs - cb);
}

est_reason est_precision_check(const hw_gpu *g, const space_layout *l,
                               char *msg, size_t cap)
{
    const char *arch = g->arch[0] ? g->arch : "of unknown architecture";
    const char *need = NULL, *kind = NULL;
    if (l->dtype == HW_FP8 && !(g->peak_flops[HW_FP8] > 0))
        need = "fp8 tensor cores (Hopper, Blackwell, MI300)", kind = "fp8";
    else if (l->dtype == HW_FP8 && l->fp8_recipe == SPACE_FP8_MXFP8
             && strcmp(g->arch, "blackwell") != 0)
        need = "Blackwell's block-scaled tensor cores (b200, gb200, b300, "
               "gb300)",
        kind = "block-scaled";
    else if (l->dtype == HW_FP4 && !(g->peak_flops[HW_FP4] > 0))
        need = "Blackwell's fp4 tensor cores (b200, gb200, b300, gb300)",
        kind = "fp4";
    if (!need) return EST_FEASIBLE;
    snprintf(msg, cap, "%s needs %s; %s is %s, with no %s tensor cores",
             est_precision_name(l), need, g->name, arch, kind);
    return EST_NO_FP8;
}

double est_pp_bubble(const space_layout *l, double t, double w, double b,
                     double fb)
{
    double pp = (double)l->pp, v = l->vpp > 1 ? (double)l->vpp : 1;
    switch (l->pp_schedule) {
    case SPACE_PP_ZB1P:
        /* ZB-H1 (Qi et al., arXiv 2401.10241, section 2.1; the DeepSeek-V3
         * report, arXiv 2412.19437, Table 2: (PP - 1)(F + B - 2W), B the
         * full backward): each rank's weight gradients fill the drain.
         * Looped over v chunks (PyTorch's ScheduleInterleavedZeroBubble,
         * "implementing the ZB1P schedule"), every term a chunk's, 1 / v
         * of the rank's: DERIVED as interleaving scales 1F1B's bubble. */
        return (pp - 1) / v * fmax(0, t - 2 * w);
    case SPACE_PP_ZBV:
        /* ZB-V (arXiv 2401.10241 section 6): 2 chunks a rank, zero bubble
         * where a chunk's F, input-gradient B and W are equal (Sea AI Lab's
         * comparison, huggingface.co/spaces/sail/pipeline-parallelism-with-
         * controllable-memory description2.md: bubble rate 0, activations
         * 1x of 1F1B). In DeepSeek's terms, over the chunks of PP ranks:
         * (PP - 1)(F + B - 3W), each a chunk's, half of the rank's: zero at
         * F = B - W = W, and at W = 0 the interleaved bubble of 2 chunks
         * (DERIVED: the form of Table 2's DualPipe row with F for F&B). */
        return (pp - 1) / 2 * fmax(0, t - 3 * w);
    case SPACE_PP_DUALPIPE:
        /* Table 2: (PP / 2 - 1)(F&B + B - 3W), a chunk being one of the
         * rank's two stages, which one micro-batch passes once: the rank's
         * own F, B, W per micro-batch. F&B: fb (est_estimate, the steady
         * state's overlap). */
        return (pp / 2 - 1) * fmax(0, fb + b - 3 * w);
    case SPACE_PP_DUALPIPEV:
        /* DualPipe cut in half: PP ranks run 2 PP stages, DualPipe's row
         * with 2 PP for PP and chunks of half a rank's time: (PP - 1)
         * (F&B + B - 3W) / 2. */
        return (pp - 1) / 2 * fmax(0, fb + b - 3 * w);
    default:
        /* 1F1B, interleaved (Narayanan et al., SC'21, section 2.2) */
        return (pp - 1) / v * t;
    }
}

void est_estimate(const est_ctx *c, const space_model *m,
                  const space_layout *l, est_result *r)
{
    memset(r, 0, sizeof *r);
    r->layout = *l;
    if (r->layout.tp == 1) r->layout.sp = 0;
    l = &r->layout;
    const hw_system *y = c->sys;
    const hw_gpu *g = c->gpu;
    int gpn = y->gpus_per_node;
    int64_t gpus = l->tp * l->pp * l->cp * l->dp;
    r->gpus = gpus;
    est_memory_of(m, l, &r->mem);
    est_memory_device(c, m, l, &r->mem);
    char why[200];
    space_reject rj = space_layout_check(m, l, c->tp_across_nodes ? 0 : gpn,
                                         why, sizeof why);
    if (rj != SPACE_OK) {
        r->reason = EST_INVALID_LAYOUT;
        r->reject = rj;
        snprintf(r->message, sizeof r->message, "%s", why);
        return;
    }
    /* MoE and MLA are modelled as Megatron-Core runs them, dropless, in
     * 16 bits or in fp8 through Transformer Engine; the rest is refused
     * by name, never as a shortfall. */
    int moe = m->num_experts > 0, mla = m->kv_lora_rank > 0;
    const char *not_modelled = NULL;
    if ((moe || mla) && l->framework != SPACE_FW_MEGATRON_CORE)
        not_modelled = "MoE and MLA are modelled as Megatron-Core runs them; "
                       "not under this framework";
    else if ((moe || mla) && l->dtype == HW_FP4)
        not_modelled = "nvfp4 with MoE or MLA layers is not modelled yet";
    else if ((moe || mla) && l->dtype == HW_FP8
             && l->fp8_lib != SPACE_FP8_LIB_TE)
        not_modelled = "fp8 MoE and MLA layers are modelled as Transformer "
                       "Engine runs them; not with torchao";
    else if ((moe || mla) && l->recompute == SPACE_RECOMPUTE_SELECTIVE_OP)
        not_modelled = "op-level checkpointing of MoE or MLA layers is not "
                       "modelled";
    if (not_modelled) {
        r->reason = EST_MOE;
        if (moe)
            snprintf(r->message, sizeof r->message, "%s (%lld experts)",
                     not_modelled, (long long)m->num_experts);
        else
            snprintf(r->message, sizeof r->message, "%s", not_modelled);
        return;
    }
    if (!moe && l->moe_comm_overlap != SPACE_MOE_OVERLAP_NONE) {
        r->reason = EST_MOE_LAYOUT;
        snprintf(r->message, sizeof r->message,
                 "--moe-comm-overlap needs a mixture of experts; %s is dense",
                 m->name);
        return;
    }
    if (moe && est_moe_check(m, l, why, sizeof why)) {
        r->reason = EST_MOE_LAYOUT;
        snprintf(r->message, sizeof r->message, "%s", why);
        return;
    }
    if ((r->reason = est_precision_check(g, l, r->message,
                                         sizeof r->message)) != EST_FEASIBLE)
        return;
    /* Memory savers and micro-batch groups (offload.c). */
    if (est_saver_check(c, m, l, &r->mem, r->message, sizeof r->message)) {
        r->reason = EST_SAVER;
        return;
    }
    int blackwell = strcmp(g->arch, "blackwell") == 0;
    if (l->dtype == HW_FP4 && l->fp8_lib != SPACE_FP8_LIB_TE) {
        r->reason = EST_NO_FP8;
        snprintf(r->message, sizeof r->message,
                 "nvfp4 training is Transformer Engine's NVFP4BlockScaling "
                 "(--framework megatron-core); torchao has no NVFP4 training "
                 "recipe modelled here");
        return;
    }
    if (l->dtype == HW_FP8 && l->fp8_recipe == SPACE_FP8_ROWWISE
        && l->fp8_lib == SPACE_FP8_LIB_TE) {
        r->reason = EST_NO_FP8;
        snprintf(r->message, sizeof r->message,
                 "rowwise fp8 scaling is torchao's (--framework torchtitan); "
                 "Transformer Engine has delayed, tensorwise, blockwise, mxfp8");
        return;
    }
    if (y->max_nodes > 0 && gpus > (int64_t)y->max_nodes * gpn) {
        r->reason = EST_TOO_MANY_GPUS;
        snprintf(r->message, sizeof r->message,
                 "%lld GPUs, but %s has %d nodes of %d", (long long)gpus,
                 y->name, y->max_nodes, gpn);
        return;
    }

    iter_ctx x = {.c = c, .m = m, .l = l, .gemm_dt = (hw_dtype)l->dtype,
                  .act_dt = l->dtype == HW_FP16 ? HW_FP16 : HW_BF16,
                  .eff = est_kernel_eff(c, l), .any_layout_fp8 = blackwell,
                  .hopper = strcmp(g->arch, "hopper") == 0,
                  .host_call_s = est_host_call_s(c)};
    /* cuDNN's fused attention where asked for, or where Transformer
     * Engine picks it (Hopper, Blackwell); FlashAttention-2 otherwise. */
    x.cudnn_attn = l->flash == SPACE_ATTN_CUDNN
                   || (l->flash == SPACE_ATTN_AUTO
                       && (blackwell || strcmp(g->arch, "hopper") == 0));
    x.T = l->mbs * l->seq / l->cp;
    x.Tn = l->sp ? x.T / l->tp : x.T;
    x.vp = space_vocab_padded(m->vocab, l->tp);
    /* PyTorch's LayerNorm is one kernel eager too; its RMSNorm was not
     * before the fused aten::_fused_rms_norm (pytorch/pytorch#153666,
     * 2025; l->rmsnorm_composite, the memory model's flag too). */
    x.norm = m->norm != SPACE_NORM_RMSNORM ? EST_OP_LAYERNORM
             : l->eager && l->rmsnorm_composite ? EST_OP_RMSNORM_EAGER
                                                : EST_OP_RMSNORM;
    x.act_bytes = (double)x.T * (double)m->hidden * est_dtype_bytes(x.act_dt);
    x.tp_group = place(l->tp, 1, gpn);
    x.cp_group = place(l->cp, l->tp, gpn);
    x.dp_group = place(l->dp * l->cp, l->tp, gpn);
    {   /* adjacent pipeline stages: tp x cp x dp ranks apart */
        int64_t stride = l->tp * l->cp * l->dp;
        x.pp_pair = place(2, stride, gpn);
    }
    /* Every rank of a node runs its own instance of each of these at the
     * same time: the node's NICs are shared by all of its GPUs. */
    int busy = gpus < gpn ? (int)gpus : gpn;
    x.tp_group.node_busy = x.cp_group.node_busy = busy;
    x.dp_group.node_busy = x.pp_pair.node_busy = busy;
    /* Attention core: MLA's per-head sizes, and sliding windows. */
    x.mla = mla;
    x.attn_hq = m->heads, x.attn_hk = m->kv_heads;
    x.attn_hd = m->head_dim ? m->head_dim : m->hidden / m->heads;
    if (mla) {
        x.attn_hk = m->heads;
        x.attn_hd = (m->qk_nope_head_dim + m->qk_rope_head_dim
                     + m->v_head_dim + 1) / 2;
    }
    x.attn_scale = window_scale(m, l->seq);
    /* The expert grid (moe.c): ETP adjacent, EP etp apart, expert DP
     * etp x ep apart. */
    x.ep = space_layout_ep(l), x.etp = space_layout_etp(l);
    x.edp = moe ? est_moe_edp(l) : 1;
    x.imb = est_moe_imbalance(m, l);
    if (moe) {
        x.ep_group = place(x.ep, x.etp, gpn);
        x.etp_group = place(x.etp, 1, gpn);
        x.eptp_group = place(x.ep * x.etp, 1, gpn);
        x.edp_group = place(x.edp, x.ep * x.etp, gpn);
        x.ep_group.node_busy = x.etp_group.node_busy = busy;
        x.eptp_group.node_busy = x.edp_group.node_busy = busy;
    }

    int64_t v = l->vpp, pp = l->pp;
    int64_t micro = l->gbs / (l->mbs * l->dp);
    /* The split (valid: space_layout_check passed). */
    space_split split;
    space_split_resolve(m, l, &split, NULL, 0);
    double layers_per_stage = (double)m->num_layers / (double)pp;
    stage_time one = {0}, mo = {0};
    if (c->trace) memset(c->trace, 0, sizeof *c->trace);
    x.where = "layer";
    double wacc = 0; /* weight gradients of what is timed next (w_acc) */
    x.w_acc = &wacc;
    layer_time(&x, &one, 0);
    one.w = wacc;
    if (moe) {
        x.where = "moe layer";
        wacc = 0;
        layer_time(&x, &mo, 1);
        mo.w = wacc;
    }
    x.w_acc = NULL;
    x.where = "iteration";
    double weight_casts = 0, moe_casts = 0, amax_f = 0, amax_b = 0;
    /* One layer's GEMM weights: QKV [h, q + 2 kv], out [q, h], FC1 [h, f1]
     * (gated: gate and up), FC2 [f, h]; per TP rank. */
    int64_t hd = m->head_dim ? m->head_dim : m->hidden / m->heads;
    int64_t q = m->heads * hd, kv = m->kv_heads * hd, f = m->ffn_hidden;
    int64_t f1 = (space_act_ffn_gemms(m->act) == 3 ? 2 : 1) * f;
    double layer_gemm_params =
        (double)m->hidden * (double)(q + 2 * kv + q + f1 + f) / (double)l->tp;
    int64_t ws[EST_LAYER_WEIGHTS][2];
    int gd, gm = 0;
    int nw = layer_weights(&x, 0, ws, &gd);
    if (moe || mla) {
        /* The layers' non-expert GEMM weights, the mean over the model's
         * layers (what --fp8-param-gather gathers in one byte). */
        double lm = 0, L = (double)m->num_layers, dw = 0, mw = 0;
        for (int i = 0; i < nw; i++)
            dw += (double)ws[i][0] * (double)ws[i][1];
        if (moe) {
            lm = (double)est_moe_layers_in(m, 0, m->num_layers);
            int nm = layer_weights(&x, 1, ws, &gm);
            for (int i = 0; i < nm - 2; i++)
                mw += (double)ws[i][0] * (double)ws[i][1];
            nw = layer_weights(&x, 0, ws, &gd);
        }
        layer_gemm_params = ((L - lm) * dw + lm * mw) / L;
    }
    if ((x.gemm_dt == HW_FP8 || x.gemm_dt == HW_FP4)
        && l->fp8_lib == SPACE_FP8_LIB_TE) {
        weight_casts = te_weight_casts(&x, ws, nw);
        if (moe) {
            int nm = layer_weights(&x, 1, ws, &gm);
            moe_casts = te_weight_casts(&x, ws, nm);
        }
        if (x.gemm_dt == HW_FP8 && l->fp8_recipe == SPACE_FP8_DELAYED) {
            x.where = "micro-batch";
            /* Delayed scaling reduces every fp8 tensor's amax over the TP
             * x CP x DP ranks once per forward of a model chunk (at the
             * exit of its autocast) and once per backward, with one
             * all-reduce each: 3 fp32 forward slots and 2 backward ones
             * per GEMM (TE pytorch/quantization.py
             * reduce_and_update_fp8_tensors; Megatron-LM's
             * get_amax_reduction_group). Latency-bound. */
            est_group amax = place(l->tp * l->cp * l->dp, 1, gpn);
            amax.node_busy = gpus < gpn ? (int)gpus : gpn;
            double per_layer = gd;
            if (moe) {
                double L = (double)m->num_layers;
                double lm = (double)est_moe_layers_in(m, 0, m->num_layers);
                per_layer = ((L - lm) * gd + lm * gm) / L;
            }
            double gemms = per_layer * layers_per_stage / (double)l->vpp;
            amax_f = coll(&x, EST_COLL_ALLREDUCE, 12 * gemms, &amax);
            amax_b = coll(&x, EST_COLL_ALLREDUCE, 8 * gemms, &amax);
            x.where = "iteration";
        }
    }
    stage_time first = {0}, last = {0}, mtp_x = {0};
    x.where = "first";
    first_stage_extra(&x, &first);
    x.where = "last";
    wacc = 0;
    x.w_acc = &wacc;
    last_stage_extra(&x, &last);
    last.w = wacc;
    x.w_acc = NULL;
    /* Where the MTP modules sit: the last stage, or the rank a layout
     * string gives them (split.c). */
    int64_t mtp_rank = pp - 1;
    if (split.lay && m->mtp_layers > 0 && split.lay->mtp_stage >= 0)
        mtp_rank = split.lay->mtp_stage % pp;
    if (m->mtp_layers > 0) {
        /* DeepSeek-V3's multi-token prediction (Megatron-Core
         * multi_token_prediction.py): per module, the embedding and the
         * hidden state normalised, concatenated and projected ([T, 2h] x
         * [2h, h], column-parallel), one transformer layer of the model's
         * kind (MoE in an MoE model), then the shared head and loss
         * again. */
        stage_time mt = {0};
        x.where = "mtp";
        wacc = 0;
        x.w_acc = &wacc;
        layer_time(&x, &mt, moe);
        double pf = 0, pb = 0;
        add_gemm(&x, x.T, m->hidden / l->tp, 2 * m->hidden, GEMM_16BIT, &pf,
                 &pb, NULL);
        est_op n2 = elementwise(x.norm, x.act_dt, x.Tn, m->hidden);
        add_op(&x, &n2, &pf, &pb);
        add_op(&x, &n2, &pf, &pb);
        last_stage_extra(&x, &mt);
        x.w_acc = NULL;
        double k = (double)m->mtp_layers;
        /* on the last stage, with its head (as before a layout could
         * place them elsewhere) */
        stage_time *to = mtp_rank == pp - 1 ? &last : &mtp_x;
        to->fwd += k * (mt.fwd + pf);
        to->bwd += k * (mt.bwd + pb);
        to->tp += k * mt.tp;
        to->ep += k * mt.ep;
        to->host += k * mt.host;
        to->w += k * wacc;
    }
    x.where = "iteration";

    /* Point-to-point: each stage receives and sends one activation per
     * chunk forward and one gradient backward. */
    double p2p = 0;
    if (pp > 1) {
        double one_send;
        if (l->sp || l->tp == 1) {
            one_send = coll(&x, EST_COLL_SENDRECV,
                            x.act_bytes / (double)l->tp, &x.pp_pair);
        } else if (l->pp_scatter_gather) {
            /* Each TP rank sends its 1/TP slice; the receivers all-gather
             * the slices over the TP group's links (Narayanan et al.,
             * SC'21, section 4.1). */
            one_send = coll(&x, EST_COLL_SENDRECV,
                            x.act_bytes / (double)l->tp, &x.pp_pair)
                       + coll(&x, EST_COLL_ALLGATHER, x.act_bytes, &x.tp_group);
        } else {
            one_send = coll(&x, EST_COLL_SENDRECV, x.act_bytes, &x.pp_pair);
        }
        p2p = 2 * (double)v * one_send;
    }
    int p2p_overlap = pp > 1 && v > 1 && !l->no_pp_overlap;
    /* Each pipeline rank: its own layers (space_split: the chunks Megatron-
     * Core builds on it), the embedding on rank 0, the head on the last,
     * the MTP modules where they sit. The ranks are taken in the order 0,
     * PP - 1, 1, ..., PP - 2; a run of ranks that hold alike (every
     * middle rank of a formula split of a model whose layers are alike)
     * is timed once and counted as many times. */
    stage_time cs_st = {0}, run_st = {0};
    double cs_casts = 0, run_casts = 0, run_fill = 0, run_t = 0;
    /* the schedules' sums over ranks: weight gradients (stage_time.w),
     * backward with its recompute, and the steady state's time */
    double run_w = 0, run_b = 0, wsum = 0, bsum = 0, fbsum = 0;
    int dualpipe = l->pp_schedule == SPACE_PP_DUALPIPE
                   || l->pp_schedule == SPACE_PP_DUALPIPEV;
    double tmax = 0, tsum = 0;
    int64_t crit = 0, run = 0;
    double key[4] = {-1, -1, -1, -1};
    int per_rank = l->moe_comm_overlap == SPACE_MOE_OVERLAP_A2A;
    for (int64_t i = 0; i <= pp; i++) {
        int64_t rank = i == 0 ? 0 : i == 1 ? pp - 1 : i - 1;
        double nl = 0, nrec = 0, nm = 0;
        int ends = 1;
        if (i < pp) {
            nl = (double)space_split_rank_layers(&split, rank);
            /* Only the layers recomputed pay for it (--recompute-method
             * block: the first N of each model chunk). */
            nrec = space_split_recompute_layers(&split, l, rank);
            nm = moe ? est_split_moe_layers(m, &split, rank) : 0;
            ends = rank == 0 || rank == pp - 1 || rank == mtp_rank;
        }
        /* the run so far ends here: count it */
        if (run > 0
            && (i == pp || ends || per_rank || key[0] != nl || key[1] != nrec
                || key[2] != nm)) {
            tsum += (double)run * run_fill;
            wsum += (double)run * run_w;
            bsum += (double)run * run_b;
            fbsum += (double)run * run_t;
            if (run_t > tmax) {
                tmax = run_t;
                crit = (int64_t)key[3];
                cs_st = run_st;
                cs_casts = run_casts;
            }
            run = 0;
        }
        if (i == pp) break;
        if (run > 0) { /* alike: one more of the run */
            run++;
            continue;
        }
        stage_time st = {0}, *s = &st;
        double casts = weight_casts * nl; /* fp8 weight casts, once per
                                             iteration */
        if (!moe) {
            s->fwd = one.fwd * nl + (double)v * amax_f;
            s->bwd = one.bwd * nl + (double)v * amax_b;
            s->w = one.w * nl;
            s->recompute = one.recompute * nrec;
            s->tp = one.tp * nl + one.rec_tp * nrec;
            s->cp = one.cp * nl + one.rec_cp * nrec;
            s->ep = 0;
            s->host = one.host * nl + one.rec_host * nrec;
        } else {
            /* Dense-FFN and MoE layers of the rank, the recomputed ones in
             * the same proportion. */
            double nd = nl - nm;
            double rm = nl > 0 ? nrec * nm / nl : 0, rd = nrec - rm;
            s->fwd = one.fwd * nd + mo.fwd * nm + (double)v * amax_f;
            s->bwd = one.bwd * nd + mo.bwd * nm + (double)v * amax_b;
            s->w = one.w * nd + mo.w * nm;
            s->recompute = one.recompute * rd + mo.recompute * rm;
            s->tp = one.tp * nd + one.rec_tp * rd + mo.tp * nm
                    + mo.rec_tp * rm;
            s->cp = one.cp * nd + one.rec_cp * rd + mo.cp * nm
                    + mo.rec_cp * rm;
            s->ep = mo.ep * nm + mo.rec_ep * rm;
            s->host = one.host * nd + one.rec_host * rd + mo.host * nm
                      + mo.rec_host * rm;
            if (l->moe_comm_overlap == SPACE_MOE_OVERLAP_A2A) {
                double share = moe_pair_share(l, rank, micro);
                s->ep = (mo.ep * (1 - share) + mo.ep_pair * share) * nm
                        + mo.rec_ep * rm;
            }
            casts = weight_casts * nd + moe_casts * nm;
            if (rank == mtp_rank && m->mtp_layers > 0)
                casts += (double)m->mtp_layers * moe_casts;
        }
        s->p2p = p2p;
        s->offload = 0;
        if (l->act_offload_layers > 0 || l->offload_modules)
            s->offload = offload_exposed(&x, s, nl, nm);
        /* The ends: the embedding on rank 0 and the head on rank PP - 1;
         * a V schedule puts stage 2 PP - 1, the head's, on rank 0 too
         * (torchtitan pipeline_parallel.py _get_pp_rank_to_stage_indices_
         * mapping, style "v"); DualPipe's ranks 0 and PP - 1 each hold
         * stage 0 and stage PP - 1, one for each direction's half of the
         * micro-batches (dualpipe.py: module[phase], is_first_rank /
         * is_last_rank), so each runs half of both. */
        int dual = l->pp_schedule == SPACE_PP_DUALPIPE;
        int64_t head_rank = space_pp_schedule_v(l) ? 0 : pp - 1;
        const stage_time *add[3] = {
            rank == 0 || (dual && rank == pp - 1) ? &first : NULL,
            rank == head_rank || (dual && rank == 0) ? &last : NULL,
            rank == mtp_rank && mtp_rank != pp - 1 ? &mtp_x : NULL};
        for (int a = 0; a < 3; a++) {
            if (!add[a]) continue;
            double k = dual && a < 2 ? 0.5 : 1;
            s->fwd += k * add[a]->fwd;
            s->bwd += k * add[a]->bwd;
            s->tp += k * add[a]->tp;
            s->w += k * add[a]->w;
            if (moe) s->ep += k * add[a]->ep;
        }
        /* The fill and the drain pay every exchange. */
        double t_fill = stage_total(s);
        if (dualpipe) {
            /* DualPipe's steady state runs one micro-batch's forward chunk
             * beside another's backward chunk (F&B): each chunk's MoE
             * dispatch and combine and its pipeline sends run under the
             * other chunk's compute (DeepSeek-V3 report section 3.2.1,
             * Figure 4; dualpipe.py _forward_backward_compute_chunk calls
             * the model's overlapped_forward_backward). Compute does not
             * overlap compute on one GPU, so F&B = F + B less the
             * communication hidden, at most all of it; each hidden second
             * slows the compute by the SM share the communication kernels
             * hold (moe_comm_sm_share, as the combined 1F1B overlap). TP
             * and CP collectives stay exposed. */
            double cm = s->ep + s->p2p;
            double comp = s->fwd + s->bwd + s->recompute;
            if (cm > 0) {
                double hid = fmin(cm, comp);
                double left = cm - hid + moe_comm_sm_share(&x) * hid;
                s->ep *= left / cm;
                s->p2p *= left / cm;
            }
        } else if (p2p_overlap) {
            /* Steady state: each of the v forward and v backward
             * exchanges of a micro-batch runs under one chunk's compute. */
            double cf = s->fwd / (double)v, cb = (s->bwd + s->recompute) / (double)v;
            double send = p2p / (2 * (double)v);
            s->p2p = (double)v * (fmax(0, send - cf) + fmax(0, send - cb));
        }
        run = 1;
        run_st = st, run_casts = casts, run_fill = t_fill;
        run_t = stage_total(s);
        run_w = s->w, run_b = s->bwd + s->recompute;
        key[0] = nl, key[1] = nrec, key[2] = nm, key[3] = (double)rank;
        /* the ends stand alone */
        if (ends) key[0] = -1;
    }
    double tmean = tsum / (double)pp;
    const stage_time *cs = &cs_st;
    est_breakdown *b = &r->time;
    double mb = (double)micro;
    /* fp8 weights cast once per iteration (te_weight_casts), on the
     * critical stage's layers. */
    b->fwd_s = mb * cs->fwd + cs_casts;
    b->bwd_s = mb * cs->bwd;
    b->recompute_s = mb * cs->recompute;
    b->tp_s = mb * cs->tp;
    b->cp_s = mb * cs->cp;
    b->ep_s = mb * cs->ep;
    b->pp_p2p_s = mb * cs->p2p;
    b->offload_s = mb * cs->offload;
    b->host_s = mb * cs->host;
    b->bubble_s = est_pp_bubble(l, tmean, wsum / (double)pp,
                                bsum / (double)pp, fbsum / (double)pp);
    if (v > 1) {
        /* Interleaved: the fill and the drain pass chunk by chunk, each
         * step as long as the longest chunk in it: the bubble stretched
         * by the most layers a chunk holds over the mean (1 for an even
         * split; a chunk that gave a layer's slot to the embedding or the
         * loss is not the longest). */
        double avg = (double)m->num_layers / (double)(pp * v);
        b->bubble_s *= (double)space_split_max_chunk(&split) / avg;
    }

    /* Data parallelism over dp x cp ranks, for the critical stage's
     * parameters; gradients of space_grad_bytes (as the memory model). */
    double params = r->mem.params;
    double shard = (double)(l->dp * l->cp);
    /* MoE: the routed experts' weights reduce over the expert data-
     * parallel group instead (Megatron-Core DDP keeps expert parameters
     * in buffers of their own, reduced over the expert-DP group;
     * distributed_data_parallel.py, expert_data_parallel_group), in the
     * same window. */
    double xp = r->mem.expert_params, xshard = (double)x.edp;
    int xred = xp > 0 && x.edp > 1;
    if (shard > 1 || xred) {
        double grad_bytes = space_grad_bytes(l) * (params - xp);
        double xgrad = space_grad_bytes(l) * xp;
        double bucket = fmin(1, EST_GRAD_BUCKET_PARAMS / fmax(params, 1));
        /* Under the last micro-batch's backward, unless not overlapped. */
        double window = l->no_dp_overlap ? 0 : cs->bwd + cs->recompute;
        double fwd_window = l->no_dp_overlap ? 0 : cs->fwd;
        if (l->zero == SPACE_ZERO_NONE) {
            double t = coll(&x, EST_COLL_ALLREDUCE, grad_bytes, &x.dp_group);
            if (xred)
                t += coll(&x, EST_COLL_ALLREDUCE, xgrad, &x.edp_group);
            b->dp_s = fmax(bucket * t, t - window);
        } else {
            double rs = coll(&x, EST_COLL_REDUCE_SCATTER, grad_bytes,
                             &x.dp_group);
            if (xred)
                rs += coll(&x, EST_COLL_REDUCE_SCATTER, xgrad, &x.edp_group);
            /* ZeRO-2/3 keep no unsharded gradients to accumulate into, so
             * every micro-batch reduce-scatters its gradients, under its
             * own backward (DeepSpeed ZeRO-2/3, FSDP without no_sync);
             * ZeRO-1 once, after the last. */
            double rs_times = l->zero >= SPACE_ZERO_2 ? mb : 1;
            /* ZeRO-3 under a pipeline (FSDP2 in PyTorch's pipelining, the
             * one framework that combines them): gradient sync is off
             * for every micro-batch's backward, and after the last one
             * the stage's FSDP post-backward reduce-scatters everything,
             * after the compute (torch/distributed/pipelining/stage.py,
             * backward_maybe_with_nosync); the parameters, not resharded
             * between micro-batches, are gathered once, in the first
             * forward. */
            int fsdp_pp = l->zero == SPACE_ZERO_3 && pp > 1;
            if (fsdp_pp) rs_times = 1, window = 0;
            /* ZeRO-1/2: the 16-bit parameters gathered back after the
             * step (ZeRO-3 keeps them sharded); with fp8 parameters
             * (--fp8-param-gather) the layers' GEMM weights in one byte
             * (Megatron-Core fp8_utils.py, _quantize_param_shard_impl:
             * the shard cast to fp8 before the gather). */
            int fp8p = x.gemm_dt == HW_FP8 && l->fp8_lib == SPACE_FP8_LIB_TE
                       && l->fp8_params;
            double ag_bytes = 2 * (params - xp);
            if (fp8p)
                ag_bytes -= (double)space_split_rank_layers(&split, r->mem.stage)
                            * layer_gemm_params;
            double ag = l->zero == SPACE_ZERO_3
                            ? 0
                            : coll(&x, EST_COLL_ALLGATHER, ag_bytes,
                                   &x.dp_group);
            /* The routed experts' shard gathered over expert DP: all
             * GEMM weights, one byte each with fp8 parameters. */
            if (xred && l->zero != SPACE_ZERO_3)
                ag += coll(&x, EST_COLL_ALLGATHER, (fp8p ? 1 : 2) * xp,
                           &x.edp_group);
            b->dp_s = rs_times * fmax(bucket * rs, rs - window)
                      + fmax(bucket * ag, ag - fwd_window); /* 0 if ag is */
            if (l->zero == SPACE_ZERO_3) {
                /* Each layer's parameters gathered for its forward and
                 * again for its backward, under the neighbouring layer's
                 * compute (prefetch), or before it where not overlapped
                 * (DeepSpeed's ZeRO-3 of 2021 prefetched little: DeepSpeed
                 * issues #1174 and #1170); the gradients reduce-scattered
                 * per layer (the term above) as they are produced.
                 * MoE (Megatron-FSDP, megatron_fsdp.py@d98e8a6: expert
                 * parameters in groups of their own, sharded over the
                 * expert data-parallel group, dist_index.get_fsdp_group(
                 * is_expert_parallel=True)): an MoE layer gathers its
                 * other parameters over the DP group and its E / ep
                 * routed experts over the expert-DP group, one after the
                 * other, under the MoE layer's compute. */
                /* r->mem's stage: the one whose params these are. */
                int64_t srank = r->mem.stage;
                double nl_s =
                    fmax((double)space_split_rank_layers(&split, srank), 1);
                double nm_s = moe ? est_split_moe_layers(m, &split, srank) : 0;
                double lp = (params - xp) / nl_s;
                double g1 = coll(&x, EST_COLL_ALLGATHER, 2 * lp, &x.dp_group);
                double g_moe = g1;
                if (nm_s > 0 && xp > 0)
                    g_moe += coll(&x, EST_COLL_ALLGATHER, 2 * xp / nm_s,
                                   x.edp > 1 ? &x.edp_group : &x.dp_group);
                double ov = l->no_dp_overlap ? 0 : 1;
                double exp_f = (nl_s - nm_s) * fmax(0, g1 - ov * one.fwd)
                               + nm_s * fmax(0, g_moe - ov * mo.fwd);
                double exp_b = (nl_s - nm_s) * fmax(0, g1 - ov * one.bwd)
                               + nm_s * fmax(0, g_moe - ov * mo.bwd);
                if (fsdp_pp)
                    b->dp_s += exp_f;
                else
                    b->dp_s += mb * (exp_f + exp_b);
            }
        }
    }
    /* Optimizer step over the parameters this rank updates. */
    {
        est_op a = {0};
        a.kind = EST_OP_ADAM;
        a.dtype = HW_FP32;
        double n = l->zero >= SPACE_ZERO_1
                       ? (params - xp) / shard + (xp > 0 ? xp / xshard : 0)
                       : params;
        if (l->opt_offload > 0 || l->pa_optimizer) {
            b->optimizer_s = saver_step(&x, n);
        } else {
            a.n = (int64_t)(n > 1 ? n : 1);
            est_time t = op_time(&x, &a);
            b->optimizer_s = t.fwd_s;
        }
    }
    r->iteration_s = b->fwd_s + b->bwd_s + b->recompute_s + b->tp_s + b->cp_s
                     + b->pp_p2p_s + b->bubble_s + b->dp_s + b->optimizer_s;
    if (l->act_offload_layers > 0 || l->offload_modules)
        r->iteration_s += b->offload_s;
    if (moe) r->iteration_s += b->ep_s;
    r->iteration_s += b->host_s;
    r->critical_stage = crit;

    /* Model FLOPs: the space.h convention with attention over the whole
     * sequence (non-causal, as Megatron-LM and PaLM count), no recompute. */
    space_flops fl;
    space_flops_per_token(m, l->seq, 0, SPACE_RECOMPUTE_NONE, &fl);
    double tokens = (double)l->gbs * (double)l->seq;
    r->model_flops = (fl.fwd + fl.bwd) * tokens;
    r->tokens_per_s = tokens / r->iteration_s;
    r->model_flops_per_gpu_s = r->model_flops / (r->iteration_s * (double)gpus);
    double peak = g->peak_flops[x.act_dt] > 0 ? g->peak_flops[x.act_dt]
                                              : g->peak_flops[HW_FP16];
    r->mfu = r->model_flops_per_gpu_s / peak;

    if (r->mem.total > g->mem_bytes) {
        r->reason = EST_OUT_OF_MEMORY;
        snprintf(r->message, sizeof r->message,
                 "needs %.2f GiB on pipeline stage %lld, %.2f GiB more than "
                 "the %.2f GiB of %s",
                 r->mem.total / 1073741824.0, (long long)r->mem.stage,
                 (r->mem.total - g->mem_bytes) / 1073741824.0,
                 g->mem_bytes / 1073741824.0, g->name);
        return;
    }
    r->feasible = 1;
}
