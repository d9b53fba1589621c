/*
 * launch_megatron.c - a layout as a Megatron-LM job: pretrain_gpt.py's
 * arguments as one line, as a launch script, as data (JSON), and the
 * flags two layouts launch differently. The job read back is
 * launch_megatron_read.c's (its flags in launch_megatron_flags.c).
 *
 *
 * Writes pretrain_gpt.py's arguments for Megatron-LM main at
 * NVIDIA/Megatron-LM@d98e8a64ddf3 (2026-08-22): the model (from the model
 * description), the layout exactly as the estimate assumed it (the
 * pipeline split in Megatron-LM's own options: --account-for-embedding/
 * loss-in-pipeline-split, --decoder-first/last-pipeline-num-layers, the
 * job's --pipeline-model-parallel-layout; split.c), the
 * precision (the fp8 recipe, NVFP4's --fp4-format), recomputation, ZeRO-2/3 through Megatron-FSDP,
 * the overlaps; as one line, or as a launch script: #SBATCH lines and srun
 * on Slurm, torchrun's c10d rendezvous on any other scheduler, with the
 * environment Megatron-LM asserts, hyperparameters and paths. What
 * Megatron-LM cannot express is a comment, never a silently different
 * flag. The checks Megatron-LM makes on these arguments are encoded in
 * tests/launch/megatron_rules.py (each citing arguments.py's validate_args
 * or the layer-layout code it mirrors).
 */
#include "launch.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hw.h"
#include "tp_base.h"

#ifndef TRAINPLAN_VERSION
#define TRAINPLAN_VERSION "0.0.0"
#endif

#define MEGATRON_TARGET                                                      \
    "Megatron-LM main, NVIDIA/Megatron-LM@d98e8a64ddf3 (2026-08-22)"

/* ---- the arguments of a layout ---------------------------------------- */

enum {
    G_MODEL,     /* the architecture */
    G_PARALLEL,  /* the layout */
    G_PRECISION, /* dtype, fp8, kernels, overlaps */
    G_BATCH,     /* batch and sequence */
    G_COUNT
};
static const char *const group_names[G_COUNT] = {"MODEL", "PARALLEL",
                                                 "PRECISION", "BATCH"};

enum { MG_MAX_ARGS = 112, MG_MAX_NOTES = 12, MG_MAX_ENV = 6 };

/* A variable of the environment the processes must run with: set to
 * value, or unset (value NULL). The one list the one-line launch (its
 * leading assignments, `env -u NAME` for an unset), launch_args (env and
 * unset) and the script (export, unset) are written from, so that they
 * cannot differ. */
typedef struct mg_env {
    const char *name;
    const char *value; /* NULL: unset */
    const char *why;   /* the script's comment above it */
} mg_env;

typedef struct mg_arg {
    int group;
    const char *flag;
    char value[1024]; /* "" for a flag without a value */
    int list;         /* value holds several words, separated by blanks
                         (an nargs='*' flag) */
} mg_arg;

typedef struct mg_args {
    mg_arg a[MG_MAX_ARGS];
    int n;
    char notes[MG_MAX_NOTES][320]; /* what Megatron-LM cannot express */
    int n_notes;
    int fsdp;                      /* Megatron-FSDP (ZeRO-2/3) */
    mg_env env[MG_MAX_ENV];        /* in the order they are written */
    int n_env;
} mg_args;

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void arg(mg_args *j, int group, const char *flag, const char *fmt, ...)
{
    if (j->n >= MG_MAX_ARGS) abort(); /* a fixed set: a bug, not input */
    mg_arg *a = &j->a[j->n++];
    a->group = group;
    a->flag = flag;
    a->value[0] = '\0';
    a->list = 0;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(a->value, sizeof a->value, fmt, ap);
        va_end(ap);
    }
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void note(mg_args *j, const char *fmt, ...)
{
    if (j->n_notes >= MG_MAX_NOTES) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->notes[j->n_notes++], sizeof j->notes[0], fmt, ap);
    va_end(ap);
}

static const char *fp8_recipe_flag(int r)
{
    switch (r) {
    case SPACE_FP8_DELAYED:
        return "delayed";
    case SPACE_FP8_TENSORWISE:
        return "tensorwise";
    case SPACE_FP8_BLOCKWISE:
        return "blockwise";
    case SPACE_FP8_MXFP8:
        return "mxfp8";
    default:
        return NULL;
    }
}

/* Megatron-Core's --moe-layer-freq for m's placement (space/model.c:
 * layer i is MoE when i >= first_dense_layers and (i - first) % freq ==
 * 0): an integer N where no layer leads dense (Megatron-Core's pattern
 * for N: i % N == 0, gpt_layer_specs.py get_gpt_decoder_block_spec),
 * else the list expression moe_freq_type evaluates (arguments.py), e.g.
 * "([0]*3+[1]*58)" for DeepSeek-V3. "" for every layer MoE (its
 * default 1). */
static void moe_freq_string(const space_model *m, char *buf, size_t cap)
{
    int64_t L = m->num_layers, k = m->first_dense_layers;
    int64_t f = m->moe_layer_freq > 0 ? m->moe_layer_freq : 1;
    buf[0] = '\0';
    if (k <= 0 && f == 1) return;
    if (k <= 0) {
        snprintf(buf, cap, "%lld", (long long)f);
        return;
    }
    int64_t rest = L - k, q = f > 0 ? rest / f : 0, r = rest - q * f;
    size_t n = (size_t)snprintf(buf, cap, "([0]*%lld", (long long)k);
    if (q > 0 && n < cap) {
        if (f == 1)
            n += (size_t)snprintf(buf + n, cap - n, "+[1]*%lld", (long long)q);
        else
            n += (size_t)snprintf(buf + n, cap - n, "+([1]+[0]*%lld)*%lld",
                                  (long long)(f - 1), (long long)q);
    }
    if (r > 0 && n < cap) {
        n += (size_t)snprintf(buf + n, cap - n, "+[1]");
        if (r > 1 && n < cap)
            n += (size_t)snprintf(buf + n, cap - n, "+[0]*%lld",
                                  (long long)(r - 1));
    }
    if (n < cap) snprintf(buf + n, cap - n, ")");
}

/* Mixture of experts: Megatron-Core's MoE flags (TransformerConfig's
 * moe_* fields and ModelParallelConfig's expert_* ones, each a flag of
 * the same name, arguments.py _add_network_size_args; --num-experts,
 * --moe-layer-freq, --moe-router-load-balancing-type and
 * --moe-aux-loss-coeff from _add_moe_args; NVIDIA/Megatron-LM@
 * d98e8a64ddf3). */
static void moe_args(mg_args *j, const space_model *m, const space_layout *l)
{
    if (m->num_experts <= 0) return;
    arg(j, G_MODEL, "--num-experts", "%lld", (long long)m->num_experts);
    arg(j, G_MODEL, "--moe-router-topk", "%lld", (long long)m->top_k);
    arg(j, G_MODEL, "--moe-ffn-hidden-size", "%lld",
        (long long)m->expert_ffn_hidden);
    /* TransformerConfig: the shared experts' total intermediate size,
     * "num_shared_experts * ffn_size_of_each_shared_expert" */
    if (m->shared_experts > 0) {
        arg(j, G_MODEL, "--moe-shared-expert-intermediate-size", "%lld",
            (long long)(m->shared_experts * m->shared_ffn_hidden));
        if (m->shared_expert_gate)
            arg(j, G_MODEL, "--moe-shared-expert-gate", NULL);
    }
    char freq[256];
    moe_freq_string(m, freq, sizeof freq);
    if (freq[0]) arg(j, G_MODEL, "--moe-layer-freq", "%s", freq);
    if (m->router_sigmoid) {
        arg(j, G_MODEL, "--moe-router-score-function", "sigmoid");
        /* aux-loss-free balancing by a per-expert bias (DeepSeek-V3,
         * arXiv 2412.19437 section 2.1.2; TransformerConfig: sigmoid or
         * sqrtsoftplus only), with its sequence-wise loss of weight 1e-4
         * (the paper's alpha) */
        arg(j, G_MODEL, "--moe-router-enable-expert-bias", NULL);
        arg(j, G_MODEL, "--moe-router-load-balancing-type", "seq_aux_loss");
        arg(j, G_MODEL, "--moe-aux-loss-coeff", "1e-4");
    } else {
        /* GShard/Switch auxiliary loss at 1e-2 (Switch Transformer, Fedus
         * et al. 2021, section 2.2: alpha = 10^-2) */
        arg(j, G_MODEL, "--moe-router-load-balancing-type", "aux_loss");
        arg(j, G_MODEL, "--moe-aux-loss-coeff", "1e-2");
        /* TransformerConfig.__post_init__: top-1 softmax routing needs
         * the softmax before the top-k */
        if (m->top_k == 1) arg(j, G_MODEL, "--moe-router-pre-softmax", NULL);
    }
    if (m->router_groups > 0) {
        arg(j, G_MODEL, "--moe-router-num-groups", "%lld",
            (long long)m->router_groups);
        arg(j, G_MODEL, "--moe-router-group-topk", "%lld",
            (long long)m->router_topk_groups);
    }
    if (m->capacity_factor > 0)
        arg(j, G_MODEL, "--moe-expert-capacity-factor", "%g",
            m->capacity_factor);
    if (m->router_bias)
        note(j, "the router's bias (gpt-oss) has no Megatron-Core flag: the "
                "same GEMM");
    arg(j, G_PARALLEL, "--expert-model-parallel-size", "%lld",
        (long long)space_layout_ep(l));
    arg(j, G_PARALLEL, "--expert-tensor-parallel-size", "%lld",
        (long long)space_layout_etp(l));
    /* always said: Megatron-Core's default is allgather, trainplan's
     * all-to-all */
    arg(j, G_PARALLEL, "--moe-token-dispatcher-type", "%s",
        space_moe_dispatcher_name(l));
    /* the experts as grouped GEMMs, permutation fused (TE >= 2.1;
     * TransformerConfig), as the estimate times them */
    arg(j, G_PRECISION, "--moe-grouped-gemm", NULL);
    if (l->moe_permute_fusion)
        arg(j, G_PRECISION, "--moe-permute-fusion", NULL);
    else
        note(j, "the token permutation unfused (its memory); the step time "
                "is estimated with the fused kernels");
    /* Transformer Engine's fused router (Megatron-Core v0.14, TE 2.6:
     * transformer_config.py moe_router_fusion), as the estimate times it */
    if (l->moe_router_fusion) arg(j, G_PRECISION, "--moe-router-fusion", NULL);
    /* the flex dispatcher's backend, said as Megatron-Core's default is
     * deepep (transformer_config.py moe_flex_dispatcher_backend) */
    if (l->moe_dispatcher == SPACE_MOE_FLEX)
        arg(j, G_PARALLEL, "--moe-flex-dispatcher-backend", "%s",
            space_moe_flex_backend_name(l));
    /* the router pads each expert's count to the fp8 alignment: no
     * padding copies (estimator/iter_moe.c fp8_expert_rows) */
    if (l->moe_router_pad)
        arg(j, G_PRECISION, "--moe-router-padding-for-quantization", NULL);
    /* The dispatch's overlaps (transformer_config.py: moe_shared_expert_
     * overlap; overlap_moe_expert_parallel_comm, with delay_wgrad_compute
     * splitting the experts' weight gradients out as the estimate
     * schedules them, est_moe_overlap_a2a in estimator/iter_moe.c). */
    if (l->moe_comm_overlap == SPACE_MOE_OVERLAP_SHARED)
        arg(j, G_PARALLEL, "--moe-shared-expert-overlap", NULL);
    if (l->moe_comm_overlap == SPACE_MOE_OVERLAP_A2A) {
        arg(j, G_PARALLEL, "--overlap-moe-expert-parallel-comm", NULL);
        arg(j, G_PARALLEL, "--delay-wgrad-compute", NULL);
    }
    if (m->mlp_bias && space_layout_etp(l) != 1)
        note(j, "biases in the experts need expert TP 1 in Megatron-Core "
                "(TransformerConfig: \"Bias in Moe is only supported when "
                "ETP==1\")");
}

/* Multi-head latent attention (DeepSeek-V2/V3): MLATransformerConfig's
 * fields, and the others of the model space.h holds (QK norm, MTP). */
static void mla_args(mg_args *j, const space_model *m)
{
    if (m->kv_lora_rank > 0) {
        arg(j, G_MODEL, "--multi-latent-attention", NULL);
        if (m->q_lora_rank > 0)
            arg(j, G_MODEL, "--q-lora-rank", "%lld", (long long)m->q_lora_rank);
        arg(j, G_MODEL, "--kv-lora-rank", "%lld", (long long)m->kv_lora_rank);
        arg(j, G_MODEL, "--qk-head-dim", "%lld",
            (long long)m->qk_nope_head_dim);
        arg(j, G_MODEL, "--qk-pos-emb-head-dim", "%lld",
            (long long)m->qk_rope_head_dim);
        arg(j, G_MODEL, "--v-head-dim", "%lld", (long long)m->v_head_dim);
    }
    if (m->qk_norm) arg(j, G_MODEL, "--qk-layernorm", NULL);
    if (m->mtp_layers > 0)
        arg(j, G_MODEL, "--mtp-num-layers", "%lld", (long long)m->mtp_layers);
}

static void env_set(mg_args *j, const char *name, const char *value,
                    const char *why)
{
    if (j->n_env >= MG_MAX_ENV) abort(); /* a fixed set: a bug, not input */
    j->env[j->n_env++] = (mg_env){name, value, why};
}

/* The GPU generation is before Blackwell: compute capability below 10,
 * what validate_args' get_device_arch_version() tests. hwdb's arch
 * names; an unknown one (NULL) counts as before, whose requirement is
 * harmless after. AMD's CDNA GPUs report major 9 under ROCm. */
static int before_blackwell(const char *arch)
{
    static const char *const later[] = {"blackwell", "rubin"};
    if (!arch) return 1;
    for (size_t i = 0; i < sizeof later / sizeof later[0]; i++)
        if (tp_streq_ci(arch, later[i])) return 0;
    return 1;
}

/* The environment Megatron-LM asserts or the estimate assumes
 * (NVIDIA/Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py
 * validate_args), in the order every form writes it. */
static void build_env(const launch_plan *c, mg_args *j)
{
    const space_layout *l = c->layout;
    if (j->fsdp)
        env_set(j, "CUDA_DEVICE_MAX_CONNECTIONS", NULL,
                "Megatron-FSDP asserts CUDA_DEVICE_MAX_CONNECTIONS is not 1 "
                "(validate_args)");
    else if ((l->tp > 1 || l->cp > 1) && before_blackwell(c->gpu_arch))
        /* beside --overlap-moe-expert-parallel-comm validate_args only
         * warns (the overlap would rather have more connections); 1 keeps
         * TP's collectives in order as the estimate assumes */
        env_set(j, "CUDA_DEVICE_MAX_CONNECTIONS", "1",
                l->moe_comm_overlap == SPACE_MOE_OVERLAP_A2A
                    ? "TP or CP > 1 before Blackwell: 1 orders TP's "
                      "collectives (validate_args warns beside the A2A "
                      "overlap)"
                    : "Megatron-LM asserts it with TP or CP > 1 before "
                      "Blackwell (validate_args)");
    /* PyTorch's default, unset, is off */
    if (l->alloc_expandable)
        env_set(j, "PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True",
                "the caching allocator as the estimate assumed it (its "
                "reserved bytes)");
    if (l->offload_modules)
        env_set(j, "NVTE_CPU_OFFLOAD_V1", "1",
                "validate_args asserts it for fine-grained activation "
                "offloading with Transformer Engine >= 2.10");
    if (l->alloc_expandable && l->cuda_graph == SPACE_CG_TE)
        env_set(j, "NCCL_GRAPH_REGISTER", "0",
                "Transformer Engine's CUDA graphs beside expandable "
                "segments (validate_args)");
}

static void build_args(const launch_plan *c, mg_args *j)
{
    const space_layout *l = c->layout;
    const space_model *m = c->model;
    memset(j, 0, sizeof *j);
    j->fsdp = l->zero >= SPACE_ZERO_2;

    /* The model (megatron/core/transformer/transformer_config.py and
     * arguments.py _add_network_size_args). */
    arg(j, G_MODEL, "--num-layers", "%lld", (long long)m->num_layers);
    arg(j, G_MODEL, "--hidden-size", "%lld", (long long)m->hidden);
    arg(j, G_MODEL, "--ffn-hidden-size", "%lld", (long long)m->ffn_hidden);
    arg(j, G_MODEL, "--num-attention-heads", "%lld", (long long)m->heads);
    if (m->kv_heads != m->heads) {
        arg(j, G_MODEL, "--group-query-attention", NULL);
        arg(j, G_MODEL, "--num-query-groups", "%lld", (long long)m->kv_heads);
    }
    if (m->head_dim > 0 && m->head_dim * m->heads != m->hidden)
        arg(j, G_MODEL, "--kv-channels", "%lld", (long long)m->head_dim);
    /* validate_args: max_position_embeddings >= seq_length */
    int64_t maxpos = m->max_position > l->seq ? m->max_position : l->seq;
    arg(j, G_MODEL, "--max-position-embeddings", "%lld", (long long)maxpos);
    static const char *const pos[SPACE_POS_COUNT] = {
        [SPACE_POS_LEARNED] = "learned_absolute", [SPACE_POS_ROPE] = "rope",
        [SPACE_POS_ALIBI] = "none", [SPACE_POS_NONE] = "none"};
    arg(j, G_MODEL, "--position-embedding-type", "%s", pos[m->pos]);
    if (m->pos == SPACE_POS_ALIBI)
        note(j, "ALiBi has no Megatron-Core flag: no position embedding, "
                "the same time and memory");
    /* RoPE on part of each head (GPT-NeoX 25 %) and its base; both
     * default to Megatron-LM's (1.0, 10000: arguments.py). --rotary-base
     * is an int there. */
    if (m->pos == SPACE_POS_ROPE && m->rotary_fraction > 0
        && m->rotary_fraction < 1)
        arg(j, G_MODEL, "--rotary-percent", "%g", m->rotary_fraction);
    if (m->pos == SPACE_POS_ROPE && m->rope_theta > 0
        && m->rope_theta != 10000) {
        if (m->rope_theta == floor(m->rope_theta) && m->rope_theta < 2e9)
            arg(j, G_MODEL, "--rotary-base", "%.0f", m->rope_theta);
        else
            note(j, "RoPE base %g: --rotary-base takes a whole number; "
                    "Megatron-LM's 10000 is used", m->rope_theta);
    }
    arg(j, G_MODEL, "--normalization", "%s",
        m->norm == SPACE_NORM_RMSNORM ? "RMSNorm" : "LayerNorm");
    if (m->act == SPACE_ACT_SWIGLU) arg(j, G_MODEL, "--swiglu", NULL);
    if (m->act == SPACE_ACT_SQUARED_RELU)
        arg(j, G_MODEL, "--squared-relu", NULL);
    if (m->act == SPACE_ACT_GEGLU) {
        arg(j, G_MODEL, "--quick-geglu", NULL);
        note(j, "GeGLU as Megatron-Core's quick GeGLU (sigmoid-approximated "
                "GELU gate): the same GEMMs");
    }
    if (m->act == SPACE_ACT_RELU)
        note(j, "ReLU has no Megatron-LM flag (GELU is its default): the "
                "same GEMMs");
    if (!m->tied_embeddings)
        arg(j, G_MODEL, "--untie-embeddings-and-output-weights", NULL);
    if (!m->qkv_bias && !m->out_bias && !m->mlp_bias) {
        arg(j, G_MODEL, "--disable-bias-linear", NULL);
    } else if (m->qkv_bias && !m->out_bias && !m->mlp_bias) {
        arg(j, G_MODEL, "--disable-bias-linear", NULL);
        arg(j, G_MODEL, "--add-qkv-bias", NULL);
    } else if (!(m->qkv_bias && m->out_bias && m->mlp_bias)) {
        note(j, "biases on some linear layers only: Megatron-LM has all "
                "(its default) or none (--disable-bias-linear, with "
                "--add-qkv-bias for the QKV ones)");
    }
    if (m->embed_norm)
        note(j, "the embedding norm (BLOOM) has no Megatron-Core flag");
    /* Local attention (TransformerConfig window_size, window_attn_skip_
     * freq; transformer/utils.py is_layer_window_attention: layer n,
     * 1-based, is global when n % freq == 0, as space.h's global_every).
     * A window of W tokens is (W - 1, 0): the token and W - 1 before it
     * (Megatron-Bridge v0.6.0 mistral_bridge.py, gpt_oss_bridge.py). */
    if (m->window > 0 && !m->window_chunked) {
        arg(j, G_MODEL, "--window-size", "%lld,0", (long long)(m->window - 1));
        if (m->global_every > 0)
            arg(j, G_MODEL, "--window-attn-skip-freq", "%lld",
                (long long)m->global_every);
        /* NVIDIA/TransformerEngine@d0067d0da6cb attention/
         * dot_product_attention/utils.py get_attention_backend */
        if (l->cp > 1 && l->cp_comm != SPACE_CP_ALLGATHER)
            note(j, "a sliding window with CP over p2p: Transformer "
                    "Engine's fused attention refuses it");
    } else if (m->window > 0) {
        note(j, "NOT EXPRESSIBLE: chunked local attention (Llama 4, chunks "
                "of %lld): Megatron-Core has sliding windows only; these "
                "arguments attend to the whole context", (long long)m->window);
    }
    /* gpt-oss's sink logit per head: Megatron-Core's learnable softmax
     * offset (TransformerConfig softmax_type; gpt_oss_bridge.py) */
    if (m->attn_sinks) arg(j, G_MODEL, "--softmax-type", "learnable");
    if (m->attn_softcap > 0 || m->final_softcap > 0)
        note(j, "logit soft-capping (Gemma 2) has no Megatron-Core flag");
    if (m->post_norms)
        note(j, "the norms after attention and FFN (Gemma 2/3) have no "
                "Megatron-Core flag: 2 norms a layer");
    if (m->qk_norm == 2)
        note(j, "QK norm over the whole projection (OLMo 2) written as "
                "Megatron-Core's per-head --qk-layernorm");
    if (m->parallel_attn_mlp)
        note(j, "parallel attention and MLP (GPT-J/NeoX) has no "
                "Megatron-Core flag: the same GEMMs in sequence");
    /* Megatron-LM's defaults are 0.1 (TransformerConfig): say 0 too */
    arg(j, G_MODEL, "--attention-dropout", "%g", m->attn_dropout);
    arg(j, G_MODEL, "--hidden-dropout", "%g", m->hidden_dropout);
    /* Read by NullTokenizer and TikTokenizer; beside a HuggingFace
     * tokenizer, which has its own, it says which vocabulary the estimate
     * used (megatron/core/tokenizers/utils/build_tokenizer.py). */
    arg(j, G_MODEL, "--vocab-size", "%lld", (long long)m->vocab);
    moe_args(j, m, l);
    mla_args(j, m);

    /* The layout. */
    int64_t v = l->vpp > 1 ? l->vpp : 1;
    arg(j, G_PARALLEL, "--tensor-model-parallel-size", "%lld",
        (long long)l->tp);
    arg(j, G_PARALLEL, "--pipeline-model-parallel-size", "%lld",
        (long long)l->pp);
    /* The split as the estimate has it (split.c), in Megatron-LM's own
     * options: the layout string where the job gave one (its VPP is the
     * layout's), else the embedding and loss accounted for, the first and
     * last stages' layers, and VPP as --num-virtual-stages-per-pipeline-
     * rank (validate_args asks for it with the uneven split). */
    int acc = l->pp_account > 0 ? l->pp_account : 0;
    if (l->pp_layout) {
        arg(j, G_PARALLEL, "--pipeline-model-parallel-layout", "%s",
            l->pp_layout->text);
    } else {
        if (v > 1)
            arg(j, G_PARALLEL, "--num-virtual-stages-per-pipeline-rank",
                "%lld", (long long)v);
        if (acc & SPACE_PP_EMBED)
            arg(j, G_PARALLEL, "--account-for-embedding-in-pipeline-split",
                NULL);
        if (acc & SPACE_PP_LOSS)
            arg(j, G_PARALLEL, "--account-for-loss-in-pipeline-split", NULL);
        if (l->pp_first > 0)
            arg(j, G_PARALLEL, "--decoder-first-pipeline-num-layers", "%lld",
                (long long)l->pp_first);
        if (l->pp_last > 0)
            arg(j, G_PARALLEL, "--decoder-last-pipeline-num-layers", "%lld",
                (long long)l->pp_last);
    }
    {
        char why[200];
        space_split sp;
        if (space_split_resolve(m, l, &sp, why, sizeof why) != SPACE_OK)
            note(j, "Megatron-Core refuses this pipeline split: %s", why);
    }
    if (l->cp > 1) {
        arg(j, G_PARALLEL, "--context-parallel-size", "%lld", (long long)l->cp);
        arg(j, G_PARALLEL, "--cp-comm-type", "%s",
            l->cp_comm == SPACE_CP_ALLGATHER ? "allgather" : "p2p");
    }
    if (l->sp && l->tp > 1) arg(j, G_PARALLEL, "--sequence-parallel", NULL);
    if (l->tp > 1 && l->tp_overlap == SPACE_TP_OVERLAP_ALL) {
        if (l->sp)
            arg(j, G_PARALLEL, "--tp-comm-overlap", NULL);
        else
            note(j, "TP overlap needs sequence parallelism in Megatron-LM "
                    "(validate_args): not set");
    }
    if (l->tp > 1 && l->tp_overlap == SPACE_TP_OVERLAP_NONE)
        note(j, "estimated without overlapped TP collectives (Megatron-LM "
                "2021); Megatron-Core overlaps the backward's");
    if (l->tp > 1 && (l->tp_overlap == SPACE_TP_OVERLAP_DTENSOR
                      || l->tp_overlap == SPACE_TP_OVERLAP_ASYNC))
        note(j, "estimated for PyTorch DTensor TP%s (torchtitan), not "
                "Megatron-LM's",
             l->tp_overlap == SPACE_TP_OVERLAP_ASYNC ? " with AsyncTP" : "");
    if (l->pp_scatter_gather && l->pp > 1 && !(l->sp && l->tp > 1))
        note(j, "estimated with Megatron-LM 2021's scatter/gather pipeline "
                "sends, which Megatron-Core does not have");
    if (l->recompute == SPACE_RECOMPUTE_SELECTIVE) {
        arg(j, G_PARALLEL, "--recompute-granularity", "selective");
        /* recompute_modules, nargs='*' (default ["core_attn"]) */
        unsigned k = space_recompute_modules(l);
        if (k != SPACE_RC_CORE_ATTN) {
            char names[160];
            space_rc_modules_str(k, " ", names, sizeof names);
            arg(j, G_PARALLEL, "--recompute-modules", "%s", names);
            j->a[j->n - 1].list = 1;
        }
    } else if (l->recompute == SPACE_RECOMPUTE_FULL) {
        /* TransformerConfig.__post_init__: full needs a method and N.
         * Block with N 0 (every layer of a chunk): the largest chunk. */
        int64_t n = l->recompute_layers;
        if (n <= 0 && l->recompute_method == SPACE_RECOMPUTE_BLOCK)
            n = (m->num_layers + l->pp * v - 1) / (l->pp * v);
        arg(j, G_PARALLEL, "--recompute-granularity", "full");
        arg(j, G_PARALLEL, "--recompute-method", "%s",
            space_recompute_method_names[l->recompute_method]);
        arg(j, G_PARALLEL, "--recompute-num-layers", "%lld",
            (long long)(n > 0 ? n : 1));
    } else if (l->recompute == SPACE_RECOMPUTE_SELECTIVE_OP) {
        note(j, "torchtitan's op-level selective checkpointing has no "
                "Megatron-LM switch: not set");
    }
    if (l->zero == SPACE_ZERO_1) {
        arg(j, G_PARALLEL, "--use-distributed-optimizer", NULL);
    } else if (j->fsdp) {
        /* Megatron-FSDP: ZeRO-2 and ZeRO-3 by its sharding strategy
         * (arguments.py _add_distributed_args; validate_args: the
         * fsdp_dtensor checkpoint format, CUDA_DEVICE_MAX_CONNECTIONS not
         * 1) */
        arg(j, G_PARALLEL, "--use-megatron-fsdp", NULL);
        arg(j, G_PARALLEL, "--data-parallel-sharding-strategy", "%s",
            l->zero == SPACE_ZERO_2 ? "optim_grads" : "optim_grads_params");
        if (l->fsdp_double_buffer)
            arg(j, G_PARALLEL, "--fsdp-double-buffer", NULL);
        /* validate_args: "Megatron-FSDP requires the `fsdp_dtensor`
         * checkpointing format" (asserted at start-up, with or without
         * --save) */
        arg(j, G_PARALLEL, "--ckpt-format", "fsdp_dtensor");
        /* Megatron-FSDP's gradient buffers take the parameters' dtype
         * ('auto') unless told (its MixedPrecisionPolicy ignores
         * --accumulate-allreduce-grads-in-fp32 since
         * NVIDIA/Megatron-LM@adfe9e11d9, 2026-07-01; mcore_fsdp_adapter.py
         * at d98e8a64ddf3) */
        if (space_grad_bytes(l) >= 4)
            arg(j, G_PRECISION, "--megatron-fsdp-main-grads-dtype", "fp32");
    }
    if (!l->no_dp_overlap) {
        arg(j, G_PARALLEL, "--overlap-grad-reduce", NULL);
        /* validate_args: with the distributed optimizer or FSDP only */
        if (l->zero >= SPACE_ZERO_1)
            arg(j, G_PARALLEL, "--overlap-param-gather", NULL);
    }
    if (l->pp > 1 && v > 1 && l->no_pp_overlap)
        arg(j, G_PARALLEL, "--no-overlap-p2p-communication", NULL);

    /* Precision and kernels. */
    arg(j, G_PRECISION, l->dtype == HW_FP16 ? "--fp16" : "--bf16", NULL);
    if (l->dtype == HW_FP16 && space_grad_bytes(l) >= 4)
        arg(j, G_PRECISION, "--accumulate-allreduce-grads-in-fp32", NULL);
    else if (l->dtype != HW_FP16 && space_grad_bytes(l) < 4
             && l->main_grads_dtype != SPACE_OPT_BF16)
        arg(j, G_PRECISION, "--grad-reduce-in-bf16", NULL);
    if (l->dtype == HW_FP8) {
        const char *r = fp8_recipe_flag(l->fp8_recipe);
        int e4m3 = l->fp8_recipe == SPACE_FP8_BLOCKWISE
                   || l->fp8_recipe == SPACE_FP8_MXFP8;
        if (!r) {
            r = "blockwise";
            e4m3 = 1;
            note(j, "estimated for torchao's rowwise fp8 scaling, which "
                    "Megatron-LM lacks: blockwise is its nearest recipe");
        }
        arg(j, G_PRECISION, "--fp8-format", "%s", e4m3 ? "e4m3" : "hybrid");
        arg(j, G_PRECISION, "--fp8-recipe", "%s", r);
        if (l->fp8_params) {
            if (l->zero >= SPACE_ZERO_1)
                arg(j, G_PRECISION, "--fp8-param-gather", NULL);
            else
                note(j, "fp8 parameters need the distributed optimizer or "
                        "FSDP in Megatron-LM (validate_args): not set");
        }
        if (l->fp8_lib == SPACE_FP8_LIB_TORCHAO)
            note(j, "estimated for torchao's fp8 (torchtitan), not "
                    "Transformer Engine's");
        /* DeepSeek-V3's framework's activation storage (estimator/
         * mem_act.c deepseek_cache) has no Megatron-LM flag */
        if (l->fp8_act_cache == SPACE_FP8_ACT_DEEPSEEK_V3)
            note(j, "NOT EXPRESSIBLE: the activations kept as DeepSeek-V3's "
                    "framework keeps them (attention output in E5M6, MoE "
                    "SwiGLU inputs in fp8, its output recomputed): "
                    "Megatron-LM keeps Transformer Engine's, more memory "
                    "than estimated");
    }
    /* fp8 attention: TransformerConfig.fp8_dot_product_attention has no
     * command-line flag (arguments.py lists it among the config fields "no
     * CLI argument exists for", NVIDIA/Megatron-LM@d98e8a64ddf3) */
    if (space_fp8_attention(l))
        note(j, "NOT EXPRESSIBLE: fp8 dot-product attention: Megatron-LM has "
                "no flag for TransformerConfig.fp8_dot_product_attention (set "
                "it in the model provider); these flags run 16-bit attention, "
                "where the estimate timed fp8");
    /* NVFP4: TransformerConfig.fp4 ('e2m1', --fp4-format) with fp4_recipe
     * nvfp4, Transformer Engine's NVFP4BlockScaling (fp4_utils.py). The
     * estimate keeps 16-bit weights with TE's NVFP4 copies, not
     * --fp4-param-gather's fp4 parameters. */
    if (l->dtype == HW_FP4) {
        arg(j, G_PRECISION, "--fp4-format", "e2m1");
        arg(j, G_PRECISION, "--fp4-recipe", "nvfp4");
    }
    arg(j, G_PRECISION, "--attention-backend", "%s", space_attn_names[l->flash]);
    if (l->ce_fusion || l->ce_te)
        arg(j, G_PRECISION, "--cross-entropy-loss-fusion", NULL);
    if (l->ce_te)
        note(j, "estimated with Transformer Engine's fused loss, which "
                "Megatron-LM refuses (validate_args, since "
                "NVIDIA/Megatron-LM@168cb15d70): the native one is set");
    if (l->cuda_graph) {
        /* TransformerConfig.cuda_graph_impl; the modules only for per-layer
         * graphs; full_iteration asserts --no-check-for-nan-in-loss-and-
         * grad (validate_args) */
        arg(j, G_PRECISION, "--cuda-graph-impl", "%s",
            space_cuda_graph_name(l));
        if (l->cuda_graph_modules
            && (l->cuda_graph == SPACE_CG_LOCAL || l->cuda_graph == SPACE_CG_TE)) {
            char names[96];
            space_cgm_str(l->cuda_graph_modules, " ", names, sizeof names);
            arg(j, G_PRECISION, "--cuda-graph-modules", "%s", names);
            j->a[j->n - 1].list = 1;
        }
        if (l->cuda_graph == SPACE_CG_FULL_ITERATION)
            arg(j, G_PRECISION, "--no-check-for-nan-in-loss-and-grad", NULL);
        note(j, "CUDA graphs: their memory pool and the host calls they "
                "save estimated (estimator/host.c)");
    }
    if (l->eager)
        note(j, "estimated for PyTorch eager kernels, not Megatron-Core's "
                "fused ones");
    if (l->param_fp32)
        note(j, "estimated for fp32 parameters stepped in place (FSDP2's "
                "mixed precision), not Megatron-LM's 16-bit weights with an "
                "fp32 master copy");
    if (l->n_docs > 0)
        note(j, "packed sequences: pass your packed dataset and "
                "--reset-attention-mask --reset-position-ids");

    /* Memory savers and micro-batch groups (issue 28; arguments.py,
     * transformer_config.py at d98e8a6). */
    if (l->pa_optimizer) {
        static const struct {
            const char *flag;
            size_t off;
        } dts[] = {{"--main-grads-dtype", offsetof(space_layout, main_grads_dtype)},
                   {"--main-params-dtype", offsetof(space_layout, main_params_dtype)},
                   {"--exp-avg-dtype", offsetof(space_layout, exp_avg_dtype)},
                   {"--exp-avg-sq-dtype", offsetof(space_layout, exp_avg_sq_dtype)}};
        arg(j, G_PRECISION, "--use-precision-aware-optimizer", NULL);
        for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
            int d;
            memcpy(&d, (const char *)l + dts[i].off, sizeof d);
            if (d != SPACE_OPT_FP32)
                arg(j, G_PRECISION, dts[i].flag, "%s", space_opt_dtype_name(d));
        }
    }
    if (l->opt_offload > 0) {
        arg(j, G_PRECISION, "--optimizer-cpu-offload", NULL);
        if (l->opt_offload < 1)
            arg(j, G_PRECISION, "--optimizer-offload-fraction", "%g",
                l->opt_offload);
        if (l->opt_offload_overlap)
            arg(j, G_PRECISION, "--overlap-cpu-optimizer-d2h-h2d", NULL);
    }
    if (l->act_offload_layers > 0)
        arg(j, G_PARALLEL, "--cpu-offloading-num-layers", "%lld",
            (long long)l->act_offload_layers);
    if (l->offload_modules) {
        char names[160];
        space_off_modules_str(l->offload_modules, " ", names, sizeof names);
        arg(j, G_PARALLEL, "--fine-grained-activation-offloading", NULL);
        arg(j, G_PARALLEL, "--offload-modules", "%s", names);
        j->a[j->n - 1].list = 1;
        if (l->offload_fraction > 0 && l->offload_fraction < 1)
            arg(j, G_PARALLEL, "--activation-offload-fraction", "%g",
                l->offload_fraction);
    }
    if (l->mb_group > 0 && l->vpp > 1)
        arg(j, G_PARALLEL, "--microbatch-group-size-per-virtual-pipeline-stage",
            "%lld", (long long)l->mb_group);
    /* Megatron-Core runs 1F1B and interleaving only (schedules.py
     * get_forward_backward_func, NVIDIA/Megatron-LM@d98e8a64ddf3) */
    if (l->pp_schedule != SPACE_PP_1F1B)
        note(j, "NOT EXPRESSIBLE: the %s pipeline schedule: Megatron-Core "
                "runs 1F1B and interleaved 1F1B only; these arguments run "
                "%s",
             space_pp_schedule_name(l), l->vpp > 1 ? "interleaved 1F1B"
                                                   : "1F1B");

    /* Batch. */
    arg(j, G_BATCH, "--seq-length", "%lld", (long long)l->seq);
    arg(j, G_BATCH, "--micro-batch-size", "%lld", (long long)l->mbs);
    arg(j, G_BATCH, "--global-batch-size", "%lld", (long long)l->gbs);
    build_env(c, j);
}

/* A value as one shell word: bare when safe, else single-quoted. */
static void put_word(launch_text *t, const char *s)
{
    int safe = *s != '\0';
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("-_.,/:=+@%", *p)) safe = 0;
    if (safe) {
        launch_text_put(t, "%s", s);
        return;
    }
    launch_text_put(t, "'");
    for (const char *p = s; *p; p++) {
        if (*p == '\'') launch_text_put(t, "'\\''");
        else launch_text_put(t, "%c", *p);
    }
    launch_text_put(t, "'");
}

/* The next blank-separated word of a list value at *p into w (as long
 * as an mg_arg value), *p moved past it; 0 at the end. */
static int next_word(const char **p, char w[1024])
{
    while (**p == ' ') (*p)++;
    size_t n = strcspn(*p, " ");
    if (n == 0) return 0;
    memcpy(w, *p, n);
    w[n] = '\0';
    *p += n;
    return 1;
}

/* An argument's value: one word, or a list's words each. */
static void put_value(launch_text *t, const mg_arg *a)
{
    if (!a->list) {
        put_word(t, a->value);
        return;
    }
    char w[sizeof a->value];
    const char *p = a->value;
    for (int first = 1; next_word(&p, w); first = 0) {
        if (!first) launch_text_put(t, " ");
        put_word(t, w);
    }
}

void launch_megatron(const launch_plan *c, launch_text *b)
{
    mg_args j;
    build_args(c, &j);
    int64_t g, nodes = launch_nodes(c, &g);
    /* bash's assignments before the command, then env(1) for what must
     * be unset: env passes the assignments on to torchrun */
    for (int i = 0; i < j.n_env; i++)
        if (j.env[i].value)
            launch_text_put(b, "%s=%s ", j.env[i].name, j.env[i].value);
    for (int i = 0, first = 1; i < j.n_env; i++)
        if (!j.env[i].value) {
            launch_text_put(b, "%s-u %s ", first ? "env " : "", j.env[i].name);
            first = 0;
        }
    launch_text_put(b, "torchrun --nnodes %lld --nproc-per-node %lld "
                    "--rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:29500\" "
                    "pretrain_gpt.py", (long long)nodes, (long long)g);
    for (int i = 0; i < j.n; i++) {
        launch_text_put(b, " %s", j.a[i].flag);
        if (j.a[i].value[0]) {
            launch_text_put(b, " ");
            put_value(b, &j.a[i]);
        }
    }
    for (int i = 0; i < j.n_notes; i++)
        launch_text_put(b, "%s%s", i ? "; " : "  # ", j.notes[i]);
}

cJSON *launch_megatron_json(const launch_plan *c)
{
    mg_args j;
    build_args(c, &j);
    cJSON *o = cJSON_CreateObject();
    cJSON *args = cJSON_AddArrayToObject(o, "args");
    for (int i = 0; i < j.n; i++) {
        const mg_arg *a = &j.a[i];
        cJSON_AddItemToArray(args, cJSON_CreateString(a->flag));
        if (!a->value[0]) continue;
        if (!a->list) {
            cJSON_AddItemToArray(args, cJSON_CreateString(a->value));
            continue;
        }
        /* the words put_value writes, each an element */
        char w[sizeof a->value];
        for (const char *p = a->value; next_word(&p, w);)
            cJSON_AddItemToArray(args, cJSON_CreateString(w));
    }
    cJSON *notes = cJSON_AddArrayToObject(o, "notes");
    for (int i = 0; i < j.n_notes; i++)
        cJSON_AddItemToArray(notes, cJSON_CreateString(j.notes[i]));
    cJSON *env = cJSON_AddObjectToObject(o, "env");
    cJSON *unset = cJSON_AddArrayToObject(o, "unset");
    for (int i = 0; i < j.n_env; i++) {
        if (j.env[i].value)
            cJSON_AddStringToObject(env, j.env[i].name, j.env[i].value);
        else
            cJSON_AddItemToArray(unset, cJSON_CreateString(j.env[i].name));
    }
    return o;
}

void launch_megatron_script(const launch_plan *c, launch_text *b)
{
    const space_layout *l = c->layout;
    const space_model *m = c->model;
    mg_args j;
    build_args(c, &j);
    int64_t g, nodes = launch_nodes(c, &g);
    char tag[96];
    space_layout_tag(l, c->gpus_per_node, tag, sizeof tag);
    launch_text_put(b, "#!/bin/bash\n");
    launch_text_put(b, "# %s on %s: %s, %lld node%s x %lld GPUs\n", m->name,
                 c->system ? c->system : "?", tag, (long long)nodes,
                 nodes == 1 ? "" : "s", (long long)g);
    launch_text_put(b, "# written by trainplan %s for %s (pretrain_gpt.py)\n",
                 TRAINPLAN_VERSION, MEGATRON_TARGET);
    int64_t iters = 0;
    if (c->tokens > 0)
        iters = (int64_t)ceil(c->tokens / ((double)l->gbs * (double)l->seq));
    if (c->iteration_s > 0) {
        launch_text_put(b, "# estimated %.4g s an iteration", c->iteration_s);
        if (iters > 0)
            launch_text_put(b, ", %lld iterations (%.3g tokens): %.3g days",
                         (long long)iters, c->tokens,
                         (double)iters * c->iteration_s / 86400);
        launch_text_put(b, "\n");
    }
    launch_text_put(
        b,
        "#\n"
        "# Slurm: sbatch [--account A] [--partition P] [--time T] THIS_FILE\n"
        "# Any other scheduler: run it once on each of the %lld node%s with "
        "MASTER_ADDR\n"
        "# set to the first node's address (torchrun's c10d rendezvous).\n"
        "# Edit only the paths below, or set them in the environment. The "
        "model flags\n"
        "# give the architecture as trainplan times it; what does not change "
        "the time\n"
        "# (RoPE scaling, norm epsilon, initialisation) is Megatron-LM's "
        "default unless\n"
        "# you add it, and the optimizer's hyperparameters are common "
        "pre-training values.\n",
        (long long)nodes, nodes == 1 ? "" : "s");
    for (int i = 0; i < j.n_notes; i++)
        launch_text_put(b, "# note: %s\n", j.notes[i]);
    launch_text_put(b,
                 "#SBATCH --job-name=trainplan-%s\n"
                 "#SBATCH --nodes=%lld\n"
                 "#SBATCH --ntasks-per-node=1\n"
                 "#SBATCH --gpus-per-node=%lld\n"
                 "#SBATCH --exclusive\n"
                 "set -euo pipefail\n\n",
                 m->name, (long long)nodes, (long long)g);
    launch_text_put(b,
                 "MEGATRON_LM=${MEGATRON_LM:-/path/to/Megatron-LM}\n"
                 "DATA_PATH=${DATA_PATH:-/path/to/dataset_text_document}\n"
                 "TOKENIZER=${TOKENIZER:-/path/to/tokenizer}\n"
                 "CHECKPOINTS=${CHECKPOINTS:-/path/to/checkpoints}\n"
                 "MASTER_PORT=${MASTER_PORT:-29500}\n\n");
    for (int i = 0; i < j.n_env; i++) {
        if (j.env[i].value)
            launch_text_put(b, "# %s\nexport %s=%s\n\n", j.env[i].why,
                         j.env[i].name, j.env[i].value);
        else
            launch_text_put(b, "# %s\nunset %s\n\n", j.env[i].why,
                         j.env[i].name);
    }
    for (int gi = 0; gi < G_COUNT; gi++) {
        launch_text_put(b, "%s=(\n", group_names[gi]);
        for (int i = 0; i < j.n; i++) {
            if (j.a[i].group != gi) continue;
            launch_text_put(b, "    %s", j.a[i].flag);
            if (j.a[i].value[0]) {
                launch_text_put(b, " ");
                put_value(b, &j.a[i]);
            }
            launch_text_put(b, "\n");
        }
        launch_text_put(b, ")\n");
    }
    launch_text_put(b, "TRAINING=(\n");
    if (iters > 0)
        launch_text_put(b, "    --train-iters %lld\n", (long long)iters);
    else
        launch_text_put(b, "    --train-iters 1000  # no --tokens given\n");
    launch_text_put(b,
                 "    --lr 3.0e-4 --min-lr 3.0e-5 --lr-decay-style cosine "
                 "--lr-warmup-fraction 0.01\n"
                 "    --weight-decay 0.1 --adam-beta1 0.9 --adam-beta2 0.95 "
                 "--clip-grad 1.0 --init-method-std 0.02\n"
                 "    --log-interval 10 --eval-interval 1000 --eval-iters 10\n"
                 ")\n"
                 "DATA=(\n"
                 "    --data-path \"$DATA_PATH\" --split 99,1,0\n"
                 "    --tokenizer-type HuggingFaceTokenizer --tokenizer-model "
                 "\"$TOKENIZER\"\n"
                 "    --save \"$CHECKPOINTS\" --load \"$CHECKPOINTS\" "
                 "--save-interval 1000%s\n"
                 ")\n\n",
                 /* Megatron-FSDP's format is among the arguments above */
                 j.fsdp ? "" : " --ckpt-format torch_dist");
    launch_text_put(
        b,
        "NODES=%lld\n"
        "GPUS_PER_NODE=%lld\n"
        "if [ -n \"${SLURM_JOB_ID:-}\" ]; then\n"
        "    MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | "
        "head -n 1)\n"
        "    RUN=(srun --nodes \"$NODES\" --ntasks-per-node 1 "
        "--kill-on-bad-exit=1)\n"
        "else\n"
        "    %s\n"
        "    RUN=()\n"
        "fi\n"
        "\"${RUN[@]}\" torchrun --nnodes \"$NODES\" --nproc-per-node "
        "\"$GPUS_PER_NODE\" \\\n"
        "    --rdzv-id \"${SLURM_JOB_ID:-trainplan}\" --rdzv-backend c10d "
        "--rdzv-endpoint \"$MASTER_ADDR:$MASTER_PORT\" \\\n"
        "    \"$MEGATRON_LM/pretrain_gpt.py\" \\\n"
        "    \"${MODEL[@]}\" \"${PARALLEL[@]}\" \"${PRECISION[@]}\" "
        "\"${BATCH[@]}\" \\\n"
        "    \"${TRAINING[@]}\" \"${DATA[@]}\"\n",
        (long long)nodes, (long long)g,
        nodes == 1 ? "MASTER_ADDR=${MASTER_ADDR:-localhost}"
                   : ": \"${MASTER_ADDR:?set MASTER_ADDR to the first node}\"");
}

/* The index of flag in x, or -1. */
static int find_flag(const mg_args *x, const char *flag)
{
    for (int i = 0; i < x->n; i++)
        if (strcmp(x->a[i].flag, flag) == 0) return i;
    return -1;
}

void launch_megatron_diff(const launch_plan *from, const launch_plan *to,
                              launch_text *out)
{
    mg_args *a = tp_xmalloc(sizeof *a), *b = tp_xmalloc(sizeof *b);
    build_args(from, a);
    build_args(to, b);
    int any = 0;
    for (int i = 0; i < a->n; i++) {
        int k = find_flag(b, a->a[i].flag);
        if (k < 0)
            launch_text_put(out, "%s- %s%s%s", any++ ? "\n" : "", a->a[i].flag,
                         a->a[i].value[0] ? " " : "", a->a[i].value);
        else if (strcmp(a->a[i].value, b->a[k].value) != 0)
            launch_text_put(out, "%s  %s %s -> %s", any++ ? "\n" : "",
                         a->a[i].flag, a->a[i].value, b->a[k].value);
    }
    for (int j = 0; j < b->n; j++)
        if (find_flag(a, b->a[j].flag) < 0)
            launch_text_put(out, "%s+ %s%s%s", any++ ? "\n" : "", b->a[j].flag,
                         b->a[j].value[0] ? " " : "", b->a[j].value);
    free(a);
    free(b);
}
