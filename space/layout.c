/*
 * layout.c - which layouts are valid: the rules Megatron-LM enforces on a
 * model and a parallel layout, one row of a table each, so a rejected
 * layout always has a reason code that can be counted and explained.
 *
 * Mixture of experts, Megatron-Core's parallel folding (Liu et al., "MoE
 * Parallel Folding", arXiv 2504.14960; NVIDIA/Megatron-LM@d98e8a64ddf3,
 * 2026-08-22): expert parallelism only with experts (arguments.py
 * validate_args: "num_experts must be non None to use expert model
 * parallelism"), the experts divisible by EP (same place, and
 * moe_layer.py MoELayer.__init__); the expert grid etp x ep x edp x pp
 * must tile the world (parallel_state.py initialize_model_parallel:
 * "world_size is not divisible by expert_tensor_model_pipeline_parallel
 * size"), i.e. etp x ep divides a stage's tp x cp x dp ranks; training an
 * MoE layer with TP > 1 needs sequence parallelism (moe_layer.py
 * MoELayer.forward raises "performance may degrade if MoE and tensor
 * parallelism are enabled without also enabling sequence parallelism");
 * the flex dispatcher's DeepEP backend needs expert TP x EP > 1
 * (token_dispatcher.py MoEFlexTokenDispatcher: "DeepEP dispatcher requires
 * TPxEP > 1"). Expert TP within a node is the planning rule TP has.
 *
 * Sources (Megatron-LM, megatron/training/arguments.py validate_args and
 * megatron/core/pipeline_parallel/schedules.py, read at core_r0.8.0):
 * attention heads and query groups divisible by TP; the pipeline split
 * Megatron-Core can build (split.c: its rules and their sources, read at
 * NVIDIA/Megatron-LM@d98e8a64ddf3); global batch divisible by micro-batch
 * x DP;
 * interleaving needs PP > 1 and micro-batches a multiple of PP (the
 * interleaved schedule's assertion through core_r0.8); sequence length
 * divisible by 2 x CP (load-balanced causal chunks) and, with sequence
 * parallelism, the CP shard divisible by TP. TP within one node is a
 * planning rule, not Megatron's: TP traffic crosses the network on every
 * layer otherwise.
 *
 * Does not check the hardware (memory, fp8 support): the estimator does.
 */
#include "space.h"

#include <stdio.h>

#include "hw.h"

#include <string.h>

const char *const space_reject_names[SPACE_REJECT_COUNT] = {
    [SPACE_OK] = "ok",
    [SPACE_REJECT_SIZES] = "bad_sizes",
    [SPACE_REJECT_TP_HEADS] = "tp_heads",
    [SPACE_REJECT_TP_KV_HEADS] = "tp_kv_heads",
    [SPACE_REJECT_TP_NODE] = "tp_beyond_node",
    [SPACE_REJECT_PP_CHUNKS] = "pp_chunks",
    [SPACE_REJECT_SPLIT_CONFLICT] = "split_conflict",
    [SPACE_REJECT_PP_LAYERS] = "pp_layers",
    [SPACE_REJECT_VPP_LAYERS] = "vpp_layers",
    [SPACE_REJECT_END_VPP] = "end_layers_vpp",
    [SPACE_REJECT_MIDDLE] = "middle_layers",
    [SPACE_REJECT_MIDDLE_VPP] = "middle_layers_vpp",
    [SPACE_REJECT_LAYOUT_STAGES] = "layout_stages",
    [SPACE_REJECT_LAYOUT_VPP] = "layout_vpp",
    [SPACE_REJECT_LAYOUT_LAYERS] = "layout_layers",
    [SPACE_REJECT_LAYOUT_MTP] = "layout_mtp",
    [SPACE_REJECT_VPP] = "vpp_needs_pp",
    [SPACE_REJECT_VPP_MICRO] = "vpp_micro_batches",
    [SPACE_REJECT_GBS] = "gbs_divisibility",
    [SPACE_REJECT_CP_SEQ] = "cp_seq",
    [SPACE_REJECT_SP_SEQ] = "sp_seq",
    [SPACE_REJECT_SEQ_POSITIONS] = "seq_beyond_positions",
    [SPACE_REJECT_VPP_PP2] = "vpp_no_overlap_pp2",
    [SPACE_REJECT_TP_OVERLAP_SP] = "tp_overlap_needs_sp",
    [SPACE_REJECT_PP_SCHEDULE] = "pp_schedule",
    [SPACE_REJECT_FP8_PARAMS] = "fp8_params_need_zero",
    [SPACE_REJECT_EP_DENSE] = "ep_needs_moe",
    [SPACE_REJECT_EP_EXPERTS] = "ep_experts",
    [SPACE_REJECT_EP_RANKS] = "ep_etp_ranks",
    [SPACE_REJECT_ETP_NODE] = "etp_beyond_node",
    [SPACE_REJECT_FLEX_EP] = "flex_needs_ep",
    [SPACE_REJECT_MOE_SP] = "moe_tp_needs_sp",
    [SPACE_REJECT_GPUS] = "gpus_divisibility",
    [SPACE_REJECT_ETP_TP] = "etp_is_tp",
    [SPACE_REJECT_SP_TP1] = "sp_needs_tp",
    [SPACE_REJECT_ZERO_DP1] = "zero_needs_dp",
    [SPACE_REJECT_SPLIT_NONE] = "no_ends_split",
    [SPACE_REJECT_SPLIT_SAME] = "same_split",
};
_Static_assert(sizeof space_reject_names / sizeof space_reject_names[0]
                   == SPACE_REJECT_COUNT,
               "space_reject_names names every space_reject");

space_reject space_layout_split_check(const space_model *m,
                                      const space_layout *l, char *why,
                                      size_t cap)
{
    int64_t pp = l->pp, v = l->vpp;
    if (cap) why[0] = '\0';
    if (v > 1 && pp < 2) {
        if (cap)
            snprintf(why, cap, "virtual pipeline stages (%lld) need PP > 1",
                     (long long)v);
        return SPACE_REJECT_VPP;
    }
    /* More model chunks than the layers and the embedding and loss can
     * give a slot each: every split Megatron-Core computes refuses it (a
     * layout string may leave stages empty; split.c judges that). Read
     * from PP and VPP alone, so the search rejects the splits at once. */
    if (!l->pp_layout && pp * v > m->num_layers + 2) {
        if (cap)
            snprintf(why, cap,
                     "PP %lld x VPP %lld model chunks for %lld layers: no "
                     "split gives each chunk a layer (the embedding and the "
                     "loss counted too)",
                     (long long)pp, (long long)v, (long long)m->num_layers);
        return SPACE_REJECT_PP_CHUNKS;
    }
    /* The pipeline split: Megatron-Core's rules (split.c). */
    space_split s;
    return space_split_resolve(m, l, &s, why, cap);
}

space_reject space_layout_check(const space_model *m, const space_layout *l,
                                int gpus_per_node, char *why, size_t cap)
{
    int64_t tp = l->tp, pp = l->pp, cp = l->cp, dp = l->dp;
    int64_t v = l->vpp;
#define REJECT(code, ...)                                                     \
    do {                                                                      \
        if (cap) snprintf(why, cap, __VA_ARGS__);                             \
        return code;                                                          \
    } while (0)
    if (cap) why[0] = '\0';
    if (tp < 1 || pp < 1 || cp < 1 || dp < 1 || v < 1 || l->mbs < 1
        || l->gbs < 1 || l->seq < 1)
        REJECT(SPACE_REJECT_SIZES,
               "every size must be at least 1 (tp %lld, pp %lld, cp %lld, dp "
               "%lld, vpp %lld, micro-batch %lld, global batch %lld, "
               "sequence %lld)",
               (long long)tp, (long long)pp, (long long)cp, (long long)dp,
               (long long)v, (long long)l->mbs, (long long)l->gbs,
               (long long)l->seq);
    if (m->heads % tp)
        REJECT(SPACE_REJECT_TP_HEADS,
               "%lld attention heads are not divisible by TP %lld",
               (long long)m->heads, (long long)tp);
    if (m->kv_heads % tp)
        REJECT(SPACE_REJECT_TP_KV_HEADS,
               "%lld key/value heads (query groups) are not divisible by TP "
               "%lld",
               (long long)m->kv_heads, (long long)tp);
    if (gpus_per_node > 0 && tp > gpus_per_node)
        REJECT(SPACE_REJECT_TP_NODE,
               "TP %lld spans more than a node of %d GPUs", (long long)tp,
               gpus_per_node);
    /* Megatron-LM places a TP group's ranks next to each other: a size
     * that does not divide the node puts some groups across two nodes,
     * which the estimate would price at the node's link speed. */
    if (gpus_per_node > 0 && gpus_per_node % tp)
        REJECT(SPACE_REJECT_TP_NODE,
               "TP %lld does not divide the %d GPUs of a node: some TP "
               "groups would span two nodes", (long long)tp, gpus_per_node);
    /* Mixture of experts: the order is search/scan.c's check_order (the rules
     * that read only TP, PP, CP, EP and ETP come before those that read
     * the later fields of the grid). */
    int64_t ep = space_layout_ep(l), etp = space_layout_etp(l);
    if (m->num_experts <= 0 && (ep > 1 || etp != tp))
        REJECT(SPACE_REJECT_EP_DENSE,
               "expert parallelism (EP %lld, expert TP %lld) needs a mixture "
               "of experts; %s is dense (Megatron-LM validate_args)",
               (long long)ep, (long long)etp, m->name);
    if (m->num_experts > 0 && m->num_experts % ep)
        REJECT(SPACE_REJECT_EP_EXPERTS,
               "%lld experts are not divisible by EP %lld",
               (long long)m->num_experts, (long long)ep);
    if (m->num_experts > 0 && (etp < 1 || (tp * cp * dp) % (etp * ep)))
        REJECT(SPACE_REJECT_EP_RANKS,
               "expert TP %lld x EP %lld does not divide a stage's TP %lld x "
               "CP %lld x DP %lld ranks (Megatron-Core parallel_state: the "
               "expert grid must tile the world)",
               (long long)etp, (long long)ep, (long long)tp, (long long)cp,
               (long long)dp);
    if (m->num_experts > 0 && gpus_per_node > 0
        && (etp > gpus_per_node || gpus_per_node % etp))
        REJECT(SPACE_REJECT_ETP_NODE,
               "expert TP %lld does not fit in or divide a node of %d GPUs",
               (long long)etp, gpus_per_node);
    if (m->num_experts > 0 && l->moe_dispatcher == SPACE_MOE_FLEX
        && etp * ep < 2)
        REJECT(SPACE_REJECT_FLEX_EP,
               "the flex dispatcher (DeepEP) needs expert TP x EP > 1, found "
               "%lld x %lld (Megatron-Core token_dispatcher.py)",
               (long long)etp, (long long)ep);
    /* VPP and the pipeline split (space_layout_split_check) */
    {
        space_reject rs = space_layout_split_check(m, l, why, cap);
        if (rs != SPACE_OK) return rs;
    }
    /* Megatron-LM validate_args (megatron/training/arguments.py,
     * NVIDIA/Megatron-LM@d98e8a6): the interleaved schedule without p2p
     * overlap needs PP > 2 (two ranks would post several sends and
     * receives to each other in one batch). Megatron-Core only: the other
     * frameworks' pipelines have no such rule. */
    if (v > 1 && pp == 2 && l->no_pp_overlap
        && l->framework == SPACE_FW_MEGATRON_CORE)
        REJECT(SPACE_REJECT_VPP_PP2,
               "Megatron-Core's interleaved schedule without p2p overlap "
               "needs PP > 2 (validate_args), found PP 2");
    if (l->gbs % (l->mbs * dp))
        REJECT(SPACE_REJECT_GBS,
               "global batch %lld is not divisible by micro-batch %lld x DP "
               "%lld",
               (long long)l->gbs, (long long)l->mbs, (long long)dp);
    int64_t micro = l->gbs / (l->mbs * dp);
    /* (the V schedules have no such rule: ScheduleZBVZeroBubble,
     * ScheduleDualPipeV) */
    if (v > 1 && l->mb_group <= 0 && micro % pp && !space_pp_schedule_v(l))
        REJECT(SPACE_REJECT_VPP_MICRO,
               "the interleaved schedule needs micro-batches (%lld) to be a "
               "multiple of PP %lld",
               (long long)micro, (long long)pp);
    /* With micro-batch groups of N (--microbatch-group-size-per-virtual-
     * pipeline-stage): PP <= N <= micro-batches, and a last group of 0 or
     * at least PP (schedules.py, forward_backward_pipelining_with_
     * interleaving, NVIDIA/Megatron-LM@d98e8a64ddf3); N = PP is the rule
     * above. */
    if (v > 1 && l->mb_group > 0
        && (l->mb_group < pp || l->mb_group > micro
            || (micro % l->mb_group && micro % l->mb_group < pp)))
        REJECT(SPACE_REJECT_VPP_MICRO,
               "the interleaved schedule with micro-batch groups of %lld "
               "needs PP %lld <= %lld <= micro-batches (%lld) and a last "
               "group of 0 or at least PP (%lld left)",
               (long long)l->mb_group, (long long)pp, (long long)l->mb_group,
               (long long)micro, (long long)(micro % l->mb_group));
    /* The schedules' own rules (space_pp_schedule), as their code checks
     * them. Megatron-Core runs none of them (NVIDIA/Megatron-LM@
     * d98e8a64ddf3 megatron/core/pipeline_parallel/schedules.py
     * get_forward_backward_func: 1F1B and interleaving; its
     * --delay-wgrad-compute serves the combined 1F1B A2A overlap only):
     * its launch writers and readers refuse them by name, while the
     * estimate times them on any framework's kernels (DeepSeek's HAI-LLM
     * runs are estimated on Megatron-Core's). */
    if (l->pp_schedule != SPACE_PP_1F1B) {
        int s = l->pp_schedule;
        const char *name = (unsigned)s < SPACE_PP_SCHEDULE_COUNT
                               ? space_pp_schedule_names[s]
                               : "?";
        if ((unsigned)s >= SPACE_PP_SCHEDULE_COUNT)
            REJECT(SPACE_REJECT_PP_SCHEDULE, "pipeline schedule %d unknown",
                   s);
        if (pp < 2)
            REJECT(SPACE_REJECT_PP_SCHEDULE,
                   "the %s pipeline schedule needs PP > 1, found PP %lld",
                   name, (long long)pp);
        /* PyTorch's three refuse stage modules that used torch.compile
         * ("not supported with stage modules that have used
         * torch.compile", _check_torch_compile_compatibility,
         * pytorch/pytorch@00722e648b74 schedules.py); torchtitan compiles
         * per block, inside the stages. */
        if (s != SPACE_PP_DUALPIPE && l->framework == SPACE_FW_TORCHTITAN
            && !l->eager)
            REJECT(SPACE_REJECT_PP_SCHEDULE,
                   "PyTorch's %s schedule refuses compiled stages "
                   "(_check_torch_compile_compatibility): torchtitan runs it "
                   "with --eager (compile off)",
                   name);
        /* torchtitan builds every schedule but 1F1B looped, with 2 or
         * more stages a rank (distributed/pipeline_parallel.py,
         * _get_pipeline_metadata, pytorch/torchtitan@b5bcd76c66d0). */
        if (s == SPACE_PP_ZB1P && l->framework == SPACE_FW_TORCHTITAN
            && v < 2)
            REJECT(SPACE_REJECT_PP_SCHEDULE,
                   "torchtitan runs zb1p (InterleavedZeroBubble) as a looped "
                   "schedule: 2 or more virtual stages a rank, found %lld",
                   (long long)v);
        /* ScheduleZBVZeroBubble and ScheduleDualPipeV: "requires exactly
         * 2 stages per rank"; DualPipeV also n_microbatches >= stages
         * (pytorch/pytorch@00722e648b74 schedules.py). */
        if ((s == SPACE_PP_ZBV || s == SPACE_PP_DUALPIPEV) && v != 2)
            REJECT(SPACE_REJECT_PP_SCHEDULE,
                   "the %s schedule runs exactly 2 virtual stages a rank, "
                   "found %lld",
                   name, (long long)v);
        int64_t mi = micro;
        if (s == SPACE_PP_DUALPIPEV && mi < 2 * pp)
            REJECT(SPACE_REJECT_PP_SCHEDULE,
                   "DualPipeV needs micro-batches (%lld) >= its 2 x PP = "
                   "%lld stages (ScheduleDualPipeV)",
                   (long long)mi, (long long)(2 * pp));
        /* DualPipe.step: num_ranks even, num_chunks even and >= 2 x
         * num_ranks; one module pair a rank (deepseek-ai/DualPipe@
         * bb214e82 dualpipe/dualpipe.py). */
        if (s == SPACE_PP_DUALPIPE
            && (v != 1 || pp % 2 || mi % 2 || mi < 2 * pp))
            REJECT(SPACE_REJECT_PP_SCHEDULE,
                   "DualPipe needs one stage pair a rank (VPP 1, found %lld), "
                   "an even PP (found %lld) and an even number of "
                   "micro-batches >= 2 x PP (found %lld; DualPipe.step)",
                   (long long)v, (long long)pp, (long long)mi);
    }
    if (cp > 1 && l->seq % (2 * cp))
        REJECT(SPACE_REJECT_CP_SEQ,
               "sequence %lld is not divisible by 2 x CP %lld",
               (long long)l->seq, (long long)cp);
    if (l->sp && tp > 1 && (l->seq / cp) % tp)
        REJECT(SPACE_REJECT_SP_SEQ,
               "with sequence parallelism the sequence per CP rank (%lld) "
               "must be divisible by TP %lld",
               (long long)(l->seq / cp), (long long)tp);
    if (m->num_experts > 0 && tp > 1 && !l->sp)
        REJECT(SPACE_REJECT_MOE_SP,
               "an MoE model with TP %lld trains only with sequence "
               "parallelism (Megatron-Core MoELayer.forward)",
               (long long)tp);
    if (m->pos == SPACE_POS_LEARNED && m->max_position > 0
        && l->seq > m->max_position)
        REJECT(SPACE_REJECT_SEQ_POSITIONS,
               "sequence %lld is longer than the model's %lld learned "
               "positions",
               (long long)l->seq, (long long)m->max_position);
    /* validate_args (d98e8a6): "Tensor parallel communication/GEMM
     * overlap can happen only when sequence parallelism is enabled" */
    if (tp > 1 && !l->sp && l->tp_overlap == SPACE_TP_OVERLAP_ALL)
        REJECT(SPACE_REJECT_TP_OVERLAP_SP,
               "overlapping every TP collective (--tp-comm-overlap) needs "
               "sequence parallelism (Megatron-LM validate_args), TP %lld "
               "without it", (long long)tp);
    /* validate_args (d98e8a6): --fp8-param-gather only with the
     * distributed optimizer or FSDP */
    if (l->fp8_params && l->dtype == HW_FP8 && l->zero == SPACE_ZERO_NONE)
        REJECT(SPACE_REJECT_FP8_PARAMS,
               "fp8 parameters (--fp8-param-gather) need the distributed "
               "optimizer or FSDP (ZeRO 1 to 3; Megatron-LM validate_args)");
#undef REJECT
    return SPACE_OK;
}

int space_fp8_attention(const space_layout *l)
{
    return l->fp8_attention && (l->dtype == HW_FP8 || l->dtype == HW_FP4);
}

/* Megatron-LM validate_args (megatron/training/arguments.py): with --bf16,
 * accumulate_allreduce_grads_in_fp32 is forced on unless
 * --grad-reduce-in-bf16 (since v2.5, NVIDIA/Megatron-LM@e269e2006495,
 * 2021-08, to NVIDIA/Megatron-LM@d98e8a64ddf3); with --fp16 it stays off
 * unless asked for, and the DDP's main_grad buffers take the parameters'
 * dtype (megatron/model/distributed.py, _get_buffer_type, v2.5;
 * DistributedDataParallelConfig.grad_reduce_in_fp32, default False, set
 * from that flag by megatron/training/training.py). fp8 runs keep bf16
 * parameters (--bf16 with --fp8-format). */
int space_grad_bytes(const space_layout *l)
{
    if (l->grad_bytes > 0) return l->grad_bytes;
    /* --main-grads-dtype bf16 (with the precision-aware optimizer): no
     * fp32 accumulation (validate_args sets
     * accumulate_allreduce_grads_in_fp32 only for fp32 main grads). */
    if (l->main_grads_dtype == SPACE_OPT_BF16) return 2;
    return l->dtype == HW_FP16 ? 2 : 4;
}

unsigned space_recompute_modules(const space_layout *l)
{
    if (l->recompute != SPACE_RECOMPUTE_SELECTIVE) return 0;
    return l->recompute_modules ? l->recompute_modules : SPACE_RC_CORE_ATTN;
}

size_t space_rc_modules_parse(const char *s, unsigned *mask)
{
    *mask = 0;
    const char *p = s;
    while (*p) {
        while (*p && strchr(" \t,[]", *p)) p++;
        if (!*p) break;
        size_t n = strcspn(p, " \t,[]");
        int k = -1;
        for (int b = 0; b < SPACE_RC_COUNT; b++)
            if (strlen(space_rc_module_names[b]) == n
                && strncmp(p, space_rc_module_names[b], n) == 0)
                k = b;
        if (k < 0 && n == 7 && strncmp(p, "up_proj", 7) == 0)
            k = 3; /* Megatron-LM's older name of mla_up_proj */
        if (k < 0) {
            *mask = 0;
            return 1 + (size_t)(p - s);
        }
        *mask |= 1u << k;
        p += n;
    }
    return *mask ? 0 : 1;
}

void space_rc_modules_str(unsigned mask, const char *sep, char *buf,
                          size_t cap)
{
    size_t used = 0;
    if (cap) buf[0] = '\0';
    for (int b = 0; b < SPACE_RC_COUNT; b++) {
        if (!(mask & (1u << b))) continue;
        int w = snprintf(buf + used, used < cap ? cap - used : 0, "%s%s",
                         used ? sep : "", space_rc_module_names[b]);
        if (w > 0) used += (size_t)w;
        if (used >= cap) break;
    }
}

const char *space_rc_modules_misfit(const space_model *m, unsigned mask)
{
    int moe = m->num_experts > 0, mla = m->kv_lora_rank > 0;
    if ((mask & SPACE_RC_MOE) && !moe) return "moe";
    if ((mask & SPACE_RC_MOE_ACT) && !moe) return "moe_act";
    if ((mask & SPACE_RC_SHARED_EXPERTS) && !(moe && m->shared_experts > 0))
        return "shared_experts";
    if ((mask & SPACE_RC_MLA_UP_PROJ) && !mla) return "mla_up_proj";
    if ((mask & SPACE_RC_LAYERNORM) && !moe && !mla) return "layernorm";
    return NULL;
}

const char *const space_moe_dispatcher_names[SPACE_MOE_DISPATCHER_COUNT] = {
    [SPACE_MOE_ALLTOALL] = "alltoall",
    [SPACE_MOE_ALLGATHER] = "allgather",
    [SPACE_MOE_FLEX] = "flex",
};
_Static_assert(sizeof space_moe_dispatcher_names
                       / sizeof space_moe_dispatcher_names[0]
                   == SPACE_MOE_DISPATCHER_COUNT,
               "space_moe_dispatcher_names names every dispatcher");

const char *const space_moe_overlap_names[SPACE_MOE_OVERLAP_COUNT] = {
    [SPACE_MOE_OVERLAP_NONE] = "none",
    [SPACE_MOE_OVERLAP_SHARED] = "shared",
    [SPACE_MOE_OVERLAP_A2A] = "a2a",
};
_Static_assert(sizeof space_moe_overlap_names
                       / sizeof space_moe_overlap_names[0]
                   == SPACE_MOE_OVERLAP_COUNT,
               "space_moe_overlap_names names every overlap");

const char *const space_pp_schedule_names[SPACE_PP_SCHEDULE_COUNT] = {
    [SPACE_PP_1F1B] = "1f1b",
    [SPACE_PP_ZB1P] = "zb1p",
    [SPACE_PP_ZBV] = "zbv",
    [SPACE_PP_DUALPIPE] = "dualpipe",
    [SPACE_PP_DUALPIPEV] = "dualpipev",
};
_Static_assert(sizeof space_pp_schedule_names
                       / sizeof space_pp_schedule_names[0]
                   == SPACE_PP_SCHEDULE_COUNT,
               "space_pp_schedule_names names every schedule");

const char *space_pp_schedule_name(const space_layout *l)
{
    unsigned s = (unsigned)l->pp_schedule;
    if (s >= SPACE_PP_SCHEDULE_COUNT) s = 0;
    if (s == SPACE_PP_1F1B && l->vpp > 1) return "interleaved";
    return space_pp_schedule_names[s];
}

int space_pp_schedule_v(const space_layout *l)
{
    return l->pp_schedule == SPACE_PP_ZBV
           || l->pp_schedule == SPACE_PP_DUALPIPEV;
}

const char *const space_moe_flex_backend_names[SPACE_MOE_FLEX_COUNT] = {
    [SPACE_MOE_FLEX_DEEPEP] = "deepep",
    [SPACE_MOE_FLEX_HYBRIDEP] = "hybridep",
};
_Static_assert(sizeof space_moe_flex_backend_names
                       / sizeof space_moe_flex_backend_names[0]
                   == SPACE_MOE_FLEX_COUNT,
               "space_moe_flex_backend_names names every backend");

const char *const space_cuda_graph_names[SPACE_CG_COUNT] = {
    [SPACE_CG_NONE] = "none",
    [SPACE_CG_LOCAL] = "local",
    [SPACE_CG_TE] = "transformer_engine",
    [SPACE_CG_FULL_ITERATION] = "full_iteration",
};
_Static_assert(sizeof space_cuda_graph_names / sizeof space_cuda_graph_names[0]
                   == SPACE_CG_COUNT,
               "space_cuda_graph_names names every implementation");

const char *const space_cgm_names[SPACE_CGM_COUNT] = {
    "attn", "mlp", "moe", "moe_router", "moe_preprocess",
};
_Static_assert(sizeof space_cgm_names / sizeof space_cgm_names[0]
                   == SPACE_CGM_COUNT,
               "space_cgm_names names every CUDA graph module");

size_t space_cgm_parse(const char *s, unsigned *mask)
{
    *mask = 0;
    const char *p = s;
    int full = 0, words = 0;
    while (*p) {
        while (*p && strchr(" \t,[]'\"", *p)) p++;
        if (!*p) break;
        size_t n = strcspn(p, " \t,[]'\"");
        int k = -1;
        for (int b = 0; b < SPACE_CGM_COUNT; b++)
            if (strlen(space_cgm_names[b]) == n
                && strncmp(p, space_cgm_names[b], n) == 0)
                k = b;
        /* "full": the whole layer (Megatron-Core's deprecated spelling
         * of an empty list, cuda_graph_config.py) */
        if (k < 0 && n == 4 && strncmp(p, "full", 4) == 0) {
            full = 1;
        } else if (k < 0) {
            return 1 + (size_t)(p - s);
        } else {
            *mask |= 1u << k;
        }
        words++;
        p += n;
    }
    /* "full" cannot be combined with other modules (normalize_cuda_graph_
     * modules asserts it) */
    if (full && words > 1) return 1;
    return 0;
}

void space_cgm_str(unsigned mask, const char *sep, char *buf, size_t cap)
{
    size_t used = 0;
    if (cap) buf[0] = '\0';
    for (int b = 0; b < SPACE_CGM_COUNT; b++) {
        if (!(mask & (1u << b))) continue;
        int w = snprintf(buf + used, used < cap ? cap - used : 0, "%s%s",
                         used ? sep : "", space_cgm_names[b]);
        if (w > 0) used += (size_t)w;
        if (used >= cap) break;
    }
}

const char *space_cuda_graph_name(const space_layout *l)
{
    return space_cuda_graph_names[(unsigned)l->cuda_graph < SPACE_CG_COUNT
                                      ? l->cuda_graph
                                      : 0];
}

const char *space_moe_dispatcher_name(const space_layout *l)
{
    return space_moe_dispatcher_names[(unsigned)l->moe_dispatcher
                                              < SPACE_MOE_DISPATCHER_COUNT
                                          ? l->moe_dispatcher
                                          : 0];
}

const char *space_moe_overlap_name(const space_layout *l)
{
    return space_moe_overlap_names[(unsigned)l->moe_comm_overlap
                                           < SPACE_MOE_OVERLAP_COUNT
                                       ? l->moe_comm_overlap
                                       : 0];
}

const char *space_moe_flex_backend_name(const space_layout *l)
{
    return space_moe_flex_backend_names[(unsigned)l->moe_flex_backend
                                                < SPACE_MOE_FLEX_COUNT
                                            ? l->moe_flex_backend
                                            : 0];
}

int64_t space_layout_ep(const space_layout *l)
{
    return l->ep > 1 ? l->ep : 1;
}

int64_t space_layout_etp(const space_layout *l)
{
    return l->etp > 0 ? l->etp : l->tp;
}
