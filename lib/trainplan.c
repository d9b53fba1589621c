/*
 * trainplan.c - the library's API (include/trainplan.h): a request
 * (request.c: option names checked against the option table, kept as an
 * argument vector) is run through the command layer (run.c, the one
 * parser of the command line too), its standard output and standard
 * error captured in memory (open_memstream). tp_estimate's struct is
 * filled by the command itself (lib_run_sink: no JSON printed or
 * parsed); tp_search's is read back from the command's JSON.
 * A sweep's spec given as a JSON object is written to a private
 * temporary file for the call (the command reads a file). A session
 * (tp_open) hands the command its database and fitted models
 * (session.c) and runs the read-only commands without the lock
 * (run_locked).
 *
 * Not here: any option logic (table.c has the one table), signal handlers
 * (emit/out.c and sweep/sweep_run.c install theirs only after tp_handle_signals).
 */
#define _GNU_SOURCE /* open_memstream */
#include "trainplan.h"

#include "lib_int.h"
#include "request.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifndef TRAINPLAN_VERSION
#define TRAINPLAN_VERSION "0.0.0"
#endif

/* out.c's signal slots and the files a command writes are the process's:
 * a command that may write files (an -o, a sweep's records) runs under
 * this lock. A session's calls of the read-only commands
 * (session_parallel) take no lock: the option parser's state is the
 * call's own (opt.c), the session's caches fill under its own lock. */
static pthread_mutex_t run_lock = PTHREAD_MUTEX_INITIALIZER;

/* The session a call runs with: the database and fitted models opened
 * once (session.c). */
struct tp_session {
    lib_session *cs;
};

/* lib_run_sink, under run_lock unless parallel. argv is the caller's
 * copy (the parser rearranges it). sink NULL: the command prints. */
static int run_locked(int argc, char **argv, FILE *out, FILE *err,
                      lib_session *cs, int parallel, lib_estimate_sink *sink)
{
    if (parallel) return lib_run_sink(argc, argv, out, err, cs, sink);
    pthread_mutex_lock(&run_lock);
    int rc = lib_run_sink(argc, argv, out, err, cs, sink);
    pthread_mutex_unlock(&run_lock);
    return rc;
}

int tp_api_version(void) { return TP_API_VERSION; }

const char *tp_version(void) { return TRAINPLAN_VERSION; }

void tp_free(void *p) { free(p); }

void tp_handle_signals(void) { emit_own_signals(); }

int tp_run(int argc, char *const argv[], FILE *out, FILE *err)
{
    FILE *ef = err ? err : stderr;
    if (argc < 1 || !argv) {
        fprintf(ef, "trainplan: tp_run: expected argc >= 1 and an argv, "
                    "found argc %d and %s\n", argc, argv ? "an argv" : "NULL");
        return TP_EUSAGE;
    }
    for (int i = 0; i < argc; i++)
        if (!argv[i]) {
            fprintf(ef, "trainplan: tp_run: argv[%d] is NULL (argc %d: the "
                        "first argc strings must all be there)\n", i, argc);
            return TP_EUSAGE;
        }
    /* the parser rearranges its vector: a copy, so the caller's stays as it was */
    char **copy = tp_xcalloc((size_t)argc + 1, sizeof *copy);
    memcpy(copy, argv, (size_t)argc * sizeof *copy);
    int rc = run_locked(argc, copy, out ? out : stdout, err ? err : stderr,
                        NULL, 0, NULL);
    free(copy);
    return rc;
}

/* ---- JSON in, JSON out ---------------------------------------------------- */

/* What a memory stream holds once closed: NULL when empty. */
static char *stream_text(FILE *f, char **buf, size_t *len)
{
    fclose(f);
    if (*len == 0) {
        free(*buf);
        return NULL;
    }
    return *buf;
}

/* Commands a session runs outside the lock once parsed: they read the
 * database and write only to the call's own streams (--svg and --sbatch
 * files go through out.c's slots: those calls keep the lock). */
static int session_parallel(const char *command, const tp_request *q)
{
    static const char *const cmds[] = {"estimate", "search", "model show",
                                       "model list"};
    int ok = 0;
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        ok |= strcmp(command, cmds[i]) == 0;
    for (int i = 0; ok && q && i < q->opts.n; i++)
        if (strcmp(q->opts.v[i], "--svg") == 0 || strcmp(q->opts.v[i], "--sbatch") == 0)
            ok = 0;
    return ok;
}

/* Runs command with q's options (on session s, or none), its output in
 * *result_json and its diagnostics in *error (either NULL: dropped). With
 * sink, an estimate fills it instead of printing (lib_run_sink). */
static int call_in(tp_session *s, const char *command, const tp_request *q,
                   char **result_json, char **error, lib_estimate_sink *sink)
{
    if (result_json) *result_json = NULL;
    if (error) *error = NULL;
    if (!command || !command[0])
        return req_error(error, "trainplan: tp_call: the command is %s%s "
                             "(\"estimate\", \"search\", \"model show\", ...)",
                             command ? "empty" : "NULL", "");
    if (q && q->misuse[0]) {
        if (error) *error = req_dup(q->misuse);
        return TP_EUSAGE;
    }
    /* The vector points at q's strings and the command's words: the
     * parser permutes the vector and reads the strings, never writes
     * them (as tp_run's caller's); one allocation, none per option. */
    char words[128];
    tp_strlcpy(words, command, sizeof words);
    int nw = 1;
    for (const char *p = words; *p; p++) nw += *p == ' ';
    int n_opts = q ? q->opts.n : 0, n_args = q ? q->args.n : 0;
    char **argv = tp_xmalloc((size_t)(4 + n_opts + nw + n_args + 1)
                             * sizeof *argv);
    static char prog[] = "trainplan", fmt[] = "--format", json[] = "json",
                dashes[] = "--";
    int argc = 0;
    argv[argc++] = prog;
    argv[argc++] = fmt;
    argv[argc++] = json;
    for (int i = 0; i < n_opts; i++) argv[argc++] = q->opts.v[i];
    argv[argc++] = dashes; /* the rest is positional, even "-x" */
    char *save = NULL;
    for (char *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save))
        argv[argc++] = w;
    for (int i = 0; i < n_args; i++) argv[argc++] = q->args.v[i];
    argv[argc] = NULL;

    char *obuf = NULL, *ebuf = NULL;
    size_t olen = 0, elen = 0;
    FILE *out = open_memstream(&obuf, &olen);
    FILE *err = open_memstream(&ebuf, &elen);
    if (!out || !err) {
        fprintf(stderr, "trainplan: out of memory (open_memstream)\n");
        abort();
    }
    int rc = run_locked(argc, argv, out, err, s ? s->cs : NULL,
                        s && session_parallel(command, q), sink);
    char *o = stream_text(out, &obuf, &olen);
    char *e = stream_text(err, &ebuf, &elen);
    if (result_json) *result_json = o;
    else free(o);
    if (error) *error = e;
    else free(e);
    free(argv);
    return rc;
}

int tp_call(const char *command, const tp_request *q, char **result_json,
            char **error)
{
    return call_in(NULL, command, q, result_json, error, NULL);
}

static int call_json(tp_session *s, const char *command, const char *request_json,
                     req_mode mode, char **result_json, char **error)
{
    if (result_json) *result_json = NULL;
    if (error) *error = NULL;
    int rc;
    char *msg = NULL;
    spec_file sf = {{0}};
    tp_request *q = req_from_json(request_json, mode, &sf, &rc, &msg);
    if (!q) {
        if (error) *error = msg;
        else free(msg);
        return rc;
    }
    rc = call_in(s, command, q, result_json, error, NULL);
    tp_request_free(q);
    req_spec_remove(&sf);
    return rc;
}

int tp_call_json(const char *command, const char *request_json,
                 char **result_json, char **error)
{
    int sweep = command && strcmp(command, "sweep") == 0;
    return call_json(NULL, command, request_json, sweep ? REQ_SPEC : REQ_PLAIN,
                     result_json, error);
}

int tp_search_json(const char *request_json, char **result_json, char **error)
{
    return call_json(NULL, "search", request_json, REQ_PLAIN, result_json, error);
}

int tp_estimate_json(const char *request_json, char **result_json,
                     char **error)
{
    return call_json(NULL, "estimate", request_json, REQ_PLAIN, result_json, error);
}

int tp_model_json(const char *request_json, char **result_json, char **error)
{
    return call_json(NULL, "model show", request_json, REQ_NAME, result_json, error);
}

int tp_sweep_json(const char *request_json, char **result_json, char **error)
{
    return call_json(NULL, "sweep", request_json, REQ_SPEC, result_json, error);
}

/* ---- plain structs ------------------------------------------------------ */

static double num(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static void str(const cJSON *o, const char *key, char *buf, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    tp_strlcpy(buf, cJSON_IsString(v) ? v->valuestring : "", cap);
}

/* The layout fields of o (a ranked row of search, estimate's "layout"). */
static void layout_fields(const cJSON *o, tp_layout *l)
{
    l->gpus = (int)num(o, "gpus", 0);
    l->tp = (int)num(o, "tensor_model_parallel_size", 1);
    l->pp = (int)num(o, "pipeline_model_parallel_size", 1);
    l->cp = (int)num(o, "context_parallel_size", 1);
    l->dp = (int)num(o, "data_parallel_size", 1);
    l->ep = (int)num(o, "expert_model_parallel_size", 1);
    l->etp = (int)num(o, "expert_tensor_parallel_size", 1);
    l->vpp = (int)num(o, "virtual_stages_per_pipeline_rank", 1);
    l->mbs = (int)num(o, "micro_batch_size", 0);
    l->gbs = (int)num(o, "global_batch_size", 0);
    l->seq_length = (int)num(o, "seq_length", 0);
    l->sequence_parallel =
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "sequence_parallel"));
    str(o, "recompute_granularity", l->recompute, sizeof l->recompute);
    l->zero_stage = (int)num(o, "zero_stage", 0);
    str(o, "precision", l->precision, sizeof l->precision);
}

/* Parses the JSON a command printed; TP_EINTERNAL if it is not JSON. */
static cJSON *parse_result(const char *json, char **error)
{
    cJSON *root = json ? cJSON_Parse(json) : NULL;
    if (!root && error && !*error)
        *error = req_dup(json ? "trainplan: internal: the command's output is "
                                "not JSON"
                              : "trainplan: internal: the command printed "
                                "nothing");
    return root;
}

/* *r from what the estimate found: the numbers its JSON prints, as the
 * estimate's own doubles (the JSON's 15 to 17 digits read back may
 * differ in the last bit), ep and etp 1 for a dense model as the JSON
 * leaves them out. */
static void estimate_from_sink(const lib_estimate_sink *k,
                               tp_estimate_result *r)
{
    const est_result *e = &k->r;
    const space_layout *l = &e->layout;
    tp_layout *t = &r->layout;
    r->feasible = e->feasible != 0;
    tp_strlcpy(r->reason, est_reason_names[e->reason], sizeof r->reason);
    tp_strlcpy(r->gpu, k->gpu, sizeof r->gpu);
    tp_strlcpy(t->system, k->system, sizeof t->system);
    t->gpus = (int)e->gpus;
    t->tp = (int)l->tp;
    t->pp = (int)l->pp;
    t->cp = (int)l->cp;
    t->dp = (int)l->dp;
    t->ep = k->moe ? (int)space_layout_ep(l) : 1;
    t->etp = k->moe ? (int)space_layout_etp(l) : 1;
    t->vpp = (int)l->vpp;
    t->mbs = (int)l->mbs;
    t->gbs = (int)l->gbs;
    t->seq_length = (int)l->seq;
    t->sequence_parallel = l->sp != 0;
    tp_strlcpy(t->recompute, space_recompute_names[l->recompute],
               sizeof t->recompute);
    t->zero_stage = (int)l->zero;
    tp_strlcpy(t->precision, hw_dtype_names[l->dtype], sizeof t->precision);
    t->iteration_time_s = e->iteration_s;
    t->tokens_per_s = e->tokens_per_s;
    t->mfu = e->mfu;
    t->peak_memory_bytes = e->mem.total;
    r->gpu_memory_bytes = k->gpu_mem_bytes;
}

/* An estimate into *r: the command runs with a sink (lib_run_sink), so
 * no JSON is printed or parsed. */
static int estimate_in(tp_session *s, const tp_request *q, tp_estimate_result *r,
                       char **error)
{
    if (error) *error = NULL;
    if (!r)
        return req_error(error, "trainplan: tp_estimate: the result is "
                             "NULL%s%s", "", "");
    memset(r, 0, sizeof *r);
    r->layout.cost_per_iteration_usd = -1;
    lib_estimate_sink k; /* 1.3 KB; call_in may refuse before the run */
    k.filled = 0;
    int rc = call_in(s, "estimate", q, NULL, error, &k);
    if (k.filled) estimate_from_sink(&k, r);
    else if (rc == TP_OK) {
        if (error && !*error)
            *error = req_dup("trainplan: internal: the estimate gave no "
                             "result");
        rc = TP_EINTERNAL;
    }
    return rc;
}

static int search_in(tp_session *s, const tp_request *q, tp_layout *top, int cap,
                     int *n, char **error)
{
    if (error) *error = NULL;
    if (n) *n = 0;
    if (!n || cap < 0 || (!top && cap > 0))
        return req_error(error, "trainplan: tp_search: %s%s",
                             !n ? "the count n is NULL"
                             : cap < 0 ? "cap is negative"
                                       : "top is NULL with cap > 0", "");
    char *json = NULL;
    int rc = call_in(s, "search", q, &json, error, NULL);
    cJSON *root = parse_result(json, error);
    tp_free(json);
    if (!root) return rc ? rc : TP_EINTERNAL;
    const cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(root, "ranked")) {
        if (*n >= cap) break;
        tp_layout *l = &top[(*n)++];
        memset(l, 0, sizeof *l);
        str(row, "layout", l->tag, sizeof l->tag);
        str(row, "system", l->system, sizeof l->system);
        layout_fields(row, l);
        l->iteration_time_s = num(row, "iteration_time_s", 0);
        l->tokens_per_s = num(row, "tokens_per_s", 0);
        l->mfu = num(row, "mfu", 0);
        l->peak_memory_bytes = num(row, "peak_memory_bytes", 0);
        l->cost_per_iteration_usd = num(row, "cost_per_iteration_usd", -1);
    }
    cJSON_Delete(root);
    return rc;
}

int tp_estimate(const tp_request *q, tp_estimate_result *r, char **error)
{
    return estimate_in(NULL, q, r, error);
}

int tp_search(const tp_request *q, tp_layout *top, int cap, int *n, char **error)
{
    return search_in(NULL, q, top, cap, n, error);
}

/* ---- sessions ------------------------------------------------------------- */

/* tp_open with the status of a failure in *status: 64 for options a
 * session does not take, the database's own (65, 66) when it does not
 * open. */
static tp_session *open_in(const tp_request *options, int *status, char **error)
{
    lib_fork_guard();
    if (error) *error = NULL;
    *status = TP_EUSAGE;
    if (options && options->misuse[0]) {
        if (error) *error = req_dup(options->misuse);
        return NULL;
    }
    if (options && options->args.n > 0) {
        req_error(error, "trainplan: tp_open: positional argument '%s'%s: a "
                      "session takes \"hwdb\" directories only",
                      options->args.v[0], "");
        return NULL;
    }
    const char *dirs[LIB_MAX_HWDB];
    int n = 0;
    for (int i = 0; options && i < options->opts.n; i++) {
        const char *k = options->opts.v[i];
        if (strcmp(k, "--hwdb") != 0 || i + 1 >= options->opts.n) {
            req_error(error, "trainplan: tp_open: option key '%s'%s: a "
                          "session takes \"hwdb\" directories only; give the "
                          "others to each call", k + 2, "");
            return NULL;
        }
        if (n == LIB_MAX_HWDB) {
            char max[16];
            snprintf(max, sizeof max, "%d", LIB_MAX_HWDB);
            req_error(error, "trainplan: tp_open: more than %s hwdb "
                          "directories%s", max, "");
            return NULL;
        }
        dirs[n++] = options->opts.v[++i];
    }
    tp_err e = {0};
    lib_session *cs = lib_session_open(dirs, n, &e);
    if (!cs) {
        *status = e.status ? e.status : TP_EDATA;
        if (error) {
            size_t cap = strlen(e.msg) + 16;
            *error = tp_xmalloc(cap);
            snprintf(*error, cap, "trainplan: %s", e.msg);
        }
        return NULL;
    }
    tp_session *s = tp_xcalloc(1, sizeof *s);
    s->cs = cs;
    *status = TP_OK;
    return s;
}

tp_session *tp_open(const tp_request *options, char **error)
{
    int status;
    return open_in(options, &status, error);
}

tp_session *tp_open_json(const char *options_json, int *status, char **error)
{
    int st = TP_OK;
    tp_request *q = NULL;
    if (error) *error = NULL;
    if (options_json) {
        q = req_from_json(options_json, REQ_PLAIN, NULL, &st, error);
        if (!q) {
            if (status) *status = st;
            return NULL;
        }
    }
    tp_session *s = open_in(q, &st, error);
    tp_request_free(q);
    if (status) *status = st;
    return s;
}

void tp_close(tp_session *s)
{
    if (!s) return;
    lib_session_close(s->cs);
    free(s);
}

static int no_session(const char *fn, char **error)
{
    if (error) *error = NULL;
    return req_error(error, "trainplan: %s: the session is NULL%s (open "
                         "one with tp_open)", fn, "");
}

int tp_session_call(tp_session *s, const char *command, const tp_request *q,
                    char **result_json, char **error)
{
    if (result_json) *result_json = NULL;
    if (!s) return no_session("tp_session_call", error);
    return call_in(s, command, q, result_json, error, NULL);
}

int tp_session_call_json(tp_session *s, const char *command,
                         const char *request_json, char **result_json,
                         char **error)
{
    if (result_json) *result_json = NULL;
    if (!s) return no_session("tp_session_call_json", error);
    int sweep = command && strcmp(command, "sweep") == 0;
    return call_json(s, command, request_json, sweep ? REQ_SPEC : REQ_PLAIN,
                     result_json, error);
}

int tp_session_estimate(tp_session *s, const tp_request *q, tp_estimate_result *r,
                        char **error)
{
    if (!s) return no_session("tp_session_estimate", error);
    return estimate_in(s, q, r, error);
}

int tp_session_estimate_many_json(tp_session *s, const char *requests_json,
                                  tp_estimate_result *r, int *status,
                                  char **errors, int cap, int *n, char **error)
{
    if (error) *error = NULL;
    if (n) *n = 0;
    if (!s) return no_session("tp_session_estimate_many_json", error);
    if (!n || cap < 0 || (cap > 0 && (!r || !status)))
        return req_error(error, "trainplan: tp_session_estimate_many_json: "
                             "%s%s", !n ? "the count n is NULL"
                             : cap < 0 ? "cap is negative"
                                       : "r or status is NULL with cap > 0", "");
    int rc = TP_OK;
    cJSON *root = req_text(requests_json, "the requests", &rc, error);
    if (!root) return rc;
    if (!cJSON_IsArray(root)) {
        cJSON_Delete(root);
        return req_error(error, "trainplan: the requests are %s%s",
                             "not a JSON array (of request objects)", "");
    }
    int k = cJSON_GetArraySize(root);
    *n = k;
    if (k > cap) {
        cJSON_Delete(root);
        char msg[64];
        snprintf(msg, sizeof msg, "%d requests, room for %d", k, cap);
        return req_error(error, "trainplan: tp_session_estimate_many_json: "
                             "%s%s", msg, "");
    }
    int i = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, root) {
        char **ei = errors ? &errors[i] : NULL;
        if (ei) *ei = NULL;
        memset(&r[i], 0, sizeof r[i]);
        r[i].layout.cost_per_iteration_usd = -1;
        tp_request *q = NULL;
        if (!cJSON_IsObject(item)) {
            char at[64];
            snprintf(at, sizeof at, "the requests' element %d", i);
            status[i] = req_error(ei, "trainplan: %s is not a JSON "
                                      "object%s", at, "");
        } else if ((q = req_from_tree(item, REQ_PLAIN, NULL, &status[i],
                                          ei))) {
            status[i] = estimate_in(s, q, &r[i], ei);
            tp_request_free(q);
        }
        i++;
    }
    cJSON_Delete(root);
    return TP_OK;
}

int tp_session_estimate_from_json(tp_session *s, const char *request_json,
                                  tp_estimate_result *r, char **error)
{
    if (error) *error = NULL;
    if (r) {
        memset(r, 0, sizeof *r);
        r->layout.cost_per_iteration_usd = -1;
    }
    if (!s) return no_session("tp_session_estimate_from_json", error);
    if (!r)
        return req_error(error, "trainplan: tp_session_estimate_from_json: "
                             "the result is NULL%s%s", "", "");
    int rc;
    tp_request *q = req_from_json(request_json, REQ_PLAIN, NULL, &rc, error);
    if (!q) return rc;
    rc = estimate_in(s, q, r, error);
    tp_request_free(q);
    return rc;
}

int tp_session_search(tp_session *s, const tp_request *q, tp_layout *top, int cap,
                      int *n, char **error)
{
    if (n) *n = 0;
    if (!s) return no_session("tp_session_search", error);
    return search_in(s, q, top, cap, n, error);
}
