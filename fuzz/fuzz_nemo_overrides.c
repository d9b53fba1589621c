/*
 * fuzz_nemo_overrides.c - fuzz target of the NeMo job reader
 * (cli_read_nemo, what `estimate --nemo-overrides` and `search
 * --nemo-overrides` run on Megatron-Bridge overrides or NeMo 1 YAML keys).
 * A job that reads must give a model that validates (a batch or sequence
 * the job leaves to its recipe or defaults may stay unset: estimate then
 * asks for it).
 */
#include "fuzz_job.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cli_opts o;
    if (fuzz_job_read(data, size, cli_read_nemo, &o))
        fuzz_check(o.seq_length >= 0 && o.gbs >= 0);
    return 0;
}
