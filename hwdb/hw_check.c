/*
 * hw_check.c - `trainplan hw check FILE`: validates one GPU or system file
 * and lists every problem, not just the first. A file named like an entry
 * of the database is checked merged over it, as it would load.
 */
#include "hw_int.h"

#include <stdlib.h>
#include <string.h>

int hw_check_file(const hw_db *db, const char *path, char **report)
{
    /* Parse into a scratch db so the caller's db is never modified. */
    hw_db *scratch = tp_xcalloc(1, sizeof *scratch);
    hw_sink s = {0};
    cJSON *root = NULL;
    tp_err e = {0};
    if (tp_json_load(path, &root, &e)) {
        hw_sink_add(&s, &e);
    } else {
        int kind = hw_file_kind(root, path, &s);
        /* A file named like an entry of db is checked as it would load:
         * merged over that entry (a partial override). */
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(root, "name");
        const struct hw_eff *base = NULL;
        if (db && kind && cJSON_IsString(nm))
            base = hw_db_eff(db, kind, nm->valuestring);
        if (kind) {
            cJSON *tree = hw_merge_over(base ? base->root : NULL, root, path,
                                        base ? base->origin_file : NULL);
            cJSON_Delete(root);
            root = tree;
        }
        if (kind == 1) {
            hw_gpu g;
            hw_parse_gpu(scratch, root, path, &g, &s);
            free(g.measured);
        } else if (kind == 2) {
            hw_system y;
            hw_parse_system(scratch, root, path, &y, &s);
            if (db && y.gpu_name[0]) {
                tp_err ge = {0};
                y.gpu = hw_find_gpu(db, y.gpu_name, &ge);
                if (!y.gpu) {
                    tp_err m;
                    tp_errf(&m, TP_EDATA, "%s: $.gpu: %s", path, ge.msg);
                    hw_sink_add(&s, &m);
                } else {
                    hw_check_system_gpu(&y, path, &s);
                }
            }
            free(y.measured);
        }
        cJSON_Delete(root);
    }
    int rc = s.count ? s.first.status : TP_OK;
    /* The worst status wins: missing files (66) over bad data (65). */
    if (s.count && s.report && strstr(s.report, "is not a readable file"))
        rc = TP_ENOINPUT;
    *report = s.report ? s.report : tp_xstrdup("");
    hw_db_free(scratch);
    return rc;
}
