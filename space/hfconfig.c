/*
 * hfconfig.c - reads a HuggingFace config.json into a space_model, and
 * resolves a command-line model name to a preset or such a file.
 *
 * HF model families name the same quantity differently (n_embd, d_model,
 * hidden_size, ...). The aliases are tables (hftables.c), one row per
 * quantity with its keys in priority order; what a config leaves out
 * comes from a per-model_type table of the defaults transformers' config
 * classes use (hftables.c too).
 * A nested "text_config" (LLaVA and other multimodal wrappers) is read
 * first, then the top level. Every value goes through the tp_json_*
 * readers, so a bad one is reported with file, JSON path, value and range.
 *
 * What a model_type's modelling code hard-wires beyond its config class's
 * defaults (QK norms, Gemma's four norms a layer, gpt-oss's sinks and
 * router bias, Qwen2-MoE's shared-expert gate, Llama 4's expert sizes and
 * chunked layers) is a second table there, hf_archs. Multi-head latent
 * attention (kv_lora_rank, q_lora_rank, qk_nope/rope_head_dim,
 * v_head_dim), DeepSeek's routing (n_group, topk_group, scoring_func,
 * topk_method "noaux_tc"), MTP modules (num_nextn_predict_layers),
 * windows (sliding_window, attention_chunk_size, with layer_types,
 * no_rope_layers or sliding_window_pattern) and soft-capping are read;
 * so are RoPE's base and its share of each head (rope_theta, rotary_pct,
 * partial_rotary_factor, rotary_dim), for the launch flags only.
 *
 * Does not: apply a config class's defaults for sizes (a config without
 * hidden_size is an error, not 4096), or model what the struct cannot
 * hold; space_hf_unread names each such key (Qwen's mlp_only_layers and
 * partial windows, PhiMoE's LM-head bias, irregular local/global
 * patterns), and space_model_unread says them as warnings or, with
 * --strict, as an error. Still approximated without a warning, each < 0.01% of a
 * model: OPT's two extra position rows, GPT-J's LM-head bias, the one norm
 * of Falcon-7B's parallel block. Keys that change no count or FLOP
 * (routed_scaling_factor, norm_topk_prob, rope_scaling, swiglu_limit,
 * query_pre_attn_scalar) are not read.
 *
 * References: transformers' configuration_*.py for each model_type (key
 * names and defaults), and the model cards cited in tests/fixtures/hf.
 */
#include "space_int.h"

#include <stdio.h>
#include <string.h>

/* ---- Activations: HF name -> our activation in a plain (2-GEMM) and in
 * a gated (3-GEMM) FFN; -1 where that combination has no space_act. */
typedef struct hf_act {
    int plain, gated;
} hf_act;

static const char *const hf_act_names[] = {
    "silu", "swish", "gelu", "gelu_new", "gelu_fast", "gelu_pytorch_tanh",
    "gelu_accurate", "gelu_python", "quick_gelu", "relu", "relu2",
};
static const hf_act hf_act_kinds[] = {
    {-1, SPACE_ACT_SWIGLU},          {-1, SPACE_ACT_SWIGLU},
    {SPACE_ACT_GELU, SPACE_ACT_GEGLU}, {SPACE_ACT_GELU, SPACE_ACT_GEGLU},
    {SPACE_ACT_GELU, SPACE_ACT_GEGLU}, {SPACE_ACT_GELU, SPACE_ACT_GEGLU},
    {SPACE_ACT_GELU, SPACE_ACT_GEGLU}, {SPACE_ACT_GELU, SPACE_ACT_GEGLU},
    {SPACE_ACT_GELU, SPACE_ACT_GEGLU}, {SPACE_ACT_RELU, -1},
    {SPACE_ACT_SQUARED_RELU, -1},
};
#define HF_ACT_COUNT ((int)(sizeof hf_act_names / sizeof hf_act_names[0]))
_Static_assert(sizeof hf_act_kinds / sizeof hf_act_kinds[0]
                   == sizeof hf_act_names / sizeof hf_act_names[0],
               "hf_act_kinds must have a row per hf_act_names entry");

/* position_embedding_type values. */
static const char *const hf_pos_names[] = {
    "rotary", "rope", "absolute", "learned", "alibi", "none", "nope",
};
static const space_pos hf_pos_values[] = {
    SPACE_POS_ROPE, SPACE_POS_ROPE, SPACE_POS_LEARNED, SPACE_POS_LEARNED,
    SPACE_POS_ALIBI, SPACE_POS_NONE, SPACE_POS_NONE,
};
_Static_assert(sizeof hf_pos_values / sizeof hf_pos_values[0]
                   == sizeof hf_pos_names / sizeof hf_pos_names[0],
               "hf_pos_values must have a row per hf_pos_names entry");

/* Publishers whose model cards count active parameters without the input
 * embedding (space_model.card_active_no_embedding): DeepSeek (DeepSeek-V3's
 * README_WEIGHTS.md, 36.6B activated without the embedding; V2's 21B and
 * V2-Lite's 2.4B, arXiv:2405.04434, fit the same count) and OpenAI's
 * gpt-oss (arXiv:2508.10925 Table 1: active with the unembedding, not
 * the embedding). */
static const char *const hf_card_no_embedding[] = {"deepseek_v2", "deepseek_v3",
                                                   "gpt_oss"};

/* ---- Reading. */

typedef struct hf_ctx {
    const char *file;
    const cJSON *scope[2]; /* text_config (when present), then the root */
    const char *path[2];   /* their JSON paths */
    int nscope;
} hf_ctx;

/* Where a key was found: which scope, which alias. */
typedef struct hf_hit {
    int found, scope;
    const char *key;
} hf_hit;

static hf_hit hf_find(const hf_ctx *c, const char *const *keys)
{
    hf_hit h = {0, 0, NULL};
    for (int s = 0; s < c->nscope; s++)
        for (int k = 0; k < HF_MAX_KEYS && keys[k]; k++) {
            const cJSON *v =
                cJSON_GetObjectItemCaseSensitive(c->scope[s], keys[k]);
            /* JSON null counts as absent, as in the tp_json_* readers. */
            if (v && !cJSON_IsNull(v)) {
                h.found = 1;
                h.scope = s;
                h.key = keys[k];
                return h;
            }
        }
    return h;
}

/* "$.text_config.hidden_size" */
static const char *hit_path(const hf_ctx *c, hf_hit h, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s.%s", c->path[h.scope], h.key);
    return buf;
}

static int hf_missing(const hf_ctx *c, const char *what,
                      const char *const *keys, tp_err *e)
{
    char list[160];
    size_t at = 0;
    list[0] = '\0';
    for (int k = 0; k < HF_MAX_KEYS && keys[k] && at < sizeof list; k++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s",
                               k ? ", " : "", keys[k]);
    return tp_errf(e, TP_EDATA,
                   "%s: %s: missing the %s (expected one of the keys %s)",
                   c->file, c->path[0], what, list);
}

typedef struct hf_vals {
    int64_t i[HI_COUNT];
    hf_hit ih[HI_COUNT];
    int b[HB_COUNT];
    hf_hit bh[HB_COUNT];
    char model_type[64];
    hf_hit sh[HS_COUNT];
    int act_index;
    space_pos pos_type;
    char name[256];
    hf_hit nh[HN_COUNT];
    double n[HN_COUNT];
    char str[HS_COUNT][64]; /* the plain strings (scoring_func, ...) */
} hf_vals;

static int hf_read_all(const hf_ctx *c, hf_vals *v, tp_err *e)
{
    int rc;
    for (int r = 0; r < HI_COUNT; r++) {
        const hf_int_row *row = &space_hf_ints[r];
        hf_hit h = v->ih[r] = hf_find(c, row->keys);
        if (!h.found) continue;
        int64_t lo = 0, hi = 0;
        if (!space_model_field_range(row->range, &lo, &hi))
            return tp_errf(e, TP_EINTERNAL, "no range for field %s",
                           row->range);
        /* A file may be stricter than the struct (head_dim 0 means
         * "derive" in space_model, but is nonsense in a config). */
        if (row->lo > lo) lo = row->lo;
        rc = tp_json_int(c->scope[h.scope], c->file, c->path[h.scope], h.key,
                         1, lo, hi, &v->i[r], e);
        if (rc) return rc;
    }
    for (int r = 0; r < HB_COUNT; r++) {
        hf_hit h = v->bh[r] = hf_find(c, space_hf_bools[r]);
        if (!h.found) continue;
        rc = tp_json_bool(c->scope[h.scope], c->file, c->path[h.scope], h.key,
                          1, &v->b[r], e);
        if (rc) return rc;
    }
    for (int r = 0; r < HN_COUNT; r++) {
        hf_hit h = v->nh[r] = hf_find(c, space_hf_nums[r].keys);
        if (!h.found) continue;
        rc = tp_json_num(c->scope[h.scope], c->file, c->path[h.scope], h.key,
                         1, space_hf_nums[r].lo, space_hf_nums[r].hi,
                         &v->n[r], e);
        if (rc) return rc;
    }

    hf_hit h = v->sh[HS_MODEL_TYPE] = hf_find(c, space_hf_strs[HS_MODEL_TYPE]);
    if (h.found
        && (rc = tp_json_str(c->scope[h.scope], c->file, c->path[h.scope],
                             h.key, 1, v->model_type, sizeof v->model_type, e)))
        return rc;
    h = v->sh[HS_ACT] = hf_find(c, space_hf_strs[HS_ACT]);
    if (h.found
        && (rc = tp_json_enum(c->scope[h.scope], c->file, c->path[h.scope],
                              h.key, 1, hf_act_names, HF_ACT_COUNT,
                              &v->act_index, e)))
        return rc;
    static const enum hf_str plain[] = {HS_SCORING, HS_TOPK_METHOD};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        h = v->sh[plain[i]] = hf_find(c, space_hf_strs[plain[i]]);
        if (h.found
            && (rc = tp_json_str(c->scope[h.scope], c->file, c->path[h.scope],
                                 h.key, 1, v->str[plain[i]],
                                 sizeof v->str[plain[i]], e)))
            return rc;
    }
    h = v->sh[HS_POS_TYPE] = hf_find(c, space_hf_strs[HS_POS_TYPE]);
    if (h.found) {
        int idx = 0;
        rc = tp_json_enum(c->scope[h.scope], c->file, c->path[h.scope], h.key,
                          1, hf_pos_names,
                          (int)(sizeof hf_pos_names / sizeof hf_pos_names[0]),
                          &idx, e);
        if (rc) return rc;
        v->pos_type = hf_pos_values[idx];
    }
    /* The name only from the top level: a text_config's _name_or_path
     * names the LM a multimodal model was built from, not this model. */
    hf_ctx top = *c;
    top.scope[0] = c->scope[c->nscope - 1];
    top.path[0] = c->path[c->nscope - 1];
    top.nscope = 1;
    h = v->sh[HS_NAME] = hf_find(&top, space_hf_strs[HS_NAME]);
    if (h.found
        && (rc = tp_json_str(top.scope[0], c->file, top.path[0], h.key, 1,
                             v->name, sizeof v->name, e)))
        return rc;
    return TP_OK;
}

/* The file's base name without ".json"; for ".../<model>/config.json",
 * the directory name, as HF checkouts are laid out. */
static void hf_base_name(const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/');
    const char *b = slash ? slash + 1 : path;
    size_t n = strlen(b);
    if (n > 5 && tp_streq_ci(b + n - 5, ".json")) n -= 5;
    if (n == 6 && strncmp(b, "config", 6) == 0 && slash && slash > path) {
        const char *start = slash;
        while (start > path && start[-1] != '/') start--;
        if (start < slash) {
            b = start;
            n = (size_t)(slash - start);
        }
    }
    if (n >= cap) n = cap - 1;
    memcpy(out, b, n);
    out[n] = '\0';
}

static int hf_bool_or(const hf_vals *v, enum hf_bool r, int dflt)
{
    return v->bh[r].found ? v->b[r] : dflt;
}

/* ---- Which layers attend globally, from a per-layer list:
 * transformers' layer_types ("full_attention" global; "sliding_attention",
 * "chunked_attention", ... local) or Llama 4's no_rope_layers (0: a NoPE
 * layer, global; 1: a RoPE layer, chunked). */
enum {
    PAT_NONE,       /* no list (absent, null or empty) */
    PAT_ALL_GLOBAL, /* every layer global */
    PAT_PERIODIC,   /* global exactly when (i + 1) % every == 0 (every 0:
                       no layer global) */
    PAT_IRREGULAR,  /* some other pattern; every: layers / globals */
    PAT_BAD         /* not a list of num_layers strings (or 0/1) */
};

static const char *const hf_pattern_keys[] = {"layer_types",
                                              "no_rope_layers"};

static int layer_is_global(const cJSON *item, int nope_list, int *global)
{
    if (nope_list) {
        if (!cJSON_IsNumber(item)) return 0;
        *global = item->valuedouble == 0;
    } else {
        if (!cJSON_IsString(item)) return 0;
        *global = strcmp(item->valuestring, "full_attention") == 0;
    }
    return 1;
}

static int layer_pattern(const cJSON *arr, int nope_list, int64_t layers,
                         int64_t *every)
{
    if (!arr || cJSON_IsNull(arr)) return PAT_NONE;
    if (!cJSON_IsArray(arr)) return PAT_BAD;
    int64_t n = cJSON_GetArraySize(arr);
    if (n == 0) return PAT_NONE; /* Llama 4's [] means its default */
    if (n != layers) return PAT_BAD;
    int64_t globals = 0, first = -1, i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, arr) {
        int g;
        if (!layer_is_global(it, nope_list, &g)) return PAT_BAD;
        if (g && first < 0) first = i;
        globals += g;
        i++;
    }
    if (globals == n) return PAT_ALL_GLOBAL;
    *every = globals ? first + 1 : 0;
    if (globals == 0) return PAT_PERIODIC;
    i = 0;
    cJSON_ArrayForEach(it, arr) {
        int g = 0;
        layer_is_global(it, nope_list, &g);
        if (g != ((i + 1) % *every == 0)) {
            *every = (n + globals / 2) / globals;
            return PAT_IRREGULAR;
        }
        i++;
    }
    return PAT_PERIODIC;
}

/* The window and its local/global pattern of c's config into m (whose
 * num_layers is set). */
static int hf_window(const hf_ctx *c, const hf_vals *v, const hf_arch *ar,
                     space_model *m, tp_err *e)
{
    int64_t window = 0;
    int chunked = 0;
    if (v->ih[HI_CHUNK].found) {
        window = v->i[HI_CHUNK];
        chunked = 1;
    } else if (v->ih[HI_WINDOW].found) {
        window = v->i[HI_WINDOW];
    }
    /* Qwen's window is off unless use_sliding_window; with it on and no
     * layer_types, only the layers from max_window_layers on are local,
     * which space_hf_unread reports and this leaves as full attention. */
    const cJSON *list = NULL;
    int nope_list = 0, s = 0;
    for (s = 0; s < c->nscope && !list; s++)
        for (int k = 0; k < 2 && !list; k++) {
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(
                c->scope[s], hf_pattern_keys[k]);
            if (a && !cJSON_IsNull(a)) {
                list = a;
                nope_list = k == 1;
            }
        }
    if (ar->window_switch
        && (!hf_bool_or(v, HB_USE_SLIDING, 0) || !list))
        window = 0;
    /* A window of the whole context is none (Phi-3's 262144 over 131072). */
    if (window >= m->max_position) window = 0;
    if (window <= 0) return TP_OK;

    int64_t every = ar->global_every;
    int kind = layer_pattern(list, nope_list, m->num_layers, &every);
    if (kind == PAT_BAD) {
        char found[64];
        tp_json_describe(list, found, sizeof found);
        return tp_errf(e, TP_EDATA,
                       "%s: %s.%s: expected an array of %lld %s (one per "
                       "layer, num_hidden_layers), found %s",
                       c->file, c->path[s - 1], list->string,
                       (long long)m->num_layers,
                       nope_list ? "0s and 1s" : "attention kinds (strings)",
                       found);
    }
    if (kind == PAT_ALL_GLOBAL) return TP_OK;
    if (kind == PAT_NONE && v->ih[HI_PATTERN].found)
        every = v->i[HI_PATTERN];
    if (every == 1) return TP_OK; /* every layer global */
    m->window = window;
    m->global_every = every;
    m->window_chunked = chunked;
    return TP_OK;
}

static int hf_to_model(const hf_ctx *c, const hf_vals *v, space_model *m,
                       tp_err *e)
{
    char p1[384], p2[384];
    const hf_type *t = v->sh[HS_MODEL_TYPE].found
                           ? space_hf_type_find(v->model_type)
                           : &space_hf_generic;
    memset(m, 0, sizeof *m);

    if (v->sh[HS_NAME].found && v->name[0]) {
        tp_strlcpy(m->name, v->name, sizeof m->name);
    } else {
        hf_base_name(c->file, m->name, sizeof m->name);
    }
    tp_strlcpy(m->source, c->file, sizeof m->source);

    const hf_arch *ar = v->sh[HS_MODEL_TYPE].found
                            ? space_hf_arch_find(v->model_type)
                            : &space_hf_arch_none;
    static const enum hf_int required[] = {HI_LAYERS, HI_HIDDEN, HI_HEADS,
                                           HI_VOCAB};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!v->ih[required[i]].found
            && !(required[i] == HI_VOCAB && ar->vocab > 0))
            return hf_missing(c, space_hf_ints[required[i]].what,
                              space_hf_ints[required[i]].keys, e);
    m->num_layers = v->i[HI_LAYERS];
    m->hidden = v->i[HI_HIDDEN];
    m->heads = v->i[HI_HEADS];
    m->vocab = v->ih[HI_VOCAB].found ? v->i[HI_VOCAB] : ar->vocab;

    int mla = v->ih[HI_KV_LORA].found && v->i[HI_KV_LORA] > 0;
    if (mla) {
        /* DeepSeek's MLA: every head its own K and V from the latent
         * (num_key_value_heads, where given, equals the heads). */
        static const enum hf_int need[] = {HI_QK_NOPE, HI_QK_ROPE,
                                           HI_V_HEAD_DIM};
        for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
            if (!v->ih[need[i]].found)
                return hf_missing(c, space_hf_ints[need[i]].what,
                                  space_hf_ints[need[i]].keys, e);
        m->kv_lora_rank = v->i[HI_KV_LORA];
        m->q_lora_rank = v->ih[HI_Q_LORA].found ? v->i[HI_Q_LORA] : 0;
        m->qk_nope_head_dim = v->i[HI_QK_NOPE];
        m->qk_rope_head_dim = v->i[HI_QK_ROPE];
        m->v_head_dim = v->i[HI_V_HEAD_DIM];
        m->head_dim = m->v_head_dim;
    } else if (v->ih[HI_HEAD_DIM].found) {
        m->head_dim = v->i[HI_HEAD_DIM];
    } else {
        if (m->hidden % m->heads != 0)
            return tp_errf(e, TP_EDATA,
                           "%s: %s = %lld is not divisible by %s = %lld, and "
                           "there is no head_dim to say the head size",
                           c->file, hit_path(c, v->ih[HI_HIDDEN], p1, sizeof p1),
                           (long long)m->hidden,
                           hit_path(c, v->ih[HI_HEADS], p2, sizeof p2),
                           (long long)m->heads);
        m->head_dim = m->hidden / m->heads;
    }

    /* Falcon re-saved by newer transformers carries num_kv_heads = heads
     * beside multi_query = true; its modelling code then uses one KV head,
     * so multi_query wins unless the new decoder architecture is on. */
    if (mla) {
        m->kv_heads = m->heads;
    } else if (hf_bool_or(v, HB_MULTI_QUERY, 0)
               && !hf_bool_or(v, HB_NEW_DECODER, 0)) {
        m->kv_heads = 1;
    } else if (v->ih[HI_KV_HEADS].found) {
        m->kv_heads = v->i[HI_KV_HEADS];
        if (m->heads % m->kv_heads != 0)
            return tp_errf(e, TP_EDATA,
                           "%s: %s = %lld does not divide %s = %lld; expected "
                           "the KV heads to divide the attention heads",
                           c->file,
                           hit_path(c, v->ih[HI_KV_HEADS], p1, sizeof p1),
                           (long long)m->kv_heads,
                           hit_path(c, v->ih[HI_HEADS], p2, sizeof p2),
                           (long long)m->heads);
    } else {
        m->kv_heads = m->heads;
    }

    if (ar->llama4_ffn && v->ih[HI_FFN_MLP].found)
        m->ffn_hidden = v->i[HI_FFN_MLP];
    else if (v->ih[HI_FFN].found)
        m->ffn_hidden = v->i[HI_FFN];
    else if (t->ffn_4h)
        m->ffn_hidden = 4 * m->hidden;
    else
        return hf_missing(c, space_hf_ints[HI_FFN].what,
                          space_hf_ints[HI_FFN].keys, e);

    if (v->ih[HI_MAX_POS].found)
        m->max_position = v->i[HI_MAX_POS];
    else if (t->max_position > 0)
        m->max_position = t->max_position;
    else if (ar->max_position > 0)
        m->max_position = ar->max_position;
    else
        return hf_missing(c, space_hf_ints[HI_MAX_POS].what,
                          space_hf_ints[HI_MAX_POS].keys, e);

    int act_index = -1;
    if (v->sh[HS_ACT].found) {
        act_index = v->act_index;
    } else if (t->act) {
        for (int i = 0; i < HF_ACT_COUNT; i++)
            if (strcmp(hf_act_names[i], t->act) == 0) act_index = i;
    }
    if (act_index < 0)
        return hf_missing(c, "activation", space_hf_strs[HS_ACT], e);
    const hf_act *k = &hf_act_kinds[act_index];
    int gated = t->gated >= 0 ? t->gated : k->plain < 0;
    int act = gated ? k->gated : k->plain;
    if (act < 0) {
        const char *at = v->sh[HS_ACT].found
                             ? hit_path(c, v->sh[HS_ACT], p1, sizeof p1)
                             : "$ (model_type default)";
        return tp_errf(e, TP_EDATA,
                       "%s: %s = \"%s\": a %s FFN with this activation is not "
                       "supported (model_type \"%s\" is %s); expected one of "
                       "gelu, relu, relu2 for a plain FFN, silu or gelu for a "
                       "gated one",
                       c->file, at, hf_act_names[act_index],
                       gated ? "gated" : "plain (2-GEMM)",
                       t->model_type ? t->model_type : v->model_type,
                       gated ? "gated" : "not gated");
    }
    m->act = (space_act)act;

    m->attn_dropout = v->nh[HN_ATTN_DROP].found ? v->n[HN_ATTN_DROP] : 0;
    m->hidden_dropout = v->nh[HN_HIDDEN_DROP].found ? v->n[HN_HIDDEN_DROP] : 0;

    if (ar->layernorm)
        m->norm = SPACE_NORM_LAYERNORM;
    else if (v->nh[HN_RMS_EPS].found)
        m->norm = SPACE_NORM_RMSNORM;
    else if (v->nh[HN_LN_EPS].found)
        m->norm = SPACE_NORM_LAYERNORM;
    else
        m->norm = t->norm;

    if (v->sh[HS_POS_TYPE].found)
        m->pos = v->pos_type;
    else if (hf_bool_or(v, HB_ALIBI, 0))
        m->pos = SPACE_POS_ALIBI;
    else
        m->pos = t->pos;

    m->tied_embeddings = hf_bool_or(v, HB_TIED, t->tied);
    m->qkv_bias = hf_bool_or(v, HB_QKV_BIAS, t->qkv_bias);
    m->out_bias = hf_bool_or(v, HB_OUT_BIAS, t->out_bias);
    m->mlp_bias = hf_bool_or(v, HB_MLP_BIAS, t->mlp_bias);
    m->parallel_attn_mlp = hf_bool_or(v, HB_PARALLEL, t->parallel);
    m->embed_norm = t->embed_norm;
    m->qk_norm = mla ? 0 : ar->qk_norm;
    m->post_norms = ar->post_norms;
    m->attn_sinks = ar->attn_sinks;
    m->attn_softcap =
        v->nh[HN_ATTN_SOFTCAP].found ? v->n[HN_ATTN_SOFTCAP] : 0;
    m->final_softcap =
        v->nh[HN_FINAL_SOFTCAP].found ? v->n[HN_FINAL_SOFTCAP] : 0;
    m->mtp_layers = v->ih[HI_MTP].found ? v->i[HI_MTP] : 0;
    m->rope_theta = v->nh[HN_ROPE_THETA].found ? v->n[HN_ROPE_THETA] : 0;
    m->card_active_no_embedding = 0;
    for (size_t i = 0; i < sizeof hf_card_no_embedding
                               / sizeof hf_card_no_embedding[0]; i++)
        if (strcmp(v->model_type, hf_card_no_embedding[i]) == 0)
            m->card_active_no_embedding = 1;
    m->rotary_fraction = 0;
    if (v->nh[HN_ROTARY_FRAC].found) {
        m->rotary_fraction = v->n[HN_ROTARY_FRAC];
    } else if (v->nh[HN_ROTARY_DIM].found) {
        int64_t hd = m->head_dim > 0 ? m->head_dim : m->hidden / m->heads;
        double f = hd > 0 ? v->n[HN_ROTARY_DIM] / (double)hd : 0;
        m->rotary_fraction = f < 1 ? f : 1;
    }
    if (m->rotary_fraction >= 1) m->rotary_fraction = 0; /* all */
    int rc = hf_window(c, v, ar, m, e);
    if (rc) return rc;

    int64_t experts = v->ih[HI_EXPERTS].found ? v->i[HI_EXPERTS] : 0;
    if (experts == 0) return TP_OK; /* dense: MoE fields stay 0 */

    m->num_experts = experts;
    if (!v->ih[HI_TOP_K].found)
        return hf_missing(c, space_hf_ints[HI_TOP_K].what,
                          space_hf_ints[HI_TOP_K].keys, e);
    m->top_k = v->i[HI_TOP_K];
    if (m->top_k < 1 || m->top_k > experts)
        return tp_errf(e, TP_EDATA,
                       "%s: %s = %lld, expected an integer in [1, %lld] (%s)",
                       c->file, hit_path(c, v->ih[HI_TOP_K], p1, sizeof p1),
                       (long long)m->top_k, (long long)experts,
                       hit_path(c, v->ih[HI_EXPERTS], p2, sizeof p2));
    m->expert_ffn_hidden = v->ih[HI_MOE_FFN].found ? v->i[HI_MOE_FFN]
                           : ar->llama4_ffn && v->ih[HI_FFN].found
                               ? v->i[HI_FFN]
                               : m->ffn_hidden;

    if (ar->llama4_ffn) {
        m->shared_experts = 1;
        m->shared_ffn_hidden = m->expert_ffn_hidden;
    } else if (v->ih[HI_N_SHARED].found && v->i[HI_N_SHARED] > 0) {
        m->shared_experts = v->i[HI_N_SHARED];
        m->shared_ffn_hidden = m->expert_ffn_hidden;
    } else if (v->ih[HI_SHARED_FFN].found && v->i[HI_SHARED_FFN] > 0) {
        m->shared_experts = 1;
        m->shared_ffn_hidden = v->i[HI_SHARED_FFN];
    }

    m->shared_expert_gate = ar->shared_gate && m->shared_experts > 0;
    m->router_sigmoid = ar->router_sigmoid
                        || (v->sh[HS_SCORING].found
                            && strcmp(v->str[HS_SCORING], "sigmoid") == 0);
    /* DeepSeek-V3's aux-loss-free balancing adds a learned bias per
     * expert to the selection scores (topk_method "noaux_tc",
     * e_score_correction_bias; arXiv:2412.19437 Section 2.1.2). */
    m->router_bias = ar->router_bias
                     || (v->sh[HS_TOPK_METHOD].found
                         && strcmp(v->str[HS_TOPK_METHOD], "noaux_tc") == 0);
    if (v->ih[HI_N_GROUP].found && v->i[HI_N_GROUP] > 1) {
        m->router_groups = v->i[HI_N_GROUP];
        m->router_topk_groups = v->ih[HI_TOPK_GROUP].found
                                    ? v->i[HI_TOPK_GROUP]
                                    : m->router_groups;
    }

    /* Placement onto our rule (model.c: i >= first and (i - first) % freq
     * == 0), exactly:
     *  - Qwen's decoder_sparse_step and Llama 4's interleave_moe_layer_step:
     *    layer i is sparse when (i + 1) % step == 0, i.e. first = step - 1,
     *    freq = step (Qwen's mlp_only_layers: space_hf_unread).
     *  - DeepSeek: i >= k and i % freq == 0, i.e. first = k rounded up to
     *    a multiple of freq. */
    int64_t first, freq;
    if (v->ih[HI_SPARSE_STEP].found || v->ih[HI_INTERLEAVE].found) {
        freq = v->ih[HI_SPARSE_STEP].found ? v->i[HI_SPARSE_STEP]
                                           : v->i[HI_INTERLEAVE];
        first = freq - 1;
    } else {
        freq = v->ih[HI_MOE_FREQ].found ? v->i[HI_MOE_FREQ] : 1;
        int64_t k_dense = v->ih[HI_FIRST_DENSE].found ? v->i[HI_FIRST_DENSE] : 0;
        if (k_dense > m->num_layers)
            return tp_errf(e, TP_EDATA,
                           "%s: %s = %lld, expected an integer in [0, %lld] "
                           "(%s)",
                           c->file,
                           hit_path(c, v->ih[HI_FIRST_DENSE], p1, sizeof p1),
                           (long long)k_dense, (long long)m->num_layers,
                           hit_path(c, v->ih[HI_LAYERS], p2, sizeof p2));
        first = (k_dense + freq - 1) / freq * freq;
    }
    m->first_dense_layers = first < m->num_layers ? first : m->num_layers;
    m->moe_layer_freq = freq;
    return TP_OK;
}

/* root is the config object found at JSON path base in file. */
static int hf_parse(const char *file, const char *base, const cJSON *root,
                    space_model *m, tp_err *e)
{
    char found[64];
    if (!cJSON_IsObject(root)) {
        tp_json_describe(root, found, sizeof found);
        return tp_errf(e, TP_EDATA,
                       "%s: %s: expected a JSON object (a HuggingFace "
                       "config.json), found %s",
                       file, base, found);
    }
    char text_path[320];
    snprintf(text_path, sizeof text_path, "%s.text_config", base);
    hf_ctx c = {.file = file};
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(root, "text_config");
    if (text && !cJSON_IsNull(text)) {
        if (!cJSON_IsObject(text)) {
            tp_json_describe(text, found, sizeof found);
            return tp_errf(e, TP_EDATA, "%s: %s: expected an object, found %s",
                           file, text_path, found);
        }
        c.scope[c.nscope] = text;
        c.path[c.nscope++] = text_path;
    }
    c.scope[c.nscope] = root;
    c.path[c.nscope++] = base;

    hf_vals v;
    memset(&v, 0, sizeof v);
    int rc = hf_read_all(&c, &v, e);
    if (rc) return rc;
    return hf_to_model(&c, &v, m, e);
}

int space_model_from_hf_json(const cJSON *obj, const char *file,
                             const char *path, space_model *out, tp_err *e)
{
    if (!file) file = "config";
    if (!path || !*path) path = "$";
    if (strlen(path) > 256)
        return tp_errf(e, TP_EINTERNAL, "%s: JSON path too long: %.40s...",
                       file, path);
    space_model m;
    int rc = hf_parse(file, path, obj, &m, e);
    if (rc) return rc;
    /* A last net for what no single key shows (sizes too large together). */
    char where[600];
    if (strcmp(path, "$") == 0)
        snprintf(where, sizeof where, "%s", file);
    else
        snprintf(where, sizeof where, "%s: %s", file, path);
    rc = space_model_validate(&m, where, e);
    if (rc) return rc;
    *out = m;
    return TP_OK;
}

int space_model_from_hf_file(const char *path, space_model *out, tp_err *e)
{
    cJSON *root = NULL;
    int rc = tp_json_load(path, &root, e);
    if (rc) return rc;
    rc = space_model_from_hf_json(root, path, "$", out, e);
    cJSON_Delete(root);
    return rc;
}

int space_model_is_path(const char *name_or_path)
{
    size_t n = strlen(name_or_path);
    return strchr(name_or_path, '/')
           || (n >= 5 && tp_streq_ci(name_or_path + n - 5, ".json"));
}

int space_model_resolve(const char *name_or_path, space_model *out, tp_err *e)
{
    if (space_model_is_path(name_or_path))
        return space_model_from_hf_file(name_or_path, out, e);
    const space_model *p = space_preset_find(name_or_path, e);
    if (!p) return TP_EDATA;
    *out = *p;
    return TP_OK;
}

/* ---- What a config says that the model does not hold ------------------ */

/* Keys of an architecture trainplan's model cannot express, what each
 * means and what the estimate assumes instead. A key counts when present
 * and not null, false, 0 or an empty list. */
static const struct {
    const char *key, *what;
} hf_unread[] = {
    {"mlp_only_layers", "dense layers listed by index (%s): not modelled; "
                        "their FFN is counted as decoder_sparse_step "
                        "places it"},
    {"lm_head_bias", "a bias on the LM head (%s): its vocab parameters are "
                     "not counted"},
    {"cross_attention_layers", "cross-attention layers %s: not modelled"},
    {"o_lora_rank", "a low-rank output projection (rank %s): counted as a "
                    "full one"},
    {"index_topk", "sparse attention over the top %s keys: counted as full "
                   "attention"},
};

static int hf_counts(const cJSON *v)
{
    if (!v || cJSON_IsNull(v) || cJSON_IsFalse(v)) return 0;
    if (cJSON_IsNumber(v) && v->valuedouble == 0) return 0;
    if (cJSON_IsArray(v) && cJSON_GetArraySize(v) == 0) return 0;
    return 1;
}

int space_hf_unread(const cJSON *obj, const char *file, char *buf, size_t cap)
{
    size_t n = 0;
    int count = 0;
    if (cap) buf[0] = '\0';
    if (!cJSON_IsObject(obj)) return 0;
    const cJSON *scopes[2] = {cJSON_GetObjectItemCaseSensitive(obj,
                                                               "text_config"),
                              obj};
    const char *paths[2] = {"$.text_config", "$"};
#define ADD(...)                                                              \
    do {                                                                      \
        if (n < cap) n += (size_t)snprintf(buf + n, cap - n, __VA_ARGS__);  \
        count++;                                                              \
    } while (0)
    /* the model_type: one trainplan knows, else the generic defaults */
    const char *type = NULL;
    for (int s = 0; s < 2; s++) {
        const cJSON *t = cJSON_IsObject(scopes[s])
                             ? cJSON_GetObjectItemCaseSensitive(scopes[s],
                                                                "model_type")
                             : NULL;
        if (!cJSON_IsString(t)) continue;
        type = t->valuestring;
        if (space_hf_type_find(t->valuestring) == &space_hf_generic)
            ADD("%s%s: %s.model_type \"%.60s\" is not one trainplan knows: "
                "read with PretrainedConfig's defaults (tied embeddings, "
                "RoPE, no biases; a gated FFN only with silu)",
                count ? "\n" : "", file, paths[s], t->valuestring);
        break;
    }
    const hf_arch *ar = type ? space_hf_arch_find(type) : &space_hf_arch_none;
    for (int s = 0; s < 2; s++) {
        if (!cJSON_IsObject(scopes[s])) continue;
        /* a local/global pattern the model cannot hold */
        const cJSON *layers_v =
            cJSON_GetObjectItemCaseSensitive(scopes[s], "num_hidden_layers");
        /* Only a count the model could have (space_model_validate
         * refuses the rest); anything else, -1: no count to check the
         * pattern against. The range check keeps the cast defined. */
        int64_t layers = cJSON_IsNumber(layers_v)
                                 && layers_v->valuedouble >= 1
                                 && layers_v->valuedouble <= 1e6
                             ? (int64_t)layers_v->valuedouble
                             : -1;
        for (int k = 0; k < 2; k++) {
            const cJSON *a =
                cJSON_GetObjectItemCaseSensitive(scopes[s], hf_pattern_keys[k]);
            int64_t every = 0;
            if (layer_pattern(a, k == 1, layers, &every) == PAT_IRREGULAR)
                ADD("%s%s: %s.%s: a local/global layer pattern that is not "
                    "periodic: counted as every %lld-th layer global",
                    count ? "\n" : "", file, paths[s], hf_pattern_keys[k],
                    (long long)every);
        }
        /* Qwen's window on the layers from max_window_layers on only */
        const cJSON *use = cJSON_GetObjectItemCaseSensitive(
            scopes[s], "use_sliding_window");
        const cJSON *win =
            cJSON_GetObjectItemCaseSensitive(scopes[s], "sliding_window");
        if (ar->window_switch && cJSON_IsTrue(use) && hf_counts(win)
            && !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(
                scopes[s], "layer_types"))) {
            char val[64];
            tp_json_describe(win, val, sizeof val);
            ADD("%s%s: %s.use_sliding_window: a sliding window (%s) on the "
                "layers from max_window_layers on: counted as full "
                "attention",
                count ? "\n" : "", file, paths[s], val);
        }
    }
    for (size_t i = 0; i < sizeof hf_unread / sizeof hf_unread[0]; i++)
        for (int s = 0; s < 2; s++) {
            if (!cJSON_IsObject(scopes[s])) continue;
            const cJSON *v =
                cJSON_GetObjectItemCaseSensitive(scopes[s], hf_unread[i].key);
            if (!hf_counts(v)) continue;
            char val[64], what[256];
            tp_json_describe(v, val, sizeof val);
            snprintf(what, sizeof what, hf_unread[i].what, val);
            ADD("%s%s: %s.%s: %s", count ? "\n" : "", file, paths[s],
                hf_unread[i].key, what);
            break;
        }
#undef ADD
    return count;
}

int space_model_unread(const char *name_or_path, int strict, FILE *err,
                       tp_err *e)
{
    if (!name_or_path || !space_model_is_path(name_or_path)) return TP_OK;
    cJSON *root = NULL;
    tp_err le = {0};
    /* a file that does not load is the model reader's to report */
    if (tp_json_load(name_or_path, &root, &le)) return TP_OK;
    char buf[4096];
    int k = space_hf_unread(root, name_or_path, buf, sizeof buf);
    cJSON_Delete(root);
    if (k == 0) return TP_OK;
    if (strict)
        return tp_errf(e, TP_EDATA,
                       "--strict: %d thing%s trainplan does not model: %s",
                       k, k == 1 ? "" : "s", buf);
    for (char *p = buf, *nl; *p; p = nl + 1) {
        nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        fprintf(err, "trainplan: warning: %s\n", p);
        if (!nl) break;
    }
    return TP_OK;
}
