/*
 * test_opt.c - the command line's option parser (lib/opt.c) against
 * getopt_long's rules: values in the next word or after '=', unique
 * prefixes, clustered short flags, arguments gathered in order wherever
 * they stand, "--", and each refusal with the option at fault; argv stays
 * a permutation of itself; two parsers interleaved do not disturb each
 * other (the state is the caller's).
 */
#include "lib_int.h"
#include "tp_test.h"

#include <getopt.h>
#include <string.h>

enum { O_SYSTEM = 256, O_SYSTEMS, O_SEQ, O_FLAG };
static const struct option lo[] = {
    {"system", required_argument, NULL, O_SYSTEM},
    {"systems-file", required_argument, NULL, O_SYSTEMS},
    {"seq-length", required_argument, NULL, O_SEQ},
    {"no-overlap", no_argument, NULL, O_FLAG},
    {"model", required_argument, NULL, 'm'},
    {"verbose", no_argument, NULL, 'v'},
    {NULL, 0, NULL, 0}};
static const char so[] = "m:vx";

/* Parses argv[0..argc) into a string of "id=value;" and "pos:..." parts. */
static int parse(int argc, char **argv, char *out, size_t cap, lib_getopt *g)
{
    int c;
    out[0] = '\0';
    while ((c = lib_getopt_next(g, argc, argv, so, lo)) != -1) {
        char part[96];
        if (c == '?') return '?';
        snprintf(part, sizeof part, "%d=%s;", c, g->arg ? g->arg : "");
        strncat(out, part, cap - strlen(out) - 1);
    }
    for (int i = 0; i < g->npos; i++) {
        strncat(out, "pos:", cap - strlen(out) - 1);
        strncat(out, argv[1 + i], cap - strlen(out) - 1);
        strncat(out, ";", cap - strlen(out) - 1);
    }
    return 0;
}

static void test_forms(void)
{
    const char *v[] = {"tp", "estimate", "--system", "eos", "-mllama", "--seq=4096",
                 "x1", "-vx", "--no-overlap", "-m", "-7", "--", "-z", NULL};
    const char *keep[13];
    memcpy(keep, v, sizeof keep);
    lib_getopt g = {0};
    char out[512];
    TP_CHECK_INT(parse(13, (char **)v, out, sizeof out, &g), 0);
    char want[256];
    snprintf(want, sizeof want,
             "%d=eos;%d=llama;%d=4096;%d=;%d=;%d=;%d=-7;pos:estimate;pos:x1;"
             "pos:-z;", O_SYSTEM, 'm', O_SEQ, 'v', 'x', O_FLAG, 'm');
    TP_CHECK(strcmp(out, want) == 0);
    /* a permutation: every pointer once */
    for (int i = 0; i < 13; i++) {
        int n = 0;
        for (int k = 0; k < 13; k++) n += v[k] == keep[i];
        TP_CHECK_INT(n, 1);
    }
}

static void test_refusals(void)
{
    struct {
        const char *arg;
        int opt, no_value;
    } bad[] = {{"--bogus", 0, 0},
               {"--sys", 0, 0}, /* system or systems-file: ambiguous */
               {"--no-overlap=1", O_FLAG, 1},
               {"--seq-length", O_SEQ, 0}, /* no value left */
               {"-q", 'q', 0},
               {"-m", 'm', 0}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *v[] = {"tp", bad[i].arg, NULL};
        lib_getopt g = {0};
        char out[128];
        TP_CHECK_INT(parse(2, (char **)v, out, sizeof out, &g), '?');
        TP_CHECK_INT(g.opt, bad[i].opt);
        TP_CHECK_INT(g.no_value, bad[i].no_value);
        TP_CHECK(strcmp(g.bad, bad[i].arg) == 0);
    }
    /* an exact name wins over the longer ones it prefixes */
    const char *v[] = {"tp", "--system", "a", NULL};
    lib_getopt g = {0};
    char out[128];
    TP_CHECK_INT(parse(3, (char **)v, out, sizeof out, &g), 0);
}

static void test_interleaved(void)
{
    /* two calls' parsers stepped in turn: each keeps its own place */
    const char *a[] = {"tp", "--system", "eos", "-m", "a", "one", NULL};
    const char *b[] = {"tp", "two", "-m", "b", "--seq-length", "8", NULL};
    lib_getopt ga = {0}, gb = {0};
    int ca, cb;
    do {
        ca = lib_getopt_next(&ga, 6, (char **)a, so, lo);
        cb = lib_getopt_next(&gb, 6, (char **)b, so, lo);
        if (ca == 'm') TP_CHECK(strcmp(ga.arg, "a") == 0);
        if (cb == 'm') TP_CHECK(strcmp(gb.arg, "b") == 0);
    } while (ca != -1 || cb != -1);
    TP_CHECK_INT(ga.npos, 1);
    TP_CHECK(strcmp(a[1], "one") == 0);
    TP_CHECK_INT(gb.npos, 1);
    TP_CHECK(strcmp(b[1], "two") == 0);
}

int main(void)
{
    TP_RUN(test_forms);
    TP_RUN(test_refusals);
    TP_RUN(test_interleaved);
    return TP_TEST_EXIT();
}
