#!/usr/bin/env python3
"""memsample.py: measure the GPU memory of real training steps on the GPU it runs on.

One more measured source for bench/validate_memory (issue 16): a Llama-style decoder of a few
layers trained the way torchtitan trains it (FSDP2 with bf16 compute over fp32 parameters and
fp32 gradient reduction, fused AdamW, gradient clipping, cross entropy on fp32 logits), at
several shapes, activation-checkpointing modes, parameter dtypes and allocator settings, on
one GPU (FSDP2 over a world of one rank: the same gathers, casts and reduce-scatters as on
many, with shards the size of the whole).

Each configuration runs in a fresh process, so the allocator's cache and NVIDIA's per-process
figure start from nothing. Per configuration it records torch.cuda's peak allocated and
reserved bytes over three steps (the first step creates the optimizer's states), nvidia-smi's
used memory of the process after the steps (NVML, the figure nvidia-smi prints), and the
allocated bytes at each phase (weights, states, forward peak, backward peak, step peak) so the
estimator's terms can be checked one by one. A first probe process measures the CUDA context,
cuBLAS's handle and NCCL's communicator of a world of one.

The model code is written here from the architecture's description (RMSNorm, rotary
embeddings in complex arithmetic on fp32 copies, grouped-query attention with the keys and
values repeated to every head, F.scaled_dot_product_attention with the flash backend forced,
SwiGLU), as torchtitan's Llama 3 describes it; no torchtitan code is used or needed. As in
torchtitan, the model is built on the meta device, sharded, then materialized on the GPU (built
on the GPU first, FSDP2 kept a copy of one vocabulary matrix alive), and the FSDP2 units are
torchtitan's since mid 2025 (the embedding, each block, [final norm, output], the root) or,
with wrap "root", those of early 2025 (each block, and the root with the rest).

Usage:
  python3 bench/sampler/memsample.py --out DIR            # the grid, about 9 min on an H100
  python3 bench/sampler/memsample.py --quick --out DIR    # two configurations
  python3 bench/sampler/memsample.py --list               # the grid, no GPU needed
  python3 bench/sampler/memsample.py --ids ID,ID --out DIR # only these configurations
Writes DIR/mem_samples.jsonl (one line per configuration, flushed as measured) and
DIR/provenance.json (GPU, driver, software, command, start and end).
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time

MIB = 1 << 20

# Model shapes.  "w2k": a 2048-wide multi-head model with a 32,000-token vocabulary (Llama 2's);
# "w4k": Llama 3 8B's widths (4096, 32 heads, 8 key-value heads, FFN 14336, vocabulary 128,256,
# meta-llama/Meta-Llama-3-8B config.json) with fewer layers.
MODELS = {
    "w2k": dict(dim=2048, n_heads=16, n_kv_heads=16, ffn=8192, vocab=32000, rope_theta=10000.0),
    "w4k": dict(dim=4096, n_heads=32, n_kv_heads=8, ffn=14336, vocab=128256,
                rope_theta=500000.0),
}

BASE = dict(layers=4, ac="none", params="fp32", expandable=True, gqa="repeat", wrap="split",
            compile=False, steps=3)


def cfg(model, seq, mbs, **kw):
    c = dict(BASE)
    c.update(model=model, seq=seq, mbs=mbs)
    c.update(kw)
    return c


def grid(quick=False):
    """The configurations measured, in order.  ac: none, full (every block checkpointed) or
    op (torchtitan's per-op selective policy); params: fp32 (bf16 compute through FSDP2's
    mixed precision) or bf16 (pure bf16: parameters, gradients and Adam states in bf16)."""
    if quick:
        return [cfg("w2k", 2048, 1, layers=2), cfg("w2k", 2048, 1, layers=2, ac="full")]
    g = []
    for seq, mbs in ((2048, 1), (2048, 4), (8192, 4)):
        for ac in ("none", "full", "op"):
            g.append(cfg("w2k", seq, mbs, ac=ac))
    for seq, mbs in ((4096, 1), (4096, 2), (8192, 1)):
        for ac in ("none", "full", "op"):
            g.append(cfg("w4k", seq, mbs, ac=ac))
    for layers in (2, 8):
        for ac in ("none", "full"):
            g.append(cfg("w2k", 4096, 2, ac=ac, layers=layers))
    for ac in ("none", "full", "op"):
        g.append(cfg("w2k", 4096, 2, ac=ac, expandable=False))
        g.append(cfg("w4k", 4096, 1, ac=ac, expandable=False))
        g.append(cfg("w2k", 4096, 2, ac=ac, params="bf16"))
        g.append(cfg("w4k", 4096, 1, ac=ac, params="bf16"))
    for ac in ("none", "full"):
        g.append(cfg("w4k", 4096, 1, ac=ac, wrap="root"))
    g.append(cfg("w4k", 4096, 1, gqa="native"))
    # torch.compile of each block, as torchtitan's --compile.enable (after checkpointing,
    # before FSDP2); last, as each takes a minute to compile.
    for ac in ("none", "full", "op"):
        g.append(cfg("w2k", 4096, 2, ac=ac, compile=True))
    for ac in ("none", "op"):
        g.append(cfg("w4k", 4096, 1, ac=ac, compile=True))
    return g


def cfg_id(c):
    s = "%s-L%d-s%d-b%d-ac%s-%s" % (c["model"], c["layers"], c["seq"], c["mbs"], c["ac"],
                                    c["params"])
    if not c["expandable"]:
        s += "-noexp"
    if c["gqa"] != "repeat":
        s += "-gqa" + c["gqa"]
    if c["wrap"] != "split":
        s += "-wrap" + c["wrap"]
    if c.get("compile"):
        s += "-compiled"
    return s


def hf_config(c):
    """The configuration as a HuggingFace LlamaConfig dict, what validate_memory reads."""
    m = MODELS[c["model"]]
    return {
        "model_type": "llama",
        "hidden_size": m["dim"],
        "intermediate_size": m["ffn"],
        "num_attention_heads": m["n_heads"],
        "num_key_value_heads": m["n_kv_heads"],
        "num_hidden_layers": c["layers"],
        "vocab_size": m["vocab"],
        "max_position_embeddings": c["seq"],
        "hidden_act": "silu",
        "rms_norm_eps": 1e-5,
        "rope_theta": m["rope_theta"],
        "tie_word_embeddings": False,
        "attention_bias": False,
    }


def nvml_used(pid):
    """(this process's used bytes as nvidia-smi lists it, the device's used bytes), via NVML;
    None where NVML cannot tell."""
    try:
        import pynvml
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        dev = pynvml.nvmlDeviceGetMemoryInfo(h).used
        mine = None
        for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h):
            if p.pid == pid and p.usedGpuMemory is not None:
                mine = int(p.usedGpuMemory)
        return mine, int(dev)
    except Exception:  # noqa: BLE001 -- NVML missing or refused: the figure is absent
        return None, None


# --------------------------------------------------------------------------------------------
# The child: one configuration in its own process.

def child(c):
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.checkpoint import (CheckpointPolicy, checkpoint,
                                        create_selective_checkpoint_contexts)

    r = {"id": cfg_id(c), "config": c}
    pid = os.getpid()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(29500 + pid % 1000))
    dev = torch.device("cuda", 0)
    torch.cuda.set_device(dev)
    torch.empty(1, device=dev)
    torch.cuda.synchronize()
    r["smi_after_context"] = nvml_used(pid)[0]
    a = torch.randn(256, 256, device=dev, dtype=torch.bfloat16)
    (a @ a).sum().item()
    r["smi_after_cublas"] = nvml_used(pid)[0]
    r["reserved_after_cublas"] = torch.cuda.memory_reserved()
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=dev)
    t = torch.ones(1, device=dev)
    dist.all_reduce(t)
    torch.cuda.synchronize()
    r["smi_after_nccl"] = nvml_used(pid)[0]
    del a, t
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    base_alloc = torch.cuda.memory_allocated()

    m = MODELS[c["model"]]
    dim, nh, nkv, ffn, V = m["dim"], m["n_heads"], m["n_kv_heads"], m["ffn"], m["vocab"]
    hd = dim // nh
    S, B = c["seq"], c["mbs"]

    # Rotary frequencies as complex numbers, one per position and pair of channels.
    inv = 1.0 / (m["rope_theta"] ** (torch.arange(0, hd, 2, device=dev).float() / hd))
    ang = torch.outer(torch.arange(S, device=dev).float(), inv)
    freqs = torch.polar(torch.ones_like(ang), ang)  # [S, hd/2] complex64

    def rope(x):  # x [B, S, heads, hd]
        xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        y = torch.view_as_real(xc * freqs.view(1, S, 1, hd // 2)).flatten(3)
        return y.type_as(x)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.wq = nn.Linear(dim, nh * hd, bias=False)
            self.wk = nn.Linear(dim, nkv * hd, bias=False)
            self.wv = nn.Linear(dim, nkv * hd, bias=False)
            self.wo = nn.Linear(nh * hd, dim, bias=False)

        def forward(self, x):
            q = rope(self.wq(x).view(B, S, nh, hd))
            k = rope(self.wk(x).view(B, S, nkv, hd))
            v = self.wv(x).view(B, S, nkv, hd)
            gqa = nkv != nh
            if gqa and c["gqa"] == "repeat":
                rep = nh // nkv
                k = k[:, :, :, None, :].expand(B, S, nkv, rep, hd).reshape(B, S, nh, hd)
                v = v[:, :, :, None, :].expand(B, S, nkv, rep, hd).reshape(B, S, nh, hd)
                gqa = False
            q, k, v = (z.transpose(1, 2) for z in (q, k, v))
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
            return self.wo(o.transpose(1, 2).reshape(B, S, dim))

    class FeedForward(nn.Module):
        def __init__(self):
            super().__init__()
            self.w1 = nn.Linear(dim, ffn, bias=False)
            self.w2 = nn.Linear(ffn, dim, bias=False)
            self.w3 = nn.Linear(dim, ffn, bias=False)

        def forward(self, x):
            return self.w2(F.silu(self.w1(x)) * self.w3(x))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention_norm = nn.RMSNorm(dim, eps=1e-5)
            self.attention = Attention()
            self.ffn_norm = nn.RMSNorm(dim, eps=1e-5)
            self.feed_forward = FeedForward()

        def inner(self, x):
            h = x + self.attention(self.attention_norm(x))
            return h + self.feed_forward(self.ffn_norm(h))

        def forward(self, x):
            if c["ac"] == "full":
                return checkpoint(self.inner, x, use_reentrant=False)
            if c["ac"] == "op":
                return checkpoint(self.inner, x, use_reentrant=False,
                                  context_fn=op_sac_contexts)
            return self.inner(x)

    # torchtitan's per-op selective checkpointing, as its documentation describes it: keep
    # the outputs of the matrix products and of attention, except every second matrix
    # product, and recompute everything else.
    keep = {torch.ops.aten.mm.default,
            torch.ops.aten._scaled_dot_product_flash_attention.default,
            torch.ops.aten._scaled_dot_product_efficient_attention.default}

    def op_sac_contexts():
        count = {"forward": 0, "recompute": 0}

        def policy(ctx, func, *args, **kwargs):
            mode = "recompute" if ctx.is_recompute else "forward"
            if func == torch.ops.aten.mm.default:
                count[mode] += 1
                if count[mode] % 2 == 0:
                    return CheckpointPolicy.PREFER_RECOMPUTE
            return (CheckpointPolicy.MUST_SAVE if func in keep
                    else CheckpointPolicy.PREFER_RECOMPUTE)
        return create_selective_checkpoint_contexts(policy)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_embeddings = nn.Embedding(V, dim)
            self.layers = nn.ModuleList(Block() for _ in range(c["layers"]))
            self.norm = nn.RMSNorm(dim, eps=1e-5)
            self.output = nn.Linear(dim, V, bias=False)

        def forward(self, tokens):
            h = self.tok_embeddings(tokens)
            for layer in self.layers:
                h = layer(h)
            return self.output(self.norm(h))

    torch.manual_seed(0)
    pdt = torch.float32 if c["params"] == "fp32" else torch.bfloat16
    with torch.device("meta"):  # as torchtitan: built on meta, sharded, then materialized
        model = Model().to(pdt)
    nparams = sum(p.numel() for p in model.parameters())
    if c.get("compile"):
        for i in range(len(model.layers)):
            model.layers[i] = torch.compile(model.layers[i], fullgraph=True)
    mp = (MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
          if c["params"] == "fp32" else MixedPrecisionPolicy())
    if c["wrap"] == "split":
        # torchtitan's current units: the embedding, each block, the final norm with the
        # output projection (kept gathered after the forward: its backward comes first),
        # and the root, which then holds no parameter.
        fully_shard(model.tok_embeddings, mp_policy=mp, reshard_after_forward=True)
        for blk in model.layers:
            fully_shard(blk, mp_policy=mp, reshard_after_forward=True)
        fully_shard([model.norm, model.output], mp_policy=mp, reshard_after_forward=False)
    else:
        # torchtitan of early 2025: each block (the last kept gathered after the forward)
        # and the root, which holds the embedding, the final norm and the output projection.
        n = len(model.layers)
        for i, blk in enumerate(model.layers):
            fully_shard(blk, mp_policy=mp, reshard_after_forward=i < n - 1)
    fully_shard(model, mp_policy=mp, reshard_after_forward=True)
    model.to_empty(device=dev)
    with torch.no_grad():
        for p in model.parameters():
            nn.init.normal_(p, std=0.02) if p.dim() > 1 else nn.init.ones_(p)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    torch.cuda.synchronize()
    r["params"] = nparams
    r["alloc_weights"] = torch.cuda.memory_allocated() - base_alloc

    def mx():
        return torch.cuda.max_memory_allocated() - base_alloc

    phases = []
    peak_alloc = peak_res = 0
    g = torch.Generator(device=dev)
    g.manual_seed(1)
    try:
        for step in range(c["steps"]):
            torch.cuda.reset_peak_memory_stats()
            tokens = torch.randint(0, V, (B, S), device=dev, generator=g)
            labels = torch.randint(0, V, (B, S), device=dev, generator=g)
            pred = model(tokens)
            loss = F.cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1))
            del pred
            torch.cuda.synchronize()
            ph = {"start": None, "forward_peak": mx(),
                  "after_forward": torch.cuda.memory_allocated() - base_alloc}
            peak_res = max(peak_res, torch.cuda.max_memory_reserved())
            peak_alloc = max(peak_alloc, mx())
            torch.cuda.reset_peak_memory_stats()
            loss.backward()
            torch.cuda.synchronize()
            ph["backward_peak"] = mx()
            ph["after_backward"] = torch.cuda.memory_allocated() - base_alloc
            peak_res = max(peak_res, torch.cuda.max_memory_reserved())
            peak_alloc = max(peak_alloc, mx())
            torch.cuda.reset_peak_memory_stats()
            try:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
            except Exception as exc:  # noqa: BLE001 -- recorded, the step goes on
                r["clip_error"] = str(exc).splitlines()[0][:200]
            opt.step()
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            ph["step_peak"] = mx()
            ph["after_step"] = torch.cuda.memory_allocated() - base_alloc
            ph["loss"] = float(loss.item())
            del loss, tokens, labels
            peak_res = max(peak_res, torch.cuda.max_memory_reserved())
            peak_alloc = max(peak_alloc, mx())
            phases.append(ph)
    except torch.OutOfMemoryError as exc:
        r["error"] = "out of memory: " + str(exc).splitlines()[0]
    torch.cuda.synchronize()
    r["phases"] = phases
    r["max_memory_allocated"] = peak_alloc + base_alloc
    r["max_memory_reserved"] = peak_res
    r["base_allocated"] = base_alloc
    mine, devused = nvml_used(pid)
    r["smi_process"] = mine
    r["smi_device"] = devused
    st = torch.cuda.memory_stats()
    r["num_alloc_retries"] = st.get("num_alloc_retries")
    r["num_ooms"] = st.get("num_ooms")
    dist.destroy_process_group()
    print("MEMSAMPLE " + json.dumps(r), flush=True)


# --------------------------------------------------------------------------------------------
# The parent: the grid, one child process per configuration, provenance.

def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def software():
    out = {"python": platform.python_version(), "kernel": platform.release()}
    code = ("import torch,json;print(json.dumps({'torch':torch.__version__,"
            "'cuda':torch.version.cuda,'cudnn':torch.backends.cudnn.version(),"
            "'nccl':'.'.join(map(str,torch.cuda.nccl.version())),"
            "'gpu':torch.cuda.get_device_name(0),"
            "'sms':torch.cuda.get_device_properties(0).multi_processor_count,"
            "'total_memory':torch.cuda.get_device_properties(0).total_memory}))")
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=120)
        out.update(json.loads(p.stdout.strip().splitlines()[-1]))
    except Exception as exc:  # noqa: BLE001
        out["error"] = str(exc)
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,"
                            "clocks.max.sm,power.limit,ecc.mode.current",
                            "--format=csv,noheader"], capture_output=True, text=True,
                           timeout=30)
        out["nvidia_smi"] = q.stdout.strip()
    except Exception as exc:  # noqa: BLE001
        out["nvidia_smi_error"] = str(exc)
    return out


def run_child(c, timeout):
    env = dict(os.environ)
    env["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:%s" % (
        "True" if c["expandable"] else "False")
    t0 = time.time()
    try:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                            json.dumps(c)], capture_output=True, text=True, timeout=timeout,
                           env=env)
    except subprocess.TimeoutExpired:
        return {"id": cfg_id(c), "config": c, "error": "timed out after %d s" % timeout}
    for line in p.stdout.splitlines():
        if line.startswith("MEMSAMPLE "):
            r = json.loads(line[len("MEMSAMPLE "):])
            r["wall_s"] = round(time.time() - t0, 1)
            return r
    tail = (p.stderr or "").strip().splitlines()[-3:]
    return {"id": cfg_id(c), "config": c, "error": "exit %d: %s" % (p.returncode,
                                                                     " | ".join(tail))}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="output folder")
    ap.add_argument("--quick", action="store_true", help="two small configurations")
    ap.add_argument("--list", action="store_true", help="print the grid and exit")
    ap.add_argument("--ids", help="comma-separated configuration ids (see --list): only these")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--timeout", type=int, default=120, help="seconds per configuration")
    ap.add_argument("--max-seconds", type=int, default=540, help="stop starting new ones")
    a = ap.parse_args(argv)
    if a.child:
        child(json.loads(a.child))
        return 0
    g = grid(a.quick)
    if a.ids:
        want = a.ids.split(",")
        unknown = sorted(set(want) - {cfg_id(c) for c in g})
        if unknown:
            ap.error("--ids: not in the grid: " + ", ".join(unknown))
        g = [c for c in g if cfg_id(c) in want]
    if a.list:
        for c in g:
            print(cfg_id(c))
        return 0
    if not a.out:
        ap.error("--out is required")
    os.makedirs(a.out, exist_ok=True)
    prov = {"tool": "bench/sampler/memsample.py", "command": " ".join(sys.argv),
            "start_utc": utc_now(), "configurations": len(g)}
    prov["software"] = software()
    prov["device_used_before"] = nvml_used(-1)[1]
    deadline = time.time() + a.max_seconds
    done = errors = 0
    with open(os.path.join(a.out, "mem_samples.jsonl"), "w") as f:
        for c in g:
            if time.time() > deadline:
                break
            r = run_child(c, a.timeout)
            f.write(json.dumps(r, sort_keys=True) + "\n")
            f.flush()
            done += 1
            errors += "error" in r
            print("%-40s alloc %8.0f MiB  reserved %8.0f MiB  smi %s MiB  %s" % (
                r["id"], (r.get("max_memory_allocated") or 0) / MIB,
                (r.get("max_memory_reserved") or 0) / MIB,
                "%.0f" % (r["smi_process"] / MIB) if r.get("smi_process") else "-",
                r.get("error", "")), flush=True)
    prov.update(end_utc=utc_now(), measured=done, errors=errors)
    with open(os.path.join(a.out, "provenance.json"), "w") as f:
        json.dump(prov, f, indent=1, sort_keys=True)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
