/*
 * iter_memo.c - a layer's time (est_layer_time, iter_layer.c) memoized per
 * thread: the layouts of a search, and the searches of a sweep that a
 * thread runs one after the other, share most layers (a layer does not
 * depend on the data-parallel or pipeline size, the split, ZeRO or the
 * memory savers), so each thread keeps the layers it has timed in a
 * direct-mapped table of its own: no locks, no allocation.
 *
 * A hit returns the bits a miss would compute: the key holds everything
 * est_layer_time_of reads, which is the context's models, tables, system
 * and GPU (by id and address, as the operator and collective memos of
 * iter_ops.c key them), the model (by content), what est_iter_ctx derives
 * from the layout (but for the groups that depend on DP), and the layout
 * itself with only the fields of layer_blind set to 0: fields a layer never
 * reads. A field added to space_layout is in the key unless it is put
 * there. Whether layer_blind's fields are indeed never read is tested
 * (tests/test_est.c test_layer_memo, under EST_MEMO_CHECK, which times
 * every hit again and counts the differences).
 *
 * Not memoized: a layer timed while a trace is kept (--ops: its rows are
 * written as it is timed).
 */

#include "est_int.h"

#include <stdint.h>
#include <string.h>

#define LAYER_MEMO_SLOTS 512 /* power of two */

/* The models this thread has met, by content: a tag each, never reused,
 * so a model freed and another read at its address is never taken for
 * it. */
#define MODEL_TAGS 4

typedef struct layer_key {
    uint64_t ops, comm;       /* est_models_id, est_comm_id */
    const hw_system *sys;
    const hw_gpu *gpu;
    uint64_t model;           /* model_tag */
    int64_t moe;
    /* est_iter_ctx's fields but the context, model, layout and trace
     * pointers, w_acc, and what depends on DP (dp_group, pp_pair, edp,
     * edp_group), which no layer reads */
    int64_t gemm_dt, act_dt, norm, any_layout_fp8, cudnn_attn, hopper, mla;
    int64_t T, Tn, vp, attn_hq, attn_hk, attn_hd, ep, etp;
    double act_bytes, eff, attn_scale, imb, host_call_s;
    est_group tp_group, cp_group, ep_group, etp_group, eptp_group;
    space_layout l;           /* layer_blind's fields 0 */
} layer_key;

typedef struct layer_slot {
    layer_key key;            /* key.model 0: empty */
    est_stage_time st;        /* what the layer adds to a zero stage */
    double w;                 /* and to a zero *w_acc */
} layer_slot;

static _Thread_local layer_slot layer_memo[LAYER_MEMO_SLOTS];
static _Thread_local struct {
    space_model m;
    uint64_t tag;
} model_tags[MODEL_TAGS];
static _Thread_local uint64_t model_tag_next, model_tag_at;
static _Atomic int64_t checked_hits, checked_mismatches; /* EST_MEMO_CHECK */

/* Sets the fields of l that no layer reads (est_layer_time_of and what it
 * calls) to 0: those a search varies between layouts that share their
 * layers. */
static void layer_blind(space_layout *l)
{
    l->dp = l->pp = l->vpp = 0;
    l->zero = 0;
    l->pp_account = 0;
    l->pp_first = l->pp_last = 0;
    l->pp_layout = NULL;
    l->pp_schedule = 0;
    l->mb_group = 0;
    /* the memory savers (search_saver_apply) */
    l->pa_optimizer = 0;
    l->main_grads_dtype = l->main_params_dtype = 0;
    l->exp_avg_dtype = l->exp_avg_sq_dtype = 0;
    l->opt_offload = 0;
    l->opt_offload_overlap = 0;
    l->act_offload_layers = 0;
    l->offload_modules = 0;
    l->offload_fraction = 0;
    l->fp8_params = 0;
}

/* This thread's tag of model m's content. */
static uint64_t model_tag(const space_model *m)
{
    for (int i = 0; i < MODEL_TAGS; i++)
        if (model_tags[i].tag && !memcmp(&model_tags[i].m, m, sizeof *m))
            return model_tags[i].tag;
    int at = (int)(model_tag_at++ % MODEL_TAGS);
    model_tags[at].m = *m;
    model_tags[at].tag = ++model_tag_next;
    return model_tags[at].tag;
}

static void layer_key_of(const est_iter_ctx *x, int moe, layer_key *k)
{
    memset(k, 0, sizeof *k); /* the padding too: keys compare as bytes */
    k->ops = est_models_id(x->c->ops);
    k->comm = est_comm_id(x->c->comm);
    k->sys = x->c->sys;
    k->gpu = x->c->gpu;
    k->model = model_tag(x->m);
    k->moe = moe;
    k->gemm_dt = x->gemm_dt, k->act_dt = x->act_dt, k->norm = x->norm;
    k->any_layout_fp8 = x->any_layout_fp8, k->cudnn_attn = x->cudnn_attn;
    k->hopper = x->hopper, k->mla = x->mla;
    k->T = x->T, k->Tn = x->Tn, k->vp = x->vp;
    k->attn_hq = x->attn_hq, k->attn_hk = x->attn_hk, k->attn_hd = x->attn_hd;
    k->ep = x->ep, k->etp = x->etp;
    k->act_bytes = x->act_bytes, k->eff = x->eff, k->attn_scale = x->attn_scale;
    k->imb = x->imb, k->host_call_s = x->host_call_s;
    k->tp_group = x->tp_group, k->cp_group = x->cp_group;
    k->ep_group = x->ep_group, k->etp_group = x->etp_group;
    k->eptp_group = x->eptp_group;
    memcpy(&k->l, x->l, sizeof k->l);
    layer_blind(&k->l);
}

/* Spreads the fields that tell a search's layers apart; the whole key is
 * compared on a hit. */
static uint64_t layer_hash(const layer_key *k)
{
    uint64_t eff, h;
    memcpy(&eff, &k->eff, sizeof eff);
    h = k->ops * 0x9e3779b97f4a7c15u + k->comm * 0xbf58476d1ce4e5b9u
        + k->model * 0x94d049bb133111ebu + (uint64_t)k->moe * 0xd6e8feb86659fd93u
        + (uint64_t)k->T * 0xa0761d6478bd642fu
        + (uint64_t)k->Tn * 0xe7037ed1a0b428dbu
        + (uint64_t)k->tp_group.size * 0x8ebc6af09c88c6e3u
        + (uint64_t)k->cp_group.size * 0x589965cc75374cc3u
        + (uint64_t)k->l.recompute * 0x1d8e4e27c47d124fu
        + (uint64_t)k->l.recompute_modules * 0xc2b2ae3d27d4eb4fu
        + (uint64_t)k->l.cuda_graph * 0x165667b19e3779f9u
        + (uint64_t)k->l.eager * 0x27d4eb2f165667c5u
        + eff * 0x85ebca77c2b2ae63u + (uint64_t)(uintptr_t)k->sys;
    h ^= h >> 32;
    h *= 0x9e3779b97f4a7c15u;
    return h ^ (h >> 29);
}

static int stage_is_zero(const est_stage_time *st)
{
    static const est_stage_time zero;
    return !memcmp(st, &zero, sizeof zero);
}

/* Adds the layer's times t (timed into a zero stage and a zero w) to *st
 * and *x->w_acc, which are zero: the sums are t's bits. */
static void layer_add(const est_iter_ctx *x, est_stage_time *st,
                      const est_stage_time *t, double w)
{
    *st = *t;
    if (x->w_acc) *x->w_acc = w;
}

void est_layer_time(const est_iter_ctx *x, est_stage_time *st, int moe)
{
    int mode = est_memo_mode();
    /* the memo stores what a layer adds to zeros: callers start each
     * layer from zeros (iter.c), and another start is timed as is */
    if (!mode || x->c->trace || !stage_is_zero(st)
        || (x->w_acc && *x->w_acc != 0) || est_models_id(x->c->ops) == 0) {
        est_layer_time_of(x, st, moe);
        return;
    }
    layer_key k;
    layer_key_of(x, moe, &k);
    layer_slot *sl = &layer_memo[layer_hash(&k) & (LAYER_MEMO_SLOTS - 1)];
    int hit = !memcmp(&sl->key, &k, sizeof k);
    if (hit && mode != EST_MEMO_CHECK) {
        layer_add(x, st, &sl->st, sl->w);
        return;
    }
    est_iter_ctx y = *x;
    est_stage_time t = {0};
    double w = 0;
    y.w_acc = &w;
    est_layer_time_of(&y, &t, moe);
    if (hit) {
        checked_hits++;
        if (memcmp(&t, &sl->st, sizeof t) || memcmp(&w, &sl->w, sizeof w))
            checked_mismatches++;
    }
    sl->key = k;
    sl->st = t;
    sl->w = w;
    layer_add(x, st, &t, w);
}

void est_memo_checked(int64_t *hits, int64_t *mismatches)
{
    *hits = checked_hits;
    *mismatches = checked_mismatches;
}
