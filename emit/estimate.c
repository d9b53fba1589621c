/*
 * estimate.c - how `trainplan estimate` writes one estimate (emit.h:
 * emit_estimate_json, emit_estimate_text): the layout as estimated and
 * what the search chose of it, the iteration's time term by term with its
 * error band, the memory of the busiest GPU and of every pipeline stage,
 * the time and cost to train, a run's log against it (--log) and the
 * operators timed (--ops). Nothing here reads an option: the command layer
 * fills an emit_estimate (lib/cmd_estimate.c).
 *
 * MFU convention: model FLOPs (space.h: 2 per multiply-add, GEMMs only,
 * attention over the whole sequence, backward = 2 x forward, no
 * recompute) over the GPU's dense 16-bit peak, also for fp8 runs.
 */
#include "emit.h"
#include "report.h"

#include <stdlib.h>
#include <string.h>

static const char mfu_convention[] =
    "model FLOPs per iteration (2 per multiply-add, GEMMs incl. LM head, "
    "attention QK^T and AV over the whole sequence (non-causal, as "
    "Megatron-LM and PaLM count), backward = 2 x forward, recompute not "
    "counted) / (iteration time x GPUs x dense bf16/fp16 peak of the GPU; "
    "also for fp8)";

/* Layout fields the search may choose: their JSON name and their name in
 * the table output; chosen_unset says which the user left unset. */
enum { N_CHOSEN = 10 };
static const struct { const char *json, *label; } chosen_names[N_CHOSEN] = {
    {"tensor_model_parallel_size", "TP"},
    {"pipeline_model_parallel_size", "PP"},
    {"context_parallel_size", "CP"},
    {"virtual_stages_per_pipeline_rank", "VPP"},
    {"micro_batch_size", "micro-batch"},
    {"sequence_parallel", "SP"},
    {"recompute_granularity", "recompute"},
    {"zero_stage", "ZeRO"},
    {"expert_model_parallel_size", "EP"},
    {"expert_tensor_parallel_size", "expert TP"},
};

static void chosen_unset(const space_layout *w, int unset[N_CHOSEN])
{
    const int64_t v[N_CHOSEN] = {w->tp,  w->pp, w->cp, w->vpp, w->mbs, w->sp,
                                 (int)w->recompute, (int)w->zero, w->ep,
                                 w->etp};
    for (int i = 0; i < N_CHOSEN; i++) unset[i] = v[i] == SEARCH_UNSET;
}

/* Micro-batches per iteration; 0 for a layout no GPU count fits (dp 0). */
static int64_t micro_batches(const space_layout *l)
{
    return l->dp > 0 && l->mbs > 0 ? l->gbs / (l->mbs * l->dp) : 0;
}

static void add_layout_json(cJSON *j, const est_result *r,
                            const space_layout *want, const space_model *m)
{
    const space_layout *l = &r->layout;
    cJSON *a = cJSON_AddObjectToObject(j, "layout");
    cJSON_AddNumberToObject(a, "gpus", (double)r->gpus);
    cJSON_AddNumberToObject(a, "tensor_model_parallel_size", (double)l->tp);
    cJSON_AddNumberToObject(a, "pipeline_model_parallel_size", (double)l->pp);
    cJSON_AddNumberToObject(a, "context_parallel_size", (double)l->cp);
    cJSON_AddNumberToObject(a, "data_parallel_size", (double)l->dp);
    cJSON_AddNumberToObject(a, "virtual_stages_per_pipeline_rank",
                            (double)l->vpp);
    cJSON_AddStringToObject(a, "pipeline_schedule", space_pp_schedule_name(l));
    /* Layers per model chunk where they split evenly, else null; the
     * split the estimate used, per pipeline rank (first, middle, last). */
    /* Megatron-LM's --num-layers-per-virtual-pipeline-stage where it can
     * say the split: even, or with the embedding and loss counted as
     * layers (arguments.py counts them in) */
    space_split sp;
    int64_t slots = m->num_layers + space_split_accounted(l);
    if (space_split_resolve(m, l, &sp, NULL, 0) == SPACE_OK && !l->pp_layout
        && l->pp_first <= 0 && l->pp_last <= 0
        && slots % (l->pp * l->vpp) == 0)
        cJSON_AddNumberToObject(a, "num_layers_per_virtual_pipeline_stage",
                                (double)(slots / (l->pp * l->vpp)));
    else
        cJSON_AddNullToObject(a, "num_layers_per_virtual_pipeline_stage");
    cJSON *split = cJSON_AddObjectToObject(a, "layers_per_pipeline_rank");
    cJSON_AddNumberToObject(split, "first", (double)space_rank_layers(m, l, 0));
    cJSON_AddNumberToObject(
        split, "middle", (double)space_rank_layers(m, l, l->pp > 2 ? 1 : 0));
    cJSON_AddNumberToObject(split, "last",
                            (double)space_rank_layers(m, l, l->pp - 1));
    emit_json_split(a, m, l);
    if (m->num_experts > 0) { /* MoE only: dense output as before */
        int64_t ep = space_layout_ep(l), etp = space_layout_etp(l);
        cJSON_AddNumberToObject(a, "expert_model_parallel_size", (double)ep);
        cJSON_AddNumberToObject(a, "expert_tensor_parallel_size", (double)etp);
        cJSON_AddNumberToObject(a, "expert_data_parallel_size",
                                (double)(l->tp * l->cp * l->dp / (ep * etp)));
        cJSON_AddStringToObject(a, "moe_token_dispatcher_type",
                                space_moe_dispatcher_name(l));
        cJSON_AddStringToObject(a, "moe_comm_overlap",
                                space_moe_overlap_name(l));
        cJSON_AddBoolToObject(a, "moe_router_padding_for_quantization",
                              l->moe_router_pad != 0);
        cJSON_AddBoolToObject(a, "moe_permute_fusion",
                              l->moe_permute_fusion != 0);
        cJSON_AddBoolToObject(a, "moe_router_fusion", l->moe_router_fusion != 0);
        cJSON_AddStringToObject(a, "moe_flex_dispatcher_backend",
                                space_moe_flex_backend_name(l));
        if (l->moe_imbalance > 0)
            cJSON_AddNumberToObject(a, "moe_imbalance", l->moe_imbalance);
        else
            cJSON_AddNullToObject(a, "moe_imbalance");
    }
    cJSON_AddNumberToObject(a, "micro_batch_size", (double)l->mbs);
    cJSON_AddNumberToObject(a, "global_batch_size", (double)l->gbs);
    cJSON_AddNumberToObject(a, "micro_batches", (double)micro_batches(l));
    cJSON_AddNumberToObject(a, "seq_length", (double)l->seq);
    cJSON_AddBoolToObject(a, "sequence_parallel", l->sp);
    cJSON_AddStringToObject(a, "recompute_granularity",
                            space_recompute_names[l->recompute]);
    if (l->recompute == SPACE_RECOMPUTE_SELECTIVE)
        emit_json_rc_modules(a, l);
    if (l->recompute == SPACE_RECOMPUTE_FULL) {
        cJSON_AddStringToObject(a, "recompute_method",
                                space_recompute_method_names
                                    [l->recompute_method]);
        if (l->recompute_layers > 0)
            cJSON_AddNumberToObject(a, "recompute_num_layers",
                                    (double)l->recompute_layers);
        else if (l->recompute_method == SPACE_RECOMPUTE_UNIFORM)
            cJSON_AddNumberToObject(a, "recompute_num_layers", 1);
        else
            cJSON_AddNullToObject(a, "recompute_num_layers");
    }
    cJSON_AddBoolToObject(a, "use_distributed_optimizer",
                          l->zero >= SPACE_ZERO_1);
    cJSON_AddNumberToObject(a, "zero_stage", (double)l->zero);
    cJSON_AddStringToObject(a, "precision", hw_dtype_names[l->dtype]);
    cJSON_AddBoolToObject(a, "accumulate_allreduce_grads_in_fp32",
                          space_grad_bytes(l) >= 4);
    cJSON_AddBoolToObject(a, "fp32_params_no_master", l->param_fp32);
    if (l->dtype == HW_FP8) {
        cJSON_AddStringToObject(a, "fp8_recipe",
                                space_fp8_recipe_names[l->fp8_recipe]);
        cJSON_AddStringToObject(a, "fp8_library",
                                l->fp8_lib == SPACE_FP8_LIB_TE
                                    ? "transformer-engine"
                                    : "torchao");
        cJSON_AddBoolToObject(a, "fp8_param_gather", l->fp8_params);
        cJSON_AddStringToObject(a, "fp8_activation_cache",
                                space_fp8_act_cache_names
                                    [(unsigned)l->fp8_act_cache
                                             < SPACE_FP8_ACT_COUNT
                                         ? l->fp8_act_cache
                                         : 0]);
    }
    if (l->dtype == HW_FP8 || l->dtype == HW_FP4)
        cJSON_AddBoolToObject(a, "fp8_dot_product_attention",
                              space_fp8_attention(l));
    cJSON_AddBoolToObject(a, "overlap_grad_reduce", !l->no_dp_overlap);
    cJSON_AddStringToObject(a, "tp_comm_overlap",
                            space_tp_overlap_names[l->tp_overlap]);
    cJSON_AddStringToObject(a, "cp_comm_type", space_cp_comm_names[l->cp_comm]);
    cJSON_AddBoolToObject(a, "scatter_gather_tensors_in_pipeline",
                          l->pp_scatter_gather);
    cJSON_AddBoolToObject(a, "eager", l->eager);
    cJSON_AddBoolToObject(a, "cross_entropy_loss_fusion",
                          l->ce_fusion || l->ce_te);
    if (l->ce_fusion || l->ce_te)
        cJSON_AddStringToObject(a, "cross_entropy_fusion_impl",
                                l->ce_te ? "te" : "native");
    cJSON_AddStringToObject(a, "cuda_graph_impl", space_cuda_graph_name(l));
    if (l->cuda_graph == SPACE_CG_LOCAL || l->cuda_graph == SPACE_CG_TE) {
        cJSON *cg = cJSON_AddArrayToObject(a, "cuda_graph_scope");
        for (int b = 0; b < SPACE_CGM_COUNT; b++)
            if (l->cuda_graph_modules & (1u << b))
                cJSON_AddItemToArray(cg, cJSON_CreateString(space_cgm_names[b]));
    }
    cJSON_AddBoolToObject(a, "fsdp_double_buffer", l->fsdp_double_buffer);
    cJSON_AddBoolToObject(a, "expandable_segments", l->alloc_expandable);
    cJSON_AddBoolToObject(a, "overlap_p2p_comm",
                          l->pp > 1 && l->vpp > 1 && !l->no_pp_overlap);
    cJSON_AddStringToObject(a, "framework", space_framework_names[l->framework]);
    cJSON_AddStringToObject(a, "software_stack",
                            space_stack_names[space_layout_stack(l)]);
    cJSON_AddStringToObject(a, "attention_backend",
                            space_attn_names[l->flash]);
    if (l->n_docs > 0) {
        cJSON *pd = cJSON_AddArrayToObject(a, "packed_documents");
        for (int i = 0; i < l->n_docs; i++) {
            cJSON *d = cJSON_CreateObject();
            cJSON_AddNumberToObject(d, "length", (double)l->doc_len[i]);
            cJSON_AddNumberToObject(d, "share", l->doc_share[i]);
            cJSON_AddItemToArray(pd, d);
        }
    } else {
        cJSON_AddNullToObject(a, "packed_documents");
    }
    cJSON_AddNumberToObject(a, "attention_dropout", m->attn_dropout);
    cJSON_AddNumberToObject(a, "hidden_dropout", m->hidden_dropout);
    emit_json_savers(a, l);
    cJSON *ch = cJSON_AddArrayToObject(a, "chosen");
    int unset[N_CHOSEN];
    chosen_unset(want, unset);
    for (int i = 0; i < N_CHOSEN; i++)
        if (unset[i])
            cJSON_AddItemToArray(ch, cJSON_CreateString(chosen_names[i].json));
}

static int mem_terms(const est_result *r, est_term *t)
{
    const est_memory *mm = &r->mem;
    est_term all[] = {{"weights_bytes", mm->weights},
                  {"gradients_bytes", mm->grads},
                  {"optimizer_bytes", mm->optimizer},
                  {"fp8_weight_copies_bytes", mm->fp8_weights},
                  {"activations_bytes", mm->activations},
                  {"optimizer_step_transient_bytes", mm->step_transient},
                  {"workspace_bytes", mm->workspace},
                  {"allocated_bytes", mm->allocated},
                  {"allocator_fragmentation_bytes", mm->fragmentation},
                  {"reserved_bytes", mm->reserved},
                  {"cuda_context_bytes", mm->context},
                  {"nccl_buffers_bytes", mm->nccl},
                  {"moe_dispatcher_buffers_bytes", mm->moe_comm},
                  {"cuda_graph_pool_bytes", mm->graph_pool},
                  {"allowance_bytes", mm->allowance},
                  {"backward_peak_bytes", mm->backward_peak},
                  {"optimizer_step_peak_bytes", mm->step_peak},
                  {"total_bytes", mm->total},
                  {"host_offload_bytes", mm->host}};
    int n = (int)(sizeof all / sizeof all[0]);
    memcpy(t, all, sizeof all);
    return n;
}

/* Every pipeline stage's memory (est_memory_stage with the device's
 * share, est_memory_device), as a table or the "memory_per_stage" array. */
static void print_stages(const est_ctx *c, const space_model *m,
                         const space_layout *l, emit_format fmt, FILE *f,
                         cJSON *j)
{
    const char *hdr[] = {"stage", "layers", "params", "states GiB",
                         "activ. GiB", "alloc GiB", "reserved GiB",
                         "device GiB", "peak in"};
    emit_table tab;
    cJSON *a = j ? cJSON_AddArrayToObject(j, "memory_per_stage") : NULL;
    if (!j) emit_table_init(&tab, 9, hdr, "rrrrrrrrl");
    for (int64_t r = 0; r < l->pp; r++) {
        est_memory s;
        est_memory_stage(m, l, r, &s);
        est_memory_device(c, m, l, &s);
        double states = s.weights + s.grads + s.optimizer + s.fp8_weights;
        const char *ph = s.peak_in_step ? "optimizer step" : "backward";
        if (a) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "stage", (double)r);
            cJSON_AddNumberToObject(o, "layers",
                                    (double)space_rank_layers(m, l, r));
            cJSON_AddNumberToObject(o, "params", s.params);
            cJSON_AddNumberToObject(o, "states_bytes", states);
            cJSON_AddNumberToObject(o, "activations_bytes", s.activations);
            cJSON_AddNumberToObject(o, "allocated_bytes", s.allocated);
            cJSON_AddNumberToObject(o, "reserved_bytes", s.reserved);
            cJSON_AddNumberToObject(o, "total_bytes", s.total);
            cJSON_AddStringToObject(o, "peak_phase", s.peak_in_step
                                                         ? "optimizer_step"
                                                         : "backward");
            cJSON_AddItemToArray(a, o);
            continue;
        }
        char v[8][32];
        snprintf(v[0], 32, "%lld", (long long)r);
        snprintf(v[1], 32, "%lld", (long long)space_rank_layers(m, l, r));
        snprintf(v[2], 32, "%.4g", s.params);
        snprintf(v[3], 32, "%.2f", states / 1073741824.0);
        snprintf(v[4], 32, "%.2f", s.activations / 1073741824.0);
        snprintf(v[5], 32, "%.2f", s.allocated / 1073741824.0);
        snprintf(v[6], 32, "%.2f", s.reserved / 1073741824.0);
        snprintf(v[7], 32, "%.2f", s.total / 1073741824.0);
        emit_table_row(&tab, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], ph);
    }
    if (!j) {
        emit_table_print(&tab, f, fmt);
        emit_table_free(&tab);
    }
}

/* A table of terms: name, value, and its share of `whole` (percent) or,
 * with whole = 0, the value in GiB. */
static void print_terms(FILE *f, emit_format fmt, const char *title,
                        const char *unit, const char *third, const est_term *t,
                        int n, double whole)
{
    const char *hdr[] = {title, unit, third};
    emit_table tab;
    emit_table_init(&tab, 3, hdr, "lrr");
    for (int i = 0; i < n; i++) {
        char v[32], w[32];
        snprintf(v, sizeof v, whole > 0 ? "%.4f" : "%.0f", t[i].v);
        if (whole > 0)
            snprintf(w, sizeof w, "%.1f %%", 100 * t[i].v / whole);
        else
            snprintf(w, sizeof w, "%.2f", t[i].v / 1073741824.0);
        emit_table_row(&tab, t[i].name, v, w);
    }
    emit_table_print(&tab, f, fmt);
    emit_table_free(&tab);
}

/* What the estimate of l timed, operator by operator (est_trace): a
 * table, or the "ops" array of the JSON output. */
static void print_ops(const est_ctx *c, const space_model *m,
                      const space_layout *l, emit_format fmt, FILE *f,
                      cJSON *j)
{
    est_trace *tr = tp_xmalloc(sizeof *tr);
    est_ctx ct = *c;
    ct.trace = tr;
    est_result r;
    est_estimate(&ct, m, l, &r);
    if (j) {
        cJSON *a = cJSON_AddArrayToObject(j, "ops");
        for (int i = 0; i < tr->n; i++) {
            const est_trace_row *w = &tr->row[i];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "where", w->where);
            cJSON_AddStringToObject(o, "what", w->what);
            cJSON_AddStringToObject(o, "shape", w->shape);
            cJSON_AddNumberToObject(o, "fwd_s", w->fwd_s);
            cJSON_AddNumberToObject(o, "bwd_s", w->bwd_s);
            cJSON_AddItemToArray(a, o);
        }
        free(tr);
        return;
    }
    const char *hdr[] = {"where", "operator", "shape", "fwd us", "bwd us"};
    emit_table t;
    emit_table_init(&t, 5, hdr, "lllrr");
    for (int i = 0; i < tr->n; i++) {
        const est_trace_row *w = &tr->row[i];
        char a[24], b[24];
        snprintf(a, sizeof a, "%.1f", w->fwd_s * 1e6);
        snprintf(b, sizeof b, "%.1f", w->bwd_s * 1e6);
        emit_table_row(&t, w->where, w->what, w->shape, a, b);
    }
    fprintf(f, "\noperators timed (one layer, one micro-batch; first and "
               "last stage; once per iteration), after the kernel "
               "efficiency; collectives before any overlap:\n");
    emit_table_print(&t, f, fmt);
    emit_table_free(&t);
    if (tr->dropped)
        fprintf(f, "(%d more not kept)\n", tr->dropped);
    free(tr);
}

/* What both forms print beyond the result: its terms, the time and
 * cost to train the tokens asked, the error band. */
typedef struct figures {
    est_term tt[EST_TIME_TERMS], mt[24];
    int nt, nm;
    double tokens, train_s, gpu_hours, cost;
    est_band band;
} figures;

static void figures_of(const emit_estimate *a, figures *g)
{
    const est_result *r = a->r;
    const hw_system *y = a->ctx->sys;
    g->nt = est_time_terms(&r->time, 1, g->tt);
    g->nm = mem_terms(r, g->mt);
    g->tokens = a->tokens;
    g->train_s = g->tokens > 0 && r->tokens_per_s > 0
                     ? g->tokens / r->tokens_per_s : 0;
    g->gpu_hours = g->train_s * (double)r->gpus / 3600;
    g->cost = g->gpu_hours * y->price_usd_per_gpu_hour;
    est_error_band(y->gpu, a->m, &r->layout, r->gpus, &g->band);
}

cJSON *emit_estimate_json(const emit_estimate *a)
{
    const est_ctx *c = a->ctx;
    const hw_system *y = c->sys;
    const space_model *m = a->m;
    const est_result *r = a->r;
    const space_layout *l = &r->layout;
    figures fg, *g = &fg;
    figures_of(a, g);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", m->name);
    cJSON_AddStringToObject(j, "system", y->name);
    cJSON_AddStringToObject(j, "gpu", y->gpu->name);
    cJSON_AddBoolToObject(j, "feasible", r->feasible);
    cJSON_AddStringToObject(j, "reason", est_reason_names[r->reason]);
    if (r->reason == EST_INVALID_LAYOUT)
        cJSON_AddStringToObject(j, "rule", space_reject_names[r->reject]);
    cJSON_AddStringToObject(j, "message", r->message);
    cJSON_AddNumberToObject(j, "iteration_time_s", r->iteration_s);
    cJSON_AddNumberToObject(j, "tokens_per_s", r->tokens_per_s);
    cJSON_AddNumberToObject(j, "model_tflops_per_gpu",
                            r->model_flops_per_gpu_s / 1e12);
    cJSON_AddNumberToObject(j, "mfu", r->mfu);
    cJSON_AddStringToObject(j, "mfu_convention", mfu_convention);
    cJSON_AddNumberToObject(j, "kernel_efficiency", est_kernel_eff(c, l));
    emit_json_band(j, &g->band);
    if (a->fed) emit_fed_json(j, a->fed, a->log_path);
    else cJSON_AddNullToObject(j, "measured");
    cJSON_AddNumberToObject(j, "peak_memory_bytes", r->mem.total);
    cJSON_AddNumberToObject(j, "gpu_memory_bytes", y->gpu->mem_bytes);
    cJSON_AddNumberToObject(j, "critical_stage", (double)r->critical_stage);
    cJSON *b = cJSON_AddObjectToObject(j, "breakdown");
    for (int i = 0; i < g->nt; i++) cJSON_AddNumberToObject(b, g->tt[i].name, g->tt[i].v);
    cJSON *mj = cJSON_AddObjectToObject(j, "memory");
    for (int i = 0; i < g->nm; i++) cJSON_AddNumberToObject(mj, g->mt[i].name, g->mt[i].v);
    cJSON_AddNumberToObject(mj, "params_on_rank", r->mem.params);
    cJSON_AddNumberToObject(mj, "stage", (double)r->mem.stage);
    cJSON_AddStringToObject(mj, "peak_phase",
                            r->mem.peak_in_step ? "optimizer_step"
                                               : "backward");
    cJSON_AddNumberToObject(mj, "margin_fraction", est_memory_margin(l));
    cJSON_AddNumberToObject(mj, "margin_bytes",
                            r->mem.total * est_memory_margin(l));
    cJSON_AddNumberToObject(mj, "headroom_bytes",
                            y->gpu->mem_bytes
                                - r->mem.total * (1 + est_memory_margin(l)));
    cJSON_AddStringToObject(mj, "evidence", est_memory_evidence(l));
    if (r->reason != EST_INVALID_LAYOUT)
        print_stages(c, m, l, EMIT_JSON, NULL, mj);
    add_layout_json(j, r, a->want, m);
    cJSON_AddNumberToObject(j, "layouts_tried", (double)a->tried);
    cJSON_AddNumberToObject(j, "layouts_feasible", (double)a->feasible);
    if (a->ops && r->iteration_s > 0) print_ops(c, m, l, EMIT_JSON, NULL, j);
    if (g->tokens > 0) {
        cJSON *t = cJSON_AddObjectToObject(j, "train");
        cJSON_AddNumberToObject(t, "tokens", g->tokens);
        cJSON_AddNumberToObject(t, "time_to_train_s", g->train_s);
        cJSON_AddNumberToObject(t, "gpu_hours", g->gpu_hours);
        cJSON_AddNumberToObject(t, "cost_usd", g->cost);
        cJSON_AddNumberToObject(t, "price_usd_per_gpu_hour",
                                y->price_usd_per_gpu_hour);
    } else {
        cJSON_AddNullToObject(j, "train"); /* no --tokens */
    }
    return j;
}

/* The estimate's heading and its layout, experts and software in words. */
static void text_layout(FILE *f, const emit_estimate *a)
{
    const hw_system *y = a->ctx->sys;
    const space_model *m = a->m;
    const est_result *r = a->r;
    const space_layout *l = &r->layout;
    fprintf(f, "%s on %s: %lld x %s\n", m->name, y->name,
            (long long)r->gpus, y->gpu->name);
    char rcm[200] = "";
    if (l->recompute == SPACE_RECOMPUTE_FULL
        && (l->recompute_layers > 1
            || l->recompute_method == SPACE_RECOMPUTE_BLOCK))
        snprintf(rcm, sizeof rcm, " (%s, %lld layers)",
                 space_recompute_method_names[l->recompute_method],
                 (long long)l->recompute_layers);
    if (l->recompute == SPACE_RECOMPUTE_SELECTIVE) {
        char names[160];
        space_rc_modules_str(space_recompute_modules(l), ", ", names,
                             sizeof names);
        snprintf(rcm, sizeof rcm, " (%s)", names);
    }
    emit_wrapf(f, 2,
            "layout: TP %lld, PP %lld, VPP %lld, CP %lld, DP %lld, "
            "micro-batch %lld (%lld per iteration), global batch %lld, "
            "seq %lld, SP %s, recompute %s%s, ZeRO %d, %s%s%s%s\n",
            (long long)l->tp, (long long)l->pp, (long long)l->vpp,
            (long long)l->cp, (long long)l->dp, (long long)l->mbs,
            (long long)micro_batches(l),
            (long long)l->gbs, (long long)l->seq, l->sp ? "on" : "off",
            space_recompute_names[l->recompute], rcm, (int)l->zero,
            hw_dtype_names[l->dtype], l->dtype == HW_FP8 ? " (" : "",
            l->dtype == HW_FP8 ? space_fp8_recipe_names[l->fp8_recipe]
                               : "",
            l->dtype == HW_FP8
                ? (l->fp8_lib != SPACE_FP8_LIB_TE ? " scaling, torchao)"
                   : l->fp8_act_cache == SPACE_FP8_ACT_DEEPSEEK_V3
                       ? " scaling, Transformer Engine; activations kept "
                         "as DeepSeek-V3's framework keeps them)"
                       : " scaling, Transformer Engine)")
                : "");
    if (m->num_experts > 0 && l->tp > 0 && l->dp > 0) {
        int64_t ep = space_layout_ep(l), etp = space_layout_etp(l);
        char imb[48] = "the estimator's default";
        if (l->moe_imbalance > 0)
            snprintf(imb, sizeof imb, "%g", l->moe_imbalance);
        emit_wrapf(f, 2,
                "experts: %lld of %lld a token; EP %lld, expert TP %lld, "
                "expert DP %lld; %s dispatcher%s%s; busiest expert's "
                "load over the mean %s\n",
                (long long)m->top_k, (long long)m->num_experts,
                (long long)ep, (long long)etp,
                (long long)(l->tp * l->cp * l->dp / (ep * etp)),
                space_moe_dispatcher_name(l),
                l->moe_comm_overlap ? ", overlapped: " : "",
                l->moe_comm_overlap ? space_moe_overlap_name(l) : "", imb);
    }
    emit_wrapf(f, 2,
            "software: %s attention%s, dropout %g/%g (attention/hidden), TP "
            "overlap %s, CP exchange %s, DP overlap %s%s%s%s; gradients "
            "%s%s; allocator %s%s%s%s%s\n",
            space_attn_names[l->flash],
            space_fp8_attention(l)
                ? " in fp8 (cuDNN's fused kernel)" : "",
            m->attn_dropout,
            m->hidden_dropout, space_tp_overlap_names[l->tp_overlap],
            space_cp_comm_names[l->cp_comm],
            l->no_dp_overlap ? "off" : "on",
            l->pp_scatter_gather ? ", PP sends scatter/gather" : "",
            l->pp > 1 && l->vpp > 1
                ? (l->no_pp_overlap ? ", PP sends exposed"
                                    : ", PP sends overlapped")
                : "",
            l->eager ? ", eager PyTorch (no torch.compile)" : "",
            space_grad_bytes(l) >= 4 ? "fp32" : "16-bit",
            l->param_fp32 ? ", fp32 parameters (no master copy)" : "",
            l->alloc_expandable ? "expandable segments"
                                : "without expandable segments",
            l->cuda_graph ? "; CUDA graphs " : "",
            l->cuda_graph ? space_cuda_graph_name(l) : "",
            l->fsdp_double_buffer && l->zero >= SPACE_ZERO_2
                ? "; Megatron-FSDP double buffers" : "",
            l->ce_te ? "; Transformer Engine's fused loss" : "");
    char sv[400];
    if (emit_savers_text(l, sv, sizeof sv)[0])
        emit_wrapf(f, 2, "memory savers: %s", sv);
}

void emit_estimate_text(FILE *f, emit_format fmt, const emit_estimate *a)
{
    const est_ctx *c = a->ctx;
    const hw_system *y = c->sys;
    const space_model *m = a->m;
    const est_result *r = a->r;
    const space_layout *l = &r->layout;
    figures fg, *g = &fg;
    figures_of(a, g);
    text_layout(f, a);
    const hw_gpu *src = y->gpu->models_like ? y->gpu->models_like : y->gpu;
    /* whose factor: this GPU's, or (none fitted on it) the GPU hwdb
     * resolved, named where it is not the one the samples came from */
    const hw_gpu *fac = y->gpu->kernel_eff_factor > 0 ? NULL
                                                       : y->gpu->kernel_eff_from;
    char whose[HW_NAME_MAX + 64] = "this GPU's factor";
    if (fac)
        snprintf(whose, sizeof whose, "%s's factor (%s)", fac->name,
                 fac == src ? "with its fits" : "the nearest generation with one");
    int own = src != y->gpu && y->gpu->n_measured > 0;
    emit_wrapf(f, 2,
            "operator times: fitted to %s's samples where it has them%s%s%s, "
            "roofline elsewhere%s%s%s; over an in-training kernel "
            "efficiency of %.3g (stack %s x %s, fitted "
            "to published runs: "
            "bench/results/kernel_efficiency.md)\n",
            src->name, own ? " (" : "", own ? y->gpu->name : "",
            own ? "'s own for the operators it has samples of)" : "",
            src != y->gpu ? " (applied to " : "",
            src != y->gpu ? y->gpu->name : "",
            src != y->gpu ? "'s peaks and bandwidth)" : "",
            est_kernel_eff(c, l), space_stack_names[space_layout_stack(l)],
            whose);
    char chosen[256] = "";
    int unset[N_CHOSEN];
    chosen_unset(a->want, unset);
    for (int i = 0; i < N_CHOSEN; i++)
        if (unset[i]) {
            size_t n = strlen(chosen);
            snprintf(chosen + n, sizeof chosen - n, "%s%s",
                     n ? ", " : "", chosen_names[i].label);
        }
    if (chosen[0])
        emit_wrapf(f, 2, "chosen (fastest feasible of %lld layouts tried, %lld "
                   "feasible): %s\n",
                (long long)a->tried, (long long)a->feasible, chosen);
    if (!r->feasible)
        emit_wrapf(f, 2, "NOT FEASIBLE (%s%s%s): %s",
                est_reason_names[r->reason],
                r->reason == EST_INVALID_LAYOUT ? ", " : "",
                r->reason == EST_INVALID_LAYOUT ? space_reject_names[r->reject]
                                               : "",
                r->message);
    if (r->iteration_s > 0) {
        char tps[64];
        emit_fmt_si(tps, sizeof tps, r->tokens_per_s, "tokens/s");
        fprintf(f,
                "\niteration %.4f s   %s   %.1f model TFLOP/s per GPU   "
                "MFU %.1f %%\n",
                r->iteration_s, tps, r->model_flops_per_gpu_s / 1e12,
                100 * r->mfu);
        char bt[600];
        emit_band_text(&g->band, bt, sizeof bt);
        for (char *ln = bt, *nl; ln && *ln; ln = nl ? nl + 1 : NULL) {
            nl = strchr(ln, '\n');
            if (nl) *nl = '\0';
            emit_wrapf(f, 2, "%s", ln);
        }
        fputc('\n', f);
        print_terms(f, fmt, "time", "seconds", "share", g->tt, g->nt,
                    r->iteration_s);
    }
    fputc('\n', f);
    print_terms(f, fmt, "memory (busiest GPU)", "bytes", "GiB", g->mt,
                g->nm, 0);
    fprintf(f, "(pipeline stage %lld, peak in the %s; %s has %.2f GiB)\n",
            (long long)r->mem.stage,
            r->mem.peak_in_step ? "optimizer step" : "backward",
            y->gpu->name, y->gpu->mem_bytes / 1073741824.0);
    double mg = est_memory_margin(l);
    emit_wrapf(f, 2, "with the margin, +%.1f %%: %.2f GiB, %.2f GiB left. %s",
            100 * mg, r->mem.total * (1 + mg) / 1073741824.0,
            (y->gpu->mem_bytes - r->mem.total * (1 + mg)) / 1073741824.0,
            est_memory_evidence(l));
    if (r->layout.pp > 1 && r->reason != EST_INVALID_LAYOUT) {
        fprintf(f, "\nmemory per pipeline stage:\n");
        print_stages(c, m, l, fmt, f, NULL);
    }
    if (g->tokens > 0 && r->feasible)
        fprintf(f,
                "\n%.3g tokens: %.2f days, %.0f GPU-hours, $%.0f at "
                "$%.3f per GPU-hour\n",
                g->tokens, g->train_s / 86400, g->gpu_hours, g->cost,
                y->price_usd_per_gpu_hour);
    if (a->fed) emit_fed_print(f, a->fed, a->log_path, &g->band);
    fputc('\n', f);
    emit_wrapf(f, 2, "MFU: %s.", mfu_convention);
    if (a->ops && r->iteration_s > 0) print_ops(c, m, l, fmt, f, NULL);
}
