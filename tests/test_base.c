/*
 * test_base.c - tp_base: JSON parsing errors with line and column, the
 * field readers' messages (file, path, value, range), edit distance and
 * suggestions, and file reading limits; tp_json_print against the
 * cJSON it stands in for (cJSON_Print, cJSON_PrintUnformatted), byte for
 * byte, on chosen and random numbers, every byte in strings and keys, and
 * nested, empty and raw items.
 */
#include "../hwdb/tp_base.h"
#include "../hwdb/pcg32.h"
#include "tp_test.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static cJSON *parse(const char *text, tp_err *e)
{
    cJSON *root = NULL;
    tp_json_parse("t.json", text, strlen(text), &root, e);
    return root;
}

static void test_parse_errors(void)
{
    tp_err e = {0};
    TP_CHECK(parse("{\"a\": 1,\n \"b\": }", &e) == NULL);
    TP_CHECK_INT(e.status, TP_EDATA);
    TP_CHECK_CONTAINS(e.msg, "t.json:2:");
    TP_CHECK_CONTAINS(e.msg, "malformed JSON");
    TP_CHECK(parse("{\"a\": 1} x", &e) == NULL);
    TP_CHECK_CONTAINS(e.msg, "trailing data");
    TP_CHECK(parse("{\"a\": [1, 2", &e) == NULL);
    TP_CHECK_CONTAINS(e.msg, "truncated");
    TP_CHECK(parse("  \n ", &e) == NULL);
    TP_CHECK_CONTAINS(e.msg, "empty file");
    cJSON *ok = parse(" {\"a\": 1}\n\n", &e);
    TP_CHECK(ok != NULL);
    cJSON_Delete(ok);
}

static void test_readers(void)
{
    tp_err e = {0};
    cJSON *r = parse("{\"n\": 2.5, \"i\": 7, \"s\": \"hi\", \"b\": true, "
                     "\"z\": null, \"neg\": -3, \"big\": 1e300, \"f\": 1.5, "
                     "\"str\": \"4096\", \"act\": \"SwiGLU\"}", &e);
    TP_CHECK(r != NULL);
    double d = 0;
    int64_t i = 0;
    int b = 0, k = -1;
    char s[8];
    TP_CHECK_INT(tp_json_num(r, "f.json", "$", "n", 1, 0, 10, &d, &e), TP_OK);
    TP_CHECK(d == 2.5);
    TP_CHECK_INT(tp_json_int(r, "f.json", "$", "i", 1, 0, 10, &i, &e), TP_OK);
    TP_CHECK_INT(i, 7);
    TP_CHECK_INT(tp_json_int(r, "f.json", "$", "f", 1, 0, 10, &i, &e), TP_EDATA);
    TP_CHECK_CONTAINS(e.msg, "f.json: $.f: expected an integer in [0, 10], found 1.5");
    TP_CHECK_INT(tp_json_int(r, "f.json", "$", "neg", 1, 1, 10, &i, &e), TP_EDATA);
    TP_CHECK_CONTAINS(e.msg, "found -3");
    TP_CHECK_INT(tp_json_num(r, "f.json", "$", "big", 1, 0, 1e6, &d, &e), TP_EDATA);
    TP_CHECK_INT(tp_json_int(r, "f.json", "$.x", "str", 1, 1, 10, &i, &e), TP_EDATA);
    TP_CHECK_CONTAINS(e.msg, "$.x.str: expected an integer");
    TP_CHECK_CONTAINS(e.msg, "\"4096\"");
    /* Absent or null: fine when optional, an error when required. */
    d = 9;
    TP_CHECK_INT(tp_json_num(r, "f.json", "$", "z", 0, 0, 1, &d, &e), TP_OK);
    TP_CHECK(d == 9);
    TP_CHECK_INT(tp_json_num(r, "f.json", "$", "nope", 1, 0, 1, &d, &e), TP_EDATA);
    TP_CHECK_CONTAINS(e.msg, "$.nope: missing required field");
    TP_CHECK_INT(tp_json_bool(r, "f.json", "$", "b", 1, &b, &e), TP_OK);
    TP_CHECK_INT(b, 1);
    TP_CHECK_INT(tp_json_bool(r, "f.json", "$", "i", 1, &b, &e), TP_EDATA);
    TP_CHECK_INT(tp_json_str(r, "f.json", "$", "s", 1, s, sizeof s, &e), TP_OK);
    TP_CHECK_STR(s, "hi");
    TP_CHECK_INT(tp_json_str(r, "f.json", "$", "str", 1, s, 3, &e), TP_EDATA);
    TP_CHECK_CONTAINS(e.msg, "at most 2 characters");
    static const char *const acts[] = {"gelu", "swiglu"};
    TP_CHECK_INT(tp_json_enum(r, "f.json", "$", "act", 1, acts, 2, &k, &e), TP_OK);
    TP_CHECK_INT(k, 1);
    TP_CHECK_INT(tp_json_enum(r, "f.json", "$", "s", 1, acts, 2, &k, &e), TP_EDATA);
    TP_CHECK_CONTAINS(e.msg, "one of \"gelu\", \"swiglu\"");
    cJSON_Delete(r);
}

static void test_suggest(void)
{
    TP_CHECK_INT(tp_edit_distance("kitten", "sitting", 10), 3);
    TP_CHECK_INT(tp_edit_distance("ABC", "abc", 10), 0);
    TP_CHECK_INT(tp_edit_distance("abcdefgh", "zzzzzzzz", 2), 3);
    static const char *const names[] = {"llama3-8b", "llama3-70b", "gpt3-175b",
                                        "h100-sxm"};
    char buf[256];
    tp_suggest("llama3-7b", names, 4, buf, sizeof buf);
    TP_CHECK_CONTAINS(buf, "did you mean 'llama3-8b' or 'llama3-70b'?");
    tp_suggest("h100", names, 4, buf, sizeof buf);
    TP_CHECK_CONTAINS(buf, "'h100-sxm'");
    tp_suggest("zzzzzz", names, 4, buf, sizeof buf);
    TP_CHECK_STR(buf, "");
    TP_CHECK(tp_streq_ci("H100", "h100"));
    TP_CHECK(!tp_streq_ci("h100", "h10"));
}

static void test_read_file(void)
{
    char *buf = NULL;
    size_t n = 0;
    tp_err e = {0};
    TP_CHECK_INT(tp_read_file("/nonexistent/x.json", 100, &buf, &n, &e),
                 TP_ENOINPUT);
    TP_CHECK_CONTAINS(e.msg, "/nonexistent/x.json");
    TP_CHECK_INT(tp_read_file("/", 100, &buf, &n, &e), TP_ENOINPUT);
    TP_CHECK_CONTAINS(e.msg, "is a directory");
    TP_CHECK(buf == NULL);
    cJSON *root = NULL;
    TP_CHECK_INT(tp_json_load("/", &root, &e), TP_ENOINPUT);
    TP_CHECK(root == NULL);
}

/* Strict numbers: the whole string, decimal, in range. */
static void test_strict_numbers(void)
{
    long long v = 7, a = 7, b = 7;
    double d = 7;
    TP_CHECK(!tp_parse_int("16", 1, 64, &v) && v == 16);
    TP_CHECK(!tp_parse_int("-3", -5, 5, &v) && v == -3);
    static const char *const bad_int[] = {"", "+8", " 8", "8 ", "0x10", "8.0",
                                          "1e1", "65", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad_int / sizeof bad_int[0]; i++) {
        v = 7;
        TP_CHECK(tp_parse_int(bad_int[i], 1, 64, &v) == -1 && v == 7);
    }
    TP_CHECK(!tp_parse_num("1.5E-3", &d) && d == 1.5e-3);
    TP_CHECK(!tp_parse_num("300e9", &d) && d == 300e9);
    static const char *const bad_num[] = {"", ".", "nan", "inf", "1e", "1e999",
                                          "0x1p-2", " 1", "1,5"};
    for (size_t i = 0; i < sizeof bad_num / sizeof bad_num[0]; i++)
        TP_CHECK(tp_parse_num(bad_num[i], &d) == -1);
    TP_CHECK(!tp_parse_int_pair("2x8", "xX", 1, 10, 1, 16, &a, &b) && a == 2
             && b == 8);
    TP_CHECK(!tp_parse_int_pair("0/4", "/", 0, 9, 1, 9, &a, &b) && a == 0
             && b == 4);
    static const char *const bad_pair[] = {"x8", "2x", "2x+8", "2", "2x8x",
                                           "99999999999999999999999x1"};
    for (size_t i = 0; i < sizeof bad_pair / sizeof bad_pair[0]; i++) {
        a = b = 7;
        TP_CHECK(tp_parse_int_pair(bad_pair[i], "x", 0, 100, 0, 100, &a, &b)
                     == -1
                 && a == 7 && b == 7);
    }
}

/* Reads text (copied: the reader writes into it) record by record into
 * "a|b|c;" form, or "ERR:" and the message. */
static void csv_read(const char *text, int comments, char *out, size_t cap)
{
    size_t len = strlen(text);
    char *buf = malloc(len + 1);
    memcpy(buf, text, len + 1);
    tp_csv r;
    tp_csv_init(&r, buf, len, "x.csv", comments);
    tp_err e = {0};
    char *f[4];
    out[0] = '\0';
    int nf;
    while ((nf = tp_csv_next(&r, f, 4, &e)) > 0) {
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%d:", r.line);
        for (int i = 0; i < nf && i < 4; i++) {
            n = strlen(out);
            snprintf(out + n, cap - n, "%s%s", i ? "|" : "", f[i]);
        }
        n = strlen(out);
        snprintf(out + n, cap - n, nf > 4 ? "+;" : ";");
    }
    if (nf < 0) {
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "ERR:%s", e.msg);
    }
    free(buf);
}

static void test_csv(void)
{
    char out[512];
    csv_read("a,b\n1,2\n", 0, out, sizeof out);
    TP_CHECK_STR(out, "1:a|b;2:1|2;");
    /* CRLF, no final line break, blanks around fields, an empty field */
    csv_read(" a , b\r\n1,\r\n\r\n3 ,4", 0, out, sizeof out);
    TP_CHECK_STR(out, "1:a|b;2:1|;3:;4:3|4;");
    /* quoted: commas, doubled quotes, a CRLF inside, blanks kept inside */
    csv_read("\"x,y\",\"say \"\"hi\"\"\"\n\"two\r\nlines\", \" s \"\n", 0, out,
             sizeof out);
    TP_CHECK_STR(out, "1:x,y|say \"hi\";2:two\r\nlines| s ;");
    csv_read("\"\",\"\"\"\"\n", 0, out, sizeof out);
    TP_CHECK_STR(out, "1:|\";");
    /* more fields than asked for */
    csv_read("1,2,3,4,5\n", 0, out, sizeof out);
    TP_CHECK_STR(out, "1:1|2|3|4+;");
    /* comments where asked for, and only at a record's start */
    csv_read("# c, \"\n a,b\n  # d\n", 1, out, sizeof out);
    TP_CHECK_STR(out, "2:a|b;");
    csv_read("#c\n", 0, out, sizeof out);
    TP_CHECK_STR(out, "1:#c;");
    /* malformed quotes: file, line and column */
    csv_read("a,b\n1,\"open\n2,3\n", 0, out, sizeof out);
    TP_CHECK_STR(out, "1:a|b;ERR:x.csv:2:3: the quote opened here is never closed");
    csv_read("a,b\n1,\"x\"y\n", 0, out, sizeof out);
    TP_CHECK_STR(out, "1:a|b;ERR:x.csv:2:6: 'y' after a closing quote, expected "
                      "a comma or the end of the line");
    csv_read("a,b\n\"m\nn\"x,1\n", 0, out, sizeof out);
    TP_CHECK_CONTAINS(out, "ERR:x.csv:3:3: 'x' after a closing quote");
    csv_read("a,b\n12,3\"4\n", 0, out, sizeof out);
    TP_CHECK_CONTAINS(out, "ERR:x.csv:2:5: a quote inside an unquoted field");
    csv_read("", 0, out, sizeof out);
    TP_CHECK_STR(out, "");
}

/* tp_json_print(v) and cJSON's print of v, formatted and not: the same
 * bytes (or both NULL). Returns 1 when they agree. */
static int same_print(const cJSON *v)
{
    int ok = 1;
    for (int f = 0; f < 2; f++) {
        char *want = f ? cJSON_Print(v) : cJSON_PrintUnformatted(v);
        char *got = tp_json_print(v, f);
        int same = (!want && !got) || (want && got && strcmp(want, got) == 0);
        if (!same && ok)
            fprintf(stderr, "  tp_json_print(%s): cJSON '%.200s', ours '%.200s'\n",
                    f ? "formatted" : "unformatted", want ? want : "(NULL)",
                    got ? got : "(NULL)");
        ok &= same;
        cJSON_free(want);
        free(got);
    }
    return ok;
}

static int same_number(double d)
{
    cJSON *n = cJSON_CreateNumber(d);
    int ok = same_print(n);
    cJSON_Delete(n);
    return ok;
}

static void test_json_print(void)
{
    static const double chosen[] = {
        0, -0.0, 1, -1, 0.5, -0.5, 0.1, 0.1 + 0.2, 1.0 / 3, 2.0 / 3, 1e-7,
        1e-5, 1e-4, 123.456, 1e14, 1e15 - 1, 1e15, 1e15 + 1, -1e15 + 1,
        -1e15, 1e16, 123456789012345678.0, 9007199254740992.0,
        9007199254740994.0, 2147483647.0, 2147483648.0, -2147483648.0,
        -2147483649.0, 4294967296.0, 17139128064.0, 13.338717860138264,
        157222.90717814627, 0.5042774297510941, 5e-324, 2.2250738585072014e-308,
        DBL_MAX, -DBL_MAX, 1e21, 1e300, 3.141592653589793, 299792458.0,
        1.5e-323, 0.30000000000000004, 100, 1e100, 1e-100};
    int bad = 0;
    for (size_t i = 0; i < sizeof chosen / sizeof chosen[0]; i++)
        bad += !same_number(chosen[i]);
    bad += !same_number(NAN) + !same_number(INFINITY) + !same_number(-INFINITY);
    /* random: any bit pattern, integers of every size, fractions that
     * print short (k / 10^j), and values near a power of ten */
    pcg32 r;
    pcg32_seed(&r, 32, 1);
    for (int i = 0; i < 200000 && bad < 10; i++) {
        uint64_t bits = (uint64_t)pcg32_next(&r) << 32 | pcg32_next(&r);
        double d;
        switch (i % 4) {
        case 0: memcpy(&d, &bits, sizeof d); break;
        case 1: d = (double)(int64_t)(bits >> (bits & 63)) * (bits & 64 ? -1 : 1); break;
        case 2: d = (double)(bits % 1000000) / pow(10, (double)(bits >> 60)); break;
        default: d = pow(10, (double)((int)(bits % 40) - 20)) * (1 + 1e-16 * (double)(bits >> 58));
        }
        bad += !same_number(d);
    }
    TP_CHECK_INT(bad, 0);

    /* every byte in a string and a key; a NULL string */
    char all[256];
    for (int i = 1; i < 256; i++) all[i - 1] = (char)i;
    all[255] = '\0';
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, all, all);
    cJSON_AddStringToObject(o, "", "");
    cJSON_AddStringToObject(o, "plain", "text with \"quotes\" and \\ \t\n");
    cJSON *nul = cJSON_CreateString("x");
    cJSON_free(nul->valuestring);
    nul->valuestring = NULL;
    cJSON_AddItemToObject(o, "null_string", nul);
    TP_CHECK(same_print(o));

    /* nesting: objects in arrays in objects, empty ones at depth, raw,
     * true, false, null */
    cJSON *a = cJSON_AddArrayToObject(o, "rows");
    for (int i = 0; i < 3; i++) {
        cJSON *row = cJSON_CreateObject();
        cJSON_AddNumberToObject(row, "i", i);
        cJSON_AddNumberToObject(row, "x", i / 7.0);
        cJSON_AddItemToObject(row, "empty", cJSON_CreateObject());
        cJSON_AddItemToObject(row, "none", cJSON_CreateArray());
        cJSON *inner = cJSON_AddArrayToObject(row, "inner");
        cJSON_AddItemToArray(inner, cJSON_CreateObject());
        cJSON_AddItemToArray(inner, cJSON_CreateArray());
        cJSON_AddItemToArray(inner, cJSON_CreateTrue());
        cJSON_AddItemToArray(inner, cJSON_CreateFalse());
        cJSON_AddItemToArray(inner, cJSON_CreateNull());
        cJSON_AddItemToArray(inner, cJSON_CreateRaw("{\"raw\": 1}"));
        cJSON_AddItemToArray(a, row);
    }
    cJSON_AddItemToObject(o, "empty", cJSON_CreateObject());
    TP_CHECK(same_print(o));
    TP_CHECK(same_print(a));
    cJSON *e = cJSON_CreateObject();
    TP_CHECK(same_print(e));
    cJSON_Delete(e);
    e = cJSON_CreateArray();
    TP_CHECK(same_print(e));
    /* what cJSON refuses: a raw item without text, an invalid item */
    cJSON *raw = cJSON_CreateRaw("1");
    cJSON_free(raw->valuestring);
    raw->valuestring = NULL;
    cJSON_AddItemToArray(e, raw);
    TP_CHECK(tp_json_print(e, 1) == NULL && cJSON_Print(e) == NULL);
    raw->type = cJSON_Invalid;
    TP_CHECK(tp_json_print(e, 0) == NULL && cJSON_PrintUnformatted(e) == NULL);
    TP_CHECK(tp_json_print(NULL, 1) == NULL);
    cJSON_Delete(e);
    cJSON_Delete(o);
}

int main(void)
{
    TP_RUN(test_parse_errors);
    TP_RUN(test_readers);
    TP_RUN(test_suggest);
    TP_RUN(test_read_file);
    TP_RUN(test_strict_numbers);
    TP_RUN(test_csv);
    TP_RUN(test_json_print);
    return TP_TEST_EXIT();
}
