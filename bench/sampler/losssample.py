#!/usr/bin/env python3
"""losssample.py: GPU memory of the language-model loss, eager and compiled.

torchtitan's loss is cross_entropy(pred.flatten(0, 1).float(), labels); from
pytorch/torchtitan#1033 (2025-04-02) it is wrapped in torch.compile when the
model is compiled. This script measures, for one micro-batch of logits made
by the output projection, the bytes the loss holds above what existed before
it: after the forward (what it keeps for the backward) and at the peak of
forward plus backward, for the eager and the compiled loss, each in a fresh
CUDA memory state. One JSON object per variant on stdout and in --out.

  python3 bench/sampler/losssample.py --out loss.jsonl        # ~1 min on an H100
  python3 bench/sampler/losssample.py --tokens 4096 --vocab 32000 --hidden 2048

Standard library and PyTorch only.
"""
import argparse
import json
import sys


def measure(torch, F, compiled, tokens, vocab, hidden, reps):
    dev = torch.device("cuda")
    loss_fn = lambda p, y: F.cross_entropy(p.flatten(0, 1).float(), y.flatten(0, 1))
    if compiled:
        loss_fn = torch.compile(loss_fn)
    h = torch.randn(1, tokens, hidden, device=dev, dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(vocab, hidden, device=dev, dtype=torch.bfloat16, requires_grad=True)
    y = torch.randint(0, vocab, (1, tokens), device=dev)
    out = []
    for _ in range(reps):
        h.grad = None
        w.grad = None
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        base_resv = torch.cuda.memory_reserved()
        pred = F.linear(h, w)
        loss = loss_fn(pred, y)
        del pred  # the loss keeps what it needs
        torch.cuda.synchronize()
        kept = torch.cuda.memory_allocated() - base
        fwd_peak = torch.cuda.max_memory_allocated() - base
        torch.cuda.reset_peak_memory_stats()
        # the output projection's backward is part of the loss's peak only
        # through the 16-bit gradient of the logits; h's and w's gradients
        # are counted apart (they exist in any training step)
        loss.backward()
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - base
        grads = h.grad.numel() * 2 + w.grad.numel() * 2
        out.append({"kept": kept, "fwd_peak": fwd_peak, "peak": peak,
                    "param_grads": grads,
                    "peak_resv": torch.cuda.max_memory_reserved() - base_resv})
        del loss
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=8192)
    ap.add_argument("--vocab", type=int, default=128256)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    import torch
    import torch.nn.functional as F
    rows = []
    for compiled in (False, True):
        reps = measure(torch, F, compiled, a.tokens, a.vocab, a.hidden, a.reps)
        row = {"loss": "compiled" if compiled else "eager", "tokens": a.tokens,
               "vocab": a.vocab, "hidden": a.hidden,
               "logits_bf16_bytes": a.tokens * a.vocab * 2,
               "reps": reps, "device": torch.cuda.get_device_name(),
               "torch": torch.__version__}
        rows.append(row)
        print(json.dumps(row), flush=True)
    if a.out:
        with open(a.out, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
