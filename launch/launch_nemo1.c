/*
 * launch_nemo1.c - NeMo's job for a layout in the NeMo 1.x launcher's
 * form (--nemo-format nemo1): the YAML keys of examples/nlp/
 * language_modeling/conf/megatron_gpt_config.yaml at NVIDIA/NeMo v2.4.0
 * (2381f42f; the file last changed in e564e669, 2025-01-30, and is frozen
 * since), "key: value" a line. What NeMo 1 cannot express of what the
 * estimate assumed is a "# ..." comment, never a key with another
 * meaning. The Megatron-Bridge form, and the sources of both, are
 * launch_nemo.c's; the reader is launch_nemo_read.c.
 */
#include "launch.h"
#include "launch_int.h"

#include <string.h>

#include "hw.h"

#define NEMO1_TARGET "NeMo 1.x launcher YAML (examples/nlp/language_modeling/" \
                     "conf/megatron_gpt_config.yaml, NVIDIA/NeMo v2.4.0)"

/* NeMo 1's model.activation values (megatron_gpt_config.yaml comment). */
static const char *const nemo1_act[SPACE_ACT_COUNT] = {
    [SPACE_ACT_GELU] = "gelu",
    [SPACE_ACT_RELU] = NULL, /* not among NeMo 1's activations */
    [SPACE_ACT_SQUARED_RELU] = "squared-relu",
    [SPACE_ACT_SWIGLU] = "swiglu",
    [SPACE_ACT_GEGLU] = "geglu",
};
_Static_assert(sizeof nemo1_act / sizeof nemo1_act[0] == SPACE_ACT_COUNT,
               "nemo1_act mirrors space_act");

static void put_nemo1_moe(const space_model *m, const space_layout *l,
                          launch_text *b)
{
    if (m->kv_lora_rank > 0)
        launch_text_put(b, "# not expressible: multi-head latent attention (KV "
                "rank %lld): NeMo 1's GPT model has no MLA ranks\n",
            (long long)m->kv_lora_rank);
    if (m->num_experts <= 0) return;
    launch_text_put(b, "model.num_moe_experts: %lld  # read by "
                "megatron_gpt_model.py (cfg.get)\n"
            "model.moe_router_topk: %lld  # read by megatron_gpt_model.py\n"
            "model.moe_grouped_gemm: true  # read by megatron_gpt_model.py\n"
            "model.expert_model_parallel_size: %lld\n",
        (long long)m->num_experts, (long long)m->top_k,
        (long long)space_layout_ep(l));
    if (m->expert_ffn_hidden != m->ffn_hidden)
        launch_text_put(b, "# not expressible: experts of inner size %lld (the "
                "dense FFN's is %lld): NeMo 1 sizes them as "
                "model.ffn_hidden_size\n",
            (long long)m->expert_ffn_hidden, (long long)m->ffn_hidden);
    if (m->shared_experts > 0 || m->first_dense_layers > 0
        || m->moe_layer_freq > 1 || m->router_sigmoid || m->router_groups > 0)
        launch_text_put(b, "# not expressible: shared experts, dense layers "
                "among the MoE ones, sigmoid or group-limited routing: no "
                "NeMo 1 key\n");
    if (space_layout_etp(l) != l->tp)
        launch_text_put(b, "# not expressible: expert TP %lld (TP %lld): NeMo 1 "
                "has no expert_tensor_parallel_size key\n",
            (long long)space_layout_etp(l), (long long)l->tp);
    if (l->moe_dispatcher != SPACE_MOE_ALLGATHER)
        launch_text_put(b, "# not expressible: the %s dispatcher: NeMo 1 has no "
                "moe_token_dispatcher_type key (Megatron-Core's allgather)\n",
            space_moe_dispatcher_name(l));
    if (l->moe_comm_overlap != SPACE_MOE_OVERLAP_NONE)
        launch_text_put(b, "# not expressible: the MoE dispatch's %s overlap: "
                "NeMo 1 has no key for it\n",
            space_moe_overlap_name(l));
    if (l->moe_router_pad)
        launch_text_put(b, "# not expressible: the router's padding for fp8: "
                "NeMo 1 has no key for it\n");
}

/* The NeMo 1.x launcher's keys: today's output with what the YAML cannot
 * express as comments (context parallelism, uneven chunks, ZeRO-2/3,
 * fp8 scalings other than delayed). */
void launch_nemo1_write(const launch_plan *c, launch_text *b)
{
    const space_layout *l = c->layout;
    const space_model *m = c->model;
    int64_t g, nodes = launch_nodes(c, &g);
    int64_t L = m->num_layers, v = l->vpp > 1 ? l->vpp : 1;
    launch_text_put(b, "# " NEMO1_TARGET "\n");
    if (l->framework != SPACE_FW_MEGATRON_CORE)
        launch_text_put(b, "# estimated for %s's software; these keys run "
                "Megatron-Core's\n",
            space_framework_names[l->framework]);
    launch_text_put(b, "trainer.num_nodes: %lld\ntrainer.devices: %lld\n",
        (long long)nodes, (long long)g);
    launch_text_put(b, "trainer.precision: %s\n",
        l->dtype == HW_FP16 ? "16-mixed" : "bf16-mixed");
    launch_text_put(b, "model.num_layers: %lld\nmodel.hidden_size: %lld\n"
            "model.ffn_hidden_size: %lld\nmodel.num_attention_heads: %lld\n"
            "model.num_query_groups: %lld\nmodel.kv_channels: %lld\n"
            "model.normalization: %s\n",
        (long long)L, (long long)m->hidden, (long long)m->ffn_hidden,
        (long long)m->heads, (long long)m->kv_heads,
        (long long)launch_nemo_head_dim_of(m),
        space_norm_names[m->norm]);
    if (nemo1_act[m->act])
        launch_text_put(b, "model.activation: %s\n", nemo1_act[m->act]);
    else
        launch_text_put(b, "# not expressible: "
                "activation %s, not among NeMo 1's\n",
            space_act_names[m->act]);
    launch_text_put(b, "model.position_embedding_type: %s\n",
        m->pos == SPACE_POS_LEARNED ? "learned_absolute"
                                    : space_pos_names[m->pos]);
    launch_text_put(b, "model.max_position_embeddings: %lld\n",
        (long long)m->max_position);
    if (m->qkv_bias == m->out_bias && m->out_bias == m->mlp_bias)
        launch_text_put(b, "model.bias: %s\n", launch_nemo_tf(m->qkv_bias));
    else
        launch_text_put(b, "# not expressible: biases (Q/K/V %d, output %d, MLP "
                "%d); NeMo 1 has "
                "one switch (model.bias)\n",
            m->qkv_bias, m->out_bias, m->mlp_bias);
    launch_text_put(b, "model.share_embeddings_and_output_weights: %s\n",
        launch_nemo_tf(m->tied_embeddings));
    launch_nemo_put_num(b, "model.hidden_dropout", ": ", m->hidden_dropout);
    launch_nemo_put_num(b, "model.attention_dropout", ": ", m->attn_dropout);
    launch_text_put(b, "model.make_vocab_size_divisible_by: 128\n"
            "# vocabulary %lld: NeMo 1 takes it from model.tokenizer\n",
        (long long)m->vocab);
    launch_text_put(b, "model.tensor_model_parallel_size: %lld\n"
            "model.pipeline_model_parallel_size: %lld\n",
        (long long)l->tp, (long long)l->pp);
    /* NeMo 1 splits the layers evenly only (megatron_gpt_model.py): any
     * other split of Megatron-Core's is not expressible */
    char split[2200];
    space_split_str(l, split, sizeof split);
    if (L % (l->pp * v) || split[0])
        launch_text_put(b, "# not expressible: the pipeline split%s%s%s: NeMo 1 "
                "splits %lld layers over PP %lld x %lld chunks evenly only\n",
            split[0] ? " (" : "", split, split[0] ? ")" : "",
            (long long)L, (long long)l->pp, (long long)v);
    else if (v > 1)
        launch_text_put(b, "model.virtual_pipeline_model_parallel_size: %lld\n",
            (long long)v);
    else
        launch_text_put(b, "model.virtual_pipeline_model_parallel_size: null\n");
    if (l->pp > 1 && v > 1 && L % (l->pp * v) == 0)
        launch_text_put(b, "model.overlap_p2p_comm: %s\nmodel.batch_p2p_comm: %s\n",
            launch_nemo_tf(!l->no_pp_overlap), launch_nemo_tf(l->no_pp_overlap));
    /* Not in the YAML, but the model reads it (cfg.get in
     * megatron_base_model.py, MegatronBaseModel.__init__): as a Hydra
     * override it takes a '+'. NeMo 1 has no CP exchange key (the ring). */
    launch_text_put(b, "model.context_parallel_size: %lld  # not in "
                "megatron_gpt_config.yaml; NeMo's megatron_base_model.py reads "
                "it (+model.context_parallel_size=%lld as an override)\n",
            (long long)l->cp, (long long)l->cp);
    if (l->cp > 1 && l->cp_comm != SPACE_CP_P2P)
        launch_text_put(b, "# not expressible: CP exchange %s; NeMo 1 has no key "
                "for it\n",
            space_cp_comm_names[l->cp_comm]);
    launch_text_put(b, "model.sequence_parallel: %s\n",
                    launch_nemo_tf(l->sp && l->tp > 1));
    put_nemo1_moe(m, l, b);
    launch_text_put(b,
                    "model.micro_batch_size: %lld\nmodel.global_batch_size: %lld\n",
        (long long)l->mbs, (long long)l->gbs);
    launch_text_put(b, "model.encoder_seq_length: %lld\n", (long long)l->seq);
    if (l->recompute == SPACE_RECOMPUTE_NONE)
        launch_text_put(b, "model.activations_checkpoint_granularity: null\n");
    else if (l->recompute == SPACE_RECOMPUTE_SELECTIVE) {
        launch_text_put(b, "model.activations_checkpoint_granularity: selective\n");
        if (space_recompute_modules(l) != SPACE_RC_CORE_ATTN) {
            char names[160];
            space_rc_modules_str(space_recompute_modules(l), ",", names,
                                 sizeof names);
            launch_text_put(b, "# not expressible: recompute modules %s (NeMo "
                    "1's selective is the attention core)\n", names);
        }
    }
    else if (l->recompute == SPACE_RECOMPUTE_FULL)
        launch_text_put(b, "model.activations_checkpoint_granularity: full\n"
                "model.activations_checkpoint_method: %s\n"
                "model.activations_checkpoint_num_layers: %lld\n",
            space_recompute_method_names[l->recompute_method],
            (long long)(l->recompute_layers > 0 ? l->recompute_layers : 1));
    else
        launch_text_put(b, "# not expressible: recompute %s (torchtitan's "
                "op-level policy); NeMo 1's selective is the attention core\n",
            space_recompute_names[l->recompute]);
    /* NeMo 1's fp8 is Transformer Engine's delayed scaling (fp8_hybrid,
     * fp8_amax_history_len); it has no recipe key. */
    if (l->dtype == HW_FP8 && l->fp8_recipe == SPACE_FP8_DELAYED)
        launch_text_put(b, "model.fp8: true\nmodel.fp8_hybrid: true\n");
    else if (l->dtype == HW_FP4)
        launch_text_put(b, "# not expressible: NVFP4; NeMo 1 has delayed fp8 "
                "scaling only: these keys train in bf16\n");
    else if (l->dtype == HW_FP8)
        launch_text_put(b, "# not expressible: fp8 %s scaling; NeMo 1 has delayed "
                "scaling only\n",
            space_fp8_recipe_names[l->fp8_recipe]);
    /* fp8 weights as the parameters: read with cfg.get by
     * megatron_base_model.py (setup_optimization), not in the YAML */
    if (l->dtype == HW_FP8 && l->fp8_recipe == SPACE_FP8_DELAYED
        && l->fp8_params)
        launch_text_put(b, "model.fp8_params: true  # not in "
                "megatron_gpt_config.yaml; megatron_base_model.py reads it\n");
    if (space_fp8_attention(l))
        launch_text_put(b, "# not expressible: fp8 dot-product attention: "
                "NeMo 1's YAML has no key for it\n");
    if (l->tp > 1 && l->tp_overlap == SPACE_TP_OVERLAP_ALL)
        launch_text_put(b, "model.ub_tp_comm_overlap: true\n");
    if (l->zero <= SPACE_ZERO_1)
        launch_text_put(b, "model.optim.name: %s\n",
            l->zero == SPACE_ZERO_1 ? "distributed_fused_adam" : "fused_adam");
    else
        launch_text_put(b, "# not expressible: ZeRO-%d; NeMo 1's "
                "distributed_fused_adam is the distributed optimizer\n",
            (int)l->zero);
    /* Memory savers: NeMo 1 has Transformer Engine's layer offload
     * (megatron_gpt_config.yaml: model.cpu_offloading*), nothing else. */
    if (l->act_offload_layers > 0)
        launch_text_put(b, "model.cpu_offloading: true\n"
                "model.cpu_offloading_num_layers: %lld\n"
                "model.cpu_offloading_activations: true\n"
                "model.cpu_offloading_weights: false\n",
            (long long)l->act_offload_layers);
    if (l->pa_optimizer || l->opt_offload > 0)
        launch_text_put(b, "# not expressible: %s: NeMo 1's optimizers (Apex's "
                "distributed_fused_adam, fused_adam) have no key for "
                "Megatron-Core's\n",
            l->opt_offload > 0 ? "the optimizer stepped on the host"
                               : "the precision-aware optimizer's dtypes");
    if (l->offload_modules)
        launch_text_put(b, "# not expressible: fine-grained activation "
                "offloading: NeMo 1 has no key for it\n");
    if (l->mb_group > 0 && l->vpp > 1)
        launch_text_put(b, "# not expressible: micro-batch groups of %lld: NeMo "
                "1 has no key for microbatch_group_size_per_vp_stage\n",
            (long long)l->mb_group);
    if (l->pp_schedule != SPACE_PP_1F1B)
        launch_text_put(b, "# not expressible: the %s pipeline schedule: "
                "Megatron-Core runs 1F1B and interleaved 1F1B only\n",
            space_pp_schedule_name(l));
}
