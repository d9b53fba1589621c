/*
 * iter_ops.c - one operator or collective of an iteration timed: operator
 * times through the operator models (models.c) divided by the in-training
 * kernel efficiency and memoized per thread; collective times through the
 * collective models (comm.c) over groups placed in Megatron-LM's rank
 * order (tp-cp-dp-pp); each appended to the estimate's trace when it keeps
 * one (--ops). What the operators of a layer are is iter_layer.c's.
 */

#include "est_int.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Appends a row to the estimate's trace, when it keeps one. */
void est_trace_add(const est_iter_ctx *x, const char *what, const char *shape,
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

int est_trace_mark(const est_iter_ctx *x)
{
    return x->c->trace ? x->c->trace->n : 0;
}

est_trace_row *est_trace_added(const est_iter_ctx *x, int n0)
{
    est_trace *tr = x->c->trace;
    return tr && tr->n > n0 ? &tr->row[tr->n - 1] : NULL;
}

static void trace_op(const est_iter_ctx *x, const est_op *o, const est_time *t)
{
    if (!x->c->trace) return;
    char shape[48];
    if (o->kind == EST_OP_GEMM)
        snprintf(shape, sizeof shape, "%s%lld x %lld x %lld %s",
                 o->b > 1 ? "batched " : "", (long long)o->m, (long long)o->n,
                 (long long)o->k, hw_dtype_names[o->dtype]);
    else if (o->kind == EST_OP_FLASH_ATTN || o->kind == EST_OP_ATTN_CUDNN)
        snprintf(shape, sizeof shape, "b%lld h%lld/%lld s%lld d%lld%s%s",
                 (long long)o->b, (long long)o->heads, (long long)o->kv_heads,
                 (long long)o->sq, (long long)o->head_dim,
                 o->causal ? " causal" : "", o->dtype == HW_FP8 ? " fp8" : "");
    else if (o->kind == EST_OP_ADAM)
        snprintf(shape, sizeof shape, "%lld params", (long long)o->n);
    else
        snprintf(shape, sizeof shape, "%lld x %lld", (long long)o->rows,
                 (long long)o->cols);
    est_trace_add(x, est_op_names[o->kind], shape, t->fwd_s, t->bwd_s);
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

int est_memo_mode(void)
{
    return memo_on;
}

static void memo_key(uint64_t ops, const est_op *o, int64_t *k)
{
    const int64_t v[MEMO_KEY] = {(int64_t)ops, o->kind, o->dtype, o->b,
                                 o->m, o->n, o->k, o->heads, o->kv_heads,
                                 o->sq, o->sk, o->head_dim, o->causal,
                                 o->rows, o->cols, o->vocab_parallel};
    memcpy(k, v, sizeof v);
}

/* The memos' last step: one multiply-xorshift (the 64-bit golden-ratio
 * constant of Fibonacci hashing, Knuth TAOCP vol. 3 6.4) over a sum of
 * fields each times an odd constant of its own. */
static uint64_t memo_mix(uint64_t h)
{
    h ^= h >> 32;
    h *= 0x9e3779b97f4a7c15u;
    return h ^ (h >> 29);
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
    return memo_mix(h);
}

/* 1 where keys a and b are equal: the fields in a loop the compiler
 * unrolls, not a call to memcmp. */
static int memo_same(const int64_t *a, const int64_t *b)
{
    int64_t d = 0;
    for (int i = 0; i < MEMO_KEY; i++) d |= a[i] ^ b[i];
    return d == 0;
}

/* An operator's time from the models; fp8 attention (iter_layer.c gives
 * it dtype HW_FP8) as the 16-bit kernel's time times the GPU's measured
 * fp8 / bf16 ratio at its query length (hwdb fp8_attention; the fits hold
 * no fp8 attention samples). */
static void models_time(const est_iter_ctx *x, const est_op *op, est_time *t)
{
    if ((op->kind == EST_OP_ATTN_CUDNN || op->kind == EST_OP_FLASH_ATTN)
        && op->dtype == HW_FP8) {
        est_op o16 = *op;
        o16.dtype = HW_BF16;
        est_models_time(x->c->ops, &o16, t);
        double f, b;
        hw_gpu_fp8_attention(x->c->gpu, (double)op->sq, &f, &b);
        t->fwd_s *= f;
        t->bwd_s *= b;
        return;
    }
    est_models_time(x->c->ops, op, t);
}

est_time est_op_time(const est_iter_ctx *x, const est_op *op)
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
            models_time(x, op, &t);
            memcpy(sl->key, key, sizeof key);
            sl->t = t;
        }
    } else {
        models_time(x, op, &t);
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

static double coll_time(const est_iter_ctx *x, est_coll k, double bytes,
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
    coll_memo_slot *s = &coll_memo[memo_mix(h) & (COLL_MEMO_SLOTS - 1)];
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

double est_iter_coll(const est_iter_ctx *x, est_coll k, double bytes,
                     const est_group *g)
{
    if (g->size <= 1 || bytes <= 0) return 0;
    double t = coll_time(x, k, bytes, g);
    t = isfinite(t) ? t : 0;
    if (x->c->trace) {
        char shape[48];
        snprintf(shape, sizeof shape, "%.4g MB over %dx%d", bytes / 1e6,
                 g->nodes, g->per_node);
        est_trace_add(x, est_coll_names[k], shape, t, 0);
    }
    return t;
}

/* A group of `size` ranks whose consecutive members are `stride` global
 * ranks apart, on nodes of gpn GPUs (rank order tp-cp-dp-pp). */
est_group est_place(int64_t size, int64_t stride, int gpn)
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

est_op est_gemm(hw_dtype dt, int64_t m, int64_t n, int64_t k)
{
    est_op o = {0};
    o.kind = EST_OP_GEMM;
    o.dtype = dt;
    o.b = 1, o.m = m, o.n = n, o.k = k;
    return o;
}

est_op est_elementwise(est_op_kind kind, hw_dtype dt, int64_t rows,
                       int64_t cols)
{
    est_op o = {0};
    o.kind = kind;
    o.dtype = dt;
    o.rows = rows, o.cols = cols;
    return o;
}

void est_add_op(const est_iter_ctx *x, const est_op *o, double *fwd,
                double *bwd)
{
    est_time t = est_op_time(x, o);
    *fwd += t.fwd_s;
    *bwd += t.bwd_s;
}

/* Adds op o to *fwd, *bwd as est_add_op does, naming its trace row `what`
 * (a kernel timed as an op of another name, e.g. a token permutation as
 * the embedding's gather). */
void est_add_named(const est_iter_ctx *x, const est_op *o, const char *what,
                   double *fwd, double *bwd)
{
    int n0 = est_trace_mark(x);
    est_add_op(x, o, fwd, bwd);
    est_trace_row *r = est_trace_added(x, n0);
    if (r) snprintf(r->what, sizeof r->what, "%s", what);
}
