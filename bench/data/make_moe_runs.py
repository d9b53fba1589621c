#!/usr/bin/env python3
"""make_moe_runs.py - writes moe_validation_runs.json from moe_runs.json.

moe_runs.json holds measured training runs of mixture-of-experts models, each as its source
printed it (null = not printed). moe_validation_runs.json is the same runs normalized for
trainplan's estimator, in the schema of validation_runs.json (make_validation_runs.py) plus
the expert-parallel layout fields: a model trainplan loads (an inline HuggingFace-style
config), an hwdb system, the layout (ep, etp, moe_dispatcher, moe_imbalance beside tp, pp,
cp, dp, ...; null = not published, to be searched), the target with the FLOP formula that
reproduces it, and a skip reason where a run cannot be estimated yet. Every value not
printed by the source is listed in the run's "assumed" (a judgement) or "derived" (computed
from printed values or documented defaults). moe_runs.md describes the sources.

The MoE runs live in their own file, apart from validation_runs.json: tests/test_space.c
checks every run of that file against trainplan's dense FLOP counts, and bench/validate_runs
fits its kernel-efficiency constants on it; it reads this file as held-out sources, scored
at the estimator's own constants, never fitted.

It estimates nothing and never changes a published number: targets are copied; iteration
times are derived from them with the formula named beside them.

Usage: python3 make_moe_runs.py --trainplan ../../build/trainplan
  (the binary gives our parameter counts: `model show --format json`.)
Writes moe_validation_runs.json and moe_runs.md next to this script. Deterministic: same
inputs, same bytes.
Python 3 standard library only.
"""
import argparse
import hashlib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_validation_runs import Trainplan, half_unit, pad_vocab  # noqa: E402

# ---- FLOP formulas -------------------------------------------------------------------------
# Megatron-LM's num_floating_point_operations (megatron/training/training.py), the count the
# Megatron-Core MoE sources print as TFLOPS and MFU. It changed on 2025-03-06
# (NVIDIA/Megatron-LM 8873b55d6aad08f0f535174746d2836df3dfa93b, "Fixes in number of
# floating-point operation estimates for MoE and attention layer"): before, attention over
# the full sequence and every layer an MoE layer; after, causal attention (s/2), dense and
# MoE layers apart, MTP and MLA counted.
FLOP_FORMULAS = {
    "megatron_moe_2024": {
        "per_iteration": "12 * B * s * l * h^2 * ((1 + g/a + s/h) * (q/h) + (fe/h) * k * m "
                         "+ (fs/h) * m + V/(2*l*h))",
        "symbols": "B global batch (sequences), s sequence length, l layers, h hidden size, a "
                   "query heads, g KV heads, q = a * head_dim, fe routed expert FFN size "
                   "(--moe-ffn-hidden-size, else --ffn-hidden-size), k experts per token, fs "
                   "shared expert FFN size (0 if none), m = 3/2 for SwiGLU else 1, V padded "
                   "vocabulary",
        "passes": "3 (model FLOPs; recomputation not counted)",
        "attention": "non-causal",
        "counts": "GEMMs only, 2 FLOPs per multiply-add; router, gates, norms not counted",
        "source": "NVIDIA/Megatron-LM megatron/training/training.py num_floating_point_operations "
                  "at fdfcef87004205eca69ea462b375578185ea01f6 (2025-03-03, the last before the "
                  "change; the same since MoE was added in 2024)",
        "tflops_per_gpu": "per_iteration / (iteration_time_s * gpus) / 1e12",
    },
    "megatron_moe_2025": {
        "per_iteration": "B * s * (12 * L * h * (fd * m * nd/L + (fe * k + fs) * m * nm/L) "
                         "+ 12 * L * h^2 * (1 + g/a + s/(2*h)) * (q/h) + 6 * h * V * (t + 1) "
                         "+ 6 * t * (3h + 2h^2))",
        "symbols": "as megatron_moe_2024; L = l + t layers with t MTP modules, nd dense-FFN and "
                   "nm MoE layers (nd + nm = L), fd dense FFN size",
        "passes": "3 (model FLOPs; recomputation not counted)",
        "attention": "causal (half the score matrix)",
        "counts": "GEMMs only, 2 FLOPs per multiply-add; router, gates, norms not counted",
        "mla": "with multi-latent attention the attention term is instead 6 * L * (r_q * (h + "
               "a * (dn + dr) + 1) + r_kv * (h + a * (dn + dv) + 1) + h * dr + a * dv * h + s * "
               "a * (dn + dr) / 2 + s * a * dv / 2), r_q / r_kv the query / KV LoRA ranks, dn, "
               "dr, dv the no-RoPE, RoPE and value head sizes",
        "source": "NVIDIA/Megatron-LM megatron/training/training.py num_floating_point_operations "
                  "from 8873b55d6aad08f0f535174746d2836df3dfa93b (2025-03-06) on, read at "
                  "6ed528b68d5a8b34279eefa09aa958210d42f9b0 (2025-04) and "
                  "79e8592bb7a356c6480559a411fe48cb4fed9e98 (2025-11: the same count, its GQA "
                  "term written per projection)",
        "tflops_per_gpu": "per_iteration / (iteration_time_s * gpus) / 1e12",
    },
}


def flops(formula, B, s, mc):
    """FLOPs per iteration of model mc (the MODELS entry's "flops" dict) under a formula."""
    l, h, a, g = mc["l"], mc["h"], mc["a"], mc["g"]
    q = a * mc["hd"]
    m = 1.5 if mc["swiglu"] else 1.0
    fe, k, fs, V = mc["fe"], mc["k"], mc["fs"], mc["V"]
    if formula == "megatron_moe_2024":
        return 12.0 * B * s * l * h * h * ((1 + g / a + s / h) * (q / h) + (fe / h) * k * m
                                            + (fs / h) * m + V / (2.0 * l * h))
    assert formula == "megatron_moe_2025"
    t = mc.get("mtp", 0)
    L = l + t
    nm = mc.get("moe_layers", l)
    nd = L - nm
    mlp = 12.0 * L * h * (mc.get("fd", 0) * m * nd / L + (fe * k + fs) * m * nm / L)
    attn = 12.0 * L * h * h * (1 + g / a + s / (2.0 * h)) * (q / h)
    if mc.get("mla"):
        qr, kvr, dn, dr, dv = mc["mla"]
        attn = 6.0 * L * (qr * (h + a * (dn + dr) + 1) + kvr * (h + a * (dn + dv) + 1) + h * dr
                          + a * dv * h + s * a * (dn + dr) / 2.0 + s * a * dv / 2.0)
    return B * s * (mlp + attn + 6.0 * h * V * (t + 1) + 6.0 * t * (3 * h + 2 * h * h))


# ---- models --------------------------------------------------------------------------------
# Inline HuggingFace-style configs (read by space_model_from_hf_json), each with its source,
# and the parameters Megatron's FLOP count uses ("flops": V filled in per run, padded as
# the run's tokenizer and TP pad it).
MIXTRAL_8X22B = {
    "_name_or_path": "mixtral-8x22b-llama2-tokenizer", "model_type": "mixtral",
    "num_hidden_layers": 56, "hidden_size": 6144, "num_attention_heads": 48,
    "num_key_value_heads": 8, "intermediate_size": 16384, "num_local_experts": 8,
    "num_experts_per_tok": 2, "vocab_size": 32000, "max_position_embeddings": 65536,
    "rms_norm_eps": 1e-5, "hidden_act": "silu", "tie_word_embeddings": False,
    "rope_theta": 1000000.0,
}
MODELS = {
    # Mixtral 8x22B as the Megatron MoE team ran it: yanring/Megatron-MoE-ModelZoo
    # model_configs/benchmarking/Mixtral-8x22B.yaml (56 layers, hidden 6144, FFN 16384, 48
    # heads, 8 query groups, 8 experts top-2, SwiGLU, RMSNorm, RoPE, untied, no biases,
    # Llama2Tokenizer: 32,000 tokens, padded to 128 x TP). Mistral's release has 32,768.
    "Mixtral-8x22B": {
        "config": MIXTRAL_8X22B, "vocab": 32000, "pad": 128,
        "flops": dict(l=56, h=6144, a=48, g=8, hd=128, swiglu=True, fe=16384, k=2, fs=0),
        "reported": (141e9, "141B (Mistral AI: 141B total, 39B active)", 0.5e9),
        "source": "architecture: yanring/Megatron-MoE-ModelZoo model_configs/benchmarking/"
                  "Mixtral-8x22B.yaml (Llama2Tokenizer, 32,000 tokens)",
    },
    # Fine-grained upcycling of Mixtral 8x22B (arXiv:2504.14960 Section 4.1): 64 experts of
    # 16384/8 = 2048, top-8.
    "Mixtral-8x22B-G8T8": {
        "config": dict(MIXTRAL_8X22B, _name_or_path="mixtral-8x22b-g8t8",
                       intermediate_size=2048, num_local_experts=64, num_experts_per_tok=8),
        "vocab": 32000, "pad": 128,
        "flops": dict(l=56, h=6144, a=48, g=8, hd=128, swiglu=True, fe=2048, k=8, fs=0),
        "reported": None,
        "source": "arXiv:2504.14960 Section 4.1 (64 experts, 8 active, each 1/8 of the "
                  "original hidden size) on the Mixtral-8x22B above",
    },
    # Qwen2-57B-A14B: Qwen/Qwen2-57B-A14B config.json, as ModelZoo's Qwen2-57B-A14B.yaml
    # passes it to Megatron (28 layers, hidden 3584, 28 heads, 4 groups, QKV bias, 64 experts
    # of 2560, top-8, shared expert 20480 with its gate, untied, vocabulary 151,936 padded
    # to a multiple of 1187 x TP = 151,936).
    "Qwen2-57B-A14B": {
        "config": {
            "_name_or_path": "Qwen/Qwen2-57B-A14B", "model_type": "qwen2_moe",
            "num_hidden_layers": 28, "hidden_size": 3584, "num_attention_heads": 28,
            "num_key_value_heads": 4, "intermediate_size": 18944,
            "moe_intermediate_size": 2560, "shared_expert_intermediate_size": 20480,
            "num_experts": 64, "num_experts_per_tok": 8, "decoder_sparse_step": 1,
            "vocab_size": 151936, "max_position_embeddings": 131072, "rms_norm_eps": 1e-6,
            "hidden_act": "silu", "tie_word_embeddings": False, "rope_theta": 1000000.0},
        "vocab": 151936, "pad": 1187,
        "flops": dict(l=28, h=3584, a=28, g=4, hd=128, swiglu=True, fe=2560, k=8, fs=20480),
        "reported": (57e9, "57B (the model's name; 14B active)", 0.5e9),
        "source": "Qwen/Qwen2-57B-A14B config.json; yanring/Megatron-MoE-ModelZoo "
                  "model_configs/benchmarking/Qwen2-57B-A14B.yaml",
    },
    # Llama3-70B upcycled to 8 experts (arXiv:2504.14960 Section 4.1); top-2 assumed.
    "Llama3-8x70B": {
        "config": {
            "_name_or_path": "llama3-8x70b-upcycled", "model_type": "mixtral",
            "num_hidden_layers": 80, "hidden_size": 8192, "num_attention_heads": 64,
            "num_key_value_heads": 8, "intermediate_size": 28672, "num_local_experts": 8,
            "num_experts_per_tok": 2, "vocab_size": 128256, "max_position_embeddings": 8192,
            "rms_norm_eps": 1e-5, "hidden_act": "silu", "tie_word_embeddings": False,
            "rope_theta": 500000.0},
        "vocab": 128256, "pad": 128,
        "flops": dict(l=80, h=8192, a=64, g=8, hd=128, swiglu=True, fe=28672, k=2, fs=0),
        "reported": None,
        "source": "arXiv:2504.14960 Section 4.1 (Llama3-70B upcycled to 8 experts); "
                  "Llama 3 70B's release; experts per token assumed 2",
    },
    # Mixtral 8x7B as Megatron-LM's MoE README ran it (vocabulary 32K, the table's column).
    "Mixtral 8x7B": {
        "config": "mixtral-8x7b", "vocab": 32000, "pad": 128,
        "flops": dict(l=32, h=4096, a=32, g=8, hd=128, swiglu=True, fe=14336, k=2, fs=0),
        "reported": (46.7e9, "46.7B (Mistral AI: 46.7B total, 12.9B active)", 0.05e9),
        "source": "preset mixtral-8x7b",
    },
    "Mixtral 8x22B": None,  # set below: the same as Mixtral-8x22B
    # Qwen3-235B-A22B: Qwen/Qwen3-235B-A22B config.json, as ModelZoo's Qwen3-235B-A22B.yaml
    # passes it (94 layers, hidden 4096, 64 heads of 128, 4 groups, QK layernorm, 128
    # experts of 1536, top-8, untied, vocabulary 151,936 padded to 1187 x TP).
    "Qwen3-235B-A22B": {
        "config": {
            "_name_or_path": "Qwen/Qwen3-235B-A22B", "model_type": "qwen3_moe",
            "num_hidden_layers": 94, "hidden_size": 4096, "num_attention_heads": 64,
            "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 12288,
            "moe_intermediate_size": 1536, "num_experts": 128, "num_experts_per_tok": 8,
            "decoder_sparse_step": 1, "vocab_size": 151936, "max_position_embeddings": 40960,
            "rms_norm_eps": 1e-6, "hidden_act": "silu", "tie_word_embeddings": False,
            "attention_bias": False, "rope_theta": 1000000.0},
        "vocab": 151936, "pad": 1187,
        "flops": dict(l=94, h=4096, a=64, g=4, hd=128, swiglu=True, fe=1536, k=8, fs=0),
        "reported": (235e9, "235B (the model's name; 22B active)", 0.5e9),
        "source": "Qwen/Qwen3-235B-A22B config.json; yanring/Megatron-MoE-ModelZoo "
                  "model_configs/benchmarking/Qwen3-235B-A22B.yaml",
    },
    "Qwen3-Next-80B-A3B": None,  # hybrid Gated DeltaNet: no config trainplan reads
    # DeepSeek-V3 / V2: deepseek-ai/DeepSeek-V3 and DeepSeek-V2 config.json (the reports'
    # Section 4.2 / 3.1.2 hyper-parameters).
    "DeepSeek-V3": {
        "config": {
            "_name_or_path": "deepseek-ai/DeepSeek-V3", "model_type": "deepseek_v3",
            "num_hidden_layers": 61, "hidden_size": 7168, "num_attention_heads": 128,
            "num_key_value_heads": 128, "intermediate_size": 18432,
            "moe_intermediate_size": 2048, "n_routed_experts": 256, "n_shared_experts": 1,
            "num_experts_per_tok": 8, "first_k_dense_replace": 3, "moe_layer_freq": 1,
            "n_group": 8, "topk_group": 4, "scoring_func": "sigmoid", "q_lora_rank": 1536,
            "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
            "v_head_dim": 128, "vocab_size": 129280, "max_position_embeddings": 163840,
            "rms_norm_eps": 1e-6, "hidden_act": "silu", "tie_word_embeddings": False,
            "num_nextn_predict_layers": 1},
        "vocab": 129280, "pad": 1, "flops": None,
        "reported": (671e9, "671B (the report; 37B active; 685B with the MTP module on HF)",
                     0.5e9),
        "source": "deepseek-ai/DeepSeek-V3 config.json; DeepSeek-V3 report Section 4.2",
    },
    # DeepSeek-V3 as the Megatron-Core team ran it on GB200 (the reproduce guide's arguments:
    # no MTP layer; vocabulary padded to a multiple of 3232 = 129,280).
    "DeepSeek-V3 (no MTP)": {
        "config": None,  # set below: DeepSeek-V3's without num_nextn_predict_layers
        "vocab": 129280, "pad": 3232,
        "flops": dict(l=61, h=7168, a=128, g=128, hd=128, swiglu=True, fe=2048, k=8, fs=2048,
                      fd=18432, moe_layers=58, mla=(1536, 512, 128, 64, 128)),
        "reported": (671e9, "671B (the report; 37B active)", 0.5e9),
        "source": "deepseek-ai/DeepSeek-V3 config.json without the MTP module; the arguments of "
                  "deepseek-v3-gb200-reproduce-guide.md (NVIDIA/Megatron-LM 79e8592b)",
    },
    "DeepSeek-V2": {
        "config": {
            "_name_or_path": "deepseek-ai/DeepSeek-V2", "model_type": "deepseek_v2",
            "num_hidden_layers": 60, "hidden_size": 5120, "num_attention_heads": 128,
            "num_key_value_heads": 128, "intermediate_size": 12288,
            "moe_intermediate_size": 1536, "n_routed_experts": 160, "n_shared_experts": 2,
            "num_experts_per_tok": 6, "first_k_dense_replace": 1, "moe_layer_freq": 1,
            "n_group": 8, "topk_group": 3, "scoring_func": "softmax", "q_lora_rank": 1536,
            "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
            "v_head_dim": 128, "vocab_size": 102400, "max_position_embeddings": 163840,
            "rms_norm_eps": 1e-6, "hidden_act": "silu", "tie_word_embeddings": False},
        "vocab": 102400, "pad": 1, "flops": None,
        "reported": (236e9, "236B (the report; 21B active)", 0.5e9),
        "source": "deepseek-ai/DeepSeek-V2 config.json; DeepSeek-V2 report Section 3.1.2",
    },
}
MODELS["Mixtral 8x22B"] = MODELS["Mixtral-8x22B"]
MODELS["DeepSeek-V3 (no MTP)"]["config"] = {
    k: v for k, v in MODELS["DeepSeek-V3"]["config"].items() if k != "num_nextn_predict_layers"}
MODELS["DeepSeek-V3 (no MTP)"]["config"]["_name_or_path"] = "deepseek-v3-no-mtp"
# The model names of moe_runs.json's Megatron README rows carry "(Dropless)".
MODEL_ALIASES = {"Mixtral 8x7B (Dropless)": "Mixtral 8x7B",
                 "Mixtral 8x22B (Dropless)": "Mixtral 8x22B"}

# The dispatcher names the sources print -> space_moe_dispatcher_names.
DISPATCHERS = {"All-to-All": "alltoall", "A2A": "alltoall", "AlltoAll": "alltoall", "DeepEP": "flex",
               "HybridEP": "flex"}

# hwdb systems by the source's machine; None: not in hwdb (the run says which it needs).
SYSTEMS = {
    "NVIDIA Eos (DGX H100)": ("eos", "h100-sxm", None),
    "H800": (None, None, "h800"),
}


def cuda_graph_features(notes, assumed):
    """The CUDA graphs a run's notes name, as validate_runs reads them: Transformer Engine's
    per-layer graphs (--cuda-graph-impl transformer_engine) of the modules its command lists
    (--cuda-graph-scope), or of the router and the MoE preprocessing where the notes say so in
    words; where they only say "CUDA graphs", the modules the Model Zoo's commands and
    Megatron-Core's MoE README name (attn moe_router moe_preprocess), assumed."""
    feats = ["cuda-graph-impl=transformer_engine"]
    m = re.search(r"--cuda-graph-(?:scope|modules) ((?:[a-z_]+ ?)+)", notes)
    if m:
        feats.append("cuda-graph-scope=" + ",".join(m.group(1).split()))
    elif "CUDA graphs of the router and the MoE preprocessing" in notes:
        feats.append("cuda-graph-scope=moe_router,moe_preprocess")
    else:
        feats.append("cuda-graph-scope=attn,moe_router,moe_preprocess")
        assumed.append("CUDA graphs: Transformer Engine's, of attn moe_router moe_preprocess "
                       "(the notes say 'CUDA graphs' only; the Model Zoo's commands and "
                       "Megatron-Core's MoE README name these modules)")
    return feats


def hwdb_system_of_gpu(gpu):
    """The first built-in hwdb system (by file name) whose GPU is gpu, or None."""
    d = os.path.join(HERE, "..", "..", "hwdb", "data", "systems")
    for name in sorted(os.listdir(d)):
        if name.endswith(".json"):
            with open(os.path.join(d, name)) as f:
                if json.load(f).get("gpu") == gpu:
                    return name[:-5]
    return None


def pad_to(v, multiple, tp):
    m = multiple * max(tp or 1, 1)
    return (v + m - 1) // m * m


def moe_layout(**kw):
    keys = ["tp", "pp", "vpp", "cp", "ep", "etp", "dp", "micro_batch_size",
            "global_batch_size", "grad_accum_steps", "seq_length", "sequence_parallel",
            "recompute", "recompute_variant", "zero_stage", "sharding", "precision",
            "fp8_recipe", "pipeline_schedule", "moe_dispatcher", "moe_imbalance", "features"]
    out = {k: kw.pop(k, None) for k in keys}
    if out["features"] is None:
        out["features"] = []
    assert not kw, kw
    return out


def check_layout(run):
    """tp*pp*cp*dp = gpus; etp*ep divides tp*cp*dp (Megatron-Core's expert grid of a stage);
    gbs = dp * mbs * ga, where all are known."""
    L = run["layout"]
    if None in (L["tp"], L["pp"], L["cp"], L["dp"]) or run["gpus"] is None:
        return
    assert L["tp"] * L["pp"] * L["cp"] * L["dp"] == run["gpus"], run["id"]
    etp = L["etp"]
    if L["ep"] is not None and etp is not None:
        assert (L["tp"] * L["cp"] * L["dp"]) % (etp * L["ep"]) == 0, run["id"]
    if L["micro_batch_size"] and L["grad_accum_steps"] and L["global_batch_size"]:
        assert L["dp"] * L["micro_batch_size"] * L["grad_accum_steps"] == \
            L["global_batch_size"], run["id"]


def base(r):
    return {"id": r["id"], "source_id": r["source_id"], "source_table": r["source_table"],
            "model_name": r["model_name"]}


# ---- MoE Parallel Folding (arXiv:2504.14960) --------------------------------------------------

def folding(r):
    out = base(r)
    assumed, derived = [], []
    name = r["model_name"]
    mdl = MODELS[name]
    out["model"] = mdl["config"]
    method = r["method"]
    out["system"], out["gpu"] = "eos", "h100-sxm"
    out["gpus"], out["nodes"] = r["total_gpus"], r["num_nodes"]
    tp, pp, cp, ep, etp = r["tp"], r["pp"], r["cp"], r["ep"], r["etp"]
    gbs, seq = r["global_batch_size"], r["seq_length"]
    skip = None
    fp8 = r["precision"].startswith("fp8")
    if fp8:
        twin = "MCore" if method == "MCore" else "MCore w/ Folding"
        tp, pp, cp, ep = 2, 8, 1, (4 if twin == "MCore" else 8)
        etp = None if twin == "MCore" else 1
        gbs, seq = 256, 4096
        assumed.append("FP8 runs: the layout, global batch 256 and sequence 4096 of the same "
                       "method's BF16 run (Table 3); Section 4.5 prints only the TFLOPS")
    if method in ("FSDP", "FSDP + EP"):
        skip = ("baseline whose sharding is not reconstructible: an FSDP inside Megatron-Core "
                "whose implementation, sharding of experts and overlap the paper does not "
                "describe")
    if r["mfu_percent"] is None and r["tflops_per_gpu"] is None:
        skip = "no measured figure: the source prints OOM (the run did not fit in memory)"
    if pp is None:
        pp = 1
        derived.append("pp = 1: Table 3 leaves PP blank for methods without pipeline "
                       "parallelism")
    if etp is None and method in ("MCore", "TP + EP + DP"):
        etp = tp
        derived.append("etp = tp: without MoE Parallel Folding the experts are split by the "
                       "attention's TP (Megatron-Core before --expert-tensor-parallel-size)")
    elif etp is None and method == "MCore w/ Folding":
        assumed.append("etp not printed for this folding row (Table 3 leaves it blank): searched")
    dp = r["total_gpus"] // (tp * pp * cp)
    derived.append("dp = GPUs / (tp x pp x cp)")
    if method == "TP + EP + DP":
        derived.append("zero_stage 1: Section 4.2, TP+EP+DP 'use ZeRO-1 instead of ZeRO-3'")
    zero, sharding = (1, "megatron-distributed-optimizer") if method != "FSDP" and \
        method != "FSDP + EP" else (3, None)
    if method in ("MCore", "MCore w/ Folding"):
        assumed.append("zero_stage 1 with overlapped gradient reduce and parameter gather: "
                       "yanring/Megatron-MoE-ModelZoo's Megatron-Core benchmark configs set "
                       "--use-distributed-optimizer, --overlap-grad-reduce, "
                       "--overlap-param-gather; the paper does not say")
    sp = tp > 1
    derived.append("sequence_parallel = (tp > 1): Megatron-Core requires sequence parallelism "
                   "for MoE with TP and EP (megatron/core/transformer/moe/README.md)")
    L = moe_layout(
        tp=tp, pp=pp, vpp=1 if pp == 1 else None, cp=cp, ep=ep, etp=etp, dp=dp,
        global_batch_size=gbs, seq_length=seq, sequence_parallel=sp,
        zero_stage=zero, sharding=sharding, precision="fp8" if fp8 else "bf16",
        fp8_recipe="delayed" if fp8 else None,
        pipeline_schedule="none" if pp == 1 else None, moe_dispatcher="alltoall",
        features=(["overlap-grad-reduce", "overlap-param-gather"]
                  if method in ("MCore", "MCore w/ Folding") else [])
        + ["no-moe-router-fusion"])
    derived.append("no-moe-router-fusion: the router as PyTorch's ops; Transformer Engine's "
                   "fused router kernels came with Megatron-Core v0.14 (2025-09, "
                   "NVIDIA/Megatron-LM README.md news), after the paper (arXiv 2504.14960, "
                   "April 2025)")
    derived.append("moe_dispatcher alltoall: the paper's token-level dispatcher exchanges "
                   "tokens by All-to-All-V over the EP group (Section 3, the dispatcher)")
    assumed.append("micro_batch_size, vpp, recomputation and the pipeline schedule are not "
                   "published: searched")
    assumed.append("CUDA graphs: none (the paper does not say; Megatron-Core's default)")
    out["layout"] = L
    out["model_overrides"] = {"capacity_factor": 1.0}
    derived.append("capacity factor 1.0, tokens dropped: Section 4.2 ('token drop training "
                   "with a capacity factor equal to 1 for benchmarking')"
                   + ("" if r["source_table"].startswith(("Table 3", "Table 2")) else
                      "; assumed to hold for this table too"))
    f = dict(mdl["flops"], V=pad_to(mdl["vocab"], mdl["pad"], tp))
    F = flops("megatron_moe_2024", gbs, seq, f)
    F25 = flops("megatron_moe_2025", gbs, seq, f)
    assumed.append("FLOP count megatron_moe_2024 (non-causal attention): the experiments ran "
                   "PyTorch 2.5.0 / CUDA 12.6 (NGC containers of late 2024), before "
                   "Megatron-LM's causal count of 2025-03-06; the other count is kept as "
                   "target.iteration_time_s_if_causal_count")
    if r["tflops_per_gpu"] is not None and (fp8 or r["mfu_percent"] is None):
        v = r["tflops_per_gpu"]
        out["target"] = {
            "kind": "tflops_per_gpu", "value": v, "flops_formula": "megatron_moe_2024",
            "vocab_for_flops": f["V"], "flops_per_iteration": F,
            "iteration_time_s": F / (v * 1e12 * r["total_gpus"]),
            "iteration_time_s_if_causal_count": F25 / (v * 1e12 * r["total_gpus"]),
            "iteration_time_origin": "derived: flops_per_iteration / (value * 1e12 * gpus)"}
    else:
        v = r["mfu_percent"] / 100.0 if r["mfu_percent"] is not None else None
        peak = r["peak_tflops_for_mfu"]
        it = F / (v * peak * 1e12 * r["total_gpus"]) if v else None
        out["target"] = {
            "kind": "mfu", "value": v, "peak_tflops_for_mfu": peak,
            "flops_formula": "megatron_moe_2024", "vocab_for_flops": f["V"],
            "flops_per_iteration": F, "iteration_time_s": it,
            "iteration_time_s_if_causal_count":
                F25 / (v * peak * 1e12 * r["total_gpus"]) if v else None,
            "iteration_time_origin": "derived: flops_per_iteration / (value * peak * 1e12 * "
                                     "gpus); MFU printed with 3 digits"}
    out["also_published"] = {"tflops_per_gpu": r["tflops_per_gpu"]} \
        if r["tflops_per_gpu"] is not None and r["mfu_percent"] is not None else {}
    if r["id"].startswith("pf25-t5-qwen2"):
        skip = ("doubtful row: Table 5's Qwen2-57B-A14B rows repeat the Mixtral-8x22B rows "
                "figure for figure, against Section 4.3's 38.7% to 35.9% for Qwen")
    out["skip"] = skip
    out["params_model"] = name
    return out, assumed, derived


# ---- Megatron-LM MoE README ----------------------------------------------------------------

def megatron_readme(r):
    out = base(r)
    assumed, derived = [], []
    name = MODEL_ALIASES[r["model_name"]]
    mdl = MODELS[name]
    out["model"] = mdl["config"]
    out["system"], out["gpu"] = "eos", "h100-sxm"
    assumed.append("system eos: the README's server (8x H100 80GB HBM3, NVLink 4, InfiniBand "
                   "8x400 Gbit/s) is a DGX H100 node; the cluster is not named")
    out["gpus"], out["nodes"] = r["total_gpus"], r["num_nodes"]
    tp, pp, ep = r["tp"], r["pp"], r["ep"]
    dp = r["total_gpus"] // (tp * pp)
    derived.append("cp = 1 (no CP column); dp = GPUs / (tp x pp); etp = tp (MCore v0.8/v0.9 "
                   "split experts by the attention's TP)")
    out["layout"] = moe_layout(
        tp=tp, pp=pp, vpp=r["vpp"], cp=1, ep=ep, etp=tp, dp=dp,
        micro_batch_size=r["micro_batch_size"], global_batch_size=r["global_batch_size"],
        grad_accum_steps=r["global_batch_size"] // (dp * r["micro_batch_size"]),
        seq_length=r["seq_length"], sequence_parallel=tp > 1, precision="bf16",
        pipeline_schedule="interleaved-1f1b" if r["vpp"] > 1 else "1f1b",
        zero_stage=1, sharding="megatron-distributed-optimizer",
        moe_dispatcher=DISPATCHERS[r["moe_dispatcher"]],
        features=["overlap-grad-reduce", "overlap-param-gather", "no-moe-router-fusion"])
    derived.append("grad_accum_steps = GBS / (dp x MBS); interleaved 1F1B from VP > 1")
    # the same README, both versions: its Mixtral 8x7B training script sets
    # --use-distributed-optimizer, --overlap-grad-reduce and
    # --overlap-param-gather (0b981f9c lines 201-209, c230e0d7 lines
    # 255-264), and its performance guide says to ("Enable Communication
    # Overlap")
    assumed.append("zero_stage 1 with overlapped gradient reduce and parameter gather: the "
                   "README's own Mixtral 8x7B script sets --use-distributed-optimizer, "
                   "--overlap-grad-reduce, --overlap-param-gather and its 'Enable "
                   "Communication Overlap' guide says to; that the headline run did is assumed")
    derived.append("no-moe-router-fusion: MCore v0.8/v0.9 had no fused router (it came with "
                   "v0.14, NVIDIA/Megatron-LM README.md news)")
    assumed.append("recomputation is not printed: searched")
    assumed.append("dropless with Megatron's default load-balancing loss: the token imbalance "
                   "is the estimator's default")
    assumed.append("CUDA graphs: none (the README does not say; Megatron-Core's default)")
    f = dict(mdl["flops"], V=pad_to(mdl["vocab"], mdl["pad"], tp))
    F = flops("megatron_moe_2024", r["global_batch_size"], r["seq_length"], f)
    v = r["tflops_per_gpu"]
    out["target"] = {
        "kind": "tflops_per_gpu", "value": v, "flops_formula": "megatron_moe_2024",
        "vocab_for_flops": f["V"], "flops_per_iteration": F,
        "iteration_time_s": F / (v * 1e12 * r["total_gpus"]) if v else None,
        "iteration_time_origin": "derived: flops_per_iteration / (value * 1e12 * gpus)"}
    out["also_published"] = {}
    out["skip"] = None if v else "no measured figure: the README prints a mapping only"
    if v:
        assumed.append("the README's headline TFLOPS for Mixtral 8x7B (%g, %s) was measured "
                       "with the reference mapping printed below it" % (v, r["framework"]))
    out["params_model"] = name
    return out, assumed, derived


# ---- Megatron MoE ModelZoo (Qwen3) -----------------------------------------------------------

MZ_SYSTEMS = {"H100": ("eos", "h100-sxm"), "GB200": ("gb200-nvl72", "gb200"),
              "GB300": ("gb300-nvl72", "gb300")}


def modelzoo(r):
    out = base(r)
    assumed, derived = [], []
    name = r["model_name"]
    mdl = MODELS.get(name)
    mixtral = name == "Mixtral-8x22B"
    skip = None
    out["model"] = mdl["config"] if mdl else None
    out["system"], out["gpu"] = MZ_SYSTEMS[r["gpu_type"]]
    if r["gpu_type"] == "H100":
        assumed.append("system eos: the readme's H100 nodes (NVLink 4, InfiniBand 8x50 GB/s) "
                       "are DGX H100s; its example CLUSTER is EOS")
    if mixtral:
        derived.append("layout TP 2, PP 8, EP 8, CP 1, VPP 7, ETP 1: runtime.conf's "
                       "Mixtral-8x22B row and the yaml; the script overrides MBS, GBS, "
                       "sequence and nodes only")
    out["gpus"], out["nodes"] = r["total_gpus"], r["num_nodes"]
    tp, pp, cp, ep, etp = r["tp"], r["pp"], r["cp"], r["ep"], r["etp"]
    dp = r["total_gpus"] // (tp * pp * cp)
    if r["dp"] is None:
        derived.append("dp = GPUs / (tp x pp x cp)")
    else:
        assert r["dp"] == dp, r["id"]
    mbs = r["micro_batch_size"]
    if mbs is None:
        mbs = 1
        assumed.append("micro_batch_size 1: not printed; sbatch_benchmarking.sh's default")
    ga = r["global_batch_size"] // (dp * mbs)
    if r["grad_accum_steps"] is None:
        derived.append("grad_accum_steps = GBS / (dp x MBS)")
    rc = r["recompute"]
    recompute, variant = "none", None
    if rc == "full":
        recompute, variant = "full", "megatron-full"
    elif rc in ("norm, act", "selective: moe_act, layernorm"):
        recompute = "selective"
        variant = "megatron-recompute-modules: layernorm, moe_act"
        derived.append("recompute selective, modules layernorm and moe_act: the table's "
                       "'norm, act' as run_h100_235b.sh's --recompute-modules moe_act "
                       "layernorm")
    elif rc == "selective: layernorm, moe":
        recompute = "selective"
        variant = "megatron-recompute-modules: layernorm, moe"
    elif rc is None and mixtral:
        derived.append("recompute none: neither the script nor the yaml sets --recompute-*")
    elif rc is None:
        derived.append("recompute none: the table's recompute column is empty")
    fsdp = r.get("fsdp") == "On"
    feats = [] if fsdp else ["overlap-grad-reduce", "overlap-param-gather"]
    notes = " ".join(r["notes"])
    if "+1f1b overlap" in notes or "A2A_OVERLAP=1" in notes:
        feats.append("ep-a2a-overlap")
    if "cuda-graph" in notes or "CUDA graphs" in notes:
        feats.append("cuda-graphs")
        feats += cuda_graph_features(notes, assumed)
    else:
        assumed.append("CUDA graphs: none (the row and its notes do not name them; "
                       "Megatron-Core's default)")
    if "offloading" in notes:
        skip = skip or "fine-grained activation offloading (required by this run) is not modelled"
    prec = {"fp8 (blockwise)": "fp8"}.get(r["precision"], r["precision"])
    recipe = {"mxfp8": "mxfp8", "fp8 (blockwise)": "blockwise"}.get(r["precision"])
    if recipe == "blockwise":
        feats.append("fp8-param-gather")
        derived.append("fp8 blockwise (1x128 activations, 128x128 weights), FP8 parameter "
                       "all-gather, BF16 optimizer moments: sbatch_benchmarking.sh with PR=fp8")
    elif recipe == "mxfp8":
        feats.append("fp8-param-gather")
        derived.append("MXFP8 parameters gathered at one byte (--fp8-param-gather "
                       "--reuse-grad-buf-for-mxfp8-param-ag), BF16 optimizer moments: "
                       "sbatch_benchmarking.sh with PR=mxfp8 and OPTIMIZER_OFFLOAD unset (0)")
    if recipe == "blockwise":
        feats.append("moe-router-padding")
        derived.append("the router pads each expert's tokens for fp8 (feature "
                       "moe-router-padding): sbatch_benchmarking.sh with PR=fp8 adds "
                       "'--moe-router-padding-for-fp8'")
    elif recipe == "mxfp8":
        feats.append("moe-router-padding")
        derived.append("the router pads each expert's tokens for fp8 (feature "
                       "moe-router-padding): sbatch_benchmarking.sh with PR=mxfp8 adds "
                       "'--moe-router-padding-for-quantization'")
    if r["moe_dispatcher"] == "HybridEP":
        feats.append("hybridep")
        derived.append("the flex dispatcher's HybridEP backend (feature hybridep): "
                       "sbatch_benchmarking.sh with DISPATCHER=hybridep adds '--moe-token-"
                       "dispatcher-type flex --moe-flex-dispatcher-backend hybridep'")
    if r["moe"].get("capacity_factor"):
        out["model_overrides"] = {"capacity_factor": r["moe"]["capacity_factor"]}
        derived.append("capacity factor 1.0 with padding to capacity: "
                       "--moe-expert-capacity-factor 1.0 --moe-pad-expert-input-to-capacity")
    imb = 1.0 if r["moe"].get("router_balance") == "forced" else None
    if r["id"] in ("mz-qwen3-235b-h100-cross-ep32", "mz-qwen3-235b-h100-cross-ep32-a2a-overlap"):
        imb = 1.0
        assumed.append("forced load balancing (--moe-router-force-load-balancing): "
                       "best_practice/qwen3/run_h100_235b.sh runs this layout with it")
    if imb == 1.0:
        derived.append("moe_imbalance 1.0: --moe-router-force-load-balancing gives every "
                       "expert the same number of tokens")
    elif r["moe"].get("capacity_factor"):
        derived.append("moe_imbalance null: each expert's tokens are capped at (and padded to) "
                       "the capacity, so the busiest expert carries the mean's capacity factor")
    else:
        assumed.append("dropless routing: the busiest expert's share is the estimator's "
                       "default imbalance")
    out["layout"] = moe_layout(
        tp=tp, pp=pp, vpp=r["vpp"], cp=cp, ep=ep, etp=etp, dp=dp, micro_batch_size=mbs,
        global_batch_size=r["global_batch_size"], grad_accum_steps=ga,
        seq_length=r["seq_length"], sequence_parallel=tp > 1, recompute=recompute,
        recompute_variant=variant, zero_stage=3 if fsdp else 1,
        sharding="megatron-fsdp" if fsdp else "megatron-distributed-optimizer",
        precision="fp8" if prec == "mxfp8" else prec, fp8_recipe=recipe,
        pipeline_schedule="none" if pp == 1 else (
            "interleaved-1f1b" if (r["vpp"] or 1) > 1 else "1f1b"),
        moe_dispatcher=DISPATCHERS[r["moe_dispatcher"]], moe_imbalance=imb, features=feats)
    derived.append("moe_dispatcher flex for DeepEP / HybridEP (--moe-token-dispatcher-type "
                   "flex), alltoall for A2A")
    if not fsdp:
        derived.append("zero_stage 1 with overlapped gradient reduce and parameter gather: "
                       "model_configs/benchmarking/Qwen3-235B-A22B.yaml sets "
                       "--use-distributed-optimizer, --overlap-grad-reduce, "
                       "--overlap-param-gather")
    else:
        derived.append("zero_stage 3: the table's FSDP column 'On' (Megatron-Core's FSDP)")
    split = {}
    if pp > 1 and not mixtral:
        derived.append("account_for_embedding/loss_in_pipeline_split true: the yaml sets "
                       "--account-for-embedding-in-pipeline-split and "
                       "--account-for-loss-in-pipeline-split (94 layers + 2 over pp x vpp "
                       "chunks)")
        split = {"account_for_embedding_in_pipeline_split": True,
                 "account_for_loss_in_pipeline_split": True}
    out["layout"].update(split)
    if mdl is None:
        skip = ("model not loadable: Qwen3-Next's hybrid Gated DeltaNet / gated attention "
                "layers are not modelled")
    if mdl:
        f = dict(mdl["flops"], V=pad_to(mdl["vocab"], mdl["pad"], tp))
        F = flops("megatron_moe_2025", r["global_batch_size"], r["seq_length"], f)
    else:
        f, F = {"V": None}, None
    if r["iteration_time_s"] is not None:
        it = r["iteration_time_s"]
        out["target"] = {"kind": "iteration_time_s", "value": it, "iteration_time_s": it,
                         "iteration_time_origin": "measured: the table's 'Step time (sec)'",
                         "flops_formula": "megatron_moe_2025" if F else None,
                         "vocab_for_flops": f["V"], "flops_per_iteration": F}
        out["also_published"] = {"tflops_per_gpu": r["tflops_per_gpu"]}
        if F:
            out["also_published"]["tflops_per_gpu_from_formula"] = \
                F / (it * 1e12 * r["total_gpus"])
    else:
        v = r["tflops_per_gpu"]
        out["target"] = {
            "kind": "tflops_per_gpu", "value": v, "flops_formula": "megatron_moe_2025",
            "vocab_for_flops": f["V"], "flops_per_iteration": F,
            "iteration_time_s": F / (v * 1e12 * r["total_gpus"]),
            "iteration_time_origin": "derived: flops_per_iteration / (value * 1e12 * gpus)"}
        out["also_published"] = {}
    out["skip"] = skip
    out["params_model"] = name if mdl else None
    return out, assumed, derived


# ---- DeepSeek reports -----------------------------------------------------------------------

def deepseek(r):
    out = base(r)
    assumed, derived = [], []
    name = r["model_name"]
    out["model"] = MODELS[name]["config"]
    out["system"], out["gpu"] = hwdb_system_of_gpu("h800"), None
    if out["system"]:
        out["gpu"] = "h800"
        assumed.append("system %s: the hwdb system of H800 GPUs; DeepSeek's cluster has 8 "
                       "H800 per node, NVLink/NVSwitch inside, InfiniBand between (V3: 50 "
                       "GB/s per GPU)" % out["system"])
    if not out["system"]:
        out["needs_system"] = {"gpu": "h800", "what": "DeepSeek's H800 cluster: 8 H800 per "
                               "node on NVLink/NVSwitch (400 GB/s NVLink), InfiniBand between "
                               "nodes (V3: 50 GB/s per GPU)"}
    out["gpus"], out["nodes"] = r["total_gpus"], r["num_nodes"]
    tp, pp, ep = r["tp"], r["pp"], r["ep"]
    dp = r["total_gpus"] // ((tp or 1) * pp) if r["total_gpus"] else None
    if tp is None:
        assumed.append("tp 1: the V2 report names pipeline, expert and ZeRO-1 data "
                       "parallelism only")
        tp = 1
    if dp:
        derived.append("dp = GPUs / pp (no TP); the experts' data parallelism is dp / ep")
    v3 = name == "DeepSeek-V3"
    out["layout"] = moe_layout(
        tp=tp, pp=pp, vpp=None, cp=1, ep=ep, etp=1, dp=dp,
        global_batch_size=r["global_batch_size"], seq_length=r["seq_length"],
        sequence_parallel=False, recompute="selective" if v3 else None,
        # DeepSeek-V3 report (arXiv 2412.19437) section 3.2.3, "Recomputation
        # of RMSNorm and MLA Up-Projection": Megatron-Core's modules of the
        # same effect (--recompute-modules layernorm mla_up_proj)
        recompute_variant="megatron-recompute-modules: layernorm mla_up_proj" if v3
        else None,
        zero_stage=1, sharding="zero-1", precision="fp8" if v3 else "bf16",
        fp8_recipe="blockwise" if v3 else None,
        pipeline_schedule="dualpipe" if v3 else "zero-bubble",
        # DeepSeek-V3 report section 3.2.2: each token goes to at most 4
        # nodes, over IB once to the GPU of the same in-node index there,
        # then over NVLink to its experts' GPUs, on 20 SMs: DeepEP's normal
        # kernels (deepseek-ai/DeepEP, "aligned with the group-limited
        # gating algorithm proposed in the DeepSeek-V3 paper"), which
        # trainplan times as the flex dispatcher
        moe_dispatcher="flex" if v3 else "alltoall",
        # DeepSeek-V3 report section 3.3.3 (Low-Precision Storage): AdamW's
        # moments in BF16, master weights and gradients in FP32: Megatron-
        # Core's precision-aware optimizer with bf16 moments. Same section,
        # "Low-Precision Activation": the attention output kept once in
        # E5M6, the MoE SwiGLU's inputs cached in FP8 and its output
        # recomputed (trainplan --fp8-activation-cache deepseek-v3)
        features=["precision-aware-optimizer", "exp-avg-dtype=bf16",
                  "fp8-activation-cache=deepseek-v3"] if v3 else [])
    if v3:
        derived.append("moe_dispatcher flex: the report's node-limited dispatch (section "
                       "3.2.2: at most 4 nodes a token, IB to the same in-node index, then "
                       "NVLink forwarding, 20 SMs) is DeepEP's normal kernels, trainplan's "
                       "flex dispatcher (deepseek-ai/DeepEP README)")
    derived.append("global batch: the final batch size of the report's schedule (the figure "
                   "averages the whole pre-training, the batch ramp included)")
    gh = r["gpu_hours_per_trillion_tokens"]
    tps = 1e12 / (gh * 3600.0)
    out["target"] = {
        "kind": "tokens_per_s_per_gpu", "value": tps,
        "iteration_time_s": r["global_batch_size"] * r["seq_length"] / (
            tps * r["total_gpus"]) if r["total_gpus"] else None,
        "iteration_time_origin": "derived: 1e12 tokens / (GPU-hours per trillion tokens x "
                                 "3600) per GPU; iteration time at the final batch",
        "flops_formula": None, "gpu_hours_per_trillion_tokens": gh}
    out["also_published"] = {}
    assumed.append("DeepSeek's own framework (HAI-LLM: %s) estimated as Megatron-Core with "
                   "the published degrees; its schedule timed as trainplan's %s "
                   "(bench/runs.c); the target is an "
                   "average over the whole pre-training, so expect the estimate to be "
                   "faster" % ("DualPipe, FP8 blockwise GEMMs, node-limited all-to-all" if v3
                               else "zero-bubble pipeline, device-limited routing",
                               "dualpipe" if v3 else "zb1p (ZB-H1)"))
    why = []
    if not out["system"]:
        why.append("system not in hwdb: needs an H800 system (GPU h800)")
    if not r["total_gpus"]:
        why.append("the GPU count is not published")
    out["skip"] = "; ".join(why) or None
    out["params_model"] = name
    return out, assumed, derived


# ---- moe_runs.md -----------------------------------------------------------------------------

MD_HEAD = """# MoE validation runs: moe_runs.json and moe_validation_runs.json

Written by `make_moe_runs.py` (do not edit by hand; change the script or `moe_runs.json`).
`moe_runs.json` holds measured training runs of mixture-of-experts models as their sources
printed them (null = not printed; `derived_fields` and `notes` per run);
`moe_validation_runs.json` is the same runs normalized for trainplan in the schema of
`validation_runs.json` plus the expert-parallel layout: `ep`, `etp` (the experts' tensor
parallelism; `null` = searched), `moe_dispatcher` (`alltoall`, `allgather`, `flex` = DeepEP /
HybridEP), `moe_imbalance` (tokens of the busiest expert over the mean: 1.0 where the run forced
balanced routing, `null` = the estimator's default), `model_overrides.capacity_factor` (1.0 where
the run dropped tokens beyond it) and `needs_system` (the hwdb system a skipped run waits for).
Every value a source does not print is in the run's `assumed` or `derived` list.

They are kept apart from `validation_runs.json`: `tests/test_space.c` checks every run of that
file against trainplan's dense FLOP counts, and `bench/validate_runs` fits its kernel-efficiency
constants on it. `validate_runs` reads this file as held-out sources: each run is estimated at
the estimator's own constants (never fitted to these runs), its unpublished fields searched, and
printed after the dense runs with MAPE per source and every run not scored counted under its
reason (a skip reason below, or the estimator's: on a build whose estimator does not model MoE
layers, `not estimated (moe_not_modelled)`). The dense runs' output is byte-identical with or
without them (`--moe-runs none`).

Regenerate: `python3 bench/data/make_moe_runs.py --trainplan build/trainplan` (standard library
only; same inputs, same bytes).

## Per source

"""

MD_FORMULAS = """
## FLOP conventions

Megatron-Core's sources print model TFLOPS or MFU from `num_floating_point_operations`
(megatron/training/training.py), which changed on 2025-03-06 (NVIDIA/Megatron-LM 8873b55d):

"""

MD_DOUBTS = """
## What each source measured, and doubts

1. **liu2025_moe_parallel_folding** (arXiv:2504.14960v2, Appendix 6.4). Table 3 gives, per model
   and method, the layout (GPUs, CP, TP, EP, PP, ETP) and the MFU at global batch 256, sequence
   4096 (the same MFU as Table 1); Table 4 the MFU of the same layouts at 64-1024 GPUs and batch
   1024 (strong scaling); Table 5 the MFU of context scaling (16K-128K, tokens per batch fixed)
   with its own layouts; Table 2 the model TFLOPS of Mixtral 8x22B on 128 H100 in BF16 (458.3 and
   487.7: Table 3's 46.3% and 49.3% of 989.5) and FP8 delayed scaling (575.1, 631.7; layout not
   printed, Table 3's assumed). All on Eos (DGX H100), BF16, token dropping at capacity factor 1
   ("for benchmarking", Section 4.2). Not printed: micro-batch, VPP, recomputation, the ZeRO stage
   (ZeRO-1 said for TP+EP+DP only), the schedule; they are searched. The MFU convention is assumed
   to be Megatron's count before 2025-03-06 (the experiments ran PyTorch 2.5.0 / CUDA 12.6,
   containers of late 2024): with the causal count the implied step times are 3% (4K) to 35%
   (128K) shorter; both are in each run's target. A hint, not proof: the Model Zoo's script
   expects 470 TFLOPS for the same layout and token dropping at capacity 1 under the causal
   count, i.e. 4.22 s per step; the paper's 487.7 gives 4.21 s under the 2024 count and 4.07 s
   under the causal one. Doubts: Table 4 is split over two pages in the
   transcription and its rows were assigned in printed order (the Mixtral TP+EP+DP 512 and 1024
   rows open the second part; Llama3-8x70B lists three GPU counts per method, 256 missing for
   folding, 128 for MCore); one MFU is printed "18,4%". Table 5's Qwen2-57B-A14B rows repeat the
   Mixtral rows figure for figure while Section 4.3 says Qwen's MFU goes from 38.7% to 35.9%:
   skipped as doubtful. Table 3 prints TP 8 for the FSDP rows (with CP 8 for Llama3): whether FSDP
   ran with TP or the columns are shifted is not said; FSDP and FSDP+EP rows are skipped (their
   sharding inside Megatron-Core is not described). Llama3-8x70B's experts per token are not
   printed (2 assumed); Mixtral-8x22B-G8T8 has no published parameter count. The Mixtral
   vocabulary is the Megatron MoE Model Zoo's (Llama2Tokenizer, 32,000; Mistral's release has
   32,768: 0.1% of the FLOPs).
2. **megatron_lm_moe_readme** (NVIDIA/Megatron-LM megatron/core/transformer/moe/README.md). The
   opening sentence gives one figure, Mixtral 8x7B BF16 at 438 TFLOPS (MCore v0.8, commit
   0b981f9c) and 468 TFLOPS (v0.9, c230e0d7); the "Reference Best Parallel Mapping" table beside
   it gives the layout (64 H100, TP 1, EP 8, PP 4, VP 8, MBS 1, GBS 256, sequence 4096, dropless,
   all-to-all). That the figure was measured with that mapping is an assumption. The Mixtral
   8x22B mapping has no figure (skipped). Two usable runs: the source has no more.
3. **megatron_moe_modelzoo** (yanring/Megatron-MoE-ModelZoo at e8650517; the Megatron-Core MoE
   team's recipes). Mixtral-8x22B: best_practice/mixtral/run_mixtral_8x22B.sh states what its
   commands "should be around" on 128 H100 (445 TFLOPS dropless, 465 forced balance, 560 FP8
   blockwise forced, 470 token drop at capacity 1), with MBS 1, GBS 256, sequence 4096; the
   layout is runtime.conf's default (TP 2, PP 8, EP 8, VPP 7, ETP 1 from the yaml: the folding
   paper's Table 3 layout, which suggests the paper's VPP was 7). Expected, rounded figures, not
   logged ones. Qwen3 (best_practice/qwen3/readme.md): The H100 table gives the
   full layout (TP, CP, EP, PP, EDP, ETP, VPP, DP, FSDP, MBS, GBS, GA, recompute) with the step
   time and TFLOPS per GPU of Qwen3-235B-A22B on 256 H100: the step time is the target, and
   Megatron's 2025 count over it reproduces the printed TFLOPS to 0.5% on all five rows (a check
   of both the architecture and the convention). Forced load balancing is assumed for the two
   cross-node EP 32 rows (the H100 best-practice script of that layout sets it), dropless
   elsewhere. The long-context rows (16K-128K, forced and dropless) recompute whole MoE layers
   (`--recompute-modules layernorm moe`): skipped until a recompute mode matches. GB200 and GB300
   rows give TFLOPS only; the GB200 MXFP8 4K row needs activation offloading (skipped); the
   others use MXFP8 with forced balance. The PP 32 x VPP 3 row spreads 94 layers over 96 chunks
   with the embedding and the loss each taking a layer slot, which the layout cannot carry
   (skipped). Qwen3-Next-80B-A3B (Gated DeltaNet) cannot be loaded. The code version differs by
   row (moe_dev f3e6c5, main 1e057005, dev bbc762d5). EP all-to-all overlap (`ep-a2a-overlap`) and
   CUDA graphs are listed as features; the overlap is estimated as --moe-comm-overlap a2a
   (bench/runs.c), CUDA graphs are not modelled. The fp8 and MXFP8 runs pad the routing map
   (`moe-router-padding`, --moe-router-padding): sbatch_benchmarking.sh at e8650517 adds
   `--moe-router-padding-for-fp8` with PR=fp8 and `--moe-router-padding-for-quantization` with
   PR=mxfp8. The DISPATCHER=hybridep runs (GB200, GB300) list `hybridep` (--moe-flex-backend
   hybridep): the script adds `--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend
   hybridep --moe-hybridep-num-sms 32`.
4. **megatron_lm_dsv3_gb200** (NVIDIA/Megatron-LM 79e8592b, docs/discussions/deepseek-v3-gb200-
   optimization; removed the next day as a draft being updated). DeepSeek-V3 without MTP on 256
   GB200 (64 trays of 4 in NVL72 racks), MXFP8, TP 1, PP 8, VPP 4, EP 32, MBS 1, GBS 2048,
   sequence 4096, forced load balancing; TFLOPS per GPU after each of 13 software steps (494.46
   to 970.01). The layout is the same in every row; only the baseline (all-to-all, recompute of
   the dense MLPs and MLA up-projections, no CUDA graphs) and the final state (HybridEP, CUDA
   graphs, recompute of the expert activation and dense MLPs) are scored; the eleven steps
   between are kept, skipped. The FLOP count is Megatron's with its MLA term (read at 79e8592b).
   The final arguments come from the reproduce guide; that the baseline ran with forced balance,
   MXFP8 parameters and BF16 moments is assumed. The HybridEP rows list `hybridep` (the guide's
   `--moe-flex-dispatcher-backend hybridep`; the optimization note, section on HybridEP: the
   FP8 GEMM's row padding "is also essentially a D2D copy, and we also fuse it into the permute
   process"); the final state lists `moe-router-padding` (the guide's
   `--moe-router-padding-for-quantization`), the baseline does not (not shown for it).
5. **deepseek_v3_report** (arXiv:2412.19437v2). 180K H800 GPU-hours per trillion tokens, i.e.
   1,543 tokens/s per GPU averaged over the whole pre-training (14.8T tokens, the batch ramp from
   3,072 to 15,360 sequences of 4K included, and every overhead) on 2,048 H800: PP 16 (DualPipe),
   EP 64 over 8 nodes, ZeRO-1 DP, no TP, FP8 blockwise GEMMs, MTP depth 1. The implied step time
   at the final batch (19.9 s) is an average, not a measured step. Skipped while hwdb has no
   system of H800 GPUs (the script takes the first one there is); then estimated as Megatron-Core
   with the published degrees, trainplan's dualpipe schedule and the flex dispatcher (the
   report's node-limited dispatch, section 3.2.2: at most 4 nodes a token, IB to the GPU of the
   same in-node index, NVLink forwarding, 20 SMs, is what DeepEP's normal kernels do), so expect
   the estimate to be faster than this average.
6. **deepseek_v2_report** (arXiv:2405.04434). 172.8K H800 GPU-hours per trillion tokens (1,608
   tokens/s per GPU); PP 16 (zero-bubble), EP 8, ZeRO-1 DP; batch 2,304 to 9,216 of 4K. The GPU
   count is not published, so no step time: skipped even with an H800 system.

Not collected: torchtitan publishes no MoE benchmark table with layouts (its DeepSeek-V3 and
Llama 4 READMEs give none; issue #1558 shows a 512-GPU run as a screenshot); MegaBlocks
(arXiv:2211.15841) reports its end-to-end results as figures and relative speed-ups on 8 A100, and
DeepSpeed-MoE (arXiv:2201.05596) throughput without a reconstructible layout; the NeMo and
Megatron-Bridge performance summaries are held back for an independent check and were not read.
"""


def write_md(doc, path):
    runs = doc["runs"]
    out = [MD_HEAD]
    out.append("| source | runs | usable | skipped (why) | measured | FLOP convention | systems "
               "|\n|---|---:|---:|---|---|---|---|\n")
    for s in doc["sources"]:
        sid = s["source_id"]
        rs = [r for r in runs if r["source_id"] == sid]
        reasons = {}
        for r in rs:
            if r["skip"]:
                why = r["skip"].split(":")[0]
                reasons[why] = reasons.get(why, 0) + 1
        skipped = "; ".join("%d %s" % (n, w) for w, n in sorted(reasons.items())) or "none"
        systems = sorted({r["system"] for r in rs if r["system"]}
                         | {"(%s: not in hwdb)" % r["needs_system"]["gpu"] for r in rs
                            if r.get("needs_system")})
        out.append("| `%s` | %d | %d | %s | %s | %s | %s |\n" % (
            sid, len(rs), sum(1 for r in rs if not r["skip"]), skipped, s["measured"],
            s["flop_convention"], ", ".join(systems)))
    out.append("| all | %d | %d | | | | |\n" % (len(runs), sum(1 for r in runs if not r["skip"])))
    out.append("\nSources: " + "; ".join("`%s`: %s" % (s["source_id"], s["citation"])
                                          for s in doc["sources"]) + ".\n")
    out.append(MD_FORMULAS)
    for fid, f in doc["flop_formulas"].items():
        out.append("- `%s`: per iteration %s. %s; %s; %s attention; %s%s. Source: %s.\n" % (
            fid, f["per_iteration"], f["symbols"][0].upper() + f["symbols"][1:], f["passes"],
            f["attention"], f["counts"], "; " + f["mla"] if "mla" in f else "", f["source"]))
    out.append("\n## Models and parameter counts\n\n`ours` is trainplan's count of the model "
               "as `model show` loads it (unpadded vocabulary). DeepSeek's counts stay off "
               "until MLA and MTP are modelled (MLA is read as MHA).\n\n"
               "| model | from | ours (total) | ours (active) | published | difference |\n"
               "|---|---|---:|---:|---|---:|\n")
    seen = set()
    for r in runs:
        p = r["params"]
        if not p or r["model_name"] in seen:
            continue
        seen.add(r["model_name"])
        diff = "%+.2f%%%s" % (100 * p["rel_diff"], "" if p["within_rounding"] else
                              " **outside rounding**") if p["reported"] else "-"
        out.append("| %s | %s | %s | %s | %s | %s |\n" % (
            r["model_name"], p["model_source"], format(p["ours"], ","),
            format(p["ours_active"], ","), p["reported_as"], diff))
    out.append("\nPresets the model helper adds (`mixtral-8x22b`, `qwen2-57b-a14b`, "
               "`deepseek-v3`, ...) can replace the inline configs once their counts match "
               "these.\n")
    out.append(MD_DOUBTS)
    out.append("\n## Skipped runs\n\n")
    for r in runs:
        if r["skip"]:
            out.append("- `%s`: %s\n" % (r["id"], r["skip"]))
    with open(path, "w") as f:
        f.write("".join(out))


# ---- Megatron-LM's DeepSeek-V3 on GB200 (docs/discussions, 2025-11) --------------------------

def dsv3_gb200(r):
    out = base(r)
    assumed, derived = [], []
    name = r["model_name"]
    mdl = MODELS[name]
    out["model"] = mdl["config"]
    out["system"], out["gpu"] = "gb200-nvl72", "gb200"
    out["gpus"], out["nodes"] = r["total_gpus"], r["num_nodes"]
    tp, pp, ep, vpp = r["tp"], r["pp"], r["ep"], r["vpp"]
    dp = r["total_gpus"] // (tp * pp)
    ga = r["global_batch_size"] // (dp * r["micro_batch_size"])
    derived.append("dp = GPUs / (tp x pp); grad_accum_steps = GBS / (dp x MBS)")
    k = int(r["id"][-2:])
    feats = ["overlap-grad-reduce", "overlap-param-gather", "fp8-param-gather"]
    if k >= 5:
        # the guide's final state: --cuda-graph-scope attn moe_router moe_preprocess
        feats += ["cuda-graphs", "cuda-graph-impl=transformer_engine",
                  "cuda-graph-scope=attn,moe_router,moe_preprocess"]
    else:
        assumed.append("CUDA graphs: none (the history's rows before 'CUDA Graphs')")
    if r["moe_dispatcher"] == "HybridEP":
        feats.append("hybridep")
        derived.append("the flex dispatcher's HybridEP backend (feature hybridep): the "
                       "history's dispatcher column; the reproduce guide's "
                       "'--moe-flex-dispatcher-backend hybridep'")
    if k == 12:
        feats.append("moe-router-padding")
        derived.append("the router pads each expert's tokens for MXFP8 (feature "
                       "moe-router-padding): the reproduce guide's "
                       "'--moe-router-padding-for-quantization' (the final state only)")
    out["layout"] = moe_layout(
        tp=tp, pp=pp, vpp=vpp, cp=1, ep=ep, etp=r["etp"], dp=dp,
        micro_batch_size=r["micro_batch_size"], global_batch_size=r["global_batch_size"],
        grad_accum_steps=ga, seq_length=r["seq_length"], sequence_parallel=False,
        recompute="selective",
        recompute_variant="megatron-recompute-modules: " + r["recompute"].split(": ")[1],
        zero_stage=1, sharding="megatron-distributed-optimizer", precision="fp8",
        fp8_recipe="mxfp8", pipeline_schedule="interleaved-1f1b",
        moe_dispatcher=DISPATCHERS[r["moe_dispatcher"]], moe_imbalance=1.0, features=feats)
    derived.append("zero_stage 1, overlapped gradient reduce and parameter gather, MXFP8 "
                   "parameter all-gather: the reproduce guide's arguments")
    derived.append("moe_imbalance 1.0: the reproduce guide runs "
                   "--moe-router-force-load-balancing 'for performance benchmark'")
    assumed.append("forced balancing, MXFP8 and BF16 optimizer moments in every row of the "
                   "history: the guide gives the final arguments only")
    derived.append("recompute selective with the guide's --recompute-modules "
                   + r["recompute"].split(": ")[1] + " ('up_proj': mla_up_proj)")
    derived.append("pipeline_model_parallel_layout Et|(tt|)*30L: 32 chunks, the first the "
                   "embedding and one layer, 30 of two layers, the last the loss")
    out["layout"]["pipeline_model_parallel_layout"] = "Et|(tt|)*30L"
    f = dict(mdl["flops"], V=pad_to(mdl["vocab"], mdl["pad"], tp))
    F = flops("megatron_moe_2025", r["global_batch_size"], r["seq_length"], f)
    v = r["tflops_per_gpu"]
    out["target"] = {
        "kind": "tflops_per_gpu", "value": v, "flops_formula": "megatron_moe_2025",
        "vocab_for_flops": f["V"], "flops_per_iteration": F,
        "iteration_time_s": F / (v * 1e12 * r["total_gpus"]),
        "iteration_time_origin": "derived: flops_per_iteration / (value * 1e12 * gpus)"}
    out["also_published"] = {"feature_step": r["feature_step"]}
    out["skip"] = None if k in (0, 12) else (
        "intermediate software state: row %d of the optimisation history (same layout and "
        "model; only the baseline and the final state are scored)" % (k + 1))
    out["params_model"] = name
    return out, assumed, derived


HANDLERS = {
    "megatron_lm_dsv3_gb200": dsv3_gb200,"liu2025_moe_parallel_folding": folding, "megatron_lm_moe_readme": megatron_readme,
            "megatron_moe_modelzoo": modelzoo, "deepseek_v3_report": deepseek,
            "deepseek_v2_report": deepseek}

SOURCES = [  # source_id, citation, measured, FLOP convention
    ("liu2025_moe_parallel_folding",
     "Liu, Yan et al., 'MoE Parallel Folding', arXiv:2504.14960v2, Tables 2-5 (Appendix 6.4): "
     "Mixtral-8x22B, Qwen2-57B-A14B, Mixtral-8x22B-G8T8, Llama3-8x70B on 64-1024 H100 of Eos",
     "MFU per layout (Tables 3-5); model TFLOPS (Table 2, BF16 and FP8)",
     "`megatron_moe_2024` (assumed; peak 989.5)"),
    ("megatron_lm_moe_readme",
     "NVIDIA/Megatron-LM megatron/core/transformer/moe/README.md at 0b981f9c (MCore v0.8) and "
     "c230e0d7 (v0.9): headline Mixtral 8x7B TFLOPS and the reference mapping",
     "TFLOPS per GPU (headline)", "`megatron_moe_2024`"),
    ("megatron_moe_modelzoo",
     "yanring/Megatron-MoE-ModelZoo at e8650517, best_practice/qwen3/readme.md: Qwen3-235B-A22B "
     "on 256 H100, 256 GB200, 64 GB300; best_practice/mixtral/run_mixtral_8x22B.sh: "
     "Mixtral-8x22B on 128 H100",
     "step time and TFLOPS per GPU (Qwen3 H100 table); TFLOPS (long context, GB200, GB300; "
     "Mixtral's expected figures)",
     "`megatron_moe_2025` (causal)"),
    ("megatron_lm_dsv3_gb200",
     "NVIDIA/Megatron-LM at 79e8592b (2025-11-05), docs/discussions/deepseek-v3-gb200-"
     "optimization/: DeepSeek-V3 on 256 GB200, MXFP8, TP1 PP8 VPP4 EP32, from 494 to 970 "
     "TFLOPS/GPU over 13 software steps",
     "TFLOPS per GPU per optimisation step", "`megatron_moe_2025` with its MLA term"),
    ("deepseek_v3_report", "DeepSeek-AI, arXiv:2412.19437v2: 180K H800 GPU-hours per "
     "trillion tokens on 2048 H800", "GPU-hours per trillion tokens (whole pre-training)",
     "none needed"),
    ("deepseek_v2_report", "DeepSeek-AI, arXiv:2405.04434: 172.8K H800 GPU-hours per "
     "trillion tokens", "GPU-hours per trillion tokens", "none needed"),
]


def add_params(out, tp_exe):
    name = out.pop("params_model")
    mdl = MODELS.get(name) if name else None
    if out["model"] is None or mdl is None:
        out["params"] = None
        return None
    j = tp_exe.show(out["model"])
    rep = mdl["reported"]
    ours = j["params_total"]
    out["params"] = {"ours": ours, "ours_active": j["params_active"],
                     "num_experts": j["architecture"].get("num_experts", 0),
                     "model_source": mdl["source"]}
    if rep:
        diff = ours - rep[0]
        out["params"].update({"reported": rep[0], "reported_as": rep[1],
                              "reported_half_unit": rep[2], "rel_diff": diff / rep[0],
                              "within_rounding": abs(diff) <= rep[2] + 1e-9 * rep[0]})
    else:
        out["params"].update({"reported": None, "reported_as": "not published",
                              "within_rounding": None})
    return j


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trainplan", required=True, help="the trainplan binary")
    ap.add_argument("--input", default=os.path.join(HERE, "moe_runs.json"))
    ap.add_argument("--output", default=os.path.join(HERE, "moe_validation_runs.json"))
    args = ap.parse_args()
    tp_exe = Trainplan(args.trainplan)
    raw = open(args.input, "rb").read()
    runs = []
    for r in json.loads(raw)["runs"]:
        out, assumed, derived = HANDLERS[r["source_id"]](r)
        add_params(out, tp_exe)
        out["dropout"] = {"attention": 0.0, "hidden": 0.0}
        derived.append("dropout 0: the Megatron configs pass --attention-dropout 0.0 "
                       "--hidden-dropout 0.0 (ModelZoo yaml); the DeepSeek models have none")
        out["assumed"], out["derived"] = assumed, derived
        out["published_notes"] = r["notes"]
        check_layout(out)
        runs.append(out)
    doc = {
        "schema": "trainplan-validation-runs/1",
        "description": "The runs of moe_runs.json normalized for trainplan's estimator (see "
                       "moe_runs.md beside this file). null = not published: the estimator "
                       "searches it. Written by make_moe_runs.py; do not edit by hand. "
                       "Layout fields beyond validation_runs.json: ep, etp (null: searched; "
                       "etp = tp where the experts share the attention's TP), moe_dispatcher "
                       "(alltoall, allgather, flex), moe_imbalance (tokens of the busiest "
                       "expert over the mean; null: the estimator's default); "
                       "model_overrides: space_model fields the config cannot say "
                       "(capacity_factor); needs_system: the hwdb system a skipped run "
                       "waits for.",
        "generated_from": {"file": "moe_runs.json", "sha256": hashlib.sha256(raw).hexdigest()},
        "flop_formulas": FLOP_FORMULAS,
        "sources": [{"source_id": s, "citation": c, "measured": m, "flop_convention": f}
                    for s, c, m, f in SOURCES],
        "runs": runs,
    }
    with open(args.output, "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    write_md(doc, os.path.join(os.path.dirname(args.output), "moe_runs.md"))
    per = {}
    for r in runs:
        n = per.setdefault(r["source_id"], [0, 0])
        n[0] += 1
        n[1] += r["skip"] is None
    for s, (n, u) in per.items():
        print("%-32s %3d runs, %3d usable" % (s, n, u))
    print("%d runs, %d usable -> %s" % (len(runs), sum(1 for r in runs if not r["skip"]),
                                       args.output))


if __name__ == "__main__":
    main()
