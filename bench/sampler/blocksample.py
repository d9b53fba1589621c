#!/usr/bin/env python3
"""blocksample.py: one transformer block's forward, backward, and backward under activation
checkpointing, timed whole on the GPU it runs on.

The block is llm-foundry's MPT block as its H100 benchmark configurations run it (LayerNorm
without bias, one fused QKV projection, causal attention through PyTorch SDPA's flash backend,
output projection, residual; LayerNorm, up-projection x4, GELU, down-projection, residual; no
bias, no dropout, bf16 weights and activations). Per shape (hidden, heads, sequence, micro-batch):

  F_us        forward
  B_us        backward (autograd, from the saved activations)
  B_ckpt_us   backward of the block wrapped in torch.utils.checkpoint (use_reentrant=False):
              the forward's recomputation and the backward
  kernels     forward and backward kernel counts (torch.profiler)

Why: trainplan's estimator times full recomputation as a second forward; llm-foundry's
checkpointed H100 runs come out 8-15 % too slow in it where its runs without checkpointing do
not (bench/results/validate_runs.md). B_ckpt_us - B_us against F_us is that mechanism's own
evidence, and the three times against the estimator's operator sums the block's.

Timing: opsample.Bench.measure (CUDA events behind a spin kernel, trimmed mean of 10; the
backward timed from a fresh forward each run). Inputs torch.randn, weights scaled by
fan_in^-1/2.

usage: python3 bench/sampler/blocksample.py --out DIR     (about a minute on an H200)
       python3 bench/sampler/blocksample.py --list        (the shapes, no GPU needed)
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opsample  # noqa: E402

# (name, hidden, heads, sequence, micro-batch): llm-foundry's MPT sizes (its
# scripts/train/yamls/pretrain/mpt-*.yaml: d_model, n_heads) at the H100 benchmark table's
# sequence 2048 and micro-batches
SHAPES = [("mpt-1b", 2048, 16, 2048, 20), ("mpt-3b", 2560, 20, 2048, 8),
          ("mpt-7b", 4096, 32, 2048, 6), ("mpt-13b", 5120, 40, 2048, 2),
          ("mpt-13b", 5120, 40, 2048, 16), ("mpt-30b", 7168, 64, 2048, 3),
          ("mpt-30b", 7168, 64, 2048, 8), ("mpt-70b", 8192, 64, 2048, 2),
          ("mpt-70b", 8192, 64, 2048, 8)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="blocksamples")
    p.add_argument("--list", action="store_true")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--quick", action="store_true", help="the first two shapes: a smoke test")
    a = p.parse_args(argv)
    shapes = SHAPES[:2] if a.quick else SHAPES
    if a.list:
        for s in shapes:
            print("%s hidden %d heads %d seq %d mbs %d" % s)
        return 0
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.checkpoint import checkpoint
    if not torch.cuda.is_available():
        print("blocksample: no CUDA device visible; nothing measured", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    bench = opsample.bf16_bench(a.runs)
    dev = torch.device("cuda")

    class Block(nn.Module):
        def __init__(s, d, h):
            super().__init__()
            s.h = h
            s.n1 = nn.LayerNorm(d, bias=False)
            s.n2 = nn.LayerNorm(d, bias=False)
            s.qkv = nn.Linear(d, 3 * d, bias=False)
            s.o = nn.Linear(d, d, bias=False)
            s.up = nn.Linear(d, 4 * d, bias=False)
            s.down = nn.Linear(4 * d, d, bias=False)

        def forward(s, x):
            b, l, d = x.shape
            q, k, v = s.qkv(s.n1(x)).view(b, l, 3, s.h, d // s.h).unbind(2)
            y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                               v.transpose(1, 2), is_causal=True)
            x = x + s.o(y.transpose(1, 2).reshape(b, l, d))
            return x + s.down(F.gelu(s.up(s.n2(x))))

    prov = opsample.run_provenance(
        "trainplan transformer block timing (bench/sampler/blocksample.py)", torch)
    prov.update({"sdpa_backend": "flash (torch.nn.attention.sdpa_kernel(SDPBackend."
                 "FLASH_ATTENTION))", "errors": {}})
    out = open(os.path.join(a.out, "block.csv"), "w")
    out.write("model,hidden,heads,seq,mbs,F_us,B_us,B_ckpt_us,F_kernels,B_kernels\n")
    from torch.nn.attention import sdpa_kernel, SDPBackend
    t0 = time.time()
    for name, d, h, l, b in shapes:
        try:
            blk = Block(d, h).to(device=dev, dtype=torch.bfloat16)
            x = torch.randn((b, l, d), device=dev, dtype=torch.bfloat16, requires_grad=True)
            leaves = [x] + list(blk.parameters())
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                fu, bu, _ = bench.measure(lambda: (blk(x),), leaves, True)
                cf, cb, _ = bench.measure(
                    lambda: (checkpoint(blk, x, use_reentrant=False),), leaves, True)
                from torch.profiler import profile, ProfilerActivity
                gy = torch.randn((b, l, d), device=dev, dtype=torch.bfloat16)
                with profile(activities=[ProfilerActivity.CUDA]) as pf:
                    y = blk(x)
                    torch.cuda.synchronize()
                nf = sum(1 for e in pf.events()
                         if e.device_type == torch.autograd.DeviceType.CUDA)
                with profile(activities=[ProfilerActivity.CUDA]) as pb:
                    y.backward(gy)
                    torch.cuda.synchronize()
                nb = sum(1 for e in pb.events()
                         if e.device_type == torch.autograd.DeviceType.CUDA)
            out.write(f"{name},{d},{h},{l},{b},{fu:.2f},{bu:.2f},{cb:.2f},{nf},{nb}\n")
            out.flush()
            print(f"[{time.time() - t0:5.1f}s] {name} mbs {b}: fwd {fu:.0f} bwd {bu:.0f} "
                  f"ckpt bwd {cb:.0f} us (ckpt fwd {cf:.0f})", flush=True)
            del blk, x, leaves
            torch.cuda.empty_cache()
        except Exception as e:  # noqa: BLE001 - the next shape
            prov["errors"][f"{name} {b}"] = f"{type(e).__name__}: {str(e)[:200]}"
            torch.cuda.empty_cache()
    out.close()
    prov["clocks_end"] = opsample.gpu_query(opsample.SMI_DYNAMIC)
    prov["wall_s"] = round(time.time() - t0, 1)
    with open(os.path.join(a.out, "provenance.json"), "w") as f:
        json.dump(prov, f, indent=1)
    print(json.dumps(prov["errors"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
