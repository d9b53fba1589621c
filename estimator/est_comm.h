/*
 * est_comm.h - the collectives part of est.h: collective kinds, groups
 * and their placement check, a collective's time per tier or from a
 * system's measured tables (comm.c), table files (comm_table.c) and
 * their hygiene, nccl-tests logs (nccl_tests.c). Included by est.h;
 * include est.h, not this.
 */
#ifndef TP_EST_COMM_H
#define TP_EST_COMM_H

#include "hw.h"

#include <stddef.h>

/* ---- collectives (comm.c) ------------------------------------------- */

typedef enum est_coll {
    EST_COLL_ALLREDUCE,
    EST_COLL_REDUCE_SCATTER,
    EST_COLL_ALLGATHER,
    EST_COLL_ALLTOALL,
    EST_COLL_SENDRECV,
    EST_COLL_COUNT
} est_coll;

/* "allreduce", "reducescatter", "allgather", "alltoall", "sendrecv": the
 * names bench/sampler/collsample.py and the seed samples use. */
extern const char *const est_coll_names[EST_COLL_COUNT];

/* Returns the collective named s, or -1. Takes the names above and the
 * spellings people paste: all_reduce, all-reduce, reduce_scatter, p2p,
 * send_recv, nccl-tests binaries (all_reduce_perf, ...), XLA opcodes
 * (all-gather, ...), case-insensitive. */
int est_coll_parse(const char *s);

/* A communicator placed on a system: `size` ranks, `per_node` of them on
 * each of `nodes` nodes (size = per_node x nodes). Megatron-LM places TP
 * innermost, so a TP group of 8 on 8-GPU nodes is {8, 8, 1}. Nodes are
 * taken to be consecutive, so a group on a system whose scale-up domain
 * spans several nodes (GB200 NVL72: 18 trays of 4) fills one domain before
 * the next. Send/recv over a group: every rank sends `bytes` to one peer
 * and receives as much from another at the same time (a pipeline stage
 * boundary, nccl-tests' sendrecv_perf); a group of 2 is one pair. */
typedef struct est_group {
    int size;
    int per_node;
    int nodes;
    /* GPUs of a node whose traffic crosses the network at the same time
     * as this group's: in a training step every rank of a node runs the
     * same collective in its own group (the DP groups of all TP ranks,
     * the pipeline sends of all ranks of a stage), so the node's NICs are
     * shared by that many. 0 or <= per_node: this group alone (a lone
     * GPU may then use a whole NIC where a node has fewer NICs than
     * GPUs). */
    int node_busy;
} est_group;

/* Checks that g fits y: size = per_node x nodes >= 1, per_node at most
 * y's GPUs per node, nodes at most max_nodes when y has one. Returns 0,
 * or -1 with the reason in why[cap]. */
int est_group_check(const hw_system *y, const est_group *g, char *why,
                    size_t cap);

/* One measured row of a collective table (CSV columns collective, dtype,
 * nodes, gpus_per_node, bytes, time_us; docs/hwdb.md). */
typedef struct est_coll_row {
    est_coll kind;
    hw_dtype dtype;
    int nodes, per_node;
    double bytes;     /* per rank, in the est_coll_time convention */
    double time_s;
    int line;         /* in its file, for messages */
} est_coll_row;

/* The times a measured collective table accepts, in microseconds: what
 * est_coll_read_table reads and hw import-nccl-tests may write. */
#define EST_COLL_TIME_MIN_US 1e-3
#define EST_COLL_TIME_MAX_US 1e12

/* Reads a collective table file. Allocates *out (free with free()).
 * Errors name file, line, column and value (TP_EDATA / TP_ENOINPUT). */
int est_coll_read_table(const char *path, est_coll_row **out, int *n,
                        tp_err *e);

/* Sample hygiene for one measured row on y: returns 0 for a plausible row,
 * EST_COLL_TOO_FAST when it beats the bandwidth floor of a link it must
 * cross (what any algorithm, in-network reduction included, has to move
 * over that link, at line rate), or EST_COLL_TOO_SLOW when it crosses the
 * network, moves at least 1 MiB and takes over EST_COLL_SLOW_FACTOR
 * times the line-rate model (below 20 % of line rate: likely NCCL without
 * its network plugin, falling back to TCP sockets). A row whose group does
 * not fit y (est_group_check) gives EST_COLL_BAD_GROUP. The reason goes
 * to why[cap]. */
enum { EST_COLL_TOO_FAST = 1, EST_COLL_TOO_SLOW = 2, EST_COLL_BAD_GROUP = 3 };
#define EST_COLL_SLOW_FACTOR 5.0
int est_coll_row_implausible(const hw_system *y, const est_coll_row *r,
                             char *why, size_t cap);

/* Measured collective tables of one system (from its hwdb `measured`
 * entries of kind collective_table), opaque. Free with est_comm_free. */
typedef struct est_comm est_comm;

/* Loads the tables y lists (none is fine: the analytical model is used).
 * Implausible rows (est_coll_row_implausible) are left out.
 * NULL and e on a bad table file. */
est_comm *est_comm_open(const hw_system *y, tp_err *e);

/* est_comm_open, keeping implausible rows when keep_bad is set. */
est_comm *est_comm_load(const hw_system *y, int keep_bad, tp_err *e);
void est_comm_free(est_comm *c); /* accepts NULL */
/* A number no other est_comm opened by this process has (the address of
 * a freed one may come back), 0 for NULL: keys of memoized times. */
uint64_t est_comm_id(const est_comm *c);

/* One table of an est_comm: the rows of one collective and group shape
 * (owned by the est_comm; read-only). When several files of the system
 * list that shape, the file listed last wins. */
typedef struct est_coll_table {
    est_coll kind;
    int nodes, per_node;
    const char *file;      /* the file it came from */
    const char *source;    /* its hwdb citation */
    int n_rows;            /* rows kept, sorted by bytes */
    const est_coll_row *rows;
    int n_bad;             /* implausible rows left out (0 with keep_bad) */
    int n_points;          /* interpolation points after pooling */
} est_coll_table;

int est_comm_table_count(const est_comm *c);
const est_coll_table *est_comm_table_at(const est_comm *c, int i);

/* Where a time came from, for `coll show`. */
typedef struct est_coll_info {
    double time_s;
    double analytical_s;     /* the analytical model's time, always set */
    const est_coll_table *table; /* the measured table used, or NULL */
    int extrapolated;        /* bytes outside the table's measured range */
    const char *algorithm;   /* analytical: "ring", "tree", "pairwise",
                                "p2p" */
    const char *protocol;    /* analytical: NCCL's "LL", "LL128", "Simple" */
    const char *bottleneck;  /* analytical: "scale-up" or "network" */
    double bw_bytes_per_s;   /* per GPU and direction, of the bottleneck
                                link as the model uses it (fraction of line
                                rate applied) */
} est_coll_info;

/* Time in seconds of one collective moving `bytes` per rank (all-reduce,
 * reduce-scatter, all-to-all: the input buffer; all-gather: the output
 * buffer; send/recv: the message; nccl-tests' "size" column in each
 * case) over group g on y. From a measured table of that system,
 * collective and group shape where c has one (interpolated in log size),
 * else from the analytical per-tier model. c may be NULL (analytical
 * only). A group of one rank takes 0 s. A group that does not fit y
 * (est_group_check) gives NAN. Deterministic; no allocation. */
double est_coll_time(const est_comm *c, const hw_system *y, est_coll kind,
                     double bytes, const est_group *g);

/* est_coll_time, also saying where the time came from (info may be NULL). */
double est_coll_time_info(const est_comm *c, const hw_system *y,
                          est_coll kind, double bytes, const est_group *g,
                          est_coll_info *info);

/* The analytical model at full line rate (no achievable-fraction factor):
 * what hygiene and `coll cv` compare measured times with. NAN for a group
 * that does not fit y; 0 for one rank. */
double est_coll_linerate_time(const hw_system *y, est_coll kind, double bytes,
                              const est_group *g);

/* nccl-tests' bus-bandwidth factor of a collective over n ranks
 * (NVIDIA/nccl-tests doc/PERFORMANCE.md): busbw = algbw x factor. */
double est_coll_busbw_factor(est_coll kind, int n);

/* ---- nccl-tests logs (nccl_tests.c) ---------------------------------- */

/* One test section of an nccl-tests log: what ran, on what, and its rows
 * (one per size: the mean of the out-of-place and in-place times). */
typedef struct est_nccl_test {
    est_coll kind;
    int nodes, per_node;       /* from the "# Rank" lines, or overridden */
    char device[96];           /* GPU name the rank lines print, or "" */
    char version[160];         /* "# nccl-tests version ..." line, or "" */
    char file[512];
    int first_line;            /* where the section starts */
    int n_rows;
    est_coll_row *rows;        /* malloc'd */
    int n_unverified;          /* rows with a half whose #wrong is N/A */
} est_nccl_test;

/* Parses an nccl-tests text log (stdout of all_reduce_perf & co., one or
 * more tests, with or without srun's "N: " labels). op (-1 = none) names
 * the collective when the log does not; nodes/per_node > 0 override the
 * shape the "# Rank" lines give. Appends each section with data rows to
 * *tests (realloc'd; *n counts them). Errors name file:line, the field
 * and the value (TP_EDATA), or TP_ENOINPUT. Free with est_nccl_free. */
int est_nccl_parse(const char *path, int op, int nodes, int per_node,
                   est_nccl_test **tests, int *n, tp_err *e);
void est_nccl_free(est_nccl_test *tests, int n); /* accepts NULL */

#endif
