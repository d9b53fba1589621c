#!/usr/bin/env bash
# validate_loso.sh - bench/validate_runs' left-one-source-out fit leaves
# the scored source out: on fixtures/runs/loso_runs.json (three sources,
# one run each, built so that each source's own fit sits at an end of the
# grid), the in-sample and left-out kernel efficiencies are known without
# the estimator's figures: src_a alone wants 1.000, src_b and src_c 0.200,
# and src_a's error outweighs the others', so in any model (src_a and
# src_b share a stack in all of them)
#   src_a: in sample 1.000, left out 0.200 (src_b, or src_b and src_c);
#   src_b: 1.000 both ways (src_a decides either way);
# and in model "per stack"
#   src_c: in sample 0.200 (its stack alone); left out its stack has no
#          run, so the fit of one constant over src_a and src_b: 1.000.
# Also: a bad layout.framework is refused with file, field and value.
#
# usage: validate_loso.sh VALIDATE_RUNS FIXTURES SCRATCH
set -u
VR=$1
FIX=$2
SCRATCH=$3
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

RUNS=$FIX/runs/loso_runs.json
csv() { # csv [OPTIONS]: validate_runs --csv on RUNS into out.csv
    if "$VR" --runs "$RUNS" --csv "$@" >"$SCRATCH/out.csv" 2>"$SCRATCH/err"; then ok; else
        bad "validate_runs --csv $* failed: $(cat "$SCRATCH/err")"
    fi
}
# expect ID COLUMN VALUE
expect() {
    local got
    got=$(awk -F, -v id="$1" -v col="$2" '
        NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $1 == id { print $c[col] }' "$SCRATCH/out.csv")
    if [ "$got" = "$3" ]; then ok; else bad "$1 $2: got '$got', expected '$3'"; fi
}
csv # the estimator's model
expect loso-a kernel_eff 1.000
expect loso-a loso_kernel_eff 0.200
expect loso-b kernel_eff 1.000
expect loso-b loso_kernel_eff 1.000
csv --model "per stack"
expect loso-a kernel_eff 1.000
expect loso-a loso_kernel_eff 0.200
expect loso-b kernel_eff 1.000
expect loso-b loso_kernel_eff 1.000
expect loso-c stack pytorch-compiled
expect loso-c kernel_eff 0.200
expect loso-c loso_kernel_eff 1.000
# the left-out prediction is a different estimate, not the in-sample one
pa=$(awk -F, '$1 == "loso-a" { print ($7 == $9) }' "$SCRATCH/out.csv")
if [ "$pa" = 0 ]; then ok; else bad "loso-a: LOSO prediction equals the in-sample one"; fi

# the text says which constants fell back
"$VR" --runs "$RUNS" --model "per stack" >"$SCRATCH/out.txt" 2>&1
if grep -q '^all but src_c .* 1\.000\* ' "$SCRATCH/out.txt"; then ok; else
    bad "the src_c fold does not mark its stack's fallback"
fi
"$VR" --runs "$RUNS" --no-loso >"$SCRATCH/noloso.txt" 2>&1
if grep -q 'all but' "$SCRATCH/noloso.txt"; then bad "--no-loso still fits folds"; else ok; fi

sed 's/"framework": "torchtitan"/"framework": "nemo"/' "$RUNS" >"$SCRATCH/bad.json"
"$VR" --runs "$SCRATCH/bad.json" >/dev/null 2>"$SCRATCH/bad.err"
rc=$?
if [ "$rc" -eq 65 ]; then ok; else bad "bad framework: exit $rc, expected 65"; fi
if grep -qF "bad.json: \$.runs[2].layout.framework: expected one of" "$SCRATCH/bad.err" \
    && grep -qF "'nemo'" "$SCRATCH/bad.err"; then ok; else
    bad "bad framework message: $(cat "$SCRATCH/bad.err")"
fi

echo "validate_loso: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
