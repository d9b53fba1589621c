/*
 * search.h - which layouts win: completing a partly given layout with the
 * fastest feasible values of the fields the user left unset (complete.c:
 * `trainplan estimate`, the validation of published runs), and the full
 * search (plan.c: `trainplan search`): every valid layout of a model on
 * one or more systems over a range of GPU counts, pruned by cheap lower
 * bounds (branch and bound, exact for the top-k and the Pareto front),
 * ranked, and the front of time against cost.
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
 * ZeRO: 0 and 1, Megatron-LM's distributed optimizer; MoE models: EP
 * the powers of two dividing the experts up to the GPUs, expert TP = TP
 * (0) or 1; dense models keep ep and etp 0) and returns in
 * *best the fastest one `trainplan search` would admit (its peak plus
 * est_memory_margin fits the GPU), else the fastest feasible one (ties:
 * the first in that enumeration order), or, when none is feasible, the
 * one that misses memory by the least, else the first invalid one. Deterministic at any thread count
 * (OpenMP inside). *n_tried and *n_feasible (may be NULL) count the
 * combinations. Returns 1 when best is feasible, else 0. */
int search_complete(const est_ctx *c, const space_model *m,
                    const space_layout *want, int64_t gpus, est_result *best,
                    int64_t *n_tried, int64_t *n_feasible);

/* ---- the search (plan.c) ------------------------------------------------ */

/* What to rank by. Time, throughput and time to train order layouts alike
 * (the global batch and sequence are fixed); cost is GPUs x time x price. */
typedef enum search_objective {
    SEARCH_BY_TIME,
    SEARCH_BY_THROUGHPUT,
    SEARCH_BY_TRAIN_TIME,
    SEARCH_BY_COST,
    SEARCH_OBJECTIVE_COUNT
} search_objective;
/* "time", "throughput", "time-to-train", "cost" */
extern const char *const search_objective_names[SEARCH_OBJECTIVE_COUNT];

/* Why a valid layout was not estimated: a lower bound settled it. */
typedef enum search_prune {
    SEARCH_PRUNE_MEMORY,   /* weights, gradients and optimizer states alone
                              exceed the memory allowed */
    SEARCH_PRUNE_BUDGET,   /* its time or cost bound already breaks the
                              budget or the deadline */
    SEARCH_PRUNE_TIME,     /* its time bound can enter neither the top-k
                              nor the front (branch and bound) */
    SEARCH_PRUNE_COUNT
} search_prune;
extern const char *const search_prune_names[SEARCH_PRUNE_COUNT];

/* Why an estimated, feasible layout is not admitted. */
typedef enum search_miss {
    SEARCH_MISS_BUDGET_USD,
    SEARCH_MISS_BUDGET_GPU_HOURS,
    SEARCH_MISS_DEADLINE,
    SEARCH_MISS_COUNT
} search_miss;
extern const char *const search_miss_names[SEARCH_MISS_COUNT];

/* One system a search spans: its estimator context (models opened once
 * per GPU by the caller), its price, and its candidate values. */
typedef struct search_system {
    est_ctx ctx;
    double price_usd_per_gpu_hour;
    space_grid grid;
    int64_t gpus_multiple;     /* only GPU counts that are multiples of this
                                  (whole nodes); 0 or 1 = any */
} search_system;

typedef struct search_request {
    const space_model *model;
    const search_system *systems;
    int n_systems;
    space_layout base;         /* seq, gbs, dtype, flash, no_dp_overlap */
    const int64_t *gpus;       /* GPU counts to try, ascending */
    int n_gpus;
    search_objective objective;
    int top_k;                 /* >= 1 */
    double tokens;             /* tokens to train; 0 = not given */
    double budget_usd;         /* 0 = none (need tokens) */
    double budget_gpu_hours;   /* 0 = none (need tokens) */
    double deadline_s;         /* 0 = none (needs tokens) */
    double max_memory_fraction; /* of the GPU's memory, (0, 1]: admit a
                                   layout whose estimated peak fits that
                                   share; 0: admit it when its peak plus
                                   the measured margin fits
                                   (search_memory_limit) */
    int no_prune;              /* estimate every valid layout (tests, bench) */
    int keep_points;           /* keep every admitted layout in
                                  search_answer.points (--svg, tests,
                                  bench): memory that grows with them;
                                  0: only the ranked and the front */
    int savers;                /* a layout that does not fit the memory is
                                  tried again with each memory saver that
                                  applies (search_saver), the fastest that
                                  fits kept; only where base uses none */
    int rough_misses;          /* with nothing admitted, keep the nearest
                                  misses as the pruned search found them
                                  (a lever's check, search_explain_miss,
                                  asks only whether something fits);
                                  0: exact, from a search without pruning */
    int graphs;                /* Megatron-Core: an admitted layout whose
                                  GPU waits on the host is tried again with
                                  per-layer CUDA graphs (search_graph_apply),
                                  kept where faster and still fitting; only
                                  where base has none */
    int schedules;             /* torchtitan: an admitted layout with PP > 1
                                  under 1F1B is tried again with PyTorch's
                                  other schedules (search_schedule_apply),
                                  the fastest that fits kept; only where
                                  base runs 1F1B */
} search_request;

/* The memory savers a search tries on a layout that does not fit, as a
 * last resort (variants.c): never on one that fits, so they add no layouts to
 * the grid, only estimates of layouts that would be out of memory. */
typedef enum search_saver {
    SEARCH_SAVER_NONE,
    SEARCH_SAVER_PA_BF16,     /* --use-precision-aware-optimizer with bf16
                                 moments (--exp-avg-dtype bf16
                                 --exp-avg-sq-dtype bf16; the distributed
                                 optimizer), as DeepSeek-V3 trains */
    SEARCH_SAVER_ACT_OFFLOAD, /* --cpu-offloading-num-layers N, the fewest
                                 layers that fit (PP 1, no recomputation) */
    SEARCH_SAVER_OPT_OFFLOAD, /* --optimizer-cpu-offload with the smallest
                                 --optimizer-offload-fraction of k/8 that
                                 fits, --overlap-cpu-optimizer-d2h-h2d */
    SEARCH_SAVER_FP8_PARAMS,  /* --fp8-param-gather: Transformer Engine's
                                 fp8 weights as the parameters (fp8 with
                                 the distributed optimizer), as NVIDIA's
                                 fp8 recipes run */
    SEARCH_SAVER_COUNT
} search_saver;
/* "none", "precision_aware_bf16_moments", "activation_offload",
 * "optimizer_offload", "fp8_param_gather" */
extern const char *const search_saver_names[SEARCH_SAVER_COUNT];

/* Applies saver s with its size n (act offload: layers; optimizer
 * offload: eighths of the shard) to l for model m. Returns 1, or 0 (l
 * unchanged) where it does not apply: another framework than
 * Megatron-Core, ZeRO 2 or 3, a saver l already uses; activation offload
 * with PP > 1 or recomputation, or n outside 1 to layers - 1. */
int search_saver_apply(search_saver s, int64_t n, const space_model *m,
                       space_layout *l);

/* Turns on the per-layer CUDA graphs a Megatron-Core recipe uses where
 * l's GPU waits on the host: Transformer Engine's graphed callables
 * (--cuda-graph-impl transformer_engine) of the whole layer for a dense
 * model, of attn, moe_router and moe_preprocess for a dropless MoE (the
 * experts' sizes are known only after the dispatcher's host sync).
 * Returns 1, or 0 (l unchanged) where Megatron-Core refuses them
 * (transformer_config.py __post_init__, NVIDIA/Megatron-LM@d98e8a64ddf3):
 * another framework, graphs already on, full recomputation (only
 * full_iteration graphs), activation CPU offloading, selective
 * recomputation with dropout (graphed recompute takes no random
 * numbers). */
int search_graph_apply(const space_model *m, space_layout *l);

/* The schedules search_request.schedules tries, in this order: zero
 * bubble ZB-H1 looped, ZB-V, DualPipeV. */
#define SEARCH_SCHEDULES_TRIED 3
extern const int search_schedules_tried[SEARCH_SCHEDULES_TRIED];

/* Sets torchtitan layout l to PyTorch's pipeline schedule s, eager where
 * it was compiled: PyTorch's schedules but 1F1B refuse compiled stage
 * modules (_check_torch_compile_compatibility, pytorch/pytorch@
 * 00722e648b74 schedules.py). Returns 1, or 0 (l unchanged) for another
 * framework, PP 1, a schedule already set, or s 1F1B; the schedules'
 * own rules (chunks a rank, micro-batches) are the estimate's to refuse. */
int search_schedule_apply(int s, space_layout *l);

/* The largest estimated peak (est_memory.total) q admits for layout l on
 * system sy: max_memory_fraction of the GPU's memory where q sets it,
 * else the memory over 1 + the margin measured for l's framework
 * (est_memory_margin). */
double search_memory_limit(const search_request *q, const search_system *sy,
                           const space_layout *l);

/* One estimated and admitted layout: which (system, GPU count, layout
 * number in that system's grid) and its figures. A plain value; the full
 * estimate is search_estimate_point's. */
typedef struct search_point {
    double iteration_s;
    double cost_usd;           /* of one iteration: gpus x time x price */
    double mem_bytes;          /* peak on the busiest GPU */
    int64_t gpus;
    int64_t idx;
    int sys;
    int saver;                 /* search_saver the layout relies on */
    int64_t saver_n;           /* its size (search_saver_apply) */
    int graph;                 /* 1: with the CUDA graphs the search turned
                                  on (search_graph_apply) */
    int schedule;              /* the space_pp_schedule the search chose
                                  (search_schedule_apply); 0: base's */
} search_point;

/* The largest ratio to a budget or deadline the search reports: one
 * that overflows (a limit of 1e-300) is this, meaning "more than". */
#define SEARCH_RATIO_MAX 1e300

/* The nearest miss of an unsatisfiable request: the layout that comes
 * closest to the limit it breaks. */
typedef struct search_near {
    int have;
    int sys;
    int64_t gpus, idx;
    double value, limit;       /* bytes (memory) or the ratio to the budget
                                  (at most SEARCH_RATIO_MAX) */
    int from_bound;            /* value is a lower bound, not an estimate */
    int saver;                 /* search_saver the layout relies on */
    int64_t saver_n;           /* its size (search_saver_apply) */
} search_near;

/* What the search did with one pipeline size (PP) of its grids: its
 * layouts valid and admitted, and where the others went. */
typedef struct search_pp_stats {
    int64_t pp;
    int64_t valid, admitted;
    int64_t rejected[SPACE_REJECT_COUNT];   /* by rule */
    int64_t pruned[SEARCH_PRUNE_COUNT];
    int64_t infeasible[EST_REASON_COUNT];   /* estimated */
    int64_t missed;                         /* over a budget or deadline */
} search_pp_stats;

typedef struct search_stats {
    int64_t enumerated;        /* layout numbers visited, all systems and counts */
    int64_t rejected[SPACE_REJECT_COUNT]; /* by rule ([SPACE_OK] unused) */
    int64_t valid;
    int64_t pruned[SEARCH_PRUNE_COUNT];
    int64_t estimated;
    int64_t infeasible[EST_REASON_COUNT]; /* estimated; out_of_memory
                                           includes --max-memory-fraction */
    int64_t missed[SEARCH_MISS_COUNT];
    int64_t admitted;          /* feasible and within every constraint */
    int64_t saved[SEARCH_SAVER_COUNT]; /* of those, admitted only with a
                                   memory saver, by saver ([0] unused) */
    int64_t scheduled[SPACE_PP_SCHEDULE_COUNT]; /* admitted, faster with
                                  the schedule the search chose, by schedule
                                  ([0] unused) */
    int64_t graphed;           /* admitted, faster with the CUDA graphs the
                                  search turned on (search_request.graphs) */
    int64_t gpu_counts_beyond; /* (system, count) pairs larger than the system */
    char example[SPACE_REJECT_COUNT][200]; /* first message per rule */
    /* Per pipeline size, ascending (every PP of the systems' grids, at
     * most SPACE_GRID_MAX), and what the grids leave out: PP above
     * pp_beyond, VPP above vpp_beyond (0: nothing), up to the layers
     * (space_grid). split_valid: valid layouts of each split kind. */
    search_pp_stats pp[SPACE_GRID_MAX];
    int n_pp;
    int64_t pp_beyond, vpp_beyond;
    int64_t split_valid[SPACE_SPLIT_KIND_COUNT];
    double elapsed_s;
    int threads;
} search_stats;

/* What a search found. Owns its arrays: free with search_answer_free. */
typedef struct search_answer {
    search_point *ranked;      /* best first, at most top_k */
    int n_ranked;
    search_point *front;       /* Pareto front, by ascending cost */
    int n_front;
    search_point *points;      /* every admitted layout, in evaluation
                                  order, where keep_points asked */
    int64_t n_points;
    search_near near_memory;   /* smallest memory shortfall */
    search_near near_budget;   /* smallest excess over budget or deadline */
    search_stats stats;
    struct search_miss_report *miss; /* nothing admitted: the nearest layout
                                  in figures and the levers that fit, where
                                  search_explain_miss was asked; else NULL */
} search_answer;

/* Runs the search q asks for into *a (which the caller frees with
 * search_answer_free, also after an error). Deterministic: the answer,
 * and every count of the stats but elapsed_s and threads, is the same at
 * any thread count (OpenMP inside). Returns TP_OK (also when nothing is
 * admitted: a->n_ranked = 0) or TP_EUSAGE for a request out of range. */
int search_run(const search_request *q, search_answer *a, tp_err *e);
void search_answer_free(search_answer *a); /* accepts NULL; frees miss */

/* The layout of p (its system's grid, the request's job, the memory
 * saver it relies on). */
void search_point_layout(const search_request *q, const search_point *p,
                         space_layout *l);
/* Its full estimate again (est_estimate is pure). */
void search_point_estimate(const search_request *q, const search_point *p,
                           est_result *r);

/* The total order of ranking: the objective, then the other of time and
 * cost, then system, GPUs, layout number. <0, 0, >0. */
int search_point_cmp(const search_point *a, const search_point *b,
                     search_objective obj);

/* ---- misses in figures, and the levers that fit (miss.c) -------------- */

/* A limit a layout is admitted under. */
typedef enum search_limit {
    SEARCH_LIMIT_MEMORY,      /* bytes: the estimated peak the search admits
                                 (search_memory_limit; per layout) */
    SEARCH_LIMIT_BUDGET_USD,  /* USD to train the tokens */
    SEARCH_LIMIT_GPU_HOURS,   /* GPU-hours to train the tokens */
    SEARCH_LIMIT_DEADLINE,    /* seconds to train the tokens */
    SEARCH_LIMIT_COUNT
} search_limit;
/* "memory", "budget_usd", "budget_gpu_hours", "deadline" */
extern const char *const search_limit_names[SEARCH_LIMIT_COUNT];
/* "bytes", "usd", "gpu_hours", "s" */
extern const char *const search_limit_units[SEARCH_LIMIT_COUNT];

/* A change to the request that may make something fit. */
typedef enum search_lever_kind {
    SEARCH_LEVER_PRECISION,   /* fp8, on the systems whose GPU has it */
    SEARCH_LEVER_GPUS,        /* one GPU count beyond the range searched */
    SEARCH_LEVER_RECOMPUTE,   /* full recomputation, where --fix left it out */
    SEARCH_LEVER_SAVERS,      /* the memory savers (offloading, bf16 moments,
                                 fp8 parameters), where they were off */
    SEARCH_LEVER_TOKENS,      /* the most tokens that fit */
    SEARCH_LEVER_PRICE,       /* the highest price per GPU-hour that fits */
    SEARCH_LEVER_COUNT
} search_lever_kind;
/* "precision", "gpus", "recompute", "memory_savers", "tokens", "price" */
extern const char *const search_lever_names[SEARCH_LEVER_COUNT];

/* One layout against the limits: value[k] in search_limit_units (train
 * figures 0 without tokens), limit[k] 0 where the request sets none. */
typedef struct search_figures {
    space_layout layout;       /* with the saver it relies on */
    int sys;
    int64_t gpus;
    double iteration_s;
    double value[SEARCH_LIMIT_COUNT];
    double limit[SEARCH_LIMIT_COUNT];
} search_figures;

/* A lever and the layout it admits: the #1 (by the request's objective)
 * of the search with the lever applied, which admitted it. */
typedef struct search_lever {
    search_lever_kind kind;
    double value;              /* precision: hw_dtype; gpus: the count;
                                  recompute: the #1's space_recompute;
                                  savers: the #1's search_saver; tokens;
                                  price: USD per GPU-hour */
    unsigned systems;          /* bit i: system i of the request takes part
                                  (precision: those whose GPU has fp8) */
    search_figures best;
} search_lever;

#define SEARCH_LEVERS_MAX 8

typedef struct search_miss_report {
    /* What binds: memory when no valid layout fits it, else the budget
     * or deadline the nearest layout exceeds by the largest ratio. */
    search_limit binding;
    int memory_fits;           /* some layout fits the memory */
    search_figures nearest;    /* memory: the smallest shortfall; else the
                                  smallest largest ratio to the limits */
    search_lever levers[SEARCH_LEVERS_MAX]; /* only levers that fit, in
                                  search_lever_kind order */
    int n_levers;
    int searches;              /* searches run to check the levers */
    unsigned tried;            /* bit k: a lever of kind k was checked */
} search_miss_report;

/* Explains a miss: where q admitted nothing (a from search_run of q, its
 * nearest misses exact: q.rough_misses 0) and a nearest miss exists,
 * sets a->miss (freed by search_answer_free) to the nearest layout in
 * figures, the binding limit, and each lever of search_lever_kind that
 * applies, checked by running the search with it (top 1, pruned): the
 * levers that admit something, each with its #1. Runs only on a miss;
 * the same answer at any thread count. Leaves a->miss NULL and returns
 * TP_OK where something was admitted or nothing valid came near.
 * Returns TP_EUSAGE for a request search_run refuses. */
int search_explain_miss(const search_request *q, search_answer *a, tp_err *e);

/* v rounded down to 3 significant figures (the tokens and price a lever
 * suggests: a figure a user types, still within the limit); 0 for v <= 0. */
double search_floor3(double v);

#endif
