/*
 * train_log.c - a training run's own log read back: the iteration time
 * and the peak memory the frameworks print, for estimate --log and
 * search --log (issue 31: your own run fed back).
 *
 * What each framework prints, as its code writes it:
 * - Megatron-LM and Megatron-Bridge (NVIDIA/Megatron-LM@d98e8a64dd
 *   megatron/training/training.py training_log): one line per log
 *   interval with " elapsed time per iteration (ms): 1234.5 |", the
 *   interval's wall time over its iterations; with --log-throughput also
 *   " throughput per GPU (TFLOP/s/GPU): 412.3 |". report_memory
 *   (megatron/training/utils/common_utils.py) prints, on each rank that
 *   is data-parallel rank 0, "[Rank R] (after N iterations) memory (MB) |
 *   allocated: A | max allocated: B | reserved: C | max reserved: D", MB
 *   being 2^20 bytes; its timers (--timing-log-level) print
 *   "    forward-backward ....: (min, max)" and "optimizer" in ms.
 * - NeMo 2 (Lightning's progress line): "train_step_timing in s: 1.234".
 * - torchtitan (torchtitan/components/metrics.py MetricsProcessor.log):
 *   "step: 10  loss: ...  memory: 35.67GiB(45.12%)  tps: 2,345  ...",
 *   memory the peak reserved since the last log in GiB (2^30), tps the
 *   tokens of one data-parallel rank's batches over the interval over the
 *   interval times the GPUs per data-parallel rank: the job's tokens per
 *   second per GPU, so an iteration is global batch x sequence / (tps x
 *   GPUs).
 *
 * The first values logged include start-up (compilation, the allocator
 * growing, NCCL's first calls): the first two are dropped where there are
 * five or more, the first where there are two or more, and the median of
 * the rest is the run's. Memory is the largest of every line: the
 * busiest rank, the run's peak.
 */
#include "cli.h"
#include "est.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const cli_log_kind_names[CLI_LOG_KIND_COUNT] = {
    [CLI_LOG_NONE] = "none",
    [CLI_LOG_MEGATRON] = "Megatron-LM / Megatron-Bridge",
    [CLI_LOG_NEMO] = "NeMo 2",
    [CLI_LOG_TORCHTITAN] = "torchtitan",
};
_Static_assert(sizeof cli_log_kind_names / sizeof cli_log_kind_names[0]
                   == CLI_LOG_KIND_COUNT,
               "a name per log kind");

/* Largest log read (a long run's stdout). */
#define LOG_MAX_BYTES ((size_t)256 << 20)

/* The number after `key` in line (commas as thousands separators
 * skipped), or NAN when key is absent or no number follows. */
static double after(const char *line, const char *key)
{
    const char *p = strstr(line, key);
    if (!p) return NAN;
    p += strlen(key);
    while (*p == ' ' || *p == '\t' || *p == ':' || *p == '=') p++;
    char num[64];
    size_t n = 0;
    for (; *p && n + 1 < sizeof num; p++) {
        if (*p == ',' && isdigit((unsigned char)p[1])) continue;
        if (!(isdigit((unsigned char)*p) || *p == '.' || *p == '-'
              || *p == '+' || *p == 'e' || *p == 'E'))
            break;
        num[n++] = *p;
    }
    num[n] = '\0';
    char *end;
    double v = strtod(num, &end);
    return n && end != num && isfinite(v) ? v : NAN;
}

/* A Megatron timer line (megatron/core/timers.py Timers._get_all_ranks_
 * time_string): "    NAME ....: (min, max)" (--timing-log-option
 * minmax, the default) or "    NAME ....: max" (max): its max in ms, per
 * iteration (training_log normalises by the interval's iterations). */
static double timer_max(const char *line, const char *name)
{
    const char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    size_t k = strlen(name);
    if (strncmp(p, name, k) != 0 || (p[k] != ' ' && p[k] != '.')) return NAN;
    p = strchr(p + k, ':');
    if (!p) return NAN;
    const char *o = strchr(p, '(');
    if (!o) return after(p, ":");
    const char *c = strchr(o, ',');
    return c ? after(c, ",") : NAN;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[n] after the warm-up values (sorts a copy in place). */
static double steady(double *v, int n, int *used)
{
    int skip = n >= 5 ? 2 : n >= 2 ? 1 : 0;
    *used = n - skip;
    if (*used <= 0) return NAN;
    double *w = v + skip;
    qsort(w, (size_t)*used, sizeof *w, cmp_double);
    int m = *used;
    return m % 2 ? w[m / 2] : (w[m / 2 - 1] + w[m / 2]) / 2;
}

int cli_train_log_read(const char *path, cli_train_log *out, tp_err *e)
{
    memset(out, 0, sizeof *out);
    out->fwd_bwd_s = out->optimizer_s = NAN;
    char *buf;
    size_t len;
    int rc = tp_read_file(path, LOG_MAX_BYTES, &buf, &len, e);
    if (rc) return rc;
    int cap = 1024, n = 0, nfb = 0, nop = 0;
    double *it = tp_xmalloc((size_t)cap * sizeof *it);
    double *fb = tp_xmalloc((size_t)cap * sizeof *fb);
    double *op = tp_xmalloc((size_t)cap * sizeof *op);
    int kinds[CLI_LOG_KIND_COUNT] = {0};
    for (char *line = buf; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        double v = NAN, t;
        int kind = CLI_LOG_NONE;
        if (!isnan(t = after(line, "elapsed time per iteration (ms)"))) {
            kind = CLI_LOG_MEGATRON, v = t / 1e3;
        } else if (!isnan(t = after(line, "train_step_timing in s"))) {
            kind = CLI_LOG_NEMO, v = t;
        } else if (strstr(line, "step:") && !isnan(t = after(line, "tps:"))) {
            kind = CLI_LOG_TORCHTITAN, v = t;
            double g = after(line, "memory:");
            if (!isnan(g) && g * 1073741824.0 > out->max_reserved_bytes)
                out->max_reserved_bytes = g * 1073741824.0;
        }
        if (strstr(line, "memory (MB)")) {
            double a = after(line, "| max allocated"),
                   r = after(line, "| max reserved");
            if (!isnan(a) && a * 1048576.0 > out->max_allocated_bytes)
                out->max_allocated_bytes = a * 1048576.0;
            if (!isnan(r) && r * 1048576.0 > out->max_reserved_bytes)
                out->max_reserved_bytes = r * 1048576.0;
            if (!isnan(a) || !isnan(r)) out->memory_lines++;
        }
        if (!isnan(t = timer_max(line, "forward-backward")) && t > 0) {
            if (nfb == cap) nfb--; /* keep the latest */
            fb[nfb++] = t / 1e3;
        } else if (!isnan(t = timer_max(line, "optimizer")) && t >= 0) {
            if (nop == cap) nop--;
            op[nop++] = t / 1e3;
        }
        if (kind != CLI_LOG_NONE && v > 0) {
            kinds[kind]++;
            if (n == cap) {
                cap *= 2;
                it = tp_xrealloc(it, (size_t)cap * sizeof *it);
                fb = tp_xrealloc(fb, (size_t)cap * sizeof *fb);
                op = tp_xrealloc(op, (size_t)cap * sizeof *op);
            }
            it[n++] = v;
        }
        line = nl ? nl + 1 : NULL;
    }
    free(buf);
    int best = CLI_LOG_NONE;
    for (int k = 1; k < CLI_LOG_KIND_COUNT; k++)
        if (kinds[k] > kinds[best]) best = k;
    if (best != CLI_LOG_NONE && kinds[best] != n) {
        /* lines of two frameworks: keep the most common kind's only by
         * refusing (a log is one run) */
        free(it), free(fb), free(op);
        return tp_errf(e, TP_EDATA,
                       "%s: iteration lines of more than one framework "
                       "(%d %s, %d of others): one run's log is expected",
                       path, kinds[best], cli_log_kind_names[best],
                       n - kinds[best]);
    }
    if (n == 0) {
        free(it), free(fb), free(op);
        return tp_errf(e, TP_EDATA,
                       "%s: no iteration time found: expected Megatron-LM's "
                       "'elapsed time per iteration (ms): X', NeMo 2's "
                       "'train_step_timing in s: X' or torchtitan's 'step: "
                       "N ... tps: X' lines",
                       path);
    }
    out->kind = best;
    out->lines = n;
    double m = steady(it, n, &out->used);
    if (best == CLI_LOG_TORCHTITAN) out->tps_per_gpu = m;
    else out->iteration_s = m;
    int u;
    if (nfb) out->fwd_bwd_s = steady(fb, nfb, &u);
    if (nop) out->optimizer_s = steady(op, nop, &u);
    free(it), free(fb), free(op);
    return TP_OK;
}

/* ---- your own run fed back (--log, --calibrate-to-log) ---------------- */

static double pct(double est, double meas)
{
    return meas > 0 ? 100 * (est / meas - 1) : NAN;
}

/* The iteration time of r's layout at kernel efficiency k. */
static double time_at(const est_ctx *c, const space_model *m,
                      const est_result *r, double k)
{
    est_ctx ck = *c;
    ck.kernel_eff = k;
    ck.trace = NULL;
    est_result x;
    est_estimate(&ck, m, &r->layout, &x);
    return x.iteration_s;
}

/* cli_fed_back: the log's figures beside r's, and with calibrate the kernel
 * efficiency at which r's layout takes the run's time: the operator times
 * all scale by it, communication and the bubble's share follow from the
 * schedule, so the time falls monotonically with it; found by bisection
 * on (0, 1] to 1e-6. */
void cli_fed_back(cli_run_fed *f, const cli_train_log *lg, const est_ctx *c,
                     const space_model *m, const est_result *r, int calibrate)
{
    memset(f, 0, sizeof *f);
    f->log = lg;
    f->measured_s = lg->kind == CLI_LOG_TORCHTITAN
                        ? (lg->tps_per_gpu > 0 && r->gpus > 0
                               ? (double)r->layout.gbs * (double)r->layout.seq
                                     / (lg->tps_per_gpu * (double)r->gpus)
                               : 0)
                        : lg->iteration_s;
    f->estimated_s = r->iteration_s;
    f->est_optimizer_s = r->time.optimizer_s;
    f->est_fwd_bwd_s = r->iteration_s - r->time.optimizer_s;
    f->est_allocated = r->mem.allocated;
    f->est_reserved = r->mem.seen_reserved > 0 ? r->mem.seen_reserved
                                               : r->mem.reserved;
    f->eff0 = est_kernel_eff(c, &r->layout);
    if (!calibrate || !(f->measured_s > 0) || !(r->iteration_s > 0)) return;
    if (time_at(c, m, r, 1) > f->measured_s) {
        f->calibrated = -1;
        return;
    }
    double lo = 1e-3, hi = 1;
    for (int i = 0; i < 60 && hi - lo > 1e-6; i++) {
        double mid = (lo + hi) / 2;
        if (time_at(c, m, r, mid) > f->measured_s) lo = mid;
        else hi = mid;
    }
    f->eff = hi;
    f->calibrated_s = time_at(c, m, r, hi);
    f->calibrated = 1;
}

void cli_fed_print(FILE *out, const cli_run_fed *f, const char *path,
                      const est_band *band)
{
    const cli_train_log *lg = f->log;
    double gib = 1073741824.0;
    fprintf(out, "\nyour run (%s, a %s log: %d iteration line%s, the median "
                 "of the last %d):\n",
            path, cli_log_kind_names[lg->kind], lg->lines,
            lg->lines == 1 ? "" : "s", lg->used);
    if (lg->kind == CLI_LOG_TORCHTITAN)
        fprintf(out, "  tokens/s per GPU  measured %.0f (tps), estimated %.0f\n",
                lg->tps_per_gpu,
                f->estimated_s > 0 ? f->measured_s * lg->tps_per_gpu
                                         / f->estimated_s : 0);
    fprintf(out, "  iteration         measured %.4f s, estimated %.4f s: "
                 "%+.1f %%",
            f->measured_s, f->estimated_s, pct(f->estimated_s, f->measured_s));
    if (band->basis != EST_BAND_NONE)
        fprintf(out, " (%s the error band, +/-%.1f %%)",
                fabs(pct(f->estimated_s, f->measured_s)) <= band->mape_pct
                    ? "within" : "outside",
                band->mape_pct);
    fputc('\n', out);
    if (!isnan(lg->fwd_bwd_s))
        fprintf(out, "  forward-backward  measured %.4f s, estimated %.4f s: "
                     "%+.1f %% (Megatron's timer)\n",
                lg->fwd_bwd_s, f->est_fwd_bwd_s,
                pct(f->est_fwd_bwd_s, lg->fwd_bwd_s));
    if (!isnan(lg->optimizer_s))
        fprintf(out, "  optimizer         measured %.4f s, estimated %.4f s: "
                     "%+.1f %% (Megatron's timer)\n",
                lg->optimizer_s, f->est_optimizer_s,
                pct(f->est_optimizer_s, lg->optimizer_s));
    if (lg->max_allocated_bytes > 0)
        fprintf(out, "  max allocated     measured %.2f GiB (the largest of "
                     "%d memory lines), estimated %.2f GiB (busiest GPU): "
                     "%+.1f %%\n",
                lg->max_allocated_bytes / gib, lg->memory_lines,
                f->est_allocated / gib,
                pct(f->est_allocated, lg->max_allocated_bytes));
    if (lg->max_reserved_bytes > 0)
        fprintf(out, "  max reserved      measured %.2f GiB, estimated %.2f "
                     "GiB: %+.1f %%\n",
                lg->max_reserved_bytes / gib, f->est_reserved / gib,
                pct(f->est_reserved, lg->max_reserved_bytes));
    if (f->calibrated > 0)
        emit_wrapf(out, 2, "calibrated to your run: an in-training kernel "
                          "efficiency of %.4f instead of %.4f (every operator "
                          "time x %.4f; communication and the bubble as the "
                          "schedule makes them) gives %.4f s; use it only for "
                          "jobs of this stack on this system",
                  f->eff, f->eff0, f->eff0 / f->eff, f->calibrated_s);
    else if (f->calibrated < 0)
        emit_wrapf(out, 2, "not calibrated: your run is faster than the "
                          "estimate at a kernel efficiency of 1 (every kernel "
                          "as fast as alone): a mechanism the estimator lacks, "
                          "or a log of another job");
}

void cli_fed_json(cJSON *j, const cli_run_fed *f, const char *path)
{
    const cli_train_log *lg = f->log;
    cJSON *x = cJSON_AddObjectToObject(j, "measured");
    cJSON_AddStringToObject(x, "log", path);
    cJSON_AddStringToObject(x, "framework", cli_log_kind_names[lg->kind]);
    cJSON_AddNumberToObject(x, "iteration_lines", lg->lines);
    cJSON_AddNumberToObject(x, "iterations_used", lg->used);
    cJSON_AddNumberToObject(x, "iteration_time_s", f->measured_s);
    cJSON_AddNumberToObject(x, "error_pct", pct(f->estimated_s, f->measured_s));
    if (lg->kind == CLI_LOG_TORCHTITAN)
        cJSON_AddNumberToObject(x, "tokens_per_s_per_gpu", lg->tps_per_gpu);
    else
        cJSON_AddNullToObject(x, "tokens_per_s_per_gpu");
#define NUM_OR_NULL(key, v, ok)                                              \
    do {                                                                     \
        if (ok) cJSON_AddNumberToObject(x, key, v);                          \
        else cJSON_AddNullToObject(x, key);                                  \
    } while (0)
    NUM_OR_NULL("forward_backward_s", lg->fwd_bwd_s, !isnan(lg->fwd_bwd_s));
    NUM_OR_NULL("optimizer_s", lg->optimizer_s, !isnan(lg->optimizer_s));
    NUM_OR_NULL("max_allocated_bytes", lg->max_allocated_bytes,
                lg->max_allocated_bytes > 0);
    NUM_OR_NULL("max_reserved_bytes", lg->max_reserved_bytes,
                lg->max_reserved_bytes > 0);
#undef NUM_OR_NULL
    cJSON_AddNumberToObject(x, "estimated_allocated_bytes", f->est_allocated);
    cJSON_AddNumberToObject(x, "estimated_reserved_bytes", f->est_reserved);
    if (f->calibrated > 0) {
        cJSON *k = cJSON_AddObjectToObject(x, "calibration");
        cJSON_AddNumberToObject(k, "kernel_efficiency", f->eff);
        cJSON_AddNumberToObject(k, "default_kernel_efficiency", f->eff0);
        cJSON_AddNumberToObject(k, "iteration_time_s", f->calibrated_s);
    } else {
        cJSON_AddNullToObject(x, "calibration");
    }
}

