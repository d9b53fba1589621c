/*
 * launch_megatron.c - the Megatron-LM command line of a layout
 * (pretrain_gpt.py's arguments), names as of Megatron-LM core_r0.8+
 * (megatron/training/arguments.py). What Megatron-LM cannot express is
 * said in a trailing comment.
 */
#include "launch.h"

#include "hw.h"

void cli_launch_megatron(const cli_launch *c, cli_text *b)
{
    const space_layout *l = c->layout;
    const space_model *m = c->model;
    int64_t g, nodes = cli_launch_nodes(c, &g);
    cli_text_put(b, "torchrun --nnodes %lld --nproc-per-node %lld pretrain_gpt.py",
        (long long)nodes, (long long)g);
    cli_text_put(b, " --tensor-model-parallel-size %lld --pipeline-model-parallel-size "
            "%lld", (long long)l->tp, (long long)l->pp);
    int64_t L = m->num_layers, v = l->vpp > 1 ? l->vpp : 1;
    if (v > 1 && L % (l->pp * v) == 0)
        cli_text_put(b, " --num-layers-per-virtual-pipeline-stage %lld",
            (long long)(L / (l->pp * v)));
    else if (v > 1)
        cli_text_put(b, " --num-virtual-stages-per-pipeline-rank %lld", (long long)v);
    int uneven = 0;
    if (L % (l->pp * v)) {
        /* Uneven stages as the estimator splits them, where the end and
         * the middle ranks' layers each split into V equal chunks. */
        double end = space_stage_layers(m, l, 0);
        double mid = space_stage_layers(m, l, l->pp > 2 ? 1 : 0);
        int64_t e = (int64_t)end, md = (int64_t)mid;
        if (l->pp > 2 && L % l->pp && end >= 1 && end == (double)e
            && e % v == 0 && md % v == 0)
            cli_text_put(b, " --decoder-first-pipeline-num-layers %lld "
                    "--decoder-last-pipeline-num-layers %lld",
                (long long)e, (long long)e);
        else
            uneven = 1;
    }
    if (l->cp > 1) cli_text_put(b, " --context-parallel-size %lld", (long long)l->cp);
    if (l->cp > 1 && l->cp_comm == SPACE_CP_ALLGATHER)
        cli_text_put(b, " --cp-comm-type all_gather");
    cli_text_put(b, " --micro-batch-size %lld --global-batch-size %lld --seq-length %lld",
        (long long)l->mbs, (long long)l->gbs, (long long)l->seq);
    if (l->sp && l->tp > 1) cli_text_put(b, " --sequence-parallel");
    if (l->recompute == SPACE_RECOMPUTE_SELECTIVE)
        cli_text_put(b, " --recompute-granularity selective");
    else if (l->recompute == SPACE_RECOMPUTE_FULL)
        cli_text_put(b, " --recompute-granularity full --recompute-method %s "
                "--recompute-num-layers %lld",
            space_recompute_method_names[l->recompute_method],
            (long long)(l->recompute_layers > 0 ? l->recompute_layers : 1));
    if (l->tp > 1 && l->tp_overlap == SPACE_TP_OVERLAP_ALL)
        cli_text_put(b, " --tp-comm-overlap");
    if (l->ce_fusion) cli_text_put(b, " --cross-entropy-loss-fusion");
    if (l->zero == SPACE_ZERO_3)
        cli_text_put(b, " --use-torch-fsdp2");
    else if (l->zero >= SPACE_ZERO_1)
        cli_text_put(b, " --use-distributed-optimizer");
    cli_text_put(b, l->dtype == HW_FP16 ? " --fp16" : " --bf16");
    /* Megatron-LM's gradient dtype follows --fp16/--bf16 unless told
     * (space_grad_bytes): say so where the layout differs. */
    if (l->dtype == HW_FP16 && space_grad_bytes(l) >= 4)
        cli_text_put(b, " --accumulate-allreduce-grads-in-fp32");
    else if (l->dtype != HW_FP16 && space_grad_bytes(l) < 4)
        cli_text_put(b, " --grad-reduce-in-bf16");
    if (l->dtype == HW_FP8)
        cli_text_put(b, " --fp8-format %s --fp8-recipe %s",
            l->fp8_recipe == SPACE_FP8_DELAYED
                    || l->fp8_recipe == SPACE_FP8_TENSORWISE
                ? "hybrid"
                : "e4m3",
            space_fp8_recipe_names[l->fp8_recipe]);
    if (l->dtype == HW_FP8 && l->fp8_params) cli_text_put(b, " --fp8-param-gather");
    if (l->pp > 1 && v > 1 && l->no_pp_overlap)
        cli_text_put(b, " --no-overlap-p2p-communication");
    if (!l->no_dp_overlap) cli_text_put(b, " --overlap-grad-reduce");
    if (!l->no_dp_overlap && l->zero >= SPACE_ZERO_1 && l->zero < SPACE_ZERO_3)
        cli_text_put(b, " --overlap-param-gather");
    if (uneven)
        cli_text_put(b, "  # %lld layers do not split evenly over PP %lld x %lld "
                "model chunks: set --decoder-first/last-pipeline-num-layers "
                "or --pipeline-model-parallel-layout",
            (long long)m->num_layers, (long long)l->pp, (long long)v);
    if (l->zero == SPACE_ZERO_2)
        cli_text_put(b, "  # ZeRO-2: no Megatron-LM switch; the distributed "
                "optimizer shards optimizer states only");
    if (l->recompute == SPACE_RECOMPUTE_SELECTIVE_OP)
        cli_text_put(b, "  # torchtitan's op-level selective checkpointing has no "
                "Megatron-LM switch");
    if (l->tp > 1 && l->tp_overlap == SPACE_TP_OVERLAP_NONE)
        cli_text_put(b, "  # TP collectives not overlapped: Megatron-LM overlaps the "
                "backward ones by default");
    if (l->tp > 1 && (l->tp_overlap == SPACE_TP_OVERLAP_DTENSOR
                      || l->tp_overlap == SPACE_TP_OVERLAP_ASYNC))
        cli_text_put(b, "  # estimated for PyTorch DTensor TP%s (torchtitan), not "
                "Megatron-LM's",
            l->tp_overlap == SPACE_TP_OVERLAP_ASYNC ? " with AsyncTP" : "");
}

int cli_read_megatron(const char *text, const char *file, cli_opts *o,
                      space_model *m, tp_err *e)
{
    (void)text;
    (void)o;
    (void)m;
    return tp_errf(e, TP_EUSAGE, "%s: reading a Megatron-LM job is not built "
                   "yet", file);
}
