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

/* The run's pipeline split (the layout object l of $.runs[i] in path) for
 * model m into w's split fields: Megatron-LM's options where l gives them
 * ("account_for_embedding_in_pipeline_split",
 * "account_for_loss_in_pipeline_split": true or false;
 * "decoder_first_pipeline_num_layers", "decoder_last_pipeline_num_layers":
 * integers; "pipeline_model_parallel_layout": a string), else the
 * published "layers_per_stage" (PP x VPP stages in Megatron-Core's order,
 * or one entry per pipeline rank, each rank's shared alike by its
 * chunks) as the split that puts them there (space_split_from_stages),
 * else none: w->pp_account SEARCH_UNSET, searched (search_complete) or
 * settled by bench_split_settle. A layout string goes into *store,
 * allocated here (the caller frees it; NULL when none). 0, or TP_EDATA
 * with e set. */
int bench_split_read(const cJSON *l, const space_model *m, const char *path,
                     int i, space_layout *w, space_pp_layout **store,
                     tp_err *e);

/* w's split where the run gave none (pp_account SEARCH_UNSET): the first
 * of space_split_kind's splits that Megatron-Core can build for w's PP
 * and VPP (the even one where it can), as a user of it would pick. */
void bench_split_settle(const space_model *m, space_layout *w);

/* What run $.runs[i] of path says of its model beyond the model itself:
 * the dropout its software applied ("dropout": attention and hidden, as
 * each source's file records it) and the fields a config cannot say
 * ("model_overrides": capacity_factor, >= 1, or null for dropless), set
 * in *m. Both are optional. 0, or TP_EDATA with e set. */
int bench_model_extras(const cJSON *run, const char *path, int i,
                       space_model *m, tp_err *e);

/* The operator models and collective tables of the systems a bench program
 * estimates on, opened once each (models shared between systems of one
 * GPU) into a caller's cache of at most `max` entries. */
typedef struct bench_opened {
    const hw_system *sys;
    est_models *ops;
    est_comm *comm;
} bench_opened;

/* y's entry of cache[0..*n), opened and added where missing; NULL with e
 * set when it cannot be opened or the cache is full. */
const bench_opened *bench_open_system(bench_opened *cache, int *n, int max,
                                      const hw_system *y, tp_err *e);

/* Frees cache[0..n) (each GPU's models once). */
void bench_close_systems(bench_opened *cache, int n);

#endif
