# torchtitan main at pytorch/torchtitan@b5bcd76c66d0 (2026-08-21), a Python config
# run: NGPU=8 MODULE=<this file as a module> CONFIG=trainplan_config ./run_train.sh, on 128 nodes
# trainplan: llama3-70b on eos, 1024 GPUs, 4.621 s per iteration as megatron-core runs it
# trainplan estimated this layout as megatron-core runs it, not torchtitan; read back (trainplan estimate --torchtitan-config) it is estimated as torchtitan runs it
# the estimate timed attention as --attention-backend auto; torchtitan main's language models run FlexAttention (model_registry's attn_backend "flex")
# torchtitan shards parameters too (FSDP, ZeRO-3) where this layout shards optimizer states only
# NOT EXPRESSIBLE in torchtitan main: a ring of key/value sends: main has no context_parallel_rotate_method and all-gathers them
from torchtitan.models.llama3 import model_registry
from torchtitan.models.llama3.config_registry import llama3_70b


def trainplan_config():
    config = llama3_70b()
    config.model_spec = model_registry("70B")
    config.parallelism.data_parallel_replicate_degree = 1
    config.parallelism.data_parallel_shard_degree = 32
    config.parallelism.tensor_parallel_degree = 4
    config.parallelism.enable_sequence_parallel = True
    config.parallelism.pipeline_parallel_degree = 4
    config.parallelism.pipeline_parallel_schedule = "Interleaved1F1B"
    config.parallelism.module_fqns_per_model_part = [
        ["tok_embeddings", "layers.0", "layers.1", "layers.2"],
        ["layers.3", "layers.4", "layers.5"],
        ["layers.6", "layers.7", "layers.8"],
        ["layers.9", "layers.10", "layers.11"],
        ["layers.12", "layers.13", "layers.14"],
        ["layers.15", "layers.16", "layers.17"],
        ["layers.18", "layers.19", "layers.20"],
        ["layers.21", "layers.22", "layers.23"],
        ["layers.24", "layers.25", "layers.26"],
        ["layers.27", "layers.28", "layers.29"],
        ["layers.30", "layers.31", "layers.32"],
        ["layers.33", "layers.34", "layers.35"],
        ["layers.36", "layers.37", "layers.38"],
        ["layers.39", "layers.40", "layers.41"],
        ["layers.42", "layers.43", "layers.44"],
        ["layers.45", "layers.46", "layers.47"],
        ["layers.48", "layers.49"],
        ["layers.50", "layers.51"],
        ["layers.52", "layers.53"],
        ["layers.54", "layers.55"],
        ["layers.56", "layers.57"],
        ["layers.58", "layers.59"],
        ["layers.60", "layers.61"],
        ["layers.62", "layers.63"],
        ["layers.64", "layers.65"],
        ["layers.66", "layers.67"],
        ["layers.68", "layers.69"],
        ["layers.70", "layers.71"],
        ["layers.72", "layers.73"],
        ["layers.74", "layers.75"],
        ["layers.76", "layers.77"],
        ["layers.78", "layers.79", "norm", "lm_head"],
    ]
    config.training.disable_cuda_graphs = True
    config.parallelism.num_pp_microbatches = 16
    config.parallelism.context_parallel_degree = 2
    config.training.num_tokens_per_microbatch_per_dp_rank = 8192
    config.training.num_tokens_per_train_step = 4194304
    config.training.max_context_length = 8192
    config.training.mixed_precision_param = "bfloat16"
    config.activation_checkpoint = None
    config.compile.enable = True
    config.compile.components = ["model", "loss"]
    config.compile.enable_async_tensor_parallel = False
    return config
