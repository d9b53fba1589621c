#!/usr/bin/env python3
"""nemo_keys_gen.py - writes nemo_keys.txt, the override keys of the NeMo
targets that nemo_rules.py checks against, from their source.

Megatron-Bridge: the fields of the dataclasses of ConfigContainer's sections
(src/megatron/bridge/training/config.py, class ConfigContainer) with the
fields of every base class, followed through the imports into Megatron-LM
(Megatron-Bridge's 3rdparty/Megatron-LM submodule commit), read with Python's
ast module from the files at the pinned commits; plus the registered
mixed-precision recipe names (training/mixed_precision.py, @register).
NeMo 1: every key path of examples/nlp/language_modeling/conf/
megatron_gpt_config.yaml (read by indentation; the file is plain
block-style YAML).

Usage: nemo_keys_gen.py BRIDGE_GIT MEGATRON_GIT NEMO_GIT > nemo_keys.txt
(the bare repositories; e.g. /work/.mirror/NVIDIA-NeMo+Megatron-Bridge/repo,
/work/.mirror/NVIDIA+Megatron-LM/repo, /work/.mirror/NVIDIA+NeMo/repo).
It does not import the frameworks.
"""
import ast
import re
import subprocess
import sys

BRIDGE_TAG = "v0.6.0"
BRIDGE_COMMIT = "51885cf132b2814188b6855c25a8588254274c2a"
MEGATRON_COMMIT = "cd4afffa648426a959dc7cb1e24b5ce7d0c3ff54"  # submodule
NEMO_TAG = "v2.4.0"
NEMO_COMMIT = "2381f42f6979449b5b99538f8f80135831009b51"
NEMO_YAML = "examples/nlp/language_modeling/conf/megatron_gpt_config.yaml"
# The GPT model's code reads some model keys the YAML does not list, with
# cfg.get('key', default): they are keys of NeMo 1 too (given with Hydra's
# '+' as overrides).
NEMO_MODEL_CODE = [
    "nemo/collections/nlp/models/language_modeling/megatron_base_model.py",
    "nemo/collections/nlp/models/language_modeling/megatron_gpt_model.py",
]

# ConfigContainer's sections and the class each holds (training/config.py).
SECTIONS = [
    ("model", "megatron.bridge.models.gpt_provider", "GPTModelProvider"),
    ("train", "megatron.bridge.training.config", "TrainingConfig"),
    ("ddp", "megatron.bridge.training.config",
     "DistributedDataParallelConfig"),
    ("optimizer", "megatron.bridge.training.config", "OptimizerConfig"),
    ("dataset", "megatron.bridge.training.config", "GPTDatasetConfig"),
    ("tokenizer", "megatron.bridge.training.tokenizers.config",
     "TokenizerConfig"),
    ("checkpoint", "megatron.bridge.training.config", "CheckpointConfig"),
    ("comm_overlap", "megatron.bridge.training.comm_overlap",
     "CommOverlapConfig"),
    ("mixed_precision", "megatron.bridge.training.mixed_precision",
     "MixedPrecisionConfig"),
    ("scheduler", "megatron.bridge.training.config", "SchedulerConfig"),
    ("logger", "megatron.bridge.training.config", "LoggerConfig"),
    ("dist", "megatron.bridge.training.config", "DistributedInitConfig"),
    ("validation", "megatron.training.config", "ValidationConfig"),
    ("rng", "megatron.training.config", "RNGConfig"),
]


class Repos:
    def __init__(self, bridge, megatron):
        self.bridge, self.megatron = bridge, megatron
        self.cache = {}

    def source(self, module):
        """The text of module's file (or package __init__), or None."""
        if module.startswith("megatron.bridge"):
            git, commit, root = self.bridge, BRIDGE_COMMIT, "src/"
        elif module.startswith("megatron."):
            git, commit, root = self.megatron, MEGATRON_COMMIT, ""
        else:
            return None, None
        base = root + module.replace(".", "/")
        for path in (base + ".py", base + "/__init__.py"):
            key = (git, commit, path)
            if key not in self.cache:
                r = subprocess.run(["git", "-C", git, "show",
                                    f"{commit}:{path}"],
                                   capture_output=True, text=True)
                self.cache[key] = r.stdout if r.returncode == 0 else None
            if self.cache[key] is not None:
                return self.cache[key], path
        return None, None


def imports_of(tree, module, is_pkg):
    """name -> (module, original name) for the file's from-imports
    (relative ones resolved from module, a package when is_pkg)."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level:
                parts = module.split(".") + ([""] if is_pkg else [])
                mod = ".".join(parts[:len(parts) - node.level]) + (
                    "." + mod if mod else "")
            for a in node.names:
                out[a.asname or a.name] = (mod, a.name)
    return out


def fields(repos, module, name, seen, depth=0):
    """The dataclass fields of class name of module and of its bases:
    {field: its annotation}, a subclass's annotation over its base's."""
    if depth > 12 or (module, name) in seen:
        return {}
    seen.add((module, name))
    text, path = repos.source(module)
    if text is None:
        return {}
    tree = ast.parse(text)
    cls = None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            cls = node
    imps = imports_of(tree, module, path.endswith("__init__.py"))
    if cls is None:  # re-exported: follow the import
        if name in imps:
            mod, orig = imps[name]
            return fields(repos, mod, orig, seen, depth + 1)
        return {}
    own = {}
    for st in cls.body:
        if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
            ann = ast.unparse(st.annotation)
            if not st.target.id.startswith("_") and "ClassVar" not in ann:
                own[st.target.id] = " ".join(ann.split())
    out = {}
    for b in cls.bases:
        bname = ast.unparse(b)
        if "[" in bname:
            bname = bname.split("[", 1)[0]
        if bname in imps:
            mod, orig = imps[bname]
            out.update(fields(repos, mod, orig, seen, depth + 1))
        else:
            out.update(fields(repos, module, bname, seen, depth + 1))
    out.update(own)
    return out


def mixed_precision_names(repos):
    text, _ = repos.source("megatron.bridge.training.mixed_precision")
    tree = ast.parse(text)
    names = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(
                ast.unparse(d) == "register" for d in node.decorator_list):
            names.append(node.name)
    return names


def yaml_keys(text):
    """(dotted key path, default text) of a block-style YAML file (lists
    not followed)."""
    keys, stack = [], []
    for line in text.splitlines():
        s = line.split(" #", 1)[0].rstrip()
        if not s.strip() or s.lstrip().startswith(("#", "-")):
            continue
        ind = len(s) - len(s.lstrip())
        body = s.strip()
        if ":" not in body:
            continue
        k, v = body.split(":", 1)
        while stack and stack[-1][0] >= ind:
            stack.pop()
        path = ".".join([p for _, p in stack] + [k.strip()])
        keys.append((path, v.strip()))
        if not v.strip():
            stack.append((ind, k.strip()))
    return keys


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    bridge, megatron, nemo = sys.argv[1:]
    repos = Repos(bridge, megatron)
    print("# nemo_keys.txt - written by nemo_keys_gen.py; do not edit.")
    print(f"# bridge: NVIDIA-NeMo/Megatron-Bridge {BRIDGE_TAG} "
          f"({BRIDGE_COMMIT}), ConfigContainer sections "
          "(src/megatron/bridge/training/config.py) and their base classes "
          f"in NVIDIA/Megatron-LM {MEGATRON_COMMIT}")
    print(f"# nemo1: NVIDIA/NeMo {NEMO_TAG} ({NEMO_COMMIT}) {NEMO_YAML}; "
          "nemo1-code: model keys the GPT model reads with cfg.get that the "
          "YAML does not list (" + ", ".join(NEMO_MODEL_CODE) + ")")
    for sec, mod, cls in SECTIONS:
        fs = fields(repos, mod, cls, set())
        if not fs:
            sys.exit(f"nemo_keys_gen.py: no fields for {mod}.{cls}")
        for f in sorted(fs):
            print(f"bridge {sec}.{f}\t{fs[f]}")
    for n in mixed_precision_names(repos):
        print(f"bridge-mixed-precision {n}")
    r = subprocess.run(["git", "-C", nemo, "show",
                        f"{NEMO_COMMIT}:{NEMO_YAML}"],
                       capture_output=True, text=True, check=True)
    listed = set()
    for k, v in yaml_keys(r.stdout):
        print(f"nemo1 {k}\t{v}")
        listed.add(k)
    for path in NEMO_MODEL_CODE:
        r = subprocess.run(["git", "-C", nemo, "show", f"{NEMO_COMMIT}:{path}"],
                           capture_output=True, text=True, check=True)
        for name in sorted(set(re.findall(
                r"\bcfg\.get\(\s*['\"](\w+)['\"]", r.stdout))):
            if "model." + name not in listed:
                listed.add("model." + name)
                print(f"nemo1-code model.{name}\t{path}")


if __name__ == "__main__":
    main()
