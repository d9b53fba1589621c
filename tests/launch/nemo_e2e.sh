#!/bin/sh
# nemo_e2e.sh PYTHON TRAINPLAN SRCDIR - the NeMo launch checks of issue 18.
#
# For each search of tests/launch/matrix.txt (run with --format json --top 10
# --no-timing), every ranked and Pareto layout's NeMo launch, in both forms
# (Megatron-Bridge overrides, the default; NeMo 1 YAML keys, --nemo-format
# nemo1), goes through nemo_rules.py; the default one is read back with
# `trainplan estimate --system S --nemo-overrides FILE --format json`, which
# must give the search's iteration_time_s (relative 1e-9). Layouts the
# search estimated for another framework's software (--framework
# torchtitan) are checked but not read back: the overrides run Megatron-Core,
# so they are a different job (the output says so in a comment).
# Prints the counts; fails on any violation.
set -u
PY=$1
TP=$2
SRC=$3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/nemo_e2e.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT INT TERM

n=0
grep -v '^[[:space:]]*#' "$SRC/tests/launch/matrix.txt" | grep -v '^[[:space:]]*$' \
    >"$TMP/matrix" || exit 1
while IFS= read -r line; do
    n=$((n + 1))
    # shellcheck disable=SC2086  # a matrix line is a list of options
    "$TP" search $line --format json --top 10 --no-timing >"$TMP/s$n.bridge.json" \
        2>"$TMP/s$n.err"
    rc=$?
    # shellcheck disable=SC2086
    "$TP" search $line --format json --top 10 --no-timing --nemo-format nemo1 \
        >"$TMP/s$n.nemo1.json" 2>>"$TMP/s$n.err"
    rc1=$?
    # 1: nothing feasible, still an answer
    if [ "$rc" -gt 1 ] || [ "$rc1" -gt 1 ]; then
        echo "FAIL search $line: exit $rc/$rc1: $(cat "$TMP/s$n.err")"
        exit 1
    fi
    printf '%s\n' "$line" >"$TMP/s$n.line"
done <"$TMP/matrix"

exec "$PY" - "$TP" "$SRC" "$TMP" "$n" <<'EOF'
import json, os, subprocess, sys
tp, src, tmp, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sys.path.insert(0, os.path.join(src, "tests", "launch"))
import nemo_rules

counts = {"checked": 0, "passed": 0, "round_trips": 0, "round_trips_ok": 0,
          "not_read_back": 0, "comments": 0}
fails = []
for s in range(1, n + 1):
    line = open(f"{tmp}/s{s}.line").read().strip()
    system = line.split("--system")[1].split()[0]
    for form in ("bridge", "nemo1"):
        d = json.load(open(f"{tmp}/s{s}.{form}.json"))
        rows = [("ranked", r) for r in d.get("ranked", [])] + \
               [("pareto", r) for r in d.get("pareto", [])]
        for set_, r in rows:
            text = r["launch"]["nemo"]
            where = f"[{line}] {set_} {r['rank']} {r['layout']} {form}"
            counts["checked"] += 1
            target, bad, notes = nemo_rules.check(text, r["gpus"])
            counts["comments"] += sum(1 for x in notes
                                      if not x.startswith(("# Megatron-Bridge",
                                                           "# NeMo 1.x",
                                                           "# base recipe")))
            if target != form:
                bad = [f"target {target}, expected {form}"] + bad
            if bad:
                fails += [f"{where}: {b}" for b in bad]
                continue
            counts["passed"] += 1
            if form != "bridge":
                continue
            if "software; these keys run Megatron-Core's" in text:
                counts["not_read_back"] += 1
                continue
            counts["round_trips"] += 1
            path = f"{tmp}/o.txt"
            with open(path, "w") as f:
                f.write(text)
            p = subprocess.run([tp, "estimate", "--system", r["system"],
                                "--nemo-overrides", path, "--format", "json"],
                               capture_output=True, text=True)
            if p.returncode not in (0, 1):
                fails.append(f"{where}: estimate exit {p.returncode}: "
                             f"{p.stderr.strip()}")
                continue
            e = json.loads(p.stdout)
            a, b = r["iteration_time_s"], e["iteration_time_s"]
            if abs(a - b) > 1e-9 * abs(a) or e["layout"]["chosen"]:
                fails.append(f"{where}: round trip {a!r} -> {b!r} (chosen "
                             f"{e['layout']['chosen']})")
                continue
            counts["round_trips_ok"] += 1
for f in fails:
    print("FAIL", f)
print(f"nemo launches: {counts['checked']} checked, {counts['passed']} "
      f"passed; read back: {counts['round_trips']} tried, "
      f"{counts['round_trips_ok']} to the same iteration time, "
      f"{counts['not_read_back']} not read back (estimated for another "
      f"framework's software); {counts['comments']} comment lines on what "
      f"a target cannot express")
sys.exit(1 if fails or counts["checked"] == 0 else 0)
EOF
