/*
 * trainplan.c - the library's API (include/trainplan.h) over the command
 * line (cli/run.c): a request is an argument vector built from option
 * names, run through the same option table, its standard output and
 * standard error captured in memory (open_memstream). The plain structs
 * are read back from the command's JSON, so they hold the same numbers.
 * A sweep's spec given as a JSON object is written to a private
 * temporary file for the call (the command reads a file).
 *
 * Not here: any option logic (run.c has the one table), signal handlers
 * (out.c and cmd_sweep.c install theirs only after tp_handle_signals).
 */
#define _GNU_SOURCE /* open_memstream, dladdr */
#include "trainplan.h"

#include "cli.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TRAINPLAN_VERSION
#define TRAINPLAN_VERSION "0.0.0"
#endif

/* getopt's state, omp_set_num_threads and out.c's signal slots are the
 * process's: one call at a time. */
static pthread_mutex_t run_lock = PTHREAD_MUTEX_INITIALIZER;

int tp_api_version(void) { return TP_API_VERSION; }

const char *tp_version(void) { return TRAINPLAN_VERSION; }

void tp_free(void *p) { free(p); }

void tp_handle_signals(void) { cli_own_signals(); }

int tp_run(int argc, char *const argv[], FILE *out, FILE *err)
{
    if (argc < 1 || !argv) return TP_EUSAGE;
    /* getopt permutes its vector: a copy, so the caller's stays as it was */
    char **copy = tp_xcalloc((size_t)argc + 1, sizeof *copy);
    memcpy(copy, argv, (size_t)argc * sizeof *copy);
    pthread_mutex_lock(&run_lock);
    int rc = cli_run(argc, copy, out ? out : stdout, err ? err : stderr);
    pthread_mutex_unlock(&run_lock);
    free(copy);
    return rc;
}

/* ---- requests ------------------------------------------------------------ */

typedef struct strv {
    int n, cap;
    char **v;
} strv;

static void strv_push(strv *s, const char *x)
{
    if (s->n + 1 >= s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->v = tp_xrealloc(s->v, (size_t)s->cap * sizeof *s->v);
    }
    s->v[s->n++] = tp_xstrdup(x);
    s->v[s->n] = NULL;
}

static void strv_free(strv *s)
{
    for (int i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

struct tp_request {
    strv opts; /* "--name", then its value where it takes one */
    strv args; /* positional arguments */
};

tp_request *tp_request_new(void) { return tp_xcalloc(1, sizeof(tp_request)); }

void tp_request_free(tp_request *q)
{
    if (!q) return;
    strv_free(&q->opts);
    strv_free(&q->args);
    free(q);
}

void tp_request_arg(tp_request *q, const char *arg) { strv_push(&q->args, arg); }

/* A copy of s in memory the caller frees with tp_free. */
static char *dup_msg(const char *s) { return s ? tp_xstrdup(s) : NULL; }

static int request_error(char **error, const char *fmt, const char *a,
                         const char *b)
{
    if (error) {
        char buf[512];
        snprintf(buf, sizeof buf, fmt, a, b);
        *error = dup_msg(buf);
    }
    return TP_EUSAGE;
}

/* The option name of a key: '_' read as '-'. */
static void key_name(const char *key, char *buf, size_t cap)
{
    tp_strlcpy(buf, key, cap);
    for (char *p = buf; *p; p++)
        if (*p == '_') *p = '-';
}

int tp_request_set(tp_request *q, const char *key, const char *value,
                   char **error)
{
    if (error) *error = NULL;
    char name[128];
    key_name(key, name, sizeof name);
    int kind = cli_option_kind(name);
    if (kind < 0) {
        const char *names[512];
        int n = 0;
        while (n < 512 && (names[n] = cli_option_name(n))) n++;
        char hint[256];
        tp_suggest(name, names, n, hint, sizeof hint);
        return request_error(error,
                             "trainplan: unknown option key '%s'%s "
                             "(trainplan --list-options lists them)",
                             key, hint);
    }
    if (kind == 1 && !value)
        return request_error(error, "trainplan: option key '%s' needs a "
                             "value%s", key, "");
    if (kind == 0 && value)
        return request_error(error, "trainplan: option key '%s' is a flag: "
                             "give true, not '%s'", key, value);
    char opt[136];
    snprintf(opt, sizeof opt, "--%s", name);
    strv_push(&q->opts, opt);
    if (value) strv_push(&q->opts, value);
    return TP_OK;
}

/* A JSON number as the command line would take it: an integer without a
 * fraction, else the shortest %g that reads back the same. */
static void number_text(double v, char *buf, size_t cap)
{
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        snprintf(buf, cap, "%.0f", v);
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

/* One value of a request's key into text: a string, a number, or an
 * array of them joined by commas. NULL with *bad for anything else. */
static char *value_text(const cJSON *v, int *bad)
{
    char num[64];
    if (cJSON_IsString(v)) return tp_xstrdup(v->valuestring);
    if (cJSON_IsNumber(v)) {
        number_text(v->valuedouble, num, sizeof num);
        return tp_xstrdup(num);
    }
    if (!cJSON_IsArray(v)) {
        *bad = 1;
        return NULL;
    }
    size_t len = 0, cap = 64;
    char *s = tp_xmalloc(cap);
    s[0] = '\0';
    const cJSON *x;
    cJSON_ArrayForEach(x, v) {
        const char *t = NULL;
        if (cJSON_IsString(x)) t = x->valuestring;
        else if (cJSON_IsNumber(x)) {
            number_text(x->valuedouble, num, sizeof num);
            t = num;
        } else {
            *bad = 1;
            free(s);
            return NULL;
        }
        size_t k = strlen(t);
        if (len + k + 2 > cap) {
            cap = 2 * (len + k + 2);
            s = tp_xrealloc(s, cap);
        }
        if (len) s[len++] = ',';
        memcpy(s + len, t, k + 1);
        len += k;
    }
    return s;
}

static int from_json_key(tp_request *q, const cJSON *v, char **error)
{
    const char *key = v->string;
    char name[128];
    key_name(key, name, sizeof name);
    static const char *const refused[] = {"format", "output", "help",
                                          "version", "list-options"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (strcmp(name, refused[i]) == 0)
            return request_error(error, "trainplan: key '%s': the JSON calls "
                                 "return the command's JSON%s; leave it out",
                                 key, "");
    if (strcmp(key, "args") == 0) {
        const cJSON *a;
        if (cJSON_IsString(v)) {
            tp_request_arg(q, v->valuestring);
            return TP_OK;
        }
        if (!cJSON_IsArray(v))
            return request_error(error, "trainplan: key '%s': expected an "
                                 "array of strings%s", key, "");
        cJSON_ArrayForEach(a, v) {
            if (!cJSON_IsString(a))
                return request_error(error, "trainplan: key '%s': expected "
                                     "an array of strings%s", key, "");
            tp_request_arg(q, a->valuestring);
        }
        return TP_OK;
    }
    if (cJSON_IsNull(v)) return TP_OK;
    if (cJSON_IsTrue(v)) {
        /* a flag, or an option whose value true names (rare) */
        return tp_request_set(q, key, cli_option_kind(name) == 1 ? "true"
                                                                 : NULL,
                              error);
    }
    if (cJSON_IsFalse(v)) {
        char neg[140];
        snprintf(neg, sizeof neg, "no-%s", name);
        if (cli_option_kind(name) < 0)
            return tp_request_set(q, key, NULL, error); /* its message */
        if (cli_option_kind(neg) == 0) return tp_request_set(q, neg, NULL, error);
        return TP_OK; /* a flag left out */
    }
    if (strcmp(name, "hwdb") == 0 && cJSON_IsArray(v)) {
        const cJSON *d;
        cJSON_ArrayForEach(d, v) {
            if (!cJSON_IsString(d))
                return request_error(error, "trainplan: key '%s': expected "
                                     "directory names%s", key, "");
            int rc = tp_request_set(q, key, d->valuestring, error);
            if (rc) return rc;
        }
        return TP_OK;
    }
    int bad = 0;
    char *text = value_text(v, &bad);
    if (bad)
        return request_error(error, "trainplan: key '%s': expected a string, "
                             "a number, a boolean, null or an array of "
                             "strings and numbers%s", key, "");
    int rc = tp_request_set(q, key, text, error);
    free(text);
    return rc;
}

/* How a JSON request's special keys are read: none, "name" as the
 * positional argument (model show), "spec" as sweep's spec. */
typedef enum req_mode { REQ_PLAIN, REQ_NAME, REQ_SPEC } req_mode;

/* A sweep spec given as a JSON object: written to a private temporary
 * file ($TMPDIR or /tmp, mode 0600) whose path is the positional
 * argument, removed after the call (spec_file_remove). */
typedef struct spec_file {
    char path[4096]; /* "" when none was written */
} spec_file;

static void spec_file_remove(spec_file *sf)
{
    if (sf->path[0]) unlink(sf->path);
    sf->path[0] = '\0';
}

/* TP_EIO with "trainplan: key 'spec': WHAT PATH: REASON" in *error. */
static int spec_io_error(char **error, const char *what, const char *path,
                         const char *reason)
{
    if (error) {
        size_t n = strlen(what) + strlen(path) + strlen(reason) + 64;
        *error = tp_xmalloc(n);
        snprintf(*error, n, "trainplan: key 'spec': %s %s: %s", what, path,
                 reason);
    }
    return TP_EIO;
}

static int spec_file_write(spec_file *sf, const cJSON *spec, char **error)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !dir[0]) dir = "/tmp";
    char tmpl[sizeof sf->path];
    if (snprintf(tmpl, sizeof tmpl, "%s/trainplan-spec-XXXXXX.json", dir)
        >= (int)sizeof tmpl)
        return spec_io_error(error, "the temporary directory name is too "
                             "long:", dir, "set TMPDIR");
    int fd = mkstemps(tmpl, 5);
    if (fd < 0)
        return spec_io_error(error, "cannot create a temporary file in", dir,
                             strerror(errno));
    tp_strlcpy(sf->path, tmpl, sizeof sf->path);
    char *text = cJSON_PrintUnformatted(spec);
    size_t n = strlen(text), off = 0;
    int ok = 1;
    while (ok && off < n) {
        ssize_t w = write(fd, text + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) ok = 0;
        else off += (size_t)w;
    }
    int saved = errno;
    cJSON_free(text);
    if (close(fd) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    if (!ok) {
        spec_io_error(error, "cannot write the temporary file", sf->path,
                      strerror(saved));
        spec_file_remove(sf);
        return TP_EIO;
    }
    return TP_OK;
}

/* A sweep request's "spec": the spec file's path, or the spec itself. */
static int spec_key(tp_request *q, const cJSON *v, spec_file *sf, char **error)
{
    if (cJSON_IsString(v)) {
        tp_request_arg(q, v->valuestring);
        return TP_OK;
    }
    if (!cJSON_IsObject(v))
        return request_error(error, "trainplan: key '%s': expected the spec "
                             "file's path or the spec as an object%s",
                             "spec", "");
    if (sf->path[0])
        return request_error(error, "trainplan: key '%s' given twice%s",
                             "spec", "");
    int rc = spec_file_write(sf, v, error);
    if (rc == TP_OK) tp_request_arg(q, sf->path);
    return rc;
}

/* tp_request_from_json, reading the special keys of mode; a spec written
 * to a temporary file is named in *sf (removed here on failure). */
static tp_request *request_from_json(const char *json, req_mode mode,
                                     spec_file *sf, int *status, char **error)
{
    if (error) *error = NULL;
    *status = TP_OK;
    cJSON *root = cJSON_Parse(json ? json : "");
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        *status = request_error(error, "trainplan: the request is %s%s",
                                root ? "not a JSON object" : "not JSON", "");
        return NULL;
    }
    tp_request *q = tp_request_new();
    const cJSON *v;
    cJSON_ArrayForEach(v, root) {
        int rc;
        if (mode == REQ_SPEC && strcmp(v->string, "spec") == 0) {
            rc = spec_key(q, v, sf, error);
        } else if (mode == REQ_NAME && strcmp(v->string, "name") == 0) {
            if (!cJSON_IsString(v))
                rc = request_error(error, "trainplan: key '%s': expected a "
                                   "model name or config.json path%s",
                                   "name", "");
            else {
                tp_request_arg(q, v->valuestring);
                rc = TP_OK;
            }
        } else {
            rc = from_json_key(q, v, error);
        }
        if (rc) {
            cJSON_Delete(root);
            tp_request_free(q);
            if (sf) spec_file_remove(sf);
            *status = rc;
            return NULL;
        }
    }
    cJSON_Delete(root);
    return q;
}

tp_request *tp_request_from_json(const char *json, int *status, char **error)
{
    int st;
    tp_request *q = request_from_json(json, REQ_PLAIN, NULL, &st, error);
    if (status) *status = st;
    return q;
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

int tp_call(const char *command, const tp_request *q, char **result_json,
            char **error)
{
    if (result_json) *result_json = NULL;
    if (error) *error = NULL;
    strv argv = {0};
    strv_push(&argv, "trainplan");
    strv_push(&argv, "--format");
    strv_push(&argv, "json");
    for (int i = 0; q && i < q->opts.n; i++) strv_push(&argv, q->opts.v[i]);
    strv_push(&argv, "--"); /* the rest is positional, even "-x" */
    char words[128];
    tp_strlcpy(words, command ? command : "", sizeof words);
    char *save = NULL;
    for (char *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save))
        strv_push(&argv, w);
    for (int i = 0; q && i < q->args.n; i++) strv_push(&argv, q->args.v[i]);

    char *obuf = NULL, *ebuf = NULL;
    size_t olen = 0, elen = 0;
    FILE *out = open_memstream(&obuf, &olen);
    FILE *err = open_memstream(&ebuf, &elen);
    if (!out || !err) {
        fprintf(stderr, "trainplan: out of memory (open_memstream)\n");
        abort();
    }
    int rc = tp_run(argv.n, argv.v, out, err);
    char *o = stream_text(out, &obuf, &olen);
    char *e = stream_text(err, &ebuf, &elen);
    if (result_json) *result_json = o;
    else free(o);
    if (error) *error = e;
    else free(e);
    strv_free(&argv);
    return rc;
}

static int call_json(const char *command, const char *request_json,
                     req_mode mode, char **result_json, char **error)
{
    if (result_json) *result_json = NULL;
    if (error) *error = NULL;
    int rc;
    char *msg = NULL;
    spec_file sf = {{0}};
    tp_request *q = request_from_json(request_json, mode, &sf, &rc, &msg);
    if (!q) {
        if (error) *error = msg;
        else free(msg);
        return rc;
    }
    rc = tp_call(command, q, result_json, error);
    tp_request_free(q);
    spec_file_remove(&sf);
    return rc;
}

int tp_call_json(const char *command, const char *request_json,
                 char **result_json, char **error)
{
    int sweep = command && strcmp(command, "sweep") == 0;
    return call_json(command, request_json, sweep ? REQ_SPEC : REQ_PLAIN,
                     result_json, error);
}

int tp_search_json(const char *request_json, char **result_json, char **error)
{
    return call_json("search", request_json, REQ_PLAIN, result_json, error);
}

int tp_estimate_json(const char *request_json, char **result_json,
                     char **error)
{
    return call_json("estimate", request_json, REQ_PLAIN, result_json, error);
}

int tp_model_json(const char *request_json, char **result_json, char **error)
{
    return call_json("model show", request_json, REQ_NAME, result_json, error);
}

int tp_sweep_json(const char *request_json, char **result_json, char **error)
{
    return call_json("sweep", request_json, REQ_SPEC, result_json, error);
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
    if (!root && json && error && !*error)
        *error = dup_msg("trainplan: internal: the command's output is not "
                         "JSON");
    return root;
}

int tp_estimate(const tp_request *q, tp_estimate_result *r, char **error)
{
    memset(r, 0, sizeof *r);
    r->layout.cost_per_iteration_usd = -1;
    char *json = NULL;
    int rc = tp_call("estimate", q, &json, error);
    cJSON *root = parse_result(json, error);
    tp_free(json);
    if (!root) return rc ? rc : TP_EINTERNAL;
    r->feasible = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "feasible"));
    str(root, "reason", r->reason, sizeof r->reason);
    str(root, "gpu", r->gpu, sizeof r->gpu);
    str(root, "system", r->layout.system, sizeof r->layout.system);
    layout_fields(cJSON_GetObjectItemCaseSensitive(root, "layout"), &r->layout);
    r->layout.iteration_time_s = num(root, "iteration_time_s", 0);
    r->layout.tokens_per_s = num(root, "tokens_per_s", 0);
    r->layout.mfu = num(root, "mfu", 0);
    r->layout.peak_memory_bytes = num(root, "peak_memory_bytes", 0);
    r->gpu_memory_bytes = num(root, "gpu_memory_bytes", 0);
    cJSON_Delete(root);
    return rc;
}

int tp_search(const tp_request *q, tp_layout *top, int cap, int *n,
              char **error)
{
    *n = 0;
    char *json = NULL;
    int rc = tp_call("search", q, &json, error);
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
