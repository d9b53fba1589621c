/*
 * launch.c - how to run a layout: the Megatron-LM command line, the NeMo
 * (Megatron-based) YAML keys and the torchtitan TOML keys that match it.
 *
 * Names as of Megatron-LM core_r0.8+ (megatron/training/arguments.py),
 * NeMo 1.x/2.x megatron_gpt_config.yaml and torchtitan's job config
 * (torchtitan/config/job_config.py, 2025). Only the parallel layout, batch,
 * sequence, recomputation, optimizer sharding and precision are written;
 * the model's own sizes, data and optimizer hyperparameters are the
 * user's. What a framework cannot express is said in a comment line:
 * ZeRO-2 has no Megatron-LM switch (the distributed optimizer shards
 * optimizer states only), torchtitan shards parameters whenever it shards
 * (FSDP, i.e. ZeRO-3).
 */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct sbuf {
    char *p;
    size_t cap, n;
} sbuf;

static void put(sbuf *b, const char *fmt, ...)
{
    if (b->n >= b->cap) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    if (k > 0) b->n += (size_t)k;
    if (b->n >= b->cap) b->n = b->cap - 1;
}

static int64_t nodes_of(const space_layout *l, int gpn, int64_t *per_node)
{
    int64_t gpus = l->tp * l->pp * l->cp * l->dp;
    int64_t g = gpn > 0 && gpn < gpus ? gpn : gpus;
    *per_node = g;
    return (gpus + g - 1) / g;
}

void cli_launch_megatron(const space_layout *l, const space_model *m, int gpn,
                         char *buf, size_t cap)
{
    sbuf b = {buf, cap, 0};
    buf[0] = '\0';
    int64_t g, nodes = nodes_of(l, gpn, &g);
    put(&b, "torchrun --nnodes %lld --nproc-per-node %lld pretrain_gpt.py",
        (long long)nodes, (long long)g);
    put(&b, " --tensor-model-parallel-size %lld --pipeline-model-parallel-size "
            "%lld", (long long)l->tp, (long long)l->pp);
    int64_t L = m->num_layers, v = l->vpp > 1 ? l->vpp : 1;
    if (v > 1 && L % (l->pp * v) == 0)
        put(&b, " --num-layers-per-virtual-pipeline-stage %lld",
            (long long)(L / (l->pp * v)));
    else if (v > 1)
        put(&b, " --num-virtual-stages-per-pipeline-rank %lld", (long long)v);
    int uneven = 0;
    if (L % (l->pp * v)) {
        /* Uneven stages as the estimator splits them, where the end and
         * the middle ranks' layers each split into V equal chunks. */
        double end = space_stage_layers(m, l, 0);
        double mid = space_stage_layers(m, l, l->pp > 2 ? 1 : 0);
        int64_t e = (int64_t)end, md = (int64_t)mid;
        if (l->pp > 2 && L % l->pp && end >= 1 && end == (double)e
            && e % v == 0 && md % v == 0)
            put(&b, " --decoder-first-pipeline-num-layers %lld "
                    "--decoder-last-pipeline-num-layers %lld",
                (long long)e, (long long)e);
        else
            uneven = 1;
    }
    if (l->cp > 1) put(&b, " --context-parallel-size %lld", (long long)l->cp);
    if (l->cp > 1 && l->cp_comm == SPACE_CP_ALLGATHER)
        put(&b, " --cp-comm-type all_gather");
    put(&b, " --micro-batch-size %lld --global-batch-size %lld --seq-length %lld",
        (long long)l->mbs, (long long)l->gbs, (long long)l->seq);
    if (l->sp && l->tp > 1) put(&b, " --sequence-parallel");
    if (l->recompute == SPACE_RECOMPUTE_SELECTIVE)
        put(&b, " --recompute-granularity selective");
    else if (l->recompute == SPACE_RECOMPUTE_FULL)
        put(&b, " --recompute-granularity full --recompute-method %s "
                "--recompute-num-layers %lld",
            space_recompute_method_names[l->recompute_method],
            (long long)(l->recompute_layers > 0 ? l->recompute_layers : 1));
    if (l->tp > 1 && l->tp_overlap == SPACE_TP_OVERLAP_ALL)
        put(&b, " --tp-comm-overlap");
    if (l->ce_fusion) put(&b, " --cross-entropy-loss-fusion");
    if (l->zero == SPACE_ZERO_3)
        put(&b, " --use-torch-fsdp2");
    else if (l->zero >= SPACE_ZERO_1)
        put(&b, " --use-distributed-optimizer");
    put(&b, l->dtype == HW_FP16 ? " --fp16" : " --bf16");
    /* Megatron-LM's gradient dtype follows --fp16/--bf16 unless told
     * (space_grad_bytes): say so where the layout differs. */
    if (l->dtype == HW_FP16 && space_grad_bytes(l) >= 4)
        put(&b, " --accumulate-allreduce-grads-in-fp32");
    else if (l->dtype != HW_FP16 && space_grad_bytes(l) < 4)
        put(&b, " --grad-reduce-in-bf16");
    if (l->dtype == HW_FP8)
        put(&b, " --fp8-format %s --fp8-recipe %s",
            l->fp8_recipe == SPACE_FP8_DELAYED
                    || l->fp8_recipe == SPACE_FP8_TENSORWISE
                ? "hybrid"
                : "e4m3",
            space_fp8_recipe_names[l->fp8_recipe]);
    if (l->dtype == HW_FP8 && l->fp8_params) put(&b, " --fp8-param-gather");
    if (l->pp > 1 && v > 1 && l->no_pp_overlap)
        put(&b, " --no-overlap-p2p-communication");
    if (!l->no_dp_overlap) put(&b, " --overlap-grad-reduce");
    if (!l->no_dp_overlap && l->zero >= SPACE_ZERO_1 && l->zero < SPACE_ZERO_3)
        put(&b, " --overlap-param-gather");
    if (uneven)
        put(&b, "  # %lld layers do not split evenly over PP %lld x %lld "
                "model chunks: set --decoder-first/last-pipeline-num-layers "
                "or --pipeline-model-parallel-layout",
            (long long)m->num_layers, (long long)l->pp, (long long)v);
    if (l->zero == SPACE_ZERO_2)
        put(&b, "  # ZeRO-2: no Megatron-LM switch; the distributed "
                "optimizer shards optimizer states only");
    if (l->recompute == SPACE_RECOMPUTE_SELECTIVE_OP)
        put(&b, "  # torchtitan's op-level selective checkpointing has no "
                "Megatron-LM switch");
    if (l->tp > 1 && l->tp_overlap == SPACE_TP_OVERLAP_NONE)
        put(&b, "  # TP collectives not overlapped: Megatron-LM overlaps the "
                "backward ones by default");
    if (l->tp > 1 && (l->tp_overlap == SPACE_TP_OVERLAP_DTENSOR
                      || l->tp_overlap == SPACE_TP_OVERLAP_ASYNC))
        put(&b, "  # estimated for PyTorch DTensor TP%s (torchtitan), not "
                "Megatron-LM's",
            l->tp_overlap == SPACE_TP_OVERLAP_ASYNC ? " with AsyncTP" : "");
}

void cli_launch_nemo(const space_layout *l, const space_model *m, int gpn,
                     char *buf, size_t cap)
{
    sbuf b = {buf, cap, 0};
    buf[0] = '\0';
    int64_t g, nodes = nodes_of(l, gpn, &g);
    put(&b, "trainer.num_nodes: %lld\ntrainer.devices: %lld\n",
        (long long)nodes, (long long)g);
    put(&b, "trainer.precision: %s\n",
        l->dtype == HW_FP16 ? "16-mixed" : "bf16-mixed");
    put(&b, "model.tensor_model_parallel_size: %lld\n", (long long)l->tp);
    put(&b, "model.pipeline_model_parallel_size: %lld\n", (long long)l->pp);
    if (l->vpp > 1)
        put(&b, "model.virtual_pipeline_model_parallel_size: %lld\n",
            (long long)l->vpp);
    else
        put(&b, "model.virtual_pipeline_model_parallel_size: null\n");
    put(&b, "model.context_parallel_size: %lld\n", (long long)l->cp);
    if (l->cp > 1)
        put(&b, "model.cp_comm_type: %s\n", space_cp_comm_names[l->cp_comm]);
    put(&b, "model.sequence_parallel: %s\n",
        l->sp && l->tp > 1 ? "true" : "false");
    put(&b, "model.micro_batch_size: %lld\nmodel.global_batch_size: %lld\n",
        (long long)l->mbs, (long long)l->gbs);
    put(&b, "model.encoder_seq_length: %lld\n", (long long)l->seq);
    if (l->recompute == SPACE_RECOMPUTE_NONE)
        put(&b, "model.activations_checkpoint_granularity: null\n");
    else if (l->recompute == SPACE_RECOMPUTE_SELECTIVE
             || l->recompute == SPACE_RECOMPUTE_SELECTIVE_OP)
        put(&b, "model.activations_checkpoint_granularity: selective%s\n",
            l->recompute == SPACE_RECOMPUTE_SELECTIVE_OP
                ? "  # NeMo's selective is the attention core, not "
                  "torchtitan's op-level policy"
                : "");
    else
        put(&b, "model.activations_checkpoint_granularity: full\n"
                "model.activations_checkpoint_method: %s\n"
                "model.activations_checkpoint_num_layers: %lld\n",
            space_recompute_method_names[l->recompute_method],
            (long long)(l->recompute_layers > 0 ? l->recompute_layers : 1));
    if (l->dtype == HW_FP8)
        put(&b, "model.fp8: true\nmodel.fp8_hybrid: true\n"
                "model.fp8_recipe: %s\n",
            space_fp8_recipe_names[l->fp8_recipe]);
    if (l->tp > 1 && l->tp_overlap == SPACE_TP_OVERLAP_ALL)
        put(&b, "model.ub_tp_comm_overlap: true\n");
    put(&b, "model.optim.name: %s",
        l->zero >= SPACE_ZERO_1 ? "distributed_fused_adam" : "fused_adam");
    (void)m;
}

void cli_launch_torchtitan(const space_layout *l, const space_model *m,
                           int gpn, char *buf, size_t cap)
{
    sbuf b = {buf, cap, 0};
    buf[0] = '\0';
    (void)m;
    (void)gpn;
    int shard = l->zero >= SPACE_ZERO_1;
    put(&b, "[parallelism]\n");
    put(&b, "data_parallel_replicate_degree = %lld\n",
        (long long)(shard ? 1 : l->dp));
    put(&b, "data_parallel_shard_degree = %lld\n", (long long)(shard ? l->dp : 1));
    put(&b, "tensor_parallel_degree = %lld\n", (long long)l->tp);
    put(&b, "enable_async_tensor_parallel = %s\n",
        l->tp > 1 && (l->tp_overlap == SPACE_TP_OVERLAP_ASYNC
                      || l->tp_overlap == SPACE_TP_OVERLAP_ALL)
            ? "true"
            : "false");
    put(&b, "pipeline_parallel_degree = %lld\n", (long long)l->pp);
    if (l->pp > 1)
        put(&b, "pipeline_parallel_schedule = \"%s\"\n"
                "pipeline_parallel_microbatch_size = %lld\n",
            l->vpp > 1 ? "Interleaved1F1B" : "1F1B", (long long)l->mbs);
    put(&b, "context_parallel_degree = %lld\n", (long long)l->cp);
    if (l->cp > 1)
        put(&b, "context_parallel_rotate_method = \"%s\"\n",
            l->cp_comm == SPACE_CP_ALLGATHER ? "allgather" : "alltoall");
    put(&b, "\n[training]\nlocal_batch_size = %lld\nglobal_batch_size = %lld\n"
            "seq_len = %lld\nmixed_precision_param = \"%s\"\n",
        /* with PP a rank's batch is split into pipeline micro-batches;
         * without, a micro-batch is a local batch and torchtitan
         * accumulates gradients up to the global batch */
        (long long)(l->pp > 1 ? l->gbs / (l->dp > 0 ? l->dp : 1) : l->mbs),
        (long long)l->gbs,
        (long long)l->seq, l->dtype == HW_FP16 ? "float16" : "bfloat16");
    put(&b, "\n[activation_checkpoint]\nmode = \"%s\"",
        l->recompute == SPACE_RECOMPUTE_NONE   ? "none"
        : l->recompute == SPACE_RECOMPUTE_FULL ? "full"
                                               : "selective");
    if (l->recompute == SPACE_RECOMPUTE_SELECTIVE_OP)
        put(&b, "\nselective_ac_option = \"op\"");
    if (l->recompute == SPACE_RECOMPUTE_FULL
        && (l->recompute_method == SPACE_RECOMPUTE_BLOCK
            || l->recompute_layers > 1))
        put(&b, "\n# estimated for Megatron-LM's --recompute-method %s "
                "--recompute-num-layers %lld; torchtitan's full mode "
                "checkpoints every layer",
            space_recompute_method_names[l->recompute_method],
            (long long)l->recompute_layers);
    if (l->dtype == HW_FP8)
        put(&b, "\n\n[model]\nconverters = [\"float8\"]%s",
            l->fp8_recipe == SPACE_FP8_ROWWISE
                ? "\n\n[float8]\nrecipe_name = \"rowwise\"" : "");
    if (shard && l->zero < SPACE_ZERO_3)
        put(&b, "\n# torchtitan shards parameters too (FSDP, ZeRO-3) where "
                "this layout shards %s only",
            l->zero == SPACE_ZERO_1 ? "optimizer states" : "gradients and "
                                                           "optimizer states");
}
