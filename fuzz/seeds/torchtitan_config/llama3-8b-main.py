# torchtitan main at pytorch/torchtitan@b5bcd76c66d0 (2026-08-21), a Python config
# run: NGPU=8 MODULE=<this file as a module> CONFIG=trainplan_config ./run_train.sh, on 8 nodes
# trainplan: llama3-8b on eos, 64 GPUs, 2.34773 s per iteration as torchtitan runs it
# the estimate timed attention as --attention-backend flash; torchtitan main's language models run FlexAttention (model_registry's attn_backend "flex"); main also captures CUDA graphs, which the estimate does not model
from torchtitan.models.llama3 import model_registry
from torchtitan.models.llama3.config_registry import llama3_8b


def trainplan_config():
    config = llama3_8b()
    config.model_spec = model_registry("8B")
    config.parallelism.data_parallel_replicate_degree = 1
    config.parallelism.data_parallel_shard_degree = 16
    config.parallelism.tensor_parallel_degree = 1
    config.parallelism.enable_sequence_parallel = True
    config.parallelism.pipeline_parallel_degree = 1
    config.parallelism.context_parallel_degree = 4
    config.training.num_tokens_per_microbatch_per_dp_rank = 32768
    config.training.num_tokens_per_train_step = 1048576
    config.training.max_context_length = 8192
    config.training.mixed_precision_param = "bfloat16"
    config.activation_checkpoint = None
    config.compile.enable = True
    config.compile.components = ["model", "loss"]
    config.compile.enable_async_tensor_parallel = False
    return config
