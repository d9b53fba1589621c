/*
 * setup.c - a search's request from what its user asks (setup.h:
 * search_setup_open, shared by `search` and `sweep`): the model, the
 * systems and their fitted models and tables (from the session's cache
 * where there is one), the GPU counts (--gpus lists and ranges,
 * --min/--max-gpus), the grid with --fix and the job's fixed fields, the
 * budgets and the objective.
 */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "setup.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COUNTS 100000

/* ---- options into a request ------------------------------------------- */

static int parse_i64(const char *what, const char *s, int64_t lo, int64_t hi,
                     int64_t *out, tp_err *e)
{
    /* an SI suffix as every count takes (tp_parse_count): 2k */
    long long v;
    if (tp_parse_count(s, lo, hi, &v))
        return tp_errf(e, TP_EUSAGE, "%s: expected an integer in [%lld, %lld] "
                                     "(or with an SI suffix k, M, G or B, T), "
                                     "found '%s'",
                       what, (long long)lo, (long long)hi, s);
    *out = v;
    return TP_OK;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* GPU counts: --gpus N | N,N,... | A-B[:STEP] (STEP default: the smallest
 * node), else whole nodes of every system from --min-gpus to --max-gpus.
 * Sorted, unique, within [min, max]. */
static int gpu_counts(const search_ask *sa, const search_system *sys, int ns,
                      int64_t **out, int *n, tp_err *e)
{
    int64_t lo = sa->min_gpus > 0 ? sa->min_gpus : 1;
    int64_t hi = sa->max_gpus > 0 ? sa->max_gpus : 10000000;
    int64_t *v = tp_xmalloc(MAX_COUNTS * sizeof *v);
    int k = 0, rc = TP_OK;
    int gpn_min = 1 << 30;
    for (int i = 0; i < ns; i++)
        if (sys[i].ctx.sys->gpus_per_node < gpn_min)
            gpn_min = sys[i].ctx.sys->gpus_per_node;
    if (sa->gpus) {
        /* A copy as long as the argument: nothing of it is cut. */
        char *buf = tp_xstrdup(sa->gpus), *t = buf;
        for (int more = 1; more && !rc;) {
            char *comma = strchr(t, ',');
            more = comma != NULL;
            if (comma) *comma = '\0';
            char *item = t;
            t = comma ? comma + 1 : t;
            if (!*item) {
                rc = tp_errf(e, TP_EUSAGE,
                             "--gpus '%s': an empty item; expected N, "
                             "N,N,... or A-B[:STEP]",
                             sa->gpus);
                break;
            }
            char *dash = strchr(item, '-');
            if (!dash) {
                int64_t g = 0;
                rc = parse_i64("--gpus", item, 1, 10000000, &g, e);
                if (!rc && k == MAX_COUNTS)
                    rc = tp_errf(e, TP_EUSAGE,
                                 "--gpus: more than %d GPU counts",
                                 MAX_COUNTS);
                if (!rc) v[k++] = g;
                continue;
            }
            *dash = '\0';
            char *colon = strchr(dash + 1, ':');
            if (colon) *colon = '\0';
            int64_t a = 0, b = 0, step = gpn_min;
            rc = parse_i64("--gpus (range start)", item, 1, 10000000, &a, e);
            if (!rc) rc = parse_i64("--gpus (range end)", dash + 1, a, 10000000, &b, e);
            if (!rc && colon)
                rc = parse_i64("--gpus (range step)", colon + 1, 1, 10000000,
                               &step, e);
            for (int64_t g = a; !rc && g <= b; g += step) {
                if (k == MAX_COUNTS) {
                    rc = tp_errf(e, TP_EUSAGE,
                                 "--gpus: more than %d GPU counts; use a "
                                 "larger step", MAX_COUNTS);
                    break;
                }
                v[k++] = g;
            }
        }
        free(buf);
    } else {
        if (sa->max_gpus <= 0) {
            free(v);
            return tp_errf(e, TP_EUSAGE,
                           "search needs --max-gpus N (or --gpus LIST)");
        }
        for (int i = 0; i < ns && !rc; i++) {
            int64_t gpn = sys[i].ctx.sys->gpus_per_node;
            for (int64_t g = gpn; g <= hi; g += gpn) {
                if (k == MAX_COUNTS) {
                    rc = tp_errf(e, TP_EUSAGE,
                                 "--max-gpus %lld: more than %d GPU counts",
                                 (long long)hi, MAX_COUNTS);
                    break;
                }
                v[k++] = g;
            }
        }
    }
    if (rc) {
        free(v);
        return rc;
    }
    qsort(v, (size_t)k, sizeof *v, cmp_i64);
    int w = 0;
    for (int i = 0; i < k; i++)
        if (v[i] >= lo && v[i] <= hi && (w == 0 || v[i] != v[w - 1])) v[w++] = v[i];
    if (w == 0) {
        free(v);
        return tp_errf(e, TP_EUSAGE,
                       "no GPU count between --min-gpus %lld and --max-gpus "
                       "%lld (whole nodes of %d GPUs by default)",
                       (long long)lo, (long long)hi, gpn_min);
    }
    *out = v;
    *n = w;
    return TP_OK;
}

/* --fix tp=8,pp=4,recompute=full,... and the layout options. */
static int apply_fix(space_grid *g, const char *key, const char *val,
                     const char *where, int *dim, int64_t *value, tp_err *e)
{
    int d = -1;
    for (int i = 0; i < SPACE_DIM_COUNT; i++)
        if (tp_streq_ci(key, space_dim_names[i])) d = i;
    if (d < 0)
        return tp_errf(e, TP_EUSAGE,
                       "%s: unknown field '%s' (expected tp, pp, cp, ep, etp, "
                       "vpp, split, mbs, sp, recompute or zero)", where, key);
    int64_t v;
    if (d == SPACE_DIM_RECOMPUTE) {
        v = -1;
        for (int i = 0; i < SPACE_RECOMPUTE_COUNT; i++)
            if (tp_streq_ci(val, space_recompute_names[i])) v = i;
        if (v < 0)
            return tp_errf(e, TP_EUSAGE,
                           "%s: recompute=%s: expected none, selective, full or "
                           "selective-op",
                           where, val);
    } else if (d == SPACE_DIM_SPLIT) {
        v = -1;
        for (int i = 0; i < SPACE_SPLIT_KIND_COUNT; i++)
            if (tp_streq_ci(val, space_split_kind_names[i])) v = i;
        if (v < 0)
            return tp_errf(e, TP_EUSAGE,
                           "%s: split=%s: expected even, embedding, loss, "
                           "embedding+loss or ends (or the split options: "
                           "--account-for-embedding-in-pipeline-split, ...)",
                           where, val);
    } else if (d == SPACE_DIM_SP && (tp_streq_ci(val, "on") || tp_streq_ci(val, "true"))) {
        v = 1;
    } else if (d == SPACE_DIM_SP && (tp_streq_ci(val, "off") || tp_streq_ci(val, "false"))) {
        v = 0;
    } else {
        long long x;
        if (tp_parse_int(val, 0, 1048576, &x)) x = -1;
        v = x;
    }
    if (space_grid_fix(g, (space_dim)d, v))
        return tp_errf(e, TP_EUSAGE, "%s: %s=%s is out of range (%s)", where, key,
                       val,
                       d == SPACE_DIM_SP ? "0 or 1"
                       : d == SPACE_DIM_ZERO ? "0 to 3"
                       : d == SPACE_DIM_ETP ? "an integer in [0, 1048576], 0: "
                                              "= tp"
                                             : "an integer in [1, 1048576]");
    *dim = d;
    *value = v;
    return TP_OK;
}

static int fixes(const search_job *j, const search_ask *a, space_grid *g,
                 tp_err *e)
{
    int rc = TP_OK, d;
    char v[32];
    int64_t x, set[SPACE_DIM_COUNT]; /* what the user asked for, -2 unset */
    const char *by[SPACE_DIM_COUNT];
    for (int i = 0; i < SPACE_DIM_COUNT; i++) set[i] = -2, by[i] = NULL;
    /* Explicit layout options fix their dimension; the framework's default
     * ZeRO stage is fixed too but may be overridden by --fix. */
#define FIXV(key, val)                                                        \
    do {                                                                      \
        snprintf(v, sizeof v, "%lld", (long long)(val));                      \
        if ((rc = apply_fix(g, key, v, "layout option", &d, &x, e)))          \
            return rc;                                                        \
        set[d] = x, by[d] = "a layout option";                                \
    } while (0)
    if (j->tp_set) FIXV("tp", j->tp);
    if (j->pp > 0) FIXV("pp", j->pp);
    if (j->cp > 0) FIXV("cp", j->cp);
    if (j->ep > 0) FIXV("ep", j->ep);
    if (j->etp > 0) FIXV("etp", j->etp);
    if (j->vstages > 0) FIXV("vpp", j->vstages);
    /* a layout string gives VPP on a PP given */
    else if (j->pp_layout && j->pp > 0 && j->pp_layout->n % j->pp == 0)
        FIXV("vpp", j->pp_layout->n / j->pp);
    /* the split options: the job's own split, not searched */
    if (j->split_set) {
        if ((rc = apply_fix(g, "split", "given", "layout option", &d, &x, e)))
            return rc;
        set[d] = x, by[d] = "a pipeline split option";
    }
    if (j->mbs > 0) FIXV("mbs", j->mbs);
    if (j->sp >= 0) FIXV("sp", j->sp);
    if (j->recompute >= 0) { /* by name: apply_fix reads names */
        if ((rc = apply_fix(g, "recompute",
                            space_recompute_names[j->recompute],
                            "layout option", &d, &x, e)))
            return rc;
        set[d] = x, by[d] = "a layout option";
    }
    if (j->zero >= 0) FIXV("zero", j->zero);
    else if (search_job_zero_stage(j) >= 0) {
        snprintf(v, sizeof v, "%d", search_job_zero_stage(j));
        if ((rc = apply_fix(g, "zero", v, "layout option", &d, &x, e)))
            return rc;
    }
#undef FIXV
    if (!a->fix) return TP_OK;
    char *buf = tp_xstrdup(a->fix), *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t && !rc;
         t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        if (!eq) {
            rc = tp_errf(e, TP_EUSAGE,
                         "--fix: expected KEY=VALUE pairs, e.g. tp=8,pp=4, "
                         "found '%s'", t);
            break;
        }
        *eq = '\0';
        rc = apply_fix(g, t, eq + 1, "--fix", &d, &x, e);
        if (!rc && set[d] != -2 && set[d] != x)
            rc = tp_errf(e, TP_EUSAGE,
                         "--fix %s=%s: %s already asks for %s=%lld; give one",
                         t, eq + 1, by[d], space_dim_names[d],
                         (long long)set[d]);
        if (!rc) set[d] = x, by[d] = "--fix";
    }
    free(buf);
    return rc;
}

/* --fix ep=N / etp=N on a dense model: an error; --fix ep=1 is its one
 * value (0: no expert parallelism). */
static int dense_ep(const space_model *m, space_grid *g, tp_err *e)
{
    if (m->num_experts > 0) return TP_OK;
    int64_t ep = g->v[SPACE_DIM_EP][0], etp = g->v[SPACE_DIM_ETP][0];
    if (ep > 1 || etp > 0)
        return tp_errf(e, TP_EUSAGE,
                       "--fix %s=%lld: %s is dense; expert parallelism needs "
                       "a mixture of experts",
                       ep > 1 ? "ep" : "etp", (long long)(ep > 1 ? ep : etp),
                       m->name);
    g->v[SPACE_DIM_EP][0] = 0;
    return TP_OK;
}

/* What the estimator does not model of an MoE model is refused by its
 * name before the search (issue 19), not searched into "nothing fits"
 * with a memory shortfall: one plain layout (one GPU, no parallelism) is
 * estimated and a moe_not_modelled answer ends the search with its
 * message. What depends on the layout is counted by the search under the
 * same name. */
static int moe_modelled(const space_model *m, const est_ctx *c,
                        const space_layout *base, tp_err *e)
{
    if (m->num_experts <= 0) return TP_OK;
    space_layout l = *base;
    l.tp = l.pp = l.cp = l.dp = l.vpp = l.ep = 1;
    l.etp = 0;
    /* flex needs expert TP x EP > 1: the smallest EP above 1 */
    if (l.moe_dispatcher == SPACE_MOE_FLEX)
        for (int64_t x = 2; x <= m->num_experts; x++)
            if (m->num_experts % x == 0) {
                l.ep = l.dp = x;
                break;
            }
    l.mbs = 1;
    l.gbs = base->gbs;
    l.sp = 0;
    est_result r;
    est_estimate(c, m, &l, &r);
    if (!r.feasible && r.reason == EST_MOE)
        return tp_errf(e, TP_EDATA,
                       "%s (a mixture of experts, %lld experts, top %lld): "
                       "%s (%s); nothing to search",
                       m->name, (long long)m->num_experts,
                       (long long)m->top_k, r.message,
                       est_reason_names[EST_MOE]);
    return TP_OK;
}

int search_setup_open(const search_job *j, const search_ask *a,
                      const hw_db *db, search_cache *cache, search_setup *s,
                      tp_err *e)
{
    char *sysbuf = NULL; /* --system's names, split in place */
    memset(s, 0, sizeof *s);
    if (!j->model && !a->model)
        return tp_errf(e, TP_EUSAGE, "search needs --model (or --near FILE)");
    if (!a->systems) return tp_errf(e, TP_EUSAGE, "search needs --system");
    if (j->seq_length <= 0) return tp_errf(e, TP_EUSAGE, "search needs --seq-length");
    if (j->gbs <= 0) return tp_errf(e, TP_EUSAGE, "search needs --global-batch-size");
    if (j->vpp_layers > 0)
        return tp_errf(e, TP_EUSAGE,
                       "search: use --fix vpp=N (virtual stages per pipeline "
                       "rank) instead of --num-layers-per-virtual-pipeline-stage");
    if (!(j->tokens > 0)) {
        const char *need = a->budget_usd > 0        ? "--budget-usd"
                           : a->budget_gpu_hours > 0 ? "--budget-gpu-hours"
                           : a->deadline_s > 0       ? "--deadline"
                           : a->objective == SEARCH_BY_TRAIN_TIME
                               ? "--objective time-to-train"
                               : NULL;
        if (need) return tp_errf(e, TP_EUSAGE, "%s needs --tokens", need);
    }
    if (a->min_gpus > 0 && a->max_gpus > 0 && a->min_gpus > a->max_gpus)
        return tp_errf(e, TP_EUSAGE, "--min-gpus %lld is above --max-gpus %lld",
                       (long long)a->min_gpus, (long long)a->max_gpus);
    int rc = search_job_model(j, a->model, &s->m, e);
    if (rc) return rc;
    search_system *sys = s->sys;
    est_models **ops = s->ops;
    est_comm **comm = s->comm;
    int ns = 0;
    space_layout base;
    memset(&base, 0, sizeof base);
    base.seq = j->seq_length;
    base.gbs = j->gbs;
    base.dtype = j->precision >= 0 ? j->precision : HW_BF16;
    rc = search_job_check_recompute(j, &s->m, e);
    if (!rc) rc = search_job_check_docs(j, e);
    if (!rc) rc = search_job_check_moe(j, &s->m, e);
    if (!rc) rc = search_job_check_savers(j, &s->m, e);
    if (!rc) rc = search_job_check_mech(j, &s->m, e);
    if (rc) return rc;
    search_job_software(j, &base);
    base.tp = base.pp = base.cp = base.vpp = base.mbs = 1;
    /* the job's pipeline split where its options give one (the grid's
     * split field is then "given": these fields as they are) */
    if (j->split_set) {
        base.pp_account = j->pp_account;
        base.pp_first = j->pp_first, base.pp_last = j->pp_last;
        base.pp_layout = j->pp_layout;
    }
    {
        sysbuf = tp_xstrdup(a->systems);
        char *save = NULL;
        for (char *t = strtok_r(sysbuf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (ns == SEARCH_MAX_SYSTEMS) {
                rc = tp_errf(e, TP_EUSAGE, "--system: at most %d systems",
                             SEARCH_MAX_SYSTEMS);
                goto done;
            }
            const hw_system *y = hw_find_system(db, t, e);
            if (!y) {
                rc = TP_EDATA;
                goto done;
            }
            for (int i = 0; i < ns; i++)
                if (sys[i].ctx.sys == y) {
                    rc = tp_errf(e, TP_EUSAGE, "--system: %s is listed twice",
                                 y->name);
                    goto done;
                }
            char why[200];
            if (est_precision_check(y->gpu, &base, why, sizeof why)
                != EST_FEASIBLE) {
                rc = tp_errf(e, TP_EUSAGE,
                             "--precision %s on %s: %s; use bf16 or fp16, "
                             "or leave %s out",
                             est_precision_name(&base), y->name, why, y->name);
                goto done;
            }
            if (est_fp8_attention_check(y->gpu, &base, why, sizeof why)
                != EST_FEASIBLE) {
                rc = tp_errf(e, TP_EUSAGE,
                             "--fp8-dot-product-attention on %s: %s; leave it "
                             "out, or leave %s out",
                             y->name, why, y->name);
                goto done;
            }
            search_system *sy = &sys[ns];
            memset(sy, 0, sizeof *sy);
            sy->price_usd_per_gpu_hour = a->price > 0 ? a->price
                                                      : y->price_usd_per_gpu_hour;
            if (!(sy->price_usd_per_gpu_hour > 0)) {
                rc = tp_errf(e, TP_EDATA,
                             "%s: no price per GPU-hour in hwdb "
                             "(price_usd_per_gpu_hour); pass --price USD",
                             y->name);
                goto done;
            }
            /* One set of operator models per GPU. */
            const est_models *om = NULL;
            const est_comm *cm = NULL;
            for (int i = 0; i < ns; i++)
                if (sys[i].ctx.gpu == y->gpu) om = sys[i].ctx.ops;
            if (!om) om = search_cache_ops_or_open(cache, y->gpu, a->keep_bad, &ops[ns], e);
            if (!om) {
                rc = e->status ? e->status : TP_EDATA;
                goto done;
            }
            cm = search_cache_comm_or_load(cache, y, a->keep_bad, &comm[ns], e);
            if (!cm) {
                rc = e->status ? e->status : TP_EDATA;
                ns++;
                goto done;
            }
            /* TP across nodes only where the user pins a TP that needs it. */
            int across = j->tp_set && j->tp > y->gpus_per_node;
            sy->ctx = (est_ctx){y, y->gpu, om, cm, across, 0, NULL};
            int64_t maxg = a->max_gpus > 0 ? a->max_gpus : 10000000;
            space_grid_default(&sy->grid, &s->m, across ? 1024 : y->gpus_per_node,
                               maxg, maxg);
            /* torchtitan has no attention-core recompute (Megatron-LM's
             * selective): its selective checkpointing is the op-level
             * policy (torchtitan's activation_checkpoint.py; issue 18) */
            if (j->framework == SPACE_FW_TORCHTITAN)
                for (int i = 0; i < sy->grid.n[SPACE_DIM_RECOMPUTE]; i++)
                    if (sy->grid.v[SPACE_DIM_RECOMPUTE][i]
                        == SPACE_RECOMPUTE_SELECTIVE)
                        sy->grid.v[SPACE_DIM_RECOMPUTE][i] =
                            SPACE_RECOMPUTE_SELECTIVE_OP;
            /* Whole nodes of this system unless the counts are given. */
            sy->gpus_multiple = a->gpus ? 1 : y->gpus_per_node;
            ns++;
            if ((rc = fixes(j, a, &sy->grid, e))) goto done;
            if ((rc = dense_ep(&s->m, &sy->grid, e))) goto done;
        }
        if (ns == 0) {
            rc = tp_errf(e, TP_EUSAGE, "--system: no system named");
            goto done;
        }
    }
    if ((rc = gpu_counts(a, sys, ns, &s->counts, &s->n_counts, e))) goto done;
    if ((rc = moe_modelled(&s->m, &sys[0].ctx, &base, e))) goto done;

    s->q = (search_request){&s->m, sys, ns, base, s->counts, s->n_counts,
                            (search_objective)a->objective,
                            a->top_k > 0 ? a->top_k : 10, j->tokens,
                            a->budget_usd, a->budget_gpu_hours, a->deadline_s,
                            a->max_mem_fraction, a->no_prune,
                            a->keep_admitted, !a->no_savers,
                            0, !j->cuda_graph_set, !j->pp_schedule_set};
done:
    free(sysbuf);
    s->ns = ns;
    if (rc) search_setup_close(s);
    return rc;
}

void search_setup_close(search_setup *s)
{
    if (!s) return;
    free(s->counts);
    for (int i = 0; i < s->ns; i++) {
        est_comm_free(s->comm[i]);
        est_models_free(s->ops[i]);
    }
    memset(s, 0, sizeof *s);
}
