/*
 * tp_base.h - the base every trainplan module stands on: status codes,
 * the error struct, checked allocation, whole-file reading, and cJSON
 * field readers that report file, JSON path, value and valid range.
 *
 * It lives in hwdb/ because hwdb is the bottom of the dependency chain
 * (hwdb <- space <- estimator <- search <- cli) and the top-level folders
 * are fixed. Prefix tp_ (shared by all modules), not hw_.
 *
 * Deliberately not here: any global state. Errors go into a caller's
 * tp_err, never a global (cJSON's global error pointer is why we parse
 * with cJSON_ParseWithLengthOpts and its return_parse_end instead).
 */
#ifndef TP_BASE_H
#define TP_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

/* Exit codes, documented in README.md and docs/trainplan.1. Library
 * functions return these as status codes; only main() exits. */
enum tp_status {
    TP_OK = 0,
    TP_INFEASIBLE = 1, /* nothing feasible: a result, not a failure */
    TP_EUSAGE = 64,    /* bad command line */
    TP_EDATA = 65,     /* bad input data */
    TP_ENOINPUT = 66,  /* missing or unreadable input file */
    TP_EINTERNAL = 70, /* a bug */
    TP_EIO = 74,       /* cannot write output */
    TP_ELOCKED = 75    /* output locked by another writer: try later
                          (sysexits' EX_TEMPFAIL) */
};

typedef struct tp_err {
    int status;      /* one of enum tp_status; TP_OK when no error */
    char msg[1024];  /* one line, no trailing newline */
} tp_err;

/* Sets e->status and formats e->msg (printf-style). Returns status so a
 * caller can write `return tp_errf(e, TP_EDATA, ...)`. e may be NULL. */
int tp_errf(tp_err *e, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Allocation that aborts with a message on failure (a CLI has nothing
 * better to do). Free with free(). */
void *tp_xmalloc(size_t n);
void *tp_xcalloc(size_t count, size_t size);
void *tp_xrealloc(void *p, size_t n);
char *tp_xstrdup(const char *s);

/* Copies src into dst[cap], always NUL-terminated, truncating. */
void tp_strlcpy(char *dst, const char *src, size_t cap);

/* The last component of path (after its last '/'), or path itself. */
const char *tp_basename(const char *path);

/* Reads a whole regular file into a NUL-terminated buffer the caller
 * frees with free(). Refuses directories (TP_ENOINPUT), missing or
 * unreadable files (TP_ENOINPUT), and files over max_bytes (TP_EDATA). */
int tp_read_file(const char *path, size_t max_bytes, char **out, size_t *len,
                 tp_err *e);

/* Largest JSON input file any loader accepts. */
#define TP_JSON_MAX_BYTES ((size_t)8 << 20)

/* Reads and parses a JSON file. Empty files, malformed JSON (with line
 * and column) and trailing garbage are TP_EDATA. The caller owns *out
 * and frees it with cJSON_Delete() before returning to its caller:
 * cJSON trees never leave a loader. */
int tp_json_load(const char *path, cJSON **out, tp_err *e);

/* Parses text (len bytes) already in memory; path names it in messages.
 * An object with a key twice is TP_EDATA (tp_json_unique). */
int tp_json_parse(const char *path, const char *text, size_t len, cJSON **out,
                  tp_err *e);

/* TP_EDATA naming the first object of v (depth first) that has a key
 * twice, with its JSON path: JSON readers disagree on which value wins
 * (cJSON reads the first, Python's json and transformers the last), so
 * every loader refuses such input rather than guess. */
int tp_json_unique(const cJSON *v, const char *path, tp_err *e);

/* Strict numbers for user text (options, shapes, CSV fields): the whole
 * string, no leading space or '+', no hexadecimal, infinity or NaN.
 * tp_parse_int: optional '-', decimal digits, in [lo, hi]. tp_parse_num:
 * a decimal number with optional fraction and exponent (1, 0.5, 2e9,
 * 1.5E-3). Both return 0 on success, -1 otherwise (out unchanged). */
int tp_parse_int(const char *s, long long lo, long long hi, long long *out);
int tp_parse_num(const char *s, double *out);

/* A count or amount as the options read it: a number with an
 * optional SI suffix k or K (1e3), M (1e6), G or B (1e9), T (1e12),
 * e.g. 2T, 1.5M; a result within 1e-9 of a whole number is that number.
 * 0 on success, -1 (out unchanged) otherwise. */
int tp_parse_si(const char *s, double *out);
/* A count in [lo, hi]: a strict integer (tp_parse_int: not 8.0, not 1e1),
 * or digits[.digits] and an SI suffix whose value is whole (1.5k). 0 on
 * success, -1 (out unchanged) otherwise. */
int tp_parse_count(const char *s, long long lo, long long hi, long long *out);

/* Two strict integers around the first of the characters seps ("2x4",
 * "0/4"): *a in [lo_a, hi_a], *b in [lo_b, hi_b]; 0 on success, -1
 * otherwise (outputs unchanged). */
int tp_parse_int_pair(const char *s, const char *seps, long long lo_a,
                      long long hi_a, long long lo_b, long long hi_b,
                      long long *a, long long *b);

/* Field readers. Each reads obj[key]; file and path (a JSON path such as
 * "$.peak_tflops", without the key) name the place in messages, e.g.
 *   gpus/x.json: $.peak_tflops.bf16.value: expected a number in
 *   [1, 1e+06], found "fast"
 * If the key is absent: with required set, TP_EDATA ("missing required
 * field"); otherwise *out is left unchanged and TP_OK returned. JSON null
 * counts as absent. Numbers must be finite. */
int tp_json_num(const cJSON *obj, const char *file, const char *path,
                const char *key, int required, double lo, double hi,
                double *out, tp_err *e);
int tp_json_int(const cJSON *obj, const char *file, const char *path,
                const char *key, int required, int64_t lo, int64_t hi,
                int64_t *out, tp_err *e);
int tp_json_bool(const cJSON *obj, const char *file, const char *path,
                 const char *key, int required, int *out, tp_err *e);
/* Strings longer than cap-1 are TP_EDATA, never truncated silently. */
int tp_json_str(const cJSON *obj, const char *file, const char *path,
                const char *key, int required, char *out, size_t cap,
                tp_err *e);
/* A string that must be one of names[0..n) (case-insensitive); *out is
 * its index. The message lists the valid names. */
int tp_json_enum(const cJSON *obj, const char *file, const char *path,
                 const char *key, int required, const char *const *names,
                 int n, int *out, tp_err *e);

/* v as text, the bytes cJSON_Print (formatted 1) or
 * cJSON_PrintUnformatted (0) of cJSON 1.7 writes, in less time
 * (tp_json_print.c says what is the same). Returns text the caller frees
 * with free(), or NULL where cJSON's would fail (v NULL, an invalid item,
 * a Raw item without text). Thread-safe; aborts when out of memory. */
char *tp_json_print(const cJSON *v, int formatted);

/* Writes a short rendering of a JSON value (at most ~48 chars) into buf,
 * for "found ..." in messages; a number out of a double's range (1e309,
 * which cJSON reads as infinity and prints as null) in words. */
void tp_json_describe(const cJSON *v, char *buf, size_t cap);

/* ---- CSV (tp_csv.c) --------------------------------------------------
 * An RFC 4180 reader of the measured-sample and collective-table files:
 * fields separated by commas, records by LF or CRLF; a field in double
 * quotes may hold commas, line breaks and quotes (doubled: ""). Blanks
 * around a field are dropped (the project's files align their columns),
 * inside quotes kept. The text (len bytes and a writable text[len], as
 * tp_read_file's NUL) is modified in place: fields point into it.
 * Not done: other separators, a BOM, quotes opening within a field. */
typedef struct tp_csv {
    char *p, *end;      /* the unread text */
    const char *path;   /* names the file in messages */
    int comments;       /* a line whose first non-blank is '#' is skipped */
    int line;           /* the line the last record started on, from 1 */
    int next_line;      /* the line p is on */
    char *line_start;   /* where that line starts (for columns) */
} tp_csv;

void tp_csv_init(tp_csv *r, char *text, size_t len, const char *path,
                 int comments);
/* Reads the next record into f[0..max): returns its field count (max + 1
 * when it has more than max; f holds the first max), 0 at the end of the
 * text, or -1 with TP_EDATA in e on a malformed quote, naming the file,
 * line and column ("x.csv:3:7: ..."): a quote that is never closed, a
 * quote inside an unquoted field, or text after a closing quote. A blank
 * line is one empty field. */
int tp_csv_next(tp_csv *r, char **f, int max, tp_err *e);

/* Case-insensitive edit distance, capped: returns min(distance, cap+1). */
int tp_edit_distance(const char *a, const char *b, int cap);

/* Fills buf with "; did you mean 'x' or 'y'?" naming up to three of
 * candidates[0..n) close to name (edit distance, or one contains the
 * other), or with "" when none is close. */
void tp_suggest(const char *name, const char *const *candidates, int n,
                char *buf, size_t cap);

/* Case-insensitive string equality. */
int tp_streq_ci(const char *a, const char *b);

#endif
