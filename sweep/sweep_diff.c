/*
 * sweep_diff.c - `trainplan diff OLD.jsonl NEW.jsonl`: what changed between
 * two sweeps (last night's and tonight's). Scenarios are matched by id
 * (a digest of their inputs as given, not of the files read), so a
 * reordered or extended spec still matches. A scenario changed when its
 * status or best layout changed, or the best layout's iteration time or
 * cost per iteration moved by more than --threshold (relative, default
 * 0.02). Also listed: new and vanished scenarios. Changed input files
 * (hwdb, config.json digests) with the same outcome are counted, not
 * listed. Two sweeps of the same number of scenarios are also paired by
 * position where the ids differ (a price or a system changed in the
 * spec), so a what-if reads "cost -29 %" with the input that changed,
 * not a new and a vanished scenario. Each changed row names its changed
 * input: the scenario's values old -> new, or the files whose digests
 * differ.
 *
 * Exit: 0 nothing changed, 3 changes found (DIFF_EXIT_CHANGED), 65 a file
 * that is not a complete sweep output: a torn line, a line that is not a
 * record, an id twice, records of two specs, or fewer scenarios than its
 * spec has (a sweep stopped early, one shard: new and vanished scenarios
 * are those of two different specs, never those a sweep did not reach).
 * 74 when the report cannot be written.
 *
 * Scale: each file's ids are sorted once and looked up by binary search
 * (O(N log N)); records are parsed in parallel and without their
 * "search" member (sweep_rec.c), which diff does not read.
 */
#include "sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* An id and its record's position in the file: sorted by id, so a
 * lookup is a binary search, O(log n), not a scan (issue 17: 80,000
 * records took 32 s). */
typedef struct id_ref {
    char id[17]; /* a copy: the sort and the searches read this array
                    alone, not outcomes scattered over a night's memory */
    int i;
} id_ref;

typedef struct sweep_file {
    sweep_outcome *o; /* in file order */
    int n;
    id_ref *by_id;    /* o's ids, sorted */
} sweep_file;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_id(const void *a, const void *b)
{
    const id_ref *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    if (c) return c;
    return (x->i > y->i) - (x->i < y->i); /* file order among equals */
}

/* Maps a sweep output read-only (*buf, *len; *buf NULL when empty):
 * nights are gigabytes, and most of a record (its "search") is never
 * touched, so neither read into memory nor copied. Unmap with munmap. */
static int map_file(const char *path, char **buf, size_t *len, tp_err *e)
{
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return tp_errf(e, TP_ENOINPUT, "%s: cannot open: %s", path,
                       strerror(errno));
    struct stat st;
    int rc = TP_OK;
    if (fstat(fd, &st) != 0)
        rc = tp_errf(e, TP_ENOINPUT, "%s: cannot stat: %s", path,
                     strerror(errno));
    else if (S_ISDIR(st.st_mode))
        rc = tp_errf(e, TP_ENOINPUT, "%s: is a directory, expected a file",
                     path);
    else if (!S_ISREG(st.st_mode))
        rc = tp_errf(e, TP_ENOINPUT, "%s: not a regular file", path);
    if (!rc && st.st_size > 0) {
        /* No MAP_POPULATE: it sets the page tables up in this one thread,
         * a tenth of a diff of two 1.7 GB nights; the pages fault in (64
         * KiB at a time) in the threads that split and parse them. */
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd,
                       0);
        if (m == MAP_FAILED)
            rc = tp_errf(e, TP_ENOINPUT, "%s: cannot read: %s", path,
                         strerror(errno));
        else {
            *buf = m;
            *len = (size_t)st.st_size;
        }
    }
    close(fd);
    return rc;
}

/* Reads a sweep output and checks it is a whole one: complete lines, each
 * a record, all of one spec (the same count), every scenario 0..count-1
 * exactly once (a sweep stopped early, a shard, or a file cut by hand is
 * not), no id twice. */
static int load(const char *path, sweep_file *f, tp_err *e)
{
    char *buf = NULL;
    size_t len = 0, *st, *ln, tail;
    memset(f, 0, sizeof *f);
    int rc = map_file(path, &buf, &len, e);
    if (rc) return rc;
    int nl = sweep_split_lines(buf, len, &st, &ln, &tail);
    if (tail)
        rc = tp_errf(e, TP_EDATA,
                     "%s: the last line (line %d) is incomplete, a write cut "
                     "short; finish the sweep with --resume", path, nl + 1);
    f->o = tp_xcalloc((size_t)nl + 1, sizeof *f->o);
    /* Parsing is most of a diff's time: lines in parallel, each into its
     * own slot; errors are reported for the first bad line. */
    char *okv = tp_xcalloc((size_t)nl + 1, 1);
    if (!rc) {
#pragma omp parallel for schedule(dynamic, 256)
        for (int i = 0; i < nl; i++)
            okv[i] = (char)sweep_outcome_parse(buf + st[i], ln[i], &f->o[i]);
    }
    for (int i = 0; i < nl && !rc; i++) {
        if (!okv[i])
            rc = tp_errf(e, TP_EDATA, "%s:%d: not a sweep record", path, i + 1);
        else if (f->o[i].count != f->o[0].count)
            rc = tp_errf(e, TP_EDATA,
                         "%s:%d: a record of a sweep of %lld scenarios, line "
                         "1's is of %lld: records of different specs",
                         path, i + 1, (long long)f->o[i].count,
                         (long long)f->o[0].count);
    }
    free(okv);
    free(st);
    free(ln);
    if (buf) munmap(buf, len);
    if (rc) return rc;
    f->n = nl;
    if (nl == 0)
        return tp_errf(e, TP_EDATA,
                       "%s: no records: not a sweep output (a sweep stopped "
                       "before its first record?)", path);
    f->by_id = tp_xmalloc((size_t)nl * sizeof *f->by_id);
    for (int i = 0; i < nl; i++) {
        memcpy(f->by_id[i].id, f->o[i].id, sizeof f->by_id[i].id);
        f->by_id[i].i = i;
    }
    qsort(f->by_id, (size_t)nl, sizeof *f->by_id, cmp_id);
    /* The first line (in file order) whose id an earlier line has, and
     * that earlier line. */
    int dup = -1, first = -1;
    for (int i = 1; i < nl; i++) {
        const id_ref *x = &f->by_id[i - 1], *y = &f->by_id[i];
        if (!strcmp(x->id, y->id) && (dup < 0 || y->i < dup)) {
            dup = y->i;
            first = x->i;
        }
    }
    if (dup >= 0)
        return tp_errf(e, TP_EDATA,
                       "%s:%d: scenario %s is also line %d (merge shards with "
                       "trainplan merge)",
                       path, dup + 1, f->o[dup].id, first + 1);
    /* Whole: count records with the indices 0..count-1. An index is below
     * its count (sweep_outcome_parse checks), so with the ids distinct a
     * missing index shows as fewer records than count, or as an index
     * twice. */
    int64_t count = f->o[0].count;
    int64_t first_missing = -1;
    if ((int64_t)nl <= count) {
        /* The indices sorted: the first gap (memory of the records, not
         * of the count a record claims, which may be anything). */
        int64_t *ix = tp_xmalloc((size_t)nl * sizeof *ix);
        for (int i = 0; i < nl; i++) ix[i] = f->o[i].index;
        qsort(ix, (size_t)nl, sizeof *ix, cmp_i64);
        int64_t want = 0;
        for (int i = 0; i < nl && first_missing < 0; i++) {
            if (ix[i] > want) first_missing = want;
            else if (ix[i] == want) want++;
        }
        if (first_missing < 0 && want < count) first_missing = want;
        free(ix);
    }
    if ((int64_t)nl > count)
        return tp_errf(e, TP_EDATA,
                       "%s: %d records, but its spec has %lld scenarios: "
                       "records of different specs of the same size",
                       path, nl, (long long)count);
    if ((int64_t)nl != count || first_missing >= 0)
        return tp_errf(e, TP_EDATA,
                       "%s: not a complete sweep: %d records of a spec of %lld "
                       "scenarios%s%lld%s; finish it with sweep --resume (or "
                       "merge its shards) before diff",
                       path, nl, (long long)count,
                       first_missing >= 0 ? " (the first missing: " : "",
                       first_missing >= 0 ? (long long)first_missing : 0LL,
                       first_missing >= 0 ? ")" : "");
    return TP_OK;
}

static const sweep_outcome *find(const sweep_file *f, const char *id)
{
    int lo = 0, hi = f->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (strcmp(f->by_id[mid].id, id) < 0) lo = mid + 1;
        else hi = mid;
    }
    if (lo < f->n && !strcmp(f->by_id[lo].id, id)) return &f->o[f->by_id[lo].i];
    return NULL;
}

static void file_free(sweep_file *f)
{
    free(f->o);
    free(f->by_id);
    memset(f, 0, sizeof *f);
}

static cJSON *side_json(const sweep_outcome *s)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "index", (double)s->index);
    cJSON_AddStringToObject(j, "status", s->status);
    if (s->layout[0]) {
        cJSON_AddStringToObject(j, "best", s->layout);
        cJSON_AddNumberToObject(j, "iteration_time_s", s->time_s);
        cJSON_AddNumberToObject(j, "cost_per_iteration_usd", s->cost_usd);
    } else {
        cJSON_AddNullToObject(j, "best");
    }
    return j;
}

int sweep_diff(const sweep_opts *o, emit_out *out, tp_err *e)
{
    double thr = o->threshold >= 0 ? o->threshold : 0.02;
    sweep_file a, b;
    int rc = load(o->pos[0], &a, e);
    if (!rc) rc = load(o->pos[1], &b, e);
    else memset(&b, 0, sizeof b);
    if (rc) {
        file_free(&a);
        file_free(&b);
        return rc;
    }
    FILE *f = out->f;
    int changed = 0, added = 0, vanished = 0, same = 0, inputs = 0;
    cJSON *jc = cJSON_CreateArray(), *jn = cJSON_CreateArray(),
          *jv = cJSON_CreateArray();
    emit_table t;
    static const char *hdr[] = {"change", "old", "new", "scenario", "input",
                                "what"};
    emit_table_init(&t, 6, hdr, "lrrlll");
    char why[1024], io[24], in[24], input[1024];
    /* Two sweeps of one spec shape (the same scenario count) whose ids
     * differ at a position: the same scenario across a change of what it
     * was asked with (a price, a system), paired by position. */
    const sweep_outcome **a_at = NULL;
    char *a_paired = tp_xcalloc((size_t)a.n + 1, 1);
    int paired = 0;
    if (a.n == b.n && a.o[0].count == b.o[0].count) {
        a_at = tp_xcalloc((size_t)a.n, sizeof *a_at);
        for (int i = 0; i < a.n; i++) a_at[a.o[i].index] = &a.o[i];
    }
    for (int i = 0; i < b.n; i++) {
        const sweep_outcome *y = &b.o[i], *x = find(&a, y->id);
        int by_position = 0;
        snprintf(in, sizeof in, "%lld", (long long)y->index);
        if (!x && a_at && a_at[y->index] && !find(&b, a_at[y->index]->id)) {
            x = a_at[y->index];
            a_paired[x - a.o] = 1;
            by_position = 1;
            paired++;
        }
        /* which input changed: the scenario's values, or its files */
        input[0] = '\0';
        if (by_position)
            sweep_dims_diff(x->dims, y->dims, 1, input, sizeof input);
        else if (x && x->inputs_digest != y->inputs_digest
                 && sweep_dims_diff(x->files, y->files, 0, input + 7,
                                    sizeof input - 7))
            memcpy(input, "files: ", 7);
        if (!x) {
            added++;
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "id", y->id);
            cJSON_AddStringToObject(j, "scenario", y->label);
            cJSON_AddItemToObject(j, "new", side_json(y));
            cJSON_AddItemToArray(jn, j);
            emit_table_row(&t, "new", "-", in, y->label, "-",
                          y->layout[0] ? y->layout : y->status);
            continue;
        }
        snprintf(io, sizeof io, "%lld", (long long)x->index);
        if (sweep_compare(x, y, thr, why, sizeof why) == SWEEP_SAME) {
            same++;
            inputs += x->inputs_digest != y->inputs_digest || by_position;
            continue;
        }
        changed++;
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "id", y->id);
        if (by_position) cJSON_AddStringToObject(j, "old_id", x->id);
        cJSON_AddStringToObject(j, "scenario", y->label);
        cJSON_AddStringToObject(j, "what", why);
        cJSON_AddBoolToObject(j, "inputs_changed",
                              x->inputs_digest != y->inputs_digest || by_position);
        cJSON_AddStringToObject(j, "paired_by", by_position ? "position" : "id");
        cJSON_AddStringToObject(j, "input", input);
        cJSON_AddItemToObject(j, "old", side_json(x));
        cJSON_AddItemToObject(j, "new", side_json(y));
        cJSON_AddItemToArray(jc, j);
        emit_table_row(&t, "changed", io, in, y->label, input[0] ? input : "-",
                      why);
    }
    for (int i = 0; i < a.n; i++) {
        const sweep_outcome *x = &a.o[i];
        if (a_paired[i] || find(&b, x->id)) continue;
        vanished++;
        snprintf(io, sizeof io, "%lld", (long long)x->index);
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "id", x->id);
        cJSON_AddStringToObject(j, "scenario", x->label);
        cJSON_AddItemToObject(j, "old", side_json(x));
        cJSON_AddItemToArray(jv, j);
        emit_table_row(&t, "vanished", io, "-", x->label, "-",
                      x->layout[0] ? x->layout : x->status);
    }
    free(a_at);
    free(a_paired);
    char sum[640];
    int sn = snprintf(sum, sizeof sum,
                      "%d scenarios old, %d new: %d changed (threshold %g), %d "
                      "new, %d vanished, %d unchanged (%d of them with changed "
                      "input files)",
                      a.n, b.n, changed, thr, added, vanished, same, inputs);
    if (paired && sn > 0 && (size_t)sn < sizeof sum)
        snprintf(sum + sn, sizeof sum - (size_t)sn,
                 "; %d paired by position across a change of their inputs "
                 "(their ids differ)", paired);
    if (o->format == EMIT_JSON) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "old", o->pos[0]);
        cJSON_AddStringToObject(j, "new", o->pos[1]);
        cJSON_AddNumberToObject(j, "threshold", thr);
        cJSON_AddItemToObject(j, "changed", jc);
        cJSON_AddItemToObject(j, "new_scenarios", jn);
        cJSON_AddItemToObject(j, "vanished_scenarios", jv);
        cJSON *s = cJSON_AddObjectToObject(j, "summary");
        cJSON_AddNumberToObject(s, "old", a.n);
        cJSON_AddNumberToObject(s, "new", b.n);
        cJSON_AddNumberToObject(s, "changed", changed);
        cJSON_AddNumberToObject(s, "added", added);
        cJSON_AddNumberToObject(s, "vanished", vanished);
        cJSON_AddNumberToObject(s, "unchanged", same);
        cJSON_AddNumberToObject(s, "unchanged_with_changed_inputs", inputs);
        cJSON_AddNumberToObject(s, "paired_by_position", paired);
        emit_print_json(f, j);
    } else if (o->format == EMIT_MD) {
        cJSON_Delete(jc);
        cJSON_Delete(jn);
        cJSON_Delete(jv);
        fprintf(f, "## trainplan diff\n\n`%s` -> `%s`\n\n%s.\n", o->pos[0],
                o->pos[1], sum);
        if (t.nrows) {
            fprintf(f, "\n| change | old # | new # | scenario | input | what "
                       "|\n|---|---:|---:|---|---|---|\n");
            for (int r = 0; r < t.nrows; r++) {
                fputc('|', f);
                for (int c = 0; c < t.ncols; c++) {
                    fputc(' ', f);
                    for (const char *p = t.cells[r * t.ncols + c]; *p; p++) {
                        if (*p == '|') fputc('\\', f);
                        fputc(*p, f);
                    }
                    fputs(" |", f);
                }
                fputc('\n', f);
            }
        }
    } else {
        cJSON_Delete(jc);
        cJSON_Delete(jn);
        cJSON_Delete(jv);
        if (t.nrows) emit_table_print(&t, f, o->format == EMIT_CSV ? EMIT_CSV : EMIT_TABLE);
        if (o->format != EMIT_CSV) fprintf(f, "%s%s\n", t.nrows ? "\n" : "", sum);
    }
    emit_table_free(&t);
    file_free(&a);
    file_free(&b);
    if (changed + added + vanished) {
        tp_errf(e, DIFF_EXIT_CHANGED, "diff: %d changed, %d new, %d vanished",
                changed, added, vanished);
        return DIFF_EXIT_CHANGED;
    }
    return TP_OK;
}
