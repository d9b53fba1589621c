/*
 * emit_rows.h - what a search's printing (search_text.c), its JSON
 * (search.c) and --near (near.c) share: a ranked layout with its figures,
 * and the JSON of rows, counts and pipeline sizes.
 */
#ifndef TP_EMIT_ROWS_H
#define TP_EMIT_ROWS_H

#include "emit.h"
#include "launch.h"
#include "search.h"

/* A layout of the answer with the figures every output prints. */
typedef struct emit_row {
    const search_point *p;
    est_result r;
    space_layout l;
    const search_system *sys;
    char tag[96];
    double train_s, gpu_hours, cost_usd; /* of --tokens; 0 without */
    double margin, headroom, exposed_s; /* bytes: the margin added to the
                                          peak, and what is left after both */
    est_band band; /* the estimate's measured error (est_error_band) */
    int tied;      /* within the error band of the best (emit_row_tie) */
} emit_row;

/* w's error band, and whether w is tied with the best row: its objective
 * within the larger of the two bands of the best's (the estimator cannot
 * tell them apart on the published runs). The best is tied with none. */
void emit_row_tie(emit_row *w, const emit_row *best, const search_request *q);

/* The launch of row w of search q: torchtitan's config for tt_version,
 * NeMo's in nemo_format. */
void emit_row_launch(launch_plan *c, const emit_row *w, const search_request *q,
                    int tt_version, int nemo_format);

/* w's figures from point p of search q: its estimate, tag, time to train,
 * GPU-hours and cost, and the memory margin and headroom. */
void emit_row_fill(emit_row *w, const search_request *q, const search_point *p);

/* forms: the launches a row carries (EMIT_LAUNCH_FORM_* bits; a search's
 * JSON every one, a sweep's records what its --launch asks) */
cJSON *emit_row_json(const emit_row *w, const search_request *q, const char *set,
                    int rank, int tt_version, int nemo_format, unsigned forms);

/* Why no layout of pipeline size p was admitted, as a name: the rule
 * that rejected the most of them, or where its valid ones went (the
 * memory, a budget or deadline, the time bound, an estimate's reason);
 * NULL when some were admitted. */
const char *emit_pp_why(const search_pp_stats *p);

/* What a reason of emit_pp_why means, in words. */
const char *emit_pp_why_words(const char *why);

/* The "stats" object: the counts of layouts enumerated, rejected by
 * rule, pruned by bound, estimated and admitted, the pipeline sizes;
 * timing 0 leaves out elapsed time and threads. */
cJSON *emit_stats_json(const search_answer *a, int timing);
 
/* ---- a search's answer as text, CSV and JSON Lines (search_text.c) ---- */

/* The rows of a's ranked list and front with their figures and ties
 * (emit_row_fill, emit_row_tie), allocated (one more than each holds,
 * so never NULL); the caller frees both. */
void emit_search_rows(const search_request *q, const search_answer *a,
                      emit_row **rows, emit_row **frows);
/* The text of a search (fmt: a table format): the job and systems, the
 * memory rule, the counts, the pipeline sizes, the time with timing;
 * then the top-k, the error band and ties, the Pareto front and with
 * explain each runner-up term by term; or, nothing admitted, the
 * nearest miss and its levers. The caller prints #1's launches after
 * what it adds (emit_search_launches). */
void emit_search_text(FILE *f, emit_format fmt, const search_setup *s,
                      const search_answer *a, const emit_row *rows,
                      const emit_row *frows, int explain, int timing);
/* #1's launches as fm->launch_show asks: by default one line saying
 * how to get them. */
void emit_search_launches(FILE *f, const emit_search_form *fm,
                          const emit_row *best, const search_request *q);
/* `search --format csv`: a row per ranked and front layout with its
 * launches, then a miss's rows. */
void emit_search_csv(FILE *f, const search_setup *s, const emit_search_form *fm,
                     const search_answer *a, const emit_row *rows,
                     const emit_row *frows);
/* `search --format jsonl`: a record per ranked and front row, then one
 * with the counts (and the nearest miss). */
void emit_search_jsonl(FILE *f, const search_setup *s,
                       const emit_search_form *fm, const search_answer *a,
                       const emit_row *rows, const emit_row *frows, int timing);

/* --sbatch FILE: the Megatron-LM launch script of row best of search q
 * (emit_row_launch with tt_version, nemo_format), written as
 * emit_search_svg writes. TP_OK or TP_EIO with the message in e. */
int emit_search_sbatch(const char *path, FILE *caller, const emit_row *best,
                       const search_request *q, int tt_version,
                       int nemo_format, tp_err *e);

/* ---- the user's own job beside the search's best (near.c) ------------- */

/* `search --near` in words, after the search's text: job n as estimated,
 * then the best against it (what it saves, what changes in the layout
 * and, for a Megatron-LM job, in its flags); with fed (NULL: no log) the
 * run's log at log_path against the job's estimate. */
void emit_near_text(FILE *f, const search_own *n, const emit_row *best,
                    const search_request *q, const est_run_fed *fed,
                    const char *log_path);
/* The same as the "near" object of the search's JSON j (best NULL:
 * nothing admitted), and with fed its "measured" object. */
void emit_near_json(cJSON *j, const search_own *n, const emit_row *best,
                    const search_request *q, const est_run_fed *fed,
                    const char *log_path);

#endif
