#!/usr/bin/env python3
"""moesample.py: measure what a mixture-of-experts layer and a small-kernel host cost on
the GPU and host it runs on (issue 29, item 5).

Sections (--sections, default all, in this order):

  grouped   the expert MLP's GEMMs at MoE shapes (models below, their expert counts per rank
            and tokens per expert, balanced and skewed), two ways: one dense GEMM of all the
            rank's rows (what trainplan's est_grouped_gemm times) and PyTorch's grouped GEMM
            (torch._grouped_mm, torchtitan's kernel); forward and backward (dgrad + wgrad
            through autograd), and the host's time per call of the grouped one
  cublas    the same cases as Transformer Engine's GroupedLinear runs them on Hopper in
            16 bits: one cuBLAS GEMM per expert into slices of one preallocated output,
            spread round-robin over 1 or 4 CUDA streams (TE's num_gemm_streams, 4), forward,
            dgrad and wgrad timed apart (each expert's weight and gradient its own tensor)
  sweep     rows per expert from 32 to 4096 at three expert shapes (DeepSeek-V3, Qwen3-30B,
            Mixtral), dense against torch._grouped_mm against cuBLAS on 4 streams: where a
            grouped GEMM leaves the dense GEMM's time for its weights' memory traffic
  fp8       the same forward GEMMs in fp8 with row-wise scales, dense (torch._scaled_mm)
            against grouped (torch._scaled_grouped_mm), where the build has them
  router    Megatron-Core's unfused TopKRouter on the rank's tokens: the gating GEMM, top-k,
            fp32 softmax, the routing map's scatters, the load-balancing loss
            (moe/router.py, moe/moe_utils.py topk_softmax_with_capacity,
            switch_load_balancing_loss_func), forward and backward
  permute   Megatron-Core's unfused token permutation and its inverse (moe_utils.py permute:
            the routing map's transpose, masked_select of token indices, index_select;
            unpermute: the probabilities' product and scatter_add), forward and backward
  breakdown the router's, permute's and unpermute's kernels one by one (torch.profiler: name,
            calls and summed time per pass) at three of the cases above
  launch    the host's time per call with the GPU kept busy (a tiny add, F.linear,
            nn.Linear forward, its forward + backward, rms_norm), the GPU's time per tiny
            kernel back to back, and a CUDA graph's replay (host per replay, GPU per kernel)
  compiled  one torchtitan-style Llama block (RMSNorm, q/k/v/o, complex RoPE, SDPA, SwiGLU),
            small so the host bounds it, eager against torch.compile: the host's time per
            forward and per forward + backward, and the kernels each issues

Each section writes its rows as it measures them (CSV, flushed) and provenance.json is
rewritten after each section, so a run stopped by SIGINT (timeout -s INT) keeps what it has.
GPU times use opsample.py's protocol (CUDA events around a batch queued behind a spin kernel,
trimmed mean of --runs, re-timed when spread); kernel times and counts come from
torch.profiler (the kernels' own durations summed, memory copies and sets included);
host times are wall time per call while a spin kernel keeps the GPU busy, so the host never
waits for it (the median of --host-batches batches).

The pure-Python parts (cases, splits, statistics, CSV) import no torch, so that
test_moesample.py runs them on a machine without a GPU.
"""
import argparse
import csv
import datetime
import gc
import json
import math
import os
import platform
import random
import shlex
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opsample  # noqa: E402  (the timing protocol, gpu_query, trimmed_mean, CsvSink)

SECTIONS = ["grouped", "cublas", "sweep", "fp8", "router", "permute", "breakdown", "launch",
            "compiled"]

# MoE models: (name, hidden, expert ffn, experts, top-k), from each model's config.json
# (HuggingFace: mistralai/Mixtral-8x7B-v0.1, Qwen/Qwen2-57B-A14B, deepseek-ai/DeepSeek-V3,
# Qwen/Qwen3-30B-A3B, allenai/OLMoE-1B-7B-0924, openai/gpt-oss-120b).
MODELS = [
    ("mixtral-8x7b", 4096, 14336, 8, 2),
    ("qwen2-57b-a14b", 3584, 2560, 64, 8),
    ("deepseek-v3", 7168, 2048, 256, 8),
    ("qwen3-30b-a3b", 2048, 768, 128, 8),
    ("olmoe-1b-7b", 2048, 1024, 64, 8),
    ("gpt-oss-120b", 2880, 2880, 128, 4),
]
# (tokens per rank and micro-batch, expert-parallel sizes) per model
TOKENS = {"mixtral-8x7b": (8192, (1, 4, 8)), "qwen2-57b-a14b": (4096, (1, 8)),
          "deepseek-v3": (4096, (8, 32, 64)), "qwen3-30b-a3b": (4096, (1, 8, 32)),
          "olmoe-1b-7b": (4096, (1, 8)), "gpt-oss-120b": (4096, (1, 8, 32))}
SKEW = 0.25  # the skewed split's Dirichlet concentration is 1 / SKEW
ALIGN_M = 16  # rows per expert padded to this (torchtitan pads to 16 for bf16 grouped GEMMs)

# router and permutation cases: (tokens, hidden, experts, top-k)
ROUTER_CASES = [(4096, 4096, 8, 2), (16384, 4096, 8, 2), (4096, 2048, 64, 8),
                (16384, 2048, 64, 8), (4096, 2048, 128, 8), (16384, 2048, 128, 8),
                (4096, 7168, 256, 8), (16384, 7168, 256, 8)]


def grouped_cases(quick=False):
    """The grouped-GEMM cases: dicts of model, hidden, ffn, local experts (nle), rows per
    expert on average, tokens, top-k, ep.  With EP ranks each holding T tokens, the T*EP*k
    routed rows spread over E experts: each expert gets T*k*EP/E rows, and the rank's E/EP
    local experts T*k rows in all."""
    out = []
    for name, h, f, e, k in MODELS:
        t, eps = TOKENS[name]
        for ep in eps:
            if e % ep:
                continue
            nle = e // ep
            rpe = t * k * ep // e
            out.append({"model": name, "hidden": h, "ffn": f, "experts": e, "topk": k,
                        "tokens": t, "ep": ep, "nle": nle, "rows_per_expert": rpe})
    if quick:
        out = [c for c in out if c["nle"] * c["rows_per_expert"] * c["hidden"] <= 2 ** 26][:3]
    return out


def split_rows(total, n, skew, seed=0, align=ALIGN_M):
    """total rows over n experts, each a multiple of align and at least align, summing to
        total rounded up to align (n * align at the least).  skew 0: even; skew > 0: shares
    from a Dirichlet of concentration 1/skew, seeded (skew 0.25: the busiest of 8 experts
    at about 1.6x the mean, of 64 at about 2x; trained routers with a load-balancing loss
    are near there)."""
    units = max(-(-total // align), n)
    if skew <= 0:
        base, extra = divmod(units, n)
        return [align * (base + (1 if i < extra else 0)) for i in range(n)]
    rng = random.Random(f"split:{total}:{n}:{skew}:{seed}")
    w = [rng.gammavariate(1.0 / skew, 1.0) for _ in range(n)]
    s = sum(w)
    raw = [1 + (units - n) * x / s for x in w]
    got = [int(math.floor(x)) for x in raw]
    rest = units - sum(got)
    order = sorted(range(n), key=lambda i: (got[i] - raw[i], i))
    for i in order[:rest]:
        got[i] += 1
    return [align * g for g in got]


def offsets(sizes):
    """Cumulative end offsets (torch._grouped_mm's offs)."""
    out, acc = [], 0
    for s in sizes:
        acc += s
        out.append(acc)
    return out


def r2(x):
    return None if x is None else round(x, 2)


class Sink:
    """A CSV written row by row and flushed (a killed run keeps its rows)."""

    def __init__(self, path, cols):
        self.cols, self.f = cols, open(path, "w", newline="")
        self.w = csv.writer(self.f, lineterminator="\n")
        self.w.writerow(cols)
        self.f.flush()

    def row(self, d):
        vals = []
        for c in self.cols:
            v = d.get(c)
            vals.append("" if v is None else (f"{v:.2f}" if isinstance(v, float) else str(v)))
        self.w.writerow(vals)
        self.f.flush()

    def close(self):
        self.f.close()


GROUPED_COLS = ["model", "gemm", "split", "nle", "rows_total", "rows_min", "rows_max", "n", "k",
                "method", "F_us", "B_us", "F_tflops", "B_tflops", "host_F_us", "host_B_us",
                "dgrad_us", "wgrad_us"]
FP8_COLS = ["model", "gemm", "split", "nle", "rows_total", "n", "k", "method", "F_us",
            "F_tflops"]
ROUTER_COLS = ["what", "tokens", "hidden", "experts", "topk", "F_us", "B_us", "F_kernel_us",
               "B_kernel_us", "F_kernels", "B_kernels", "host_F_us", "host_B_us", "host_spin"]
LAUNCH_COLS = ["what", "value", "unit", "note"]
BREAKDOWN_COLS = ["what", "tokens", "hidden", "experts", "topk", "pass", "kernel", "calls", "us"]


# ----------------------------------------------------------------------------- the GPU side

class Moe:
    def __init__(self, a, prov, log):
        import torch
        import torch.nn.functional as F
        self.torch, self.F, self.a, self.prov, self.log = torch, F, a, prov, log
        self.dev = torch.device("cuda")
        self.bench = opsample.bf16_bench(a.runs, a.warmup)

    # -- helpers ---------------------------------------------------------------------------
    def sleep_us(self, us):
        """Spin the GPU for us microseconds (no cap: the host batches need long ones)."""
        c = self.bench.cycles_per_us
        if c and us > 0:
            self.torch.cuda._sleep(int(us * c))

    def host_us(self, fn, per_batch, batches=None, host_guess_us=60.0, spin=True):
        """The host's wall time per fn() while the GPU is kept busy (median of batches): a
        spin kernel covers the first calls' enqueueing (host_guess_us, a generous guess of
        the host's time per call), and the work they queue covers the rest.
        spin False, for a fn that waits for the GPU itself (masked_select's count): no spin
        kernel, the wall time per call of calls one after another, GPU time included."""
        torch = self.torch
        batches = batches or self.a.host_batches
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        got = []
        for _ in range(batches):
            torch.cuda.synchronize()
            if spin:
                self.sleep_us(2000 + 2 * per_batch * host_guess_us)
            t0 = time.perf_counter()
            for _ in range(per_batch):
                fn()
            if not spin:
                torch.cuda.synchronize()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            got.append((t1 - t0) * 1e6 / per_batch)
        return opsample.median(got)

    def queued_us(self, fn, calls, spin_us):
        """The GPU's time per fn() when calls of it run back to back, queued behind a spin of
        spin_us (CUDA events around the calls, median of --host-batches batches)."""
        torch = self.torch
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        got = []
        for _ in range(self.a.host_batches):
            torch.cuda.synchronize()
            self.sleep_us(spin_us)
            s.record()
            for _ in range(calls):
                fn()
            e.record()
            torch.cuda.synchronize()
            got.append(s.elapsed_time(e) * 1000.0 / calls)
        return opsample.median(got)

    def kernels(self, fn, n=3):
        """Per call of fn: the GPU kernels' summed time (us) and their count, from
        torch.profiler (memory copies and sets counted as kernels; kernel_list's sums)."""
        lst = self.kernel_list(fn, n)
        return sum(u for _, _, u in lst), sum(c for _, c, _ in lst)

    def rand(self, shape, dtype=None, grad=False, scale=1.0):
        return self.bench.rand(shape, dtype or self.torch.bfloat16, grad, scale)

    # -- grouped GEMMs ---------------------------------------------------------------------
    def grouped(self, sink, deadline):
        torch, F = self.torch, self.F
        gmm = getattr(torch, "_grouped_mm", None) or getattr(F, "grouped_mm", None)
        rec = {"cases": 0, "errors": [], "grouped_mm": bool(gmm)}
        for c in grouped_cases(self.a.quick):
            for split in ("even", "skew"):
                for gemm in ("fc1", "fc2"):
                    if time.time() > deadline:
                        rec["truncated"] = True
                        return rec
                    k, n = (c["hidden"], 2 * c["ffn"]) if gemm == "fc1" else \
                        (c["ffn"], c["hidden"])
                    sizes = split_rows(c["nle"] * c["rows_per_expert"], c["nle"],
                                       0 if split == "even" else SKEW)
                    R = sum(sizes)
                    base = {"model": c["model"], "gemm": gemm, "split": split, "nle": c["nle"],
                            "rows_total": R, "rows_min": min(sizes), "rows_max": max(sizes),
                            "n": n, "k": k}
                    flop = 2.0 * R * n * k
                    for method in ("dense", "grouped"):
                        if method == "dense" and split != "even":
                            continue  # the same GEMM as the even split's
                        if method == "grouped" and not gmm:
                            continue
                        try:
                            r = self._gemm_case(method, gmm, sizes, n, k, split == "even")
                        except Exception as e:  # noqa: BLE001 - keep the other cases
                            rec["errors"].append(f"{c['model']} {gemm} {method}: "
                                                 f"{type(e).__name__}: {str(e)[:160]}")
                            torch.cuda.empty_cache()
                            continue
                        row = dict(base, method=method, F_us=r[0], B_us=r[1],
                                   F_tflops=flop / r[0] / 1e6,
                                   B_tflops=2 * flop / r[1] / 1e6 if r[1] else None,
                                   host_F_us=r[2], host_B_us=r[3])
                        sink.row(row)
                        rec["cases"] += 1
            self.log(f"grouped {c['model']} nle {c['nle']} rows/expert "
                     f"{c['rows_per_expert']}: done")
            gc.collect()
        return rec

    def _gemm_case(self, method, gmm, sizes, n, k, measure_host):
        torch = self.torch
        R, nle = sum(sizes), len(sizes)
        x = self.rand((R, k), grad=True)
        if method == "dense":
            w = self.rand((n, k), grad=True, scale=k ** -0.5)
            fwd = lambda: (torch.mm(x, w.t()),)  # noqa: E731
            leaves = [x, w]
        elif method == "grouped":
            w = self.rand((nle, n, k), grad=True, scale=k ** -0.5)
            offs = torch.tensor(offsets(sizes), device=self.dev, dtype=torch.int32)
            fwd = lambda: (gmm(x, w.transpose(-2, -1), offs=offs),)  # noqa: E731
            leaves = [x, w]
        else:
            raise ValueError(f"unknown method {method}")
        fu, bu, _ = self.bench.measure(fwd, leaves, True)
        hf = hb = None
        if method == "grouped" and measure_host:
            g = torch.randn((R, n), device=self.dev, dtype=torch.bfloat16)
            hf = self.host_us(lambda: fwd(), 5, host_guess_us=50 + 30 * nle)

            def fb():
                for t in leaves:
                    t.grad = None
                torch.autograd.backward(fwd(), (g,))
            hb = self.host_us(fb, 3, host_guess_us=100 + 80 * nle)
            hb = hb - hf if hb is not None and hf is not None else None
        for t in leaves:
            t.grad = None
        return fu, bu, hf, hb

    # -- per-expert cuBLAS on streams (TE GroupedLinear) ---------------------------------
    def _te_like(self, sizes, n, k, streams):
        """fwd, dgrad, wgrad GPU times (us, trimmed mean of events around each pass) of one
        cuBLAS GEMM per expert into preallocated slices, round-robin over streams."""
        torch = self.torch
        nle, R = len(sizes), sum(sizes)
        x = self.rand((R, k))
        dy = self.rand((R, n))
        ws = [self.rand((n, k), scale=k ** -0.5) for _ in range(nle)]
        y = torch.empty((R, n), device=self.dev, dtype=torch.bfloat16)
        dx = torch.empty((R, k), device=self.dev, dtype=torch.bfloat16)
        dws = [torch.empty((n, k), device=self.dev, dtype=torch.bfloat16) for _ in range(nle)]
        offs = [0] + offsets(sizes)
        xs = [x[offs[i]:offs[i + 1]] for i in range(nle)]
        dys = [dy[offs[i]:offs[i + 1]] for i in range(nle)]
        ys = [y[offs[i]:offs[i + 1]] for i in range(nle)]
        dxs = [dx[offs[i]:offs[i + 1]] for i in range(nle)]
        main = torch.cuda.current_stream()
        sts = [torch.cuda.Stream() for _ in range(streams)] if streams > 1 else [main]

        def run(which):
            if streams > 1:
                for st in sts:
                    st.wait_stream(main)
            for i in range(nle):
                st = sts[i % streams]
                with torch.cuda.stream(st):
                    if which == 0:
                        torch.mm(xs[i], ws[i].t(), out=ys[i])
                    elif which == 1:
                        torch.mm(dys[i], ws[i], out=dxs[i])
                    else:
                        torch.mm(dys[i].t(), xs[i], out=dws[i])
            if streams > 1:
                for st in sts:
                    main.wait_stream(st)
            return ()  # no outputs to keep: Bench.measure times the calls alone
        got = []
        for which in (0, 1, 2):
            fu, _, _ = self.bench.measure(lambda: run(which), [], False)
            got.append(fu)
        return got

    def cublas(self, sink, deadline):
        rec = {"cases": 0, "errors": []}
        for c in grouped_cases(self.a.quick):
            for gemm in ("fc1", "fc2"):
                if time.time() > deadline:
                    rec["truncated"] = True
                    return rec
                k, n = (c["hidden"], 2 * c["ffn"]) if gemm == "fc1" else (c["ffn"], c["hidden"])
                sizes = split_rows(c["nle"] * c["rows_per_expert"], c["nle"], 0)
                R = sum(sizes)
                flop = 2.0 * R * n * k
                for streams in (1, 4):
                    try:
                        f, d, w = self._te_like(sizes, n, k, streams)
                    except Exception as e:  # noqa: BLE001
                        rec["errors"].append(f"{c['model']} {gemm} {streams}: "
                                             f"{type(e).__name__}: {str(e)[:160]}")
                        continue
                    sink.row({"model": c["model"], "gemm": gemm, "split": "even",
                              "nle": c["nle"], "rows_total": R, "rows_min": min(sizes),
                              "rows_max": max(sizes), "n": n, "k": k,
                              "method": f"cublas_{streams}stream", "F_us": f, "B_us": d + w,
                              "F_tflops": flop / f / 1e6, "B_tflops": 2 * flop / (d + w) / 1e6,
                              "dgrad_us": d, "wgrad_us": w})
                    rec["cases"] += 1
            gc.collect()
        return rec

    def sweep(self, sink, deadline):
        torch, F = self.torch, self.F
        gmm = getattr(torch, "_grouped_mm", None) or getattr(F, "grouped_mm", None)
        rec = {"cases": 0, "errors": []}
        shapes = [("deepseek-v3", 7168, 4096, 32), ("qwen3-30b-a3b", 2048, 1536, 128),
                  ("mixtral-8x7b", 4096, 28672, 8)]
        for name, k, n, nle in shapes:
            for rpe in (32, 64, 128, 256, 512, 1024, 4096):
                if time.time() > deadline:
                    rec["truncated"] = True
                    return rec
                if self.a.quick and rpe > 64:
                    continue
                sizes = [rpe] * nle
                R = rpe * nle
                flop = 2.0 * R * n * k
                base = {"model": name, "gemm": "fc1", "split": "even", "nle": nle,
                        "rows_total": R, "rows_min": rpe, "rows_max": rpe, "n": n, "k": k}
                for method in ("dense", "grouped", "cublas_4stream"):
                    try:
                        if method == "cublas_4stream":
                            f, d, w = self._te_like(sizes, n, k, 4)
                            b, extra = d + w, {"dgrad_us": d, "wgrad_us": w}
                        else:
                            if method == "grouped" and not gmm:
                                continue
                            f, b, _, _ = self._gemm_case(method, gmm, sizes, n, k, False)
                            extra = {}
                    except Exception as e:  # noqa: BLE001
                        rec["errors"].append(f"{name} {rpe} {method}: {type(e).__name__}: "
                                             f"{str(e)[:160]}")
                        continue
                    sink.row(dict(base, method=method, F_us=f, B_us=b,
                                  F_tflops=flop / f / 1e6, B_tflops=2 * flop / b / 1e6,
                                  **extra))
                    rec["cases"] += 1
            gc.collect()
        return rec

    # -- fp8 -------------------------------------------------------------------------------
    def fp8(self, sink, deadline):
        torch = self.torch
        smm = getattr(torch, "_scaled_mm", None)
        sgmm = getattr(torch, "_scaled_grouped_mm", None)
        rec = {"cases": 0, "errors": [], "scaled_mm": bool(smm),
               "scaled_grouped_mm": bool(sgmm)}
        if not smm:
            return rec
        f8 = torch.float8_e4m3fn
        for c in grouped_cases(self.a.quick):
            for gemm in ("fc1", "fc2"):
                if time.time() > deadline:
                    rec["truncated"] = True
                    return rec
                k, n = (c["hidden"], 2 * c["ffn"]) if gemm == "fc1" else (c["ffn"], c["hidden"])
                sizes = split_rows(c["nle"] * c["rows_per_expert"], c["nle"], 0, align=32)
                R = sum(sizes)
                base = {"model": c["model"], "gemm": gemm, "split": "even", "nle": c["nle"],
                        "rows_total": R, "n": n, "k": k}
                x = torch.randn((R, k), device=self.dev).to(f8)
                for method in ("dense", "grouped"):
                    try:
                        if method == "dense":
                            w = torch.randn((n, k), device=self.dev).to(f8)
                            sa = torch.ones((R, 1), device=self.dev)
                            sb = torch.ones((1, n), device=self.dev)
                            fn = lambda: (smm(x, w.t(), scale_a=sa, scale_b=sb,  # noqa: E731
                                              out_dtype=torch.bfloat16),)
                        else:
                            if not sgmm:
                                continue
                            w = torch.randn((c["nle"], n, k), device=self.dev).to(f8)
                            sa = torch.ones((R,), device=self.dev)
                            sb = torch.ones((c["nle"], n), device=self.dev)
                            offs = torch.tensor(offsets(sizes), device=self.dev,
                                                dtype=torch.int32)
                            fn = lambda: (sgmm(x, w.transpose(-2, -1), sa, sb,  # noqa: E731
                                               offs=offs, out_dtype=torch.bfloat16),)
                        fu, _, _ = self.bench.measure(fn, [], False)
                    except Exception as e:  # noqa: BLE001
                        rec["errors"].append(f"{c['model']} {gemm} {method}: "
                                             f"{type(e).__name__}: {str(e)[:160]}")
                        continue
                    sink.row(dict(base, method=method, F_us=fu,
                                  F_tflops=2.0 * R * n * k / fu / 1e6))
                    rec["cases"] += 1
            gc.collect()
        return rec

    # -- router ----------------------------------------------------------------------------
    def router_fn(self, x, wg, topk):
        torch, F = self.torch, self.F

        def fwd():
            logits = F.linear(x, wg)  # the gating GEMM, 16-bit (moe_router_dtype None)
            scores, idx = torch.topk(logits, k=topk, dim=1)
            probs = torch.softmax(scores, dim=-1, dtype=torch.float32).type_as(logits)
            rmap = torch.zeros_like(logits).int().scatter(1, idx, 1).bool()
            gates = torch.zeros_like(logits).scatter(1, idx, probs)
            # load-balancing loss (switch_load_balancing_loss_func, coefficient 1e-2)
            sfa = torch.softmax(logits, dim=-1, dtype=torch.float32)
            tpe = rmap.sum(dim=0)
            e = logits.shape[1]
            aux = torch.sum(sfa.sum(dim=0) * tpe) * (e * 1e-2 / (topk * x.shape[0] ** 2))
            return gates, aux
        return fwd

    def router(self, sink, deadline):
        torch = self.torch
        rec = {"cases": 0, "errors": []}
        cases = ROUTER_CASES[:2] if self.a.quick else ROUTER_CASES
        for t, h, e, k in cases:
            if time.time() > deadline:
                rec["truncated"] = True
                return rec
            try:
                x = self.rand((t, h), grad=True)
                wg = self.rand((e, h), grad=True, scale=h ** -0.5)
                fwd = self.router_fn(x, wg, k)
                row = self._fb_row("router", fwd, [x, wg], (t, h, e, k), True)
            except Exception as ex:  # noqa: BLE001
                rec["errors"].append(f"router {t} {h} {e} {k}: {type(ex).__name__}: "
                                     f"{str(ex)[:160]}")
                continue
            sink.row(row)
            rec["cases"] += 1
        return rec

    def _fb_row(self, what, fwd, leaves, shape, spin):
        """GPU time (events), kernel time and count (profiler), host time, fwd and bwd."""
        torch = self.torch
        fu, bu, _ = self.bench.measure(fwd, leaves, True)
        outs = fwd()
        grads = [torch.randn_like(o) if o.dim() else torch.ones_like(o) for o in outs]
        del outs

        def fb():
            for t in leaves:
                t.grad = None
            torch.autograd.backward(fwd(), grads)
        kf, nf = self.kernels(fwd)
        kfb, nfb = self.kernels(fb)
        hf = self.host_us(fwd, 5, host_guess_us=300, spin=spin)
        hfb = self.host_us(fb, 3, host_guess_us=800, spin=spin)
        for t in leaves:
            t.grad = None
        t, h, e, k = shape
        return {"what": what, "tokens": t, "hidden": h, "experts": e, "topk": k, "F_us": fu,
                "B_us": bu, "F_kernel_us": kf, "B_kernel_us": kfb - kf, "F_kernels": nf,
                "B_kernels": nfb - nf, "host_F_us": hf, "host_B_us": hfb - hf,
                "host_spin": int(spin)}

    # -- permutation -----------------------------------------------------------------------
    def _routing(self, t, e, k):
        """A random top-k routing of t tokens over e experts: the [t, e] map (bool) and the
        probabilities (fp32, 1/k on the chosen experts, a leaf requiring grad)."""
        torch = self.torch
        _, idx = torch.topk(torch.randn((t, e), device=self.dev), k=k, dim=1)
        rmap = torch.zeros((t, e), device=self.dev, dtype=torch.int32)
        rmap = rmap.scatter_(1, idx, 1).bool()
        probs = torch.zeros((t, e), device=self.dev, dtype=torch.float32)
        return rmap, probs.scatter_(1, idx, 1.0 / k).requires_grad_(True)

    def permute(self, sink, deadline):
        torch = self.torch
        rec = {"cases": 0, "errors": []}
        cases = ROUTER_CASES[:2] if self.a.quick else ROUTER_CASES
        for t, h, e, k in cases:
            if time.time() > deadline:
                rec["truncated"] = True
                return rec
            try:
                rmap, probs = self._routing(t, e, k)
                x = self.rand((t, h), grad=True)

                def perm():
                    rm = rmap.T.contiguous()
                    ti = torch.arange(t, device=self.dev).unsqueeze(0).expand(e, -1)
                    si = ti.masked_select(rm)
                    pp = probs.T.contiguous().masked_select(rm)
                    return x.index_select(0, si), pp, si

                def fwd_perm():
                    px, pp, _ = perm()
                    return px, pp

                xp, ppd, sid = perm()
                xp = xp.detach().requires_grad_(True)
                ppd = ppd.detach().requires_grad_(True)

                def fwd_unperm():
                    y = xp * ppd.unsqueeze(-1).to(xp.dtype)
                    out = torch.zeros((t, h), device=self.dev, dtype=xp.dtype)
                    return (out.scatter_add(0, sid.unsqueeze(1).expand(-1, h), y),)

                # permute waits for masked_select's count: its host time is its wall time
                sink.row(self._fb_row("permute", fwd_perm, [x, probs], (t, h, e, k), False))
                sink.row(self._fb_row("unpermute", fwd_unperm, [xp, ppd], (t, h, e, k), True))
            except Exception as ex:  # noqa: BLE001
                rec["errors"].append(f"permute {t} {h} {e} {k}: {type(ex).__name__}: "
                                     f"{str(ex)[:160]}")
                continue
            rec["cases"] += 2
            gc.collect()
        return rec

    # -- kernel by kernel ------------------------------------------------------------------
    def kernel_list(self, fn, n=3):
        """Per call of fn: [(kernel name, calls, summed us)], in first-seen order."""
        torch = self.torch
        from torch.profiler import profile, ProfilerActivity
        fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
            for _ in range(n):
                fn()
            torch.cuda.synchronize()
        agg = {}
        for e in p.events():
            if e.device_type == torch.autograd.DeviceType.CUDA:
                c, t = agg.get(e.name, (0, 0.0))
                agg[e.name] = (c + 1, t + e.time_range.elapsed_us())
        return [(k, c / n, t / n) for k, (c, t) in agg.items()]

    def breakdown(self, sink, deadline):
        torch = self.torch
        rec = {"cases": 0, "errors": []}
        for t, h, e, k in [(16384, 4096, 8, 2), (4096, 2048, 128, 8), (16384, 7168, 256, 8)]:
            if time.time() > deadline:
                rec["truncated"] = True
                return rec
            try:
                x = self.rand((t, h), grad=True)
                wg = self.rand((e, h), grad=True, scale=h ** -0.5)
                fwd = self.router_fn(x, wg, k)
                outs = fwd()
                gr = [torch.randn_like(o) if o.dim() else torch.ones_like(o) for o in outs]
                del outs

                def fb():
                    x.grad = wg.grad = None
                    torch.autograd.backward(fwd(), gr)
                rmap, probs = self._routing(t, e, k)
                xt = self.rand((t, h), grad=True)

                def perm():
                    rm = rmap.T.contiguous()
                    ti = torch.arange(t, device=self.dev).unsqueeze(0).expand(e, -1)
                    si = ti.masked_select(rm)
                    pp = probs.T.contiguous().masked_select(rm)
                    return xt.index_select(0, si), pp, si
                px, pp, si = perm()
                gpx, gpp = torch.randn_like(px), torch.randn_like(pp)

                def perm_fb():
                    xt.grad = probs.grad = None
                    a, b_, _ = perm()
                    torch.autograd.backward((a, b_), (gpx, gpp))
                xp = px.detach().requires_grad_(True)
                ppd = pp.detach().requires_grad_(True)

                def unperm():
                    y = xp * ppd.unsqueeze(-1).to(xp.dtype)
                    out = torch.zeros((t, h), device=self.dev, dtype=xp.dtype)
                    return out.scatter_add(0, si.unsqueeze(1).expand(-1, h), y)
                gy = torch.randn((t, h), device=self.dev, dtype=torch.bfloat16)

                def unperm_fb():
                    xp.grad = ppd.grad = None
                    unperm().backward(gy)
                for what, f_only, f_b in (("router", fwd, fb), ("permute", perm, perm_fb),
                                          ("unpermute", unperm, unperm_fb)):
                    kf = self.kernel_list(f_only)
                    kfb = self.kernel_list(f_b)
                    fd = {name: (c, u) for name, c, u in kf}
                    for pas, lst in (("fwd", kf), ("fwd+bwd", kfb)):
                        for name, c, u in lst:
                            sink.row({"what": what, "tokens": t, "hidden": h, "experts": e,
                                      "topk": k, "pass": pas, "kernel": name[:120],
                                      "calls": round(c, 2), "us": round(u, 2)})
                    del fd
                rec["cases"] += 1
            except Exception as ex:  # noqa: BLE001
                rec["errors"].append(f"breakdown {t} {h} {e} {k}: {type(ex).__name__}: "
                                     f"{str(ex)[:160]}")
            gc.collect()
        return rec

    # -- launch ----------------------------------------------------------------------------
    def launch(self, sink):
        torch, F = self.torch, self.F
        rec = {"errors": []}
        a = torch.randn(1024, device=self.dev, dtype=torch.bfloat16)
        b = torch.randn(1024, device=self.dev, dtype=torch.bfloat16)
        c = torch.empty_like(a)
        x = torch.randn((8, 64), device=self.dev, dtype=torch.bfloat16)
        lin = torch.nn.Linear(64, 64, bias=False, device=self.dev, dtype=torch.bfloat16)
        xg = x.clone().requires_grad_(True)
        gy = torch.randn((8, 64), device=self.dev, dtype=torch.bfloat16)
        nw = torch.ones(64, device=self.dev, dtype=torch.bfloat16)

        def lin_nograd():
            with torch.no_grad():
                return lin(x)

        def lin_fb():
            xg.grad = None
            lin.weight.grad = None
            lin(xg).backward(gy)
        items = [
            ("host_add_out", lambda: torch.add(a, b, out=c), "torch.add(a, b, out=c), 1024 "
             "bf16: the dispatcher and one launch, no allocation"),
            ("host_add_alloc", lambda: a + b, "a + b, 1024 bf16: with the caching allocator"),
            ("host_F_linear", lambda: F.linear(x, lin.weight), "F.linear [8,64]x[64,64] bf16"),
            ("host_nn_linear_fwd", lambda: lin(x), "torch.nn.Linear(64, 64) forward, bf16, "
             "its weight requiring grad as in training: hwdb host_launch_us's unit (TE issue "
             "2053's torch row)"),
            ("host_nn_linear_fwd_grad", lambda: lin(xg), "the same, its input requiring grad"),
            ("host_nn_linear_nograd", lin_nograd, "the same inside torch.no_grad()"),
            ("host_nn_linear_fwd_bwd", lin_fb, "forward + backward (dgrad and wgrad GEMMs, the "
             "autograd engine)"),
            ("host_rms_norm", lambda: F.rms_norm(x, (64,), nw), "F.rms_norm [8,64] bf16"),
        ]
        for what, fn, note in items:
            try:
                v = self.host_us(fn, 200, host_guess_us=60)
                sink.row({"what": what, "value": r2(v), "unit": "us/call", "note": note})
                _, nk = self.kernels(fn)
                sink.row({"what": what + "_kernels", "value": r2(nk), "unit": "kernels/call",
                          "note": "torch.profiler"})
            except Exception as e:  # noqa: BLE001
                rec["errors"].append(f"{what}: {type(e).__name__}: {str(e)[:160]}")
        # the GPU's time per tiny kernel, back to back (the queue filled behind a spin)
        try:
            n = 400
            v = self.queued_us(lambda: torch.add(a, b, out=c), n, 30000)
            sink.row({"what": "gpu_tiny_kernel", "value": r2(v), "unit": "us/kernel",
                      "note": f"{n} torch.add(out=) of 1024 bf16 back to back"})
        except Exception as ex:  # noqa: BLE001
            rec["errors"].append(f"gpu_tiny_kernel: {type(ex).__name__}: {str(ex)[:160]}")
        # a CUDA graph of 100 such kernels
        try:
            n = 100
            st = torch.cuda.Stream()
            st.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(st):
                for _ in range(3):
                    torch.add(a, b, out=c)
            torch.cuda.current_stream().wait_stream(st)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(n):
                    torch.add(a, b, out=c)
            hv = self.host_us(g.replay, 20, host_guess_us=100)
            v = self.queued_us(g.replay, 10, 5000) / n
            sink.row({"what": "host_graph_replay", "value": r2(hv), "unit": "us/replay",
                      "note": f"CUDAGraph.replay() of {n} tiny adds"})
            sink.row({"what": "gpu_graph_kernel", "value": r2(v), "unit": "us/kernel",
                      "note": f"GPU time per kernel inside that graph (10 replays back to back)"})
        except Exception as ex:  # noqa: BLE001
            rec["errors"].append(f"graph: {type(ex).__name__}: {str(ex)[:160]}")
        return rec

    # -- a compiled block ------------------------------------------------------------------
    def compiled(self, sink, deadline):
        torch, F = self.torch, self.F
        rec = {"errors": []}
        dim, heads, ffn, b, l = 512, 8, 1536, 1, 256
        hd = dim // heads
        nn = torch.nn

        class Block(nn.Module):
            def __init__(s):
                super().__init__()
                s.n1, s.n2 = nn.RMSNorm(dim), nn.RMSNorm(dim)
                s.wq, s.wk = nn.Linear(dim, dim, bias=False), nn.Linear(dim, dim, bias=False)
                s.wv, s.wo = nn.Linear(dim, dim, bias=False), nn.Linear(dim, dim, bias=False)
                s.w1, s.w3 = nn.Linear(dim, ffn, bias=False), nn.Linear(dim, ffn, bias=False)
                s.w2 = nn.Linear(ffn, dim, bias=False)

            def forward(s, x, fc):
                h = s.n1(x)
                q = s.wq(h).view(b, l, heads, hd)
                k = s.wk(h).view(b, l, heads, hd)
                v = s.wv(h).view(b, l, heads, hd)
                qc = torch.view_as_complex(q.float().reshape(b, l, heads, -1, 2))
                kc = torch.view_as_complex(k.float().reshape(b, l, heads, -1, 2))
                q = torch.view_as_real(qc * fc).flatten(3).type_as(v)
                k = torch.view_as_real(kc * fc).flatten(3).type_as(v)
                o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                                   v.transpose(1, 2), is_causal=True)
                x = x + s.wo(o.transpose(1, 2).reshape(b, l, dim))
                h = s.n2(x)
                return x + s.w2(F.silu(s.w1(h)) * s.w3(h))

        blk = Block().to(device=self.dev, dtype=torch.bfloat16)
        ang = torch.outer(torch.arange(l, device=self.dev).float(),
                          1.0 / (10000 ** (torch.arange(0, hd, 2, device=self.dev).float() / hd)))
        fc = torch.polar(torch.ones_like(ang), ang).view(1, l, 1, hd // 2)
        x = torch.randn((b, l, dim), device=self.dev, dtype=torch.bfloat16, requires_grad=True)
        gy = torch.randn((b, l, dim), device=self.dev, dtype=torch.bfloat16)

        def measure(tag, mod):
            def f():
                return mod(x, fc)

            def fb():
                x.grad = None
                for p in blk.parameters():
                    p.grad = None
                mod(x, fc).backward(gy)
            kf, nf = self.kernels(f)
            kfb, nfb = self.kernels(fb)
            hf = self.host_us(f, 4, host_guess_us=1500)
            hfb = self.host_us(fb, 2, host_guess_us=4000)
            for what, v, u in ((f"{tag}_host_fwd", hf, "us"), (f"{tag}_host_bwd", hfb - hf, "us"),
                               (f"{tag}_kernels_fwd", nf, "kernels"),
                               (f"{tag}_kernels_bwd", nfb - nf, "kernels"),
                               (f"{tag}_gpu_fwd", kf, "us"), (f"{tag}_gpu_bwd", kfb - kf, "us")):
                sink.row({"what": what, "value": r2(v), "unit": u,
                          "note": f"one Llama block dim {dim}, {heads} heads, ffn {ffn}, "
                                  f"{b}x{l} tokens, bf16"})
        try:
            measure("eager", blk)
        except Exception as e:  # noqa: BLE001
            rec["errors"].append(f"eager: {type(e).__name__}: {str(e)[:200]}")
        if time.time() > deadline:
            rec["truncated"] = True
            return rec
        try:
            t0 = time.time()
            cb = torch.compile(blk)
            x.grad = None
            cb(x, fc).backward(gy)
            torch.cuda.synchronize()
            rec["compile_s"] = round(time.time() - t0, 1)
            measure("compiled", cb)
        except Exception as e:  # noqa: BLE001
            rec["errors"].append(f"compiled: {type(e).__name__}: {str(e)[:200]}")
        return rec


# ----------------------------------------------------------------------------- driver

def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="moesamples", help="output folder (created)")
    p.add_argument("--sections", default="all", help="comma-separated subset of: "
                   + ",".join(SECTIONS))
    p.add_argument("--quick", action="store_true", help="a few cases of each: a smoke test")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--host-batches", type=int, default=5)
    p.add_argument("--max-seconds", type=float, default=300.0,
                   help="stop starting new cases after this; what was measured is kept")
    p.add_argument("--list", action="store_true", help="print the cases and exit")
    a = p.parse_args(argv)
    a.section_list = list(SECTIONS) if a.sections == "all" else \
        [s.strip() for s in a.sections.split(",")]
    bad = [s for s in a.section_list if s not in SECTIONS]
    if bad:
        p.error(f"unknown section(s) {bad}; valid: {','.join(SECTIONS)}")
    if a.runs < 3 or a.warmup < 1 or a.host_batches < 1:
        p.error("--runs must be at least 3, --warmup and --host-batches at least 1")
    return a


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


# a section's share of the time left (the compile needs its own minute)
WEIGHT = {"grouped": 4.0, "cublas": 2.0, "sweep": 2.0, "fp8": 1.0, "router": 1.0,
          "permute": 1.5, "breakdown": 1.0, "launch": 0.5, "compiled": 2.0}


def main(argv=None):
    a = parse_args(argv)
    if a.list:
        for c in grouped_cases(a.quick):
            print(f"grouped {c['model']:16s} ep {c['ep']:3d} nle {c['nle']:4d} rows/expert "
                  f"{c['rows_per_expert']:6d} rows {c['nle'] * c['rows_per_expert']:6d}")
        for t, h, e, k in ROUTER_CASES:
            print(f"router/permute tokens {t:6d} hidden {h:5d} experts {e:4d} top-{k}")
        return 0
    import torch
    if not torch.cuda.is_available():
        print("moesample: no CUDA device visible; nothing measured", file=sys.stderr)
        return 2
    t_start = time.time()
    os.makedirs(a.out, exist_ok=True)
    logf = open(os.path.join(a.out, "log.txt"), "w")

    def log(msg):
        line = f"[{time.time() - t_start:6.1f}s] {msg}"
        print(line, flush=True)
        logf.write(line + "\n")
        logf.flush()
    props = torch.cuda.get_device_properties(0)
    prov = {
        "what": "trainplan MoE and host samples (bench/sampler/moesample.py)",
        "gpu": {"torch_name": torch.cuda.get_device_name(0),
                "multiprocessors": props.multi_processor_count,
                "memory_bytes": props.total_memory, "capability": f"{props.major}.{props.minor}",
                "nvidia_smi": opsample.gpu_query(opsample.SMI_STATIC)},
        "host": {"cpu": cpu_model(), "cpus": os.cpu_count(), "kernel": platform.release()},
        "software": {"torch": torch.__version__, "cuda": torch.version.cuda,
                     "python": platform.python_version()},
        "started_utc": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ"),
        "command": shlex.join([os.path.basename(sys.executable)] + sys.argv),
        "protocol": {"warmup": a.warmup, "runs": a.runs, "host_batches": a.host_batches,
                     "gpu_time": "opsample.Bench.measure: CUDA events, trimmed mean",
                     "kernel_time": "torch.profiler, kernels' durations summed per call",
                     "host_time": "wall time per call behind a spin kernel, median of batches",
                     "align_m": ALIGN_M, "inputs": "torch.randn"},
        "clocks_start": opsample.gpu_query(opsample.SMI_DYNAMIC),
        "sections": {},
    }
    ppath = os.path.join(a.out, "provenance.json")

    def dump():
        prov["wall_s"] = round(time.time() - t_start, 1)
        with open(ppath + ".tmp", "w") as f:
            json.dump(prov, f, indent=1)
        os.replace(ppath + ".tmp", ppath)
    dump()
    m = Moe(a, prov, log)
    log(f"moesample: {prov['gpu']['torch_name']}, torch {torch.__version__}, host "
        f"{prov['host']['cpu']}, spin {m.bench.cycles_per_us:.0f} cycles/us")
    deadline = t_start + a.max_seconds
    todo = list(a.section_list)
    gc.collect()
    gc.disable()
    try:
        for s in a.section_list:
            now = time.time()
            wsum = sum(WEIGHT[x] for x in todo)
            sdl = min(deadline, now + max(0.0, deadline - now) * WEIGHT[s] / wsum)
            todo.remove(s)
            if now > deadline:
                prov["sections"][s] = {"skipped": "out of time"}
                continue
            t0 = time.time()
            try:
                if s == "grouped":
                    sink = Sink(os.path.join(a.out, "grouped_gemm.csv"), GROUPED_COLS)
                    rec = m.grouped(sink, sdl)
                elif s in ("cublas", "sweep"):
                    sink = Sink(os.path.join(a.out, f"grouped_gemm_{s}.csv"), GROUPED_COLS)
                    rec = getattr(m, s)(sink, sdl)
                elif s == "fp8":
                    sink = Sink(os.path.join(a.out, "grouped_gemm_fp8.csv"), FP8_COLS)
                    rec = m.fp8(sink, sdl)
                elif s in ("router", "permute"):
                    sink = Sink(os.path.join(a.out, f"{s}.csv"), ROUTER_COLS)
                    rec = getattr(m, s)(sink, sdl)
                elif s == "breakdown":
                    sink = Sink(os.path.join(a.out, "breakdown.csv"), BREAKDOWN_COLS)
                    rec = m.breakdown(sink, sdl)
                elif s == "launch":
                    sink = Sink(os.path.join(a.out, "launch.csv"), LAUNCH_COLS)
                    rec = m.launch(sink)
                else:
                    sink = Sink(os.path.join(a.out, "compiled.csv"), LAUNCH_COLS)
                    rec = m.compiled(sink, sdl)
                sink.close()
            except Exception as e:  # noqa: BLE001 - the next section still runs
                rec = {"errors": [f"{type(e).__name__}: {str(e)[:300]}"]}
            rec["wall_s"] = round(time.time() - t0, 1)
            rec["clocks_after"] = opsample.gpu_query(opsample.SMI_DYNAMIC)
            prov["sections"][s] = rec
            log(f"{s}: {json.dumps({k: v for k, v in rec.items() if k != 'clocks_after'})}")
            dump()
            gc.collect()
    except KeyboardInterrupt:
        prov["interrupted"] = True
        log("interrupted; rows measured so far are kept")
    gc.enable()
    prov["finished_utc"] = datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    dump()
    return 0


if __name__ == "__main__":
    sys.exit(main())
