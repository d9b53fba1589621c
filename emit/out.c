/*
 * out.c - where a command's data goes and how tables look. One writer for
 * every output of a call (-o, --svg, --sbatch, sweep's --overwrite):
 * "-" is the caller's stream given to lib_run (standard output for the
 * command line, a memory stream for a library call), written, flushed and
 * never closed; a device or FIFO (/dev/null, a pipe) is written directly;
 * a path through a process's descriptor (/dev/stdout, /dev/fd/N,
 * /proc/self/fd/N) is opened and appended to, never renamed over (the
 * file behind it is another program's open file); a regular file is
 * written to a temporary file beside it and renamed over it only when the
 * command succeeded (all or nothing). A symbolic link is followed: its
 * target is replaced, the link stays. A replaced file keeps its mode; a
 * new one gets 0666 & ~umask, as any shell redirection would (mkstemp's
 * 0600 is not for data files). The only streams closed here are the ones
 * opened here.
 *
 * Before a command runs, emit_io_check looks at every path the call reads
 * and writes: an output that is one of the inputs, or that another output
 * of the call names too, is refused (TP_EUSAGE), and so is "-" where the
 * caller's stream already carries the command's output or where it cannot
 * be written (a directory output).
 *
 * The temporary file never outlives the process: a failed command removes
 * it, and so does SIGHUP, SIGINT or SIGTERM (a handler unlinks it, then the
 * signal takes its default course) where the program lets us own its
 * signals (emit_own_signals: the command line does, a library caller
 * need not). SIGXFSZ is ignored by main(), so a file size limit is a
 * write error (EFBIG) reported like a full disk.
 * Not done here: SIGKILL (nothing runs) and the sweep's own resumable file
 * (sweep_run.c writes it in place; it uses this writer for --overwrite).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "emit.h"
#include "est.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- removing temporary files when a signal ends the process ---------- */

/* A signal handler can neither allocate nor lock, so the temporary paths
 * live in a fixed table: a slot is filled, then armed. A process has at
 * most a few outputs open at once (-o, --svg, --sbatch), but hw
 * import-nccl-tests holds every table of its logs until all are written. */
#define OUT_SLOTS 64
static char slot_path[OUT_SLOTS][4096];
static volatile sig_atomic_t slot_armed[OUT_SLOTS];
static const int cleanup_signals[] = {SIGHUP, SIGINT, SIGTERM};
#define N_CLEANUP_SIGNALS ((int)(sizeof cleanup_signals / sizeof cleanup_signals[0]))
static int handlers_installed;

static void on_cleanup_signal(int sig)
{
    for (int i = 0; i < OUT_SLOTS; i++)
        if (slot_armed[i]) unlink(slot_path[i]);
    /* Then die of the signal as if never caught: the shell sees 128+sig. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

static void install_handlers(void)
{
    if (handlers_installed) return;
    handlers_installed = 1;
    for (int i = 0; i < N_CLEANUP_SIGNALS; i++) {
        struct sigaction old, sa;
        /* A signal the caller ignores (nohup's SIGHUP) stays ignored. */
        if (sigaction(cleanup_signals[i], NULL, &old) != 0
            || old.sa_handler == SIG_IGN)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_cleanup_signal;
        sigemptyset(&sa.sa_mask);
        for (int j = 0; j < N_CLEANUP_SIGNALS; j++)
            sigaddset(&sa.sa_mask, cleanup_signals[j]);
        sigaction(cleanup_signals[i], &sa, NULL);
    }
}

static int signals_owned;

void emit_own_signals(void) { signals_owned = 1; }

int emit_signals_owned(void) { return signals_owned; }

static void slot_disarm(int i)
{
    if (i >= 0 && i < OUT_SLOTS) slot_armed[i] = 0;
}

/* mkstemp on tmpl, the slot armed before the file exists: mkstemp writes
 * the name into the slot's own buffer and then creates the file, so a
 * signal at any moment finds the name the file has (or will never have).
 * Arming after mkstemp left a window where a signal found the file but
 * not its slot (a loaded machine's sweep_e2e: SIGHUP left sg.txt.tmp.*).
 * Returns the descriptor (tmpl gets the name) and the slot in *slot. */
static int mkstemp_armed(char *tmpl, size_t cap, int *slot)
{
    *slot = -1;
    if (signals_owned) install_handlers();
    for (int i = 0; i < OUT_SLOTS; i++)
        if (!slot_armed[i]) {
            tp_strlcpy(slot_path[i], tmpl, sizeof slot_path[i]);
            slot_armed[i] = 1;
            int fd = mkstemp(slot_path[i]);
            if (fd < 0) {
                slot_armed[i] = 0;
                return fd;
            }
            tp_strlcpy(tmpl, slot_path[i], cap);
            *slot = i;
            return fd;
        }
    return mkstemp(tmpl); /* more outputs than slots: not guarded */
}

/* ---- the output writer ------------------------------------------------ */

int emit_out_names_fd(const char *path)
{
    static const char *const dirs[] = {"/dev/fd/", "/proc/"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (strncmp(path, dirs[i], strlen(dirs[i])) == 0)
            return i == 0 || strstr(path, "/fd/") != NULL;
    return 0;
}

int emit_out_resolve(const char *path, char *out, size_t cap, tp_err *e)
{
    char cur[4096], link[4096];
    if (strlen(path) >= sizeof cur)
        return tp_errf(e, TP_EIO, "%s: output path too long", path);
    tp_strlcpy(cur, path, sizeof cur);
    /* 40: Linux's own limit on links followed in one lookup. */
    for (int hop = 0;; hop++) {
        struct stat st;
        /* A process's descriptor (/proc/self/fd/1, where /dev/stdout
         * leads) is no path to follow: its "target" may be pipe:[123]. */
        if (emit_out_names_fd(cur)) break;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) break;
        if (hop == 40)
            return tp_errf(e, TP_EIO, "%s: too many levels of symbolic links",
                           path);
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0)
            return tp_errf(e, TP_EIO, "%s: cannot read symbolic link %s: %s",
                           path, cur, strerror(errno));
        link[n] = '\0';
        /* A relative target is relative to the link's directory. */
        const char *slash = strrchr(cur, '/');
        int dir = link[0] == '/' || !slash ? 0 : (int)(slash - cur) + 1;
        char next[4096];
        int m = snprintf(next, sizeof next, "%.*s%s", dir, cur, link);
        if (m < 0 || (size_t)m >= sizeof next)
            return tp_errf(e, TP_EIO, "%s: output path too long", path);
        memcpy(cur, next, (size_t)m + 1);
    }
    if (strlen(cur) >= cap)
        return tp_errf(e, TP_EIO, "%s: output path too long", path);
    tp_strlcpy(out, cur, cap);
    return TP_OK;
}

/* ---- the paths of one call ---------------------------------------------- */

/* What a path names, to compare two: the file (device, inode) where it
 * exists, else where it would be created (the real path of its
 * directory, then its name). "-" names the caller's stream. */
typedef struct io_id {
    int kind;           /* 0 unknown, 1 an existing file, 2 a new one,
                           3 the caller's stream without a descriptor */
    int regular;        /* an existing regular file */
    dev_t dev;
    ino_t ino;
    char where[4096];   /* kind 2: the path it would get */
} io_id;

static void io_identify(const emit_io *x, FILE *caller, io_id *id)
{
    memset(id, 0, sizeof *id);
    struct stat st;
    if (strcmp(x->path, "-") == 0) {
        if (x->role == EMIT_IO_IN) return; /* standard input: no file */
        int fd = caller ? fileno(caller) : -1;
        if (fd >= 0 && fstat(fd, &st) == 0) {
            id->kind = 1;
            id->regular = S_ISREG(st.st_mode);
            id->dev = st.st_dev;
            id->ino = st.st_ino;
        } else {
            id->kind = 3;
        }
        return;
    }
    if (stat(x->path, &st) == 0) {
        id->kind = 1;
        id->regular = S_ISREG(st.st_mode);
        id->dev = st.st_dev;
        id->ino = st.st_ino;
        return;
    }
    /* A missing input is the command's to report (66). */
    if (x->role == EMIT_IO_IN) return;
    /* Not there yet: its directory's real path and its name, the links
     * of the path itself followed first (a dangling link names where the
     * file will be written). */
    char target[4096], dir[4096], real[PATH_MAX];
    tp_err ignored = {0};
    if (emit_out_resolve(x->path, target, sizeof target, &ignored)) return;
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    if (slash == target) tp_strlcpy(dir, "/", sizeof dir);
    else if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(slash - target), target);
    else tp_strlcpy(dir, ".", sizeof dir);
    if (!realpath(dir, real)) return;
    int n = snprintf(id->where, sizeof id->where, "%s/%s",
                     strcmp(real, "/") ? real : "", base);
    if (n > 0 && (size_t)n < sizeof id->where) id->kind = 2;
}

static int io_same(const io_id *a, const io_id *b)
{
    if (a->kind != b->kind || a->kind == 0) return 0;
    if (a->kind == 1) return a->dev == b->dev && a->ino == b->ino;
    if (a->kind == 2) return strcmp(a->where, b->where) == 0;
    return 1; /* both the caller's stream */
}

/* "-o FILE" or "the spec FILE": how a path is named in a message. */
static const char *io_name(const emit_io *x, char *buf, size_t cap)
{
    if (x->implicit)
        snprintf(buf, cap, "the command's output (standard output, no -o)");
    else
        snprintf(buf, cap, "%s %s", x->what, x->path);
    return buf;
}

int emit_io_check(const emit_io *io, int n, FILE *caller, tp_err *e)
{
    char a[4200], b[4200];
    /* "-" first: where it cannot be written, and where two outputs would
     * share the caller's stream (the second would garble the first: a
     * script inside a table, an SVG inside a library call's JSON). */
    for (int i = 0; i < n; i++) {
        const emit_io *x = &io[i];
        if (x->role == EMIT_IO_IN || strcmp(x->path, "-")) continue;
        if (x->role == EMIT_IO_OUT_DIR)
            return tp_errf(e, TP_EUSAGE,
                           "%s -: this command writes files into a directory; "
                           "'-' (standard output) cannot be one: give a "
                           "directory", x->what);
        for (int j = 0; j < i; j++) {
            if (io[j].role != EMIT_IO_OUT || strcmp(io[j].path, "-")) continue;
            const emit_io *y = &io[j], *imp = x->implicit ? x
                                             : y->implicit ? y : NULL;
            const emit_io *other = imp == x ? y : x;
            /* a library call's memory stream takes the JSON it parses:
             * no -o to offer there */
            int lib = !caller || fileno(caller) < 0;
            if (imp)
                return tp_errf(e, TP_EUSAGE,
                               "%s -: the command's output already goes to "
                               "%s; give %s a FILE%s",
                               other->what,
                               lib ? "the caller's stream"
                                   : "standard output (no -o)",
                               other->what,
                               lib ? "" : ", or -o FILE for the command's "
                                          "output");
            return tp_errf(e, TP_EUSAGE,
                           "%s - and %s -: both would write standard output; "
                           "give one of them a FILE",
                           y->what, x->what);
        }
    }
    io_id *ids = tp_xcalloc((size_t)(n > 0 ? n : 1), sizeof *ids);
    int rc = TP_OK;
    for (int i = 0; i < n; i++) io_identify(&io[i], caller, &ids[i]);
    for (int i = 0; i < n && !rc; i++) {
        if (io[i].role == EMIT_IO_IN) continue;
        for (int j = 0; j < n && !rc; j++) {
            if (j == i || !io_same(&ids[i], &ids[j])) continue;
            /* Only a regular file is lost by being replaced: two writers
             * of /dev/null, or of one terminal, lose nothing. A file not
             * there yet is a regular file to be. */
            if (ids[i].kind == 1 && !ids[i].regular) continue;
            if (io[j].role == EMIT_IO_IN) {
                /* standard output onto an input (a shell's >>) appends
                 * to it rather than replacing it: damage all the same */
                rc = tp_errf(e, TP_EUSAGE,
                             "%s is %s: the output would %s the file it "
                             "reads; give another output path",
                             io_name(&io[i], a, sizeof a),
                             io_name(&io[j], b, sizeof b),
                             strcmp(io[i].path, "-") ? "replace" : "write into");
            } else if (j < i) {
                const emit_io *x = io[i].implicit ? &io[j] : &io[i];
                const emit_io *y = io[i].implicit ? &io[i] : &io[j];
                rc = tp_errf(e, TP_EUSAGE,
                             "%s and %s name one file: one output would "
                             "replace or garble the other; give each its "
                             "own path",
                             io_name(y, b, sizeof b), io_name(x, a, sizeof a));
            }
        }
    }
    free(ids);
    return rc;
}

/* The mode of a new file: 0666 less the umask. umask() can only be read
 * by setting it; no other thread creates files while an output opens. */
static mode_t new_file_mode(void)
{
    mode_t m = umask(022);
    umask(m);
    return 0666 & ~m;
}

int emit_out_open(emit_out *o, const char *path, FILE *caller, tp_err *e)
{
    if (!path || strcmp(path, "-") == 0) {
        if (!caller) /* emit_io_check refuses it before: a slip of ours */
            return tp_errf(e, TP_EINTERNAL, "'-' given where no stream of "
                           "the caller can take it");
        return emit_out_stream(o, caller);
    }
    memset(o, 0, sizeof *o);
    o->slot = -1;
    o->path = path;
    int rc = emit_out_resolve(path, o->target, sizeof o->target, e);
    if (rc) return rc;
    struct stat st;
    int exists = stat(o->target, &st) == 0;
    if (!exists && errno != ENOENT)
        return tp_errf(e, TP_EIO, "%s: cannot write output: %s", path,
                       strerror(errno));
    if (exists && S_ISDIR(st.st_mode))
        return tp_errf(e, TP_EIO, "%s: is a directory; -o names a file", path);
    if (exists && (!S_ISREG(st.st_mode) || emit_out_names_fd(o->target))) {
        /* A device or FIFO: renaming over it would put a regular file in
         * its place (-o /dev/null would delete /dev/null, as root). A
         * process's descriptor (/dev/stdout to a file): the file is the
         * caller's open file, appended to (a shell's >> kept), never
         * replaced by rename. */
        int fd = open(o->target, O_WRONLY | O_APPEND);
        if (fd < 0)
            return tp_errf(e, TP_EIO, "%s: cannot open output: %s", path,
                           strerror(errno));
        o->f = fdopen(fd, "w");
        if (!o->f) {
            close(fd);
            return tp_errf(e, TP_EIO, "%s: cannot open output: %s", path,
                           strerror(errno));
        }
        o->direct = 1;
        return TP_OK;
    }
    mode_t mode = exists ? st.st_mode & 07777 : new_file_mode();
    /* The temporary file sits beside the target so rename() is atomic. */
    int n = snprintf(o->tmp, sizeof o->tmp, "%s.tmp.XXXXXX", o->target);
    if (n < 0 || (size_t)n >= sizeof o->tmp)
        return tp_errf(e, TP_EIO, "%s: output path too long", path);
    int fd = mkstemp_armed(o->tmp, sizeof o->tmp, &o->slot);
    if (fd < 0)
        return tp_errf(e, TP_EIO, "%s: cannot create output file: %s", path,
                       strerror(errno));
    if (fchmod(fd, mode) != 0 || !(o->f = fdopen(fd, "w"))) {
        int err = errno;
        close(fd);
        unlink(o->tmp);
        slot_disarm(o->slot);
        return tp_errf(e, TP_EIO, "%s: cannot open output file: %s", path,
                       strerror(err));
    }
    return TP_OK;
}

int emit_out_stream(emit_out *o, FILE *f)
{
    memset(o, 0, sizeof *o);
    o->slot = -1;
    o->f = f;
    o->borrowed = 1;
    return TP_OK;
}

/* Flushes, syncs and closes o's stream. A regular file's temporary file
 * is then left pending (renamed by emit_out_commit) when ok and nothing
 * failed, else removed. Errors are reported only when ok. */
static int out_end(emit_out *o, int ok, tp_err *e)
{
    if (!o->f) return TP_OK;
    FILE *f = o->f;
    o->f = NULL;
    /* The first error wins: a full disk (ENOSPC), a file size limit
     * (EFBIG, SIGXFSZ being ignored), an I/O error at flush or close. */
    int err = 0;
    if (fflush(f) != 0) err = errno;
    else if (ferror(f)) err = EIO;
    if (o->borrowed) {
        /* The caller's stream stays open: whoever opened it closes it
         * (the executable's main() closes standard output and reports
         * what its close finds). */
        if (err && ok)
            return tp_errf(e, TP_EIO, "%s: write failed: %s",
                           f == stdout ? "standard output" : "output stream",
                           strerror(err));
        return TP_OK;
    }
    if (!err && !o->direct && ok && fsync(fileno(f)) != 0) err = errno;
    if (fclose(f) != 0 && !err) err = errno;
    if (o->direct) {
        if (err && ok)
            return tp_errf(e, TP_EIO, "%s: write failed: %s", o->path,
                           strerror(err));
        return TP_OK;
    }
    if (!ok || err) {
        unlink(o->tmp);
        slot_disarm(o->slot);
        if (ok)
            return tp_errf(e, TP_EIO, "%s: write failed: %s", o->path,
                           strerror(err));
        return TP_OK;
    }
    o->pending = 1;
    return TP_OK;
}

int emit_out_finish(emit_out *o, tp_err *e) { return out_end(o, 1, e); }

int emit_out_commit(emit_out *o, tp_err *e)
{
    if (!o->pending) return TP_OK;
    o->pending = 0;
    int rc = TP_OK;
    if (rename(o->tmp, o->target) != 0) {
        int rerr = errno;
        unlink(o->tmp);
        rc = tp_errf(e, TP_EIO, "%s: cannot write output: %s", o->path,
                     strerror(rerr));
    }
    slot_disarm(o->slot);
    return rc;
}

void emit_out_discard(emit_out *o)
{
    out_end(o, 0, NULL);
    if (o->pending) {
        unlink(o->tmp);
        slot_disarm(o->slot);
        o->pending = 0;
    }
}

int emit_out_close(emit_out *o, int ok, tp_err *e)
{
    int rc = out_end(o, ok, e);
    if (rc || !ok) {
        emit_out_discard(o);
        return rc;
    }
    return emit_out_commit(o, e);
}
