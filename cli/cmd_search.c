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
#include "cli.h"
#include "emit_rows.h"
#include "plot.h"
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- search --near (issue 18) ------------------------------------------ */

/* The user's job: its model and layout as read, and its estimate. */
typedef struct near_job {
    const char *file;
    int kind;           /* cli_job_kind of the file */
    space_model m;
    space_layout want;
    int64_t gpus;
    char gpus_arg[32];
    est_result r;
    char tag[96];
} near_job;

/* Reads o->job_file into nj and turns *o into the search of the same job
 * over every layout. */
static int job_open(cli_opts *o, const hw_db *db, near_job *nj, tp_err *e)
{
    nj->file = strcmp(o->job_file, "-") == 0 ? "<stdin>" : o->job_file;
    nj->kind = o->job_kind;
    int rc = cli_read_job(o, &nj->m, e);
    if (rc) return rc;
    o->model_given = &nj->m;
    if (!o->system)
        return tp_errf(e, TP_EUSAGE, "search --near needs --system");
    if (strchr(o->system, ','))
        return tp_errf(e, TP_EUSAGE, "search --near: one --system (the "
                       "job's), found '%s'", o->system);
    const hw_system *y = hw_find_system(db, o->system, e);
    if (!y) return TP_EDATA;
    if (o->job.gpus <= 0 && o->job.opt_nodes > 0)
        o->job.gpus = (int64_t)o->job.opt_nodes * y->gpus_per_node;
    if (o->job.gpus <= 0)
        return tp_errf(e, TP_EUSAGE,
                       "search: %s does not say how many GPUs%s; pass "
                       "--gpus N",
                       nj->file,
                       nj->kind == CLI_JOB_MEGATRON
                           ? " (no #SBATCH --nodes and --gpus-per-node, no "
                             "torchrun --nnodes and --nproc-per-node)"
                           : "");
    nj->gpus = o->job.gpus;
    rc = search_job_layout(&o->job, &nj->m, &nj->want, e);
    if (rc) return rc;
    /* the search: the job's GPUs unless --gpus or --max-gpus say more */
    if (!o->gpus_arg && o->max_gpus <= 0) {
        snprintf(nj->gpus_arg, sizeof nj->gpus_arg, "%lld", (long long)o->job.gpus);
        o->gpus_arg = nj->gpus_arg;
    }
    o->job.tp_set = 0;
    o->job.tp = 1;
    o->job.pp = o->job.cp = o->job.mbs = o->job.vstages = o->job.vpp_layers = 0;
    o->job.ep = o->job.etp = 0; /* searched too; the dispatcher stays the job's */
    o->job.sp = o->job.recompute = o->job.zero = -1;
    o->job.recompute_method = 0;
    o->job.recompute_layers = 0;
    o->job.sw_set &= ~(unsigned)SEARCH_SW_RC_METHOD;
    /* the pipeline split too: every split Megatron-Core runs (the job's
     * layout string, if any, fits only the job's PP and VPP) */
    o->job.split_set = 0, o->job.pp_account = 0;
    o->job.pp_first = o->job.pp_last = 0;
    o->job.pp_layout = NULL;
    o->job_file = NULL;
    o->job.from_launch = 0;
    return TP_OK;
}

static void job_estimate(near_job *nj, const search_setup *cs)
{
    est_ctx c = cs->sys[0].ctx;
    c.tp_across_nodes = nj->want.tp != SEARCH_UNSET
                        && nj->want.tp > c.sys->gpus_per_node;
    int64_t tried = 0, feasible = 0;
    search_complete(&c, &nj->m, &nj->want, nj->gpus, &nj->r, &tried,
                    &feasible);
    space_layout_tag(&nj->r.layout, c.sys->gpus_per_node, nj->tag,
                     sizeof nj->tag);
}

static void job_launch(launch_plan *c, const near_job *nj,
                        const search_request *q)
{
    memset(c, 0, sizeof *c);
    c->layout = &nj->r.layout;
    c->model = q->model;
    c->system = q->systems[0].ctx.sys->name;
    c->gpus_per_node = q->systems[0].ctx.sys->gpus_per_node;
    c->gpu_arch = q->systems[0].ctx.gpu->arch;
    c->tokens = q->tokens;
    c->iteration_s = nj->r.iteration_s;
}

/* The layout fields that differ from a to b, "TP 8 -> 4" a line. */
static void layout_diff(const space_layout *a, const space_layout *b,
                        launch_text *t)
{
    const struct {
        const char *name;
        int64_t x, y;
    } f[] = {
        {"TP", a->tp, b->tp},   {"PP", a->pp, b->pp},
        {"VPP", a->vpp, b->vpp}, {"CP", a->cp, b->cp},
        {"DP", a->dp, b->dp},   {"micro-batch", a->mbs, b->mbs},
        {"ZeRO", a->zero, b->zero},
        /* MoE layouts only (dense ones have no EP: both 1 and TP) */
        {"EP", space_layout_ep(a), space_layout_ep(b)},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].x != f[i].y)
            launch_text_put(t, "%s%s %lld -> %lld", t->n ? "\n" : "", f[i].name,
                         (long long)f[i].x, (long long)f[i].y);
    /* expert TP: "= TP" where it follows TP (Megatron-Core's default) */
    int64_t ea = space_layout_etp(a), eb = space_layout_etp(b);
    if ((ea == a->tp) != (eb == b->tp) || (ea != a->tp && ea != eb)) {
        char xa[32] = "= TP", xb[32] = "= TP";
        if (ea != a->tp) snprintf(xa, sizeof xa, "%lld", (long long)ea);
        if (eb != b->tp) snprintf(xb, sizeof xb, "%lld", (long long)eb);
        launch_text_put(t, "%sexpert TP %s -> %s", t->n ? "\n" : "", xa, xb);
    }
    if (!a->sp != !b->sp)
        launch_text_put(t, "%ssequence parallelism %s -> %s", t->n ? "\n" : "",
                     a->sp ? "on" : "off", b->sp ? "on" : "off");
    if (a->recompute != b->recompute)
        launch_text_put(t, "%srecompute %s -> %s", t->n ? "\n" : "",
                     space_recompute_names[a->recompute],
                     space_recompute_names[b->recompute]);
    /* the pipeline split, where the options that give it differ */
    char sa[2200], sb[2200];
    space_split_str(a, sa, sizeof sa);
    space_split_str(b, sb, sizeof sb);
    if (strcmp(sa, sb) != 0)
        launch_text_put(t, "%spipeline split %s -> %s", t->n ? "\n" : "",
                     sa[0] ? sa : "even", sb[0] ? sb : "even");
}

static void job_print(FILE *f, const near_job *nj, const emit_row *best,
                       const search_request *q)
{
    const est_result *r = &nj->r;
    fprintf(f, "\nyour job (%s): %s", nj->file, nj->tag);
    if (!r->feasible) {
        fprintf(f, ": %s (%s)\n", est_reason_names[r->reason], r->message);
    } else {
        fprintf(f, ", %.4f s an iteration, MFU %.1f %%, %.2f GiB\n",
                r->iteration_s, 100 * r->mfu, r->mem.total / 1073741824.0);
    }
    if (!best) return;
    double d = r->feasible ? r->iteration_s - best->r.iteration_s : 0;
    if (r->feasible && strcmp(best->tag, nj->tag) == 0) {
        fprintf(f, "the search's best is your job's layout\n");
        return;
    }
    fprintf(f, "the search's best: %s, %.4f s an iteration", best->tag,
            best->r.iteration_s);
    if (r->feasible && d > 0) {
        fprintf(f, ", %.1f %% less time", 100 * d / r->iteration_s);
        if (q->tokens > 0) {
            double its = q->tokens / ((double)q->base.gbs * (double)q->base.seq);
            double gh = its * d * (double)nj->gpus / 3600;
            fprintf(f, " (%.0f GPU-hours, $%.0f less for %.3g tokens)", gh,
                    gh * best->sys->price_usd_per_gpu_hour, q->tokens);
        }
    } else if (r->feasible) {
        fprintf(f, " (no faster than yours: ranked by %s)",
                search_objective_names[q->objective]);
    }
    launch_text lt = {0};
    layout_diff(&nj->r.layout, &best->r.layout, &lt);
    fprintf(f, "\nwhat changes (layout):\n");
    emit_print_indented(f, lt.n ? launch_text_str(&lt) : "(none)");
    launch_text_free(&lt);
    if (nj->kind != CLI_JOB_MEGATRON) return; /* the launch follows */
    fprintf(f, "what changes (Megatron-LM flags):\n");
    launch_plan from, to;
    job_launch(&from, nj, q);
    emit_row_launch(&to, best, q, 0, 0);
    launch_text t = {0};
    launch_megatron_diff(&from, &to, &t);
    emit_print_indented(f, t.n ? launch_text_str(&t) : "(none)");
    launch_text_free(&t);
}

/* t's lines as the array `name` of j (t is cut up). */
static void add_lines(cJSON *j, const char *name, launch_text *t)
{
    cJSON *a = cJSON_AddArrayToObject(j, name);
    for (char *p = t->p, *nl; p && *p; p = nl + 1) {
        nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        cJSON_AddItemToArray(a, cJSON_CreateString(p));
        if (!nl) break;
    }
}

static cJSON *job_json(const near_job *nj, const emit_row *best,
                        const search_request *q)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "file", nj->file);
    cJSON_AddStringToObject(j, "layout", nj->tag);
    cJSON_AddBoolToObject(j, "feasible", nj->r.feasible);
    cJSON_AddStringToObject(j, "reason", est_reason_names[nj->r.reason]);
    cJSON_AddNumberToObject(j, "iteration_time_s", nj->r.iteration_s);
    cJSON_AddNumberToObject(j, "peak_memory_bytes", nj->r.mem.total);
    if (best) {
        cJSON_AddStringToObject(j, "best_layout", best->tag);
        cJSON_AddNumberToObject(j, "best_iteration_time_s",
                                best->r.iteration_s);
        launch_plan from, to;
        job_launch(&from, nj, q);
        emit_row_launch(&to, best, q, 0, 0);
        launch_text t = {0};
        launch_megatron_diff(&from, &to, &t);
        launch_text lt = {0};
        layout_diff(&nj->r.layout, &best->r.layout, &lt);
        add_lines(j, "layout_changes", &lt);
        launch_text_free(&lt);
        add_lines(j, "megatron_changes", &t);
        launch_text_free(&t);
    } else {
        cJSON_AddNullToObject(j, "best_layout");
    }
    return j;
}

/* ---- the options as the search takes them ----------------------------- */

void cli_search_ask(const cli_opts *o, search_ask *a)
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

void cli_search_form(const cli_opts *o, emit_search_form *f)
{
    *f = (emit_search_form){o->torchtitan_version, o->nemo_format,
                            o->all_layouts, EMIT_LAUNCH_FORM_ALL,
                            o->launch_show,
                            o->job.framework == SPACE_FW_TORCHTITAN};
}

/* ---- the command ------------------------------------------------------ */

/* --svg FILE: the picture (plot/svg.c) written atomically, or to the
 * caller's stream for "-". TP_OK or TP_EIO with the message in e. */
static int write_svg(const char *path, FILE *caller, const search_request *q,
                     const search_answer *a, tp_err *e)
{
    size_t n = 0;
    char *doc = plot_search_svg(q, a, TRAINPLAN_VERSION, &n);
    emit_out o;
    int rc = emit_out_open(&o, path, caller, e);
    if (!rc) {
        fwrite(doc, 1, n, o.f);
        rc = emit_out_close(&o, 1, e);
    }
    free(doc);
    return rc;
}

int cmd_search(const cli_opts *o_cmd, emit_out *out, tp_err *e)
{
    /* --near: the user's own job, searched as the same job (model,
     * system, GPUs, sequence, batch, precision, software) over every
     * layout */
    cli_opts so = *o_cmd;
    const cli_opts *o = &so;
    near_job nj;
    memset(&nj, 0, sizeof nj);
    int rc = o_cmd->job_file
                 ? TP_OK
                 : space_model_unread(o->job.model, o->strict, cli_err(o), e);
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
    hw_db *db = cli_hwdb_for(o, &db_owned, e);
    if (!db) return e->status ? e->status : TP_EDATA;
    rc = o_cmd->job_file ? job_open(&so, db, &nj, e) : TP_OK;
    if (rc) {
        if (db_owned) hw_db_free(db);
        return rc;
    }
    search_ask ask;
    cli_search_ask(o, &ask);
    search_setup cs;
    rc = search_setup_open(&o->job, &ask, db, cli_session_cache(o, db), &cs, e);
    if (rc) {
        if (db_owned) hw_db_free(db);
        return rc;
    }
    if (o_cmd->job_file) {
        /* the job as it ran, then (--log) against its log; calibrated,
         * every layout is searched at the run's kernel efficiency */
        job_estimate(&nj, &cs);
        if (o_cmd->log_file) {
            est_fed_back(&fed, &lg, &cs.sys[0].ctx, &nj.m, &nj.r,
                         o_cmd->calibrate);
            if (fed.calibrated > 0) {
                for (int i = 0; i < cs.ns; i++) cs.sys[i].ctx.kernel_eff = fed.eff;
                job_estimate(&nj, &cs);
            }
        }
    }
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
    cli_search_form(o, &form);
    if (o->format == EMIT_JSONL) {
        emit_search_jsonl(f, &cs, &form, &ans, rows, frows, timing);
    } else if (o->format == EMIT_JSON) {
        cJSON *sj = emit_search_json(&cs, &form, &ans, timing);
        if (o_cmd->job_file)
            cJSON_AddItemToObject(sj, "near",
                                  job_json(&nj, ans.n_ranked ? rows : NULL, &q));
        if (o_cmd->log_file) emit_fed_json(sj, &fed, o_cmd->log_file);
        emit_print_json(f, sj);
    } else if (o->format == EMIT_CSV) {
        emit_search_csv(f, &cs, &form, &ans, rows, frows);
    } else {
        emit_search_text(f, o->format, &cs, &ans, rows, frows, o->explain,
                         timing);
        if (ans.n_ranked > 0) {
            if (o_cmd->job_file) job_print(f, &nj, &rows[0], &q);
            if (o_cmd->log_file) {
                est_band jb;
                est_error_band(cs.sys[0].ctx.gpu, &nj.m, &nj.r.layout,
                               nj.gpus, &jb);
                emit_fed_print(f, &fed, o_cmd->log_file, &jb);
                if (fed.calibrated > 0)
                    fprintf(f, "every layout above was estimated at that "
                               "calibrated kernel efficiency\n");
            }
            emit_search_launches(f, &form, &rows[0], &q);
        }
    }
    if (o->svg && (rc = write_svg(o->svg, o->out, &q, &ans, e))) goto done;
    if (o->sbatch && ans.n_ranked > 0) {
        emit_out so_out;
        if ((rc = emit_out_open(&so_out, o->sbatch, o->out, e))) goto done;
        launch_plan lc;
        emit_row_launch(&lc, &rows[0], &q, o->torchtitan_version, o->nemo_format);
        launch_text t = {0};
        launch_megatron_script(&lc, &t);
        fputs(launch_text_str(&t), so_out.f);
        launch_text_free(&t);
        if ((rc = emit_out_close(&so_out, 1, e))) goto done;
    }
    if (ans.n_ranked == 0) {
        /* what the estimator does not model first: not a shortfall */
        if (ans.stats.infeasible[EST_MOE] > 0)
            fprintf(cli_err(o), "trainplan: %lld layouts refused as not modelled "
                    "(%s)\n", (long long)ans.stats.infeasible[EST_MOE],
                    est_reason_names[EST_MOE]);
        fprintf(cli_err(o), "trainplan: nothing feasible%s%s\n", nearb[0] ? "; " : "",
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
