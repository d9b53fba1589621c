/*
 * est_mem.h - the memory per GPU part of est.h (mem.c and the files it
 * shares est_int.h with): the bytes of a layout's busiest GPU by kind and
 * moment, the states of p parameters, the allocator's cached share and
 * the search's margins. Included by est.h; include est.h, not this.
 * The device's terms (est_memory_device) and the savers' bytes are
 * declared in est.h beside the context they read.
 */
#ifndef TP_EST_MEM_H
#define TP_EST_MEM_H

#include "space.h"

#include <stdint.h>

/* Bytes on the busiest GPU of a layout (the pipeline stage, first or last,
 * with the most), by kind. The peak of a stage is the larger of its
 * backward (states, gathered ZeRO-3 layers, fp8 weight copies,
 * activations) and its optimizer step (states, fp8 weight copies, the
 * step's transient copies). Conventions and sources in mem.c. */
typedef struct est_memory {
    /* Tensors at the larger moment (docs/memory.md) */
    double weights, grads, optimizer; /* after sharding; weights with
                                         ZeRO-3's gathered layers */
    double fp8_weights;  /* Transformer Engine's cached fp8 weights and
                            transposes of the layers' GEMMs */
    double fp8_transposes; /* of which (or of the fp8 parameters) the
                            per-tensor recipes' transposed copies, which a
                            GPU that runs fp8 GEMMs in every layout
                            (Blackwell) does not make: est_memory_device
                            takes them out there */
    double activations;  /* kept for the backward, all micro-batches in
                            flight; on the last stage with the loss's
                            logits and softmax */
    double step_transient; /* held in the optimizer step only: the fp32
                              copy of a 16-bit gradient shard */
    double buffers;      /* the framework's communication buffers
                            (DeepSpeed's gradient bucket) */
    double workspace;    /* cuBLAS and Transformer Engine workspaces,
                            through the caching allocator */
    double alloc_backward, alloc_step; /* live tensors of each moment */
    double stream_pool;  /* live tensors of another stream's pool at that
                            pool's own peak, which the main stream's
                            allocations cannot reuse: FSDP2's sharded
                            gradients, made in its reduce-scatter stream
                            (est_memory_settle); 0 elsewhere */
    double main_peak;    /* with stream_pool: the main stream's live
                            tensors at their own peak */
    double step_new;     /* what the step allocates beyond the states:
                            step_transient and buffers made then */
    double allocated;    /* the larger: max_memory_allocated */
    double fragmentation; /* the allocator's cached, unused bytes then */
    double reserved;     /* allocated + fragmentation: max_memory_reserved
                            of the larger moment */
    double context;      /* CUDA context and loaded kernels */
    double nccl;         /* NCCL communicators' buffers */
    double moe_comm;     /* the MoE dispatcher's buffers outside PyTorch's
                            allocator, for the whole run: DeepEP's NVLink
                            buffer and workspace (cudaMalloc) and its RDMA
                            buffer (NVSHMEM's heap), or HybridEP's
                            (est_memory_device); 0 elsewhere */
    double graph_pool;   /* CUDA graphs' private memory pool (Megatron-Core
                            --cuda-graph-impl): what the captured forward and
                            backward keep, reserved through the optimizer
                            step too, where no other tensor can use it; 0
                            without graphs */
    double fsdp_buffers; /* Megatron-FSDP's buffers beyond the sharded
                            states at the larger moment: the modules outside
                            FSDP units kept gathered, the units' gathered
                            weights and unsharded gradients (part of weights
                            and grads above); 0 elsewhere */
    double allowance;    /* total - the tensors of the larger moment */
    double backward_peak; /* what must fit during the backward: its live
                             tensors, the context and NCCL's buffers (the
                             allocator frees its cache before it fails) */
    double step_peak;    /* the same during the optimizer step */
    double total;        /* the larger of the two: what must fit */
    double seen_reserved; /* max_memory_reserved as measured after a step:
                             the backward's segments and the step's copy */
    double seen_device;  /* nvidia-smi after a step: seen_reserved +
                            context + nccl */
    int peak_in_step;    /* 1: the optimizer step sets total */
    double params;       /* parameters that rank holds (before ZeRO-3) */
    double expert_params; /* of which routed-expert weights (sharded by EP
                             and ETP; ZeRO over the expert data-parallel
                             group) */
    int64_t stage;       /* which pipeline stage that is */
    /* Memory savers (offload.c): what this GPU's rank keeps in its host's
     * memory, bytes: optimizer states stepped on the CPU, offloaded
     * activations. 0 without them. */
    double host;
} est_memory;

/* Bytes of p parameters' weights, gradients and optimizer states on one
 * rank, as l's framework keeps them (16-bit weights and an fp32 master,
 * or fp32 parameters under FSDP's mixed precision; gradients of
 * space_grad_bytes), sharded by l's ZeRO stage over dp x cp (ZeRO-3's
 * gathered layers not included): what est_memory_of and est_memory_floor
 * count through the whole step. dp and cp must be >= 1. */
void est_state_bytes(const space_layout *l, double p, double *w, double *gr,
                     double *opt);

/* est_state_bytes with the states sharded over `shard` ranks instead of
 * dp x cp: MoE experts' over the expert data-parallel group. */
void est_state_bytes_shard(const space_layout *l, double p, double shard,
                           double *w, double *gr, double *opt);

/* Bytes the optimizer step of p parameters adds for its duration: the
 * fp32 copy of this rank's gradient shard when gradients are 16-bit (all
 * of them without ZeRO), else 0. */
double est_step_bytes(const space_layout *l, double p);

/* The tensors of pipeline stage r of l and their moments, the allocator's
 * cache at est_memory_cache_share of l's setting; no device terms (workspace,
 * context and nccl 0). */
void est_memory_stage(const space_model *m, const space_layout *l, int64_t r,
                      est_memory *out);

/* est_memory_stage of the busiest stage (the largest total). */
void est_memory_of(const space_model *m, const space_layout *l,
                   est_memory *out);

/* The caching allocator's cached, unused bytes at a peak as a share of
 * the main stream's live tensors, with expandable segments (expandable
 * nonzero: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) or without
 * (mem.c; fitted by bench/validate_memory). */
double est_memory_cache_share(int expandable);

/* The share the search adds to l's estimated peak (est_memory.total)
 * before comparing it with the GPU's memory: the worst under-estimate
 * measured for l's framework (mem.c, bench/results/validate_memory.md),
 * or for a framework without measured peaks of its own a borrowed one
 * bounded by the runs of it that ran (bench/results/validate_fit.md). */
double est_memory_margin(const space_layout *l);

/* 1 where l's framework has no measured peak of its own and its margin is
 * borrowed (est_memory_margin), else 0. */
int est_memory_margin_borrowed(const space_layout *l);

/* One sentence: which measured peaks back l's framework's figures and
 * margin (sources of bench/data/memory_runs.json, their LOSO error). */
const char *est_memory_evidence(const space_layout *l);

/* Recomputes mem's levels and peaks from its moments, context and nccl,
 * with the allocator's cached share frag of the main stream's live
 * tensors (est_memory_cache_share of the layout's setting). */
void est_memory_settle(est_memory *mem, double frag);

#endif
