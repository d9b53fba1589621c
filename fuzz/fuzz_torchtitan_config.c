/*
 * fuzz_torchtitan_config.c - fuzz target of the torchtitan job reader (cli_read_torchtitan, what `estimate --torchtitan-config` and `search --torchtitan-config` run on a Python config of torchtitan main or a v0.2 TOML). A job that reads must give a
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
    int rc = cli_read_torchtitan(text, "job", &o, &m, &e);
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
