/*
 * search_int.h - internals shared by the files of the search (plan.c,
 * scan.c, variants.c), not part of search/'s public header (search.h).
 */
#ifndef TP_SEARCH_INT_H
#define TP_SEARCH_INT_H

#include "search.h"

/* Optimizer offload in eighths of the shard: a fraction written in a
 * launch line as it is. */
#define SEARCH_SAVER_EIGHTHS 8

/* A valid layout that survived the bounds that need no comparison. */
typedef struct cand {
    double floor_s;
    int64_t gpus, idx;
    int sys;
} cand;

/* The smallest peak a saver reached where none fits: the nearest miss
 * is the layout as near as it can come (issue 31: a miss said 19.96 GiB
 * where the same layout with bf16 moments needs 19.53 and fits at 19.6). */
typedef struct saver_miss {
    double peak;       /* 0: none */
    int saver;
    int64_t n;
} saver_miss;

/* What one thread gathers in phase 1; merged in any order (sums, and
 * minima under a total order). */
typedef struct gather {
    search_stats st;
    int8_t *verdict;     /* this thread's split verdicts (verdicts) */
    int64_t example_key[SPACE_REJECT_COUNT]; /* unit x grid size + idx */
    search_near near_memory, near_budget;
    cand *c;
    int64_t n, cap;
} gather;

/* The verdict of space_layout_split_check (VPP, the chunks, the split)
 * per (system, PP digit, VPP digit, split digit), filled as a thread
 * meets them: 0 unknown, else 1 + the verdict. One table a thread,
 * made before the scan. */
typedef struct verdicts {
    int np, nv, ns;
} verdicts;

/* Phase 1 of search_run for one (system sysi, GPU count gpus), unit
 * number unit of the search (scan.c): the grid's layouts by the rules,
 * rejected in blocks, the valid ones pruned by the bounds that need no
 * comparison; the survivors and the counts into t. No allocation but
 * t's list of survivors. */
void search_scan_unit(const search_request *q, int sysi, int64_t gpus,
                      int64_t unit, const verdicts *vd, gather *t);

/* The memory savers tried on a layout that does not fit (variants.c). */
int search_try_savers(const search_request *q, const search_system *sy,
                      const space_layout *l, double mem_limit,
                      est_result *r, int *saver, int64_t *n, saver_miss *sm);

/* The entry of st->pp for pipeline size pp (scan.c). */
search_pp_stats *search_pp_stats_of(search_stats *st, int64_t pp);

/* Keeps the smaller miss of *nr and the one given (plan.c). */
void search_near_update(search_near *nr, int sys, int64_t gpus, int64_t idx,
                        double value, double limit, int from_bound, int saver,
                        int64_t saver_n);

/* Ratio of a (time, GPUs) to the tightest budget (plan.c). */
double search_budget_ratio(const search_request *q, double iter_s,
                           int64_t gpus, double price, int *which);

#endif
