/*
 * test_lib.c - the public library (include/trainplan.h) as a client sees
 * it, linked against libtrainplan.so: every call made twice in one
 * process gives the same bytes, the JSON calls give exactly what the
 * executable prints with --format json, the plain structs hold the JSON's
 * numbers, and bad requests (unknown model, unknown key, not JSON) come
 * back as a status and a message, not a crash (run under ASan in CI);
 * two threads calling at once get the same answer; a sweep's records
 * come back to the caller (a memory stream, a FILE, tp_sweep_json with
 * the spec's path or the spec itself) as the executable's bytes, and a
 * spec given as an object leaves no temporary file behind; the caller's
 * standard output survives any request ("sbatch": "-", "svg": "-"), and
 * "-" writes the caller's stream, left open; the header's contract holds
 * (issue 30: infeasible is 1 with the struct and a message, keys no call
 * honours refused when set, duplicate keys and NULs refused, NULL
 * arguments 64, never a crash); the struct calls (API 4,
 * tp_session_estimate_from_json and its array form
 * tp_session_estimate_many_json) hold the JSON's figures, from any
 * thread.
 *
 * usage: test_lib TRAINPLAN_EXECUTABLE
 */
#define _GNU_SOURCE /* open_memstream, popen */
#include "trainplan.h"
#include "tp_test.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *exe;

/* argv strings (tp_run takes execv's char *const argv[]). */
#define S(lit) ((char *)(lit))

/* What `exe ARGS` prints on standard output; the caller frees it. */
static char *run_exe(const char *args, int *status)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>/dev/null", exe, args);
    FILE *p = popen(cmd, "r");
    if (!p) return NULL;
    size_t len = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    size_t k;
    while ((k = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += k;
        if (cap - len < 2) buf = realloc(buf, cap *= 2);
    }
    buf[len] = '\0';
    int st = pclose(p);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return buf;
}

#define SEARCH_ARGS                                                            \
    "--model gpt-neox-20b --system perlmutter --max-gpus 128 --seq-length "    \
    "2048 --global-batch-size 1024 --no-timing"
static const char *search_req =
    "{\"model\": \"gpt-neox-20b\", \"system\": \"perlmutter\", \"max_gpus\": "
    "128, \"seq-length\": 2048, \"global_batch_size\": 1024, \"no_timing\": "
    "true}";

static void test_version(void)
{
    TP_CHECK_INT(tp_api_version(), TP_API_VERSION);
    TP_CHECK(strlen(tp_version()) >= 5);
}

/* tp_run into memory streams, twice, and the same bytes as the program. */
static void test_run(void)
{
    char *const argv[] = {S("trainplan"), S("search"), S("--model"), S("gpt-neox-20b"),
                          S("--system"), S("perlmutter"), S("--max-gpus"), S("128"),
                          S("--seq-length"), S("2048"), S("--global-batch-size"),
                          S("1024"), S("--no-timing"), S("--format"), S("json")};
    int argc = (int)(sizeof argv / sizeof argv[0]);
    char *first = NULL;
    for (int k = 0; k < 2; k++) {
        char *obuf = NULL, *ebuf = NULL;
        size_t olen = 0, elen = 0;
        FILE *out = open_memstream(&obuf, &olen);
        FILE *err = open_memstream(&ebuf, &elen);
        TP_CHECK_INT(tp_run(argc, argv, out, err), 0);
        fclose(out);
        fclose(err);
        TP_CHECK(olen > 1000);
        TP_CHECK_INT(elen, 0);
        if (k == 0) first = obuf;
        else {
            TP_CHECK(strcmp(first, obuf) == 0);
            free(obuf);
        }
        free(ebuf);
    }
    /* argv untouched though the parser rearranges its vector */
    TP_CHECK(strcmp(argv[1], "search") == 0 && strcmp(argv[2], "--model") == 0);
    int st = 0;
    char *cli = run_exe("search " SEARCH_ARGS " --format json", &st);
    TP_CHECK_INT(st, 0);
    TP_CHECK(cli && first && strcmp(cli, first) == 0);
    free(cli);
    free(first);

    /* usage errors go to err, never exit */
    char *const bad[] = {S("trainplan"), S("search"), S("--no-such-option")};
    char *ebuf = NULL;
    size_t elen = 0;
    FILE *err = open_memstream(&ebuf, &elen);
    TP_CHECK_INT(tp_run(3, bad, stdout, err), 64);
    fclose(err);
    TP_CHECK(ebuf && strstr(ebuf, "unknown option '--no-such-option'"));
    free(ebuf);
}

static void test_search_json(void)
{
    int st = 0;
    char *cli = run_exe("search " SEARCH_ARGS " --format json", &st);
    for (int k = 0; k < 2; k++) {
        char *res = NULL, *err = NULL;
        TP_CHECK_INT(tp_search_json(search_req, &res, &err), 0);
        TP_CHECK(err == NULL);
        TP_CHECK(res && cli && strcmp(res, cli) == 0);
        tp_free(res);
        tp_free(err);
    }
    free(cli);

    /* the plain structs: the JSON's ranked rows */
    tp_request *q = tp_request_new();
    char *msg = NULL;
    TP_CHECK_INT(tp_request_set(q, "model", "gpt-neox-20b", &msg), 0);
    TP_CHECK_INT(tp_request_set(q, "system", "perlmutter", NULL), 0);
    TP_CHECK_INT(tp_request_set(q, "max_gpus", "128", NULL), 0);
    TP_CHECK_INT(tp_request_set(q, "seq-length", "2048", NULL), 0);
    TP_CHECK_INT(tp_request_set(q, "global_batch_size", "1024", NULL), 0);
    TP_CHECK_INT(tp_request_set(q, "top", "3", NULL), 0);
    tp_layout top[8];
    int n = 0;
    TP_CHECK_INT(tp_search(q, top, 8, &n, &msg), 0);
    TP_CHECK_INT(n, 3);
    char *res = NULL;
    TP_CHECK_INT(tp_call("search", q, &res, NULL), 0);
    cJSON *root = cJSON_Parse(res);
    const cJSON *r0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "ranked"), 0);
    TP_CHECK(r0 && strcmp(top[0].tag, cJSON_GetObjectItem(r0, "layout")->valuestring) == 0);
    TP_CHECK(strcmp(top[0].system, "perlmutter") == 0);
    TP_CHECK_INT(top[0].tp * top[0].pp * top[0].cp * top[0].dp, top[0].gpus);
    TP_CHECK(top[0].iteration_time_s > 0 && top[0].iteration_time_s <= top[1].iteration_time_s);
    TP_CHECK(top[0].peak_memory_bytes > 1e9 && top[0].mfu > 0 && top[0].mfu < 1);
    TP_CHECK(top[0].cost_per_iteration_usd > 0);
    cJSON_Delete(root);
    tp_free(res);
    tp_free(msg);

    /* a flag given a value, a value missing, an unknown key */
    msg = NULL;
    TP_CHECK_INT(tp_request_set(q, "no_timing", "yes", &msg), 64);
    TP_CHECK(msg && strstr(msg, "is a flag"));
    tp_free(msg);
    TP_CHECK_INT(tp_request_set(q, "max_gpus", NULL, &msg), 64);
    TP_CHECK(msg && strstr(msg, "needs a value"));
    tp_free(msg);
    TP_CHECK_INT(tp_request_set(q, "max_gpu", "8", &msg), 64);
    TP_CHECK(msg && strstr(msg, "'max_gpu'") && strstr(msg, "max-gpus"));
    tp_free(msg);
    tp_request_free(q);
    tp_request_free(NULL);
}

static void test_estimate(void)
{
    const char *req = "{\"model\": \"gpt-neox-20b\", \"system\": \"perlmutter\", "
                      "\"gpus\": 128, \"seq_length\": 2048, "
                      "\"global_batch_size\": 1024, \"tensor_model_parallel_size\": 4, "
                      "\"pipeline_model_parallel_size\": 4, \"sequence_parallel\": true}";
    char *res = NULL, *err = NULL;
    TP_CHECK_INT(tp_estimate_json(req, &res, &err), 0);
    int st = 0;
    char *cli = run_exe("estimate --model gpt-neox-20b --system perlmutter "
                        "--gpus 128 --seq-length 2048 --global-batch-size 1024 "
                        "-t 4 -p 4 --sequence-parallel --format json", &st);
    TP_CHECK(res && cli && strcmp(res, cli) == 0);
    free(cli);
    tp_free(err);

    int rc = 0;
    tp_request *q = tp_request_from_json(req, &rc, &err);
    TP_CHECK(q != NULL && rc == 0 && err == NULL);
    tp_estimate_result r;
    TP_CHECK_INT(tp_estimate(q, &r, NULL), 0);
    cJSON *root = cJSON_Parse(res);
    TP_CHECK_REL(r.layout.iteration_time_s,
                 cJSON_GetObjectItem(root, "iteration_time_s")->valuedouble, 0);
    TP_CHECK_INT(r.layout.tp, 4);
    TP_CHECK_INT(r.layout.pp, 4);
    TP_CHECK_INT(r.layout.sequence_parallel, 1);
    TP_CHECK_INT(r.layout.gpus, 128);
    TP_CHECK(strcmp(r.layout.system, "perlmutter") == 0);
    TP_CHECK(r.gpu_memory_bytes > 4e10 && r.layout.peak_memory_bytes > 1e9);
    TP_CHECK_INT(r.feasible, cJSON_IsTrue(cJSON_GetObjectItem(root, "feasible")));
    cJSON_Delete(root);
    tp_free(res);
    tp_request_free(q);
}

static void test_model(void)
{
    char *res = NULL, *err = NULL;
    TP_CHECK_INT(tp_model_json("{\"name\": \"gpt-neox-20b\"}", &res, &err), 0);
    int st = 0;
    char *cli = run_exe("model show gpt-neox-20b --format json", &st);
    TP_CHECK(res && cli && strcmp(res, cli) == 0);
    free(cli);
    tp_free(res);
    tp_free(err);
}

/* Bad requests: a status and the command's message, no output, and the
 * next call unaffected. */
static void test_errors(void)
{
    char *res = NULL, *err = NULL;
    int rc = tp_search_json("{\"model\": \"no-such-model\", \"system\": "
                            "\"perlmutter\", \"max_gpus\": 8, \"seq_length\": "
                            "2048, \"global_batch_size\": 8}",
                            &res, &err);
    TP_CHECK(rc == 64 || rc == 65 || rc == 66);
    TP_CHECK(res == NULL);
    TP_CHECK(err && strstr(err, "no-such-model"));
    tp_free(res);
    tp_free(err);

    rc = tp_model_json("{\"name\": \"no-such-model\"}", &res, &err);
    TP_CHECK(rc == 64 || rc == 65 || rc == 66);
    TP_CHECK(res == NULL && err && strstr(err, "no-such-model"));
    tp_free(err);

    rc = tp_search_json("{\"model\": ", &res, &err);
    TP_CHECK_INT(rc, 64);
    TP_CHECK(res == NULL && err && strstr(err, "not JSON"));
    tp_free(err);
    rc = tp_search_json("[1, 2]", &res, &err);
    TP_CHECK_INT(rc, 64);
    TP_CHECK(err && strstr(err, "not a JSON object"));
    tp_free(err);
    rc = tp_search_json("{\"max_gpu\": 8}", &res, &err);
    TP_CHECK_INT(rc, 64);
    TP_CHECK(err && strstr(err, "max-gpus"));
    tp_free(err);
    rc = tp_search_json("{\"format\": \"csv\"}", &res, &err);
    TP_CHECK_INT(rc, 64);
    tp_free(err);
    rc = tp_search_json("{\"model\": {\"a\": 1}}", &res, &err);
    TP_CHECK_INT(rc, 64);
    tp_free(err);
    /* a value out of range: the command's message, naming the option */
    rc = tp_search_json("{\"model\": \"gpt-neox-20b\", \"system\": "
                        "\"perlmutter\", \"max_gpus\": 0}",
                        &res, &err);
    TP_CHECK_INT(rc, 64);
    TP_CHECK(err && strstr(err, "--max-gpus") && strstr(err, "'0'"));
    tp_free(res);
    tp_free(err);

    tp_layout top[2];
    int n = -1;
    int st = 0;
    tp_request *q = tp_request_from_json("{\"model\": \"no-such-model\"}", &st, NULL);
    TP_CHECK(q != NULL);
    rc = tp_search(q, top, 2, &n, NULL);
    TP_CHECK(rc != 0 && n == 0);
    tp_request_free(q);
    q = tp_request_from_json("{\"model\": 3", &st, NULL);
    TP_CHECK(q == NULL && st == 64);
}

/* Calls from two threads at once: serialized inside, the same answer. */
static void *search_thread(void *arg)
{
    char **res = arg;
    char *err = NULL;
    if (tp_search_json(search_req, res, &err) != 0) {
        tp_free(*res);
        *res = NULL;
    }
    tp_free(err);
    return NULL;
}

static void test_threads(void)
{
    pthread_t t[2];
    char *res[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++)
        TP_CHECK_INT(pthread_create(&t[i], NULL, search_thread, &res[i]), 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    TP_CHECK(res[0] && res[1] && strcmp(res[0], res[1]) == 0);
    tp_free(res[0]);
    tp_free(res[1]);
}

/* The entries of directory d but . and .. */
static int dir_entries(const char *d)
{
    DIR *dir = opendir(d);
    if (!dir) return -1;
    int n = 0;
    for (struct dirent *x; (x = readdir(dir));)
        n += strcmp(x->d_name, ".") != 0 && strcmp(x->d_name, "..") != 0;
    closedir(dir);
    return n;
}

#define SWEEP_SPEC                                                             \
    "{\"models\": [\"gpt3-1.7b\", \"llama2-7b\"], \"systems\": [\"eos\"], "  \
    "\"gpus\": [8, 16], \"seq_lengths\": [2048], \"global_batch_sizes\": "    \
    "[256], \"tokens\": [1e11], \"options\": {\"top\": 2}}"

/* A sweep of 4 scenarios: the executable's records, byte for byte, from
 * tp_run into a memory stream and into a FILE with a descriptor, and from
 * tp_sweep_json and tp_call_json("sweep") with the spec's path or the
 * spec itself, twice each; bad specs and requests come back as statuses,
 * and no temporary spec file stays in $TMPDIR. */
static void test_sweep(void)
{
    char dir[] = "/tmp/tp_test_lib_XXXXXX";
    TP_CHECK(mkdtemp(dir) != NULL);
    const char *old_tmp = getenv("TMPDIR");
    char *saved_tmp = old_tmp ? strdup(old_tmp) : NULL;
    setenv("TMPDIR", dir, 1);
    char spec[64];
    snprintf(spec, sizeof spec, "%s/spec.json", dir);
    FILE *f = fopen(spec, "w");
    TP_CHECK(f != NULL);
    fputs(SWEEP_SPEC, f);
    fclose(f);

    char args[128];
    snprintf(args, sizeof args, "sweep '%s'", spec);
    int st = -1;
    char *cli = run_exe(args, &st);
    TP_CHECK_INT(st, 0);
    int lines = 0;
    for (const char *p = cli; p && *p; p++) lines += *p == '\n';
    TP_CHECK_INT(lines, 4);
    TP_CHECK(cli && strstr(cli, "\"index\":3,\"count\":4,"));

    /* tp_run: into a memory stream (no descriptor), then a FILE (one) */
    char *const argv[] = {S("trainplan"), S("sweep"), spec};
    for (int k = 0; k < 2; k++) {
        char *obuf = NULL;
        size_t olen = 0;
        FILE *out = open_memstream(&obuf, &olen);
        TP_CHECK_INT(tp_run(3, argv, out, NULL), 0);
        fclose(out);
        TP_CHECK(obuf && cli && strcmp(obuf, cli) == 0);
        free(obuf);
    }
    FILE *tf = tmpfile();
    fputs("before\n", tf); /* buffered: out before the records */
    TP_CHECK_INT(tp_run(3, argv, tf, NULL), 0);
    TP_CHECK(fputs("after\n", tf) >= 0 && fflush(tf) == 0); /* still open */
    long size = ftell(tf);
    rewind(tf);
    char *fbuf = calloc(1, (size_t)size + 1);
    TP_CHECK(fread(fbuf, 1, (size_t)size, tf) == (size_t)size);
    fclose(tf);
    TP_CHECK(strncmp(fbuf, "before\n", 7) == 0);
    TP_CHECK(cli && strncmp(fbuf + 7, cli, strlen(cli)) == 0);
    TP_CHECK(strcmp(fbuf + 7 + (cli ? strlen(cli) : 0), "after\n") == 0);
    free(fbuf);

    /* the JSON calls: the spec's path ("args", "spec") or the spec */
    char req_args[128], req_spec[128];
    const char *reqs[3] = {req_args, req_spec, "{\"spec\": " SWEEP_SPEC "}"};
    snprintf(req_args, sizeof req_args, "{\"args\": [\"%s\"]}", spec);
    snprintf(req_spec, sizeof req_spec, "{\"spec\": \"%s\", \"threads\": 2}",
             spec);
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 2; k++) {
            char *res = NULL, *err = NULL;
            int rc = k ? tp_call_json("sweep", reqs[i], &res, &err)
                       : tp_sweep_json(reqs[i], &res, &err);
            TP_CHECK_INT(rc, 0);
            TP_CHECK(err == NULL);
            TP_CHECK(res && cli && strcmp(res, cli) == 0);
            tp_free(res);
            tp_free(err);
        }
    TP_CHECK_INT(dir_entries(dir), 1); /* spec.json alone */

    /* a bad spec object: every problem named, the file removed */
    char *res = NULL, *err = NULL;
    int rc = tp_sweep_json("{\"spec\": {\"models\": [\"no-such-model\"], "
                           "\"systems\": [\"eos\"], \"gpus\": [0]}}",
                           &res, &err);
    TP_CHECK(rc == 64 || rc == 65);
    TP_CHECK(res == NULL && err && strstr(err, "no-such-model"));
    TP_CHECK(err && strstr(err, "trainplan-spec-"));
    tp_free(err);
    TP_CHECK_INT(dir_entries(dir), 1);
    static const char *const bad[] = {
        "{\"spec\": 3}",                                 /* not a spec */
        "{\"spec\": {}, \"resume\": true}",              /* needs -o */
        "{\"spec\": {\"models\": []}, \"max_gpu\": 8}",  /* unknown key */
        "{\"spec\": {\"models\": []}, \"output\": \"x\"}", /* refused */
        "{\"spec\": {}, \"spec\": {}}"};                 /* twice */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err = NULL;
        TP_CHECK_INT(tp_sweep_json(bad[i], &res, &err), 64);
        TP_CHECK(res == NULL && err != NULL);
        tp_free(err);
    }
    TP_CHECK_INT(dir_entries(dir), 1);
    /* "spec" is sweep's alone */
    TP_CHECK_INT(tp_search_json("{\"spec\": {}}", &res, &err), 64);
    tp_free(err);
    /* a TMPDIR that cannot take the file: 74, named */
    setenv("TMPDIR", "/nonexistent-tp-dir", 1);
    TP_CHECK_INT(tp_sweep_json("{\"spec\": {}}", &res, &err), 74);
    TP_CHECK(err && strstr(err, "/nonexistent-tp-dir"));
    tp_free(err);

    if (saved_tmp) setenv("TMPDIR", saved_tmp, 1);
    else unsetenv("TMPDIR");
    free(saved_tmp);
    unlink(spec);
    rmdir(dir);
    free(cli);
}

/* Issue 30: a request naming "-" for --sbatch or --svg closed the
 * process's standard output (Python's next print raised EBADF, and the
 * next file opened became descriptor 1). Now "-" is the caller's stream,
 * refused (64) where the command's output already goes there, and never
 * closed. */
static void test_streams(void)
{
    /* descriptor 1 on a file of ours for the test, the old one kept */
    char path[] = "/tmp/test_lib_stdout_XXXXXX";
    int fd = mkstemp(path);
    TP_CHECK(fd >= 0);
    fflush(stdout);
    int saved = dup(1);
    TP_CHECK(saved >= 0 && dup2(fd, 1) == 1);
    close(fd);
    static const char *const reqs[] = {
        "{\"model\": \"gpt-neox-20b\", \"system\": \"perlmutter\", "
        "\"max_gpus\": 128, \"seq_length\": 2048, \"global_batch_size\": "
        "1024, \"sbatch\": \"-\"}",
        "{\"model\": \"gpt-neox-20b\", \"system\": \"perlmutter\", "
        "\"max_gpus\": 128, \"seq_length\": 2048, \"global_batch_size\": "
        "1024, \"svg\": \"-\"}"};
    for (int i = 0; i < 2; i++) {
        char *res = NULL, *err = NULL;
        TP_CHECK_INT(tp_search_json(reqs[i], &res, &err), 64);
        /* refused when set (lib/request.c file_outputs): a JSON
         * call's own stream is its JSON */
        TP_CHECK(err && strstr(err, "cannot be given to a library call"));
        tp_free(res);
        tp_free(err);
        /* standard output is still open, and still ours */
        TP_CHECK(fcntl(1, F_GETFD) != -1);
        TP_CHECK(fprintf(stdout, "still here %d\n", i) > 0 && fflush(stdout) == 0);
    }
    /* -o FILE --sbatch -: the script goes to the caller's stream, which
     * stays open; the table to the file. */
    char table[] = "/tmp/test_lib_table_XXXXXX";
    int tfd = mkstemp(table);
    TP_CHECK(tfd >= 0);
    close(tfd);
    char *const argv[] = {S("trainplan"), S("search"), S("--model"),
                          S("gpt-neox-20b"), S("--system"), S("perlmutter"),
                          S("--max-gpus"), S("128"), S("--seq-length"),
                          S("2048"), S("--global-batch-size"), S("1024"),
                          S("-o"), table, S("--sbatch"), S("-")};
    char *obuf = NULL;
    size_t olen = 0;
    FILE *out = open_memstream(&obuf, &olen);
    TP_CHECK_INT(tp_run((int)(sizeof argv / sizeof argv[0]), argv, out, NULL), 0);
    TP_CHECK(fputs("after\n", out) >= 0 && fflush(out) == 0);
    fclose(out);
    TP_CHECK(obuf && strncmp(obuf, "#!/bin/bash\n", 12) == 0);
    TP_CHECK(obuf && strstr(obuf, "after\n"));
    free(obuf);
    unlink(table);
    TP_CHECK(fcntl(1, F_GETFD) != -1);
    /* what the test wrote to descriptor 1 is all there */
    fflush(stdout);
    TP_CHECK(dup2(saved, 1) == 1);
    close(saved);
    FILE *f = fopen(path, "r");
    char got[64] = "";
    TP_CHECK(f && fread(got, 1, sizeof got - 1, f) > 0);
    if (f) fclose(f);
    TP_CHECK_STR(got, "still here 0\nstill here 1\n");
    unlink(path);
}

/* Issue 30: the header's contract. An infeasible estimate is 1 with the
 * struct filled and a message; keys no call can honour are refused when
 * set; a JSON request with a key twice or a NUL is refused; NULL
 * arguments are 64 with a message, never a crash. */
static void test_contract(void)
{
    /* infeasible: 1 (the command's status), the struct filled, a message */
    const char *oom = "{\"model\": \"gpt-neox-20b\", \"system\": \"perlmutter\", "
                      "\"gpus\": 8, \"seq_length\": 2048, \"global_batch_size\": 8, "
                      "\"tensor_model_parallel_size\": 1, "
                      "\"pipeline_model_parallel_size\": 1}";
    int st = -1;
    char *msg = NULL, *res = NULL;
    tp_request *q = tp_request_from_json(oom, &st, &msg);
    TP_CHECK(q && st == 0 && msg == NULL);
    tp_estimate_result r;
    TP_CHECK_INT(tp_estimate(q, &r, &msg), 1);
    TP_CHECK_INT(r.feasible, 0);
    TP_CHECK_STR(r.reason, "out_of_memory");
    TP_CHECK(r.layout.peak_memory_bytes > r.gpu_memory_bytes);
    TP_CHECK(msg && strstr(msg, "not feasible (out_of_memory)"));
    tp_free(msg);
    msg = NULL;
    TP_CHECK_INT(tp_estimate_json(oom, &res, &msg), 1);
    TP_CHECK(res && strstr(res, "\"feasible\":\tfalse"));
    TP_CHECK(msg && strstr(msg, "GiB"));
    tp_free(res);
    tp_free(msg);

    /* keys no call can honour: refused at set time, q unchanged */
    static const char *const refused[][2] = {
        {"output", "x.json"}, {"format", "csv"}, {"help", NULL},
        {"version", NULL}, {"list_options", NULL}, {"svg", "-"},
        {"sbatch", "-"}};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        msg = NULL;
        TP_CHECK_INT(tp_request_set(q, refused[i][0], refused[i][1], &msg), 64);
        TP_CHECK(msg && strstr(msg, refused[i][0]));
        tp_free(msg);
    }
    TP_CHECK_INT(tp_estimate(q, &r, NULL), 1); /* q as it was */
    res = msg = NULL;
    TP_CHECK_INT(tp_estimate_json("{\"output\": \"x.json\"}", &res, &msg), 64);
    TP_CHECK(res == NULL && msg && strstr(msg, "'output'"));
    tp_free(msg);

    /* duplicate keys, as written or as one option; inside the spec too */
    static const char *const dups[] = {
        "{\"model\": \"llama3-8b\", \"model\": \"gpt-neox-20b\"}",
        "{\"max_gpus\": 8, \"max-gpus\": 16}",
        "{\"spec\": {\"models\": [\"a\"], \"models\": [\"b\"]}}"};
    for (size_t i = 0; i < sizeof dups / sizeof dups[0]; i++) {
        msg = NULL;
        st = 0;
        TP_CHECK(tp_request_from_json(dups[i], &st, &msg) == NULL);
        TP_CHECK_INT(st, 64);
        TP_CHECK(msg && (strstr(msg, "twice") || strstr(msg, "one option")));
        tp_free(msg);
    }
    msg = NULL;
    TP_CHECK_INT(tp_sweep_json(dups[2], &res, &msg), 64);
    TP_CHECK(msg && strstr(msg, "$.spec") && strstr(msg, "models"));
    tp_free(msg);
    /* a NUL cannot hide the rest of a name */
    msg = NULL;
    TP_CHECK(tp_request_from_json("{\"model\": \"llama3-8b\\u0000x\"}", &st,
                                  &msg) == NULL);
    TP_CHECK(st == 64 && msg && strstr(msg, "NUL"));
    tp_free(msg);
    /* "\\u0000" is a backslash and "u0000", not a NUL */
    tp_request *q2 = tp_request_from_json("{\"model\": \"a\\\\u0000\"}", &st,
                                          NULL);
    TP_CHECK(q2 != NULL && st == 0);
    tp_request_free(q2);

    /* NULL arguments: 64 and a message */
    msg = NULL;
    TP_CHECK_INT(tp_request_set(q, NULL, "1", &msg), 64);
    TP_CHECK(msg && strstr(msg, "key is NULL"));
    tp_free(msg);
    TP_CHECK_INT(tp_request_set(NULL, "model", "x", NULL), 64);
    TP_CHECK_INT(tp_estimate(q, NULL, &msg), 64);
    TP_CHECK(msg && strstr(msg, "NULL"));
    tp_free(msg);
    tp_layout top[2];
    TP_CHECK_INT(tp_search(q, top, 2, NULL, &msg), 64);
    TP_CHECK(msg && strstr(msg, "NULL"));
    tp_free(msg);
    int n = -1;
    TP_CHECK_INT(tp_search(q, NULL, 2, &n, NULL), 64);
    TP_CHECK_INT(n, 0);
    TP_CHECK_INT(tp_search(q, top, -1, &n, NULL), 64);
    TP_CHECK_INT(tp_call(NULL, q, &res, &msg), 64);
    TP_CHECK(res == NULL && msg && strstr(msg, "command"));
    tp_free(msg);
    TP_CHECK_INT(tp_call_json("estimate", NULL, &res, &msg), 64);
    TP_CHECK(msg && strstr(msg, "NULL"));
    tp_free(msg);
    TP_CHECK(tp_request_from_json(NULL, NULL, NULL) == NULL);
    tp_request_arg(NULL, "x"); /* a no-op */
    tp_request_arg(q, NULL);   /* marks q: every call refuses it */
    TP_CHECK_INT(tp_estimate(q, &r, &msg), 64);
    TP_CHECK(msg && strstr(msg, "tp_request_arg"));
    tp_free(msg);
    tp_request_free(q);

    char *ebuf = NULL;
    size_t elen = 0;
    FILE *err = open_memstream(&ebuf, &elen);
    char *const holes[] = {S("trainplan"), NULL, S("model"), S("list")};
    TP_CHECK_INT(tp_run(4, holes, NULL, err), 64);
    TP_CHECK_INT(tp_run(0, holes, NULL, err), 64);
    TP_CHECK_INT(tp_run(1, NULL, NULL, err), 64);
    fclose(err);
    TP_CHECK(ebuf && strstr(ebuf, "argv[1] is NULL"));
    free(ebuf);

    /* completion: text, as the header says */
    res = NULL;
    TP_CHECK_INT(tp_call("completion bash", NULL, &res, NULL), 0);
    TP_CHECK(res && strstr(res, "complete"));
    tp_free(res);
}

/* ---- sessions ------------------------------------------------------------ */

static const char *estimate_req =
    "{\"model\": \"gpt-neox-20b\", \"system\": \"perlmutter\", \"gpus\": 128, "
    "\"seq_length\": 2048, \"global_batch_size\": 1024, "
    "\"tensor_model_parallel_size\": 4, \"pipeline_model_parallel_size\": 4, "
    "\"sequence_parallel\": true}";

/* A session's calls give the bytes the calls without one give, and its
 * errors the same statuses and messages. */
static void test_session(void)
{
    char *err = NULL;
    tp_session *s = tp_open(NULL, &err);
    TP_CHECK(s != NULL && err == NULL);
    const struct {
        const char *cmd, *req;
    } calls[] = {
        {"estimate", estimate_req},
        {"search", search_req},
        {"model show", "{\"args\": [\"llama3-8b\"]}"},
        {"model list", "{}"},
        {"hw show", "{\"args\": [\"eos\"]}"},
        {"estimate", "{\"model\": \"no-such-model\", \"system\": \"eos\", "
                     "\"gpus\": 8, \"seq_length\": 2048, \"global_batch_size\": 8}"},
        {"estimate", "{\"model\": \"llama3-8b\", \"system\": \"eos\", "
                     "\"gpus\": 8, \"seq_length\": 8192, \"global_batch_size\": 64, "
                     "\"hwdb\": [\"" TP_SOURCE_DIR "/tests/fixtures/hw/good\"]}"},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        for (int twice = 0; twice < 2; twice++) {
            char *a = NULL, *ea = NULL, *b = NULL, *eb = NULL;
            int ra = tp_call_json(calls[i].cmd, calls[i].req, &a, &ea);
            int rb = tp_session_call_json(s, calls[i].cmd, calls[i].req, &b, &eb);
            TP_CHECK_INT(rb, ra);
            TP_CHECK((!a && !b) || (a && b && strcmp(a, b) == 0));
            TP_CHECK((!ea && !eb) || (ea && eb && strcmp(ea, eb) == 0));
            if (!((!a && !b) || (a && b && strcmp(a, b) == 0)))
                fprintf(stderr, "  call %zu (%s) differs with a session\n", i,
                        calls[i].cmd);
            tp_free(a), tp_free(b), tp_free(ea), tp_free(eb);
        }
    }
    /* the plain structs */
    int rc = 0;
    tp_request *q = tp_request_from_json(estimate_req, &rc, NULL);
    tp_estimate_result r1, r2;
    TP_CHECK_INT(tp_estimate(q, &r1, NULL), 0);
    TP_CHECK_INT(tp_session_estimate(s, q, &r2, NULL), 0);
    TP_CHECK(memcmp(&r1, &r2, sizeof r1) == 0);
    tp_request_free(q);
    q = tp_request_from_json(search_req, &rc, NULL);
    tp_layout t1[4], t2[4];
    int n1 = 0, n2 = 0;
    memset(t1, 0, sizeof t1), memset(t2, 0, sizeof t2);
    TP_CHECK_INT(tp_search(q, t1, 4, &n1, NULL), 0);
    TP_CHECK_INT(tp_session_search(s, q, t2, 4, &n2, NULL), 0);
    TP_CHECK(n1 == 4 && n2 == 4 && memcmp(t1, t2, sizeof t1) == 0);
    tp_request_free(q);
    tp_close(s);
    tp_close(NULL);

    /* what a session refuses */
    int st = 0;
    err = NULL;
    TP_CHECK(tp_open_json("{\"model\": \"llama3-8b\"}", &st, &err) == NULL);
    TP_CHECK(st == 64 && err && strstr(err, "hwdb"));
    tp_free(err);
    TP_CHECK(tp_open_json("{\"hwdb\": [\"/no/such/dir\"]}", &st, &err) == NULL);
    TP_CHECK(st != 0 && err && strstr(err, "/no/such/dir"));
    tp_free(err);
    s = tp_open_json(NULL, &st, &err);
    TP_CHECK(s != NULL && st == 0 && err == NULL);
    char *res = (char *)1;
    TP_CHECK_INT(tp_session_call_json(NULL, "estimate", estimate_req, &res, &err), 64);
    TP_CHECK(res == NULL && err && strstr(err, "session is NULL"));
    tp_free(err);
    TP_CHECK_INT(tp_session_call_json(s, NULL, "{}", &res, &err), 64);
    tp_free(err);
    tp_close(s);
}

/* The struct of tp_session_estimate_from_json (filled by the command,
 * API 4) against the command's JSON read back as the library read it
 * before: every field, within the JSON's 15 significant digits; the
 * same struct as tp_session_estimate and tp_estimate; its errors. */
static double jnum(const cJSON *o, const char *k, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static void check_struct_against_json(const tp_estimate_result *r,
                                      const char *json)
{
    cJSON *j = cJSON_Parse(json);
    TP_CHECK(j != NULL);
    if (!j) return;
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(j, "layout");
    TP_CHECK_INT(r->feasible, cJSON_IsTrue(cJSON_GetObjectItem(j, "feasible")));
    TP_CHECK_STR(r->reason, jstr(j, "reason"));
    TP_CHECK_STR(r->gpu, jstr(j, "gpu"));
    TP_CHECK_STR(r->layout.system, jstr(j, "system"));
    TP_CHECK_STR(r->layout.tag, "");
    TP_CHECK_INT(r->layout.gpus, (int)jnum(l, "gpus", 0));
    TP_CHECK_INT(r->layout.tp, (int)jnum(l, "tensor_model_parallel_size", 1));
    TP_CHECK_INT(r->layout.pp, (int)jnum(l, "pipeline_model_parallel_size", 1));
    TP_CHECK_INT(r->layout.cp, (int)jnum(l, "context_parallel_size", 1));
    TP_CHECK_INT(r->layout.dp, (int)jnum(l, "data_parallel_size", 1));
    TP_CHECK_INT(r->layout.ep, (int)jnum(l, "expert_model_parallel_size", 1));
    TP_CHECK_INT(r->layout.etp, (int)jnum(l, "expert_tensor_parallel_size", 1));
    TP_CHECK_INT(r->layout.vpp, (int)jnum(l, "virtual_stages_per_pipeline_rank", 1));
    TP_CHECK_INT(r->layout.mbs, (int)jnum(l, "micro_batch_size", 0));
    TP_CHECK_INT(r->layout.gbs, (int)jnum(l, "global_batch_size", 0));
    TP_CHECK_INT(r->layout.seq_length, (int)jnum(l, "seq_length", 0));
    TP_CHECK_INT(r->layout.sequence_parallel,
                 cJSON_IsTrue(cJSON_GetObjectItem(l, "sequence_parallel")));
    TP_CHECK_STR(r->layout.recompute, jstr(l, "recompute_granularity"));
    TP_CHECK_INT(r->layout.zero_stage, (int)jnum(l, "zero_stage", 0));
    TP_CHECK_STR(r->layout.precision, jstr(l, "precision"));
    TP_CHECK_REL(r->layout.iteration_time_s, jnum(j, "iteration_time_s", 0), 1e-14);
    TP_CHECK_REL(r->layout.tokens_per_s, jnum(j, "tokens_per_s", 0), 1e-14);
    TP_CHECK_REL(r->layout.mfu, jnum(j, "mfu", 0), 1e-14);
    TP_CHECK_REL(r->layout.peak_memory_bytes, jnum(j, "peak_memory_bytes", 0),
                 1e-14);
    TP_CHECK_REL(r->gpu_memory_bytes, jnum(j, "gpu_memory_bytes", 0), 1e-14);
    TP_CHECK(r->layout.cost_per_iteration_usd < 0);
    cJSON_Delete(j);
}

static void test_estimate_from_json(void)
{
    tp_session *s = tp_open(NULL, NULL);
    TP_CHECK(s != NULL);
    static const struct {
        const char *req;
        int status;
    } cases[] = {
        {"{\"model\": \"gpt-neox-20b\", \"system\": \"perlmutter\", "
         "\"gpus\": 128, \"seq_length\": 2048, \"global_batch_size\": 1024, "
         "\"tensor_model_parallel_size\": 4, \"pipeline_model_parallel_size\": 4, "
         "\"sequence_parallel\": true}", 0},
        /* MoE: ep and etp from the layout, not 1 */
        {"{\"model\": \"mixtral-8x7b\", \"system\": \"eos\", \"gpus\": 64, "
         "\"seq_length\": 4096, \"global_batch_size\": 256, "
         "\"expert_model_parallel_size\": 4, \"tensor_model_parallel_size\": 2}", 0},
        /* fp8 on an H100 system, full recomputation */
        {"{\"model\": \"llama3-8b\", \"system\": \"eos\", \"gpus\": 16, "
         "\"seq_length\": 8192, \"global_batch_size\": 128, \"precision\": "
         "\"fp8\", \"recompute_granularity\": \"full\"}", 0},
        /* infeasible: 1, the struct filled */
        {"{\"model\": \"gpt-neox-20b\", \"system\": \"perlmutter\", "
         "\"gpus\": 8, \"seq_length\": 2048, \"global_batch_size\": 8, "
         "\"tensor_model_parallel_size\": 1, "
         "\"pipeline_model_parallel_size\": 1}", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *json = NULL, *ej = NULL, *es = NULL;
        tp_estimate_result r, r2, r3;
        int rj = tp_session_call_json(s, "estimate", cases[i].req, &json, &ej);
        int rs = tp_session_estimate_from_json(s, cases[i].req, &r, &es);
        TP_CHECK_INT(rj, cases[i].status);
        TP_CHECK_INT(rs, cases[i].status);
        TP_CHECK((!ej && !es) || (ej && es && strcmp(ej, es) == 0));
        if (json) check_struct_against_json(&r, json);
        int st = 0;
        tp_request *q = tp_request_from_json(cases[i].req, &st, NULL);
        TP_CHECK_INT(tp_session_estimate(s, q, &r2, NULL), cases[i].status);
        TP_CHECK_INT(tp_estimate(q, &r3, NULL), cases[i].status);
        TP_CHECK(memcmp(&r, &r2, sizeof r) == 0 && memcmp(&r, &r3, sizeof r) == 0);
        tp_request_free(q);
        tp_free(json), tp_free(ej), tp_free(es);
    }

    /* errors: 64 for a NULL session, result or request, a bad request;
     * the command's 65 for bad data; r zeroed, its cost < 0 */
    tp_estimate_result r;
    char *msg = NULL;
    memset(&r, 0xff, sizeof r);
    TP_CHECK_INT(tp_session_estimate_from_json(NULL, cases[0].req, &r, &msg), 64);
    TP_CHECK(msg && strstr(msg, "session is NULL"));
    TP_CHECK(r.layout.cost_per_iteration_usd < 0 && r.feasible == 0);
    tp_free(msg);
    TP_CHECK_INT(tp_session_estimate_from_json(s, cases[0].req, NULL, &msg), 64);
    TP_CHECK(msg && strstr(msg, "NULL"));
    tp_free(msg);
    static const char *const bad[] = {NULL, "not json", "[1]",
                                      "{\"no_such_key\": 1}",
                                      "{\"model\": \"a\", \"model\": \"b\"}",
                                      "{\"output\": \"x.json\"}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        msg = NULL;
        memset(&r, 0xff, sizeof r);
        TP_CHECK_INT(tp_session_estimate_from_json(s, bad[i], &r, &msg), 64);
        TP_CHECK(msg != NULL);
        TP_CHECK(r.feasible == 0 && r.layout.gpus == 0 && r.reason[0] == '\0');
        tp_free(msg);
    }
    msg = NULL;
    TP_CHECK_INT(tp_session_estimate_from_json(
                     s, "{\"model\": \"no-such-model\", \"system\": \"eos\", "
                        "\"gpus\": 8}", &r, &msg), 65);
    TP_CHECK(msg && strstr(msg, "no-such-model"));
    TP_CHECK(r.layout.cost_per_iteration_usd < 0 && r.layout.gpus == 0);
    tp_free(msg);
    TP_CHECK_INT(tp_session_estimate_from_json(s, cases[0].req, &r, NULL), 0);

    /* the same requests as one array: each result, status and message
     * the single call's; a bad element is its own status, not the call's */
    char arr[4096] = "[";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        strcat(arr, cases[i].req);
        strcat(arr, ", ");
    }
    strcat(arr, "{\"model\": \"no-such-model\", \"system\": \"eos\", "
                "\"gpus\": 8}, 7, {\"bogus\": 1}]");
    enum { NQ = sizeof cases / sizeof cases[0] + 3 };
    tp_estimate_result rs[NQ + 1];
    int st[NQ + 1], n = -1;
    char *errs[NQ + 1];
    TP_CHECK_INT(tp_session_estimate_many_json(s, arr, rs, st, errs, NQ + 1, &n,
                                               &msg), 0);
    TP_CHECK_INT(n, NQ);
    TP_CHECK(msg == NULL);
    for (int i = 0; i < n; i++) {
        tp_estimate_result one;
        char *e1 = NULL;
        int want = i < (int)(sizeof cases / sizeof cases[0])
                       ? tp_session_estimate_from_json(s, cases[i].req, &one, &e1)
                       : -1;
        if (want >= 0) {
            TP_CHECK_INT(st[i], want);
            TP_CHECK(memcmp(&rs[i], &one, sizeof one) == 0);
            TP_CHECK((!e1 && !errs[i]) || (e1 && errs[i] && strcmp(e1, errs[i]) == 0));
        }
        tp_free(e1);
    }
    int last = (int)(sizeof cases / sizeof cases[0]);
    TP_CHECK_INT(st[last], 65);
    TP_CHECK(errs[last] && strstr(errs[last], "no-such-model"));
    TP_CHECK_INT(st[last + 1], 64);
    TP_CHECK(errs[last + 1] && strstr(errs[last + 1], "element 5 is not a JSON object"));
    TP_CHECK_INT(st[last + 2], 64);
    TP_CHECK(errs[last + 2] && strstr(errs[last + 2], "bogus"));
    TP_CHECK(rs[last + 2].layout.cost_per_iteration_usd < 0 && rs[last + 2].layout.gpus == 0);
    for (int i = 0; i < n; i++) tp_free(errs[i]);
    /* messages dropped: errors NULL */
    TP_CHECK_INT(tp_session_estimate_many_json(s, arr, rs, st, NULL, NQ, &n, NULL), 0);
    TP_CHECK_INT(st[0], 0);
    /* the call's own errors: nothing run */
    static const char *const bad_arrays[] = {NULL, "not json", "{\"model\": \"x\"}",
                                             "[{\"model\": \"a\\u0000\"}]"};
    for (size_t i = 0; i < sizeof bad_arrays / sizeof bad_arrays[0]; i++) {
        msg = NULL;
        TP_CHECK_INT(tp_session_estimate_many_json(s, bad_arrays[i], rs, st, NULL,
                                                   NQ, &n, &msg), 64);
        TP_CHECK(msg != NULL);
        tp_free(msg);
    }
    msg = NULL;
    TP_CHECK_INT(tp_session_estimate_many_json(s, arr, rs, st, NULL, 2, &n, &msg), 64);
    TP_CHECK(n == NQ && msg && strstr(msg, "room for 2"));
    tp_free(msg);
    TP_CHECK_INT(tp_session_estimate_many_json(NULL, arr, rs, st, NULL, NQ, &n, NULL), 64);
    TP_CHECK_INT(tp_session_estimate_many_json(s, arr, rs, st, NULL, NQ, NULL, NULL), 64);
    TP_CHECK_INT(tp_session_estimate_many_json(s, arr, NULL, st, NULL, NQ, &n, NULL), 64);
    TP_CHECK_INT(tp_session_estimate_many_json(s, arr, rs, st, NULL, -1, &n, NULL), 64);
    TP_CHECK_INT(tp_session_estimate_many_json(s, "[]", NULL, NULL, NULL, 0, &n, NULL), 0);
    TP_CHECK_INT(n, 0);
    tp_close(s);
}

/* Estimates from four threads on one session at once: every answer the
 * single call's bytes, and the struct calls' the single call's struct. */
typedef struct sess_arg {
    tp_session *s;
    const char *want;
    tp_estimate_result want_r;
    int bad;
} sess_arg;

static void *session_thread(void *arg)
{
    sess_arg *a = arg;
    for (int i = 0; i < 20; i++) {
        tp_estimate_result r, two[2];
        if (tp_session_estimate_from_json(a->s, estimate_req, &r, NULL) != 0
            || memcmp(&r, &a->want_r, sizeof r) != 0)
            a->bad++;
        if (i % 5 == 0) {
            char arr[1024];
            snprintf(arr, sizeof arr, "[%s, %s]", estimate_req, estimate_req);
            int st[2] = {-1, -1}, n = 0;
            if (tp_session_estimate_many_json(a->s, arr, two, st, NULL, 2, &n,
                                              NULL) != 0
                || n != 2 || st[0] || st[1]
                || memcmp(&two[0], &a->want_r, sizeof r) != 0
                || memcmp(&two[1], &a->want_r, sizeof r) != 0)
                a->bad++;
        }
        char *res = NULL, *err = NULL;
        int rc = tp_session_call_json(a->s, i % 5 ? "estimate" : "search",
                                      i % 5 ? estimate_req : search_req, &res,
                                      &err);
        if (rc != 0 || !res || (i % 5 && strcmp(res, a->want) != 0)) a->bad++;
        tp_free(res), tp_free(err);
    }
    return NULL;
}

static void test_session_threads(void)
{
    tp_session *s = tp_open(NULL, NULL);
    TP_CHECK(s != NULL);
    char *want = NULL;
    TP_CHECK_INT(tp_estimate_json(estimate_req, &want, NULL), 0);
    tp_estimate_result want_r;
    TP_CHECK_INT(tp_session_estimate_from_json(s, estimate_req, &want_r, NULL), 0);
    pthread_t t[4];
    sess_arg a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (sess_arg){s, want, want_r, 0};
        TP_CHECK_INT(pthread_create(&t[i], NULL, session_thread, &a[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        TP_CHECK_INT(a[i].bad, 0);
    }
    tp_free(want);
    tp_close(s);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_lib TRAINPLAN_EXECUTABLE\n");
        return 2;
    }
    exe = argv[1];
    TP_RUN(test_version);
    TP_RUN(test_run);
    TP_RUN(test_search_json);
    TP_RUN(test_estimate);
    TP_RUN(test_model);
    TP_RUN(test_errors);
    TP_RUN(test_threads);
    TP_RUN(test_sweep);
    TP_RUN(test_streams);
    TP_RUN(test_contract);
    TP_RUN(test_session);
    TP_RUN(test_estimate_from_json);
    TP_RUN(test_session_threads);
    return TP_TEST_EXIT();
}
