/*
 * hw.c - the reports of `trainplan hw list`, `hw show NAME` and `hw check
 * FILE...`: the GPUs and systems of a hardware database, every number of
 * one with its source, and the check of GPU and system files (what the
 * loader refuses, then the measured samples and collective rows that
 * cannot be right on that hardware).
 *
 * Deliberately not here: the loader and its checks (hwdb/), the
 * plausibility rules (estimator/samples.c, comm_table.c).
 */
#include "report.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static cJSON *fields_json(const hw_field *f, int n)
{
    cJSON *obj = cJSON_CreateObject();
    for (int i = 0; i < n; i++) {
        cJSON *v = cJSON_CreateObject();
        cJSON_AddNumberToObject(v, "value", f[i].value);
        cJSON_AddStringToObject(v, "unit", f[i].unit);
        cJSON_AddStringToObject(v, "source", f[i].source);
        cJSON_AddItemToObject(obj, f[i].key, v);
    }
    return obj;
}

static cJSON *aliases_json(const char (*a)[HW_NAME_MAX], int n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(arr, cJSON_CreateString(a[i]));
    return arr;
}

static cJSON *measured_json(const hw_measured *m, int n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "kind", m[i].kind);
        cJSON_AddStringToObject(j, "op", m[i].op);
        cJSON_AddStringToObject(j, "dtype", m[i].dtype);
        cJSON_AddStringToObject(j, "file", m[i].path);
        cJSON_AddStringToObject(j, "source", m[i].source);
        cJSON_AddItemToArray(arr, j);
    }
    return arr;
}

static cJSON *gpu_json(const hw_gpu *g)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", g->name);
    cJSON_AddStringToObject(j, "display_name", g->display_name);
    cJSON_AddStringToObject(j, "vendor", g->vendor);
    cJSON_AddStringToObject(j, "arch", g->arch);
    cJSON_AddItemToObject(j, "aliases", aliases_json(g->aliases, g->n_aliases));
    cJSON *pk = cJSON_CreateObject();
    for (int d = 0; d < HW_DTYPE_COUNT; d++)
        cJSON_AddNumberToObject(pk, hw_dtype_names[d], g->peak_flops[d]);
    cJSON_AddItemToObject(j, "peak_flops", pk);
    cJSON_AddNumberToObject(j, "memory_bytes", g->mem_bytes);
    cJSON_AddNumberToObject(j, "memory_bw_bytes_per_s", g->mem_bw_bytes_per_s);
    cJSON_AddNumberToObject(j, "sm_count", g->sm_count);
    cJSON_AddNumberToObject(j, "clock_hz", g->clock_hz);
    cJSON_AddNumberToObject(j, "l2_bytes", g->l2_bytes);
    cJSON_AddNumberToObject(j, "scaleup_bw_bytes_per_s",
                            g->scaleup_bw_bytes_per_s);
    cJSON_AddNumberToObject(j, "power_w", g->power_w);
    cJSON_AddItemToObject(j, "fields", fields_json(g->fields, g->n_fields));
    cJSON_AddItemToObject(j, "measured", measured_json(g->measured, g->n_measured));
    if (g->models_like) {
        cJSON *l = cJSON_AddObjectToObject(j, "operator_models_like");
        cJSON_AddStringToObject(l, "gpu", g->models_like->name);
        cJSON_AddStringToObject(l, "note", g->models_like_note);
    }
    /* the fp8 attention ratios it uses: its own, or its models_like GPU's */
    const hw_gpu *fa = hw_gpu_fp8_attention_of(g);
    if (fa) {
        cJSON *a = cJSON_AddObjectToObject(j, "fp8_attention");
        cJSON_AddStringToObject(a, "gpu", fa->name);
        cJSON_AddItemToObject(a, "seq", cJSON_CreateDoubleArray(fa->fp8_attn_seq, fa->fp8_attn_n));
        cJSON_AddItemToObject(a, "fwd", cJSON_CreateDoubleArray(fa->fp8_attn_fwd, fa->fp8_attn_n));
        cJSON_AddItemToObject(a, "bwd", cJSON_CreateDoubleArray(fa->fp8_attn_bwd, fa->fp8_attn_n));
    }
    cJSON_AddStringToObject(j, "file", g->file);
    if (g->base_file) cJSON_AddStringToObject(j, "merged_over", g->base_file);
    return j;
}

static cJSON *system_json(const hw_system *y)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", y->name);
    cJSON_AddStringToObject(j, "display_name", y->display_name);
    cJSON_AddItemToObject(j, "aliases", aliases_json(y->aliases, y->n_aliases));
    cJSON_AddStringToObject(j, "gpu", y->gpu ? y->gpu->name : y->gpu_name);
    cJSON_AddNumberToObject(j, "gpus_per_node", y->gpus_per_node);
    cJSON_AddNumberToObject(j, "scaleup_domain_gpus", y->scaleup_domain_gpus);
    cJSON_AddNumberToObject(j, "max_nodes", y->max_nodes);
    cJSON *in = cJSON_CreateObject();
    cJSON_AddStringToObject(in, "fabric", y->intra_fabric);
    cJSON_AddStringToObject(in, "topology",
                            hw_topology_names[y->intra_topology]);
    cJSON_AddNumberToObject(in, "bw_bytes_per_s", y->intra_bw_bytes_per_s);
    cJSON_AddNumberToObject(in, "latency_s", y->intra_latency_s);
    cJSON_AddItemToObject(j, "intra_node", in);
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "network", y->inter_network);
    cJSON_AddStringToObject(out, "topology",
                            hw_topology_names[y->inter_topology]);
    cJSON_AddNumberToObject(out, "nics_per_node", y->nics_per_node);
    cJSON_AddNumberToObject(out, "nic_bw_bytes_per_s", y->nic_bw_bytes_per_s);
    cJSON_AddNumberToObject(out, "latency_s", y->inter_latency_s);
    cJSON_AddItemToObject(j, "inter_node", out);
    cJSON_AddNumberToObject(j, "price_usd_per_gpu_hour",
                            y->price_usd_per_gpu_hour);
    cJSON_AddItemToObject(j, "fields", fields_json(y->fields, y->n_fields));
    cJSON_AddItemToObject(j, "measured", measured_json(y->measured, y->n_measured));
    cJSON_AddStringToObject(j, "file", y->file);
    if (y->base_file) cJSON_AddStringToObject(j, "merged_over", y->base_file);
    return j;
}

/* Adds each line of text (may be NULL) to a JSON array. */
static void add_lines(cJSON *arr, char *text)
{
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        cJSON_AddItemToArray(arr, cJSON_CreateString(line));
        line = nl ? nl + 1 : line + strlen(line);
    }
}

/* buf = the aliases a user types (no spaces), comma-separated, or "-";
 * names with spaces (as GPUs report themselves) are in hw show and JSON. */
static void typed_aliases(char *buf, size_t cap, const char (*a)[HW_NAME_MAX],
                          int n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (strchr(a[i], ' ')) continue;
        int w = snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", a[i]);
        if (w < 0 || (size_t)w >= cap - len) break;
        len += (size_t)w;
    }
    if (!len) tp_strlcpy(buf, "-", cap);
}

/* "aliases: a, b, c" (every alias) as a line of hw show. */
static void print_aliases(FILE *f, const char (*a)[HW_NAME_MAX], int n)
{
    if (!n) return;
    fputs("aliases:", f);
    for (int i = 0; i < n; i++) fprintf(f, "%s %s", i ? "," : "", a[i]);
    fputc('\n', f);
}

int emit_hw_list(FILE *f, emit_format fmt, const hw_db *db)
{
    int ng = hw_gpu_count(db), ns = hw_system_count(db);
    if (fmt == EMIT_JSON) {
        cJSON *j = cJSON_CreateObject();
        cJSON *ga = cJSON_AddArrayToObject(j, "gpus");
        for (int i = 0; i < ng; i++) cJSON_AddItemToArray(ga, gpu_json(hw_gpu_at(db, i)));
        cJSON *sa = cJSON_AddArrayToObject(j, "systems");
        for (int i = 0; i < ns; i++)
            cJSON_AddItemToArray(sa, system_json(hw_system_at(db, i)));
        emit_print_json(f, j);
        return TP_OK;
    }
    static const char *gh[] = {"gpu",    "bf16 dense",      "fp8 dense",
                               "fp4 dense", "memory",       "HBM bw",
                               "scale-up bw/dir", "power", "aliases",
                               "name"};
    emit_table t;
    emit_table_init(&t, 10, gh, "lrrrrrrrll");
    for (int i = 0; i < ng; i++) {
        const hw_gpu *g = hw_gpu_at(db, i);
        char bf[32], f8[32], f4[32], mem[32], bw[32], su[32], pw[32];
        char al[HW_MAX_ALIASES * HW_NAME_MAX];
        typed_aliases(al, sizeof al, g->aliases, g->n_aliases);
        emit_fmt_si(bf, sizeof bf, g->peak_flops[HW_BF16], "FLOP/s");
        if (g->peak_flops[HW_FP8] > 0)
            emit_fmt_si(f8, sizeof f8, g->peak_flops[HW_FP8], "FLOP/s");
        else
            snprintf(f8, sizeof f8, "-");
        if (g->peak_flops[HW_FP4] > 0)
            emit_fmt_si(f4, sizeof f4, g->peak_flops[HW_FP4], "FLOP/s");
        else
            snprintf(f4, sizeof f4, "-");
        emit_fmt_bytes(mem, sizeof mem, g->mem_bytes);
        emit_fmt_si(bw, sizeof bw, g->mem_bw_bytes_per_s, "B/s");
        emit_fmt_si(su, sizeof su, g->scaleup_bw_bytes_per_s, "B/s");
        snprintf(pw, sizeof pw, "%.0f W", g->power_w);
        emit_table_row(&t, g->name, bf, f8, f4, mem, bw, su, pw, al,
                      g->display_name);
    }
    emit_table_print(&t, f, fmt);
    emit_table_free(&t);
    fputc('\n', f);
    static const char *sh[] = {"system", "gpu",  "gpus/node", "max nodes",
                               "intra-node", "inter-node", "$/GPU-h",
                               "aliases", "name"};
    emit_table_init(&t, 9, sh, "llrrllrll");
    for (int i = 0; i < ns; i++) {
        const hw_system *y = hw_system_at(db, i);
        char gpn[32], mx[32], intra[64], inter[80], price[32], bw[32];
        char al[HW_MAX_ALIASES * HW_NAME_MAX];
        typed_aliases(al, sizeof al, y->aliases, y->n_aliases);
        if (y->scaleup_domain_gpus != y->gpus_per_node)
            snprintf(gpn, sizeof gpn, "%d (domain %d)", y->gpus_per_node,
                     y->scaleup_domain_gpus);
        else
            snprintf(gpn, sizeof gpn, "%d", y->gpus_per_node);
        if (y->max_nodes)
            snprintf(mx, sizeof mx, "%d", y->max_nodes);
        else
            snprintf(mx, sizeof mx, "-");
        if (y->intra_topology == HW_TOPO_NONE) {
            snprintf(intra, sizeof intra, "-");
        } else {
            emit_fmt_si(bw, sizeof bw, y->intra_bw_bytes_per_s, "B/s");
            snprintf(intra, sizeof intra, "%s %s", y->intra_fabric, bw);
        }
        snprintf(inter, sizeof inter, "%d x %.0f Gb/s %s", y->nics_per_node,
                 y->nic_bw_bytes_per_s * 8 / 1e9, y->inter_network);
        snprintf(price, sizeof price, "%.2f", y->price_usd_per_gpu_hour);
        emit_table_row(&t, y->name, y->gpu ? y->gpu->name : y->gpu_name, gpn,
                      mx, intra, inter, price, al, y->display_name);
    }
    emit_table_print(&t, f, fmt);
    emit_table_free(&t);
    return TP_OK;
}

static void print_fields(FILE *f, const hw_field *fl, int n, emit_format fmt)
{
    static const char *hdr[] = {"field", "value", "unit", "source"};
    emit_table t;
    emit_table_init(&t, 4, hdr, "lrll");
    for (int i = 0; i < n; i++) {
        /* As written in the file: the units people read on datasheets. */
        char v[40];
        snprintf(v, sizeof v, "%.6g", fl[i].file_value);
        emit_table_row(&t, fl[i].key, v, fl[i].file_unit, fl[i].source);
    }
    emit_table_print(&t, f, fmt);
    emit_table_free(&t);
}

int emit_hw_show(FILE *f, emit_format fmt, const hw_db *db, const char *name,
                 tp_err *e)
{
    tp_err ge = {0}, se = {0};
    const hw_system *y = hw_find_system(db, name, &se);
    const hw_gpu *g = y ? NULL : hw_find_gpu(db, name, &ge);
    if (!y && !g) {
        /* Neither: report both lists of near names. */
        tp_errf(e, TP_EDATA, "%s; %s", se.msg, ge.msg);
        return TP_EDATA;
    }
    if (fmt == EMIT_JSON) {
        emit_print_json(f, y ? system_json(y) : gpu_json(g));
        return TP_OK;
    }
    if (fmt == EMIT_TABLE) {
        if (y) {
            fprintf(f, "system %s: %s\nfile: %s", y->name,
                    y->display_name, y->file);
            if (y->base_file)
                fprintf(f, " (merged over %s)", y->base_file);
            fputc('\n', f);
            print_aliases(f, y->aliases, y->n_aliases);
            fprintf(f, "gpu: %s; intra-node: %s (%s); inter-node: %s (%s)\n\n",
                    y->gpu->name, y->intra_fabric,
                    hw_topology_names[y->intra_topology], y->inter_network,
                    hw_topology_names[y->inter_topology]);
        } else {
            fprintf(f, "gpu %s: %s (%s, %s)\nfile: %s", g->name,
                    g->display_name, g->vendor, g->arch, g->file);
            if (g->base_file)
                fprintf(f, " (merged over %s)", g->base_file);
            fputc('\n', f);
            print_aliases(f, g->aliases, g->n_aliases);
            fputc('\n', f);
        }
    }
    if (y)
        print_fields(f, y->fields, y->n_fields, fmt);
    else
        print_fields(f, g->fields, g->n_fields, fmt);
    /* A system's table also shows its GPU, so one command shows the
     * whole cluster. */
    if (y && fmt == EMIT_TABLE) {
        fprintf(f, "\ngpu %s: %s\n\n", y->gpu->name, y->gpu->display_name);
        print_fields(f, y->gpu->fields, y->gpu->n_fields, fmt);
    }
    int nm = y ? y->n_measured : g->n_measured;
    if (nm && fmt == EMIT_TABLE)
        fprintf(f, "\n%d measured data file(s) listed\n", nm);
    const hw_gpu *og = y ? y->gpu : g;
    if (og->models_like && fmt == EMIT_TABLE)
        fprintf(f, "\noperator models: %s's fitted efficiencies on %s's "
                "own roofline (%s)\n", og->models_like->name, og->name,
                og->models_like_note);
    if (fmt == EMIT_TABLE) {
        const hw_gpu *fa = hw_gpu_fp8_attention_of(og);
        if (fa) {
            fprintf(f, "\nfp8 attention / bf16 (cuDNN's fused kernel, %s's "
                    "measurement), forward and backward by sequence length:\n",
                    fa->name);
            for (int i = 0; i < fa->fp8_attn_n; i++)
                fprintf(f, "  %8.0f  %5.3f  %5.3f\n", fa->fp8_attn_seq[i],
                        fa->fp8_attn_fwd[i], fa->fp8_attn_bwd[i]);
        }
    }
    return TP_OK;
}

/* Appends one formatted line to the growing string *text of *len bytes
 * (truncated to 1400 bytes; the caller's format ends it with a newline). */
static void append_line(char **text, size_t *len, const char *fmt, ...)
{
    char line[1400];
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (w < 0) return;
    if (w >= (int)sizeof line) w = (int)sizeof line - 1;
    *text = tp_xrealloc(*text, *len + (size_t)w + 1);
    memcpy(*text + *len, line, (size_t)w + 1);
    *len += (size_t)w;
}

/* The database of a's directories; where it does not open (the file
 * under check may be the broken one in --hwdb), the built-in one alone.
 * NULL (e set) when neither opens. The caller frees it. */
static hw_db *open_or_builtin(const emit_check_ask *a, tp_err *e)
{
    hw_db *db = hw_db_open(a->hwdb_dirs, a->n_hwdb, e);
    if (!db) {
        char builtin[4096];
        const char *dirs[1] = {builtin};
        hw_builtin_dir(builtin, sizeof builtin);
        db = hw_db_open_dirs(dirs, 1, e);
    }
    return db;
}

/* Sample hygiene over the operator samples a GPU file lists: appends, for
 * each sample file with implausible samples, a line with how many and why
 * the first of them cannot be right, to *text, and returns how many there
 * are in all. Not an error of the file: fits leave those times out by
 * default. A sample file that cannot be read at all is: its message goes
 * to *errs (every command that fits the GPU would stop on it). A file that
 * is not a GPU file has none. */
static int sample_warnings(const char *path, char **text, char **errs,
                           size_t *elen)
{
    tp_err e = {0};
    hw_db *db = hw_db_open_dirs(NULL, 0, &e);
    int nbad = 0;
    size_t len = 0;
    *text = NULL;
    if (!db || hw_db_add_file(db, path, &e) || hw_gpu_count(db) != 1) {
        hw_db_free(db);
        return 0;
    }
    const hw_gpu *g = hw_gpu_at(db, 0);
    for (int i = 0; i < g->n_measured; i++) {
        const hw_measured *m = &g->measured[i];
        int dt = hw_dtype_parse(m->dtype);
        est_sample *s;
        int n;
        if (strcmp(m->kind, "operator_samples") != 0) continue;
        if (est_read_samples(m->path, m->op, dt < 0 ? HW_FP16 : (hw_dtype)dt,
                             &s, &n, &e)) {
            append_line(errs, elen, "%s\n", e.msg);
            continue;
        }
        char why[200], first[200] = "";
        int nfile = 0, row = 0;
        int *ratio = tp_xmalloc((size_t)(n > 0 ? n : 1) * sizeof *ratio);
        if (est_samples_fp8_speedup(g, s, n, ratio, first, sizeof first, &e)
            <= 0)
            memset(ratio, 0, (size_t)n * sizeof *ratio), first[0] = '\0';
        for (int k = 0; k < n; k++) {
            int bad = est_sample_implausible(g, &s[k], why, sizeof why);
            if (!bad && !ratio[k]) continue;
            if (nfile++ == 0) {
                if (bad) memcpy(first, why, sizeof first);
                row = s[k].row;
            }
        }
        free(ratio);
        free(s);
        if (!nfile) continue;
        nbad += nfile;
        append_line(text, &len,
                    "%s:%d: %s %s: %d of %d sample(s); the first: %s\n",
                    m->path, row, m->op, m->dtype, nfile, n, first);
    }
    hw_db_free(db);
    return nbad;
}

/* Collective-table hygiene over the tables a system file lists: appends a
 * line per implausible row (at most `show`, then a count) to *text and
 * returns how many there are. The system's GPU is looked up in db. Not an
 * error of the file: the tables leave those rows out by default. A table
 * that cannot be read is, as in sample_warnings: its message goes to
 * *errs. */
static int table_warnings(const emit_check_ask *a, const char *path, int show,
                          char **text, size_t *len, char **errs,
                          size_t *elen)
{
    tp_err e = {0};
    hw_db *db = open_or_builtin(a, &e);
    if (!db) return 0;
    int nbad = 0;
    cJSON *root = NULL;
    char name[HW_NAME_MAX] = "";
    if (tp_json_load(path, &root, &e) == TP_OK) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(root, "name");
        const cJSON *sc = cJSON_GetObjectItemCaseSensitive(root, "schema");
        if (cJSON_IsString(nm) && cJSON_IsString(sc)
            && strcmp(sc->valuestring, "trainplan-system/1") == 0)
            tp_strlcpy(name, nm->valuestring, sizeof name);
        cJSON_Delete(root);
    }
    const hw_system *y = NULL;
    if (name[0] && hw_db_add_file(db, path, &e) == TP_OK)
        y = hw_find_system(db, name, &e);
    for (int i = 0; y && i < y->n_measured; i++) {
        const hw_measured *m = &y->measured[i];
        est_coll_row *r;
        int n;
        if (strcmp(m->kind, "collective_table") != 0) continue;
        if (est_coll_read_table(m->path, &r, &n, &e)) {
            append_line(errs, elen, "%s\n", e.msg);
            continue;
        }
        for (int k = 0; k < n; k++) {
            char why[300];
            if (!est_coll_row_implausible(y, &r[k], why, sizeof why)) continue;
            if (nbad++ >= show) continue;
            append_line(text, len, "%s:%d: %s %dx%d, %.6g bytes: %s\n",
                        m->path, r[k].line, est_coll_names[r[k].kind],
                        r[k].nodes, r[k].per_node, r[k].bytes, why);
        }
        free(r);
    }
    hw_db_free(db);
    return nbad;
}

int emit_hw_check(const emit_check_ask *a, FILE *f, tp_err *e)
{
    tp_err de = {0};
    hw_db *db = open_or_builtin(a, &de);
    int worst = TP_OK, bad = 0;
    cJSON *arr = a->format == EMIT_JSON ? cJSON_CreateArray() : NULL;
    for (int i = 0; i < a->nfiles; i++) {
        char *report = NULL;
        int rc = hw_check_file(db, a->files[i], &report);
        if (rc) {
            bad++;
            if (worst == TP_OK || rc == TP_ENOINPUT) worst = rc;
        }
        char *warn = NULL, *errs = NULL;
        size_t elen = 0;
        enum { SHOW = 5 };
        int nwarn = rc ? 0 : sample_warnings(a->files[i], &warn, &errs, &elen);
        char *twarn = NULL;
        size_t tlen = 0;
        int ntwarn = rc ? 0
                        : table_warnings(a, a->files[i], SHOW, &twarn, &tlen,
                                         &errs, &elen);
        if (errs) {
            /* A measured file the loaders refuse: a problem of this file,
             * as estimate and search would stop on it. */
            rc = TP_EDATA;
            bad++;
            if (worst == TP_OK) worst = rc;
            free(report);
            report = errs;
            errs = NULL;
        }
        if (arr) {
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "file", a->files[i]);
            cJSON_AddBoolToObject(j, "ok", rc == TP_OK);
            cJSON *pa = cJSON_AddArrayToObject(j, "problems");
            add_lines(pa, report);
            cJSON_AddNumberToObject(j, "implausible_samples", nwarn);
            add_lines(cJSON_AddArrayToObject(j, "implausible_examples"), warn);
            cJSON_AddNumberToObject(j, "implausible_table_rows", ntwarn);
            add_lines(cJSON_AddArrayToObject(j, "implausible_table_examples"),
                      twarn);
            cJSON_AddItemToArray(arr, j);
        } else if (rc == TP_OK) {
            fprintf(f, "%s: ok\n", a->files[i]);
            if (nwarn) {
                fprintf(f,
                        "%s: warning: %d measured sample(s) cannot be right "
                        "on this GPU; fits leave those times out "
                        "(--keep-bad keeps them); per sample file:\n",
                        a->files[i], nwarn);
                fputs(warn, f);
            }
            if (ntwarn) {
                fprintf(f,
                        "%s: warning: %d measured collective row(s) cannot be "
                        "right on this system; the tables leave them out "
                        "(--keep-bad keeps them)%s\n",
                        a->files[i], ntwarn,
                        ntwarn > SHOW ? "; the first:" : ":");
                fputs(twarn, f);
            }
        } else {
            /* Problems are diagnostics: stderr, and also the data of this
             * command, so they go to the output too. */
            fputs(report, f);
        }
        free(report);
        free(warn);
        free(twarn);
    }
    if (arr) emit_print_json(f, arr);
    hw_db_free(db);
    if (bad)
        tp_errf(e, worst, "%d of %d file(s) have problems", bad, a->nfiles);
    return worst;
}
