/*
 * cmd_search.c - `trainplan search`: every valid layout of a model on one
 * or more systems up to a number of GPUs (search/plan.c), printed as a
 * ranked top-k, the Pareto front of time against cost, the counts of
 * layouts rejected, pruned and estimated, and, for each layout, how to
 * launch it (launch.c; in JSON also as data, launch_args). Formats:
 * table, JSON, CSV, JSON Lines; --svg writes a plot of every admitted
 * layout with the front highlighted (plot/svg.c).
 *
 * Layout tag (space_layout_tag): n{nodes}g{gpus per node}_tp{}pp{}dp{}
 * [cp{}]_mbs{}[_vpp{}][_sp][_rsel|_rfull[_uN|_bN]|_rop][_z1|_z2|_z3]: _sp
 * sequence parallelism, _rsel/_rfull/_rop selective/full/op-level
 * recomputation (_uN/_bN: uniform groups of N, the first N of a chunk),
 * _zN ZeRO stage N (_z1: Megatron-LM's distributed optimizer).
 *
 * Determinism: everything printed comes from the search's answer, which
 * does not depend on the thread count; only stats.elapsed_s and
 * stats.threads do, and --no-timing leaves them out.
 */
#include "lib_int.h"
#include "emit_rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the options as the search takes them ----------------------------- */

void lib_search_ask(const lib_opts *o, search_ask *a)
{
    *a = (search_ask){
        .systems = o->system,
        .gpus = o->gpus_arg,
        .min_gpus = o->min_gpus,
        .max_gpus = o->max_gpus,
        .objective = o->objective,
        .top_k = o->top_k,
        .price = o->price,
        .budget_usd = o->budget_usd,
        .budget_gpu_hours = o->budget_gpu_hours,
        .deadline_s = o->deadline_s,
        .max_mem_fraction = o->max_mem_fraction,
        .fix = o->fix,
        .keep_bad = o->keep_bad,
        .no_prune = o->no_prune,
        .no_savers = o->no_savers,
        .keep_admitted = o->svg != NULL || o->all_layouts,
        .model = o->model_given,
    };
}

void lib_search_form(const lib_opts *o, emit_search_form *f)
{
    *f = (emit_search_form){o->torchtitan_version, o->nemo_format,
                            o->all_layouts, EMIT_LAUNCH_FORM_ALL,
                            o->launch_show,
                            o->job.framework == SPACE_FW_TORCHTITAN};
}

/* ---- the command ------------------------------------------------------ */

int cmd_search(const lib_opts *o_cmd, emit_out *out, tp_err *e)
{
    /* --near: the user's own job, searched as the same job (model,
     * system, GPUs, sequence, batch, precision, software) over every
     * layout (search/near.c) */
    lib_opts so = *o_cmd;
    const lib_opts *o = &so;
    search_own nj;
    memset(&nj, 0, sizeof nj);
    int rc = o_cmd->job_file
                 ? TP_OK
                 : space_model_unread(o->job.model, o->strict, lib_err(o), e);
    if (rc) return rc;
    est_train_log lg;
    est_run_fed fed;
    memset(&fed, 0, sizeof fed);
    if (o_cmd->log_file && !o_cmd->job_file)
        return tp_errf(e, TP_EUSAGE,
                       "search --log needs the job the log ran: --near FILE "
                       "(or --megatron-args, --nemo-overrides, "
                       "--torchtitan-config)");
    if (o_cmd->log_file && (rc = est_train_log_read(o_cmd->log_file, &lg, e)))
        return rc;
    int db_owned = 0;
    hw_db *db = lib_hwdb_for(o, &db_owned, e);
    if (!db) return e->status ? e->status : TP_EDATA;
    search_ask ask;
    if (o_cmd->job_file) {
        nj.file = strcmp(o->job_file, "-") == 0 ? "<stdin>" : o->job_file;
        nj.megatron = o->job_kind == LIB_JOB_MEGATRON;
        rc = lib_read_job(&so, &nj.m, e);
        so.model_given = &nj.m;
    }
    lib_search_ask(o, &ask);
    if (!rc && o_cmd->job_file)
        rc = search_own_open(&so.job, &ask, db, &nj, e);
    if (rc) {
        if (db_owned) hw_db_free(db);
        return rc;
    }
    search_setup cs;
    rc = search_setup_open(&o->job, &ask, db, lib_session_cache(o, db), &cs, e);
    if (rc) {
        if (db_owned) hw_db_free(db);
        return rc;
    }
    /* the job as it ran, then (--log) against its log; calibrated, every
     * layout is searched at the run's kernel efficiency */
    if (o_cmd->job_file)
        search_own_estimate(&nj, &cs, o_cmd->log_file ? &lg : NULL,
                            o_cmd->calibrate, &fed);
    const search_request q = cs.q;
    search_answer ans;
    memset(&ans, 0, sizeof ans);
    emit_row *rows = NULL, *frows = NULL;
    if ((rc = search_run(&q, &ans, e))) goto done;
    /* nothing admitted: the nearest layout in figures, and the levers
     * that fit, each checked by a search (search/miss.c) */
    if (ans.n_ranked == 0 && (rc = search_explain_miss(&q, &ans, e)))
        goto done;

    emit_search_rows(&q, &ans, &rows, &frows);
    int timing = !o->no_timing;
    char nearb[2048];
    emit_miss_line(&q, &ans, nearb, sizeof nearb);
    FILE *f = out->f;
    emit_search_form form;
    lib_search_form(o, &form);
    if (o->format == EMIT_JSONL) {
        emit_search_jsonl(f, &cs, &form, &ans, rows, frows, timing);
    } else if (o->format == EMIT_JSON) {
        cJSON *sj = emit_search_json(&cs, &form, &ans, timing);
        if (o_cmd->job_file)
            emit_near_json(sj, &nj, ans.n_ranked ? rows : NULL, &q,
                           o_cmd->log_file ? &fed : NULL, o_cmd->log_file);
        emit_print_json(f, sj);
    } else if (o->format == EMIT_CSV) {
        emit_search_csv(f, &cs, &form, &ans, rows, frows);
    } else {
        emit_search_text(f, o->format, &cs, &ans, rows, frows, o->explain,
                         timing);
        if (ans.n_ranked > 0) {
            if (o_cmd->job_file)
                emit_near_text(f, &nj, &rows[0], &q,
                               o_cmd->log_file ? &fed : NULL, o_cmd->log_file);
            emit_search_launches(f, &form, &rows[0], &q);
        }
    }
    if (o->svg && (rc = emit_search_svg(o->svg, o->out, &q, &ans,
                                        TRAINPLAN_VERSION, e)))
        goto done;
    if (o->sbatch && ans.n_ranked > 0
        && (rc = emit_search_sbatch(o->sbatch, o->out, &rows[0], &q,
                                    o->torchtitan_version, o->nemo_format, e)))
        goto done;
    if (ans.n_ranked == 0) {
        /* what the estimator does not model first: not a shortfall */
        if (ans.stats.infeasible[EST_MOE] > 0)
            fprintf(lib_err(o), "trainplan: %lld layouts refused as not modelled "
                    "(%s)\n", (long long)ans.stats.infeasible[EST_MOE],
                    est_reason_names[EST_MOE]);
        fprintf(lib_err(o), "trainplan: nothing feasible%s%s\n", nearb[0] ? "; " : "",
                nearb);
        rc = TP_INFEASIBLE;
    }
done:
    free(rows);
    free(frows);
    search_answer_free(&ans);
    search_setup_close(&cs);
    if (db_owned) hw_db_free(db);
    return rc;
}
