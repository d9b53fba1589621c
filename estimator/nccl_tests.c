/*
 * nccl_tests.c - reads the text output of NVIDIA's nccl-tests
 * (github.com/NVIDIA/nccl-tests: all_reduce_perf, all_gather_perf,
 * reduce_scatter_perf, alltoall_perf, sendrecv_perf) into collective
 * table rows, so a user's own measurements of their network become a
 * measured table (docs/hwdb.md).
 *
 * What a log holds (nccl-tests src/common.cu, versions 2.0 to 2.19):
 * "# nccl-tests version ..."; "# Collective test starting: NAME" (2.13
 * on); "# nThread ... minBytes ..."; one "#  Rank  R Group G Pid P on
 * HOST device D [BUS] GPU" line per rank; a column header ("# size count
 * type redop root time algbw busbw #wrong time algbw busbw #wrong", the
 * first group out-of-place, the second in-place; before 2.10 without
 * root and with "error", a maximum deviation, instead of "#wrong"); a
 * units line ("(B) (elements) (us) (GB/s)"); one row per size; "# Out of
 * bounds values", "# Avg bus bandwidth". Sizes are nccl-tests' "size"
 * column, which is the est_coll_time convention for every collective:
 * all-reduce the buffer, all-gather the gathered output, reduce-scatter
 * and all-to-all the whole input, send/recv the message. srun's "N: "
 * line labels, MPI and NCCL chatter between the lines are skipped.
 *
 * A row's time is the mean of its out-of-place and in-place times:
 * frameworks call both forms (in-place all-reduce of gradient buckets,
 * out-of-place all-gather of parameters), and the mean halves the noise
 * of either. A half whose #wrong is nonzero fails the import (the run
 * computed wrong results); "N/A" (validation off with -c 0, or in-place
 * all-to-all) is taken as unverified and counted.
 *
 * Not here: writing hwdb files (emit/import.c).
 */
#include "est.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOK 32
#define MAX_RANKS 65536

/* nccl-tests type names -> hwdb dtype (the time depends on bytes only;
 * integer types map to the float type of their size). */
static const struct {
    const char *name;
    hw_dtype dtype;
} nccl_types[] = {
    {"float", HW_FP32},   {"half", HW_FP16},   {"bfloat16", HW_BF16},
    {"f8e4m3", HW_FP8},   {"f8e5m2", HW_FP8},  {"fp8_e4m3", HW_FP8},
    {"fp8_e5m2", HW_FP8}, {"int8", HW_FP8},    {"uint8", HW_FP8},
    {"char", HW_FP8},     {"int32", HW_FP32},  {"uint32", HW_FP32},
    {"int", HW_FP32},
};

/* Old nccl-tests "error" column: a maximum deviation; float rounding of a
 * sum stays below this. */
#define MAX_OLD_ERROR 1e-3

typedef struct rank_ent {
    int rank;
    char host[128];
} rank_ent;

typedef struct section {
    est_nccl_test t;
    int cap;
    char name[64];          /* test name as the log gives it */
    int name_line;
    rank_ent *ranks;
    int n_ranks, cap_ranks;
    int rank_line;
    int ncols;              /* column header tokens; 0 = none yet */
    char cols[MAX_TOK][16];
    int header_line;
    double time_scale;      /* to seconds */
} section;

/* Splits s (modified) at blanks into at most max words; max + 1 when
 * there are more. No hidden state (not strtok). */
static int tokenize(char *s, char **tok, int max)
{
    int n = 0;
    for (char *p = s;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r') *p++ = '\0';
        if (!*p) return n;
        if (n == max) return max + 1;
        tok[n++] = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r') p++;
    }
}

/* Drops srun's "12: " label. */
static char *strip_label(char *line)
{
    char *p = line;
    while (*p == ' ') p++;
    char *d = p;
    while (*d >= '0' && *d <= '9') d++;
    if (d > p && d[0] == ':' && d[1] == ' ') return d + 2;
    return line;
}

/* Finds a "<name>_perf" word in s; copies it (without _perf) to out. */
static int find_perf_name(const char *s, char *out, size_t cap)
{
    const char *p = strstr(s, "_perf");
    while (p) {
        const char *b = p;
        while (b > s && (b[-1] == '_' || (b[-1] >= 'a' && b[-1] <= 'z')))
            b--;
        if (p > b) {
            size_t n = (size_t)(p - b);
            if (n >= cap) n = cap - 1;
            memcpy(out, b, n);
            out[n] = '\0';
            return 1;
        }
        p = strstr(p + 1, "_perf");
    }
    return 0;
}

static void free_rows(est_nccl_test *tests, int n)
{
    for (int i = 0; i < n; i++) {
        free(tests[i].rows);
        tests[i].rows = NULL;
    }
}

static void section_free(section *s)
{
    free(s->t.rows);
    free(s->ranks);
    memset(s, 0, sizeof *s);
}

/* Finishes a section: resolves its collective and shape. Returns TP_OK,
 * with *keep set when it has rows to hand out. */
static int finish(section *s, const char *path, const char *pending,
                  int pending_line, int op, int nodes, int per_node,
                  int *keep, tp_err *e)
{
    *keep = 0;
    if (s->ncols == 0 && s->t.n_rows == 0) return TP_OK; /* no test here */
    if (s->t.n_rows == 0)
        return tp_errf(e, TP_EDATA,
                       "%s:%d: no data rows under the column header (a "
                       "test that did not run, or a truncated log)",
                       path, s->header_line);
    /* Which collective: the "starting" line, a *_perf name in the log
     * before the table (an echoed command line), the file name, --op. */
    char name[64] = "", where[64] = "";
    if (s->name[0]) {
        tp_strlcpy(name, s->name, sizeof name);
        snprintf(where, sizeof where, "line %d", s->name_line);
    } else if (pending[0]) {
        tp_strlcpy(name, pending, sizeof name);
        snprintf(where, sizeof where, "line %d", pending_line);
    } else {
        if (find_perf_name(tp_basename(path), name, sizeof name))
            snprintf(where, sizeof where, "the file name");
    }
    int kind = name[0] ? est_coll_parse(name) : -1;
    if (name[0] && kind < 0)
        return tp_errf(e, TP_EDATA,
                       "%s: test '%s' (%s) is not a collective trainplan "
                       "models (expected all_reduce_perf, all_gather_perf, "
                       "reduce_scatter_perf, alltoall_perf or sendrecv_perf)",
                       path, name, where);
    if (kind >= 0 && op >= 0 && kind != op)
        return tp_errf(e, TP_EDATA,
                       "%s:%d: the log ran %s, but --op says %s", path,
                       s->header_line, est_coll_names[kind], est_coll_names[op]);
    if (kind < 0) kind = op;
    if (kind < 0)
        return tp_errf(e, TP_EDATA,
                       "%s:%d: cannot tell which collective ran: no '# "
                       "Collective test starting' line and no *_perf name in "
                       "the log or its file name; give --op",
                       path, s->header_line);
    s->t.kind = (est_coll)kind;
    /* Which group shape. */
    if (nodes > 0 && per_node > 0) {
        if (s->n_ranks && s->n_ranks != nodes * per_node)
            return tp_errf(e, TP_EDATA,
                           "%s:%d: the log lists %d ranks, but --nodes %d "
                           "--gpus-per-node %d make %d",
                           path, s->rank_line, s->n_ranks, nodes, per_node,
                           nodes * per_node);
        s->t.nodes = nodes;
        s->t.per_node = per_node;
    } else {
        if (s->n_ranks == 0)
            return tp_errf(e, TP_EDATA,
                           "%s:%d: no '#  Rank ... on HOST' lines to tell "
                           "how many nodes and GPUs per node ran the test; "
                           "give --nodes and --gpus-per-node",
                           path, s->header_line);
        /* Count ranks per host, hosts in order of first appearance. */
        int nh = 0, *count = tp_xcalloc((size_t)s->n_ranks, sizeof *count);
        const char **host = tp_xcalloc((size_t)s->n_ranks, sizeof *host);
        for (int i = 0; i < s->n_ranks; i++) {
            int h = 0;
            while (h < nh && strcmp(host[h], s->ranks[i].host) != 0) h++;
            if (h == nh) host[nh++] = s->ranks[i].host;
            count[h]++;
        }
        int rc = TP_OK;
        for (int h = 1; h < nh && rc == TP_OK; h++)
            if (count[h] != count[0])
                rc = tp_errf(e, TP_EDATA,
                             "%s:%d: hosts run different numbers of ranks "
                             "(%s: %d, %s: %d); trainplan's groups have the "
                             "same number on every node",
                             path, s->rank_line, host[0], count[0], host[h],
                             count[h]);
        if (rc == TP_OK) {
            s->t.nodes = nh;
            s->t.per_node = count[0];
        }
        free(count);
        free(host);
        if (rc) return rc;
    }
    for (int i = 0; i < s->t.n_rows; i++) {
        s->t.rows[i].kind = s->t.kind;
        s->t.rows[i].nodes = s->t.nodes;
        s->t.rows[i].per_node = s->t.per_node;
    }
    tp_strlcpy(s->t.file, path, sizeof s->t.file);
    *keep = 1;
    return TP_OK;
}

/* A "#  Rank  R Group G Pid P on HOST device D [BUS] NAME" line (Group
 * absent before 2.12). */
static int rank_line(section *s, char *text, const char *path, int lineno,
                     tp_err *e)
{
    char copy[1024];
    tp_strlcpy(copy, text, sizeof copy);
    char *tok[MAX_TOK + 1];
    int n = tokenize(copy, tok, MAX_TOK);
    if (n > MAX_TOK) n = MAX_TOK; /* tokenize's "more": Rank and on come first */
    int rank = -1;
    const char *host = NULL;
    for (int i = 0; i + 1 < n; i++) {
        if (strcmp(tok[i], "Rank") == 0) rank = atoi(tok[i + 1]);
        if (strcmp(tok[i], "on") == 0 && !host) host = tok[i + 1];
    }
    if (rank < 0 || !host || rank >= MAX_RANKS)
        return tp_errf(e, TP_EDATA,
                       "%s:%d: rank line: expected '# Rank R ... on HOST "
                       "device D', found '%.80s'",
                       path, lineno, text);
    for (int i = 0; i < s->n_ranks; i++)
        if (s->ranks[i].rank == rank)
            return tp_errf(e, TP_EDATA,
                           "%s:%d: rank %d is listed twice: each process "
                           "ran its own one-rank test (nccl-tests built "
                           "without MPI=1?); the times are not of one group",
                           path, lineno, rank);
    if (s->n_ranks == s->cap_ranks) {
        s->cap_ranks = s->cap_ranks ? 2 * s->cap_ranks : 16;
        s->ranks = tp_xrealloc(s->ranks, (size_t)s->cap_ranks * sizeof *s->ranks);
    }
    s->ranks[s->n_ranks].rank = rank;
    tp_strlcpy(s->ranks[s->n_ranks].host, host, sizeof s->ranks[0].host);
    s->n_ranks++;
    if (!s->rank_line) s->rank_line = lineno;
    const char *br = strchr(text, ']');
    if (br && !s->t.device[0]) {
        br++;
        while (*br == ' ') br++;
        tp_strlcpy(s->t.device, br, sizeof s->t.device);
        char *end = s->t.device + strlen(s->t.device);
        while (end > s->t.device && (end[-1] == ' ' || end[-1] == '\r'))
            *--end = '\0';
    }
    return TP_OK;
}

/* Parses a data row against the column header. */
static int data_row(section *s, char *text, const char *path, int lineno,
                    tp_err *e)
{
    char copy[1024];
    tp_strlcpy(copy, text, sizeof copy);
    char *tok[MAX_TOK + 1];
    int n = tokenize(copy, tok, MAX_TOK);
    if (n != s->ncols)
        return tp_errf(e, TP_EDATA,
                       "%s:%d: %d fields, the column header (line %d) has %d: "
                       "a truncated or garbled row",
                       path, lineno, n, s->header_line, s->ncols);
    double size = -1, sum = 0;
    int halves = 0, unverified = 0, dt = -1;
    const char *half[2] = {"out-of-place", "in-place"};
    int which = -1;
    for (int c = 0; c < n; c++) {
        const char *name = s->cols[c];
        char *end;
        if (strcmp(name, "size") == 0) {
            errno = 0;
            size = strtod(tok[c], &end);
            if (*end || errno || !(size >= 0) || size > 1e15 || size != floor(size))
                return tp_errf(e, TP_EDATA,
                               "%s:%d: field 'size': expected a whole number "
                               "of bytes, found '%s'",
                               path, lineno, tok[c]);
        } else if (strcmp(name, "type") == 0) {
            for (size_t k = 0; k < sizeof nccl_types / sizeof nccl_types[0]; k++)
                if (strcmp(tok[c], nccl_types[k].name) == 0)
                    dt = (int)nccl_types[k].dtype;
            if (dt < 0)
                return tp_errf(e, TP_EDATA,
                               "%s:%d: field 'type': '%s' has no hwdb dtype "
                               "(expected float, half, bfloat16, an 8-bit or a "
                               "32-bit type; rerun with -d float: the time "
                               "depends on bytes, not type)",
                               path, lineno, tok[c]);
        } else if (strcmp(name, "time") == 0) {
            which++;
            errno = 0;
            double v = strtod(tok[c], &end);
            if (*end || errno || !(v > 0) || !isfinite(v))
                return tp_errf(e, TP_EDATA,
                               "%s:%d: field 'time' (%s): expected a positive "
                               "number, found '%s'",
                               path, lineno, half[which > 0], tok[c]);
            sum += v;
            halves++;
        } else if (strcmp(name, "#wrong") == 0 || strcmp(name, "error") == 0) {
            if (strcmp(tok[c], "N/A") == 0) {
                unverified = 1;
                continue;
            }
            errno = 0;
            double v = strtod(tok[c], &end);
            int old = strcmp(name, "error") == 0;
            if (*end || errno || !isfinite(v) || v < 0)
                return tp_errf(e, TP_EDATA,
                               "%s:%d: field '%s' (%s): expected a count or "
                               "N/A, found '%s'",
                               path, lineno, name, half[which > 0], tok[c]);
            if (old ? v > MAX_OLD_ERROR : v != 0)
                return tp_errf(e, TP_EDATA,
                               "%s:%d: field '%s' (%s) = %s: the run computed "
                               "wrong results, so its times are not of a "
                               "working collective; fix the run and measure "
                               "again",
                               path, lineno, name, half[which > 0], tok[c]);
        }
    }
    if (size == 0) return TP_OK; /* nccl-tests -b 0: nothing moved */
    if (halves == 0)
        return tp_errf(e, TP_EDATA, "%s:%d: the column header has no 'time'",
                       path, s->header_line);
    if (s->t.n_rows == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 32;
        s->t.rows = tp_xrealloc(s->t.rows, (size_t)s->cap * sizeof *s->t.rows);
    }
    /* A time the table loader refuses is refused here, where the line
     * that has it can be named, never written to a table that every later
     * command would stop on. */
    double us = sum / halves * s->time_scale * 1e6;
    if (!(us >= EST_COLL_TIME_MIN_US && us <= EST_COLL_TIME_MAX_US))
        return tp_errf(e, TP_EDATA,
                       "%s:%d: time %g us: expected [%g, %g] us (no "
                       "collective takes less than a nanosecond)",
                       path, lineno, us, EST_COLL_TIME_MIN_US,
                       EST_COLL_TIME_MAX_US);
    est_coll_row *r = &s->t.rows[s->t.n_rows++];
    memset(r, 0, sizeof *r);
    r->dtype = dt < 0 ? HW_FP32 : (hw_dtype)dt;
    r->bytes = size;
    r->time_s = sum / halves * s->time_scale;
    r->line = lineno;
    s->t.n_unverified += unverified;
    return TP_OK;
}

/* Column header: "# size count type redop root time algbw busbw #wrong
 * ..." (nccl-tests prints "#wrong" as one word). */
static int is_header(char *const *tok, int n)
{
    int size = 0, time = 0;
    for (int i = 0; i < n; i++) {
        size |= strcmp(tok[i], "size") == 0;
        time |= strcmp(tok[i], "time") == 0;
    }
    return size && time && n > 2 && strcmp(tok[1], "size") == 0;
}

/* Notes a *_perf name seen outside a table: for the test in progress
 * while its table has not started, else for the next test. */
static void note_name(const section *s, const char *l, int lineno,
                      char *pending, int *pending_line, char *next,
                      int *next_line)
{
    char nm[64];
    if (!find_perf_name(l, nm, sizeof nm)) return;
    if (s->ncols < 0 || s->t.n_rows) {
        tp_strlcpy(next, nm, 64);
        *next_line = lineno;
    } else if (s->ncols == 0) {
        tp_strlcpy(pending, nm, 64);
        *pending_line = lineno;
    }
}

int est_nccl_parse(const char *path, int op, int nodes, int per_node,
                   est_nccl_test **tests, int *n_tests, tp_err *e)
{
    char *text;
    size_t len;
    int rc = tp_read_file(path, (size_t)64 << 20, &text, &len, e);
    if (rc) return rc;
    if (memchr(text, '\0', len)) {
        free(text);
        return tp_errf(e, TP_EDATA,
                       "%s: a binary file, expected nccl-tests text output",
                       path);
    }
    section s;
    memset(&s, 0, sizeof s);
    s.time_scale = 1e-6;
    char pending[64] = "", next[64] = "", version[160] = "";
    int pending_line = 0, next_line = 0;
    int lineno = 0, before = *n_tests, found = 0;
    for (char *line = text; line && *line && rc == TP_OK;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        lineno++;
        char *l = strip_label(line);
        while (*l == ' ' || *l == '\t') l++;
        size_t ll = strlen(l);
        while (ll && (l[ll - 1] == '\r' || l[ll - 1] == ' ')) l[--ll] = '\0';
        int starts = strncmp(l, "# Collective test starting:", 27) == 0;
        int nthread = strncmp(l, "# nThread", 9) == 0;
        int vers = strncmp(l, "# nccl-tests version", 20) == 0;
        if (starts || vers || (nthread && (s.ncols || s.t.n_rows))) {
            /* A new test begins: hand out the one before. */
            if (s.ncols || s.t.n_rows) {
                int keep;
                if (s.ncols < 0) s.ncols = -s.ncols;
                rc = finish(&s, path, pending, pending_line, op, nodes,
                            per_node, &keep, e);
                if (rc) break;
                if (keep) {
                    *tests = tp_xrealloc(*tests, (size_t)(*n_tests + 1)
                                                     * sizeof **tests);
                    (*tests)[(*n_tests)++] = s.t;
                    s.t.rows = NULL;
                    found++;
                }
                section_free(&s);
                s.time_scale = 1e-6;
                tp_strlcpy(pending, next, sizeof pending);
                pending_line = next_line;
                next[0] = '\0';
            }
            if (vers) tp_strlcpy(version, l + 2, sizeof version);
            if (starts) {
                const char *nm = l + 27;
                while (*nm == ' ') nm++;
                tp_strlcpy(s.name, nm, sizeof s.name);
                char *sp = strchr(s.name, ' ');
                if (sp) *sp = '\0';
                size_t k = strlen(s.name);
                if (k > 5 && strcmp(s.name + k - 5, "_perf") == 0)
                    s.name[k - 5] = '\0';
                s.name_line = lineno;
            }
            if (!s.t.first_line) s.t.first_line = lineno;
            tp_strlcpy(s.t.version, version, sizeof s.t.version);
        } else if (l[0] == '#') {
            char copy[1024];
            tp_strlcpy(copy, l, sizeof copy);
            char *tok[MAX_TOK + 1];
            int n = tokenize(copy, tok, MAX_TOK);
            if (n > 2 && strcmp(tok[1], "Rank") == 0) {
                rc = rank_line(&s, l, path, lineno, e);
            } else if (n > 1 && n <= MAX_TOK && strcmp(tok[1], "size") == 0) {
                for (int i = 1; i < n && rc == TP_OK; i++)
                    if (strcmp(tok[i], "cputime") == 0)
                        rc = tp_errf(e, TP_EDATA,
                                     "%s:%d: the log reports CPU time "
                                     "(nccl-tests -C 1), not the collective's "
                                     "time; run it again without -C",
                                     path, lineno);
                if (rc == TP_OK && is_header(tok, n)) {
                    s.ncols = n - 1;
                    for (int i = 1; i < n; i++)
                        tp_strlcpy(s.cols[i - 1], tok[i], sizeof s.cols[0]);
                    s.header_line = lineno;
                    s.time_scale = 1e-6;
                    if (!s.t.first_line) s.t.first_line = lineno;
                }
            } else if (n > 1 && strcmp(tok[1], "(B)") == 0) {
                for (int i = 1; i < n && i < MAX_TOK; i++) /* n: max + 1 for more */
                    if (strcmp(tok[i], "(ms)") == 0) s.time_scale = 1e-3;
            } else if (strstr(l, "Out of bounds") || strstr(l, "Avg bus bandwidth")
                       || strstr(l, "test concluded")) {
                /* The table is over; what follows is not data. */
                if (s.ncols > 0 && s.t.n_rows == 0)
                    rc = tp_errf(e, TP_EDATA,
                                 "%s:%d: no data rows under the column "
                                 "header (line %d)",
                                 path, lineno, s.header_line);
                if (s.ncols > 0) s.ncols = -s.ncols;
            } else {
                note_name(&s, l, lineno, pending, &pending_line, next,
                          &next_line);
            }
        } else if (s.ncols > 0 && l[0] >= '0' && l[0] <= '9') {
            /* A row starts with its size, a whole number. */
            size_t d = strspn(l, "0123456789");
            if (l[d] == ' ' || l[d] == '\t' || l[d] == '\0')
                rc = data_row(&s, l, path, lineno, e);
        } else if (s.ncols <= 0) {
            /* An echoed command line ("$ ./build/all_reduce_perf -b 8"). */
            note_name(&s, l, lineno, pending, &pending_line, next, &next_line);
        }
        line = nl ? nl + 1 : NULL;
    }
    if (rc == TP_OK && (s.ncols || s.t.n_rows)) {
        int keep;
        if (s.ncols < 0) s.ncols = -s.ncols;
        rc = finish(&s, path, pending, pending_line, op, nodes, per_node,
                    &keep, e);
        if (rc == TP_OK && keep) {
            *tests = tp_xrealloc(*tests, (size_t)(*n_tests + 1) * sizeof **tests);
            (*tests)[(*n_tests)++] = s.t;
            s.t.rows = NULL;
            found++;
        }
    }
    section_free(&s);
    free(text);
    if (rc == TP_OK && found == 0)
        rc = tp_errf(e, TP_EDATA,
                     "%s: no nccl-tests results found (expected rows of "
                     "'size count type ... time algbw busbw #wrong' under a "
                     "'#  size  count  type' header)",
                     path);
    /* *tests is NULL until some call keeps a test: no arithmetic on NULL
     * (an empty file, fuzz/regressions/nccl_tests). */
    if (rc && *tests) {
        free_rows(*tests + before, *n_tests - before);
        *n_tests = before;
    }
    return rc;
}

void est_nccl_free(est_nccl_test *tests, int n)
{
    if (!tests) return;
    free_rows(tests, n);
    free(tests);
}
