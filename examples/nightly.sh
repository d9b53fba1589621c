#!/bin/sh
# nightly.sh - a platform team's nightly what-if sweep: every model of the
# spec on every system at every GPU count and precision, then what changed
# since the previous night (docs/nightly.md has the cron and Slurm recipes
# this follows).
#
# usage: ./examples/nightly.sh [SPEC]      (default examples/sweep_nightly.json)
# Environment:
#   TRAINPLAN  the binary (default ./build/trainplan)
#   OUT_DIR    where runs/NIGHT.jsonl and reports/NIGHT.md go
#              (default $TMPDIR/trainplan-nightly)
#   HWDB       a hardware directory added with --hwdb, over the spec's own
#              (its "hwdb" key: examples/hwdb, for the gcp-a3-mega system)
#   NIGHT      the run's name (default today's date, YYYY-MM-DD); the
#              previous night is the run whose name sorts last before it
#   SHARD      I/N: run only that shard (round robin) and stop; shards of
#              one night are merged with `trainplan merge` before a diff
# Exit: 0 (with or without changes), the sweep's or diff's code otherwise.
set -u
SPEC=${1:-examples/sweep_nightly.json}
# a spec given relative to where this was called from; the paths in a spec
# (config.json models, hwdb directories) are read from the spec's folder
case $SPEC in /*) ;; *) [ -e "$SPEC" ] && SPEC=$(pwd)/$SPEC ;; esac
cd "$(dirname "$0")/.."
TRAINPLAN=${TRAINPLAN:-./build/trainplan}
OUT_DIR=${OUT_DIR:-${TMPDIR:-/tmp}/trainplan-nightly}
HWDB=${HWDB:-}
if [ -n "$HWDB" ]; then set -- --hwdb "$HWDB"; else set --; fi
NIGHT=${NIGHT:-$(date +%F)}
mkdir -p "$OUT_DIR/runs" "$OUT_DIR/reports"

if [ -n "${SHARD:-}" ]; then
    out=$OUT_DIR/runs/$NIGHT.shard-$(echo "$SHARD" | tr / -).jsonl
    "$TRAINPLAN" "$@" sweep --resume --shard "$SHARD" "$SPEC" -o "$out"
    rc=$?
    [ $rc -eq 0 ] || { echo "sweep failed: exit $rc" >&2; exit $rc; }
    echo "$NIGHT, shard $SHARD: $(grep -c '' "$out") scenarios in $out" \
         "($(grep -c '"status":"ok"' "$out") ok," \
         "$(grep -c '"status":"infeasible"' "$out") infeasible)"
    exit 0
fi

out=$OUT_DIR/runs/$NIGHT.jsonl
# --resume: a rerun after a crash picks up where the sweep stopped
"$TRAINPLAN" "$@" sweep --resume "$SPEC" -o "$out"
rc=$?
[ $rc -eq 0 ] || { echo "sweep failed: exit $rc" >&2; exit $rc; }
echo "$NIGHT: $(grep -c '' "$out") scenarios in $out" \
     "($(grep -c '"status":"ok"' "$out") ok," \
     "$(grep -c '"status":"infeasible"' "$out") infeasible)"

prev=
for f in "$OUT_DIR"/runs/*.jsonl; do
    case $f in *.shard-*) continue ;; esac
    name=$(basename "$f" .jsonl)
    if [ "$name" \< "$NIGHT" ]; then prev=$f; fi
done
[ -n "$prev" ] || { echo "no earlier night to compare with"; exit 0; }
report=$OUT_DIR/reports/$NIGHT.md
"$TRAINPLAN" diff --threshold 0.02 --format md "$prev" "$out" -o "$report"
case $? in
0) echo "$NIGHT: nothing changed since $(basename "$prev" .jsonl)" ;;
3) echo "$NIGHT: layouts, times or costs changed since $(basename "$prev" .jsonl): $report" ;;
*) echo "diff failed" >&2; exit 1 ;;
esac
exit 0
