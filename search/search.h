/*
 * search.h - which layouts win. For now: completing a partly given layout
 * with the fastest feasible values of the fields the user left unset
 * (`trainplan estimate`, and the validation of published runs whose
 * sources leave out the micro-batch size or the recomputation). Issue 6
 * grows this into the full search with pruning and the Pareto front.
 */
#ifndef TP_SEARCH_H
#define TP_SEARCH_H

#include "est.h"

/* A layout field that is not given: search it. */
#define SEARCH_UNSET (-1)

/* Completes `want` (fields SEARCH_UNSET where unset; dp is derived from
 * gpus and may be unset; seq, gbs and dtype must be set) on c's system
 * with gpus GPUs: estimates every combination of candidate values of the
 * unset fields (TP: powers of two within a node; PP: divisors of the
 * layers; CP: 1, 2, 4, 8; virtual stages: 1, 2, 3, 4, 6, 8; micro-batch:
 * powers of two to 16; SP: on and off; recompute: none, selective, full;
 * ZeRO: 0 and 1, Megatron-LM's distributed optimizer) and returns in
 * *best the fastest feasible one (ties: the first in that enumeration
 * order), or, when none is feasible, the one that misses memory by the
 * least, else the first invalid one. Deterministic at any thread count
 * (OpenMP inside). *n_tried and *n_feasible (may be NULL) count the
 * combinations. Returns 1 when best is feasible, else 0. */
int search_complete(const est_ctx *c, const space_model *m,
                    const space_layout *want, int64_t gpus, est_result *best,
                    int64_t *n_tried, int64_t *n_feasible);

#endif
