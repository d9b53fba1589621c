/*
 * hw.h - the hardware database: GPUs and systems (clusters), loaded from
 * JSON files into plain structs, every number with its source.
 *
 * Files: the built-in directory shipped with trainplan (hwdb/data in the
 * source tree, share/trainplan/hwdb once installed), then each directory
 * named by $TRAINPLAN_HWDB (colon-separated), then each --hwdb DIR, in
 * that order. A directory holds gpus/NAME.json and systems/NAME.json; a later
 * file whose name matches an earlier entry is merged over it (JSON Merge
 * Patch, a sourced number replaced whole), so a user's override of a
 * built-in system can be a file of the one field it changes (e.g. its
 * price). The schema is in docs/hwdb.md.
 *
 * All values are SI inside trainplan: FLOP/s, bytes, bytes/s, seconds,
 * hertz, watts, US dollars. The JSON files use the units datasheets use
 * (TFLOP/s, GiB, GB/s, Gbit/s, MHz, microseconds) with the unit in the key
 * name; the loader converts once.
 *
 * Not here: operator or collective time models (estimator/), which read
 * the measured-data entries this module only lists and checks.
 */
#ifndef TP_HW_H
#define TP_HW_H

#include "tp_base.h"

typedef enum hw_dtype {
    HW_FP32,
    HW_TF32,
    HW_FP16,
    HW_BF16,
    HW_FP8,
    HW_FP4,     /* e2m1 with block scales (NVFP4: Blackwell) */
    HW_DTYPE_COUNT
} hw_dtype;

extern const char *const hw_dtype_names[HW_DTYPE_COUNT]; /* "fp32", ... */

/* Returns the dtype named s (case-insensitive), or -1. */
int hw_dtype_parse(const char *s);

/* One sourced number as loaded, for `hw show` and `hw check`. */
typedef struct hw_field {
    const char *key;    /* JSON key, e.g. "peak_tflops.bf16" (static) */
    const char *unit;   /* SI unit of value, e.g. "FLOP/s" (static) */
    double value;       /* SI */
    const char *file_unit; /* unit the file writes, e.g. "TFLOP/s" (static) */
    double file_value;  /* as written in the file */
    const char *source; /* citation text; owned by the hw_db */
} hw_field;

#define HW_NAME_MAX 48
#define HW_MAX_FIELDS 32
#define HW_MAX_ALIASES 8
#define HW_FP8_ATTN_MAX 12 /* points of a GPU's fp8 attention table */

/* Measured data a file points at (operator samples, collective tables).
 * Filled by the next issue's importers; listed and existence-checked now. */
typedef struct hw_measured {
    char kind[32];     /* "operator_samples" | "collective_table" */
    char op[48];       /* operator or collective name */
    char dtype[8];     /* "fp16", ... */
    const char *path;  /* absolute or relative to the cwd; owned by hw_db */
    const char *source;
} hw_measured;

typedef struct hw_gpu {
    char name[HW_NAME_MAX];      /* canonical lowercase name, "h100-sxm" */
    char display_name[160];
    char vendor[16];             /* "nvidia" | "amd" */
    char arch[32];
    double peak_flops[HW_DTYPE_COUNT]; /* dense, FLOP/s; 0 = not supported */
    double mem_bytes;
    double mem_bw_bytes_per_s;
    int sm_count;                /* SMs (NVIDIA) or CUs (AMD) */
    double clock_hz;             /* boost clock */
    double l2_bytes;             /* 0 if unknown */
    double scaleup_bw_bytes_per_s; /* NVLink / Infinity Fabric, per GPU, per direction */
    double power_w;              /* TDP / board power */
    /* The GPU's factor on a software stack's in-training kernel
     * efficiency (estimator/kernel_eff.c): what the GPU does to a kernel's
     * speed inside a training step beyond its samples, above all the
     * clocks its power limit sustains; 1 for the A100 80GB by definition.
     * Fitted to published runs by bench/validate_runs; 0 = not fitted (the
     * models_like GPU's, else 1). */
    double kernel_eff_factor;
    int n_aliases;
    char aliases[HW_MAX_ALIASES][HW_NAME_MAX];
    int n_fields;
    hw_field fields[HW_MAX_FIELDS];
    int n_measured;
    hw_measured *measured;       /* owned by the hw_db */
    /* A GPU without operator samples of its own may name one of the same
     * silicon ("operator_models_like"): its fitted efficiencies relative
     * to the roofline are then applied to this GPU's own peaks and
     * bandwidth. Empty name and NULL when not given. */
    char models_like_name[HW_NAME_MAX];
    const struct hw_gpu *models_like; /* resolved; points into the hw_db */
    /* The GPU whose kernel_eff_factor this one takes when it has none of
     * its own (hw_db_resolve): the models_like GPU where that has one,
     * else the nearest generation of the same vendor with a factor
     * (hw_gpu_nearest_generation); NULL: none (1). Points into the hw_db. */
    const struct hw_gpu *kernel_eff_from;
    const char *models_like_note;     /* why, with its source; owned by the hw_db */
    const char *file;            /* the file it came from; owned by the hw_db */
    const char *base_file;       /* the built-in (first) file it was merged
                                  * over, or NULL (docs/hwdb.md Overrides) */
    /* The GPU's link to its host CPU's memory, per direction (PCIe x16,
     * or NVLink-C2C on Grace superchips); 0 = not in the file (offloading
     * to the host is then refused). */
    double host_link_bw_bytes_per_s;
    /* The host's time to issue one eager PyTorch module call that
     * launches one kernel (torch.nn.Linear forward: Python, dispatcher,
     * autograd, cudaLaunchKernel) on the CPU this GPU's nodes usually
     * have; what the estimator counts a layer's host side in
     * (estimator/host.c). 0 = not in the file (the host not modelled). */
    double host_launch_s;
    /* What a block-scaled fp4 (NVFP4) GEMM achieves over the 16-bit GEMM
     * of the same large shape on this GPU, measured with the same library
     * (cuBLAS): below the fp4 / bf16 peak ratio on Blackwell, where the
     * fp4 kernels reach a smaller share of their peak than bf16 ones.
     * est_models_time holds every fp4 GEMM to at least the 16-bit time
     * over this; at most peak_flops[HW_FP4] / peak_flops[HW_BF16] (the
     * loader checks). 0 = not in the file (the fp8 bound only). */
    double fp4_gemm_speedup;
    /* fp8 attention (Transformer Engine's FP8 dot-product attention, cuDNN's
     * fp8 fused attention) over the 16-bit kernel's time on this GPU, by
     * sequence length, measured with the same library at the same shape
     * ("fp8_attention": seq, fwd, bwd); fp8_attn_n = 0: not in the file
     * (the models_like GPU's then, else fp8 attention is refused). */
    int fp8_attn_n;
    double fp8_attn_seq[HW_FP8_ATTN_MAX];
    double fp8_attn_fwd[HW_FP8_ATTN_MAX], fp8_attn_bwd[HW_FP8_ATTN_MAX];
} hw_gpu;

typedef enum hw_topology {
    HW_TOPO_NVSWITCH,   /* all-to-all through switches */
    HW_TOPO_DIRECT,     /* direct point-to-point links (e.g. 4 A100 in a ring/mesh) */
    HW_TOPO_FAT_TREE,
    HW_TOPO_RAIL,       /* rail-optimised fat tree */
    HW_TOPO_DRAGONFLY,
    HW_TOPO_NONE,       /* one GPU per node: no intra-node fabric */
    HW_TOPO_COUNT
} hw_topology;

extern const char *const hw_topology_names[HW_TOPO_COUNT];

typedef struct hw_system {
    char name[HW_NAME_MAX];
    char display_name[160];
    char gpu_name[HW_NAME_MAX];  /* as written in the file */
    const hw_gpu *gpu;           /* resolved; points into the hw_db */
    int gpus_per_node;
    int scaleup_domain_gpus;     /* GPUs sharing the scale-up fabric (72 in NVL72) */
    int max_nodes;               /* nodes one job can get; 0 = unknown */
    /* Intra-node (scale-up) fabric. */
    char intra_fabric[32];
    hw_topology intra_topology;
    double intra_bw_bytes_per_s; /* per GPU, per direction */
    double intra_latency_s;
    /* Inter-node (scale-out) network. */
    char inter_network[48];
    hw_topology inter_topology;
    int nics_per_node;
    double nic_bw_bytes_per_s;   /* per NIC, per direction */
    double inter_latency_s;
    double price_usd_per_gpu_hour;
    int n_aliases;
    char aliases[HW_MAX_ALIASES][HW_NAME_MAX];
    int n_fields;
    hw_field fields[HW_MAX_FIELDS];
    int n_measured;
    hw_measured *measured;
    const char *file;
    const char *base_file; /* as hw_gpu's */
    /* The hosts (what offloading to CPU memory uses): the bandwidth of a
     * node's CPU memory, all sockets (or Grace chips) together, its size,
     * and each GPU's host link where the node narrows it below the GPU's
     * own (a PCIe switch shared by two GPUs); 0 = not in the file (the
     * GPU's link; offloading refused without the memory bandwidth). */
    double host_mem_bw_bytes_per_s;
    double host_mem_bytes;
    double host_link_bw_bytes_per_s;
} hw_system;

typedef struct hw_db hw_db; /* opaque: owns every string and array above */

/* Loads the built-in directory, then $TRAINPLAN_HWDB, then user_dirs.
 * Returns NULL and fills e on the first bad file (TP_EDATA / TP_ENOINPUT).
 * Free with hw_db_free(). */
hw_db *hw_db_open(const char *const *user_dirs, int n_user_dirs, tp_err *e);

/* Loads exactly the given directories, nothing built in (for tests). */
hw_db *hw_db_open_dirs(const char *const *dirs, int n_dirs, tp_err *e);

void hw_db_free(hw_db *db); /* accepts NULL */

/* Writes the built-in directory this binary uses into buf: the
 * share/trainplan/hwdb beside the shared library this code is in
 * (libtrainplan.so: LIBDIR/../share), else beside the executable when
 * installed, else the source tree's hwdb/data, else the configured
 * install dir. */
void hw_builtin_dir(char *buf, size_t cap);

/* Adds one GPU or system file (kind read from its "schema") to db,
 * replacing an entry of the same name; a system's GPU must already be in
 * db. Used for --system FILE. Returns TP_OK or the error. */
int hw_db_add_file(hw_db *db, const char *path, tp_err *e);

/* g's generation among its vendor's data-centre GPUs, by "arch" (hw_load.c's
 * table; larger is newer), -1 when the table does not know it. */
int hw_gpu_generation(const hw_gpu *g);

/* Of the n GPUs in cands, the index of the one of g's vendor from the
 * newest generation not newer than g's (ties: the first by name), or -1
 * (none, or g's generation unknown): the GPU whose fitted figures stand in
 * for g's own where g has none (a newer generation is no evidence of what
 * an older one did; another vendor's is none at all). */
int hw_gpu_nearest_generation(const hw_gpu *g, const hw_gpu *const *cands,
                              int n);

/* The GPU whose fp8 attention table g uses: g where it has one, else its
 * models_like GPU where that has one, else NULL. */
const hw_gpu *hw_gpu_fp8_attention_of(const hw_gpu *g);

/* g's fp8 attention time over its 16-bit time at sequence length seq
 * (linear in log2 of the length between the table's points, its ends held
 * beyond them), forward and backward, from hw_gpu_fp8_attention_of's
 * table. Returns 0 (and 1s) where there is none. */
int hw_gpu_fp8_attention(const hw_gpu *g, double seq, double *fwd,
                         double *bwd);

int hw_gpu_count(const hw_db *db);
const hw_gpu *hw_gpu_at(const hw_db *db, int i); /* sorted by name */
int hw_system_count(const hw_db *db);
const hw_system *hw_system_at(const hw_db *db, int i);

/* Finds by name or alias (case-insensitive). On failure returns NULL and
 * fills e (TP_EDATA) with the closest known names. */
const hw_gpu *hw_find_gpu(const hw_db *db, const char *name, tp_err *e);
const hw_system *hw_find_system(const hw_db *db, const char *name, tp_err *e);

/* Validates one GPU or system file (the kind is read from its "schema"),
 * resolving a system's GPU against db (may be NULL: built-ins only are
 * not consulted then). Writes every problem found, one per line, into
 * report (the caller frees it). Returns TP_OK when the file is clean,
 * else the status of the worst problem. */
int hw_check_file(const hw_db *db, const char *path, char **report);

#endif
