/*
 * test_enum.c - the search (search/plan.c) and its enumeration
 * (space/grid.c) and bounds (estimator/bound.c):
 *  - the memory and time floors never exceed est_memory_of's total and
 *    est_estimate's iteration time, over many layouts, models, systems;
 *  - counting rejected layouts by blocks gives the same counts per rule
 *    as checking every layout number one by one;
 *  - brute force: on small spaces, the search with pruning returns the
 *    same top-k and the same front as estimating every valid layout, for
 *    every objective, with memory, budget and deadline limits;
 *  - the front: no point on it is dominated, every admitted point off it
 *    is;
 *  - the answer and its counts are the same at 1, 2 and 4 threads;
 *  - mixture of experts: the counts with EP and ETP, the brute force on
 *    mixtral-8x7b (once the estimator models MoE).
 * No absolute times are pinned: the estimator is being recalibrated.
 */
#include "search.h"
#include "tp_test.h"

#include <math.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

static hw_db *db;

enum { NSYS = 4 };
static const char *const sys_names[NSYS] = {"perlmutter", "selene", "eos",
                                            "vista"};
static est_models *ops[NSYS];
static est_comm *comm[NSYS];
static search_system systems[NSYS];

static const space_model *model(const char *name)
{
    tp_err e = {0};
    return space_preset_find(name, &e);
}

static space_layout job(int64_t seq, int64_t gbs)
{
    space_layout b;
    memset(&b, 0, sizeof b);
    b.tp = b.pp = b.cp = b.vpp = b.mbs = 1;
    b.seq = seq, b.gbs = gbs, b.dtype = HW_BF16, b.flash = 1;
    return b;
}

/* The field up to which a rule's rejection holds for the whole block
 * (as scan.c's rule_block_dim, never deeper): where the grid scan may
 * skip to. */
static space_dim reject_dim(space_reject rj)
{
    switch (rj) {
    case SPACE_REJECT_GPUS:
        return SPACE_DIM_CP;
    case SPACE_REJECT_VPP:
    case SPACE_REJECT_PP_CHUNKS:
        return SPACE_DIM_VPP;
    case SPACE_REJECT_PP_LAYERS:
    case SPACE_REJECT_VPP_LAYERS:
    case SPACE_REJECT_END_VPP:
    case SPACE_REJECT_MIDDLE:
    case SPACE_REJECT_MIDDLE_VPP:
    case SPACE_REJECT_SPLIT_NONE:
    case SPACE_REJECT_SPLIT_SAME:
        return SPACE_DIM_SPLIT;
    default:
        return SPACE_DIM_ZERO;
    }
}

static void test_floors(void)
{
    static const char *const models[] = {"gpt3-1.7b", "llama3-8b",
                                         "gpt-neox-20b", "llama3-70b",
                                         "gpt3-175b"};
    static const int64_t counts[] = {4, 16, 64, 256};
    int64_t n = 0, bad_t = 0, bad_m = 0;
    for (int s = 0; s < NSYS; s++)
        for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
            const space_model *m = model(models[mi]);
            space_grid g;
            space_grid_default(&g, m, systems[s].ctx.sys->gpus_per_node, 1 << 20, 0);
            /* every ZeRO stage (the default grid has 0 and 1) */
            for (int z = 0; z < SPACE_ZERO_COUNT; z++) g.v[SPACE_DIM_ZERO][z] = z;
            g.n[SPACE_DIM_ZERO] = SPACE_ZERO_COUNT;
            /* and every recomputation, torchtitan's op-level one too */
            for (int r = 0; r < SPACE_RECOMPUTE_COUNT; r++)
                g.v[SPACE_DIM_RECOMPUTE][r] = r;
            g.n[SPACE_DIM_RECOMPUTE] = SPACE_RECOMPUTE_COUNT;
            int64_t size = space_grid_size(&g);
            space_layout base = job(mi % 2 ? 4096 : 2048, 512);
            /* fp8 GEMMs where the GPU has them (eos: H100), every other model */
            if (systems[s].ctx.gpu->peak_flops[HW_FP8] > 0 && mi % 2 == 0)
                base.dtype = HW_FP8;
            /* and the frameworks' variants: DeepSpeed's 16-bit gradients
             * and module-wise ZeRO-3 gathering, torchtitan's op-level
             * checkpointing and fp32 parameters, every TP overlap,
             * partial recomputation by block and by uniform groups (one
             * model each) */
            if (mi == 1) base.grad_bytes = 2, base.zero3_live = 1e9;
            if (mi == 2) base.tp_overlap = SPACE_TP_OVERLAP_ALL;
            if (mi == 2)
                base.recompute_method = SPACE_RECOMPUTE_UNIFORM,
                base.recompute_layers = 3;
            if (mi == 3) base.tp_overlap = SPACE_TP_OVERLAP_NONE;
            if (mi == 3) base.param_fp32 = 1;
            if (mi == 4)
                base.recompute_method = SPACE_RECOMPUTE_BLOCK,
                base.recompute_layers = 2;
            for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++)
                for (int64_t i = (int64_t)ci; i < size; i += 5) {
                    space_layout l;
                    space_grid_layout(&g, i, counts[ci], &base, &l);
                    int gpn = systems[s].ctx.sys->gpus_per_node;
                    space_reject rj =
                        space_grid_check(m, &l, counts[ci], gpn, NULL, 0);
                    if (rj) { /* past the rejected block (scan.c's) */
                        int64_t blk = space_grid_block(&g, reject_dim(rj));
                        int64_t end = (i / blk + 1) * blk;
                        while (i + 5 < end) i += 5;
                        continue;
                    }
                    est_result r;
                    est_estimate(&systems[s].ctx, m, &l, &r);
                    if (r.iteration_s <= 0) continue;
                    n++;
                    if (est_time_floor(&systems[s].ctx, m, &l) > r.iteration_s)
                        bad_t++;
                    if (est_memory_floor(m, &l) > r.mem.total) bad_m++;
                }
        }
    TP_CHECK(n > 10000);
    TP_CHECK_INT((int)bad_t, 0);
    TP_CHECK_INT((int)bad_m, 0);
}

static void test_grid(void)
{
    const space_model *m = model("gpt-neox-20b");
    space_grid g;
    space_grid_default(&g, m, 4, 1 << 20, 0);
    TP_CHECK_INT(g.n[SPACE_DIM_TP], 3);   /* 1, 2, 4 */
    TP_CHECK_INT(g.n[SPACE_DIM_PP], 44);  /* every PP to the layers */
    TP_CHECK_INT(g.n[SPACE_DIM_VPP], 22); /* every VPP to half of them */
    TP_CHECK_INT(g.n[SPACE_DIM_SPLIT], 5);
    TP_CHECK(g.pp_beyond == 0 && g.vpp_beyond == 0);
    int64_t size = space_grid_size(&g);
    TP_CHECK(size == 3 * 44 * 4 * 22 * 5 * 5 * 2 * 3 * 2);
    /* the mapping is onto the cartesian product, TP most significant */
    space_layout base = job(2048, 1024), l;
    space_grid_layout(&g, size - 1, 64, &base, &l);
    TP_CHECK(l.tp == 4 && l.pp == 44 && l.cp == 8 && l.vpp == 22 && l.mbs == 16
             && l.sp == 1 && l.recompute == SPACE_RECOMPUTE_FULL
             && l.zero == SPACE_ZERO_1 && l.dp == 0);
    /* the balanced ends on PP 44 x VPP 22 have no counts: marked */
    TP_CHECK(l.pp_first == -1 && l.pp_last == -1);
    /* and at PP 4 x VPP 1 they are 11 a rank, the even split: marked as
     * the same layout (the split digits: even 0, ..., ends 4) */
    {
        int dg[SPACE_DIM_COUNT] = {0};
        dg[SPACE_DIM_PP] = 3, dg[SPACE_DIM_SPLIT] = 4; /* PP 4, ends */
        space_grid_layout_at(&g, dg, 64, &base, &l);
        TP_CHECK(l.pp == 4 && l.vpp == 1);
        TP_CHECK_INT(space_grid_check(m, &l, 64, 4, NULL, 0),
                     SPACE_REJECT_SPLIT_SAME);
        dg[SPACE_DIM_VPP] = 1; /* VPP 2: 10 + 12 + 12 + 10, a split of its own */
        space_grid_layout_at(&g, dg, 64, &base, &l);
        TP_CHECK(l.pp_first == 10 && l.pp_last == 10);
    }
    space_grid_layout(&g, 0, 64, &base, &l);
    TP_CHECK(l.tp == 1 && l.pp == 1 && l.dp == 64);
    char tag[96];
    l.tp = 8, l.pp = 4, l.dp = 4, l.mbs = 2, l.vpp = 3, l.sp = 0;
    l.recompute = SPACE_RECOMPUTE_NONE, l.zero = SPACE_ZERO_NONE;
    TP_CHECK_STR(space_layout_tag(&l, 8, tag, sizeof tag),
                 "n16g8_tp8pp4dp4_mbs2_vpp3");
    l.cp = 2, l.sp = 1, l.recompute = SPACE_RECOMPUTE_FULL, l.zero = SPACE_ZERO_1;
    TP_CHECK_STR(space_layout_tag(&l, 8, tag, sizeof tag),
                 "n32g8_tp8pp4dp4cp2_mbs2_vpp3_sp_rfull_z1");
    l.recompute_layers = 1; /* Megatron-LM's plain uniform: no suffix */
    TP_CHECK_STR(space_layout_tag(&l, 8, tag, sizeof tag),
                 "n32g8_tp8pp4dp4cp2_mbs2_vpp3_sp_rfull_z1");
    l.recompute_method = SPACE_RECOMPUTE_BLOCK, l.recompute_layers = 2;
    TP_CHECK_STR(space_layout_tag(&l, 8, tag, sizeof tag),
                 "n32g8_tp8pp4dp4cp2_mbs2_vpp3_sp_rfull_b2_z1");
    l.recompute_method = SPACE_RECOMPUTE_UNIFORM, l.recompute_layers = 3;
    TP_CHECK_STR(space_layout_tag(&l, 8, tag, sizeof tag),
                 "n32g8_tp8pp4dp4cp2_mbs2_vpp3_sp_rfull_u3_z1");
    l.recompute_layers = 0;
    TP_CHECK(space_grid_fix(&g, SPACE_DIM_ZERO, 4) != 0);
    TP_CHECK(space_grid_fix(&g, SPACE_DIM_TP, 0) != 0);
    TP_CHECK(space_grid_fix(&g, SPACE_DIM_TP, 8) == 0 && g.n[SPACE_DIM_TP] == 1);
    /* the enumeration-only rules */
    l = job(2048, 1024);
    l.tp = 1, l.sp = 1, l.dp = 8;
    TP_CHECK_INT(space_grid_check(m, &l, 8, 4, NULL, 0), SPACE_REJECT_SP_TP1);
    l.sp = 0, l.dp = 1, l.tp = 4, l.zero = SPACE_ZERO_1;
    TP_CHECK_INT(space_grid_check(m, &l, 4, 4, NULL, 0), SPACE_REJECT_ZERO_DP1);
    l.zero = SPACE_ZERO_NONE, l.dp = 2;
    TP_CHECK_INT(space_grid_check(m, &l, 6, 4, NULL, 0), SPACE_REJECT_GPUS);
    /* interleaving needs the split Megatron-Core builds: 44 layers on PP
     * 4 x 11 chunks run evenly, on PP 4 x 3 not (11 a rank), nor on PP 3;
     * the balanced ends give PP 4 x 2 chunks 10 + 12 + 12 + 10 */
    l = job(2048, 1024);
    l.tp = 1, l.pp = 4, l.vpp = 11, l.dp = 2;
    TP_CHECK_INT(space_layout_check(m, &l, 4, NULL, 0), SPACE_OK);
    l.vpp = 3;
    TP_CHECK_INT(space_layout_check(m, &l, 4, NULL, 0),
                 SPACE_REJECT_VPP_LAYERS);
    l.vpp = 1, l.pp = 3;
    TP_CHECK_INT(space_layout_check(m, &l, 4, NULL, 0), SPACE_REJECT_PP_LAYERS);
    l.pp = 4, l.vpp = 2;
    space_split_kind_apply(SPACE_SPLIT_ENDS, m->num_layers, &l);
    TP_CHECK_INT(space_layout_check(m, &l, 4, NULL, 0), SPACE_OK);
    TP_CHECK(l.pp_first == 10 && l.pp_last == 10);
    TP_CHECK(space_rank_layers(m, &l, 1) == 12);
    /* Llama 3 405B's 126 layers on 8 ranks of 2 chunks with the embedding
     * and the loss counted (torchtitan's split: 15, 16 x 6, 15) */
    tp_err e = {0};
    const space_model *big = space_preset_find("llama3.1-405b", &e);
    TP_CHECK(big != NULL);
    l = job(2048, 1024);
    l.tp = 1, l.dp = 2, l.pp = 8, l.vpp = 2;
    l.pp_account = SPACE_PP_EMBED | SPACE_PP_LOSS;
    TP_CHECK(space_rank_layers(big, &l, 0) == 15);
    TP_CHECK(space_rank_layers(big, &l, 7) == 15);
    TP_CHECK(space_rank_layers(big, &l, 1) == 16);
    TP_CHECK(space_rank_layers(big, &l, 6) == 16);
    l.pp_account = 0, l.vpp = 1, l.pp = 2;
    TP_CHECK(space_rank_layers(big, &l, 0) == 63);
}

static search_request request(const space_model *m, const search_system *s,
                              int ns, const int64_t *gpus, int ng)
{
    search_request q;
    memset(&q, 0, sizeof q);
    q.model = m;
    q.systems = s;
    q.n_systems = ns;
    q.base = job(2048, 128);
    q.gpus = gpus;
    q.n_gpus = ng;
    q.objective = SEARCH_BY_TIME;
    q.top_k = 10;
    q.max_memory_fraction = 1;
    return q;
}

/* Block counting = one by one. */
static void test_counts(void)
{
    const space_model *m = model("gpt3-1.7b");
    static const int64_t gpus[] = {4, 8, 12, 16, 24, 32};
    search_request q = request(m, systems, 2, gpus, 6);
    search_answer a;
    tp_err e = {0};
    TP_CHECK_INT(search_run(&q, &a, &e), TP_OK);
    int64_t want[SPACE_REJECT_COUNT] = {0}, valid = 0, total = 0;
    for (int s = 0; s < 2; s++) {
        const space_grid *g = &systems[s].grid;
        for (int gi = 0; gi < 6; gi++)
            for (int64_t i = 0; i < space_grid_size(g); i++) {
                space_layout l;
                space_grid_layout(g, i, gpus[gi], &q.base, &l);
                space_reject r = space_grid_check(
                    m, &l, gpus[gi], systems[s].ctx.sys->gpus_per_node, NULL, 0);
                total++;
                if (r == SPACE_OK) valid++;
                else want[r]++;
            }
    }
    TP_CHECK(a.stats.enumerated == total);
    TP_CHECK(a.stats.valid == valid);
    for (int r = 1; r < SPACE_REJECT_COUNT; r++) TP_CHECK(a.stats.rejected[r] == want[r]);
    int64_t pruned = 0;
    for (int p = 0; p < SEARCH_PRUNE_COUNT; p++) pruned += a.stats.pruned[p];
    TP_CHECK(pruned + a.stats.estimated == a.stats.valid);
    search_answer_free(&a);
}

static int same_points(const search_point *a, int na, const search_point *b,
                       int nb)
{
    if (na != nb) return 0;
    for (int i = 0; i < na; i++)
        if (a[i].sys != b[i].sys || a[i].gpus != b[i].gpus || a[i].idx != b[i].idx
            || a[i].iteration_s != b[i].iteration_s
            || a[i].cost_usd != b[i].cost_usd || a[i].saver != b[i].saver
            || a[i].saver_n != b[i].saver_n)
            return 0;
    return 1;
}

/* No point on the front is dominated by an admitted point; every
 * admitted point off it is dominated (no worse on both) by one on it. */
static int front_ok(const search_answer *a)
{
    for (int i = 0; i < a->n_front; i++)
        for (int64_t j = 0; j < a->n_points; j++) {
            const search_point *f = &a->front[i], *p = &a->points[j];
            if (p->iteration_s <= f->iteration_s && p->cost_usd <= f->cost_usd
                && (p->iteration_s < f->iteration_s || p->cost_usd < f->cost_usd))
                return 0;
        }
    for (int64_t j = 0; j < a->n_points; j++) {
        const search_point *p = &a->points[j];
        int on = 0, dom = 0;
        for (int i = 0; i < a->n_front; i++) {
            const search_point *f = &a->front[i];
            if (f->sys == p->sys && f->gpus == p->gpus && f->idx == p->idx) on = 1;
            if (f->iteration_s <= p->iteration_s && f->cost_usd <= p->cost_usd)
                dom = 1;
        }
        if (!on && !dom) return 0;
    }
    /* ascending cost, descending time */
    for (int i = 1; i < a->n_front; i++)
        if (!(a->front[i].cost_usd >= a->front[i - 1].cost_usd
              && a->front[i].iteration_s < a->front[i - 1].iteration_s))
            return 0;
    return 1;
}

/* What the pruned runs of the brute-force test pruned, so the test
 * shows it tested the bounds and not just the rules. */
static int64_t pruned_total[SEARCH_PRUNE_COUNT];

static void brute(search_request q, const char *what)
{
    search_answer full, pruned;
    tp_err e = {0};
    q.no_prune = 1, q.keep_points = 1;
    TP_CHECK_INT(search_run(&q, &full, &e), TP_OK);
    q.no_prune = 0;
    TP_CHECK_INT(search_run(&q, &pruned, &e), TP_OK);
    TP_CHECK(full.stats.estimated == full.stats.valid);
    int ok_rank = same_points(full.ranked, full.n_ranked, pruned.ranked,
                              pruned.n_ranked);
    int ok_front = same_points(full.front, full.n_front, pruned.front,
                               pruned.n_front);
    if (!ok_rank || !ok_front)
        fprintf(stderr, "  brute force differs: %s (ranked %d/%d, front %d/%d)\n",
                what, full.n_ranked, pruned.n_ranked, full.n_front,
                pruned.n_front);
    TP_CHECK(ok_rank);
    TP_CHECK(ok_front);
    for (int p = 0; p < SEARCH_PRUNE_COUNT; p++)
        pruned_total[p] += pruned.stats.pruned[p];
    TP_CHECK(front_ok(&full));
    TP_CHECK(front_ok(&pruned) || pruned.n_points == 0);
    search_answer_free(&full);
    search_answer_free(&pruned);
}

static void test_brute_force(void)
{
    static const int64_t small[] = {4, 8, 12, 16, 24, 32, 48, 64};
    search_request q = request(model("gpt3-1.7b"), systems, 2, small, 8);
    brute(q, "gpt3-1.7b, time");
    q.objective = SEARCH_BY_COST;
    brute(q, "gpt3-1.7b, cost");
    q.objective = SEARCH_BY_TIME;
    q.top_k = 1;
    brute(q, "top 1");
    q.top_k = 10;
    /* a model that needs many GPUs: the memory bound bites */
    q.model = model("gpt-neox-20b");
    q.base = job(2048, 256);
    brute(q, "gpt-neox-20b");
    q.max_memory_fraction = 0.7;
    brute(q, "memory fraction");
    q.max_memory_fraction = 1;
    /* budgets and a deadline that leave only part of the space */
    q.tokens = 2e9;
    q.model = model("gpt3-1.7b");
    q.base = job(2048, 128);
    {
        search_answer a;
        tp_err e = {0};
        q.no_prune = 1, q.keep_points = 1;
        search_run(&q, &a, &e);
        q.keep_points = 0;
        /* a budget at the median admitted cost, a deadline likewise */
        double its = q.tokens / (128.0 * 2048);
        double c = a.n_points ? a.points[a.n_points / 2].cost_usd * its : 1;
        double t = a.n_points ? a.points[a.n_points / 3].iteration_s * its : 1;
        search_answer_free(&a);
        q.budget_usd = c;
        brute(q, "budget usd");
        q.budget_usd = 0;
        q.deadline_s = t;
        brute(q, "deadline");
        q.budget_gpu_hours = c / 2; /* in GPU-hours: tighter still */
        brute(q, "deadline and GPU-hours");
        q.no_prune = 0;
    }
    /* torchtitan, eager, with PyTorch's other schedules tried: their
     * floors count no bubble, so pruning drops none that would win */
    q = request(model("gpt-neox-20b"), systems, 2, small, 8);
    q.base = job(2048, 64);
    q.base.framework = SPACE_FW_TORCHTITAN;
    q.base.eager = 1;
    q.schedules = 1;
    brute(q, "gpt-neox-20b, torchtitan, schedules tried");
    /* one system of one GPU per node */
    q = request(model("llama3-8b"), &systems[3], 1, small, 8);
    brute(q, "vista");
    for (int p = 0; p < SEARCH_PRUNE_COUNT; p++) {
        if (!pruned_total[p])
            fprintf(stderr, "  no layout pruned by %s\n", search_prune_names[p]);
        TP_CHECK(pruned_total[p] > 0);
    }
}

/* Mixture of experts (issue 19): block counting = one by one over a grid
 * with EP and ETP, with each dispatcher (flex rejects EP x ETP 1); and the
 * brute force, pruned = exhaustive, on mixtral-8x7b. The brute force
 * needs the estimator to model MoE: while it refuses MoE models
 * (moe_not_modelled) it is skipped, said. */
static void test_moe(void)
{
    const space_model *m = model("mixtral-8x7b");
    TP_CHECK(m != NULL && m->num_experts == 8);
    if (!m) return;
    search_system sy = systems[2]; /* eos: 8 GPUs a node */
    space_grid_default(&sy.grid, m, sy.ctx.sys->gpus_per_node, 64, 64);
    /* a few PP and VPP sizes (the one-by-one counts below visit every
     * layout number), among them uneven ones for 32 layers */
    static const int64_t pps[] = {1, 2, 3, 4, 8}, vpps[] = {1, 2, 3, 4};
    memcpy(sy.grid.v[SPACE_DIM_PP], pps, sizeof pps);
    sy.grid.n[SPACE_DIM_PP] = 5;
    memcpy(sy.grid.v[SPACE_DIM_VPP], vpps, sizeof vpps);
    sy.grid.n[SPACE_DIM_VPP] = 4;
    TP_CHECK_INT(sy.grid.n[SPACE_DIM_EP], 4); /* 1, 2, 4, 8 */
    TP_CHECK_INT(sy.grid.n[SPACE_DIM_ETP], 2); /* = TP, 1 */
    /* dense grids keep one EP and one ETP value, 0 */
    space_grid dg;
    space_grid_default(&dg, model("llama3-8b"), 8, 64, 64);
    TP_CHECK(dg.n[SPACE_DIM_EP] == 1 && dg.v[SPACE_DIM_EP][0] == 0);
    TP_CHECK(dg.n[SPACE_DIM_ETP] == 1 && dg.v[SPACE_DIM_ETP][0] == 0);
    static const int64_t gpus[] = {8, 16, 32, 64};
    for (int disp = 0; disp < SPACE_MOE_DISPATCHER_COUNT; disp++) {
        search_request q = request(m, &sy, 1, gpus, 4);
        q.base = job(4096, 256);
        q.base.moe_dispatcher = disp;
        search_answer a;
        tp_err e = {0};
        TP_CHECK_INT(search_run(&q, &a, &e), TP_OK);
        int64_t want[SPACE_REJECT_COUNT] = {0}, valid = 0, total = 0;
        for (int gi = 0; gi < 4; gi++)
            for (int64_t i = 0; i < space_grid_size(&sy.grid); i++) {
                space_layout l;
                space_grid_layout(&sy.grid, i, gpus[gi], &q.base, &l);
                space_reject r = space_grid_check(
                    m, &l, gpus[gi], sy.ctx.sys->gpus_per_node, NULL, 0);
                total++;
                if (r == SPACE_OK) valid++;
                else want[r]++;
            }
        TP_CHECK(a.stats.enumerated == total);
        TP_CHECK(a.stats.valid == valid);
        for (int r = 1; r < SPACE_REJECT_COUNT; r++)
            if (a.stats.rejected[r] != want[r]) {
                fprintf(stderr, "  moe (%s): %s counted %lld, one by one "
                        "%lld\n", space_moe_dispatcher_names[disp],
                        space_reject_names[r], (long long)a.stats.rejected[r],
                        (long long)want[r]);
                TP_CHECK(0);
            }
        TP_CHECK(want[SPACE_REJECT_EP_RANKS] > 0);
        TP_CHECK(want[SPACE_REJECT_ETP_TP] > 0);
        TP_CHECK(want[SPACE_REJECT_MOE_SP] > 0);
        TP_CHECK((want[SPACE_REJECT_FLEX_EP] > 0) == (disp == SPACE_MOE_FLEX));
        search_answer_free(&a);
    }
    /* the rules one by one */
    space_layout l = job(4096, 256);
    l.tp = 2, l.dp = 4, l.sp = 1, l.ep = 8, l.etp = 1;
    TP_CHECK_INT(space_layout_check(m, &l, 8, NULL, 0), SPACE_OK);
    l.ep = 16; /* 8 experts */
    TP_CHECK_INT(space_layout_check(m, &l, 8, NULL, 0),
                 SPACE_REJECT_EP_EXPERTS);
    l.ep = 8, l.etp = 2; /* 2 x 8 does not divide TP 2 x DP 4 */
    TP_CHECK_INT(space_layout_check(m, &l, 8, NULL, 0), SPACE_REJECT_EP_RANKS);
    l.ep = 4, l.sp = 0;
    TP_CHECK_INT(space_layout_check(m, &l, 8, NULL, 0), SPACE_REJECT_MOE_SP);
    l.sp = 1, l.tp = 1, l.ep = 1, l.etp = 0, l.dp = 8;
    l.moe_dispatcher = SPACE_MOE_FLEX;
    TP_CHECK_INT(space_layout_check(m, &l, 8, NULL, 0), SPACE_REJECT_FLEX_EP);
    l.moe_dispatcher = SPACE_MOE_ALLTOALL;
    l.etp = 16;
    TP_CHECK_INT(space_layout_check(m, &l, 8, NULL, 0), SPACE_REJECT_EP_RANKS);
    l.etp = 0, l.ep = 2;
    TP_CHECK_INT(space_layout_check(model("llama3-8b"), &l, 8, NULL, 0),
                 SPACE_REJECT_EP_DENSE);
    l.ep = 0, l.etp = 0;
    TP_CHECK_INT(space_layout_check(model("llama3-8b"), &l, 8, NULL, 0),
                 SPACE_OK);
    /* tags: _ep for MoE layouts, _etp where it differs from TP */
    char tag[96];
    l = job(4096, 256);
    l.tp = 2, l.pp = 2, l.dp = 4, l.ep = 4, l.etp = 1, l.sp = 1;
    TP_CHECK_STR(space_layout_tag(&l, 8, tag, sizeof tag),
                 "n2g8_tp2pp2dp4_ep4_etp1_mbs1_sp");
    l.etp = 0;
    TP_CHECK_STR(space_layout_tag(&l, 8, tag, sizeof tag),
                 "n2g8_tp2pp2dp4_ep4_mbs1_sp");
    l.ep = 0;
    TP_CHECK_STR(space_layout_tag(&l, 8, tag, sizeof tag),
                 "n2g8_tp2pp2dp4_mbs1_sp");

    /* the brute force, where the estimator models MoE */
    l = job(4096, 256);
    l.dp = 8, l.ep = 1;
    est_result probe;
    est_estimate(&sy.ctx, m, &l, &probe);
    if (!probe.feasible && probe.reason == EST_MOE) {
        fprintf(stderr, "  SKIP moe brute force: %s (moe_not_modelled)\n",
                probe.message);
        return;
    }
    /* the floors hold for MoE layouts: every EP and expert TP, each
     * dispatcher, an imbalance, every recomputation and ZeRO stage */
    {
        space_grid g = sy.grid;
        for (int z = 0; z < SPACE_ZERO_COUNT; z++) g.v[SPACE_DIM_ZERO][z] = z;
        g.n[SPACE_DIM_ZERO] = SPACE_ZERO_COUNT;
        int64_t n = 0, bad_t = 0, bad_m = 0, size = space_grid_size(&g);
        for (int disp = 0; disp < SPACE_MOE_DISPATCHER_COUNT; disp++)
            for (int gi = 0; gi < 4; gi++)
                for (int64_t i = disp + gi; i < size; i += 7) {
                    space_layout base = job(4096, 256), x;
                    base.moe_dispatcher = disp;
                    base.moe_imbalance = gi % 2 ? 1.3 : 0;
                    space_grid_layout(&g, i, gpus[gi], &base, &x);
                    if (space_grid_check(m, &x, gpus[gi],
                                         sy.ctx.sys->gpus_per_node, NULL, 0))
                        continue;
                    est_result r;
                    est_estimate(&sy.ctx, m, &x, &r);
                    if (r.iteration_s <= 0) continue;
                    n++;
                    double ft = est_time_floor(&sy.ctx, m, &x);
                    double fm = est_memory_floor(m, &x);
                    if ((ft > r.iteration_s || fm > r.mem.total)
                        && !bad_t && !bad_m) {
                        char xt[96];
                        fprintf(stderr, "  moe floor above the estimate: %s "
                                "(%s): time %g > %g s or memory %g > %g B\n",
                                space_layout_tag(&x, 8, xt, sizeof xt),
                                space_moe_dispatcher_names[disp], ft,
                                r.iteration_s, fm, r.mem.total);
                    }
                    if (ft > r.iteration_s) bad_t++;
                    if (fm > r.mem.total) bad_m++;
                }
        TP_CHECK(n > 1000);
        TP_CHECK_INT((int)bad_t, 0);
        TP_CHECK_INT((int)bad_m, 0);
    }
    /* a 61-layer MoE model (DeepSeek-V3's count) gets 16-way PP */
    {
        space_model m61 = *m;
        m61.num_layers = 61;
        space_grid g;
        space_grid_default(&g, &m61, 4, 1024, 1024);
        int has16 = 0;
        for (int i = 0; i < g.n[SPACE_DIM_PP]; i++)
            has16 |= g.v[SPACE_DIM_PP][i] == 16;
        TP_CHECK(has16);
    }
    /* a smaller grid keeps it quick: every EP and ETP, the rest narrowed */
    static const int64_t mbs[] = {1, 2}, vpp[] = {1, 2};
    for (int i = 0; i < 2; i++) sy.grid.v[SPACE_DIM_MBS][i] = mbs[i];
    sy.grid.n[SPACE_DIM_MBS] = 2;
    for (int i = 0; i < 2; i++) sy.grid.v[SPACE_DIM_VPP][i] = vpp[i];
    sy.grid.n[SPACE_DIM_VPP] = 2;
    search_request q = request(m, &sy, 1, gpus, 4);
    q.base = job(4096, 256);
    brute(q, "mixtral-8x7b, time");
    q.objective = SEARCH_BY_COST;
    brute(q, "mixtral-8x7b, cost");
    q.objective = SEARCH_BY_TIME;
    q.max_memory_fraction = 0.6;
    brute(q, "mixtral-8x7b, memory fraction");
    q.max_memory_fraction = 1;
    q.base.moe_dispatcher = SPACE_MOE_ALLGATHER;
    q.base.moe_imbalance = 1.5;
    brute(q, "mixtral-8x7b, allgather, imbalance 1.5");
    q.base.moe_dispatcher = SPACE_MOE_FLEX;
    brute(q, "mixtral-8x7b, flex");
    /* CUDA graphs where the GPU waits on the host: the floors still
     * hold, so pruning changes nothing */
    q.base.moe_dispatcher = SPACE_MOE_ALLTOALL;
    q.base.moe_imbalance = 0;
    q.graphs = 1;
    brute(q, "mixtral-8x7b, CUDA graphs tried");
}

static void test_threads(void)
{
#ifdef _OPENMP
    static const int64_t gpus[] = {8, 16, 32, 64, 128};
    search_request q = request(model("llama3-8b"), systems, 3, gpus, 5);
    q.base = job(4096, 256);
    q.tokens = 1e11;
    search_answer a[3];
    static const int threads[3] = {1, 2, 4};
    int old = omp_get_max_threads();
    tp_err e = {0};
    for (int i = 0; i < 3; i++) {
        omp_set_num_threads(threads[i]);
        TP_CHECK_INT(search_run(&q, &a[i], &e), TP_OK);
    }
    omp_set_num_threads(old);
    for (int i = 1; i < 3; i++) {
        TP_CHECK(same_points(a[0].ranked, a[0].n_ranked, a[i].ranked, a[i].n_ranked));
        TP_CHECK(same_points(a[0].front, a[0].n_front, a[i].front, a[i].n_front));
        TP_CHECK(a[0].n_points == a[i].n_points);
        TP_CHECK(a[0].stats.estimated == a[i].stats.estimated);
        for (int p = 0; p < SEARCH_PRUNE_COUNT; p++)
            TP_CHECK(a[0].stats.pruned[p] == a[i].stats.pruned[p]);
        TP_CHECK(memcmp(a[0].stats.rejected, a[i].stats.rejected,
                        sizeof a[0].stats.rejected) == 0);
    }
    TP_CHECK(a[0].n_ranked == 10);
    /* ranked in the total order */
    for (int i = 1; i < a[0].n_ranked; i++)
        TP_CHECK(search_point_cmp(&a[0].ranked[i - 1], &a[0].ranked[i],
                                  SEARCH_BY_TIME) < 0);
    for (int i = 0; i < 3; i++) search_answer_free(&a[i]);
#endif
}

/* fp8 parameters (--fp8-param-gather) as a saver: Llama 3 8B in fp8 at
 * 8k tokens on one node of eos, issue 28's new-user case. Layouts that
 * rely on it carry it, halve their GEMM weights' bytes, and do not fit
 * without it; a bf16 job never gets it. */
static void test_saver_fp8_params(void)
{
    static const int64_t eight[] = {8};
    search_request q = request(model("llama3-8b"), &systems[2], 1, eight, 1);
    q.base = job(8192, 128);
    q.base.dtype = HW_FP8;
    q.max_memory_fraction = 0;
    q.savers = 1, q.keep_points = 1;
    search_answer a;
    tp_err e = {0};
    TP_CHECK_INT(search_run(&q, &a, &e), TP_OK);
    TP_CHECK(a.stats.saved[SEARCH_SAVER_FP8_PARAMS] > 0);
    int64_t seen = 0;
    for (int64_t i = 0; i < a.n_points; i++) {
        const search_point *p = &a.points[i];
        if (p->saver != SEARCH_SAVER_FP8_PARAMS) continue;
        seen++;
        space_layout l, bare;
        search_point_layout(&q, p, &l);
        TP_CHECK(l.fp8_params && l.zero >= SPACE_ZERO_1);
        space_grid_layout(&systems[2].grid, p->idx, p->gpus, &q.base, &bare);
        TP_CHECK(!bare.fp8_params);
        est_result r, rb;
        est_estimate(&systems[2].ctx, q.model, &l, &r);
        est_estimate(&systems[2].ctx, q.model, &bare, &rb);
        TP_CHECK(r.mem.total <= search_memory_limit(&q, &systems[2], &l));
        TP_CHECK(!rb.feasible
                 || rb.mem.total > search_memory_limit(&q, &systems[2], &bare));
        TP_CHECK(r.mem.weights < rb.mem.weights);
    }
    TP_CHECK(seen == a.stats.saved[SEARCH_SAVER_FP8_PARAMS]);
    search_answer_free(&a);
    q.base.dtype = HW_BF16;
    TP_CHECK_INT(search_run(&q, &a, &e), TP_OK);
    TP_CHECK(a.stats.saved[SEARCH_SAVER_FP8_PARAMS] == 0);
    search_answer_free(&a);
}

/* The memory savers, a last resort (variants.c): pruned = exhaustive with
 * them; a search that admits nothing without them admits layouts that
 * rely on one, each of which does not fit without it; the same answer at
 * 1, 2 and 4 threads. */
static void test_savers(void)
{
    static const int64_t small[] = {4, 8, 16, 32};
    search_request q = request(model("gpt-neox-20b"), systems, 2, small, 4);
    q.base = job(2048, 256);
    q.max_memory_fraction = 0;
    q.savers = 1;
    brute(q, "gpt-neox-20b with savers");
    /* Llama 3 70B on 16 H100s at 8k tokens (eos) */
    static const int64_t two[] = {8, 16};
    q = request(model("llama3-70b"), &systems[2], 1, two, 2);
    q.base = job(8192, 64);
    q.max_memory_fraction = 0;
    search_answer none, with;
    tp_err e = {0};
    TP_CHECK_INT(search_run(&q, &none, &e), TP_OK);
    TP_CHECK_INT((int)none.stats.admitted, 0);
    q.savers = 1, q.keep_points = 1;
    TP_CHECK_INT(search_run(&q, &with, &e), TP_OK);
    TP_CHECK(with.stats.admitted > 0);
    int64_t saved = 0;
    for (int k = 1; k < SEARCH_SAVER_COUNT; k++) saved += with.stats.saved[k];
    TP_CHECK(saved == with.stats.admitted);
    TP_CHECK(with.n_ranked > 0 && with.ranked[0].saver != SEARCH_SAVER_NONE);
    for (int64_t i = 0; i < with.n_points; i++) {
        const search_point *p = &with.points[i];
        TP_CHECK(p->saver != SEARCH_SAVER_NONE);
        space_layout l, bare;
        search_point_layout(&q, p, &l);
        TP_CHECK(space_layout_has_saver(&l) || l.fp8_params);
        space_grid_layout(&systems[2].grid, p->idx, p->gpus, &q.base, &bare);
        est_result r;
        est_estimate(&systems[2].ctx, q.model, &bare, &r);
        TP_CHECK(!r.feasible
                 || r.mem.total > search_memory_limit(&q, &systems[2], &bare));
    }
    search_answer_free(&none);
    search_answer_free(&with);
    /* a search with layouts that fit: those are admitted as before, with
     * no saver; the savers only add layouts that did not fit, which may
     * rank first (no recomputation where recomputation was needed) */
    static const int64_t many[] = {16, 32, 64};
    q = request(model("llama3-8b"), &systems[2], 1, many, 3);
    q.base = job(4096, 256);
    q.max_memory_fraction = 0;
    q.no_prune = 1, q.keep_points = 1;
    search_answer a, b;
    TP_CHECK_INT(search_run(&q, &a, &e), TP_OK);
    q.savers = 1;
    TP_CHECK_INT(search_run(&q, &b, &e), TP_OK);
    saved = 0;
    for (int k = 1; k < SEARCH_SAVER_COUNT; k++) saved += b.stats.saved[k];
    TP_CHECK(b.stats.admitted == a.stats.admitted + saved);
    TP_CHECK(a.stats.estimated == b.stats.estimated);
    int64_t j = 0, kept = 0;
    for (int64_t i = 0; i < b.n_points; i++) {
        if (b.points[i].saver != SEARCH_SAVER_NONE) continue;
        if (j < a.n_points && same_points(&a.points[j], 1, &b.points[i], 1))
            kept++;
        j++;
    }
    TP_CHECK(kept == a.n_points);
    TP_CHECK(b.ranked[0].iteration_s <= a.ranked[0].iteration_s);
    search_answer_free(&a);
    search_answer_free(&b);
#ifdef _OPENMP
    q = request(model("llama3-70b"), &systems[2], 1, two, 2);
    q.base = job(8192, 64);
    q.max_memory_fraction = 0;
    q.savers = 1;
    search_answer t[3];
    static const int threads[3] = {1, 2, 4};
    int old = omp_get_max_threads();
    for (int i = 0; i < 3; i++) {
        omp_set_num_threads(threads[i]);
        TP_CHECK_INT(search_run(&q, &t[i], &e), TP_OK);
    }
    omp_set_num_threads(old);
    for (int i = 1; i < 3; i++) {
        TP_CHECK(same_points(t[0].ranked, t[0].n_ranked, t[i].ranked,
                             t[i].n_ranked));
        TP_CHECK(same_points(t[0].front, t[0].n_front, t[i].front,
                             t[i].n_front));
        TP_CHECK(memcmp(t[0].stats.saved, t[i].stats.saved,
                        sizeof t[0].stats.saved) == 0);
    }
    for (int i = 0; i < 3; i++) search_answer_free(&t[i]);
#endif
}

/* Nothing fits: counts, and a nearest miss by memory. */
static void test_infeasible(void)
{
    static const int64_t gpus[] = {4, 8};
    search_request q = request(model("gpt3-175b"), systems, 1, gpus, 2);
    search_answer a;
    tp_err e = {0};
    TP_CHECK_INT(search_run(&q, &a, &e), TP_OK);
    TP_CHECK_INT(a.n_ranked, 0);
    TP_CHECK_INT(a.n_front, 0);
    TP_CHECK(a.near_memory.have);
    TP_CHECK(a.near_memory.value > a.near_memory.limit);
    TP_CHECK(a.stats.pruned[SEARCH_PRUNE_MEMORY] > 0);
    /* The nearest miss is an estimate, not a pruning bound, and the one
     * of the search without pruning. */
    search_answer b;
    search_request qb = q;
    qb.no_prune = 1;
    TP_CHECK_INT(search_run(&qb, &b, &e), TP_OK);
    TP_CHECK(!a.near_memory.from_bound);
    TP_CHECK(a.near_memory.value == b.near_memory.value);
    TP_CHECK(a.near_memory.idx == b.near_memory.idx);
    TP_CHECK(a.stats.estimated < b.stats.estimated); /* counts: this search's */
    search_answer_free(&b);
    search_answer_free(&a);
    /* A budget nobody meets: the nearest excess is estimated too (the
     * time floor prunes most layouts far below their estimate). */
    search_request qm = request(model("llama3-8b"), systems, 1, gpus, 2);
    qm.tokens = 1e9;
    qm.budget_usd = 100;
    TP_CHECK_INT(search_run(&qm, &a, &e), TP_OK);
    qb = qm;
    qb.no_prune = 1;
    TP_CHECK_INT(search_run(&qb, &b, &e), TP_OK);
    TP_CHECK_INT(a.n_ranked, 0);
    TP_CHECK(a.stats.pruned[SEARCH_PRUNE_BUDGET] > 0);
    TP_CHECK(a.near_budget.have && !a.near_budget.from_bound);
    TP_CHECK(a.near_budget.value == b.near_budget.value);
    TP_CHECK(a.near_budget.idx == b.near_budget.idx);
    search_answer_free(&b);
    search_answer_free(&a);
    /* bad requests */
    q.top_k = 0;
    TP_CHECK_INT(search_run(&q, &a, &e), TP_EUSAGE);
    search_answer_free(&a);
    q.top_k = 5;
    q.budget_usd = 10; /* without tokens */
    TP_CHECK_INT(search_run(&q, &a, &e), TP_EUSAGE);
    TP_CHECK_CONTAINS(e.msg, "tokens");
    search_answer_free(&a);
}

/* The layer memo under the estimates of the tests before: it served
 * layers, and every one it served was the layer timed again. */
static void test_layer_memo(void)
{
    int64_t hits, mismatches;
    est_memo_checked(&hits, &mismatches);
    TP_CHECK(hits > 100000);
    TP_CHECK_INT(mismatches, 0);
    est_memo_enable(1);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_enum HWDB_DIR\n");
        return 2;
    }
    const char *dirs[] = {argv[1]};
    tp_err e = {0};
    db = hw_db_open_dirs(dirs, 1, &e);
    if (!db) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    for (int i = 0; i < NSYS; i++) {
        const hw_system *y = hw_find_system(db, sys_names[i], &e);
        if (!y) {
            fprintf(stderr, "%s\n", e.msg);
            return 1;
        }
        ops[i] = est_models_open(y->gpu, 0, &e);
        comm[i] = ops[i] ? est_comm_open(y, &e) : NULL;
        if (!comm[i]) {
            fprintf(stderr, "%s\n", e.msg);
            return 1;
        }
        memset(&systems[i], 0, sizeof systems[i]);
        systems[i].ctx = (est_ctx){y, y->gpu, ops[i], comm[i], 0, 0, NULL};
        systems[i].price_usd_per_gpu_hour = y->price_usd_per_gpu_hour;
        /* small grids keep the brute force quick */
        space_grid_default(&systems[i].grid, model("gpt3-1.7b"), y->gpus_per_node,
                           64, 0);
    }
    /* Every estimate of these tests (every framework, ZeRO stage,
     * recomputation, MoE grid, memory saver, the searches' layouts) with
     * each layer found in the layer memo timed again and compared
     * (est_memo_enable), checked at the end (test_layer_memo). */
    est_memo_enable(EST_MEMO_CHECK);
    TP_RUN(test_grid);
    TP_RUN(test_floors);
    TP_RUN(test_counts);
    TP_RUN(test_brute_force);
    TP_RUN(test_moe);
    TP_RUN(test_threads);
    TP_RUN(test_savers);
    TP_RUN(test_saver_fp8_params);
    TP_RUN(test_infeasible);
    TP_RUN(test_layer_memo);
    for (int i = 0; i < NSYS; i++) {
        est_comm_free(comm[i]);
        est_models_free(ops[i]);
    }
    hw_db_free(db);
    return TP_TEST_EXIT();
}
