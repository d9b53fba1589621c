/*
 * hw_parse.c - parses one GPU or system JSON file (docs/hwdb.md) into an
 * hw_gpu or hw_system struct, converting the files' datasheet units to
 * SI, and checks a system against its GPU.
 *
 * Every number is a sourced object {"value", "source", "note"}; the
 * fields of each kind are rows of one table (gpu_fields, system_fields),
 * which drives parsing, range checks, unit conversion and `hw show`.
 * Parsing never stops at the first problem, so `hw check` can list all.
 *
 * Not here: finding, merging and loading the files into a database
 * (hw_load.c); time models. Measured-data entries are listed and their
 * files checked for existence; the estimator reads them.
 */
#define _POSIX_C_SOURCE 200809L /* PATH_MAX, stat */
#include "hw_int.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* ---- field tables ---------------------------------------------------- */

typedef struct field_spec {
    const char *key;       /* dotted path from the file's top level */
    const char *file_unit; /* unit the file writes */
    const char *si_unit;   /* unit after conversion */
    double scale;          /* file unit -> SI */
    double lo, hi;         /* valid range, file units */
    int required;
    int is_int;            /* stored as int, else double */
    size_t offset;         /* into the struct */
} field_spec;

#define TFLOPS 1e12
#define GIB 1073741824.0
#define MIB 1048576.0
#define GBPS 1e9
#define GBITPS 1.25e8
#define US 1e-6
#define DTYPE_OFF(d) (offsetof(hw_gpu, peak_flops) + (d) * sizeof(double))

static const field_spec gpu_fields[] = {
    {"peak_tflops.fp32", "TFLOP/s", "FLOP/s", TFLOPS, 0.001, 1e5, 1, 0, DTYPE_OFF(HW_FP32)},
    {"peak_tflops.tf32", "TFLOP/s", "FLOP/s", TFLOPS, 0, 1e5, 0, 0, DTYPE_OFF(HW_TF32)},
    {"peak_tflops.fp16", "TFLOP/s", "FLOP/s", TFLOPS, 0.001, 1e5, 1, 0, DTYPE_OFF(HW_FP16)},
    {"peak_tflops.bf16", "TFLOP/s", "FLOP/s", TFLOPS, 0.001, 1e5, 1, 0, DTYPE_OFF(HW_BF16)},
    {"peak_tflops.fp8", "TFLOP/s", "FLOP/s", TFLOPS, 0, 1e5, 0, 0, DTYPE_OFF(HW_FP8)},
    {"peak_tflops.fp4", "TFLOP/s", "FLOP/s", TFLOPS, 0, 1e5, 0, 0, DTYPE_OFF(HW_FP4)},
    {"memory_gib", "GiB", "bytes", GIB, 1, 4096, 1, 0, offsetof(hw_gpu, mem_bytes)},
    {"memory_bw_gb_per_s", "GB/s", "bytes/s", GBPS, 10, 1e5, 1, 0, offsetof(hw_gpu, mem_bw_bytes_per_s)},
    {"sm_count", "", "", 1, 1, 10000, 1, 1, offsetof(hw_gpu, sm_count)},
    {"boost_clock_mhz", "MHz", "Hz", 1e6, 100, 10000, 1, 0, offsetof(hw_gpu, clock_hz)},
    {"l2_mib", "MiB", "bytes", MIB, 0, 4096, 0, 0, offsetof(hw_gpu, l2_bytes)},
    {"scaleup_bw_gb_per_s", "GB/s", "bytes/s", GBPS, 0, 1e5, 1, 0, offsetof(hw_gpu, scaleup_bw_bytes_per_s)},
    {"power_w", "W", "W", 1, 10, 10000, 1, 0, offsetof(hw_gpu, power_w)},
    {"kernel_efficiency_factor", "", "", 1, 0.1, 2, 0, 0, offsetof(hw_gpu, kernel_eff_factor)},
    {"host_link_gb_per_s", "GB/s", "bytes/s", GBPS, 1, 1e4, 0, 0, offsetof(hw_gpu, host_link_bw_bytes_per_s)},
    {"host_launch_us", "us", "s", US, 0.5, 1000, 0, 0, offsetof(hw_gpu, host_launch_s)},
    {"fp4_gemm_speedup", "", "", 1, 1, 16, 0, 0, offsetof(hw_gpu, fp4_gemm_speedup)},
};
#define N_GPU_FIELDS ((int)(sizeof gpu_fields / sizeof gpu_fields[0]))
_Static_assert(sizeof gpu_fields / sizeof gpu_fields[0] <= HW_MAX_FIELDS,
               "hw_gpu.fields holds every GPU field");

static const field_spec system_fields[] = {
    {"gpus_per_node", "", "", 1, 1, 1024, 1, 1, offsetof(hw_system, gpus_per_node)},
    {"scaleup_domain_gpus", "", "", 1, 1, 100000, 0, 1, offsetof(hw_system, scaleup_domain_gpus)},
    {"max_nodes", "", "", 1, 0, 1e6, 0, 1, offsetof(hw_system, max_nodes)},
    {"intra_node.bw_gb_per_s", "GB/s", "bytes/s", GBPS, 0, 1e5, 1, 0, offsetof(hw_system, intra_bw_bytes_per_s)},
    {"intra_node.latency_us", "us", "s", US, 0, 1e4, 1, 0, offsetof(hw_system, intra_latency_s)},
    {"inter_node.nics_per_node", "", "", 1, 0, 64, 1, 1, offsetof(hw_system, nics_per_node)},
    {"inter_node.nic_bw_gbit_per_s", "Gbit/s", "bytes/s", GBITPS, 0.1, 1e5, 1, 0, offsetof(hw_system, nic_bw_bytes_per_s)},
    {"inter_node.latency_us", "us", "s", US, 0, 1e4, 1, 0, offsetof(hw_system, inter_latency_s)},
    {"price_usd_per_gpu_hour", "USD", "USD", 1, 0, 1000, 1, 0, offsetof(hw_system, price_usd_per_gpu_hour)},
    {"host.memory_bw_gb_per_s", "GB/s", "bytes/s", GBPS, 1, 1e5, 0, 0, offsetof(hw_system, host_mem_bw_bytes_per_s)},
    {"host.memory_gib", "GiB", "bytes", GIB, 1, 1e6, 0, 0, offsetof(hw_system, host_mem_bytes)},
    {"host.link_gb_per_s", "GB/s", "bytes/s", GBPS, 1, 1e4, 0, 0, offsetof(hw_system, host_link_bw_bytes_per_s)},
};
#define N_SYSTEM_FIELDS ((int)(sizeof system_fields / sizeof system_fields[0]))
_Static_assert(sizeof system_fields / sizeof system_fields[0] <= HW_MAX_FIELDS,
               "hw_system.fields holds every system field");

/* Keys allowed in each object of a file; anything else is a problem (a
 * misspelt key silently ignored is how wrong numbers get in). */
static const char *const gpu_top_keys[] = {
    "schema", "name", "aliases", "display_name", "vendor", "arch", "sources",
    "notes", "peak_tflops", "memory_gib", "memory_bw_gb_per_s", "sm_count",
    "boost_clock_mhz", "l2_mib", "scaleup_bw_gb_per_s", "power_w", "measured",
    "operator_models_like", "kernel_efficiency_factor", "host_link_gb_per_s",
    "host_launch_us", "fp4_gemm_speedup", "fp8_attention", NULL};
static const char *const fp8_attn_keys[] = {"seq", "fwd", "bwd", "source",
                                            "note", NULL};
static const char *const like_keys[] = {"gpu", "source", "note", NULL};
static const char *const system_top_keys[] = {
    "schema", "name", "aliases", "display_name", "gpu", "sources", "notes",
    "gpus_per_node", "scaleup_domain_gpus", "max_nodes", "intra_node",
    "inter_node", "price_usd_per_gpu_hour", "measured", "host", NULL};
static const char *const host_keys[] = {"cpu", "memory_bw_gb_per_s",
                                        "memory_gib", "link_gb_per_s", "note",
                                        NULL};
static const char *const intra_keys[] = {"fabric", "topology", "bw_gb_per_s",
                                         "latency_us", "note", NULL};
static const char *const inter_keys[] = {"network", "topology",
                                         "nics_per_node", "nic_bw_gbit_per_s",
                                         "latency_us", "note", NULL};
static const char *const sourced_keys[] = {"value", "source", "note", NULL};
static const char *const measured_keys[] = {"kind", "op", "dtype", "file",
                                            "source", "note", NULL};
static const char *const measured_kinds[] = {"operator_samples",
                                             "collective_table"};

static void check_keys(const cJSON *obj, const char *file, const char *path,
                       const char *const *allowed, hw_sink *s)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, obj)
    {
        int ok = 0;
        for (int i = 0; allowed[i]; i++)
            if (c->string && strcmp(c->string, allowed[i]) == 0) ok = 1;
        if (!ok) {
            char list[512];
            size_t at = 0;
            list[0] = '\0';
            for (int i = 0; allowed[i] && at < sizeof list; i++)
                at += (size_t)snprintf(list + at, sizeof list - at, "%s%s",
                                       i ? ", " : "", allowed[i]);
            char hint[160];
            int n = 0;
            while (allowed[n]) n++;
            tp_suggest(c->string ? c->string : "", allowed, n, hint,
                       sizeof hint);
            hw_sinkf(s, TP_EDATA, "%s: %s.%s: unknown key (known: %s)%s", file,
                     path, c->string ? c->string : "?", list, hint);
        }
    }
}

/* Resolves a "source" string: a key of $.sources, or a citation written
 * out (anything with a space in it). */
static const char *resolve_source(hw_db *db, const cJSON *sources,
                                  const char *src, const char *file,
                                  const char *path, hw_sink *s)
{
    const cJSON *hit = sources ? cJSON_GetObjectItemCaseSensitive(sources, src)
                               : NULL;
    if (hit && cJSON_IsString(hit) && hit->valuestring[0])
        return hw_db_strdup(db, hit->valuestring);
    if (strchr(src, ' ')) return hw_db_strdup(db, src);
    hw_sinkf(s, TP_EDATA,
             "%s: %s.source: \"%s\" is neither a key of $.sources nor a "
             "citation (add it to $.sources, or write the citation out)",
             file, path, src);
    return NULL;
}

/* Reads one sourced number at spec->key into base + spec->offset and
 * records it in fields[*nf]. */
static void parse_field(hw_db *db, const cJSON *root, const cJSON *sources,
                        const field_spec *spec, const char *file, void *base,
                        hw_field *fields, int *nf, hw_sink *s)
{
    char path[128] = "$", key[64];
    const cJSON *obj = root;
    const char *k = spec->key;
    /* Walk the dotted key down to the parent object. */
    for (;;) {
        const char *dot = strchr(k, '.');
        size_t n = dot ? (size_t)(dot - k) : strlen(k);
        if (n >= sizeof key) n = sizeof key - 1;
        memcpy(key, k, n);
        key[n] = '\0';
        if (!dot) break;
        obj = cJSON_GetObjectItemCaseSensitive(obj, key);
        size_t pl = strlen(path);
        snprintf(path + pl, sizeof path - pl, ".%s", key);
        if (!obj || !cJSON_IsObject(obj)) {
            if (spec->required && !obj)
                hw_sinkf(s, TP_EDATA, "%s: %s: missing required object", file,
                         path);
            return; /* a non-object parent is reported by its own check */
        }
        k = dot + 1;
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v)) {
        if (spec->required)
            hw_sinkf(s, TP_EDATA,
                     "%s: %s.%s: missing required field (a number in [%g, %g] "
                     "%s with its source)",
                     file, path, key, spec->lo, spec->hi, spec->file_unit);
        return;
    }
    char here[256];
    snprintf(here, sizeof here, "%s.%s", path, key);
    if (!cJSON_IsObject(v)) {
        char found[64];
        tp_json_describe(v, found, sizeof found);
        hw_sinkf(s, TP_EDATA,
                 "%s: %s: expected {\"value\": <number in [%g, %g] %s>, "
                 "\"source\": \"...\"}, found %s (every number needs its "
                 "source)",
                 file, here, spec->lo, spec->hi, spec->file_unit, found);
        return;
    }
    check_keys(v, file, here, sourced_keys, s);
    tp_err e = {0};
    double val = 0;
    if (spec->is_int) {
        int64_t iv = 0;
        if (tp_json_int(v, file, here, "value", 1, (int64_t)spec->lo,
                        (int64_t)spec->hi, &iv, &e)) {
            hw_sink_add(s, &e);
            return;
        }
        val = (double)iv;
    } else if (tp_json_num(v, file, here, "value", 1, spec->lo, spec->hi, &val,
                           &e)) {
        hw_sink_add(s, &e);
        return;
    }
    char src[1024];
    if (tp_json_str(v, file, here, "source", 1, src, sizeof src, &e)) {
        hw_sink_add(s, &e);
        return;
    }
    if (!src[0]) {
        hw_sinkf(s, TP_EDATA,
                 "%s: %s.source: empty; every number needs a source", file,
                 here);
        return;
    }
    const char *cite = resolve_source(db, sources, src, file, here, s);
    if (!cite) return;
    char *dst = (char *)base + spec->offset;
    if (spec->is_int) {
        int iv = (int)val;
        memcpy(dst, &iv, sizeof iv);
    } else {
        double d = val * spec->scale;
        memcpy(dst, &d, sizeof d);
    }
    if (*nf < HW_MAX_FIELDS) {
        hw_field *f = &fields[(*nf)++];
        f->key = spec->key;
        f->unit = spec->si_unit;
        f->value = val * spec->scale;
        f->file_unit = spec->file_unit;
        f->file_value = val;
        f->source = cite;
    }
}

/* Common header: schema, name, aliases, display_name, sources. */
static const cJSON *parse_header(const cJSON *root, const char *file,
                                 char *name, char *display, size_t display_cap,
                                 char (*aliases)[HW_NAME_MAX], int *n_aliases,
                                 hw_sink *s)
{
    tp_err e = {0};
    if (tp_json_str(root, file, "$", "name", 1, name, HW_NAME_MAX, &e))
        hw_sink_add(s, &e);
    else
        for (const char *c = name; *c; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')
                  || *c == '-' || *c == '.' || *c == '_')) {
                hw_sinkf(s, TP_EDATA,
                         "%s: $.name: \"%s\": use lowercase letters, digits, "
                         "'-', '.', '_'",
                         file, name);
                break;
            }
    if (tp_json_str(root, file, "$", "display_name", 1, display, display_cap,
                    &e))
        hw_sink_add(s, &e);
    const cJSON *al = cJSON_GetObjectItemCaseSensitive(root, "aliases");
    *n_aliases = 0;
    if (al && !cJSON_IsNull(al)) {
        if (!cJSON_IsArray(al)) {
            hw_sinkf(s, TP_EDATA, "%s: $.aliases: expected an array of strings",
                     file);
        } else {
            int i = 0;
            const cJSON *a;
            cJSON_ArrayForEach(a, al)
            {
                if (!cJSON_IsString(a) || strlen(a->valuestring) >= HW_NAME_MAX
                    || !a->valuestring[0])
                    hw_sinkf(s, TP_EDATA,
                             "%s: $.aliases[%d]: expected a string of 1 to %d "
                             "characters",
                             file, i, HW_NAME_MAX - 1);
                else if (*n_aliases >= HW_MAX_ALIASES)
                    hw_sinkf(s, TP_EDATA, "%s: $.aliases: more than %d aliases",
                             file, HW_MAX_ALIASES);
                else
                    tp_strlcpy(aliases[(*n_aliases)++], a->valuestring,
                               HW_NAME_MAX);
                i++;
            }
        }
    }
    const cJSON *sources = cJSON_GetObjectItemCaseSensitive(root, "sources");
    if (!sources || !cJSON_IsObject(sources)) {
        hw_sinkf(s, TP_EDATA,
                 "%s: $.sources: missing or not an object (key -> citation)",
                 file);
        return NULL;
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, sources)
    {
        if (!cJSON_IsString(c) || !c->valuestring[0])
            hw_sinkf(s, TP_EDATA,
                     "%s: $.sources.%s: expected a non-empty citation string",
                     file, c->string);
    }
    return sources;
}

static void parse_measured(hw_db *db, const cJSON *root,
                           const cJSON *sources, const char *file,
                           hw_measured **out, int *n_out, hw_sink *s)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "measured");
    *out = NULL;
    *n_out = 0;
    if (!m || cJSON_IsNull(m)) return;
    if (!cJSON_IsArray(m)) {
        hw_sinkf(s, TP_EDATA, "%s: $.measured: expected an array of entries",
                 file);
        return;
    }
    int n = cJSON_GetArraySize(m);
    if (n == 0) return;
    *out = tp_xcalloc((size_t)n, sizeof **out);
    /* The entries' files are relative to the JSON file's directory. */
    char dir[PATH_MAX];
    tp_strlcpy(dir, file, sizeof dir);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[1] = '\0';
    else
        dir[0] = '\0';
    int i = 0;
    const cJSON *ent;
    cJSON_ArrayForEach(ent, m)
    {
        char path[64];
        snprintf(path, sizeof path, "$.measured[%d]", i++);
        if (!cJSON_IsObject(ent)) {
            hw_sinkf(s, TP_EDATA, "%s: %s: expected an object", file, path);
            continue;
        }
        check_keys(ent, file, path, measured_keys, s);
        hw_measured *h = &(*out)[*n_out];
        tp_err e = {0};
        int kind = 0, bad = 0;
        char rel[PATH_MAX], src[1024];
        bad |= tp_json_enum(ent, file, path, "kind", 1, measured_kinds, 2,
                            &kind, &e) ? (hw_sink_add(s, &e), 1) : 0;
        bad |= tp_json_str(ent, file, path, "op", 1, h->op, sizeof h->op, &e)
                   ? (hw_sink_add(s, &e), 1) : 0;
        bad |= tp_json_str(ent, file, path, "dtype", 1, h->dtype,
                           sizeof h->dtype, &e) ? (hw_sink_add(s, &e), 1) : 0;
        bad |= tp_json_str(ent, file, path, "file", 1, rel, sizeof rel, &e)
                   ? (hw_sink_add(s, &e), 1) : 0;
        bad |= tp_json_str(ent, file, path, "source", 1, src, sizeof src, &e)
                   ? (hw_sink_add(s, &e), 1) : 0;
        if (bad) continue;
        if (hw_dtype_parse(h->dtype) < 0) {
            hw_sinkf(s, TP_EDATA,
                     "%s: %s.dtype: \"%s\" is not one of fp32, tf32, fp16, "
                     "bf16, fp8, fp4",
                     file, path, h->dtype);
            continue;
        }
        char full[PATH_MAX * 2];
        snprintf(full, sizeof full, "%s%s", rel[0] == '/' ? "" : dir, rel);
        struct stat st;
        if (stat(full, &st) != 0 || !S_ISREG(st.st_mode)) {
            hw_sinkf(s, TP_ENOINPUT,
                     "%s: %s.file: \"%s\" (%s) is not a readable file", file,
                     path, rel, full);
            continue;
        }
        const char *cite = resolve_source(db, sources, src, file, path, s);
        if (!cite) continue;
        tp_strlcpy(h->kind, measured_kinds[kind], sizeof h->kind);
        h->path = hw_db_strdup(db, full);
        h->source = cite;
        (*n_out)++;
    }
}

int hw_file_kind(const cJSON *root, const char *path, hw_sink *s)
{
    if (!cJSON_IsObject(root)) {
        hw_sinkf(s, TP_EDATA, "%s: $: expected a JSON object", path);
        return 0;
    }
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(root, "schema");
    if (cJSON_IsString(sc) && strcmp(sc->valuestring, "trainplan-gpu/1") == 0)
        return 1;
    if (cJSON_IsString(sc)
        && strcmp(sc->valuestring, "trainplan-system/1") == 0)
        return 2;
    char found[64];
    tp_json_describe(sc, found, sizeof found);
    hw_sinkf(s, TP_EDATA,
             "%s: $.schema: expected \"trainplan-gpu/1\" or "
             "\"trainplan-system/1\", found %s",
             path, found);
    return 0;
}

/* The optional object root.key ($.key), its keys checked; NULL when absent
 * or null, or (a problem added) when not an object of the listed keys. */
static const cJSON *object_at(const cJSON *root, const char *key,
                              const char *file, const char *listed,
                              const char *const *keys, hw_sink *s)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!o || cJSON_IsNull(o)) return NULL;
    char path[64];
    snprintf(path, sizeof path, "$.%s", key);
    if (!cJSON_IsObject(o)) {
        hw_sinkf(s, TP_EDATA, "%s: %s: expected an object with %s", file, path,
                 listed);
        return NULL;
    }
    check_keys(o, file, path, keys, s);
    return o;
}

/* "operator_models_like": {"gpu": NAME, "source": KEY, "note": WHY}; the
 * name is resolved once every file is loaded (hw_db_resolve). */
static void parse_models_like(hw_db *db, const cJSON *root,
                              const cJSON *sources, const char *file,
                              hw_gpu *g, hw_sink *s)
{
    const char *path = "$.operator_models_like";
    const cJSON *o = object_at(root, "operator_models_like", file,
                               "gpu, source and note", like_keys, s);
    if (!o) return;
    tp_err e = {0};
    char src[1024], note[1024];
    int bad = 0;
    bad |= tp_json_str(o, file, path, "gpu", 1, g->models_like_name,
                       sizeof g->models_like_name, &e)
               ? (hw_sink_add(s, &e), 1) : 0;
    bad |= tp_json_str(o, file, path, "source", 1, src, sizeof src, &e)
               ? (hw_sink_add(s, &e), 1) : 0;
    bad |= tp_json_str(o, file, path, "note", 1, note, sizeof note, &e)
               ? (hw_sink_add(s, &e), 1) : 0;
    if (bad) {
        g->models_like_name[0] = '\0';
        return;
    }
    if (!resolve_source(db, sources, src, file, path, s)) return;
    g->models_like_note = hw_db_strdup(db, note);
}

/* One array of "fp8_attention": n numbers in [lo, hi], increasing where
 * asked; returns its length, or -1 after a problem. */
static int fp8_attn_array(const cJSON *o, const char *file, const char *key,
                          double lo, double hi, int increasing, double *out,
                          hw_sink *s)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
    if (n < 2 || n > HW_FP8_ATTN_MAX) {
        hw_sinkf(s, TP_EDATA, "%s: $.fp8_attention.%s: expected an array of 2 "
                 "to %d numbers", file, key, HW_FP8_ATTN_MAX);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetArrayItem(a, i);
        double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
        if (!(x >= lo && x <= hi) || (increasing && i > 0 && !(x > out[i - 1]))) {
            hw_sinkf(s, TP_EDATA, "%s: $.fp8_attention.%s[%d]: expected a "
                     "number from %g to %g%s", file, key, i, lo, hi,
                     increasing ? ", above the one before" : "");
            return -1;
        }
        out[i] = x;
    }
    return n;
}

/* "fp8_attention": {"seq": [...], "fwd": [...], "bwd": [...], "source": KEY,
 * "note": WHY}: fp8 over 16-bit attention time by sequence length. */
static void parse_fp8_attention(hw_db *db, const cJSON *root,
                                const cJSON *sources, const char *file,
                                hw_gpu *g, hw_sink *s)
{
    const char *path = "$.fp8_attention";
    const cJSON *o = object_at(root, "fp8_attention", file,
                               "seq, fwd, bwd, source and note", fp8_attn_keys, s);
    if (!o) return;
    tp_err e = {0};
    char src[1024], note[1024];
    if (tp_json_str(o, file, path, "source", 1, src, sizeof src, &e)
        || tp_json_str(o, file, path, "note", 1, note, sizeof note, &e)) {
        hw_sink_add(s, &e);
        return;
    }
    if (!resolve_source(db, sources, src, file, path, s)) return;
    int n = fp8_attn_array(o, file, "seq", 1, 1e7, 1, g->fp8_attn_seq, s);
    int nf = fp8_attn_array(o, file, "fwd", 0.2, 3, 0, g->fp8_attn_fwd, s);
    int nb = fp8_attn_array(o, file, "bwd", 0.2, 3, 0, g->fp8_attn_bwd, s);
    if (n < 0 || nf < 0 || nb < 0) return;
    if (nf != n || nb != n) {
        hw_sinkf(s, TP_EDATA, "%s: %s: fwd and bwd must have one ratio per "
                 "seq (%d), found %d and %d", file, path, n, nf, nb);
        return;
    }
    g->fp8_attn_n = n;
}

int hw_parse_gpu(hw_db *db, const cJSON *root, const char *file, hw_gpu *g,
                 hw_sink *s)
{
    static const char *const vendors[] = {"nvidia", "amd"};
    int before = s->count;
    memset(g, 0, sizeof *g);
    check_keys(root, file, "$", gpu_top_keys, s);
    const cJSON *sources = parse_header(root, file, g->name, g->display_name,
                                        sizeof g->display_name, g->aliases,
                                        &g->n_aliases, s);
    tp_err e = {0};
    int vendor = 0;
    if (tp_json_enum(root, file, "$", "vendor", 1, vendors, 2, &vendor, &e))
        hw_sink_add(s, &e);
    tp_strlcpy(g->vendor, vendors[vendor], sizeof g->vendor);
    if (tp_json_str(root, file, "$", "arch", 1, g->arch, sizeof g->arch, &e))
        hw_sink_add(s, &e);
    const cJSON *pk = cJSON_GetObjectItemCaseSensitive(root, "peak_tflops");
    if (pk && !cJSON_IsObject(pk))
        hw_sinkf(s, TP_EDATA, "%s: $.peak_tflops: expected an object keyed by "
                 "dtype", file);
    else if (pk)
        check_keys(pk, file, "$.peak_tflops", (const char *const[]){
                       "fp32", "tf32", "fp16", "bf16", "fp8", "fp4", NULL}, s);
    if (sources)
        for (int i = 0; i < N_GPU_FIELDS; i++)
            parse_field(db, root, sources, &gpu_fields[i], file, g, g->fields,
                        &g->n_fields, s);
    /* A measured speedup cannot beat the ratio of the dense peaks. */
    double r4 = g->peak_flops[HW_BF16] > 0
                    ? g->peak_flops[HW_FP4] / g->peak_flops[HW_BF16] : 0;
    if (g->fp4_gemm_speedup > 0 && g->fp4_gemm_speedup > r4 * (1 + 1e-9))
        hw_sinkf(s, TP_EDATA,
                 "%s: $.fp4_gemm_speedup.value: %g is above the fp4 / "
                 "bf16 peak ratio (%g); expected 1 to %g, or peak_tflops.fp4 "
                 "set first",
                 file, g->fp4_gemm_speedup, r4, r4);
    parse_measured(db, root, sources, file, &g->measured, &g->n_measured, s);
    parse_models_like(db, root, sources, file, g, s);
    parse_fp8_attention(db, root, sources, file, g, s);
    g->file = hw_db_strdup(db, file);
    return s->count - before;
}

int hw_parse_system(hw_db *db, const cJSON *root, const char *file,
                    hw_system *y, hw_sink *s)
{
    int before = s->count;
    memset(y, 0, sizeof *y);
    check_keys(root, file, "$", system_top_keys, s);
    const cJSON *sources = parse_header(root, file, y->name, y->display_name,
                                        sizeof y->display_name, y->aliases,
                                        &y->n_aliases, s);
    tp_err e = {0};
    if (tp_json_str(root, file, "$", "gpu", 1, y->gpu_name,
                    sizeof y->gpu_name, &e))
        hw_sink_add(s, &e);
    static const struct {
        const char *key;
        const char *const *allowed;
    } parts[] = {{"intra_node", intra_keys}, {"inter_node", inter_keys}};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, parts[i].key);
        char path[32];
        snprintf(path, sizeof path, "$.%s", parts[i].key);
        if (!o) {
            hw_sinkf(s, TP_EDATA, "%s: %s: missing required object", file,
                     path);
            continue;
        }
        if (!cJSON_IsObject(o)) {
            hw_sinkf(s, TP_EDATA, "%s: %s: expected an object", file, path);
            continue;
        }
        check_keys(o, file, path, parts[i].allowed, s);
        int topo = 0;
        if (tp_json_enum(o, file, path, "topology", 1, hw_topology_names,
                         HW_TOPO_COUNT, &topo, &e))
            hw_sink_add(s, &e);
        if (i == 0) {
            y->intra_topology = (hw_topology)topo;
            if (tp_json_str(o, file, path, "fabric", 1, y->intra_fabric,
                            sizeof y->intra_fabric, &e))
                hw_sink_add(s, &e);
        } else {
            y->inter_topology = (hw_topology)topo;
            if (tp_json_str(o, file, path, "network", 1, y->inter_network,
                            sizeof y->inter_network, &e))
                hw_sink_add(s, &e);
        }
    }
    /* The hosts (optional): what the CPUs are, in words, and sourced
     * numbers below. */
    const cJSON *host = cJSON_GetObjectItemCaseSensitive(root, "host");
    if (host && !cJSON_IsObject(host))
        hw_sinkf(s, TP_EDATA, "%s: $.host: expected an object", file);
    else if (host) {
        check_keys(host, file, "$.host", host_keys, s);
        const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(host, "cpu");
        if (cpu && !cJSON_IsString(cpu))
            hw_sinkf(s, TP_EDATA, "%s: $.host.cpu: expected a string (the "
                     "CPUs of a node, in words)", file);
    }
    if (sources)
        for (int i = 0; i < N_SYSTEM_FIELDS; i++)
            parse_field(db, root, sources, &system_fields[i], file, y,
                        y->fields, &y->n_fields, s);
    if (y->scaleup_domain_gpus == 0) y->scaleup_domain_gpus = y->gpus_per_node;
    if (y->gpus_per_node > 0 && y->scaleup_domain_gpus % y->gpus_per_node)
        hw_sinkf(s, TP_EDATA,
                 "%s: $.scaleup_domain_gpus: %d is not a multiple of "
                 "gpus_per_node (%d)",
                 file, y->scaleup_domain_gpus, y->gpus_per_node);
    if (y->scaleup_domain_gpus > 1 && y->intra_bw_bytes_per_s <= 0)
        hw_sinkf(s, TP_EDATA,
                 "%s: $.intra_node.bw_gb_per_s: 0, but %d GPUs share a node; "
                 "expected a bandwidth > 0",
                 file, y->scaleup_domain_gpus);
    if (y->max_nodes != 1 && (y->nics_per_node < 1 || y->nic_bw_bytes_per_s <= 0))
        hw_sinkf(s, TP_EDATA,
                 "%s: $.inter_node.nics_per_node: %d NICs of %g Gbit/s, but "
                 "max_nodes is %d (0: any number); a system of several nodes "
                 "needs a network: nics_per_node >= 1 with its bandwidth, or "
                 "max_nodes 1",
                 file, y->nics_per_node, y->nic_bw_bytes_per_s * 8 / 1e9,
                 y->max_nodes);
    if (y->scaleup_domain_gpus == 1 && y->intra_topology != HW_TOPO_NONE)
        hw_sinkf(s, TP_EDATA,
                 "%s: $.intra_node.topology: \"%s\" with one GPU per node; "
                 "expected \"none\"",
                 file, hw_topology_names[y->intra_topology]);
    parse_measured(db, root, sources, file, &y->measured, &y->n_measured, s);
    y->file = hw_db_strdup(db, file);
    return s->count - before;
}

void hw_check_system_gpu(const hw_system *y, const char *file, hw_sink *s)
{
    const hw_gpu *g = y->gpu;
    if (!g) return;
    /* A GPU cannot talk to its peers faster than its own links allow. */
    if (g->scaleup_bw_bytes_per_s > 0
        && y->intra_bw_bytes_per_s > g->scaleup_bw_bytes_per_s * 1.0001)
        hw_sinkf(s, TP_EDATA,
                 "%s: $.intra_node.bw_gb_per_s: %g GB/s is above the GPU's own "
                 "scale-up bandwidth (%s: %g GB/s per direction)",
                 file, y->intra_bw_bytes_per_s / GBPS, g->name,
                 g->scaleup_bw_bytes_per_s / GBPS);
    /* Nor reach its host faster than its own host link. */
    if (g->host_link_bw_bytes_per_s > 0
        && y->host_link_bw_bytes_per_s > g->host_link_bw_bytes_per_s * 1.0001)
        hw_sinkf(s, TP_EDATA,
                 "%s: $.host.link_gb_per_s: %g GB/s is above the GPU's own "
                 "host link (%s: %g GB/s per direction)",
                 file, y->host_link_bw_bytes_per_s / GBPS, g->name,
                 g->host_link_bw_bytes_per_s / GBPS);
}
