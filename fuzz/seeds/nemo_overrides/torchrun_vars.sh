#!/bin/bash
NODES=1
OVERRIDES="train.micro_batch_size=1 train.global_batch_size=8"
torchrun --nnodes=$NODES --nproc_per_node 8 \
    scripts/training/run_recipe.py \
    --recipe llama3_8b_pretrain_config --mode pretrain \
    model.tensor_model_parallel_size=2 \
    $OVERRIDES \
    dataset.seq_length=4096 model.pipeline_model_parallel_size=1 \
    model.context_parallel_size=1 checkpoint.save=$CKPT
