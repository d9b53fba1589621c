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
