/*
 * sweep_scenario.c - one scenario of a sweep: its search run and its
 * record (sweep_scenario_record; what a record holds: sweep_run.c's
 * opening comment), and the check --resume expects of a record already
 * written (sweep_expected_check). The digests of the input files the
 * records name are read once per process (digest_cache).
 */
#include "sweep_int.h"

#include <stdlib.h>
#include <string.h>

#ifndef TRAINPLAN_VERSION
#define TRAINPLAN_VERSION "0.0.0"
#endif

/* ---- digests of input files, each file read once per process ---------- */

static uint64_t file_digest(digest_cache *c, const char *path)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->path[i], path)) return c->h[i];
    char *buf = NULL;
    size_t len = 0;
    tp_err e = {0};
    uint64_t h = 0; /* 0: unreadable (the search would have failed) */
    if (tp_read_file(path, (size_t)1 << 31, &buf, &len, &e) == TP_OK)
        h = sweep_fnv1a(SWEEP_FNV_BASIS, buf, len);
    free(buf);
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 32;
        c->path = tp_xrealloc(c->path, (size_t)c->cap * sizeof *c->path);
        c->h = tp_xrealloc(c->h, (size_t)c->cap * sizeof *c->h);
    }
    c->path[c->n] = tp_xstrdup(path);
    c->h[c->n++] = h;
    return h;
}

void sweep_digest_free(digest_cache *c)
{
    for (int i = 0; i < c->n; i++) free(c->path[i]);
    free(c->path);
    free(c->h);
}

static void add_hex(cJSON *o, const char *key, uint64_t h)
{
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    cJSON_AddStringToObject(o, key, hex);
}

static uint64_t measured_digest(digest_cache *c, uint64_t h,
                                const hw_measured *m, int n, int *count)
{
    for (int i = 0; i < n; i++) {
        const char *b = tp_basename(m[i].path);
        uint64_t d = file_digest(c, m[i].path);
        h = sweep_fnv1a(h, b, strlen(b) + 1);
        h = sweep_fnv1a(h, &d, sizeof d);
        (*count)++;
    }
    return h;
}

/* The inputs of a set-up search: the model and every hwdb file read.
 * File names only (no directories), so records compare across machines. */
static cJSON *inputs_json(const sweep_case *so, const search_setup *cs,
                          digest_cache *c)
{
    cJSON *in = cJSON_CreateObject();
    cJSON *m = cJSON_AddObjectToObject(in, "model");
    cJSON_AddStringToObject(m, "name", cs->m.name);
    if (space_model_is_path(so->job.model)) {
        cJSON_AddStringToObject(m, "file", tp_basename(so->job.model));
        add_hex(m, "fnv1a64", file_digest(c, so->job.model));
    }
    cJSON *sa = cJSON_AddArrayToObject(in, "systems");
    for (int i = 0; i < cs->ns; i++) {
        const hw_system *y = cs->sys[i].ctx.sys;
        const hw_gpu *g = y->gpu;
        cJSON *s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "system", y->name);
        cJSON_AddStringToObject(s, "file", tp_basename(y->file));
        add_hex(s, "fnv1a64", file_digest(c, y->file));
        cJSON_AddStringToObject(s, "gpu", g->name);
        cJSON_AddStringToObject(s, "gpu_file", tp_basename(g->file));
        add_hex(s, "gpu_fnv1a64", file_digest(c, g->file));
        if (g->models_like) {
            cJSON_AddStringToObject(s, "models_like_file",
                                    tp_basename(g->models_like->file));
            add_hex(s, "models_like_fnv1a64", file_digest(c, g->models_like->file));
        }
        int nm = 0;
        uint64_t h = SWEEP_FNV_BASIS;
        h = measured_digest(c, h, y->measured, y->n_measured, &nm);
        h = measured_digest(c, h, g->measured, g->n_measured, &nm);
        if (g->models_like)
            h = measured_digest(c, h, g->models_like->measured,
                                g->models_like->n_measured, &nm);
        cJSON_AddNumberToObject(s, "measured_files", nm);
        add_hex(s, "measured_fnv1a64", h);
        cJSON_AddItemToArray(sa, s);
    }
    return in;
}

/* What a record of scenario k written now would say of its version and
 * inputs (sweep_key.check); 0 when it cannot be set up (error records
 * are then compared by index and id only). */
uint64_t sweep_expected_check(const sweep_spec *s, int64_t k, const hw_db *db,
                              search_cache *cache, digest_cache *dc)
{
    sweep_case so;
    sweep_scenario(s, k, &so);
    search_setup cs;
    tp_err e = {0};
    if (search_setup_open(&so.job, &so.ask, db, cache, &cs, &e)) return 0;
    cJSON *in = inputs_json(&so, &cs, dc);
    uint64_t h = sweep_record_check(TRAINPLAN_VERSION, in);
    cJSON_Delete(in);
    search_setup_close(&cs);
    return h;
}

/* The best layout: the first ranked row's key figures. */
static cJSON *best_json(const cJSON *search)
{
    const cJSON *r0 = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(search, "ranked"), 0);
    if (!r0) return cJSON_CreateNull();
    static const char *const keys[] = {
        "layout", "system", "gpus", "iteration_time_s", "tokens_per_s", "mfu",
        "peak_memory_bytes", "memory_margin_bytes",
        "memory_headroom_bytes", "cost_per_iteration_usd", "time_to_train_s",
        "cost_usd"};
    cJSON *b = cJSON_CreateObject();
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(r0, keys[i]);
        if (v) cJSON_AddItemToObject(b, keys[i], cJSON_Duplicate(v, 1));
    }
    return b;
}

/* ---- the compact record (the default; "record": "full" is the other) -- */

/* What a dashboard reads of a search, in two fifths of the bytes of
 * search --format json (a record of bench/sweep_speed's spec without
 * launches: 7.1 KB on average, 7.5 at most, against 17.8): the top-k
 * rows without what their layout tag already says (pipeline_split,
 * memory_savers) or the scenario does (sequence, batch, precision,
 * price), the breakdown of the best row only; the
 * Pareto front as points (layout, time, cost, memory), its rows being
 * those of ranked or like them; the counts without zeros, and the
 * pipeline sizes that had a valid layout. Every figure it keeps is the
 * full record's, to the bit. docs/output-formats.md, "Compact sweep
 * records". */
static const char *const compact_row_drop[] = {
    "pipeline_split", "memory_savers", "global_batch_size", "seq_length",
    "precision", "price_usd_per_gpu_hour"};
static const char *const compact_point_keep[] = {
    "rank", "layout", "system", "gpus", "iteration_time_s", "tokens_per_s",
    "peak_memory_bytes", "cost_per_iteration_usd", "time_to_train_s",
    "cost_usd"};

static void compact_search(cJSON *sr)
{
    const size_t n_drop = sizeof compact_row_drop / sizeof compact_row_drop[0];
    const size_t n_keep = sizeof compact_point_keep / sizeof compact_point_keep[0];
    cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(sr, "ranked")) {
        for (size_t i = 0; i < n_drop; i++)
            cJSON_DeleteItemFromObjectCaseSensitive(row, compact_row_drop[i]);
        if (row != cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sr, "ranked"), 0))
            cJSON_DeleteItemFromObjectCaseSensitive(row, "breakdown_s");
    }
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(sr, "pareto")) {
        for (cJSON *c = row->child, *next; c; c = next) {
            next = c->next;
            size_t i = 0;
            while (i < n_keep && strcmp(c->string, compact_point_keep[i])) i++;
            if (i == n_keep) cJSON_Delete(cJSON_DetachItemViaPointer(row, c));
        }
    }
    cJSON *st = cJSON_GetObjectItemCaseSensitive(sr, "stats");
    for (cJSON *c = st ? st->child : NULL; c; c = c->next) {
        if (cJSON_IsArray(c) && !strcmp(c->string, "pipeline_sizes")) {
            for (cJSON *p = c->child, *next; p; p = next) {
                next = p->next;
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, "valid");
                if (cJSON_IsNumber(v) && v->valuedouble == 0)
                    cJSON_Delete(cJSON_DetachItemViaPointer(c, p));
            }
        } else if (cJSON_IsObject(c)) { /* counts per rule, reason, saver */
            for (cJSON *m = c->child, *next; m; m = next) {
                next = m->next;
                if (cJSON_IsNumber(m) && m->valuedouble == 0)
                    cJSON_Delete(cJSON_DetachItemViaPointer(c, m));
            }
        }
    }
}

/* Runs scenario k and returns its record line, '\n' included (the caller
 * frees it). Never fails: a scenario that cannot run is a record with
 * status "error" and the message. */
char *sweep_scenario_record(const sweep_spec *s, int64_t k, const hw_db *db,
                            search_cache *cache, digest_cache *dc)
{
    sweep_case so;
    sweep_scenario(s, k, &so);
    char id[17];
    sweep_scenario_id(s, k, id);
    cJSON *j = emit_json_version(cJSON_CreateObject());
    cJSON_AddNumberToObject(j, "index", (double)k);
    cJSON_AddNumberToObject(j, "count", (double)s->count);
    cJSON_AddStringToObject(j, "id", id);
    cJSON *sc = cJSON_AddObjectToObject(j, "scenario");
    /* the model as the spec wrote it (a path relative to the spec, not
     * where this machine found it): records compare across machines */
    const char *model_text = so.job.model;
    for (int i = 0; i < s->n[SWEEP_MODELS]; i++)
        if (s->model_path && s->model_path[i] == so.job.model)
            model_text = s->val[SWEEP_MODELS][i];
    cJSON_AddStringToObject(sc, "model", model_text);
    cJSON_AddStringToObject(sc, "system", so.ask.systems);
    cJSON_AddStringToObject(sc, "gpus", so.ask.gpus);
    cJSON_AddNumberToObject(sc, "seq_length", (double)so.job.seq_length);
    cJSON_AddNumberToObject(sc, "global_batch_size", (double)so.job.gbs);
    /* the spec's name: mxfp8 is fp8 with its recipe, nvfp4 fp4 */
    cJSON_AddStringToObject(sc, "precision",
                            so.job.precision == HW_FP4 ? "nvfp4"
                            : so.job.precision == HW_FP8
                                    && so.job.fp8_recipe == SPACE_FP8_MXFP8
                                ? "mxfp8"
                                : hw_dtype_names[so.job.precision]);
    if (so.job.tokens > 0) cJSON_AddNumberToObject(sc, "tokens", so.job.tokens);
    else cJSON_AddNullToObject(sc, "tokens");
    if (so.ask.price > 0) cJSON_AddNumberToObject(sc, "price_usd_per_gpu_hour", so.ask.price);
    else cJSON_AddNullToObject(sc, "price_usd_per_gpu_hour");
    cJSON *opts = s->options_json[0] ? cJSON_Parse(s->options_json) : NULL;
    cJSON_AddItemToObject(sc, "options", opts ? opts : cJSON_CreateObject());
    cJSON_AddStringToObject(j, "version", TRAINPLAN_VERSION);
    /* which form: a reader tells them apart by this, not by what is
     * missing from search */
    cJSON_AddStringToObject(j, "record", sweep_record_names[s->record]);

    search_setup cs;
    search_answer ans;
    memset(&ans, 0, sizeof ans);
    tp_err e = {0};
    int rc = search_setup_open(&so.job, &so.ask, db, cache, &cs, &e);
    if (rc == TP_OK) {
        cJSON *in;
#pragma omp critical(sweep_digest) /* dc is every thread's */
        in = inputs_json(&so, &cs, dc);
        cJSON_AddItemToObject(j, "inputs", in);
        rc = search_run(&cs.q, &ans, &e);
    } else {
        cJSON_AddNullToObject(j, "inputs");
    }
    if (rc == TP_OK) {
        cJSON *sr = emit_search_json(&cs, &so.form, &ans, 0);
        cJSON_AddStringToObject(j, "status", ans.n_ranked ? "ok" : "infeasible");
        cJSON_AddItemToObject(j, "best", best_json(sr));
        if (s->record == SWEEP_RECORD_COMPACT) compact_search(sr);
        cJSON_AddItemToObject(j, "search", sr);
    } else {
        cJSON_AddStringToObject(j, "status", "error");
        cJSON_AddStringToObject(j, "error", e.msg);
        cJSON_AddNullToObject(j, "best");
        cJSON_AddNullToObject(j, "search");
    }
    search_answer_free(&ans);
    search_setup_close(&cs);
    char *t = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    char *line = sweep_record_seal(t, strlen(t)); /* its digest last */
    cJSON_free(t);
    return line;
}
