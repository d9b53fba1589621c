/*
 * test_cache.c - the fit cache (estimator/cache.c): fits and tables read
 * back from it answer with the same bits as fitted ones; a corrupted,
 * truncated, foreign or mismatched file is ignored with one warning and
 * replaced; an edited sample file makes a new entry; writers racing in
 * two processes and in two threads leave only whole files; an unwritable
 * folder and TRAINPLAN_CACHE=off are silent.
 *
 * usage: test_cache HWDB_DIR SCRATCH_DIR
 */
#define _POSIX_C_SOURCE 200809L
#include "est_int.h"
#include "pcg32.h"
#include "tp_test.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *hwdb_dir, *scratch;
static char cache_dir[4096];

/* ---- helpers ----------------------------------------------------------- */

static void use_dir(const char *sub)
{
    snprintf(cache_dir, sizeof cache_dir, "%s/%s", scratch, sub);
    char cmd[8300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
    TP_CHECK_INT(system(cmd), 0);
    setenv("TRAINPLAN_CACHE_DIR", cache_dir, 1);
    unsetenv("TRAINPLAN_CACHE");
}

/* Names of the entries in the cache folder whose name starts with
 * prefix, into names[cap] (sorted); returns how many (temporary files
 * included: a leftover one is a bug). */
static int entries(const char *prefix, char names[][256], int cap)
{
    DIR *d = opendir(cache_dir);
    int n = 0;
    if (!d) return 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0) continue;
        if (n < cap) snprintf(names[n], 256, "%s", e->d_name);
        n++;
    }
    closedir(d);
    for (int i = 1; i < n && i < cap; i++) /* insertion sort: a handful */
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char t[256];
            memcpy(t, names[j], 256);
            memcpy(names[j], names[j - 1], 256);
            memcpy(names[j - 1], t, 256);
        }
    return n;
}

static char *slurp(const char *path, size_t *len)
{
    char *text = NULL;
    tp_err e = {0};
    if (tp_read_file(path, (size_t)1 << 30, &text, len, &e)) return NULL;
    return text;
}

static void spit(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    TP_CHECK(f != NULL);
    if (!f) return;
    TP_CHECK_INT(fwrite(p, 1, n, f), n);
    fclose(f);
}

/* stderr captured into a file between begin and end. */
static int saved_stderr = -1;
static char err_path[4200];

static void stderr_begin(void)
{
    fflush(stderr);
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", scratch);
    int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    saved_stderr = dup(2);
    dup2(fd, 2);
    close(fd);
}

static char *stderr_end(void)
{
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    size_t n;
    char *s = slurp(err_path, &n);
    return s ? s : tp_xstrdup("");
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* ---- what a fit answers ------------------------------------------------ */

#define N_PROBES 3000

/* Times of random ops of every kind on g, bits and all. */
static void probe_ops(const est_models *m, double *out)
{
    pcg32 r;
    pcg32_seed(&r, 7, 1);
    static const hw_dtype dts[] = {HW_BF16, HW_FP16, HW_FP8};
    for (int i = 0; i < N_PROBES; i++) {
        est_op op;
        memset(&op, 0, sizeof op);
        op.kind = (est_op_kind)(i % EST_OP_COUNT);
        op.dtype = dts[pcg32_bounded(&r, 3)];
        int64_t a = 64 << pcg32_bounded(&r, 8), b = 64 << pcg32_bounded(&r, 8);
        int64_t c = 64 << pcg32_bounded(&r, 8);
        op.b = 1 + pcg32_bounded(&r, 4);
        op.m = a + pcg32_bounded(&r, 64), op.n = b, op.k = c;
        op.heads = 8 << pcg32_bounded(&r, 3), op.kv_heads = op.heads;
        op.sq = op.sk = 512 << pcg32_bounded(&r, 4);
        op.head_dim = 64 << pcg32_bounded(&r, 2);
        op.causal = (int)pcg32_bounded(&r, 2);
        op.rows = a * 4 + pcg32_bounded(&r, 100), op.cols = b;
        est_time t;
        est_models_time(m, &op, &t);
        out[2 * i] = t.fwd_s;
        out[2 * i + 1] = t.bwd_s;
    }
}

static const hw_db *db(void)
{
    static hw_db *d;
    if (!d) {
        tp_err e = {0};
        const char *dirs[] = {hwdb_dir};
        d = hw_db_open_dirs(dirs, 1, &e);
        if (!d) fprintf(stderr, "%s\n", e.msg);
    }
    return d;
}

static est_models *open_ops(const hw_db *d, const char *gpu)
{
    tp_err e = {0};
    const hw_gpu *g = hw_find_gpu(d, gpu, &e);
    TP_CHECK(g != NULL);
    est_models *m = g ? est_models_open(g, 0, &e) : NULL;
    if (!m) fprintf(stderr, "%s\n", e.msg);
    return m;
}

/* Probes of gpu's fits with the cache as it is now. */
static void ops_times(const hw_db *d, const char *gpu, double *out)
{
    est_models *m = open_ops(d, gpu);
    TP_CHECK(m != NULL);
    if (!m) return;
    probe_ops(m, out);
    est_models_free(m);
}

/* Collective times on system sys over groups and sizes, and its tables'
 * counts. */
static void comm_times(const hw_db *d, const char *sys, double *out, int *n)
{
    tp_err e = {0};
    const hw_system *y = hw_find_system(d, sys, &e);
    TP_CHECK(y != NULL);
    est_comm *c = y ? est_comm_open(y, &e) : NULL;
    TP_CHECK(c != NULL);
    *n = 0;
    if (!c) return;
    for (int i = 0; i < est_comm_table_count(c); i++) {
        const est_coll_table *t = est_comm_table_at(c, i);
        out[(*n)++] = t->n_rows + 1000.0 * t->n_bad + 1e6 * t->n_points;
        out[(*n)++] = t->n_rows ? t->rows[t->n_rows / 2].time_s : -1;
        TP_CHECK(strstr(t->file, "measured") != NULL);
    }
    for (int k = 0; k < EST_COLL_COUNT; k++)
        for (int nodes = 1; nodes <= 8; nodes *= 2)
            for (int per = 1; per <= y->gpus_per_node; per *= 2)
                for (double bytes = 1e3; bytes < 1e10; bytes *= 7.3) {
                    est_group g = {per * nodes, per, nodes, 0};
                    out[(*n)++] = est_coll_time(c, y, (est_coll)k, bytes, &g);
                }
    est_comm_free(c);
}

static int same_bits(const double *a, const double *b, int n)
{
    return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

/* ---- tests ------------------------------------------------------------- */

static void test_digest(void)
{
    est_digest a, b, c;
    est_digest_init(&a);
    est_digest_init(&b);
    est_digest_str(&a, "ab");
    est_digest_str(&a, "c");
    est_digest_str(&b, "a");
    est_digest_str(&b, "bc");
    TP_CHECK(a.a != b.a || a.b != b.b);
    est_digest_init(&c);
    est_digest_str(&c, "ab");
    est_digest_str(&c, "c");
    TP_CHECK(a.a == c.a && a.b == c.b); /* deterministic */
    /* Every single-bit flip of a 100-byte input changes both lanes. */
    unsigned char buf[100];
    for (int i = 0; i < 100; i++) buf[i] = (unsigned char)(i * 37);
    est_digest ref;
    est_digest_init(&ref);
    est_digest_bytes(&ref, buf, sizeof buf);
    int same = 0;
    for (int bit = 0; bit < 800; bit++) {
        buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        est_digest d;
        est_digest_init(&d);
        est_digest_bytes(&d, buf, sizeof buf);
        same += d.a == ref.a || d.b == ref.b;
        buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    }
    TP_CHECK_INT(same, 0);
    /* A trailing NUL is content. */
    est_digest x, y;
    est_digest_init(&x);
    est_digest_init(&y);
    est_digest_bytes(&x, "x", 1);
    est_digest_bytes(&y, "x", 2);
    TP_CHECK(x.a != y.a);
}

/* Cold, warm and uncached fits answer with the same bits. */
static void test_round_trip(void)
{
    static double off[2 * N_PROBES], cold[2 * N_PROBES], warm[2 * N_PROBES];
    static double c_off[20000], c_cold[20000], c_warm[20000];
    int n_off, n_cold, n_warm;
    use_dir("round_trip");
    setenv("TRAINPLAN_CACHE", "off", 1);
    ops_times(db(), "a100-40gb", off); /* models_like a100-80gb */
    comm_times(db(), "perlmutter", c_off, &n_off);
    char names[8][256];
    TP_CHECK_INT(entries("", names, 8), 0); /* off: nothing written */
    unsetenv("TRAINPLAN_CACHE");
    stderr_begin();
    ops_times(db(), "a100-40gb", cold);
    comm_times(db(), "perlmutter", c_cold, &n_cold);
    TP_CHECK_INT(entries("ops-a100-80gb-", names, 8), 1);
    TP_CHECK_INT(entries("comm-perlmutter-", names, 8), 1);
    TP_CHECK_INT(entries("", names, 8), 2);
    ops_times(db(), "a100-40gb", warm);
    comm_times(db(), "perlmutter", c_warm, &n_warm);
    char *err = stderr_end();
    TP_CHECK_STR(err, ""); /* no warning on a good cache */
    free(err);
    TP_CHECK(same_bits(off, cold, 2 * N_PROBES));
    TP_CHECK(same_bits(off, warm, 2 * N_PROBES));
    TP_CHECK_INT(n_cold, n_off);
    TP_CHECK_INT(n_warm, n_off);
    TP_CHECK(n_off > 100);
    TP_CHECK(same_bits(c_off, c_warm, n_off));
    TP_CHECK(same_bits(c_off, c_cold, n_off));
    /* The sample counts come back too (op show prints them). */
    est_models *m = open_ops(db(), "a100-80gb");
    TP_CHECK(m && est_models_samples(m, EST_OP_GEMM, HW_FP16, 0) > 100);
    est_models_free(m);
    TP_CHECK_INT(entries("", names, 8), 2); /* the same entry for both */
    /* A GPU without samples and a system without tables have nothing to
     * keep: no entry. */
    static double h[2 * N_PROBES];
    ops_times(db(), "mi250x", h);
    ops_times(db(), "mi250x", h);
    comm_times(db(), "jean-zay-a100", c_cold, &n_cold);
    TP_CHECK_INT(entries("", names, 8), 2);
}

/* The file of the one ops entry in the current folder. */
static int ops_file(char *path, size_t cap)
{
    char names[4][256];
    if (entries("ops-a100-80gb-", names, 4) != 1) return -1;
    snprintf(path, cap, "%s/%s", cache_dir, names[0]);
    return 0;
}

/* What happens to one damaged file: the probes still answer the same
 * bits, one warning line names the file and the reason, and a good file
 * replaces it (no warning the next time). */
static void damaged(const char *what, const double *ref,
                    void (*damage)(const char *path))
{
    static double got[2 * N_PROBES];
    char path[4400];
    TP_CHECK(ops_file(path, sizeof path) == 0);
    damage(path);
    stderr_begin();
    ops_times(db(), "a100-40gb", got);
    char *err = stderr_end();
    TP_CHECK(same_bits(ref, got, 2 * N_PROBES));
    TP_CHECK_INT(count_lines(err), 1);
    TP_CHECK_CONTAINS(err, "warning: fit cache");
    TP_CHECK_CONTAINS(err, path);
    TP_CHECK_CONTAINS(err, what);
    free(err);
    stderr_begin();
    ops_times(db(), "a100-40gb", got);
    err = stderr_end();
    TP_CHECK_STR(err, "");
    TP_CHECK(same_bits(ref, got, 2 * N_PROBES));
    free(err);
    char names[4][256];
    TP_CHECK_INT(entries("", names, 4), 1); /* no temporary left */
}

static void flip_payload_byte(const char *path)
{
    size_t n;
    char *s = slurp(path, &n);
    s[n / 2] ^= 0x10;
    spit(path, s, n);
    free(s);
}

static void truncate_half(const char *path)
{
    size_t n;
    char *s = slurp(path, &n);
    spit(path, s, n / 2);
    free(s);
}

static void truncate_header(const char *path)
{
    spit(path, "TPFIT", 5);
}

static void foreign_text(const char *path)
{
    const char *t = "gemm,1,2,3\nnot a cache file at all, but long enough to "
                    "have a header's worth of bytes in it\n";
    spit(path, t, strlen(t));
}

/* A whole, well-formed entry of another key (the comm entry's) under the
 * ops entry's name. */
static void other_key(const char *path)
{
    char names[4][256], other[4400];
    TP_CHECK_INT(entries("comm-perlmutter-", names, 4), 1);
    snprintf(other, sizeof other, "%s/%s", cache_dir, names[0]);
    size_t n;
    char *s = slurp(other, &n);
    spit(path, s, n);
    free(s);
    unlink(other); /* so the folder holds one file again */
}

static void other_format(const char *path)
{
    size_t n;
    char *s = slurp(path, &n);
    s[8] ^= 0x7f; /* the format number */
    spit(path, s, n);
    free(s);
}

/* A payload that is well sealed (its checksum matches) but says what no
 * writer writes: a fit's dimension count out of range. The parser must
 * not trust the seal. */
static void bad_payload(const char *path)
{
    size_t n;
    char *s = slurp(path, &n);
    unsigned char *p = (unsigned char *)s + 64;
    /* payload: n_slots, then slot, n_samples, has, then the fit: kind,
     * nfeat, ndims */
    int32_t nd = 99;
    memcpy(p + 4 * 6, &nd, 4);
    est_digest sum;
    est_digest_init(&sum);
    est_digest_bytes(&sum, p, n - 64);
    memcpy(s + 40, &sum.a, 8);
    memcpy(s + 48, &sum.b, 8);
    spit(path, s, n);
    free(s);
}

static void test_damaged(void)
{
    static double ref[2 * N_PROBES];
    use_dir("damaged");
    setenv("TRAINPLAN_CACHE", "off", 1);
    ops_times(db(), "a100-40gb", ref);
    unsetenv("TRAINPLAN_CACHE");
    ops_times(db(), "a100-40gb", ref); /* fills the cache */
    damaged("checksum", ref, flip_payload_byte);
    damaged("truncated", ref, truncate_half);
    damaged("truncated", ref, truncate_header);
    damaged("not a trainplan fit cache file", ref, foreign_text);
    static double c[20000];
    int nc;
    comm_times(db(), "perlmutter", c, &nc); /* a comm entry to copy */
    damaged("its key is not the one its name says", ref, other_key);
    damaged("cache format", ref, other_format);
    damaged("dimension count out of range", ref, bad_payload);
}

/* An edited sample file is a new key: its entry sits beside the old one,
 * and the fits follow the edit. */
static void test_key_follows_content(void)
{
    char copy[4400], cmd[9000];
    snprintf(copy, sizeof copy, "%s/hwdb_copy", scratch);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -R '%s' '%s'", copy, hwdb_dir,
             copy);
    TP_CHECK_INT(system(cmd), 0);
    use_dir("content");
    static double a[2 * N_PROBES], b[2 * N_PROBES], c[2 * N_PROBES];
    const char *dirs[] = {copy};
    tp_err e = {0};
    hw_db *d = hw_db_open_dirs(dirs, 1, &e);
    TP_CHECK(d != NULL);
    if (!d) return;
    ops_times(d, "a100-80gb", a);
    char names[4][256];
    TP_CHECK_INT(entries("ops-a100-80gb-", names, 4), 1);
    /* Every GELU sample 30 % slower. */
    const hw_gpu *g = hw_find_gpu(d, "a100-80gb", &e);
    const char *path = NULL;
    for (int i = 0; g && i < g->n_measured; i++)
        if (strcmp(g->measured[i].op, "gelu") == 0) path = g->measured[i].path;
    TP_CHECK(path != NULL);
    est_sample *s = NULL;
    int n = 0;
    TP_CHECK_INT(est_read_samples(path, "gelu", HW_FP16, &s, &n, &e), TP_OK);
    size_t len;
    char *text = slurp(path, &len);
    TP_CHECK(text != NULL && n > 10);
    /* Appending a blank line changes the content, not the samples: a new
     * key, the same fits. */
    FILE *f = fopen(path, "ab");
    fputs("\n", f);
    fclose(f);
    ops_times(d, "a100-80gb", b);
    TP_CHECK_INT(entries("ops-a100-80gb-", names, 4), 2);
    TP_CHECK(same_bits(a, b, 2 * N_PROBES));
    /* A changed first sample's time: a third entry, different fits. */
    char *nl = strchr(text, '\n');
    char *row_end = nl ? strchr(nl + 1, '\n') : NULL;
    TP_CHECK(row_end != NULL);
    if (row_end) {
        /* the row's last digit before its end, changed */
        char *q = row_end - 1;
        while (q > nl && !(*q >= '0' && *q <= '9')) q--;
        *q = *q == '9' ? '1' : (char)(*q + 1);
        spit(path, text, len);
        ops_times(d, "a100-80gb", c);
        TP_CHECK_INT(entries("ops-a100-80gb-", names, 4), 3);
        TP_CHECK(!same_bits(a, c, 2 * N_PROBES));
    }
    free(text);
    free(s);
    hw_db_free(d);
}

/* Writers in two processes and a reader in a third, each storing its own
 * payload under one key many times: every read sees a whole payload of
 * one of them, never a torn or half-written file, and no warning. */
#define RACE_ROUNDS 200

static void race_payload(int who, est_wbuf *b)
{
    /* Different lengths, so a torn file would show. */
    for (int i = 0; i < 5000 + 3000 * who; i++) est_w_i32(b, who * 1000003 + i);
}

static int race_check(const est_cache_entry *ent)
{
    const unsigned char *p = ent->data + ent->off;
    int32_t first;
    memcpy(&first, p, 4);
    int who = first / 1000003;
    if (who < 0 || who > 1 || ent->n != (size_t)(5000 + 3000 * who) * 4) return -1;
    for (size_t i = 0; i < ent->n / 4; i++) {
        int32_t v;
        memcpy(&v, p + 4 * i, 4);
        if (v != who * 1000003 + (int32_t)i) return -1;
    }
    return who;
}

static void test_race_processes(void)
{
    use_dir("race");
    est_digest key;
    TP_CHECK_INT(est_cache_key(&key, "race", "test", 0), 0);
    pid_t kids[3];
    for (int k = 0; k < 3; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            int bad = 0;
            if (k < 2) {
                est_wbuf b = {0};
                race_payload(k, &b);
                for (int r = 0; r < RACE_ROUNDS; r++) est_cache_put("race", "test", &key, &b);
                free(b.p);
            } else {
                for (int r = 0; r < 4 * RACE_ROUNDS; r++) {
                    est_cache_entry ent;
                    if (est_cache_get("race", "test", &key, &ent)) {
                        bad += race_check(&ent) < 0;
                        est_cache_entry_free(&ent);
                    }
                }
            }
            _exit(bad ? 1 : 0);
        }
    }
    stderr_begin();
    for (int k = 0; k < 3; k++) {
        int st = -1;
        waitpid(kids[k], &st, 0);
        TP_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    char *err = stderr_end();
    TP_CHECK_STR(err, "");
    free(err);
    est_cache_entry ent;
    TP_CHECK_INT(est_cache_get("race", "test", &key, &ent), 1);
    TP_CHECK(race_check(&ent) >= 0);
    est_cache_entry_free(&ent);
    char names[4][256];
    TP_CHECK_INT(entries("", names, 4), 1); /* no temporary left behind */
}

/* Two threads opening the same GPU's models on a cold cache: both fit,
 * both store, both answer the same bits as the warm entry after. */
typedef struct race_arg {
    double *out;
} race_arg;

static void *race_thread(void *p)
{
    race_arg *a = p;
    ops_times(db(), "a100-40gb", a->out);
    return NULL;
}

static void test_race_threads(void)
{
    static double x[2 * N_PROBES], y[2 * N_PROBES], z[2 * N_PROBES];
    use_dir("race_threads");
    race_arg ax = {x}, ay = {y};
    pthread_t tx, ty;
    stderr_begin();
    pthread_create(&tx, NULL, race_thread, &ax);
    pthread_create(&ty, NULL, race_thread, &ay);
    pthread_join(tx, NULL);
    pthread_join(ty, NULL);
    ops_times(db(), "a100-40gb", z);
    char *err = stderr_end();
    TP_CHECK_STR(err, "");
    free(err);
    TP_CHECK(same_bits(x, y, 2 * N_PROBES));
    TP_CHECK(same_bits(x, z, 2 * N_PROBES));
    char names[4][256];
    TP_CHECK_INT(entries("", names, 4), 1);
}

/* A folder that cannot be made or written: silent, and the fits the same. */
static void test_unwritable(void)
{
    static double ref[2 * N_PROBES], got[2 * N_PROBES];
    use_dir("unwritable");
    setenv("TRAINPLAN_CACHE", "off", 1);
    ops_times(db(), "a100-40gb", ref);
    unsetenv("TRAINPLAN_CACHE");
    /* A regular file where the folder should be: nothing can be made in
     * it, whoever runs the test (root ignores permission bits). */
    spit(cache_dir, "x", 1);
    stderr_begin();
    ops_times(db(), "a100-40gb", got);
    char *err = stderr_end();
    TP_CHECK_STR(err, "");
    free(err);
    TP_CHECK(same_bits(ref, got, 2 * N_PROBES));
    unlink(cache_dir);
    /* No folder at all: no $HOME, no $XDG_CACHE_HOME, no
     * $TRAINPLAN_CACHE_DIR. */
    char *home = getenv("HOME") ? tp_xstrdup(getenv("HOME")) : NULL;
    char *xdg = getenv("XDG_CACHE_HOME") ? tp_xstrdup(getenv("XDG_CACHE_HOME")) : NULL;
    unsetenv("TRAINPLAN_CACHE_DIR");
    unsetenv("HOME");
    setenv("XDG_CACHE_HOME", "relative/is/ignored", 1);
    char buf[4096];
    TP_CHECK_INT(est_cache_dir(buf, sizeof buf), -1);
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    TP_CHECK_INT(est_cache_dir(buf, sizeof buf), 0);
    TP_CHECK_STR(buf, "/xdg/trainplan");
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/home/someone", 1);
    TP_CHECK_INT(est_cache_dir(buf, sizeof buf), 0);
    TP_CHECK_STR(buf, "/home/someone/.cache/trainplan");
    setenv("TRAINPLAN_CACHE", "OFF", 1);
    TP_CHECK_INT(est_cache_dir(buf, sizeof buf), -1);
    unsetenv("TRAINPLAN_CACHE");
    est_cache_enable(0);
    TP_CHECK_INT(est_cache_dir(buf, sizeof buf), -1);
    est_cache_enable(1);
    if (home) setenv("HOME", home, 1);
    if (xdg) setenv("XDG_CACHE_HOME", xdg, 1);
    free(home);
    free(xdg);
    setenv("TRAINPLAN_CACHE_DIR", cache_dir, 1);
}

/* Every shipped GPU's fits and system's tables, at both keep_bad
 * settings, written and parsed back: none refused (a bound of the
 * reader that a real fit breaks would warn and refit on every start),
 * and the same bits out. */
static void test_every_payload(void)
{
    static double a[2 * N_PROBES], b[2 * N_PROBES], ca[20000], cb[20000];
    est_cache_enable(0);
    const hw_db *d = db();
    int fits = 0, tables = 0;
    for (int keep_bad = 0; keep_bad < 2; keep_bad++) {
        for (int i = 0; i < hw_gpu_count(d); i++) {
            const hw_gpu *g = hw_gpu_at(d, i);
            if (g->models_like) continue; /* the fits of another */
            tp_err e = {0};
            est_models *m = est_models_open(g, keep_bad, &e);
            TP_CHECK(m != NULL);
            if (!m) continue;
            est_wbuf w = {0};
            est_models_payload(m, &w);
            char why[200] = "";
            est_models *back = est_models_from_payload(g, w.p, w.n, why, sizeof why);
            if (!back) fprintf(stderr, "%s: %s\n", g->name, why);
            TP_CHECK(back != NULL);
            if (back) {
                probe_ops(m, a);
                probe_ops(back, b);
                TP_CHECK(same_bits(a, b, 2 * N_PROBES));
                fits++;
            }
            free(w.p);
            est_models_free(back);
            est_models_free(m);
        }
        for (int i = 0; i < hw_system_count(d); i++) {
            const hw_system *y = hw_system_at(d, i);
            tp_err e = {0};
            est_comm *c = est_comm_load(y, keep_bad, &e);
            TP_CHECK(c != NULL);
            if (!c || est_comm_table_count(c) == 0) {
                est_comm_free(c);
                continue;
            }
            est_wbuf w = {0};
            est_comm_payload(c, &w);
            char why[200] = "";
            est_comm *back = est_comm_from_payload(y, w.p, w.n, why, sizeof why);
            if (!back) fprintf(stderr, "%s: %s\n", y->name, why);
            TP_CHECK(back != NULL);
            if (back) {
                int n = 0, k = 0;
                for (int t = 0; t < est_comm_table_count(c); t++) {
                    const est_coll_table *x = est_comm_table_at(c, t);
                    const est_coll_table *z = est_comm_table_at(back, t);
                    TP_CHECK(z && x->file == z->file && x->n_rows == z->n_rows
                             && x->n_bad == z->n_bad && x->n_points == z->n_points);
                    for (double bytes = 1e3; bytes < 1e10; bytes *= 3.7) {
                        est_group g = {x->nodes * x->per_node, x->per_node, x->nodes, 0};
                        ca[n++ % 20000] = est_coll_time(c, y, x->kind, bytes, &g);
                        cb[k++ % 20000] = est_coll_time(back, y, x->kind, bytes, &g);
                    }
                }
                TP_CHECK(same_bits(ca, cb, n < 20000 ? n : 20000));
                tables++;
            }
            free(w.p);
            est_comm_free(back);
            est_comm_free(c);
        }
    }
    est_cache_enable(1);
    TP_CHECK(fits >= 12);  /* A100, H100, B200, GB200, GH200, MI300X... x 2 */
    TP_CHECK(tables >= 16); /* 8 systems with tables x 2 */
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_cache HWDB_DIR SCRATCH_DIR\n");
        return 64;
    }
    hwdb_dir = argv[1];
    scratch = argv[2];
    mkdir(scratch, 0755);
    /* Before any thread exists: the racers are forked. */
    TP_RUN(test_race_processes);
    TP_RUN(test_digest);
    TP_RUN(test_round_trip);
    TP_RUN(test_damaged);
    TP_RUN(test_key_follows_content);
    TP_RUN(test_race_threads);
    TP_RUN(test_unwritable);
    TP_RUN(test_every_payload);
    return TP_TEST_EXIT();
}
