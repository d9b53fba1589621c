/*
 * fuzz_nccl_tests.c - fuzz target of the nccl-tests log importer
 * (est_nccl_parse): the input is the log, read once as given and once
 * with the collective and the group shape given on the command line
 * (hw import-nccl-tests --op allreduce --nodes 2 --gpus-per-node 8).
 */
#include "fuzz.h"
#include "est.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_scratch(data, size);
    for (int pass = 0; pass < 2; pass++) {
        est_nccl_test *t = NULL;
        int n = 0;
        tp_err e = {0};
        int rc = pass == 0 ? est_nccl_parse(path, -1, 0, 0, &t, &n, &e)
                           : est_nccl_parse(path, EST_COLL_ALLREDUCE, 2, 8, &t,
                                            &n, &e);
        if (rc != TP_OK) fuzz_check(e.msg[0]);
        for (int i = 0; i < n; i++) {
            fuzz_check(t[i].n_rows > 0);
            for (int r = 0; r < t[i].n_rows; r++)
                fuzz_check(t[i].rows[r].time_s > 0);
        }
        est_nccl_free(t, n);
    }
    return 0;
}
