/*
 * tp_base.c - errors, checked allocation, file reading and JSON field
 * readers with precise messages. See tp_base.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "tp_base.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int tp_errf(tp_err *e, int status, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
        e->status = status;
    }
    return status;
}

static void tp_oom(size_t n)
{
    fprintf(stderr, "trainplan: out of memory allocating %zu bytes\n", n);
    abort();
}

void *tp_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) tp_oom(n);
    return p;
}

void *tp_xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) tp_oom(count * size);
    return p;
}

void *tp_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) tp_oom(n);
    return q;
}

char *tp_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = tp_xmalloc(n);
    memcpy(p, s, n);
    return p;
}

const char *tp_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

void tp_strlcpy(char *dst, const char *src, size_t cap)
{
    if (cap == 0) return;
    size_t n = strlen(src);
    if (n >= cap) n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

int tp_streq_ci(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
    return *a == *b;
}

int tp_read_file(const char *path, size_t max_bytes, char **out, size_t *len,
                 tp_err *e)
{
    struct stat st;
    *out = NULL;
    if (len) *len = 0;
    if (stat(path, &st) != 0)
        return tp_errf(e, TP_ENOINPUT, "%s: cannot open: %s", path,
                       strerror(errno));
    if (S_ISDIR(st.st_mode))
        return tp_errf(e, TP_ENOINPUT, "%s: is a directory, expected a file",
                       path);
    if (!S_ISREG(st.st_mode))
        return tp_errf(e, TP_ENOINPUT, "%s: not a regular file", path);
    if ((unsigned long long)st.st_size > max_bytes)
        return tp_errf(e, TP_EDATA,
                       "%s: file is %lld bytes, larger than the %zu-byte limit "
                       "for input files",
                       path, (long long)st.st_size, max_bytes);
    FILE *f = fopen(path, "rb");
    if (!f)
        return tp_errf(e, TP_ENOINPUT, "%s: cannot open: %s", path,
                       strerror(errno));
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = tp_xmalloc(cap);
    for (;;) {
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (n < cap - 1 || got == 0) break;
        /* The file grew since stat(): read on, within the limit. */
        if (cap - 1 >= max_bytes) {
            int c = fgetc(f);
            if (c == EOF) break;
            fclose(f);
            free(buf);
            return tp_errf(e, TP_EDATA,
                           "%s: file is larger than the %zu-byte limit for "
                           "input files",
                           path, max_bytes);
        }
        cap = cap * 2 > max_bytes + 1 ? max_bytes + 1 : cap * 2;
        buf = tp_xrealloc(buf, cap);
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return tp_errf(e, TP_ENOINPUT, "%s: read error", path);
    }
    buf[n] = '\0';
    *out = buf;
    if (len) *len = n;
    return TP_OK;
}

int tp_json_parse(const char *path, const char *text, size_t len, cJSON **out,
                  tp_err *e)
{
    *out = NULL;
    size_t i = 0;
    while (i < len && isspace((unsigned char)text[i])) i++;
    if (i == len)
        return tp_errf(e, TP_EDATA, "%s: empty file, expected a JSON object",
                       path);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (root) {
        /* Anything but whitespace after the value is trailing garbage. */
        size_t at = (size_t)(end - text);
        while (at < len && isspace((unsigned char)text[at])) at++;
        if (at == len) {
            int rc = tp_json_unique(root, path, e);
            if (rc) {
                cJSON_Delete(root);
                return rc;
            }
            *out = root;
            return TP_OK;
        }
        cJSON_Delete(root);
        end = text + at;
    }
    size_t pos = end && end >= text ? (size_t)(end - text) : len;
    if (pos > len) pos = len;
    int line = 1, col = 1;
    for (size_t k = 0; k < pos; k++) {
        if (text[k] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    char near[24];
    size_t m = 0;
    for (size_t k = pos; k < len && m < sizeof near - 1 && text[k] != '\n'; k++)
        near[m++] = isprint((unsigned char)text[k]) ? text[k] : '?';
    near[m] = '\0';
    if (root)
        return tp_errf(e, TP_EDATA,
                       "%s:%d:%d: trailing data after the JSON value, near "
                       "\"%s\"",
                       path, line, col, near);
    /* cJSON reports where the failed value began; an input that ends
     * inside a string or an open object/array was cut short. */
    int depth = 0, in_str = 0, esc = 0;
    for (size_t k = 0; k < len; k++) {
        char ch = text[k];
        if (in_str) {
            if (esc)
                esc = 0;
            else if (ch == '\\')
                esc = 1;
            else if (ch == '"')
                in_str = 0;
        } else if (ch == '"') {
            in_str = 1;
        } else if (ch == '{' || ch == '[') {
            depth++;
        } else if (ch == '}' || ch == ']') {
            depth--;
        }
    }
    if (pos >= len || in_str || depth > 0)
        return tp_errf(e, TP_EDATA,
                       "%s:%d:%d: malformed JSON: unexpected end of file "
                       "(truncated?)",
                       path, line, col);
    return tp_errf(e, TP_EDATA, "%s:%d:%d: malformed JSON near \"%s\"", path,
                   line, col, near);
}

int tp_json_load(const char *path, cJSON **out, tp_err *e)
{
    char *text;
    size_t len;
    *out = NULL;
    int rc = tp_read_file(path, TP_JSON_MAX_BYTES, &text, &len, e);
    if (rc) return rc;
    rc = tp_json_parse(path, text, len, out, e);
    free(text);
    return rc;
}

void tp_json_describe(const cJSON *v, char *buf, size_t cap)
{
    if (!v) {
        tp_strlcpy(buf, "nothing", cap);
        return;
    }
    /* cJSON reads 1e309 as infinity and would print it as null */
    if (cJSON_IsNumber(v) && !isfinite(v->valuedouble)) {
        tp_strlcpy(buf, v->valuedouble > 0 ? "a number above 1.8e308 (out of "
                                             "range of a double)"
                                           : "a number below -1.8e308 (out of "
                                             "range of a double)", cap);
        return;
    }
    char *s = cJSON_PrintUnformatted(v);
    if (!s) {
        tp_strlcpy(buf, "?", cap);
        return;
    }
    size_t limit = cap < 49 ? cap : 49;
    if (strlen(s) >= limit && limit > 4) {
        memcpy(buf, s, limit - 4);
        memcpy(buf + limit - 4, "...", 4);
    } else {
        tp_strlcpy(buf, s, cap);
    }
    cJSON_free(s);
}

/* Looks up key; JSON null counts as absent. Returns TP_OK with *v NULL
 * when absent and optional. */
static int json_field(const cJSON *obj, const char *file, const char *path,
                      const char *key, int required, const cJSON **v,
                      tp_err *e)
{
    *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (*v && cJSON_IsNull(*v)) *v = NULL;
    if (!*v && required)
        return tp_errf(e, TP_EDATA, "%s: %s.%s: missing required field", file,
                       path, key);
    return TP_OK;
}

static int json_type_err(const cJSON *v, const char *file, const char *path,
                         const char *key, const char *expected, tp_err *e)
{
    char found[64];
    tp_json_describe(v, found, sizeof found);
    return tp_errf(e, TP_EDATA, "%s: %s.%s: expected %s, found %s", file, path,
                   key, expected, found);
}

int tp_json_num(const cJSON *obj, const char *file, const char *path,
                const char *key, int required, double lo, double hi,
                double *out, tp_err *e)
{
    const cJSON *v;
    int rc = json_field(obj, file, path, key, required, &v, e);
    if (rc || !v) return rc;
    char want[96];
    snprintf(want, sizeof want, "a number in [%g, %g]", lo, hi);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo
        || v->valuedouble > hi)
        return json_type_err(v, file, path, key, want, e);
    *out = v->valuedouble;
    return TP_OK;
}

int tp_json_int(const cJSON *obj, const char *file, const char *path,
                const char *key, int required, int64_t lo, int64_t hi,
                int64_t *out, tp_err *e)
{
    const cJSON *v;
    int rc = json_field(obj, file, path, key, required, &v, e);
    if (rc || !v) return rc;
    char want[96];
    snprintf(want, sizeof want, "an integer in [%lld, %lld]", (long long)lo,
             (long long)hi);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)
        || v->valuedouble < (double)lo || v->valuedouble > (double)hi
        || v->valuedouble != floor(v->valuedouble))
        return json_type_err(v, file, path, key, want, e);
    *out = (int64_t)v->valuedouble;
    return TP_OK;
}

int tp_json_bool(const cJSON *obj, const char *file, const char *path,
                 const char *key, int required, int *out, tp_err *e)
{
    const cJSON *v;
    int rc = json_field(obj, file, path, key, required, &v, e);
    if (rc || !v) return rc;
    if (!cJSON_IsBool(v))
        return json_type_err(v, file, path, key, "true or false", e);
    *out = cJSON_IsTrue(v) ? 1 : 0;
    return TP_OK;
}

int tp_json_str(const cJSON *obj, const char *file, const char *path,
                const char *key, int required, char *out, size_t cap,
                tp_err *e)
{
    const cJSON *v;
    int rc = json_field(obj, file, path, key, required, &v, e);
    if (rc || !v) return rc;
    if (!cJSON_IsString(v) || !v->valuestring)
        return json_type_err(v, file, path, key, "a string", e);
    if (strlen(v->valuestring) >= cap) {
        char want[64];
        snprintf(want, sizeof want, "a string of at most %zu characters",
                 cap - 1);
        return json_type_err(v, file, path, key, want, e);
    }
    tp_strlcpy(out, v->valuestring, cap);
    return TP_OK;
}

int tp_json_enum(const cJSON *obj, const char *file, const char *path,
                 const char *key, int required, const char *const *names,
                 int n, int *out, tp_err *e)
{
    const cJSON *v;
    int rc = json_field(obj, file, path, key, required, &v, e);
    if (rc || !v) return rc;
    if (cJSON_IsString(v) && v->valuestring)
        for (int i = 0; i < n; i++)
            if (tp_streq_ci(v->valuestring, names[i])) {
                *out = i;
                return TP_OK;
            }
    char want[512];
    size_t at = (size_t)snprintf(want, sizeof want, "one of ");
    for (int i = 0; i < n && at < sizeof want; i++)
        at += (size_t)snprintf(want + at, sizeof want - at, "%s\"%s\"",
                               i ? ", " : "", names[i]);
    return json_type_err(v, file, path, key, want, e);
}

int tp_edit_distance(const char *a, const char *b, int cap)
{
    /* Two-row Levenshtein over lowercased bytes; names are short. */
    size_t la = strlen(a), lb = strlen(b);
    if (la > 255 || lb > 255) return cap + 1;
    int prev[256], cur[256];
    for (size_t j = 0; j <= lb; j++) prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        int rowmin = cur[0];
        for (size_t j = 1; j <= lb; j++) {
            int same = tolower((unsigned char)a[i - 1])
                       == tolower((unsigned char)b[j - 1]);
            int d = prev[j - 1] + !same;
            if (prev[j] + 1 < d) d = prev[j] + 1;
            if (cur[j - 1] + 1 < d) d = cur[j - 1] + 1;
            cur[j] = d;
            if (d < rowmin) rowmin = d;
        }
        if (rowmin > cap) return cap + 1;
        memcpy(prev, cur, (lb + 1) * sizeof prev[0]);
    }
    return prev[lb] > cap ? cap + 1 : prev[lb];
}

static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (n == 0) return 0;
    for (; *hay; hay++) {
        size_t k = 0;
        while (k < n && hay[k]
               && tolower((unsigned char)hay[k])
                      == tolower((unsigned char)needle[k]))
            k++;
        if (k == n) return 1;
    }
    return 0;
}

void tp_suggest(const char *name, const char *const *candidates, int n,
                char *buf, size_t cap)
{
    enum { KEEP = 3 };
    int best[KEEP], score[KEEP], nbest = 0;
    int len = (int)strlen(name);
    int limit = len / 3 > 2 ? len / 3 : 2;
    for (int i = 0; i < n; i++) {
        int d = tp_edit_distance(name, candidates[i], limit);
        /* A name inside another ("h100" in "h100-sxm") is a near miss too. */
        if (d > limit && len >= 3
            && (contains_ci(candidates[i], name)
                || contains_ci(name, candidates[i])))
            d = limit;
        if (d > limit) continue;
        /* Insert sorted by distance, then by table order (stable). */
        int at = nbest < KEEP ? nbest : KEEP;
        while (at > 0 && score[at - 1] > d) at--;
        if (at >= KEEP) continue;
        int last = nbest < KEEP ? nbest : KEEP - 1;
        for (int k = last; k > at; k--) {
            best[k] = best[k - 1];
            score[k] = score[k - 1];
        }
        best[at] = i;
        score[at] = d;
        if (nbest < KEEP) nbest++;
    }
    if (cap) buf[0] = '\0';
    if (nbest == 0) return;
    size_t at = (size_t)snprintf(buf, cap, "; did you mean ");
    for (int k = 0; k < nbest && at < cap; k++)
        at += (size_t)snprintf(buf + at, cap - at, "%s'%s'",
                               k == 0 ? "" : (k == nbest - 1 ? " or " : ", "),
                               candidates[best[k]]);
    if (at < cap) snprintf(buf + at, cap - at, "?");
}

/* ---- duplicate keys ------------------------------------------------------ */

static int cmp_key(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    return strcmp(x->string, y->string);
}

/* The key object v has twice (the second, in order), or NULL. */
static const char *dup_key(const cJSON *v)
{
    size_t n = 0;
    for (const cJSON *c = v->child; c; c = c->next) n++;
    if (n < 2) return NULL;
    /* Small objects (most): every pair, on the stack; large ones sorted,
     * O(n log n). */
    const cJSON *few[16];
    const cJSON **k = n <= 16 ? few : tp_xmalloc(n * sizeof *k);
    size_t i = 0;
    for (const cJSON *c = v->child; c; c = c->next) k[i++] = c;
    const char *dup = NULL;
    if (n <= 16) {
        for (i = 1; i < n && !dup; i++)
            for (size_t j = 0; j < i && !dup; j++)
                if (k[j]->string[0] == k[i]->string[0]
                    && strcmp(k[j]->string, k[i]->string) == 0)
                    dup = k[i]->string;
    } else {
        qsort(k, n, sizeof *k, cmp_key);
        for (i = 1; i < n && !dup; i++)
            if (strcmp(k[i - 1]->string, k[i]->string) == 0)
                dup = k[i]->string;
    }
    if (k != few) free(k);
    return dup;
}

enum { UNIQUE_DEPTH = 1000 }; /* cJSON's own nesting limit is lower */

/* Depth first: the first object with a key twice, *dup its key and
 * chain[0..*depth] the values from the root down to it; NULL if none.
 * The path is written only for a message, never while walking (records
 * of a night are read by the hundred thousand). */
static const cJSON *find_dup(const cJSON *v, const cJSON **chain, int depth,
                             int *at, const char **dup)
{
    if (depth > UNIQUE_DEPTH) return NULL;
    chain[depth] = v;
    if (cJSON_IsObject(v) && (*dup = dup_key(v))) {
        *at = depth;
        return v;
    }
    for (const cJSON *c = v->child; c; c = c->next) {
        const cJSON *r = find_dup(c, chain, depth + 1, at, dup);
        if (r) return r;
    }
    return NULL;
}

int tp_json_unique(const cJSON *v, const char *path, tp_err *e)
{
    const cJSON *chain[UNIQUE_DEPTH + 2];
    const char *dup = NULL;
    int at = 0;
    if (!find_dup(v, chain, 0, &at, &dup)) return TP_OK;
    char where[256] = "$";
    size_t len = 1;
    for (int d = 1; d <= at && len < sizeof where; d++) {
        const cJSON *parent = chain[d - 1], *node = chain[d];
        int w;
        if (cJSON_IsObject(parent)) {
            w = snprintf(where + len, sizeof where - len, ".%s",
                         node->string ? node->string : "");
        } else {
            int i = 0;
            for (const cJSON *c = parent->child; c && c != node; c = c->next)
                i++;
            w = snprintf(where + len, sizeof where - len, "[%d]", i);
        }
        if (w < 0) break;
        len += (size_t)w;
    }
    return tp_errf(e, TP_EDATA,
                   "%s: %s: key \"%.64s\" appears twice; keep one (JSON "
                   "readers disagree on which value wins)",
                   path, where, dup);
}

/* ---- strict numbers -------------------------------------------------------- */

int tp_parse_int(const char *s, long long lo, long long hi, long long *out)
{
    const char *p = s;
    if (!s) return -1;
    if (*p == '-') p++;
    if (!isdigit((unsigned char)*p)) return -1;
    while (isdigit((unsigned char)*p)) p++;
    if (*p) return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int tp_parse_num(const char *s, double *out)
{
    const char *p = s;
    if (!s) return -1;
    if (*p == '-') p++;
    int digits = 0;
    while (isdigit((unsigned char)*p)) p++, digits++;
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) p++, digits++;
    }
    if (!digits) return -1;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!isdigit((unsigned char)*p)) return -1;
        while (isdigit((unsigned char)*p)) p++;
    }
    if (*p) return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno == ERANGE || *end || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

int tp_parse_int_pair(const char *s, const char *seps, long long lo_a,
                      long long hi_a, long long lo_b, long long hi_b,
                      long long *a, long long *b)
{
    const char *at = s ? strpbrk(s, seps) : NULL;
    char first[24]; /* more digits than any long long has is no number */
    size_t fl = at ? (size_t)(at - s) : 0;
    long long x, y;
    if (!at || fl == 0 || fl >= sizeof first) return -1;
    memcpy(first, s, fl);
    first[fl] = '\0';
    if (tp_parse_int(first, lo_a, hi_a, &x) || tp_parse_int(at + 1, lo_b, hi_b, &y))
        return -1;
    *a = x;
    *b = y;
    return 0;
}

/* The SI suffixes a count or an amount may carry: powers of 1000, as
 * "2T tokens" and "$1.5M" are written (never 1024: a sequence of "8k"
 * means 8192, so lengths and batch sizes take none, parse_plain). G and
 * B are both 1e9 (giga, billion). */
static const struct { char c; double mul; } si_suffixes[] = {
    {'k', 1e3}, {'K', 1e3}, {'M', 1e6}, {'G', 1e9}, {'B', 1e9}, {'T', 1e12}};

int tp_parse_si(const char *s, double *out)
{
    char num[64];
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n >= sizeof num) return -1;
    memcpy(num, s, n + 1);
    double mul = 1;
    for (size_t i = 0; i < sizeof si_suffixes / sizeof si_suffixes[0]; i++)
        if (num[n - 1] == si_suffixes[i].c) {
            mul = si_suffixes[i].mul;
            num[n - 1] = '\0';
            break;
        }
    double v;
    if (tp_parse_num(num, &v)) return -1;
    v *= mul;
    if (!isfinite(v)) return -1;
    /* 1.1T is 1.1 x 1e12 in binary: 1100000000000.0002; a count it
     * names is whole */
    if (mul > 1 && fabs(v - nearbyint(v)) <= 1e-9 * fabs(v)) v = nearbyint(v);
    *out = v;
    return 0;
}

int tp_parse_count(const char *s, long long lo, long long hi, long long *out)
{
    size_t n = s ? strlen(s) : 0;
    if (n < 2 || isdigit((unsigned char)s[n - 1]))
        return tp_parse_int(s, lo, hi, out);
    /* a suffix: digits[.digits] before it, no sign, no exponent (as a
     * plain count is strict: 8.0 and 1e1 are refused, issue 17) */
    size_t i = 0, digits = 0;
    while (i < n - 1 && isdigit((unsigned char)s[i])) i++, digits++;
    if (i < n - 1 && s[i] == '.') {
        i++;
        while (i < n - 1 && isdigit((unsigned char)s[i])) i++, digits++;
    }
    double v;
    if (i != n - 1 || digits == 0 || tp_parse_si(s, &v) || v != floor(v)
        || v < (double)lo || v > (double)hi)
        return -1;
    *out = (long long)v;
    return 0;
}
