/*
 * cmd_report.c - the inspection commands (model, hw, op, coll, hw
 * import-nccl-tests): each checks its options, parses their values into
 * the request of its report (emit/report.h), opens the hardware database
 * and calls the report. What a report prints and computes is emit/'s.
 */
#include "cli.h"
#include "report.h"

#include <stdlib.h>
#include <string.h>

/* ---- model list, model show ------------------------------------------ */

int cmd_model_list(const cli_opts *o, emit_out *out, tp_err *e)
{
    (void)e;
    return emit_model_list(out->f, o->format);
}

int cmd_model_show(const cli_opts *o, emit_out *out, tp_err *e)
{
    space_model m;
    int rc = cli_model_unread(o->pos[0], o->strict, cli_err(o), e);
    if (rc) return rc;
    rc = space_model_resolve(o->pos[0], &m, e);
    if (rc) return rc;
    return emit_model_show(out->f, o->format, &m, o->job.seq_length,
                           o->job.tp);
}

/* ---- hw list, hw show, hw check -------------------------------------- */

int cmd_hw_list(const cli_opts *o, emit_out *out, tp_err *e)
{
    hw_db *db = cli_open_hwdb(o, e);
    if (!db) return e->status;
    int rc = emit_hw_list(out->f, o->format, db);
    hw_db_free(db);
    return rc;
}

int cmd_hw_show(const cli_opts *o, emit_out *out, tp_err *e)
{
    hw_db *db = cli_open_hwdb(o, e);
    if (!db) return e->status;
    int rc = emit_hw_show(out->f, o->format, db, o->pos[0], e);
    hw_db_free(db);
    return rc;
}

int cmd_hw_check(const cli_opts *o, emit_out *out, tp_err *e)
{
    emit_check_ask a = {o->format, (const char *const *)o->pos, o->npos,
                        o->hwdb_dirs, o->n_hwdb};
    return emit_hw_check(&a, out->f, e);
}
