/*
 * test_base.c - tp_base: JSON parsing errors with line and column, the
 * field readers' messages (file, path, value, range), edit distance and
 * suggestions, and file reading limits.
 */
#include "../hwdb/tp_base.h"
#include "tp_test.h"

#include <stdlib.h>

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

int main(void)
{
    TP_RUN(test_parse_errors);
    TP_RUN(test_readers);
    TP_RUN(test_suggest);
    TP_RUN(test_read_file);
    TP_RUN(test_strict_numbers);
    TP_RUN(test_csv);
    return TP_TEST_EXIT();
}
