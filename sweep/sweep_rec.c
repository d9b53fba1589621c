/*
 * sweep_rec.c - the records of a sweep as lines of a file: splitting a
 * file into complete lines and a torn tail, what a record says of itself
 * (index, count, id), how much of an existing file a --resume keeps, and
 * the outcome `diff` compares.
 *
 * A record is one JSON object on one line ending in '\n'. A line without
 * its '\n' is a write a crash cut short: never a record. Its last member,
 * the seal (SWEEP_SEAL_KEY), is a digest of the bytes before it: a line
 * damaged after it was written is told from the record sweep wrote.
 *
 * diff reads records lean: its "search" member, most of a record's bytes
 * (every ranked layout, the front), is never read by diff, so it is not
 * parsed into a tree (issue 17: two 100,000-record nights are gigabytes).
 * Where it is the last member but the seal, as sweep writes it, it is not
 * even scanned: it runs to the seal, or to the line's closing brace on a
 * line without one (an object or null); a
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

/* ---- the seal ------------------------------------------------------------ */

#define SEAL_HEAD ",\"" SWEEP_SEAL_KEY "\":\""
#define SEAL_HEAD_LEN (sizeof SEAL_HEAD - 1)
#define SEAL_LEN (SEAL_HEAD_LEN + 16 + 2) /* the head, 16 hex digits, "} */

char *sweep_record_seal(const char *rec, size_t len)
{
    /* rec without its closing brace is what the digest covers */
    size_t body = len > 0 && rec[len - 1] == '}' ? len - 1 : len;
    uint64_t h = sweep_fnv1a(SWEEP_FNV_BASIS, rec, body);
    char *line = tp_xmalloc(body + SEAL_LEN + 2);
    memcpy(line, rec, body);
    snprintf(line + body, SEAL_LEN + 2, "%s%016llx\"}\n", SEAL_HEAD,
             (unsigned long long)h);
    return line;
}

/* Where a line's seal starts (its ','), or NULL where it has none. */
static const char *seal_of(const char *line, size_t len)
{
    if (len < SEAL_LEN + 1) return NULL;
    const char *p = line + len - SEAL_LEN;
    if (memcmp(p, SEAL_HEAD, SEAL_HEAD_LEN) || memcmp(line + len - 2, "\"}", 2))
        return NULL;
    for (size_t i = 0; i < 16; i++)
        if (!strchr("0123456789abcdef", p[SEAL_HEAD_LEN + i]) || !p[SEAL_HEAD_LEN + i])
            return NULL;
    return p;
}

int sweep_record_sealed(const char *line, size_t len)
{
    const char *p = seal_of(line, len);
    if (!p) return 0;
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx",
             (unsigned long long)sweep_fnv1a(SWEEP_FNV_BASIS, line,
                                             (size_t)(p - line)));
    return memcmp(hex, p + SEAL_HEAD_LEN, 16) == 0 ? 1 : -1;
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
    const char *seal = seal_of(line, len);
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
                /* Where the value would end as the last member but the
                 * seal: before the seal, else before the closing brace. */
                const char *vend = seal;
                if (!vend) {
                    const char *close = end;
                    while (close > p && (close[-1] == ' ' || close[-1] == '\t'
                                         || close[-1] == '\r'))
                        close--;
                    vend = close - p >= 1 && close[-1] == '}' ? close - 1 : NULL;
                }
                if (vend && vend - p >= 2
                    && ((*p == '{' && vend[-1] == '}')
                        || (vend - p == 4 && !memcmp(p, "null", 4)))) {
                    p = vend; /* the last member: not scanned */
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
    k->seal = 0;
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
    if (ok) k->seal = sweep_record_sealed(line, len);
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
            || (want[good].check && k.check != want[good].check)
            || k.seal != 1)
            break;
        good++;
        *keep_bytes = st[i] + ln[i] + 1;
    }
    free(st);
    free(ln);
    return good;
}

/* line[len] in words for a message: its first 60 bytes, control bytes
 * and quotes shown as '?'. */
static void quote_line(const char *line, size_t len, char *out, size_t cap)
{
    size_t n = len < 60 ? len : 60, o = 0;
    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        unsigned char c = (unsigned char)line[i];
        out[o++] = c < 0x20 || c == 0x7f || c == '\'' ? '?' : (char)c;
    }
    if (len > n && o + 3 < cap) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o < cap ? o : cap - 1] = '\0';
}

int sweep_resume_first(const char *buf, size_t len, const sweep_key *want,
                       int64_t n, int64_t spec_count,
                       void (*id_of)(int64_t k, char id[17], void *ctx),
                       void *ctx, char *why, size_t cap)
{
    const char *nl = memchr(buf, '\n', len);
    size_t ll = nl ? (size_t)(nl - buf) : len;
    char q[80];
    quote_line(buf, ll, q, sizeof q);
    if (n <= 0) {
        snprintf(why, cap, "its first line '%s' cannot be a record of this "
                 "call, which runs no scenario", q);
        return 0;
    }
    if (!nl) {
        /* A torn first write: the start of want[0]'s record, as
         * scenario_record prints it (cJSON prints whole numbers so). */
        char head[160];
        int hn = snprintf(head, sizeof head,
                          "{\"schema_version\":%d,\"index\":%lld,\"count\":"
                          "%lld,\"id\":\"%s\",",
                          EMIT_SCHEMA_VERSION, (long long)want[0].index,
                          (long long)want[0].count, want[0].id);
        size_t m = len < (size_t)hn ? len : (size_t)hn;
        if (hn > 0 && memcmp(buf, head, m) == 0) return 1;
        snprintf(why, cap, "its only line '%s' is incomplete and not the "
                 "start of this spec's scenario %lld", q,
                 (long long)want[0].index);
        return 0;
    }
    sweep_key k;
    if (!sweep_record_key(buf, ll, &k)) {
        snprintf(why, cap, "its first line '%s' is not a sweep record", q);
        return 0;
    }
    if (k.index == want[0].index && k.count == want[0].count
        && !strcmp(k.id, want[0].id))
        return 1;
    char id[17] = "";
    if (k.count == spec_count && k.index < spec_count) id_of(k.index, id, ctx);
    if (strcmp(id, k.id))
        snprintf(why, cap, "its first line is a record of another spec "
                 "(scenario %lld of %lld, id %s; this spec has %lld "
                 "scenarios)", (long long)k.index, (long long)k.count, k.id,
                 (long long)spec_count);
    else
        snprintf(why, cap, "its first line is this spec's scenario %lld, "
                 "but this call starts at scenario %lld (another --shard's "
                 "file?)", (long long)k.index, (long long)want[0].index);
    return 0;
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

/* Appends "key\tvalue\n" to buf (at *n of cap); a pair that does not fit
 * is left out whole. */
static void put_pair(char *buf, size_t cap, size_t *n, const char *key,
                     const char *val)
{
    size_t need = strlen(key) + strlen(val) + 2;
    if (*n + need + 1 > cap) return;
    *n += (size_t)snprintf(buf + *n, cap - *n, "%s\t%s\n", key, val);
}

/* The scenario's members as pairs: strings as they are, numbers as %.15g,
 * anything else as its JSON. */
static void dims_of(const cJSON *sc, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    const cJSON *c;
    cJSON_ArrayForEach(c, sc)
    {
        char num[40];
        if (cJSON_IsString(c)) {
            put_pair(buf, cap, &n, c->string, c->valuestring);
        } else if (cJSON_IsNumber(c)) {
            snprintf(num, sizeof num, "%.15g", c->valuedouble);
            put_pair(buf, cap, &n, c->string, num);
        } else if (cJSON_IsNull(c)) {
            put_pair(buf, cap, &n, c->string, "null");
        } else {
            char *t = cJSON_PrintUnformatted(c);
            if (t) put_pair(buf, cap, &n, c->string, t);
            cJSON_free(t);
        }
    }
}

/* The files of "inputs" as "name\tdigest" pairs: each member NAMEfnv1a64
 * of the model and of each system, named by its NAMEfile member, or
 * "NAMEfiles of SYSTEM" (measured_files: a count, not a name). */
static void files_of(const cJSON *in, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(in, "model");
    const cJSON *sa = cJSON_GetObjectItemCaseSensitive(in, "systems");
    for (int k = -1; k < cJSON_GetArraySize(sa); k++) {
        const cJSON *o = k < 0 ? m : cJSON_GetArrayItem(sa, k);
        const cJSON *c;
        cJSON_ArrayForEach(c, o)
        {
            size_t kl = strlen(c->string);
            if (kl < 7 || strcmp(c->string + kl - 7, "fnv1a64") != 0
                || !cJSON_IsString(c))
                continue;
            char key[96], name[160];
            snprintf(key, sizeof key, "%.*sfile", (int)(kl - 7), c->string);
            const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, key);
            if (cJSON_IsString(f))
                snprintf(name, sizeof name, "%s", f->valuestring);
            else
                snprintf(name, sizeof name, "%.*sfiles of %s", (int)(kl - 7),
                         c->string, str_of(o, k < 0 ? "name" : "system"));
            put_pair(buf, cap, &n, name, c->valuestring);
        }
    }
}

/* The value of key in a pairs text, or NULL; its length in *len. */
static const char *pair_value(const char *pairs, const char *key,
                              size_t key_len, size_t *len)
{
    for (const char *p = pairs; *p;) {
        const char *tab = strchr(p, '\t'), *nl = strchr(p, '\n');
        if (!tab || !nl || tab > nl) return NULL;
        if ((size_t)(tab - p) == key_len && !memcmp(p, key, key_len)) {
            *len = (size_t)(nl - tab - 1);
            return tab + 1;
        }
        p = nl + 1;
    }
    return NULL;
}

int sweep_dims_diff(const char *a, const char *b, int values, char *why,
                    size_t cap)
{
    size_t n = 0;
    int count = 0;
    why[0] = '\0';
    /* every key of b against a, then the keys of a that b lacks */
    for (int side = 0; side < 2; side++) {
        const char *x = side ? b : a, *y = side ? a : b;
        for (const char *p = y; *p;) {
            const char *tab = strchr(p, '\t'), *nl = strchr(p, '\n');
            if (!tab || !nl || tab > nl) break;
            size_t kl = (size_t)(tab - p), vl = (size_t)(nl - tab - 1), ol = 0;
            const char *old = pair_value(x, p, kl, &ol);
            int differs = !old || ol != vl || memcmp(old, tab + 1, vl) != 0;
            if (side && old) differs = 0; /* seen from the other side */
            if (differs) {
                count++;
                if (n < cap)
                    n += (size_t)snprintf(why + n, cap - n, "%s%.*s", n ? "; " : "",
                                          (int)kl, p);
                if (values && n < cap) {
                    /* side 0 walks b: old is a's; side 1 walks a (gone) */
                    if (!side)
                        n += (size_t)snprintf(why + n, cap - n, " %.*s -> %.*s",
                                              old ? (int)ol : 6,
                                              old ? old : "(none)", (int)vl,
                                              tab + 1);
                    else
                        n += (size_t)snprintf(why + n, cap - n, " %.*s -> (none)",
                                              (int)vl, tab + 1);
                }
            }
            p = nl + 1;
        }
    }
    return count;
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
    /* the optional dimensions where the spec sets them */
    const cJSON *tk = cJSON_GetObjectItemCaseSensitive(sc, "tokens");
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(sc, "price_usd_per_gpu_hour");
    size_t ln = strlen(out->label);
    if (cJSON_IsNumber(tk) && ln < sizeof out->label)
        ln += (size_t)snprintf(out->label + ln, sizeof out->label - ln,
                               ", %.4g tokens", tk->valuedouble);
    if (cJSON_IsNumber(pr) && ln < sizeof out->label)
        snprintf(out->label + ln, sizeof out->label - ln, ", $%.4g/GPU-h",
                 pr->valuedouble);
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "best");
    if (cJSON_IsObject(b)) {
        snprintf(out->layout, sizeof out->layout, "%s on %s", str_of(b, "layout"),
                 str_of(b, "system"));
        out->time_s = num_of(b, "iteration_time_s");
        out->cost_usd = num_of(b, "cost_per_iteration_usd");
    }
    dims_of(sc, out->dims, sizeof out->dims);
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(j, "inputs");
    files_of(in, out->files, sizeof out->files);
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
        WHY("time %+.1f%% (%.4g -> %.4g s)", 100 * dt, a->time_s, b->time_s);
    if (a->layout[0] && b->layout[0] && fabs(dc) > threshold)
        WHY("cost %+.1f%% ($%.4g -> $%.4g an iteration)", 100 * dc,
            a->cost_usd, b->cost_usd);
#undef WHY
    return n ? SWEEP_CHANGED : SWEEP_SAME;
}
