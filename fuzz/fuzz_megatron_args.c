/*
 * fuzz_megatron_args.c - fuzz target of the Megatron-LM job reader
 * (cli_read_megatron, what `estimate --megatron-args` and `search --near`
 * run on a command line or launch script): shell words, #SBATCH lines,
 * flags and their values, the pipeline layout string. A job that reads
 * must give a model that validates and a whole layout.
 */
#include "fuzz_job.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cli_opts o;
    if (fuzz_job_read(data, size, cli_read_megatron, &o)) {
        fuzz_check(o.tp >= 1 && o.pp >= 1 && o.cp >= 1 && o.mbs >= 1
                   && o.gbs >= 1 && o.seq_length >= 1 && o.vstages >= 1);
        fuzz_check(o.precision >= 0 && o.zero >= 0 && o.zero <= 3);
    }
    return 0;
}
