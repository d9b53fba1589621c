/*
 * fuzz_coll_table.c - fuzz target of the measured collective table loader
 * (est_coll_read_table): the input is the file. A table that loads is
 * then opened as a system's measured tables are (est_comm_load, on a copy
 * of eos listing the file for the first row's collective) and asked for
 * times at its shapes and sizes, as the estimator would. The fit cache
 * is off: the loader itself is under test.
 */
#include "fuzz.h"
#include "est.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Every input would be a new cache entry (its key digests the file). */
    est_cache_enable(0);
    const char *path = fuzz_scratch(data, size);
    est_coll_row *rows = NULL;
    int n = -1;
    tp_err e = {0};
    if (est_coll_read_table(path, &rows, &n, &e) != TP_OK) {
        fuzz_check(rows == NULL && e.msg[0]);
        return 0;
    }
    fuzz_check(n >= 0);
    /* A NUL byte would end the text early: the rows after it unread. */
    fuzz_check(!memchr(data, '\0', size));
    const hw_system *eos = hw_find_system(fuzz_builtin_db(), "eos", &e);
    fuzz_check(eos != NULL);
    for (int k = 0; k < n; k++) {
        char why[256];
        est_coll_row_implausible(eos, &rows[k], why, sizeof why);
    }
    if (n > 0) {
        hw_system y = *eos;
        hw_measured m;
        memset(&m, 0, sizeof m);
        strcpy(m.kind, "collective_table");
        strcpy(m.op, est_coll_names[rows[0].kind]);
        strcpy(m.dtype, hw_dtype_names[rows[0].dtype]);
        m.path = path;
        m.source = "fuzz";
        y.measured = &m;
        y.n_measured = 1;
        for (int keep_bad = 0; keep_bad < 2; keep_bad++) {
            est_comm *c = est_comm_load(&y, keep_bad, &e);
            if (!c) {
                fuzz_check(e.msg[0]);
                continue;
            }
            for (int k = 0; k < n && k < 64; k++) {
                est_group g = {.size = rows[k].nodes * rows[k].per_node,
                               .per_node = rows[k].per_node,
                               .nodes = rows[k].nodes};
                char why[256];
                if (est_group_check(&y, &g, why, sizeof why)) continue;
                double t = est_coll_time(c, &y, rows[k].kind, rows[k].bytes, &g);
                fuzz_check(!isnan(t) && t >= 0);
            }
            est_comm_free(c);
        }
    }
    free(rows);
    return 0;
}
