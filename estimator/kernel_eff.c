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
 */
#include "est.h"

/* The in-sample fit of `build/bench/validate_runs` (bench/validate_runs.c)
 * over the published runs of bench/data/validation_runs.json, objective
 * the mean over sources of their mean absolute percentage error, waived
 * runs out, on a grid of 0.005, for the model with the lowest
 * left-one-source-out error: "per GPU family", one constant for every
 * stack. Constants of their own for the stacks (Megatron-LM 2021,
 * Megatron-Core, PyTorch eager and compiled, apart or grouped) fitted
 * closer in sample but did worse with each source left out: with the
 * GPU's factor, the runs do not tell the stacks apart (they came out
 * within 0.07 of each other). Rerun validate_runs to refit: it prints
 * these values, and says when this table or hwdb differ from its fit or
 * when another model does better left out. */
static const est_stack_eff stack_eff[SPACE_STACK_COUNT] = {
    [SPACE_STACK_MEGATRON_2021] = {0.810, "one constant for every stack"},
    [SPACE_STACK_MEGATRON_CORE] = {0.810, "one constant for every stack"},
    [SPACE_STACK_PYTORCH_EAGER] = {0.810, "one constant for every stack"},
    [SPACE_STACK_PYTORCH_COMPILED] = {0.810, "one constant for every stack"},
    [SPACE_STACK_DEEPSPEED_2021] = {0.810, "one constant for every stack"},
};

const est_stack_eff *est_stack_kernel_eff(space_stack s)
{
    if ((unsigned)s >= SPACE_STACK_COUNT) s = SPACE_STACK_MEGATRON_CORE;
    return &stack_eff[s];
}

double est_gpu_kernel_eff_factor(const hw_gpu *g)
{
    if (g->kernel_eff_factor > 0) return g->kernel_eff_factor;
    if (g->models_like && g->models_like->kernel_eff_factor > 0)
        return g->models_like->kernel_eff_factor;
    return 1;
}

double est_kernel_eff(const est_ctx *c, const space_layout *l)
{
    if (c->kernel_eff > 0) return c->kernel_eff;
    return est_stack_kernel_eff(space_layout_stack(l))->eff
           * est_gpu_kernel_eff_factor(c->gpu);
}
