# sweep_lib.sh - the harness sweep_e2e.sh and sweep_spec_e2e.sh share,
# sourced after they set S (the scratch folder, which it empties):
# counters, expect RC CMD... (stdout in $S/out, stderr in $S/err, the
# exit status checked), has / hasnt FILE NEEDLE DESCRIPTION, same A B
# DESCRIPTION (byte identity).
rm -rf "$S"
mkdir -p "$S"
unset TRAINPLAN_HWDB
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect() {
    local want=$1
    shift
    "$@" >"$S/out" 2>"$S/err"
    local rc=$?
    if [ "$rc" -eq "$want" ]; then ok; else
        bad "exit $rc, expected $want: $*"
        sed 's/^/  stderr: /' "$S/err" | head -5 >&2
    fi
}
has() { if grep -qF -- "$2" "$1"; then ok; else bad "$3: '$2' not in $1"; fi; }
hasnt() { if grep -qF -- "$2" "$1"; then bad "$3: '$2' in $1"; else ok; fi; }
same() { if cmp -s "$1" "$2"; then ok; else bad "$3: $1 and $2 differ"; fi; }
