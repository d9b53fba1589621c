/*
 * replay.c - runs a fuzz target's LLVMFuzzerTestOneInput over files, the
 * way libFuzzer runs one input, without libFuzzer: ctest's fuzz_replay_*
 * tests replay every kept crash (fuzz/regressions/<target>/) and the
 * seeds in every build, the sanitized ones included.
 *
 * usage: replay_<target> PATH...   (a directory: every file under it,
 * in name order; names starting with '.' are skipped)
 *
 * Each input is read into a buffer of exactly its size, so a read past
 * the end is one AddressSanitizer sees. Exit 0 when every input ran, 1
 * when a path cannot be read; a finding aborts.
 */
#define _POSIX_C_SOURCE 200809L /* opendir, stat */
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int replay(const char *path, int *n);

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *path, int *n)
{
    DIR *d = opendir(path);
    if (!d) {
        perror(path);
        return 1;
    }
    char **names = NULL;
    size_t count = 0, cap = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_name[0] == '.') continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 64;
            names = tp_xrealloc(names, cap * sizeof *names);
        }
        size_t len = strlen(path) + strlen(de->d_name) + 2;
        names[count] = tp_xmalloc(len);
        snprintf(names[count++], len, "%s/%s", path, de->d_name);
    }
    closedir(d);
    if (count > 1) qsort(names, count, sizeof *names, cmp_name);
    int rc = 0;
    for (size_t i = 0; i < count; i++) {
        rc |= replay(names[i], n);
        free(names[i]);
    }
    free(names);
    return rc;
}

static int replay(const char *path, int *n)
{
    struct stat st;
    if (stat(path, &st)) {
        perror(path);
        return 1;
    }
    if (S_ISDIR(st.st_mode)) return replay_dir(path, n);
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    size_t size = (size_t)st.st_size;
    /* Exactly size bytes (malloc(0) may be NULL: libFuzzer passes a valid
     * pointer for an empty input, so keep one byte then). */
    uint8_t *data = tp_xmalloc(size ? size : 1);
    size_t got = size ? fread(data, 1, size, f) : 0;
    fclose(f);
    if (got != size) {
        fprintf(stderr, "%s: short read\n", path);
        free(data);
        return 1;
    }
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    (*n)++;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH...\n", argv[0]);
        return 2;
    }
    int n = 0, rc = 0;
    for (int i = 1; i < argc; i++) rc |= replay(argv[i], &n);
    printf("%s: %d inputs replayed\n", tp_basename(argv[0]), n);
    return rc;
}
