#!/usr/bin/env python3
"""Convert measured collective times into hwdb collective tables.

Sources (read-only, under --shared):
  data/seed_samples/{Perlmutter,Vista}/nccl/*_<nodes>_<gpus per node>.csv
      torch.distributed on NCCL, fp16; released with Zhang et al. 2025
      (arXiv 2509.22832), MIT licence (notice copied beside the tables).
      `shape` is the per-rank input in fp16 ELEMENTS (seed README, and the
      seed's nccl_functions.py: all_gather's input is each rank's part);
      files without a layout suffix pool layouts and are skipped.
  data/xla_perf_tables/collectives.csv
      XLA's measured collective table (openxla/xla, Apache-2.0): sm_90
      (H100) -> eos, sm_100_B200 -> dgx-b200, sm_100_GB200 -> gb200-nvl72.
      sm_103 (GB300) and the AMD tables (gfx950, gfx942) are skipped: hwdb
      has no system with those GPUs.

Writes hwdb/data/measured/<system>/<source>_<collective>_<N>x<G>.csv in the
collective-table format of docs/hwdb.md (collective,dtype,nodes,
gpus_per_node,bytes,time_us; bytes per rank in the est_coll_time
convention: all-reduce the buffer, all-gather the gathered output,
reduce-scatter and all-to-all the whole input, send/recv the message), a
README.md and licence notice per folder, and the `measured` entries of
kind collective_table in the system JSONs (other entries are kept).
Deterministic: a second run writes identical files.

usage: bench/import_collectives.py [--shared ../shared] [--repo .]
"""
import argparse
import csv
import json
import os
import re
import shutil

# nccl/<GPU>_<function>_fp16_<nodes>_<gpus per node>.csv
SEED_NAME = re.compile(
    r"^(?P<gpu>[^_]+)_(?P<fn>[a-z0-9_]+?)_fp16_(?P<nodes>\d+)_(?P<gpn>\d+)\.csv$")
SEED_FN = {  # seed function -> (our collective, bytes from shape and ranks)
    "allreduce": ("allreduce", lambda shape, n: 2 * shape),
    "allreduce_large": ("allreduce", lambda shape, n: 2 * shape),
    "allgather_large": ("allgather", lambda shape, n: 2 * shape * n),
    "reducescatter_large": ("reducescatter", lambda shape, n: 2 * shape),
    "p2p": ("sendrecv", lambda shape, n: 2 * shape),
}
# seed cluster -> systems that use its network data (first one holds it)
SEED_SYSTEMS = {"Perlmutter": ["perlmutter", "perlmutter-80g"],
                "Vista": ["vista"]}

XLA_SYSTEM = {"sm_90": "eos", "sm_100_B200": "dgx-b200",
              "sm_100_GB200": "gb200-nvl72"}
XLA_OP = {"all-reduce": "allreduce", "all-gather": "allgather",
          "reduce-scatter": "reducescatter", "all-to-all": "alltoall",
          "collective-permute": "sendrecv"}
XLA_DTYPE = {"F32": "fp32", "BF16": "bf16", "F16": "fp16"}
# The permute pattern kept as send/recv: every device sends to the next
# and receives from the previous one at once, as nccl-tests' sendrecv_perf.
XLA_RING = "kIntraPartitionTwoWayHasNonMutual (ring i -> i+1 mod n)"
# GB200 throughputs were stored as GB/s with two decimals (1e7 B/s steps):
# rows below 2e8 B/s carry a rounding error of 5 % or more and are skipped.
XLA_QUANTUM = 10_000_000
XLA_MIN_QUANTISED = 200_000_000
GPUS_PER_TRAY = {"sm_100_GB200": 4}  # gb200-nvl72: a node is a 4-GPU tray

SEED_CITATION = (
    "NCCL samples released with Zhang et al., 'Efficient Fine-Grained GPU "
    "Performance Modeling for Distributed Deep Learning of LLM', arXiv "
    "2509.22832 (HiPC 2025): repository DebarghaG/estimate-train-time, "
    "commit 1ac4d5e, src/estimate_train_time/data/regressors/<cluster>/nccl/ "
    "(MIT licence, notice in LICENSE.source beside the copies). "
    "torch.distributed on NCCL, fp16, microseconds; converted by "
    "bench/import_collectives.py (bytes = 2 x shape, x ranks for all-gather).")
XLA_CITATION = (
    "XLA GPU measured collective table default_collective_perf_table.txtpb "
    "(openxla/xla, xla/service/gpu/model/, commit "
    "dc660322168302831d1cbc4c99683cd79671286e), as extracted in "
    "shared/data/xla_perf_tables/collectives.csv. Copyright The OpenXLA "
    "Authors, Apache-2.0. Median device time of an executable holding one "
    "collective (launch overhead included), converted to microseconds by "
    "bench/import_collectives.py.")

HEADER = ["collective", "dtype", "nodes", "gpus_per_node", "bytes", "time_us"]

XLA_NOTICE = """Numbers in the xla_*.csv files of this folder are extracted from XLA's
measured collective performance table (openxla/xla,
xla/service/gpu/model/default_collective_perf_table.txtpb, commit
dc660322168302831d1cbc4c99683cd79671286e).

Copyright 2025-2026 The OpenXLA Authors.

Licensed under the Apache License, Version 2.0 (the "License"); you may not
use these files except in compliance with the License. You may obtain a copy
of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
License for the specific language governing permissions and limitations
under the License.

Changes: only numbers were taken; each row's time is transfer_size_bytes /
network_throughput_bytes_per_sec, and the rows were regrouped into one CSV per
collective and group shape by trainplan's bench/import_collectives.py.
"""

README_COMMON = """Format: `docs/hwdb.md` (collective tables): `collective,dtype,nodes,gpus_per_node,bytes,time_us`,
one file per collective and group shape (`<source>_<collective>_<nodes>x<gpus per node>.csv`),
`bytes` per rank as trainplan counts them (all-reduce: the buffer; all-gather: the gathered
output; reduce-scatter and all-to-all: the whole input; send/recv: the message). The system
files list them as `measured` entries of kind `collective_table`; `trainplan coll cv --system
NAME` compares them with the analytical model and `trainplan hw check` lists the rows that
cannot be right (they stay out of the tables unless `--keep-bad`).

Written by `bench/import_collectives.py` (rerun it to regenerate; a second run gives identical
files). Do not edit by hand.
"""

SEED_README = {
    "Perlmutter": """# Measured collectives: Perlmutter (seed NCCL samples)

Systems: `perlmutter` and `perlmutter-80g` (both list these tables: same nodes, same
Slingshot-11 network; the seed files are labelled A100-SXM4-80GB although most Perlmutter
nodes carry the 40 GB part, which does not change the network).

Source: the NCCL samples released with Zhang et al., "Efficient Fine-Grained GPU Performance
Modeling for Distributed Deep Learning of LLM" (arXiv 2509.22832, HiPC 2025), repository
DebarghaG/estimate-train-time, commit 1ac4d5e, `src/estimate_train_time/data/regressors/
Perlmutter/nccl/`. MIT licence: the notice is in `LICENSE.source` beside these files and
travels with them. torch.distributed on NCCL, fp16, microseconds. `shape` (fp16 elements per
rank: the input of all_reduce and send, each rank's part of all_gather) became bytes = 2 x
shape (x ranks for all-gather, whose output we count). `allreduce` and `allreduce_large` rows
of one layout share a table. Files without a layout suffix pool all layouts and are not used.

Known problem: the inter-node samples (2x1, 2x2, 2x4, 4x1, 8x1) run at about 1.2 GB/s per
GPU, 10-20x below Slingshot-11's 200 Gb/s line rate; NCCL probably ran without its libfabric
network plugin and fell back to TCP sockets. They are kept here as measured, but trainplan's
hygiene flags them ("likely NCCL without its network plugin") and leaves them out of the
tables by default, so they do not define Perlmutter's network: inter-node groups get the
analytical model unless you pass `--keep-bad`, or import your own nccl-tests logs
(`trainplan hw import-nccl-tests`).
""",
    "Vista": """# Measured collectives: Vista (seed NCCL samples)

System: `vista` (one GH200 per node, one NDR 400 Gb/s HCA per node).

Source: the NCCL samples released with Zhang et al., "Efficient Fine-Grained GPU Performance
Modeling for Distributed Deep Learning of LLM" (arXiv 2509.22832, HiPC 2025), repository
DebarghaG/estimate-train-time, commit 1ac4d5e, `src/estimate_train_time/data/regressors/
Vista/nccl/`. MIT licence: the notice is in `LICENSE.source` beside these files and travels
with them. torch.distributed on NCCL, fp16, microseconds. `shape` (fp16 elements per rank)
became bytes = 2 x shape (x ranks for all-gather, whose output we count). `allreduce` and
`allreduce_large` rows of one layout share a table.

Known problem (seed README): some all-gather samples are noise; rows faster than the 400 Gb/s
link allows (down to about 118 us for gigabytes) are flagged by trainplan's hygiene and left
out of the tables by default.
""",
}

XLA_README = """# Measured collectives: {system} (XLA's collective table, {arch})

System: `{system}` ({what}).

Source: XLA's measured collective performance table (openxla/xla,
`xla/service/gpu/model/default_collective_perf_table.txtpb`, commit
dc660322168302831d1cbc4c99683cd79671286e), arch key `{arch}`, as extracted in
`shared/data/xla_perf_tables/collectives.csv`. Apache-2.0: attribution and licence in
`NOTICE.xla`. Each row's time is XLA's `transfer_size_bytes / network_throughput_bytes_per_sec`
(the median device time of an executable holding one collective, so launch overhead is
included: small messages show a floor of some 20-50 us). XLA's transfer size is the output for
all-reduce, all-gather and all-to-all and the input for reduce-scatter: the same bytes
trainplan counts. F32 elements. Collective-permute rows with the ring pattern (every device
sends to the next and receives from the previous one at once) are the send/recv tables; the
one-way and pairwise patterns are not used.

Group shapes: XLA splits the devices into contiguous groups of equal size that run at the same
time; a table's shape is one group's ({shape_note}). On an NVSwitch each GPU has its own links,
so the concurrent groups do not slow one another.
{extra}"""

XLA_WHAT = {
    "eos": ("DGX H100: 8 H100 SXM per node, NVSwitch",
            "1 x 8, 1 x 4 and 1 x 2 on one 8-GPU host", ""),
    "dgx-b200": ("DGX/HGX B200: 8 B200 per node, NVSwitch",
                 "1 x 8, 1 x 4 and 1 x 2 on one 8-GPU host", ""),
    "gb200-nvl72": (
        "GB200 NVL72: 72 GPUs in one NVLink domain, 4 per compute tray",
        "groups of 4 to 72 GPUs of one NVL72 rack, written as trays x 4 "
        "(a group of 8 is 2 x 4); the 18-GPU groups straddle trays unevenly "
        "and are not used",
        "\nGB200 throughputs were stored as GB/s with two decimals, so rows "
        "below 0.2 GB/s (small messages, 5 % or more rounding error) are "
        "not used.\n"),
}


def write_table(path, comments, rows):
    with open(path, "w", newline="") as f:
        for c in comments:
            f.write("# %s\n" % c)
        w = csv.writer(f, lineterminator="\n")
        w.writerow(HEADER)
        for r in rows:
            w.writerow(r)


def table_list(tables):
    out = ["", "| table | rows |", "|---|---:|"]
    for (coll, nodes, gpn), (_, rows) in sorted(tables.items()):
        out.append("| %s %dx%d | %d |" % (coll, nodes, gpn, len(rows)))
    return "\n".join(out) + "\n"


def us(x):
    """A time in microseconds, to 4 significant decimals past the point."""
    return ("%.4f" % x).rstrip("0").rstrip(".")


def import_seed(shared, data, report):
    """Returns {system: [entry]}."""
    root = os.path.join(shared, "data", "seed_samples")
    entries = {}
    for cluster, systems in sorted(SEED_SYSTEMS.items()):
        src = os.path.join(root, cluster, "nccl")
        home = systems[0]
        dst = os.path.join(data, "measured", home)
        os.makedirs(dst, exist_ok=True)
        tables = {}  # (coll, nodes, gpn) -> (files, rows)
        for base in sorted(os.listdir(src)):
            m = SEED_NAME.match(base)
            if not m:
                report.append("seed %s: %s skipped (pooled layouts or a "
                              "regressor list)" % (cluster, base))
                continue
            fn = m.group("fn")
            if fn not in SEED_FN:
                report.append("seed %s: %s skipped (function %s not modelled)"
                              % (cluster, base, fn))
                continue
            coll, nbytes = SEED_FN[fn]
            nodes, gpn = int(m.group("nodes")), int(m.group("gpn"))
            key = (coll, nodes, gpn)
            files, rows = tables.setdefault(key, ([], []))
            files.append(base)
            with open(os.path.join(src, base)) as f:
                for r in csv.DictReader(f):
                    if (int(float(r["nodes"])) != nodes
                            or int(float(r["GPUsPerNode"])) != gpn):
                        raise SystemExit("%s: a row of another layout" % base)
                    shape = int(float(r["shape"]))
                    rows.append([coll, "fp16", nodes, gpn,
                                 nbytes(shape, nodes * gpn),
                                 us(float(r["dur(us)"]))])
        for (coll, nodes, gpn), (files, rows) in sorted(tables.items()):
            name = "seed_%s_%dx%d.csv" % (coll, nodes, gpn)
            write_table(os.path.join(dst, name),
                        ["%s NCCL samples (seed, MIT licence: LICENSE.source)"
                         % cluster,
                         "from " + ", ".join(files),
                         "bytes per rank as trainplan counts them (docs/hwdb.md)"],
                        rows)
            for sysname in systems:
                entries.setdefault(sysname, []).append(
                    {"kind": "collective_table", "op": coll, "dtype": "fp16",
                     "file": "../measured/%s/%s" % (home, name),
                     "source": "seed_nccl_samples"})
        shutil.copyfile(os.path.join(root, "LICENSE.source"),
                        os.path.join(dst, "LICENSE.source"))
        with open(os.path.join(dst, "README.md"), "w") as f:
            f.write(SEED_README[cluster] + "\n" + README_COMMON
                    + table_list(tables))
        report.append("seed %s: %d tables -> %s" % (cluster, len(tables),
                                                     ", ".join(systems)))
    return entries


def xla_shape(arch, r):
    """(nodes, gpus per node) of a row's group, or None (with why)."""
    if r["opcode"] == "collective-permute":
        n = int(r["total_devices"])
    else:
        n = int(r["num_devices_per_group"])
    tray = GPUS_PER_TRAY.get(arch)
    if not tray:
        return (1, n), ""
    if n <= tray:
        return (1, n), ""
    if n % tray:
        return None, "a group of %d GPUs is not whole %d-GPU trays" % (n, tray)
    return (n // tray, tray), ""


def import_xla(shared, data, report):
    path = os.path.join(shared, "data", "xla_perf_tables", "collectives.csv")
    tables, skipped = {}, {}
    with open(path) as f:
        for r in csv.DictReader(f):
            arch = r["arch_key"]
            if arch not in XLA_SYSTEM:
                skipped[arch] = skipped.get(arch, 0) + 1
                continue
            if (r["opcode"] == "collective-permute"
                    and r["permute_pattern"] != XLA_RING):
                skipped[arch + " permute (not the ring pattern)"] = \
                    skipped.get(arch + " permute (not the ring pattern)", 0) + 1
                continue
            thr = int(r["network_throughput_bytes_per_sec"] or 0)
            if thr <= 0:
                skipped[arch + " without a throughput"] = \
                    skipped.get(arch + " without a throughput", 0) + 1
                continue
            if (arch in GPUS_PER_TRAY and thr % XLA_QUANTUM == 0
                    and thr < XLA_MIN_QUANTISED):
                skipped[arch + " rounded to 0.01 GB/s, >= 5 % error"] = \
                    skipped.get(arch + " rounded to 0.01 GB/s, >= 5 % error",
                                0) + 1
                continue
            shape, why = xla_shape(arch, r)
            if shape is None:
                skipped[arch + " " + why] = skipped.get(arch + " " + why, 0) + 1
                continue
            coll = XLA_OP[r["opcode"]]
            nbytes = int(r["transfer_size_bytes"])
            key = (XLA_SYSTEM[arch], arch, coll) + shape
            tables.setdefault(key, []).append(
                (nbytes, int(r["entry_index"]),
                 [coll, XLA_DTYPE[r["element_type"]], shape[0], shape[1],
                  nbytes, us(nbytes * 1e6 / thr)]))
    entries = {}
    per_system = {}
    for (sysname, arch, coll, nodes, gpn), rows in sorted(tables.items()):
        per_system.setdefault((sysname, arch), {})[(coll, nodes, gpn)] = \
            (["collectives.csv"], rows)
        dst = os.path.join(data, "measured", sysname)
        os.makedirs(dst, exist_ok=True)
        name = "xla_%s_%dx%d.csv" % (coll, nodes, gpn)
        rows.sort(key=lambda x: (x[0], x[1]))
        write_table(os.path.join(dst, name),
                    ["XLA collective table, arch key %s (Apache-2.0: "
                     "NOTICE.xla)" % arch,
                     "from shared/data/xla_perf_tables/collectives.csv; time "
                     "= transfer_size_bytes / network_throughput_bytes_per_sec",
                     "bytes per rank as trainplan counts them (docs/hwdb.md)"],
                    [r for _, _, r in rows])
        entries.setdefault(sysname, []).append(
            {"kind": "collective_table", "op": coll,
             "dtype": rows[0][2][1], "file": "../measured/%s/%s"
             % (sysname, name), "source": "xla_collective_table"})
    for (sysname, arch), tabs in sorted(per_system.items()):
        dst = os.path.join(data, "measured", sysname)
        what, note, extra = XLA_WHAT[sysname]
        with open(os.path.join(dst, "NOTICE.xla"), "w") as f:
            f.write(XLA_NOTICE)
        with open(os.path.join(dst, "README.md"), "w") as f:
            f.write(XLA_README.format(system=sysname, arch=arch, what=what,
                                      shape_note=note, extra=extra)
                    + "\n" + README_COMMON + table_list(tabs))
    for k in sorted(skipped):
        report.append("xla: skipped %d rows: %s" % (skipped[k], k))
    report.append("xla: %d tables" % len(tables))
    return entries


def update_system(path, entries, citations):
    with open(path) as f:
        doc = json.load(f)
    keep = [m for m in doc.get("measured", [])
            if m.get("kind") != "collective_table"]
    for e in entries:
        doc["sources"][e["source"]] = citations[e["source"]]
    doc["measured"] = keep + entries
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
    report = []
    entries = import_seed(a.shared, data, report)
    for sysname, es in import_xla(a.shared, data, report).items():
        entries.setdefault(sysname, []).extend(es)
    cites = {"seed_nccl_samples": SEED_CITATION,
             "xla_collective_table": XLA_CITATION}
    for sysname in sorted(entries):
        update_system(os.path.join(data, "systems", sysname + ".json"),
                      entries[sysname], cites)
    for line in report:
        print(line)


if __name__ == "__main__":
    main()
