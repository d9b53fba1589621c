#!/usr/bin/env bash
# torchtitan_e2e.sh PYTHON TRAINPLAN SOURCE_DIR [SCRATCH_DIR]
#
# Issue 18, torchtitan: for each search of tests/launch/matrix.txt and each
# torchtitan version trainplan writes (main, the default, and 0.2), every
# ranked and Pareto layout's launch.torchtitan_config is
#   1. checked by torchtitan_rules.py against the version it names, and
#   2. read back with `trainplan estimate --torchtitan-config`: where the
#      search estimated the layout as torchtitan runs it and the config says
#      nothing is inexpressible, to the same iteration_time_s (relative
#      1e-9: the same layout through the same code, so the same double up
#      to the printing of %.17g); otherwise to the same layout (TP, PP, CP,
#      DP, virtual stages, micro-batch, global batch, sequence), or, where a
#      line says NOT EXPRESSIBLE, to a clean exit (no crash).
# Prints the counts; fails on any violation or mismatch.
set -u
PY=$1
TP=$2
SRC=$3
SCRATCH=${4:-$(mktemp -d)}
mkdir -p "$SCRATCH"
exec "$PY" - "$TP" "$SRC" "$SCRATCH" <<'EOF'
import json, os, shlex, subprocess, sys

tp, src, scratch = sys.argv[1:4]
rules = os.path.join(src, "tests", "launch", "torchtitan_rules.py")
matrix = os.path.join(src, "tests", "launch", "matrix.txt")
versions = ["main", "0.2"]
count = {k: 0 for k in ("configs", "rules_ok", "not_expressible", "round_trip",
                        "round_trip_ok", "layout_back", "layout_back_ok",
                        "clean_refusals")}
fails = []


def run(args):
    return subprocess.run(args, capture_output=True, text=True)


for n, line in enumerate(open(matrix, encoding="utf-8")):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    args = shlex.split(line)
    system = args[args.index("--system") + 1]
    for v in versions:
        r = run([tp, "search", *args, "--format", "json", "--top", "10", "--no-timing",
                 "--torchtitan-version", v])
        if r.returncode not in (0, 1):
            fails.append(f"search {line} ({v}): exit {r.returncode}: {r.stderr.strip()}")
            continue
        d = json.loads(r.stdout)
        for kind in ("ranked", "pareto"):
            for row in d.get(kind, []):
                cfg = row["launch"]["torchtitan_config"]
                name = f"{row['layout']} of '{line}' ({kind}, {v})"
                path = os.path.join(scratch, f"tt_{n}_{v}_{kind}_{row['rank']}.cfg")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(cfg)
                count["configs"] += 1
                c = run([sys.executable, rules, "--world-size", str(row["gpus"]),
                         "--version", v, path])
                if c.returncode == 0:
                    count["rules_ok"] += 1
                else:
                    fails.append(f"rules: {name}:\n{c.stdout}{c.stderr}")
                inexpressible = "# NOT EXPRESSIBLE" in cfg
                count["not_expressible"] += inexpressible
                e = run([tp, "estimate", "--system", system, "--torchtitan-config", path,
                         "--format", "json"])
                if inexpressible:
                    if e.returncode in (0, 1, 64, 65) and "Sanitizer" not in e.stderr:
                        count["clean_refusals"] += 1
                    else:
                        fails.append(f"read back: {name}: exit {e.returncode}: {e.stderr}")
                    continue
                if e.returncode not in (0, 1):
                    fails.append(f"read back: {name}: exit {e.returncode}: {e.stderr.strip()}")
                    continue
                back = json.loads(e.stdout)
                if "per iteration as torchtitan runs it" in cfg:
                    count["round_trip"] += 1
                    want, got = row["iteration_time_s"], back["iteration_time_s"]
                    if abs(got - want) <= 1e-9 * abs(want):
                        count["round_trip_ok"] += 1
                    else:
                        fails.append(f"round trip: {name}: {want!r} s searched, {got!r} s "
                                     "read back")
                    continue
                count["layout_back"] += 1
                lb = back["layout"]
                pairs = [("tensor_model_parallel_size",) * 2,
                         ("pipeline_model_parallel_size",) * 2,
                         ("context_parallel_size",) * 2, ("data_parallel_size",) * 2,
                         ("virtual_stages_per_pipeline_rank",) * 2,
                         ("micro_batch_size",) * 2, ("global_batch_size",) * 2,
                         ("seq_length",) * 2]
                diff = [f"{a} {row[a]} -> {lb[b]}" for a, b in pairs if row[a] != lb[b]]
                if diff:
                    fails.append(f"layout back: {name}: " + ", ".join(diff))
                else:
                    count["layout_back_ok"] += 1

for f in fails:
    print("FAIL", f)
print(f"torchtitan configs: {count['configs']} checked, {count['rules_ok']} pass the rules of "
      f"their version; {count['not_expressible']} say NOT EXPRESSIBLE "
      f"({count['clean_refusals']} read back or refused cleanly); "
      f"{count['round_trip_ok']} of {count['round_trip']} read back to the same iteration time; "
      f"{count['layout_back_ok']} of {count['layout_back']} estimated under another framework "
      f"read back to the same layout")
sys.exit(1 if fails else 0)
EOF
