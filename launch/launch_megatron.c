/*
 * launch_megatron.c - a layout as a Megatron-LM job, and a Megatron-LM job
 * read back as a layout.
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
 *
 * Reads any such command line or script (a user's own too) through the
 * shell expander (launch_shell.c: the script's own variables expanded as
 * bash does, quotes, comments, continuations, arrays): the flags of the
 * command that runs pretrain_*.py (or, where none does, of any command
 * giving them); Megatron-LM's defaults where a flag is absent (dropout
 * 0.1, LayerNorm, GELU, biases, learned positions, no overlap of the
 * gradient reduction) and its rules where flags interact (validate_args).
 * A value the file does not give is refused where a flag read takes it
 * or where it could hold flags; a flag's value trainplan does not read
 * (--save $CHECKPOINTS) may be unknown. After an unread flag the next
 * word is taken for its value when it does not start with '-' or its
 * start is unknown: a store_true flag before an unknown $EXTRA hides it
 * (the reader does not know every flag's arity).
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
     * padding copies (estimator/iter.c fp8_expert_rows) */
    if (l->moe_router_pad)
        arg(j, G_PRECISION, "--moe-router-padding-for-quantization", NULL);
    /* The dispatch's overlaps (transformer_config.py: moe_shared_expert_
     * overlap; overlap_moe_expert_parallel_comm, with delay_wgrad_compute
     * splitting the experts' weight gradients out as the estimate
     * schedules them, moe_overlap_a2a in estimator/iter.c). */
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

/* ---- reading a Megatron-LM job back ----------------------------------- */

enum { MAX_WORDS = 8192 };

/* The words of the script's Megatron-LM command(s), after the shell
 * (launch_shell.c) expanded them. */
typedef struct words {
    const char **w;            /* the word's text */
    const launch_sh_word **sw;    /* the word as expanded: unknown parts */
    int *line;                 /* the line it starts on */
    unsigned char *arg;        /* an argument of the training script (after
                                  pretrain_*.py), where an unknown word
                                  could hide flags */
    int n, cap;
    int64_t sbatch_nodes, sbatch_gpn; /* from #SBATCH lines; 0 = unset */
} words;

static void words_add(words *ws, const launch_sh_word *w, int arg)
{
    if (ws->n == ws->cap) {
        ws->cap = ws->cap ? 2 * ws->cap : 256;
        ws->w = tp_xrealloc(ws->w, (size_t)ws->cap * sizeof *ws->w);
        ws->sw = tp_xrealloc(ws->sw, (size_t)ws->cap * sizeof *ws->sw);
        ws->line = tp_xrealloc(ws->line, (size_t)ws->cap * sizeof *ws->line);
        ws->arg = tp_xrealloc(ws->arg, (size_t)ws->cap);
    }
    ws->w[ws->n] = w->s;
    ws->sw[ws->n] = w;
    ws->arg[ws->n] = (unsigned char)arg;
    ws->line[ws->n++] = w->line;
}

static void words_free(words *ws)
{
    free(ws->w);
    free(ws->sw);
    free(ws->line);
    free(ws->arg);
}

/* "#SBATCH --nodes=4", "#SBATCH -N 4", "#SBATCH --gpus-per-node=8" (a
 * type prefix "h100:8" allowed). */
static void sbatch_line(words *ws, const char *s, const char *end)
{
    char buf[256];
    size_t n = (size_t)(end - s) < sizeof buf - 1 ? (size_t)(end - s)
                                                  : sizeof buf - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *tok[8];
    int nt = 0;
    for (char *p = strtok(buf, " \t=\r"); p && nt < 8; p = strtok(NULL, " \t=\r"))
        tok[nt++] = p;
    for (int i = 0; i + 1 < nt; i++) {
        const char *v = tok[i + 1];
        const char *colon = strrchr(v, ':');
        long long x;
        if (strcmp(tok[i], "--nodes") == 0 || strcmp(tok[i], "-N") == 0) {
            if (!tp_parse_int(v, 1, 1000000, &x)) ws->sbatch_nodes = x;
        } else if (strcmp(tok[i], "--gpus-per-node") == 0) {
            if (!tp_parse_int(colon ? colon + 1 : v, 1, 4096, &x))
                ws->sbatch_gpn = x;
        }
    }
}

static int flag_of(const char *name);

/* A word naming the training script: .../pretrain_*.py. */
static int is_script(const char *w)
{
    const char *b = tp_basename(w);
    size_t n = strlen(b);
    return strncmp(b, "pretrain_", 9) == 0 && n > 12
           && strcmp(b + n - 3, ".py") == 0;
}

/* A word that is a flag this reader reads (--flag or --flag=value). */
static int is_read_flag(const char *w)
{
    if (strncmp(w, "--", 2) != 0) return 0;
    char name[128];
    size_t nl = strcspn(w, "=");
    if (nl >= sizeof name) return 0;
    memcpy(name, w, nl);
    name[nl] = '\0';
    return flag_of(name) >= 0;
}

/* The words of the launch: the commands that run pretrain_*.py (torchrun
 * or python before it, its arguments after), or, where no command does,
 * every command that gives a flag this reader reads (a bare command line
 * of flags). #SBATCH lines are read from the text. */
static int job_words(const char *text, const char *file, const launch_sh *sh,
                     words *ws, tp_err *e)
{
    for (const char *p = text; *p;) {
        const char *eol = strchr(p, '\n');
        if (!eol) eol = p + strlen(p);
        if (strncmp(p, "#SBATCH", 7) == 0) sbatch_line(ws, p + 7, eol);
        p = *eol ? eol + 1 : eol;
    }
    int scripts = 0;
    for (int c = 0; c < sh->nc; c++)
        for (int i = 0; i < sh->c[c].n; i++) {
            const launch_sh_word *w = &sh->w[sh->c[c].first + i];
            if (!(w->flags & LAUNCH_SH_ASSIGN) && is_script(w->s)) scripts++;
        }
    for (int c = 0; c < sh->nc; c++) {
        const launch_sh_word *cw = &sh->w[sh->c[c].first];
        int n = sh->c[c].n, at = -1, flags = 0;
        for (int i = 0; i < n; i++) {
            if (cw[i].flags & LAUNCH_SH_ASSIGN) continue;
            if (at < 0 && is_script(cw[i].s)) at = i;
            if (is_read_flag(cw[i].s)) flags = 1;
        }
        if (scripts ? at < 0 : !flags) continue;
        for (int i = 0; i < n; i++)
            if (!(cw[i].flags & LAUNCH_SH_ASSIGN)) words_add(ws, &cw[i], i > at);
    }
    if (ws->n > MAX_WORDS)
        return tp_errf(e, TP_EDATA, "%s: more than %d words: not a launch "
                       "script", file, MAX_WORDS);
    return TP_OK;
}

/* The caching allocator's setting a script gives: the last assignment of
 * PYTORCH_CUDA_ALLOC_CONF or PYTORCH_ALLOC_CONF (PyTorch 2.9's name),
 * exported or before the command, or its unset; a value with
 * expandable_segments:True (also inside a ${VAR:-default}) is on,
 * another off, as PyTorch parses it (each assignment replaces the whole
 * value: c10/cuda/CUDAAllocatorConfig.cpp). -1 when the script says
 * nothing. */
static int alloc_conf_of(const launch_sh *sh)
{
    static const char *const vars[] = {"PYTORCH_CUDA_ALLOC_CONF",
                                       "PYTORCH_ALLOC_CONF"};
    int on = -1;
    for (int i = 0; i < sh->nw; i++)
        for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++) {
            const char *w = sh->w[i].s;
            size_t n = strlen(vars[k]);
            if ((sh->w[i].flags & LAUNCH_SH_ASSIGN) && strncmp(w, vars[k], n) == 0
                && w[n] == '=')
                on = strstr(w + n + 1, "expandable_segments:True") != NULL;
            else if (strcmp(w, vars[k]) == 0 && i > 0
                     && strcmp(sh->w[i - 1].s, "unset") == 0)
                on = 0;
        }
    return on;
}

/* The flags the reader understands, and whether each takes a value
 * (every other flag is skipped with the word after it when that word is
 * not a flag). Names as arguments.py at d98e8a6. */
typedef enum {
    F_NUM_LAYERS, F_HIDDEN, F_FFN, F_HEADS, F_GQA, F_QUERY_GROUPS,
    F_KV_CHANNELS, F_MAX_POS, F_POS_TYPE, F_NORM, F_SWIGLU, F_SQRELU,
    F_QGEGLU, F_UNTIE, F_NO_BIAS, F_QKV_BIAS, F_ATTN_DROP, F_HIDDEN_DROP,
    F_VOCAB, F_TOKENIZER, F_SEQ, F_TP, F_PP, F_CP, F_VSTAGES, F_VLAYERS,
    F_LAYOUT, F_FIRST_LAYERS, F_LAST_LAYERS, F_ACCOUNT_EMBED, F_ACCOUNT_LOSS,
    F_SP, F_MBS, F_GBS,
    F_RC_GRAN, F_RC_METHOD, F_RC_LAYERS, F_RC_ACTIVATIONS, F_RC_MODULES,
    F_DISTOPT,
    F_MFSDP, F_SHARDING, F_TORCH_FSDP2, F_BF16, F_FP16, F_FP8_FORMAT,
    F_FP8_RECIPE, F_FP8_PARAMS, F_FP4_FORMAT, F_FP4_RECIPE, F_FP4_PARAMS,
    F_TP_OVERLAP, F_CP_COMM, F_CE_FUSION,
    F_ATTN_BACKEND, F_FLASH_ATTN, F_OVERLAP_GRAD, F_OVERLAP_PARAM,
    F_NO_P2P_OVERLAP, F_GRAD_BF16, F_GRAD_FP32, F_TRAIN_ITERS, F_TRAIN_SAMPLES,
    F_NNODES,
    F_NPROC, F_EXPERTS, F_MOE_TOPK, F_MOE_FFN, F_MOE_SHARED, F_MOE_SHARED_GATE,
    F_MOE_FREQ, F_MOE_SCORE, F_MOE_GROUPS, F_MOE_GROUP_TOPK, F_MOE_CAPACITY,
    F_EP, F_ETP, F_MOE_DISPATCHER, F_MLA, F_Q_LORA, F_KV_LORA, F_QK_HEAD,
    F_QK_POS, F_V_HEAD, F_QK_NORM, F_MTP, F_MOE_SHARED_OVERLAP,
    F_MOE_A2A_OVERLAP, F_DELAY_WGRAD, F_MOE_FLEX_BACKEND, F_MOE_ROUTER_PAD,
    F_MOE_ROUTER_PAD_FP8,
    /* memory savers and micro-batch groups (issue 28) */
    F_PA_OPT, F_MAIN_GRADS, F_MAIN_PARAMS, F_EXP_AVG, F_EXP_AVG_SQ,
    F_OPT_OFFLOAD, F_OPT_OFFLOAD_FRAC, F_OPT_OFFLOAD_OVERLAP,
    F_TORCH_OPT_OFFLOAD, F_CPU_OFFLOAD_LAYERS, F_CPU_OFFLOADING,
    F_FG_OFFLOAD, F_OFFLOAD_MODULES, F_OFFLOAD_FRAC, F_MB_GROUP,
    F_MOE_PERMUTE, F_MOE_ROUTER, F_FSDP_DB, F_NCCL_UB,
    F_FSDP_MAXPOOL, F_FSDP_GRADS, F_CG_IMPL, F_CG_MODULES, F_CG_SCOPE,
    F_CG_ENABLE, F_CG_EXTERNAL, F_CE_IMPL,
    /* RoPE, local attention, sinks (issue 31) */
    F_ROTARY_PCT, F_ROTARY_BASE, F_WINDOW, F_WINDOW_SKIP, F_SOFTMAX_TYPE,
    F_COUNT
} mg_flag;

static const struct {
    const char *name;
    int value; /* takes one value */
} flags[F_COUNT] = {
    [F_NUM_LAYERS] = {"--num-layers", 1},
    [F_HIDDEN] = {"--hidden-size", 1},
    [F_FFN] = {"--ffn-hidden-size", 1},
    [F_HEADS] = {"--num-attention-heads", 1},
    [F_GQA] = {"--group-query-attention", 0},
    [F_QUERY_GROUPS] = {"--num-query-groups", 1},
    [F_KV_CHANNELS] = {"--kv-channels", 1},
    [F_MAX_POS] = {"--max-position-embeddings", 1},
    [F_POS_TYPE] = {"--position-embedding-type", 1},
    [F_NORM] = {"--normalization", 1},
    [F_SWIGLU] = {"--swiglu", 0},
    [F_SQRELU] = {"--squared-relu", 0},
    [F_QGEGLU] = {"--quick-geglu", 0},
    [F_UNTIE] = {"--untie-embeddings-and-output-weights", 0},
    [F_NO_BIAS] = {"--disable-bias-linear", 0},
    [F_QKV_BIAS] = {"--add-qkv-bias", 0},
    [F_ATTN_DROP] = {"--attention-dropout", 1},
    [F_HIDDEN_DROP] = {"--hidden-dropout", 1},
    [F_VOCAB] = {"--vocab-size", 1},
    [F_TOKENIZER] = {"--tokenizer-type", 1},
    [F_SEQ] = {"--seq-length", 1},
    [F_TP] = {"--tensor-model-parallel-size", 1},
    [F_PP] = {"--pipeline-model-parallel-size", 1},
    [F_CP] = {"--context-parallel-size", 1},
    [F_VSTAGES] = {"--num-virtual-stages-per-pipeline-rank", 1},
    [F_VLAYERS] = {"--num-layers-per-virtual-pipeline-stage", 1},
    [F_LAYOUT] = {"--pipeline-model-parallel-layout", 1},
    [F_FIRST_LAYERS] = {"--decoder-first-pipeline-num-layers", 1},
    [F_LAST_LAYERS] = {"--decoder-last-pipeline-num-layers", 1},
    [F_ACCOUNT_EMBED] = {"--account-for-embedding-in-pipeline-split", 0},
    [F_ACCOUNT_LOSS] = {"--account-for-loss-in-pipeline-split", 0},
    [F_SP] = {"--sequence-parallel", 0},
    [F_MBS] = {"--micro-batch-size", 1},
    [F_GBS] = {"--global-batch-size", 1},
    [F_RC_GRAN] = {"--recompute-granularity", 1},
    [F_RC_METHOD] = {"--recompute-method", 1},
    [F_RC_LAYERS] = {"--recompute-num-layers", 1},
    [F_RC_ACTIVATIONS] = {"--recompute-activations", 0},
    [F_RC_MODULES] = {"--recompute-modules", 1}, /* nargs='*' */
    [F_DISTOPT] = {"--use-distributed-optimizer", 0},
    [F_MFSDP] = {"--use-megatron-fsdp", 0},
    [F_SHARDING] = {"--data-parallel-sharding-strategy", 1},
    [F_TORCH_FSDP2] = {"--use-torch-fsdp2", 0},
    [F_BF16] = {"--bf16", 0},
    [F_FP16] = {"--fp16", 0},
    [F_FP8_FORMAT] = {"--fp8-format", 1},
    [F_FP8_RECIPE] = {"--fp8-recipe", 1},
    [F_FP8_PARAMS] = {"--fp8-param-gather", 0},
    [F_FP4_FORMAT] = {"--fp4-format", 1},
    [F_FP4_RECIPE] = {"--fp4-recipe", 1},
    [F_FP4_PARAMS] = {"--fp4-param-gather", 0},
    [F_TP_OVERLAP] = {"--tp-comm-overlap", 0},
    [F_CP_COMM] = {"--cp-comm-type", 1},
    [F_CE_FUSION] = {"--cross-entropy-loss-fusion", 0},
    [F_ATTN_BACKEND] = {"--attention-backend", 1},
    [F_FLASH_ATTN] = {"--use-flash-attn", 0},
    [F_OVERLAP_GRAD] = {"--overlap-grad-reduce", 0},
    [F_OVERLAP_PARAM] = {"--overlap-param-gather", 0},
    [F_NO_P2P_OVERLAP] = {"--no-overlap-p2p-communication", 0},
    [F_GRAD_BF16] = {"--grad-reduce-in-bf16", 0},
    [F_GRAD_FP32] = {"--accumulate-allreduce-grads-in-fp32", 0},
    [F_TRAIN_ITERS] = {"--train-iters", 1},
    [F_TRAIN_SAMPLES] = {"--train-samples", 1},
    /* torchrun's (--nproc_per_node is its older spelling) */
    [F_NNODES] = {"--nnodes", 1},
    [F_NPROC] = {"--nproc-per-node", 1},
    /* mixture of experts and MLA (issue 19) */
    [F_EXPERTS] = {"--num-experts", 1},
    [F_MOE_TOPK] = {"--moe-router-topk", 1},
    [F_MOE_FFN] = {"--moe-ffn-hidden-size", 1},
    [F_MOE_SHARED] = {"--moe-shared-expert-intermediate-size", 1},
    [F_MOE_SHARED_GATE] = {"--moe-shared-expert-gate", 0},
    [F_MOE_FREQ] = {"--moe-layer-freq", 1},
    [F_MOE_SCORE] = {"--moe-router-score-function", 1},
    [F_MOE_GROUPS] = {"--moe-router-num-groups", 1},
    [F_MOE_GROUP_TOPK] = {"--moe-router-group-topk", 1},
    [F_MOE_CAPACITY] = {"--moe-expert-capacity-factor", 1},
    [F_EP] = {"--expert-model-parallel-size", 1},
    [F_ETP] = {"--expert-tensor-parallel-size", 1},
    [F_MOE_DISPATCHER] = {"--moe-token-dispatcher-type", 1},
    [F_MLA] = {"--multi-latent-attention", 0},
    [F_Q_LORA] = {"--q-lora-rank", 1},
    [F_KV_LORA] = {"--kv-lora-rank", 1},
    [F_QK_HEAD] = {"--qk-head-dim", 1},
    [F_QK_POS] = {"--qk-pos-emb-head-dim", 1},
    [F_V_HEAD] = {"--v-head-dim", 1},
    [F_QK_NORM] = {"--qk-layernorm", 0},
    [F_MTP] = {"--mtp-num-layers", 1},
    [F_MOE_SHARED_OVERLAP] = {"--moe-shared-expert-overlap", 0},
    [F_MOE_A2A_OVERLAP] = {"--overlap-moe-expert-parallel-comm", 0},
    [F_DELAY_WGRAD] = {"--delay-wgrad-compute", 0},
    [F_MOE_FLEX_BACKEND] = {"--moe-flex-dispatcher-backend", 1},
    [F_MOE_ROUTER_PAD] = {"--moe-router-padding-for-quantization", 0},
    [F_MOE_ROUTER_PAD_FP8] = {"--moe-router-padding-for-fp8", 0},
    [F_PA_OPT] = {"--use-precision-aware-optimizer", 0},
    [F_MAIN_GRADS] = {"--main-grads-dtype", 1},
    [F_MAIN_PARAMS] = {"--main-params-dtype", 1},
    [F_EXP_AVG] = {"--exp-avg-dtype", 1},
    [F_EXP_AVG_SQ] = {"--exp-avg-sq-dtype", 1},
    [F_OPT_OFFLOAD] = {"--optimizer-cpu-offload", 0},
    [F_OPT_OFFLOAD_FRAC] = {"--optimizer-offload-fraction", 1},
    [F_OPT_OFFLOAD_OVERLAP] = {"--overlap-cpu-optimizer-d2h-h2d", 0},
    [F_TORCH_OPT_OFFLOAD] = {"--use-torch-optimizer-for-cpu-offload", 0},
    [F_CPU_OFFLOAD_LAYERS] = {"--cpu-offloading-num-layers", 1},
    [F_CPU_OFFLOADING] = {"--cpu-offloading", 0},
    [F_FG_OFFLOAD] = {"--fine-grained-activation-offloading", 0},
    [F_OFFLOAD_MODULES] = {"--offload-modules", 1}, /* nargs='+' */
    [F_OFFLOAD_FRAC] = {"--activation-offload-fraction", 1},
    [F_MB_GROUP] = {"--microbatch-group-size-per-virtual-pipeline-stage", 1},
    /* memory mechanisms (estimator/mem.c) */
    [F_MOE_PERMUTE] = {"--moe-permute-fusion", 0},
    [F_MOE_ROUTER] = {"--moe-router-fusion", 0},
    [F_FSDP_DB] = {"--fsdp-double-buffer", 0},
    [F_NCCL_UB] = {"--use-nccl-ub", 0},
    [F_FSDP_MAXPOOL] = {"--megatron-fsdp-max-pool-double-buffer", 0},
    [F_FSDP_GRADS] = {"--megatron-fsdp-main-grads-dtype", 1},
    [F_CG_IMPL] = {"--cuda-graph-impl", 1},
    [F_CG_MODULES] = {"--cuda-graph-modules", 1}, /* nargs='+' */
    [F_CG_SCOPE] = {"--cuda-graph-scope", 1},     /* its old name */
    [F_CG_ENABLE] = {"--enable-cuda-graph", 0},
    [F_CG_EXTERNAL] = {"--external-cuda-graph", 0},
    [F_CE_IMPL] = {"--cross-entropy-fusion-impl", 1},
    [F_ROTARY_PCT] = {"--rotary-percent", 1},
    [F_ROTARY_BASE] = {"--rotary-base", 1},
    [F_WINDOW] = {"--window-size", 1},
    [F_WINDOW_SKIP] = {"--window-attn-skip-freq", 1},
    [F_SOFTMAX_TYPE] = {"--softmax-type", 1},
};

typedef struct mg_seen {
    const char *v[F_COUNT]; /* the value, or "" for a flag; NULL: absent */
    int line[F_COUNT];
} mg_seen;

static int flag_of(const char *name)
{
    if (strcmp(name, "--nproc_per_node") == 0) return F_NPROC;
    for (int i = 0; i < F_COUNT; i++)
        if (strcmp(name, flags[i].name) == 0) return i;
    return -1;
}

/* A whole number in [lo, hi] from flag f, into *out; TP_EDATA naming the
 * file, line, flag and range otherwise. Absent: *out untouched. */
static int seen_int(const mg_seen *s, int f, const char *file, long long lo,
                    long long hi, int64_t *out, tp_err *e)
{
    if (!s->v[f]) return TP_OK;
    long long x;
    if (tp_parse_int(s->v[f], lo, hi, &x))
        return tp_errf(e, TP_EDATA,
                       "%s:%d: %s: expected an integer in [%lld, %lld], "
                       "found '%s'",
                       file, s->line[f], flags[f].name, lo, hi, s->v[f]);
    *out = x;
    return TP_OK;
}

static int seen_prob(const mg_seen *s, int f, const char *file, double *out,
                     tp_err *e)
{
    if (!s->v[f]) return TP_OK;
    double x;
    if (tp_parse_num(s->v[f], &x) || !(x >= 0 && x <= 1))
        return tp_errf(e, TP_EDATA,
                       "%s:%d: %s: expected a probability in [0, 1], found "
                       "'%s'",
                       file, s->line[f], flags[f].name, s->v[f]);
    *out = x;
    return TP_OK;
}

/* s->v[f] is one of names[0..n-1]: its index, else -1 with TP_EDATA. */
static int seen_choice(const mg_seen *s, int f, const char *file,
                       const char *const *names, int n, tp_err *e)
{
    for (int i = 0; i < n; i++)
        if (names[i] && strcmp(s->v[f], names[i]) == 0) return i;
    char list[256] = "";
    size_t len = 0;
    for (int i = 0; i < n && len < sizeof list; i++)
        if (names[i])
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                                    len ? ", " : "", names[i]);
    tp_errf(e, TP_EDATA, "%s:%d: %s: expected %s (what trainplan models), "
            "found '%s'", file, s->line[f], flags[f].name, list, s->v[f]);
    return -1;
}

/* The MoE and MLA flags into m, with Megatron-LM's defaults where absent
 * (NVIDIA/Megatron-LM@d98e8a64ddf3: TransformerConfig moe_router_topk 2,
 * softmax scores, dropless; validate_args: moe_ffn_hidden_size =
 * ffn_hidden_size; arguments.py's MLA flags: no query compression,
 * --kv-lora-rank 32, --qk-head-dim 128, --qk-pos-emb-head-dim 64,
 * --v-head-dim 128). */
static int seen_num(const mg_seen *s, int f, const char *file, double lo,
                    double hi, double *out, tp_err *e)
{
    if (!s->v[f]) return TP_OK;
    double x;
    if (tp_parse_num(s->v[f], &x) || !(x >= lo && x <= hi))
        return tp_errf(e, TP_EDATA,
                       "%s:%d: %s: expected a number in [%g, %g], found '%s'",
                       file, s->line[f], flags[f].name, lo, hi, s->v[f]);
    *out = x;
    return TP_OK;
}

static int read_moe_freq(const char *v, const char *file, int line,
                         space_model *m, tp_err *e);

/* RoPE's share and base, the local-attention window and its period, and
 * the softmax's sinks into m, Megatron-LM's defaults where absent
 * (arguments.py: --rotary-percent 1.0, --rotary-base 10000; no window;
 * TransformerConfig softmax_type vanilla). m->pos is already read. */
static int read_attention_kind(const mg_seen *s, const char *file,
                               space_model *m, tp_err *e)
{
    int rc = seen_num(s, F_ROTARY_PCT, file, 1e-6, 1, &m->rotary_fraction, e);
    if (m->rotary_fraction >= 1) m->rotary_fraction = 0; /* all */
    if (m->pos == SPACE_POS_ROPE) m->rope_theta = 10000;
    if (!rc) rc = seen_num(s, F_ROTARY_BASE, file, 1, 1e12, &m->rope_theta, e);
    if (m->pos != SPACE_POS_ROPE) m->rope_theta = m->rotary_fraction = 0;
    if (!rc && s->v[F_WINDOW]) {
        /* tuple_type: "(L,R)" or "L,R"; (-1, -1) or (-1, 0): no window */
        const char *v = s->v[F_WINDOW];
        long long left, right;
        char tail;
        if (sscanf(v, " ( %lld , %lld ) %c", &left, &right, &tail) != 2
            && sscanf(v, " %lld , %lld %c", &left, &right, &tail) != 2)
            return tp_errf(e, TP_EDATA, "%s:%d: --window-size: expected "
                           "LEFT,RIGHT (two integers), found '%s'",
                           file, s->line[F_WINDOW], v);
        if (left >= 0 && right != 0)
            return tp_errf(e, TP_EDATA, "%s:%d: --window-size %s: a window "
                           "looking %lld tokens ahead is not a causal "
                           "model's; expected RIGHT 0", file,
                           s->line[F_WINDOW], v, right);
        if (left >= 100000000)
            return tp_errf(e, TP_EDATA, "%s:%d: --window-size: LEFT %lld "
                           "above 99999999", file, s->line[F_WINDOW], left);
        m->window = left >= 0 ? left + 1 : 0;
        m->window_chunked = 0;
    }
    /* a pattern list ("[1,1,0]") is not read: an integer period only */
    if (!rc && m->window > 0)
        rc = seen_int(s, F_WINDOW_SKIP, file, 1, 100000, &m->global_every, e);
    if (!rc && s->v[F_SOFTMAX_TYPE]) {
        static const char *const names[2] = {"vanilla", "learnable"};
        int k = seen_choice(s, F_SOFTMAX_TYPE, file, names, 2, e);
        if (k < 0) rc = TP_EDATA;
        else m->attn_sinks = k;
    }
    return rc;
}

static int read_moe_mla(const mg_seen *s, const char *file, space_model *m,
                        tp_err *e)
{
    int rc = TP_OK;
    if (s->v[F_EXPERTS]) {
        rc = seen_int(s, F_EXPERTS, file, 1, 1000000, &m->num_experts, e);
        m->top_k = 2;
        m->expert_ffn_hidden = m->ffn_hidden;
        if (!rc) rc = seen_int(s, F_MOE_TOPK, file, 1, 1000000, &m->top_k, e);
        if (!rc)
            rc = seen_int(s, F_MOE_FFN, file, 1, 10000000,
                          &m->expert_ffn_hidden, e);
        if (!rc && s->v[F_MOE_SHARED]) {
            /* one shared expert of the total size: the same GEMMs */
            m->shared_experts = 1;
            rc = seen_int(s, F_MOE_SHARED, file, 1, 10000000,
                          &m->shared_ffn_hidden, e);
            m->shared_expert_gate = s->v[F_MOE_SHARED_GATE] != NULL;
        }
        if (!rc && s->v[F_MOE_FREQ])
            rc = read_moe_freq(s->v[F_MOE_FREQ], file, s->line[F_MOE_FREQ], m,
                               e);
        if (!rc && s->v[F_MOE_SCORE]) {
            static const char *const names[2] = {"softmax", "sigmoid"};
            int k = seen_choice(s, F_MOE_SCORE, file, names, 2, e);
            if (k < 0) rc = TP_EDATA;
            else m->router_sigmoid = k;
        }
        if (!rc) rc = seen_int(s, F_MOE_GROUPS, file, 1, 1000000,
                               &m->router_groups, e);
        if (!rc) rc = seen_int(s, F_MOE_GROUP_TOPK, file, 1, 1000000,
                               &m->router_topk_groups, e);
        if (!rc)
            rc = seen_num(s, F_MOE_CAPACITY, file, 0, 1e6,
                          &m->capacity_factor, e);
    } else {
        static const int moe_only[] = {F_MOE_TOPK, F_MOE_FFN, F_MOE_SHARED,
                                       F_MOE_FREQ, F_EP, F_ETP};
        for (size_t i = 0; i < sizeof moe_only / sizeof moe_only[0]; i++)
            if (s->v[moe_only[i]]
                && !(moe_only[i] == F_EP && strcmp(s->v[F_EP], "1") == 0)
                && moe_only[i] != F_ETP)
                return tp_errf(e, TP_EDATA,
                               "%s:%d: %s without --num-experts: expected "
                               "it with a mixture of experts only",
                               file, s->line[moe_only[i]],
                               flags[moe_only[i]].name);
    }
    if (!rc && s->v[F_MLA]) {
        m->q_lora_rank = 0, m->kv_lora_rank = 32;
        m->qk_nope_head_dim = 128, m->qk_rope_head_dim = 64;
        m->v_head_dim = 128;
        rc = seen_int(s, F_Q_LORA, file, 1, 1000000, &m->q_lora_rank, e);
        if (!rc) rc = seen_int(s, F_KV_LORA, file, 1, 1000000, &m->kv_lora_rank, e);
        if (!rc) rc = seen_int(s, F_QK_HEAD, file, 1, 100000, &m->qk_nope_head_dim, e);
        if (!rc) rc = seen_int(s, F_QK_POS, file, 1, 100000, &m->qk_rope_head_dim, e);
        if (!rc) rc = seen_int(s, F_V_HEAD, file, 1, 100000, &m->v_head_dim, e);
    }
    m->qk_norm = s->v[F_QK_NORM] != NULL;
    if (!rc) rc = seen_int(s, F_MTP, file, 0, 1000, &m->mtp_layers, e);
    return rc;
}

/* One term of a --moe-layer-freq list expression (moe_freq_type's
 * Python: lists of 0 and 1, '+' joining them, '*N' repeating, parentheses)
 * appended to pat[*n] (at most cap); *p advances. 0, or -1 on a syntax
 * error or a pattern longer than cap. */
static int freq_sum(const char **p, int8_t *pat, int64_t *n, int64_t cap);
static int freq_term(const char **p, int8_t *pat, int64_t *n, int64_t cap)
{
    int64_t start = *n;
    while (**p == ' ') (*p)++;
    if (**p == '(') {
        (*p)++;
        if (freq_sum(p, pat, n, cap)) return -1;
        while (**p == ' ') (*p)++;
        if (**p != ')') return -1;
        (*p)++;
    } else if (**p == '[') {
        (*p)++;
        for (;;) {
            while (**p == ' ') (*p)++;
            if (**p == ']') break;
            if ((**p != '0' && **p != '1') || *n >= cap) return -1;
            pat[(*n)++] = (int8_t)(**p - '0');
            (*p)++;
            while (**p == ' ') (*p)++;
            if (**p == ',') (*p)++;
            else if (**p != ']') return -1;
        }
        (*p)++;
    } else {
        return -1;
    }
    while (**p == ' ') (*p)++;
    while (**p == '*') {
        (*p)++;
        while (**p == ' ') (*p)++;
        long long k = 0;
        if (!isdigit((unsigned char)**p)) return -1;
        while (isdigit((unsigned char)**p)) {
            k = k * 10 + (**p - '0');
            if (k > cap) return -1;
            (*p)++;
        }
        int64_t len = *n - start;
        if (k == 0) *n = start;
        for (long long r = 1; r < k; r++) {
            if (*n + len > cap) return -1;
            memcpy(pat + *n, pat + start, (size_t)len);
            *n += len;
        }
        while (**p == ' ') (*p)++;
    }
    return 0;
}

static int freq_sum(const char **p, int8_t *pat, int64_t *n, int64_t cap)
{
    if (freq_term(p, pat, n, cap)) return -1;
    for (;;) {
        while (**p == ' ') (*p)++;
        if (**p != '+') return 0;
        (*p)++;
        if (freq_term(p, pat, n, cap)) return -1;
    }
}

/* --moe-layer-freq's value into m's first_dense_layers and moe_layer_freq:
 * an integer N (layer i MoE when i % N == 0), or a list expression whose
 * pattern must be trainplan's placement (k dense layers, then one MoE
 * layer every f). TP_EDATA naming the file, line and value otherwise. */
static int read_moe_freq(const char *v, const char *file, int line,
                         space_model *m, tp_err *e)
{
    long long f;
    if (!strchr(v, '[')) {
        if (tp_parse_int(v, 1, 100000, &f))
            return tp_errf(e, TP_EDATA,
                           "%s:%d: --moe-layer-freq: expected an integer in "
                           "[1, 100000] or a list expression such as "
                           "'([0]*3+[1]*58)', found '%s'", file, line, v);
        m->first_dense_layers = 0;
        m->moe_layer_freq = f;
        return TP_OK;
    }
    int64_t L = m->num_layers, n = 0;
    int8_t *pat = tp_xmalloc((size_t)L + 1);
    const char *p = v;
    int bad = freq_sum(&p, pat, &n, L + 1);
    while (!bad && *p == ' ') p++;
    if (bad || *p || n != L) {
        free(pat);
        return tp_errf(e, TP_EDATA,
                       "%s:%d: --moe-layer-freq '%s': expected a list "
                       "expression of %lld 0s and 1s (one per layer, e.g. "
                       "'([0]*3+[1]*%lld)'), found %s",
                       file, line, v, (long long)L, (long long)(L - 3),
                       bad || *p ? "a syntax trainplan does not read"
                                 : "another length");
    }
    int64_t k = 0, step = 0;
    while (k < L && !pat[k]) k++;
    for (int64_t i = k + 1; i < L && !step; i++)
        if (pat[i]) step = i - k;
    if (step == 0) step = 1;
    int ok = k < L;
    for (int64_t i = 0; i < L && ok; i++)
        ok = pat[i] == (i >= k && (i - k) % step == 0);
    free(pat);
    if (!ok)
        return tp_errf(e, TP_EDATA,
                       "%s:%d: --moe-layer-freq '%s': trainplan models "
                       "leading dense layers then one MoE layer every N "
                       "(at least one), not this pattern", file, line, v);
    m->first_dense_layers = k;
    m->moe_layer_freq = step;
    return TP_OK;
}

int launch_read_megatron(const char *text, const char *file, search_job *j,
                         space_model *m, FILE *err, tp_err *e)
{
    words ws = {0};
    launch_sh sh;
    int rc = launch_sh_read(text, file, &sh, e);
    if (!rc) rc = job_words(text, file, &sh, &ws, e);
    mg_seen s;
    memset(&s, 0, sizeof s);
    int unknown = 0;
    char rc_modules[512] = ""; /* --recompute-modules' words, joined */
    char off_modules[512] = ""; /* --offload-modules' words, joined */
    char cg_modules[256] = ""; /* --cuda-graph-modules' (or -scope's) */
    for (int i = 0; !rc && i < ws.n; i++) {
        const char *w = ws.w[i];
        const launch_sh_word *sw = ws.sw[i];
        int unknown_word = (sw->flags & LAUNCH_SH_UNKNOWN) != 0;
        const char *eq = strchr(w, '=');
        size_t nl = eq ? (size_t)(eq - w) : strlen(w);
        /* A word of the training script's arguments whose start is not
         * known (an unset $EXTRA_ARGS, "$@", $(...)) could be any flags:
         * refused, as a flag whose name is not known. */
        if (ws.arg[i] && unknown_word
            && ((sw->flags & LAUNCH_SH_HEAD)
                || (strncmp(w, "--", 2) == 0 && (size_t)sw->at <= nl))) {
            rc = tp_errf(e, TP_EDATA, "%s:%d: an argument of the training "
                         "script that could hold flags is not known from "
                         "the file: %s; set it in the file (or remove it)",
                         file, ws.line[i], launch_sh_why(sw));
            break;
        }
        if (strncmp(w, "--", 2) != 0 || !w[2]) continue;
        char name[128];
        if (nl >= sizeof name) continue;
        memcpy(name, w, nl);
        name[nl] = '\0';
        int f = flag_of(name);
        if (f < 0) {
            /* another flag: skip its value, if it has one (a word not
             * known from the file after a flag is taken for its value:
             * --save $CHECKPOINTS) */
            unknown++;
            if (!eq && i + 1 < ws.n
                && (ws.w[i + 1][0] != '-'
                    || (ws.sw[i + 1]->flags & LAUNCH_SH_HEAD)))
                i++;
            continue;
        }
        const char *v = "";
        if ((f == F_RC_MODULES || f == F_OFFLOAD_MODULES || f == F_CG_MODULES
             || f == F_CG_SCOPE) && !eq) {
            /* nargs='*' or '+': the words up to the next option */
            char *list = f == F_RC_MODULES       ? rc_modules
                         : f == F_OFFLOAD_MODULES ? off_modules
                                                  : cg_modules;
            size_t cap = f == F_RC_MODULES        ? sizeof rc_modules
                         : f == F_OFFLOAD_MODULES ? sizeof off_modules
                                                  : sizeof cg_modules;
            size_t used = 0;
            /* ... or to a word that is the script's own (a bash array's
             * NAME=( of the next group, or its next assignment, BATCH=...,
             * which the splitter keeps) */
            while (i + 1 < ws.n && ws.w[i + 1][0] != '-'
                   && !strchr(ws.w[i + 1], '=')) {
                if (ws.sw[i + 1]->flags & LAUNCH_SH_UNKNOWN) {
                    rc = tp_errf(e, TP_EDATA, "%s:%d: %s: a value not known "
                                 "from the file: %s", file, ws.line[i + 1],
                                 name, launch_sh_why(ws.sw[i + 1]));
                    break;
                }
                int nw = snprintf(list + used, cap - used,
                                  "%s%s", used ? " " : "", ws.w[++i]);
                if (nw < 0 || (size_t)nw >= cap - used) {
                    rc = tp_errf(e, TP_EDATA, "%s:%d: %s: too long a list",
                                 file, ws.line[i], name);
                    break;
                }
                used += (size_t)nw;
            }
            if (rc) break;
            v = list;
        } else if (flags[f].value) {
            const launch_sh_word *vw = sw;
            if (eq) {
                v = eq + 1;
            } else if (i + 1 < ws.n) {
                v = ws.w[++i];
                vw = ws.sw[i];
            } else {
                rc = tp_errf(e, TP_EDATA, "%s:%d: %s needs a value", file,
                             ws.line[i], name);
                break;
            }
            if (vw->flags & LAUNCH_SH_UNKNOWN) {
                /* torchrun's counts: the GPUs then come from #SBATCH or
                 * --gpus, as for any count that is not a number */
                if (f == F_NNODES || f == F_NPROC) continue;
                rc = tp_errf(e, TP_EDATA, "%s:%d: %s: its value is not "
                             "known from the file: %s", file, ws.line[i],
                             name, launch_sh_why(vw));
                break;
            }
        } else if (unknown_word) {
            rc = tp_errf(e, TP_EDATA, "%s:%d: %s: not known from the file: "
                         "%s", file, ws.line[i], name, launch_sh_why(sw));
            break;
        }
        if (f == F_NNODES || f == F_NPROC) {
            long long x;
            if (tp_parse_int(v, 1, 1000000, &x)) continue; /* "$NODES" */
        }
        if (s.v[f] && strcmp(s.v[f], v) != 0) {
            rc = tp_errf(e, TP_EDATA, "%s:%d: %s given twice, as '%s' (line "
                         "%d) and '%s'", file, ws.line[i], name, s.v[f],
                         s.line[f], v);
            break;
        }
        s.v[f] = v;
        s.line[f] = ws.line[i];
    }
    (void)unknown;

    /* The model, with Megatron-LM's defaults (TransformerConfig,
     * arguments.py validate_args). */
    memset(m, 0, sizeof *m);
    if (!rc) {
        static const int required[] = {F_NUM_LAYERS, F_HIDDEN, F_HEADS,
                                       F_SEQ, F_MBS};
        for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
            if (!s.v[required[i]]) {
                rc = tp_errf(e, TP_EDATA,
                             "%s: no %s: not a Megatron-LM pretrain_gpt.py "
                             "command line (trainplan needs --num-layers, "
                             "--hidden-size, --num-attention-heads, "
                             "--seq-length, --micro-batch-size)",
                             file, flags[required[i]].name);
                break;
            }
    }
    const char *base = tp_basename(file);
    snprintf(m->name, sizeof m->name, "%.63s", base);
    snprintf(m->source, sizeof m->source, "Megatron-LM arguments in %.200s",
             file);
    m->attn_dropout = m->hidden_dropout = 0.1;
    m->qkv_bias = m->out_bias = m->mlp_bias = 1;
    m->tied_embeddings = 1;
    m->moe_layer_freq = 1;
    int64_t seq = 0, vocab = 0;
    if (!rc) rc = seen_int(&s, F_NUM_LAYERS, file, 1, 100000, &m->num_layers, e);
    if (!rc) rc = seen_int(&s, F_HIDDEN, file, 1, 1000000, &m->hidden, e);
    if (!rc) rc = seen_int(&s, F_HEADS, file, 1, 100000, &m->heads, e);
    if (!rc) rc = seen_int(&s, F_SEQ, file, 1, 100000000, &seq, e);
    if (!rc) {
        m->kv_heads = m->heads;
        if (s.v[F_GQA]) {
            m->kv_heads = 1; /* num_query_groups' argparse default */
            rc = seen_int(&s, F_QUERY_GROUPS, file, 1, 100000, &m->kv_heads, e);
        }
    }
    int swiglu = s.v[F_SWIGLU] != NULL;
    if (!rc) {
        m->act = swiglu              ? SPACE_ACT_SWIGLU
                 : s.v[F_SQRELU]     ? SPACE_ACT_SQUARED_RELU
                 : s.v[F_QGEGLU]     ? SPACE_ACT_GEGLU
                                     : SPACE_ACT_GELU;
        /* validate_args' default FFN size */
        m->ffn_hidden = swiglu ? (int64_t)((4.0 * (double)m->hidden * 2 / 3) / 64) * 64
                               : 4 * m->hidden;
        rc = seen_int(&s, F_FFN, file, 1, 10000000, &m->ffn_hidden, e);
    }
    if (!rc) rc = seen_int(&s, F_KV_CHANNELS, file, 1, 100000, &m->head_dim, e);
    if (!rc) {
        m->max_position = seq;
        rc = seen_int(&s, F_MAX_POS, file, 1, 100000000, &m->max_position, e);
        if (!rc && !s.v[F_MAX_POS])
            rc = tp_errf(e, TP_EDATA, "%s: no --max-position-embeddings "
                         "(Megatron-LM requires it: validate_args)", file);
    }
    if (!rc && s.v[F_POS_TYPE]) {
        static const char *const names[SPACE_POS_COUNT] = {
            [SPACE_POS_LEARNED] = "learned_absolute",
            [SPACE_POS_ROPE] = "rope", [SPACE_POS_NONE] = "none"};
        int k = seen_choice(&s, F_POS_TYPE, file, names, SPACE_POS_COUNT, e);
        if (k < 0) rc = TP_EDATA;
        else m->pos = (space_pos)k;
    }
    if (!rc && s.v[F_NORM]) {
        static const char *const names[SPACE_NORM_COUNT] = {
            [SPACE_NORM_LAYERNORM] = "LayerNorm",
            [SPACE_NORM_RMSNORM] = "RMSNorm"};
        int k = seen_choice(&s, F_NORM, file, names, SPACE_NORM_COUNT, e);
        if (k < 0) rc = TP_EDATA;
        else m->norm = (space_norm)k;
    }
    if (s.v[F_UNTIE]) m->tied_embeddings = 0;
    if (s.v[F_NO_BIAS]) m->qkv_bias = m->out_bias = m->mlp_bias = 0;
    if (s.v[F_QKV_BIAS]) m->qkv_bias = 1;
    if (!rc) rc = seen_prob(&s, F_ATTN_DROP, file, &m->attn_dropout, e);
    if (!rc) rc = seen_prob(&s, F_HIDDEN_DROP, file, &m->hidden_dropout, e);
    if (!rc) rc = read_attention_kind(&s, file, m, e);
    if (!rc) rc = seen_int(&s, F_VOCAB, file, 1, 100000000, &vocab, e);
    if (!rc && !vocab) {
        /* GPT-2's BPE, the one tokenizer whose size the type says */
        if (s.v[F_TOKENIZER] && strcmp(s.v[F_TOKENIZER], "GPT2BPETokenizer") == 0)
            vocab = 50257;
        else
            rc = tp_errf(e, TP_EDATA,
                         "%s: the vocabulary's size is not in the file "
                         "(tokenizer %s): add --vocab-size N, which "
                         "Megatron-LM ignores beside a HuggingFace or "
                         "SentencePiece tokenizer",
                         file, s.v[F_TOKENIZER] ? s.v[F_TOKENIZER] : "none");
    }
    m->vocab = vocab;
    if (!rc) rc = read_moe_mla(&s, file, m, e);
    if (!rc) rc = space_model_validate(m, file, e);

    /* The layout and the job, as the command-line options would set
     * them. */
    int64_t x = 0;
    if (!rc) {
        j->seq_length = seq;
        j->tp = 1;
        j->tp_set = 1;
        rc = seen_int(&s, F_TP, file, 1, 4096, &j->tp, e);
    }
    if (!rc) {
        j->pp = 1;
        rc = seen_int(&s, F_PP, file, 1, 4096, &j->pp, e);
    }
    if (!rc) {
        j->cp = 1;
        rc = seen_int(&s, F_CP, file, 1, 4096, &j->cp, e);
    }
    /* expert parallelism: Megatron-Core's defaults EP 1, expert TP = TP,
     * the allgather dispatcher (TransformerConfig) */
    if (!rc && m->num_experts > 0) {
        j->ep = 1;
        rc = seen_int(&s, F_EP, file, 1, 1000000, &j->ep, e);
        if (!rc) rc = seen_int(&s, F_ETP, file, 1, 4096, &j->etp, e);
        if (!rc && !s.v[F_ETP]) j->etp = j->tp;
        j->moe_dispatcher = SPACE_MOE_ALLGATHER;
        if (!rc && s.v[F_MOE_DISPATCHER]) {
            int k = seen_choice(&s, F_MOE_DISPATCHER, file,
                                space_moe_dispatcher_names,
                                SPACE_MOE_DISPATCHER_COUNT, e);
            if (k < 0) rc = TP_EDATA;
            else j->moe_dispatcher = k;
        }
        /* The backend matters to the flex dispatcher only (Megatron-Core
         * reads it there); ncclep is not modelled and refused by name.
         * --moe-router-padding-for-fp8 is the older alias. */
        if (!rc && s.v[F_MOE_FLEX_BACKEND]) {
            int k = seen_choice(&s, F_MOE_FLEX_BACKEND, file,
                                space_moe_flex_backend_names,
                                SPACE_MOE_FLEX_COUNT, e);
            if (k < 0) rc = TP_EDATA;
            else if (j->moe_dispatcher == SPACE_MOE_FLEX)
                j->moe_flex_backend = k;
        }
        if (s.v[F_MOE_ROUTER_PAD] || s.v[F_MOE_ROUTER_PAD_FP8])
            j->moe_router_pad = 1;
        /* The A2A overlap is estimated with --delay-wgrad-compute's
         * schedule whether or not the file gives it (without it the
         * experts' weight gradient runs before the dispatch backward:
         * a little more exposed than estimated). Megatron-Core refuses
         * both overlaps at once; est_moe_check the rest. */
        if (!rc && s.v[F_MOE_A2A_OVERLAP] && s.v[F_MOE_SHARED_OVERLAP])
            rc = tp_errf(e, TP_EDATA,
                         "%s:%d: --moe-shared-expert-overlap with "
                         "--overlap-moe-expert-parallel-comm: Megatron-Core "
                         "refuses both (transformer_config.py); keep one",
                         file, s.line[F_MOE_SHARED_OVERLAP]);
        else if (s.v[F_MOE_A2A_OVERLAP])
            j->moe_comm_overlap = SPACE_MOE_OVERLAP_A2A;
        else if (s.v[F_MOE_SHARED_OVERLAP])
            j->moe_comm_overlap = SPACE_MOE_OVERLAP_SHARED;
        if (!rc && s.v[F_DELAY_WGRAD] && !s.v[F_MOE_A2A_OVERLAP])
            rc = tp_errf(e, TP_EDATA,
                         "%s:%d: --delay-wgrad-compute needs "
                         "--overlap-moe-expert-parallel-comm (Megatron-Core "
                         "transformer_config.py)",
                         file, s.line[F_DELAY_WGRAD]);
    }
    if (!rc) rc = seen_int(&s, F_MBS, file, 1, 1000000, &j->mbs, e);
    if (!rc && s.v[F_GBS]) rc = seen_int(&s, F_GBS, file, 1, 100000000, &j->gbs, e);
    if (!rc && !s.v[F_GBS])
        rc = tp_errf(e, TP_EDATA, "%s: no --global-batch-size: Megatron-LM "
                     "then trains micro-batch x DP sequences an iteration; "
                     "say it", file);
    j->vstages = 1;
    if (!rc) rc = seen_int(&s, F_VSTAGES, file, 1, 4096, &j->vstages, e);
    if (!rc && s.v[F_VLAYERS]) {
        int64_t per = 0;
        rc = seen_int(&s, F_VLAYERS, file, 1, 100000, &per, e);
        if (!rc) j->vpp_layers = per;
    }
    /* The pipeline split, as Megatron-LM's options give it; the rules
     * Megatron-Core checks it by are the estimate's (split.c). */
    if (!rc && s.v[F_LAYOUT]) {
        char why[320];
        if (space_pp_layout_parse(s.v[F_LAYOUT], &j->pp_layout_store, why,
                                  sizeof why))
            rc = tp_errf(e, TP_EDATA, "%s:%d: --pipeline-model-parallel-"
                         "layout: %s", file, s.line[F_LAYOUT], why);
        else if (j->pp_layout_store.n % j->pp)
            rc = tp_errf(e, TP_EDATA,
                         "%s:%d: --pipeline-model-parallel-layout: %d stages "
                         "are not a multiple of PP %lld (Megatron-LM "
                         "validate_args)",
                         file, s.line[F_LAYOUT], j->pp_layout_store.n,
                         (long long)j->pp);
        else if (s.v[F_VSTAGES] || s.v[F_VLAYERS])
            rc = tp_errf(e, TP_EDATA,
                         "%s:%d: --pipeline-model-parallel-layout with %s: "
                         "Megatron-LM takes one of them (validate_args)",
                         file, s.line[F_LAYOUT],
                         s.v[F_VSTAGES] ? flags[F_VSTAGES].name
                                        : flags[F_VLAYERS].name);
        if (!rc) {
            j->pp_layout = &j->pp_layout_store;
            j->vstages = j->pp_layout_store.n / j->pp;
            j->vpp_layers = 0;
            j->split_set = 1;
        }
    }
    if (!rc && s.v[F_FIRST_LAYERS]) {
        rc = seen_int(&s, F_FIRST_LAYERS, file, 1, 100000, &j->pp_first, e);
        j->split_set = 1;
    }
    if (!rc && s.v[F_LAST_LAYERS]) {
        rc = seen_int(&s, F_LAST_LAYERS, file, 1, 100000, &j->pp_last, e);
        j->split_set = 1;
    }
    if (s.v[F_ACCOUNT_EMBED]) j->pp_account |= SPACE_PP_EMBED;
    if (s.v[F_ACCOUNT_LOSS]) j->pp_account |= SPACE_PP_LOSS;
    if (j->pp_account) j->split_set = 1;
    /* Megatron-LM reads no split option as its even split */
    if (!rc) j->split_set = 1;
    /* a split Megatron-Core refuses is refused here, where the file is
     * known (the rules and their sources: split.c) */
    if (!rc) {
        space_layout t;
        memset(&t, 0, sizeof t);
        t.pp = j->pp, t.vpp = j->vstages > 0 ? j->vstages : 1;
        if (j->vpp_layers > 0 && !j->pp_layout) {
            int64_t slots = m->num_layers
                            + ((j->pp_account & SPACE_PP_EMBED) != 0)
                            + ((j->pp_account & SPACE_PP_LOSS) != 0);
            if (j->pp > 0 && slots % j->pp == 0
                && (slots / j->pp) % j->vpp_layers == 0)
                t.vpp = slots / j->pp / j->vpp_layers;
        }
        t.pp_account = j->pp_account;
        t.pp_first = j->pp_first, t.pp_last = j->pp_last;
        t.pp_layout = j->pp_layout;
        space_split sp;
        char why[320];
        space_reject rj = space_split_resolve(m, &t, &sp, why, sizeof why);
        if (rj != SPACE_OK && !(j->vpp_layers > 0 && t.vpp == 1))
            rc = tp_errf(e, TP_EDATA, "%s: the pipeline split: %s (%s)", file,
                         why, space_reject_names[rj]);
    }
    if (!rc && (s.v[F_FIRST_LAYERS] || s.v[F_LAST_LAYERS]) && s.v[F_VLAYERS])
        rc = tp_errf(e, TP_EDATA,
                     "%s:%d: --num-layers-per-virtual-pipeline-stage with "
                     "--decoder-first/last-pipeline-num-layers: Megatron-LM "
                     "asks for --num-virtual-stages-per-pipeline-rank "
                     "(validate_args)",
                     file, s.line[F_VLAYERS]);
    j->sp = s.v[F_SP] ? 1 : 0;
    /* recomputation (TransformerConfig: full needs a method and N) */
    j->recompute = SPACE_RECOMPUTE_NONE;
    /* validate_args sets the selective granularity for
     * --recompute-activations whatever --recompute-granularity says
     * (NVIDIA/Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py
     * validate_args: "if args.recompute_activations:
     * args.recompute_granularity = 'selective'") */
    if (!rc && s.v[F_RC_GRAN] && !s.v[F_RC_ACTIVATIONS]) {
        static const char *const names[SPACE_RECOMPUTE_COUNT] = {
            [SPACE_RECOMPUTE_SELECTIVE] = "selective",
            [SPACE_RECOMPUTE_FULL] = "full"};
        int k = seen_choice(&s, F_RC_GRAN, file, names, SPACE_RECOMPUTE_COUNT, e);
        if (k < 0) rc = TP_EDATA;
        else j->recompute = k;
    }
    if (s.v[F_RC_ACTIVATIONS]) j->recompute = SPACE_RECOMPUTE_SELECTIVE;
    if (!rc && s.v[F_RC_METHOD]) {
        int k = seen_choice(&s, F_RC_METHOD, file, space_recompute_method_names,
                            SPACE_RECOMPUTE_METHOD_COUNT, e);
        if (k < 0) rc = TP_EDATA;
        j->recompute_method = k;
        j->sw_set |= SEARCH_SW_RC_METHOD;
    }
    if (!rc) rc = seen_int(&s, F_RC_LAYERS, file, 1, 100000, &j->recompute_layers, e);
    if (!rc && s.v[F_RC_MODULES]) {
        /* TransformerConfig.recompute_modules, read with the selective
         * granularity only; an empty list recomputes nothing */
        size_t bad = space_rc_modules_parse(s.v[F_RC_MODULES],
                                            &j->recompute_modules);
        if (bad > 1 || (bad == 1 && s.v[F_RC_MODULES][0]))
            rc = tp_errf(e, TP_EDATA,
                         "%s:%d: --recompute-modules '%s': expected names of "
                         "core_attn, layernorm, moe_act, mla_up_proj, mlp, "
                         "moe, shared_experts",
                         file, s.line[F_RC_MODULES], s.v[F_RC_MODULES]);
        else if (bad == 1 && j->recompute == SPACE_RECOMPUTE_SELECTIVE)
            j->recompute = SPACE_RECOMPUTE_NONE;
        if (j->recompute != SPACE_RECOMPUTE_SELECTIVE) j->recompute_modules = 0;
    }
    if (!rc && j->recompute != SPACE_RECOMPUTE_FULL)
        j->recompute_layers = 0, j->sw_set &= ~(unsigned)SEARCH_SW_RC_METHOD;
    /* optimizer sharding */
    j->zero = s.v[F_DISTOPT] ? 1 : 0;
    if (!rc && (s.v[F_MFSDP] || s.v[F_TORCH_FSDP2])) {
        j->zero = 3; /* --data-parallel-sharding-strategy's default */
        if (s.v[F_MFSDP] && s.v[F_SHARDING]) {
            static const char *const names[4] = {"no_shard", "optim",
                                                 "optim_grads",
                                                 "optim_grads_params"};
            int k = seen_choice(&s, F_SHARDING, file, names, 4, e);
            if (k < 0) rc = TP_EDATA;
            else j->zero = k;
        }
    }
    /* precision */
    if (!rc && !s.v[F_BF16] && !s.v[F_FP16])
        rc = tp_errf(e, TP_EDATA, "%s: neither --bf16 nor --fp16: "
                     "Megatron-LM then trains in fp32, which trainplan does "
                     "not model", file);
    /* validate_args asserts one of them (arguments.py at d98e8a64ddf3:
     * "if args.fp16: assert not args.bf16") */
    if (!rc && s.v[F_BF16] && s.v[F_FP16])
        rc = tp_errf(e, TP_EDATA, "%s:%d: --fp16 with --bf16 (line %d): "
                     "Megatron-LM refuses the two together (validate_args "
                     "asserts not args.bf16); keep one",
                     file, s.line[F_FP16], s.line[F_BF16]);
    j->precision = s.v[F_FP16] ? HW_FP16 : HW_BF16;
    if (!rc && s.v[F_FP8_FORMAT]) {
        j->precision = HW_FP8;
        j->fp8_recipe = SPACE_FP8_DELAYED; /* --fp8-recipe's default */
        j->sw_set |= SEARCH_SW_FP8;
        if (s.v[F_FP8_RECIPE]) {
            static const char *const names[SPACE_FP8_RECIPE_COUNT] = {
                [SPACE_FP8_DELAYED] = "delayed",
                [SPACE_FP8_TENSORWISE] = "tensorwise",
                [SPACE_FP8_BLOCKWISE] = "blockwise",
                [SPACE_FP8_MXFP8] = "mxfp8"};
            int k = seen_choice(&s, F_FP8_RECIPE, file, names,
                                SPACE_FP8_RECIPE_COUNT, e);
            if (k < 0) rc = TP_EDATA;
            else j->fp8_recipe = k;
        }
    }
    /* NVFP4 (transformer_config.py: fp4 'e2m1', fp4_recipe nvfp4 by
     * default; validate_args refuses it beside --fp8-format) */
    if (!rc && s.v[F_FP4_FORMAT]) {
        static const char *const formats[1] = {"e2m1"};
        static const char *const recipes[1] = {"nvfp4"};
        if (seen_choice(&s, F_FP4_FORMAT, file, formats, 1, e) < 0)
            rc = TP_EDATA;
        else if (s.v[F_FP4_RECIPE]
                 && seen_choice(&s, F_FP4_RECIPE, file, recipes, 1, e) < 0)
            rc = TP_EDATA;
        else if (s.v[F_FP8_FORMAT])
            rc = tp_errf(e, TP_EDATA, "%s:%d: --fp4-format beside "
                         "--fp8-format (line %d): Megatron-LM refuses the two "
                         "together (validate_args)",
                         file, s.line[F_FP4_FORMAT], s.line[F_FP8_FORMAT]);
        else if (s.v[F_FP4_PARAMS])
            rc = tp_errf(e, TP_EDATA, "%s:%d: --fp4-param-gather: trainplan "
                         "models NVFP4 with 16-bit parameters and Transformer "
                         "Engine's NVFP4 weight copies, not fp4 parameters; "
                         "drop the flag to estimate that",
                         file, s.line[F_FP4_PARAMS]);
        else
            j->precision = HW_FP4;
    }
    j->fp8_params = s.v[F_FP8_PARAMS] && j->precision == HW_FP8;
    if (s.v[F_GRAD_BF16]) j->grad_bytes = 2, j->sw_set |= SEARCH_SW_GRAD;
    if (s.v[F_GRAD_FP32]) j->grad_bytes = 4, j->sw_set |= SEARCH_SW_GRAD;
    /* software switches: Megatron-LM's defaults where absent */
    j->framework = SPACE_FW_MEGATRON_CORE;
    j->no_overlap = s.v[F_OVERLAP_GRAD] ? 0 : 1; /* off by default */
    j->sw_set |= SEARCH_SW_DP;
    if (s.v[F_TP_OVERLAP]) j->tp_overlap = SPACE_TP_OVERLAP_ALL, j->sw_set |= SEARCH_SW_TP;
    if (s.v[F_NO_P2P_OVERLAP]) j->no_pp_overlap = 1, j->sw_set |= SEARCH_SW_PP;
    j->ce_fusion = s.v[F_CE_FUSION] != NULL;
    /* --cross-entropy-fusion-impl te: Transformer Engine's loss, read as
     * today's TE keeps it (an fp32 gradient since v2.18); Megatron-LM
     * refuses it with the fusion since 168cb15d70 (2026-06-03), which
     * older jobs predate */
    if (!rc && s.v[F_CE_IMPL]) {
        static const char *const names[2] = {"native", "te"};
        int k = seen_choice(&s, F_CE_IMPL, file, names, 2, e);
        if (k < 0) rc = TP_EDATA;
        else if (k == 1 && j->ce_fusion)
            j->ce_te = SPACE_CE_TE_FP32, j->ce_fusion = 0;
    }
    /* MoE's permutation: Megatron-Core's default is PyTorch's */
    if (s.v[F_EXPERTS]) {
        j->moe_permute_fusion = s.v[F_MOE_PERMUTE] != NULL;
        j->sw_set |= SEARCH_SW_PERMUTE;
        /* the router: PyTorch's ops unless --moe-router-fusion */
        j->moe_router_fusion = s.v[F_MOE_ROUTER] != NULL;
        j->sw_set |= SEARCH_SW_ROUTER;
    }
    /* Megatron-FSDP: double buffers (--use-nccl-ub and the max-pool
     * allocator turn them on, validate_args), and gradient buffers of
     * the parameters' dtype unless --megatron-fsdp-main-grads-dtype says
     * fp32 (MixedPrecisionPolicy, mcore_fsdp_adapter.py at d98e8a64ddf3:
     * --accumulate-allreduce-grads-in-fp32 no longer applies) */
    if (s.v[F_MFSDP]) {
        j->fsdp_double_buffer = s.v[F_FSDP_DB] || s.v[F_NCCL_UB]
                                || s.v[F_FSDP_MAXPOOL];
        int fp32 = 0;
        if (!rc && s.v[F_FSDP_GRADS]) {
            static const char *const names[4] = {"auto", "fp32", "bf16",
                                                 "fp16"};
            int k = seen_choice(&s, F_FSDP_GRADS, file, names, 4, e);
            if (k < 0) rc = TP_EDATA;
            fp32 = k == 1;
        }
        j->grad_bytes = fp32 ? 4 : 2, j->sw_set |= SEARCH_SW_GRAD;
    }
    /* CUDA graphs (validate_args: --enable-cuda-graph is local,
     * --external-cuda-graph transformer_engine; the modules' old name
     * --cuda-graph-scope, whose full_iteration sets the implementation) */
    if (s.v[F_CG_ENABLE]) j->cuda_graph = SPACE_CG_LOCAL;
    if (s.v[F_CG_EXTERNAL]) j->cuda_graph = SPACE_CG_TE;
    if (!rc && s.v[F_CG_IMPL]) {
        int k = seen_choice(&s, F_CG_IMPL, file, space_cuda_graph_names,
                            SPACE_CG_COUNT, e);
        if (k < 0) rc = TP_EDATA;
        else j->cuda_graph = k;
    }
    int cgf = s.v[F_CG_MODULES] ? F_CG_MODULES : F_CG_SCOPE;
    if (!rc && s.v[cgf]) {
        char mods[256];
        snprintf(mods, sizeof mods, "%s", s.v[cgf]);
        char *fi = strstr(mods, "full_iteration");
        if (fi && (fi[14] == '\0' || fi[14] == ' ' || fi[14] == ',')) {
            j->cuda_graph = SPACE_CG_FULL_ITERATION;
            memset(fi, ' ', 14);
        }
        size_t bad = space_cgm_parse(mods, &j->cuda_graph_modules);
        if (bad)
            rc = tp_errf(e, TP_EDATA,
                         "%s:%d: %s '%s': expected full, full_iteration or "
                         "names of attn, mlp, moe, moe_router, "
                         "moe_preprocess", file, s.line[cgf], flags[cgf].name,
                         s.v[cgf]);
        else if (j->cuda_graph == SPACE_CG_LOCAL || j->cuda_graph == SPACE_CG_TE)
            j->cuda_graph_scope_set = 1;
        else
            j->cuda_graph_modules = 0;
    }
    /* the allocator: the script's export, unless --[no-]expandable-
     * segments said it */
    int alloc = alloc_conf_of(&sh);
    if (alloc >= 0 && !(j->sw_set & SEARCH_SW_ALLOC))
        j->alloc_expandable = alloc, j->sw_set |= SEARCH_SW_ALLOC;
    if (!rc && s.v[F_CP_COMM]) {
        static const char *const names[SPACE_CP_COMM_COUNT] = {
            [SPACE_CP_P2P] = "p2p", [SPACE_CP_ALLGATHER] = "allgather"};
        int k = seen_choice(&s, F_CP_COMM, file, names, SPACE_CP_COMM_COUNT, e);
        if (k < 0) rc = TP_EDATA;
        else j->cp_comm = k, j->sw_set |= SEARCH_SW_CP;
    }
    if (s.v[F_FLASH_ATTN])
        j->attn_backend = SPACE_ATTN_FLASH, j->sw_set |= SEARCH_SW_FLASH;
    if (!rc && s.v[F_ATTN_BACKEND]) {
        int k = seen_choice(&s, F_ATTN_BACKEND, file, space_attn_names,
                            SPACE_ATTN_COUNT, e);
        if (k < 0) rc = TP_EDATA;
        else j->attn_backend = k, j->sw_set |= SEARCH_SW_FLASH;
    }
    /* Memory savers and micro-batch groups (issue 28): Megatron-LM's
     * argparse choices (arguments.py _add_experimental_args,
     * _add_training_args; TransformerConfig's generated flags). What
     * Megatron-Core then refuses is search_job_check_savers' and est_saver_check's. */
    if (s.v[F_PA_OPT]) j->pa_optimizer = 1;
    {
        static const char *const grads[SPACE_OPT_DTYPE_COUNT] = {
            [SPACE_OPT_FP32] = "fp32", [SPACE_OPT_BF16] = "bf16"};
        static const char *const params[SPACE_OPT_DTYPE_COUNT] = {
            [SPACE_OPT_FP32] = "fp32", [SPACE_OPT_FP16] = "fp16"};
        const struct {
            int f;
            const char *const *names;
            int *out;
        } dts[] = {{F_MAIN_GRADS, grads, &j->main_grads_dtype},
                   {F_MAIN_PARAMS, params, &j->main_params_dtype},
                   {F_EXP_AVG, space_opt_dtype_names, &j->exp_avg_dtype},
                   {F_EXP_AVG_SQ, space_opt_dtype_names, &j->exp_avg_sq_dtype}};
        for (size_t i = 0; !rc && i < sizeof dts / sizeof dts[0]; i++) {
            if (!s.v[dts[i].f]) continue;
            int k = seen_choice(&s, dts[i].f, file, dts[i].names,
                                SPACE_OPT_DTYPE_COUNT, e);
            if (k < 0) rc = TP_EDATA;
            else *dts[i].out = k;
        }
    }
    if (s.v[F_OPT_OFFLOAD]) {
        j->opt_offload = 1;
        if (!rc && s.v[F_OPT_OFFLOAD_FRAC])
            rc = seen_num(&s, F_OPT_OFFLOAD_FRAC, file, 1e-9, 1,
                          &j->opt_offload_fraction, e);
        j->opt_offload_overlap = s.v[F_OPT_OFFLOAD_OVERLAP] != NULL;
    }
    if (s.v[F_TORCH_OPT_OFFLOAD])
        fprintf((err ? err : stderr), "trainplan: %s: note: "
                "--use-torch-optimizer-for-cpu-offload changes nothing with "
                "Adam (megatron/core/optimizer/__init__.py sets the GPU "
                "optimizer back to Adam)\n", file);
    if (!rc && s.v[F_CPU_OFFLOADING] && !s.v[F_CPU_OFFLOAD_LAYERS])
        rc = tp_errf(e, TP_EDATA,
                     "%s:%d: --cpu-offloading: not a flag of Megatron-LM at "
                     "d98e8a6 (TransformerConfig.cpu_offloading is set by "
                     "--cpu-offloading-num-layers N > 0, validate_args); "
                     "give the layers",
                     file, s.line[F_CPU_OFFLOADING]);
    if (!rc) rc = seen_int(&s, F_CPU_OFFLOAD_LAYERS, file, 0, 100000,
                           &j->act_offload_layers, e);
    if (!rc && s.v[F_FG_OFFLOAD]) {
        j->fine_grained = 1;
        size_t bad = s.v[F_OFFLOAD_MODULES]
                         ? space_off_modules_parse(s.v[F_OFFLOAD_MODULES],
                                                   &j->offload_modules)
                         : 1;
        if (bad)
            rc = tp_errf(e, TP_EDATA,
                         "%s:%d: --offload-modules '%s': expected names of "
                         "attn_norm, qkv_linear, core_attn, attn_proj, "
                         "mlp_norm, expert_fc1, moe_act (fused_group_mlp and "
                         "gdp_qkv are not modelled)",
                         file,
                         s.line[s.v[F_OFFLOAD_MODULES] ? F_OFFLOAD_MODULES
                                                       : F_FG_OFFLOAD],
                         s.v[F_OFFLOAD_MODULES] ? s.v[F_OFFLOAD_MODULES]
                                                : "");
        if (!rc && s.v[F_OFFLOAD_FRAC]) {
            double fr = 1;
            rc = seen_num(&s, F_OFFLOAD_FRAC, file, 0, 1, &fr, e);
            if (!rc && fr <= 0)
                rc = tp_errf(e, TP_EDATA,
                             "%s:%d: --activation-offload-fraction 0: "
                             "nothing offloaded; drop "
                             "--fine-grained-activation-offloading",
                             file, s.line[F_OFFLOAD_FRAC]);
            j->offload_fraction = fr;
        }
    }
    if (!rc) rc = seen_int(&s, F_MB_GROUP, file, 1, 1000000, &j->mb_group, e);
    /* the GPUs: #SBATCH, else torchrun's literal counts */
    int64_t nodes = ws.sbatch_nodes, gpn = ws.sbatch_gpn;
    if (!rc && !nodes) rc = seen_int(&s, F_NNODES, file, 1, 1000000, &nodes, e);
    if (!rc && !gpn) rc = seen_int(&s, F_NPROC, file, 1, 4096, &gpn, e);
    if (!rc && nodes > 0 && gpn > 0 && j->gpus <= 0) j->gpus = nodes * gpn;
    else if (!rc && nodes > 0 && j->gpus <= 0 && j->opt_nodes <= 0)
        j->opt_nodes = (int)nodes;
    /* The tokens to train: --train-iters x global batch x sequence, or
     * --train-samples x sequence (Megatron-LM asserts one of the two,
     * validate_args), in --tokens' range [1, 1e18]. The command line's
     * --tokens, where given, wins: the file is read for the job's shape,
     * --tokens asks what a given amount of training costs. */
    if (!rc && s.v[F_TRAIN_ITERS] && s.v[F_TRAIN_SAMPLES])
        rc = tp_errf(e, TP_EDATA, "%s:%d: --train-samples with --train-iters "
                     "(line %d): Megatron-LM takes one (validate_args)",
                     file, s.line[F_TRAIN_SAMPLES], s.line[F_TRAIN_ITERS]);
    if (!rc && (s.v[F_TRAIN_ITERS] || s.v[F_TRAIN_SAMPLES])) {
        int f = s.v[F_TRAIN_ITERS] ? F_TRAIN_ITERS : F_TRAIN_SAMPLES;
        x = 0;
        rc = seen_int(&s, f, file, 1, (long long)1e18, &x, e);
        double t = (double)x * (double)seq
                   * (f == F_TRAIN_ITERS ? (double)j->gbs : 1.0);
        if (!rc && t > 1e18)
            rc = tp_errf(e, TP_EDATA, "%s:%d: %s %lld: %.3g tokens, more "
                         "than the 1e18 trainplan plans for (--tokens' "
                         "range)", file, s.line[f], flags[f].name,
                         (long long)x, t);
        if (!rc && j->tokens <= 0) j->tokens = t;
    }
    words_free(&ws);
    launch_sh_free(&sh);
    return rc;
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
