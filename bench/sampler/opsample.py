#!/usr/bin/env python3
"""opsample.py: measure per-operator forward/backward times on the GPU it runs on.

Writes one CSV per operator in the format of the seed samples (shared/data/seed_samples,
from Zhang et al., arXiv 2509.22832): <GPU>_<op>_<precision>.csv with the seed's columns
(mp,b,h,l,dim as the operator has them, then F_dur(us),B_dur(us)), so one importer reads both.
Also a generic GEMM table (<GPU>_gemm_bf16.csv: m,n,k,F_dur(us)), a fused-AdamW step table
(<GPU>_adam_fp32.csv: params,step_dur(us)) and provenance.json (GPU, driver, software, clocks,
command line, protocol, grid seed, per-op counts and wall time).

Protocol (bench/sampler/README.md says why): per shape, fresh random inputs (never zeros),
WARMUP forward+backward runs, then RUNS forwards each bracketed by CUDA events, then RUNS
(forward, backward) pairs with events around the backward alone (autograd backward with a
precomputed random grad_output, leaf .grad cleared first). The GPU is kept busy with a spin
kernel before each timed batch so CPU launch latency is hidden, as the seeds' kernel times
(torch.profiler) were; Python's GC is off while timing, and a batch with a wide spread is
re-timed. No L2 flush between runs, as in the seeds. Result: trimmed mean (drop one min and
one max) in microseconds.

Deliberately does not: measure collectives (collsample.py does), lock clocks or touch any GPU
setting, use flash_attn or Apex (flash attention is torch SDPA with the flash backend forced).

The pure-Python parts (grids, trimmed mean, CSV writing, work formulas, --sanity, --list)
import no torch, so they can be tested on a machine without a GPU.
"""
import argparse
import datetime
import gc
import itertools
import json
import math
import os
import platform
import random
import shlex
import subprocess
import sys
import time

VOCAB = 50257  # GPT-NeoX / GPT-2 vocabulary, as in the seeds
HEAD_DIMS = (64, 80, 96, 112, 128, 160, 192, 256)  # realistic d/h the flash kernel supports

# The seed grid (seed README): mp 1-16, b 2-8, h 16-80 step 8, l 1024-5120 step 512,
# d 2048-8192 step 512.  Each operator samples a seeded random subset of it.
SEED_GRID = {
    "mp": [1, 2, 4, 8, 16],
    "b": [2, 4, 8],
    "h": list(range(16, 81, 8)),
    "l": list(range(1024, 5121, 512)),
    "dim": list(range(2048, 8193, 512)),
}
QUICK_GRID = {"mp": [1, 2], "b": [2], "h": [16, 32], "l": [1024, 2048], "dim": [2048, 4096]}

K_MLBD = ("mp", "b", "l", "dim")
K_MBHLD = ("mp", "b", "h", "l", "dim")
K_BLD = ("b", "l", "dim")

# Out-of-grid shapes (d = 12288, l = 8192, b = 1) to check extrapolation later.
X_MLBD = [(1, 2, 8192, 4096), (2, 4, 2048, 12288), (8, 2, 8192, 12288), (1, 1, 4096, 8192),
          (4, 1, 8192, 12288)]
X_MBHLD = [(1, 2, 32, 8192, 4096), (2, 4, 96, 2048, 12288), (8, 2, 96, 8192, 12288),
           (1, 1, 64, 4096, 8192), (4, 1, 96, 8192, 12288)]
X_BLD = [(2, 8192, 4096), (4, 2048, 12288), (1, 8192, 12288), (1, 4096, 8192)]


def padded_vocab(mp):
    """Per-rank vocabulary: 50257 padded to a multiple of 128*mp, divided by mp (Megatron)."""
    return math.ceil(VOCAB / (128 * mp)) * 128


class Op:
    """One row of the operator table: name, shape keys (seed column order), how many grid
    shapes to sample, out-of-grid extras, backward mode ('autograd', 'same' = B_dur := F_dur,
    or None = forward only), and a weight for sharing the time budget."""

    def __init__(self, name, keys, n_full, extras=(), bwd="autograd", weight=1.0, n_quick=3,
                 cap=None):
        self.name, self.keys, self.n_full, self.n_quick = name, keys, n_full, n_quick
        self.extras, self.bwd, self.weight, self.cap = list(extras), bwd, weight, cap

    @property
    def columns(self):
        if self.name == "gemm":
            return ["m", "n", "k", "F_dur(us)"]
        if self.name == "adam":
            return ["params", "step_dur(us)"]
        return list(self.keys) + ["F_dur(us)", "B_dur(us)"]


OPS = [
    Op("linear1", K_MLBD, 150, X_MLBD, weight=1.5),
    Op("linear2", K_MLBD, 150, X_MLBD, weight=1.0),
    Op("linear3", K_MLBD, 150, X_MLBD, weight=1.5),
    Op("linear4", K_MLBD, 150, X_MLBD, weight=1.5),
    Op("linear_final", K_MLBD, 150, X_MLBD, weight=2.5),
    Op("flash_atten", K_MBHLD, 150, X_MBHLD, weight=1.5),
    Op("flash_atten_causal", K_MBHLD, 150, X_MBHLD, weight=1.5),
    Op("layernorm", K_BLD, 80, X_BLD, weight=0.5),
    Op("RMSlayernorm", K_BLD, 80, X_BLD, weight=0.5),
    Op("gelu", K_MLBD, 100, X_MLBD, weight=0.7),
    Op("res_add", K_BLD, 80, X_BLD, bwd="same", weight=0.4),
    Op("embedding", K_MLBD, 100, X_MLBD, weight=0.7),
    Op("parallel_cross_entropy_128", ("mp", "b", "l"), 80,
       [(1, 2, 8192), (2, 4, 8192), (1, 1, 2048)], weight=1.0),
    Op("RoPE", K_MBHLD, 100, X_MBHLD, weight=0.7),
    # softmax grid capped at a 10 GB score tensor [b, h/mp, l, l], the seeds' largest
    Op("softmax", ("mp", "b", "h", "l"), 80, [(1, 2, 32, 8192), (8, 4, 96, 4096)], weight=1.0,
       cap=lambda s: 2 * s["b"] * (s["h"] // s["mp"]) * s["l"] ** 2 <= 10.1e9),
    Op("gemm", ("m", "n", "k"), 150, [(8192, 8192, 8192), (16384, 16384, 16384),
                                     (4096, 4096, 4096), (1024, 1024, 1024)],
       bwd=None, weight=1.0, n_quick=4),
    Op("adam", ("params",), 14, bwd=None, weight=0.8, n_quick=2),
]
OP_BY_NAME = {op.name: op for op in OPS}


# ----------------------------------------------------------------------------- grids

def valid_shape(s):
    """True if a shape is one a tensor-parallel transformer layer can have: d and h split
    evenly over mp, h divides d, and d/h is a head size the flash kernel supports."""
    mp = s.get("mp", 1)
    if "dim" in s and s["dim"] % mp:
        return False
    if "h" in s:
        if s["h"] % mp:
            return False
        if "dim" in s and (s["dim"] % s["h"] or s["dim"] // s["h"] not in HEAD_DIMS):
            return False
    return True


def op_grid(op, quick=False, seed=0):
    """The shapes op runs, as a list of dicts, in a seeded random order.  Same (op, quick,
    seed), same list, on any machine: the stream is seeded by a string, which Python hashes
    with SHA-512, not with the per-process hash()."""
    rng = random.Random(f"trainplan-opsample:{seed}:{op.name}:{int(quick)}")
    n = op.n_quick if quick else op.n_full
    if op.name == "gemm":
        lo, hi = (256, 2048) if quick else (256, 16384)
        shapes = []
        for _ in range(n):  # log-uniform in each of m, n, k, rounded to a multiple of 64
            shapes.append(tuple(max(64, int(round(lo * (hi / lo) ** rng.random() / 64)) * 64)
                                for _ in range(3)))
        if not quick:
            shapes += op.extras
        out = [dict(zip(op.keys, v)) for v in shapes]
    elif op.name == "adam":
        lo, hi = (1e6, 4e6) if quick else (1e6, 2e9)
        out = [{"params": int(round(lo * (hi / lo) ** (i / max(1, n - 1))))} for i in range(n)]
    else:
        g = QUICK_GRID if quick else SEED_GRID
        combos = [dict(zip(op.keys, v)) for v in itertools.product(*(g[k] for k in op.keys))]
        combos = [s for s in combos if valid_shape(s) and (op.cap is None or op.cap(s))]
        out = rng.sample(combos, min(n, len(combos)))
        if not quick:
            out += [s for s in (dict(zip(op.keys, e)) for e in op.extras) if valid_shape(s)]
    rng.shuffle(out)
    return out


# ----------------------------------------------------------------------------- numbers

def trimmed_mean(xs):
    """Mean after dropping one minimum and one maximum; the plain mean of fewer than 3."""
    s = sorted(xs)
    if not s:
        raise ValueError("trimmed_mean of no values")
    if len(s) >= 3:
        s = s[1:-1]
    return sum(s) / len(s)


def spread(xs):
    """Relative spread of the values a trimmed mean keeps: second largest over second
    smallest, minus one (0.0 for fewer than 4 values)."""
    s = sorted(xs)
    if len(s) < 4:
        return 0.0
    return s[-2] / s[1] - 1.0 if s[1] > 0 else float("inf")


def fmt_value(col, v):
    """CSV text of one value: shape columns as integers, durations in us with 2 decimals."""
    if "dur" in col:
        return f"{v:.2f}"
    return str(int(v))


class CsvSink:
    """One CSV, header written at once, each row flushed as it is measured, so a run cut off
    at its time limit still leaves every row it finished."""

    def __init__(self, path, columns):
        self.path, self.columns, self.rows = path, list(columns), 0
        self.f = open(path, "w", newline="")
        self.f.write(",".join(self.columns) + "\n")
        self.f.flush()

    def row(self, values):
        if len(values) != len(self.columns):
            raise ValueError(f"{self.path}: {len(values)} values for {len(self.columns)} columns")
        self.f.write(",".join(fmt_value(c, v) for c, v in zip(self.columns, values)) + "\n")
        self.f.flush()
        self.rows += 1

    def close(self):
        self.f.close()


def file_prefix(device_name):
    """The seeds' rule (their sampling_controller.py): device name with spaces removed,
    dashes kept: 'NVIDIA A100-SXM4-80GB' -> 'NVIDIAA100-SXM4-80GB'."""
    return device_name.replace(" ", "")


def work(op, s, elt=2):
    """(fwd_flops, bwd_flops, fwd_bytes, bwd_bytes) of one shape, for sanity figures only.
    FLOPs: 2 per multiply-add; attention backward = 2.5 x forward (FlashAttention-2 paper
    convention), causal = half of non-causal.  Bytes: the fewest a kernel must move (each
    input read once, each output written once), elt bytes per element."""
    g = lambda k: s.get(k, 1)
    mp, b, l, d = g("mp"), g("b"), g("l"), g("dim")
    T = b * l
    lin = {"linear1": (d, 3 * d // mp), "linear2": (d // mp, d), "linear3": (d, 4 * d // mp),
           "linear4": (4 * d // mp, d), "linear_final": (d, padded_vocab(mp))}
    if op in lin:
        K, N = lin[op]
        f = 2.0 * T * K * N
        return f, 2 * f, elt * (T * K + K * N + T * N), elt * 2 * (T * K + K * N + T * N)
    if op in ("flash_atten", "flash_atten_causal"):
        f = 4.0 * b * l * l * d / mp * (0.5 if op.endswith("causal") else 1.0)
        n = T * d // mp
        return f, 2.5 * f, elt * 4 * n, elt * 8 * n
    if op == "gemm":
        m, n, k = s["m"], s["n"], s["k"]
        return 2.0 * m * n * k, 0, elt * (m * k + k * n + m * n), 0
    if op == "adam":
        return 0, 0, 28.0 * s["params"], 0  # read p, g, m, v; write p, m, v (fp32)
    n = {"layernorm": T * d, "RMSlayernorm": T * d, "res_add": T * d, "embedding": T * d,
         "gelu": T * 4 * d // mp, "RoPE": T * d // mp,
         "parallel_cross_entropy_128": T * padded_vocab(mp),
         "softmax": b * g("h") // mp * l * l}.get(op)
    if n is None:
        return 0, 0, 0, 0
    rw = {"res_add": (3, 3), "RoPE": (4, 4), "parallel_cross_entropy_128": (1, 1)}.get(op, (2, 3))
    return 0, 0, elt * rw[0] * n, elt * rw[1] * n


# ----------------------------------------------------------------------------- sanity

def read_csv(path):
    with open(path) as f:
        head = f.readline().strip().split(",")
        return head, [dict(zip(head, map(float, ln.strip().split(",")))) for ln in f if ln.strip()]


def median(xs):
    s = sorted(xs)
    if not s:
        return float("nan")
    m = len(s) // 2
    return s[m] if len(s) % 2 else 0.5 * (s[m - 1] + s[m])


def sanity(dirpath, out=sys.stdout):
    """Print achieved TFLOP/s and GB/s per op from the CSVs in dirpath; returns a dict of the
    headline figures.  Flags any GEMM above the H100 SXM dense fp16/bf16 peak (989 TFLOP/s)."""
    figs = {}
    names = sorted(f for f in os.listdir(dirpath) if f.endswith(".csv"))
    for fn in names:
        op = next((o for o in sorted(OP_BY_NAME, key=len, reverse=True)
                   if f"_{o}_" in fn), None)
        if op is None:
            continue
        elt = 2
        head, rows = read_csv(os.path.join(dirpath, fn))
        if not rows:
            print(f"{op:28s} no rows", file=out)
            continue
        sh = lambda r: {k: int(v) for k, v in r.items() if "dur" not in k}
        fcol = "step_dur(us)" if op == "adam" else "F_dur(us)"
        tf, tb, bf, bb, ratio = [], [], [], [], []
        for r in rows:
            ff, fb, yf, yb = work(op, sh(r), elt)
            F = r[fcol] * 1e-6
            B = r.get("B_dur(us)", 0) * 1e-6
            if ff:
                tf.append(ff / F / 1e12)
                if B:
                    tb.append(fb / B / 1e12)
            if yf and not ff:
                bf.append(yf / F / 1e9)
                if B and yb:
                    bb.append(yb / B / 1e9)
            if B and F:
                ratio.append(B / F)
        fig = {"rows": len(rows)}
        line = f"{op:28s} n={len(rows):4d}"
        if tf:
            fig.update(tflops_fwd_max=max(tf), tflops_fwd_median=median(tf))
            line += f"  fwd TFLOP/s max {max(tf):6.1f} med {median(tf):6.1f}"
        if tb:
            fig.update(tflops_bwd_max=max(tb), tflops_bwd_median=median(tb))
            line += f"  bwd max {max(tb):6.1f} med {median(tb):6.1f}"
        if bf:
            fig.update(gbps_fwd_max=max(bf), gbps_fwd_median=median(bf))
            line += f"  fwd GB/s max {max(bf):6.0f} med {median(bf):6.0f}"
        if bb:
            fig.update(gbps_bwd_max=max(bb))
            line += f"  bwd GB/s max {max(bb):6.0f}"
        if ratio:
            fig.update(bwd_over_fwd_median=median(ratio), bwd_over_fwd_min=min(ratio))
            line += f"  B/F med {median(ratio):4.2f} min {min(ratio):4.2f}"
        if tf and max(tf + tb) > 989:
            line += "  !! above 989 TFLOP/s dense peak"
        print(line, file=out)
        figs[op] = fig
    return figs


# ----------------------------------------------------------------------------- GPU side

def gpu_query(fields):
    """nvidia-smi --query-gpu=fields as a dict (first GPU); {} if nvidia-smi is missing."""
    try:
        p = subprocess.run(["nvidia-smi", f"--query-gpu={','.join(fields)}",
                            "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        return {"error": str(e)}
    if p.returncode:
        if len(fields) > 1:  # an older driver may lack a field: ask one at a time
            out = {}
            for f in fields:
                out.update(gpu_query([f]))
            return out
        return {fields[0]: "error: " + (p.stdout + p.stderr).strip()[:200]}
    vals = [v.strip() for v in p.stdout.strip().splitlines()[0].split(",")]
    return dict(zip(fields, vals))


SMI_STATIC = ["name", "driver_version", "memory.total", "clocks.max.sm", "clocks.max.mem",
              "power.limit", "persistence_mode", "compute_mode", "mig.mode.current",
              "ecc.mode.current"]
SMI_DYNAMIC = ["clocks.sm", "clocks.mem", "power.draw", "temperature.gpu", "pstate",
               "clocks_event_reasons.active"]


def bf16_bench(runs=10, warmup=3):
    """A Bench with this file's protocol in bf16, for the other samplers of this folder."""
    import argparse as _ap
    return Bench(_ap.Namespace(dtype="bf16", gemm_dtype="bf16", warmup=warmup, runs=runs,
                               max_spread=0.3, retries=2))


def run_provenance(what, torch):
    """The provenance every sampler's output starts with: what, GPU, software, start, clocks."""
    return {"what": what, "gpu": torch.cuda.get_device_name(0),
            "software": {"torch": torch.__version__, "cuda": torch.version.cuda,
                         "python": platform.python_version()},
            "started_utc": utc_now(), "clocks_start": gpu_query(SMI_DYNAMIC)}


class Bench:
    """Owns torch and the timing protocol.  Constructed only on a CUDA machine."""

    def __init__(self, args):
        import torch
        import torch.nn.functional as F
        self.torch, self.F, self.args = torch, F, args
        self.dev = torch.device("cuda")
        self.dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
        self.gemm_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[args.gemm_dtype]
        self.cycles_per_us = self._calibrate_sleep()

    # -- timing --------------------------------------------------------------------------
    def _calibrate_sleep(self):
        """Cycles of torch.cuda._sleep per microsecond (its spin counts SM clock cycles)."""
        torch = self.torch
        if not hasattr(torch.cuda, "_sleep"):
            return 0.0
        cyc = 0.0
        for _ in range(3):  # the first ones run while clocks ramp up
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            s.record()
            torch.cuda._sleep(2_000_000)
            e.record()
            torch.cuda.synchronize()
            cyc = 2_000_000 / (s.elapsed_time(e) * 1000.0)
        return cyc

    def busy(self, us):
        """Keep the GPU busy for about us microseconds, so that what the CPU enqueues next
        waits in the queue and runs back to back: launch latency does not enter the timing."""
        if self.cycles_per_us and us > 0:
            self.torch.cuda._sleep(int(min(us, 20_000) * self.cycles_per_us))

    def measure(self, fwd, leaves, want_bwd):
        """Time fwd() (a function returning a tuple of tensors) and the backward from it.
        Returns (F_us, B_us or None, raw: the run times and retries)."""
        torch, a = self.torch, self.args
        outs = fwd()
        grads = [torch.randn_like(o) if o.dim() else torch.ones_like(o) for o in outs] \
            if want_bwd else None
        del outs
        cpu_f = cpu_b = 0.0
        for i in range(a.warmup):
            last = i == a.warmup - 1  # its wall time is the CPU's enqueue cost
            for t in leaves:
                t.grad = None
            t0 = time.perf_counter()
            outs = fwd()
            t1 = time.perf_counter()
            if want_bwd:
                torch.autograd.backward(outs, grads)
            t2 = time.perf_counter()
            del outs
            if last:
                cpu_f, cpu_b = t1 - t0, t2 - t1
        torch.cuda.synchronize()
        ev = lambda: torch.cuda.Event(enable_timing=True)

        def fwd_batch():
            fe = [(ev(), ev()) for _ in range(a.runs)]
            torch.cuda.synchronize()
            self.busy(1000 + 2e6 * a.runs * cpu_f)
            for s, e in fe:
                s.record()
                outs = fwd()
                e.record()
                del outs
            torch.cuda.synchronize()
            return [s.elapsed_time(e) * 1000.0 for s, e in fe]

        def bwd_batch():
            be = [(ev(), ev()) for _ in range(a.runs)]
            torch.cuda.synchronize()
            self.busy(1000 + 2e6 * a.runs * (cpu_f + cpu_b))
            for s, e in be:
                for t in leaves:
                    t.grad = None
                outs = fwd()
                s.record()
                torch.autograd.backward(outs, grads)
                e.record()
                del outs
            torch.cuda.synchronize()
            return [s.elapsed_time(e) * 1000.0 for s, e in be]

        fr, fretry = self.stable(fwd_batch)
        br, bretry = self.stable(bwd_batch) if want_bwd else ([], 0)
        for t in leaves:
            t.grad = None
        return (trimmed_mean(fr), (trimmed_mean(br) if br else None),
                {"fwd": [round(x, 2) for x in fr], "bwd": [round(x, 2) for x in br],
                 "retries": [fretry, bretry]})

    def stable(self, batch):
        """Run a timed batch; while its spread exceeds --max-spread, run it again (at most
        --retries more times) and keep the tightest.  A batch is spoiled when the host stalls
        (VM CPU steal, a page fault) for longer than the queued work covers: those stalls
        are rare and milliseconds long, so one retry almost always clears them."""
        best = None
        for attempt in range(1 + self.args.retries):
            xs = batch()
            sp = spread(xs)
            if best is None or sp < best[0]:
                best = (sp, xs)
            if sp <= self.args.max_spread:
                break
        return best[1], attempt

    # -- inputs --------------------------------------------------------------------------
    def rand(self, shape, dtype=None, grad=True, scale=1.0):
        x = self.torch.randn(shape, device=self.dev, dtype=dtype or self.dtype)
        if scale != 1.0:
            x.mul_(scale)
        return x.requires_grad_(grad)

    def est_bytes(self, op, s):
        """Rough peak memory of one shape (inputs, outputs, saved tensors, gradients)."""
        if op == "adam":
            return 16 * s["params"] + (1 << 28)
        ff, fb, yf, yb = work(op, s, 2)
        if op == "parallel_cross_entropy_128":
            return 12 * yf  # fp16 logits + fp32 copy + fp32 and fp16 gradients, plus temps
        if op == "gemm":
            return yf
        if op == "embedding":  # the table and its dense gradient
            yf += 3 * 2 * padded_vocab(s["mp"]) * s["dim"]
        return int(1.2 * (yf + yb))

    def build(self, op, s):
        """(fwd, leaves) for one shape: fwd() runs the operator once and returns its outputs;
        leaves are the tensors whose .grad the backward fills (cleared between runs)."""
        torch, F, dt = self.torch, self.F, self.dtype
        g = lambda k: s.get(k, 1)
        mp, b, l, d, h = g("mp"), g("b"), g("l"), g("dim"), g("h")
        if op.startswith("linear"):
            K, N = {"linear1": (d, 3 * d // mp), "linear2": (d // mp, d),
                    "linear3": (d, 4 * d // mp), "linear4": (4 * d // mp, d),
                    "linear_final": (d, padded_vocab(mp))}[op]
            x = self.rand([l, b, K])
            w = self.rand([N, K], scale=K ** -0.5)
            bias = self.rand([N]) if op == "linear1" else None  # seeds: bias on QKV only
            leaves = [x, w] + ([bias] if bias is not None else [])
            return (lambda: (F.linear(x, w, bias),)), leaves
        if op in ("flash_atten", "flash_atten_causal"):
            from torch.nn.attention import sdpa_kernel, SDPBackend
            hp, dh = h // mp, d // h
            q, k, v = (self.rand([b, l, hp, dh]) for _ in range(3))  # seeds' [b, l, h/mp, d/h]
            causal = op.endswith("causal")

            def fwd():
                with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                    return (F.scaled_dot_product_attention(
                        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                        is_causal=causal),)
            return fwd, [q, k, v]
        if op in ("layernorm", "RMSlayernorm"):
            x = self.rand([l, b, d])
            w = self.rand([d])
            if op == "layernorm":
                bias = self.rand([d])
                return (lambda: (F.layer_norm(x, (d,), w, bias, 1e-5),)), [x, w, bias]
            return (lambda: (F.rms_norm(x, (d,), w, 1e-5),)), [x, w]
        if op == "gelu":
            x = self.rand([l, b, 4 * d // mp])
            return (lambda: (F.gelu(x),)), [x]
        if op == "res_add":
            x, y = self.rand([l, b, d]), self.rand([l, b, d])
            return (lambda: (x + y,)), [x, y]
        if op == "embedding":
            V = padded_vocab(mp)
            table = self.rand([V, d])
            ids = torch.randint(0, V, (b, l), device=self.dev)
            return (lambda: (F.embedding(ids, table),)), [table]
        if op == "parallel_cross_entropy_128":
            V = padded_vocab(mp)
            logits = self.rand([b, l, V])
            target = torch.randint(0, V, (b * l,), device=self.dev)
            mask = torch.randint(0, 2, (b * l,), device=self.dev).float()
            inv = 1.0 / max(1.0, float(mask.sum().item()))

            def fwd():
                losses = F.cross_entropy(logits.view(-1, V).float(), target, reduction="none")
                return ((losses * mask).sum() * inv,)
            return fwd, [logits]
        if op == "RoPE":
            hp, dh = h // mp, d // h
            q, k = self.rand([l, b, hp, dh]), self.rand([l, b, hp, dh])
            inv_freq = 1.0 / (10000 ** (torch.arange(0, dh, 2, device=self.dev).float() / dh))
            fr = torch.outer(torch.arange(l, device=self.dev).float(), inv_freq)
            emb = torch.cat((fr, fr), dim=-1)
            cos, sin = (t.to(dt)[:, None, None, :] for t in (emb.cos(), emb.sin()))

            def rot(x):
                x1, x2 = x[..., : dh // 2], x[..., dh // 2:]
                return torch.cat((-x2, x1), dim=-1)

            return (lambda: (q * cos + rot(q) * sin, k * cos + rot(k) * sin)), [q, k]
        if op == "softmax":
            x = self.rand([b, h // mp, l, l])
            return (lambda: (F.softmax(x, dim=-1),)), [x]
        if op == "gemm":
            A = self.rand([s["m"], s["k"]], self.gemm_dtype, grad=False)
            B = self.rand([s["k"], s["n"]], self.gemm_dtype, grad=False, scale=s["k"] ** -0.5)
            return (lambda: (A @ B,)), []
        raise ValueError(f"unknown op {op!r}")

    def measure_adam(self, n):
        """One fused AdamW step over n fp32 parameters held in tensors of at most 2^24
        elements (a model's weight matrices), fp32 gradients.  Returns trimmed mean us."""
        torch, a = self.torch, self.args
        chunk = 1 << 24
        params = []
        left = n
        while left > 0:
            p = torch.randn(min(chunk, left), device=self.dev, requires_grad=True)
            p.grad = torch.randn_like(p)
            params.append(p)
            left -= p.numel()
        opt = torch.optim.AdamW(params, lr=1e-4, fused=True)
        for _ in range(a.warmup):
            opt.step()
        torch.cuda.synchronize()
        def batch():
            ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(a.runs)]
            torch.cuda.synchronize()
            self.busy(2000)
            for s, e in ev:
                s.record()
                opt.step()
                e.record()
            torch.cuda.synchronize()
            return [s.elapsed_time(e) * 1000.0 for s, e in ev]

        raw, retry = self.stable(batch)
        del opt, params
        torch.cuda.empty_cache()
        return trimmed_mean(raw), {"fwd": [round(x, 2) for x in raw], "bwd": [],
                                   "retries": [retry, 0], "tensors": len(range(0, n, chunk))}


# ----------------------------------------------------------------------------- driver

def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="opsamples", help="output folder (created)")
    p.add_argument("--ops", default="all",
                   help="comma-separated subset of: " + ",".join(OP_BY_NAME))
    p.add_argument("--dtype", default="fp16", choices=["fp16", "bf16"],
                   help="operator precision (file suffix), default fp16 as the seeds")
    p.add_argument("--gemm-dtype", default="bf16", choices=["fp16", "bf16"])
    p.add_argument("--quick", action="store_true", help="tiny grid: a smoke test")
    p.add_argument("--seed", type=int, default=0, help="grid seed")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--runs", type=int, default=10, help="timed runs per shape")
    p.add_argument("--max-seconds", type=float, default=480.0,
                   help="stop starting new shapes after this; what was measured is kept")
    p.add_argument("--mem-fraction", type=float, default=0.85,
                   help="skip shapes whose estimated memory exceeds this share of free memory")
    p.add_argument("--max-spread", type=float, default=0.3,
                   help="re-time a batch whose kept runs differ by more than this fraction")
    p.add_argument("--retries", type=int, default=2, help="at most this many re-timings")
    p.add_argument("--repeat-check", type=int, default=3,
                   help="re-measure this many shapes per op at its end (run-to-run spread)")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 if any op had an error or measured nothing (for smoke tests)")
    p.add_argument("--list", action="store_true", help="print the grid sizes and exit")
    p.add_argument("--sanity", metavar="DIR", help="print sanity figures of CSVs in DIR, exit")
    a = p.parse_args(argv)
    a.op_list = list(OP_BY_NAME) if a.ops == "all" else [o.strip() for o in a.ops.split(",")]
    bad = [o for o in a.op_list if o not in OP_BY_NAME]
    if bad:
        p.error(f"unknown op(s) {bad}; valid: {','.join(OP_BY_NAME)}")
    if a.runs < 1 or a.warmup < 1:
        p.error("--runs and --warmup must be at least 1")
    return a


def file_precision(a, op):
    return "fp32" if op == "adam" else (a.gemm_dtype if op == "gemm" else a.dtype)


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def main(argv=None):
    a = parse_args(argv)
    if a.sanity:
        sanity(a.sanity)
        return 0
    if a.list:
        for name in a.op_list:
            print(f"{name:28s} {len(op_grid(OP_BY_NAME[name], a.quick, a.seed)):4d} shapes")
        return 0

    import torch
    if not torch.cuda.is_available():
        print("opsample: no CUDA device visible; nothing measured", file=sys.stderr)
        return 2
    t_start = time.time()
    os.makedirs(a.out, exist_ok=True)
    bench = Bench(a)
    name = torch.cuda.get_device_name(0)
    prefix = file_prefix(name)
    props = torch.cuda.get_device_properties(0)
    prov = {
        "what": "trainplan operator samples (bench/sampler/opsample.py)",
        "gpu": {"torch_name": name, "file_prefix": prefix,
                "multiprocessors": props.multi_processor_count,
                "memory_bytes": props.total_memory,
                "capability": f"{props.major}.{props.minor}",
                "l2_bytes": getattr(props, "L2_cache_size", None),
                "nvidia_smi": gpu_query(SMI_STATIC)},
        "software": {"torch": torch.__version__, "cuda": torch.version.cuda,
                     "cudnn": torch.backends.cudnn.version(), "python": platform.python_version(),
                     "kernel": platform.release(), "machine": platform.machine(),
                     "fp16_reduced_precision_reduction":
                         torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
                     "bf16_reduced_precision_reduction":
                         torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction},
        "started_utc": utc_now(),
        "command": shlex.join([os.path.basename(sys.executable)] + sys.argv),
        "protocol": {"warmup": a.warmup, "runs": a.runs, "statistic": "trimmed mean (drop 1 min,"
                     " 1 max) of CUDA-event times, microseconds",
                     "backward": "autograd.backward(outputs, precomputed random grad_output), "
                                 "leaf .grad cleared before each run, events around backward only",
                     "l2_flush": False, "max_spread": a.max_spread, "retries": a.retries,
                     "python_gc": "disabled while timing, collected every 25 shapes",
                     "launch_latency_hidden": bool(bench.cycles_per_us),
                     "sleep_cycles_per_us": round(bench.cycles_per_us, 1),
                     "inputs": "torch.randn (never zeros), weights scaled by fan_in^-1/2",
                     "dtype": a.dtype, "gemm_dtype": a.gemm_dtype, "adam": "torch.optim.AdamW("
                     "fused=True), fp32 params and grads, tensors of <= 2^24 elements"},
        "grid": {"seed": a.seed, "quick": a.quick, "seed_grid": SEED_GRID,
                 "head_dims": HEAD_DIMS, "vocab": VOCAB, "max_seconds": a.max_seconds},
        "clocks_start": gpu_query(SMI_DYNAMIC),
        "ops": {},
    }
    ppath = os.path.join(a.out, "provenance.json")

    def dump():
        prov["wall_s"] = round(time.time() - t_start, 1)
        with open(ppath + ".tmp", "w") as f:
            json.dump(prov, f, indent=1, sort_keys=False)
        os.replace(ppath + ".tmp", ppath)

    dump()
    print(f"opsample: {name} ({prefix}), torch {torch.__version__}, CUDA {torch.version.cuda},"
          f" spin {bench.cycles_per_us:.0f} cycles/us, out {a.out}", flush=True)
    deadline = t_start + a.max_seconds
    todo = list(a.op_list)
    rawf = open(os.path.join(a.out, "raw_times.jsonl"), "w")
    gc.collect()
    gc.disable()  # a collection inside a timed batch is a multi-ms host stall; collect between
    try:  # a SIGINT (timeout -s INT) keeps every row and a closing provenance
        for name_op in a.op_list:
            op = OP_BY_NAME[name_op]
            now = time.time()
            wsum = sum(OP_BY_NAME[o].weight for o in todo)
            op_deadline = now + max(0.0, deadline - now) * op.weight / wsum
            todo.remove(name_op)
            rec = run_op(bench, op, a, prefix, min(op_deadline, deadline), deadline, rawf)
            prov["ops"][op.name] = rec
            print(f"[{time.time() - t_start:6.1f}s] {op.name:28s} {rec['measured']:4d}/"
                  f"{rec['planned']:<4d} skipped {rec['skipped_memory']} errors {rec['errors']}"
                  f" retried {rec['retried']} {rec['wall_s']:6.1f}s"
                  f"  sm {rec['clocks_after'].get('clocks.sm')}"
                  f" {rec['clocks_after'].get('temperature.gpu')}C"
                  f"  repeat {rec['repeat_rel_diff_fwd']}"
                  + ("  TRUNCATED" if rec["truncated_by_time"] else ""), flush=True)
            if rec["first_error"]:
                print(f"    first error: {rec['first_error']}", flush=True)
            dump()
    except KeyboardInterrupt:
        prov["interrupted"] = True
        print("opsample: interrupted; rows measured so far are kept", flush=True)
    gc.enable()
    rawf.close()
    prov["finished_utc"] = utc_now()
    prov["clocks_end"] = gpu_query(SMI_DYNAMIC)
    dump()
    print("\nsanity figures (FLOPs and bytes: see work() in opsample.py):")
    prov["sanity"] = sanity(a.out)
    dump()
    bad = [n for n, r in prov["ops"].items() if r["errors"] or not r["measured"]]
    if bad:
        print(f"opsample: errors or no samples in: {', '.join(bad)}", file=sys.stderr)
        return 1 if a.strict else 0
    return 0


def run_op(bench, op, a, prefix, op_deadline, deadline, rawf):
    """Measure every shape of op until op_deadline; write its CSV row by row and one JSON line
    of raw run times per shape to rawf.  Returns the op's provenance record."""
    torch = bench.torch
    shapes = op_grid(op, a.quick, a.seed)
    fname = f"{prefix}_{op.name}_{file_precision(a, op.name)}.csv"
    sink = CsvSink(os.path.join(a.out, fname), op.columns)
    rec = {"file": fname, "planned": len(shapes), "measured": 0, "skipped_memory": 0,
           "errors": 0, "first_error": None, "truncated_by_time": False, "retried": 0}
    measured = []
    t_op = time.time()
    try:
        for s in shapes:
            if time.time() > op_deadline:
                rec["truncated_by_time"] = True
                break
            try:
                got = run_shape(bench, op, s, a)
            except torch.cuda.OutOfMemoryError:
                rec["skipped_memory"] += 1
                torch.cuda.empty_cache()
                continue
            except RuntimeError as e:  # e.g. no flash kernel for this shape
                rec["errors"] += 1
                rec["first_error"] = rec["first_error"] or f"{s}: {str(e)[:300]}"
                torch.cuda.empty_cache()
                continue
            if got is None:
                rec["skipped_memory"] += 1
                continue
            res, raw = got
            sink.row([s[k] for k in op.keys] + list(res))
            rec["measured"] = sink.rows
            rawf.write(json.dumps({"op": op.name, "shape": s, **raw}) + "\n")
            rawf.flush()
            rec["retried"] += int(any(raw["retries"]))
            measured.append((s, res))
            if len(measured) % 25 == 0:
                gc.collect()
    finally:
        sink.close()
    # Run-to-run check: re-measure the first few shapes, if time allows.
    rep_diff = []  # signed: second forward time / first - 1
    for s, res in measured[: a.repeat_check]:
        if time.time() > deadline:
            break
        try:
            again = run_shape(bench, op, s, a)
        except RuntimeError:
            continue
        if again:
            rep_diff.append(round(again[0][0] / res[0] - 1.0, 4))
    rec["repeat_rel_diff_fwd"] = rep_diff
    rec["wall_s"] = round(time.time() - t_op, 1)
    rec["clocks_after"] = gpu_query(SMI_DYNAMIC)
    gc.collect()
    torch.cuda.empty_cache()
    return rec

def run_shape(bench, op, s, a):
    """Measure one shape: (tuple of the duration columns, raw times), or None if it would
    not fit in memory."""
    torch = bench.torch
    free, _ = torch.cuda.mem_get_info()
    usable = free + torch.cuda.memory_reserved() - torch.cuda.memory_allocated()
    if bench.est_bytes(op.name, s) > a.mem_fraction * usable:
        return None
    if op.name == "adam":
        us, raw = bench.measure_adam(s["params"])
        return (us,), raw
    fwd, leaves = bench.build(op.name, s)
    F_us, B_us, raw = bench.measure(fwd, leaves, op.bwd == "autograd")
    del fwd, leaves
    if op.bwd is None:
        return (F_us,), raw
    # res_add: its backward hands the gradient through untouched (no kernel); in a layer the
    # matching cost is the gradient sum at the residual fork, one add of the same shape, so
    # B_dur = F_dur, as the seeds record it.
    return (F_us, F_us if op.bwd == "same" else B_us), raw


if __name__ == "__main__":
    sys.exit(main())
