#!/usr/bin/env bash
# formats_e2e.sh - issue 19's hardware and formats through the binary:
# --precision nvfp4 and mxfp8 where the GPU runs them (Blackwell), refused
# with the GPU, its architecture and what it needs elsewhere (exit 64, as
# --precision fp8 on an A100); fp8 blockwise scaling on Hopper; the fp4
# peaks, the H800 and DeepSeek-V3's cluster in hwdb with their sources.
#
# usage: formats_e2e.sh TRAINPLAN HWDB_SOURCE_DIR SCRATCH
set -u
TP=$1
HWDB=$2
S=$3
rm -rf "$S"
mkdir -p "$S"
unset TRAINPLAN_HWDB
SCRATCH=$S
. "$(dirname "$0")/e2e_lib.sh"

# json_num FIELD: first numeric value of "FIELD" in $OUT.
json_num() {
    printf '%s' "$OUT" | grep -o "\"$1\":[[:space:]]*[-0-9.e+]*" | head -n 1 | sed 's/.*:[[:space:]]*//'
}
# less A B WHAT: A < B, both numbers.
less() {
    if awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 > 0 && a < b) }'; then ok; else bad "$3 ($1 < $2)"; fi
}

# One pinned layout of Llama 3 8B on one node.
L=(estimate -m llama3-8b -g 8 -s 8192 -B 128 -t 1 -p 1 -c 1 -b 1
   --recompute-granularity none --use-distributed-optimizer --format json)

# --- nvfp4 and mxfp8 on Blackwell ------------------------------------------
run 0 "$TP" "${L[@]}" --system dgx-b200 --precision bf16
T_BF16=$(json_num iteration_time_s)
run 0 "$TP" "${L[@]}" --system dgx-b200 --precision fp8
T_FP8=$(json_num iteration_time_s)
run 0 "$TP" "${L[@]}" --system dgx-b200 --precision mxfp8
has "$OUT" '"fp8_recipe":	"mxfp8"' "--precision mxfp8: fp8 with the mxfp8 recipe"
T_MX=$(json_num iteration_time_s)
run 0 "$TP" "${L[@]}" --system dgx-b200 --precision nvfp4 --ops
has "$OUT" '"precision":	"fp4"' "--precision nvfp4: fp4 GEMMs"
has "$OUT" 'nvfp4_quantize_2' "--ops lists the NVFP4 quantisation kernels"
has "$OUT" ' fp4' "--ops lists fp4 GEMMs"
T_FP4=$(json_num iteration_time_s)
less "$T_FP8" "$T_BF16" "b200: fp8 faster than bf16"
less "$T_FP4" "$T_FP8" "b200: nvfp4 faster than fp8"
less "$T_FP4" "$T_MX" "b200: nvfp4 faster than mxfp8"
# B300's fp4 peak (13.1 PFLOP/s dense) is 1.46x B200's (9), but the NVFP4
# GEMMs measured on them reach about the same rate (hwdb fp4_gemm_speedup:
# 3.48x bf16 on B300, TransformerEngine's GEMM profiling guide, 5.1
# PFLOP/s; 3.78x on B200, pytorch/ao#2427, 5.4): the steps within 5 %.
run 0 "$TP" "${L[@]}" --system dgx-b300 --precision nvfp4
T_B300=$(json_num iteration_time_s)
if awk -v a="$T_B300" -v b="$T_FP4" 'BEGIN { r = a / b; exit !(r > 0.95 && r < 1.05) }'; then ok; else bad "nvfp4: b300 $T_B300 s against b200 $T_FP4 s"; fi
run 0 "$TP" "${L[@]}" --system gb300-nvl72 --precision nvfp4
run 0 "$TP" search -m llama3-8b --system dgx-b200 --max-gpus 16 -s 4096 -B 64 \
    --precision nvfp4 --no-timing
# The search's time bound takes the fp4 peak: pruning changes no answer.
SR=(search -m llama3-8b --system dgx-b200,gb300-nvl72 --max-gpus 32 -s 4096 -B 128
    --precision nvfp4 --no-timing --format json)
run 0 "$TP" "${SR[@]}"
PRUNED=$(printf '%s' "$OUT" | grep -E '"(layout|iteration_time_s)":')
run 0 "$TP" "${SR[@]}" --no-prune
if [ -n "$PRUNED" ] && [ "$PRUNED" = "$(printf '%s' "$OUT" | grep -E '"(layout|iteration_time_s)":')" ]; then ok; else bad "nvfp4 search: pruning changed the answer"; fi
# NVFP4 training is Transformer Engine's recipe, not torchao's.
run 1 "$TP" "${L[@]}" --system dgx-b200 --precision nvfp4 --framework torchtitan
has "$OUT" "NVFP4BlockScaling" "nvfp4 under torchtitan: not feasible, says why"

# No fp4 samples exist: an fp4 GEMM reaches at best the fraction of peak
# the fp8 GEMM of its shape reaches (fp8 time x fp8/fp4 peak, b300: 4500 /
# 13125) and at best the bf16 GEMM over the GPU's measured fp4 speedup
# (b300: 3.48), the slower, above its own roofline.
OPS=(op show --gpu b300 --op gemm --shape b=1,m=8192,n=28672,k=4096 --format json)
run 0 "$TP" "${OPS[@]}" --dtype fp8
T8=$(json_num time_fwd_s)
run 0 "$TP" "${OPS[@]}" --dtype bf16
T16=$(json_num time_fwd_s)
run 0 "$TP" "${OPS[@]}" --dtype fp4
T4=$(json_num time_fwd_s)
R4=$(json_num roofline_fwd_s)
has "$OUT" '"fp4_bound_fwd":	true' "fp4 GEMM: raised by its bound"
if awk -v a="$T4" -v b="$T16" 'BEGIN { r = a / (b / 3.48); exit !(r > 0.999 && r < 1.001) }'; then ok; else bad "fp4 GEMM $T4 s is bf16's $T16 s / 3.48"; fi
if awk -v a="$T4" -v b="$T8" 'BEGIN { exit !(a > b * 4500 / 13125) }'; then ok; else bad "fp4 GEMM $T4 s below fp8's $T8 s x 4500/13125"; fi
less "$R4" "$T4" "fp4 GEMM above its roofline"

# --- refused where the GPU lacks them: exit 64, GPU, architecture, need -----
run 64 "$TP" "${L[@]}" --system eos --precision nvfp4
has "$ERR" "nvfp4 needs Blackwell's fp4 tensor cores" "nvfp4 on an H100: what it needs"
has "$ERR" "h100-sxm is hopper" "nvfp4 on an H100: the GPU and its architecture"
run 64 "$TP" "${L[@]}" --system deepseek-v3-h800 --precision nvfp4
has "$ERR" "h800 is hopper" "nvfp4 on an H800"
run 64 "$TP" "${L[@]}" --system selene --precision nvfp4
has "$ERR" "a100-80gb is ampere" "nvfp4 on an A100"
run 64 "$TP" "${L[@]}" --system eos --precision mxfp8
has "$ERR" "mxfp8 needs Blackwell's block-scaled tensor cores" "mxfp8 on an H100"
run 64 "$TP" "${L[@]}" --system selene --precision fp8
has "$ERR" "a100-80gb is ampere" "fp8 on an A100"
run 64 "$TP" search -m llama3-8b --system eos --max-gpus 16 -s 4096 -B 64 --precision nvfp4
has "$ERR" "leave eos out" "search: nvfp4 on an H100 system"
run 64 "$TP" "${L[@]}" --system dgx-b200 --precision fp4
has "$ERR" "expected bf16, fp16, fp8, mxfp8 or nvfp4" "--precision: the valid names"

# --- fp8 blockwise scaling on Hopper ---------------------------------------
H=(estimate -m llama3-8b --system deepseek-v3-h800 -g 16 -s 8192 -B 64 -t 2 -p 1 -c 1 -b 1
   --sequence-parallel --use-distributed-optimizer -r selective --format json --precision fp8)
run 0 "$TP" "${H[@]}" --fp8-recipe tensorwise
T_TW=$(json_num iteration_time_s)
run 0 "$TP" "${H[@]}" --fp8-recipe blockwise --ops
has "$OUT" "fp8_quantize_2" "blockwise: both copies written by one quantise kernel"
has "$OUT" '"fp8_recipe":	"blockwise"' "blockwise on an H800"
less "$T_TW" "$(json_num iteration_time_s)" "H800: blockwise fp8 slower than tensorwise"

# --- hwdb: every number with its source -------------------------------------
run 0 "$TP" hw check "$HWDB"/gpus/*.json "$HWDB"/systems/*.json
run 0 "$TP" hw show b300
has "$OUT" "peak_tflops.fp4       13125" "hw show b300: fp4 peak"
has "$OUT" "105 PFLOPS" "hw show b300: fp4's source"
run 0 "$TP" hw show gb300
has "$OUT" "peak_tflops.fp4       15000" "hw show gb300: fp4 peak"
run 0 "$TP" hw show h800
has "$OUT" "scaleup_bw_gb_per_s     200" "hw show h800: NVLink 400 GB/s total"
run 0 "$TP" hw show deepseek-v3-h800
has "$OUT" "2412.19437" "hw show deepseek-v3-h800: DeepSeek-V3's report"
for k in gpus_per_node max_nodes nics_per_node nic_bw_gbit_per_s price_usd_per_gpu_hour; do
    has "$OUT" "$k" "hw show deepseek-v3-h800: $k"
done
run 0 "$TP" hw list
has "$OUT" "fp4 dense" "hw list: fp4 column"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
