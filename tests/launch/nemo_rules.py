#!/usr/bin/env python3
"""nemo_rules.py - checks one NeMo launch that trainplan printed against the
keys and start-up checks of the version it names.

Two targets, told apart by the first comment line (each output names its
target there):
  - Megatron-Bridge v0.6.0 ConfigContainer overrides (key=value lines):
    NVIDIA-NeMo/Megatron-Bridge@51885cf132b2 (tag v0.6.0) over its
    Megatron-Core, NVIDIA/Megatron-LM@cd4afffa648426a9 (the 3rdparty
    submodule of that commit);
  - NeMo 1.x launcher YAML keys (key: value lines): NVIDIA/NeMo v2.4.0
    (2381f42f6979) examples/nlp/language_modeling/conf/
    megatron_gpt_config.yaml.
The valid keys and their types come from nemo_keys.txt (written from the
sources by nemo_keys_gen.py). The start-up checks below are re-stated from
the cited functions; each names its file and function. Nothing here imports
NeMo or Megatron: the output is read as text.

Usage: nemo_rules.py FILE [--world-size N]   ('-': standard input)
Prints OK, or one line per violation; exit 0 when OK, 1 otherwise.
"""
import os
import re
import sys

BRIDGE = "NVIDIA-NeMo/Megatron-Bridge@51885cf1"  # v0.6.0
MCORE = "NVIDIA/Megatron-LM@cd4afffa"
NEMO1 = "NVIDIA/NeMo@2381f42f (v2.4.0)"

# ---- value types ----------------------------------------------------------
# Enumerations whose members are not in the annotation (a str or an enum
# class), each from its source.
ENUMS = {
    # megatron/core/transformer/transformer_config.py, cp_comm_type's
    # docstring (MCORE)
    "model.cp_comm_type": ["p2p", "all_gather", "a2a", "a2a+p2p"],
    # megatron/core/transformer/transformer_config.py, TransformerConfig.
    # normalization: Literal['LayerNorm', 'RMSNorm'] (MCORE; GPTModelProvider
    # re-declares it as str)
    "model.normalization": ["LayerNorm", "RMSNorm"],
    # src/megatron/bridge/utils/activation_map.py, ACTIVATION_FUNC_MAP
    # (BRIDGE), the names omegaconf_utils.py turns back into callables
    "model.activation_func": ["gelu", "relu", "silu", "sigmoid", "tanh",
                              "relu2", "squared_relu", "gelu_pytorch_tanh",
                              "fast_gelu", "quick_gelu",
                              "torch.nn.functional.gelu",
                              "torch.nn.functional.relu",
                              "torch.nn.functional.silu",
                              "torch.nn.functional.sigmoid", "torch.tanh"],
    # megatron/core/distributed/distributed_data_parallel_config.py,
    # data_parallel_sharding_strategy's docstring (MCORE)
    "ddp.data_parallel_sharding_strategy": ["no_shard", "optim", "optim_grads",
                                            "optim_grads_params"],
    # megatron/core/transformer/transformer_config.py __post_init__,
    # allowed_modules of recompute_modules (MCORE)
    "model.recompute_modules": ["core_attn", "moe_act", "layernorm",
                                "mla_up_proj", "mlp", "moe", "shared_experts",
                                "gdn_norm_out"],
}
ENUMS_NEMO1 = {
    # megatron_gpt_config.yaml's comments (NEMO1)
    "model.activation": ["gelu", "geglu", "swiglu", "reglu", "squared-relu",
                         "fast-geglu", "fast-swiglu", "fast-reglu"],
    "model.normalization": ["layernorm", "rmsnorm", "layernorm1p"],
    "model.position_embedding_type": ["learned_absolute", "rope", "alibi",
                                      "kerple", "xpos", "sandwich"],
    "model.activations_checkpoint_granularity": ["selective", "full"],
    "model.activations_checkpoint_method": ["uniform", "block"],
    # nemo/collections/nlp/parts/megatron_trainer_builder.py,
    # MegatronTrainerBuilder._plugins (NEMO1)
    "trainer.precision": ["16", "bf16", "16-mixed", "bf16-mixed", "32"],
    # nemo/core/optim/optimizers.py, AVAILABLE_OPTIMIZERS (NEMO1)
    "model.optim.name": ["sgd", "adam", "adamw", "adadelta", "adamax",
                         "adagrad", "rmsprop", "rprop", "novograd", "adafactor",
                         "fused_adam", "distributed_fused_adam",
                         "mcore_distributed_optim"],
}
NULL = {"null", "None", "~"}


def load_keys():
    here = os.path.dirname(os.path.abspath(__file__))
    bridge, mp, nemo1 = {}, [], {}
    with open(os.path.join(here, "nemo_keys.txt")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            kind, rest = line.rstrip("\n").split(" ", 1)
            key, _, ann = rest.partition("\t")
            if kind == "bridge":
                bridge[key] = ann
            elif kind == "bridge-mixed-precision":
                mp.append(key)
            elif kind == "nemo1":
                nemo1[key] = ann
            elif kind == "nemo1-code":  # no default: any value
                nemo1[key] = ""
    return bridge, mp, nemo1


def unquote(v):
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
        return v[1:-1]
    return v


def is_int(v):
    return re.fullmatch(r"-?\d+", v) is not None


def is_num(v):
    return re.fullmatch(r"-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", v) is not None


def check_type(key, v, ann, enums):
    """None when value v fits annotation ann (or the enum of key), else why."""
    optional = "Optional[" in ann or "None" in ann
    if v in NULL:
        return None if optional else f"null, but {key} is {ann}"
    if key in enums:
        vals = [unquote(x) for x in v.strip("[]").split(",")] \
            if v.startswith("[") else [unquote(v)]
        bad = [x for x in vals if x.strip() not in enums[key]]
        return f"{v} not in {enums[key]}" if bad else None
    lit = re.search(r"Literal\[([^\]]*)\]", ann)
    if lit:
        names = [unquote(x.strip()) for x in lit.group(1).split(",")]
        return None if unquote(v) in names else f"{v} not in {names}"
    base = re.sub(r"Optional\[(.*)\]", r"\1", ann).replace(" | None", "")
    if base == "bool":
        return None if v.lower() in ("true", "false") else f"{v} is not a bool"
    if base == "int":
        return None if is_int(v) else f"{v} is not an int"
    if base == "float":
        return None if is_num(v) else f"{v} is not a number"
    return None  # str, unions, classes: any text


# ---- the pipeline layout string -------------------------------------------

def parse_layout(s):
    """Megatron-Core's layout string as a list of stages (lists of layer
    characters): megatron/core/transformer/pipeline_parallel_layer_layout.py,
    PipelineParallelLayerLayout.parse_str_to_list (MCORE)."""
    s = s.replace(",", "")
    for pat in (r"\(([^)]+)\)\*(\d+)", r"(.)\*(\d+)"):
        s = re.sub(pat, lambda m: m.group(1) * int(m.group(2)), s)
    stages = []
    for st in s.split("|"):
        bad = [c for c in st if c not in "ELtm"]
        if bad:
            raise ValueError(f"invalid layer character {bad[0]!r}")
        stages.append(list(st))
    return stages


# ---- Megatron-Bridge -------------------------------------------------------

# What the base recipes build (for the model checks when the output does not
# give the sizes): layers, heads, query groups. Llama: the HF configs the
# recipes load (AutoBridge.from_hf_pretrained, recipes/llama/h100/llama3.py
# and llama2.py, BRIDGE): meta-llama/Meta-Llama-3-8B, -70B, Llama-3.1-8B, -70B, -405B
# config.json; GPT-3: recipes/gpt/h100/gpt3_175b.py (BRIDGE), whose alias
# gpt3_175b_pretrain_config (recipes/gpt/gpt3_175b.py) recipes/gpt/
# __init__.py does not export, so run_recipe.py cannot find it.
RECIPE_MODELS = {
    "llama2_7b_pretrain_config": (32, 32, 32),  # meta-llama/Llama-2-7b-hf
    "llama3_8b_pretrain_config": (32, 32, 8),
    "llama3_70b_pretrain_config": (80, 64, 8),
    "llama31_8b_pretrain_config": (32, 32, 8),
    "llama31_70b_pretrain_config": (80, 64, 8),
    "llama31_405b_pretrain_config": (126, 128, 8),
    "gpt3_175b_pretrain_32gpu_h100_bf16_config": (96, 96, 96),
    "vanilla_gpt_pretrain_config": None,
}
# The recipes that set a CommOverlapConfig (cfg.comm_overlap = ...:
# recipes/llama/h100/llama3.py, llama2.py, recipes/gpt/h100/gpt3_175b.py,
# BRIDGE); the others leave comm_overlap None (recipes/common.py
# _pretrain_common; vanilla_gpt.py).
RECIPE_COMM_OVERLAP = {
    "llama2_7b_pretrain_config", "llama3_70b_pretrain_config",
    "llama31_70b_pretrain_config", "llama31_405b_pretrain_config",
    "gpt3_175b_pretrain_32gpu_h100_bf16_config",
}
COMM_OVERLAP_TARGET = "megatron.bridge.training.comm_overlap.CommOverlapConfig"


def check_bridge(lines, world, keys, mp_names):
    v, bad, notes = {}, [], []
    launch = None
    for ln, line in lines:
        s = line.strip()
        if s.startswith("# launch:"):
            launch = (ln, s)
            continue
        if not s or s.startswith("#"):
            if s.startswith("#"):
                notes.append(s)
            continue
        for w in re.findall(r"""(?:[^\s"']|"[^"]*"|'[^']*')+""", s):
            if "=" not in w:
                bad.append(f"line {ln}: {w!r} is not key=value "
                           "(scripts/training/run_recipe.py, "
                           "_collect_overrides)")
                continue
            k, val = w.split("=", 1)
            plus = len(k) - len(k.lstrip("+"))
            k = k.lstrip("+")
            if k == "mixed_precision":
                names = set(mp_names) | {n.replace("_", "-") for n in mp_names}
                if unquote(val) not in names:
                    bad.append(f"line {ln}: mixed_precision={val}: not a "
                               "registered recipe (training/mixed_precision.py"
                               ", @register)")
            elif k == "comm_overlap._target_":
                pass  # checked below, against the recipe
            elif k.startswith("env_vars."):
                # ConfigContainer.env_vars, a dict (training/config.py,
                # BRIDGE): a new key needs '+' in struct mode
                if plus < 1:
                    bad.append(f"line {ln}: {k}: a new key of the env_vars "
                               "dict needs ++")
            elif k == "rerun_state_machine.check_for_nan_in_loss":
                # RerunStateMachineConfig (training/config.py, BRIDGE) over
                # MCORE's megatron/training/config/resilience_config.py
                if val.lower() not in ("true", "false"):
                    bad.append(f"line {ln}: {k}: expected true or false")
            elif k not in keys:
                bad.append(f"line {ln}: {k}: not a field of Megatron-Bridge "
                           f"v0.6.0's ConfigContainer (nemo_keys.txt)")
                continue
            elif k == "model.attention_backend":
                # AttnBackend (megatron/core/transformer/enums.py, MCORE):
                # the recipes set None (recipes/llama/h100/llama3.py); a
                # string is not converted to the enum
                # (training/utils/omegaconf_utils.py, _apply_overrides,
                # BRIDGE converts torch dtypes and activation_func only)
                if val not in NULL:
                    bad.append(f"line {ln}: model.attention_backend={val}: a "
                               "string, not an AttnBackend; only null can be "
                               "overridden")
            else:
                why = check_type(k, unquote(val) if not val.startswith("[")
                                 else val, keys[k], ENUMS)
                if why:
                    bad.append(f"line {ln}: {k}: {why}")
            # parse_hydra_overrides applies the overrides in struct mode
            # (training/utils/omegaconf_utils.py, BRIDGE): a key under a
            # section the recipes leave None (comm_overlap: recipes/common.py
            # _pretrain_common) must be added with '++'.
            if k.startswith("comm_overlap.") and plus < 2:
                bad.append(f"line {ln}: {k}: comm_overlap is None in the "
                           "base recipes; Hydra's struct mode needs ++")
            v[k] = unquote(val)
    if launch is None:
        bad.append("no '# launch:' line naming the recipe and the GPUs")
        recipe, lw = None, None
    else:
        m = re.search(r"--nnodes (\d+) --nproc-per-node (\d+) .*--recipe (\S+)",
                      launch[1])
        if not m:
            bad.append(f"line {launch[0]}: the launch line names no "
                       "--nnodes, --nproc-per-node and --recipe")
            recipe, lw = None, None
        else:
            lw = int(m.group(1)) * int(m.group(2))
            recipe = m.group(3)
            if recipe not in RECIPE_MODELS:
                bad.append(f"--recipe {recipe}: not a recipe of "
                           "recipes/__init__.py this checker knows")
    # _apply_overrides (training/utils/omegaconf_utils.py, BRIDGE): a dict
    # with a _target_ is instantiated; without one, keys under a comm_overlap
    # the recipe left None make it a plain dict, which ConfigContainer.
    # validate() fails on (training/config.py: 'dict' object has no
    # attribute 'data_parallel_size'). Under a CommOverlapConfig the recipe
    # set, a _target_ would rebuild it from the converted dict (its
    # tp_comm_overlap_cfg a dict).
    co = [k for k in v if k.startswith("comm_overlap.")
          and k != "comm_overlap._target_"]
    target = v.get("comm_overlap._target_")
    if recipe in RECIPE_MODELS and co:
        if recipe in RECIPE_COMM_OVERLAP and target is not None:
            bad.append("comm_overlap._target_ under %s's own "
                       "CommOverlapConfig" % recipe)
        elif recipe not in RECIPE_COMM_OVERLAP and target != \
                COMM_OVERLAP_TARGET:
            bad.append("%s: comm_overlap is None in %s, and without "
                       "comm_overlap._target_=%s the keys make it a dict"
                       % (co[0], recipe, COMM_OVERLAP_TARGET))
    if world is None:
        world = lw
    elif lw is not None and lw != world:
        bad.append(f"the launch line's {lw} GPUs differ from the job's "
                   f"{world}")

    def i(k, d=None):
        x = v.get(k)
        if x is None or x in NULL:
            return d
        return int(x) if is_int(x) else d

    def b(k, d=False):
        x = v.get(k)
        return d if x is None else x.lower() == "true"

    tp = i("model.tensor_model_parallel_size", 1)
    pp = i("model.pipeline_model_parallel_size", 1)
    cp = i("model.context_parallel_size", 1)
    vpp = i("model.virtual_pipeline_model_parallel_size")
    mbs = i("train.micro_batch_size")
    gbs = i("train.global_batch_size")
    seq = i("dataset.seq_length", i("model.seq_length"))
    sizes = RECIPE_MODELS.get(recipe)
    L = i("model.num_layers", sizes[0] if sizes else None)
    heads = i("model.num_attention_heads", sizes[1] if sizes else None)
    groups = i("model.num_query_groups", sizes[2] if sizes else heads)
    missing = [name for name, x in (("tp", tp), ("pp", pp), ("cp", cp),
                                    ("mbs", mbs), ("gbs", gbs), ("seq", seq),
                                    ("num_layers", L))
               if x is None or x < 1]
    if missing:
        return bad + [f"{', '.join(missing)}: missing or below 1"], notes
    # training/config.py, ConfigContainer.get_data_parallel_size (BRIDGE)
    dp = None
    if world is not None:
        if world % (tp * pp * cp):
            bad.append(f"world size {world} is not divisible by TP {tp} x PP "
                       f"{pp} x CP {cp} (training/config.py, "
                       "get_data_parallel_size)")
        else:
            dp = world // (tp * pp * cp)
    # megatron/core/num_microbatches_calculator.py,
    # ConstantNumMicroBatchesCalculator.__init__ (MCORE)
    if dp and gbs % (mbs * dp):
        bad.append(f"global batch {gbs} is not divisible by micro batch "
                   f"{mbs} x DP {dp} (num_microbatches_calculator.py)")
    # mixture of experts (MCORE): validate_args / TransformerConfig
    # (experts divisible by EP), parallel_state.initialize_model_parallel
    # (expert TP x EP x PP divides the world), moe_layer.py MoELayer.forward
    # (TP > 1 trains with sequence parallelism), token_dispatcher.py (flex
    # needs expert TP x EP > 1)
    experts = i("model.num_moe_experts")
    ep = i("model.expert_model_parallel_size", 1)
    etp = i("model.expert_tensor_parallel_size", tp)
    if ep > 1 and not experts:
        bad.append(f"expert_model_parallel_size {ep} without "
                   "num_moe_experts (TransformerConfig.__post_init__)")
    if experts:
        if experts % ep:
            bad.append(f"{experts} experts not divisible by EP {ep} "
                       "(moe_layer.py)")
        if world is not None and world % (etp * ep * pp):
            bad.append(f"world size {world} not divisible by expert TP {etp} "
                       f"x EP {ep} x PP {pp} (parallel_state.py)")
        if tp > 1 and not b("model.sequence_parallel"):
            bad.append("MoE with TP > 1 without sequence_parallel "
                       "(moe_layer.py MoELayer.forward)")
        if v.get("model.moe_token_dispatcher_type") == "flex" and etp * ep < 2:
            bad.append("flex dispatcher with expert TP x EP 1 "
                       "(token_dispatcher.py)")
        freq = v.get("model.moe_layer_freq")
        if freq and freq.startswith("[") and L is not None and \
                len(freq.strip("[]").split(",")) != L:
            bad.append(f"moe_layer_freq lists {len(freq.split(','))} layers, "
                       f"num_layers {L} (gpt_layer_specs.py)")
    # megatron/core/model_parallel_config.py, ModelParallelConfig.__post_init__
    if b("model.sequence_parallel") and tp <= 1:
        bad.append("sequence_parallel with TP 1: 'Cannot use sequence "
                   "parallelism without tensor parallelism' "
                   "(model_parallel_config.py, __post_init__)")
    # model_parallel_config.py, __post_init__: deferring the embedding's
    # weight gradient needs PP > 1
    if (b("comm_overlap.defer_embedding_wgrad_compute")
            or b("model.defer_embedding_wgrad_compute")) and pp <= 1:
        bad.append("defer_embedding_wgrad_compute with PP 1 "
                   "(model_parallel_config.py)")
    if b("model.overlap_p2p_comm") and b("model.batch_p2p_comm", True):
        bad.append("model.overlap_p2p_comm with batch_p2p_comm "
                   "(model_parallel_config.py)")
    # megatron/core/transformer/transformer_config.py, __post_init__ (MCORE)
    if heads and heads % tp:
        bad.append(f"num_attention_heads {heads} % TP {tp} != 0 "
                   "(transformer_config.py)")
    if groups and groups % tp and tp % groups:
        bad.append(f"num_query_groups {groups} and TP {tp}: neither divides "
                   "the other (transformer_config.py)")
    gran = v.get("model.recompute_granularity")
    gran = None if gran in NULL else gran
    meth = v.get("model.recompute_method")
    meth = None if meth in NULL else meth
    rnl = i("model.recompute_num_layers")
    if gran == "full" and (meth is None or rnl is None):
        bad.append("recompute_granularity full needs recompute_method and "
                   "recompute_num_layers (transformer_config.py)")
    if gran == "selective" and rnl is not None:
        bad.append("recompute_granularity selective with "
                   "recompute_num_layers (transformer_config.py)")
    if gran is None and (meth or rnl):
        notes.append("recompute method/num_layers without a granularity")
    # the layout: transformer_config.py (PP layout block) and
    # pipeline_parallel_layer_layout.py, validate_layer_layout (MCORE)
    lay = v.get("model.pipeline_model_parallel_layout")
    acc_e = b("model.account_for_embedding_in_pipeline_split")
    acc_l = b("model.account_for_loss_in_pipeline_split")
    first = i("model.num_layers_in_first_pipeline_stage")
    last = i("model.num_layers_in_last_pipeline_stage")
    v_ = vpp or 1
    if lay and lay not in NULL and (acc_e or acc_l or first or last):
        # transformer_config.py __post_init__: "pipeline_model_parallel_layout
        # cannot be set with other pipeline layout arguments"
        bad.append("pipeline_model_parallel_layout with other pipeline "
                   "split keys (transformer_config.py)")
    if lay and lay not in NULL:
        try:
            stages = parse_layout(lay)
        except ValueError as e:
            bad.append(f"pipeline_model_parallel_layout: {e}")
            return bad, notes
        flat = [c for s in stages for c in s]
        if len(stages) % pp:
            bad.append(f"layout: {len(stages)} stages not divisible by PP "
                       f"{pp}")
        else:
            det = len(stages) // pp
            if vpp is not None and vpp != det:
                bad.append(f"virtual_pipeline_model_parallel_size {vpp} "
                           f"conflicts with the layout's {det}")
        # the stages in layer order are virtual-chunk major
        order = [c for k in range(len(stages) // max(pp, 1))
                 for r in range(pp) for c in stages[k * pp + r]] \
            if len(stages) % pp == 0 else flat
        if not order or order[0] != "E" or order[-1] != "L":
            bad.append("layout: the first layer must be E, the last L")
        if flat.count("E") != 1 or flat.count("L") != 1:
            bad.append("layout: E and L exactly once each")
        if flat.count("t") != L:
            bad.append(f"layout: {flat.count('t')} decoder layers, "
                       f"num_layers is {L}")
    elif first or last:
        # transformer_config.py __post_init__, "Uneven PP" (MCORE)
        if acc_e or acc_l:
            bad.append("num_layers_in_first/last_pipeline_stage with "
                       "account_for_embedding/loss (transformer_config.py)")
        if (first and first % v_) or (last and last % v_):
            bad.append(f"first {first} / last {last} stage layers % VPP "
                       f"{v_} != 0 (transformer_config.py)")
        rest = L - (first or 0) - (last or 0)
        stages = pp - (1 if first else 0) - (1 if last else 0)
        if bool(rest) != bool(stages) or rest < 0 or stages < 0:
            bad.append(f"{rest} middle layers for {stages} middle stages "
                       "(transformer_config.py)")
        elif stages and rest % stages:
            bad.append(f"middle layers {rest} % middle stages {stages} != 0 "
                       "(transformer_config.py)")
        elif stages and (rest // stages) % v_:
            bad.append(f"middle stage layers {rest // stages} % VPP {v_} != 0 "
                       "(transformer_config.py)")
    else:
        # transformer_block.py, get_num_layers_to_build, with the embedding
        # and the loss counted where asked (MCORE)
        slots = L + int(acc_e) + int(acc_l)
        if slots % pp:
            bad.append(f"num_layers {L} (+{int(acc_e) + int(acc_l)} "
                       f"accounted) % PP {pp} != 0 (transformer_block.py)")
        elif vpp and (slots // pp) % vpp:
            bad.append(f"num_layers per rank {slots // pp} % VPP {vpp} != 0 "
                       "(transformer_block.py)")
    if vpp is not None and vpp > 1 and pp <= 1:
        bad.append("virtual pipeline with PP 1")
    # CP: the sequence in 2 x CP chunks (megatron/core/utils.py,
    # get_batch_on_this_cp_rank), and over TP with sequence parallelism
    if cp > 1 and seq % (2 * cp):
        bad.append(f"seq {seq} % (2 x CP {cp}) != 0 (megatron/core/utils.py, "
                   "get_batch_on_this_cp_rank)")
    if b("model.sequence_parallel") and (seq // cp) % tp:
        bad.append(f"seq/CP {seq // cp} % TP {tp} != 0 with sequence "
                   "parallelism")
    # training/comm_overlap.py, CommOverlapConfig._get_model_comm_overlap_cfgs
    # (BRIDGE): TP overlap is switched off without TP > 1 and sequence
    # parallelism, so the key would not mean what it says
    if b("comm_overlap.tp_comm_overlap") and (tp < 2 or not
                                              b("model.sequence_parallel")):
        bad.append("comm_overlap.tp_comm_overlap needs TP >= 2 and "
                   "sequence_parallel (comm_overlap.py)")
    # training/config.py, _validate_and_sync_distributed_optimizer_settings
    # (BRIDGE): either setting turns on both
    for k in ("use_distributed_optimizer", "overlap_param_gather"):
        a, o = v.get("ddp." + k), v.get("optimizer." + k)
        if (a or "false").lower() != (o or "false").lower() and \
                "true" in ((a or "").lower(), (o or "").lower()):
            bad.append(f"ddp.{k} and optimizer.{k} differ: Bridge turns both "
                       "on (config.py)")
    # the memory savers (issue 28): training/config.py,
    # _validate_mixed_precision_consistency and
    # _validate_fine_grained_activation_offloading (BRIDGE); OptimizerConfig
    # and TransformerConfig __post_init__ (MCORE)
    if b("optimizer.use_precision_aware_optimizer"):
        mp = v.get("mixed_precision", "")
        if "bf16" in mp and not b("optimizer.bf16"):
            bad.append("use_precision_aware_optimizer with a bf16 model needs "
                       "optimizer.bf16=true (config.py)")
        if not b("optimizer.use_distributed_optimizer"):
            bad.append("use_precision_aware_optimizer without the distributed "
                       "optimizer (MCORE get_megatron_optimizer)")
    else:
        for k in ("main_grads_dtype", "main_params_dtype", "exp_avg_dtype",
                  "exp_avg_sq_dtype"):
            x = v.get("optimizer." + k)
            if x and x not in ("fp32", "float32", "torch.float32"):
                bad.append(f"optimizer.{k}={x} without "
                           "use_precision_aware_optimizer (OptimizerConfig)")
    for k in ("exp_avg_dtype", "exp_avg_sq_dtype", "main_params_dtype"):
        if (v.get("optimizer." + k) or "") in ("fp8", "float8_e4m3fn"):
            bad.append(f"optimizer.{k} fp8: Bridge's str_to_dtype gives "
                       "float8_e4m3fn, FusedAdam takes torch.uint8")
    if b("optimizer.optimizer_cpu_offload") and \
            not b("optimizer.use_precision_aware_optimizer"):
        bad.append("optimizer_cpu_offload without use_precision_aware_optimizer")
    if b("model.cpu_offloading"):
        n = i("model.cpu_offloading_num_layers") or 0
        if n >= L or n < 0:
            bad.append(f"cpu_offloading_num_layers {n} of {L} layers "
                       "(transformer_config.py)")
        if pp > 1:
            bad.append("cpu_offloading with PP > 1 (transformer_config.py)")
        if gran is not None:
            bad.append("cpu_offloading with recomputation "
                       "(transformer_config.py)")
        if b("model.fine_grained_activation_offloading"):
            bad.append("fine_grained_activation_offloading with "
                       "cpu_offloading (transformer_config.py)")
    # training/config.py _validate_fine_grained_activation_offloading
    # (BRIDGE): TE >= 2.10 wants NVTE_CPU_OFFLOAD_V1=1, which run_recipe.py
    # sets from env_vars (recipe_runner.apply_runtime_environment)
    if b("model.fine_grained_activation_offloading") and \
            v.get("env_vars.NVTE_CPU_OFFLOAD_V1") != "1":
        bad.append("fine_grained_activation_offloading without "
                   "env_vars.NVTE_CPU_OFFLOAD_V1=1 (config.py)")
    # utils/cuda_graph.py validate_cuda_graph_configuration (BRIDGE): local
    # for the full iteration only; ConfigContainer.validate: the full
    # iteration with the NaN check off
    cg = v.get("model.cuda_graph_impl")
    if cg == "local":
        bad.append("model.cuda_graph_impl=local: Megatron-Bridge takes it "
                   "only for full-iteration graphs (utils/cuda_graph.py)")
    if cg == "full_iteration" and \
            v.get("rerun_state_machine.check_for_nan_in_loss", "true") != "false":
        bad.append("full_iteration CUDA graphs without "
                   "rerun_state_machine.check_for_nan_in_loss=false "
                   "(config.py)")
    if b("model.fine_grained_activation_offloading"):
        mods = [unquote(x.strip()) for x in
                (v.get("model.offload_modules") or "").strip("[]").split(",")
                if x.strip()]
        if not mods:
            bad.append("fine_grained_activation_offloading without "
                       "offload_modules (transformer_config.py)")
        if "attn_proj" in mods and "core_attn" not in mods:
            bad.append("attn_proj offloaded without core_attn "
                       "(transformer_config.py)")
    # training/config.py, _validate_and_apply_megatron_fsdp_configs (BRIDGE):
    # the recipes save checkpoints, which Megatron-FSDP writes as fsdp_dtensor
    if b("ddp.use_megatron_fsdp"):
        if v.get("checkpoint.ckpt_format") != "fsdp_dtensor":
            bad.append("Megatron-FSDP needs checkpoint.ckpt_format="
                       "fsdp_dtensor (config.py)")
        if not b("ddp.use_distributed_optimizer"):
            notes.append("Megatron-FSDP turns the distributed optimizer on")
    # training/setup.py, _validate_and_set_vocab_size (BRIDGE)
    mv, tv = i("model.vocab_size"), i("tokenizer.vocab_size")
    if mv is not None and tv is not None and mv < tv:
        bad.append(f"model.vocab_size {mv} < tokenizer.vocab_size {tv} "
                   "(setup.py)")
    # recipe_runner.py, sync_model_dataset_sequence_length: the dataset's
    # wins, so a different model.seq_length is not what runs
    if i("model.seq_length") not in (None, seq):
        bad.append("model.seq_length differs from dataset.seq_length "
                   "(recipe_runner.py syncs the model to the dataset)")
    return bad, notes


# ---- NeMo 1 ---------------------------------------------------------------

def check_nemo1(lines, world, keys):
    v, bad, notes = {}, [], []
    for ln, line in lines:
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            notes.append(s)
            continue
        if ": " not in s and not s.endswith(":"):
            bad.append(f"line {ln}: not 'key: value'")
            continue
        k, val = s.split(":", 1)
        k, val = k.strip(), val.split(" #", 1)[0].strip()
        if k not in keys:
            bad.append(f"line {ln}: {k}: not a key of megatron_gpt_config.yaml "
                       f"({NEMO1})")
            continue
        d = unquote(keys[k])
        if k in ENUMS_NEMO1:
            if val not in NULL and unquote(val) not in ENUMS_NEMO1[k]:
                bad.append(f"line {ln}: {k}: {val} not in {ENUMS_NEMO1[k]}")
        elif d in ("True", "False", "true", "false"):
            if val.lower() not in ("true", "false"):
                bad.append(f"line {ln}: {k}: {val} is not a bool")
        elif is_int(d) and not (is_int(val) or val in NULL):
            bad.append(f"line {ln}: {k}: {val} is not an int")
        v[k] = unquote(val)

    def i(k, dflt=None):
        x = v.get(k)
        return int(x) if x is not None and is_int(x) else dflt

    nodes, dev = i("trainer.num_nodes", 1), i("trainer.devices", 1)
    lw = nodes * dev
    if world is not None and world != lw:
        bad.append(f"trainer.num_nodes x trainer.devices = {lw}, the job has "
                   f"{world} GPUs")
    world = world or lw
    tp = i("model.tensor_model_parallel_size", 1)
    pp = i("model.pipeline_model_parallel_size", 1)
    cp = i("model.context_parallel_size", 1)
    vpp = i("model.virtual_pipeline_model_parallel_size")
    mbs, gbs = i("model.micro_batch_size"), i("model.global_batch_size")
    L = i("model.num_layers")
    seq = i("model.encoder_seq_length")
    # The world is TP x PP x CP x DP; context_parallel_size is read with
    # cfg.get (megatron_base_model.py, MegatronBaseModel.__init__, and
    # nemo/collections/nlp/modules/common/megatron/megatron_init.py,
    # initialize_model_parallel_for_nemo, NEMO1)
    if world % (tp * pp * cp):
        bad.append(f"world {world} % (TP {tp} x PP {pp} x CP {cp}) != 0 "
                   "(megatron_init.py)")
    else:
        dp = world // (tp * pp * cp)
        if mbs and gbs and gbs % (mbs * dp):
            bad.append(f"global batch {gbs} % (micro batch {mbs} x DP {dp}) "
                       "!= 0 (Apex/Megatron num microbatches calculator)")
    if v.get("model.sequence_parallel", "false").lower() == "true" and tp <= 1:
        bad.append("sequence_parallel with TP 1 (model_parallel_config.py)")
    if cp > 1 and seq and seq % (2 * cp):
        bad.append(f"seq {seq} % (2 x CP {cp}) != 0")
    if L and L % (pp * (vpp or 1)):
        # what the output says it cannot express is a note, not a fault
        said = any(l.strip().startswith("# not expressible:")
                   and "split" in l for _, l in lines)
        (notes if said else bad).append(f"num_layers {L} % (PP {pp} x VPP {vpp or 1}) != "
                          "0 (NeMo 1 splits evenly: megatron_gpt_model.py)")
    if vpp and vpp > 1 and pp <= 1:
        bad.append("virtual pipeline with PP 1")
    heads = i("model.num_attention_heads")
    if heads and heads % tp:
        bad.append(f"num_attention_heads {heads} % TP {tp} != 0")
    if v.get("model.ub_tp_comm_overlap", "false").lower() == "true" and (
            tp < 2 or v.get("model.sequence_parallel", "false") != "true"):
        bad.append("ub_tp_comm_overlap needs TP >= 2 and sequence_parallel")
    return bad, notes


def check(text, world=None):
    """(target, violations, notes) of one output."""
    keys, mp, nemo1 = load_keys()
    lines = list(enumerate(text.splitlines(), 1))
    first = next((s for _, s in lines if s.strip()), "")
    if first.startswith("# Megatron-Bridge v0.6.0"):
        bad, notes = check_bridge(lines, world, keys, mp)
        return "bridge", bad, notes
    if first.startswith("# NeMo 1.x launcher YAML"):
        bad, notes = check_nemo1(lines, world, nemo1)
        return "nemo1", bad, notes
    return None, ["the first line names no target version (expected "
                  "'# Megatron-Bridge v0.6.0' or '# NeMo 1.x launcher "
                  "YAML')"], []


def main():
    args = sys.argv[1:]
    world = None
    if "--world-size" in args:
        j = args.index("--world-size")
        world = int(args[j + 1])
        del args[j:j + 2]
    if len(args) != 1:
        sys.exit(__doc__)
    text = sys.stdin.read() if args[0] == "-" else open(args[0]).read()
    target, bad, _ = check(text, world)
    if bad:
        for x in bad:
            print(f"{args[0]}: {target}: {x}")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
