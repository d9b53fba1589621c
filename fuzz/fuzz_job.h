/*
 * fuzz_job.h - what the three job-reader targets share (fuzz_megatron_args,
 * fuzz_nemo_overrides, fuzz_torchtitan_config): the input as the text of a
 * job file, read with main's defaults by one of launch.h's readers. A job
 * that reads must give a model that validates; the caller checks the
 * layout it expects of its reader. Header-only: the targets link the
 * launch library, which fuzz_util.c's other users do not.
 */
#ifndef TP_FUZZ_JOB_H
#define TP_FUZZ_JOB_H

#include "fuzz.h"
#include "launch.h"

#include <stdlib.h>
#include <string.h>

typedef int (*fuzz_job_reader)(const char *text, const char *file,
                               search_job *j, space_model *m, FILE *err,
                               tp_err *e);

/* Reads data as a job with read into *j; returns 1 when it read (its
 * model checked), 0 when it was refused (with a message). */
static int fuzz_job_read(const uint8_t *data, size_t size,
                         fuzz_job_reader read, search_job *j)
{
    char *text = malloc(size + 1);
    if (!text) abort();
    memcpy(text, data, size);
    text[size] = '\0'; /* the caller refuses NUL bytes: cut at the first */
    memset(j, 0, sizeof *j);
    j->tp = 1;
    j->sp = j->recompute = j->zero = j->precision = -1;
    j->attn_dropout = j->hidden_dropout = -1;
    space_model m;
    tp_err e = {0};
    int rc = read(text, "job", j, &m, NULL, &e);
    free(text);
    if (rc != TP_OK) {
        fuzz_check(e.msg[0]);
        return 0;
    }
    tp_err v = {0};
    fuzz_check(space_model_validate(&m, "job", &v) == TP_OK);
    return 1;
}

#endif
