/*
 * cmd_sweep.c - `trainplan sweep`, `merge` and `diff`: their options as
 * the sweep module takes them (sweep/sweep.h), then the call.
 */
#include "lib_int.h"
#include "sweep.h"

#include <string.h>

_Static_assert(LIB_MAX_HWDB == SWEEP_MAX_HWDB,
               "a sweep takes the command line's hwdb directories");
_Static_assert(LIB_EXIT_CHANGED == DIFF_EXIT_CHANGED, "diff's exit status");

static void sweep_opts_of(const lib_opts *o, sweep_opts *w)
{
    memset(w, 0, sizeof *w);
    w->pos = o->pos;
    w->npos = o->npos;
    w->out_dir = o->out_dir;
    w->err = o->err;
    w->format = o->format;
    w->format_set = o->format_set;
    w->resume = o->resume;
    w->overwrite = o->overwrite;
    w->progress = o->progress;
    w->shard_i = o->shard_i;
    w->shard_n = o->shard_n;
    for (int i = 0; i < o->n_hwdb; i++) w->hwdb_dirs[i] = o->hwdb_dirs[i];
    w->n_hwdb = o->n_hwdb;
    w->threshold = o->threshold;
    w->base.job = o->job;
    lib_search_ask(o, &w->base.ask);
    lib_search_form(o, &w->base.form);
    /* the launches the spec's "launch" asks for (none by default), or
     * those --launch names */
    w->launch_set = o->launch_show_set;
    if (o->launch_show_set) w->base.form.launch_forms = emit_launch_forms(o->launch_show);
    /* the spec's "record" (compact by default), or --record's */
    w->record_set = o->record_set;
    w->record = o->record;
}

int cmd_sweep(const lib_opts *o, emit_out *out, tp_err *e)
{
    sweep_opts w;
    sweep_opts_of(o, &w);
    return sweep_run(&w, out, e);
}

int cmd_merge(const lib_opts *o, emit_out *out, tp_err *e)
{
    sweep_opts w;
    sweep_opts_of(o, &w);
    return sweep_merge(&w, out, e);
}

int cmd_diff(const lib_opts *o, emit_out *out, tp_err *e)
{
    sweep_opts w;
    sweep_opts_of(o, &w);
    return sweep_diff(&w, out, e);
}
