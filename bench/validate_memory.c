/*
 * validate_memory.c - the memory model (estimator/mem.c) against measured
 * peak memory of published runs, per source, and the fit of its two
 * constants: the caching allocator's cached share, with expandable
 * segments and without.
 *
 * Reads bench/data/memory_runs.json (schema trainplan-memory-runs/2: each
 * run's model, system, layout as validation_runs.json writes it,
 * bench/runs.c, and what was measured). Each run is compared in the
 * quantity its source measured, never another:
 *   max_memory_allocated  the live tensors of the larger moment
 *                         (est_memory.allocated);
 *   max_memory_reserved   the allocator's segments after a step
 *                         (est_memory.seen_reserved);
 *   nvidia_smi            the process on the device after a step
 *                         (est_memory.seen_device: reserved + CUDA context
 *                         + NCCL buffers).
 * of the pipeline stage that printed it where the run says which, else of
 * the busiest stage.
 *
 * The cached share (cached but unused bytes as a share of the main
 * stream's live tensors; only the reserved and nvidia-smi figures depend
 * on it) has one value per allocator setting, expandable segments on or
 * off (space_layout.alloc_expandable: the run's layout says which, else
 * its framework's launcher default). Both are fitted exactly on a grid of
 * 0.0025 to the mean over sources of each source's mean absolute
 * percentage error (MAPE) of those runs; a run depends on its setting's
 * share only, so the objective is a sum of one term per setting and each
 * share is fitted on its own. Each source is scored leaving it out (LOSO):
 * both shares fitted without its runs (a setting no other source ran
 * takes the other setting's share). Nothing else is fitted: every other
 * term is a formula of the framework's or the library's code
 * (docs/memory.md).
 *
 * Then the margin the search adds (estimator/mem.c, est_memory_margin):
 * per framework, the 95th percentile of its own runs' under-estimates of
 * what must fit (the comment above the margin's table says how each kind
 * of figure counts); a framework without enough runs of its own takes the
 * largest margin from max_memory_allocated figures and says so.
 *
 * usage: validate_memory [--runs FILE] [--frag X[,Y]] [--source ID]
 *                        [--terms ID] [--check] [--csv]
 * --frag X scores every run at cached share X (X with expandable
 * segments, Y without), no fit; --terms ID prints the terms of run ID at
 * the fitted shares; --check exits 2 when estimator/mem.c holds other
 * shares or margins than the ones found here (tests run it); --csv prints
 * a row per run. Exit status 0, 1
 * if a run could not be estimated, 64 on bad usage, 65/66 on bad or
 * missing input.
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
#define N_SET 2 /* allocator settings: expandable segments off (0), on (1) */
#define FRAG_STEP 0.0025
#define FRAG_N 201 /* 0 to 0.5 */
#define MARGIN_MIN_RUNS 10   /* a framework's own peaks for a margin */
#define MARGIN_COVERAGE 1.0  /* the share of them the margin covers:
                                 all, the worst under-estimate */

typedef enum kind {
    K_ALLOCATED,
    K_RESERVED,
    K_SMI,
    K_COUNT
} kind;
static const char *const kind_names[K_COUNT] = {
    "max_memory_allocated", "max_memory_reserved", "nvidia_smi"};
static const char *const kind_short[K_COUNT] = {"alloc", "resv", "smi"};

typedef struct mrun {
    const char *id;
    const char *skip; /* why the run is not scored, or NULL */
    int src;
    kind k;
    int ok;
    double meas;      /* bytes */
    est_memory mem;   /* at the estimator's cached share */
    int set;          /* expandable segments: 1 on, 0 off */
    int framework;
    double gpu_bytes; /* the GPU's memory */
    space_layout l;
    int64_t nlayers;
    double ours_in, ours_loso;
    space_pp_layout *pp_store; /* its layout string's (bench_split_read) */
} mrun;

static char src_id[MAX_SRC][64];
static int n_src;

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

static int source_of(const char *id)
{
    for (int i = 0; i < n_src; i++)
        if (strcmp(src_id[i], id) == 0) return i;
    if (n_src == MAX_SRC) return MAX_SRC - 1;
    snprintf(src_id[n_src], sizeof src_id[0], "%s", id);
    return n_src++;
}

/* Bytes of a value in unit u (MiB, MB, GiB, GB), or NAN. */
static double to_bytes(double v, const char *u)
{
    static const struct {
        const char *u;
        double b;
    } units[] = {{"MiB", 1048576.0}, {"MB", 1e6}, {"GiB", 1073741824.0},
                 {"GB", 1e9}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(u, units[i].u) == 0) return v * units[i].b;
    return NAN;
}

/* Our figure of r at the cached shares frag[setting], in the quantity it
 * measured. */
static double ours_at(const mrun *r, const double *frag)
{
    est_memory m = r->mem;
    est_memory_settle(&m, frag[r->set]);
    switch (r->k) {
    case K_ALLOCATED: return m.allocated;
    case K_RESERVED: return m.seen_reserved;
    default: return m.seen_device;
    }
}

/* Reads run i into r; 0, 1 if it cannot be estimated (said on stderr),
 * or an error status with e set for a malformed file. */
static int read_run(const cJSON *run, const char *path, int i, hw_db *db,
                    mrun *r, tp_err *e)
{
    const cJSON *id = get(run, "id"), *sj = get(run, "source_id");
    if (!cJSON_IsString(id) || !cJSON_IsString(sj))
        return tp_errf(e, TP_EDATA, "%s: $.runs[%d]: id and source_id must "
                       "be strings", path, i);
    r->id = id->valuestring;
    r->src = source_of(sj->valuestring);
    const cJSON *skip = get(run, "skip");
    if (cJSON_IsString(skip)) {
        r->skip = skip->valuestring;
        return 0;
    }
    const cJSON *ms = get(run, "measured");
    const cJSON *kj = get(ms, "kind"), *vj = get(ms, "value"),
                *uj = get(ms, "unit");
    int k = -1;
    for (int j = 0; cJSON_IsString(kj) && j < K_COUNT; j++)
        if (strcmp(kj->valuestring, kind_names[j]) == 0) k = j;
    double v = cJSON_IsNumber(vj) && cJSON_IsString(uj)
                   ? to_bytes(vj->valuedouble, uj->valuestring)
                   : NAN;
    if (k < 0 || !(v > 0))
        return tp_errf(e, TP_EDATA, "%s: $.runs[%d].measured: expected kind "
                       "max_memory_allocated, max_memory_reserved or "
                       "nvidia_smi, a value > 0 and unit MiB, MB, GiB or GB",
                       path, i);
    r->k = (kind)k;
    r->meas = v;
    const cJSON *mj = get(run, "model");
    space_model m;
    int rc = cJSON_IsString(mj)
                 ? space_model_resolve(mj->valuestring, &m, e)
                 : space_model_from_hf_json(mj, path, r->id, &m, e);
    const cJSON *sys = get(run, "system");
    const hw_system *y = NULL;
    if (!rc && cJSON_IsString(sys)) y = hw_find_system(db, sys->valuestring, e);
    if (rc || !y) {
        fprintf(stderr, "validate_memory: %s: %s\n", r->id,
                e->msg[0] ? e->msg : "no system");
        memset(e, 0, sizeof *e);
        return 1;
    }
    const cJSON *dj = get(run, "dropout");
    if (cJSON_IsObject(dj)) {
        m.attn_dropout = cJSON_GetNumberValue(get(dj, "attention"));
        m.hidden_dropout = cJSON_GetNumberValue(get(dj, "hidden"));
        if (isnan(m.attn_dropout)) m.attn_dropout = 0;
        if (isnan(m.hidden_dropout)) m.hidden_dropout = 0;
    }
    space_layout l;
    if ((rc = bench_layout_read(get(run, "layout"), src_id[r->src], path, i,
                                &l, e))
        || (rc = bench_split_read(get(run, "layout"), &m, path, i, &l,
                                  &r->pp_store, e)))
        return rc > 1 ? rc : 2;
    if (l.vpp == SEARCH_UNSET) l.vpp = 1;
    /* no split given: the one Megatron-Core users run (the even split
     * where it can be built) */
    bench_split_settle(&m, &l);
    if (l.cp == SEARCH_UNSET) l.cp = 1;
    if (l.sp == SEARCH_UNSET) l.sp = 0;
    if ((int)l.zero == SEARCH_UNSET) l.zero = SPACE_ZERO_NONE;
    if ((int)l.recompute == SEARCH_UNSET) l.recompute = SPACE_RECOMPUTE_NONE;
    if (l.tp < 1 || l.pp < 1 || l.dp < 1 || l.mbs < 1 || l.gbs < 1
        || l.seq < 1) {
        fprintf(stderr, "validate_memory: %s: tp, pp, dp, micro_batch_size, "
                "global_batch_size and seq_length must all be given\n", r->id);
        return 1;
    }
    char why[200];
    if (space_layout_check(&m, &l, 0, why, sizeof why) != SPACE_OK) {
        fprintf(stderr, "validate_memory: %s: %s\n", r->id, why);
        return 1;
    }
    int64_t stage = -1;
    const cJSON *pj = get(ms, "pp_stage");
    if (cJSON_IsNumber(pj)) stage = (int64_t)pj->valuedouble;
    if (stage >= l.pp) stage = l.pp - 1;
    if (stage >= 0)
        est_memory_stage(&m, &l, stage, &r->mem);
    else
        est_memory_of(&m, &l, &r->mem);
    est_ctx c = {y, y->gpu, NULL, NULL, 0, 0, NULL};
    est_memory_device(&c, &m, &l, &r->mem);
    r->l = l;
    r->set = l.alloc_expandable != 0;
    r->nlayers = m.num_layers;
    r->framework = l.framework;
    r->gpu_bytes = y->gpu->mem_bytes;
    r->ok = 1;
    return 0;
}

static double ape(const mrun *r, double ours)
{
    return 100 * fabs(ours - r->meas) / r->meas;
}

/* The part of the objective (the mean over sources, those with runs the
 * cached share moves, not `without`, of each one's MAPE of those runs)
 * that setting `set`'s share f moves: each source's absolute percentage
 * errors of its runs of that setting over all its runs, summed; NAN when
 * no run of that setting is left. The other setting's runs add a term of
 * their own, so each share's minimum is the objective's. */
static double objective(const mrun *v, int n, int without, int set, double f)
{
    double sum[MAX_SRC] = {0};
    int cnt[MAX_SRC] = {0}, mine = 0;
    double fr[N_SET] = {f, f};
    for (int i = 0; i < n; i++) {
        if (!v[i].ok || v[i].k == K_ALLOCATED || v[i].src == without) continue;
        cnt[v[i].src]++;
        if (v[i].set != set) continue;
        sum[v[i].src] += ape(&v[i], ours_at(&v[i], fr));
        mine++;
    }
    double tot = 0;
    for (int s = 0; s < n_src; s++)
        if (cnt[s]) tot += sum[s] / cnt[s];
    return mine ? tot : NAN;
}

/* The grid values of both shares minimising the objective without
 * `without` into frag[]; a setting with no run left takes the other's,
 * and with none at all both are NAN. */
static void fit(const mrun *v, int n, int without, double *frag)
{
    for (int set = 0; set < N_SET; set++) {
        double best = NAN, arg = NAN;
        for (int g = 0; g < FRAG_N; g++) {
            double f = FRAG_STEP * g, o = objective(v, n, without, set, f);
            if (!isnan(o) && (isnan(best) || o < best - 1e-12))
                best = o, arg = f;
        }
        frag[set] = arg;
    }
    if (isnan(frag[0])) frag[0] = frag[1];
    if (isnan(frag[1])) frag[1] = frag[0];
}

static double quantile(double *x, int n, double q)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && x[j - 1] > x[j]; j--) {
            double t = x[j];
            x[j] = x[j - 1], x[j - 1] = t;
        }
    if (n == 0) return NAN;
    double pos = q * (n - 1);
    int lo = (int)floor(pos);
    int hi = lo + 1 < n ? lo + 1 : lo;
    return x[lo] + (pos - lo) * (x[hi] - x[lo]);
}

int main(int argc, char **argv)
{
    const char *path = TRAINPLAN_SOURCE_DIR "/bench/data/memory_runs.json";
    const char *only = NULL, *terms = NULL;
    int check = 0, mismatch = 0, csv = 0;
    double fixed[N_SET] = {NAN, NAN};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            path = argv[++i];
        } else if (strcmp(argv[i], "--check") == 0) {
            check = 1;
        } else if (strcmp(argv[i], "--csv") == 0) {
            csv = 1;
        } else if (strcmp(argv[i], "--terms") == 0 && i + 1 < argc) {
            terms = argv[++i];
        } else if (strcmp(argv[i], "--source") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--frag") == 0 && i + 1 < argc) {
            char *end;
            fixed[1] = strtod(argv[++i], &end);
            fixed[0] = *end == ',' ? strtod(end + 1, &end) : fixed[1];
            if (*end || !(fixed[0] >= 0 && fixed[0] <= 1)
                || !(fixed[1] >= 0 && fixed[1] <= 1)) {
                fprintf(stderr, "validate_memory: --frag %s: expected a "
                        "number in [0, 1], or two (with expandable "
                        "segments, without) separated by a comma\n",
                        argv[i]);
                return 64;
            }
        } else {
            fprintf(stderr, "usage: validate_memory [--runs FILE] "
                    "[--frag X[,Y]] [--source ID] [--terms ID] [--check] "
                    "[--csv]\n");
            return 64;
        }
    }
    tp_err e = {0};
    cJSON *root;
    if (tp_json_load(path, &root, &e)) {
        fprintf(stderr, "validate_memory: %s\n", e.msg);
        return e.status;
    }
    hw_db *db = hw_db_open(NULL, 0, &e);
    if (!db) {
        fprintf(stderr, "validate_memory: %s\n", e.msg);
        cJSON_Delete(root);
        return e.status;
    }
    const cJSON *runs = get(root, "runs"), *run;
    int cap = cJSON_GetArraySize(runs), n = 0, failed = 0, i = 0;
    mrun *v = calloc(cap > 0 ? (size_t)cap : 1, sizeof *v);
    if (!v) abort();
    cJSON_ArrayForEach(run, runs) {
        int rc = read_run(run, path, i++, db, &v[n], &e);
        if (rc > 1) {
            fprintf(stderr, "validate_memory: %s\n", e.msg);
            return rc;
        }
        failed += rc;
        n++;
    }
    /* In sample and leaving each source out. */
    int is_fixed = !isnan(fixed[0]);
    double f_in[N_SET], f_loso[MAX_SRC][N_SET];
    if (is_fixed) f_in[0] = fixed[0], f_in[1] = fixed[1];
    else fit(v, n, -1, f_in);
    for (int s = 0; s < n_src; s++) {
        if (is_fixed) f_loso[s][0] = fixed[0], f_loso[s][1] = fixed[1];
        else fit(v, n, s, f_loso[s]);
        for (int set = 0; set < N_SET; set++)
            if (isnan(f_loso[s][set])) f_loso[s][set] = 0; /* no other source */
    }
    for (int k = 0; k < n; k++) {
        if (!v[k].ok) continue;
        v[k].ours_in = ours_at(&v[k], f_in);
        v[k].ours_loso = ours_at(&v[k], f_loso[v[k].src]);
    }
    if (csv) {
        /* One row per scored run: what it measured, ours in that quantity
         * in sample and LOSO, and what must fit (est_memory.total: the
         * live tensors of the larger moment, context and NCCL's
         * buffers), bytes. */
        printf("id,source,framework,kind,gpu_bytes,measured_bytes,ours_bytes,"
               "loso_bytes,must_fit_bytes,allocated_bytes\n");
        for (int k = 0; k < n; k++) {
            const mrun *r = &v[k];
            if (!r->ok || (only && strcmp(src_id[r->src], only) != 0))
                continue;
            printf("%s,%s,%s,%s,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f\n", r->id,
                   src_id[r->src], space_framework_names[r->framework],
                   kind_names[r->k], r->gpu_bytes, r->meas, r->ours_in,
                   r->ours_loso, r->mem.total, r->mem.allocated);
        }
        free(v);
        hw_db_free(db);
        cJSON_Delete(root);
        return failed ? 1 : 0;
    }
    printf("%-34s %-5s %4s %3s %3s %3s %3s %3s %4s %-9s %9s %9s %9s %7s "
           "%7s\n",
           "run", "kind", "l", "tp", "pp", "cp", "dp", "mbs", "zero", "recomp",
           "meas GiB", "ours GiB", "LOSO GiB", "err %", "LOSO %");
    for (int k = 0; k < n; k++) {
        const mrun *r = &v[k];
        if (!r->ok || (only && strcmp(src_id[r->src], only) != 0)) continue;
        printf("%-34.34s %-5s %4lld %3lld %3lld %3lld %3lld %3lld %4d %-9s "
               "%9.2f %9.2f %9.2f %+7.1f %+7.1f\n",
               r->id, kind_short[r->k], (long long)r->nlayers,
               (long long)r->l.tp, (long long)r->l.pp, (long long)r->l.cp,
               (long long)r->l.dp, (long long)r->l.mbs, (int)r->l.zero,
               space_recompute_names[r->l.recompute], r->meas / 1073741824.0,
               r->ours_in / 1073741824.0, r->ours_loso / 1073741824.0,
               100 * (r->ours_in - r->meas) / r->meas,
               100 * (r->ours_loso - r->meas) / r->meas);
    }
    for (int k = 0; terms && k < n; k++) {
        if (!v[k].ok || strcmp(v[k].id, terms) != 0) continue;
        est_memory t = v[k].mem;
        est_memory_settle(&t, f_in[v[k].set]);
        const struct {
            const char *name;
            double b;
        } row[] = {{"weights", t.weights}, {"gradients", t.grads},
                   {"optimizer", t.optimizer}, {"fp8 copies", t.fp8_weights},
                   {"activations", t.activations},
                   {"step transient", t.step_transient},
                   {"buffers", t.buffers}, {"workspace", t.workspace},
                   {"alloc backward", t.alloc_backward},
                   {"alloc step", t.alloc_step}, {"allocated", t.allocated},
                   {"main stream peak", t.main_peak},
                   {"stream pool", t.stream_pool},
                   {"cached", t.fragmentation},
                   {"reserved", t.reserved}, {"context", t.context},
                   {"nccl", t.nccl}, {"total", t.total},
                   {"seen reserved", t.seen_reserved},
                   {"seen device", t.seen_device}};
        printf("\n%s (stage %lld, %.4g parameters, expandable segments "
               "%s), GiB:\n", v[k].id, (long long)t.stage, t.params,
               v[k].set ? "on" : "off");
        for (size_t j = 0; j < sizeof row / sizeof row[0]; j++)
            printf("  %-16s %9.3f\n", row[j].name, row[j].b / 1073741824.0);
    }
    printf("\nper source and measured kind (MAPE %%; signed: mean of "
           "(ours - measured) / measured; worst: LOSO)\n");
    printf("%-28s %-21s %4s %9s %9s %9s %9s\n", "source", "kind", "runs",
           "in sample", "LOSO", "signed", "worst");
    double mean_in = 0, mean_loso = 0;
    int n_scored = 0;
    for (int s = 0; s < n_src; s++) {
        double a_in = 0, a_lo = 0, sg = 0, worst = 0;
        int cnt = 0;
        for (int kk = 0; kk <= K_COUNT; kk++) {
            double b_in = 0, b_lo = 0, bs = 0, bw = 0;
            int c = 0;
            for (int k = 0; k < n; k++) {
                const mrun *r = &v[k];
                if (!r->ok || r->src != s || (kk < K_COUNT && (int)r->k != kk))
                    continue;
                double el = 100 * (r->ours_loso - r->meas) / r->meas;
                b_in += ape(r, r->ours_in), b_lo += fabs(el);
                bs += 100 * (r->ours_in - r->meas) / r->meas;
                if (fabs(el) > fabs(bw)) bw = el;
                c++;
            }
            if (!c) continue;
            if (kk == K_COUNT) {
                a_in = b_in / c, a_lo = b_lo / c, sg = bs / c, worst = bw;
                cnt = c;
                continue;
            }
            printf("%-28.28s %-21s %4d %9.1f %9.1f %+9.1f %+9.1f\n", src_id[s],
                   kind_names[kk], c, b_in / c, b_lo / c, bs / c, bw);
        }
        if (!cnt) continue;
        printf("%-28.28s %-21s %4d %9.1f %9.1f %+9.1f %+9.1f\n", src_id[s],
               "all", cnt, a_in, a_lo, sg, worst);
        mean_in += a_in, mean_loso += a_lo, n_scored++;
    }
    if (n_scored)
        printf("mean over %d sources: %.1f %% in sample, %.1f %% LOSO\n",
               n_scored, mean_in / n_scored, mean_loso / n_scored);
    /* Per allocator setting: each source's reserved and nvidia-smi runs
     * of that setting. */
    printf("\nper allocator setting (max_memory_reserved and nvidia_smi "
           "runs; MAPE %%)\n");
    printf("%-28s %-11s %4s %9s %9s %9s %9s\n", "source", "expandable",
           "runs", "in sample", "LOSO", "signed", "worst");
    for (int s = 0; s < n_src; s++)
        for (int set = N_SET - 1; set >= 0; set--) {
            double b_in = 0, b_lo = 0, bs = 0, bw = 0;
            int c = 0;
            for (int k = 0; k < n; k++) {
                const mrun *r = &v[k];
                if (!r->ok || r->src != s || r->k == K_ALLOCATED
                    || r->set != set)
                    continue;
                double el = 100 * (r->ours_loso - r->meas) / r->meas;
                b_in += ape(r, r->ours_in), b_lo += fabs(el);
                bs += 100 * (r->ours_in - r->meas) / r->meas;
                if (fabs(el) > fabs(bw)) bw = el;
                c++;
            }
            if (c)
                printf("%-28.28s %-11s %4d %9.1f %9.1f %+9.1f %+9.1f\n",
                       src_id[s], set ? "on" : "off", c, b_in / c, b_lo / c,
                       bs / c, bw);
        }
    for (int set = 0; set < N_SET; set++)
        if (!is_fixed
            && fabs(f_in[set] - est_memory_cache_share(set)) > 1e-9)
            mismatch++;
    printf("\ncached share (cached, unused / the main stream's live tensors), "
           "in sample: with expandable segments %.4f (estimator: %.4f), "
           "without %.4f (estimator: %.4f)%s\n", f_in[1],
           est_memory_cache_share(1), f_in[0], est_memory_cache_share(0),
           is_fixed ? ", fixed by --frag" : "");
    for (int s = 0; s < n_src; s++) {
        int scored = 0;
        for (int k = 0; k < n; k++) scored += v[k].ok && v[k].src == s;
        if (scored)
            printf("  without %-28s with %.4f, without %.4f\n", src_id[s],
                   f_loso[s][1], f_loso[s][0]);
    }
    /* The margin the search adds (estimator/mem.c, est_memory_margin):
     * per framework, MARGIN_COVERAGE of its own runs' under-estimates of
     * what must fit, u = (measured - ours) / ours:
     *  - a max_memory_allocated figure measures the live tensors, so its
     *    shortfall is one of what must fit (est_memory.total: the live
     *    tensors of the larger moment, the CUDA context and NCCL's
     *    buffers, the quantity the search compares with the GPU), over
     *    that;
     *  - max_memory_reserved and nvidia-smi figures also hold the
     *    allocator's cache, which it frees before it fails: their
     *    shortfall, in their own quantity and LOSO, over-states what must
     *    fit, so a framework uses them only where it has fewer than
     *    MARGIN_MIN_RUNS allocated figures.
     * A framework with too few of either has no margin of its own: it
     * borrows the largest of those measured at the allocated level, at
     * most the largest margin that admits every run of it that ran
     * (bench/validate_fit --check holds that bound), and says so; here
     * its margin must not exceed the lender's. The 95th percentile is
     * printed beside the worst. */
    printf("\nmargin per framework: the worst of its own runs' "
           "under-estimates, (measured - ours) / ours, %% (max_memory_"
           "allocated: the shortfall over what must fit, the live tensors of "
           "the larger moment with the CUDA context and NCCL's buffers; "
           "reserved and nvidia-smi figures, LOSO in their own quantity, "
           "only for a framework with fewer than %d allocated figures; "
           "fewer than %d of either: the largest margin from allocated "
           "figures, at most what admits every run of it that ran)\n",
           MARGIN_MIN_RUNS, MARGIN_MIN_RUNS);
    printf("%-18s %-21s %4s %9s %9s %9s %9s %9s\n", "framework", "evidence",
           "runs", "median", "p95", "worst", "margin", "estimator");
    double *x = calloc((size_t)(n > 0 ? n : 1), sizeof *x);
    if (!x) abort();
    double mg[SPACE_FW_COUNT], largest = 0;
    int cnt[SPACE_FW_COUNT], use_k[SPACE_FW_COUNT];
    char row[SPACE_FW_COUNT][200];
    for (int f = 0; f < SPACE_FW_COUNT; f++) {
        int na = 0, no = 0;
        for (int k = 0; k < n; k++)
            if (v[k].ok && v[k].framework == f) {
                if (v[k].k == K_ALLOCATED) na++;
                else no++;
            }
        /* K_COUNT: the reserved and nvidia-smi figures together */
        use_k[f] = na >= MARGIN_MIN_RUNS ? K_ALLOCATED : K_COUNT;
        int c = 0;
        double w = -INFINITY;
        for (int k = 0; k < n; k++) {
            const mrun *r = &v[k];
            if (!r->ok || r->framework != f
                || (use_k[f] == K_ALLOCATED) != (r->k == K_ALLOCATED))
                continue;
            x[c] = r->k == K_ALLOCATED
                       ? (r->meas - r->mem.allocated) / r->mem.total
                       : (r->meas - r->ours_loso) / r->ours_loso;
            if (x[c] > w) w = x[c];
            c++;
        }
        cnt[f] = c >= MARGIN_MIN_RUNS ? c : 0;
        mg[f] = 0;
        char med[16] = "-", p95[16] = "-", wst[16] = "-";
        if (c) {
            double q = quantile(x, c, MARGIN_COVERAGE);
            snprintf(med, sizeof med, "%+.1f", 100 * quantile(x, c, 0.5));
            snprintf(p95, sizeof p95, "%+.1f", 100 * quantile(x, c, 0.95));
            snprintf(wst, sizeof wst, "%+.1f", 100 * w);
            /* rounded up to 0.1 %, as mem.c holds it; never below 0 */
            if (cnt[f]) mg[f] = ceil(1000 * fmax(q, 0) - 1e-9) / 1000;
        }
        /* lent only where it measures what must fit: a margin from
         * reserved or nvidia-smi figures holds the allocator's cache */
        if (cnt[f] && use_k[f] == K_ALLOCATED && mg[f] > largest)
            largest = mg[f];
        snprintf(row[f], sizeof row[f], "%-18s %-21s %4d %9s %9s %9s",
                 space_framework_names[f],
                 !c ? "-" : use_k[f] == K_ALLOCATED ? kind_names[K_ALLOCATED]
                                                    : "reserved, nvidia_smi",
                 c, med, p95, wst);
    }
    for (int f = 0; f < SPACE_FW_COUNT; f++) {
        if (!cnt[f]) mg[f] = largest; /* no margin of its own */
        space_layout l;
        memset(&l, 0, sizeof l);
        l.framework = f;
        double est = est_memory_margin(&l);
        /* a borrowed margin may be lowered to what ran (validate_fit) */
        if (cnt[f] ? fabs(est - mg[f]) > 1e-9 : est > mg[f] + 1e-9)
            mismatch++;
        printf("%s %+8.1f%s %+9.1f\n", row[f], 100 * mg[f],
               cnt[f] ? " " : "*", 100 * est);
    }
    printf("(*: too few measured peaks of its own: the largest margin of the "
           "frameworks measured at the allocated level, which the estimator "
           "may lower to what admits every run of it that ran: "
           "bench/validate_fit)\n");
    int skipped = 0;
    for (int k = 0; k < n; k++)
        if (v[k].skip) {
            if (!skipped++) printf("\nnot scored:\n");
            printf("  %s: %s\n", v[k].id, v[k].skip);
        }
    if (failed) printf("\n%d runs not estimated (see stderr)\n", failed);
    if (mismatch)
        printf("\nestimator/mem.c holds %d figure(s) other than these "
               "(EST_MEM_CACHE_EXPANDABLE, EST_MEM_CACHE_SEGMENTS, "
               "margin_of)\n", mismatch);
    free(x);
    for (int k = 0; k < n; k++) free(v[k].pp_store);
    free(v);
    hw_db_free(db);
    cJSON_Delete(root);
    if (check && mismatch) return 2;
    return failed ? 1 : 0;
}
