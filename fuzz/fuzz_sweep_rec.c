/*
 * fuzz_sweep_rec.c - fuzz target of the sweep record readers: the input
 * is a sweep's output file (JSON Lines), read as `diff` does (lines, then
 * each line's outcome) and as --resume does (each line's key, then how
 * many leading records are the expected scenarios, here the keys the
 * leading sealed lines themselves give, so a resume scan walks as far as
 * it can; and whether the first line is a record of the call).
 * Consecutive outcomes are compared as `diff` compares a scenario.
 */
#include "fuzz.h"
#include "sweep.h"

#include <stdlib.h>
#include <string.h>

/* 1 when line[len] holds needle. */
static int has_text(const char *line, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; i++)
        if (!memcmp(line + i, needle, n)) return 1;
    return 0;
}

static void id_none(int64_t k, char id[17], void *ctx)
{
    (void)k;
    (void)ctx;
    id[0] = '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *buf = (const char *)data;
    size_t *st, *ln, tail;
    int n = sweep_split_lines(buf, size, &st, &ln, &tail);
    fuzz_check(n >= 0 && tail <= size);
    sweep_key *want = tp_xcalloc((size_t)n + 1, sizeof *want);
    int64_t n_keys = 0;
    sweep_outcome prev;
    int have_prev = 0;
    for (int i = 0; i < n; i++) {
        fuzz_check(st[i] + ln[i] < size && buf[st[i] + ln[i]] == '\n');
        sweep_key k;
        int is_key = sweep_record_key(buf + st[i], ln[i], &k);
        sweep_outcome o;
        int is_outcome = sweep_outcome_parse(buf + st[i], ln[i], &o);
        /* What --resume and merge read as a record, diff reads too; diff
         * may read more: it does not scan a "search" member that closes
         * the line (sweep_rec.c), so damage inside it goes unseen there. */
        fuzz_check(!is_key || is_outcome);
        fuzz_check(is_key || !is_outcome
                   || has_text(buf + st[i], ln[i], "\"search\""));
        fuzz_check(!is_key || k.seal == sweep_record_sealed(buf + st[i], ln[i]));
        if (is_key && n_keys == i && k.seal == 1) want[n_keys++] = k;
        if (!is_outcome) continue;
        fuzz_check(strlen(o.id) == 16 && (!is_key || o.index == k.index));
        if (have_prev) {
            char why[256];
            sweep_compare(&prev, &o, 0.02, why, sizeof why);
            fuzz_check(strlen(why) < sizeof why);
        }
        prev = o;
        have_prev = 1;
    }
    size_t keep = 0;
    int64_t good = sweep_resume_scan(buf, size, want, n_keys, &keep);
    if (size > 0) {
        char why[512];
        int first = sweep_resume_first(buf, size, want, n_keys,
                                       n_keys ? want[0].count : 0, id_none,
                                       NULL, why, sizeof why);
        /* a file whose first record a scan keeps is the call's own */
        fuzz_check(!(good > 0) || first);
        fuzz_check(first || strlen(why) < sizeof why);
    }
    /* The leading records are exactly the wanted ones. */
    fuzz_check(good == n_keys);
    fuzz_check(good == 0 ? keep == 0 : keep == st[good - 1] + ln[good - 1] + 1);
    free(want);
    free(st);
    free(ln);
    return 0;
}
