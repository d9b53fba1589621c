/*
 * launch_nemo_keys.c - the keys launch_read_nemo (launch_nemo_read.c)
 * reads, each with its value's kind and range (launch_nemo_keys), and the
 * reading of a job's text into their values: key=value and "key: value"
 * lines, a "# launch:" or torchrun ... run_recipe.py command line, a
 * launch script's command through the shell expander (launch_shell.c).
 * The sections that change no iteration are skipped; any other key is
 * refused by name. Sources: launch_nemo.c's opening comment.
 */
#include "launch.h"
#include "launch_int.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hw.h"


static const char *const n_bool[] = {"true", "false", NULL};
static const char *const n_co_target[] = {LAUNCH_NEMO_COMM_OVERLAP_TARGET, NULL};
static const char *const n_cp_comm[] = {"p2p", "all_gather", NULL};
static const char *const n_rc_gran[] = {"selective", "full", NULL};
static const char *const n_rc_method[] = {"uniform", "block", NULL};
static const char *const n_shard[] = {"no_shard", "optim", "optim_grads",
                                      "optim_grads_params", NULL};
static const char *const n_ce_impl[] = {"native", "te", NULL};
/* space_cuda_graph */
static const char *const n_cg_impl[] = {"none", "local", "transformer_engine",
                                        "full_iteration", NULL};
static const char *const n_attn[] = {"unfused", "flash", "fused", "auto", NULL};
/* Megatron-Core's names, then NeMo 1's (megatron_gpt_config.yaml) */
static const char *const n_norm[] = {"LayerNorm", "RMSNorm", "layernorm",
                                     "rmsnorm", NULL};
static const char *const n_act[] = {"gelu", "relu", "squared_relu", "relu2",
                                    "silu", NULL};
static const char *const n_pos[] = {"learned_absolute", "rope", NULL};
static const char *const n_softmax[] = {"vanilla", "learnable", NULL};
static const char *const n_score[] = {"softmax", "sigmoid", NULL};
static const char *const n_dispatcher[] = {"alltoall", "allgather", "flex",
                                           NULL}; /* space_moe_dispatcher */
static const char *const n_flex_backend[] = {"deepep", "hybridep", NULL};
/* space_moe_flex_backend */
static const char *const n_prec1[] = {"bf16", "bf16-mixed", "16", "16-mixed",
                                      NULL};
static const char *const n_act1[] = {"gelu", "squared-relu", "swiglu", "geglu",
                                     NULL};
static const char *const n_optim1[] = {"fused_adam", "distributed_fused_adam",
                                       NULL};
/* torch.dtype names Megatron-Bridge's str_to_dtype takes for the
 * optimizer's states (utils/activation_map.py, DTYPE_MAP), as
 * space_opt_dtype (launch_nemo_odtype_of) */
static const char *const n_odtype[] = {
    "fp32", "float32", "torch.float32", "bf16", "bfloat16", "torch.bfloat16",
    "fp16", "float16", "torch.float16", "fp8", "float8_e4m3fn",
    "torch.float8_e4m3fn", NULL};
const int launch_nemo_odtype_of[] = {
    SPACE_OPT_FP32, SPACE_OPT_FP32, SPACE_OPT_FP32, SPACE_OPT_BF16,
    SPACE_OPT_BF16, SPACE_OPT_BF16, SPACE_OPT_FP16, SPACE_OPT_FP16,
    SPACE_OPT_FP16, SPACE_OPT_FP8,  SPACE_OPT_FP8,  SPACE_OPT_FP8};
_Static_assert(sizeof n_odtype / sizeof n_odtype[0] - 1
                   == sizeof launch_nemo_odtype_of / sizeof launch_nemo_odtype_of[0],
               "launch_nemo_odtype_of mirrors n_odtype");
/* Mixed-precision recipes this reader knows, with the hyphenated names
 * @register adds (mixed_precision.py); their meaning is launch_nemo_mp_meaning. */
static const char *const n_mp[] = {
    "bf16_mixed", "fp16_mixed", "bf16_with_fp8_delayed_scaling_mixed",
    "bf16_with_fp8_current_scaling_mixed",
    "bf16_with_fp8_subchannel_scaling_mixed", "bf16_with_mxfp8_mixed",
    "bf16_with_nvfp4_mixed", NULL};
/* bf16_with_nvfp4_mixed also gathers fp4 parameters, which trainplan does
 * not model: read as NVFP4 with 16-bit parameters. */
const struct launch_nemo_mp_meaning launch_nemo_mp_meaning[] = {
    {HW_BF16, 0}, {HW_FP16, 0}, {HW_FP8, SPACE_FP8_DELAYED},
    {HW_FP8, SPACE_FP8_TENSORWISE}, {HW_FP8, SPACE_FP8_BLOCKWISE},
    {HW_FP8, SPACE_FP8_MXFP8}, {HW_FP4, 0},
};
_Static_assert(sizeof n_mp / sizeof n_mp[0] - 1
                   == sizeof launch_nemo_mp_meaning
                          / sizeof launch_nemo_mp_meaning[0],
               "launch_nemo_mp_meaning mirrors n_mp");

#define BIG (1LL << 40)
const nemo_key launch_nemo_keys[] = {
    /* Megatron-Bridge ConfigContainer keys */
    {"model.tensor_model_parallel_size", K_TP, V_INT, 0, 1, 65536, NULL},
    {"model.pipeline_model_parallel_size", K_PP, V_INT, 0, 1, 65536, NULL},
    {"model.virtual_pipeline_model_parallel_size", K_VPP, V_INT, 1, 1, 65536,
     NULL},
    {"model.pipeline_model_parallel_layout", K_LAYOUT, V_STR, 1, 0, 0, NULL},
    {"model.account_for_embedding_in_pipeline_split", K_ACC_EMBED, V_BOOL, 0,
     0, 0, n_bool},
    {"model.account_for_loss_in_pipeline_split", K_ACC_LOSS, V_BOOL, 0, 0, 0,
     n_bool},
    {"model.num_layers_in_first_pipeline_stage", K_PP_FIRST, V_INT, 1, 1,
     100000, NULL},
    {"model.num_layers_in_last_pipeline_stage", K_PP_LAST, V_INT, 1, 1,
     100000, NULL},
    {"model.context_parallel_size", K_CP, V_INT, 0, 1, 65536, NULL},
    {"model.cp_comm_type", K_CP_COMM, V_NAME, 1, 0, 0, n_cp_comm},
    {"model.sequence_parallel", K_SP, V_BOOL, 0, 0, 0, n_bool},
    {"train.micro_batch_size", K_MBS, V_INT, 0, 1, BIG, NULL},
    {"train.global_batch_size", K_GBS, V_INT, 0, 1, BIG, NULL},
    {"model.seq_length", K_SEQ_MODEL, V_INT, 0, 1, BIG, NULL},
    {"dataset.seq_length", K_SEQ_DATA, V_INT, 0, 1, BIG, NULL},
    {"dataset.sequence_length", K_SEQ_DATA, V_INT, 0, 1, BIG, NULL},
    {"model.recompute_granularity", K_RC_GRAN, V_NAME, 1, 0, 0, n_rc_gran},
    {"model.recompute_method", K_RC_METHOD, V_NAME, 1, 0, 0, n_rc_method},
    {"model.recompute_num_layers", K_RC_LAYERS, V_INT, 1, 1, 100000, NULL},
    {"model.recompute_modules", K_RC_MODULES, V_STR, 1, 0, 0, NULL},
    {"mixed_precision", K_MP, V_NAME, 0, 0, 0, n_mp},
    {"mixed_precision.fp8_param_gather", K_FP8_PARAMS, V_BOOL, 0, 0, 0, n_bool},
    /* TransformerConfig.fp8_dot_product_attention, set on the model or
     * through MixedPrecisionConfig (NVIDIA's MLPerf NeMo configs: FP8_DPA) */
    {"mixed_precision.fp8_dot_product_attention", K_FP8_DPA, V_BOOL, 0, 0, 0,
     n_bool},
    {"model.fp8_dot_product_attention", K_FP8_DPA, V_BOOL, 0, 0, 0, n_bool},
    {"ddp.use_distributed_optimizer", K_DISTOPT, V_BOOL, 0, 0, 0, n_bool},
    {"optimizer.use_distributed_optimizer", K_DISTOPT_OPT, V_BOOL, 0, 0, 0,
     n_bool},
    {"optimizer.overlap_param_gather", K_PARAM_GATHER_OPT, V_BOOL, 0, 0, 0,
     n_bool},
    {"ddp.use_megatron_fsdp", K_FSDP, V_BOOL, 0, 0, 0, n_bool},
    {"ddp.data_parallel_sharding_strategy", K_SHARD, V_NAME, 0, 0, 0, n_shard},
    {"ddp.overlap_grad_reduce", K_DP_OVERLAP, V_BOOL, 0, 0, 0, n_bool},
    {"ddp.overlap_param_gather", K_PARAM_GATHER, V_BOOL, 0, 0, 0, n_bool},
    {"comm_overlap.tp_comm_overlap", K_TP_UB, V_BOOL, 0, 0, 0, n_bool},
    /* the class a comm_overlap the recipe left None is built as */
    {"comm_overlap._target_", K_CO_TARGET, V_NAME, 0, 0, 0, n_co_target},
    {"comm_overlap.overlap_p2p_comm", K_P2P_OVERLAP, V_BOOL, 1, 0, 0, n_bool},
    {"comm_overlap.batch_p2p_comm", K_P2P_BATCH, V_BOOL, 1, 0, 0, n_bool},
    {"comm_overlap.defer_embedding_wgrad_compute", K_WGRAD_DEFER, V_BOOL, 1, 0,
     0, n_bool},
    {"model.overlap_p2p_comm", K_P2P_OVERLAP, V_BOOL, 0, 0, 0, n_bool},
    {"model.batch_p2p_comm", K_P2P_BATCH, V_BOOL, 0, 0, 0, n_bool},
    {"model.cross_entropy_loss_fusion", K_CE, V_BOOL, 0, 0, 0, n_bool},
    {"model.cross_entropy_fusion_impl", K_CE_IMPL, V_NAME, 0, 0, 0, n_ce_impl},
    {"model.attention_backend", K_ATTN, V_NAME, 1, 0, 0, n_attn},
    {"model.attention_dropout", K_ATTN_DROP, V_FRAC, 0, 0, 0, NULL},
    {"model.hidden_dropout", K_HID_DROP, V_FRAC, 0, 0, 0, NULL},
    {"model.vocab_size", K_VOCAB_MODEL, V_INT, 1, 1, 1LL << 24, NULL},
    {"tokenizer.vocab_size", K_VOCAB_TOK, V_INT, 0, 1, 1LL << 24, NULL},
    {"model.make_vocab_size_divisible_by", K_DIVISIBLE, V_INT, 0, 128, 128,
     NULL},
    {"model.num_layers", K_LAYERS, V_INT, 0, 1, 100000, NULL},
    {"model.hidden_size", K_HIDDEN, V_INT, 0, 1, 1LL << 20, NULL},
    {"model.num_attention_heads", K_HEADS, V_INT, 0, 1, 65536, NULL},
    {"model.num_query_groups", K_GROUPS, V_INT, 1, 1, 65536, NULL},
    {"model.kv_channels", K_KV_CH, V_INT, 1, 1, 65536, NULL},
    {"model.ffn_hidden_size", K_FFN, V_INT, 0, 1, 1LL << 22, NULL},
    {"model.normalization", K_NORM, V_NAME, 0, 0, 0, n_norm},
    {"model.activation_func", K_ACT_FUNC, V_NAME, 0, 0, 0, n_act},
    {"model.gated_linear_unit", K_GLU, V_BOOL, 0, 0, 0, n_bool},
    {"model.position_embedding_type", K_POS, V_NAME, 0, 0, 0, n_pos},
    {"model.share_embeddings_and_output_weights", K_TIED, V_BOOL, 0, 0, 0,
     n_bool},
    {"model.add_bias_linear", K_BIAS_LINEAR, V_BOOL, 0, 0, 0, n_bool},
    {"model.add_qkv_bias", K_QKV_BIAS, V_BOOL, 0, 0, 0, n_bool},
    /* issue 31: RoPE's share and base, local attention, sinks */
    {"model.rotary_percent", K_ROTARY_PCT, V_NUM, 0, 0, 1, NULL},
    {"model.rotary_base", K_ROTARY_BASE, V_NUM, 0, 1, 1000000000000LL, NULL},
    {"model.window_size", K_WINDOW, V_STR, 1, 0, 0, NULL},
    {"model.window_attn_skip_freq", K_WINDOW_SKIP, V_INT, 1, 1, 100000, NULL},
    {"model.softmax_type", K_SOFTMAX, V_NAME, 0, 0, 0, n_softmax},
    /* mixture of experts: TransformerConfig / ModelParallelConfig fields
     * (also read by NeMo 1 where it has them) */
    {"model.num_moe_experts", K_EXPERTS, V_INT, 1, 1, 1000000, NULL},
    {"model.moe_router_topk", K_MOE_TOPK, V_INT, 0, 1, 1000000, NULL},
    {"model.moe_ffn_hidden_size", K_MOE_FFN, V_INT, 1, 1, 1LL << 22, NULL},
    {"model.moe_shared_expert_intermediate_size", K_MOE_SHARED, V_INT, 1, 1,
     1LL << 22, NULL},
    {"model.moe_shared_expert_gate", K_MOE_SHARED_GATE, V_BOOL, 0, 0, 0,
     n_bool},
    {"model.moe_layer_freq", K_MOE_FREQ, V_STR, 0, 0, 0, NULL},
    {"model.moe_router_score_function", K_MOE_SCORE, V_NAME, 0, 0, 0, n_score},
    {"model.moe_router_num_groups", K_MOE_GROUPS, V_INT, 1, 1, 1000000, NULL},
    {"model.moe_router_group_topk", K_MOE_GROUP_TOPK, V_INT, 1, 1, 1000000,
     NULL},
    {"model.moe_expert_capacity_factor", K_MOE_CAPACITY, V_NUM, 1, 0, 1000000,
     NULL},
    {"model.expert_model_parallel_size", K_EP, V_INT, 0, 1, 1000000, NULL},
    {"model.expert_tensor_parallel_size", K_ETP, V_INT, 1, 1, 65536, NULL},
    {"model.moe_token_dispatcher_type", K_MOE_DISPATCHER, V_NAME, 0, 0, 0,
     n_dispatcher},
    {"model.qk_layernorm", K_QK_NORM, V_BOOL, 0, 0, 0, n_bool},
    {"model.mtp_num_layers", K_MTP, V_INT, 1, 0, 1000, NULL},
    {"model.moe_shared_expert_overlap", K_MOE_SHARED_OVERLAP, V_BOOL, 0, 0, 0,
     n_bool},
    {"model.overlap_moe_expert_parallel_comm", K_MOE_A2A_OVERLAP, V_BOOL, 0,
     0, 0, n_bool},
    {"model.delay_wgrad_compute", K_DELAY_WGRAD, V_BOOL, 0, 0, 0, n_bool},
    {"model.moe_flex_dispatcher_backend", K_MOE_FLEX_BACKEND, V_NAME, 0, 0, 0,
     n_flex_backend},
    {"model.moe_router_padding_for_quantization", K_MOE_ROUTER_PAD, V_BOOL,
     0, 0, 0, n_bool},
    {"model.moe_grouped_gemm", K_MOE_INERT, V_BOOL, 0, 0, 0, n_bool},
    {"model.moe_permute_fusion", K_MOE_PERMUTE, V_BOOL, 0, 0, 0, n_bool},
    {"model.moe_router_fusion", K_MOE_ROUTER, V_BOOL, 0, 0, 0, n_bool},
    {"ddp.fsdp_double_buffer", K_FSDP_DB, V_BOOL, 0, 0, 0, n_bool},
    {"model.cuda_graph_impl", K_CG_IMPL, V_NAME, 0, 0, 0, n_cg_impl},
    {"model.cuda_graph_scope", K_CG_SCOPE, V_STR, 1, 0, 0, NULL},
    {"model.cuda_graph_modules", K_CG_SCOPE, V_STR, 1, 0, 0, NULL},
    {"model.moe_router_load_balancing_type", K_MOE_INERT, V_STR, 0, 0, 0, NULL},
    {"model.moe_aux_loss_coeff", K_MOE_INERT, V_STR, 0, 0, 0, NULL},
    {"model.moe_router_enable_expert_bias", K_MOE_INERT, V_BOOL, 0, 0, 0,
     n_bool},
    {"model.moe_router_pre_softmax", K_MOE_INERT, V_BOOL, 0, 0, 0, n_bool},
    /* memory savers (issue 28): OptimizerConfig and TransformerConfig
     * fields; NeMo 1 has model.cpu_offloading* under the same names */
    {"optimizer.use_precision_aware_optimizer", K_PA_OPT, V_BOOL, 0, 0, 0,
     n_bool},
    {"optimizer.main_grads_dtype", K_MAIN_GRADS, V_NAME, 0, 0, 0, n_odtype},
    {"optimizer.main_params_dtype", K_MAIN_PARAMS, V_NAME, 0, 0, 0, n_odtype},
    {"optimizer.exp_avg_dtype", K_EXP_AVG, V_NAME, 0, 0, 0, n_odtype},
    {"optimizer.exp_avg_sq_dtype", K_EXP_AVG_SQ, V_NAME, 0, 0, 0, n_odtype},
    {"optimizer.optimizer_cpu_offload", K_OPT_OFFLOAD, V_BOOL, 0, 0, 0, n_bool},
    {"optimizer.optimizer_offload_fraction", K_OPT_OFFLOAD_FRAC, V_FRAC, 0, 0,
     0, NULL},
    {"optimizer.overlap_cpu_optimizer_d2h_h2d", K_OPT_OFFLOAD_OVERLAP, V_BOOL,
     0, 0, 0, n_bool},
    {"optimizer.bf16", K_OPT_INERT, V_BOOL, 0, 0, 0, n_bool},
    {"optimizer.fp16", K_OPT_INERT, V_BOOL, 0, 0, 0, n_bool},
    {"model.cpu_offloading", K_CPU_OFFLOAD, V_BOOL, 0, 0, 0, n_bool},
    {"model.cpu_offloading_num_layers", K_CPU_OFFLOAD_LAYERS, V_INT, 0, 0,
     100000, NULL},
    {"model.cpu_offloading_activations", K_CPU_OFFLOAD_ACT, V_BOOL, 0, 0, 0,
     n_bool},
    {"model.cpu_offloading_weights", K_CPU_OFFLOAD_W, V_BOOL, 0, 0, 0, n_bool},
    {"model.fine_grained_activation_offloading", K_FG_OFFLOAD, V_BOOL, 0, 0, 0,
     n_bool},
    {"model.offload_modules", K_OFFLOAD_MODULES, V_STR, 1, 0, 0, NULL},
    {"model.activation_offload_fraction", K_OFFLOAD_FRAC, V_FRAC, 0, 0, 0,
     NULL},
    {"model.microbatch_group_size_per_vp_stage", K_MB_GROUP, V_INT, 1, 1,
     1000000, NULL},
    /* NeMo 1 megatron_gpt_config.yaml keys (with the model sizes above
     * where the names agree) */
    {"trainer.num_nodes", K_NODES, V_INT, 0, 1, 1000000, NULL},
    {"trainer.devices", K_DEVICES, V_INT, 0, 1, 1024, NULL},
    {"trainer.precision", K_PRECISION1, V_NAME, 0, 0, 0, n_prec1},
    {"model.micro_batch_size", K_MBS, V_INT, 0, 1, BIG, NULL},
    {"model.global_batch_size", K_GBS, V_INT, 0, 1, BIG, NULL},
    {"model.encoder_seq_length", K_SEQ_DATA, V_INT, 0, 1, BIG, NULL},
    {"model.max_position_embeddings", K_MAXPOS, V_INT, 0, 1, 1LL << 26, NULL},
    {"model.activation", K_ACT1, V_NAME, 0, 0, 0, n_act1},
    {"model.bias", K_BIAS1, V_BOOL, 0, 0, 0, n_bool},
    {"model.activations_checkpoint_granularity", K_RC_GRAN, V_NAME, 1, 0, 0,
     n_rc_gran},
    {"model.activations_checkpoint_method", K_RC_METHOD, V_NAME, 1, 0, 0,
     n_rc_method},
    {"model.activations_checkpoint_num_layers", K_RC_LAYERS, V_INT, 1, 1,
     100000, NULL},
    {"model.fp8", K_FP8_1, V_BOOL, 0, 0, 0, n_bool},
    {"model.fp8_hybrid", K_FP8_HYBRID, V_BOOL, 0, 0, 0, n_bool},
    {"model.fp8_params", K_FP8_PARAMS, V_BOOL, 0, 0, 0, n_bool},
    {"model.ub_tp_comm_overlap", K_TP_UB, V_BOOL, 0, 0, 0, n_bool},
    {"model.optim.name", K_OPTIM1, V_NAME, 0, 0, 0, n_optim1},
};
#define N_KEYS ((int)(sizeof launch_nemo_keys / sizeof launch_nemo_keys[0]))
const int launch_nemo_key_count = N_KEYS;

/* Sections whose keys change nothing trainplan estimates (paths, logging,
 * learning rates, data sources, checkpoints): skipped. */
static const char *const nemo_skipped[] = {
    "checkpoint.", "logger.", "optimizer.", "scheduler.", "rng.",
    "validation.", "profiling.", "dist.", "ft.", "straggler.",
    "nvrx_straggler.", "env_vars.", "rerun_state_machine.",
    "tensor_inspect.", "inprocess_restart.", "train.", "dataset.",
    "tokenizer.", "exp_manager.", "trainer.", "model.optim.",
    "model.tokenizer.", "model.data.", "name", "run.",
};


static const nemo_key *key_find(const char *k)
{
    for (int i = 0; i < N_KEYS; i++)
        if (strcmp(launch_nemo_keys[i].key, k) == 0) return &launch_nemo_keys[i];
    return NULL;
}

static void join_names(const char *const *names, char *out, size_t cap)
{
    out[0] = '\0';
    for (int i = 0; names[i]; i++) {
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%s", i ? ", " : "", names[i]);
    }
}

/* Parses value s of key k (line ln of file) into r. */
static int set_value(nemo_read *r, const nemo_key *k, const char *s,
                     const char *file, int ln, tp_err *e)
{
    nemo_val *v = &r->v[k->id];
    memset(v, 0, sizeof *v);
    v->set = 1;
    v->line = ln;
    snprintf(v->s, sizeof v->s, "%s", s);
    if (strcmp(s, "null") == 0 || strcmp(s, "None") == 0
        || strcmp(s, "~") == 0) {
        if (!k->null_ok)
            return tp_errf(e, TP_EDATA, "%s:%d: %s: null is not a value "
                           "trainplan can estimate; give one",
                           file, ln, k->key);
        v->null = 1;
        return TP_OK;
    }
    char names[512];
    switch (k->kind) {
    case V_INT:
        if (tp_parse_int(s, k->lo, k->hi, &v->i))
            return tp_errf(e, TP_EDATA, "%s:%d: %s: expected an integer in "
                           "[%lld, %lld]%s, found '%s'",
                           file, ln, k->key, k->lo, k->hi,
                           k->null_ok ? " or null" : "", s);
        return TP_OK;
    case V_FRAC:
        if (tp_parse_num(s, &v->x) || !(v->x >= 0 && v->x <= 1))
            return tp_errf(e, TP_EDATA, "%s:%d: %s: expected a probability "
                           "in [0, 1], found '%s'", file, ln, k->key, s);
        return TP_OK;
    case V_BOOL:
    case V_NAME:
        for (int i = 0; k->names[i]; i++) {
            /* Python's True/False as well as YAML's true/false */
            if (strcmp(s, k->names[i]) == 0
                || (k->kind == V_BOOL && tp_streq_ci(s, k->names[i]))) {
                v->name = i;
                v->i = k->kind == V_BOOL ? i == 0 : i;
                return TP_OK;
            }
            /* @register's hyphenated names (mixed_precision.py) */
            if (k->id == K_MP) {
                char h[128];
                snprintf(h, sizeof h, "%s", k->names[i]);
                for (char *p = h; *p; p++)
                    if (*p == '_') *p = '-';
                if (strcmp(s, h) == 0) {
                    v->name = i;
                    v->i = i;
                    return TP_OK;
                }
            }
        }
        join_names(k->names, names, sizeof names);
        return tp_errf(e, TP_EDATA, "%s:%d: %s: expected one of %s%s, found "
                       "'%s'", file, ln, k->key, names,
                       k->null_ok ? ", null" : "", s);
    case V_STR:
        return TP_OK;
    case V_NUM:
        if (tp_parse_num(s, &v->x) || !(v->x >= (double)k->lo)
            || v->x > (double)k->hi)
            return tp_errf(e, TP_EDATA, "%s:%d: %s: expected a number in "
                           "[%lld, %lld]%s, found '%s'", file, ln, k->key,
                           k->lo, k->hi, k->null_ok ? " or null" : "", s);
        return TP_OK;
    }
    return TP_OK;
}

/* Reads key=value (or key: value) item kv. */
int launch_nemo_read_item(nemo_read *r, const char *key, const char *val,
                          const char *file, int ln, tp_err *e)
{
    if (key[0] == '~')
        return tp_errf(e, TP_EDATA, "%s:%d: %s: deleting a key (~) leaves "
                       "the recipe's default, which trainplan does not "
                       "know; give the value", file, ln, key);
    while (*key == '+') key++;
    const nemo_key *k = key_find(key);
    if (k) return set_value(r, k, val, file, ln, e);
    for (size_t i = 0; i < sizeof nemo_skipped / sizeof nemo_skipped[0]; i++)
        if (strncmp(key, nemo_skipped[i], strlen(nemo_skipped[i])) == 0)
            return TP_OK;
    return tp_errf(e, TP_EDATA, "%s:%d: %s: not a key trainplan reads (it "
                   "reads the layout, batch, precision, overlap and model-"
                   "size keys that trainplan search writes); remove it or "
                   "set what it means with estimate's options", file, ln, key);
}

/* The next whitespace-separated word of *p, quotes kept together and
 * removed; NUL-terminated in place. NULL at the end. */
static char *next_word(char **p)
{
    char *s = *p;
    while (*s && isspace((unsigned char)*s)) s++;
    if (!*s) return NULL;
    char *w = s, *o = s;
    char q = 0;
    for (; *s; s++) {
        if (q) {
            if (*s == q) q = 0;
            else *o++ = *s;
        } else if (*s == '"' || *s == '\'') {
            q = *s;
        } else if (isspace((unsigned char)*s)) {
            s++;
            break;
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
    *p = s;
    return w;
}

/* --recipe's value at file:ln into r. One recipe a job: the same name
 * again (the writer's "# launch:" line beside the command) is one; two
 * names are TP_EDATA naming both, as the Megatron-LM reader refuses a
 * flag given twice with two values and the torchtitan one a key. */
static int set_recipe(nemo_read *r, const char *v, const char *file, int ln,
                      tp_err *e)
{
    if (r->recipe[0] && strncmp(r->recipe, v, sizeof r->recipe - 1) != 0)
        return tp_errf(e, TP_EDATA, "%s:%d: --recipe given twice, as '%s' "
                       "(line %d) and '%s': one recipe a job", file, ln,
                       r->recipe, r->recipe_line, v);
    if (!r->recipe[0]) r->recipe_line = ln;
    snprintf(r->recipe, sizeof r->recipe, "%s", v);
    return TP_OK;
}

/* A torchrun ... run_recipe.py command (or the writer's "# launch:"
 * line): the nodes, the GPUs per node, the recipe, and any key=value. */
static int read_command(nemo_read *r, char *p, const char *file, int ln,
                        int items, tp_err *e)
{
    char *w;
    while ((w = next_word(&p)) != NULL) {
        long long *want = NULL;
        const char *flag = w;
        char *eq = strchr(w, '=');
        if (strncmp(w, "--", 2) == 0) {
            char *arg = NULL;
            if (eq) *eq = '\0', arg = eq + 1;
            int is_rec = strcmp(w, "--recipe") == 0;
            if (strcmp(w, "--nnodes") == 0) want = &r->nnodes;
            else if (strcmp(w, "--nproc-per-node") == 0
                     || strcmp(w, "--nproc_per_node") == 0)
                want = &r->nproc;
            else if (!is_rec) continue; /* --mode pretrain and the like */
            if (!arg) arg = next_word(&p);
            if (!arg)
                return tp_errf(e, TP_EDATA, "%s:%d: %s needs a value", file,
                               ln, flag);
            if (is_rec) {
                int rc = set_recipe(r, arg, file, ln, e);
                if (rc) return rc;
            } else if (tp_parse_int(arg, 1, 1000000, want)) {
                return tp_errf(e, TP_EDATA, "%s:%d: %s: expected an integer "
                               "in [1, 1000000], found '%s'", file, ln, flag,
                               arg);
            }
        } else if (eq && items && eq != w) {
            *eq = '\0';
            int rc = launch_nemo_read_item(r, w, eq + 1, file, ln, e);
            if (rc) return rc;
        }
    }
    return TP_OK;
}

/* A torchrun ... run_recipe.py command as the shell expanded it
 * (launch_shell.c): the nodes, the GPUs per node, the recipe, and its
 * key=value overrides. A value not known from the file is refused where
 * it is read (an override trainplan reads, the recipe), and so is a word
 * of unknown start after the script (it could hold overrides); torchrun's
 * counts then come from --gpus, as for any count that is not a number. */
int launch_nemo_read_command_sh(nemo_read *r, const launch_sh_word *w, int n,
                                const char *file, tp_err *e)
{
    int after = 0;
    for (int i = 0; i < n; i++) {
        const char *s = w[i].s;
        int ln = w[i].line, unk = (w[i].flags & LAUNCH_SH_UNKNOWN) != 0;
        size_t len = strlen(s);
        if (w[i].flags & LAUNCH_SH_ASSIGN) continue;
        if (len >= 3 && strcmp(s + len - 3, ".py") == 0) {
            after = 1;
            continue;
        }
        const char *eq = strchr(s, '=');
        if (unk && after
            && ((w[i].flags & LAUNCH_SH_HEAD)
                || (size_t)w[i].at <= (eq ? (size_t)(eq - s) : len)))
            return tp_errf(e, TP_EDATA, "%s:%d: an argument of the recipe "
                           "script that could hold overrides is not known "
                           "from the file: %s; set it in the file (or "
                           "remove it)", file, ln, launch_sh_why(&w[i]));
        if (strncmp(s, "--", 2) == 0) {
            char flag[64];
            size_t fl = eq ? (size_t)(eq - s) : len;
            if (fl >= sizeof flag) continue;
            memcpy(flag, s, fl);
            flag[fl] = '\0';
            long long *want = NULL;
            int is_rec = strcmp(flag, "--recipe") == 0;
            if (strcmp(flag, "--nnodes") == 0) want = &r->nnodes;
            else if (strcmp(flag, "--nproc-per-node") == 0
                     || strcmp(flag, "--nproc_per_node") == 0)
                want = &r->nproc;
            else if (!is_rec) continue;
            const launch_sh_word *vw = &w[i];
            const char *arg = eq ? eq + 1 : NULL;
            if (!arg) {
                if (i + 1 >= n)
                    return tp_errf(e, TP_EDATA, "%s:%d: %s needs a value",
                                   file, ln, flag);
                vw = &w[++i];
                arg = vw->s;
            }
            if (vw->flags & LAUNCH_SH_UNKNOWN) {
                if (!is_rec) continue;
                return tp_errf(e, TP_EDATA, "%s:%d: --recipe: its value is "
                               "not known from the file: %s", file, ln,
                               launch_sh_why(vw));
            }
            if (is_rec) {
                int rc = set_recipe(r, arg, file, ln, e);
                if (rc) return rc;
            } else if (tp_parse_int(arg, 1, 1000000, want)) {
                return tp_errf(e, TP_EDATA, "%s:%d: %s: expected an integer "
                               "in [1, 1000000], found '%s'", file, ln, flag,
                               arg);
            }
        } else if (eq && eq != s && after) {
            char key[256];
            size_t kl = (size_t)(eq - s);
            if (kl >= sizeof key) kl = sizeof key - 1;
            memcpy(key, s, kl);
            key[kl] = '\0';
            if (unk) {
                const char *k = key;
                while (*k == '+') k++;
                int skipped = 0;
                for (size_t j = 0;
                     j < sizeof nemo_skipped / sizeof nemo_skipped[0]; j++)
                    if (strncmp(k, nemo_skipped[j], strlen(nemo_skipped[j]))
                        == 0)
                        skipped = 1;
                if (skipped) continue;
                return tp_errf(e, TP_EDATA, "%s:%d: %s: its value is not "
                               "known from the file: %s", file, ln, key,
                               launch_sh_why(&w[i]));
            }
            int rc = launch_nemo_read_item(r, key, eq + 1, file, ln, e);
            if (rc) return rc;
        }
    }
    return TP_OK;
}

/* A job written as a shell script: a torchrun ... run_recipe.py command
 * not in a comment (over continuation lines, with variables). */
int launch_nemo_is_launch_script(const char *text)
{
    for (const char *p = text; *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        const char *s = p;
        while (s < p + n && isspace((unsigned char)*s)) s++;
        if (s < p + n && *s != '#') {
            char line[4096];
            size_t k = (size_t)(p + n - s) < sizeof line - 1
                           ? (size_t)(p + n - s) : sizeof line - 1;
            memcpy(line, s, k);
            line[k] = '\0';
            if (strstr(line, "torchrun") || strstr(line, "run_recipe.py"))
                return 1;
        }
        p = eol ? eol + 1 : p + n;
    }
    return 0;
}

/* One line: a comment ("# launch:" read), a YAML "key: value", or
 * key=value words. */
int launch_nemo_read_line(nemo_read *r, char *s, const char *file, int ln,
                          tp_err *e)
{
    while (*s && isspace((unsigned char)*s)) s++;
    if (s[0] == '#') {
        if (strncmp(s, "# launch:", 9) == 0)
            return read_command(r, s + 9, file, ln, 0, e);
        return TP_OK;
    }
    /* a comment after the value, outside quotes */
    char q = 0;
    for (char *p = s; *p; p++) {
        if (q) {
            if (*p == q) q = 0;
        } else if (*p == '"' || *p == '\'') {
            q = *p;
        } else if (*p == '#' && (p == s || isspace((unsigned char)p[-1]))) {
            *p = '\0';
            break;
        }
    }
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    if (!n) return TP_OK;
    if (strstr(s, "torchrun") || strstr(s, "run_recipe.py"))
        return read_command(r, s, file, ln, 1, e);
    char *eq = strchr(s, '='), *colon = strchr(s, ':');
    if (colon && (!eq || colon < eq)
        && (colon[1] == '\0' || isspace((unsigned char)colon[1]))) {
        *colon = '\0';
        char *k = s, *v = colon + 1;
        size_t kn = strlen(k);
        while (kn && isspace((unsigned char)k[kn - 1])) k[--kn] = '\0';
        char *vv = next_word(&v);
        if (!vv)
            return tp_errf(e, TP_EDATA, "%s:%d: %s: a YAML section; write "
                           "each key on its own line as section.key: value",
                           file, ln, k);
        return launch_nemo_read_item(r, k, vv, file, ln, e);
    }
    char *p = s, *w;
    while ((w = next_word(&p)) != NULL) {
        char *weq = strchr(w, '=');
        if (!weq || weq == w)
            return tp_errf(e, TP_EDATA, "%s:%d: expected key=value (or key: "
                           "value), found '%s'", file, ln, w);
        *weq = '\0';
        int rc = launch_nemo_read_item(r, w, weq + 1, file, ln, e);
        if (rc) return rc;
    }
    return TP_OK;
}
