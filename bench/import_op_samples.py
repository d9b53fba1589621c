#!/usr/bin/env python3
"""Copy measured operator samples into hwdb and list them in the GPU files.

Seed samples (Zhang et al. 2025, arXiv 2509.22832; MIT licence, notice
copied beside them) go to hwdb/data/measured/<gpu>/; the H100 samples that
bench/sampler measured are already there; XLA's measured GEMM tables
(Apache-2.0) are converted to our GEMM sample format (b,m,n,k,F_dur(us))
as XLA<arch>_gemm_<dtype>.csv. For each GPU, every sample file
whose operator trainplan models is added to the GPU file's "measured" list
(existing entries are replaced), so `trainplan op ...` and the estimator
find them. Deterministic: rerunning gives the same files.

usage: bench/import_op_samples.py [--shared ../shared] [--repo .]
"""
import argparse
import csv
import json
import os
import re
import shutil

# Operators trainplan models (estimator/samples.c est_sample_op_names).
OPS = ["linear1", "linear2", "linear3", "linear4", "linear_final",
       "flash_atten", "flash_atten_causal", "layernorm", "RMSlayernorm",
       "gelu", "res_add", "embedding", "parallel_cross_entropy_128", "RoPE",
       "softmax", "ScaledUpperTriangMaskedSoftmax", "gemm", "adam",
       "optimizer"]

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

XLA_CITATION = (
    "XLA GPU measured GEMM table default_matmul_perf_table.txtpb "
    "(openxla/xla, xla/service/gpu/model/, commit "
    "dc660322168302831d1cbc4c99683cd79671286e; gfx942 rows from ROCm/xla "
    "commit 106eb9b5957e231e49378c7d6c3b06005109709e), as extracted in "
    "shared/data/xla_perf_tables/matmul.csv. Copyright The OpenXLA Authors, "
    "Apache-2.0. kernel_time_ns of one GEMM, converted to microseconds.")

# XLA arch key -> (our GPU, {XLA dtype string: our dtype}). f32 GEMMs are
# left out (XLA may run them as TF32). gfx950 ("profiled MI350", SKU not
# named) goes to mi355x, the gfx950 part with the higher peak, so that no
# row is flagged as beating a peak it might not beat on the other SKU.
XLA = {
    "sm_90": ("h100-sxm", {"bf16xbf16->bf16": "bf16",
                           "f8e4m3fnxf8e4m3fn->bf16": "fp8"}),
    "sm_100_B200": ("b200", {"bf16xbf16->bf16": "bf16",
                             "f8e4m3fnxf8e4m3fn->bf16": "fp8"}),
    "gfx942": ("mi300x", {"bf16xbf16->bf16": "bf16",
                          "f8e4m3fnuzxf8e4m3fnuz->bf16": "fp8"}),
    "gfx950": ("mi355x", {"bf16xbf16->bf16": "bf16",
                          "f8e4m3fnxf8e4m3fn->bf16": "fp8"}),
}

NAME = re.compile(r"^(?P<gpu>[^_]+)_(?P<op>.+)_(?P<dtype>fp16|bf16|fp32|fp8)\.csv$")


def op_of(base):
    """(op, dtype) of a sample file name, or None if we do not model it."""
    m = NAME.match(base)
    if not m:
        return None
    op = m.group("op")
    return (op, m.group("dtype")) if op in OPS else None


def entries_for(measured_dir, rel_prefix, source_key):
    out = []
    for base in sorted(os.listdir(measured_dir)):
        hit = op_of(base)
        if hit:
            src = "xla_perf_tables" if base.startswith("XLA") else source_key
            out.append({"kind": "operator_samples", "op": hit[0],
                        "dtype": hit[1], "file": rel_prefix + base,
                        "source": src})
    return out


def convert_xla(shared, data):
    """Writes XLA<arch>_gemm_<dtype>.csv files; returns the GPUs touched."""
    rows = {}
    with open(os.path.join(shared, "data", "xla_perf_tables", "matmul.csv")) as f:
        for r in csv.DictReader(f):
            hit = XLA.get(r["arch_key"])
            if not hit or r["dtype"] not in hit[1]:
                continue
            key = (hit[0], r["arch_key"], hit[1][r["dtype"]])
            rows.setdefault(key, []).append(
                (int(r["b"]), int(r["m"]), int(r["n"]), int(r["k"]),
                 int(r["kernel_time_ns"]) / 1000.0))
    gpus = set()
    for (gpu, arch, dtype), rs in sorted(rows.items()):
        dst = os.path.join(data, "measured", gpu)
        os.makedirs(dst, exist_ok=True)
        name = "XLA%s_gemm_%s.csv" % (arch.replace("_", ""), dtype)
        with open(os.path.join(dst, name), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["b", "m", "n", "k", "F_dur(us)"])
            for b, m, n, k, us in sorted(rs):
                w.writerow([b, m, n, k, "%.3f" % us])
        gpus.add(gpu)
    return gpus


def update_gpu(path, entries, citations):
    with open(path) as f:
        doc = json.load(f)
    used = {e["source"] for e in entries}
    for key, text in citations.items():
        if key in used:
            doc.setdefault("sources", {})[key] = text
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
    cites = {"seed_samples": SEED_CITATION, "trainplan_sampler": OURS_CITATION,
             "xla_perf_tables": XLA_CITATION}
    xla_gpus = convert_xla(a.shared, data)
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
                   cites)
    for gpu in sorted(xla_gpus | {"h100-sxm"}):
        if gpu in (g for _, g in SEED):
            continue
        dst = os.path.join(data, "measured", gpu)
        update_gpu(os.path.join(data, "gpus", gpu + ".json"),
                   entries_for(dst, "../measured/%s/" % gpu,
                               "trainplan_sampler"), cites)


if __name__ == "__main__":
    main()
