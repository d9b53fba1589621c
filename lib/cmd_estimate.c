/*
 * cmd_estimate.c - `trainplan estimate`: the time and memory of one
 * training iteration of a model under a layout on a system, with where
 * the time goes. The options (or a job file) become the job and its
 * layout; search_estimate_open (search/estimate.c) estimates it, choosing
 * the fields the user leaves unset (search_complete), and emit/estimate.c
 * writes it; a library call takes it as a struct (lib_estimate_sink).
 */
#include "lib_int.h"

int cmd_estimate(const lib_opts *o_cmd, emit_out *out, tp_err *e)
{
    /* A job file (--megatron-args, ...) sets what the options would. */
    lib_opts job = *o_cmd;
    const lib_opts *o = &job;
    space_model m, jm;
    int rc;
    if (o_cmd->job_file) {
        rc = lib_read_job(&job, &jm, e);
        if (rc) return rc;
        job.model_given = &jm;
    } else if (!o->job.model) {
        return tp_errf(e, TP_EUSAGE,
                       "estimate needs --model (or a job file: "
                       "--megatron-args, --nemo-overrides, "
                       "--torchtitan-config)");
    }
    if (!o->system) return tp_errf(e, TP_EUSAGE, "estimate needs --system");
    if (!o_cmd->job_file
        && (rc = space_model_unread(o->job.model, o->strict, lib_err(o), e)))
        return rc;
    rc = search_job_model(&o->job, o->model_given, &m, e);
    if (rc) return rc;
    space_layout want;
    rc = search_job_layout(&o->job, &m, &want, e);
    if (rc) return rc;
    est_train_log lg;
    if (o->log_file && (rc = est_train_log_read(o->log_file, &lg, e)))
        return rc;
    int db_owned = 0;
    hw_db *db = lib_hwdb_for(o, &db_owned, e);
    if (!db) return e->status ? e->status : TP_EDATA;
    search_estimate se;
    if (o->gpus_arg && o->job.gpus < 0) {
        rc = tp_errf(e, TP_EUSAGE,
                     "--gpus: expected an integer in [1, 10000000], found "
                     "'%s'", o->gpus_arg);
        goto done;
    }
    rc = search_estimate_open(&o->job, &m, &want, o->system, db,
                              lib_session_cache(o, db), o->keep_bad, &se, e);
    if (rc) goto done;
    const est_result *r = &se.r;
    const hw_system *y = se.ctx.sys;
    if (o->estimate_sink) { /* a library call's struct: nothing printed */
        lib_estimate_sink *k = o->estimate_sink;
        k->filled = 1;
        k->r = *r;
        tp_strlcpy(k->system, y->name, sizeof k->system);
        tp_strlcpy(k->gpu, y->gpu->name, sizeof k->gpu);
        k->gpu_mem_bytes = y->gpu->mem_bytes;
        k->moe = m.num_experts > 0;
        k->tried = se.tried;
        k->feasible = se.feasible;
        goto verdict;
    }
    est_run_fed fed;
    if (o->log_file) est_fed_back(&fed, &lg, &se.ctx, &m, r, o->calibrate);
    emit_estimate ea = {&se.ctx, &m, &want, r, se.tried, se.feasible,
                        o->job.tokens, o->log_file ? &fed : NULL,
                        o->log_file, o->ops};
    if (o->format == EMIT_JSON)
        emit_print_json(out->f, emit_estimate_json(&ea));
    else
        emit_estimate_text(out->f, o->format, &ea);
verdict:
    rc = r->feasible ? TP_OK : TP_INFEASIBLE;
    /* Exit 1 says why on standard error too, in every format: a library
     * or Python caller sees the status and this line (TrainplanError's
     * message), not only the JSON's "reason". */
    if (!r->feasible)
        fprintf(lib_err(o), "trainplan: not feasible (%s%s%s): %s\n",
                est_reason_names[r->reason],
                r->reason == EST_INVALID_LAYOUT ? ", " : "",
                r->reason == EST_INVALID_LAYOUT ? space_reject_names[r->reject] : "",
                r->message);
    search_estimate_close(&se);
done:
    if (db_owned) hw_db_free(db);
    return rc;
}
