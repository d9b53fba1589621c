#!/usr/bin/env python3
"""The checks Megatron-LM makes when pretrain_gpt.py starts, over a launch
trainplan printed; Python's standard library only, Megatron-LM not imported.

    megatron_rules.py script FILE [--arch ampere|hopper|blackwell]
        runs the launch script FILE with bash, under Slurm and under a
        plain torchrun, with stand-ins for srun, scontrol and torchrun that
        record what torchrun was given and with which environment; checks
        each run
    megatron_rules.py line FILE [--arch ...]
        checks a one-line command (trainplan's launch.megatron): the flags,
        the layout rules and the environment its leading assignments and
        `env -u NAME` give torchrun (line_env), not the data

Exit 0 when every check passes, 1 with one line per broken rule.

Every rule cites where Megatron-LM makes it, at NVIDIA/Megatron-LM@
d98e8a64ddf34856e74b24714e3bedb2f5a39553 (2026-08-22): megatron/training/
arguments.py (parse_args, validate_args), megatron/core/transformer/
transformer_config.py (TransformerConfig.__post_init__),
megatron/core/transformer/pipeline_parallel_layer_layout.py,
megatron/core/transformer/transformer_block.py (get_num_layers_to_build),
megatron/core/parallel_state.py (initialize_model_parallel),
megatron/core/num_microbatches_calculator.py,
megatron/core/pipeline_parallel/schedules.py (the interleaved schedule),
megatron/core/tensor_parallel/mappings.py (sequence-parallel splits).
The known flags are megatron_flags.txt beside this file, extracted from the
same commit by megatron_flags.py.
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def load_flags():
    kinds = {}
    with open(os.path.join(HERE, "megatron_flags.txt")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, kind = line.split()
            kinds[name] = kind
    return kinds


FLAGS = load_flags()


def parse_args(argv, errors):
    """argv of pretrain_gpt.py into {dest: value}; unknown flags are errors
    (parse_args: ArgumentParser(allow_abbrev=False), unknown arguments
    refused: arguments.py parse_args, ignore_unknown_args False)."""
    args = {}
    i = 0
    while i < len(argv):
        w = argv[i]
        if not w.startswith("--"):
            errors.append("stray word %r (pretrain_gpt.py takes no "
                          "positional arguments)" % w)
            i += 1
            continue
        name, eq, val = w.partition("=")
        kind = FLAGS.get(name)
        if kind is None:
            errors.append("unknown flag %s (not in pretrain_gpt.py's "
                          "parser: arguments.py parse_args)" % name)
            i += 1
            continue
        dest = name[2:].replace("-", "_")
        if kind == "flag":
            if eq:
                errors.append("%s takes no value" % name)
            args[dest] = True
            i += 1
        elif kind in ("one", "optional"):
            if eq:
                args[dest] = val
                i += 1
            elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                args[dest] = argv[i + 1]
                i += 2
            elif kind == "optional":
                args[dest] = True
                i += 1
            else:
                errors.append("%s needs a value" % name)
                i += 1
        else:  # many
            vals = [val] if eq else []
            i += 1
            while i < len(argv) and not argv[i].startswith("--"):
                vals.append(argv[i])
                i += 1
            if not vals:
                errors.append("%s needs values" % name)
            args[dest] = vals
    return args


def to_int(args, key, errors, default=None):
    v = args.get(key, default)
    if v is None:
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        errors.append("--%s: expected an integer, found %r"
                      % (key.replace("_", "-"), v))
        return None


def expand_layout(s):
    """PipelineParallelLayerLayout.parse_str_to_list."""
    s = s.replace(",", "")
    s = re.sub(r'\(([^)]+)\)\*(\d+)', lambda x: x.group(1) * int(x.group(2)), s)
    s = re.sub(r'(.)\*(\d+)', lambda x: x.group(1) * int(x.group(2)), s)
    return [list(stage) for stage in s.split("|")]


CHOICES = {
    # transformer_config.py / arguments.py choices
    "position_embedding_type": {"learned_absolute", "rope", "yarn", "mrope",
                                "relative", "none"},
    "normalization": {"LayerNorm", "RMSNorm"},
    "attention_backend": {"flash", "fused", "unfused", "local", "auto"},
    "recompute_granularity": {"full", "selective"},
    "recompute_method": {"uniform", "block"},
    "fp8_format": {"e4m3", "hybrid"},
    "fp8_recipe": {"tensorwise", "delayed", "mxfp8", "blockwise", "custom"},
    "fp4_format": {"e2m1"},                   # transformer_config.py fp4
    "fp4_recipe": {"nvfp4", "custom"},        # transformer_config.py fp4_recipe
    "data_parallel_sharding_strategy": {"no_shard", "optim", "optim_grads",
                                        "optim_grads_params"},
    "ckpt_format": {"torch", "torch_dist", "torch_dcp", "fsdp_dtensor"},
    # the precision-aware optimizer (arguments.py _add_experimental_args)
    "main_grads_dtype": {"fp32", "bf16"},
    "main_params_dtype": {"fp32", "fp16"},
    "exp_avg_dtype": {"fp32", "fp16", "bf16", "fp8"},
    "exp_avg_sq_dtype": {"fp32", "fp16", "bf16", "fp8"},
    "tokenizer_type": {"GPT2BPETokenizer", "HuggingFaceTokenizer",
                       "SentencePieceTokenizer", "GPTSentencePieceTokenizer",
                       "Llama2Tokenizer", "TikTokenizer", "NullTokenizer"},
}
CP_COMM = {"p2p", "a2a", "allgather", "a2a+p2p"}


def check(args, errors, world=None, env=None, arch=None, full=True):
    """validate_args and the start-up checks that apply to a dense GPT."""
    E = errors.append
    for key, ok in CHOICES.items():
        if key in args and args[key] not in ok:
            E("--%s %s: not one of %s (arguments.py / transformer_config.py)"
              % (key.replace("_", "-"), args[key], sorted(ok)))
    for v in args.get("cp_comm_type", []) or []:
        if v not in CP_COMM:
            E("--cp-comm-type %s: not one of %s (arguments.py "
              "_add_distributed_args)" % (v, sorted(CP_COMM)))
    # validate_args: required_args
    for k in ("num_layers", "hidden_size", "num_attention_heads",
              "max_position_embeddings"):
        if k not in args:
            E("--%s missing (validate_args: required_args)"
              % k.replace("_", "-"))
    L = to_int(args, "num_layers", errors)
    h = to_int(args, "hidden_size", errors)
    heads = to_int(args, "num_attention_heads", errors)
    maxpos = to_int(args, "max_position_embeddings", errors)
    seq = to_int(args, "seq_length", errors)
    tp = to_int(args, "tensor_model_parallel_size", errors, 1)
    pp = to_int(args, "pipeline_model_parallel_size", errors, 1)
    cp = to_int(args, "context_parallel_size", errors, 1)
    mbs = to_int(args, "micro_batch_size", errors)
    gbs = to_int(args, "global_batch_size", errors)
    if None in (L, h, heads, tp, pp, cp):
        return
    if seq is None:
        E("--seq-length missing")
        return
    if maxpos is not None and maxpos < seq:
        E("max_position_embeddings (%d) < seq_length (%d) (validate_args)"
          % (maxpos, seq))
    if "kv_channels" not in args and h % heads:
        E("hidden %d not divisible by %d heads, no --kv-channels "
          "(validate_args)" % (h, heads))
    if heads % tp:
        E("%d heads not divisible by TP %d (attention.py: "
          "num_attention_heads_per_partition)" % (heads, tp))
    groups = to_int(args, "num_query_groups", errors, 1) \
        if args.get("group_query_attention") else heads
    if groups and groups % tp:
        E("%d query groups not divisible by TP %d (attention.py)"
          % (groups, tp))
    if cp > 1 and seq % (2 * cp):
        E("seq_length %d not a multiple of 2 x CP %d (validate_args)"
          % (seq, cp))
    sp = bool(args.get("sequence_parallel")) and tp > 1
    if sp and (seq // cp) % tp:
        E("sequence per CP rank %d not divisible by TP %d "
          "(tensor_parallel/mappings.py _split_along_first_dim)"
          % (seq // cp, tp))
    if args.get("tp_comm_overlap") and not sp:
        E("--tp-comm-overlap without --sequence-parallel (validate_args)")
    # mixture of experts (NVIDIA/Megatron-LM@d98e8a64ddf3)
    experts = to_int(args, "num_experts", errors)
    ep = to_int(args, "expert_model_parallel_size", errors, 1) or 1
    etp = to_int(args, "expert_tensor_parallel_size", errors, tp) or tp
    if ep > 1 and not experts:
        E("--expert-model-parallel-size %d without --num-experts "
          "(validate_args)" % ep)
    if experts:
        if experts % ep:
            E("%d experts not divisible by EP %d (validate_args)"
              % (experts, ep))
        if tp > 1 and not sp:
            E("MoE with TP %d without --sequence-parallel (moe_layer.py "
              "MoELayer.forward raises in training)" % tp)
        disp = args.get("moe_token_dispatcher_type", "allgather")
        if disp not in ("allgather", "alltoall", "flex"):
            E("--moe-token-dispatcher-type %s (TransformerConfig)" % disp)
        if disp == "flex" and etp * ep < 2:
            E("flex dispatcher with expert TP x EP 1 (token_dispatcher.py: "
              "DeepEP dispatcher requires TPxEP > 1)")
        if not args.get("disable_bias_linear") and etp != 1:
            E("biases in MoE with expert TP %d (TransformerConfig: Bias in "
              "Moe is only supported when ETP==1)" % etp)
        topk = to_int(args, "moe_router_topk", errors, 2)
        score = args.get("moe_router_score_function", "softmax")
        if score not in ("softmax", "sigmoid", "sqrtsoftplus"):
            E("--moe-router-score-function %s (TransformerConfig)" % score)
        if topk == 1 and score == "softmax" and \
                not args.get("moe_router_pre_softmax"):
            E("top-1 softmax routing without --moe-router-pre-softmax "
              "(TransformerConfig.__post_init__)")
        if args.get("moe_router_enable_expert_bias") and score == "softmax":
            E("--moe-router-enable-expert-bias with softmax scores "
              "(TransformerConfig.__post_init__)")
        groups = to_int(args, "moe_router_num_groups", errors)
        gtop = to_int(args, "moe_router_group_topk", errors)
        if gtop and not groups:
            E("--moe-router-group-topk without --moe-router-num-groups "
              "(TransformerConfig.__post_init__)")
        if groups and gtop and (experts % groups or gtop > groups):
            E("router groups %d / group top-k %d do not fit %d experts "
              "(TransformerConfig.__post_init__)" % (groups, gtop, experts))
        for lb in args.get("moe_router_load_balancing_type", []) or []:
            if lb not in ("aux_loss", "seq_aux_loss", "global_aux_loss",
                          "sinkhorn", "quantile_balancing", "none"):
                E("--moe-router-load-balancing-type %s (arguments.py)" % lb)
        # the dispatch's overlaps: TransformerConfig.__post_init__
        # (transformer_config.py)
        a2a = args.get("overlap_moe_expert_parallel_comm")
        if args.get("moe_shared_expert_overlap") and \
                disp not in ("alltoall", "flex"):
            E("--moe-shared-expert-overlap with the %s dispatcher "
              "(TransformerConfig: only alltoall or flex)" % disp)
        if a2a:
            vp_given = any(k in args for k in (
                "num_layers_per_virtual_pipeline_stage",
                "num_virtual_stages_per_pipeline_rank",
                "pipeline_model_parallel_layout"))
            if pp > 1 and not vp_given:
                E("--overlap-moe-expert-parallel-comm with PP %d without "
                  "virtual pipeline stages (TransformerConfig)" % pp)
            if ep < 2:
                E("--overlap-moe-expert-parallel-comm with EP 1 "
                  "(TransformerConfig)")
            if disp not in ("alltoall", "flex"):
                E("--overlap-moe-expert-parallel-comm with the %s "
                  "dispatcher (TransformerConfig)" % disp)
            if args.get("recompute_granularity") == "full" or \
                    "recompute_method" in args or \
                    "recompute_num_layers" in args:
                E("--overlap-moe-expert-parallel-comm with full "
                  "recomputation (TransformerConfig)")
            if "moe" in (args.get("recompute_modules") or []):
                E("--overlap-moe-expert-parallel-comm recomputing moe "
                  "(TransformerConfig)")
            if not (args.get("bf16") or args.get("fp16")):
                E("--overlap-moe-expert-parallel-comm without bf16 or fp16 "
                  "(TransformerConfig)")
            if args.get("moe_shared_expert_overlap"):
                E("--overlap-moe-expert-parallel-comm with "
                  "--moe-shared-expert-overlap (TransformerConfig)")
            mtp = to_int(args, "mtp_num_layers", errors)
            if mtp and mtp > 1:
                E("--overlap-moe-expert-parallel-comm with %d MTP layers "
                  "(TransformerConfig: at most one)" % mtp)
        # the flex dispatcher's backends (transformer_config.py
        # moe_flex_dispatcher_backend; arguments.py choices)
        fb = args.get("moe_flex_dispatcher_backend")
        if fb is not None and fb not in ("deepep", "hybridep", "ncclep"):
            E("--moe-flex-dispatcher-backend %s (arguments.py: deepep, "
              "hybridep or ncclep)" % fb)
        if fb == "ncclep" and disp != "flex":
            E("--moe-flex-dispatcher-backend ncclep without the flex "
              "dispatcher (TransformerConfig)")
        if fb == "hybridep" and args.get("moe_enable_deepep"):
            E("--moe-enable-deepep with --moe-flex-dispatcher-backend "
              "hybridep (TransformerConfig: only one backend)")
        if (args.get("moe_router_padding_for_quantization") or
                args.get("moe_router_padding_for_fp8")) and \
                args.get("transformer_impl") == "inference_optimized":
            E("--moe-router-padding-for-quantization with the "
              "inference_optimized implementation (TransformerConfig)")
        if args.get("delay_wgrad_compute") and not a2a:
            E("--delay-wgrad-compute without "
              "--overlap-moe-expert-parallel-comm (TransformerConfig)")
        freq = args.get("moe_layer_freq")
        if freq is not None and "[" in freq:
            if not re.fullmatch(r"[\[\]()01,+* 0-9]+", freq):
                E("--moe-layer-freq %r: not a list expression" % freq)
            else:
                try:
                    pat = eval(freq, {"__builtins__": {}})  # digits only
                except Exception as x:  # noqa: BLE001
                    E("--moe-layer-freq %r: %s (moe_freq_type)" % (freq, x))
                    pat = None
                if pat is not None and len(pat) != L:
                    E("--moe-layer-freq pattern of %d layers, --num-layers %d "
                      "(gpt_layer_specs.py)" % (len(pat), L))

    if args.get("bf16") and args.get("fp16"):
        E("--bf16 and --fp16 together (validate_args)")
    if full and not (args.get("bf16") or args.get("fp16")):
        E("neither --bf16 nor --fp16: fp32 training")
    # recomputation: TransformerConfig.__post_init__, validate_args
    g = args.get("recompute_granularity")
    if g == "full" and ("recompute_method" not in args
                        or "recompute_num_layers" not in args):
        E("full recomputation without --recompute-method and "
          "--recompute-num-layers (TransformerConfig.__post_init__)")
    if g == "selective" and ("recompute_method" in args
                             or "recompute_num_layers" in args):
        E("selective recomputation with a method or a layer count "
          "(validate_args, TransformerConfig.__post_init__)")
    # pipeline split: validate_args "Uneven virtual pipeline parallelism",
    # PipelineParallelLayerLayout, get_num_layers_to_build
    given = [k for k in ("num_layers_per_virtual_pipeline_stage",
                         "num_virtual_stages_per_pipeline_rank",
                         "pipeline_model_parallel_layout") if k in args]
    if len(given) > 1:
        E("more than one of %s (validate_args)" % given)
    vpp = None
    first = to_int(args, "decoder_first_pipeline_num_layers", errors)
    last = to_int(args, "decoder_last_pipeline_num_layers", errors)
    # the embedding and the loss counted as layers of the split
    acc = int(bool(args.get("account_for_embedding_in_pipeline_split"))) + \
        int(bool(args.get("account_for_loss_in_pipeline_split")))
    if (first is not None or last is not None) and acc:
        E("--decoder-first/last-pipeline-num-layers with the embedding or "
          "loss accounted for (TransformerConfig.__post_init__)")
    if "pipeline_model_parallel_layout" in args:
        if first is not None or last is not None or acc:
            E("a layout with --decoder-first/last-pipeline-num-layers or "
              "--account-for-* (TransformerConfig.__post_init__)")
        stages = expand_layout(args["pipeline_model_parallel_layout"])
        for st in stages:
            for c in st:
                if c not in "ELtm":
                    E("layout: invalid layer character %r "
                      "(parse_str_to_list)" % c)
        if len(stages) % pp:
            E("layout: %d stages not divisible by PP %d (validate_args)"
              % (len(stages), pp))
        flat = [c for st in stages for c in st]
        if not flat or flat[0] != "E" or flat[-1] != "L":
            E("layout must start with E and end with L "
              "(validate_layer_layout)")
        if flat.count("E") != 1 or flat.count("L") != 1:
            E("layout: E and L exactly once (validate_layer_layout)")
        if flat.count("t") != L:
            E("layout holds %d decoder layers, --num-layers %d "
              "(validate_layer_layout)" % (flat.count("t"), L))
        vpp = len(stages) // pp if pp else 1
    else:
        if "num_virtual_stages_per_pipeline_rank" in args:
            vpp = to_int(args, "num_virtual_stages_per_pipeline_rank", errors)
        elif "num_layers_per_virtual_pipeline_stage" in args:
            per = to_int(args, "num_layers_per_virtual_pipeline_stage", errors)
            if first is not None or last is not None:
                E("--num-layers-per-virtual-pipeline-stage with uneven "
                  "first/last stages (validate_args)")
            if (L + acc) % pp:
                E("layers %d not divisible by PP %d (validate_args)"
                  % (L + acc, pp))
            elif per and ((L + acc) // pp) % per:
                E("layers per stage %d not divisible by %d (validate_args)"
                  % ((L + acc) // pp, per))
            elif per:
                vpp = ((L + acc) // pp) // per
        if first is None and last is None:
            if (L + acc) % pp:
                E("layers %d (%d accounted) not divisible by PP %d "
                  "(validate_args, get_num_layers_to_build)" % (L, acc, pp))
            elif vpp and vpp > 1 and ((L + acc) // pp) % vpp:
                E("layers per pipeline rank %d not divisible by %d virtual "
                  "stages (get_num_layers_to_build)" % ((L + acc) // pp, vpp))
        else:
            rest, mid = L - (first or 0) - (last or 0), \
                pp - (first is not None) - (last is not None)
            if bool(rest) != bool(mid) or (mid and rest % mid):
                E("uneven first/last stages leave %d layers for %d stages "
                  "(TransformerConfig.__post_init__)" % (rest, mid))
            for n in (first, last):
                if n is not None and vpp and vpp > 1 and n % vpp:
                    E("an end stage's %d layers not divisible by %d virtual "
                      "stages (TransformerConfig.__post_init__)" % (n, vpp))
            if mid and vpp and vpp > 1 and (rest // mid) % vpp:
                E("middle ranks' layers not divisible by virtual stages "
                  "(TransformerConfig.__post_init__)")
    if vpp and vpp > 1:
        if args.get("no_overlap_p2p_communication"):
            if pp <= 2:
                E("interleaving without p2p overlap needs PP > 2 "
                  "(validate_args)")
        elif pp <= 1:
            E("interleaving needs PP > 1 (validate_args)")
    # world size and batches: initialize_model_parallel,
    # num_microbatches_calculator, the interleaved schedule
    if world is not None:
        if world % (tp * pp * cp):
            E("world size %d not divisible by TP x PP x CP = %d "
              "(parallel_state.initialize_model_parallel)"
              % (world, tp * pp * cp))
        if experts and world % (etp * ep * pp):
            E("world size %d not divisible by expert TP %d x EP %d x PP %d "
              "(parallel_state.initialize_model_parallel)"
              % (world, etp, ep, pp))
        else:
            dp = world // (tp * pp * cp)
            if mbs and gbs:
                if gbs % (mbs * dp):
                    E("global batch %d not divisible by micro-batch %d x DP "
                      "%d (num_microbatches_calculator)" % (gbs, mbs, dp))
                else:
                    m = gbs // (mbs * dp)
                    # schedules.py forward_backward_pipelining_with_
                    # interleaving: groups of N (default PP) contiguous
                    # micro-batches, PP <= N <= M, the last 0 or >= PP
                    n = to_int(args, "microbatch_group_size_per_virtual_"
                               "pipeline_stage", errors, pp) or pp
                    if vpp and vpp > 1 and pp > 1 and (n < pp or n > m or
                                                       0 < m % n < pp):
                        E("interleaving: %d micro-batches, PP %d, groups of "
                          "%d (schedules.py)" % (m, pp, n))
    # optimizer sharding and overlaps: validate_args
    mfsdp = bool(args.get("use_megatron_fsdp"))
    fsdp2 = bool(args.get("use_torch_fsdp2"))
    distopt = bool(args.get("use_distributed_optimizer")) or mfsdp
    if args.get("overlap_param_gather"):
        if not distopt:
            E("--overlap-param-gather without the distributed optimizer or "
              "Megatron-FSDP (validate_args)")
        if not args.get("overlap_grad_reduce"):
            E("--overlap-param-gather without --overlap-grad-reduce "
              "(validate_args)")
    if args.get("fp8_param_gather") and not (distopt or fsdp2):
        E("--fp8-param-gather without the distributed optimizer or FSDP "
          "(validate_args)")
    if args.get("fp8_param_gather") and "fp8_format" not in args:
        E("--fp8-param-gather without fp8 (TransformerConfig)")
    ckpt = args.get("ckpt_format", "torch_dist")
    if fsdp2:
        if pp != 1:
            E("--use-torch-fsdp2 with PP > 1 (validate_args)")
        if args.get("use_distributed_optimizer"):
            E("--use-torch-fsdp2 with the distributed optimizer "
              "(validate_args)")
        if not args.get("no_gradient_accumulation_fusion"):
            E("--use-torch-fsdp2 needs --no-gradient-accumulation-fusion "
              "(validate_args)")
        if not args.get("untie_embeddings_and_output_weights"):
            E("--use-torch-fsdp2 needs --untie-embeddings-and-output-weights "
              "(validate_args)")
        if ckpt not in ("torch_dist", "torch_dcp"):
            E("--use-torch-fsdp2 needs --ckpt-format torch_dist or torch_dcp "
              "(validate_args)")
    if mfsdp and ckpt != "fsdp_dtensor":
        E("Megatron-FSDP needs --ckpt-format fsdp_dtensor (validate_args)")
    if ckpt == "fsdp_dtensor" and not mfsdp:
        E("--ckpt-format fsdp_dtensor without Megatron-FSDP (validate_args)")
    # memory savers (issue 28): optimizer_config.py __post_init__,
    # optimizer/__init__.py, validate_args, transformer_config.py
    pa = bool(args.get("use_precision_aware_optimizer"))
    for k in ("main_grads_dtype", "main_params_dtype", "exp_avg_dtype",
              "exp_avg_sq_dtype"):
        if not pa and args.get(k, "fp32") != "fp32":
            E("--%s %s without --use-precision-aware-optimizer "
              "(OptimizerConfig)" % (k.replace("_", "-"), args[k]))
    if pa and not args.get("use_distributed_optimizer"):
        E("--use-precision-aware-optimizer without the distributed "
          "optimizer (get_megatron_optimizer)")
    if args.get("main_grads_dtype") == "bf16" and \
            args.get("accumulate_allreduce_grads_in_fp32"):
        E("--main-grads-dtype bf16 with --accumulate-allreduce-grads-in-fp32 "
          "(validate_args)")
    if args.get("optimizer_cpu_offload"):
        if not pa:
            E("--optimizer-cpu-offload without "
              "--use-precision-aware-optimizer (validate_args)")
        if args.get("fp8_param_gather") and \
                args.get("fp8_recipe", "delayed") != "delayed":
            E("--optimizer-cpu-offload with --fp8-param-gather needs "
              "--fp8-recipe delayed (validate_args)")
    for k in ("optimizer_offload_fraction", "activation_offload_fraction"):
        if k in args:
            try:
                f = float(args[k])
                if not 0 <= f <= 1:
                    E("--%s %s outside [0, 1]" % (k.replace("_", "-"), f))
            except ValueError:
                E("--%s %r is not a number" % (k.replace("_", "-"), args[k]))
    ncpu = to_int(args, "cpu_offloading_num_layers", errors, 0) or 0
    if ncpu > 0:
        if ncpu >= L:
            E("CPU offloading of %d of %d layers (TransformerConfig)"
              % (ncpu, L))
        if pp > 1:
            E("CPU offloading with PP %d (TransformerConfig)" % pp)
        if "recompute_granularity" in args:
            E("CPU offloading with recomputation (TransformerConfig)")
        # TransformerConfig.__post_init__: "CUDA graphs not supported with
        # CPU offloading" (the full iteration's graph excepted)
        if args.get("cuda_graph_impl", "none") not in ("none",
                                                       "full_iteration"):
            E("CUDA graphs (%s) with CPU offloading (TransformerConfig)"
              % args["cuda_graph_impl"])
    if args.get("fine_grained_activation_offloading"):
        mods = args.get("offload_modules") or []
        if ncpu > 0:
            E("fine-grained activation offloading with cpu_offloading "
              "(TransformerConfig)")
        if not mods:
            E("--fine-grained-activation-offloading without "
              "--offload-modules (TransformerConfig)")
        allowed = {"core_attn", "attn_proj", "expert_fc1", "fused_group_mlp",
                   "moe_act", "attn_norm", "mlp_norm", "qkv_linear",
                   "gdp_qkv"}
        for x in mods:
            if x not in allowed:
                E("--offload-modules %s (TransformerConfig)" % x)
        if "attn_proj" in mods and "core_attn" not in mods:
            E("attn_proj offloaded without core_attn (TransformerConfig)")
        if env is not None and env.get("NVTE_CPU_OFFLOAD_V1") != "1":
            E("fine-grained activation offloading without "
              "NVTE_CPU_OFFLOAD_V1=1 (validate_args, TE >= 2.10)")
    # NVFP4 (validate_args): not beside fp8; --fp4-param-gather needs it
    if "fp4_format" in args and "fp8_format" in args:
        E("--fp4-format and --fp8-format together (validate_args)")
    if args.get("fp4_param_gather") and "fp4_format" not in args:
        E("--fp4-param-gather without --fp4-format (validate_args)")
    if "fp4_recipe" in args and "fp4_format" not in args:
        E("--fp4-recipe without --fp4-format: trains without fp4 "
          "(TransformerConfig.fp4 is None)")
    # TE quantization.py _compute_nvfp4_support: compute capability >= 10.0
    if "fp4_format" in args and arch and arch != "blackwell":
        E("--fp4-format on %s: Transformer Engine's NVFP4BlockScaling needs "
          "Blackwell" % arch)
    if args.get("fp8_recipe") == "mxfp8" and arch and arch != "blackwell":
        E("--fp8-recipe mxfp8 on %s: Transformer Engine's MXFP8 needs "
          "Blackwell" % arch)
    if env is not None and (tp > 1 or cp > 1) and arch != "blackwell":
        cdmc = env.get("CUDA_DEVICE_MAX_CONNECTIONS")
        if not (mfsdp or fsdp2) and cdmc != "1":
            E("TP or CP > 1 without CUDA_DEVICE_MAX_CONNECTIONS=1 "
              "(validate_args)")
    if env is not None and (mfsdp or fsdp2) and \
            env.get("CUDA_DEVICE_MAX_CONNECTIONS") == "1":
        E("FSDP with CUDA_DEVICE_MAX_CONNECTIONS=1 (validate_args)")
    if not full:
        return
    # training, data, checkpoints: validate_args
    if "train_iters" not in args and "train_samples" not in args:
        E("neither --train-iters nor --train-samples")
    if "lr" not in args:
        E("no --lr (the optimizer has no learning rate)")
    else:
        try:
            if float(args.get("min_lr", 0)) > float(args["lr"]):
                E("--min-lr above --lr (validate_args)")
        except ValueError:
            E("--lr/--min-lr not numbers")
    if "save" in args and "save_interval" not in args:
        E("--save without --save-interval (validate_args)")
    if "data_path" not in args and not args.get("mock_data"):
        E("no --data-path nor --mock-data (validate_args)")
    tok = args.get("tokenizer_type")
    if tok is None:
        E("no --tokenizer-type")
    elif tok in ("HuggingFaceTokenizer", "SentencePieceTokenizer",
                 "GPTSentencePieceTokenizer", "Llama2Tokenizer",
                 "TikTokenizer") and "tokenizer_model" not in args:
        E("--tokenizer-type %s without --tokenizer-model" % tok)


def torchrun_world(argv, errors):
    """torchrun's --nnodes x --nproc-per-node, its rendezvous, and the
    script and arguments it runs."""
    nn = npn = None
    i = 0
    rdzv = {}
    while i < len(argv) and argv[i].startswith("--"):
        k, eq, v = argv[i].partition("=")
        if not eq:
            v = argv[i + 1] if i + 1 < len(argv) else ""
            i += 2
        else:
            i += 1
        k = k.replace("_", "-")
        if k == "--nnodes":
            nn = v
        elif k == "--nproc-per-node":
            npn = v
        elif k.startswith("--rdzv"):
            rdzv[k] = v
    rest = argv[i:]
    if not rest or not rest[0].endswith("pretrain_gpt.py"):
        errors.append("torchrun does not run pretrain_gpt.py: %r" % rest[:1])
        return None, []
    try:
        world = int(nn) * int(npn)
    except (TypeError, ValueError):
        errors.append("torchrun --nnodes %r --nproc-per-node %r: not whole "
                      "numbers" % (nn, npn))
        return None, rest[1:]
    if int(nn) > 1:
        if rdzv.get("--rdzv-backend") != "c10d" or \
                not re.match(r".+:\d+$", rdzv.get("--rdzv-endpoint", "")):
            errors.append("several nodes without a c10d rendezvous at "
                          "host:port")
    return world, rest[1:]


STUBS = {
    "scontrol": "#!/bin/sh\necho node0001\n",
    "srun": ("#!/bin/sh\n# a stand-in: drop srun's options, run the command\n"
             "while [ $# -gt 0 ]; do case \"$1\" in --*=*) shift;;"
             " --nodes|--ntasks-per-node|-N|-n) shift 2;; --*) shift;;"
             " *) break;; esac; done\nexec \"$@\"\n"),
    "torchrun": ("#!/usr/bin/env python3\nimport json, os, sys\n"
                 "json.dump({'argv': sys.argv[1:], 'env': "
                 "{k: os.environ[k] for k in os.environ if k.startswith("
                 "('CUDA_', 'NVTE_', 'PYTORCH_', 'NCCL_')) or k in "
                 "('MASTER_ADDR',)}}, "
                 "open(os.environ['TRAINPLAN_CAPTURE'], 'w'))\n"),
}


def line_env(words, errors):
    """A one-line launch's shell words: its leading NAME=VALUE assignments
    (bash's, for the command), then `env -u NAME ...` (what it unsets),
    then the command. Returns (set, unset, the command's words)."""
    env, unset, i = {}, [], 0
    while i < len(words) and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", words[i]):
        k, _, v = words[i].partition("=")
        env[k] = v
        i += 1
    if i < len(words) and words[i] == "env":
        i += 1
        while i < len(words) and words[i] == "-u" and i + 1 < len(words):
            unset.append(words[i + 1])
            i += 2
        if i < len(words) and "=" in words[i]:
            errors.append("assignments after env: %r" % words[i])
    return env, unset, words[i:]


def run_script(path, slurm, extra_env=None):
    with tempfile.TemporaryDirectory() as d:
        for name, body in STUBS.items():
            p = os.path.join(d, name)
            with open(p, "w") as f:
                f.write(body)
            os.chmod(p, 0o755)
        cap = os.path.join(d, "capture.json")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("SLURM_") and k not in
               ("CUDA_DEVICE_MAX_CONNECTIONS", "MASTER_ADDR",
                "NVTE_CPU_OFFLOAD_V1")}
        env["PATH"] = d + os.pathsep + env.get("PATH", "")
        env["TRAINPLAN_CAPTURE"] = cap
        env.update(extra_env or {})
        if slurm:
            env["SLURM_JOB_ID"] = "42"
            env["SLURM_JOB_NODELIST"] = "node[0001-0004]"
        else:
            env["MASTER_ADDR"] = "10.0.0.1"
        r = subprocess.run(["bash", path], env=env, capture_output=True,
                           text=True, timeout=60)
        if r.returncode != 0 or not os.path.exists(cap):
            return None, "bash %s exited %d: %s" % (
                "under Slurm" if slurm else "without Slurm", r.returncode,
                r.stderr.strip()[-300:])
        with open(cap) as f:
            return json.load(f), None


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("script", "line"):
        sys.exit(__doc__)
    mode, path = sys.argv[1], sys.argv[2]
    arch = None
    if "--arch" in sys.argv:
        arch = sys.argv[sys.argv.index("--arch") + 1]
    errors = []
    if mode == "line":
        with open(path) as f:
            text = f.read().split("  # ")[0]
        env, _, words = line_env(shlex.split(text), errors)
        if words and words[0] == "torchrun":
            world, argv = torchrun_world(words[1:], errors)
        else:
            world, argv = None, words
        check(parse_args(argv, errors), errors, world=world, env=env,
              arch=arch, full=False)
    else:
        for slurm in (True, False):
            cap, err = run_script(path, slurm)
            if err:
                errors.append(err)
                continue
            world, argv = torchrun_world(cap["argv"], errors)
            check(parse_args(argv, errors), errors, world=world,
                  env=cap["env"], arch=arch)
    errors = list(dict.fromkeys(errors))
    for e in errors:
        print("%s: %s" % (path, e))
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
