#!/usr/bin/env python3
"""Runs the seed paper's configurations (Zhang et al. 2025) through
`trainplan estimate` and writes bench/results/seed_configs.md.

Llemma-7B PP4-TP2-DP2, LLaMA-13B PP4-TP8-DP2, GPT-20B (gpt-neox-20b)
PP4-TP8-DP4, micro-batch 4, sequence 2048, fp16, no SP, no recompute, no
distributed optimizer, on perlmutter-80g and vista. The global batch is
ASSUMED to be 16 micro-batches per DP rank (the seed README does not give
it).

Usage: python3 bench/seed_configs.py [--trainplan build/trainplan] [--md OUT]
Standard library only.
"""
import argparse
import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = [("llemma-7b", 2, 4, 2), ("llama-13b", 8, 4, 2), ("gpt-neox-20b", 8, 4, 4)]
SYSTEMS = ["perlmutter-80g", "vista"]
MBS, SEQ, MICRO_PER_DP = 4, 2048, 16
TERMS = ["compute_fwd_s", "compute_bwd_s", "tp_comm_s", "pp_p2p_s", "pp_bubble_s",
         "dp_comm_exposed_s", "optimizer_s"]

HEADER = """# The seed paper's configurations (Zhang et al. 2025) under trainplan estimate

Llemma-7B PP4-TP2-DP2, LLaMA-13B PP4-TP8-DP2, GPT-20B (gpt-neox-20b) PP4-TP8-DP4, micro-batch 4, sequence 2048, fp16, no SP, no recompute, no distributed optimizer; global batch = 16 micro-batches per DP rank (ASSUMED: the seed README does not give it). TP 8 spans nodes on both systems (Perlmutter has 4 GPUs per node, Vista 1), as the paper ran it. Seconds per iteration; the seed data has no measured iteration times to compare with. Regenerate with `python3 bench/seed_configs.py`.

| system | model | GPUs | iteration s | MFU % | memory GiB | fwd | bwd | TP comm | PP p2p | bubble | DP exposed | optimizer |
|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trainplan", default=os.path.join(HERE, "..", "build", "trainplan"))
    ap.add_argument("--md", default=os.path.join(HERE, "results", "seed_configs.md"))
    args = ap.parse_args()
    out = [HEADER]
    for sysname in SYSTEMS:
        for model, tp, pp, dp in CONFIGS:
            gpus = tp * pp * dp
            cmd = [args.trainplan, "estimate", "-m", model, "--system", sysname,
                   "-g", str(gpus), "-t", str(tp), "-p", str(pp), "-c", "1",
                   "-b", str(MBS), "-B", str(MBS * dp * MICRO_PER_DP), "-s", str(SEQ),
                   "--num-virtual-stages-per-pipeline-rank", "1", "--no-sequence-parallel",
                   "-r", "none", "--no-use-distributed-optimizer", "--precision", "fp16",
                   "--format", "json"]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode not in (0, 1):
                raise SystemExit("seed_configs: %s failed: %s" % (" ".join(cmd), r.stderr))
            d = json.loads(r.stdout)
            b = d["breakdown"]
            out.append("| %s | %s | %d | %.3f | %.1f | %.1f | %s |\n" % (
                sysname, model, gpus, d["iteration_time_s"], 100 * d["mfu"],
                d["peak_memory_bytes"] / 2**30, " | ".join("%.3f" % b[t] for t in TERMS)))
    with open(args.md, "w") as f:
        f.write("".join(out))
    print("".join(out), end="")


if __name__ == "__main__":
    main()
