/*
 * iter_layer.c - one transformer layer of an iteration, one micro-batch,
 * per rank (est_layer_time), and what the first and last pipeline stages
 * add (the embedding; the final norm, LM head and loss); the attention
 * core, MLA's projections, sliding windows; the GEMM weights of a layer
 * (for their fp8 casts). Times come from iter_ops.c and iter_gemm.c, an
 * MoE layer's routed experts from iter_moe.c; iter.c sums the layers.
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
 * attention (Megatron-Core / Transformer Engine context parallelism); its
 * output merges and gradient accumulations are iter_cp.c's.
 *
 * Recompute: selective reruns the attention core's forward in the
 * backward (Korthikanti et al., arXiv 2205.05198); full reruns the whole
 * layer forward, its TP collectives included, of the layers
 * space_recompute_layers names (--recompute-method block: the first N of
 * each model chunk; uniform: all); torchtitan's op-level
 * selective checkpointing reruns the cheap ops and the matmuls whose
 * outputs it does not keep (k, o, and the FFN's middle one).
 */

#include "est_int.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

/* Sliding-window attention (space_model.window): a local layer's query i
 * sees min(i + 1, w) keys of a causal row of s, sum w (w + 1) / 2 +
 * (s - w) w over the row, against s (s + 1) / 2 for a global layer
 * (FlashAttention's window_size, which skips the blocks outside the
 * window: its work scales with the keys seen). Returns the attention
 * core's time over the global one's, averaged over the layers: the
 * global ones (every global_every-th, space.h) at 1. Attention sinks and
 * logit soft-capping are elementwise inside the kernel: not timed. */
double est_window_scale(const space_model *m, int64_t seq)
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
static void attention(const est_iter_ctx *x, double *fwd, double *bwd,
                      double *cp_fwd, double *cp_bwd)
{
    const space_layout *l = x->l;
    int64_t hq = x->attn_hq / l->tp, hk = x->attn_hk / l->tp;
    int64_t hd = x->attn_hd;
    int64_t s = l->seq / l->cp;
    *cp_fwd = *cp_bwd = 0;
    /* One ring step's message: this rank's K and V block. */
    double p = l->cp > 1
                   ? est_iter_coll(x, EST_COLL_SENDRECV,
                                   2.0 * (double)(l->mbs * s
                                                  * (hk > 0 ? hk : 1) * hd)
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
        est_op qk = est_gemm(x->act_dt, s, l->seq, hd);
        qk.b = l->mbs * hq;
        est_op av = est_gemm(x->act_dt, s, hd, l->seq);
        av.b = l->mbs * hq;
        int fused = l->seq > 16 && l->seq <= 4096 && s % 4 == 0
                    && l->seq % 4 == 0 && (l->mbs * hq) % 4 == 0;
        est_op sm
            = est_elementwise(fused ? EST_OP_MASKED_SOFTMAX : EST_OP_SOFTMAX,
                              x->act_dt, l->mbs * hq * s, l->seq);
        est_add_op(x, &qk, fwd, bwd);
        est_add_op(x, &sm, fwd, bwd);
        if (x->m->attn_dropout > 0) { /* on the probabilities: a kernel */
            est_op dr = est_elementwise(EST_OP_DROPOUT, x->act_dt,
                                        l->mbs * hq * s, l->seq);
            est_add_op(x, &dr, fwd, bwd);
        }
        est_add_op(x, &av, fwd, bwd);
        *cp_fwd = (double)(l->cp - 1) * p;
        *cp_bwd = 2 * (double)(l->cp - 1) * p;
        return;
    }
    est_op fa = {0};
    fa.kind = x->cudnn_attn ? EST_OP_ATTN_CUDNN : EST_OP_FLASH_ATTN;
    fa.dtype = x->act_dt;
    /* Transformer Engine's fp8 attention is cuDNN's fused kernel in fp8
     * (FusedAttention; est_op_time scales its 16-bit time) */
    if (space_fp8_attention(l)) {
        fa.kind = EST_OP_ATTN_CUDNN;
        fa.dtype = HW_FP8;
    }
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
        est_time t = est_op_time(x, &fa);
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
        t = est_op_time(x, &half);
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
        *cp_fwd = est_iter_coll(x, EST_COLL_ALLGATHER, kv, &x->cp_group);
        *cp_bwd = *cp_fwd + est_iter_coll(x, EST_COLL_REDUCE_SCATTER, kv,
                                          &x->cp_group);
        return;
    }
    *cp_fwd = fmax(0, p - diag.fwd_s) + (steps - 1) * fmax(0, p - h.fwd_s);
    *cp_bwd = fmax(0, 2 * p - diag.bwd_s)
              + (steps - 1) * fmax(0, 2 * p - h.bwd_s);
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
 * layer's own norm (EST_GEMM_LOCAL_IN: their output gradients are this
 * rank's), the up projections TELayerNormColumnParallelLinear layers that
 * fuse the latents' norms (qk_layernorm; gpt_layer_specs.py,
 * get_gpt_layer_with_transformer_engine_spec, multi_latent_attention
 * branch, NVIDIA/Megatron-LM@d98e8a64ddf3), a query without a latent a
 * plain column-parallel TELinear. */
static void mla_qkv(const est_iter_ctx *x, double *fwd, double *bwd,
                    est_time *g_up, double *w_up, double *up_f)
{
    const space_model *m = x->m;
    int64_t tp = x->l->tp, h = m->hidden, T = x->T, Tn = x->Tn;
    int64_t H = m->heads, rope = m->qk_rope_head_dim;
    int64_t qk = m->qk_nope_head_dim + rope, kvu = m->qk_nope_head_dim
                                                     + m->v_head_dim;
    int64_t ql = m->q_lora_rank, kl = m->kv_lora_rank;
    if (ql > 0) est_add_gemm(x, Tn, ql, h, EST_GEMM_LOCAL_IN, fwd, bwd, NULL);
    est_add_gemm(x, Tn, kl + rope, h, EST_GEMM_LOCAL_IN, fwd, bwd, NULL);
    est_op o;
    if (ql > 0) {
        o = est_elementwise(x->norm, x->act_dt, Tn, ql);
        est_add_op(x, &o, fwd, bwd);
    }
    o = est_elementwise(x->norm, x->act_dt, Tn, kl);
    est_add_op(x, &o, fwd, bwd);
    double wq, wkv;
    est_time a = ql > 0 ? est_add_gemm(x, T, H * qk / tp, ql, EST_GEMM_NORM_IN,
                                       fwd, bwd, &wq)
                        : est_add_gemm(x, T, H * qk / tp, h, EST_GEMM_LOCAL_IN,
                                       fwd, bwd, &wq);
    est_time b = est_add_gemm(x, T, H * kvu / tp, kl, EST_GEMM_NORM_IN, fwd,
                              bwd, &wkv);
    g_up->fwd_s = a.fwd_s + b.fwd_s;
    g_up->bwd_s = a.bwd_s + b.bwd_s;
    *w_up = wq + wkv;
    *up_f = g_up->fwd_s;
    if (m->pos == SPACE_POS_ROPE || rope > 0) {
        double f0 = *fwd;
        o = est_elementwise(EST_OP_ROPE, x->act_dt, T, H * rope / tp + rope);
        est_add_op(x, &o, fwd, bwd);
        *up_f += *fwd - f0;
    }
}

/* One transformer layer, one micro-batch, per rank: a dense-FFN layer, or
 * with moe an MoE layer (its shared experts in the place of the dense
 * FFN, TP-sharded as Megatron-Core's SharedExpertMLP is, and the routed
 * experts, est_moe_routed). */
void est_layer_time_of(const est_iter_ctx *x, est_stage_time *st, int moe)
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
    est_op o = est_elementwise(x->norm, x->act_dt, Tn, h);
    est_add_op(x, &o, &fwd, &bwd);
    double norm_f = fwd; /* one norm's forward (fwd started at 0) */
    est_add_op(x, &o, &fwd, &bwd); /* the second norm */
    o = est_elementwise(EST_OP_RESADD, x->act_dt, Tn, h);
    est_time ra = est_op_time(x, &o);
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
        g_qkv = est_add_gemm(x, T, (q + 2 * kv) / tp, h, EST_GEMM_NORM_IN, &fwd,
                             &bwd, &w_qkv);
    }
    fwd_gemm += fwd - f0;
    if (m->pos == SPACE_POS_ROPE && !x->mla) {
        o = est_elementwise(l->eager ? EST_OP_ROPE_EAGER : EST_OP_ROPE,
                            x->act_dt, T, (q + kv) / tp);
        est_add_op(x, &o, &fwd, &bwd);
    }
    double afwd = 0, abwd = 0, cpf, cpb;
    attention(x, &afwd, &abwd, &cpf, &cpb);
    if (m->window > 0) { /* local layers see at most `window` keys */
        afwd *= x->attn_scale;
        abwd *= x->attn_scale;
    }
    /* Transformer Engine's merges of the ring steps (iter_cp.c): part of
     * the core attention module, rerun where it is. */
    est_cp_merge_time(x, &afwd, &abwd);
    f0 = fwd;
    est_time g_o
        = est_add_gemm(x, T, h, q / tp, EST_GEMM_LINEAR_IN, &fwd, &bwd, NULL);
    est_time g_fc1 = {0, 0}, g_fc2 = {0, 0};
    double sh_f0 = fwd, sh_b0 = bwd, sh1f = 0, sh1b = 0; /* shared FC1 */
    /* An MoE layer's norm is a module of its own (the router reads it
     * too), so its shared experts' FC1 is a plain column-parallel
     * TELinear (gpt_layer_specs.py: pre_mlp_layernorm a layer norm with
     * experts, IdentityOp without). */
    if (mlp)
        g_fc1 = est_add_gemm(x, T, (gated ? 2 : 1) * f / tp, h,
                             moe ? EST_GEMM_LOCAL_IN : EST_GEMM_NORM_IN, &fwd,
                             &bwd, &w_fc1);
    fwd_gemm += fwd - f0;
    if (mlp) {
        o = est_elementwise(!gated     ? EST_OP_GELU
                            : l->eager ? EST_OP_SWIGLU_EAGER
                                       : EST_OP_SWIGLU,
                            x->act_dt, T, f / tp);
        est_add_op(x, &o, &fwd, &bwd);
        sh1f = fwd - sh_f0, sh1b = bwd - sh_b0;
        f0 = fwd;
        g_fc2 = est_add_gemm(x, T, h, f / tp, EST_GEMM_LINEAR_IN, &fwd, &bwd,
                             NULL);
        fwd_gemm += fwd - f0;
    }
    double epf = 0, epb = 0, ep_pair = 0;
    double pre_f = fwd; /* an MoE layer's forward before its dispatch */
    if (moe) {
        double disp, comb;
        est_moe_routed(x, &fwd, &bwd, &epf, &epb, &disp, &comb, &act_f);
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
            ep_pair = est_moe_overlap_a2a(
                fwd + afwd - mlp_f, bwd + abwd + rec - mlp_b, mlp_f, mlp_b,
                disp, comb, est_moe_comm_sm_share(x));
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
            double rs = est_iter_coll(x, EST_COLL_REDUCE_SCATTER, bytes,
                                      &x->tp_group);
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
            double ag = est_iter_coll(x, EST_COLL_ALLGATHER,
                                      te8 ? bytes / 2 : bytes, &x->tp_group);
            if (te8 && l->fp8_recipe == SPACE_FP8_TENSORWISE)
                tpf += 2
                       * est_iter_coll(x, EST_COLL_ALLREDUCE, 4, &x->tp_group);
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
                ag_a = est_iter_coll(x, EST_COLL_ALLGATHER, lat, &x->tp_group);
                rs_a = est_iter_coll(
                    x, EST_COLL_REDUCE_SCATTER,
                    (double)T * e
                        * (double)((m->q_lora_rank > 0 ? m->q_lora_rank : h)
                                   + m->kv_lora_rank + m->qk_rope_head_dim),
                    &x->tp_group);
            } else if (x->mla) {
                double lat = (double)T * est_dtype_bytes(x->act_dt)
                             * (double)((m->q_lora_rank > 0 ? m->q_lora_rank
                                                            : h)
                                        + m->kv_lora_rank
                                        + m->qk_rope_head_dim);
                ag_a = est_iter_coll(x, EST_COLL_ALLGATHER, lat, &x->tp_group);
                rs_a = est_iter_coll(x, EST_COLL_REDUCE_SCATTER, lat,
                                     &x->tp_group);
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
            double ar
                = est_iter_coll(x, EST_COLL_ALLREDUCE, bytes, &x->tp_group);
            tpf_mlp = SPLIT(ar, g_fc2.fwd_s, all);
            tpf = SPLIT(ar, g_o.fwd_s, all) + tpf_mlp;
            tpb = UNDER(ar, w_qkv, bwd_ov) + UNDER(ar, w_fc1, bwd_ov);
        } else {
            /* MLA without SP (a dense model: MoE needs SP with TP): the
             * up projections' input gradients all-reduced at the latents'
             * size. */
            double ar
                = est_iter_coll(x, EST_COLL_ALLREDUCE, bytes, &x->tp_group);
            double lat = (double)T * est_dtype_bytes(x->act_dt)
                         * (double)((m->q_lora_rank > 0 ? m->q_lora_rank : h)
                                    + m->kv_lora_rank);
            double ar_a
                = est_iter_coll(x, EST_COLL_ALLREDUCE, lat, &x->tp_group);
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
        int blk = l->launch_blocking;
        double gf = fwd + afwd + tpf + cpf + epf;
        double gb = bwd + abwd + tpb + cpb + epb;
        if (hl.syncs) {
            double gpre = pre_f + afwd + tpf + cpf;
            host_f = est_host_exposed(hl.pre_units * u, gpre, hl.syncs, u,
                                      blk)
                     + est_host_exposed((hl.fwd_units - hl.pre_units) * u,
                                        gf - gpre, 0, u, blk);
        } else {
            host_f = est_host_exposed(hl.fwd_units * u, gf, 0, u, blk);
        }
        double host_b = est_host_exposed(hl.bwd_units * u, gb, 0, u, blk);
        st->host += host_f + host_b;
        if (x->c->trace) {
            char shape[48];
            snprintf(shape, sizeof shape, "%.0f calls, %d sync%s, %d graph%s",
                     hl.fwd_units, hl.syncs, hl.syncs == 1 ? "" : "s",
                     hl.graphs, hl.graphs == 1 ? "" : "s");
            est_trace_add(x, "host_exposed", shape, host_f, host_b);
        }
    }
    if (l->recompute == SPACE_RECOMPUTE_FULL) {
        /* PyTorch's non-reentrant checkpoint (torchtitan's and
         * llm-foundry's full activation checkpointing, torch.utils.
         * checkpoint use_reentrant=False) stops recomputing as soon as
         * every tensor the backward needs is rebuilt
         * (set_checkpoint_early_stop, on by default since PyTorch 2.1):
         * the block's last GEMM (FC2, whose output nobody
         * saves) and residual add are not run again. Measured on an H200
         * (bench/data/block_h200, blocksample.py, llm-foundry's MPT blocks
         * 1B-70B, PyTorch 2.11): the checkpointed backward's extra time
         * 0.70-0.81 of a forward (FC2 is 0.31-0.32 of its FLOPs; the
         * smaller blocks spend more of it in attention and norms).
         * Megatron's and DeepSpeed's checkpoints rerun the whole
         * forward, as PyTorch's did before 2.1 (ckpt_full_rerun). */
        int early = (space_layout_stack(l) == SPACE_STACK_PYTORCH_EAGER
                     || space_layout_stack(l) == SPACE_STACK_PYTORCH_COMPILED)
                    && !l->ckpt_full_rerun;
        st->recompute += fwd + afwd
                         - (early && mlp ? g_fc2.fwd_s + ra.fwd_s : 0);
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
        est_op k = est_gemm(x->gemm_dt, T, kv / tp, h),
               wo = est_gemm(x->gemm_dt, T, h, q / tp);
        est_op ff = gated ? est_gemm(x->gemm_dt, T, f / tp, h)
                          : est_gemm(x->gemm_dt, T, h, f / tp);
        st->recompute += (fwd - fwd_gemm) + est_op_time(x, &k).fwd_s
                         + est_op_time(x, &wo).fwd_s
                         + est_op_time(x, &ff).fwd_s;
    }
}

/* Embedding and its collective (first stage), one micro-batch. */
void est_first_stage_extra_of(const est_iter_ctx *x, est_stage_time *st)
{
    const space_model *m = x->m;
    const space_layout *l = x->l;
    int64_t T = x->T, Tn = x->Tn, h = m->hidden, vp = x->vp;
    est_op e = est_elementwise(EST_OP_EMBEDDING, x->act_dt, T, h);
    e.n = vp / l->tp;
    e.vocab_parallel = l->tp > 1;
    est_add_op(x, &e, &st->fwd, &st->bwd);
    if (m->pos == SPACE_POS_LEARNED) {
        est_op a = est_elementwise(EST_OP_RESADD, x->act_dt, Tn, h);
        est_add_op(x, &a, &st->fwd, &st->bwd);
    }
    if (m->embed_norm) {
        est_op n = est_elementwise(x->norm, x->act_dt, Tn, h);
        est_add_op(x, &n, &st->fwd, &st->bwd);
    }
    if (l->tp > 1)
        st->tp += est_iter_coll(
            x, l->sp ? EST_COLL_REDUCE_SCATTER : EST_COLL_ALLREDUCE,
            x->act_bytes, &x->tp_group);
}

/* Final norm, LM head, loss (last stage), one micro-batch. */
void est_last_stage_extra_of(const est_iter_ctx *x, est_stage_time *st)
{
    const space_model *m = x->m;
    const space_layout *l = x->l;
    int64_t T = x->T, Tn = x->Tn, h = m->hidden, vp = x->vp;
    est_op n = est_elementwise(x->norm, x->act_dt, Tn, h);
    est_add_op(x, &n, &st->fwd, &st->bwd);
    double wg;
    est_add_gemm(x, T, vp / l->tp, h, EST_GEMM_16BIT, &st->fwd, &st->bwd, &wg);
    est_op ce = est_elementwise(EST_OP_CROSS_ENTROPY, x->act_dt, T, vp / l->tp);
    est_add_op(x, &ce, &st->fwd, &st->bwd);
    if (l->tp > 1) {
        double bytes = x->act_bytes;
        if (l->sp) { /* gather before the head, scatter its input gradient */
            st->tp += est_iter_coll(x, EST_COLL_ALLGATHER, bytes, &x->tp_group);
            st->tp += fmax(0, est_iter_coll(x, EST_COLL_REDUCE_SCATTER, bytes,
                                            &x->tp_group)
                                  - wg);
        } else {
            st->tp += fmax(0, est_iter_coll(x, EST_COLL_ALLREDUCE, bytes,
                                            &x->tp_group)
                                  - wg);
        }
        /* Vocab-parallel cross-entropy: max, sum of exponentials and the
         * target logit, each an all-reduce of T fp32 values. */
        st->tp += 3 * est_iter_coll(x, EST_COLL_ALLREDUCE, 4.0 * (double)T,
                                    &x->tp_group);
    }
}

/* The GEMM weights of one layer on this rank, as [rows, cols] in shape
 * (at most EST_LAYER_WEIGHTS), for est_te_weight_casts; returns how many.
 * *gemms: the layer's fp8 GEMMs, each with its own scaling state (a
 * grouped GEMM's experts each). A dense-FFN layer: QKV [h, q + 2 kv] (MLA:
 * its down projections, whole on every TP rank, and its up projections),
 * out [q, h], FC1 [h, f1] (gated: gate and up), FC2 [f, h]; an MoE layer:
 * the attention, its shared experts as one FFN, and its E / ep local
 * experts' FC1 and FC2, each split over ETP, as one pass each (their
 * router stays 16-bit). */
int est_layer_weights(const est_iter_ctx *x, int moe, int64_t (*shape)[2],
                      int *gemms)
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
