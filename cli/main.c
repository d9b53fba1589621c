/*
 * main.c - the trainplan executable: one call of the library's tp_run
 * (include/trainplan.h), as any client would make it, plus what only a
 * program may decide for its process: its signals, and closing standard
 * output (where NFS or a full pipe may report a write error last).
 */
#include "trainplan.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

int main(int argc, char **argv)
{
    /* A file size limit (ulimit -f) must be a write error we report
     * (EFBIG, exit 74), not SIGXFSZ killing us silently with a temporary
     * file left behind. */
    signal(SIGXFSZ, SIG_IGN);
    tp_handle_signals();
    int rc = tp_run(argc, argv, stdout, stderr);
    if (fclose(stdout) != 0 && (rc == 0 || rc == 1 || rc == 3)) {
        fprintf(stderr, "trainplan: standard output: write failed: %s\n",
                strerror(errno));
        return 74;
    }
    return rc;
}
