/*
 * miss.c - a search that admitted nothing, told in figures (issue
 * 31 item 2): the nearest layout in dollars, GPU-hours, days or GiB
 * against each limit, the one that binds with its excess, and the levers
 * search_explain_miss checked (search/miss.c), as text, JSON and CSV
 * cells. It computes nothing of the search; it only words it.
 *
 * Two figures printed side by side (a need and its limit) are given as
 * many digits as it takes to tell them apart: "needs 120.834 GiB, 8 MiB
 * more than the 120.826 GiB allowed", never two equal numbers.
 */
#include "emit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* x with sig significant figures (at least the integer digits), trailing
 * zeros of the fraction dropped. */
static void fmt_sig(char *buf, size_t cap, double x, int sig)
{
    if (!isfinite(x) || fabs(x) >= 1e15) {
        snprintf(buf, cap, "%.*g", sig, x);
        return;
    }
    int digits = fabs(x) >= 1 ? (int)floor(log10(fabs(x))) + 1 : 1;
    int dec = sig > digits ? sig - digits : 0;
    snprintf(buf, cap, "%.*f", dec, x);
    if (strchr(buf, '.')) {
        size_t n = strlen(buf);
        while (n > 0 && buf[n - 1] == '0') buf[--n] = '\0';
        if (n > 0 && buf[n - 1] == '.') buf[--n] = '\0';
    }
}

/* An amount with an SI suffix (k, M, B, T: what --budget-usd and
 * --tokens read back), e.g. 1.66M. */
static void fmt_amount(char *buf, size_t cap, double v, int sig)
{
    static const struct { double mul; const char *suffix; } pre[] = {
        {1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "k"}};
    if (!isfinite(v)) {
        snprintf(buf, cap, "%g", v);
        return;
    }
    if (fabs(v) >= 1e15) {
        snprintf(buf, cap, "%.*g", sig, v);
        return;
    }
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        if (fabs(v) >= pre[i].mul) {
            char n[48];
            fmt_sig(n, sizeof n, v / pre[i].mul, sig);
            snprintf(buf, cap, "%s%s", n, pre[i].suffix);
            return;
        }
    if (fabs(v) > 0 && fabs(v) < 1e-3)
        snprintf(buf, cap, "%.*g", sig, v);
    else
        fmt_sig(buf, cap, v, sig);
}

/* A limit's figure in its unit, sig significant figures. */
static void fmt_limit(char *buf, size_t cap, search_limit k, double v, int sig)
{
    char n[40];
    switch (k) {
    case SEARCH_LIMIT_MEMORY:
        /* GiB with at least 2 decimals, as the tables print them */
        fmt_sig(n, sizeof n, v / 1073741824.0, sig < 3 ? 3 : sig);
        if (!strchr(n, '.') || strlen(strchr(n, '.')) < 3)
            snprintf(n, sizeof n, "%.2f", v / 1073741824.0);
        snprintf(buf, cap, "%s GiB", n);
        return;
    case SEARCH_LIMIT_BUDGET_USD:
        fmt_amount(n, sizeof n, v, sig);
        snprintf(buf, cap, "$%s", n);
        return;
    case SEARCH_LIMIT_GPU_HOURS:
        fmt_amount(n, sizeof n, v, sig);
        snprintf(buf, cap, "%s GPU-hours", n);
        return;
    case SEARCH_LIMIT_DEADLINE:
        if (v >= 2 * 86400 || v == 0) {
            fmt_sig(n, sizeof n, v / 86400, sig);
            snprintf(buf, cap, "%s days", n);
        } else if (v >= 2 * 3600) {
            fmt_sig(n, sizeof n, v / 3600, sig);
            snprintf(buf, cap, "%s hours", n);
        } else if (v >= 2 * 60) {
            fmt_sig(n, sizeof n, v / 60, sig);
            snprintf(buf, cap, "%s minutes", n);
        } else {
            fmt_amount(n, sizeof n, v, sig);
            snprintf(buf, cap, "%s s", n);
        }
        return;
    default:
        snprintf(buf, cap, "%g", v);
    }
}

/* A need and its limit, with as many figures as tell them apart. */
static void fmt_pair(search_limit k, double v, double lim, char *bv,
                     char *bl, size_t cap)
{
    for (int sig = 3; sig <= 12; sig++) {
        fmt_limit(bv, cap, k, v, sig);
        fmt_limit(bl, cap, k, lim, sig);
        if (v == lim || strcmp(bv, bl) != 0) return;
    }
}

/* The excess of v over lim: in the unit (memory below a GiB in MiB), and
 * as a share of the limit, or a multiple of it from 100 x up. */
static void fmt_excess(char *buf, size_t cap, search_limit k, double v,
                       double lim)
{
    char d[96];
    double x = v - lim;
    if (k == SEARCH_LIMIT_MEMORY && x < 1073741824.0) {
        char n[48];
        fmt_sig(n, sizeof n, x / 1048576.0, 3);
        snprintf(d, sizeof d, "%s MiB", n);
    } else {
        fmt_limit(d, sizeof d, k, x, 3);
    }
    double ratio = v / lim;
    if (!isfinite(ratio) || ratio >= SEARCH_RATIO_MAX)
        snprintf(buf, cap, "%s (more than 1e+300 x)", d);
    else if (ratio >= 100)
        snprintf(buf, cap, "%s (%.3g x)", d, ratio);
    else {
        char p[48];
        fmt_sig(p, sizeof p, 100 * x / lim, 3);
        snprintf(buf, cap, "%s (%s %%)", d, p);
    }
}

/* One limit's status at f: "costs $1.66M, $159k (10.6 %) over the $1.5M
 * budget", or within it. */
static void limit_phrase(char *buf, size_t cap, search_limit k,
                         const search_figures *f)
{
    double v = f->value[k], lim = f->limit[k];
    char bv[96], bl[96], bx[160];
    fmt_pair(k, v, lim, bv, bl, sizeof bv);
    int over = v > lim;
    if (over) fmt_excess(bx, sizeof bx, k, v, lim);
    switch (k) {
    case SEARCH_LIMIT_MEMORY:
        if (over)
            snprintf(buf, cap, "needs %s, %s more than the %s allowed", bv, bx,
                     bl);
        else
            snprintf(buf, cap, "needs %s, within the %s allowed", bv, bl);
        return;
    case SEARCH_LIMIT_BUDGET_USD:
        if (over)
            snprintf(buf, cap, "costs %s, %s over the %s budget", bv, bx, bl);
        else
            snprintf(buf, cap, "costs %s, within the %s budget", bv, bl);
        return;
    case SEARCH_LIMIT_GPU_HOURS:
        if (over)
            snprintf(buf, cap, "takes %s, %s over the budget of %s", bv, bx,
                     bl);
        else
            snprintf(buf, cap, "takes %s, within the budget of %s", bv, bl);
        return;
    case SEARCH_LIMIT_DEADLINE:
        if (over)
            snprintf(buf, cap, "trains in %s, %s past the deadline of %s", bv,
                     bx, bl);
        else
            snprintf(buf, cap, "trains in %s, within the deadline of %s", bv,
                     bl);
        return;
    default:
        buf[0] = '\0';
    }
}

/* The limits the report speaks of: memory where it binds, else the
 * budgets and deadline the request sets. */
static int limit_shown(const search_miss_report *r, int k)
{
    if (r->binding == SEARCH_LIMIT_MEMORY) return k == SEARCH_LIMIT_MEMORY;
    return k != SEARCH_LIMIT_MEMORY && r->nearest.limit[k] > 0;
}

/* What the nearest layout is the nearest by. */
static const char *nearest_words(const search_miss_report *r)
{
    int n = 0;
    for (int k = 0; k < SEARCH_LIMIT_COUNT; k++) n += limit_shown(r, k);
    if (r->binding == SEARCH_LIMIT_MEMORY) return "the layout nearest to fitting";
    if (n > 1) return "the layout least over its tightest limit";
    switch (r->binding) {
    case SEARCH_LIMIT_BUDGET_USD: return "the cheapest layout";
    case SEARCH_LIMIT_GPU_HOURS: return "the layout of the fewest GPU-hours";
    default: return "the fastest layout";
    }
}

void emit_miss_lever_option(const search_request *q, const search_lever *lv,
                           char *buf, size_t cap)
{
    char n[64];
    switch (lv->kind) {
    case SEARCH_LEVER_PRECISION: {
        size_t len = (size_t)snprintf(buf, cap, "--precision %s",
                                      hw_dtype_names[(int)lv->value]);
        int all = 1;
        for (int i = 0; i < q->n_systems && i < 32; i++)
            all &= (lv->systems >> i) & 1u;
        if (!all) {
            const char *sep = " --system ";
            for (int i = 0; i < q->n_systems && i < 32 && len < cap; i++)
                if ((lv->systems >> i) & 1u) {
                    len += (size_t)snprintf(buf + len, cap - len, "%s%s", sep,
                                            q->systems[i].ctx.sys->name);
                    sep = ",";
                }
        }
        return;
    }
    case SEARCH_LEVER_GPUS:
        snprintf(buf, cap, "--gpus %.0f", lv->value);
        return;
    case SEARCH_LEVER_RECOMPUTE:
        snprintf(buf, cap, "--fix recompute=%s",
                 space_recompute_names[(int)lv->value]);
        return;
    case SEARCH_LEVER_SAVERS:
        snprintf(buf, cap, "without --no-memory-savers");
        return;
    case SEARCH_LEVER_TOKENS:
        fmt_amount(n, sizeof n, lv->value, 12);
        snprintf(buf, cap, "--tokens %s", n);
        return;
    case SEARCH_LEVER_PRICE:
        fmt_sig(n, sizeof n, lv->value, 3); /* >= a cent (miss.c) */
        snprintf(buf, cap, "--price %s", n);
        return;
    default:
        buf[0] = '\0';
    }
}

/* A lever's #1 in short figures: "$1.02M, 6.87 days" or "148.2 GiB of
 * 163.38 GiB". */
static void lever_figures(char *buf, size_t cap, const search_miss_report *r,
                          const search_figures *f)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < SEARCH_LIMIT_COUNT && len < cap; k++) {
        if (!limit_shown(r, k)) continue;
        char bv[96], bl[96];
        fmt_pair((search_limit)k, f->value[k], f->limit[k], bv, bl, sizeof bv);
        if (k == SEARCH_LIMIT_MEMORY)
            len += (size_t)snprintf(buf + len, cap - len, "%speak %s of %s",
                                    len ? ", " : "", bv, bl);
        else
            len += (size_t)snprintf(buf + len, cap - len, "%s%s",
                                    len ? ", " : "", bv);
    }
}

static void figures_tag(const search_request *q, const search_figures *f,
                        char *tag, size_t cap)
{
    space_layout_tag(&f->layout, q->systems[f->sys].ctx.sys->gpus_per_node,
                     tag, cap);
}

void emit_miss_print(FILE *f, const search_request *q, const search_answer *a)
{
    const search_miss_report *r = a->miss;
    if (!r) return;
    const search_figures *nf = &r->nearest;
    char tag[96], ph[400];
    figures_tag(q, nf, tag, sizeof tag);
    fprintf(f, "nearest miss (%s binds): %s, %s on %s (%lld GPU%s",
            search_limit_names[r->binding], nearest_words(r), tag,
            q->systems[nf->sys].ctx.sys->name, (long long)nf->gpus,
            nf->gpus == 1 ? "" : "s");
    if (r->binding != SEARCH_LIMIT_MEMORY)
        fprintf(f, ", %.4g s an iteration", nf->iteration_s);
    fprintf(f, "):\n");
    for (int k = 0; k < SEARCH_LIMIT_COUNT; k++) {
        if (!limit_shown(r, k)) continue;
        limit_phrase(ph, sizeof ph, (search_limit)k, nf);
        fprintf(f, "  %s: %s%s\n", search_limit_names[k], ph,
                k == (int)r->binding ? " (binds)" : "");
    }
    if (r->memory_fits && a->near_memory.have)
        fprintf(f, "  memory: not what binds (layouts fit it)\n");
    if (r->n_levers == 0) {
        fprintf(f, "no lever fits on its own (%d searches:", r->searches);
        const char *sep = " ";
        for (int k = 0; k < SEARCH_LEVER_COUNT; k++)
            if ((r->tried >> k) & 1u) {
                fprintf(f, "%s%s", sep, search_lever_names[k]);
                if (k == SEARCH_LEVER_GPUS)
                    fprintf(f, " beyond %lld-%lld", (long long)q->gpus[0],
                            (long long)q->gpus[q->n_gpus - 1]);
                sep = ", ";
            }
        fprintf(f, "%s)\n", r->tried ? "" : " none applies");
        return;
    }
    fprintf(f, "levers that fit, each checked by a search with it (its #1):\n");
    for (int i = 0; i < r->n_levers; i++) {
        const search_lever *lv = &r->levers[i];
        char opt[200], fig[200];
        emit_miss_lever_option(q, lv, opt, sizeof opt);
        lever_figures(fig, sizeof fig, r, &lv->best);
        figures_tag(q, &lv->best, tag, sizeof tag);
        fprintf(f, "  %s%s: %s, fits (%s on %s, %lld GPU%s)\n", opt,
                lv->kind == SEARCH_LEVER_GPUS
                    ? " (in place of the counts searched)"
                    : "",
                fig, tag,
                q->systems[lv->best.sys].ctx.sys->name,
                (long long)lv->best.gpus, lv->best.gpus == 1 ? "" : "s");
    }
}

void emit_miss_line(const search_request *q, const search_answer *a,
                   char *buf, size_t cap)
{
    const search_miss_report *r = a->miss;
    buf[0] = '\0';
    if (!r) return;
    char tag[96], ph[400];
    figures_tag(q, &r->nearest, tag, sizeof tag);
    limit_phrase(ph, sizeof ph, r->binding, &r->nearest);
    size_t len = (size_t)snprintf(buf, cap, "%s (%s on %s) %s", nearest_words(r),
                                  tag,
                                  q->systems[r->nearest.sys].ctx.sys->name, ph);
    for (int i = 0; i < r->n_levers && len < cap; i++) {
        char opt[200], fig[200];
        emit_miss_lever_option(q, &r->levers[i], opt, sizeof opt);
        lever_figures(fig, sizeof fig, r, &r->levers[i].best);
        len += (size_t)snprintf(buf + len, cap - len, "%s%s (%s)",
                                i ? ", " : "; fits with ", opt, fig);
    }
}

/* {"value", "limit", "excess", "met"} of limit k at f. */
static cJSON *limit_json(search_limit k, const search_figures *f)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "unit", search_limit_units[k]);
    cJSON_AddNumberToObject(j, "value", f->value[k]);
    cJSON_AddNumberToObject(j, "limit", f->limit[k]);
    cJSON_AddNumberToObject(j, "excess", f->value[k] - f->limit[k]);
    cJSON_AddBoolToObject(j, "met", !(f->value[k] > f->limit[k]));
    return j;
}

static cJSON *figures_json(const search_request *q,
                           const search_miss_report *r,
                           const search_figures *f)
{
    char tag[96];
    figures_tag(q, f, tag, sizeof tag);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "layout", tag);
    cJSON_AddStringToObject(j, "system", q->systems[f->sys].ctx.sys->name);
    cJSON_AddNumberToObject(j, "gpus", (double)f->gpus);
    cJSON_AddNumberToObject(j, "iteration_time_s", f->iteration_s);
    cJSON *lim = cJSON_AddObjectToObject(j, "limits");
    for (int k = 0; k < SEARCH_LIMIT_COUNT; k++)
        if (limit_shown(r, k))
            cJSON_AddItemToObject(lim, search_limit_names[k],
                                  limit_json((search_limit)k, f));
    return j;
}

void emit_miss_json(cJSON *nm, const search_request *q, const search_answer *a)
{
    const search_miss_report *r = a->miss;
    if (!r) return;
    cJSON_AddStringToObject(nm, "binding", search_limit_names[r->binding]);
    cJSON_AddBoolToObject(nm, "memory_fits", r->memory_fits);
    cJSON_AddItemToObject(nm, "nearest", figures_json(q, r, &r->nearest));
    cJSON *ls = cJSON_AddArrayToObject(nm, "levers");
    for (int i = 0; i < r->n_levers; i++) {
        const search_lever *lv = &r->levers[i];
        char opt[200];
        emit_miss_lever_option(q, lv, opt, sizeof opt);
        cJSON *o = figures_json(q, r, &lv->best);
        cJSON_AddStringToObject(o, "lever", search_lever_names[lv->kind]);
        cJSON_AddStringToObject(o, "option", opt);
        if (lv->kind == SEARCH_LEVER_PRECISION)
            cJSON_AddStringToObject(o, "value", hw_dtype_names[(int)lv->value]);
        else if (lv->kind == SEARCH_LEVER_RECOMPUTE)
            cJSON_AddStringToObject(o, "value",
                                    space_recompute_names[(int)lv->value]);
        else if (lv->kind == SEARCH_LEVER_SAVERS)
            cJSON_AddStringToObject(o, "value",
                                    search_saver_names[(int)lv->value]);
        else
            cJSON_AddNumberToObject(o, "value", lv->value);
        cJSON_AddItemToArray(ls, o);
    }
    cJSON_AddNumberToObject(nm, "lever_searches", r->searches);
    cJSON *tr = cJSON_AddArrayToObject(nm, "levers_tried");
    for (int k = 0; k < SEARCH_LEVER_COUNT; k++)
        if ((r->tried >> k) & 1u)
            cJSON_AddItemToArray(tr, cJSON_CreateString(search_lever_names[k]));
}

int emit_miss_csv_rows(const search_request *q, const search_answer *a,
                      emit_miss_csv_row *rows, int cap)
{
    const search_miss_report *r = a->miss;
    if (!r || cap < 1) return 0;
    int n = 0;
    for (int i = -1; i < r->n_levers && n < cap; i++) {
        const search_figures *f = i < 0 ? &r->nearest : &r->levers[i].best;
        emit_miss_csv_row *w = &rows[n++];
        memset(w, 0, sizeof *w);
        w->set = i < 0 ? "nearest_miss" : "lever";
        w->rank = i < 0 ? 1 : i + 1;
        w->f = f;
        figures_tag(q, f, w->tag, sizeof w->tag);
        w->system = q->systems[f->sys].ctx.sys->name;
        w->binding = search_limit_names[r->binding];
        w->limit = r->nearest.limit[r->binding];
        w->excess = f->value[r->binding] - f->limit[r->binding];
        if (i >= 0) emit_miss_lever_option(q, &r->levers[i], w->lever,
                                          sizeof w->lever);
    }
    return n;
}
