#!/bin/sh
# budget_search.sh - the fastest way to train Llama 3 8B on a trillion tokens
# without spending more than a budget or missing a deadline.
#
# Searches every layout on H100 (eos) and H200 (dgx-h200) nodes, 64 to 512
# GPUs, keeps those whose whole run costs at most $169,000, takes at most
# 35,000 GPU-hours and ends within 7 days, and ranks them by time. Then asks
# for the same run at $100,000, which no layout meets: exit 1, with the
# counts per reason, the nearest miss in dollars and days, and the levers
# that would fit (fewer tokens, a lower price), each checked by a search.
#
# Run from anywhere: ./examples/budget_search.sh
# Environment: TRAINPLAN (default ./build/trainplan), OUT_DIR (where the
# JSON answer goes; default a directory under $TMPDIR).
set -eu
cd "$(dirname "$0")/.."
TRAINPLAN=${TRAINPLAN:-./build/trainplan}
OUT_DIR=${OUT_DIR:-${TMPDIR:-/tmp}/trainplan-examples}
mkdir -p "$OUT_DIR"

set -- -m llama3-8b --system eos,dgx-h200 --gpus 64-512:64 \
    -s 8192 -B 512 --tokens 1e12 --objective time --top 3 --no-timing

echo "== within \$169,000, 35,000 GPU-hours and 7 days"
"$TRAINPLAN" search "$@" --budget-usd 169000 --budget-gpu-hours 35000 \
    --deadline 7d --format json -o "$OUT_DIR/budget_search.json"
"$TRAINPLAN" search "$@" --budget-usd 169000 --budget-gpu-hours 35000 \
    --deadline 7d | sed -n '1,/^launch /p'

echo
echo "== the same run for \$100,000: nothing fits (exit 1)"
rc=0
"$TRAINPLAN" search "$@" --budget-usd 100000 --deadline 7d \
    >"$OUT_DIR/budget_search_refused.txt" 2>&1 || rc=$?
sed -n '/^NOTHING FEASIBLE/,$p' "$OUT_DIR/budget_search_refused.txt"
if [ "$rc" -ne 1 ]; then
    echo "budget_search.sh: expected exit 1 for the \$100,000 budget, got $rc" >&2
    exit 1
fi
echo
echo "JSON answer: $OUT_DIR/budget_search.json"
