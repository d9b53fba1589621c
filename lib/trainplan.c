/*
 * trainplan.c - the library's API (include/trainplan.h) over the command
 * line (cli/run.c): a request is an argument vector built from option
 * names, run through the same option table, its standard output and
 * standard error captured in memory (open_memstream). tp_estimate's
 * struct is filled by the command itself (cli_run_sink: no JSON printed
 * or parsed); tp_search's is read back from the command's JSON.
 * A sweep's spec given as a JSON object is written to a private
 * temporary file for the call (the command reads a file). A session
 * (tp_open) hands the command its database and fitted models
 * (cli/session.c) and runs the read-only commands without the lock
 * (run_locked).
 *
 * Not here: any option logic (cli/table.c has the one table), signal handlers
 * (emit/out.c and sweep/sweep_run.c install theirs only after tp_handle_signals).
 */
#define _GNU_SOURCE /* open_memstream, dladdr */
#include "trainplan.h"

#include "lib_int.h"

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

/* out.c's signal slots and the files a command writes are the process's:
 * a command that may write files (an -o, a sweep's records) runs under
 * this lock. A session's calls of the read-only commands
 * (session_parallel) take no lock: the option parser's state is the
 * call's own (cli/opt.c), the session's caches fill under its own lock. */
static pthread_mutex_t run_lock = PTHREAD_MUTEX_INITIALIZER;

/* The session a call runs with: the database and fitted models opened
 * once (cli/session.c). */
struct tp_session {
    cli_session *cs;
};

/* cli_run_sink, under run_lock unless parallel. argv is the caller's
 * copy (the parser rearranges it). sink NULL: the command prints. */
static int run_locked(int argc, char **argv, FILE *out, FILE *err,
                      cli_session *cs, int parallel, cli_estimate_sink *sink)
{
    if (parallel) return cli_run_sink(argc, argv, out, err, cs, sink);
    pthread_mutex_lock(&run_lock);
    int rc = cli_run_sink(argc, argv, out, err, cs, sink);
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
    char misuse[160]; /* a NULL tp_request_arg: the calls refuse it (64) */
};

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

/* The command's options by name, sorted once (option_kind): a request's
 * key is looked up with bsearch, not a scan of every option. */
typedef struct option_row {
    const char *name;
    int kind; /* cli_option_kind: 0 flag, 1 takes a value */
} option_row;

enum { MAX_OPTION_ROWS = 512 }; /* cli/table.h: 256 at most */
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
    while (n < MAX_OPTION_ROWS && (name = cli_option_name(n))) {
        option_rows[n] = (option_row){name, cli_option_kind(name)};
        n++;
    }
    qsort(option_rows, (size_t)n, sizeof option_rows[0], option_row_cmp);
    n_option_rows = n;
}

/* cli_option_kind of name: 0 a flag, 1 an option with a value, -1 none. */
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
        return request_error(error, "trainplan: tp_request_set: %s is NULL%s",
                             !q ? "the request" : "the key", "");
    if (strlen(key) >= 128)
        return request_error(error, "trainplan: unknown option key '%.60s...'"
                             "%s (trainplan --list-options lists them)", key, "");
    char name[128];
    key_name(key, name, sizeof name);
    for (size_t i = 0; i < sizeof refused_keys / sizeof refused_keys[0]; i++)
        if (strcmp(name, refused_keys[i].name) == 0)
            return request_error(error, "trainplan: option key '%s' cannot be "
                                 "given to a library call: %s; leave it out",
                                 key, refused_keys[i].why);
    for (size_t i = 0; i < sizeof file_outputs / sizeof file_outputs[0]; i++)
        if (value && strcmp(value, "-") == 0
            && strcmp(name, file_outputs[i]) == 0)
            return request_error(error, "trainplan: option key '%s': '-' "
                                 "(standard output) cannot be given to a "
                                 "library call, whose output is the JSON%s; "
                                 "give a file", key, "");
    int kind = option_kind(name);
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
                return request_error(error, "trainplan: the request: key '%s' "
                                     "appears twice%s; keep one (JSON readers "
                                     "disagree on which value wins; a list "
                                     "is an array)", a->string, "");
            char both[300];
            snprintf(both, sizeof both, "'%.120s' and '%.120s'", b->string,
                     a->string);
            return request_error(error, "trainplan: the request: keys %s "
                                 "name one option (--%s); keep one", both, na);
        }
    }
    tp_err e = {0};
    if (tp_json_unique(root, "trainplan: the request", &e) != TP_OK) {
        if (error) *error = dup_msg(e.msg);
        return TP_EUSAGE;
    }
    return TP_OK;
}

/* tp_request_from_json, reading the special keys of mode; a spec written
 * to a temporary file is named in *sf (removed here on failure). */
/* The request of the JSON object root (not freed here), reading the
 * special keys of mode; a spec written to a temporary file is named in
 * *sf (removed here on failure). */
static tp_request *request_from_tree(const cJSON *root, req_mode mode,
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
            tp_request_free(q);
            if (sf) spec_file_remove(sf);
            *status = rc;
            return NULL;
        }
    }
    return q;
}

/* The parsed JSON text json, refused (NULL, 64 in *status and a message
 * naming what) when NULL, with an escaped NUL, or not JSON; what names
 * it in messages ("the request"). The caller deletes the tree. */
static cJSON *request_text(const char *json, const char *what, int *status,
                           char **error)
{
    if (!json) {
        *status = request_error(error, "trainplan: %s is NULL%s (give a JSON "
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
        *status = request_error(error, "trainplan: %s%s: no option, name or "
                                "path can hold one", msg, "");
        return NULL;
    }
    cJSON *root = cJSON_Parse(json);
    if (!root)
        *status = request_error(error, "trainplan: %s is not JSON (or not "
                                "valid UTF-16 in a \\u escape)%s", what, "");
    return root;
}

/* tp_request_from_json, reading the special keys of mode; a spec written
 * to a temporary file is named in *sf (removed here on failure). */
static tp_request *request_from_json(const char *json, req_mode mode,
                                     spec_file *sf, int *status, char **error)
{
    if (error) *error = NULL;
    *status = TP_OK;
    cJSON *root = request_text(json, "the request", status, error);
    if (!root) return NULL;
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        *status = request_error(error, "trainplan: the request is %s%s",
                                "not a JSON object", "");
        return NULL;
    }
    tp_request *q = request_from_tree(root, mode, sf, status, error);
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
 * sink, an estimate fills it instead of printing (cli_run_sink). */
static int call_in(tp_session *s, const char *command, const tp_request *q,
                   char **result_json, char **error, cli_estimate_sink *sink)
{
    if (result_json) *result_json = NULL;
    if (error) *error = NULL;
    if (!command || !command[0])
        return request_error(error, "trainplan: tp_call: the command is %s%s "
                             "(\"estimate\", \"search\", \"model show\", ...)",
                             command ? "empty" : "NULL", "");
    if (q && q->misuse[0]) {
        if (error) *error = dup_msg(q->misuse);
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
    tp_request *q = request_from_json(request_json, mode, &sf, &rc, &msg);
    if (!q) {
        if (error) *error = msg;
        else free(msg);
        return rc;
    }
    rc = call_in(s, command, q, result_json, error, NULL);
    tp_request_free(q);
    spec_file_remove(&sf);
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
        *error = dup_msg(json ? "trainplan: internal: the command's output is "
                                "not JSON"
                              : "trainplan: internal: the command printed "
                                "nothing");
    return root;
}

/* *r from what the estimate found: the numbers its JSON prints, as the
 * estimate's own doubles (the JSON's 15 to 17 digits read back may
 * differ in the last bit), ep and etp 1 for a dense model as the JSON
 * leaves them out. */
static void estimate_from_sink(const cli_estimate_sink *k,
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

/* An estimate into *r: the command runs with a sink (cli_run_sink), so
 * no JSON is printed or parsed. */
static int estimate_in(tp_session *s, const tp_request *q, tp_estimate_result *r,
                       char **error)
{
    if (error) *error = NULL;
    if (!r)
        return request_error(error, "trainplan: tp_estimate: the result is "
                             "NULL%s%s", "", "");
    memset(r, 0, sizeof *r);
    r->layout.cost_per_iteration_usd = -1;
    cli_estimate_sink k; /* 1.3 KB; call_in may refuse before the run */
    k.filled = 0;
    int rc = call_in(s, "estimate", q, NULL, error, &k);
    if (k.filled) estimate_from_sink(&k, r);
    else if (rc == TP_OK) {
        if (error && !*error)
            *error = dup_msg("trainplan: internal: the estimate gave no "
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
        return request_error(error, "trainplan: tp_search: %s%s",
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
    if (error) *error = NULL;
    *status = TP_EUSAGE;
    if (options && options->misuse[0]) {
        if (error) *error = dup_msg(options->misuse);
        return NULL;
    }
    if (options && options->args.n > 0) {
        request_error(error, "trainplan: tp_open: positional argument '%s'%s: a "
                      "session takes \"hwdb\" directories only",
                      options->args.v[0], "");
        return NULL;
    }
    const char *dirs[CLI_MAX_HWDB];
    int n = 0;
    for (int i = 0; options && i < options->opts.n; i++) {
        const char *k = options->opts.v[i];
        if (strcmp(k, "--hwdb") != 0 || i + 1 >= options->opts.n) {
            request_error(error, "trainplan: tp_open: option key '%s'%s: a "
                          "session takes \"hwdb\" directories only; give the "
                          "others to each call", k + 2, "");
            return NULL;
        }
        if (n == CLI_MAX_HWDB) {
            char max[16];
            snprintf(max, sizeof max, "%d", CLI_MAX_HWDB);
            request_error(error, "trainplan: tp_open: more than %s hwdb "
                          "directories%s", max, "");
            return NULL;
        }
        dirs[n++] = options->opts.v[++i];
    }
    tp_err e = {0};
    cli_session *cs = cli_session_open(dirs, n, &e);
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
        q = request_from_json(options_json, REQ_PLAIN, NULL, &st, error);
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
    cli_session_close(s->cs);
    free(s);
}

static int no_session(const char *fn, char **error)
{
    if (error) *error = NULL;
    return request_error(error, "trainplan: %s: the session is NULL%s (open "
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
        return request_error(error, "trainplan: tp_session_estimate_many_json: "
                             "%s%s", !n ? "the count n is NULL"
                             : cap < 0 ? "cap is negative"
                                       : "r or status is NULL with cap > 0", "");
    int rc = TP_OK;
    cJSON *root = request_text(requests_json, "the requests", &rc, error);
    if (!root) return rc;
    if (!cJSON_IsArray(root)) {
        cJSON_Delete(root);
        return request_error(error, "trainplan: the requests are %s%s",
                             "not a JSON array (of request objects)", "");
    }
    int k = cJSON_GetArraySize(root);
    *n = k;
    if (k > cap) {
        cJSON_Delete(root);
        char msg[64];
        snprintf(msg, sizeof msg, "%d requests, room for %d", k, cap);
        return request_error(error, "trainplan: tp_session_estimate_many_json: "
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
            status[i] = request_error(ei, "trainplan: %s is not a JSON "
                                      "object%s", at, "");
        } else if ((q = request_from_tree(item, REQ_PLAIN, NULL, &status[i],
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
        return request_error(error, "trainplan: tp_session_estimate_from_json: "
                             "the result is NULL%s%s", "", "");
    int rc;
    tp_request *q = request_from_json(request_json, REQ_PLAIN, NULL, &rc, error);
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
