/*
 * search_cache.h - operator models and collective tables opened once and shared
 * by many searches: a sweep's scenarios, a library session's calls
 * (issue 32: the search session's caches, once the command line's). What
 * the cache holds is read-only once opened (est_models' lazily filled
 * correction lattice is atomic: estimator/fit.c), so searches may share
 * it; filling it is serialized on its lock where it has one.
 */
#ifndef TRAINPLAN_SEARCH_CACHE_H
#define TRAINPLAN_SEARCH_CACHE_H

#include <pthread.h>

#include "est.h"

/* Zero it to start; free with search_cache_free. */
typedef struct search_cache {
    pthread_mutex_t *lock;   /* NULL, or held while the cache is searched
                                and filled (a library session's, shared by
                                threads: lib/session.c) */
    int n_ops, n_comm;
    struct { const hw_gpu *gpu; int keep_bad; est_models *m; } ops[64];
    struct { const hw_system *sys; int keep_bad; est_comm *c; } comm[64];
} search_cache;

/* Frees what c holds and zeroes it (its lock is the owner's); NULL: nothing. */
void search_cache_free(search_cache *c);
/* The operator models of GPU g (the collective tables of system y) from
 * cache c, fitted there when missing, under c->lock when it has one;
 * NULL when the cache is full (the caller opens its own, *failed 0) or
 * the fit failed (*failed 1, the message in e). What it returns stays
 * the cache's. */
est_models *search_cache_ops(search_cache *c, const hw_gpu *g, int keep_bad,
                             int *failed, tp_err *e);
est_comm *search_cache_comm(search_cache *c, const hw_system *y, int keep_bad,
                            int *failed, tp_err *e);
/* What a search uses: the models of g (tables of y) from cache c when c
 * is not NULL and has room, else opened into *owned, which the caller
 * frees (est_models_free, est_comm_free; *owned stays NULL otherwise).
 * NULL with the message in e when the fit or the load fails. */
const est_models *search_cache_ops_or_open(search_cache *c, const hw_gpu *g,
                                           int keep_bad, est_models **owned,
                                           tp_err *e);
const est_comm *search_cache_comm_or_load(search_cache *c, const hw_system *y,
                                          int keep_bad, est_comm **owned,
                                          tp_err *e);

#endif
