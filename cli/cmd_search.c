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
#include "plot.h"
#include "report.h"
#include "search_rows.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- table output ----------------------------------------------------- */

static void print_rows(FILE *f, emit_format fmt, const cli_row *rows, int n,
                       int multi, const search_request *q)
{
    const char *hdr[] = {"#",        "system",   "layout",   "GPUs",
                         "iter s",   "tokens/s", "MFU",      "mem GiB",
                         "+margin",  "free GiB", "train d",  "GPU-h",
                         "cost $",   "bubble",   "exposed comm"};
    const char *hdr1[] = {"#",        "layout",   "GPUs",   "iter s",
                          "tokens/s", "MFU",      "mem GiB", "+margin",
                          "free GiB", "train d",  "GPU-h",   "cost $", "bubble",
                          "exposed comm"};
    /* Without --tokens the days and GPU-hours are unknown: their columns
     * are left out and cost is per iteration. */
    const char *hdr2[] = {"#",        "system",   "layout",   "GPUs",
                          "iter s",   "tokens/s", "MFU",      "mem GiB",
                          "+margin",  "free GiB", "cost $",   "bubble",
                          "exposed comm"};
    const char *hdr3[] = {"#",        "layout",   "GPUs",   "iter s",
                          "tokens/s", "MFU",      "mem GiB", "+margin",
                          "free GiB", "cost $",   "bubble", "exposed comm"};
    int days = q->tokens > 0;
    emit_table t;
    if (multi && days)
        emit_table_init(&t, 15, hdr, "rllrrrrrrrrrrrr");
    else if (days)
        emit_table_init(&t, 14, hdr1, "rlrrrrrrrrrrrr");
    else if (multi)
        emit_table_init(&t, 13, hdr2, "rllrrrrrrrrrr");
    else
        emit_table_init(&t, 12, hdr3, "rlrrrrrrrrrr");
    for (int i = 0; i < n; i++) {
        const cli_row *w = &rows[i];
        char c[13][48];
        snprintf(c[0], 48, "%d%s", i + 1, w->tied ? "=" : "");
        snprintf(c[1], 48, "%lld", (long long)w->p->gpus);
        snprintf(c[2], 48, "%.4f", w->r.iteration_s);
        emit_fmt_si(c[3], 48, w->r.tokens_per_s, "");
        snprintf(c[4], 48, "%.1f%%", 100 * w->r.mfu);
        snprintf(c[5], 48, "%.2f", w->r.mem.total / 1073741824.0);
        snprintf(c[12], 48, "%.2f", w->margin / 1073741824.0);
        snprintf(c[6], 48, "%.2f", w->headroom / 1073741824.0);
        if (q->tokens > 0) {
            snprintf(c[7], 48, "%.2f", w->train_s / 86400);
            snprintf(c[8], 48, "%.0f", w->gpu_hours);
            snprintf(c[9], 48, "%.0f", w->cost_usd);
        } else {
            snprintf(c[7], 48, "-");
            snprintf(c[8], 48, "-");
            snprintf(c[9], 48, "%.4f/it", w->p->cost_usd);
        }
        snprintf(c[10], 48, "%.1f%%", 100 * w->r.time.bubble_s / w->r.iteration_s);
        snprintf(c[11], 48, "%.1f%%", 100 * w->exposed_s / w->r.iteration_s);
        if (multi && days)
            emit_table_row(&t, c[0], w->sys->ctx.sys->name, w->tag, c[1], c[2],
                          c[3], c[4], c[5], c[12], c[6], c[7], c[8], c[9],
                          c[10], c[11]);
        else if (days)
            emit_table_row(&t, c[0], w->tag, c[1], c[2], c[3], c[4], c[5],
                          c[12], c[6], c[7], c[8], c[9], c[10], c[11]);
        else if (multi)
            emit_table_row(&t, c[0], w->sys->ctx.sys->name, w->tag, c[1], c[2],
                          c[3], c[4], c[5], c[12], c[6], c[9], c[10], c[11]);
        else
            emit_table_row(&t, c[0], w->tag, c[1], c[2], c[3], c[4], c[5],
                          c[12], c[6], c[9], c[10], c[11]);
    }
    emit_table_print(&t, f, fmt);
    emit_table_free(&t);
}

/* The best layout's error band, and which rows it ties (marked '=' in
 * the table). */
static void print_ties(FILE *f, const cli_row *rows, int n,
                       const search_request *q)
{
    if (n == 0) return;
    char bt[600];
    /* the band's text is a line of the band, then the nearest run */
    emit_band_text(&rows[0].band, bt, sizeof bt);
    for (char *line = bt, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        emit_wrapf(f, 2, "%s%s", line == bt ? "#1's " : "", line);
    }
    int k = 0;
    for (int i = 1; i < n; i++) k += rows[i].tied;
    if (k)
        emit_wrapf(f, 2, "=: %d of the next %d layouts are within that band of #1 "
                    "by %s: the published runs cannot tell them apart "
                    "(--explain says what separates them)",
              k, n - 1, q->objective == SEARCH_BY_COST ? "cost" : "time");
    else if (n > 1)
        fprintf(f, "no other layout is within that band of #1\n");
}

/* Which layouts the memory admits, and why: the margin or the fraction
 * asked for. */
static void print_memory_rule(FILE *f, const search_request *q, int explain)
{
    if (q->max_memory_fraction > 0) {
        fprintf(f, "memory: admitted when the estimated peak fits %.3g %% of "
                   "the GPU (--max-memory-fraction; no margin)\n",
                100 * q->max_memory_fraction);
        return;
    }
    if (explain)
        emit_wrapf(f, 2, "memory: admitted when the estimated peak + %.1f %% fits "
                    "the GPU (--max-memory-fraction overrides). %s",
              100 * est_memory_margin(&q->base), est_memory_evidence(&q->base));
    else
        emit_wrapf(f, 2, "memory: admitted when the estimated peak + %.1f %% fits "
                    "the GPU (--max-memory-fraction overrides; --explain says "
                    "where the margin comes from)",
              100 * est_memory_margin(&q->base));
}

/* The counts; with reasons (--explain, or nothing admitted) the counts by
 * reason, with examples (--explain) an example of each rule. */
static void print_counts(FILE *f, const search_answer *a, int reasons,
                         int examples)
{
    const search_stats *st = &a->stats;
    int64_t rej = 0;
    for (int i = 1; i < SPACE_REJECT_COUNT; i++) rej += st->rejected[i];
    emit_wrapf(f, 2,
          "layouts: %lld enumerated, %lld rejected by rules, %lld valid; "
          "pruned: %lld by the memory bound, %lld by the budget bound, %lld "
          "by the time bound; %lld estimated, %lld admitted%s",
          (long long)st->enumerated, (long long)rej, (long long)st->valid,
          (long long)st->pruned[SEARCH_PRUNE_MEMORY],
          (long long)st->pruned[SEARCH_PRUNE_BUDGET],
          (long long)st->pruned[SEARCH_PRUNE_TIME],
          (long long)st->estimated, (long long)st->admitted,
          reasons ? "" : " (--explain: by reason)");
    if (st->gpu_counts_beyond)
        fprintf(f, "%lld (system, GPU count) pairs skipped: more GPUs than the "
                   "system has\n",
                (long long)st->gpu_counts_beyond);
    if (!reasons) return;
    char buf[4096];
    size_t at = 0;
    int any = 0;
#define ADD_REASON(name, n)                                                   \
    do {                                                                      \
        if (at < sizeof buf)                                                  \
            at += (size_t)snprintf(buf + at, sizeof buf - at, "%s %s %lld",   \
                                   any++ ? "," : "", (name), (long long)(n)); \
    } while (0)
    buf[0] = '\0';
    for (int i = 1; i < SPACE_REJECT_COUNT; i++)
        if (st->rejected[i]) ADD_REASON(space_reject_names[i], st->rejected[i]);
    for (int i = 0; i < SEARCH_PRUNE_COUNT; i++)
        if (st->pruned[i]) ADD_REASON(search_prune_names[i], st->pruned[i]);
    for (int i = 1; i < EST_REASON_COUNT; i++)
        if (st->infeasible[i])
            ADD_REASON(est_reason_names[i], st->infeasible[i]);
    for (int i = 0; i < SEARCH_MISS_COUNT; i++)
        if (st->missed[i]) ADD_REASON(search_miss_names[i], st->missed[i]);
#undef ADD_REASON
    emit_wrapf(f, 2, "rejected or not admitted, by reason:%s", any ? buf : " none");
    if (examples)
        for (int i = 1; i < SPACE_REJECT_COUNT; i++)
            if (st->rejected[i])
                fprintf(f, "  %-20s e.g. %s\n", space_reject_names[i],
                        st->example[i]);
}

/* The pipeline sizes the search tried, grouped by what became of them
 * (admitted, or the reason none was), as ranges; then what the grids
 * leave out and how to ask for it. With explain, every size's counts. */
static void print_pipeline_sizes(FILE *f, const search_answer *a, int explain)
{
    const search_stats *st = &a->stats;
    if (st->n_pp == 0) return;
    /* the reasons in order of first appearance, admitted first */
    const char *seen[SPACE_GRID_MAX + 1];
    int n_seen = 0;
    seen[n_seen++] = NULL;
    for (int k = 0; k < st->n_pp; k++) {
        const char *w = cli_pp_why(&st->pp[k]);
        int have = 0;
        for (int i = 0; i < n_seen; i++)
            have |= (w == NULL && seen[i] == NULL)
                    || (w && seen[i] && strcmp(w, seen[i]) == 0);
        if (!have) seen[n_seen++] = w;
    }
    fprintf(f, "pipeline sizes (PP):\n");
    for (int i = 0; i < n_seen; i++) {
        char list[1024];
        size_t n = 0;
        list[0] = '\0';
        for (int k = 0; k < st->n_pp;) {
            const char *w = cli_pp_why(&st->pp[k]);
            int match = (w == NULL) == (seen[i] == NULL)
                        && (!w || strcmp(w, seen[i]) == 0);
            if (!match) {
                k++;
                continue;
            }
            int j = k;
            while (j + 1 < st->n_pp && st->pp[j + 1].pp == st->pp[j].pp + 1) {
                const char *wj = cli_pp_why(&st->pp[j + 1]);
                if ((wj == NULL) != (seen[i] == NULL)
                    || (wj && strcmp(wj, seen[i]) != 0))
                    break;
                j++;
            }
            if (n < sizeof list) {
                if (j > k)
                    n += (size_t)snprintf(list + n, sizeof list - n,
                                          "%s%lld-%lld", n ? ", " : "",
                                          (long long)st->pp[k].pp,
                                          (long long)st->pp[j].pp);
                else
                    n += (size_t)snprintf(list + n, sizeof list - n, "%s%lld",
                                          n ? ", " : "",
                                          (long long)st->pp[k].pp);
            }
            k = j + 1;
        }
        if (!seen[i])
            emit_wrapf(f, 4, "  %s: layouts admitted", list);
        else
            emit_wrapf(f, 4, "  %s: none admitted: %s%s%s%s", list, seen[i],
                  cli_pp_why_words(seen[i])[0] ? " (" : "", cli_pp_why_words(seen[i]),
                  cli_pp_why_words(seen[i])[0] ? ")" : "");
    }
    if (st->pp_beyond)
        fprintf(f, "  above %lld: not searched (the grid holds %d sizes); "
                   "--fix pp=N searches one\n",
                (long long)st->pp_beyond, SPACE_GRID_MAX);
    if (st->vpp_beyond)
        fprintf(f, "virtual stages above %lld: not searched (the grid holds "
                   "%d); --fix vpp=N searches one\n",
                (long long)st->vpp_beyond, SPACE_GRID_MAX);
    char sp[512];
    size_t at = 0;
    sp[0] = '\0';
    for (int k = 0; k < SPACE_SPLIT_KIND_COUNT && at < sizeof sp; k++)
        if (k != SPACE_SPLIT_GIVEN || st->split_valid[k])
            at += (size_t)snprintf(sp + at, sizeof sp - at, "%s %s %lld",
                                   k ? "," : "", space_split_kind_names[k],
                                   (long long)st->split_valid[k]);
    emit_wrapf(f, 2, "pipeline splits, valid layouts:%s (--fix split=NAME pins "
                "one; a layout string of your own is searched only where "
                "given, --pipeline-model-parallel-layout)", sp);
    if (!explain) return;
    fprintf(f, "  %-6s %10s %10s  %s\n", "PP", "valid", "admitted",
            "why none (the most layouts)");
    for (int k = 0; k < st->n_pp; k++) {
        const search_pp_stats *p = &st->pp[k];
        const char *w = cli_pp_why(p);
        fprintf(f, "  %-6lld %10lld %10lld  %s\n", (long long)p->pp,
                (long long)p->valid, (long long)p->admitted, w ? w : "-");
    }
}

/* Why the winner wins: each runner-up's extra time, term by term. */
/* For a row tied with the best (cli_row_tie): what separates them that the
 * time's error does not blur. The memory left is the estimate's own,
 * with its own margin; exposed communication and the bubble are the
 * terms that move most with the network and the software's overlap, so
 * the layout with less of them is the safer bet when the times tie. */
static void explain_tie(FILE *f, const cli_row *w, const cli_row *best)
{
    double gib = 1073741824.0;
    fprintf(f, "     tied with #1 within the error band (+/-%.1f %%): free "
               "memory %.1f vs %.1f GiB, exposed communication %.1f %% vs "
               "%.1f %%, bubble %.1f %% vs %.1f %%",
            fmax(w->band.mape_pct, best->band.mape_pct), w->headroom / gib,
            best->headroom / gib, 100 * w->exposed_s / w->r.iteration_s,
            100 * best->exposed_s / best->r.iteration_s,
            100 * w->r.time.bubble_s / w->r.iteration_s,
            100 * best->r.time.bubble_s / best->r.iteration_s);
    if (w->p->gpus != best->p->gpus)
        fprintf(f, ", %lld GPUs vs %lld", (long long)w->p->gpus,
                (long long)best->p->gpus);
    fputc('\n', f);
}

static void print_explain(FILE *f, const cli_row *rows, int n)
{
    if (n == 0) return;
    cli_term tw[EST_TIME_TERMS];
    int nt = est_time_terms(&rows[0].r.time, 0, tw);
    fprintf(f, "\nwhy %s wins: %.4f s per iteration =", rows[0].tag,
            rows[0].r.iteration_s);
    for (int i = 0, first = 1; i < nt; i++)
        if (tw[i].v > 0) {
            fprintf(f, "%s %s %.4f", first ? "" : " +", tw[i].name, tw[i].v);
            first = 0;
        }
    fprintf(f, " (seconds)\n");
    for (int k = 1; k < n && k < 6; k++) {
        cli_term tr[EST_TIME_TERMS];
        est_time_terms(&rows[k].r.time, 0, tr);
        int ord[EST_TIME_TERMS];
        for (int i = 0; i < nt; i++) ord[i] = i;
        /* largest difference first; ties by term order */
        for (int i = 1; i < nt; i++)
            for (int j = i; j > 0; j--) {
                double a = fabs(tr[ord[j]].v - tw[ord[j]].v);
                double b = fabs(tr[ord[j - 1]].v - tw[ord[j - 1]].v);
                if (a > b) {
                    int x = ord[j];
                    ord[j] = ord[j - 1];
                    ord[j - 1] = x;
                } else {
                    break;
                }
            }
        fprintf(f, "  #%d %s loses by %+.4f s:", k + 1, rows[k].tag,
                rows[k].r.iteration_s - rows[0].r.iteration_s);
        int shown = 0;
        for (int i = 0; i < nt && shown < 4; i++) {
            double d = tr[ord[i]].v - tw[ord[i]].v;
            if (fabs(d) < 5e-5) break;
            fprintf(f, "%s %s %+.4f", shown++ ? "," : "", tr[ord[i]].name, d);
        }
        if (rows[k].p->gpus != rows[0].p->gpus)
            fprintf(f, " (%lld GPUs vs %lld)", (long long)rows[k].p->gpus,
                    (long long)rows[0].p->gpus);
        fputc('\n', f);
        if (rows[k].tied)
            explain_tie(f, &rows[k], &rows[0]);
    }
}

/* Each line of s indented by two blanks (empty lines left empty). */
static void print_indented(FILE *f, const char *s)
{
    while (*s) {
        const char *nl = strchr(s, '\n');
        int n = nl ? (int)(nl - s) : (int)strlen(s);
        fprintf(f, n ? "  %.*s\n" : "%.*s\n", n, s);
        if (!nl) break;
        s = nl + 1;
    }
}

const char *const cli_launch_show_names[CLI_LAUNCH_SHOW_COUNT] = {
    "none", "megatron", "nemo", "torchtitan", "all"};

unsigned cli_launch_forms(int show)
{
    switch (show) {
    case CLI_LAUNCH_MEGATRON: return CLI_LAUNCH_FORM_MEGATRON;
    case CLI_LAUNCH_NEMO: return CLI_LAUNCH_FORM_NEMO;
    case CLI_LAUNCH_TORCHTITAN: return CLI_LAUNCH_FORM_TORCHTITAN;
    case CLI_LAUNCH_ALL: return CLI_LAUNCH_FORM_ALL;
    default: return 0;
    }
}

/* The launch block of c for one framework (CLI_LAUNCH_MEGATRON, _NEMO or
 * _TORCHTITAN). */
static void print_launch(FILE *f, int which, const launch_plan *c)
{
    launch_text t = {0};
    if (which == CLI_LAUNCH_TORCHTITAN) {
        fprintf(f, "torchtitan (%s):\n",
                c->torchtitan_version == LAUNCH_TT_MAIN ? "Python config"
                                                     : "TOML job config");
        launch_torchtitan(c, &t);
        print_indented(f, launch_text_str(&t));
    } else if (which == CLI_LAUNCH_MEGATRON) {
        fprintf(f, "Megatron-LM launch script (sbatch it, or run it on each "
                   "node under another scheduler; --sbatch FILE writes it):\n");
        launch_megatron_script(c, &t);
        fprintf(f, "%s# (end of the script)\n", launch_text_str(&t));
    } else {
        fprintf(f, "NeMo (%s):\n", c->nemo_format == LAUNCH_NEMO_V1
                                       ? "NeMo 1.x YAML keys"
                                       : "Megatron-Bridge overrides");
        launch_nemo(c, &t);
        print_indented(f, launch_text_str(&t));
    }
    launch_text_free(&t);
}

/* #1's launches as --launch asks: by default one line saying how. */
static void print_launches(FILE *f, const cli_opts *o, const cli_row *best,
                           const search_request *q)
{
    launch_plan lc;
    cli_row_launch(&lc, best, q, o->torchtitan_version, o->nemo_format);
    int titan = o->job.framework == SPACE_FW_TORCHTITAN;
    if (o->launch_show == CLI_LAUNCH_NONE) {
        fputc('\n', f);
        emit_wrapf(f, 2, "launch #1: --launch %s prints it here; --sbatch FILE "
                    "writes the Megatron-LM script; -f json has every form",
              titan ? "torchtitan|megatron|nemo|all"
                    : "megatron|nemo|torchtitan|all");
        return;
    }
    fprintf(f, "\nlaunch %s on %s:\n", best->tag, best->sys->ctx.sys->name);
    if (o->launch_show != CLI_LAUNCH_ALL) {
        print_launch(f, o->launch_show, &lc);
        return;
    }
    /* the framework the estimates assumed first */
    static const int order[2][3] = {
        {CLI_LAUNCH_MEGATRON, CLI_LAUNCH_NEMO, CLI_LAUNCH_TORCHTITAN},
        {CLI_LAUNCH_TORCHTITAN, CLI_LAUNCH_MEGATRON, CLI_LAUNCH_NEMO}};
    for (int i = 0; i < 3; i++) print_launch(f, order[titan][i], &lc);
}

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

static void job_estimate(near_job *nj, const cli_search *cs)
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

static void job_print(FILE *f, const near_job *nj, const cli_row *best,
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
    print_indented(f, lt.n ? launch_text_str(&lt) : "(none)");
    launch_text_free(&lt);
    if (nj->kind != CLI_JOB_MEGATRON) return; /* the launch follows */
    fprintf(f, "what changes (Megatron-LM flags):\n");
    launch_plan from, to;
    job_launch(&from, nj, q);
    cli_row_launch(&to, best, q, 0, 0);
    launch_text t = {0};
    launch_megatron_diff(&from, &to, &t);
    print_indented(f, t.n ? launch_text_str(&t) : "(none)");
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

static cJSON *job_json(const near_job *nj, const cli_row *best,
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
        cli_row_launch(&to, best, q, 0, 0);
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
                 : cli_model_unread(o->job.model, o->strict, cli_err(o), e);
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
    cli_search cs;
    rc = cli_search_open(o, db, cli_session_cache(o, db), &cs, e);
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
    const space_model m = cs.m;
    const search_system *sys = cs.sys;
    const int ns = cs.ns;
    const int64_t *counts = cs.counts;
    const int n_counts = cs.n_counts;
    const search_request q = cs.q;
    const space_layout base = q.base;
    search_answer ans;
    memset(&ans, 0, sizeof ans);
    cli_row *rows = NULL, *frows = NULL;
    if ((rc = search_run(&q, &ans, e))) goto done;
    /* nothing admitted: the nearest layout in figures, and the levers
     * that fit, each checked by a search (search/miss.c) */
    if (ans.n_ranked == 0 && (rc = search_explain_miss(&q, &ans, e)))
        goto done;

    rows = tp_xcalloc((size_t)ans.n_ranked + 1, sizeof *rows);
    frows = tp_xcalloc((size_t)ans.n_front + 1, sizeof *frows);
    for (int i = 0; i < ans.n_ranked; i++) cli_row_fill(&rows[i], &q, &ans.ranked[i]);
    for (int i = 0; i < ans.n_front; i++) cli_row_fill(&frows[i], &q, &ans.front[i]);
    for (int i = 0; i < ans.n_ranked; i++) cli_row_tie(&rows[i], &rows[0], &q);
    for (int i = 0; i < ans.n_front && ans.n_ranked > 0; i++)
        cli_row_tie(&frows[i], &rows[0], &q);
    int timing = !o->no_timing;
    char nearb[2048];
    cli_miss_line(&q, &ans, nearb, sizeof nearb);
    FILE *f = out->f;
    if (o->format == EMIT_JSON || o->format == EMIT_JSONL) {
        cJSON *st = cli_stats_json(&ans, timing);
        if (o->format == EMIT_JSONL) {
            for (int set = 0; set < 2; set++) {
                const cli_row *rs = set ? frows : rows;
                int n = set ? ans.n_front : ans.n_ranked;
                for (int i = 0; i < n; i++) {
                    cJSON *j = emit_json_version(
                        cli_row_json(&rs[i], &q, set ? "pareto" : "ranked", i + 1,
                                 o->torchtitan_version, o->nemo_format,
                                 CLI_LAUNCH_FORM_ALL));
                    char *s = cJSON_PrintUnformatted(j);
                    fprintf(f, "%s\n", s);
                    cJSON_free(s);
                    cJSON_Delete(j);
                }
            }
            cJSON *j = emit_json_version(cJSON_CreateObject());
            cJSON_AddItemToObject(j, "stats", st);
            if (ans.miss) {
                cJSON *nm = cJSON_AddObjectToObject(j, "nearest_miss");
                cli_miss_json(nm, &q, &ans);
            }
            char *s = cJSON_PrintUnformatted(j);
            fprintf(f, "%s\n", s);
            cJSON_free(s);
            cJSON_Delete(j);
        } else {
            cJSON_Delete(st);
            cJSON *sj = cli_search_json(&cs, &ans, timing);
            if (o_cmd->job_file)
                cJSON_AddItemToObject(sj, "near",
                                      job_json(&nj, ans.n_ranked ? rows : NULL,
                                                &q));
            if (o_cmd->log_file) emit_fed_json(sj, &fed, o_cmd->log_file);
            emit_print_json(f, sj);
        }
    } else if (o->format == EMIT_CSV) {
        /* ep and etp: MoE layouts' expert-parallel and expert TP sizes,
         * empty for a dense model */
        const char *hdr[] = {"set", "rank", "system", "layout", "gpus", "tp",
                             "pp", "vpp", "cp", "dp", "mbs", "sp", "recompute",
                             "zero", "ep", "etp", "iteration_time_s",
                             "tokens_per_s", "mfu", "peak_memory_bytes",
                             "memory_margin_bytes", "memory_headroom_bytes",
                             "time_to_train_s", "gpu_hours", "cost_usd",
                             "bubble_s", "exposed_comm_s",
                             "error_band_pct", "tied_with_best", "megatron",
                             "nemo", "torchtitan_config", "miss_limit",
                             "miss_limit_value", "miss_excess", "lever"};
        emit_table t;
        emit_table_init(&t, 36, hdr, "lrllrrrrrrrrlrrrrrrrrrrrrrrrrllllrrl");
        for (int set = 0; set < 2; set++) {
            const cli_row *rs = set ? frows : rows;
            int n = set ? ans.n_front : ans.n_ranked;
            for (int i = 0; i < n; i++) {
                const cli_row *w = &rs[i];
                const space_layout *l = &w->r.layout;
                char c[24][48];
                snprintf(c[0], 48, "%d", i + 1);
                snprintf(c[1], 48, "%lld", (long long)w->p->gpus);
                cli_csv_layout_cells(c, l, m.num_experts > 0);
                snprintf(c[10], 48, "%.6g", w->r.iteration_s);
                snprintf(c[11], 48, "%.6g", w->r.tokens_per_s);
                snprintf(c[12], 48, "%.4f", w->r.mfu);
                snprintf(c[13], 48, "%.0f", w->r.mem.total);
                snprintf(c[20], 48, "%.0f", w->margin);
                snprintf(c[14], 48, "%.0f", w->headroom);
                /* Without --tokens: empty, as JSON's null. */
                snprintf(c[15], 48, "%.6g", w->train_s);
                snprintf(c[16], 48, "%.6g", w->gpu_hours);
                snprintf(c[17], 48, "%.6g", w->cost_usd);
                if (!(q.tokens > 0)) c[15][0] = c[16][0] = c[17][0] = '\0';
                snprintf(c[18], 48, "%.6g", w->r.time.bubble_s);
                snprintf(c[19], 48, "%.6g", w->exposed_s);
                snprintf(c[23], 48, "%.6g", w->band.mape_pct);
                if (w->band.basis == EST_BAND_NONE) c[23][0] = '\0';
                launch_plan lc;
                cli_row_launch(&lc, w, &q, o->torchtitan_version, o->nemo_format);
                launch_text mg = {0}, nm = {0}, tt = {0};
                launch_megatron(&lc, &mg);
                launch_nemo(&lc, &nm);
                launch_torchtitan(&lc, &tt);
                emit_table_row(&t, set ? "pareto" : "ranked", c[0],
                              w->sys->ctx.sys->name, w->tag, c[1], c[2], c[3],
                              c[4], c[5], c[6], c[7], c[8],
                              space_recompute_names[l->recompute], c[9], c[21],
                              c[22], c[10],
                              c[11], c[12], c[13], c[20], c[14], c[15], c[16],
                              c[17], c[18], c[19], c[23],
                              w->tied ? "1" : "0", launch_text_str(&mg),
                              launch_text_str(&nm), launch_text_str(&tt), "", "",
                              "", "");
                launch_text_free(&mg);
                launch_text_free(&nm);
                launch_text_free(&tt);
            }
        }
        /* a miss: the nearest layout, then each lever's #1, with the
         * binding limit and the excess over it (no launches) */
        cli_miss_csv_row mr[SEARCH_LEVERS_MAX + 1];
        int nmr = cli_miss_csv_rows(&q, &ans, mr, SEARCH_LEVERS_MAX + 1);
        for (int i = 0; i < nmr; i++) {
            const search_figures *fg = mr[i].f;
            const space_layout *l = &fg->layout;
            char c[24][48];
            snprintf(c[0], 48, "%d", mr[i].rank);
            snprintf(c[1], 48, "%lld", (long long)fg->gpus);
            cli_csv_layout_cells(c, l, m.num_experts > 0);
            snprintf(c[10], 48, "%.6g", fg->iteration_s);
            snprintf(c[13], 48, "%.0f", fg->value[SEARCH_LIMIT_MEMORY]);
            snprintf(c[15], 48, "%.6g", fg->value[SEARCH_LIMIT_DEADLINE]);
            snprintf(c[16], 48, "%.6g", fg->value[SEARCH_LIMIT_GPU_HOURS]);
            snprintf(c[17], 48, "%.6g", fg->value[SEARCH_LIMIT_BUDGET_USD]);
            if (!(q.tokens > 0)) c[15][0] = c[16][0] = c[17][0] = '\0';
            snprintf(c[18], 48, "%.6g", mr[i].limit);
            snprintf(c[19], 48, "%.6g", mr[i].excess);
            emit_table_row(&t, mr[i].set, c[0], mr[i].system, mr[i].tag, c[1],
                          c[2], c[3], c[4], c[5], c[6], c[7], c[8],
                          space_recompute_names[l->recompute], c[9], c[21],
                          c[22], c[10], "", "", c[13], "", "", c[15], c[16],
                          c[17], "", "", "", "", "", "", "", mr[i].binding,
                          c[18], c[19], mr[i].lever);
        }
        emit_table_print(&t, f, EMIT_CSV);
        emit_table_free(&t);
    } else {
        char hd[2048];
        size_t at = 0;
        at += (size_t)snprintf(hd, sizeof hd, "%s, seq %lld, global batch "
                               "%lld, %s", m.name, (long long)base.seq,
                               (long long)base.gbs, hw_dtype_names[base.dtype]);
        if (q.tokens > 0 && at < sizeof hd)
            at += (size_t)snprintf(hd + at, sizeof hd - at, ", %.4g tokens",
                                   q.tokens);
        if (at < sizeof hd)
            at += (size_t)snprintf(hd + at, sizeof hd - at,
                                   "; %lld to %lld GPUs (%d counts) on",
                                   (long long)counts[0],
                                   (long long)counts[n_counts - 1], n_counts);
        for (int i = 0; i < ns && at < sizeof hd; i++)
            at += (size_t)snprintf(hd + at, sizeof hd - at,
                                   "%s %s (%s, $%.3f/GPU-h)", i ? "," : "",
                                   sys[i].ctx.sys->name, sys[i].ctx.gpu->name,
                                   sys[i].price_usd_per_gpu_hour);
        emit_wrapf(f, 2, "%s", hd);
        print_memory_rule(f, &q, o->explain);
        print_counts(f, &ans, o->explain || ans.n_ranked == 0, o->explain);
        print_pipeline_sizes(f, &ans, o->explain);
        if (timing)
            fprintf(f, "search: %.3f s on %d threads\n", ans.stats.elapsed_s,
                    ans.stats.threads);
        if (ans.n_ranked > 0) {
            fprintf(f, "\ntop %d by %s:\n", ans.n_ranked,
                    search_objective_names[q.objective]);
            print_rows(f, o->format, rows, ans.n_ranked, ns > 1, &q);
            print_ties(f, rows, ans.n_ranked, &q);
            fprintf(f, "\nPareto front of time against cost (%d layouts; none "
                       "is both faster and cheaper than another):\n",
                    ans.n_front);
            print_rows(f, o->format, frows, ans.n_front, ns > 1, &q);
            if (o->explain) print_explain(f, rows, ans.n_ranked);
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
            print_launches(f, o, &rows[0], &q);
        } else {
            fprintf(f, "\nNOTHING FEASIBLE: no layout fits the memory, budget "
                       "and deadline asked for.\n");
            if (ans.stats.infeasible[EST_MOE] > 0)
                fprintf(f, "%lld layouts refused as not modelled (%s)\n",
                        (long long)ans.stats.infeasible[EST_MOE],
                        est_reason_names[EST_MOE]);
            cli_miss_print(f, &q, &ans);
        }
    }
    if (o->svg && (rc = write_svg(o->svg, o->out, &q, &ans, e))) goto done;
    if (o->sbatch && ans.n_ranked > 0) {
        emit_out so_out;
        if ((rc = emit_out_open(&so_out, o->sbatch, o->out, e))) goto done;
        launch_plan lc;
        cli_row_launch(&lc, &rows[0], &q, o->torchtitan_version, o->nemo_format);
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
    cli_search_close(&cs);
    if (db_owned) hw_db_free(db);
    return rc;
}
