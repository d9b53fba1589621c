/*
 * comm.c - how long a collective takes on a cluster: an analytical model
 * per tier (scale-up fabric, network) in NCCL's own terms, replaced by a
 * measured table where the system's hwdb entry has one for that
 * collective and group shape; and the hygiene that keeps measured rows
 * that cannot be right out of those tables.
 *
 * The analytical model follows NCCL's cost model (NVIDIA/nccl,
 * src/graph/tuning.cc, ncclTopoTuneModel and ncclTopoGetAlgoTime; read at
 * versions 2.8 to 2.28): time = latency + bytes / algorithm bandwidth,
 * computed for each algorithm NCCL would consider, the fastest one taken,
 * as NCCL's tuner takes it.
 *  - Ring (all-reduce, reduce-scatter, all-gather): nsteps = 2(n-1) for
 *    all-reduce, n-1 otherwise, each rank moving nsteps/n of the buffer
 *    (the bus-bandwidth factors of nccl-tests doc/PERFORMANCE.md). The
 *    latency counts each step on its tier: (nsteps - nInter) intra-node
 *    steps and nInter = 2(m-1) (all-reduce) or m-1 inter-node steps over
 *    m nodes, as tuning.cc does. The pipelined ring runs both tiers at
 *    once, so its bandwidth is that of the slower tier: a GPU's scale-up
 *    links, or the node's NICs, which carry the ring's nsteps/n x bytes
 *    once per node (one ring crossing per node per channel; NCCL spreads
 *    channels over the NICs).
 *  - Tree (all-reduce across nodes): NCCL's hierarchical algorithm, a
 *    chain inside each node and a double binary tree between nodes
 *    (Jeaugey, "Massively Scale Your Deep Learning Training with NCCL
 *    2.4", NVIDIA developer blog, 2019). Latency 2((n/m - 1) intra +
 *    floor(log2 m) inter) steps, algorithm bandwidth 0.5 x 0.92 x the bus
 *    bandwidth (tuning.cc: tree ratio .5, "busBw*.92" for tree
 *    all-reduce). It wins for small messages on many nodes.
 *  - All-to-all: the pairwise exchange of Thakur, Rabenseifner and Gropp,
 *    "Optimization of Collective Communication Operations in MPICH",
 *    IJHPCA 19(1), 2005: n-1 steps, each rank sending bytes/n to each
 *    peer, its scale-up links and its share of the node's NICs working at
 *    once.
 *  - Send/recv: one message per rank over the link between the two
 *    ranks; across nodes, each rank gets its share of the node's NICs.
 * Across nodes the model is hierarchical in NCCL's way: every step and
 * every byte is charged to the tier it crosses, and the tree is NCCL's
 * two-level algorithm. The three-phase all-reduce (intra-node
 * reduce-scatter, inter-node all-reduce on 1/per_node of the data,
 * intra-node all-gather: Horovod's hierarchical mode; NCCL's CollNet with
 * in-network reduction) is not a candidate, because NCCL does not run it
 * on plain networks and the model is of what NCCL does. Its phases wait
 * for one another; by the same arithmetic it would beat the pipelined
 * ring only where one GPU's scale-up bandwidth exceeds the NIC bandwidth
 * of all the group's nodes together (2 Perlmutter nodes, 2 to 5 of
 * jean-zay-a100, whose 8 GPUs share 4 100 Gb/s NICs). There a measured
 * table is the way to find out what the stack achieves.
 *
 * A group's tiers: nodes are consecutive, so a group fills a scale-up
 * domain (a node; 18 trays on GB200 NVL72) before the next. Within a
 * domain every hop is on the scale-up fabric; between domains, on the
 * network. Bandwidths from hw_system, per GPU and per direction:
 * NVSwitch gives every GPU its full intra_bw to any peer; a "direct"
 * topology (Perlmutter: 4 A100 pairwise linked) gives intra_bw/(G-1) per
 * peer, so a group of q GPUs of a G-GPU node has (q-1)/(G-1) of it; a
 * node's q group ranks share min(NICs, q x NICs per GPU) NICs (NCCL uses
 * the NICs nearest each GPU: one GPU alone does not drive all NICs).
 *
 * Each algorithm is timed under each of NCCL's protocols (LL, LL128,
 * Simple: their base latencies, per-step latencies and payload shares,
 * from tuning.cc; see protos[] below), as the tuner does; small messages
 * take LL, large ones Simple. Per-step latencies are the system's
 * intra_node/inter_node latency_us, which hwdb records as NCCL's LL128
 * values, scaled by NCCL's ratios for the other protocols.
 *
 * Achievable fractions of line rate (EST_ETA_*): the fraction of a
 * link's line rate NCCL's Simple protocol sustains on large messages
 * (packet headers, flow control, channels that do not saturate every
 * link), fitted by bench/coll_efficiency.py from the measured tables in
 * hwdb (rows of at least 64 MiB; median over tables of each table's
 * median; the figures and their spread are in
 * bench/results/coll_efficiency.md).
 *
 * Not modelled: NVLink SHARP (NVLS) and InfiniBand SHARP in-network
 * reduction, PAT, the smaller share of line rate NCCL reaches on small
 * groups, congestion from other jobs. A measured table captures whatever
 * the real stack does.
 *
 * Measured tables (docs/hwdb.md): one per collective and group shape; when
 * several files list one, the file listed last wins (an import appends its
 * entries, so a user's measurements replace built-in ones). Its rows are
 * pooled per 1/16 octave of size (geometric means; a factor-2 sweep
 * keeps every point as measured) and interpolated piecewise linearly in
 * log time against log size. Outside the measured range the analytical
 * model's shape is anchored to the nearest measured point: t(b) =
 * t_meas(b_edge) x t_model(b) / t_model(b_edge). Reading a table file is
 * comm_table.c's.
 */
#include "est_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const est_coll_names[EST_COLL_COUNT] = {
    [EST_COLL_ALLREDUCE] = "allreduce",
    [EST_COLL_REDUCE_SCATTER] = "reducescatter",
    [EST_COLL_ALLGATHER] = "allgather",
    [EST_COLL_ALLTOALL] = "alltoall",
    [EST_COLL_SENDRECV] = "sendrecv"};
_Static_assert(sizeof est_coll_names / sizeof est_coll_names[0]
                   == EST_COLL_COUNT,
               "est_coll_names names every est_coll");

/* Other spellings, compared after dropping '_' and '-' and a "_perf"
 * suffix (nccl-tests binaries), case-insensitively. */
static const struct {
    const char *name;
    est_coll kind;
} coll_aliases[] = {
    {"p2p", EST_COLL_SENDRECV},
    {"sendrecv", EST_COLL_SENDRECV},
    {"collectivepermute", EST_COLL_SENDRECV},
    {"alltoallv", EST_COLL_ALLTOALL},
};

/* NCCL's protocols (tuning.cc, NCCL 2.18 to 2.28): per-call base latency
 * (baseLat, Ring: LL 6.6, LL128 14.0, Simple 8.4 us), per-step hardware
 * latency (hwLat, Ring, NVLink: LL 0.6, LL128 1.9, Simple 3.4 us; network:
 * 2.7, 4.0, 14 us) and the share of the bus bandwidth a protocol's
 * payload gets (LL: 8-byte lines of 4 data and 4 flag bytes, "busBw *
 * .5"; LL128: 120 data bytes per 128-byte line, 0.92 with the comment
 * "120.0/128.0";
 * Simple: 1). hwdb's latency_us fields are NCCL's LL128 per-step values
 * (their notes say so), so a protocol's per-step latency is the system's
 * scaled by NCCL's ratio to LL128. */
static const struct proto {
    const char *name;
    double base_s;
    double intra_ratio, inter_ratio;
    double bw_factor;
} protos[] = {
    {"LL", 6.6e-6, 0.6 / 1.9, 2.7 / 4.0, 0.5},
    {"LL128", 14.0e-6, 1.0, 1.0, 0.92},
    {"Simple", 8.4e-6, 3.4 / 1.9, 14.0 / 4.0, 1.0},
};
#define N_PROTOS ((int)(sizeof protos / sizeof protos[0]))
/* Tree all-reduce: tuning.cc multiplies the tree's bus bandwidth by .92
 * ("busBw*.92") and converts it to algorithm bandwidth with ratio .5. */
#define EST_TREE_BUSBW_EFF 0.92
#define EST_TREE_ALGBW_RATIO 0.5
/* Achievable fraction of line rate on large messages, per tier: fitted by
 * bench/coll_efficiency.py (see the file header) on 2026-11-23 from 61
 * scale-up tables (H100, B200, GB200 NVL72 from XLA; A100 from the seed;
 * quartiles 0.61 / 0.72 / 0.79) and 6 network tables (Vista NDR from the
 * seed; quartiles 0.73 / 0.88 / 0.96): bench/results/coll_efficiency.md.
 * Small groups reach less (about 0.45 for two GPUs on an NVSwitch), large
 * ones more. */
#define EST_ETA_SCALEUP 0.72
#define EST_ETA_NETWORK 0.88
/* Hygiene: a row may beat its floor by this much (timer resolution, and
 * tables that store GB/s with two decimals) before it is called too
 * fast. */
#define EST_FAST_TOLERANCE 0.05
/* Hygiene: rows smaller than this are latency-bound; slowness there says
 * nothing about the network's bandwidth. */
#define EST_SLOW_MIN_BYTES 1048576.0

int est_coll_parse(const char *s)
{
    char buf[64];
    size_t n = 0;
    for (const char *p = s; *p && n + 1 < sizeof buf; p++)
        if (*p != '_' && *p != '-' && *p != ' ')
            buf[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    buf[n] = '\0';
    if (n > 4 && strcmp(buf + n - 4, "perf") == 0) buf[n - 4] = '\0';
    for (int k = 0; k < EST_COLL_COUNT; k++)
        if (strcmp(buf, est_coll_names[k]) == 0) return k;
    for (size_t i = 0; i < sizeof coll_aliases / sizeof coll_aliases[0]; i++)
        if (strcmp(buf, coll_aliases[i].name) == 0) return (int)coll_aliases[i].kind;
    return -1;
}

double est_coll_busbw_factor(est_coll kind, int n)
{
    if (n < 1) return 0;
    switch (kind) {
    case EST_COLL_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case EST_COLL_REDUCE_SCATTER:
    case EST_COLL_ALLGATHER:
    case EST_COLL_ALLTOALL:
        return (double)(n - 1) / n;
    default:
        return 1;
    }
}

int est_group_check(const hw_system *y, const est_group *g, char *why,
                    size_t cap)
{
    if (g->per_node < 1 || g->nodes < 1 || g->size != g->per_node * g->nodes) {
        snprintf(why, cap,
                 "a group of %d rank(s) as %d node(s) x %d: expected size = "
                 "nodes x GPUs per node, each at least 1",
                 g->size, g->nodes, g->per_node);
        return -1;
    }
    if (g->per_node > y->gpus_per_node) {
        snprintf(why, cap, "%d GPUs per node, but %s has %d", g->per_node,
                 y->name, y->gpus_per_node);
        return -1;
    }
    if (y->max_nodes > 0 && g->nodes > y->max_nodes) {
        snprintf(why, cap, "%d nodes, but %s has %d", g->nodes, y->name,
                 y->max_nodes);
        return -1;
    }
    if (g->nodes > 1 && (y->nics_per_node < 1 || y->nic_bw_bytes_per_s <= 0)) {
        snprintf(why, cap, "%d nodes, but %s has no network", g->nodes,
                 y->name);
        return -1;
    }
    return 0;
}

/* ---- the analytical model -------------------------------------------- */

/* A group's two tiers on a system. */
typedef struct tiers {
    int n;            /* ranks */
    int q;            /* ranks per scale-up domain (the largest part) */
    int m;            /* scale-up domains spanned */
    double b_link;    /* per GPU, over the scale-up links to its q-1 peers */
    double b_peer;    /* per GPU, to one scale-up peer */
    double b_unit;    /* NICs of the group's nodes in one domain (the fewest) */
    double b_gpu_net; /* one rank's share of its node's NICs */
    double a_intra, a_inter;
} tiers;

/* NIC bandwidth of a node on which p ranks of the group sit: the NICs
 * nearest those GPUs (at least one each; NCCL picks NICs by PCI
 * locality), never more than the node has. */
/* Network bandwidth (per direction) of p GPUs of a node, while busy GPUs
 * of that node (busy >= p) move traffic at once: their share of the NICs.
 * Alone (busy <= p), a GPU uses at least one NIC. */
static double node_net_bw(const hw_system *y, int p, int busy)
{
    double per_gpu = (double)y->nics_per_node / y->gpus_per_node;
    if (busy > p) {
        if (busy > y->gpus_per_node) busy = y->gpus_per_node;
        return (double)y->nics_per_node * (double)p / busy
               * y->nic_bw_bytes_per_s;
    }
    if (per_gpu < 1) per_gpu = 1;
    double nics = p * per_gpu;
    if (nics > y->nics_per_node) nics = y->nics_per_node;
    return nics * y->nic_bw_bytes_per_s;
}

static void get_tiers(const hw_system *y, const est_group *g, tiers *t)
{
    int gpn = y->gpus_per_node;
    int dn = y->scaleup_domain_gpus / (gpn > 0 ? gpn : 1); /* nodes/domain */
    if (dn < 1) dn = 1;
    t->n = g->size;
    t->m = (g->nodes + dn - 1) / dn;
    int full = g->nodes < dn ? g->nodes : dn;       /* nodes in a full domain */
    int last = g->nodes - (t->m - 1) * dn;          /* nodes in the last one */
    t->q = full * g->per_node;
    switch (y->intra_topology) {
    case HW_TOPO_DIRECT:
        t->b_peer = gpn > 1 ? y->intra_bw_bytes_per_s / (gpn - 1) : 0;
        t->b_link = t->b_peer * (t->q - 1);
        break;
    case HW_TOPO_NONE:
        t->b_peer = t->b_link = 0;
        break;
    default: /* a switch: every GPU reaches any peer at its full rate */
        t->b_peer = t->b_link = y->intra_bw_bytes_per_s;
    }
    double node = node_net_bw(y, g->per_node, g->node_busy);
    t->b_unit = last * node;
    t->b_gpu_net = node / g->per_node;
    t->a_intra = y->intra_latency_s;
    t->a_inter = y->inter_latency_s;
}

static int floor_log2(int m)
{
    int l = 0;
    while (m >>= 1) l++;
    return l;
}

/* One algorithm under one protocol: time of moving s bytes. */
typedef struct cand {
    double time;
    double bw;       /* per GPU and direction, of the bottleneck link */
    int net_bound;
    const char *algo;
} cand;

static cand candidate(const tiers *t, est_coll kind, double s, int tree,
                      const struct proto *p, double eta_su, double eta_net)
{
    cand c = {INFINITY, 0, 0, ""};
    double a_in = t->a_intra * p->intra_ratio, a_out = t->a_inter * p->inter_ratio;
    double bw_su = t->q > 1 ? p->bw_factor * eta_su * t->b_link : INFINITY;
    double bw_net = t->m > 1 ? p->bw_factor * eta_net * t->b_unit : INFINITY;
    switch (kind) {
    case EST_COLL_ALLREDUCE:
    case EST_COLL_REDUCE_SCATTER:
    case EST_COLL_ALLGATHER: {
        int ar = kind == EST_COLL_ALLREDUCE;
        c.net_bound = bw_net <= bw_su;
        c.bw = c.net_bound ? bw_net : bw_su;
        if (tree) {
            c.time = p->base_s
                     + 2 * ((t->q - 1) * a_in + floor_log2(t->m) * a_out)
                     + s / (EST_TREE_ALGBW_RATIO * EST_TREE_BUSBW_EFF * c.bw);
            c.algo = "tree";
        } else {
            int nsteps = ar ? 2 * (t->n - 1) : t->n - 1;
            int ninter = t->m > 1 ? (ar ? 2 * (t->m - 1) : t->m - 1) : 0;
            c.time = p->base_s + (nsteps - ninter) * a_in + ninter * a_out
                     + (double)nsteps / t->n * s / c.bw;
            c.algo = "ring";
        }
        break;
    }
    case EST_COLL_ALLTOALL: {
        /* Each rank sends bytes/n to each of its q-1 domain peers over its
         * scale-up links and to each of the n-q others through its share
         * of the NICs, both at once. */
        double gpu_net = bw_net / t->q;
        double su = t->q > 1 ? (double)(t->q - 1) / t->n * s / bw_su : 0;
        double net = t->m > 1 ? (double)(t->n - t->q) / t->n * s / gpu_net : 0;
        c.net_bound = net >= su;
        c.bw = c.net_bound ? gpu_net : bw_su;
        c.time = p->base_s + (t->q - 1) * a_in + (t->n - t->q) * a_out
                 + (su > net ? su : net);
        c.algo = "pairwise";
        break;
    }
    default: { /* send/recv */
        double su_bw = p->bw_factor * eta_su * t->b_peer;
        double net_bw = p->bw_factor * eta_net * t->b_gpu_net;
        double su = t->q > 1 ? s / su_bw : 0;
        double net = t->m > 1 ? s / net_bw : 0;
        c.net_bound = net >= su;
        c.bw = c.net_bound ? net_bw : su_bw;
        c.time = p->base_s + (t->m > 1 ? a_out : a_in) + (su > net ? su : net);
        c.algo = "p2p";
    }
    }
    return c;
}

/* The analytical model with fractions of line rate eta_su (scale-up) and
 * eta_net (network): the fastest algorithm and protocol, as NCCL's tuner
 * picks them. Fills info's analytical fields when info is set. */
static double model_time(const hw_system *y, est_coll kind, double bytes,
                         const est_group *g, double eta_su, double eta_net,
                         est_coll_info *info)
{
    tiers t;
    get_tiers(y, g, &t);
    double s = bytes > 0 ? bytes : 0;
    /* The tree runs across domains, for all-reduce only (tuning.cc). */
    int trees = kind == EST_COLL_ALLREDUCE && t.m > 1 ? 2 : 1;
    cand best = {INFINITY, 0, 0, ""};
    const struct proto *bp = &protos[0];
    for (int tree = 0; tree < trees; tree++)
        for (int i = 0; i < N_PROTOS; i++) {
            cand c = candidate(&t, kind, s, tree, &protos[i], eta_su, eta_net);
            if (c.time < best.time) {
                best = c;
                bp = &protos[i];
            }
        }
    if (info) {
        info->analytical_s = best.time;
        info->algorithm = best.algo;
        info->protocol = bp->name;
        info->bottleneck = t.m > 1 && best.net_bound ? "network" : "scale-up";
        info->bw_bytes_per_s = isfinite(best.bw) ? best.bw : 0;
    }
    return best.time;
}

/* ---- hygiene ------------------------------------------------------------ */

int est_coll_row_implausible(const hw_system *y, const est_coll_row *r,
                             char *why, size_t cap)
{
    est_group g = {r->nodes * r->per_node, r->per_node, r->nodes, 0};
    char reason[200];
    why[0] = '\0';
    if (est_group_check(y, &g, reason, sizeof reason)) {
        snprintf(why, cap, "group %dx%d does not fit %s: %s", r->nodes,
                 r->per_node, y->name, reason);
        return EST_COLL_BAD_GROUP;
    }
    if (g.size == 1) return 0;
    tiers t;
    get_tiers(y, &g, &t);
    double s = r->bytes, f = est_coll_busbw_factor(r->kind, t.n);
    /* Bytes each link must carry under any algorithm, in-network
     * reduction included: all-reduce moves the whole buffer in and out of
     * a GPU (or a domain), reduce-scatter and all-gather (k-1)/k of it
     * over k parties, all-to-all what leaves for other parties, send/recv
     * the message. */
    double floor_s = 0, line = 0;
    const char *link = "";
    if (t.m > 1) {
        double need;
        switch (r->kind) {
        case EST_COLL_ALLREDUCE:
            need = s;
            break;
        case EST_COLL_REDUCE_SCATTER:
        case EST_COLL_ALLGATHER:
            need = (double)(t.m - 1) / t.m * s;
            break;
        case EST_COLL_ALLTOALL:
            need = (double)t.q * (t.n - t.q) / t.n * s;
            break;
        default:
            need = s;
        }
        /* A lone message may borrow every NIC of its node (NCCL's PXN). */
        line = r->kind == EST_COLL_SENDRECV ? node_net_bw(y, y->gpus_per_node, 0)
                                            : t.b_unit;
        floor_s = need / line;
        link = "network";
    } else {
        double need = r->kind == EST_COLL_ALLREDUCE || r->kind == EST_COLL_SENDRECV
                          ? s
                          : f * s;
        line = r->kind == EST_COLL_SENDRECV ? t.b_peer : t.b_link;
        floor_s = line > 0 ? need / line : 0;
        link = "scale-up";
    }
    if (floor_s > 0 && r->time_s < (1 - EST_FAST_TOLERANCE) * floor_s) {
        snprintf(why, cap,
                 "%.3g us is faster than the %s link allows (%.0f GB/s per "
                 "direction): at least %.3g us for %.4g bytes",
                 r->time_s * 1e6, link, line / 1e9, floor_s * 1e6, s);
        return EST_COLL_TOO_FAST;
    }
    /* Slowness is flagged on the network only: there a factor of five
     * below line rate has one known cause worth a warning. Inside a node
     * a slow row may be the real software (XLA's collective-permute), so
     * it stays, as measured. */
    if (t.m > 1 && s >= EST_SLOW_MIN_BYTES) {
        double lr = model_time(y, r->kind, s, &g, 1, 1, NULL);
        if (r->time_s > EST_COLL_SLOW_FACTOR * lr) {
            snprintf(why, cap,
                     "%.3g us is %.0fx the line-rate time across the %s "
                     "network (%d x %.0f Gb/s per node): below %.0f%% of "
                     "line rate, likely NCCL without its network plugin "
                     "(TCP sockets)",
                     r->time_s * 1e6, r->time_s / lr, y->inter_network,
                     y->nics_per_node, y->nic_bw_bytes_per_s * 8 / 1e9,
                     100 / EST_COLL_SLOW_FACTOR);
            return EST_COLL_TOO_SLOW;
        }
    }
    return 0;
}

/* ---- measured tables of a system ------------------------------------- */

typedef struct table {
    est_coll_table pub;
    int measured;        /* the y->measured entry of pub.file */
    est_coll_row *rows;  /* kept rows, sorted by bytes */
    int cap;
    double *lx, *ly;     /* pooled points: ln bytes, ln seconds */
} table;

struct est_comm {
    int n;
    table *t;
    uint64_t id; /* est_comm_id */
};

uint64_t est_comm_id(const est_comm *c)
{
    return c ? c->id : 0;
}

void est_comm_free(est_comm *c)
{
    if (!c) return;
    for (int i = 0; i < c->n; i++) {
        free(c->t[i].rows);
        free(c->t[i].lx);
        free(c->t[i].ly);
    }
    free(c->t);
    free(c);
}

static table *find_table(const est_comm *c, est_coll kind, int nodes,
                         int per_node)
{
    for (int i = 0; c && i < c->n; i++) {
        table *t = &c->t[i];
        if (t->pub.kind == kind && t->pub.nodes == nodes
            && t->pub.per_node == per_node)
            return t;
    }
    return NULL;
}

static int cmp_row(const void *a, const void *b)
{
    const est_coll_row *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
    if (x->time_s != y->time_s) return x->time_s < y->time_s ? -1 : 1;
    return x->line - y->line;
}

static int cmp_table(const void *a, const void *b)
{
    const table *x = a, *y = b;
    if (x->pub.kind != y->pub.kind) return (int)x->pub.kind - (int)y->pub.kind;
    if (x->pub.nodes != y->pub.nodes) return x->pub.nodes - y->pub.nodes;
    return x->pub.per_node - y->pub.per_node;
}

/* Sorts the rows and pools them per 1/16 octave into (ln b, ln t). */
static void build_points(table *t)
{
    int n = t->pub.n_rows;
    if (n > 1) qsort(t->rows, (size_t)n, sizeof *t->rows, cmp_row);
    t->lx = tp_xmalloc((size_t)(n ? n : 1) * sizeof *t->lx);
    t->ly = tp_xmalloc((size_t)(n ? n : 1) * sizeof *t->ly);
    int np = 0;
    for (int i = 0; i < n;) {
        double bin = floor(16 * log2(t->rows[i].bytes));
        double sx = 0, sy = 0;
        int k = 0;
        for (; i < n && floor(16 * log2(t->rows[i].bytes)) == bin; i++, k++) {
            sx += log(t->rows[i].bytes);
            sy += log(t->rows[i].time_s);
        }
        t->lx[np] = sx / k;
        t->ly[np] = sy / k;
        np++;
    }
    t->pub.n_points = np;
    t->pub.rows = t->rows;
}

static est_comm *comm_build(const hw_system *y, int keep_bad, tp_err *e)
{
    est_comm *c = tp_xcalloc(1, sizeof *c);
    c->id = est_new_id();
    for (int i = 0; i < y->n_measured; i++) {
        const hw_measured *m = &y->measured[i];
        if (strcmp(m->kind, "collective_table") != 0) continue;
        int kind = est_coll_parse(m->op);
        if (kind < 0) {
            tp_errf(e, TP_EDATA,
                    "%s: a collective_table entry names '%s', not a "
                    "collective (expected allreduce, reducescatter, "
                    "allgather, alltoall or sendrecv)",
                    y->file, m->op);
            est_comm_free(c);
            return NULL;
        }
        est_coll_row *rows;
        int n;
        if (est_coll_read_table(m->path, &rows, &n, e)) {
            est_comm_free(c);
            return NULL;
        }
        for (int k = 0; k < n; k++) {
            est_coll_row *r = &rows[k];
            if ((int)r->kind != kind) {
                tp_errf(e, TP_EDATA,
                        "%s:%d: a %s row in a file %s lists as %s", m->path,
                        r->line, est_coll_names[r->kind], y->file,
                        est_coll_names[kind]);
                free(rows);
                est_comm_free(c);
                return NULL;
            }
            table *t = find_table(c, r->kind, r->nodes, r->per_node);
            if (t && strcmp(t->pub.file, m->path) != 0) {
                /* A later file replaces the table: an import appends its
                 * entries, so a user's own measurements win. */
                t->pub.n_rows = 0;
                t->pub.n_bad = 0;
                t->measured = i;
                t->pub.file = m->path;
                t->pub.source = m->source;
            }
            if (!t) {
                c->t = tp_xrealloc(c->t, (size_t)(c->n + 1) * sizeof *c->t);
                t = &c->t[c->n++];
                memset(t, 0, sizeof *t);
                t->pub.kind = r->kind;
                t->pub.nodes = r->nodes;
                t->pub.per_node = r->per_node;
                t->measured = i;
                t->pub.file = m->path;
                t->pub.source = m->source;
            }
            char why[256];
            if (!keep_bad && est_coll_row_implausible(y, r, why, sizeof why)) {
                t->pub.n_bad++;
                continue;
            }
            if (t->pub.n_rows == t->cap) {
                t->cap = t->cap ? 2 * t->cap : 64;
                t->rows = tp_xrealloc(t->rows, (size_t)t->cap * sizeof *t->rows);
            }
            t->rows[t->pub.n_rows++] = *r;
        }
        free(rows);
    }
    if (c->n > 1) qsort(c->t, (size_t)c->n, sizeof *c->t, cmp_table);
    for (int i = 0; i < c->n; i++) build_points(&c->t[i]);
    return c;
}

/* ---- the fit cache (cache.c) ------------------------------------------
 *
 * An entry holds a system's tables as built: kept rows, pooled points,
 * counts, and which measured entry each table came from. Its key: the
 * system's and its GPU's hwdb files (the hygiene checks rows against
 * their links and peaks) and every collective_table file it lists, in
 * order, with the entry's collective. */

static int comm_key(const hw_system *y, int keep_bad, est_digest *key)
{
    if (!y->file || !y->gpu || !y->gpu->file
        || est_cache_key(key, "comm", y->name, keep_bad))
        return -1;
    const char *hw[4] = {y->file, y->base_file, y->gpu->file,
                         y->gpu->base_file};
    for (int i = 0; i < 4; i++) {
        est_digest_str(key, hw[i] ? "file" : "none");
        if (hw[i] && est_digest_file(key, hw[i])) return -1;
    }
    int files = 0;
    for (int i = 0; i < y->n_measured; i++) {
        const hw_measured *m = &y->measured[i];
        if (strcmp(m->kind, "collective_table") != 0) continue;
        est_digest_str(key, m->op);
        if (est_digest_file(key, m->path)) return -1;
        files++;
    }
    return files > 0 ? 0 : -1; /* no tables: nothing to keep */
}

void est_comm_payload(const est_comm *c, est_wbuf *b)
{
    est_w_i32(b, c->n);
    for (int i = 0; i < c->n; i++) {
        const table *t = &c->t[i];
        est_w_i32(b, (int32_t)t->pub.kind);
        est_w_i32(b, t->pub.nodes);
        est_w_i32(b, t->pub.per_node);
        est_w_i32(b, t->measured);
        est_w_i32(b, t->pub.n_rows);
        est_w_i32(b, t->pub.n_bad);
        est_w_i32(b, t->pub.n_points);
        for (int k = 0; k < t->pub.n_rows; k++) {
            const est_coll_row *r = &t->rows[k];
            est_w_i32(b, (int32_t)r->kind);
            est_w_i32(b, (int32_t)r->dtype);
            est_w_i32(b, r->nodes);
            est_w_i32(b, r->per_node);
            est_w_i32(b, r->line);
            est_w_f64(b, r->bytes);
            est_w_f64(b, r->time_s);
        }
        est_w_f64s(b, t->lx, (size_t)t->pub.n_points);
        est_w_f64s(b, t->ly, (size_t)t->pub.n_points);
    }
}

est_comm *est_comm_from_payload(const hw_system *y, const unsigned char *p,
                                size_t len, char *why, size_t cap)
{
    est_rbuf r = {p, len, 0, 0};
    const char *bad = NULL;
    est_comm *c = tp_xcalloc(1, sizeof *c);
    c->id = est_new_id();
    int n = est_r_i32(&r);
    /* A table takes at least 28 bytes: no more than that could hold. */
    if (n < 0 || (size_t)n > est_r_left(&r) / 28) {
        bad = "a table count out of range";
        n = 0;
    }
    c->t = tp_xcalloc((size_t)(n ? n : 1), sizeof *c->t);
    for (int i = 0; i < n && !bad; i++) {
        table *t = &c->t[c->n++];
        t->pub.kind = (est_coll)est_r_i32(&r);
        t->pub.nodes = est_r_i32(&r);
        t->pub.per_node = est_r_i32(&r);
        t->measured = est_r_i32(&r);
        t->pub.n_rows = est_r_i32(&r);
        t->pub.n_bad = est_r_i32(&r);
        t->pub.n_points = est_r_i32(&r);
        int nr = t->pub.n_rows, np = t->pub.n_points;
        if (r.bad) {
            bad = "truncated";
        } else if ((unsigned)t->pub.kind >= EST_COLL_COUNT || t->measured < 0
                   || t->measured >= y->n_measured
                   || strcmp(y->measured[t->measured].kind, "collective_table") != 0) {
            bad = "a table of no collective or no measured file";
        } else if (t->pub.nodes < 1 || t->pub.nodes > 1000000 || t->pub.per_node < 1
                   || t->pub.per_node > 4096) {
            bad = "a group shape out of the range a table may have";
        } else if (nr < 0 || t->pub.n_bad < 0 || np < (nr > 0) || np > nr
                   || (size_t)nr > est_r_left(&r) / 36) {
            bad = "a row count out of range";
        }
        if (bad) break;
        const hw_measured *m = &y->measured[t->measured];
        t->pub.file = m->path;
        t->pub.source = m->source;
        t->cap = nr;
        t->rows = tp_xmalloc((size_t)(nr ? nr : 1) * sizeof *t->rows);
        for (int k = 0; k < nr; k++) {
            est_coll_row *w = &t->rows[k];
            w->kind = (est_coll)est_r_i32(&r);
            w->dtype = (hw_dtype)est_r_i32(&r);
            w->nodes = est_r_i32(&r);
            w->per_node = est_r_i32(&r);
            w->line = est_r_i32(&r);
            w->bytes = est_r_f64(&r);
            w->time_s = est_r_f64(&r);
            if ((unsigned)w->kind >= EST_COLL_COUNT
                || (unsigned)w->dtype >= HW_DTYPE_COUNT)
                bad = "a row of no collective or dtype";
            else if (!(w->bytes > 0 && w->time_s > 0 && isfinite(w->bytes)
                       && isfinite(w->time_s)))
                bad = "a row's size or time not a positive number";
        }
        t->lx = tp_xmalloc((size_t)(np ? np : 1) * sizeof *t->lx);
        t->ly = tp_xmalloc((size_t)(np ? np : 1) * sizeof *t->ly);
        est_r_f64s(&r, t->lx, (size_t)np);
        est_r_f64s(&r, t->ly, (size_t)np);
        for (int k = 0; k < np && !bad; k++)
            if (!isfinite(t->lx[k]) || !isfinite(t->ly[k])
                || (k > 0 && !(t->lx[k] > t->lx[k - 1])))
                bad = "interpolation points not finite or not increasing";
        t->pub.rows = t->rows;
    }
    if (!bad && r.bad) bad = "truncated payload";
    if (!bad && est_r_left(&r)) bad = "bytes after its end";
    if (bad) {
        snprintf(why, cap, "%s", bad);
        est_comm_free(c);
        return NULL;
    }
    return c;
}

static void comm_store(const hw_system *y, const est_comm *c,
                       const est_digest *key)
{
    est_wbuf b = {0};
    est_comm_payload(c, &b);
    est_cache_put("comm", y->name, key, &b);
    free(b.p);
}

/* y's tables from the cache, or NULL when there is no good entry. */
static est_comm *comm_load(const hw_system *y, const est_digest *key)
{
    est_cache_entry ent;
    if (!est_cache_get("comm", y->name, key, &ent)) return NULL;
    char why[200];
    est_comm *c = est_comm_from_payload(y, ent.data + ent.off, ent.n, why,
                                        sizeof why);
    if (!c)
        est_cache_reject(&ent, why);
    else
        est_cache_entry_free(&ent);
    return c;
}

est_comm *est_comm_load(const hw_system *y, int keep_bad, tp_err *e)
{
    est_digest key;
    int cached = comm_key(y, keep_bad, &key) == 0;
    est_comm *c = cached ? comm_load(y, &key) : NULL;
    if (c) return c;
    c = comm_build(y, keep_bad, e);
    est_digest again; /* as est_models_open: the files unchanged meanwhile */
    if (c && cached && comm_key(y, keep_bad, &again) == 0 && again.a == key.a
        && again.b == key.b)
        comm_store(y, c, &key);
    return c;
}

est_comm *est_comm_open(const hw_system *y, tp_err *e)
{
    return est_comm_load(y, 0, e);
}

int est_comm_table_count(const est_comm *c)
{
    return c ? c->n : 0;
}

const est_coll_table *est_comm_table_at(const est_comm *c, int i)
{
    return c && i >= 0 && i < c->n ? &c->t[i].pub : NULL;
}

/* The measured time at ln bytes lx from t's points; *out_of_range set
 * when lx lies outside them (then anchored on the analytical shape). */
static double table_time(const table *t, const hw_system *y, est_coll kind,
                         double bytes, const est_group *g, double model_s,
                         int *out_of_range)
{
    int np = t->pub.n_points;
    double lx = log(bytes);
    *out_of_range = 0;
    if (lx < t->lx[0] || lx > t->lx[np - 1] || np == 1) {
        int edge = lx < t->lx[0] ? 0 : np - 1;
        *out_of_range = lx != t->lx[edge];
        double eb = exp(t->lx[edge]);
        double me = model_time(y, kind, eb, g, EST_ETA_SCALEUP,
                               EST_ETA_NETWORK, NULL);
        return exp(t->ly[edge]) * model_s / me;
    }
    int lo = 0, hi = np - 1; /* lx[lo] <= lx <= lx[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (t->lx[mid] <= lx)
            lo = mid;
        else
            hi = mid;
    }
    double w = t->lx[hi] > t->lx[lo] ? (lx - t->lx[lo]) / (t->lx[hi] - t->lx[lo])
                                     : 0;
    return exp(t->ly[lo] + w * (t->ly[hi] - t->ly[lo]));
}

double est_coll_time_info(const est_comm *c, const hw_system *y,
                          est_coll kind, double bytes, const est_group *g,
                          est_coll_info *info)
{
    est_coll_info tmp;
    if (!info) info = &tmp;
    memset(info, 0, sizeof *info);
    info->algorithm = "none";
    info->protocol = "none";
    info->bottleneck = "none";
    char why[200];
    if ((int)kind < 0 || kind >= EST_COLL_COUNT
        || est_group_check(y, g, why, sizeof why)) {
        info->time_s = info->analytical_s = NAN;
        return NAN;
    }
    if (g->size == 1) return 0; /* nothing to move */
    double model = model_time(y, kind, bytes, g, EST_ETA_SCALEUP,
                              EST_ETA_NETWORK, info);
    info->time_s = model;
    const table *t = find_table(c, kind, g->nodes, g->per_node);
    if (t && t->pub.n_points > 0 && bytes > 0) {
        info->table = &t->pub;
        info->time_s = table_time(t, y, kind, bytes, g, model,
                                  &info->extrapolated);
    }
    return info->time_s;
}

double est_coll_time(const est_comm *c, const hw_system *y, est_coll kind,
                     double bytes, const est_group *g)
{
    return est_coll_time_info(c, y, kind, bytes, g, NULL);
}

double est_coll_linerate_time(const hw_system *y, est_coll kind, double bytes,
                              const est_group *g)
{
    char why[200];
    if ((int)kind < 0 || kind >= EST_COLL_COUNT
        || est_group_check(y, g, why, sizeof why))
        return NAN;
    if (g->size == 1) return 0;
    return model_time(y, kind, bytes, g, 1, 1, NULL);
}
