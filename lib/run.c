/*
 * run.c - the trainplan command line as a function (lib_run, behind the
 * library's tp_run and every library call): parses options with one
 * table into the engine's structs (lib_opts; the tables are table.c's, an
 * option's argument is read by parse.c), then dispatch.c finds the
 * subcommand in the other table, checks and runs it, and turns statuses
 * into exit codes. Data goes to the caller's stream (or -o FILE),
 * diagnostics to its error stream; nothing here exits, and a second call
 * in one process starts afresh. The executable's main() (cli/main.c) is
 * one call of tp_run.
 *
 * Exit codes (README.md, docs/trainplan.1): 0 ok, 1 nothing feasible,
 * 64 usage, 65 bad input data, 66 missing file, 70 internal, 74 I/O,
 * 75 a sweep's -o locked by another sweep; 3 diff found changes,
 * 129/130/143 a sweep stopped by SIGHUP/SIGINT/SIGTERM.
 */
#include "lib_int.h"
#include "table.h"
#include "launch.h"
#include "search.h"
#include "sweep.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#ifndef TRAINPLAN_VERSION
#define TRAINPLAN_VERSION "0.0.0"
#endif

static const char *const format_names[EMIT_FORMAT_COUNT] = {"table", "json",
                                                           "csv", "jsonl", "md"};
_Static_assert(sizeof format_names / sizeof format_names[0] == EMIT_FORMAT_COUNT,
               "format_names mirrors emit_format");

/* getopt's tables, generated from ours once (every call reads them); the
 * ids are checked here once against MAX_OPT_ID (table.h). */
static struct option getopt_longopts[LIB_MAX_OPTIONS + 1];
static char getopt_shortopts[2 * LIB_MAX_OPTIONS + 2];
static pthread_once_t getopt_tables_once = PTHREAD_ONCE_INIT;

static void getopt_tables_fill(void)
{
    size_t ns = 0;
    for (int i = 0; i < lib_n_options; i++) {
        if (lib_options[i].id <= 0 || lib_options[i].id >= MAX_OPT_ID) {
            fprintf(stderr, "trainplan: internal: option --%s has id %d, "
                            "outside 1..%d (raise table.h's MAX_OPT_ID)\n",
                    lib_options[i].name, lib_options[i].id, MAX_OPT_ID - 1);
            abort();
        }
        getopt_longopts[i] = (struct option){lib_options[i].name,
                                             lib_options[i].arg
                                                 ? required_argument
                                                 : no_argument,
                                             NULL, lib_options[i].id};
        if (lib_options[i].id < 256) {
            getopt_shortopts[ns++] = (char)lib_options[i].id;
            if (lib_options[i].arg) getopt_shortopts[ns++] = ':';
        }
    }
    getopt_longopts[lib_n_options] = (struct option){NULL, 0, NULL, 0};
    getopt_shortopts[ns] = '\0';
}

int lib_run(int argc, char **argv, FILE *out_f, FILE *err)
{
    return lib_run_in(argc, argv, out_f, err, NULL);
}

int lib_run_in(int argc, char **argv, FILE *out_f, FILE *err, lib_session *session)
{
    return lib_run_sink(argc, argv, out_f, err, session, NULL);
}

int lib_run_sink(int argc, char **argv, FILE *out_f, FILE *err,
                 lib_session *session, lib_estimate_sink *sink)
{
    lib_opts o;
    memset(&o, 0, sizeof o);
    o.session = session;
    o.estimate_sink = sink;
    if (sink) memset(sink, 0, sizeof *sink);
    o.seed = 42;
    search_job_init(&o.job);
    o.dtype = -1;
    o.folds = 5;
    o.threshold = -1;
    tp_err e = {0}, ge = {0};
    lib_given gv; /* what dispatch.c checks besides o */
    memset(&gv, 0, sizeof gv);
    gv.zero_arg = -1;
    o.err = err;

    pthread_once(&getopt_tables_once, getopt_tables_fill);
    const struct option *longopts = getopt_longopts;
    const char *shortopts = getopt_shortopts;

    lib_getopt g = {0};
    int c, rc = TP_OK;
    while ((c = lib_getopt_next(&g, argc, argv, shortopts, longopts)) != -1) {
        long long v = 0;
        if (c == '?') {
            const lib_option *bad = g.opt ? lib_option_by_id(g.opt) : NULL;
            if (bad && g.no_value)
                fprintf(err, "trainplan: --%s takes no value (found '%s')\n",
                        bad->name, g.bad);
            else if (bad && g.opt < 256 && g.bad[1] != '-')
                fprintf(err, "trainplan: -%c needs an argument\n", g.opt);
            else if (bad)
                fprintf(err, "trainplan: --%s needs an argument\n",
                        bad->name);
            else
                fprintf(err, "trainplan: unknown option '%s' (try --help)\n",
                        g.bad);
            return TP_EUSAGE;
        }
        if (c > 0 && c < MAX_OPT_ID) gv.seen_id[c] = 1; /* a table's id */
        for (int k = 0; k < lib_n_io_options; k++) {
            if (lib_io_options[k].id != c) continue;
            if (gv.n_io == MAX_IO_GIVEN) {
                fprintf(err, "trainplan: more than %d file options; give "
                             "each once\n", MAX_IO_GIVEN);
                return TP_EUSAGE;
            }
            gv.io[gv.n_io].path = g.arg;
            gv.io[gv.n_io].k = k;
            gv.n_io++;
        }
        switch (c) {
        case OPT_HELP:
            lib_usage(out_f, lib_help_command(argc, argv));
            return TP_OK;
        case OPT_VERSION:
            fprintf(out_f, "trainplan %s\n", TRAINPLAN_VERSION);
            return TP_OK;
        case OPT_LIST_OPTIONS:
            for (int i = 0; i < lib_n_options; i++) fprintf(out_f, "--%s\n",
                                                            lib_options[i].name);
            return TP_OK;
        case OPT_FORMAT: {
            int k = -1;
            for (int i = 0; i < EMIT_FORMAT_COUNT; i++)
                if (tp_streq_ci(g.arg, format_names[i])) k = i;
            if (k < 0) { /* said once the command is known */
                gv.bad_format = g.arg;
                break;
            }
            o.format = (emit_format)k;
            o.format_set = 1;
            break;
        }
        case OPT_OUTPUT:
            o.output = g.arg;
            break;
        case OPT_THREADS:
            rc = lib_arg_int("threads", g.arg, 1, 1024, &v, &e);
            o.threads = (int)v;
            break;
        case OPT_SEED:
            rc = lib_arg_int("seed", g.arg, 0, LLONG_MAX, &v, &e);
            o.seed = (uint64_t)v;
            break;
        case OPT_HWDB:
            if (o.n_hwdb == LIB_MAX_HWDB)
                rc = tp_errf(&e, TP_EUSAGE, "--hwdb: at most %d directories",
                             LIB_MAX_HWDB);
            else
                o.hwdb_dirs[o.n_hwdb++] = g.arg;
            break;
        case OPT_SEQ:
            rc = lib_arg_plain("seq-length", g.arg, 1, 16777216, &v, &e);
            o.job.seq_length = v;
            break;
        case OPT_TP:
            rc = lib_arg_int("tensor-model-parallel-size", g.arg, 1, 65536, &v,
                             &e);
            o.job.tp = v;
            o.job.tp_set = 1;
            break;
        case OPT_MODEL:
            o.job.model = g.arg;
            break;
        case OPT_GPUS: /* an integer for estimate, a list for search:
                          checked by the command */
            o.gpus_arg = g.arg;
            o.job.gpus = lib_arg_count("gpus", g.arg, 1, 10000000, &v,
                                       &ge) ? -1 : v;
            break;
        case OPT_MAX_GPUS:
            rc = lib_arg_count("max-gpus", g.arg, 1, 10000000, &v, &e);
            o.max_gpus = v;
            break;
        case OPT_MIN_GPUS:
            rc = lib_arg_count("min-gpus", g.arg, 1, 10000000, &v, &e);
            o.min_gpus = v;
            break;
        case OPT_TOP:
            rc = lib_arg_int("top", g.arg, 1, 1000, &v, &e);
            o.top_k = (int)v;
            break;
        case OPT_OBJECTIVE:
            rc = lib_arg_name("objective", g.arg, search_objective_names,
                              SEARCH_OBJECTIVE_COUNT, &o.objective, &e);
            break;
        case OPT_PRICE:
            rc = lib_arg_amount("price", g.arg, 1e6,
                                "a price in USD per GPU-hour", &o.price, &e);
            break;
        case OPT_BUDGET_USD:
            rc = lib_arg_amount("budget-usd", g.arg, 1e15, "an amount in USD",
                                &o.budget_usd, &e);
            break;
        case OPT_BUDGET_GH:
            rc = lib_arg_amount("budget-gpu-hours", g.arg, 1e15,
                                "a number of GPU-hours", &o.budget_gpu_hours, &e);
            break;
        case OPT_DEADLINE:
            rc = lib_arg_duration(g.arg, &o.deadline_s, &e);
            break;
        case OPT_FIX:
            o.fix = g.arg;
            break;
        case OPT_MAX_MEM_FRAC:
            rc = lib_arg_pos("max-memory-fraction", g.arg, 1, "fraction",
                             &o.max_mem_fraction, &e);
            break;
        case OPT_EXPLAIN:
            o.explain = 1;
            break;
        case OPT_OPS:
            o.ops = 1;
            break;
        case OPT_NO_TIMING:
            o.no_timing = 1;
            break;
        case OPT_NO_PRUNE:
            o.no_prune = 1;
            break;
        case OPT_SVG:
            o.svg = g.arg;
            break;
        case OPT_PP:
            rc = lib_arg_int("pipeline-model-parallel-size", g.arg, 1, 65536,
                             &v, &e);
            o.job.pp = v;
            break;
        case OPT_CP:
            rc = lib_arg_int("context-parallel-size", g.arg, 1, 65536, &v, &e);
            o.job.cp = v;
            break;
        case OPT_VPP_LAYERS:
            rc = lib_arg_int("num-layers-per-virtual-pipeline-stage", g.arg, 1,
                             1000000, &v, &e);
            o.job.vpp_layers = v;
            break;
        case OPT_VSTAGES:
            rc = lib_arg_int("num-virtual-stages-per-pipeline-rank", g.arg, 1,
                             1024, &v, &e);
            o.job.vstages = v;
            break;
        case OPT_PP_FIRST:
            rc = lib_arg_int("decoder-first-pipeline-num-layers", g.arg, 1,
                             100000, &v, &e);
            o.job.pp_first = v;
            o.job.split_set = 1;
            break;
        case OPT_PP_LAST:
            rc = lib_arg_int("decoder-last-pipeline-num-layers", g.arg, 1,
                             100000, &v, &e);
            o.job.pp_last = v;
            o.job.split_set = 1;
            break;
        case OPT_PP_ACCOUNT_EMBED:
            o.job.pp_account |= SPACE_PP_EMBED;
            o.job.split_set = 1;
            break;
        case OPT_PP_ACCOUNT_LOSS:
            o.job.pp_account |= SPACE_PP_LOSS;
            o.job.split_set = 1;
            break;
        case OPT_PP_LAYOUT: {
            char why[320];
            if (space_pp_layout_parse(g.arg, &o.job.pp_layout_store, why,
                                      sizeof why))
                rc = tp_errf(&e, TP_EUSAGE, "--pipeline-model-parallel-"
                             "layout: %s", why);
            o.job.pp_layout = &o.job.pp_layout_store;
            o.job.split_set = 1;
            break;
        }
        case OPT_MBS:
            rc = lib_arg_plain("micro-batch-size", g.arg, 1, 1000000, &v, &e);
            o.job.mbs = v;
            break;
        case OPT_GBS:
            rc = lib_arg_plain("global-batch-size", g.arg, 1, 100000000, &v, &e);
            o.job.gbs = v;
            break;
        case OPT_SP:
            o.job.sp = 1;
            break;
        case OPT_NO_SP:
            o.job.sp = 0;
            break;
        case OPT_RECOMPUTE:
            rc = lib_arg_name("recompute-granularity", g.arg,
                              space_recompute_names, SPACE_RECOMPUTE_COUNT,
                            &o.job.recompute, &e);
            break;
        case OPT_RECOMPUTE_METHOD:
            rc = lib_arg_name("recompute-method", g.arg,
                              space_recompute_method_names,
                            SPACE_RECOMPUTE_METHOD_COUNT, &o.job.recompute_method,
                            &e);
            o.job.sw_set |= SEARCH_SW_RC_METHOD;
            break;
        case OPT_RECOMPUTE_LAYERS:
            rc = lib_arg_int("recompute-num-layers", g.arg, 1, 1000000, &v, &e);
            o.job.recompute_layers = v;
            break;
        case OPT_RECOMPUTE_MODULES: {
            size_t bad = space_rc_modules_parse(g.arg, &o.job.recompute_modules);
            if (bad)
                rc = tp_errf(&e, TP_EUSAGE,
                             "--recompute-modules: expected a comma-separated "
                             "list of core_attn, layernorm, moe_act, "
                             "mla_up_proj, mlp, moe, shared_experts, found "
                             "'%s'%s%s",
                             g.arg, bad > 1 ? " at " : "",
                             bad > 1 ? g.arg + bad - 1 : "");
            break;
        }
        case OPT_GRAD_FP32:
        case OPT_GRAD_BF16: {
            int want = c == OPT_GRAD_FP32 ? 4 : 2;
            if ((o.job.sw_set & SEARCH_SW_GRAD) && o.job.grad_bytes != want)
                rc = tp_errf(&e, TP_EUSAGE,
                             "--accumulate-allreduce-grads-in-fp32 and "
                             "--grad-reduce-in-bf16 contradict each other: "
                             "give one");
            o.job.grad_bytes = want;
            o.job.sw_set |= SEARCH_SW_GRAD;
            break;
        }
        case OPT_DISTOPT:
        case OPT_NO_DISTOPT:
            if (gv.distopt && gv.distopt != (c == OPT_DISTOPT ? 1 : -1))
                rc = tp_errf(&e, TP_EUSAGE,
                             "--use-distributed-optimizer and "
                             "--no-use-distributed-optimizer: give one");
            gv.distopt = c == OPT_DISTOPT ? 1 : -1;
            break;
        case OPT_ZERO:
            rc = lib_arg_int("zero-stage", g.arg, 0, 3, &v, &e);
            gv.zero_arg = v;
            break;
        case OPT_PRECISION:
            o.job.precision = hw_dtype_parse(g.arg);
            if (tp_streq_ci(g.arg, "mxfp8")) { /* fp8 in MXFP8 blocks */
                o.job.precision = HW_FP8;
                o.job.fp8_recipe = SPACE_FP8_MXFP8;
                o.job.sw_set |= SEARCH_SW_FP8;
            } else if (tp_streq_ci(g.arg, "nvfp4")) {
                o.job.precision = HW_FP4;
            } else if (o.job.precision != HW_BF16 && o.job.precision != HW_FP16
                       && o.job.precision != HW_FP8) {
                rc = tp_errf(&e, TP_EUSAGE,
                             "--precision: expected bf16, fp16, fp8, mxfp8 "
                             "or nvfp4, found '%s'",
                             g.arg);
            }
            break;
        case OPT_OVERLAP:
            o.job.no_overlap = 0;
            o.job.sw_set |= SEARCH_SW_DP;
            break;
        case OPT_NO_OVERLAP:
            o.job.no_overlap = 1;
            o.job.sw_set |= SEARCH_SW_DP;
            break;
        case OPT_TP_COMM_OVERLAP:
            o.job.tp_overlap = SPACE_TP_OVERLAP_ALL;
            o.job.sw_set |= SEARCH_SW_TP;
            break;
        case OPT_NO_ASYNC_TP:
            o.job.tp_overlap = SPACE_TP_OVERLAP_NONE;
            o.job.sw_set |= SEARCH_SW_TP;
            break;
        case OPT_TP_OVERLAP:
            rc = lib_arg_name("tp-overlap", g.arg, space_tp_overlap_names,
                              SPACE_TP_OVERLAP_COUNT, &o.job.tp_overlap, &e);
            o.job.sw_set |= SEARCH_SW_TP;
            break;
        case OPT_CE_FUSION:
            o.job.ce_fusion = 1;
            break;
        case OPT_PP_SCATTER_GATHER:
            o.job.pp_scatter_gather = 1;
            o.job.sw_set |= SEARCH_SW_SCATTER;
            break;
        case OPT_PP_OVERLAP:
        case OPT_NO_PP_OVERLAP:
            o.job.no_pp_overlap = c == OPT_NO_PP_OVERLAP;
            o.job.sw_set |= SEARCH_SW_PP;
            break;
        case OPT_EAGER:
            o.job.eager = 1;
            o.job.sw_set |= SEARCH_SW_EAGER;
            break;
        case OPT_FRAMEWORK:
            rc = lib_arg_name("framework", g.arg, space_framework_names,
                              SPACE_FW_COUNT, &o.job.framework, &e);
            break;
        case OPT_FP8_PARAMS:
            o.job.fp8_params = 1;
            break;
        case OPT_FP8_ATTENTION:
            o.job.fp8_attention = 1;
            break;
        case OPT_EXPANDABLE:
        case OPT_NO_EXPANDABLE:
            o.job.alloc_expandable = c == OPT_EXPANDABLE;
            o.job.sw_set |= SEARCH_SW_ALLOC;
            break;
        case OPT_DOC_LENGTH:
            rc = lib_arg_docs(g.arg, &o, &e);
            break;
        case OPT_FP8_RECIPE:
            rc = lib_arg_name("fp8-recipe", g.arg, space_fp8_recipe_names,
                              SPACE_FP8_RECIPE_COUNT, &o.job.fp8_recipe, &e);
            o.job.sw_set |= SEARCH_SW_FP8;
            break;
        case OPT_CP_COMM:
            rc = lib_arg_name("cp-comm-type", g.arg, space_cp_comm_names,
                              SPACE_CP_COMM_COUNT, &o.job.cp_comm, &e);
            o.job.sw_set |= SEARCH_SW_CP;
            break;
        case OPT_ATTN_BACKEND:
            rc = lib_arg_name("attention-backend", g.arg, space_attn_names,
                              SPACE_ATTN_COUNT, &o.job.attn_backend, &e);
            o.job.sw_set |= SEARCH_SW_FLASH;
            break;
        case OPT_ATTN_DROPOUT:
        case OPT_HIDDEN_DROPOUT: {
            const char *name = c == OPT_ATTN_DROPOUT ? "attention-dropout"
                                                     : "hidden-dropout";
            double p = -1;
            if (tp_parse_num(g.arg, &p) || !(p >= 0 && p <= 1))
                rc = tp_errf(&e, TP_EUSAGE,
                             "--%s: expected a probability from 0 to 1, "
                             "found '%s'",
                             name, g.arg);
            else if (c == OPT_ATTN_DROPOUT)
                o.job.attn_dropout = p;
            else
                o.job.hidden_dropout = p;
            break;
        }
        case OPT_TOKENS: {
            double t = 0;
            if (tp_parse_si(g.arg, &t) || !(t >= 1) || t > 1e18
                || t != floor(t))
                rc = tp_errf(&e, TP_EUSAGE,
                             "--tokens: expected a whole number of tokens in "
                             "[1, 1e18], %s, e.g. 300e9, 300B or 2T, found "
                             "'%s'",
                             LIB_SI_FORM, g.arg);
            o.job.tokens = t;
            break;
        }
        case OPT_GPU:
            o.gpu = g.arg;
            break;
        case OPT_OP:
            o.op = g.arg;
            break;
        case OPT_TRAIN:
            o.train = g.arg;
            break;
        case OPT_SHAPES:
            o.shapes = g.arg;
            break;
        case OPT_SHAPE:
            o.shape = g.arg;
            break;
        case OPT_DTYPE:
            o.dtype = hw_dtype_parse(g.arg);
            if (o.dtype < 0)
                rc = tp_errf(&e, TP_EUSAGE,
                             "--dtype: expected fp32, tf32, fp16, bf16, "
                             "fp8 or fp4, found '%s'",
                             g.arg);
            break;
        case OPT_KEEP_BAD:
            o.keep_bad = 1;
            break;
        case OPT_FOLDS:
            rc = lib_arg_int("folds", g.arg, 2, 20, &v, &e);
            o.folds = (int)v;
            break;
        case OPT_SYSTEM:
            o.system = g.arg;
            break;
        case OPT_BYTES:
            o.bytes = g.arg;
            break;
        case OPT_GROUP:
            rc = lib_parse_group(g.arg, &o.nodes, &o.per_node, &e);
            break;
        case OPT_NODES:
            rc = lib_arg_count("nodes", g.arg, 1, 1000000, &v, &e);
            o.job.opt_nodes = (int)v;
            break;
        case OPT_GPN:
            rc = lib_arg_int("gpus-per-node", g.arg, 1, 4096, &v, &e);
            o.job.opt_per_node = (int)v;
            break;
        /* issue 7: sweep, merge, diff */
        case OPT_PROGRESS:
            o.progress = 1;
            break;
        case OPT_RESUME:
            o.resume = 1;
            break;
        case OPT_OVERWRITE:
            o.overwrite = 1;
            break;
        case OPT_SHARD: {
            long long i = -1, n = 0;
            if (tp_parse_int_pair(g.arg, "/", 0, 999999, 1, 1000000, &i, &n)
                || i >= n)
                rc = tp_errf(&e, TP_EUSAGE,
                             "--shard: expected I/N with 0 <= I < N <= "
                             "1000000, e.g. 0/4, found '%s'",
                             g.arg);
            o.shard_i = (int)i;
            o.shard_n = (int)n;
            break;
        }
        case OPT_THRESHOLD: {
            double t = -1;
            if (tp_parse_num(g.arg, &t) || !(t >= 0) || t > 1e6)
                rc = tp_errf(&e, TP_EUSAGE,
                             "--threshold: expected a relative change >= 0, "
                             "e.g. 0.02, found '%s'",
                             g.arg);
            o.threshold = t;
            break;
        }
        case OPT_SBATCH:
            o.sbatch = g.arg;
            break;
        case OPT_EP:
            rc = lib_arg_int("ep", g.arg, 1, 1000000, &v, &e);
            o.job.ep = v;
            break;
        case OPT_ETP:
            rc = lib_arg_int("etp", g.arg, 1, 1024, &v, &e);
            o.job.etp = v;
            break;
        case OPT_MOE_DISPATCHER:
            rc = lib_arg_name("moe-dispatcher", g.arg,
                              space_moe_dispatcher_names,
                            SPACE_MOE_DISPATCHER_COUNT, &o.job.moe_dispatcher, &e);
            break;
        case OPT_MOE_COMM_OVERLAP:
            rc = lib_arg_name("moe-comm-overlap", g.arg,
                              space_moe_overlap_names, SPACE_MOE_OVERLAP_COUNT,
                            &o.job.moe_comm_overlap, &e);
            break;
        case OPT_PP_SCHEDULE: {
            /* PyTorch's names (get_schedule_class) as aliases */
            static const struct { const char *alias; int sched; } pt[] = {
                {"interleaved", SPACE_PP_1F1B},
                {"Interleaved1F1B", SPACE_PP_1F1B},
                {"InterleavedZeroBubble", SPACE_PP_ZB1P},
                {"ZBVZeroBubble", SPACE_PP_ZBV},
            };
            int hit = 0;
            for (size_t i = 0; i < sizeof pt / sizeof pt[0]; i++)
                if (tp_streq_ci(g.arg, pt[i].alias)) {
                    o.job.pp_schedule = pt[i].sched;
                    hit = 1;
                }
            if (!hit)
                rc = lib_arg_name("pipeline-schedule", g.arg,
                                  space_pp_schedule_names,
                                SPACE_PP_SCHEDULE_COUNT, &o.job.pp_schedule, &e);
            o.job.pp_schedule_set = 1;
            break;
        }
        case OPT_MOE_ROUTER_PAD:
            o.job.moe_router_pad = 1;
            break;
        case OPT_PA_OPTIMIZER:
            o.job.pa_optimizer = 1;
            break;
        case OPT_MAIN_GRADS_DTYPE:
        case OPT_MAIN_PARAMS_DTYPE:
        case OPT_EXP_AVG_DTYPE:
        case OPT_EXP_AVG_SQ_DTYPE: {
            /* Megatron-LM's argparse choices for each */
            static const char *const grads[] = {"fp32", "bf16"};
            static const char *const params[] = {"fp32", "fp16"};
            static const int grads_d[] = {SPACE_OPT_FP32, SPACE_OPT_BF16};
            static const int params_d[] = {SPACE_OPT_FP32, SPACE_OPT_FP16};
            int k = 0;
            if (c == OPT_MAIN_GRADS_DTYPE) {
                rc = lib_arg_name("main-grads-dtype", g.arg, grads, 2, &k, &e);
                o.job.main_grads_dtype = grads_d[k];
            } else if (c == OPT_MAIN_PARAMS_DTYPE) {
                rc = lib_arg_name("main-params-dtype", g.arg, params, 2, &k,
                                  &e);
                o.job.main_params_dtype = params_d[k];
            } else {
                rc = lib_arg_name(c == OPT_EXP_AVG_DTYPE ? "exp-avg-dtype"
                                                       : "exp-avg-sq-dtype",
                                g.arg, space_opt_dtype_names,
                                SPACE_OPT_DTYPE_COUNT, &k, &e);
                if (c == OPT_EXP_AVG_DTYPE)
                    o.job.exp_avg_dtype = k;
                else
                    o.job.exp_avg_sq_dtype = k;
            }
            break;
        }
        case OPT_OPT_OFFLOAD:
            o.job.opt_offload = 1;
            break;
        case OPT_OPT_OFFLOAD_FRACTION:
            rc = lib_arg_pos("optimizer-offload-fraction", g.arg, 1,
                             "a share of the optimizer's parameters",
                           &o.job.opt_offload_fraction, &e);
            break;
        case OPT_OPT_OFFLOAD_OVERLAP:
            o.job.opt_offload_overlap = 1;
            break;
        case OPT_ACT_OFFLOAD_LAYERS:
            rc = lib_arg_int("cpu-offloading-num-layers", g.arg, 1, 1000000, &v,
                             &e);
            o.job.act_offload_layers = v;
            break;
        case OPT_FINE_GRAINED_OFFLOAD:
            o.job.fine_grained = 1;
            break;
        case OPT_OFFLOAD_MODULES: {
            size_t bad = space_off_modules_parse(g.arg, &o.job.offload_modules);
            if (bad)
                rc = tp_errf(&e, TP_EUSAGE,
                             "--offload-modules: expected a comma-separated "
                             "list of attn_norm, qkv_linear, core_attn, "
                             "attn_proj, mlp_norm, expert_fc1, moe_act, found "
                             "'%s'%s%s",
                             g.arg, bad > 1 ? " at " : "",
                             bad > 1 ? g.arg + bad - 1 : "");
            break;
        }
        case OPT_OFFLOAD_FRACTION: {
            double x = -1;
            if (tp_parse_num(g.arg, &x) || !(x > 0) || x > 1)
                rc = tp_errf(&e, TP_EUSAGE,
                             "--activation-offload-fraction: expected a share "
                             "of the offload groups in (0, 1] (0 offloads "
                             "nothing: leave out --fine-grained-activation-"
                             "offloading), found '%s'",
                             g.arg);
            o.job.offload_fraction = x;
            break;
        }
        case OPT_MB_GROUP:
            rc = lib_arg_int("microbatch-group-size-per-virtual-pipeline-stage",
                             g.arg, 1, 1000000, &v, &e);
            o.job.mb_group = v;
            break;
        case OPT_NO_SAVERS:
            o.no_savers = 1;
            break;
        case OPT_MOE_PERMUTE_FUSION:
        case OPT_NO_MOE_PERMUTE_FUSION:
            o.job.moe_permute_fusion = c == OPT_MOE_PERMUTE_FUSION;
            o.job.sw_set |= SEARCH_SW_PERMUTE;
            break;
        case OPT_MOE_ROUTER_FUSION:
        case OPT_NO_MOE_ROUTER_FUSION:
            o.job.moe_router_fusion = c == OPT_MOE_ROUTER_FUSION;
            o.job.sw_set |= SEARCH_SW_ROUTER;
            break;
        case OPT_FSDP_DOUBLE_BUFFER:
            o.job.fsdp_double_buffer = 1;
            break;
        case OPT_CUDA_GRAPH_IMPL:
            rc = lib_arg_name("cuda-graph-impl", g.arg, space_cuda_graph_names,
                              SPACE_CG_COUNT, &o.job.cuda_graph, &e);
            o.job.cuda_graph_set = 1;
            break;
        case OPT_CUDA_GRAPH_SCOPE: {
            size_t bad = space_cgm_parse(g.arg, &o.job.cuda_graph_modules);
            if (bad)
                rc = tp_errf(&e, TP_EUSAGE,
                             "--cuda-graph-scope: expected full, or a "
                             "comma-separated list of attn, mlp, moe, "
                             "moe_router, moe_preprocess, found '%s'%s%s",
                             g.arg, bad > 1 ? " at " : "",
                             bad > 1 ? g.arg + bad - 1 : "");
            o.job.cuda_graph_scope_set = 1;
            break;
        }
        case OPT_FP8_ACT_CACHE:
            rc = lib_arg_name("fp8-activation-cache", g.arg,
                              space_fp8_act_cache_names, SPACE_FP8_ACT_COUNT,
                              &o.job.fp8_act_cache, &e);
            break;
        case OPT_MOE_FLEX_BACKEND:
            rc = lib_arg_name("moe-flex-backend", g.arg,
                              space_moe_flex_backend_names, SPACE_MOE_FLEX_COUNT,
                            &o.job.moe_flex_backend, &e);
            break;
        case OPT_MOE_IMBALANCE: {
            double x = 0;
            if (tp_parse_num(g.arg, &x) || !(x >= 1) || x > 1e6)
                rc = tp_errf(&e, TP_EUSAGE,
                             "--moe-imbalance: expected the busiest expert's "
                             "tokens over the mean, a number >= 1 (1: "
                             "perfect balance), found '%s'",
                             g.arg);
            o.job.moe_imbalance = x;
            break;
        }
        case OPT_STRICT:
            o.strict = 1;
            break;
        case OPT_LOG:
            o.log_file = g.arg;
            break;
        case OPT_ALL_LAYOUTS:
            o.all_layouts = 1;
            break;
        case OPT_CALIBRATE_TO_LOG:
            o.calibrate = 1;
            break;
        case OPT_NEAR:
            if (o.job_file)
                rc = o.near ? tp_errf(&e, TP_EUSAGE, "--near given twice: "
                                      "give one job file")
                            : tp_errf(&e, TP_EUSAGE, "--near and --%s: give "
                                      "one job file",
                                      lib_job_options[o.job_kind]);
            o.job_file = g.arg;
            o.job.from_launch = 1;
            o.job_kind = LIB_JOB_MEGATRON;
            o.near = 1;
            break;
        case OPT_NEMO_FORMAT:
            rc = lib_arg_name("nemo-format", g.arg, launch_nemo_format_names,
                              LAUNCH_NEMO_FORMAT_COUNT, &o.nemo_format, &e);
            break;
        case OPT_LAUNCH:
            rc = lib_arg_name("launch", g.arg, emit_launch_show_names,
                              EMIT_LAUNCH_SHOW_COUNT, &o.launch_show, &e);
            o.launch_show_set = 1;
            break;
        case OPT_RECORD:
            rc = lib_arg_name("record", g.arg, sweep_record_names,
                              SWEEP_RECORD_COUNT, &o.record, &e);
            o.record_set = 1;
            break;
        case OPT_MEGATRON_ARGS:
        case OPT_NEMO_OVERRIDES:
        case OPT_TORCHTITAN_CONFIG: {
            int k = c == OPT_MEGATRON_ARGS ? LIB_JOB_MEGATRON
                    : c == OPT_NEMO_OVERRIDES ? LIB_JOB_NEMO
                                              : LIB_JOB_TORCHTITAN;
            /* one job file: a second one (the same option too) would
             * silently replace the first */
            if (o.job_file && o.job_kind == k && !o.near)
                rc = tp_errf(&e, TP_EUSAGE, "--%s given twice: give one "
                             "job file", lib_job_options[k]);
            else if (o.job_file)
                rc = tp_errf(&e, TP_EUSAGE,
                             "--%s and --%s: give one job file",
                             o.near ? "near" : lib_job_options[o.job_kind],
                             lib_job_options[k]);
            o.job_file = g.arg;
            o.job.from_launch = 1;
            o.job_kind = k;
            break;
        }
        case OPT_TORCHTITAN_VERSION:
            rc = launch_tt_version_parse(g.arg, &o.torchtitan_version, &e);
            break;
        default:
            rc = tp_errf(&e, TP_EINTERNAL, "option %d has no handler", c);
        }
        if (rc) {
            fprintf(err, "trainplan: %s\n", e.msg);
            return rc;
        }
    }
    return lib_dispatch(&o, &gv, g.npos, argv + 1, out_f, err);
}
