/*
 * text.c - how tables, JSON documents, numbers and prose look: aligned
 * tables and RFC 4180 CSV, the schema version every JSON document
 * carries, the JSON helpers of a layout's fields (recomputed modules,
 * pipeline split, memory savers, error band), human-readable counts and
 * bytes, and prose wrapped to the text width.
 */
#include "emit.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void emit_table_init(emit_table *t, int ncols, const char **headers,
                    const char *align)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->headers = headers;
    t->align = align;
}

void emit_table_row(emit_table *t, ...)
{
    if (t->nrows == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->cells = tp_xrealloc(t->cells,
                               (size_t)t->cap * (size_t)t->ncols * sizeof *t->cells);
    }
    va_list ap;
    va_start(ap, t);
    for (int c = 0; c < t->ncols; c++) {
        const char *s = va_arg(ap, const char *);
        t->cells[t->nrows * t->ncols + c] = tp_xstrdup(s ? s : "");
    }
    va_end(ap);
    t->nrows++;
}

void emit_table_rowv(emit_table *t, const char *const *cells, int n)
{
    if (t->nrows == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->cells = tp_xrealloc(t->cells,
                               (size_t)t->cap * (size_t)t->ncols * sizeof *t->cells);
    }
    for (int c = 0; c < t->ncols; c++)
        t->cells[t->nrows * t->ncols + c] =
            tp_xstrdup(c < n && cells[c] ? cells[c] : "");
    t->nrows++;
}

/* RFC 4180: a cell with a comma, quote or line break is quoted, its
 * quotes doubled. "-", the table's mark for a missing value, is an empty
 * cell, as JSON's null is (a reader would take "-" for text). */
static void csv_cell(FILE *f, const char *s)
{
    if (!strcmp(s, EMIT_MISSING)) return;
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void emit_table_print(const emit_table *t, FILE *f, emit_format fmt)
{
    if (fmt == EMIT_CSV) {
        for (int c = 0; c < t->ncols; c++) {
            if (c) fputc(',', f);
            csv_cell(f, t->headers[c]);
        }
        fputc('\n', f);
        for (int r = 0; r < t->nrows; r++) {
            for (int c = 0; c < t->ncols; c++) {
                if (c) fputc(',', f);
                csv_cell(f, t->cells[r * t->ncols + c]);
            }
            fputc('\n', f);
        }
        return;
    }
    int *w = tp_xcalloc((size_t)t->ncols, sizeof *w);
    for (int c = 0; c < t->ncols; c++) {
        w[c] = (int)strlen(t->headers[c]);
        for (int r = 0; r < t->nrows; r++) {
            int n = (int)strlen(t->cells[r * t->ncols + c]);
            if (n > w[c]) w[c] = n;
        }
    }
    for (int r = -1; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            const char *s = r < 0 ? t->headers[c] : t->cells[r * t->ncols + c];
            int last = c == t->ncols - 1;
            if (t->align[c] == 'r')
                fprintf(f, "%*s", w[c], s);
            else if (last)
                fputs(s, f); /* no trailing blanks */
            else
                fprintf(f, "%-*s", w[c], s);
            if (!last) fputs("  ", f);
        }
        fputc('\n', f);
    }
    free(w);
}

void emit_table_free(emit_table *t)
{
    for (int i = 0; i < t->nrows * t->ncols; i++) free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

cJSON *emit_json_version(cJSON *v)
{
    if (cJSON_IsArray(v)) {
        cJSON *x;
        cJSON_ArrayForEach(x, v) if (cJSON_IsObject(x)) emit_json_version(x);
        return v;
    }
    if (!cJSON_IsObject(v) || cJSON_GetObjectItemCaseSensitive(v, "schema_version"))
        return v;
    /* Added last (which names it), then moved first: cJSON has no call
     * that inserts a named member. */
    cJSON_AddNumberToObject(v, "schema_version", EMIT_SCHEMA_VERSION);
    cJSON *n = cJSON_DetachItemFromObjectCaseSensitive(v, "schema_version");
    cJSON_InsertItemInArray(v, 0, n);
    return v;
}

void emit_print_json(FILE *f, cJSON *v)
{
    /* cJSON_Print's bytes, written faster (hwdb/tp_json_print.c) */
    char *s = tp_json_print(emit_json_version(v), 1);
    if (s) {
        fputs(s, f);
        fputc('\n', f);
        free(s);
    }
    cJSON_Delete(v);
}

void emit_fmt_count(char *buf, size_t cap, double v)
{
    static const struct { double div; const char *suffix; } units[] = {
        {1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (fabs(v) >= units[i].div) {
            snprintf(buf, cap, "%.2f %s", v / units[i].div, units[i].suffix);
            return;
        }
    snprintf(buf, cap, "%.0f", v);
}

void emit_fmt_si(char *buf, size_t cap, double v, const char *unit)
{
    static const struct { double mul; const char *prefix; } pre[] = {
        {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"},
        {1, ""},     {1e-3, "m"}, {1e-6, "u"}, {1e-9, "n"}};
    if (v == 0) {
        snprintf(buf, cap, "0 %s", unit);
        return;
    }
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        if (fabs(v) >= pre[i].mul * 0.9995) {
            snprintf(buf, cap, "%.4g %s%s", v / pre[i].mul, pre[i].prefix, unit);
            return;
        }
    snprintf(buf, cap, "%.4g %s", v, unit);
}

void emit_fmt_bytes(char *buf, size_t cap, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (fabs(bytes) >= 1024 && u < 5) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

void emit_json_rc_modules(cJSON *o, const space_layout *l)
{
    cJSON *arr = cJSON_AddArrayToObject(o, "recompute_modules");
    unsigned k = space_recompute_modules(l);
    for (int b = 0; arr && b < SPACE_RC_COUNT; b++)
        if (k & (1u << b))
            cJSON_AddItemToArray(arr,
                                 cJSON_CreateString(space_rc_module_names[b]));
}

void emit_json_split(cJSON *o, const space_model *m, const space_layout *l)
{
    cJSON *s = cJSON_AddObjectToObject(o, "pipeline_split");
    int acc = l->pp_account > 0 ? l->pp_account : 0;
    space_split sp;
    space_reject rj = space_split_resolve(m, l, &sp, NULL, 0);
    cJSON_AddBoolToObject(s, "account_for_embedding_in_pipeline_split",
                          (acc & SPACE_PP_EMBED) != 0);
    cJSON_AddBoolToObject(s, "account_for_loss_in_pipeline_split",
                          (acc & SPACE_PP_LOSS) != 0);
    if (l->pp_first > 0)
        cJSON_AddNumberToObject(s, "decoder_first_pipeline_num_layers",
                                (double)l->pp_first);
    else
        cJSON_AddNullToObject(s, "decoder_first_pipeline_num_layers");
    if (l->pp_last > 0)
        cJSON_AddNumberToObject(s, "decoder_last_pipeline_num_layers",
                                (double)l->pp_last);
    else
        cJSON_AddNullToObject(s, "decoder_last_pipeline_num_layers");
    if (l->pp_layout)
        cJSON_AddStringToObject(s, "pipeline_model_parallel_layout",
                                l->pp_layout->text);
    else
        cJSON_AddNullToObject(s, "pipeline_model_parallel_layout");
    if (rj != SPACE_OK)
        cJSON_AddStringToObject(s, "refused", space_reject_names[rj]);
    else
        cJSON_AddNullToObject(s, "refused");
    cJSON *st = cJSON_AddArrayToObject(s, "layers_per_stage");
    int64_t mtp_stage = -1;
    for (int64_t k = 0; k < sp.pp * sp.vpp; k++) {
        space_chunk c;
        space_split_chunk(&sp, k % sp.pp, k / sp.pp, &c);
        cJSON_AddItemToArray(st, cJSON_CreateNumber((double)c.layers));
        if (c.mtp > 0) mtp_stage = k;
    }
    cJSON *rk = cJSON_AddArrayToObject(s, "layers_per_pipeline_rank");
    for (int64_t r = 0; r < sp.pp; r++)
        cJSON_AddItemToArray(
            rk, cJSON_CreateNumber((double)space_split_rank_layers(&sp, r)));
    if (mtp_stage >= 0)
        cJSON_AddNumberToObject(s, "mtp_stage", (double)mtp_stage);
    else
        cJSON_AddNullToObject(s, "mtp_stage");
}

void emit_json_savers(cJSON *o, const space_layout *l)
{
    cJSON *s = cJSON_AddObjectToObject(o, "memory_savers");
    char tag[64];
    cJSON_AddStringToObject(s, "tag", space_savers_tag(l, tag, sizeof tag));
    cJSON_AddBoolToObject(s, "use_precision_aware_optimizer",
                          l->pa_optimizer != 0);
    cJSON_AddStringToObject(s, "main_grads_dtype",
                            space_opt_dtype_name(l->main_grads_dtype));
    cJSON_AddStringToObject(s, "main_params_dtype",
                            space_opt_dtype_name(l->main_params_dtype));
    cJSON_AddStringToObject(s, "exp_avg_dtype",
                            space_opt_dtype_name(l->exp_avg_dtype));
    cJSON_AddStringToObject(s, "exp_avg_sq_dtype",
                            space_opt_dtype_name(l->exp_avg_sq_dtype));
    cJSON_AddBoolToObject(s, "optimizer_cpu_offload", l->opt_offload > 0);
    if (l->opt_offload > 0)
        cJSON_AddNumberToObject(s, "optimizer_offload_fraction",
                                l->opt_offload);
    else
        cJSON_AddNullToObject(s, "optimizer_offload_fraction");
    cJSON_AddBoolToObject(s, "overlap_cpu_optimizer_d2h_h2d",
                          l->opt_offload > 0 && l->opt_offload_overlap);
    cJSON_AddNumberToObject(s, "cpu_offloading_num_layers",
                            (double)l->act_offload_layers);
    cJSON_AddBoolToObject(s, "fine_grained_activation_offloading",
                          l->offload_modules != 0);
    cJSON *arr = cJSON_AddArrayToObject(s, "offload_modules");
    for (int b = 0; arr && b < SPACE_OFF_COUNT; b++)
        if (l->offload_modules & (1u << b))
            cJSON_AddItemToArray(arr,
                                 cJSON_CreateString(space_off_module_names[b]));
    if (l->offload_modules)
        cJSON_AddNumberToObject(s, "activation_offload_fraction",
                                l->offload_fraction > 0 ? l->offload_fraction
                                                        : 1);
    else
        cJSON_AddNullToObject(s, "activation_offload_fraction");
    if (l->vpp > 1)
        cJSON_AddNumberToObject(s, "microbatch_group_size_per_vp_stage",
                                (double)space_mb_group(l));
    else
        cJSON_AddNullToObject(s, "microbatch_group_size_per_vp_stage");
}

char *emit_savers_text(const space_layout *l, char *buf, size_t cap)
{
    size_t at = 0;
    if (cap) buf[0] = '\0';
#define ADD(...)                                                              \
    do {                                                                      \
        int w_ = at < cap ? snprintf(buf + at, cap - at, __VA_ARGS__) : 0;    \
        if (w_ > 0) at += (size_t)w_;                                         \
    } while (0)
    if (l->pa_optimizer && l->opt_offload <= 0)
        ADD("%sprecision-aware optimizer (gradients %s, master %s, moments "
            "%s/%s)",
            at ? "; " : "", space_opt_dtype_name(l->main_grads_dtype),
            space_opt_dtype_name(l->main_params_dtype),
            space_opt_dtype_name(l->exp_avg_dtype),
            space_opt_dtype_name(l->exp_avg_sq_dtype));
    if (l->opt_offload > 0)
        ADD("%soptimizer on the host (%g of its parameters%s)",
            at ? "; " : "", l->opt_offload,
            l->opt_offload_overlap ? ", copies overlapped" : "");
    if (l->act_offload_layers > 0)
        ADD("%sactivations of the first %lld layers on the host",
            at ? "; " : "", (long long)l->act_offload_layers);
    if (l->offload_modules) {
        char names[160];
        space_off_modules_str(l->offload_modules, ", ", names, sizeof names);
        ADD("%sfine-grained offloading of %s (%g of the groups)",
            at ? "; " : "", names,
            l->offload_fraction > 0 ? l->offload_fraction : 1);
    }
    if (l->mb_group > 0 && l->vpp > 1)
        ADD("%smicro-batch groups of %lld", at ? "; " : "",
            (long long)l->mb_group);
#undef ADD
    return buf;
}

void emit_json_band(cJSON *o, const est_band *b)
{
    if (b->basis == EST_BAND_NONE) {
        cJSON_AddNullToObject(o, "error_band");
        return;
    }
    cJSON *j = cJSON_AddObjectToObject(o, "error_band");
    cJSON_AddNumberToObject(j, "mape_pct", b->mape_pct);
    cJSON_AddNumberToObject(j, "signed_pct", b->signed_pct);
    cJSON_AddNumberToObject(j, "worst_pct", b->worst_pct);
    cJSON_AddNumberToObject(j, "slower_share", b->slower_share);
    cJSON_AddNumberToObject(j, "runs", b->runs);
    cJSON_AddStringToObject(j, "basis", est_band_basis_names[b->basis]);
    cJSON_AddStringToObject(j, "evidence", "bench/results/validate_runs.md");
    const est_validated_run *x = b->nearest;
    cJSON *n = cJSON_AddObjectToObject(j, "nearest_run");
    cJSON_AddStringToObject(n, "id", x->id);
    cJSON_AddStringToObject(n, "source", x->source);
    cJSON_AddStringToObject(n, "stack", space_stack_names[x->stack]);
    cJSON_AddStringToObject(n, "gpu_family", x->family);
    cJSON_AddNumberToObject(n, "gpus", (double)x->gpus);
    cJSON_AddNumberToObject(n, "params", x->params);
    cJSON_AddNumberToObject(n, "error_pct", x->err_pct);
}

char *emit_band_text(const est_band *b, char *buf, size_t cap)
{
    if (b->basis == EST_BAND_NONE) {
        snprintf(buf, cap, "error band: none (no published run of this kind "
                           "was scored)");
        return buf;
    }
    const est_validated_run *x = b->nearest;
    char what[160];
    switch (b->basis) {
    case EST_BAND_STACK_FAMILY:
        snprintf(what, sizeof what, "%s runs on %s",
                 space_stack_names[x->stack], x->family);
        break;
    case EST_BAND_FAMILY:
        snprintf(what, sizeof what, "runs of every stack on %s", x->family);
        break;
    case EST_BAND_STACK:
        snprintf(what, sizeof what, "%s runs on every GPU",
                 space_stack_names[x->stack]);
        break;
    default: snprintf(what, sizeof what, "runs"); break;
    }
    snprintf(buf, cap,
             "error band: +/-%.1f %% (mean absolute step-time error on %d "
             "published %s%s %s; on them the estimate leans %+.1f %%, slower "
             "on %.0f %%, worst %.1f %%: bench/results/validate_runs.md)\n"
             "nearest validated run: %s (%s, %lld GPUs), estimate %+.1f %%",
             b->mape_pct, b->runs, x->moe ? "MoE " : "", what,
             x->moe ? "as estimated"
                    : "with each run's source left out of the fit",
             b->signed_pct, 100 * b->slower_share, b->worst_pct, x->id,
             x->source, (long long)x->gpus, x->err_pct);
    return buf;
}

void emit_print_wrapped(FILE *f, const char *text, int at, int indent, int width)
{
    int col = at;
    const char *p = text;
    int first = 1;
    while (*p) {
        while (*p == ' ') p++;
        const char *w = p;
        while (*p && *p != ' ') p++;
        int n = (int)(p - w);
        if (n == 0) break;
        if (!first && col + 1 + n > width) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
            first = 1;
        }
        if (!first) fputc(' ', f), col++;
        fwrite(w, 1, (size_t)n, f);
        col += n;
        first = 0;
    }
    fputc('\n', f);
}

void emit_wrapf(FILE *f, int indent, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t n = strlen(buf);
    if (n && buf[n - 1] == '\n') buf[n - 1] = '\0';
    /* a leading indent is kept: emit_print_wrapped starts at a word */
    int lead = 0;
    while (buf[lead] == ' ') lead++;
    fprintf(f, "%.*s", lead, buf);
    emit_print_wrapped(f, buf + lead, lead, indent, EMIT_TEXT_WIDTH);
}

/* Each line of s indented by two blanks (empty lines left empty). */
void emit_print_indented(FILE *f, const char *s)
{
    while (*s) {
        const char *nl = strchr(s, '\n');
        int n = nl ? (int)(nl - s) : (int)strlen(s);
        fprintf(f, n ? "  %.*s\n" : "%.*s\n", n, s);
        if (!nl) break;
        s = nl + 1;
    }
}
