/*
 * fuzz_nemo_overrides.c - fuzz target of the NeMo job reader
 * (launch_read_nemo, what `estimate --nemo-overrides` and `search
 * --nemo-overrides` run on Megatron-Bridge overrides or NeMo 1 YAML keys).
 * A job that reads must give a model that validates (a batch or sequence
 * the job leaves to its recipe or defaults may stay unset: estimate then
 * asks for it).
 */
#include "fuzz_job.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    search_job j;
    if (fuzz_job_read(data, size, launch_read_nemo, &j))
        fuzz_check(j.seq_length >= 0 && j.gbs >= 0);
    return 0;
}
