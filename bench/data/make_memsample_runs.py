#!/usr/bin/env python3
"""make_memsample_runs.py: turn memsample.py's measurements into memory_runs.json rows.

Reads bench/data/memsample_h100/mem_samples.jsonl and provenance.json (written on an H100 by
bench/sampler/memsample.py) and replaces the rows of source trainplan_h100_memsample in
bench/data/memory_runs.json: one row per configuration and measured quantity
(max_memory_allocated, max_memory_reserved, nvidia-smi's figure for the process). The rest of
the file is kept as it is.  Standard library only; same inputs, same bytes.

  python3 bench/data/make_memsample_runs.py
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "sampler"))
import memsample  # noqa: E402  -- the configurations' model description

SOURCE = "trainplan_h100_memsample"
DIR = os.path.join(HERE, "memsample_h100")
MIB = 1 << 20

KINDS = (("alloc", "max_memory_allocated", "max_memory_allocated",
          "torch.cuda.max_memory_allocated() over the three steps (the peak of each phase, "
          "reset between phases, the largest kept), the cuBLAS workspace PyTorch allocates "
          "before the model included"),
         ("resv", "max_memory_reserved", "max_memory_reserved",
          "torch.cuda.max_memory_reserved() over the three steps"),
         ("smi", "nvidia_smi", "smi_process",
          "NVML's used memory of the process (nvidia-smi's process table) after the three "
          "steps, with the allocator's cache still held"))


def source_entry(prov):
    sw = prov["software"]
    return {
        "what": "Measured on the development workplace's H100 by bench/sampler/memsample.py: "
                "a Llama-style decoder of 2-8 layers (widths 2048 with a 32,000 vocabulary, or "
                "Llama 3 8B's 4096/14336/128,256 with 8 key-value heads) trained for three "
                "steps as torchtitan trains it, eager or with each block compiled: FSDP2 fully_shard "
                "per block and at the root over one rank, bf16 compute on fp32 parameters with "
                "fp32 gradient reduction (or pure bf16), fused AdamW, gradient clipping, "
                "flash SDPA, cross entropy on fp32 logits; activation checkpointing none, "
                "full per block, or torchtitan's per-op selective policy; "
                "expandable_segments on (torchtitan's launcher sets it) or off. "
                "One fresh process per configuration.",
        "where": "bench/data/memsample_h100 (mem_samples.jsonl, provenance.json, run_log.txt); "
                 "%s, driver %s, PyTorch %s, CUDA %s, NCCL %s; %s to %s" % (
                     sw.get("gpu"), sw.get("nvidia_smi", "").split(", ")[1]
                     if sw.get("nvidia_smi") else "?", sw.get("torch"), sw.get("cuda"),
                     sw.get("nccl"), prov["start_utc"], prov["end_utc"]),
        "measures": "max_memory_allocated, max_memory_reserved and nvidia_smi, each row saying "
                    "which",
    }


def rows(samples):
    out = []
    for r in samples:
        if r.get("error"):
            continue
        c = r["config"]
        features = ["flash-attention"]
        if c.get("compile"):
            # memsample.py compiles each block, not the loss (torchtitan
            # before pytorch/torchtitan#1033 did the same).
            features.insert(0, "torch.compile")
            features.append("eager-loss")
        if c.get("wrap") == "root":
            features.append("fsdp-root-embeddings")
        if c.get("gqa") == "native":
            # keys and values to SDPA unrepeated (enable_gqa), as
            # torchtitan since pytorch/torchtitan@ff0829c10
            features.append("gqa-native")
        layout = {
            "tp": 1, "pp": 1, "vpp": 1, "cp": 1, "ep": 1, "dp": 1,
            "micro_batch_size": c["mbs"], "global_batch_size": c["mbs"],
            "seq_length": c["seq"], "sequence_parallel": False,
            "recompute": {"none": "none", "full": "full", "op": "selective"}[c["ac"]],
            "recompute_variant": "torchtitan-op-sac" if c["ac"] == "op" else None,
            "recompute_method": "uniform" if c["ac"] == "full" else None,
            "recompute_num_layers": 1 if c["ac"] == "full" else None,
            "zero_stage": 3, "sharding": "fsdp2", "precision": "bf16", "fp8_recipe": None,
            "pipeline_schedule": "none", "framework": "torchtitan",
            "framework_version": "bench/sampler/memsample.py (torchtitan's training loop "
                                 "written from its description), PyTorch 2.11.0",
            "features": features, "optimizer": "adamw", "grad_reduce_fp32": True,
            # PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True or unset
            "expandable_segments": bool(c["expandable"]),
        }
        for short, kind, field, when in KINDS:
            v = r.get(field)
            if not v:
                continue
            row = {
                "id": "h100-memsample-%s-%s" % (r["id"], short),
                "source_id": SOURCE,
                "ref": "bench/data/memsample_h100/mem_samples.jsonl, id %s" % r["id"],
                "quote": "\"%s\": %d (bytes)" % (field, v),
                "model": memsample.hf_config(c),
                "system": "eos",
                "gpus": 1,
                "layout": layout,
                "dropout": {"attention": 0.0, "hidden": 0.0},
                "measured": {"kind": kind, "value": round(v / MIB, 3), "unit": "MiB",
                             "rank": "the only rank", "pp_stage": None, "when": when},
                "assumed": ["system eos: a DGX H100 80GB; the GPU measured is an H100 80GB "
                            "HBM3 (81,559 MiB) alone in a VM"],
            }
            if c.get("gqa") == "native":
                row["notes"] = ("keys and values passed to SDPA unrepeated (enable_gqa); "
                                "torchtitan repeats them, as the estimate assumes")
            if c["params"] == "bf16":
                row["skip"] = ("pure bf16 (parameters, gradients and Adam states in bf16, "
                               "no fp32 master) is not a layout trainplan models")
            out.append(row)
    return out


def main():
    with open(os.path.join(DIR, "provenance.json")) as f:
        prov = json.load(f)
    with open(os.path.join(DIR, "mem_samples.jsonl")) as f:
        samples = [json.loads(line) for line in f if line.strip()]
    path = os.path.join(HERE, "memory_runs.json")
    with open(path) as f:
        d = json.load(f)
    d["sources"][SOURCE] = source_entry(prov)
    d["runs"] = [r for r in d["runs"] if r["source_id"] != SOURCE] + rows(samples)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(json.dumps(d, indent=1, ensure_ascii=False))
    os.replace(tmp, path)
    print("%s: %d rows of %s" % (path, sum(r["source_id"] == SOURCE for r in d["runs"]),
                                SOURCE))
    return 0


if __name__ == "__main__":
    sys.exit(main())
