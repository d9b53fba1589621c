/*
 * cmd_sweep.c - `trainplan sweep SPEC.json`: the search of every scenario
 * of a spec (sweep_spec.c), one JSON Lines record per scenario, in
 * scenario order; and `trainplan merge`: shard outputs back into the file
 * one process writes.
 *
 * A record: index, count (scenarios of the spec), id, the scenario's
 * inputs as given, the digests of the files they were read from (model
 * config.json; each system's and GPU's hwdb file and their measured
 * files), the tool's version, status (ok, infeasible, error), the best
 * layout, and what `search --format json --no-timing` prints (top-k,
 * Pareto front, counts). No timing and no thread count: a record's bytes
 * depend only on its inputs, at any thread count, shard or MPI rank.
 *
 * Durability: the output is opened for appending and each record goes
 * out in one write() of the whole line followed by fsync(): a record is
 * on disk before the next scenario starts. A crash (even SIGKILL, or a
 * power loss between write and fsync) leaves at most one torn last line,
 * which --resume detects (no '\n', or not a record of the expected
 * scenario, version and input file digests), cuts off with ftruncate()
 * and redoes. A sweep without
 * --resume starts its -o file afresh; the file is written in place, not
 * through cli/out.c's temporary file, as resuming is the point. SIGINT and
 * SIGTERM stop the sweep after the current record (exit 130 / 143).
 *
 * MPI (-DTRAINPLAN_MPI=ON, run under mpirun): rank 0 hands out scenario
 * positions one at a time to whichever rank asks (dynamic: slow
 * scenarios do not hold up a static split), buffers results that come
 * back out of order and writes them in scenario order, so its file is
 * byte for byte a single process's. With one rank it runs alone.
 */
#define _POSIX_C_SOURCE 200809L /* sigaction, fsync, ftruncate, isatty */
#include "sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef TRAINPLAN_MPI
#include <mpi.h>
#endif

#ifndef TRAINPLAN_VERSION
#define TRAINPLAN_VERSION "0.0.0"
#endif

/* ---- digests of input files, each file read once per process ---------- */

typedef struct digest_cache {
    int n, cap;
    char **path;
    uint64_t *h;
} digest_cache;

static uint64_t file_digest(digest_cache *c, const char *path)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->path[i], path)) return c->h[i];
    char *buf = NULL;
    size_t len = 0;
    tp_err e = {0};
    uint64_t h = 0; /* 0: unreadable (the search would have failed) */
    if (tp_read_file(path, (size_t)1 << 31, &buf, &len, &e) == TP_OK)
        h = sweep_fnv1a(SWEEP_FNV_BASIS, buf, len);
    free(buf);
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 32;
        c->path = tp_xrealloc(c->path, (size_t)c->cap * sizeof *c->path);
        c->h = tp_xrealloc(c->h, (size_t)c->cap * sizeof *c->h);
    }
    c->path[c->n] = tp_xstrdup(path);
    c->h[c->n++] = h;
    return h;
}

static void digest_cache_free(digest_cache *c)
{
    for (int i = 0; i < c->n; i++) free(c->path[i]);
    free(c->path);
    free(c->h);
}

static void add_hex(cJSON *o, const char *key, uint64_t h)
{
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    cJSON_AddStringToObject(o, key, hex);
}

static uint64_t measured_digest(digest_cache *c, uint64_t h,
                                const hw_measured *m, int n, int *count)
{
    for (int i = 0; i < n; i++) {
        const char *b = tp_basename(m[i].path);
        uint64_t d = file_digest(c, m[i].path);
        h = sweep_fnv1a(h, b, strlen(b) + 1);
        h = sweep_fnv1a(h, &d, sizeof d);
        (*count)++;
    }
    return h;
}

static int is_model_file(const char *model)
{
    size_t n = strlen(model);
    return strchr(model, '/') || (n > 5 && !strcmp(model + n - 5, ".json"));
}

/* The inputs of a set-up search: the model and every hwdb file read.
 * File names only (no directories), so records compare across machines. */
static cJSON *inputs_json(const cli_opts *so, const cli_search *cs,
                          digest_cache *c)
{
    cJSON *in = cJSON_CreateObject();
    cJSON *m = cJSON_AddObjectToObject(in, "model");
    cJSON_AddStringToObject(m, "name", cs->m.name);
    if (is_model_file(so->model)) {
        cJSON_AddStringToObject(m, "file", tp_basename(so->model));
        add_hex(m, "fnv1a64", file_digest(c, so->model));
    }
    cJSON *sa = cJSON_AddArrayToObject(in, "systems");
    for (int i = 0; i < cs->ns; i++) {
        const hw_system *y = cs->sys[i].ctx.sys;
        const hw_gpu *g = y->gpu;
        cJSON *s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "system", y->name);
        cJSON_AddStringToObject(s, "file", tp_basename(y->file));
        add_hex(s, "fnv1a64", file_digest(c, y->file));
        cJSON_AddStringToObject(s, "gpu", g->name);
        cJSON_AddStringToObject(s, "gpu_file", tp_basename(g->file));
        add_hex(s, "gpu_fnv1a64", file_digest(c, g->file));
        if (g->models_like) {
            cJSON_AddStringToObject(s, "models_like_file",
                                    tp_basename(g->models_like->file));
            add_hex(s, "models_like_fnv1a64", file_digest(c, g->models_like->file));
        }
        int nm = 0;
        uint64_t h = SWEEP_FNV_BASIS;
        h = measured_digest(c, h, y->measured, y->n_measured, &nm);
        h = measured_digest(c, h, g->measured, g->n_measured, &nm);
        if (g->models_like)
            h = measured_digest(c, h, g->models_like->measured,
                                g->models_like->n_measured, &nm);
        cJSON_AddNumberToObject(s, "measured_files", nm);
        add_hex(s, "measured_fnv1a64", h);
        cJSON_AddItemToArray(sa, s);
    }
    return in;
}

/* What a record of scenario k written now would say of its version and
 * inputs (sweep_key.check); 0 when it cannot be set up (error records
 * are then compared by index and id only). */
static uint64_t expected_check(const sweep_spec *s, int64_t k, const hw_db *db,
                               cli_search_cache *cache, digest_cache *dc)
{
    cli_opts so;
    sweep_scenario(s, k, &so);
    cli_search cs;
    tp_err e = {0};
    if (cli_search_open(&so, db, cache, &cs, &e)) return 0;
    cJSON *in = inputs_json(&so, &cs, dc);
    uint64_t h = sweep_record_check(TRAINPLAN_VERSION, in);
    cJSON_Delete(in);
    cli_search_close(&cs);
    return h;
}

/* The best layout: the first ranked row's key figures. */
static cJSON *best_json(const cJSON *search)
{
    const cJSON *r0 = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(search, "ranked"), 0);
    if (!r0) return cJSON_CreateNull();
    static const char *const keys[] = {
        "layout", "system", "gpus", "iteration_time_s", "tokens_per_s", "mfu",
        "peak_memory_bytes", "memory_margin_bytes",
        "memory_headroom_bytes", "cost_per_iteration_usd", "time_to_train_s",
        "cost_usd"};
    cJSON *b = cJSON_CreateObject();
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(r0, keys[i]);
        if (v) cJSON_AddItemToObject(b, keys[i], cJSON_Duplicate(v, 1));
    }
    return b;
}

/* Runs scenario k and returns its record line, '\n' included (the caller
 * frees it). Never fails: a scenario that cannot run is a record with
 * status "error" and the message. */
static char *scenario_record(const sweep_spec *s, int64_t k, const hw_db *db,
                             cli_search_cache *cache, digest_cache *dc)
{
    cli_opts so;
    sweep_scenario(s, k, &so);
    char id[17];
    sweep_scenario_id(s, k, id);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "index", (double)k);
    cJSON_AddNumberToObject(j, "count", (double)s->count);
    cJSON_AddStringToObject(j, "id", id);
    cJSON *sc = cJSON_AddObjectToObject(j, "scenario");
    cJSON_AddStringToObject(sc, "model", so.model);
    cJSON_AddStringToObject(sc, "system", so.system);
    cJSON_AddStringToObject(sc, "gpus", so.gpus_arg);
    cJSON_AddNumberToObject(sc, "seq_length", (double)so.seq_length);
    cJSON_AddNumberToObject(sc, "global_batch_size", (double)so.gbs);
    cJSON_AddStringToObject(sc, "precision", hw_dtype_names[so.precision]);
    if (so.tokens > 0) cJSON_AddNumberToObject(sc, "tokens", so.tokens);
    else cJSON_AddNullToObject(sc, "tokens");
    if (so.price > 0) cJSON_AddNumberToObject(sc, "price_usd_per_gpu_hour", so.price);
    else cJSON_AddNullToObject(sc, "price_usd_per_gpu_hour");
    cJSON *opts = s->options_json[0] ? cJSON_Parse(s->options_json) : NULL;
    cJSON_AddItemToObject(sc, "options", opts ? opts : cJSON_CreateObject());
    cJSON_AddStringToObject(j, "version", TRAINPLAN_VERSION);

    cli_search cs;
    search_answer ans;
    memset(&ans, 0, sizeof ans);
    tp_err e = {0};
    int rc = cli_search_open(&so, db, cache, &cs, &e);
    if (rc == TP_OK) {
        cJSON_AddItemToObject(j, "inputs", inputs_json(&so, &cs, dc));
        rc = search_run(&cs.q, &ans, &e);
    } else {
        cJSON_AddNullToObject(j, "inputs");
    }
    if (rc == TP_OK) {
        cJSON *sr = cli_search_json(&cs, &ans, 0);
        cJSON_AddStringToObject(j, "status", ans.n_ranked ? "ok" : "infeasible");
        cJSON_AddItemToObject(j, "best", best_json(sr));
        cJSON_AddItemToObject(j, "search", sr);
    } else {
        cJSON_AddStringToObject(j, "status", "error");
        cJSON_AddStringToObject(j, "error", e.msg);
        cJSON_AddNullToObject(j, "best");
        cJSON_AddNullToObject(j, "search");
    }
    search_answer_free(&ans);
    cli_search_close(&cs);
    char *t = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    size_t n = strlen(t);
    char *line = tp_xmalloc(n + 2);
    memcpy(line, t, n);
    line[n] = '\n';
    line[n + 1] = '\0';
    cJSON_free(t);
    return line;
}

/* ---- writing ------------------------------------------------------------- */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) { stop_signal = sig; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One write() of the whole line (looping only on a short write), then
 * fsync where the output is a file. */
static int write_record(int fd, int sync, const char *line, const char *path,
                        tp_err *e)
{
    size_t n = strlen(line), off = 0;
    while (off < n) {
        ssize_t w = write(fd, line + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            return tp_errf(e, TP_EIO, "%s: write failed: %s", path,
                           strerror(errno));
        off += (size_t)w;
    }
    if (sync && fsync(fd) != 0)
        return tp_errf(e, TP_EIO, "%s: fsync failed: %s", path, strerror(errno));
    return TP_OK;
}

typedef struct progress {
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
    fprintf(stderr, "\rsweep: %lld/%lld scenarios, %.1f/s, %.0f s left   %s",
            (long long)p->done, (long long)p->total, rate, left, last ? "\n" : "");
    fflush(stderr);
}

/* The output: -o FILE (resumed or started afresh) or stdout. *done is
 * how many of want[0..n) it already holds. */
static int open_output(const cli_opts *o, const sweep_key *want, int64_t n,
                       int *fd, int64_t *done, tp_err *e)
{
    const char *path = o->out_dir;
    *done = 0;
    if (!path || !strcmp(path, "-")) {
        if (o->resume)
            return tp_errf(e, TP_EUSAGE, "sweep --resume needs -o FILE");
        *fd = STDOUT_FILENO;
        return TP_OK;
    }
    *fd = open(path, O_RDWR | O_CREAT | (o->resume ? 0 : O_TRUNC), 0644);
    if (*fd < 0)
        return tp_errf(e, TP_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (!o->resume) return TP_OK;
    struct stat st;
    if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(*fd);
        return tp_errf(e, TP_EIO, "%s: --resume needs a regular file", path);
    }
    char *buf = tp_xmalloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = read(*fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    size_t keep = 0;
    *done = sweep_resume_scan(buf, got, want, n, &keep);
    free(buf);
    if (keep < (size_t)st.st_size) {
        fprintf(stderr, "trainplan: %s: keeping %lld complete records, cutting "
                        "%lld bytes after them\n",
                path, (long long)*done, (long long)((size_t)st.st_size - keep));
        if (ftruncate(*fd, (off_t)keep) != 0) {
            close(*fd);
            return tp_errf(e, TP_EIO, "%s: cannot truncate: %s", path,
                           strerror(errno));
        }
    }
    if (lseek(*fd, 0, SEEK_END) < 0) {
        close(*fd);
        return tp_errf(e, TP_EIO, "%s: cannot seek: %s", path, strerror(errno));
    }
    return TP_OK;
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
                      int fd, int sync, const char *path, progress *pg,
                      tp_err *e)
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
            rc = write_record(fd, sync, pending[wpos], path, e);
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
                       const hw_db *db, cli_search_cache *cache,
                       digest_cache *dc)
{
    MPI_Send(NULL, 0, MPI_CHAR, 0, TAG_READY, MPI_COMM_WORLD);
    for (;;) {
        MPI_Status st;
        int64_t pos = 0;
        mpi_wait_probe(0, &st);
        MPI_Recv(&pos, 1, MPI_INT64_T, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG != TAG_WORK) break;
        char *line = scenario_record(s, list[pos], db, cache, dc);
        size_t n = strlen(line);
        char *msg = tp_xmalloc(n + 8);
        memcpy(msg, &pos, 8);
        memcpy(msg + 8, line, n);
        MPI_Send(msg, (int)(n + 8), MPI_CHAR, 0, TAG_RESULT, MPI_COMM_WORLD);
        free(msg);
        free(line);
    }
}

/* Launched by mpirun (Open MPI, or a PMI launcher such as srun)? */
static int under_mpi(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE")
           || getenv("PMIX_RANK");
}
#endif

static void print_report(const char *path, const char *rep)
{
    for (const char *l = rep; *l;) {
        const char *nl = strchr(l, '\n');
        int n = nl ? (int)(nl - l) : (int)strlen(l);
        fprintf(stderr, "trainplan: %s: %.*s\n", path, n, l);
        l += n + (nl ? 1 : 0);
    }
}

int cmd_sweep(const cli_opts *o, cli_out *out, tp_err *e)
{
    (void)out; /* -o is the sweep's own file (out_dir): appended, resumable */
    int rank = 0, nranks = 1, rc;
#ifdef TRAINPLAN_MPI
    int mpi = under_mpi();
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
    static cli_search_cache cache; /* large: not on the stack */
    memset(&cache, 0, sizeof cache);
    int fd = -1;
    char *text = NULL, *rep = NULL;
    size_t len = 0;
    hw_db *db = cli_open_hwdb(o, e);
    if (!db) {
        rc = e->status ? e->status : TP_EDATA;
        goto done;
    }
    if ((rc = tp_read_file(spec_path, TP_JSON_MAX_BYTES, &text, &len, e))) goto done;
    rc = sweep_spec_parse(spec_path, text, len, o, db, &cache, &s, &rep, e);
    if (rc) {
        if (rep && rank == 0) print_report(spec_path, rep);
        goto done;
    }
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
            want[j].check = expected_check(&s, list[j], db, &cache, &dc);
    }
#ifdef TRAINPLAN_MPI
    if (rank != 0) {
        mpi_worker(&s, list, db, &cache, &dc);
        rc = TP_OK;
        goto done;
    }
#endif
    int64_t start = 0;
    int orc = open_output(o, want, n, &fd, &start, e);
    const char *path = o->out_dir ? o->out_dir : "standard output";
    struct stat fst;
    int sync = fd >= 0 && fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode);

    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    stop_signal = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    progress pg = {o->progress || isatty(STDERR_FILENO), start, n, start, now_s(), 0};
    double t0 = now_s();
    if (start > 0 && start < n)
        fprintf(stderr, "trainplan: resuming at scenario %lld of %lld\n",
                (long long)start + 1, (long long)n);
    rc = orc;
#ifdef TRAINPLAN_MPI
    if (nranks > 1) {
        /* The master still answers every worker when it cannot write. */
        int mrc = mpi_master(nranks, list, n, orc ? n : start, fd, sync, path,
                             &pg, e);
        if (!rc) rc = mrc;
    } else
#endif
    {
        for (int64_t j = start; !rc && j < n && !stop_signal; j++) {
            char *line = scenario_record(&s, list[j], db, &cache, &dc);
            rc = write_record(fd, sync, line, path, e);
            free(line);
            pg.done = j + 1;
            progress_tick(&pg, 0);
        }
    }
    if (pg.on && !orc) progress_tick(&pg, 1);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (!rc) {
        double dt = now_s() - t0;
        (void)nranks;
        if (pg.done < n && stop_signal)
            rc = tp_errf(e, stop_signal == SIGINT ? SWEEP_EXIT_SIGINT
                                                  : SWEEP_EXIT_SIGTERM,
                         "sweep stopped by %s after %lld of %lld scenarios "
                         "(%.1f s); rerun with --resume to finish",
                         stop_signal == SIGINT ? "SIGINT" : "SIGTERM",
                         (long long)pg.done, (long long)n, dt);
        else if (pg.on || o->progress)
            fprintf(stderr, "trainplan: sweep: %lld scenarios (%lld run) in "
                            "%.2f s, %.1f scenarios/s\n",
                    (long long)n, (long long)(n - start), dt,
                    dt > 0 ? (double)(n - start) / dt : 0);
    }
done:
    if (fd > STDOUT_FILENO && close(fd) != 0 && !rc)
        rc = tp_errf(e, TP_EIO, "%s: close failed: %s", o->out_dir,
                     strerror(errno));
    digest_cache_free(&dc);
    cli_search_cache_free(&cache);
    free(list);
    free(want);
    free(rep);
    free(text);
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

/* ---- merge ----------------------------------------------------------------- */

typedef struct merge_line {
    sweep_key k;
    const char *text;
    size_t len;
    int file, line;
} merge_line;

static int cmp_merge(const void *a, const void *b)
{
    const merge_line *x = a, *y = b;
    if (x->k.index != y->k.index) return x->k.index < y->k.index ? -1 : 1;
    if (x->file != y->file) return x->file - y->file;
    return x->line - y->line;
}

int cmd_merge(const cli_opts *o, cli_out *out, tp_err *e)
{
    int nf = o->npos, rc = TP_OK;
    char **buf = tp_xcalloc((size_t)nf, sizeof *buf);
    merge_line *all = NULL;
    int64_t n = 0, cap = 0, count = -1;
    for (int f = 0; f < nf && !rc; f++) {
        size_t len, *st, *ln, tail;
        if ((rc = tp_read_file(o->pos[f], (size_t)1 << 34, &buf[f], &len, e))) break;
        int nl = sweep_split_lines(buf[f], len, &st, &ln, &tail);
        if (tail)
            rc = tp_errf(e, TP_EDATA,
                         "%s: the last line (line %d) is incomplete, a write "
                         "cut short; rerun that sweep with --resume",
                         o->pos[f], nl + 1);
        for (int i = 0; i < nl && !rc; i++) {
            merge_line m = {{0}, buf[f] + st[i], ln[i], f, i + 1};
            if (!sweep_record_key(m.text, m.len, &m.k))
                rc = tp_errf(e, TP_EDATA, "%s:%d: not a sweep record", o->pos[f],
                             i + 1);
            else if (count >= 0 && m.k.count != count)
                rc = tp_errf(e, TP_EDATA,
                             "%s:%d: a record of a sweep of %lld scenarios, "
                             "others are of %lld: shards of different specs",
                             o->pos[f], i + 1, (long long)m.k.count,
                             (long long)count);
            count = m.k.count;
            if (n == cap) {
                cap = cap ? 2 * cap : 256;
                all = tp_xrealloc(all, (size_t)cap * sizeof *all);
            }
            all[n++] = m;
        }
        free(st);
        free(ln);
    }
    if (!rc && n == 0) rc = tp_errf(e, TP_EDATA, "merge: no records in the inputs");
    if (!rc) qsort(all, (size_t)n, sizeof *all, cmp_merge);
    int64_t w = 0, missing = 0, first_missing = -1;
    for (int64_t i = 0; i < n && !rc; i++) {
        const merge_line *m = &all[i];
        if (w > 0 && all[w - 1].k.index == m->k.index) {
            const merge_line *p = &all[w - 1];
            if (p->len != m->len || memcmp(p->text, m->text, m->len))
                rc = tp_errf(e, TP_EDATA,
                             "scenario %lld: %s:%d and %s:%d differ (a conflict: "
                             "shards of different nights or versions?)",
                             (long long)m->k.index, o->pos[p->file], p->line,
                             o->pos[m->file], m->line);
            else
                fprintf(stderr, "trainplan: merge: scenario %lld is in %s:%d "
                                "and %s:%d (identical; kept once)\n",
                        (long long)m->k.index, o->pos[p->file], p->line,
                        o->pos[m->file], m->line);
            continue;
        }
        int64_t expect = w > 0 ? all[w - 1].k.index + 1 : 0;
        if (m->k.index > expect) {
            if (first_missing < 0) first_missing = expect;
            missing += m->k.index - expect;
        }
        all[w++] = *m;
    }
    if (!rc && w > 0 && all[w - 1].k.index < count - 1) {
        if (first_missing < 0) first_missing = all[w - 1].k.index + 1;
        missing += count - 1 - all[w - 1].k.index;
    }
    if (!rc && missing)
        rc = tp_errf(e, TP_EDATA,
                     "merge: %lld of %lld scenarios missing (the first: %lld); "
                     "is a shard missing or unfinished?",
                     (long long)missing, (long long)count, (long long)first_missing);
    for (int64_t i = 0; i < w && !rc; i++) {
        fwrite(all[i].text, 1, all[i].len, out->f);
        fputc('\n', out->f);
    }
    free(all);
    for (int f = 0; f < nf; f++) free(buf[f]);
    free(buf);
    return rc;
}
