#!/usr/bin/env bash
# megatron_read_e2e.sh - reading a Megatron-LM job back (estimate
# --megatron-args, search --near): a user's own command line, Megatron-LM's
# defaults where a flag is absent, and bad input with its exit code and
# message (issue 18).
#
# usage: megatron_read_e2e.sh TRAINPLAN SCRATCH
set -u
TP=$1
S=$2
rm -rf "$S"
mkdir -p "$S"
unset TRAINPLAN_HWDB
SCRATCH=$S
. "$(dirname "$0")/../e2e_lib.sh"

# A user's own command line: torchrun's literal counts, an = form, no
# dropout flags (Megatron-LM's 0.1), no --overlap-grad-reduce (off).
cat >"$S/own.sh" <<'EOF'
# my job
torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py \
    --num-layers 32 --hidden-size 4096 --num-attention-heads 32 \
    --group-query-attention --num-query-groups 8 --ffn-hidden-size 14336 \
    --swiglu --normalization RMSNorm --position-embedding-type rope \
    --untie-embeddings-and-output-weights --disable-bias-linear \
    --seq-length 8192 --max-position-embeddings=8192 --vocab-size 128256 \
    --tensor-model-parallel-size 2 --sequence-parallel \
    --micro-batch-size 1 --global-batch-size 128 --bf16 \
    --use-distributed-optimizer --recompute-activations \
    --train-iters 1000 --lr 3e-4 --data-path "$DATA" # trailing comment --fp16
EOF
run 0 "$TP" estimate --system eos --megatron-args "$S/own.sh" --format json
has "$OUT" '"gpus":	16' "own: 2 nodes x 8 from torchrun"
has "$OUT" '"attention_dropout":	0.1' "own: Megatron-LM's default dropout"
has "$OUT" '"overlap_grad_reduce":	false' "own: no --overlap-grad-reduce"
has "$OUT" '"recompute_granularity":	"selective"' "own: --recompute-activations"
has "$OUT" '"precision":	"bf16"' "own: a comment's --fp16 not read"
has "$OUT" '"tensor_model_parallel_size":	2' "own: TP"

# The caching allocator's setting: Megatron-LM's default (unset: off), a
# script's export (the last one wins; Cisco's MLPerf llama31_8b config
# replaces config_common.sh's expandable_segments:True with
# max_split_size_mb:128), --[no-]expandable-segments over both.
has "$OUT" '"expandable_segments":	false' "allocator: unset, off"
{ echo 'export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True'; cat "$S/own.sh"; } >"$S/exp.sh"
run 0 "$TP" estimate --system eos --megatron-args "$S/exp.sh" --format json
has "$OUT" '"expandable_segments":	true' "allocator: exported"
{ echo 'export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True'
  echo 'export PYTORCH_CUDA_ALLOC_CONF="max_split_size_mb:128"'; cat "$S/own.sh"; } >"$S/noexp.sh"
run 0 "$TP" estimate --system eos --megatron-args "$S/noexp.sh" --format json
has "$OUT" '"expandable_segments":	false' "allocator: the last export"
run 0 "$TP" estimate --system eos --megatron-args "$S/noexp.sh" --expandable-segments --format json
has "$OUT" '"expandable_segments":	true' "allocator: the option over the file"
sed 's/^torchrun/PYTORCH_ALLOC_CONF=expandable_segments:True torchrun/' "$S/own.sh" >"$S/inline.sh"
run 0 "$TP" estimate --system eos --megatron-args "$S/inline.sh" --format json
has "$OUT" '"expandable_segments":	true' "allocator: before the command"
run 0 "$TP" estimate --system eos --megatron-args - <"$S/own.sh"
has "$OUT" "<stdin> on eos: 16 x h100-sxm" "own: from standard input"
# what the file does not say, the command line may (-g), not the layout
sed 's/--nnodes 2 --nproc_per_node 8 //' "$S/own.sh" >"$S/nogpus.sh"
run 64 "$TP" estimate --system eos --megatron-args "$S/nogpus.sh"
has "$ERR" "estimate needs --gpus or --nodes" "no GPU count"
run 0 "$TP" estimate --system eos --megatron-args "$S/nogpus.sh" -g 32
run 64 "$TP" estimate --system eos --megatron-args "$S/own.sh" -t 4
has "$ERR" "--megatron-args and --tensor-model-parallel-size: the job file gives" "a layout option beside the file"
run 64 "$TP" estimate --system eos --megatron-args "$S/own.sh" --torchtitan-config "$S/own.sh"
has "$ERR" "give one job file" "two job files"
run 66 "$TP" estimate --system eos --megatron-args "$S/missing.sh"

# search --near: the same job over every layout
run 0 "$TP" search --system eos --near "$S/own.sh" --no-timing --tokens 1e9
has "$OUT" "your job ($S/own.sh): n2g8_tp2pp1dp8_mbs1_sp_rsel_z1" "near: the job"
has "$OUT" "what changes (Megatron-LM flags):" "near: the flags"
has "$OUT" "on eos" "near: the system"
run 0 "$TP" search --system eos --near "$S/own.sh" --no-timing --format json
has "$OUT" '"near":' "near: JSON"
has "$OUT" '"megatron_changes":' "near: JSON changes"
run 64 "$TP" search --system eos --near "$S/own.sh" -m llama3-8b
has "$ERR" "--near and --model" "near: --model beside it"
run 64 "$TP" search --system eos,selene --near "$S/own.sh"
has "$ERR" "one --system" "near: several systems"
run 0 "$TP" search --system eos --near "$S/nogpus.sh" --gpus 32 --no-timing

# other frameworks' jobs in search: the same comparison, in layout terms
run 0 "$TP" search -m llama3-8b --system eos --gpus 64 -s 8192 -B 128 --framework torchtitan --no-timing --format json -o "$S/tt.json"
python3 -c "import json,sys; open(sys.argv[2], 'w').write(json.load(open(sys.argv[1]))['ranked'][3]['launch']['torchtitan_config'])" "$S/tt.json" "$S/tt.py"
run 0 "$TP" search --system eos --torchtitan-config "$S/tt.py" --no-timing
has "$OUT" "your job ($S/tt.py): n8g8_tp1pp1dp16cp4_mbs4_z3" "torchtitan job in search"
has "$OUT" "what changes (layout):" "torchtitan job: layout changes"
run 0 "$TP" search -m llama3-8b --system eos --gpus 64 -s 8192 -B 128 --no-timing --format json -o "$S/nm.json"
python3 -c "import json,sys; open(sys.argv[2], 'w').write(json.load(open(sys.argv[1]))['ranked'][2]['launch']['nemo'])" "$S/nm.json" "$S/nm.txt"
run 0 "$TP" search --system eos --nemo-overrides "$S/nm.txt" --no-timing
has "$OUT" "your job ($S/nm.txt):" "NeMo job in search"

# bad input: file, line, flag, value and what was expected
bad_job() { # bad_job SED_EXPR NEEDLE DESCRIPTION
    sed "$1" "$S/own.sh" >"$S/bad.sh"
    run 65 "$TP" estimate --system eos --megatron-args "$S/bad.sh" && \
        has "$ERR" "$2" "$3"
}
bad_job 's/--num-layers 32 //' "no --num-layers" "no layers"
# NVFP4 (--fp4-format e2m1 --fp4-recipe nvfp4) reads back; what
# Megatron-LM refuses or trainplan does not model is refused by name
run 0 "$TP" estimate --system dgx-b200 --format json --megatron-args - \
    < <(sed 's/--bf16/--bf16 --fp4-format e2m1 --fp4-recipe nvfp4/' "$S/own.sh")
has "$OUT" '"precision":	"fp4"' "NVFP4 job: read as fp4 (NVFP4)"
bad_job 's/--bf16/--bf16 --fp4-format e2m1 --fp8-format e4m3/' "--fp4-format beside --fp8-format" "fp4 and fp8 together"
bad_job 's/--bf16/--bf16 --fp4-format e2m1 --fp4-recipe custom/' "--fp4-recipe: expected nvfp4" "a custom fp4 recipe"
bad_job 's/--bf16/--bf16 --fp4-format e2m2/' "--fp4-format: expected e2m1" "an fp4 format that is not"
bad_job 's/--bf16/--bf16 --fp4-format e2m1 --fp4-param-gather/' "--fp4-param-gather: trainplan models NVFP4 with 16-bit parameters" "fp4 parameters"
bad_job 's/--num-layers 32/--num-layers 3x2/' "bad.sh:3: --num-layers: expected an integer in [1, 100000], found '3x2'" "layers not a number"
bad_job 's/--bf16//' "neither --bf16 nor --fp16" "fp32"
bad_job 's/--vocab-size 128256//' "add --vocab-size N" "no vocabulary"
bad_job 's/--position-embedding-type rope/--position-embedding-type yarn/' "--position-embedding-type: expected learned_absolute, rope, none" "yarn"
bad_job 's/--tensor-model-parallel-size 2/--tensor-model-parallel-size 2 --context-parallel-size 2 --cp-comm-type a2a/' "--cp-comm-type: expected p2p, allgather" "a2a"
bad_job 's/--micro-batch-size 1/--micro-batch-size 1 --micro-batch-size 2/' "--micro-batch-size given twice" "twice"
bad_job 's/--lr 3e-4/--lr "3e-4/' "a double quote that does not end" "quote"
bad_job 's/--attention-dropout 0//; s/--bf16/--bf16 --attention-dropout 1.5/' "--attention-dropout: expected a probability in [0, 1], found '1.5'" "dropout"
bad_job 's/--hidden-size 4096/--hidden-size 4096 --pipeline-model-parallel-size 2 --pipeline-model-parallel-layout "Et*16|t*15L"/' "holds 31 transformer layers (t), the model 32" "layout layers"
bad_job 's/--hidden-size 4096/--hidden-size 4096 --pipeline-model-parallel-size 2 --pipeline-model-parallel-layout "Et*16|x*16L"/' "invalid layer character 'x'" "layout character"
bad_job 's/--hidden-size 4096/--hidden-size 4096 --pipeline-model-parallel-size 2 --pipeline-model-parallel-layout "t*16|t*16"/' "must begin with the embedding E" "layout E/L"
bad_job 's/--hidden-size 4096/--hidden-size 4096 --pipeline-model-parallel-size 2 --pipeline-model-parallel-layout "E(t|)*99999999L"/' "letters once unrolled" "layout size"
printf 'a\0b' >"$S/nul.sh"
run 65 "$TP" estimate --system eos --megatron-args "$S/nul.sh"
has "$ERR" "a NUL byte" "binary file"
# a layout string read back: the estimate splits the layers as it says
sed 's/--hidden-size 4096/--hidden-size 4096 --pipeline-model-parallel-size 4 --pipeline-model-parallel-layout "Et*4|(t*4|)*6t*4L"/' "$S/own.sh" >"$S/layout.sh"
run 0 "$TP" estimate --system eos --megatron-args "$S/layout.sh" -g 64
sed 's/--hidden-size 4096/--hidden-size 4096 --pipeline-model-parallel-size 4 --pipeline-model-parallel-layout "Et*8|t*8|t*8|t*8L"/' "$S/own.sh" >"$S/layout2.sh"
run 0 "$TP" estimate --system eos --megatron-args "$S/layout2.sh" -g 64
sed 's/--hidden-size 4096/--hidden-size 4096 --pipeline-model-parallel-size 4 --pipeline-model-parallel-layout "Et*5|t*9|t*9|t*9L"/' "$S/own.sh" >"$S/layout3.sh"
run 0 "$TP" estimate --system eos --megatron-args "$S/layout3.sh" -g 64 --format json
has "$OUT" '"pipeline_model_parallel_layout":	"Et*5|t*9|t*9|t*9L"' "an uneven layout of the user's: kept"
python3 -c "import json,sys; d=json.loads(sys.argv[1]); assert d['layout']['pipeline_split']['layers_per_pipeline_rank']==[5,9,9,9], d['layout']['pipeline_split']" "$OUT" && ok || bad "an uneven layout of the user's: its ranks' layers"
# the split options read back and refused where Megatron-Core refuses them
sed 's/--hidden-size 4096/--hidden-size 4096 --pipeline-model-parallel-size 4 --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split/' "$S/own.sh" >"$S/acc.sh"
run 65 "$TP" estimate --system eos --megatron-args "$S/acc.sh" -g 64
has "$ERR" "(pp_layers)" "34 slots over PP 4: refused by name"
sed 's/--hidden-size 4096/--hidden-size 4096 --pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 5 --decoder-last-pipeline-num-layers 9/' "$S/own.sh" >"$S/fl.sh"
run 0 "$TP" estimate --system eos --megatron-args "$S/fl.sh" -g 64 --format json
python3 -c "import json,sys; d=json.loads(sys.argv[1]); assert d['layout']['pipeline_split']['layers_per_pipeline_rank']==[5,9,9,9], d['layout']['pipeline_split']" "$OUT" && ok || bad "first/last read back: the ranks' layers"
# search --near on it: the split searched too (not the job's pinned), and
# named where the best layout changes it
run 0 "$TP" search --system eos --near "$S/fl.sh" --no-timing --tokens 1e9
has "$OUT" "pipeline split first stage 5, last stage 9 layers -> " "near: the job's split in what changes"
printf '%s' "$OUT" | grep -Eq "pipeline splits, valid layouts: even [1-9]" && ok || bad "near: every split searched, not the job's alone"
has "$OUT" "  - --decoder-first-pipeline-num-layers 5" "near: the split's flags in the changes"
sed 's/--hidden-size 4096/--hidden-size 4096 --pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 5 --account-for-loss-in-pipeline-split/' "$S/own.sh" >"$S/conf.sh"
run 65 "$TP" estimate --system eos --megatron-args "$S/conf.sh" -g 64
has "$ERR" "(split_conflict)" "first/last with the loss counted: refused by name"

# a mixture of experts: searched with expert parallelism, or, what the
# estimator does not model, refused by name (moe_not_modelled), never
# searched into a memory shortfall (issue 19)
"$TP" search -m mixtral-8x7b --system eos --max-gpus 256 -s 4096 -B 1024 --launch megatron >"$S/moe.out" 2>"$S/moe.err"
rc=$?
if [ "$rc" = 65 ]; then
    has "$(cat "$S/moe.err")" "mixtral-8x7b (a mixture of experts, 8 experts, top 2):" "MoE refused by name"
    has "$(cat "$S/moe.err")" "(moe_not_modelled); nothing to search" "MoE refused: the reason"
elif [ "$rc" = 0 ]; then
    has "$(cat "$S/moe.out")" "--expert-model-parallel-size" "MoE searched: EP in the launch"
else
    bad "MoE search: exit $rc: $(cat "$S/moe.err")"
fi
# an MoE job read back: its experts and their layout
sed 's/--hidden-size 4096/--hidden-size 4096 --num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 14336 --expert-model-parallel-size 2 --expert-tensor-parallel-size 1 --moe-token-dispatcher-type alltoall/' "$S/own.sh" >"$S/moe.sh"
"$TP" estimate --system eos --megatron-args "$S/moe.sh" --format json >"$S/moe.json" 2>"$S/moe.err"
rc=$?
if [ "$rc" = 65 ] && grep -q moe_not_modelled "$S/moe.json" "$S/moe.err"; then ok
elif [ "$rc" -le 1 ]; then
    has "$(cat "$S/moe.json")" '"expert_model_parallel_size":	2' "MoE job: EP read"
    has "$(cat "$S/moe.json")" '"expert_tensor_parallel_size":	1' "MoE job: expert TP read"
    has "$(cat "$S/moe.json")" '"moe_token_dispatcher_type":	"alltoall"' "MoE job: dispatcher read"
else
    bad "MoE job: exit $rc: $(cat "$S/moe.err")"
fi
# the dispatch's overlaps read back (--moe-comm-overlap)
MOEF='--num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 14336 --expert-model-parallel-size 2 --expert-tensor-parallel-size 1 --moe-token-dispatcher-type alltoall'
sed "s/--hidden-size 4096/--hidden-size 4096 $MOEF --overlap-moe-expert-parallel-comm --delay-wgrad-compute/" "$S/own.sh" >"$S/moe_a2a.sh"
"$TP" estimate --system eos --megatron-args "$S/moe_a2a.sh" --format json >"$S/moe_a2a.json" 2>"$S/moe_a2a.err"
rc=$?
if [ "$rc" -le 1 ]; then
    has "$(cat "$S/moe_a2a.json")" '"moe_comm_overlap":	"a2a"' "MoE job: A2A overlap read"
else
    bad "MoE A2A job: exit $rc: $(cat "$S/moe_a2a.err")"
fi
# the flex backend and the router padding read back
MOEX='--num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 14336 --expert-model-parallel-size 2 --expert-tensor-parallel-size 1 --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep --moe-router-padding-for-quantization'
sed "s/--hidden-size 4096/--hidden-size 4096 $MOEX/" "$S/own.sh" >"$S/moe_hy.sh"
"$TP" estimate --system eos --megatron-args "$S/moe_hy.sh" --format json >"$S/moe_hy.json" 2>"$S/moe_hy.err"
rc=$?
if [ "$rc" -le 1 ]; then
    has "$(cat "$S/moe_hy.json")" '"moe_flex_dispatcher_backend":	"hybridep"' "MoE job: HybridEP read"
    has "$(cat "$S/moe_hy.json")" '"moe_router_padding_for_quantization":	true' "MoE job: router padding read"
else
    bad "MoE HybridEP job: exit $rc: $(cat "$S/moe_hy.err")"
fi
bad_job "s/--hidden-size 4096/--hidden-size 4096 $MOEF --moe-flex-dispatcher-backend ncclep/" "--moe-flex-dispatcher-backend" "an unmodelled flex backend"
bad_job "s/--hidden-size 4096/--hidden-size 4096 $MOEF --delay-wgrad-compute/" "--delay-wgrad-compute needs --overlap-moe-expert-parallel-comm" "delayed wgrad without the A2A overlap"
bad_job "s/--hidden-size 4096/--hidden-size 4096 $MOEF --overlap-moe-expert-parallel-comm --moe-shared-expert-overlap/" "Megatron-Core refuses both" "both MoE overlaps"
bad_job 's/--hidden-size 4096/--hidden-size 4096 --expert-model-parallel-size 2/' "--expert-model-parallel-size without --num-experts" "EP on a dense job"
bad_job "s/--hidden-size 4096/--hidden-size 4096 --num-experts 8 --moe-layer-freq '([0]+[1]+[1]+[0])*8'/" "leading dense layers then one MoE layer every N" "an MoE pattern trainplan does not model"
bad_job "s/--hidden-size 4096/--hidden-size 4096 --num-experts 8 --moe-layer-freq '([0]*3+[1]*3'/" "expected a list expression of 32 0s and 1s" "a broken MoE pattern"
bad_job 's/--hidden-size 4096/--hidden-size 4096 --num-experts 8 --moe-router-score-function sqrtsoftplus/' "expected softmax, sigmoid" "a router trainplan does not model"

# memory savers (issue 28) read back; Megatron-Core's refusals by name
run 0 "$TP" estimate --system eos --format json --megatron-args - \
    < <(sed 's/--use-distributed-optimizer/--use-distributed-optimizer --use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16 --main-grads-dtype bf16/' "$S/own.sh")
has "$OUT" '"exp_avg_sq_dtype":	"bf16"' "the precision-aware optimizer's moments read"
has "$OUT" '"main_grads_dtype":	"bf16"' "its gradient dtype read"
run 0 "$TP" estimate --system eos --format json --megatron-args - \
    < <(sed 's/--use-distributed-optimizer/--use-distributed-optimizer --use-precision-aware-optimizer --optimizer-cpu-offload --optimizer-offload-fraction 0.5 --overlap-cpu-optimizer-d2h-h2d --use-torch-optimizer-for-cpu-offload/' "$S/own.sh")
has "$OUT" '"optimizer_offload_fraction":	0.5' "optimizer offload read"
has "$ERR" "changes nothing with Adam" "--use-torch-optimizer-for-cpu-offload noted"
run 0 "$TP" estimate --system eos --format json --megatron-args - \
    < <(sed 's/--recompute-activations/--cpu-offloading-num-layers 8/' "$S/own.sh")
has "$OUT" '"cpu_offloading_num_layers":	8' "layer offload read"
run 64 "$TP" estimate --system eos --megatron-args - \
    < <(sed 's/--recompute-activations/--recompute-activations --cpu-offloading-num-layers 8/' "$S/own.sh")
has "$ERR" "CPU offloading does not work when activation recomputation" "layer offload with recomputation"
run 64 "$TP" estimate --system eos --megatron-args - \
    < <(sed 's/--use-distributed-optimizer/--use-precision-aware-optimizer/' "$S/own.sh")
has "$ERR" "only supported with distributed optimizer" "the precision-aware optimizer without the distributed one"
run 0 "$TP" estimate --system eos --format json --megatron-args - \
    < <(sed 's/--recompute-activations/--fine-grained-activation-offloading --offload-modules qkv_linear core_attn attn_proj --activation-offload-fraction 0.5/' "$S/own.sh")
has "$OUT" '"activation_offload_fraction":	0.5' "fine-grained offloading read"
bad_job 's/--recompute-activations/--cpu-offloading/' "--cpu-offloading: not a flag of Megatron-LM" "--cpu-offloading alone"
bad_job 's/--recompute-activations/--fine-grained-activation-offloading --offload-modules fused_group_mlp/' "fused_group_mlp and gdp_qkv are not modelled" "an unmodelled offload module"
bad_job 's/--use-distributed-optimizer/--use-distributed-optimizer --use-precision-aware-optimizer --main-params-dtype bf16/' "--main-params-dtype: expected fp32, fp16" "a master dtype Megatron-LM does not take"
# Memory mechanisms read back (estimator/mem.c): MoE's permutation, fused
# only where the job says (Megatron-Core's default is PyTorch's)
sed "s/--hidden-size 4096/--hidden-size 4096 $MOEF/" "$S/own.sh" >"$S/moe_perm.sh"
"$TP" estimate --system eos --megatron-args "$S/moe_perm.sh" --format json >"$S/moe_perm.json" 2>"$S/moe_perm.err" # 1: not feasible, still read
OUT=$(cat "$S/moe_perm.json")
has "$OUT" '"moe_permute_fusion":	false' "MoE job: no --moe-permute-fusion, unfused"
sed "s/--hidden-size 4096/--hidden-size 4096 $MOEF --moe-permute-fusion/" "$S/own.sh" >"$S/moe_perm2.sh"
"$TP" estimate --system eos --megatron-args "$S/moe_perm2.sh" --format json >"$S/moe_perm2.json" 2>"$S/moe_perm2.err" # 1: not feasible, still read
OUT=$(cat "$S/moe_perm2.json")
has "$OUT" '"moe_permute_fusion":	true' "MoE job: --moe-permute-fusion read"
has "$OUT" '"moe_router_fusion":	false' "MoE job: no --moe-router-fusion, PyTorch's router"
sed "s/--hidden-size 4096/--hidden-size 4096 $MOEF --moe-router-fusion/" "$S/own.sh" >"$S/moe_router.sh"
"$TP" estimate --system eos --megatron-args "$S/moe_router.sh" --format json >"$S/moe_router.json" 2>"$S/moe_router.err" # 1: not feasible, still read
OUT=$(cat "$S/moe_router.json")
has "$OUT" '"moe_router_fusion":	true' "MoE job: --moe-router-fusion read"
# Megatron-FSDP: 16-bit gradient buffers unless fp32 is asked for; the
# double buffers with --use-nccl-ub
FSDP='--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params --ckpt-format fsdp_dtensor'
sed "s/--use-distributed-optimizer/$FSDP --use-nccl-ub/" "$S/own.sh" >"$S/fsdp.sh"
run 0 "$TP" estimate --system eos --megatron-args "$S/fsdp.sh" --format json
has "$OUT" '"zero_stage":	3' "FSDP job: ZeRO-3"
has "$OUT" '"accumulate_allreduce_grads_in_fp32":	false' "FSDP job: auto main grads are bf16"
has "$OUT" '"fsdp_double_buffer":	true' "FSDP job: --use-nccl-ub double-buffers"
sed "s/--use-distributed-optimizer/$FSDP --megatron-fsdp-main-grads-dtype fp32/" "$S/own.sh" >"$S/fsdp32.sh"
run 0 "$TP" estimate --system eos --megatron-args "$S/fsdp32.sh" --format json
has "$OUT" '"accumulate_allreduce_grads_in_fp32":	true' "FSDP job: fp32 main grads read"
has "$OUT" '"fsdp_double_buffer":	false' "FSDP job: no double buffer by default"
# CUDA graphs: the implementation, the modules (and their old name, whose
# full_iteration is the implementation)
sed "s/--bf16/--bf16 --cuda-graph-impl transformer_engine --cuda-graph-modules attn mlp/" "$S/own.sh" >"$S/cg.sh"
run 0 "$TP" estimate --system eos --megatron-args "$S/cg.sh" --format json
has "$OUT" '"cuda_graph_impl":	"transformer_engine"' "CUDA graphs: impl read"
has "$OUT" '"mlp"' "CUDA graphs: modules read"
sed "s/--bf16/--bf16 --enable-cuda-graph --cuda-graph-scope full_iteration/" "$S/own.sh" >"$S/cg2.sh"
run 0 "$TP" estimate --system eos --megatron-args "$S/cg2.sh" --format json
has "$OUT" '"cuda_graph_impl":	"full_iteration"' "CUDA graphs: scope full_iteration is the implementation"
has "$OUT" '"cuda_graph_pool_bytes"' "CUDA graphs: the pool reported"
bad_job "s/--bf16/--bf16 --cuda-graph-impl local --cuda-graph-modules attn everything/" "expected full, full_iteration or names of" "an unknown CUDA graph module"
# Transformer Engine's fused loss
sed "s/--bf16/--bf16 --cross-entropy-loss-fusion --cross-entropy-fusion-impl te/" "$S/own.sh" >"$S/te_ce.sh"
run 0 "$TP" estimate --system eos --megatron-args "$S/te_ce.sh" --format json
has "$OUT" '"cross_entropy_fusion_impl":	"te"' "TE's fused loss read"

# ---- issue 30: the script's own shell variables, expanded as bash does ----
# Megatron-LM's example style: flags in quoted strings and arrays, used
# unquoted (word-split) and as "${A[@]}"; ${X:-default}; an if whose
# condition is known; a checkpoint path from $1 (not known, not read).
cat >"$S/vars.sh" <<'EOF'
#!/bin/bash
export CUDA_DEVICE_MAX_CONNECTIONS=1
GPUS_PER_NODE=8
NUM_NODES=${NUM_NODES:-2}
WORLD_SIZE=$(($GPUS_PER_NODE*$NUM_NODES))
CHECKPOINT_PATH=$1
DISTRIBUTED_ARGS="--nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES --master_addr $(hostname)"
GPT_ARGS="--num-layers 32 --hidden-size 4096 --num-attention-heads 32 \
    --group-query-attention --num-query-groups 8 --ffn-hidden-size 14336 \
    --swiglu --normalization RMSNorm --position-embedding-type rope \
    --untie-embeddings-and-output-weights --disable-bias-linear \
    --seq-length 8192 --max-position-embeddings=8192 --vocab-size 128256"
PARALLEL_ARGS=(--tensor-model-parallel-size 4 --sequence-parallel)
PRECISION=bf16
if [ "$PRECISION" = fp16 ]; then
    DTYPE=(--fp16)
else
    DTYPE=(--bf16)
fi
TRAIN_ARGS="--micro-batch-size 1 --global-batch-size 128 --train-iters 1000"
torchrun $DISTRIBUTED_ARGS pretrain_gpt.py $GPT_ARGS "${PARALLEL_ARGS[@]}" \
    ${DTYPE[@]} $TRAIN_ARGS --save $CHECKPOINT_PATH
EOF
run 0 "$TP" estimate --system eos --megatron-args "$S/vars.sh" --format json
has "$OUT" '"tensor_model_parallel_size":	4' "vars: TP from a quoted variable"
has "$OUT" '"gpus":	16' "vars: torchrun's counts from variables"
has "$OUT" '"sequence_parallel":	true' "vars: an array"
has "$OUT" '"precision":	"bf16"' "vars: the branch of a known condition"
# [[ ]] with && and || of known values is evaluated too
sed 's/^if \[ "$PRECISION" = fp16 \]; then/if [[ -n "${SLURM_JOB_ID:-}" || "$PRECISION" == fp16 ]]; then/' "$S/vars.sh" >"$S/dbl.sh"
grep -q '^if \[\[' "$S/dbl.sh" && ok || bad "dbl.sh: the sed did not apply"
run 0 "$TP" estimate --system eos --megatron-args "$S/dbl.sh" --format json
has "$OUT" '"precision":	"bf16"' "vars: [[ A || B ]] of known values"
# what the file does not give is refused where it matters, naming the
# variable and the line where it became unknown
sed 's/--tensor-model-parallel-size 4/--tensor-model-parallel-size $TP_SIZE/' "$S/vars.sh" >"$S/unset.sh"
run 65 "$TP" estimate --system eos --megatron-args "$S/unset.sh"
has "$ERR" 'unset.sh:21: --tensor-model-parallel-size: its value is not known from the file: $TP_SIZE (' "an unset variable as a flag's value"
sed 's/^TRAIN_ARGS=.*/TRAIN_ARGS="--micro-batch-size $(cat mbs) --global-batch-size 128"/' "$S/vars.sh" >"$S/subst.sh"
run 65 "$TP" estimate --system eos --megatron-args "$S/subst.sh"
has "$ERR" '--micro-batch-size: its value is not known from the file: $(...) (' "a command substitution"
sed 's/\$TRAIN_ARGS/$TRAIN_ARGS $EXTRA_ARGS/' "$S/vars.sh" >"$S/extra.sh"
run 65 "$TP" estimate --system eos --megatron-args "$S/extra.sh"
has "$ERR" 'could hold flags is not known from the file: $EXTRA_ARGS (' "an unset variable that could hold flags"
sed 's/\$TRAIN_ARGS/$TRAIN_ARGS "$@"/' "$S/vars.sh" >"$S/args.sh"
run 65 "$TP" estimate --system eos --megatron-args "$S/args.sh"
has "$ERR" "the script's arguments are not in the file" "the script's arguments"
# the environment of the reading process is not used
export TP_SIZE=2
run 65 "$TP" estimate --system eos --megatron-args "$S/unset.sh"
unset TP_SIZE
# a condition trainplan cannot evaluate: a variable set under it is unknown
sed 's/^PRECISION=bf16/PRECISION=$(cat precision)/' "$S/vars.sh" >"$S/cond.sh"
run 65 "$TP" estimate --system eos --megatron-args "$S/cond.sh"
has "$ERR" 'under the condition, loop or function at line' "a branch not known"

# ---- issue 30: Megatron-LM's rules for flags that interact (validate_args) ----
bad_job 's/--bf16/--bf16 --fp16/' "--fp16 with --bf16 (line" "bf16 and fp16 together"
# --recompute-activations sets selective whatever the granularity says
sed 's/--recompute-activations/--recompute-activations --recompute-granularity full --recompute-method uniform --recompute-num-layers 1/' "$S/own.sh" >"$S/rc.sh"
run 0 "$TP" estimate --system eos --megatron-args "$S/rc.sh" --format json
has "$OUT" '"recompute_granularity":	"selective"' "--recompute-activations over --recompute-granularity full"
# the tokens: --train-iters x batch x sequence within --tokens' range;
# --train-samples too, not both; --tokens on the command line wins
bad_job 's/--train-iters 1000/--train-iters 999999999999/' "--train-iters 999999999999: 1.05e+18 tokens, more than the 1e18" "iterations past 1e18 tokens"
bad_job 's/--train-iters 1000/--train-iters 1000 --train-samples 5000/' "--train-samples with --train-iters" "both"
# RoPE's share and base, local attention and sinks (issue 31): a window
# changes the attention's time; refusals by name
run 0 "$TP" estimate --system eos --megatron-args "$S/own.sh" --format json
T_FULL=$(printf '%s' "$OUT" | grep -o '"iteration_time_s":[^,]*' | head -1)
run 0 "$TP" estimate --system eos --format json --megatron-args - \
    < <(sed 's/--bf16/--bf16 --window-size 1023,0 --window-attn-skip-freq 4 --rotary-percent 0.5 --rotary-base 500000 --softmax-type learnable/' "$S/own.sh")
T_WIN=$(printf '%s' "$OUT" | grep -o '"iteration_time_s":[^,]*' | head -1)
if [ -n "$T_WIN" ] && [ "$T_WIN" != "$T_FULL" ]; then ok; else bad "a window read: $T_WIN, without: $T_FULL"; fi
run 0 "$TP" estimate --system eos --format json --megatron-args - \
    < <(sed 's/--bf16/--bf16 --window-size "(-1,-1)"/' "$S/own.sh")
T_NOWIN=$(printf '%s' "$OUT" | grep -o '"iteration_time_s":[^,]*' | head -1)
if [ "$T_NOWIN" = "$T_FULL" ]; then ok; else bad "--window-size (-1,-1) is no window: $T_NOWIN, $T_FULL"; fi
bad_job 's/--bf16/--bf16 --window-size 4095,8/' "a window looking 8 tokens ahead is not a causal model's" "a two-sided window"
bad_job 's/--bf16/--bf16 --window-size 4095/' "--window-size: expected LEFT,RIGHT" "a window of one number"
bad_job 's/--bf16/--bf16 --window-size 4095,0 --window-attn-skip-freq "[1,0]*16"/' "--window-attn-skip-freq: expected an integer" "a window pattern list"
bad_job 's/--bf16/--bf16 --softmax-type off-by-one/' "--softmax-type: expected vanilla, learnable" "an off-by-one softmax"
bad_job 's/--bf16/--bf16 --rotary-percent 1.5/' "--rotary-percent: expected a number in" "a rotary share above 1"

# a job file given twice is refused, naming the option
run 64 "$TP" estimate --system eos --megatron-args "$S/own.sh" --megatron-args "$S/vars.sh"
has "$ERR" "--megatron-args given twice" "--megatron-args twice"
run 64 "$TP" search --system eos --near "$S/own.sh" --near "$S/vars.sh"
has "$ERR" "--near given twice" "--near twice"
run 64 "$TP" estimate --system eos --nemo-overrides "$S/own.sh" --nemo-overrides "$S/vars.sh"
has "$ERR" "--nemo-overrides given twice" "--nemo-overrides twice"
run 64 "$TP" estimate --system eos --torchtitan-config "$S/own.sh" --torchtitan-config "$S/vars.sh"
has "$ERR" "--torchtitan-config given twice" "--torchtitan-config twice"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
