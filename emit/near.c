/*
 * near.c - `search --near` in words and JSON (emit_rows.h): the user's
 * job as estimated (search/near.c) beside the search's best, the time and
 * GPU-hours the best saves, what changes in the layout and, for a
 * Megatron-LM job, in its flags (launch_megatron_diff); with the run's
 * log, the log against the job's estimate.
 */
#include "emit_rows.h"
#include "report.h"

#include <stdio.h>
#include <string.h>

/* The launch of the job as estimated, to diff against the best's. */
static void job_launch(launch_plan *c, const search_own *n,
                       const search_request *q)
{
    memset(c, 0, sizeof *c);
    c->layout = &n->r.layout;
    c->model = q->model;
    c->system = q->systems[0].ctx.sys->name;
    c->gpus_per_node = q->systems[0].ctx.sys->gpus_per_node;
    c->gpu_arch = q->systems[0].ctx.gpu->arch;
    c->tokens = q->tokens;
    c->iteration_s = n->r.iteration_s;
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

/* The job, its estimate, and the best against it. */
static void job_print(FILE *f, const search_own *n, const emit_row *best,
                      const search_request *q)
{
    const est_result *r = &n->r;
    fprintf(f, "\nyour job (%s): %s", n->file, n->tag);
    if (!r->feasible) {
        fprintf(f, ": %s (%s)\n", est_reason_names[r->reason], r->message);
    } else {
        fprintf(f, ", %.4f s an iteration, MFU %.1f %%, %.2f GiB\n",
                r->iteration_s, 100 * r->mfu, r->mem.total / 1073741824.0);
    }
    if (!best) return;
    search_own_gain g;
    search_own_gain_of(n, &best->r, q, &g);
    if (r->feasible && strcmp(best->tag, n->tag) == 0) {
        fprintf(f, "the search's best is your job's layout\n");
        return;
    }
    fprintf(f, "the search's best: %s, %.4f s an iteration", best->tag,
            best->r.iteration_s);
    if (r->feasible && g.time_s > 0) {
        fprintf(f, ", %.1f %% less time", 100 * g.time_s / r->iteration_s);
        if (q->tokens > 0)
            fprintf(f, " (%.0f GPU-hours, $%.0f less for %.3g tokens)",
                    g.gpu_hours,
                    g.gpu_hours * best->sys->price_usd_per_gpu_hour,
                    q->tokens);
    } else if (r->feasible) {
        fprintf(f, " (no faster than yours: ranked by %s)",
                search_objective_names[q->objective]);
    }
    launch_text lt = {0};
    layout_diff(&n->r.layout, &best->r.layout, &lt);
    fprintf(f, "\nwhat changes (layout):\n");
    emit_print_indented(f, lt.n ? launch_text_str(&lt) : "(none)");
    launch_text_free(&lt);
    if (!n->megatron) return; /* the launch follows */
    fprintf(f, "what changes (Megatron-LM flags):\n");
    launch_plan from, to;
    job_launch(&from, n, q);
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

static cJSON *job_json(const search_own *n, const emit_row *best,
                       const search_request *q)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "file", n->file);
    cJSON_AddStringToObject(j, "layout", n->tag);
    cJSON_AddBoolToObject(j, "feasible", n->r.feasible);
    cJSON_AddStringToObject(j, "reason", est_reason_names[n->r.reason]);
    cJSON_AddNumberToObject(j, "iteration_time_s", n->r.iteration_s);
    cJSON_AddNumberToObject(j, "peak_memory_bytes", n->r.mem.total);
    if (best) {
        cJSON_AddStringToObject(j, "best_layout", best->tag);
        cJSON_AddNumberToObject(j, "best_iteration_time_s",
                                best->r.iteration_s);
        launch_plan from, to;
        job_launch(&from, n, q);
        emit_row_launch(&to, best, q, 0, 0);
        launch_text t = {0};
        launch_megatron_diff(&from, &to, &t);
        launch_text lt = {0};
        layout_diff(&n->r.layout, &best->r.layout, &lt);
        add_lines(j, "layout_changes", &lt);
        launch_text_free(&lt);
        add_lines(j, "megatron_changes", &t);
        launch_text_free(&t);
    } else {
        cJSON_AddNullToObject(j, "best_layout");
    }
    return j;
}


void emit_near_text(FILE *f, const search_own *n, const emit_row *best,
                    const search_request *q, const est_run_fed *fed,
                    const char *log_path)
{
    job_print(f, n, best, q);
    if (!fed) return;
    est_band jb;
    est_error_band(q->systems[0].ctx.gpu, &n->m, &n->r.layout, n->gpus, &jb);
    emit_fed_print(f, fed, log_path, &jb);
    if (fed->calibrated > 0)
        fprintf(f, "every layout above was estimated at that calibrated "
                   "kernel efficiency\n");
}

void emit_near_json(cJSON *j, const search_own *n, const emit_row *best,
                    const search_request *q, const est_run_fed *fed,
                    const char *log_path)
{
    cJSON_AddItemToObject(j, "near", job_json(n, best, q));
    if (fed) emit_fed_json(j, fed, log_path);
}
