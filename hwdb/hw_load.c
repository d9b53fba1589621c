/*
 * hw_load.c - the hardware database: reads GPU and system JSON files
 * (docs/hwdb.md) from the built-in folder and the user's, each parsed by
 * hw_parse.c, a file named like an entry merged over it as a partial
 * override, and finds the entries by name. Also the names of dtypes and
 * topologies, the problem sink and the database's interned strings.
 *
 * Loading never stops at the first problem, so `hw check` can list all.
 *
 * Not here: the fields of a file and their units (hw_parse.c); time
 * models. Measured-data entries are listed and their files checked for
 * existence; the estimator reads them.
 */
#define _GNU_SOURCE /* dladdr */
#include "hw_int.h"

#include <dlfcn.h>

#include <dirent.h>
#include <limits.h>
#include <math.h>
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

/* Each vendor's data-centre GPU generations, oldest first, by "arch":
 * NVIDIA Ampere (A100, 2020), Hopper (H100, 2022), Blackwell (B200, 2024;
 * Blackwell Ultra is "blackwell" too, gb300.json's notes); AMD CDNA 2
 * (MI250X, 2021), CDNA 3 (MI300X, 2023), CDNA 4 (MI355X, 2025). Launch
 * years from the vendors' announcements (NVIDIA GTC 2020, 2022, 2024
 * keynotes; AMD Instinct MI200 (Nov 2021), MI300 (Dec 2023), MI350 (Jun
 * 2025) launches). */
static const struct {
    const char *vendor, *arch;
} generations[] = {
    {"nvidia", "ampere"}, {"nvidia", "hopper"}, {"nvidia", "blackwell"},
    {"amd", "cdna2"},     {"amd", "cdna3"},     {"amd", "cdna4"},
};
#define N_GENERATIONS ((int)(sizeof generations / sizeof generations[0]))

int hw_gpu_generation(const hw_gpu *g)
{
    for (int i = 0; i < N_GENERATIONS; i++)
        if (strcmp(g->vendor, generations[i].vendor) == 0
            && strcmp(g->arch, generations[i].arch) == 0)
            return i;
    return -1;
}

int hw_gpu_nearest_generation(const hw_gpu *g, const hw_gpu *const *cands,
                              int n)
{
    int own = hw_gpu_generation(g), best = -1, best_gen = -1;
    for (int i = 0; own >= 0 && i < n; i++) {
        int gen = hw_gpu_generation(cands[i]);
        if (gen < 0 || gen > own || strcmp(cands[i]->vendor, g->vendor) != 0)
            continue;
        if (gen > best_gen
            || (gen == best_gen
                && strcmp(cands[i]->name, cands[best]->name) < 0))
            best = i, best_gen = gen;
    }
    return best;
}

const hw_gpu *hw_gpu_fp8_attention_of(const hw_gpu *g)
{
    if (g->fp8_attn_n >= 2) return g;
    if (g->models_like && g->models_like->fp8_attn_n >= 2) return g->models_like;
    return NULL;
}

int hw_gpu_fp8_attention(const hw_gpu *g, double seq, double *fwd,
                         double *bwd)
{
    *fwd = *bwd = 1;
    g = hw_gpu_fp8_attention_of(g);
    if (!g || !(seq > 0)) return 0;
    int n = g->fp8_attn_n;
    const double *x = g->fp8_attn_seq;
    int i = 0;
    while (i < n - 2 && seq > x[i + 1]) i++;
    double t = (log2(seq) - log2(x[i])) / (log2(x[i + 1]) - log2(x[i]));
    if (t < 0) t = 0;
    if (t > 1) t = 1;
    *fwd = g->fp8_attn_fwd[i] + t * (g->fp8_attn_fwd[i + 1] - g->fp8_attn_fwd[i]);
    *bwd = g->fp8_attn_bwd[i] + t * (g->fp8_attn_bwd[i + 1] - g->fp8_attn_bwd[i]);
    return 1;
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

void hw_sinkf(hw_sink *s, int status, const char *fmt, ...)
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
            hw_sinkf(s, TP_EDATA, "%s: $.name: \"%s\" is an alias of %s; an "
                     "override names the entry itself (\"name\": \"%s\")",
                     path, nm->valuestring, canon, canon);
        else
            hw_sinkf(s, TP_EDATA,
                     "%s: $.name: not an override: %s; a new entry needs "
                     "every required field", path, ue.msg);
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
        hw_sinkf(s, TP_EDATA, "%s: $.schema: a %s file in a %s directory", path,
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
        hw_sinkf(s, TP_ENOINPUT,
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
        /* g's own operator samples, if any, replace the borrowed ones
         * operator by operator (estimator/models.c est_models_open) */
        if (!like || like == g || like->models_like_name[0]
            || like->n_measured == 0) {
            hw_sinkf(s, TP_EDATA,
                     "%s: $.operator_models_like.gpu: \"%s\" must name another "
                     "GPU of the database that has samples of its own (no "
                     "chains)",
                     g->file, g->models_like_name);
            continue;
        }
        g->models_like = like;
    }
    /* The GPU whose kernel_efficiency_factor applies where a GPU has none
     * (estimator/kernel_eff.c): the one whose operator fits it borrows,
     * else the nearest generation of its vendor that has one, as
     * bench/validate_runs does for a family no fitted run covers (GH200
     * takes the H100's, not the A100's 1 that is only the unit). */
    const hw_gpu **fitted = tp_xmalloc(sizeof *fitted * (size_t)(db->n_gpus + 1));
    int nf = 0;
    for (int i = 0; i < db->n_gpus; i++)
        if (db->gpus[i].kernel_eff_factor > 0) fitted[nf++] = &db->gpus[i];
    for (int i = 0; i < db->n_gpus; i++) {
        hw_gpu *g = &db->gpus[i];
        g->kernel_eff_from = NULL;
        if (g->kernel_eff_factor > 0) continue;
        if (g->models_like && g->models_like->kernel_eff_factor > 0) {
            g->kernel_eff_from = g->models_like;
            continue;
        }
        int k = hw_gpu_nearest_generation(g, fitted, nf);
        if (k >= 0) g->kernel_eff_from = fitted[k];
    }
    free(fitted);
    for (int i = 0; i < db->n_systems; i++) {
        hw_system *y = &db->systems[i];
        int g = find_gpu_index(db, y->gpu_name);
        if (g < 0) {
            tp_err e = {0};
            hw_find_gpu(db, y->gpu_name, &e);
            hw_sinkf(s, TP_EDATA, "%s: $.gpu: %s", y->file, e.msg);
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
