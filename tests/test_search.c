/*
 * test_search.c - one training iteration (estimator/iter.c) and the
 * completion of unset layout fields (search/complete.c): every option
 * moves the estimate in the physically right direction, the breakdown
 * adds up, invalid and infeasible layouts say why, and the completion is
 * the same at any thread count.
 */
#include "search.h"
#include "tp_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

static const char *builtin;
static hw_db *db;
static est_models *ops_a100, *ops_h100;
static est_comm *comm_sel, *comm_eos;
static est_ctx selene, eos;

static space_layout base_layout(void)
{
    space_layout l;
    memset(&l, 0, sizeof l);
    l.tp = 8, l.pp = 8, l.cp = 1, l.dp = 4, l.vpp = 1;
    l.mbs = 1, l.gbs = 256, l.seq = 2048, l.sp = 1;
    l.recompute = SPACE_RECOMPUTE_SELECTIVE, l.zero = SPACE_ZERO_1;
    l.dtype = HW_BF16, l.flash = 1;
    return l;
}

static const space_model *gpt175(void)
{
    tp_err e = {0};
    return space_preset_find("gpt3-175b", &e);
}

static double sum_terms(const est_breakdown *b)
{
    return b->fwd_s + b->bwd_s + b->recompute_s + b->tp_s + b->cp_s
           + b->pp_p2p_s + b->bubble_s + b->dp_s + b->ep_s + b->optimizer_s;
}

static void est(const est_ctx *c, const space_layout *l, est_result *r)
{
    est_estimate(c, gpt175(), l, r);
}

static void test_breakdown(void)
{
    space_layout l = base_layout();
    est_result r;
    est(&selene, &l, &r);
    TP_CHECK(r.feasible);
    TP_CHECK(r.iteration_s > 0);
    TP_CHECK_REL(sum_terms(&r.time), r.iteration_s, 1e-12);
    TP_CHECK(r.time.fwd_s > 0 && r.time.bwd_s > r.time.fwd_s);
    TP_CHECK(r.time.tp_s > 0 && r.time.pp_p2p_s > 0 && r.time.bubble_s > 0);
    TP_CHECK(r.mfu > 0.05 && r.mfu < 1);
    TP_CHECK_INT((int)r.gpus, 256);
    /* Backward about twice the forward (GEMM-dominated). */
    TP_CHECK(r.time.bwd_s / r.time.fwd_s > 1.5 && r.time.bwd_s / r.time.fwd_s < 2.6);
}

static void test_sensitivity(void)
{
    space_layout l = base_layout();
    est_result a, b;
    /* More TP adds TP traffic per GPU-second of compute. */
    l.pp = 16, l.tp = 4;
    est(&selene, &l, &a);
    l.pp = 8, l.tp = 8;
    est(&selene, &l, &b);
    TP_CHECK(b.time.tp_s / (b.time.fwd_s + b.time.bwd_s)
             > a.time.tp_s / (a.time.fwd_s + a.time.bwd_s));
    /* Full recompute adds about a forward pass and frees activations. */
    l = base_layout();
    l.recompute = SPACE_RECOMPUTE_NONE;
    est(&selene, &l, &a);
    l.recompute = SPACE_RECOMPUTE_FULL;
    est(&selene, &l, &b);
    TP_CHECK_REL(b.time.recompute_s, a.time.fwd_s, 0.05);
    TP_CHECK(b.iteration_s > a.iteration_s);
    TP_CHECK(b.mem.activations < a.mem.activations / 4);
    /* Partial recomputation (--recompute-method block): only the first N
     * layers of each chunk pay, 3 of the 12 per stage here; the others
     * keep their activations. Uniform groups of 2 rerun every layer. */
    est_result pr;
    l.recompute_method = SPACE_RECOMPUTE_BLOCK, l.recompute_layers = 3;
    est(&selene, &l, &pr);
    TP_CHECK_REL(pr.time.recompute_s, b.time.recompute_s / 4, 1e-9);
    TP_CHECK(pr.iteration_s < b.iteration_s);
    TP_CHECK(pr.mem.activations > b.mem.activations
             && pr.mem.activations < a.mem.activations);
    l.recompute_method = SPACE_RECOMPUTE_UNIFORM, l.recompute_layers = 2;
    est(&selene, &l, &pr);
    TP_CHECK_REL(pr.time.recompute_s, b.time.recompute_s, 1e-9);
    l.recompute_method = SPACE_RECOMPUTE_UNIFORM, l.recompute_layers = 0;
    /* Selective sits between. */
    est_result s;
    l.recompute = SPACE_RECOMPUTE_SELECTIVE;
    est(&selene, &l, &s);
    TP_CHECK(s.time.recompute_s > 0 && s.time.recompute_s < b.time.recompute_s);
    /* torchtitan's op-level checkpointing too: part of a forward again,
     * activations between none and full. */
    l.recompute = SPACE_RECOMPUTE_SELECTIVE_OP;
    est(&selene, &l, &s);
    TP_CHECK(s.time.recompute_s > 0.2 * a.time.fwd_s
             && s.time.recompute_s < 0.8 * b.time.recompute_s);
    TP_CHECK(s.mem.activations < a.mem.activations
             && s.mem.activations > b.mem.activations);
    /* More micro-batches shrink the bubble's share. */
    l = base_layout();
    est(&selene, &l, &a);
    l.gbs = 1024;
    est(&selene, &l, &b);
    TP_CHECK(b.time.bubble_s / b.iteration_s < a.time.bubble_s / a.iteration_s);
    /* Interleaving shrinks the bubble and adds point-to-point (its
     * sends not overlapped). */
    l = base_layout();
    l.gbs = 512;
    l.no_pp_overlap = 1;
    est(&selene, &l, &a);
    l.vpp = 3; /* 96 layers / (8 x 3) */
    est(&selene, &l, &b);
    TP_CHECK(b.time.bubble_s < a.time.bubble_s);
    TP_CHECK(b.time.pp_p2p_s > a.time.pp_p2p_s);
    /* Megatron-Core's overlapped interleaved sends: the steady state
     * hides them under the chunks' compute; the fill and drain do not
     * (the bubble is the same); 1F1B without interleaving is unchanged. */
    {
        est_result ov, one_ov, one;
        l.no_pp_overlap = 0;
        est(&selene, &l, &ov);
        TP_CHECK(ov.time.pp_p2p_s < b.time.pp_p2p_s);
        TP_CHECK(ov.time.fwd_s == b.time.fwd_s);
        TP_CHECK_REL(ov.time.bubble_s, b.time.bubble_s, 1e-12);
        l.vpp = 1;
        est(&selene, &l, &one_ov);
        l.no_pp_overlap = 1;
        est(&selene, &l, &one);
        TP_CHECK(one_ov.iteration_s == one.iteration_s);
    }
    /* SP: same compute GEMMs, less activation memory. */
    l = base_layout();
    l.sp = 0;
    est(&selene, &l, &a);
    l.sp = 1;
    est(&selene, &l, &b);
    TP_CHECK(b.mem.activations < a.mem.activations);
    /* The distributed optimizer shards the optimizer states and the
     * step. */
    l = base_layout();
    l.zero = SPACE_ZERO_NONE;
    est(&selene, &l, &a);
    l.zero = SPACE_ZERO_1;
    est(&selene, &l, &b);
    TP_CHECK(b.mem.optimizer < a.mem.optimizer);
    TP_CHECK(b.time.optimizer_s < a.time.optimizer_s);
    /* CP adds ring traffic and divides the attention per rank. */
    tp_err e = {0};
    const space_model *llama = space_preset_find("llama3-70b", &e);
    TP_CHECK(llama != NULL);
    l = base_layout();
    l.seq = 16384, l.gbs = 64, l.pp = 4, l.dp = 2, l.cp = 1;
    est_estimate(&selene, llama, &l, &a);
    l.dp = 1, l.cp = 2;
    est_estimate(&selene, llama, &l, &b);
    TP_CHECK(b.feasible || !fprintf(stderr, "  %s\n", b.message));
    TP_CHECK(a.time.cp_s == 0 && b.time.cp_s >= 0);
    {   /* all-gathered keys and values are not overlapped: more exposed */
        est_result g;
        space_layout ag = l;
        ag.cp_comm = SPACE_CP_ALLGATHER;
        est_estimate(&selene, llama, &ag, &g);
        TP_CHECK(g.time.cp_s > b.time.cp_s);
        /* the same attention blocks; Transformer Engine's elementwise
         * kernels differ (estimator/iter_cp.c: the gathered K and V
         * reordered, against the ring's output merges) */
        TP_CHECK(g.time.fwd_s != b.time.fwd_s);
        TP_CHECK_REL(g.time.fwd_s, b.time.fwd_s, 0.02);
    }
    TP_CHECK(b.mem.activations < a.mem.activations);
    TP_CHECK_REL(sum_terms(&b.time), b.iteration_s, 1e-12);
    /* fp8 GEMMs on H100 are faster than bf16. */
    l = base_layout();
    est(&eos, &l, &a);
    l.dtype = HW_FP8;
    est(&eos, &l, &b);
    TP_CHECK(b.time.fwd_s < a.time.fwd_s);
    /* ... but not twice as fast: the casts to fp8 and the transposes are
     * memory-bound work the bf16 GEMMs do not have. */
    TP_CHECK(b.time.fwd_s + b.time.bwd_s > 0.5 * (a.time.fwd_s + a.time.bwd_s));
    /* TP overlap: none exposes the most TP time, all the least. */
    {
        est_result n, d, al;
        l = base_layout();
        l.tp_overlap = SPACE_TP_OVERLAP_NONE;
        est(&selene, &l, &n);
        l.tp_overlap = SPACE_TP_OVERLAP_BWD;
        est(&selene, &l, &d);
        l.tp_overlap = SPACE_TP_OVERLAP_ALL;
        est(&selene, &l, &al);
        TP_CHECK(n.time.tp_s > d.time.tp_s && d.time.tp_s > al.time.tp_s);
        TP_CHECK(n.time.fwd_s == al.time.fwd_s); /* compute unchanged */
        /* DTensor TP overlaps nothing but does not re-gather inputs in
         * the backward: between Megatron's none and all; AsyncTP hides
         * more, but not the backward's reduce-scatters that all hides. */
        est_result dt, as;
        l.tp_overlap = SPACE_TP_OVERLAP_DTENSOR;
        est(&selene, &l, &dt);
        l.tp_overlap = SPACE_TP_OVERLAP_ASYNC;
        est(&selene, &l, &as);
        TP_CHECK(dt.time.tp_s < n.time.tp_s && as.time.tp_s < dt.time.tp_s);
        TP_CHECK(as.time.tp_s > al.time.tp_s);
        TP_CHECK(dt.time.fwd_s == n.time.fwd_s);
        /* under op-level checkpointing DTensor gathers the inputs again */
        est_result dt_op;
        l.tp_overlap = SPACE_TP_OVERLAP_DTENSOR;
        l.recompute = SPACE_RECOMPUTE_SELECTIVE_OP;
        est(&selene, &l, &dt_op);
        TP_CHECK(dt_op.time.tp_s > dt.time.tp_s);
    }
    /* Without SP, pipeline sends split over the TP ranks and re-gathered
     * (Megatron-LM 2021) move less over the network than whole
     * activations from every TP rank (Megatron-Core); with SP the split
     * is already there and the option changes nothing. */
    {
        est_result whole, split, sp_off, sp_on;
        l = base_layout();
        l.sp = 0;
        est(&selene, &l, &whole);
        l.pp_scatter_gather = 1;
        est(&selene, &l, &split);
        TP_CHECK(split.time.pp_p2p_s < whole.time.pp_p2p_s);
        TP_CHECK(split.time.pp_p2p_s > whole.time.pp_p2p_s / 8);
        TP_CHECK(split.time.fwd_s == whole.time.fwd_s);
        l.sp = 1;
        est(&selene, &l, &sp_on);
        l.pp_scatter_gather = 0;
        est(&selene, &l, &sp_off);
        TP_CHECK(sp_on.iteration_s == sp_off.iteration_s);
    }
    /* Unfused attention: Megatron's fused causal softmax is cheaper than
     * PyTorch's at the same shape (both fitted to A100 samples). */
    {
        est_op fused = {0}, plain = {0};
        fused.kind = EST_OP_MASKED_SOFTMAX, plain.kind = EST_OP_SOFTMAX;
        fused.dtype = plain.dtype = HW_FP16;
        fused.rows = plain.rows = 4 * 12 * 2048;
        fused.cols = plain.cols = 2048;
        est_time tf, tpl;
        TP_CHECK(est_models_time(ops_a100, &fused, &tf) == 1);
        TP_CHECK(est_models_time(ops_a100, &plain, &tpl) == 1);
        TP_CHECK(tf.fwd_s < tpl.fwd_s && tf.bwd_s < tpl.bwd_s);
    }
    /* Eager PyTorch (no torch.compile): Llama's RMSNorm, SwiGLU and RoPE
     * op by op move more memory than fused kernels; the GEMMs and the
     * communication are the same. */
    {
        est_result fused, eager;
        l = base_layout();
        l.seq = 8192, l.gbs = 64, l.pp = 4, l.dp = 8;
        est_estimate(&eos, llama, &l, &fused);
        l.eager = 1;
        est_estimate(&eos, llama, &l, &eager);
        TP_CHECK(eager.time.fwd_s > fused.time.fwd_s);
        TP_CHECK(eager.time.bwd_s > fused.time.bwd_s);
        TP_CHECK(eager.time.fwd_s < 1.5 * fused.time.fwd_s);
        TP_CHECK(eager.time.tp_s == fused.time.tp_s);
        /* GPT-3 has LayerNorm and GELU, one kernel each eager too */
        est(&selene, &l, &eager);
        l.eager = 0;
        est(&selene, &l, &fused);
        TP_CHECK(eager.iteration_s == fused.iteration_s);
    }
    /* A faster GPU is faster. */
    l = base_layout();
    est(&selene, &l, &a);
    est(&eos, &l, &b);
    TP_CHECK(b.iteration_s < a.iteration_s);
    /* ZeRO-3 without overlap: its parameter gathers are exposed too. */
    {
        est_result ov, no;
        l = base_layout();
        l.zero = SPACE_ZERO_3;
        est(&selene, &l, &ov);
        l.no_dp_overlap = 1;
        est(&selene, &l, &no);
        TP_CHECK(no.time.dp_s > ov.time.dp_s);
        TP_CHECK(no.time.fwd_s == ov.time.fwd_s);
    }
    /* ZeRO-3 under a pipeline (FSDP2 in PyTorch's pipelining) reduces
     * and gathers once per iteration, whatever the micro-batches. */
    {
        est_result few, many;
        l = base_layout();
        l.zero = SPACE_ZERO_3;
        est(&selene, &l, &few);
        l.gbs *= 4;
        est(&selene, &l, &many);
        TP_CHECK(few.time.dp_s > 0);
        TP_CHECK_REL(many.time.dp_s, few.time.dp_s, 1e-12);
    }
    /* More DP ranks at the same global batch: more exposed DP traffic
     * share, less compute per GPU. */
    l = base_layout();
    l.zero = SPACE_ZERO_NONE;
    est(&selene, &l, &a);
    l.dp = 16;
    est(&selene, &l, &b);
    TP_CHECK(b.time.fwd_s < a.time.fwd_s);
}

/* fp8 as Transformer Engine and torchao run it (estimator/iter_gemm.c:
 * te_fp8_casts and est_add_gemm). */
static void test_fp8(void)
{
    space_layout l = base_layout();
    l.dtype = HW_FP8;
    est_result te, ao, cur, bf;
    est(&eos, &l, &te);
    TP_CHECK(te.feasible);
    /* torchao casts input, weight and gradient on every micro-batch and
     * keeps no weight cache: slower than TE's fused casts. */
    l.fp8_lib = SPACE_FP8_LIB_TORCHAO;
    l.fp8_recipe = SPACE_FP8_TENSORWISE;
    est(&eos, &l, &ao);
    TP_CHECK(ao.time.fwd_s > te.time.fwd_s && ao.time.bwd_s > te.time.bwd_s);
    /* Current scaling adds amax passes to delayed scaling's casts. */
    l.fp8_lib = SPACE_FP8_LIB_TE;
    est(&eos, &l, &cur);
    TP_CHECK(cur.time.fwd_s > te.time.fwd_s && cur.time.bwd_s > te.time.bwd_s);
    /* fp8 GEMMs and casts together are still faster than bf16. */
    l = base_layout();
    est(&eos, &l, &bf);
    TP_CHECK(te.time.fwd_s < bf.time.fwd_s && te.time.bwd_s < bf.time.bwd_s);
    /* TE casts each weight once per iteration: twice the micro-batches
     * is less than twice the forward; in bf16 it is exactly twice. */
    {
        est_result a, b;
        l = base_layout();
        l.dtype = HW_FP8;
        est(&eos, &l, &a);
        l.gbs *= 2;
        est(&eos, &l, &b);
        TP_CHECK(b.time.fwd_s < 2 * a.time.fwd_s * (1 - 1e-9));
        l.dtype = HW_BF16;
        est(&eos, &l, &b);
        l.gbs /= 2;
        est(&eos, &l, &a);
        TP_CHECK_REL(b.time.fwd_s, 2 * a.time.fwd_s, 1e-12);
    }
    /* Under SP, TE gathers in fp8: less exposed TP time than bf16 with
     * nothing overlapped. */
    {
        est_result a, b;
        l = base_layout();
        l.tp_overlap = SPACE_TP_OVERLAP_NONE;
        est(&eos, &l, &a);
        l.dtype = HW_FP8;
        est(&eos, &l, &b);
        TP_CHECK(b.time.tp_s < a.time.tp_s);
    }
    /* Recipes a GPU or library lacks are refused with a reason. */
    l = base_layout();
    l.dtype = HW_FP8;
    l.fp8_recipe = SPACE_FP8_MXFP8;
    est(&eos, &l, &cur);
    TP_CHECK(!cur.feasible && cur.reason == EST_NO_FP8);
    l.fp8_recipe = SPACE_FP8_ROWWISE;
    est(&eos, &l, &cur);
    TP_CHECK(!cur.feasible && cur.reason == EST_NO_FP8);
    /* The trace lists every operator of a layer, in its pass. */
    {
        est_trace *tr = malloc(sizeof *tr);
        est_ctx c = eos;
        c.trace = tr;
        l.fp8_recipe = SPACE_FP8_DELAYED;
        est_estimate(&c, gpt175(), &l, &cur);
        int gemms = 0, weight_casts = 0, flash = 0;
        for (int i = 0; i < tr->n; i++) {
            const est_trace_row *r = &tr->row[i];
            int layer = strcmp(r->where, "layer") == 0;
            gemms += layer && strcmp(r->what, "gemm") == 0;
            flash += layer && strcmp(r->what, "flash_attn") == 0;
            weight_casts += strcmp(r->where, "iteration") == 0
                            && strcmp(r->what, "fp8_quantize_2") == 0;
        }
        TP_CHECK_INT(gemms, 4);
        TP_CHECK_INT(flash, 1);
        TP_CHECK_INT(weight_casts, 4);
        TP_CHECK_INT(tr->dropped, 0);
        TP_CHECK_REL(cur.iteration_s, te.iteration_s, 1e-12);
        free(tr);
    }
}

/* Packed sequences: attention within each document (iter.c). */
static void test_packed(void)
{
    space_layout l = base_layout();
    est_result whole, one, half, mixed;
    est(&eos, &l, &whole);
    l.n_docs = 1, l.doc_len[0] = l.seq, l.doc_share[0] = 1;
    est(&eos, &l, &one);
    TP_CHECK(one.iteration_s == whole.iteration_s); /* one document a row */
    l.doc_len[0] = l.seq / 4;
    est(&eos, &l, &half);
    TP_CHECK(half.time.fwd_s < whole.time.fwd_s);
    l.n_docs = 2, l.doc_len[1] = l.seq, l.doc_share[0] = l.doc_share[1] = 0.5;
    est(&eos, &l, &mixed);
    TP_CHECK(mixed.time.fwd_s > half.time.fwd_s
             && mixed.time.fwd_s < whole.time.fwd_s);
    /* under CP the ring still moves the whole row */
    l = base_layout();
    l.cp = 2, l.dp = 2;
    est(&eos, &l, &whole);
    l.n_docs = 1, l.doc_len[0] = l.seq / 8, l.doc_share[0] = 1;
    est(&eos, &l, &half);
    TP_CHECK(half.time.fwd_s < whole.time.fwd_s);
    TP_CHECK(half.time.cp_s >= whole.time.cp_s);
}

static void test_infeasible(void)
{
    space_layout l = base_layout();
    est_result r;
    l.tp = 5;
    est(&selene, &l, &r);
    TP_CHECK(!r.feasible);
    TP_CHECK_INT((int)r.reason, EST_INVALID_LAYOUT);
    TP_CHECK_INT((int)r.reject, SPACE_REJECT_TP_HEADS);
    TP_CHECK(strstr(r.message, "96 attention heads") != NULL);
    l = base_layout();
    l.tp = 1, l.pp = 1, l.dp = 256, l.zero = SPACE_ZERO_NONE;
    est(&selene, &l, &r);
    TP_CHECK(!r.feasible);
    TP_CHECK_INT((int)r.reason, EST_OUT_OF_MEMORY);
    TP_CHECK(strstr(r.message, "GiB more than") != NULL);
    TP_CHECK(r.iteration_s > 0); /* the time is still there */
    l = base_layout();
    l.gbs = 102;
    est(&selene, &l, &r);
    TP_CHECK_INT((int)r.reject, SPACE_REJECT_GBS);
    l = base_layout();
    l.dtype = HW_FP8;
    est(&selene, &l, &r);
    TP_CHECK_INT((int)r.reason, EST_NO_FP8);
    /* TP beyond a node is a rule unless allowed. */
    l = base_layout();
    l.tp = 16, l.pp = 4;
    est(&selene, &l, &r);
    TP_CHECK_INT((int)r.reject, SPACE_REJECT_TP_NODE);
}

static void test_complete(void)
{
    space_layout w = base_layout();
    w.tp = w.pp = w.vpp = w.mbs = w.dp = SEARCH_UNSET;
    w.sp = SEARCH_UNSET;
    w.recompute = (space_recompute)SEARCH_UNSET;
    est_result one, two;
    int64_t tried = 0, feas = 0;
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    int ok = search_complete(&selene, gpt175(), &w, 256, &one, &tried, &feas);
    TP_CHECK(ok);
    TP_CHECK(feas > 0 && tried >= feas);
#ifdef _OPENMP
    omp_set_num_threads(3);
#endif
    search_complete(&selene, gpt175(), &w, 256, &two, NULL, NULL);
    TP_CHECK(memcmp(&one, &two, sizeof one) == 0);
    /* The fastest: no layout given explicitly beats it. */
    space_layout l = base_layout();
    est_result r;
    est(&selene, &l, &r);
    TP_CHECK(!r.feasible || one.iteration_s <= r.iteration_s);
    TP_CHECK(one.layout.tp * one.layout.pp * one.layout.dp * one.layout.cp == 256);
    /* Given fields stay as given. */
    w.tp = 4;
    search_complete(&selene, gpt175(), &w, 256, &two, NULL, NULL);
    TP_CHECK_INT((int)two.layout.tp, 4);
    /* Nothing divides 7 GPUs with TP 4. */
    search_complete(&selene, gpt175(), &w, 7, &two, NULL, NULL);
    TP_CHECK(!two.feasible);
    TP_CHECK_INT((int)two.reason, EST_INVALID_LAYOUT);
}

/* Memoized operator times change no bit of an estimate, also when the
 * models of one GPU are freed and another's are opened (possibly at the
 * same address) while the memo still holds the first one's times. */
static void test_memo(void)
{
    space_layout layouts[4];
    for (int i = 0; i < 4; i++) {
        layouts[i] = base_layout();
        layouts[i].mbs = 1 << (i % 2);
        layouts[i].recompute = i < 2 ? SPACE_RECOMPUTE_FULL : SPACE_RECOMPUTE_NONE;
    }
    est_result on[4], off[4];
    tp_err e = {0};
    for (int pass = 0; pass < 2; pass++) {
        est_memo_enable(pass == 0);
        /* fresh models each pass, one GPU after the other */
        const est_ctx *cs[2] = {&eos, &selene};
        for (int g = 0; g < 2; g++) {
            est_models *ops = est_models_open(cs[g]->gpu, 0, &e);
            TP_CHECK(ops != NULL);
            if (!ops) return;
            est_ctx c = *cs[g];
            c.ops = ops;
            for (int i = 0; i < 2; i++) {
                est_result *r = pass == 0 ? &on[2 * g + i] : &off[2 * g + i];
                est_estimate(&c, gpt175(), &layouts[2 * g + i], r);
            }
            est_models_free(ops);
        }
    }
    est_memo_enable(1);
    for (int i = 0; i < 4; i++) {
        TP_CHECK(on[i].iteration_s > 0);
        TP_CHECK(memcmp(&on[i].time, &off[i].time, sizeof on[i].time) == 0);
    }
}

/* Memoized collective times change no bit of an estimate either, also
 * when one layout is timed on contexts that differ only in their tables
 * (none: the analytical model) or in their system's network (the same
 * tables beside a slower system), one after the other. */
static void test_coll_memo(void)
{
    space_layout l = base_layout();
    hw_system slow = *eos.sys;
    slow.nic_bw_bytes_per_s /= 4;
    slow.intra_bw_bytes_per_s /= 2;
    est_ctx cs[3] = {eos, eos, eos};
    cs[1].comm = NULL;
    cs[2].sys = &slow;
    est_result on[3], off[3];
    for (int pass = 0; pass < 2; pass++) {
        est_memo_enable(pass == 0);
        for (int g = 0; g < 3; g++)
            est_estimate(&cs[g], gpt175(), &l, pass == 0 ? &on[g] : &off[g]);
    }
    est_memo_enable(1);
    for (int g = 0; g < 3; g++) {
        TP_CHECK(on[g].time.dp_s > 0);
        TP_CHECK(memcmp(&on[g].time, &off[g].time, sizeof on[g].time) == 0);
    }
    /* the three are timed apart, not served from the first one's */
    TP_CHECK(memcmp(&on[1].time, &on[0].time, sizeof on[0].time) != 0);
    TP_CHECK(on[2].time.dp_s > on[0].time.dp_s);
}

/* The layer memo (estimator/iter_memo.c) leaves out of its key the
 * layout fields no layer reads: a layout that differs from another only
 * in one of them finds the other's layer in the memo, and under
 * EST_MEMO_CHECK the layer is timed again and compared. Each such field
 * changed on its own, from layouts of Megatron-Core (bf16, and fp8 for
 * its fp8 parameters) and torchtitan (its pipeline schedules). */
typedef struct blind_case {
    const char *what;
    int base;                  /* 0: bf16, 1: fp8, 2: torchtitan eager,
                                  3: PP 1 without recomputation, 4: PP 2 */
    void (*apply)(space_layout *l);
} blind_case;

static void b_dp_pp(space_layout *l) { l->pp = 4, l->dp = 8; }
static void b_vpp(space_layout *l) { l->vpp = 2; }
static void b_vpp_group(space_layout *l) { l->vpp = 2, l->mb_group = 16; }
static void b_zero0(space_layout *l) { l->zero = SPACE_ZERO_NONE; }
static void b_zero2(space_layout *l) { l->zero = SPACE_ZERO_2; }
static void b_ends(space_layout *l) { l->pp_first = 6, l->pp_last = 6; }
static void b_account(space_layout *l)
{
    l->pp_account = SPACE_PP_EMBED | SPACE_PP_LOSS;
}
static void b_layout(space_layout *l)
{
    static space_pp_layout pl;
    char why[200];
    /* 8 stages of 12 layers, the embedding first and the loss last */
    if (space_pp_layout_parse("Et*12|(t*12|)*6t*12L", &pl, why, sizeof why))
        fprintf(stderr, "  %s\n", why);
    l->pp_layout = &pl;
}
static void b_pa(space_layout *l)
{
    search_saver_apply(SEARCH_SAVER_PA_BF16, 1, gpt175(), l);
    l->main_grads_dtype = SPACE_OPT_BF16;
    l->main_params_dtype = SPACE_OPT_FP16;
}
static void b_opt_offload(space_layout *l)
{
    search_saver_apply(SEARCH_SAVER_OPT_OFFLOAD, 4, gpt175(), l);
}
static void b_act_offload(space_layout *l)
{
    l->pp = 1, l->dp = 32, l->recompute = SPACE_RECOMPUTE_NONE;
    search_saver_apply(SEARCH_SAVER_ACT_OFFLOAD, 3, gpt175(), l);
}
static void b_act_offload_none(space_layout *l)
{
    l->pp = 1, l->dp = 32, l->recompute = SPACE_RECOMPUTE_NONE;
}
static void b_off_modules(space_layout *l)
{
    l->offload_modules = SPACE_OFF_CORE_ATTN | SPACE_OFF_ATTN_PROJ;
    l->offload_fraction = 0.5;
}
static void b_fp8_params(space_layout *l)
{
    search_saver_apply(SEARCH_SAVER_FP8_PARAMS, 1, gpt175(), l);
}
static void b_schedule(space_layout *l)
{
    search_schedule_apply(SPACE_PP_ZB1P, l);
}

static void test_layer_memo(void)
{
    static const blind_case cases[] = {
        {"dp and pp", 0, b_dp_pp},
        {"vpp", 0, b_vpp},
        {"micro-batch group", 0, b_vpp_group},
        {"zero 0", 0, b_zero0},
        {"zero 2", 0, b_zero2},
        {"first and last stage", 0, b_ends},
        {"embedding and loss accounted", 4, b_account},
        {"pipeline layout", 0, b_layout},
        {"precision-aware optimizer", 0, b_pa},
        {"optimizer offload", 0, b_opt_offload},
        {"activation offload", 3, b_act_offload},
        {"offload modules", 0, b_off_modules},
        {"fp8 parameters", 1, b_fp8_params},
        {"pipeline schedule", 2, b_schedule},
    };
    est_memo_enable(EST_MEMO_CHECK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const blind_case *bc = &cases[i];
        space_layout a = base_layout();
        const est_ctx *c = &eos;
        if (bc->base == 1) a.dtype = HW_FP8;
        if (bc->base == 2) { /* eager: PyTorch's other schedules' */
            space_framework_software(SPACE_FW_TORCHTITAN, &a);
            a.eager = 1;
            a.vpp = 2; /* ZB-H1 looped over 2 chunks a rank */
        }
        if (bc->base == 3) b_act_offload_none(&a);
        if (bc->base == 4) a.pp = 2, a.dp = 16; /* 98 layers accounted */
        space_layout b = a;
        bc->apply(&b);
        TP_CHECK(memcmp(&a, &b, sizeof a) != 0);
        est_result ra, rb;
        int64_t h0, m0, h1, m1;
        est_estimate(c, gpt175(), &a, &ra);
        est_memo_checked(&h0, &m0);
        est_estimate(c, gpt175(), &b, &rb);
        est_memo_checked(&h1, &m1);
        if (h1 == h0 || m1 != m0 || !rb.iteration_s)
            fprintf(stderr, "  layer memo: %s: %s, hits %lld, mismatches %lld\n",
                    bc->what, rb.message, (long long)(h1 - h0),
                    (long long)(m1 - m0));
        TP_CHECK(rb.iteration_s > 0); /* timed: it reached its layers */
        TP_CHECK(h1 > h0);            /* and found a's in the memo */
        TP_CHECK_INT(m1, m0);
    }
    est_memo_enable(1);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_search BUILTIN\n");
        return 2;
    }
    builtin = argv[1];
    const char *dirs[] = {builtin};
    tp_err e = {0};
    db = hw_db_open_dirs(dirs, 1, &e);
    if (!db) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    const hw_system *ys = hw_find_system(db, "selene", &e);
    const hw_system *ye = hw_find_system(db, "eos", &e);
    if (!ys || !ye) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    ops_a100 = est_models_open(ys->gpu, 0, &e);
    ops_h100 = est_models_open(ye->gpu, 0, &e);
    comm_sel = est_comm_open(ys, &e);
    comm_eos = est_comm_open(ye, &e);
    if (!ops_a100 || !ops_h100 || !comm_sel || !comm_eos) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    selene = (est_ctx){ys, ys->gpu, ops_a100, comm_sel, 0, 0, NULL};
    eos = (est_ctx){ye, ye->gpu, ops_h100, comm_eos, 0, 0, NULL};
    TP_RUN(test_breakdown);
    TP_RUN(test_sensitivity);
    TP_RUN(test_fp8);
    TP_RUN(test_packed);
    TP_RUN(test_infeasible);
    TP_RUN(test_complete);
    TP_RUN(test_memo);
    TP_RUN(test_coll_memo);
    TP_RUN(test_layer_memo);
    est_models_free(ops_a100);
    est_models_free(ops_h100);
    est_comm_free(comm_sel);
    est_comm_free(comm_eos);
    hw_db_free(db);
    return TP_TEST_EXIT();
}
