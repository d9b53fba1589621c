#!/usr/bin/env bash
# sweep_spec_e2e.sh - issue 31's sweep items end to end: --format csv (a
# header, one row a scenario, the best layout in search --format csv's
# columns and cells, what a sweep cannot write refused by name), the
# launch forms a record carries (none unless the spec's "launch" or
# --launch, which overrides it, names them), the record's form (compact
# unless the spec's "record" or --record says full; diff, merge, --resume
# and CSV on either), a spec's relative paths (config.json
# models, hwdb directories) read from the spec's folder whatever the
# working directory, and every problem of a spec reported at once. Times
# are never pinned: structure and bytes are.
#
# usage: sweep_spec_e2e.sh TRAINPLAN SCRATCH SOURCE_DIR
set -u
TP=$1
S=$2
SRC=$3
. "$(dirname "$0")/sweep_lib.sh"
eq() { if [ "$1" = "$2" ]; then ok; else bad "$3: '$1' != '$2'"; fi; }
absent() { if [ -e "$1" ]; then bad "$2: $1 exists"; else ok; fi; }

cd "$S"
printf '%s\n' '{"models": ["gpt3-1.7b"], "systems": ["eos"], "gpus": [8, 16],' \
    '"seq_lengths": [2048], "global_batch_sizes": [256], "prices": [2.0], "options": {"top": 3}}' >wa.json
expect 0 "$TP" sweep wa.json -o wa.jsonl

# --- 1. --format csv ------------------------------------------------------
expect 0 "$TP" sweep wa.json --format csv -o wa.csv
eq "$(wc -l <wa.csv)" 3 "sweep csv: a header and 2 scenarios"
H=index,id,status,model,scenario_system,scenario_gpus,seq_length,global_batch_size,precision
H=$H,tokens,price_usd_per_gpu_hour,error,system,layout,gpus,tp,pp,vpp,cp,dp,mbs,sp,recompute
H=$H,zero,ep,etp,iteration_time_s,tokens_per_s,mfu,peak_memory_bytes,memory_margin_bytes
H=$H,memory_headroom_bytes,time_to_train_s,gpu_hours,cost_usd,bubble_s,exposed_comm_s
H=$H,error_band_pct,time_to_train_days,cost_per_iteration_usd,ties_with_best,miss_limit
H=$H,miss_limit_value,miss_excess,miss_layout
eq "$(head -n 1 wa.csv)" "$H" "sweep csv: the header"
eq "$(grep -c '^index,' wa.csv)" 1 "sweep csv: the header once"
has wa.csv ",ok,gpt3-1.7b,eos,8,2048,256,bf16,,2,,eos,n1g8_" "sweep csv: a scenario's row"
# The best layout's columns are search --format csv's, cell for cell:
# system to error_band_pct, fields 13-38 of the sweep's row and 3-28 of
# search's #1 (none of them quoted).
expect 0 "$TP" search -m gpt3-1.7b --system eos -g 8 -s 2048 -B 256 --price 2 --top 3 --format csv -o s8.csv
eq "$(head -n 1 wa.csv | cut -d, -f13-38)" "$(head -n 1 s8.csv | cut -d, -f3-28)" "sweep csv: search's column names"
eq "$(sed -n 2p wa.csv | cut -d, -f13-38)" "$(grep '^ranked,1,' s8.csv | cut -d, -f3-28)" "sweep csv: search's #1 cells"
# standard output: the same bytes
expect 0 "$TP" sweep wa.json --format csv
same out wa.csv "sweep csv to standard output"
if ls .trainplan-sweep-* >/dev/null 2>&1; then bad "sweep csv left its records behind"; else ok; fi
# an infeasible scenario: its status and nearest miss, no layout
printf '%s\n' '{"models": ["llama2-70b"], "systems": ["eos"], "gpus": [2],' \
    '"seq_lengths": [4096], "global_batch_sizes": [64], "options": {"top": 1}}' >inf.json
expect 0 "$TP" sweep inf.json --format csv -o inf.csv
has inf.csv ",infeasible,llama2-70b,eos,2,4096,64,bf16,,,,,,,," "sweep csv: an infeasible scenario"
has inf.csv ",memory," "sweep csv: the limit an infeasible scenario misses"
# what a sweep cannot write is refused by name, exit 64, nothing written
expect 64 "$TP" sweep wa.json --format csv -o wa.csv
has err "replaces a file only with --overwrite" "sweep csv: an existing file kept"
expect 0 "$TP" sweep wa.json --format csv -o wa.csv --overwrite
expect 0 "$TP" merge wa.jsonl --format csv -o wm.csv
same wa.csv wm.csv "merge --format csv: the rows of sweep --format csv"
expect 0 "$TP" sweep wa.json --shard 0/2 -o sh0.jsonl
expect 0 "$TP" sweep wa.json --shard 1/2 -o sh1.jsonl
expect 0 "$TP" merge sh1.jsonl sh0.jsonl --format csv -o wsh.csv
same wa.csv wsh.csv "merge --format csv of two shards"
for f in table md xml; do
    expect 64 "$TP" sweep wa.json --format $f -o wt.out
    has err "sweep --format: expected jsonl (its records" "sweep --format $f refused"
    has err "or csv (one row a scenario" "sweep --format $f: the valid values"
    has err "found $([ $f = xml ] && echo "'xml'" || echo $f)" "sweep --format $f: the value"
    absent wt.out "a refused sweep --format $f"
done
expect 64 "$TP" --format xml merge wa.jsonl
has err "merge --format: expected jsonl" "merge --format xml refused"
expect 64 "$TP" merge wa.jsonl --format table
has err "merge --format: expected jsonl" "merge --format table refused"
expect 64 "$TP" sweep wa.json --format csv --resume -o wr.csv
has err "cannot resume (--resume)" "sweep csv --resume refused"
has err "merge --format csv" "sweep csv --resume: the way"
expect 64 "$TP" sweep wa.json --format csv --shard 0/2 -o wr.csv
has err "cannot be one shard (--shard)" "sweep csv --shard refused"
absent wr.csv "a refused sweep --format csv"

# --- 2. paths from the spec's folder -----------------------------------------
mkdir -p night/cfg night/hw/systems hw2/systems
cp "$SRC/examples/qwen3-8b.config.json" night/cfg/q.json
cp "$SRC/examples/hwdb/systems/gcp-a3-mega.json" night/hw/systems/
printf '%s\n' '{"models": ["cfg/q.json", "llama3-8b"], "systems": ["gcp-a3-mega"],' \
    '"gpus": [16], "seq_lengths": [2048], "global_batch_sizes": [64],' \
    '"hwdb": ["hw"], "options": {"top": 1}}' >night/spec.json
(cd / && "$TP" sweep --launch none "$S/night/spec.json" -o "$S/night/out.jsonl") >out 2>err \
    && ok || bad "a spec's relative model and hwdb paths from another directory: $(cat err)"
(cd night && "$TP" sweep --launch none spec.json -o out2.jsonl) >out 2>err \
    && ok || bad "a spec's relative paths from its own folder: $(cat err)"
same night/out.jsonl night/out2.jsonl "a spec's records whatever the working directory"
has night/out.jsonl '"model":"cfg/q.json"' "the record keeps the spec's model text"
has night/out.jsonl '"system":"gcp-a3-mega","file":"gcp-a3-mega.json"' "the spec's hwdb system read"
# absolute paths as they are
sed "s|\"cfg/q.json\"|\"$S/night/cfg/q.json\"|; s|\"hw\"|\"$S/night/hw\"|" night/spec.json >abs.json
(cd / && "$TP" sweep --launch none "$S/abs.json" -o "$S/abs.jsonl") >out 2>err \
    && ok || bad "a spec's absolute paths: $(cat err)"
expect 0 "$TP" diff night/out.jsonl abs.jsonl
# without its hwdb key the spec's system is unknown: the key is read
grep -v '"hwdb"' night/spec.json | sed 's/"global_batch_sizes": \[64\],/"global_batch_sizes": [64], "options": {"top": 1}}/' >night/nohw.json
expect 65 "$TP" sweep night/nohw.json -o night/nohw.jsonl
has err "unknown system 'gcp-a3-mega'" "a spec without its hwdb"
# --hwdb on the command line still overrides what the spec names
printf '%s\n' '{"schema": "trainplan-system/1", "name": "gcp-a3-mega",' \
    '"sources": {"quote": "sweep_spec_e2e.sh"},' \
    '"price_usd_per_gpu_hour": {"value": 9.25, "source": "quote"}}' >hw2/systems/gcp-a3-mega.json
expect 0 "$TP" --hwdb hw2 sweep --launch none night/spec.json -o hw2.jsonl
has hw2.jsonl '"price_usd_per_gpu_hour":9.25' "--hwdb over the spec's hwdb"
hasnt night/out.jsonl '"price_usd_per_gpu_hour":9.25' "the spec's hwdb alone"

# --- 3. every problem of a spec at once ----------------------------------------
mkdir -p night/badhw/systems
printf '%s\n' '{"schema": "trainplan-system/1", "name": "no-such-system"}' >night/badhw/systems/x.json
printf '%s\n' '{"models": ["cfg/q.json", "llama9-1b"], "systems": ["eos", "nosuch"],' \
    '"gpus": [8, "x"], "seq_lengths": [2048, -1], "global_batch_sizes": [64],' \
    '"precisions": ["bf16", "fp7"], "tokens": [0], "hwdb": ["nodir", "badhw"],' \
    '"speed": 1, "options": {"top": 0, "top": 2, "nope": true}}' >night/bad.json
expect 65 "$TP" sweep night/bad.json -o night/bad.jsonl
for p in '$.models[1]: unknown model' '$.systems[1]: unknown system' \
    '$.gpus[1]: expected a GPU count' '$.seq_lengths[1]: expected an integer in [1, 16777216], found -1' \
    '$.precisions[1]: expected bf16, fp16, fp8, mxfp8 or nvfp4, found "fp7"' \
    '$.tokens[0]: expected a number in (0, 1e+18] or null, found 0' \
    '$.hwdb[0]: ' 'nodir: no such directory' '$.hwdb: ' 'badhw/systems/x.json' \
    '$.speed: unknown key' '$.options: key "top" appears twice' \
    '$.options.top: expected an integer in [1, 1000]' '$.options.nope: unknown option' \
    '12 problems in the sweep spec'; do
    has err "$p" "every spec problem at once"
done
absent night/bad.jsonl "a bad spec"
# entries and what search refuses of the good ones' scenarios, at once
printf '%s\n' '{"models": ["gpt3-1.7b", "llama9-1b"], "systems": ["selene"], "gpus": [8],' \
    '"seq_lengths": [2048], "global_batch_sizes": [64], "precisions": ["fp8"]}' >night/bad2.json
expect 65 "$TP" sweep night/bad2.json
has err '$.models[1]: unknown model' "an entry and a scenario at once: the entry"
has err 'a scenario (gpt3-1.7b on selene, gpus 8): ' "an entry and a scenario at once: the scenario"
has err "2 problems in the sweep spec" "an entry and a scenario at once: the count"
# a list wrong as a whole: no scenario to set up, and said so
printf '%s\n' '{"models": ["gpt3-1.7b"], "systems": ["eos"], "gpus": [8],' \
    '"seq_lengths": [2048], "global_batch_sizes": 64, "options": {"top": 0}}' >night/bad3.json
expect 65 "$TP" sweep night/bad3.json
has err '$.global_batch_sizes: expected a list' "a list wrong as a whole"
has err '$.options.top:' "a list wrong as a whole: the options too"
has err "run again to see the rest" "a list wrong as a whole: the scenarios not checked, said"
has err "2 problems in the sweep spec" "a list wrong as a whole: the count"

# --- 4. the launches: the spec's "launch", --launch over it ------------------
# without either a record carries none (issue 32: a fifth of the bytes)
hasnt wa.jsonl '"launch"' "sweep: no launch by default"
hasnt wa.jsonl '"launch_args"' "sweep: no launch_args by default"
expect 0 "$TP" sweep wa.json --launch all -o wall.jsonl
sed 's/^{/{"launch": "all", /' wa.json >wla.json
expect 0 "$TP" sweep wla.json -o wla.jsonl
same wall.jsonl wla.jsonl 'the spec'"'"'s "launch": "all" is --launch all'
for l in none megatron nemo torchtitan; do
    expect 0 "$TP" sweep wla.json --launch $l -o w$l.jsonl
done
all=$(wc -c <wall.jsonl)
for l in none megatron nemo torchtitan; do
    n=$(wc -c <w$l.jsonl)
    if [ "$n" -lt "$all" ]; then ok; else bad "sweep --launch $l: $n bytes, every form $all"; fi
done
same wa.jsonl wnone.jsonl "sweep --launch none over the spec's all: the default"
n=$(wc -c <wnone.jsonl)
if [ "$n" -lt $((all / 3)) ] && [ "$n" -lt 40000 ]; then ok; else bad "sweep --launch none: $n bytes for 2 records (every form: $all)"; fi
hasnt wnone.jsonl '"launch"' "sweep --launch none: no launch"
hasnt wnone.jsonl '"launch_args"' "sweep --launch none: no launch_args"
has wmegatron.jsonl '"megatron_sbatch"' "sweep --launch megatron: Megatron-LM's script"
hasnt wmegatron.jsonl '"torchtitan_config"' "sweep --launch megatron: no torchtitan config"
hasnt wmegatron.jsonl '"nemo"' "sweep --launch megatron: no NeMo overrides"
has wnemo.jsonl '"nemo"' "sweep --launch nemo: the overrides"
hasnt wnemo.jsonl '"megatron_sbatch"' "sweep --launch nemo: no Megatron-LM script"
has wtorchtitan.jsonl '"torchtitan_config"' "sweep --launch torchtitan: its config"
hasnt wtorchtitan.jsonl '"megatron"' "sweep --launch torchtitan: no Megatron-LM launch"
sed 's/^{/{"launch": "nemo", /' wa.json >wln.json
expect 0 "$TP" sweep wln.json -o wln.jsonl
same wnemo.jsonl wln.jsonl 'the spec'"'"'s "launch": "nemo" is --launch nemo'
expect 0 "$TP" diff wall.jsonl wnone.jsonl
has out "0 changed" "the launch forms change no outcome"
expect 64 "$TP" sweep wa.json --launch slurm
has err "--launch: expected none, megatron, nemo, torchtitan or all, found 'slurm'" "sweep --launch slurm refused"
sed 's/^{/{"launch": "slurm", /' wa.json >wls.json
expect 65 "$TP" sweep wls.json
has err '$.launch: expected "none" (the default), "megatron", "nemo", "torchtitan" or "all", found "slurm"' \
    'the spec'"'"'s "launch": "slurm" refused'
# the CSV has no launches: the same rows with any --launch
expect 0 "$TP" merge wall.jsonl --format csv -o wn.csv
same wa.csv wn.csv "sweep csv: the same rows with launches"
expect 0 "$TP" sweep wla.json --format csv -o wlc.csv
same wa.csv wlc.csv "sweep csv: the same rows whatever the spec's launch"

# --- 5. the record's form: the spec's "record", --record over it -----------
# compact by default (issue 32), and the record says so; full on request
eq "$(grep -c '"version":"[^"]*","record":"compact","inputs":' wa.jsonl)" 2 "sweep: compact records by default, named"
hasnt wa.jsonl '"pipeline_split"' "a compact record: no pipeline_split"
sed 's/^{/{"record": "full", /' wa.json >wf.json
expect 0 "$TP" sweep wf.json -o wf.jsonl
eq "$(grep -c '"version":"[^"]*","record":"full","inputs":' wf.jsonl)" 2 "the spec's \"record\": \"full\": full records, named"
has wf.jsonl '"pipeline_split"' "a full record: pipeline_split"
if [ "$(wc -c <wf.jsonl)" -gt $(($(wc -c <wa.jsonl) * 2)) ]; then ok; else bad "full records $(wc -c <wf.jsonl) bytes, compact $(wc -c <wa.jsonl)"; fi
expect 0 "$TP" sweep wa.json --record full -o wrf.jsonl
same wf.jsonl wrf.jsonl 'sweep --record full is the spec'"'"'s "record": "full"'
expect 0 "$TP" sweep wf.json --record compact -o wrc.jsonl
same wa.jsonl wrc.jsonl "sweep --record compact over the spec's full: the default"
expect 64 "$TP" sweep wa.json --record short
has err "--record: expected compact or full, found 'short'" "sweep --record short refused"
sed 's/^{/{"record": "short", /' wa.json >wrs.json
expect 65 "$TP" sweep wrs.json
has err '$.record: expected "compact" (the default) or "full", found "short"' \
    'the spec'"'"'s "record": "short" refused'
# the same outcomes: diff sees no change between the forms
expect 0 "$TP" diff wa.jsonl wf.jsonl
has out "0 changed" "compact against full records: nothing changed"
# merge, CSV and --resume on full records as on compact ones
expect 0 "$TP" sweep wf.json --shard 1/2 -o wf1.jsonl
expect 0 "$TP" sweep wf.json --shard 0/2 -o wf0.jsonl
expect 0 "$TP" merge wf1.jsonl wf0.jsonl -o wfm.jsonl
same wf.jsonl wfm.jsonl "merge of full shards"
expect 0 "$TP" merge wf.jsonl --format csv -o wf.csv
same wa.csv wf.csv "the CSV of full records is that of compact ones"
expect 0 "$TP" sweep wf.json --format csv -o wfc.csv
same wa.csv wfc.csv "sweep csv: the same rows whatever the spec's record"
head -n 1 wf.jsonl >wfr.jsonl
sed -n 2p wf.jsonl | head -c 300 >>wfr.jsonl
expect 0 "$TP" sweep wf.json --resume -o wfr.jsonl
same wf.jsonl wfr.jsonl "--resume of full records, a torn one redone"
# --resume keeps a record of either form (docs/output-formats.md): a form
# changed between two runs of one file leaves both, which diff reads alike
head -n 1 wf.jsonl >wmix.jsonl
expect 0 "$TP" sweep wa.json --resume -o wmix.jsonl
eq "$(head -n 1 wmix.jsonl)" "$(head -n 1 wf.jsonl)" "--resume keeps a full record"
eq "$(sed -n 2p wmix.jsonl)" "$(sed -n 2p wa.jsonl)" "--resume appends the spec's form"
expect 0 "$TP" diff wa.jsonl wmix.jsonl
has out "0 changed" "a file of both forms: nothing changed"

echo "sweep_spec_e2e: $pass passed, $fail failed" >&2
[ "$fail" -eq 0 ]
