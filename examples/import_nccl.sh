#!/bin/sh
# import_nccl.sh - your network's own nccl-tests numbers instead of the
# analytical model. examples/nccl/a3-mega_all_reduce_perf_2x8.log is a
# published all_reduce_perf run on two A3 Mega VMs (16 H100s; source in
# examples/README.md); it is imported as a measured table of the
# gcp-a3-mega system of examples/hwdb, into a new hardware directory.
#
# Run from anywhere: ./examples/import_nccl.sh
# Environment: TRAINPLAN (default ./build/trainplan), OUT_DIR (the imported
# hardware directory goes to $OUT_DIR/hwdb-measured).
set -eu
cd "$(dirname "$0")/.."
TRAINPLAN=${TRAINPLAN:-./build/trainplan}
OUT_DIR=${OUT_DIR:-${TMPDIR:-/tmp}/trainplan-examples}
mkdir -p "$OUT_DIR"
DB=$OUT_DIR/hwdb-measured

echo "== import (DIR gets the system's file with the table listed, and the table)"
"$TRAINPLAN" --hwdb examples/hwdb hw import-nccl-tests --system gcp-a3-mega \
    -o "$DB" examples/nccl/a3-mega_all_reduce_perf_2x8.log

set -- coll show --system gcp-a3-mega --op allreduce --bytes 8,1M,64M,1G --group 2x8
echo
echo "== before: the analytical model of the system file"
"$TRAINPLAN" --hwdb examples/hwdb "$@"
echo
echo "== after: the measured table (--hwdb $DB)"
"$TRAINPLAN" --hwdb "$DB" "$@"
"$TRAINPLAN" --hwdb "$DB" "$@" --format json >"$OUT_DIR/import_nccl_coll.json"

echo
echo "== how well the model fits the measurement"
"$TRAINPLAN" --hwdb "$DB" coll cv --system gcp-a3-mega

echo
echo "== one layout whose gradient all-reduce is the measured shape (DP 16 on 2 VMs)"
set -- estimate -m llm-foundry-mpt-1b --system gcp-a3-mega -g 16 -s 2048 -B 512 \
    -t 1 -p 1 -c 1 -b 8 --zero-stage 0 --no-overlap-grad-reduce
for db in examples/hwdb "$DB"; do
    echo "-- --hwdb $db"
    "$TRAINPLAN" --hwdb "$db" "$@" | grep -E '^iteration|dp_comm_exposed_s'
done
"$TRAINPLAN" --hwdb examples/hwdb "$@" --format json >"$OUT_DIR/import_nccl_before.json"
"$TRAINPLAN" --hwdb "$DB" "$@" --format json >"$OUT_DIR/import_nccl_after.json"
