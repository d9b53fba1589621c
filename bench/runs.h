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

/* What run $.runs[i] of path says of its model beyond the model itself:
 * the dropout its software applied ("dropout": attention and hidden, as
 * each source's file records it) and the fields a config cannot say
 * ("model_overrides": capacity_factor, >= 1, or null for dropless), set
 * in *m. Both are optional. 0, or TP_EDATA with e set. */
int bench_model_extras(const cJSON *run, const char *path, int i,
                       space_model *m, tp_err *e);

#endif
