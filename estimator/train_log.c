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
 *
 * Also here: the log beside the estimate of its job, and the kernel
 * efficiency that makes the estimate take the run's time (est_fed_back).
 * The comparison in words and JSON is emit/train_log.c's.
 */
#include "est.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const est_log_kind_names[EST_LOG_KIND_COUNT] = {
    [EST_LOG_NONE] = "none",
    [EST_LOG_MEGATRON] = "Megatron-LM / Megatron-Bridge",
    [EST_LOG_NEMO] = "NeMo 2",
    [EST_LOG_TORCHTITAN] = "torchtitan",
};
_Static_assert(sizeof est_log_kind_names / sizeof est_log_kind_names[0]
                   == EST_LOG_KIND_COUNT,
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

int est_train_log_read(const char *path, est_train_log *out, tp_err *e)
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
    int kinds[EST_LOG_KIND_COUNT] = {0};
    for (char *line = buf; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        double v = NAN, t;
        int kind = EST_LOG_NONE;
        if (!isnan(t = after(line, "elapsed time per iteration (ms)"))) {
            kind = EST_LOG_MEGATRON, v = t / 1e3;
        } else if (!isnan(t = after(line, "train_step_timing in s"))) {
            kind = EST_LOG_NEMO, v = t;
        } else if (strstr(line, "step:") && !isnan(t = after(line, "tps:"))) {
            kind = EST_LOG_TORCHTITAN, v = t;
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
        if (kind != EST_LOG_NONE && v > 0) {
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
    int best = EST_LOG_NONE;
    for (int k = 1; k < EST_LOG_KIND_COUNT; k++)
        if (kinds[k] > kinds[best]) best = k;
    if (best != EST_LOG_NONE && kinds[best] != n) {
        /* lines of two frameworks: keep the most common kind's only by
         * refusing (a log is one run) */
        free(it), free(fb), free(op);
        return tp_errf(e, TP_EDATA,
                       "%s: iteration lines of more than one framework "
                       "(%d %s, %d of others): one run's log is expected",
                       path, kinds[best], est_log_kind_names[best],
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
    if (best == EST_LOG_TORCHTITAN) out->tps_per_gpu = m;
    else out->iteration_s = m;
    int u;
    if (nfb) out->fwd_bwd_s = steady(fb, nfb, &u);
    if (nop) out->optimizer_s = steady(op, nop, &u);
    free(it), free(fb), free(op);
    return TP_OK;
}

/* ---- your own run fed back (--log, --calibrate-to-log) ---------------- */

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

/* est_fed_back: the log's figures beside r's, and with calibrate the kernel
 * efficiency at which r's layout takes the run's time: the operator times
 * all scale by it, communication and the bubble's share follow from the
 * schedule, so the time falls monotonically with it; found by bisection
 * on (0, 1] to 1e-6. */
void est_fed_back(est_run_fed *f, const est_train_log *lg, const est_ctx *c,
                  const space_model *m, const est_result *r, int calibrate)
{
    memset(f, 0, sizeof *f);
    f->log = lg;
    f->measured_s = lg->kind == EST_LOG_TORCHTITAN
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
