/*
 * test_comm.c - collective times: NCCL's bus-bandwidth factors in the
 * analytical model, one rank costs nothing, time grows with bytes, the
 * tiers (a group across nodes vs the same group in one scale-up domain,
 * which tier a 1-GPU-per-node group depends on, the tree for small
 * messages on many nodes), direct links and one-GPU nodes, measured
 * tables (exact at measured points, log interpolation, anchored
 * extrapolation, and that a table changes the time), hygiene, table-file
 * errors and the nccl-tests log parser on good and malformed logs.
 *
 * argv[1]: tests/fixtures; argv[2]: scratch dir.
 */
#define _POSIX_C_SOURCE 200809L
#include "../estimator/est.h"
#include "tp_test.h"

#include <stdlib.h>
#include <sys/stat.h>

static const char *fixtures, *scratch;
static hw_db *db;

#define GB 1e9
#define MIB 1048576.0
#define GIB 1073741824.0

static const hw_system *sys(const char *name)
{
    tp_err e = {0};
    const hw_system *y = hw_find_system(db, name, &e);
    if (!y) fprintf(stderr, "%s\n", e.msg);
    return y;
}

static est_group grp(int nodes, int per_node)
{
    est_group g = {nodes * per_node, per_node, nodes, 0};
    return g;
}

/* Seconds per byte of the line-rate model between two large sizes: the
 * bandwidth term alone (the latencies cancel). */
static double lr_slope(const hw_system *y, est_coll k, const est_group *g)
{
    double a = est_coll_linerate_time(y, k, 4 * GIB, g);
    double b = est_coll_linerate_time(y, k, 8 * GIB, g);
    return (b - a) / (4 * GIB);
}

static void test_names(void)
{
    TP_CHECK_INT(est_coll_parse("allreduce"), EST_COLL_ALLREDUCE);
    TP_CHECK_INT(est_coll_parse("all_reduce_perf"), EST_COLL_ALLREDUCE);
    TP_CHECK_INT(est_coll_parse("All-Reduce"), EST_COLL_ALLREDUCE);
    TP_CHECK_INT(est_coll_parse("reduce_scatter"), EST_COLL_REDUCE_SCATTER);
    TP_CHECK_INT(est_coll_parse("all-gather"), EST_COLL_ALLGATHER);
    TP_CHECK_INT(est_coll_parse("alltoall_perf"), EST_COLL_ALLTOALL);
    TP_CHECK_INT(est_coll_parse("p2p"), EST_COLL_SENDRECV);
    TP_CHECK_INT(est_coll_parse("sendrecv_perf"), EST_COLL_SENDRECV);
    TP_CHECK_INT(est_coll_parse("broadcast"), -1);
    TP_CHECK_INT(est_coll_parse(""), -1);
    for (int k = 0; k < EST_COLL_COUNT; k++)
        TP_CHECK_INT(est_coll_parse(est_coll_names[k]), k);
    TP_CHECK_REL(est_coll_busbw_factor(EST_COLL_ALLREDUCE, 8), 1.75, 1e-15);
    TP_CHECK_REL(est_coll_busbw_factor(EST_COLL_ALLGATHER, 8), 0.875, 1e-15);
    TP_CHECK_REL(est_coll_busbw_factor(EST_COLL_SENDRECV, 8), 1, 1e-15);
}

/* NCCL's ring moves 2(n-1)/n (all-reduce) or (n-1)/n (reduce-scatter,
 * all-gather) of the buffer per rank; all-to-all (n-1)/n; send/recv the
 * message: at line rate on a 400 GB/s switch. */
static void test_ring_factors(void)
{
    const hw_system *y = sys("switchsys");
    if (!y) return;
    const double bw = 400 * GB;
    for (int n = 2; n <= 8; n *= 2) {
        est_group g = grp(1, n);
        TP_CHECK_REL(lr_slope(y, EST_COLL_ALLREDUCE, &g), 2.0 * (n - 1) / n / bw, 1e-9);
        TP_CHECK_REL(lr_slope(y, EST_COLL_REDUCE_SCATTER, &g), (n - 1.0) / n / bw, 1e-9);
        TP_CHECK_REL(lr_slope(y, EST_COLL_ALLGATHER, &g), (n - 1.0) / n / bw, 1e-9);
        TP_CHECK_REL(lr_slope(y, EST_COLL_ALLTOALL, &g), (n - 1.0) / n / bw, 1e-9);
        TP_CHECK_REL(lr_slope(y, EST_COLL_SENDRECV, &g), 1 / bw, 1e-9);
    }
    /* The fitted model is the line-rate one at a fraction of line rate
     * (bench/coll_efficiency.py): slower, by a factor in (1, 2]. */
    est_group g = grp(1, 8);
    double t1 = est_coll_time(NULL, y, EST_COLL_ALLREDUCE, 4 * GIB, &g);
    double t2 = est_coll_time(NULL, y, EST_COLL_ALLREDUCE, 8 * GIB, &g);
    double r = (t2 - t1) / (4 * GIB) / lr_slope(y, EST_COLL_ALLREDUCE, &g);
    TP_CHECK(r > 1 && r <= 2);
    est_coll_info info;
    est_coll_time_info(NULL, y, EST_COLL_ALLREDUCE, 8 * GIB, &g, &info);
    TP_CHECK_STR(info.algorithm, "ring");
    TP_CHECK_STR(info.protocol, "Simple");
    TP_CHECK_STR(info.bottleneck, "scale-up");
    TP_CHECK(info.table == NULL);
}

static void test_one_rank_and_bad_groups(void)
{
    const hw_system *y = sys("switchsys");
    if (!y) return;
    est_group one = grp(1, 1);
    for (int k = 0; k < EST_COLL_COUNT; k++) {
        TP_CHECK(est_coll_time(NULL, y, (est_coll)k, 1e9, &one) == 0);
        TP_CHECK(est_coll_linerate_time(y, (est_coll)k, 1e9, &one) == 0);
    }
    char why[200];
    est_group big = grp(1, 16), wrong = {7, 4, 2, 0}, many = grp(65, 8);
    TP_CHECK(est_group_check(y, &big, why, sizeof why) != 0);
    TP_CHECK_CONTAINS(why, "16 GPUs per node");
    TP_CHECK(est_group_check(y, &wrong, why, sizeof why) != 0);
    TP_CHECK(est_group_check(y, &many, why, sizeof why) != 0);
    TP_CHECK_CONTAINS(why, "65 nodes");
    TP_CHECK(isnan(est_coll_time(NULL, y, EST_COLL_ALLREDUCE, 1e6, &big)));
    est_group ok = grp(64, 8);
    TP_CHECK_INT(est_group_check(y, &ok, why, sizeof why), 0);
}

/* Every collective's time grows with its size, on every shape of system. */
static void test_monotonic(void)
{
    static const char *const names[] = {"switchsys", "directsys", "onesys",
                                        "domainsys", "nodesys"};
    static const int shapes[][2] = {{1, 2}, {1, 4}, {2, 1}, {4, 1}, {2, 4},
                                    {8, 4}, {16, 1}};
    for (size_t s = 0; s < sizeof names / sizeof names[0]; s++) {
        const hw_system *y = sys(names[s]);
        if (!y) continue;
        for (size_t h = 0; h < sizeof shapes / sizeof shapes[0]; h++) {
            est_group g = grp(shapes[h][0], shapes[h][1]);
            char why[200];
            if (est_group_check(y, &g, why, sizeof why)) continue;
            for (int k = 0; k < EST_COLL_COUNT; k++) {
                double prev = 0;
                int ok = 1;
                for (double b = 1; b < 1e11; b *= 1.37) {
                    double t = est_coll_time(NULL, y, (est_coll)k, b, &g);
                    if (!(t >= prev) || !(t > 0)) ok = 0;
                    prev = t;
                }
                if (!ok)
                    fprintf(stderr, "not monotonic: %s %s %dx%d\n", names[s],
                            est_coll_names[k], g.nodes, g.per_node);
                TP_CHECK(ok);
            }
        }
    }
}

/* The tiers: 16 GPUs in one scale-up domain talk over the switch; the
 * same 16 GPUs on 4 separate nodes cross the network, are slower and say
 * so. A one-GPU-per-node group depends on the NICs only; on a node with
 * peers, a two-node group is bound by whichever tier is slower. */
static void test_tiers(void)
{
    const hw_system *dom = sys("domainsys"), *nod = sys("nodesys");
    const hw_system *sw = sys("switchsys");
    if (!dom || !nod || !sw) return;
    est_group g = grp(4, 4);
    est_coll_info a, b;
    for (int k = 0; k < EST_COLL_COUNT; k++) {
        double ta = est_coll_time_info(NULL, dom, (est_coll)k, GIB, &g, &a);
        double tb = est_coll_time_info(NULL, nod, (est_coll)k, GIB, &g, &b);
        TP_CHECK(tb > ta);
        TP_CHECK_STR(a.bottleneck, "scale-up");
        TP_CHECK_STR(b.bottleneck, "network");
    }
    /* Two domains of 16: the ring crosses the network twice, through the
     * 16 NICs of each domain (800 GB/s), so the switch still binds, but
     * the steps between domains pay the network's latency; 8 separate
     * nodes have 200 GB/s each and are network-bound. */
    est_group g8 = grp(8, 4);
    est_coll_time_info(NULL, dom, EST_COLL_ALLREDUCE, GIB, &g8, &a);
    TP_CHECK_STR(a.bottleneck, "scale-up");
    TP_CHECK(est_coll_linerate_time(dom, EST_COLL_ALLREDUCE, 8, &g8)
             > est_coll_linerate_time(dom, EST_COLL_ALLREDUCE, 8, &g) + 1e-6);
    est_coll_time_info(NULL, nod, EST_COLL_ALLREDUCE, GIB, &g8, &b);
    TP_CHECK_STR(b.bottleneck, "network");
    /* Half as many NICs as GPUs: a lone send uses a whole NIC; when every
     * GPU of the node sends at once (pipeline stages, the DP groups of all
     * TP ranks), each has half of one. */
    {
        hw_system h = *nod;
        h.nics_per_node = h.gpus_per_node / 2;
        est_group alone = grp(2, 1), shared = grp(2, 1);
        shared.node_busy = h.gpus_per_node;
        double ta = est_coll_linerate_time(&h, EST_COLL_SENDRECV, 4 * GIB, &alone);
        double ts = est_coll_linerate_time(&h, EST_COLL_SENDRECV, 4 * GIB, &shared);
        TP_CHECK_REL(ts / ta, 2.0, 0.01);
    }
    /* Network line rate of a 4-node ring: the nodes' 4 NICs of 50 GB/s. */
    TP_CHECK_REL(lr_slope(nod, EST_COLL_ALLGATHER, &g), 15.0 / 16 / (200 * GB), 1e-9);
    /* 1 GPU per node: intra bandwidth is irrelevant, the NIC is not. */
    hw_system y = *sw;
    est_group two = grp(2, 1);
    double t0 = est_coll_time(NULL, &y, EST_COLL_ALLREDUCE, GIB, &two);
    y.intra_bw_bytes_per_s *= 2;
    TP_CHECK_REL(est_coll_time(NULL, &y, EST_COLL_ALLREDUCE, GIB, &two), t0, 1e-12);
    y = *sw;
    y.nic_bw_bytes_per_s *= 2;
    TP_CHECK(est_coll_time(NULL, &y, EST_COLL_ALLREDUCE, GIB, &two) < 0.6 * t0);
    /* One GPU drives its own NIC, not all eight: 50 GB/s. */
    TP_CHECK_REL(lr_slope(sw, EST_COLL_ALLREDUCE, &two), 1 / (50 * GB), 1e-9);
    /* 2 x 8 on 8 x 50 GB/s NICs and a 400 GB/s switch: both 400, a tie. */
    est_group full = grp(2, 8);
    TP_CHECK_REL(lr_slope(sw, EST_COLL_ALLREDUCE, &full), 2.0 * 15 / 16 / (400 * GB), 1e-9);
    /* Halve the NICs: the network binds. */
    y = *sw;
    y.nics_per_node = 4;
    est_coll_time_info(NULL, &y, EST_COLL_ALLREDUCE, GIB, &full, &a);
    TP_CHECK_STR(a.bottleneck, "network");
    TP_CHECK_REL(lr_slope(&y, EST_COLL_ALLREDUCE, &full), 2.0 * 15 / 16 / (200 * GB), 1e-9);
    /* NCCL's tree wins small all-reduces across many nodes (log depth),
     * the ring large ones; across nodes the latency is the network's. */
    est_group wide = grp(32, 8);
    est_coll_time_info(NULL, sw, EST_COLL_ALLREDUCE, 1024, &wide, &a);
    TP_CHECK_STR(a.algorithm, "tree");
    TP_CHECK_STR(a.protocol, "LL");
    est_coll_time_info(NULL, sw, EST_COLL_ALLREDUCE, 16 * GIB, &wide, &a);
    TP_CHECK_STR(a.algorithm, "ring");
    est_group in1 = grp(1, 8);
    TP_CHECK(est_coll_time(NULL, sw, EST_COLL_ALLREDUCE, 8, &wide)
             > est_coll_time(NULL, sw, EST_COLL_ALLREDUCE, 8, &in1));
}

/* Perlmutter's shape: 4 GPUs pairwise linked at 100 GB/s per peer. A
 * ring over q GPUs uses the links to q-1 peers; one pair, one link. */
static void test_direct_and_one_gpu(void)
{
    const hw_system *d = sys("directsys"), *o = sys("onesys");
    if (!d || !o) return;
    est_group g2 = grp(1, 2), g4 = grp(1, 4);
    TP_CHECK_REL(lr_slope(d, EST_COLL_ALLREDUCE, &g2), 1 / (100 * GB), 1e-9);
    TP_CHECK_REL(lr_slope(d, EST_COLL_ALLREDUCE, &g4), 1.5 / (300 * GB), 1e-9);
    TP_CHECK_REL(lr_slope(d, EST_COLL_SENDRECV, &g4), 1 / (100 * GB), 1e-9);
    /* Across nodes, 4 ranks per node share their node's 4 x 25 GB/s. */
    est_group g24 = grp(2, 4);
    TP_CHECK_REL(lr_slope(d, EST_COLL_ALLREDUCE, &g24), 1.75 / (100 * GB), 1e-9);
    /* One GPU per node: every hop on the 50 GB/s NIC, none on NVLink. */
    est_group g41 = grp(4, 1);
    TP_CHECK_REL(lr_slope(o, EST_COLL_ALLREDUCE, &g41), 1.5 / (50 * GB), 1e-9);
    est_coll_info info;
    est_coll_time_info(NULL, o, EST_COLL_ALLGATHER, GIB, &g41, &info);
    TP_CHECK_STR(info.bottleneck, "network");
    char why[200];
    est_group two = grp(1, 2);
    TP_CHECK(est_group_check(o, &two, why, sizeof why) != 0);
}

/* A measured table: exact at its points (pooled duplicates: the
 * geometric mean), log-linear between them, the analytical shape beyond
 * them; and a table changes what the estimator sees. */
static void test_tables(void)
{
    const hw_system *y = sys("tablesys"), *plain = sys("switchsys");
    if (!y || !plain) return;
    tp_err e = {0};
    est_comm *c = est_comm_open(y, &e);
    TP_CHECK(c != NULL);
    if (!c) {
        fprintf(stderr, "%s\n", e.msg);
        return;
    }
    est_group g = grp(1, 8);
    est_coll_info info;
    TP_CHECK_REL(est_coll_time(c, y, EST_COLL_ALLREDUCE, 1024, &g), 20e-6, 1e-12);
    TP_CHECK_REL(est_coll_time(c, y, EST_COLL_ALLREDUCE, MIB, &g), 60e-6, 1e-12);
    TP_CHECK_REL(est_coll_time_info(c, y, EST_COLL_ALLREDUCE, GIB, &g, &info),
                 8000e-6, 1e-12);
    TP_CHECK(info.table != NULL && !info.extrapolated);
    /* Halfway in log size between 1 KiB and 1 MiB: the geometric mean. */
    TP_CHECK_REL(est_coll_time(c, y, EST_COLL_ALLREDUCE, 32768, &g),
                 sqrt(20e-6 * 60e-6), 1e-12);
    /* Beyond the last point: anchored on the analytical model's shape. */
    double t = est_coll_time_info(c, y, EST_COLL_ALLREDUCE, 8 * GIB, &g, &info);
    TP_CHECK(info.extrapolated);
    TP_CHECK_REL(t, 8000e-6
                        * est_coll_time(NULL, y, EST_COLL_ALLREDUCE, 8 * GIB, &g)
                        / est_coll_time(NULL, y, EST_COLL_ALLREDUCE, GIB, &g),
                 1e-12);
    t = est_coll_time_info(c, y, EST_COLL_ALLREDUCE, 16, &g, &info);
    TP_CHECK(info.extrapolated && t < 20e-6 && t > 0);
    /* The table changes the time the estimator sees; the same system
     * without it gets the analytical model. */
    double meas = est_coll_time(c, y, EST_COLL_ALLREDUCE, MIB, &g);
    double ana = est_coll_time(NULL, plain, EST_COLL_ALLREDUCE, MIB, &g);
    TP_CHECK(fabs(meas - ana) > 0.05 * ana);
    TP_CHECK_REL(est_coll_time(NULL, y, EST_COLL_ALLREDUCE, MIB, &g), ana, 1e-12);
    /* Shapes and collectives without a table: analytical. */
    est_group g4 = grp(1, 4);
    TP_CHECK_REL(est_coll_time(c, y, EST_COLL_ALLREDUCE, MIB, &g4),
                 est_coll_time(NULL, plain, EST_COLL_ALLREDUCE, MIB, &g4), 1e-12);
    TP_CHECK_REL(est_coll_time(c, y, EST_COLL_ALLGATHER, MIB, &g),
                 est_coll_time(NULL, plain, EST_COLL_ALLGATHER, MIB, &g), 1e-12);
    /* The send/recv table lost its two implausible rows. */
    TP_CHECK_INT(est_comm_table_count(c), 2);
    const est_coll_table *sr = NULL;
    for (int i = 0; i < est_comm_table_count(c); i++)
        if (est_comm_table_at(c, i)->kind == EST_COLL_SENDRECV)
            sr = est_comm_table_at(c, i);
    TP_CHECK(sr != NULL);
    if (sr) {
        TP_CHECK_INT(sr->n_rows, 2);
        TP_CHECK_INT(sr->n_bad, 2);
        TP_CHECK_CONTAINS(sr->file, "sendrecv_2x1.csv");
    }
    est_comm_free(c);
    c = est_comm_load(y, 1, &e);
    TP_CHECK(c != NULL);
    for (int i = 0; c && i < est_comm_table_count(c); i++)
        if (est_comm_table_at(c, i)->kind == EST_COLL_SENDRECV) {
            TP_CHECK_INT(est_comm_table_at(c, i)->n_rows, 4);
            TP_CHECK_INT(est_comm_table_at(c, i)->n_bad, 0);
        }
    est_comm_free(c);
    est_comm_free(NULL);
    /* A system without tables: nothing loaded, analytical everywhere. */
    c = est_comm_open(plain, &e);
    TP_CHECK(c != NULL && est_comm_table_count(c) == 0);
    TP_CHECK_REL(est_coll_time(c, plain, EST_COLL_ALLREDUCE, MIB, &g), ana, 1e-12);
    est_comm_free(c);
}

static void test_hygiene(void)
{
    const hw_system *y = sys("switchsys");
    if (!y) return;
    char why[300];
    est_coll_row r = {EST_COLL_ALLREDUCE, HW_FP32, 1, 8, GIB, 1e-3, 3};
    /* 1 GiB all-reduced in 1 ms: 1 TB/s in and out of each GPU, over
     * 400 GB/s links. */
    TP_CHECK_INT(est_coll_row_implausible(y, &r, why, sizeof why), EST_COLL_TOO_FAST);
    TP_CHECK_CONTAINS(why, "faster than the scale-up link");
    r.time_s = 3.5e-3; /* 307 GB/s: NVLS-like, below the link: fine */
    TP_CHECK_INT(est_coll_row_implausible(y, &r, why, sizeof why), 0);
    /* Across nodes, far below line rate: TCP sockets, not the network. */
    est_coll_row s = {EST_COLL_ALLREDUCE, HW_FP16, 2, 1, 64 * MIB, 0.05, 4};
    TP_CHECK_INT(est_coll_row_implausible(y, &s, why, sizeof why), EST_COLL_TOO_SLOW);
    TP_CHECK_CONTAINS(why, "network plugin");
    s.bytes = 4096; /* small: latency-bound, not judged */
    TP_CHECK_INT(est_coll_row_implausible(y, &s, why, sizeof why), 0);
    /* Slow inside a node is not flagged: it may be the real software. */
    est_coll_row in = {EST_COLL_ALLGATHER, HW_FP16, 1, 8, GIB, 1.0, 5};
    TP_CHECK_INT(est_coll_row_implausible(y, &in, why, sizeof why), 0);
    /* All-gather across 2 nodes: half the output must come in through
     * the node's 400 GB/s of NICs. */
    est_coll_row ag = {EST_COLL_ALLGATHER, HW_FP16, 2, 8, 8 * GIB, 0.009, 6};
    TP_CHECK_INT(est_coll_row_implausible(y, &ag, why, sizeof why), EST_COLL_TOO_FAST);
    TP_CHECK_CONTAINS(why, "network");
    ag.time_s = 0.011;
    TP_CHECK_INT(est_coll_row_implausible(y, &ag, why, sizeof why), 0);
    est_coll_row bad = {EST_COLL_ALLREDUCE, HW_FP16, 1, 16, GIB, 1, 7};
    TP_CHECK_INT(est_coll_row_implausible(y, &bad, why, sizeof why), EST_COLL_BAD_GROUP);
    TP_CHECK_CONTAINS(why, "16 GPUs per node");
}

static void test_table_errors(void)
{
    static const struct {
        const char *name, *text, *want;
    } cases[] = {
        {"t_empty.csv", "# nothing\n", "no header line"},
        {"t_col.csv", "collective,dtype,nodes,gpus_per_node,bytes,time_ms\n",
         "unknown column 'time_ms'"},
        {"t_missing.csv", "collective,dtype,nodes,bytes,time_us\n",
         "lacks the column 'gpus_per_node'"},
        {"t_coll.csv",
         "collective,dtype,nodes,gpus_per_node,bytes,time_us\nbroadcast,fp32,1,8,1024,20\n",
         ":2: column 1 (collective): unknown collective 'broadcast'"},
        {"t_dtype.csv",
         "collective,dtype,nodes,gpus_per_node,bytes,time_us\nallreduce,float,1,8,1024,20\n",
         ":2: column 2 (dtype)"},
        {"t_nodes.csv",
         "collective,dtype,nodes,gpus_per_node,bytes,time_us\nallreduce,fp32,1.5,8,1024,20\n",
         ":2: column 3 (nodes): expected an integer"},
        {"t_bytes.csv",
         "collective,dtype,nodes,gpus_per_node,bytes,time_us\n#c\nallreduce,fp32,1,8,-5,20\n",
         ":3: column 5 (bytes)"},
        {"t_time.csv",
         "collective,dtype,nodes,gpus_per_node,bytes,time_us\nallreduce,fp32,1,8,1024,0\n",
         ":2: column 6 (time_us)"},
        {"t_fields.csv",
         "collective,dtype,nodes,gpus_per_node,bytes,time_us\nallreduce,fp32,1,8,1024\n",
         ":2: 5 fields, the header has 6"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[1024];
        TP_CHECK(tp_test_write(scratch, cases[i].name, cases[i].text, path, sizeof path) == 0);
        est_coll_row *r = NULL;
        int n = 0;
        tp_err e = {0};
        TP_CHECK_INT(est_coll_read_table(path, &r, &n, &e), TP_EDATA);
        TP_CHECK_CONTAINS(e.msg, cases[i].name);
        TP_CHECK_CONTAINS(e.msg, cases[i].want);
        TP_CHECK(r == NULL);
    }
    est_coll_row *r = NULL;
    int n = 0;
    tp_err e = {0};
    TP_CHECK_INT(est_coll_read_table("/nonexistent.csv", &r, &n, &e), TP_ENOINPUT);
    char path[1024];
    tp_test_write(scratch, "t_ok.csv",
               "time_us, bytes ,collective,dtype,gpus_per_node,nodes\r\n"
               "# a comment\r\n\r\n12.5,2048,all_gather,bf16,4,2\r\n",
               path, sizeof path);
    TP_CHECK_INT(est_coll_read_table(path, &r, &n, &e), TP_OK);
    TP_CHECK_INT(n, 1);
    if (n == 1) {
        TP_CHECK_INT(r[0].kind, EST_COLL_ALLGATHER);
        TP_CHECK_INT(r[0].dtype, HW_BF16);
        TP_CHECK_INT(r[0].nodes, 2);
        TP_CHECK_INT(r[0].per_node, 4);
        TP_CHECK_REL(r[0].bytes, 2048, 0);
        TP_CHECK_REL(r[0].time_s, 12.5e-6, 1e-12);
        TP_CHECK_INT(r[0].line, 4);
    }
    free(r);
}

static int parse(const char *name, int op, int nodes, int per_node,
                 est_nccl_test **t, int *n, tp_err *e)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/nccl/%s", fixtures, name);
    *t = NULL;
    *n = 0;
    return est_nccl_parse(path, op, nodes, per_node, t, n, e);
}

static void test_nccl_tests(void)
{
    est_nccl_test *t;
    int n;
    tp_err e = {0};
    TP_CHECK_INT(parse("all_reduce_perf_1x8.log", -1, 0, 0, &t, &n, &e), TP_OK);
    TP_CHECK_INT(n, 1);
    if (n == 1) {
        TP_CHECK_INT(t[0].kind, EST_COLL_ALLREDUCE);
        TP_CHECK_INT(t[0].nodes, 1);
        TP_CHECK_INT(t[0].per_node, 8);
        TP_CHECK_INT(t[0].n_rows, 31);
        TP_CHECK_STR(t[0].device, "NVIDIA H100 80GB HBM3");
        TP_CHECK_CONTAINS(t[0].version, "nccl-tests version 2.13.9");
        /* The first row: 8 B, out-of-place 24.00 us, in-place 24.36 us. */
        TP_CHECK_REL(t[0].rows[0].bytes, 8, 0);
        TP_CHECK_REL(t[0].rows[0].time_s, 24.18e-6, 1e-12);
        TP_CHECK_INT(t[0].rows[0].dtype, HW_FP32);
        TP_CHECK_INT(t[0].rows[0].line, 18);
        TP_CHECK_REL(t[0].rows[30].bytes, 8 * GIB, 0);
    }
    est_nccl_free(t, n);
    /* In-place all-to-all is not validated: N/A is taken, counted. */
    TP_CHECK_INT(parse("alltoall_perf_2x8.log", -1, 0, 0, &t, &n, &e), TP_OK);
    TP_CHECK(n == 1 && t[0].kind == EST_COLL_ALLTOALL && t[0].nodes == 2
             && t[0].per_node == 8 && t[0].n_unverified == t[0].n_rows);
    est_nccl_free(t, n);
    /* srun labels, NCCL chatter, no "starting" line: the echoed command
     * names the test. */
    TP_CHECK_INT(parse("srun_sendrecv_2x8.log", -1, 0, 0, &t, &n, &e), TP_OK);
    TP_CHECK(n == 1 && t[0].kind == EST_COLL_SENDRECV && t[0].nodes == 2
             && t[0].per_node == 8 && t[0].n_rows == 11);
    est_nccl_free(t, n);
    /* Overrides: must agree with the rank count; --op with the log. */
    TP_CHECK_INT(parse("all_reduce_perf_1x8.log", -1, 2, 4, &t, &n, &e), TP_OK);
    TP_CHECK(n == 1 && t[0].nodes == 2 && t[0].per_node == 4);
    est_nccl_free(t, n);
    TP_CHECK_INT(parse("all_reduce_perf_1x8.log", -1, 2, 8, &t, &n, &e), TP_EDATA);
    TP_CHECK_CONTAINS(e.msg, "lists 8 ranks");
    TP_CHECK_INT(parse("all_reduce_perf_1x8.log", EST_COLL_ALLGATHER, 0, 0, &t, &n, &e),
                 TP_EDATA);
    TP_CHECK_CONTAINS(e.msg, "--op says allgather");
    /* Malformed logs: the file, the line, what is wrong. */
    static const struct {
        const char *name, *want;
    } bad[] = {
        {"bad_truncated_row.log", "bad_truncated_row.log:23: 6 fields"},
        {"bad_wrong_results.log", "bad_wrong_results.log:25: field '#wrong' (in-place) = 12"},
        {"bad_no_rows.log", "bad_no_rows.log:16: no data rows"},
        {"bad_unknown_collective.log", "test 'broadcast' (line 2) is not a collective"},
        {"bad_duplicate_rank.log", "bad_duplicate_rank.log:7: rank 0 is listed twice"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        TP_CHECK_INT(parse(bad[i].name, -1, 0, 0, &t, &n, &e), TP_EDATA);
        TP_CHECK_CONTAINS(e.msg, bad[i].want);
        TP_CHECK(n == 0);
        est_nccl_free(t, n);
    }
    TP_CHECK_INT(parse("none.log", -1, 0, 0, &t, &n, &e), TP_ENOINPUT);
    /* Two tests in one log; a log that names no test needs --op. */
    char path[1024], a[1024], b[1024];
    snprintf(a, sizeof a, "%s/nccl/reduce_scatter_perf_1x8.log", fixtures);
    snprintf(b, sizeof b, "%s/nccl/all_gather_perf_2x8.log", fixtures);
    char *ta = NULL, *tb = NULL;
    size_t la, lb;
    TP_CHECK(tp_read_file(a, 1 << 20, &ta, &la, &e) == TP_OK);
    TP_CHECK(tp_read_file(b, 1 << 20, &tb, &lb, &e) == TP_OK);
    if (ta && tb) {
        char *both = tp_xmalloc(la + lb + 1);
        memcpy(both, ta, la);
        memcpy(both + la, tb, lb + 1);
        tp_test_write(scratch, "two_tests.log", both, path, sizeof path);
        t = NULL;
        n = 0;
        TP_CHECK_INT(est_nccl_parse(path, -1, 0, 0, &t, &n, &e), TP_OK);
        TP_CHECK(n == 2 && t[0].kind == EST_COLL_REDUCE_SCATTER
                 && t[1].kind == EST_COLL_ALLGATHER && t[1].nodes == 2);
        est_nccl_free(t, n);
        /* Strip the names: "# Collective test starting" lines removed. */
        char *p;
        while ((p = strstr(both, "# Collective test starting")) != NULL)
            memset(p, ' ', strcspn(p, "\n"));
        tp_test_write(scratch, "nameless.log", both, path, sizeof path);
        t = NULL;
        n = 0;
        TP_CHECK_INT(est_nccl_parse(path, -1, 0, 0, &t, &n, &e), TP_EDATA);
        TP_CHECK_CONTAINS(e.msg, "give --op");
        TP_CHECK_INT(est_nccl_parse(path, EST_COLL_ALLGATHER, 0, 0, &t, &n, &e), TP_OK);
        TP_CHECK_INT(n, 2);
        est_nccl_free(t, n);
        free(both);
    }
    free(ta);
    free(tb);
    est_nccl_free(NULL, 0);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_comm FIXTURES SCRATCH\n");
        return 2;
    }
    fixtures = argv[1];
    scratch = argv[2];
    mkdir(scratch, 0755);
    char gpus[1024], colls[1024];
    snprintf(gpus, sizeof gpus, "%s/hw/good", fixtures);
    snprintf(colls, sizeof colls, "%s/coll", fixtures);
    const char *dirs[] = {gpus, colls};
    tp_err e = {0};
    db = hw_db_open_dirs(dirs, 2, &e);
    if (!db) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    TP_RUN(test_names);
    TP_RUN(test_ring_factors);
    TP_RUN(test_one_rank_and_bad_groups);
    TP_RUN(test_monotonic);
    TP_RUN(test_tiers);
    TP_RUN(test_direct_and_one_gpu);
    TP_RUN(test_tables);
    TP_RUN(test_hygiene);
    TP_RUN(test_table_errors);
    TP_RUN(test_nccl_tests);
    hw_db_free(db);
    return TP_TEST_EXIT();
}
