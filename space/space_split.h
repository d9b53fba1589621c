/*
 * space_split.h - the pipeline split (split.c).
 *
 * Which transformer layers each (pipeline rank, model chunk) holds, as
 * Megatron-Core computes it (NVIDIA/Megatron-LM@d98e8a64ddf3,
 * megatron/core/transformer/transformer_block.py get_num_layers_to_build,
 * transformer_layer.py get_transformer_layer_offset,
 * pipeline_parallel_layer_layout.py): model chunk j of rank r is stage
 * k = j x PP + r, and the stages hold the layers in order. The embedding
 * is on stage 0, the LM head and the loss on the last stage (PP x VPP -
 * 1), always (pre_process, post_process: megatron/training/training.py
 * get_model); the MTP modules on the last stage, or where a custom layout
 * puts them.
 *
 * Included by space.h: include that one.
 */
#ifndef TP_SPACE_SPLIT_H
#define TP_SPACE_SPLIT_H

#include <stdint.h>
#include "space_layout.h"

/* A layout's split, resolved once (space_split_resolve) so that any
 * chunk's layers take O(1). A plain value. */
typedef struct space_split {
    int64_t pp, vpp;          /* >= 1 */
    int64_t layers;           /* the model's transformer layers */
    int64_t mtp;              /* its MTP modules */
    /* Formula splits: layer slots of one chunk of the first rank, of a
     * middle one and of the last; the embedding's and the loss's slot
     * (embed, loss) are taken out of stage 0 and the last stage; the
     * first `extra` stages hold one slot more (only the fallback of a
     * split Megatron-Core refuses, as even as integers go). */
    int64_t first, mid, last, extra;
    int embed, loss;
    const space_pp_layout *lay; /* a custom layout: its stages instead */
} space_split;

/* One model chunk. */
typedef struct space_chunk {
    int64_t layers;     /* transformer layers */
    int64_t offset;     /* index of its first layer */
    int embedding;      /* holds the embedding */
    int head;           /* holds the final norm, LM head and loss */
    int64_t mtp;        /* MTP modules it holds */
} space_chunk;

/* Resolves l's split for m into *s and checks it under Megatron-Core's
 * rules (the split rules of space_reject; their order, values and sources
 * in split.c). Returns SPACE_OK, or the first rule broken with a message
 * naming the values in why[cap]; *s is then a fallback split (the layers
 * as even as integers go over PP x VPP stages, the embedding and the head
 * at the ends) that callers may still read. Sizes below 1 read as 1. */
space_reject space_split_resolve(const space_model *m, const space_layout *l,
                                 space_split *s, char *why, size_t cap);
/* The same for a model of `layers` transformer layers and `mtp` MTP
 * modules (all the split reads of it). */
space_reject space_split_resolve_n(int64_t layers, int64_t mtp,
                                   const space_layout *l, space_split *s,
                                   char *why, size_t cap);

/* Chunk j (0 to VPP - 1) of pipeline rank r (0 to PP - 1) of s. */
void space_split_chunk(const space_split *s, int64_t r, int64_t j,
                       space_chunk *out);

/* Transformer layers on pipeline rank r of s, all of its chunks. */
int64_t space_split_rank_layers(const space_split *s, int64_t r);

/* The most transformer layers any chunk of s holds. */
int64_t space_split_max_chunk(const space_split *s);

/* Layers the embedding and the loss add to the split where l accounts
 * for them (0 to 2). */
int space_split_accounted(const space_layout *l);

/* The same for l (resolving its split, a fallback where refused). */
int64_t space_rank_layers(const space_model *m, const space_layout *l,
                          int64_t r);

/* space_recompute_layers of rank r on the resolved split s of l. */
double space_split_recompute_layers(const space_split *s,
                                    const space_layout *l, int64_t r);

/* --decoder-first/last-pipeline-num-layers that balance the ends, the
 * search's uneven split: the middle ranks take the mean L / PP rounded up
 * to a multiple of VPP, the two end ranks (which also hold the embedding,
 * the LM head and the loss) share the rest, the first the larger half,
 * each a positive multiple of VPP. PP 1: none; PP 2: the layers shared
 * alike. Returns 1 and sets *first, *last; 0 where no such split
 * exists. */
int space_split_ends(int64_t layers, int64_t pp, int64_t vpp, int64_t *first,
                     int64_t *last);

/* Whether two resolved formula splits put the same layers on every chunk
 * (a custom layout compares by its stages). */
int space_split_same(const space_split *a, const space_split *b);

/* Parses a --pipeline-model-parallel-layout string as Megatron-Core's
 * PipelineParallelLayerLayout.parse_str_to_list does: commas dropped,
 * "(...)*N" unrolled, then "x*N", '|' between stages, E (embedding), L
 * (loss), t (transformer layer), m (MTP module). Checks the syntax only
 * (the counts are rules of space_split_resolve, which know the model).
 * Returns 0, or -1 with a message naming the character or the limit in
 * why[cap] (an unknown letter, more than SPACE_PP_LAYOUT_MAX stages or a
 * million letters once unrolled). */
int space_pp_layout_parse(const char *s, space_pp_layout *out, char *why,
                          size_t cap);

/* The split that puts st[k] transformer layers on stage k (k = chunk x
 * pp + rank, n = pp x VPP stages, summing to `layers`) into l's split
 * fields (and l->pp, l->vpp): Megatron-Core's even split, the embedding
 * and/or loss accounted for, or first/last stage counts where one of them
 * gives exactly these stages; else a layout string written into *store
 * (E on stage 0, `mtp` MTP modules and L on the last) that l points at.
 * Returns 0, or -1 where the stages do not fit (n not a multiple of pp,
 * another sum, more than SPACE_PP_LAYOUT_MAX stages, a string too long). */
int space_split_from_stages(int64_t layers, int64_t mtp, int64_t pp,
                            const int64_t *st, int n, space_layout *l,
                            space_pp_layout *store);

/* l's split for people: "" for Megatron-Core's default, else e.g.
 * "account for embedding and loss", "first 7, last 7 layers",
 * "layout Et*7|(t*8|)*14t*7L". Returns buf. */
char *space_split_str(const space_layout *l, char *buf, size_t cap);

#endif
