/*
 * tp_json_print.c - a cJSON tree as text, byte for byte what cJSON 1.7's
 * cJSON_Print (formatted) and cJSON_PrintUnformatted write, in less time:
 * the printing of the command's JSON was most of a library call's time
 * (issue 32: 59 % of a pinned `estimate` through tp_session_call_json).
 *
 * What is the same (DaveGamble/cJSON@v1.7.15 cJSON.c print_value,
 * print_number, print_string_ptr, print_array, print_object):
 * - a number: "null" when NaN or infinite; else "%1.15g", kept when it
 *   reads back within DBL_EPSILON relative (compare_double), else
 *   "%1.17g"; the locale's decimal point written as '.';
 * - a string or key: '"', '\\', \b \f \n \r \t escaped as two characters,
 *   other bytes below 0x20 as \u00xx, every other byte as it is; a NULL
 *   string as "";
 * - formatted: an object's members one a line, indented by tabs (its
 *   depth, arrays counted), "key":<TAB>value, the closing brace one tab
 *   less; an array's elements separated by ", " on one line; an empty
 *   object "{\n" and the closing brace's tabs, an empty array "[]";
 * - unformatted: no white space at all;
 * - a Raw item's text as it is; an invalid item, or a Raw without text,
 *   makes the whole print fail (NULL), as cJSON's does.
 * What is faster: a number that is an integer below 1e15 in magnitude is
 * written from its digits (what "%1.15g" prints for it, with nothing to
 * read back); the read-back of the others is strtod, not sscanf; the
 * buffer doubles as needed and the text is written straight into it.
 *
 * Not here: parsing (cJSON's), pretty-printing options cJSON lacks.
 */
#define _XOPEN_SOURCE 700 /* nl_langinfo */
#include "tp_base.h"

#include <float.h>
#include <langinfo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pbuf {
    char *s;
    size_t len, cap;
    int depth;     /* cJSON's printbuffer depth: objects and arrays */
    int formatted; /* 1: cJSON_Print's white space */
    char point;    /* the locale's decimal point */
} pbuf;

/* Room for n more bytes (and a NUL). */
static char *room(pbuf *b, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (b->len + n + 1 > cap) cap *= 2;
        b->s = tp_xrealloc(b->s, cap);
        b->cap = cap;
    }
    return b->s + b->len;
}

static void put(pbuf *b, const char *t, size_t n)
{
    memcpy(room(b, n), t, n);
    b->len += n;
}

static void put_tabs(pbuf *b, int n)
{
    if (n <= 0) return;
    memset(room(b, (size_t)n), '\t', (size_t)n);
    b->len += (size_t)n;
}

/* cJSON 1.7 compare_double: equal within DBL_EPSILON of the larger. */
static int close_enough(double a, double b)
{
    double max = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return fabs(a - b) <= max * DBL_EPSILON;
}

static void put_number(pbuf *b, double d)
{
    char t[32];
    int n;
    if (isnan(d) || isinf(d)) {
        put(b, "null", 4);
        return;
    }
    /* "%1.15g" of an integer below 1e15 is its digits (no exponent: it
     * has at most 15 of them), and reads back exactly; -0 keeps printf */
    if (d == floor(d) && fabs(d) < 1e15 && !(d == 0 && signbit(d))) {
        char r[24];
        int k = 0;
        unsigned long long u = (unsigned long long)fabs(d);
        do r[k++] = (char)('0' + u % 10); while (u /= 10);
        n = 0;
        if (d < 0) t[n++] = '-';
        while (k) t[n++] = r[--k];
        put(b, t, (size_t)n);
        return;
    }
    n = snprintf(t, sizeof t, "%1.15g", d);
    if (!close_enough(strtod(t, NULL), d)) n = snprintf(t, sizeof t, "%1.17g", d);
    if (n < 0 || n >= (int)sizeof t) n = 0; /* cannot happen: 26 at most */
    if (b->point != '.')
        for (int i = 0; i < n; i++)
            if (t[i] == b->point) t[i] = '.';
    put(b, t, (size_t)n);
}

static void put_string(pbuf *b, const char *str)
{
    static const char hex[] = "0123456789abcdef";
    if (!str) {
        put(b, "\"\"", 2);
        return;
    }
    const unsigned char *p = (const unsigned char *)str;
    size_t len = strlen(str), extra = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = p[i];
        if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n'
            || c == '\r' || c == '\t')
            extra += 1;
        else if (c < 32)
            extra += 5;
    }
    char *o = room(b, len + extra + 2);
    *o++ = '"';
    if (!extra) {
        memcpy(o, str, len);
        o += len;
    } else {
        for (size_t i = 0; i < len; i++) {
            unsigned char c = p[i];
            if (c > 31 && c != '"' && c != '\\') {
                *o++ = (char)c;
                continue;
            }
            *o++ = '\\';
            switch (c) {
            case '\\': *o++ = '\\'; break;
            case '"': *o++ = '"'; break;
            case '\b': *o++ = 'b'; break;
            case '\f': *o++ = 'f'; break;
            case '\n': *o++ = 'n'; break;
            case '\r': *o++ = 'r'; break;
            case '\t': *o++ = 't'; break;
            default:
                *o++ = 'u';
                *o++ = '0';
                *o++ = '0';
                *o++ = hex[c >> 4];
                *o++ = hex[c & 15];
            }
        }
    }
    *o++ = '"';
    b->len = (size_t)(o - b->s);
}

static int put_value(pbuf *b, const cJSON *v);

static int put_array(pbuf *b, const cJSON *v)
{
    put(b, "[", 1);
    b->depth++;
    for (const cJSON *x = v->child; x; x = x->next) {
        if (!put_value(b, x)) return 0;
        if (x->next) put(b, ", ", b->formatted ? 2 : 1);
    }
    put(b, "]", 1);
    b->depth--;
    return 1;
}

static int put_object(pbuf *b, const cJSON *v)
{
    put(b, "{\n", b->formatted ? 2 : 1);
    b->depth++;
    for (const cJSON *x = v->child; x; x = x->next) {
        if (b->formatted) put_tabs(b, b->depth);
        put_string(b, x->string);
        put(b, ":\t", b->formatted ? 2 : 1);
        if (!put_value(b, x)) return 0;
        if (x->next) put(b, ",", 1);
        if (b->formatted) put(b, "\n", 1);
    }
    if (b->formatted) put_tabs(b, b->depth - 1);
    put(b, "}", 1);
    b->depth--;
    return 1;
}

static int put_value(pbuf *b, const cJSON *v)
{
    switch (v->type & 0xFF) {
    case cJSON_NULL: put(b, "null", 4); return 1;
    case cJSON_False: put(b, "false", 5); return 1;
    case cJSON_True: put(b, "true", 4); return 1;
    case cJSON_Number: put_number(b, v->valuedouble); return 1;
    case cJSON_Raw:
        if (!v->valuestring) return 0;
        put(b, v->valuestring, strlen(v->valuestring));
        return 1;
    case cJSON_String: put_string(b, v->valuestring); return 1;
    case cJSON_Array: return put_array(b, v);
    case cJSON_Object: return put_object(b, v);
    default: return 0;
    }
}

char *tp_json_print(const cJSON *v, int formatted)
{
    if (!v) return NULL;
    /* the decimal point printf writes (the thread's locale); not
     * localeconv, which fills a static struct each call */
    const char *point = nl_langinfo(RADIXCHAR);
    pbuf b = {NULL, 0, 0, 0, formatted != 0,
              point && point[0] ? point[0] : '.'};
    if (!put_value(&b, v)) {
        free(b.s);
        return NULL;
    }
    *room(&b, 0) = '\0';
    return b.s;
}
