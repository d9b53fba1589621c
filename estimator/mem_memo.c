/*
 * mem_memo.c - what every pipeline rank of a layout shares for its memory
 * (est_stage_common: the model's parameters, the split, a layer's and
 * the ends' parameters, a layer's activations per token) memoized per
 * thread. A search asks est_memory_of for tens of thousands of layouts,
 * and many share all of it: it does not depend on DP, the micro-batch
 * or global batch, ZeRO or the memory savers, which is most of what sets
 * a search's layouts of one (TP, PP, VPP, split, CP, recompute) apart,
 * and each saver the search sizes (variants.c, saver_size) asks for the
 * same layout again at up to seven sizes. As iter_memo.c's table: two
 * ways a set, no locks, no allocation.
 *
 * A hit returns the bytes est_stage_common_make would: the key is the
 * model (by this thread's tag of its content, est_model_tag) and the
 * layout with only the fields of mem_blind set to 0, fields that
 * est_stage_common_make and what it calls never read. A field added to
 * space_layout is in the key unless it is put there. EST_MEMO_CHECK makes
 * every hit again and counts the differences with the layer memo's
 * (est_memo_checked; tests/test_enum.c runs every search so).
 *
 * Not memoized: a layout with a custom pipeline layout (--pipeline-
 * layout), whose split reads the layout it points to, which a pointer in
 * the key cannot tell from another one made at the same address.
 */

#include "est_int.h"

#include <stdint.h>
#include <string.h>

/* 512 x 2 slots of 864 bytes, 0.9 MB a thread: the flagship search
 * (GPT-NeoX-20B on Perlmutter, 4 to 128 GPUs, one thread) makes 3,011 of
 * its 56,798 calls afresh (callgrind), in the order of its time floors. */
#define MEM_MEMO_SETS 512 /* power of two */
#define MEM_MEMO_WAYS 2

typedef struct mem_key {
    uint64_t model;   /* est_model_tag; 0: an empty slot */
    space_layout l;   /* mem_blind's fields 0 */
} mem_key;

typedef struct mem_slot {
    mem_key key;
    est_stage_common c;
} mem_slot;

static _Thread_local mem_slot mem_memo[MEM_MEMO_SETS][MEM_MEMO_WAYS];
static _Thread_local unsigned char mem_newer[MEM_MEMO_SETS]; /* the way
                                                               last filled */

/* Sets the fields of l that est_stage_common_make never reads to 0: the
 * ones a search varies between layouts that share it. */
static void mem_blind(space_layout *l)
{
    l->dp = 0;
    l->mbs = l->gbs = 0;
    l->zero = 0;
    /* the memory savers (search_saver_apply) */
    l->pa_optimizer = 0;
    l->main_grads_dtype = l->main_params_dtype = 0;
    l->exp_avg_dtype = l->exp_avg_sq_dtype = 0;
    l->opt_offload = 0;
    l->opt_offload_overlap = 0;
    l->act_offload_layers = 0;
}

/* Spreads the fields that tell a search's keys apart; the whole key is
 * compared. */
static uint64_t mem_hash(const mem_key *k)
{
    const space_layout *l = &k->l;
    uint64_t h = k->model * 0x9e3779b97f4a7c15u
                 + (uint64_t)l->tp * 0xbf58476d1ce4e5b9u
                 + (uint64_t)l->pp * 0x94d049bb133111ebu
                 + (uint64_t)l->vpp * 0xa0761d6478bd642fu
                 + (uint64_t)l->cp * 0xe7037ed1a0b428dbu
                 + (uint64_t)l->seq * 0x8ebc6af09c88c6e3u
                 + (uint64_t)l->sp * 0x589965cc75374cc3u
                 + (uint64_t)l->recompute * 0x1d8e4e27c47d124fu
                 + (uint64_t)l->pp_first * 0xc2b2ae3d27d4eb4fu
                 + (uint64_t)l->pp_last * 0x165667b19e3779f9u
                 + (uint64_t)l->pp_account * 0x27d4eb2f165667c5u
                 + (uint64_t)l->dtype * 0x85ebca77c2b2ae63u;
    h ^= h >> 32;
    h *= 0x9e3779b97f4a7c15u;
    return h ^ (h >> 29);
}

const est_stage_common *est_stage_common_of(const space_model *m,
                                            const space_layout *l,
                                            est_stage_common *buf)
{
    if (!est_memo_mode() || l->pp_layout) {
        est_stage_common_make(m, l, buf);
        return buf;
    }
    mem_key k; /* no padding: every byte set below */
    _Static_assert(sizeof(mem_key) == sizeof(uint64_t) + sizeof(space_layout),
                   "mem_key has no padding");
    k.model = est_model_tag(m);
    memcpy(&k.l, l, sizeof k.l);
    mem_blind(&k.l);
    size_t set = (size_t)(mem_hash(&k) & (MEM_MEMO_SETS - 1));
    for (int w = 0; w < MEM_MEMO_WAYS; w++) {
        mem_slot *sl = &mem_memo[set][w];
        if (memcmp(&sl->key, &k, sizeof k)) continue;
        if (est_memo_mode() == EST_MEMO_CHECK) {
            est_stage_common_make(m, l, buf);
            est_memo_count_check(memcmp(buf, &sl->c, sizeof *buf) != 0);
        }
        return &sl->c;
    }
    int w = (mem_newer[set] + 1) % MEM_MEMO_WAYS;
    mem_newer[set] = (unsigned char)w;
    mem_slot *sl = &mem_memo[set][w];
    memcpy(&sl->key, &k, sizeof k);
    est_stage_common_make(m, l, &sl->c);
    return &sl->c;
}
