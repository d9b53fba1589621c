#!/usr/bin/env python3
"""collsample.py: time NCCL collectives through torch.distributed, in the seeds' NCCL format.

Run under torchrun, one process per GPU, e.g.
    torchrun --nproc_per_node=8 bench/sampler/collsample.py --out DIR
    (multi-node: torchrun --nnodes N --nproc_per_node G --rdzv_endpoint HOST:PORT ...)
Writes <GPU>_<collective>_fp16_<nodes>_<GPUsPerNode>.csv with the seeds' columns
shape,nodes,GPUsPerNode,dur(us), where shape is the per-rank message in fp16 ELEMENTS
(bytes = 2 x shape): the input of all_reduce, all_gather (each rank's part), reduce_scatter
(the whole input), all_to_all (the whole input) and send/recv (rank 0 to the last rank).
Plus collprovenance.json.

Protocol: per size, WARMUP untimed calls, then RUNS calls each after a barrier, bracketed by
CUDA events on the current stream (torch.distributed makes it wait for NCCL's stream);
per rank the trimmed mean (drop one min and one max), then the maximum over ranks.

Deliberately does not: pick NCCL settings (it measures what the environment gives), or
measure anything meaningful with one rank: then NCCL only copies locally and the numbers are
launch overhead and a device copy, and send/recv is skipped.  References: the seeds' sampler
(DebarghaG/estimate-train-time, docs/advanced/nccl-sampling.md) and nccl-tests.
"""
import argparse
import datetime
import json
import os
import shlex
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opsample import CsvSink, file_prefix, trimmed_mean  # noqa: E402

COLLS = ["allreduce", "allgather", "reducescatter", "alltoall", "p2p"]


def size_grid(lo, hi, per_octave, multiple):
    """Log-spaced element counts from lo to hi, per_octave points per doubling, each rounded
    to a multiple of `multiple` (so reduce_scatter and all_to_all split evenly), no repeats."""
    out, i = [], 0
    while True:
        v = lo * 2 ** (i / per_octave)
        if v > hi * (1 + 1e-9):
            break
        n = max(multiple, int(round(v / multiple)) * multiple)
        if not out or n != out[-1]:
            out.append(n)
        i += 1
    return out


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="collsamples")
    p.add_argument("--colls", default=",".join(COLLS), help="subset of " + ",".join(COLLS))
    p.add_argument("--min-elems", type=int, default=1 << 16)
    p.add_argument("--max-elems", type=int, default=1 << 30)
    p.add_argument("--per-octave", type=int, default=2)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--max-seconds", type=float, default=600.0)
    a = p.parse_args(argv)
    a.coll_list = [c.strip() for c in a.colls.split(",") if c.strip()]
    bad = [c for c in a.coll_list if c not in COLLS]
    if bad:
        p.error(f"unknown collective(s) {bad}")
    return a


def main(argv=None):
    a = parse_args(argv)
    import torch
    import torch.distributed as dist
    t0 = time.time()
    local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank, world = dist.get_rank(), dist.get_world_size()
    gpn = int(os.environ.get("LOCAL_WORLD_SIZE", world))
    nodes = max(1, world // gpn)
    dt = torch.float16
    prefix = file_prefix(torch.cuda.get_device_name(local))
    if rank == 0:
        os.makedirs(a.out, exist_ok=True)
    prov = {"what": "trainplan NCCL samples (bench/sampler/collsample.py)",
            "gpu": torch.cuda.get_device_name(local), "world": world, "nodes": nodes,
            "GPUsPerNode": gpn, "torch": torch.__version__,
            "nccl": ".".join(map(str, torch.cuda.nccl.version())),
            "command": shlex.join(["torchrun", "..."] + sys.argv),
            "started_utc": datetime.datetime.now(datetime.timezone.utc).strftime(
                "%Y-%m-%dT%H:%M:%SZ"),
            "protocol": {"warmup": a.warmup, "runs": a.runs, "statistic":
                         "max over ranks of per-rank trimmed mean (drop 1 min, 1 max), us"},
            "note": ("ONE rank: NCCL copies locally; times are launch overhead plus a device "
                     "copy, not communication") if world == 1 else "",
            "colls": {}}
    sizes = size_grid(a.min_elems, a.max_elems, a.per_octave, 1024 * world)
    ev = lambda: torch.cuda.Event(enable_timing=True)
    for coll in a.coll_list:
        if coll == "p2p" and world < 2:
            prov["colls"][coll] = {"skipped": "needs 2 or more ranks"}
            continue
        sink = CsvSink(os.path.join(a.out, f"{prefix}_{coll}_fp16_{nodes}_{gpn}.csv"),
                       ["shape", "nodes", "GPUsPerNode", "dur(us)"]) if rank == 0 else None
        done = 0
        for n in sizes:
            if time.time() - t0 > a.max_seconds:
                break
            x = torch.randn(n, device="cuda", dtype=dt)
            if coll == "allgather":
                y = torch.empty(n * world, device="cuda", dtype=dt)
                op = lambda: dist.all_gather_into_tensor(y, x)
            elif coll == "reducescatter":
                y = torch.empty(n // world, device="cuda", dtype=dt)
                op = lambda: dist.reduce_scatter_tensor(y, x)
            elif coll == "alltoall":
                y = torch.empty_like(x)
                op = lambda: dist.all_to_all_single(y, x)
            elif coll == "allreduce":
                op = lambda: dist.all_reduce(x)
            else:  # p2p: rank 0 sends to the last rank, the others idle
                def op():
                    if rank == 0:
                        dist.send(x, world - 1)
                    elif rank == world - 1:
                        dist.recv(x, 0)
            for _ in range(a.warmup):
                op()
            times = []
            for _ in range(a.runs):
                dist.barrier()
                torch.cuda.synchronize()
                s, e = ev(), ev()
                s.record()
                op()
                e.record()
                torch.cuda.synchronize()
                times.append(s.elapsed_time(e) * 1000.0)
            t = torch.tensor([trimmed_mean(times)], device="cuda", dtype=torch.float64)
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            if sink:
                sink.row([n, nodes, gpn, t.item()])
            done += 1
            del x
            y = None
        if sink:
            sink.close()
        prov["colls"][coll] = {"sizes": done}
        if rank == 0:
            print(f"[{time.time() - t0:6.1f}s] {coll:14s} {done} sizes", flush=True)
    if rank == 0:
        prov["wall_s"] = round(time.time() - t0, 1)
        with open(os.path.join(a.out, "collprovenance.json"), "w") as f:
            json.dump(prov, f, indent=1)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
