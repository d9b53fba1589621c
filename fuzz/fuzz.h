/*
 * fuzz.h - what the fuzz targets share: the libFuzzer entry point each one
 * defines, a scratch file for loaders that read a path, and the
 * hardware database the loaders check their input against.
 *
 * Each fuzz_<loader>.c builds twice: with libFuzzer (fuzz_<loader>, only
 * with -DTRAINPLAN_FUZZ=ON and clang) and with replay.c's main
 * (replay_<loader>, every build), which runs the same entry point over
 * the regression inputs and seeds under ctest. See fuzz/README.md.
 */
#ifndef TP_FUZZ_H
#define TP_FUZZ_H

#include "hw.h"

#include <stddef.h>
#include <stdint.h>

/* libFuzzer's entry point: runs one input; returns 0. A finding is a
 * sanitizer report or an abort (fuzz_check). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Writes data to this process's scratch file (created on first use in
 * $TMPDIR or /tmp, removed at exit) and returns its path. */
const char *fuzz_scratch(const uint8_t *data, size_t size);

/* The built-in hardware database (hwdb/data of the source tree), opened
 * on first use and kept for the process; aborts if it does not load. */
const hw_db *fuzz_builtin_db(void);

/* The tests' fixture directory (tests/fixtures of the source tree). */
const char *fuzz_fixtures_dir(void);

/* An invariant of the code under test: prints what and where, then
 * aborts, which libFuzzer and the replay driver count as a finding. */
#define fuzz_check(cond)                                                      \
    do {                                                                      \
        if (!(cond)) fuzz_fail(__FILE__, __LINE__, #cond);                    \
    } while (0)
_Noreturn void fuzz_fail(const char *file, int line, const char *what);

#endif
