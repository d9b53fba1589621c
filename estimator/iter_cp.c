/*
 * iter_cp.c - the elementwise kernels of Transformer Engine's context-
 * parallel attention, beside its attention kernels and its KV exchange
 * (iter_layer.c times those): merging each ring step's partial output
 * into the running output, accumulating each step's dq, dk and dv, and
 * the copies of K and V the exchange needs. Each kernel is a
 * memory-bound operator timed as the residual add is (iter_ops.c: the
 * operator models, then the in-training kernel efficiency), scaled by
 * its bytes over the add's (read two tensors, write one), as the fused
 * bias-dropout-add is (iter_layer.c).
 *
 * Only for Megatron-Core with Transformer Engine (its DotProductAttention
 * with a cp_group; space_layout_stack); torchtitan's context parallel is
 * PyTorch's own and Megatron-LM 2021 had none. Not modelled: TE's a2a
 * (Ulysses) and hierarchical a2a+p2p types, which no layout selects;
 * fp8 attention (FP8_DPA: fp32 partial outputs), which no layout selects;
 * the fp32 softmax statistics (T x heads, 1/64 of the output's bytes at
 * head size 128) except the forward's last correction; bshd, which
 * Megatron-Core does not pass (it runs sbhd, thd when packed).
 *
 * Source: NVIDIA/TransformerEngine@40c69e751a47 (v2.8, release_v2.8, the
 * TE_REVISION of MLPerf Training v5.1's NeMo submissions, e.g.
 * mlcommons/training_results_v5.1 University-of-Florida/benchmarks/
 * llama31_8b/implementations/b200_nemo/Dockerfile), transformer_engine/
 * pytorch/attention/dot_product_attention/context_parallel.py:
 * AttnFuncWithCPAndKVP2P.forward and .backward, AttnFuncWithCPAndKVAll-
 * Gather.forward and .backward, cp_p2p_fwd_prepare_qkv,
 * cp_p2p_bwd_prepare_qkv. The same file at d0067d0da6cb (2026-08) keeps
 * these kernels (flash_attn_fwd_out_correction after the loop, dq.add_,
 * dk.add_ / dv.add_ per step).
 */

#include "est_int.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Appends count kernels of (pass, op, tensor, size) to k, merging equal
 * ones. */
static void put(est_cp_kernels *k, int pass, est_cp_access op, est_cp_tensor t,
                double size, int count)
{
    for (int i = 0; i < k->n; i++) {
        est_cp_kernel *e = &k->k[i];
        if (e->pass == pass && e->op == op && e->tensor == t && e->size == size) {
            e->count += count;
            return;
        }
    }
    if (k->n == EST_CP_KERNEL_KINDS) return; /* cannot happen: see the header */
    k->k[k->n++] = (est_cp_kernel){pass, op, t, size, count};
}

/* The ring (AttnFuncWithCPAndKVP2P), causal, rank r of cp. Forward: the
 * step kernels run on two streams in turn, each step's attention beside
 * the previous step's softmax statistics correction; the output merge
 * runs after the loop on the compute stream. Backward: one stream, each
 * step's attention then its dq and dk, dv accumulation. */
static void ring(int cp, int r, int thd, est_cp_kernels *k)
{
    /* Forward. The K and V block packed for the first send:
     * p2p_comm_buffers[0] = torch.cat((k.view(-1), v.view(-1))). */
    put(k, 0, EST_CP_COPY, EST_CP_KV, 2, 1);
    /* thd: the lower triangle (i <= r) reads the first half of each
     * sequence's K and V, the upper triangle the second half of its
     * queries, as copies (tex.thd_read_half_tensor); sbhd slices. */
    for (int i = 1; thd && i < cp; i++) {
        if (i <= r)
            put(k, 0, EST_CP_COPY, EST_CP_KV, 0.5, 2);
        else
            put(k, 0, EST_CP_COPY, EST_CP_Q, 0.5, 1);
    }
    /* The last step's statistics correction: nothing after it to hide
     * under (flash_attn_fwd_softmax_lse_correction, or its second-half
     * form for the upper triangle). */
    put(k, 0, EST_CP_ADD, EST_CP_LSE, cp - 1 <= r ? 1 : 0.5, 1);
    /* The output merge. sbhd: step 0 scaled into a new output
     * (flash_attn_fwd_out_correction_init: read, write); thd: the output
     * is zeroed in the loop, on the side stream, and step 0 added
     * (tex.thd_out_correction). Then each step added: whole for the
     * lower triangle, the second half of the queries for the upper
     * (flash_attn_fwd_out_correction, _second_half_out_correction). The
     * output stays in the input's dtype (the init's .to(out.dtype)). */
    put(k, 0, thd ? EST_CP_ADD : EST_CP_COPY, EST_CP_Q, 1, 1);
    for (int i = 1; i < cp; i++)
        put(k, 0, EST_CP_ADD, EST_CP_Q, i <= r ? 1 : 0.5, 1);

    /* Backward. The first ring buffer filled with K and V:
     * p2p_comm_buffers[0][0].copy_(kv). */
    put(k, 1, EST_CP_COPY, EST_CP_KV, 2, 1);
    for (int i = 0; i < cp; i++) {
        int lower = i >= cp - r - 1 && i < cp - 1, upper = i < cp - r - 1;
        if (thd && lower) put(k, 1, EST_CP_COPY, EST_CP_KV, 0.5, 2);
        if (thd && upper) put(k, 1, EST_CP_COPY, EST_CP_Q, 0.5, 3);
        /* dq (sbhd's slices; thd's tex.thd_grad_correction moves the
         * same bytes) */
        if (i > cp - r - 1) {
            put(k, 1, EST_CP_ADD, EST_CP_Q, 1, 1);
        } else if (i == cp - r - 1) {
            if (r == cp - 1) {
                put(k, 1, EST_CP_COPY, EST_CP_Q, 1, 1);
            } else {
                put(k, 1, EST_CP_COPY, EST_CP_Q, 0.5, 1);
                put(k, 1, EST_CP_ADD, EST_CP_Q, 0.5, 1);
            }
        } else {
            put(k, 1, i > 0 ? EST_CP_ADD : EST_CP_COPY, EST_CP_Q, 0.5, 1);
        }
        /* dk and dv, into the buffer the next step sends */
        if (i == cp - 1) {
            if (r == 0) {
                put(k, 1, EST_CP_ADD, EST_CP_KV, 0.5, 2);
                put(k, 1, EST_CP_COPY, EST_CP_KV, 0.5, 2);
            } else {
                put(k, 1, EST_CP_ADD, EST_CP_KV, 1, 2);
            }
        } else if (lower) {
            put(k, 1, i == 0 && r == cp - 1 ? EST_CP_COPY : EST_CP_ADD,
                EST_CP_KV, 0.5, 2);
        } else {
            put(k, 1, i > 0 ? EST_CP_ADD : EST_CP_COPY, EST_CP_KV, 1, 2);
        }
    }
}

/* The all-gather type (AttnFuncWithCPAndKVAllGather; sbhd only in TE
 * 2.8), causal, rank r of cp: the rank's two query chunks (ids r and
 * 2 cp - r - 1) each against the gathered keys up to its own end, on two
 * streams; chunk 0's output copy and gradient updates run under chunk 1's
 * attention, chunk 1's after it. */
static void allgather(int cp, int r, est_cp_kernels *k)
{
    /* Forward: the gathered K and V put in sequence order (index_select
     * of 2 cp chunks), then chunk 1's output copied into place. */
    put(k, 0, EST_CP_COPY, EST_CP_KV, cp, 2);
    put(k, 0, EST_CP_COPY, EST_CP_Q, 0.5, 1);
    /* Backward: dk and dv zeroed at the gathered size, K and V gathered
     * and reordered again, chunk 1's dq copied and its dk, dv added over
     * its 2 cp - r chunks of keys, then dk and dv reordered for the
     * reduce-scatter. */
    put(k, 1, EST_CP_FILL, EST_CP_KV, cp, 2);
    put(k, 1, EST_CP_COPY, EST_CP_KV, cp, 2);
    put(k, 1, EST_CP_COPY, EST_CP_Q, 0.5, 1);
    put(k, 1, EST_CP_ADD, EST_CP_KV, (double)(2 * cp - r) / 2, 2);
    put(k, 1, EST_CP_COPY, EST_CP_KV, cp, 2);
}

void est_cp_kernels_rank(int cp, int rank, int comm, int thd,
                         est_cp_kernels *out)
{
    out->n = 0;
    if (cp <= 1 || rank < 0 || rank >= cp) return;
    if (comm == SPACE_CP_ALLGATHER)
        allgather(cp, rank, out);
    else
        ring(cp, rank, thd, out);
}

double est_cp_kernels_bytes(const est_cp_kernels *k, int pass, double q_bytes,
                            double kv_bytes, double lse_bytes)
{
    double b = 0;
    for (int i = 0; i < k->n; i++) {
        const est_cp_kernel *e = &k->k[i];
        if (e->pass != pass) continue;
        double t = e->tensor == EST_CP_Q    ? q_bytes
                   : e->tensor == EST_CP_KV ? kv_bytes
                                            : lse_bytes;
        b += (double)e->op * t * e->size * e->count;
    }
    return b;
}

/* Time of one kernel: the residual add over the same tensor (rows: its
 * tokens, cols: its width), times its accesses over the add's three. */
static double kernel_s(const est_iter_ctx *x, const est_cp_kernel *e,
                       int64_t rows, int64_t cols, hw_dtype dt)
{
    int64_t n = (int64_t)(e->size * (double)rows + 0.5);
    est_op o = est_elementwise(EST_OP_RESADD, dt, n > 0 ? n : 1, cols);
    int n0 = est_trace_mark(x);
    double t = est_op_time(x, &o).fwd_s * (double)e->op / 3;
    est_trace_row *w = est_trace_added(x, n0);
    if (w) {
        static const char *const names[EST_CP_TENSORS][4] = {
            [EST_CP_Q] = {"", "cp_fill_q", "cp_copy_q", "cp_merge_q"},
            [EST_CP_KV] = {"", "cp_fill_kv", "cp_copy_kv", "cp_merge_kv"},
            [EST_CP_LSE] = {"", "cp_fill_lse", "cp_copy_lse", "cp_merge_lse"}};
        snprintf(w->what, sizeof w->what, "%s", names[e->tensor][e->op]);
        snprintf(w->shape, sizeof w->shape, "%d x %lld x %lld", e->count,
                 (long long)o.rows, (long long)o.cols);
        w->fwd_s = e->pass == 0 ? t * e->count : 0;
        w->bwd_s = e->pass == 1 ? t * e->count : 0;
    }
    return t;
}

/* The ranks that can move the most bytes, each with its kernels: a
 * rank's bytes are linear in its index between the end ranks, whose
 * branches differ (the first and last steps), so the most is at 0, 1,
 * cp - 2 or cp - 1 (test_est.c checks it against every rank). Returns
 * how many of k[4], rank[4] it filled, rank 0 first. */
static int candidates(int cp, int comm, int thd, est_cp_kernels *k, int *rank)
{
    const int cand[4] = {0, 1, cp - 2, cp - 1};
    int n = 0;
    for (int i = 0; i < 4; i++) {
        int r = cand[i];
        if (r < 0 || r >= cp || (i > 0 && r <= cand[i - 1])) continue;
        est_cp_kernels_rank(cp, r, comm, thd, &k[n]);
        rank[n++] = r;
    }
    return n;
}

/* Of the n candidates k, the one whose kernels of pass move the most
 * bytes; the first such. */
static int busiest(const est_cp_kernels *k, int n, int pass, double q_bytes,
                   double kv_bytes, double lse_bytes)
{
    int best = 0;
    double most = -1;
    for (int i = 0; i < n; i++) {
        double b = est_cp_kernels_bytes(&k[i], pass, q_bytes, kv_bytes,
                                        lse_bytes);
        if (b > most) most = b, best = i;
    }
    return best;
}

int est_cp_busiest_rank(int cp, int comm, int thd, int pass, double q_bytes,
                        double kv_bytes, double lse_bytes)
{
    est_cp_kernels k[4];
    int rank[4], n = candidates(cp, comm, thd, k, rank);
    return n ? rank[busiest(k, n, pass, q_bytes, kv_bytes, lse_bytes)] : 0;
}

/* est_cp_merge_time's sums, memoized per thread as operator times are
 * (iter_ops.c): a search meets a few CP shapes thousands of times, and
 * each costs the kernel lists of up to four ranks and two dozen operator
 * times. A pass's sum is a pure function of the operator models (their
 * id), the kernel efficiency, the kernels (cp, comm, thd) and the
 * tensors (tokens, widths, dtype), which the key holds, so a hit returns
 * the bits a miss would compute. Off with the other memos
 * (est_memo_enable) and while a trace is kept (it wants each kernel's
 * row). */
#define CP_MEMO_SLOTS 256 /* power of two */

typedef struct cp_memo_slot {
    uint64_t ops;           /* est_models_id; 0 when empty */
    uint64_t eff;           /* the kernel efficiency's bits */
    int64_t T, cq, ckv, hq; /* tokens; Q, KV and LSE widths */
    int cp, comm, thd, dt;
    double s[2];            /* the forward's and the backward's sums */
} cp_memo_slot;

static _Thread_local cp_memo_slot cp_memo[CP_MEMO_SLOTS];

void est_cp_merge_time(const est_iter_ctx *x, double *fwd, double *bwd)
{
    const space_layout *l = x->l;
    int cp = (int)l->cp;
    if (cp <= 1 || space_layout_stack(l) != SPACE_STACK_MEGATRON_CORE
        || !l->flash)
        return;
    int64_t T = x->T; /* this rank's tokens: mbs x seq / cp */
    int64_t hq = x->attn_hq / l->tp, hk = x->attn_hk / l->tp;
    if (hk < 1) hk = 1;
    int64_t cq = hq * x->attn_hd, ckv = hk * x->attn_hd;
    int thd = l->n_docs > 0;
    cp_memo_slot *sl = NULL;
    uint64_t ops = 0, eff = 0;
    if (est_memo_mode() && !x->c->trace) {
        ops = est_models_id(x->c->ops);
        memcpy(&eff, &x->eff, sizeof eff);
        uint64_t h = ops * 0x9e3779b97f4a7c15u + eff * 0xbf58476d1ce4e5b9u
                     + (uint64_t)T * 0x94d049bb133111ebu
                     + (uint64_t)cq * 0xd6e8feb86659fd93u
                     + (uint64_t)ckv * 0xa0761d6478bd642fu
                     + (uint64_t)hq * 0xe7037ed1a0b428dbu
                     + (uint64_t)cp * 0x8ebc6af09c88c6e3u
                     + (uint64_t)(l->cp_comm * 4 + thd * 2) + (uint64_t)x->act_dt
                                                       * 0x589965cc75374cc3u;
        h ^= h >> 32;
        h *= 0x9e3779b97f4a7c15u;
        h ^= h >> 29;
        sl = &cp_memo[h & (CP_MEMO_SLOTS - 1)];
        if (sl->ops == ops && sl->eff == eff && sl->T == T && sl->cq == cq
            && sl->ckv == ckv && sl->hq == hq && sl->cp == cp
            && sl->comm == l->cp_comm && sl->thd == thd
            && sl->dt == (int)x->act_dt) {
            *fwd += sl->s[0];
            *bwd += sl->s[1];
            return;
        }
    }
    double e = est_dtype_bytes(x->act_dt);
    double qb = e * (double)(T * cq), kb = e * (double)(T * ckv),
           lb = 4.0 * (double)(T * hq);
    /* The ranks meet at every ring step and at the layer's next
     * collective: each pass runs at the pace of the rank with the most
     * bytes to move. Each candidate's kernels are listed once for both
     * passes. */
    est_cp_kernels k[4];
    int rank[4], n = candidates(cp, l->cp_comm, thd, k, rank);
    double sum[2];
    for (int p = 0; p < 2; p++) {
        const est_cp_kernels *b = &k[busiest(k, n, p, qb, kb, lb)];
        double s = 0;
        for (int i = 0; i < b->n; i++) {
            const est_cp_kernel *c = &b->k[i];
            if (c->pass != p) continue;
            int64_t cols = c->tensor == EST_CP_Q    ? cq
                           : c->tensor == EST_CP_KV ? ckv
                                                    : hq;
            hw_dtype dt = c->tensor == EST_CP_LSE ? HW_FP32 : x->act_dt;
            s += c->count * kernel_s(x, c, T, cols, dt);
        }
        sum[p] = s;
    }
    *fwd += sum[0];
    *bwd += sum[1];
    if (sl)
        *sl = (cp_memo_slot){ops, eff, T, cq, ckv, hq, cp, l->cp_comm, thd,
                             (int)x->act_dt, {sum[0], sum[1]}};
}
