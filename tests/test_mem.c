/*
 * test_mem.c - the memory model (estimator/mem.c) per framework, exactly:
 * a toy model whose parameter count is written out here term by term,
 * under each framework's defaults (space_framework_software), gives the
 * bytes per parameter docs/memory.md derives from the frameworks' code
 * (weights, gradients, optimizer states, the optimizer step's transient
 * copy, Transformer Engine's fp8 weight copies), the activations of fp8
 * and of partial recomputation, and a peak that is the larger of the
 * backward and the optimizer step; an MoE toy's experts sharded by EP,
 * ETP and the expert data-parallel group, and its routed activations.
 */
#include "est.h"
#include "tp_test.h"

#include <math.h>
#include <string.h>

/* mem.c's caching allocator's cached share of the main stream's live
 * tensors for l's setting; est_memory_of adds no device terms (context,
 * NCCL, workspaces). */
#define FRAG(l) est_memory_cache_share((l)->alloc_expandable)
#define MIB 1048576.0

/* Llama-like toy: 4 layers, hidden 64, 4 heads of 16, SwiGLU FFN 256,
 * RMSNorm, RoPE, no biases, untied head, vocabulary 1000 (padded to 1024
 * at TP 1). */
static space_model toy(void)
{
    space_model m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "toy");
    m.num_layers = 4, m.hidden = 64, m.heads = 4, m.kv_heads = 4;
    m.head_dim = 16, m.ffn_hidden = 256, m.vocab = 1000;
    m.max_position = 1 << 20;
    m.act = SPACE_ACT_SWIGLU, m.norm = SPACE_NORM_RMSNORM;
    m.pos = SPACE_POS_ROPE;
    return m;
}

/* Its parameters, by hand: a layer's GEMM weights (QKV 64 x 192, output
 * 64 x 64, gate/up/down 3 x 64 x 256) and norms (2 x 64); embedding and
 * head 1024 x 64 each, final norm 64. */
enum {
    GEMM_W = 64 * 192 + 64 * 64 + 3 * 64 * 256, /* 65536 */
    LAYER = GEMM_W + 2 * 64,                    /* 65664 */
    PARAMS = 4 * LAYER + 2 * 1024 * 64 + 64      /* 393792 */
};

static space_layout layout(space_framework f, int dtype, space_zero z)
{
    space_layout l;
    memset(&l, 0, sizeof l);
    l.tp = 1, l.pp = 1, l.cp = 1, l.dp = 4, l.vpp = 1;
    l.mbs = 1, l.gbs = 4, l.seq = 1024, l.zero = z;
    l.recompute = SPACE_RECOMPUTE_NONE;
    l.dtype = dtype;
    space_framework_software(f, &l);
    return l;
}

/* Bytes per parameter of weights, gradients, optimizer states and the
 * step's transient copy, over the one stage's PARAMS, and the peak
 * composition. */
static void check_bytes(const space_model *m, const space_layout *l, double w,
                        double gr, double opt, double step, double live,
                        double fp8)
{
    est_memory r;
    est_memory_of(m, l, &r);
    TP_CHECK_REL(r.params, (double)PARAMS, 1e-12);
    TP_CHECK_REL(r.weights, w * PARAMS + live, 1e-12);
    TP_CHECK_REL(r.grads, gr * PARAMS, 1e-12);
    TP_CHECK_REL(r.optimizer, opt * PARAMS, 1e-12);
    if (step > 0)
        TP_CHECK_REL(r.step_transient, step * PARAMS, 1e-12);
    else
        TP_CHECK(r.step_transient == 0);
    if (fp8 > 0)
        TP_CHECK_REL(r.fp8_weights, fp8, 1e-12);
    else
        TP_CHECK(r.fp8_weights == 0);
    double held_b = r.weights + r.grads + r.optimizer + r.fp8_weights
                    + r.activations;
    double held_s = (w + gr + opt + step) * PARAMS + r.fp8_weights;
    TP_CHECK_REL(r.backward_peak, held_b, 1e-12);
    TP_CHECK_REL(r.step_peak, held_s, 1e-12);
    TP_CHECK_REL(r.reserved, r.allocated * (1 + FRAG(l)), 1e-12);
    TP_CHECK(r.total == (r.step_peak > r.backward_peak ? r.step_peak
                                                         : r.backward_peak));
    TP_CHECK_INT(r.peak_in_step, r.step_peak > r.backward_peak);
}

/* Each framework's defaults, bytes per parameter at DP 4 (docs/memory.md
 * has the table). */
static void test_frameworks(void)
{
    space_model m = toy();
    tp_err e = {0};
    TP_CHECK(space_model_validate(&m, "toy", &e) == TP_OK);
    space_params p;
    space_model_params(&m, 128, &p);
    TP_CHECK_INT(p.total, PARAMS);
    /* Megatron-Core, bf16, distributed optimizer: 2 + 4 + 12 / 4. */
    space_layout l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    TP_CHECK_INT(space_grad_bytes(&l), 4);
    check_bytes(&m, &l, 2, 4, 3, 0, 0, 0);
    /* ... without it: Megatron-LM's 18. */
    l.zero = SPACE_ZERO_NONE;
    check_bytes(&m, &l, 2, 4, 12, 0, 0, 0);
    /* ... with --grad-reduce-in-bf16: 2 + 2 + 12 / 4, the step's fp32
     * copy of the shard 4 / 4. */
    l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    l.grad_bytes = 2;
    check_bytes(&m, &l, 2, 2, 3, 1, 0, 0);
    /* Megatron-Core with fp16: 16-bit gradients by default. */
    l = layout(SPACE_FW_MEGATRON_CORE, HW_FP16, SPACE_ZERO_1);
    TP_CHECK_INT(space_grad_bytes(&l), 2);
    check_bytes(&m, &l, 2, 2, 3, 1, 0, 0);
    /* ... and --accumulate-allreduce-grads-in-fp32. */
    l.grad_bytes = 4;
    check_bytes(&m, &l, 2, 4, 3, 0, 0, 0);
    /* Megatron-LM 2021, fp16, no distributed optimizer: 2 + 2 + 12, the
     * step's fp32 copy of every gradient 4. */
    l = layout(SPACE_FW_MEGATRON_2021, HW_FP16, SPACE_ZERO_NONE);
    check_bytes(&m, &l, 2, 2, 12, 4, 0, 0);
    /* ... bf16 forces fp32 accumulation: 18. */
    l = layout(SPACE_FW_MEGATRON_2021, HW_BF16, SPACE_ZERO_NONE);
    check_bytes(&m, &l, 2, 4, 12, 0, 0, 0);
    /* torchtitan, FSDP2 (ZeRO-3): fp32 gradients; its moments are
     * test_fsdp2's. */
    l = layout(SPACE_FW_TORCHTITAN, HW_BF16, SPACE_ZERO_3);
    TP_CHECK_INT(space_grad_bytes(&l), 4);
    /* DeepSpeed's fp16 ZeRO-3 (2021): (2 + 2 + 12) / 4 and the step's
     * fp32 copy of the shard 4 / 4. */
    l = layout(SPACE_FW_MEGATRON_2021, HW_FP16, SPACE_ZERO_3);
    check_bytes(&m, &l, 0.5, 0.5, 3, 1, 2.0 * 2 * LAYER, 0);
    /* fp8: Transformer Engine (Megatron-Core) caches an fp8 weight and its
     * transpose of every layer GEMM, 2 bytes each; torchao (torchtitan)
     * nothing. */
    l = layout(SPACE_FW_MEGATRON_CORE, HW_FP8, SPACE_ZERO_1);
    check_bytes(&m, &l, 2, 4, 3, 0, 0, 2.0 * 4 * GEMM_W);
    {
        est_memory r;
        l = layout(SPACE_FW_TORCHTITAN, HW_FP8, SPACE_ZERO_3);
        est_memory_of(&m, &l, &r);
        TP_CHECK(r.fp8_weights == 0);
    }
    /* --fp8-param-gather: the GEMM weights are one-byte parameters and
     * only their transpose is cached. */
    {
        est_memory r;
        l = layout(SPACE_FW_MEGATRON_CORE, HW_FP8, SPACE_ZERO_1);
        l.fp8_params = 1;
        est_memory_of(&m, &l, &r);
        TP_CHECK_REL(r.weights, 2.0 * PARAMS - 4.0 * GEMM_W, 1e-12);
        TP_CHECK_REL(r.fp8_weights, 4.0 * GEMM_W, 1e-12);
        TP_CHECK_REL(r.grads, 4.0 * PARAMS, 1e-12);
    }
}

/* The state bytes est_state_bytes and est_step_bytes give for one
 * parameter (what the search's floor uses too). */
static void test_state_bytes(void)
{
    space_layout l = layout(SPACE_FW_MEGATRON_2021, HW_FP16, SPACE_ZERO_2);
    double w, gr, opt;
    est_state_bytes(&l, 1, &w, &gr, &opt);
    TP_CHECK(w == 2 && gr == 0.5 && opt == 3);
    TP_CHECK(est_step_bytes(&l, 1) == 1);
    /* At DP 1 the rank's shard is every gradient. */
    l.dp = 1;
    TP_CHECK(est_step_bytes(&l, 1) == 4);
    /* Context parallelism shards too (dp x cp). */
    l.dp = 2, l.cp = 2;
    TP_CHECK(est_step_bytes(&l, 1) == 1);
    /* FSDP's parameters are fp32 below ZeRO-3 as well: its 16-bit copies
     * play the weights' part, the fp32 parameters the master's. */
    l = layout(SPACE_FW_TORCHTITAN, HW_BF16, SPACE_ZERO_1);
    est_state_bytes(&l, 1, &w, &gr, &opt);
    TP_CHECK(w == 2 && gr == 4 && opt == 3);
    TP_CHECK(est_step_bytes(&l, 1) == 0);
}

/* The peak is the larger of the backward and the optimizer step: the
 * step's fp32 gradient copy is not added to the activations. */
static void test_peak(void)
{
    space_model m = toy();
    /* Short sequences: the step of Megatron-LM 2021's fp16 (20 bytes per
     * parameter) outweighs the backward (16 and a few activations). */
    space_layout l = layout(SPACE_FW_MEGATRON_2021, HW_FP16, SPACE_ZERO_NONE);
    l.seq = 16;
    est_memory a;
    est_memory_of(&m, &l, &a);
    TP_CHECK(a.peak_in_step);
    TP_CHECK(a.total == a.step_peak);
    TP_CHECK_REL(a.total, 20.0 * PARAMS, 1e-12);
    /* Long ones: the backward's activations. */
    l.seq = 4096;
    est_memory_of(&m, &l, &a);
    TP_CHECK(!a.peak_in_step);
    TP_CHECK(a.total == a.backward_peak);
    TP_CHECK(a.backward_peak - a.step_peak
             > (a.activations - 4.0 * PARAMS) * 0.999);
    /* ZeRO-3's gathered layers are freed before the step too. */
    l = layout(SPACE_FW_TORCHTITAN, HW_BF16, SPACE_ZERO_3);
    l.seq = 16;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.step_peak, 4.0 * PARAMS, 1e-12);
}

/* Activation bytes per token of one layer, as mem.c documents them, at
 * TP 1 without SP or dropout, with flash attention: attention 2h (norm
 * input) + g h (QKV input) + 2 (q + 2 kv) + 2 q (flash output) + [fp8:
 * q, the output projection's fp8 input] + 4 heads (log-sum-exp); MLP 2h
 * + g h + 4 f (SwiGLU's two inputs) + g f (FC2's input); g = 2 at 16 bits,
 * 1 under Transformer Engine's fp8. */
/* g: bytes of a saved GEMM input (2; fp8 1; NVFP4 0.5625), which under
 * Transformer Engine also keeps a quantised copy of the attention output. */
static double layer_token_g(double g)
{
    double h = 64, q = 64, kv = 64, f = 256, heads = 4;
    return 2 * h + g * h + 2 * (q + 2 * kv) + 2 * q + (g < 2 ? g * q : 0)
           + 4 * heads + 2 * h + g * h + 4 * f + g * f;
}

static double layer_token(int fp8)
{
    return layer_token_g(fp8 ? 1 : 2);
}

static void test_fp8_activations(void)
{
    space_model m = toy();
    /* the loss, per token: the fp32 softmax and the 16-bit logits */
    double tokens = 1024, loss = 6.0 * 1024;
    space_layout l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    l.flash = 1;
    est_memory a;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.activations, tokens * (4 * layer_token(0) + loss), 1e-12);
    l.dtype = HW_FP8;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.activations, tokens * (4 * layer_token(1) + loss), 1e-12);
    /* NVFP4: half a byte and an e4m3 scale per 16 a saved GEMM input;
     * two such copies of every layer GEMM weight cached. */
    l.dtype = HW_FP4;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.activations,
                 tokens * (4 * layer_token_g(0.5 + 1.0 / 16) + loss), 1e-12);
    TP_CHECK_REL(a.fp8_weights, 2 * (0.5 + 1.0 / 16) * 4 * GEMM_W, 1e-12);
    l.dtype = HW_FP8;
    /* torchao keeps its inputs in 16 bits. */
    l.fp8_lib = SPACE_FP8_LIB_TORCHAO;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.activations, tokens * (4 * layer_token(0) + loss), 1e-12);
    /* PyTorch eager: SwiGLU's product and silu output (2f more); before
     * PyTorch's fused RMSNorm, the two norms' fp32 inputs (4h each). */
    l.dtype = HW_BF16, l.eager = 1;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.activations,
                 tokens * (4 * (layer_token(0) + 2 * 256) + loss), 1e-12);
    l.rmsnorm_composite = 1;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.activations,
                 tokens * (4 * (layer_token(0) + 8 * 64 + 2 * 256) + loss),
                 1e-12);
    /* Megatron-Core's fused cross-entropy (--cross-entropy-loss-fusion):
     * one more fp32 buffer of the logits, 4V a token, at the loss's
     * backward. */
    l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    l.flash = 1, l.ce_fusion = 1;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.activations,
                 tokens * (4 * layer_token(0) + loss + 4.0 * 1024), 1e-12);
    /* Only on the last pipeline stage. */
    l.pp = 2, l.dp = 2;
    est_memory b;
    est_memory_stage(&m, &l, 0, &a);
    l.ce_fusion = 0;
    est_memory_stage(&m, &l, 0, &b);
    TP_CHECK(a.activations == b.activations);
    est_memory_stage(&m, &l, 1, &b);
    l.ce_fusion = 1;
    est_memory_stage(&m, &l, 1, &a);
    TP_CHECK_REL(a.activations - b.activations, tokens * 4.0 * 1024, 1e-12);
    /* --defer-embedding-wgrad-compute: the LM head's output gradient
     * (2V) and input (2h) of each deferred micro-batch stay to the flush;
     * the loss's peak of a later one sees the limit's worth, at most the
     * micro-batches before it (4 here). */
    l.ce_fusion = 0, l.gbs = 8;
    est_memory_stage(&m, &l, 1, &b);
    l.wgrad_defer = 2;
    est_memory_stage(&m, &l, 1, &a);
    TP_CHECK_REL(a.activations - b.activations,
                 2 * tokens * (2.0 * 1024 + 2 * 64), 1e-12);
    l.wgrad_defer = -1;
    est_memory_stage(&m, &l, 1, &a);
    TP_CHECK_REL(a.activations - b.activations,
                 3 * tokens * (2.0 * 1024 + 2 * 64), 1e-12);
    est_memory_stage(&m, &l, 0, &a);
    l.wgrad_defer = 0;
    est_memory_stage(&m, &l, 0, &b);
    TP_CHECK(a.activations == b.activations);
}

/* torchtitan's per-op selective checkpointing keeps, per token of a
 * layer: the layer input 2h, q 2q, v 2kv, the attention output 2q with
 * its log-sum-exp (4 a head), w1's output 2f and, run eagerly, w2's
 * output 2h (saved by the policy, read by no backward: a compiled block's
 * partitioner drops it). At the backward's start no layer is rebuilt
 * yet; the loss (eager here) adds its 12V. */
static void test_op_sac(void)
{
    space_model m = toy();
    space_layout l = layout(SPACE_FW_TORCHTITAN, HW_BF16, SPACE_ZERO_3);
    l.recompute = SPACE_RECOMPUTE_SELECTIVE_OP;
    l.loss_eager = 1, l.seq = 4096;
    double tokens = 4096, loss = 12.0 * 1024;
    double kept = 2 * 64 + 2 * 64 + 2 * 64 + 2 * 64 + 4 * 4 + 2 * 256;
    est_memory a;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.activations, tokens * (4 * kept + loss), 1e-12);
    l.eager = 1;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.activations, tokens * (4 * (kept + 2 * 64) + loss), 1e-12);
    /* torchtitan on Blackwell from pytorch/torchtitan@3b85aa31f (#1196,
     * 2025-05-14) to b39377f9f (#2095, 2025-12-01): SDPA's cuDNN kernel,
     * missing from the save list, is PREFER_RECOMPUTE, so neither the
     * attention output (2q) nor its statistics (4 a head) stay */
    l.eager = 0, l.sac_attn_recompute = 1;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.activations,
                 tokens * (4 * (kept - 2 * 64 - 4 * 4) + loss), 1e-12);
}

/* torchtitan's FSDP2 without a pipeline: the larger of three moments of
 * the backward (mem.c, measured on an H100 in bench/data/memsample_h100).
 * Per rank at DP 4, in bytes: fp32 parameters P (= PARAMS), Adam 2P,
 * gradients P; the units
 * [final norm, output] (OUT = 64 + 1024 x 64) and the embedding (EMB =
 * 1024 x 64). */
static void test_fsdp2(void)
{
    space_model m = toy();
    enum { EMB = 1024 * 64, OUT = 64 + 1024 * 64, V = 1024 };
    const double P = PARAMS; /* 4 bytes a parameter over 4 ranks */
    space_layout l = layout(SPACE_FW_TORCHTITAN, HW_BF16, SPACE_ZERO_3);
    TP_CHECK(l.param_fp32 && l.flash && !l.eager);
    est_memory a;
    /* Long sequences: the backward's start. The output unit still
     * gathered in bf16, no gradient yet (one micro-batch a step), every
     * layer's activations and the compiled loss's 16-bit logits (2V) and
     * their 16-bit gradient (2V, bench/data/loss_h100). */
    l.seq = 4096;
    double tokens = 4096;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.activations, tokens * (4 * layer_token(0) + 4.0 * V), 1e-12);
    /* The loss run eagerly (torchtitan before #1033, or without
     * torch.compile): its fp32 log-softmax (4V) and its two fp32
     * gradients (8V). The rest of this test runs so, as the H100 steps
     * of bench/data/memsample_h100 measured it. */
    l.loss_eager = 1;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.weights, P + 2.0 * OUT, 1e-12);
    TP_CHECK(a.grads == 0);
    TP_CHECK_REL(a.activations, tokens * (4 * layer_token(0) + 12.0 * V), 1e-12);
    TP_CHECK_REL(a.backward_peak, a.weights + 2 * P + a.activations, 1e-12);
    TP_CHECK_REL(a.step_peak, 4 * P, 1e-12);
    /* Gradient accumulation: the gradients exist at every later
     * micro-batch's start. */
    l.gbs = 8;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.grads, P, 1e-12);
    TP_CHECK_REL(a.backward_peak, a.weights + 3 * P + a.activations, 1e-12);
    /* Full recomputation: the layer it rebuilds is not alive at the
     * start, only its input of every layer (2h a token). */
    l.gbs = 4, l.recompute = SPACE_RECOMPUTE_FULL;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.activations, tokens * (4 * 2 * 64 + 12.0 * V), 1e-12);
    /* Under TP 2 (sequence-parallel, torchtitan's plan): every layer's
     * input sharded (2h / 2), the LM head's all-gathered input saved
     * whole (2h; ColwiseParallel(input_layouts=Shard(1)), apply_tp), and
     * loss parallelism's eager loss: the kept log-softmax 4V and 12V more
     * at its backward, both / 2 (DTensor's _nll_loss_and_log_softmax_
     * backward, torch/distributed/tensor/parallel/loss.py). Compiled,
     * the loss keeps 2V and adds 2V, / 2. */
    l.tp = 2, l.sp = 1;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.activations,
                 tokens * (4 * 2 * 64 / 2.0 + 2 * 64 + 16.0 * V / 2), 1e-12);
    l.loss_eager = 0;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.activations,
                 tokens * (4 * 2 * 64 / 2.0 + 2 * 64 + 4.0 * V / 2), 1e-12);
    l.tp = 1, l.sp = 0, l.loss_eager = 1;
    /* Short sequences: a block's backward. FSDP2's working set of a
     * block (14 bytes a parameter of a layer), the output's sharded fp32
     * gradients, the activations without the loss. */
    l.recompute = SPACE_RECOMPUTE_NONE, l.seq = 16, tokens = 16;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.weights, P + 14.0 * LAYER, 1e-12);
    TP_CHECK_REL(a.grads, OUT, 1e-12);
    TP_CHECK_REL(a.activations, tokens * 4 * layer_token(0), 1e-12);
    /* The backward's end, where a block is small beside the vocabulary:
     * every gradient and the embedding's fp32 reduce-scatter input. */
    m.vocab = 60000; /* padded to 60032 */
    est_memory_of(&m, &l, &a);
    double P2 = 4.0 * LAYER + 2.0 * 60032 * 64 + 64;
    TP_CHECK_REL(a.weights, P2 + 4.0 * 60032 * 64, 1e-12);
    TP_CHECK_REL(a.grads, P2, 1e-12);
    TP_CHECK(a.activations == 0);
    TP_CHECK_REL(a.backward_peak, 4 * P2 + 4.0 * 60032 * 64, 1e-12);
    /* torchtitan before mid 2025: the root holds embedding, final norm
     * and output, reduced last (4 bytes a parameter of all three). */
    l.fsdp_root_embeddings = 1;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.backward_peak, 4 * P2 + 4.0 * (2 * 60032 * 64 + 64), 1e-12);
    /* ... and at long sequences the last block is what the forward
     * leaves gathered, the root gathered again for the output. */
    m = toy(), l.seq = 4096;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.weights, P + 2.0 * LAYER + 2.0 * (EMB + OUT), 1e-12);
    /* torchtitan before enable_gqa repeated grouped keys and values to
     * every head before SDPA: flash attention keeps the copies, 2 x 2
     * (q - kv) bytes a token more (toy with 2 key-value heads of 16: q
     * 64, kv 32); test_gqa_repeat_kv has today's default. */
    l.fsdp_root_embeddings = 0;
    l.gqa_repeat_kv = 1;
    est_memory base;
    est_memory_of(&m, &l, &base);
    m.kv_heads = 2;
    est_memory_of(&m, &l, &a);
    double gqa = -2.0 * 2 * 32 + 4.0 * (64 - 32); /* QKV outputs, repeats */
    TP_CHECK_REL(a.activations - base.activations, tokens * 4 * gqa, 1e-9);
}

/* The caching allocator's segments (docs/memory.md, "What the runtime
 * holds besides the tensors"). FSDP2 makes the sharded gradients in its
 * reduce-scatter stream (foreach_reduce's reduce_output,
 * torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py,
 * pytorch/pytorch@010ae4a89516), a pool the main stream's allocations do
 * not reuse: the segments are the main stream's peak with its cached
 * share and the gradients' pool beside it. Elsewhere the cached share of
 * the allocated peak, per allocator setting: torchtitan's launcher sets
 * expandable segments (run_train.sh, pytorch/torchtitan@a5e57e4a9),
 * Megatron-LM's examples do not. */
static void test_alloc_pools(void)
{
    space_model m = toy();
    enum { OUT = 64 + 1024 * 64 };
    const double P = PARAMS; /* 4 bytes a parameter over 4 ranks */
    double on = est_memory_cache_share(1), off = est_memory_cache_share(0);
    TP_CHECK(on > 0 && off > 0 && on != off);
    space_layout l = layout(SPACE_FW_TORCHTITAN, HW_BF16, SPACE_ZERO_3);
    TP_CHECK_INT(l.alloc_expandable, 1);
    l.seq = 4096, l.loss_eager = 1;
    est_memory a;
    est_memory_of(&m, &l, &a);
    /* the backward's start sets both peaks; no gradient exists then */
    TP_CHECK(a.grads == 0);
    TP_CHECK_REL(a.stream_pool, P, 1e-12);
    TP_CHECK_REL(a.main_peak, a.alloc_backward, 1e-12);
    TP_CHECK_REL(a.reserved, a.main_peak * (1 + on) + P, 1e-12);
    TP_CHECK_REL(a.seen_reserved, a.reserved, 1e-12);
    TP_CHECK_REL(a.fragmentation, a.reserved - a.allocated, 1e-12);
    /* what must fit is still the live tensors */
    TP_CHECK_REL(a.total, a.backward_peak, 1e-12);
    /* accumulation: the gradients live from the second micro-batch on,
     * in their own pool, with the output unit's new shard beside them */
    l.gbs = 8;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.stream_pool, P + 4.0 * OUT / 4, 1e-12);
    TP_CHECK_REL(a.main_peak, a.alloc_backward - P, 1e-12);
    /* without expandable segments, the other share */
    l.alloc_expandable = 0;
    est_memory b;
    est_memory_of(&m, &l, &b);
    TP_CHECK_REL(b.reserved, b.main_peak * (1 + off) + b.stream_pool, 1e-12);
    /* Megatron-Core: one pool, the share of its setting (off by default) */
    l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    TP_CHECK_INT(l.alloc_expandable, 0);
    est_memory_of(&m, &l, &a);
    TP_CHECK(a.stream_pool == 0);
    TP_CHECK_REL(a.reserved, a.allocated * (1 + off), 1e-12);
    l.alloc_expandable = 1;
    est_memory_of(&m, &l, &b);
    TP_CHECK_REL(b.reserved, b.allocated * (1 + on), 1e-12);
    TP_CHECK_REL(b.total, a.total, 1e-12);
}

/* Partial recomputation: block keeps the input of the first N layers of
 * each chunk and everything of the rest, and rebuilds one layer; uniform
 * keeps one input per group of N and rebuilds a group. */
static void test_partial_recompute(void)
{
    space_model m = toy();
    double tokens = 1024, loss = 6.0 * 1024, in = 2.0 * 64;
    double full = layer_token(0);
    space_layout l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    l.recompute = SPACE_RECOMPUTE_FULL;
    est_memory a;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.activations, tokens * (4 * in + full + loss), 1e-12);
    TP_CHECK(space_recompute_layers(&m, &l, 0) == 4);
    l.recompute_method = SPACE_RECOMPUTE_BLOCK, l.recompute_layers = 1;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.activations, tokens * (in + 3 * full + full + loss), 1e-12);
    TP_CHECK(space_recompute_layers(&m, &l, 0) == 1);
    /* more than a chunk has: all of them */
    l.recompute_layers = 9;
    TP_CHECK(space_recompute_layers(&m, &l, 0) == 4);
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.activations, tokens * (4 * in + full + loss), 1e-12);
    /* uniform groups of 2: two inputs kept, two layers rebuilt at once;
     * 3: groups of 3 and 1 */
    l.recompute_method = SPACE_RECOMPUTE_UNIFORM, l.recompute_layers = 2;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.activations, tokens * (2 * in + 2 * full + loss), 1e-12);
    TP_CHECK(space_recompute_layers(&m, &l, 0) == 4);
    l.recompute_layers = 3;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.activations, tokens * (2 * in + 3 * full + loss), 1e-12);
    /* Block under interleaving: N of each of a rank's chunks. PP 2, two
     * chunks of one layer each per rank; N = 1 recomputes all 2. */
    l.pp = 2, l.vpp = 2, l.dp = 2, l.gbs = 4;
    l.recompute_method = SPACE_RECOMPUTE_BLOCK, l.recompute_layers = 1;
    TP_CHECK(space_recompute_layers(&m, &l, 0) == 2);
    l.vpp = 1; /* two layers per chunk: one of them */
    TP_CHECK(space_recompute_layers(&m, &l, 1) == 1);
    /* not full: nothing or everything */
    l.recompute = SPACE_RECOMPUTE_SELECTIVE;
    TP_CHECK(space_recompute_layers(&m, &l, 0) == 2);
    l.recompute = SPACE_RECOMPUTE_NONE;
    TP_CHECK(space_recompute_layers(&m, &l, 0) == 0);
}

/* What the device holds beside the tensors (est_memory_device), term by
 * term as mem.c and docs/memory.md give them, on hand-built 8-GPU nodes:
 * NVSwitch Hopper with 8 NICs, NVSwitch Ampere with 4. */
static void node(hw_gpu *g, hw_system *y, const char *arch, int nics)
{
    memset(g, 0, sizeof *g);
    memset(y, 0, sizeof *y);
    strcpy(g->arch, arch);
    g->mem_bytes = 80.0 * 1024 * MIB;
    y->gpu = g;
    y->gpus_per_node = 8, y->nics_per_node = nics;
    y->intra_topology = HW_TOPO_NVSWITCH;
}

static void test_runtime(void)
{
    space_model m = toy();
    hw_gpu g;
    hw_system y;
    node(&g, &y, "hopper", 8);
    est_ctx c = {&y, &g, NULL, NULL, 0, 0, NULL};
    /* Megatron-Core, TP 8 with SP, DP 4, distributed optimizer. */
    space_layout l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    l.tp = 8, l.sp = 1, l.dp = 4, l.gbs = 4;
    est_memory a;
    est_memory_of(&m, &l, &a);
    double alloc_b = a.alloc_backward;
    est_memory_device(&c, &m, &l, &a);
    /* two PyTorch cuBLAS workspaces of 32 MiB, Transformer Engine's one */
    TP_CHECK_REL(a.workspace, 96 * MIB, 1e-12);
    TP_CHECK_REL(a.alloc_backward, alloc_b + 96 * MIB, 1e-12);
    /* The context with cuBLAS's kernels loaded, and NCCL's fixed share
     * (measured on an H100: 512 + 198 MiB, 564 MiB). */
    TP_CHECK_REL(a.context, (512 + 198) * MIB, 1e-12);
    double fixed = 564 * MIB;
    /* TP (8 local, ring + tree, 32 channels x 12 MiB each; no NVLink
     * SHARP: with SP it only gathers and scatters), DP x CP (4 ranks, one
     * per node: 2 channels per NIC, ring + tree, 17.875 MiB over the
     * network), the world (32 ranks, 8 local). */
    double tp8 = 32 * 2 * 12 * MIB, dp4 = 2 * 2 * 17.875 * MIB;
    TP_CHECK_REL(a.nccl, fixed + tp8 + dp4 + tp8, 1e-12);
    TP_CHECK_REL(a.total, a.alloc_backward + a.context + a.nccl, 1e-12);
    TP_CHECK_REL(a.seen_device, a.seen_reserved + a.context + a.nccl, 1e-12);
    /* Without SP the TP group all-reduces: NVLink SHARP's 16 x 2 x 1 MiB
     * per local GPU (NCCL >= 2.22). */
    l.sp = 0;
    est_memory_of(&m, &l, &a);
    est_memory_device(&c, &m, &l, &a);
    TP_CHECK_REL(a.nccl, fixed + tp8 + 256 * MIB + dp4 + tp8, 1e-12);
    /* --tp-comm-overlap: three TE workspaces and the userbuffers, 20 x
     * s b h bytes in bf16, 14 in fp8. */
    l.sp = 1, l.tp_overlap = SPACE_TP_OVERLAP_ALL;
    est_memory_of(&m, &l, &a);
    est_memory_device(&c, &m, &l, &a);
    TP_CHECK_REL(a.workspace, 160 * MIB, 1e-12);
    TP_CHECK_REL(a.nccl, fixed + tp8 + dp4 + tp8 + 20.0 * 1024 * 64, 1e-12);
    l.dtype = HW_FP8;
    est_memory_of(&m, &l, &a);
    est_memory_device(&c, &m, &l, &a);
    TP_CHECK_REL(a.nccl, fixed + tp8 + dp4 + tp8 + 14.0 * 1024 * 64, 1e-12);
    /* Pipeline sends: across nodes a pool of 32 x 16 x 128 KiB each way;
     * inside a node 32 channels x 12 MiB per neighbour. */
    l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    l.tp = 8, l.sp = 1, l.dp = 1, l.pp = 2, l.gbs = 4;
    est_memory_of(&m, &l, &a);
    est_memory_device(&c, &m, &l, &a);
    double world16 = tp8;
    TP_CHECK_REL(a.nccl, fixed + tp8 + world16 + 2 * 32 * 16 * 128 * 1024.0, 1e-12);
    l.tp = 2, l.pp = 4;
    est_memory_of(&m, &l, &a);
    est_memory_device(&c, &m, &l, &a);
    double tp2 = tp8, world8 = tp8;
    TP_CHECK_REL(a.nccl, fixed + tp2 + world8 + 2 * 32 * 12 * MIB, 1e-12);
    /* 2021 (PyTorch 1.x, NCCL < 2.22) on A100: the eager context with the
     * two cuBLAS workspaces of 8 MiB + 128 KiB outside the allocator; 24
     * channels. */
    node(&g, &y, "ampere", 4);
    l = layout(SPACE_FW_MEGATRON_2021, HW_FP16, SPACE_ZERO_NONE);
    l.tp = 8, l.dp = 4, l.gbs = 4;
    est_memory_of(&m, &l, &a);
    est_memory_device(&c, &m, &l, &a);
    TP_CHECK(a.workspace == 0);
    TP_CHECK_REL(a.context, 1573 * MIB + 2 * (8 * MIB + 128 * 1024.0), 1e-12);
    double a_tp8 = 24 * 2 * 12 * MIB;
    TP_CHECK_REL(a.nccl, a_tp8 + 2 * 2 * 17.875 * MIB + a_tp8, 1e-12);
}

/* Transformer Engine's cached fp8 weights per recipe and GPU generation
 * (docs/memory.md, "Transformer Engine's fp8"): the per-tensor recipes
 * keep the fp8 weight and its transpose where fp8 GEMMs need the TN
 * layout (Hopper) and one copy on Blackwell (nvte_is_non_tn_fp8_gemm_
 * supported, Float8Quantizer::create_tensor, TE v2.4 on); blockwise and
 * MXFP8 keep row- and column-wise data everywhere, MXFP8 with an e8m0
 * scale per 32 elements (MXFP8Quantizer, NVIDIA/TransformerEngine@
 * d0067d0da). --fp8-param-gather: the row-wise copy is the parameter. */
static void test_fp8_caches(void)
{
    space_model m = toy();
    hw_gpu gh, gb;
    hw_system yh, yb;
    node(&gh, &yh, "hopper", 8);
    node(&gb, &yb, "blackwell", 8);
    est_ctx ch = {&yh, &gh, NULL, NULL, 0, 0, NULL};
    est_ctx cb = {&yb, &gb, NULL, NULL, 0, 0, NULL};
    const double G = 4.0 * GEMM_W, mx = 1 + 1.0 / 32;
    space_layout l = layout(SPACE_FW_MEGATRON_CORE, HW_FP8, SPACE_ZERO_1);
    est_memory a, b;
    est_memory_of(&m, &l, &a);
    b = a;
    est_memory_device(&ch, &m, &l, &a);
    est_memory_device(&cb, &m, &l, &b);
    TP_CHECK_REL(a.fp8_weights, 2 * G, 1e-12);
    TP_CHECK_REL(b.fp8_weights, G, 1e-12); /* no transpose on Blackwell */
    TP_CHECK_REL(a.alloc_backward - b.alloc_backward, G, 1e-12);
    TP_CHECK_REL(a.total - b.total, G, 1e-12);
    /* fp8 parameters: the weight is the parameter; Blackwell caches
     * nothing beside it */
    l.fp8_params = 1;
    est_memory_of(&m, &l, &a);
    b = a;
    est_memory_device(&ch, &m, &l, &a);
    est_memory_device(&cb, &m, &l, &b);
    TP_CHECK_REL(a.weights, 2.0 * PARAMS - G, 1e-12);
    TP_CHECK_REL(a.fp8_weights, G, 1e-12);
    TP_CHECK(b.fp8_weights == 0);
    TP_CHECK(est_memory_floor(&m, &l) <= b.weights + b.grads + b.optimizer);
    /* MXFP8: row- and column-wise data with their scales, on any GPU */
    l = layout(SPACE_FW_MEGATRON_CORE, HW_FP8, SPACE_ZERO_1);
    l.fp8_recipe = SPACE_FP8_MXFP8;
    est_memory_of(&m, &l, &a);
    b = a;
    est_memory_device(&cb, &m, &l, &b);
    TP_CHECK_REL(a.fp8_weights, 2 * mx * G, 1e-12);
    TP_CHECK_REL(b.fp8_weights, 2 * mx * G, 1e-12);
    l.fp8_params = 1; /* the row-wise data (and scales) is the parameter */
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.weights, 2.0 * PARAMS - (2 - mx) * G, 1e-12);
    TP_CHECK_REL(a.fp8_weights, mx * G, 1e-12);
    /* blockwise: both copies on Blackwell too (its GEMMs take no other
     * layout: cublaslt_grouped_gemm.cu, fp8_block), each with an fp32
     * scale per 128 x 128 block (Float8BlockQuantizer, block_scaling_dim
     * 2); an activation's copy one per 1 x 128 tile (block_scaling_dim 1):
     * 4/128 of a byte an element more than a per-tensor copy's */
    l = layout(SPACE_FW_MEGATRON_CORE, HW_FP8, SPACE_ZERO_1);
    l.fp8_recipe = SPACE_FP8_BLOCKWISE;
    est_memory_of(&m, &l, &b);
    est_memory_device(&cb, &m, &l, &b);
    TP_CHECK_REL(b.fp8_weights, 2 * (1 + 4.0 / (128 * 128)) * G, 1e-12);
    space_layout pt = layout(SPACE_FW_MEGATRON_CORE, HW_FP8, SPACE_ZERO_1);
    pt.fp8_recipe = SPACE_FP8_TENSORWISE;
    est_memory_of(&m, &pt, &a);
    est_memory_of(&m, &l, &b);
    /* a layer's fp8 GEMM inputs a token: QKV's and FC1's ln_out (h each),
     * the output projection's (q) and FC2's (f), on 4 layers */
    TP_CHECK_REL(b.activations - a.activations,
                 4.0 / 128 * 1024 * 4 * (64 + 64 + 64 + 256), 1e-12);
}

/* Multi-token prediction (Megatron-Core multi_token_prediction.py,
 * gpt_model.py, NVIDIA/Megatron-LM@d98e8a64ddf3): each module on the last
 * stage is a layer, the 2h x h eh_proj and two norms; with a pipeline that
 * stage builds its own embedding (pre_process or mtp_process) unless the
 * head is tied to it; per token it keeps the shifted tokens' embedding
 * (enorm's input, 2h), eh_proj's input (the two normed halves, 2 x 2h),
 * its layer's activations and the loss again. */
static void test_mtp(void)
{
    space_model m = toy();
    space_layout l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    l.pp = 2, l.dp = 2, l.gbs = 2; /* one micro-batch in flight */
    est_memory a, b;
    est_memory_stage(&m, &l, 1, &a);
    m.mtp_layers = 1;
    est_memory_stage(&m, &l, 1, &b);
    double emb = 1024.0 * 64; /* the last stage's own embedding */
    TP_CHECK_REL(b.params - a.params, LAYER + 2.0 * 64 * 64 + 2 * 64 + emb,
                 1e-12);
    double loss = 4.0 * 1024 + 2.0 * 1024; /* per token, as the head's */
    TP_CHECK_REL(b.activations - a.activations,
                 1024.0 * (layer_token(0) + (2 + 2 * 2) * 64.0 + loss), 1e-12);
    /* tied: the head is the embedding, nothing more */
    m.tied_embeddings = 1;
    m.mtp_layers = 0;
    est_memory_stage(&m, &l, 1, &a);
    m.mtp_layers = 1;
    est_memory_stage(&m, &l, 1, &b);
    TP_CHECK_REL(b.params - a.params, LAYER + 2.0 * 64 * 64 + 2 * 64, 1e-12);
}

/* DeepSpeed's fp16 ZeRO-1 (2021-22): the 5e8-element fp16 bucket in the
 * backward without a pipeline and at the step with one; its step holds
 * the partition's gradients only, their flat 16-bit copy and its fp32
 * copy (2/d + 4/d); what a measurement after a step sees adds the step's
 * new tensors to the backward's segments. The 2021 pipelines keep each
 * in-flight micro-batch's stage output. */
static void test_frameworks_2021(void)
{
    space_model m = toy();
    space_layout l = layout(SPACE_FW_DEEPSPEED_2021, HW_FP16, SPACE_ZERO_1);
    est_memory a;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.buffers, 1e9, 1e-12);
    TP_CHECK_REL(a.step_transient, 6.0 / 4 * PARAMS, 1e-12);
    TP_CHECK_REL(a.alloc_backward,
                 a.weights + a.grads + a.optimizer + a.activations + 1e9,
                 1e-12);
    TP_CHECK_REL(a.alloc_step,
                 a.weights + a.grads / 4 + a.optimizer + a.step_transient,
                 1e-12);
    TP_CHECK_REL(a.step_new, a.step_transient, 1e-12);
    TP_CHECK_REL(a.seen_reserved,
                 a.alloc_backward * (1 + FRAG(&l)) + a.step_new, 1e-12);
    l.pp = 2, l.dp = 2;
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.step_new, a.step_transient + 1e9, 1e-12);
    /* Without ZeRO: the per-parameter fp32 copies and their flat copy. */
    l = layout(SPACE_FW_DEEPSPEED_2021, HW_FP16, SPACE_ZERO_NONE);
    est_memory_of(&m, &l, &a);
    TP_CHECK_REL(a.step_transient, 8.0 * PARAMS, 1e-12);
    TP_CHECK(a.buffers == 0);
    /* Megatron-LM 2021, PP 2: stage 0 keeps the 16-bit output of both
     * micro-batches in flight, 2h per token each. */
    l = layout(SPACE_FW_MEGATRON_2021, HW_BF16, SPACE_ZERO_NONE);
    l.pp = 2, l.dp = 2, l.gbs = 4;
    est_memory b;
    est_memory_stage(&m, &l, 0, &a);
    l.framework = SPACE_FW_MEGATRON_CORE; /* frees it after the send */
    est_memory_stage(&m, &l, 0, &b);
    TP_CHECK_REL(a.activations - b.activations, 1024.0 * 2 * 2 * 64, 1e-12);
    /* The margin and its evidence exist for every framework. */
    for (int f = 0; f < SPACE_FW_COUNT; f++) {
        l.framework = f;
        double mg = est_memory_margin(&l);
        TP_CHECK(mg >= 0 && mg < 1);
        TP_CHECK(est_memory_evidence(&l)[0] != '\0');
    }
}


/* The toy as an MoE model: layer 0 dense, layers 1-3 MoE with 8 routed
 * SwiGLU experts of 128 (3 x 64 x 128 = 24576 each), top 2, one shared
 * expert of 64 (12288) and the router's 64 x 8. */
static space_model toy_moe(void)
{
    space_model m = toy();
    m.num_experts = 8, m.top_k = 2, m.expert_ffn_hidden = 128;
    m.shared_experts = 1, m.shared_ffn_hidden = 64;
    m.first_dense_layers = 1, m.moe_layer_freq = 1;
    return m;
}

enum {
    ROUTED = 8 * 3 * 64 * 128, /* 196608 a layer */
    ATTN = 64 * 192 + 64 * 64  /* 16384 */
};

/* Experts divide exactly by EP and ETP; their optimizer states by the
 * expert data-parallel group (tp x cp x dp / (etp x ep)), the rest by
 * dp x cp, as Megatron-Core's distributed optimizer keeps them. */
static void test_moe_states(void)
{
    space_model m = toy_moe();
    tp_err e = {0};
    TP_CHECK(space_model_validate(&m, "toy_moe", &e) == TP_OK);
    space_layout l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    l.tp = 2, l.sp = 1, l.dp = 4, l.gbs = 4;
    /* TP 2: the dense layer (attention and FFN / 2, norms whole), three
     * MoE layers (attention and shared expert / 2, norms and router
     * whole), embedding and head / 2 (1024 rows), final norm. */
    double dense = (ATTN + 3 * 64 * 256) / 2 + 128
                   + 3.0 * ((ATTN + 12288) / 2 + 128 + 512)
                   + 2 * 1024 * 64 / 2 + 64;
    const int64_t grid[][3] = {{1, 1, 8}, {2, 1, 4}, {4, 1, 2}, {8, 1, 1},
                               {1, 2, 4}, {2, 2, 2}, {4, 2, 1}};
    for (size_t i = 0; i < sizeof grid / sizeof grid[0]; i++) {
        l.ep = grid[i][0], l.etp = grid[i][1];
        double edp = (double)grid[i][2];
        TP_CHECK_INT(est_moe_edp(&l), grid[i][2]);
        est_memory r;
        est_memory_of(&m, &l, &r);
        double xp = 3.0 * ROUTED / (double)(grid[i][0] * grid[i][1]);
        TP_CHECK_REL(r.expert_params, xp, 1e-12);
        TP_CHECK_REL(r.params - r.expert_params, dense, 1e-12);
        TP_CHECK_REL(r.weights, 2 * (dense + xp), 1e-12);
        TP_CHECK_REL(r.grads, 4 * (dense + xp), 1e-12);
        TP_CHECK_REL(r.optimizer, 12 * dense / 4 + 12 * xp / edp, 1e-12);
        TP_CHECK(est_memory_floor(&m, &l) <= r.total);
    }
    /* ZeRO-2's 16-bit gradient copy in the step: the experts' shard over
     * the expert DP group too. */
    l.ep = 2, l.etp = 1, l.grad_bytes = 2, l.zero = SPACE_ZERO_2;
    est_memory r;
    est_memory_of(&m, &l, &r);
    double xp = 3.0 * ROUTED / 2;
    TP_CHECK_REL(r.step_transient, 4 * dense / 4 + 4 * xp / 4, 1e-12);
    TP_CHECK_REL(r.grads, 2 * dense / 4 + 2 * xp / 4, 1e-12);
    /* EP 1: 8 experts on every rank. The default ETP is TP. */
    space_layout d = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    d.tp = 2, d.sp = 1;
    TP_CHECK_INT(space_layout_etp(&d), 2);
    est_memory_of(&m, &d, &r);
    TP_CHECK_REL(r.expert_params, 3.0 * ROUTED / 2, 1e-12);
}

/* The imbalance moves the busiest EP rank's routed rows: each is FC1's
 * input (2h), FC1's gated output (4 f_e), the activation's output (2
 * f_e), a fp32 probability, the fused permutation's chunk map (an int32
 * a row, moe_permute_state), and the layer's dispatch buffers, the
 * combine's 2 x 2h a row (moe_buffers); at TP 2 with SP a rank routes
 * T / 2 tokens, top 2. With EP 1 every token is local: no imbalance. */
static void test_moe_activations(void)
{
    space_model m = toy_moe();
    space_layout l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    l.tp = 2, l.sp = 1, l.dp = 4, l.gbs = 4, l.ep = 4, l.etp = 1;
    est_memory a, b;
    l.moe_imbalance = 1;
    est_memory_of(&m, &l, &a);
    l.moe_imbalance = 2;
    est_memory_of(&m, &l, &b);
    double row = 2 * 64 + 4 * 128 + 2 * 128 + 4, rows = 2 * 0.5; /* a token */
    double want = 1024 * (3 * rows * (row + 4) + 2 * 2 * 64 * rows);
    TP_CHECK_REL(b.activations - a.activations, want, 1e-12);
    l.ep = 1;
    est_memory_of(&m, &l, &a);
    l.moe_imbalance = 1;
    est_memory_of(&m, &l, &b);
    TP_CHECK(a.activations == b.activations);
    /* Full recomputation keeps each layer's input alone, MoE or not: the
     * MoE toy keeps what the dense toy keeps, but rebuilds an MoE layer
     * (its buffers included). */
    space_model d = toy();
    space_layout f = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    f.recompute = SPACE_RECOMPUTE_FULL;
    f.recompute_method = SPACE_RECOMPUTE_BLOCK, f.recompute_layers = 4;
    est_memory_of(&m, &f, &a);
    est_memory_of(&d, &f, &b);
    TP_CHECK(a.activations > b.activations);
    f.recompute_layers = 0, f.recompute_method = SPACE_RECOMPUTE_UNIFORM;
    f.recompute = SPACE_RECOMPUTE_NONE;
    est_memory c;
    est_memory_of(&m, &f, &c);
    TP_CHECK(c.activations > a.activations);
}

/* fp8 under Transformer Engine caches an fp8 copy and its transpose of
 * every GEMM weight the rank holds (2 bytes each): the dense layer's
 * attention and FFN / TP, the MoE layers' attention and shared expert
 * / TP (not the router, a 16-bit GEMM) and the rank's EP x ETP shard of
 * the routed experts; with --fp8-param-gather those weights are one-byte
 * parameters and only the transpose is cached. MLA's down projections
 * are whole on every TP rank. */
static void test_moe_fp8_weights(void)
{
    space_model m = toy_moe();
    space_layout l = layout(SPACE_FW_MEGATRON_CORE, HW_FP8, SPACE_ZERO_1);
    l.tp = 2, l.sp = 1, l.dp = 4, l.gbs = 4;
    double gw = (ATTN + 3 * 64 * 256) / 2.0 + 3.0 * (ATTN + 12288) / 2.0;
    double dense = (ATTN + 3 * 64 * 256) / 2 + 128
                   + 3.0 * ((ATTN + 12288) / 2 + 128 + 512)
                   + 2 * 1024 * 64 / 2 + 64;
    const int64_t grid[][2] = {{1, 1}, {2, 1}, {8, 1}, {1, 2}, {2, 2}, {4, 2}};
    for (size_t i = 0; i < sizeof grid / sizeof grid[0]; i++) {
        l.ep = grid[i][0], l.etp = grid[i][1];
        double gx = 3.0 * ROUTED / (double)(grid[i][0] * grid[i][1]);
        est_memory r;
        l.fp8_params = 0;
        est_memory_of(&m, &l, &r);
        TP_CHECK_REL(r.fp8_weights, 2 * (gw + gx), 1e-12);
        TP_CHECK_REL(r.weights, 2 * (dense + gx), 1e-12);
        l.fp8_params = 1;
        est_memory_of(&m, &l, &r);
        TP_CHECK_REL(r.fp8_weights, gw + gx, 1e-12);
        TP_CHECK_REL(r.weights, 2 * (dense + gx) - (gw + gx), 1e-12);
    }
    /* MLA (q_lora 32, kv_lora 16, 4 heads of 16 + 8 rope, v 16) at TP 2:
     * the down projections 64 x 32 and 64 x (16 + 8) whole, the up
     * projections 32 x 4 x 24 and 16 x 4 x 32 and the output 4 x 16 x 64
     * halved, the FFN's 3 x 64 x 256 halved: 32768 a layer. */
    space_model a = toy();
    a.q_lora_rank = 32, a.kv_lora_rank = 16, a.qk_nope_head_dim = 16;
    a.qk_rope_head_dim = 8, a.v_head_dim = 16;
    space_layout t = layout(SPACE_FW_MEGATRON_CORE, HW_FP8, SPACE_ZERO_1);
    t.tp = 2, t.sp = 1, t.dp = 2;
    est_memory r;
    est_memory_of(&a, &t, &r);
    double mla = 64 * 32 + 64 * 24
                 + (32 * 4 * 24 + 16 * 4 * 32 + 4 * 16 * 64) / 2
                 + 3 * 64 * 256 / 2;
    TP_CHECK_REL(mla, 32768, 1e-12);
    TP_CHECK_REL(r.fp8_weights, 2.0 * 4 * mla, 1e-12);
}

/* DeepSeek-V3's activation storage (--fp8-activation-cache deepseek-v3;
 * arXiv 2412.19437v2 section 3.3.3, "Low-Precision Activation", and
 * section 3.2.3): per token and layer, the attention output kept once in
 * E5M6, 1.5 q bytes, where Transformer Engine keeps flash attention's
 * 16-bit output and the projection's fp8 copy (3 q); an MoE layer's
 * SwiGLU inputs in fp8 (2 f) with no FC2 input, where TE keeps 16-bit
 * inputs and FC2's fp8 input (5 f), for each routed row (f_e) and the
 * shared expert (f_s); the recomputed output, 16-bit and fp8 (3 f), while
 * one MoE layer's backward runs; with mla_up_proj recomputed, the
 * latents' up projections keep their input in neither (test_mla_up_proj).
 * Nothing without fp8. */
static void test_fp8_act_cache(void)
{
    space_model m = toy_moe(); /* one dense layer, three MoE; q = 64 */
    space_layout l = layout(SPACE_FW_MEGATRON_CORE, HW_FP8, SPACE_ZERO_1);
    TP_CHECK(l.flash && l.fp8_lib == SPACE_FP8_LIB_TE);
    est_memory a, b;
    est_memory_of(&m, &l, &a);
    l.fp8_act_cache = SPACE_FP8_ACT_DEEPSEEK_V3;
    est_memory_of(&m, &l, &b);
    double rows = 2;                          /* top_k, EP 1 */
    double attn = 3 * 64 - 1.5 * 64;          /* every layer */
    double moe = rows * (5 - 2) * 128 + (5 - 2) * 64; /* each MoE layer */
    double rebuilt = 3 * (rows * 128 + 64);   /* one MoE layer's output */
    TP_CHECK_REL(a.activations - b.activations,
                 1024 * (4 * attn + 3 * moe - rebuilt), 1e-12);
    TP_CHECK(a.weights == b.weights);
    /* Its weights: one fp8 copy each, transposed for the GEMM that needs
     * the other layout while it runs (deepseek-ai/profile-data@4496024
     * train.json: a batched transpose of exactly one weight's fp8 tiles
     * before each such GEMM, no cached transpose): TE's two copies of
     * every layer GEMM weight (delayed scaling: the weight and its
     * transpose) against one, and at the backward the largest weight
     * transposed at once, here the 8 routed experts' FC1 (8 x 2 x 64 x
     * 128; the dense layer's gate-up 2 x 64 x 256, an attention's QKV
     * 64 x 192 are smaller). */
    TP_CHECK(!a.peak_in_step && !b.peak_in_step);
    double g_all = (ATTN + 3 * 64 * 256) + 3 * (ATTN + 3 * 64 * 64 + ROUTED);
    TP_CHECK_REL(a.fp8_weights, 2 * g_all, 1e-12);
    TP_CHECK_REL(b.fp8_weights, g_all + 8 * 2 * 64 * 128, 1e-12);
    TP_CHECK(a.fp8_transposes > 0 && b.fp8_transposes == 0);
    /* MLA (q_lora 32, kv_lora 16, 4 heads, v 16: q = 64) with the norms
     * and up projections recomputed: the attention output only */
    space_model d = toy();
    d.q_lora_rank = 32, d.kv_lora_rank = 16, d.qk_nope_head_dim = 16;
    d.qk_rope_head_dim = 8, d.v_head_dim = 16;
    space_layout t = layout(SPACE_FW_MEGATRON_CORE, HW_FP8, SPACE_ZERO_1);
    t.recompute = SPACE_RECOMPUTE_SELECTIVE;
    t.recompute_modules = SPACE_RC_LAYERNORM | SPACE_RC_MLA_UP_PROJ;
    est_memory_of(&d, &t, &a);
    t.fp8_act_cache = SPACE_FP8_ACT_DEEPSEEK_V3;
    est_memory_of(&d, &t, &b);
    TP_CHECK_REL(a.activations - b.activations, 1024 * 4 * attn, 1e-12);
    /* a 16-bit run keeps what it keeps */
    space_layout h = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    est_memory_of(&m, &h, &a);
    h.fp8_act_cache = SPACE_FP8_ACT_DEEPSEEK_V3;
    est_memory_of(&m, &h, &b);
    TP_CHECK(a.activations == b.activations && a.total == b.total);
}

/* MLA's up projections recomputed (--recompute-modules mla_up_proj):
 * Megatron-Core's Transformer Engine spec fuses the latents' norms into
 * the up projections (TELayerNormColumnParallelLinear), and the
 * recomputed block (MLASelfAttention.qkv_up_checkpoint, a
 * CheckpointWithoutOutput) keeps only its inputs, the latents before
 * their norms, which the norm's backward keeps anyway: the up
 * projections' input (the norm output, g bytes: 16-bit, or TE's fp8
 * copy) goes, and so do q, k and v per head (2 H (2 qk + v) / t).
 * NVIDIA/Megatron-LM@d98e8a64ddf3 gpt_layer_specs.py,
 * multi_latent_attention.py. */
static void test_mla_up_proj(void)
{
    space_model d = toy();
    d.q_lora_rank = 32, d.kv_lora_rank = 16, d.qk_nope_head_dim = 16;
    d.qk_rope_head_dim = 8, d.v_head_dim = 16;
    int dt[2] = {HW_BF16, HW_FP8};
    double g[2] = {2, 1};
    for (int i = 0; i < 2; i++) {
        space_layout l = layout(SPACE_FW_MEGATRON_CORE, (hw_dtype)dt[i],
                                SPACE_ZERO_1);
        l.recompute = SPACE_RECOMPUTE_SELECTIVE;
        l.recompute_modules = SPACE_RC_LAYERNORM;
        est_memory a, b;
        est_memory_of(&d, &l, &a);
        l.recompute_modules = SPACE_RC_LAYERNORM | SPACE_RC_MLA_UP_PROJ;
        est_memory_of(&d, &l, &b);
        double heads = 2.0 * 4 * (2 * (16 + 8) + 16); /* 2 H (2 qk + v), TP 1 */
        TP_CHECK_REL(a.activations - b.activations,
                     4 * 1024 * (g[i] * (32 + 16) + heads), 1e-12);
    }
}

/* Selective recomputation's modules (Megatron-Core --recompute-modules):
 * core_attn alone is the default; "mlp" keeps the dense MLP's input (the
 * residual, 2h) instead of its norm input and FC1 input (2h + 2h), FC1's
 * gated output (4f) and FC2's input (2f), and rebuilds one layer's MLP in
 * the backward; "moe_act" frees the routed rows' activation output (2
 * f_e a row, top_k rows a token at EP 1) and rebuilds nothing kept; "moe"
 * keeps the norm's input and the MoE layer's input, the norm's output (2h
 * each, as without it) and drops, rebuilding one MoE layer's in the
 * backward, the router scores (6E), the shared expert (4 f_s + 2 f_s) and
 * the routed rows (2h + 4 f_e + 2 f_e + 4 each). */
static void test_recompute_modules(void)
{
    space_model d = toy(), m = toy_moe();
    space_layout l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    l.recompute = SPACE_RECOMPUTE_SELECTIVE;
    est_memory a, b;
    est_memory_of(&d, &l, &a);
    l.recompute_modules = SPACE_RC_CORE_ATTN;
    est_memory_of(&d, &l, &b);
    TP_CHECK(a.activations == b.activations);
    TP_CHECK_INT((int)space_recompute_modules(&l), SPACE_RC_CORE_ATTN);
    l.recompute_modules = SPACE_RC_CORE_ATTN | SPACE_RC_MLP;
    est_memory_of(&d, &l, &b);
    double mlp = 2 * 64 + 6 * 256; /* a token */
    TP_CHECK_REL(a.activations - b.activations, (4 - 1) * 1024 * mlp, 1e-12);
    /* The MoE toy: one dense layer, three MoE layers. */
    l.recompute_modules = 0;
    est_memory_of(&m, &l, &a);
    l.recompute_modules = SPACE_RC_CORE_ATTN | SPACE_RC_MOE_ACT;
    est_memory_of(&m, &l, &b);
    TP_CHECK_REL(a.activations - b.activations, 3 * 1024 * (2 * 2 * 128.0),
                 1e-12);
    l.recompute_modules = SPACE_RC_CORE_ATTN | SPACE_RC_MOE;
    est_memory_of(&m, &l, &b);
    /* and the fused permutation's maps: int32 x (2E + 1) a token, an
     * int32 a received row (moe_permute_state) */
    double moe = 6 * 8 + 6 * 64 + 2 * (2 * 64 + 6 * 128 + 4)
                 + 4 * (2 * 8 + 1) + 4 * 2;
    TP_CHECK_REL(a.activations - b.activations, (3 - 1) * 1024 * moe, 1e-12);
    /* Not selective: no modules, whatever the field holds. */
    l.recompute = SPACE_RECOMPUTE_NONE;
    TP_CHECK_INT((int)space_recompute_modules(&l), 0);
}

/* ---- memory savers (issue 28; estimator/offload.c, docs/memory.md) ---- */

/* The precision-aware optimizer, bytes per parameter at DP 4 with the
 * distributed optimizer (NVIDIA/Megatron-LM@d98e8a64ddf3,
 * megatron/core/optimizer/__init__.py: FusedAdam with master_weights,
 * use_decoupled_grad, master_weight_dtype = --main-params-dtype and
 * store_param_remainders, OptimizerConfig's default True;
 * distrib_optimizer.py: no fp32 master and no fp32 gradient copy in
 * Megatron-Core then; transformer_engine/pytorch/optimizers/fused_adam.py
 * at NVIDIA/TransformerEngine@d0067d0da: an fp32 master of a bf16
 * parameter as its int16 remainder, fp32 unscaled copies of fp16/fp8
 * states, bf16 moments unscaled in the kernel when both are bf16). */
static void test_precision_aware(void)
{
    space_model m = toy();
    space_layout l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    l.pa_optimizer = 1;
    /* fp32 master as remainders (2), fp32 m and v (8): 10 / 4; the
     * gradient read in place: no step copy */
    TP_CHECK_REL(est_opt_gpu_bytes(&l), 10, 1e-15);
    check_bytes(&m, &l, 2, 4, 2.5, 0, 0, 0);
    /* DeepSeek-V3's: bf16 moments, 6 / 4, unscaled in the kernel */
    l.exp_avg_dtype = l.exp_avg_sq_dtype = SPACE_OPT_BF16;
    check_bytes(&m, &l, 2, 4, 1.5, 0, 0, 0);
    /* fp16 moments: 6 / 4, each unscaled to an fp32 copy in the step */
    l.exp_avg_dtype = l.exp_avg_sq_dtype = SPACE_OPT_FP16;
    check_bytes(&m, &l, 2, 4, 1.5, 2, 0, 0);
    /* fp8 moments: 4 / 4, the same fp32 copies */
    l.exp_avg_dtype = l.exp_avg_sq_dtype = SPACE_OPT_FP8;
    check_bytes(&m, &l, 2, 4, 1, 2, 0, 0);
    /* one bf16 moment alone is unscaled to fp32 like an fp16 one */
    l.exp_avg_dtype = SPACE_OPT_BF16, l.exp_avg_sq_dtype = SPACE_OPT_FP32;
    check_bytes(&m, &l, 2, 4, 2, 1, 0, 0);
    /* fp16 master weights (2), unscaled in the step (4) */
    l.exp_avg_dtype = SPACE_OPT_FP32;
    l.main_params_dtype = SPACE_OPT_FP16;
    check_bytes(&m, &l, 2, 4, 2.5, 1, 0, 0);
    /* bf16 main gradients: 2 bytes, read by FusedAdam as they are */
    l.main_params_dtype = SPACE_OPT_FP32;
    l.main_grads_dtype = SPACE_OPT_BF16;
    TP_CHECK_INT(space_grad_bytes(&l), 2);
    check_bytes(&m, &l, 2, 2, 2.5, 0, 0, 0);
    /* fp16 training: no remainders (the parameter is not bf16), 12 / 4 */
    l = layout(SPACE_FW_MEGATRON_CORE, HW_FP16, SPACE_ZERO_1);
    l.pa_optimizer = 1;
    l.grad_bytes = 4;
    check_bytes(&m, &l, 2, 4, 3, 0, 0, 0);
    /* fp8 with tensorwise scaling: Megatron-Core keeps its own fp32 master
     * (use_precision_aware_optimizer_no_fp8_or_ds_fp8 false): 4 + m + v */
    l = layout(SPACE_FW_MEGATRON_CORE, HW_FP8, SPACE_ZERO_1);
    l.fp8_recipe = SPACE_FP8_TENSORWISE;
    l.pa_optimizer = 1;
    l.exp_avg_dtype = l.exp_avg_sq_dtype = SPACE_OPT_BF16;
    check_bytes(&m, &l, 2, 4, 2, 0, 0, 2.0 * 4 * GEMM_W);
    /* ... and with delayed scaling FusedAdam holds it (remainders) */
    l.fp8_recipe = SPACE_FP8_DELAYED;
    check_bytes(&m, &l, 2, 4, 1.5, 0, 0, 2.0 * 4 * GEMM_W);
    /* The search's floor sees the same states. */
    double w, gr, opt;
    est_state_bytes(&l, 1, &w, &gr, &opt);
    TP_CHECK_REL(opt, 1.5, 1e-15);
}

/* Optimizer CPU offload (HybridDeviceOptimizer with
 * param_update_in_fp32, hybrid_optimizer.py at d98e8a6): the offloaded
 * share keeps nothing on the GPU and 16 bytes on the host (fp32 copy,
 * pinned fp32 gradient buffer, AdamW's m and v); the rest an fp32 copy
 * and fp32 m and v on the GPU (12). */
static void test_optimizer_offload(void)
{
    space_model m = toy();
    space_layout l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    l.pa_optimizer = 1;
    l.opt_offload = 1;
    check_bytes(&m, &l, 2, 4, 0, 0, 0, 0);
    est_memory r;
    est_memory_of(&m, &l, &r);
    TP_CHECK_REL(r.host, 16.0 * PARAMS / 4, 1e-12);
    l.opt_offload = 0.5;
    check_bytes(&m, &l, 2, 4, 1.5, 0, 0, 0);
    est_memory_of(&m, &l, &r);
    TP_CHECK_REL(r.host, 8.0 * PARAMS / 4, 1e-12);
    /* 16-bit gradients: grad.to(fp32) on the GPU share, the D2H copy's
     * conversion on the GPU for the rest: 4 / 4 in the step */
    l.main_grads_dtype = SPACE_OPT_BF16;
    check_bytes(&m, &l, 2, 2, 1.5, 1, 0, 0);
    /* the floor drops the offloaded states too */
    double w, gr, opt;
    est_state_bytes(&l, 1, &w, &gr, &opt);
    TP_CHECK_REL(opt, 1.5, 1e-15);
}

/* Transformer Engine's layer offload (DefaultOffloadSynchronizer,
 * transformer_engine/pytorch/cpu_offload.py at d0067d0da: "peak memory
 * usage of saving activations is (num_layers - num_offloaded_layers) *
 * T") and Megatron-Core's fine-grained offloading (the offloaded groups
 * leave, one layer's groups kept as the margin and one reloaded ahead;
 * fine_grained_activation_offload.py post_warmup_callback). */
static void test_activation_offload(void)
{
    space_model m = toy();
    space_layout l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    l.flash = SPACE_ATTN_FLASH;
    est_memory a, b;
    est_memory_of(&m, &l, &a);
    TP_CHECK(a.host == 0);
    double tok = 1024; /* mbs 1 x seq 1024 */
    for (int64_t n = 1; n <= 3; n++) {
        l.act_offload_layers = n;
        est_memory_of(&m, &l, &b);
        TP_CHECK_REL(a.activations - b.activations,
                     (double)n * tok * layer_token(0), 1e-12);
        TP_CHECK_REL(b.host, (double)n * tok * layer_token(0), 1e-12);
        TP_CHECK_REL(est_offload_layer_token(&m, &l, 0), layer_token(0),
                     1e-12);
    }
    /* fine-grained: qkv_linear (the fused norm's input 2h and the GEMM's
     * input 2h) and core_attn (q, k, v, flash's output and log-sum-exp)
     * of the 4 layers in flight (PP 1, one micro-batch), 2 of them kept */
    l.act_offload_layers = 0;
    l.offload_modules = SPACE_OFF_QKV_LINEAR | SPACE_OFF_CORE_ATTN;
    double o = 4 * 64 + 2 * (64 + 2 * 64) + 2 * 64 + 4 * 4;
    TP_CHECK_REL(est_offload_layer_token(&m, &l, 0), o, 1e-12);
    est_memory_of(&m, &l, &b);
    TP_CHECK_REL(a.activations - b.activations, (4 - 2) * tok * o, 1e-12);
    TP_CHECK_REL(b.host, (4 - 2) * tok * o, 1e-12);
    /* attn_proj adds nothing at 16 bits (its input is the attention's
     * output, already offloaded), its fp8 copy under fp8 */
    l.offload_modules |= SPACE_OFF_ATTN_PROJ;
    TP_CHECK_REL(est_offload_layer_token(&m, &l, 0), o, 1e-12);
    /* half the groups: 2 of the 4 layers' offloaded, both kept */
    l.offload_fraction = 0.5;
    TP_CHECK_REL(est_offload_layer_token(&m, &l, 0), o / 2, 1e-12);
    est_memory_of(&m, &l, &b);
    TP_CHECK_REL(b.activations, a.activations, 1e-12);
}

/* Micro-batch groups of N in the interleaved schedule: rank r holds
 * (pp - r - 1) x 2 + (v - 1) x N + 1 chunks (get_pp_rank_microbatches,
 * schedules.py at d98e8a6), N = PP by default. */
/* Activations in flight under the other schedules (est_schedule_chunks,
 * mem.c's sources): ZB-H1 as 1F1B (PP - r), looped as PyTorch's warm-up;
 * ZB-V 2 PP chunks of half a rank; DualPipe PP + 1; DualPipeV 2 PP + 1. */
static void test_schedule_inflight(void)
{
    space_layout l = {0};
    l.pp = 4, l.vpp = 1;
    l.pp_schedule = SPACE_PP_1F1B;
    TP_CHECK_INT(est_schedule_chunks(&l, 1, 3), 3);
    l.pp_schedule = SPACE_PP_ZB1P;
    TP_CHECK_INT(est_schedule_chunks(&l, 0, 0), 4);
    TP_CHECK_INT(est_schedule_chunks(&l, 3, 0), 1);
    l.vpp = 2; /* (v - 1) PP + (PP - 1 - r) + 1 */
    TP_CHECK_INT(est_schedule_chunks(&l, 0, 0), 8);
    l.pp_schedule = SPACE_PP_ZBV;
    TP_CHECK_INT(est_schedule_chunks(&l, 3, 0), 8);
    l.pp_schedule = SPACE_PP_DUALPIPEV;
    TP_CHECK_INT(est_schedule_chunks(&l, 0, 0), 9);
    l.vpp = 1, l.pp_schedule = SPACE_PP_DUALPIPE;
    TP_CHECK_INT(est_schedule_chunks(&l, 2, 0), 5);
    /* in a rank's bytes: ZB-V keeps 1F1B's first-rank activations on
     * every rank; the V puts stage 2 PP - 1 (the final norm, the head and
     * the loss) on rank 0 beside stage 0 (torchtitan
     * _get_pp_rank_to_stage_indices_mapping, style "v"), so rank 0 holds
     * the embedding, the head and the loss's activations, rank PP - 1
     * neither. */
    space_model m = toy();
    space_layout k = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    k.flash = SPACE_ATTN_FLASH;
    k.pp = 2, k.vpp = 1, k.dp = 1, k.gbs = 8;
    est_memory a, a1, b, b1;
    est_memory_stage(&m, &k, 0, &a);  /* 2 micro-batches of 2 layers */
    est_memory_stage(&m, &k, 1, &a1); /* 1 of 2 layers, the loss */
    double loss = a1.activations - a.activations / 2;
    TP_CHECK(loss > 0);
    TP_CHECK_REL(a.params, 2.0 * LAYER + 1024 * 64, 1e-12);
    const space_pp_schedule vs[2] = {SPACE_PP_ZBV, SPACE_PP_DUALPIPEV};
    for (int i = 0; i < 2; i++) {
        k.vpp = 2, k.pp_schedule = vs[i];
        est_memory_stage(&m, &k, 0, &b);
        est_memory_stage(&m, &k, 1, &b1);
        if (vs[i] == SPACE_PP_ZBV) {
            TP_CHECK_REL(b1.activations, a.activations, 1e-12);
            TP_CHECK_REL(b.activations, a.activations + loss, 1e-12);
        } else { /* 2 PP + 1 chunks, not 2 PP */
            TP_CHECK_REL(b1.activations, a.activations * 5 / 4, 1e-12);
            TP_CHECK_REL(b.activations, b1.activations + loss, 1e-12);
        }
        TP_CHECK_REL(b.params, 2.0 * LAYER + 2 * 1024 * 64 + 64, 1e-12);
        TP_CHECK_REL(b1.params, 2.0 * LAYER, 1e-12);
    }
    /* DualPipe: the rank's two stages' parameters */
    k.vpp = 1, k.pp_schedule = SPACE_PP_DUALPIPE;
    est_memory_stage(&m, &k, 0, &b);
    TP_CHECK(b.params > 1.5 * a.params);
}

/* DualPipe's parameters: rank r holds stage r and stage PP - 1 - r whole
 * (deepseek-ai/DualPipe@3da1bbea examples/example_dualpipe.py:
 * full_modules[rank] and full_modules[pp_size - 1 - rank]), each with its
 * own layers as the split gives them; both end ranks hold the embedding,
 * the head and the MTP module, which shares the embedding there
 * (DeepSeek-V3 report, arXiv 2412.19437 section 3.2.3). The MoE toy with
 * one MTP module, PP 4, EP 2: stage 0 the dense layer and the embedding,
 * stages 1 and 2 an MoE layer each, stage 3 an MoE layer, the MTP module,
 * the final norm and the head. */
static void test_dualpipe_params(void)
{
    space_model m = toy_moe();
    m.mtp_layers = 1;
    space_layout l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    l.pp = 4, l.dp = 2, l.gbs = 16, l.ep = 2, l.etp = 1;
    l.pp_schedule = SPACE_PP_DUALPIPE;
    double moe = ATTN + 12288 + 128 + 512;          /* 29312, experts apart */
    double mtp = moe + 2.0 * 64 * 64 + 2 * 64;      /* eh_proj, two norms */
    double ends = 1024.0 * 64 + 1024.0 * 64 + 64;   /* embedding, head, norm */
    double x = ROUTED / 2.0;                        /* a layer's, EP 2 */
    est_memory r0, r1, r2, r3;
    est_memory_stage(&m, &l, 0, &r0);
    est_memory_stage(&m, &l, 1, &r1);
    est_memory_stage(&m, &l, 2, &r2);
    est_memory_stage(&m, &l, 3, &r3);
    TP_CHECK_REL(r0.params, LAYER + moe + mtp + ends + 2 * x, 1e-12);
    TP_CHECK_REL(r0.expert_params, 2 * x, 1e-12);
    TP_CHECK_REL(r3.params, r0.params, 1e-12);
    TP_CHECK_REL(r3.expert_params, r0.expert_params, 1e-12);
    TP_CHECK_REL(r1.params, 2 * (moe + x), 1e-12);
    TP_CHECK_REL(r2.params, r1.params, 1e-12);
    /* fp8 under Transformer Engine: the copies of both stages' GEMMs */
    space_layout f = l;
    f.dtype = HW_FP8;
    est_memory a, b, d;
    est_memory_stage(&m, &f, 1, &d);
    f.pp_schedule = SPACE_PP_1F1B;
    est_memory_stage(&m, &f, 1, &a);
    est_memory_stage(&m, &f, 2, &b);
    TP_CHECK(a.fp8_weights > 0);
    TP_CHECK_REL(d.fp8_weights, a.fp8_weights + b.fp8_weights, 1e-12);
    /* Activations (dualpipe.py step, worked through for every rank of
     * PP 16 at 120 micro-batches): with h = min(r, PP - 1 - r), PP - h
     * micro-batches of stage h and h + 1 of stage PP - 1 - h in flight,
     * the loss and the MTP module on both end ranks. 1F1B's rank q holds
     * PP - q of its stage, and one layer's backward transient beside
     * them: so DualPipe's rank r holds what 1F1B's ranks h and
     * PP - 1 - h hold together, with one transient (rank 0: the dense
     * stage has none beside the MoE one). */
    est_memory o[4], q[4];
    for (int64_t r = 0; r < 4; r++) {
        l.pp_schedule = SPACE_PP_1F1B;
        est_memory_stage(&m, &l, r, &o[r]);
        l.pp_schedule = SPACE_PP_DUALPIPE;
        est_memory_stage(&m, &l, r, &q[r]);
    }
    TP_CHECK(o[3].activations > 0);
    TP_CHECK_REL(q[0].activations, o[0].activations + o[3].activations,
                 1e-12);
    TP_CHECK_REL(q[3].activations, q[0].activations, 1e-12);
    double per = o[1].activations - o[2].activations; /* an MoE stage's */
    TP_CHECK(per > 0);
    TP_CHECK_REL(q[1].activations, o[2].activations + 3 * per, 1e-12);
    TP_CHECK_REL(q[2].activations, q[1].activations, 1e-12);
}

static void test_microbatch_groups(void)
{
    space_model m = toy();
    space_layout l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    l.flash = SPACE_ATTN_FLASH;
    l.pp = 2, l.vpp = 2, l.dp = 1, l.gbs = 8; /* 8 micro-batches, 1 layer a chunk */
    est_memory a, b;
    est_memory_stage(&m, &l, 0, &a);
    l.mb_group = 2; /* = PP: the same */
    est_memory_stage(&m, &l, 0, &b);
    TP_CHECK(a.activations == b.activations);
    l.mb_group = 4; /* 2 + 4 + 1 = 7 chunks against 2 + 2 + 1 = 5 */
    est_memory_stage(&m, &l, 0, &b);
    TP_CHECK_REL(b.activations - a.activations, 2 * 1024 * layer_token(0),
                 1e-12);
    /* a layout of one chunk a rank ignores it */
    l.vpp = 1;
    est_memory_stage(&m, &l, 0, &a);
    l.mb_group = 0;
    est_memory_stage(&m, &l, 0, &b);
    TP_CHECK(a.activations == b.activations);
}

/* Megatron-FSDP's own buffers (mfsdp_buffers; NVIDIA/Megatron-LM@
 * d98e8a64ddf3 megatron/core/distributed/fsdp/src/megatron_fsdp/):
 * ZeRO-3 on the toy, one stage. The units are the four layers (LAYER
 * each); the embedding, head and final norm (2 x 65536 + 64) are outside
 * them and stay gathered. C = max(1e9, 2 u) prefetches every layer of so
 * small a model: at the loss the final norm's prefetch has gathered all
 * four units again (2 bytes each). Through the step the outside
 * parameters stay gathered. With --fsdp-double-buffer two persistent
 * unit-sized buffers for weights (2 bytes) and two for gradients (4),
 * and no re-gather from a non-unit. ZeRO-2 on a short sequence, where
 * the gradients outweigh the activations: the unsharded buckets of all
 * four units and the outside parameters' bucket (4 bytes) at the end of
 * the backward, the loss and the layers' activations freed. */
static void test_megatron_fsdp(void)
{
    space_model m = toy();
    const double nonunit = 2.0 * 1024 * 64 + 64;
    space_layout l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_3);
    l.flash = 1;
    est_memory a;
    est_memory_of(&m, &l, &a);
    double states = 18.0 * PARAMS / 4;
    double at_loss = 2 * nonunit + 2 * 4.0 * LAYER;
    TP_CHECK_REL(a.fsdp_buffers, at_loss, 1e-12);
    TP_CHECK_REL(a.alloc_backward, states + a.activations + at_loss, 1e-12);
    TP_CHECK_REL(a.alloc_step, states + 2 * nonunit, 1e-12);
    TP_CHECK_REL(a.weights, 2.0 * PARAMS / 4 + at_loss, 1e-12);
    l.fsdp_double_buffer = 1;
    est_memory_of(&m, &l, &a);
    double fixed = 2 * 2.0 * LAYER + 2 * 4.0 * LAYER;
    TP_CHECK_REL(a.fsdp_buffers, 2 * nonunit + fixed, 1e-12);
    TP_CHECK_REL(a.alloc_step, states + 2 * nonunit + fixed, 1e-12);
    /* ZeRO-2, 16 tokens: weights whole, no gather; the end of the
     * backward holds 4 units' fp32 buckets and the outside bucket */
    l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_2);
    l.flash = 1, l.seq = 16;
    est_memory_of(&m, &l, &a);
    double loss = 16 * 6.0 * 1024, layers = 16 * 4 * layer_token(0);
    double end = 4 * 4.0 * LAYER + 4 * nonunit - loss - layers;
    TP_CHECK_REL(a.fsdp_buffers, end, 1e-12);
    TP_CHECK_REL(a.alloc_backward,
                 2.0 * PARAMS + 16.0 * PARAMS / 4 + loss + layers + end, 1e-12);
    TP_CHECK_REL(a.grads, 4.0 * PARAMS / 4 + 4 * 4.0 * LAYER + 4 * nonunit,
                 1e-12);
    /* other frameworks' ZeRO-3 keep their own rules */
    l = layout(SPACE_FW_PYTORCH_FSDP, HW_BF16, SPACE_ZERO_3);
    est_memory_of(&m, &l, &a);
    TP_CHECK(a.fsdp_buffers == 0);
}

/* The MoE dispatcher (moe_permute_state, moe_buffers, est_memory_device;
 * NVIDIA/Megatron-LM@d98e8a64ddf3 moe/moe_utils.py, token_dispatcher.py,
 * fused_a2a.py; Transformer Engine permutation.py; deepseek-ai/DeepEP
 * v1.2.1 csrc/config.hpp, branch hybrid-ep@94a9f8f intranode.cu). The MoE
 * toy, TP 2 with SP, EP 4: a rank's token sends top_k x 1/2 = 1 row, its
 * experts receive 1 row a token (imbalance 1). Fused, the all-to-all's
 * permutation keeps an int32 x (2E + 1) map a token (/2 with SP) and the
 * chunk sort an int32 a row: 4 x 17 / 2 + 4 = 38 bytes a token and MoE
 * layer; unfused its int64 sorted indices a sent row: 8 x 2 / 2 = 8. The
 * all-gather dispatcher permutes every gathered token (ep x 1/2 = 2 a
 * token) over the 2 local experts: 4 x 5 x 2 = 40; its buffers are the
 * gathered tokens and, at the combine, FC2's rows beside them (3 x 2h a
 * token), against the all-to-all's 2 rows. */
static void test_moe_dispatch(void)
{
    space_model m = toy_moe();
    space_layout l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    l.tp = 2, l.sp = 1, l.dp = 4, l.gbs = 4, l.ep = 4, l.etp = 1;
    l.moe_imbalance = 1;
    TP_CHECK_INT(l.moe_permute_fusion, 1); /* trainplan's launches */
    est_memory a, b;
    est_memory_of(&m, &l, &a);
    l.moe_permute_fusion = 0;
    est_memory_of(&m, &l, &b);
    TP_CHECK_REL(a.activations - b.activations, 1024 * 3 * (38.0 - 8),
                 1e-12);
    l.moe_permute_fusion = 1;
    l.moe_dispatcher = SPACE_MOE_ALLGATHER;
    est_memory_of(&m, &l, &b);
    TP_CHECK_REL(b.activations - a.activations,
                 1024 * (3 * (40.0 - 38) + 2 * 64 * (3 - 2)), 1e-12);
    /* the flex dispatcher's fixed buffers, outside the allocator */
    hw_gpu g;
    hw_system y;
    node(&g, &y, "hopper", 8);
    est_ctx c = {&y, &g, NULL, NULL, 0, 0, NULL};
    l.moe_dispatcher = SPACE_MOE_FLEX;
    l.tp = 1, l.sp = 0, l.dp = 8, l.ep = 8, l.etp = 1;
    est_memory_of(&m, &l, &a);
    est_memory_device(&c, &m, &l, &a);
    /* DeepEP, 8 ranks: 10 channels x 8 peers x (256 tokens x (2h + 8 +
     * 128 x (8 + 4 + 4)) + 5 ints), to 128 bytes; barrier and pointers
     * 160 bytes; the 32 MiB workspace */
    double tok = 2 * 64 + 8 + 128 * 8 + 128 * 4 + 128 * 4;
    double nvl = 10 * 8 * 5 * 4 + 10 * 8 * 256 * tok;
    nvl = 128 * ceil(nvl / 128);
    TP_CHECK_REL(a.moe_comm, nvl + 160 + 32 * MIB, 1e-12);
    double before = a.total;
    /* 16 ranks (EP 8 x ETP 2): 288 tokens per NVLink channel, and the
     * RDMA buffer for 2 RDMA peers: dispatch's 128 received tokens made
     * a multiple of its 20 sent, 140, twice each field, 16 bytes more */
    l.tp = 2, l.sp = 1, l.dp = 4, l.etp = 2;
    est_memory_of(&m, &l, &a);
    est_memory_device(&c, &m, &l, &a);
    nvl = 128 * ceil((10 * 8 * 7 * 4 + 10 * 8 * 288 * tok) / 128);
    double rdma = 128 * ceil((10 * 2 * 18 * 2 * 4.0
                              + 10 * 2 * 140 * 2 * (tok + 16)) / 128);
    TP_CHECK_REL(a.moe_comm, nvl + 160 + 32 * MIB + rdma, 1e-12);
    /* HybridEP, 8 ranks of one NVLink domain: room for all 8 ranks'
     * 1024 tokens, 2h data, fp32 probabilities for the domain's 8 x 1
     * experts and an fp32 scale per 128 values each */
    l.tp = 1, l.sp = 0, l.dp = 8, l.etp = 1;
    l.moe_flex_backend = SPACE_MOE_FLEX_HYBRIDEP;
    est_memory_of(&m, &l, &a);
    est_memory_device(&c, &m, &l, &a);
    TP_CHECK_REL(a.moe_comm, 1024.0 * 8 * (2 * 64 + 4 * 8 + 4 * 0.5), 1e-12);
    /* they count in what must fit and in nvidia-smi's figure */
    l.moe_flex_backend = SPACE_MOE_FLEX_DEEPEP;
    est_memory_of(&m, &l, &a);
    est_memory_device(&c, &m, &l, &a);
    TP_CHECK_REL(a.total, before, 1e-12);
    TP_CHECK_REL(a.seen_device,
                 a.seen_reserved + a.context + a.nccl + a.moe_comm, 1e-12);
    l.moe_dispatcher = SPACE_MOE_ALLTOALL;
    est_memory_device(&c, &m, &l, &b);
    TP_CHECK(b.moe_comm == 0);
}

/* CUDA graphs (graph_pool_token; NVIDIA/Megatron-LM@d98e8a64ddf3
 * cuda_graphs.py, full_cuda_graph.py): the pool holds what the graphed
 * part keeps for the backward, and stays reserved through the optimizer
 * step. Per layer, the whole layer: the four layers' activations
 * (layer_token); attn only: less the MLP's 2h + 2h + 4f + 2f; the full
 * iteration: every activation with the loss's. */
static void test_cuda_graphs(void)
{
    space_model m = toy();
    space_layout l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    l.flash = 1;
    est_memory a, b;
    est_memory_of(&m, &l, &a);
    TP_CHECK(a.graph_pool == 0);
    l.cuda_graph = SPACE_CG_TE;
    est_memory_of(&m, &l, &b);
    TP_CHECK_REL(b.graph_pool, 1024 * 4 * layer_token(0), 1e-12);
    TP_CHECK_REL(b.step_peak - a.step_peak, b.graph_pool, 1e-12);
    TP_CHECK_REL(b.backward_peak, a.backward_peak, 1e-12);
    l.cuda_graph = SPACE_CG_LOCAL, l.cuda_graph_modules = SPACE_CGM_ATTN;
    est_memory_of(&m, &l, &b);
    double mlp = 2 * 64 + 2 * 64 + 4 * 256 + 2 * 256;
    TP_CHECK_REL(b.graph_pool, 1024 * 4 * (layer_token(0) - mlp), 1e-12);
    l.cuda_graph_modules = SPACE_CGM_MLP;
    est_memory_of(&m, &l, &b);
    TP_CHECK_REL(b.graph_pool, 1024 * 4 * mlp, 1e-12);
    l.cuda_graph = SPACE_CG_FULL_ITERATION, l.cuda_graph_modules = 0;
    est_memory_of(&m, &l, &b);
    TP_CHECK_REL(b.graph_pool, a.activations, 1e-12);
    /* the step then holds the states and the pool, the backward's
     * peak again (its activations are the pool's) */
    TP_CHECK_REL(b.step_peak, b.alloc_step + b.graph_pool, 1e-12);
    TP_CHECK_REL(b.step_peak, b.backward_peak, 1e-12);
    /* only Megatron-Core has them */
    l.framework = SPACE_FW_TORCHTITAN;
    est_memory_of(&m, &l, &b);
    TP_CHECK(b.graph_pool == 0);
}

/* Transformer Engine's fused cross-entropy (transformer_engine/pytorch/
 * triton/cross_entropy.py): before v2.18 the gradient is written into the
 * 16-bit logits in place (2 V a token kept, nothing more: 4 V less than
 * the unfused loss's fp32 softmax and logits); since
 * NVIDIA/TransformerEngine@01bbe3eea a new fp32 buffer (4 V kept) and, at
 * the backward, its 16-bit cast for the LM head (2 V): the unfused
 * peak. */
static void test_te_cross_entropy(void)
{
    space_model m = toy();
    space_layout l = layout(SPACE_FW_MEGATRON_CORE, HW_BF16, SPACE_ZERO_1);
    l.flash = 1;
    est_memory a, b;
    est_memory_of(&m, &l, &a);
    l.ce_te = SPACE_CE_TE_INPLACE;
    est_memory_of(&m, &l, &b);
    TP_CHECK_REL(a.activations - b.activations, 1024 * 4.0 * 1024, 1e-12);
    TP_CHECK_REL(b.activations, 1024 * (4 * layer_token(0) + 2.0 * 1024),
                 1e-12);
    l.ce_te = SPACE_CE_TE_FP32;
    est_memory_of(&m, &l, &b);
    TP_CHECK_REL(b.activations, a.activations, 1e-12);
    /* the native fused loss: a new fp32 buffer more (4 V) */
    l.ce_te = SPACE_CE_TE_NONE, l.ce_fusion = 1;
    est_memory_of(&m, &l, &b);
    TP_CHECK_REL(b.activations - a.activations, 1024 * 4.0 * 1024, 1e-12);
}

/* torchtitan before enable_gqa repeated grouped keys and values for SDPA,
 * and flash attention kept the copies: 2 x 2 bytes x (q - kv) widths more
 * per token and layer (measured 192 MiB on bench/data/memsample_h100's
 * w4k-L4-s4096-b1 pair); torchtitan's default today passes them
 * unrepeated; nothing for a model without GQA, nothing under op-level
 * checkpointing (the repeat is not among the ops it saves). */
static void test_gqa_repeat_kv(void)
{
    space_model m = toy();
    m.kv_heads = 1; /* q 64 wide, kv 16 */
    space_layout l = layout(SPACE_FW_TORCHTITAN, HW_BF16, SPACE_ZERO_3);
    TP_CHECK(l.gqa_repeat_kv == 0);
    est_memory a, b;
    est_memory_of(&m, &l, &a);
    l.gqa_repeat_kv = 1;
    est_memory_of(&m, &l, &b);
    TP_CHECK_REL(b.activations - a.activations,
                 4.0 * 1024 * 4 * (64 - 16), 1e-12);
    space_model mha = toy();
    l.gqa_repeat_kv = 0;
    est_memory_of(&mha, &l, &a);
    l.gqa_repeat_kv = 1;
    est_memory_of(&mha, &l, &b);
    TP_CHECK(b.activations == a.activations);
}

int main(void)
{
    TP_RUN(test_frameworks);
    TP_RUN(test_state_bytes);
    TP_RUN(test_peak);
    TP_RUN(test_fp8_activations);
    TP_RUN(test_fsdp2);
    TP_RUN(test_alloc_pools);
    TP_RUN(test_op_sac);
    TP_RUN(test_partial_recompute);
    TP_RUN(test_runtime);
    TP_RUN(test_fp8_caches);
    TP_RUN(test_mtp);
    TP_RUN(test_frameworks_2021);
    TP_RUN(test_moe_states);
    TP_RUN(test_moe_activations);
    TP_RUN(test_moe_fp8_weights);
    TP_RUN(test_recompute_modules);
    TP_RUN(test_mla_up_proj);
    TP_RUN(test_fp8_act_cache);
    TP_RUN(test_precision_aware);
    TP_RUN(test_optimizer_offload);
    TP_RUN(test_activation_offload);
    TP_RUN(test_microbatch_groups);
    TP_RUN(test_schedule_inflight);
    TP_RUN(test_dualpipe_params);
    TP_RUN(test_megatron_fsdp);
    TP_RUN(test_moe_dispatch);
    TP_RUN(test_cuda_graphs);
    TP_RUN(test_te_cross_entropy);
    TP_RUN(test_gqa_repeat_kv);
    return TP_TEST_EXIT();
}
