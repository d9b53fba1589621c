#!/usr/bin/env python3
"""make_validation_runs.py - writes validation_runs.json from published_runs.json and
mlperf_runs.json.

published_runs.json (copied verbatim from shared/data) holds 226 measured training runs, each
as its source published it. validation_runs.json is the same runs normalized for trainplan's
estimator: a model trainplan can load (a preset name or an inline config.json object), a system
of its hardware database, the layout fields the estimator reads (null = not published, to be
searched), the comparison target with the FLOP formula needed to reproduce it, and a skip
reason where a run cannot be estimated. Every choice that is not in the source is written into
the run's "assumed" or "derived" list; validation_runs.md summarises them per source.
mlperf_runs.json (written by make_mlperf_runs.py from the MLPerf Training results repositories)
adds one more source, mlperf_training: MLPerf's measured time per step with the layout its
submission's scripts set.

It does not estimate anything, and it never changes a published number: targets are copied,
and derived values (iteration times from tokens/s, FLOPs per iteration) are computed from
published numbers with the formula named beside them.

Usage: python3 make_validation_runs.py --trainplan ../../build/trainplan
  (the binary is used for our parameter counts: `model show --format json`, presets and inline
  configs alike, so the file records what trainplan itself reads.)
Writes validation_runs.json next to this script. Deterministic: same inputs, same bytes.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- FLOP formulas the sources use, by id. The estimator converts its predicted iteration
# time into the source's TFLOP/s with exactly these. "space" says which trainplan count equals
# the formula (space_flops_per_token; tests/test_space.c checks it run by run).
FLOP_FORMULAS = {
    "megatron_eq3_4pass": {
        "per_iteration": "96 * B * s * l * h^2 * (1 + s/(6*h) + V/(16*l*h))",
        "symbols": "B global batch (sequences), s sequence length, l layers, h hidden size, "
                   "V vocabulary as the source's code used it (see the run's vocab_for_flops)",
        "passes": "4 (forward, backward = 2 forward, one recompute forward of every layer; the "
                  "LM head is counted 3 times)",
        "attention": "non-causal (QK^T and AV over the full sequence)",
        "counts": "GEMMs only, 2 FLOPs per multiply-add; assumes MHA, FFN = 4h, 2-GEMM FFN",
        "space": "space_flops_per_token(m with vocab = vocab_for_flops, s, causal 0, "
                 "SPACE_RECOMPUTE_FULL).total * B * s",
        "source": "Narayanan et al., SC'21, arXiv:2104.04473, eq. (3) (used for their Tables 1-2); "
                  "Megatron-DeepSpeed megatron/utils.py throughput_calculator with "
                  "checkpoint_activations_factor 4 (BigScience logs, after "
                  "bigscience-workshop/Megatron-DeepSpeed PR #251, which uses the padded vocabulary)",
        "tflops_per_gpu": "per_iteration / (iteration_time_s * gpus) / 1e12",
    },
    "megatron_core_3pass": {
        "per_iteration": "12 * B * s * l * h^2 * ((1 + g/a + s/h) * (q/h) + (f/h) * k * m "
                         "+ V/(2*l*h))",
        "symbols": "a query heads, g KV heads (query groups), q = a * head_dim, f FFN size, k "
                   "experts per token (1 dense), m = 3/2 for SwiGLU else 1, V padded vocabulary",
        "passes": "3 (model FLOPs; recomputation not counted)",
        "attention": "non-causal",
        "counts": "GEMMs only, 2 FLOPs per multiply-add",
        "space": "space_flops_per_token(m with vocab = vocab_for_flops, s, causal 0, "
                 "SPACE_RECOMPUTE_NONE).total * B * s",
        "source": "Megatron-LM megatron/training/training.py num_floating_point_operations "
                  "(2024, Megatron-Core r0.8.0), the TFLOP/s its log prints and the README table "
                  "reports; MFU there = TFLOP/s / 989 (H100 SXM bf16 dense)",
        "tflops_per_gpu": "per_iteration / (iteration_time_s * gpus) / 1e12",
    },
    "mosaic_6n_attn": {
        "per_token": "6 * N + 12 * l * d * s   (MFU);   8 * N + 16 * l * d * s   (HFU, with "
                     "activation checkpointing)",
        "symbols": "N the model's NumParams as published (all parameters: embedding, learned "
                   "positions, biases, norms), l layers, d hidden size, s sequence length",
        "passes": "3 for MFU, 4 for HFU",
        "attention": "non-causal",
        "counts": "2 FLOPs per parameter per token per pass plus the attention core; norms, "
                  "activations, residuals excluded",
        "space": "not a space count: it multiplies every parameter (embedding table and "
                 "positions included) by 6",
        "source": "llm-foundry scripts/train/benchmarking/README.md, section 'MFU and HFU', and "
                  "collect_results.py; peak 989 TFLOP/s per H100, 312 per A100",
        "mfu": "per_token * tokens_per_s_per_gpu / peak_flops",
    },
}

PEAK_TFLOPS_USED = {"a100": 312.0, "h100": 989.0}

# ---- helpers ----------------------------------------------------------------------------------


def eq3_4pass(B, s, l, h, V):
    return 96.0 * B * s * l * h * h * (1 + s / (6.0 * h) + V / (16.0 * l * h))


def mcore_3pass(B, s, l, h, a, g, hd, f, swiglu, V):
    q = a * hd
    m = 1.5 if swiglu else 1.0
    return 12.0 * B * s * l * h * h * ((1 + g / a + s / h) * (q / h) + (f / h) * m
                                        + V / (2.0 * l * h))


def pad_vocab(v, tp):
    m = 128 * max(tp, 1)
    return (v + m - 1) // m * m


class Trainplan:
    """Parameter counts from the trainplan binary, cached by model."""

    def __init__(self, exe):
        self.exe = exe
        self.cache = {}

    def show(self, model, tp=1):
        key = (json.dumps(model, sort_keys=True), tp)
        if key in self.cache:
            return self.cache[key]
        if isinstance(model, str):
            arg, tmp = model, None
        else:
            fd, tmp = tempfile.mkstemp(suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump(model, f)
            arg = tmp
        try:
            out = subprocess.run([self.exe, "model", "show", arg, "--format", "json", "-t",
                                  str(tp)], check=True, capture_output=True, text=True).stdout
        finally:
            if tmp:
                os.unlink(tmp)
        j = json.loads(out)
        self.cache[key] = j
        return j


def half_unit(text):
    """Half a unit of the last digit of a published decimal figure ("1.7" -> 0.05)."""
    if "." in text:
        return 0.5 * 10.0 ** -len(text.split(".")[1])
    return 0.5


def run_base(r):
    return {
        "id": r["id"],
        "source_id": r["source_id"],
        "source_table": r["source_table"],
        "model_name": r["model_name"],
    }


def nodes_of(gpus, per_node):
    return gpus // per_node if gpus % per_node == 0 else None


def layout(**kw):
    keys = ["tp", "pp", "vpp", "cp", "ep", "dp", "micro_batch_size", "global_batch_size",
            "local_batch_size", "grad_accum_steps", "seq_length", "sequence_parallel",
            "recompute", "recompute_variant", "zero_stage", "sharding", "precision",
            "fp8_recipe", "pipeline_schedule", "pipeline_partition", "layers_per_stage",
            "features"]
    out = {k: kw.pop(k, None) for k in keys}
    if out["features"] is None:
        out["features"] = []
    assert not kw, kw
    return out


def check_layout(run):
    """Internal consistency: tp*pp*cp*dp = gpus; gbs = dp * mbs * ga where all are known."""
    L = run["layout"]
    if None in (L["tp"], L["pp"], L["cp"], L["dp"]):
        assert run["skip"], run["id"]
        return
    prod = L["tp"] * L["pp"] * L["cp"] * L["dp"]
    assert prod == run["gpus"], (run["id"], prod, run["gpus"])
    if L["micro_batch_size"] and L["grad_accum_steps"]:
        assert L["dp"] * L["micro_batch_size"] * L["grad_accum_steps"] == \
            L["global_batch_size"], run["id"]
    if L["layers_per_stage"] is not None:
        nl = run["_layers"]
        assert sum(L["layers_per_stage"]) == nl, (run["id"], L["layers_per_stage"], nl)


# ---- per source ---------------------------------------------------------------------------------

NARAYANAN_PRESETS = {  # hidden size -> preset of Narayanan et al. Table 1 (same l, h, a, V)
    2304: "gpt3-1.7b", 3072: "gpt3-3.6b", 4096: "gpt3-7.5b", 6144: "gpt3-18b",
    8192: "gpt3-39b", 10240: "gpt3-76b", 12288: "gpt3-145b", 16384: "gpt3-310b",
    20480: "gpt3-530b", 25600: "gpt3-1t",
}


def narayanan(r):
    out = run_base(r)
    assumed, derived = [], []
    h, l = r["hidden_size"], r["num_layers"]
    if r["source_table"].startswith("Table 2") and h == 12288:
        preset = "megatron-sp-175b"
        assumed.append("model: preset megatron-sp-175b, the "
                       "96 x 12288, 96 heads, V 51200, seq 2048 as Narayanan Table 2's GPT-3 175B")
    else:
        preset = NARAYANAN_PRESETS[h]
    out["model"] = preset
    reported = r["model_params_b_reported"]
    out["params_reported"] = {"value": reported * 1e9, "as_published": "%sB" % (
        ("%.1f" % reported)), "half_unit": half_unit("%.1f" % reported) * 1e9,
        "note": "P = 12 l h^2 (1 + 13/12h + (V + s)/12lh), Section 5.1 (no final LayerNorm)"}
    out["system"], out["gpu"], out["gpus"] = "selene", "a100-80gb", r["total_gpus"]
    out["nodes"] = nodes_of(r["total_gpus"], 8)
    zero3 = r["optimizer_sharding"].startswith("ZeRO-3")
    pp = r["pp"]
    if pp == 1:
        sched, vpp = "none", 1
    elif r["source_table"].startswith("Table 1"):
        sched, vpp = "interleaved-1f1b", None
    else:
        sched, vpp = None, None
    out["layout"] = layout(
        tp=r["tp"], pp=pp, vpp=vpp, cp=1, ep=1, dp=r["dp"],
        micro_batch_size=r["micro_batch_size"], global_batch_size=r["global_batch_size"],
        seq_length=r["seq_length"], sequence_parallel=False, recompute="full",
        recompute_variant="megatron-full" if not zero3 else "deepspeed-checkpointing",
        zero_stage=3 if zero3 else 0,
        sharding="deepspeed-zero3" if zero3 else "none", precision="fp16",
        pipeline_schedule=sched, pipeline_partition="uniform" if pp > 1 else None,
        layers_per_stage=[l // pp] * pp if pp > 1 else None,
        features=["scatter-gather-p2p"] if sched == "interleaved-1f1b" else [])
    if r["micro_batch_size"]:
        out["layout"]["grad_accum_steps"] = r["global_batch_size"] // (
            r["dp"] * r["micro_batch_size"])
        derived.append("grad_accum_steps (micro-batches per replica) = global_batch_size / "
                       "(dp * micro_batch_size)")
    assumed.append("precision: fp16 (the paper says 'mixed precision'; fp16 and bf16 have the "
                   "same A100 peak, 312 TFLOP/s)")
    assumed.append("recompute: full activation recomputation, as eq. (3) assumes and Section 5 "
                   "describes; the 1.7B-7.5B runs may not have needed it (the TFLOP/s count it "
                   "either way)")
    if zero3:
        assumed.append("ZeRO-3 runs: DeepSpeed activation checkpointing (a 175B/530B model does "
                       "not fit without it at these micro-batches)")
    if pp > 1 and vpp is None:
        if sched == "interleaved-1f1b":
            assumed.append("vpp: interleaved schedule (Section 5.1) with an unpublished number of "
                           "model chunks per GPU: search vpp >= 2 dividing layers/pp")
        else:
            assumed.append("Table 2 does not restate the schedule: search 1F1B and interleaved")
    if pp > 1:
        derived.append("layers_per_stage: Megatron's uniform split, layers / pp")
    V = r["vocab_size"]
    F = eq3_4pass(r["global_batch_size"], r["seq_length"], l, h, V)
    out["target"] = {
        "kind": "tflops_per_gpu", "value": r["tflops_per_gpu"],
        "flops_formula": "megatron_eq3_4pass", "vocab_for_flops": V,
        "flops_per_iteration": F,
        "iteration_time_s": F / (r["tflops_per_gpu"] * 1e12 * r["total_gpus"]),
        "iteration_time_origin": "derived: flops_per_iteration / (value * 1e12 * gpus); "
                                 "inherits the 3-digit rounding of the published TFLOP/s",
    }
    out["also_published"] = {"hfu_percent": r["hfu_percent"],
                             "aggregate_pflops": r["aggregate_pflops"]}
    return out, assumed, derived


# Megatron-Core README models: the table gives l, h, a and the GPU layout only. The names are
# parameter counts; GELU with FFN 4h, learned absolute positions, biases and an UNTIED output
# layer reproduce all nine (SwiGLU or a tied head do not): see validation_runs.md.
def megatron_readme(r):
    out = run_base(r)
    assumed, derived = [], []
    l, h, a = r["num_layers"], r["hidden_size"], r["num_attention_heads"]
    s, V = r["seq_length"], r["vocab_size"]
    # "GPT 7.1B"; the strong-scaling rows are "GPT-3 177B (131K vocab)".
    size = [w for w in r["model_name"].split() if w.endswith("B")][0].rstrip("B")
    out["model"] = {
        "_name_or_path": "megatron-core-readme-gpt-%sb" % size,
        "num_hidden_layers": l, "hidden_size": h, "num_attention_heads": a,
        "num_key_value_heads": a, "intermediate_size": 4 * h, "vocab_size": V,
        "max_position_embeddings": s, "hidden_act": "gelu",
        "position_embedding_type": "absolute", "tie_word_embeddings": False,
        "use_bias": True, "layer_norm_eps": 1e-5,
    }
    assumed.append("model: Megatron-LM defaults for what the table omits - FFN 4h, GELU, "
                   "learned absolute positions, biases, LayerNorm - and an untied output layer "
                   "(--untie-embeddings-and-output-weights); only this combination gives the "
                   "parameter counts the model names state")
    out["params_reported"] = {"value": float(size) * 1e9, "as_published": r["model_name"],
                              "half_unit": half_unit(size) * 1e9,
                              "note": "the model name; not a published exact count"}
    out["system"], out["gpu"], out["gpus"] = "megatron-core-h100", "h100-sxm", r["total_gpus"]
    out["nodes"] = nodes_of(r["total_gpus"], 8)
    if r["tp"] is None:
        out["layout"] = layout(ep=1, global_batch_size=r["global_batch_size"], seq_length=s,
                               precision="bf16")
        out["skip"] = ("missing essential field: the parallel layout (tp, pp, dp) of the "
                       "strong-scaling end points is not published, and only MFU (2 digits) is")
        out["target"] = {"kind": "mfu", "value": r["mfu_percent"] / 100.0,
                         "flops_formula": "megatron_core_3pass", "vocab_for_flops": V,
                         "peak_tflops_for_mfu": PEAK_TFLOPS_USED["h100"],
                         "flops_per_iteration": mcore_3pass(r["global_batch_size"], s, l, h, a,
                                                            a, h // a, 4 * h, False, V),
                         "iteration_time_s": None, "iteration_time_origin": None}
        out["also_published"] = {}
        return out, assumed, derived
    tp, pp = r["tp"], r["pp"]
    cp = r["total_gpus"] // (tp * pp * r["dp"])
    derived.append("cp = 1: tp * pp * dp equals the GPU count")
    sp = tp > 1
    derived.append("sequence_parallel = (tp > 1): Megatron requires --sequence-parallel for "
                   "--tp-comm-overlap")
    out["layout"] = layout(
        tp=tp, pp=pp, vpp=1 if pp == 1 else None, cp=cp, ep=1, dp=r["dp"],
        global_batch_size=r["global_batch_size"], seq_length=s, sequence_parallel=sp,
        recompute=None, zero_stage=1, sharding="megatron-distributed-optimizer",
        precision="bf16", pipeline_schedule="none" if pp == 1 else None,
        pipeline_partition="uniform" if pp > 1 else None,
        layers_per_stage=[l // pp] * pp if pp > 1 else None,
        features=["overlap-grad-reduce", "overlap-param-gather"]
        + (["tp-comm-overlap"] if tp > 1 else []) + (["pp-comm-overlap"] if pp > 1 else []))
    derived.append("zero_stage 1: the distributed optimizer, which --overlap-param-gather needs")
    assumed.append("micro_batch_size, recomputation, pipeline schedule and vpp are not "
                   "published: search them")
    F = mcore_3pass(r["global_batch_size"], s, l, h, a, a, h // a, 4 * h, False, V)
    out["target"] = {
        "kind": "tflops_per_gpu", "value": r["tflops_per_gpu"],
        "flops_formula": "megatron_core_3pass", "vocab_for_flops": V,
        "flops_per_iteration": F,
        "iteration_time_s": F / (r["tflops_per_gpu"] * 1e12 * r["total_gpus"]),
        "iteration_time_origin": "implied, not published: flops_per_iteration (under the "
                                 "assumed FFN 4h GELU architecture) / (value * 1e12 * gpus); "
                                 "compare TFLOP/s, not this",
    }
    out["also_published"] = {"mfu_percent": r["mfu_percent"],
                             "aggregate_pflops": r["aggregate_pflops"]}
    return out, assumed, derived


def deepspeed_stages(l, pp, method):
    """Transformer layers per pipeline stage, as Megatron-DeepSpeed partitioned them."""
    if method == "type:transformer|embedding":
        slots = l + 2  # the embedding and the tied output embedding take one slot each
        assert slots % pp == 0, (l, pp)
        per = slots // pp
        return [per - 1] + [per] * (pp - 2) + [per - 1] if pp > 1 else [l]
    if l % pp == 0:
        return [l // pp] * pp
    if (l, pp) == (78, 12):
        # The log's own account ('Re-do'): "78/12=6.5 - so the last stage has 1 block, while
        # the rest have 7".
        return [7] * 11 + [1]
    raise ValueError((l, pp))


def bigscience(r, prequel):
    out = run_base(r)
    assumed, derived = [], []
    l, h = r["num_layers"], r["hidden_size"]
    a = r["num_attention_heads"]
    if a is None:
        a = 64
        assumed.append("num_attention_heads = 64: the row has no NHEADS column; the log says "
                       "'all NHEADS=64 (above too)' two sections earlier and 64 is its default")
    if prequel:
        out["model"] = {
            "_name_or_path": "bigscience-tr11-prequel-%dx%d-%dh" % (l, h, a),
            "model_type": "bloom", "n_layer": l, "hidden_size": h, "n_head": a,
            "vocab_size": 250680, "layer_norm_epsilon": 1e-5,
        }
        assumed.append("model: the BLOOM architecture (ALiBi, embedding LayerNorm, GELU 4h, "
                       "biases, tied head) with the run's l, h and heads; vocabulary 250,680 "
                       "(the BLOOM tokenizer; the log says '250k')")
        size = str(r["model_params_b_reported"])
        out["params_reported"] = {
            "value": r["model_params_b_reported"] * 1e9, "as_published": size + "B",
            "half_unit": 0.5e9,
            "note": "the log's Size column, from l(12h^2 + 13h) + vh + sh + 2h with v about "
                    "250k (it counts a position table BLOOM does not have: s h)"}
    else:
        out["model"] = "bloom-176b"
        out["params_reported"] = {"value": 176247271424.0,
                                  "as_published": "176,247,271,424 (bigscience/bloom on HF)",
                                  "half_unit": 0.0,
                                  "note": "with the vocabulary padded to 250,880 (128 x TP 4)"}
    out["params_pad_multiple"] = 128 * r["tp"]
    out["system"], out["gpu"], out["gpus"] = "jean-zay-a100", "a100-80gb", r["total_gpus"]
    out["nodes"] = nodes_of(r["total_gpus"], 8)
    section = r["source_table"]
    if (not prequel) or "Rebalancing layers" in section or ("Re-do" in section and l == 106):
        method = "type:transformer|embedding"
    else:
        method = "type:transformer"
    lps = deepspeed_stages(l, r["pp"], method) if r["pp"] > 1 else None
    derived.append("layers_per_stage: DeepSpeed partition_method '%s'%s" % (
        method, " (the two embeddings take a stage slot each)" if "embedding" in method else
        " (embedding on the first stage, tied output embedding on the last)"))
    prec = r["precision"]
    out["layout"] = layout(
        tp=r["tp"], pp=r["pp"], vpp=1, cp=1, ep=1, dp=r["dp"],
        micro_batch_size=r["micro_batch_size"], global_batch_size=r["global_batch_size"],
        grad_accum_steps=r["global_batch_size"] // (r["dp"] * r["micro_batch_size"]),
        seq_length=r["seq_length"], sequence_parallel=False, recompute="full",
        recompute_variant="deepspeed-checkpointing", zero_stage=1,
        sharding="deepspeed-zero1" if prec == "fp16" else "deepspeed-bf16-optimizer-zero1",
        precision=prec, pipeline_schedule="1f1b" if r["pp"] > 1 else "none",
        pipeline_partition="deepspeed " + method if r["pp"] > 1 else None,
        layers_per_stage=lps, features=["cuda-launch-blocking"])
    derived.append("grad_accum_steps (micro-batches per pipeline) = global_batch_size / "
                   "(dp * micro_batch_size)")
    # CUDA_LAUNCH_BLOCKING=1: the training's own script sets it ('do not remove or the
    # training will hang', train/tr11-176B-ml/tr11-176B-ml.slurm); the prequel's 48-node
    # runs came after its 'dealing with JZ hanging' section, whose table has asynchronous
    # launches 'always hangs' at 320 GPUs (chronicles-prequel.md).
    (assumed if prequel else derived).append(
        "features: cuda-launch-blocking (CUDA_LAUNCH_BLOCKING=1, every kernel launch "
        "synchronous): " + ("the prequel's section 'dealing with JZ hanging' has asynchronous "
                            "launches hang always at 320 GPUs and these runs took 384; the "
                            "training script tr11-176B-ml.slurm keeps it set"
                            if prequel else
                            "tr11-176B-ml.slurm: 'export CUDA_LAUNCH_BLOCKING=1', 'do not "
                            "remove or the training will hang'"))
    if prec == "bf16" and prequel:
        assumed.append("BF16 optimizer: gradients accumulated in fp32 (log: 'more memory heavy "
                       "and a bit slower' than the fp16 runs)")
    V = 250880
    F = eq3_4pass(r["global_batch_size"], r["seq_length"], l, h, V)
    out["target"] = {
        "kind": "iteration_time_s", "value": r["iteration_time_s"],
        "iteration_time_s": r["iteration_time_s"],
        "iteration_time_origin": "measured (the training log's 'elapsed time per iteration')"
                                 + ("; a single iteration (the 2nd), a few % noise"
                                    if prequel else ""),
        "flops_formula": "megatron_eq3_4pass", "vocab_for_flops": V,
        "flops_per_iteration": F,
    }
    out["also_published"] = {"tflops_per_gpu": r["tflops_per_gpu"]}
    return out, assumed, derived


def foundry(r):
    out = run_base(r)
    assumed, derived = [], []
    size = r["model_name"].split("-")[1].lower()  # "MPT-70b" -> "70b"
    out["model"] = "llm-foundry-mpt-" + size
    gpu = {"H100": "h100-sxm", "A100-80GB": "a100-80gb", "A100-40GB": "a100-40gb"}
    key = "H100" if r["gpu_type"].startswith("H100") else r["gpu_type"]
    system = {"H100": "mosaicml-h100", "A100-80GB": "mosaicml-a100-80g",
              "A100-40GB": "mosaicml-a100-40g"}[key]
    out["system"], out["gpu"], out["gpus"] = system, gpu[key], r["total_gpus"]
    out["nodes"] = nodes_of(r["total_gpus"], 8)
    # NumParams published beside every row: exact, and what the MFU formula uses.
    num_params = {"1b": 1315950592, "3b": 2651837440, "7b": 6658859008,
                  "13b": 12853954560, "30b": 29975214080, "70b": 64862437376}[size]
    out["params_reported"] = {"value": float(num_params), "as_published": str(num_params),
                              "half_unit": 0.0,
                              "note": "NumParams column of the benchmarking README (seq 2048)"}
    ckpt = r["recompute"].startswith("full")
    zero3 = "FULL_SHARD" in r["optimizer_sharding"]
    pure = "PURE" in r["precision"]
    out["layout"] = layout(
        tp=1, pp=1, vpp=1, cp=1, ep=1, dp=r["dp"], micro_batch_size=r["micro_batch_size"],
        global_batch_size=r["global_batch_size"], grad_accum_steps=r["grad_accum_steps"],
        seq_length=r["seq_length"], sequence_parallel=False,
        recompute="full" if ckpt else "none",
        recompute_variant="fsdp-activation-checkpointing" if ckpt else None,
        zero_stage=3 if zero3 else 2,
        sharding="fsdp-full-shard" if zero3 else "fsdp-shard-grad-op", precision="bf16",
        pipeline_schedule="none",
        features=["flash-attention", "fsdp-limit-all-gathers",
                  "fsdp-mixed-precision-pure" if pure else "fsdp-mixed-precision-default"]
        + (["checkpoint-full-rerun"] if ckpt and pure else []))
    derived.append("features: FlashAttention (attn_impl flash/triton) and limit_all_gathers "
                   "from the mpt-*.yaml files; mixed-precision mode from the table's 'MP Mode'")
    if ckpt and pure:
        # The PURE rows are the tables of 2023-05/06, which the benchmark scripts ran on
        # mosaicml/pytorch:1.13.1 (submit_benchmarks.py --image default; setup.py
        # torch==1.13.1 at mosaicml/llm-foundry@1ef7b4d21); the amp_bf16 rows are the
        # sweeps of 2023-10 and 2024-01 on mosaicml/pytorch:2.1.0 (sweep.sh IMAGE at
        # @b2a43a147; setup.py torch>=2.1,<2.1.1 at @5e85bd62d).
        derived.append("features: checkpoint-full-rerun: a PURE-precision row of the 2023 "
                       "tables, run on PyTorch 1.13.1 (submit_benchmarks.py's image at "
                       "mosaicml/llm-foundry@1ef7b4d21), whose non-reentrant checkpoint "
                       "reruns the whole block (early stop came with PyTorch 2.1)")
    seq = r["seq_length"]
    tps_total = r["tokens_per_sec_total"]
    out["target"] = {
        "kind": "tokens_per_s_per_gpu", "value": r["tokens_per_sec_per_gpu"],
        "iteration_time_s": r["global_batch_size"] * seq / tps_total,
        "iteration_time_origin": "derived: global_batch_size * seq_length / published "
                                 "tokens/s (all GPUs); a 12-step run",
        "flops_formula": "mosaic_6n_attn",
        "peak_tflops_for_mfu": PEAK_TFLOPS_USED["h100" if key == "H100" else "a100"],
        "tokens_per_s_total": tps_total,
    }
    out["also_published"] = {"mfu_percent": r["mfu_percent"], "hfu_percent": r["hfu_percent"],
                             "tflops_per_gpu": r["tflops_per_gpu"]}
    if key == "H100":
        assumed.append("system: the README does not say which H100 or network; H100 SXM "
                       "(its MFU uses the SXM peak, 989 TFLOP/s) with 8 x 400 Gb/s assumed")
    return out, assumed, derived


def megatron_readme_cuda_graphs(out, assumed):
    """The Megatron-LM README's 2024 runs do not say whether CUDA graphs ran: none assumed
    (Megatron-Core's default, --cuda-graph-impl none)."""
    assumed.append("CUDA graphs: none (the README does not say; Megatron-Core's default)")


TITAN_PRESETS = {8: "llama3.1-8b", 70: "llama3.1-70b", 405: "llama3.1-405b"}
TITAN_PARAMS = {8: 8030261248, 70: 70553706496, 405: 405853388800}


def torchtitan_stage_layers(l, total_stages):
    """torchtitan's generate_split_points (parallelisms/pipeline_llama.py, late 2024): the
    first stage gets l // stages, middle stages one more while a remainder lasts."""
    base, extra = divmod(l, total_stages)
    sizes, used = [], 0
    for i in range(total_stages - 1):
        n = base if i == 0 else (base + 1 if extra > 0 else base)
        if i > 0 and extra > 0:
            extra -= 1
        sizes.append(n)
        used += n
    sizes.append(l - used)
    return sizes


def torchtitan(r):
    out = run_base(r)
    assumed, derived = [], []
    b = int(r["model_name"].split()[-1].rstrip("B"))
    out["model"] = TITAN_PRESETS[b]
    out["params_reported"] = {"value": float(TITAN_PARAMS[b]),
                              "as_published": "%d (the HF checkpoint)" % TITAN_PARAMS[b],
                              "half_unit": 0.0, "note": "Meta Llama 3.1 on HF"}
    h200 = r["gpu_type"] == "H200"
    out["system"] = "dgx-h200" if h200 else "grand-teton-h100"
    out["gpu"] = "h200" if h200 else "h100-96gb"
    out["gpus"] = r["total_gpus"]
    out["nodes"] = nodes_of(r["total_gpus"], 8)
    if h200:
        assumed.append("system: dgx-h200 - its numbers are those the source gives for the "
                       "WhiteFiber hosts (8 H200 on NVLink, 400 Gb/s ConnectX-7 per GPU)")
    table = r["source_table"]
    local_bs = None
    for tok in ("local bs ", "local batch size "):
        if tok in table:
            local_bs = int(table.split(tok)[1].split(",")[0].split()[0])
    if local_bs is None and h200:
        local_bs = 2  # --training.local_batch_size=2 in the source's command
    assert local_bs, r["id"]
    tp, pp, cp, dp = r["tp"], r["pp"], r["cp"], r["dp"]
    l = {8: 32, 70: 80, 405: 126}[b]
    prec = r["precision"]
    fp8 = prec.startswith("fp8")
    recipe = None
    if fp8:
        recipe = "rowwise" if "rowwise" in prec else "tensorwise"
        if "tensorwise" not in prec and "rowwise" not in prec:
            assumed.append("fp8 recipe: tensorwise (torchao Float8's default, dynamic scaling)")
    rc = r["recompute"]
    selective = rc.startswith("selective")
    feats = []
    fw = r["framework"]
    if "torch.compile" in fw:
        feats.append("torch.compile")
    if "AsyncTP" in fw:
        feats.append("async-tp")
    if "float8 all-gather" in fw:
        feats.append("fp8-fsdp-all-gather")
    if not h200:
        # PyTorch of December 2024 (1963fc83a1c3): RMSNorm eager is ATen's
        # composite, kernel by kernel, before the fused
        # aten::_fused_rms_norm of pytorch/pytorch#153666 (2025)
        feats.append("composite-rmsnorm")
        derived.append("composite-rmsnorm: the runs' PyTorch of December 2024 (1963fc83a1c3) "
                       "runs RMSNorm eager as ATen's composite code, kernel by kernel (before "
                       "the fused aten::_fused_rms_norm of pytorch/pytorch#153666); no effect "
                       "where the blocks are compiled")
    sched = "none"
    vpp, mbs, lps, ga = 1, local_bs, None, 1
    if pp > 1:
        interleaved = r["pipeline_schedule"].startswith("Interleaved")
        sched = "interleaved-1f1b" if interleaved else "1f1b"
        vpp = 2 if interleaved else 1
        stages = pp * vpp
        # torchtitan at the benchmarks' commit (9dec370, 2024-12-26): with
        # pipeline_parallel_microbatches unset, as many micro-batches as PP
        # ranks, for every schedule; pytorch/torchtitan PR 781 (2025-01-07)
        # made it PP x stages per rank, after these runs.
        mbs = local_bs // pp
        ga = pp
        lps = torchtitan_stage_layers(l, stages)
        derived.append("pipeline: torchtitan defaults of the time (not printed in the table) - "
                       "%s stage(s) per rank, as many micro-batches as PP ranks (micro-batch = "
                       "local batch %d / %d; the default until pytorch/torchtitan PR 781, "
                       "2025-01-07, after these runs), layers split by generate_split_points" % (
                           vpp, local_bs, pp))
    else:
        derived.append("micro_batch_size = the local batch (no gradient accumulation)")
    out["layout"] = layout(
        tp=tp, pp=pp, vpp=vpp, cp=cp, ep=1, dp=dp, micro_batch_size=mbs,
        global_batch_size=r["global_batch_size"], local_batch_size=local_bs,
        grad_accum_steps=ga, seq_length=r["seq_length"],
        sequence_parallel=r["sequence_parallel"],
        recompute="selective" if selective else "full",
        recompute_variant="torchtitan-op-sac" if selective else "torchtitan-full-ac",
        zero_stage=3, sharding="fsdp2" if pp == 1 else "fsdp2-no-reshard-after-forward",
        precision="fp8" if fp8 else "bf16", fp8_recipe=recipe, pipeline_schedule=sched,
        pipeline_partition="torchtitan generate_split_points" if pp > 1 else None,
        layers_per_stage=lps, features=feats)
    if selective:
        derived.append("recompute_variant torchtitan-op-sac: selective_ac_option 'op' (the "
                       "train_configs default) saves the outputs of every compute op except "
                       "every second matmul; it recomputes half the linear-layer matmuls and the "
                       "cheap ops, never the attention core (unlike Korthikanti's selective)")
    if pp > 1:
        assumed.append("FSDP with PP: torchtitan's 'default' reshard_after_forward policy keeps "
                       "the parameters gathered between forward and backward when PP is on")
    out["target"] = {
        "kind": "tokens_per_s_per_gpu", "value": r["tokens_per_sec_per_gpu"],
        "iteration_time_s": r["global_batch_size"] * r["seq_length"]
        / (r["tokens_per_sec_per_gpu"] * r["total_gpus"]),
        "iteration_time_origin": "derived: global_batch_size * seq_length / (value * gpus); "
                                 "tokens/s read at one iteration (90th or 100th)",
        "flops_formula": None,
    }
    out["also_published"] = {}
    return out, assumed, derived


# ---- MLPerf Training (mlperf_runs.json) ---------------------------------------------------------
#
# One source for all rounds (the validation leaves whole sources out): every entry of
# mlperf_runs.json becomes a run, usable or skipped with the reason. The layout is the one
# make_mlperf_runs.py read from the submission's config; the target is the median time per
# training step over the submission's result files.

MLPERF_SOURCE = "mlperf_training"

# The benchmarks' models. GPT-3: the reference's Megatron GPT-3 175B (96 x 12288, 96 heads,
# seq 2048, learned positions, biases, tied head, GPT-2 BPE vocabulary 50257:
# mlcommons/training retired_benchmarks/gpt3/megatron-lm, run_gpt3.sh and README.md), padded
# as Megatron pads it (128 x TP). Llama 3.1 405B: the paper's architecture with the Mixtral
# 8x22B tokenizer's vocabulary of 32,000 (mlcommons/training
# large_language_model_pretraining/nemo/README.md, "Model details"), padded to 128 x TP by
# NeMo 2's get_vocab_size. Llama 3.1 8B: the released model and tokenizer
# (small_llm_pretraining/nemo/README.md: "Llama 3.1 8B tokenizer").
MLPERF_405B = {
    "_name_or_path": "mlperf-llama3.1-405b-mixtral-vocab",
    "model_type": "llama", "num_hidden_layers": 126, "hidden_size": 16384,
    "num_attention_heads": 128, "num_key_value_heads": 8, "intermediate_size": 53248,
    "vocab_size": 32000, "max_position_embeddings": 8192, "rms_norm_eps": 1e-5,
    "hidden_act": "silu", "tie_word_embeddings": False,
}
# benchmark -> (model, layers, name, reported count: value, as published, half unit, note)
MLPERF_MODELS = {
    "gpt3": ("gpt3-175b", 96, "GPT-3 175B (MLPerf gpt3)",
             (175e9, "175B (the benchmark's name)", 0.5e9,
              "GPT-3 175B as the reference defines it; vocabulary 50257 padded to 128 x TP")),
    "llama31_405b": (MLPERF_405B, 126, "Llama 3.1 405B, 32k vocabulary (MLPerf llama31_405b)",
                     (405e9, "405B (the benchmark's name)", 0.5e9,
                      "the name counts the released model's 128,256-token vocabulary; the "
                      "benchmark's 32,000-token one has 3.15B fewer embedding and output "
                      "parameters")),
    "llama31_8b": ("llama3.1-8b", 32, "Llama 3.1 8B (MLPerf llama31_8b)",
                   (8030261248.0, "8030261248 (the HF checkpoint)", 0.0,
                    "Meta Llama 3.1 8B on HF; vocabulary 128,256 padded to 128 x TP")),
    "llama2_70b_lora": ("llama2-70b", 80, "Llama 2 70B LoRA (MLPerf llama2_70b_lora)",
                        (68976648192.0, "68976648192 (the HF checkpoint)", 0.0,
                         "Meta Llama 2 70B on HF; the LoRA adapters are not counted")),
}

# hwdb system by the GPU of the submission's system description; None = the GPU is not in
# hwdb. H100 SXM: NVIDIA's Eos-dfw runs on eos-dfw, the rest on eos (alias dgx-h100, the DGX
# H100 node) unless larger than its 576 nodes.
MLPERF_GPU = (  # (substring of accelerator_model_name, system, gpu), first match wins
    ("GB300", "gb300-nvl72", "gb300"), ("B300", "dgx-b300", "b300"),
    ("GB200", "gb200-nvl72", "gb200"),
    ("B200", "dgx-b200", "b200"), ("H200-NVL", None, None), ("H200", "dgx-h200", "h200"),
    ("H100", "eos", "h100-sxm"), ("L40S", None, None), ("A100", None, None),
)


def hwdb_system_shape(name):
    """(GPUs per node, max nodes or 0) of a built-in hwdb system, read from its file."""
    with open(os.path.join(HERE, "..", "..", "hwdb", "data", "systems", name + ".json")) as f:
        d = json.load(f)
    return d["gpus_per_node"]["value"], (d.get("max_nodes") or {}).get("value", 0)


def mlperf_system(e):
    sj = e["system_json"]
    accel = sj.get("accelerator_model_name") or ""
    nodes = e["layout"]["nodes"] if e["layout"] else None
    for key, system, gpu in MLPERF_GPU:
        if key in accel.upper():
            break
    else:
        return None, None, "GPU not in hwdb: %s" % accel, None
    if system is None:
        return None, None, "GPU not in hwdb: %s" % accel, None
    note = None
    if system == "eos":
        if e["submitter"] == "NVIDIA" and e["system"].startswith("eos-dfw"):
            system = "eos-dfw"
        elif nodes and nodes > 576:
            system = "eos-dfw"
    gpn, max_nodes = hwdb_system_shape(system)
    node_gpus = int(sj.get("accelerators_per_node") or 0)
    if node_gpus != gpn or (max_nodes and nodes and nodes > max_nodes):
        return None, None, ("no hwdb system for %d %s per node%s" % (
            node_gpus, accel, " at %d nodes" % nodes if nodes else "")), None
    if e["submitter"] != "NVIDIA" or (system == "eos" and not e["system"].startswith("eos")):
        note = ("system: %s's machine mapped to hwdb %s by its GPU; its description says "
                "GPUs interconnect '%s', network '%s'" % (
                    e["submitter"], system, sj.get("accelerator_interconnect") or "(not given)",
                    sj.get("host_networking") or "(not given)"))
    return system, gpu, None, note


def mlperf_layers_per_stage(l, pp, vpp, split):
    """Transformer layers per model chunk in pipeline order (chunk v of stage p is entry
    v * pp + p). Megatron-Core's account_for_embedding_in_pipeline_split /
    account_for_loss_in_pipeline_split count the embedding (loss) as one layer of the first
    (last) chunk: megatron/core/transformer/transformer_layer.py, get_transformer_layer_offset
    (NVIDIA/Megatron-LM, 2025)."""
    emb = 1 if split["embedding_counts_as_layer"] else 0
    loss = 1 if split["loss_counts_as_layer"] else 0
    chunks = pp * vpp
    total = l + emb + loss
    if total % chunks:
        return None
    out = [total // chunks] * chunks
    out[0] -= emb
    out[-1] -= loss
    return out


def ran_grad_bf16():
    """Ids of ran_runs.json's MLPerf runs whose pretrain.py reduces gradients in bf16, as
    make_ran_runs.py read it at the recorded commit (mlperf_grad_dtype): mlperf_runs.json
    reads pretrain.py only for the runs make_mlperf_runs.py kept, and the NVFP4 and Blackwell
    Ultra runs were not among them when it was written."""
    path = os.path.join(HERE, "ran_runs.json")
    if not os.path.exists(path):
        return set()
    d = json.load(open(path))
    return {r["id"] for r in d["runs"]
            if (r.get("layout") or {}).get("grad_reduce_fp32") is False}


RAN_GRAD_BF16 = None


def mlperf_run(e):
    out = {"id": e["id"], "source_id": MLPERF_SOURCE,
           "source_table": "MLPerf Training %s, %s, results/%s/%s" % (
               e["round"], e["submitter"], e["system"], e["benchmark"]),
           "round": e["round"]}
    assumed, derived = list(e["assumed"]), list(e["derived"])
    bench = e["benchmark"]
    model, nlayers, name, rep = MLPERF_MODELS[bench]
    out["model_name"] = name
    out["model"] = model
    L = e["layout"]
    system, gpu, why_hw, sys_note = mlperf_system(e)
    out["system"], out["gpu"] = system, gpu
    out["gpus"] = L["gpus"] if L else None
    out["nodes"] = L["nodes"] if L else None
    if sys_note:
        assumed.append(sys_note)
    skip = None
    if e.get("duplicate_of"):
        skip = "duplicate of %s (the same result logs filed again)" % e["duplicate_of"]
    elif bench == "llama2_70b_lora":
        skip = ("LoRA fine-tuning is not modelled: frozen base weights have no weight gradient "
                "or optimizer state")
    elif why_hw:
        skip = why_hw
    elif L is None:
        skip = "layout cannot be read: %s" % e["provenance"]["config_choice"]
    elif L["precision"] is None:
        skip = "layout cannot be read: the candidate configs disagree on the precision"
    elif None in (L["tp"], L["pp"], L["cp"], L["dp"], L["vpp"], L["micro_batch_size"],
                  L["global_batch_size"]):
        skip = "layout cannot be read: the candidate configs disagree on the parallel layout"
    elif not e["throughput"]["median_iteration_time_s"]:
        skip = "no usable result file"
    # A system's GPU count must be one the hwdb system can hold (eos: 576 nodes).
    if not out["gpus"]:
        out["gpus"] = int(e["system_json"]["number_of_nodes"] or 0) * int(
            e["system_json"]["accelerators_per_node"] or 0) or None
        out["nodes"] = int(e["system_json"]["number_of_nodes"] or 0) or None
    tp = L["tp"] if L and L["tp"] else 1
    out["params_pad_multiple"] = 128 * tp
    out["params_reported"] = {"value": rep[0], "as_published": rep[1], "half_unit": rep[2],
                              "note": rep[3]}
    if L:
        pp, vpp = L["pp"], L["vpp"]
        fp8 = L.get("fp8") or {}
        feats = []
        if L["tp_comm_overlap"]:
            feats.append("tp-comm-overlap")
        opt = L.get("optimizer") or {}
        if opt.get("overlap_grad_reduce"):
            feats.append("overlap-grad-reduce")
        if opt.get("overlap_param_gather"):
            feats.append("overlap-param-gather")
        if pp and pp > 1 and L.get("overlap_p2p_comm"):
            feats.append("pp-comm-overlap")
        cg = L.get("cuda_graphs") or {}
        if any(cg.values()):
            feats.append("cuda-graphs")
            # which graphs (the submission's FULL_CUDA_GRAPH, MCORE_CUDA_GRAPH: Megatron-Core's
            # CudaGraphManager, LAYER_CUDA_GRAPH: Transformer Engine's per-layer graphed
            # callables), each layer whole (CUDA_GRAPH_SCOPE unset in these configs)
            feats.append("cuda-graph-impl=" + ("full_iteration" if cg.get("full_iteration")
                                               else "local" if cg.get("mcore")
                                               else "transformer_engine"))
        if L["precision"] == "fp8" and fp8.get("fp8_params"):
            feats.append("fp8-param-gather")
        if L["precision"] in ("fp8", "fp4") and fp8.get("fp8_attention"):
            feats.append("fp8-attention")
        raw = e.get("raw") or {}
        if bench.startswith("llama31"):
            # NeMo 2.0's MLPerf Llama 3.1 implementations (conf/custom.yaml
            # of every llama31_8b and llama31_405b submission of v5.0 and
            # v5.1, mlcommons/training_results_v5.0 and _v5.1; their bf16
            # gradients, grad_reduce_in_fp32=False, come per run from its
            # pretrain.py: grad_reduce_fp32 below): custom.yaml's
            # cross_entropy_loss_fusion
            # defaults to True (CROSS_ENTROPY_LOSS_FUSION, set by no
            # config), the native implementation unless CE_FUSION_IMPL=te
            # (Transformer Engine's: feature te-cross-entropy, its Triton
            # loss of before TE v2.18, which writes the gradient into the
            # logits in place; the v5.1 NeMo containers are of 2025, TE
            # v2.18 of 2026-07);
            # defer_embedding_wgrad_compute and wgrad_deferral_limit are
            # the config's DEFER_EMBEDDING_WGRAD_COMPUTE and
            # WGRAD_DEFERRAL_LIMIT.
            ce_impl = str(raw.get("CE_FUSION_IMPL") or "").strip("'\"")
            if ce_impl != "te":
                feats.append("cross-entropy-loss-fusion")
                derived.append("cross-entropy-loss-fusion: conf/custom.yaml "
                               "cross_entropy_loss_fusion defaults to True, native "
                               "implementation")
            else:
                feats.append("te-cross-entropy")
                derived.append("te-cross-entropy: conf/custom.yaml cross_entropy_loss_fusion "
                               "defaults to True and CE_FUSION_IMPL=te selects Transformer "
                               "Engine's fused loss; its gradient written into the 16-bit "
                               "logits in place, as TE before v2.18 does (the submission's "
                               "container is of 2025; NVIDIA/TransformerEngine@01bbe3eea, "
                               "2026-07-09, made it an fp32 buffer)")
            if str(raw.get("DEFER_EMBEDDING_WGRAD_COMPUTE")).lower() in ("true", "1"):
                feats.append("defer-embedding-wgrad-compute")
                lim = raw.get("WGRAD_DEFERRAL_LIMIT")
                if lim and str(lim).isdigit() and int(lim) > 0:
                    feats.append("wgrad-deferral-limit=%d" % int(lim))
        gran = (L.get("recompute") or {}).get("granularity")
        if opt.get("distributed") and opt.get("overlap_grad_reduce") is None:
            assumed.append("overlap-grad-reduce / overlap-param-gather not listed: the "
                           "submission's scripts and yaml do not say (NeMo's defaults of the "
                           "time overlapped both)")
        split = L.get("pipeline_split") or {"embedding_counts_as_layer": False,
                                            "loss_counts_as_layer": False}
        lps = None
        if pp and vpp and pp > 1:
            lps = mlperf_layers_per_stage(nlayers, pp, vpp, split)
            derived.append("layers_per_stage: %s, per model chunk in pipeline order" % (
                "Megatron-Core's split counting the embedding and the loss as a layer each "
                "(ASYM_PP_EMBED / ASYM_PP_LOSS)" if any(split.values())
                else "Megatron's uniform split, layers / (pp x vpp)"))
        dist = opt.get("distributed")
        # gradients in bf16 where the submission's pretrain.py says so (its derived note
        # comes with the entry from make_mlperf_runs.py)
        grad32 = opt.get("grad_reduce_in_fp32")
        global RAN_GRAD_BF16
        if RAN_GRAD_BF16 is None:
            RAN_GRAD_BF16 = ran_grad_bf16()
        if grad32 is None and e["id"] in RAN_GRAD_BF16:
            grad32 = False
            derived.append("gradients in bf16: the submission's pretrain.py builds "
                           "DistributedDataParallelConfig with grad_reduce_in_fp32=False, as "
                           "make_ran_runs.py read it (ran_runs.json, the same run)")
        out["layout"] = layout(
            tp=L["tp"], pp=pp, vpp=vpp, cp=L["cp"], ep=1, dp=L["dp"],
            micro_batch_size=L["micro_batch_size"], global_batch_size=L["global_batch_size"],
            grad_accum_steps=L["grad_accum_steps"], seq_length=L["seq_length"],
            sequence_parallel=L["sequence_parallel"], recompute=gran,
            recompute_variant=None if gran in (None, "none") else "megatron-" + gran,
            zero_stage=1 if dist else (0 if dist is False else None),
            sharding=("apex-distributed-fused-adam" if bench == "gpt3"
                      else "megatron-distributed-optimizer") if dist else
            ("none" if dist is False else None),
            precision=L["precision"] if L["precision"] in ("fp4", "fp8", "bf16") else None,
            fp8_recipe=fp8.get("recipe") if L["precision"] == "fp8" else None,
            pipeline_schedule=None if pp is None or vpp is None else (
                "interleaved-1f1b" if vpp > 1 else ("1f1b" if pp > 1 else "none")),
            pipeline_partition=None if not pp or pp == 1 else (
                "megatron account_for_embedding_and_loss" if any(split.values())
                else "uniform"),
            layers_per_stage=lps, features=feats)
        if grad32 is False:
            out["layout"]["grad_reduce_fp32"] = False
        derived.append("dp = GPUs / (tp x pp x cp); global batch = MINIBS x dp (the logged "
                       "global_batch_size); grad_accum_steps = MINIBS / micro batch; "
                       "seq_length from the log's max_sequence_length")
        if bench == "gpt3" and dist:
            derived.append("zero_stage 1: NeMo's distributed_fused_adam (Apex "
                           "DistributedFusedAdam) shards the optimizer state and "
                           "reduce-scatters the gradients over data-parallel ranks")
        if L["precision"] == "fp4":
            derived.append("fp4: the config sets FP4=True (recipe %s): Transformer Engine's "
                           "NVFP4BlockScaling in every transformer layer's linear layers, "
                           "estimated as --precision nvfp4; its fp8 settings (%s, %s) "
                           "for what is not NVFP4%s" % (
                               fp8.get("fp4_recipe"), fp8.get("format"), fp8.get("recipe"),
                               "; fp8 attention (FP8_DPA) is not modelled: attention timed "
                               "in 16 bits" if fp8.get("fp8_attention") else ""))
        if L["precision"] == "fp8":
            derived.append("fp8: Transformer Engine FP8 GEMMs in every transformer layer (%s, "
                           "recipe %s, amax history %s, %s)" % (
                               fp8.get("format"), fp8.get("recipe"), fp8.get("amax_history"),
                               fp8.get("amax_algo")))
    else:
        out["layout"] = layout(global_batch_size=e["log"]["global_batch_size"],
                               seq_length=e["layout"] and e["layout"]["seq_length"])
    thr = e["throughput"]
    it = thr["median_iteration_time_s"]
    out["target"] = {
        "kind": "iteration_time_s", "value": it, "iteration_time_s": it,
        "iteration_time_origin": "measured: median over %d result files of each file's "
                                 "training seconds (evaluation excluded) / steps trained; "
                                 "min %s, max %s" % (
                                     thr["n_files"], thr["min_iteration_time_s"],
                                     thr["max_iteration_time_s"]),
        "flops_formula": None,
        "n_files": thr["n_files"], "min_s": thr["min_iteration_time_s"],
        "max_s": thr["max_iteration_time_s"],
    }
    out["also_published"] = {k: thr.get(k) for k in (
        "step_timing_median_s", "median_sequences_per_s", "median_tokens_per_s")}
    out["skip"] = skip
    out["_notes"] = "; ".join(e["notes"]) or None
    out["_assumed"], out["_derived"] = assumed, derived
    return out


# ---- Runs added by this project (published_runs_added.json) -------------------------------------
#
# Measured step times of torchtitan's Llama 3.1 8B under FSDP2 alone, published outside the
# torchtitan repository: Crusoe Cloud's results table (GB200 NVL72, HGX B200, H200, H100; issue
# 29: a second source of Blackwell step times beside MLPerf) and torchao's end-to-end float8
# tables (H100; its B200 table is skipped, the GPUs were power limited). The figures, with the
# line each was read from, are in published_runs_added.json; here they become runs as
# torchtitan() makes the torchtitan team's own.

CRUSOE_SOURCE = "crusoe_torchtitan"
TORCHAO_SOURCE = "torchao_float8_training"

# GPU label of the source -> (hwdb system, gpu, why that system)
ADDED_SYSTEMS = {
    (CRUSOE_SOURCE, "GB200"): ("gb200-nvl72", "gb200",
                               "system: gb200-nvl72 - Crusoe's GB200 nodes are NVL72 compute "
                               "trays of 4 GPUs, the job's trays in one IMEX partition (the "
                               "README), so every GPU of the run shares one NVLink domain"),
    (CRUSOE_SOURCE, "B200"): ("dgx-b200", "b200",
                              "system: dgx-b200 - Crusoe's B200.8x hosts (8 B200 on NVSwitch); "
                              "the network the README names only as 'the same InfiniBand "
                              "Network', taken as hwdb's 8 x 400 Gb/s"),
    (CRUSOE_SOURCE, "H200"): ("dgx-h200", "h200",
                              "system: dgx-h200 - Crusoe's H200 hosts (8 H200 SXM on NVSwitch); "
                              "InfiniBand per the README, taken as hwdb's 8 x 400 Gb/s"),
    (CRUSOE_SOURCE, "H100"): ("eos", "h100-sxm",
                              "system: eos (a DGX H100) for Crusoe's HGX H100 80GB SXM hosts: "
                              "80 GB (the log's 66.38 GiB is 83.83 % of 79.2 GiB) and SXM "
                              "(torchtitan's MFU divides by 989 TFLOP/s, its SXM figure, which "
                              "it takes only for a device name without 'NVL' or 'PCIe'); "
                              "InfiniBand per the README, taken as eos' 8 x 400 Gb/s"),
    (TORCHAO_SOURCE, "H100"): ("grand-teton-h100", "h100-96gb",
                               "system: grand-teton-h100 (H100 96GB at 500 W) - the table says "
                               "only '8xH100'; its bf16 peak, 47.65 GiB, appears in "
                               "pytorch/torchtitan PR #808 (2025-01-27, the same team) as "
                               "'memory: 47.65GiB(50.16%)', a 95.0 GiB device "
                               "(bench/data/memory_runs.json, torchao_float8_docs)"),
    (TORCHAO_SOURCE, "B200"): ("dgx-b200", "b200", None),
}


def added_run(r):
    """A run of published_runs_added.json: torchtitan's Llama 3.1 8B, FSDP2 over every GPU, one
    micro-batch of the local batch, per-op selective checkpointing."""
    sid = r["source_id"]
    out = run_base(r)
    assumed, derived = [], []
    out["model"] = "llama3.1-8b"
    out["params_reported"] = {"value": float(TITAN_PARAMS[8]),
                              "as_published": "%d (the HF checkpoint)" % TITAN_PARAMS[8],
                              "half_unit": 0.0, "note": "Meta Llama 3.1 on HF"}
    system, gpu, why = ADDED_SYSTEMS[(sid, r["gpu_type"])]
    out["system"], out["gpu"] = system, gpu
    out["gpus"] = r["total_gpus"]
    shape = hwdb_system_shape(system)
    assert r["gpus_per_node"] == shape[0], r["id"]
    out["nodes"] = nodes_of(r["total_gpus"], shape[0])
    if why:
        assumed.append(why)
    gpus, mbs = r["total_gpus"], r["micro_batch_size"]
    assert (r["tp"], r["pp"], r["cp"], r["dp"]) == (1, 1, 1, gpus), r["id"]
    assert r["global_batch_size"] == mbs * gpus, r["id"]
    prec = r["precision"]
    fp8 = prec.startswith("fp8")
    recipe = ("rowwise" if "rowwise" in prec else "tensorwise") if fp8 else None
    fw = r["framework"]
    feats = []
    compiled = "torch.compile" in fw
    if compiled:
        feats.append("torch.compile")
    if "float8 all-gather" in fw:
        feats.append("fp8-fsdp-all-gather")
    if sid == CRUSOE_SOURCE:
        assert "eager" in fw and not compiled, r["id"]
        # torchtitan v0.2.2 torchtitan/models/attention.py ScaledDotProductAttentionWrapper:
        # sdpa_kernel([CUDNN_ATTENTION, FLASH_ATTENTION, MATH], set_priority=True)
        feats.append("attention-backend=fused")
        feats.append("gqa-native")
        derived.append("attention: cuDNN's fused attention - torchtitan v0.2.2 runs SDPA under "
                       "sdpa_kernel([CUDNN_ATTENTION, FLASH_ATTENTION, MATH], "
                       "set_priority=True) (torchtitan/models/attention.py, "
                       "ScaledDotProductAttentionWrapper) with enable_gqa, keys and values "
                       "not repeated (torchtitan/models/llama3/model/model.py)")
        assumed.append("the PyTorch nightly's cuDNN backend takes these calls (causal, GQA "
                       "8 of 32 heads, head dim 128, bf16); where it did not, SDPA fell back "
                       "to FlashAttention-2")
        derived.append("eager: [compile] enable=false in the toml; the blocks, the loss and "
                       "the optimizer run op by op")
        assumed.append("layout: torchtitan/llama3_8b-gb200.toml@e82e695c8a29 (local_batch_size "
                       "5, seq_len 8192, data_parallel_shard_degree -1, tensor/pipeline/context "
                       "parallel 1, compile off, activation_checkpoint selective/op, float8 "
                       "off), the config the README has the reader copy; the other GPUs' rows "
                       "change only the 'Batch size' column")
        assumed.append("torchtitan v0.2.2: the README of 2026-04-01 says 'We have validated "
                       "v0.2.2'; the GB200 rows were first published on 2026-01-28, when the "
                       "README had the reader clone torchtitan's main branch")
        derived.append("tokens/s: torchtitan's tps at step 100, per device, over the 10 steps "
                       "since the previous log line (metrics.log_freq 10; "
                       "torchtitan/components/metrics.py at v0.2.2)")
    else:
        assert compiled, r["id"]
        derived.append("layout: the table's text (8 GPUs, batch size 1, sequence length 8192, "
                       "torch.compile, FSDP2, per-op SAC) over torchtitan's llama3_8b.toml of "
                       "the time (data_parallel_shard_degree -1)")
        derived.append("tokens/s: the median of torchtitan's per-device tps over the run's "
                       "log lines (pytorch/ao benchmarks/float8/training/"
                       "parse_torchtitan_logs.py)")
    if fp8 and recipe == "tensorwise":
        derived.append("fp8: torchao Float8 tensorwise (dynamic) scaling, the table's recipe")
    derived.append("dp %d = %d node(s) x %d GPUs, FSDP2 only; micro_batch_size = the local "
                   "batch %d, no gradient accumulation" % (gpus, gpus // r["gpus_per_node"],
                                                           r["gpus_per_node"], mbs))
    derived.append("recompute_variant torchtitan-op-sac: selective_ac_option 'op' saves the "
                   "outputs of every compute op except every second matmul")
    out["layout"] = layout(
        tp=1, pp=1, vpp=1, cp=1, ep=1, dp=gpus, micro_batch_size=mbs,
        global_batch_size=r["global_batch_size"], local_batch_size=mbs, grad_accum_steps=1,
        seq_length=r["seq_length"], sequence_parallel=False, recompute="selective",
        recompute_variant="torchtitan-op-sac", zero_stage=3, sharding="fsdp2",
        precision="fp8" if fp8 else "bf16", fp8_recipe=recipe, pipeline_schedule="none",
        features=feats)
    tps = r["tokens_per_sec_per_gpu"]
    out["target"] = {
        "kind": "tokens_per_s_per_gpu", "value": tps,
        "iteration_time_s": r["global_batch_size"] * r["seq_length"] / (tps * gpus),
        "iteration_time_origin": "derived: global_batch_size * seq_length / (value * gpus)",
        "flops_formula": None,
    }
    out["also_published"] = {}
    if r["tflops_per_gpu"] is not None:
        # torchtitan's own count (components/metrics.py, models/utils.py get_dense_model_
        # nparams_and_flops): 6 x non-embedding parameters + 12 x layers x dim x seq per token.
        per_tok = 6.0 * (TITAN_PARAMS[8] - 128256 * 4096) + 12.0 * 32 * 4096 * r["seq_length"]
        assert abs(per_tok * tps / 1e12 - r["tflops_per_gpu"]) <= 0.5e-4 * r["tflops_per_gpu"] \
            + per_tok * 0.5 / 1e12, r["id"]
        out["also_published"] = {"tflops_per_gpu": r["tflops_per_gpu"],
                                 "mfu_percent": r["mfu_percent"],
                                 "tflops_definition": r["tflops_definition"]}
    out["quote"] = r["quote"]
    out["skip"] = r.get("skip_reason")
    return out, assumed, derived


# ---- validation_runs.md ------------------------------------------------------------------------

SOURCES = [  # source_id, what the source measured, target compared, FLOP convention
    ("narayanan2021_sc21",
     "TFLOP/s per GPU, end to end (Tables 1 and 2); no iteration time",
     "tflops_per_gpu", "`megatron_eq3_4pass`, V = 51200: recompute pass counted (4 passes)"),
    ("megatron_lm_readme_h100_2024",
     "TFLOP/s per GPU and MFU (weak-scaling table); MFU only for the strong-scaling end points",
     "tflops_per_gpu", "`megatron_core_3pass`, V = 131072: model FLOPs, recompute not counted"),
    ("bigscience_bloom_tr11",
     "iteration time from the training log (also its TFLOP/s)",
     "iteration_time_s", "`megatron_eq3_4pass`, V = 250880 (padded): 4 passes"),
    ("bigscience_tr11_prequel",
     "iteration time of the 2nd iteration (also its TFLOP/s)",
     "iteration_time_s", "`megatron_eq3_4pass`, V = 250880 (padded): 4 passes"),
    ("llm_foundry_mpt_benchmarks",
     "tokens/s over a 12-step run; MFU, HFU",
     "tokens_per_s_per_gpu", "`mosaic_6n_attn` (MFU 6N + 12lds, HFU 8N + 16lds, N = all "
     "parameters)"),
    ("torchtitan_benchmarks",
     "tokens/s per GPU at one iteration (90th or 100th); no FLOPs, no MFU",
     "tokens_per_s_per_gpu", "none needed"),
    ("mlperf_training",
     "time per training step from the MLLOG result logs (median over each submission's 3 or "
     "10 files; evaluation excluded)",
     "iteration_time_s", "none needed"),
    (CRUSOE_SOURCE,
     "tokens/s per GPU of one torchtitan log line (step 100, over steps 91-100); also "
     "torchtitan's TFLOP/s and MFU",
     "tokens_per_s_per_gpu", "none needed (torchtitan's own 6N + 12lds, checked by the script)"),
    (TORCHAO_SOURCE,
     "median tokens/s per GPU over a 100-step run's log lines",
     "tokens_per_s_per_gpu", "none needed"),
]

MD_HEAD = """# Validation runs: what is in validation_runs.json

Written by `make_validation_runs.py` from `published_runs.json`, `mlperf_runs.json` and
`published_runs_added.json` (do not edit by hand; change the script). 226 published runs from 6
sources, the MLPerf Training results of NVIDIA's NeMo/Megatron stack as one more source
(`mlperf_training`, all rounds v3.0-v5.1; its own page of provenance is `mlperf_runs.json`), and
the runs this project added in `published_runs_added.json` (two torchtitan sources outside the
torchtitan repository: `crusoe_torchtitan` on GB200, B200, H200 and H100, `torchao_float8_training`
on H100 and, skipped, B200; each run quotes the line it was read from), normalized so that trainplan's
estimator can predict each one: a model trainplan loads, a system of its hardware database,
the layout, the target
with the FLOP formula that reproduces it, and a skip reason where a run cannot be estimated.
`tests/test_space.c` (test_validation_runs) loads every run and checks what this page claims:
exact parameter counts, the FLOP formulas, the systems and GPUs, the layout arithmetic, the
counts below.

## Per source

"""

MD_FIELDS = """
The estimator should report error per source, never pooled (the prequel sweep and llm-foundry are
large single-cluster groups). For the Megatron-Core README, compare TFLOP/s (its iteration time is
only implied, under an assumed architecture); for Narayanan et al., TFLOP/s is all that is
published (the iteration time in the file is derived from it).

## Fields of a run

| field | meaning |
|---|---|
| `model` | a preset name (`trainplan model list`) or an inline HuggingFace-style config object, read by `space_model_from_hf_json` exactly as `trainplan model show FILE.json` reads a file |
| `system`, `gpu`, `gpus`, `nodes` | an hwdb system (`trainplan hw show NAME`), its GPU, the GPU count of the run |
| `layout.tp`, `pp`, `cp`, `dp`, `ep` | parallel degrees; `tp * pp * cp * dp = gpus` |
| `layout.vpp` | model chunks per GPU (1 = not interleaved); `null` with `pipeline_schedule` `interleaved-1f1b` = search vpp >= 2 dividing layers/pp |
| `layout.micro_batch_size`, `grad_accum_steps` | sequences per micro-batch; micro-batches per replica per step (`dp * mbs * ga = global_batch_size`) |
| `layout.local_batch_size` | torchtitan's per-replica batch, as published |
| `layout.sequence_parallel` | Megatron-style sequence parallelism of the norms/dropout with TP |
| `layout.recompute` | `none`, `selective`, `full`; `recompute_variant` says which: `megatron-full` / `deepspeed-checkpointing` / `fsdp-activation-checkpointing` / `torchtitan-full-ac` recompute every layer's forward; `torchtitan-op-sac` (torchtitan's per-op selective AC) saves every compute op's output except every second matmul, so it recomputes about half the linear-layer GEMMs and the cheap ops, never the attention core - not Korthikanti's selective |
| `layout.zero_stage`, `sharding` | 0-3 and the implementation: `megatron-distributed-optimizer` (1), `deepspeed-zero1`, `deepspeed-bf16-optimizer-zero1` (1), `deepspeed-zero3`, `fsdp-shard-grad-op` (2), `fsdp-full-shard` (3), `fsdp2` (3, reshard after forward), `fsdp2-no-reshard-after-forward` (3 at rest, parameters kept gathered from forward to backward: torchtitan with PP), `apex-distributed-fused-adam` (1: NeMo 1.x's distributed_fused_adam, MLPerf GPT-3) |
| `layout.precision`, `fp8_recipe` | `fp16`, `bf16`, `fp8` (linear layers in FP8, the rest bf16) with `tensorwise` or `rowwise` scaling (torchtitan), or Transformer Engine's `delayed` (per-tensor scales from an amax history, NeMo's default through MLPerf v5.0) or `tensorwise` (TE current scaling, MLPerf v5.1) |
| `layout.pipeline_schedule` | `none`, `1f1b` (Megatron, DeepSpeed's TrainSchedule, torchtitan Schedule1F1B), `interleaved-1f1b`; `null` = not published, search |
| `layout.pipeline_partition`, `layers_per_stage` | how layers were split: `uniform` (Megatron, layers / pp), `deepspeed type:transformer` (embedding on the first stage, tied output embedding on the last), `deepspeed type:transformer|embedding` (the two embeddings take a layer slot each), `torchtitan generate_split_points`, `megatron account_for_embedding_and_loss` (Megatron-Core with the embedding and the loss counted as a layer of the first and last model chunk: MLPerf Llama 3.1 405B); `layers_per_stage` lists transformer layers per model chunk in pipeline order (pp x vpp entries; pp entries while vpp is unknown) |
| `layout.features` | `overlap-grad-reduce`, `overlap-param-gather`, `tp-comm-overlap`, `pp-comm-overlap` (Megatron-Core), `scatter-gather-p2p` (Narayanan 5.1), `flash-attention`, `fsdp-limit-all-gathers`, `fsdp-mixed-precision-pure` / `-default` (llm-foundry MP mode), `torch.compile`, `async-tp`, `fp8-fsdp-all-gather`, `cuda-graphs` (NeMo/Megatron-Core CUDA graphs of the layers or the step), `fp8-param-gather` (parameters kept and all-gathered in FP8), `fp8-attention` (TE FP8 dot-product attention), `composite-rmsnorm` (PyTorch eager's RMSNorm as ATen's composite code, before pytorch/pytorch#153666), `grad-reduce-in-bf16` (16-bit gradient buffers), `cross-entropy-loss-fusion` (Megatron-Core's native fused loss), `te-cross-entropy` (Transformer Engine's fused loss, in place: TE before v2.18), `defer-embedding-wgrad-compute` and `wgrad-deferral-limit=N` (the LM head's weight gradient deferred), `cuda-launch-blocking` (CUDA_LAUNCH_BLOCKING=1: every kernel launch waits for the kernel, BigScience on Jean Zay), `checkpoint-full-rerun` (PyTorch's activation checkpoint reruns the whole block: PyTorch before 2.1, llm-foundry's 2023 PURE-precision tables) |
| `round` | MLPerf runs only: the MLPerf Training round (v3.0-v5.1) |
| `target` | `kind` (`iteration_time_s`, `tflops_per_gpu`, `tokens_per_s_per_gpu`, `mfu`), `value` as published, `iteration_time_s` with `iteration_time_origin` (measured, or how it was derived), and for FLOP-rate targets `flops_formula`, `vocab_for_flops`, `flops_per_iteration` |
| `params` | our exact count (`ours`, vocabulary padded to `vocab_pad_multiple`), the source's figure and whether they agree within its rounding |
| `skip` | `null`, or why the run cannot be estimated |
| `assumed`, `derived` | every value not printed by the source: assumed (a judgement, verify first) or derived (computed from published values or documented defaults) |
| `published_notes` | the notes of `published_runs.json`, verbatim |
| `quote` | runs of `published_runs_added.json` only: the source's line or table row the figures were read from, verbatim |

`null` anywhere in `layout` means the source does not say: the estimator searches it, as
`estimate` does, and says so.

## FLOP formulas

"""


MD_TAIL = """
Why the differences:

- Narayanan et al. compute their sizes with P = 12lh^2(1 + 13/12h + (V + s)/12lh) (Section 5.1),
  which leaves out the final LayerNorm (2h); all ten Table 1 sizes and the two Table 2 sizes agree
  with ours to the table's one decimal (1.652B is "1.7B": -2.8% but within the rounding).
- The Megatron-Core README publishes names, not counts. With Megatron-LM's defaults (FFN 4h,
  GELU, learned positions, biases) and an untied output layer, eight of the nine names are our
  counts rounded; "GPT 1.7B" is 1.754B (+3.2%), which rounds to 1.8. No combination fits all nine:
  dropping the position table makes 1.7B round right (1.745B) but 32B, 119B and 462B wrong
  (31.48B, 118.46B, 461.47B); a tied head is 0.3-15% too small everywhere. SwiGLU with FFN 8h/3
  gives the same counts (within 0.01%) and the same FLOPs, so neither the counts nor the TFLOP/s
  target can tell it from GELU 4h; only the GEMM shapes (3 of h x 8h/3 against 2 of h x 4h) differ.
- The BigScience prequel log's Size column is l(12h^2 + 13h) + vh + sh + 2h with v about 250k: it
  counts a position table (s h) that ALiBi does not have and leaves out the embedding LayerNorm;
  ours are 0.01-0.02% below what that formula gives, and within the whole-billion rounding of
  the column (the differences in the table are to the rounded figures). The vocabulary is padded
  to 128 x TP as Megatron-DeepSpeed does (250,880 for TP 2-8, 250,752 for the one TP 1 row). BLOOM-176B itself matches the
  released checkpoint to the parameter (176,247,271,424, vocabulary padded to 250,880 = 128 x TP 4).
- llm-foundry's benchmark models (`llm-foundry-mpt-*`) match the README's NumParams exactly. They
  are llm-foundry's yaml models, not the released MPT-7B/30B checkpoints (those use ALiBi, no
  biases and no LayerNorm biases, vocabulary 50432, and 64 heads for 30B).
- torchtitan's Llama 3.1 models match the released checkpoints exactly.
"""

MD_DOUBTS = """
## Doubts about the data

Checked by the test where the source publishes two figures of one run: BigScience's logged
TFLOP/s equals eq. (3) over the logged time (V = 250,880) to 0.01% on 98 of its 100 rows (row
070 is 0.1% off, the GBS-16 row's 8.04 has three digits);
llm-foundry's MFU equals (6N + 12lds) x tokens/s / peak to 0.05 points on all 61 rows; the
Megatron-Core README's MFU column is TFLOP/s / 989 to its two digits. What remains doubtful:

1. **bigscience_tr11_prequel** - single-iteration snapshots (the 2nd iteration; the log warns of
   fluctuation), so expect a few % noise per row. Rows dated 02-25 and later ran after a PCIe/NUMA
   fix that raised all TFLOP/s by 1-5%: do not fit one constant across the dates. Four rows are the
   same log line quoted in two sections (skipped as duplicates). Rows 047 and 048 have the same
   configuration (181B, DP 8, TP 4, PP 12, MBS 2) but 110.48 s and 113.54 s and different memory
   (44 and 38 GB): some setting that the table does not record differs. Row 070 logs 156.46 TFLOP/s
   where its time gives 156.31 (0.1%). Row 055 has no NHEADS (64 assumed, the log's default).
   The 78-layer PP 12 rows are unbalanced (the log: 7 layers on 11 stages, 1 on the last), which an
   estimator assuming layers/pp will get wrong. The vocabulary is "250k" in the log; eq. (3) over
   the logged times reproduces the logged TFLOP/s only with V close to 250,880, so the BLOOM
   tokenizer is assumed. The "ZeRO_STAGE 0/1" table of the log (not in the data) has its Sec/it and
   TFLOPs columns swapped.
2. **llm_foundry_mpt_benchmarks** - 12-step runs. Tokens/s per GPU is printed as an integer (0.1%
   for 70B; the file uses the all-GPU figure). A100 40GB MPT-1b on 32 GPUs does 15,555 tokens/s per
   GPU against 18,647-19,085 on 16, 64 and 128 GPUs (-18%, MFU 45% against 54-56%): probably a slow
   node, an outlier for any model. A100 80GB MFU reaches 64% (MPT-7b, 8 GPUs) and HFU 71% (MPT-70b):
   high, but the arithmetic is consistent. The H100 tables name no network and no H100 variant (the
   SXM peak is used for MFU); `mosaicml-h100` assumes 8 x 400 Gb/s.
3. **narayanan2021_sc21** - TFLOP/s are printed with 3 digits (+-0.4%). Recomputation is assumed on
   for every run, as eq. (3) counts it; the 1.7B-7.5B runs may not have used it, in which case their
   real FLOP rate was lower than printed (the printed number would still count 4 passes). Table 2
   gives only the model-parallel size (TP 8 from Section 4.1). The 175B ZeRO-3 rows at 768 and 1536
   GPUs have the same iteration time (66.7 s): twice the GPUs bought nothing, plausible for ZeRO-3
   at micro-batch 1 but worth knowing. Table 1's interleaving depth and micro-batch are not
   published.
4. **megatron_lm_readme_h100_2024** - FFN size, activation, micro-batch, recomputation, schedule and
   the machine are not published; see the parameter section for what the names imply. The two
   strong-scaling end points publish no layout and only a 2-digit MFU (skipped).
5. **torchtitan_benchmarks** - tokens/s are read at one iteration. The H100s are 96 GB HBM2e parts
   capped at 500 W whose real peak is unknown (between H100 NVL and SXM, per torchtitan). Float8
   rowwise with vanilla TP is slower than bf16 (a known torchtitan issue, #1207, not a data error).
   The micro-batch count, stages per rank and layer split of the PP runs come from torchtitan's
   defaults of the time, not from the tables; the sequence length (8192) of most tables is the
   TOML default, not printed; global batch sizes of Table 6 and the AsyncTP runs are derived
   (local batch x FSDP degree).
6. **bigscience_bloom_tr11** - the GBS 16 row (batch ramp-up) has one micro-batch per pipeline: it
   measures the pipeline's fill and drain, not its steady state.
7. **mlperf_training** - the target is the training time between evaluations over the steps
   trained, so it includes data loading and NeMo's per-step overhead but no evaluation; the
   per-step timer NeMo logs (where it does: not in v4.x GPT-3) is 0-4% shorter (12% for Cisco's
   hpf_n16 8B), both are in mlperf_runs.json; files of one submission agree within 1-6%. A
   result names a system, not a config: the config was found by the system's README (NVIDIA from
   v4.0 on) or by matching node count and the logged global batch among the submission's
   scripts (mlperf_runs.json says which, per run). v3.1 eos_n64 ran a global batch of 2048 where
   the only 64-node config says 3072 (MINIBS 192): the batch is the log's, the rest the config's
   (assumed). Oracle's v4.1 GPT-3 scripts come without NeMo's yaml, so sequence parallelism,
   recomputation and the optimizer's overlap are not known (null or not listed). The configs
   set FP8 GEMMs with Transformer Engine's delayed scaling (tensorwise current scaling in v5.1),
   FP8 parameter all-gathers, CUDA graphs and userbuffer TP overlap; the estimator models FP8
   GEMMs and TP overlap, not the rest. The 405B model uses the benchmark's 32,000-token
   vocabulary (reference README); the Mixtral 8x22B tokenizer files it points to may hold 32,768
   tokens (about 0.03% of the parameters either way). Partners' machines are mapped by GPU: the
   H100 ones to eos or eos-dfw (Azure ND H100 v5, 1344 nodes, to eos-dfw for its size), though
   Oracle's network is RoCE and Verda's B200 cluster says "100GbE InfiniBand"; each run's
   `assumed` list quotes its system description. Result logs filed twice (Supermicro's
   power-measurement copies, Nebius' v5.0 405B results refiled in v5.1) are skipped as
   duplicates.
8. **crusoe_torchtitan** - one log line per run: tokens/s over steps 91-100 of a 100-step job.
   The config the README names turns torchtitan's profiler on with profile_freq 100, so steps
   97-99 run under the profiler's warm-up and step 100 is traced (torch.profiler with CPU and
   CUDA activities, record_shapes): 4 of the 10 timed steps carry the profiler's host overhead,
   which a GPU-bound eager step at local batch 4-5 mostly hides (not measured; it would make the
   published step slower than the estimate's). The H100 rows disagree with each other beyond
   what the layout explains: 16 GPUs on driver 580 / CUDA 13.0 reach 8,714 tokens/s, 32 and 128
   GPUs on driver 570 / CUDA 12.8 reach 7,582 and 7,169 (-13 % and -18 %); the software (PyTorch
   nightly for cu128 or cu130, its cuDNN and cuBLAS) differs with the driver, and the estimate
   cannot tell the two apart. The B200 row of 16 GPUs prints 'memory: 1cl61.51GiB' (a typo in
   the memory field; tokens/s and TFLOP/s are intact and agree). GB200 and B200 rows are the same
   software at the same local batch, 5: GB200 is 0.5-4.7 % faster per GPU (1,200 W against
   1,000 W; the rack's NVLink against 8-GPU hosts). The network of the B200, H200 and H100 hosts
   is not given beyond 'InfiniBand'; FSDP2's all-gathers and reduce-scatters of an 8B model at
   these batches are mostly hidden behind the compute either way.
9. **torchao_float8_training** - the H100 is not named beyond '8xH100': the team's other
   documents of the time ran the H100 96GB parts at 500 W (grand-teton-h100), as
   torchtitan_benchmarks did. The B200 table is skipped: its text says '8x power limited B200
   GPUs' without the limit; hwdb's b200 is the 1,000 W part, and the GPU family's factor (the
   sustained clock under the power limit, mostly) would be fitted to a part it does not describe.
   Its rowwise rows carry `fp8rw` in their id (validate_runs waives torchao's rowwise recipe, as
   for torchtitan_benchmarks).
"""


def write_md(doc, path):
    runs = doc["runs"]
    out = [MD_HEAD]
    out.append("| source | runs | usable | skipped (why) | measured | compared | FLOP convention "
               "| systems | models |\n|---|---:|---:|---|---|---|---|---|---|\n")
    for sid, measured, kind, conv in SOURCES:
        rs = [r for r in runs if r["source_id"] == sid]
        reasons = {}
        for r in rs:
            if r["skip"]:
                why = r["skip"].split(":")[0].split(" (")[0]
                if why.startswith("duplicate of"):
                    why = "duplicate row"
                reasons[why] = reasons.get(why, 0) + 1
        skipped = "; ".join("%d %s" % (n, w) for w, n in sorted(reasons.items())) or "none"
        systems = sorted({r["system"] for r in rs if r["system"]})
        models = sorted({r["model"] if isinstance(r["model"], str) else "inline" for r in rs})
        out.append("| `%s` | %d | %d | %s | %s | `%s` | %s | %s | %s |\n" % (
            sid, len(rs), sum(1 for r in rs if not r["skip"]), skipped, measured, kind, conv,
            ", ".join("`%s`" % x for x in systems),
            ", ".join("`%s`" % x if x != "inline" else "inline configs" for x in models)))
    n_use = sum(1 for r in runs if not r["skip"])
    out.append("| all | %d | %d | | | | | | |\n" % (len(runs), n_use))
    out.append("\nNo run is skipped for an MoE model (every run is dense). Only MLPerf runs are "
               "skipped for a GPU missing from hwdb (B300, GB300; the published sources' A100 "
               "40/80GB, H100 SXM, the torchtitan H100 96GB part and H200 are all there). "
               "Skipped runs:\n\n")
    for r in runs:
        if r["skip"]:
            out.append("- `%s`: %s\n" % (r["id"], r["skip"]))
    out.append(MD_FIELDS)
    for fid, f in doc["flop_formulas"].items():
        formula = f.get("per_iteration") or f.get("per_token")
        out.append("- `%s`: %s %s. %s; %s; %s. Source: %s. trainplan: %s.\n" % (
            fid, "per iteration" if "per_iteration" in f else "per token", formula,
            f["symbols"][0].upper() + f["symbols"][1:], f["passes"], f["attention"],
            f["source"], f["space"]))
    # parameter checks
    out.append("\n## Parameter counts against the published ones\n\n"
               "`ours` is trainplan's exact count of the model as loaded (vocabulary padded as "
               "the run padded it where the source counts it so). The test fails if a count "
               "changes, or if one moves outside the source's rounding without being listed "
               "here.\n\n| source | model | ours | published | difference |\n"
               "|---|---|---:|---|---:|\n")
    seen = set()
    for r in runs:
        name = r["model"] if isinstance(r["model"], str) else r["model"]["_name_or_path"]
        key = (r["source_id"], name)
        if key in seen:
            continue
        seen.add(key)
        p = r["params"]
        flag = "" if p["within_rounding"] else " **outside rounding**"
        out.append("| %s | `%s` | %s | %s | %+.3f%%%s |\n" % (
            r["source_id"], name, format(p["ours"], ","), p["reported_as"],
            100 * p["rel_diff"], flag))
    out.append(MD_TAIL)
    # assumptions per source
    out.append("\n## Assumptions and derivations, per source (number of runs)\n")
    for sid, _, _, _ in SOURCES:
        out.append("\n### %s\n\n" % sid)
        counts = {}
        for r in runs:
            if r["source_id"] != sid:
                continue
            for kind in ("assumed", "derived"):
                for a in r[kind]:
                    counts[(kind, a)] = counts.get((kind, a), 0) + 1
        for (kind, a), n in sorted(counts.items()):
            out.append("- %s (%d): %s\n" % (kind, n, a))
    out.append(MD_DOUBTS)
    with open(path, "w") as f:
        f.write("".join(out))


# ---- main ---------------------------------------------------------------------------------------


# Dropout the run's software applied, by source (probabilities on the
# attention probabilities and on the hidden states). None of the sources
# prints it; these are the frameworks' defaults where the run's flags are
# known not to override them, or stated as assumed.
MEGATRON_DEFAULT_DROPOUT = ("Megatron-LM's defaults (megatron/arguments.py: --attention-dropout 0.1, "
                            "--hidden-dropout 0.1)")
SOURCE_DROPOUT = {
    "narayanan2021_sc21": (0.1, 0.1, "assumed", MEGATRON_DEFAULT_DROPOUT
                           + "; the paper names no dropout flags"),
    "megatron_lm_readme_h100_2024": (0.1, 0.1, "assumed", MEGATRON_DEFAULT_DROPOUT
                                     + "; the README does not publish its scripts"),
    "bigscience_bloom_tr11": (0.1, 0.1, "derived", MEGATRON_DEFAULT_DROPOUT
                              + ", inherited by Megatron-DeepSpeed: the tr11-176B-ml.slurm "
                              "script (bigscience-workshop/bigscience, train/tr11-176B-ml) "
                              "passes no dropout flags"),
    "bigscience_tr11_prequel": (0.1, 0.1, "assumed", MEGATRON_DEFAULT_DROPOUT
                                + ", as in the tr11-176B-ml.slurm script the prequel "
                                "experiments led to (no dropout flags)"),
    "llm_foundry_mpt_benchmarks": (0.0, 0.0, "assumed", "llm-foundry's MPT configs: attn_pdrop 0, "
                                   "resid_pdrop 0"),
    "torchtitan_benchmarks": (0.0, 0.0, "derived", "torchtitan's Llama has no dropout"),
    CRUSOE_SOURCE: (0.0, 0.0, "derived", "torchtitan's Llama has no dropout"),
    TORCHAO_SOURCE: (0.0, 0.0, "derived", "torchtitan's Llama has no dropout"),
    "mlperf_training": (0.0, 0.0, "derived", "GPT-3: hidden_dropout 0.0 and attention_dropout "
                        "0.0 in the submissions' megatron_gpt_config_custom.yaml / custom.yaml "
                        "(as the reference's run_gpt3.sh sets them); Llama: NeMo's Llama "
                        "configs set no dropout (as recalled, not re-checked)"),
}


def add_params(out, tp_exe):
    """Our exact parameter count of the run's model (padded as the run padded it), beside the
    source's figure; returns trainplan's `model show` object."""
    pad = out.pop("params_pad_multiple", 1)
    j = tp_exe.show(out["model"])
    jp = tp_exe.show(out["model"], pad // 128) if pad > 1 else j
    ours = jp["params_total_padded"] if pad > 1 else j["params_total"]
    rep = out.pop("params_reported")
    diff = ours - rep["value"]
    out["params"] = {
        "ours": ours, "vocab_pad_multiple": pad,
        "reported": rep["value"], "reported_as": rep["as_published"],
        "reported_half_unit": rep["half_unit"], "reported_note": rep["note"],
        "rel_diff": diff / rep["value"],
        "within_rounding": abs(diff) <= rep["half_unit"] + 1e-9 * rep["value"],
    }
    return j


def finish_run(out, sid, assumed, derived, notes):
    """The steps every run ends with, whatever its source: the dropout its
    software applied (said in assumed or derived), the notes as published,
    the layout arithmetic checked. Returns out."""
    pa, ph, how, why = SOURCE_DROPOUT[sid]
    out["dropout"] = {"attention": pa, "hidden": ph}
    (assumed if how == "assumed" else derived).append(
        "dropout attention %g, hidden %g: %s" % (pa, ph, why))
    out["assumed"] = assumed
    out["derived"] = derived
    out["published_notes"] = notes
    check_layout(out)
    del out["_layers"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trainplan", required=True, help="the trainplan binary")
    ap.add_argument("--input", default=os.path.join(HERE, "published_runs.json"))
    ap.add_argument("--mlperf", default=os.path.join(HERE, "mlperf_runs.json"),
                    help="written by make_mlperf_runs.py")
    ap.add_argument("--added", default=os.path.join(HERE, "published_runs_added.json"),
                    help="runs this project added, in published_runs.json's fields")
    ap.add_argument("--output", default=os.path.join(HERE, "validation_runs.json"))
    args = ap.parse_args()
    tp_exe = Trainplan(args.trainplan)
    raw = open(args.input, "rb").read()
    data = json.loads(raw)

    runs, seen = [], {}
    for r in data["runs"]:
        sid = r["source_id"]
        if sid == "narayanan2021_sc21":
            out, assumed, derived = narayanan(r)
        elif sid == "megatron_lm_readme_h100_2024":
            out, assumed, derived = megatron_readme(r)
            megatron_readme_cuda_graphs(out, assumed)
        elif sid in ("bigscience_bloom_tr11", "bigscience_tr11_prequel"):
            out, assumed, derived = bigscience(r, sid == "bigscience_tr11_prequel")
        elif sid == "llm_foundry_mpt_benchmarks":
            out, assumed, derived = foundry(r)
        elif sid == "torchtitan_benchmarks":
            out, assumed, derived = torchtitan(r)
        else:
            sys.exit("unknown source_id %s" % sid)
        out.setdefault("skip", None)
        if r["moe"]:
            out["skip"] = "MoE model (dense only for now)"

        # Our parameter count, through trainplan itself.
        j = add_params(out, tp_exe)
        arch = j["architecture"]
        out["_layers"] = arch["num_layers"]
        # The model is the run's: every architecture field the source gives.
        for ours_key, pub_key in (("num_layers", "num_layers"), ("hidden_size", "hidden_size"),
                                  ("num_attention_heads", "num_attention_heads"),
                                  ("num_kv_heads", "num_kv_heads"),
                                  ("ffn_hidden_size", "ffn_hidden_size"),
                                  ("vocab_size", "vocab_size")):
            if r[pub_key] is not None:
                assert arch[ours_key] == r[pub_key], (r["id"], ours_key, arch[ours_key],
                                                      r[pub_key])
        act = {"gelu": "gelu", "swiglu": "swiglu"}.get(r["activation"])
        assert act is None or arch["activation"] == act, r["id"]

        # Same log row quoted twice (the prequel copies rows between sections).
        key = json.dumps([out["model"], out["layout"], out["target"].get("value"),
                          out.get("also_published")], sort_keys=True)
        if key in seen and out["skip"] is None:
            out["skip"] = "duplicate of %s (the same log row quoted in two sections)" % seen[key]
        seen.setdefault(key, out["id"])

        runs.append(finish_run(out, sid, assumed, derived, r["notes"]))

    # MLPerf Training, one source for all its rounds, from mlperf_runs.json.
    mraw = open(args.mlperf, "rb").read()
    for e in json.loads(mraw)["runs"]:
        out = mlperf_run(e)
        j = add_params(out, tp_exe)
        arch = j["architecture"]
        assert arch["num_layers"] == MLPERF_MODELS[e["benchmark"]][1], out["id"]
        out["_layers"] = arch["num_layers"]
        assumed, derived = out.pop("_assumed"), out.pop("_derived")
        notes = out.pop("_notes")
        runs.append(finish_run(out, MLPERF_SOURCE, assumed, derived, notes))

    # The runs this project added (published_runs_added.json), after MLPerf's.
    araw = open(args.added, "rb").read()
    for r in json.loads(araw)["runs"]:
        out, assumed, derived = added_run(r)
        j = add_params(out, tp_exe)
        arch = j["architecture"]
        out["_layers"] = arch["num_layers"]
        for key in ("num_layers", "hidden_size", "num_attention_heads", "num_kv_heads",
                    "ffn_hidden_size", "vocab_size"):
            assert arch[key] == r[key], (r["id"], key)
        runs.append(finish_run(out, r["source_id"], assumed, derived, r["notes"]))

    doc = {
        "schema": "trainplan-validation-runs/1",
        "description": "The runs of published_runs.json normalized for trainplan's estimator "
                       "(see README.md and validation_runs.md beside this file). null = not "
                       "published: the estimator searches it. Written by "
                       "make_validation_runs.py; do not edit by hand.",
        "generated_from": {"file": "published_runs.json",
                           "sha256": hashlib.sha256(raw).hexdigest()},
        "generated_from_mlperf": {"file": "mlperf_runs.json",
                                  "sha256": hashlib.sha256(mraw).hexdigest()},
        "generated_from_added": {"file": "published_runs_added.json",
                                 "sha256": hashlib.sha256(araw).hexdigest()},
        "flop_formulas": FLOP_FORMULAS,
        "runs": runs,
    }
    with open(args.output, "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    write_md(doc, os.path.join(os.path.dirname(args.output), "validation_runs.md"))
    print("%d runs, %d usable -> %s" % (len(runs), sum(1 for r in runs if not r["skip"]),
                                       args.output))


if __name__ == "__main__":
    main()
