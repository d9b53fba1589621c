/*
 * mem_device.c - the device's share of memory beyond the allocator's
 * tensors: cuBLAS workspaces, Transformer Engine's userbuffers, the CUDA
 * context and the kernels it loads, NCCL's buffers per communicator,
 * DeepEP's and HybridEP's buffers (est_memory_device). Each term's
 * formula and source: docs/memory.md, "What the runtime holds besides the
 * tensors"; tests/test_mem.c checks each. The caching allocator's cache
 * is mem.c's (est_memory_settle).
 */

#include "est_int.h"

#include <math.h>
#include <string.h>

/* ---- the device's share: workspaces, CUDA context, NCCL ----------------
 * Each term's formula and source: docs/memory.md, "What the runtime holds
 * besides the tensors"; tests/test_mem.c checks each. */

#define MIB 1048576.0

static int hopper_or_later(const hw_gpu *g)
{
    return strcmp(g->arch, "hopper") == 0 || strcmp(g->arch, "blackwell") == 0;
}

/* cuBLAS workspace of one PyTorch handle: CUBLAS_WORKSPACE_CONFIG's
 * default ":4096:2:16:8" = 8 MiB + 128 KiB, and ":4096:8" = 32 MiB on
 * Hopper (getChosenWorkspaceSize, aten/src/ATen/cuda/CublasHandlePool.cpp,
 * PyTorch 2.x). Handles are per CPU thread and autograd runs the backward
 * on its own, so a training step uses two. Transformer Engine shares one
 * cuBLASLt workspace among its GEMMs: 32 MiB from compute capability 9, 4
 * MiB before, three with userbuffers (--tp-comm-overlap)
 * (get_cublas_workspace_size_bytes, get_workspace,
 * transformer_engine/pytorch/module/base.py, NVIDIA/TransformerEngine v1.9
 * and v2.4). */
static double workspace_bytes(int h, const space_layout *l)
{
    double ws = 2 * (h ? 32 * MIB : 8 * MIB + 128 * 1024.0);
    if (l->framework == SPACE_FW_MEGATRON_CORE)
        ws += (l->tp_overlap == SPACE_TP_OVERLAP_ALL ? 3 : 1)
              * (h ? 32 * MIB : 4 * MIB);
    return ws;
}

/* Transformer Engine's userbuffers for --tp-comm-overlap, registered with
 * NCCL outside PyTorch's allocator: ten buffers of seq x mbs / cp x hidden
 * (TE 2.4's default set in initialize_ub, base.py, with the shape
 * Megatron-Core passes, megatron/training/initialize.py core_v0.12.0), two
 * bytes each, one for the six all-gather buffers under fp8: 20 (bf16) or
 * 14 (fp8) x s b h / cp bytes. */
static double userbuffer_bytes(const space_model *m, const space_layout *l)
{
    if (l->framework != SPACE_FW_MEGATRON_CORE
        || l->tp_overlap != SPACE_TP_OVERLAP_ALL || l->tp < 2)
        return 0;
    double sbh = (double)l->seq * (double)l->mbs / (double)l->cp
                 * (double)m->hidden;
    return (l->dtype == HW_FP8 ? 14 : 20) * sbh;
}

/* The CUDA context with the kernels it loads. Eager module loading
 * (PyTorch 1.x): 1573 MiB on an A100 ("40GB A100 takes 1573MiB for cuda
 * kernels", bigscience-workshop/bigscience,
 * train/tr11-176B-ml/chronicles-prequel.md). Lazy loading (PyTorch sets
 * CUDA_MODULE_LOADING=LAZY since 1.13, pytorch/pytorch#86509): 274 MiB
 * bare, "around 400MB" (pytorch/pytorch#109888) before the libraries a
 * step loads; 512 MiB taken, not measured on Hopper. Before PyTorch 1.13
 * cuBLAS took its workspaces itself, outside the allocator: here too. */
#define EST_MEM_CONTEXT_EAGER (1573.0 * MIB)
#define EST_MEM_CONTEXT_LAZY (512.0 * MIB)
/* Measured with lazy loading on an H100 (PyTorch 2.11, CUDA 13.0,
 * NCCL 2.28.9; bench/data/memsample_h100, NVML's figure for the process):
 * 520 MiB after the first tensor, 198 MiB more once cuBLAS has run a
 * GEMM (its kernels, outside the allocator), and 564 MiB more once NCCL
 * has made its first communicator and run a collective, with no peer to
 * connect to (its kernels and fixed device structures; the buffers per
 * peer are nccl_bytes's). The estimate takes the 512 above plus the
 * cuBLAS and NCCL figures: 1274 MiB against the 1306 MiB between
 * nvidia-smi and max_memory_reserved after the steps. */
#define EST_MEM_CUBLAS_MODULES (198.0 * MIB)
#define EST_MEM_NCCL_FIXED (564.0 * MIB)

/* NCCL. This GPU's share of one send and one receive connector on one
 * channel: the LL (512 KiB), LL128 (4.6875 MiB) and Simple (NCCL_BUFFSIZE,
 * 4 MiB) buffers, all three always allocated (computeBuffSizes, init.cc),
 * each side's rounded up to 2 MiB over NVLink or PCIe (transport/p2p.cc):
 * 12 MiB; over the network with GPUDirect RDMA the sender keeps Simple and
 * LL128, the receiver all three (transport/net.cc): 8.69 + 9.19 MiB
 * (NVIDIA/nccl v2.18.3, the same at v2.23.4). */
#define NCCL_PAIR_P2P (12.0 * MIB)
#define NCCL_PAIR_NET (17.875 * MIB)

/* Channels of a collective communicator inside a node: 24 on an HGX A100
 * ("Channel 23/24", NVIDIA/nccl-tests#100), 32 on H100 (channel indices
 * above 22, NVIDIA/nccl#1259; 32 p2p channels, NVIDIA/nccl#1685); with one
 * GPU per node, two per NIC the GPU reaches. */
static double nccl_channels(int h)
{
    return h ? 32 : 24;
}

/* One collective communicator of n ranks, `local` of them on this node:
 * its ring and its tree (NCCL before 2.22 connects both when it creates
 * the communicator; after, at the first collective of each algorithm, and
 * every group Megatron creates runs small all-reduces, which take the
 * tree); NVLink SHARP's buffers on NVSwitch nodes of Hopper and later
 * (NCCL_NVLS_ENABLE auto) for a communicator that all-reduces large
 * tensors inside a node: 16 channels x 2 x 1 MiB x local GPUs from NCCL
 * 2.22 (transport/nvls.cc; 1536 MiB per 8 GPUs in 2.17-2.20). */
static double nccl_coll(const est_ctx *c, int h, int64_t n, int64_t local,
                        int nvls)
{
    if (n <= 1) return 0;
    const hw_system *y = c->sys;
    double b;
    if (local <= 1) {
        int per_gpu = y && y->gpus_per_node > 0
                          ? (y->nics_per_node + y->gpus_per_node - 1)
                                / y->gpus_per_node
                          : 1;
        b = 2 * (per_gpu > 0 ? per_gpu : 1) * 2 * NCCL_PAIR_NET;
    } else {
        b = nccl_channels(h) * 2 * NCCL_PAIR_P2P;
    }
    if (nvls && local > 2 && h && y
        && y->intra_topology == HW_TOPO_NVSWITCH)
        b += 16 * 2 * MIB * (double)local;
    return b;
}

/* Ranks of a group of n at stride `stride` (Megatron's rank order: tp,
 * cp, dp, pp) that share this node. */
static int64_t local_ranks(int64_t n, int64_t stride, int gpn)
{
    int64_t per = stride >= gpn ? 1 : gpn / stride;
    return n < per ? n : per;
}

/* The communicators a layout creates and their buffers on one GPU: TP, CP,
 * DP (DP x CP for the gradients with CP), the world's (Megatron's
 * barriers), the first and last stages' embedding group with tied
 * embeddings, and the pipeline's point-to-point sends, connected per peer
 * at the first send: 32 channels x 12 MiB per neighbour inside a node, a
 * pool of 32 channels x 16 steps x 128 KiB each way across nodes
 * (NCCL_P2P_NET_CHUNKSIZE; sharedBuffersInit, transport/net.cc v2.18.3). */
static double nccl_bytes(const est_ctx *c, int h, const space_model *m,
                         const space_layout *l)
{
    int gpn = c->sys && c->sys->gpus_per_node > 0 ? c->sys->gpus_per_node : 8;
    int64_t tp = l->tp, cp = l->cp, dp = l->dp, pp = l->pp;
    if (tp < 1 || cp < 1 || dp < 1 || pp < 1) return 0; /* not a layout */
    int64_t world = tp * cp * dp * pp;
    double b = nccl_coll(c, h, tp, local_ranks(tp, 1, gpn), !l->sp)
               + nccl_coll(c, h, cp, local_ranks(cp, tp, gpn), 0)
               + nccl_coll(c, h, dp * cp, local_ranks(dp * cp, tp, gpn),
                           l->zero == SPACE_ZERO_NONE)
               + nccl_coll(c, h, world, local_ranks(world, 1, gpn), 0);
    if (cp > 1) b += nccl_coll(c, h, dp, local_ranks(dp, tp * cp, gpn), 0);
    if (pp > 1) {
        if (m->tied_embeddings) b += nccl_coll(c, h, 2, 1, 0);
        int64_t stride = tp * cp * dp;
        if (stride < gpn) {
            double peers = l->vpp > 1 || pp > 2 ? 2 : 1;
            b += peers * 32 * NCCL_PAIR_P2P;
        } else {
            b += 2 * 32 * 16 * 128 * 1024.0;
        }
    }
    return b;
}

/* DeepEP's normal-mode buffers (deepseek-ai/DeepEP@v1.2.1, 9af0e0d0e,
 * deep_ep/buffer.py Buffer.get_dispatch_config and get_combine_config,
 * csrc/config.hpp Config.get_nvl_buffer_size_hint and
 * get_rdma_buffer_size_hint, csrc/deep_ep.cpp Buffer::Buffer), as
 * Megatron-Core sizes them (moe/fused_a2a.py get_buffer: the larger hint
 * of the dispatch and combine configs of the group, hidden_bytes = h x
 * max(element size, 2) = 2h; 20 SMs, token_dispatcher.py
 * _DeepepManager, moe_flex_dispatcher_num_sms unset). One buffer for the
 * run, on the EP x ETP group of n ranks: the NVLink buffer, cudaMalloc'd
 * with its barrier signals and pointers, a 32 MiB workspace, and past 8
 * ranks (NUM_MAX_NVL_PEERS) the RDMA buffer from NVSHMEM's heap. DeepEP
 * configures only the group sizes of its table; another takes the next
 * listed size. Per channel (SMs / 2) and NVLink peer (n, at most 8), a
 * received token takes its data, an 8-byte source meta, 128 top-k
 * indices (int64) and weights (fp32) and 128 fp32 scales; over RDMA,
 * twice each, per RDMA peer (n / 8), and 16 bytes more, with the
 * received-token count rounded up to a multiple of the sent chunk. */
static double deepep_bytes(double h, int64_t n)
{
    static const struct {
        int ranks, nvl_recv[2], rdma_send[2], rdma_recv;
    } cfg[] = { /* dispatch, combine */
        {2, {256, 256}, {6, 6}, 128},     {4, {256, 256}, {6, 6}, 128},
        {8, {256, 256}, {6, 6}, 128},     {16, {288, 288}, {20, 12}, 128},
        {24, {288, 288}, {32, 8}, 128},   {32, {288, 288}, {32, 8}, 128},
        {64, {288, 288}, {28, 20}, 128},  {128, {560, 560}, {32, 12}, 128},
        {144, {720, 720}, {12, 8}, 128},  {160, {720, 720}, {12, 8}, 128},
    };
    size_t k = 0;
    while (k + 1 < sizeof cfg / sizeof cfg[0] && cfg[k].ranks < n) k++;
    double ranks = (double)cfg[k].ranks, ch = 20 / 2;
    double nvl_r = fmin(ranks, 8), rdma_r = fmax(floor(ranks / 8), 1);
    double hb = 2 * h, tok = hb + 8 + 128 * 8 + 128 * 4 + 128 * 4;
    double nvl = 0, rdma = 0;
    for (int d = 0; d < 2; d++) {
        double b = ch * nvl_r * (2 * rdma_r + 3) * 4
                   + ch * nvl_r * cfg[k].nvl_recv[d] * tok;
        nvl = fmax(nvl, ceil(b / 128) * 128);
        if (ranks > 8) {
            double s = cfg[k].rdma_send[d];
            double recv = ceil(cfg[k].rdma_recv / s) * s;
            double rb = ch * rdma_r * (8 * 2 + 2) * 2 * 4
                        + ch * rdma_r * recv * 2 * (tok + 16);
            rdma = fmax(rdma, ceil(rb / 128) * 128);
        }
    }
    return nvl + 8 * 4 + 8 * 8 + 8 * 8 + 32 * MIB + rdma;
}

/* HybridEP's buffers (deepseek-ai/DeepEP branch hybrid-ep@94a9f8f,
 * deep_ep/hybrid_ep_buffer.py HybridEPBuffer, csrc/hybrid_ep/buffer/
 * intranode.cu NVLCoordinator::allocate_*_buffers and internode_doca.cu
 * RDMACoordinator::allocate_*_buffers), which Megatron-Core makes at the
 * first dispatch for the rank's t tokens (fused_a2a.py
 * init_hybrid_ep_buffer): over NVLink room for every token of the group
 * of n ranks (the worst case, all routed to one rank): 16-bit data, an
 * fp32 probability per expert of the NVLink domain and an fp32 scale per
 * 128 values, dispatch and combine sharing it (use_shared_buffer); with
 * several NVLink domains (nodes) the RDMA side's staging of the rank's
 * tokens and of the other domains' (dispatch and combine). e = local
 * experts, dom = ranks per NVLink domain. */
static double hybridep_bytes(double h, double t, int64_t n, double e,
                             int64_t dom)
{
    double rpn = (double)(n < dom ? n : dom), nodes = (double)n / rpn;
    double tok = 2 * h + 4 * e * rpn + 4 * (h / 128);
    double b = t * (double)n * tok;
    if (nodes > 1) {
        double other = t * (nodes - 1);
        b += t * (2 * h + 4 * e * rpn * nodes + 4 * (h / 128))
             + other * tok /* dispatch: the other domains' tokens */
             + 2 * other * (2 * h + 4 * e * rpn); /* combine */
    }
    return b;
}

/* The MoE dispatcher's buffers outside PyTorch's allocator
 * (est_memory.moe_comm): the flex dispatcher's backend (DeepEP,
 * HybridEP) with expert parallelism; none for the all-to-all and
 * all-gather dispatchers, whose buffers are tensors (moe_buffers). */
static double moe_comm_bytes(const est_ctx *c, const space_model *m,
                             const space_layout *l)
{
    if (m->num_experts <= 0 || l->moe_dispatcher != SPACE_MOE_FLEX
        || l->framework != SPACE_FW_MEGATRON_CORE)
        return 0;
    int64_t n = space_layout_ep(l) * space_layout_etp(l);
    if (n < 2) return 0;
    double h = (double)m->hidden;
    if (l->moe_flex_backend != SPACE_MOE_FLEX_HYBRIDEP)
        return deepep_bytes(h, n);
    const hw_system *y = c->sys;
    int64_t dom = y && y->scaleup_domain_gpus > 0 ? y->scaleup_domain_gpus
                  : y && y->gpus_per_node > 0     ? y->gpus_per_node
                                                  : 8;
    double t = (double)l->mbs * (double)l->seq / (double)l->cp
               / (l->sp ? (double)l->tp : 1);
    double e = (double)m->num_experts / (double)space_layout_ep(l);
    return hybridep_bytes(h, t, n, e, dom);
}

void est_memory_device(const est_ctx *c, const space_model *m,
                       const space_layout *l, est_memory *mem)
{
    int h = hopper_or_later(c->gpu); /* once: this runs in every estimate */
    double ws = workspace_bytes(h, l);
    if (mem->fp8_transposes > 0 && strcmp(c->gpu->arch, "blackwell") == 0) {
        /* Blackwell runs fp8 GEMMs in every layout: Transformer Engine
         * keeps one copy of a per-tensor-scaled weight (stage_of) */
        double t = mem->fp8_transposes;
        mem->fp8_weights -= t;
        mem->alloc_backward -= t;
        mem->alloc_step -= t;
        mem->main_peak -= t;
        mem->fp8_transposes = 0;
    }
    if (est_of_2021(l)) {
        mem->workspace = 0;
        mem->context = EST_MEM_CONTEXT_EAGER + ws;
    } else {
        mem->workspace = ws;
        mem->alloc_backward += ws;
        mem->alloc_step += ws;
        mem->main_peak += ws;
        mem->context = EST_MEM_CONTEXT_LAZY + EST_MEM_CUBLAS_MODULES;
    }
    mem->nccl = nccl_bytes(c, h, m, l) + userbuffer_bytes(m, l)
                + (est_of_2021(l) ? 0 : EST_MEM_NCCL_FIXED);
    mem->moe_comm = moe_comm_bytes(c, m, l);
    est_memory_settle(mem, est_memory_cache_share(l->alloc_expandable));
}
