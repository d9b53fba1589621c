#!/bin/bash
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
set -euo pipefail
MEGATRON=${MEGATRON:-/opt/Megatron-LM}
: "${DATA_PATH:=/data/corpus_text_document}"
MODEL=(
    --num-layers 24 --hidden-size 2048 --num-attention-heads 16  # 1.3B
    --seq-length 4096 --max-position-embeddings 4096 --vocab-size 50304
)
PARALLEL=()
PARALLEL+=(--tensor-model-parallel-size 2)
PARALLEL+=("--pipeline-model-parallel-size 2")
MODE=${MODE:-selective}
case "$MODE" in
    full) RC="--recompute-granularity full --recompute-method uniform" ;;
    *) RC="--recompute-activations" ;;
esac
if [[ -n "${SLURM_JOB_ID:-}" && "$MODE" == selective ]]; then
    LAUNCH=(srun --ntasks-per-node 1)
elif [ 1 -eq 2 ]; then
    LAUNCH=(false)
else
    LAUNCH=()
fi
run() { echo "running $*"; }
cat <<EOT >/dev/null
--tensor-model-parallel-size 8 $(date)
EOT
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
"${LAUNCH[@]}" torchrun --nnodes "${SLURM_NNODES:-2}" --nproc-per-node 8 \
    "$MEGATRON/pretrain_gpt.py" "${MODEL[@]}" ${PARALLEL[@]} $RC \
    --micro-batch-size 1 --global-batch-size 64 --bf16 \
    --data-path "$DATA_PATH" --save "${CKPT:-ckpt}" 2>&1 | tee "log.$$"
