/*
 * fuzz_util.c - the scratch file, the built-in database and the invariant
 * check every fuzz target shares (fuzz.h).
 *
 * The scratch file is one per process, so targets run with -jobs=N do
 * not write over each other's input.
 */
#define _XOPEN_SOURCE 700 /* mkstemp */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char scratch_path[512];

static void scratch_remove(void)
{
    if (scratch_path[0]) unlink(scratch_path);
}

const char *fuzz_scratch(const uint8_t *data, size_t size)
{
    if (!scratch_path[0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(scratch_path, sizeof scratch_path, "%s/trainplan-fuzz-XXXXXX",
                 dir && *dir ? dir : "/tmp");
        int fd = mkstemp(scratch_path);
        if (fd < 0) {
            perror(scratch_path);
            abort();
        }
        close(fd);
        atexit(scratch_remove);
    }
    FILE *f = fopen(scratch_path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f)) {
        perror(scratch_path);
        abort();
    }
    return scratch_path;
}

const hw_db *fuzz_builtin_db(void)
{
    static hw_db *db;
    if (!db) {
        const char *dir = TRAINPLAN_HWDB_SOURCE_DIR;
        tp_err e = {0};
        db = hw_db_open_dirs(&dir, 1, &e);
        if (!db) {
            fprintf(stderr, "fuzz: the built-in hwdb does not load: %s\n", e.msg);
            abort();
        }
    }
    return db;
}

const char *fuzz_fixtures_dir(void)
{
    return TRAINPLAN_FIXTURES_DIR;
}

void fuzz_fail(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: invariant broken: %s\n", file, line, what);
    abort();
}
