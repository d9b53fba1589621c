/*
 * coll.c - the reports of `trainplan coll show | cv`: collective times
 * from the command line. `show` prints, for a collective, sizes and a
 * group on a system, the analytical time, the measured table's time
 * where hwdb has one, which of the two the estimator uses, and the
 * algorithm and bus bandwidths behind them. `cv` scores the analytical model against every
 * measured table of a system, so anyone can see how far to trust it for
 * groups nobody measured.
 *
 * Deliberately not here: the models (estimator/comm.c), parsing the
 * sizes and the group (the caller's).
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rows at least this large are in the bandwidth regime (`cv`'s second
 * error column), and those of at least BIG_BYTES measure the achievable
 * fraction of line rate. */
#define LARGE_BYTES (16.0 * 1048576)
#define BIG_BYTES (64.0 * 1048576)

static void fmt_time(char *buf, size_t cap, double t)
{
    if (isnan(t))
        snprintf(buf, cap, "-");
    else
        emit_fmt_si(buf, cap, t, "s");
}

int emit_coll_show(const emit_coll_ask *a, const hw_db *db, FILE *f,
                   tp_err *e)
{
    const hw_system *y = hw_find_system(db, a->system, e);
    if (!y) return e->status;
    int nodes = a->nodes, per_node = a->per_node, kind = a->kind;
    int ns = a->nsizes;
    const double *sizes = a->sizes_bytes;
    est_group g = {nodes * per_node, per_node, nodes, 0};
    char why[256];
    if (est_group_check(y, &g, why, sizeof why)) {
        tp_errf(e, TP_EDATA, "--group %dx%d on %s: %s", nodes, per_node,
                y->name, why);
        return TP_EDATA;
    }
    est_comm *c = est_comm_load(y, a->keep_bad, e);
    if (!c) return e->status;
    static const char *hdr[] = {"bytes",      "analytical", "measured",
                                "used",       "algbw",      "busbw",
                                "source"};
    emit_table t;
    emit_table_init(&t, 7, hdr, "rrrrrrl");
    cJSON *arr = cJSON_CreateArray();
    const est_coll_table *tab = NULL;
    for (int i = 0; i < ns; i++) {
        est_coll_info info;
        double used = est_coll_time_info(c, y, (est_coll)kind, sizes[i], &g,
                                         &info);
        tab = info.table;
        double alg = used > 0 ? sizes[i] / used : 0;
        double bus = alg * est_coll_busbw_factor((est_coll)kind, g.size);
        char b[32], an[32], me[32], us[32], ab[32], bb[32], src[96];
        snprintf(b, sizeof b, "%.0f", sizes[i]);
        fmt_time(an, sizeof an, info.analytical_s);
        fmt_time(me, sizeof me, info.table ? used : NAN);
        fmt_time(us, sizeof us, used);
        emit_fmt_si(ab, sizeof ab, alg, "B/s");
        emit_fmt_si(bb, sizeof bb, bus, "B/s");
        if (g.size == 1)
            snprintf(src, sizeof src, "one rank: nothing to move");
        else if (info.table)
            snprintf(src, sizeof src, "measured%s",
                     info.extrapolated ? " (extrapolated)" : "");
        else
            snprintf(src, sizeof src, "analytical (%s/%s, %s-bound)",
                     info.algorithm, info.protocol, info.bottleneck);
        emit_table_row(&t, b, an, me, us, ab, bb, src);
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "bytes", sizes[i]);
        cJSON_AddNumberToObject(j, "analytical_s", info.analytical_s);
        if (info.table)
            cJSON_AddNumberToObject(j, "measured_s", used);
        else
            cJSON_AddNullToObject(j, "measured_s");
        cJSON_AddNumberToObject(j, "time_s", used);
        cJSON_AddStringToObject(j, "source",
                                info.table ? "measured" : "analytical");
        cJSON_AddBoolToObject(j, "extrapolated", info.extrapolated);
        cJSON_AddStringToObject(j, "algorithm", info.algorithm);
        cJSON_AddStringToObject(j, "protocol", info.protocol);
        cJSON_AddStringToObject(j, "bottleneck", info.bottleneck);
        cJSON_AddNumberToObject(j, "bottleneck_bw_bytes_per_s",
                                info.bw_bytes_per_s);
        cJSON_AddNumberToObject(j, "algbw_bytes_per_s", alg);
        cJSON_AddNumberToObject(j, "busbw_bytes_per_s", bus);
        cJSON_AddItemToArray(arr, j);
    }
    if (a->format == EMIT_JSON) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "system", y->name);
        cJSON_AddStringToObject(j, "collective", est_coll_names[kind]);
        cJSON_AddNumberToObject(j, "nodes", nodes);
        cJSON_AddNumberToObject(j, "gpus_per_node", per_node);
        cJSON_AddNumberToObject(j, "ranks", g.size);
        if (tab) {
            cJSON_AddStringToObject(j, "table", tab->file);
            cJSON_AddStringToObject(j, "table_source", tab->source);
            cJSON_AddNumberToObject(j, "table_rows", tab->n_rows);
            cJSON_AddNumberToObject(j, "table_rows_left_out", tab->n_bad);
        } else {
            cJSON_AddNullToObject(j, "table");
        }
        cJSON_AddItemToObject(j, "sizes", arr);
        arr = NULL;
        emit_print_json(f, j);
    } else {
        if (a->format == EMIT_TABLE) {
            fprintf(f, "%s over %d x %d GPUs (%d ranks) on %s\n",
                    est_coll_names[kind], nodes, per_node, g.size, y->name);
            /* The table of this collective and shape, even if no size
             * above used it (one rank). */
            const est_coll_table *mt = NULL;
            for (int i = 0; i < est_comm_table_count(c); i++) {
                const est_coll_table *x = est_comm_table_at(c, i);
                if ((int)x->kind == kind && x->nodes == nodes
                    && x->per_node == per_node)
                    mt = x;
            }
            if (mt && mt->n_rows) {
                char lo[32], hi[32];
                emit_fmt_bytes(lo, sizeof lo, mt->rows[0].bytes);
                emit_fmt_bytes(hi, sizeof hi, mt->rows[mt->n_rows - 1].bytes);
                fprintf(f,
                        "measured table: %s (%d rows, %s to %s; %d "
                        "implausible row(s) left out)\n\n",
                        mt->file, mt->n_rows, lo, hi, mt->n_bad);
            } else if (mt) {
                fprintf(f,
                        "measured table: %s has no plausible rows (%d left "
                        "out; --keep-bad keeps them): analytical model\n\n",
                        mt->file, mt->n_bad);
            } else {
                fprintf(f,
                        "no measured table for this collective and group on "
                        "%s: analytical model\n\n",
                        y->name);
            }
        }
        emit_table_print(&t, f, a->format);
    }
    cJSON_Delete(arr);
    emit_table_free(&t);
    est_comm_free(c);
    return TP_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    if (n == 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void fmt_pct(char *buf, size_t cap, double v)
{
    if (isnan(v))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%.1f", v);
}

/* Per-source totals. */
typedef struct src_sum {
    const char *source;
    double sum;
    int n;
} src_sum;

int emit_coll_cv(const emit_coll_ask *a, const hw_db *db, FILE *f, tp_err *e)
{
    const hw_system *y = hw_find_system(db, a->system, e);
    if (!y) return e->status;
    est_comm *c = est_comm_load(y, a->keep_bad, e);
    if (!c) return e->status;
    static const char *hdr[] = {"collective", "group",   "rows",
                                "implausible", "sizes",  "error %",
                                ">=16MiB %", "line rate %", "bottleneck",
                                "table"};
    emit_table t;
    emit_table_init(&t, 10, hdr, "llrrlrrrll");
    cJSON *arr = cJSON_CreateArray();
    int nt = est_comm_table_count(c);
    src_sum *sums = tp_xcalloc((size_t)(nt ? nt : 1), sizeof *sums);
    int nsums = 0;
    for (int i = 0; i < nt; i++) {
        const est_coll_table *x = est_comm_table_at(c, i);
        est_group g = {x->nodes * x->per_node, x->per_node, x->nodes, 0};
        double sum = 0, sum_l = 0;
        int n = 0, n_l = 0, n_big = 0;
        double *frac = tp_xmalloc((size_t)(x->n_rows ? x->n_rows : 1)
                                  * sizeof *frac);
        const char *bottleneck = "-";
        for (int k = 0; k < x->n_rows; k++) {
            const est_coll_row *r = &x->rows[k];
            est_coll_info info;
            est_coll_time_info(NULL, y, x->kind, r->bytes, &g, &info);
            if (!(info.analytical_s > 0)) continue; /* one rank, bad group */
            double err = fabs(info.analytical_s - r->time_s) / r->time_s;
            sum += err;
            n++;
            if (r->bytes >= LARGE_BYTES) {
                sum_l += err;
                n_l++;
            }
            if (r->bytes >= BIG_BYTES) {
                frac[n_big++] = est_coll_linerate_time(y, x->kind, r->bytes, &g)
                                / r->time_s;
                bottleneck = info.bottleneck;
            }
        }
        double mape = n ? 100 * sum / n : NAN, mape_l = n_l ? 100 * sum_l / n_l : NAN;
        double fr = median(frac, n_big);
        free(frac);
        int s = 0;
        while (s < nsums && strcmp(sums[s].source, x->source) != 0) s++;
        if (s == nsums) sums[nsums++].source = x->source;
        sums[s].sum += sum;
        sums[s].n += n;
        char grp[32], rows[16], bad[16], range[64], m1[16], m2[16], lr[16];
        snprintf(grp, sizeof grp, "%dx%d", x->nodes, x->per_node);
        snprintf(rows, sizeof rows, "%d", x->n_rows);
        snprintf(bad, sizeof bad, "%d", x->n_bad);
        if (x->n_rows) {
            char lo[24], hi[24];
            emit_fmt_bytes(lo, sizeof lo, x->rows[0].bytes);
            emit_fmt_bytes(hi, sizeof hi, x->rows[x->n_rows - 1].bytes);
            snprintf(range, sizeof range, "%s-%s", lo, hi);
        } else {
            snprintf(range, sizeof range, "-");
        }
        fmt_pct(m1, sizeof m1, mape);
        fmt_pct(m2, sizeof m2, mape_l);
        fmt_pct(lr, sizeof lr, 100 * fr);
        emit_table_row(&t, est_coll_names[x->kind], grp, rows, bad, range, m1,
                      m2, lr, bottleneck, x->file);
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "collective", est_coll_names[x->kind]);
        cJSON_AddNumberToObject(j, "nodes", x->nodes);
        cJSON_AddNumberToObject(j, "gpus_per_node", x->per_node);
        cJSON_AddStringToObject(j, "file", x->file);
        cJSON_AddStringToObject(j, "source", x->source);
        cJSON_AddNumberToObject(j, "rows", x->n_rows);
        cJSON_AddNumberToObject(j, "rows_implausible", x->n_bad);
        if (x->n_rows) {
            cJSON_AddNumberToObject(j, "min_bytes", x->rows[0].bytes);
            cJSON_AddNumberToObject(j, "max_bytes", x->rows[x->n_rows - 1].bytes);
        }
#define NUM_OR_NULL(key, v)                                                   \
    do {                                                                      \
        if (isnan(v))                                                         \
            cJSON_AddNullToObject(j, key);                                    \
        else                                                                  \
            cJSON_AddNumberToObject(j, key, v);                               \
    } while (0)
        NUM_OR_NULL("mape_pct", mape);
        cJSON_AddNumberToObject(j, "rows_large", n_l);
        NUM_OR_NULL("mape_large_pct", mape_l);
        cJSON_AddNumberToObject(j, "rows_big", n_big);
        NUM_OR_NULL("linerate_fraction", fr);
#undef NUM_OR_NULL
        if (n_big)
            cJSON_AddStringToObject(j, "bottleneck", bottleneck);
        else
            cJSON_AddNullToObject(j, "bottleneck");
        cJSON_AddItemToArray(arr, j);
    }
    if (a->format == EMIT_JSON) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "system", y->name);
        cJSON_AddBoolToObject(j, "keep_bad", a->keep_bad);
        cJSON_AddNumberToObject(j, "large_bytes", LARGE_BYTES);
        cJSON_AddNumberToObject(j, "big_bytes", BIG_BYTES);
        cJSON_AddItemToObject(j, "tables", arr);
        arr = NULL;
        cJSON *sa = cJSON_AddArrayToObject(j, "sources");
        for (int s = 0; s < nsums; s++) {
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "source", sums[s].source);
            cJSON_AddNumberToObject(x, "rows", sums[s].n);
            if (sums[s].n)
                cJSON_AddNumberToObject(x, "mape_pct",
                                        100 * sums[s].sum / sums[s].n);
            else
                cJSON_AddNullToObject(x, "mape_pct");
            cJSON_AddItemToArray(sa, x);
        }
        emit_print_json(f, j);
    } else {
        if (a->format == EMIT_TABLE)
            fprintf(f,
                    "analytical model vs measured tables of %s: mean "
                    "absolute error of the analytical time, over all rows "
                    "and over rows of at least 16 MiB; line rate %% = "
                    "median achieved share of the model's line-rate time "
                    "(rows of at least 64 MiB)\n\n",
                    y->name);
        emit_table_print(&t, f, a->format);
        if (a->format == EMIT_TABLE) {
            if (nt == 0)
                fprintf(f, "\n%s lists no measured collective tables\n",
                        y->name);
            for (int s = 0; s < nsums; s++) {
                /* The citation's opening words name it well enough. */
                char label[72];
                tp_strlcpy(label, sums[s].source, sizeof label);
                if (strlen(sums[s].source) >= sizeof label)
                    memcpy(label + sizeof label - 4, "...", 4);
                fprintf(f, "%s  %.1f %% over %d rows: %s\n",
                        s ? "" : "\nerror per source:\n",
                        sums[s].n ? 100 * sums[s].sum / sums[s].n : NAN,
                        sums[s].n, label);
            }
        }
    }
    free(sums);
    cJSON_Delete(arr);
    emit_table_free(&t);
    est_comm_free(c);
    return TP_OK;
}
