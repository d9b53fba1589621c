/*
 * est_int.h - what the estimator's own files share and nobody else
 * includes: the fit cache's digest, its byte buffers and its entries
 * (cache.c), used by models.c (operator fits), comm.c (collective tables)
 * and fit.c (one fit's bytes). The public side of the cache (where it
 * lives, how to turn it off) is in est.h. And what the files of one
 * training iteration share (iter.c, iter_ops.c, iter_gemm.c, iter_layer.c,
 * iter_moe.c): its context, a stage's times, the GEMM roles and the
 * functions each offers the others; and what the files of the memory
 * model share (mem.c, mem_act.c, mem_state.c, mem_buf.c, mem_device.c).
 */
#ifndef TP_EST_INT_H
#define TP_EST_INT_H

#include "est.h"

#include <stddef.h>
#include <stdint.h>

/* A 128-bit digest of byte strings, for cache keys and the cache file's
 * checksum: a change detector, not a cryptographic hash (the cache folder
 * is the user's own). Each piece added is digested with its length, so
 * "ab" + "c" and "a" + "bc" differ. Host byte order. */
typedef struct est_digest {
    uint64_t a, b;
} est_digest;

void est_digest_init(est_digest *d);
void est_digest_bytes(est_digest *d, const void *p, size_t n);
void est_digest_str(est_digest *d, const char *s); /* NULL: a marker */
void est_digest_int(est_digest *d, int64_t v);
/* Adds a file's whole content. Returns 0, or -1 when it cannot be read
 * (the digest is then not to be used). */
int est_digest_file(est_digest *d, const char *path);

/* The key of one cache entry so far: the cache format, the program's
 * version, the build (a digest of the estimator's and hwdb's sources, the
 * compiler and its flags), the entry's kind ("ops", "comm") and its
 * subject's name and keep_bad. Returns 0, or -1 when the cache is off
 * (est_cache_enable, TRAINPLAN_CACHE=off) or has no folder. */
int est_cache_key(est_digest *key, const char *kind, const char *name,
                  int keep_bad);

/* A growing byte buffer an entry is written into (host byte order). */
typedef struct est_wbuf {
    unsigned char *p;
    size_t n, cap;
} est_wbuf;

void est_w_bytes(est_wbuf *b, const void *x, size_t n);
void est_w_i32(est_wbuf *b, int32_t v);
void est_w_f64(est_wbuf *b, double v); /* the exact bits */
void est_w_f64s(est_wbuf *b, const double *v, size_t n);

/* Reading an entry back: a read past the end sets bad and yields zeros,
 * so a parser checks bad once at the end (and its bounds as it goes). */
typedef struct est_rbuf {
    const unsigned char *p;
    size_t n, at;
    int bad;
} est_rbuf;

void est_r_bytes(est_rbuf *r, void *x, size_t n);
int32_t est_r_i32(est_rbuf *r);
double est_r_f64(est_rbuf *r);
void est_r_f64s(est_rbuf *r, double *v, size_t n);
size_t est_r_left(const est_rbuf *r);

/* One entry found in the cache. */
typedef struct est_cache_entry {
    char path[4096];
    unsigned char *data; /* the whole file; the payload is data + off */
    size_t off, n;       /* payload offset and length */
} est_cache_entry;

/* Looks up the entry of key (kind and name name its file). Returns 1 with
 * the payload in ent (free with est_cache_entry_free), 0 when there is no
 * entry, or when the file is broken, truncated, foreign or of another
 * key: then one warning line on stderr says so, and the caller refits
 * and stores over it. */
int est_cache_get(const char *kind, const char *name, const est_digest *key,
                  est_cache_entry *ent);
void est_cache_entry_free(est_cache_entry *ent);

/* The payload parsed but made no sense (est_cache_get's checks passed):
 * the warning line, and ent is freed. */
void est_cache_reject(est_cache_entry *ent, const char *why);

/* Stores payload under key: written to a temporary file in the cache
 * folder and renamed over the entry's name, so readers see the old file
 * or the new one whole, and two processes storing at once are safe.
 * Failures (an unwritable folder, a full disk) are silent: the cache is
 * only a cache. */
void est_cache_put(const char *kind, const char *name, const est_digest *key,
                   const est_wbuf *payload);

/* The payloads of the two kinds of entry: every fit of an est_models
 * (models.c) and every table of an est_comm (comm.c), as written; and
 * back, checking every count, index and bound (the fuzzer's target too,
 * fuzz/fuzz_fit_cache.c). A payload that is not one they wrote gives
 * NULL and the reason in why[cap]. The result is freed as one from
 * est_models_open / est_comm_load. */
void est_models_payload(const est_models *m, est_wbuf *b);
est_models *est_models_from_payload(const hw_gpu *g, const unsigned char *p,
                                    size_t n, char *why, size_t cap);
void est_comm_payload(const est_comm *c, est_wbuf *b);
est_comm *est_comm_from_payload(const hw_system *y, const unsigned char *p,
                                size_t n, char *why, size_t cap);

/* A number no other call of this process has had, from 1 (models.c): the
 * ids of est_models and est_comm objects, keys of the memoized times that
 * a freed object's reused address cannot alias. Thread-safe. */
uint64_t est_new_id(void);

/* One fit's bytes (fit.c): everything est_fit_predict reads but the
 * lazily filled lattice values. est_fit_read checks every count and
 * index against the bounds the fit code keeps, leaving *fit empty and
 * the reason in why[cap] when they do not hold; returns 0 or -1. */
void est_fit_write(const est_fit *fit, est_wbuf *b);
int est_fit_read(est_fit *fit, est_rbuf *r, char *why, size_t cap);

/* ---- one training iteration, shared by its files ------------------------
 *
 * iter.c composes an iteration (est_estimate) from a layer of each kind
 * (iter_layer.c), whose operators and collectives are timed by iter_ops.c,
 * its GEMMs and their casts by iter_gemm.c and an MoE layer's routed
 * experts by iter_moe.c. Conventions and sources are in those files. */

/* Per micro-batch and pipeline stage, seconds. */
typedef struct est_stage_time {
    double fwd, bwd, recompute, tp, cp, p2p;
    /* of one layer (est_layer_time): the TP and CP collectives its full
     * recomputation reruns, added for the layers recomputed */
    double rec_tp, rec_cp;
    double ep, rec_ep; /* MoE dispatch and combine, exposed; rerun */
    /* of one MoE layer under the 1F1B A2A overlap (est_moe_overlap_a2a): the
     * exposed dispatch and combine of a forward layer run beside another
     * micro-batch's backward layer; the stage loop weighs it with ep by
     * the share of layers so paired */
    double ep_pair;
    /* activations to the host and back, where they outlast the compute
     * they run under (offload.c); 0 without activation offloading */
    double offload;
    /* the weight-gradient GEMMs' part of bwd (est_add_gemm, est_grouped_gemm):
     * what the zero-bubble schedules move into the bubble */
    double w;
    /* the GPU waiting for the host (host.c): of a layer's forward and
     * backward; of its forward again where fully recomputed */
    double host, rec_host;
} est_stage_time;

typedef struct est_iter_ctx {
    const est_ctx *c;
    const space_model *m;
    const space_layout *l;
    hw_dtype gemm_dt, act_dt;
    est_group tp_group, cp_group, dp_group, pp_pair;
    int64_t T;            /* tokens per rank and micro-batch */
    int64_t Tn;           /* rows of norms and adds (T / TP with SP) */
    int64_t vp;           /* padded vocabulary */
    double act_bytes;     /* the [T, hidden] activation at 16 bits: what
                             TP collectives move */
    est_op_kind norm;     /* the model's norm */
    double eff;           /* in-training kernel efficiency (kernel_eff) */
    int any_layout_fp8;   /* fp8 GEMMs take operands in any layout
                             (Blackwell: no transposed copies) */
    int cudnn_attn;       /* fused attention is cuDNN's (est_estimate) */
    int hopper;           /* the GPU is Hopper (blockwise fp8 GEMMs) */
    const char *where;    /* the trace's section being timed */
    /* Attention core per layer: query and key/value heads (all TP ranks)
     * and the head size the kernel runs at (MLA: the mean of the QK and
     * V head sizes, which gives its FLOPs and bytes exactly, est_op_work);
     * attn_scale: the sliding-window layers' saving, averaged over the
     * layers (est_window_scale), 1 without windows. */
    int64_t attn_hq, attn_hk, attn_hd;
    int mla;              /* multi-head latent attention (kv_lora_rank) */
    double attn_scale;
    /* MoE (est_moe_routed): expert-parallel and expert-TP sizes, the busiest
     * EP rank's tokens over the mean, and the groups of the expert grid
     * (moe.c): EP (etp apart), ETP (adjacent), EP x ETP (the allgather
     * and flex dispatchers' group), expert data parallel. */
    int64_t ep, etp, edp;
    double imb;
    est_group ep_group, etp_group, eptp_group, edp_group;
    /* where est_add_gemm and est_grouped_gemm add their weight gradients' time
     * (est_estimate points it at the est_stage_time being built); NULL: not
     * kept */
    double *w_acc;
    double host_call_s;   /* the host's time per framework call (host.c);
                             0: the host not modelled */
    /* this estimate's place in the layer memo (iter_memo.c), set last by
     * est_memo_open; NULL: the parts are timed, not memoized */
    const struct est_memo *memo;
} est_iter_ctx;

/* The parts of an iteration the layer memo keeps (iter_memo.c). */
typedef enum est_memo_part {
    EST_PART_LAYER,     /* est_layer_time, a dense-FFN layer */
    EST_PART_MOE_LAYER, /* est_layer_time, an MoE layer */
    EST_PART_FIRST,     /* est_first_stage_extra */
    EST_PART_LAST,      /* est_last_stage_extra */
    EST_PART_COUNT
} est_memo_part;

/* What the memoized parts of an estimate read (iter_memo.c): the
 * context's models, tables, system and GPU (by id and address, as the
 * operator and collective memos key them), the model (by this thread's
 * tag of its content), est_iter_ctx's fields but for its pointers and
 * what depends on DP, and the layout with the fields no part reads set
 * to 0. Compared as bytes: made by est_memo_open only. */
typedef struct est_memo_key {
    uint64_t ops, comm;
    const hw_system *sys;
    const hw_gpu *gpu;
    uint64_t model;
    int64_t gemm_dt, act_dt, norm, any_layout_fp8, cudnn_attn, hopper, mla;
    int64_t T, Tn, vp, attn_hq, attn_hk, attn_hd, ep, etp;
    double act_bytes, eff, attn_scale, imb, host_call_s;
    est_group tp_group, cp_group, ep_group, etp_group, eptp_group;
    space_layout l;
    uint64_t hash;      /* of the fields above (where in the memo) */
} est_memo_key;

/* An estimate's key and its slot in this thread's memo (iter_memo.c). */
typedef struct est_memo {
    est_memo_key key;
    void *slot;
} est_memo;

/* Where an fp8 GEMM's input comes from. Megatron-Core's Transformer
 * Engine layers: QKV and FC1 are TE LayerNormLinear modules, whose norm
 * can write fp8 itself (column-parallel); the attention output
 * projection and FC2 are plain TE Linear modules, fed by the attention
 * core and by Megatron's own SwiGLU/GeLU kernel in 16 bits (row-parallel)
 * (megatron/core/models/gpt/gpt_layer_specs.py,
 * get_gpt_layer_with_transformer_engine_spec, Megatron-LM core_v0.14.0). */
typedef enum est_gemm_role {
    EST_GEMM_16BIT,   /* not an fp8 GEMM (the LM head, attention) */
    EST_GEMM_NORM_IN, /* input from a LayerNormLinear's norm */
    EST_GEMM_LINEAR_IN, /* input from the caller, 16-bit */
    /* input from the caller, 16-bit, on a layer whose output gradient is
     * this rank's own (no TP gather of it under SP): the grouped expert
     * GEMMs, MLA's duplicated down projections, a column-parallel Linear
     * without a norm */
    EST_GEMM_LOCAL_IN
} est_gemm_role;

/* The most GEMM weights est_layer_weights gives for one layer. */
#define EST_LAYER_WEIGHTS 9

/* iter.c: the parameters of Megatron-Core's data-parallel bucket a step
 * cannot hide (the last reduced, the first gathered; 0 for other
 * frameworks); vp the padded vocabulary. */
double est_dp_tail_params(const space_layout *l, int64_t hidden, int64_t vp);

/* iter_ops.c: the trace, operator and collective times, groups. */
void est_trace_add(const est_iter_ctx *x, const char *what, const char *shape,
                   double fwd_s, double bwd_s);
/* The trace's rows now (0 without a trace), to pass est_trace_added. */
int est_trace_mark(const est_iter_ctx *x);
/* The row added since est_trace_mark gave n0 (the one est_op_time or
 * est_trace_add just appended), for renaming or retiming it; NULL without
 * a trace or where that row was dropped. */
est_trace_row *est_trace_added(const est_iter_ctx *x, int n0);
est_time est_op_time(const est_iter_ctx *x, const est_op *op);
double est_iter_coll(const est_iter_ctx *x, est_coll k, double bytes,
                     const est_group *g);
est_group est_place(int64_t size, int64_t stride, int gpn);
est_op est_gemm(hw_dtype dt, int64_t m, int64_t n, int64_t k);
est_op est_elementwise(est_op_kind kind, hw_dtype dt, int64_t rows,
                       int64_t cols);
void est_add_op(const est_iter_ctx *x, const est_op *o, double *fwd,
                double *bwd);
void est_add_named(const est_iter_ctx *x, const est_op *o, const char *what,
                   double *fwd, double *bwd);

/* iter_gemm.c: GEMMs and their low-precision casts. */
est_time est_add_gemm(const est_iter_ctx *x, int64_t m, int64_t n, int64_t k,
                      est_gemm_role role, double *fwd, double *bwd,
                      double *wgrad);
void est_grouped_gemm(const est_iter_ctx *x, int64_t nle, int64_t rows,
                      int64_t n, int64_t k, double *fwd, double *bwd);
double est_te_weight_casts(const est_iter_ctx *x, int64_t (*shape)[2],
                           int n);

/* iter_cp.c: Transformer Engine's context-parallel merge kernels of one
 * layer and micro-batch on the busiest CP rank, added to *fwd and *bwd
 * (Megatron-Core stacks with cp > 1 only; nothing otherwise). */
void est_cp_merge_time(const est_iter_ctx *x, double *fwd, double *bwd);

/* iter_layer.c: a layer, the end stages, a layer's weights. */
double est_window_scale(const space_model *m, int64_t seq);
/* A layer (moe: an MoE layer), the first stage's extras (the
 * embedding), the last stage's (final norm, LM head, loss), added to *st
 * (iter_layer.c, the *_of functions). The ones without _of serve them
 * from the layer memo where x->memo is set and *st and *x->w_acc are
 * zero (iter_memo.c). */
void est_layer_time(const est_iter_ctx *x, est_stage_time *st, int moe);
void est_first_stage_extra(const est_iter_ctx *x, est_stage_time *st);
void est_last_stage_extra(const est_iter_ctx *x, est_stage_time *st);
void est_layer_time_of(const est_iter_ctx *x, est_stage_time *st, int moe);
void est_first_stage_extra_of(const est_iter_ctx *x, est_stage_time *st);
void est_last_stage_extra_of(const est_iter_ctx *x, est_stage_time *st);
/* The memo mode est_memo_enable set: 0 off, 1 on, EST_MEMO_CHECK
 * (iter_ops.c). */
int est_memo_mode(void);
/* x's key in *m (x set but for x->memo) and its slot in this thread's
 * memo, found or taken (another key's parts dropped); NULL where the
 * parts are not memoized: the memo off, or a trace kept (iter_memo.c).
 * *m serves this thread only, until its next est_memo_open. */
const est_memo *est_memo_open(const est_iter_ctx *x, est_memo *m);
/* This thread's tag of model m's content: a number >= 1, never reused
 * for other content (iter_memo.c; the memos key a model by it). */
uint64_t est_model_tag(const space_model *m);
/* Under EST_MEMO_CHECK: one memo hit computed again, mismatch nonzero
 * where its bytes differed (est_memo_checked counts them). */
void est_memo_count_check(int mismatch);
int est_layer_weights(const est_iter_ctx *x, int moe, int64_t (*shape)[2],
                      int *gemms);

/* iter_moe.c: an MoE layer's routed experts and their overlap. */
void est_moe_routed(const est_iter_ctx *x, double *fwd, double *bwd,
                    double *ep_f, double *ep_b, double *disp, double *comb,
                    double *act_f);
double est_moe_overlap_a2a(double attn_f, double attn_b, double mlp_f,
                           double mlp_b, double disp, double comb,
                           double sm_share);
double est_moe_comm_sm_share(const est_iter_ctx *x);
/* Seconds DeepEP's normal kernels take to put wire_bytes per GPU on the
 * network of y (its measured share of the NIC's line rate, iter_moe.c);
 * 0 for no bytes or no network. */
double est_deepep_rdma_s(const hw_system *y, double wire_bytes);

/* ---- the memory of a layout, shared by its files ------------------------
 *
 * mem.c puts a pipeline stage together (stage_of) from parameters and
 * their states (mem_state.c), activations (mem_act.c) and the frameworks'
 * buffers (mem_buf.c); mem_device.c adds the device's share. Conventions
 * and sources are in those files. */

/* Bytes an NVFP4 element takes: e2m1, and one e4m3 scale per 16. */
#define EST_NVFP4_BYTES (0.5 + 1.0 / 16)

/* What est_rank_params and stage_of count a rank's parameters from, per TP
 * rank: a layer (space_params.per_layer: the model's mean layer), the
 * first stage's embedding (with position embedding and its norm), the
 * last stage's final norm and head (a tied head is the embedding itself
 * with one stage, a copy of it with several); for MoE models a dense-FFN
 * layer, an MoE layer without its routed experts, and one layer's routed
 * experts on this rank's EP x ETP shard; the head's rank (est_head_rank). */
typedef struct est_stage_params {
    double layer, first, last;
    double dense_l, moe_l, xl;
    int64_t head;
} est_stage_params;

/* Megatron-FSDP's buffers at the largest moment of a backward and what
 * the step adds (est_mfsdp_buffers says how). */
typedef struct est_mfsdp_moment {
    double bwd, step;             /* added to the two moments */
    double weights, grads, act_freed; /* of bwd, by kind */
} est_mfsdp_moment;

/* mem_act.c: activations per layer and in flight, CUDA graphs' pool. */
double est_fp8_copy_bytes(const space_layout *l);
double est_fp8_weight_copy_bytes(const space_layout *l);
double est_gemm_input_bytes(const space_layout *l);
/* Whether l runs fp8 under DeepSeek-V3's own storage (--fp8-activation-cache
 * deepseek-v3 with Transformer Engine fp8; mem_act.c says what it keeps). */
int est_fp8_deepseek(const space_layout *l);
double est_act_layer_token(const space_model *m, const space_layout *l,
                           int full_layer, int moe);
double est_inflight_chunks(const space_layout *l, int64_t r, int64_t micro);
/* What est_act_rank_token reads of each kind of layer, bytes per token,
 * the same on every pipeline rank of a layout: made once per layout
 * (est_act_layers_of) and shared by its ranks; the MoE layers' filled the
 * first time a chunk holds some. */
typedef struct est_act_layers {
    double kept, full;         /* est_act_layer_token(m, l, 0 | 1, 0) */
    int have_moe;              /* the next three filled */
    double kept_moe, full_moe; /* est_act_layer_token(m, l, 0 | 1, 1) */
    double buffers, swiglu;    /* one MoE layer's dispatch buffers and
                                  rebuilt SwiGLU output */
} est_act_layers;
void est_act_layers_of(const space_model *m, const space_layout *l,
                       est_act_layers *a);
double est_act_rank_token(const space_model *m, const space_layout *l,
                          const space_split *s, int64_t r, int64_t micro,
                          est_act_layers *a, double *rebuilt_out,
                          double *host_out);
double est_graph_pool_token(const space_model *m, const space_layout *l,
                            const space_split *s, int64_t r, int64_t micro);

/* What every pipeline rank of a layout shares (mem.c, est_memory_of):
 * the model's parameters (space_model_params at Megatron's vocabulary
 * padding for l's TP), l's split (space_split_resolve), the parameters of
 * a layer and of the ends (est_stage_params_of) and the activations of a
 * layer (est_act_layers_of, the MoE layers' not yet filled). */
typedef struct est_stage_common {
    space_params p;
    space_split sp;
    est_stage_params pieces;
    est_act_layers acts;
} est_stage_common;
/* mem.c: *c made afresh (every byte set, the padding 0). */
void est_stage_common_make(const space_model *m, const space_layout *l,
                           est_stage_common *c);
/* mem_memo.c: est_stage_common_make's bytes of m and l, from this
 * thread's memo where it may hold them (est_memo_mode on, no custom
 * pipeline layout), else made in *buf: valid until this thread's next
 * call. */
const est_stage_common *est_stage_common_of(const space_model *m,
                                            const space_layout *l,
                                            est_stage_common *buf);

/* mem_state.c: parameters per rank, their GEMM weights. */
double est_layer_gemm_weights_of(const space_model *m, double t, int moe);
int64_t est_head_rank(const space_layout *l);
double est_rank_mtp(const space_split *sp, int64_t r, int64_t head);
void est_stage_params_of(const space_model *m, const space_layout *l,
                         const space_params *p, est_stage_params *o);
double est_rank_params(const space_model *m, const space_layout *l,
                       const space_params *pm, const est_stage_params *pieces,
                       const space_split *sp, int64_t r, int mtp_embed,
                       double *xparams);
double est_rank_gemm_weights(const space_model *m, const space_layout *l,
                             const space_split *sp, int64_t r, double *gx);
double est_largest_gemm_weight(const space_model *m, const space_layout *l,
                               int dense, int moe);

/* mem_buf.c: the frameworks' own buffers. */
int est_of_2021(const space_layout *l);
double est_pipe_output_token(const space_model *m, const space_layout *l);
double est_ds_bucket_bytes(const space_layout *l);
double est_logits_token(const space_layout *l, double vp);
void est_mfsdp_buffers(const space_layout *l, double unit_p, double nc,
                       double nonunit_p, int head, double act,
                       double loss_kept, double loss_bwd, double rebuilt,
                       double inflight, est_mfsdp_moment *o);

#endif
