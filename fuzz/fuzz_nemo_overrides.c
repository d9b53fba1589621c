/*
 * fuzz_nemo_overrides.c - fuzz target of the NeMo job reader (cli_read_nemo, what `estimate --nemo-overrides` and `search --nemo-overrides` run on Megatron-Bridge overrides or NeMo 1 YAML keys). A job that reads must give a
 * model that validates (a batch or sequence the job leaves to its recipe
 * or defaults may stay unset: estimate then asks for it).
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
    int rc = cli_read_nemo(text, "job", &o, &m, &e);
    if (rc != TP_OK) {
        fuzz_check(e.msg[0]);
    } else {
        tp_err v = {0};
        fuzz_check(space_model_validate(&m, "job", &v) == TP_OK);
        fuzz_check(o.seq_length >= 0 && o.gbs >= 0);
    }
    free(text);
    return 0;
}
