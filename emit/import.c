/*
 * import.c - the work of `trainplan hw import-nccl-tests -o DIR LOG...`:
 * turns the output of NVIDIA's nccl-tests into measured collective tables
 * of a system, in a hardware database directory DIR, so that `--hwdb DIR`
 * gives the user's own network to every command.
 *
 * DIR gets measured/<system>/nccl-tests_<collective>_<N>x<G>.csv (one per
 * collective and group shape; an earlier table of that shape is replaced)
 * and systems/<system>.json: the system's file (DIR's own copy when one
 * is there, else the one the database loaded) with those tables listed
 * in `measured`. The tables its other entries list move with it: one
 * whose relative path stays inside DIR is copied to that place in DIR
 * (the path is kept, so DIR still works once moved or once the database
 * it came from is rebuilt elsewhere); an absolute path is kept; a
 * relative one that leaves DIR becomes absolute. Every log is parsed
 * before anything is written; files are written beside their targets
 * (emit/out.c's writer) and renamed into place only when all of them are
 * complete, so a bad log leaves DIR as it was.
 *
 * The log parser is estimator/nccl_tests.c; the caller parses every log
 * (est_nccl_parse) before calling, so nothing is written unless all are
 * good.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "report.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkdir -p; TP_OK or TP_EIO. */
static int make_dirs(const char *path, tp_err *e)
{
    char buf[PATH_MAX];
    tp_strlcpy(buf, path, sizeof buf);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            struct stat st;
            if (stat(buf, &st) != 0) {
                if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                    return tp_errf(e, TP_EIO, "%s: cannot create: %s", buf,
                                   strerror(errno));
            } else if (!S_ISDIR(st.st_mode)) {
                return tp_errf(e, TP_EIO, "%s: exists and is not a directory",
                               buf);
            }
            *p = c;
            if (!c) break;
        }
    }
    return TP_OK;
}

/* A file being written: through emit/out.c's writer (a temporary file
 * beside its target, a replaced file's mode kept, a new one 0666 less the
 * umask, removed on a signal), finished first and put in place only when
 * every file is complete. */
typedef struct pending_file {
    char target[PATH_MAX];
    emit_out o;
} pending_file;

static int begin_file(pending_file *p, const char *target, tp_err *e)
{
    tp_strlcpy(p->target, target, sizeof p->target);
    return emit_out_open(&p->o, p->target, NULL, e);
}

/* One table to write: the merged rows of a collective and group shape. */
typedef struct out_table {
    est_coll kind;
    int nodes, per_node;
    est_coll_row *rows;
    int n, cap;
    int n_unverified;
    char logs[1024];     /* "file:line, ..." of the sections it came from */
    char version[160];
    char device[96];
} out_table;

static int cmp_row(const void *a, const void *b)
{
    const est_coll_row *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
    return 0;
}

/* The system the logs ran on: --system, else the one system whose GPU is
 * the device the logs name. */
static const hw_system *pick_system(const emit_import_ask *a,
                                    const hw_db *db, tp_err *e)
{
    const est_nccl_test *t = a->tests;
    const char *device = NULL;
    for (int i = 0; i < a->ntests && !device; i++)
        if (t[i].device[0]) device = t[i].device;
    tp_err ge = {0};
    const hw_gpu *g = device ? hw_find_gpu(db, device, &ge) : NULL;
    if (a->system) {
        const hw_system *y = hw_find_system(db, a->system, e);
        if (y && g && y->gpu != g)
            fprintf(a->err,
                    "trainplan: warning: the logs ran on %s (%s), but %s has "
                    "%s; importing as asked\n",
                    device, g->name, y->name, y->gpu->name);
        return y;
    }
    if (!g) {
        tp_errf(e, TP_EUSAGE,
                "give --system: %s",
                device ? "the GPU the logs name is not in the hardware "
                         "database"
                       : "the logs do not name their GPU");
        return NULL;
    }
    const hw_system *found = NULL;
    char names[512] = "";
    int n = 0;
    for (int i = 0; i < hw_system_count(db); i++) {
        const hw_system *y = hw_system_at(db, i);
        if (y->gpu != g) continue;
        found = y;
        size_t at = strlen(names);
        snprintf(names + at, sizeof names - at, "%s%s", n++ ? ", " : "",
                 y->name);
    }
    if (n == 1) return found;
    tp_errf(e, TP_EUSAGE,
            "give --system: the logs ran on %s (%s), %s",
            device, g->name,
            n ? "which several systems have" : "which no system has");
    if (n) {
        size_t at = strlen(e->msg);
        snprintf(e->msg + at, sizeof e->msg - at, " (%s)", names);
    }
    return NULL;
}

/* Rewrites a measured entry's "file" (relative to from_dir) so it is
 * valid from to_dir: unchanged when the two are the same directory, else
 * absolute. */
static void fix_entry_path(cJSON *ent, const char *from_dir, int same_dir)
{
    cJSON *f = cJSON_GetObjectItemCaseSensitive(ent, "file");
    if (same_dir || !cJSON_IsString(f) || f->valuestring[0] == '/') return;
    char joined[PATH_MAX * 2], abs[PATH_MAX];
    snprintf(joined, sizeof joined, "%s/%s", from_dir, f->valuestring);
    if (!realpath(joined, abs)) tp_strlcpy(abs, joined, sizeof abs);
    cJSON_SetValuestring(f, abs);
}

/* Where a measured entry's relative path lands inside DIR once the
 * system file sits in DIR/systems/: "../measured/eos/x.csv" is
 * "measured/eos/x.csv" in *norm. 0 when the path is absolute, or leaves
 * DIR ("../../x.csv"), or names a directory. Lexical, as the loader
 * joins it: nothing on disk is looked at. */
static int rel_inside(const char *rel, char *norm, size_t cap)
{
    if (!rel[0] || rel[0] == '/') return 0;
    enum { MAX_PARTS = 64 };
    const char *part[MAX_PARTS];
    size_t len[MAX_PARTS];
    int n = 0;
    part[n] = "systems";
    len[n++] = 7;
    for (const char *p = rel; *p;) {
        const char *q = strchr(p, '/');
        size_t k = q ? (size_t)(q - p) : strlen(p);
        if (k == 0 || (k == 1 && p[0] == '.')) {
            /* "a//b", "./a": nothing */
        } else if (k == 2 && p[0] == '.' && p[1] == '.') {
            if (n == 0) return 0;
            n--;
        } else {
            if (n == MAX_PARTS) return 0;
            part[n] = p;
            len[n++] = k;
        }
        if (!q) break;
        p = q + 1;
    }
    if (n == 0 || rel[strlen(rel) - 1] == '/') return 0;
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        if (at + len[i] + 2 > cap) return 0;
        if (i) norm[at++] = '/';
        memcpy(norm + at, part[i], len[i]);
        at += len[i];
    }
    norm[at] = '\0';
    return 1;
}

/* Whether files a and b hold the same bytes (both readable). */
static int same_bytes(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        int ca = getc(fa), cb = getc(fb);
        if (ca != cb) same = 0;
        if (ca == EOF) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

/* Copies src into a pending file for target (renamed into place with the
 * others). TP_OK, or TP_EIO/TP_ENOINPUT with a message. */
static int copy_file(pending_file *p, const char *src, const char *target,
                     tp_err *e)
{
    FILE *in = fopen(src, "rb");
    if (!in)
        return tp_errf(e, TP_ENOINPUT, "%s: cannot read: %s", src,
                       strerror(errno));
    int rc = begin_file(p, target, e);
    char buf[65536];
    size_t k;
    while (rc == TP_OK && (k = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, k, p->o.f) != k)
            rc = tp_errf(e, TP_EIO, "%s: write failed: %s", target,
                         strerror(errno));
    if (rc == TP_OK && ferror(in))
        rc = tp_errf(e, TP_EIO, "%s: read failed", src);
    fclose(in);
    if (rc == TP_OK) rc = emit_out_finish(&p->o, e);
    return rc;
}

/* The resolved path of a measured entry, for replacing one. */
static void entry_abs(const cJSON *ent, const char *dir, char *out, size_t cap)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(ent, "file");
    out[0] = '\0';
    if (!cJSON_IsString(f)) return;
    char joined[PATH_MAX * 2];
    if (f->valuestring[0] == '/')
        tp_strlcpy(joined, f->valuestring, sizeof joined);
    else
        snprintf(joined, sizeof joined, "%s/%s", dir, f->valuestring);
    char buf[PATH_MAX];
    tp_strlcpy(out, realpath(joined, buf) ? buf : joined, cap);
}

static void dir_of(const char *file, char *out, size_t cap)
{
    tp_strlcpy(out, file, cap);
    char *slash = strrchr(out, '/');
    if (slash)
        *slash = '\0';
    else
        tp_strlcpy(out, ".", cap);
}

int emit_nccl_import(const emit_import_ask *a, const hw_db *db, FILE *f,
                     tp_err *e)
{
    const est_nccl_test *tests = a->tests;
    int nt = a->ntests, rc = TP_OK;
    const hw_system *y = pick_system(a, db, e);
    out_table *tab = NULL;
    int ntab = 0;
    pending_file *files = NULL;
    int nfiles = 0;
    cJSON *doc = NULL;
    if (!y) {
        rc = e->status;
        goto done;
    }
    /* Merge sections into one table per collective and group shape. */
    for (int i = 0; i < nt; i++) {
        const est_nccl_test *t = &tests[i];
        est_group g = {t->nodes * t->per_node, t->per_node, t->nodes, 0};
        char why[256];
        if (est_group_check(y, &g, why, sizeof why)) {
            rc = tp_errf(e, TP_EDATA, "%s:%d: the test ran on %d x %d GPUs: %s",
                         t->file, t->first_line, t->nodes, t->per_node, why);
            goto done;
        }
        if (g.size < 2) {
            rc = tp_errf(e, TP_EDATA,
                         "%s:%d: the test ran on one GPU, which measures a "
                         "local copy, not a collective",
                         t->file, t->first_line);
            goto done;
        }
        int k = 0;
        while (k < ntab && !(tab[k].kind == t->kind && tab[k].nodes == t->nodes
                             && tab[k].per_node == t->per_node))
            k++;
        if (k == ntab) {
            tab = tp_xrealloc(tab, (size_t)(ntab + 1) * sizeof *tab);
            memset(&tab[ntab], 0, sizeof *tab);
            tab[ntab].kind = t->kind;
            tab[ntab].nodes = t->nodes;
            tab[ntab].per_node = t->per_node;
            ntab++;
        }
        out_table *x = &tab[k];
        if (x->n + t->n_rows > x->cap) {
            x->cap = x->n + t->n_rows;
            x->rows = tp_xrealloc(x->rows, (size_t)x->cap * sizeof *x->rows);
        }
        memcpy(x->rows + x->n, t->rows, (size_t)t->n_rows * sizeof *t->rows);
        x->n += t->n_rows;
        x->n_unverified += t->n_unverified;
        size_t at = strlen(x->logs);
        snprintf(x->logs + at, sizeof x->logs - at, "%s%s:%d", at ? ", " : "",
                 t->file, t->first_line);
        if (!x->version[0]) tp_strlcpy(x->version, t->version, sizeof x->version);
        if (!x->device[0]) tp_strlcpy(x->device, t->device, sizeof x->device);
    }
    /* The system file to extend: DIR's own copy, else the loaded one. */
    char sysdir[PATH_MAX], measdir[PATH_MAX], target_json[PATH_MAX * 2];
    snprintf(sysdir, sizeof sysdir, "%s/systems", a->out_dir);
    snprintf(measdir, sizeof measdir, "%s/measured/%s", a->out_dir, y->name);
    snprintf(target_json, sizeof target_json, "%s/%s.json", sysdir, y->name);
    struct stat st;
    const char *base = stat(target_json, &st) == 0 ? target_json : y->file;
    if ((rc = tp_json_load(base, &doc, e))) goto done;
    if ((rc = make_dirs(sysdir, e)) || (rc = make_dirs(measdir, e))) goto done;
    char base_dir[PATH_MAX], base_real[PATH_MAX], sys_real[PATH_MAX];
    dir_of(base, base_dir, sizeof base_dir);
    int same = realpath(base_dir, base_real) && realpath(sysdir, sys_real)
               && strcmp(base_real, sys_real) == 0;
    cJSON *meas = cJSON_GetObjectItemCaseSensitive(doc, "measured");
    if (!cJSON_IsArray(meas)) {
        cJSON_DeleteItemFromObjectCaseSensitive(doc, "measured");
        meas = cJSON_AddArrayToObject(doc, "measured");
    }
    cJSON *sources = cJSON_GetObjectItemCaseSensitive(doc, "sources");
    if (!cJSON_IsObject(sources)) {
        rc = tp_errf(e, TP_EDATA, "%s: $.sources: expected an object", base);
        goto done;
    }
    files = tp_xcalloc((size_t)ntab + 1, sizeof *files);
    static const char *hdr[] = {"collective", "group", "sizes", "rows",
                                "unverified", "file"};
    emit_table summary;
    emit_table_init(&summary, 6, hdr, "llrrrl");
    for (int k = 0; k < ntab && rc == TP_OK; k++) {
        out_table *x = &tab[k];
        qsort(x->rows, (size_t)x->n, sizeof *x->rows, cmp_row);
        char name[128], path[PATH_MAX * 2], key[96];
        snprintf(name, sizeof name, "nccl-tests_%s_%dx%d.csv",
                 est_coll_names[x->kind], x->nodes, x->per_node);
        snprintf(path, sizeof path, "%s/%s", measdir, name);
        snprintf(key, sizeof key, "nccl_tests_%s_%dx%d",
                 est_coll_names[x->kind], x->nodes, x->per_node);
        pending_file *p = &files[nfiles++];
        if ((rc = begin_file(p, path, e))) break;
        fprintf(p->o.f,
                "# nccl-tests results imported by trainplan hw "
                "import-nccl-tests\n# logs: %s\n",
                x->logs);
        if (x->version[0]) fprintf(p->o.f, "# %s\n", x->version);
        if (x->device[0]) fprintf(p->o.f, "# device: %s\n", x->device);
        fprintf(p->o.f,
                "# time = mean of the out-of-place and in-place times; "
                "bytes = nccl-tests' size column\n"
                "collective,dtype,nodes,gpus_per_node,bytes,time_us\n");
        for (int i = 0; i < x->n; i++)
            fprintf(p->o.f, "%s,%s,%d,%d,%.0f,%.6g\n", est_coll_names[x->kind],
                    hw_dtype_names[x->rows[i].dtype], x->nodes, x->per_node,
                    x->rows[i].bytes, x->rows[i].time_s * 1e6);
        if ((rc = emit_out_finish(&p->o, e))) break;
        /* Replace an entry for the same file; keep the rest. */
        char abs_new[PATH_MAX + 160];
        tp_strlcpy(abs_new, path, sizeof abs_new);
        char buf[PATH_MAX];
        if (realpath(measdir, buf))
            snprintf(abs_new, sizeof abs_new, "%s/%s", buf, name);
        for (int i = cJSON_GetArraySize(meas) - 1; i >= 0; i--) {
            char old[PATH_MAX + 160];
            entry_abs(cJSON_GetArrayItem(meas, i), base_dir, old, sizeof old);
            if (strcmp(old, abs_new) == 0) cJSON_DeleteItemFromArray(meas, i);
        }
        char cite[2048];
        snprintf(cite, sizeof cite,
                 "nccl-tests output (github.com/NVIDIA/nccl-tests) imported by "
                 "trainplan hw import-nccl-tests from %s%s%s%s%s: %s over %d "
                 "node(s) x %d GPU(s), %d sizes, time = mean of the "
                 "out-of-place and in-place times%s",
                 x->logs, x->version[0] ? "; " : "", x->version,
                 x->device[0] ? "; device " : "", x->device,
                 est_coll_names[x->kind], x->nodes, x->per_node, x->n,
                 x->n_unverified ? "; some halves unverified (#wrong N/A)"
                                 : "");
        cJSON_DeleteItemFromObjectCaseSensitive(sources, key);
        cJSON_AddStringToObject(sources, key, cite);
        char rel[256];
        snprintf(rel, sizeof rel, "../measured/%s/%s", y->name, name);
        cJSON *ent = cJSON_CreateObject();
        cJSON_AddStringToObject(ent, "kind", "collective_table");
        cJSON_AddStringToObject(ent, "op", est_coll_names[x->kind]);
        cJSON_AddStringToObject(ent, "dtype", hw_dtype_names[x->rows[0].dtype]);
        cJSON_AddStringToObject(ent, "file", rel);
        cJSON_AddStringToObject(ent, "source", key);
        /* Mark it so the path fix below leaves it alone. */
        cJSON_AddBoolToObject(ent, "__new", 1);
        cJSON_AddItemToArray(meas, ent);
        char grp[32], sizes[64], rows[16], unv[16], lo[24], hi[24];
        snprintf(grp, sizeof grp, "%dx%d", x->nodes, x->per_node);
        emit_fmt_bytes(lo, sizeof lo, x->rows[0].bytes);
        emit_fmt_bytes(hi, sizeof hi, x->rows[x->n - 1].bytes);
        snprintf(sizes, sizeof sizes, "%s-%s", lo, hi);
        snprintf(rows, sizeof rows, "%d", x->n);
        snprintf(unv, sizeof unv, "%d", x->n_unverified);
        emit_table_row(&summary, est_coll_names[x->kind], grp, sizes, rows, unv,
                      path);
    }
    if (rc == TP_OK) {
        /* The system file moves from base_dir to DIR/systems: a table it
         * lists by a relative path that stays inside DIR is copied to
         * that place in DIR, so the path stays relative and DIR works
         * wherever it is moved and whatever becomes of the database it
         * came from (docs/hwdb.md: `file` is relative to the JSON file).
         * An absolute path is the user's own and stays; a relative one
         * that leaves DIR becomes absolute, as before. */
        int nmeas = cJSON_GetArraySize(meas);
        files = tp_xrealloc(files, (size_t)(nfiles + nmeas + 1) * sizeof *files);
        memset(files + nfiles, 0, (size_t)(nmeas + 1) * sizeof *files);
        /* each writer's path names its own entry's target, moved with it */
        for (int k = 0; k < nfiles; k++) files[k].o.path = files[k].target;
        for (int i = nmeas - 1; i >= 0 && rc == TP_OK; i--) {
            cJSON *ent = cJSON_GetArrayItem(meas, i);
            if (cJSON_GetObjectItemCaseSensitive(ent, "__new")) {
                cJSON_DeleteItemFromObjectCaseSensitive(ent, "__new");
                continue;
            }
            const cJSON *file = cJSON_GetObjectItemCaseSensitive(ent, "file");
            char norm[PATH_MAX];
            if (same || !cJSON_IsString(file)
                || !rel_inside(file->valuestring, norm, sizeof norm)) {
                fix_entry_path(ent, base_dir, same);
                continue;
            }
            char src[PATH_MAX * 2], dst[PATH_MAX * 2];
            snprintf(src, sizeof src, "%s/%s", base_dir, file->valuestring);
            snprintf(dst, sizeof dst, "%s/%s", a->out_dir, norm);
            /* an imported table of that name replaces the listed one */
            int replaced = 0;
            for (int k = 0; k < ntab && !replaced; k++)
                replaced = strcmp(files[k].target, dst) == 0;
            if (replaced) {
                cJSON_DeleteItemFromArray(meas, i);
                continue;
            }
            struct stat ds;
            if (stat(dst, &ds) == 0) {
                if (!same_bytes(src, dst))
                    rc = tp_errf(e, TP_EUSAGE,
                                 "%s: exists and differs from %s, which the "
                                 "system file lists (as %s) and the import "
                                 "would copy there; move it away or import "
                                 "into another directory",
                                 dst, src, file->valuestring);
                continue; /* the same table is there already */
            }
            char parent[PATH_MAX * 2];
            dir_of(dst, parent, sizeof parent);
            if ((rc = make_dirs(parent, e))) break;
            rc = copy_file(&files[nfiles++], src, dst, e);
        }
    }
    if (rc == TP_OK) {
        pending_file *p = &files[nfiles++];
        char *text = cJSON_Print(doc);
        if (!(rc = begin_file(p, target_json, e))) {
            fputs(text, p->o.f);
            fputc('\n', p->o.f);
            rc = emit_out_finish(&p->o, e);
        }
        cJSON_free(text);
    }
    /* All written: move them into place. */
    for (int i = 0; i < nfiles && rc == TP_OK; i++)
        rc = emit_out_commit(&files[i].o, e);
    if (rc == TP_OK && a->format == EMIT_JSON) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "system", y->name);
        cJSON_AddStringToObject(j, "system_file", target_json);
        cJSON *arr = cJSON_AddArrayToObject(j, "tables");
        for (int k = 0; k < ntab; k++) {
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "collective", est_coll_names[tab[k].kind]);
            cJSON_AddNumberToObject(x, "nodes", tab[k].nodes);
            cJSON_AddNumberToObject(x, "gpus_per_node", tab[k].per_node);
            cJSON_AddNumberToObject(x, "rows", tab[k].n);
            cJSON_AddNumberToObject(x, "rows_unverified", tab[k].n_unverified);
            cJSON_AddStringToObject(x, "file", files[k].target);
            cJSON_AddItemToArray(arr, x);
        }
        emit_print_json(f, j);
    } else if (rc == TP_OK) {
        emit_table_print(&summary, f, a->format);
        if (a->format == EMIT_TABLE)
            fprintf(f,
                    "\nwrote %s; use it with --hwdb %s (e.g. trainplan --hwdb "
                    "%s coll cv --system %s)\n",
                    target_json, a->out_dir, a->out_dir, y->name);
    }
    emit_table_free(&summary);
done:
    for (int i = 0; i < nfiles; i++) emit_out_discard(&files[i].o);
    free(files);
    for (int k = 0; k < ntab; k++) free(tab[k].rows);
    free(tab);
    cJSON_Delete(doc);
    return rc;
}
