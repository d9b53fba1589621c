/*
 * sweep_spec.c - the spec of `trainplan sweep`: lists of models, systems,
 * GPU counts, sequence lengths, global batch sizes, precisions, token
 * budgets and prices, and the search options every scenario shares. Each
 * problem is reported with its JSON path, all of them at once; nothing
 * runs on a bad spec.
 *
 * Not here: running the scenarios (sweep_run.c). A scenario is a job
 * and a search_ask (sweep_case), so `sweep` sets up its search exactly
 * as `search` does (search_setup_open).
 */
#define _POSIX_C_SOURCE 200809L /* PATH_MAX, stat */
#include "sweep.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *const sweep_dim_keys[SWEEP_DIM_COUNT] = {
    "models", "systems", "gpus", "seq_lengths", "global_batch_sizes",
    "precisions", "tokens", "prices"};
_Static_assert(sizeof sweep_dim_keys / sizeof sweep_dim_keys[0] == SWEEP_DIM_COUNT,
               "sweep_dim_keys mirrors sweep_dim");

const char *const sweep_record_names[SWEEP_RECORD_COUNT] = {"compact", "full"};
_Static_assert(sizeof sweep_record_names / sizeof sweep_record_names[0]
                   == SWEEP_RECORD_COUNT,
               "sweep_record_names mirrors sweep_record_form");

uint64_t sweep_fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* ---- the report: every problem, one a line --------------------------- */

typedef struct report {
    char *buf;
    size_t len, cap;
    int n;
} report;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void problem(report *r, const char *fmt, ...)
{
    char line[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t n = strlen(line);
    if (r->len + n + 2 > r->cap) {
        r->cap = 2 * (r->len + n + 2) + 256;
        r->buf = tp_xrealloc(r->buf, r->cap);
    }
    memcpy(r->buf + r->len, line, n);
    r->len += n;
    r->buf[r->len++] = '\n';
    r->buf[r->len] = '\0';
    r->n++;
}

/* ---- the shared options ("options": {...}) ---------------------------- */

/* How a key of "options" is read and where in a sweep_case it goes. */
typedef enum opt_kind {
    K_INT,       /* int field, integer in [lo, hi] */
    K_I64,       /* int64_t field, integer in [lo, hi] */
    K_NUM,       /* double field, number in [lo, hi] */
    K_STR,       /* const char * field (the spec keeps the string) */
    K_BOOL,      /* int field, true or false */
    K_OBJECTIVE, /* int field, one of search_objective_names */
    K_FRAMEWORK, /* int field, one of space_framework_names */
    K_DISPATCHER /* int field, one of space_moe_dispatcher_names */
} opt_kind;

typedef struct spec_option {
    const char *key;
    opt_kind kind;
    size_t offset;   /* in sweep_case */
    double lo, hi;
    const char *help;
} spec_option;

#define AT(f) offsetof(sweep_case, ask.f)
#define JOB(f) offsetof(sweep_case, job.f)
static const spec_option spec_options[] = {
    {"objective", K_OBJECTIVE, AT(objective), 0, 0,
     "time, throughput, time-to-train or cost"},
    {"top", K_INT, AT(top_k), 1, 1000, "layouts in the ranked list"},
    {"framework", K_FRAMEWORK, JOB(framework), 0, 0,
     "megatron-core, megatron-lm-2021, torchtitan, pytorch-fsdp or "
     "deepspeed-2021 (as --framework)"},
    {"fix", K_STR, AT(fix), 0, 0, "K=V,... as --fix"},
    {"min_gpus", K_I64, AT(min_gpus), 1, 1e7, "as --min-gpus"},
    {"max_gpus", K_I64, AT(max_gpus), 1, 1e7, "as --max-gpus"},
    {"budget_usd", K_NUM, AT(budget_usd), 1e-9, 1e15,
     "as --budget-usd (needs tokens)"},
    {"budget_gpu_hours", K_NUM, AT(budget_gpu_hours), 1e-9, 1e15,
     "as --budget-gpu-hours (needs tokens)"},
    {"deadline_s", K_NUM, AT(deadline_s), 1e-9, 3.2e9,
     "as --deadline, in seconds (needs tokens)"},
    {"max_memory_fraction", K_NUM, AT(max_mem_fraction), 1e-9, 1,
     "as --max-memory-fraction"},
    {"no_prune", K_BOOL, AT(no_prune), 0, 0, "as --no-prune"},
    {"keep_bad", K_BOOL, AT(keep_bad), 0, 0, "as --keep-bad"},
    /* MoE: the ranges of --ep, --etp and --moe-imbalance (lib/run.c);
     * what depends on the model (EP dividing the experts, the imbalance
     * at most experts / top-k) is checked per scenario (search_job_check_moe). */
    {"ep", K_I64, JOB(ep), 1, 1000000, "as --ep: expert-parallel size"},
    {"etp", K_I64, JOB(etp), 1, 1024, "as --etp: expert tensor-parallel size"},
    {"moe_dispatcher", K_DISPATCHER, JOB(moe_dispatcher), 0, 0,
     "alltoall, allgather or flex (as --moe-dispatcher)"},
    {"moe_imbalance", K_NUM, JOB(moe_imbalance), 1, 1e6,
     "as --moe-imbalance: the busiest expert's tokens over the mean, 1 is "
     "perfect balance"},
};
#undef AT
#define N_SPEC_OPTIONS ((int)(sizeof spec_options / sizeof spec_options[0]))

/* Checks v against row so and stores it into o; 0 when v does not fit. */
static int apply_option(sweep_case *o, const spec_option *so, const cJSON *v)
{
    char *f = (char *)o + so->offset;
    double x = cJSON_IsNumber(v) ? v->valuedouble : 0;
    int ok = 0;
    switch (so->kind) {
    case K_INT:
    case K_I64:
        ok = cJSON_IsNumber(v) && x == floor(x) && x >= so->lo && x <= so->hi;
        if (ok && so->kind == K_INT) *(int *)(void *)f = (int)x;
        if (ok && so->kind == K_I64) *(int64_t *)(void *)f = (int64_t)x;
        break;
    case K_NUM:
        ok = cJSON_IsNumber(v) && x >= so->lo && x <= so->hi;
        if (ok) *(double *)(void *)f = x;
        break;
    case K_STR:
        ok = cJSON_IsString(v);
        if (ok) *(const char **)(void *)f = v->valuestring;
        break;
    case K_BOOL:
        ok = cJSON_IsBool(v);
        if (ok) *(int *)(void *)f = cJSON_IsTrue(v);
        break;
    case K_OBJECTIVE:
        for (int i = 0; cJSON_IsString(v) && i < SEARCH_OBJECTIVE_COUNT; i++)
            if (tp_streq_ci(v->valuestring, search_objective_names[i])) {
                *(int *)(void *)f = i;
                ok = 1;
            }
        break;
    case K_FRAMEWORK:
        for (int i = 0; cJSON_IsString(v) && i < SPACE_FW_COUNT; i++)
            if (tp_streq_ci(v->valuestring, space_framework_names[i])) {
                *(int *)(void *)f = i;
                ok = 1;
            }
        break;
    case K_DISPATCHER:
        for (int i = 0; cJSON_IsString(v) && i < SPACE_MOE_DISPATCHER_COUNT; i++)
            if (tp_streq_ci(v->valuestring, space_moe_dispatcher_names[i])) {
                *(int *)(void *)f = i;
                ok = 1;
            }
        break;
    }
    return ok;
}

/* ---- the lists --------------------------------------------------------- */

static int is_int_in(const cJSON *v, double lo, double hi)
{
    return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble)
           && v->valuedouble >= lo && v->valuedouble <= hi;
}

/* The file or directory a spec names (a model's config.json, an hwdb
 * directory): a relative path from the spec's folder (dir, "" for the
 * working directory), or from the working directory where it is only
 * there (a spec written before paths were the spec's); malloc'd. */
static char *spec_file(const char *dir, const char *name)
{
    struct stat st;
    if (name[0] == '/' || !dir[0]) return tp_xstrdup(name);
    size_t n = strlen(dir) + strlen(name) + 1;
    char *p = tp_xmalloc(n);
    snprintf(p, n, "%s%s", dir, name);
    if (stat(p, &st) != 0 && stat(name, &st) == 0) {
        free(p);
        return tp_xstrdup(name);
    }
    return p;
}

/* The spec's folder, with its '/', or "" (the working directory). */
static void spec_dir(const char *path, char *dir, size_t cap)
{
    tp_strlcpy(dir, path, cap);
    char *slash = strrchr(dir, '/');
    if (slash) slash[1] = '\0';
    else dir[0] = '\0';
}

int sweep_spec_hwdb(const char *path, const char *text, size_t len,
                    char **dirs, int cap)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "hwdb");
    char dir[PATH_MAX];
    spec_dir(path, dir, sizeof dir);
    int n = 0;
    const cJSON *v;
    if (cJSON_IsArray(a))
        cJSON_ArrayForEach(v, a) {
            if (n == cap) break;
            struct stat st;
            if (!cJSON_IsString(v) || !v->valuestring[0]) continue;
            char *d = spec_file(dir, v->valuestring);
            if (stat(d, &st) == 0 && S_ISDIR(st.st_mode)) dirs[n++] = d;
            else free(d); /* check_hwdb says so */
        }
    cJSON_Delete(root);
    return n;
}

/* Checks entry v of list d (at path) and returns its canonical text, or
 * NULL after reporting the problem. */
static char *entry_text(sweep_dim d, const cJSON *v, const char *path,
                        const hw_db *db, const char *dir, report *r)
{
    char found[64], buf[1024];
    tp_json_describe(v, found, sizeof found);
    tp_err e = {0};
    switch (d) {
    case SWEEP_MODELS: {
        if (!cJSON_IsString(v) || !v->valuestring[0]) {
            problem(r, "%s: expected a model preset name or a config.json "
                       "path, found %s", path, found);
            return NULL;
        }
        space_model m;
        char *file = space_model_is_path(v->valuestring)
                         ? spec_file(dir, v->valuestring)
                         : tp_xstrdup(v->valuestring);
        int bad = space_model_resolve(file, &m, &e);
        free(file);
        if (bad) {
            problem(r, "%s: %s (%s)", path, e.msg,
                    space_model_is_path(v->valuestring)
                        ? "a relative path is read from the spec's folder"
                        : "see trainplan model list");
            return NULL;
        }
        return tp_xstrdup(v->valuestring);
    }
    case SWEEP_SYSTEMS: {
        if (!cJSON_IsString(v) || !v->valuestring[0]) {
            problem(r, "%s: expected a system name (or a comma list of "
                       "them), found %s", path, found);
            return NULL;
        }
        char *list = tp_xstrdup(v->valuestring); /* whole, never cut */
        int ok = 1;
        for (char *t = list, *c; t; t = c) {
            c = strchr(t, ',');
            if (c) *c++ = '\0';
            if (!hw_find_system(db, t, &e)) {
                problem(r, "%s: %s (see trainplan hw list)", path, e.msg);
                ok = 0;
            }
        }
        free(list);
        return ok ? tp_xstrdup(v->valuestring) : NULL;
    }
    case SWEEP_GPUS:
        if (is_int_in(v, 1, 1e7)) {
            snprintf(buf, sizeof buf, "%.0f", v->valuedouble);
            return tp_xstrdup(buf);
        }
        if (cJSON_IsString(v) && v->valuestring[0]
            && strspn(v->valuestring, "0123456789,-:") == strlen(v->valuestring))
            return tp_xstrdup(v->valuestring);
        problem(r, "%s: expected a GPU count in [1, 10000000] or a --gpus "
                   "list such as \"64,128\" or \"64-512:64\", found %s",
                path, found);
        return NULL;
    case SWEEP_SEQ:
    case SWEEP_GBS: {
        double hi = d == SWEEP_SEQ ? 16777216 : 100000000;
        if (!is_int_in(v, 1, hi)) {
            problem(r, "%s: expected an integer in [1, %.0f], found %s", path,
                    hi, found);
            return NULL;
        }
        snprintf(buf, sizeof buf, "%.0f", v->valuedouble);
        return tp_xstrdup(buf);
    }
    case SWEEP_PRECISIONS: {
        /* --precision's names (lib/run.c), kept as given in lower case
         * so that mxfp8 and fp8 are distinct scenarios */
        static const char *const names[] = {"bf16", "fp16", "fp8", "mxfp8",
                                            "nvfp4"};
        for (size_t i = 0; cJSON_IsString(v) && i < sizeof names / sizeof *names; i++)
            if (tp_streq_ci(v->valuestring, names[i]))
                return tp_xstrdup(names[i]);
        problem(r, "%s: expected bf16, fp16, fp8, mxfp8 or nvfp4, found %s",
                path, found);
        return NULL;
    }
    case SWEEP_TOKENS:
    case SWEEP_PRICES: {
        if (cJSON_IsNull(v)) return tp_xstrdup(""); /* unset: the default */
        double hi = d == SWEEP_TOKENS ? 1e18 : 1e6;
        if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || v->valuedouble > hi) {
            problem(r, "%s: expected a number in (0, %g] or null, found %s",
                    path, hi, found);
            return NULL;
        }
        snprintf(buf, sizeof buf, "%.17g", v->valuedouble);
        return tp_xstrdup(buf);
    }
    default:
        return NULL;
    }
}

void sweep_spec_free(sweep_spec *s)
{
    if (!s) return;
    if (s->model_path)
        for (int i = 0; i < s->n[SWEEP_MODELS]; i++) free(s->model_path[i]);
    free(s->model_path);
    for (int d = 0; d < SWEEP_DIM_COUNT; d++) {
        for (int i = 0; i < s->n[d]; i++) free(s->val[d][i]);
        free(s->val[d]);
    }
    /* base.ask.fix points into options_json's copy: see sweep_spec_parse. */
    free((char *)s->base.ask.fix);
    memset(s, 0, sizeof *s);
}

typedef struct member {
    const char *key;
    int at; /* its place in the object */
} member;

static int cmp_member(const void *a, const void *b)
{
    const member *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : x->at - y->at;
}

/* Every key that is in an object twice, with its JSON path (at), each
 * once, in key order within an object (sorted: O(n log n) however large
 * the object): cJSON reads the first value, other readers the last, so
 * the spec is refused, but the rest is still checked. *shown counts the
 * lines, at most 20. */
static void duplicate_keys(const cJSON *v, const char *at, report *r,
                           int *shown)
{
    int n = 0;
    for (const cJSON *c = v->child; c; c = c->next) n++;
    if (cJSON_IsObject(v) && n > 1) {
        member *k = tp_xmalloc((size_t)n * sizeof *k);
        int i = 0;
        for (const cJSON *c = v->child; c; c = c->next, i++)
            k[i] = (member){c->string, i};
        qsort(k, (size_t)n, sizeof *k, cmp_member);
        for (i = 1; i < n; i++) {
            if (strcmp(k[i - 1].key, k[i].key)
                || (i > 1 && !strcmp(k[i - 2].key, k[i].key)))
                continue; /* not a repeat, or one already said */
            if (++*shown > 20) {
                if (*shown == 21)
                    problem(r, "...: and more keys given twice");
                break;
            }
            problem(r, "%s: key \"%.64s\" appears twice; keep one (JSON "
                       "readers disagree on which value wins)",
                    at, k[i].key);
        }
        free(k);
    }
    int i = 0;
    for (const cJSON *c = v->child; c; c = c->next, i++) {
        if (!cJSON_IsObject(c) && !cJSON_IsArray(c)) continue;
        char p[256];
        if (cJSON_IsObject(v))
            snprintf(p, sizeof p, "%s.%.64s", at, c->string);
        else
            snprintf(p, sizeof p, "%s[%d]", at, i);
        duplicate_keys(c, p, r, shown);
    }
}

/* The "hwdb" key: 1 to SWEEP_MAX_HWDB - taken directories (the command
 * line's take the rest), each one that exists. */
static void check_hwdb(const cJSON *a, const char *dir, int taken, report *r)
{
    char found[64];
    int cap = SWEEP_MAX_HWDB - taken;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1
        || cJSON_GetArraySize(a) > cap) {
        tp_json_describe(a, found, sizeof found);
        problem(r, "$.hwdb: expected a list of 1 to %d hardware database "
                   "directories (as --hwdb DIR; %d given on the command "
                   "line), found %s", cap, taken, found);
        return;
    }
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, a) {
        struct stat st;
        if (!cJSON_IsString(v) || !v->valuestring[0]) {
            tp_json_describe(v, found, sizeof found);
            problem(r, "$.hwdb[%d]: expected a directory name, found %s", i,
                    found);
        } else {
            char *d = spec_file(dir, v->valuestring);
            if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode))
                problem(r, "$.hwdb[%d]: %s: %s (a relative path is read from "
                           "the spec's folder)", i, d,
                        stat(d, &st) != 0 ? "no such directory"
                                          : "not a directory");
            free(d);
        }
        i++;
    }
}

int sweep_spec_parse(const char *path, const char *text, size_t len,
                     const sweep_case *base, int n_hwdb, const hw_db *db,
                     search_cache *cache, const char *before,
                     sweep_spec *s, char **rep, tp_err *e)
{
    memset(s, 0, sizeof *s);
    *rep = NULL;
    cJSON *root = NULL;
    report r = {0};
    if (before && before[0]) problem(&r, "%s", before);
    int rc = tp_json_parse(path, text, len, &root, e);
    if (rc) {
        /* A key twice is one problem among the others (duplicate_keys);
         * what is not JSON at all is the only one. */
        const char *end = NULL;
        root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
        while (root && end < text + len && (*end == ' ' || *end == '\t'
                                            || *end == '\n' || *end == '\r'))
            end++;
        if (!root || end != text + len) {
            cJSON_Delete(root);
            free(r.buf);
            return rc;
        }
        e->msg[0] = '\0';
        e->status = 0;
        int shown = 0;
        duplicate_keys(root, "$", &r, &shown);
    }
    char p[128], found[64];
    /* the spec's folder: its relative paths are read from there */
    char dir[PATH_MAX];
    spec_dir(path, dir, sizeof dir);
    if (!cJSON_IsObject(root)) {
        tp_json_describe(root, found, sizeof found);
        problem(&r, "$: expected an object with models, systems, gpus, "
                    "seq_lengths and global_batch_sizes, found %s", found);
        goto out;
    }
    for (const cJSON *c = root->child; c; c = c->next) {
        int known = !strcmp(c->string, "options") || !strcmp(c->string, "comment")
                    || !strcmp(c->string, "hwdb") || !strcmp(c->string, "record")
                    || !strcmp(c->string, "launch");
        for (int d = 0; d < SWEEP_DIM_COUNT; d++)
            if (!strcmp(c->string, sweep_dim_keys[d])) known = 1;
        if (!known)
            problem(&r, "$.%s: unknown key (expected models, systems, gpus, "
                        "seq_lengths, global_batch_sizes, precisions, tokens, "
                        "prices, options, record, launch, hwdb or comment)",
                    c->string);
    }
    /* "record": what each record's search holds (sweep_record_names):
     * compact when absent, the figures a dashboard reads in 7 KB where
     * the full search is 18 (bench/sweep_speed's spec, no launches) */
    s->record = SWEEP_RECORD_COMPACT;
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(root, "record");
    if (rec) {
        int k = -1;
        for (int i = 0; i < SWEEP_RECORD_COUNT && cJSON_IsString(rec); i++)
            if (!strcmp(rec->valuestring, sweep_record_names[i])) k = i;
        if (k < 0) {
            tp_json_describe(rec, found, sizeof found);
            problem(&r, "$.record: expected \"compact\" (the default) or "
                        "\"full\", found %s", found);
        } else {
            s->record = (sweep_record_form)k;
        }
    }
    /* "launch": the launch forms each record's rows carry, as --launch
     * names them; none when absent (a record is then a fifth of the
     * bytes: the launches are what `search --launch` or `trainplan
     * estimate` with the layout writes for the one run) */
    s->launch = EMIT_LAUNCH_NONE;
    const cJSON *la = cJSON_GetObjectItemCaseSensitive(root, "launch");
    if (la) {
        int k = -1;
        for (int i = 0; i < EMIT_LAUNCH_SHOW_COUNT && cJSON_IsString(la); i++)
            if (!strcmp(la->valuestring, emit_launch_show_names[i])) k = i;
        if (k < 0) {
            tp_json_describe(la, found, sizeof found);
            problem(&r, "$.launch: expected \"none\" (the default), "
                        "\"megatron\", \"nemo\", \"torchtitan\" or \"all\", "
                        "found %s", found);
        } else {
            s->launch = k;
        }
    }
    const cJSON *hw = cJSON_GetObjectItemCaseSensitive(root, "hwdb");
    if (hw) check_hwdb(hw, dir, n_hwdb, &r);
    s->count = 1;
    for (int d = 0; d < SWEEP_DIM_COUNT; d++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, sweep_dim_keys[d]);
        int required = d <= SWEEP_GBS;
        if (!a && !required) { /* one unset value: the default */
            s->n[d] = 1;
            s->val[d] = tp_xcalloc(1, sizeof *s->val[d]);
            s->val[d][0] = tp_xstrdup(d == SWEEP_PRECISIONS ? "bf16" : "");
            continue;
        }
        if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1
            || cJSON_GetArraySize(a) > SWEEP_MAX_VALUES) {
            if (!a)
                problem(&r, "$.%s: missing required list", sweep_dim_keys[d]);
            else {
                tp_json_describe(a, found, sizeof found);
                problem(&r, "$.%s: expected a list of 1 to %d values, found %s",
                        sweep_dim_keys[d], SWEEP_MAX_VALUES, found);
            }
            s->count = 0;
            continue;
        }
        int n = cJSON_GetArraySize(a);
        s->val[d] = tp_xcalloc((size_t)n, sizeof *s->val[d]);
        int i = 0;
        for (const cJSON *v = a->child; v; v = v->next, i++) {
            snprintf(p, sizeof p, "$.%s[%d]", sweep_dim_keys[d], i);
            char *t = entry_text((sweep_dim)d, v, p, db, dir, &r);
            if (!t) continue;
            for (int j = 0; j < s->n[d]; j++)
                if (!strcmp(s->val[d][j], t)) {
                    problem(&r, "%s: \"%s\" is already %s[%d]", p, t,
                            sweep_dim_keys[d], j);
                    break;
                }
            s->val[d][s->n[d]++] = t;
        }
        if (s->count > 0 && s->count * n > SWEEP_MAX_SCENARIOS) {
            problem(&r, "$.%s: more than %d scenarios in all", sweep_dim_keys[d],
                    SWEEP_MAX_SCENARIOS);
            s->count = 0;
        }
        s->count *= n;
    }

    s->base = *base;
    s->base.form.launch_forms = emit_launch_forms(s->launch);
    const cJSON *opts = cJSON_GetObjectItemCaseSensitive(root, "options");
    if (opts && !cJSON_IsObject(opts)) {
        tp_json_describe(opts, found, sizeof found);
        problem(&r, "$.options: expected an object, found %s", found);
    } else if (opts) {
        char *t = cJSON_PrintUnformatted(opts);
        if (strlen(t) >= sizeof s->options_json)
            problem(&r, "$.options: longer than %zu bytes",
                    sizeof s->options_json - 1);
        else
            tp_strlcpy(s->options_json, t, sizeof s->options_json);
        cJSON_free(t);
        for (const cJSON *c = opts->child; c; c = c->next) {
            const spec_option *so = NULL;
            for (int i = 0; i < N_SPEC_OPTIONS; i++)
                if (!strcmp(c->string, spec_options[i].key)) so = &spec_options[i];
            snprintf(p, sizeof p, "$.options.%s", c->string);
            if (!so) {
                problem(&r, "%s: unknown option (expected objective, top, "
                            "framework, fix, min_gpus, max_gpus, budget_usd, "
                            "budget_gpu_hours, deadline_s, "
                            "max_memory_fraction, no_prune, keep_bad, ep, "
                            "etp, moe_dispatcher or moe_imbalance)", p);
                continue;
            }
            tp_json_describe(c, found, sizeof found);
            if (apply_option(&s->base, so, c)) continue;
            if (so->kind == K_INT || so->kind == K_I64 || so->kind == K_NUM)
                problem(&r, "%s: expected %s in [%g, %g] (%s), found %s", p,
                        so->kind == K_NUM ? "a number" : "an integer", so->lo,
                        so->hi, so->help, found);
            else
                problem(&r, "%s: expected %s (%s), found %s", p,
                        so->kind == K_BOOL ? "true or false"
                        : so->kind == K_OBJECTIVE || so->kind == K_FRAMEWORK
                                  || so->kind == K_DISPATCHER
                            ? "one of"
                            : "a string",
                        so->help, found);
        }
    }
    /* The tree goes; keep a copy of the one string a scenario points at. */
    if (s->base.ask.fix) s->base.ask.fix = tp_xstrdup(s->base.ask.fix);
    s->model_path = tp_xcalloc((size_t)s->n[SWEEP_MODELS] + 1,
                               sizeof *s->model_path);
    for (int i = 0; i < s->n[SWEEP_MODELS]; i++)
        if (space_model_is_path(s->val[SWEEP_MODELS][i]))
            s->model_path[i] = spec_file(dir, s->val[SWEEP_MODELS][i]);

    /* What one entry cannot show: each scenario set up as `search` would
     * (GPU list syntax, --fix against the model, fp8 on a GPU without it,
     * budgets without tokens). One line per distinct problem. */
    /* With bad entries, the scenarios of the good ones (every problem at
     * once); none where a list or the options are wrong as a whole. */
    int64_t good = 1;
    for (int d = 0; d < SWEEP_DIM_COUNT; d++) good *= s->n[d];
    if (s->count > 0 && good > 0) {
        int64_t all = s->count;
        s->count = good; /* sweep_scenario over the good entries */
        char last[1024] = "";
        int shown = 0;
        for (int64_t k = 0; k < s->count; k++) {
            sweep_case so;
            sweep_scenario(s, k, &so);
            search_setup cs;
            tp_err se = {0};
            if (search_setup_open(&so.job, &so.ask, db, cache, &cs, &se) == TP_OK) {
                search_setup_close(&cs);
                continue;
            }
            if (!strcmp(last, se.msg)) continue;
            tp_strlcpy(last, se.msg, sizeof last);
            if (++shown > 20) {
                problem(&r, "...: and more scenarios that cannot be set up");
                break;
            }
            if (good == all)
                problem(&r, "scenario %lld (%s on %s, gpus %s): %s",
                        (long long)k, so.job.model, so.ask.systems, so.ask.gpus, se.msg);
            else /* numbered in the spec once its entries are right */
                problem(&r, "a scenario (%s on %s, gpus %s): %s", so.job.model,
                        so.ask.systems, so.ask.gpus, se.msg);
        }
        s->count = all;
    }
    if (!(s->count > 0 && good > 0) && r.n) {
        problem(&r, "(what `search` would refuse of each scenario is checked "
                    "once every list is a list of good entries: fix the "
                    "above, and run again to see the rest)");
        r.n--; /* said, not counted: the count is of problems found */
    }
out:
    cJSON_Delete(root);
    if (r.n) {
        *rep = r.buf;
        sweep_spec_free(s);
        return tp_errf(e, TP_EDATA, "%s: %d problem%s in the sweep spec", path,
                       r.n, r.n == 1 ? "" : "s");
    }
    free(r.buf);
    return TP_OK;
}

/* The index of scenario k in list d. */
static int pick(const sweep_spec *s, int64_t k, int d)
{
    int64_t stride = 1;
    for (int j = d + 1; j < SWEEP_DIM_COUNT; j++) stride *= s->n[j];
    return (int)((k / stride) % s->n[d]);
}

void sweep_scenario(const sweep_spec *s, int64_t k, sweep_case *o)
{
    *o = s->base;
    int mi = pick(s, k, SWEEP_MODELS);
    o->job.model = s->model_path && s->model_path[mi] ? s->model_path[mi]
                                                  : s->val[SWEEP_MODELS][mi];
    o->ask.systems = s->val[SWEEP_SYSTEMS][pick(s, k, SWEEP_SYSTEMS)];
    o->ask.gpus = s->val[SWEEP_GPUS][pick(s, k, SWEEP_GPUS)];
    o->job.seq_length = strtoll(s->val[SWEEP_SEQ][pick(s, k, SWEEP_SEQ)], NULL, 10);
    o->job.gbs = strtoll(s->val[SWEEP_GBS][pick(s, k, SWEEP_GBS)], NULL, 10);
    const char *prec = s->val[SWEEP_PRECISIONS][pick(s, k, SWEEP_PRECISIONS)];
    if (!strcmp(prec, "mxfp8")) { /* as --precision mxfp8 */
        o->job.precision = HW_FP8;
        o->job.fp8_recipe = SPACE_FP8_MXFP8;
        o->job.sw_set |= SEARCH_SW_FP8;
    } else if (!strcmp(prec, "nvfp4")) {
        o->job.precision = HW_FP4;
    } else {
        o->job.precision = hw_dtype_parse(prec);
    }
    const char *t = s->val[SWEEP_TOKENS][pick(s, k, SWEEP_TOKENS)];
    o->job.tokens = t[0] ? strtod(t, NULL) : 0;
    const char *pr = s->val[SWEEP_PRICES][pick(s, k, SWEEP_PRICES)];
    o->ask.price = pr[0] ? strtod(pr, NULL) : 0;
}

void sweep_scenario_id(const sweep_spec *s, int64_t k, char id[17])
{
    uint64_t h = SWEEP_FNV_BASIS;
    for (int d = 0; d < SWEEP_DIM_COUNT; d++) {
        const char *v = s->val[d][pick(s, k, d)];
        h = sweep_fnv1a(h, sweep_dim_keys[d], strlen(sweep_dim_keys[d]));
        h = sweep_fnv1a(h, "=", 1);
        h = sweep_fnv1a(h, v, strlen(v) + 1); /* with its NUL: a separator */
    }
    h = sweep_fnv1a(h, s->options_json, strlen(s->options_json));
    snprintf(id, 17, "%016llx", (unsigned long long)h);
}

int64_t sweep_shard_size(int64_t count, int i, int n)
{
    return count > i ? (count - i + n - 1) / n : 0;
}

int64_t sweep_shard_at(int64_t j, int i, int n) { return j * n + i; }
