/*
 * estimate.c - one layout estimated as its user asks (setup.h:
 * search_estimate_open, for `estimate`): the system found in the
 * database, the GPU count from --gpus or --nodes, the precision checked
 * against the GPU, the system's fitted operator models and collective
 * tables (from the session's cache where there is one), and the layout
 * completed by search_complete where the job leaves fields unset.
 * Writing the estimate is emit/estimate.c's.
 */
#include "setup.h"

#include <string.h>

int search_estimate_open(const search_job *j, const space_model *m,
                         const space_layout *want, const char *system,
                         const hw_db *db, search_cache *cache, int keep_bad,
                         search_estimate *s, tp_err *e)
{
    memset(s, 0, sizeof *s);
    const hw_system *y = hw_find_system(db, system, e);
    if (!y) return TP_EDATA;
    int64_t gpus = j->gpus;
    if (j->opt_nodes > 0) {
        int64_t g = (int64_t)j->opt_nodes * y->gpus_per_node;
        if (gpus > 0 && gpus != g)
            return tp_errf(e, TP_EUSAGE,
                           "--gpus %lld and --nodes %d disagree: %s has %d "
                           "GPUs per node",
                           (long long)gpus, j->opt_nodes, y->name,
                           y->gpus_per_node);
        gpus = g;
    }
    if (gpus <= 0)
        return tp_errf(e, TP_EUSAGE, "estimate needs --gpus or --nodes");
    char why[200];
    if (est_precision_check(y->gpu, want, why, sizeof why) != EST_FEASIBLE)
        return tp_errf(e, TP_EUSAGE, "--precision %s on %s: %s; use %s",
                       est_precision_name(want), y->name, why,
                       y->gpu->peak_flops[HW_FP8] > 0 ? "bf16, fp16 or fp8"
                                                      : "bf16 or fp16");
    if (est_fp8_attention_check(y->gpu, want, why, sizeof why) != EST_FEASIBLE)
        return tp_errf(e, TP_EUSAGE,
                       "--fp8-dot-product-attention on %s: %s; leave it out",
                       y->name, why);
    /* A cache's models and tables are its own (not freed here). */
    const est_models *use_ops =
        search_cache_ops_or_open(cache, y->gpu, keep_bad, &s->ops, e);
    const est_comm *use_comm =
        use_ops ? search_cache_comm_or_load(cache, y, keep_bad, &s->comm, e)
                : NULL;
    if (!use_comm) {
        int rc = e->status ? e->status : TP_EDATA;
        search_estimate_close(s);
        return rc;
    }
    /* TP across nodes only where the user asks for a TP larger than a
     * node; a smaller one must divide the node (space_layout_check). */
    int across = want->tp != SEARCH_UNSET && want->tp > y->gpus_per_node;
    s->ctx = (est_ctx){y, y->gpu, use_ops, use_comm, across, 0, NULL};
    s->gpus = gpus;
    search_complete(&s->ctx, m, want, gpus, &s->r, &s->tried, &s->feasible);
    return TP_OK;
}

void search_estimate_close(search_estimate *s)
{
    if (!s) return;
    est_comm_free(s->comm);
    est_models_free(s->ops);
    memset(s, 0, sizeof *s);
}
