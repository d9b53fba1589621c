/*
 * launch.c - what the launch writers share: the growable text they write
 * into, and the nodes a job takes. The writers themselves are one file a
 * framework: launch_megatron.c, launch_nemo.c (and launch_nemo1.c),
 * launch_torchtitan.c; their readers launch_*_read.c.
 */
#include "launch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tp_base.h"

void launch_text_put(launch_text *t, const char *fmt, ...)
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

void launch_text_free(launch_text *t)
{
    if (!t) return;
    free(t->p);
    t->p = NULL;
    t->n = t->cap = 0;
}

const char *launch_text_str(const launch_text *t)
{
    return t->p ? t->p : "";
}

int64_t launch_nodes(const launch_plan *c, int64_t *per_node)
{
    const space_layout *l = c->layout;
    int64_t gpus = l->tp * l->pp * l->cp * l->dp;
    int gpn = c->gpus_per_node;
    int64_t g = gpn > 0 && gpn < gpus ? gpn : gpus;
    *per_node = g;
    return (gpus + g - 1) / g;
}

/* ---- the launches as data ------------------------------------------------ */

void launch_json_set(cJSON *o, const char *key, const char *value)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, key); /* the last one wins */
    cJSON_AddStringToObject(o, key, value);
}

void launch_json_comment(cJSON *notes, const char *line)
{
    if (*line == '#') line++;
    if (*line == ' ') line++;
    cJSON_AddItemToArray(notes, cJSON_CreateString(line));
}

char *launch_next_line(char **p)
{
    char *s = *p;
    if (!s || !*s) return NULL;
    char *nl = strchr(s, '\n');
    if (nl) {
        *nl = '\0';
        *p = nl + 1;
    } else {
        *p = s + strlen(s);
    }
    return s;
}
