/*
 * tp_csv.c - an RFC 4180 reader (https://www.rfc-editor.org/rfc/rfc4180,
 * section 2) for the project's CSV inputs: measured operator samples
 * (estimator/samples.c) and collective tables (estimator/comm.c).
 *
 * Fields are unquoted in place: a field's text never grows when its
 * quotes are removed, so the writer stays at or behind the reader.
 * Deliberately lenient where the files of others are (blanks around
 * fields, a last line without its line break, LF without CR) and strict
 * where a guess would move data between columns (stray quotes).
 */
#include "tp_base.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void tp_csv_init(tp_csv *r, char *text, size_t len, const char *path,
                 int comments)
{
    memset(r, 0, sizeof *r);
    r->p = text;
    r->end = text + len;
    r->path = path;
    r->comments = comments;
    r->next_line = 1;
    r->line_start = text;
}

/* A malformed quote: the message in e, -1 returned. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int bad(tp_err *e, const char *fmt, ...)
{
    char msg[sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tp_errf(e, TP_EDATA, "%s", msg);
    return -1;
}

static int blank(char c) { return c == ' ' || c == '\t'; }

/* A record ends at LF, CRLF, or the end of the text. */
static int at_eol(const tp_csv *r, const char *q)
{
    return q >= r->end || *q == '\n' || (*q == '\r' && (q + 1 >= r->end || q[1] == '\n'));
}

static void skip_eol(tp_csv *r)
{
    if (r->p < r->end && *r->p == '\r') r->p++;
    if (r->p < r->end && *r->p == '\n') r->p++;
    r->next_line++;
    r->line_start = r->p;
}

static int col_of(const tp_csv *r, const char *q)
{
    return (int)(q - r->line_start) + 1;
}

int tp_csv_next(tp_csv *r, char **f, int max, tp_err *e)
{
    for (;;) {
        if (r->p >= r->end) return 0;
        if (!r->comments) break;
        const char *q = r->p;
        while (q < r->end && blank(*q)) q++;
        if (q >= r->end || *q != '#') break;
        while (r->p < r->end && *r->p != '\n') r->p++;
        skip_eol(r);
    }
    r->line = r->next_line;
    int n = 0;
    char *w = r->p; /* where the unquoted text goes */
    for (;;) {
        char *start = w;
        while (r->p < r->end && blank(*r->p)) r->p++;
        if (r->p < r->end && *r->p == '"') {
            int open_line = r->next_line, open_col = col_of(r, r->p);
            r->p++;
            for (;;) {
                if (r->p >= r->end)
                    return bad(e,
                                   "%s:%d:%d: the quote opened here is never "
                                   "closed",
                                   r->path, open_line, open_col);
                char c = *r->p++;
                if (c == '"') {
                    if (r->p < r->end && *r->p == '"') {
                        *w++ = '"';
                        r->p++;
                        continue;
                    }
                    break;
                }
                if (c == '\n') {
                    r->next_line++;
                    r->line_start = r->p;
                }
                *w++ = c;
            }
            while (r->p < r->end && blank(*r->p)) r->p++;
            if (!(r->p >= r->end || *r->p == ',' || at_eol(r, r->p)))
                return bad(e,
                               "%s:%d:%d: '%c' after a closing quote, "
                               "expected a comma or the end of the line",
                               r->path, r->next_line, col_of(r, r->p), *r->p);
        } else {
            while (r->p < r->end && *r->p != ',' && !at_eol(r, r->p)) {
                if (*r->p == '"')
                    return bad(e,
                                   "%s:%d:%d: a quote inside an unquoted "
                                   "field (quote the whole field and double "
                                   "the quote: \"a\"\"b\")",
                                   r->path, r->next_line, col_of(r, r->p));
                *w++ = *r->p++;
            }
            while (w > start && blank(w[-1])) w--;
        }
        int more = r->p < r->end && *r->p == ',';
        /* The separator or line break is consumed before the terminator
         * is written: w may stand on it. */
        if (more) r->p++;
        else if (r->p < r->end) skip_eol(r);
        *w++ = '\0'; /* at most where p stood: text[len] at the end */
        if (n < max) f[n] = start;
        n++;
        if (!more) break;
    }
    return n > max ? max + 1 : n;
}
