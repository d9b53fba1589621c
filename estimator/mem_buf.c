/*
 * mem_buf.c - buffers a framework holds beside the tensors the model
 * defines: the pipeline stage's outputs the frameworks of 2021 keep,
 * DeepSpeed's fp16 gradient bucket, the LM head's logits, Megatron-FSDP's
 * gathered units and unsharded gradient buckets (docs/memory.md,
 * "Megatron-Core's own buffers"). mem.c's stage_of adds them to the
 * moments they belong to.
 */

#include "est_int.h"

#include <math.h>
#include <string.h>

/* Frameworks of 2021-22: PyTorch 1.x (eager module loading, cuBLAS
 * workspaces outside the allocator) and NCCL before 2.22 (every ring and
 * tree connected when a communicator is created). */
int est_of_2021(const space_layout *l)
{
    return l->framework == SPACE_FW_MEGATRON_2021
           || l->framework == SPACE_FW_DEEPSPEED_2021;
}

/* The stage's output of each micro-batch in flight, per token, where the
 * schedule keeps it until that micro-batch's backward: Megatron-LM of 2021
 * has no deallocate_output_tensor (v2.5; Megatron-Core frees the output
 * after the send, schedules.py, core_v0.12.0), 16 bits, all of h on every
 * TP rank; DeepSpeed's pipeline engine partitions it to 1/t after the send
 * with TP (_exec_forward_pass, deepspeed/runtime/pipe/engine.py,
 * v0.5.10). */
double est_pipe_output_token(const space_model *m, const space_layout *l)
{
    if (!est_of_2021(l) || l->pp < 2) return 0;
    double h = (double)m->hidden;
    return l->framework == SPACE_FW_DEEPSPEED_2021 && l->tp > 1
               ? 2 * h / (double)l->tp
               : 2 * h;
}

/* DeepSpeed's fp16 ZeRO-1/2 gradient bucket (its ipg buffer): 5e8 fp16
 * elements, reduce_bucket_size's default (deepspeed/runtime/zero/
 * constants.py, stage_1_and_2.py, v0.5.10), made in every backward without
 * a pipeline, at the optimizer step under the pipeline engine
 * (reduce_gradients(pipeline_parallel=True)). BLOOM's bf16 optimizer is
 * another code path. */
double est_ds_bucket_bytes(const space_layout *l)
{
    return l->framework == SPACE_FW_DEEPSPEED_2021
                   && (l->zero == SPACE_ZERO_1 || l->zero == SPACE_ZERO_2)
                   && space_grad_bytes(l) == 2
               ? 2 * 5e8
               : 0;
}

/* Activation-sized buffers of the last stage's loss, per token, beyond
 * the fp32 softmax kept for the backward: the LM head's 16-bit logits,
 * alive until the loss has been computed from them. */
double est_logits_token(const space_layout *l, double vp)
{
    return 2 * vp / (double)l->tp;
}

/* Megatron-FSDP (Megatron-Core --use-megatron-fsdp, ZeRO-2 "optim_grads"
 * and ZeRO-3 "optim_grads_params"), as NVIDIA/Megatron-LM@d98e8a64ddf3
 * runs it (megatron/core/distributed/fsdp/mcore_fsdp_adapter.py,
 * src/megatron_fsdp/megatron_fsdp.py and param_and_grad_buffer.py). Its
 * sharded states are est_state_bytes's: the 16-bit weight buffer (ZeRO-3:
 * sharded), the fp32 main weights (megatron_fsdp_main_params_dtype), the
 * gradient buffer (sharded) and Adam's moments, all over dp x cp. Beyond
 * them:
 * - FSDP units are the transformer layers (fsdp_unit_modules:
 *   TransformerLayer, MoETransformerLayer; a layer's routed experts in
 *   the same unit). Under ZeRO-3 the parameters outside every unit
 *   (embeddings, final norm, LM head, MTP's projections) are gathered at
 *   their first use and kept gathered: their buckets are "preserved"
 *   (AllGatherPipeline.reset(preserve_non_fsdp_units=True),
 *   release_bucket's note), 2 bytes each, through the step too.
 * - The communication size C = max(1e9, 2 x the mean unit's elements)
 *   (suggested_communication_unit_size None: "twice the number of
 *   elements in the FSDP modules", floored at 1e9 by its max()). A
 *   unit's all-gather prefetches the next units until C / 2 elements
 *   more are gathered (suggested_AG_prefetch_size): 1 + ceil(C / 2u)
 *   units of 16-bit weights at once, all of a small model's. Its
 *   unsharded gradient bucket (the gradients' dtype) is made when its
 *   first gradient arrives and is freed only when the reduce-scatter
 *   queue holds more than C elements (wait_for_previous_grad_reduce with
 *   suggested_RS_queue_capacity) or at the backward's end
 *   (_root_post_backward's reset): up to floor(C / u) + 1 units. The
 *   parameters outside units form one bucket per dtype (no bucket size
 *   under the adapter); its unsharded gradients are made at the LM head's
 *   weight gradient on the last stage (Megatron's wgrad accumulation into
 *   main_grad), elsewhere at the backward's end.
 * - --fsdp-double-buffer (FixedPoolAllocator): two persistent buffers of a
 *   unit's size for the weights (ZeRO-3) and two for the gradients, at
 *   most two units in either (_enforce_double_buffer_limit), held
 *   through the step.
 * - On the last stage the final norm, outside every unit, is gathered
 *   with the forward's prefetch from its bucket (the first, ahead of the
 *   units' in parameter order), which gathers the first ceil(C / 2u)
 *   units again after their forward; they stay until the backward's
 *   first all-gather recycles them (release is lazy after
 *   _root_pre_backward), so they are there at the loss.
 * The backward of a micro-batch is taken at four moments: the loss
 * (every activation and the loss's buffers), its first unit (the loss
 * freed, 1 + ceil(C / 2u) units gathered, on the last stage the outside
 * units' gradient bucket), when the gradient queue is full (q units'
 * gradients, q / n of the micro-batch's layer activations freed) and its
 * end (one unit gathered, the queued gradients and the outside units'
 * bucket, the micro-batch's activations freed); u = the stage's mean
 * unit, n = its units per model chunk.
 * Out: the bytes over the generic count (act + loss_bwd) at the largest
 * moment, what the step adds, and for the breakdown the weights and
 * gradients added and the activations freed at that moment. */
void est_mfsdp_buffers(const space_layout *l, double unit_p, double nc,
                       double nonunit_p, int head, double act, double loss_kept,
                       double loss_bwd, double rebuilt, double inflight,
                       est_mfsdp_moment *o)
{
    memset(o, 0, sizeof *o);
    if (nc <= 0 || unit_p <= 0) return;
    int z3 = l->zero >= SPACE_ZERO_3;
    double gb = (double)space_grad_bytes(l);
    double u = unit_p / (nc * (double)(l->vpp > 0 ? l->vpp : 1));
    double C = fmax(1e9, 2 * u);
    double w_nu = z3 ? 2 * fmax(nonunit_p, 0) : 0;
    double g_nu = gb * fmax(nonunit_p, 0);
    double g_units, q_units, fixed = 0;
    if (l->fsdp_double_buffer) {
        g_units = 0, q_units = 0;
        fixed = (z3 ? 2 * 2 * u : 0) + 2 * gb * u;
    } else {
        g_units = fmin(nc, 1 + ceil(C / 2 / u));
        q_units = fmin(nc, floor(C / u) + 1);
    }
    double w_g = z3 ? 2 * g_units * u : 0;
    double w_pre = z3 && head && !l->fsdp_double_buffer
                       ? 2 * fmin(nc, ceil(C / 2 / u)) * u
                       : 0;
    double a_mb = fmax(act - loss_kept - rebuilt, 0) / fmax(inflight, 1);
    double at_loss = w_nu + w_pre + fixed;
    double first = w_nu + w_g + fixed + (head ? g_nu : 0) - loss_kept
                   - loss_bwd;
    double qfree = l->fsdp_double_buffer ? fmin(nc, 2) : q_units;
    double cap_g = q_units * u * gb + (head ? g_nu : 0);
    double cap = w_nu + w_g + fixed + cap_g - loss_kept - loss_bwd
                 - a_mb * qfree / nc;
    double end_w = w_nu + (z3 && !l->fsdp_double_buffer ? 2 * u : 0);
    double end_g = q_units * u * gb + g_nu;
    double end = end_w + fixed + end_g - loss_kept - loss_bwd - a_mb;
    o->step = w_nu + fixed;
    if (at_loss >= first && at_loss >= cap && at_loss >= end) {
        o->bwd = at_loss, o->weights = w_nu + w_pre + fixed;
    } else if (first >= cap && first >= end) {
        o->bwd = first, o->weights = w_nu + w_g + fixed;
        o->grads = head ? g_nu : 0, o->act_freed = loss_kept + loss_bwd;
    } else if (cap >= end) {
        o->bwd = cap, o->weights = w_nu + w_g + fixed, o->grads = cap_g;
        o->act_freed = loss_kept + loss_bwd + a_mb * qfree / nc;
    } else {
        o->bwd = end, o->weights = end_w + fixed, o->grads = end_g;
        o->act_freed = loss_kept + loss_bwd + a_mb;
    }
}
