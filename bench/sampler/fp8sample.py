#!/usr/bin/env python3
"""fp8sample.py: an fp8 GEMM's time by scaling recipe on the GPU it runs on.

Per shape (m, n, k), forward, bf16 output, through torch._scaled_mm (cuBLASLt):
  tensor     one fp32 scale per operand (per-tensor, as TE's delayed and current scaling)
  row        a scale per row of A and per column of B
  block      A scaled per 1 x 128 along K, B per 128 x 128 (TE's Float8BlockScaling and
             DeepSeek-V3's recipe, activations x weights; cuBLASLt's Hopper block scaling)
  block1d    both operands per 1 x 128 along K (that recipe's weight-gradient GEMM)
and the bf16 GEMM of the same shape. A recipe the build refuses is recorded with its error,
trying the scale layouts cuBLASLt may want (row- or column-major scale tensors) in turn.

Why: trainplan's estimator slows an fp8 GEMM with blockwise scaling on Hopper by a factor it
derived across two sources (estimator/iter_gemm.c, EST_FP8_BLOCKWISE_HOPPER_SLOWDOWN = 1.33);
this measures it. Timing: opsample.Bench.measure (CUDA events behind a spin kernel, trimmed
mean of 10). Inputs torch.randn cast to float8_e4m3fn, scales 1.

usage: python3 bench/sampler/fp8sample.py --out DIR     (about 30 s on an H200)
       python3 bench/sampler/fp8sample.py --list        (the shapes, no GPU needed)
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opsample  # noqa: E402

# (m, n, k): DeepSeek-V3's dense GEMM shapes at 4096 tokens (DeepGEMM's README table rows:
# n, k of its "Normal GEMMs for dense models"), and squares
SHAPES = [(4096, 2112, 7168), (4096, 24576, 1536), (4096, 32768, 512), (4096, 7168, 16384),
          (4096, 4096, 7168), (4096, 7168, 2048), (16384, 7168, 16384), (16384, 4096, 7168),
          (4096, 4096, 4096), (8192, 8192, 8192)]
RECIPES = ["bf16", "tensor", "row", "block", "block1d"]


def scale_layouts(torch, recipe, m, n, k, dev):
    """Candidate (scale_a, scale_b) pairs for a recipe, in the order tried."""
    kb, nb = -(-k // 128), -(-n // 128)
    one = lambda *s: torch.ones(*s, device=dev, dtype=torch.float32)  # noqa: E731
    if recipe == "tensor":
        return [(one(()), one(()))]
    if recipe == "row":
        return [(one(m, 1), one(1, n))]
    if recipe == "block":
        return [(one(kb, m).t(), one(nb, kb).t()), (one(m, kb), one(kb, nb)),
                (one(kb, m).t(), one(kb, nb)), (one(m, kb), one(nb, kb).t())]
    if recipe == "block1d":
        return [(one(kb, m).t(), one(kb, n)), (one(m, kb), one(n, kb).t()),
                (one(kb, m).t(), one(n, kb).t()), (one(m, kb), one(kb, n))]
    raise ValueError(recipe)


def public_api(torch, bench, r, x8, w8, m, n, k, dev, prov, last):
    """torch.nn.functional.scaled_mm with named scaling types (PyTorch >= 2.10), where the
    private entry point refused every layout."""
    try:
        import torch.nn.functional as F
        st = F.ScalingType
        ra = st.BlockWise1x128
        rb = st.BlockWise128x128 if r == "block" else st.BlockWise1x128
    except Exception as e:  # noqa: BLE001
        return None, f"{last}; no public scaled_mm: {type(e).__name__}: {str(e)[:120]}"
    for i, (sa, sb) in enumerate(scale_layouts(torch, r, m, n, k, dev)):
        try:
            fn = lambda: (F.scaled_mm(x8, w8.t(), sa, ra, sb, rb,  # noqa: E731
                                      output_dtype=torch.bfloat16),)
            fn()
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001
            last = f"public: {type(e).__name__}: {str(e)[:200]}"
            continue
        prov["layouts"][r] = f"public {i}"
        fu, _, _ = bench.measure(fn, [], False)
        return fu, None
    return None, last


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="fp8samples")
    p.add_argument("--list", action="store_true")
    p.add_argument("--runs", type=int, default=10)
    a = p.parse_args(argv)
    if a.list:
        for s in SHAPES:
            print("m=%d n=%d k=%d" % s)
        return 0
    import torch
    if not torch.cuda.is_available():
        print("fp8sample: no CUDA device visible; nothing measured", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    bench = opsample.bf16_bench(a.runs)
    dev = torch.device("cuda")
    f8 = torch.float8_e4m3fn
    prov = opsample.run_provenance(
        "trainplan fp8 GEMM by scaling recipe (bench/sampler/fp8sample.py)", torch)
    prov.update({"layouts": {}, "errors": {}})
    out = open(os.path.join(a.out, "fp8_gemm.csv"), "w")
    out.write("m,n,k,recipe,F_us,F_tflops\n")
    t0 = time.time()
    for m, n, k in SHAPES:
        x = torch.randn((m, k), device=dev)
        w = torch.randn((n, k), device=dev)
        xb, wb = x.to(torch.bfloat16), w.to(torch.bfloat16)
        x8, w8 = x.to(f8), w.to(f8)
        del x, w
        for r in RECIPES:
            try:
                if r == "bf16":
                    fn = lambda: (torch.mm(xb, wb.t()),)  # noqa: E731
                    fu, _, _ = bench.measure(fn, [], False)
                else:
                    fu, last = None, None
                    for i, (sa, sb) in enumerate(scale_layouts(torch, r, m, n, k, dev)):
                        try:
                            fn = lambda: (torch._scaled_mm(  # noqa: E731
                                x8, w8.t(), scale_a=sa, scale_b=sb,
                                out_dtype=torch.bfloat16),)
                            fn()
                            torch.cuda.synchronize()
                        except Exception as e:  # noqa: BLE001 - the next layout
                            last = f"{type(e).__name__}: {str(e)[:200]}"
                            continue
                        prov["layouts"][r] = i
                        fu, _, _ = bench.measure(fn, [], False)
                        break
                    if fu is None and r in ("block", "block1d"):
                        fu, last = public_api(torch, bench, r, x8, w8, m, n, k, dev, prov,
                                              last)
                    if fu is None:
                        prov["errors"][r] = last
                        continue
            except Exception as e:  # noqa: BLE001
                prov["errors"][f"{r} {m}x{n}x{k}"] = f"{type(e).__name__}: {str(e)[:200]}"
                continue
            out.write(f"{m},{n},{k},{r},{fu:.2f},{2.0 * m * n * k / fu / 1e6:.1f}\n")
            out.flush()
        print(f"[{time.time() - t0:5.1f}s] {m}x{n}x{k}", flush=True)
    out.close()
    prov["clocks_end"] = opsample.gpu_query(opsample.SMI_DYNAMIC)
    prov["wall_s"] = round(time.time() - t0, 1)
    with open(os.path.join(a.out, "provenance.json"), "w") as f:
        json.dump(prov, f, indent=1)
    print(json.dumps({"layouts": prov["layouts"], "errors": prov["errors"]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
