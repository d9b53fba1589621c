/*
 * hw_int.h - internals shared by hw_load.c, hw_parse.c and hw_check.c.
 */
#ifndef TP_HW_INT_H
#define TP_HW_INT_H

#include "hw.h"

/* Where a loader's problems go. The loader never stops at the first
 * problem: `hw check` lists them all, hw_db_open reports the first. */
typedef struct hw_sink {
    tp_err first;  /* the first problem (status TP_OK if none) */
    int count;     /* problems seen */
    char *report;  /* every problem, one per line (malloc'd, may be NULL) */
    size_t len;
} hw_sink;

void hw_sink_add(hw_sink *s, const tp_err *e);
void hw_sink_free(hw_sink *s);
/* Adds a formatted problem; status TP_EDATA unless given. */
void hw_sinkf(hw_sink *s, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

struct hw_db {
    hw_gpu *gpus;
    int n_gpus, cap_gpus;
    hw_system *systems;
    int n_systems, cap_systems;
    char **strings; /* every string the entries point at */
    int n_strings, cap_strings;
    /* Each entry's effective JSON (every file of its name merged, in load
     * order, measured paths made absolute) so a later file can be a
     * partial override merged over it; origin_file is the first file of
     * that name (its folder resolves a copied file's measured paths). */
    struct hw_eff {
        int kind; /* 1 GPU, 2 system */
        char name[HW_NAME_MAX];
        cJSON *root;
        const char *origin_file; /* interned */
    } *eff;
    int n_eff, cap_eff;
};

/* Interns a copy of s in db (freed by hw_db_free). */
const char *hw_db_strdup(hw_db *db, const char *s);

/* Which schema a parsed file declares: 1 = GPU, 2 = system, 0 = neither
 * (a problem is added to the sink). */
int hw_file_kind(const cJSON *root, const char *path, hw_sink *s);

/* Parse one GPU / system object into *out, adding every problem to s.
 * Strings are interned in db. Returns the number of problems added. */
int hw_parse_gpu(hw_db *db, const cJSON *root, const char *path, hw_gpu *out,
                 hw_sink *s);
int hw_parse_system(hw_db *db, const cJSON *root, const char *path,
                    hw_system *out, hw_sink *s);

/* The effective JSON of the entry of that kind (1 GPU, 2 system) and
 * exact name loaded so far, or NULL. */
const struct hw_eff *hw_db_eff(const hw_db *db, int kind, const char *name);

/* A new tree: root (a GPU or system file at path) merged over base (an
 * effective tree, or NULL), as JSON Merge Patch (RFC 7386: objects merge
 * key by key, null removes a key, anything else replaces) except that a
 * sourced number ({"value": ...}) replaces the base's whole. root's
 * relative measured paths are made absolute from path's folder, or from
 * base_file's folder where the file is not there (a copied file). Every
 * measured path of the result is absolute. */
cJSON *hw_merge_over(const cJSON *base, const cJSON *root, const char *path,
                     const char *base_file);

/* Checks cross-field rules of a system against its resolved GPU. */
void hw_check_system_gpu(const hw_system *sys, const char *path, hw_sink *s);

/* Resolves every system's GPU name to a pointer; problems to s. */
void hw_db_resolve(hw_db *db, hw_sink *s);

#endif
