#!/usr/bin/env bash
# fuzz/corpus.sh TARGET DIR: assembles TARGET's seed corpus in DIR from
# the seeds fuzz/seeds.txt lists (test fixtures, hwdb files, fuzz/seeds/),
# each cut to its first 64 lines (a fuzzer mutates small inputs faster;
# the replay test runs them whole), plus the kept crashes of
# fuzz/regressions/TARGET. Nothing large is committed: the corpus is
# made at run time. DIR may already hold a corpus: files are added.
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: $0 TARGET DIR" >&2
    exit 2
fi
t=$1 out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
paths=$(awk -v t="$t" '$1 == t { $1 = ""; print }' "$root/fuzz/seeds.txt")
if [ -z "$paths" ]; then
    echo "$0: no target '$t' in fuzz/seeds.txt" >&2
    exit 2
fi
[ -d "$root/fuzz/regressions/$t" ] && paths="$paths fuzz/regressions/$t"
mkdir -p "$out"
n=0
for p in $paths; do
    while IFS= read -r -d '' f; do
        # One name per source file: its path with '/' as '_'.
        rel=${f#"$root"/}
        head -n 64 "$f" >"$out/${rel//\//_}"
        n=$((n + 1))
    done < <(find "$root/$p" -type f ! -name '.*' -print0)
done
echo "$t: $n seeds in $out" >&2
