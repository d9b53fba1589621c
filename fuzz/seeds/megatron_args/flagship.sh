#!/bin/bash
# gpt-neox-20b on perlmutter: n32g4_tp4pp4dp8_mbs4_vpp6_sp_z1, 32 nodes x 4 GPUs
# written by trainplan 0.1.0 for Megatron-LM main, NVIDIA/Megatron-LM@d98e8a64ddf3 (2026-08-22) (pretrain_gpt.py)
# estimated 11.89 s an iteration, 143052 iterations (3e+11 tokens): 19.7 days
#
# Slurm: sbatch [--account A] [--partition P] [--time T] THIS_FILE
# Any other scheduler: run it once on each of the 32 nodes with MASTER_ADDR
# set to the first node's address (torchrun's c10d rendezvous).
# Edit only the paths below, or set them in the environment. The model flags
# give the architecture as trainplan times it; what does not change the time
# (rotary base, norm epsilon, initialisation) is Megatron-LM's default unless
# you add it, and the optimizer's hyperparameters are common pre-training values.
# note: parallel attention and MLP (GPT-J/NeoX) has no Megatron-Core flag: the same GEMMs in sequence
#SBATCH --job-name=trainplan-gpt-neox-20b
#SBATCH --nodes=32
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=4
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
    --num-layers 44
    --hidden-size 6144
    --ffn-hidden-size 24576
    --num-attention-heads 64
    --max-position-embeddings 2048
    --position-embedding-type rope
    --normalization LayerNorm
    --untie-embeddings-and-output-weights
    --attention-dropout 0
    --hidden-dropout 0
    --vocab-size 50432
)
PARALLEL=(
    --tensor-model-parallel-size 4
    --pipeline-model-parallel-size 4
    --pipeline-model-parallel-layout 'Et*2|(t*2|)*19(t|)*3tL'
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
    --seq-length 2048
    --micro-batch-size 4
    --global-batch-size 1024
)
TRAINING=(
    --train-iters 143052
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
GPUS_PER_NODE=4
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
