/*
 * launch_torchtitan_read.c - a torchtitan config read back into the options
 * the command line would set (issue 18): main's Python config (a function
 * returning a Trainer.Config, derived from a shipped one or built whole,
 * plain assignments a line) or v0.2's TOML job config, the model by its
 * name and flavor (launch_tt_models), the layout, batch, precision and
 * switches, with the defaults of the shipped config it derives from
 * (tt_recipes) or torchtitan's own. The versions, their sources and the
 * writer are launch_torchtitan.c's.
 */
#include "launch.h"
#include "launch_int.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw.h"


/* What main's shipped configs set of the fields the reader reads
 * (torchtitan/models/llama3/config_registry.py @b5bcd76c66d0): the
 * defaults of a config derived from one. */
static const struct {
    const char *recipe;
    int64_t tokens_per_mb, context, tp;
    int full_ac, compile, async_tp, fp8_rowwise;
} tt_recipes[] = {
    {"llama3_8b", 8192, 8192, 1, 0, 0, 0, 0},
    {"llama3_70b", 8 * 8192, 8192, 8, 1, 0, 0, 0},
    {"llama3_405b", 2 * 8192, 8192, 8, 1, 1, 1, 1},
};
#define N_TT_RECIPES ((int)(sizeof tt_recipes / sizeof tt_recipes[0]))

/* ---- the reader ------------------------------------------------------ */

/* One assignment: its dotted key ("parallelism.tensor_parallel_degree";
 * main's whole-object ones: "activation_checkpoint", "model_spec",
 * "=recipe", "=models" for the module model_registry comes from), its
 * value's text and its line. Points into the reader's copy. */
typedef struct tt_kv {
    char key[128];
    const char *val;
    int line;
} tt_kv;

typedef struct tt_job {
    tt_kv *kv;
    int n, cap;
    const char *file;
    int main_;
    const char *fn; /* main: the config function read (NULL: the only one) */
} tt_job;

static void kv_add(tt_job *j, const char *key, const char *val, int line)
{
    if (j->n == j->cap) {
        j->cap = j->cap ? 2 * j->cap : 64;
        j->kv = tp_xrealloc(j->kv, (size_t)j->cap * sizeof *j->kv);
    }
    tp_strlcpy(j->kv[j->n].key, key, sizeof j->kv[j->n].key);
    j->kv[j->n].val = val;
    j->kv[j->n].line = line;
    j->n++;
}

/* The last assignment of key (a later one wins, as in Python). */
static const tt_kv *kv_get(const tt_job *j, const char *key)
{
    for (int i = j->n - 1; i >= 0; i--)
        if (strcmp(j->kv[i].key, key) == 0) return &j->kv[i];
    return NULL;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

/* Cuts a '#' comment outside quotes; returns the bracket depth change. */
static int cut_comment(char *s)
{
    char q = 0;
    int depth = 0;
    for (char *p = s; *p; p++) {
        if (q) {
            if (*p == '\\' && p[1]) p++;
            else if (*p == q) q = 0;
        } else if (*p == '"' || *p == '\'') {
            q = *p;
        } else if (*p == '#') {
            *p = '\0';
            break;
        } else if (*p == '[' || *p == '(') {
            depth++;
        } else if (*p == ']' || *p == ')') {
            depth--;
        }
    }
    return depth;
}

static int bad_line(const tt_job *j, int line, const char *what,
                    const char *text, tp_err *e)
{
    return tp_errf(e, TP_EDATA, "%s:%d: %s: '%.80s'", j->file, line, what,
                   text);
}

/* Splits buf (modified) into assignments. TOML: [section] headers and
 * key = value, arrays across lines. Python: the form the writer prints,
 * config.a.b = value, config = recipe(), imports. */
static int tt_parse(tt_job *j, char *buf, tp_err *e)
{
    char section[96] = "";
    int line = 0;
    char *p = buf;
    /* TOML: a table or key defined twice is invalid (TOML 1.0, "Tables"
     * and "Keys"); torchtitan v0.2's tomllib.load raises on it
     * (torchtitan/config/manager.py at 73a0e6979dd1) */
    tt_kv tables[64];
    int ntables = 0;
    int in_fn = 1; /* main: inside the function read, or top level */
    while (p && *p) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        line++;
        int at = line;
        char *s = p;
        p = nl ? nl + 1 : NULL;
        if (j->main_ && *s && !isspace((unsigned char)*s) && *s != '#'
            && *s != ')') {
            /* a line at column 0: a function's start, or top level */
            if (strncmp(s, "def ", 4) == 0) {
                const char *nm = s + 4;
                size_t k = strcspn(nm, "( :");
                in_fn = !j->fn || (strlen(j->fn) == k
                                   && strncmp(nm, j->fn, k) == 0);
            } else if (strncmp(s, "from ", 5) != 0
                       && strncmp(s, "import ", 7) != 0) {
                in_fn = 1; /* top-level statements are read */
            }
        }
        if (j->main_ && !in_fn && strncmp(s, "from ", 5) != 0
            && strncmp(s, "import ", 7) != 0)
            continue;
        int depth = cut_comment(s);
        /* a value that opens a bracket runs on to where it closes */
        while (depth > 0 && p && *p) {
            nl = strchr(p, '\n');
            if (nl) *nl = '\0';
            line++;
            char *more = p;
            p = nl ? nl + 1 : NULL;
            depth += cut_comment(more);
            size_t n = strlen(s);
            s[n] = ' '; /* join: more follows s in the buffer */
            memmove(s + n + 1, more, strlen(more) + 1);
        }
        if (depth != 0)
            return bad_line(j, at, "unbalanced brackets", s, e);
        s = trim(s);
        if (!*s) continue;
        if (j->main_) {
            if (strncmp(s, "from ", 5) == 0) {
                /* from torchtitan.models.NAME import model_registry */
                const char *pre = "from torchtitan.models.";
                char *imp = strstr(s, " import ");
                if (strncmp(s, pre, strlen(pre)) == 0 && imp
                    && strcmp(trim(imp + 8), "model_registry") == 0) {
                    *imp = '\0';
                    kv_add(j, "=models", s + strlen(pre), at);
                }
                continue;
            }
            if (strncmp(s, "import ", 7) == 0 || strncmp(s, "def ", 4) == 0
                || strcmp(s, "return config") == 0)
                continue;
            char *eq = strstr(s, " = ");
            if (!eq || strncmp(s, "config", 6) != 0)
                return bad_line(j, at, "expected config = BASE() or "
                                "config.SECTION.KEY = VALUE (the form "
                                "trainplan writes)", s, e);
            *eq = '\0';
            char *lhs = trim(s), *rhs = trim(eq + 3);
            if (strcmp(lhs, "config") == 0) {
                size_t n = strlen(rhs);
                if (n < 3 || strcmp(rhs + n - 2, "()") != 0)
                    return bad_line(j, at, "expected config = RECIPE()", rhs,
                                    e);
                rhs[n - 2] = '\0';
                kv_add(j, "=recipe", rhs, at);
            } else if (strcmp(lhs, "config.training") == 0
                       || strcmp(lhs, "config.parallelism") == 0
                       || strcmp(lhs, "config.compile") == 0) {
                /* a whole section would hide the fields read below */
                return bad_line(j, at, "expected its fields one by one, "
                                "config.SECTION.KEY = VALUE", lhs, e);
            } else if (strncmp(lhs, "config.", 7) == 0) {
                kv_add(j, lhs + 7, rhs, at);
            } else {
                return bad_line(j, at, "expected config.SECTION.KEY", lhs, e);
            }
            continue;
        }
        if (*s == '[') {
            size_t n = strlen(s);
            if (s[n - 1] != ']' || s[1] == '[')
                return bad_line(j, at, "expected a [section] header", s, e);
            s[n - 1] = '\0';
            tp_strlcpy(section, trim(s + 1), sizeof section);
            for (int t = 0; t < ntables; t++)
                if (strcmp(tables[t].key, section) == 0)
                    return tp_errf(e, TP_EDATA, "%s:%d: [%s] defined twice "
                                   "(line %d): TOML and torchtitan refuse "
                                   "the file", j->file, at, section,
                                   tables[t].line);
            if (ntables < 64) {
                tp_strlcpy(tables[ntables].key, section,
                           sizeof tables[ntables].key);
                tables[ntables++].line = at;
            }
            continue;
        }
        char *eq = strchr(s, '=');
        if (!eq) return bad_line(j, at, "expected key = value", s, e);
        *eq = '\0';
        char *k = trim(s), *v = trim(eq + 1);
        if (!*k || !*v) return bad_line(j, at, "expected key = value", k, e);
        char full[128];
        snprintf(full, sizeof full, "%s%s%s", section, *section ? "." : "", k);
        const tt_kv *twice = kv_get(j, full);
        if (twice)
            return tp_errf(e, TP_EDATA, "%s:%d: %s given twice (line %d): "
                           "TOML and torchtitan refuse the file", j->file,
                           at, full, twice->line);
        kv_add(j, full, v, at);
    }
    return TP_OK;
}

/* An integer value of key in [lo, hi], or dflt when absent. */
static int get_int(const tt_job *j, const char *key, long long lo,
                   long long hi, long long dflt, long long *out, tp_err *e)
{
    const tt_kv *kv = kv_get(j, key);
    *out = dflt;
    if (!kv) return TP_OK;
    char buf[64];
    size_t n = 0;
    for (const char *s = kv->val; *s && n + 1 < sizeof buf; s++)
        if (*s != '_') buf[n++] = *s; /* TOML's 1_000 */
    buf[n] = '\0';
    if (tp_parse_int(buf, lo, hi, out))
        return tp_errf(e, TP_EDATA,
                       "%s:%d: %s = %s: expected an integer in [%lld, %lld]",
                       j->file, kv->line, key, kv->val, lo, hi);
    return TP_OK;
}

/* A string value (quoted) of key into out, or dflt. */
static int get_str(const tt_job *j, const char *key, const char *dflt,
                   char *out, size_t cap, tp_err *e)
{
    const tt_kv *kv = kv_get(j, key);
    tp_strlcpy(out, dflt, cap);
    if (!kv) return TP_OK;
    const char *v = kv->val;
    size_t n = strlen(v);
    if (n < 2 || (v[0] != '"' && v[0] != '\'') || v[n - 1] != v[0]
        || n - 1 > cap)
        return tp_errf(e, TP_EDATA,
                       "%s:%d: %s = %s: expected a quoted string", j->file,
                       kv->line, key, v);
    memcpy(out, v + 1, n - 2);
    out[n - 2] = '\0';
    return TP_OK;
}

static int get_bool(const tt_job *j, const char *key, int dflt, int *out,
                    tp_err *e)
{
    const tt_kv *kv = kv_get(j, key);
    *out = dflt;
    if (!kv) return TP_OK;
    const char *t = j->main_ ? "True" : "true", *f = j->main_ ? "False"
                                                              : "false";
    if (strcmp(kv->val, t) == 0) *out = 1;
    else if (strcmp(kv->val, f) == 0) *out = 0;
    else
        return tp_errf(e, TP_EDATA, "%s:%d: %s = %s: expected %s or %s",
                       j->file, kv->line, key, kv->val, t, f);
    return TP_OK;
}

/* Inner lists of a list of lists (module_fqns_per_model_part). */
static int64_t count_inner(const char *v)
{
    int depth = 0;
    int64_t n = 0;
    char q = 0;
    for (; *v; v++) {
        if (q) {
            if (*v == q) q = 0;
        } else if (*v == '"' || *v == '\'') {
            q = *v;
        } else if (*v == '[') {
            if (++depth == 2) n++;
        } else if (*v == ']') {
            depth--;
        }
    }
    return n;
}

/* The "layers.N" names in each inner list of a list of lists
 * (module_fqns_per_model_part) into st[0..cap). */
static void layers_per_inner(const char *v, int64_t *st, int64_t cap)
{
    int depth = 0;
    int64_t k = -1;
    char q = 0;
    const char *start = NULL;
    for (; *v; v++) {
        if (q) {
            if (*v == q) {
                q = 0;
                if (k >= 0 && k < cap && v - start > 7
                    && strncmp(start, "layers.", 7) == 0)
                    st[k]++;
            }
        } else if (*v == '"' || *v == '\'') {
            q = *v;
            start = v + 1;
        } else if (*v == '[') {
            if (++depth == 2) k++;
        } else if (*v == ']') {
            depth--;
        }
    }
}

static int unmodelled(const tt_job *j, const char *key, const char *val,
                      const char *why, tp_err *e)
{
    const tt_kv *kv = kv_get(j, key);
    return tp_errf(e, TP_EDATA, "%s:%d: %s = %s: %s", j->file,
                   kv ? kv->line : 0, key, val, why);
}

/* The model: v0.2's [model] name and flavor, main's model_registry
 * module and flavor. */
static int read_model(const tt_job *j, space_model *m, tp_err *e)
{
    char name[64], flavor[64];
    const char *where_name, *where_flavor;
    int rc;
    if (j->main_) {
        const tt_kv *mod = kv_get(j, "=models");
        const tt_kv *ms = kv_get(j, "model_spec");
        tp_strlcpy(name, mod ? mod->val : "", sizeof name);
        flavor[0] = '\0';
        const char *q = ms ? strpbrk(ms->val, "\"'") : NULL;
        if (ms && strncmp(ms->val, "model_registry(", 15) == 0 && q) {
            const char *end = strchr(q + 1, *q);
            size_t n = end ? (size_t)(end - q - 1) : 0;
            if (n >= sizeof flavor) n = sizeof flavor - 1;
            memcpy(flavor, q + 1, n);
            flavor[n] = '\0';
        }
        const tt_kv *rec = kv_get(j, "=recipe");
        if (!ms && rec) /* the model of the shipped config derived from */
            for (int i = 0; i < LAUNCH_TT_MODEL_COUNT; i++)
                if (strcmp(rec->val, launch_tt_models[i].recipe) == 0) {
                    tp_strlcpy(name, launch_tt_models[i].name, sizeof name);
                    tp_strlcpy(flavor, launch_tt_models[i].flavor, sizeof flavor);
                    mod = rec;
                    break;
                }
        if (!mod || !flavor[0])
            return tp_errf(e, TP_EDATA,
                           "%s: config.model_spec: expected model_registry("
                           "\"FLAVOR\") of a model imported from "
                           "torchtitan.models.NAME (known: llama3 8B, 70B, "
                           "405B), found %s",
                           j->file, ms ? ms->val : "none");
        where_name = "torchtitan.models";
        where_flavor = "model_registry";
    } else {
        rc = get_str(j, "model.name", "llama3", name, sizeof name, e);
        if (!rc) rc = get_str(j, "model.flavor", "debugmodel", flavor,
                              sizeof flavor, e);
        if (rc) return rc;
        where_name = "model.name";
        where_flavor = "model.flavor";
        /* v0.2.2's 8B_flex and 8B_varlen: the same model, another
         * attention kernel (models/llama3/__init__.py) */
        char *u = strchr(flavor, '_');
        if (u && strcmp(name, "llama3") == 0) *u = '\0';
    }
    for (int i = 0; i < LAUNCH_TT_MODEL_COUNT; i++)
        if (strcmp(name, launch_tt_models[i].name) == 0
            && strcmp(flavor, launch_tt_models[i].flavor) == 0) {
            const space_model *p = space_preset_find(launch_tt_models[i].preset, e);
            if (!p) return TP_EINTERNAL;
            *m = *p;
            return space_model_validate(m, j->file, e);
        }
    return tp_errf(e, TP_EDATA,
                   "%s: %s = \"%s\", %s = \"%s\": not a model trainplan knows "
                   "(known: llama3 with flavor 8B, 70B or 405B)",
                   j->file, where_name, name, where_flavor, flavor);
}

/* main's config functions: their names, comma-separated, into list;
 * their count. */
static int tt_functions(const char *text, char *list, size_t cap)
{
    int n = 0;
    size_t used = 0;
    list[0] = '\0';
    for (const char *p = text; *p;) {
        if (strncmp(p, "def ", 4) == 0) {
            size_t k = strcspn(p + 4, "( :\n");
            if (used < cap)
                used += (size_t)snprintf(list + used, cap - used, "%s%.*s",
                                         n ? ", " : "", (int)k, p + 4);
            n++;
        }
        const char *nl = strchr(p, '\n');
        if (!nl) break;
        p = nl + 1;
    }
    return n;
}

int launch_read_torchtitan(const char *text, const char *file,
                           search_job *job, space_model *m, FILE *err,
                           tp_err *e)
{
    return launch_read_torchtitan_fn(text, file, NULL, job, m, err, e);
}

int launch_read_torchtitan_fn(const char *text, const char *file,
                              const char *fn, search_job *job,
                              space_model *m, FILE *err, tp_err *e)
{
    (void)err; /* no notes: every key read either counts or is refused */
    tt_job j = {NULL, 0, 0, file, 0, fn};
    size_t len = strlen(text);
    char *buf = tp_xmalloc(len + 1);
    memcpy(buf, text, len + 1);
    /* Python: the form main is written in (a function returning the
     * config); anything else is read as TOML. */
    j.main_ = strstr(text, "\ndef ") != NULL || strncmp(text, "def ", 4) == 0;
    int rc = TP_OK;
    /* torchtitan runs one config function, the one --config names
     * (torchtitan/config/manager.py at b5bcd76c66d0: --module/--config
     * load it from the module's config_registry): a file of several is
     * not one job; FILE:FUNCTION picks one */
    char fns[512] = "";
    int nfn = j.main_ ? tt_functions(text, fns, sizeof fns) : 0;
    if (fn && !j.main_)
        rc = tp_errf(e, TP_EDATA, "%s: ':%s' names a config function, but "
                     "the file is not a Python config", file, fn);
    char fn_want[160], fn_have[520];
    snprintf(fn_want, sizeof fn_want, ", %.150s,", fn ? fn : "");
    snprintf(fn_have, sizeof fn_have, ", %s,", fns);
    if (!rc && fn && !strstr(fn_have, fn_want))
        rc = tp_errf(e, TP_EDATA, "%s: no config function '%s' (the file "
                     "has %s)", file, fn, fns);
    else if (!rc && !fn && nfn > 1)
        rc = tp_errf(e, TP_EDATA, "%s: %d config functions (%s): torchtitan "
                     "runs one, as --config names it; pick one as "
                     "--torchtitan-config %s:NAME",
                     file, nfn, fns, file);
    if (!rc) rc = tt_parse(&j, buf, e);
    if (rc) goto done;
    /* defaults: the version's (job_config.py / configs.py), and for main
     * the shipped config it derives from */
    int ri = -1;
    if (j.main_) {
        const tt_kv *r = kv_get(&j, "=recipe");
        for (int i = 0; r && i < N_TT_RECIPES; i++)
            if (strcmp(r->val, tt_recipes[i].recipe) == 0) ri = i;
        if (ri < 0) {
            rc = tp_errf(e, TP_EDATA,
                         "%s:%d: config = %s(): expected one of torchtitan's "
                         "llama3_8b, llama3_70b, llama3_405b",
                         file, r ? r->line : 0, r ? r->val : "?");
            goto done;
        }
    }
    rc = read_model(&j, m, e);
    if (rc) goto done;
    long long rep, shard, tp, pp, cp, lps = 0, first_less, last_less;
    rc = get_int(&j, "parallelism.data_parallel_replicate_degree", 1, 65536, 1,
                 &rep, e);
    if (!rc) rc = get_int(&j, "parallelism.data_parallel_shard_degree", -1,
                          10000000, -1, &shard, e);
    if (!rc) rc = get_int(&j, "parallelism.tensor_parallel_degree", 1, 65536,
                          ri >= 0 ? tt_recipes[ri].tp : 1, &tp, e);
    if (!rc) rc = get_int(&j, "parallelism.pipeline_parallel_degree", 1,
                          65536, 1, &pp, e);
    if (!rc) rc = get_int(&j, "parallelism.context_parallel_degree", 1, 65536,
                          1, &cp, e);
    if (!rc) rc = get_int(&j, "parallelism.pipeline_parallel_first_stage_less_"
                          "layers", 0, 1000000, 1, &first_less, e);
    if (!rc) rc = get_int(&j, "parallelism.pipeline_parallel_last_stage_less_"
                          "layers", 0, 1000000, 1, &last_less, e);
    if (!rc && kv_get(&j, "parallelism.pipeline_parallel_layers_per_stage"))
        rc = get_int(&j, "parallelism.pipeline_parallel_layers_per_stage", 1,
                     1000000, 1, &lps, e);
    /* expert parallelism: the models this reader builds are dense ("No
     * effect for non-MoE models", configs.py), so only 1 means what it
     * says */
    long long tt_ep = 1;
    if (!rc) rc = get_int(&j, "parallelism.expert_parallel_degree", 1, 65536,
                          1, &tt_ep, e);
    if (!rc && tt_ep > 1 && m->num_experts <= 0) {
        char v[32];
        snprintf(v, sizeof v, "%lld", tt_ep);
        rc = unmodelled(&j, "parallelism.expert_parallel_degree", v,
                        "the model is dense; expected 1", e);
    }
    if (rc) goto done;
    if (shard == 0) {
        rc = unmodelled(&j, "parallelism.data_parallel_shard_degree", "0",
                        "expected -1 (the ranks left) or 1 and more", e);
        goto done;
    }
    if (rep > 1 && shard > 1) {
        rc = tp_errf(e, TP_EDATA,
                     "%s: data_parallel_replicate_degree %lld with "
                     "data_parallel_shard_degree %lld: HSDP is not modelled "
                     "(give one of them 1)",
                     file, rep, shard);
        goto done;
    }
    if (!j.main_ && rep > 1 && shard == 1 && tp * pp * cp > 1) {
        rc = tp_errf(e, TP_EDATA,
                     "%s: data_parallel_replicate_degree %lld beside TP %lld, "
                     "PP %lld, CP %lld: v0.2 replicates without sharding "
                     "only as DDP, alone (models/llama3/infra/parallelize.py)",
                     file, rep, tp, pp, cp);
        goto done;
    }
    /* GPUs: the degrees' product where the shard degree is given, else
     * what -g says (the ranks left to it, ParallelDims._validate) */
    int64_t fixed = rep * tp * pp * cp, gpus = job->gpus > 0 ? job->gpus : 0;
    if (shard > 0) {
        int64_t g = fixed * shard;
        if (gpus > 0 && gpus != g) {
            rc = tp_errf(e, TP_EUSAGE,
                         "%s: its degrees make %lld GPUs (replicate %lld x "
                         "shard %lld x TP %lld x PP %lld x CP %lld), --gpus "
                         "says %lld",
                         file, (long long)g, rep, shard, tp, pp, cp,
                         (long long)gpus);
            goto done;
        }
        gpus = g;
    } else if (gpus > 0 && gpus % fixed) {
        rc = tp_errf(e, TP_EUSAGE,
                     "%s: --gpus %lld is not a multiple of replicate %lld x "
                     "TP %lld x PP %lld x CP %lld (data_parallel_shard_degree "
                     "= -1 takes the ranks left)",
                     file, (long long)gpus, rep, tp, pp, cp);
        goto done;
    }
    int64_t dp = gpus > 0 ? gpus / (tp * pp * cp) : 0; /* 0: unknown */

    /* the pipeline's stages (pipeline_llm) */
    char sched[64];
    rc = get_str(&j, "parallelism.pipeline_parallel_schedule", "1F1B", sched,
                 sizeof sched, e);
    if (rc) goto done;
    int64_t vstages = 1;
    if (pp > 1) {
        /* PyTorch's schedules trainplan times (tt_schedule_name); GPipe,
         * LoopedBFS and InterleavedGPipe it does not */
        static const struct { const char *name; int sched; } tts[] = {
            {"1F1B", SPACE_PP_1F1B},
            {"Interleaved1F1B", SPACE_PP_1F1B},
            {"InterleavedZeroBubble", SPACE_PP_ZB1P},
            {"ZBVZeroBubble", SPACE_PP_ZBV},
            {"DualPipeV", SPACE_PP_DUALPIPEV},
        };
        int known = -1;
        for (int k = 0; k < (int)(sizeof tts / sizeof tts[0]); k++)
            if (strcmp(sched, tts[k].name) == 0) known = k;
        int single = known == 0;
        if (known < 0) {
            rc = unmodelled(&j, "parallelism.pipeline_parallel_schedule",
                            sched, "trainplan times 1F1B, Interleaved1F1B, "
                            "InterleavedZeroBubble, ZBVZeroBubble and "
                            "DualPipeV",
                            e);
            goto done;
        }
        job->pp_schedule = tts[known].sched;
        const tt_kv *fq = kv_get(&j, "parallelism.module_fqns_per_model_part");
        int64_t stages = fq && strcmp(fq->val, "None") != 0
                             ? count_inner(fq->val)
                         : lps > 0 ? (m->num_layers + first_less + last_less
                                      + lps - 1) / lps
                                   : pp * (single ? 1 : 2);
        int vsched = job->pp_schedule == SPACE_PP_ZBV
                     || job->pp_schedule == SPACE_PP_DUALPIPEV;
        if (stages % pp || (single && stages != pp)
            || (!single && stages < 2 * pp) || (vsched && stages != 2 * pp)) {
            rc = tp_errf(e, TP_EDATA,
                         "%s: %lld pipeline stages on PP %lld under %s: "
                         "torchtitan needs a multiple of PP, one a rank for "
                         "1F1B, two or more for the looped schedules, "
                         "exactly two for ZBVZeroBubble and DualPipeV",
                         file, (long long)stages, pp, sched);
            goto done;
        }
        vstages = stages / pp;
        /* The layers of each stage: the module lists', or torchtitan's
         * own split (_generate_llm_fqn_per_model_part: the embedding and
         * the output weigh first_less and last_less layers; the stages
         * take (L + both) / stages, the first ones one more of what is
         * left, each up to the layers not yet placed), as the estimate's
         * split (space_split_from_stages). */
        int64_t *st = tp_xcalloc((size_t)stages, sizeof *st);
        if (fq && strcmp(fq->val, "None") != 0) {
            layers_per_inner(fq->val, st, stages);
        } else {
            long long eff = m->num_layers + first_less + last_less;
            long long per = eff / stages, extra = eff % stages, placed = 0;
            for (int64_t k = 0; k < stages; k++) {
                long long want = per + (k < extra)
                                 - (k == 0 ? first_less : 0)
                                 - (k == stages - 1 ? last_less : 0);
                if (want < 0) want = 0;
                if (want > m->num_layers - placed)
                    want = m->num_layers - placed;
                st[k] = want;
                placed += want;
            }
        }
        space_layout sl = {0};
        if (space_split_from_stages(m->num_layers, m->mtp_layers, pp, st,
                                    (int)stages, &sl, &job->pp_layout_store)) {
            rc = tp_errf(e, TP_EDATA,
                         "%s: the %lld pipeline stages do not hold the %lld "
                         "layers once each",
                         file, (long long)stages, (long long)m->num_layers);
            free(st);
            goto done;
        }
        free(st);
        job->split_set = 1;
        job->pp_account = sl.pp_account;
        job->pp_first = sl.pp_first;
        job->pp_last = sl.pp_last;
        job->pp_layout = sl.pp_layout;
    }

    /* the batch */
    long long mbs, gbs, seq, micro = 1;
    if (j.main_) {
        long long tok, step;
        rc = get_int(&j, "training.max_context_length", 1, 16777216,
                     tt_recipes[ri].context, &seq, e);
        if (!rc) rc = get_int(&j, "training.num_tokens_per_microbatch_per_dp_"
                              "rank", 1, 1LL << 40,
                              tt_recipes[ri].tokens_per_mb, &tok, e);
        if (!rc) rc = get_int(&j, "training.num_tokens_per_train_step", -1,
                              1LL << 50, -1, &step, e);
        if (!rc && pp > 1)
            rc = get_int(&j, "parallelism.num_pp_microbatches", 1, 1000000, 1,
                         &micro, e);
        if (rc) goto done;
        if (tok % seq) {
            rc = tp_errf(e, TP_EDATA,
                         "%s: num_tokens_per_microbatch_per_dp_rank %lld is "
                         "not a whole number of max_context_length %lld "
                         "sequences",
                         file, tok, seq);
            goto done;
        }
        mbs = tok / seq;
        if (step > 0 && step % seq) {
            rc = tp_errf(e, TP_EDATA,
                         "%s: num_tokens_per_train_step %lld is not a whole "
                         "number of max_context_length %lld sequences",
                         file, step, seq);
            goto done;
        }
        gbs = step > 0 ? step / seq : 0;
    } else {
        long long local, pmbs = 1, glob;
        rc = get_int(&j, "training.seq_len", 1, 16777216, 2048, &seq, e);
        if (!rc) rc = get_int(&j, "training.local_batch_size", 1, 100000000,
                              8, &local, e);
        if (!rc) rc = get_int(&j, "training.global_batch_size", -1, 100000000,
                              -1, &glob, e);
        if (!rc && pp > 1)
            rc = get_int(&j, "parallelism.pipeline_parallel_microbatch_size",
                         1, 1000000, 1, &pmbs, e);
        if (rc) goto done;
        if (pp > 1 && local % pmbs) {
            rc = tp_errf(e, TP_EDATA,
                         "%s: local_batch_size %lld is not a multiple of "
                         "pipeline_parallel_microbatch_size %lld "
                         "(pipeline_parallel.py, build_pipeline_schedule)",
                         file, local, pmbs);
            goto done;
        }
        mbs = pp > 1 ? pmbs : local;
        micro = pp > 1 ? local / pmbs : 1;
        gbs = glob > 0 ? glob : 0;
    }
    if (gbs == 0) {
        if (dp == 0) {
            rc = tp_errf(e, TP_EUSAGE,
                         "%s: the global batch follows the data-parallel "
                         "degree, which data_parallel_shard_degree = -1 "
                         "leaves to the GPUs: give -g/--gpus",
                         file);
            goto done;
        }
        gbs = mbs * micro * dp;
    }
    /* trainplan times one pipeline flush an iteration: under PP every
     * micro-batch of a step in one pass */
    if (pp > 1 && dp > 0 && gbs != mbs * micro * dp) {
        rc = tp_errf(e, TP_EDATA,
                     "%s: global batch %lld is %lld pipeline passes of %lld "
                     "micro-batches of %lld on DP %lld: gradient "
                     "accumulation across pipeline passes is not modelled",
                     file, gbs, gbs / (mbs * micro * dp), micro, mbs,
                     (long long)dp);
        goto done;
    }

    /* precision, compile, AC */
    char mp[32], dtype[32];
    rc = get_str(&j, "training.mixed_precision_param", "bfloat16", mp,
                 sizeof mp, e);
    if (!rc) rc = get_str(&j, "training.dtype", "float32", dtype,
                          sizeof dtype, e);
    if (rc) goto done;
    if (strcmp(mp, "bfloat16") != 0) {
        rc = unmodelled(&j, "training.mixed_precision_param", mp,
                        "trainplan models bfloat16 mixed precision", e);
        goto done;
    }
    if (strcmp(dtype, "float32") != 0) {
        rc = unmodelled(&j, "training.dtype", dtype,
                        "trainplan models fp32 parameters with bf16 compute "
                        "(float32)", e);
        goto done;
    }
    /* FSDP2's CPUOffloadPolicy (training.enable_cpu_offload;
     * torchtitan/distributed/fsdp.py): not Megatron-Core's offloads, which
     * are what trainplan models */
    int cpu_off = 0;
    rc = get_bool(&j, "training.enable_cpu_offload", 0, &cpu_off, e);
    if (rc) goto done;
    if (cpu_off) {
        rc = unmodelled(&j, "training.enable_cpu_offload", "true",
                        "FSDP2's CPU offload (CPUOffloadPolicy: parameters, "
                        "gradients and optimizer states on the host, the "
                        "step there) is not modelled; trainplan models "
                        "Megatron-Core's optimizer and activation offloading",
                        e);
        goto done;
    }
    int compile, async_tp, sp = 1;
    rc = get_bool(&j, "compile.enable", ri >= 0 && tt_recipes[ri].compile,
                  &compile, e);
    if (!rc) rc = get_bool(&j, j.main_ ? "compile.enable_async_tensor_parallel"
                                       : "parallelism.enable_async_tensor_"
                                         "parallel",
                           ri >= 0 && tt_recipes[ri].async_tp, &async_tp, e);
    if (!rc && j.main_)
        rc = get_bool(&j, "parallelism.enable_sequence_parallel", 1, &sp, e);
    if (rc) goto done;
    const tt_kv *comp = kv_get(&j, "compile.components");
    if (comp && !strstr(comp->val, "\"model\"") && !strstr(comp->val, "'model'"))
        compile = 0;
    if (async_tp && !compile) {
        rc = unmodelled(&j, "compile.enable", "false",
                        "async TP needs compile.enable and \"model\" in "
                        "compile.components", e);
        goto done;
    }
    int recompute;
    if (j.main_) {
        const tt_kv *ac = kv_get(&j, "activation_checkpoint");
        const char *v = ac ? ac->val
                           : tt_recipes[ri].full_ac ? "FullAC.Config()"
                                                    : "SelectiveAC.Config()";
        if (strcmp(v, "None") == 0) recompute = SPACE_RECOMPUTE_NONE;
        else if (strcmp(v, "FullAC.Config()") == 0)
            recompute = SPACE_RECOMPUTE_FULL;
        else if (strcmp(v, "SelectiveAC.Config()") == 0)
            recompute = SPACE_RECOMPUTE_SELECTIVE_OP;
        else {
            rc = tp_errf(e, TP_EDATA,
                         "%s:%d: activation_checkpoint = %s: expected None, "
                         "FullAC.Config() or SelectiveAC.Config()",
                         file, ac ? ac->line : 0, v);
            goto done;
        }
    } else {
        char mode[32], opt[32];
        rc = get_str(&j, "activation_checkpoint.mode", "selective", mode,
                     sizeof mode, e);
        if (!rc) rc = get_str(&j, "activation_checkpoint.selective_ac_option",
                              "2", opt, sizeof opt, e);
        if (rc) goto done;
        if (strcmp(mode, "none") == 0) recompute = SPACE_RECOMPUTE_NONE;
        else if (strcmp(mode, "full") == 0) recompute = SPACE_RECOMPUTE_FULL;
        else if (strcmp(mode, "selective") == 0 && strcmp(opt, "op") == 0)
            recompute = SPACE_RECOMPUTE_SELECTIVE_OP;
        else if (strcmp(mode, "selective") == 0 && strcmp(opt, "1") == 0)
            recompute = SPACE_RECOMPUTE_FULL; /* every layer */
        else {
            rc = strcmp(mode, "selective") == 0
                     ? unmodelled(&j, "activation_checkpoint.selective_ac_"
                                  "option", opt,
                                  "full checkpointing of every n-th layer "
                                  "is not modelled (expected \"op\" or "
                                  "\"1\"; the default is \"2\")", e)
                     : unmodelled(&j, "activation_checkpoint.mode", mode,
                                  "expected none, full or selective", e);
            goto done;
        }
    }
    /* fp8: v0.2's converter list, main's converter in model_registry */
    int fp8 = 0, fp8_recipe = SPACE_FP8_TENSORWISE;
    if (j.main_) {
        const tt_kv *ms = kv_get(&j, "model_spec");
        const char *spec = ms ? ms->val : "";
        const char *f = strstr(spec, "Float8LinearConverter.Config(");
        if (!ms && tt_recipes[ri].fp8_rowwise) {
            fp8 = 1; /* llama3_405b's own converter */
            fp8_recipe = SPACE_FP8_ROWWISE;
        }
        if (strstr(spec, "converters") && !f) {
            rc = unmodelled(&j, "model_spec", spec,
                            "the converters trainplan models: "
                            "Float8LinearConverter", e);
            goto done;
        }
        if (f) {
            fp8 = 1;
            fp8_recipe = SPACE_FP8_ROWWISE; /* main's default */
            const char *r = strstr(f, "recipe_name=");
            if (r && strncmp(r + 12, "\"rowwise\"", 9) != 0) {
                rc = unmodelled(&j, "model_spec", r,
                                "trainplan models the rowwise recipe", e);
                goto done;
            }
        }
    } else {
        const tt_kv *cv = kv_get(&j, "model.converters");
        if (cv && strstr(cv->val, "\"quantize.linear.float8\"")) {
            fp8 = 1;
            char rn[32];
            rc = get_str(&j, "quantize.linear.float8.recipe_name", "tensorwise",
                         rn, sizeof rn, e);
            if (rc) goto done;
            if (strcmp(rn, "rowwise") == 0) fp8_recipe = SPACE_FP8_ROWWISE;
            else if (strcmp(rn, "tensorwise") != 0) {
                rc = unmodelled(&j, "quantize.linear.float8.recipe_name", rn,
                                "expected tensorwise or rowwise", e);
                goto done;
            }
        } else if (cv && strcmp(cv->val, "[]") != 0) {
            rc = unmodelled(&j, "model.converters", cv->val,
                            "expected [\"quantize.linear.float8\"] (v0.2 "
                            "registers float8 under that name, "
                            "components/quantization/float8.py; \"float8\" "
                            "is v0.1's and a KeyError in v0.2's "
                            "protocols/model_converter.py)", e);
            goto done;
        }
    }
    char rot[32];
    rc = get_str(&j, "parallelism.context_parallel_rotate_method", "allgather",
                 rot, sizeof rot, e);
    if (rc) goto done;
    if (strcmp(rot, "allgather") != 0 && strcmp(rot, "alltoall") != 0) {
        rc = unmodelled(&j, "parallelism.context_parallel_rotate_method", rot,
                        "expected allgather or alltoall", e);
        goto done;
    }

    /* what the command line would set */
    job->framework = SPACE_FW_TORCHTITAN;
    job->tp = tp;
    job->tp_set = 1;
    job->pp = pp;
    job->cp = cp;
    job->vstages = vstages;
    job->mbs = mbs;
    job->gbs = gbs;
    job->seq_length = seq;
    job->sp = tp > 1 ? sp : 0;
    job->recompute = recompute;
    job->zero = rep > 1 ? SPACE_ZERO_NONE : SPACE_ZERO_3;
    job->precision = fp8 ? HW_FP8 : HW_BF16;
    if (fp8) {
        job->fp8_recipe = fp8_recipe;
        job->sw_set |= SEARCH_SW_FP8;
    }
    job->eager = !compile;
    job->sw_set |= SEARCH_SW_EAGER;
    job->tp_overlap = async_tp ? SPACE_TP_OVERLAP_ASYNC
                             : SPACE_TP_OVERLAP_DTENSOR;
    job->sw_set |= SEARCH_SW_TP;
    job->cp_comm = strcmp(rot, "alltoall") == 0 ? SPACE_CP_P2P
                                               : SPACE_CP_ALLGATHER;
    job->sw_set |= SEARCH_SW_CP;
    if (gpus > 0) job->gpus = gpus;
    rc = TP_OK;
done:
    free(j.kv);
    free(buf);
    return rc;
}
