/*
 * fuzz_megatron_args.c - fuzz target of the Megatron-LM job reader
 * (launch_read_megatron, what `estimate --megatron-args` and `search --near`
 * run on a command line or launch script): shell words, #SBATCH lines,
 * flags and their values, the pipeline layout string. A job that reads
 * must give a model that validates and a whole layout.
 */
#include "fuzz_job.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    search_job j;
    if (fuzz_job_read(data, size, launch_read_megatron, &j)) {
        fuzz_check(j.tp >= 1 && j.pp >= 1 && j.cp >= 1 && j.mbs >= 1
                   && j.gbs >= 1 && j.seq_length >= 1 && j.vstages >= 1);
        fuzz_check(j.precision >= 0 && j.zero >= 0 && j.zero <= 3);
    }
    return 0;
}
