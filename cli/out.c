/*
 * out.c - where a command's data goes (stdout, or -o FILE written
 * through a temporary file and a rename) and how tables look.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "est.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_out_open(cli_out *o, const char *path, tp_err *e)
{
    memset(o, 0, sizeof *o);
    if (!path || strcmp(path, "-") == 0) {
        o->f = stdout;
        return TP_OK;
    }
    o->path = path;
    /* The temporary file sits beside the target so rename() is atomic. */
    int n = snprintf(o->tmp, sizeof o->tmp, "%s.tmp.XXXXXX", path);
    if (n < 0 || (size_t)n >= sizeof o->tmp)
        return tp_errf(e, TP_EIO, "%s: output path too long", path);
    int fd = mkstemp(o->tmp);
    if (fd < 0)
        return tp_errf(e, TP_EIO, "%s: cannot create output file: %s", path,
                       strerror(errno));
    o->f = fdopen(fd, "w");
    if (!o->f) {
        close(fd);
        unlink(o->tmp);
        return tp_errf(e, TP_EIO, "%s: cannot open output file: %s", path,
                       strerror(errno));
    }
    return TP_OK;
}

int cli_out_close(cli_out *o, int ok, tp_err *e)
{
    if (!o->f) return TP_OK;
    if (!o->path) {
        int bad = fflush(stdout) != 0 || ferror(stdout);
        o->f = NULL;
        if (bad && ok)
            return tp_errf(e, TP_EIO, "cannot write to standard output: %s",
                           strerror(errno));
        return TP_OK;
    }
    int bad = ferror(o->f) != 0;
    bad |= fclose(o->f) != 0;
    o->f = NULL;
    if (!ok || bad) {
        unlink(o->tmp);
        if (ok)
            return tp_errf(e, TP_EIO, "%s: write failed: %s", o->path,
                           strerror(errno));
        return TP_OK;
    }
    if (rename(o->tmp, o->path) != 0) {
        int err = errno;
        unlink(o->tmp);
        return tp_errf(e, TP_EIO, "%s: cannot write output: %s", o->path,
                       strerror(err));
    }
    return TP_OK;
}

void cli_table_init(cli_table *t, int ncols, const char **headers,
                    const char *align)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->headers = headers;
    t->align = align;
}

void cli_table_row(cli_table *t, ...)
{
    if (t->nrows == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->cells = tp_xrealloc(t->cells,
                               (size_t)t->cap * (size_t)t->ncols * sizeof *t->cells);
    }
    va_list ap;
    va_start(ap, t);
    for (int c = 0; c < t->ncols; c++) {
        const char *s = va_arg(ap, const char *);
        t->cells[t->nrows * t->ncols + c] = tp_xstrdup(s ? s : "");
    }
    va_end(ap);
    t->nrows++;
}

static void csv_cell(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void cli_table_print(const cli_table *t, FILE *f, cli_format fmt)
{
    if (fmt == CLI_CSV) {
        for (int c = 0; c < t->ncols; c++) {
            if (c) fputc(',', f);
            csv_cell(f, t->headers[c]);
        }
        fputc('\n', f);
        for (int r = 0; r < t->nrows; r++) {
            for (int c = 0; c < t->ncols; c++) {
                if (c) fputc(',', f);
                csv_cell(f, t->cells[r * t->ncols + c]);
            }
            fputc('\n', f);
        }
        return;
    }
    int *w = tp_xcalloc((size_t)t->ncols, sizeof *w);
    for (int c = 0; c < t->ncols; c++) {
        w[c] = (int)strlen(t->headers[c]);
        for (int r = 0; r < t->nrows; r++) {
            int n = (int)strlen(t->cells[r * t->ncols + c]);
            if (n > w[c]) w[c] = n;
        }
    }
    for (int r = -1; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            const char *s = r < 0 ? t->headers[c] : t->cells[r * t->ncols + c];
            int last = c == t->ncols - 1;
            if (t->align[c] == 'r')
                fprintf(f, "%*s", w[c], s);
            else if (last)
                fputs(s, f); /* no trailing blanks */
            else
                fprintf(f, "%-*s", w[c], s);
            if (!last) fputs("  ", f);
        }
        fputc('\n', f);
    }
    free(w);
}

void cli_table_free(cli_table *t)
{
    for (int i = 0; i < t->nrows * t->ncols; i++) free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

void cli_print_json(FILE *f, cJSON *v)
{
    char *s = cJSON_Print(v);
    if (s) {
        fputs(s, f);
        fputc('\n', f);
        cJSON_free(s);
    }
    cJSON_Delete(v);
}

void cli_fmt_count(char *buf, size_t cap, double v)
{
    static const struct { double div; const char *suffix; } units[] = {
        {1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (fabs(v) >= units[i].div) {
            snprintf(buf, cap, "%.2f %s", v / units[i].div, units[i].suffix);
            return;
        }
    snprintf(buf, cap, "%.0f", v);
}

void cli_fmt_si(char *buf, size_t cap, double v, const char *unit)
{
    static const struct { double mul; const char *prefix; } pre[] = {
        {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"},
        {1, ""},     {1e-3, "m"}, {1e-6, "u"}, {1e-9, "n"}};
    if (v == 0) {
        snprintf(buf, cap, "0 %s", unit);
        return;
    }
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        if (fabs(v) >= pre[i].mul * 0.9995) {
            snprintf(buf, cap, "%.4g %s%s", v / pre[i].mul, pre[i].prefix, unit);
            return;
        }
    snprintf(buf, cap, "%.4g %s", v, unit);
}

void cli_fmt_bytes(char *buf, size_t cap, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (fabs(bytes) >= 1024 && u < 5) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

int cli_time_terms(const est_breakdown *b, int with_unit, cli_term *t)
{
    static const char *const names[CLI_TIME_TERMS][2] = {
        {"compute_fwd", "compute_fwd_s"},
        {"compute_bwd", "compute_bwd_s"},
        {"recompute", "recompute_s"},
        {"tp_comm", "tp_comm_s"},
        {"cp_comm", "cp_comm_s"},
        {"pp_p2p", "pp_p2p_s"},
        {"pp_bubble", "pp_bubble_s"},
        {"dp_comm_exposed", "dp_comm_exposed_s"},
        {"optimizer", "optimizer_s"},
    };
    const double v[CLI_TIME_TERMS] = {b->fwd_s, b->bwd_s, b->recompute_s,
                                      b->tp_s, b->cp_s, b->pp_p2p_s,
                                      b->bubble_s, b->dp_s, b->optimizer_s};
    for (int i = 0; i < CLI_TIME_TERMS; i++)
        t[i] = (cli_term){names[i][with_unit ? 1 : 0], v[i]};
    return CLI_TIME_TERMS;
}
