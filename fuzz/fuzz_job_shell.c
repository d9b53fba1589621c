/*
 * fuzz_job_shell.c - fuzz target of the launch-script expander
 * (launch_sh_read, launch/launch_shell.c, which --megatron-args and
 * --nemo-overrides read scripts through): quotes, $ forms, arrays,
 * here-documents, if/case/loops, functions. Every command must lie inside
 * the word list, every word be a string, and every unknown word carry its
 * reason.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "launch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536) return 0;
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    launch_sh sh;
    tp_err e = {0};
    if (launch_sh_read(text, "fuzz.sh", &sh, &e) == TP_OK) {
        for (int c = 0; c < sh.nc; c++)
            fuzz_check(sh.c[c].first >= 0 && sh.c[c].n > 0
                       && sh.c[c].first + sh.c[c].n <= sh.nw);
        for (int i = 0; i < sh.nw; i++) {
            const launch_sh_word *w = &sh.w[i];
            fuzz_check(w->s != NULL && w->line >= 1);
            fuzz_check(!(w->flags & LAUNCH_SH_UNKNOWN) || w->why != NULL);
            fuzz_check(strlen(launch_sh_why(w)) > 0);
        }
    } else {
        fuzz_check(e.status == TP_EDATA && e.msg[0]);
    }
    launch_sh_free(&sh);
    launch_sh_free(NULL);
    free(text);
    return 0;
}
