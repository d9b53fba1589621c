#!/bin/sh
# hf_config.sh - a model trainplan has no preset for, as its HuggingFace
# config.json: examples/qwen3-8b.config.json is Qwen/Qwen3-8B's (source in
# examples/README.md). `model show` prints what trainplan reads from it
# (sizes, parameter counts, FLOPs per token); `search` plans it like a preset.
#
# Run from anywhere: ./examples/hf_config.sh
# Environment: TRAINPLAN (default ./build/trainplan), OUT_DIR.
set -eu
cd "$(dirname "$0")/.."
TRAINPLAN=${TRAINPLAN:-./build/trainplan}
OUT_DIR=${OUT_DIR:-${TMPDIR:-/tmp}/trainplan-examples}
mkdir -p "$OUT_DIR"
CFG=examples/qwen3-8b.config.json

echo "== what trainplan reads from the config (--strict refuses what it cannot model)"
"$TRAINPLAN" model show --strict "$CFG" --seq-length 4096
"$TRAINPLAN" model show "$CFG" --format json >"$OUT_DIR/hf_config_model.json"

echo
echo "== the best layouts for it on 64 and 128 H100s"
set -- -m "$CFG" --system eos --gpus 64,128 -s 4096 -B 512 --tokens 1e12 \
    --top 3 --no-timing
"$TRAINPLAN" search "$@" --format json -o "$OUT_DIR/hf_config_search.json"
"$TRAINPLAN" search "$@" | sed -n '1,/^launch /p'
