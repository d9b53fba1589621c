/*
 * launch.c - what the launch writers share: the growable text they write
 * into, and the nodes a job takes. The writers themselves are one file a
 * framework: launch_megatron.c, launch_nemo.c, launch_torchtitan.c.
 */
#include "launch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tp_base.h"

void cli_text_put(cli_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    size_t need = t->n + (size_t)k + 1;
    if (need > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < need) cap *= 2;
        char *p = realloc(t->p, cap);
        if (!p) {
            fprintf(stderr, "trainplan: out of memory (%zu bytes)\n", cap);
            abort();
        }
        t->p = p;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->p + t->n, t->cap - t->n, fmt, ap);
    va_end(ap);
    t->n += (size_t)k;
}

void cli_text_free(cli_text *t)
{
    if (!t) return;
    free(t->p);
    t->p = NULL;
    t->n = t->cap = 0;
}

const char *cli_text_str(const cli_text *t)
{
    return t->p ? t->p : "";
}

int64_t cli_launch_nodes(const cli_launch *c, int64_t *per_node)
{
    const space_layout *l = c->layout;
    int64_t gpus = l->tp * l->pp * l->cp * l->dp;
    int gpn = c->gpus_per_node;
    int64_t g = gpn > 0 && gpn < gpus ? gpn : gpus;
    *per_node = g;
    return (gpus + g - 1) / g;
}

const char *const cli_job_options[CLI_JOB_COUNT] = {
    [CLI_JOB_NONE] = "",
    [CLI_JOB_MEGATRON] = "megatron-args",
    [CLI_JOB_NEMO] = "nemo-overrides",
    [CLI_JOB_TORCHTITAN] = "torchtitan-config",
};

/* A job file is a few kilobytes; anything larger is not one. */
#define JOB_MAX_BYTES ((size_t)1 << 20)

static int read_stdin(char **out, size_t *len, tp_err *e)
{
    size_t n = 0, cap = 4096;
    char *p = tp_xmalloc(cap);
    for (;;) {
        if (n + 1 >= cap) {
            if (cap > JOB_MAX_BYTES) {
                free(p);
                return tp_errf(e, TP_EDATA,
                               "<stdin>: more than %zu bytes: not a job "
                               "file", JOB_MAX_BYTES);
            }
            cap *= 2;
            p = tp_xrealloc(p, cap);
        }
        size_t k = fread(p + n, 1, cap - n - 1, stdin);
        n += k;
        if (k == 0) break;
    }
    if (ferror(stdin)) {
        free(p);
        return tp_errf(e, TP_EIO, "<stdin>: read error");
    }
    p[n] = '\0';
    *out = p;
    *len = n;
    return TP_OK;
}

int cli_read_job(cli_opts *o, space_model *m, tp_err *e)
{
    const char *path = o->job_file;
    /* torchtitan: FILE.py:FUNCTION picks one config function of a file
     * (launch_torchtitan.c), where FILE.py:FUNCTION is not itself a
     * file */
    char tt_path[4096];
    const char *fn = NULL;
    const char *colon = strrchr(path, ':');
    if (o->job_kind == CLI_JOB_TORCHTITAN && colon && colon > path + 3
        && strncmp(colon - 3, ".py", 3) == 0 && colon[1]
        && strspn(colon + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRST"
                             "UVWXYZ0123456789_") == strlen(colon + 1)
        && access(path, F_OK) != 0
        && (size_t)(colon - path) < sizeof tt_path) {
        memcpy(tt_path, path, (size_t)(colon - path));
        tt_path[colon - path] = '\0';
        fn = colon + 1;
        path = tt_path;
    }
    int stdin_ = strcmp(path, "-") == 0;
    const char *name = stdin_ ? "<stdin>" : path;
    char *text = NULL;
    size_t len = 0;
    int rc = stdin_ ? read_stdin(&text, &len, e)
                    : tp_read_file(path, JOB_MAX_BYTES, &text, &len, e);
    if (rc) return rc;
    if (memchr(text, '\0', len) != NULL) {
        free(text);
        return tp_errf(e, TP_EDATA, "%s: a NUL byte: not a text file", name);
    }
    switch (o->job_kind) {
    case CLI_JOB_MEGATRON:
        rc = cli_read_megatron(text, name, o, m, e);
        break;
    case CLI_JOB_NEMO:
        rc = cli_read_nemo(text, name, o, m, e);
        break;
    case CLI_JOB_TORCHTITAN:
        rc = cli_read_torchtitan_fn(text, name, fn, o, m, e);
        break;
    default:
        rc = tp_errf(e, TP_EINTERNAL, "no reader for job kind %d",
                     o->job_kind);
    }
    free(text);
    return rc;
}

/* ---- the launches as data ------------------------------------------------ */

void cli_json_set(cJSON *o, const char *key, const char *value)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, key); /* the last one wins */
    cJSON_AddStringToObject(o, key, value);
}

void cli_json_comment(cJSON *notes, const char *line)
{
    if (*line == '#') line++;
    if (*line == ' ') line++;
    cJSON_AddItemToArray(notes, cJSON_CreateString(line));
}

char *cli_next_line(char **p)
{
    char *s = *p;
    if (!s || !*s) return NULL;
    char *nl = strchr(s, '\n');
    if (nl) {
        *nl = '\0';
        *p = nl + 1;
    } else {
        *p = s + strlen(s);
    }
    return s;
}
