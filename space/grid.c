/*
 * grid.c - the layouts a search enumerates: candidate values per field,
 * a number -> layout mapping (mixed radix, TP most significant) so that
 * the enumeration needs no list of layouts and any thread can map any
 * range of numbers, the check of an enumerated layout (space_layout_check
 * plus the four enumeration-only rules of the same table), and the
 * layout tag the output prints.
 *
 * Does not estimate anything or know the hardware beyond a node's size:
 * memory and time are the estimator's, ranking the search's.
 */
#include "space.h"

#include <stdio.h>
#include <string.h>

const char *const space_dim_names[SPACE_DIM_COUNT] = {
    [SPACE_DIM_TP] = "tp",   [SPACE_DIM_PP] = "pp",
    [SPACE_DIM_CP] = "cp",   [SPACE_DIM_EP] = "ep",
    [SPACE_DIM_ETP] = "etp", [SPACE_DIM_VPP] = "vpp",
    [SPACE_DIM_SPLIT] = "split",
    [SPACE_DIM_MBS] = "mbs", [SPACE_DIM_SP] = "sp",
    [SPACE_DIM_RECOMPUTE] = "recompute", [SPACE_DIM_ZERO] = "zero",
};
_Static_assert(sizeof space_dim_names / sizeof space_dim_names[0]
                   == SPACE_DIM_COUNT,
               "space_dim_names names every space_dim");

static void set_list(space_grid *g, space_dim d, const int64_t *v, int n)
{
    g->n[d] = 0;
    for (int i = 0; i < n && g->n[d] < SPACE_GRID_MAX; i++)
        g->v[d][g->n[d]++] = v[i];
}

void space_grid_default(space_grid *g, const space_model *m, int64_t max_tp,
                        int64_t max_pp, int64_t max_ep)
{
    memset(g, 0, sizeof *g);
    int64_t v[SPACE_GRID_MAX];
    int n = 0;
    for (int64_t t = 1; t <= max_tp && n < SPACE_GRID_MAX; t *= 2) v[n++] = t;
    if (n == 0) v[n++] = 1;
    set_list(g, SPACE_DIM_TP, v, n);
    n = 0;
    /* Every PP: the split rules (split.c) say which of them Megatron-Core
     * can run with which VPP and split. What the list cannot hold is
     * left out and reported (pp_beyond). */
    int64_t pp_hi = m->num_layers < max_pp ? m->num_layers : max_pp;
    for (int64_t p = 1; p <= pp_hi && n < SPACE_GRID_MAX; p++) v[n++] = p;
    if (n == 0) v[n++] = 1;
    if (pp_hi > v[n - 1]) g->pp_beyond = v[n - 1];
    set_list(g, SPACE_DIM_PP, v, n);
    static const int64_t cps[] = {1, 2, 4, 8},
                         mbss[] = {1, 2, 4, 8, 16}, sps[] = {0, 1},
                         rcs[] = {SPACE_RECOMPUTE_NONE,
                                  SPACE_RECOMPUTE_SELECTIVE,
                                  SPACE_RECOMPUTE_FULL},
                         zeros[] = {SPACE_ZERO_NONE, SPACE_ZERO_1};
    set_list(g, SPACE_DIM_CP, cps, 4);
    /* Mixture of experts: EP powers of two dividing the experts (as
     * Megatron-Core's MoE recipes pick them), ETP = TP (0) or 1 (Megatron-
     * Core's two common choices, arXiv 2504.14960 section 4). Dense: the
     * one value 0, which adds no digit's worth of layouts. */
    static const int64_t none[] = {0}, etps[] = {0, 1};
    n = 0;
    for (int64_t e = 1; m->num_experts > 0 && e <= m->num_experts
                        && (max_ep <= 0 || e <= max_ep) && n < SPACE_GRID_MAX;
         e *= 2)
        if (m->num_experts % e == 0) v[n++] = e;
    if (n == 0) set_list(g, SPACE_DIM_EP, none, 1);
    else set_list(g, SPACE_DIM_EP, v, n);
    if (m->num_experts > 0) set_list(g, SPACE_DIM_ETP, etps, 2);
    else set_list(g, SPACE_DIM_ETP, none, 1);
    /* Every VPP that gives each chunk a layer on two ranks or more; the
     * split rules say which fill the chunks as Megatron-Core can. */
    n = 0;
    int64_t vpp_hi = m->num_layers / 2 > 1 ? m->num_layers / 2 : 1;
    for (int64_t x = 1; x <= vpp_hi && n < SPACE_GRID_MAX; x++) v[n++] = x;
    if (vpp_hi > v[n - 1]) g->vpp_beyond = v[n - 1];
    set_list(g, SPACE_DIM_VPP, v, n);
    static const int64_t splits[] = {SPACE_SPLIT_EVEN, SPACE_SPLIT_EMBED,
                                     SPACE_SPLIT_LOSS, SPACE_SPLIT_EMBED_LOSS,
                                     SPACE_SPLIT_ENDS};
    set_list(g, SPACE_DIM_SPLIT, splits, 5);
    g->layers = m->num_layers;
    set_list(g, SPACE_DIM_MBS, mbss, 5);
    set_list(g, SPACE_DIM_SP, sps, 2);
    set_list(g, SPACE_DIM_RECOMPUTE, rcs, 3);
    set_list(g, SPACE_DIM_ZERO, zeros, 2);
}

int space_grid_fix(space_grid *g, space_dim d, int64_t v)
{
    int64_t hi = d == SPACE_DIM_SP          ? 1
                 : d == SPACE_DIM_RECOMPUTE ? SPACE_RECOMPUTE_COUNT - 1
                 : d == SPACE_DIM_ZERO      ? SPACE_ZERO_COUNT - 1
                 : d == SPACE_DIM_SPLIT     ? SPACE_SPLIT_KIND_COUNT - 1
                                            : 1 << 20;
    int64_t lo = d == SPACE_DIM_SP || d == SPACE_DIM_RECOMPUTE
                         || d == SPACE_DIM_ZERO || d == SPACE_DIM_ETP
                         || d == SPACE_DIM_SPLIT
                     ? 0 : 1;
    if ((unsigned)d >= SPACE_DIM_COUNT || v < lo || v > hi) return -1;
    g->v[d][0] = v;
    g->n[d] = 1;
    return 0;
}

int64_t space_grid_size(const space_grid *g)
{
    int64_t n = 1;
    for (int d = 0; d < SPACE_DIM_COUNT; d++) n *= g->n[d];
    return n;
}

int64_t space_grid_block(const space_grid *g, space_dim d)
{
    int64_t n = 1;
    for (int k = (int)d + 1; k < SPACE_DIM_COUNT; k++) n *= g->n[k];
    return n;
}

int space_grid_digit(const space_grid *g, int64_t idx, space_dim d)
{
    return (int)((idx / space_grid_block(g, d)) % g->n[d]);
}

/* l's split as the grid's split number `digit` says, and marked for
 * space_grid_check: pp_first = pp_last = -1 where the balanced ends have
 * no counts (SPACE_REJECT_SPLIT_NONE), -2 where a split earlier in the
 * list puts the same layers on every chunk (SPACE_REJECT_SPLIT_SAME). A
 * split Megatron-Core refuses is left for its own rule. */
static void mark_split(const space_grid *g, int digit, space_layout *l)
{
    space_split_kind k = (space_split_kind)g->v[SPACE_DIM_SPLIT][digit];
    space_split_kind_apply(k, g->layers, l);
    if (k == SPACE_SPLIT_GIVEN || l->pp_first < 0 || digit == 0) return;
    /* The same (PP, VPP, split) for the layouts of a scan's inner fields
     * (micro-batch, SP, recompute, ZeRO), which follow each other: the
     * last answer, per thread. */
    static _Thread_local struct {
        const space_grid *g;
        int64_t layers, pp, vpp;
        int digit, same;
    } last;
    if (last.g == g && last.layers == g->layers && last.pp == l->pp
        && last.vpp == l->vpp && last.digit == digit) {
        if (last.same) {
            l->pp_first = l->pp_last = -2;
            l->pp_account = 0;
        }
        return;
    }
    last.g = g, last.layers = g->layers, last.pp = l->pp, last.vpp = l->vpp;
    last.digit = digit, last.same = 0;
    space_split me, other;
    if (space_split_resolve_n(g->layers, 0, l, &me, NULL, 0) != SPACE_OK)
        return;
    for (int i = 0; i < digit; i++) {
        space_split_kind ki = (space_split_kind)g->v[SPACE_DIM_SPLIT][i];
        if (ki == SPACE_SPLIT_GIVEN) continue;
        space_layout t = *l;
        space_split_kind_apply(ki, g->layers, &t);
        if (t.pp_first < 0
            || space_split_resolve_n(g->layers, 0, &t, &other, NULL, 0)
                   != SPACE_OK)
            continue;
        if (space_split_same(&me, &other)) {
            l->pp_first = l->pp_last = -2;
            l->pp_account = 0;
            last.same = 1;
            return;
        }
    }
}

void space_grid_layout(const space_grid *g, int64_t idx, int64_t gpus,
                       const space_layout *base, space_layout *out)
{
    int digit[SPACE_DIM_COUNT];
    for (int d = SPACE_DIM_COUNT - 1; d >= 0; d--) {
        digit[d] = (int)(idx % g->n[d]);
        idx /= g->n[d];
    }
    space_grid_layout_at(g, digit, gpus, base, out);
}

void space_grid_layout_at(const space_grid *g, const int *digit, int64_t gpus,
                          const space_layout *base, space_layout *out)
{
    int64_t val[SPACE_DIM_COUNT];
    for (int d = 0; d < SPACE_DIM_COUNT; d++) val[d] = g->v[d][digit[d]];
    *out = *base;
    out->tp = val[SPACE_DIM_TP];
    out->pp = val[SPACE_DIM_PP];
    out->cp = val[SPACE_DIM_CP];
    out->ep = val[SPACE_DIM_EP];
    out->etp = val[SPACE_DIM_ETP];
    /* An etp equal to tp written out is etp 0 again where the list holds
     * 0 too: marked (-1) for space_grid_check to reject as a duplicate. */
    if (out->etp > 0 && out->etp == out->tp)
        for (int i = 0; i < g->n[SPACE_DIM_ETP]; i++)
            if (g->v[SPACE_DIM_ETP][i] == 0) out->etp = -1;
    out->vpp = val[SPACE_DIM_VPP];
    mark_split(g, digit[SPACE_DIM_SPLIT], out);
    out->mbs = val[SPACE_DIM_MBS];
    out->sp = (int)val[SPACE_DIM_SP];
    out->recompute = (space_recompute)val[SPACE_DIM_RECOMPUTE];
    out->zero = (space_zero)val[SPACE_DIM_ZERO];
    int64_t mp = out->tp * out->pp * out->cp;
    out->dp = mp > 0 && gpus % mp == 0 ? gpus / mp : 0;
}

space_reject space_grid_check(const space_model *m, const space_layout *l,
                              int64_t gpus, int gpus_per_node, char *why,
                              size_t cap)
{
    int64_t mp = l->tp * l->pp * l->cp;
    if (mp < 1 || gpus % mp || l->dp != gpus / mp) {
        if (cap)
            snprintf(why, cap,
                     "TP %lld x PP %lld x CP %lld does not divide %lld GPUs",
                     (long long)l->tp, (long long)l->pp, (long long)l->cp,
                     (long long)gpus);
        return SPACE_REJECT_GPUS;
    }
    if (l->etp < 0) {
        if (cap)
            snprintf(why, cap,
                     "expert TP %lld = TP written out is the layout with "
                     "expert TP left at TP", (long long)l->tp);
        return SPACE_REJECT_ETP_TP;
    }
    space_reject r = space_layout_check(m, l, gpus_per_node, why, cap);
    if (r != SPACE_OK) return r;
    if (l->sp && l->tp == 1) {
        if (cap)
            snprintf(why, cap,
                     "sequence parallelism with TP 1 is the layout without "
                     "it");
        return SPACE_REJECT_SP_TP1;
    }
    if (l->zero != SPACE_ZERO_NONE && l->dp * l->cp == 1) {
        if (cap)
            snprintf(why, cap,
                     "ZeRO with DP x CP 1 shards nothing: the layout without "
                     "it");
        return SPACE_REJECT_ZERO_DP1;
    }
    return SPACE_OK;
}

char *space_layout_tag(const space_layout *l, int gpus_per_node, char *buf,
                       size_t cap)
{
    int64_t gpus = l->tp * l->pp * l->cp * l->dp;
    int64_t gpn = gpus_per_node > 0 ? gpus_per_node : gpus;
    if (gpus < gpn) gpn = gpus;
    if (gpn < 1) gpn = 1;
    int64_t nodes = (gpus + gpn - 1) / gpn;
    char cp[32] = "", vpp[96] = "", ep[48] = "";
    if (l->cp > 1) snprintf(cp, sizeof cp, "cp%lld", (long long)l->cp);
    /* MoE layouts only (ep set), so dense tags are as before. */
    if (l->ep > 0 && space_layout_etp(l) != l->tp)
        snprintf(ep, sizeof ep, "_ep%lld_etp%lld", (long long)l->ep,
                 (long long)space_layout_etp(l));
    else if (l->ep > 0)
        snprintf(ep, sizeof ep, "_ep%lld", (long long)l->ep);
    if (l->vpp > 1) snprintf(vpp, sizeof vpp, "_vpp%lld", (long long)l->vpp);
    /* The pipeline split where it is not Megatron-Core's default: _ae,
     * _al, _ael (embedding, loss, both accounted for), _f{N}l{N} (first
     * and last stage layers; one of them alone as given), _lay (a layout
     * string). */
    char split[48] = "";
    int acc = l->pp_account > 0 ? l->pp_account : 0;
    if (l->pp_layout)
        snprintf(split, sizeof split, "_lay");
    else if (acc)
        snprintf(split, sizeof split, "_a%s%s", acc & SPACE_PP_EMBED ? "e" : "",
                 acc & SPACE_PP_LOSS ? "l" : "");
    else if (l->pp_first > 0 || l->pp_last > 0) {
        int w = 0;
        if (l->pp_first > 0)
            w = snprintf(split, sizeof split, "_f%lld", (long long)l->pp_first);
        if (l->pp_last > 0)
            snprintf(split + w, sizeof split - (size_t)w, "%sl%lld",
                     w ? "" : "_", (long long)l->pp_last);
    }
    size_t nv = strlen(vpp);
    snprintf(vpp + nv, sizeof vpp - nv, "%s", split);
    static const char *const rc[SPACE_RECOMPUTE_COUNT] = {"", "_rsel",
                                                          "_rfull", "_rop"};
    static const char *const z[SPACE_ZERO_COUNT] = {"", "_z1", "_z2", "_z3"};
    /* Partial full recomputation: the method and N, where it differs from
     * Megatron-LM's plain uniform groups of one layer. */
    char part[32] = "";
    if (l->recompute == SPACE_RECOMPUTE_FULL && l->recompute_layers > 0
        && (l->recompute_method == SPACE_RECOMPUTE_BLOCK
            || l->recompute_layers > 1))
        snprintf(part, sizeof part, "_%c%lld",
                 l->recompute_method == SPACE_RECOMPUTE_BLOCK ? 'b' : 'u',
                 (long long)l->recompute_layers);
    snprintf(buf, cap, "n%lldg%lld_tp%lldpp%llddp%lld%s%s_mbs%lld%s%s%s%s%s",
             (long long)nodes, (long long)gpn, (long long)l->tp,
             (long long)l->pp, (long long)l->dp, cp, ep, (long long)l->mbs,
             vpp, l->sp && l->tp > 1 ? "_sp" : "",
             rc[(unsigned)l->recompute < SPACE_RECOMPUTE_COUNT ? l->recompute : 0],
             part, z[(unsigned)l->zero < SPACE_ZERO_COUNT ? l->zero : 0]);
    /* Memory savers and micro-batch groups (savers.c), where set. */
    char sv[64];
    size_t at = strlen(buf);
    if (space_savers_tag(l, sv, sizeof sv)[0] && at < cap)
        snprintf(buf + at, cap - at, "_%s", sv);
    /* CUDA graphs: _cgl (local), _cgte (Transformer Engine's), _cgfi (the
     * full iteration) */
    static const char *const cg[SPACE_CG_COUNT] = {"", "_cgl", "_cgte", "_cgfi"};
    at = strlen(buf);
    if ((unsigned)l->cuda_graph < SPACE_CG_COUNT && l->cuda_graph && at < cap)
        snprintf(buf + at, cap - at, "%s", cg[l->cuda_graph]);
    /* pipeline schedules but 1F1B: _zb1p, _zbv, _dp (DualPipe), _dpv */
    static const char *const ps[SPACE_PP_SCHEDULE_COUNT] = {"", "_zb1p", "_zbv",
                                                           "_dp", "_dpv"};
    at = strlen(buf);
    if ((unsigned)l->pp_schedule < SPACE_PP_SCHEDULE_COUNT && l->pp_schedule
        && at < cap)
        snprintf(buf + at, cap - at, "%s", ps[l->pp_schedule]);
    return buf;
}
