/*
 * out.c - where a command's data goes and how tables look. One writer for
 * every output of a call (-o, --svg, --sbatch, sweep's --overwrite):
 * "-" is the caller's stream given to cli_run (standard output for the
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
 * Before a command runs, cli_io_check looks at every path the call reads
 * and writes: an output that is one of the inputs, or that another output
 * of the call names too, is refused (TP_EUSAGE), and so is "-" where the
 * caller's stream already carries the command's output or where it cannot
 * be written (a directory output).
 *
 * The temporary file never outlives the process: a failed command removes
 * it, and so does SIGHUP, SIGINT or SIGTERM (a handler unlinks it, then the
 * signal takes its default course) where the program lets us own its
 * signals (cli_own_signals: the command line does, a library caller
 * need not). SIGXFSZ is ignored by main(), so a file size limit is a
 * write error (EFBIG) reported like a full disk.
 * Not done here: SIGKILL (nothing runs) and the sweep's own resumable file
 * (cmd_sweep.c writes it in place; it uses this writer for --overwrite).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "cli.h"
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

void cli_own_signals(void) { signals_owned = 1; }

int cli_signals_owned(void) { return signals_owned; }

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

int cli_out_names_fd(const char *path)
{
    static const char *const dirs[] = {"/dev/fd/", "/proc/"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (strncmp(path, dirs[i], strlen(dirs[i])) == 0)
            return i == 0 || strstr(path, "/fd/") != NULL;
    return 0;
}

int cli_out_resolve(const char *path, char *out, size_t cap, tp_err *e)
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
        if (cli_out_names_fd(cur)) break;
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

static void io_identify(const cli_io *x, FILE *caller, io_id *id)
{
    memset(id, 0, sizeof *id);
    struct stat st;
    if (strcmp(x->path, "-") == 0) {
        if (x->role == CLI_IO_IN) return; /* standard input: no file */
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
    if (x->role == CLI_IO_IN) return;
    /* Not there yet: its directory's real path and its name, the links
     * of the path itself followed first (a dangling link names where the
     * file will be written). */
    char target[4096], dir[4096], real[PATH_MAX];
    tp_err ignored = {0};
    if (cli_out_resolve(x->path, target, sizeof target, &ignored)) return;
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
static const char *io_name(const cli_io *x, char *buf, size_t cap)
{
    if (x->implicit)
        snprintf(buf, cap, "the command's output (standard output, no -o)");
    else
        snprintf(buf, cap, "%s %s", x->what, x->path);
    return buf;
}

int cli_io_check(const cli_io *io, int n, FILE *caller, tp_err *e)
{
    char a[4200], b[4200];
    /* "-" first: where it cannot be written, and where two outputs would
     * share the caller's stream (the second would garble the first: a
     * script inside a table, an SVG inside a library call's JSON). */
    for (int i = 0; i < n; i++) {
        const cli_io *x = &io[i];
        if (x->role == CLI_IO_IN || strcmp(x->path, "-")) continue;
        if (x->role == CLI_IO_OUT_DIR)
            return tp_errf(e, TP_EUSAGE,
                           "%s -: this command writes files into a directory; "
                           "'-' (standard output) cannot be one: give a "
                           "directory", x->what);
        for (int j = 0; j < i; j++) {
            if (io[j].role != CLI_IO_OUT || strcmp(io[j].path, "-")) continue;
            const cli_io *y = &io[j], *imp = x->implicit ? x
                                             : y->implicit ? y : NULL;
            const cli_io *other = imp == x ? y : x;
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
        if (io[i].role == CLI_IO_IN) continue;
        for (int j = 0; j < n && !rc; j++) {
            if (j == i || !io_same(&ids[i], &ids[j])) continue;
            /* Only a regular file is lost by being replaced: two writers
             * of /dev/null, or of one terminal, lose nothing. A file not
             * there yet is a regular file to be. */
            if (ids[i].kind == 1 && !ids[i].regular) continue;
            if (io[j].role == CLI_IO_IN) {
                /* standard output onto an input (a shell's >>) appends
                 * to it rather than replacing it: damage all the same */
                rc = tp_errf(e, TP_EUSAGE,
                             "%s is %s: the output would %s the file it "
                             "reads; give another output path",
                             io_name(&io[i], a, sizeof a),
                             io_name(&io[j], b, sizeof b),
                             strcmp(io[i].path, "-") ? "replace" : "write into");
            } else if (j < i) {
                const cli_io *x = io[i].implicit ? &io[j] : &io[i];
                const cli_io *y = io[i].implicit ? &io[i] : &io[j];
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

int cli_out_open(cli_out *o, const char *path, FILE *caller, tp_err *e)
{
    if (!path || strcmp(path, "-") == 0) {
        if (!caller) /* cli_io_check refuses it before: a slip of ours */
            return tp_errf(e, TP_EINTERNAL, "'-' given where no stream of "
                           "the caller can take it");
        return cli_out_stream(o, caller);
    }
    memset(o, 0, sizeof *o);
    o->slot = -1;
    o->path = path;
    int rc = cli_out_resolve(path, o->target, sizeof o->target, e);
    if (rc) return rc;
    struct stat st;
    int exists = stat(o->target, &st) == 0;
    if (!exists && errno != ENOENT)
        return tp_errf(e, TP_EIO, "%s: cannot write output: %s", path,
                       strerror(errno));
    if (exists && S_ISDIR(st.st_mode))
        return tp_errf(e, TP_EIO, "%s: is a directory; -o names a file", path);
    if (exists && (!S_ISREG(st.st_mode) || cli_out_names_fd(o->target))) {
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

int cli_out_stream(cli_out *o, FILE *f)
{
    memset(o, 0, sizeof *o);
    o->slot = -1;
    o->f = f;
    o->borrowed = 1;
    return TP_OK;
}

/* Flushes, syncs and closes o's stream. A regular file's temporary file
 * is then left pending (renamed by cli_out_commit) when ok and nothing
 * failed, else removed. Errors are reported only when ok. */
static int out_end(cli_out *o, int ok, tp_err *e)
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

int cli_out_finish(cli_out *o, tp_err *e) { return out_end(o, 1, e); }

int cli_out_commit(cli_out *o, tp_err *e)
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

void cli_out_discard(cli_out *o)
{
    out_end(o, 0, NULL);
    if (o->pending) {
        unlink(o->tmp);
        slot_disarm(o->slot);
        o->pending = 0;
    }
}

int cli_out_close(cli_out *o, int ok, tp_err *e)
{
    int rc = out_end(o, ok, e);
    if (rc || !ok) {
        cli_out_discard(o);
        return rc;
    }
    return cli_out_commit(o, e);
}

void cli_table_init(cli_table *t, int ncols, const char **headers,
                    const char *align)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->headers = headers;
    t->align = align;
}

void cli_table_row(cli_table *t, ...)
{
    if (t->nrows == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->cells = tp_xrealloc(t->cells,
                               (size_t)t->cap * (size_t)t->ncols * sizeof *t->cells);
    }
    va_list ap;
    va_start(ap, t);
    for (int c = 0; c < t->ncols; c++) {
        const char *s = va_arg(ap, const char *);
        t->cells[t->nrows * t->ncols + c] = tp_xstrdup(s ? s : "");
    }
    va_end(ap);
    t->nrows++;
}

void cli_table_rowv(cli_table *t, const char *const *cells, int n)
{
    if (t->nrows == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->cells = tp_xrealloc(t->cells,
                               (size_t)t->cap * (size_t)t->ncols * sizeof *t->cells);
    }
    for (int c = 0; c < t->ncols; c++)
        t->cells[t->nrows * t->ncols + c] =
            tp_xstrdup(c < n && cells[c] ? cells[c] : "");
    t->nrows++;
}

/* RFC 4180: a cell with a comma, quote or line break is quoted, its
 * quotes doubled. "-", the table's mark for a missing value, is an empty
 * cell, as JSON's null is (a reader would take "-" for text). */
static void csv_cell(FILE *f, const char *s)
{
    if (!strcmp(s, CLI_MISSING)) return;
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void cli_table_print(const cli_table *t, FILE *f, cli_format fmt)
{
    if (fmt == CLI_CSV) {
        for (int c = 0; c < t->ncols; c++) {
            if (c) fputc(',', f);
            csv_cell(f, t->headers[c]);
        }
        fputc('\n', f);
        for (int r = 0; r < t->nrows; r++) {
            for (int c = 0; c < t->ncols; c++) {
                if (c) fputc(',', f);
                csv_cell(f, t->cells[r * t->ncols + c]);
            }
            fputc('\n', f);
        }
        return;
    }
    int *w = tp_xcalloc((size_t)t->ncols, sizeof *w);
    for (int c = 0; c < t->ncols; c++) {
        w[c] = (int)strlen(t->headers[c]);
        for (int r = 0; r < t->nrows; r++) {
            int n = (int)strlen(t->cells[r * t->ncols + c]);
            if (n > w[c]) w[c] = n;
        }
    }
    for (int r = -1; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            const char *s = r < 0 ? t->headers[c] : t->cells[r * t->ncols + c];
            int last = c == t->ncols - 1;
            if (t->align[c] == 'r')
                fprintf(f, "%*s", w[c], s);
            else if (last)
                fputs(s, f); /* no trailing blanks */
            else
                fprintf(f, "%-*s", w[c], s);
            if (!last) fputs("  ", f);
        }
        fputc('\n', f);
    }
    free(w);
}

void cli_table_free(cli_table *t)
{
    for (int i = 0; i < t->nrows * t->ncols; i++) free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

cJSON *cli_json_version(cJSON *v)
{
    if (cJSON_IsArray(v)) {
        cJSON *x;
        cJSON_ArrayForEach(x, v) if (cJSON_IsObject(x)) cli_json_version(x);
        return v;
    }
    if (!cJSON_IsObject(v) || cJSON_GetObjectItemCaseSensitive(v, "schema_version"))
        return v;
    /* Added last (which names it), then moved first: cJSON has no call
     * that inserts a named member. */
    cJSON_AddNumberToObject(v, "schema_version", CLI_SCHEMA_VERSION);
    cJSON *n = cJSON_DetachItemFromObjectCaseSensitive(v, "schema_version");
    cJSON_InsertItemInArray(v, 0, n);
    return v;
}

void cli_print_json(FILE *f, cJSON *v)
{
    /* cJSON_Print's bytes, written faster (hwdb/tp_json_print.c) */
    char *s = tp_json_print(cli_json_version(v), 1);
    if (s) {
        fputs(s, f);
        fputc('\n', f);
        free(s);
    }
    cJSON_Delete(v);
}

void cli_fmt_count(char *buf, size_t cap, double v)
{
    static const struct { double div; const char *suffix; } units[] = {
        {1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (fabs(v) >= units[i].div) {
            snprintf(buf, cap, "%.2f %s", v / units[i].div, units[i].suffix);
            return;
        }
    snprintf(buf, cap, "%.0f", v);
}

void cli_fmt_si(char *buf, size_t cap, double v, const char *unit)
{
    static const struct { double mul; const char *prefix; } pre[] = {
        {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"},
        {1, ""},     {1e-3, "m"}, {1e-6, "u"}, {1e-9, "n"}};
    if (v == 0) {
        snprintf(buf, cap, "0 %s", unit);
        return;
    }
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        if (fabs(v) >= pre[i].mul * 0.9995) {
            snprintf(buf, cap, "%.4g %s%s", v / pre[i].mul, pre[i].prefix, unit);
            return;
        }
    snprintf(buf, cap, "%.4g %s", v, unit);
}

void cli_fmt_bytes(char *buf, size_t cap, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (fabs(bytes) >= 1024 && u < 5) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

void cli_json_rc_modules(cJSON *o, const space_layout *l)
{
    cJSON *arr = cJSON_AddArrayToObject(o, "recompute_modules");
    unsigned k = space_recompute_modules(l);
    for (int b = 0; arr && b < SPACE_RC_COUNT; b++)
        if (k & (1u << b))
            cJSON_AddItemToArray(arr,
                                 cJSON_CreateString(space_rc_module_names[b]));
}

void cli_json_split(cJSON *o, const space_model *m, const space_layout *l)
{
    cJSON *s = cJSON_AddObjectToObject(o, "pipeline_split");
    int acc = l->pp_account > 0 ? l->pp_account : 0;
    space_split sp;
    space_reject rj = space_split_resolve(m, l, &sp, NULL, 0);
    cJSON_AddBoolToObject(s, "account_for_embedding_in_pipeline_split",
                          (acc & SPACE_PP_EMBED) != 0);
    cJSON_AddBoolToObject(s, "account_for_loss_in_pipeline_split",
                          (acc & SPACE_PP_LOSS) != 0);
    if (l->pp_first > 0)
        cJSON_AddNumberToObject(s, "decoder_first_pipeline_num_layers",
                                (double)l->pp_first);
    else
        cJSON_AddNullToObject(s, "decoder_first_pipeline_num_layers");
    if (l->pp_last > 0)
        cJSON_AddNumberToObject(s, "decoder_last_pipeline_num_layers",
                                (double)l->pp_last);
    else
        cJSON_AddNullToObject(s, "decoder_last_pipeline_num_layers");
    if (l->pp_layout)
        cJSON_AddStringToObject(s, "pipeline_model_parallel_layout",
                                l->pp_layout->text);
    else
        cJSON_AddNullToObject(s, "pipeline_model_parallel_layout");
    if (rj != SPACE_OK)
        cJSON_AddStringToObject(s, "refused", space_reject_names[rj]);
    else
        cJSON_AddNullToObject(s, "refused");
    cJSON *st = cJSON_AddArrayToObject(s, "layers_per_stage");
    int64_t mtp_stage = -1;
    for (int64_t k = 0; k < sp.pp * sp.vpp; k++) {
        space_chunk c;
        space_split_chunk(&sp, k % sp.pp, k / sp.pp, &c);
        cJSON_AddItemToArray(st, cJSON_CreateNumber((double)c.layers));
        if (c.mtp > 0) mtp_stage = k;
    }
    cJSON *rk = cJSON_AddArrayToObject(s, "layers_per_pipeline_rank");
    for (int64_t r = 0; r < sp.pp; r++)
        cJSON_AddItemToArray(
            rk, cJSON_CreateNumber((double)space_split_rank_layers(&sp, r)));
    if (mtp_stage >= 0)
        cJSON_AddNumberToObject(s, "mtp_stage", (double)mtp_stage);
    else
        cJSON_AddNullToObject(s, "mtp_stage");
}

void cli_json_savers(cJSON *o, const space_layout *l)
{
    cJSON *s = cJSON_AddObjectToObject(o, "memory_savers");
    char tag[64];
    cJSON_AddStringToObject(s, "tag", space_savers_tag(l, tag, sizeof tag));
    cJSON_AddBoolToObject(s, "use_precision_aware_optimizer",
                          l->pa_optimizer != 0);
    cJSON_AddStringToObject(s, "main_grads_dtype",
                            space_opt_dtype_name(l->main_grads_dtype));
    cJSON_AddStringToObject(s, "main_params_dtype",
                            space_opt_dtype_name(l->main_params_dtype));
    cJSON_AddStringToObject(s, "exp_avg_dtype",
                            space_opt_dtype_name(l->exp_avg_dtype));
    cJSON_AddStringToObject(s, "exp_avg_sq_dtype",
                            space_opt_dtype_name(l->exp_avg_sq_dtype));
    cJSON_AddBoolToObject(s, "optimizer_cpu_offload", l->opt_offload > 0);
    if (l->opt_offload > 0)
        cJSON_AddNumberToObject(s, "optimizer_offload_fraction",
                                l->opt_offload);
    else
        cJSON_AddNullToObject(s, "optimizer_offload_fraction");
    cJSON_AddBoolToObject(s, "overlap_cpu_optimizer_d2h_h2d",
                          l->opt_offload > 0 && l->opt_offload_overlap);
    cJSON_AddNumberToObject(s, "cpu_offloading_num_layers",
                            (double)l->act_offload_layers);
    cJSON_AddBoolToObject(s, "fine_grained_activation_offloading",
                          l->offload_modules != 0);
    cJSON *arr = cJSON_AddArrayToObject(s, "offload_modules");
    for (int b = 0; arr && b < SPACE_OFF_COUNT; b++)
        if (l->offload_modules & (1u << b))
            cJSON_AddItemToArray(arr,
                                 cJSON_CreateString(space_off_module_names[b]));
    if (l->offload_modules)
        cJSON_AddNumberToObject(s, "activation_offload_fraction",
                                l->offload_fraction > 0 ? l->offload_fraction
                                                        : 1);
    else
        cJSON_AddNullToObject(s, "activation_offload_fraction");
    if (l->vpp > 1)
        cJSON_AddNumberToObject(s, "microbatch_group_size_per_vp_stage",
                                (double)space_mb_group(l));
    else
        cJSON_AddNullToObject(s, "microbatch_group_size_per_vp_stage");
}

char *cli_savers_text(const space_layout *l, char *buf, size_t cap)
{
    size_t at = 0;
    if (cap) buf[0] = '\0';
#define ADD(...)                                                              \
    do {                                                                      \
        int w_ = at < cap ? snprintf(buf + at, cap - at, __VA_ARGS__) : 0;    \
        if (w_ > 0) at += (size_t)w_;                                         \
    } while (0)
    if (l->pa_optimizer && l->opt_offload <= 0)
        ADD("%sprecision-aware optimizer (gradients %s, master %s, moments "
            "%s/%s)",
            at ? "; " : "", space_opt_dtype_name(l->main_grads_dtype),
            space_opt_dtype_name(l->main_params_dtype),
            space_opt_dtype_name(l->exp_avg_dtype),
            space_opt_dtype_name(l->exp_avg_sq_dtype));
    if (l->opt_offload > 0)
        ADD("%soptimizer on the host (%g of its parameters%s)",
            at ? "; " : "", l->opt_offload,
            l->opt_offload_overlap ? ", copies overlapped" : "");
    if (l->act_offload_layers > 0)
        ADD("%sactivations of the first %lld layers on the host",
            at ? "; " : "", (long long)l->act_offload_layers);
    if (l->offload_modules) {
        char names[160];
        space_off_modules_str(l->offload_modules, ", ", names, sizeof names);
        ADD("%sfine-grained offloading of %s (%g of the groups)",
            at ? "; " : "", names,
            l->offload_fraction > 0 ? l->offload_fraction : 1);
    }
    if (l->mb_group > 0 && l->vpp > 1)
        ADD("%smicro-batch groups of %lld", at ? "; " : "",
            (long long)l->mb_group);
#undef ADD
    return buf;
}

void cli_json_band(cJSON *o, const est_band *b)
{
    if (b->basis == EST_BAND_NONE) {
        cJSON_AddNullToObject(o, "error_band");
        return;
    }
    cJSON *j = cJSON_AddObjectToObject(o, "error_band");
    cJSON_AddNumberToObject(j, "mape_pct", b->mape_pct);
    cJSON_AddNumberToObject(j, "signed_pct", b->signed_pct);
    cJSON_AddNumberToObject(j, "worst_pct", b->worst_pct);
    cJSON_AddNumberToObject(j, "slower_share", b->slower_share);
    cJSON_AddNumberToObject(j, "runs", b->runs);
    cJSON_AddStringToObject(j, "basis", est_band_basis_names[b->basis]);
    cJSON_AddStringToObject(j, "evidence", "bench/results/validate_runs.md");
    const est_validated_run *x = b->nearest;
    cJSON *n = cJSON_AddObjectToObject(j, "nearest_run");
    cJSON_AddStringToObject(n, "id", x->id);
    cJSON_AddStringToObject(n, "source", x->source);
    cJSON_AddStringToObject(n, "stack", space_stack_names[x->stack]);
    cJSON_AddStringToObject(n, "gpu_family", x->family);
    cJSON_AddNumberToObject(n, "gpus", (double)x->gpus);
    cJSON_AddNumberToObject(n, "params", x->params);
    cJSON_AddNumberToObject(n, "error_pct", x->err_pct);
}

char *cli_band_text(const est_band *b, char *buf, size_t cap)
{
    if (b->basis == EST_BAND_NONE) {
        snprintf(buf, cap, "error band: none (no published run of this kind "
                           "was scored)");
        return buf;
    }
    const est_validated_run *x = b->nearest;
    char what[160];
    switch (b->basis) {
    case EST_BAND_STACK_FAMILY:
        snprintf(what, sizeof what, "%s runs on %s",
                 space_stack_names[x->stack], x->family);
        break;
    case EST_BAND_FAMILY:
        snprintf(what, sizeof what, "runs of every stack on %s", x->family);
        break;
    case EST_BAND_STACK:
        snprintf(what, sizeof what, "%s runs on every GPU",
                 space_stack_names[x->stack]);
        break;
    default: snprintf(what, sizeof what, "runs"); break;
    }
    snprintf(buf, cap,
             "error band: +/-%.1f %% (mean absolute step-time error on %d "
             "published %s%s %s; on them the estimate leans %+.1f %%, slower "
             "on %.0f %%, worst %.1f %%: bench/results/validate_runs.md)\n"
             "nearest validated run: %s (%s, %lld GPUs), estimate %+.1f %%",
             b->mape_pct, b->runs, x->moe ? "MoE " : "", what,
             x->moe ? "as estimated"
                    : "with each run's source left out of the fit",
             b->signed_pct, 100 * b->slower_share, b->worst_pct, x->id,
             x->source, (long long)x->gpus, x->err_pct);
    return buf;
}

void cli_print_wrapped(FILE *f, const char *text, int at, int indent, int width)
{
    int col = at;
    const char *p = text;
    int first = 1;
    while (*p) {
        while (*p == ' ') p++;
        const char *w = p;
        while (*p && *p != ' ') p++;
        int n = (int)(p - w);
        if (n == 0) break;
        if (!first && col + 1 + n > width) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
            first = 1;
        }
        if (!first) fputc(' ', f), col++;
        fwrite(w, 1, (size_t)n, f);
        col += n;
        first = 0;
    }
    fputc('\n', f);
}

void cli_wrapf(FILE *f, int indent, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t n = strlen(buf);
    if (n && buf[n - 1] == '\n') buf[n - 1] = '\0';
    /* a leading indent is kept: cli_print_wrapped starts at a word */
    int lead = 0;
    while (buf[lead] == ' ') lead++;
    fprintf(f, "%.*s", lead, buf);
    cli_print_wrapped(f, buf + lead, lead, indent, CLI_TEXT_WIDTH);
}
