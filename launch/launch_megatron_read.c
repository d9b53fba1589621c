/*
 * launch_megatron_read.c - a Megatron-LM job read back as a layout: the
 * words of the script's Megatron-LM command, and the model, layout and
 * job its flags give (launch_read_megatron). The flags it reads, their
 * values checked, and the attention, MoE and MLA model flags are
 * launch_megatron_flags.c's; the writer is launch_megatron.c.
 *
 * Reads a Megatron-LM command line or script (a user's own too) through the
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
#include "launch_int.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hw.h"
#include "tp_base.h"

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
    return launch_mg_flag_of(name) >= 0;
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
        int f = launch_mg_flag_of(name);
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
        } else if (launch_mg_flags[f].value) {
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
                             file, launch_mg_flags[required[i]].name);
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
    if (!rc) rc = launch_mg_seen_int(&s, F_NUM_LAYERS, file, 1, 100000,
                                     &m->num_layers, e);
    if (!rc) rc = launch_mg_seen_int(&s, F_HIDDEN, file, 1, 1000000, &m->hidden, e);
    if (!rc) rc = launch_mg_seen_int(&s, F_HEADS, file, 1, 100000, &m->heads, e);
    if (!rc) rc = launch_mg_seen_int(&s, F_SEQ, file, 1, 100000000, &seq, e);
    if (!rc) {
        m->kv_heads = m->heads;
        if (s.v[F_GQA]) {
            m->kv_heads = 1; /* num_query_groups' argparse default */
            rc = launch_mg_seen_int(&s, F_QUERY_GROUPS, file, 1, 100000,
                                    &m->kv_heads, e);
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
        rc = launch_mg_seen_int(&s, F_FFN, file, 1, 10000000, &m->ffn_hidden, e);
    }
    if (!rc) rc = launch_mg_seen_int(&s, F_KV_CHANNELS, file, 1, 100000,
                                     &m->head_dim, e);
    if (!rc) {
        m->max_position = seq;
        rc = launch_mg_seen_int(&s, F_MAX_POS, file, 1, 100000000,
                                &m->max_position, e);
        if (!rc && !s.v[F_MAX_POS])
            rc = tp_errf(e, TP_EDATA, "%s: no --max-position-embeddings "
                         "(Megatron-LM requires it: validate_args)", file);
    }
    if (!rc && s.v[F_POS_TYPE]) {
        static const char *const names[SPACE_POS_COUNT] = {
            [SPACE_POS_LEARNED] = "learned_absolute",
            [SPACE_POS_ROPE] = "rope", [SPACE_POS_NONE] = "none"};
        int k = launch_mg_seen_choice(&s, F_POS_TYPE, file, names,
                                      SPACE_POS_COUNT, e);
        if (k < 0) rc = TP_EDATA;
        else m->pos = (space_pos)k;
    }
    if (!rc && s.v[F_NORM]) {
        static const char *const names[SPACE_NORM_COUNT] = {
            [SPACE_NORM_LAYERNORM] = "LayerNorm",
            [SPACE_NORM_RMSNORM] = "RMSNorm"};
        int k = launch_mg_seen_choice(&s, F_NORM, file, names, SPACE_NORM_COUNT, e);
        if (k < 0) rc = TP_EDATA;
        else m->norm = (space_norm)k;
    }
    if (s.v[F_UNTIE]) m->tied_embeddings = 0;
    if (s.v[F_NO_BIAS]) m->qkv_bias = m->out_bias = m->mlp_bias = 0;
    if (s.v[F_QKV_BIAS]) m->qkv_bias = 1;
    if (!rc) rc = launch_mg_seen_prob(&s, F_ATTN_DROP, file, &m->attn_dropout, e);
    if (!rc) rc = launch_mg_seen_prob(&s, F_HIDDEN_DROP, file,
                                      &m->hidden_dropout, e);
    if (!rc) rc = launch_mg_read_attention_kind(&s, file, m, e);
    if (!rc) rc = launch_mg_seen_int(&s, F_VOCAB, file, 1, 100000000, &vocab, e);
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
    if (!rc) rc = launch_mg_read_moe_mla(&s, file, m, e);
    if (!rc) rc = space_model_validate(m, file, e);

    /* The layout and the job, as the command-line options would set
     * them. */
    int64_t x = 0;
    if (!rc) {
        j->seq_length = seq;
        j->tp = 1;
        j->tp_set = 1;
        rc = launch_mg_seen_int(&s, F_TP, file, 1, 4096, &j->tp, e);
    }
    if (!rc) {
        j->pp = 1;
        rc = launch_mg_seen_int(&s, F_PP, file, 1, 4096, &j->pp, e);
    }
    if (!rc) {
        j->cp = 1;
        rc = launch_mg_seen_int(&s, F_CP, file, 1, 4096, &j->cp, e);
    }
    /* expert parallelism: Megatron-Core's defaults EP 1, expert TP = TP,
     * the allgather dispatcher (TransformerConfig) */
    if (!rc && m->num_experts > 0) {
        j->ep = 1;
        rc = launch_mg_seen_int(&s, F_EP, file, 1, 1000000, &j->ep, e);
        if (!rc) rc = launch_mg_seen_int(&s, F_ETP, file, 1, 4096, &j->etp, e);
        if (!rc && !s.v[F_ETP]) j->etp = j->tp;
        j->moe_dispatcher = SPACE_MOE_ALLGATHER;
        if (!rc && s.v[F_MOE_DISPATCHER]) {
            int k = launch_mg_seen_choice(&s, F_MOE_DISPATCHER, file,
                                          space_moe_dispatcher_names,
                                SPACE_MOE_DISPATCHER_COUNT, e);
            if (k < 0) rc = TP_EDATA;
            else j->moe_dispatcher = k;
        }
        /* The backend matters to the flex dispatcher only (Megatron-Core
         * reads it there); ncclep is not modelled and refused by name.
         * --moe-router-padding-for-fp8 is the older alias. */
        if (!rc && s.v[F_MOE_FLEX_BACKEND]) {
            int k = launch_mg_seen_choice(&s, F_MOE_FLEX_BACKEND, file,
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
    if (!rc) rc = launch_mg_seen_int(&s, F_MBS, file, 1, 1000000, &j->mbs, e);
    if (!rc && s.v[F_GBS]) rc = launch_mg_seen_int(&s, F_GBS, file, 1,
                                                   100000000, &j->gbs, e);
    if (!rc && !s.v[F_GBS])
        rc = tp_errf(e, TP_EDATA, "%s: no --global-batch-size: Megatron-LM "
                     "then trains micro-batch x DP sequences an iteration; "
                     "say it", file);
    j->vstages = 1;
    if (!rc) rc = launch_mg_seen_int(&s, F_VSTAGES, file, 1, 4096, &j->vstages, e);
    if (!rc && s.v[F_VLAYERS]) {
        int64_t per = 0;
        rc = launch_mg_seen_int(&s, F_VLAYERS, file, 1, 100000, &per, e);
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
                         s.v[F_VSTAGES] ? launch_mg_flags[F_VSTAGES].name
                                        : launch_mg_flags[F_VLAYERS].name);
        if (!rc) {
            j->pp_layout = &j->pp_layout_store;
            j->vstages = j->pp_layout_store.n / j->pp;
            j->vpp_layers = 0;
            j->split_set = 1;
        }
    }
    if (!rc && s.v[F_FIRST_LAYERS]) {
        rc = launch_mg_seen_int(&s, F_FIRST_LAYERS, file, 1, 100000,
                                &j->pp_first, e);
        j->split_set = 1;
    }
    if (!rc && s.v[F_LAST_LAYERS]) {
        rc = launch_mg_seen_int(&s, F_LAST_LAYERS, file, 1, 100000, &j->pp_last, e);
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
        int k = launch_mg_seen_choice(&s, F_RC_GRAN, file, names,
                                      SPACE_RECOMPUTE_COUNT, e);
        if (k < 0) rc = TP_EDATA;
        else j->recompute = k;
    }
    if (s.v[F_RC_ACTIVATIONS]) j->recompute = SPACE_RECOMPUTE_SELECTIVE;
    if (!rc && s.v[F_RC_METHOD]) {
        int k = launch_mg_seen_choice(&s, F_RC_METHOD, file,
                                      space_recompute_method_names,
                                      SPACE_RECOMPUTE_METHOD_COUNT, e);
        if (k < 0) rc = TP_EDATA;
        j->recompute_method = k;
        j->sw_set |= SEARCH_SW_RC_METHOD;
    }
    if (!rc) rc = launch_mg_seen_int(&s, F_RC_LAYERS, file, 1, 100000,
                                     &j->recompute_layers, e);
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
            int k = launch_mg_seen_choice(&s, F_SHARDING, file, names, 4, e);
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
            int k = launch_mg_seen_choice(&s, F_FP8_RECIPE, file, names,
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
        if (launch_mg_seen_choice(&s, F_FP4_FORMAT, file, formats, 1, e) < 0)
            rc = TP_EDATA;
        else if (s.v[F_FP4_RECIPE]
                 && launch_mg_seen_choice(&s, F_FP4_RECIPE, file, recipes, 1,
                                          e) < 0)
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
    if (s.v[F_TP_OVERLAP]) j->tp_overlap = SPACE_TP_OVERLAP_ALL,
    j->sw_set |= SEARCH_SW_TP;
    if (s.v[F_NO_P2P_OVERLAP]) j->no_pp_overlap = 1, j->sw_set |= SEARCH_SW_PP;
    j->ce_fusion = s.v[F_CE_FUSION] != NULL;
    /* --cross-entropy-fusion-impl te: Transformer Engine's loss, read as
     * today's TE keeps it (an fp32 gradient since v2.18); Megatron-LM
     * refuses it with the fusion since 168cb15d70 (2026-06-03), which
     * older jobs predate */
    if (!rc && s.v[F_CE_IMPL]) {
        static const char *const names[2] = {"native", "te"};
        int k = launch_mg_seen_choice(&s, F_CE_IMPL, file, names, 2, e);
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
            int k = launch_mg_seen_choice(&s, F_FSDP_GRADS, file, names, 4, e);
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
        int k = launch_mg_seen_choice(&s, F_CG_IMPL, file, space_cuda_graph_names,
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
                         "moe_preprocess", file, s.line[cgf],
                         launch_mg_flags[cgf].name,
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
        int k = launch_mg_seen_choice(&s, F_CP_COMM, file, names,
                                      SPACE_CP_COMM_COUNT, e);
        if (k < 0) rc = TP_EDATA;
        else j->cp_comm = k, j->sw_set |= SEARCH_SW_CP;
    }
    if (s.v[F_FLASH_ATTN])
        j->attn_backend = SPACE_ATTN_FLASH, j->sw_set |= SEARCH_SW_FLASH;
    if (!rc && s.v[F_ATTN_BACKEND]) {
        int k = launch_mg_seen_choice(&s, F_ATTN_BACKEND, file, space_attn_names,
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
            int k = launch_mg_seen_choice(&s, dts[i].f, file, dts[i].names,
                                          SPACE_OPT_DTYPE_COUNT, e);
            if (k < 0) rc = TP_EDATA;
            else *dts[i].out = k;
        }
    }
    if (s.v[F_OPT_OFFLOAD]) {
        j->opt_offload = 1;
        if (!rc && s.v[F_OPT_OFFLOAD_FRAC])
            rc = launch_mg_seen_num(&s, F_OPT_OFFLOAD_FRAC, file, 1e-9, 1,
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
    if (!rc) rc = launch_mg_seen_int(&s, F_CPU_OFFLOAD_LAYERS, file, 0, 100000,
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
            rc = launch_mg_seen_num(&s, F_OFFLOAD_FRAC, file, 0, 1, &fr, e);
            if (!rc && fr <= 0)
                rc = tp_errf(e, TP_EDATA,
                             "%s:%d: --activation-offload-fraction 0: "
                             "nothing offloaded; drop "
                             "--fine-grained-activation-offloading",
                             file, s.line[F_OFFLOAD_FRAC]);
            j->offload_fraction = fr;
        }
    }
    if (!rc) rc = launch_mg_seen_int(&s, F_MB_GROUP, file, 1, 1000000,
                                     &j->mb_group, e);
    /* the GPUs: #SBATCH, else torchrun's literal counts */
    int64_t nodes = ws.sbatch_nodes, gpn = ws.sbatch_gpn;
    if (!rc && !nodes) rc = launch_mg_seen_int(&s, F_NNODES, file, 1, 1000000,
                                               &nodes, e);
    if (!rc && !gpn) rc = launch_mg_seen_int(&s, F_NPROC, file, 1, 4096, &gpn, e);
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
        rc = launch_mg_seen_int(&s, f, file, 1, (long long)1e18, &x, e);
        double t = (double)x * (double)seq
                   * (f == F_TRAIN_ITERS ? (double)j->gbs : 1.0);
        if (!rc && t > 1e18)
            rc = tp_errf(e, TP_EDATA, "%s:%d: %s %lld: %.3g tokens, more "
                         "than the 1e18 trainplan plans for (--tokens' "
                         "range)", file, s.line[f], launch_mg_flags[f].name,
                         (long long)x, t);
        if (!rc && j->tokens <= 0) j->tokens = t;
    }
    words_free(&ws);
    launch_sh_free(&sh);
    return rc;
}
