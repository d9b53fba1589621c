/*
 * cache.c - the fit cache: what est_models_open fits (every operator
 * model of a GPU) and what est_comm_load builds (every measured
 * collective table of a system) kept in a per-user folder, so that a
 * process that starts again does not refit. Fitting the A100 samples
 * (the bandwidth choice's leave-one-out kernel sums, fit.c) is most of a
 * cold start; a warm one reads one file per GPU and per system.
 *
 * Where: $TRAINPLAN_CACHE_DIR, else $XDG_CACHE_HOME/trainplan (an
 * absolute one, as the XDG Base Directory specification asks), else
 * ~/.cache/trainplan. TRAINPLAN_CACHE=off (or 0, no, false) turns it off;
 * so does est_cache_enable(0).
 *
 * The key of an entry digests everything its fit reads and everything
 * that fits with: the content of the GPU's or system's hwdb files and of
 * every measured file it lists (models.c and comm.c say which), the
 * program's version, EST_CACHE_FORMAT, and the build (a digest of the
 * sources of estimator/ and hwdb/, the compiler and its flags, written by
 * estimator/build_digest.cmake), so an edited sample file, a new release
 * or a change to the fit code each make a new entry instead of reusing a
 * stale one. The key is in the file's name, so entries of two hwdb
 * versions or two builds sit side by side.
 *
 * A file: a 64-byte header (magic, format, a byte-order mark, the key,
 * the payload's length and its digest), then the payload, host byte order
 * and the exact bits of every double, so a warm start gives the same
 * bytes out as a cold one. A file that is broken, truncated, foreign or
 * of another key is never trusted: one warning line on stderr, a refit,
 * and a fresh file over it. Files are written to a temporary name and
 * renamed: two processes filling the cache at once each rename a whole
 * file, and a reader sees one or the other.
 *
 * Not here: eviction. Entries of old builds and old hwdb contents stay
 * until the folder is removed (docs/caching.md); each is a few MB.
 */
#define _POSIX_C_SOURCE 200809L
#include "est_int.h"
#include "est_build.h" /* EST_BUILD_DIGEST, EST_CACHE_VERSION */

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* The layout of the cache file and of its payloads: raise it whenever
 * what est_fit_write, models.c or comm.c write changes. (A change to the
 * fit code changes EST_BUILD_DIGEST by itself.) */
#define EST_CACHE_FORMAT 1

#define HEADER_BYTES 64
#define CACHE_MAX_BYTES ((size_t)1 << 30)
static const char magic[8] = {'T', 'P', 'F', 'I', 'T', 'C', 'A', 'C'};
#define BYTE_ORDER_MARK 0x01020304u

/* ---- the digest --------------------------------------------------------
 *
 * Two 64-bit lanes over the input's 8-byte words, each step a bijection
 * of the lane for a given word (xor or add, rotate, multiply by an odd
 * constant), finished by splitmix64's mixer (Steele, Lea and Flood, "Fast
 * splittable pseudorandom number generators", OOPSLA 2014; its constants
 * are Stafford's "Mix13"). About 1.5 bytes a cycle: the A100's 2 MB of
 * samples and tables in well under a millisecond. */

#define K1 0x9e3779b97f4a7c15ull /* 2^64 / the golden ratio, odd */
#define K2 0xc2b2ae3d27d4eb4full /* an odd constant of mixed bits */

static uint64_t rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void est_digest_init(est_digest *d)
{
    d->a = K1;
    d->b = K2;
}

void est_digest_bytes(est_digest *d, const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t a = d->a ^ mix64((uint64_t)n), b = d->b + (uint64_t)n;
    for (; n >= 8; s += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        a = rotl64(a ^ w, 29) * K1;
        b = rotl64((b + w) * K2, 31);
    }
    uint64_t w = 0;
    if (n) memcpy(&w, s, n);
    w ^= (uint64_t)(n + 1) << 56; /* the tail's length: "x" vs "x\0" */
    a = rotl64(a ^ w, 29) * K1;
    b = rotl64((b + w) * K2, 31);
    d->a = mix64(a ^ rotl64(b, 23));
    d->b = mix64(b + d->a);
}

void est_digest_str(est_digest *d, const char *s)
{
    static const unsigned char none = 0xff; /* not a string's content */
    if (s)
        est_digest_bytes(d, s, strlen(s));
    else
        est_digest_bytes(d, &none, 1);
}

void est_digest_int(est_digest *d, int64_t v)
{
    est_digest_bytes(d, &v, sizeof v);
}

int est_digest_file(est_digest *d, const char *path)
{
    char *text;
    size_t len;
    tp_err e = {0};
    if (!path || tp_read_file(path, CACHE_MAX_BYTES, &text, &len, &e)) return -1;
    est_digest_bytes(d, text, len);
    free(text);
    return 0;
}

/* ---- where ------------------------------------------------------------ */

static atomic_int cache_enabled = 1;

void est_cache_enable(int on)
{
    atomic_store(&cache_enabled, on ? 1 : 0);
}

static int env_off(const char *v)
{
    return v && (strcasecmp(v, "off") == 0 || strcmp(v, "0") == 0
                 || strcasecmp(v, "no") == 0 || strcasecmp(v, "false") == 0);
}

int est_cache_dir(char *buf, size_t cap)
{
    if (!atomic_load(&cache_enabled) || env_off(getenv("TRAINPLAN_CACHE")))
        return -1;
    const char *d = getenv("TRAINPLAN_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"),
               *h = getenv("HOME");
    int n;
    if (d && d[0])
        n = snprintf(buf, cap, "%s", d);
    else if (x && x[0] == '/')
        n = snprintf(buf, cap, "%s/trainplan", x);
    else if (h && h[0])
        n = snprintf(buf, cap, "%s/.cache/trainplan", h);
    else
        return -1;
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

int est_cache_key(est_digest *key, const char *kind, const char *name,
                  int keep_bad)
{
    char dir[4096];
    if (est_cache_dir(dir, sizeof dir)) return -1;
    est_digest_init(key);
    est_digest_str(key, "trainplan fit cache");
    est_digest_int(key, EST_CACHE_FORMAT);
    est_digest_str(key, EST_CACHE_VERSION);
    est_digest_str(key, EST_BUILD_DIGEST);
    est_digest_int(key, (int64_t)sizeof(void *));
    est_digest_str(key, kind);
    est_digest_str(key, name);
    est_digest_int(key, keep_bad != 0);
    return 0;
}

/* dir/KIND-NAME-KEY.fit, NAME reduced to [a-z0-9._-]. */
static int entry_path(char *buf, size_t cap, const char *dir, const char *kind,
                      const char *name, const est_digest *key)
{
    char safe[64];
    size_t i = 0;
    for (; name[i] && i + 1 < sizeof safe; i++) {
        char c = name[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'
                 || c == '.' || c == '_';
        safe[i] = ok ? c : (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : '_';
    }
    safe[i] = '\0';
    int n = snprintf(buf, cap, "%s/%s-%s-%016llx%016llx.fit", dir, kind, safe,
                     (unsigned long long)key->a, (unsigned long long)key->b);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* ---- buffers ---------------------------------------------------------- */

void est_w_bytes(est_wbuf *b, const void *x, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        b->p = tp_xrealloc(b->p, cap);
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, x, n);
    b->n += n;
}

void est_w_i32(est_wbuf *b, int32_t v)
{
    est_w_bytes(b, &v, sizeof v);
}

void est_w_f64(est_wbuf *b, double v)
{
    est_w_bytes(b, &v, sizeof v);
}

void est_w_f64s(est_wbuf *b, const double *v, size_t n)
{
    est_w_bytes(b, v, n * sizeof *v);
}

void est_r_bytes(est_rbuf *r, void *x, size_t n)
{
    if (r->bad || n > r->n - r->at) {
        r->bad = 1;
        memset(x, 0, n);
        return;
    }
    memcpy(x, r->p + r->at, n);
    r->at += n;
}

int32_t est_r_i32(est_rbuf *r)
{
    int32_t v;
    est_r_bytes(r, &v, sizeof v);
    return v;
}

double est_r_f64(est_rbuf *r)
{
    double v;
    est_r_bytes(r, &v, sizeof v);
    return v;
}

void est_r_f64s(est_rbuf *r, double *v, size_t n)
{
    est_r_bytes(r, v, n * sizeof *v);
}

size_t est_r_left(const est_rbuf *r)
{
    return r->bad ? 0 : r->n - r->at;
}

/* ---- entries ---------------------------------------------------------- */

static void put_u32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, sizeof v);
}

static void put_u64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, sizeof v);
}

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void warn(const char *path, const char *why)
{
    fprintf(stderr, "trainplan: warning: fit cache %s: %s; ignored, refitting\n",
            path, why);
}

void est_cache_entry_free(est_cache_entry *ent)
{
    if (!ent) return;
    free(ent->data);
    ent->data = NULL;
    ent->n = ent->off = 0;
}

void est_cache_reject(est_cache_entry *ent, const char *why)
{
    warn(ent->path, why);
    est_cache_entry_free(ent);
}

/* Reads all of fd (size bytes expected) into a new buffer; NULL when it
 * comes short or a read fails. */
static unsigned char *read_all(int fd, size_t size, size_t *got)
{
    unsigned char *p = tp_xmalloc(size ? size : 1);
    size_t at = 0;
    while (at < size) {
        ssize_t k = read(fd, p + at, size - at);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        at += (size_t)k;
    }
    *got = at;
    return p;
}

int est_cache_get(const char *kind, const char *name, const est_digest *key,
                  est_cache_entry *ent)
{
    char dir[4096];
    memset(ent, 0, sizeof *ent);
    if (est_cache_dir(dir, sizeof dir)
        || entry_path(ent->path, sizeof ent->path, dir, kind, name, key))
        return 0;
    int fd = open(ent->path, O_RDONLY);
    if (fd < 0) {
        /* No entry, or a folder that is not there or not ours to read:
         * a miss. */
        if (errno != ENOENT && errno != ENOTDIR && errno != EACCES)
            warn(ent->path, strerror(errno));
        return 0;
    }
    struct stat st;
    const char *why = NULL;
    char msg[160];
    size_t got = 0;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode))
        why = "not a regular file";
    else if ((size_t)st.st_size < HEADER_BYTES)
        why = "truncated (shorter than its header)";
    else if ((uint64_t)st.st_size > CACHE_MAX_BYTES)
        why = "larger than any cache file";
    else {
        ent->data = read_all(fd, (size_t)st.st_size, &got);
        if (got != (size_t)st.st_size) why = "could not be read whole";
    }
    close(fd);
    const unsigned char *h = ent->data;
    if (why) {
    } else if (memcmp(h, magic, sizeof magic) != 0) {
        why = "not a trainplan fit cache file";
    } else if (get_u32(h + 8) != EST_CACHE_FORMAT) {
        snprintf(msg, sizeof msg, "cache format %u, this program writes %u",
                 (unsigned)get_u32(h + 8), (unsigned)EST_CACHE_FORMAT);
        why = msg;
    } else if (get_u32(h + 12) != BYTE_ORDER_MARK) {
        why = "written on a machine of another byte order";
    } else if (get_u64(h + 16) != key->a || get_u64(h + 24) != key->b) {
        why = "its key is not the one its name says (a foreign file)";
    } else if (get_u64(h + 32) != got - HEADER_BYTES) {
        snprintf(msg, sizeof msg,
                 "truncated or padded: %llu bytes of payload, its header "
                 "says %llu",
                 (unsigned long long)(got - HEADER_BYTES),
                 (unsigned long long)get_u64(h + 32));
        why = msg;
    } else {
        est_digest sum;
        est_digest_init(&sum);
        est_digest_bytes(&sum, h + HEADER_BYTES, got - HEADER_BYTES);
        if (get_u64(h + 40) != sum.a || get_u64(h + 48) != sum.b)
            why = "corrupted (its checksum does not match)";
    }
    if (why) {
        est_cache_reject(ent, why);
        return 0;
    }
    ent->off = HEADER_BYTES;
    ent->n = got - HEADER_BYTES;
    return 1;
}

/* mkdir -p, new folders user-only (the XDG specification's 0700). */
static int make_dirs(const char *dir)
{
    char p[4096];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) return -1;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = '\0';
        if (mkdir(p, 0700) && errno != EEXIST) return -1;
        *s = '/';
    }
    return mkdir(p, 0700) && errno != EEXIST ? -1 : 0;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

void est_cache_put(const char *kind, const char *name, const est_digest *key,
                   const est_wbuf *payload)
{
    char dir[4096], path[4096], tmp[4096 + 16];
    if (est_cache_dir(dir, sizeof dir)
        || entry_path(path, sizeof path, dir, kind, name, key))
        return;
    if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp)
        return;
    int fd = mkstemp(tmp);
    if (fd < 0 && errno == ENOENT && make_dirs(dir) == 0) {
        /* mkstemp wrote over the X's: the template again */
        snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
        fd = mkstemp(tmp);
    }
    if (fd < 0) return; /* unwritable: silently uncached */
    unsigned char h[HEADER_BYTES];
    memset(h, 0, sizeof h);
    memcpy(h, magic, sizeof magic);
    put_u32(h + 8, EST_CACHE_FORMAT);
    put_u32(h + 12, BYTE_ORDER_MARK);
    put_u64(h + 16, key->a);
    put_u64(h + 24, key->b);
    put_u64(h + 32, payload->n);
    est_digest sum;
    est_digest_init(&sum);
    est_digest_bytes(&sum, payload->p, payload->n);
    put_u64(h + 40, sum.a);
    put_u64(h + 48, sum.b);
    int bad = write_all(fd, h, sizeof h) || write_all(fd, payload->p, payload->n);
    /* mkstemp makes it 0600: a cache others may read, as ~/.cache's
     * mode allows. */
    (void)fchmod(fd, 0644);
    bad |= close(fd) != 0;
    if (bad || rename(tmp, path) != 0) unlink(tmp);
}
