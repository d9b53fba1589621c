/*
 * cmd_search.c - `trainplan search`: every valid layout of a model on one
 * or more systems up to a number of GPUs (search/plan.c), printed as a
 * ranked top-k, the Pareto front of time against cost, the counts of
 * layouts rejected, pruned and estimated, and, for each layout, how to
 * launch it (launch.c; in JSON also as data, launch_args). Formats:
 * table, JSON, CSV, JSON Lines; --svg writes a plot of every admitted
 * layout with the front highlighted (plot/svg.c).
 *
 * Layout tag (space_layout_tag): n{nodes}g{gpus per node}_tp{}pp{}dp{}
 * [cp{}]_mbs{}[_vpp{}][_sp][_rsel|_rfull[_uN|_bN]|_rop][_z1|_z2|_z3]: _sp
 * sequence parallelism, _rsel/_rfull/_rop selective/full/op-level
 * recomputation (_uN/_bN: uniform groups of N, the first N of a chunk),
 * _zN ZeRO stage N (_z1: Megatron-LM's distributed optimizer).
 *
 * Determinism: everything printed comes from the search's answer, which
 * does not depend on the thread count; only stats.elapsed_s and
 * stats.threads do, and --no-timing leaves them out.
 */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "cli.h"
#include "launch.h"
#include "plot.h"
#include "search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COUNTS 100000

/* ---- options into a request ------------------------------------------- */

static int parse_i64(const char *what, const char *s, int64_t lo, int64_t hi,
                     int64_t *out, tp_err *e)
{
    /* an SI suffix as every count takes (cli_parse_count): 2k */
    long long v;
    if (cli_parse_count(s, lo, hi, &v))
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
static int gpu_counts(const cli_opts *o, const search_system *sys, int ns,
                      int64_t **out, int *n, tp_err *e)
{
    int64_t lo = o->min_gpus > 0 ? o->min_gpus : 1;
    int64_t hi = o->max_gpus > 0 ? o->max_gpus : 10000000;
    int64_t *v = tp_xmalloc(MAX_COUNTS * sizeof *v);
    int k = 0, rc = TP_OK;
    int gpn_min = 1 << 30;
    for (int i = 0; i < ns; i++)
        if (sys[i].ctx.sys->gpus_per_node < gpn_min)
            gpn_min = sys[i].ctx.sys->gpus_per_node;
    if (o->gpus_arg) {
        /* A copy as long as the argument: nothing of it is cut. */
        char *buf = tp_xstrdup(o->gpus_arg), *t = buf;
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
                             o->gpus_arg);
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
        if (o->max_gpus <= 0) {
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

static int fixes(const cli_opts *o, space_grid *g, tp_err *e)
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
    if (o->job.tp_set) FIXV("tp", o->job.tp);
    if (o->job.pp > 0) FIXV("pp", o->job.pp);
    if (o->job.cp > 0) FIXV("cp", o->job.cp);
    if (o->job.ep > 0) FIXV("ep", o->job.ep);
    if (o->job.etp > 0) FIXV("etp", o->job.etp);
    if (o->job.vstages > 0) FIXV("vpp", o->job.vstages);
    /* a layout string gives VPP on a PP given */
    else if (o->job.pp_layout && o->job.pp > 0 && o->job.pp_layout->n % o->job.pp == 0)
        FIXV("vpp", o->job.pp_layout->n / o->job.pp);
    /* the split options: the job's own split, not searched */
    if (o->job.split_set) {
        if ((rc = apply_fix(g, "split", "given", "layout option", &d, &x, e)))
            return rc;
        set[d] = x, by[d] = "a pipeline split option";
    }
    if (o->job.mbs > 0) FIXV("mbs", o->job.mbs);
    if (o->job.sp >= 0) FIXV("sp", o->job.sp);
    if (o->job.recompute >= 0) { /* by name: apply_fix reads names */
        if ((rc = apply_fix(g, "recompute",
                            space_recompute_names[o->job.recompute],
                            "layout option", &d, &x, e)))
            return rc;
        set[d] = x, by[d] = "a layout option";
    }
    if (o->job.zero >= 0) FIXV("zero", o->job.zero);
    else if (search_job_zero_stage(&o->job) >= 0) {
        snprintf(v, sizeof v, "%d", search_job_zero_stage(&o->job));
        if ((rc = apply_fix(g, "zero", v, "layout option", &d, &x, e)))
            return rc;
    }
#undef FIXV
    if (!o->fix) return TP_OK;
    char *buf = tp_xstrdup(o->fix), *save = NULL;
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

/* ---- figures of one point ------------------------------------------- */

typedef struct row {
    const search_point *p;
    est_result r;
    space_layout l;
    const search_system *sys;
    char tag[96];
    double train_s, gpu_hours, cost_usd; /* of --tokens; 0 without */
    double margin, headroom, exposed_s; /* bytes: the margin added to the
                                          peak, and what is left after both */
    est_band band; /* the estimate's measured error (est_error_band) */
    int tied;      /* within the error band of the best (row_tie) */
} row;

/* What the ranking orders by, per layout: the iteration time (time,
 * throughput and time to train order alike), or its cost. */
static double row_value(const row *w, const search_request *q)
{
    return q->objective == SEARCH_BY_COST ? w->p->cost_usd : w->r.iteration_s;
}

/* w's error band, and whether w is tied with the best row: its objective
 * within the larger of the two bands of the best's (the estimator cannot
 * tell them apart on the published runs). The best is tied with none. */
static void row_tie(row *w, const row *best, const search_request *q)
{
    est_error_band(w->sys->ctx.gpu, q->model, &w->r.layout, w->p->gpus,
                   &w->band);
    w->tied = 0;
    if (w == best
        || (w->sys == best->sys && strcmp(w->tag, best->tag) == 0))
        return;
    double b = fmax(w->band.mape_pct, best->band.mape_pct) / 100;
    double v0 = row_value(best, q), v = row_value(w, q);
    w->tied = w->band.basis != EST_BAND_NONE && v0 > 0 && v <= v0 * (1 + b);
}

/* The launch of row w of search q: torchtitan's config for tt_version,
 * NeMo's in nemo_format. */
static void launch_of(launch_plan *c, const row *w, const search_request *q,
                      int tt_version, int nemo_format)
{
    memset(c, 0, sizeof *c);
    c->layout = &w->r.layout;
    c->model = q->model;
    c->system = w->sys->ctx.sys->name;
    c->gpus_per_node = w->sys->ctx.sys->gpus_per_node;
    c->gpu_arch = w->sys->ctx.gpu->arch;
    c->tokens = q->tokens;
    c->iteration_s = w->r.iteration_s;
    c->torchtitan_version = tt_version;
    c->nemo_format = nemo_format;
}

static void row_fill(row *w, const search_request *q, const search_point *p)
{
    memset(w, 0, sizeof *w);
    w->p = p;
    w->sys = &q->systems[p->sys];
    search_point_layout(q, p, &w->l);
    search_point_estimate(q, p, &w->r);
    space_layout_tag(&w->r.layout, w->sys->ctx.sys->gpus_per_node, w->tag,
                     sizeof w->tag);
    double its = q->tokens > 0
                     ? q->tokens / ((double)q->base.gbs * (double)q->base.seq)
                     : 0;
    w->train_s = its * w->r.iteration_s;
    w->gpu_hours = w->train_s * (double)p->gpus / 3600;
    w->cost_usd = w->gpu_hours * w->sys->price_usd_per_gpu_hour;
    /* The limit is the memory over 1 + margin, or the fraction asked for
     * (search_memory_limit); the margin is the peak times the measured
     * share in the first case, none in the second. */
    double cap = w->sys->ctx.gpu->mem_bytes;
    int frac = q->max_memory_fraction > 0;
    w->margin = frac ? 0 : w->r.mem.total * est_memory_margin(&w->r.layout);
    w->headroom = (frac ? q->max_memory_fraction * cap : cap) - w->r.mem.total
                  - w->margin;
    const est_breakdown *b = &w->r.time;
    w->exposed_s = b->tp_s + b->cp_s + b->pp_p2p_s + b->dp_s + b->ep_s;
}


/* forms: the launches a row carries (CLI_LAUNCH_FORM_* bits; a search's
 * JSON every one, a sweep's records what its --launch asks) */
static cJSON *row_json(const row *w, const search_request *q, const char *set,
                       int rank, int tt_version, int nemo_format,
                       unsigned forms)
{
    const space_layout *l = &w->r.layout;
    cJSON *j = cJSON_CreateObject();
    if (set) cJSON_AddStringToObject(j, "set", set);
    cJSON_AddNumberToObject(j, "rank", rank);
    cJSON_AddBoolToObject(j, "tied_with_best", w->tied);
    cJSON_AddStringToObject(j, "layout", w->tag);
    cJSON_AddStringToObject(j, "system", w->sys->ctx.sys->name);
    cJSON_AddNumberToObject(j, "gpus", (double)w->p->gpus);
    cJSON_AddNumberToObject(j, "tensor_model_parallel_size", (double)l->tp);
    cJSON_AddNumberToObject(j, "pipeline_model_parallel_size", (double)l->pp);
    cJSON_AddNumberToObject(j, "virtual_stages_per_pipeline_rank", (double)l->vpp);
    cJSON_AddStringToObject(j, "pipeline_schedule", space_pp_schedule_name(l));
    cli_json_split(j, q->model, l);
    cJSON_AddNumberToObject(j, "context_parallel_size", (double)l->cp);
    cJSON_AddNumberToObject(j, "data_parallel_size", (double)l->dp);
    cJSON_AddNumberToObject(j, "micro_batch_size", (double)l->mbs);
    cJSON_AddNumberToObject(j, "global_batch_size", (double)l->gbs);
    cJSON_AddNumberToObject(j, "seq_length", (double)l->seq);
    cJSON_AddBoolToObject(j, "sequence_parallel", l->sp);
    cJSON_AddStringToObject(j, "recompute_granularity",
                            space_recompute_names[l->recompute]);
    if (l->recompute == SPACE_RECOMPUTE_SELECTIVE)
        cli_json_rc_modules(j, l);
    cJSON_AddNumberToObject(j, "zero_stage", (double)l->zero);
    if (q->model->num_experts > 0) { /* MoE only: dense output as before */
        cJSON_AddNumberToObject(j, "expert_model_parallel_size",
                                (double)space_layout_ep(l));
        cJSON_AddNumberToObject(j, "expert_tensor_parallel_size",
                                (double)space_layout_etp(l));
        cJSON_AddStringToObject(j, "moe_token_dispatcher_type",
                                space_moe_dispatcher_name(l));
        cJSON_AddStringToObject(j, "moe_comm_overlap",
                                space_moe_overlap_name(l));
        cJSON_AddBoolToObject(j, "moe_router_padding_for_quantization",
                              l->moe_router_pad != 0);
        cJSON_AddStringToObject(j, "moe_flex_dispatcher_backend",
                                space_moe_flex_backend_name(l));
        cJSON_AddBoolToObject(j, "moe_permute_fusion",
                              l->moe_permute_fusion != 0);
        cJSON_AddBoolToObject(j, "moe_router_fusion", l->moe_router_fusion != 0);
    }
    /* set by options, the same in every row: only where not the default */
    if (l->cuda_graph)
        cJSON_AddStringToObject(j, "cuda_graph_impl", space_cuda_graph_name(l));
    if (l->fsdp_double_buffer)
        cJSON_AddBoolToObject(j, "fsdp_double_buffer", 1);
    if (l->fp8_act_cache == SPACE_FP8_ACT_DEEPSEEK_V3)
        cJSON_AddStringToObject(j, "fp8_activation_cache",
                                space_fp8_act_cache_names[l->fp8_act_cache]);
    cJSON_AddStringToObject(j, "precision", hw_dtype_names[l->dtype]);
    cli_json_savers(j, l);
    /* the saver the search tried because the layout did not fit without */
    cJSON_AddStringToObject(j, "relies_on_saver",
                            search_saver_names[w->p->saver]);
    cJSON_AddNumberToObject(j, "iteration_time_s", w->r.iteration_s);
    cJSON_AddNumberToObject(j, "tokens_per_s", w->r.tokens_per_s);
    cJSON_AddNumberToObject(j, "mfu", w->r.mfu);
    cJSON_AddNumberToObject(j, "peak_memory_bytes", w->r.mem.total);
    cJSON_AddNumberToObject(j, "memory_margin_bytes", w->margin);
    cJSON_AddNumberToObject(j, "memory_headroom_bytes", w->headroom);
    cJSON_AddNumberToObject(j, "cost_per_iteration_usd", w->p->cost_usd);
    cJSON_AddNumberToObject(j, "price_usd_per_gpu_hour",
                            w->sys->price_usd_per_gpu_hour);
    if (q->tokens > 0) {
        cJSON_AddNumberToObject(j, "time_to_train_s", w->train_s);
        cJSON_AddNumberToObject(j, "gpu_hours", w->gpu_hours);
        cJSON_AddNumberToObject(j, "cost_usd", w->cost_usd);
    } else {
        cJSON_AddNullToObject(j, "time_to_train_s");
        cJSON_AddNullToObject(j, "gpu_hours");
        cJSON_AddNullToObject(j, "cost_usd");
    }
    cJSON_AddNumberToObject(j, "bubble_s", w->r.time.bubble_s);
    cJSON_AddNumberToObject(j, "exposed_comm_s", w->exposed_s);
    cJSON *b = cJSON_AddObjectToObject(j, "breakdown_s");
    cli_term t[EST_TIME_TERMS];
    int nt = est_time_terms(&w->r.time, 0, t);
    for (int i = 0; i < nt; i++) cJSON_AddNumberToObject(b, t[i].name, t[i].v);
    if (!forms) return j;
    cJSON *la = cJSON_AddObjectToObject(j, "launch");
    launch_plan c;
    launch_of(&c, w, q, tt_version, nemo_format);
    launch_text lt = {0}, nemo = {0}, tt = {0};
    if (forms & CLI_LAUNCH_FORM_MEGATRON) {
        launch_megatron(&c, &lt);
        cJSON_AddStringToObject(la, "megatron", launch_text_str(&lt));
        lt.n = 0;
        launch_megatron_script(&c, &lt);
        cJSON_AddStringToObject(la, "megatron_sbatch", launch_text_str(&lt));
    }
    if (forms & CLI_LAUNCH_FORM_NEMO) {
        launch_nemo(&c, &nemo);
        cJSON_AddStringToObject(la, "nemo", launch_text_str(&nemo));
    }
    if (forms & CLI_LAUNCH_FORM_TORCHTITAN) {
        launch_torchtitan(&c, &tt);
        cJSON_AddStringToObject(la, "torchtitan_config", launch_text_str(&tt));
    }
    /* issue 20: the same launches as data, beside the text */
    cJSON *args = cJSON_AddObjectToObject(j, "launch_args");
    if (forms & CLI_LAUNCH_FORM_MEGATRON)
        cJSON_AddItemToObject(args, "megatron", launch_megatron_json(&c));
    if (forms & CLI_LAUNCH_FORM_NEMO)
        cJSON_AddItemToObject(args, "nemo",
                              launch_nemo_json(launch_text_str(&nemo),
                                                   nemo_format));
    if (forms & CLI_LAUNCH_FORM_TORCHTITAN)
        cJSON_AddItemToObject(args, "torchtitan",
                              launch_torchtitan_json(launch_text_str(&tt),
                                                         tt_version));
    launch_text_free(&nemo);
    launch_text_free(&lt);
    launch_text_free(&tt);
    return j;
}

/* Why no layout of pipeline size p was admitted, as a name: the rule
 * that rejected the most of them, or where its valid ones went (the
 * memory, a budget or deadline, the time bound, an estimate's reason);
 * NULL when some were admitted. */
static const char *pp_why(const search_pp_stats *p)
{
    if (p->admitted) return NULL;
    if (p->valid) {
        int64_t mem = p->pruned[SEARCH_PRUNE_MEMORY]
                      + p->infeasible[EST_OUT_OF_MEMORY],
                budget = p->pruned[SEARCH_PRUNE_BUDGET] + p->missed,
                slow = p->pruned[SEARCH_PRUNE_TIME], best = 0;
        const char *why = "time_bound";
        if (slow > best) best = slow;
        if (mem > best) best = mem, why = "memory";
        if (budget > best) best = budget, why = "budget_or_deadline";
        for (int r = 1; r < EST_REASON_COUNT; r++)
            if (r != EST_OUT_OF_MEMORY && p->infeasible[r] > best)
                best = p->infeasible[r], why = est_reason_names[r];
        return why;
    }
    int64_t best = -1;
    const char *why = "none";
    for (int r = 1; r < SPACE_REJECT_COUNT; r++)
        if (p->rejected[r] > best) best = p->rejected[r], why = space_reject_names[r];
    return why;
}

/* What a reason of pp_why means, in words. */
static const char *pp_why_words(const char *why)
{
    static const struct { const char *name, *words; } w[] = {
        {"memory", "every valid layout needs more memory than allowed"},
        {"budget_or_deadline", "every valid layout breaks the budget or the "
                               "deadline"},
        {"time_bound", "valid, but none could enter the top or the front"},
        {"gpus_divisibility", "TP x PP x CP divides none of the GPU counts"},
        {"pp_layers", "the layers (with the embedding and loss counted or "
                      "not) do not divide by PP"},
        {"vpp_layers", "no VPP divides a rank's layers"},
        {"no_ends_split", "no first/last stage counts fit"},
        {"same_split", "every split it allows is one listed before"},
        {"gbs_divisibility", "the global batch does not divide by micro-batch "
                             "x DP"},
        {"vpp_micro_batches", "the micro-batches are no multiple of PP"},
        {"vpp_needs_pp", "interleaving needs PP > 1"},
    };
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        if (strcmp(why, w[i].name) == 0) return w[i].words;
    return "";
}

static cJSON *stats_json(const search_answer *a, int timing)
{
    const search_stats *st = &a->stats;
    cJSON *s = cJSON_CreateObject();
    /* the pipeline sizes, what the grids leave out, the splits */
    cJSON *pps = cJSON_AddArrayToObject(s, "pipeline_sizes");
    for (int k = 0; k < st->n_pp; k++) {
        const search_pp_stats *p = &st->pp[k];
        const char *w = pp_why(p);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "pp", (double)p->pp);
        cJSON_AddNumberToObject(o, "valid", (double)p->valid);
        cJSON_AddNumberToObject(o, "admitted", (double)p->admitted);
        if (w) cJSON_AddStringToObject(o, "why_none", w);
        else cJSON_AddNullToObject(o, "why_none");
        cJSON_AddItemToArray(pps, o);
    }
    if (st->pp_beyond)
        cJSON_AddNumberToObject(s, "pp_not_searched_above",
                                (double)st->pp_beyond);
    else
        cJSON_AddNullToObject(s, "pp_not_searched_above");
    if (st->vpp_beyond)
        cJSON_AddNumberToObject(s, "vpp_not_searched_above",
                                (double)st->vpp_beyond);
    else
        cJSON_AddNullToObject(s, "vpp_not_searched_above");
    cJSON *spv = cJSON_AddObjectToObject(s, "split_valid");
    for (int k = 0; k < SPACE_SPLIT_KIND_COUNT; k++)
        cJSON_AddNumberToObject(spv, space_split_kind_names[k],
                                (double)st->split_valid[k]);
    cJSON_AddNumberToObject(s, "enumerated", (double)st->enumerated);
    cJSON *pr = cJSON_AddObjectToObject(s, "pruned");
    for (int i = 1; i < SPACE_REJECT_COUNT; i++)
        cJSON_AddNumberToObject(pr, space_reject_names[i], (double)st->rejected[i]);
    for (int i = 0; i < SEARCH_PRUNE_COUNT; i++)
        cJSON_AddNumberToObject(pr, search_prune_names[i], (double)st->pruned[i]);
    cJSON_AddNumberToObject(s, "valid", (double)st->valid);
    cJSON_AddNumberToObject(s, "estimated", (double)st->estimated);
    cJSON *inf = cJSON_AddObjectToObject(s, "infeasible");
    for (int i = 1; i < EST_REASON_COUNT; i++)
        cJSON_AddNumberToObject(inf, est_reason_names[i], (double)st->infeasible[i]);
    for (int i = 0; i < SEARCH_MISS_COUNT; i++)
        cJSON_AddNumberToObject(inf, search_miss_names[i], (double)st->missed[i]);
    cJSON_AddNumberToObject(s, "admitted", (double)st->admitted);
    /* of those, admitted only with a memory saver (issue 28) */
    cJSON_AddNumberToObject(s, "admitted_with_cuda_graphs", (double)st->graphed);
    cJSON *sc = cJSON_AddObjectToObject(s, "admitted_with_schedule");
    for (int i = 0; i < SEARCH_SCHEDULES_TRIED; i++)
        cJSON_AddNumberToObject(sc, space_pp_schedule_names[search_schedules_tried[i]],
                                (double)st->scheduled[search_schedules_tried[i]]);
    cJSON *sv = cJSON_AddObjectToObject(s, "admitted_with_saver");
    for (int i = 1; i < SEARCH_SAVER_COUNT; i++)
        cJSON_AddNumberToObject(sv, search_saver_names[i], (double)st->saved[i]);
    cJSON_AddNumberToObject(s, "gpu_counts_beyond_system",
                            (double)st->gpu_counts_beyond);
    if (timing) {
        cJSON_AddNumberToObject(s, "elapsed_s", st->elapsed_s);
        cJSON_AddNumberToObject(s, "threads", st->threads);
    }
    return s;
}

static cJSON *near_json(const search_request *q, const search_near *nr,
                        const char *unit)
{
    space_layout l;
    search_point p = {0, 0, 0, nr->gpus, nr->idx, nr->sys, 0, 0, 0, 0};
    search_point_layout(q, &p, &l);
    char tag[96];
    space_layout_tag(&l, q->systems[nr->sys].ctx.sys->gpus_per_node, tag,
                     sizeof tag);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "layout", tag);
    cJSON_AddStringToObject(j, "system", q->systems[nr->sys].ctx.sys->name);
    cJSON_AddNumberToObject(j, "gpus", (double)nr->gpus);
    cJSON_AddStringToObject(j, "unit", unit);
    cJSON_AddNumberToObject(j, "needs", nr->value);
    cJSON_AddNumberToObject(j, "limit", nr->limit);
    cJSON_AddNumberToObject(j, "shortfall", nr->value - nr->limit);
    cJSON_AddBoolToObject(j, "lower_bound", nr->from_bound);
    return j;
}

/* The CSV cells of a layout's fields, as both the layout rows and the
 * miss rows of `search --format csv` write them: c[2..9] TP, PP, VPP, CP,
 * DP, micro-batch, SP, ZeRO; c[21], c[22] EP and expert TP, empty for a
 * dense model. */
void cli_csv_layout_cells(char c[][48], const space_layout *l, int moe)
{
    snprintf(c[2], 48, "%lld", (long long)l->tp);
    snprintf(c[3], 48, "%lld", (long long)l->pp);
    snprintf(c[4], 48, "%lld", (long long)l->vpp);
    snprintf(c[5], 48, "%lld", (long long)l->cp);
    snprintf(c[6], 48, "%lld", (long long)l->dp);
    snprintf(c[7], 48, "%lld", (long long)l->mbs);
    snprintf(c[8], 48, "%d", l->sp);
    snprintf(c[9], 48, "%d", (int)l->zero);
    c[21][0] = c[22][0] = '\0';
    if (moe) {
        snprintf(c[21], 48, "%lld", (long long)space_layout_ep(l));
        snprintf(c[22], 48, "%lld", (long long)space_layout_etp(l));
    }
}

/* ---- table output ----------------------------------------------------- */

static void print_rows(FILE *f, cli_format fmt, const row *rows, int n,
                       int multi, const search_request *q)
{
    const char *hdr[] = {"#",        "system",   "layout",   "GPUs",
                         "iter s",   "tokens/s", "MFU",      "mem GiB",
                         "+margin",  "free GiB", "train d",  "GPU-h",
                         "cost $",   "bubble",   "exposed comm"};
    const char *hdr1[] = {"#",        "layout",   "GPUs",   "iter s",
                          "tokens/s", "MFU",      "mem GiB", "+margin",
                          "free GiB", "train d",  "GPU-h",   "cost $", "bubble",
                          "exposed comm"};
    /* Without --tokens the days and GPU-hours are unknown: their columns
     * are left out and cost is per iteration. */
    const char *hdr2[] = {"#",        "system",   "layout",   "GPUs",
                          "iter s",   "tokens/s", "MFU",      "mem GiB",
                          "+margin",  "free GiB", "cost $",   "bubble",
                          "exposed comm"};
    const char *hdr3[] = {"#",        "layout",   "GPUs",   "iter s",
                          "tokens/s", "MFU",      "mem GiB", "+margin",
                          "free GiB", "cost $",   "bubble", "exposed comm"};
    int days = q->tokens > 0;
    cli_table t;
    if (multi && days)
        cli_table_init(&t, 15, hdr, "rllrrrrrrrrrrrr");
    else if (days)
        cli_table_init(&t, 14, hdr1, "rlrrrrrrrrrrrr");
    else if (multi)
        cli_table_init(&t, 13, hdr2, "rllrrrrrrrrrr");
    else
        cli_table_init(&t, 12, hdr3, "rlrrrrrrrrrr");
    for (int i = 0; i < n; i++) {
        const row *w = &rows[i];
        char c[13][48];
        snprintf(c[0], 48, "%d%s", i + 1, w->tied ? "=" : "");
        snprintf(c[1], 48, "%lld", (long long)w->p->gpus);
        snprintf(c[2], 48, "%.4f", w->r.iteration_s);
        cli_fmt_si(c[3], 48, w->r.tokens_per_s, "");
        snprintf(c[4], 48, "%.1f%%", 100 * w->r.mfu);
        snprintf(c[5], 48, "%.2f", w->r.mem.total / 1073741824.0);
        snprintf(c[12], 48, "%.2f", w->margin / 1073741824.0);
        snprintf(c[6], 48, "%.2f", w->headroom / 1073741824.0);
        if (q->tokens > 0) {
            snprintf(c[7], 48, "%.2f", w->train_s / 86400);
            snprintf(c[8], 48, "%.0f", w->gpu_hours);
            snprintf(c[9], 48, "%.0f", w->cost_usd);
        } else {
            snprintf(c[7], 48, "-");
            snprintf(c[8], 48, "-");
            snprintf(c[9], 48, "%.4f/it", w->p->cost_usd);
        }
        snprintf(c[10], 48, "%.1f%%", 100 * w->r.time.bubble_s / w->r.iteration_s);
        snprintf(c[11], 48, "%.1f%%", 100 * w->exposed_s / w->r.iteration_s);
        if (multi && days)
            cli_table_row(&t, c[0], w->sys->ctx.sys->name, w->tag, c[1], c[2],
                          c[3], c[4], c[5], c[12], c[6], c[7], c[8], c[9],
                          c[10], c[11]);
        else if (days)
            cli_table_row(&t, c[0], w->tag, c[1], c[2], c[3], c[4], c[5],
                          c[12], c[6], c[7], c[8], c[9], c[10], c[11]);
        else if (multi)
            cli_table_row(&t, c[0], w->sys->ctx.sys->name, w->tag, c[1], c[2],
                          c[3], c[4], c[5], c[12], c[6], c[9], c[10], c[11]);
        else
            cli_table_row(&t, c[0], w->tag, c[1], c[2], c[3], c[4], c[5],
                          c[12], c[6], c[9], c[10], c[11]);
    }
    cli_table_print(&t, f, fmt);
    cli_table_free(&t);
}

/* The best layout's error band, and which rows it ties (marked '=' in
 * the table). */
static void print_ties(FILE *f, const row *rows, int n,
                       const search_request *q)
{
    if (n == 0) return;
    char bt[600];
    /* the band's text is a line of the band, then the nearest run */
    cli_band_text(&rows[0].band, bt, sizeof bt);
    for (char *line = bt, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        cli_wrapf(f, 2, "%s%s", line == bt ? "#1's " : "", line);
    }
    int k = 0;
    for (int i = 1; i < n; i++) k += rows[i].tied;
    if (k)
        cli_wrapf(f, 2, "=: %d of the next %d layouts are within that band of #1 "
                    "by %s: the published runs cannot tell them apart "
                    "(--explain says what separates them)",
              k, n - 1, q->objective == SEARCH_BY_COST ? "cost" : "time");
    else if (n > 1)
        fprintf(f, "no other layout is within that band of #1\n");
}

/* Which layouts the memory admits, and why: the margin or the fraction
 * asked for. */
static void print_memory_rule(FILE *f, const search_request *q, int explain)
{
    if (q->max_memory_fraction > 0) {
        fprintf(f, "memory: admitted when the estimated peak fits %.3g %% of "
                   "the GPU (--max-memory-fraction; no margin)\n",
                100 * q->max_memory_fraction);
        return;
    }
    if (explain)
        cli_wrapf(f, 2, "memory: admitted when the estimated peak + %.1f %% fits "
                    "the GPU (--max-memory-fraction overrides). %s",
              100 * est_memory_margin(&q->base), est_memory_evidence(&q->base));
    else
        cli_wrapf(f, 2, "memory: admitted when the estimated peak + %.1f %% fits "
                    "the GPU (--max-memory-fraction overrides; --explain says "
                    "where the margin comes from)",
              100 * est_memory_margin(&q->base));
}

/* The counts; with reasons (--explain, or nothing admitted) the counts by
 * reason, with examples (--explain) an example of each rule. */
static void print_counts(FILE *f, const search_answer *a, int reasons,
                         int examples)
{
    const search_stats *st = &a->stats;
    int64_t rej = 0;
    for (int i = 1; i < SPACE_REJECT_COUNT; i++) rej += st->rejected[i];
    cli_wrapf(f, 2,
          "layouts: %lld enumerated, %lld rejected by rules, %lld valid; "
          "pruned: %lld by the memory bound, %lld by the budget bound, %lld "
          "by the time bound; %lld estimated, %lld admitted%s",
          (long long)st->enumerated, (long long)rej, (long long)st->valid,
          (long long)st->pruned[SEARCH_PRUNE_MEMORY],
          (long long)st->pruned[SEARCH_PRUNE_BUDGET],
          (long long)st->pruned[SEARCH_PRUNE_TIME],
          (long long)st->estimated, (long long)st->admitted,
          reasons ? "" : " (--explain: by reason)");
    if (st->gpu_counts_beyond)
        fprintf(f, "%lld (system, GPU count) pairs skipped: more GPUs than the "
                   "system has\n",
                (long long)st->gpu_counts_beyond);
    if (!reasons) return;
    char buf[4096];
    size_t at = 0;
    int any = 0;
#define ADD_REASON(name, n)                                                   \
    do {                                                                      \
        if (at < sizeof buf)                                                  \
            at += (size_t)snprintf(buf + at, sizeof buf - at, "%s %s %lld",   \
                                   any++ ? "," : "", (name), (long long)(n)); \
    } while (0)
    buf[0] = '\0';
    for (int i = 1; i < SPACE_REJECT_COUNT; i++)
        if (st->rejected[i]) ADD_REASON(space_reject_names[i], st->rejected[i]);
    for (int i = 0; i < SEARCH_PRUNE_COUNT; i++)
        if (st->pruned[i]) ADD_REASON(search_prune_names[i], st->pruned[i]);
    for (int i = 1; i < EST_REASON_COUNT; i++)
        if (st->infeasible[i])
            ADD_REASON(est_reason_names[i], st->infeasible[i]);
    for (int i = 0; i < SEARCH_MISS_COUNT; i++)
        if (st->missed[i]) ADD_REASON(search_miss_names[i], st->missed[i]);
#undef ADD_REASON
    cli_wrapf(f, 2, "rejected or not admitted, by reason:%s", any ? buf : " none");
    if (examples)
        for (int i = 1; i < SPACE_REJECT_COUNT; i++)
            if (st->rejected[i])
                fprintf(f, "  %-20s e.g. %s\n", space_reject_names[i],
                        st->example[i]);
}

/* The pipeline sizes the search tried, grouped by what became of them
 * (admitted, or the reason none was), as ranges; then what the grids
 * leave out and how to ask for it. With explain, every size's counts. */
static void print_pipeline_sizes(FILE *f, const search_answer *a, int explain)
{
    const search_stats *st = &a->stats;
    if (st->n_pp == 0) return;
    /* the reasons in order of first appearance, admitted first */
    const char *seen[SPACE_GRID_MAX + 1];
    int n_seen = 0;
    seen[n_seen++] = NULL;
    for (int k = 0; k < st->n_pp; k++) {
        const char *w = pp_why(&st->pp[k]);
        int have = 0;
        for (int i = 0; i < n_seen; i++)
            have |= (w == NULL && seen[i] == NULL)
                    || (w && seen[i] && strcmp(w, seen[i]) == 0);
        if (!have) seen[n_seen++] = w;
    }
    fprintf(f, "pipeline sizes (PP):\n");
    for (int i = 0; i < n_seen; i++) {
        char list[1024];
        size_t n = 0;
        list[0] = '\0';
        for (int k = 0; k < st->n_pp;) {
            const char *w = pp_why(&st->pp[k]);
            int match = (w == NULL) == (seen[i] == NULL)
                        && (!w || strcmp(w, seen[i]) == 0);
            if (!match) {
                k++;
                continue;
            }
            int j = k;
            while (j + 1 < st->n_pp && st->pp[j + 1].pp == st->pp[j].pp + 1) {
                const char *wj = pp_why(&st->pp[j + 1]);
                if ((wj == NULL) != (seen[i] == NULL)
                    || (wj && strcmp(wj, seen[i]) != 0))
                    break;
                j++;
            }
            if (n < sizeof list) {
                if (j > k)
                    n += (size_t)snprintf(list + n, sizeof list - n,
                                          "%s%lld-%lld", n ? ", " : "",
                                          (long long)st->pp[k].pp,
                                          (long long)st->pp[j].pp);
                else
                    n += (size_t)snprintf(list + n, sizeof list - n, "%s%lld",
                                          n ? ", " : "",
                                          (long long)st->pp[k].pp);
            }
            k = j + 1;
        }
        if (!seen[i])
            cli_wrapf(f, 4, "  %s: layouts admitted", list);
        else
            cli_wrapf(f, 4, "  %s: none admitted: %s%s%s%s", list, seen[i],
                  pp_why_words(seen[i])[0] ? " (" : "", pp_why_words(seen[i]),
                  pp_why_words(seen[i])[0] ? ")" : "");
    }
    if (st->pp_beyond)
        fprintf(f, "  above %lld: not searched (the grid holds %d sizes); "
                   "--fix pp=N searches one\n",
                (long long)st->pp_beyond, SPACE_GRID_MAX);
    if (st->vpp_beyond)
        fprintf(f, "virtual stages above %lld: not searched (the grid holds "
                   "%d); --fix vpp=N searches one\n",
                (long long)st->vpp_beyond, SPACE_GRID_MAX);
    char sp[512];
    size_t at = 0;
    sp[0] = '\0';
    for (int k = 0; k < SPACE_SPLIT_KIND_COUNT && at < sizeof sp; k++)
        if (k != SPACE_SPLIT_GIVEN || st->split_valid[k])
            at += (size_t)snprintf(sp + at, sizeof sp - at, "%s %s %lld",
                                   k ? "," : "", space_split_kind_names[k],
                                   (long long)st->split_valid[k]);
    cli_wrapf(f, 2, "pipeline splits, valid layouts:%s (--fix split=NAME pins "
                "one; a layout string of your own is searched only where "
                "given, --pipeline-model-parallel-layout)", sp);
    if (!explain) return;
    fprintf(f, "  %-6s %10s %10s  %s\n", "PP", "valid", "admitted",
            "why none (the most layouts)");
    for (int k = 0; k < st->n_pp; k++) {
        const search_pp_stats *p = &st->pp[k];
        const char *w = pp_why(p);
        fprintf(f, "  %-6lld %10lld %10lld  %s\n", (long long)p->pp,
                (long long)p->valid, (long long)p->admitted, w ? w : "-");
    }
}

/* Why the winner wins: each runner-up's extra time, term by term. */
/* For a row tied with the best (row_tie): what separates them that the
 * time's error does not blur. The memory left is the estimate's own,
 * with its own margin; exposed communication and the bubble are the
 * terms that move most with the network and the software's overlap, so
 * the layout with less of them is the safer bet when the times tie. */
static void explain_tie(FILE *f, const row *w, const row *best)
{
    double gib = 1073741824.0;
    fprintf(f, "     tied with #1 within the error band (+/-%.1f %%): free "
               "memory %.1f vs %.1f GiB, exposed communication %.1f %% vs "
               "%.1f %%, bubble %.1f %% vs %.1f %%",
            fmax(w->band.mape_pct, best->band.mape_pct), w->headroom / gib,
            best->headroom / gib, 100 * w->exposed_s / w->r.iteration_s,
            100 * best->exposed_s / best->r.iteration_s,
            100 * w->r.time.bubble_s / w->r.iteration_s,
            100 * best->r.time.bubble_s / best->r.iteration_s);
    if (w->p->gpus != best->p->gpus)
        fprintf(f, ", %lld GPUs vs %lld", (long long)w->p->gpus,
                (long long)best->p->gpus);
    fputc('\n', f);
}

static void print_explain(FILE *f, const row *rows, int n)
{
    if (n == 0) return;
    cli_term tw[EST_TIME_TERMS];
    int nt = est_time_terms(&rows[0].r.time, 0, tw);
    fprintf(f, "\nwhy %s wins: %.4f s per iteration =", rows[0].tag,
            rows[0].r.iteration_s);
    for (int i = 0, first = 1; i < nt; i++)
        if (tw[i].v > 0) {
            fprintf(f, "%s %s %.4f", first ? "" : " +", tw[i].name, tw[i].v);
            first = 0;
        }
    fprintf(f, " (seconds)\n");
    for (int k = 1; k < n && k < 6; k++) {
        cli_term tr[EST_TIME_TERMS];
        est_time_terms(&rows[k].r.time, 0, tr);
        int ord[EST_TIME_TERMS];
        for (int i = 0; i < nt; i++) ord[i] = i;
        /* largest difference first; ties by term order */
        for (int i = 1; i < nt; i++)
            for (int j = i; j > 0; j--) {
                double a = fabs(tr[ord[j]].v - tw[ord[j]].v);
                double b = fabs(tr[ord[j - 1]].v - tw[ord[j - 1]].v);
                if (a > b) {
                    int x = ord[j];
                    ord[j] = ord[j - 1];
                    ord[j - 1] = x;
                } else {
                    break;
                }
            }
        fprintf(f, "  #%d %s loses by %+.4f s:", k + 1, rows[k].tag,
                rows[k].r.iteration_s - rows[0].r.iteration_s);
        int shown = 0;
        for (int i = 0; i < nt && shown < 4; i++) {
            double d = tr[ord[i]].v - tw[ord[i]].v;
            if (fabs(d) < 5e-5) break;
            fprintf(f, "%s %s %+.4f", shown++ ? "," : "", tr[ord[i]].name, d);
        }
        if (rows[k].p->gpus != rows[0].p->gpus)
            fprintf(f, " (%lld GPUs vs %lld)", (long long)rows[k].p->gpus,
                    (long long)rows[0].p->gpus);
        fputc('\n', f);
        if (rows[k].tied)
            explain_tie(f, &rows[k], &rows[0]);
    }
}

/* Each line of s indented by two blanks (empty lines left empty). */
static void print_indented(FILE *f, const char *s)
{
    while (*s) {
        const char *nl = strchr(s, '\n');
        int n = nl ? (int)(nl - s) : (int)strlen(s);
        fprintf(f, n ? "  %.*s\n" : "%.*s\n", n, s);
        if (!nl) break;
        s = nl + 1;
    }
}

const char *const cli_launch_show_names[CLI_LAUNCH_SHOW_COUNT] = {
    "none", "megatron", "nemo", "torchtitan", "all"};

unsigned cli_launch_forms(int show)
{
    switch (show) {
    case CLI_LAUNCH_MEGATRON: return CLI_LAUNCH_FORM_MEGATRON;
    case CLI_LAUNCH_NEMO: return CLI_LAUNCH_FORM_NEMO;
    case CLI_LAUNCH_TORCHTITAN: return CLI_LAUNCH_FORM_TORCHTITAN;
    case CLI_LAUNCH_ALL: return CLI_LAUNCH_FORM_ALL;
    default: return 0;
    }
}

/* The launch block of c for one framework (CLI_LAUNCH_MEGATRON, _NEMO or
 * _TORCHTITAN). */
static void print_launch(FILE *f, int which, const launch_plan *c)
{
    launch_text t = {0};
    if (which == CLI_LAUNCH_TORCHTITAN) {
        fprintf(f, "torchtitan (%s):\n",
                c->torchtitan_version == LAUNCH_TT_MAIN ? "Python config"
                                                     : "TOML job config");
        launch_torchtitan(c, &t);
        print_indented(f, launch_text_str(&t));
    } else if (which == CLI_LAUNCH_MEGATRON) {
        fprintf(f, "Megatron-LM launch script (sbatch it, or run it on each "
                   "node under another scheduler; --sbatch FILE writes it):\n");
        launch_megatron_script(c, &t);
        fprintf(f, "%s# (end of the script)\n", launch_text_str(&t));
    } else {
        fprintf(f, "NeMo (%s):\n", c->nemo_format == LAUNCH_NEMO_V1
                                       ? "NeMo 1.x YAML keys"
                                       : "Megatron-Bridge overrides");
        launch_nemo(c, &t);
        print_indented(f, launch_text_str(&t));
    }
    launch_text_free(&t);
}

/* #1's launches as --launch asks: by default one line saying how. */
static void print_launches(FILE *f, const cli_opts *o, const row *best,
                           const search_request *q)
{
    launch_plan lc;
    launch_of(&lc, best, q, o->torchtitan_version, o->nemo_format);
    int titan = o->job.framework == SPACE_FW_TORCHTITAN;
    if (o->launch_show == CLI_LAUNCH_NONE) {
        fputc('\n', f);
        cli_wrapf(f, 2, "launch #1: --launch %s prints it here; --sbatch FILE "
                    "writes the Megatron-LM script; -f json has every form",
              titan ? "torchtitan|megatron|nemo|all"
                    : "megatron|nemo|torchtitan|all");
        return;
    }
    fprintf(f, "\nlaunch %s on %s:\n", best->tag, best->sys->ctx.sys->name);
    if (o->launch_show != CLI_LAUNCH_ALL) {
        print_launch(f, o->launch_show, &lc);
        return;
    }
    /* the framework the estimates assumed first */
    static const int order[2][3] = {
        {CLI_LAUNCH_MEGATRON, CLI_LAUNCH_NEMO, CLI_LAUNCH_TORCHTITAN},
        {CLI_LAUNCH_TORCHTITAN, CLI_LAUNCH_MEGATRON, CLI_LAUNCH_NEMO}};
    for (int i = 0; i < 3; i++) print_launch(f, order[titan][i], &lc);
}

/* ---- search --near (issue 18) ------------------------------------------ */

/* The user's job: its model and layout as read, and its estimate. */
typedef struct near_job {
    const char *file;
    int kind;           /* cli_job_kind of the file */
    space_model m;
    space_layout want;
    int64_t gpus;
    char gpus_arg[32];
    est_result r;
    char tag[96];
} near_job;

/* Reads o->job_file into nj and turns *o into the search of the same job
 * over every layout. */
static int job_open(cli_opts *o, const hw_db *db, near_job *nj, tp_err *e)
{
    nj->file = strcmp(o->job_file, "-") == 0 ? "<stdin>" : o->job_file;
    nj->kind = o->job_kind;
    int rc = cli_read_job(o, &nj->m, e);
    if (rc) return rc;
    o->model_given = &nj->m;
    if (!o->system)
        return tp_errf(e, TP_EUSAGE, "search --near needs --system");
    if (strchr(o->system, ','))
        return tp_errf(e, TP_EUSAGE, "search --near: one --system (the "
                       "job's), found '%s'", o->system);
    const hw_system *y = hw_find_system(db, o->system, e);
    if (!y) return TP_EDATA;
    if (o->job.gpus <= 0 && o->job.opt_nodes > 0)
        o->job.gpus = (int64_t)o->job.opt_nodes * y->gpus_per_node;
    if (o->job.gpus <= 0)
        return tp_errf(e, TP_EUSAGE,
                       "search: %s does not say how many GPUs%s; pass "
                       "--gpus N",
                       nj->file,
                       nj->kind == CLI_JOB_MEGATRON
                           ? " (no #SBATCH --nodes and --gpus-per-node, no "
                             "torchrun --nnodes and --nproc-per-node)"
                           : "");
    nj->gpus = o->job.gpus;
    rc = search_job_layout(&o->job, &nj->m, &nj->want, e);
    if (rc) return rc;
    /* the search: the job's GPUs unless --gpus or --max-gpus say more */
    if (!o->gpus_arg && o->max_gpus <= 0) {
        snprintf(nj->gpus_arg, sizeof nj->gpus_arg, "%lld", (long long)o->job.gpus);
        o->gpus_arg = nj->gpus_arg;
    }
    o->job.tp_set = 0;
    o->job.tp = 1;
    o->job.pp = o->job.cp = o->job.mbs = o->job.vstages = o->job.vpp_layers = 0;
    o->job.ep = o->job.etp = 0; /* searched too; the dispatcher stays the job's */
    o->job.sp = o->job.recompute = o->job.zero = -1;
    o->job.recompute_method = 0;
    o->job.recompute_layers = 0;
    o->job.sw_set &= ~(unsigned)SEARCH_SW_RC_METHOD;
    /* the pipeline split too: every split Megatron-Core runs (the job's
     * layout string, if any, fits only the job's PP and VPP) */
    o->job.split_set = 0, o->job.pp_account = 0;
    o->job.pp_first = o->job.pp_last = 0;
    o->job.pp_layout = NULL;
    o->job_file = NULL;
    o->job.from_launch = 0;
    return TP_OK;
}

static void job_estimate(near_job *nj, const cli_search *cs)
{
    est_ctx c = cs->sys[0].ctx;
    c.tp_across_nodes = nj->want.tp != SEARCH_UNSET
                        && nj->want.tp > c.sys->gpus_per_node;
    int64_t tried = 0, feasible = 0;
    search_complete(&c, &nj->m, &nj->want, nj->gpus, &nj->r, &tried,
                    &feasible);
    space_layout_tag(&nj->r.layout, c.sys->gpus_per_node, nj->tag,
                     sizeof nj->tag);
}

static void job_launch(launch_plan *c, const near_job *nj,
                        const search_request *q)
{
    memset(c, 0, sizeof *c);
    c->layout = &nj->r.layout;
    c->model = q->model;
    c->system = q->systems[0].ctx.sys->name;
    c->gpus_per_node = q->systems[0].ctx.sys->gpus_per_node;
    c->gpu_arch = q->systems[0].ctx.gpu->arch;
    c->tokens = q->tokens;
    c->iteration_s = nj->r.iteration_s;
}

/* The layout fields that differ from a to b, "TP 8 -> 4" a line. */
static void layout_diff(const space_layout *a, const space_layout *b,
                        launch_text *t)
{
    const struct {
        const char *name;
        int64_t x, y;
    } f[] = {
        {"TP", a->tp, b->tp},   {"PP", a->pp, b->pp},
        {"VPP", a->vpp, b->vpp}, {"CP", a->cp, b->cp},
        {"DP", a->dp, b->dp},   {"micro-batch", a->mbs, b->mbs},
        {"ZeRO", a->zero, b->zero},
        /* MoE layouts only (dense ones have no EP: both 1 and TP) */
        {"EP", space_layout_ep(a), space_layout_ep(b)},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].x != f[i].y)
            launch_text_put(t, "%s%s %lld -> %lld", t->n ? "\n" : "", f[i].name,
                         (long long)f[i].x, (long long)f[i].y);
    /* expert TP: "= TP" where it follows TP (Megatron-Core's default) */
    int64_t ea = space_layout_etp(a), eb = space_layout_etp(b);
    if ((ea == a->tp) != (eb == b->tp) || (ea != a->tp && ea != eb)) {
        char xa[32] = "= TP", xb[32] = "= TP";
        if (ea != a->tp) snprintf(xa, sizeof xa, "%lld", (long long)ea);
        if (eb != b->tp) snprintf(xb, sizeof xb, "%lld", (long long)eb);
        launch_text_put(t, "%sexpert TP %s -> %s", t->n ? "\n" : "", xa, xb);
    }
    if (!a->sp != !b->sp)
        launch_text_put(t, "%ssequence parallelism %s -> %s", t->n ? "\n" : "",
                     a->sp ? "on" : "off", b->sp ? "on" : "off");
    if (a->recompute != b->recompute)
        launch_text_put(t, "%srecompute %s -> %s", t->n ? "\n" : "",
                     space_recompute_names[a->recompute],
                     space_recompute_names[b->recompute]);
    /* the pipeline split, where the options that give it differ */
    char sa[2200], sb[2200];
    space_split_str(a, sa, sizeof sa);
    space_split_str(b, sb, sizeof sb);
    if (strcmp(sa, sb) != 0)
        launch_text_put(t, "%spipeline split %s -> %s", t->n ? "\n" : "",
                     sa[0] ? sa : "even", sb[0] ? sb : "even");
}

static void job_print(FILE *f, const near_job *nj, const row *best,
                       const search_request *q)
{
    const est_result *r = &nj->r;
    fprintf(f, "\nyour job (%s): %s", nj->file, nj->tag);
    if (!r->feasible) {
        fprintf(f, ": %s (%s)\n", est_reason_names[r->reason], r->message);
    } else {
        fprintf(f, ", %.4f s an iteration, MFU %.1f %%, %.2f GiB\n",
                r->iteration_s, 100 * r->mfu, r->mem.total / 1073741824.0);
    }
    if (!best) return;
    double d = r->feasible ? r->iteration_s - best->r.iteration_s : 0;
    if (r->feasible && strcmp(best->tag, nj->tag) == 0) {
        fprintf(f, "the search's best is your job's layout\n");
        return;
    }
    fprintf(f, "the search's best: %s, %.4f s an iteration", best->tag,
            best->r.iteration_s);
    if (r->feasible && d > 0) {
        fprintf(f, ", %.1f %% less time", 100 * d / r->iteration_s);
        if (q->tokens > 0) {
            double its = q->tokens / ((double)q->base.gbs * (double)q->base.seq);
            double gh = its * d * (double)nj->gpus / 3600;
            fprintf(f, " (%.0f GPU-hours, $%.0f less for %.3g tokens)", gh,
                    gh * best->sys->price_usd_per_gpu_hour, q->tokens);
        }
    } else if (r->feasible) {
        fprintf(f, " (no faster than yours: ranked by %s)",
                search_objective_names[q->objective]);
    }
    launch_text lt = {0};
    layout_diff(&nj->r.layout, &best->r.layout, &lt);
    fprintf(f, "\nwhat changes (layout):\n");
    print_indented(f, lt.n ? launch_text_str(&lt) : "(none)");
    launch_text_free(&lt);
    if (nj->kind != CLI_JOB_MEGATRON) return; /* the launch follows */
    fprintf(f, "what changes (Megatron-LM flags):\n");
    launch_plan from, to;
    job_launch(&from, nj, q);
    launch_of(&to, best, q, 0, 0);
    launch_text t = {0};
    launch_megatron_diff(&from, &to, &t);
    print_indented(f, t.n ? launch_text_str(&t) : "(none)");
    launch_text_free(&t);
}

/* t's lines as the array `name` of j (t is cut up). */
static void add_lines(cJSON *j, const char *name, launch_text *t)
{
    cJSON *a = cJSON_AddArrayToObject(j, name);
    for (char *p = t->p, *nl; p && *p; p = nl + 1) {
        nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        cJSON_AddItemToArray(a, cJSON_CreateString(p));
        if (!nl) break;
    }
}

static cJSON *job_json(const near_job *nj, const row *best,
                        const search_request *q)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "file", nj->file);
    cJSON_AddStringToObject(j, "layout", nj->tag);
    cJSON_AddBoolToObject(j, "feasible", nj->r.feasible);
    cJSON_AddStringToObject(j, "reason", est_reason_names[nj->r.reason]);
    cJSON_AddNumberToObject(j, "iteration_time_s", nj->r.iteration_s);
    cJSON_AddNumberToObject(j, "peak_memory_bytes", nj->r.mem.total);
    if (best) {
        cJSON_AddStringToObject(j, "best_layout", best->tag);
        cJSON_AddNumberToObject(j, "best_iteration_time_s",
                                best->r.iteration_s);
        launch_plan from, to;
        job_launch(&from, nj, q);
        launch_of(&to, best, q, 0, 0);
        launch_text t = {0};
        launch_megatron_diff(&from, &to, &t);
        launch_text lt = {0};
        layout_diff(&nj->r.layout, &best->r.layout, &lt);
        add_lines(j, "layout_changes", &lt);
        launch_text_free(&lt);
        add_lines(j, "megatron_changes", &t);
        launch_text_free(&t);
    } else {
        cJSON_AddNullToObject(j, "best_layout");
    }
    return j;
}

/* ---- the command ------------------------------------------------------ */

/* --svg FILE: the picture (plot/svg.c) written atomically, or to the
 * caller's stream for "-". TP_OK or TP_EIO with the message in e. */
static int write_svg(const char *path, FILE *caller, const search_request *q,
                     const search_answer *a, tp_err *e)
{
    size_t n = 0;
    char *doc = plot_search_svg(q, a, TRAINPLAN_VERSION, &n);
    cli_out o;
    int rc = cli_out_open(&o, path, caller, e);
    if (!rc) {
        fwrite(doc, 1, n, o.f);
        rc = cli_out_close(&o, 1, e);
    }
    free(doc);
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

int cli_search_open(const cli_opts *o, const hw_db *db, search_cache *cache,
                    cli_search *s, tp_err *e)
{
    char *sysbuf = NULL; /* --system's names, split in place */
    memset(s, 0, sizeof *s);
    s->torchtitan_version = o->torchtitan_version;
    if (!o->job.model && !o->model_given)
        return tp_errf(e, TP_EUSAGE, "search needs --model (or --near FILE)");
    if (!o->system) return tp_errf(e, TP_EUSAGE, "search needs --system");
    if (o->job.seq_length <= 0) return tp_errf(e, TP_EUSAGE, "search needs --seq-length");
    if (o->job.gbs <= 0) return tp_errf(e, TP_EUSAGE, "search needs --global-batch-size");
    if (o->job.vpp_layers > 0)
        return tp_errf(e, TP_EUSAGE,
                       "search: use --fix vpp=N (virtual stages per pipeline "
                       "rank) instead of --num-layers-per-virtual-pipeline-stage");
    if (!(o->job.tokens > 0)) {
        const char *need = o->budget_usd > 0        ? "--budget-usd"
                           : o->budget_gpu_hours > 0 ? "--budget-gpu-hours"
                           : o->deadline_s > 0       ? "--deadline"
                           : o->objective == SEARCH_BY_TRAIN_TIME
                               ? "--objective time-to-train"
                               : NULL;
        if (need) return tp_errf(e, TP_EUSAGE, "%s needs --tokens", need);
    }
    if (o->min_gpus > 0 && o->max_gpus > 0 && o->min_gpus > o->max_gpus)
        return tp_errf(e, TP_EUSAGE, "--min-gpus %lld is above --max-gpus %lld",
                       (long long)o->min_gpus, (long long)o->max_gpus);
    int rc = cli_model(o, &s->m, e);
    if (rc) return rc;
    search_system *sys = s->sys;
    est_models **ops = s->ops;
    est_comm **comm = s->comm;
    int ns = 0;
    space_layout base;
    memset(&base, 0, sizeof base);
    base.seq = o->job.seq_length;
    base.gbs = o->job.gbs;
    base.dtype = o->job.precision >= 0 ? o->job.precision : HW_BF16;
    rc = search_job_check_recompute(&o->job, &s->m, e);
    if (!rc) rc = search_job_check_docs(&o->job, e);
    if (!rc) rc = search_job_check_moe(&o->job, &s->m, e);
    if (!rc) rc = search_job_check_savers(&o->job, &s->m, e);
    if (!rc) rc = search_job_check_mech(&o->job, &s->m, e);
    if (rc) return rc;
    search_job_software(&o->job, &base);
    base.tp = base.pp = base.cp = base.vpp = base.mbs = 1;
    /* the job's pipeline split where its options give one (the grid's
     * split field is then "given": these fields as they are) */
    if (o->job.split_set) {
        base.pp_account = o->job.pp_account;
        base.pp_first = o->job.pp_first, base.pp_last = o->job.pp_last;
        base.pp_layout = o->job.pp_layout;
    }
    {
        sysbuf = tp_xstrdup(o->system);
        char *save = NULL;
        for (char *t = strtok_r(sysbuf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (ns == CLI_MAX_SYSTEMS) {
                rc = tp_errf(e, TP_EUSAGE, "--system: at most %d systems",
                             CLI_MAX_SYSTEMS);
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
            search_system *sy = &sys[ns];
            memset(sy, 0, sizeof *sy);
            sy->price_usd_per_gpu_hour = o->price > 0 ? o->price
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
            if (!om) om = search_cache_ops_or_open(cache, y->gpu, o->keep_bad, &ops[ns], e);
            if (!om) {
                rc = e->status ? e->status : TP_EDATA;
                goto done;
            }
            cm = search_cache_comm_or_load(cache, y, o->keep_bad, &comm[ns], e);
            if (!cm) {
                rc = e->status ? e->status : TP_EDATA;
                ns++;
                goto done;
            }
            /* TP across nodes only where the user pins a TP that needs it. */
            int across = o->job.tp_set && o->job.tp > y->gpus_per_node;
            sy->ctx = (est_ctx){y, y->gpu, om, cm, across, 0, NULL};
            int64_t maxg = o->max_gpus > 0 ? o->max_gpus : 10000000;
            space_grid_default(&sy->grid, &s->m, across ? 1024 : y->gpus_per_node,
                               maxg, maxg);
            /* torchtitan has no attention-core recompute (Megatron-LM's
             * selective): its selective checkpointing is the op-level
             * policy (torchtitan's activation_checkpoint.py; issue 18) */
            if (o->job.framework == SPACE_FW_TORCHTITAN)
                for (int i = 0; i < sy->grid.n[SPACE_DIM_RECOMPUTE]; i++)
                    if (sy->grid.v[SPACE_DIM_RECOMPUTE][i]
                        == SPACE_RECOMPUTE_SELECTIVE)
                        sy->grid.v[SPACE_DIM_RECOMPUTE][i] =
                            SPACE_RECOMPUTE_SELECTIVE_OP;
            /* Whole nodes of this system unless the counts are given. */
            sy->gpus_multiple = o->gpus_arg ? 1 : y->gpus_per_node;
            ns++;
            if ((rc = fixes(o, &sy->grid, e))) goto done;
            if ((rc = dense_ep(&s->m, &sy->grid, e))) goto done;
        }
        if (ns == 0) {
            rc = tp_errf(e, TP_EUSAGE, "--system: no system named");
            goto done;
        }
    }
    if ((rc = gpu_counts(o, sys, ns, &s->counts, &s->n_counts, e))) goto done;
    if ((rc = moe_modelled(&s->m, &sys[0].ctx, &base, e))) goto done;

    s->q = (search_request){&s->m, sys, ns, base, s->counts, s->n_counts,
                            (search_objective)o->objective,
                            o->top_k > 0 ? o->top_k : 10, o->job.tokens,
                            o->budget_usd, o->budget_gpu_hours, o->deadline_s,
                            o->max_mem_fraction, o->no_prune,
                            o->svg != NULL || o->all_layouts, !o->no_savers,
                            0, !o->job.cuda_graph_set, !o->job.pp_schedule_set};
done:
    free(sysbuf);
    s->ns = ns;
    s->nemo_format = o->nemo_format;
    s->all_layouts = o->all_layouts;
    s->launch_forms = CLI_LAUNCH_FORM_ALL;
    if (rc) cli_search_close(s);
    return rc;
}

void cli_search_close(cli_search *s)
{
    if (!s) return;
    free(s->counts);
    for (int i = 0; i < s->ns; i++) {
        est_comm_free(s->comm[i]);
        est_models_free(s->ops[i]);
    }
    memset(s, 0, sizeof *s);
}

cJSON *cli_search_json(const cli_search *s, const search_answer *a, int timing)
{
    const search_request *q = &s->q;
    row w;
    /* Versioned here: a sweep record's "search" is this object as is. */
    cJSON *j = cli_json_version(cJSON_CreateObject());
    cJSON_AddStringToObject(j, "model", s->m.name);
    cJSON *sa = cJSON_AddArrayToObject(j, "systems");
    for (int i = 0; i < s->ns; i++) {
        cJSON *y = cJSON_CreateObject();
        cJSON_AddStringToObject(y, "name", s->sys[i].ctx.sys->name);
        cJSON_AddStringToObject(y, "gpu", s->sys[i].ctx.gpu->name);
        cJSON_AddNumberToObject(y, "gpus_per_node",
                                s->sys[i].ctx.sys->gpus_per_node);
        cJSON_AddNumberToObject(y, "price_usd_per_gpu_hour",
                                s->sys[i].price_usd_per_gpu_hour);
        cJSON_AddItemToArray(sa, y);
    }
    cJSON_AddStringToObject(j, "objective", search_objective_names[q->objective]);
    cJSON_AddNumberToObject(j, "seq_length", (double)q->base.seq);
    cJSON_AddNumberToObject(j, "global_batch_size", (double)q->base.gbs);
    if (q->tokens > 0) cJSON_AddNumberToObject(j, "tokens", q->tokens);
    else cJSON_AddNullToObject(j, "tokens");
    cJSON_AddNumberToObject(j, "min_gpus", (double)s->counts[0]);
    cJSON_AddNumberToObject(j, "max_gpus", (double)s->counts[s->n_counts - 1]);
    /* The memory rule: a fraction asked for, or the measured margin. */
    if (q->max_memory_fraction > 0) {
        cJSON_AddNumberToObject(j, "max_memory_fraction", q->max_memory_fraction);
        cJSON_AddNumberToObject(j, "memory_margin_fraction", 0);
    } else {
        cJSON_AddNullToObject(j, "max_memory_fraction");
        cJSON_AddNumberToObject(j, "memory_margin_fraction",
                                est_memory_margin(&q->base));
    }
    row best;
    if (a->n_ranked > 0) {
        row_fill(&best, q, &a->ranked[0]);
        row_tie(&best, &best, q);
        cli_json_band(j, &best.band);
    } else {
        cJSON_AddNullToObject(j, "error_band");
    }
    cJSON *ra = cJSON_AddArrayToObject(j, "ranked");
    for (int i = 0; i < a->n_ranked; i++) {
        /* the best is estimated once, above */
        if (i > 0) {
            row_fill(&w, q, &a->ranked[i]);
            row_tie(&w, &best, q);
        }
        cJSON_AddItemToArray(ra, row_json(i ? &w : &best, q, NULL, i + 1,
                                          s->torchtitan_version,
                                          s->nemo_format, s->launch_forms));
    }
    cJSON *pa = cJSON_AddArrayToObject(j, "pareto");
    for (int i = 0; i < a->n_front; i++) {
        row_fill(&w, q, &a->front[i]);
        if (a->n_ranked > 0) row_tie(&w, &best, q);
        cJSON_AddItemToArray(pa, row_json(&w, q, NULL, i + 1, s->torchtitan_version,
                                                 s->nemo_format, s->launch_forms));
    }
    if (s->all_layouts) {
        /* every layout estimated and admitted, in the search's order (the
         * same at any thread count), compact: no launches, no breakdown */
        cJSON *aa = cJSON_AddArrayToObject(j, "admitted");
        for (int64_t i = 0; i < a->n_points; i++) {
            const search_point *p = &a->points[i];
            space_layout l;
            char tag[96];
            search_point_layout(q, p, &l);
            space_layout_tag(&l, q->systems[p->sys].ctx.sys->gpus_per_node,
                             tag, sizeof tag);
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "layout", tag);
            cJSON_AddStringToObject(x, "system", q->systems[p->sys].ctx.sys->name);
            cJSON_AddNumberToObject(x, "gpus", (double)p->gpus);
            cJSON_AddNumberToObject(x, "iteration_time_s", p->iteration_s);
            cJSON_AddNumberToObject(x, "cost_usd_per_iteration", p->cost_usd);
            cJSON_AddNumberToObject(x, "peak_memory_bytes", p->mem_bytes);
            cJSON_AddItemToArray(aa, x);
        }
    }
    cJSON_AddItemToObject(j, "stats", stats_json(a, timing));
    if (a->n_ranked == 0) {
        cJSON *nm = cJSON_AddObjectToObject(j, "nearest_miss");
        if (a->near_memory.have)
            cJSON_AddItemToObject(nm, "memory",
                                  near_json(q, &a->near_memory, "bytes"));
        if (a->near_budget.have)
            cJSON_AddItemToObject(nm, "budget",
                                  near_json(q, &a->near_budget,
                                            "ratio to the tightest budget or "
                                            "deadline"));
        cli_miss_json(nm, q, a);
    }
    return j;
}

int cmd_search(const cli_opts *o_cmd, cli_out *out, tp_err *e)
{
    /* --near: the user's own job, searched as the same job (model,
     * system, GPUs, sequence, batch, precision, software) over every
     * layout */
    cli_opts so = *o_cmd;
    const cli_opts *o = &so;
    near_job nj;
    memset(&nj, 0, sizeof nj);
    int rc = o_cmd->job_file
                 ? TP_OK
                 : cli_model_unread(o->job.model, o->strict, cli_err(o), e);
    if (rc) return rc;
    cli_train_log lg;
    cli_run_fed fed;
    memset(&fed, 0, sizeof fed);
    if (o_cmd->log_file && !o_cmd->job_file)
        return tp_errf(e, TP_EUSAGE,
                       "search --log needs the job the log ran: --near FILE "
                       "(or --megatron-args, --nemo-overrides, "
                       "--torchtitan-config)");
    if (o_cmd->log_file && (rc = cli_train_log_read(o_cmd->log_file, &lg, e)))
        return rc;
    int db_owned = 0;
    hw_db *db = cli_hwdb_for(o, &db_owned, e);
    if (!db) return e->status ? e->status : TP_EDATA;
    rc = o_cmd->job_file ? job_open(&so, db, &nj, e) : TP_OK;
    if (rc) {
        if (db_owned) hw_db_free(db);
        return rc;
    }
    cli_search cs;
    rc = cli_search_open(o, db, cli_session_cache(o, db), &cs, e);
    if (rc) {
        if (db_owned) hw_db_free(db);
        return rc;
    }
    if (o_cmd->job_file) {
        /* the job as it ran, then (--log) against its log; calibrated,
         * every layout is searched at the run's kernel efficiency */
        job_estimate(&nj, &cs);
        if (o_cmd->log_file) {
            cli_fed_back(&fed, &lg, &cs.sys[0].ctx, &nj.m, &nj.r,
                         o_cmd->calibrate);
            if (fed.calibrated > 0) {
                for (int i = 0; i < cs.ns; i++) cs.sys[i].ctx.kernel_eff = fed.eff;
                job_estimate(&nj, &cs);
            }
        }
    }
    const space_model m = cs.m;
    const search_system *sys = cs.sys;
    const int ns = cs.ns;
    const int64_t *counts = cs.counts;
    const int n_counts = cs.n_counts;
    const search_request q = cs.q;
    const space_layout base = q.base;
    search_answer ans;
    memset(&ans, 0, sizeof ans);
    row *rows = NULL, *frows = NULL;
    if ((rc = search_run(&q, &ans, e))) goto done;
    /* nothing admitted: the nearest layout in figures, and the levers
     * that fit, each checked by a search (search/miss.c) */
    if (ans.n_ranked == 0 && (rc = search_explain_miss(&q, &ans, e)))
        goto done;

    rows = tp_xcalloc((size_t)ans.n_ranked + 1, sizeof *rows);
    frows = tp_xcalloc((size_t)ans.n_front + 1, sizeof *frows);
    for (int i = 0; i < ans.n_ranked; i++) row_fill(&rows[i], &q, &ans.ranked[i]);
    for (int i = 0; i < ans.n_front; i++) row_fill(&frows[i], &q, &ans.front[i]);
    for (int i = 0; i < ans.n_ranked; i++) row_tie(&rows[i], &rows[0], &q);
    for (int i = 0; i < ans.n_front && ans.n_ranked > 0; i++)
        row_tie(&frows[i], &rows[0], &q);
    int timing = !o->no_timing;
    char nearb[2048];
    cli_miss_line(&q, &ans, nearb, sizeof nearb);
    FILE *f = out->f;
    if (o->format == CLI_JSON || o->format == CLI_JSONL) {
        cJSON *st = stats_json(&ans, timing);
        if (o->format == CLI_JSONL) {
            for (int set = 0; set < 2; set++) {
                const row *rs = set ? frows : rows;
                int n = set ? ans.n_front : ans.n_ranked;
                for (int i = 0; i < n; i++) {
                    cJSON *j = cli_json_version(
                        row_json(&rs[i], &q, set ? "pareto" : "ranked", i + 1,
                                 o->torchtitan_version, o->nemo_format,
                                 CLI_LAUNCH_FORM_ALL));
                    char *s = cJSON_PrintUnformatted(j);
                    fprintf(f, "%s\n", s);
                    cJSON_free(s);
                    cJSON_Delete(j);
                }
            }
            cJSON *j = cli_json_version(cJSON_CreateObject());
            cJSON_AddItemToObject(j, "stats", st);
            if (ans.miss) {
                cJSON *nm = cJSON_AddObjectToObject(j, "nearest_miss");
                cli_miss_json(nm, &q, &ans);
            }
            char *s = cJSON_PrintUnformatted(j);
            fprintf(f, "%s\n", s);
            cJSON_free(s);
            cJSON_Delete(j);
        } else {
            cJSON_Delete(st);
            cJSON *sj = cli_search_json(&cs, &ans, timing);
            if (o_cmd->job_file)
                cJSON_AddItemToObject(sj, "near",
                                      job_json(&nj, ans.n_ranked ? rows : NULL,
                                                &q));
            if (o_cmd->log_file) cli_fed_json(sj, &fed, o_cmd->log_file);
            cli_print_json(f, sj);
        }
    } else if (o->format == CLI_CSV) {
        /* ep and etp: MoE layouts' expert-parallel and expert TP sizes,
         * empty for a dense model */
        const char *hdr[] = {"set", "rank", "system", "layout", "gpus", "tp",
                             "pp", "vpp", "cp", "dp", "mbs", "sp", "recompute",
                             "zero", "ep", "etp", "iteration_time_s",
                             "tokens_per_s", "mfu", "peak_memory_bytes",
                             "memory_margin_bytes", "memory_headroom_bytes",
                             "time_to_train_s", "gpu_hours", "cost_usd",
                             "bubble_s", "exposed_comm_s",
                             "error_band_pct", "tied_with_best", "megatron",
                             "nemo", "torchtitan_config", "miss_limit",
                             "miss_limit_value", "miss_excess", "lever"};
        cli_table t;
        cli_table_init(&t, 36, hdr, "lrllrrrrrrrrlrrrrrrrrrrrrrrrrllllrrl");
        for (int set = 0; set < 2; set++) {
            const row *rs = set ? frows : rows;
            int n = set ? ans.n_front : ans.n_ranked;
            for (int i = 0; i < n; i++) {
                const row *w = &rs[i];
                const space_layout *l = &w->r.layout;
                char c[24][48];
                snprintf(c[0], 48, "%d", i + 1);
                snprintf(c[1], 48, "%lld", (long long)w->p->gpus);
                cli_csv_layout_cells(c, l, m.num_experts > 0);
                snprintf(c[10], 48, "%.6g", w->r.iteration_s);
                snprintf(c[11], 48, "%.6g", w->r.tokens_per_s);
                snprintf(c[12], 48, "%.4f", w->r.mfu);
                snprintf(c[13], 48, "%.0f", w->r.mem.total);
                snprintf(c[20], 48, "%.0f", w->margin);
                snprintf(c[14], 48, "%.0f", w->headroom);
                /* Without --tokens: empty, as JSON's null. */
                snprintf(c[15], 48, "%.6g", w->train_s);
                snprintf(c[16], 48, "%.6g", w->gpu_hours);
                snprintf(c[17], 48, "%.6g", w->cost_usd);
                if (!(q.tokens > 0)) c[15][0] = c[16][0] = c[17][0] = '\0';
                snprintf(c[18], 48, "%.6g", w->r.time.bubble_s);
                snprintf(c[19], 48, "%.6g", w->exposed_s);
                snprintf(c[23], 48, "%.6g", w->band.mape_pct);
                if (w->band.basis == EST_BAND_NONE) c[23][0] = '\0';
                launch_plan lc;
                launch_of(&lc, w, &q, o->torchtitan_version, o->nemo_format);
                launch_text mg = {0}, nm = {0}, tt = {0};
                launch_megatron(&lc, &mg);
                launch_nemo(&lc, &nm);
                launch_torchtitan(&lc, &tt);
                cli_table_row(&t, set ? "pareto" : "ranked", c[0],
                              w->sys->ctx.sys->name, w->tag, c[1], c[2], c[3],
                              c[4], c[5], c[6], c[7], c[8],
                              space_recompute_names[l->recompute], c[9], c[21],
                              c[22], c[10],
                              c[11], c[12], c[13], c[20], c[14], c[15], c[16],
                              c[17], c[18], c[19], c[23],
                              w->tied ? "1" : "0", launch_text_str(&mg),
                              launch_text_str(&nm), launch_text_str(&tt), "", "",
                              "", "");
                launch_text_free(&mg);
                launch_text_free(&nm);
                launch_text_free(&tt);
            }
        }
        /* a miss: the nearest layout, then each lever's #1, with the
         * binding limit and the excess over it (no launches) */
        cli_miss_csv_row mr[SEARCH_LEVERS_MAX + 1];
        int nmr = cli_miss_csv_rows(&q, &ans, mr, SEARCH_LEVERS_MAX + 1);
        for (int i = 0; i < nmr; i++) {
            const search_figures *fg = mr[i].f;
            const space_layout *l = &fg->layout;
            char c[24][48];
            snprintf(c[0], 48, "%d", mr[i].rank);
            snprintf(c[1], 48, "%lld", (long long)fg->gpus);
            cli_csv_layout_cells(c, l, m.num_experts > 0);
            snprintf(c[10], 48, "%.6g", fg->iteration_s);
            snprintf(c[13], 48, "%.0f", fg->value[SEARCH_LIMIT_MEMORY]);
            snprintf(c[15], 48, "%.6g", fg->value[SEARCH_LIMIT_DEADLINE]);
            snprintf(c[16], 48, "%.6g", fg->value[SEARCH_LIMIT_GPU_HOURS]);
            snprintf(c[17], 48, "%.6g", fg->value[SEARCH_LIMIT_BUDGET_USD]);
            if (!(q.tokens > 0)) c[15][0] = c[16][0] = c[17][0] = '\0';
            snprintf(c[18], 48, "%.6g", mr[i].limit);
            snprintf(c[19], 48, "%.6g", mr[i].excess);
            cli_table_row(&t, mr[i].set, c[0], mr[i].system, mr[i].tag, c[1],
                          c[2], c[3], c[4], c[5], c[6], c[7], c[8],
                          space_recompute_names[l->recompute], c[9], c[21],
                          c[22], c[10], "", "", c[13], "", "", c[15], c[16],
                          c[17], "", "", "", "", "", "", "", mr[i].binding,
                          c[18], c[19], mr[i].lever);
        }
        cli_table_print(&t, f, CLI_CSV);
        cli_table_free(&t);
    } else {
        char hd[2048];
        size_t at = 0;
        at += (size_t)snprintf(hd, sizeof hd, "%s, seq %lld, global batch "
                               "%lld, %s", m.name, (long long)base.seq,
                               (long long)base.gbs, hw_dtype_names[base.dtype]);
        if (q.tokens > 0 && at < sizeof hd)
            at += (size_t)snprintf(hd + at, sizeof hd - at, ", %.4g tokens",
                                   q.tokens);
        if (at < sizeof hd)
            at += (size_t)snprintf(hd + at, sizeof hd - at,
                                   "; %lld to %lld GPUs (%d counts) on",
                                   (long long)counts[0],
                                   (long long)counts[n_counts - 1], n_counts);
        for (int i = 0; i < ns && at < sizeof hd; i++)
            at += (size_t)snprintf(hd + at, sizeof hd - at,
                                   "%s %s (%s, $%.3f/GPU-h)", i ? "," : "",
                                   sys[i].ctx.sys->name, sys[i].ctx.gpu->name,
                                   sys[i].price_usd_per_gpu_hour);
        cli_wrapf(f, 2, "%s", hd);
        print_memory_rule(f, &q, o->explain);
        print_counts(f, &ans, o->explain || ans.n_ranked == 0, o->explain);
        print_pipeline_sizes(f, &ans, o->explain);
        if (timing)
            fprintf(f, "search: %.3f s on %d threads\n", ans.stats.elapsed_s,
                    ans.stats.threads);
        if (ans.n_ranked > 0) {
            fprintf(f, "\ntop %d by %s:\n", ans.n_ranked,
                    search_objective_names[q.objective]);
            print_rows(f, o->format, rows, ans.n_ranked, ns > 1, &q);
            print_ties(f, rows, ans.n_ranked, &q);
            fprintf(f, "\nPareto front of time against cost (%d layouts; none "
                       "is both faster and cheaper than another):\n",
                    ans.n_front);
            print_rows(f, o->format, frows, ans.n_front, ns > 1, &q);
            if (o->explain) print_explain(f, rows, ans.n_ranked);
            if (o_cmd->job_file) job_print(f, &nj, &rows[0], &q);
            if (o_cmd->log_file) {
                est_band jb;
                est_error_band(cs.sys[0].ctx.gpu, &nj.m, &nj.r.layout,
                               nj.gpus, &jb);
                cli_fed_print(f, &fed, o_cmd->log_file, &jb);
                if (fed.calibrated > 0)
                    fprintf(f, "every layout above was estimated at that "
                               "calibrated kernel efficiency\n");
            }
            print_launches(f, o, &rows[0], &q);
        } else {
            fprintf(f, "\nNOTHING FEASIBLE: no layout fits the memory, budget "
                       "and deadline asked for.\n");
            if (ans.stats.infeasible[EST_MOE] > 0)
                fprintf(f, "%lld layouts refused as not modelled (%s)\n",
                        (long long)ans.stats.infeasible[EST_MOE],
                        est_reason_names[EST_MOE]);
            cli_miss_print(f, &q, &ans);
        }
    }
    if (o->svg && (rc = write_svg(o->svg, o->out, &q, &ans, e))) goto done;
    if (o->sbatch && ans.n_ranked > 0) {
        cli_out so_out;
        if ((rc = cli_out_open(&so_out, o->sbatch, o->out, e))) goto done;
        launch_plan lc;
        launch_of(&lc, &rows[0], &q, o->torchtitan_version, o->nemo_format);
        launch_text t = {0};
        launch_megatron_script(&lc, &t);
        fputs(launch_text_str(&t), so_out.f);
        launch_text_free(&t);
        if ((rc = cli_out_close(&so_out, 1, e))) goto done;
    }
    if (ans.n_ranked == 0) {
        /* what the estimator does not model first: not a shortfall */
        if (ans.stats.infeasible[EST_MOE] > 0)
            fprintf(cli_err(o), "trainplan: %lld layouts refused as not modelled "
                    "(%s)\n", (long long)ans.stats.infeasible[EST_MOE],
                    est_reason_names[EST_MOE]);
        fprintf(cli_err(o), "trainplan: nothing feasible%s%s\n", nearb[0] ? "; " : "",
                nearb);
        rc = TP_INFEASIBLE;
    }
done:
    free(rows);
    free(frows);
    search_answer_free(&ans);
    cli_search_close(&cs);
    if (db_owned) hw_db_free(db);
    return rc;
}
