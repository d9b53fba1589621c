/*
 * fuzz_torchtitan_config.c - fuzz target of the torchtitan job reader
 * (launch_read_torchtitan, what `estimate --torchtitan-config` and `search
 * --torchtitan-config` run on a Python config of torchtitan main or a v0.2
 * TOML). A job that reads must give a model that validates (a batch or
 * sequence the job leaves to its defaults may stay unset: estimate then
 * asks for it).
 */
#include "fuzz_job.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    search_job j;
    if (fuzz_job_read(data, size, launch_read_torchtitan, &j))
        fuzz_check(j.seq_length >= 0 && j.gbs >= 0);
    return 0;
}
