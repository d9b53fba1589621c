/*
 * fuzz_sweep_spec.c - fuzz target of the sweep spec parser
 * (sweep_spec_parse, the in-memory parser `trainplan sweep SPEC` runs on
 * the file's text): the input is the spec, parsed against the built-in
 * database with the command line's defaults, so a spec that parses has
 * every scenario set up as `search` would. A spec that parses is then
 * walked as the sweep does: every scenario's options and id (at most the
 * first and last 64 of them).
 *
 * The search cache lives as long as the process, as a sweep's does: the
 * operator models of a GPU are fitted once, not once per input.
 */
#include "fuzz.h"
#include "sweep.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static search_cache cache;
    sweep_opts o; /* the command line's defaults */
    sweep_opts_init(&o);
    sweep_spec s;
    char *report = NULL;
    tp_err e = {0};
    int rc = sweep_spec_parse("spec.json", (const char *)data, size,
                              &o.base, 0, fuzz_builtin_db(), &cache, NULL, &s, &report, &e);
    if (rc != TP_OK) {
        fuzz_check(e.msg[0]);
        free(report);
        return 0;
    }
    fuzz_check(report == NULL);
    fuzz_check(s.count >= 1 && s.count <= SWEEP_MAX_SCENARIOS);
    for (int64_t k = 0; k < s.count; k++) {
        if (k == 64 && s.count > 128) k = s.count - 64;
        sweep_case so;
        char id[17];
        sweep_scenario(&s, k, &so);
        sweep_scenario_id(&s, k, id);
        fuzz_check(strlen(id) == 16 && so.job.model && so.ask.systems);
    }
    sweep_spec_free(&s);
    return 0;
}
