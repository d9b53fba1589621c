#!/usr/bin/env bash
# examples_e2e.sh - every example of examples/ run as a user runs it (from
# the repository, with TRAINPLAN naming the binary) and its answer checked:
# the exit code, a winner, the budget and deadline kept, the imported
# table used, the config.json read with its published size, the nightly
# shard's records (issue 20, part 5). examples/python_search.py has a test
# of its own (the Python package's).
#
# usage: examples_e2e.sh TRAINPLAN SOURCE_DIR SCRATCH PYTHON3
set -u
TP=$1
SRC=$2
S=$3
PY=$4
rm -rf "$S"
mkdir -p "$S"
unset TRAINPLAN_HWDB
SCRATCH=$S
. "$(dirname "$0")/e2e_lib.sh"
export TRAINPLAN=$TP
export OUT_DIR=$S/ex # not $S/out: run() keeps stdout there
EX=$SRC/examples

# check DESCRIPTION PYTHON_EXPR...: the expression (over the JSON files
# loaded as j(name) from $OUT_DIR) is true.
check() {
    local what=$1
    shift
    if "$PY" - "$OUT_DIR" "$@" <<'EOF' 2>"$S/check.err"; then ok; else bad "$what: $(head -c 600 "$S/check.err")"; fi
import json, os, sys
out = sys.argv[1]
def j(name):
    with open(os.path.join(out, name)) as f:
        return json.load(f)
def lines(name):
    with open(os.path.join(out, name)) as f:
        return [json.loads(l) for l in f]
for expr in sys.argv[2:]:
    if not eval(expr):
        sys.exit("false: " + expr)
EOF
}

# Every file of examples/ is run below (or is data a script reads), so a
# new example without a test fails here.
for f in "$EX"/*; do
    case $(basename "$f") in
    README.md | python_search.py | budget_search.sh | custom_system.sh | \
        import_nccl.sh | hf_config.sh | nightly.sh | sweep_small.json | \
        sweep_nightly.json | qwen3-8b.config.json | hwdb | nccl) ok ;;
    *) bad "examples/$(basename "$f"): no test runs it (tests/examples_e2e.sh)" ;;
    esac
done

# The budget-constrained search: a winner inside every limit, and the
# $100,000 run refused with exit 1 (the script checks that itself).
run 0 "$EX/budget_search.sh"
has "$OUT" "top 3 by time:" "budget: a ranking"
has "$OUT" "nothing fits (exit 1)" "budget: the refusal"
has "$(cat "$OUT_DIR/budget_search_refused.txt")" "NOTHING FEASIBLE" "budget: nothing feasible at \$100,000"
check "budget: limits kept" \
    "len(j('budget_search.json')['ranked']) == 3" \
    "all(r['cost_usd'] <= 169000 and r['gpu_hours'] <= 35000 and r['time_to_train_s'] <= 7 * 86400 for r in j('budget_search.json')['ranked'] + j('budget_search.json')['pareto'])" \
    "j('budget_search.json')['stats']['infeasible']['over_budget_usd'] > 0" \
    "j('budget_search.json')['stats']['infeasible']['over_deadline'] > 0" \
    "j('budget_search.json')['ranked'][0]['iteration_time_s'] <= min(r['iteration_time_s'] for r in j('budget_search.json')['pareto'])"

# The custom system: checked, shown, searched beside Eos.
run 0 "$EX/custom_system.sh"
has "$OUT" "gcp-a3-mega.json: ok" "custom: hw check"
has "$OUT" "gpudirect-tcpxo (rail)" "custom: hw show"
check "custom: both systems searched, within the file's 64 VMs" \
    "j('custom_system.json')['ranked']" \
    "sorted(s['name'] for s in j('custom_system.json')['systems']) == ['eos', 'gcp-a3-mega']" \
    "all(r['gpus'] <= 512 for r in j('custom_system.json')['ranked'])"

# The nccl-tests import: 31 sizes; the 1 GiB row is the mean of the log's
# out-of-place 6759.0 us and in-place 6737.4 us; the gradient all-reduce of
# a DP 16 layout on 2 VMs comes from it.
run 0 "$EX/import_nccl.sh"
CSV=$OUT_DIR/hwdb-measured/measured/gcp-a3-mega/nccl-tests_allreduce_2x8.csv
if [ -f "$CSV" ]; then ok; else bad "import: no $CSV"; fi
has "$(grep -v '^#' "$CSV" | grep -c allreduce)" "31" "import: 31 rows"
check "import: the measured table used" \
    "[s for s in j('import_nccl_coll.json')['sizes'] if s['bytes'] == 1073741824][0]['source'] == 'measured'" \
    "abs([s for s in j('import_nccl_coll.json')['sizes'] if s['bytes'] == 1073741824][0]['time_s'] - 6748.2e-6) < 1e-9" \
    "j('import_nccl_after.json')['breakdown']['dp_comm_exposed_s'] < j('import_nccl_before.json')['breakdown']['dp_comm_exposed_s']" \
    "j('import_nccl_after.json')['iteration_time_s'] < j('import_nccl_before.json')['iteration_time_s']"

# The HuggingFace config: Qwen3-8B's 8.19 B parameters (hf_config.sh's
# source; the model card says 8.2B), planned like a preset.
run 0 "$EX/hf_config.sh"
has "$OUT" "qk_norm                         per-head" "hf: QK norm read"
check "hf: model and search" \
    "j('hf_config_model.json')['params_total'] == 8190735360" \
    "j('hf_config_model.json')['params_layers_total'] == 36 * j('hf_config_model.json')['params_per_layer']" \
    "len(j('hf_config_search.json')['ranked']) == 3" \
    "j('hf_config_search.json')['ranked'][0]['gpus'] in (64, 128)"

# The nightly sweep, one shard of 39 (5 of its 160 scenarios): records in
# order, none an error; scenarios past the A3 file's 64 VMs infeasible.
SHARD=1/39 NIGHT=2026-01-01 run 0 "$EX/nightly.sh"
has "$OUT" "shard 1/39: 5 scenarios" "nightly: the shard's scenarios"
check "nightly: the shard's records" \
    "[r['index'] for r in lines('runs/2026-01-01.shard-1-39.jsonl')] == [1, 40, 79, 118, 157]" \
    "all(r['count'] == 160 and r['status'] in ('ok', 'infeasible') for r in lines('runs/2026-01-01.shard-1-39.jsonl'))" \
    "all(r['best']['gpus'] <= 2048 for r in lines('runs/2026-01-01.shard-1-39.jsonl') if r['status'] == 'ok')" \
    "[r['scenario']['precision'] for r in lines('runs/2026-01-01.shard-1-39.jsonl')] == ['fp8', 'bf16', 'fp8', 'bf16', 'fp8']"
# The small sweep two nights running: the second with the imported
# network table; diff matches the scenarios and reports the changed inputs.
NIGHT=night1 run 0 "$EX/nightly.sh" "$EX/sweep_small.json"
has "$OUT" "night1: 8 scenarios" "nightly: small sweep"
has "$OUT" "no earlier night" "nightly: the first night"
NIGHT=night2 HWDB=$OUT_DIR/hwdb-measured run 0 "$EX/nightly.sh" "$EX/sweep_small.json"
has "$OUT" "since night1" "nightly: compared with the night before"
if [ -f "$OUT_DIR/reports/night2.md" ]; then
    has "$(cat "$OUT_DIR/reports/night2.md")" "with changed input files" "nightly: the new hwdb seen"
else
    bad "nightly: no report"
fi
check "nightly: the small sweep" \
    "all(r['status'] == 'ok' for r in lines('runs/night1.jsonl'))" \
    "[r['id'] for r in lines('runs/night1.jsonl')] == [r['id'] for r in lines('runs/night2.jsonl')]"

echo "examples_e2e: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
