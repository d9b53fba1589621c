/*
 * search_cache.c - operator models and collective tables opened once for many
 * searches (search_cache.h).
 */
#include "search_cache.h"

#include <string.h>

void search_cache_free(search_cache *c)
{
    if (!c) return;
    for (int i = 0; i < c->n_ops; i++) est_models_free(c->ops[i].m);
    for (int i = 0; i < c->n_comm; i++) est_comm_free(c->comm[i].c);
    pthread_mutex_t *lock = c->lock;
    memset(c, 0, sizeof *c);
    c->lock = lock;
}

static est_models *find_ops(search_cache *c, const hw_gpu *g, int keep_bad,
                            int *failed, tp_err *e)
{
    for (int i = 0; i < c->n_ops; i++)
        if (c->ops[i].gpu == g && c->ops[i].keep_bad == keep_bad)
            return c->ops[i].m;
    if (c->n_ops == (int)(sizeof c->ops / sizeof c->ops[0])) return NULL;
    est_models *m = est_models_open(g, keep_bad, e);
    if (!m) {
        *failed = 1;
        return NULL;
    }
    c->ops[c->n_ops].gpu = g;
    c->ops[c->n_ops].keep_bad = keep_bad;
    c->ops[c->n_ops++].m = m;
    return m;
}

est_models *search_cache_ops(search_cache *c, const hw_gpu *g, int keep_bad,
                             int *failed, tp_err *e)
{
    if (c->lock) pthread_mutex_lock(c->lock);
    est_models *m = find_ops(c, g, keep_bad, failed, e);
    if (c->lock) pthread_mutex_unlock(c->lock);
    return m;
}

static est_comm *find_comm(search_cache *c, const hw_system *y, int keep_bad,
                           int *failed, tp_err *e)
{
    for (int i = 0; i < c->n_comm; i++)
        if (c->comm[i].sys == y && c->comm[i].keep_bad == keep_bad)
            return c->comm[i].c;
    if (c->n_comm == (int)(sizeof c->comm / sizeof c->comm[0])) return NULL;
    est_comm *m = est_comm_load(y, keep_bad, e);
    if (!m) {
        *failed = 1;
        return NULL;
    }
    c->comm[c->n_comm].sys = y;
    c->comm[c->n_comm].keep_bad = keep_bad;
    c->comm[c->n_comm++].c = m;
    return m;
}

est_comm *search_cache_comm(search_cache *c, const hw_system *y, int keep_bad,
                            int *failed, tp_err *e)
{
    if (c->lock) pthread_mutex_lock(c->lock);
    est_comm *m = find_comm(c, y, keep_bad, failed, e);
    if (c->lock) pthread_mutex_unlock(c->lock);
    return m;
}

const est_models *search_cache_ops_or_open(search_cache *c, const hw_gpu *g,
                                           int keep_bad, est_models **owned,
                                           tp_err *e)
{
    int failed = 0;
    const est_models *m = c ? search_cache_ops(c, g, keep_bad, &failed, e) : NULL;
    if (!m && !failed) m = *owned = est_models_open(g, keep_bad, e);
    return m;
}

const est_comm *search_cache_comm_or_load(search_cache *c, const hw_system *y,
                                          int keep_bad, est_comm **owned,
                                          tp_err *e)
{
    int failed = 0;
    const est_comm *m = c ? search_cache_comm(c, y, keep_bad, &failed, e) : NULL;
    if (!m && !failed) m = *owned = est_comm_load(y, keep_bad, e);
    return m;
}
