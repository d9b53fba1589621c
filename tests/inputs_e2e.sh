#!/usr/bin/env bash
# inputs_e2e.sh - the reproducers of issue 17's input audit, each with the
# exit code and message it must give: a crash on a fractional shape, user
# text cut by a fixed-size buffer, duplicate JSON keys, a multi-node system
# with no network, a table that import-nccl-tests writes and its own loader
# refuses, sample files whose columns or times cannot be right, options
# that contradict each other, and numbers written loosely.
#
# usage: inputs_e2e.sh TRAINPLAN FIXTURES HWDB_SOURCE_DIR SCRATCH
set -u
TP=$1
FIX=$2
HWDB=$3
S=$4
rm -rf "$S"
mkdir -p "$S"
unset TRAINPLAN_HWDB
SCRATCH=$S
. "$(dirname "$0")/e2e_lib.sh"

EST=(estimate -m llama3-8b --system eos -g 8 -s 2048 -B 64)
SRCH=(search -m llama3-8b --system eos --max-gpus 16 -s 2048 -B 64 --no-timing)

# --- a fractional shape in a measured CSV divided by zero (SIGFPE) ---------
mkdir -p "$S/hw/gpus" "$S/hw/measured"
cp "$HWDB/gpus/a100-80gb.json" "$S/hw/gpus/"
cp -r "$HWDB/measured/a100-80gb" "$S/hw/measured/"
CSV="$S/hw/measured/a100-80gb/NVIDIAA100-SXM4-80GB_linear1_fp16.csv"
sed -i '2s/^1.0,/0.5,/' "$CSV"
run 65 "$TP" hw check "$S/hw/gpus/a100-80gb.json"
has "$OUT" "linear1_fp16.csv:2: mp = 0.5, expected a whole number" "hw check: fractional mp"
run 65 "$TP" --hwdb "$S/hw" estimate -m gpt3-1.7b --system selene -g 8 -s 2048 -B 64
has "$ERR" "mp = 0.5, expected a whole number in [1, 1e12)" "estimate: fractional mp"
run 64 "$TP" op show --gpu h100 --op linear1 --shape mp=0.5,b=2,l=1024,dim=4096
has "$ERR" "a whole number" "op show: mp=0.5"
run 64 "$TP" op show --gpu h100 --op linear1 --shape ''
has "$ERR" "--shape: expected K=V pairs" "op show: empty shape"
run 64 "$TP" op show --gpu h100 --op linear1 --shape b=2,l=1024
has "$ERR" "no dim; --op linear1 needs b, l, dim" "op show: a needed column missing"
run 64 "$TP" op show --gpu h100 --op linear1 --shape b=2,b=4,l=1024,dim=4096
has "$ERR" "b given twice" "op show: a column twice"

# --- sample files whose columns or times do not fit --op ---------------------
H100="$HWDB/measured/h100-sxm/NVIDIAH10080GBHBM3_gelu_fp16.csv"
run 65 "$TP" op predict --gpu h100 --op flash_atten --train "$H100" --shapes "$H100"
has "$ERR" "no column h: operator flash_atten needs" "op predict: columns of another op"
if printf '%s' "$OUT" | grep -q nan; then bad "op predict printed nan"; else ok; fi
{ head -n 1 "$H100"; sed -n '2p' "$H100" | awk -F, -v OFS=, '{ $(NF-1) = -$(NF-1); print }'; sed -n '3,$p' "$H100"; } >"$S/neg.csv"
run 65 "$TP" op predict --gpu h100 --op gelu --train "$S/neg.csv" --shapes "$H100"
has "$ERR" "neg.csv:2: F_dur(us) = -" "op predict: a negative time is an error"

# --- user text longer than any buffer is never cut --------------------------
LONG=$(printf '8,%.0s' $(seq 1 300))
run 64 "$TP" "${SRCH[@]}" --gpus "${LONG}x"
has "$ERR" "--gpus: expected an integer" "--gpus: the item after 600 characters is read"
run 0 "$TP" "${SRCH[@]}" --gpus "${LONG}16" --format csv
if printf '%s\n' "$OUT" | awk -F, 'NR > 1 && $5 == 16 { found = 1 } END { exit !found }'; then
    ok
else
    bad "--gpus: 16 at the end of a 600-character list was not searched"
fi
run 64 "$TP" "${SRCH[@]}" --gpus "8,,16"
has "$ERR" "an empty item" "--gpus: an empty item"
run 64 "$TP" "${SRCH[@]}" --fix "$(printf 'tp=1,%.0s' $(seq 1 200))tq=2"
has "$ERR" "unknown field 'tq'" "--fix: the item after 1000 characters is read"

printf '{"models": ["gpt3-1.7b"], "systems": ["%snosuch"], "gpus": [8], "seq_lengths": [2048], "global_batch_sizes": [64]}\n' \
    "$(printf 'eos,%.0s' $(seq 1 300))" >"$S/long-spec.json"
run 65 "$TP" sweep "$S/long-spec.json" -o "$S/long.jsonl"
has "$ERR" "unknown system 'nosuch'" "sweep spec: the system after 1,200 characters is checked"

printf '{"models": ["gpt3-1.7b"], "systems": ["eos"], "gpus": ["%s16"], "seq_lengths": [2048], "global_batch_sizes": [64], "options": {"top": 1}}\n' \
    "$(printf '8,%.0s' $(seq 1 300))" >"$S/gpus-spec.json"
run 0 "$TP" sweep "$S/gpus-spec.json" -o "$S/gpus.jsonl"
if grep -q '"max_gpus":16' "$S/gpus.jsonl"; then ok; else bad "sweep spec: 16 after 600 characters of gpus was not searched"; fi

# --- duplicate JSON keys: JSON readers disagree on which wins ----------------
sed 's/"num_hidden_layers": 32,/"num_hidden_layers": 32, "num_hidden_layers": 80,/' \
    "$FIX/hf/llama3-8b.json" >"$S/dup-config.json"
run 65 "$TP" model show "$S/dup-config.json"
has "$ERR" 'key "num_hidden_layers" appears twice' "config.json: a key twice"
mkdir -p "$S/duphw/gpus"
sed 's/"name": "testgpu",/"name": "testgpu", "name": "tg2",/' "$FIX/hw/good/gpus/testgpu.json" >"$S/duphw/gpus/testgpu.json"
if grep -q '"tg2"' "$S/duphw/gpus/testgpu.json"; then ok; else bad "fixture: testgpu.json has no name line"; fi
run 65 "$TP" hw check "$S/duphw/gpus/testgpu.json"
has "$OUT$ERR" 'key "name" appears twice' "hwdb file: a key twice"
cat >"$S/dup-spec.json" <<'J'
{"models": ["gpt3-1.7b"], "systems": ["eos"], "gpus": [8],
 "seq_lengths": [2048], "global_batch_sizes": [64], "gpus": [16]}
J
run 65 "$TP" sweep "$S/dup-spec.json" -o "$S/dup.jsonl"
has "$ERR" 'key "gpus" appears twice' "sweep spec: a key twice"
if [ -e "$S/dup.jsonl" ]; then bad "a spec with a key twice wrote its output"; else ok; fi

# --- a system of several nodes with no network -------------------------------
mkdir -p "$S/nonet/gpus" "$S/nonet/systems"
cp "$FIX/hw/good/gpus/testgpu.json" "$S/nonet/gpus/"
sed 's/"nics_per_node": {"value": 8/"nics_per_node": {"value": 0/' \
    "$FIX/hw/good/systems/testsys.json" >"$S/nonet/systems/testsys.json"
run 65 "$TP" --hwdb "$S/nonet" hw check "$S/nonet/systems/testsys.json"
has "$OUT" "nics_per_node: 0 NICs" "no network: hw check"
has "$OUT" "a system of several nodes needs a network" "no network: what to do"

# --- import-nccl-tests never writes a table its loader refuses ---------------
sed 's/^\( *8 *2 *float *sum *-1 *\)24.00\( *0.00 *0.00 *0 *\)24.36/\11e-9\21e-9/' \
    "$FIX/nccl/all_reduce_perf_1x8.log" >"$S/tiny.log"
if grep -q '1e-9' "$S/tiny.log"; then ok; else bad "fixture: no 1e-9 written into the log"; fi
run 65 "$TP" hw import-nccl-tests --system eos -o "$S/imp" "$S/tiny.log"
has "$ERR" "tiny.log:18: time 1e-09 us: expected [0.001, 1e+12] us" "import: a time below a nanosecond"
if [ -e "$S/imp" ]; then bad "import of a bad log wrote $S/imp"; else ok; fi
# and a table that was written by hand is a problem for hw check
run 0 "$TP" hw import-nccl-tests --system eos -o "$S/imp2" "$FIX/nccl/all_reduce_perf_1x8.log"
# the imported table (the built-in ones the system lists are copied beside it)
T2="$S/imp2/measured/eos/nccl-tests_allreduce_1x8.csv"
sed -i 's/^\(allreduce,fp32,1,8,8,\).*/\11e-09/' "$T2"
run 65 "$TP" --hwdb "$S/imp2" hw check "$S"/imp2/systems/*.json
has "$OUT" "(time_us): expected a number in [0.001, 1e+12], found '1e-09'" "hw check reads the tables"

# --- options that contradict each other --------------------------------------
run 64 "$TP" "${EST[@]}" --zero-stage 3 --no-use-distributed-optimizer
has "$ERR" "--zero-stage 3 and --no-use-distributed-optimizer disagree" "ZeRO 3 without a distributed optimizer"
run 0 "$TP" "${EST[@]}" --zero-stage 3 --use-distributed-optimizer --format json
if printf '%s' "$OUT" | grep -Eq '"zero_stage":[[:space:]]*3,'; then ok; else bad "ZeRO 3 with a distributed optimizer"; fi
run 64 "$TP" "${EST[@]}" --use-distributed-optimizer --no-use-distributed-optimizer
has "$ERR" "give one" "both distributed-optimizer flags"
run 64 "$TP" "${SRCH[@]}" --fix tp=8 -t 2
has "$ERR" "--fix tp=8: a layout option already asks for tp=2" "--fix against -t"
run 1 "$TP" search -m gpt3-175b --system eos --gpus 48 -s 2048 -B 48 --no-timing --fix tp=3
has "$OUT" "tp_beyond_node" "--fix tp=3 on 8-GPU nodes: rejected, counted"
run 1 "$TP" estimate -m gpt3-175b --system eos -g 48 -s 2048 -B 48 -t 3 -p 16
has "$OUT" "TP 3 does not divide the 8 GPUs of a node" "-t 3 on 8-GPU nodes"

# --- numbers written loosely -------------------------------------------------
for v in +8 ' 8' 0x10 8.0 1e1 '8 '; do
    run 64 "$TP" estimate -m llama3-8b --system eos -g "$v" -s 2048 -B 64
    has "$ERR" "expected an integer" "'$v' is not an integer"
done
run 64 "$TP" "${EST[@]}" --tokens 0.5
has "$ERR" "--tokens: expected a whole number of tokens" "--tokens 0.5"
run 64 "$TP" "${EST[@]}" --tokens 1e19
run 64 "$TP" "${EST[@]}" --tokens nan
run 64 "$TP" "${EST[@]}" --tokens inf
run 64 "$TP" "${EST[@]}" --hidden-dropout 0x1p-2
run 64 "$TP" "${SRCH[@]}" --deadline 1e400s
run 64 "$TP" coll show --system eos --op allreduce --bytes 1e3x --group 1x8
run 0 "$TP" coll show --system eos --op allreduce --bytes 1e6,2MiB,0.5GB --group 1x8
run 64 "$TP" coll show --system eos --op allreduce --bytes 1MiB --group 1x+8
run 64 "$TP" sweep --shard 1/+4 "$S/dup-spec.json" -o "$S/x.jsonl"

# --- a record that claims more scenarios than memory holds --------------------
printf '{"index":0,"count":900000000000000,"id":"c0e685f49c3b9cc9","status":"ok"}\n' >"$S/huge.jsonl"
run 65 "$TP" diff "$S/huge.jsonl" "$S/huge.jsonl"
has "$ERR" "not a complete sweep: 1 records of a spec of 900000000000000 scenarios" "diff: a huge count is read, not allocated"
printf '{"index":0,"count":1e999,"id":"c0e685f49c3b9cc9","status":"ok"}\n' >"$S/inf.jsonl"
run 65 "$TP" diff "$S/inf.jsonl" "$S/inf.jsonl"
has "$ERR" "not a sweep record" "diff: an infinite count is not a record"

# --- what a config.json says that trainplan does not model (issue 19) ----
# Gemma 3's windows, QK norms and four norms a layer are modelled now.
run 0 "$TP" model show --strict "$FIX/hf/gemma-3-1b.json"
has "$OUT" "geglu" "gemma 3: GeGLU"
has "$OUT" "sliding 512, 1 layer in 6 global" "gemma 3: its windows"
has "$OUT" "999885952" "gemma 3: HF's count"
run 0 "$TP" model show "$FIX/hf/synthetic-unmodelled.json"
has "$ERR" "warning: $FIX/hf/synthetic-unmodelled.json: \$.mlp_only_layers: dense layers listed by index ([0])" "warning: mlp_only_layers"
has "$ERR" "\$.use_sliding_window: a sliding window (4096) on the layers from max_window_layers on" "warning: qwen window"
run 65 "$TP" model show --strict "$FIX/hf/synthetic-unmodelled.json"
has "$ERR" "--strict: 2 things trainplan does not model" "strict: model show"
run 65 "$TP" estimate -m "$FIX/hf/synthetic-unmodelled.json" --system eos -g 8 -s 2048 -B 64 --strict
has "$ERR" "--strict: 2 things trainplan does not model" "strict: estimate"
run 0 "$TP" model show --strict "$FIX/hf/llama3-8b.json"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
