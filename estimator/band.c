/*
 * band.c - the error band of an estimate: how far the estimator was from
 * the published runs most like it, as bench/validate_runs measured it.
 *
 * An estimate alone says nothing of its error, and the error differs by
 * software stack and GPU family (bench/results/validate_runs.md: 3 to
 * 12 % per source). The band is the mean absolute step-time error over
 * the runs of the estimate's kind (dense or MoE) on its stack and GPU
 * family, each dense run scored with its own source left out of the fit
 * (so the band is what an unseen run gets), each MoE run as estimated
 * (held out of every fit). Where that basis has fewer than
 * EST_BAND_MIN_RUNS runs, the next wider one: the GPU family over every
 * stack, then the stack over every family, then every run of its kind.
 * Waived runs count in their own stack's bands (a user of that stack
 * meets their error too), not in another stack's.
 *
 * The runs themselves are in band_runs.c, written by validate_runs
 * --write-bands; validate_runs says when that table differs from what it
 * measures.
 */
#include "est.h"

#include <math.h>
#include <string.h>

const char *const est_band_basis_names[EST_BAND_BASIS_COUNT] = {
    [EST_BAND_STACK_FAMILY] = "stack and GPU family",
    [EST_BAND_FAMILY] = "GPU family",
    [EST_BAND_STACK] = "stack",
    [EST_BAND_ALL] = "all runs",
    [EST_BAND_NONE] = "none",
};
_Static_assert(sizeof est_band_basis_names / sizeof est_band_basis_names[0]
                   == EST_BAND_BASIS_COUNT,
               "a name per basis");

/* Whether run x belongs to basis b of an estimate of (kind, stack, fam). */
static int in_basis(const est_validated_run *x, est_band_basis b, int moe,
                    space_stack stack, const char *fam)
{
    if (x->moe != moe) return 0;
    /* A waived run's error is a mechanism of its own stack not modelled:
     * it counts in its stack's bands, not in another stack's. */
    if (x->waived && x->stack != stack) return 0;
    switch (b) {
    case EST_BAND_STACK_FAMILY:
        return x->stack == stack && strcmp(x->family, fam) == 0;
    case EST_BAND_FAMILY: return strcmp(x->family, fam) == 0;
    case EST_BAND_STACK: return x->stack == stack;
    case EST_BAND_ALL: return 1;
    default: return 0;
    }
}

static double log_ratio(double a, double b)
{
    return a > 0 && b > 0 ? fabs(log(a / b)) : 3;
}

void est_error_band(const hw_gpu *g, const space_model *m,
                    const space_layout *l, int64_t gpus, est_band *b)
{
    memset(b, 0, sizeof *b);
    b->basis = EST_BAND_NONE;
    const hw_gpu *f = g->models_like ? g->models_like : g;
    int moe = m->num_experts > 0;
    space_stack stack = space_layout_stack(l);
    est_band_basis basis = EST_BAND_STACK_FAMILY;
    for (; basis < EST_BAND_NONE; basis++) {
        int k = 0;
        for (int i = 0; i < est_n_validated_runs; i++)
            k += in_basis(&est_validated_runs[i], basis, moe, stack, f->name);
        if (k >= EST_BAND_MIN_RUNS || (basis == EST_BAND_ALL && k > 0)) break;
    }
    if (basis == EST_BAND_NONE) return;
    space_params p;
    space_model_params(m, 1, &p);
    double active = (double)(p.active > 0 ? p.active : p.total);
    double best = INFINITY, sa = 0, ss = 0;
    int slower = 0;
    for (int i = 0; i < est_n_validated_runs; i++) {
        const est_validated_run *x = &est_validated_runs[i];
        if (!in_basis(x, basis, moe, stack, f->name)) continue;
        double e = x->err_pct;
        b->runs++;
        sa += fabs(e), ss += e, slower += e > 0;
        if (fabs(e) > b->worst_pct) b->worst_pct = fabs(e);
        /* Alike: the size that sets the kernels' shapes, the scale that
         * sets the collectives, then the layout. */
        double d = log_ratio(active, x->active)
                   + 0.5 * log_ratio((double)gpus, (double)x->gpus)
                   + 0.25 * ((x->tp != l->tp) + (x->pp != l->pp))
                   + 0.1 * ((x->mbs != l->mbs) + (x->seq != l->seq));
        if (d < best) best = d, b->nearest = x;
    }
    b->basis = basis;
    b->mape_pct = sa / b->runs;
    b->signed_pct = ss / b->runs;
    b->slower_share = (double)slower / b->runs;
}
