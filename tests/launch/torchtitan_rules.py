#!/usr/bin/env python3
"""torchtitan_rules.py - checks a torchtitan config trainplan printed against
the version it names, with the checks torchtitan makes when it starts.

Versions (the config's first line names one):
  main  pytorch/torchtitan@b5bcd76c66d0acb1a08b176d9639425bc55e0b2a
        (2026-08-21): a Python config, a function returning a Trainer.Config
        (torchtitan/config/README.md).
  0.2   v0.2.0 to v0.2.2, checked against v0.2.2,
        pytorch/torchtitan@73a0e6979dd10b6b1904098eb3c8f62c18ab87ce: a TOML
        job config (torchtitan/config/job_config.py).

The key tables below are facts extracted from those files at those commits
(field names and their annotations); each rule cites the file and function
whose check it restates. It never imports torchtitan: it reads the text.

Usage: torchtitan_rules.py --world-size N [--version main|0.2] FILE|-
Prints OK, or one line per violated rule; exit 0 when OK, 1 otherwise, 2 on
unreadable input. Lines starting "# NOT EXPRESSIBLE" are listed as such;
they excuse only the rule about the model (trainplan writes the model name
torchtitan lacks there), never another.
"""
import argparse
import ast
import math
import re
import sys

try:
    import tomllib
except ImportError:  # Python < 3.11 (Ubuntu 22.04's 3.10): the subset below
    tomllib = None

MAIN = "b5bcd76c66d0"
V02 = "73a0e6979dd1"

# torchtitan/config/job_config.py @ 73a0e6979dd1 (v0.2.2): class -> field -> annotation
V02_CLASSES = {'ActivationCheckpoint': {'debug': 'bool',
                          'determinism_check': 'str',
                          'early_stop': 'bool',
                          'memory_budget': 'float',
                          'mode': "Literal['selective', 'full', 'memory_budget', 'none']",
                          'per_op_sac_force_recompute_mm_shapes_by_fqns': 'list[str]',
                          'preserve_rng_state': 'bool',
                          'selective_ac_option': 'str',
                          'visualize_memory_budget_pareto': 'bool'},
 'Checkpoint': {'async_mode': "Literal['disabled', 'async', 'async_with_pinned_mem']",
                'create_seed_checkpoint': 'bool',
                'enable': 'bool',
                'enable_first_step_checkpoint': 'bool',
                'enable_ft_dataloader_checkpoints': 'bool',
                'exclude_from_loading': 'list[str]',
                'export_dtype': "Literal['float16', 'bfloat16', 'float32']",
                'folder': 'str',
                'initial_load_in_hf': 'bool',
                'initial_load_in_hf_quantized': 'bool',
                'initial_load_model_only': 'bool',
                'initial_load_path': 'str | None',
                'interval': 'int',
                'keep_latest_k': 'int',
                'last_save_in_hf': 'bool',
                'last_save_model_only': 'bool',
                'load_only': 'bool',
                'load_step': 'int'},
 'Comm': {'init_timeout_seconds': 'int',
          'mode': "Literal['default', 'fake_backend', 'local_tensor']",
          'save_traces_file_prefix': 'str',
          'save_traces_folder': 'str',
          'trace_buf_size': 'int',
          'train_timeout_seconds': 'int'},
 'Compile': {'backend': 'str', 'components': 'list[str]', 'enable': 'bool'},
 'DataLoader': {'num_workers': 'int',
                'persistent_workers': 'bool',
                'pin_memory': 'bool',
                'prefetch_factor': 'int | None'},
 'Debug': {'deterministic': 'bool',
           'deterministic_warn_only': 'bool',
           'moe_force_load_balance': 'bool',
           'seed': 'int | None'},
 'Experimental': {'custom_args_module': 'str', 'custom_import': 'str'},
 'FaultTolerance': {'enable': 'bool',
                    'group_size': 'int',
                    'min_replica_size': 'int',
                    'process_group': 'str',
                    'process_group_timeout_ms': 'int',
                    'replica_id': 'int',
                    'semi_sync_method': 'str | None'},
 'Float8GroupedMM': {'fqns': 'list[str] | str'},
 'Float8Linear': {'emulate': 'bool',
                  'enable_fsdp_float8_all_gather': 'bool',
                  'filter_fqns': 'list[str]',
                  'precompute_float8_dynamic_scale_for_fsdp': 'bool',
                  'recipe_name': "Literal['tensorwise', 'rowwise', 'rowwise_with_gw_hp'] | None"},
 'Job': {'config_file': 'str | None',
         'custom_config_module': 'str',
         'description': 'str',
         'dump_folder': 'str',
         'print_config': 'bool',
         'save_config_file': 'str | None'},
 'JobConfig': {'activation_checkpoint': 'ActivationCheckpoint',
               'checkpoint': 'Checkpoint',
               'comm': 'Comm',
               'compile': 'Compile',
               'debug': 'Debug',
               'experimental': 'Experimental',
               'fault_tolerance': 'FaultTolerance',
               'job': 'Job',
               'lr_scheduler': 'LRScheduler',
               'memory_estimation': 'MemoryEstimation',
               'metrics': 'Metrics',
               'model': 'Model',
               'optimizer': 'Optimizer',
               'parallelism': 'Parallelism',
               'profiling': 'Profiling',
               'quantize': 'Quantize',
               'training': 'Training',
               'validation': 'Validation'},
 'LRScheduler': {'decay_ratio': 'float | None',
                 'decay_type': "Literal['linear', 'sqrt', 'cosine']",
                 'min_lr_factor': 'float',
                 'total_steps': 'int | None',
                 'warmup_steps': 'int'},
 'MXGroupedMM': {'fqns': 'list[str] | str', 'recipe_name': "Literal['mxfp8']"},
 'MXLinear': {'filter_fqns': 'list[str]',
              'mxfp8_dim1_cast_kernel_choice': "Literal['triton', 'cuda', 'torch']",
              'recipe_name': 'str'},
 'MemoryEstimation': {'disable_fake_mode': 'bool', 'enable': 'bool'},
 'Metrics': {'disable_color_printing': 'bool',
             'enable_tensorboard': 'bool',
             'enable_wandb': 'bool',
             'log_freq': 'int',
             'save_for_all_ranks': 'bool',
             'save_tb_folder': 'str'},
 'Model': {'converters': 'list[str]',
           'flavor': 'str',
           'hf_assets_path': 'str',
           'name': 'str',
           'print_after_conversion': 'bool',
           'tokenizer_path': 'str | None'},
 'Optimizer': {'beta1': 'float',
               'beta2': 'float',
               'early_step_in_backward': 'bool',
               'eps': 'float',
               'implementation': "Literal['for-loop', 'foreach', 'fused']",
               'lr': 'float',
               'name': 'str',
               'weight_decay': 'float'},
 'Parallelism': {'context_parallel_degree': 'int',
                 'context_parallel_load_balancer': 'str | None',
                 'context_parallel_rotate_method': "Literal['allgather', 'alltoall']",
                 'data_parallel_replicate_degree': 'int',
                 'data_parallel_shard_degree': 'int',
                 'disable_loss_parallel': 'bool',
                 'enable_async_tensor_parallel': 'bool',
                 'expert_parallel_comm_backend': "Literal['standard', 'deepep']",
                 'expert_parallel_degree': 'int',
                 'expert_tensor_parallel_degree': 'int',
                 'fsdp_reshard_after_forward': "Literal['default', 'always', 'never']",
                 'module_fqns_per_model_part': 'list[list[str]] | None',
                 'pipeline_parallel_degree': 'int',
                 'pipeline_parallel_expert_parallel_overlap': 'bool',
                 'pipeline_parallel_first_stage_less_layers': 'int',
                 'pipeline_parallel_last_stage_less_layers': 'int',
                 'pipeline_parallel_layers_per_stage': 'int | None',
                 'pipeline_parallel_microbatch_size': 'int',
                 'pipeline_parallel_schedule': 'str',
                 'pipeline_parallel_schedule_csv': 'str | None',
                 'tensor_parallel_degree': 'int'},
 'Profiling': {'enable_memory_snapshot': 'bool',
               'enable_profiling': 'bool',
               'profile_freq': 'int',
               'profiler_active': 'int',
               'profiler_warmup': 'int',
               'save_memory_snapshot_folder': 'str',
               'save_traces_folder': 'str'},
 'Quantize': {'grouped_mm': 'QuantizedGroupedMM', 'linear': 'QuantizedLinear'},
 'QuantizedGroupedMM': {'float8': 'Float8GroupedMM', 'mx': 'MXGroupedMM'},
 'QuantizedLinear': {'float8': 'Float8Linear', 'mx': 'MXLinear'},
 'Training': {'dataloader': 'DataLoader',
              'dataset': 'str',
              'dataset_path': 'str | None',
              'dtype': "Literal['bfloat16', 'float32']",
              'enable_cpu_offload': 'bool',
              'gc_debug': 'bool',
              'gc_freq': 'int',
              'global_batch_size': 'int',
              'local_batch_size': 'int',
              'max_norm': 'float | int',
              'mixed_precision_param': "Literal['bfloat16', 'float32']",
              'mixed_precision_reduce': "Literal['float32']",
              'seq_len': 'int',
              'steps': 'int'},
 'Validation': {'dataloader': 'DataLoader',
                'dataset': 'str',
                'dataset_path': 'str | None',
                'enable': 'bool',
                'freq': 'int',
                'local_batch_size': 'int',
                'seq_len': 'int',
                'steps': 'int'}}
# torchtitan/config/configs.py @ b5bcd76c66d0 : class -> field -> annotation
MAIN_CLASSES = {'CommConfig': {'init_timeout_seconds': 'int',
                'mode': "Literal['default', 'fake_backend', 'local_tensor', 'torchcomms']",
                'save_traces_file_prefix': 'str',
                'save_traces_folder': 'str',
                'trace_buf_size': 'int',
                'train_timeout_seconds': 'int'},
 'CompileConfig': {'backend': 'str',
                   'components': 'list[str]',
                   'enable': 'bool',
                   'enable_async_tensor_parallel': 'bool'},
 'DebugConfig': {'batch_invariant': 'bool',
                 'detect_anomaly': 'bool',
                 'deterministic': 'bool',
                 'deterministic_warn_only': 'bool',
                 'enable_structured_logging': 'bool',
                 'moe_force_load_balance': 'bool',
                 'print_config': 'bool',
                 'save_config_file': 'str | None',
                 'seed': 'int | None',
                 'spmd_typechecking': 'bool'},
 'ParallelismConfig': {'context_parallel_degree': 'int',
                       'context_parallel_load_balancer': 'str | None',
                       'context_parallel_ptrr_mask_key': 'str | None',
                       'data_parallel_replicate_degree': 'int',
                       'data_parallel_shard_degree': 'int',
                       'enable_fsdp_symm_mem': 'bool',
                       'enable_sequence_parallel': 'bool',
                       'expert_parallel_degree': 'int',
                       'fsdp_reshard_after_forward': "Literal['default', 'always', 'never']",
                       'module_fqns_per_model_part': 'list[list[str]] | None',
                       'num_pp_microbatches': 'int',
                       'pipeline_parallel_degree': 'int',
                       'pipeline_parallel_first_stage_less_layers': 'int',
                       'pipeline_parallel_last_stage_less_layers': 'int',
                       'pipeline_parallel_layers_per_stage': 'int | None',
                       'pipeline_parallel_schedule': 'str',
                       'pipeline_parallel_schedule_csv': 'str | None',
                       'spmd_backend': "Literal['partial_dtensor', 'spmd_types']",
                       'tensor_parallel_degree': 'int'},
 'TrainingConfig': {'disable_cuda_graphs': 'bool',
                    'dtype': "Literal['bfloat16', 'float32']",
                    'enable_cpu_offload': 'bool',
                    'gc_debug': 'bool',
                    'gc_freq': 'int',
                    'max_context_length': 'int',
                    'max_norm': 'float | int',
                    'mixed_precision_param': "Literal['bfloat16', 'float32']",
                    'mixed_precision_reduce': "Literal['float32']",
                    'num_tokens_per_microbatch_per_dp_rank': 'int',
                    'num_tokens_per_train_step': 'int',
                    'steps': 'int'}}
# torchtitan/trainer.py @ b5bcd76c66d0 : Trainer.Config's fields
MAIN_TRAINER_FIELDS = {'activation_checkpoint': 'ActivationCheckpointingConfig',
 'checkpoint': 'BaseCheckpointManager.Config',
 'comm': 'CommConfig',
 'compile': 'CompileConfig',
 'dataloader': 'BaseDataLoader.Config',
 'debug': 'DebugConfig',
 'dump_folder': 'str',
 'hf_assets_path': 'str',
 'loss': 'BaseLoss.Config',
 'lr_scheduler': 'LRSchedulersContainer.Config',
 'metrics': 'MetricsProcessor.Config',
 'model_spec': 'Annotated[ModelSpec | None, tyro.conf.Suppress]',
 'optimizer': 'OptimizersContainer.Config',
 'override': 'OverrideConfig',
 'parallelism': 'ParallelismConfig',
 'profiler': 'Profiler.Config',
 'tokenizer': 'BaseTokenizer.Config',
 'training': 'TrainingConfig',
 'validator': 'Validator.Config'}
# torchtitan/models/llama3/config_registry.py @ b5bcd76c66d0
MAIN_LLAMA3_RECIPES = ['llama3_405b',
 'llama3_70b',
 'llama3_8b',
 'llama3_8b_first_85_pct_layers_nvfp4',
 'llama3_8b_mxfp8',
 'llama3_debugmodel',
 'llama3_debugmodel_ce_loss',
 'llama3_debugmodel_dist_gemm',
 'llama3_debugmodel_first_85_pct_layers_nvfp4',
 'llama3_debugmodel_float8',
 'llama3_debugmodel_float8_emulate_lora',
 'llama3_debugmodel_nvfp4',
 'llama3_debugmodel_varlen_attn',
 'sft_debugmodel']

# torchtitan/models/__init__.py @73a0e6979dd1: _supported_models
V02_MODELS = {"deepseek_v3", "flux", "gpt_oss", "llama3", "llama3_ft", "llama4", "qwen3"}
# torchtitan/models/llama3/__init__.py @73a0e6979dd1: llama3_args
V02_LLAMA3_FLAVORS = {"debugmodel", "debugmodel_flex_attn", "debugmodel_varlen_attn", "8B",
                      "8B_flex", "8B_varlen", "70B", "405B"}
# register_model_converter(...) in components/quantization/float8.py and mx.py @73a0e6979dd1
V02_CONVERTERS = {"quantize.linear.float8", "quantize.grouped_mm.float8", "quantize.linear.mx",
                  "quantize.grouped_mm.mx"}
# torchtitan/models/llama3/__init__.py @b5bcd76c66d0: llama3_configs
MAIN_LLAMA3_FLAVORS = {"debugmodel", "1B", "3B", "8B", "70B", "405B"}
# components/quantization/float8.py @b5bcd76c66d0: Float8LinearConverter.Config.recipe_name
MAIN_FLOAT8_RECIPES = {"rowwise", "rowwise_with_gw_hp"}
# distributed/activation_checkpoint.py @b5bcd76c66d0: ActivationCheckpointingConfig
MAIN_AC = {"None": None, "SelectiveAC.Config()": "selective", "FullAC.Config()": "full",
           "MemoryBudgetAC.Config()": "memory-budget"}
# What a main config may import, and where each name is defined @b5bcd76c66d0.
MAIN_IMPORTS = {
    "torchtitan.components.quantization": {"Float8LinearConverter"},  # __init__.py, __all__
    "torchtitan.distributed.activation_checkpoint": {"FullAC", "SelectiveAC",
                                                     "MemoryBudgetAC"},
    "torchtitan.models.llama3": {"model_registry"},  # models/llama3/__init__.py
    "torchtitan.trainer": {"Trainer"},
    "torchtitan.config": {"CompileConfig", "ParallelismConfig", "TrainingConfig"},
}
# PyTorch's schedule names (torch/distributed/pipelining/schedules.py, get_schedule_class, as
# job_config.py's pipeline_parallel_schedule docstring links it): single-stage ones take one
# stage a rank (PipelineScheduleSingle), the others several (PipelineScheduleMulti).
SINGLE_STAGE = {"1F1B", "GPipe"}
MULTI_STAGE = {"Interleaved1F1B", "LoopedBFS", "InterleavedZeroBubble", "ZBVZeroBubble",
               "DualPipeV"}


class Violations:
    def __init__(self):
        self.items = []

    def add(self, rule, msg, cite):
        self.items.append(f"{rule}: {msg} [{cite}]")


def type_ok(v, ann):
    """Whether value v fits the dataclass annotation ann (a string)."""
    for alt in [a.strip() for a in split_union(ann)]:
        if alt == "None" and v is None:
            return True
        if alt == "bool" and isinstance(v, bool):
            return True
        if alt == "int" and isinstance(v, int) and not isinstance(v, bool):
            return True
        if alt == "float" and isinstance(v, (int, float)) and not isinstance(v, bool):
            return True
        if alt == "str" and isinstance(v, str):
            return True
        if alt.startswith("Literal["):
            if v in ast.literal_eval("[" + alt[len("Literal["):-1] + "]"):
                return True
        if alt.startswith("list[") and isinstance(v, list):
            inner = alt[5:-1]
            if all(type_ok(x, inner) for x in v):
                return True
    return False


def split_union(ann):
    out, depth, cur = [], 0, ""
    for ch in ann:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "|" and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


# ---- reading the two forms ---------------------------------------------------

class TomlError(ValueError):
    pass


def toml_subset(text):
    """TOML as trainplan and torchtitan's shipped configs write it, where
    tomllib is missing: [a.b] tables; key = string, integer, float, boolean
    or array (across lines); # comments."""
    root, cur = {}, None
    cur = root
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line, n = strip_comment(lines[i]), i + 1
        i += 1
        while line.count("[") > line.count("]") and i < len(lines):
            line += " " + strip_comment(lines[i])
            i += 1
        line = line.strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]") and "=" not in line:
            cur = root
            for part in line[1:-1].strip().split("."):
                cur = cur.setdefault(part.strip(), {})
            continue
        if "=" not in line:
            raise TomlError(f"line {n}: expected key = value")
        k, v = line.split("=", 1)
        v = v.strip()
        py = re.sub(r'("[^"]*"|\'[^\']*\')|\btrue\b|\bfalse\b',
                    lambda m: m.group(1) or m.group(0).capitalize(), v)
        try:
            cur[k.strip()] = ast.literal_eval(py.replace("_", "") if re.fullmatch(
                r"[-+0-9_.eE]+", py) else py)
        except (ValueError, SyntaxError):
            raise TomlError(f"line {n}: cannot read the value {v!r}")
    return root


def strip_comment(line):
    out, q = "", None
    for ch in line:
        if q:
            q = None if ch == q else q
        elif ch in "\"'":
            q = ch
        elif ch == "#":
            break
        out += ch
    return out


def read_v02(text, bad):
    """The TOML, flattened to {"section.key": value}, keys checked against
    JobConfig's tree (job_config.py @73a0e6979dd1)."""
    data = tomllib.loads(text) if tomllib else toml_subset(text)
    flat = {}

    def walk(d, cls, path):
        for k, v in d.items():
            fields = V02_CLASSES.get(cls, {})
            p = f"{path}.{k}" if path else k
            if k not in fields:
                bad.add("key", f"{p}: not a key of v0.2.2 (class {cls} has "
                        f"{', '.join(sorted(fields))})", f"config/job_config.py@{V02}")
                continue
            ann = fields[k]
            if ann in V02_CLASSES:
                if not isinstance(v, dict):
                    bad.add("type", f"{p}: expected a [{p}] table", f"config/job_config.py@{V02}")
                else:
                    walk(v, ann, p)
                continue
            if not type_ok(v, ann):
                bad.add("type", f"{p} = {v!r}: expected {ann}", f"config/job_config.py@{V02}")
            flat[p] = v

    walk(data, "JobConfig", "")
    return flat


def read_main(text, bad):
    """The Python config: trainplan's form, plain assignments in one
    function. Returns {"section.key": value, "=recipe": name, ...}."""
    tree = ast.parse(text)
    flat = {}
    models = None
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    for n in tree.body:
        if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("torchtitan.models.") \
                and any(a.name == "model_registry" for a in n.names):
            models = n.module[len("torchtitan.models."):]
        if isinstance(n, ast.ImportFrom) and n.module in MAIN_IMPORTS:
            for a in n.names:
                if a.name not in MAIN_IMPORTS[n.module]:
                    bad.add("import", f"{a.name}: not in {n.module}", f"{n.module}@{MAIN}")
        elif isinstance(n, ast.ImportFrom) and n.module != \
                "torchtitan.models.llama3.config_registry":
            bad.add("import", f"from {n.module}: not a module trainplan's configs import",
                    f"torchtitan@{MAIN}")
        if isinstance(n, ast.ImportFrom) and n.module == "torchtitan.models.llama3.config_registry":
            for a in n.names:
                if a.name not in MAIN_LLAMA3_RECIPES:
                    bad.add("import", f"{a.name}: not in llama3's config_registry",
                            f"models/llama3/config_registry.py@{MAIN}")
    if len(fns) != 1:
        bad.add("form", "expected one function returning the config", f"config/README.md@{MAIN}")
        return flat
    flat["=models"] = models
    # every name the function uses is imported (else a NameError when the config is built)
    imported = {a.asname or a.name.split(".")[0] for n in tree.body
                if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    used = {n.id for n in ast.walk(fns[0]) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)} - {"config", "True", "False", "None"}
    for name in sorted(used - imported):
        bad.add("import", f"{name} is used but not imported", "Python (NameError)")
    for st in fns[0].body:
        if isinstance(st, ast.Return):
            continue
        if not isinstance(st, ast.Assign) or len(st.targets) != 1:
            bad.add("form", f"line {st.lineno}: not an assignment", f"config/README.md@{MAIN}")
            continue
        tgt = ast.unparse(st.targets[0])
        if tgt == "config":
            flat["=recipe"] = ast.unparse(st.value)
            continue
        if not tgt.startswith("config."):
            bad.add("form", f"line {st.lineno}: assigns {tgt}", f"config/README.md@{MAIN}")
            continue
        path = tgt[len("config."):]
        parts = path.split(".")
        if len(parts) == 1:
            if parts[0] not in MAIN_TRAINER_FIELDS:
                bad.add("key", f"config.{path}: not a field of Trainer.Config",
                        f"trainer.py@{MAIN}")
            flat[path] = ast.unparse(st.value)
            continue
        cls = {"training": "TrainingConfig", "parallelism": "ParallelismConfig",
               "compile": "CompileConfig", "comm": "CommConfig", "debug": "DebugConfig"}.get(parts[0])
        if cls is None or len(parts) != 2 or parts[1] not in MAIN_CLASSES[cls]:
            bad.add("key", f"config.{path}: not a field of "
                    f"{cls or 'a config trainplan writes'}", f"config/configs.py@{MAIN}")
            continue
        try:
            v = ast.literal_eval(st.value)
        except ValueError:
            bad.add("type", f"config.{path}: not a literal", f"config/configs.py@{MAIN}")
            continue
        ann = MAIN_CLASSES[cls][parts[1]]
        if not type_ok(v, ann):
            bad.add("type", f"config.{path} = {v!r}: expected {ann}", f"config/configs.py@{MAIN}")
        flat[path] = v
    return flat


# ---- the start-up checks -------------------------------------------------------

def check(text, world, version):
    bad = Violations()
    main = version == "main"
    notes = [l for l in text.splitlines() if l.startswith("# NOT EXPRESSIBLE")]
    model_excused = any("no model" in l for l in notes)
    src = MAIN if main else V02
    try:
        flat = read_main(text, bad) if main else read_v02(text, bad)
    except (SyntaxError, TomlError, *((tomllib.TOMLDecodeError,) if tomllib else ())) as err:
        bad.add("syntax", str(err), "Python" if main else "TOML 1.0")
        return bad, notes
    g = flat.get
    par = "parallelism."

    # the model
    num_layers = None
    # n_layers of llama3's flavors (models/llama3/__init__.py, llama3_args @73a0e6979dd1,
    # _1b ... _405b @b5bcd76c66d0)
    layers_of = {"debugmodel": 6, "1B": 16, "3B": 28, "8B": 32, "70B": 80, "405B": 126}
    if main:
        recipe = (g("=recipe") or "")
        spec = g("model_spec") or ""
        m = re.match(r"model_registry\([\"']([^\"']*)[\"']", spec)
        if recipe.endswith("()") and recipe[:-2] not in MAIN_LLAMA3_RECIPES \
                and recipe != "Trainer.Config()":
            bad.add("recipe", f"config = {recipe}: not a function of llama3's config_registry",
                    f"models/llama3/config_registry.py@{MAIN}")
        if not model_excused:
            if g("=models") != "llama3" or not m or m.group(1) not in MAIN_LLAMA3_FLAVORS:
                bad.add("model", f"model_spec = {spec or None}: expected llama3's model_registry "
                        f"with a flavor of {sorted(MAIN_LLAMA3_FLAVORS)}",
                        f"trainer.py@{MAIN} (model_spec must be set), "
                        f"models/llama3/__init__.py@{MAIN} (llama3_configs)")
        if m:
            num_layers = layers_of.get(m.group(1))
            conv = re.search(r'Float8LinearConverter\.Config\(([^)]*)\)', spec)
            if conv:
                r = re.search(r"recipe_name=[\"']([^\"']*)[\"']", conv.group(1))
                if r and r.group(1) not in MAIN_FLOAT8_RECIPES:
                    bad.add("float8", f"recipe_name {r.group(1)!r}: expected one of "
                            f"{sorted(MAIN_FLOAT8_RECIPES)}",
                            f"components/quantization/float8.py@{MAIN} (Float8LinearConverter.Config)")
        ac = g("activation_checkpoint", "SelectiveAC.Config()")
        if ac not in MAIN_AC:
            bad.add("ac", f"activation_checkpoint = {ac}: expected one of {sorted(MAIN_AC)}",
                    f"distributed/activation_checkpoint.py@{MAIN} (ActivationCheckpointingConfig)")
    else:
        name, flavor = g("model.name", "llama3"), g("model.flavor", "debugmodel")
        if not model_excused:
            if name not in V02_MODELS:
                bad.add("model", f"model.name {name!r}: expected one of {sorted(V02_MODELS)}",
                        f"models/__init__.py@{V02} (_supported_models)")
            elif name == "llama3" and flavor not in V02_LLAMA3_FLAVORS:
                bad.add("model", f"model.flavor {flavor!r}: expected one of "
                        f"{sorted(V02_LLAMA3_FLAVORS)}", f"models/llama3/__init__.py@{V02}")
        if name == "llama3":
            num_layers = layers_of.get(flavor.split("_")[0])
        for c in g("model.converters", []):
            if c not in V02_CONVERTERS:
                bad.add("converter", f"model.converters has {c!r}: registered are "
                        f"{sorted(V02_CONVERTERS)}",
                        f"protocols/model_converter.py@{V02} (ModelConvertersContainer: a KeyError "
                        f"otherwise), components/quantization/float8.py (register_model_converter)")
        mode = g("activation_checkpoint.mode", "selective")
        opt = g("activation_checkpoint.selective_ac_option", "2")
        if mode == "selective" and not (opt == "op" or opt.isdigit()):
            bad.add("ac", f"selective_ac_option {opt!r}: expected 'op' or a positive integer",
                    f"distributed/activation_checkpoint.py@{V02} (apply_ac)")

    # the mesh: ParallelDims._validate (distributed/parallel_dims.py)
    rep = g(par + "data_parallel_replicate_degree", 1)
    shard = g(par + "data_parallel_shard_degree", -1)
    tp = g(par + "tensor_parallel_degree", 8 if main and g("=recipe") in
           ("llama3_70b()", "llama3_405b()") else 1)
    pp = g(par + "pipeline_parallel_degree", 1)
    cp = g(par + "context_parallel_degree", 1)
    cite_dims = f"distributed/parallel_dims.py@{src} (ParallelDims._validate)"
    for k, d in (("replicate", rep), ("tensor", tp), ("pipeline", pp), ("context", cp)):
        if d < 1:
            bad.add("dims", f"{k} degree {d} < 1", cite_dims)
    if shard != -1 and shard < 1:
        bad.add("dims", f"data_parallel_shard_degree {shard}: -1 or >= 1", cite_dims)
    fixed = max(rep, 1) * max(tp, 1) * max(pp, 1) * max(cp, 1)
    if shard == -1:
        shard = world // fixed if world % fixed == 0 else 0
    if shard < 1 or rep * shard * cp * tp * pp != world:
        bad.add("dims", f"replicate {rep} x shard {shard} x CP {cp} x TP {tp} x PP {pp} != "
                f"world size {world}", cite_dims)
        shard = max(shard, 1)
    dp = rep * shard
    if not main and rep > 1 and shard == 1 and cp == 1 and world != rep:
        bad.add("ddp", f"data_parallel_replicate_degree {rep} alone (DDP) beside TP/PP: "
                f"DDP has not supported > 1D parallelism",
                f"models/llama3/infra/parallelize.py@{V02} (parallelize_llama)")

    # async TP needs compile
    comp_on = g("compile.enable", main and g("=recipe") == "llama3_405b()") \
        and "model" in g("compile.components", ["model", "loss"])
    atp_key = "compile.enable_async_tensor_parallel" if main else par + "enable_async_tensor_parallel"
    if g(atp_key, main and g("=recipe") == "llama3_405b()") and not comp_on:
        bad.add("async_tp", "async TP without compile.enable and 'model' in compile.components",
                f"config/configs.py@{MAIN} (CompileConfig.__post_init__)" if main else
                f"distributed/tensor_parallel.py@{V02} (maybe_enable_async_tp)")
    if main and g("activation_checkpoint") == "MemoryBudgetAC.Config()" and not comp_on:
        bad.add("ac", "memory-budget AC without compiling the model",
                f"trainer.py@{MAIN} (Trainer.Config.__post_init__)")

    # the pipeline: pipeline_llm / _get_pipeline_metadata, pipeline_module_split
    cite_pp = f"distributed/pipeline_parallel.py@{src} (" + (
        "_get_pipeline_metadata" if main else "pipeline_llm") + ")"
    sched = g(par + "pipeline_parallel_schedule", "1F1B")
    if pp > 1:
        if sched not in SINGLE_STAGE | MULTI_STAGE:
            bad.add("pp_schedule", f"schedule {sched!r}: not one of PyTorch's",
                    "torch/distributed/pipelining/schedules.py (get_schedule_class)")
        single = sched in SINGLE_STAGE
        lps = g(par + "pipeline_parallel_layers_per_stage")
        first = g(par + "pipeline_parallel_first_stage_less_layers", 1)
        last = g(par + "pipeline_parallel_last_stage_less_layers", 1)
        fqns = g(par + "module_fqns_per_model_part")
        if lps is not None and num_layers:
            stages = math.ceil((num_layers + first + last) / lps)
            if stages % pp:
                bad.add("pp_stages", f"{stages} virtual stages not divisible by PP {pp}", cite_pp)
            elif single and stages // pp != 1:
                bad.add("pp_stages", f"single-stage schedule {sched} with {stages // pp} "
                        f"stages a rank", cite_pp)
            elif not single and stages // pp < 2:
                bad.add("pp_stages", f"multi-stage schedule {sched} with {stages // pp} "
                        f"stage a rank", cite_pp)
            if fqns is None:
                eff = num_layers + first + last
                per = eff // stages if stages else 0
                if stages > eff or per == 0 or first > per or last > per:
                    bad.add("pp_split", f"{stages} stages of {eff} effective layers with "
                            f"first/last lighter by {first}/{last}", cite_pp.replace(
                                "pipeline_llm", "generate_llm_fqn_per_model_part").replace(
                                "_get_pipeline_metadata", "_generate_llm_fqn_per_model_part"))
        elif lps is None and fqns is None:
            pass  # the default: 1 stage a rank (single) or 2 (multi)
        if fqns is not None:
            cite_split = f"distributed/pipeline_parallel.py@{src} (" + (
                "_pipeline_module_split" if main else "pipeline_module_split") + ")"
            if len(fqns) % pp:
                bad.add("pp_split", f"{len(fqns)} stages not divisible by PP {pp}", cite_split)
            elif single and len(fqns) != pp:
                bad.add("pp_split", f"single-stage schedule {sched} builds one stage a rank "
                        f"(the first of {len(fqns) // pp})",
                        f"distributed/pipeline_parallel.py@{src} (build_pipeline_schedule)")
            elif not single and len(fqns) < 2 * pp:
                bad.add("pp_split", f"multi-stage schedule {sched} with one stage a rank", cite_pp)
            head = "lm_head" if main else "output"
            flat_mods = [x for st in fqns for x in st]
            want = ["tok_embeddings"] + [f"layers.{i}" for i in range(num_layers or 0)] + \
                ["norm", head]
            if num_layers and flat_mods != want:
                bad.add("pp_split", "the stages do not hold tok_embeddings, every layer once in "
                        f"order, norm and {head}", cite_split)
            if any(not st for st in fqns):
                bad.add("pp_split", "an empty stage", cite_split)
        if main and not g("training.disable_cuda_graphs", False):
            bad.add("cuda_graphs", "PP with CUDA graphs (training.disable_cuda_graphs unset)",
                    f"trainer.py@{MAIN} (Trainer.Config._validate_cuda_graphs)")

    # the batch
    if main:
        tok = g("training.num_tokens_per_microbatch_per_dp_rank", 16384)
        step = g("training.num_tokens_per_train_step", -1)
        ctx = g("training.max_context_length", 2048)
        npm = g(par + "num_pp_microbatches", 1)
        cite_tr = f"trainer.py@{MAIN} (Trainer.__init__)"
        if tok <= 0 or ctx <= 0 or (step != -1 and step <= 0):
            bad.add("batch", "token counts must be positive (step: -1 or positive)",
                    f"config/configs.py@{MAIN} (TrainingConfig.__post_init__)")
        if npm <= 0:
            bad.add("batch", f"num_pp_microbatches {npm} <= 0",
                    f"trainer.py@{MAIN} (Trainer.Config.__post_init__)")
        sp = g(par + "enable_sequence_parallel", True)
        div = (tp if sp else 1) * (2 * cp if cp > 1 else 1)
        if tok > 0 and tok % div:
            bad.add("seq_divisor", f"{tok} tokens a micro-batch not divisible by {div} (TP with "
                    f"SP x 2 CP)", cite_tr)
        per_rank = tok * (npm if pp > 1 else 1)
        if step != -1 and per_rank > 0 and step % (per_rank * dp):
            bad.add("batch", f"num_tokens_per_train_step {step} not divisible by {per_rank} x "
                    f"DP {dp}", cite_tr)
    else:
        local = g("training.local_batch_size", 8)
        glob = g("training.global_batch_size", -1)
        seq = g("training.seq_len", 2048)
        if glob < 0:
            glob = local * dp
        if glob <= 0 or glob % (local * dp):
            bad.add("batch", f"global batch {glob} not a multiple of local {local} x DP {dp}",
                    f"train.py@{V02} (Trainer.__init__)")
        if pp > 1:
            pmbs = g(par + "pipeline_parallel_microbatch_size", 1)
            if local % pmbs:
                bad.add("batch", f"local batch {local} not divisible by pipeline micro-batch {pmbs}",
                        f"distributed/pipeline_parallel.py@{V02} (build_pipeline_schedule)")
        if seq % (tp * 2 * cp):
            bad.add("seq_divisor", f"seq_len {seq} not divisible by TP {tp} x 2 CP {cp}",
                    f"models/llama3/infra/parallelize.py@{V02} (parallelize_llama; "
                    f"ParallelDims.seq_len_divisor)")
    return bad, notes


def version_of(text):
    first = text.splitlines()[0] if text else ""
    if "torchtitan main" in first:
        return "main"
    if "v0.2" in first:
        return "0.2"
    return "main" if re.search(r"^def ", text, re.M) else "0.2"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--world-size", type=int, required=True)
    ap.add_argument("--version", choices=["main", "0.2"])
    ap.add_argument("file")
    a = ap.parse_args()
    try:
        text = sys.stdin.read() if a.file == "-" else open(a.file, encoding="utf-8").read()
    except OSError as err:
        print(f"torchtitan_rules: {err}", file=sys.stderr)
        return 2
    v = a.version or version_of(text)
    bad, notes = check(text, a.world_size, v)
    for n in notes:
        print(f"not expressible: {n[len('# NOT EXPRESSIBLE'):].lstrip(' :')}")
    if bad.items:
        for b in bad.items:
            print(f"VIOLATION ({v}) {b}")
        return 1
    print(f"OK ({v})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
