/*
 * validate_fit.c - "it ran" as evidence: every published run with a layout
 * ran on its hardware, so the peak memory the estimator gives it must fit
 * that GPU's memory. A one-sided check that needs no measured memory
 * figure: an estimate above the memory is wrong (or the run is not what
 * the file says); an estimate below it says nothing about how close.
 *
 * Reads the runs of bench/data/validation_runs.json, moe_validation_runs.json
 * and ran_runs.json (or the files given), each run's layout as
 * bench/runs.c reads it for bench/validate_runs; the fields a run leaves
 * unpublished are searched as validate_runs searches them (search_complete
 * at the estimator's own constants: the fastest layout that fits). Per run:
 * the estimated peak (est_memory.total of the busiest stage, what must
 * fit), the GPU's memory, whether it fits, and whether the search's rule
 * admits it (peak <= search_memory_limit: the memory over 1 + the margin
 * of the run's framework, est_memory_margin); with the largest term of the
 * peak. Per source: runs, how many fit, how many are admitted, the worst
 * ratio peak / memory; then every run the rule refuses. Everything comes
 * from the estimator's functions, so the report follows any change to the
 * margin or the memory model.
 *
 * What it does not do: fit anything, or compare with a measured memory
 * figure (bench/validate_memory does); runs a file marks `skip` are counted
 * under their reason, not checked.
 *
 * usage: validate_fit [--runs FILE]... [--csv] [--out FILE]
 * --runs (repeatable) replaces the three default files; --csv prints one
 * row per run instead of the report; --out writes the output to FILE
 * (through a temporary file beside it, renamed). Exit status 0 whatever
 * the runs show, 64 on bad usage, 65/66 on bad or missing input, 74 when
 * the output cannot be written.
 */
#include "runs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TRAINPLAN_SOURCE_DIR
#define TRAINPLAN_SOURCE_DIR "."
#endif

#define MAX_FILES 8
#define MAX_SRC 48
#define MAX_OPEN 48
#define MAX_WHY 40
#define GIB 1073741824.0

static const char *const default_files[] = {
    TRAINPLAN_SOURCE_DIR "/bench/data/validation_runs.json",
    TRAINPLAN_SOURCE_DIR "/bench/data/moe_validation_runs.json",
    TRAINPLAN_SOURCE_DIR "/bench/data/ran_runs.json",
};

/* The terms of a peak (est_memory), in the order the report names them. */
typedef enum term {
    T_WEIGHTS,
    T_GRADS,
    T_OPTIMIZER,
    T_FP8_WEIGHTS,
    T_ACTIVATIONS,
    T_STEP_TRANSIENT,
    T_BUFFERS,
    T_WORKSPACE,
    T_CONTEXT,
    T_NCCL,
    T_COUNT
} term;
static const char *const term_names[] = {
    "weights",   "grads",          "optimizer", "fp8_weights",
    "activations", "step_transient", "buffers",   "workspace",
    "context",   "nccl",
};
_Static_assert(sizeof term_names / sizeof term_names[0] == T_COUNT,
               "a name for every term");

typedef struct frun {
    const char *id, *file; /* into the cJSON tree; the file's base name */
    int src;
    int ok;                /* estimated */
    space_model m;
    space_layout want;
    int64_t gpus;
    const hw_system *sys;
    est_ctx c;
    est_result r;
    double mem_bytes, limit, ratio, margin;
    double terms[T_COUNT]; /* bytes at the peak's moment; 0: not in it */
    int largest;           /* a term */
    space_pp_layout *pp_store; /* its layout string's (bench_split_read) */
} frun;

typedef struct source {
    char id[64];
    char file[64];
    int runs, fits, admitted;
    int n_why;
    char why_of[MAX_WHY][120];
    int why_n[MAX_WHY];
} source;

static bench_opened cache[MAX_OPEN];
static int n_cache;
static source src_tab[MAX_SRC];
static int n_src;

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const bench_opened *open_system(const hw_system *y, tp_err *e)
{
    return bench_open_system(cache, &n_cache, MAX_OPEN, y, e);
}

static int source_of(const char *id, const char *file)
{
    for (int i = 0; i < n_src; i++)
        if (strcmp(src_tab[i].id, id) == 0) return i;
    if (n_src == MAX_SRC) return MAX_SRC - 1;
    source *x = &src_tab[n_src];
    memset(x, 0, sizeof *x);
    snprintf(x->id, sizeof x->id, "%s", id);
    snprintf(x->file, sizeof x->file, "%s", file);
    return n_src++;
}

/* Counts one unchecked run of s under its reason's head (the text before
 * the first " (", at most 119 bytes); reasons past MAX_WHY count under the
 * last. */
static void count_why(source *s, const char *what)
{
    char key[120];
    const char *paren = strstr(what, " (");
    size_t k = paren ? (size_t)(paren - what) : strlen(what);
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

/* The terms of r's peak at its moment (the backward's or the optimizer
 * step's live tensors, with the context and NCCL's buffers: they add up
 * to est_memory.total), and the largest. */
static void peak_terms(frun *r)
{
    const est_memory *x = &r->r.mem;
    int step = x->peak_in_step;
    int pp1 = r->r.layout.pp <= 1;
    double *t = r->terms;
    t[T_WEIGHTS] = x->weights;
    t[T_GRADS] = x->grads;
    t[T_OPTIMIZER] = x->optimizer;
    t[T_FP8_WEIGHTS] = x->fp8_weights;
    t[T_ACTIVATIONS] = step ? 0 : x->activations;
    t[T_STEP_TRANSIENT] = step ? x->step_transient : 0;
    /* DeepSpeed's bucket: in the backward without a pipeline, else in
     * the step (mem.c, stage_of) */
    t[T_BUFFERS] = (step ? !pp1 : pp1) ? x->buffers : 0;
    t[T_WORKSPACE] = x->workspace;
    t[T_CONTEXT] = x->context;
    t[T_NCCL] = x->nccl;
    r->largest = 0;
    for (int k = 1; k < T_COUNT; k++)
        if (t[k] > t[r->largest]) r->largest = k;
}

/* Reads and checks every run of one file into v[*n ...] (grown). */
static int read_file(const cJSON *root, const char *path, hw_db *db,
                     frun **v, int *n, int *cap, tp_err *e)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const cJSON *runs = get(root, "runs"), *run;
    if (!cJSON_IsArray(runs))
        return tp_errf(e, TP_EDATA, "%s: $.runs: expected an array", path);
    int i = -1;
    cJSON_ArrayForEach(run, runs) {
        i++;
        const cJSON *id = get(run, "id"), *sj = get(run, "source_id");
        if (!cJSON_IsString(id) || !cJSON_IsString(sj))
            return tp_errf(e, TP_EDATA,
                           "%s: $.runs[%d]: expected strings id and "
                           "source_id",
                           path, i);
        int s = source_of(sj->valuestring, base);
        source *x = &src_tab[s];
        const cJSON *skip = get(run, "skip");
        if (cJSON_IsString(skip)) {
            count_why(x, skip->valuestring);
            continue;
        }
        if (*n == *cap) {
            *cap = *cap ? 2 * *cap : 256;
            *v = realloc(*v, (size_t)*cap * sizeof **v);
            if (!*v) abort();
        }
        frun *r = &(*v)[*n];
        memset(r, 0, sizeof *r);
        r->id = id->valuestring;
        r->file = base;
        r->src = s;
        const cJSON *mj = get(run, "model");
        int rc = cJSON_IsString(mj)
                     ? space_model_resolve(mj->valuestring, &r->m, e)
                     : space_model_from_hf_json(mj, path, r->id, &r->m, e);
        if (!rc && (rc = bench_model_extras(run, path, i, &r->m, e)))
            return rc;
        const cJSON *yj = get(run, "system");
        const hw_system *y = NULL;
        if (!rc && !cJSON_IsString(yj)) {
            tp_errf(e, TP_EDATA, "%s: $.runs[%d].system: expected an hwdb "
                    "system name", path, i);
        } else if (!rc) {
            y = hw_find_system(db, yj->valuestring, e);
        }
        const bench_opened *op = y ? open_system(y, e) : NULL;
        if (!op) {
            count_why(x, "not read (model, system or GPU)");
            fprintf(stderr, "validate_fit: %s: %s\n", r->id, e->msg);
            memset(e, 0, sizeof *e);
            continue;
        }
        if ((rc = bench_layout_read(get(run, "layout"), x->id, path, i,
                                    &r->want, e))
            || (rc = bench_split_read(get(run, "layout"), &r->m, path, i,
                                      &r->want, &r->pp_store, e)))
            return rc;
        const cJSON *g = get(run, "gpus");
        if (!cJSON_IsNumber(g) || g->valuedouble < 1) {
            count_why(x, "no GPU count");
            free(r->pp_store);
            continue;
        }
        r->gpus = (int64_t)g->valuedouble;
        r->sys = y;
        est_ctx c = {y, y->gpu, op->ops, op->comm, 1, 0, NULL};
        r->c = c;
        r->ok = 1;
        (*n)++;
    }
    return 0;
}

/* Estimates run r as validate_runs does (its unset fields searched at
 * the estimator's constants) and checks its peak against the GPU's
 * memory and the search's limit. */
static void check(frun *r)
{
    search_complete(&r->c, &r->m, &r->want, r->gpus, &r->r, NULL, NULL);
    source *x = &src_tab[r->src];
    if (!r->r.feasible && r->r.reason != EST_OUT_OF_MEMORY) {
        char why[200];
        snprintf(why, sizeof why, "not estimated: %s",
                 est_reason_names[r->r.reason]);
        count_why(x, why);
        fprintf(stderr, "validate_fit: %s: %s %s\n", r->id,
                est_reason_names[r->r.reason], r->r.message);
        r->ok = 0;
        return;
    }
    search_request q;
    memset(&q, 0, sizeof q);
    search_system sy;
    memset(&sy, 0, sizeof sy);
    sy.ctx = r->c;
    r->mem_bytes = r->sys->gpu->mem_bytes;
    r->limit = search_memory_limit(&q, &sy, &r->r.layout);
    r->margin = est_memory_margin(&r->r.layout);
    r->ratio = r->r.mem.total / r->mem_bytes;
    peak_terms(r);
    x->runs++;
    x->fits += r->r.mem.total <= r->mem_bytes;
    x->admitted += r->r.mem.total <= r->limit;
}

static int admitted(const frun *r)
{
    return r->r.mem.total <= r->limit;
}

/* Per framework, the largest margin that admits every run of it that
 * fits (mem_bytes / peak - 1, rounded down to 0.1 % as mem.c holds it),
 * and how many runs bound it; INFINITY where none does. A framework
 * without measured peaks of its own borrows its margin
 * (est_memory_margin_borrowed), which must not exceed this: the runs that
 * ran are its only evidence. */
static void ran_bounds(const frun *v, int n, double *bound, int *cnt)
{
    for (int f = 0; f < SPACE_FW_COUNT; f++) bound[f] = INFINITY, cnt[f] = 0;
    for (int i = 0; i < n; i++) {
        const frun *r = &v[i];
        if (!r->ok || r->ratio > 1) continue;
        unsigned f = (unsigned)r->r.layout.framework;
        if (f >= SPACE_FW_COUNT) continue;
        double b = floor(1000 * (1 / r->ratio - 1) + 1e-9) / 1000;
        if (b < bound[f]) bound[f] = b;
        cnt[f]++;
    }
}

/* "tp4 pp8 vpp12 cp1 dp16 ep1 mbs1 sel z1 fp8", searched fields with '*'. */
static void layout_text(const frun *r, char *buf, size_t cap)
{
    const space_layout *u = &r->r.layout, *w = &r->want;
    snprintf(buf, cap,
             "tp%lld%s pp%lld%s vpp%lld%s cp%lld%s dp%lld%s "
             "mbs%lld%s %s%s z%d%s %s",
             (long long)u->tp, w->tp == SEARCH_UNSET ? "*" : "",
             (long long)u->pp, w->pp == SEARCH_UNSET ? "*" : "",
             (long long)u->vpp, w->vpp == SEARCH_UNSET ? "*" : "",
             (long long)u->cp, w->cp == SEARCH_UNSET ? "*" : "",
             (long long)u->dp, w->dp == SEARCH_UNSET ? "*" : "",
             (long long)u->mbs, w->mbs == SEARCH_UNSET ? "*" : "",
             space_recompute_names[u->recompute],
             (int)w->recompute == SEARCH_UNSET ? "*" : "", (int)u->zero,
             (int)w->zero == SEARCH_UNSET ? "*" : "",
             est_precision_name(u));
    if (r->m.num_experts > 0) {
        size_t k = strlen(buf);
        snprintf(buf + k, cap - k, " ep%lld%s etp%lld%s",
                 (long long)space_layout_ep(u),
                 w->ep == SEARCH_UNSET ? "*" : "",
                 (long long)space_layout_etp(u),
                 w->etp == SEARCH_UNSET ? "*" : "");
    }
}

static void print_csv(FILE *f, const frun *v, int n)
{
    fprintf(f, "id,source,file,system,gpu,gpus,framework,tp,pp,vpp,cp,dp,ep,"
               "etp,mbs,sp,recompute,zero,precision,peak_gib,memory_gib,"
               "ratio,margin,limit_gib,fits,admitted,moment,stage,"
               "largest_term");
    for (int k = 0; k < T_COUNT; k++) fprintf(f, ",%s_gib", term_names[k]);
    fprintf(f, "\n");
    for (int i = 0; i < n; i++) {
        const frun *r = &v[i];
        if (!r->ok) continue;
        const space_layout *u = &r->r.layout;
        fprintf(f,
                "%s,%s,%s,%s,%s,%lld,%s,%lld,%lld,%lld,%lld,%lld,%lld,%lld,"
                "%lld,%d,%s,%d,%s,%.3f,%.3f,%.4f,%.3f,%.3f,%d,%d,%s,%lld,%s",
                r->id, src_tab[r->src].id, r->file, r->sys->name,
                r->sys->gpu->name, (long long)r->gpus,
                space_framework_names[u->framework], (long long)u->tp,
                (long long)u->pp, (long long)u->vpp, (long long)u->cp,
                (long long)u->dp, (long long)space_layout_ep(u),
                (long long)space_layout_etp(u), (long long)u->mbs, u->sp,
                space_recompute_names[u->recompute], (int)u->zero,
                est_precision_name(u), r->r.mem.total / GIB,
                r->mem_bytes / GIB, r->ratio, r->margin, r->limit / GIB,
                r->r.mem.total <= r->mem_bytes, admitted(r),
                r->r.mem.peak_in_step ? "step" : "backward",
                (long long)r->r.mem.stage, term_names[r->largest]);
        for (int k = 0; k < T_COUNT; k++) fprintf(f, ",%.3f", r->terms[k] / GIB);
        fprintf(f, "\n");
    }
}

static void print_report(FILE *f, const frun *v, int n, char **files,
                         int n_files)
{
    fprintf(f,
            "# validate_fit: every run that ran must fit its GPU's memory\n\n"
            "Generated by `build/bench/validate_fit --out "
            "bench/results/validate_fit.md` (bench/validate_fit.c; "
            "`--csv` gives a row per run with every term of the peak). "
            "Each run of the files below ran on the hardware it names, so "
            "the peak the estimator gives its layout must fit that GPU's "
            "memory: a one-sided check that needs no measured memory "
            "figure. A run's layout is the one `bench/validate_runs` "
            "scores (bench/runs.c); fields the run leaves unpublished "
            "(marked `*`) are searched as validate_runs searches them "
            "(`search_complete` at the estimator's constants: the fastest "
            "layout the search would admit, else the fastest that fits, "
            "else the nearest miss; so a run with searched fields is "
            "refused only when no value of them is admitted). `fit`: estimated peak (`est_memory.total`, "
            "the busiest stage's) <= the GPU's memory; `admitted`: peak <= "
            "`search_memory_limit`, the memory over 1 + the margin of the "
            "run's framework (`est_memory_margin`), the rule `trainplan "
            "search` admits layouts by. `worst`: "
            "the largest peak / memory. Runs a file marks `skip` are not "
            "checked (counted by reason below).\n\nFiles:");
    for (int k = 0; k < n_files; k++) {
        const char *b = strrchr(files[k], '/');
        fprintf(f, "%s `%s`", k ? "," : "", b ? b + 1 : files[k]);
    }
    fprintf(f, ".\n\n");
    fprintf(f, "| source | file | runs | fit | admitted | worst peak / "
               "memory | worst run | not checked |\n"
               "|---|---|---:|---:|---:|---:|---|---:|\n");
    int tr = 0, tf = 0, ta = 0, tn = 0;
    double tw = 0;
    for (int s = 0; s < n_src; s++) {
        const source *x = &src_tab[s];
        int w = -1, nn = 0;
        for (int i = 0; i < n; i++)
            if (v[i].ok && v[i].src == s
                && (w < 0 || v[i].ratio > v[w].ratio))
                w = i;
        for (int k = 0; k < x->n_why; k++) nn += x->why_n[k];
        char wr[32] = "-";
        if (w >= 0) snprintf(wr, sizeof wr, "%.3f", v[w].ratio);
        fprintf(f, "| %s | %s | %d | %d | %d | %s | %s | %d |\n", x->id,
                x->file, x->runs, x->fits, x->admitted, wr,
                w >= 0 ? v[w].id : "-", nn);
        tr += x->runs, tf += x->fits, ta += x->admitted, tn += nn;
        if (w >= 0 && v[w].ratio > tw) tw = v[w].ratio;
    }
    fprintf(f, "| **all** | | %d | %d | %d | %.3f | | %d |\n\n", tr, tf, ta,
            tw, tn);
    double bound[SPACE_FW_COUNT];
    int bn[SPACE_FW_COUNT];
    ran_bounds(v, n, bound, bn);
    fprintf(f, "Margins now (`est_memory_margin` per framework), and the "
               "largest margin that admits every run of the framework that "
               "fits (`*`: borrowed, no measured peak of its own: it must "
               "not exceed that bound, `--check`):\n\n"
               "| framework | margin | runs | largest admitting all |\n"
               "|---|---:|---:|---:|\n");
    for (int fw = 0; fw < SPACE_FW_COUNT; fw++) {
        space_layout l;
        memset(&l, 0, sizeof l);
        l.framework = fw;
        char b[32] = "-";
        if (bn[fw]) snprintf(b, sizeof b, "%.3f", bound[fw]);
        fprintf(f, "| %s | %.3f%s | %d | %s |\n", space_framework_names[fw],
                est_memory_margin(&l), est_memory_margin_borrowed(&l) ? "*" : "",
                bn[fw], b);
    }
    fprintf(f, "\n## Runs the search's rule refuses\n\n"
               "Sorted by peak / memory, largest first. `needs`: the "
               "memory the rule asks for, peak x (1 + margin), over the "
               "GPU's. The terms add up to the peak at its moment "
               "(backward or optimizer step); `largest` names the biggest.\n\n"
               "| run | source | GPU | peak GiB | memory GiB | peak / "
               "memory | margin | needs | moment | largest term GiB | "
               "layout (searched *) |\n"
               "|---|---|---|---:|---:|---:|---:|---:|---|---|---|\n");
    /* the refused runs, worst first (ties: file order) */
    int *ord = malloc((size_t)n * sizeof *ord + 1), m = 0;
    if (!ord) abort();
    for (int i = 0; i < n; i++)
        if (v[i].ok && !admitted(&v[i])) ord[m++] = i;
    for (int a = 1; a < m; a++)
        for (int b = a; b > 0 && v[ord[b]].ratio > v[ord[b - 1]].ratio; b--) {
            int t = ord[b];
            ord[b] = ord[b - 1];
            ord[b - 1] = t;
        }
    for (int k = 0; k < m; k++) {
        const frun *r = &v[ord[k]];
        char lay[200];
        layout_text(r, lay, sizeof lay);
        fprintf(f,
                "| %s | %s | %s x %lld | %.2f | %.2f | %.3f | %.3f | %.3f | "
                "%s | %s %.2f | %s |\n",
                r->id, src_tab[r->src].id, r->sys->gpu->name,
                (long long)r->gpus, r->r.mem.total / GIB, r->mem_bytes / GIB,
                r->ratio, r->margin, r->ratio * (1 + r->margin),
                r->r.mem.peak_in_step ? "step" : "backward",
                term_names[r->largest], r->terms[r->largest] / GIB, lay);
    }
    if (!m) fprintf(f, "| none | | | | | | | | | | |\n");
    free(ord);
    fprintf(f, "\n## Runs not checked, per source and reason\n\n");
    for (int s = 0; s < n_src; s++) {
        const source *x = &src_tab[s];
        for (int k = 0; k < x->n_why; k++)
            fprintf(f, "- %s: %d %s\n", x->id, x->why_n[k], x->why_of[k]);
    }
}

int main(int argc, char **argv)
{
    char *files[MAX_FILES];
    int n_files = 0, csv = 0, chk = 0;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc
            && n_files < MAX_FILES)
            files[n_files++] = argv[++i];
        else if (strcmp(argv[i], "--csv") == 0)
            csv = 1;
        else if (strcmp(argv[i], "--check") == 0)
            chk = 1;
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out = argv[++i];
        else {
            fprintf(stderr, "usage: validate_fit [--runs FILE]... [--csv] "
                            "[--out FILE] [--check] (at most %d files)\n",
                    MAX_FILES);
            return TP_EUSAGE;
        }
    }
    if (!n_files)
        for (size_t k = 0; k < sizeof default_files / sizeof default_files[0];
             k++)
            files[n_files++] = (char *)default_files[k];
    tp_err e = {0};
    hw_db *db = hw_db_open(NULL, 0, &e);
    if (!db) {
        fprintf(stderr, "validate_fit: %s\n", e.msg);
        return e.status;
    }
    cJSON *roots[MAX_FILES] = {0};
    frun *v = NULL;
    int n = 0, cap = 0, rc = 0;
    for (int k = 0; k < n_files && !rc; k++) {
        rc = tp_json_load(files[k], &roots[k], &e);
        if (!rc) rc = read_file(roots[k], files[k], db, &v, &n, &cap, &e);
    }
    if (rc) {
        fprintf(stderr, "validate_fit: %s\n", e.msg);
        goto done;
    }
    for (int i = 0; i < n; i++) check(&v[i]);
    FILE *f = stdout;
    char tmp[4096];
    if (out) {
        snprintf(tmp, sizeof tmp, "%s.tmp", out);
        f = fopen(tmp, "w");
        if (!f) {
            fprintf(stderr, "validate_fit: %s: cannot write\n", tmp);
            rc = TP_EIO;
            goto done;
        }
    }
    if (csv)
        print_csv(f, v, n);
    else
        print_report(f, v, n, files, n_files);
    if (chk && !rc) {
        double bound[SPACE_FW_COUNT];
        int bn[SPACE_FW_COUNT];
        ran_bounds(v, n, bound, bn);
        for (int fw = 0; fw < SPACE_FW_COUNT; fw++) {
            space_layout l;
            memset(&l, 0, sizeof l);
            l.framework = fw;
            if (est_memory_margin_borrowed(&l)
                && est_memory_margin(&l) > bound[fw] + 1e-9) {
                fprintf(stderr, "validate_fit: %s borrows a margin of %.3f, "
                        "which refuses a run of it that ran (the largest "
                        "that admits them all: %.3f; estimator/mem.c "
                        "margin_of)\n", space_framework_names[fw],
                        est_memory_margin(&l), bound[fw]);
                rc = 2;
            }
        }
    }
    if (out) {
        int bad = ferror(f);
        bad |= fclose(f) != 0;
        if (bad || rename(tmp, out) != 0) {
            fprintf(stderr, "validate_fit: %s: cannot write\n", out);
            remove(tmp);
            rc = TP_EIO;
        }
    }
done:
    for (int k = 0; v && k < n; k++) free(v[k].pp_store);
    free(v);
    for (int k = 0; k < n_files; k++) cJSON_Delete(roots[k]);
    bench_close_systems(cache, n_cache);
    hw_db_free(db);
    return rc;
}
