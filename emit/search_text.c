/*
 * search_text.c - a search's answer as text, CSV and JSON Lines (JSON:
 * search.c): the ranked top-k and the Pareto front as tables, the error
 * band and the ties, the memory rule, the counts of layouts rejected,
 * pruned and estimated, the pipeline sizes and why some admit nothing,
 * --explain's term-by-term comparison, and #1's launches as --launch
 * asks.
 *
 * Determinism: everything printed comes from the search's answer, which
 * does not depend on the thread count; only the elapsed time and the
 * threads do, printed only with timing.
 */
#include "emit_rows.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- table output ----------------------------------------------------- */

static void print_rows(FILE *f, emit_format fmt, const emit_row *rows, int n,
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
        const emit_row *w = &rows[i];
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
static void print_ties(FILE *f, const emit_row *rows, int n,
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
        const char *w = emit_pp_why(&st->pp[k]);
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
            const char *w = emit_pp_why(&st->pp[k]);
            int match = (w == NULL) == (seen[i] == NULL)
                        && (!w || strcmp(w, seen[i]) == 0);
            if (!match) {
                k++;
                continue;
            }
            int j = k;
            while (j + 1 < st->n_pp && st->pp[j + 1].pp == st->pp[j].pp + 1) {
                const char *wj = emit_pp_why(&st->pp[j + 1]);
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
                  emit_pp_why_words(seen[i])[0] ? " (" : "", emit_pp_why_words(seen[i]),
                  emit_pp_why_words(seen[i])[0] ? ")" : "");
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
        const char *w = emit_pp_why(p);
        fprintf(f, "  %-6lld %10lld %10lld  %s\n", (long long)p->pp,
                (long long)p->valid, (long long)p->admitted, w ? w : "-");
    }
}

/* Why the winner wins: each runner-up's extra time, term by term. */
/* For a row tied with the best (emit_row_tie): what separates them that the
 * time's error does not blur. The memory left is the estimate's own,
 * with its own margin; exposed communication and the bubble are the
 * terms that move most with the network and the software's overlap, so
 * the layout with less of them is the safer bet when the times tie. */
static void explain_tie(FILE *f, const emit_row *w, const emit_row *best)
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

static void print_explain(FILE *f, const emit_row *rows, int n)
{
    if (n == 0) return;
    est_term tw[EST_TIME_TERMS];
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
        est_term tr[EST_TIME_TERMS];
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

const char *const emit_launch_show_names[EMIT_LAUNCH_SHOW_COUNT] = {
    "none", "megatron", "nemo", "torchtitan", "all"};

unsigned emit_launch_forms(int show)
{
    switch (show) {
    case EMIT_LAUNCH_MEGATRON: return EMIT_LAUNCH_FORM_MEGATRON;
    case EMIT_LAUNCH_NEMO: return EMIT_LAUNCH_FORM_NEMO;
    case EMIT_LAUNCH_TORCHTITAN: return EMIT_LAUNCH_FORM_TORCHTITAN;
    case EMIT_LAUNCH_ALL: return EMIT_LAUNCH_FORM_ALL;
    default: return 0;
    }
}

/* The launch block of c for one framework (EMIT_LAUNCH_MEGATRON, _NEMO or
 * _TORCHTITAN). */
static void print_launch(FILE *f, int which, const launch_plan *c)
{
    launch_text t = {0};
    if (which == EMIT_LAUNCH_TORCHTITAN) {
        fprintf(f, "torchtitan (%s):\n",
                c->torchtitan_version == LAUNCH_TT_MAIN ? "Python config"
                                                     : "TOML job config");
        launch_torchtitan(c, &t);
        emit_print_indented(f, launch_text_str(&t));
    } else if (which == EMIT_LAUNCH_MEGATRON) {
        fprintf(f, "Megatron-LM launch script (sbatch it, or run it on each "
                   "node under another scheduler; --sbatch FILE writes it):\n");
        launch_megatron_script(c, &t);
        fprintf(f, "%s# (end of the script)\n", launch_text_str(&t));
    } else {
        fprintf(f, "NeMo (%s):\n", c->nemo_format == LAUNCH_NEMO_V1
                                       ? "NeMo 1.x YAML keys"
                                       : "Megatron-Bridge overrides");
        launch_nemo(c, &t);
        emit_print_indented(f, launch_text_str(&t));
    }
    launch_text_free(&t);
}

void emit_search_launches(FILE *f, const emit_search_form *fm,
                          const emit_row *best, const search_request *q)
{
    launch_plan lc;
    emit_row_launch(&lc, best, q, fm->torchtitan_version, fm->nemo_format);
    int titan = fm->titan_first;
    if (fm->launch_show == EMIT_LAUNCH_NONE) {
        fputc('\n', f);
        emit_wrapf(f, 2, "launch #1: --launch %s prints it here; --sbatch FILE "
                    "writes the Megatron-LM script; -f json has every form",
              titan ? "torchtitan|megatron|nemo|all"
                    : "megatron|nemo|torchtitan|all");
        return;
    }
    fprintf(f, "\nlaunch %s on %s:\n", best->tag, best->sys->ctx.sys->name);
    if (fm->launch_show != EMIT_LAUNCH_ALL) {
        print_launch(f, fm->launch_show, &lc);
        return;
    }
    /* the framework the estimates assumed first */
    static const int order[2][3] = {
        {EMIT_LAUNCH_MEGATRON, EMIT_LAUNCH_NEMO, EMIT_LAUNCH_TORCHTITAN},
        {EMIT_LAUNCH_TORCHTITAN, EMIT_LAUNCH_MEGATRON, EMIT_LAUNCH_NEMO}};
    for (int i = 0; i < 3; i++) print_launch(f, order[titan][i], &lc);
}

/* ---- the answer ------------------------------------------------------- */

void emit_search_rows(const search_request *q, const search_answer *a,
                      emit_row **rows, emit_row **frows)
{
    *rows = tp_xcalloc((size_t)a->n_ranked + 1, sizeof **rows);
    *frows = tp_xcalloc((size_t)a->n_front + 1, sizeof **frows);
    for (int i = 0; i < a->n_ranked; i++) emit_row_fill(&(*rows)[i], q, &a->ranked[i]);
    for (int i = 0; i < a->n_front; i++) emit_row_fill(&(*frows)[i], q, &a->front[i]);
    for (int i = 0; i < a->n_ranked; i++) emit_row_tie(&(*rows)[i], &(*rows)[0], q);
    for (int i = 0; i < a->n_front && a->n_ranked > 0; i++)
        emit_row_tie(&(*frows)[i], &(*rows)[0], q);
}

void emit_search_text(FILE *f, emit_format fmt, const search_setup *s,
                      const search_answer *a, const emit_row *rows,
                      const emit_row *frows, int explain, int timing)
{
    const search_request *q = &s->q;
    char hd[2048];
    size_t at = 0;
    at += (size_t)snprintf(hd, sizeof hd, "%s, seq %lld, global batch "
                           "%lld, %s", s->m.name, (long long)q->base.seq,
                           (long long)q->base.gbs, hw_dtype_names[q->base.dtype]);
    if (q->tokens > 0 && at < sizeof hd)
        at += (size_t)snprintf(hd + at, sizeof hd - at, ", %.4g tokens",
                               q->tokens);
    if (at < sizeof hd)
        at += (size_t)snprintf(hd + at, sizeof hd - at,
                               "; %lld to %lld GPUs (%d counts) on",
                               (long long)s->counts[0],
                               (long long)s->counts[s->n_counts - 1], s->n_counts);
    for (int i = 0; i < s->ns && at < sizeof hd; i++)
        at += (size_t)snprintf(hd + at, sizeof hd - at,
                               "%s %s (%s, $%.3f/GPU-h)", i ? "," : "",
                               s->sys[i].ctx.sys->name, s->sys[i].ctx.gpu->name,
                               s->sys[i].price_usd_per_gpu_hour);
    emit_wrapf(f, 2, "%s", hd);
    print_memory_rule(f, q, explain);
    print_counts(f, a, explain || a->n_ranked == 0, explain);
    print_pipeline_sizes(f, a, explain);
    if (timing)
        fprintf(f, "search: %.3f s on %d threads\n", a->stats.elapsed_s,
                a->stats.threads);
    if (a->n_ranked > 0) {
        fprintf(f, "\ntop %d by %s:\n", a->n_ranked,
                search_objective_names[q->objective]);
        print_rows(f, fmt, rows, a->n_ranked, s->ns > 1, q);
        print_ties(f, rows, a->n_ranked, q);
        fprintf(f, "\nPareto front of time against cost (%d layouts; none "
                   "is both faster and cheaper than another):\n",
                a->n_front);
        print_rows(f, fmt, frows, a->n_front, s->ns > 1, q);
        if (explain) print_explain(f, rows, a->n_ranked);
    } else {
        fprintf(f, "\nNOTHING FEASIBLE: no layout fits the memory, budget "
                   "and deadline asked for.\n");
        if (a->stats.infeasible[EST_MOE] > 0)
            fprintf(f, "%lld layouts refused as not modelled (%s)\n",
                    (long long)a->stats.infeasible[EST_MOE],
                    est_reason_names[EST_MOE]);
        emit_miss_print(f, q, a);
    }
}

void emit_search_csv(FILE *f, const search_setup *s, const emit_search_form *fm,
                     const search_answer *a, const emit_row *rows,
                     const emit_row *frows)
{
    const search_request *q = &s->q;
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
        const emit_row *rs = set ? frows : rows;
        int n = set ? a->n_front : a->n_ranked;
        for (int i = 0; i < n; i++) {
            const emit_row *w = &rs[i];
            const space_layout *l = &w->r.layout;
            char c[24][48];
            snprintf(c[0], 48, "%d", i + 1);
            snprintf(c[1], 48, "%lld", (long long)w->p->gpus);
            emit_csv_layout_cells(c, l, s->m.num_experts > 0);
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
            if (!(q->tokens > 0)) c[15][0] = c[16][0] = c[17][0] = '\0';
            snprintf(c[18], 48, "%.6g", w->r.time.bubble_s);
            snprintf(c[19], 48, "%.6g", w->exposed_s);
            snprintf(c[23], 48, "%.6g", w->band.mape_pct);
            if (w->band.basis == EST_BAND_NONE) c[23][0] = '\0';
            launch_plan lc;
            emit_row_launch(&lc, w, q, fm->torchtitan_version, fm->nemo_format);
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
    emit_miss_csv_row mr[SEARCH_LEVERS_MAX + 1];
    int nmr = emit_miss_csv_rows(q, a, mr, SEARCH_LEVERS_MAX + 1);
    for (int i = 0; i < nmr; i++) {
        const search_figures *fg = mr[i].f;
        const space_layout *l = &fg->layout;
        char c[24][48];
        snprintf(c[0], 48, "%d", mr[i].rank);
        snprintf(c[1], 48, "%lld", (long long)fg->gpus);
        emit_csv_layout_cells(c, l, s->m.num_experts > 0);
        snprintf(c[10], 48, "%.6g", fg->iteration_s);
        snprintf(c[13], 48, "%.0f", fg->value[SEARCH_LIMIT_MEMORY]);
        snprintf(c[15], 48, "%.6g", fg->value[SEARCH_LIMIT_DEADLINE]);
        snprintf(c[16], 48, "%.6g", fg->value[SEARCH_LIMIT_GPU_HOURS]);
        snprintf(c[17], 48, "%.6g", fg->value[SEARCH_LIMIT_BUDGET_USD]);
        if (!(q->tokens > 0)) c[15][0] = c[16][0] = c[17][0] = '\0';
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
}

/* j as one JSON Lines record, then deleted. */
static void put_line(FILE *f, cJSON *j)
{
    char *line = cJSON_PrintUnformatted(j);
    fprintf(f, "%s\n", line);
    cJSON_free(line);
    cJSON_Delete(j);
}

void emit_search_jsonl(FILE *f, const search_setup *s,
                       const emit_search_form *fm, const search_answer *a,
                       const emit_row *rows, const emit_row *frows, int timing)
{
    const search_request *q = &s->q;
    for (int set = 0; set < 2; set++) {
        const emit_row *rs = set ? frows : rows;
        int n = set ? a->n_front : a->n_ranked;
        for (int i = 0; i < n; i++) {
            put_line(f, emit_json_version(emit_row_json(
                            &rs[i], q, set ? "pareto" : "ranked", i + 1,
                            fm->torchtitan_version, fm->nemo_format,
                            fm->launch_forms)));
        }
    }
    cJSON *j = emit_json_version(cJSON_CreateObject());
    cJSON_AddItemToObject(j, "stats", emit_stats_json(a, timing));
    if (a->miss) {
        cJSON *nm = cJSON_AddObjectToObject(j, "nearest_miss");
        emit_miss_json(nm, q, a);
    }
    put_line(f, j);
}
