/*
 * search.c - `search --format json` and a sweep's record: each ranked
 * layout with its estimate, memory, error band and launches (as text and
 * as data), the counts of layouts rejected, pruned and estimated, the
 * pipeline sizes and why some admit nothing, a miss's levers
 * (emit_search_json); the CSV cells of a layout; and the files a search
 * writes beside its output: the SVG picture (--svg) and #1's launch
 * script (--sbatch).
 */
#include "emit_rows.h"
#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the ranking orders by, per layout: the iteration time (time,
 * throughput and time to train order alike), or its cost. */
static double row_value(const emit_row *w, const search_request *q)
{
    return q->objective == SEARCH_BY_COST ? w->p->cost_usd : w->r.iteration_s;
}

/* w's error band, and whether w is tied with the best row: its objective
 * within the larger of the two bands of the best's (the estimator cannot
 * tell them apart on the published runs). The best is tied with none. */
void emit_row_tie(emit_row *w, const emit_row *best, const search_request *q)
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
void emit_row_launch(launch_plan *c, const emit_row *w, const search_request *q,
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

void emit_row_fill(emit_row *w, const search_request *q, const search_point *p)
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


/* forms: the launches a row carries (EMIT_LAUNCH_FORM_* bits; a search's
 * JSON every one, a sweep's records what its --launch asks) */
cJSON *emit_row_json(const emit_row *w, const search_request *q, const char *set,
                    int rank, int tt_version, int nemo_format, unsigned forms)
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
    emit_json_split(j, q->model, l);
    cJSON_AddNumberToObject(j, "context_parallel_size", (double)l->cp);
    cJSON_AddNumberToObject(j, "data_parallel_size", (double)l->dp);
    cJSON_AddNumberToObject(j, "micro_batch_size", (double)l->mbs);
    cJSON_AddNumberToObject(j, "global_batch_size", (double)l->gbs);
    cJSON_AddNumberToObject(j, "seq_length", (double)l->seq);
    cJSON_AddBoolToObject(j, "sequence_parallel", l->sp);
    cJSON_AddStringToObject(j, "recompute_granularity",
                            space_recompute_names[l->recompute]);
    if (l->recompute == SPACE_RECOMPUTE_SELECTIVE)
        emit_json_rc_modules(j, l);
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
    emit_json_savers(j, l);
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
    est_term t[EST_TIME_TERMS];
    int nt = est_time_terms(&w->r.time, 0, t);
    for (int i = 0; i < nt; i++) cJSON_AddNumberToObject(b, t[i].name, t[i].v);
    if (!forms) return j;
    cJSON *la = cJSON_AddObjectToObject(j, "launch");
    launch_plan c;
    emit_row_launch(&c, w, q, tt_version, nemo_format);
    launch_text lt = {0}, nemo = {0}, tt = {0};
    if (forms & EMIT_LAUNCH_FORM_MEGATRON) {
        launch_megatron(&c, &lt);
        cJSON_AddStringToObject(la, "megatron", launch_text_str(&lt));
        lt.n = 0;
        launch_megatron_script(&c, &lt);
        cJSON_AddStringToObject(la, "megatron_sbatch", launch_text_str(&lt));
    }
    if (forms & EMIT_LAUNCH_FORM_NEMO) {
        launch_nemo(&c, &nemo);
        cJSON_AddStringToObject(la, "nemo", launch_text_str(&nemo));
    }
    if (forms & EMIT_LAUNCH_FORM_TORCHTITAN) {
        launch_torchtitan(&c, &tt);
        cJSON_AddStringToObject(la, "torchtitan_config", launch_text_str(&tt));
    }
    /* issue 20: the same launches as data, beside the text */
    cJSON *args = cJSON_AddObjectToObject(j, "launch_args");
    if (forms & EMIT_LAUNCH_FORM_MEGATRON)
        cJSON_AddItemToObject(args, "megatron", launch_megatron_json(&c));
    if (forms & EMIT_LAUNCH_FORM_NEMO)
        cJSON_AddItemToObject(args, "nemo",
                              launch_nemo_json(launch_text_str(&nemo),
                                                   nemo_format));
    if (forms & EMIT_LAUNCH_FORM_TORCHTITAN)
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
const char *emit_pp_why(const search_pp_stats *p)
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

/* What a reason of emit_pp_why means, in words. */
const char *emit_pp_why_words(const char *why)
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

cJSON *emit_stats_json(const search_answer *a, int timing)
{
    const search_stats *st = &a->stats;
    cJSON *s = cJSON_CreateObject();
    /* the pipeline sizes, what the grids leave out, the splits */
    cJSON *pps = cJSON_AddArrayToObject(s, "pipeline_sizes");
    for (int k = 0; k < st->n_pp; k++) {
        const search_pp_stats *p = &st->pp[k];
        const char *w = emit_pp_why(p);
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
void emit_csv_layout_cells(char c[][48], const space_layout *l, int moe)
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

cJSON *emit_search_json(const search_setup *s, const emit_search_form *f,
                        const search_answer *a, int timing)
{
    const search_request *q = &s->q;
    emit_row w;
    /* Versioned here: a sweep record's "search" is this object as is. */
    cJSON *j = emit_json_version(cJSON_CreateObject());
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
    emit_row best;
    if (a->n_ranked > 0) {
        emit_row_fill(&best, q, &a->ranked[0]);
        emit_row_tie(&best, &best, q);
        emit_json_band(j, &best.band);
    } else {
        cJSON_AddNullToObject(j, "error_band");
    }
    cJSON *ra = cJSON_AddArrayToObject(j, "ranked");
    for (int i = 0; i < a->n_ranked; i++) {
        /* the best is estimated once, above */
        if (i > 0) {
            emit_row_fill(&w, q, &a->ranked[i]);
            emit_row_tie(&w, &best, q);
        }
        cJSON_AddItemToArray(ra, emit_row_json(i ? &w : &best, q, NULL, i + 1,
                                          f->torchtitan_version,
                                          f->nemo_format, f->launch_forms));
    }
    cJSON *pa = cJSON_AddArrayToObject(j, "pareto");
    for (int i = 0; i < a->n_front; i++) {
        emit_row_fill(&w, q, &a->front[i]);
        if (a->n_ranked > 0) emit_row_tie(&w, &best, q);
        cJSON_AddItemToArray(pa, emit_row_json(&w, q, NULL, i + 1, f->torchtitan_version,
                                                 f->nemo_format, f->launch_forms));
    }
    if (f->all_layouts) {
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
    cJSON_AddItemToObject(j, "stats", emit_stats_json(a, timing));
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
        emit_miss_json(nm, q, a);
    }
    return j;
}

int emit_search_svg(const char *path, FILE *caller, const search_request *q,
                    const search_answer *a, const char *version, tp_err *e)
{
    size_t n = 0;
    char *doc = plot_search_svg(q, a, version, &n);
    emit_out o;
    int rc = emit_out_open(&o, path, caller, e);
    if (!rc) {
        fwrite(doc, 1, n, o.f);
        rc = emit_out_close(&o, 1, e);
    }
    free(doc);
    return rc;
}

int emit_search_sbatch(const char *path, FILE *caller, const emit_row *best,
                       const search_request *q, int tt_version,
                       int nemo_format, tp_err *e)
{
    emit_out o;
    int rc = emit_out_open(&o, path, caller, e);
    if (rc) return rc;
    launch_plan lc;
    emit_row_launch(&lc, best, q, tt_version, nemo_format);
    launch_text t = {0};
    launch_megatron_script(&lc, &t);
    fputs(launch_text_str(&t), o.f);
    launch_text_free(&t);
    return emit_out_close(&o, 1, e);
}
