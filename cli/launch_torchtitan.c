/*
 * launch_torchtitan.c - torchtitan's job config for a layout (TOML keys of
 * torchtitan/config/job_config.py, 2025). torchtitan shards parameters
 * whenever it shards (FSDP, i.e. ZeRO-3): a comment says so where the
 * layout shards less.
 */
#include "launch.h"

#include "hw.h"

void cli_launch_torchtitan(const cli_launch *c, cli_text *b)
{
    const space_layout *l = c->layout;
    const space_model *m = c->model;
    (void)m;
    int shard = l->zero >= SPACE_ZERO_1;
    cli_text_put(b, "[parallelism]\n");
    cli_text_put(b, "data_parallel_replicate_degree = %lld\n",
        (long long)(shard ? 1 : l->dp));
    cli_text_put(b, "data_parallel_shard_degree = %lld\n", (long long)(shard ? l->dp : 1));
    cli_text_put(b, "tensor_parallel_degree = %lld\n", (long long)l->tp);
    cli_text_put(b, "enable_async_tensor_parallel = %s\n",
        l->tp > 1 && (l->tp_overlap == SPACE_TP_OVERLAP_ASYNC
                      || l->tp_overlap == SPACE_TP_OVERLAP_ALL)
            ? "true"
            : "false");
    cli_text_put(b, "pipeline_parallel_degree = %lld\n", (long long)l->pp);
    if (l->pp > 1)
        cli_text_put(b, "pipeline_parallel_schedule = \"%s\"\n"
                "pipeline_parallel_microbatch_size = %lld\n",
            l->vpp > 1 ? "Interleaved1F1B" : "1F1B", (long long)l->mbs);
    cli_text_put(b, "context_parallel_degree = %lld\n", (long long)l->cp);
    if (l->cp > 1)
        cli_text_put(b, "context_parallel_rotate_method = \"%s\"\n",
            l->cp_comm == SPACE_CP_ALLGATHER ? "allgather" : "alltoall");
    cli_text_put(b, "\n[training]\nlocal_batch_size = %lld\nglobal_batch_size = %lld\n"
            "seq_len = %lld\nmixed_precision_param = \"%s\"\n",
        /* with PP a rank's batch is split into pipeline micro-batches;
         * without, a micro-batch is a local batch and torchtitan
         * accumulates gradients up to the global batch */
        (long long)(l->pp > 1 ? l->gbs / (l->dp > 0 ? l->dp : 1) : l->mbs),
        (long long)l->gbs,
        (long long)l->seq, l->dtype == HW_FP16 ? "float16" : "bfloat16");
    cli_text_put(b, "\n[activation_checkpoint]\nmode = \"%s\"",
        l->recompute == SPACE_RECOMPUTE_NONE   ? "none"
        : l->recompute == SPACE_RECOMPUTE_FULL ? "full"
                                               : "selective");
    if (l->recompute == SPACE_RECOMPUTE_SELECTIVE_OP)
        cli_text_put(b, "\nselective_ac_option = \"op\"");
    if (l->recompute == SPACE_RECOMPUTE_FULL
        && (l->recompute_method == SPACE_RECOMPUTE_BLOCK
            || l->recompute_layers > 1))
        cli_text_put(b, "\n# estimated for Megatron-LM's --recompute-method %s "
                "--recompute-num-layers %lld; torchtitan's full mode "
                "checkpoints every layer",
            space_recompute_method_names[l->recompute_method],
            (long long)l->recompute_layers);
    if (l->dtype == HW_FP8)
        cli_text_put(b, "\n\n[model]\nconverters = [\"float8\"]%s",
            l->fp8_recipe == SPACE_FP8_ROWWISE
                ? "\n\n[float8]\nrecipe_name = \"rowwise\"" : "");
    if (shard && l->zero < SPACE_ZERO_3)
        cli_text_put(b, "\n# torchtitan shards parameters too (FSDP, ZeRO-3) where "
                "this layout shards %s only",
            l->zero == SPACE_ZERO_1 ? "optimizer states" : "gradients and "
                                                           "optimizer states");
}

int cli_read_torchtitan(const char *text, const char *file, cli_opts *o,
                space_model *m, tp_err *e)
{
    (void)text;
    (void)o;
    (void)m;
    return tp_errf(e, TP_EUSAGE, "%s: reading a torchtitan job is not built yet",
                   file);
}
