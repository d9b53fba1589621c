/*
 * fuzz_samples.c - fuzz target of the operator sample CSV loader
 * (est_read_samples, through est_measured_samples as the operator models
 * read a GPU's files): the input is the file, read as the samples of a
 * few operators that need different columns, at bf16 on the H100, with
 * the sample hygiene (peak FLOP/s and bandwidth checks) on.
 *
 * Not here: fp8 files, whose hygiene reads the GPU's 16-bit files from
 * hwdb/data on every input (too slow for a fuzzer).
 */
#include "fuzz.h"
#include "est.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* b, l, dim; b, h, l, dim; m, n, k; params. */
    static const char *const ops[] = {"linear1", "flash_atten_causal", "gemm",
                                      "optimizer"};
    const char *path = fuzz_scratch(data, size);
    tp_err e = {0};
    const hw_gpu *g = hw_find_gpu(fuzz_builtin_db(), "h100-sxm", &e);
    fuzz_check(g != NULL);
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        hw_measured m;
        memset(&m, 0, sizeof m);
        strcpy(m.kind, "operator_samples");
        strcpy(m.op, ops[i]);
        strcpy(m.dtype, "bf16");
        m.path = path;
        m.source = "fuzz";
        est_sample *s = NULL;
        int n = -1, n_bad = -1;
        if (est_measured_samples(g, &m, 0, &s, &n, &n_bad, &e) != TP_OK) {
            fuzz_check(s == NULL && e.msg[0]);
            continue;
        }
        /* A NUL byte would end the text early: the rows after it unread. */
        fuzz_check(!memchr(data, '\0', size));
        fuzz_check(n >= 0 && n_bad >= 0);
        /* A time is measured (> 0) or not (< 0: a shapes-only file, a -1
         * in the file, a pass the hygiene dropped); never 0 or NaN. */
        for (int k = 0; k < n; k++)
            fuzz_check((s[k].fwd_s > 0 || s[k].fwd_s < 0)
                       && (s[k].bwd_s > 0 || s[k].bwd_s < 0));
        free(s);
    }
    return 0;
}
