/*
 * kernel_eff.c - the in-training kernel efficiency: a kernel's throughput
 * inside a training step over its throughput timed alone, as one constant
 * per software stack (space_stack) times a factor per GPU family (hwdb
 * kernel_efficiency_factor, 1 for the A100 80GB).
 *
 * The operator samples time one kernel at a time on an idle GPU at its
 * boost clock, warmed up, synchronised around it. A training step runs
 * thousands of kernels back to back for minutes, and each runs slower
 * there for reasons the estimator does not model one by one: the clocks
 * the power limit sustains (the GPU's factor, mostly), launch gaps where
 * the host falls behind (Python, autograd and hooks between kernels), the
 * caching allocator, NCCL kernels taking SMs and memory bandwidth beside
 * the compute they overlap, and what the software does that our operator
 * list leaves out (the stack's constant). Every operator time is divided
 * by the product (iter.c). Fitted, not sourced: bench/validate_runs fits
 * it to the published runs and scores every way of sharing it among
 * stacks with each source left out (bench/results/kernel_efficiency.md).
 *
 * A GPU family no fitted run covers takes a prior (est_kernel_eff_prior):
 * the factor of the nearest generation of the same vendor that has one
 * (GH200: the H100's), both here and in every estimate (hwdb's
 * kernel_eff_from).
 */
#include "est.h"

/* The in-sample fit of `build/bench/validate_runs` (bench/validate_runs.c)
 * over the published runs of bench/data/validation_runs.json, objective
 * the mean over sources of their mean absolute percentage error, waived
 * runs out, on a grid of 0.005, for the model with the lowest
 * left-one-source-out error: "Megatron / PyTorch, x GPU", one constant
 * for Megatron's stacks (Megatron-LM 2021 and Megatron-Core: its fused
 * kernels, Transformer Engine's) and one for PyTorch's (torchtitan,
 * llm-foundry's FSDP: eager or compiled), times the GPU's factor. It
 * replaced one constant for every stack ("per GPU family") on
 * 2026-11-29, once Megatron-Core's exposed data-parallel tail was
 * modelled: mean over sources LOSO 7.83 -> 7.68 %, and the MoE runs, held
 * out of every fit, 1-2 points closer. DeepSpeed 2021 has no fitted run
 * (its six are waived) and takes the fit of every run. Rerun
 * validate_runs to refit: it prints these values, and says when this
 * table or hwdb differ from its fit or when another model does better
 * left out. */
static const est_stack_eff stack_eff[SPACE_STACK_COUNT] = {
    [SPACE_STACK_MEGATRON_2021] = {0.815, "Megatron's"},
    [SPACE_STACK_MEGATRON_CORE] = {0.815, "Megatron's"},
    [SPACE_STACK_PYTORCH_EAGER] = {0.795, "PyTorch's"},
    [SPACE_STACK_PYTORCH_COMPILED] = {0.795, "PyTorch's"},
    [SPACE_STACK_DEEPSPEED_2021] = {0.810, "no run of its own: every run's"},
};

const est_stack_eff *est_stack_kernel_eff(space_stack s)
{
    if ((unsigned)s >= SPACE_STACK_COUNT) s = SPACE_STACK_MEGATRON_CORE;
    return &stack_eff[s];
}

double est_gpu_kernel_eff_factor(const hw_gpu *g)
{
    if (g->kernel_eff_factor > 0) return g->kernel_eff_factor;
    if (g->kernel_eff_from && g->kernel_eff_from->kernel_eff_factor > 0)
        return g->kernel_eff_from->kernel_eff_factor;
    return 1;
}

/* Why the nearest generation (hw_gpu_nearest_generation), and not 1 or a
 * mean over families: the factor is a ratio to the A100 (1 by definition,
 * a choice of unit, not a measurement), so a prior must not depend on
 * which family is the unit; a mean that counts the A100's 1 would. What
 * the factor stands for, the clocks a power limit sustains under minutes
 * of dense kernels and the software's gaps between them, is shared most
 * with the nearest generation: the same libraries (cuBLASLt, cuDNN,
 * Transformer Engine, NCCL) and the same trend of peak FLOPs outgrowing
 * the power to sustain them (A100 312 TF at 400 W, H100 989 at 700 W, B200
 * 2250 at 1000 W: hwdb's peaks). Only older or same generations count: a
 * newer one is not evidence of what an older GPU did. hwdb resolves the
 * same rule over its own GPUs (hw_gpu.kernel_eff_from), so an estimate on
 * a GPU no run was fitted on takes the factor validate_runs would. */
double est_kernel_eff_prior(const hw_gpu *g, const hw_gpu *const *fitted,
                            const double *factor, int n)
{
    int k = hw_gpu_nearest_generation(g, fitted, n);
    return k >= 0 ? factor[k] : 1;
}

double est_kernel_eff(const est_ctx *c, const space_layout *l)
{
    if (c->kernel_eff > 0) return c->kernel_eff;
    return est_stack_kernel_eff(space_layout_stack(l))->eff
           * est_gpu_kernel_eff_factor(c->gpu);
}
