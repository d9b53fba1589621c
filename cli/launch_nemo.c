/*
 * launch_nemo.c - NeMo's keys for a layout (NeMo 1.x/2.x
 * megatron_gpt_config.yaml names).
 */
#include "launch.h"

#include "hw.h"

void cli_launch_nemo(const cli_launch *c, cli_text *b)
{
    const space_layout *l = c->layout;
    const space_model *m = c->model;
    int64_t g, nodes = cli_launch_nodes(c, &g);
    cli_text_put(b, "trainer.num_nodes: %lld\ntrainer.devices: %lld\n",
        (long long)nodes, (long long)g);
    cli_text_put(b, "trainer.precision: %s\n",
        l->dtype == HW_FP16 ? "16-mixed" : "bf16-mixed");
    cli_text_put(b, "model.tensor_model_parallel_size: %lld\n", (long long)l->tp);
    cli_text_put(b, "model.pipeline_model_parallel_size: %lld\n", (long long)l->pp);
    if (l->vpp > 1)
        cli_text_put(b, "model.virtual_pipeline_model_parallel_size: %lld\n",
            (long long)l->vpp);
    else
        cli_text_put(b, "model.virtual_pipeline_model_parallel_size: null\n");
    cli_text_put(b, "model.context_parallel_size: %lld\n", (long long)l->cp);
    if (l->cp > 1)
        cli_text_put(b, "model.cp_comm_type: %s\n", space_cp_comm_names[l->cp_comm]);
    cli_text_put(b, "model.sequence_parallel: %s\n",
        l->sp && l->tp > 1 ? "true" : "false");
    cli_text_put(b, "model.micro_batch_size: %lld\nmodel.global_batch_size: %lld\n",
        (long long)l->mbs, (long long)l->gbs);
    cli_text_put(b, "model.encoder_seq_length: %lld\n", (long long)l->seq);
    if (l->recompute == SPACE_RECOMPUTE_NONE)
        cli_text_put(b, "model.activations_checkpoint_granularity: null\n");
    else if (l->recompute == SPACE_RECOMPUTE_SELECTIVE
             || l->recompute == SPACE_RECOMPUTE_SELECTIVE_OP)
        cli_text_put(b, "model.activations_checkpoint_granularity: selective%s\n",
            l->recompute == SPACE_RECOMPUTE_SELECTIVE_OP
                ? "  # NeMo's selective is the attention core, not "
                  "torchtitan's op-level policy"
                : "");
    else
        cli_text_put(b, "model.activations_checkpoint_granularity: full\n"
                "model.activations_checkpoint_method: %s\n"
                "model.activations_checkpoint_num_layers: %lld\n",
            space_recompute_method_names[l->recompute_method],
            (long long)(l->recompute_layers > 0 ? l->recompute_layers : 1));
    if (l->dtype == HW_FP8)
        cli_text_put(b, "model.fp8: true\nmodel.fp8_hybrid: true\n"
                "model.fp8_recipe: %s\n",
            space_fp8_recipe_names[l->fp8_recipe]);
    if (l->tp > 1 && l->tp_overlap == SPACE_TP_OVERLAP_ALL)
        cli_text_put(b, "model.ub_tp_comm_overlap: true\n");
    cli_text_put(b, "model.optim.name: %s",
        l->zero >= SPACE_ZERO_1 ? "distributed_fused_adam" : "fused_adam");
    (void)m;
}

int cli_read_nemo(const char *text, const char *file, cli_opts *o,
                space_model *m, tp_err *e)
{
    (void)text;
    (void)o;
    (void)m;
    return tp_errf(e, TP_EUSAGE, "%s: reading a nemo job is not built yet",
                   file);
}
