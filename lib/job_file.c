/*
 * job_file.c - --megatron-args, --nemo-overrides and --torchtitan-config:
 * the file (or standard input) the option names, read with its
 * framework's reader (launch/) into the options' job and a model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib_int.h"
#include "launch.h"
#include "tp_base.h"

const char *const lib_job_options[LIB_JOB_COUNT] = {
    [LIB_JOB_NONE] = "",
    [LIB_JOB_MEGATRON] = "megatron-args",
    [LIB_JOB_NEMO] = "nemo-overrides",
    [LIB_JOB_TORCHTITAN] = "torchtitan-config",
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

int lib_read_job(lib_opts *o, space_model *m, tp_err *e)
{
    const char *path = o->job_file;
    /* torchtitan: FILE.py:FUNCTION picks one config function of a file
     * (launch_torchtitan_read.c), where FILE.py:FUNCTION is not itself a
     * file */
    char tt_path[4096];
    const char *fn = NULL;
    const char *colon = strrchr(path, ':');
    if (o->job_kind == LIB_JOB_TORCHTITAN && colon && colon > path + 3
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
    case LIB_JOB_MEGATRON:
        rc = launch_read_megatron(text, name, &o->job, m, lib_err(o), e);
        break;
    case LIB_JOB_NEMO:
        rc = launch_read_nemo(text, name, &o->job, m, lib_err(o), e);
        break;
    case LIB_JOB_TORCHTITAN:
        rc = launch_read_torchtitan_fn(text, name, fn, &o->job, m,
                                       lib_err(o), e);
        break;
    default:
        rc = tp_errf(e, TP_EINTERNAL, "no reader for job kind %d",
                     o->job_kind);
    }
    free(text);
    return rc;
}
