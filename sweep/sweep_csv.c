/*
 * sweep_csv.c - a sweep's records as CSV, one row a scenario (`sweep
 * --format csv`, `merge --format csv`), and `trainplan merge`: shard
 * outputs back into the file one process writes.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fileno, unlink */
#include "sweep.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* sweep and merge write records (jsonl, json) or csv; a format they
 * cannot write (table, md) is refused rather than ignored. */
void sweep_opts_init(sweep_opts *o)
{
    memset(o, 0, sizeof *o);
    search_job_init(&o->base.job);
    o->threshold = -1;
}

int sweep_format_refused(const sweep_opts *o, const char *cmd,
                         const char *what, const char *csv_when, tp_err *e)
{
    if (!o->format_set || (o->format != EMIT_TABLE && o->format != EMIT_MD))
        return 0;
    tp_errf(e, TP_EUSAGE,
            "%s --format: expected jsonl (%s, the default; json is the same) "
            "or csv (one row a scenario%s), found %s",
            cmd, what, csv_when, o->format == EMIT_MD ? "md" : "table");
    return 1;
}

/* A record's member as CSV text: a string as is, a number as %.10g, a
 * boolean 1/0, null or absent empty. */
static void csv_cell(const cJSON *o, const char *key, char *buf, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    buf[0] = '\0';
    if (cJSON_IsString(v)) snprintf(buf, cap, "%s", v->valuestring);
    else if (cJSON_IsNumber(v)) snprintf(buf, cap, "%.10g", v->valuedouble);
    else if (cJSON_IsBool(v)) snprintf(buf, cap, "%d", cJSON_IsTrue(v));
}

/* o[key] printed with fmt (one double conversion) where it is a number,
 * else empty (JSON's null): as search --format csv prints its cells. */
static void csv_num(const cJSON *o, const char *key, const char *fmt,
                    char *buf, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    buf[0] = '\0';
    if (cJSON_IsNumber(v)) snprintf(buf, cap, fmt, v->valuedouble);
}

static int64_t json_i64(const cJSON *o, const char *key, int64_t dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && v->valuedouble >= -9e15 && v->valuedouble <= 9e15
               ? (int64_t)v->valuedouble
               : dflt;
}

/* The columns: the scenario as the spec gave it (its system entry and GPU
 * list as scenario_system and scenario_gpus: system and gpus are the best
 * layout's), then the best layout in search --format csv's columns and
 * cells (emit_csv_layout_cells and its number formats), then what only a
 * sweep row has: the best's days and cost an iteration, how many ranks
 * tie it, and for an infeasible scenario its nearest miss. */
enum {
    C_INDEX, C_ID, C_STATUS, C_MODEL, C_SC_SYSTEM, C_SC_GPUS, C_SEQ, C_GBS,
    C_PRECISION, C_TOKENS, C_PRICE, C_ERROR,
    /* search --format csv's, in its order */
    C_SYSTEM, C_LAYOUT, C_GPUS, C_TP, C_PP, C_VPP, C_CP, C_DP, C_MBS, C_SP,
    C_RECOMPUTE, C_ZERO, C_EP, C_ETP, C_ITER, C_TOKS, C_MFU, C_PEAK,
    C_MARGIN, C_HEADROOM, C_TRAIN, C_GPU_H, C_COST, C_BUBBLE, C_EXPOSED,
    C_BAND,
    /* the sweep's own */
    C_DAYS, C_COST_IT, C_TIES, C_MISS_LIMIT, C_MISS_VALUE, C_MISS_EXCESS,
    C_MISS_LAYOUT,
    N_CSV
};
static const char *const csv_header[N_CSV] = {
    "index", "id", "status", "model", "scenario_system", "scenario_gpus",
    "seq_length", "global_batch_size", "precision", "tokens",
    "price_usd_per_gpu_hour", "error",
    "system", "layout", "gpus", "tp", "pp", "vpp", "cp", "dp", "mbs", "sp",
    "recompute", "zero", "ep", "etp", "iteration_time_s", "tokens_per_s",
    "mfu", "peak_memory_bytes", "memory_margin_bytes",
    "memory_headroom_bytes", "time_to_train_s", "gpu_hours", "cost_usd",
    "bubble_s", "exposed_comm_s", "error_band_pct",
    "time_to_train_days", "cost_per_iteration_usd", "ties_with_best",
    "miss_limit", "miss_limit_value", "miss_excess", "miss_layout"};
_Static_assert(sizeof csv_header / sizeof csv_header[0] == N_CSV,
               "csv_header mirrors the C_ columns");

/* The best layout's cells from the record's first ranked row r0 (and the
 * search's error band, the best's), as search --format csv writes its
 * ranked rows. */
static void csv_best_cells(const cJSON *r0, const cJSON *sr,
                           char cell[][256])
{
    space_layout l;
    memset(&l, 0, sizeof l);
    l.tp = json_i64(r0, "tensor_model_parallel_size", 1);
    l.pp = json_i64(r0, "pipeline_model_parallel_size", 1);
    l.vpp = json_i64(r0, "virtual_stages_per_pipeline_rank", 1);
    l.cp = json_i64(r0, "context_parallel_size", 1);
    l.dp = json_i64(r0, "data_parallel_size", 1);
    l.mbs = json_i64(r0, "micro_batch_size", 1);
    l.sp = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r0, "sequence_parallel"));
    l.zero = (space_zero)json_i64(r0, "zero_stage", 0);
    int moe = cJSON_GetObjectItemCaseSensitive(r0, "expert_model_parallel_size") != NULL;
    l.ep = json_i64(r0, "expert_model_parallel_size", 1);
    l.etp = json_i64(r0, "expert_tensor_parallel_size", l.tp);
    /* search's cell numbers: c[2..9] and c[21..22] */
    char c[24][48];
    emit_csv_layout_cells(c, &l, moe);
    static const int from[] = {C_TP, C_PP, C_VPP, C_CP, C_DP, C_MBS, C_SP, C_ZERO};
    for (int i = 0; i < 8; i++) snprintf(cell[from[i]], 256, "%s", c[2 + i]);
    snprintf(cell[C_EP], 256, "%s", c[21]);
    snprintf(cell[C_ETP], 256, "%s", c[22]);
    csv_cell(r0, "system", cell[C_SYSTEM], 256);
    csv_cell(r0, "layout", cell[C_LAYOUT], 256);
    csv_num(r0, "gpus", "%.0f", cell[C_GPUS], 256);
    csv_cell(r0, "recompute_granularity", cell[C_RECOMPUTE], 256);
    csv_num(r0, "iteration_time_s", "%.6g", cell[C_ITER], 256);
    csv_num(r0, "tokens_per_s", "%.6g", cell[C_TOKS], 256);
    csv_num(r0, "mfu", "%.4f", cell[C_MFU], 256);
    csv_num(r0, "peak_memory_bytes", "%.0f", cell[C_PEAK], 256);
    csv_num(r0, "memory_margin_bytes", "%.0f", cell[C_MARGIN], 256);
    csv_num(r0, "memory_headroom_bytes", "%.0f", cell[C_HEADROOM], 256);
    csv_num(r0, "time_to_train_s", "%.6g", cell[C_TRAIN], 256);
    csv_num(r0, "gpu_hours", "%.6g", cell[C_GPU_H], 256);
    csv_num(r0, "cost_usd", "%.6g", cell[C_COST], 256);
    csv_num(r0, "bubble_s", "%.6g", cell[C_BUBBLE], 256);
    csv_num(r0, "exposed_comm_s", "%.6g", cell[C_EXPOSED], 256);
    csv_num(cJSON_GetObjectItemCaseSensitive(sr, "error_band"), "mape_pct",
            "%.6g", cell[C_BAND], 256);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(r0, "time_to_train_s");
    if (cJSON_IsNumber(t))
        snprintf(cell[C_DAYS], 256, "%.6g", t->valuedouble / 86400);
    csv_num(r0, "cost_per_iteration_usd", "%.6g", cell[C_COST_IT], 256);
    /* how many of the next ranks the best's error band cannot tell from it */
    int ties = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(sr, "ranked"))
        ties += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "tied_with_best"));
    snprintf(cell[C_TIES], 256, "%d", ties);
}

/* An infeasible scenario's nearest miss, from its search's nearest_miss:
 * the binding limit with the nearest layout's figures where the search
 * named one (binding, nearest.limits), else the memory miss (bytes), else
 * the budget miss (a ratio to the tightest budget or deadline, limit 1). */
static void csv_miss_cells(const cJSON *sr, char cell[][256])
{
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(sr, "nearest_miss");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(nm, "binding");
    const cJSON *near = cJSON_GetObjectItemCaseSensitive(nm, "nearest");
    if (cJSON_IsString(b) && cJSON_IsObject(near)) {
        const cJSON *lim = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(near, "limits"), b->valuestring);
        snprintf(cell[C_MISS_LIMIT], 256, "%s", b->valuestring);
        csv_num(lim, "limit", "%.6g", cell[C_MISS_VALUE], 256);
        csv_num(lim, "excess", "%.6g", cell[C_MISS_EXCESS], 256);
        csv_cell(near, "layout", cell[C_MISS_LAYOUT], 256);
        return;
    }
    static const char *const kinds[] = {"memory", "budget"};
    for (int i = 0; i < 2; i++) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(nm, kinds[i]);
        if (!cJSON_IsObject(m)) continue;
        snprintf(cell[C_MISS_LIMIT], 256, "%s", kinds[i]);
        csv_num(m, "limit", "%.6g", cell[C_MISS_VALUE], 256);
        csv_num(m, "shortfall", "%.6g", cell[C_MISS_EXCESS], 256);
        csv_cell(m, "layout", cell[C_MISS_LAYOUT], 256);
        return;
    }
}

/* Writes the records of a sweep output (buf, len) as CSV to f, in index
 * order as the file holds them: a header, then one row a record. Returns
 * 0, or TP_EDATA naming a line that is not a record. */
static int records_csv(const char *buf, size_t len, FILE *f, const char *path,
                       tp_err *e)
{
    char align[N_CSV + 1];
    memset(align, 'l', N_CSV);
    align[N_CSV] = '\0';
    const char *hdr[N_CSV];
    for (int k = 0; k < N_CSV; k++) hdr[k] = csv_header[k];
    emit_table t;
    emit_table_init(&t, N_CSV, hdr, align);
    size_t *st, *ln, tail;
    int nl = sweep_split_lines(buf, len, &st, &ln, &tail), rc = 0;
    static const char *const scen[] = {"model", "system", "gpus", "seq_length",
                                       "global_batch_size", "precision",
                                       "tokens", "price_usd_per_gpu_hour"};
    for (int i = 0; i < nl && !rc; i++) {
        cJSON *j = cJSON_ParseWithLength(buf + st[i], ln[i]);
        if (!cJSON_IsObject(j)) {
            rc = tp_errf(e, TP_EDATA, "%s:%d: not a sweep record", path, i + 1);
            cJSON_Delete(j);
            break;
        }
        static char cell[N_CSV][256];
        memset(cell, 0, sizeof cell);
        csv_cell(j, "index", cell[C_INDEX], 256);
        csv_cell(j, "id", cell[C_ID], 256);
        csv_cell(j, "status", cell[C_STATUS], 256);
        const cJSON *sc = cJSON_GetObjectItemCaseSensitive(j, "scenario");
        for (int k = 0; k < 8; k++) csv_cell(sc, scen[k], cell[C_MODEL + k], 256);
        csv_cell(j, "error", cell[C_ERROR], 256);
        const cJSON *sr = cJSON_GetObjectItemCaseSensitive(j, "search");
        const cJSON *r0 = cJSON_GetArrayItem(
            cJSON_GetObjectItemCaseSensitive(sr, "ranked"), 0);
        if (r0) csv_best_cells(r0, sr, cell);
        else csv_miss_cells(sr, cell);
        const char *cp[N_CSV];
        for (int k = 0; k < N_CSV; k++) cp[k] = cell[k];
        emit_table_rowv(&t, cp, N_CSV);
        cJSON_Delete(j);
    }
    free(st);
    free(ln);
    if (!rc) emit_table_print(&t, f, EMIT_CSV);
    emit_table_free(&t);
    return rc;
}

/* sweep --format csv: the sweep as JSON Lines into a temporary file beside
 * the output, then one CSV row a scenario, written all or nothing. Not
 * resumable: a night that must survive a kill writes JSON Lines and
 * converts them (merge --format csv). */
int sweep_csv(const sweep_opts *o, emit_out *out, tp_err *e)
{
    if (o->resume || o->shard_n > 0)
        return tp_errf(e, TP_EUSAGE,
                       "sweep --format csv writes its file when the sweep "
                       "ends, so it cannot %s; write JSON Lines (the "
                       "default) and convert them with 'trainplan merge "
                       "--format csv FILE.jsonl'",
                       o->resume ? "resume (--resume)" : "be one shard (--shard)");
#ifdef TRAINPLAN_MPI
    if (sweep_under_mpi())
        return tp_errf(e, TP_EUSAGE,
                       "sweep --format csv under MPI: write JSON Lines and "
                       "convert them with 'trainplan merge --format csv'");
#endif
    const char *target = o->out_dir && strcmp(o->out_dir, "-") ? o->out_dir : NULL;
    struct stat st;
    if (target && !o->overwrite && stat(target, &st) == 0 && S_ISREG(st.st_mode)
        && st.st_size > 0)
        return tp_errf(e, TP_EUSAGE,
                       "%s: holds %lld bytes; sweep --format csv replaces a "
                       "file only with --overwrite",
                       target, (long long)st.st_size);
    /* the records beside the target (or in $TMPDIR), removed after */
    char tmp[PATH_MAX];
    const char *td = getenv("TMPDIR");
    if (target) {
        snprintf(tmp, sizeof tmp, "%s", target);
        char *slash = strrchr(tmp, '/');
        snprintf(slash ? slash + 1 : tmp, sizeof tmp - (size_t)(slash ? slash + 1 - tmp : 0),
                 ".trainplan-sweep-XXXXXX");
    } else {
        snprintf(tmp, sizeof tmp, "%s/trainplan-sweep-XXXXXX",
                 td && *td ? td : "/tmp");
    }
    int fd = mkstemp(tmp);
    if (fd < 0)
        return tp_errf(e, TP_EIO, "%s: cannot create the sweep's records: %s",
                       tmp, strerror(errno));
    close(fd);
    sweep_opts jo = *o;
    jo.format = EMIT_JSONL;
    /* the rows have no launch cells: records without them; and every
     * cell is in the compact record (tests/outputs_e2e.py check_compact:
     * the same CSV from either form), the fewer bytes to write and read */
    jo.launch_set = 1;
    jo.base.form.launch_forms = 0;
    jo.record_set = 1;
    jo.record = SWEEP_RECORD_COMPACT;
    jo.out_dir = tmp;
    jo.overwrite = 1;
    int rc = sweep_run(&jo, out, e);
    char *buf = NULL;
    size_t len = 0;
    if (!rc) rc = tp_read_file(tmp, (size_t)1 << 34, &buf, &len, e);
    if (!rc && target) {
        emit_out co;
        rc = emit_out_open(&co, target, NULL, e);
        if (!rc) {
            rc = records_csv(buf, len, co.f, tmp, e);
            int crc = emit_out_close(&co, rc == TP_OK, e);
            if (!rc) rc = crc;
        }
    } else if (!rc) {
        rc = records_csv(buf, len, out->f, tmp, e);
    }
    free(buf);
    unlink(tmp);
    return rc;
}

/* ---- merge ----------------------------------------------------------------- */

typedef struct merge_line {
    sweep_key k;
    const char *text;
    size_t len;
    int file, line;
} merge_line;

static int cmp_merge(const void *a, const void *b)
{
    const merge_line *x = a, *y = b;
    if (x->k.index != y->k.index) return x->k.index < y->k.index ? -1 : 1;
    if (x->file != y->file) return x->file - y->file;
    return x->line - y->line;
}

int sweep_merge(const sweep_opts *o, emit_out *out, tp_err *e)
{
    if (sweep_format_refused(o, "merge", "the merged records", "", e))
        return TP_EUSAGE;
    int nf = o->npos, rc = TP_OK;
    char **buf = tp_xcalloc((size_t)nf, sizeof *buf);
    merge_line *all = NULL;
    int64_t n = 0, cap = 0, count = -1;
    for (int f = 0; f < nf && !rc; f++) {
        size_t len, *st, *ln, tail;
        if ((rc = tp_read_file(o->pos[f], (size_t)1 << 34, &buf[f], &len, e))) break;
        int nl = sweep_split_lines(buf[f], len, &st, &ln, &tail);
        if (tail)
            rc = tp_errf(e, TP_EDATA,
                         "%s: the last line (line %d) is incomplete, a write "
                         "cut short; rerun that sweep with --resume",
                         o->pos[f], nl + 1);
        for (int i = 0; i < nl && !rc; i++) {
            merge_line m = {{0}, buf[f] + st[i], ln[i], f, i + 1};
            if (!sweep_record_key(m.text, m.len, &m.k))
                rc = tp_errf(e, TP_EDATA, "%s:%d: not a sweep record", o->pos[f],
                             i + 1);
            else if (m.k.seal < 0)
                rc = tp_errf(e, TP_EDATA,
                             "%s:%d: a damaged record (its " SWEEP_SEAL_KEY
                             " does not match its bytes); rerun that sweep "
                             "with --resume, which redoes it",
                             o->pos[f], i + 1);
            else if (count >= 0 && m.k.count != count)
                rc = tp_errf(e, TP_EDATA,
                             "%s:%d: a record of a sweep of %lld scenarios, "
                             "others are of %lld: shards of different specs",
                             o->pos[f], i + 1, (long long)m.k.count,
                             (long long)count);
            count = m.k.count;
            if (n == cap) {
                cap = cap ? 2 * cap : 256;
                all = tp_xrealloc(all, (size_t)cap * sizeof *all);
            }
            all[n++] = m;
        }
        free(st);
        free(ln);
    }
    if (!rc && n == 0) rc = tp_errf(e, TP_EDATA, "merge: no records in the inputs");
    if (!rc) qsort(all, (size_t)n, sizeof *all, cmp_merge);
    int64_t w = 0, missing = 0, first_missing = -1;
    for (int64_t i = 0; i < n && !rc; i++) {
        const merge_line *m = &all[i];
        if (w > 0 && all[w - 1].k.index == m->k.index) {
            const merge_line *p = &all[w - 1];
            if (p->len != m->len || memcmp(p->text, m->text, m->len))
                rc = tp_errf(e, TP_EDATA,
                             "scenario %lld: %s:%d and %s:%d differ (a conflict: "
                             "shards of different nights or versions?)",
                             (long long)m->k.index, o->pos[p->file], p->line,
                             o->pos[m->file], m->line);
            else
                fprintf(sweep_err(o), "trainplan: merge: scenario %lld is in %s:%d "
                                "and %s:%d (identical; kept once)\n",
                        (long long)m->k.index, o->pos[p->file], p->line,
                        o->pos[m->file], m->line);
            continue;
        }
        int64_t expect = w > 0 ? all[w - 1].k.index + 1 : 0;
        if (m->k.index > expect) {
            if (first_missing < 0) first_missing = expect;
            missing += m->k.index - expect;
        }
        all[w++] = *m;
    }
    if (!rc && w > 0 && all[w - 1].k.index < count - 1) {
        if (first_missing < 0) first_missing = all[w - 1].k.index + 1;
        missing += count - 1 - all[w - 1].k.index;
    }
    if (!rc && missing)
        rc = tp_errf(e, TP_EDATA,
                     "merge: %lld of %lld scenarios missing (the first: %lld); "
                     "is a shard missing or unfinished?",
                     (long long)missing, (long long)count, (long long)first_missing);
    if (!rc && o->format == EMIT_CSV) {
        /* one CSV row a scenario (sweep --format csv's columns) */
        size_t tot = 0;
        for (int64_t i = 0; i < w; i++) tot += all[i].len + 1;
        char *txt = tp_xmalloc(tot + 1), *p = txt;
        for (int64_t i = 0; i < w; i++) {
            memcpy(p, all[i].text, all[i].len);
            p += all[i].len;
            *p++ = '\n';
        }
        rc = records_csv(txt, tot, out->f, "merge", e);
        free(txt);
    }
    for (int64_t i = 0; i < w && !rc && o->format != EMIT_CSV; i++) {
        fwrite(all[i].text, 1, all[i].len, out->f);
        fputc('\n', out->f);
    }
    free(all);
    for (int f = 0; f < nf; f++) free(buf[f]);
    free(buf);
    return rc;
}
