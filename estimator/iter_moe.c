/*
 * iter_moe.c - the time of an MoE layer's routed experts, one micro-batch,
 * per rank (est_moe_routed): router, permutations, dispatch and combine
 * over the expert grid (all-to-all, all-gather, DeepEP), the grouped
 * expert GEMMs; the 1F1B A2A overlap of dispatch and combine with another
 * micro-batch (est_moe_overlap_a2a) and the SMs the communication holds.
 * The layer around them (attention, shared experts, TP) is
 * iter_layer.c's; the expert grid, parameters and imbalance are moe.c's.
 *
 * MoE (as Megatron-Core with Transformer Engine runs it; est_moe_routed and
 * moe.c): each pipeline stage's dense-FFN and MoE layers are timed
 * apart; an MoE layer has the router, the token permutations, the
 * dispatch and combine over the expert grid (all-to-all, all-gather or
 * DeepEP, exposed: est_breakdown.ep_s, less what l->moe_comm_overlap
 * hides under the shared experts or, in the combined 1F1B schedule,
 * under another micro-batch's compute), the grouped expert GEMMs at the
 * busiest EP rank's tokens (the imbalance factor), the shared experts as
 * a TP-sharded dense FFN; the routed experts' gradients reduce over the
 * expert data-parallel group, the rest over DP x CP. MLA (mla_qkv) and
 * sliding windows (est_window_scale) change the attention block; DeepSeek's
 * MTP modules add a layer, a projection and a second head pass on the
 * last stage. fp8 (Transformer Engine, every recipe) runs MLA's
 * projections, the shared experts and the grouped expert GEMMs in fp8
 * with their casts, the expert rows padded for fp8 (est_grouped_gemm,
 * fp8_expert_rows), each expert's weight cast once per iteration
 * (est_layer_weights); the router and the dispatch stay 16-bit. Refused by
 * name (EST_MOE): MoE or MLA under another framework, with nvfp4, with
 * torchao's fp8, or with op-level checkpointing; a
 * capacity factor caps the busiest expert's load (est_moe_imbalance);
 * expert grids Megatron-Core refuses: EST_MOE_LAYOUT.
 */

#include "est_int.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

/* DeepEP's normal kernels move the tokens between nodes with their own
 * RDMA writes (NVSHMEM / IBGDA), each GPU through its own NIC, not through
 * NCCL's protocols (no LL128 payload share, no per-peer step latency). Its
 * benchmark (deepseek-ai/DeepEP docs/legacy.md, "Normal kernels with
 * NVLink and RDMA forwarding", @dd758ca; H800 with one CX7 400 Gb/s NIC,
 * ~50 GB/s, per GPU; 4096 tokens of 7168, top-8) prints 58 GB/s (EP 32)
 * and 51 GB/s (EP 64) of "RDMA" bandwidth for the dispatch, 57 and 50 for
 * the combine. tests/legacy/test_internode.py counts those bytes as each
 * token times the nodes it reaches, its own node included
 * (num_rdma_token_sent over rdma_idx), so the bytes on the wire are
 * (M - 1) / M of them under its uniform scores: 58 x 3/4 = 43.5 and 51 x
 * 7/8 = 44.6 GB/s, 0.87 and 0.89 of the NIC's line rate. (EP 16's 43 GB/s,
 * 21.5 on the wire, is bound by something else, read here as its NVLink
 * forwarding to ~6 of the 16 ranks a token, which deepep_time times
 * apart.) */
#define EST_DEEPEP_RDMA_SHARE 0.88

/* Megatron-Core's unfused token permutation accumulates with atomic adds
 * in two of its four passes (moe_utils.py, NVIDIA/Megatron-LM@
 * d98e8a64ddf3: permute gathers with tokens.index_select, whose gradient
 * is an index_add_ into zeros; unpermute is output_tokens.scatter_add_
 * into zeros, its gradient a gather). PyTorch runs both as atomic adds of
 * 16-bit rows (indexFuncLargeIndex, _scatter_gather_elementwise_kernel),
 * far below the bandwidth a gather gets. Measured on an H200 (bench/data/
 * moe_h200/breakdown.csv, torch 2.11, three shapes from 33 M to 940 M
 * added elements, each within 3 % of the mean): index_add_ 0.244 TB/s,
 * scatter_add_ 0.533 TB/s of the rows added, 0.051 and 0.111 of the
 * H200's 4.8 TB/s; taken as those shares of any GPU's HBM bandwidth (an
 * assumption: the atomics run in L2, whose rate no GPU elsewhere in
 * hwdb has measured). */
#define EST_INDEX_ADD_HBM_SHARE 0.051
#define EST_SCATTER_ADD_HBM_SHARE 0.111
/* a kernel's launch and ramp, as op.c's roofline floor */
#define EST_ATOMIC_FLOOR_S 3e-6

/* The unfused permutation's atomic passes: the time of adding rows x h
 * elements of e bytes into a zeroed [tokens, h] at share of HBM
 * bandwidth, plus the zeroing (a fill at op.c's 0.9 of it) and the two
 * kernels' floors, scaled by the kernel efficiency as fitted times are. */
static double atomic_add_s(const est_iter_ctx *x, int64_t rows,
                           int64_t tokens, int64_t h, double e,
                           double share)
{
    double bw = x->c->gpu->mem_bw_bytes_per_s;
    double t = (double)rows * (double)h * e / (bw * share)
               + (double)tokens * (double)h * e / (bw * 0.9)
               + 2 * EST_ATOMIC_FLOOR_S;
    return t / x->eff;
}

/* Adds a permutation op named what; where unfused (atomic_s > 0), its
 * atomic pass (pass 0 forward, 1 backward) takes atomic_s in place of the
 * gather. */
static void add_permutation(const est_iter_ctx *x, const est_op *perm,
                            const char *what, int atomic_pass,
                            double atomic_s, double *fwd, double *bwd)
{
    int n0 = est_trace_mark(x);
    est_time t = est_op_time(x, perm);
    if (atomic_s > 0) *(atomic_pass ? &t.bwd_s : &t.fwd_s) = atomic_s;
    est_trace_row *r = est_trace_added(x, n0);
    if (r) {
        snprintf(r->what, sizeof r->what, "%s", what);
        r->fwd_s = t.fwd_s, r->bwd_s = t.bwd_s;
    }
    *fwd += t.fwd_s;
    *bwd += t.bwd_s;
}

double est_deepep_rdma_s(const hw_system *y, double wire_bytes)
{
    int gpn = y->gpus_per_node > 0 ? y->gpus_per_node : 1;
    double nics = (double)y->nics_per_node / gpn;
    if (nics > 1) nics = 1; /* one NIC a GPU (the rail it sits on) */
    double bw = EST_DEEPEP_RDMA_SHARE * nics * y->nic_bw_bytes_per_s;
    return wire_bytes > 0 && bw > 0 ? wire_bytes / bw : 0;
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
 * routing, arXiv 2412.19437 section 2.1.2) caps the domains. The network
 * part runs at DeepEP's own measured RDMA rate (est_deepep_rdma_s); the
 * NVLink part is timed as an all-to-all whose scale-up part moves exactly
 * those bytes (comm.c's pairwise model, in which a rank's input buffer
 * includes its own share, as the all-to-all dispatcher's does). */
static double deepep_time(const est_iter_ctx *x, int64_t Tr, double imb)
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
    if (M <= 1) return est_iter_coll(x, EST_COLL_ALLTOALL, tok * ranks, g);
    double doms = (double)M * (1 - pow(1 - 1 / (double)M, k));
    if (m->router_groups > 0 && m->router_topk_groups > 0) {
        double G = (double)m->router_groups, Gk = (double)m->router_topk_groups;
        double cap = G >= M ? fmin(Gk, (double)M) : Gk * (double)M / G;
        doms = fmin(doms, cap);
    }
    double cross = tok * doms * (double)(M - 1) / (double)M;
    double t_net = est_deepep_rdma_s(y, cross);
    if (x->c->trace) {
        char shape[48];
        snprintf(shape, sizeof shape, "%.4g MB over %dx%d", cross / 1e6,
                 g->nodes, g->per_node);
        est_trace_add(x, "deepep_rdma", shape, t_net, 0);
    }
    double t_su = 0;
    if (q > 1) {
        est_group dom = est_place(q, 1, gpn);
        dom.node_busy = g->node_busy;
        t_su = est_iter_coll(x, EST_COLL_ALLTOALL, tok * ranks, &dom);
    }
    return fmax(t_net, t_su);
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
static int64_t fp8_expert_rows(const est_iter_ctx *x, int64_t nle, int64_t rows,
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
 *    are est_layer_time's and est_moe_overlap_a2a's;
 *  - fp8 (Transformer Engine): the grouped GEMMs in fp8 over padded rows
 *    (est_grouped_gemm, fp8_expert_rows), the padding and unpadding copies
 *    of the [rows, h] input and output each way; the router GEMM stays
 *    16-bit (router.py gating: router_gating_linear in the input's dtype,
 *    not an fp8 layer); the dispatch moves 16-bit tokens (no fp8
 *    dispatch modelled). */
void est_moe_routed(const est_iter_ctx *x, double *fwd, double *bwd,
                    double *ep_f, double *ep_b, double *disp, double *comb,
                    double *act_f)
{
    const space_model *m = x->m;
    const space_layout *l = x->l;
    int64_t h = m->hidden, E = m->num_experts, k = m->top_k;
    int64_t ep = x->ep, etp = x->etp, nle = E / ep;
    int64_t fe = m->expert_ffn_hidden / etp, Tr = x->Tn;
    int gated = space_act_ffn_gemms(m->act) == 3;
    double imb = ep > 1 ? x->imb : 1, e = est_dtype_bytes(x->act_dt);
    est_add_gemm(x, Tr, E, h, EST_GEMM_16BIT, fwd, bwd, NULL);
    est_op o = est_elementwise(l->moe_router_fusion ? EST_OP_ROUTER_FUSED
                                                    : EST_OP_ROUTER,
                               x->act_dt, Tr, E);
    est_add_named(x, &o, "moe_route", fwd, bwd);
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
        est_op perm = est_elementwise(EST_OP_PERMUTE, x->act_dt, Tr * k, h);
        int unfused = !l->moe_permute_fusion;
        add_permutation(x, &perm, "moe_permute", 1,
                        unfused ? atomic_add_s(x, Tr * k, Tr, h, e,
                                               EST_INDEX_ADD_HBM_SHARE)
                                : 0,
                        fwd, bwd);
        add_permutation(x, &perm, "moe_unpermute", 0,
                        unfused ? atomic_add_s(x, Tr * k, Tr, h, e,
                                               EST_SCATTER_ADD_HBM_SHARE)
                                : 0,
                        fwd, bwd);
    }
    double sent = (double)(Tr * k) * (double)h * e;
    double rows = (double)etp * (double)(Tr * k) * imb;
    /* dispatch, combine, and their sum in the order the exposed time
     * always had (the same bits as before the split) */
    double d = 0, cb = 0, comm = 0;
    if (l->moe_dispatcher == SPACE_MOE_ALLGATHER) {
        double all = (double)(etp * ep * Tr);
        d = est_iter_coll(x, EST_COLL_ALLGATHER, all * (double)h * e,
                          &x->eptp_group)
            + est_iter_coll(x, EST_COLL_ALLGATHER, all * (double)E * 5,
                            &x->eptp_group);
        cb = est_iter_coll(x, EST_COLL_REDUCE_SCATTER, all * (double)h * e,
                           &x->eptp_group);
        comm = d + cb;
    } else if (l->moe_dispatcher == SPACE_MOE_FLEX) {
        d = cb = deepep_time(x, Tr, imb);
        comm = 2 * d;
    } else {
        double a2a
            = est_iter_coll(x, EST_COLL_ALLTOALL, sent * imb, &x->ep_group);
        double pr = est_iter_coll(x, EST_COLL_ALLTOALL,
                                  (double)(Tr * k) * 4 * imb, &x->ep_group);
        d = a2a + pr, cb = a2a;
        comm = 2 * a2a + pr;
        if (etp > 1) {
            double ag = est_iter_coll(x, EST_COLL_ALLGATHER,
                                      (double)etp * sent * imb, &x->etp_group);
            double rs = est_iter_coll(x, EST_COLL_REDUCE_SCATTER,
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
        est_op sort
            = est_elementwise(EST_OP_PERMUTE, x->act_dt, nle * mrows, h);
        est_add_named(x, &sort, "moe_sort", fwd, bwd);
        est_add_named(x, &sort, "moe_unsort", fwd, bwd);
    }
    int copy = 0;
    if (x->gemm_dt == HW_FP8) {
        int64_t prow = fp8_expert_rows(x, nle, mrows, &copy);
        if (copy) {
            est_op pad
                = est_elementwise(EST_OP_PERMUTE, x->act_dt, nle * mrows, h);
            est_add_named(x, &pad, "moe_fp8_pad", fwd, bwd);
        }
        mrows = prow;
    }
    est_grouped_gemm(x, nle, mrows, (gated ? 2 : 1) * fe, h, fwd, bwd);
    o = est_elementwise(gated ? EST_OP_SWIGLU : EST_OP_GELU, x->act_dt,
                        nle * mrows, fe);
    double a0 = *fwd;
    est_add_op(x, &o, fwd, bwd);
    *act_f = *fwd - a0;
    est_grouped_gemm(x, nle, mrows, h, fe, fwd, bwd);
    if (copy) {
        est_op unpad
            = est_elementwise(EST_OP_PERMUTE, x->act_dt, nle * mrows, h);
        est_add_named(x, &unpad, "moe_fp8_unpad", fwd, bwd);
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
 * hold sm_share of the GPU's SMs while they run (est_moe_comm_sm_share): the
 * compute beside them runs on the rest, so work C beside communication c
 * (c <= C / (1 - sm_share)) ends at C + sm_share c instead of C; each
 * hidden second of dispatch or combine costs sm_share seconds. Not
 * modelled: that the router and the permutations sit in the attention
 * side's node (counted with the MoE block here). Returns the exposed time
 * with that slowdown, >= 0, at most disp + comb each way. */
double est_moe_overlap_a2a(double attn_f, double attn_b, double mlp_f,
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
double est_moe_comm_sm_share(const est_iter_ctx *x)
{
    const space_layout *l = x->l;
    int sms = x->c->gpu ? x->c->gpu->sm_count : 0;
    if (l->moe_dispatcher != SPACE_MOE_FLEX || sms <= 0) return 0;
    double used = l->moe_flex_backend == SPACE_MOE_FLEX_HYBRIDEP ? 24 : 20;
    return fmin(1, used / (double)sms);
}
