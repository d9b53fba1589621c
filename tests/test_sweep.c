/*
 * test_sweep.c - the logic of `trainplan sweep`, `merge` and `diff` that
 * does not need the binary: FNV-1a against its published test vectors,
 * spec parsing (scenario order, ids, every problem with its JSON path),
 * the shard split, lines and torn tails, what --resume keeps, and diff's
 * comparison. The binary's behaviour (kill -9 and resume, shards and
 * merge, MPI, diff of two sweeps) is tests/sweep_e2e.sh's.
 *
 * usage: test_sweep BUILTIN_HWDB_DIR
 */
#include "sweep.h"
#include "tp_test.h"

#include <stdlib.h>
#include <string.h>

static hw_db *db;

static void test_fnv(void)
{
    /* Test vectors of FNV-1a 64 (Fowler/Noll/Vo, isthe.com/chongo/tech/comp/fnv). */
    TP_CHECK(sweep_fnv1a(SWEEP_FNV_BASIS, "", 0) == 0xcbf29ce484222325ull);
    TP_CHECK(sweep_fnv1a(SWEEP_FNV_BASIS, "a", 1) == 0xaf63dc4c8601ec8cull);
    TP_CHECK(sweep_fnv1a(SWEEP_FNV_BASIS, "foobar", 6) == 0x85944171f73967e8ull);
    /* Running: in two pieces as in one. */
    uint64_t h = sweep_fnv1a(SWEEP_FNV_BASIS, "foo", 3);
    TP_CHECK(sweep_fnv1a(h, "bar", 3) == 0x85944171f73967e8ull);
}

static int parse(const char *text, sweep_spec *s, char **rep)
{
    sweep_opts o;
    sweep_opts_init(&o);
    tp_err e = {0};
    return sweep_spec_parse("spec.json", text, strlen(text), &o.base, 0, db, NULL,
                            NULL, s, rep, &e);
}

static void test_spec_order(void)
{
    sweep_spec s;
    char *rep = NULL;
    int rc = parse("{\"models\":[\"gpt3-1.7b\",\"llama2-7b\"],"
                   "\"systems\":[\"eos\",\"selene\",\"perlmutter\"],"
                   "\"gpus\":[8,\"16-32:16\"],\"seq_lengths\":[2048],"
                   "\"global_batch_sizes\":[256,512],"
                   "\"tokens\":[null,1e9],\"options\":{\"top\":3}}",
                   &s, &rep);
    TP_CHECK_INT(rc, TP_OK);
    TP_CHECK(rep == NULL);
    if (rc) return;
    TP_CHECK_INT(s.count, 2 * 3 * 2 * 2 * 2);
    sweep_case o;
    /* The first list slowest, the last fastest. */
    sweep_scenario(&s, 0, &o);
    TP_CHECK_STR(o.job.model, "gpt3-1.7b");
    TP_CHECK_STR(o.ask.systems, "eos");
    TP_CHECK_STR(o.ask.gpus, "8");
    TP_CHECK_INT(o.job.gbs, 256);
    TP_CHECK(o.job.tokens == 0);
    TP_CHECK_INT(o.ask.top_k, 3);
    sweep_scenario(&s, 1, &o);
    TP_CHECK(o.job.tokens == 1e9);
    TP_CHECK_INT(o.job.gbs, 256);
    sweep_scenario(&s, 2, &o);
    TP_CHECK_INT(o.job.gbs, 512);
    sweep_scenario(&s, 4, &o);
    TP_CHECK_STR(o.ask.gpus, "16-32:16");
    sweep_scenario(&s, 8, &o);
    TP_CHECK_STR(o.ask.systems, "selene");
    sweep_scenario(&s, s.count - 1, &o);
    TP_CHECK_STR(o.job.model, "llama2-7b");
    TP_CHECK_STR(o.ask.systems, "perlmutter");
    TP_CHECK(o.job.precision == HW_BF16);
    /* Ids: distinct, and the same for the same inputs. */
    char ids[48][17];
    for (int64_t k = 0; k < s.count; k++) {
        sweep_scenario_id(&s, k, ids[k]);
        TP_CHECK_INT((int)strlen(ids[k]), 16);
        for (int64_t j = 0; j < k; j++) TP_CHECK(strcmp(ids[j], ids[k]) != 0);
    }
    sweep_spec t;
    rc = parse("{\"models\":[\"llama2-7b\"],\"systems\":[\"perlmutter\"],"
               "\"gpus\":[\"16-32:16\"],\"seq_lengths\":[2048],"
               "\"global_batch_sizes\":[512],\"tokens\":[1e9],"
               "\"options\":{\"top\":3}}",
               &t, &rep);
    TP_CHECK_INT(rc, TP_OK);
    if (!rc) {
        char id[17];
        sweep_scenario_id(&t, 0, id);
        TP_CHECK_STR(id, ids[s.count - 1]); /* same inputs, same id */
    }
    sweep_spec_free(&t);
    sweep_spec_free(&s);
    sweep_spec_free(NULL);
}

/* precisions take --precision's names: mxfp8 is fp8 with the MXFP8
 * recipe, nvfp4 is fp4; each a scenario of its own, refused per scenario
 * on a GPU without the format. */
static void test_spec_precisions(void)
{
    sweep_spec s;
    char *rep = NULL;
    int rc = parse("{\"models\":[\"llama3-8b\"],\"systems\":[\"dgx-b200\"],"
                   "\"gpus\":[64],\"seq_lengths\":[8192],"
                   "\"global_batch_sizes\":[128],"
                   "\"precisions\":[\"bf16\",\"fp8\",\"MXFP8\",\"nvfp4\"]}",
                   &s, &rep);
    TP_CHECK_INT(rc, TP_OK);
    TP_CHECK(rep == NULL);
    if (rc) return;
    TP_CHECK_INT(s.count, 4);
    sweep_case o;
    sweep_scenario(&s, 1, &o);
    TP_CHECK(o.job.precision == HW_FP8);
    TP_CHECK(!(o.job.sw_set & SEARCH_SW_FP8)); /* the framework's recipe */
    sweep_scenario(&s, 2, &o);
    TP_CHECK(o.job.precision == HW_FP8);
    TP_CHECK_INT(o.job.fp8_recipe, SPACE_FP8_MXFP8);
    TP_CHECK(o.job.sw_set & SEARCH_SW_FP8);
    sweep_scenario(&s, 3, &o);
    TP_CHECK(o.job.precision == HW_FP4);
    char id[4][17];
    for (int k = 0; k < 4; k++) sweep_scenario_id(&s, k, id[k]);
    TP_CHECK(strcmp(id[1], id[2]) != 0); /* fp8 and mxfp8 differ */
    sweep_spec_free(&s);

    rc = parse("{\"models\":[\"llama3-8b\"],\"systems\":[\"eos\"],"
               "\"gpus\":[64],\"seq_lengths\":[8192],"
               "\"global_batch_sizes\":[128],"
               "\"precisions\":[\"mxfp8\",\"nvfp4\",\"fp4\"]}",
               &s, &rep);
    TP_CHECK_INT(rc, TP_EDATA);
    if (rep) {
        TP_CHECK_CONTAINS(rep, "$.precisions[2]: expected bf16, fp16, fp8, "
                               "mxfp8 or nvfp4, found \"fp4\"");
        free(rep);
        rep = NULL;
    }
    rc = parse("{\"models\":[\"llama3-8b\"],\"systems\":[\"eos\"],"
               "\"gpus\":[64],\"seq_lengths\":[8192],"
               "\"global_batch_sizes\":[128],"
               "\"precisions\":[\"mxfp8\",\"nvfp4\"]}",
               &s, &rep);
    TP_CHECK_INT(rc, TP_EDATA);
    if (rep) {
        TP_CHECK_CONTAINS(rep, "scenario 0 (llama3-8b on eos, gpus 64): "
                               "--precision mxfp8");
        TP_CHECK_CONTAINS(rep, "scenario 1 (llama3-8b on eos, gpus 64): "
                               "--precision nvfp4");
        free(rep);
    }
}

static void test_spec_errors(void)
{
    sweep_spec s;
    char *rep = NULL;
    int rc = parse("{\"models\":[\"gpt3-1.7b\",\"foo\",3],\"systems\":[\"eoss\"],"
                   "\"gpus\":[0,\"x\"],\"seq_lengths\":[2048],"
                   "\"global_batch_sizes\":[-1],\"precisions\":[\"fp9\"],"
                   "\"bogus\":1,\"options\":{\"top\":0,\"nope\":1}}",
                   &s, &rep);
    TP_CHECK_INT(rc, TP_EDATA);
    TP_CHECK(rep != NULL);
    if (!rep) return;
    TP_CHECK_CONTAINS(rep, "$.models[1]: unknown model 'foo'");
    TP_CHECK_CONTAINS(rep, "(see trainplan model list)");
    TP_CHECK_CONTAINS(rep, "$.models[2]: expected a model preset name");
    TP_CHECK_CONTAINS(rep, "$.systems[0]: unknown system 'eoss'");
    TP_CHECK_CONTAINS(rep, "$.gpus[0]:");
    TP_CHECK_CONTAINS(rep, "$.gpus[1]:");
    TP_CHECK_CONTAINS(rep, "$.global_batch_sizes[0]:");
    TP_CHECK_CONTAINS(rep, "$.precisions[0]:");
    TP_CHECK_CONTAINS(rep, "$.bogus: unknown key");
    TP_CHECK_CONTAINS(rep, "$.options.top:");
    TP_CHECK_CONTAINS(rep, "$.options.nope: unknown option");
    free(rep);

    /* Missing lists, a duplicate, a spec that is not an object. */
    rc = parse("{\"models\":[\"gpt3-1.7b\",\"gpt3-1.7b\"]}", &s, &rep);
    TP_CHECK_INT(rc, TP_EDATA);
    if (rep) {
        TP_CHECK_CONTAINS(rep, "$.models[1]: \"gpt3-1.7b\" is already models[0]");
        TP_CHECK_CONTAINS(rep, "$.systems: missing required list");
        TP_CHECK_CONTAINS(rep, "$.global_batch_sizes: missing required list");
    }
    free(rep);
    rc = parse("[1,2]", &s, &rep);
    TP_CHECK_INT(rc, TP_EDATA);
    if (rep) TP_CHECK_CONTAINS(rep, "$: expected an object");
    free(rep);

    /* "record": compact (the default, issue 32) or full, anything else
     * named. */
    rc = parse("{\"models\":[\"gpt3-1.7b\"],\"systems\":[\"eos\"],\"gpus\":[8],"
               "\"seq_lengths\":[2048],\"global_batch_sizes\":[64],"
               "\"record\":\"short\"}",
               &s, &rep);
    TP_CHECK_INT(rc, TP_EDATA);
    if (rep)
        TP_CHECK_CONTAINS(rep, "$.record: expected \"compact\" (the default) or "
                               "\"full\", found \"short\"");
    free(rep);
    static const struct {
        const char *key;
        sweep_record_form want;
    } forms[] = {{"", SWEEP_RECORD_COMPACT},
                 {",\"record\":\"compact\"", SWEEP_RECORD_COMPACT},
                 {",\"record\":\"full\"", SWEEP_RECORD_FULL}};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "{\"models\":[\"gpt3-1.7b\"],\"systems\":[\"eos\"],"
                 "\"gpus\":[8],\"seq_lengths\":[2048],"
                 "\"global_batch_sizes\":[64]%s}",
                 forms[i].key);
        rep = NULL;
        rc = parse(text, &s, &rep);
        TP_CHECK_INT(rc, TP_OK);
        TP_CHECK_INT(s.record, forms[i].want);
        sweep_spec_free(&s);
        free(rep);
    }
    TP_CHECK_STR(sweep_record_names[SWEEP_RECORD_COMPACT], "compact");
    TP_CHECK_STR(sweep_record_names[SWEEP_RECORD_FULL], "full");

    /* Options of the wrong type or value, and the ones that apply. */
    rc = parse("{\"models\":[\"gpt3-1.7b\"],\"systems\":[\"eos\"],\"gpus\":[8],"
               "\"seq_lengths\":[2048],\"global_batch_sizes\":[64],"
               "\"options\":{\"objective\":\"fast\",\"no_prune\":\"yes\","
               "\"min_gpus\":1.5,\"fix\":4}}",
               &s, &rep);
    TP_CHECK_INT(rc, TP_EDATA);
    if (rep) {
        TP_CHECK_CONTAINS(rep, "$.options.objective: expected one of (time, throughput");
        TP_CHECK_CONTAINS(rep, "$.options.no_prune: expected true or false");
        TP_CHECK_CONTAINS(rep, "$.options.min_gpus: expected an integer");
        TP_CHECK_CONTAINS(rep, "$.options.fix: expected a string");
    }
    free(rep);
    rc = parse("{\"models\":[\"gpt3-1.7b\"],\"systems\":[\"eos\"],\"gpus\":[8],"
               "\"seq_lengths\":[2048],\"global_batch_sizes\":[64],\"tokens\":[1e9],"
               "\"options\":{\"objective\":\"cost\",\"no_prune\":true,"
               "\"max_gpus\":64,\"fix\":\"tp=2\",\"budget_usd\":1e6,"
               "\"max_memory_fraction\":0.9}}",
               &s, &rep);
    TP_CHECK_INT(rc, TP_OK);
    if (!rc) {
        sweep_case o;
        sweep_scenario(&s, 0, &o);
        TP_CHECK_INT(o.ask.objective, SEARCH_BY_COST);
        TP_CHECK_INT(o.ask.no_prune, 1);
        TP_CHECK_INT(o.ask.max_gpus, 64);
        TP_CHECK_STR(o.ask.fix, "tp=2");
        TP_CHECK(o.ask.budget_usd == 1e6 && o.ask.max_mem_fraction == 0.9 && o.job.tokens == 1e9);
    }
    sweep_spec_free(&s);

    /* What only a whole scenario shows: fp8 on an A100, --fix out of range. */
    rc = parse("{\"models\":[\"gpt3-1.7b\"],\"systems\":[\"selene\"],"
               "\"gpus\":[8],\"seq_lengths\":[2048],\"global_batch_sizes\":[64],"
               "\"precisions\":[\"fp8\"],\"options\":{\"fix\":\"tp=x\"}}",
               &s, &rep);
    TP_CHECK_INT(rc, TP_EDATA);
    if (rep) TP_CHECK_CONTAINS(rep, "scenario 0 (gpt3-1.7b on selene, gpus 8)");
    free(rep);

    /* A key twice is one problem among the others (issue 31: every
     * problem at once): each duplicate with its path, the rest checked;
     * the hwdb key's shape; the caller's problem first. */
    rc = parse("{\"models\":[\"gpt3-1.7b\"],\"systems\":[\"eos\"],\"gpus\":[8],"
               "\"seq_lengths\":[2048],\"global_batch_sizes\":[64],"
               "\"gpus\":[16],\"hwdb\":[\"no/such/dir\",3],"
               "\"options\":{\"top\":0,\"top\":1}}",
               &s, &rep);
    TP_CHECK_INT(rc, TP_EDATA);
    if (rep) {
        TP_CHECK_CONTAINS(rep, "$: key \"gpus\" appears twice");
        TP_CHECK_CONTAINS(rep, "$.options: key \"top\" appears twice");
        TP_CHECK_CONTAINS(rep, "$.options.top: expected an integer in [1, 1000]");
        TP_CHECK_CONTAINS(rep, "$.hwdb[0]: no/such/dir: no such directory");
        TP_CHECK_CONTAINS(rep, "$.hwdb[1]: expected a directory name, found 3");
    }
    free(rep);
    rc = parse("{\"models\":[\"gpt3-1.7b\"],\"systems\":[\"eos\"],\"gpus\":[8],"
               "\"seq_lengths\":[2048],\"global_batch_sizes\":[64],\"hwdb\":\"x\"}",
               &s, &rep);
    TP_CHECK_INT(rc, TP_EDATA);
    if (rep) TP_CHECK_CONTAINS(rep, "$.hwdb: expected a list of 1 to 16");
    free(rep);
    {
        sweep_opts o;
        sweep_opts_init(&o);
        tp_err e = {0};
        const char *t = "{\"models\":[\"gpt3-1.7b\"],\"systems\":[\"eos\"],"
                        "\"gpus\":[8],\"seq_lengths\":[2048],"
                        "\"global_batch_sizes\":[64,0]}";
        rc = sweep_spec_parse("spec.json", t, strlen(t), &o.base, 0, db, NULL,
                              "$.hwdb: x.json: bad", &s, &rep, &e);
        TP_CHECK_INT(rc, TP_EDATA);
        TP_CHECK_CONTAINS(e.msg, "2 problems in the sweep spec");
        if (rep) TP_CHECK(strncmp(rep, "$.hwdb: x.json: bad\n", 20) == 0);
        free(rep);
    }
    /* Not JSON at all: that alone, as the parser says it. */
    rc = parse("{\"models\": [", &s, &rep);
    TP_CHECK_INT(rc, TP_EDATA);
    TP_CHECK(rep == NULL);
    free(rep);
}

/* The MoE options: ep, etp, moe_dispatcher and moe_imbalance reach each
 * scenario as --ep, --etp, --moe-dispatcher and --moe-imbalance do; a
 * value out of range is reported with its path, and what the model rules
 * out (EP on a dense model, EP not dividing the experts) per scenario. */
static void test_spec_moe(void)
{
    sweep_spec s;
    char *rep = NULL;
    int rc = parse("{\"models\":[\"mixtral-8x7b\"],\"systems\":[\"eos\"],"
                   "\"gpus\":[64],\"seq_lengths\":[4096],"
                   "\"global_batch_sizes\":[256],\"options\":{\"ep\":8,"
                   "\"etp\":1,\"moe_dispatcher\":\"flex\","
                   "\"moe_imbalance\":1.1}}",
                   &s, &rep);
    TP_CHECK_INT(rc, TP_OK);
    if (!rc) {
        sweep_case o;
        sweep_scenario(&s, 0, &o);
        TP_CHECK_INT(o.job.ep, 8);
        TP_CHECK_INT(o.job.etp, 1);
        TP_CHECK_INT(o.job.moe_dispatcher, SPACE_MOE_FLEX);
        TP_CHECK(o.job.moe_imbalance == 1.1);
    }
    sweep_spec_free(&s);
    free(rep);
    rep = NULL;
    rc = parse("{\"models\":[\"mixtral-8x7b\"],\"systems\":[\"eos\"],"
               "\"gpus\":[64],\"seq_lengths\":[4096],"
               "\"global_batch_sizes\":[256],\"options\":{\"ep\":0,"
               "\"etp\":2.5,\"moe_dispatcher\":\"deepep\","
               "\"moe_imbalance\":0.9}}",
               &s, &rep);
    TP_CHECK_INT(rc, TP_EDATA);
    TP_CHECK(rep != NULL);
    if (rep) {
        TP_CHECK_CONTAINS(rep, "$.options.ep: expected an integer in [1, 1e+06]");
        TP_CHECK_CONTAINS(rep, "$.options.etp: expected an integer in [1, 1024]");
        TP_CHECK_CONTAINS(rep, "$.options.moe_dispatcher: expected one of "
                               "(alltoall, allgather or flex");
        TP_CHECK_CONTAINS(rep, "found \"deepep\"");
        TP_CHECK_CONTAINS(rep, "$.options.moe_imbalance: expected a number in [1,");
    }
    free(rep);
    rep = NULL;
    /* EP 3 does not divide Mixtral's 8 experts; EP on a dense model. */
    rc = parse("{\"models\":[\"mixtral-8x7b\",\"gpt3-1.7b\"],"
               "\"systems\":[\"eos\"],\"gpus\":[48],\"seq_lengths\":[4096],"
               "\"global_batch_sizes\":[48],\"options\":{\"ep\":3}}",
               &s, &rep);
    TP_CHECK_INT(rc, TP_EDATA);
    if (rep) {
        TP_CHECK_CONTAINS(rep, "scenario 0 (mixtral-8x7b on eos, gpus 48)");
        TP_CHECK_CONTAINS(rep, "scenario 1 (gpt3-1.7b on eos, gpus 48)");
        TP_CHECK_CONTAINS(rep, "--ep");
    }
    free(rep);
}

static void test_shards(void)
{
    for (int64_t count = 0; count < 40; count += 7)
        for (int n = 1; n <= 5; n++) {
            int64_t seen[64] = {0}, total = 0;
            for (int i = 0; i < n; i++) {
                int64_t m = sweep_shard_size(count, i, n);
                total += m;
                for (int64_t j = 0; j < m; j++) {
                    int64_t k = sweep_shard_at(j, i, n);
                    TP_CHECK(k >= 0 && k < count);
                    if (k >= 0 && k < 64) seen[k]++;
                    TP_CHECK_INT(k % n, i);
                    if (j) TP_CHECK(k > sweep_shard_at(j - 1, i, n));
                }
            }
            TP_CHECK_INT(total, count);
            for (int64_t k = 0; k < count; k++) TP_CHECK_INT(seen[k], 1);
        }
}

#define REC(i, id) "{\"index\":" #i ",\"count\":3,\"id\":\"" id "\",\"status\":\"ok\"}\n"

/* The lines of text, each sealed as sweep writes it (sweep_record_seal),
 * in one buffer the caller frees. */
static char *seal_lines(const char *text)
{
    size_t cap = strlen(text) * 3 + 256, n = 0;
    char *out = malloc(cap);
    for (const char *l = text; *l;) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        char *sealed = sweep_record_seal(l, len);
        size_t k = strlen(sealed);
        memcpy(out + n, sealed, k);
        n += k;
        free(sealed);
        l += len + (nl ? 1 : 0);
    }
    out[n] = '\0';
    return out;
}

static void test_seal(void)
{
    const char *rec = "{\"index\":0,\"count\":1,\"id\":\"00000000000000aa\"}";
    char *line = sweep_record_seal(rec, strlen(rec));
    size_t n = strlen(line);
    TP_CHECK(n > 0 && line[n - 1] == '\n');
    TP_CHECK(strstr(line, ",\"" SWEEP_SEAL_KEY "\":\"") != NULL);
    TP_CHECK_INT(sweep_record_sealed(line, n - 1), 1);
    TP_CHECK_INT(sweep_record_sealed(rec, strlen(rec)), 0);
    sweep_key k;
    TP_CHECK(sweep_record_key(line, n - 1, &k));
    TP_CHECK_INT(k.seal, 1);
    /* A damaged byte that still parses: the seal no longer matches. */
    line[strlen("{\"index\":0,\"count\":1,\"id\":\"00000000000000a")] = 'b';
    TP_CHECK_INT(sweep_record_sealed(line, n - 1), -1);
    TP_CHECK(sweep_record_key(line, n - 1, &k));
    TP_CHECK_INT(k.seal, -1);
    /* diff reads a sealed line whose "search" is last but the seal */
    const char *withs = "{\"index\":0,\"count\":1,\"id\":\"00000000000000aa\","
                        "\"status\":\"ok\",\"search\":{\"ranked\":[]}}";
    char *l2 = sweep_record_seal(withs, strlen(withs));
    sweep_outcome oc;
    TP_CHECK(sweep_outcome_parse(l2, strlen(l2) - 1, &oc));
    TP_CHECK_STR(oc.status, "ok");
    free(l2);
    free(line);
}

static void id_of_test(int64_t k, char id[17], void *ctx)
{
    (void)ctx;
    snprintf(id, 17, "%016llx", (unsigned long long)k + 1);
}

static void test_resume_first(void)
{
    sweep_key want[2] = {{0, 3, "0000000000000001", 0, 0},
                         {2, 3, "0000000000000003", 0, 0}};
    char why[512];
    char *ours = seal_lines(REC(0, "0000000000000001"));
    TP_CHECK(sweep_resume_first(ours, strlen(ours), want, 2, 3, id_of_test,
                                NULL, why, sizeof why));
    /* every torn prefix of our first record is ours */
    for (size_t cut = 1; cut < strlen(ours); cut++) {
        char head[512];
        snprintf(head, sizeof head, "{\"schema_version\":%d,%s",
                 EMIT_SCHEMA_VERSION, ours + 1);
        size_t m = cut < strlen(head) ? cut : strlen(head) - 1;
        TP_CHECK(sweep_resume_first(head, m, want, 2, 3, id_of_test, NULL,
                                    why, sizeof why));
    }
    const char *csv = "name,params\nx,1\n";
    TP_CHECK(!sweep_resume_first(csv, strlen(csv), want, 2, 3, id_of_test,
                                 NULL, why, sizeof why));
    TP_CHECK(strstr(why, "'name,params' is not a sweep record") != NULL);
    TP_CHECK(!sweep_resume_first("x,y", 3, want, 2, 3, id_of_test, NULL, why,
                                 sizeof why));
    TP_CHECK(strstr(why, "incomplete") != NULL);
    /* another spec: other count, or another id at the index */
    char *other = seal_lines("{\"index\":0,\"count\":5,\"id\":\"0000000000000001\"}\n");
    TP_CHECK(!sweep_resume_first(other, strlen(other), want, 2, 3, id_of_test,
                                 NULL, why, sizeof why));
    TP_CHECK(strstr(why, "another spec") != NULL);
    /* this spec's scenario 1: another shard's file */
    char *shard = seal_lines(REC(1, "0000000000000002"));
    TP_CHECK(!sweep_resume_first(shard, strlen(shard), want, 2, 3, id_of_test,
                                 NULL, why, sizeof why));
    TP_CHECK(strstr(why, "another --shard") != NULL);
    free(ours);
    free(other);
    free(shard);
}

static void test_lines_and_resume(void)
{
    const char *a = "0000000000000001", *b = "0000000000000002",
               *c = "0000000000000003";
    sweep_key want[3] = {{0, 3, "", 0, 0}, {1, 3, "", 0, 0}, {2, 3, "", 0, 0}};
    strcpy(want[0].id, a);
    strcpy(want[1].id, b);
    strcpy(want[2].id, c);
    char *full_buf = seal_lines(REC(0, "0000000000000001")
                                    REC(1, "0000000000000002")
                                        REC(2, "0000000000000003"));
    char *one = seal_lines(REC(0, "0000000000000001"));
    char *two_buf = seal_lines(REC(0, "0000000000000001")
                                   REC(1, "0000000000000002"));
    const char *full = full_buf;
    size_t *st, *ln, tail, keep;
    int n = sweep_split_lines(full, strlen(full), &st, &ln, &tail);
    TP_CHECK_INT(n, 3);
    TP_CHECK_INT((int)tail, 0);
    sweep_key k;
    TP_CHECK(sweep_record_key(full + st[1], ln[1], &k));
    TP_CHECK_INT(k.index, 1);
    TP_CHECK_STR(k.id, b);
    free(st);
    free(ln);
    TP_CHECK_INT(sweep_resume_scan(full, strlen(full), want, 3, &keep), 3);
    TP_CHECK_INT((int)keep, (int)strlen(full));

    /* A torn last line: every prefix of the third record. */
    size_t two = strlen(two_buf);
    for (size_t cut = two; cut < strlen(full); cut++) {
        TP_CHECK_INT(sweep_resume_scan(full, cut, want, 3, &keep), 2);
        TP_CHECK_INT((int)keep, (int)two);
        n = sweep_split_lines(full, cut, &st, &ln, &tail);
        TP_CHECK_INT(n, 2);
        TP_CHECK_INT((int)tail, (int)(cut - two));
        free(st);
        free(ln);
    }
    /* A complete line that is not JSON, or another scenario: cut there. */
    char *bad = seal_lines(REC(0, "0000000000000001") "{\"index\":1,\"cou\n"
        REC(2, "0000000000000003"));
    TP_CHECK_INT(sweep_resume_scan(bad, strlen(bad), want, 3, &keep), 1);
    char *other = seal_lines(REC(0, "0000000000000001") REC(1, "00000000000000ff"));
    TP_CHECK_INT(sweep_resume_scan(other, strlen(other), want, 3, &keep), 1);
    TP_CHECK_INT((int)keep, (int)strlen(one));
    /* A damaged body (the seal no longer matches) or no seal: cut there. */
    char *damaged = seal_lines(REC(0, "0000000000000001") REC(1, "0000000000000002"));
    *strstr(damaged + strlen(one), "\"ok\"") = 'X'; /* "ok" -> X"ok: not JSON */
    TP_CHECK_INT(sweep_resume_scan(damaged, strlen(damaged), want, 3, &keep), 1);
    char *flipped = seal_lines(REC(0, "0000000000000001") REC(1, "0000000000000002"));
    memcpy(strstr(flipped + strlen(one), "\"ok\"") + 1, "ko", 2); /* parses */
    TP_CHECK_INT(sweep_resume_scan(flipped, strlen(flipped), want, 3, &keep), 1);
    TP_CHECK_INT((int)keep, (int)strlen(one));
    const char *unsealed = REC(0, "0000000000000001");
    TP_CHECK_INT(sweep_resume_scan(unsealed, strlen(unsealed), want, 3, &keep), 0);
    free(damaged);
    free(flipped);
    /* Another version or other input files: cut there too. */
    sweep_key w2[3];
    memcpy(w2, want, sizeof w2);
    TP_CHECK(sweep_record_key(full, strlen(one) - 1, &k));
    w2[0].check = k.check; /* as written */
    w2[1].check = sweep_record_check("9.9.9", NULL);
    TP_CHECK(w2[1].check != 0 && w2[1].check != k.check);
    TP_CHECK_INT(sweep_resume_scan(full, strlen(full), w2, 3, &keep), 1);
    TP_CHECK_INT(sweep_resume_scan("", 0, want, 3, &keep), 0);
    TP_CHECK_INT((int)keep, 0);
    TP_CHECK(!sweep_record_key("[]", 2, &k));
    const char *beyond = "{\"index\":5,\"count\":3,\"id\":\"0000000000000001\"}";
    TP_CHECK(!sweep_record_key(beyond, strlen(beyond), &k)); /* index >= count */
    free(full_buf);
    free(one);
    free(two_buf);
    free(bad);
    free(other);
}

static void test_compare(void)
{
    const char *x = "{\"index\":0,\"count\":1,\"id\":\"00000000000000aa\","
                    "\"scenario\":{\"model\":\"m\",\"system\":\"eos\"},"
                    "\"inputs\":{\"a\":1},\"status\":\"ok\",\"best\":{\"layout\":"
                    "\"n1g8_tp1pp1dp8_mbs1\",\"system\":\"eos\",\"iteration_time_s\""
                    ":1.0,\"cost_per_iteration_usd\":2.0}}";
    sweep_outcome a, b;
    TP_CHECK(sweep_outcome_parse(x, strlen(x), &a));
    TP_CHECK_STR(a.layout, "n1g8_tp1pp1dp8_mbs1 on eos");
    TP_CHECK(a.time_s == 1.0 && a.cost_usd == 2.0);
    char why[256];
    b = a;
    TP_CHECK_INT(sweep_compare(&a, &b, 0.02, why, sizeof why), SWEEP_SAME);
    b.time_s = 1.019; /* within 2 % */
    TP_CHECK_INT(sweep_compare(&a, &b, 0.02, why, sizeof why), SWEEP_SAME);
    b.time_s = 1.03;
    TP_CHECK_INT(sweep_compare(&a, &b, 0.02, why, sizeof why), SWEEP_CHANGED);
    TP_CHECK_CONTAINS(why, "time +3.0%");
    b = a;
    b.cost_usd = 1.5;
    TP_CHECK_INT(sweep_compare(&a, &b, 0.02, why, sizeof why), SWEEP_CHANGED);
    TP_CHECK_CONTAINS(why, "cost -25.0%");
    b = a;
    strcpy(b.layout, "n1g8_tp2pp1dp4_mbs1 on eos");
    TP_CHECK_INT(sweep_compare(&a, &b, 0.5, why, sizeof why), SWEEP_CHANGED);
    TP_CHECK_CONTAINS(why, "best layout");
    b = a;
    strcpy(b.status, "infeasible");
    b.layout[0] = '\0';
    TP_CHECK_INT(sweep_compare(&a, &b, 0.02, why, sizeof why), SWEEP_CHANGED);
    TP_CHECK_CONTAINS(why, "status ok -> infeasible");
    /* Changed inputs alone are not a change of outcome. */
    b = a;
    b.inputs_digest ^= 1;
    TP_CHECK_INT(sweep_compare(&a, &b, 0.02, why, sizeof why), SWEEP_SAME);
    TP_CHECK(!sweep_outcome_parse("{\"index\":0}", 11, &b));
}

/* diff reads records without their "search" member (issue 17): skipped,
 * with its brackets and strings checked where it is not the last member,
 * not even scanned where it is (as sweep writes it). */
static void test_lean_records(void)
{
    static const struct {
        const char *search;
        int ok;
    } cases[] = {
        {"{\"ranked\":[{\"a\":\"}]\\\"[{\"},[1,2,{\"b\":[]}]],\"x\":null}", 1},
        {"{\"ranked\":[1,2}}", 0},     /* ] where } closes */
        {"{\"ranked\":[1,2]", 0},      /* not closed */
        {"{\"s\":\"open}", 0},         /* string not closed */
        {"{\"s\":\"a\tb\"}", 1},       /* a raw tab: as cJSON takes it */
        {"null", 1},
        {"{}}", 0},                    /* a brace too many */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int last = 0; last < 2; last++) {
            char line[512];
            if (last)
                snprintf(line, sizeof line,
                         "{\"index\":1,\"count\":2,\"id\":\"00000000000000bb\","
                         "\"status\":\"ok\",\"best\":null,\"search\":%s}",
                         cases[i].search);
            else
                snprintf(line, sizeof line,
                         "{\"index\":1,\"count\":2,\"id\":\"00000000000000bb\","
                         "\"search\":%s,\"status\":\"ok\",\"best\":null}",
                         cases[i].search);
            sweep_outcome o;
            int got = sweep_outcome_parse(line, strlen(line), &o);
            /* Last, as sweep writes it, the member is not scanned: only a
             * missing closing brace is noticed. */
            int want = cases[i].ok || (last && i != 2);
            if (got != want)
                fprintf(stderr, "  lean record case %zu: %s\n", i, line);
            TP_CHECK_INT(got, want);
            if (got) {
                TP_CHECK_STR(o.id, "00000000000000bb");
                TP_CHECK(o.index == 1 && o.count == 2);
                TP_CHECK_STR(o.status, "ok");
            }
        }
    }
    /* A key twice is not a record, "search" included; an escaped key
     * falls back to the full parse. */
    const char *twice = "{\"index\":0,\"count\":1,\"id\":\"00000000000000aa\","
                        "\"search\":{},\"search\":{}}";
    sweep_outcome o;
    TP_CHECK(!sweep_outcome_parse(twice, strlen(twice), &o));
    const char *twice2 = "{\"index\":0,\"count\":1,\"id\":\"00000000000000aa\","
                         "\"status\":\"ok\",\"status\":\"error\"}";
    TP_CHECK(!sweep_outcome_parse(twice2, strlen(twice2), &o));
    const char *esc = "{\"index\":0,\"count\":1,\"id\":\"00000000000000aa\","
                      "\"st\\u0061tus\":\"ok\"}";
    TP_CHECK(sweep_outcome_parse(esc, strlen(esc), &o));
    TP_CHECK_STR(o.status, "ok");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_sweep BUILTIN\n");
        return 2;
    }
    const char *dirs[] = {argv[1]};
    tp_err e = {0};
    db = hw_db_open_dirs(dirs, 1, &e);
    if (!db) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    TP_RUN(test_fnv);
    TP_RUN(test_spec_order);
    TP_RUN(test_spec_errors);
    TP_RUN(test_spec_precisions);
    TP_RUN(test_spec_moe);
    TP_RUN(test_shards);
    TP_RUN(test_lines_and_resume);
    TP_RUN(test_seal);
    TP_RUN(test_resume_first);
    TP_RUN(test_compare);
    TP_RUN(test_lean_records);
    hw_db_free(db);
    return TP_TEST_EXIT();
}
