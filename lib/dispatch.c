/*
 * dispatch.c - the second half of a command line's run (lib_run_sink,
 * run.c): with the options parsed, find the command, check what was
 * given against it (options it does not take, a job file beside options
 * that would set the model, formats, argument counts), check that no
 * output replaces an input or another output, and run it on the
 * caller's stream or -o FILE with the call's thread count.
 */
#include "lib_int.h"
#include "table.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* GNU OpenMP's worker threads do not survive fork(): a child that enters
 * a parallel region after its parent ran one waits for the parent's
 * threads forever (libgomp keeps their pool). Python's multiprocessing
 * forks by default on Linux, so a library loaded into a parent that has
 * run a call would hang its children. In a forked child every call runs
 * on the calling thread alone. The handler only notes the fork: calling
 * into the OpenMP runtime there, before LLVM's libomp has reset itself in
 * its own child handler, hangs the child under clang. */
static volatile int forked_child;

static void on_fork_child(void)
{
    forked_child = 1;
}

static void fork_guard_register(void)
{
    pthread_atfork(NULL, NULL, on_fork_child);
}

void lib_fork_guard(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, fork_guard_register);
#ifdef _OPENMP
    if (forked_child) omp_set_num_threads(1); /* the calling thread's */
#endif
}

int lib_dispatch(lib_opts *o, const lib_given *gv, int npos, char **pos,
                 FILE *out_f, FILE *err)
{
    tp_err e = {0};
    int rc = TP_OK;
    if (gv->bad_format) {
        /* sweep and merge write records or their CSV (sweep/sweep_run.c) */
        if (npos >= 1 && (!strcmp(pos[0], "sweep") || !strcmp(pos[0], "merge")))
            fprintf(err, "trainplan: %s --format: expected jsonl (its "
                         "records, the default; json is the same) or csv "
                         "(one row a scenario), found '%s'\n",
                    pos[0], gv->bad_format);
        else
            fprintf(err, "trainplan: --format: expected table, json, csv or "
                         "jsonl (md: diff only), found '%s'\n",
                    gv->bad_format);
        return TP_EUSAGE;
    }
    /* A one-word command (verb "") takes no subcommand. */
    int one_word = 0;
    for (int i = 0; npos >= 1 && i < lib_n_commands; i++)
        if (!lib_commands[i].verb[0] && strcmp(lib_commands[i].group, pos[0]) == 0)
            one_word = 1;
    if (npos < 2 && !one_word) {
        if (npos == 0) {
            lib_usage(err, NULL);
        } else {
            fprintf(err, "trainplan: '%s' needs a subcommand:", pos[0]);
            for (int i = 0; i < lib_n_commands; i++)
                if (strcmp(lib_commands[i].group, pos[0]) == 0)
                    fprintf(err, " %s", lib_commands[i].verb);
            fprintf(err, " (try --help)\n");
        }
        return TP_EUSAGE;
    }
    const lib_command *cmd = NULL;
    for (int i = 0; i < lib_n_commands; i++)
        if (strcmp(lib_commands[i].group, pos[0]) == 0
            && (one_word ? !lib_commands[i].verb[0]
                         : strcmp(lib_commands[i].verb, pos[1]) == 0))
            cmd = &lib_commands[i];
    if (!cmd) {
        const char *names[LIB_MAX_COMMANDS];
        char joined[LIB_MAX_COMMANDS][48];
        for (int i = 0; i < lib_n_commands; i++) {
            snprintf(joined[i], sizeof joined[i], "%s %s", lib_commands[i].group,
                     lib_commands[i].verb);
            names[i] = joined[i];
        }
        char want[96], hint[256];
        snprintf(want, sizeof want, "%s %s", pos[0], pos[1]);
        tp_suggest(want, names, lib_n_commands, hint, sizeof hint);
        fprintf(err, "trainplan: unknown command '%s'%s (try --help)\n",
                want, hint);
        return TP_EUSAGE;
    }
    /* The ZeRO stage from --zero-stage and the distributed-optimizer
     * flags, which must agree: --use-distributed-optimizer is ZeRO-1 or
     * more, --no-use-distributed-optimizer ZeRO-0. */
    if (gv->zero_arg >= 0 && gv->distopt
        && (gv->distopt > 0) != (gv->zero_arg >= 1)) {
        fprintf(err,
                "trainplan: --zero-stage %lld and --%suse-distributed-"
                "optimizer disagree (the distributed optimizer is ZeRO-1 or "
                "more); give one\n",
                gv->zero_arg, gv->distopt > 0 ? "" : "no-");
        return TP_EUSAGE;
    }
    if (gv->zero_arg >= 0)
        o->job.zero = (int)gv->zero_arg;
    else if (gv->distopt)
        o->job.zero = gv->distopt > 0 ? 1 : 0;
    /* Modules are read with the selective granularity only (Megatron-Core
     * TransformerConfig): given alone, they ask for it. */
    if (o->job.recompute_modules && o->job.recompute < 0)
        o->job.recompute = SPACE_RECOMPUTE_SELECTIVE;
    /* The precision-aware optimizer runs with the distributed optimizer
     * only, and Transformer Engine's layer offload with one pipeline stage
     * and no recomputation: given alone, they ask for them. */
    if (o->job.pa_optimizer && o->job.zero < 0) o->job.zero = 1;
    if (o->job.act_offload_layers > 0 && o->job.pp <= 0) o->job.pp = 1;
    if (o->job.act_offload_layers > 0 && o->job.recompute < 0)
        o->job.recompute = SPACE_RECOMPUTE_NONE;
    for (int i = 0; i < lib_n_options; i++)
        if (gv->seen_id[lib_options[i].id] && !(lib_options[i].cmds & cmd->bit)) {
            fprintf(err, "trainplan: --%s does not apply to '%s %s'\n",
                    lib_options[i].name, cmd->group, cmd->verb);
            return TP_EUSAGE;
        }
    /* A job file gives the model and the layout: an option that would set
     * them too is a contradiction, not an override. */
    if (o->job_file)
        for (int i = 0; i < lib_n_options; i++)
            if (gv->seen_id[lib_options[i].id] && lib_job_sets(lib_options[i].id)) {
                fprintf(err,
                        "trainplan: --%s and --%s: the job file gives the "
                        "model and the layout; drop --%s or edit the file\n",
                        o->near ? "near" : lib_job_options[o->job_kind],
                        lib_options[i].name, lib_options[i].name);
                return TP_EUSAGE;
            }
    if (o->calibrate && !o->log_file) {
        fprintf(err, "trainplan: --calibrate-to-log needs --log FILE (the "
                     "run to calibrate to)\n");
        return TP_EUSAGE;
    }
    if (o->format == EMIT_JSONL && cmd->bit != CMD_SEARCH && cmd->bit != CMD_SWEEP
        && cmd->bit != CMD_MERGE) {
        fprintf(err, "trainplan: --format jsonl applies to 'search', "
                     "'sweep' and 'merge' only\n");
        return TP_EUSAGE;
    }
    /* sweep and merge say what they write (sweep/sweep_run.c) */
    if (o->format == EMIT_MD && cmd->bit != CMD_DIFF && cmd->bit != CMD_SWEEP
        && cmd->bit != CMD_MERGE) {
        fprintf(err, "trainplan: --format md applies to 'diff' only\n");
        return TP_EUSAGE;
    }
    o->npos = npos - (one_word ? 1 : 2);
    o->pos = pos + (one_word ? 1 : 2);
    if (o->npos < cmd->min_args || o->npos > cmd->max_args) {
        fprintf(err, "trainplan: usage: trainplan %s %s %s\n", cmd->group,
                cmd->verb, cmd->args);
        return TP_EUSAGE;
    }
    /* Every file the call reads and writes, before anything is written:
     * no output may replace an input or another output (out.c). */
    {
        int n_io = 0;
        emit_io *io = tp_xcalloc((size_t)(gv->n_io + o->npos + 1), sizeof *io);
        char names[MAX_IO_GIVEN][64];
        int has_output = 0;
        for (int i = 0; i < gv->n_io; i++)
            if (lib_io_options[gv->io[i].k].id == OPT_OUTPUT) has_output = 1;
        /* Without -o the command's data goes to the caller's stream. */
        if (!has_output)
            io[n_io++] = (emit_io){"standard output", "-", EMIT_IO_OUT, 1};
        for (int i = 0; i < gv->n_io; i++) {
            int k = gv->io[i].k, id = lib_io_options[k].id;
            const lib_option *opt = lib_option_by_id(id);
            emit_io *x = &io[n_io];
            x->path = gv->io[i].path;
            x->role = lib_io_options[k].role;
            if (id == OPT_OUTPUT) {
                x->what = "-o";
                /* sweep's -o is its records' file; import's a directory */
                if (cmd->output_is_dir && cmd->bit != CMD_SWEEP)
                    x->role = EMIT_IO_OUT_DIR;
            } else {
                snprintf(names[i], sizeof names[i], "--%s", opt->name);
                x->what = names[i];
            }
            /* a preset's name is no file */
            if (id == OPT_MODEL && !space_model_is_path(x->path)) continue;
            n_io++;
        }
        for (int i = 0; i < o->npos; i++) {
            if (cmd->args_read == ARGS_NAMES
                || (cmd->args_read == ARGS_MODEL
                    && !space_model_is_path(o->pos[i])))
                continue;
            io[n_io++] = (emit_io){cmd->bit == CMD_SWEEP  ? "the spec"
                                  : cmd->bit == CMD_DIFF ? (i ? "NEW" : "OLD")
                                  : cmd->args_read == ARGS_MODEL ? "the model"
                                                                 : "the input",
                                  o->pos[i], EMIT_IO_IN, 0};
        }
        rc = emit_io_check(io, n_io, out_f, &e);
        free(io);
        if (rc) {
            fprintf(err, "trainplan: %s\n", e.msg);
            return rc;
        }
    }
    o->out = out_f;

#ifdef _OPENMP
    /* The thread count is the calling thread's: set for this call only. */
    lib_fork_guard();
    int threads_before = omp_get_max_threads();
    if (o->threads > 0 && !forked_child) omp_set_num_threads(o->threads);
#endif

    /* -o of a command that writes a directory is its argument, not where
     * stdout goes. */
    if (cmd->output_is_dir) {
        o->out_dir = o->output;
        o->output = NULL;
    }
    emit_out out;
    rc = emit_out_open(&out, o->output, out_f, &e); /* NULL, "-": out_f */
    if (rc) {
        fprintf(err, "trainplan: %s\n", e.msg);
    } else {
        rc = cmd->fn(o, &out, &e);
        /* A nothing-feasible result (1) is still output worth keeping,
         * and so is a diff that found changes (3). */
        int keep = rc == TP_OK || rc == TP_INFEASIBLE
                   || (cmd->bit == CMD_DIFF && rc == LIB_EXIT_CHANGED);
        tp_err ce = {0};
        int crc = emit_out_close(&out, keep, &ce);
        /* An output that could not be written (a full disk, /dev/full, a
         * size limit) is 74 even when the command found changes (3): the
         * report the caller relies on is not there. */
        if (crc) {
            fprintf(err, "trainplan: %s\n", ce.msg);
            rc = crc;
        } else if (rc != TP_OK && rc != TP_INFEASIBLE) {
            fprintf(err, "trainplan: %s\n", e.msg);
        }
    }
#ifdef _OPENMP
    if (o->threads > 0 && !forked_child) omp_set_num_threads(threads_before);
#endif
    return rc;
}
