#!/usr/bin/env bash
# validate_fit.sh - bench/validate_fit runs on the repository's run files
# (validation_runs.json, moe_validation_runs.json, ran_runs.json) and exits
# 0 whatever the runs show; its report has the per-source table with a
# total row, --csv a row per checked run with the peak's terms; bad usage
# and a missing file give 64 and 66 with a message.
#
# usage: validate_fit.sh VALIDATE_FIT SCRATCH
set -u
VF=$1
SCRATCH=$2
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

if "$VF" --out "$SCRATCH/fit.md" 2>"$SCRATCH/err"; then ok; else
    bad "validate_fit exited $?: $(head -3 "$SCRATCH/err")"
fi
grep -q '^| \*\*all\*\* |' "$SCRATCH/fit.md" && ok || bad "no total row"
for s in mlperf_training liu2025_moe_parallel_folding mlperf_ran megatron_lm_ci; do
    grep -q "^| $s |" "$SCRATCH/fit.md" && ok || bad "no row for source $s"
done
[ ! -e "$SCRATCH/fit.md.tmp" ] && ok || bad "temporary file left"

if "$VF" --csv >"$SCRATCH/fit.csv" 2>/dev/null; then ok; else bad "--csv exited $?"; fi
head -1 "$SCRATCH/fit.csv" | grep -q '^id,source,file,.*,peak_gib,memory_gib,ratio,margin,' \
    && ok || bad "csv header: $(head -1 "$SCRATCH/fit.csv")"
rows=$(($(wc -l <"$SCRATCH/fit.csv") - 1))
[ "$rows" -ge 600 ] && ok || bad "only $rows checked runs"
# every row's ratio is its peak over its memory, admitted = peak <= limit
awk -F, 'NR > 1 { r = $20 / $21; if (r - $22 > 1e-3 || $22 - r > 1e-3) bad++;
    if (($20 <= $24 + 1e-3) != $26 && ($20 - $24) * ($20 - $24) > 1e-4) bad++ }
    END { exit (bad > 0) }' "$SCRATCH/fit.csv" && ok || bad "csv columns disagree"

"$VF" --bogus >/dev/null 2>"$SCRATCH/err"
[ $? -eq 64 ] && grep -q usage "$SCRATCH/err" && ok || bad "bad usage not 64"
"$VF" --runs "$SCRATCH/none.json" >/dev/null 2>"$SCRATCH/err"
[ $? -eq 66 ] && grep -q none.json "$SCRATCH/err" && ok || bad "missing file not 66"
printf '{"runs": [{"id": 1}]}\n' >"$SCRATCH/bad.json"
"$VF" --runs "$SCRATCH/bad.json" >/dev/null 2>"$SCRATCH/err"
[ $? -eq 65 ] && grep -q 'bad.json: \$.runs\[0\]' "$SCRATCH/err" && ok \
    || bad "bad run not 65: $(cat "$SCRATCH/err")"

echo "validate_fit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
