/*
 * request.c - a library request (include/trainplan.h tp_request): option
 * names and values checked against the command line's option table
 * (table.c, looked up sorted) and kept as the argument vector its parser
 * reads; a request read from a JSON object (tp_request_from_json), a
 * sweep's spec given as an object written to a private temporary file.
 * Running one is trainplan.c's.
 */
#define _GNU_SOURCE /* mkstemps */
#include "request.h"
#include "lib_int.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

tp_request *tp_request_new(void) { return tp_xcalloc(1, sizeof(tp_request)); }

void tp_request_free(tp_request *q)
{
    if (!q) return;
    strv_free(&q->opts);
    strv_free(&q->args);
    free(q);
}

void tp_request_arg(tp_request *q, const char *arg)
{
    if (!q) return;
    if (!arg) {
        /* void by contract (API 2): the request remembers, and every call
         * made with it returns 64 saying so */
        if (!q->misuse[0])
            snprintf(q->misuse, sizeof q->misuse,
                     "trainplan: tp_request_arg: positional argument %d is "
                     "NULL", q->args.n + 1);
        return;
    }
    strv_push(&q->args, arg);
}

/* A copy of s in memory the caller frees with tp_free. */
char *req_dup(const char *s) { return s ? tp_xstrdup(s) : NULL; }

int req_error(char **error, const char *fmt, const char *a,
                         const char *b)
{
    if (error) {
        char buf[512];
        snprintf(buf, sizeof buf, fmt, a, b);
        *error = req_dup(buf);
    }
    return TP_EUSAGE;
}

/* The command's options by name, sorted once (option_kind): a request's
 * key is looked up with bsearch, not a scan of every option. */
typedef struct option_row {
    const char *name;
    int kind; /* lib_option_kind: 0 flag, 1 takes a value */
} option_row;

enum { MAX_OPTION_ROWS = 512 }; /* table.h: 256 at most */
static option_row option_rows[MAX_OPTION_ROWS];
static int n_option_rows;
static pthread_once_t option_rows_once = PTHREAD_ONCE_INIT;

static int option_row_cmp(const void *a, const void *b)
{
    return strcmp(((const option_row *)a)->name, ((const option_row *)b)->name);
}

static void option_rows_fill(void)
{
    const char *name;
    int n = 0;
    while (n < MAX_OPTION_ROWS && (name = lib_option_name(n))) {
        option_rows[n] = (option_row){name, lib_option_kind(name)};
        n++;
    }
    qsort(option_rows, (size_t)n, sizeof option_rows[0], option_row_cmp);
    n_option_rows = n;
}

/* lib_option_kind of name: 0 a flag, 1 an option with a value, -1 none. */
static int option_kind(const char *name)
{
    pthread_once(&option_rows_once, option_rows_fill);
    option_row key = {name, 0};
    const option_row *r = bsearch(&key, option_rows, (size_t)n_option_rows,
                                  sizeof option_rows[0], option_row_cmp);
    return r ? r->kind : -1;
}

/* The option name of a key: '_' read as '-'. */
static void key_name(const char *key, char *buf, size_t cap)
{
    tp_strlcpy(buf, key, cap);
    for (char *p = buf; *p; p++)
        if (*p == '_') *p = '-';
}

/* Options a request cannot carry: every call returns the command's JSON
 * on its own stream, so one that changes the format, sends the output
 * elsewhere or prints something else instead would leave the call
 * nothing to return (it used to be 70, "internal error"). */
static const struct {
    const char *name, *why;
} refused_keys[] = {
    {"format", "the calls return the command's JSON (--format json)"},
    {"output", "the calls return the output (tp_run writes -o FILE)"},
    {"help", "the calls return JSON, not the help (tp_run prints it)"},
    {"version", "tp_version() gives the version"},
    {"list-options", "tp_run lists the options"},
};

/* Options that write a second output to FILE, where "-" would mean the
 * call's own stream, the JSON. */
static const char *const file_outputs[] = {"svg", "sbatch"};

int tp_request_set(tp_request *q, const char *key, const char *value,
                   char **error)
{
    if (error) *error = NULL;
    if (!q || !key)
        return req_error(error, "trainplan: tp_request_set: %s is NULL%s",
                             !q ? "the request" : "the key", "");
    if (strlen(key) >= 128)
        return req_error(error, "trainplan: unknown option key '%.60s...'"
                             "%s (trainplan --list-options lists them)", key, "");
    char name[128];
    key_name(key, name, sizeof name);
    for (size_t i = 0; i < sizeof refused_keys / sizeof refused_keys[0]; i++)
        if (strcmp(name, refused_keys[i].name) == 0)
            return req_error(error, "trainplan: option key '%s' cannot be "
                                 "given to a library call: %s; leave it out",
                                 key, refused_keys[i].why);
    for (size_t i = 0; i < sizeof file_outputs / sizeof file_outputs[0]; i++)
        if (value && strcmp(value, "-") == 0
            && strcmp(name, file_outputs[i]) == 0)
            return req_error(error, "trainplan: option key '%s': '-' "
                                 "(standard output) cannot be given to a "
                                 "library call, whose output is the JSON%s; "
                                 "give a file", key, "");
    int kind = option_kind(name);
    if (kind < 0) {
        const char *names[512];
        int n = 0;
        while (n < 512 && (names[n] = lib_option_name(n))) n++;
        char hint[256];
        tp_suggest(name, names, n, hint, sizeof hint);
        return req_error(error,
                             "trainplan: unknown option key '%s'%s "
                             "(trainplan --list-options lists them)",
                             key, hint);
    }
    if (kind == 1 && !value)
        return req_error(error, "trainplan: option key '%s' needs a "
                             "value%s", key, "");
    if (kind == 0 && value)
        return req_error(error, "trainplan: option key '%s' is a flag: "
                             "give true, not '%s'", key, value);
    char opt[136] = "--";
    memcpy(opt + 2, name, strlen(name) + 1); /* < 128: checked above */
    strv_push(&q->opts, opt);
    if (value) strv_push(&q->opts, value);
    return TP_OK;
}

/* A JSON number as the command line would take it: an integer without a
 * fraction, else the shortest %g that reads back the same. */
static void number_text(double v, char *buf, size_t cap)
{
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        /* "%.0f" of an integer below 2^53 is its digits: written here,
         * without printf's floating-point path (-0 keeps printf's "-0") */
        long long k = (long long)v;
        if (cap >= 20 && !(k == 0 && signbit(v))) {
            char d[24];
            int n = 0;
            unsigned long long u = k < 0 ? 0ULL - (unsigned long long)k
                                         : (unsigned long long)k;
            do d[n++] = (char)('0' + u % 10); while (u /= 10);
            size_t at = 0;
            if (k < 0) buf[at++] = '-';
            while (n) buf[at++] = d[--n];
            buf[at] = '\0';
            return;
        }
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
    if (strcmp(key, "args") == 0) {
        const cJSON *a;
        if (cJSON_IsString(v)) {
            tp_request_arg(q, v->valuestring);
            return TP_OK;
        }
        if (!cJSON_IsArray(v))
            return req_error(error, "trainplan: key '%s': expected an "
                                 "array of strings%s", key, "");
        cJSON_ArrayForEach(a, v) {
            if (!cJSON_IsString(a))
                return req_error(error, "trainplan: key '%s': expected "
                                     "an array of strings%s", key, "");
            tp_request_arg(q, a->valuestring);
        }
        return TP_OK;
    }
    if (cJSON_IsNull(v)) return TP_OK;
    if (cJSON_IsTrue(v)) {
        /* a flag, or an option whose value true names (rare) */
        return tp_request_set(q, key, option_kind(name) == 1 ? "true"
                                                                 : NULL,
                              error);
    }
    if (cJSON_IsFalse(v)) {
        char neg[140];
        snprintf(neg, sizeof neg, "no-%s", name);
        if (option_kind(name) < 0)
            return tp_request_set(q, key, NULL, error); /* its message */
        if (option_kind(neg) == 0) return tp_request_set(q, neg, NULL, error);
        return TP_OK; /* a flag left out */
    }
    if (strcmp(name, "hwdb") == 0 && cJSON_IsArray(v)) {
        const cJSON *d;
        cJSON_ArrayForEach(d, v) {
            if (!cJSON_IsString(d))
                return req_error(error, "trainplan: key '%s': expected "
                                     "directory names%s", key, "");
            int rc = tp_request_set(q, key, d->valuestring, error);
            if (rc) return rc;
        }
        return TP_OK;
    }
    int bad = 0;
    char *text = value_text(v, &bad);
    if (bad)
        return req_error(error, "trainplan: key '%s': expected a string, "
                             "a number, a boolean, null or an array of "
                             "strings and numbers%s", key, "");
    int rc = tp_request_set(q, key, text, error);
    free(text);
    return rc;
}

void req_spec_remove(spec_file *sf)
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
        req_spec_remove(sf);
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
        return req_error(error, "trainplan: key '%s': expected the spec "
                             "file's path or the spec as an object%s",
                             "spec", "");
    if (sf->path[0])
        return req_error(error, "trainplan: key '%s' given twice%s",
                             "spec", "");
    int rc = spec_file_write(sf, v, error);
    if (rc == TP_OK) tp_request_arg(q, sf->path);
    return rc;
}

/* Whether the JSON text has a string with an escaped NUL (\u0000):
 * cJSON reads it as the string's end, so "llama3-8b\u0000x" would name
 * llama3-8b. No option value, path or name can carry a NUL. Sets *at to
 * the escape's byte offset. */
static int has_nul_escape(const char *json, size_t *at)
{
    int in_str = 0;
    for (const char *p = json; *p; p++) {
        if (!in_str) {
            if (*p == '"') in_str = 1;
            continue;
        }
        if (*p == '"') {
            in_str = 0;
        } else if (*p == '\\') {
            if (p[1] == 'u' && strncmp(p + 2, "0000", 4) == 0) {
                *at = (size_t)(p - json);
                return 1;
            }
            if (p[1]) p++; /* the escaped character, '"' or '\\' included */
        }
    }
    return 0;
}

/* The request's keys as option names ('_' and '-' alike) must be
 * distinct, and so must every object's keys inside (a spec): cJSON keeps
 * both values of a key given twice and readers disagree on which wins,
 * so the request is refused (README.md). TP_EUSAGE naming the key. */
/* Whether keys a and b name one option: equal in their first 127 bytes
 * (key_name's buffer) with '_' and '-' alike; no copies. */
static int same_option(const char *a, const char *b)
{
    for (int i = 0; i < 127; i++) {
        char x = a[i] == '_' ? '-' : a[i], y = b[i] == '_' ? '-' : b[i];
        if (x != y) return 0;
        if (!x) return 1;
    }
    return 1;
}

static int request_unique(const cJSON *root, char **error)
{
    for (const cJSON *a = root->child; a; a = a->next) {
        for (const cJSON *b = root->child; b != a; b = b->next) {
            if (!same_option(a->string, b->string)) continue;
            char na[128];
            key_name(a->string, na, sizeof na);
            if (strcmp(a->string, b->string) == 0)
                return req_error(error, "trainplan: the request: key '%s' "
                                     "appears twice%s; keep one (JSON readers "
                                     "disagree on which value wins; a list "
                                     "is an array)", a->string, "");
            char both[300];
            snprintf(both, sizeof both, "'%.120s' and '%.120s'", b->string,
                     a->string);
            return req_error(error, "trainplan: the request: keys %s "
                                 "name one option (--%s); keep one", both, na);
        }
    }
    tp_err e = {0};
    if (tp_json_unique(root, "trainplan: the request", &e) != TP_OK) {
        if (error) *error = req_dup(e.msg);
        return TP_EUSAGE;
    }
    return TP_OK;
}

/* The request of the JSON object root (not freed here), reading the
 * special keys of mode; a spec written to a temporary file is named in
 * *sf (removed here on failure). */
tp_request *req_from_tree(const cJSON *root, req_mode mode,
                                     spec_file *sf, int *status, char **error)
{
    int urc = request_unique(root, error);
    if (urc) {
        *status = urc;
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
                rc = req_error(error, "trainplan: key '%s': expected a "
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
            tp_request_free(q);
            if (sf) req_spec_remove(sf);
            *status = rc;
            return NULL;
        }
    }
    return q;
}

/* The parsed JSON text json, refused (NULL, 64 in *status and a message
 * naming what) when NULL, with an escaped NUL, or not JSON; what names
 * it in messages ("the request"). The caller deletes the tree. */
cJSON *req_text(const char *json, const char *what, int *status,
                           char **error)
{
    if (!json) {
        *status = req_error(error, "trainplan: %s is NULL%s (give a JSON "
                                "object, \"{}\" for none)", what, "");
        return NULL;
    }
    size_t nul_at = 0;
    if (has_nul_escape(json, &nul_at)) {
        char at[32];
        snprintf(at, sizeof at, "%zu", nul_at);
        char msg[96];
        snprintf(msg, sizeof msg, "%s has a string with \\u0000 (NUL) at "
                 "byte %s", what, at);
        *status = req_error(error, "trainplan: %s%s: no option, name or "
                                "path can hold one", msg, "");
        return NULL;
    }
    cJSON *root = cJSON_Parse(json);
    if (!root)
        *status = req_error(error, "trainplan: %s is not JSON (or not "
                                "valid UTF-16 in a \\u escape)%s", what, "");
    return root;
}

/* tp_request_from_json, reading the special keys of mode; a spec written
 * to a temporary file is named in *sf (removed here on failure). */
tp_request *req_from_json(const char *json, req_mode mode,
                                     spec_file *sf, int *status, char **error)
{
    if (error) *error = NULL;
    *status = TP_OK;
    cJSON *root = req_text(json, "the request", status, error);
    if (!root) return NULL;
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        *status = req_error(error, "trainplan: the request is %s%s",
                                "not a JSON object", "");
        return NULL;
    }
    tp_request *q = req_from_tree(root, mode, sf, status, error);
    cJSON_Delete(root);
    return q;
}

tp_request *tp_request_from_json(const char *json, int *status, char **error)
{
    int st;
    tp_request *q = req_from_json(json, REQ_PLAIN, NULL, &st, error);
    if (status) *status = st;
    return q;
}
