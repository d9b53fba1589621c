#!/usr/bin/env python3
"""make_ran_runs.py - training configurations that ran on named hardware, for bench/validate_fit.

Every run here ran on the GPUs it names (model and count), so the peak memory trainplan estimates
for its layout must fit them: `bench/validate_fit` checks that. No run here has a published time
or memory figure (those are in validation_runs.json, moe_validation_runs.json and
memory_runs.json); a run is evidence only that its layout fitted.

Sources (each read from a bare mirror of its repository at the commit recorded in the output):

- `mlperf_ran`: MLPerf Training v3.0-v5.1 submissions of the LLM benchmarks that
  validation_runs.json does not score. The NeMo launch scripts of NVIDIA and its partners were
  read by make_mlperf_runs.py into mlperf_runs.json (at the commits it records); this script
  takes each entry's layout from there, the way make_validation_runs.py does, and includes the
  ones validation_runs.json skips for a reason that does not touch the layout (a GPU hwdb did
  not have then, NVFP4). The two submissions whose scripts make_mlperf_runs.py did not find
  (HPE's folder named llama3_8b; Lambda's config that sources one of NVIDIA's) are read from
  the v5.1 mirror with make_mlperf_runs.py's own reader. The rest are listed with the reason
  they cannot be checked (LoRA, a GPU or system not in hwdb, the same logs filed twice).
- `megatron_lm_ci`: Megatron-LM's CI functional tests (tests/functional_tests/test_cases/
  <model>/<test>/model_config.yaml) with golden values for dgx_a100, dgx_h100 or dgx_gb200:
  one run per test and platform; the config read at the last commit that changed the golden
  values (what produced them), the GPU count from the CI recipe that runs the test on that
  platform (tests/test_utils/recipes/{h100,gb200}/*.yaml) at that commit.
- `torchtitan_ci`: torchtitan's 8-GPU H100 integration suite (tests/integration_tests/h100.py,
  run on an H100 runner by .github/workflows/integration_test_8gpu_h100.yaml).

Usage: python3 make_ran_runs.py --mirrors /work/.mirror
(the mirrors as `fetch` leaves them: DIR/<owner>+<repo>/repo; git is the only tool it runs).
Python standard library only; same inputs, same bytes.
"""

import argparse
import ast
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_mlperf_runs as mm  # noqa: E402
import make_validation_runs as vr  # noqa: E402

OUTPUT = os.path.join(HERE, "ran_runs.json")


def git(git_dir, *args):
    env = dict(os.environ, GIT_NO_LAZY_FETCH="1")
    return subprocess.run(["git", "--git-dir", git_dir] + list(args), check=True,
                          capture_output=True, text=True, env=env).stdout


class Repo:
    """A bare mirror read at recorded commits."""

    def __init__(self, root, name, commit):
        self.name = name
        self.git_dir = os.path.join(root, name.replace("/", "+"), "repo")
        if not os.path.isdir(self.git_dir):
            sys.exit("make_ran_runs: no mirror of %s at %s (fetch github:%s)" % (
                name, self.git_dir, name))
        p = subprocess.run(["git", "--git-dir", self.git_dir, "cat-file", "-e",
                            commit + "^{commit}"], capture_output=True)
        if p.returncode != 0:
            sys.exit("make_ran_runs: the mirror of %s at %s lacks commit %s (fetch it again)"
                     % (name, self.git_dir, commit))
        self.head = commit  # everything is read at or below this commit
        self._cache = {}

    def show(self, commit, path):
        key = (commit, path)
        if key not in self._cache:
            env = dict(os.environ, GIT_NO_LAZY_FETCH="1")
            p = subprocess.run(["git", "--git-dir", self.git_dir, "show",
                                "%s:%s" % (commit, path)], capture_output=True, env=env)
            self._cache[key] = p.stdout.decode("utf-8", "replace") if p.returncode == 0 \
                else None
        return self._cache[key]

    def ls(self, commit, path):
        out = git(self.git_dir, "ls-tree", "-r", "--name-only", commit, "--", path)
        return sorted(out.splitlines())

    def url(self):
        return "https://github.com/%s" % self.name


def hardware(model, gpus, system=None, gpu=None):
    return {"gpu_model": model, "gpus": gpus, "hwdb_system": system, "hwdb_gpu": gpu}


# ---- a YAML subset ------------------------------------------------------------------------------
#
# Megatron-LM's model_config.yaml and CI recipes use block mappings and sequences, flow lists
# ([a, b]), quoted and plain scalars, comments, and block scalars (| and |-). This reads exactly
# that; anything else raises.

def _strip_comment(s):
    out, q = [], None
    for i, ch in enumerate(s):
        if q:
            if ch == q:
                q = None
        elif ch in "'\"":
            q = ch
        elif ch == "#" and (i == 0 or s[i - 1] in " \t"):
            break
        out.append(ch)
    return "".join(out).rstrip()


def _scalar(s):
    s = s.strip()
    if not s:
        return None
    if s[0] in "'\"" and s[-1] == s[0] and len(s) >= 2:
        return s[1:-1]
    if s.startswith("[") and s.endswith("]"):
        inner = s[1:-1].strip()
        return [_scalar(x) for x in inner.split(",")] if inner else []
    low = s.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("null", "~"):
        return None
    if re.fullmatch(r"[-+]?\d+", s):
        return int(s)
    if re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", s):
        return float(s)
    return s


def yaml_load(text):
    lines = []
    raw = text.splitlines()
    for n, line in enumerate(raw):
        if not line.strip() or line.lstrip().startswith("#"):
            lines.append(None)
            continue
        lines.append((len(line) - len(line.lstrip(" ")), line.strip(), n))
    pos = [0]

    def skip():
        while pos[0] < len(lines) and lines[pos[0]] is None:
            pos[0] += 1

    def block_scalar(indent, keep_last):
        out = []
        n0 = None
        while pos[0] < len(raw):
            r = raw[pos[0]] if pos[0] < len(raw) else ""
            if r.strip() and (len(r) - len(r.lstrip(" "))) <= indent:
                break
            if n0 is None and r.strip():
                n0 = len(r) - len(r.lstrip(" "))
            out.append(r[n0:] if n0 is not None and r.strip() else "")
            pos[0] += 1
        text = "\n".join(out).rstrip("\n")
        return text + ("\n" if keep_last else "")

    def value_after(rest, indent):
        if rest in ("|", "|-", ">", ">-"):
            pos[0] += 1
            return block_scalar(indent, rest in ("|", ">"))
        if rest == "":
            pos[0] += 1
            skip()
            if pos[0] < len(lines) and lines[pos[0]][0] > indent:
                ind2, content2, _ = lines[pos[0]]
                if not content2.startswith("- ") and split_key(content2) is None:
                    # a plain scalar on the next, deeper line
                    pos[0] += 1
                    return _scalar(_strip_comment(content2))
                return parse(ind2)
            if pos[0] < len(lines) and lines[pos[0]][0] == indent \
                    and lines[pos[0]][1].startswith("- "):
                return parse(indent)
            return None
        pos[0] += 1
        return _scalar(_strip_comment(rest))

    def split_key(content):
        c = _strip_comment(content)
        m = re.match(r"""^("[^"]*"|'[^']*'|[^:]+?):(\s+(.*)|$)""", c)
        if not m:
            return None
        k = m.group(1)
        if k[0] in "'\"":
            k = k[1:-1]
        return k, (m.group(3) or "").strip()

    def parse(indent):
        skip()
        if pos[0] >= len(lines):
            return None
        ind, content, _ = lines[pos[0]]
        if content.startswith("- ") or content == "-":
            seq = []
            while True:
                skip()
                if pos[0] >= len(lines):
                    break
                ind, content, n = lines[pos[0]]
                if ind != indent or not (content.startswith("- ") or content == "-"):
                    break
                rest = content[2:].strip() if content != "-" else ""
                kv = split_key(rest) if rest else None
                if kv and not rest.startswith("["):
                    # a mapping starting on the dash's line
                    lines[pos[0]] = (indent + 2, rest, n)
                    seq.append(parse(indent + 2))
                else:
                    seq.append(value_after(rest, indent))
            return seq
        mp = {}
        while True:
            skip()
            if pos[0] >= len(lines):
                break
            ind, content, n = lines[pos[0]]
            if ind != indent or content.startswith("- "):
                if ind > indent:
                    raise ValueError("line %d: unexpected indentation" % (n + 1))
                break
            kv = split_key(content)
            if not kv:
                raise ValueError("line %d: expected key: value, found %r" % (n + 1, content))
            mp[kv[0]] = value_after(kv[1], indent)
        return mp

    skip()
    if pos[0] >= len(lines):
        return None
    return parse(lines[pos[0]][0])


# ---- MLPerf Training ----------------------------------------------------------------------------

MLPERF_SOURCE = "mlperf_ran"

# GPUs hwdb has gained since make_validation_runs.py's table (MLPERF_GPU): system, GPU, and the
# GPUs per node its system file says.
MLPERF_NEW_GPU = (("GB300", "gb300-nvl72", "gb300"), ("B300", "dgx-b300", "b300"))

# Non-NVIDIA accelerators of the excluded submissions: the hwdb GPU where there is one.
OTHER_GPU = (("MI355X", "mi355x"), ("MI300X", "mi300x"))


def mlperf_hw_of(accel):
    for key, system, gpu in MLPERF_NEW_GPU:
        if key in (accel or "").upper():
            return system, gpu
    return None, None


def mlperf_entry_run(e, extra_assumed=()):
    """A run of ran_runs.json from an mlperf_runs.json entry (or one built the same way)."""
    out = vr.mlperf_run(e)
    out["source_id"] = MLPERF_SOURCE
    assumed = list(out.pop("_assumed")) + list(extra_assumed)
    derived = out.pop("_derived")
    notes = out.pop("_notes")
    L = e["layout"]
    accel = e["system_json"].get("accelerator_model_name") or ""
    skip = out["skip"]
    if skip and skip.startswith("GPU not in hwdb"):
        system, gpu = mlperf_hw_of(accel)
        if system:
            gpn, _ = vr.hwdb_system_shape(system)
            node_gpus = int(e["system_json"].get("accelerators_per_node") or 0)
            if node_gpus != gpn:
                skip = "no hwdb system for %d %s per node" % (node_gpus, accel)
            else:
                out["system"], out["gpu"] = system, gpu
                skip = None
                assumed.append("system: %s's machine mapped to hwdb %s by its GPU; its "
                               "description says GPUs interconnect '%s', network '%s'" % (
                                   e["submitter"], system,
                                   e["system_json"].get("accelerator_interconnect") or
                                   "(not given)",
                                   e["system_json"].get("host_networking") or "(not given)"))
                # the remaining reasons make_validation_runs.py checks after the GPU's
                if L is None:
                    skip = "layout cannot be read: %s" % e["provenance"]["config_choice"]
                elif L["precision"] is None:
                    skip = "layout cannot be read: the candidate configs disagree on the " \
                           "precision"
    if skip and skip.startswith("NVFP4 precision is not modelled"):
        skip = None
    if skip and skip.startswith("no usable result file"):
        skip = None  # it ran; only its time is missing
        notes = "; ".join(x for x in (notes, "no usable result file: the time is not read")
                          if x)
    if skip and skip.startswith("LoRA"):
        skip = ("LoRA fine-tuning is not expressible: trainplan trains every weight (no frozen "
                "base weights without gradients and optimizer states, no low-rank adapters)")
    if L and L.get("precision") == "fp4":
        out["layout"]["precision"] = "fp4"
        out["layout"]["fp8_recipe"] = None
        derived.append("fp4: Transformer Engine NVFP4 GEMMs (the config sets FP4=True; "
                       "fp4 recipe %s)" % ((L.get("fp8") or {}).get("fp4_recipe") or "nvfp4"))
    out["skip"] = skip
    pa, ph, how, why = vr.SOURCE_DROPOUT["mlperf_training"]
    out["dropout"] = {"attention": pa, "hidden": ph}
    (assumed if how == "assumed" else derived).append(
        "dropout attention %g, hidden %g: %s" % (pa, ph, why))
    prov = e["provenance"]
    out["provenance"] = {"repository": prov["repository"], "commit": prov["commit"],
                         "paths": [p for p in [prov.get("config")] + (
                             prov.get("config_candidates") or []) + [prov["system_json"]]
                             + prov["result_files"] if p],
                         "read_by": "make_mlperf_runs.py (mlperf_runs.json)"}
    out["hardware"] = hardware(accel, out["gpus"], out.get("system"), out.get("gpu"))
    out["assumed"], out["derived"] = assumed, derived
    out["notes"] = notes
    for k in ("target", "also_published", "params_pad_multiple", "params_reported"):
        out.pop(k, None)
    if skip is None:
        Ly = out["layout"]
        assert Ly["tp"] * Ly["pp"] * Ly["cp"] * Ly["dp"] == out["gpus"], out["id"]
    return out


def mlperf_excluded_run(x, mirrors_v51):
    """An excluded result folder of mlperf_runs.json: the reason it cannot be checked."""
    rid = "mlperf-%s-%s-%s-%s" % (x["round"], x["submitter"].lower().replace("+", "-"),
                                  x["system"], x["benchmark"])
    accel = x.get("accelerator") or ""
    gpu = None
    for key, g in OTHER_GPU:
        if key in accel.upper():
            gpu = g
    if x["benchmark"] == "llama2_70b_lora":
        skip = ("LoRA fine-tuning is not expressible: trainplan trains every weight (no frozen "
                "base weights without gradients and optimizer states, no low-rank adapters)")
    elif x["reason"] == "not an NVIDIA GPU" and gpu:
        skip = ("no hwdb system of %s nodes: the GPU is in hwdb (%s) but the estimate needs a "
                "system (GPUs per node, fabric, network); the submission runs AMD's ROCm "
                "build of NeMo" % (accel, gpu))
    elif x["reason"] == "not an NVIDIA GPU":
        skip = "GPU not in hwdb: %s" % accel
    else:
        skip = "layout not read: %s" % x["reason"]
    return {"id": rid, "source_id": MLPERF_SOURCE,
            "source_table": "MLPerf Training %s, %s, results/%s/%s" % (
                x["round"], x["submitter"], x["system"], x["benchmark"]),
            "round": x["round"], "system": None, "gpu": gpu, "gpus": None,
            "hardware": hardware(accel, None, None, gpu),
            "provenance": {"repository": "https://github.com/mlcommons/training_results_%s"
                                         % x["round"],
                           "commit": None, "paths": ["%s/results/%s/%s" % (
                               x["submitter"], x["system"], x["benchmark"])],
                           "read_by": "make_mlperf_runs.py (mlperf_runs.json, excluded)"},
            "skip": skip}


# Submissions make_mlperf_runs.py excluded whose NeMo scripts are there under another name:
# (round, submitter, system, benchmark) -> (config scripts to choose from, why).
MLPERF_RESCUED = {
    ("v5.1", "HPE", "HPE-Cray-XD670-H200-SXM5-141GB_n8_25.09", "llama31_8b"): (
        "HPE/benchmarks/llama3_8b/implementations/nemo-x86_64/",
        "the submission's NeMo scripts are in benchmarks/llama3_8b (not llama31_8b, where "
        "make_mlperf_runs.py looks)"),
    ("v5.1", "Lambda", "gb300_n18_ngc25.04_nemo", "llama31_8b"): (
        "NVIDIA/benchmarks/llama31_8b/implementations/nemo/config_GB200_18x4x1xtp1pp1cp2_8b.sh",
        "Lambda's config_GB300_18x4x1xtp1pp1cp2_8b.sh only sources "
        "config_GB200_18x4x1xtp1pp1cp2_8b.sh, which its folder lacks: NVIDIA's script of that "
        "name in the same round (the one Lambda's README, a copy of NVIDIA's, builds on) is "
        "assumed"),
}


def mlperf_rescued(mirror, key, files):
    rnd, sub, system, bench = key
    where, why = MLPERF_RESCUED[key]
    if where.endswith(".sh"):
        cands = [where]
    else:
        cands = sorted(f for f in mirror.files if f.startswith(where)
                       and os.path.basename(f).startswith("config_") and f.endswith(".sh"))
    e = mm.build_entry(mirror, sub, system, bench, files, {}, candidates=cands)
    key_blobs = tuple(sorted(mirror.blob[f] for f in files))
    e["provenance"]["result_blobs"] = list(key_blobs)
    e["duplicate_of"] = None
    return mlperf_entry_run(e, extra_assumed=[why])


def mlperf_grad_dtype(run, mirrors):
    """Sets layout.grad_reduce_fp32 = false where the run's pretrain.py reduces gradients in
    bf16 (make_mlperf_runs.pretrain_grad_fp32, read at the recorded commit)."""
    if run["skip"] or not run["provenance"]["paths"] \
            or run["layout"].get("grad_reduce_fp32") is False:
        return  # read already where the run came through make_mlperf_runs.build_entry
    m = mirrors.get(run["round"])
    if m is None:
        return
    grad32, py = mm.pretrain_grad_fp32(m, run["provenance"]["paths"][0])
    if grad32 is False:
        run["layout"]["grad_reduce_fp32"] = False
        run["derived"].append("gradients in bf16: %s builds DistributedDataParallelConfig with "
                              "grad_reduce_in_fp32=False (main_grad buffer and its reduction "
                              "in bf16)" % py)
        run["provenance"]["paths"].append(py)


def mlperf_runs(mirror_root):
    data = json.load(open(os.path.join(HERE, "mlperf_runs.json")))
    mirrors = {r: m for r, m in mm.find_mirrors(mirror_root).items()
               if m.commit == data["sources"][r]["commit"]}
    out = []
    for e in data["runs"]:
        if vr.mlperf_run(e)["skip"] is None:
            continue  # scored in validation_runs.json
        r = mlperf_entry_run(e)
        if r["skip"] is None and r["round"] not in mirrors:
            sys.exit("make_ran_runs: mlcommons/training_results_%s at %s is needed under %s"
                     % (r["round"], data["sources"][r["round"]]["commit"], mirror_root))
        mlperf_grad_dtype(r, mirrors)
        out.append(r)
    v51 = None
    for x in data["excluded"]:
        key = (x["round"], x["submitter"], x["system"], x["benchmark"])
        if key in MLPERF_RESCUED:
            if v51 is None:
                v51 = mm.find_mirrors(mirror_root).get("v5.1")
                if v51 is None or v51.commit != data["sources"]["v5.1"]["commit"]:
                    sys.exit("make_ran_runs: mlcommons/training_results_v5.1 at %s is needed "
                             "under %s" % (data["sources"]["v5.1"]["commit"], mirror_root))
            files = sorted(f for f in v51.files if re.match(
                r"%s/results/%s/%s/result_[^/]*\.txt$" % (re.escape(x["submitter"]),
                                                          re.escape(x["system"]),
                                                          re.escape(x["benchmark"])), f))
            r = mlperf_rescued(v51, key, files)
            mlperf_grad_dtype(r, mirrors)
            out.append(r)
        else:
            r = mlperf_excluded_run(x, v51)
            r["provenance"]["commit"] = data["sources"][x["round"]]["commit"]
            out.append(r)
    return out


# ---- Megatron-LM's CI -----------------------------------------------------------------------

MCORE_SOURCE = "megatron_lm_ci"
MCORE_COMMIT = "d98e8a64ddf34856e74b24714e3bedb2f5a39553"  # 2026-08-22
MCORE_TESTS = "tests/functional_tests/test_cases"
MCORE_RECIPES = ("tests/test_utils/recipes",)  # with h100/ and gb200/ since 2025

# The CI platforms and the hwdb systems that stand for them (as memory_runs.json's
# megatron_ci_golden rows have them): DGX A100 80GB (Selene's node), DGX H100, GB200 NVL72 trays
# of 4 GPUs.
MCORE_PLATFORMS = {
    "dgx_a100": ("selene", "a100-80gb", "NVIDIA DGX A100 (A100-SXM4-80GB)"),
    "dgx_h100": ("megatron-core-h100", "h100-sxm", "NVIDIA DGX H100 (H100-SXM5-80GB)"),
    "dgx_gb200": ("gb200-nvl72", "gb200", "NVIDIA GB200 NVL72 (4-GPU trays)"),
}

# Test families pretrain_gpt.py does not train, or not as a decoder-only language model.
MCORE_FAMILY_SKIP = {
    "bert": "BERT (bidirectional encoder with a masked-LM head) is not a model trainplan "
            "expresses",
    "t5": "T5 (encoder-decoder) is not a model trainplan expresses",
    "hybrid": "Mamba / hybrid Mamba-attention layers are not a model trainplan expresses",
    "nemotron": "Nemotron-H hybrid Mamba-attention layers are not a model trainplan expresses",
    "multimodal-llava": "a vision encoder and projector (LLaVA) are not a model trainplan "
                        "expresses",
    "mimo": "multimodal (MIMO) models are not a model trainplan expresses",
    "gpt-nemo": "a NeMo launch (not pretrain_gpt.py's arguments) of the CI's NeMo recipes",
    "common": "not a training run (checkpoint conversion and module tests)",
}

# MODEL_ARGS that change what a GPU holds and that the bench layout cannot say: the run is
# listed, not checked, under the first of them it sets.
MCORE_NOT_EXPRESSIBLE = (
    ("--fine-grained-activation-offloading", "fine-grained activation offloading to the host"),
    ("--offload-modules", "activation offloading to the host (--offload-modules)"),
    ("--cpu-offloading", "CPU offloading of activations or weights"),
    ("--optimizer-cpu-offload", "the optimizer's states offloaded to the host"),
    ("--experimental-attention-variant", "an experimental attention variant (DeepSeek sparse "
                                         "attention's indexer)"),
    ("--linear-attention-freq", "linear-attention (gated DeltaNet) layers"),
    ("--num-distributed-optimizer-instances", "several distributed-optimizer instances (the "
                                              "optimizer sharded over part of the data-parallel "
                                              "group)"),
    ("--microbatch-group-size-per-virtual-pipeline-stage", "micro-batch groups per virtual "
                                                           "pipeline stage other than pp"),
    ("--account-for-embedding-in-pipeline-split", "the embedding counted as a layer in the "
                                                  "pipeline split"),
    ("--account-for-loss-in-pipeline-split", "the loss counted as a layer in the pipeline "
                                             "split"),
    ("--decoder-first-pipeline-num-layers", "an uneven pipeline split (first stage's layers)"),
    ("--decoder-last-pipeline-num-layers", "an uneven pipeline split (last stage's layers)"),
    ("--pipeline-model-parallel-layout", "a custom pipeline layout"),
    ("--hierarchical-context-parallel-sizes", "hierarchical context parallelism"),
    ("--use-torch-fsdp2", "PyTorch FSDP2 inside Megatron-LM (--use-torch-fsdp2)"),
    ("--outer-dp-sharding-strategy", "hybrid (outer/inner) Megatron-FSDP sharding"),
    ("--delay-wgrad-compute", "delayed weight-gradient computation"),
    ("--use-mup", "muP parametrisation"),
    ("--first-last-layers-bf16", "fp8 with the first and last layers in bf16"),
    ("--num-layers-at-start-in-bf16", "fp8 with some layers in bf16"),
    ("--fp8-param-gather", None),  # expressible: a placeholder keeps the order readable
)


def mcore_eval_pattern(v):
    """--moe-layer-freq: an int, or a Python list expression of 0/1 ([0]*3+[1]*5)."""
    if isinstance(v, int):
        return v
    tree = ast.parse(str(v).strip(), mode="eval")

    def ev(n):
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.List):
            return [ev(x) for x in n.elts]
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mult, ast.Add)):
            a, b = ev(n.left), ev(n.right)
            return a * b if isinstance(n.op, ast.Mult) else a + b
        raise ValueError("not a layer pattern: %r" % v)
    return ev(tree)


def mcore_vocab(a, derived, assumed):
    """The tokenizer's vocabulary as Megatron-LM builds it (build_tokenizer), unpadded, or
    None."""
    tt = a.get("--tokenizer-type")
    if a.get("--padded-vocab-size"):
        derived.append("vocab_size: --padded-vocab-size %s" % a["--padded-vocab-size"])
        return int(a["--padded-vocab-size"])
    if tt in (None, "GPT2BPETokenizer") and a.get("--vocab-file"):
        assumed.append("vocab_size: 50257 -- GPT-2 BPE vocab.json/merges.txt of the CI data "
                       "set (the file is not public)")
        return 50257
    if tt == "NullTokenizer":
        derived.append("vocab_size: --vocab-size %s with NullTokenizer (its vocab_size, "
                       "megatron/core/tokenizers/text/libraries/null_tokenizer.py)"
                       % a.get("--vocab-size"))
        return int(a["--vocab-size"])
    if tt == "TikTokenizer":
        v = int(a.get("--vocab-size") or 2 ** 17)
        derived.append("vocab_size: %d -- TikTokenizer's vocab_size (DEFAULT_TIKTOKEN_MAX_VOCAB "
                       "2**17 unless --vocab-size; megatron/core/tokenizers/text/libraries/"
                       "tiktoken_tokenizer.py)" % v)
        return v
    if tt == "HuggingFaceTokenizer" and a.get("--vocab-size"):
        derived.append("vocab_size: --vocab-size %s" % a["--vocab-size"])
        return int(a["--vocab-size"])
    if tt == "GPTSentencePieceTokenizer" and "nemotron_2_256k" in str(a.get("--tokenizer-model")):
        assumed.append("vocab_size: 256000 -- the Nemotron-2 SentencePiece model of the CI data "
                       "(nemotron_2_256k.model; not public)")
        return 256000
    if tt == "Llama2Tokenizer":
        assumed.append("vocab_size: 32000 -- Llama 2's SentencePiece tokenizer")
        return 32000
    return None


def mcore_model(a, derived, assumed):
    """(HF-style config, None) of MODEL_ARGS a, or (None, why not)."""
    L, h, heads = a.get("--num-layers"), a.get("--hidden-size"), a.get("--num-attention-heads")
    if not (L and h and heads):
        return None, "the model's size is not in the config (a checkpoint's arguments)"
    vocab = mcore_vocab(a, derived, assumed)
    if vocab is None:
        return None, "the vocabulary size cannot be read (tokenizer %s, model %s)" % (
            a.get("--tokenizer-type"), a.get("--tokenizer-model"))
    div = int(a.get("--make-vocab-size-divisible-by") or 128)
    tp = int(a.get("--tensor-model-parallel-size") or 1)
    if div != 128 and not a.get("--padded-vocab-size"):
        m = div * tp
        padded = -(-vocab // m) * m
        derived.append("vocab_size: %d padded to a multiple of --make-vocab-size-divisible-by "
                       "%d x TP %d = %d (Megatron's vocab_size_with_padding); trainplan pads "
                       "it to 128 x TP beyond that" % (vocab, div, tp, padded))
        vocab = padded
    swiglu = bool(a.get("--swiglu"))
    sqrelu = bool(a.get("--squared-relu"))
    if a.get("--quick-geglu"):
        return None, "quick GeGLU activation (--quick-geglu)"
    ffn = a.get("--ffn-hidden-size")
    if ffn is None:
        ffn = int((4 * h * 2 / 3) / 64) * 64 if swiglu else 4 * h
        derived.append("intermediate_size: %d -- Megatron's default (%s; megatron/training/"
                       "arguments.py)" % (ffn, "int(4h x 2/3 / 64) x 64 with --swiglu"
                                          if swiglu else "4 x hidden"))
    kv = a.get("--num-query-groups") if a.get("--group-query-attention") else heads
    pos = a.get("--position-embedding-type") or (
        "rope" if a.get("--use-rotary-position-embeddings") else "learned_absolute")
    pos = {"learned_absolute": "learned", "rope": "rope", "none": "none",
           "yarn": "rope", "mrope": "rope"}.get(pos)
    if pos is None:
        return None, "position embedding %s" % a.get("--position-embedding-type")
    norm = a.get("--normalization") or "LayerNorm"
    if norm not in ("LayerNorm", "RMSNorm"):
        return None, "normalization %s" % norm
    bias = not a.get("--disable-bias-linear")
    mla = bool(a.get("--multi-latent-attention"))
    experts = int(a.get("--num-experts") or 0)
    qk_norm = bool(a.get("--qk-layernorm"))
    if mla:
        mtype = "deepseek_v3"
    elif swiglu:
        mtype = ("qwen3_moe" if experts else "qwen3") if qk_norm else (
            "mixtral" if experts else "llama")
    elif qk_norm:
        return None, "QK layer norm without SwiGLU (no such model type to read it)"
    else:
        mtype = "gpt2"
    act = "silu" if swiglu else ("relu2" if sqrelu else "gelu")
    m = {"model_type": mtype, "num_hidden_layers": int(L), "hidden_size": int(h),
         "num_attention_heads": int(heads), "num_key_value_heads": int(kv),
         "intermediate_size": int(ffn), "vocab_size": int(vocab),
         "max_position_embeddings": int(a.get("--max-position-embeddings")
                                        or a.get("--seq-length")),
         "tie_word_embeddings": not a.get("--untie-embeddings-and-output-weights"),
         "hidden_act": act, "position_embedding_type": pos,
         "attention_bias": bias, "qkv_bias": bias or bool(a.get("--add-qkv-bias")),
         "mlp_bias": bias}
    m["rms_norm_eps" if norm == "RMSNorm" else "layer_norm_eps"] = float(
        a.get("--norm-epsilon") or 1e-5)
    if a.get("--kv-channels") and not mla:
        m["head_dim"] = int(a["--kv-channels"])
    if experts:
        m["num_local_experts"] = experts
        m["num_experts_per_tok"] = int(a.get("--moe-router-topk") or 2)
        m["moe_intermediate_size"] = int(a.get("--moe-ffn-hidden-size") or ffn)
        if a.get("--moe-shared-expert-intermediate-size"):
            m["shared_expert_intermediate_size"] = int(a["--moe-shared-expert-intermediate-size"])
        freq = a.get("--moe-layer-freq")
        if freq is not None:
            pat = mcore_eval_pattern(freq)
            if isinstance(pat, int):
                m["moe_layer_freq"] = pat
            else:
                k = 0
                while k < len(pat) and pat[k] == 0:
                    k += 1
                if len(pat) != int(L) or any(x != 1 for x in pat[k:]):
                    return None, "MoE layer pattern %s (only leading dense layers are read)" \
                        % freq
                m["first_k_dense_replace"] = k
        if a.get("--moe-router-num-groups"):
            m["n_group"] = int(a["--moe-router-num-groups"])
            m["topk_group"] = int(a.get("--moe-router-group-topk") or 1)
        if a.get("--moe-router-score-function") == "sigmoid":
            m["scoring_func"] = "sigmoid"
    if mla:
        if bias:
            assumed.append("MLA without biases: Megatron-Core's MLA projections carry "
                           "--add-bias-linear's biases, which trainplan's MLA has none of "
                           "(a few hidden-size vectors per layer)")
            m["attention_bias"] = m["qkv_bias"] = False
        m["q_lora_rank"] = int(a.get("--q-lora-rank") or 0) or None
        m["kv_lora_rank"] = int(a.get("--kv-lora-rank") or 512)
        m["qk_nope_head_dim"] = int(a.get("--qk-head-dim") or 128)
        m["qk_rope_head_dim"] = int(a.get("--qk-pos-emb-head-dim") or 64)
        m["v_head_dim"] = int(a.get("--v-head-dim") or 128)
    if a.get("--mtp-num-layers"):
        m["num_nextn_predict_layers"] = int(a["--mtp-num-layers"])
    return m, None


def mcore_layout(a, gpus, derived, assumed):
    """(layout object as bench/runs.c reads it, None) or (None, why not)."""
    tp = int(a.get("--tensor-model-parallel-size") or 1)
    pp = int(a.get("--pipeline-model-parallel-size") or 1)
    cp = int(a.get("--context-parallel-size") or 1)
    ep = int(a.get("--expert-model-parallel-size") or 1)
    etp = a.get("--expert-tensor-parallel-size")
    if gpus % (tp * pp * cp):
        return None, "tp x pp x cp = %d does not divide the %d GPUs" % (tp * pp * cp, gpus)
    dp = gpus // (tp * pp * cp)
    derived.append("dp: %d = gpus / (tp x pp x cp)" % dp)
    vpp = 1
    if a.get("--num-layers-per-virtual-pipeline-stage"):
        per = int(a["--num-layers-per-virtual-pipeline-stage"])
        vpp = int(a["--num-layers"]) // (pp * per)
        derived.append("vpp: %d = num_layers / (pp x --num-layers-per-virtual-pipeline-stage "
                       "%d)" % (vpp, per))
    elif a.get("--num-virtual-stages-per-pipeline-rank"):
        vpp = int(a["--num-virtual-stages-per-pipeline-rank"])
    mbs = int(a.get("--micro-batch-size") or 1)
    gbs = a.get("--global-batch-size")
    if gbs is None:
        gbs = mbs * dp
        derived.append("global_batch_size: %d = micro batch x dp (Megatron's default)" % gbs)
    gbs = int(gbs)
    if a.get("--step-batch-size-schedule") or a.get("--rampup-batch-size"):
        assumed.append("batch-size ramp: the full global batch is taken")
    if gbs % (mbs * dp):
        return None, "global batch %d not a multiple of micro batch x dp = %d" % (gbs, mbs * dp)
    feats = []
    rc, rc_var, rc_method, rc_layers = "none", None, None, None
    gran = a.get("--recompute-granularity")
    if a.get("--recompute-activations"):
        gran = "selective"
    if gran == "full":
        rc = "full"
        rc_method = a.get("--recompute-method") or "uniform"
        rc_layers = int(a.get("--recompute-num-layers") or 1)
    elif gran == "selective":
        rc = "selective"
        mods = a.get("--recompute-modules")
        if mods:
            rc_var = "megatron-recompute-modules:" + (
                " ".join(mods) if isinstance(mods, list) else str(mods))
    fsdp = bool(a.get("--use-megatron-fsdp"))
    if fsdp:
        strat = a.get("--data-parallel-sharding-strategy") or "no_shard"
        zero = {"no_shard": 0, "optim": 1, "optim_grads": 2, "optim_grads_params": 3}.get(strat)
        if zero is None:
            return None, "Megatron-FSDP sharding strategy %s" % strat
        sharding = "fsdp"
        feats.append("megatron-fsdp")
        derived.append("zero_stage: %d from --data-parallel-sharding-strategy %s of "
                       "Megatron-FSDP" % (zero, strat))
    elif a.get("--use-distributed-optimizer"):
        zero, sharding = 1, "distributed-optimizer"
    else:
        zero, sharding = 0, "none"
    fp8 = a.get("--fp8-format")
    fp4 = a.get("--fp4-format")
    precision = "fp4" if fp4 else ("fp8" if fp8 else ("fp16" if a.get("--fp16") else "bf16"))
    recipe = None
    if fp8:
        recipe = {"delayed": "delayed", "tensorwise": "tensorwise", "mxfp8": "mxfp8",
                  "blockwise": "blockwise"}.get(a.get("--fp8-recipe") or "delayed")
        if recipe is None:
            return None, "fp8 recipe %s" % a.get("--fp8-recipe")
    if fp4 and (a.get("--fp4-recipe") or "nvfp4") != "nvfp4":
        return None, "fp4 recipe %s" % a.get("--fp4-recipe")
    for flag, feat in (("--overlap-grad-reduce", "overlap-grad-reduce"),
                       ("--overlap-param-gather", "overlap-param-gather"),
                       ("--tp-comm-overlap", "tp-comm-overlap"),
                       ("--fp8-param-gather", "fp8-param-gather"),
                       ("--cross-entropy-loss-fusion", "cross-entropy-loss-fusion"),
                       ("--defer-embedding-wgrad-compute", "defer-embedding-wgrad-compute"),
                       ("--overlap-moe-expert-parallel-comm", "ep-a2a-overlap"),
                       ("--moe-shared-expert-overlap", "moe-shared-expert-overlap"),
                       ("--moe-router-padding-for-quantization", "moe-router-padding"),
                       ("--moe-router-padding-for-fp8", "moe-router-padding"),
                       ("--moe-permute-fusion", "moe-permute-fusion"),
                       ("--deterministic-mode", "deterministic-mode"),
                       ("--no-gradient-accumulation-fusion",
                        "no-gradient-accumulation-fusion")):
        if a.get(flag) and feat not in feats:
            feats.append(feat)
    if a.get("--cross-entropy-loss-fusion") and a.get("--cross-entropy-fusion-impl") == "te":
        feats.remove("cross-entropy-loss-fusion")
        feats.append("te-cross-entropy")
        assumed.append("cross entropy fused by Transformer Engine (--cross-entropy-fusion-impl "
                       "te): its gradient in the logits in place, as TE before v2.18 (2026-07) "
                       "keeps it; Megatron-LM refuses the flag since 168cb15d70 (2026-06-03)")
    if a.get("--wgrad-deferral-limit"):
        feats.append("wgrad-deferral-limit=%s" % a["--wgrad-deferral-limit"])
    if a.get("--moe-flex-dispatcher-backend") == "hybridep":
        feats.append("hybridep")
    impl = a.get("--transformer-impl") or "transformer_engine"
    backend = a.get("--attention-backend")
    if impl == "local":
        feats.append("attention-backend=local")
    elif a.get("--use-flash-attn"):
        feats.append("attention-backend=flash")
    else:
        feats.append("attention-backend=%s" % (backend or "auto"))
    if a.get("--enable-cuda-graph") or a.get("--cuda-graph-impl"):
        assumed.append("CUDA graphs (%s): their static buffers are not modelled" % (
            a.get("--cuda-graph-impl") or "--enable-cuda-graph"))
    grad32 = True
    if a.get("--grad-reduce-in-bf16"):
        grad32 = False
    elif precision == "fp16" and not a.get("--accumulate-allreduce-grads-in-fp32"):
        grad32 = False
    disp = a.get("--moe-token-dispatcher-type") if a.get("--num-experts") else None
    if disp not in (None, "alltoall", "allgather", "flex"):
        return None, "MoE token dispatcher %s" % disp
    L = {"tp": tp, "pp": pp, "vpp": vpp, "cp": cp, "dp": dp,
         "micro_batch_size": mbs, "global_batch_size": gbs,
         "seq_length": int(a.get("--seq-length")),
         "sequence_parallel": bool(a.get("--sequence-parallel")) and tp > 1,
         "recompute": rc, "recompute_variant": rc_var, "recompute_method": rc_method,
         "recompute_num_layers": rc_layers, "zero_stage": zero, "sharding": sharding,
         "precision": precision, "fp8_recipe": recipe,
         "pipeline_schedule": "interleaved-1f1b" if vpp > 1 else ("1f1b" if pp > 1 else "none"),
         "framework": "megatron-core", "features": feats, "grad_reduce_fp32": grad32}
    if a.get("--num-experts"):
        L["ep"] = ep
        L["etp"] = int(etp) if etp is not None else tp
        L["moe_dispatcher"] = disp or "allgather"
        if disp is None:
            derived.append("moe_dispatcher: allgather -- Megatron-LM's default "
                           "--moe-token-dispatcher-type")
    return L, None


def mcore_golden_commits(repo):
    """path -> (the last commit at or before the one read that changed it, its age rank: 0 newest),
    for every golden file."""
    out = {}
    log = git(repo.git_dir, "log", "--format=@%H", "--name-only", repo.head, "--", MCORE_TESTS)
    commit, rank = None, -1
    for line in log.splitlines():
        if line.startswith("@"):
            commit, rank = line[1:], rank + 1
        elif line and "/golden_values_" in line and line not in out:
            out[line] = (commit, rank)
    return out


class Recipes:
    """GPUs per (model, test, platform) from the CI recipes at a commit."""

    def __init__(self, repo):
        self.repo, self._at = repo, {}

    def at(self, commit):
        if commit in self._at:
            return self._at[commit]
        table = {}
        for d in MCORE_RECIPES:
            for path in self.repo.ls(commit, d):
                if not path.endswith(".yaml"):
                    continue
                try:
                    y = yaml_load(self.repo.show(commit, path) or "")
                except ValueError:
                    continue
                spec = (y or {}).get("spec") or {}
                if not isinstance(spec, dict) or "nodes" not in spec or "gpus" not in spec:
                    continue
                gpus = int(spec["nodes"]) * int(spec["gpus"])
                model = spec.get("model")
                default = spec.get("platforms")
                # the family's own recipe (gpt.yaml, moe.yaml, gpt-1node.yaml): the fallback
                # for a test it no longer lists
                base = os.path.basename(path)[:-5]
                if base in (model, model + "-1node"):
                    gen = "gb200" if "/gb200/" in path else "h100"
                    table.setdefault(("family", model, gen, base.endswith("-1node")),
                                     set()).add((gpus, path))
                for prod in (y.get("products") or []):
                    cases = prod.get("test_case") or []
                    for sub in (prod.get("products") or [{}]):
                        plats = sub.get("platforms", default)
                        plats = plats if isinstance(plats, list) else [plats]
                        for c in cases:
                            for p in plats:
                                table.setdefault((model, c, p), set()).add((gpus, path))
        self._at[commit] = table
        return table


def mcore_runs(mirror_root):
    repo = Repo(mirror_root, "NVIDIA/Megatron-LM", MCORE_COMMIT)
    golden = mcore_golden_commits(repo)
    recipes = Recipes(repo)
    out = []
    tests = {}
    for path in repo.ls(repo.head, MCORE_TESTS):
        parts = path.split("/")
        if len(parts) != 6:
            continue
        model, test, fname = parts[3], parts[4], parts[5]
        m = re.match(r"golden_values_(dev|lts)_(dgx_a100|dgx_h100|dgx_gb200)(_2nd)?\.json$",
                     fname)
        if fname == "model_config.yaml":
            tests.setdefault((model, test), {})
        elif m:
            tests.setdefault((model, test), {}).setdefault(m.group(2), []).append(
                (path, m.group(1)))
    for (model, test), plats in sorted(tests.items()):
        for plat in sorted(plats):
            files = sorted(plats[plat])
            commit = min((golden[p] for p, _ in files), key=lambda cr: cr[1])[0]
            out.append(mcore_run(repo, recipes, model, test, plat, files, commit))
    return out, repo


def mcore_run(repo, recipes, model, test, plat, files, commit):
    system, gpu, desc = MCORE_PLATFORMS[plat]
    rid = "mcore-ci-%s-%s" % (test, plat)
    cfg_path = "%s/%s/%s/model_config.yaml" % (MCORE_TESTS, model, test)
    text = repo.show(commit, cfg_path)
    cfg_commit = commit
    if text is None:
        text, cfg_commit = repo.show(repo.head, cfg_path), repo.head
    envs = sorted({e for _, e in files})
    derived, assumed = [], []
    run = {"id": rid, "source_id": MCORE_SOURCE, "test": "%s/%s" % (model, test),
           "platform": plat, "environments": envs, "system": system, "gpu": gpu,
           "gpus": None,
           "provenance": {"repository": repo.url(), "commit": cfg_commit,
                          "paths": [cfg_path] + [p for p, _ in files],
                          "golden_values_commit": commit},
           "skip": None}

    def done(skip=None, gpus=None):
        run["gpus"] = gpus
        run["hardware"] = hardware(desc, gpus, system, gpu)
        run["skip"] = skip
        run["assumed"], run["derived"] = assumed, derived
        return run

    if model in MCORE_FAMILY_SKIP:
        return done(MCORE_FAMILY_SKIP[model])
    tm = re.search(r"^TEST_TYPE:\s*\"?([A-Za-z-]+)", text or "", re.M)
    ttype = tm.group(1) if tm else ""
    if ttype.startswith("frozen-start") or ttype.startswith("checkpoint-consistency"):
        return done("not a training run (TEST_TYPE %s: inference or a checkpoint check)" % ttype)
    try:
        y = yaml_load(text or "")
    except ValueError as err:
        return done("model_config.yaml not read: %s" % err)
    a = dict((y or {}).get("MODEL_ARGS") or {})
    if not a:
        return done("no MODEL_ARGS")
    # GPUs: the recipe that runs this test on this platform, at the golden values' commit.
    table = recipes.at(commit)
    hits = table.get((model, test, plat)) or set()
    where = "tests/test_utils/recipes at %s" % commit[:10]
    if not hits:
        table = recipes.at(repo.head)
        hits = table.get((model, test, plat)) or set()
        where = "tests/test_utils/recipes at %s, the commit read" % repo.head[:10]
    if not hits and ttype == "release":
        return done("GPU count not known: the release tests' recipes are not in the "
                    "repository (tests/test_utils/recipes lists none of them), and their "
                    "scale is not the family recipe's")
    if not hits:
        # A test the recipes no longer list on this platform (the golden values are older):
        # the GPUs of its family's own recipe on that platform's kind, where every version
        # at the golden values' commit and at the commit read agrees.
        gen = "gb200" if plat == "dgx_gb200" else "h100"
        one = test.endswith("_1node")
        fam = (recipes.at(commit).get(("family", model, gen, one)) or set()) | (
            recipes.at(repo.head).get(("family", model, gen, one)) or set())
        if len({g for g, _ in fam}) == 1:
            hits = fam
            where = "the %s family's own recipe, at %s and at %s: %s is not listed for %s " \
                    "there (its golden values are older than the recipes)" % (
                        model, commit[:10], repo.head[:10], test, plat)
            assumed.append("gpus: as every run of its family's recipe on %s (the test itself "
                           "is no longer listed)" % plat)
    counts = sorted({g for g, _ in hits})
    if len(counts) != 1:
        return done("GPU count not known: %s" % (
            "no CI recipe in %s runs %s on %s" % (MCORE_RECIPES, test, plat) if not counts else
            "recipes disagree (%s)" % ", ".join("%d GPUs in %s" % h for h in sorted(hits))))
    gpus = counts[0]
    derived.append("gpus: %d = nodes x gpus of %s (%s)" % (
        gpus, ", ".join(sorted({p for _, p in hits})), where))
    if a.get("--mock-data") is None and a.get("--data-path") is None \
            and str(a.get("--train-iters", "")) == "0":
        return done("no training steps")
    for flag, what in MCORE_NOT_EXPRESSIBLE:
        if what and a.get(flag) not in (None, False, 0, "0"):
            if flag == "--num-distributed-optimizer-instances" and int(a[flag]) == 1:
                continue
            if flag == "--outer-dp-sharding-strategy" and a[flag] == "no_shard":
                continue
            return done("not expressible: %s (%s)" % (what, flag), gpus)
    opt = a.get("--optimizer") or "adam"
    if opt not in ("adam", "adamw"):
        return done("not expressible: optimizer %s (trainplan keeps Adam's two fp32 moments)"
                    % opt, gpus)
    mdl, why = mcore_model(a, derived, assumed)
    if mdl is None:
        return done("not expressible: %s" % why, gpus)
    lay, why = mcore_layout(a, gpus, derived, assumed)
    if lay is None:
        return done("not expressible: %s" % why, gpus)
    lay["framework_version"] = "Megatron-LM CI (%s) at golden values %s" % (
        ", ".join(envs), commit[:10])
    run["model"] = mdl
    run["layout"] = lay
    ad = a.get("--attention-dropout")
    hd = a.get("--hidden-dropout")
    run["dropout"] = {"attention": float(0.1 if ad is None else ad),
                      "hidden": float(0.1 if hd is None else hd)}
    if ad is None or hd is None:
        derived.append("dropout: Megatron's default 0.1 where the config does not set it "
                       "(TransformerConfig hidden_dropout / attention_dropout)")
    if a.get("--moe-expert-capacity-factor") is not None:
        run["model_overrides"] = {"capacity_factor": float(a["--moe-expert-capacity-factor"])}
    return done(None, gpus)


# ---- torchtitan's H100 integration suite --------------------------------------------------------

TT_SOURCE = "torchtitan_ci"
TT_COMMIT = "b5bcd76c66d0acb1a08b176d9639425bc55e0b2a"  # 2026-08-21


def torchtitan_runs(mirror_root):
    """torchtitan's 8-GPU H100 suite: each test is a Python config function; listed with why it
    is not checked where its config cannot be read here."""
    repo = Repo(mirror_root, "pytorch/torchtitan", TT_COMMIT)
    path = "tests/integration_tests/h100.py"
    text = repo.show(repo.head, path) or ""
    wf = ".github/workflows/integration_test_8gpu_h100.yaml"
    runner = re.search(r"runner-cuda:\s*(\S+)", repo.show(repo.head, wf) or "")
    out = []
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") ==
                "OverrideDefinitions"):
            continue
        kw = {k.arg: k.value for k in node.keywords}
        name = ast.literal_eval(kw["test_name"]) if "test_name" in kw else None
        ngpu = ast.literal_eval(kw["ngpu"]) if "ngpu" in kw else 8
        cfgs = kw.get("configs")
        cfg = ast.unparse(cfgs) if cfgs is not None else None
        out.append({
            "id": "torchtitan-ci-h100-%s" % name, "source_id": TT_SOURCE,
            "system": None, "gpu": "h100-sxm", "gpus": ngpu,
            "hardware": hardware("NVIDIA H100 (runner %s)" % (
                runner.group(1) if runner else "?"), ngpu, None, "h100-sxm"),
            "provenance": {"repository": repo.url(), "commit": repo.head,
                           "paths": [path, wf, "torchtitan_recipes/tests/h100.py"],
                           "config": cfg},
            "skip": "not read: the test's configuration is a Python function building "
                    "torchtitan's debug model (Trainer.Config from torchtitan.models.*."
                    "config_registry), not a file this script can read without running "
                    "torchtitan"})
    return out, repo


# ---- the file -----------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirrors", required=True, help="folder of the fetched repositories")
    ap.add_argument("--output", default=OUTPUT)
    args = ap.parse_args()
    runs = mlperf_runs(args.mirrors)
    mc, mrepo = mcore_runs(args.mirrors)
    runs += mc
    tt, trepo = torchtitan_runs(args.mirrors)
    runs += tt
    ids = [r["id"] for r in runs]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    assert not dup, dup
    mdata = json.load(open(os.path.join(HERE, "mlperf_runs.json")))
    doc = {
        "schema": "trainplan-ran-runs/1",
        "description": "Training configurations that ran on the hardware each names (GPU model "
                       "and count; an hwdb system), with no published time: bench/validate_fit "
                       "checks that trainplan's estimated peak memory fits them. Layout objects "
                       "as validation_runs.json writes them (bench/runs.c reads them). Written "
                       "by make_ran_runs.py; do not edit by hand. skip: why a run is not "
                       "checked (the feature trainplan cannot express, or what is missing).",
        "sources": {
            MLPERF_SOURCE: {
                "what": "MLPerf Training v3.0-v5.1 LLM submissions (gpt3, llama31_405b, "
                        "llama31_8b, llama2_70b_lora) that validation_runs.json does not "
                        "score: layouts from mlperf_runs.json (make_mlperf_runs.py), two "
                        "read from the v5.1 repository here",
                "repositories": {r: v for r, v in mdata["sources"].items()}},
            MCORE_SOURCE: {
                "what": "Megatron-LM CI functional tests with golden values on dgx_a100, "
                        "dgx_h100, dgx_gb200: model_config.yaml at the golden values' "
                        "commit, GPUs from the CI recipes",
                "repository": mrepo.url(), "commit": mrepo.head},
            TT_SOURCE: {
                "what": "torchtitan's 8-GPU H100 integration suite (tests/integration_tests/"
                        "h100.py)",
                "repository": trepo.url(), "commit": trepo.head},
        },
        "runs": runs,
    }
    with open(args.output + ".tmp", "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    os.replace(args.output + ".tmp", args.output)
    n_ok = sum(1 for r in runs if not r["skip"])
    print("%d runs, %d to check -> %s" % (len(runs), n_ok, args.output))


if __name__ == "__main__":
    main()
