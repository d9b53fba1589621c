# e2e_lib.sh - what the end-to-end scripts share (sourced, not run): the
# pass/fail counters and run/has, which keep a command's stdout in $OUT
# and stderr in $ERR under $SCRATCH.
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# run EXPECTED_RC CMD...: runs, keeps stdout in $OUT and stderr in $ERR.
run() {
    local want=$1
    shift
    "$@" >"$SCRATCH/out" 2>"$SCRATCH/err"
    local rc=$?
    OUT=$(cat "$SCRATCH/out")
    ERR=$(cat "$SCRATCH/err")
    if [ "$rc" -ne "$want" ]; then
        bad "exit $rc, expected $want: $*"
        echo "  stderr: $ERR" | head -c 800 >&2
        echo >&2
        return 1
    fi
    ok
}

has() { # has TEXT NEEDLE DESCRIPTION
    if printf '%s' "$1" | grep -qF -- "$2"; then ok; else bad "$3: missing '$2'"; fi
}
