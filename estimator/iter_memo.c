/*
 * iter_memo.c - the parts of an iteration that do not depend on DP, PP
 * or the pipeline's split memoized per thread: a layer of each kind
 * (est_layer_time), the first stage's extras (the embedding) and the
 * last stage's (final norm, LM head, loss). The layouts of a search, and
 * the searches of a sweep that a thread runs one after the other, share
 * most of them (a part does not depend on the data-parallel or pipeline
 * size, the split, ZeRO, the schedule or the memory savers), so each
 * thread keeps the parts it has timed in a table of its own (two ways a
 * set): no locks, no allocation.
 *
 * A hit returns the bits a miss would compute: the key (est_memo_key,
 * made once an estimate by est_memo_open, which finds its slot) holds
 * everything the parts read, which is the context's models, tables,
 * system and GPU (by id and address, as the operator and collective
 * memos of iter_ops.c key them: a hwdb entry does not change while it is
 * open, and a changed copy is another address), the model (by content),
 * what est_iter_ctx derives from the layout (but for the groups that
 * depend on DP), and the layout itself with only the fields of
 * memo_blind set to 0: fields no part reads. A field added to
 * space_layout is in the key unless it is put there. Whether memo_blind's
 * fields are indeed never read is tested under EST_MEMO_CHECK, which
 * times every hit again and counts the differences (tests/test_enum.c
 * runs every estimate so, tests/test_search.c test_layer_memo changes
 * each blind field alone).
 *
 * Not memoized: a part timed while a trace is kept (--ops: its rows are
 * written as it is timed), or added to a stage that is not zero (the
 * MTP module's head, added to its layer).
 */

#include "est_int.h"

#include <stdint.h>
#include <string.h>

/* Two ways a set, the older one replaced: a search meets a few hundred
 * keys, in an order of its own (its layouts sorted by time floor), which
 * a direct-mapped table of as many slots served at 94 % (bench/
 * sweep_speed: 1,107 parts timed a scenario), two ways at 98 % (362).
 * A slot is 1.3 KB: 1.3 MB a thread. */
#define MEMO_SETS 512 /* power of two */
#define MEMO_WAYS 2

/* The models this thread has met, by content: a tag each, never reused,
 * so a model freed and another read at its address is never taken for
 * it. */
#define MODEL_TAGS 4

typedef struct part_slot {
    est_memo_key key;         /* all 0: empty (a key's model tag is >= 1) */
    unsigned have;            /* bit p: part p is held */
    est_stage_time st[EST_PART_COUNT]; /* what each part adds to a zero
                                          stage */
    double w[EST_PART_COUNT];          /* and to a zero *w_acc */
} part_slot;

static _Thread_local part_slot part_memo[MEMO_SETS][MEMO_WAYS];
static _Thread_local unsigned char part_newer[MEMO_SETS]; /* the way last
                                                            filled */
static _Thread_local struct {
    space_model m;
    uint64_t tag;
} model_tags[MODEL_TAGS];
static _Thread_local uint64_t model_tag_next, model_tag_at;
/* EST_MEMO_CHECK: this memo's and mem_memo.c's */
static _Atomic int64_t checked_hits, checked_mismatches;

/* Sets the fields of l that no memoized part reads (est_layer_time_of,
 * est_first_stage_extra_of, est_last_stage_extra_of and what they call)
 * to 0: those a search varies between layouts that share their parts. */
static void memo_blind(space_layout *l)
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

uint64_t est_model_tag(const space_model *m)
{
    for (int i = 0; i < MODEL_TAGS; i++)
        if (model_tags[i].tag && !memcmp(&model_tags[i].m, m, sizeof *m))
            return model_tags[i].tag;
    int at = (int)(model_tag_at++ % MODEL_TAGS);
    model_tags[at].m = *m;
    model_tags[at].tag = ++model_tag_next;
    return model_tags[at].tag;
}

/* Spreads the fields that tell a search's parts apart; the whole key is
 * compared on a hit. */
static uint64_t memo_hash(const est_memo_key *k)
{
    uint64_t eff, h;
    memcpy(&eff, &k->eff, sizeof eff);
    h = k->ops * 0x9e3779b97f4a7c15u + k->comm * 0xbf58476d1ce4e5b9u
        + k->model * 0x94d049bb133111ebu
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

/* The slot of key k in this thread's memo: the way that holds it, else
 * the older way, which becomes k's (its parts dropped). */
static part_slot *memo_slot(const est_memo_key *k)
{
    size_t set = (size_t)(k->hash & (MEMO_SETS - 1));
    for (int w = 0; w < MEMO_WAYS; w++)
        if (!memcmp(&part_memo[set][w].key, k, sizeof *k))
            return &part_memo[set][w];
    int w = (part_newer[set] + 1) % MEMO_WAYS;
    part_newer[set] = (unsigned char)w;
    part_slot *sl = &part_memo[set][w];
    sl->key = *k;
    sl->have = 0;
    return sl;
}

const est_memo *est_memo_open(const est_iter_ctx *x, est_memo *m)
{
    if (!est_memo_mode() || x->c->trace) return NULL;
    est_memo_key *k = &m->key;
    memset(k, 0, sizeof *k); /* the padding too: keys compare as bytes */
    k->ops = est_models_id(x->c->ops);
    k->comm = est_comm_id(x->c->comm);
    k->sys = x->c->sys;
    k->gpu = x->c->gpu;
    k->model = est_model_tag(x->m);
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
    memo_blind(&k->l);
    k->hash = memo_hash(k);
    m->slot = memo_slot(k);
    return m;
}

static int stage_is_zero(const est_stage_time *st)
{
    static const est_stage_time zero;
    return !memcmp(st, &zero, sizeof zero);
}

/* Part `part` of x (timed by fn, with moe for a layer) added to *st: from
 * the memo where it may be, else timed, into the memo. The memo stores
 * what a part adds to zeros: timed into a zero stage and a zero w, which
 * are its bits added to *st and *x->w_acc when they are zero. */
static void memo_part(const est_iter_ctx *x, est_stage_time *st, int part,
                      void (*fn)(const est_iter_ctx *, est_stage_time *, int))
{
    int moe = part == EST_PART_MOE_LAYER;
    if (!x->memo || !stage_is_zero(st) || (x->w_acc && *x->w_acc != 0)) {
        fn(x, st, moe);
        return;
    }
    part_slot *sl = x->memo->slot; /* x's since est_memo_open */
    unsigned bit = 1u << part;
    int hit = (sl->have & bit) != 0;
    if (!hit || est_memo_mode() == EST_MEMO_CHECK) {
        est_iter_ctx y = *x;
        est_stage_time t = {0};
        double w = 0;
        y.w_acc = &w;
        fn(&y, &t, moe);
        if (hit)
            est_memo_count_check(memcmp(&t, &sl->st[part], sizeof t)
                                 || memcmp(&w, &sl->w[part], sizeof w));
        sl->have |= bit;
        sl->st[part] = t;
        sl->w[part] = w;
    }
    *st = sl->st[part];
    if (x->w_acc) *x->w_acc = sl->w[part];
}

static void first_of(const est_iter_ctx *x, est_stage_time *st, int moe)
{
    (void)moe;
    est_first_stage_extra_of(x, st);
}

static void last_of(const est_iter_ctx *x, est_stage_time *st, int moe)
{
    (void)moe;
    est_last_stage_extra_of(x, st);
}

void est_layer_time(const est_iter_ctx *x, est_stage_time *st, int moe)
{
    memo_part(x, st, moe ? EST_PART_MOE_LAYER : EST_PART_LAYER,
              est_layer_time_of);
}

void est_first_stage_extra(const est_iter_ctx *x, est_stage_time *st)
{
    memo_part(x, st, EST_PART_FIRST, first_of);
}

void est_last_stage_extra(const est_iter_ctx *x, est_stage_time *st)
{
    memo_part(x, st, EST_PART_LAST, last_of);
}

void est_memo_count_check(int mismatch)
{
    checked_hits++;
    if (mismatch) checked_mismatches++;
}

void est_memo_checked(int64_t *hits, int64_t *mismatches)
{
    *hits = checked_hits;
    *mismatches = checked_mismatches;
}
