/*
 * validate_runs.c - the estimator against measured training runs, and the
 * fit of its one end-to-end constant, the in-training kernel efficiency
 * (estimator/kernel_eff.c: a constant per software stack times a factor
 * per GPU family), scored with each source left out.
 *
 * Reads bench/data/validation_runs.json (the shared published runs,
 * normalized by bench/data/make_validation_runs.py). Each run's layout
 * fields the source leaves out are searched as `trainplan estimate`
 * searches them (fastest feasible). Prints per run the published figure
 * beside ours, in the source's own unit and FLOP convention (TFLOP/s per
 * GPU from the source's FLOPs per iteration over our time; tokens/s per
 * GPU; seconds per iteration), in sample and left-one-source-out (LOSO);
 * then per source the mean absolute percentage error (MAPE) both ways,
 * the worst run and what was skipped or waived; then the fitted
 * constants, each source's left-out fit, and the models of the constant
 * (`models` below: which stacks share one, with or without the GPU
 * factor) compared in sample and by LOSO.
 *
 * The fit, exact on a grid of 0.005: each run's unset fields are searched
 * once, then the run is estimated with that layout at every grid value
 * (est_estimate, microseconds each; products with a GPU factor between
 * grid values interpolated in 1/eta), and the constants minimise the mean
 * over sources of each source's MAPE (no source weighs by its number of
 * runs). The layouts are searched again at the fitted constants and the
 * fit repeated until the two agree, so the in-sample figures are what the
 * estimator gives with these constants in it. LOSO, for source S: every
 * constant refitted without S's runs, S's runs' unset fields searched
 * again under those constants, and S scored. A stack left without runs
 * takes one constant fitted over every remaining run; a GPU family that
 * shares no stack with another takes the factor of one constant for every
 * stack; the output marks both. The other runs keep the layouts searched
 * at the in-sample constants: S reaches its fold only through their
 * layout choice.
 *
 * Waived runs (issue 15; `waived` below) are printed and scored but left
 * out of every fit and of the per-source figures, which are also shown
 * with them.
 *
 * The MoE runs (bench/data/moe_validation_runs.json, written by
 * make_moe_runs.py) are read apart: held out of every fit, each estimated
 * at the estimator's own constants (or --kernel-eff's), their unset
 * fields searched, and printed after the dense runs' figures per run and
 * per source (MAPE, the worst run, every run not scored under its reason:
 * the source's skip reason, or the estimator's, e.g. moe_not_modelled).
 * The dense runs' output does not change with them.
 *
 * usage: validate_runs [--runs FILE] [--moe-runs FILE|none] [--source ID]
 *                      [--csv] [--no-loso] [--model NAME] [--kernel-eff X]
 * --moe-runs: the MoE runs (default the repository's; none with --runs
 * unless given); --source prints one source (the fit still uses all);
 * --model fits and shows another model than the estimator's (by its
 * name); --kernel-eff X
 * estimates every run at X (1: without the correction), no fit. Runs in
 * parallel over runs, the same bytes at any thread count. Exit status 0,
 * 64 on bad usage, 65/66 on bad or missing input.
 */
#include "runs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TRAINPLAN_SOURCE_DIR
#define TRAINPLAN_SOURCE_DIR "."
#endif

#define MAX_SRC 16
#define MAX_FAM 8
#define MAX_OPEN 32
#define N_STACK SPACE_STACK_COUNT

/* The grid of kernel efficiencies: 0.200 to 1.000 by 0.005, and of the
 * GPU-family factors: 0.700 to 1.300 by 0.005. */
#define ETA_MIN 0.2
#define ETA_STEP 0.005
#define ETA_N 161
#define FAC_MIN 0.7
#define FAC_N 121
#define ETA_AT(i) (ETA_MIN + ETA_STEP * (double)(i))
#define FAC_AT(i) (FAC_MIN + ETA_STEP * (double)(i))

/* Searches remembered per run (eta -> result). */
#define MEMO 24

/* ---- what each source ran --------------------------------------------- */

/* Runs left out of the fits and the per-source figures (issue 15), by a
 * part of their id. */
static const struct {
    const char *id_part, *why;
} waived[] = {
    {"zero3", "DeepSpeed ZeRO-3 of early 2021 (Narayanan et al. Table 2): "
              "its parameter gathering as it ran then is not modelled"},
    {"fp8rw", "torchao's fp8 rowwise recipe: not modelled"},
    {"crusoe-torchtitan",
     "torchtitan v0.2.2 run eagerly on a PyTorch nightly of 2026 (Crusoe): "
     "with PyTorch's fused RMSNorm still 10 % slower in the estimate, on "
     "every GPU family (H100 +0-5 % but the driver-580 row +18 %, H200 "
     "+15 %, B200 +12 %, GB200 +3-7 %), a mechanism of that software not "
     "found; fitted (measured at the fit of 2026-11-29 morning), it moved "
     "the Blackwell factor to 0.925 from MLPerf's 0.875 and the mean over "
     "sources LOSO from 7.73 to 7.91 %"},
};
#define N_WAIVED ((int)(sizeof waived / sizeof waived[0]))

/* ---- models of the constant -------------------------------------------- */

/* One way to share the constant among runs: the constant each stack takes
 * (runs of stacks with the same index share one), and whether a factor per
 * GPU family (the GPU whose operator samples a run uses) multiplies it,
 * 1 for REF_FAMILY. The estimator computes eta_stack x factor_gpu
 * (estimator/kernel_eff.c, hwdb kernel_efficiency_factor), so every model
 * here is one set of values of it; `chosen` marks the one it holds: the
 * lowest LOSO figure (bench/results/kernel_efficiency.md; the output says
 * when another model's is lower). */
typedef struct fit_model {
    const char *name;
    int group[N_STACK];
    int per_family;
    int chosen;
} fit_model;

/* Stack order: megatron-lm-2021, megatron-core, pytorch-eager,
 * pytorch-compiled, deepspeed-2021 (space_stack). */
static const fit_model models[] = {
    {"one constant", {0, 0, 0, 0, 0}, 0, 0},
    {"per GPU family", {0, 0, 0, 0, 0}, 1, 0},
    {"Megatron / PyTorch", {0, 0, 1, 1, 2}, 0, 0},
    {"Megatron / PyTorch, x GPU", {0, 0, 1, 1, 2}, 1, 1},
    {"per stack, PyTorch as one", {0, 1, 2, 2, 3}, 0, 0},
    {"per stack", {0, 1, 2, 3, 4}, 0, 0},
    {"per stack, PyTorch as one, x GPU", {0, 1, 2, 2, 3}, 1, 0},
    {"per stack, x GPU", {0, 1, 2, 3, 4}, 1, 0},
};
#define N_MODELS ((int)(sizeof models / sizeof models[0]))
_Static_assert(N_STACK == 5, "models[] give a group to every space_stack");

/* models[GPU_ONLY]: one constant x the GPU family's factor */
#define GPU_ONLY 1

/* The model the estimator holds, and the one fitted and shown (--model;
 * the estimator's by default). */
static int estimator_model(void)
{
    for (int k = 0; k < N_MODELS; k++)
        if (models[k].chosen) return k;
    return 0;
}

static int shown = -1;

/* The GPU family whose factor is 1 by definition: the A100, which every
 * 2021-22 run used, so that the stacks' constants read as A100 values. */
#define REF_FAMILY "a100-80gb"

typedef struct consts {
    double eta[N_STACK];   /* per group */
    double fac[MAX_FAM];   /* per family; 1 without */
    int fallback[N_STACK]; /* group without runs: fitted over all */
    int fam_fallback[MAX_FAM];
} consts;

/* ---- runs --------------------------------------------------------------- */

typedef struct memo_entry {
    double eta;
    est_result r;
} memo_entry;

typedef struct vrun {
    const char *id, *kind; /* into the cJSON tree */
    int src, fam, waived, ok;
    space_stack stack;
    space_model m;
    space_layout want;
    int64_t gpus;
    est_ctx c;
    double pub, flops;
    int is_time;  /* the unit is the iteration time */
    double per_s; /* else the figure is per_s / iteration time */
    double peak_tflops; /* the peak an MFU target divides by */
    int moe;            /* of the MoE runs file: held out of every fit */
    const hw_system *sys;
    double fixed_eta;   /* the eta its fixed layout was searched at */
    space_layout fixed; /* the fit's layout */
    double t[ETA_N];    /* iteration time at each grid eta, layout fixed */
    int n_memo, next_memo;
    memo_entry memo[MEMO];
    /* results */
    double eta_in, eta_loso, ours_in, ours_loso, ours_est;
    est_result r_in;
    space_pp_layout *pp_store; /* its layout string's (bench_split_read) */
} vrun;

#define MAX_WHY 12

typedef struct source {
    char id[64];
    int n_fit; /* runs in the fits: ok and not waived */
    int skipped, failed;
    char why[1024];
    /* MoE sources: runs not scored, counted per reason (the text before
     * its first ':') */
    int n_why;
    char why_of[MAX_WHY][120];
    int why_n[MAX_WHY];
} source;

static bench_opened cache[MAX_OPEN];
static int n_cache;

static source src_tab[MAX_SRC];
static int n_src;
/* The MoE runs' sources (--moe-runs): scored, never fitted. */
static source moe_tab[MAX_SRC];
static int n_moe_src;
static const hw_gpu *fam_tab[MAX_FAM];
static int n_fam, ref_fam;

static const bench_opened *open_system(const hw_system *y, tp_err *e)
{
    return bench_open_system(cache, &n_cache, MAX_OPEN, y, e);
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

static int source_of(source *tab, int *n, const char *id)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(tab[i].id, id) == 0) return i;
    if (*n == MAX_SRC) return MAX_SRC - 1;
    source *x = &tab[*n];
    memset(x, 0, sizeof *x);
    snprintf(x->id, sizeof x->id, "%s", id);
    return (*n)++;
}

/* The source table of r (the dense runs' or the MoE runs'). */
static const source *src_of(const vrun *r)
{
    return r->moe ? &moe_tab[r->src] : &src_tab[r->src];
}

static int family_of(const hw_gpu *g)
{
    const hw_gpu *f = g->models_like ? g->models_like : g;
    for (int i = 0; i < n_fam; i++)
        if (fam_tab[i] == f) return i;
    if (n_fam == MAX_FAM) return MAX_FAM - 1;
    fam_tab[n_fam] = f;
    return n_fam++;
}

static void add_why(source *s, const char *what)
{
    size_t n = strlen(s->why);
    if (strstr(s->why, what)) return;
    snprintf(s->why + n, sizeof s->why - n, "%s%s", n ? "; " : "", what);
}

/* Counts one unscored run of s under its reason's head (what before the
 * first ':'); reasons past MAX_WHY count under the last. */
static void count_why(source *s, const char *what)
{
    char key[120];
    size_t k = strcspn(what, ":");
    if (k >= sizeof key) k = sizeof key - 1;
    snprintf(key, sizeof key, "%.*s", (int)k, what);
    for (int i = 0; i < s->n_why; i++)
        if (strcmp(s->why_of[i], key) == 0) {
            s->why_n[i]++;
            return;
        }
    if (s->n_why == MAX_WHY) {
        s->why_n[MAX_WHY - 1]++;
        return;
    }
    snprintf(s->why_of[s->n_why], sizeof s->why_of[0], "%s", key);
    s->why_n[s->n_why++] = 1;
}

/* o's string k, or NULL with e naming $.runs[i].{in}k. */
static const char *need_str(const cJSON *o, const char *in, const char *k,
                            const char *path, int i, tp_err *e)
{
    const cJSON *v = get(o, k);
    if (cJSON_IsString(v)) return v->valuestring;
    tp_errf(e, TP_EDATA, "%s: $.runs[%d].%s%s: expected a string, found %s",
            path, i, in, k, v ? "another type" : "nothing");
    return NULL;
}

/* The run's unit: a throughput (per_s over the iteration time) or the
 * iteration time; per_s NAN for a unit we do not know. */
static void set_unit(vrun *r)
{
    r->per_s = NAN;
    r->is_time = strcmp(r->kind, "iteration_time_s") == 0;
    if (r->is_time) r->per_s = 0;
    if (strcmp(r->kind, "tflops_per_gpu") == 0)
        r->per_s = r->flops / (double)r->gpus / 1e12;
    if (strcmp(r->kind, "tokens_per_s_per_gpu") == 0)
        r->per_s = (double)r->want.gbs * (double)r->want.seq / (double)r->gpus;
    /* MFU: the source's FLOPs per iteration over the peak it names */
    if (strcmp(r->kind, "mfu") == 0 && r->peak_tflops > 0)
        r->per_s = r->flops / (double)r->gpus / (r->peak_tflops * 1e12);
}

/* Our figure in the run's unit from an iteration time; NAN when none. */
static double ours_of(const vrun *r, double it)
{
    if (!(it > 0)) return NAN;
    return r->is_time ? it : r->per_s / it;
}

/* The run's layout and software as the source describes them
 * (bench/runs.c); 0, or an error status with e set. */
static int read_layout(const cJSON *run, const char *path, int i, vrun *r,
                       tp_err *e)
{
    int rc = bench_layout_read(get(run, "layout"), src_of(r)->id, path, i,
                               &r->want, e);
    if (!rc)
        rc = bench_split_read(get(run, "layout"), &r->m, path, i, &r->want,
                              &r->pp_store, e);
    if (!rc) r->stack = space_layout_stack(&r->want);
    return rc;
}

/* Reads every run into *out (calloc'd; *n counts them), their sources
 * into tab[*ntab]. moe: the MoE runs file, whose runs are held out of the
 * fits and take no part in the GPU families. */
static int read_runs(const cJSON *root, const char *path, hw_db *db, vrun **out,
                     int *n, source *tab, int *ntab, int moe, tp_err *e)
{
    const cJSON *runs = get(root, "runs"), *run;
    if (!cJSON_IsArray(runs))
        return tp_errf(e, TP_EDATA, "%s: $.runs: expected an array", path);
    int cap = cJSON_GetArraySize(runs), i = -1;
    vrun *v = calloc(cap > 0 ? (size_t)cap : 1, sizeof *v);
    if (!v) abort();
    *out = v;
    *n = 0;
    cJSON_ArrayForEach(run, runs) {
        i++;
        vrun *r = &v[(*n)++];
        r->id = need_str(run, "", "id", path, i, e);
        const char *src =
            r->id ? need_str(run, "", "source_id", path, i, e) : NULL;
        if (!src) return e->status;
        r->moe = moe;
        r->src = source_of(tab, ntab, src);
        source *s = &tab[r->src];
        r->waived = -1;
        for (int k = 0; k < N_WAIVED; k++)
            if (strstr(r->id, waived[k].id_part)) r->waived = k;
        r->waived++; /* 0: not waived, else 1 + its row */
        const cJSON *skip = get(run, "skip");
        if (cJSON_IsString(skip)) {
            s->skipped++;
            add_why(s, skip->valuestring);
            count_why(s, skip->valuestring);
            continue;
        }
        const cJSON *mj = get(run, "model");
        int rc = cJSON_IsString(mj)
                     ? space_model_resolve(mj->valuestring, &r->m, e)
                     : space_model_from_hf_json(mj, path, r->id, &r->m, e);
        /* The dropout the run's software applied (validation_runs.json
         * says where each source's comes from), the capacity factor. */
        if (!rc && (rc = bench_model_extras(run, path, i, &r->m, e)))
            return rc;
        const char *sys = rc ? NULL : need_str(run, "", "system", path, i, e);
        const hw_system *y = sys ? hw_find_system(db, sys, e) : NULL;
        const bench_opened *op = y ? open_system(y, e) : NULL;
        if (!op) {
            s->failed++;
            count_why(s, "not read (model, system or GPU)");
            fprintf(stderr, "%s: %s\n", r->id, e->msg);
            memset(e, 0, sizeof *e);
            continue;
        }
        if ((rc = read_layout(run, path, i, r, e))) return rc;
        const cJSON *t = get(run, "target");
        r->kind = need_str(t, "target.", "kind", path, i, e);
        if (!r->kind) return e->status;
        r->pub = cJSON_GetNumberValue(get(t, "value"));
        r->flops = cJSON_GetNumberValue(get(t, "flops_per_iteration"));
        const cJSON *pk = get(t, "peak_tflops_for_mfu");
        r->peak_tflops = cJSON_IsNumber(pk) ? pk->valuedouble : 0;
        r->gpus = field_i(run, "gpus");
        r->sys = y;
        r->fam = moe ? -1 : family_of(y->gpu);
        set_unit(r);
        est_ctx c = {y, y->gpu, op->ops, op->comm, 1, 0, NULL};
        r->c = c;
        r->ok = 1;
    }
    return 0;
}

static double ape(const vrun *r, double ours)
{
    return 100 * fabs(ours - r->pub) / r->pub;
}

/* The run estimated at kernel efficiency eta (0: the estimator's own),
 * its unset fields searched under it; remembered per run. */
static const est_result *predict(vrun *r, double eta)
{
    for (int i = 0; i < r->n_memo; i++)
        if (r->memo[i].eta == eta) return &r->memo[i].r;
    memo_entry *m = &r->memo[r->next_memo];
    r->next_memo = (r->next_memo + 1) % MEMO;
    if (r->n_memo < MEMO) r->n_memo++;
    est_ctx c = r->c;
    c.kernel_eff = eta;
    m->eta = eta;
    search_complete(&c, &r->m, &r->want, r->gpus, &m->r, NULL, NULL);
    return &m->r;
}

/* Every run estimated at eta[i] (0: the estimator's constants), runs in
 * parallel (each search then runs on one thread): the same results at
 * any thread count, since a run's depend on it alone. */
static void predict_all(vrun *v, int n, const double *eta)
{
#pragma omp parallel for schedule(dynamic)
    for (int i = 0; i < n; i++)
        if (v[i].ok && eta[i] >= 0) predict(&v[i], eta[i]);
}

/* Searches every run's layout at its eta (0: the estimator's) and times
 * that layout at every grid eta. */
static void fix_layouts(vrun *v, int n, const double *eta)
{
#pragma omp parallel for schedule(dynamic)
    for (int i = 0; i < n; i++) {
        vrun *r = &v[i];
        if (!r->ok) continue;
        const est_result *res = predict(r, eta[i]);
        r->fixed = res->layout;
        r->fixed_eta = eta[i] > 0 ? eta[i] : est_kernel_eff(&r->c, &r->fixed);
        for (int k = 0; k < ETA_N; k++) {
            est_ctx c = r->c;
            c.kernel_eff = ETA_AT(k);
            est_result x;
            est_estimate(&c, &r->m, &r->fixed, &x);
            r->t[k] = x.iteration_s;
        }
    }
}

/* Where eta falls on the grid: the iteration time at eta is t[k] + (t[k
 * + 1] - t[k]) x w, interpolated in 1/eta (exact on grid values, w = 0);
 * k < 0 off the grid. */
typedef struct grid_at {
    int k;
    double w;
} grid_at;

static grid_at grid_of(double eta)
{
    grid_at g = {-1, 0};
    double x = (eta - ETA_MIN) / ETA_STEP;
    if (!(x > -1e-9 && x < ETA_N - 1 + 1e-9)) return g;
    g.k = (int)floor(x + 0.5);
    if (fabs(x - g.k) < 1e-9) {
        if (g.k == ETA_N - 1) g.k--, g.w = 1;
        return g;
    }
    g.k = (int)floor(x);
    double a = 1 / ETA_AT(g.k), b = 1 / ETA_AT(g.k + 1);
    g.w = (1 / eta - a) / (b - a);
    return g;
}

/* The run's error with its fixed layout at grid position g; INFINITY off
 * the grid. */
static double ape_fixed(const vrun *r, grid_at g)
{
    if (g.k < 0) return INFINITY;
    double it = r->t[g.k] + (r->t[g.k + 1] - r->t[g.k]) * g.w;
    return ape(r, ours_of(r, it));
}

/* ---- the fit ------------------------------------------------------------ */

static int in_fit(const vrun *r, int without)
{
    return r->ok && !r->waived && r->src != without;
}

/* Each fitted run's weight: 1 / (its source's runs x the sources). */
static void weights(const vrun *v, int n, int without, double *w)
{
    int cnt[MAX_SRC] = {0}, n_in = 0;
    for (int i = 0; i < n; i++)
        if (in_fit(&v[i], without)) cnt[v[i].src]++;
    for (int s = 0; s < n_src; s++) n_in += cnt[s] > 0;
    for (int i = 0; i < n; i++)
        w[i] = in_fit(&v[i], without) ? 1.0 / (cnt[v[i].src] * n_in) : 0;
}

static double eta_of(const fit_model *fm, const consts *k, const vrun *r)
{
    return k->eta[fm->group[r->stack]] * k->fac[r->fam];
}

/* The objective of each grid value of group g's constant (g < 0: one
 * constant for every fitted run) into obj[ETA_N], over the fitted runs
 * (w > 0) of family f (f < 0: every family), the factors held. */
static void group_objective(const fit_model *fm, const vrun *v, int n,
                            const double *w, int g, int f, const consts *k,
                            double *obj)
{
    static _Thread_local grid_at at[MAX_FAM][ETA_N];
    for (int q = 0; q < n_fam; q++)
        if (f < 0 || q == f)
            for (int j = 0; j < ETA_N; j++)
                at[q][j] = grid_of(ETA_AT(j) * k->fac[q]);
    for (int j = 0; j < ETA_N; j++) obj[j] = 0;
    for (int i = 0; i < n; i++) {
        if (!(w[i] > 0) || (g >= 0 && fm->group[v[i].stack] != g)
            || (f >= 0 && v[i].fam != f))
            continue;
        for (int j = 0; j < ETA_N; j++)
            obj[j] += w[i] * ape_fixed(&v[i], at[v[i].fam][j]);
    }
}

/* The grid value minimising obj (ties: the smaller); -1 when every value
 * is infinite. */
static int argmin(const double *obj, double *best)
{
    int bi = -1;
    *best = INFINITY;
    for (int j = 0; j < ETA_N; j++)
        if (obj[j] < *best) *best = obj[j], bi = j;
    return bi;
}

static int has_runs(const fit_model *fm, const vrun *v, int n, const double *w,
                    int g, int f)
{
    for (int i = 0; i < n; i++)
        if (w[i] > 0 && (g < 0 || fm->group[v[i].stack] == g)
            && (f < 0 || v[i].fam == f))
            return 1;
    return 0;
}

/* Whether family f's factor is told apart from the groups' constants:
 * some group has fitted runs on f and on another family. */
static int identified(const fit_model *fm, const vrun *v, int n,
                      const double *w, int f)
{
    for (int g = 0; g < N_STACK; g++) {
        if (!has_runs(fm, v, n, w, g, f)) continue;
        for (int o = 0; o < n_fam; o++)
            if (o != f && has_runs(fm, v, n, w, g, o)) return 1;
    }
    return 0;
}

/* Every group's constant given the factors: each group's best grid value
 * (groups are independent given the factors: a run's error depends on its
 * own group's constant only). Groups without runs are marked. base[g]
 * (may be NULL): the objective of runs whose factor is not being moved,
 * added. Returns the objective. */
static double fit_groups(const fit_model *fm, const vrun *v, int n,
                         const double *w, int f, double (*base)[ETA_N],
                         consts *k)
{
    double total = 0, obj[ETA_N];
    for (int g = 0; g < N_STACK; g++) {
        k->fallback[g] = !has_runs(fm, v, n, w, g, -1);
        if (k->fallback[g]) continue;
        group_objective(fm, v, n, w, g, f, k, obj);
        for (int j = 0; base && j < ETA_N; j++) obj[j] += base[g][j];
        double best;
        int bi = argmin(obj, &best);
        if (bi >= 0) k->eta[g] = ETA_AT(bi), total += best;
    }
    return total;
}

/* A family with no fitted run left (MLPerf's B200 runs are the only ones
 * of theirs: left out, B200 has none) takes the estimator's prior for it,
 * the factor of the nearest generation fitted here (est_kernel_eff_prior,
 * estimator/kernel_eff.c), not 1: what the estimator would say of a new
 * family is what its left-out fold is scored at. */
static void prior_factors(const fit_model *fm, const vrun *v, int n,
                          const double *w, consts *k)
{
    const hw_gpu *fitted[MAX_FAM];
    double fac[MAX_FAM];
    int m = 0;
    for (int f = 0; f < n_fam; f++)
        if (f == ref_fam || has_runs(fm, v, n, w, -1, f))
            fitted[m] = fam_tab[f], fac[m++] = k->fac[f];
    for (int f = 0; f < n_fam; f++)
        if (f != ref_fam && !has_runs(fm, v, n, w, -1, f))
            k->fac[f] = est_kernel_eff_prior(fam_tab[f], fitted, fac, m);
}

/* Fits model fm's constants to every run outside source `without` (-1:
 * none), with the layouts fixed. Without factors, each group's constant
 * is a one-dimensional minimum. With them, each family's factor is chosen
 * over its grid with every group's constant refitted at each value (a
 * constant and a factor trade off: moving one at a time stalls), family
 * after family until none moves; exact with one family beside the
 * reference. A family that shares no group with another is not told
 * apart from the constants of its groups: it takes the factor of model
 * GPU_ONLY (one constant for every stack) fitted to the same runs, or 1
 * there. A group without runs takes one constant fitted over every
 * remaining run. */
static void fit(const fit_model *fm, vrun *v, int n, int without, consts *k)
{
    double *w = malloc((size_t)n * sizeof *w);
    double(*base)[ETA_N] = malloc(N_STACK * sizeof *base);
    if (!w || !base) abort();
    weights(v, n, without, w);
    memset(k, 0, sizeof *k);
    for (int f = 0; f < MAX_FAM; f++) k->fac[f] = 1;
    int free_fams = 0;
    consts coarse;
    for (int f = 0; fm->per_family && f < n_fam; f++) {
        k->fam_fallback[f] = f != ref_fam && !identified(fm, v, n, w, f);
        free_fams += f != ref_fam && !k->fam_fallback[f];
        if (!k->fam_fallback[f]) continue;
        /* the factor one constant for every stack gives it */
        if (fm != &models[GPU_ONLY]) {
            fit(&models[GPU_ONLY], v, n, without, &coarse);
            k->fac[f] = coarse.fac[f];
        }
    }
    double obj = fit_groups(fm, v, n, w, -1, NULL, k);
    for (int round = 0; free_fams && round < 20; round++) {
        int moved = 0;
        for (int f = 0; f < n_fam; f++) {
            if (f == ref_fam || k->fam_fallback[f]) continue;
            /* the other families' runs do not move with this factor */
            for (int g = 0; g < N_STACK; g++) {
                for (int j = 0; j < ETA_N; j++) base[g][j] = 0;
                for (int o = 0; o < n_fam; o++) {
                    double part[ETA_N];
                    if (o == f) continue;
                    group_objective(fm, v, n, w, g, o, k, part);
                    for (int j = 0; j < ETA_N; j++) base[g][j] += part[j];
                }
            }
            consts best = *k;
            for (int j = 0; j < FAC_N; j++) {
                consts t = *k;
                t.fac[f] = FAC_AT(j);
                double o = fit_groups(fm, v, n, w, f, base, &t);
                if (o < obj - 1e-12) obj = o, best = t, moved = 1;
            }
            *k = best;
        }
        if (!moved || free_fams == 1) break;
    }
    if (fm->per_family) prior_factors(fm, v, n, w, k);
    int any_fallback = 0;
    for (int g = 0; g < N_STACK; g++) any_fallback |= k->fallback[g];
    if (any_fallback) {
        double all[ETA_N], best;
        group_objective(fm, v, n, w, -1, -1, k, all);
        int bi = argmin(all, &best);
        for (int g = 0; bi >= 0 && g < N_STACK; g++)
            if (k->fallback[g]) k->eta[g] = ETA_AT(bi);
    }
    free(base);
    free(w);
}

/* ---- scores ------------------------------------------------------------- */

typedef struct score {
    double in[MAX_SRC], loso[MAX_SRC];         /* MAPE, waived out */
    double in_all[MAX_SRC], loso_all[MAX_SRC]; /* MAPE, waived in */
    double in_mean, loso_mean;                 /* over sources */
    consts fold[MAX_SRC], all;
} score;

/* MAPE of source s's runs (waived too when with_waived) under per-run
 * figures ours[]. */
static double src_mape(const vrun *v, int n, int s, const double *ours,
                       int with_waived)
{
    double sum = 0;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (v[i].ok && v[i].src == s && (with_waived || !v[i].waived))
            sum += ape(&v[i], ours[i]), m++;
    return m ? sum / m : NAN;
}

static double mean_over_sources(const double *x)
{
    double sum = 0;
    int m = 0;
    for (int s = 0; s < n_src; s++)
        if (src_tab[s].n_fit) sum += x[s], m++;
    return m ? sum / m : NAN;
}

/* Model fm in sample and left-one-source-out (unless no_loso), the
 * searched layouts under each run's constants. Per-run figures go to
 * eta_in/ours_in/eta_loso/ours_loso when keep. */
static void score_model(const fit_model *fm, vrun *v, int n, int no_loso,
                        int keep, score *sc)
{
    double *in = malloc(4 * (size_t)n * sizeof *in), *lo = in + n;
    double *eta_in = lo + n, *eta_lo = eta_in + n;
    if (!in) abort();
    fit(fm, v, n, -1, &sc->all);
    for (int s = 0; s < n_src; s++)
        if (!no_loso && src_tab[s].n_fit) fit(fm, v, n, s, &sc->fold[s]);
    for (int i = 0; i < n; i++) {
        eta_in[i] = v[i].ok ? eta_of(fm, &sc->all, &v[i]) : 0;
        eta_lo[i] = v[i].ok && !no_loso && src_tab[v[i].src].n_fit
                        ? eta_of(fm, &sc->fold[v[i].src], &v[i])
                        : -1;
    }
    predict_all(v, n, eta_in);
    for (int i = 0; i < n; i++) {
        in[i] = lo[i] = NAN;
        if (!v[i].ok) continue;
        const est_result *r = predict(&v[i], eta_in[i]);
        in[i] = ours_of(&v[i], r->iteration_s);
        if (keep) v[i].eta_in = eta_in[i], v[i].ours_in = in[i], v[i].r_in = *r;
    }
    predict_all(v, n, eta_lo);
    for (int i = 0; i < n; i++) {
        if (!v[i].ok || eta_lo[i] < 0) continue;
        lo[i] = ours_of(&v[i], predict(&v[i], eta_lo[i])->iteration_s);
        if (keep) v[i].eta_loso = eta_lo[i], v[i].ours_loso = lo[i];
    }
    for (int s = 0; s < n_src; s++) {
        sc->in[s] = src_mape(v, n, s, in, 0);
        sc->in_all[s] = src_mape(v, n, s, in, 1);
        sc->loso[s] = no_loso ? NAN : src_mape(v, n, s, lo, 0);
        sc->loso_all[s] = no_loso ? NAN : src_mape(v, n, s, lo, 1);
    }
    sc->in_mean = mean_over_sources(sc->in);
    sc->loso_mean = no_loso ? NAN : mean_over_sources(sc->loso);
    free(in);
}

/* The figures of runs estimated at one given kernel efficiency (ours_in). */
static void score_fixed(const vrun *v, int n, score *sc)
{
    double *ours = malloc((size_t)n * sizeof *ours + 1);
    if (!ours) abort();
    for (int i = 0; i < n; i++) ours[i] = v[i].ours_in;
    for (int s = 0; s < n_src; s++) {
        sc->in[s] = src_mape(v, n, s, ours, 0);
        sc->in_all[s] = src_mape(v, n, s, ours, 1);
        sc->loso[s] = sc->loso_all[s] = NAN;
    }
    sc->in_mean = mean_over_sources(sc->in);
    sc->loso_mean = NAN;
    free(ours);
}

/* The estimator's model fitted in sample: layouts searched at the
 * estimator's constants first, then at the fit's until the fit stops
 * moving them (at most 5 searches). eta[] is scratch. Returns 1 when the
 * fit and the constants its layouts were searched at agree; *rounds
 * counts the searches. */
static int fit_in_sample(vrun *v, int n, double *eta, int *rounds)
{
    const fit_model *fm = &models[shown];
    consts k;
    for (int i = 0; i < n; i++) eta[i] = 0;
    fix_layouts(v, n, eta);
    for (*rounds = 1;; ++*rounds) {
        fit(fm, v, n, -1, &k);
        int moved = 0;
        for (int i = 0; i < n; i++) {
            if (!v[i].ok) continue;
            eta[i] = eta_of(fm, &k, &v[i]);
            moved |= fabs(eta[i] - v[i].fixed_eta) > 1e-9;
        }
        if (!moved) return 1;
        if (*rounds == 5) return 0;
        fix_layouts(v, n, eta);
    }
}

/* ---- output ------------------------------------------------------------- */

static void layout_text(const vrun *r, const space_layout *u, char *buf,
                        size_t cap)
{
    const space_layout *w = &r->want;
    snprintf(
        buf, cap,
        "tp%lld%s pp%lld vpp%lld%s cp%lld dp%lld mbs%lld%s %s%s z%d%s",
        (long long)u->tp, w->tp == SEARCH_UNSET ? "*" : "", (long long)u->pp,
        (long long)u->vpp, w->vpp == SEARCH_UNSET ? "*" : "", (long long)u->cp,
        (long long)u->dp, (long long)u->mbs, w->mbs == SEARCH_UNSET ? "*" : "",
        space_recompute_names[u->recompute],
        (int)w->recompute == SEARCH_UNSET ? "*" : "", (int)u->zero,
        (int)w->zero == SEARCH_UNSET ? "*" : "");
}

static void group_name(const fit_model *fm, int g, char *buf, size_t cap)
{
    buf[0] = 0;
    for (int s = 0; s < N_STACK; s++)
        if (fm->group[s] == g) {
            size_t n = strlen(buf);
            snprintf(buf + n, cap - n, "%s%s", n ? "+" : "",
                     space_stack_names[s]);
        }
}

/* The constants of fm as "name value, ..." ("*": no runs of its own). */
static void consts_text(const fit_model *fm, const consts *k, char *buf,
                        size_t cap)
{
    buf[0] = 0;
    int n_groups = 0;
    for (int s = 0; s < N_STACK; s++)
        if (fm->group[s] + 1 > n_groups) n_groups = fm->group[s] + 1;
    for (int g = 0; g < n_groups; g++) {
        char name[128];
        group_name(fm, g, name, sizeof name);
        size_t n = strlen(buf);
        snprintf(buf + n, cap - n, "%s%s %.3f%s", n ? ", " : "",
                 n_groups == 1 ? "all" : name, k->eta[g],
                 k->fallback[g] ? "*" : "");
    }
    for (int f = 0; fm->per_family && f < n_fam; f++) {
        size_t n = strlen(buf);
        snprintf(buf + n, cap - n, "; x %s %.3f%s", fam_tab[f]->name, k->fac[f],
                 f == ref_fam         ? " (reference)"
                 : k->fam_fallback[f] ? "*"
                                      : "");
    }
}

/* The GPU family of r's operator samples (the MoE runs keep none of
 * their own). */
static const char *family_name(const vrun *r)
{
    if (r->fam >= 0) return fam_tab[r->fam]->name;
    const hw_gpu *g = r->sys->gpu;
    return (g->models_like ? g->models_like : g)->name;
}

static void print_csv(const vrun *v, int n, const char *only, int header)
{
    if (header)
        printf("id,source,stack,waived,unit,published,predicted,ape_pct,"
               "loso_predicted,loso_ape_pct,kernel_eff,loso_kernel_eff,"
               "iteration_s,tp,pp,vpp,cp,dp,mbs,sp,recompute,zero,fwd_s,bwd_s,"
               "recompute_s,tp_s,cp_s,p2p_s,bubble_s,dp_s,optimizer_s,mem_gib,"
               "gpu,gpu_family,ep_s,host_s,cuda_graph\n");
    for (int i = 0; i < n; i++) {
        const vrun *r = &v[i];
        if (!r->ok || (only && strcmp(only, src_of(r)->id) != 0)) continue;
        const est_result *x = &r->r_in;
        const space_layout *u = &x->layout;
        const est_breakdown *b = &x->time;
        printf("%s,%s,%s,%d,%s,%g,%.6g,%.2f,%.6g,%.2f,%.3f,%.3f,%.6g,%lld,%lld,"
               "%lld,%lld,%lld,%lld,%d,%s,%d,%.5g,%.5g,%.5g,%.5g,%.5g,%.5g,"
               "%.5g,%.5g,%.5g,%.2f,%s,%s,%.5g,%.5g,%s\n",
               r->id, src_of(r)->id, space_stack_names[r->stack],
               r->waived != 0, r->kind, r->pub, r->ours_in, ape(r, r->ours_in),
               r->ours_loso, ape(r, r->ours_loso), r->eta_in, r->eta_loso,
               x->iteration_s, (long long)u->tp, (long long)u->pp,
               (long long)u->vpp, (long long)u->cp, (long long)u->dp,
               (long long)u->mbs, u->sp, space_recompute_names[u->recompute],
               (int)u->zero, b->fwd_s, b->bwd_s, b->recompute_s, b->tp_s,
               b->cp_s, b->pp_p2p_s, b->bubble_s, b->dp_s, b->optimizer_s,
               x->mem.total / 1073741824.0, r->sys->gpu->name,
               family_name(r), b->ep_s, b->host_s,
               space_cuda_graph_name(u));
    }
}

/* idw: the width of the id column. */
static void print_runs(const vrun *v, int n, const char *only, int loso,
                       int idw)
{
    printf("%-*s %-16s %-16s %10s %10s %6s %10s %6s  %s\n", idw, "run",
           "stack", "unit", "published", "ours", "err %", loso ? "LOSO" : "",
           loso ? "err %" : "", "layout used (searched fields marked *)");
    for (int i = 0; i < n; i++) {
        const vrun *r = &v[i];
        if (!r->ok || (only && strcmp(only, src_of(r)->id) != 0)) continue;
        char lay[160], lo[16] = "", le[16] = "";
        layout_text(r, &r->r_in.layout, lay, sizeof lay);
        if (r->moe) {
            size_t k = strlen(lay);
            const space_layout *u = &r->r_in.layout;
            snprintf(lay + k, sizeof lay - k, " ep%lld%s etp%lld%s %s",
                     (long long)space_layout_ep(u),
                     r->want.ep == SEARCH_UNSET ? "*" : "",
                     (long long)space_layout_etp(u),
                     r->want.etp == SEARCH_UNSET ? "*" : "",
                     u->moe_dispatcher >= 0
                             && u->moe_dispatcher < SPACE_MOE_DISPATCHER_COUNT
                         ? space_moe_dispatcher_names[u->moe_dispatcher]
                         : "?");
        }
        if (loso && r->ours_loso > 0) {
            snprintf(lo, sizeof lo, "%10.4g", r->ours_loso);
            snprintf(le, sizeof le, "%6.1f", ape(r, r->ours_loso));
        } else if (loso) { /* no fold: its source has no fitted run */
            snprintf(lo, sizeof lo, "%10s", "-");
            snprintf(le, sizeof le, "%6s", "-");
        }
        printf("%-*s %-16s %-16s %10.4g %10.4g %6.1f %10s %6s  %s%s%s\n",
               idw, r->id, space_stack_names[r->stack], r->kind, r->pub,
               r->ours_in, ape(r, r->ours_in), lo, le, lay,
               r->r_in.feasible ? "" : " (estimate: does not fit)",
               r->waived ? " WAIVED" : "");
    }
}

static void print_sources(const vrun *v, int n, const score *sc,
                          const char *only, int loso)
{
    printf("\nper source: MAPE %% in sample and left-one-source-out (LOSO), "
           "waived runs out, then with them\n");
    printf("%-30s %5s %6s %8s %8s %8s %8s  %-34s %6s %6s  %s\n", "source",
           "runs", "waived", "in", "LOSO", "in+w", "LOSO+w",
           "worst run (in sample)", "in %", "LOSO %", "skipped");
    for (int s = 0; s < n_src; s++) {
        const source *x = &src_tab[s];
        if (only && strcmp(only, x->id) != 0) continue;
        int runs = 0, nw = 0, worst = -1, nofit = 0;
        for (int i = 0; i < n; i++) {
            if (!v[i].ok || v[i].src != s) continue;
            runs++;
            nofit += !v[i].r_in.feasible;
            if (v[i].waived) {
                nw++;
                continue;
            }
            if (worst < 0
                || ape(&v[i], v[i].ours_in) > ape(&v[worst], v[worst].ours_in))
                worst = i;
        }
        printf("%-30s %5d %6d %8.1f %8.1f %8.1f %8.1f  %-34s %6.1f %6.1f  "
               "%d%s%s%s\n",
               x->id, runs - nw, nw, sc->in[s], loso ? sc->loso[s] : NAN,
               sc->in_all[s], loso ? sc->loso_all[s] : NAN,
               worst >= 0 ? v[worst].id : "-",
               worst >= 0 ? ape(&v[worst], v[worst].ours_in) : NAN,
               worst >= 0 && loso ? ape(&v[worst], v[worst].ours_loso) : NAN,
               x->skipped + x->failed, x->why[0] ? " (" : "", x->why,
               x->why[0] ? ")" : "");
        if (nofit)
            printf("%-30s %5s %d run(s) the estimate says do not fit\n", "",
                   "", nofit);
    }
    /* Issue 5 scores BigScience's two sources as one. */
    double sum = 0, lsum = 0;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (v[i].ok && !v[i].waived
            && strncmp(src_tab[v[i].src].id, "bigscience_", 11) == 0)
            m++, sum += ape(&v[i], v[i].ours_in),
                lsum += ape(&v[i], v[i].ours_loso);
    if (m && !only)
        printf("%-30s %5d %6s %8.1f %8.1f  (bigscience_bloom_tr11 + "
               "bigscience_tr11_prequel together)\n",
               "bigscience (both)", m, "", sum / m, loso ? lsum / m : NAN);
    printf("mean over sources (the fit's objective): in sample %.2f %%, LOSO "
           "%.2f %%\n",
           sc->in_mean, sc->loso_mean);
    printf("\nwaived (issue 15; out of every fit and of the figures without "
           "them):\n");
    for (int k = 0; k < N_WAIVED; k++) {
        int m2 = 0;
        for (int i = 0; i < n; i++) m2 += v[i].ok && v[i].waived == k + 1;
        printf("  ids with \"%s\" (%d runs): %s\n", waived[k].id_part, m2,
               waived[k].why);
    }
}

/* Whether the estimator holds constants k of model fm. */
static int estimator_holds(const fit_model *fm, const consts *k)
{
    int same = 1;
    for (int s = 0; s < N_STACK; s++)
        same &= fabs(k->eta[fm->group[s]]
                     - est_stack_kernel_eff((space_stack)s)->eff)
                < 1e-9;
    for (int f = 0; f < n_fam; f++)
        same &= fabs(k->fac[f] - est_gpu_kernel_eff_factor(fam_tab[f])) < 1e-9;
    return same;
}

static void print_consts_row(const char *what, const fit_model *fm,
                             const consts *k)
{
    printf("%-36s", what);
    for (int s = 0; s < N_STACK; s++)
        printf(" %15.3f%s", k->eta[fm->group[s]],
               k->fallback[fm->group[s]] ? "*" : " ");
    for (int f = 0; f < n_fam; f++)
        printf(" %15.3f%s", k->fac[f], k->fam_fallback[f] ? "*" : " ");
    printf("\n");
}

static void print_fit(const vrun *v, int n, const score *sc, const score *all,
                      int loso, int rounds, int agree)
{
    const fit_model *fm = &models[shown];
    printf("\nin-training kernel efficiency = stack's x GPU family's factor, "
           "model \"%s\"\n(estimator/kernel_eff.c; factors: hwdb "
           "kernel_efficiency_factor, 1 for %s by definition)\n",
           fm->name, fam_tab[ref_fam]->name);
    printf("%-36s", "fitted on");
    for (int s = 0; s < N_STACK; s++) printf(" %16s", space_stack_names[s]);
    for (int f = 0; f < n_fam; f++) {
        char h[64];
        snprintf(h, sizeof h, "x %.40s", fam_tab[f]->name);
        printf(" %16s", h);
    }
    printf("\n");
    print_consts_row("every source (in sample)", fm, &sc->all);
    printf("%-36s", "the estimator now");
    for (int s = 0; s < N_STACK; s++)
        printf(" %15.3f ", est_stack_kernel_eff((space_stack)s)->eff);
    for (int f = 0; f < n_fam; f++)
        printf(" %15.3f ", est_gpu_kernel_eff_factor(fam_tab[f]));
    printf("\n");
    for (int i = 0; loso && i < n_src; i++) {
        if (!src_tab[i].n_fit) continue;
        char what[96];
        snprintf(what, sizeof what, "all but %.63s", src_tab[i].id);
        print_consts_row(what, fm, &sc->fold[i]);
    }
    printf("(*: no fitted run of that stack left: the fit of one constant over "
           "every remaining run; or a family sharing no stack with another: "
           "its factor under one constant for every stack; or no run of "
           "that family left: the factor of the nearest generation fitted, "
           "est_kernel_eff_prior)\n");
    printf("layouts searched %d time(s) until the fit and the constants they "
           "were searched at agreed%s\n",
           rounds, agree ? "" : " (they did not: stopped)");
    if (shown != estimator_model()) {
        printf("not the estimator's model (\"%s\"): --model shows another\n",
               models[estimator_model()].name);
    } else if (estimator_holds(fm, &sc->all)) {
        printf("the estimator holds this fit\n");
    } else {
        printf(
            "the estimator DIFFERS from this fit: copy the in-sample row into "
            "estimator/kernel_eff.c and hwdb; with its constants now, MAPE "
            "%%:");
        double *ours = malloc((size_t)n * sizeof *ours + 1), x[MAX_SRC];
        if (!ours) abort();
        for (int i = 0; i < n; i++) ours[i] = v[i].ours_est;
        for (int s = 0; s < n_src; s++) {
            x[s] = src_mape(v, n, s, ours, 0);
            if (src_tab[s].n_fit) printf(" %s %.1f,", src_tab[s].id, x[s]);
        }
        printf(" mean over sources %.2f\n", mean_over_sources(x));
        free(ours);
    }
    if (!all) return;
    printf(
        "\nmodels of the constant: mean over sources of MAPE %% (waived out), "
        "in sample and LOSO; LOSO per source [n]\n");
    printf("%-34s %8s %8s", "model", "in", "LOSO");
    for (int s = 0; s < n_src; s++)
        if (src_tab[s].n_fit) printf(" %6s%d]", "[", s + 1);
    printf("  constants in sample\n");
    for (int k = 0; k < N_MODELS; k++) {
        char txt[512];
        consts_text(&models[k], &all[k].all, txt, sizeof txt);
        printf("%-34s %8.3f %8.3f", models[k].name, all[k].in_mean,
               all[k].loso_mean);
        for (int s = 0; s < n_src; s++)
            if (src_tab[s].n_fit) printf(" %7.1f", all[k].loso[s]);
        printf("  %s%s%s\n", txt, models[k].chosen ? "  <- estimator" : "",
               k == shown && !models[k].chosen ? "  <- shown above" : "");
    }
    for (int s = 0; s < n_src; s++)
        if (src_tab[s].n_fit) printf("  [%d] %s\n", s + 1, src_tab[s].id);
    int c = estimator_model();
    for (int k = 0; k < N_MODELS; k++)
        if (all[k].loso_mean < all[c].loso_mean)
            printf("note: \"%s\" has a lower LOSO figure than the estimator's "
                   "model\n",
                   models[k].name);
}

/* ---- the MoE runs: held out ---------------------------------------------- */

/* Estimates every MoE run at kernel efficiency keff (0: the estimator's
 * own constants), its unset fields searched; runs the estimator cannot
 * time are counted under their reason (est_reason_names, e.g.
 * moe_not_modelled) and dropped. Never fitted: the constants are the
 * dense runs' (the estimator's), so these figures are out of sample. */
static void estimate_moe(vrun *v, int n, double keff)
{
    double *eta = malloc((size_t)n * sizeof *eta + 1);
    if (!eta) abort();
    for (int i = 0; i < n; i++) eta[i] = keff;
    predict_all(v, n, eta);
    free(eta);
    for (int i = 0; i < n; i++) {
        vrun *r = &v[i];
        if (!r->ok) continue;
        const est_result *x = predict(r, keff);
        r->ours_in = r->ours_loso = r->ours_est = ours_of(r, x->iteration_s);
        r->r_in = *x;
        r->eta_in = r->eta_loso =
            keff > 0 ? keff : est_kernel_eff(&r->c, &x->layout);
        if (!isfinite(r->ours_in)) {
            char why[160];
            snprintf(why, sizeof why, "not estimated (%s)",
                     est_reason_names[x->reason]);
            r->ok = 0;
            moe_tab[r->src].failed++;
            count_why(&moe_tab[r->src], why);
            fprintf(stderr, "%s: %s %s\n", r->id, est_reason_names[x->reason],
                    x->message);
        } else if (!x->feasible) {
            fprintf(stderr, "%s: estimate says infeasible (%s): %s\n", r->id,
                    est_reason_names[x->reason], x->message);
        }
    }
}

/* r's step-time error in %, ours against published, positive when our
 * step is the slower (a rate target: the published rate over ours). */
static double signed_step(const vrun *r, double ours)
{
    if (!(ours > 0)) return NAN;
    return 100 * (r->is_time ? ours / r->pub - 1 : r->pub / ours - 1);
}

/* Issue 29's lean check per (source, GPU family): the runs' mean signed
 * step-time error and how many are too slow, in the figure given (LOSO
 * for the dense runs, which every fit left their own source out of; the
 * estimator's own for the MoE runs, held out of every fit), then the
 * issue's bars for a pair of at least 5 runs: MAPE at most 7 % (MoE 10 %),
 * mean signed within 3 %, neither side over 70 % of 10 or more runs. */
static void print_lean(const vrun *v, int n, const source *tab, int nsrc,
                       const char *only, int loso, int moe)
{
    printf("\n%s runs per (source, GPU family), %s: mean signed step-time "
           "error (+: ours slower), runs too slow; issue 29's bars for 5 "
           "runs or more: MAPE <= %d %%, |signed| <= 3 %%, neither side "
           "> 70 %% of 10 or more\n",
           moe ? "MoE" : "Dense",
           loso ? "left-one-source-out" : "as estimated", moe ? 10 : 7);
    printf("%-30s %-12s %5s %8s %8s %9s  %s\n", "source", "GPU family",
           "runs", "MAPE", "signed", "too slow", "bars");
    for (int s = 0; s < nsrc; s++) {
        if (only && strcmp(only, tab[s].id) != 0) continue;
        const char *fams[MAX_FAM + 8];
        int nf = 0;
        for (int i = 0; i < n; i++) {
            if (!v[i].ok || v[i].src != s || v[i].waived) continue;
            const char *f = family_name(&v[i]);
            int k = 0;
            while (k < nf && strcmp(fams[k], f) != 0) k++;
            if (k == nf && nf < (int)(sizeof fams / sizeof fams[0]))
                fams[nf++] = f;
        }
        for (int k = 0; k < nf; k++) {
            int m = 0, slow = 0;
            double sa = 0, ss = 0;
            for (int i = 0; i < n; i++) {
                if (!v[i].ok || v[i].src != s || v[i].waived
                    || strcmp(family_name(&v[i]), fams[k]) != 0)
                    continue;
                double o = loso ? v[i].ours_loso : v[i].ours_in;
                double e = signed_step(&v[i], o);
                if (isnan(e)) continue;
                m++, sa += ape(&v[i], o), ss += e, slow += e > 0;
            }
            if (!m) continue;
            char bars[64] = "-";
            if (m >= 5) {
                int ok_mape = sa / m <= (moe ? 10 : 7);
                int ok_sign = fabs(ss / m) <= 3;
                int ok_side =
                    m < 10 || (slow <= 0.7 * m && m - slow <= 0.7 * m);
                snprintf(bars, sizeof bars, "%s%s%s%s",
                         ok_mape && ok_sign && ok_side ? "met" : "missed:",
                         ok_mape ? "" : " MAPE", ok_sign ? "" : " signed",
                         ok_side ? "" : " one side");
            }
            printf("%-30s %-12s %5d %8.1f %+8.1f %4d / %-3d  %s\n", tab[s].id,
                   fams[k], m, sa / m, ss / m, slow, m, bars);
        }
    }
}

/* The MoE runs per run and per source: MAPE of the scored runs, the
 * worst, and every run not scored under its reason. */
static void print_moe(const vrun *v, int n, const char *only, double keff,
                      const char *path)
{
    const char *base = strrchr(path, '/');
    printf("\nMoE runs (%s): held out of every fit, estimated at %s\n",
           base ? base + 1 : path,
           keff > 0 ? "the --kernel-eff given"
                    : "the estimator's own constants");
    print_runs(v, n, only, 0, 46);
    printf("\nMoE sources: MAPE %% of the runs estimated; runs not scored, by "
           "reason\n");
    printf("%-30s %5s %8s  %-44s %6s  %s\n", "source", "runs", "MAPE",
           "worst run", "err %", "not scored");
    for (int s = 0; s < n_moe_src; s++) {
        const source *x = &moe_tab[s];
        if (only && strcmp(only, x->id) != 0) continue;
        int m = 0, worst = -1, nofit = 0;
        double sum = 0;
        for (int i = 0; i < n; i++) {
            if (!v[i].ok || v[i].src != s) continue;
            m++;
            sum += ape(&v[i], v[i].ours_in);
            nofit += !v[i].r_in.feasible;
            if (worst < 0
                || ape(&v[i], v[i].ours_in) > ape(&v[worst], v[worst].ours_in))
                worst = i;
        }
        char mape[16] = "-", werr[16] = "-";
        if (m) {
            snprintf(mape, sizeof mape, "%.1f", sum / m);
            snprintf(werr, sizeof werr, "%.1f",
                     ape(&v[worst], v[worst].ours_in));
        }
        printf("%-30s %5d %8s  %-44s %6s  %d\n", x->id, m, mape,
               worst >= 0 ? v[worst].id : "-", werr, x->skipped + x->failed);
        for (int k = 0; k < x->n_why; k++)
            printf("%-30s %5s %8s  %4d %s\n", "", "", "", x->why_n[k],
                   x->why_of[k]);
        if (nofit)
            printf("%-30s %5s %d run(s) the estimate says do not fit\n", "",
                   "", nofit);
    }
}

/* ---- the estimator's error-band table (estimator/band_runs.c) ---------- */

/* r's signed error as the band takes it: left one source out for a dense
 * run, as estimated for an MoE run (held out of every fit). */
static double band_err(const vrun *r)
{
    return signed_step(r, r->moe ? r->ours_est : r->ours_loso);
}

/* Whether run r is one the band table holds. */
static int band_run(const vrun *r)
{
    return r->ok && isfinite(band_err(r));
}

/* Writes estimator/band_runs.c (to a temporary file renamed over path):
 * every dense and MoE run scored, what it ran and its error. */
static int write_bands(const char *path, const vrun *v, int n, const vrun *mv,
                       int nm)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int nd = 0, nmoe = 0;
    for (int i = 0; i < n; i++) nd += band_run(&v[i]);
    for (int i = 0; i < nm; i++) nmoe += band_run(&mv[i]);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "validate_runs: --write-bands: cannot write '%s'\n",
                tmp);
        return TP_EIO;
    }
    fprintf(f,
            "/*\n"
            " * band_runs.c - the published runs bench/validate_runs scored, "
            "with the\n"
            " * estimator's signed step-time error on each (+: our step the "
            "slower;\n"
            " * dense runs left one source out, MoE runs as estimated): the "
            "evidence\n"
            " * behind est_error_band (band.c).\n"
            " *\n"
            " * Generated by `build/bench/validate_runs --write-bands "
            "estimator/band_runs.c`;\n"
            " * do not edit. validate_runs says when it differs from what it "
            "measures.\n"
            " */\n"
            "#include \"est.h\"\n\n"
            "const char est_validated_runs_origin[] =\n"
            "    \"bench/validate_runs --write-bands: %d dense runs left one "
            "source out, %d MoE runs as estimated\";\n\n"
            "const est_validated_run est_validated_runs[] = {\n",
            nd, nmoe);
    for (int pass = 0; pass < 2; pass++) {
        const vrun *w = pass ? mv : v;
        int k = pass ? nm : n;
        for (int i = 0; i < k; i++) {
            const vrun *r = &w[i];
            if (!band_run(r)) continue;
            space_params p;
            space_model_params(&r->m, 1, &p);
            const space_layout *u = &r->r_in.layout;
            fprintf(f,
                    "    {\"%s\", \"%s\", %s, \"%s\", %d, %d, %.6g, %.6g, "
                    "%lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %.2f},\n",
                    r->id, src_of(r)->id,
                    r->stack == SPACE_STACK_MEGATRON_2021 ? "SPACE_STACK_MEGATRON_2021"
                    : r->stack == SPACE_STACK_MEGATRON_CORE ? "SPACE_STACK_MEGATRON_CORE"
                    : r->stack == SPACE_STACK_PYTORCH_EAGER ? "SPACE_STACK_PYTORCH_EAGER"
                    : r->stack == SPACE_STACK_PYTORCH_COMPILED
                        ? "SPACE_STACK_PYTORCH_COMPILED"
                        : "SPACE_STACK_DEEPSPEED_2021",
                    family_name(r), r->moe, r->waived, (double)p.total,
                    (double)(p.active > 0 ? p.active : p.total),
                    (long long)r->gpus, (long long)u->seq, (long long)u->tp,
                    (long long)u->pp, (long long)u->cp, (long long)u->ep,
                    (long long)u->dp, (long long)u->mbs, band_err(r));
        }
    }
    fprintf(f, "};\n\nconst int est_n_validated_runs =\n"
               "    (int)(sizeof est_validated_runs / "
               "sizeof est_validated_runs[0]);\n");
    int bad = ferror(f);
    if (fclose(f) || bad) {
        remove(tmp);
        fprintf(stderr, "validate_runs: --write-bands: write error on '%s'\n",
                tmp);
        return TP_EIO;
    }
    if (rename(tmp, path)) {
        remove(tmp);
        fprintf(stderr, "validate_runs: --write-bands: cannot rename onto "
                        "'%s'\n", path);
        return TP_EIO;
    }
    printf("\nwrote %s: %d dense runs, %d MoE runs\n", path, nd, nmoe);
    return 0;
}

/* Whether the estimator's band table holds these runs with these errors
 * (to 0.01 %, its precision). */
static void check_bands(const vrun *v, int n, const vrun *mv, int nm)
{
    int k = 0, differ = 0;
    for (int pass = 0; pass < 2; pass++) {
        const vrun *w = pass ? mv : v;
        int m = pass ? nm : n;
        for (int i = 0; i < m; i++) {
            if (!band_run(&w[i])) continue;
            if (k >= est_n_validated_runs
                || strcmp(est_validated_runs[k].id, w[i].id) != 0
                || fabs(est_validated_runs[k].err_pct - band_err(&w[i]))
                       > 0.0051)
                differ++;
            k++;
        }
    }
    if (k != est_n_validated_runs) differ++;
    if (differ)
        printf("\nthe estimator's error-band table (estimator/band_runs.c, "
               "%d runs) differs from these figures (%d runs): rerun with "
               "--write-bands estimator/band_runs.c and rebuild\n",
               est_n_validated_runs, k);
    else
        printf("\nthe estimator's error-band table (estimator/band_runs.c) "
               "holds these %d runs and errors\n", k);
}

int main(int argc, char **argv)
{
    const char *path = TRAINPLAN_SOURCE_DIR "/bench/data/validation_runs.json";
    /* The MoE runs: the repository's, unless --moe-runs says otherwise or
     * --runs names another file of runs (a fixture stands alone). */
    const char *moe_path =
        TRAINPLAN_SOURCE_DIR "/bench/data/moe_validation_runs.json";
    int runs_given = 0, moe_given = 0;
    const char *only = NULL;
    int csv = 0, no_loso = 0;
    const char *bands = NULL;
    double keff = 0; /* 0: fitted */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            path = argv[++i];
            runs_given = 1;
        } else if (strcmp(argv[i], "--moe-runs") == 0 && i + 1 < argc) {
            moe_given = 1;
            moe_path = strcmp(argv[i + 1], "none") == 0 ? (i++, NULL)
                                                        : argv[++i];
        }
        else if (strcmp(argv[i], "--source") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--csv") == 0)
            csv = 1;
        else if (strcmp(argv[i], "--no-loso") == 0)
            no_loso = 1;
        else if (strcmp(argv[i], "--write-bands") == 0 && i + 1 < argc)
            bands = argv[++i];
        else if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) {
            const char *name = argv[++i];
            for (int k = 0; k < N_MODELS; k++)
                if (strcmp(name, models[k].name) == 0) shown = k;
            if (shown < 0) {
                fprintf(stderr, "validate_runs: --model: expected one of");
                for (int k = 0; k < N_MODELS; k++)
                    fprintf(stderr, "%s '%s'", k ? "," : "", models[k].name);
                fprintf(stderr, "; found '%s'\n", name);
                return TP_EUSAGE;
            }
        } else if (strcmp(argv[i], "--kernel-eff") == 0 && i + 1 < argc
                   && (keff = atof(argv[++i])) > 0 && keff <= 1)
            ;
        else {
            fprintf(stderr, "usage: validate_runs [--runs FILE] "
                            "[--moe-runs FILE|none] [--source ID] "
                            "[--csv] [--no-loso] [--model NAME] "
                            "[--kernel-eff X (0 < X <= 1)] "
                            "[--write-bands FILE]\n");
            return TP_EUSAGE;
        }
    }
    if (keff > 0) no_loso = 1;
    if (runs_given && !moe_given) moe_path = NULL;
    if (bands && (keff > 0 || no_loso || only || runs_given || moe_given)) {
        fprintf(stderr, "validate_runs: --write-bands: only with the "
                        "repository's runs, every source, the fitted kernel "
                        "efficiency and LOSO (no --runs, --moe-runs, "
                        "--source, --no-loso or --kernel-eff)\n");
        return TP_EUSAGE;
    }
    if (shown < 0) shown = estimator_model();
    tp_err e = {0};
    cJSON *root;
    if (tp_json_load(path, &root, &e)) {
        fprintf(stderr, "validate_runs: %s\n", e.msg);
        return e.status;
    }
    hw_db *db = hw_db_open(NULL, 0, &e);
    if (!db) {
        fprintf(stderr, "validate_runs: %s\n", e.msg);
        cJSON_Delete(root);
        return e.status;
    }
    vrun *v = NULL, *mv = NULL;
    cJSON *moe_root = NULL;
    int n = 0, nm = 0,
        rc = read_runs(root, path, db, &v, &n, src_tab, &n_src, 0, &e);
    if (!rc && moe_path) {
        rc = tp_json_load(moe_path, &moe_root, &e);
        if (!rc)
            rc = read_runs(moe_root, moe_path, db, &mv, &nm, moe_tab,
                           &n_moe_src, 1, &e);
    }
    if (rc) {
        fprintf(stderr, "validate_runs: %s\n", e.msg);
        goto done;
    }
    double *eta = calloc((size_t)n + 1, sizeof *eta);
    if (!eta) abort();
    for (int i = 0; i < n; i++) eta[i] = keff;
    predict_all(v, n, eta);
    /* Runs the estimator cannot time are reported and dropped. */
    for (int i = 0; i < n; i++) {
        if (!v[i].ok) continue;
        const est_result *r = predict(&v[i], keff);
        v[i].ours_est = ours_of(&v[i], r->iteration_s);
        if (!isfinite(v[i].ours_est)) {
            v[i].ok = 0;
            src_tab[v[i].src].failed++;
            add_why(&src_tab[v[i].src], "not estimated");
            fprintf(stderr, "%s: %s %s\n", v[i].id, est_reason_names[r->reason],
                    r->message);
        } else if (!r->feasible) {
            fprintf(stderr, "%s: estimate says infeasible (%s): %s\n", v[i].id,
                    est_reason_names[r->reason], r->message);
        }
    }
    {
        int cnt[MAX_FAM] = {0};
        for (int i = 0; i < n; i++) {
            if (!v[i].ok || v[i].waived) continue;
            src_tab[v[i].src].n_fit++;
            cnt[v[i].fam]++;
        }
        for (int f = 1; f < n_fam; f++)
            if (cnt[f] > cnt[ref_fam]) ref_fam = f;
        for (int f = 0; f < n_fam; f++)
            if (strcmp(fam_tab[f]->name, REF_FAMILY) == 0) ref_fam = f;
    }
    score sc, all[N_MODELS];
    memset(&sc, 0, sizeof sc);
    int rounds = 0, agree = 1;
    if (keff > 0) {
        for (int i = 0; i < n; i++) {
            if (!v[i].ok) continue;
            v[i].eta_in = v[i].eta_loso = keff;
            v[i].ours_in = v[i].ours_loso = v[i].ours_est;
            v[i].r_in = *predict(&v[i], keff);
        }
        score_fixed(v, n, &sc);
    } else {
        agree = fit_in_sample(v, n, eta, &rounds);
        for (int m = 0; m < N_MODELS && !no_loso; m++)
            if (m != shown) score_model(&models[m], v, n, 0, 0, &all[m]);
        score_model(&models[shown], v, n, no_loso, 1, &sc);
        all[shown] = sc;
    }
    if (moe_path) estimate_moe(mv, nm, keff);
    if (csv) {
        print_csv(v, n, only, 1);
        print_csv(mv, nm, only, 0);
    } else {
        print_runs(v, n, only, !no_loso, 34);
        print_sources(v, n, &sc, only, !no_loso);
        print_lean(v, n, src_tab, n_src, only, !no_loso, 0);
        if (keff > 0)
            printf("\nevery run at kernel efficiency %.3f: no fit\n", keff);
        else
            print_fit(v, n, &sc, no_loso ? NULL : all, !no_loso, rounds, agree);
        if (moe_path) {
            print_moe(mv, nm, only, keff, moe_path);
            print_lean(mv, nm, moe_tab, n_moe_src, only, 0, 1);
        }
        if (!only && !no_loso && !runs_given && !moe_given) {
            if (bands) rc = write_bands(bands, v, n, mv, nm);
            else check_bands(v, n, mv, nm);
        }
    }
    free(eta);
done:
    for (int i = 0; v && i < n; i++) free(v[i].pp_store);
    for (int i = 0; mv && i < nm; i++) free(mv[i].pp_store);
    free(v);
    free(mv);
    cJSON_Delete(moe_root);
    bench_close_systems(cache, n_cache);
    hw_db_free(db);
    cJSON_Delete(root);
    return rc;
}
