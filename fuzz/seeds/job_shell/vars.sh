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
