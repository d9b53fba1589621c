/*
 * diff_speed.c - how fast `trainplan diff` is on big nights (issue 17:
 * 80,000 records took 32 s, growing with N^2). Makes two synthetic sweep
 * outputs of N records each and times sweep_diff on them exactly as the
 * command line runs it (report to /dev/null), at N/4, N/2 and N, at 1
 * thread and at MAX_THREADS, so the growth is visible. No timing is
 * asserted.
 *
 * The records are real ones: a 16-scenario sweep (2 models x 2 systems x
 * 4 GPU counts, top 5) is run first and its records are the templates;
 * record i of a synthetic file is template i % 16 with index i, count N
 * and a distinct id (FNV-1a of "diff_speed" and i). The new file has the
 * same ids, and every 50th record takes the next template's outcome, so
 * 2 % of the scenarios changed. Both files are written to DIR and
 * removed after; the page cache is warm (they were just written).
 *
 * usage: diff_speed [N [MAX_THREADS [DIR]]]   (default 100000, 2, /tmp)
 */
#define _DEFAULT_SOURCE /* clock_gettime, sync */
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

static const char spec[] =
    "{\"comment\": \"bench/diff_speed.c: the templates of its records\",\n"
    " \"models\": [\"llama2-7b\", \"llama2-70b\"],\n"
    " \"systems\": [\"eos\", \"selene\"],\n"
    " \"gpus\": [64, 256, 1024, 4096],\n"
    " \"seq_lengths\": [4096], \"global_batch_sizes\": [1024],\n"
    " \"options\": {\"top\": 5}}\n";

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The part of a template record after its id: `,"scenario":...}`, or
 * NULL. */
static const char *after_id(const char *line)
{
    const char *p = strstr(line, "\"id\":\"");
    return p ? p + 6 + 16 + 1 : NULL;
}

static int write_night(const char *path, int64_t n, char **tpl, int ntpl,
                       int changed)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    for (int64_t i = 0; i < n; i++) {
        int t = (int)(i % ntpl);
        if (changed && i % 50 == 0) t = (t + 1) % ntpl;
        uint64_t h = sweep_fnv1a(SWEEP_FNV_BASIS, "diff_speed", 10);
        h = sweep_fnv1a(h, &i, sizeof i);
        fprintf(f, "{\"index\":%lld,\"count\":%lld,\"id\":\"%016llx\"%s\n",
                (long long)i, (long long)n, (unsigned long long)h, tpl[t]);
    }
    return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    int64_t big = argc > 1 ? atoll(argv[1]) : 100000;
    int max_threads = argc > 2 ? atoi(argv[2]) : 2;
    const char *dir = argc > 3 ? argv[3] : "/tmp";
    if (big < 16 || max_threads < 1) {
        fprintf(stderr, "usage: diff_speed [N >= 16 [MAX_THREADS [DIR]]]\n");
        return 2;
    }
    char spec_path[4096], tpl_path[4096], old_path[4096], new_path[4096];
    snprintf(spec_path, sizeof spec_path, "%s/diff_speed_spec.json", dir);
    snprintf(tpl_path, sizeof tpl_path, "%s/diff_speed_tpl.jsonl", dir);
    snprintf(old_path, sizeof old_path, "%s/diff_speed_old.jsonl", dir);
    snprintf(new_path, sizeof new_path, "%s/diff_speed_new.jsonl", dir);
    FILE *f = fopen(spec_path, "w");
    if (!f || fputs(spec, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "diff_speed: cannot write %s\n", spec_path);
        return 1;
    }
    sweep_opts o;
    sweep_opts_init(&o);
    char *pos[2] = {spec_path, NULL};
    o.pos = pos;
    o.npos = 1;
    o.out_dir = tpl_path;
    o.overwrite = 1;
    tp_err e = {0};
    /* sweep_run reads its standard output's stream (claim_output): a NULL
     * one crashed here */
    emit_out so;
    if (emit_out_open(&so, "/dev/null", NULL, &e) || sweep_run(&o, &so, &e)) {
        fprintf(stderr, "diff_speed: %s\n", e.msg);
        return 1;
    }
    emit_out_close(&so, 1, &e);
    char *buf = NULL;
    size_t len = 0;
    if (tp_read_file(tpl_path, (size_t)1 << 30, &buf, &len, &e)) {
        fprintf(stderr, "diff_speed: %s\n", e.msg);
        return 1;
    }
    char *tpl[16];
    int ntpl = 0;
    int bad = 0;
    for (char *p = buf; ntpl < 16 && *p;) {
        char *nl = strchr(p, '\n');
        if (!nl) break;
        *nl = '\0';
        const char *rest = after_id(p);
        bad |= !rest;
        tpl[ntpl++] = (char *)(rest ? rest : "");
        p = nl + 1;
    }
    if (ntpl != 16 || bad) {
        fprintf(stderr, "diff_speed: %s: expected 16 records\n", tpl_path);
        return 1;
    }
    printf("records: real sweep records as templates, %.1f KB each on "
           "average\n", (double)len / 16 / 1000);
    printf("| records per file | MB per file | threads | diff wall s |\n"
           "|---:|---:|---:|---:|\n");
    int64_t sizes[3] = {big / 4, big / 2, big};
    for (int s = 0; s < 3; s++) {
        if (write_night(old_path, sizes[s], tpl, ntpl, 0)
            || write_night(new_path, sizes[s], tpl, ntpl, 1)) {
            fprintf(stderr, "diff_speed: cannot write %s\n", dir);
            return 1;
        }
        /* Written back before the timing: a diff measured while the
         * kernel flushes gigabytes of dirty pages measures the disk. */
        sync();
        size_t flen = 0;
        char *tmp = NULL;
        if (tp_read_file(old_path, (size_t)1 << 34, &tmp, &flen, &e) == TP_OK)
            free(tmp);
        int threads[2] = {1, max_threads};
        for (int t = 0; t < (max_threads > 1 ? 2 : 1); t++) {
#ifdef _OPENMP
            omp_set_num_threads(threads[t]);
#endif
            sweep_opts d;
            sweep_opts_init(&d);
            char *dpos[2] = {old_path, new_path};
            d.pos = dpos;
            d.npos = 2;
            emit_out out;
            if (emit_out_open(&out, "/dev/null", NULL, &e)) {
                fprintf(stderr, "diff_speed: %s\n", e.msg);
                return 1;
            }
            /* The median of three runs: a shared VM's noise is one way
             * (slower), never faster than the code. */
            double dts[3] = {0, 0, 0};
            int rc = 0, crc = 0;
            for (int rep = 0; rep < 3 && !rc && !crc; rep++) {
                if (rep && emit_out_open(&out, "/dev/null", NULL, &e)) {
                    fprintf(stderr, "diff_speed: %s\n", e.msg);
                    return 1;
                }
                double t0 = now_s();
                rc = sweep_diff(&d, &out, &e);
                crc = emit_out_close(&out, 1, &e);
                dts[rep] = now_s() - t0;
                if (rc == DIFF_EXIT_CHANGED) rc = 0;
            }
            if (!rc && !crc) rc = DIFF_EXIT_CHANGED;
            double lo = fmin(dts[0], fmin(dts[1], dts[2]));
            double hi = fmax(dts[0], fmax(dts[1], dts[2]));
            double dt = dts[0] + dts[1] + dts[2] - lo - hi;
            if (rc != DIFF_EXIT_CHANGED || crc) {
                fprintf(stderr, "diff_speed: diff exit %d: %s\n", rc, e.msg);
                return 1;
            }
            printf("| %lld | %.0f | %d | %.2f |\n", (long long)sizes[s],
                   (double)flen / 1e6, threads[t], dt);
            fflush(stdout);
        }
    }
    if (!getenv("DIFF_SPEED_KEEP")) unlink(old_path);
    if (!getenv("DIFF_SPEED_KEEP")) unlink(new_path);
    unlink(tpl_path);
    unlink(spec_path);
    free(buf);
    return 0;
}
