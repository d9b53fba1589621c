/*
 * test_hw.c - the hardware database loader: SI conversion, sources,
 * lookup by alias with suggestions, overrides, every kind of bad file,
 * and the built-in database itself (every GPU and system the issue asks
 * for, each number with a source).
 *
 * argv[1]: tests/fixtures; argv[2]: the built-in hwdb/data; argv[3]: a
 * scratch directory for generated files.
 */
#define _POSIX_C_SOURCE 200809L
#include "../hwdb/hw.h"
#include "tp_test.h"

#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *fixtures, *builtin, *scratch;

/* The good fixture's database, with user directory over (NULL: none)
 * loaded after it. */
static hw_db *open_good_over(const char *over, tp_err *e)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/hw/good", fixtures);
    const char *dirs[] = {dir, over};
    return hw_db_open_dirs(dirs, over ? 2 : 1, e);
}

static hw_db *open_good(tp_err *e) { return open_good_over(NULL, e); }

static void test_good_fixture(void)
{
    tp_err e = {0};
    hw_db *db = open_good(&e);
    TP_CHECK(db != NULL);
    if (!db) {
        fprintf(stderr, "  %s\n", e.msg);
        return;
    }
    TP_CHECK_INT(hw_gpu_count(db), 1);
    TP_CHECK_INT(hw_system_count(db), 1);
    const hw_gpu *g = hw_find_gpu(db, "TG", &e); /* alias, any case */
    TP_CHECK(g != NULL);
    if (g) {
        TP_CHECK_STR(g->name, "testgpu");
        TP_CHECK_REL(g->peak_flops[HW_BF16], 800e12, 1e-15);
        TP_CHECK_REL(g->mem_bytes, 80.0 * 1073741824.0, 1e-15);
        TP_CHECK_REL(g->mem_bw_bytes_per_s, 3e12, 1e-15);
        TP_CHECK_REL(g->clock_hz, 2e9, 1e-15);
        TP_CHECK_REL(g->l2_bytes, 50.0 * 1048576.0, 1e-15);
        TP_CHECK_INT(g->sm_count, 100);
        TP_CHECK(g->peak_flops[HW_FP8] == 0);
        TP_CHECK_INT(g->n_fields, 12);
        for (int i = 0; i < g->n_fields; i++)
            TP_CHECK(g->fields[i].source && g->fields[i].source[0]);
        /* A source key resolves to its citation; a written-out one stays. */
        TP_CHECK_CONTAINS(g->fields[0].source, "Invented");
        TP_CHECK_CONTAINS(g->fields[g->n_fields - 1].source, "Written out");
    }
    const hw_system *y = hw_find_system(db, "testsys", &e);
    TP_CHECK(y != NULL);
    if (y) {
        TP_CHECK(y->gpu == g);
        TP_CHECK_INT(y->gpus_per_node, 8);
        TP_CHECK_INT(y->scaleup_domain_gpus, 8); /* defaults to the node */
        TP_CHECK_REL(y->nic_bw_bytes_per_s, 50e9, 1e-15); /* 400 Gbit/s */
        TP_CHECK_REL(y->intra_latency_s, 3e-6, 1e-12);
        TP_CHECK_INT(y->intra_topology, HW_TOPO_NVSWITCH);
        TP_CHECK_INT(y->inter_topology, HW_TOPO_FAT_TREE);
        TP_CHECK_REL(y->price_usd_per_gpu_hour, 2.5, 1e-15);
    }
    /* Unknown names suggest the close ones. */
    TP_CHECK(hw_find_gpu(db, "testgpuu", &e) == NULL);
    TP_CHECK_INT(e.status, TP_EDATA);
    TP_CHECK_CONTAINS(e.msg, "did you mean 'testgpu'");
    TP_CHECK(hw_find_system(db, "tstsys", &e) == NULL);
    TP_CHECK_CONTAINS(e.msg, "'testsys'");
    hw_db_free(db);
    hw_db_free(NULL);
}

typedef struct bad_case {
    const char *file;
    int status;
    const char *want1, *want2; /* substrings the report must hold */
} bad_case;

static const bad_case bad_cases[] = {
    {"truncated.json", TP_EDATA, "truncated.json:", "malformed JSON"},
    {"trailing.json", TP_EDATA, "trailing.json:", "trailing data"},
    {"empty.json", TP_EDATA, "empty.json", "empty file"},
    {"wrong_type.json", TP_EDATA, "$.memory_gib.value", "\"eighty\""},
    {"missing_field.json", TP_EDATA, "$.memory_bw_gb_per_s", "missing required"},
    {"negative.json", TP_EDATA, "$.sm_count.value", "found -4"},
    {"zero.json", TP_EDATA, "$.sm_count.value", "[1, 10000]"},
    {"huge.json", TP_EDATA, "$.memory_gib.value", "[1, 4096]"},
    {"nan.json", TP_EDATA, "nan.json:", "malformed JSON"},
    {"no_source.json", TP_EDATA, "$.memory_gib", "needs its source"},
    {"bad_source_key.json", TP_EDATA, "\"madeup\"", "$.sources"},
    {"unknown_key.json", TP_EDATA, "$.memory_gb: unknown key", "'memory_gib'"},
    {"unknown_gpu.json", TP_EDATA, "unknown GPU 'h100-sx'", "$.gpu"},
    {"bad_schema.json", TP_EDATA, "$.schema", "trainplan-cpu/1"},
    {"faster_than_gpu.json", TP_EDATA, "$.intra_node.bw_gb_per_s", "above"},
    {"not_object.json", TP_EDATA, "$: expected a JSON object", "not_object"},
    {"fp4_speedup_above_peaks.json", TP_EDATA, "$.fp4_gemm_speedup.value",
     "above the fp4 / bf16 peak ratio (4)"},
    {"fp8_attention_seq_order.json", TP_EDATA, "$.fp8_attention.seq[1]",
     "above the one before"},
    {"does_not_exist.json", TP_ENOINPUT, "does_not_exist.json", "cannot open"},
};

static void test_bad_files(void)
{
    tp_err e = {0};
    hw_db *db = open_good(&e);
    TP_CHECK(db != NULL);
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/hw/bad/%s", fixtures, bad_cases[i].file);
        char *report = NULL;
        int rc = hw_check_file(db, path, &report);
        TP_CHECK_INT(rc, bad_cases[i].status);
        TP_CHECK_CONTAINS(report, bad_cases[i].want1);
        TP_CHECK_CONTAINS(report, bad_cases[i].want2);
        if (rc != bad_cases[i].status) fprintf(stderr, "  %s: %s", path, report);
        free(report);
    }
    hw_db_free(db);
}

static void test_many_problems_listed(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/hw/bad/many.json", fixtures);
    char *report = NULL;
    int rc = hw_check_file(NULL, path, &report);
    TP_CHECK_INT(rc, TP_EDATA);
    TP_CHECK_CONTAINS(report, "$.sm_count.value");
    TP_CHECK_CONTAINS(report, "$.memory_gib.value");
    TP_CHECK_CONTAINS(report, "$.vendor");
    int lines = 0;
    for (const char *c = report; *c; c++) lines += *c == '\n';
    TP_CHECK_INT(lines, 3);
    free(report);
}

static void test_directory_and_big_file(void)
{
    char *report = NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s/hw", fixtures);
    TP_CHECK_INT(hw_check_file(NULL, path, &report), TP_ENOINPUT);
    TP_CHECK_CONTAINS(report, "is a directory");
    free(report);

    /* A 50 MB file is refused before it is parsed. */
    snprintf(path, sizeof path, "%s/big.json", scratch);
    FILE *f = fopen(path, "w");
    TP_CHECK(f != NULL);
    if (!f) return;
    fputs("{\"schema\": \"trainplan-gpu/1\", \"pad\": \"", f);
    static char chunk[1 << 16];
    memset(chunk, 'x', sizeof chunk);
    for (int i = 0; i < 50 * 16; i++) fwrite(chunk, 1, sizeof chunk, f);
    fputs("\"}", f);
    fclose(f);
    TP_CHECK_INT(hw_check_file(NULL, path, &report), TP_EDATA);
    TP_CHECK_CONTAINS(report, "larger than");
    free(report);
    remove(path);
}

static void test_bad_dir_fails_open(void)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/no-such-dir", fixtures);
    const char *dirs[] = {dir};
    tp_err e = {0};
    TP_CHECK(hw_db_open_dirs(dirs, 1, &e) == NULL);
    TP_CHECK_INT(e.status, TP_ENOINPUT);
    TP_CHECK_CONTAINS(e.msg, "no-such-dir");

    /* A directory holding a bad file: open fails naming the file. */
    char bad[1024], gdir[1100];
    snprintf(bad, sizeof bad, "%s/badhw", scratch);
    snprintf(gdir, sizeof gdir, "%s/gpus", bad);
    mkdir(bad, 0755);
    mkdir(gdir, 0755);
    char file[1200];
    snprintf(file, sizeof file, "%s/x.json", gdir);
    FILE *f = fopen(file, "w");
    if (f) {
        fputs("{\"schema\": \"trainplan-gpu/1\"", f);
        fclose(f);
    }
    const char *dirs2[] = {bad};
    TP_CHECK(hw_db_open_dirs(dirs2, 1, &e) == NULL);
    TP_CHECK_INT(e.status, TP_EDATA);
    TP_CHECK_CONTAINS(e.msg, "x.json");
    remove(file);
    rmdir(gdir);
    rmdir(bad);
}

/* Copies the fixture src to dst with every line containing edits[i][0]
 * replaced by edits[i][1] (n edits). Returns 0 when a file cannot be
 * opened. */
static int copy_edited(const char *src, const char *dst,
                       const char *const (*edits)[2], int n)
{
    FILE *in = fopen(src, "r"), *out = fopen(dst, "w");
    int ok = in && out;
    char line[512];
    while (ok && fgets(line, sizeof line, in)) {
        const char *put = line;
        for (int i = 0; i < n; i++)
            if (strstr(line, edits[i][0])) put = edits[i][1];
        fputs(put, out);
    }
    if (in) fclose(in);
    if (out) fclose(out);
    return ok;
}

/* operator_models_like must name another GPU of the database, one with
 * samples of its own; a second GPU borrowing the fixture's fits, which
 * has none, is refused at open with the path of the field. */
static void test_models_like(void)
{
    char dir[1024], gpus[1100], file[1200], src[1024];
    snprintf(dir, sizeof dir, "%s/like", scratch);
    snprintf(gpus, sizeof gpus, "%s/gpus", dir);
    mkdir(dir, 0755);
    mkdir(gpus, 0755);
    snprintf(file, sizeof file, "%s/likegpu.json", gpus);
    snprintf(src, sizeof src, "%s/hw/good/gpus/testgpu.json", fixtures);
    static const char *const edits[][2] = {
        {"\"name\": \"testgpu\"",
         "  \"name\": \"likegpu\",\n  \"operator_models_like\": "
         "{\"gpu\": \"testgpu\", \"source\": \"made-up\", "
         "\"note\": \"test\"},\n"},
        {"\"aliases\"", "  \"aliases\": [],\n"},
    };
    int copied = copy_edited(src, file, edits, 2);
    TP_CHECK(copied);
    if (!copied) return;
    tp_err e = {0};
    hw_db *db = open_good_over(dir, &e);
    TP_CHECK(db == NULL); /* testgpu has no samples to borrow */
    TP_CHECK_CONTAINS(e.msg, "operator_models_like.gpu");
    TP_CHECK_CONTAINS(e.msg, "testgpu");
    hw_db_free(db);
    remove(file);
    rmdir(gpus);
    rmdir(dir);
}

/* A later directory's file of the same name replaces the earlier one. */
static void test_override(void)
{
    char dir[1024], sys[1100], file[1200];
    snprintf(dir, sizeof dir, "%s/override", scratch);
    snprintf(sys, sizeof sys, "%s/systems", dir);
    mkdir(dir, 0755);
    mkdir(sys, 0755);
    snprintf(file, sizeof file, "%s/testsys.json", sys);
    char src[1024];
    snprintf(src, sizeof src, "%s/hw/good/systems/testsys.json", fixtures);
    static const char *const edits[][2] = {
        {"price_usd_per_gpu_hour",
         "  \"price_usd_per_gpu_hour\": {\"value\": 9.75, \"source\": "
         "\"made-up\"}\n"},
    };
    int copied = copy_edited(src, file, edits, 1);
    TP_CHECK(copied);
    if (!copied) return;
    tp_err e = {0};
    hw_db *db = open_good_over(dir, &e);
    TP_CHECK(db != NULL);
    if (db) {
        TP_CHECK_INT(hw_system_count(db), 1);
        const hw_system *y = hw_find_system(db, "testsys", &e);
        TP_CHECK(y && y->price_usd_per_gpu_hour == 9.75);
        hw_db_free(db);
    }
    remove(file);
    rmdir(sys);
    rmdir(dir);
}

/* A partial override (docs/hwdb.md Overrides): merged key by key into
 * nested objects, a sourced number replaced whole, null removing an
 * optional key, aliases replaced as an array; the rest kept. */
static void test_partial_override(void)
{
    char dir[1024], sys[1100], file[1200];
    snprintf(dir, sizeof dir, "%s/partial", scratch);
    snprintf(sys, sizeof sys, "%s/systems", dir);
    mkdir(dir, 0755);
    mkdir(sys, 0755);
    snprintf(file, sizeof file, "%s/testsys.json", sys);
    FILE *f = fopen(file, "w");
    TP_CHECK(f != NULL);
    if (!f) return;
    fputs("{\"schema\": \"trainplan-system/1\", \"name\": \"testsys\",\n"
          " \"sources\": {\"q\": \"a quote\"},\n"
          " \"aliases\": null,\n"
          " \"inter_node\": {\"nics_per_node\": {\"value\": 4, "
          "\"source\": \"q\"}},\n"
          " \"price_usd_per_gpu_hour\": {\"value\": 1.25, \"source\": "
          "\"q\"}}\n", f);
    fclose(f);
    tp_err e = {0};
    hw_db *db = open_good_over(dir, &e);
    TP_CHECK(db != NULL);
    if (db) {
        const hw_system *y = hw_find_system(db, "testsys", &e);
        TP_CHECK(y != NULL);
        if (y) {
            TP_CHECK(y->price_usd_per_gpu_hour == 1.25);
            TP_CHECK_INT(y->nics_per_node, 4);
            /* Kept from the base: the rest of inter_node, and intra_node. */
            TP_CHECK_REL(y->nic_bw_bytes_per_s, 400e9 / 8, 1e-12);
            TP_CHECK_REL(y->inter_latency_s, 5e-6, 1e-12);
            TP_CHECK_INT(y->gpus_per_node, 8);
            TP_CHECK_INT(y->n_aliases, 0);
            TP_CHECK(y->base_file && strstr(y->base_file, "hw/good/systems"));
            for (int i = 0; i < y->n_fields; i++)
                if (!strcmp(y->fields[i].key, "price_usd_per_gpu_hour"))
                    TP_CHECK_STR(y->fields[i].source, "a quote");
        }
        TP_CHECK(hw_find_system(db, "ts", &e) == NULL);
        hw_db_free(db);
    }
    /* hw check merges over the database it is given. */
    db = open_good(&e);
    TP_CHECK(db != NULL);
    char *report = NULL;
    TP_CHECK_INT(hw_check_file(db, file, &report), TP_OK);
    free(report);
    TP_CHECK(hw_check_file(NULL, file, &report) != TP_OK);
    free(report);
    hw_db_free(db);
    remove(file);
    rmdir(sys);
    rmdir(dir);
}

/* The hosts (issue 28): a system's host object loads in SI, and hw check
 * names a host link above the GPU's own, an unknown key, a CPU that is
 * not text. */
static void test_host(void)
{
    char dir[1024], sys[1100], file[1200], src[1024];
    snprintf(dir, sizeof dir, "%s/host", scratch);
    snprintf(sys, sizeof sys, "%s/systems", dir);
    mkdir(dir, 0755);
    mkdir(sys, 0755);
    snprintf(file, sizeof file, "%s/testsys.json", sys);
    snprintf(src, sizeof src, "%s/hw/good/systems/testsys.json", fixtures);
    static const char *const edits[][2] = {
        {"price_usd_per_gpu_hour",
         "  \"price_usd_per_gpu_hour\": {\"value\": 2.5, \"source\": "
         "\"made-up\"},\n  \"host\": {\"cpu\": \"two test CPUs\", "
         "\"memory_bw_gb_per_s\": {\"value\": 500, \"source\": \"made-up\"}, "
         "\"memory_gib\": {\"value\": 1024, \"source\": \"made-up\"}, "
         "\"link_gb_per_s\": {\"value\": 16, \"source\": \"made-up\"}}\n"},
    };
    TP_CHECK(copy_edited(src, file, edits, 1));
    tp_err e = {0};
    hw_db *db = open_good_over(dir, &e);
    TP_CHECK(db != NULL);
    if (db) {
        const hw_system *y = hw_find_system(db, "testsys", &e);
        TP_CHECK(y != NULL);
        if (y) {
            TP_CHECK_REL(y->host_mem_bw_bytes_per_s, 500e9, 1e-12);
            TP_CHECK_REL(y->host_mem_bytes, 1024.0 * 1073741824.0, 1e-12);
            TP_CHECK_REL(y->host_link_bw_bytes_per_s, 16e9, 1e-12);
        }
        hw_db_free(db);
    }
    /* against the built-in H100 (64 GB/s a direction): a faster link */
    const char *bdirs[] = {builtin};
    hw_db *b = hw_db_open_dirs(bdirs, 1, &e);
    TP_CHECK(b != NULL);
    static const char *const bad[][2][2] = {
        {{"\"gpu\"", "  \"gpu\": \"h100-sxm\",\n"},
         {"price_usd_per_gpu_hour",
          "  \"price_usd_per_gpu_hour\": {\"value\": 2.5, \"source\": "
          "\"made-up\"},\n  \"host\": {\"link_gb_per_s\": {\"value\": 100, "
          "\"source\": \"made-up\"}}\n"}},
        {{"\"gpu\"", "  \"gpu\": \"h100-sxm\",\n"},
         {"price_usd_per_gpu_hour",
          "  \"price_usd_per_gpu_hour\": {\"value\": 2.5, \"source\": "
          "\"made-up\"},\n  \"host\": {\"memory_tb\": 2}\n"}},
        {{"\"gpu\"", "  \"gpu\": \"h100-sxm\",\n"},
         {"price_usd_per_gpu_hour",
          "  \"price_usd_per_gpu_hour\": {\"value\": 2.5, \"source\": "
          "\"made-up\"},\n  \"host\": {\"cpu\": 2}\n"}},
    };
    static const char *const says[] = {"above the GPU's own host link",
                                       "memory_tb: unknown key",
                                       "$.host.cpu: expected a string"};
    for (int i = 0; b && i < 3; i++) {
        TP_CHECK(copy_edited(src, file, bad[i], 2));
        char *report = NULL;
        TP_CHECK(hw_check_file(b, file, &report) != TP_OK);
        if (report) TP_CHECK_CONTAINS(report, says[i]);
        free(report);
    }
    /* the built-in hosts */
    if (b) {
        const hw_gpu *h = hw_find_gpu(b, "h100-sxm", &e);
        if (h) TP_CHECK_REL(h->host_link_bw_bytes_per_s, 64e9, 1e-12);
        const hw_gpu *gh = hw_find_gpu(b, "gh200", &e);
        if (gh) TP_CHECK_REL(gh->host_link_bw_bytes_per_s, 450e9, 1e-12);
        const hw_system *eos = hw_find_system(b, "eos", &e);
        if (eos) {
            TP_CHECK_REL(eos->host_mem_bw_bytes_per_s, 614.4e9, 1e-12);
            TP_CHECK_REL(eos->host_mem_bytes, 2048.0 * 1073741824.0, 1e-12);
        }
        for (int i = 0; i < hw_gpu_count(b); i++)
            TP_CHECK(hw_gpu_at(b, i)->host_link_bw_bytes_per_s > 0);
        /* the host's time per framework call (TE issue #2053): DGX H100's
         * Xeon, GH200's Grace */
        if (h) TP_CHECK_REL(h->host_launch_s, 13.48e-6, 1e-12);
        if (gh) TP_CHECK_REL(gh->host_launch_s, 33.17e-6, 1e-12);
        hw_db_free(b);
    }
    remove(file);
    rmdir(sys);
    rmdir(dir);
}

/* Blackwell Ultra (issue 19): the key numbers of B300, GB300 and their
 * systems as their files source them, in SI after loading. */
static void test_builtin_blackwell_ultra(const hw_db *db)
{
    tp_err e = {0};
    const hw_gpu *b300 = hw_find_gpu(db, "B300 SXM6 AC", &e); /* alias */
    const hw_gpu *gb300 = hw_find_gpu(db, "gb300", &e);
    const hw_gpu *b200 = hw_find_gpu(db, "b200", &e);
    TP_CHECK(b300 != NULL && gb300 != NULL && b200 != NULL);
    if (!b300 || !gb300 || !b200) return;
    TP_CHECK_STR(b300->name, "b300");
    TP_CHECK_REL(b300->peak_flops[HW_BF16], 2250e12, 1e-12);
    TP_CHECK_REL(b300->peak_flops[HW_FP8], 4500e12, 1e-12);
    TP_CHECK_REL(b300->mem_bytes, 275040.0 * 1048576.0, 1e-4); /* 268.59 GiB */
    TP_CHECK_REL(b300->mem_bw_bytes_per_s, 8e12, 1e-12);
    TP_CHECK_REL(b300->scaleup_bw_bytes_per_s, 900e9, 1e-12);
    TP_CHECK_INT(b300->sm_count, 148);
    TP_CHECK(b300->l2_bytes == 0); /* not published: left out */
    TP_CHECK_REL(gb300->peak_flops[HW_BF16], 2500e12, 1e-12);
    TP_CHECK_REL(gb300->peak_flops[HW_FP8], 5000e12, 1e-12);
    TP_CHECK_REL(gb300->mem_bytes, 284208.0 * 1048576.0, 1e-4); /* 277.55 GiB */
    TP_CHECK_REL(gb300->mem_bw_bytes_per_s, 8e12, 1e-12);
    TP_CHECK_INT(gb300->sm_count, 152);
    TP_CHECK_REL(gb300->power_w, 1400, 1e-12);
    /* Both borrow B200's operator fits (GB300 cannot chain via GB200) and,
     * unfitted themselves, its kernel efficiency factor. */
    TP_CHECK(b300->models_like == b200);
    TP_CHECK(gb300->models_like == b200);
    TP_CHECK(b300->kernel_eff_factor == 0 && gb300->kernel_eff_factor == 0);
    /* Measured NVFP4 over bf16 GEMM speedups (cuBLAS): B200 3.78
     * (pytorch/ao#2427), B300 3.48 (TransformerEngine's GEMM profiling
     * guide); GB200 and GB300 assume their twin's. Below the peaks'
     * ratio, as the loader checks. */
    const hw_gpu *gb200 = hw_find_gpu(db, "gb200", &e);
    TP_CHECK(gb200 != NULL);
    TP_CHECK_REL(b200->fp4_gemm_speedup, 3.78, 1e-12);
    TP_CHECK_REL(b300->fp4_gemm_speedup, 3.48, 1e-12);
    TP_CHECK_REL(gb300->fp4_gemm_speedup, 3.48, 1e-12);
    if (gb200) TP_CHECK_REL(gb200->fp4_gemm_speedup, 3.78, 1e-12);
    const hw_gpu *four[] = {b200, gb200, b300, gb300};
    for (int i = 0; i < 4; i++)
        if (four[i])
            TP_CHECK(four[i]->fp4_gemm_speedup
                     <= four[i]->peak_flops[HW_FP4] / four[i]->peak_flops[HW_BF16]);
    TP_CHECK_STR(b300->arch, "blackwell");
    TP_CHECK_STR(gb300->arch, "blackwell");

    const hw_system *dgx = hw_find_system(db, "hgx-b300", &e); /* alias */
    TP_CHECK(dgx != NULL);
    if (dgx) {
        TP_CHECK_STR(dgx->name, "dgx-b300");
        TP_CHECK(dgx->gpu == b300);
        TP_CHECK_INT(dgx->gpus_per_node, 8);
        TP_CHECK_INT(dgx->scaleup_domain_gpus, 8);
        TP_CHECK_INT(dgx->nics_per_node, 8);
        TP_CHECK_REL(dgx->nic_bw_bytes_per_s, 100e9, 1e-12); /* 800 Gbit/s */
        TP_CHECK_REL(dgx->intra_bw_bytes_per_s, 900e9, 1e-12);
    }
    const hw_system *nvl = hw_find_system(db, "gb300-nvl72", &e);
    TP_CHECK(nvl != NULL);
    if (nvl) {
        TP_CHECK(nvl->gpu == gb300);
        TP_CHECK_INT(nvl->gpus_per_node, 4);
        TP_CHECK_INT(nvl->scaleup_domain_gpus, 72);
        TP_CHECK_INT(nvl->nics_per_node, 4);
        TP_CHECK_REL(nvl->nic_bw_bytes_per_s, 100e9, 1e-12); /* 800 Gbit/s */
        TP_CHECK_REL(nvl->intra_bw_bytes_per_s, 900e9, 1e-12);
    }
}

/* NVFP4 where the GPU has it: the dense peaks of NVIDIA's tables (B200 9,
 * GB200 10, HGX B300 105 / 8, GB300 15 PFLOP/s), none before Blackwell. */
static void test_builtin_fp4(const hw_db *db)
{
    tp_err e = {0};
    static const struct {
        const char *gpu;
        double fp4;
    } want[] = {{"b200", 9000e12},   {"gb200", 10000e12}, {"b300", 13125e12},
                {"gb300", 15000e12}, {"h100-sxm", 0},     {"h200", 0},
                {"h800", 0},         {"gh200", 0},        {"a100-80gb", 0},
                {"mi300x", 0}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const hw_gpu *g = hw_find_gpu(db, want[i].gpu, &e);
        TP_CHECK(g != NULL);
        if (!g) continue;
        if (want[i].fp4 > 0) {
            TP_CHECK_REL(g->peak_flops[HW_FP4], want[i].fp4, 1e-12);
            TP_CHECK_STR(g->arch, "blackwell");
        } else {
            TP_CHECK(g->peak_flops[HW_FP4] == 0);
        }
    }
    /* hw show prints it with its source. */
    const hw_gpu *b300 = hw_find_gpu(db, "b300", &e);
    int shown = 0;
    for (int k = 0; b300 && k < b300->n_fields; k++)
        if (strcmp(b300->fields[k].key, "peak_tflops.fp4") == 0) {
            shown = 1;
            TP_CHECK_REL(b300->fields[k].file_value, 13125, 1e-12);
            TP_CHECK(strstr(b300->fields[k].source, "105 PFLOPS") != NULL);
        }
    TP_CHECK(shown);
}

/* fp8 attention over 16-bit, cuDNN's measured kernels (hwdb fp8_attention):
 * B200's own table at its points, between them linear in log2 of the
 * length, held beyond its ends; GB200 through operator_models_like; GB300
 * its own (Blackwell Ultra's doubled exponentials: fp8 gains more); the
 * H100's backward slower than bf16 at 8k; none for GH200. */
static void test_builtin_fp8_attention(const hw_db *db)
{
    tp_err e = {0};
    const hw_gpu *b200 = hw_find_gpu(db, "b200", &e);
    const hw_gpu *gb200 = hw_find_gpu(db, "gb200", &e);
    const hw_gpu *gb300 = hw_find_gpu(db, "gb300", &e);
    const hw_gpu *h100 = hw_find_gpu(db, "h100-sxm", &e);
    const hw_gpu *gh200 = hw_find_gpu(db, "gh200", &e);
    TP_CHECK(b200 && gb200 && gb300 && h100 && gh200);
    if (!(b200 && gb200 && gb300 && h100 && gh200)) return;
    double f, b, f2, b2;
    TP_CHECK(hw_gpu_fp8_attention(b200, 8192, &f, &b) == 1);
    TP_CHECK_REL(f, 0.921, 1e-12);
    TP_CHECK_REL(b, 0.793, 1e-12);
    /* halfway in log2 between 4096 (0.927) and 8192 (0.921) */
    TP_CHECK(hw_gpu_fp8_attention(b200, 4096 * sqrt(2.0), &f, &b) == 1);
    TP_CHECK_REL(f, (0.927 + 0.921) / 2, 1e-9);
    TP_CHECK(hw_gpu_fp8_attention(b200, 100, &f, &b) == 1);
    TP_CHECK_REL(f, 1.257, 1e-12);
    TP_CHECK(hw_gpu_fp8_attention(b200, 1e6, &f, &b) == 1);
    TP_CHECK_REL(b, 0.698, 1e-12);
    TP_CHECK(hw_gpu_fp8_attention(gb200, 8192, &f2, &b2) == 1);
    TP_CHECK(hw_gpu_fp8_attention(b200, 8192, &f, &b) == 1);
    TP_CHECK(f2 == f && b2 == b);
    TP_CHECK(hw_gpu_fp8_attention(gb300, 8192, &f2, &b2) == 1);
    TP_CHECK(f2 < f && b2 < b);
    TP_CHECK(hw_gpu_fp8_attention(h100, 8192, &f, &b) == 1);
    TP_CHECK(f < 1 && b > 1);
    TP_CHECK(hw_gpu_fp8_attention(gh200, 8192, &f, &b) == 0);
    TP_CHECK(f == 1 && b == 1);
}

/* DeepSeek-V3's H800 and its cluster (arXiv 2412.19437 section 3.1;
 * 2505.09343): H100 SXM5 compute, NVLink 400 GB/s, 8 x 400 Gb/s IB. */
static void test_builtin_h800(const hw_db *db)
{
    tp_err e = {0};
    const hw_gpu *h800 = hw_find_gpu(db, "NVIDIA H800", &e); /* alias */
    const hw_gpu *h100 = hw_find_gpu(db, "h100-sxm", &e);
    TP_CHECK(h800 != NULL && h100 != NULL);
    if (!h800 || !h100) return;
    TP_CHECK_STR(h800->name, "h800");
    TP_CHECK_STR(h800->arch, "hopper");
    for (int d = 0; d < HW_DTYPE_COUNT; d++)
        TP_CHECK(h800->peak_flops[d] == h100->peak_flops[d]);
    TP_CHECK(h800->mem_bytes == h100->mem_bytes);
    TP_CHECK(h800->mem_bw_bytes_per_s == h100->mem_bw_bytes_per_s);
    TP_CHECK_INT(h800->sm_count, h100->sm_count);
    TP_CHECK_REL(h800->scaleup_bw_bytes_per_s, 200e9, 1e-12);
    TP_CHECK(h800->models_like == h100);
    const hw_system *y = hw_find_system(db, "deepseek-v3-h800", &e);
    TP_CHECK(y != NULL);
    if (!y) return;
    TP_CHECK(y->gpu == h800);
    TP_CHECK_INT(y->gpus_per_node, 8);
    TP_CHECK_INT(y->max_nodes, 256); /* 2,048 GPUs */
    TP_CHECK_INT(y->nics_per_node, 8);
    TP_CHECK_REL(y->nic_bw_bytes_per_s, 50e9, 1e-12); /* 400 Gbit/s */
    TP_CHECK_REL(y->intra_bw_bytes_per_s, 200e9, 1e-12);
    TP_CHECK_REL(y->price_usd_per_gpu_hour, 2.0, 1e-12);
}

/* The shipped database: loads, and has what the issue asks for. */
static void test_builtin(void)
{
    const char *dirs[] = {builtin};
    tp_err e = {0};
    hw_db *db = hw_db_open_dirs(dirs, 1, &e);
    TP_CHECK(db != NULL);
    if (!db) {
        fprintf(stderr, "  %s\n", e.msg);
        return;
    }
    static const char *gpus[] = {"a100-40gb", "a100-80gb", "h100-sxm",
                                 "h100-pcie", "h200",      "gh200",
                                 "b200",      "mi250x",    "mi300x",
                                 "mi355x",    "b300",      "gb300",
                                 "gb200",     "h800"};
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
        const hw_gpu *g = hw_find_gpu(db, gpus[i], &e);
        TP_CHECK(g != NULL);
        if (!g) {
            fprintf(stderr, "  %s\n", e.msg);
            continue;
        }
        for (int d = 0; d < HW_DTYPE_COUNT; d++)
            TP_CHECK(g->peak_flops[d] >= 0 && g->peak_flops[d] < 1e17);
        /* Dense bf16 is at least fp32 and at most fp8 where fp8 exists,
         * fp8 at most fp4 where fp4 exists. */
        TP_CHECK(g->peak_flops[HW_BF16] >= g->peak_flops[HW_FP32]);
        if (g->peak_flops[HW_FP8] > 0)
            TP_CHECK(g->peak_flops[HW_FP8] >= g->peak_flops[HW_BF16]);
        if (g->peak_flops[HW_FP4] > 0)
            TP_CHECK(g->peak_flops[HW_FP4] >= 2 * g->peak_flops[HW_FP8]);
        TP_CHECK(g->mem_bytes >= 16.0 * 1073741824.0);
        for (int k = 0; k < g->n_fields; k++)
            TP_CHECK(g->fields[k].source && g->fields[k].source[0]);
    }
    static const char *systems[] = {"perlmutter", "perlmutter-80g", "vista",
                                    "selene",     "eos",            "dgx-h200",
                                    "dgx-b200",   "jean-zay-a100",  "gb200-nvl72",
                                    "dgx-b300",   "gb300-nvl72",
                                    "deepseek-v3-h800"};
    for (size_t i = 0; i < sizeof systems / sizeof systems[0]; i++) {
        const hw_system *y = hw_find_system(db, systems[i], &e);
        TP_CHECK(y != NULL);
        if (!y) {
            fprintf(stderr, "  %s\n", e.msg);
            continue;
        }
        TP_CHECK(y->gpu != NULL);
        TP_CHECK(y->price_usd_per_gpu_hour > 0);
        TP_CHECK(y->nic_bw_bytes_per_s > 0);
        for (int k = 0; k < y->n_fields; k++)
            TP_CHECK(y->fields[k].source && y->fields[k].source[0]);
    }
    const hw_system *p = hw_find_system(db, "perlmutter", &e);
    if (p) {
        TP_CHECK_INT(p->gpus_per_node, 4);
        TP_CHECK_STR(p->gpu->name, "a100-40gb");
    }
    const hw_system *nvl = hw_find_system(db, "gb200-nvl72", &e);
    if (nvl) TP_CHECK_INT(nvl->scaleup_domain_gpus, 72);
    test_builtin_blackwell_ultra(db);
    test_builtin_fp4(db);
    test_builtin_fp8_attention(db);
    test_builtin_h800(db);
    hw_db_free(db);
}

static void test_dtype_names(void)
{
    TP_CHECK_INT(hw_dtype_parse("BF16"), HW_BF16);
    TP_CHECK_INT(hw_dtype_parse("fp8"), HW_FP8);
    TP_CHECK_INT(hw_dtype_parse("FP4"), HW_FP4);
    TP_CHECK_STR(hw_dtype_names[HW_FP4], "fp4");
    TP_CHECK_INT(hw_dtype_parse("int4"), -1);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_hw FIXTURES BUILTIN SCRATCH\n");
        return 2;
    }
    fixtures = argv[1];
    builtin = argv[2];
    scratch = argv[3];
    mkdir(scratch, 0755);
    TP_RUN(test_good_fixture);
    TP_RUN(test_bad_files);
    TP_RUN(test_many_problems_listed);
    TP_RUN(test_directory_and_big_file);
    TP_RUN(test_bad_dir_fails_open);
    TP_RUN(test_override);
    TP_RUN(test_partial_override);
    TP_RUN(test_models_like);
    TP_RUN(test_host);
    TP_RUN(test_builtin);
    TP_RUN(test_dtype_names);
    return TP_TEST_EXIT();
}
