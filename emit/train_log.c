/*
 * train_log.c - a run's own log against the estimate of its job (estimate
 * --log, search --near --log; issue 31), in words and as the "measured"
 * object of the JSON outputs: the measured and estimated iteration time,
 * Megatron's timers, the peak memory, and the kernel efficiency that
 * calibrates the estimate to the run.
 *
 * Deliberately not here: reading the log and the comparison's figures
 * (estimator/train_log.c est_train_log_read, est_fed_back).
 */
#include "report.h"

#include <math.h>

/* The estimate's error against the measurement, in percent (NAN when
 * nothing was measured). */
static double pct(double est, double meas)
{
    return meas > 0 ? 100 * (est / meas - 1) : NAN;
}

void emit_fed_print(FILE *out, const est_run_fed *f, const char *path,
                    const est_band *band)
{
    const est_train_log *lg = f->log;
    double gib = 1073741824.0;
    fprintf(out, "\nyour run (%s, a %s log: %d iteration line%s, the median "
                 "of the last %d):\n",
            path, est_log_kind_names[lg->kind], lg->lines,
            lg->lines == 1 ? "" : "s", lg->used);
    if (lg->kind == EST_LOG_TORCHTITAN)
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

void emit_fed_json(cJSON *j, const est_run_fed *f, const char *path)
{
    const est_train_log *lg = f->log;
    cJSON *x = cJSON_AddObjectToObject(j, "measured");
    cJSON_AddStringToObject(x, "log", path);
    cJSON_AddStringToObject(x, "framework", est_log_kind_names[lg->kind]);
    cJSON_AddNumberToObject(x, "iteration_lines", lg->lines);
    cJSON_AddNumberToObject(x, "iterations_used", lg->used);
    cJSON_AddNumberToObject(x, "iteration_time_s", f->measured_s);
    cJSON_AddNumberToObject(x, "error_pct", pct(f->estimated_s, f->measured_s));
    if (lg->kind == EST_LOG_TORCHTITAN)
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

