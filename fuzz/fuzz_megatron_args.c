/*
 * fuzz_megatron_args.c - fuzz target of the Megatron-LM job reader
 * (cli_read_megatron, what `estimate --megatron-args` and `search --near`
 * run on a command line or launch script): shell words, #SBATCH lines,
 * flags and their values, the pipeline layout string. A job that reads
 * must give a model that validates and a whole layout.
 */
#include "fuzz.h"
#include "launch.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) abort();
    memcpy(text, data, size);
    text[size] = '\0'; /* the caller refuses NUL bytes: cut at the first */
    cli_opts o;
    memset(&o, 0, sizeof o);
    o.tp = 1;
    o.sp = o.recompute = o.zero = o.precision = -1;
    o.attn_dropout = o.hidden_dropout = -1;
    space_model m;
    tp_err e = {0};
    int rc = cli_read_megatron(text, "job.sh", &o, &m, &e);
    if (rc != TP_OK) {
        fuzz_check(e.msg[0]);
    } else {
        tp_err v = {0};
        fuzz_check(space_model_validate(&m, "job.sh", &v) == TP_OK);
        fuzz_check(o.tp >= 1 && o.pp >= 1 && o.cp >= 1 && o.mbs >= 1
                   && o.gbs >= 1 && o.seq_length >= 1 && o.vstages >= 1);
        fuzz_check(o.precision >= 0 && o.zero >= 0 && o.zero <= 3);
    }
    free(text);
    return 0;
}
