#!/bin/sh
# custom_system.sh - a cluster that is not in the built-in hardware
# database: Google Cloud's A3 Mega (8 x H100 per VM, 8 x 200 Gb/s
# GPUDirect-TCPXO NICs), described in examples/hwdb/systems/gcp-a3-mega.json
# with a source for every number, and compared with NVIDIA's Eos (the same
# H100s, 8 x 400 Gb/s InfiniBand per node) for Llama 3 70B.
#
# Run from anywhere: ./examples/custom_system.sh
# Environment: TRAINPLAN (default ./build/trainplan), OUT_DIR.
set -eu
cd "$(dirname "$0")/.."
TRAINPLAN=${TRAINPLAN:-./build/trainplan}
OUT_DIR=${OUT_DIR:-${TMPDIR:-/tmp}/trainplan-examples}
mkdir -p "$OUT_DIR"

echo "== the file checks out, and every number says where it comes from"
"$TRAINPLAN" hw check examples/hwdb/systems/gcp-a3-mega.json
"$TRAINPLAN" --hwdb examples/hwdb hw show gcp-a3-mega | sed -n '1,4p'

echo
echo "== Llama 3 70B on up to 512 GPUs of each (the A3 file allows 64 VMs)"
set -- -m llama3-70b --system gcp-a3-mega,eos --gpus 128-512:128 \
    -s 8192 -B 512 --tokens 1e12 --top 3 --no-timing
"$TRAINPLAN" --hwdb examples/hwdb search "$@" --format json \
    -o "$OUT_DIR/custom_system.json"
"$TRAINPLAN" --hwdb examples/hwdb search "$@" | sed -n '1,/^launch /p'
echo
echo "JSON answer: $OUT_DIR/custom_system.json"
