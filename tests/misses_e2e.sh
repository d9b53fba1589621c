#!/usr/bin/env bash
# misses_e2e.sh - issue 31 item 2 through the binary: a search that admits
# nothing says, in the limits' units, how near it came and what binds,
# and which levers fit, each of them run here again as the printed options
# and admitted (exit 0):
#  - a dollar budget miss (H100s of eos): the cheapest layout's cost and
#    excess, --precision fp8, --tokens and --price levers;
#  - a deadline miss: the fastest layout, a --gpus lever;
#  - a budget and a deadline: each limit's status, the binding one named;
#  - a memory miss: the layout nearest to fitting, a --gpus lever;
#  - a need and its limit a few MiB apart: never printed as equal numbers;
#  - JSON (nearest_miss: binding, nearest, levers), JSON Lines and CSV
#    carry them; the same bytes at 1 and 2 threads;
#  - SI suffixes: --tokens 2T, --budget-usd 1.5M read as 2e12 and 1.5e6,
#    bad ones refused with the option, the value and the form (exit 64).
#
# usage: misses_e2e.sh TRAINPLAN SCRATCH
set -u
TP=$1
SCRATCH=$2
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
unset TRAINPLAN_HWDB
. "$(dirname "$0")/e2e_lib.sh"

# py EXPR: evaluates a Python expression over j = json.loads($OUT).
py() {
    printf '%s' "$OUT" | python3 -c "import json, sys; j = json.load(sys.stdin); print($1)"
}
# lever_options: the option strings of the levers of $OUT (JSON), one a line.
lever_options() {
    py "'\n'.join(l['option'] for l in j['nearest_miss']['levers'])"
}
# every lever's #1 meets every limit of the JSON in $OUT
levers_met() {
    if [ "$(py "all(s['met'] for l in j['nearest_miss']['levers'] for s in l['limits'].values())")" = True ]; then ok; else bad "$1: a lever's #1 breaks a limit"; fi
}

# --- a dollar budget --------------------------------------------------------
H100=(search -m llama3-8b --system eos --gpus 8,16 -s 2048 -B 128 --no-timing --top 3)
run 0 "$TP" "${H100[@]}" --tokens 20B --objective cost --format json
CHEAP=$(py "j['ranked'][0]['cost_usd']")
BUDGET=$(python3 -c "print('%.0f' % (0.9 * $CHEAP))")
run 1 "$TP" "${H100[@]}" --tokens 20B --budget-usd "$BUDGET"
has "$OUT" "nearest miss (budget_usd binds): the cheapest layout" "budget: the cheapest layout named"
has "$OUT" "(11.1 %) over the \$" "budget: the excess as a share (1/0.9 - 1)"
has "$OUT" "levers that fit" "budget: levers"
has "$OUT" "  --precision fp8: \$" "budget: fp8 on H100s, with its cost"
has "$OUT" "  --tokens " "budget: the tokens that fit"
has "$OUT" "  --price " "budget: the price that fits"
has "$ERR" "nothing feasible; the cheapest layout" "budget: stderr"
has "$ERR" "fits with --precision fp8" "budget: stderr names the levers"
run 1 "$TP" "${H100[@]}" --tokens 20B --budget-usd "$BUDGET" --format json
if [ "$(py "j['nearest_miss']['binding']")" = budget_usd ]; then ok; else bad "budget json: binding"; fi
NEAR=$(py "j['nearest_miss']['nearest']['limits']['budget_usd']['value']")
if python3 -c "import sys; sys.exit(abs($NEAR / $CHEAP - 1) > 1e-9)"; then ok; else bad "budget json: the nearest costs $NEAR, the cheapest $CHEAP"; fi
if [ "$(py "j['nearest_miss']['nearest']['limits']['budget_usd']['met']")" = False ]; then ok; else bad "budget json: the nearest meets the budget"; fi
levers_met "budget json"
# each lever, run as printed, admits a layout
n=0
while IFS= read -r opt; do
    [ -n "$opt" ] || continue
    n=$((n + 1))
    # shellcheck disable=SC2086 # the option and its value: two words
    run 0 "$TP" "${H100[@]}" --tokens 20B --budget-usd "$BUDGET" $opt
done <<EOF
$(lever_options)
EOF
if [ "$n" -ge 3 ]; then ok; else bad "budget: $n levers, expected fp8, tokens and price"; fi

# --- a deadline ---------------------------------------------------------------
NEOX=(search --model gpt-neox-20b --system perlmutter --max-gpus 128 -s 2048 -B 1024 --tokens 300B --no-timing)
run 1 "$TP" "${NEOX[@]}" --deadline 10d
has "$OUT" "nearest miss (deadline binds): the fastest layout" "deadline: the fastest layout named"
has "$OUT" "past the deadline of 10 days (binds)" "deadline: its excess"
has "$OUT" "  --gpus 256 (in place of the counts searched): " "deadline: more GPUs"
# --gpus in place of the counts asked for (--max-gpus 128)
run 0 "$TP" "${NEOX[@]/--max-gpus/--min-gpus}" --deadline 10d --gpus 256
has "$OUT" "top " "deadline: --gpus 256 admits"

# --- two limits: the binding one named, each one's status --------------------
run 1 "$TP" "${NEOX[@]}" --deadline 10d --budget-usd 100k
has "$OUT" "nearest miss (deadline binds): the layout least over its tightest limit" "two limits: which binds"
has "$OUT" "  budget_usd: costs \$" "two limits: the budget's status"
if printf '%s\n' "$OUT" | grep -q '^  deadline: trains in .* (binds)$'; then ok; else bad "two limits: the deadline marked as binding"; fi
if printf '%s\n' "$OUT" | grep -q '^  budget_usd: .*(binds)$'; then bad "two limits: the budget marked as binding too"; else ok; fi
run 1 "$TP" "${NEOX[@]}" --deadline 60d --budget-gpu-hours 50k
has "$OUT" "nearest miss (budget_gpu_hours binds)" "two limits: the GPU-hours bind"
has "$OUT" "within the deadline of 60 days" "two limits: the deadline met"
run 1 "$TP" "${NEOX[@]}" --deadline 60d --budget-gpu-hours 50k --format json
if [ "$(py "sorted(j['nearest_miss']['nearest']['limits'])")" = "['budget_gpu_hours', 'deadline']" ]; then ok; else bad "two limits json: both limits"; fi
if [ "$(py "j['nearest_miss']['nearest']['limits']['deadline']['met']")" = True ]; then ok; else bad "two limits json: deadline met"; fi

# --- memory -----------------------------------------------------------------
G175=(search --model gpt3-175b --system perlmutter --max-gpus 8 -s 2048 -B 64 --no-timing)
run 1 "$TP" "${G175[@]}"
has "$OUT" "nearest miss (memory binds): the layout nearest to fitting" "memory: named"
has "$OUT" "more than the 36.50 GiB allowed (binds)" "memory: the limit"
has "$OUT" "  --gpus 64 (in place of the counts searched): peak " "memory: more GPUs"
run 0 "$TP" "${G175[@]/--max-gpus/--min-gpus}" --gpus 64
# savers off and recomputation pinned out: the lever that turns savers on
run 1 "$TP" search -m llama3-8b --system eos --gpus 2 -s 8192 -B 8 --fix recompute=none --no-memory-savers --no-timing
has "$OUT" "  without --no-memory-savers: peak " "memory: the savers lever"
run 0 "$TP" search -m llama3-8b --system eos --gpus 2 -s 8192 -B 8 --fix recompute=none --no-timing

# --- a need and its limit 5 MB apart: never two equal numbers -----------------
# (the smallest peak of Llama 3 8B on 8 H100s, from a fraction nothing
# fits; then a fraction 5 MB under it)
SMALL=(search -m llama3-8b --system eos --gpus 8 -s 2048 -B 128 --no-timing)
run 1 "$TP" "${SMALL[@]}" --max-memory-fraction 0.01 --format json
NEEDS=$(py "j['nearest_miss']['memory']['needs']")
CAP=$(py "j['nearest_miss']['memory']['limit'] / 0.01")
FRAC=$(python3 -c "print(repr(($NEEDS - 5e6) / $CAP))")
run 1 "$TP" "${SMALL[@]}" --max-memory-fraction "$FRAC"
LINE=$(printf '%s\n' "$OUT" | grep '^  memory: needs')
if printf '%s' "$LINE" | python3 -c "
import re, sys
m = re.search(r'needs ([0-9.]+) GiB, ([0-9.]+) MiB \(.*\) more than the ([0-9.]+) GiB allowed', sys.stdin.read())
sys.exit(not (m and m.group(1) != m.group(3) and float(m.group(1)) > float(m.group(3))
              and 4 < float(m.group(2)) < 6))"; then ok; else bad "equal numbers: '$LINE'"; fi

# --- JSON Lines, CSV, threads -------------------------------------------------
run 1 "$TP" "${NEOX[@]}" --deadline 10d --format jsonl
LAST=$(printf '%s\n' "$OUT" | tail -n 1)
if printf '%s' "$LAST" | python3 -c "import json, sys; j = json.load(sys.stdin); sys.exit(j['nearest_miss']['binding'] != 'deadline' or not j['nearest_miss']['levers'])"; then ok; else bad "jsonl: nearest_miss on the last line"; fi
run 1 "$TP" "${NEOX[@]}" --deadline 10d --format csv
if printf '%s\n' "$OUT" | python3 -c "
import csv, sys
rows = list(csv.DictReader(sys.stdin))
near = [r for r in rows if r['set'] == 'nearest_miss']
lev = [r for r in rows if r['set'] == 'lever']
sys.exit(not (len(near) == 1 and near[0]['miss_limit'] == 'deadline'
              and float(near[0]['miss_excess']) > 0
              and float(near[0]['miss_limit_value']) == 864000
              and lev and all(float(r['miss_excess']) <= 0 and r['lever'] for r in lev)))"; then ok; else bad "csv: nearest_miss and lever rows"; fi
run 1 "$TP" --threads 1 "${NEOX[@]}" --deadline 10d --budget-usd 100k --format json
ONE=$OUT
run 1 "$TP" --threads 2 "${NEOX[@]}" --deadline 10d --budget-usd 100k --format json
if [ "$ONE" = "$OUT" ]; then ok; else bad "threads: a miss's JSON differs at 1 and 2 threads"; fi

# --- SI suffixes ----------------------------------------------------------------
run 0 "$TP" "${H100[@]}" --tokens 2T --budget-usd 1.5M --format json
A=$OUT
run 0 "$TP" "${H100[@]}" --tokens 2000000000000 --budget-usd 1500000 --format json
if [ "$A" = "$OUT" ]; then ok; else bad "SI: 2T and 1.5M differ from 2e12 and 1.5e6"; fi
run 0 "$TP" "${H100[@]}" --tokens 1.1T --budget-gpu-hours 10M --price 2.5 --format json
if [ "$(py "j['tokens']")" = 1100000000000 ]; then ok; else bad "SI: 1.1T is whole"; fi
run 0 "$TP" search -m llama3-8b --system eos --max-gpus 0.016k -s 2048 -B 128 --no-timing --format json
if [ "$(py "j['max_gpus']")" = 16 ]; then ok; else bad "SI: --max-gpus 0.016k"; fi
run 64 "$TP" "${H100[@]}" --tokens 2x
has "$ERR" "--tokens" "SI refusal: the option" && has "$ERR" "'2x'" "SI refusal: the value"
has "$ERR" "SI suffix k, M, G or B, T" "SI refusal: the form"
run 64 "$TP" "${H100[@]}" --tokens 1e10 --budget-usd 1.5m
has "$ERR" "--budget-usd: expected an amount in USD" "SI refusal: --budget-usd m is not M"
run 64 "$TP" "${H100[@]}" --tokens 1.5k5
run 64 "$TP" search -m llama3-8b --system eos --max-gpus 16 -s 8k -B 128
has "$ERR" "--seq-length: '8k' has an SI suffix" "seq-length: a suffix refused by name"
has "$ERR" "e.g. 8192" "seq-length: the plain form"
run 64 "$TP" search -m llama3-8b --system eos --max-gpus 16 -s 2048 -B 1k
has "$ERR" "--global-batch-size" "global-batch-size: a suffix refused"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
