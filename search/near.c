/*
 * near.c - `search --near`: the user's own job (read from a Megatron-LM
 * launch, NeMo overrides or a torchtitan config by the command line)
 * searched as the same job (model, system, GPUs, sequence, batch,
 * precision, software) over every layout, and estimated as it ran, so the
 * search's best can be set beside it (setup.h). With the run's log, the
 * job's estimate is compared with the log and, calibrated, every layout
 * is estimated at the run's kernel efficiency (estimator/train_log.c).
 * The words and JSON of the comparison are emit/near.c's.
 */
#include "setup.h"

#include <stdio.h>
#include <string.h>

int search_own_open(search_job *j, search_ask *a, const hw_db *db,
                    search_own *n, tp_err *e)
{
    if (!a->systems)
        return tp_errf(e, TP_EUSAGE, "search --near needs --system");
    if (strchr(a->systems, ','))
        return tp_errf(e, TP_EUSAGE, "search --near: one --system (the "
                       "job's), found '%s'", a->systems);
    const hw_system *y = hw_find_system(db, a->systems, e);
    if (!y) return TP_EDATA;
    if (j->gpus <= 0 && j->opt_nodes > 0)
        j->gpus = (int64_t)j->opt_nodes * y->gpus_per_node;
    if (j->gpus <= 0)
        return tp_errf(e, TP_EUSAGE,
                       "search: %s does not say how many GPUs%s; pass "
                       "--gpus N",
                       n->file,
                       n->megatron
                           ? " (no #SBATCH --nodes and --gpus-per-node, no "
                             "torchrun --nnodes and --nproc-per-node)"
                           : "");
    n->gpus = j->gpus;
    int rc = search_job_layout(j, &n->m, &n->want, e);
    if (rc) return rc;
    /* the search: the job's GPUs unless --gpus or --max-gpus say more */
    if (!a->gpus && a->max_gpus <= 0) {
        snprintf(n->gpus_arg, sizeof n->gpus_arg, "%lld", (long long)j->gpus);
        a->gpus = n->gpus_arg;
    }
    j->tp_set = 0;
    j->tp = 1;
    j->pp = j->cp = j->mbs = j->vstages = j->vpp_layers = 0;
    j->ep = j->etp = 0; /* searched too; the dispatcher stays the job's */
    j->sp = j->recompute = j->zero = -1;
    j->recompute_method = 0;
    j->recompute_layers = 0;
    j->sw_set &= ~(unsigned)SEARCH_SW_RC_METHOD;
    /* the pipeline split too: every split Megatron-Core runs (the job's
     * layout string, if any, fits only the job's PP and VPP) */
    j->split_set = 0, j->pp_account = 0;
    j->pp_first = j->pp_last = 0;
    j->pp_layout = NULL;
    j->from_launch = 0;
    return TP_OK;
}

/* The job's layout completed as `estimate` would and estimated on the
 * search's (one) system, and its tag. */
static void job_estimate(search_own *n, const search_setup *s)
{
    est_ctx c = s->sys[0].ctx;
    c.tp_across_nodes = n->want.tp != SEARCH_UNSET
                        && n->want.tp > c.sys->gpus_per_node;
    int64_t tried = 0, feasible = 0;
    search_complete(&c, &n->m, &n->want, n->gpus, &n->r, &tried, &feasible);
    space_layout_tag(&n->r.layout, c.sys->gpus_per_node, n->tag,
                     sizeof n->tag);
}

void search_own_estimate(search_own *n, search_setup *s,
                         const est_train_log *lg, int calibrate,
                         est_run_fed *fed)
{
    job_estimate(n, s);
    if (!lg) return;
    est_fed_back(fed, lg, &s->sys[0].ctx, &n->m, &n->r, calibrate);
    if (fed->calibrated > 0) {
        for (int i = 0; i < s->ns; i++) s->sys[i].ctx.kernel_eff = fed->eff;
        job_estimate(n, s);
    }
}

void search_own_gain_of(const search_own *n, const est_result *best,
                        const search_request *q, search_own_gain *g)
{
    const est_result *r = &n->r;
    g->time_s = r->feasible ? r->iteration_s - best->iteration_s : 0;
    g->gpu_hours = 0;
    if (q->tokens > 0) {
        double its = q->tokens / ((double)q->base.gbs * (double)q->base.seq);
        g->gpu_hours = its * g->time_s * (double)n->gpus / 3600;
    }
}
