/*
 * space_grid.h - enumeration (grid.c): the candidate values of each field
 * a search chooses, layout number i of a grid, the rules of a grid's
 * layouts, and a layout's tag. Included by space.h: include that one.
 */
#ifndef TP_SPACE_GRID_H
#define TP_SPACE_GRID_H

#include <stdint.h>
#include "space_layout.h"
#include "space_split.h"

/* The fields a search chooses, in the order of the enumeration (outermost
 * first); the GPU count is outside the grid (one grid per count). */
typedef enum space_dim {
    SPACE_DIM_TP,
    SPACE_DIM_PP,
    SPACE_DIM_CP,
    SPACE_DIM_EP,   /* MoE only (dense grids: the one value 0) */
    SPACE_DIM_ETP,  /* MoE only; 0 = tp (dense grids: the one value 0) */
    SPACE_DIM_VPP,
    SPACE_DIM_SPLIT, /* space_split_kind */
    SPACE_DIM_MBS,
    SPACE_DIM_SP,
    SPACE_DIM_RECOMPUTE,
    SPACE_DIM_ZERO,
    SPACE_DIM_COUNT
} space_dim;
/* "tp", "pp", "cp", "ep", "etp", "vpp", "split", "mbs", "sp",
 * "recompute", "zero": the keys of --fix. */
extern const char *const space_dim_names[SPACE_DIM_COUNT];

/* The pipeline splits a search tries for each PP and VPP (the values of
 * SPACE_DIM_SPLIT), in the order a duplicate defers to the split before
 * it (SPACE_REJECT_SPLIT_SAME). */
typedef enum space_split_kind {
    SPACE_SPLIT_EVEN,       /* Megatron-Core's default */
    SPACE_SPLIT_EMBED,      /* --account-for-embedding-in-pipeline-split */
    SPACE_SPLIT_LOSS,       /* --account-for-loss-in-pipeline-split */
    SPACE_SPLIT_EMBED_LOSS, /* both */
    SPACE_SPLIT_ENDS,       /* --decoder-first/last-pipeline-num-layers at
                               space_split_ends's counts */
    SPACE_SPLIT_GIVEN,      /* the job's own (the request's base layout) */
    SPACE_SPLIT_KIND_COUNT
} space_split_kind;
/* "even", "embedding", "loss", "embedding+loss", "ends", "given": the
 * values of --fix split=. */
extern const char *const space_split_kind_names[SPACE_SPLIT_KIND_COUNT];

/* The split kind k as l's fields (pp_account, pp_first, pp_last; the
 * layout string left alone) for a model of `layers` transformer layers;
 * SPACE_SPLIT_ENDS without counts for l's PP and VPP marks pp_first and
 * pp_last -1 (SPACE_REJECT_SPLIT_NONE). SPACE_SPLIT_GIVEN leaves l. */
void space_split_kind_apply(space_split_kind k, int64_t layers,
                            space_layout *l);

#define SPACE_GRID_MAX 128

/* Candidate values of each field: a plain value. Layout number i of a
 * grid is the mixed-radix number whose digits index the candidate lists,
 * SPACE_DIM_TP the most significant, so the numbers run in a fixed order
 * and any range of them can be mapped to layouts independently (OpenMP
 * splits them with a static schedule). */
typedef struct space_grid {
    int64_t v[SPACE_DIM_COUNT][SPACE_GRID_MAX];
    int n[SPACE_DIM_COUNT];
    int64_t layers;  /* the model's transformer layers (the splits') */
    /* What the default lists leave out of the range a field could take
     * (the report of what the search skipped): PP values above pp_beyond
     * (0: none left out) up to the layers; VPP values above vpp_beyond
     * (0: none) up to layers / 2. */
    int64_t pp_beyond, vpp_beyond;
} space_grid;

/* The candidates Megatron-LM users pick from: TP powers of two up to
 * max_tp (a node's GPUs, unless TP may cross nodes), PP every size from 1
 * to the layers (up to max_pp and SPACE_GRID_MAX values), CP 1, 2, 4, 8,
 * virtual stages every count from 1 to half the layers (each chunk at
 * least a layer on two ranks; up to SPACE_GRID_MAX), the five pipeline
 * splits of space_split_kind but the job's own, micro-batch 1 to 16
 * sequences in powers of two, SP off and on, recompute none, selective,
 * full, ZeRO 0 and 1 (Megatron-LM's distributed optimizer). Which (PP,
 * VPP, split) Megatron-Core can run is the split rules'. For an MoE model:
 * EP the powers of two that divide the experts, up to the experts and
 * max_ep (the most GPUs searched; 0: no limit), and ETP 0 (= tp,
 * Megatron-Core's default) and 1 (the experts unsplit); a dense model's
 * EP and ETP lists are the one value 0. */
void space_grid_default(space_grid *g, const space_model *m, int64_t max_tp,
                        int64_t max_pp, int64_t max_ep);

/* Pins field d to the single value v (ZeRO 2 and 3 can only be had this
 * way). Returns 0, or -1 when v is out of the field's range (sizes >= 1,
 * ETP >= 0 (0: = tp), SP 0 or 1, recompute 0 to 2, ZeRO 0 to 3, split a
 * space_split_kind). */
int space_grid_fix(space_grid *g, space_dim d, int64_t v);

/* Layouts per GPU count: the product of the list lengths. */
int64_t space_grid_size(const space_grid *g);

/* Layout number idx of g at `gpus` GPUs: the grid's fields, the job's
 * (seq, gbs, dtype, flash, no_dp_overlap) from base, and dp = gpus / (tp
 * x pp x cp), or 0 when that does not divide. */
void space_grid_layout(const space_grid *g, int64_t idx, int64_t gpus,
                       const space_layout *base, space_layout *out);
/* The same for the layout whose digits (the candidate index of each
 * field, SPACE_DIM_TP first) are digit[SPACE_DIM_COUNT]: a scan that keeps
 * them as an odometer needs no division per layout. */
void space_grid_layout_at(const space_grid *g, const int *digit, int64_t gpus,
                          const space_layout *base, space_layout *out);

/* Digit of field d in layout number idx, and the number of layouts that
 * share every digit up to and including d (the size of the block an
 * early rule rejects at once). */
int space_grid_digit(const space_grid *g, int64_t idx, space_dim d);
int64_t space_grid_block(const space_grid *g, space_dim d);

/* space_layout_check for an enumerated layout at `gpus` GPUs: first
 * SPACE_REJECT_GPUS when tp x pp x cp does not divide the GPUs, then
 * SPACE_REJECT_ETP_TP (an etp equal to tp written out, where
 * space_grid_layout marks it as a duplicate of etp 0 by a negative etp),
 * then the rules of space_layout_check, then the two that reject a
 * duplicate (SP with TP 1, ZeRO with DP x CP 1: the same layout as
 * without). */
space_reject space_grid_check(const space_model *m, const space_layout *l,
                              int64_t gpus, int gpus_per_node, char *why,
                              size_t cap);

/* A layout's tag: n{nodes}g{gpus per node}_tp{}pp{}dp{}[cp{}][_ep{}
 * [_etp{}]]_mbs{}[_vpp{}][_sp][_rsel|_rfull[_u{N}|_b{N}]|_rop][_z1|_z2|_z3]
 * [_{space_savers_tag}]
 * (_ep{N}: the expert-parallel size of an MoE layout, one whose ep is
 * set (> 0); _etp{N}: its expert TP where it differs from tp; _u{N}: full
 * recomputation in uniform groups of N > 1 layers, _b{N}: of the first N
 * layers of each model chunk), e.g. n16g8_tp8pp4dp4_mbs2_vpp3
 * (gpus per node is the node's count, or the job's when it is smaller).
 * Returns buf. */
char *space_layout_tag(const space_layout *l, int gpus_per_node, char *buf,
                       size_t cap);

#endif
