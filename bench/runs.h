/*
 * runs.h - the layout of a published run as bench/data's run files write
 * it (validation_runs.json, memory_runs.json: the "layout" object), read
 * into a space_layout with the defaults of the software that ran it. Shared
 * by validate_runs and validate_memory so that a run means the same to
 * both.
 */
#ifndef TRAINPLAN_BENCH_RUNS_H
#define TRAINPLAN_BENCH_RUNS_H

#include "search.h"

/* The run's layout object l (of $.runs[i] in path) as source `src`'s
 * software ran it: the framework's defaults (space_framework_software,
 * the source's framework unless l names one), then what l lists. Fields l
 * leaves null or out are SEARCH_UNSET. 0, or an error status with e set. */
int bench_layout_read(const cJSON *l, const char *src, const char *path,
                      int i, space_layout *out, tp_err *e);

#endif
