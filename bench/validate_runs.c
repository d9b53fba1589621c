/*
 * validate_runs.c - the estimator against measured training runs.
 *
 * Reads bench/data/validation_runs.json (the shared published runs,
 * normalized by bench/data/make_validation_runs.py), estimates every run
 * that is not skipped, with the layout fields the source leaves out
 * searched as `trainplan estimate` searches them (fastest feasible), and
 * prints per run the published figure beside ours, in the source's own
 * unit and FLOP convention (TFLOP/s per GPU from the source's FLOPs per
 * iteration over our time; tokens/s per GPU; seconds per iteration), then
 * per source the mean absolute percentage error, the worst run and what
 * was skipped and why.
 *
 * usage: validate_runs [--runs FILE] [--source ID] [--csv] [--kernel-eff X]
 * The estimator knows none of these runs; one constant per GPU family,
 * the in-training kernel efficiency, is fitted to them as a whole
 * (bench/fit_kernel_eff.py), and --kernel-eff 1 shows the figures
 * without it.
 */
#include "search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TRAINPLAN_SOURCE_DIR
#define TRAINPLAN_SOURCE_DIR "."
#endif

#define MAX_SRC 16
#define MAX_OPEN 32

typedef struct src_stat {
    char id[64];
    int n, skipped, failed, infeasible;
    double sum_ape, worst_ape;
    char worst_id[96];
    char why[512];
} src_stat;

typedef struct opened {
    const hw_system *sys;
    est_models *ops;
    est_comm *comm;
} opened;

static opened cache[MAX_OPEN];
static int n_cache;

static const opened *open_system(const hw_system *y, tp_err *e)
{
    for (int i = 0; i < n_cache; i++)
        if (cache[i].sys == y) return &cache[i];
    if (n_cache == MAX_OPEN) return NULL;
    opened *o = &cache[n_cache];
    o->sys = y;
    /* Models are per GPU: reuse another system's of the same GPU. */
    for (int i = 0; i < n_cache; i++)
        if (cache[i].sys->gpu == y->gpu) o->ops = cache[i].ops;
    if (!o->ops) o->ops = est_models_open(y->gpu, 0, e);
    if (!o->ops) return NULL;
    o->comm = est_comm_open(y, e);
    if (!o->comm) return NULL;
    n_cache++;
    return o;
}

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* An integer layout field, or SEARCH_UNSET for null or absent. */
static int64_t field_i(const cJSON *l, const char *k)
{
    const cJSON *v = get(l, k);
    return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : SEARCH_UNSET;
}

static src_stat *stat_of(src_stat *s, int *n, const char *id)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(s[i].id, id) == 0) return &s[i];
    if (*n == MAX_SRC) return &s[MAX_SRC - 1];
    src_stat *x = &s[(*n)++];
    memset(x, 0, sizeof *x);
    snprintf(x->id, sizeof x->id, "%s", id);
    return x;
}

static void add_why(src_stat *s, const char *what)
{
    size_t n = strlen(s->why);
    if (strstr(s->why, what)) return;
    snprintf(s->why + n, sizeof s->why - n, "%s%s", n ? "; " : "", what);
}

int main(int argc, char **argv)
{
    const char *path = TRAINPLAN_SOURCE_DIR "/bench/data/validation_runs.json";
    const char *only = NULL;
    int csv = 0;
    double keff = 0; /* 0: the estimator's own EST_KERNEL_EFF */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) path = argv[++i];
        else if (strcmp(argv[i], "--source") == 0 && i + 1 < argc) only = argv[++i];
        else if (strcmp(argv[i], "--csv") == 0) csv = 1;
        else if (strcmp(argv[i], "--kernel-eff") == 0 && i + 1 < argc
                 && (keff = atof(argv[++i])) > 0 && keff <= 1)
            ;
        else {
            fprintf(stderr, "usage: validate_runs [--runs FILE] [--source ID] "
                            "[--csv] [--kernel-eff X (0 < X <= 1)]\n");
            return 64;
        }
    }
    tp_err e = {0};
    cJSON *root;
    if (tp_json_load(path, &root, &e)) {
        fprintf(stderr, "validate_runs: %s\n", e.msg);
        return e.status;
    }
    hw_db *db = hw_db_open(NULL, 0, &e);
    if (!db) {
        fprintf(stderr, "validate_runs: %s\n", e.msg);
        return e.status;
    }
    src_stat st[MAX_SRC];
    int nst = 0;
    const cJSON *runs = get(root, "runs"), *run;
    if (csv)
        printf("id,source,unit,published,predicted,ape_pct,iteration_s,tp,pp,"
               "vpp,cp,dp,mbs,sp,recompute,zero,fwd_s,bwd_s,recompute_s,tp_s,"
               "cp_s,p2p_s,bubble_s,dp_s,optimizer_s,mem_gib,gpu,gpu_family\n");
    else
        printf("%-34s %-16s %10s %10s %7s  %s\n", "run", "unit", "published",
               "ours", "err %", "layout used (searched fields marked *)");
    cJSON_ArrayForEach(run, runs) {
        const char *id = get(run, "id")->valuestring;
        const char *src = get(run, "source_id")->valuestring;
        if (only && strcmp(only, src) != 0) continue;
        src_stat *s = stat_of(st, &nst, src);
        const cJSON *skip = get(run, "skip");
        if (cJSON_IsString(skip)) {
            s->skipped++;
            add_why(s, skip->valuestring);
            continue;
        }
        space_model m;
        const cJSON *mj = get(run, "model");
        int rc = cJSON_IsString(mj)
                     ? space_model_resolve(mj->valuestring, &m, &e)
                     : space_model_from_hf_json(mj, path, id, &m, &e);
        /* The dropout the run's software applied (validation_runs.json
         * says where each source's comes from). */
        const cJSON *dj = get(run, "dropout");
        if (!rc && cJSON_IsObject(dj)) {
            m.attn_dropout = get(dj, "attention")->valuedouble;
            m.hidden_dropout = get(dj, "hidden")->valuedouble;
        }
        const hw_system *y = rc ? NULL : hw_find_system(db, get(run, "system")->valuestring, &e);
        const opened *op = y ? open_system(y, &e) : NULL;
        if (!op) {
            s->failed++;
            fprintf(stderr, "%s: %s\n", id, e.msg);
            continue;
        }
        const cJSON *l = get(run, "layout"), *t = get(run, "target");
        space_layout w;
        memset(&w, 0, sizeof w);
        w.tp = field_i(l, "tp");
        w.pp = field_i(l, "pp");
        w.cp = field_i(l, "cp");
        w.dp = field_i(l, "dp");
        w.vpp = field_i(l, "vpp");
        w.mbs = field_i(l, "micro_batch_size");
        w.gbs = field_i(l, "global_batch_size");
        w.seq = field_i(l, "seq_length");
        const cJSON *sp = get(l, "sequence_parallel");
        w.sp = cJSON_IsBool(sp) ? cJSON_IsTrue(sp) : SEARCH_UNSET;
        const cJSON *rcj = get(l, "recompute");
        w.recompute = (space_recompute)SEARCH_UNSET;
        for (int k = 0; cJSON_IsString(rcj) && k < SPACE_RECOMPUTE_COUNT; k++)
            if (strcmp(rcj->valuestring, space_recompute_names[k]) == 0)
                w.recompute = (space_recompute)k;
        const cJSON *rv = get(l, "recompute_variant");
        if (cJSON_IsString(rv) && strcmp(rv->valuestring, "torchtitan-op-sac") == 0)
            w.recompute = SPACE_RECOMPUTE_SELECTIVE_OP;
        w.zero = (space_zero)field_i(l, "zero_stage");
        const cJSON *pr = get(l, "precision");
        int dt = cJSON_IsString(pr) ? hw_dtype_parse(pr->valuestring) : -1;
        w.dtype = dt == HW_FP8 || dt == HW_FP16 ? dt : HW_BF16;
        /* What the source's software did, not a fit: the defaults of its
         * framework (space_framework_software: Megatron-LM 2021 for
         * Narayanan et al. and BigScience's Megatron-DeepSpeed of 2021-22,
         * torchtitan, Megatron-Core else), then what the run lists. */
        const cJSON *feat = get(l, "features"), *fe;
        int has_flash = 0, has_overlap = 0, tp_all = 0, async_tp = 0;
        int compiled = 0;
        cJSON_ArrayForEach(fe, feat) {
            if (!cJSON_IsString(fe)) continue;
            has_flash |= strcmp(fe->valuestring, "flash-attention") == 0;
            has_overlap |= strcmp(fe->valuestring, "overlap-grad-reduce") == 0;
            tp_all |= strcmp(fe->valuestring, "tp-comm-overlap") == 0;
            async_tp |= strcmp(fe->valuestring, "async-tp") == 0;
            compiled |= strcmp(fe->valuestring, "torch.compile") == 0;
            w.fp8_params |= strcmp(fe->valuestring, "fp8-param-gather") == 0;
        }
        int titan = strcmp(src, "torchtitan_benchmarks") == 0;
        int old_megatron = strcmp(src, "narayanan2021_sc21") == 0
                           || strncmp(src, "bigscience_", 11) == 0;
        space_framework_software(titan          ? SPACE_FW_TORCHTITAN
                                 : old_megatron ? SPACE_FW_MEGATRON_2021
                                                : SPACE_FW_MEGATRON_CORE,
                                 &w);
        /* llm-foundry's attention is the one its run lists (flash,
         * triton or PyTorch's). */
        if (strcmp(src, "llm_foundry_mpt_benchmarks") == 0) w.flash = has_flash;
        /* TP: --tp-comm-overlap or AsyncTP where the run lists them. The
         * 2021 default (no TP overlap) is assumed from Megatron-LM's
         * history; BigScience also ran with CUDA_LAUNCH_BLOCKING=1, which
         * serialises every kernel (tr11-176B-ml.slurm and
         * chronicles-prequel.md, bigscience-workshop/bigscience). */
        if (tp_all) w.tp_overlap = SPACE_TP_OVERLAP_ALL;
        if (titan && async_tp) w.tp_overlap = SPACE_TP_OVERLAP_ASYNC;
        /* torchtitan without torch.compile runs its Llama's norms, SwiGLU
         * and RoPE op by op. */
        w.eager = titan && !compiled;
        /* Gradient reduction overlapped where listed, and in FSDP. */
        const cJSON *shj = get(l, "sharding");
        int fsdp = cJSON_IsString(shj) && strncmp(shj->valuestring, "fsdp", 4) == 0;
        w.no_dp_overlap = !(has_overlap || fsdp);
        /* Megatron-LM with fp16 accumulates and all-reduces gradients in
         * fp16 unless --accumulate-allreduce-grads-in-fp32 (opt-in; only
         * bf16 forces it: megatron/arguments.py, 2021 to today). */
        if (strcmp(src, "narayanan2021_sc21") == 0 && w.dtype == HW_FP16)
            w.grad_bytes = 2;
        /* DeepSpeed's fp16 ZeRO keeps 16-bit gradients (its bf16
         * optimizer, BLOOM's, accumulates them in fp32 like Megatron-LM),
         * and its ZeRO-3 gathers module by module up to
         * stage3_max_live_parameters, 1e9 by default
         * (deepspeed/runtime/zero/config.py). */
        if (cJSON_IsString(shj)) {
            if (strcmp(shj->valuestring, "deepspeed-zero1") == 0
                || strcmp(shj->valuestring, "deepspeed-zero3") == 0)
                w.grad_bytes = 2;
            if (strcmp(shj->valuestring, "deepspeed-zero3") == 0)
                w.zero3_live = 1e9;
        }
        /* The fp8 recipe the run names (torchtitan's tensorwise or
         * rowwise, Transformer Engine's delayed, ...). */
        const cJSON *fr = get(l, "fp8_recipe");
        for (int k = 0; cJSON_IsString(fr) && k < SPACE_FP8_RECIPE_COUNT; k++)
            if (strcmp(fr->valuestring, space_fp8_recipe_names[k]) == 0)
                w.fp8_recipe = k;
        const cJSON *ps = get(l, "pipeline_schedule");
        if (w.vpp == SEARCH_UNSET && cJSON_IsString(ps)
            && strcmp(ps->valuestring, "interleaved-1f1b") != 0)
            w.vpp = 1;
        int64_t gpus = field_i(run, "gpus");
        est_ctx c = {y, y->gpu, op->ops, op->comm, 1, keff, NULL};
        est_result r;
        search_complete(&c, &m, &w, gpus, &r, NULL, NULL);
        const char *kind = get(t, "kind")->valuestring;
        double pub = get(t, "value")->valuedouble, ours = NAN;
        if (r.iteration_s > 0) {
            if (strcmp(kind, "tflops_per_gpu") == 0)
                ours = get(t, "flops_per_iteration")->valuedouble
                       / (r.iteration_s * (double)gpus) / 1e12;
            else if (strcmp(kind, "tokens_per_s_per_gpu") == 0)
                ours = (double)w.gbs * (double)w.seq
                       / (r.iteration_s * (double)gpus);
            else if (strcmp(kind, "iteration_time_s") == 0)
                ours = r.iteration_s;
        }
        if (!isfinite(ours)) {
            s->failed++;
            add_why(s, "not estimated");
            fprintf(stderr, "%s: %s %s\n", id, est_reason_names[r.reason], r.message);
            continue;
        }
        if (!r.feasible) {
            s->infeasible++;
            fprintf(stderr, "%s: estimate says infeasible (%s): %s\n", id,
                    est_reason_names[r.reason], r.message);
        }
        double ape = 100 * fabs(ours - pub) / pub;
        s->n++;
        s->sum_ape += ape;
        if (ape > s->worst_ape) {
            s->worst_ape = ape;
            snprintf(s->worst_id, sizeof s->worst_id, "%s", id);
        }
        const space_layout *u = &r.layout;
        if (csv) {
            const est_breakdown *b = &r.time;
            printf("%s,%s,%s,%g,%.6g,%.2f,%.6g,%lld,%lld,%lld,%lld,%lld,%lld,%d,%s,%d,"
                   "%.5g,%.5g,%.5g,%.5g,%.5g,%.5g,%.5g,%.5g,%.5g,%.2f,%s,%s\n",
                   id, src, kind, pub, ours, ape, r.iteration_s,
                   (long long)u->tp, (long long)u->pp, (long long)u->vpp,
                   (long long)u->cp, (long long)u->dp, (long long)u->mbs, u->sp,
                   space_recompute_names[u->recompute], (int)u->zero, b->fwd_s,
                   b->bwd_s, b->recompute_s, b->tp_s, b->cp_s, b->pp_p2p_s,
                   b->bubble_s, b->dp_s, b->optimizer_s,
                   r.mem.total / 1073741824.0, y->gpu->name,
                   /* the GPU whose samples (and kernel efficiency) it uses */
                   y->gpu->models_like ? y->gpu->models_like->name
                                       : y->gpu->name);
        } else {
            printf("%-34s %-16s %10.4g %10.4g %7.1f  tp%lld%s pp%lld vpp%lld%s cp%lld "
                   "dp%lld mbs%lld%s %s%s z%d%s%s\n",
                   id, kind, pub, ours, ape, (long long)u->tp,
                   w.tp == SEARCH_UNSET ? "*" : "", (long long)u->pp,
                   (long long)u->vpp, w.vpp == SEARCH_UNSET ? "*" : "",
                   (long long)u->cp, (long long)u->dp, (long long)u->mbs,
                   w.mbs == SEARCH_UNSET ? "*" : "",
                   space_recompute_names[u->recompute],
                   (int)w.recompute == SEARCH_UNSET ? "*" : "", (int)u->zero,
                   (int)w.zero == SEARCH_UNSET ? "*" : "",
                   r.feasible ? "" : " (estimate: does not fit)");
        }
    }
    if (!csv) {
        printf("\n%-30s %5s %8s %8s  %-34s %s\n", "source", "runs", "MAPE %",
               "worst %", "worst run", "skipped");
        for (int i = 0; i < nst; i++) {
            src_stat *s = &st[i];
            printf("%-30s %5d %8.1f %8.1f  %-34s %d%s%s%s\n", s->id, s->n,
                   s->n ? s->sum_ape / s->n : NAN, s->worst_ape, s->worst_id,
                   s->skipped + s->failed, s->why[0] ? " (" : "", s->why,
                   s->why[0] ? ")" : "");
            if (s->infeasible)
                printf("%-30s       %d run(s) the estimate says do not fit\n",
                       "", s->infeasible);
        }
        /* Issue 5 scores BigScience's two sources as one. */
        int n = 0;
        double sum = 0;
        for (int i = 0; i < nst; i++)
            if (strncmp(st[i].id, "bigscience_", 11) == 0)
                n += st[i].n, sum += st[i].sum_ape;
        if (n)
            printf("%-30s %5d %8.1f  (bigscience_bloom_tr11 + "
                   "bigscience_tr11_prequel together)\n", "bigscience (both)", n,
                   sum / n);
    }
    for (int i = 0; i < n_cache; i++) {
        est_comm_free(cache[i].comm);
        int shared = 0;
        for (int j = 0; j < i; j++) shared |= cache[j].ops == cache[i].ops;
        if (!shared) est_models_free(cache[i].ops);
    }
    hw_db_free(db);
    cJSON_Delete(root);
    return 0;
}
