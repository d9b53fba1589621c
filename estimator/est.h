/*
 * est.h - how long things take on a GPU: one interface for the forward
 * and backward time of every operator of a training step, answered by an
 * analytical roofline model for any GPU in hwdb, or by a model fitted to
 * measured samples of that GPU where hwdb has them.
 *
 * The fitted model learns the measured time's ratio to the analytical
 * one, r = t_measured / t_roofline, as a linear function of log-shape
 * features that are clamped to the range seen in training. Inside the
 * sampled grid it follows the samples; outside it the ratio stays at its
 * edge value and the roofline carries the scaling, so predictions stay
 * physical (time grows with FLOPs and bytes) beyond the grid, where tree
 * ensembles (the seed paper's random forests / XGBoost) go flat.
 *
 * Also here: every operator model of a GPU behind one call (models.c),
 * memory per GPU of a layout (mem.c; declared in est_mem.h), collective
 * times per tier or from measured tables (comm.c) and nccl-tests logs
 * (nccl_tests.c; both declared in est_comm.h), which est.h includes.
 * Next: the time of one training iteration (issue 5).
 */
#ifndef TP_EST_H
#define TP_EST_H

#include "hw.h"
#include "pcg32.h"
#include "space.h"

/* Memory per GPU (mem.c) and collectives (comm.c), in headers of their
 * own. */
#include "est_comm.h"
#include "est_mem.h"

typedef enum est_op_kind {
    EST_OP_GEMM,          /* b x (m x k) @ (k x n) */
    EST_OP_FLASH_ATTN,    /* b, heads, kv_heads, sq, sk, head_dim, causal:
                             FlashAttention-2 (the flash-attn package,
                             PyTorch SDPA's flash backend) */
    EST_OP_LAYERNORM,     /* rows x cols, normalised over cols */
    EST_OP_RMSNORM,
    EST_OP_GELU,          /* rows x cols elements */
    EST_OP_SWIGLU,        /* rows x cols outputs (2 inputs each) */
    EST_OP_RESADD,
    EST_OP_DROPOUT,
    EST_OP_ROPE,          /* rows x cols elements of q or k: one fused
                             kernel (Megatron-Core's and Transformer
                             Engine's fused RoPE, torch.compile) */
    EST_OP_SOFTMAX,       /* rows x cols: PyTorch's softmax */
    EST_OP_MASKED_SOFTMAX, /* rows x cols: Megatron's fused scale, causal
                             mask and softmax (scaled_upper_triang_masked_
                             softmax), which reads only the unmasked lower
                             triangle */
    EST_OP_EMBEDDING,     /* rows = tokens, cols = hidden, n = vocab rows */
    EST_OP_CROSS_ENTROPY, /* rows = tokens, cols = vocab columns on this rank */
    EST_OP_ADAM,          /* n = parameters (fp32 master, fp32 m and v) */
    EST_OP_FP8_CAST,      /* rows x cols 16-bit elements to fp8 with a
                             per-tensor scale (amax pass, cast pass);
                             "backward": transposing the fp8 copy (torchao) */
    /* Transformer Engine's quantisation kernels, forward only (the
     * estimator places each in the pass that runs it), rows x cols: */
    EST_OP_FP8_QUANT2,    /* read 16-bit, write two fp8 copies: rowwise and
                             transposed (Hopper cast-transpose), or
                             columnwise (blockwise, MXFP8) */
    EST_OP_FP8_QUANT1,    /* read 16-bit, write one fp8 copy */
    EST_OP_FP8_TRANSPOSE, /* read an fp8 copy, write its transpose */
    EST_OP_AMAX,          /* read 16-bit, reduce to the absolute maximum
                             (current scaling's separate pass) */
    /* PyTorch eager composites (torchtitan's Llama without torch.compile),
     * as the separate kernels they launch; roofline only: */
    EST_OP_RMSNORM_EAGER, /* rows x cols: F.rms_norm's upcast, pow, mean,
                             rsqrt, mul, downcast, weight mul */
    EST_OP_SWIGLU_EAGER,  /* rows x cols outputs: silu(gate), then * up */
    EST_OP_ROPE_EAGER,    /* rows x cols elements of q or k: upcast,
                             complex multiply, downcast */
    /* Unfused forms the seed samples (GPT-NeoX code) and our sampler
     * time, kept apart so that a fused kernel is never fitted to them: */
    EST_OP_ROPE_UNFUSED,  /* rows x cols of q and k: x cos + rotate_half(x)
                             sin (slice, negate, concatenate, two
                             multiplies, an add; GPT-NeoX's TorchScript
                             apply_rotary_pos_emb, Megatron's unfused path) */
    EST_OP_RMSNORM_UNFUSED, /* rows x cols: GPT-NeoX's RMSNorm module
                             (x.norm over the row, scale, divide, weight
                             multiply as separate kernels) */
    EST_OP_ATTN_CUDNN,    /* as EST_OP_FLASH_ATTN: cuDNN's fused attention
                             (F16_arbitrary_seqlen), which Transformer
                             Engine runs on Hopper and Blackwell; causal
                             and not fitted together */
    EST_OP_NVFP4_QUANT,   /* Transformer Engine's NVFP4 quantisation,
                             forward only, rows x cols: read 16-bit, write
                             a rowwise and a columnwise e2m1 copy, each
                             with one e4m3 scale per 16 elements (the
                             columnwise one of the wgrad GEMM through a
                             16 x 16 random Hadamard transform) */
    EST_OP_PERMUTE,       /* rows x cols: an MoE token permutation (a
                             gather of rows into expert order, or its
                             reverse); backward the reverse, same bytes */
    EST_OP_ROUTER,        /* rows = tokens, cols = experts: an MoE router's
                             scores, top-k, routing map and load-balancing
                             loss as Megatron-Core's PyTorch ops (default
                             moe_router_fusion off); roofline only */
    EST_OP_ROUTER_FUSED,  /* the same as Transformer Engine's fused router
                             kernels (--moe-router-fusion) */
    EST_OP_COUNT
} est_op_kind;

extern const char *const est_op_names[EST_OP_COUNT];

/* One operator at one shape, per GPU (shapes are per TP rank). A plain
 * value; fields an op does not use stay 0. */
typedef struct est_op {
    est_op_kind kind;
    hw_dtype dtype;
    int64_t b, m, n, k;            /* GEMM */
    int64_t heads, kv_heads, sq, sk, head_dim;
    int causal;                    /* attention */
    int64_t rows, cols;            /* memory-bound ops */
    int vocab_parallel;            /* embedding split over TP ranks (TP > 1) */
} est_op;

typedef struct est_time {
    double fwd_s;
    double bwd_s;
} est_time;

/* Work of an op: FLOPs and HBM bytes, forward and backward. Conventions
 * in op.c: GEMM backward = data-gradient GEMM + weight-gradient GEMM;
 * flash attention backward = 2.5 x forward FLOPs (recomputes the scores;
 * Dao, FlashAttention-2, arXiv 2307.08691, section 3.2: 5 GEMMs vs 2). */
typedef struct est_work {
    double fwd_flops, bwd_flops;
    double fwd_bytes, bwd_bytes;
} est_work;

/* Bytes per element of a dtype as stored (tf32 in 4 bytes, fp8 in 1). */
double est_dtype_bytes(hw_dtype d);

void est_op_work(const est_op *op, est_work *w);

/* The analytical (roofline) time of op on g: per pass, the larger of the
 * compute time (FLOPs at the dtype's dense peak, GEMM tiles quantised into
 * waves over the SMs) and the memory time (bytes at the achievable HBM
 * bandwidth), plus a launch floor. Never fails; a dtype the GPU lacks is
 * timed at its fp16 rate. */
void est_op_roofline(const hw_gpu *g, const est_op *op, est_time *t);

/* The time no implementation of op can beat on g, per pass: its FLOPs at
 * the dense peak of its dtype, and the bytes it must move at the
 * datasheet HBM bandwidth where they exceed twice the L2 (what fits in
 * cache may go faster). 0 where a pass has neither. Sample hygiene calls
 * a sample faster than this implausible, and the fitted models never
 * predict below it. why[2] (may be NULL) says which bound set each pass. */
typedef enum est_floor_why {
    EST_FLOOR_NONE, EST_FLOOR_PEAK, EST_FLOOR_HBM
} est_floor_why;
void est_op_floor(const hw_gpu *g, const est_op *op, est_time *t,
                  est_floor_why *why);

/* ---- measured samples and fitted models ----------------------------- */

/* Shape columns of sample files: the seed samples' (mp, b, h, l, dim)
 * and our own (m, n, k for GEMMs, params for optimizer steps). */
enum est_col {
    EST_COL_MP, EST_COL_B, EST_COL_H, EST_COL_L, EST_COL_DIM,
    EST_COL_M, EST_COL_N, EST_COL_K, EST_COL_PARAMS,
    EST_NCOLS
};
extern const char *const est_col_names[EST_NCOLS];

/* One measured sample: an op at a shape with its measured times. */
typedef struct est_sample {
    est_op op;
    double fwd_s, bwd_s;   /* <= 0 when not measured */
    double cols[EST_NCOLS]; /* shape columns as read; -1 if absent */
    int row;               /* line in its file, for messages */
} est_sample;

#define EST_MAX_FEATURES 24
#define EST_MAX_DIMS 5 /* log-shape dimensions of the biggest op kind */

/* A fitted model for one op kind on one GPU: log r = w . phi(op) + a
 * local correction, for fwd and bwd separately, phi clamped to the
 * training range. The correction is a kernel-weighted mean of the smooth
 * fit's residuals at nearby training shapes (Gaussian in log-shape, with
 * a bandwidth chosen by leave-one-out), shrunk towards 0 where few
 * samples are near: inside the grid it follows local structure (kernel
 * choice, quantisation) as a tree ensemble would; far outside it fades
 * and the smooth, physical model remains. Owns its residual table: free
 * with est_fit_free(). */
typedef struct est_fit {
    est_op_kind kind;
    int nfeat;
    int ndims;
    double lo[EST_MAX_FEATURES], hi[EST_MAX_FEATURES]; /* clamp range */
    double w_fwd[EST_MAX_FEATURES], w_bwd[EST_MAX_FEATURES];
    int has_fwd, has_bwd;
    int n_train;
    /* Residual table: n_res rows of ndims log-shape coordinates, then the
     * fwd and bwd residuals (NAN where a pass was not measured). */
    int n_res;
    double *res;
    /* The rows are stored in the order of an implicit k-d tree (median
     * of each range at its middle position, split on dimension
     * split_dim[middle]), so a query visits only the rows within the
     * kernel's cut-off. */
    unsigned char *split_dim;
    double bw_fwd, bw_bwd;   /* kernel bandwidths, in ln units; 0 = none */
    /* The correction compiled onto a lattice for fast evaluation: lat_n[d]
     * knots per dimension (lat_knots, dimension after dimension) and the
     * fwd and bwd corrections at each vertex (lat_c, row-major, two per
     * vertex); multilinear in between, 0 outside. NULL = no correction.
     * A vertex is computed the first time a query needs it (NAN until
     * then): a run touches a small part of the lattice. Any thread may
     * fill one; each value is a pure function of the fit, so every order
     * stores the same bits. */
    int lat_n[EST_MAX_DIMS];
    double *lat_knots;
    _Atomic double *lat_c;
} est_fit;

/* Fits a model to samples (all of the same kind) against the roofline of
 * g, by ridge regression with a small, fixed penalty, then the local
 * correction. Samples whose time is <= 0 for a pass are left out of that
 * pass. Deterministic. Returns TP_OK, or TP_EDATA when there are too few
 * samples (fewer than 2 x features); *fit needs est_fit_free either way. */
int est_fit_samples(const hw_gpu *g, const est_sample *s, int n, est_fit *fit,
                    tp_err *e);

void est_fit_free(est_fit *fit); /* accepts NULL; leaves *fit empty */

/* Time of op on g under fit (its roofline times the fitted ratio). */
void est_fit_predict(const hw_gpu *g, const est_fit *fit, const est_op *op,
                     est_time *t);

/* ---- sample files: the seed format and our own ------------------------ */

/* Maps an operator name and a row's shape columns to an est_op at the
 * shapes the seed README gives. Names: the seed samples' ("linear1",
 * "flash_atten", ...; columns mp, b, h, l, dim; absent = 1), and ours:
 * "gemm" (columns m, n, k and optionally b = batch count), "adam" (column
 * params). cols is indexed by enum est_col. Returns 0, or -1 for an
 * unknown name. */
int est_sample_op(const char *name, hw_dtype dtype, const double *cols,
                  est_op *op);

/* Operator names est_sample_op accepts, NULL-terminated. */
extern const char *const est_sample_op_names[];

/* The shape columns operator name cannot do without (mp and, for "gemm",
 * b default to 1): sets need[c] for each, and returns how many, or -1 for
 * an unknown name. */
int est_sample_needs(const char *name, int need[EST_NCOLS]);

/* "b, l, dim": the columns need[] names, in seed order, into buf. */
void est_sample_needs_str(const int need[EST_NCOLS], char *buf, size_t cap);

/* Reads a sample CSV: a header naming some of the shape columns above and
 * the times F_dur(us), B_dur(us) (or step_dur(us) / dur for an optimizer
 * step, taken as the forward time); a shapes-only file has no times.
 * Allocates *out (free with free()). Errors name file, line and column
 * (TP_EDATA / TP_ENOINPUT). */
int est_read_samples(const char *path, const char *op_name, hw_dtype dtype,
                     est_sample **out, int *n, tp_err *e);

/* Sample hygiene, per pass: returns a mask of the passes of a sample that
 * cannot be right on g (EST_BAD_FWD, EST_BAD_BWD), with the first reason
 * in why[cap]: achieved FLOP/s above the dtype's dense peak, HBM traffic
 * above the datasheet bandwidth (beyond what the L2 can explain: traffic
 * that fits in L2 is exempt), or a flash-attention backward no slower
 * than its forward (it does 2.5x the FLOPs; the backward is blamed).
 * Returns 0 for a plausible sample. */
enum { EST_BAD_FWD = 1, EST_BAD_BWD = 2 };
int est_sample_implausible(const hw_gpu *g, const est_sample *s, char *why,
                           size_t cap);

/* Hygiene across dtypes: fp8 tensor cores run at most twice the 16-bit
 * rate (every GPU in hwdb: H100 1979 against 989 TFLOP/s dense, B200,
 * MI300X, MI355X likewise), and an fp8 GEMM also scales its inputs, so an
 * fp8 GEMM sample more than EST_FP8_MAX_SPEEDUP times as fast as a
 * plausible 16-bit GEMM sample of g at the same shape (b, m, n, k; any of
 * g's sample files) is not believed. For each of s[0..n) sets bad[k] to
 * the mask of such passes; returns how many samples have one (the first
 * reason in why[cap]), or -1 with e when a 16-bit file cannot be read. */
#define EST_FP8_MAX_SPEEDUP 2.0
int est_samples_fp8_speedup(const hw_gpu *g, const est_sample *s, int n,
                            int *bad, char *why, size_t cap, tp_err *e);

/* est_sample_implausible, then drops (sets to -1) the implausible passes'
 * times. Returns the mask. */
int est_sample_clean(const hw_gpu *g, est_sample *s, char *why, size_t cap);

/* Reads every sample file g lists for operator op at dtype (hwdb
 * `measured` entries of kind operator_samples; dtype -1 takes the first
 * dtype listed for op) into *out (free with free()). Unless keep_bad, an
 * implausible pass's time (est_sample_implausible, and for fp8 GEMMs
 * est_samples_fp8_speedup) is dropped (set to -1), and a sample with no
 * plausible pass left is dropped; *n_bad counts samples with a dropped
 * pass. No file for
 * op: TP_OK with *n = 0. One fit is one (op, dtype): a GEMM at fp8 and at
 * bf16 are different kernels. */
int est_gpu_samples(const hw_gpu *g, const char *op, int dtype, int keep_bad,
                    est_sample **out, int *n, int *n_bad, tp_err *e);

/* The same for one measured entry m of g (its file only). */
int est_measured_samples(const hw_gpu *g, const hw_measured *m, int keep_bad,
                         est_sample **out, int *n, int *n_bad, tp_err *e);

/* ---- the operator time interface (models.c) ---------------------------- */

/* Every operator model of one GPU: a fit per (kind, dtype, causal) that
 * the GPU has samples of, the roofline for the rest. Opaque; read-only
 * once open, so threads may share it. */
typedef struct est_models est_models;

/* Reads and fits every operator sample file g lists (implausible passes
 * left out unless keep_bad). NULL and e on an unreadable file. */
est_models *est_models_open(const hw_gpu *g, int keep_bad, tp_err *e);
void est_models_free(est_models *m); /* accepts NULL */

/* Forward and backward time of op on m's GPU: from the fit of op's kind
 * and dtype (or of the other 16-bit dtype), else the roofline; never below
 * est_op_floor, and an fp8 GEMM never below half the 16-bit GEMM of its
 * shape. Returns 1 when a fit answered, 0 for the roofline. m must not be
 * NULL. */
int est_models_time(const est_models *m, const est_op *op, est_time *t);

/* How est_models_time answered, for `op show`. */
typedef struct est_model_info {
    int fitted;          /* a fit answered (else the roofline) */
    int n_samples;       /* samples behind that fit */
    int bwd_composed;    /* GEMM backward built from the forward fit at the
                            data- and weight-gradient shapes */
    int floor_fwd, floor_bwd;         /* raised to est_op_floor */
    int fp8_bound_fwd, fp8_bound_bwd; /* raised to half the 16-bit time */
    int fp4_bound_fwd, fp4_bound_bwd; /* raised to the fp8 time at the
                                         fp8 / fp4 peak ratio, or to the
                                         16-bit time over the GPU's
                                         measured fp4 speedup */
} est_model_info;

/* est_models_time, also saying how (info may be NULL). */
int est_models_time_info(const est_models *m, const est_op *op, est_time *t,
                         est_model_info *info);

/* Samples behind the fit of (k, dtype, causal); 0 = roofline. */
/* A number no other est_models opened by this process has (the address
 * of a freed one may come back): keys of memoized times. */
uint64_t est_models_id(const est_models *m);

int est_models_samples(const est_models *m, est_op_kind k, int dtype,
                       int causal);

/* ---- the fit cache (cache.c) ------------------------------------------- */

/* est_models_open and est_comm_load keep what they fit in a per-user
 * folder and read it back on the next start instead of refitting, keyed
 * by the content of every hwdb file and measured file the fit reads, the
 * program's version and build (docs/caching.md). The folder:
 * $TRAINPLAN_CACHE_DIR, else $XDG_CACHE_HOME/trainplan, else
 * ~/.cache/trainplan; TRAINPLAN_CACHE=off turns the cache off. A bad
 * cache file is ignored with a warning on stderr; an unwritable folder
 * silently leaves the cache empty. Results are the same bits cached or
 * not. */

/* Off (0) for the whole process, or back to the default (1: on unless
 * TRAINPLAN_CACHE=off). For fuzzers and benchmarks of the cold start. */
void est_cache_enable(int on);

/* The folder the cache uses (made when first written) into buf[cap].
 * Returns 0, or -1 when the cache is off or there is no folder (no
 * $HOME). */
int est_cache_dir(char *buf, size_t cap);

/* ---- one training iteration (iter.c) ------------------------------------ */

/* What est_estimate timed, operator by operator: each operator and
 * collective of one transformer layer and one micro-batch ("layer"), of
 * the first and last pipeline stage's extras ("first", "last"), the
 * work once per micro-batch outside the layers ("micro-batch") and once
 * per iteration ("iteration"), with the time est_estimate used
 * (operators after the in-training kernel efficiency). For `estimate
 * --ops` and benchmarks; not for concurrent estimates. */
#define EST_TRACE_ROWS 160
typedef struct est_trace_row {
    char what[24];   /* operator or collective name */
    char where[12];  /* "layer", "first", "last", "micro-batch", "iteration" */
    char shape[48];  /* its shape (m x n x k, rows x cols, bytes, ...) */
    double fwd_s, bwd_s; /* a collective's time is fwd_s, as timed before
                            any overlap */
} est_trace_row;
typedef struct est_trace {
    int n;           /* rows kept (at most EST_TRACE_ROWS) */
    int dropped;     /* rows that did not fit */
    est_trace_row row[EST_TRACE_ROWS];
} est_trace;

/* What one estimate needs, opened once and shared read-only by threads. */
typedef struct est_ctx {
    const hw_system *sys;
    const hw_gpu *gpu;       /* sys->gpu */
    const est_models *ops;   /* est_models_open(gpu); never NULL */
    const est_comm *comm;    /* est_comm_open(sys), or NULL: analytical */
    int tp_across_nodes;     /* allow TP groups larger than a node */
    /* Kernel time in a training step over the isolated kernel time the
     * operator models give, as a throughput ratio, for every layout; 0
     * means the layout's software stack's (kernel_eff.c). 1 turns the
     * correction off. */
    double kernel_eff;
    /* NULL, or where est_estimate writes what it timed (cleared first);
     * then c must not be shared by threads. */
    est_trace *trace;
} est_ctx;

/* Adds what the device holds beside the tensors, for c's GPU and system:
 * the libraries' workspaces (to both moments; to the context before
 * PyTorch 1.13), the CUDA context and NCCL's buffers of the communicators
 * l creates (with Transformer Engine's userbuffers); recomputes the
 * levels. */
void est_memory_device(const est_ctx *c, const space_model *m,
                       const space_layout *l, est_memory *mem);


/* Why an estimate is not feasible: one row of est_reason_names each. */
typedef enum est_reason {
    EST_FEASIBLE,
    EST_INVALID_LAYOUT,  /* a Megatron-LM rule; reject says which */
    EST_OUT_OF_MEMORY,
    EST_NO_FP8,          /* fp8, mxfp8 or nvfp4 asked of a GPU without
                            it (est_precision_check) */
    EST_MOE,             /* a part of an MoE or new-attention model that is
                            not modelled (the message names it: a
                            capacity factor, fp8, a framework other than
                            Megatron-Core) */
    EST_TOO_MANY_GPUS,   /* more GPUs than the system has */
    EST_MOE_LAYOUT,      /* an expert grid Megatron-Core refuses beyond the
                            layout rules (est_moe_check): ETP not dividing
                            the expert FFN */
    EST_SAVER,           /* a memory saver Megatron-Core refuses with this
                            layout, or one the hardware database cannot
                            time (no host link, no host memory bandwidth);
                            or the host's memory too small for what is
                            offloaded (est_saver_check) */
    EST_REASON_COUNT
} est_reason;
extern const char *const est_reason_names[EST_REASON_COUNT];

/* Where an iteration's time goes, seconds; the fields sum to the
 * iteration time. Compute, recompute, exposed TP and CP communication and
 * point-to-point are those of the critical (slowest) pipeline stage over
 * all micro-batches; the bubble is the pipeline's fill and drain; dp_s is
 * the gradient reduction (and ZeRO gathers) not hidden under compute. */
typedef struct est_breakdown {
    double fwd_s, bwd_s, recompute_s;
    double tp_s, cp_s, pp_p2p_s, bubble_s;
    double dp_s, optimizer_s;
    double ep_s; /* MoE token dispatch and combine (expert-parallel
                    all-to-all or all-gather, expert-TP gathers),
                    exposed; 0 for dense models */
    double offload_s; /* activations offloaded to the host and back,
                    where the transfers outlast the compute they run
                    under (offload.c); 0 without activation offloading */
    double host_s;  /* the GPU waiting for the host: where the layers'
                    framework calls take longer to issue than their
                    kernels to run, and the MoE dispatchers' syncs
                    (host.c); 0 where the GPU is the slower */
} est_breakdown;

/* A named figure of an estimate (a time term, a memory term). */
typedef struct est_term {
    const char *name;
    double v;
} est_term;

/* The terms of an iteration's time breakdown b (seconds), in the one
 * order every output uses (text, JSON, CSV, the SVG's bars): names like
 * "compute_fwd", or with their unit, "compute_fwd_s", when with_unit.
 * t holds EST_TIME_TERMS; returns the count. (terms.c) */
#define EST_TIME_TERMS 12
int est_time_terms(const est_breakdown *b, int with_unit, est_term *t);

/* One estimate: a plain value. */
typedef struct est_result {
    space_layout layout;     /* as used (sp cleared with tp = 1) */
    int64_t gpus;
    int feasible;
    est_reason reason;       /* EST_FEASIBLE when feasible */
    space_reject reject;     /* with EST_INVALID_LAYOUT */
    char message[200];       /* the reason in words, "" when feasible */
    double iteration_s;      /* 0 when the layout is invalid */
    double tokens_per_s;
    double model_flops;      /* per iteration, space.h convention */
    double model_flops_per_gpu_s;
    double mfu;              /* against the 16-bit dense peak */
    int64_t critical_stage;
    est_breakdown time;
    est_memory mem;
} est_result;

/* Estimates one iteration of model m (dense, or MoE and MLA as Megatron-
 * Core runs them) under layout l on c's system
 * (conventions and sources in iter.c). Never fails: an invalid or
 * infeasible layout gives feasible = 0 with a reason (an out-of-memory
 * layout keeps its time, so a caller can say by how much it misses).
 * No allocation; safe to call from several threads on one c. */
/* Whether g runs the GEMM precision of l (dtype, and with fp8 its
 * recipe): EST_FEASIBLE, or EST_NO_FP8 with a message in msg[cap] naming
 * the GPU, its architecture and what the precision needs (fp8: fp8 tensor
 * cores; mxfp8: Blackwell's block-scaled tensor cores; nvfp4: fp4 ones).
 * est_estimate refuses such a layout with it; the command line refuses
 * the option with it before estimating. */
est_reason est_precision_check(const hw_gpu *g, const space_layout *l,
                               char *msg, size_t cap);

/* Whether g has what fp8 attention in l (space_fp8_attention) is timed
 * from, hwdb's measured fp8 / bf16 ratios (its own or borrowed):
 * EST_FEASIBLE, or EST_NO_FP8 with a message naming the GPU. est_estimate
 * refuses such a layout with it, after est_precision_check; the command
 * line refuses the option with it before estimating. */
est_reason est_fp8_attention_check(const hw_gpu *g, const space_layout *l,
                                   char *msg, size_t cap);

/* The name --precision gives l's GEMM precision: "nvfp4", "mxfp8", or
 * the dtype's ("bf16", "fp8", ...). Static. */
const char *est_precision_name(const space_layout *l);

void est_estimate(const est_ctx *c, const space_model *m,
                  const space_layout *l, est_result *r);

/* est_estimate for a caller that keeps no layout whose peak (r->mem.total)
 * exceeds mem_limit_bytes (the search): a layout that passes every other
 * check but needs more is returned as EST_OUT_OF_MEMORY with its memory
 * and without being timed (iteration_s 0, no message, feasible 0). Every
 * other result is est_estimate's, byte for byte; INFINITY is
 * est_estimate. No allocation; thread-safe as est_estimate. */
void est_estimate_within(const est_ctx *c, const space_model *m,
                         const space_layout *l, double mem_limit_bytes,
                         est_result *r);

/* est_estimate_within for a caller that has l's memory already: *mem is
 * est_memory_of then est_memory_device of m and l on c (the search's
 * savers, sized by their memory first). The same bytes as
 * est_estimate_within; a layout with TP 1 and SP set (which the estimate
 * reads without SP) has its memory made again. */
void est_estimate_with_memory(const est_ctx *c, const space_model *m,
                              const space_layout *l, double mem_limit_bytes,
                              const est_memory *mem, est_result *r);

/* est_estimate_within of a layout the caller has checked already: l
 * passed space_layout_check of m with c's GPUs per node (0 where TP may
 * cross nodes), as every layout the search's grid admits has
 * (space_grid_check), so it is not checked again. Under EST_MEMO_CHECK
 * it is, and a layout that fails counts as a mismatch (est_memo_checked).
 * The same bytes as est_estimate_within. */
void est_estimate_valid(const est_ctx *c, const space_model *m,
                        const space_layout *l, double mem_limit_bytes,
                        est_result *r);

/* The pipeline bubble of l's schedule (space_pp_schedule), seconds, from
 * the mean over the pipeline ranks of one micro-batch's time on a rank: t
 * its whole (forward, backward, recompute and the exposed collectives, as
 * the fill and the drain pay them), w the weight-gradient GEMMs' part of
 * its backward, b its backward with the recompute, fb its time in a
 * steady state that overlaps a forward with a backward (DualPipe's F&B; t
 * elsewhere). 1F1B and interleaved: (PP - 1) / VPP x t; the others from
 * their papers (iter.c). Never negative. The interleaved stretch of an
 * uneven split is the caller's. */
double est_pp_bubble(const space_layout *l, double t, double w, double b,
                     double fb);

/* Model chunks of micro-batches in flight on pipeline rank r under l's
 * schedule where it is not 1F1B or interleaved (mem.c, with its sources:
 * zb1p as 1F1B, looped; zbv 2 PP; dualpipe PP + 1; dualpipev 2 PP + 1);
 * `chunks`, the 1F1B or interleaved count, otherwise. Uncapped: the
 * caller caps it at the micro-batches' chunks. */
int64_t est_schedule_chunks(const space_layout *l, int64_t r, int64_t chunks);

/* ---- in-training kernel efficiency (kernel_eff.c) ----------------------- */

/* One software stack's in-training kernel efficiency: a kernel's
 * throughput inside a training step over its throughput alone (0 to 1),
 * and how the value was reached ("fitted": bench/validate_runs' in-sample
 * fit; "fitted over every run": a stack without published runs of its
 * own). */
typedef struct est_stack_eff {
    double eff;
    const char *how;
} est_stack_eff;

/* Stack s's row (an out-of-range s gives Megatron-Core's), on the A100
 * 80GB. Static storage: never freed. */
const est_stack_eff *est_stack_kernel_eff(space_stack s);

/* GPU g's factor on it: hwdb's kernel_efficiency_factor of g, else of the
 * GPU hwdb resolved for it (g->kernel_eff_from: the one whose operator fits
 * g borrows, else the nearest generation of its vendor with a factor),
 * else 1. */
double est_gpu_kernel_eff_factor(const hw_gpu *g);

/* The factor a GPU family takes when no fitted run covers it: factor[i]
 * of the fitted[i] (n of them) hw_gpu_nearest_generation picks for g (its
 * vendor's newest generation not newer than g's; ties: the first by
 * name); 1 when none, or when g's generation is not in hwdb's table. */
double est_kernel_eff_prior(const hw_gpu *g, const hw_gpu *const *fitted,
                            const double *factor, int n);

/* The in-training kernel efficiency est_estimate divides operator times
 * by for layout l on c's GPU: c->kernel_eff when set (> 0), else that of
 * l's software stack (space_layout_stack) times the GPU's factor. */
double est_kernel_eff(const est_ctx *c, const space_layout *l);

/* ---- the host's side (host.c) ------------------------------------------- */

/* What the host issues for one layer in one pass (forward, and the
 * backward: as many under Megatron's stacks, a measured multiple under
 * PyTorch's; a recomputation as the forward), in calls of the unit hwdb's
 * host_launch_us times (an eager PyTorch module call issuing one kernel). */
typedef struct est_host_layer {
    double all_units;   /* every call of the layer, graphed or not */
    double eager_units; /* those not captured by a CUDA graph */
    double fwd_units, bwd_units; /* issued per pass: eager_units plus a
                                    launch per graph */
    double pre_units;   /* of fwd_units, those before the sync (the
                           attention, the router, the preprocess) */
    int graphs;         /* per-layer CUDA graphs launched per pass */
    int syncs;          /* host waits for the GPU in the forward */
    const char *source; /* where the counts come from */
} est_host_layer;

/* The calls a layer of model m (an MoE layer with moe) issues under l:
 * its software stack's counts (space_layout_stack), less what l's CUDA
 * graphs capture (Megatron-Core only). Never fails. */
void est_host_units(const space_model *m, const space_layout *l, int moe,
                    est_host_layer *out);

/* Seconds the host of c's GPU takes per call (hwdb host_launch_us); 0
 * where hwdb has no figure (the host is then not modelled). */
double est_host_call_s(const est_ctx *c);

/* The GPU's wait on the host in one pass: host_s of calls against gpu_s of
 * kernels, plus each sync's idle (two calls' time of call_s each); with
 * blocking (CUDA_LAUNCH_BLOCKING=1), all of host_s. */
double est_host_exposed(double host_s, double gpu_s, int syncs,
                        double call_s, int blocking);

/* ---- error band (band.c, band_runs.c) ------------------------------------ */

/* One published run as bench/validate_runs scored it: what it ran and
 * the estimator's signed step-time error on it, + when our step is the
 * slower. Dense runs: left one source out (the kernel efficiency refitted
 * without the run's source); MoE runs: as estimated (held out of every
 * fit). band_runs.c holds the table validate_runs --write-bands writes. */
typedef struct est_validated_run {
    const char *id;
    const char *source;  /* the source's id in bench/data */
    space_stack stack;
    const char *family;  /* the GPU whose operator models it used */
    int moe;             /* a mixture-of-experts model */
    int waived;          /* out of the fits (validate_runs says why) */
    double params;       /* parameters, unpadded */
    double active;       /* parameters one token touches */
    int64_t gpus, seq, tp, pp, cp, ep, dp, mbs;
    double err_pct;      /* signed step-time error, % */
} est_validated_run;

extern const est_validated_run est_validated_runs[];
extern const int est_n_validated_runs;
extern const char est_validated_runs_origin[]; /* how and when written */

/* Which runs a band was taken over, narrowest first. */
typedef enum est_band_basis {
    EST_BAND_STACK_FAMILY, /* the layout's stack on its GPU family */
    EST_BAND_FAMILY,       /* every stack on its GPU family */
    EST_BAND_STACK,        /* its stack on every GPU family */
    EST_BAND_ALL,          /* every run of its kind (dense or MoE) */
    EST_BAND_NONE,         /* no run of its kind: no band */
    EST_BAND_BASIS_COUNT
} est_band_basis;
extern const char *const est_band_basis_names[EST_BAND_BASIS_COUNT];

/* Fewest runs a band is taken over (else the next, wider basis). */
#define EST_BAND_MIN_RUNS 5

/* The measured error of an estimate like this one. */
typedef struct est_band {
    est_band_basis basis;
    int runs;            /* runs the band is taken over */
    double mape_pct;     /* their mean absolute step-time error: the band */
    double signed_pct;   /* their mean signed error, + ours slower */
    double worst_pct;    /* their largest absolute error */
    double slower_share; /* share of them our step was slower on */
    const est_validated_run *nearest; /* the most alike run; NULL: none */
} est_band;

/* The band of an estimate of model m under layout l on `gpus` GPUs of
 * GPU g: the runs of m's kind (dense or MoE) of l's stack on g's family
 * (g's models_like, else g) when there are EST_BAND_MIN_RUNS, else the
 * next wider basis. The nearest run is the one of that basis closest in
 * log parameters, log GPU count and layout (TP, PP, DP, micro-batch).
 * Pure and deterministic; no allocation; thread-safe. */
void est_error_band(const hw_gpu *g, const space_model *m,
                    const space_layout *l, int64_t gpus, est_band *b);

/* Memoization of operator, collective and layer times in est_estimate
 * (on by default): each thread remembers the times of the shapes it has
 * seen, keyed by the models and the op (the tables, system, collective,
 * bytes and group; a layer: the context, the model and the layout but
 * for the fields no layer reads); and in est_memory_of what a layout's
 * pipeline ranks share (mem_memo.c: keyed by the model and the layout but
 * for the fields that part does not read). Results are the same bits
 * either way; 0 (off) is for benchmarks, EST_MEMO_CHECK for tests:
 * memoized, and every layer or shared part found in the memo is made
 * again and compared (the differences counted by est_memo_checked). Set
 * it before estimating, not during. */
#define EST_MEMO_CHECK 2
void est_memo_enable(int on);
/* Under EST_MEMO_CHECK, since the process started, every thread's: the
 * layers and memory parts found in the memos (*hits), and of those the
 * ones that differed from what was computed again (*mismatches): 0 unless
 * a memo's key misses a field its part reads (iter_memo.c, mem_memo.c). */
void est_memo_checked(int64_t *hits, int64_t *mismatches);

/* ---- context parallelism's elementwise kernels (iter_cp.c) -------------- */

/* What one kernel does to each element of its tensor, as its count of
 * accesses: write (fill), read and write (copy), read two and write one
 * (an add into a running sum). */
typedef enum est_cp_access {
    EST_CP_FILL = 1,
    EST_CP_COPY = 2,
    EST_CP_ADD = 3
} est_cp_access;

/* The tensors, per CP rank and micro-batch, in the attention's 16-bit
 * dtype unless said: Q (its tokens x query heads / TP x head size: the
 * output's and dq's size), KV (one of K, V, dK, dV: key-value heads),
 * LSE (the fp32 softmax statistics, tokens x query heads / TP). */
typedef enum est_cp_tensor {
    EST_CP_Q,
    EST_CP_KV,
    EST_CP_LSE,
    EST_CP_TENSORS
} est_cp_tensor;

/* count kernels, each over size times its tensor (0.5: the load-balanced
 * split's half; cp: the gathered sequence), in pass 0 (forward) or 1
 * (backward). */
typedef struct est_cp_kernel {
    int pass;
    est_cp_access op;
    est_cp_tensor tensor;
    double size;
    int count;
} est_cp_kernel;

/* Distinct kernels one rank runs (at most 7 forward and 9 backward). */
#define EST_CP_KERNEL_KINDS 24
typedef struct est_cp_kernels {
    int n;
    est_cp_kernel k[EST_CP_KERNEL_KINDS];
} est_cp_kernels;

/* The elementwise kernels on the critical path of Transformer Engine's
 * causal context-parallel attention on rank `rank` of cp (comm: a
 * space_cp_comm; thd: packed sequences, TE's thd format, else sbhd):
 * output merges, gradient accumulations, K and V copies (iter_cp.c gives
 * the source, TransformerEngine v2.8 context_parallel.py, branch by
 * branch). out->n 0 for cp <= 1 or a rank out of range. */
void est_cp_kernels_rank(int cp, int rank, int comm, int thd,
                         est_cp_kernels *out);

/* Bytes the kernels of k in pass (0 forward, 1 backward) move, given the
 * bytes of one Q, KV and LSE tensor. */
double est_cp_kernels_bytes(const est_cp_kernels *k, int pass, double q_bytes,
                            double kv_bytes, double lse_bytes);

/* The CP rank (of cp, comm, thd as for est_cp_kernels_rank) whose kernels
 * of pass move the most bytes, given the tensors' bytes; the lowest such
 * rank. 0 for cp <= 1. */
int est_cp_busiest_rank(int cp, int comm, int thd, int pass, double q_bytes,
                        double kv_bytes, double lse_bytes);

/* ---- mixture of experts (moe.c) ------------------------------------------ */

/* Tokens the busiest expert receives over the mean when l does not say
 * (space_layout.moe_imbalance 0): an assumption, see moe.c. */
#define EST_MOE_IMBALANCE_DEFAULT 1.2

/* Tokens the busiest expert of m processes under l over the mean:
 * l->moe_imbalance, or the default where 0, never below 1; capped at m's
 * capacity factor where it has one (tokens beyond it are dropped). */
double est_moe_imbalance(const space_model *m, const space_layout *l);

/* MoE layers among the layers of pipeline rank r, all of its model
 * chunks, on l's split (space_split_resolve); 0 for a dense model. */
double est_stage_moe_layers(const space_model *m, const space_layout *l,
                            int64_t r);
/* The same on a resolved split s of m. */
double est_split_moe_layers(const space_model *m, const space_split *s,
                            int64_t r);
/* MoE layers among the n layers from index first on (m's placement:
 * first_dense_layers, moe_layer_freq); 0 for a dense model. */
int64_t est_moe_layers_in(const space_model *m, int64_t first, int64_t n);
/* 1 when every layer of m is alike (dense, or every layer MoE): then a
 * rank's layers, not where they fall, say what it holds. */
int est_moe_uniform(const space_model *m);

/* Parameters of one MoE layer's routed experts (all of them, weights and
 * biases) and of its shared experts; 0 for a dense model. */
double est_routed_expert_params(const space_model *m);
double est_shared_expert_params(const space_model *m);

/* Expert data-parallel size of l: tp x cp x dp / (etp x ep), or 0 where
 * that does not divide. */
int64_t est_moe_edp(const space_layout *l);

/* What Megatron-Core needs of MoE model m under l beyond the layout rules
 * (space_layout_check: EP dividing the experts, ETP x EP dividing TP x CP
 * x DP, SP with TP): ETP dividing the expert FFN size, the rules of
 * l->moe_comm_overlap (space_moe_overlap). Returns 0, or -1
 * with the reason in why[cap]. A dense model always passes. */
int est_moe_check(const space_model *m, const space_layout *l, char *why,
                  size_t cap);

/* ---- memory savers (offload.c) ------------------------------------------ */

/* Bytes of optimizer state a parameter of the rank's optimizer shard
 * keeps on the GPU under l (12 without savers: fp32 master, m, v): the
 * precision-aware optimizer's master weight (2 where Transformer Engine
 * keeps only the 16 bits a bf16 parameter lacks) and moments in their
 * dtypes; under --optimizer-cpu-offload the share stepped on the GPU.
 * Sources in offload.c. */
double est_opt_gpu_bytes(const space_layout *l);

/* Bytes per parameter of the shard the host keeps under
 * --optimizer-cpu-offload (fp32 parameter, gradient, m and v: 16 of the
 * offloaded share); 0 otherwise. */
double est_opt_host_bytes(const space_layout *l);

/* Bytes per parameter of the shard the optimizer step adds for its
 * duration beyond the states: an fp32 copy of a 16-bit gradient, and
 * Transformer Engine's fp32 copies of states it keeps in fp16 or fp8
 * (or in bf16 unless both moments are). */
double est_opt_step_bytes(const space_layout *l);

/* HBM bytes the GPU's Adam step moves per parameter it steps under l,
 * over what the standard step moves (EST_OP_ADAM's count): 1 without
 * savers. */
double est_opt_traffic_ratio(const space_layout *l);

/* Bytes per token of one layer (moe: an MoE layer) that l offloads to the
 * host: with --cpu-offloading-num-layers every activation the layer keeps
 * for the backward (Transformer Engine offloads every saved tensor of at
 * least 256 Ki elements); with fine-grained offloading what the
 * modules save, over the share of groups offloaded; 0 otherwise (mem.c). */
double est_offload_layer_token(const space_model *m, const space_layout *l,
                               int moe);

/* The bandwidth each GPU of c's system has to its host's memory when every
 * GPU of a node moves data at once, per direction: the smaller of its host
 * link (the system's where set, else the GPU's) and the node's CPU memory
 * bandwidth over its GPUs; 0 when hwdb lacks either. */
double est_host_bw(const est_ctx *c);

/* What Megatron-Core refuses of l's memory savers and micro-batch groups
 * (validate_args, OptimizerConfig and TransformerConfig __post_init__,
 * at NVIDIA/Megatron-LM@d98e8a64ddf3), what trainplan cannot time (no
 * host link or host memory bandwidth in c's hwdb), and offloads larger
 * than the host's memory (mem's host bytes, times the GPUs of a node).
 * Returns 0, or -1 with the reason in why[cap] (est_estimate's
 * EST_SAVER). c may be NULL: the hardware is not checked. */
int est_saver_check(const est_ctx *c, const space_model *m,
                    const space_layout *l, const est_memory *mem, char *why,
                    size_t cap);

/* Seconds the forward (*fwd) and the backward (*bwd) of one micro-batch
 * stall for Transformer Engine's layer offload (--cpu-offloading-num-
 * layers): n of L layers, each moving x seconds of activations each way,
 * against cf and cb seconds of compute per layer (offload.c). */
void est_layer_offload_stall(int64_t L, int64_t n, double cf, double cb,
                             double x, double *fwd, double *bwd);

/* ---- lower bounds for the search (bound.c) ------------------------------ */

/* Bytes that est_memory_of(m, l)'s total is at least: weights, gradients
 * and optimizer states of the transformer layers of one pipeline stage,
 * sharded as l says. Cheap (no activations). */
double est_memory_floor(const space_model *m, const space_layout *l);
/* The same with m's parameters counted once by the caller: p must be
 * space_model_params(m, 1) (a search takes floors of many layouts of one
 * model). */
double est_memory_floor_of(const space_model *m, const space_params *p,
                           const space_layout *l);

/* Seconds that est_estimate(c, m, l)'s iteration time is at least (for a
 * valid layout): the GEMM FLOPs per GPU at the GPU's dense peak, times the
 * pipeline's (1 + (pp - 1) / (vpp x micro-batches)). 0 when l is not
 * valid enough to say (a size below 1). Cheap; thread-safe. */
double est_time_floor(const est_ctx *c, const space_model *m,
                      const space_layout *l);
/* The same with m's FLOPs per token counted once by the caller: fl must
 * be space_flops_per_token(m, l->seq, 1, SPACE_RECOMPUTE_NONE) (a search
 * takes floors of many layouts of one model and sequence). */
double est_time_floor_of(const est_ctx *c, const space_model *m,
                         const space_flops *fl, const space_layout *l);

/* ---- a training run's log read back (train_log.c) ---------------------- */

/* Which framework wrote a run's log. */
typedef enum est_log_kind {
    EST_LOG_NONE,
    EST_LOG_MEGATRON,   /* Megatron-LM, Megatron-Bridge */
    EST_LOG_NEMO,       /* NeMo 2 (Lightning) */
    EST_LOG_TORCHTITAN,
    EST_LOG_KIND_COUNT
} est_log_kind;
extern const char *const est_log_kind_names[EST_LOG_KIND_COUNT];

/* What a run's log says: the steady iteration time (or torchtitan's
 * tokens/s per GPU, which needs the job to become a time) and the peak
 * memory it printed. */
typedef struct est_train_log {
    int kind;                   /* est_log_kind */
    int lines;                  /* iteration lines read */
    int used;                   /* of them in the median (warm-up out) */
    double iteration_s;         /* median; 0 for torchtitan */
    double tps_per_gpu;         /* torchtitan's median tps; else 0 */
    double max_allocated_bytes; /* Megatron's largest max allocated; 0 */
    double max_reserved_bytes;  /* its largest max reserved, torchtitan's
                                   memory; 0 where none is printed */
    int memory_lines;           /* Megatron memory lines read */
    double fwd_bwd_s, optimizer_s; /* Megatron's timers; NAN without */
} est_train_log;

/* Reads the log at path into *out: TP_OK, TP_ENOINPUT (no file) or
 * TP_EDATA (no iteration line, or lines of two frameworks), naming the
 * file. */
int est_train_log_read(const char *path, est_train_log *out, tp_err *e);

/* A run's log against the estimate of its job. */
typedef struct est_run_fed {
    const est_train_log *log;
    double measured_s;   /* the run's iteration time (torchtitan: from tps) */
    double estimated_s;
    double est_fwd_bwd_s, est_optimizer_s;
    double est_allocated, est_reserved; /* max_memory_allocated/reserved */
    /* calibrated to the log */
    int calibrated;      /* 1 found, -1 the run is faster than the estimate
                            at a kernel efficiency of 1, 0 not asked */
    double eff0, eff;    /* the kernel efficiency before and after */
    double calibrated_s;
} est_run_fed;

/* Sets the log lg (which must outlive f) beside r, the estimate of its
 * job (model m on c); with calibrate, the in-training kernel efficiency
 * at which r's layout takes the run's time (bisection, each step an
 * est_estimate). No allocation of its own. */
void est_fed_back(est_run_fed *f, const est_train_log *lg, const est_ctx *c,
                  const space_model *m, const est_result *r, int calibrate);

#endif
