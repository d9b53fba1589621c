#!/usr/bin/env bash
# e2e.sh - end-to-end tests of the trainplan binary: exit codes, messages,
# output formats, -o atomicity, the hardware database search path and the
# published parameter counts.
#
# usage: e2e.sh TRAINPLAN FIXTURES SCRATCH MANPAGE
set -u
TP=$1
FIX=$2
SCRATCH=$3
MAN=$4
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
unset TRAINPLAN_HWDB
. "$(dirname "$0")/e2e_lib.sh"

# json_num FIELD: first numeric value of "FIELD" in $OUT.
json_num() {
    printf '%s' "$OUT" | grep -o "\"$1\":[[:space:]]*[-0-9.e+]*" | head -n 1 | sed 's/.*:[[:space:]]*//'
}

# unwrapped: $OUT with the text's wrapped prose joined again (a line break
# and the two blanks of a continuation become one blank)
unwrapped() { printf '%s' "$OUT" | sed -e ':a' -e 'N' -e '$!ba' -e 's/\n  / /g'; }

# json_str FIELD: first string value of "FIELD" in $OUT, with its quotes.
json_str() {
    printf '%s' "$OUT" | grep -o "\"$1\":[[:space:]]*\"[^\"]*\"" | head -n 1 | sed 's/^[^:]*:[[:space:]]*//'
}

# within VALUE WANT REL DESCRIPTION
within() {
    if awk -v v="$1" -v w="$2" -v r="$3" 'BEGIN { d = v - w; if (d < 0) d = -d; exit !(v != "" && d <= r * w) }'; then
        ok
    else
        bad "$4: $1 not within $3 of $2"
    fi
}

# --- basics -----------------------------------------------------------------
run 0 "$TP" --version && has "$OUT" "trainplan " "--version"
run 0 "$TP" --help && has "$OUT" "model show" "--help lists commands"
has "$OUT" "--tensor-model-parallel-size" "--help lists options"
run 64 "$TP"
run 64 "$TP" model && has "$ERR" "list show" "group without verb"
run 64 "$TP" model shwo gpt3-175b && has "$ERR" "did you mean 'model show'" "command suggestion"
run 64 "$TP" --bogus model list && has "$ERR" "unknown option '--bogus'" "unknown option"
run 64 "$TP" --threads abc model list && has "$ERR" "--threads: expected an integer in [1, 1024], found 'abc'" "bad --threads"
run 64 "$TP" --threads 0 model list
run 64 "$TP" --format xml model list && has "$ERR" "table, json, csv or jsonl" "bad --format"
run 64 "$TP" hw list --seq-length 4096 && has "$ERR" "does not apply" "option scoped to a command"
run 64 "$TP" model show && has "$ERR" "usage: trainplan model show" "missing argument"
run 64 "$TP" model show a b

# Every option in the table is documented in the man page.
for opt in $("$TP" --list-options); do
    if grep -qF -- "${opt//-/\\-}" "$MAN" || grep -qF -- "$opt" "$MAN"; then ok; else bad "man page lacks $opt"; fi
done

# --- models -------------------------------------------------------------------
run 0 "$TP" model list
for m in gpt-neox-20b llama3-70b llama3.1-405b gpt3-175b mixtral-8x7b llemma-7b llama-13b mistral-7b; do
    has "$OUT" "$m" "model list"
done
run 0 "$TP" model list --format json && has "$OUT" '"params_total"' "model list json"
run 0 "$TP" model list --format csv && has "$OUT" "name,params,layers" "model list csv"

# Published parameter counts, within 0.5 %.
check_params() { # NAME_OR_FILE PUBLISHED
    if run 0 "$TP" model show "$1" --format json; then
        within "$(json_num params_total)" "$2" 0.005 "params of $1"
        for k in params_per_layer params_embedding flops_per_token_fwd; do has "$OUT" "\"$k\"" "model show json"; done
    fi
}
check_params llama3-8b 8.03e9
check_params llama3-70b 70.6e9
check_params llama3.1-405b 405.9e9
check_params gpt3-175b 174.6e9
check_params gpt-neox-20b 20.55e9
check_params mixtral-8x7b 46.7e9
check_params "$FIX/hf/llama3-8b.json" 8.03e9
check_params "$FIX/hf/llama3-70b.json" 70.6e9
check_params "$FIX/hf/llama3.1-405b.json" 405.9e9
check_params "$FIX/hf/gpt-neox-20b.json" 20.55e9
check_params "$FIX/hf/mixtral-8x7b.json" 46.7e9
# MoE and current architectures (issue 19; sources in tests/test_space.c)
check_params deepseek-v3 671e9
check_params qwen3-235b-a22b 235e9
check_params "$FIX/hf/deepseek-v3.json" 671e9
check_params "$FIX/hf/gpt-oss-120b.json" 116.83e9
check_params "$FIX/hf/qwen3-30b-a3b.json" 30.5e9
check_params "$FIX/hf/gemma-2-9b-it.json" 9.24e9
run 0 "$TP" model show deepseek-v3 --format json
within "$(json_num params_checkpoint)" 685e9 0.001 "deepseek-v3: the checkpoint's 685B"
within "$(json_num params_mtp)" 11.61e9 0.001 "deepseek-v3: MTP module"
within "$(json_num kv_lora_rank)" 512 0 "model show json: MLA"
if [ "$(json_str moe_router_score)" = '"sigmoid"' ]; then ok; else bad "model show json: router score"; fi
run 0 "$TP" model show deepseek-v3
has "$OUT" "q rank 1536, kv rank 512" "model show: MLA"
has "$OUT" "params_checkpoint" "model show: checkpoint count"
run 0 "$TP" model show gpt-oss-20b
has "$OUT" "sliding 128, 1 layer in 2 global" "model show: window"
# active parameters as the model cards count them (issue 31): DeepSeek and
# OpenAI without the input embedding, Mistral and Qwen with it; the
# estimator's count (params_active) unchanged
for row in "deepseek-v2-lite 2.4e9 0.022 2.661e9" "$FIX/hf/deepseek-v2-lite.json 2.4e9 0.022 2.661e9" \
           "deepseek-v3 37e9 0.011 37.55e9" "gpt-oss-120b 5.13e9 0.001 5.712e9" \
           "mixtral-8x7b 12.9e9 0.0039 12.88e9" "qwen3-30b-a3b 3.3e9 0.0161 3.353e9"; do
    set -- $row
    run 0 "$TP" model show "$1" --format json
    within "$(json_num params_active_card)" "$2" "$3" "$1: active as its card counts"
    within "$(json_num params_active)" "$4" 0.001 "$1: params_active unchanged"
done
run 0 "$TP" model show deepseek-v2-lite
has "$OUT" "params_active_card              2451435008 (2.45 B)" "model show: the card's active count"
has "$OUT" "params_active_card: as the model card counts (DeepSeek, OpenAI)" "model show: its convention"
run 0 "$TP" model show mixtral-8x7b --format json
has "$OUT" "as the model card counts (Mistral, Qwen, Meta)" "model show json: the convention"

run 0 "$TP" model show gpt3-175b && has "$OUT" "params_total" "model show table"
has "$OUT" "FLOPs:" "model show states the FLOP convention"
# Megatron's padding: 50257 -> 50304 at TP 1, 51200 at TP 8.
run 0 "$TP" model show gpt3-175b --format json && within "$(json_num vocab_padded)" 50304 0 "vocab padded tp1"
run 0 "$TP" model show gpt3-175b -t 8 --format json && within "$(json_num vocab_padded)" 51200 0 "vocab padded tp8"
# FLOPs grow with the sequence (attention).
run 0 "$TP" model show gpt3-175b --seq-length 2048 --format json && f1=$(json_num flops_per_token_fwd)
run 0 "$TP" model show gpt3-175b --seq-length 8192 --format json && f2=$(json_num flops_per_token_fwd)
if awk -v a="$f1" -v b="$f2" 'BEGIN { exit !(b > a) }'; then ok; else bad "flops do not grow with seq"; fi

run 65 "$TP" model show llama3-7b && has "$ERR" "did you mean" "model suggestion" && has "$ERR" "'llama3-8b'" "model suggestion"
run 66 "$TP" model show "$FIX/hf/does-not-exist.json"
run 66 "$TP" model show "$FIX/hf/"
# A 50 MB config.json is refused before it is parsed.
{ printf '{"hidden_size": 4096, "pad": "'; head -c 52428800 /dev/zero | tr '\0' x; printf '"}'; } >"$SCRATCH/big.json"
run 65 "$TP" model show "$SCRATCH/big.json" && has "$ERR" "larger than" "50 MB config refused"
rm -f "$SCRATCH/big.json"
for f in "$FIX"/hf/bad-*.json; do
    run 65 "$TP" model show "$f" && has "$ERR" "$(basename "$f")" "bad config names its file"
done

# --- hardware -----------------------------------------------------------------
run 0 "$TP" hw list
for s in perlmutter perlmutter-80g vista selene eos dgx-h200 dgx-b200 jean-zay-a100 gb200-nvl72 dgx-b300 gb300-nvl72; do
    has "$OUT" "$s" "hw list systems"
done
for g in a100-40gb a100-80gb h100-sxm h100-pcie h200 gh200 b200 b300 gb300 mi250x mi300x mi355x; do
    has "$OUT" "$g" "hw list gpus"
done
run 0 "$TP" hw list --format json && has "$OUT" '"gpus"' "hw list json" && has "$OUT" '"systems"' "hw list json"
run 0 "$TP" hw show perlmutter && has "$OUT" "a100-40gb" "hw show system shows its gpu"
has "$OUT" "source" "hw show has sources"
run 0 "$TP" hw show h100 --format json && has "$(json_str name)" '"h100-sxm"' "hw show by alias"
run 65 "$TP" hw show perlmuter && has "$ERR" "did you mean 'perlmutter'" "system suggestion"

run 0 "$TP" hw check "$FIX/hw/good/gpus/testgpu.json" && has "$OUT" ": ok" "hw check good"
# Sample hygiene: Vista's flash-attention backward times and some of its embedding
# forward times (output written faster than HBM) cannot be right.
run 0 "$TP" hw check "$FIX/../../hwdb/data/gpus/gh200.json" && has "$OUT" "warning:" "hw check reports implausible samples"
has "$OUT" "embedding fp16: 21 of 1755 sample(s); the first: forward moves" "hw check names the sample file, count and pass"
has "$OUT" "flash_atten fp16: 3936 of 4068" "hw check counts per sample file"
run 65 "$TP" hw check "$FIX/hw/bad/many.json" && has "$OUT" '$.sm_count.value' "hw check lists problems"
has "$OUT" '$.vendor' "hw check lists every problem"
run 66 "$TP" hw check "$FIX/hw/bad/nope.json"
run 66 "$TP" hw check "$FIX/hw"
run 65 "$TP" hw check "$FIX/hw/bad/empty.json"
for f in "$FIX"/hwdb_dirs_do_not_exist; do run 66 "$TP" --hwdb "$f" hw list; done

# User directories override built-ins: --hwdb and $TRAINPLAN_HWDB.
mkdir -p "$SCRATCH/user/systems"
cp "$FIX/hw/good/systems/testsys.json" "$SCRATCH/user/systems/"
sed -i 's/"gpu": "tg"/"gpu": "h100-sxm"/' "$SCRATCH/user/systems/testsys.json"
run 0 "$TP" --hwdb "$SCRATCH/user" hw show testsys && has "$OUT" "testsys" "--hwdb adds a system"
TRAINPLAN_HWDB="$SCRATCH/user" run 0 "$TP" hw show ts && has "$OUT" "testsys" "TRAINPLAN_HWDB adds a system"
TRAINPLAN_HWDB="$SCRATCH/none" run 66 "$TP" hw list

# A partial override is merged over the built-in entry (docs/hwdb.md Overrides).
mkdir -p "$SCRATCH/part/systems" "$SCRATCH/copy/systems"
printf '%s\n' '{"schema": "trainplan-system/1", "name": "eos",' \
    ' "sources": {"quote": "a test quote"},' \
    ' "price_usd_per_gpu_hour": {"value": 3.5, "source": "quote"}}' \
    >"$SCRATCH/part/systems/eos.json"
run 0 "$TP" --hwdb "$SCRATCH/part" hw show eos
has "$OUT" "price_usd_per_gpu_hour          3.5  USD     a test quote" "partial override: the price"
has "$OUT" "merged over" "partial override: hw show says merged over"
has "$OUT" "13 measured data file(s)" "partial override keeps the built-in's tables"
run 0 "$TP" --hwdb "$SCRATCH/part" hw show eos --format json
has "$OUT" '"merged_over"' "partial override: JSON merged_over"
run 0 "$TP" --hwdb "$SCRATCH/part" hw check "$SCRATCH/part/systems/eos.json"
run 0 "$TP" --hwdb "$SCRATCH/part" estimate -m llama3-8b --system eos -g 8 -s 2048 -B 64
# A copied whole file, its measured paths relative to the built-in folder.
sed 's/"value": 4.916/"value": 3.9/' "$FIX/../../hwdb/data/systems/eos.json" >"$SCRATCH/copy/systems/eos.json"
run 0 "$TP" --hwdb "$SCRATCH/copy" hw show eos
has "$OUT" "price_usd_per_gpu_hour          3.9" "copied system file: its price"
has "$OUT" "13 measured data file(s)" "copied system file: relative tables found"
# A typo or an alias in an override's name says what went wrong.
sed -i 's/"name": "eos"/"name": "eos-typo"/' "$SCRATCH/part/systems/eos.json"
run 65 "$TP" --hwdb "$SCRATCH/part" hw list
has "$ERR" "not an override: unknown system 'eos-typo'; did you mean 'eos'?" "override typo"
sed -i 's/"name": "eos-typo"/"name": "dgx-h100"/' "$SCRATCH/part/systems/eos.json"
run 65 "$TP" --hwdb "$SCRATCH/part" hw list
has "$ERR" '"dgx-h100" is an alias of eos' "override names an alias"
run 0 "$TP" hw list && has "$OUT" "dgx-h100, dgx-h100-superpod" "hw list shows aliases"

# --- operator models ------------------------------------------------------------
H100="$FIX/../../hwdb/data/measured/h100-sxm/NVIDIAH10080GBHBM3_linear1_fp16.csv"
run 0 "$TP" op predict --gpu h100 --op linear1 --train "$H100" --shapes "$H100"
has "$OUT" "mp,b,l,dim,F_dur(us),B_dur(us)" "op predict header"
if [ "$(printf '%s\n' "$OUT" | wc -l)" -eq "$(wc -l <"$H100")" ]; then ok; else bad "op predict: one row per shape"; fi
run 64 "$TP" op predict --gpu h100 --op linear1 --shapes "$H100" && has "$ERR" "needs --train" "op predict without --train"
run 65 "$TP" op predict --gpu h100 --op linear9 --train "$H100" --shapes "$H100" && has "$ERR" "'linear1'" "op name suggestion"
run 65 "$TP" op predict --gpu h101 --op linear1 --train "$H100" --shapes "$H100" && has "$ERR" "unknown GPU" "unknown GPU"
run 66 "$TP" op predict --gpu h100 --op linear1 --train "$SCRATCH/none.csv" --shapes "$H100"
run 0 "$TP" op show --gpu h100 --op linear3 --shape mp=1,b=4,l=2048,dim=4096 && has "$OUT" "fitted time" "op show"
run 64 "$TP" op show --gpu h100 --op linear3 --shape mp=1,q=4
run 0 "$TP" op cv --gpu h100-sxm --format json && has "$OUT" '"cv_fwd_mape_pct"' "op cv json"
"$TP" --threads 1 op cv --gpu a100-80gb --format csv >"$SCRATCH/cv1" 2>/dev/null
"$TP" --threads 2 op cv --gpu a100-80gb --format csv >"$SCRATCH/cv2" 2>/dev/null
if cmp -s "$SCRATCH/cv1" "$SCRATCH/cv2" && [ -s "$SCRATCH/cv1" ]; then ok; else bad "op cv differs by thread count"; fi

# --- collectives ------------------------------------------------------------------
NCCL="$FIX/nccl"
run 0 "$TP" coll show --system eos --op allreduce --bytes 1GiB --group 1x8 --format json
has "$(json_str source)" '"measured"' "coll show: eos 1x8 uses the built-in XLA table"
run 0 "$TP" coll show --system eos --op all_reduce --bytes 1G --nodes 4 --gpus-per-node 8 --format json
has "$(json_str source)" '"analytical"' "coll show: no table for 4x8"
has "$OUT" '"algorithm"' "coll show json names the algorithm"
run 0 "$TP" coll show --system eos --op allreduce --bytes 8,1M,1G,16G --group 2x8
has "$OUT" "no measured table" "coll show says when it has no table"
has "$OUT" "analytical (" "coll show names the source"
run 0 "$TP" coll show --system perlmutter --op allreduce --bytes 64M --group 2x4
has "$OUT" "no plausible rows" "coll show: Perlmutter's TCP samples left out"
run 0 "$TP" coll show --system perlmutter --op allreduce --bytes 64M --group 2x4 --keep-bad --format json
has "$(json_str source)" '"measured"' "coll show --keep-bad keeps them"
run 0 "$TP" coll show --system vista --op sendrecv --bytes 1 --group 1x1 --format csv
has "$OUT" "one rank" "coll show: one rank moves nothing"
run 64 "$TP" coll show --system eos --op allreduce --bytes 1G && has "$ERR" "needs the group" "coll show without a group"
run 64 "$TP" coll show --system eos --op allreduce --bytes 1G --group 2y4 && has "$ERR" "--group: expected" "bad --group"
run 64 "$TP" coll show --system eos --op allreduce --bytes 1Q --group 2x4 && has "$ERR" "--bytes: expected" "bad --bytes"
run 64 "$TP" coll show --system eos --op allreduce --bytes 1G --group 2x4 --nodes 2 --gpus-per-node 4
run 64 "$TP" coll show --op allreduce --bytes 1G --group 2x4 && has "$ERR" "needs --system" "coll show without --system"
run 65 "$TP" coll show --system eos --op alreduce --bytes 1G --group 2x4 && has "$ERR" "did you mean 'allreduce'" "collective suggestion"
run 65 "$TP" coll show --system eos --op allreduce --bytes 1G --group 1x16 && has "$ERR" "16 GPUs per node" "group too wide"
run 65 "$TP" coll show --system eoss --op allreduce --bytes 1G --group 1x8 && has "$ERR" "did you mean 'eos'" "system suggestion"
run 64 "$TP" coll cv && has "$ERR" "needs --system" "coll cv without --system"
run 0 "$TP" coll cv --system eos --format json && has "$OUT" '"mape_pct"' "coll cv json"
has "$OUT" '"linerate_fraction"' "coll cv reports the share of line rate"
run 0 "$TP" coll cv --system perlmutter && has "$OUT" "implausible" "coll cv table"
has "$OUT" "error per source" "coll cv per source"
run 0 "$TP" coll cv --system selene && has "$OUT" "no measured collective tables" "coll cv without tables"
"$TP" --threads 1 coll cv --system gb200-nvl72 --format csv >"$SCRATCH/ccv1" 2>/dev/null
"$TP" --threads 3 coll cv --system gb200-nvl72 --format csv >"$SCRATCH/ccv2" 2>/dev/null
if cmp -s "$SCRATCH/ccv1" "$SCRATCH/ccv2" && [ -s "$SCRATCH/ccv1" ]; then ok; else bad "coll cv differs by thread count"; fi
# Hygiene in hw check: Perlmutter's inter-node NCCL samples (TCP fallback).
run 0 "$TP" hw check "$FIX/../../hwdb/data/systems/perlmutter.json" && has "$OUT" "network plugin" "hw check flags slow network rows"
has "$OUT" "collective row(s) cannot be right" "hw check counts implausible collective rows"
run 0 "$TP" hw check "$FIX/../../hwdb/data/systems/vista.json" && has "$OUT" "faster than the network link" "hw check flags rows faster than the link"

# nccl-tests import: good logs -> tables and a system file in DIR; --hwdb DIR
# then gives the measured network.
IMP="$SCRATCH/imp"
run 0 "$TP" hw import-nccl-tests --system eos -o "$IMP" "$NCCL"/all_reduce_perf_1x8.log "$NCCL"/all_reduce_perf_2x8.log \
    "$NCCL"/all_gather_perf_2x8.log "$NCCL"/reduce_scatter_perf_1x8.log "$NCCL"/alltoall_perf_2x8.log \
    "$NCCL"/sendrecv_perf_1x8.log "$NCCL"/srun_sendrecv_2x8.log
has "$OUT" "nccl-tests_allreduce_2x8.csv" "import lists its tables"
for f in allreduce_1x8 allreduce_2x8 allgather_2x8 reducescatter_1x8 alltoall_2x8 sendrecv_1x8 sendrecv_2x8; do
    if [ -s "$IMP/measured/eos/nccl-tests_$f.csv" ]; then ok; else bad "import did not write $f"; fi
done
if [ -s "$IMP/systems/eos.json" ] && [ -z "$(find "$IMP" -name '*.tmp.*')" ]; then ok; else bad "import: system file or temporaries"; fi
# Issue 30: the system file's paths stay relative (docs/hwdb.md): the
# built-in tables it lists are copied into DIR, which then works moved.
if grep -q '"file":[[:space:]]*"/' "$IMP/systems/eos.json"; then bad "import wrote an absolute path"; else ok; fi
if [ -s "$IMP/measured/eos/xla_allgather_1x8.csv" ]; then ok; else bad "import did not copy the built-in tables"; fi
cp -r "$IMP" "$SCRATCH/imp_moved"
run 0 "$TP" hw check "$SCRATCH/imp_moved/systems/eos.json" && has "$OUT" ": ok" "an imported DIR works moved"
run 0 "$TP" --hwdb "$SCRATCH/imp_moved" coll show --system eos --op allgather --bytes 1G --group 1x8 --format json
has "$OUT" "$SCRATCH/imp_moved/systems/../measured/eos/xla_allgather_1x8.csv" "moved DIR: its own copy of a built-in table"
run 0 "$TP" hw check "$IMP/systems/eos.json" && has "$OUT" ": ok" "imported system file is valid"
run 0 "$TP" --hwdb "$IMP" coll show --system eos --op allreduce --bytes 1G --group 2x8 --format json
has "$(json_str source)" '"measured"' "--hwdb DIR: the imported table is used"
has "$OUT" "$IMP" "--hwdb DIR: the table is the imported file"
t_meas=$(json_num time_s)
run 0 "$TP" coll show --system eos --op allreduce --bytes 1G --group 2x8 --format json
t_ana=$(json_num time_s)
if awk -v a="$t_meas" -v b="$t_ana" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0 && b > 0 && d > 0.01 * b) }'; then ok; else bad "the measured table does not change the time ($t_meas vs $t_ana)"; fi
# The imported 1x8 all-reduce replaces the built-in XLA table of that shape.
run 0 "$TP" --hwdb "$IMP" coll show --system eos --op allreduce --bytes 1G --group 1x8 --format json
has "$OUT" "nccl-tests_allreduce_1x8.csv" "the user's table replaces the built-in one"
# Importing again replaces, never duplicates.
run 0 "$TP" hw import-nccl-tests --system eos -o "$IMP" "$NCCL"/all_reduce_perf_2x8.log
if [ "$(grep -c 'nccl-tests_allreduce_2x8.csv' "$IMP/systems/eos.json")" -eq 1 ]; then ok; else bad "re-import duplicated an entry"; fi
run 0 "$TP" hw import-nccl-tests --system eos --format json -o "$IMP" "$NCCL"/alltoall_perf_2x8.log && within "$(json_num rows_unverified)" 24 0 "import json counts unverified rows"
# Bad logs: exit 65, file:line, and nothing written.
cp "$IMP/systems/eos.json" "$SCRATCH/eos.before"
for f in "$NCCL"/bad_*.log; do
    run 65 "$TP" hw import-nccl-tests -o "$SCRATCH/imp_bad" "$NCCL/all_reduce_perf_2x8.log" "$f" && has "$ERR" "$(basename "$f")" "bad log names its file"
    if [ ! -e "$SCRATCH/imp_bad" ]; then ok; else bad "a failed import wrote $SCRATCH/imp_bad"; fi
    run 65 "$TP" hw import-nccl-tests -o "$IMP" "$f"
    if cmp -s "$IMP/systems/eos.json" "$SCRATCH/eos.before" && [ -z "$(find "$IMP" -name '*.tmp.*')" ]; then ok; else bad "a failed import changed $IMP"; fi
done
run 65 "$TP" hw import-nccl-tests -o "$SCRATCH/imp_bad" "$NCCL/bad_truncated_row.log" && has "$ERR" "bad_truncated_row.log:23:" "file:line of a truncated row"
run 65 "$TP" hw import-nccl-tests -o "$SCRATCH/imp_bad" "$NCCL/bad_wrong_results.log" && has "$ERR" "#wrong" "nonzero #wrong refused"
run 65 "$TP" hw import-nccl-tests --system perlmutter -o "$SCRATCH/imp_bad" "$NCCL/all_reduce_perf_1x8.log" && has "$ERR" "8 GPUs per node, but perlmutter has 4" "import checks the group fits"
run 65 "$TP" hw import-nccl-tests --op allgather -o "$SCRATCH/imp_bad" "$NCCL/all_reduce_perf_1x8.log" && has "$ERR" "--op says allgather" "--op must agree with the log"
run 64 "$TP" hw import-nccl-tests "$NCCL/all_reduce_perf_1x8.log" && has "$ERR" "needs -o DIR" "import without -o"
run 64 "$TP" hw import-nccl-tests -o "$SCRATCH/imp_bad" && has "$ERR" "usage" "import without logs"
run 64 "$TP" hw import-nccl-tests --nodes 2 -o "$SCRATCH/imp_bad" "$NCCL/all_reduce_perf_1x8.log" && has "$ERR" "go together" "--nodes alone"
run 66 "$TP" hw import-nccl-tests -o "$SCRATCH/imp_bad" "$NCCL/none.log"
if [ ! -e "$SCRATCH/imp_bad" ]; then ok; else bad "failed imports wrote $SCRATCH/imp_bad"; fi
# Without --system: the one system with the log's GPU, else a list to choose from.
run 64 "$TP" hw import-nccl-tests -o "$SCRATCH/imp_bad" "$NCCL/all_reduce_perf_1x8.log" && has "$ERR" "give --system" "several systems have the GPU"
has "$ERR" "eos" "the choice lists the systems"
sed 's/NVIDIA H100 80GB HBM3/NVIDIA GH200 120GB/' "$NCCL/all_reduce_perf_1x8.log" >"$SCRATCH/gh200.log"
run 0 "$TP" hw import-nccl-tests --nodes 8 --gpus-per-node 1 -o "$SCRATCH/imp3" "$SCRATCH/gh200.log"
if [ -s "$SCRATCH/imp3/systems/vista.json" ]; then ok; else bad "import picks the one system with the log's GPU"; fi
run 0 "$TP" hw import-nccl-tests --nodes 2 --gpus-per-node 4 --system eos -o "$SCRATCH/imp2" "$NCCL/all_reduce_perf_1x8.log"
if [ -s "$SCRATCH/imp2/measured/eos/nccl-tests_allreduce_2x4.csv" ]; then ok; else bad "--nodes/--gpus-per-node override the log"; fi

# --- output ---------------------------------------------------------------------
run 0 "$TP" model show gpt3-175b --format json -o "$SCRATCH/m.json"
if [ -s "$SCRATCH/m.json" ] && grep -q params_total "$SCRATCH/m.json" && [ -z "$OUT" ]; then ok; else bad "-o writes the file, nothing on stdout"; fi
run 65 "$TP" model show nosuch -o "$SCRATCH/fail.json"
if [ ! -e "$SCRATCH/fail.json" ] && [ -z "$(ls "$SCRATCH" | grep tmp)" ]; then ok; else bad "failed run left an output or temporary file"; fi
run 74 "$TP" model list -o "$SCRATCH/no/such/dir/x.txt"
# A failure keeps the old file intact.
echo keep >"$SCRATCH/keep.json"
run 65 "$TP" model show nosuch -o "$SCRATCH/keep.json"
if [ "$(cat "$SCRATCH/keep.json")" = keep ]; then ok; else bad "failed run clobbered an existing file"; fi

# Same output at any thread count.
"$TP" --threads 1 hw list --format json >"$SCRATCH/t1" 2>/dev/null
"$TP" --threads 2 hw list --format json >"$SCRATCH/t2" 2>/dev/null
"$TP" --threads 4 hw list --format json >"$SCRATCH/t4" 2>/dev/null
if cmp -s "$SCRATCH/t1" "$SCRATCH/t2" && cmp -s "$SCRATCH/t1" "$SCRATCH/t4"; then ok; else bad "output differs by thread count"; fi

# --- models of the published runs (bench/data) -------------------------------------
run 0 "$TP" model show bloom-176b -t 4 --format json
within "$(json_num params_total_padded)" 176247271424 0 "BLOOM-176B, vocabulary padded for TP 4 (HF count)"
run 0 "$TP" model show "$FIX/hf/bloom-560m.json" --format json
within "$(json_num params_total)" 559214592 0 "bloom-560m config.json (embedding LayerNorm)"
run 0 "$TP" model show llm-foundry-mpt-70b --format json
within "$(json_num params_total)" 64862437376 0 "llm-foundry MPT-70b NumParams"
# Every preset the validation runs name resolves.
RUNS="$FIX/../../bench/data/validation_runs.json"
for m in $(grep -o '"model": "[^"]*"' "$RUNS" | sed 's/.*: "//; s/"$//' | sort -u); do
    run 0 "$TP" model show "$m" --format json
done

# --- estimate -----------------------------------------------------------------------
EST=(estimate -m gpt-neox-20b --system perlmutter-80g -g 128 -s 2048 -B 1024)
run 0 "$TP" "${EST[@]}" -t 8 -p 4 -b 4 -r full --no-sequence-parallel --no-use-distributed-optimizer \
    -c 1 --num-virtual-stages-per-pipeline-rank 1 --format json
for k in feasible reason iteration_time_s tokens_per_s model_tflops_per_gpu mfu peak_memory_bytes \
         breakdown memory layout compute_fwd_s pp_bubble_s dp_comm_exposed_s weights_bytes \
         activations_bytes tensor_model_parallel_size micro_batch_size chosen mfu_convention; do
    has "$OUT" "\"$k\"" "estimate json has $k"
done
has "$(json_str reason)" '"feasible"' "seed GPT-20B PP4-TP8-DP4 fits on perlmutter-80g (TP across nodes when asked)"
run 0 "$TP" "${EST[@]}" -t 4 --tokens 300e9
has "$OUT" "chosen (fastest feasible" "unset fields are searched and said"
has "$OUT" "GPU-hours" "time and cost to train with --tokens"
has "$OUT" "pp_bubble_s" "table shows the breakdown"
run 0 "$TP" "${EST[@]}" -t 4 --format json
has "$OUT" '"pipeline_model_parallel_size"' "chosen layout in json"
# --framework sets the software switches' defaults; a switch given wins
run 0 "$TP" "${EST[@]}" -t 4 -p 4 --framework torchtitan --format json
has "$OUT" '"tp_comm_overlap":	"dtensor"' "torchtitan: DTensor TP"
has "$OUT" '"cp_comm_type":	"all_gather"' "torchtitan: all-gathered CP"
run 0 "$TP" "${EST[@]}" -t 4 -p 4 --tp-overlap async-tp --framework torchtitan --format json
has "$OUT" '"tp_comm_overlap":	"async-tp"' "a switch overrides the framework, in any order"
run 0 "$TP" "${EST[@]}" -t 4 -p 4 --framework megatron-lm-2021 --format json
has "$OUT" '"attention_backend":	"unfused"' "Megatron-LM 2021: unfused attention"
has "$OUT" '"scatter_gather_tensors_in_pipeline":	true' "Megatron-LM 2021: pipeline scatter/gather"
has "$OUT" '"software_stack":	"megatron-lm-2021"' "Megatron-LM 2021: its stack"
run 0 "$TP" "${EST[@]}" -t 4 -p 4 --framework pytorch-fsdp --format json
has "$OUT" '"eager":	true' "PyTorch FSDP (llm-foundry): eager"
has "$OUT" '"software_stack":	"pytorch-eager"' "PyTorch FSDP: the eager stack"
has "$OUT" '"zero_stage":	3' "PyTorch FSDP: ZeRO-3"
run 0 "$TP" "${EST[@]}" -t 4 -p 4 --framework torchtitan --eager --format json
has "$OUT" '"software_stack":	"pytorch-eager"' "torchtitan --eager: the eager stack"
run 0 "$TP" "${EST[@]}" -t 4 -p 4 -b 1 --framework deepspeed-2021 --format json
has "$OUT" '"software_stack":	"deepspeed-2021"' "DeepSpeed 2021: its stack"
has "$OUT" '"zero_stage":	3' "DeepSpeed 2021: ZeRO-3"
run 0 "$TP" "${EST[@]}" -t 4 -p 4 --format json
has "$OUT" '"software_stack":	"megatron-core"' "the default framework's stack"
run 0 "$TP" "${EST[@]}" -t 4 -p 4
has "$OUT" "(stack megatron-core x this GPU's factor" "the table names the stack of its kernel efficiency"
run 64 "$TP" "${EST[@]}" --framework nemo
has "$ERR" "megatron-core, megatron-lm-2021, torchtitan, pytorch-fsdp or deepspeed-2021" "unknown framework: the valid names"
run 1 "$TP" "${EST[@]}" -t 4 -p 1 -c 1 -r none --zero-stage 0 -b 16
has "$OUT" "NOT FEASIBLE (out_of_memory)" "does not fit: says so, exit 1"
has "$ERR" "trainplan: not feasible (out_of_memory): needs" "exit 1 says why on stderr too (issue 30)"
has "$OUT" "GiB more than" "and by how much"
run 1 "$TP" estimate -m gpt-neox-20b --system perlmutter-80g -g 96 -s 2048 -B 1024 -t 3 -p 4 -c 1 -b 1
has "$OUT" "attention heads are not divisible by TP 3" "invalid layout: the rule"
run 1 "$TP" "${EST[@]}" -t 3 -p 4 -b 1 --format json
has "$(json_str reason)" '"invalid_layout"' "no TP x PP divides the GPUs: json says so (no crash)"
run 64 "$TP" estimate -m gpt-neox-20b --system perlmutter-80g -g 128 -s 2048
has "$ERR" "--global-batch-size" "estimate needs the global batch"
# Megatron-Core's attention: Transformer Engine's choice (cuDNN on Hopper)
L8=(estimate -m llama3-8b --system eos -g 8 -s 8192 -B 64 -t 2 -p 1 -c 1 -b 1 --sequence-parallel
    --use-distributed-optimizer -r selective)
run 0 "$TP" "${L8[@]}" --format json --ops
has "$OUT" '"attention_backend":	"auto"' "megatron-core: attention backend auto"
has "$OUT" '"what":	"attn_cudnn"' "auto on an H100: cuDNN fused attention, in --ops"
T_AUTO=$(json_num iteration_time_s)
run 0 "$TP" "${L8[@]}" --format json --attention-backend flash
T_FA2=$(json_num iteration_time_s)
if awk -v a="$T_AUTO" -v b="$T_FA2" 'BEGIN { exit !(a < b) }'; then ok; else bad "cuDNN attention ($T_AUTO s) faster than FlashAttention-2 ($T_FA2 s)"; fi
run 0 "$TP" "${L8[@]}" --precision fp8 --ops
has "$OUT" "delayed scaling, Transformer Engine" "fp8: the recipe and library said"
has "$OUT" "fp8_quantize_2" "--ops lists the fp8 casts"
has "$OUT" "iteration  " "--ops lists the once-per-iteration weight casts"
run 0 "$TP" "${L8[@]}" --precision fp8 --fp8-recipe tensorwise --format json
has "$OUT" '"fp8_recipe":	"tensorwise"' "--fp8-recipe in the json"
run 64 "$TP" "${L8[@]}" --precision fp8 --fp8-recipe mxfp8
has "$ERR" "needs Blackwell" "mxfp8 on an H100: refused (usage), says why"
run 64 "$TP" "${L8[@]}" --precision fp8 --fp8-recipe fastest
has "$ERR" "delayed, tensorwise, rowwise, blockwise or mxfp8" "bad fp8 recipe: the valid names"
# packed sequences: attention within each document
run 0 "$TP" "${L8[@]}" --format json --doc-length 2048
has "$OUT" '"packed_documents":' "packed documents in the json"
T_PACK=$(json_num iteration_time_s)
if awk -v a="$T_PACK" -v b="$T_AUTO" 'BEGIN { exit !(a < b) }'; then ok; else bad "2k documents packed in 8k ($T_PACK s) faster than 8k documents ($T_AUTO s)"; fi
run 64 "$TP" "${L8[@]}" --doc-length 512:0.5,4096:0.4
has "$ERR" "sum to 0.9" "--doc-length shares must sum to 1"
run 64 "$TP" "${L8[@]}" --doc-length 16384
has "$ERR" "longer than the packed sequence" "--doc-length within --seq-length"
run 64 "$TP" "${L8[@]}" --doc-length 512,4096
has "$ERR" "LEN:SHARE" "several lengths need shares"
run 64 "$TP" "${L8[@]}" --attention-backend cudnn
has "$ERR" "unfused, flash, fused or auto" "bad attention backend: the valid names"
run 64 "$TP" "${EST[@]}" --precision fp8
has "$ERR" "no fp8" "fp8 on A100 is a usage error"
run 64 "$TP" "${EST[@]}" --recompute-granularity sometimes
has "$ERR" "none, selective, full or selective-op" "bad recompute value"
# partial recomputation and the gradient dtype: values checked, named in
# messages, and they move the memory
run 64 "$TP" "${EST[@]}" --recompute-method sometimes
has "$ERR" "--recompute-method: expected uniform or block, found 'sometimes'" "bad recompute method"
run 64 "$TP" "${EST[@]}" -r full --recompute-method block
has "$ERR" "--recompute-method block needs --recompute-num-layers" "block needs N"
run 64 "$TP" "${EST[@]}" -r full --recompute-num-layers 45
has "$ERR" "--recompute-num-layers 45: expected 1 to 44" "N within the model's layers"
run 64 "$TP" "${EST[@]}" -r full --recompute-num-layers 0
has "$ERR" "--recompute-num-layers: expected an integer in [1, 1000000], found '0'" "N >= 1"
run 64 "$TP" "${EST[@]}" -r selective --recompute-num-layers 2
has "$ERR" "--recompute-num-layers applies to --recompute-granularity full, not selective" "N needs full"
run 64 "$TP" "${EST[@]}" --accumulate-allreduce-grads-in-fp32 --grad-reduce-in-bf16
has "$ERR" "contradict" "two gradient dtypes"
P11=(-t 8 -p 4 -b 4 --no-sequence-parallel --use-distributed-optimizer -c 1 --num-virtual-stages-per-pipeline-rank 1 --format json)
run 0 "$TP" "${EST[@]}" "${P11[@]}" -r full
A_FULL=$(json_num activations_bytes); R_FULL=$(json_num recompute_s)
has "$OUT" '"recompute_method":	"uniform"' "full recompute: its method in json"
has "$OUT" '"optimizer_step_peak_bytes"' "json: the optimizer step's peak"
has "$OUT" '"backward_peak_bytes"' "json: the backward's peak"
has "$OUT" '"peak_phase":	"backward"' "json: which phase sets the peak"
has "$OUT" '"accumulate_allreduce_grads_in_fp32":	true' "bf16: fp32 gradients by default"
run 0 "$TP" "${EST[@]}" "${P11[@]}" -r full --recompute-method block --recompute-num-layers 2
has "$OUT" '"recompute_num_layers":	2' "block N in json"
A_BLK=$(json_num activations_bytes); R_BLK=$(json_num recompute_s)
if awk -v a="$A_BLK" -v b="$A_FULL" -v r="$R_BLK" -v s="$R_FULL" 'BEGIN { exit !(a > b && r < s) }'; then
    ok; else bad "block 2 of 11 layers: more activations ($A_BLK vs $A_FULL), less recompute ($R_BLK vs $R_FULL)"; fi
run 0 "$TP" "${EST[@]}" "${P11[@]}" -r full --recompute-method uniform --recompute-num-layers 3
A_U3=$(json_num activations_bytes)
if awk -v a="$A_U3" -v b="$A_FULL" 'BEGIN { exit !(a != b) }'; then ok; else bad "uniform groups of 3 move the activations"; fi
run 0 "$TP" "${EST[@]}" "${P11[@]}" -r full --precision fp16
has "$OUT" '"accumulate_allreduce_grads_in_fp32":	false' "fp16: 16-bit gradients by default"
S16=$(json_num optimizer_step_transient_bytes)
run 0 "$TP" "${EST[@]}" "${P11[@]}" -r full --precision fp16 --accumulate-allreduce-grads-in-fp32
has "$OUT" '"accumulate_allreduce_grads_in_fp32":	true' "fp16 with fp32 accumulation asked for"
S32=$(json_num optimizer_step_transient_bytes)
if awk -v a="$S16" -v b="$S32" 'BEGIN { exit !(a > 0 && b == 0) }'; then ok; else bad "the step's fp32 gradient copy only with 16-bit gradients ($S16, $S32)"; fi
run 0 "$TP" "${EST[@]}" -t 8 -p 4 -b 4 -r full --grad-reduce-in-bf16
has "$OUT" "gradients 16-bit" "table: the gradient dtype"
has "$OUT" "optimizer_step_peak" "table: the optimizer step's peak"
has "$OUT" "peak in the" "table: which phase sets the peak"
# Memory as the runtime holds it: levels, device terms, every stage, the
# margin and the measured evidence behind it (issue 16).
run 0 "$TP" "${EST[@]}" "${P11[@]}" -r full
for k in allocated_bytes reserved_bytes cuda_context_bytes nccl_buffers_bytes \
         workspace_bytes margin_fraction headroom_bytes memory_per_stage evidence; do
    has "$OUT" "\"$k\"" "estimate json: memory $k"
done
run 0 "$TP" "${EST[@]}" -t 8 -p 4 -b 4 -r full
has "$OUT" "memory per pipeline stage" "table: memory per stage"
has "$OUT" "with the margin" "table: the margin and what is left"
run 0 "$TP" search -m gpt-neox-20b --system perlmutter --max-gpus 32 -s 2048 -B 256 --no-timing
has "$OUT" "memory: admitted when the estimated peak +" "search: the margin it adds"
has "$OUT" "+margin" "search table: the margin column"
run 0 "$TP" search -m gpt-neox-20b --system perlmutter --max-gpus 32 -s 2048 -B 256 --no-timing --max-memory-fraction 0.9
has "$OUT" "no margin" "search: --max-memory-fraction overrides the margin"
run 0 "$TP" search -m gpt-neox-20b --system perlmutter --max-gpus 32 -s 2048 -B 256 --no-timing --format json
has "$OUT" '"memory_margin_bytes"' "search json: the margin per layout"
has "$OUT" '"memory_margin_fraction"' "search json: the margin rule"
run 0 "$TP" search -m gpt-neox-20b --system perlmutter --max-gpus 32 -s 2048 -B 256 --no-timing --format csv
has "$OUT" "memory_margin_bytes" "search csv: the margin column"
run 64 "$TP" "${EST[@]}" --num-layers-per-virtual-pipeline-stage 2
has "$ERR" "needs --pipeline-model-parallel-size" "virtual stages need PP"
# the pipeline split (issue 28): Llama 3.1 405B's 126 layers on 2048 GPUs
# run at PP 16 (and every power of two from 8) with the embedding and loss
# counted; the output names every PP the search tried and why the others
# gave nothing
S405=(search -m llama3.1-405b --system eos --gpus 2048 -s 8192 -B 1024 --no-timing)
run 0 "$TP" "${S405[@]}"
has "$OUT" "8, 16, 32, 64: layouts admitted" "405B: PP 16 admitted"
has "$OUT" "3, 5-7, 9-15, 17-31, 33-63, 65-126: none admitted: gpus_divisibility" "405B: every skipped PP named"
has "$OUT" "_ael_" "405B: the embedding and loss counted"
run 0 "$TP" "${S405[@]}" --max-memory-fraction 1 --explain
has "$OUT" "4, 8, 16, 32, 64: layouts admitted" "405B, whole memory: PP 4 to 64 admitted"
has "$OUT" "why none (the most layouts)" "405B --explain: the per-PP table"
run 0 "$TP" "${S405[@]}" --format json
has "$OUT" '"why_none":' "search json: why each PP gave nothing"
has "$OUT" '"pipeline_split":' "search json: each layout's split"
run 0 "$TP" "${S405[@]}" --fix pp=16,split=ends,vpp=1
has "$OUT" "_f7l7" "--fix split=ends: first and last stage counts"
run 0 "$TP" estimate -m llama3.1-405b --system eos -g 2048 -s 8192 -B 1024 -t 8 -p 16 --format json
has "$OUT" '"account_for_loss_in_pipeline_split":	true' "estimate -t 8 -p 16: a split Megatron-Core runs"
run 0 "$TP" estimate -m llama3.1-405b --system eos -g 2048 -s 8192 -B 1024 -t 8 -p 16 --num-virtual-stages-per-pipeline-rank 1 --decoder-first-pipeline-num-layers 7 --decoder-last-pipeline-num-layers 7
has "$OUT" "memory per pipeline stage" "estimate: first/last stage counts"
run 1 "$TP" estimate -m llama3.1-405b --system eos -g 2048 -s 8192 -B 1024 -t 8 -p 16 --num-virtual-stages-per-pipeline-rank 1 --decoder-first-pipeline-num-layers 6 --decoder-last-pipeline-num-layers 6
has "$(unwrapped)" "NOT FEASIBLE (invalid_layout, middle_layers): 114 middle layers are not divisible by the 14 middle stages" "estimate: a split Megatron-Core refuses, by name"
run 64 "$TP" estimate -m llama3.1-405b --system eos -g 2048 -s 8192 -B 1024 -t 8 -p 16 --pipeline-model-parallel-layout 'Et|x|L'
has "$ERR" "invalid layer character 'x'" "estimate: a layout string that does not parse"
run 65 "$TP" estimate -m nosuchmodel --system perlmutter-80g -g 8 -s 2048 -B 8
run 65 "$TP" estimate -m gpt-neox-20b --system nosuchsystem -g 8 -s 2048 -B 8
run 64 "$TP" estimate -m gpt-neox-20b --system perlmutter-80g -g 8 --nodes 4 -s 2048 -B 8
has "$ERR" "disagree" "--gpus and --nodes must agree"
run 64 "$TP" "${EST[@]}" -g abc
has "$ERR" "--gpus: expected an integer" "estimate: --gpus must be one integer"

# --- search -------------------------------------------------------------------------
SRCH=(search --model gpt-neox-20b --system perlmutter --max-gpus 128 --seq-length 2048
      --global-batch-size 1024 --tokens 300e9)
run 0 "$TP" "${SRCH[@]}" --format json
for k in ranked pareto stats enumerated pruned estimated elapsed_s threads gpus iteration_time_s \
         time_to_train_s cost_usd gpu_hours peak_memory_bytes tensor_model_parallel_size \
         pipeline_model_parallel_size data_parallel_size micro_batch_size layout megatron \
         nemo torchtitan_config memory_bound time_bound gpus_divisibility; do
    has "$OUT" "\"$k\"" "search json has $k"
done
has "$OUT" "--tensor-model-parallel-size" "megatron launch line"
has "$OUT" "model.tensor_model_parallel_size" "nemo keys"
has "$OUT" "tensor_parallel_degree" "torchtitan keys"
# the flagship: table with the ranked layouts and the front
run 0 "$TP" "${SRCH[@]}"
has "$OUT" "top 10 by time" "flagship table: ranked"
has "$OUT" "Pareto front of time against cost" "flagship table: front"
has "$OUT" "n32g4_tp" "flagship: layout tags"
# The default text fits a screen: the launches behind --launch (issue 31).
lines=$(printf '%s\n' "$OUT" | wc -l)
cols=$(printf '%s\n' "$OUT" | awk '{ if (length($0) > m) m = length($0) } END { print m }')
if [ "$lines" -le 50 ] && [ "$cols" -le 160 ]; then ok; else bad "flagship text: $lines lines, $cols columns"; fi
has "$OUT" "launch #1: --launch megatron|nemo|torchtitan|all prints it here" "flagship: the launch line"
if printf '%s' "$OUT" | grep -q "Megatron-LM launch script\|NeMo (\|torchtitan ("; then bad "flagship: launches printed by default"; else ok; fi
run 0 "$TP" "${SRCH[@]}" --launch nemo --no-timing
has "$OUT" "NeMo (Megatron-Bridge overrides)" "--launch nemo prints NeMo's"
if printf '%s' "$OUT" | grep -q "Megatron-LM launch script\|torchtitan ("; then bad "--launch nemo prints another framework's"; else ok; fi
run 0 "$TP" "${SRCH[@]}" --launch torchtitan --no-timing
has "$OUT" "torchtitan (Python config)" "--launch torchtitan"
if printf '%s' "$OUT" | grep -q "Megatron-LM launch script\|NeMo ("; then bad "--launch torchtitan prints another framework's"; else ok; fi
run 0 "$TP" "${SRCH[@]}" --launch all --no-timing
has "$OUT" "# (end of the script)" "--launch all: Megatron-LM's"
has "$OUT" "NeMo (Megatron-Bridge overrides)" "--launch all: NeMo's"
has "$OUT" "torchtitan (Python config)" "--launch all: torchtitan's"
run 64 "$TP" "${SRCH[@]}" --launch slurm && has "$ERR" "--launch" "--launch: a bad value"
run 0 "$TP" "${SRCH[@]}" --explain --no-timing
has "$OUT" "rejected or not admitted, by reason:" "--explain: the counts by reason"
# byte-identical at 1, 2 and 4 threads: table, CSV, JSON, JSON Lines
for fmt in table csv json jsonl; do
    for t in 1 2 4; do
        "$TP" --threads "$t" "${SRCH[@]}" --no-timing --format "$fmt" -o "$SCRATCH/s.$fmt.$t" 2>/dev/null
    done
    if cmp -s "$SCRATCH/s.$fmt.1" "$SCRATCH/s.$fmt.2" && cmp -s "$SCRATCH/s.$fmt.1" "$SCRATCH/s.$fmt.4" \
       && [ -s "$SCRATCH/s.$fmt.1" ]; then ok; else bad "search --format $fmt differs between 1, 2, 4 threads"; fi
done
if grep -q elapsed_s "$SCRATCH/s.json.1"; then bad "--no-timing keeps elapsed_s"; else ok; fi
# the same without --no-timing differs only in the timing fields
"$TP" --threads 1 "${SRCH[@]}" --format json | grep -v -e '"elapsed_s"' -e '"threads"' >"$SCRATCH/t1"
"$TP" --threads 2 "${SRCH[@]}" --format json | grep -v -e '"elapsed_s"' -e '"threads"' >"$SCRATCH/t2"
if cmp -s "$SCRATCH/t1" "$SCRATCH/t2"; then ok; else bad "search json differs beyond the timing fields"; fi
run 0 "$TP" "${SRCH[@]}" --format csv
has "$OUT" "set,rank,system,layout,gpus" "search csv header"
has "$OUT" "pareto,1," "search csv has the front"
run 0 "$TP" "${SRCH[@]}" --format jsonl
if [ "$(printf '%s\n' "$OUT" | wc -l)" -ge 11 ] && printf '%s\n' "$OUT" | tail -n 1 | grep -q '^{"schema_version":1,"stats"'; then
    ok; else bad "jsonl: one line per layout, stats last"; fi
# SVG, explain, options
run 0 "$TP" "${SRCH[@]}" --svg "$SCRATCH/front.svg" --explain
has "$(cat "$SCRATCH/front.svg")" "<svg" "svg written"
has "$(cat "$SCRATCH/front.svg")" "cost to train (USD" "svg x axis with unit"
has "$(cat "$SCRATCH/front.svg")" "time to train (days" "svg y axis with unit"
has "$OUT" "wins:" "--explain: why the winner wins"
has "$OUT" "loses by" "--explain: why the runners-up lose"
has "$OUT" "e.g. " "--explain: an example per rule"
run 0 "$TP" "${SRCH[@]}" --fix tp=2,recompute=full --format json
if printf '%s' "$OUT" | grep -Eq '"tensor_model_parallel_size":[[:space:]]*([013-9]|2[0-9])'; then bad "--fix tp=2 not kept"; else ok; fi
run 0 "$TP" "${SRCH[@]}" --objective cost --top 3 --format csv
if [ "$(printf '%s\n' "$OUT" | grep -c '^ranked,')" -eq 3 ]; then ok; else bad "--top 3"; fi
run 0 "$TP" search --model gpt3-1.7b --system perlmutter,selene --max-gpus 32 -s 2048 -B 256 --tokens 1e10
has "$OUT" "system" "several systems: a system column"
has "$OUT" "selene" "several systems: both listed"
# a higher price makes the same layouts cost more
run 0 "$TP" "${SRCH[@]}" --price 1 --top 1 --format json
C1=$(json_num cost_usd)
run 0 "$TP" "${SRCH[@]}" --price 2 --top 1 --format json
C2=$(json_num cost_usd)
within "$C2" "$(awk -v c="$C1" 'BEGIN{printf "%.6f", 2*c}')" 1e-9 "--price doubles the cost"
# options move the output the right way
run 0 "$TP" "${SRCH[@]}" --format json --no-timing
A1=$(json_num admitted); E1=$(json_num estimated); T1=$(json_num iteration_time_s); K1=$(json_num cost_usd)
run 0 "$TP" "${SRCH[@]}" --format json --no-timing --max-memory-fraction 0.8
A2=$(json_num admitted)
if [ "$A2" -lt "$A1" ]; then ok; else bad "--max-memory-fraction 0.8 admits fewer ($A2 vs $A1)"; fi
run 0 "$TP" "${SRCH[@]}" --format json --no-timing --no-prune
E3=$(json_num estimated); T3=$(json_num iteration_time_s)
if [ "$E3" -gt "$E1" ] && [ "$T3" = "$T1" ]; then ok; else bad "--no-prune: more estimated ($E3 vs $E1), same winner ($T3 vs $T1)"; fi
run 0 "$TP" "${SRCH[@]}" --format json --no-timing --objective cost
K4=$(json_num cost_usd)
if awk -v a="$K4" -v b="$K1" 'BEGIN{exit !(a <= b)}'; then ok; else bad "--objective cost: winner costs no more ($K4 vs $K1)"; fi
run 0 "$TP" "${SRCH[@]}" --format csv --min-gpus 64
if printf '%s\n' "$OUT" | awk -F, '$1 ~ /^(ranked|pareto)$/ && $5 < 64 { bad = 1 } END { exit bad }'; then ok; else bad "--min-gpus 64"; fi
run 0 "$TP" "${SRCH[@]}" --format csv --gpus 64,96
if printf '%s\n' "$OUT" | awk -F, '$1 ~ /^(ranked|pareto)$/ && $5 != 64 && $5 != 96 { bad = 1 } END { exit bad }'; then ok; else bad "--gpus 64,96"; fi
# infeasible: exit 1, counts per reason, nearest miss
run 1 "$TP" search --model gpt3-175b --system perlmutter --max-gpus 8 -s 2048 -B 64
has "$OUT" "NOTHING FEASIBLE" "infeasible: said"
has "$OUT" "memory_bound" "infeasible: counts per reason"
has "$OUT" "nearest miss (memory binds)" "infeasible: nearest miss"
has "$ERR" "nothing feasible" "infeasible: stderr"
run 1 "$TP" search --model gpt3-175b --system perlmutter --max-gpus 8 -s 2048 -B 64 --format json
has "$OUT" '"nearest_miss"' "infeasible json: nearest miss"
run 1 "$TP" "${SRCH[@]}" --budget-usd 1000
has "$OUT" "budget" "budget too small: the budget counts"
run 1 "$TP" "${SRCH[@]}" --deadline 1d
has "$OUT" "nearest miss (deadline binds)" "deadline: nearest miss"
# Issue 30: a limit near zero: a bound, not "inf x" (JSON null), and no
# 300-digit ratio.
run 1 "$TP" search --model gpt-neox-20b --system perlmutter --max-gpus 64 -s 2048 -B 1024 --tokens 1e18 --budget-usd 1e-300
has "$ERR" "(more than 1e+300 x) over the \$1e-300 budget" "budget 1e-300: a bound"
run 1 "$TP" search --model gpt-neox-20b --system perlmutter --max-gpus 64 -s 2048 -B 1024 --tokens 1e18 --budget-usd 1e-300 --format json
if printf '%s' "$OUT" | grep -q '"needs":[[:space:]]*1e+300' && ! printf '%s' "$OUT" | grep -q '"needs":[[:space:]]*null'; then ok; else bad "budget 1e-300: json needs 1e+300"; fi
run 1 "$TP" search --model gpt-neox-20b --system perlmutter --max-gpus 64 -s 2048 -B 1024 --tokens 1 --deadline 1e-300s
if printf '%s' "$ERR" | grep -Eq '\([0-9.]+e\+[0-9]+ x\) past the deadline of'; then ok; else bad "deadline 1e-300s: %.3g ratio: $ERR"; fi
# bad input
run 64 "$TP" search --model gpt-neox-20b --system perlmutter -s 2048 -B 1024
has "$ERR" "--max-gpus" "search needs --max-gpus"
run 64 "$TP" "${SRCH[@]}" --fix tq=2
has "$ERR" "unknown field 'tq'" "--fix: unknown field"
run 64 "$TP" "${SRCH[@]}" --fix tp=0
has "$ERR" "out of range" "--fix: bad value"
run 64 "$TP" "${SRCH[@]}" --fix tp
has "$ERR" "KEY=VALUE" "--fix: no value"
run 64 "$TP" "${SRCH[@]}" --max-memory-fraction 1.5
has "$ERR" "(0, 1]" "--max-memory-fraction range"
run 64 "$TP" "${SRCH[@]}" --deadline soon
has "$ERR" "--deadline: expected a duration" "--deadline format"
run 64 "$TP" search --model gpt-neox-20b --system perlmutter --max-gpus 64 -s 2048 -B 1024 --budget-usd 5
has "$ERR" "--budget-usd needs --tokens" "budget needs tokens"
run 64 "$TP" "${SRCH[@]}" --objective fastest
has "$ERR" "time, throughput, time-to-train or cost" "--objective values"
run 64 "$TP" "${SRCH[@]}" --gpus 8-x
has "$ERR" "--gpus (range end)" "--gpus range"
run 64 "$TP" "${SRCH[@]}" --min-gpus 256
has "$ERR" "--min-gpus 256 is above --max-gpus 128" "--min-gpus above --max-gpus"
run 64 "$TP" "${SRCH[@]}" --system perlmutter,perlmutter
has "$ERR" "listed twice" "a system twice"
run 65 "$TP" "${SRCH[@]}" --system perlmutter,nosuch
run 64 "$TP" model list --format jsonl
has "$ERR" "--format jsonl applies to 'search', 'sweep' and 'merge' only" "jsonl is the search's"
# -o: a failed search leaves no file
run 64 "$TP" "${SRCH[@]}" --fix tq=2 -o "$SCRATCH/nofile.json"
if [ -e "$SCRATCH/nofile.json" ]; then bad "failed search left -o file"; else ok; fi

# --- mixture of experts (issue 19) ---------------------------------------------
# The search prints layouts with their expert parallelism, byte-identical
# at 1 and 2 threads. Until the estimator models MoE it refuses the model
# by name (exit 65, moe_not_modelled): then only that is checked.
MOE=(search -m mixtral-8x7b --system eos --max-gpus 256 -s 4096 -B 1024 --no-timing --launch megatron)
"$TP" --threads 1 "${MOE[@]}" >"$SCRATCH/moe.1" 2>"$SCRATCH/moe.err"
rc=$?
if [ "$rc" = 65 ] && grep -q moe_not_modelled "$SCRATCH/moe.err"; then
    echo "SKIP: MoE search: the estimator does not model it yet: $(cat "$SCRATCH/moe.err")" >&2
    ok
else
    if [ "$rc" = 0 ]; then ok; else bad "MoE search: exit $rc: $(cat "$SCRATCH/moe.err")"; fi
    if grep -q '_ep[0-9]' "$SCRATCH/moe.1"; then ok; else bad "MoE search: no layout with _ep"; fi
    has "$(cat "$SCRATCH/moe.1")" "--expert-model-parallel-size" "MoE search: the launch's EP"
    "$TP" --threads 2 "${MOE[@]}" >"$SCRATCH/moe.2" 2>/dev/null
    if cmp -s "$SCRATCH/moe.1" "$SCRATCH/moe.2"; then ok; else bad "MoE search differs between 1 and 2 threads"; fi
    run 0 "$TP" "${MOE[@]}" --format json --top 3
    has "$OUT" '"expert_model_parallel_size"' "MoE json: EP"
    has "$OUT" '"expert_tensor_parallel_size"' "MoE json: expert TP"
    run 0 "$TP" "${MOE[@]}" --format csv --top 3
    has "$OUT" "zero,ep,etp,iteration_time_s" "MoE csv: ep and etp columns"
    # every layout EP 4, expert TP 1 (_etp1, or no _etp where TP is 1)
    run 0 "$TP" "${MOE[@]}" --fix ep=4,etp=1 --top 3
    if printf '%s\n' "$OUT" | grep '^ *[0-9] ' | grep -v '_ep4[_e]' | grep -q '_tp'; then
        bad "--fix ep=4,etp=1: a layout without _ep4"; else ok; fi
    if printf '%s\n' "$OUT" | grep '^ *[0-9] ' | grep -q '_etp[02-9]'; then
        bad "--fix ep=4,etp=1: a layout with another expert TP"; else ok; fi
fi
# dense tags and grids are as before: no _ep
run 0 "$TP" "${SRCH[@]}" --no-timing --top 3
if printf '%s' "$OUT" | grep -q '_ep[0-9]'; then bad "dense layout tagged _ep"; else ok; fi
# the MoE options: values and ranges named
EST=(estimate --system eos -g 64 -s 4096 -B 256)
run 64 "$TP" "${EST[@]}" -m llama3-8b --ep 2
has "$ERR" "--ep 2: llama3-8b is dense" "--ep on a dense model"
run 64 "$TP" "${EST[@]}" -m llama3-8b --etp 1
has "$ERR" "--etp 1: llama3-8b is dense" "--etp on a dense model"
run 64 "$TP" "${EST[@]}" -m mixtral-8x7b --ep 3
has "$ERR" "--ep 3: expected a divisor of mixtral-8x7b's 8 experts" "--ep not dividing the experts"
run 64 "$TP" "${EST[@]}" -m mixtral-8x7b --ep 0
has "$ERR" "--ep: expected an integer in [1, 1000000], found '0'" "--ep 0"
run 64 "$TP" "${EST[@]}" -m mixtral-8x7b --moe-imbalance 0.5
has "$ERR" "a number >= 1 (1: perfect balance), found '0.5'" "--moe-imbalance below 1"
run 64 "$TP" "${EST[@]}" -m mixtral-8x7b --moe-imbalance 5
has "$ERR" "--moe-imbalance 5: expected 1 to 4 for mixtral-8x7b" "--moe-imbalance beyond experts / top-k"
run 64 "$TP" "${EST[@]}" -m mixtral-8x7b --moe-dispatcher nccl
has "$ERR" "--moe-dispatcher: expected alltoall, allgather or flex, found 'nccl'" "--moe-dispatcher values"
run 64 "$TP" "${EST[@]}" -m mixtral-8x7b --moe-comm-overlap both
has "$ERR" "--moe-comm-overlap: expected none, shared or a2a, found 'both'" "--moe-comm-overlap values"
run 64 "$TP" "${EST[@]}" -m llama3-8b --moe-comm-overlap a2a
has "$ERR" "--moe-comm-overlap a2a: llama3-8b is dense" "--moe-comm-overlap on a dense model"
run 64 "$TP" "${EST[@]}" -m llama3-8b --moe-router-padding
has "$ERR" "--moe-router-padding: llama3-8b is dense" "--moe-router-padding on a dense model"
run 64 "$TP" "${EST[@]}" -m mixtral-8x7b --moe-flex-backend nccl
has "$ERR" "--moe-flex-backend: expected deepep or hybridep, found 'nccl'" "--moe-flex-backend values"
run 64 "$TP" "${EST[@]}" -m mixtral-8x7b --moe-flex-backend hybridep
has "$ERR" "--moe-flex-backend hybridep: a backend of the flex dispatcher; expected --moe-dispatcher flex, found alltoall" "--moe-flex-backend without the flex dispatcher"
run 64 "$TP" "${EST[@]}" -m llama3-8b --moe-flex-backend hybridep
has "$ERR" "--moe-flex-backend hybridep: llama3-8b is dense" "--moe-flex-backend on a dense model"
run 64 "$TP" search -m llama3-8b --system eos --max-gpus 64 -s 4096 -B 256 --fix ep=2
has "$ERR" "--fix ep=2: llama3-8b is dense" "--fix ep on a dense model"
# Megatron-Core's memory mechanisms (estimator/mem.c): each changes what
# must fit, each is refused where Megatron-Core has no such thing
run 64 "$TP" "${EST[@]}" -m llama3-8b --moe-permute-fusion
has "$ERR" "--moe-permute-fusion: llama3-8b is dense" "--moe-permute-fusion on a dense model"
# Transformer Engine's fused router (issue 29 item 2): trainplan's default
# with Megatron-Core, the PyTorch ops slower, refused on a dense model and
# outside Megatron-Core
run 64 "$TP" "${EST[@]}" -m llama3-8b --no-moe-router-fusion
has "$ERR" "--no-moe-router-fusion: llama3-8b is dense (no router)" "--no-moe-router-fusion on a dense model"
run 64 "$TP" "${EST[@]}" -m mixtral-8x7b --moe-router-fusion --framework torchtitan
has "$ERR" "--moe-router-fusion: Megatron-Core's (with Transformer Engine); the framework is torchtitan" "--moe-router-fusion under torchtitan"
RF=(estimate --system eos -g 64 -s 4096 -B 256 -m qwen3-30b-a3b -t 1 -p 1 --ep 8 --micro-batch-size 1 --format json)
run 0 "$TP" "${RF[@]}"
has "$OUT" '"moe_router_fusion":	true' "MoE estimate: the fused router by default"
fused_s=$(json_num iteration_time_s)
run 0 "$TP" "${RF[@]}" --no-moe-router-fusion
has "$OUT" '"moe_router_fusion":	false' "--no-moe-router-fusion in the layout"
plain_s=$(json_num iteration_time_s)
awk -v a="$plain_s" -v b="$fused_s" 'BEGIN { exit !(a > b && b > 0) }' && ok "the PyTorch router slower ($plain_s s) than the fused one ($fused_s s)" || bad "router fusion: $plain_s s unfused, $fused_s s fused"
# DeepSeek-V3's activation storage (issue 28): less kept than TE's, fp8
# under Megatron-Core only, not expressible in Megatron-LM's launches
FA=(estimate --system eos -g 64 -s 4096 -B 256 -m qwen3-30b-a3b -t 1 -p 1 --ep 8 --micro-batch-size 1 --precision fp8 --format json)
run 0 "$TP" "${FA[@]}"
has "$OUT" '"fp8_activation_cache":	"te"' "fp8 estimate: TE's activations by default"
te_b=$(json_num activations_bytes)
run 0 "$TP" "${FA[@]}" --fp8-activation-cache deepseek-v3
has "$OUT" '"fp8_activation_cache":	"deepseek-v3"' "--fp8-activation-cache in the layout"
ds_b=$(json_num activations_bytes)
awk -v a="$te_b" -v b="$ds_b" 'BEGIN { exit !(a > b && b > 0) }' && ok "DeepSeek-V3's activations ($ds_b B) below TE's ($te_b B)" || bad "--fp8-activation-cache: $ds_b B against TE's $te_b B"
run 64 "$TP" "${EST[@]}" -m llama3-8b --fp8-activation-cache deepseek-v3
has "$ERR" "--fp8-activation-cache deepseek-v3: what an fp8 run keeps for the backward; expected --precision fp8 (or mxfp8) and --framework megatron-core, found bf16 (the default) and megatron-core" "--fp8-activation-cache without fp8"
run 64 "$TP" "${EST[@]}" -m llama3-8b --precision fp8 --fp8-activation-cache deepseek
has "$ERR" "--fp8-activation-cache: expected" "--fp8-activation-cache values"
run 0 "$TP" search --system eos -m qwen3-30b-a3b -s 4096 -B 256 --max-gpus 64 --min-gpus 64 --ep 8 --precision fp8 --fp8-activation-cache deepseek-v3 --top 1 --no-timing --launch megatron
has "$OUT" "NOT EXPRESSIBLE: the activations kept as DeepSeek-V3's framework keeps them" "--fp8-activation-cache: Megatron-LM's launch says so"
run 64 "$TP" "${EST[@]}" -m llama3-8b --cuda-graph-impl eager
has "$ERR" "--cuda-graph-impl: expected none, local, transformer_engine or full_iteration, found 'eager'" "--cuda-graph-impl values"
run 64 "$TP" "${EST[@]}" -m llama3-8b --cuda-graph-scope attn
has "$ERR" "--cuda-graph-scope: the modules of per-layer graphs; expected --cuda-graph-impl local or transformer_engine, found none" "--cuda-graph-scope without per-layer graphs"
run 64 "$TP" "${EST[@]}" -m llama3-8b --cuda-graph-impl local --cuda-graph-scope attn,everything
has "$ERR" "--cuda-graph-scope: expected full, or a comma-separated list" "--cuda-graph-scope values"
run 64 "$TP" "${EST[@]}" -m llama3-8b --cuda-graph-impl local --cuda-graph-scope moe
has "$ERR" "llama3-8b is dense" "--cuda-graph-scope moe on a dense model"
run 64 "$TP" "${EST[@]}" -m llama3-8b --cuda-graph-impl local --framework torchtitan
has "$ERR" "expected --framework megatron-core, found torchtitan" "--cuda-graph-impl under torchtitan"
run 64 "$TP" "${EST[@]}" -m llama3-8b --fsdp-double-buffer --zero-stage 1
has "$ERR" "--fsdp-double-buffer: Megatron-FSDP's buffers, with --zero 2 or 3 (found 1)" "--fsdp-double-buffer without Megatron-FSDP"
MECH=(estimate --system eos -g 64 -s 8192 -B 128 -m llama3-8b -t 1 -p 1 --micro-batch-size 1 --format json)
# the pool and the double buffers are held in the optimizer step; the
# permutation's maps in the backward
peak() { printf '%s' "$OUT" | sed -n "s/.*\"$1\":\t\([0-9.e+]*\).*/\1/p" | head -1; }
run 0 "$TP" "${MECH[@]}"
base=$(peak optimizer_step_peak_bytes)
for opt in "--cuda-graph-impl transformer_engine" "--cuda-graph-impl full_iteration" "--zero-stage 3|--zero-stage 3 --fsdp-double-buffer" "-m mixtral-8x7b|-m mixtral-8x7b --no-moe-permute-fusion"; do
    b=$base key=optimizer_step_peak_bytes
    case $opt in *permute*) key=backward_peak_bytes ;; esac
    if [ "${opt#*|}" != "$opt" ]; then
        # shellcheck disable=SC2086  # a list of options
        run 0 "$TP" "${MECH[@]}" ${opt%%|*}
        b=$(peak "$key")
        opt=${opt#*|}
    fi
    # shellcheck disable=SC2086  # a list of options
    run 0 "$TP" "${MECH[@]}" $opt
    got=$(peak "$key")
    if [ -n "$got" ] && [ "$got" != "$b" ]; then ok; else bad "$opt changes nothing ($got vs $b)"; fi
done
# The search turns on CUDA graphs where the GPU waits on the host (issue 29):
# a small-active MoE at one micro-batch a GPU on GB200 hosts.
CG=(search -m qwen3-30b-a3b --system gb200-nvl72 --gpus 64 -s 4096 -B 64 --top 1 --no-timing)
run 0 "$TP" "${CG[@]}" --launch megatron
has "$OUT" "_cgte " "search: CUDA graphs where the host binds, in the tag"
has "$OUT" "--cuda-graph-modules attn moe_router moe_preprocess" "search: the graphs in the launch"
T_CG=$(printf '%s\n' "$OUT" | awk '$1 == "1" { print $4; exit }')
run 0 "$TP" "${CG[@]}" --cuda-graph-impl none
if printf '%s' "$OUT" | grep -q "_cgte"; then bad "--cuda-graph-impl none: the search kept graphs off"; else ok; fi
T_NO=$(printf '%s\n' "$OUT" | awk '$1 == "1" { print $4; exit }')
if awk -v a="$T_CG" -v b="$T_NO" 'BEGIN { exit !(a > 0 && a < b) }'; then ok; else bad "graphs faster: $T_CG vs $T_NO"; fi
run 0 "$TP" "${CG[@]}" --format json
printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(not (d["stats"]["admitted_with_cuda_graphs"] > 0 and d["ranked"][0]["cuda_graph_impl"] == "transformer_engine"))' && ok || bad "search JSON: admitted_with_cuda_graphs, the row's cuda_graph_impl"
# torchtitan: PyTorch's other pipeline schedules tried where 1F1B ran
# (issue 29), eager as they need; kept where faster and fitting.
PSS=(search -m llama3-70b --system eos --gpus 64 -s 8192 -B 32 --framework torchtitan --eager --fix pp=8 --top 1 --no-timing)
run 0 "$TP" "${PSS[@]}" --format json
printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); r=d["ranked"][0]; sys.exit(not (r["pipeline_schedule"] == "zb1p" and r["layout"].endswith("_zb1p") and d["stats"]["admitted_with_schedule"]["zb1p"] > 0))' && ok || bad "search: the zero-bubble schedule chosen, tagged and counted"
T_ZB=$(json_num iteration_time_s)
run 0 "$TP" "${PSS[@]}" --pipeline-schedule 1f1b --format json
has "$(json_str pipeline_schedule)" '"interleaved"' "--pipeline-schedule given: the search keeps it"
T_1F=$(json_num iteration_time_s)
if awk -v a="$T_ZB" -v b="$T_1F" 'BEGIN { exit !(a > 0 && a < b) }'; then ok; else bad "zb1p faster: $T_ZB vs $T_1F"; fi
run 64 "$TP" search -m mixtral-8x7b --system eos --max-gpus 64 -s 4096 -B 256 --fix etp=x
has "$ERR" "etp=x is out of range (an integer in [0, 1048576], 0: = tp)" "--fix etp range"

# --- recompute modules (Megatron-Core --recompute-modules) -------------------
MOE=(-m qwen3-30b-a3b --system eos -s 4096 -B 512)
run 0 "$TP" estimate "${MOE[@]}" --gpus 64 -t 1 -p 4 --ep 8 --recompute-modules moe,layernorm --format json
printf '%s' "$OUT" | python3 -c 'import json,sys; l=json.load(sys.stdin)["layout"]; sys.exit(not (l["recompute_granularity"] == "selective" and l["recompute_modules"] == ["layernorm", "moe"]))' && ok || bad "--recompute-modules: selective, its modules in JSON"
T1=$(json_num iteration_time_s)
run 0 "$TP" search "${MOE[@]}" --gpus 64 --fix tp=1,pp=4,ep=8 --recompute-modules moe,layernorm --top 1 --format json
has "$OUT" "--recompute-granularity selective --recompute-modules layernorm moe" "Megatron-LM's --recompute-modules, one word each"
has "$OUT" "model.recompute_modules=[layernorm,moe]" "Megatron-Bridge's recompute_modules"
printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ranked"][0]["launch"]["megatron"])' > "$SCRATCH/rcm.sh"
run 0 "$TP" estimate --system eos --megatron-args "$SCRATCH/rcm.sh" --format json
printf '%s' "$OUT" | python3 -c 'import json,sys; l=json.load(sys.stdin)["layout"]; sys.exit(l["recompute_modules"] != ["layernorm", "moe"])' && ok || bad "--recompute-modules read back from the launch line"
run 64 "$TP" estimate "${MOE[@]}" --gpus 64 -t 1 -p 4 --ep 8 --recompute-modules moe,foo
has "$ERR" "found 'moe,foo' at foo" "--recompute-modules unknown name"
run 64 "$TP" estimate "${MOE[@]}" --gpus 64 -t 1 -p 4 --ep 8 --recompute-modules mla_up_proj
has "$ERR" "qwen3-30b-a3b has no module 'mla_up_proj'" "--recompute-modules a module the model lacks"
run 64 "$TP" estimate "${MOE[@]}" --gpus 64 -t 1 -p 4 --ep 8 --recompute-modules moe -r full
has "$ERR" "--recompute-modules moe applies to --recompute-granularity selective, not full" "--recompute-modules with full"
# search with the granularity as an option (fixed by its name)
run 0 "$TP" search -m gpt-neox-20b --system perlmutter --max-gpus 32 -s 2048 -B 256 -r selective --top 1 --format json
printf '%s' "$OUT" | python3 -c 'import json,sys; r=json.load(sys.stdin)["ranked"]; sys.exit(not r or any(x["recompute_granularity"] != "selective" for x in r))' && ok || bad "search -r selective"

# --- the host's side (estimator/host.c) and CUDA graphs ---------------------
# A small-active MoE on Grace hosts waits for its host (host_exposed_s);
# Transformer Engine's graphs of the attention, router and preprocess make
# it faster; --ops names the term.
HOST=(estimate -m qwen3-30b-a3b --system gb200-nvl72 -g 64 -t 1 -p 1 --ep 8 -b 1 -B 512 -s 2048 --format json)
run 0 "$TP" "${HOST[@]}"
T0=$(json_num iteration_time_s)
H0=$(json_num host_exposed_s)
run 0 "$TP" "${HOST[@]}" --cuda-graph-impl transformer_engine --cuda-graph-scope attn,moe_router,moe_preprocess
T1=$(json_num iteration_time_s)
H1=$(json_num host_exposed_s)
awk -v a="$T0" -v b="$T1" -v h="$H0" -v g="$H1" 'BEGIN{exit !(h > 0 && g < h && b < a)}' && ok || bad "CUDA graphs shorten a host-bound MoE step ($T0 -> $T1 s, host $H0 -> $H1 s)"
run 0 "$TP" estimate -m qwen3-30b-a3b --system gb200-nvl72 -g 64 -t 1 -p 1 --ep 8 -b 1 -B 512 -s 2048 --ops
has "$OUT" "host_exposed" "--ops names the host-bound term"

# --- memory savers (issue 28) ----------------------------------------------
L70=(-m llama3.1-70b --system eos -s 8192 -B 64)
# a search that admits nothing without them, and finds a layout with one
run 1 "$TP" search "${L70[@]}" --max-gpus 16 --no-memory-savers
has "$ERR" "nothing feasible" "Llama 3.1 70B on 16 H100s: nothing fits without savers"
run 0 "$TP" search "${L70[@]}" --max-gpus 16 --top 3 --format json --no-timing
printf '%s' "$OUT" | python3 -c '
import json,sys
d=json.load(sys.stdin); r=d["ranked"]
ok = r and all(x["relies_on_saver"] != "none" and x["memory_savers"]["tag"] and x["layout"].endswith(x["memory_savers"]["tag"]) for x in r)
ok = ok and sum(d["stats"]["admitted_with_saver"].values()) == d["stats"]["admitted"]
sys.exit(not ok)' && ok || bad "search: the winners rely on a saver, named in the tag and the row"
printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ranked"][0]["launch"]["megatron_sbatch"])' > "$SCRATCH/saver.sh"
T1=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ranked"][0]["iteration_time_s"])')
has "$(cat "$SCRATCH/saver.sh")" "--use-precision-aware-optimizer" "the launch script writes the saver"
run 0 "$TP" estimate --system eos --megatron-args "$SCRATCH/saver.sh" --format json
within "$(json_num iteration_time_s)" "$T1" 1e-9 "a saver's launch read back to the same time"
run 0 "$TP" search "${L70[@]}" --max-gpus 16 --top 1 --explain
has "$OUT" "memory_bound" "the table output"
# the precision-aware optimizer: bf16 moments take 6 of the 12 bytes (VPP 5:
# 80 layers over PP 8 leave 10 a rank, which VPP 6 would not divide)
run 1 "$TP" estimate "${L70[@]}" -g 16 -t 2 -p 8 --num-virtual-stages-per-pipeline-rank 5 -b 1 --sequence-parallel -r full --use-distributed-optimizer --format json
has "$(json_str reason)" '"out_of_memory"' "the layout does not fit without the saver"
O1=$(json_num optimizer_bytes)
run 0 "$TP" estimate "${L70[@]}" -g 16 -t 2 -p 8 --num-virtual-stages-per-pipeline-rank 5 -b 1 --sequence-parallel -r full --use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16 --format json
within "$(json_num optimizer_bytes)" "$(awk -v o="$O1" 'BEGIN { printf "%.17g", o / 2 }')" 1e-9 "PA with bf16 moments: half the optimizer states"
has "$(json_str exp_avg_dtype)" '"bf16"' "memory_savers in estimate's JSON"
run 0 "$TP" estimate "${L70[@]}" -g 16 -t 8 -p 2 -b 1 --sequence-parallel --use-precision-aware-optimizer --optimizer-cpu-offload --optimizer-offload-fraction 0.5
has "$OUT" "memory savers: optimizer on the host (0.5 of its parameters)" "optimizer offload in the table"
has "$OUT" "host_offload_bytes" "the host's bytes"
# refusals, by name
run 64 "$TP" estimate "${L70[@]}" -g 16 -t 8 -p 2 --exp-avg-dtype bf16
has "$ERR" "needs --use-precision-aware-optimizer" "moment dtypes without the precision-aware optimizer"
run 64 "$TP" estimate "${L70[@]}" -g 16 -t 8 -p 2 --optimizer-cpu-offload
has "$ERR" "The optimizer cpu offload must be used in conjunction" "optimizer offload without it"
run 64 "$TP" estimate "${L70[@]}" -g 16 -t 8 -p 2 --use-precision-aware-optimizer --zero-stage 0
has "$ERR" "only supported with distributed optimizer" "PA without the distributed optimizer"
run 64 "$TP" estimate "${L70[@]}" -g 16 -t 8 -p 2 --cpu-offloading-num-layers 4
has "$ERR" "no support for Pipeline parallelism with CPU offloading" "activation offload with PP 2"
run 64 "$TP" estimate "${L70[@]}" -g 16 -t 8 --cpu-offloading-num-layers 4 -r full
has "$ERR" "does not work when activation recomputation is enabled" "activation offload with recomputation"
run 64 "$TP" estimate "${L70[@]}" -g 16 -t 8 --cpu-offloading-num-layers 80
has "$ERR" "layers less than 80" "activation offload of every layer"
run 64 "$TP" estimate "${L70[@]}" -g 16 -t 8 -p 2 --fine-grained-activation-offloading --offload-modules attn_proj
has "$ERR" "attn_proj cannot be set to offload_modules alone" "attn_proj without core_attn"
run 64 "$TP" estimate "${L70[@]}" -g 16 -t 8 -p 2 --fine-grained-activation-offloading --offload-modules core_attn,expert_fc1
has "$ERR" "is dense" "expert modules on a dense model"
run 64 "$TP" estimate "${L70[@]}" -g 16 -t 8 -p 2 --offload-modules core_attn
has "$ERR" "--offload-modules applies to --fine-grained-activation-offloading" "modules without the switch"
run 64 "$TP" estimate "${L70[@]}" -g 16 -t 8 -p 2 --fine-grained-activation-offloading --offload-modules fused_group_mlp
has "$ERR" "--offload-modules: expected a comma-separated list" "an unmodelled module"
run 64 "$TP" estimate "${L70[@]}" -g 16 -t 8 -p 2 --use-precision-aware-optimizer --framework torchtitan
has "$ERR" "Megatron-Core's; not with --framework torchtitan" "savers under torchtitan"
run 1 "$TP" estimate -m llama3.1-70b --system mosaicml-h100 -s 8192 -B 64 -g 16 -t 8 --cpu-offloading-num-layers 8 -b 1 --sequence-parallel
has "$OUT" "host.memory_bw_gb_per_s" "a system without the host's memory bandwidth"
# Megatron-Core refuses layer offload beside per-layer CUDA graphs (issue 31:
# the search had combined them); the full iteration's graph is allowed
run 1 "$TP" estimate -m llama3-8b --system eos -g 8 -s 8192 -B 16 --cpu-offloading-num-layers 8 --cuda-graph-impl local
has "$ERR" "CUDA graphs not supported with CPU offloading" "layer offload beside per-layer CUDA graphs"
run 0 "$TP" estimate -m llama3-8b --system eos -g 8 -s 8192 -B 16 --cpu-offloading-num-layers 8 --cuda-graph-impl full_iteration
# fine-grained offloading: its launch line and the NVTE environment
run 0 "$TP" search "${L70[@]}" --gpus 32 --fix tp=8,pp=2,mbs=1,sp=1 --fine-grained-activation-offloading --offload-modules qkv_linear,core_attn --use-precision-aware-optimizer --optimizer-cpu-offload --top 1 --format json --no-timing
has "$OUT" "--fine-grained-activation-offloading --offload-modules qkv_linear core_attn" "Megatron-LM's --offload-modules, one word each"
has "$OUT" "NVTE_CPU_OFFLOAD_V1=1" "the environment fine-grained offloading needs"
has "$OUT" "model.offload_modules=[qkv_linear,core_attn]" "Megatron-Bridge's offload_modules"
printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ranked"][0]["launch"]["nemo"])' > "$SCRATCH/fg.nemo"
T1=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ranked"][0]["iteration_time_s"])')
run 0 "$TP" estimate --system eos --nemo-overrides "$SCRATCH/fg.nemo" --format json
within "$(json_num iteration_time_s)" "$T1" 1e-9 "fine-grained offloading read back from Bridge overrides"
# torchtitan: its FSDP2 CPU offload is another mechanism, refused by name;
# Megatron-Core's savers are notes in its config
run 0 "$TP" search -m llama3-8b --system eos --gpus 8 -s 8192 -B 16 --framework torchtitan --top 1 --format json
printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ranked"][0]["launch"]["torchtitan_config"])' | sed 's/^\(    config.training.mixed_precision_param.*\)$/\1\n    config.training.enable_cpu_offload = True/' > "$SCRATCH/tt_offload.py"
run 65 "$TP" estimate --system eos --torchtitan-config "$SCRATCH/tt_offload.py"
has "$ERR" "FSDP2's CPU offload (CPUOffloadPolicy" "torchtitan's enable_cpu_offload refused by name"
run 0 "$TP" search "${L70[@]}" --max-gpus 16 --top 1 --format json --no-timing
has "$OUT" "NOT EXPRESSIBLE in torchtitan main: Megatron-Core" "torchtitan: Megatron-Core savers not expressible"
# micro-batch groups: 5 micro-batches on PP 4 (Megatron-LM's CI tunable_overlap)
run 1 "$TP" estimate -m gpt3-1.7b --system eos -g 16 -t 1 -p 4 -c 1 --num-virtual-stages-per-pipeline-rank 2 -b 1 -B 20 -s 2048 --use-distributed-optimizer
has "$OUT" "multiple of PP 4" "5 micro-batches on PP 4 refused by default"
run 0 "$TP" estimate -m gpt3-1.7b --system eos -g 16 -t 1 -p 4 -c 1 --num-virtual-stages-per-pipeline-rank 2 -b 1 -B 20 -s 2048 --use-distributed-optimizer --microbatch-group-size-per-virtual-pipeline-stage 5
has "$OUT" "micro-batch groups of 5" "allowed in groups of 5"
run 64 "$TP" estimate -m gpt3-1.7b --system eos -g 16 -t 1 -p 4 --num-virtual-stages-per-pipeline-rank 1 -b 1 -B 20 -s 2048 --microbatch-group-size-per-virtual-pipeline-stage 5
has "$ERR" "applies to the interleaved schedule" "groups without interleaving"
# pipeline schedules (issue 29 item 2): the option, its rules, JSON, and
# torchtitan's names written and read back
PS=(-m llama3-8b --system eos -g 16 -t 2 -p 4 -b 1 -B 32 -s 4096 --framework torchtitan --eager)
run 64 "$TP" estimate "${PS[@]}" --pipeline-schedule zb2p
has "$ERR" "--pipeline-schedule: expected 1f1b, zb1p, zbv, dualpipe or dualpipev, found 'zb2p'" "--pipeline-schedule values"
run 1 "$TP" estimate "${PS[@]}" --num-virtual-stages-per-pipeline-rank 1 --pipeline-schedule zbv
has "$OUT" "exactly 2 virtual stages a rank" "ZBV needs 2 chunks a rank"
run 1 "$TP" estimate -m llama3-8b --system eos -g 16 -t 2 -p 4 -b 1 -B 32 -s 4096 --framework torchtitan --num-virtual-stages-per-pipeline-rank 2 --pipeline-schedule ZBVZeroBubble
has "$OUT" "refuses compiled stages" "PyTorch's zero-bubble schedules need eager torchtitan"
run 0 "$TP" estimate "${PS[@]}" --num-virtual-stages-per-pipeline-rank 2 --pipeline-schedule zbv --format json
has "$(json_str pipeline_schedule)" '"zbv"' "pipeline_schedule in the estimate's JSON"
run 0 "$TP" search "${PS[@]}" --num-virtual-stages-per-pipeline-rank 2 --pipeline-schedule dualpipev --top 1 --format json --no-timing
has "$(json_str pipeline_schedule)" '"dualpipev"' "pipeline_schedule in the search's JSON"
has "$OUT" 'pipeline_parallel_schedule = \"DualPipeV\"' "torchtitan's writer names DualPipeV"
has "$OUT" "NOT EXPRESSIBLE: the dualpipev pipeline schedule" "Megatron-LM's launch refuses it by name"
printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ranked"][0]["launch"]["torchtitan_config"])' > "$SCRATCH/tt_dualpipev.py"
T1=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ranked"][0]["iteration_time_s"])')
run 0 "$TP" estimate --system eos --torchtitan-config "$SCRATCH/tt_dualpipev.py" --format json
has "$(json_str pipeline_schedule)" '"dualpipev"' "DualPipeV read back from torchtitan"
within "$(json_num iteration_time_s)" "$T1" 1e-9 "DualPipeV's estimate read back from torchtitan"
sed 's/"DualPipeV"/"LoopedBFS"/' "$SCRATCH/tt_dualpipev.py" > "$SCRATCH/tt_bfs.py"
run 65 "$TP" estimate --system eos --torchtitan-config "$SCRATCH/tt_bfs.py"
has "$ERR" "LoopedBFS" "torchtitan schedules not timed refused by name"

# --- error band (issue 31 item 3) ----------------------------------------------
# Every estimate carries the measured error of its stack and GPU family and
# names the nearest validated run; the search marks layouts within the band
# of the best as tied.
run 0 "$TP" estimate -m llama3-70b --system eos -g 128 -t 8 -p 2 -c 1 -b 1 -B 128 -s 8192
has "$OUT" "error band: +/-" "estimate: error band"
has "$(unwrapped)" "megatron-core runs on h100-sxm with each run's source left out" "estimate: band basis"
has "$OUT" "nearest validated run: " "estimate: nearest validated run"
run 0 "$TP" estimate -m llama3-70b --system eos -g 128 -t 8 -p 2 -c 1 -b 1 -B 128 -s 8192 --format json
printf '%s' "$OUT" | python3 -c 'import json,sys; b=json.load(sys.stdin)["error_band"]; sys.exit(not (b["basis"] == "stack and GPU family" and b["runs"] >= 5 and 0 < b["mape_pct"] <= b["worst_pct"] and b["nearest_run"]["gpu_family"] == "h100-sxm"))' && ok || bad "estimate JSON: error_band"
run 0 "$TP" estimate -m mixtral-8x7b --system eos -g 64 -s 4096 -B 256 --format json
printf '%s' "$OUT" | python3 -c 'import json,sys; b=json.load(sys.stdin)["error_band"]; sys.exit(not (b and b["nearest_run"]["id"]))' && ok || bad "MoE estimate: band from MoE runs"
run 0 "$TP" search -m llama3-70b --system eos --gpus 128 -s 8192 -B 1024 --top 5 --no-timing
has "$OUT" "#1's error band: +/-" "search: the best's band"
printf '%s' "$OUT" | grep -qE '^ *[2-5]= ' && ok || bad "search: tied rows marked ="
has "$OUT" "within that band of #1" "search: ties explained"
run 0 "$TP" search -m llama3-70b --system eos --gpus 128 -s 8192 -B 1024 --top 5 --no-timing --explain
has "$OUT" "tied with #1 within the error band" "--explain: what separates tied layouts"
run 0 "$TP" search -m llama3-70b --system eos --gpus 128 -s 8192 -B 1024 --top 5 --no-timing --format json
printf '%s' "$OUT" | python3 -c 'import json,sys; j=json.load(sys.stdin); r=j["ranked"]; sys.exit(not (j["error_band"]["mape_pct"] > 0 and r[0]["tied_with_best"] is False and any(x["tied_with_best"] for x in r[1:])))' && ok || bad "search JSON: error_band and tied_with_best"

# --- your own run fed back (issue 31 item 4) -----------------------------------
LJ=(-m llama3-8b --system eos -g 8 -t 2 -p 1 -c 1 -b 1 -B 128 -s 8192 -r selective --use-distributed-optimizer)
run 0 "$TP" estimate "${LJ[@]}" --log "$FIX/logs/megatron.log" --calibrate-to-log
has "$OUT" "a Megatron-LM / Megatron-Bridge log: 10 iteration lines, the median of the last 8" "Megatron log: warm-up dropped"
has "$OUT" "iteration         measured 18.58" "Megatron log: median iteration"
has "$OUT" "forward-backward  measured" "Megatron log: forward-backward timer"
has "$OUT" "max allocated     measured 54.99 GiB (the largest of 2 memory lines)" "Megatron log: busiest rank's max allocated"
has "$OUT" "calibrated to your run: an in-training kernel efficiency of" "calibration said"
run 0 "$TP" estimate "${LJ[@]}" --log "$FIX/logs/megatron.log" --calibrate-to-log --format json
printf '%s' "$OUT" | python3 -c 'import json,sys; m=json.load(sys.stdin)["measured"]; c=m["calibration"]; sys.exit(not (abs(c["iteration_time_s"] - m["iteration_time_s"]) < 1e-3 * m["iteration_time_s"] and c["kernel_efficiency"] < c["default_kernel_efficiency"]))' && ok || bad "calibration reproduces the run's time"
run 0 "$TP" estimate "${LJ[@]}" --format json
printf '%s' "$OUT" | python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)["measured"] is not None)' && ok || bad "measured null without --log"
run 0 "$TP" estimate "${LJ[@]}" --log "$FIX/logs/nemo2.log"
has "$OUT" "a NeMo 2 log: 6 iteration lines, the median of the last 4" "NeMo 2 log"
has "$OUT" "measured 18.9350 s" "NeMo 2 log: median"
run 0 "$TP" estimate "${LJ[@]}" --framework torchtitan --log "$FIX/logs/torchtitan.log"
has "$OUT" "tokens/s per GPU  measured 7086 (tps)" "torchtitan log: tps"
has "$OUT" "iteration         measured 18.4973 s" "torchtitan log: tps as an iteration time"
has "$OUT" "max reserved      measured 60.17 GiB" "torchtitan log: memory"
run 65 "$TP" estimate "${LJ[@]}" --log "$FIX/logs/empty.log"
has "$ERR" "empty.log: no iteration time found" "a log without iteration lines"
run 66 "$TP" estimate "${LJ[@]}" --log "$SCRATCH/no-such.log"
cat "$FIX/logs/megatron.log" "$FIX/logs/nemo2.log" > "$SCRATCH/mixed.log"
run 65 "$TP" estimate "${LJ[@]}" --log "$SCRATCH/mixed.log"
has "$ERR" "more than one framework" "a log of two frameworks"
run 64 "$TP" estimate "${LJ[@]}" --calibrate-to-log
has "$ERR" "--calibrate-to-log needs --log" "--calibrate-to-log alone"

cat > "$SCRATCH/job8b.sh" <<'JOB'
torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 --group-query-attention --num-query-groups 8 --seq-length 8192 --max-position-embeddings 8192 --vocab-size 128256 --swiglu --normalization RMSNorm --position-embedding-type rope --untie-embeddings-and-output-weights --disable-bias-linear --tensor-model-parallel-size 2 --pipeline-model-parallel-size 1 --micro-batch-size 1 --global-batch-size 128 --bf16 --use-distributed-optimizer --recompute-granularity selective --sequence-parallel
JOB
run 0 "$TP" search --system eos --near "$SCRATCH/job8b.sh" --log "$FIX/logs/megatron.log" --calibrate-to-log --top 3 --no-timing
has "$OUT" "n1g8_tp2pp1dp4_mbs1_sp_rsel_z1, 18.5814 s" "search --near --log: the job at the run's time"
has "$OUT" "every layout above was estimated at that calibrated kernel efficiency" "search calibrated, said"
run 64 "$TP" search -m llama3-8b --system eos --gpus 8 -s 8192 -B 128 --log "$FIX/logs/megatron.log"
has "$ERR" "search --log needs the job the log ran" "search --log without a job"

# --- fp8 dot-product attention (issue 29 item 2): measured ratios, refusals, launches, readers
run 64 "$TP" estimate -m llama3-8b --system dgx-b200 -g 8 -s 8192 -B 32 --fp8-dot-product-attention
has "$ERR" "expected --precision fp8, mxfp8 or nvfp4" "fp8 attention refused in 16 bits"
run 64 "$TP" estimate -m llama3-8b --system vista -g 8 -s 8192 -B 32 --precision fp8 --fp8-dot-product-attention
has "$ERR" "--fp8-dot-product-attention on vista: no measured fp8 / bf16 attention time for gh200" "fp8 attention refused without a measured table"
run 0 "$TP" estimate -m llama3-8b --system dgx-b200 -g 8 -s 8192 -B 32 -t 1 -p 1 -c 1 -b 1 --precision fp8 --format json
T16=$(json_num iteration_time_s)
run 0 "$TP" estimate -m llama3-8b --system dgx-b200 -g 8 -s 8192 -B 32 -t 1 -p 1 -c 1 -b 1 --precision fp8 --fp8-dot-product-attention --format json
printf '%s' "$OUT" | grep -q '"fp8_dot_product_attention":[[:space:]]*true' && ok || bad "fp8 attention in the layout's JSON"
T8=$(json_num iteration_time_s)
python3 -c "import sys; sys.exit(0 if $T8 < $T16 else 1)" && ok || bad "fp8 attention faster on B200 at 8k ($T8 vs $T16)"
run 0 "$TP" search -m llama3-8b --system dgx-b200 --gpus 8 -s 8192 -B 32 --precision fp8 --fp8-dot-product-attention --top 1 --launch all
has "$OUT" "NOT EXPRESSIBLE: fp8 dot-product attention" "Megatron-LM launch: no flag for fp8 attention"
has "$OUT" "# not expressible: fp8 dot-product attention (MixedPrecisionConfig" "Bridge launch: fp8 attention in a recipe"
run 0 "$TP" search -m llama3-8b --system dgx-b200 --gpus 8 -s 8192 -B 32 --precision fp8 --fp8-dot-product-attention --top 1 --format json --no-timing
printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ranked"][0]["launch"]["nemo"])' > "$SCRATCH/fpa.nemo"
echo 'model.fp8_dot_product_attention=true' >> "$SCRATCH/fpa.nemo"
run 0 "$TP" estimate --system dgx-b200 -g 8 --nemo-overrides "$SCRATCH/fpa.nemo" --format json
printf '%s' "$OUT" | grep -q '"fp8_dot_product_attention":[[:space:]]*true' && ok || bad "model.fp8_dot_product_attention read from Bridge overrides"

# whose fits and whose kernel-efficiency factor an estimate uses, named
run 0 "$TP" estimate -m llama3-8b --system gb300-nvl72 -g 8 -s 8192 -B 32 --precision fp8
has "$OUT" "(gb300's own for the operators it has" "GB300: its own attention samples beside B200's fits"
has "$OUT" "x b200's factor (with its fits)" "GB300: B200's factor, borrowed with its fits"
run 0 "$TP" estimate -m llama3-8b --system vista -g 8 -s 8192 -B 32
has "$OUT" "x h100-sxm's factor" "GH200: the H100's factor, its nearest generation's"

# --- per-command help, wrapped to 100 columns (issue 31 item 6) -----------------
run 0 "$TP" search --help
has "$OUT" "usage: trainplan search [OPTIONS]" "search --help: its usage"
has "$OUT" "--max-gpus" "search --help: a search option"
printf '%s' "$OUT" | grep -q -- "--train FILE" && bad "search --help lists op's --train" || ok
run 0 "$TP" hw show --help
has "$OUT" "usage: trainplan hw show [OPTIONS] NAME" "hw show --help"
printf '%s' "$OUT" | grep -q -- "--seq-length" && bad "hw show --help lists --seq-length" || ok
run 0 "$TP" --help
printf '%s' "$OUT" | awk 'length($0) > 100 { exit 1 }' && ok || bad "--help wider than 100 columns"
has "$OUT" "      --framework megatron-core|megatron-lm-2021|torchtitan|pytorch-fsdp|deepspeed-2021" "--framework's values whole"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
