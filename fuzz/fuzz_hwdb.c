/*
 * fuzz_hwdb.c - fuzz target of the hardware database's file loader: the
 * input is one GPU or system JSON file. It is checked as `hw check` does
 * (hw_check_file, against the built-in database), then added as --system
 * FILE does (hw_db_add_file) to a database holding the fixtures' test GPU
 * and system, so a system naming "testgpu" resolves and a file replacing
 * one of them goes through the replace path.
 */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_scratch(data, size);
    char *report = NULL;
    int rc = hw_check_file(fuzz_builtin_db(), path, &report);
    fuzz_check(report != NULL);
    fuzz_check(rc == TP_OK || report[0]);
    free(report);

    char dir[512];
    snprintf(dir, sizeof dir, "%s/hw/good", fuzz_fixtures_dir());
    const char *dirs[] = {dir};
    tp_err e = {0};
    hw_db *db = hw_db_open_dirs(dirs, 1, &e);
    fuzz_check(db != NULL);
    if (hw_db_add_file(db, path, &e) == TP_OK) {
        /* Every system resolved to a GPU of the database. */
        for (int i = 0; i < hw_system_count(db); i++)
            fuzz_check(hw_system_at(db, i)->gpu != NULL);
    } else {
        fuzz_check(e.msg[0]);
    }
    hw_db_free(db);
    return 0;
}
