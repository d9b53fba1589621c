/*
 * launch_megatron_flags.c - the Megatron-LM flags launch_read_megatron
 * (launch_megatron_read.c) reads: their names and whether each takes a
 * value (launch_mg_flags, arguments.py at NVIDIA/Megatron-LM@d98e8a64ddf3),
 * a flag's value checked against its range or choices (launch_mg_seen_*),
 * and the model flags of attention (RoPE, local windows, sinks), mixture
 * of experts (with --moe-layer-freq's list expressions) and MLA, with
 * Megatron-LM's defaults where a flag is absent.
 */
#include "launch.h"
#include "launch_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_base.h"

const struct launch_mg_flag launch_mg_flags[F_COUNT] = {
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

int launch_mg_flag_of(const char *name)
{
    if (strcmp(name, "--nproc_per_node") == 0) return F_NPROC;
    for (int i = 0; i < F_COUNT; i++)
        if (strcmp(name, launch_mg_flags[i].name) == 0) return i;
    return -1;
}

/* A whole number in [lo, hi] from flag f, into *out; TP_EDATA naming the
 * file, line, flag and range otherwise. Absent: *out untouched. */
int launch_mg_seen_int(const mg_seen *s, int f, const char *file, long long lo,
                       long long hi, int64_t *out, tp_err *e)
{
    if (!s->v[f]) return TP_OK;
    long long x;
    if (tp_parse_int(s->v[f], lo, hi, &x))
        return tp_errf(e, TP_EDATA,
                       "%s:%d: %s: expected an integer in [%lld, %lld], "
                       "found '%s'",
                       file, s->line[f], launch_mg_flags[f].name, lo, hi, s->v[f]);
    *out = x;
    return TP_OK;
}

int launch_mg_seen_prob(const mg_seen *s, int f, const char *file, double *out,
                        tp_err *e)
{
    if (!s->v[f]) return TP_OK;
    double x;
    if (tp_parse_num(s->v[f], &x) || !(x >= 0 && x <= 1))
        return tp_errf(e, TP_EDATA,
                       "%s:%d: %s: expected a probability in [0, 1], found "
                       "'%s'",
                       file, s->line[f], launch_mg_flags[f].name, s->v[f]);
    *out = x;
    return TP_OK;
}

/* s->v[f] is one of names[0..n-1]: its index, else -1 with TP_EDATA. */
int launch_mg_seen_choice(const mg_seen *s, int f, const char *file,
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
            "found '%s'", file, s->line[f], launch_mg_flags[f].name, list, s->v[f]);
    return -1;
}

/* The MoE and MLA flags into m, with Megatron-LM's defaults where absent
 * (NVIDIA/Megatron-LM@d98e8a64ddf3: TransformerConfig moe_router_topk 2,
 * softmax scores, dropless; validate_args: moe_ffn_hidden_size =
 * ffn_hidden_size; arguments.py's MLA flags: no query compression,
 * --kv-lora-rank 32, --qk-head-dim 128, --qk-pos-emb-head-dim 64,
 * --v-head-dim 128). */
int launch_mg_seen_num(const mg_seen *s, int f, const char *file, double lo,
                       double hi, double *out, tp_err *e)
{
    if (!s->v[f]) return TP_OK;
    double x;
    if (tp_parse_num(s->v[f], &x) || !(x >= lo && x <= hi))
        return tp_errf(e, TP_EDATA,
                       "%s:%d: %s: expected a number in [%g, %g], found '%s'",
                       file, s->line[f], launch_mg_flags[f].name, lo, hi, s->v[f]);
    *out = x;
    return TP_OK;
}

static int read_moe_freq(const char *v, const char *file, int line,
                         space_model *m, tp_err *e);

/* RoPE's share and base, the local-attention window and its period, and
 * the softmax's sinks into m, Megatron-LM's defaults where absent
 * (arguments.py: --rotary-percent 1.0, --rotary-base 10000; no window;
 * TransformerConfig softmax_type vanilla). m->pos is already read. */
int launch_mg_read_attention_kind(const mg_seen *s, const char *file,
                                  space_model *m, tp_err *e)
{
    int rc = launch_mg_seen_num(s, F_ROTARY_PCT, file, 1e-6, 1,
                                &m->rotary_fraction, e);
    if (m->rotary_fraction >= 1) m->rotary_fraction = 0; /* all */
    if (m->pos == SPACE_POS_ROPE) m->rope_theta = 10000;
    if (!rc) rc = launch_mg_seen_num(s, F_ROTARY_BASE, file, 1, 1e12,
                                     &m->rope_theta, e);
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
        rc = launch_mg_seen_int(s, F_WINDOW_SKIP, file, 1, 100000,
                                &m->global_every, e);
    if (!rc && s->v[F_SOFTMAX_TYPE]) {
        static const char *const names[2] = {"vanilla", "learnable"};
        int k = launch_mg_seen_choice(s, F_SOFTMAX_TYPE, file, names, 2, e);
        if (k < 0) rc = TP_EDATA;
        else m->attn_sinks = k;
    }
    return rc;
}

int launch_mg_read_moe_mla(const mg_seen *s, const char *file, space_model *m,
                           tp_err *e)
{
    int rc = TP_OK;
    if (s->v[F_EXPERTS]) {
        rc = launch_mg_seen_int(s, F_EXPERTS, file, 1, 1000000, &m->num_experts, e);
        m->top_k = 2;
        m->expert_ffn_hidden = m->ffn_hidden;
        if (!rc) rc = launch_mg_seen_int(s, F_MOE_TOPK, file, 1, 1000000,
                                         &m->top_k, e);
        if (!rc)
            rc = launch_mg_seen_int(s, F_MOE_FFN, file, 1, 10000000,
                                    &m->expert_ffn_hidden, e);
        if (!rc && s->v[F_MOE_SHARED]) {
            /* one shared expert of the total size: the same GEMMs */
            m->shared_experts = 1;
            rc = launch_mg_seen_int(s, F_MOE_SHARED, file, 1, 10000000,
                                    &m->shared_ffn_hidden, e);
            m->shared_expert_gate = s->v[F_MOE_SHARED_GATE] != NULL;
        }
        if (!rc && s->v[F_MOE_FREQ])
            rc = read_moe_freq(s->v[F_MOE_FREQ], file, s->line[F_MOE_FREQ], m,
                               e);
        if (!rc && s->v[F_MOE_SCORE]) {
            static const char *const names[2] = {"softmax", "sigmoid"};
            int k = launch_mg_seen_choice(s, F_MOE_SCORE, file, names, 2, e);
            if (k < 0) rc = TP_EDATA;
            else m->router_sigmoid = k;
        }
        if (!rc) rc = launch_mg_seen_int(s, F_MOE_GROUPS, file, 1, 1000000,
                                         &m->router_groups, e);
        if (!rc) rc = launch_mg_seen_int(s, F_MOE_GROUP_TOPK, file, 1, 1000000,
                                         &m->router_topk_groups, e);
        if (!rc)
            rc = launch_mg_seen_num(s, F_MOE_CAPACITY, file, 0, 1e6,
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
                               launch_mg_flags[moe_only[i]].name);
    }
    if (!rc && s->v[F_MLA]) {
        m->q_lora_rank = 0, m->kv_lora_rank = 32;
        m->qk_nope_head_dim = 128, m->qk_rope_head_dim = 64;
        m->v_head_dim = 128;
        rc = launch_mg_seen_int(s, F_Q_LORA, file, 1, 1000000, &m->q_lora_rank, e);
        if (!rc) rc = launch_mg_seen_int(s, F_KV_LORA, file, 1, 1000000,
                                         &m->kv_lora_rank, e);
        if (!rc) rc = launch_mg_seen_int(s, F_QK_HEAD, file, 1, 100000,
                                         &m->qk_nope_head_dim, e);
        if (!rc) rc = launch_mg_seen_int(s, F_QK_POS, file, 1, 100000,
                                         &m->qk_rope_head_dim, e);
        if (!rc) rc = launch_mg_seen_int(s, F_V_HEAD, file, 1, 100000,
                                         &m->v_head_dim, e);
    }
    m->qk_norm = s->v[F_QK_NORM] != NULL;
    if (!rc) rc = launch_mg_seen_int(s, F_MTP, file, 0, 1000, &m->mtp_layers, e);
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
