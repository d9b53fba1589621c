#!/usr/bin/env python3
"""Copy measured operator samples into hwdb and list them in the GPU files.

Seed samples (Zhang et al. 2025, arXiv 2509.22832; MIT licence, notice
copied beside them) go to hwdb/data/measured/<gpu>/; the H100 samples that
bench/sampler measured are already there. For each GPU, every sample file
whose operator trainplan models is added to the GPU file's "measured" list
(existing entries are replaced), so `trainplan op ...` and the estimator
find them. Deterministic: rerunning gives the same files.

usage: bench/import_op_samples.py [--shared ../shared] [--repo .]
"""
import argparse
import json
import os
import re
import shutil

# Operators trainplan models (estimator/samples.c est_sample_op_names).
OPS = ["linear1", "linear2", "linear3", "linear4", "linear_final",
       "flash_atten", "flash_atten_causal", "layernorm", "RMSlayernorm",
       "gelu", "res_add", "embedding", "parallel_cross_entropy_128", "RoPE",
       "softmax", "gemm", "adam", "optimizer"]

# (source folder under shared/data/seed_samples, GPU file name, source key)
SEED = [("Perlmutter/operator", "a100-80gb"), ("Vista/operator", "gh200")]

SEED_CITATION = (
    "Measured samples released with Zhang et al., 'Efficient Fine-Grained "
    "GPU Performance Modeling for Distributed Deep Learning of LLM', "
    "arXiv 2509.22832 (HiPC 2025): repository DebarghaG/estimate-train-time, "
    "commit 1ac4d5e, src/estimate_train_time/data/regressors/ (MIT licence, "
    "notice in LICENSE.source beside the copies). fp16, microseconds, "
    "trimmed mean of 10 runs.")
OURS_CITATION = (
    "Measured by trainplan's bench/sampler/opsample.py on one NVIDIA H100 "
    "80GB HBM3 (SXM) of this project's lent machine, 2026-11-23; protocol "
    "and provenance in hwdb/data/measured/h100-sxm/README.md and "
    "provenance.json.")

NAME = re.compile(r"^(?P<gpu>[^_]+)_(?P<op>.+)_(?P<dtype>fp16|bf16|fp32|fp8)\.csv$")


def op_of(base):
    """(op, dtype) of a sample file name, or None if we do not model it."""
    m = NAME.match(base)
    if not m:
        return None
    op = m.group("op")
    if op == "gemm":
        return None
    if op.startswith("gemm") or op.startswith("adam"):
        op = op.split("_")[0]
    return (op, m.group("dtype")) if op in OPS else None


def entries_for(measured_dir, rel_prefix, source_key):
    out = []
    for base in sorted(os.listdir(measured_dir)):
        hit = op_of(base)
        if hit:
            out.append({"kind": "operator_samples", "op": hit[0],
                        "dtype": hit[1], "file": rel_prefix + base,
                        "source": source_key})
    return out


def update_gpu(path, entries, source_key, citation):
    with open(path) as f:
        doc = json.load(f)
    doc.setdefault("sources", {})[source_key] = citation
    doc["measured"] = entries
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default="../shared")
    ap.add_argument("--repo", default=".")
    a = ap.parse_args()
    data = os.path.join(a.repo, "hwdb", "data")
    seed_root = os.path.join(a.shared, "data", "seed_samples")
    for folder, gpu in SEED:
        dst = os.path.join(data, "measured", gpu)
        os.makedirs(dst, exist_ok=True)
        src = os.path.join(seed_root, folder)
        for base in sorted(os.listdir(src)):
            if op_of(base):
                shutil.copyfile(os.path.join(src, base), os.path.join(dst, base))
        shutil.copyfile(os.path.join(seed_root, "LICENSE.source"),
                        os.path.join(dst, "LICENSE.source"))
        update_gpu(os.path.join(data, "gpus", gpu + ".json"),
                   entries_for(dst, "../measured/%s/" % gpu, "seed_samples"),
                   "seed_samples", SEED_CITATION)
    h100 = os.path.join(data, "measured", "h100-sxm")
    update_gpu(os.path.join(data, "gpus", "h100-sxm.json"),
               entries_for(h100, "../measured/h100-sxm/", "trainplan_sampler"),
               "trainplan_sampler", OURS_CITATION)


if __name__ == "__main__":
    main()
