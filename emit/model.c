/*
 * model.c - the reports of `trainplan model list` and `model show`: the
 * presets in a table, and one model's every architecture field, its
 * parameter counts and its FLOPs per token.
 *
 * FLOPs are printed under the convention space.h states; the JSON names
 * it in "flops_convention" so nobody has to guess. Deliberately not here:
 * reading a config.json (space_model_resolve) and the warnings about what
 * it says that trainplan does not model (the caller's).
 */
#include "report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SEQ 2048

static const char flops_convention[] =
    "2 FLOPs per multiply-add; GEMMs only (incl. LM head, excl. embedding "
    "lookup, norms, softmax); attention QK^T and AV over the full sequence "
    "(non-causal, as Megatron-LM/Narayanan et al. 2021 count) unless the key "
    "says causal, capped by a sliding window on local layers; MLA's down and "
    "up projections; MTP modules included (fwd counts them; mtp_fwd says "
    "how much); backward = 2 x forward; no recomputation";

/* What each printed parameter count counts (the JSON's *_convention
 * strings, the text's notes). params_active is what the estimator's
 * per-token work counts; params_active_card the model card's figure. */
static const char total_convention[] =
    "every parameter: embedding, layers, final norm, LM head (when not "
    "tied); without MTP modules; vocabulary unpadded";
static const char active_convention[] =
    "the parameters one token touches: top_k of the routed experts, the "
    "shared experts and everything that is not an expert, embedding and LM "
    "head included";
static const char card_no_embedding[] =
    "as the model card counts (DeepSeek, OpenAI): params_active without "
    "the input embedding (a lookup, no GEMM), the LM head included";
static const char card_all[] =
    "as the model card counts (Mistral, Qwen, Meta): params_active, "
    "embedding and LM head included";

/* space_model.qk_norm's values. */
static const char *const qk_norm_names[3] = {"none", "per-head",
                                             "whole-projection"};

/* Every architecture field, as JSON. */
static cJSON *model_arch_json(const space_model *m)
{
    cJSON *a = cJSON_CreateObject();
    cJSON_AddNumberToObject(a, "num_layers", (double)m->num_layers);
    cJSON_AddNumberToObject(a, "hidden_size", (double)m->hidden);
    cJSON_AddNumberToObject(a, "num_attention_heads", (double)m->heads);
    cJSON_AddNumberToObject(a, "num_kv_heads", (double)m->kv_heads);
    cJSON_AddNumberToObject(a, "head_dim", (double)m->head_dim);
    cJSON_AddNumberToObject(a, "ffn_hidden_size", (double)m->ffn_hidden);
    cJSON_AddNumberToObject(a, "vocab_size", (double)m->vocab);
    cJSON_AddNumberToObject(a, "max_position_embeddings",
                            (double)m->max_position);
    cJSON_AddStringToObject(a, "activation", space_act_names[m->act]);
    cJSON_AddStringToObject(a, "norm", space_norm_names[m->norm]);
    cJSON_AddStringToObject(a, "position_embedding", space_pos_names[m->pos]);
    /* 0 in the model means all: said as 1 */
    cJSON_AddNumberToObject(a, "rotary_fraction",
                            m->rotary_fraction > 0 ? m->rotary_fraction : 1);
    cJSON_AddNumberToObject(a, "rope_theta", m->rope_theta);
    cJSON_AddBoolToObject(a, "tied_embeddings", m->tied_embeddings);
    cJSON_AddBoolToObject(a, "qkv_bias", m->qkv_bias);
    cJSON_AddBoolToObject(a, "out_bias", m->out_bias);
    cJSON_AddBoolToObject(a, "mlp_bias", m->mlp_bias);
    cJSON_AddBoolToObject(a, "parallel_attn_mlp", m->parallel_attn_mlp);
    cJSON_AddBoolToObject(a, "embed_norm", m->embed_norm);
    cJSON_AddNumberToObject(a, "attention_dropout", m->attn_dropout);
    cJSON_AddNumberToObject(a, "hidden_dropout", m->hidden_dropout);
    cJSON_AddNumberToObject(a, "num_experts", (double)m->num_experts);
    cJSON_AddNumberToObject(a, "moe_top_k", (double)m->top_k);
    cJSON_AddNumberToObject(a, "expert_ffn_hidden_size",
                            (double)m->expert_ffn_hidden);
    cJSON_AddNumberToObject(a, "shared_experts", (double)m->shared_experts);
    cJSON_AddNumberToObject(a, "shared_expert_ffn_hidden_size",
                            (double)m->shared_ffn_hidden);
    cJSON_AddNumberToObject(a, "first_dense_layers",
                            (double)m->first_dense_layers);
    cJSON_AddNumberToObject(a, "moe_layer_freq", (double)m->moe_layer_freq);
    cJSON_AddStringToObject(a, "moe_router_score",
                            m->router_sigmoid ? "sigmoid" : "softmax");
    cJSON_AddBoolToObject(a, "moe_router_bias", m->router_bias);
    cJSON_AddNumberToObject(a, "moe_router_groups", (double)m->router_groups);
    cJSON_AddNumberToObject(a, "moe_router_topk_groups",
                            (double)m->router_topk_groups);
    cJSON_AddNumberToObject(a, "moe_capacity_factor", m->capacity_factor);
    cJSON_AddBoolToObject(a, "shared_expert_gate", m->shared_expert_gate);
    cJSON_AddNumberToObject(a, "q_lora_rank", (double)m->q_lora_rank);
    cJSON_AddNumberToObject(a, "kv_lora_rank", (double)m->kv_lora_rank);
    cJSON_AddNumberToObject(a, "qk_nope_head_dim",
                            (double)m->qk_nope_head_dim);
    cJSON_AddNumberToObject(a, "qk_rope_head_dim",
                            (double)m->qk_rope_head_dim);
    cJSON_AddNumberToObject(a, "v_head_dim", (double)m->v_head_dim);
    cJSON_AddStringToObject(a, "qk_norm", qk_norm_names[m->qk_norm]);
    cJSON_AddBoolToObject(a, "post_norms", m->post_norms);
    cJSON_AddNumberToObject(a, "window", (double)m->window);
    cJSON_AddNumberToObject(a, "global_every", (double)m->global_every);
    cJSON_AddBoolToObject(a, "window_chunked", m->window_chunked);
    cJSON_AddBoolToObject(a, "attn_sinks", m->attn_sinks);
    cJSON_AddNumberToObject(a, "attn_softcap", m->attn_softcap);
    cJSON_AddNumberToObject(a, "final_softcap", m->final_softcap);
    cJSON_AddNumberToObject(a, "mtp_layers", (double)m->mtp_layers);
    return a;
}

/* "window 4096, every 2nd layer global" and the like. */
static void window_text(const space_model *m, char *buf, size_t cap)
{
    if (m->window <= 0) {
        snprintf(buf, cap, "none (every layer global)");
    } else if (m->global_every > 0) {
        snprintf(buf, cap,
                 "%s %" PRId64 ", 1 layer in %" PRId64 " global",
                 m->window_chunked ? "chunks of" : "sliding", m->window,
                 m->global_every);
    } else {
        snprintf(buf, cap, "%s %" PRId64 " in every layer",
                 m->window_chunked ? "chunks of" : "sliding", m->window);
    }
}

int emit_model_list(FILE *f, emit_format fmt)
{
    int n = space_preset_count();
    if (fmt == EMIT_JSON) {
        cJSON *arr = cJSON_CreateArray();
        for (int i = 0; i < n; i++) {
            const space_model *m = space_preset_at(i);
            space_params p;
            space_model_params(m, 1, &p);
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "name", m->name);
            cJSON_AddNumberToObject(j, "params_total", (double)p.total);
            cJSON_AddNumberToObject(j, "params_active", (double)p.active);
            cJSON_AddNumberToObject(j, "params_active_card",
                                    (double)p.active_card);
            cJSON_AddNumberToObject(j, "params_mtp", (double)p.mtp);
            cJSON_AddItemToObject(j, "architecture", model_arch_json(m));
            cJSON_AddStringToObject(j, "source", m->source);
            cJSON_AddItemToArray(arr, j);
        }
        emit_print_json(f, arr);
        return TP_OK;
    }
    static const char *hdr[] = {"name",  "params", "layers", "hidden", "heads",
                                "kv",    "ffn",    "vocab",  "act",    "moe"};
    emit_table t;
    emit_table_init(&t, 10, hdr, "lrrrrrrrll");
    for (int i = 0; i < n; i++) {
        const space_model *m = space_preset_at(i);
        space_params p;
        space_model_params(m, 1, &p);
        char params[32], L[24], H[24], A[24], K[24], F[24], V[24], moe[48];
        emit_fmt_count(params, sizeof params, (double)p.total);
        snprintf(L, sizeof L, "%" PRId64, m->num_layers);
        snprintf(H, sizeof H, "%" PRId64, m->hidden);
        snprintf(A, sizeof A, "%" PRId64, m->heads);
        snprintf(K, sizeof K, "%" PRId64, m->kv_heads);
        snprintf(F, sizeof F, "%" PRId64,
                 m->num_experts ? m->expert_ffn_hidden : m->ffn_hidden);
        snprintf(V, sizeof V, "%" PRId64, m->vocab);
        if (m->num_experts)
            snprintf(moe, sizeof moe, "%" PRId64 "x top-%" PRId64,
                     m->num_experts, m->top_k);
        else
            snprintf(moe, sizeof moe, "-");
        emit_table_row(&t, m->name, params, L, H, A, K, F, V,
                      space_act_names[m->act], moe);
    }
    emit_table_print(&t, f, fmt);
    emit_table_free(&t);
    return TP_OK;
}

static void add_count_row(emit_table *t, const char *key, int64_t v)
{
    char exact[32], human[32], cell[80];
    snprintf(exact, sizeof exact, "%" PRId64, v);
    emit_fmt_count(human, sizeof human, (double)v);
    snprintf(cell, sizeof cell, "%s (%s)", exact, human);
    emit_table_row(t, key, cell);
}

static void add_flops_row(emit_table *t, const char *key, double v)
{
    char cell[64];
    snprintf(cell, sizeof cell, "%.6g", v);
    emit_table_row(t, key, cell);
}

int emit_model_show(FILE *out, emit_format fmt, const space_model *m,
                    int64_t seq_length, int64_t tp)
{
    int64_t seq = seq_length ? seq_length : DEFAULT_SEQ;
    space_params p, pp;
    space_model_params(m, 1, &p);
    space_model_params(m, 128 * tp, &pp);
    space_flops f, fc;
    space_flops_per_token(m, seq, 0, SPACE_RECOMPUTE_NONE, &f);
    space_flops_per_token(m, seq, 1, SPACE_RECOMPUTE_NONE, &fc);

    if (fmt == EMIT_JSON) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", m->name);
        cJSON_AddStringToObject(j, "source", m->source);
        cJSON_AddItemToObject(j, "architecture", model_arch_json(m));
        cJSON_AddNumberToObject(j, "params_total", (double)p.total);
        cJSON_AddNumberToObject(j, "params_active", (double)p.active);
        cJSON_AddNumberToObject(j, "params_active_card", (double)p.active_card);
        cJSON_AddStringToObject(j, "params_total_convention",
                                total_convention);
        cJSON_AddStringToObject(j, "params_active_convention",
                                active_convention);
        cJSON_AddStringToObject(j, "params_active_card_convention",
                                m->card_active_no_embedding ? card_no_embedding
                                                           : card_all);
        cJSON_AddNumberToObject(j, "params_mtp", (double)p.mtp);
        cJSON_AddNumberToObject(j, "params_checkpoint", (double)p.checkpoint);
        cJSON_AddNumberToObject(j, "params_per_layer", (double)p.per_layer);
        cJSON_AddNumberToObject(j, "params_layers_total",
                                (double)p.layers_total);
        cJSON_AddNumberToObject(j, "params_embedding", (double)p.embedding);
        cJSON_AddNumberToObject(j, "params_position", (double)p.position);
        cJSON_AddNumberToObject(j, "params_lm_head", (double)p.lm_head);
        cJSON_AddNumberToObject(j, "params_final_norm", (double)p.final_norm);
        cJSON_AddNumberToObject(j, "params_attention_per_layer",
                                (double)p.attn_per_layer);
        cJSON_AddNumberToObject(j, "params_mlp_per_layer",
                                (double)(m->num_experts ? p.moe_mlp_per_layer
                                                       : p.dense_mlp_per_layer));
        cJSON_AddNumberToObject(j, "tensor_model_parallel_size", (double)tp);
        cJSON_AddNumberToObject(j, "vocab_padded", (double)pp.vocab_padded);
        cJSON_AddNumberToObject(j, "params_total_padded", (double)pp.total);
        cJSON_AddNumberToObject(j, "seq_length", (double)seq);
        cJSON_AddNumberToObject(j, "flops_per_token_fwd", f.fwd);
        cJSON_AddNumberToObject(j, "flops_per_token_bwd", f.bwd);
        cJSON_AddNumberToObject(j, "flops_per_token_fwd_bwd", f.fwd + f.bwd);
        cJSON_AddNumberToObject(j, "flops_per_token_attention_fwd", f.attn_fwd);
        cJSON_AddNumberToObject(j, "flops_per_token_lm_head_fwd",
                                f.lm_head_fwd);
        cJSON_AddNumberToObject(j, "flops_per_token_mtp_fwd", f.mtp_fwd);
        cJSON_AddNumberToObject(j, "flops_per_token_attention_fwd_causal",
                                fc.attn_fwd);
        cJSON_AddNumberToObject(j, "flops_per_token_fwd_causal", fc.fwd);
        cJSON_AddNumberToObject(j, "flops_per_token_fwd_bwd_causal",
                                fc.fwd + fc.bwd);
        cJSON_AddStringToObject(j, "flops_convention", flops_convention);
        emit_print_json(out, j);
        return TP_OK;
    }

    static const char *hdr[] = {"field", "value"};
    emit_table t;
    emit_table_init(&t, 2, hdr, "ll");
    char buf[192];
    emit_table_row(&t, "model", m->name);
    emit_table_row(&t, "source", m->source);
#define ROW_INT(key, v)                                                       \
    do {                                                                      \
        snprintf(buf, sizeof buf, "%" PRId64, (int64_t)(v));                  \
        emit_table_row(&t, key, buf);                                          \
    } while (0)
    ROW_INT("num_layers", m->num_layers);
    ROW_INT("hidden_size", m->hidden);
    ROW_INT("num_attention_heads", m->heads);
    ROW_INT("num_kv_heads", m->kv_heads);
    ROW_INT("head_dim", m->head_dim);
    ROW_INT("ffn_hidden_size", m->ffn_hidden);
    ROW_INT("vocab_size", m->vocab);
    ROW_INT("max_position_embeddings", m->max_position);
    emit_table_row(&t, "activation", space_act_names[m->act]);
    emit_table_row(&t, "norm", space_norm_names[m->norm]);
    emit_table_row(&t, "position_embedding", space_pos_names[m->pos]);
    if (m->pos == SPACE_POS_ROPE) {
        if (m->rope_theta > 0)
            snprintf(buf, sizeof buf, "base %g", m->rope_theta);
        else
            snprintf(buf, sizeof buf, "base not recorded (10000 assumed)");
        if (m->rotary_fraction > 0)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf),
                     ", %g of each head", m->rotary_fraction);
        emit_table_row(&t, "rope", buf);
    }
    emit_table_row(&t, "tied_embeddings", m->tied_embeddings ? "yes" : "no");
    emit_table_row(&t, "embed_norm", m->embed_norm ? "yes" : "no");
    snprintf(buf, sizeof buf, "attention %g, hidden %g", m->attn_dropout,
             m->hidden_dropout);
    emit_table_row(&t, "dropout", buf);
    snprintf(buf, sizeof buf, "qkv %s, out %s, mlp %s",
             m->qkv_bias ? "yes" : "no", m->out_bias ? "yes" : "no",
             m->mlp_bias ? "yes" : "no");
    emit_table_row(&t, "biases", buf);
    if (m->num_experts) {
        snprintf(buf, sizeof buf,
                 "%" PRId64 " experts, top-%" PRId64 ", expert ffn %" PRId64
                 ", %" PRId64 " shared (ffn %" PRId64 "), %" PRId64
                 " dense first layers, every %" PRId64 " layer(s)",
                 m->num_experts, m->top_k, m->expert_ffn_hidden, m->shared_experts,
                 m->shared_ffn_hidden, m->first_dense_layers, m->moe_layer_freq);
        emit_table_row(&t, "moe", buf);
        snprintf(buf, sizeof buf, "%s%s%s", m->router_sigmoid ? "sigmoid" : "softmax",
                 m->router_bias ? ", a bias per expert" : "",
                 m->shared_expert_gate ? ", gated shared expert" : "");
        emit_table_row(&t, "moe_router", buf);
        if (m->router_groups) {
            snprintf(buf, sizeof buf,
                     "%" PRId64 " groups, %" PRId64 " per token",
                     m->router_groups, m->router_topk_groups);
            emit_table_row(&t, "moe_router_groups", buf);
        }
        if (m->capacity_factor > 0) {
            snprintf(buf, sizeof buf, "%g", m->capacity_factor);
            emit_table_row(&t, "moe_capacity_factor", buf);
        }
    }
    if (m->kv_lora_rank) {
        snprintf(buf, sizeof buf,
                 "q rank %" PRId64 ", kv rank %" PRId64 ", qk %" PRId64
                 " + rope %" PRId64 ", v %" PRId64,
                 m->q_lora_rank, m->kv_lora_rank, m->qk_nope_head_dim,
                 m->qk_rope_head_dim, m->v_head_dim);
        emit_table_row(&t, "mla", buf);
    }
    if (m->qk_norm) emit_table_row(&t, "qk_norm", qk_norm_names[m->qk_norm]);
    if (m->post_norms) emit_table_row(&t, "norms_per_layer", "4 (post norms)");
    window_text(m, buf, sizeof buf);
    emit_table_row(&t, "attention_window", buf);
    if (m->attn_sinks) emit_table_row(&t, "attn_sinks", "yes");
    if (m->attn_softcap > 0 || m->final_softcap > 0) {
        snprintf(buf, sizeof buf, "attention %g, final %g", m->attn_softcap,
                 m->final_softcap);
        emit_table_row(&t, "softcap", buf);
    }
    if (m->mtp_layers) ROW_INT("mtp_layers", m->mtp_layers);
    add_count_row(&t, "params_total", p.total);
    if (m->num_experts) {
        add_count_row(&t, "params_active", p.active);
        add_count_row(&t, "params_active_card", p.active_card);
    }
    if (m->mtp_layers) {
        add_count_row(&t, "params_mtp", p.mtp);
        add_count_row(&t, "params_checkpoint", p.checkpoint);
    }
    add_count_row(&t, "params_per_layer", p.per_layer);
    add_count_row(&t, "params_embedding", p.embedding);
    if (p.position) add_count_row(&t, "params_position", p.position);
    add_count_row(&t, "params_lm_head", p.lm_head);
    snprintf(buf, sizeof buf, "%" PRId64 " (128 x TP %" PRId64 ")",
             pp.vocab_padded, tp);
    emit_table_row(&t, "vocab_padded", buf);
    add_count_row(&t, "params_total_padded", pp.total);
    ROW_INT("seq_length", seq);
    add_flops_row(&t, "flops_per_token_fwd", f.fwd);
    add_flops_row(&t, "flops_per_token_fwd_bwd", f.fwd + f.bwd);
    add_flops_row(&t, "flops_per_token_fwd_causal", fc.fwd);
    add_flops_row(&t, "flops_per_token_fwd_bwd_causal", fc.fwd + fc.bwd);
    if (m->mtp_layers) add_flops_row(&t, "flops_per_token_mtp_fwd", f.mtp_fwd);
#undef ROW_INT
    emit_table_print(&t, out, fmt);
    emit_table_free(&t);
    if (fmt == EMIT_TABLE) {
        fprintf(out, "\n");
        emit_wrapf(out, 2, "params_total: %s.", total_convention);
        if (m->num_experts) {
            emit_wrapf(out, 2, "params_active: %s.", active_convention);
            emit_wrapf(out, 2, "params_active_card: %s.",
                      m->card_active_no_embedding ? card_no_embedding
                                                 : card_all);
        }
        emit_wrapf(out, 2, "FLOPs: %s.", flops_convention);
    }
    return TP_OK;
}
