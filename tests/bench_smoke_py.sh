#!/bin/bash
# bench_smoke_py.sh TRAINPLAN SOURCE_DIR SCRATCH - every Python program of
# bench/ runs once on a small input and exits 0 (issue 32: a benchmark
# nobody runs rots). A smoke test: nothing is timed or compared. What
# cannot run here says why and is counted as skipped:
#   py_session_speed.py  loads libtrainplan.so into Python: skipped where
#                        the sanitizer runtime cannot be (TRAINPLAN_PY_SKIP)
#   opfit_compare.py     needs numpy, scikit-learn and xgboost
#   import_collectives.py, import_op_samples.py
#                        read ../shared/data (the seed samples, XLA's
#                        tables), which a clone does not have; run with
#                        --repo SCRATCH so the repository stays as it is
set -u
T=$1
SRC=$2
S=$3
rm -rf "$S"
mkdir -p "$S"
pass=0
fail=0
skip=0
run() { # run NAME ARGS...
    local name=$1
    shift
    if python3 "$SRC/bench/$name" "$@" >"$S/$name.out" 2>"$S/$name.err"; then
        pass=$((pass + 1))
    else
        local rc=$?
        if [ "$rc" -eq 77 ]; then
            skip=$((skip + 1))
            echo "skip: bench/$name: $(tail -n 1 "$S/$name.out")"
            return
        fi
        fail=$((fail + 1))
        echo "FAIL: bench/$name $*: exit $rc" >&2
        tail -n 5 "$S/$name.err" >&2
    fi
}
run py_session_speed.py 20 0.2 1
run fp8_vs_bf16.py "$T"
run seed_configs.py --trainplan "$T" --md "$S/seed_configs.md"
run coll_efficiency.py --trainplan "$T" --out "$S/coll"
run component_report.py "$T" --per-file 1 --gpu mi300x
if python3 -c "import numpy, sklearn, xgboost" 2>/dev/null; then
    run opfit_compare.py --help
else
    skip=$((skip + 1))
    echo "skip: bench/opfit_compare.py: needs numpy, scikit-learn and xgboost"
fi
SHARED=$(cd "$SRC/.." && pwd)/shared
if [ -d "$SHARED/data/seed_samples" ]; then
    mkdir -p "$S/repo"
    cp -r "$SRC/hwdb" "$S/repo/hwdb"
    run import_collectives.py --shared "$SHARED" --repo "$S/repo"
    run import_op_samples.py --shared "$SHARED" --repo "$S/repo"
else
    skip=$((skip + 2))
    echo "skip: bench/import_collectives.py, import_op_samples.py: no $SHARED/data"
fi
echo "$pass passed, $skip skipped, $fail failed"
[ "$fail" -eq 0 ]
