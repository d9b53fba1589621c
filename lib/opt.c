/*
 * opt.c - the command line's option parser: getopt_long's rules (GNU's,
 * which the manual and the tests follow) with its state in the caller's
 * struct, so calls on one library session parse in parallel.
 *
 * - "--name value", "--name=value", and any unique prefix of a name;
 * - "-x", "-xVALUE", "-x VALUE", and flags clustered ("-ab");
 * - an option's value is the next element whatever it starts with;
 * - "--" ends the options; "-" alone is an argument;
 * - arguments may come anywhere: they are gathered, in order, into
 *   argv[1..npos], the options after them (argv is permuted as GNU's is:
 *   pass a copy).
 */
#include "lib_int.h"

#include <getopt.h>
#include <string.h>

/* A long option: its name up to '=' (or the end) against longopts, an
 * exact match first, else the one option the prefix names (options that
 * share their id and value kind count as one). */
static int long_opt(lib_getopt *g, int argc, char **argv, const char *a,
                    const struct option *lo)
{
    const char *name = a + 2, *eq = strchr(name, '=');
    size_t n = eq ? (size_t)(eq - name) : strlen(name);
    const struct option *hit = NULL;
    int ambiguous = 0;
    for (const struct option *p = lo; p->name; p++) {
        if (n && p->name[0] != name[0]) continue; /* most, at once */
        if (strncmp(p->name, name, n) != 0) continue;
        if (strlen(p->name) == n) {
            hit = p, ambiguous = 0;
            break;
        }
        if (!hit) hit = p;
        else if (hit->val != p->val || hit->has_arg != p->has_arg)
            ambiguous = 1;
    }
    if (!hit || ambiguous) {
        g->opt = 0;
        return '?';
    }
    if (hit->has_arg == required_argument) {
        if (eq) g->arg = eq + 1;
        else if (g->ind < argc) g->arg = argv[g->ind++];
        else {
            g->opt = hit->val;
            return '?';
        }
    } else if (eq) {
        g->opt = hit->val;
        g->no_value = 1;
        return '?';
    }
    return hit->val;
}

/* The next short option of the cluster at g->next. */
static int short_opt(lib_getopt *g, int argc, char **argv, const char *so)
{
    int c = (unsigned char)*g->next++;
    if (!*g->next) g->next = NULL;
    const char *p = c != ':' ? strchr(so, c) : NULL;
    if (!p) {
        g->opt = c;
        return '?';
    }
    if (p[1] != ':') return c;
    if (g->next) g->arg = g->next, g->next = NULL;
    else if (g->ind < argc) g->arg = argv[g->ind++];
    else {
        g->opt = c;
        return '?';
    }
    return c;
}

/* The argument at argv[ind] moved down after the ones gathered, the
 * options between shifted up one: argv stays a permutation of itself (a
 * caller frees its strings). */
static void gather(lib_getopt *g, char **argv)
{
    char *a = argv[g->ind];
    int at = 1 + g->npos;
    memmove(argv + at + 1, argv + at, (size_t)(g->ind - at) * sizeof *argv);
    argv[at] = a;
    g->npos++;
    g->ind++;
}

int lib_getopt_next(lib_getopt *g, int argc, char **argv,
                    const char *shortopts, const struct option *longopts)
{
    g->arg = NULL;
    if (g->ind == 0) g->ind = 1;
    if (g->next) return short_opt(g, argc, argv, shortopts);
    for (;;) {
        if (g->ind >= argc) return -1;
        char *a = argv[g->ind];
        if (strcmp(a, "--") == 0) {
            g->ind++;
            while (g->ind < argc) gather(g, argv);
            return -1;
        }
        if (a[0] == '-' && a[1]) break;
        gather(g, argv);
    }
    char *a = argv[g->ind++];
    g->bad = a;
    if (a[1] == '-') return long_opt(g, argc, argv, a, longopts);
    g->next = a + 1;
    return short_opt(g, argc, argv, shortopts);
}
