/*
 * session.c - what a library session (include/trainplan.h tp_open) holds
 * for the commands it runs: the hardware database, opened once, and the
 * operator models and collective tables of each GPU and system, fitted on
 * first use and kept. A command run with lib_opts.session set takes them
 * from here instead of opening its own (lib_hwdb_for, lib_session_cache);
 * a request that names hwdb directories of its own opens its own, as a
 * plain command does.
 *
 * Threads: the database is read-only once open; the cache's fills are
 * serialized on the session's lock (cmd_search.c cached_ops), and what is
 * in the cache is read-only once there (est_models' lazily filled
 * lattice is atomic: estimator/fit.c). So any number of commands may run
 * with one session at once.
 */
#include "lib_int.h"

#include <stdlib.h>

struct lib_session {
    hw_db *db;
    search_cache cache;
    pthread_mutex_t lock; /* the cache's fills */
};

lib_session *lib_session_open(const char *const *dirs, int n, tp_err *e)
{
    hw_db *db = hw_db_open(dirs, n, e);
    if (!db) return NULL;
    lib_session *s = tp_xcalloc(1, sizeof *s);
    s->db = db;
    pthread_mutex_init(&s->lock, NULL);
    s->cache.lock = &s->lock;
    return s;
}

void lib_session_close(lib_session *s)
{
    if (!s) return;
    search_cache_free(&s->cache);
    hw_db_free(s->db);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

hw_db *lib_open_hwdb(const lib_opts *o, tp_err *e)
{
    return hw_db_open(o->hwdb_dirs, o->n_hwdb, e);
}

hw_db *lib_hwdb_for(const lib_opts *o, int *owned, tp_err *e)
{
    if (o->session && o->n_hwdb == 0) {
        *owned = 0;
        return o->session->db;
    }
    *owned = 1;
    return lib_open_hwdb(o, e);
}

search_cache *lib_session_cache(const lib_opts *o, const hw_db *db)
{
    return o->session && db == o->session->db ? &o->session->cache : NULL;
}
