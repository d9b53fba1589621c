/*
 * sweep_int.h - what the files of sweep/ share and nothing outside it
 * reads: one scenario's record (sweep_scenario.c) for the runner
 * (sweep_run.c).
 */
#ifndef TP_SWEEP_INT_H
#define TP_SWEEP_INT_H

#include "sweep.h"

/* The digests of the input files the records name, each file read once
 * per process (sweep_scenario.c). All zero: empty. */
typedef struct digest_cache {
    int n, cap;
    char **path;
    uint64_t *h;
} digest_cache;

void sweep_digest_free(digest_cache *c);

/* Runs scenario k of s and returns its record line, '\n' included (the
 * caller frees it); never fails: a scenario that cannot run is a record
 * with status "error". */
char *sweep_scenario_record(const sweep_spec *s, int64_t k, const hw_db *db,
                            search_cache *cache, digest_cache *dc);

/* The check a record of scenario k must carry (sweep_key.check), or 0
 * when the scenario cannot be set up. */
uint64_t sweep_expected_check(const sweep_spec *s, int64_t k, const hw_db *db,
                              search_cache *cache, digest_cache *dc);

#endif
