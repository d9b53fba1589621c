#!/bin/bash
# llama3-70b on eos: n32g8_tp4pp8dp1cp8_mbs1_vpp8_sp_z1, 32 nodes x 8 GPUs
# written by trainplan 0.1.0 for Megatron-LM main, NVIDIA/Megatron-LM@d98e8a64ddf3 (2026-08-22) (pretrain_gpt.py)
# estimated 29.79 s an iteration
#
# Slurm: sbatch [--account A] [--partition P] [--time T] THIS_FILE
# Any other scheduler: run it once on each of the 32 nodes with MASTER_ADDR
# set to the first node's address (torchrun's c10d rendezvous).
# Edit only the paths below, or set them in the environment. The model flags
# give the architecture as trainplan times it; what does not change the time
# (rotary base, norm epsilon, initialisation) is Megatron-LM's default unless
# you add it, and the optimizer's hyperparameters are common pre-training values.
#SBATCH --job-name=trainplan-llama3-70b
#SBATCH --nodes=32
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
set -euo pipefail

MEGATRON_LM=${MEGATRON_LM:-/path/to/Megatron-LM}
DATA_PATH=${DATA_PATH:-/path/to/dataset_text_document}
TOKENIZER=${TOKENIZER:-/path/to/tokenizer}
CHECKPOINTS=${CHECKPOINTS:-/path/to/checkpoints}
MASTER_PORT=${MASTER_PORT:-29500}

# Megatron-LM asserts it with TP or CP > 1 before Blackwell (validate_args)
export CUDA_DEVICE_MAX_CONNECTIONS=1

MODEL=(
    --num-layers 80
    --hidden-size 8192
    --ffn-hidden-size 28672
    --num-attention-heads 64
    --group-query-attention
    --num-query-groups 8
    --max-position-embeddings 65536
    --position-embedding-type rope
    --normalization RMSNorm
    --swiglu
    --untie-embeddings-and-output-weights
    --disable-bias-linear
    --attention-dropout 0
    --hidden-dropout 0
    --vocab-size 128256
)
PARALLEL=(
    --tensor-model-parallel-size 4
    --pipeline-model-parallel-size 8
    --pipeline-model-parallel-layout 'Et*2|(t*2|)*15(t|)*47tL'
    --context-parallel-size 8
    --cp-comm-type p2p
    --sequence-parallel
    --use-distributed-optimizer
    --overlap-grad-reduce
    --overlap-param-gather
)
PRECISION=(
    --bf16
    --attention-backend auto
)
BATCH=(
    --seq-length 65536
    --micro-batch-size 1
    --global-batch-size 64
)
TRAINING=(
    --train-iters 1000  # no --tokens given
    --lr 3.0e-4 --min-lr 3.0e-5 --lr-decay-style cosine --lr-warmup-fraction 0.01
    --weight-decay 0.1 --adam-beta1 0.9 --adam-beta2 0.95 --clip-grad 1.0 --init-method-std 0.02
    --log-interval 10 --eval-interval 1000 --eval-iters 10
)
DATA=(
    --data-path "$DATA_PATH" --split 99,1,0
    --tokenizer-type HuggingFaceTokenizer --tokenizer-model "$TOKENIZER"
    --save "$CHECKPOINTS" --load "$CHECKPOINTS" --save-interval 1000 --ckpt-format torch_dist
)

NODES=32
GPUS_PER_NODE=8
if [ -n "${SLURM_JOB_ID:-}" ]; then
    MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
    RUN=(srun --nodes "$NODES" --ntasks-per-node 1 --kill-on-bad-exit=1)
else
    : "${MASTER_ADDR:?set MASTER_ADDR to the first node}"
    RUN=()
fi
"${RUN[@]}" torchrun --nnodes "$NODES" --nproc-per-node "$GPUS_PER_NODE" \
    --rdzv-id "${SLURM_JOB_ID:-trainplan}" --rdzv-backend c10d --rdzv-endpoint "$MASTER_ADDR:$MASTER_PORT" \
    "$MEGATRON_LM/pretrain_gpt.py" \
    "${MODEL[@]}" "${PARALLEL[@]}" "${PRECISION[@]}" "${BATCH[@]}" \
    "${TRAINING[@]}" "${DATA[@]}"
