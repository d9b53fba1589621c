#!/usr/bin/env bash
# fuzz/run.sh BUILD_DIR TARGET SECONDS [LIBFUZZER_OPTION...]: fuzzes
# TARGET (hf_config, hwdb, ...) for SECONDS with the fuzz_TARGET binary of
# BUILD_DIR (configured with -DTRAINPLAN_FUZZ=ON), one job, from a corpus
# in BUILD_DIR/fuzz-corpus/TARGET that fuzz/corpus.sh seeds and the run
# grows. A crash, leak, sanitizer report or timeout is written to
# BUILD_DIR/fuzz-findings/TARGET/ and the script exits non-zero (keep it
# as fuzz/regressions/TARGET/NAME: see fuzz/README.md).
set -euo pipefail
if [ $# -lt 3 ]; then
    echo "usage: $0 BUILD_DIR TARGET SECONDS [LIBFUZZER_OPTION...]" >&2
    exit 2
fi
build=$1 t=$2 secs=$3
shift 3
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$build/fuzz/fuzz_$t
[ -x "$bin" ] || { echo "$0: no $bin (build with -DTRAINPLAN_FUZZ=ON)" >&2; exit 2; }
corpus=$build/fuzz-corpus/$t findings=$build/fuzz-findings/$t
mkdir -p "$findings"
"$root/fuzz/corpus.sh" "$t" "$corpus"
dict=()
[ -f "$root/fuzz/dict/$t.dict" ] && dict=(-dict="$root/fuzz/dict/$t.dict")
# detect_leaks: a leak is a finding. A 30 s timeout per input: a loader
# reads a few kB in well under a millisecond, but the first sweep spec
# that names a GPU fits its operator models, 5 s under ASan. One OpenMP
# thread: inputs run one at a time, and idle threads spinning under ASan
# on a busy machine made that fit take 16 s.
OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} \
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    "$bin" "${dict[@]}" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 \
    -max_len=16384 -print_final_stats=1 -artifact_prefix="$findings/" "$@" "$corpus"
