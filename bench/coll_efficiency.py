#!/usr/bin/env python3
"""Fit the achievable fraction of line rate of each tier from hwdb's tables.

For every system with measured collective tables, runs
`trainplan coll cv --system NAME --format json`, which reports per table
`linerate_fraction`: the median, over its rows of at least 64 MiB, of
t_linerate / t_measured, where t_linerate is trainplan's analytical model
at full line rate (NCCL's Simple protocol carries its whole bus bandwidth;
latency is under 1 % of the time at these sizes). The fraction a tier
achieves is then the median over the tables whose bottleneck is that tier
(each table file one vote, so a dense sweep does not outweigh a sparse
one, and tables two systems share count once).
Implausible rows are left out as `coll cv` leaves them out by default.

Prints the per-table fractions and the two medians, and writes
bench/results/coll_efficiency.{json,md}. The medians, rounded to two
decimals, are EST_ETA_SCALEUP and EST_ETA_NETWORK in estimator/comm.c.
Deterministic: the same hwdb gives the same figures.

usage: bench/coll_efficiency.py [--trainplan build/trainplan] [--out bench/results]
"""
import argparse
import json
import os
import statistics
import subprocess


def run(tp, *args):
    out = subprocess.run([tp, *args], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trainplan", default="build/trainplan")
    ap.add_argument("--out", default="bench/results")
    a = ap.parse_args()
    systems = [s["name"] for s in run(a.trainplan, "hw", "list",
                                      "--format", "json")["systems"]]
    rows, seen = [], set()
    for name in sorted(systems):
        cv = run(a.trainplan, "coll", "cv", "--system", name, "--format",
                 "json")
        for t in cv["tables"]:
            # Systems that share a table (perlmutter, perlmutter-80g) vote once.
            path = os.path.realpath(t["file"])
            if t["linerate_fraction"] is None or path in seen:
                continue
            seen.add(path)
            rows.append({"system": name, "collective": t["collective"],
                         "group": "%dx%d" % (t["nodes"], t["gpus_per_node"]),
                         "tier": t["bottleneck"], "rows_big": t["rows_big"],
                         "fraction": round(t["linerate_fraction"], 4),
                         "file": os.path.basename(t["file"])})
    tiers = {}
    for tier in sorted({r["tier"] for r in rows}):
        v = [r["fraction"] for r in rows if r["tier"] == tier]
        tiers[tier] = {"tables": len(v), "median": round(statistics.median(v), 4),
                       "min": min(v), "max": max(v),
                       "quartiles": [round(q, 4) for q in
                                     statistics.quantiles(v, n=4)]
                       if len(v) > 1 else v}
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "coll_efficiency.json"), "w") as f:
        json.dump({"method": __doc__.split("\n\n")[1].replace("\n", " "),
                   "tiers": tiers, "tables": rows}, f, indent=2)
        f.write("\n")
    lines = ["# Achievable fraction of line rate per tier",
             "",
             "Written by `bench/coll_efficiency.py` from `trainplan coll cv` "
             "over every system of hwdb with measured collective tables. "
             "Fraction = t_linerate / t_measured, the median over a table's "
             "rows of at least 64 MiB; a tier's value is the median over "
             "the tables it bottlenecks. These are EST_ETA_SCALEUP and "
             "EST_ETA_NETWORK in `estimator/comm.c`.",
             "",
             "| tier | tables | median | quartiles | min | max |",
             "|---|---:|---:|---|---:|---:|"]
    for tier, s in tiers.items():
        lines.append("| %s | %d | %.3f | %s | %.3f | %.3f |" % (
            tier, s["tables"], s["median"],
            " / ".join("%.3f" % q for q in s["quartiles"]), s["min"], s["max"]))
    lines += ["", "| system | collective | group | tier | rows >= 64 MiB | "
              "fraction | table |", "|---|---|---|---|---:|---:|---|"]
    for r in rows:
        lines.append("| %s | %s | %s | %s | %d | %.3f | %s |" % (
            r["system"], r["collective"], r["group"], r["tier"],
            r["rows_big"], r["fraction"], r["file"]))
    with open(os.path.join(a.out, "coll_efficiency.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    for tier, s in tiers.items():
        print("%-9s %2d tables  median %.3f  quartiles %s  range %.3f-%.3f"
              % (tier, s["tables"], s["median"],
                 "/".join("%.3f" % q for q in s["quartiles"]), s["min"],
                 s["max"]))


if __name__ == "__main__":
    main()
