/*
 * parse.c - an option's argument as the command line reads it: integers
 * and names (lib_arg_int, lib_arg_name), counts and amounts with an SI
 * suffix (lib_arg_amount, lib_arg_count, over tp_base.h's tp_parse_si and
 * tp_parse_count, the bare forms the sweep's spec reads too), plain
 * lengths and batch sizes that refuse one (lib_arg_plain), durations,
 * --group's NODESxGPUS (lib_parse_group) and --doc-length's buckets. Each
 * lib_arg_* names the option in its message.
 */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "lib_int.h"
#include "table.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>


int lib_arg_int(const char *opt, const char *s, long long lo,
                long long hi, long long *out, tp_err *e)
{
    long long v;
    if (tp_parse_int(s, lo, hi, &v))
        return tp_errf(e, TP_EUSAGE,
                       "--%s: expected an integer in [%lld, %lld], found '%s'",
                       opt, lo, hi, s);
    *out = v;
    return TP_OK;
}

/* One of n names (any case) into *out, its index; the message lists
 * them all. */
int lib_arg_name(const char *opt, const char *s,
                 const char *const *names, int n, int *out, tp_err *e)
{
    for (int i = 0; i < n; i++)
        if (tp_streq_ci(s, names[i])) {
            *out = i;
            return TP_OK;
        }
    char list[256] = "";
    size_t len = 0;
    for (int i = 0; i < n && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                                i == 0 ? "" : i == n - 1 ? " or " : ", ",
                                names[i]);
    return tp_errf(e, TP_EUSAGE, "--%s: expected %s, found '%s'", opt, list, s);
}

/* --doc-length LEN or LEN:SHARE,LEN:SHARE,...: the documents packed into
 * a sequence, by length, with the share of the tokens each length holds
 * (summing to 1). */
int lib_arg_docs(const char *s, lib_opts *o, tp_err *e)
{
    char buf[512];
    if (strlen(s) >= sizeof buf)
        return tp_errf(e, TP_EUSAGE, "--doc-length: too long (at most %d "
                       "characters)", (int)sizeof buf - 1);
    tp_strlcpy(buf, s, sizeof buf);
    int n = 0;
    double sum = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n == SPACE_MAX_DOC_BUCKETS)
            return tp_errf(e, TP_EUSAGE, "--doc-length '%s': at most %d "
                           "lengths", s, SPACE_MAX_DOC_BUCKETS);
        char *colon = strchr(t, ':');
        if (colon) *colon = '\0';
        long long len;
        if (tp_parse_int(t, 1, 10000000, &len))
            return tp_errf(e, TP_EUSAGE, "--doc-length '%s': expected a "
                           "document length in [1, 10000000] tokens, found "
                           "'%s'", s, t);
        double share = 1;
        if (colon) {
            if (tp_parse_num(colon + 1, &share) || !(share > 0) || share > 1)
                return tp_errf(e, TP_EUSAGE, "--doc-length '%s': expected "
                               "the share of tokens in (0, 1] after '%lld:', "
                               "found '%s'", s, len, colon + 1);
        } else if (strchr(s, ',')) {
            return tp_errf(e, TP_EUSAGE, "--doc-length '%s': with several "
                           "lengths give each its share, LEN:SHARE", s);
        }
        o->job.doc_len[n] = len, o->job.doc_share[n] = share;
        sum += share;
        n++;
    }
    if (n == 0 || fabs(sum - 1) > 1e-3)
        return tp_errf(e, TP_EUSAGE, "--doc-length '%s': the shares sum to "
                       "%g; expected 1", s, sum);
    o->job.n_docs = n;
    return TP_OK;
}

/* Parses a number in (0, hi]; 0 on success. */
int lib_arg_pos(const char *opt, const char *s, double hi,
                const char *unit, double *out, tp_err *e)
{
    double v;
    if (tp_parse_num(s, &v) || !(v > 0) || v > hi)
        return tp_errf(e, TP_EUSAGE,
                       "--%s: expected a number (%s) in (0, %g], found '%s'",
                       opt, unit, hi, s);
    *out = v;
    return TP_OK;
}

/* An amount in (0, hi], with an SI suffix (--budget-usd 1.5M); 0 on
 * success. */
int lib_arg_amount(const char *opt, const char *s, double hi,
                   const char *unit, double *out, tp_err *e)
{
    double v;
    if (tp_parse_si(s, &v) || !(v > 0) || v > hi)
        return tp_errf(e, TP_EUSAGE,
                       "--%s: expected %s in (0, %g], %s (e.g. 1.5M), found "
                       "'%s'",
                       opt, unit, hi, LIB_SI_FORM, s);
    *out = v;
    return TP_OK;
}

/* A count in [lo, hi], an integer or one with an SI suffix (--max-gpus
 * 2k); 0 on success. */
int lib_arg_count(const char *opt, const char *s, long long lo,
                  long long hi, long long *out, tp_err *e)
{
    long long v;
    if (tp_parse_count(s, lo, hi, &v))
        return tp_errf(e, TP_EUSAGE,
                       "--%s: expected an integer in [%lld, %lld], or one "
                       "with an SI suffix k, M, G or B, T (2k = 2000), found "
                       "'%s'",
                       opt, lo, hi, s);
    *out = v;
    return TP_OK;
}

/* A length or batch size: a plain integer in [lo, hi]. A suffix is
 * refused by name: "8k" is 8192 to most who write it and 8000 in SI. */
int lib_arg_plain(const char *opt, const char *s, long long lo,
                  long long hi, long long *out, tp_err *e)
{
    double v;
    size_t n = strlen(s);
    if (n > 1 && !isdigit((unsigned char)s[n - 1]) && !tp_parse_si(s, &v))
        return tp_errf(e, TP_EUSAGE,
                       "--%s: '%s' has an SI suffix, which this option does "
                       "not take (8k is 8192 to some, 8000 to others); "
                       "expected the plain integer in [%lld, %lld], e.g. %s",
                       opt, s, lo, hi,
                       strcmp(opt, "seq-length") == 0 ? "8192" : "1024");
    return lib_arg_int(opt, s, lo, hi, out, e);
}

/* A duration: a number with s, m, h, d or w (seconds without). */
int lib_arg_duration(const char *s, double *out, tp_err *e)
{
    static const struct { char c; double s; } units[] = {
        {'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}, {'w', 604800}};
    /* The number, then at most one unit letter. */
    char num[64];
    size_t n = strlen(s);
    double mul = 1, v = 0;
    int bad = n == 0 || n >= sizeof num;
    if (!bad) {
        memcpy(num, s, n + 1);
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (num[n - 1] == units[i].c) mul = units[i].s, num[n - 1] = '\0';
        bad = tp_parse_num(num, &v) != 0;
    }
    if (bad || !(v > 0) || v * mul > 3.2e9)
        return tp_errf(e, TP_EUSAGE,
                       "--deadline: expected a duration in (0, 100 years], "
                       "e.g. 30d, 72h, 90m or 3600s, found '%s'",
                       s);
    *out = v * mul;
    return TP_OK;
}

int lib_parse_group(const char *s, int *nodes, int *per_node, tp_err *e)
{
    long long n = 0, g = 0;
    if (tp_parse_int_pair(s, "xX", 1, 1000000, 1, 4096, &n, &g))
        return tp_errf(e, TP_EUSAGE,
                       "--group: expected NODESxGPUS_PER_NODE with NODES in "
                       "[1, 1000000] and GPUS_PER_NODE in [1, 4096], e.g. "
                       "2x4, found '%s'",
                       s);
    *nodes = (int)n;
    *per_node = (int)g;
    return TP_OK;
}
