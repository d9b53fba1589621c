#!/bin/bash
# bench_smoke.sh BENCH_DIR SCRATCH - every bench/ program runs once
# with its smallest arguments and exits 0. A smoke test, not a benchmark:
# nothing is timed or compared here (bench/results holds the figures).
# Issue 32 found bench/sweep_speed crashing (SIGSEGV: it called cmd_sweep
# with a NULL emit_out) and no test running the bench programs. The
# smallest arguments: search_speed only its first job (the flagship)
# and 2 runs of it as a process (warm, cold and off fit cache),
# sweep_speed one model (40 scenarios, not 200) at 2 threads (the crash
# was at 2): a few seconds each in a Release build, under a minute with
# the sanitizers.
set -u
B=$1
S=$2
rm -rf "$S"
mkdir -p "$S"
pass=0
fail=0
smoke() { # smoke NAME ARGS...
    local name=$1
    shift
    if "$B/$name" "$@" >"$S/$name.out" 2>"$S/$name.err"; then
        pass=$((pass + 1))
    else
        local rc=$?
        fail=$((fail + 1))
        echo "FAIL: bench/$name $*: exit $rc" >&2
        tail -n 5 "$S/$name.err" >&2
    fi
}
smoke op_speed a100-80gb
smoke estimate_speed 10
smoke diff_speed 16 1 "$S"
smoke validate_runs --source narayanan2021_sc21 --no-loso
smoke validate_memory
smoke validate_fit
smoke search_speed 1 1 2
smoke sweep_speed 2 "$S" 1
smoke session_speed 20 0.2 1
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
