/*
 * sweep_run.c - `trainplan sweep SPEC.json`: the search of every scenario
 * of a spec (sweep_spec.c), one JSON Lines record per scenario, in
 * scenario order (merge and the CSV form: sweep_csv.c).
 *
 * A record: index, count (scenarios of the spec), id, the scenario's
 * inputs as given, the digests of the files they were read from (model
 * config.json; each system's and GPU's hwdb file and their measured
 * files), the tool's version, which form it is ("record"), status (ok,
 * infeasible, error), the best layout, and the search: by default its
 * compact form (the top-k rows and the Pareto front without what the
 * layout tag says, the counts without zeros: sweep_scenario.c's compact_search), with the
 * spec's "record": "full" (or --record full) what `search --format json
 * --no-timing` prints. No timing and no thread count: a record's bytes
 * depend only on its inputs, at any thread count, shard or MPI rank.
 *
 * Scenarios run side by side, one a thread (run_scenarios); their
 * records are written in scenario order all the same.
 *
 * Durability: the output is opened for appending and each record goes
 * out in one write() of the whole line as soon as it and every record
 * before it are done; the file is fsync'd at most every
 * SWEEP_SYNC_INTERVAL_S and when the sweep ends or stops. A crash
 * (SIGKILL: the records written are in the page cache, on disk later; a
 * power loss: those of the last interval may be lost) leaves complete
 * records followed by at most one torn line (or, after a power loss, a
 * damaged one), which --resume detects (no '\n', a seal that does not
 * match, or not a record of the expected scenario, version and input
 * file digests), cuts off with ftruncate() and redoes with every
 * scenario after it. The file is written in place, not through emit/out.c's
 * temporary file, as resuming is the point. An -o file that already holds
 * bytes is never emptied: --resume continues it, --overwrite writes the
 * new sweep through out.c's temporary file and renames it over the old
 * one only when the sweep finishes; without either it is refused. The
 * file is locked (fcntl) for the whole sweep: a second sweep on it is
 * refused (exit 75). -o naming the spec, or a config.json the spec
 * names, is refused (emit_io_check). Without -o the
 * records go to the caller's stream (standard output, or a library
 * call's): one write() a record through its descriptor, or for a memory
 * stream through stdio, flushed after each record. SIGHUP, SIGINT and
 * SIGTERM stop the sweep after the scenarios under way (exit
 * 129/130/143).
 *
 * MPI (-DTRAINPLAN_MPI=ON, run under mpirun): rank 0 hands out scenario
 * positions one at a time to whichever rank asks (dynamic: slow
 * scenarios do not hold up a static split), buffers results that come
 * back out of order and writes them in scenario order, so its file is
 * byte for byte a single process's. With one rank it runs alone.
 */
#define _POSIX_C_SOURCE 200809L /* sigaction, fsync, ftruncate, isatty */
#include "sweep_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#include <pthread.h>

#ifdef TRAINPLAN_MPI
#include <mpi.h>
#endif

/* ---- writing ------------------------------------------------------------- */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) { stop_signal = sig; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One write() of the whole line (looping only on a short write). fd < 0:
 * the caller's stream f, which has no descriptor (a library call's memory
 * stream), written with stdio and flushed. */
static int write_record(int fd, FILE *f, const char *line, const char *path,
                        tp_err *e)
{
    size_t n = strlen(line), off = 0;
    if (fd < 0) {
        if (fwrite(line, 1, n, f) != n || fflush(f) != 0)
            return tp_errf(e, TP_EIO, "%s: write failed: %s", path,
                           strerror(errno));
        return TP_OK;
    }
    while (off < n) {
        ssize_t w = write(fd, line + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            return tp_errf(e, TP_EIO, "%s: write failed: %s", path,
                           strerror(errno));
        off += (size_t)w;
    }
    return TP_OK;
}

/* fsync of a resumable -o file at most this often, and when the sweep
 * ends or stops: an fsync costs 2-5 ms on the development VM's disk
 * (bench/results/sweep_speed.md), more than a small scenario's search.
 * A crash loses at most the records of the last interval, which --resume
 * finds missing (or torn, or unsealed) and redoes. */
#define SWEEP_SYNC_INTERVAL_S 1.0

typedef struct sweep_writer {
    int fd;           /* write_record's */
    FILE *stream;
    int sync;         /* a resumable file: fsync'd (writer_sync) */
    const char *path; /* for messages */
    int unsynced;     /* records written since the last fsync */
    double synced_at; /* now_s() of the last fsync */
} sweep_writer;

static int writer_sync(sweep_writer *w, tp_err *e)
{
    if (!w->sync || !w->unsynced) return TP_OK;
    w->unsynced = 0;
    w->synced_at = now_s();
    if (fsync(w->fd) != 0)
        return tp_errf(e, TP_EIO, "%s: fsync failed: %s", w->path,
                       strerror(errno));
    return TP_OK;
}

/* Writes one record; fsyncs where the last fsync is SWEEP_SYNC_INTERVAL_S
 * old. */
static int writer_put(sweep_writer *w, const char *line, tp_err *e)
{
    int rc = write_record(w->fd, w->stream, line, w->path, e);
    if (rc) return rc;
    w->unsynced++;
    if (w->sync && now_s() - w->synced_at >= SWEEP_SYNC_INTERVAL_S)
        return writer_sync(w, e);
    return TP_OK;
}

typedef struct progress {
    FILE *err;
    int on;
    int64_t done, total, start;
    double t0, shown;
} progress;

/* At most about four lines a second; the last always. */
static void progress_tick(progress *p, int last)
{
    if (!p->on) return;
    double t = now_s(), dt = t - p->t0;
    if (!last && t - p->shown < 0.25) return;
    p->shown = t;
    double rate = dt > 0 ? (double)(p->done - p->start) / dt : 0;
    double left = rate > 0 ? (double)(p->total - p->done) / rate : 0;
    fprintf(p->err, "\rsweep: %lld/%lld scenarios, %.1f/s, %.0f s left   %s",
            (long long)p->done, (long long)p->total, rate, left, last ? "\n" : "");
    fflush(p->err);
}

/* Where the records go. In place (appended, fsync'd: resumable) unless
 * --overwrite replaces a file that holds records: then through out.c's
 * temporary file, renamed at the end, so last night's file survives a
 * stopped or killed sweep. The -o file itself is locked (fcntl, whole
 * file) for the whole sweep, in both cases. */
typedef struct sweep_out {
    int fd;        /* where records are written; -1 until opened */
    FILE *stream;  /* no -o, the caller's stream has no descriptor: here */
    int borrowed;  /* fd is the caller's stream's (no -o): never closed */
    int file_fd;   /* the -o file, locked; -1 none (stdout, a device) */
    int sync;      /* fsync each record: in place, a regular file */
    int replacing; /* --overwrite: records go to tmp */
    emit_out tmp;
    char target[4096]; /* -o with its symbolic links followed */
} sweep_out;

/* The lock that keeps a second sweep off the file: fcntl's rather than
 * flock's, since it works on NFS and names the holder. */
static int lock_output(int fd, const char *path, FILE *err, tp_err *e)
{
    struct flock l;
    memset(&l, 0, sizeof l);
    l.l_type = F_WRLCK;
    l.l_whence = SEEK_SET;
    if (fcntl(fd, F_SETLK, &l) == 0) return TP_OK;
    if (errno != EACCES && errno != EAGAIN) {
        /* A file system without locks: the sweep is still worth running. */
        fprintf(err, "trainplan: %s: cannot lock (%s); a second sweep on "
                        "this file would not be refused\n",
                path, strerror(errno));
        return TP_OK;
    }
    struct flock q = l;
    char who[64] = "another process";
    if (fcntl(fd, F_GETLK, &q) == 0 && q.l_type != F_UNLCK && q.l_pid > 0)
        snprintf(who, sizeof who, "process %ld", (long)q.l_pid);
    return tp_errf(e, TP_ELOCKED,
                   "%s: another sweep (%s) is writing this file; wait for it "
                   "to finish or give another -o FILE",
                   path, who);
}

/* Opens and locks the regular file -o names (creating it when create is
 * set; else a missing file is left for later) and refuses one that holds
 * records unless --resume or --overwrite says what to do with them. */
static int claim_file(const sweep_opts *o, sweep_out *so, int create, tp_err *e)
{
    const char *path = o->out_dir;
    so->file_fd = open(so->target, O_RDWR | (create ? O_CREAT : 0), 0666);
    if (so->file_fd < 0) {
        if (!create && errno == ENOENT) return TP_OK;
        return tp_errf(e, TP_EIO, "%s: cannot open: %s", path, strerror(errno));
    }
    int rc = lock_output(so->file_fd, path, sweep_err(o), e);
    struct stat st;
    if (!rc && fstat(so->file_fd, &st) != 0)
        rc = tp_errf(e, TP_EIO, "%s: cannot stat: %s", path, strerror(errno));
    if (!rc && st.st_size > 0 && !o->resume && !o->overwrite)
        rc = tp_errf(e, TP_EUSAGE,
                     "%s: already holds %lld bytes (a sweep's records?); "
                     "--resume finishes that sweep, --overwrite replaces the "
                     "file when this one finishes",
                     path, (long long)st.st_size);
    if (rc) {
        close(so->file_fd);
        so->file_fd = -1;
    }
    return rc;
}

/* Before the spec is read: the checks that need no spec, so a sweep that
 * cannot write (its -o locked, holding records, or the spec itself) is
 * refused at once. A missing -o file is created later, by open_output. */
static int claim_output(const sweep_opts *o, FILE *out, sweep_out *so,
                        tp_err *e)
{
    const char *path = o->out_dir;
    if (!path || !strcmp(path, "-")) {
        if (o->resume)
            return tp_errf(e, TP_EUSAGE, "sweep --resume needs -o FILE");
        if (o->overwrite)
            return tp_errf(e, TP_EUSAGE, "sweep --overwrite needs -o FILE");
        /* The caller's stream: standard output for the command, written
         * through its descriptor (one write() a record) once what stdio
         * holds is out; a library call's memory stream through stdio. */
        so->fd = fileno(out);
        so->borrowed = so->fd >= 0;
        if (so->fd < 0) so->stream = out;
        else if (fflush(out) != 0)
            return tp_errf(e, TP_EIO, "standard output: write failed: %s",
                           strerror(errno));
        return TP_OK;
    }
    if (o->resume && o->overwrite)
        return tp_errf(e, TP_EUSAGE,
                       "sweep: --resume keeps the records of %s, --overwrite "
                       "replaces them; give one",
                       path);
    int rc = emit_out_resolve(path, so->target, sizeof so->target, e);
    if (rc) return rc;
    struct stat st;
    if (stat(so->target, &st) != 0) {
        if (errno == ENOENT) return TP_OK;
        return tp_errf(e, TP_EIO, "%s: cannot stat: %s", path, strerror(errno));
    }
    /* -o naming the spec (or another input) is refused before the
     * command runs (emit_io_check). */
    if (S_ISDIR(st.st_mode))
        return tp_errf(e, TP_EIO, "%s: is a directory; -o names a file", path);
    if (!S_ISREG(st.st_mode) || emit_out_names_fd(so->target)) {
        /* A device or FIFO (/dev/null, a pipe to gzip), or a process's
         * descriptor (/dev/stdout): written directly, appended to;
         * nothing to resume, replace or lock. */
        if (o->resume || o->overwrite)
            return tp_errf(e, TP_EUSAGE, "%s: --%s needs a regular file", path,
                           o->resume ? "resume" : "overwrite");
        so->fd = open(so->target, O_WRONLY | O_APPEND);
        if (so->fd < 0)
            return tp_errf(e, TP_EIO, "%s: cannot open: %s", path,
                           strerror(errno));
        return TP_OK;
    }
    return claim_file(o, so, 0, e);
}

/* After the spec is read: creates and locks a new -o file, resumes one
 * (*done: how many of want[0..n) it already holds) or starts the
 * replacement of one (--overwrite). */
static void spec_id_of(int64_t k, char id[17], void *ctx)
{
    sweep_scenario_id(ctx, k, id);
}

static int open_output(const sweep_opts *o, const sweep_spec *s,
                       const sweep_key *want, int64_t n, sweep_out *so,
                       int64_t *done, tp_err *e)
{
    const char *path = o->out_dir;
    *done = 0;
    if (so->fd >= 0 || so->stream) return TP_OK; /* the caller's, a device */
    int rc;
    if (so->file_fd < 0 && (rc = claim_file(o, so, 1, e))) return rc;
    struct stat st;
    if (fstat(so->file_fd, &st) != 0)
        return tp_errf(e, TP_EIO, "%s: cannot stat: %s", path, strerror(errno));
    if (o->overwrite && st.st_size > 0) {
        if ((rc = emit_out_open(&so->tmp, path, NULL, e))) return rc;
        so->replacing = 1;
        so->fd = fileno(so->tmp.f); /* written with write(), never stdio */
        return TP_OK;
    }
    so->fd = so->file_fd;
    so->sync = 1;
    if (!o->resume) return TP_OK; /* an empty file: nothing to keep */
    char *buf = tp_xmalloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = read(so->fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    /* A file that does not start with a record of this call is not this
     * sweep's output (a CSV, another spec's night, another shard's
     * file): refused, not emptied. */
    char why[512];
    if (got > 0
        && !sweep_resume_first(buf, got, want, n, s->count, spec_id_of,
                               (void *)s, why, sizeof why)) {
        free(buf);
        return tp_errf(e, TP_EDATA,
                       "%s: not this sweep's output, refused by --resume: %s; "
                       "give another -o FILE, or --overwrite instead of "
                       "--resume to replace the file when the sweep finishes",
                       path, why);
    }
    size_t keep = 0;
    *done = sweep_resume_scan(buf, got, want, n, &keep);
    /* Why the first record not kept is redone, where it is a record of
     * ours: its bytes damaged, or written before records were sealed. */
    const char *nl = keep < got ? memchr(buf + keep, '\n', got - keep) : NULL;
    sweep_key k;
    const char *why_cut = "";
    if (nl && *done < n && sweep_record_key(buf + keep, (size_t)(nl - (buf + keep)), &k)
        && k.index == want[*done].index && !strcmp(k.id, want[*done].id))
        why_cut = k.seal < 0    ? " (the first of them damaged: its "
                                  SWEEP_SEAL_KEY " does not match its bytes)"
                  : k.seal == 0 ? " (the first of them has no "
                                  SWEEP_SEAL_KEY ": written by an older "
                                  "version)"
                                : " (the first of them written by another "
                                  "version or from other input files)";
    free(buf);
    if (keep < (size_t)st.st_size) {
        fprintf(sweep_err(o), "trainplan: %s: keeping %lld complete records, cutting "
                        "%lld bytes after them%s\n",
                path, (long long)*done, (long long)((size_t)st.st_size - keep),
                why_cut);
        if (ftruncate(so->fd, (off_t)keep) != 0)
            return tp_errf(e, TP_EIO, "%s: cannot truncate: %s", path,
                           strerror(errno));
    }
    if (lseek(so->fd, 0, SEEK_END) < 0)
        return tp_errf(e, TP_EIO, "%s: cannot seek: %s", path, strerror(errno));
    return TP_OK;
}

/* Ends the output: renames the replacement into place when the sweep
 * finished (complete), else removes it; closes (unlocks) the file. */
static int close_output(sweep_out *so, int complete, const char *path,
                        tp_err *e)
{
    int rc = TP_OK;
    if (so->replacing) rc = emit_out_close(&so->tmp, complete, e);
    else if (so->fd >= 0 && !so->borrowed && so->fd != so->file_fd
             && close(so->fd) != 0 && complete)
        rc = tp_errf(e, TP_EIO, "%s: close failed: %s", path, strerror(errno));
    if (so->file_fd >= 0 && close(so->file_fd) != 0 && complete && !rc)
        rc = tp_errf(e, TP_EIO, "%s: close failed: %s", path, strerror(errno));
    so->fd = so->file_fd = -1;
    so->stream = NULL;
    so->replacing = so->borrowed = 0;
    return rc;
}

#ifdef TRAINPLAN_MPI
enum { TAG_READY = 1, TAG_WORK, TAG_RESULT, TAG_STOP };

/* Waits for a message from src without spinning: Open MPI's blocking
 * receive polls at full speed, which takes a core from the ranks that
 * compute (the master waits most of the time). */
static void mpi_wait_probe(int src, MPI_Status *st)
{
    int flag = 0;
    struct timespec nap = {0, 200000}; /* 0.2 ms */
    for (;;) {
        MPI_Iprobe(src, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, st);
        if (flag) return;
        nanosleep(&nap, NULL);
    }
}

/* Rank 0: hands out positions start.. of list, writes results in order. */
static int mpi_master(int nranks, const int64_t *list, int64_t n, int64_t start,
                      sweep_writer *wr, progress *pg, tp_err *e)
{
    char **pending = tp_xcalloc((size_t)(n + 1), sizeof *pending);
    int64_t next = start, wpos = start;
    int active = nranks - 1, rc = TP_OK;
    while (active > 0) {
        MPI_Status st;
        mpi_wait_probe(MPI_ANY_SOURCE, &st);
        int len = 0;
        MPI_Get_count(&st, MPI_CHAR, &len);
        char *msg = tp_xmalloc((size_t)len + 1);
        MPI_Recv(msg, len, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        if (st.MPI_TAG == TAG_RESULT && len > 8) {
            int64_t pos;
            memcpy(&pos, msg, sizeof pos);
            char *line = tp_xmalloc((size_t)len - 8 + 1);
            memcpy(line, msg + 8, (size_t)len - 8);
            line[len - 8] = '\0';
            if (pos >= 0 && pos < n && !pending[pos]) pending[pos] = line;
            else free(line);
        }
        free(msg);
        while (rc == TP_OK && wpos < n && pending[wpos]) {
            rc = writer_put(wr, pending[wpos], e);
            free(pending[wpos]);
            pending[wpos++] = NULL;
            pg->done = wpos;
            progress_tick(pg, 0);
        }
        if (next < n && !stop_signal && rc == TP_OK) {
            MPI_Send(&next, 1, MPI_INT64_T, st.MPI_SOURCE, TAG_WORK, MPI_COMM_WORLD);
            next++;
        } else {
            MPI_Send(&next, 0, MPI_INT64_T, st.MPI_SOURCE, TAG_STOP, MPI_COMM_WORLD);
            active--;
        }
    }
    for (int64_t i = 0; i < n; i++) free(pending[i]);
    free(pending);
    pg->done = wpos;
    (void)list;
    return rc;
}

static void mpi_worker(const sweep_spec *s, const int64_t *list,
                       const hw_db *db, search_cache *cache,
                       digest_cache *dc)
{
    MPI_Send(NULL, 0, MPI_CHAR, 0, TAG_READY, MPI_COMM_WORLD);
    for (;;) {
        MPI_Status st;
        int64_t pos = 0;
        mpi_wait_probe(0, &st);
        MPI_Recv(&pos, 1, MPI_INT64_T, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG != TAG_WORK) break;
        char *line = sweep_scenario_record(s, list[pos], db, cache, dc);
        size_t n = strlen(line);
        char *msg = tp_xmalloc(n + 8);
        memcpy(msg, &pos, 8);
        memcpy(msg + 8, line, n);
        MPI_Send(msg, (int)(n + 8), MPI_CHAR, 0, TAG_RESULT, MPI_COMM_WORLD);
        free(msg);
        free(line);
    }
}

#endif

int sweep_under_mpi(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE")
           || getenv("PMIX_RANK");
}

/* Runs positions start..n of list on this process's threads and writes
 * their records in scenario order. A scenario a thread, each search on
 * that one thread: a search parallel inside keeps two cores busy only part
 * of its time (the scan of a single (system, GPU count) is one thread's,
 * each chunk ends at a barrier), scenarios side by side all of it. The
 * records are the same bytes either way (a search's answer does not
 * depend on its thread count). A finished record waits in pending until
 * those before it are written; whichever thread finishes the next one to
 * write writes every record ready after it. A write error or a stop
 * signal lets the scenarios under way finish, starts none, and writes
 * nothing after the first not finished: the file holds records
 * start..pg->done, in order, as a serial sweep stopped there would. */
static int run_scenarios(const sweep_spec *s, const int64_t *list,
                         int64_t start, int64_t n, const hw_db *db,
                         search_cache *cache, digest_cache *dc,
                         sweep_writer *w, progress *pg, tp_err *e)
{
    int nt = 1;
#ifdef _OPENMP
    nt = omp_get_max_threads();
#endif
    int rc = TP_OK;
    if (nt < 2 || n - start < 2) {
        for (int64_t j = start; !rc && j < n && !stop_signal; j++) {
            char *line = sweep_scenario_record(s, list[j], db, cache, dc);
            rc = writer_put(w, line, e);
            free(line);
            pg->done = j + 1;
            progress_tick(pg, 0);
        }
        return rc;
    }
    if (nt > n - start) nt = (int)(n - start);
    char **pending = tp_xcalloc((size_t)(n - start), sizeof *pending);
    int64_t wpos = start;
    int failed = 0;
    tp_err we = {0};
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_t *old_lock = cache->lock;
    if (!cache->lock) cache->lock = &lock; /* filled by any thread */
#pragma omp parallel num_threads(nt)
    {
#ifdef _OPENMP
        omp_set_num_threads(1); /* this thread's searches: one thread */
#endif
#pragma omp for schedule(dynamic, 1)
        for (int64_t j = start; j < n; j++) {
            int stop;
#pragma omp atomic read
            stop = failed;
            if (stop || stop_signal) continue;
            char *line = sweep_scenario_record(s, list[j], db, cache, dc);
#pragma omp critical(sweep_write)
            {
                pending[j - start] = line;
                while (!failed && wpos < n && pending[wpos - start]) {
                    int wrc = writer_put(w, pending[wpos - start], &we);
                    free(pending[wpos - start]);
                    pending[wpos - start] = NULL;
                    if (wrc) {
#pragma omp atomic write
                        failed = wrc;
                        break;
                    }
                    wpos++;
                    pg->done = wpos;
                    progress_tick(pg, 0);
                }
            }
        }
    }
    cache->lock = old_lock;
    pthread_mutex_destroy(&lock);
    for (int64_t j = 0; j < n - start; j++) free(pending[j]);
    free(pending);
    pg->done = wpos;
    if (failed) {
        *e = we;
        rc = failed;
    }
    return rc;
}

/* The config.json files the spec names are inputs too: -o may not name
 * one (run.c's emit_io_check saw only the spec). */
static int check_spec_files(const sweep_opts *o, const sweep_spec *s, tp_err *e)
{
    if (!o->out_dir || !strcmp(o->out_dir, "-")) return TP_OK;
    int n = 0;
    emit_io *io = tp_xcalloc((size_t)s->n[SWEEP_MODELS] + 1, sizeof *io);
    io[n++] = (emit_io){"-o", o->out_dir, EMIT_IO_OUT, 0};
    for (int i = 0; i < s->n[SWEEP_MODELS]; i++)
        if (s->model_path && s->model_path[i])
            io[n++] = (emit_io){"the spec's model", s->model_path[i],
                               EMIT_IO_IN, 0};
    int rc = emit_io_check(io, n, NULL, e);
    free(io);
    return rc;
}

static void print_report(FILE *err, const char *path, const char *rep)
{
    for (const char *l = rep; *l;) {
        const char *nl = strchr(l, '\n');
        int n = nl ? (int)(nl - l) : (int)strlen(l);
        fprintf(err, "trainplan: %s: %.*s\n", path, n, l);
        l += n + (nl ? 1 : 0);
    }
}

int sweep_run(const sweep_opts *o, emit_out *out, tp_err *e)
{
    if (sweep_format_refused(o, "sweep", "its records",
                               ", written when the sweep ends", e))
        return TP_EUSAGE;
    if (o->format == EMIT_CSV) return sweep_csv(o, out, e);
    /* -o is the sweep's own file (out_dir): appended, resumable; without
     * it the records go to out's stream */
    int rank = 0, nranks = 1, rc;
#ifdef TRAINPLAN_MPI
    int mpi = sweep_under_mpi();
    if (mpi) {
        int provided;
        MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    }
#endif
    const char *spec_path = o->pos[0];
    sweep_spec s;
    memset(&s, 0, sizeof s);
    int64_t *list = NULL;
    sweep_key *want = NULL;
    digest_cache dc = {0};
    static search_cache cache; /* large: not on the stack */
    memset(&cache, 0, sizeof cache);
    static sweep_out so; /* large: not on the stack */
    memset(&so, 0, sizeof so);
    so.fd = so.file_fd = -1;
    so.tmp.slot = -1;
    char *text = NULL, *rep = NULL;
    char *spec_hwdb[SWEEP_MAX_HWDB] = {0};
    size_t len = 0;
    hw_db *db = NULL;
    /* The output first: a sweep that could not write is refused before
     * the spec's every scenario is set up. Under MPI rank 0 goes on (to
     * tell the workers to stop); its error is reported at the end. */
    int orc = rank == 0 ? claim_output(o, out->f, &so, e) : TP_OK;
    if (orc && nranks == 1) {
        rc = orc;
        goto done;
    }
    if ((rc = tp_read_file(spec_path, TP_JSON_MAX_BYTES, &text, &len, e))) goto done;
    /* The spec's hwdb directories (read from its folder) before the
     * command line's, so --hwdb still overrides what a spec names. One
     * that does not load is a problem of the spec, reported with the
     * others: the spec is then checked against the rest. */
    char hwdb_problem[sizeof e->msg + 16] = "";
    {
        const char *dirs[SWEEP_MAX_HWDB];
        int nd = sweep_spec_hwdb(spec_path, text, len, spec_hwdb,
                                 SWEEP_MAX_HWDB - o->n_hwdb);
        for (int i = 0; i < nd; i++) dirs[i] = spec_hwdb[i];
        for (int i = 0; i < o->n_hwdb; i++) dirs[nd + i] = o->hwdb_dirs[i];
        db = hw_db_open(dirs, nd + o->n_hwdb, e);
        if (!db && nd > 0) {
            snprintf(hwdb_problem, sizeof hwdb_problem, "$.hwdb: %s", e->msg);
            db = hw_db_open(o->hwdb_dirs, o->n_hwdb, e);
        }
    }
    if (!db) {
        rc = e->status ? e->status : TP_EDATA;
        goto done;
    }
    rc = sweep_spec_parse(spec_path, text, len, &o->base, o->n_hwdb, db, &cache, hwdb_problem,
                          &s, &rep, e);
    if (rc) {
        if (rep && rank == 0) print_report(sweep_err(o), spec_path, rep);
        goto done;
    }
    if (!orc && (rc = check_spec_files(o, &s, e))) goto done;
    /* --launch over the spec's "launch" */
    if (o->launch_set) s.base.form.launch_forms = o->base.form.launch_forms;
    /* --record over the spec's "record" */
    if (o->record_set) s.record = (sweep_record_form)o->record;
    int si = o->shard_n > 0 ? o->shard_i : 0, sn = o->shard_n > 0 ? o->shard_n : 1;
    int64_t n = sweep_shard_size(s.count, si, sn);
    list = tp_xcalloc((size_t)n + 1, sizeof *list);
    want = tp_xcalloc((size_t)n + 1, sizeof *want);
    for (int64_t j = 0; j < n; j++) {
        list[j] = sweep_shard_at(j, si, sn);
        want[j].index = list[j];
        want[j].count = s.count;
        sweep_scenario_id(&s, list[j], want[j].id);
        if (o->resume && rank == 0)
            want[j].check = sweep_expected_check(&s, list[j], db, &cache, &dc);
    }
#ifdef TRAINPLAN_MPI
    if (rank != 0) {
        mpi_worker(&s, list, db, &cache, &dc);
        rc = TP_OK;
        goto done;
    }
#endif
    int64_t start = 0;
    if (!orc) orc = open_output(o, &s, want, n, &so, &start, e);
    const char *path = o->out_dir ? o->out_dir : "standard output";
    int fd = so.fd, sync = so.sync;
    FILE *stream = so.stream;

    /* Installed after out.c's (which remove a temporary file and die):
     * these stop after the records under way and let the sweep end cleanly,
     * and restore out.c's when it has. Only where the program lets us own
     * its signals (emit_own_signals): a library call leaves them alone. */
    int own = emit_signals_owned();
    static const int stop_sigs[] = {SIGHUP, SIGINT, SIGTERM};
    struct sigaction sa, old_sa[3];
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    stop_signal = 0;
    for (int i = 0; own && i < 3; i++) sigaction(stop_sigs[i], &sa, &old_sa[i]);

    FILE *err = sweep_err(o);
    progress pg = {err, o->progress || isatty(fileno(err)), start, n, start,
                   now_s(), 0};
    double t0 = now_s();
    if (start > 0 && start < n)
        fprintf(err, "trainplan: resuming at scenario %lld of %lld\n",
                (long long)start + 1, (long long)n);
    rc = orc;
#ifdef TRAINPLAN_MPI
    if (nranks > 1) {
        /* The master still answers every worker when it cannot write. */
        sweep_writer w = {fd, stream, sync, path, 0, now_s()};
        int mrc = mpi_master(nranks, list, n, orc ? n : start, &w, &pg, e);
        if (!mrc) mrc = writer_sync(&w, e);
        if (!rc) rc = mrc;
    } else
#endif
    {
        sweep_writer w = {fd, stream, sync, path, 0, now_s()};
        if (!rc) rc = run_scenarios(&s, list, start, n, db, &cache, &dc, &w, &pg, e);
        if (!rc) rc = writer_sync(&w, e);
    }
    if (pg.on && !orc) progress_tick(&pg, 1);
    if (!rc) {
        double dt = now_s() - t0;
        (void)nranks;
        if (pg.done < n && stop_signal) {
            int sig = stop_signal;
            const char *name = sig == SIGINT   ? "SIGINT"
                               : sig == SIGHUP ? "SIGHUP"
                                               : "SIGTERM";
            rc = tp_errf(e, sig == SIGINT   ? SWEEP_EXIT_SIGINT
                            : sig == SIGHUP ? SWEEP_EXIT_SIGHUP
                                            : SWEEP_EXIT_SIGTERM,
                         "sweep stopped by %s after %lld of %lld scenarios "
                         "(%.1f s); %s",
                         name, (long long)pg.done, (long long)n, dt,
                         so.replacing ? "the -o file is left as it was "
                                        "(--overwrite replaces it only when "
                                        "the sweep finishes); rerun to "
                                        "replace it"
                                      : "rerun with --resume to finish");
        } else if (pg.on || o->progress)
            fprintf(err, "trainplan: sweep: %lld scenarios (%lld run) in "
                            "%.2f s, %.1f scenarios/s\n",
                    (long long)n, (long long)(n - start), dt,
                    dt > 0 ? (double)(n - start) / dt : 0);
    }
    {
        tp_err ce = {0};
        int crc = close_output(&so, rc == TP_OK, path, &ce);
        if (crc && !rc) {
            rc = crc;
            *e = ce;
        }
    }
    for (int i = 0; own && i < 3; i++) sigaction(stop_sigs[i], &old_sa[i], NULL);
done:
    if (so.fd >= 0 || so.file_fd >= 0 || so.stream)
        close_output(&so, 0, "", NULL);
    sweep_digest_free(&dc);
    search_cache_free(&cache);
    free(list);
    free(want);
    free(rep);
    free(text);
    for (int i = 0; i < SWEEP_MAX_HWDB; i++) free(spec_hwdb[i]);
    sweep_spec_free(&s);
    hw_db_free(db);
#ifdef TRAINPLAN_MPI
    if (mpi) {
        MPI_Finalize();
        if (rank != 0) rc = TP_OK; /* rank 0 reports */
    }
#endif
    return rc;
}
