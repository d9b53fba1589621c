/*
 * hw_load.c - reads GPU and system JSON files (docs/hwdb.md) into hw_gpu
 * and hw_system structs, converting the files' datasheet units to SI.
 *
 * Every number is a sourced object {"value", "source", "note"}; the
 * fields of each kind are rows of one table (gpu_fields, system_fields),
 * which drives parsing, range checks, unit conversion and `hw show`.
 * Parsing never stops at the first problem, so `hw check` can list all.
 *
 * Not here: time models. Measured-data entries are listed and their files
 * checked for existence; the estimator reads them.
 */
#define _GNU_SOURCE /* dladdr */
#include "hw_int.h"

#include <dlfcn.h>

#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const hw_dtype_names[HW_DTYPE_COUNT] = {"fp32", "tf32", "fp16",
                                                    "bf16", "fp8", "fp4"};
_Static_assert(sizeof hw_dtype_names / sizeof hw_dtype_names[0]
                   == HW_DTYPE_COUNT,
               "hw_dtype_names mirrors hw_dtype");

const char *const hw_topology_names[HW_TOPO_COUNT] = {
    "nvswitch", "direct", "fat-tree", "rail", "dragonfly", "none"};
_Static_assert(sizeof hw_topology_names / sizeof hw_topology_names[0]
                   == HW_TOPO_COUNT,
               "hw_topology_names mirrors hw_topology");

int hw_dtype_parse(const char *s)
{
    for (int i = 0; i < HW_DTYPE_COUNT; i++)
        if (tp_streq_ci(s, hw_dtype_names[i])) return i;
    return -1;
}

/* ---- problem sink ---------------------------------------------------- */

void hw_sink_add(hw_sink *s, const tp_err *e)
{
    if (s->count == 0) s->first = *e;
    s->count++;
    size_t n = strlen(e->msg);
    s->report = tp_xrealloc(s->report, s->len + n + 2);
    memcpy(s->report + s->len, e->msg, n);
    s->len += n;
    s->report[s->len++] = '\n';
    s->report[s->len] = '\0';
}

void hw_sink_free(hw_sink *s)
{
    free(s->report);
    s->report = NULL;
    s->len = 0;
}

/* Adds a formatted problem; status TP_EDATA unless given. */
static void sinkf(hw_sink *s, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void sinkf(hw_sink *s, int status, const char *fmt, ...)
{
    tp_err e;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e.msg, sizeof e.msg, fmt, ap);
    va_end(ap);
    e.status = status;
    hw_sink_add(s, &e);
}

/* ---- string interning ------------------------------------------------ */

const char *hw_db_strdup(hw_db *db, const char *s)
{
    if (db->n_strings == db->cap_strings) {
        db->cap_strings = db->cap_strings ? 2 * db->cap_strings : 64;
        db->strings = tp_xrealloc(db->strings,
                                  (size_t)db->cap_strings * sizeof *db->strings);
    }
    char *p = tp_xstrdup(s);
    db->strings[db->n_strings++] = p;
    return p;
}

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
    "host_launch_us", "fp4_gemm_speedup", NULL};
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
            sinkf(s, TP_EDATA, "%s: %s.%s: unknown key (known: %s)%s", file,
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
    sinkf(s, TP_EDATA,
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
                sinkf(s, TP_EDATA, "%s: %s: missing required object", file,
                      path);
            return; /* a non-object parent is reported by its own check */
        }
        k = dot + 1;
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v)) {
        if (spec->required)
            sinkf(s, TP_EDATA,
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
        sinkf(s, TP_EDATA,
              "%s: %s: expected {\"value\": <number in [%g, %g] %s>, "
              "\"source\": \"...\"}, found %s (every number needs its source)",
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
        sinkf(s, TP_EDATA, "%s: %s.source: empty; every number needs a source",
              file, here);
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
                sinkf(s, TP_EDATA,
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
            sinkf(s, TP_EDATA, "%s: $.aliases: expected an array of strings",
                  file);
        } else {
            int i = 0;
            const cJSON *a;
            cJSON_ArrayForEach(a, al)
            {
                if (!cJSON_IsString(a) || strlen(a->valuestring) >= HW_NAME_MAX
                    || !a->valuestring[0])
                    sinkf(s, TP_EDATA,
                          "%s: $.aliases[%d]: expected a string of 1 to %d "
                          "characters",
                          file, i, HW_NAME_MAX - 1);
                else if (*n_aliases >= HW_MAX_ALIASES)
                    sinkf(s, TP_EDATA, "%s: $.aliases: more than %d aliases",
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
        sinkf(s, TP_EDATA,
              "%s: $.sources: missing or not an object (key -> citation)",
              file);
        return NULL;
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, sources)
    {
        if (!cJSON_IsString(c) || !c->valuestring[0])
            sinkf(s, TP_EDATA,
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
        sinkf(s, TP_EDATA, "%s: $.measured: expected an array of entries",
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
            sinkf(s, TP_EDATA, "%s: %s: expected an object", file, path);
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
            sinkf(s, TP_EDATA,
                  "%s: %s.dtype: \"%s\" is not one of fp32, tf32, fp16, bf16, "
                  "fp8, fp4",
                  file, path, h->dtype);
            continue;
        }
        char full[PATH_MAX * 2];
        snprintf(full, sizeof full, "%s%s", rel[0] == '/' ? "" : dir, rel);
        struct stat st;
        if (stat(full, &st) != 0 || !S_ISREG(st.st_mode)) {
            sinkf(s, TP_ENOINPUT, "%s: %s.file: \"%s\" (%s) is not a readable "
                  "file", file, path, rel, full);
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
        sinkf(s, TP_EDATA, "%s: $: expected a JSON object", path);
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
    sinkf(s, TP_EDATA,
          "%s: $.schema: expected \"trainplan-gpu/1\" or "
          "\"trainplan-system/1\", found %s",
          path, found);
    return 0;
}

/* "operator_models_like": {"gpu": NAME, "source": KEY, "note": WHY}; the
 * name is resolved once every file is loaded (hw_db_resolve). */
static void parse_models_like(hw_db *db, const cJSON *root,
                              const cJSON *sources, const char *file,
                              hw_gpu *g, hw_sink *s)
{
    const char *path = "$.operator_models_like";
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root,
                                                      "operator_models_like");
    if (!o || cJSON_IsNull(o)) return;
    if (!cJSON_IsObject(o)) {
        sinkf(s, TP_EDATA, "%s: %s: expected an object with gpu, source and "
              "note", file, path);
        return;
    }
    check_keys(o, file, path, like_keys, s);
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
        sinkf(s, TP_EDATA, "%s: $.peak_tflops: expected an object keyed by "
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
        sinkf(s, TP_EDATA,
              "%s: $.fp4_gemm_speedup.value: %g is above the fp4 / "
              "bf16 peak ratio (%g); expected 1 to %g, or peak_tflops.fp4 "
              "set first",
              file, g->fp4_gemm_speedup, r4, r4);
    parse_measured(db, root, sources, file, &g->measured, &g->n_measured, s);
    parse_models_like(db, root, sources, file, g, s);
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
            sinkf(s, TP_EDATA, "%s: %s: missing required object", file, path);
            continue;
        }
        if (!cJSON_IsObject(o)) {
            sinkf(s, TP_EDATA, "%s: %s: expected an object", file, path);
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
        sinkf(s, TP_EDATA, "%s: $.host: expected an object", file);
    else if (host) {
        check_keys(host, file, "$.host", host_keys, s);
        const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(host, "cpu");
        if (cpu && !cJSON_IsString(cpu))
            sinkf(s, TP_EDATA, "%s: $.host.cpu: expected a string (the "
                  "CPUs of a node, in words)", file);
    }
    if (sources)
        for (int i = 0; i < N_SYSTEM_FIELDS; i++)
            parse_field(db, root, sources, &system_fields[i], file, y,
                        y->fields, &y->n_fields, s);
    if (y->scaleup_domain_gpus == 0) y->scaleup_domain_gpus = y->gpus_per_node;
    if (y->gpus_per_node > 0 && y->scaleup_domain_gpus % y->gpus_per_node)
        sinkf(s, TP_EDATA,
              "%s: $.scaleup_domain_gpus: %d is not a multiple of "
              "gpus_per_node (%d)",
              file, y->scaleup_domain_gpus, y->gpus_per_node);
    if (y->scaleup_domain_gpus > 1 && y->intra_bw_bytes_per_s <= 0)
        sinkf(s, TP_EDATA,
              "%s: $.intra_node.bw_gb_per_s: 0, but %d GPUs share a node; "
              "expected a bandwidth > 0",
              file, y->scaleup_domain_gpus);
    if (y->max_nodes != 1 && (y->nics_per_node < 1 || y->nic_bw_bytes_per_s <= 0))
        sinkf(s, TP_EDATA,
              "%s: $.inter_node.nics_per_node: %d NICs of %g Gbit/s, but "
              "max_nodes is %d (0: any number); a system of several nodes "
              "needs a network: nics_per_node >= 1 with its bandwidth, or "
              "max_nodes 1",
              file, y->nics_per_node, y->nic_bw_bytes_per_s * 8 / 1e9,
              y->max_nodes);
    if (y->scaleup_domain_gpus == 1 && y->intra_topology != HW_TOPO_NONE)
        sinkf(s, TP_EDATA,
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
        sinkf(s, TP_EDATA,
              "%s: $.intra_node.bw_gb_per_s: %g GB/s is above the GPU's own "
              "scale-up bandwidth (%s: %g GB/s per direction)",
              file, y->intra_bw_bytes_per_s / GBPS, g->name,
              g->scaleup_bw_bytes_per_s / GBPS);
    /* Nor reach its host faster than its own host link. */
    if (g->host_link_bw_bytes_per_s > 0
        && y->host_link_bw_bytes_per_s > g->host_link_bw_bytes_per_s * 1.0001)
        sinkf(s, TP_EDATA,
              "%s: $.host.link_gb_per_s: %g GB/s is above the GPU's own "
              "host link (%s: %g GB/s per direction)",
              file, y->host_link_bw_bytes_per_s / GBPS, g->name,
              g->host_link_bw_bytes_per_s / GBPS);
}

/* ---- the database ---------------------------------------------------- */

static int find_gpu_index(const hw_db *db, const char *name)
{
    for (int i = 0; i < db->n_gpus; i++) {
        if (tp_streq_ci(db->gpus[i].name, name)) return i;
        for (int k = 0; k < db->gpus[i].n_aliases; k++)
            if (tp_streq_ci(db->gpus[i].aliases[k], name)) return i;
    }
    return -1;
}

static int find_system_index(const hw_db *db, const char *name)
{
    for (int i = 0; i < db->n_systems; i++) {
        if (tp_streq_ci(db->systems[i].name, name)) return i;
        for (int k = 0; k < db->systems[i].n_aliases; k++)
            if (tp_streq_ci(db->systems[i].aliases[k], name)) return i;
    }
    return -1;
}

static void put_gpu(hw_db *db, const hw_gpu *g)
{
    for (int i = 0; i < db->n_gpus; i++)
        if (strcmp(db->gpus[i].name, g->name) == 0) {
            free(db->gpus[i].measured);
            db->gpus[i] = *g;
            return;
        }
    if (db->n_gpus == db->cap_gpus) {
        db->cap_gpus = db->cap_gpus ? 2 * db->cap_gpus : 16;
        db->gpus = tp_xrealloc(db->gpus, (size_t)db->cap_gpus * sizeof *db->gpus);
    }
    db->gpus[db->n_gpus++] = *g;
}

static void put_system(hw_db *db, const hw_system *y)
{
    for (int i = 0; i < db->n_systems; i++)
        if (strcmp(db->systems[i].name, y->name) == 0) {
            free(db->systems[i].measured);
            db->systems[i] = *y;
            return;
        }
    if (db->n_systems == db->cap_systems) {
        db->cap_systems = db->cap_systems ? 2 * db->cap_systems : 16;
        db->systems = tp_xrealloc(db->systems,
                                  (size_t)db->cap_systems * sizeof *db->systems);
    }
    db->systems[db->n_systems++] = *y;
}

const struct hw_eff *hw_db_eff(const hw_db *db, int kind, const char *name)
{
    for (int i = 0; i < db->n_eff; i++)
        if (db->eff[i].kind == kind && strcmp(db->eff[i].name, name) == 0)
            return &db->eff[i];
    return NULL;
}

/* dir = path's folder with its trailing '/', or "" for a bare name. */
static void dir_of(const char *path, char *dir, size_t cap)
{
    tp_strlcpy(dir, path, cap);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[1] = '\0';
    else
        dir[0] = '\0';
}

/* dir = the absolute folder of path with a trailing '/' (path's own
 * folder as written where it cannot be resolved). */
static void abs_dir_of(const char *path, char *dir, size_t cap)
{
    char rel[PATH_MAX], full[PATH_MAX];
    dir_of(path, rel, sizeof rel);
    if (realpath(rel[0] ? rel : ".", full) && strlen(full) + 2 <= cap) {
        size_t n = strlen(full);
        memcpy(dir, full, n);
        dir[n] = '/';
        dir[n + 1] = '\0';
    } else
        tp_strlcpy(dir, rel, cap);
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Rewrites the relative "file" of each of root's measured entries as a
 * path from dir, or from fallback where it is not a file under dir. An
 * entry that is found in neither keeps dir's path, for the error. */
static void absolute_measured(cJSON *root, const char *dir,
                              const char *fallback)
{
    cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "measured");
    cJSON *ent;
    if (!cJSON_IsArray(m)) return;
    cJSON_ArrayForEach(ent, m)
    {
        cJSON *f = cJSON_GetObjectItemCaseSensitive(ent, "file");
        if (!cJSON_IsString(f) || !f->valuestring[0]
            || f->valuestring[0] == '/')
            continue;
        char full[PATH_MAX * 2];
        snprintf(full, sizeof full, "%s%s", dir, f->valuestring);
        if (!is_file(full) && fallback) {
            char alt[PATH_MAX * 2];
            snprintf(alt, sizeof alt, "%s%s", fallback, f->valuestring);
            if (is_file(alt)) tp_strlcpy(full, alt, sizeof full);
        }
        cJSON_SetValuestring(f, full);
    }
}

/* Merges patch into target (both objects), RFC 7386 with sourced
 * numbers replaced whole. */
static void merge_patch(cJSON *target, const cJSON *patch)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, patch)
    {
        cJSON *t = cJSON_GetObjectItemCaseSensitive(target, p->string);
        if (cJSON_IsNull(p)) {
            if (t) cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
        } else if (cJSON_IsObject(p) && cJSON_IsObject(t)
                   && !cJSON_GetObjectItemCaseSensitive(p, "value")) {
            merge_patch(t, p);
        } else {
            cJSON *copy = cJSON_Duplicate(p, 1);
            if (t)
                cJSON_ReplaceItemInObjectCaseSensitive(target, p->string, copy);
            else
                cJSON_AddItemToObject(target, p->string, copy);
        }
    }
}

cJSON *hw_merge_over(const cJSON *base, const cJSON *root, const char *path,
                     const char *base_file)
{
    char dir[PATH_MAX], fallback[PATH_MAX];
    abs_dir_of(path, dir, sizeof dir);
    if (base_file) abs_dir_of(base_file, fallback, sizeof fallback);
    cJSON *patch = cJSON_Duplicate(root, 1);
    absolute_measured(patch, dir, base_file ? fallback : NULL);
    if (!base) return patch;
    cJSON *out = cJSON_Duplicate(base, 1);
    merge_patch(out, patch);
    cJSON_Delete(patch);
    return out;
}

/* Records tree as the effective JSON of kind/name (taking ownership). */
static void put_eff(hw_db *db, int kind, const char *name, cJSON *tree,
                    const char *origin_file)
{
    for (int i = 0; i < db->n_eff; i++)
        if (db->eff[i].kind == kind && strcmp(db->eff[i].name, name) == 0) {
            cJSON_Delete(db->eff[i].root);
            db->eff[i].root = tree;
            return;
        }
    if (db->n_eff == db->cap_eff) {
        db->cap_eff = db->cap_eff ? 2 * db->cap_eff : 32;
        db->eff = tp_xrealloc(db->eff, (size_t)db->cap_eff * sizeof *db->eff);
    }
    struct hw_eff *f = &db->eff[db->n_eff++];
    f->kind = kind;
    tp_strlcpy(f->name, name, sizeof f->name);
    f->root = tree;
    f->origin_file = hw_db_strdup(db, origin_file);
}

/* Loads one file into db; problems to s. want_kind: 0 any, 1 GPU, 2
 * system (a file in gpus/ must be a GPU). A file whose name is already
 * in db is merged over that entry (docs/hwdb.md, "Overrides"). */
static void load_file(hw_db *db, const char *path, int want_kind, hw_sink *s)
{
    cJSON *root = NULL;
    tp_err e = {0};
    if (tp_json_load(path, &root, &e)) {
        hw_sink_add(s, &e);
        return;
    }
    int kind = hw_file_kind(root, path, s);
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(root, "name");
    const struct hw_eff *base = NULL;
    if (kind && cJSON_IsString(nm) && strlen(nm->valuestring) < HW_NAME_MAX)
        base = hw_db_eff(db, kind, nm->valuestring);
    /* A short file naming no entry was probably meant as an override:
     * say so before the missing fields. */
    if (kind && !base && cJSON_IsString(nm)
        && !cJSON_GetObjectItemCaseSensitive(root, "display_name")
        && (kind == 1 ? db->n_gpus : db->n_systems) > 0) {
        tp_err ue = {0};
        const char *canon = NULL;
        if (kind == 1) {
            const hw_gpu *g = hw_find_gpu(db, nm->valuestring, &ue);
            canon = g ? g->name : NULL;
        } else {
            const hw_system *y = hw_find_system(db, nm->valuestring, &ue);
            canon = y ? y->name : NULL;
        }
        if (canon)
            sinkf(s, TP_EDATA, "%s: $.name: \"%s\" is an alias of %s; an "
                  "override names the entry itself (\"name\": \"%s\")",
                  path, nm->valuestring, canon, canon);
        else
            sinkf(s, TP_EDATA, "%s: $.name: not an override: %s; a new entry "
                  "needs every required field", path, ue.msg);
    }
    const char *base_file = base ? base->origin_file : NULL;
    /* The tree kept for later overrides has absolute measured paths; a
     * file of its own is parsed as written, so its paths print as they
     * always did. */
    cJSON *tree = NULL;
    if (kind)
        tree = hw_merge_over(base ? base->root : NULL, root, path, base_file);
    const cJSON *parse = base ? tree : root;
    if (kind && want_kind && kind != want_kind) {
        sinkf(s, TP_EDATA, "%s: $.schema: a %s file in a %s directory", path,
              kind == 1 ? "GPU" : "system", want_kind == 1 ? "gpus/" : "systems/");
    } else if (kind == 1) {
        hw_gpu g;
        if (hw_parse_gpu(db, parse, path, &g, s) == 0) {
            g.base_file = base_file;
            put_gpu(db, &g);
            put_eff(db, 1, g.name, tree, base_file ? base_file : path);
            tree = NULL;
        } else {
            free(g.measured);
        }
    } else if (kind == 2) {
        hw_system y;
        if (hw_parse_system(db, parse, path, &y, s) == 0) {
            y.base_file = base_file;
            put_system(db, &y);
            put_eff(db, 2, y.name, tree, base_file ? base_file : path);
            tree = NULL;
        } else {
            free(y.measured);
        }
    }
    cJSON_Delete(tree);
    cJSON_Delete(root);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Loads dir/sub/\*.json in name order. A missing sub is fine. */
static void load_subdir(hw_db *db, const char *dir, const char *sub, int kind,
                        hw_sink *s)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    DIR *d = opendir(path);
    if (!d) return;
    char **names = NULL;
    int n = 0, cap = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        size_t len = strlen(ent->d_name);
        if (len < 6 || strcmp(ent->d_name + len - 5, ".json") != 0
            || ent->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            names = tp_xrealloc(names, (size_t)cap * sizeof *names);
        }
        names[n++] = tp_xstrdup(ent->d_name);
    }
    closedir(d);
    if (n > 1) qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; i < n; i++) {
        char file[PATH_MAX * 2];
        snprintf(file, sizeof file, "%s/%s", path, names[i]);
        load_file(db, file, kind, s);
        free(names[i]);
    }
    free(names);
}

static int load_dir(hw_db *db, const char *dir, hw_sink *s)
{
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        sinkf(s, TP_ENOINPUT,
              "%s: hardware database directory not found (expected a "
              "directory holding gpus/ and systems/)",
              dir);
        return TP_ENOINPUT;
    }
    load_subdir(db, dir, "gpus", 1, s);
    load_subdir(db, dir, "systems", 2, s);
    return TP_OK;
}

static int cmp_gpu(const void *a, const void *b)
{
    return strcmp(((const hw_gpu *)a)->name, ((const hw_gpu *)b)->name);
}

static int cmp_system(const void *a, const void *b)
{
    return strcmp(((const hw_system *)a)->name, ((const hw_system *)b)->name);
}

void hw_db_resolve(hw_db *db, hw_sink *s)
{
    if (db->n_gpus > 1)
        qsort(db->gpus, (size_t)db->n_gpus, sizeof *db->gpus, cmp_gpu);
    if (db->n_systems > 1)
        qsort(db->systems, (size_t)db->n_systems, sizeof *db->systems,
              cmp_system);
    for (int i = 0; i < db->n_gpus; i++) {
        hw_gpu *g = &db->gpus[i];
        g->models_like = NULL;
        if (!g->models_like_name[0]) continue;
        int d = find_gpu_index(db, g->models_like_name);
        const hw_gpu *like = d >= 0 ? &db->gpus[d] : NULL;
        if (!like || like == g || like->models_like_name[0]
            || like->n_measured == 0 || g->n_measured) {
            sinkf(s, TP_EDATA,
                  "%s: $.operator_models_like.gpu: \"%s\" must name another "
                  "GPU of the database that has samples of its own (no "
                  "chains), and this GPU must have no measured entries",
                  g->file, g->models_like_name);
            continue;
        }
        g->models_like = like;
    }
    for (int i = 0; i < db->n_systems; i++) {
        hw_system *y = &db->systems[i];
        int g = find_gpu_index(db, y->gpu_name);
        if (g < 0) {
            tp_err e = {0};
            hw_find_gpu(db, y->gpu_name, &e);
            sinkf(s, TP_EDATA, "%s: $.gpu: %s", y->file, e.msg);
            y->gpu = NULL;
            continue;
        }
        y->gpu = &db->gpus[g];
        hw_check_system_gpu(y, y->file, s);
    }
}

static hw_db *finish_open(hw_db *db, hw_sink *s, tp_err *e)
{
    hw_db_resolve(db, s);
    if (s->count) {
        if (e) {
            *e = s->first;
            if (s->count > 1) {
                size_t n = strlen(e->msg);
                snprintf(e->msg + n, sizeof e->msg - n,
                         " (and %d more problems: run 'trainplan hw check "
                         "FILE')",
                         s->count - 1);
            }
        }
        hw_sink_free(s);
        hw_db_free(db);
        return NULL;
    }
    hw_sink_free(s);
    return db;
}

hw_db *hw_db_open_dirs(const char *const *dirs, int n_dirs, tp_err *e)
{
    hw_db *db = tp_xcalloc(1, sizeof *db);
    hw_sink s = {0};
    for (int i = 0; i < n_dirs; i++) load_dir(db, dirs[i], &s);
    return finish_open(db, &s, e);
}

/* buf = the share/trainplan/hwdb beside the directory of file (a
 * program or a shared library: BIN/../share, LIB/../share) if it is a
 * directory. */
static int share_beside(const char *file, char *buf, size_t cap)
{
    char dir[PATH_MAX];
    tp_strlcpy(dir, file, sizeof dir);
    char *slash = strrchr(dir, '/');
    if (!slash) return 0;
    *slash = '\0';
    char cand[PATH_MAX + 32];
    snprintf(cand, sizeof cand, "%s/../share/trainplan/hwdb", dir);
    struct stat st;
    if (stat(cand, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    tp_strlcpy(buf, cand, cap);
    return 1;
}

void hw_builtin_dir(char *buf, size_t cap)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    struct stat st;
    /* Inside a shared library (libtrainplan.so, loaded by a C program or
     * Python): the database installed beside the library first, so a
     * Python package that carries both finds its own. */
    Dl_info info;
    if (dladdr((void *)hw_builtin_dir, &info) && info.dli_fname
        && strstr(info.dli_fname, ".so") && share_beside(info.dli_fname, buf, cap))
        return;
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            char cand[PATH_MAX + 32];
            snprintf(cand, sizeof cand, "%s/../share/trainplan/hwdb", exe);
            if (stat(cand, &st) == 0 && S_ISDIR(st.st_mode)) {
                tp_strlcpy(buf, cand, cap);
                return;
            }
        }
    }
    if (stat(TRAINPLAN_HWDB_SOURCE_DIR, &st) == 0 && S_ISDIR(st.st_mode))
        tp_strlcpy(buf, TRAINPLAN_HWDB_SOURCE_DIR, cap);
    else
        tp_strlcpy(buf, TRAINPLAN_HWDB_INSTALL_DIR, cap);
}

hw_db *hw_db_open(const char *const *user_dirs, int n_user_dirs, tp_err *e)
{
    hw_db *db = tp_xcalloc(1, sizeof *db);
    hw_sink s = {0};
    char builtin[PATH_MAX];
    hw_builtin_dir(builtin, sizeof builtin);
    load_dir(db, builtin, &s);
    const char *env = getenv("TRAINPLAN_HWDB");
    if (env && *env) {
        char *copy = tp_xstrdup(env), *save = NULL;
        for (char *d = strtok_r(copy, ":", &save); d;
             d = strtok_r(NULL, ":", &save))
            load_dir(db, d, &s);
        free(copy);
    }
    for (int i = 0; i < n_user_dirs; i++) load_dir(db, user_dirs[i], &s);
    return finish_open(db, &s, e);
}

int hw_db_add_file(hw_db *db, const char *path, tp_err *e)
{
    hw_sink s = {0};
    load_file(db, path, 0, &s);
    if (s.count == 0) hw_db_resolve(db, &s);
    int rc = TP_OK;
    if (s.count) {
        if (e) *e = s.first;
        rc = s.first.status;
    }
    hw_sink_free(&s);
    return rc;
}

void hw_db_free(hw_db *db)
{
    if (!db) return;
    for (int i = 0; i < db->n_gpus; i++) free(db->gpus[i].measured);
    for (int i = 0; i < db->n_systems; i++) free(db->systems[i].measured);
    for (int i = 0; i < db->n_strings; i++) free(db->strings[i]);
    for (int i = 0; i < db->n_eff; i++) cJSON_Delete(db->eff[i].root);
    free(db->eff);
    free(db->gpus);
    free(db->systems);
    free(db->strings);
    free(db);
}

int hw_gpu_count(const hw_db *db) { return db->n_gpus; }
const hw_gpu *hw_gpu_at(const hw_db *db, int i) { return &db->gpus[i]; }
int hw_system_count(const hw_db *db) { return db->n_systems; }
const hw_system *hw_system_at(const hw_db *db, int i)
{
    return &db->systems[i];
}

/* Collects every name and alias for suggestions. */
static const char **all_names(const hw_db *db, int systems, int *n)
{
    int cap = 0;
    if (systems)
        for (int i = 0; i < db->n_systems; i++)
            cap += 1 + db->systems[i].n_aliases;
    else
        for (int i = 0; i < db->n_gpus; i++) cap += 1 + db->gpus[i].n_aliases;
    const char **names = tp_xcalloc((size_t)cap + 1, sizeof *names);
    *n = 0;
    if (systems)
        for (int i = 0; i < db->n_systems; i++) {
            names[(*n)++] = db->systems[i].name;
            for (int k = 0; k < db->systems[i].n_aliases; k++)
                names[(*n)++] = db->systems[i].aliases[k];
        }
    else
        for (int i = 0; i < db->n_gpus; i++) {
            names[(*n)++] = db->gpus[i].name;
            for (int k = 0; k < db->gpus[i].n_aliases; k++)
                names[(*n)++] = db->gpus[i].aliases[k];
        }
    return names;
}

static void unknown_name(const hw_db *db, int systems, const char *name,
                         tp_err *e)
{
    int n;
    const char **names = all_names(db, systems, &n);
    char hint[256];
    tp_suggest(name, names, n, hint, sizeof hint);
    char known[512];
    size_t at = 0;
    known[0] = '\0';
    int count = systems ? db->n_systems : db->n_gpus;
    for (int i = 0; i < count && at < sizeof known; i++)
        at += (size_t)snprintf(known + at, sizeof known - at, "%s%s",
                               i ? ", " : "",
                               systems ? db->systems[i].name
                                       : db->gpus[i].name);
    tp_errf(e, TP_EDATA, "unknown %s '%s'%s (known: %s)",
            systems ? "system" : "GPU", name, hint, known);
    free(names);
}

const hw_gpu *hw_find_gpu(const hw_db *db, const char *name, tp_err *e)
{
    int i = find_gpu_index(db, name);
    if (i >= 0) return &db->gpus[i];
    unknown_name(db, 0, name, e);
    return NULL;
}

const hw_system *hw_find_system(const hw_db *db, const char *name, tp_err *e)
{
    int i = find_system_index(db, name);
    if (i >= 0) return &db->systems[i];
    unknown_name(db, 1, name, e);
    return NULL;
}
