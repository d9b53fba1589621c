/*
 * test_report.c - the inspection reports (emit/report.h) called as a
 * library, with no command line: a plain request and an open database in,
 * the report on a memory stream and a status out. And the run's log
 * reader (estimator/train_log.c) on the fixtures' logs. The command
 * line's bytes are tests/e2e.sh's.
 *
 * argv[1]: tests/fixtures; argv[2]: the built-in hwdb/data.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "report.h"
#include "tp_test.h"

#include <stdlib.h>

static const char *fixtures, *builtin;
static hw_db *db;

/* A report's bytes: a memory stream and what it holds once closed. */
typedef struct memout {
    FILE *f;
    char *text;
    size_t len;
} memout;

static void mem_open(memout *m)
{
    m->text = NULL;
    m->len = 0;
    m->f = open_memstream(&m->text, &m->len);
}

/* Closes the stream; the text stays until mem_free. */
static const char *mem_text(memout *m)
{
    fclose(m->f);
    m->f = NULL;
    return m->text ? m->text : "";
}

static void mem_free(memout *m)
{
    free(m->text);
}

/* The JSON a report printed: the caller deletes it. */
static cJSON *mem_json(memout *m)
{
    return cJSON_Parse(mem_text(m));
}

static double num(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* model show: the vocabulary padded to 128 x TP (Megatron-LM's
 * _vocab_size_with_padding), the default sequence length 2048. */
static void test_model_show(void)
{
    space_model m;
    tp_err e = {0};
    TP_CHECK_INT(space_model_resolve("gpt3-175b", &m, &e), TP_OK);
    const int64_t tp[2] = {1, 8}, padded[2] = {50304, 51200};
    for (int i = 0; i < 2; i++) {
        memout o;
        mem_open(&o);
        TP_CHECK_INT(emit_model_show(o.f, EMIT_JSON, &m, 0, tp[i]), TP_OK);
        cJSON *j = mem_json(&o);
        TP_CHECK(j != NULL);
        TP_CHECK_INT(num(j, "vocab_padded"), padded[i]);
        TP_CHECK_INT(num(j, "seq_length"), 2048);
        TP_CHECK_INT(num(j, "schema_version"), EMIT_SCHEMA_VERSION);
        cJSON_Delete(j);
        mem_free(&o);
    }
    memout o;
    mem_open(&o);
    TP_CHECK_INT(emit_model_show(o.f, EMIT_TABLE, &m, 8192, 1), TP_OK);
    const char *t = mem_text(&o);
    TP_CHECK(strstr(t, "seq_length") && strstr(t, "8192"));
    TP_CHECK(strstr(t, "FLOPs: 2 FLOPs per multiply-add") != NULL);
    mem_free(&o);
}

/* hw show by alias, and a name that is neither a system nor a GPU. */
static void test_hw_show(void)
{
    memout o;
    tp_err e = {0};
    mem_open(&o);
    TP_CHECK_INT(emit_hw_show(o.f, EMIT_JSON, db, "h100", &e), TP_OK);
    cJSON *j = mem_json(&o);
    TP_CHECK_STR(j ? str(j, "name") : NULL, "h100-sxm");
    cJSON_Delete(j);
    mem_free(&o);

    mem_open(&o);
    TP_CHECK_INT(emit_hw_show(o.f, EMIT_TABLE, db, "perlmuter", &e), TP_EDATA);
    TP_CHECK(strstr(e.msg, "did you mean 'perlmutter'") != NULL);
    TP_CHECK_STR(mem_text(&o), "");
    mem_free(&o);
}

/* hw check: a good file, a missing one (TP_ENOINPUT wins), the count. */
static void test_hw_check(void)
{
    char good[1024], none[1024];
    snprintf(good, sizeof good, "%s/hw/good/gpus/testgpu.json", fixtures);
    snprintf(none, sizeof none, "%s/hw/bad/nope.json", fixtures);
    const char *dirs[1] = {builtin};
    const char *files[2] = {good, none};
    emit_check_ask a = {.format = EMIT_TABLE, .files = files, .nfiles = 1,
                        .hwdb_dirs = dirs, .n_hwdb = 1};
    memout o;
    tp_err e = {0};
    mem_open(&o);
    TP_CHECK_INT(emit_hw_check(&a, o.f, &e), TP_OK);
    TP_CHECK(strstr(mem_text(&o), "testgpu.json: ok") != NULL);
    mem_free(&o);

    a.nfiles = 2;
    a.format = EMIT_JSON;
    mem_open(&o);
    TP_CHECK_INT(emit_hw_check(&a, o.f, &e), TP_ENOINPUT);
    TP_CHECK_STR(e.msg, "1 of 2 file(s) have problems");
    cJSON *j = mem_json(&o);
    TP_CHECK(cJSON_IsArray(j) && cJSON_GetArraySize(j) == 2);
    if (cJSON_IsArray(j) && cJSON_GetArraySize(j) == 2) {
        TP_CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(j, 0), "ok")));
        TP_CHECK(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(j, 1), "ok")));
    }
    cJSON_Delete(j);
    mem_free(&o);
}

/* coll show: eos's measured 1x8 table answers 1 GiB; a group the system
 * cannot have is TP_EDATA naming it, with nothing printed. */
static void test_coll_show(void)
{
    double sizes[1] = {1073741824.0};
    emit_coll_ask a = {.format = EMIT_JSON, .system = "eos",
                       .kind = EST_COLL_ALLREDUCE, .sizes_bytes = sizes,
                       .nsizes = 1, .nodes = 1, .per_node = 8};
    memout o;
    tp_err e = {0};
    mem_open(&o);
    TP_CHECK_INT(emit_coll_show(&a, db, o.f, &e), TP_OK);
    cJSON *j = mem_json(&o);
    const cJSON *s = j ? cJSON_GetArrayItem(cJSON_GetObjectItem(j, "sizes"), 0)
                       : NULL;
    TP_CHECK_STR(s ? str(s, "source") : NULL, "measured");
    TP_CHECK_INT(j ? num(j, "ranks") : 0, 8);
    cJSON_Delete(j);
    mem_free(&o);

    a.per_node = 16;
    mem_open(&o);
    TP_CHECK_INT(emit_coll_show(&a, db, o.f, &e), TP_EDATA);
    TP_CHECK(strstr(e.msg, "--group 1x16 on eos") != NULL);
    TP_CHECK_STR(mem_text(&o), "");
    mem_free(&o);

    a.system = "eosx";
    TP_CHECK_INT(emit_coll_cv(&a, db, stdout, &e), TP_EDATA);
    TP_CHECK(strstr(e.msg, "unknown system 'eosx'") != NULL);
}

/* op show: a shape of an operator h100-sxm has fitted samples of. */
static void test_op_show(void)
{
    memout o, w;
    tp_err e = {0};
    mem_open(&w);
    emit_op_ask a = {.format = EMIT_JSON, .err = w.f, .gpu = "h100",
                     .op = "linear3", .dtype = -1};
    for (int c = 0; c < EST_NCOLS; c++) a.shape[c] = -1;
    a.shape[EST_COL_MP] = 1;
    a.shape[EST_COL_B] = 4;
    a.shape[EST_COL_L] = 2048;
    a.shape[EST_COL_DIM] = 4096;
    mem_open(&o);
    TP_CHECK_INT(emit_op_show(&a, db, o.f, &e), TP_OK);
    cJSON *j = mem_json(&o);
    TP_CHECK_STR(j ? str(j, "gpu") : NULL, "h100-sxm");
    TP_CHECK_STR(j ? str(j, "source") : NULL, "fit");
    TP_CHECK(j && num(j, "time_fwd_s") >= num(j, "floor_fwd_s"));
    cJSON_Delete(j);
    mem_free(&o);
    mem_text(&w);
    mem_free(&w);

    a.gpu = "h101";
    TP_CHECK_INT(emit_op_show(&a, db, stdout, &e), TP_EDATA);
    TP_CHECK(strstr(e.msg, "unknown GPU 'h101'") != NULL);
}

/* The fixtures' logs: the warm-up dropped (two of ten, one of six), the
 * kind recognised, an empty log and a missing one refused. */
static void test_train_log(void)
{
    static const struct {
        const char *file;
        int kind, lines, used;
    } cases[] = {{"megatron.log", EST_LOG_MEGATRON, 10, 8},
                 {"nemo2.log", EST_LOG_NEMO, 6, 4},
                 {"torchtitan.log", EST_LOG_TORCHTITAN, 0, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/logs/%s", fixtures, cases[i].file);
        est_train_log lg;
        tp_err e = {0};
        TP_CHECK_INT(est_train_log_read(path, &lg, &e), TP_OK);
        TP_CHECK_INT(lg.kind, cases[i].kind);
        if (cases[i].lines) {
            TP_CHECK_INT(lg.lines, cases[i].lines);
            TP_CHECK_INT(lg.used, cases[i].used);
            TP_CHECK(lg.iteration_s > 0 && lg.tps_per_gpu == 0);
        } else {
            TP_CHECK(lg.tps_per_gpu > 0 && lg.iteration_s == 0);
            TP_CHECK(lg.max_reserved_bytes > 0);
        }
    }
    char path[1024];
    est_train_log lg;
    tp_err e = {0};
    snprintf(path, sizeof path, "%s/logs/empty.log", fixtures);
    TP_CHECK_INT(est_train_log_read(path, &lg, &e), TP_EDATA);
    TP_CHECK(strstr(e.msg, "no iteration time found") != NULL);
    snprintf(path, sizeof path, "%s/logs/no-such.log", fixtures);
    TP_CHECK_INT(est_train_log_read(path, &lg, &e), TP_ENOINPUT);
}

/* The "measured" object: the error in percent, null where the log has
 * no figure, no calibration unless one was found. */
static void test_fed_json(void)
{
    est_train_log lg = {.kind = EST_LOG_NEMO, .lines = 6, .used = 4,
                        .iteration_s = 2.0, .fwd_bwd_s = NAN,
                        .optimizer_s = NAN};
    est_run_fed f = {.log = &lg, .measured_s = 2.0, .estimated_s = 2.2};
    cJSON *j = cJSON_CreateObject();
    emit_fed_json(j, &f, "run.log");
    const cJSON *m = cJSON_GetObjectItem(j, "measured");
    TP_CHECK_REL(num(m, "error_pct"), 10.0, 1e-12);
    TP_CHECK_STR(str(m, "framework"), "NeMo 2");
    TP_CHECK(cJSON_IsNull(cJSON_GetObjectItem(m, "forward_backward_s")));
    TP_CHECK(cJSON_IsNull(cJSON_GetObjectItem(m, "calibration")));
    cJSON_Delete(j);

    memout o;
    mem_open(&o);
    est_band band = {.basis = EST_BAND_NONE};
    emit_fed_print(o.f, &f, "run.log", &band);
    const char *t = mem_text(&o);
    TP_CHECK(strstr(t, "measured 2.0000 s, estimated 2.2000 s: +10.0 %") != NULL);
    TP_CHECK(strstr(t, "error band") == NULL);
    mem_free(&o);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_report FIXTURES HWDB_DATA\n");
        return 2;
    }
    fixtures = argv[1];
    builtin = argv[2];
    const char *dirs[1] = {builtin};
    tp_err e = {0};
    db = hw_db_open_dirs(dirs, 1, &e);
    if (!db) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    TP_RUN(test_model_show);
    TP_RUN(test_hw_show);
    TP_RUN(test_hw_check);
    TP_RUN(test_coll_show);
    TP_RUN(test_op_show);
    TP_RUN(test_train_log);
    TP_RUN(test_fed_json);
    hw_db_free(db);
    return TP_TEST_EXIT();
}
