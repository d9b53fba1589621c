/*
 * validate_memory.c - the memory model (estimator/mem.c) against measured
 * peak memory of published runs.
 *
 * Reads bench/data/memory_runs.json (BigScience's tr11 benchmarks on Jean
 * Zay: the 'Mem' column of their tables; the file says where each field
 * comes from), builds each run's model (BLOOM architecture at the run's
 * layers, hidden size and heads) and layout (fp16, DeepSpeed ZeRO-1 or 0
 * with its 16-bit gradients, full recomputation, unfused attention,
 * dropout 0.1 as Megatron-DeepSpeed's defaults, no sequence parallelism)
 * and prints the estimated peak beside the measured one, the error, and
 * the mean absolute and mean signed errors. Nothing is fitted to these
 * rows: the framework allowance in mem.c is an assumption they test.
 *
 * usage: validate_memory [--runs FILE]
 */
#include "est.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#ifndef TRAINPLAN_SOURCE_DIR
#define TRAINPLAN_SOURCE_DIR "."
#endif

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

int main(int argc, char **argv)
{
    const char *path = TRAINPLAN_SOURCE_DIR "/bench/data/memory_runs.json";
    if (argc == 3 && strcmp(argv[1], "--runs") == 0) {
        path = argv[2];
    } else if (argc != 1) {
        fprintf(stderr, "usage: validate_memory [--runs FILE]\n");
        return 64;
    }
    tp_err e = {0};
    cJSON *root;
    if (tp_json_load(path, &root, &e)) {
        fprintf(stderr, "validate_memory: %s\n", e.msg);
        return 66;
    }
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(root, "runs"), *r;
    printf("%-58s %4s %3s %3s %3s %3s %4s %9s %9s %7s %s\n", "section", "l",
           "tp", "pp", "dp", "mbs", "zero", "meas GiB", "ours GiB", "err %",
           "peak in");
    int n = 0, failed = 0;
    double sum_abs = 0, sum_signed = 0, worst = 0;
    cJSON_ArrayForEach(r, runs) {
        /* The BLOOM architecture at this run's size. */
        cJSON *cfg = cJSON_CreateObject();
        cJSON_AddStringToObject(cfg, "model_type", "bloom");
        cJSON_AddNumberToObject(cfg, "n_layer", num(r, "num_layers"));
        cJSON_AddNumberToObject(cfg, "hidden_size", num(r, "hidden"));
        cJSON_AddNumberToObject(cfg, "n_head", num(r, "heads"));
        cJSON_AddNumberToObject(cfg, "vocab_size", 250680);
        cJSON_AddNumberToObject(cfg, "layer_norm_epsilon", 1e-5);
        space_model m;
        int rc = space_model_from_hf_json(cfg, path, "$.runs[]", &m, &e);
        cJSON_Delete(cfg);
        if (rc) {
            fprintf(stderr, "validate_memory: %s\n", e.msg);
            failed++;
            continue;
        }
        m.attn_dropout = m.hidden_dropout = 0.1;
        space_layout l;
        memset(&l, 0, sizeof l);
        l.tp = (int64_t)num(r, "tp"), l.pp = (int64_t)num(r, "pp");
        l.dp = (int64_t)num(r, "dp"), l.cp = 1, l.vpp = 1;
        l.mbs = (int64_t)num(r, "mbs"), l.gbs = (int64_t)num(r, "gbs");
        l.seq = 2048;
        l.recompute = SPACE_RECOMPUTE_FULL;
        l.zero = num(r, "zero_stage") >= 1 ? SPACE_ZERO_1 : SPACE_ZERO_NONE;
        l.dtype = HW_FP16;
        l.flash = 0;
        l.grad_bytes = 2; /* DeepSpeed's fp16 optimizer */
        est_memory mem;
        est_memory_of(&m, &l, &mem);
        double meas = num(r, "mem_gib"), ours = mem.total / 1073741824.0;
        double err = 100 * (ours - meas) / meas;
        const cJSON *sec = cJSON_GetObjectItemCaseSensitive(r, "section");
        printf("%-58.58s %4lld %3lld %3lld %3lld %3lld %4d %9.0f %9.1f %7.1f "
               "%s\n",
               cJSON_IsString(sec) ? sec->valuestring : "", (long long)m.num_layers,
               (long long)l.tp, (long long)l.pp, (long long)l.dp,
               (long long)l.mbs, (int)l.zero, meas, ours, err,
               mem.peak_in_step ? "step" : "backward");
        n++;
        sum_abs += fabs(err);
        sum_signed += err;
        if (fabs(err) > fabs(worst)) worst = err;
    }
    printf("\n%d runs: mean absolute error %.1f %%, mean signed error %+.1f %% "
           "(negative: we estimate less than was used), worst %+.1f %%; %d "
           "not estimated\n",
           n, n ? sum_abs / n : NAN, n ? sum_signed / n : NAN, worst, failed);
    cJSON_Delete(root);
    return failed ? 1 : 0;
}
