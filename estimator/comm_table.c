/*
 * comm_table.c - reads a measured collective table file (CSV columns
 * collective, dtype, nodes, gpus_per_node, bytes, time_us; docs/hwdb.md)
 * into rows, each field checked against its range with a message naming
 * file, line, column and value. What the rows are then used for (pooled,
 * interpolated, kept out where implausible) is comm.c's.
 */
#include "est.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { COL_COLL, COL_DTYPE, COL_NODES, COL_GPN, COL_BYTES, COL_TIME, NCOL };
static const char *const col_names[NCOL] = {
    "collective", "dtype", "nodes", "gpus_per_node", "bytes", "time_us"};

/* Reads a number in [lo, hi] (integer if want_int); 0 on success. */
static int num_field(const char *path, int line, int col, const char *s,
                     double lo, double hi, int want_int, double *out,
                     tp_err *e)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v) || v < lo || v > hi
        || (want_int && v != floor(v)))
        return tp_errf(e, TP_EDATA,
                       "%s:%d: column %d (%s): expected %s in [%g, %g], found "
                       "'%s'",
                       path, line, col + 1, col_names[col],
                       want_int ? "an integer" : "a number", lo, hi, s);
    *out = v;
    return TP_OK;
}

int est_coll_read_table(const char *path, est_coll_row **out, int *n_out,
                        tp_err *e)
{
    *out = NULL;
    *n_out = 0;
    char *text;
    size_t len;
    int rc = tp_read_file(path, (size_t)256 << 20, &text, &len, e);
    if (rc) return rc;
    /* The lines end at a NUL: every row after one would go unread. */
    if (memchr(text, '\0', len)) {
        free(text);
        return tp_errf(e, TP_EDATA, "%s: a binary file (a NUL byte), expected "
                                    "a CSV text file", path);
    }
    int where[NCOL], have_header = 0, ncols = 0, lineno = 0, n = 0, cap = 0;
    est_coll_row *rows = NULL;
    tp_csv rd;
    tp_csv_init(&rd, text, len, path, 1); /* '#' lines: comments */
    while (rc == TP_OK) {
        char *f[NCOL + 2];
        int nf = tp_csv_next(&rd, f, NCOL + 1, e);
        if (nf <= 0) {
            if (nf < 0) rc = TP_EDATA; /* the message is in e */
            break;
        }
        lineno = rd.line;
        if (nf == 1 && f[0][0] == '\0') continue; /* blank line */
        if (!have_header) {
            for (int c = 0; c < NCOL; c++) where[c] = -1;
            for (int i = 0; i < nf && rc == TP_OK; i++) {
                int c = 0;
                while (c < NCOL && strcmp(f[i], col_names[c]) != 0) c++;
                if (c == NCOL || where[c] >= 0)
                    rc = tp_errf(e, TP_EDATA,
                                 "%s:%d: column %d: %s column '%s' (expected "
                                 "collective, dtype, nodes, gpus_per_node, "
                                 "bytes, time_us)",
                                 path, lineno, i + 1,
                                 c == NCOL ? "unknown" : "repeated", f[i]);
                else
                    where[c] = i;
            }
            for (int c = 0; c < NCOL && rc == TP_OK; c++)
                if (where[c] < 0)
                    rc = tp_errf(e, TP_EDATA,
                                 "%s:%d: header lacks the column '%s'", path,
                                 lineno, col_names[c]);
            ncols = nf;
            have_header = 1;
            continue;
        }
        if (nf != ncols) {
            rc = tp_errf(e, TP_EDATA, "%s:%d: %d fields, the header has %d",
                         path, lineno, nf > ncols ? nf : nf, ncols);
            break;
        }
        est_coll_row r;
        memset(&r, 0, sizeof r);
        r.line = lineno;
        const char *cs = f[where[COL_COLL]], *ds = f[where[COL_DTYPE]];
        int k = est_coll_parse(cs), dt = hw_dtype_parse(ds);
        double v[NCOL];
        if (k < 0) {
            rc = tp_errf(e, TP_EDATA,
                         "%s:%d: column %d (collective): unknown collective "
                         "'%s' (expected allreduce, reducescatter, allgather, "
                         "alltoall or sendrecv)",
                         path, lineno, where[COL_COLL] + 1, cs);
        } else if (dt < 0) {
            rc = tp_errf(e, TP_EDATA,
                         "%s:%d: column %d (dtype): expected fp32, tf32, "
                         "fp16, bf16 or fp8, found '%s'",
                         path, lineno, where[COL_DTYPE] + 1, ds);
        } else if (!(rc = num_field(path, lineno, COL_NODES,
                                    f[where[COL_NODES]], 1, 1e6, 1,
                                    &v[COL_NODES], e))
                   && !(rc = num_field(path, lineno, COL_GPN,
                                       f[where[COL_GPN]], 1, 4096, 1,
                                       &v[COL_GPN], e))
                   && !(rc = num_field(path, lineno, COL_BYTES,
                                       f[where[COL_BYTES]], 1, 1e15, 0,
                                       &v[COL_BYTES], e))
                   && !(rc = num_field(path, lineno, COL_TIME,
                                       f[where[COL_TIME]],
                                       EST_COLL_TIME_MIN_US,
                                       EST_COLL_TIME_MAX_US, 0,
                                       &v[COL_TIME], e))) {
            r.kind = (est_coll)k;
            r.dtype = (hw_dtype)dt;
            r.nodes = (int)v[COL_NODES];
            r.per_node = (int)v[COL_GPN];
            r.bytes = v[COL_BYTES];
            r.time_s = v[COL_TIME] * 1e-6;
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                rows = tp_xrealloc(rows, (size_t)cap * sizeof *rows);
            }
            rows[n++] = r;
        }
    }
    free(text);
    if (rc == TP_OK && !have_header)
        rc = tp_errf(e, TP_EDATA,
                     "%s: no header line (expected collective, dtype, nodes, "
                     "gpus_per_node, bytes, time_us)",
                     path);
    if (rc) {
        free(rows);
        return rc;
    }
    *out = rows;
    *n_out = n;
    return TP_OK;
}
