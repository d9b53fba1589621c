/*
 * split.c - the pipeline split: which transformer layers each pipeline
 * rank and each of its model chunks holds, as Megatron-Core computes it,
 * and the rules by which Megatron-Core refuses a split (rows of
 * space_reject, named in layout.c's table).
 *
 * Megatron-Core (NVIDIA/Megatron-LM@d98e8a64ddf3, 2026-08-22) numbers the
 * model chunks as stages k = j x PP + r (chunk j of pipeline rank r) and
 * gives them the layers in that order. How many each holds:
 *  - by default L / PP a rank, and a rank's layers / VPP a chunk
 *    (megatron/core/transformer/transformer_block.py,
 *    get_num_layers_to_build; transformer_layer.py,
 *    get_transformer_layer_offset);
 *  - --account-for-embedding-in-pipeline-split and --account-for-loss-
 *    in-pipeline-split count the embedding and the loss as a layer each:
 *    (L + 1 or 2) / PP slots a rank, / VPP a chunk, and the first stage
 *    (the embedding's) and the last (the loss's) build one layer fewer
 *    (get_num_layers_to_build: "Reduce the number of layers to construct
 *    by 1 on the first (or last) stage"; the offsets of every later stage
 *    one less);
 *  - --decoder-first-pipeline-num-layers F and --decoder-last-pipeline-
 *    num-layers La set the first and the last rank's layers; the middle
 *    ranks share the rest evenly, each rank's over its VPP chunks
 *    (get_num_layers_to_build, get_transformer_layer_offset);
 *  - --pipeline-model-parallel-layout gives every stage's letters (E
 *    embedding, t transformer layer, m MTP module, L loss; '|' between
 *    stages, "(...)*N" and "x*N" repeat;
 *    megatron/core/transformer/pipeline_parallel_layer_layout.py,
 *    parse_str_to_list).
 * The embedding is built on stage 0 and the final norm, LM head and loss
 * on the last stage whatever the split (pre_process and post_process,
 * megatron/training/training.py get_model); the MTP modules on the last
 * stage (multi_token_prediction.py, get_mtp_num_layers_to_build), or where
 * a layout puts them.
 *
 * The rules, in the order Megatron-LM meets them (each message names the
 * values and the source): a layout string beside any other split option,
 * first/last layer counts beside the embedding or loss accounted for
 * (transformer_config.py __post_init__, ValueError); the layout's stages
 * not a multiple of PP (arguments.py validate_args), its VPP against the
 * one asked for (__post_init__), its letters (validate_layer_layout: E
 * first and once, L last and once, as many t as layers, the MTP modules
 * all in one chunk, the last of its rank, after every layer); the first
 * and last counts not multiples of VPP, the middle layers not filling the
 * middle ranks, a middle rank's not a multiple of VPP (__post_init__,
 * "Uneven PP"); (L + accounted) not a multiple of PP (validate_args:
 * "Number of layers should be divisible by the pipeline-model-parallel
 * size"), a rank's not a multiple of VPP (__post_init__, and the assert in
 * get_num_layers_to_build).
 *
 * Does not model hybrid (Mamba) layer patterns or encoder layers.
 */
#include "space.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t at_least_1(int64_t x)
{
    return x > 0 ? x : 1;
}

space_reject space_split_resolve(const space_model *m, const space_layout *l,
                                 space_split *s, char *why, size_t cap)
{
    return space_split_resolve_n(m->num_layers, m->mtp_layers, l, s, why,
                                 cap);
}

/* The layout string's rules (validate_layer_layout and the PP and VPP it
 * implies); SPACE_OK or the rule, with why. */
static space_reject layout_rules(const space_pp_layout *y, int64_t L,
                                 int64_t mtp, int64_t P, int64_t v, char *why,
                                 size_t cap)
{
#define RULE(code, ...)                                                       \
    do {                                                                      \
        if (cap) snprintf(why, cap, __VA_ARGS__);                             \
        return code;                                                          \
    } while (0)
    if (y->n % P)
        RULE(SPACE_REJECT_LAYOUT_STAGES,
             "the pipeline layout's %d stages are not a multiple of PP %lld "
             "(Megatron-LM validate_args)",
             y->n, (long long)P);
    if (y->n / P != v)
        RULE(SPACE_REJECT_LAYOUT_VPP,
             "the pipeline layout's %d stages on PP %lld are VPP %lld, not "
             "%lld (Megatron-Core transformer_config.py: "
             "virtual_pipeline_model_parallel_size conflicts with "
             "pipeline_model_parallel_layout)",
             y->n, (long long)P, (long long)(y->n / P), (long long)v);
    if (y->first != 'E' || y->n_e != 1)
        RULE(SPACE_REJECT_LAYOUT_LAYERS,
             "the pipeline layout must begin with the embedding E and hold "
             "it once (%lld found, the first letter '%c'; Megatron-Core "
             "validate_layer_layout)",
             (long long)y->n_e, y->first ? y->first : ' ');
    if (y->last != 'L' || y->n_loss != 1)
        RULE(SPACE_REJECT_LAYOUT_LAYERS,
             "the pipeline layout must end with the loss L and hold it once "
             "(%lld found, the last letter '%c'; Megatron-Core "
             "validate_layer_layout)",
             (long long)y->n_loss, y->last ? y->last : ' ');
    if (y->n_t != L)
        RULE(SPACE_REJECT_LAYOUT_LAYERS,
             "the pipeline layout holds %lld transformer layers (t), the "
             "model %lld (Megatron-Core validate_layer_layout)",
             (long long)y->n_t, (long long)L);
    /* Megatron-Core builds the embedding on stage 0 and the loss on the
     * last stage whatever the string says (training.py get_model:
     * pre_process, post_process): a layout that puts them elsewhere (an
     * empty stage before E) is not what would run. trainplan's rule. */
    if (!y->e[0] || !y->loss[y->n - 1])
        RULE(SPACE_REJECT_LAYOUT_LAYERS,
             "the pipeline layout puts the embedding or the loss off the "
             "first or last stage, where Megatron-Core builds them anyway "
             "(training.py get_model: pre_process, post_process)");
    if (y->n_mtp != mtp)
        RULE(SPACE_REJECT_LAYOUT_MTP,
             "the pipeline layout holds %lld MTP modules (m), the model "
             "%lld (Megatron-Core validate_layer_layout)",
             (long long)y->n_mtp, (long long)mtp);
    if (y->t_after_mtp)
        RULE(SPACE_REJECT_LAYOUT_MTP,
             "the pipeline layout places a transformer layer after an MTP "
             "module (Megatron-Core validate_layer_layout: decoder layers "
             "must be placed before MTP layers)");
    if (y->n_mtp > 0 && (y->mtp_stages != 1 || y->mtp_stage / P != v - 1))
        RULE(SPACE_REJECT_LAYOUT_MTP,
             "the pipeline layout spreads its MTP modules over %d stages or "
             "off a rank's last model chunk (stage %d on PP %lld x VPP %lld; "
             "Megatron-Core validate_layer_layout: all in one virtual "
             "pipeline stage, the last of its rank)",
             y->mtp_stages, y->mtp_stage, (long long)P, (long long)v);
#undef RULE
    return SPACE_OK;
}

space_reject space_split_resolve_n(int64_t layers, int64_t mtp,
                                   const space_layout *l, space_split *s,
                                   char *why, size_t cap)
{
    int64_t L = at_least_1(layers), P = at_least_1(l->pp),
            v = at_least_1(l->vpp);
    memset(s, 0, sizeof *s);
    s->pp = P, s->vpp = v, s->layers = L, s->mtp = mtp > 0 ? mtp : 0;
    int acc = l->pp_account > 0 ? l->pp_account & (SPACE_PP_EMBED | SPACE_PP_LOSS)
                                : 0;
    int e = (acc & SPACE_PP_EMBED) != 0, lo = (acc & SPACE_PP_LOSS) != 0;
    int64_t f = l->pp_first, la = l->pp_last;
    space_reject rj = SPACE_OK;
    if (cap) why[0] = '\0';
#define REJECT(code, ...)                                                     \
    do {                                                                      \
        if (cap) snprintf(why, cap, __VA_ARGS__);                             \
        rj = code;                                                            \
        goto fallback;                                                        \
    } while (0)
    if (l->pp_layout) {
        if (acc || f || la)
            REJECT(SPACE_REJECT_SPLIT_CONFLICT,
                   "a pipeline layout string cannot be set with other "
                   "pipeline split options (first %lld, last %lld layers, "
                   "embedding %d, loss %d accounted for; Megatron-Core "
                   "transformer_config.py)",
                   (long long)f, (long long)la, e, lo);
        rj = layout_rules(l->pp_layout, L, s->mtp, P, v, why, cap);
        if (rj != SPACE_OK) goto fallback;
        s->lay = l->pp_layout;
        return SPACE_OK;
    }
    if ((f || la) && acc)
        REJECT(SPACE_REJECT_SPLIT_CONFLICT,
               "first and last stage layer counts (%lld, %lld) cannot be set "
               "with the embedding or the loss accounted for in the split "
               "(Megatron-Core transformer_config.py)",
               (long long)f, (long long)la);
    /* the grid's marks (space_grid_layout) */
    if (f == -2 && la == -2)
        REJECT(SPACE_REJECT_SPLIT_SAME,
               "this split puts the same layers on every model chunk of PP "
               "%lld x VPP %lld as a split before it: the same layout",
               (long long)P, (long long)v);
    if (f < 0 || la < 0)
        REJECT(SPACE_REJECT_SPLIT_NONE,
               "no first and last stage layer counts balance the ends of %lld "
               "layers over PP %lld x VPP %lld (each a positive multiple of "
               "VPP, the middle ranks' a multiple too)",
               (long long)L, (long long)P, (long long)v);
    if (f || la) {
        if (v > 1 && f % v)
            REJECT(SPACE_REJECT_END_VPP,
                   "%lld layers on the first stage are not divisible by VPP "
                   "%lld (Megatron-Core transformer_config.py)",
                   (long long)f, (long long)v);
        if (v > 1 && la % v)
            REJECT(SPACE_REJECT_END_VPP,
                   "%lld layers on the last stage are not divisible by VPP "
                   "%lld (Megatron-Core transformer_config.py)",
                   (long long)la, (long long)v);
        int64_t rest = L - f - la, stages = P - (f > 0) - (la > 0);
        if (rest < 0 || stages < 0 || (rest != 0) != (stages != 0))
            REJECT(SPACE_REJECT_MIDDLE,
                   "%lld middle layers (%lld - first %lld - last %lld) for %lld "
                   "middle stages of PP %lld (Megatron-Core "
                   "transformer_config.py: either middle stages and layers or "
                   "none)",
                   (long long)rest, (long long)L, (long long)f, (long long)la,
                   (long long)stages, (long long)P);
        if (stages > 0 && rest % stages)
            REJECT(SPACE_REJECT_MIDDLE,
                   "%lld middle layers are not divisible by the %lld middle "
                   "stages of PP %lld (Megatron-Core transformer_config.py)",
                   (long long)rest, (long long)stages, (long long)P);
        int64_t mid = stages > 0 ? rest / stages : 0;
        if (stages > 0 && v > 1 && mid % v)
            REJECT(SPACE_REJECT_MIDDLE_VPP,
                   "%lld layers on each middle stage are not divisible by "
                   "VPP %lld (Megatron-Core transformer_config.py)",
                   (long long)mid, (long long)v);
        s->mid = mid / v;
        s->first = (f ? f : mid) / v;
        s->last = (la ? la : mid) / v;
        /* one rank: the last stage's count wins (get_num_layers_to_build) */
        if (P == 1) s->first = s->last;
        return SPACE_OK;
    }
    int64_t slots = L + e + lo;
    if (slots % P)
        REJECT(SPACE_REJECT_PP_LAYERS,
               "%lld layers%s are not divisible by PP %lld (Megatron-LM "
               "validate_args)",
               (long long)slots,
               e && lo ? " (the embedding and the loss counted)"
               : e     ? " (the embedding counted)"
               : lo    ? " (the loss counted)"
                       : "",
               (long long)P);
    if ((slots / P) % v)
        REJECT(SPACE_REJECT_VPP_LAYERS,
               "%lld layers per pipeline stage%s are not divisible by VPP "
               "%lld (Megatron-Core transformer_config.py)",
               (long long)(slots / P),
               e || lo ? " (with what is accounted for)" : "", (long long)v);
    s->first = s->mid = s->last = slots / P / v;
    s->embed = e, s->loss = lo;
    return SPACE_OK;
fallback:
#undef REJECT
    s->lay = NULL;
    s->embed = s->loss = 0;
    s->first = s->mid = s->last = L / (P * v);
    s->extra = L % (P * v);
    return rj;
}

void space_split_chunk(const space_split *s, int64_t r, int64_t j,
                       space_chunk *out)
{
    int64_t P = s->pp, v = s->vpp, k = j * P + r, end = P * v - 1;
    out->embedding = k == 0;
    out->head = k == end;
    if (s->lay) {
        out->layers = s->lay->t[k];
        out->offset = s->lay->before[k];
        out->mtp = s->lay->mtp[k];
        return;
    }
    int64_t size = r == 0 ? s->first : r == P - 1 ? s->last : s->mid;
    int64_t row = P == 1 ? s->first : s->first + (P - 2) * s->mid + s->last;
    int64_t off = j * row + (r > 0 ? s->first : 0)
                  + (r > 1 ? (r - 1) * s->mid : 0);
    if (s->extra) {
        size += k < s->extra;
        off += k < s->extra ? k : s->extra;
    }
    if (k == 0) size -= s->embed;
    else off -= s->embed;
    if (k == end) size -= s->loss;
    out->layers = size > 0 ? size : 0;
    out->offset = off;
    out->mtp = k == end ? s->mtp : 0;
}

int64_t space_split_rank_layers(const space_split *s, int64_t r)
{
    if (!s->lay && !s->extra) { /* a formula split: VPP alike chunks */
        int64_t size = r == 0 ? s->first : r == s->pp - 1 ? s->last : s->mid;
        int64_t n = s->vpp * size - (r == 0 ? s->embed : 0)
                    - (r == s->pp - 1 ? s->loss : 0);
        return n > 0 ? n : 0;
    }
    int64_t n = 0;
    for (int64_t j = 0; j < s->vpp; j++) {
        space_chunk c;
        space_split_chunk(s, r, j, &c);
        n += c.layers;
    }
    return n;
}

int64_t space_split_max_chunk(const space_split *s)
{
    int64_t best = 0, P = s->pp, v = s->vpp;
    if (s->lay) {
        for (int i = 0; i < s->lay->n; i++)
            if (s->lay->t[i] > best) best = s->lay->t[i];
        return best;
    }
    /* A formula split's chunks differ by rank class (first, middle,
     * last) and at the two ends: these positions hold every size. */
    const int64_t pos[6][2] = {{0, 0},     {0, v > 1},     {P > 2, 0},
                               {P - 1, 0}, {P - 1, v - 1}, {P - 1, v > 1}};
    for (int i = 0; i < 6; i++) {
        space_chunk c;
        space_split_chunk(s, pos[i][0], pos[i][1], &c);
        if (c.layers > best) best = c.layers;
    }
    return best;
}

int space_split_accounted(const space_layout *l)
{
    int acc = l->pp_account > 0 ? l->pp_account : 0;
    return ((acc & SPACE_PP_EMBED) != 0) + ((acc & SPACE_PP_LOSS) != 0);
}

int64_t space_rank_layers(const space_model *m, const space_layout *l,
                          int64_t r)
{
    space_split s;
    space_split_resolve(m, l, &s, NULL, 0);
    return space_split_rank_layers(&s, r);
}

int space_split_same(const space_split *a, const space_split *b)
{
    if (a->pp != b->pp || a->vpp != b->vpp || a->layers != b->layers)
        return 0;
    if (a->lay || b->lay) return a->lay == b->lay;
    int64_t P = a->pp, v = a->vpp;
    const int64_t pos[7][2] = {{0, 0},     {0, v > 1},     {0, v - 1},
                               {P > 2, 0}, {P - 1, 0},     {P - 1, v - 1},
                               {P - 1, v > 1}};
    for (int i = 0; i < 7; i++) {
        space_chunk x, y;
        space_split_chunk(a, pos[i][0], pos[i][1], &x);
        space_split_chunk(b, pos[i][0], pos[i][1], &y);
        if (x.layers != y.layers || x.offset != y.offset) return 0;
    }
    return a->extra == b->extra;
}

int space_split_ends(int64_t layers, int64_t pp, int64_t vpp, int64_t *first,
                     int64_t *last)
{
    if (pp < 2 || vpp < 1 || layers < 1 || layers % vpp) return 0;
    int64_t n;
    if (pp == 2) {
        n = layers / vpp;
    } else {
        int64_t per = pp * vpp;
        int64_t mid = vpp * ((layers + per - 1) / per);
        int64_t rest = layers - (pp - 2) * mid;
        if (rest < 2 * vpp) return 0;
        n = rest / vpp;
    }
    if (n < 2) return 0;
    *first = (n - n / 2) * vpp;
    *last = (n / 2) * vpp;
    return 1;
}

double space_split_recompute_layers(const space_split *s,
                                    const space_layout *l, int64_t r)
{
    if (l->recompute == SPACE_RECOMPUTE_NONE) return 0;
    if (l->recompute != SPACE_RECOMPUTE_FULL
        || l->recompute_method != SPACE_RECOMPUTE_BLOCK
        || l->recompute_layers <= 0)
        return (double)space_split_rank_layers(s, r);
    int64_t n = 0;
    for (int64_t j = 0; j < s->vpp; j++) {
        space_chunk c;
        space_split_chunk(s, r, j, &c);
        n += c.layers < l->recompute_layers ? c.layers : l->recompute_layers;
    }
    return (double)n;
}

double space_recompute_layers(const space_model *m, const space_layout *l,
                              int64_t r)
{
    space_split s;
    space_split_resolve(m, l, &s, NULL, 0);
    return space_split_recompute_layers(&s, l, r);
}

/* ---- the search's splits ------------------------------------------------ */

const char *const space_split_kind_names[SPACE_SPLIT_KIND_COUNT] = {
    [SPACE_SPLIT_EVEN] = "even",
    [SPACE_SPLIT_EMBED] = "embedding",
    [SPACE_SPLIT_LOSS] = "loss",
    [SPACE_SPLIT_EMBED_LOSS] = "embedding+loss",
    [SPACE_SPLIT_ENDS] = "ends",
    [SPACE_SPLIT_GIVEN] = "given",
};
_Static_assert(sizeof space_split_kind_names / sizeof space_split_kind_names[0]
                   == SPACE_SPLIT_KIND_COUNT,
               "space_split_kind_names names every split kind");

void space_split_kind_apply(space_split_kind k, int64_t layers,
                            space_layout *l)
{
    if (k == SPACE_SPLIT_GIVEN || (unsigned)k >= SPACE_SPLIT_KIND_COUNT)
        return;
    l->pp_first = l->pp_last = 0;
    l->pp_account = k == SPACE_SPLIT_EMBED        ? SPACE_PP_EMBED
                    : k == SPACE_SPLIT_LOSS       ? SPACE_PP_LOSS
                    : k == SPACE_SPLIT_EMBED_LOSS ? SPACE_PP_EMBED | SPACE_PP_LOSS
                                                  : 0;
    if (k == SPACE_SPLIT_ENDS
        && !space_split_ends(layers, l->pp, l->vpp, &l->pp_first,
                             &l->pp_last))
        l->pp_first = l->pp_last = -1;
}

char *space_split_str(const space_layout *l, char *buf, size_t cap)
{
    int acc = l->pp_account > 0 ? l->pp_account : 0;
    if (!cap) return buf;
    buf[0] = '\0';
    if (l->pp_layout)
        snprintf(buf, cap, "layout %s", l->pp_layout->text);
    else if (acc)
        snprintf(buf, cap, "%s as %s",
                 acc == (SPACE_PP_EMBED | SPACE_PP_LOSS) ? "embedding and loss"
                 : acc & SPACE_PP_EMBED                  ? "embedding"
                                                         : "loss",
                 acc == (SPACE_PP_EMBED | SPACE_PP_LOSS) ? "layers" : "a layer");
    else if (l->pp_first > 0 && l->pp_last > 0)
        snprintf(buf, cap, "first stage %lld, last stage %lld layers",
                 (long long)l->pp_first, (long long)l->pp_last);
    else if (l->pp_first > 0)
        snprintf(buf, cap, "first stage %lld layers", (long long)l->pp_first);
    else if (l->pp_last > 0)
        snprintf(buf, cap, "last stage %lld layers", (long long)l->pp_last);
    return buf;
}

/* Whether the resolved split s puts st[k] layers on every stage k. */
static int split_is(const space_split *s, const int64_t *st, int n)
{
    if (s->pp * s->vpp != n) return 0;
    for (int k = 0; k < n; k++) {
        space_chunk c;
        space_split_chunk(s, k % s->pp, k / s->pp, &c);
        if (c.layers != st[k]) return 0;
    }
    return 1;
}

int space_split_from_stages(int64_t layers, int64_t mtp, int64_t pp,
                            const int64_t *st, int n, space_layout *l,
                            space_pp_layout *store)
{
    if (n < 1 || pp < 1 || n % pp || n > SPACE_PP_LAYOUT_MAX) return -1;
    int64_t sum = 0;
    for (int k = 0; k < n; k++) {
        if (st[k] < 0) return -1;
        sum += st[k];
    }
    if (sum != layers) return -1;
    space_layout t = *l;
    t.pp = pp, t.vpp = n / pp, t.pp_layout = NULL;
    space_split s;
    /* Megatron-Core's own options first, the plainest first */
    for (int k = SPACE_SPLIT_EVEN; k <= SPACE_SPLIT_EMBED_LOSS; k++) {
        space_split_kind_apply((space_split_kind)k, layers, &t);
        if (space_split_resolve_n(layers, 0, &t, &s, NULL, 0) == SPACE_OK
            && split_is(&s, st, n))
            goto found;
    }
    t.pp_account = 0;
    int64_t f = 0, la = 0;
    for (int64_t j = 0; j < t.vpp; j++)
        f += st[j * pp], la += st[j * pp + pp - 1];
    const int64_t fl[3][2] = {{f, 0}, {0, la}, {f, la}};
    for (int i = 0; i < 3; i++) {
        if (fl[i][0] + fl[i][1] == 0) continue;
        t.pp_first = fl[i][0], t.pp_last = fl[i][1];
        if (space_split_resolve_n(layers, 0, &t, &s, NULL, 0) == SPACE_OK
            && split_is(&s, st, n))
            goto found;
    }
    {
        /* a layout string: equal middle stages as (t*N|)*K runs */
        char buf[sizeof store->text];
        size_t w = 0;
#define PUT(...)                                                                  do {                                                                              int x_ = snprintf(buf + w, w < sizeof buf ? sizeof buf - w : 0,                                 __VA_ARGS__);                                               if (x_ < 0 || (size_t)x_ >= sizeof buf - w) return -1;                       w += (size_t)x_;                                                          } while (0)
        for (int k = 0; k < n;) {
            int run = 1;
            if (k > 0)
                while (k + run < n - 1 && st[k + run] == st[k]) run++;
            if (run > 1) {
                if (st[k] == 1) PUT("(t|)*%d", run);
                else if (st[k] == 0) PUT("(|)*%d", run);
                else PUT("(t*%lld|)*%d", (long long)st[k], run);
            } else {
                if (k == 0) PUT("E");
                if (st[k] == 1) PUT("t");
                else if (st[k] > 1) PUT("t*%lld", (long long)st[k]);
                if (k == n - 1) {
                    if (mtp == 1) PUT("m");
                    else if (mtp > 1) PUT("m*%lld", (long long)mtp);
                    PUT("L");
                } else {
                    PUT("|");
                }
            }
            k += run;
        }
#undef PUT
        if (space_pp_layout_parse(buf, store, NULL, 0)) return -1;
        t.pp_account = 0, t.pp_first = t.pp_last = 0;
        t.pp_layout = store;
    }
found:
    l->pp = t.pp, l->vpp = t.vpp;
    l->pp_account = t.pp_account;
    l->pp_first = t.pp_first, l->pp_last = t.pp_last;
    l->pp_layout = t.pp_layout;
    return 0;
}

/* ---- the layout string -------------------------------------------------- */

/* A growable string, for unrolling. */
typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

#define UNROLL_MAX 1000000 /* letters once unrolled */

static int sb_put(sbuf *b, const char *s, size_t n, size_t times)
{
    if (times && n > (UNROLL_MAX - b->n) / times) return -1;
    size_t need = b->n + n * times + 1;
    if (need > b->cap) {
        b->cap = need > 2 * b->cap ? need : 2 * b->cap;
        b->p = tp_xrealloc(b->p, b->cap);
    }
    for (size_t t = 0; t < times; t++, b->n += n) memcpy(b->p + b->n, s, n);
    b->p[b->n] = '\0';
    return 0;
}

/* One of parse_str_to_list's re.sub passes over s: pass 0 unrolls
 * "(...)*N" (the group is everything up to the first ')'), pass 1 "x*N"
 * (any one character). Python's re.sub: left to right, each match
 * replaced, the scan going on after it. Returns the new string (the
 * caller frees it), or NULL past UNROLL_MAX letters. */
static char *unroll_pass(const char *s, int pass)
{
    sbuf b = {0};
    size_t len = strlen(s);
    sb_put(&b, "", 0, 0);
    for (size_t i = 0; i < len;) {
        size_t g0 = i, g1 = i, star = 0;
        if (pass == 0 && s[i] == '(') {
            const char *close = strchr(s + i + 1, ')');
            if (close && close > s + i + 1) {
                g0 = i + 1, g1 = (size_t)(close - s);
                star = g1 + 1;
            }
        } else if (pass == 1 && i + 1 < len) {
            g0 = i, g1 = i + 1, star = i + 1;
        }
        if (star && star + 1 < len && s[star] == '*' && s[star + 1] >= '0'
            && s[star + 1] <= '9') {
            size_t d = star + 1, times = 0;
            while (d < len && s[d] >= '0' && s[d] <= '9') {
                if (times > UNROLL_MAX) break;
                times = times * 10 + (size_t)(s[d] - '0');
                d++;
            }
            if (times > UNROLL_MAX || sb_put(&b, s + g0, g1 - g0, times)) {
                free(b.p);
                return NULL;
            }
            while (d < len && s[d] >= '0' && s[d] <= '9') d++;
            i = d;
            continue;
        }
        if (sb_put(&b, s + i, 1, 1)) {
            free(b.p);
            return NULL;
        }
        i++;
    }
    return b.p;
}

int space_pp_layout_parse(const char *s, space_pp_layout *out, char *why,
                          size_t cap)
{
    memset(out, 0, sizeof *out);
    out->mtp_stage = -1;
    size_t len = strlen(s);
    if (len >= sizeof out->text) {
        if (cap)
            snprintf(why, cap,
                     "pipeline layout string of %zu characters: at most %zu",
                     len, sizeof out->text - 1);
        return -1;
    }
    snprintf(out->text, sizeof out->text, "%s", s);
    char *a = tp_xmalloc(len + 1), *b;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) /* purely cosmetic commas */
        if (s[i] != ',') a[n++] = s[i];
    a[n] = '\0';
    for (int pass = 0; pass < 2; pass++, a = b) {
        b = unroll_pass(a, pass);
        free(a);
        if (!b) {
            if (cap)
                snprintf(why, cap,
                         "pipeline layout '%s': more than %d letters once "
                         "unrolled",
                         s, UNROLL_MAX);
            return -1;
        }
    }
    int k = 0, seen_mtp = 0;
    int64_t t_total = 0;
    for (const char *p = a; *p; p++) {
        char c = *p;
        if (c == '|') {
            if (++k >= SPACE_PP_LAYOUT_MAX) {
                if (cap)
                    snprintf(why, cap,
                             "pipeline layout '%s': more than %d stages", s,
                             SPACE_PP_LAYOUT_MAX);
                free(a);
                return -1;
            }
            out->before[k] = (int32_t)t_total;
            continue;
        }
        if (!strchr("ELtm", c) || c == '\0') {
            if (cap)
                snprintf(why, cap,
                         "pipeline layout '%s': invalid layer character '%c' "
                         "(known: E embedding, t transformer layer, m MTP "
                         "module, L loss; '|' between stages, (...)*N and "
                         "x*N repeat; Megatron-Core parse_str_to_list)",
                         s, c);
            free(a);
            return -1;
        }
        if (!out->first) out->first = c;
        out->last = c;
        if (c == 't') {
            out->t[k]++, t_total++, out->n_t++;
            if (seen_mtp) out->t_after_mtp = 1;
        } else if (c == 'm') {
            if (!out->mtp[k]) {
                out->mtp_stages++;
                if (out->mtp_stage < 0) out->mtp_stage = k;
            }
            out->mtp[k]++, out->n_mtp++;
            seen_mtp = 1;
        } else if (c == 'E') {
            out->e[k] = 1;
            out->n_e++;
        } else {
            out->loss[k] = 1;
            out->n_loss++;
        }
    }
    out->n = k + 1;
    free(a);
    return 0;
}
