/*
 * cmd_diff.c - `trainplan diff OLD.jsonl NEW.jsonl`: what changed between
 * two sweeps (last night's and tonight's). Scenarios are matched by id
 * (a digest of their inputs as given, not of the files read), so a
 * reordered or extended spec still matches. A scenario changed when its
 * status or best layout changed, or the best layout's iteration time or
 * cost per iteration moved by more than --threshold (relative, default
 * 0.02). Also listed: new and vanished scenarios. Changed input files
 * (hwdb, config.json digests) with the same outcome are counted, not
 * listed.
 *
 * Exit: 0 nothing changed, 3 changes found (CLI_EXIT_CHANGED), 65 a file
 * that is not a complete sweep output.
 */
#include "sweep.h"

#include <stdlib.h>
#include <string.h>

typedef struct sweep_file {
    sweep_outcome *o;
    int n;
} sweep_file;

static int load(const char *path, sweep_file *f, tp_err *e)
{
    char *buf = NULL;
    size_t len = 0, *st, *ln, tail;
    memset(f, 0, sizeof *f);
    int rc = tp_read_file(path, (size_t)1 << 34, &buf, &len, e);
    if (rc) return rc;
    int nl = sweep_split_lines(buf, len, &st, &ln, &tail);
    if (tail)
        rc = tp_errf(e, TP_EDATA,
                     "%s: the last line (line %d) is incomplete, a write cut "
                     "short; finish the sweep with --resume", path, nl + 1);
    f->o = tp_xcalloc((size_t)nl + 1, sizeof *f->o);
    for (int i = 0; i < nl && !rc; i++) {
        if (!sweep_outcome_parse(buf + st[i], ln[i], &f->o[f->n]))
            rc = tp_errf(e, TP_EDATA, "%s:%d: not a sweep record", path, i + 1);
        for (int j = 0; j < f->n && !rc; j++)
            if (!strcmp(f->o[j].id, f->o[f->n].id))
                rc = tp_errf(e, TP_EDATA,
                             "%s:%d: scenario %s is also line %d (merge shards "
                             "with trainplan merge)", path, i + 1, f->o[j].id,
                             j + 1);
        f->n++;
    }
    free(st);
    free(ln);
    free(buf);
    return rc;
}

static const sweep_outcome *find(const sweep_file *f, const char *id)
{
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->o[i].id, id)) return &f->o[i];
    return NULL;
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

int cmd_diff(const cli_opts *o, cli_out *out, tp_err *e)
{
    double thr = o->threshold >= 0 ? o->threshold : 0.02;
    sweep_file a, b;
    int rc = load(o->pos[0], &a, e);
    if (!rc) rc = load(o->pos[1], &b, e);
    else memset(&b, 0, sizeof b);
    if (rc) {
        free(a.o);
        free(b.o);
        return rc;
    }
    FILE *f = out->f;
    int changed = 0, added = 0, vanished = 0, same = 0, inputs = 0;
    cJSON *jc = cJSON_CreateArray(), *jn = cJSON_CreateArray(),
          *jv = cJSON_CreateArray();
    cli_table t;
    static const char *hdr[] = {"change", "old", "new", "scenario", "what"};
    cli_table_init(&t, 5, hdr, "lrrll");
    char why[1024], io[24], in[24];
    for (int i = 0; i < b.n; i++) {
        const sweep_outcome *y = &b.o[i], *x = find(&a, y->id);
        snprintf(in, sizeof in, "%lld", (long long)y->index);
        if (!x) {
            added++;
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "id", y->id);
            cJSON_AddStringToObject(j, "scenario", y->label);
            cJSON_AddItemToObject(j, "new", side_json(y));
            cJSON_AddItemToArray(jn, j);
            cli_table_row(&t, "new", "-", in, y->label,
                          y->layout[0] ? y->layout : y->status);
            continue;
        }
        snprintf(io, sizeof io, "%lld", (long long)x->index);
        if (sweep_compare(x, y, thr, why, sizeof why) == SWEEP_SAME) {
            same++;
            inputs += x->inputs_digest != y->inputs_digest;
            continue;
        }
        changed++;
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "id", y->id);
        cJSON_AddStringToObject(j, "scenario", y->label);
        cJSON_AddStringToObject(j, "what", why);
        cJSON_AddBoolToObject(j, "inputs_changed", x->inputs_digest != y->inputs_digest);
        cJSON_AddItemToObject(j, "old", side_json(x));
        cJSON_AddItemToObject(j, "new", side_json(y));
        cJSON_AddItemToArray(jc, j);
        cli_table_row(&t, "changed", io, in, y->label, why);
    }
    for (int i = 0; i < a.n; i++) {
        const sweep_outcome *x = &a.o[i];
        if (find(&b, x->id)) continue;
        vanished++;
        snprintf(io, sizeof io, "%lld", (long long)x->index);
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "id", x->id);
        cJSON_AddStringToObject(j, "scenario", x->label);
        cJSON_AddItemToObject(j, "old", side_json(x));
        cJSON_AddItemToArray(jv, j);
        cli_table_row(&t, "vanished", io, "-", x->label,
                      x->layout[0] ? x->layout : x->status);
    }
    char sum[512];
    snprintf(sum, sizeof sum,
             "%d scenarios old, %d new: %d changed (threshold %g), %d new, %d "
             "vanished, %d unchanged (%d of them with changed input files)",
             a.n, b.n, changed, thr, added, vanished, same, inputs);
    if (o->format == CLI_JSON) {
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
        cli_print_json(f, j);
    } else if (o->format == CLI_MD) {
        cJSON_Delete(jc);
        cJSON_Delete(jn);
        cJSON_Delete(jv);
        fprintf(f, "## trainplan diff\n\n`%s` -> `%s`\n\n%s.\n", o->pos[0],
                o->pos[1], sum);
        if (t.nrows) {
            fprintf(f, "\n| change | old # | new # | scenario | what |\n"
                       "|---|---:|---:|---|---|\n");
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
        if (t.nrows) cli_table_print(&t, f, o->format == CLI_CSV ? CLI_CSV : CLI_TABLE);
        if (o->format != CLI_CSV) fprintf(f, "%s%s\n", t.nrows ? "\n" : "", sum);
    }
    cli_table_free(&t);
    free(a.o);
    free(b.o);
    if (changed + added + vanished) {
        tp_errf(e, CLI_EXIT_CHANGED, "diff: %d changed, %d new, %d vanished",
                changed, added, vanished);
        return CLI_EXIT_CHANGED;
    }
    return TP_OK;
}
