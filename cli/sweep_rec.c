/*
 * sweep_rec.c - the records of a sweep as lines of a file: splitting a
 * file into complete lines and a torn tail, what a record says of itself
 * (index, count, id), how much of an existing file a --resume keeps, and
 * the outcome `diff` compares.
 *
 * A record is one JSON object on one line ending in '\n'. A line without
 * its '\n' is a write a crash cut short: never a record.
 *
 * diff reads records lean: its "search" member, most of a record's bytes
 * (every ranked layout, the front), is never read by diff, so it is not
 * parsed into a tree (issue 17: two 100,000-record nights are gigabytes).
 * Where it is the last member, as sweep writes it, it is not even
 * scanned: it runs to the line's closing brace (an object or null); a
 * record that then lacks index, count, id or status is read whole after
 * all. Elsewhere it is skipped with its strings and brackets checked.
 * The other members are parsed and checked as always.
 */
#include "sweep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* The complete lines that start in buf[from, to) (a line starts at 0 or
 * after a newline), appended to the arrays *st and *ln (*n used of
 * *cap). */
static void lines_from(const char *buf, size_t len, size_t from, size_t to,
                       size_t **st, size_t **ln, int *n, int *cap)
{
    size_t i = from;
    if (i > 0) { /* to the first line that starts in the piece */
        const char *nl = memchr(buf + i - 1, '\n', len - (i - 1));
        i = nl ? (size_t)(nl - buf) + 1 : len;
    }
    while (i < to) {
        const char *nl = memchr(buf + i, '\n', len - i);
        if (!nl) break;
        if (*n == *cap) {
            *cap = *cap ? 2 * *cap : 64;
            *st = tp_xrealloc(*st, (size_t)*cap * sizeof **st);
            *ln = tp_xrealloc(*ln, (size_t)*cap * sizeof **ln);
        }
        (*st)[*n] = i;
        (*ln)[*n] = (size_t)(nl - (buf + i));
        (*n)++;
        i = (size_t)(nl - buf) + 1;
    }
}

int sweep_split_lines(const char *buf, size_t len, size_t **starts,
                      size_t **lens, size_t *tail)
{
    /* Nights are gigabytes: the file in one piece per thread, each piece
     * the lines that start in it, then joined in order (the same lines
     * at any thread count). Small files in one piece. */
    enum { PIECES_MAX = 64 };
    int pieces = 1;
#ifdef _OPENMP
    if (len >= (64u << 20)) pieces = omp_get_max_threads();
#endif
    if (pieces > PIECES_MAX) pieces = PIECES_MAX;
    size_t *pst[PIECES_MAX] = {0}, *pln[PIECES_MAX] = {0};
    int pn[PIECES_MAX] = {0}, pcap[PIECES_MAX] = {0};
#pragma omp parallel for schedule(static, 1) if (pieces > 1)
    for (int k = 0; k < pieces; k++)
        lines_from(buf, len, len / (size_t)pieces * (size_t)k,
                   k == pieces - 1 ? len : len / (size_t)pieces * (size_t)(k + 1),
                   &pst[k], &pln[k], &pn[k], &pcap[k]);
    int n = 0;
    for (int k = 0; k < pieces; k++) n += pn[k];
    size_t *st = tp_xmalloc((size_t)(n > 0 ? n : 1) * sizeof *st);
    size_t *ln = tp_xmalloc((size_t)(n > 0 ? n : 1) * sizeof *ln);
    int at = 0;
    for (int k = 0; k < pieces; k++) {
        if (pn[k]) {
            memcpy(st + at, pst[k], (size_t)pn[k] * sizeof *st);
            memcpy(ln + at, pln[k], (size_t)pn[k] * sizeof *ln);
        }
        at += pn[k];
        free(pst[k]);
        free(pln[k]);
    }
    size_t end = n ? st[n - 1] + ln[n - 1] + 1 : 0;
    *tail = len - end;
    *starts = st;
    *lens = ln;
    return n;
}

static cJSON *parse_line(const char *line, size_t len)
{
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(line, len, &end, 0);
    if (j && end != line + len) {
        cJSON_Delete(j);
        return NULL;
    }
    if (j && !cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return NULL;
    }
    /* A record with a key twice is not one this program wrote. */
    tp_err de = {0};
    if (j && tp_json_unique(j, "record", &de)) {
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

/* ---- a record without its "search" member (diff) ----------------------- */

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

/* p at a '"': the byte after the closing quote, or NULL. */
static const char *skip_string(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"') return p + 1;
        if (c == '\\') p++;
        else if (c < 0x20) return NULL; /* JSON has no raw control bytes */
    }
    return NULL;
}

/* The end of the JSON value at p (an object, array, string or scalar),
 * its brackets matched and its strings closed; NULL when they are not.
 * Nesting deeper than 64 is refused (a record nests 6 deep). */
static const char *skip_value(const char *p, const char *end)
{
    if (p >= end) return NULL;
    if (*p == '"') return skip_string(p, end);
    if (*p != '{' && *p != '[') {
        const char *q = p;
        while (q < end && *q != ',' && *q != '}' && *q != ']' && *q != ' '
               && *q != '\t' && *q != '\n' && *q != '\r')
            q++;
        return q > p ? q : NULL;
    }
    uint64_t is_obj = 0; /* bit d: level d is an object (else an array) */
    int depth = 0;
    for (; p < end; p++) {
        char c = *p;
        if (c == '"') {
            p = skip_string(p, end);
            if (!p) return NULL;
            p--;
        } else if (c == '{' || c == '[') {
            if (depth == 64) return NULL;
            is_obj = (is_obj & ~(1ull << depth)) | ((uint64_t)(c == '{') << depth);
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth == 0 || ((is_obj >> (depth - 1)) & 1) != (c == '}'))
                return NULL;
            if (--depth == 0) return p + 1;
        }
    }
    return NULL;
}

/* The record on the line as an object of its members but "search", or
 * NULL when the line is not one object (or a key repeats, or a key has an
 * escape: then parse_line decides). With inputs_digest, the text of
 * "inputs" as it stands is hashed into it: the digest of
 * cJSON_PrintUnformatted(inputs) for a line sweep wrote, since sweep
 * writes records so, without printing it again. */
static cJSON *parse_line_lean(const char *line, size_t len,
                              uint64_t *inputs_digest)
{
    const char *p = line, *end = line + len;
    p = skip_ws(p, end);
    if (p >= end || *p != '{') return NULL;
    cJSON *j = cJSON_CreateObject();
    int searches = 0;
    p = skip_ws(p + 1, end);
    if (p < end && *p == '}') {
        p++;
    } else {
        for (;;) {
            if (p >= end || *p != '"') goto bad;
            const char *k = p + 1, *ke = skip_string(p, end);
            if (!ke) goto bad;
            size_t kl = (size_t)(ke - 1 - k);
            char key[64];
            if (kl >= sizeof key || memchr(k, '\\', kl)) goto bad;
            memcpy(key, k, kl);
            key[kl] = '\0';
            p = skip_ws(ke, end);
            if (p >= end || *p != ':') goto bad;
            p = skip_ws(p + 1, end);
            if (!strcmp(key, "search")) {
                if (searches++) goto bad;
                const char *close = end;
                while (close > p && (close[-1] == ' ' || close[-1] == '\t'
                                     || close[-1] == '\r'))
                    close--;
                if (close - p >= 3 && close[-1] == '}'
                    && ((*p == '{' && close[-2] == '}')
                        || (close - p == 5 && !memcmp(p, "null", 4)))) {
                    p = close - 1; /* the last member: not scanned */
                } else if (!(p = skip_value(p, end))) {
                    goto bad;
                }
            } else {
                const char *ve = NULL;
                cJSON *v = cJSON_ParseWithLengthOpts(p, (size_t)(end - p), &ve, 0);
                if (!v) goto bad;
                /* "inputs": its text hashed as it stands, not printed
                 * again (still parsed, so checked, as every member but
                 * "search"). */
                if (inputs_digest && !strcmp(key, "inputs"))
                    *inputs_digest = sweep_fnv1a(SWEEP_FNV_BASIS, p, (size_t)(ve - p));
                cJSON_AddItemToObject(j, key, v);
                p = ve;
            }
            p = skip_ws(p, end);
            if (p < end && *p == ',') {
                p = skip_ws(p + 1, end);
                continue;
            }
            if (p < end && *p == '}') {
                p++;
                break;
            }
            goto bad;
        }
    }
    if (skip_ws(p, end) != end) goto bad;
    tp_err de = {0};
    if (tp_json_unique(j, "record", &de)) goto bad;
    static const char *const needed[] = {"index", "count", "id", "status"};
    for (size_t i = 0; i < sizeof needed / sizeof needed[0]; i++)
        if (!cJSON_GetObjectItemCaseSensitive(j, needed[i])) goto bad;
    return j;
bad:
    cJSON_Delete(j);
    return NULL;
}

static int key_of(const cJSON *j, sweep_key *k)
{
    const cJSON *ix = cJSON_GetObjectItemCaseSensitive(j, "index");
    const cJSON *ct = cJSON_GetObjectItemCaseSensitive(j, "count");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
    /* Whole numbers a sweep can write (a spec has at most 2^53
     * scenarios), never converted from out of range (1e999 reads as
     * infinity; found by fuzz_sweep_rec). */
    if (!cJSON_IsNumber(ix) || !cJSON_IsNumber(ct) || !cJSON_IsString(id)
        || strlen(id->valuestring) != 16 || !(ix->valuedouble >= 0)
        || !(ct->valuedouble <= 9007199254740992.0)
        || ct->valuedouble <= ix->valuedouble
        || ix->valuedouble != floor(ix->valuedouble)
        || ct->valuedouble != floor(ct->valuedouble))
        return 0;
    k->index = (int64_t)ix->valuedouble;
    k->count = (int64_t)ct->valuedouble;
    tp_strlcpy(k->id, id->valuestring, sizeof k->id);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "version");
    k->check = sweep_record_check(cJSON_IsString(v) ? v->valuestring : "",
                                  cJSON_GetObjectItemCaseSensitive(j, "inputs"));
    return 1;
}

uint64_t sweep_record_check(const char *version, const cJSON *inputs)
{
    uint64_t h = sweep_fnv1a(SWEEP_FNV_BASIS, version, strlen(version) + 1);
    char *t = inputs ? cJSON_PrintUnformatted(inputs) : NULL;
    if (t) h = sweep_fnv1a(h, t, strlen(t));
    cJSON_free(t);
    return h ? h : 1; /* never 0: that means "not checked" */
}

int sweep_record_key(const char *line, size_t len, sweep_key *k)
{
    cJSON *j = parse_line(line, len);
    int ok = j && key_of(j, k);
    cJSON_Delete(j);
    return ok;
}

int64_t sweep_resume_scan(const char *buf, size_t len, const sweep_key *want,
                          int64_t n, size_t *keep_bytes)
{
    size_t *st, *ln, tail;
    int nl = sweep_split_lines(buf, len, &st, &ln, &tail);
    int64_t good = 0;
    *keep_bytes = 0;
    for (int i = 0; i < nl && good < n; i++) {
        sweep_key k;
        if (!sweep_record_key(buf + st[i], ln[i], &k) || k.index != want[good].index
            || k.count != want[good].count || strcmp(k.id, want[good].id)
            || (want[good].check && k.check != want[good].check))
            break;
        good++;
        *keep_bytes = st[i] + ln[i] + 1;
    }
    free(st);
    free(ln);
    return good;
}

/* ---- what diff compares -------------------------------------------------- */

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static double num_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* obj[key] as a whole number for a label; 0 where it is not one a sweep
 * writes (no conversion of a double out of range). */
static long long whole_of(const cJSON *o, const char *key)
{
    double v = num_of(o, key);
    return v >= -9e15 && v <= 9e15 ? (long long)v : 0;
}

int sweep_outcome_parse(const char *line, size_t len, sweep_outcome *out)
{
    memset(out, 0, sizeof *out);
    uint64_t raw_digest = 0;
    cJSON *j = parse_line_lean(line, len, &raw_digest);
    int lean = j != NULL;
    if (!j) j = parse_line(line, len);
    sweep_key k;
    if (!j || !key_of(j, &k)) {
        cJSON_Delete(j);
        return 0;
    }
    tp_strlcpy(out->id, k.id, sizeof out->id);
    out->index = k.index;
    out->count = k.count;
    tp_strlcpy(out->status, str_of(j, "status"), sizeof out->status);
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(j, "scenario");
    /* Whole numbers printed as integers: the label is made for every
     * record of a night, and %.0f's conversion was a tenth of a diff. */
    snprintf(out->label, sizeof out->label,
             "%s on %s, gpus %s, seq %lld, gbs %lld, %s", str_of(sc, "model"),
             str_of(sc, "system"), str_of(sc, "gpus"),
             whole_of(sc, "seq_length"), whole_of(sc, "global_batch_size"),
             str_of(sc, "precision"));
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "best");
    if (cJSON_IsObject(b)) {
        snprintf(out->layout, sizeof out->layout, "%s on %s", str_of(b, "layout"),
                 str_of(b, "system"));
        out->time_s = num_of(b, "iteration_time_s");
        out->cost_usd = num_of(b, "cost_per_iteration_usd");
    }
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(j, "inputs");
    if (lean) {
        out->inputs_digest = in ? raw_digest : 0;
    } else {
        char *t = in ? cJSON_PrintUnformatted(in) : NULL;
        out->inputs_digest = t ? sweep_fnv1a(SWEEP_FNV_BASIS, t, strlen(t)) : 0;
        cJSON_free(t);
    }
    cJSON_Delete(j);
    return 1;
}

static double rel(double a, double b)
{
    if (a == b) return 0;
    if (!(a > 0)) return INFINITY;
    return (b - a) / a;
}

sweep_change sweep_compare(const sweep_outcome *a, const sweep_outcome *b,
                           double threshold, char *why, size_t cap)
{
    size_t n = 0;
    why[0] = '\0';
#define WHY(...)                                                                \
    do {                                                                        \
        if (n < cap)                                                            \
            n += (size_t)snprintf(why + n, cap - n, "%s", n ? "; " : "");       \
        if (n < cap) n += (size_t)snprintf(why + n, cap - n, __VA_ARGS__);      \
    } while (0)
    if (strcmp(a->status, b->status))
        WHY("status %s -> %s", a->status, b->status);
    if (strcmp(a->layout, b->layout) && a->layout[0] && b->layout[0])
        WHY("best layout %s -> %s", a->layout, b->layout);
    double dt = rel(a->time_s, b->time_s), dc = rel(a->cost_usd, b->cost_usd);
    if (a->layout[0] && b->layout[0] && fabs(dt) > threshold)
        WHY("time %+.1f%%", 100 * dt);
    if (a->layout[0] && b->layout[0] && fabs(dc) > threshold)
        WHY("cost %+.1f%%", 100 * dc);
#undef WHY
    return n ? SWEEP_CHANGED : SWEEP_SAME;
}
