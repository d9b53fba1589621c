/*
 * launch.c - what the launch writers share: the growable text they write
 * into, and the nodes a job takes. The writers themselves are one file a
 * framework: launch_megatron.c, launch_nemo.c, launch_torchtitan.c.
 */
#include "launch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_text_put(cli_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    size_t need = t->n + (size_t)k + 1;
    if (need > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < need) cap *= 2;
        char *p = realloc(t->p, cap);
        if (!p) {
            fprintf(stderr, "trainplan: out of memory (%zu bytes)\n", cap);
            abort();
        }
        t->p = p;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->p + t->n, t->cap - t->n, fmt, ap);
    va_end(ap);
    t->n += (size_t)k;
}

void cli_text_free(cli_text *t)
{
    if (!t) return;
    free(t->p);
    t->p = NULL;
    t->n = t->cap = 0;
}

const char *cli_text_str(const cli_text *t)
{
    return t->p ? t->p : "";
}

int64_t cli_launch_nodes(const cli_launch *c, int64_t *per_node)
{
    const space_layout *l = c->layout;
    int64_t gpus = l->tp * l->pp * l->cp * l->dp;
    int gpn = c->gpus_per_node;
    int64_t g = gpn > 0 && gpn < gpus ? gpn : gpus;
    *per_node = g;
    return (gpus + g - 1) / g;
}
