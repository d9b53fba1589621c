/*
 * est_int.h - what the estimator's own files share and nobody else
 * includes: the fit cache's digest, its byte buffers and its entries
 * (cache.c), used by models.c (operator fits), comm.c (collective tables)
 * and fit.c (one fit's bytes). The public side of the cache (where it
 * lives, how to turn it off) is in est.h.
 */
#ifndef TP_EST_INT_H
#define TP_EST_INT_H

#include "est.h"

#include <stddef.h>
#include <stdint.h>

/* A 128-bit digest of byte strings, for cache keys and the cache file's
 * checksum: a change detector, not a cryptographic hash (the cache folder
 * is the user's own). Each piece added is digested with its length, so
 * "ab" + "c" and "a" + "bc" differ. Host byte order. */
typedef struct est_digest {
    uint64_t a, b;
} est_digest;

void est_digest_init(est_digest *d);
void est_digest_bytes(est_digest *d, const void *p, size_t n);
void est_digest_str(est_digest *d, const char *s); /* NULL: a marker */
void est_digest_int(est_digest *d, int64_t v);
/* Adds a file's whole content. Returns 0, or -1 when it cannot be read
 * (the digest is then not to be used). */
int est_digest_file(est_digest *d, const char *path);

/* The key of one cache entry so far: the cache format, the program's
 * version, the build (a digest of the estimator's and hwdb's sources, the
 * compiler and its flags), the entry's kind ("ops", "comm") and its
 * subject's name and keep_bad. Returns 0, or -1 when the cache is off
 * (est_cache_enable, TRAINPLAN_CACHE=off) or has no folder. */
int est_cache_key(est_digest *key, const char *kind, const char *name,
                  int keep_bad);

/* A growing byte buffer an entry is written into (host byte order). */
typedef struct est_wbuf {
    unsigned char *p;
    size_t n, cap;
} est_wbuf;

void est_w_bytes(est_wbuf *b, const void *x, size_t n);
void est_w_i32(est_wbuf *b, int32_t v);
void est_w_f64(est_wbuf *b, double v); /* the exact bits */
void est_w_f64s(est_wbuf *b, const double *v, size_t n);

/* Reading an entry back: a read past the end sets bad and yields zeros,
 * so a parser checks bad once at the end (and its bounds as it goes). */
typedef struct est_rbuf {
    const unsigned char *p;
    size_t n, at;
    int bad;
} est_rbuf;

void est_r_bytes(est_rbuf *r, void *x, size_t n);
int32_t est_r_i32(est_rbuf *r);
double est_r_f64(est_rbuf *r);
void est_r_f64s(est_rbuf *r, double *v, size_t n);
size_t est_r_left(const est_rbuf *r);

/* One entry found in the cache. */
typedef struct est_cache_entry {
    char path[4096];
    unsigned char *data; /* the whole file; the payload is data + off */
    size_t off, n;       /* payload offset and length */
} est_cache_entry;

/* Looks up the entry of key (kind and name name its file). Returns 1 with
 * the payload in ent (free with est_cache_entry_free), 0 when there is no
 * entry, or when the file is broken, truncated, foreign or of another
 * key: then one warning line on stderr says so, and the caller refits
 * and stores over it. */
int est_cache_get(const char *kind, const char *name, const est_digest *key,
                  est_cache_entry *ent);
void est_cache_entry_free(est_cache_entry *ent);

/* The payload parsed but made no sense (est_cache_get's checks passed):
 * the warning line, and ent is freed. */
void est_cache_reject(est_cache_entry *ent, const char *why);

/* Stores payload under key: written to a temporary file in the cache
 * folder and renamed over the entry's name, so readers see the old file
 * or the new one whole, and two processes storing at once are safe.
 * Failures (an unwritable folder, a full disk) are silent: the cache is
 * only a cache. */
void est_cache_put(const char *kind, const char *name, const est_digest *key,
                   const est_wbuf *payload);

/* The payloads of the two kinds of entry: every fit of an est_models
 * (models.c) and every table of an est_comm (comm.c), as written; and
 * back, checking every count, index and bound (the fuzzer's target too,
 * fuzz/fuzz_fit_cache.c). A payload that is not one they wrote gives
 * NULL and the reason in why[cap]. The result is freed as one from
 * est_models_open / est_comm_load. */
void est_models_payload(const est_models *m, est_wbuf *b);
est_models *est_models_from_payload(const hw_gpu *g, const unsigned char *p,
                                    size_t n, char *why, size_t cap);
void est_comm_payload(const est_comm *c, est_wbuf *b);
est_comm *est_comm_from_payload(const hw_system *y, const unsigned char *p,
                                size_t n, char *why, size_t cap);

/* One fit's bytes (fit.c): everything est_fit_predict reads but the
 * lazily filled lattice values. est_fit_read checks every count and
 * index against the bounds the fit code keeps, leaving *fit empty and
 * the reason in why[cap] when they do not hold; returns 0 or -1. */
void est_fit_write(const est_fit *fit, est_wbuf *b);
int est_fit_read(est_fit *fit, est_rbuf *r, char *why, size_t cap);

#endif
