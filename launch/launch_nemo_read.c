/*
 * launch_nemo_read.c - a NeMo job read back (launch_read_nemo): the values
 * of its keys (launch_nemo_keys.c) into the model, the layout and the job
 * as the command line would set them. The writers are launch_nemo.c and
 * launch_nemo1.c; the sources are launch_nemo.c's opening comment.
 *
 * The reader takes either form back (and "key: value" YAML lines, and a
 * torchrun ... run_recipe.py command line, or a launch script of one read
 * through the shell expander, launch_shell.c) into the options the command
 * line would set. It does not run Hydra: it reads the keys trainplan
 * writes and the model keys of GPTModelProvider, refuses other model,
 * ddp, mixed-precision and comm-overlap keys (it cannot tell what they
 * change) and skips the sections that do not change an iteration
 * (checkpoint, logger, optimizer, scheduler, ...).
 */
#include "launch.h"
#include "launch_int.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "hw.h"

#define SET(id) (r->v[id].set && !r->v[id].null)
#define IV(id) (r->v[id].i)

/* The model the keys describe: the base recipe's preset with the model
 * keys over it, or (the generic recipe, or none) the model keys alone
 * over GPTModelProvider's defaults (LayerNorm, GeLU, learned positions,
 * tied embeddings, biases: gpt_provider.py, transformer_config.py). */
/* model.moe_layer_freq: an int N (layer i MoE when i % N == 0) or a list
 * of 0 and 1 per layer, into m's leading dense layers and frequency;
 * TP_EDATA when the list is not trainplan's placement (k dense layers,
 * then one MoE layer every f). */
static int moe_freq(const nemo_val *v, const char *file, space_model *m,
                    tp_err *e)
{
    long long f;
    if (!strchr(v->s, '[')) {
        if (tp_parse_int(v->s, 1, 100000, &f))
            return tp_errf(e, TP_EDATA, "%s:%d: model.moe_layer_freq: "
                           "expected an integer in [1, 100000] or a list of "
                           "0 and 1 per layer, found '%s'", file, v->line,
                           v->s);
        m->first_dense_layers = 0;
        m->moe_layer_freq = f;
        return TP_OK;
    }
    int64_t L = m->num_layers, n = 0, k = -1, step = 0, bad = 0;
    for (const char *p = v->s; *p && !bad; p++) {
        if (*p == '[' || *p == ']' || *p == ',' || *p == ' ') continue;
        if (*p != '0' && *p != '1') {
            bad = 1;
            break;
        }
        if (*p == '1') {
            if (k < 0) k = n;
            else if (!step) step = n - k;
        }
        n++;
    }
    if (!step) step = 1;
    for (int64_t i = 0, j = 0; !bad && v->s[j]; j++) {
        char c = v->s[j];
        if (c != '0' && c != '1') continue;
        bad = (c == '1') != (k >= 0 && i >= k && (i - k) % step == 0);
        i++;
    }
    if (bad || n != L || k < 0)
        return tp_errf(e, TP_EDATA, "%s:%d: model.moe_layer_freq %s: expected "
                       "%lld 0s and 1s: leading dense layers (0), then one "
                       "MoE layer (1) every N, which is what trainplan "
                       "models", file, v->line, v->s, (long long)L);
    m->first_dense_layers = k;
    m->moe_layer_freq = step;
    return TP_OK;
}

/* The MoE keys into m (Megatron-Core's defaults where absent:
 * moe_router_topk 2, moe_ffn_hidden_size = ffn_hidden_size, softmax,
 * every layer MoE, dropless). */
static int build_moe(const nemo_read *r, const char *file, space_model *m,
                     tp_err *e)
{
    if (SET(K_QK_NORM)) m->qk_norm = (int)IV(K_QK_NORM);
    if (SET(K_MTP)) m->mtp_layers = IV(K_MTP);
    if (!SET(K_EXPERTS)) {
        if (SET(K_EP) && IV(K_EP) > 1)
            return tp_errf(e, TP_EDATA, "%s:%d: model.expert_model_parallel_"
                           "size %lld without model.num_moe_experts: expert "
                           "parallelism needs a mixture of experts", file,
                           r->v[K_EP].line, IV(K_EP));
        return TP_OK;
    }
    m->num_experts = IV(K_EXPERTS);
    m->top_k = SET(K_MOE_TOPK) ? IV(K_MOE_TOPK) : 2;
    m->expert_ffn_hidden = SET(K_MOE_FFN) ? IV(K_MOE_FFN) : m->ffn_hidden;
    m->shared_experts = m->shared_ffn_hidden = 0;
    if (SET(K_MOE_SHARED)) {
        /* one shared expert of the total size: the same GEMMs */
        m->shared_experts = 1;
        m->shared_ffn_hidden = IV(K_MOE_SHARED);
        m->shared_expert_gate = SET(K_MOE_SHARED_GATE) && IV(K_MOE_SHARED_GATE);
    }
    m->first_dense_layers = 0;
    m->moe_layer_freq = 1;
    if (SET(K_MOE_FREQ)) {
        int rc = moe_freq(&r->v[K_MOE_FREQ], file, m, e);
        if (rc) return rc;
    }
    m->router_sigmoid = SET(K_MOE_SCORE) && r->v[K_MOE_SCORE].name == 1;
    m->router_groups = SET(K_MOE_GROUPS) ? IV(K_MOE_GROUPS) : 0;
    m->router_topk_groups = SET(K_MOE_GROUP_TOPK) ? IV(K_MOE_GROUP_TOPK) : 0;
    m->capacity_factor = SET(K_MOE_CAPACITY) ? r->v[K_MOE_CAPACITY].x : 0;
    return TP_OK;
}

static int build_model(const nemo_read *r, const char *file, int64_t seq,
                       space_model *m, tp_err *e)
{
    const struct launch_nemo_recipe *rc = NULL;
    if (r->recipe[0] && strcmp(r->recipe, LAUNCH_NEMO_GENERIC_RECIPE) != 0) {
        for (int i = 0; i < LAUNCH_NEMO_RECIPE_COUNT; i++)
            if (strcmp(launch_nemo_recipes[i].recipe, r->recipe) == 0)
                rc = &launch_nemo_recipes[i];
        if (!rc) {
            char known[1024] = LAUNCH_NEMO_GENERIC_RECIPE;
            for (int i = 0; i < LAUNCH_NEMO_RECIPE_COUNT; i++) {
                size_t n = strlen(known);
                snprintf(known + n, sizeof known - n, ", %s",
                         launch_nemo_recipes[i].recipe);
            }
            return tp_errf(e, TP_EDATA, "%s:%d: --recipe %s: not a recipe "
                           "trainplan knows the model of; expected one of %s "
                           "(or %s with the model's sizes as model.* keys)",
                           file, r->recipe_line, r->recipe, known,
                           LAUNCH_NEMO_GENERIC_RECIPE);
        }
    }
    memset(m, 0, sizeof *m);
    if (rc) {
        const space_model *p = space_preset_find(rc->preset, e);
        if (!p) return TP_EINTERNAL;
        *m = *p;
    } else {
        static const nemo_kid need[] = {K_LAYERS, K_HIDDEN, K_HEADS, K_FFN};
        for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
            if (!SET(need[i])) {
                const char *k = "";
                for (int j = 0; j < launch_nemo_key_count; j++)
                    if (launch_nemo_keys[j].id == need[i]) {
                        k = launch_nemo_keys[j].key;
                        break;
                    }
                return tp_errf(e, TP_EDATA, "%s: no %s: %s builds a bare "
                               "GPTModelProvider, so the model's sizes must "
                               "be given (or name a recipe with --recipe in "
                               "a '# launch:' or torchrun line)",
                               file, k, r->recipe[0] ? r->recipe
                                                      : "no recipe named; "
                                                        LAUNCH_NEMO_GENERIC_RECIPE);
            }
        snprintf(m->name, sizeof m->name, "%.63s",
                 r->recipe[0] ? r->recipe : "nemo-overrides");
        snprintf(m->source, sizeof m->source, "%s (NeMo / Megatron-Bridge "
                 "model keys)", file);
        m->act = SPACE_ACT_GELU;
        m->norm = SPACE_NORM_LAYERNORM;
        m->pos = SPACE_POS_LEARNED;
        m->tied_embeddings = 1;
        m->qkv_bias = m->out_bias = m->mlp_bias = 1;
    }
    if (SET(K_LAYERS)) m->num_layers = IV(K_LAYERS);
    if (SET(K_HIDDEN)) m->hidden = IV(K_HIDDEN);
    if (SET(K_HEADS)) m->heads = m->kv_heads = IV(K_HEADS);
    if (SET(K_GROUPS)) m->kv_heads = IV(K_GROUPS);
    if (!rc && !SET(K_GROUPS)) m->kv_heads = m->heads;
    if (SET(K_KV_CH)) m->head_dim = IV(K_KV_CH);
    if (SET(K_FFN)) m->ffn_hidden = IV(K_FFN);
    if (SET(K_NORM)) m->norm = (space_norm)(r->v[K_NORM].name % 2);
    if (SET(K_POS))
        m->pos = r->v[K_POS].name == 0 ? SPACE_POS_LEARNED : SPACE_POS_ROPE;
    if (SET(K_TIED)) m->tied_embeddings = (int)IV(K_TIED);
    if (SET(K_ROTARY_PCT))
        m->rotary_fraction = r->v[K_ROTARY_PCT].x < 1 ? r->v[K_ROTARY_PCT].x
                                                       : 0;
    if (SET(K_ROTARY_BASE)) m->rope_theta = r->v[K_ROTARY_BASE].x;
    else if (!rc && m->pos == SPACE_POS_ROPE) m->rope_theta = 10000;
    if (m->pos != SPACE_POS_ROPE) m->rotary_fraction = m->rope_theta = 0;
    if (SET(K_WINDOW)) {
        /* [L, R] (a list, or Python's tuple); L -1: no window */
        long long left, right;
        char tail;
        const char *w = r->v[K_WINDOW].s;
        if ((sscanf(w, " [ %lld , %lld ] %c", &left, &right, &tail) != 2
             && sscanf(w, " ( %lld , %lld ) %c", &left, &right, &tail) != 2)
            || left >= 100000000 || (left >= 0 && right != 0))
            return tp_errf(e, TP_EDATA, "%s:%d: model.window_size: expected "
                           "[LEFT,0] (LEFT -1 to 99999999: a causal window of "
                           "LEFT + 1 tokens) or null, found '%s'", file,
                           r->v[K_WINDOW].line, w);
        m->window = left >= 0 ? left + 1 : 0;
        m->window_chunked = 0;
        if (m->window == 0) m->global_every = 0;
    }
    if (SET(K_WINDOW_SKIP) && m->window > 0) m->global_every = IV(K_WINDOW_SKIP);
    if (SET(K_SOFTMAX)) m->attn_sinks = r->v[K_SOFTMAX].name;
    if (SET(K_ACT_FUNC) || SET(K_GLU)) {
        static const char *const fn[] = {"gelu", "relu", "squared_relu",
                                         "squared_relu", "silu"};
        const char *f = SET(K_ACT_FUNC) ? fn[r->v[K_ACT_FUNC].name]
                        : m->act == SPACE_ACT_SWIGLU ? "silu"
                                                     : launch_nemo_act[m->act].func;
        int glu = SET(K_GLU) ? (int)IV(K_GLU) : launch_nemo_act[m->act].glu;
        int found = -1;
        for (int a = 0; a < SPACE_ACT_COUNT; a++)
            if (strcmp(launch_nemo_act[a].func,
                       f) == 0 && launch_nemo_act[a].glu == glu)
                found = a;
        if (found < 0)
            return tp_errf(e, TP_EDATA, "%s:%d: model.activation_func %s with "
                           "model.gated_linear_unit %s: not an activation "
                           "trainplan models (gelu, relu, squared_relu; gelu "
                           "or silu gated)", file,
                           r->v[SET(K_ACT_FUNC) ? K_ACT_FUNC : K_GLU].line, f,
                           launch_nemo_tf(glu));
        m->act = (space_act)found;
    }
    if (SET(K_ACT1)) {
        static const space_act a1[] = {SPACE_ACT_GELU, SPACE_ACT_SQUARED_RELU,
                                       SPACE_ACT_SWIGLU, SPACE_ACT_GEGLU};
        m->act = a1[r->v[K_ACT1].name];
    }
    /* Megatron-Core: Q/K/V biased with add_bias_linear or add_qkv_bias,
     * the output projection and the MLP with add_bias_linear. */
    if (SET(K_BIAS_LINEAR)) m->out_bias = m->mlp_bias = (int)IV(K_BIAS_LINEAR);
    if (SET(K_BIAS_LINEAR) || SET(K_QKV_BIAS))
        m->qkv_bias = m->out_bias || (SET(K_QKV_BIAS) && IV(K_QKV_BIAS));
    if (SET(K_BIAS1)) m->qkv_bias = m->out_bias = m->mlp_bias = (int)IV(K_BIAS1);
    /* A model.vocab_size that is set is used as it is (no padding);
     * trainplan pads every vocabulary, which is the same where it is
     * already a multiple of 128 x TP. */
    if (SET(K_VOCAB_MODEL)) m->vocab = IV(K_VOCAB_MODEL);
    else if (SET(K_VOCAB_TOK)) m->vocab = IV(K_VOCAB_TOK);
    else if (!rc)
        return tp_errf(e, TP_EDATA, "%s: no vocabulary: give "
                       "tokenizer.vocab_size (the unpadded count; "
                       "model.vocab_size=null pads it)", file);
    if (SET(K_ATTN_DROP)) m->attn_dropout = r->v[K_ATTN_DROP].x;
    if (SET(K_HID_DROP)) m->hidden_dropout = r->v[K_HID_DROP].x;
    /* Learned positions: Megatron-Core builds seq_length of them
     * (GPTModel max_sequence_length); a preset keeps its own count. */
    if (SET(K_MAXPOS)) m->max_position = IV(K_MAXPOS);
    else if (!rc) m->max_position = seq;
    int mrc = build_moe(r, file, m, e);
    if (mrc) return mrc;
    return space_model_validate(m, file, e);
}

int launch_read_nemo(const char *text, const char *file, search_job *j,
                     space_model *m, FILE *err, tp_err *e)
{
    (void)err; /* no notes: every key read either counts or is refused */
    nemo_read *r = tp_xmalloc(sizeof *r);
    memset(r, 0, sizeof *r);
    size_t n = strlen(text);
    char *buf = tp_xmalloc(n + 1);
    memcpy(buf, text, n + 1);
    int rc = TP_OK, ln = 0;
    if (launch_nemo_is_launch_script(text)) {
        /* the shell's words of each command: the launch's, and stray
         * key=value override lines as the line reader takes them */
        launch_sh sh;
        rc = launch_sh_read(text, file, &sh, e);
        for (int c = 0; !rc && c < sh.nc; c++) {
            const launch_sh_word *w = &sh.w[sh.c[c].first];
            int nw = sh.c[c].n, launch = 0;
            for (int i = 0; i < nw; i++) {
                size_t len = strlen(w[i].s);
                if (strcmp(tp_basename(w[i].s), "torchrun") == 0
                    || (len >= 13
                        && strcmp(w[i].s + len - 13, "run_recipe.py") == 0))
                    launch = 1;
            }
            if (launch) {
                rc = launch_nemo_read_command_sh(r, w, nw, file, e);
            } else if (!(w[0].flags & (LAUNCH_SH_ASSIGN | LAUNCH_SH_UNKNOWN))
                       && strchr(w[0].s, '=') && strchr(w[0].s, '.')) {
                for (int i = 0; !rc && i < nw; i++) {
                    char *eq = strchr(w[i].s, '=');
                    if (!eq || eq == w[i].s) continue;
                    char key[256];
                    size_t kl = (size_t)(eq - w[i].s);
                    if (kl >= sizeof key) kl = sizeof key - 1;
                    memcpy(key, w[i].s, kl);
                    key[kl] = '\0';
                    rc = launch_nemo_read_item(r, key, eq + 1, file, w[i].line, e);
                }
            }
        }
        launch_sh_free(&sh);
        buf[0] = '\0';
    }
    for (char *s = buf; s && !rc;) {
        char *nl = strchr(s, '\n');
        if (nl) *nl = '\0';
        ln++;
        size_t k = strlen(s);
        if (k && s[k - 1] == '\r') s[k - 1] = '\0';
        rc = launch_nemo_read_line(r, s, file, ln, e);
        s = nl ? nl + 1 : NULL;
    }
    free(buf);
    if (!rc) {
        int64_t seq = SET(K_SEQ_DATA) ? IV(K_SEQ_DATA)
                      : SET(K_SEQ_MODEL) ? IV(K_SEQ_MODEL) : 0;
        rc = build_model(r, file, seq, m, e);
    }
    if (rc) {
        free(r);
        return rc;
    }
    j->framework = SPACE_FW_MEGATRON_CORE;
    /* The allocator: Megatron-Bridge v0.6.0's recipes default
     * PYTORCH_CUDA_ALLOC_CONF to expandable_segments:True (env_vars from
     * recipes/utils/environment_utils.py COMMON_RECIPE_ENV_VARS, set by
     * training/config.py apply_environment_variables unless the
     * launcher's environment has it); NeMo 1's launcher YAML sets nothing
     * (PyTorch's default, off). --[no-]expandable-segments says what the
     * environment does instead. */
    int nemo1 = SET(K_PRECISION1) || SET(K_FP8_1) || SET(K_OPTIM1)
                || SET(K_NODES) || SET(K_DEVICES) || SET(K_ACT1)
                || SET(K_BIAS1);
    if (!(j->sw_set & SEARCH_SW_ALLOC))
        j->alloc_expandable = !nemo1, j->sw_set |= SEARCH_SW_ALLOC;
    if (SET(K_TP)) j->tp = IV(K_TP), j->tp_set = 1;
    if (SET(K_PP)) j->pp = IV(K_PP);
    if (SET(K_CP)) j->cp = IV(K_CP);
    if (r->v[K_VPP].set) j->vstages = SET(K_VPP) ? IV(K_VPP) : 1;
    /* The pipeline split: the provider's fields, Megatron-Core's even
     * split where none is given; its rules are the estimate's (split.c). */
    j->split_set = 1;
    if (SET(K_LAYOUT)) {
        const nemo_val *v = &r->v[K_LAYOUT];
        char lwhy[320];
        if (space_pp_layout_parse(v->s, &j->pp_layout_store, lwhy,
                                  sizeof lwhy))
            rc = tp_errf(e, TP_EDATA, "%s:%d: model.pipeline_model_parallel_"
                         "layout: %s", file, v->line, lwhy);
        else if (j->pp <= 0 || j->pp_layout_store.n % j->pp)
            rc = tp_errf(e, TP_EDATA, "%s:%d: model.pipeline_model_parallel_"
                         "layout '%s': %d stages are not a multiple of "
                         "model.pipeline_model_parallel_size (%lld)",
                         file, v->line, v->s, j->pp_layout_store.n,
                         (long long)j->pp);
        else if (SET(K_VPP) && IV(K_VPP) != j->pp_layout_store.n / j->pp)
            rc = tp_errf(e, TP_EDATA, "%s:%d: model.virtual_pipeline_model_"
                         "parallel_size %lld: the layout has %lld chunks a "
                         "rank", file, r->v[K_VPP].line, IV(K_VPP),
                         (long long)(j->pp_layout_store.n / j->pp));
        if (!rc) {
            j->vstages = j->pp_layout_store.n / j->pp;
            j->pp_layout = &j->pp_layout_store;
        }
    }
    if (SET(K_ACC_EMBED) && IV(K_ACC_EMBED)) j->pp_account |= SPACE_PP_EMBED;
    if (SET(K_ACC_LOSS) && IV(K_ACC_LOSS)) j->pp_account |= SPACE_PP_LOSS;
    if (SET(K_PP_FIRST)) j->pp_first = IV(K_PP_FIRST);
    if (SET(K_PP_LAST)) j->pp_last = IV(K_PP_LAST);
    /* a split Megatron-Core refuses is refused here, where the file is
     * known (the rules and their sources: split.c) */
    if (!rc) {
        space_layout t;
        memset(&t, 0, sizeof t);
        t.pp = j->pp > 0 ? j->pp : 1;
        t.vpp = j->vstages > 0 ? j->vstages : 1;
        t.pp_account = j->pp_account;
        t.pp_first = j->pp_first, t.pp_last = j->pp_last;
        t.pp_layout = j->pp_layout;
        space_split sp;
        char swhy[320];
        space_reject rj = space_split_resolve(m, &t, &sp, swhy, sizeof swhy);
        int line = SET(K_LAYOUT)     ? r->v[K_LAYOUT].line
                   : SET(K_PP_FIRST) ? r->v[K_PP_FIRST].line
                   : SET(K_PP_LAST)  ? r->v[K_PP_LAST].line
                   : SET(K_ACC_EMBED) ? r->v[K_ACC_EMBED].line
                   : SET(K_ACC_LOSS) ? r->v[K_ACC_LOSS].line
                                     : r->v[K_PP].line;
        if (rj != SPACE_OK)
            rc = tp_errf(e, TP_EDATA, "%s:%d: the pipeline split: %s (%s)",
                         file, line, swhy, space_reject_names[rj]);
    }
    if (SET(K_SP)) j->sp = (int)IV(K_SP);
    /* experts: Megatron-Core's defaults EP 1, expert TP = TP, allgather
     * (ModelParallelConfig, TransformerConfig) */
    if (m->num_experts > 0) {
        j->ep = SET(K_EP) ? IV(K_EP) : 1;
        j->etp = SET(K_ETP) ? IV(K_ETP) : j->tp_set ? j->tp : 1;
        j->moe_dispatcher = SET(K_MOE_DISPATCHER)
                                ? r->v[K_MOE_DISPATCHER].name
                                : SPACE_MOE_ALLGATHER;
        if (SET(K_MOE_A2A_OVERLAP) && IV(K_MOE_A2A_OVERLAP))
            j->moe_comm_overlap = SPACE_MOE_OVERLAP_A2A;
        else if (SET(K_MOE_SHARED_OVERLAP) && IV(K_MOE_SHARED_OVERLAP))
            j->moe_comm_overlap = SPACE_MOE_OVERLAP_SHARED;
        /* the backend counts for the flex dispatcher only */
        if (SET(K_MOE_FLEX_BACKEND) && j->moe_dispatcher == SPACE_MOE_FLEX)
            j->moe_flex_backend = r->v[K_MOE_FLEX_BACKEND].name;
        if (SET(K_MOE_ROUTER_PAD) && IV(K_MOE_ROUTER_PAD))
            j->moe_router_pad = 1;
    }
    if (SET(K_MBS)) j->mbs = IV(K_MBS);
    if (SET(K_GBS)) j->gbs = IV(K_GBS);
    /* run_recipe.py sets model.seq_length from dataset.seq_length */
    if (SET(K_SEQ_DATA)) j->seq_length = IV(K_SEQ_DATA);
    else if (SET(K_SEQ_MODEL)) j->seq_length = IV(K_SEQ_MODEL);
    if (r->v[K_RC_GRAN].set) {
        j->recompute = r->v[K_RC_GRAN].null ? SPACE_RECOMPUTE_NONE
                       : r->v[K_RC_GRAN].name == 0 ? SPACE_RECOMPUTE_SELECTIVE
                                                   : SPACE_RECOMPUTE_FULL;
        if (j->recompute == SPACE_RECOMPUTE_FULL && SET(K_RC_METHOD)) {
            j->recompute_method = r->v[K_RC_METHOD].name;
            j->sw_set |= SEARCH_SW_RC_METHOD;
        }
        if (j->recompute == SPACE_RECOMPUTE_FULL && SET(K_RC_LAYERS))
            j->recompute_layers = IV(K_RC_LAYERS);
    }
    if (!rc && SET(K_RC_MODULES) && j->recompute == SPACE_RECOMPUTE_SELECTIVE
        && space_rc_modules_parse(r->v[K_RC_MODULES].s, &j->recompute_modules))
        rc = tp_errf(e, TP_EDATA, "%s:%d: model.recompute_modules %s: "
                     "expected a list of core_attn, layernorm, moe_act, "
                     "mla_up_proj, mlp, moe, shared_experts, or null", file,
                     r->v[K_RC_MODULES].line, r->v[K_RC_MODULES].s);
    if (SET(K_MP)) {
        int i = r->v[K_MP].name;
        j->precision = launch_nemo_mp_meaning[i].dtype;
        if (j->precision == HW_FP8) {
            j->fp8_recipe = launch_nemo_mp_meaning[i].fp8;
            j->sw_set |= SEARCH_SW_FP8;
            /* as the recipe runs: most gather fp8 parameters */
            j->fp8_params = launch_nemo_mp_fp8[j->fp8_recipe].fp8_params;
        }
    }
    if (SET(K_PRECISION1))
        j->precision = r->v[K_PRECISION1].name < 2 ? HW_BF16 : HW_FP16;
    if (SET(K_FP8_1) && IV(K_FP8_1)) {
        /* NeMo 1's fp8 is delayed scaling */
        j->precision = HW_FP8;
        j->fp8_recipe = SPACE_FP8_DELAYED;
        j->sw_set |= SEARCH_SW_FP8;
    }
    if (SET(K_FP8_PARAMS)) j->fp8_params = (int)IV(K_FP8_PARAMS);
    if (SET(K_FP8_DPA)) j->fp8_attention = (int)IV(K_FP8_DPA);
    if (SET(K_FSDP) && IV(K_FSDP))
        j->zero = SET(K_SHARD) ? r->v[K_SHARD].name : SPACE_ZERO_3;
    else if (SET(K_DISTOPT) || SET(K_DISTOPT_OPT))
        /* either turns it on in both (config.py,
         * _validate_and_sync_distributed_optimizer_settings) */
        j->zero = (SET(K_DISTOPT) && IV(K_DISTOPT))
                          || (SET(K_DISTOPT_OPT) && IV(K_DISTOPT_OPT))
                      ? SPACE_ZERO_1
                      : SPACE_ZERO_NONE;
    if (SET(K_OPTIM1))
        j->zero = r->v[K_OPTIM1].name == 1 ? SPACE_ZERO_1 : SPACE_ZERO_NONE;
    if (SET(K_DP_OVERLAP)) {
        j->no_overlap = !IV(K_DP_OVERLAP);
        j->sw_set |= SEARCH_SW_DP;
    }
    if (SET(K_TP_UB)) {
        j->tp_overlap = IV(K_TP_UB) ? SPACE_TP_OVERLAP_ALL : SPACE_TP_OVERLAP_BWD;
        j->sw_set |= SEARCH_SW_TP;
    }
    if (SET(K_P2P_OVERLAP)) {
        j->no_pp_overlap = !IV(K_P2P_OVERLAP);
        j->sw_set |= SEARCH_SW_PP;
    }
    /* the fused loss: Megatron-Core's native one, or Transformer Engine's
     * (cross_entropy_fusion_impl te, which Megatron-Core only warns
     * about), read as today's TE keeps it: an fp32 gradient (v2.18 on) */
    if (SET(K_CE)) {
        int te = SET(K_CE_IMPL) && r->v[K_CE_IMPL].name == 1;
        j->ce_fusion = IV(K_CE) && !te;
        j->ce_te = IV(K_CE) && te ? SPACE_CE_TE_FP32 : SPACE_CE_TE_NONE;
    }
    if (SET(K_MOE_PERMUTE) && SET(K_EXPERTS)) {
        j->moe_permute_fusion = (int)IV(K_MOE_PERMUTE);
        j->sw_set |= SEARCH_SW_PERMUTE;
    }
    if (SET(K_MOE_ROUTER) && SET(K_EXPERTS)) {
        j->moe_router_fusion = (int)IV(K_MOE_ROUTER);
        j->sw_set |= SEARCH_SW_ROUTER;
    }
    if (SET(K_FSDP_DB)) j->fsdp_double_buffer = (int)IV(K_FSDP_DB);
    if (SET(K_CG_IMPL)) j->cuda_graph = r->v[K_CG_IMPL].name;
    if (!rc && SET(K_CG_SCOPE)) {
        /* the deprecated scope's "full_iteration" is the implementation
         * (cuda_graph_config.py CUDA_GRAPH_MODULES_DEPRECATIONS) */
        char mods[512];
        snprintf(mods, sizeof mods, "%s", r->v[K_CG_SCOPE].s);
        char *fi = strstr(mods, "full_iteration");
        if (fi && strncmp(fi, "full_iteration_inference", 24) != 0) {
            j->cuda_graph = SPACE_CG_FULL_ITERATION;
            memset(fi, ' ', 14);
        }
        if (space_cgm_parse(mods, &j->cuda_graph_modules))
            rc = tp_errf(e, TP_EDATA, "%s:%d: %s %s: expected full, "
                         "full_iteration or a list of attn, mlp, moe, "
                         "moe_router, moe_preprocess", file,
                         r->v[K_CG_SCOPE].line, "model.cuda_graph_scope",
                         r->v[K_CG_SCOPE].s);
        else if (j->cuda_graph == SPACE_CG_LOCAL || j->cuda_graph == SPACE_CG_TE)
            j->cuda_graph_scope_set = j->cuda_graph_modules != 0;
        else
            j->cuda_graph_modules = 0;
    }
    /* null (the recipes' None): Transformer Engine picks, trainplan's
     * auto */
    if (r->v[K_ATTN].set) {
        j->attn_backend = SET(K_ATTN) ? r->v[K_ATTN].name : SPACE_ATTN_AUTO;
        j->sw_set |= SEARCH_SW_FLASH;
    }
    if (SET(K_CP_COMM)) {
        j->cp_comm = r->v[K_CP_COMM].name;
        j->sw_set |= SEARCH_SW_CP;
    }
    /* memory savers and micro-batch groups (issue 28): what Megatron-Core
     * refuses of them is search_job_check_savers' and est_saver_check's */
    if (SET(K_PA_OPT)) j->pa_optimizer = (int)IV(K_PA_OPT);
    {
        const struct {
            nemo_kid k;
            const char *key;
            int *out;
        } dts[] = {{K_MAIN_GRADS, "optimizer.main_grads_dtype",
                    &j->main_grads_dtype},
                   {K_MAIN_PARAMS, "optimizer.main_params_dtype",
                    &j->main_params_dtype},
                   {K_EXP_AVG, "optimizer.exp_avg_dtype", &j->exp_avg_dtype},
                   {K_EXP_AVG_SQ, "optimizer.exp_avg_sq_dtype",
                    &j->exp_avg_sq_dtype}};
        for (size_t i = 0; !rc && i < sizeof dts / sizeof dts[0]; i++) {
            if (!SET(dts[i].k)) continue;
            int d = launch_nemo_odtype_of[r->v[dts[i].k].name];
            if (d == SPACE_OPT_FP8)
                rc = tp_errf(e, TP_EDATA, "%s:%d: %s fp8: Megatron-Bridge "
                             "reads it as torch.float8_e4m3fn, which Transformer "
                             "Engine's FusedAdam refuses (fp8 states are "
                             "torch.uint8 there); not a launch that runs",
                             file, r->v[dts[i].k].line, dts[i].key);
            *dts[i].out = d;
        }
    }
    if (SET(K_OPT_OFFLOAD) && IV(K_OPT_OFFLOAD)) {
        j->opt_offload = 1;
        if (SET(K_OPT_OFFLOAD_FRAC)) {
            j->opt_offload_fraction = r->v[K_OPT_OFFLOAD_FRAC].x;
            if (!rc && !(j->opt_offload_fraction > 0))
                rc = tp_errf(e, TP_EDATA, "%s:%d: optimizer.optimizer_"
                             "offload_fraction 0: nothing offloaded; set "
                             "optimizer.optimizer_cpu_offload=false",
                             file, r->v[K_OPT_OFFLOAD_FRAC].line);
        }
        j->opt_offload_overlap = SET(K_OPT_OFFLOAD_OVERLAP)
                                 && IV(K_OPT_OFFLOAD_OVERLAP);
    }
    /* TransformerConfig: cpu_offloading with cpu_offloading_num_layers;
     * Transformer Engine offloads nothing without activations
     * (get_cpu_offload_context: weights alone are a no-op) */
    if (SET(K_CPU_OFFLOAD) && IV(K_CPU_OFFLOAD)
        && !(SET(K_CPU_OFFLOAD_ACT) && !IV(K_CPU_OFFLOAD_ACT))) {
        j->act_offload_layers = SET(K_CPU_OFFLOAD_LAYERS)
                                    ? IV(K_CPU_OFFLOAD_LAYERS)
                                    : 0;
        if (!rc && j->act_offload_layers <= 0)
            rc = tp_errf(e, TP_EDATA, "%s:%d: model.cpu_offloading true "
                         "without model.cpu_offloading_num_layers >= 1 "
                         "(TransformerConfig's default 0 offloads no layer); "
                         "give the layers",
                         file, r->v[K_CPU_OFFLOAD].line);
    }
    if (!rc && SET(K_FG_OFFLOAD) && IV(K_FG_OFFLOAD)) {
        j->fine_grained = 1;
        if (!SET(K_OFFLOAD_MODULES)
            || space_off_modules_parse(r->v[K_OFFLOAD_MODULES].s,
                                       &j->offload_modules))
            rc = tp_errf(e, TP_EDATA, "%s:%d: model.offload_modules %s: "
                         "expected a list of attn_norm, qkv_linear, "
                         "core_attn, attn_proj, mlp_norm, expert_fc1, "
                         "moe_act",
                         file,
                         r->v[SET(K_OFFLOAD_MODULES) ? K_OFFLOAD_MODULES
                                                     : K_FG_OFFLOAD].line,
                         SET(K_OFFLOAD_MODULES) ? r->v[K_OFFLOAD_MODULES].s
                                                : "(none)");
        if (!rc && SET(K_OFFLOAD_FRAC)) {
            j->offload_fraction = r->v[K_OFFLOAD_FRAC].x;
            if (!(j->offload_fraction > 0))
                rc = tp_errf(e, TP_EDATA, "%s:%d: model.activation_offload_"
                             "fraction 0: nothing offloaded",
                             file, r->v[K_OFFLOAD_FRAC].line);
        }
    }
    if (SET(K_MB_GROUP)) j->mb_group = IV(K_MB_GROUP);
    if (!rc && SET(K_WGRAD_DEFER) && IV(K_WGRAD_DEFER))
        rc = tp_errf(e, TP_EDATA, "%s:%d: comm_overlap.defer_embedding_wgrad_"
                     "compute: estimate has no option for it; remove it",
                     file, r->v[K_WGRAD_DEFER].line);
    long long nodes = r->nnodes ? r->nnodes : SET(K_NODES) ? IV(K_NODES) : 0;
    long long per = r->nproc ? r->nproc : SET(K_DEVICES) ? IV(K_DEVICES) : 0;
    if (!rc && (nodes > 0) != (per > 0))
        rc = tp_errf(e, TP_EDATA, "%s: %s given without %s: the GPUs are "
                     "nodes x GPUs per node", file,
                     nodes ? "the nodes" : "the GPUs per node",
                     nodes ? "the GPUs per node (--nproc-per-node, "
                             "trainer.devices)"
                           : "the nodes (--nnodes, trainer.num_nodes)");
    if (!rc && nodes > 0) {
        if (j->gpus > 0 && j->gpus != nodes * per)
            rc = tp_errf(e, TP_EUSAGE, "--gpus %lld and %s (%lld nodes x %lld "
                         "GPUs) disagree", (long long)j->gpus, file, nodes,
                         per);
        j->gpus = nodes * per;
    }
    free(r);
    return rc;
}
