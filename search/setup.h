/*
 * setup.h - a search as its user asks for it, set up against the
 * hardware database: the options of `search` beside the job (the
 * systems, the GPU counts, --fix, the budgets, the objective) as plain
 * data, and what search_setup_open makes of them: the model, each
 * system with its fitted operator models and collective tables (from a
 * search_cache where the caller has one), the counts, the grid, and the
 * search_request search_run takes. `search` and every scenario of a
 * `sweep` set up their search here, so both ask the same thing. Also
 * here: one layout estimated as `estimate` asks (search_estimate_open,
 * estimate.c) and the user's own job searched and estimated as
 * `search --near` asks (search_own_*, near.c).
 */
#ifndef TP_SEARCH_SETUP_H
#define TP_SEARCH_SETUP_H

#include <stdint.h>

#include "hw.h"
#include "job.h"
#include "search.h"
#include "search_cache.h"

/* At most this many systems in one search (--system a,b,...). */
#define SEARCH_MAX_SYSTEMS 16

/* The search options, beside the job. Zero is "unset" for every field. */
typedef struct search_ask {
    const char *systems;     /* the hwdb system names, comma separated */
    const char *gpus;        /* the counts to try as the user wrote them:
                                N, a list N,M,..., a range A-B[:STEP]
                                (SI suffixes: 2k); NULL: whole nodes of
                                every system from min_gpus to max_gpus */
    int64_t min_gpus, max_gpus;
    int objective;           /* search_objective */
    int top_k;               /* layouts ranked, 0: 10 */
    double price;            /* USD per GPU-hour, 0: each system's own */
    double budget_usd, budget_gpu_hours, deadline_s; /* 0: none */
    double max_mem_fraction; /* 0: the frameworks' margin (search.h) */
    const char *fix;         /* K=V,... fixing grid fields (--fix) */
    int keep_bad;            /* fit implausible samples too (--keep-bad) */
    int no_prune;            /* time every layout (--no-prune) */
    int no_savers;           /* no memory-saver variants */
    int keep_admitted;       /* keep every admitted layout in the answer
                                (an SVG of the search, JSON's --all) */
    const space_model *model;/* a model read from a job file, used instead
                                of job->model; NULL: none */
} search_ask;

/* A search set up: q points into this struct (do not copy it). */
typedef struct search_setup {
    space_model m;
    search_system sys[SEARCH_MAX_SYSTEMS];
    est_models *ops[SEARCH_MAX_SYSTEMS];  /* owned where not the cache's */
    est_comm *comm[SEARCH_MAX_SYSTEMS];
    int ns;
    int64_t *counts;
    int n_counts;
    search_request q;
} search_setup;

/* Checks the job j and the search a against db and fills *s with the
 * request. db (and cache, when not NULL: models and tables come from it
 * and stay in it) must outlive s. Returns TP_OK, or TP_EUSAGE / TP_EDATA
 * with the message in e (naming the option: --system, --gpus, --fix ...;
 * s is then empty). Free with search_setup_close (accepts NULL and an
 * empty s). Reentrant: a cache is shared safely (search_cache.h). */
int search_setup_open(const search_job *j, const search_ask *a,
                      const hw_db *db, search_cache *cache, search_setup *s,
                      tp_err *e);
void search_setup_close(search_setup *s);

/* ---- one layout estimated (estimate.c) -------------------------------- */

/* An estimate as `estimate` asks for it. */
typedef struct search_estimate {
    est_ctx ctx;             /* the system, its GPU, models and tables */
    est_models *ops;         /* owned where not the cache's */
    est_comm *comm;
    int64_t gpus;            /* --gpus, or --nodes x the system's node */
    est_result r;            /* the layout, completed, and its estimate */
    int64_t tried, feasible; /* search_complete's counts */
} search_estimate;

/* Estimates want (the layout of job j for model m; SEARCH_UNSET fields
 * are chosen by search_complete, the fastest feasible) on the system of
 * db called system with j's GPUs. db (and cache, when not NULL: models
 * and tables come from it and stay in it) must outlive s. Returns TP_OK
 * (an infeasible layout too: s->r says why), or TP_EUSAGE / TP_EDATA with
 * the message in e (naming --gpus, --nodes, --precision or the system;
 * s is then empty). Free with search_estimate_close (accepts NULL). */
int search_estimate_open(const search_job *j, const space_model *m,
                         const space_layout *want, const char *system,
                         const hw_db *db, search_cache *cache, int keep_bad,
                         search_estimate *s, tp_err *e);
void search_estimate_close(search_estimate *s);

/* ---- the user's own job and the search of it (near.c) ----------------- */

/* `search --near`: a job as it ran and the search of the same job. */
typedef struct search_own {
    const char *file;   /* the job file as messages name it */
    int megatron;       /* a Megatron-LM job (its flags compared; its
                           GPUs come from #SBATCH or torchrun) */
    space_model m;      /* the job's model, as its reader made it */
    space_layout want;  /* the job's layout (search_job_layout) */
    int64_t gpus;
    char gpus_arg[32];  /* the search's GPU count where none was asked */
    est_result r;       /* the job's estimate (search_own_estimate) */
    char tag[96];       /* its layout's tag (space_layout_tag) */
} search_own;

/* With j read from n->file (and n->m, n->file, n->megatron filled by the
 * caller): checks that a names one system of db and that the job says
 * its GPUs, keeps the job's layout in n->want, and turns j into the same
 * job with every layout field unset, to be searched (the job's GPU count
 * unless a asks for counts; a->gpus may then point into n). TP_OK, or
 * TP_EUSAGE / TP_EDATA with the message in e. */
int search_own_open(search_job *j, search_ask *a, const hw_db *db,
                    search_own *n, tp_err *e);
/* n's job estimated on s's system (n->r, n->tag). With a log lg (NULL:
 * none), the estimate against it into *fed (est_fed_back); calibrated,
 * every system of s takes the run's kernel efficiency and the job is
 * estimated again. */
void search_own_estimate(search_own *n, search_setup *s,
                         const est_train_log *lg, int calibrate,
                         est_run_fed *fed);
/* What a best layout saves over n's job: iteration time (0 where the job
 * is not feasible; < 0: the best is slower) and, over q's tokens, that
 * time in GPU-hours at the job's GPU count (0 without tokens). */
typedef struct search_own_gain {
    double time_s, gpu_hours;
} search_own_gain;
void search_own_gain_of(const search_own *n, const est_result *best,
                        const search_request *q, search_own_gain *g);

#endif
