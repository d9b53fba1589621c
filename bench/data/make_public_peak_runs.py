#!/usr/bin/env python3
"""make_public_peak_runs.py: measured peaks of public training runs, as memory_runs.json rows.

Each source below is a public document that printed a training run's peak GPU memory beside
its full configuration (the torchtitan team's benchmark tables, a torchtitan benchmark by
Trainy, Crusoe's torchtitan results, one Megatron-LM log of the open-sci-ref runs). The
figures, layouts and provenance are written out here by hand from those documents, each row
with the quoted line and what was inferred; this script turns them into rows of
bench/data/memory_runs.json (schema trainplan-memory-runs/2) and replaces the rows of these
sources there, keeping the rest of the file as it is. Standard library only; same inputs,
same bytes.

  python3 bench/data/make_public_peak_runs.py
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------------------------------------
# Sources
# ---------------------------------------------------------------------------------------------

TT_BENCH = "torchtitan_bench_memory"
TRAINY = "trainy_torchtitan_h200"
CRUSOE = "crusoe_torchtitan"
OPENSCI = "opensci_ref_megatron"

TT_COMMIT = "b5bcd76c66d0acb1a08b176d9639425bc55e0b2a"

SOURCES = {
    TT_BENCH: {
        "what": "The torchtitan team's benchmarks of December 2024 on Meta's Grand Teton hosts "
                "(8 H100 96GB HBM2e at 500 W per host): Llama 3.1 8B with FSDP2 on 8 and 128 "
                "GPUs (local batch 2, seq 8192, per-op selective checkpointing; eager, "
                "torch.compile, torch.compile + torchao float8), 8B with FSDP + context "
                "parallelism at seq 32k-256k (full checkpointing, compile, float8), Llama 3.1 "
                "70B with FSDP 32 x TP 8 (local batch 16, full checkpointing, compile, float8, "
                "with and without AsyncTP). The 'Memory(GiB)' column of each table.",
        "where": "pytorch/torchtitan@%s benchmarks/llama3_h100_202412_torchtitan.md (added by "
                 "820504e20d11, 2025-06-13; runs with torch 1963fc83a1c3, torchao eab345c2268a, "
                 "torchtitan 9dec370ad26b, 2024-12-23/26); layouts from torchtitan@9dec370 "
                 "train_configs/llama3_8b.toml and llama3_70b.toml and the table captions"
                 % TT_COMMIT,
        "measures": "max_memory_reserved, GiB: torchtitan@9dec370 train.py logs \"memory: "
                    "X GiB\" = device_mem_stats.max_reserved_gib, torch.cuda.memory_stats()"
                    "[\"reserved_bytes.all.peak\"] (torchtitan/metrics.py "
                    "DeviceMemoryMonitor.get_peak_stats), the peak reset after every log line "
                    "(every 10 steps); \"memory readings are stable across the whole training "
                    "process\"; rank 0 (run_llama_train.sh logs rank 0)",
    },
    TRAINY: {
        "what": "Trainy on WhiteFiber, June 2025: torchtitan Llama 3.1 8B on 4 and 8 hosts of "
                "8 H200 (FSDP2 over all GPUs, local batch 2, seq 8192, per-op selective "
                "checkpointing, torch.compile, torchao float8 tensorwise with float8 "
                "all-gather, precomputed scales and force_recompute_fp8_weight_in_bwd). The "
                "'Memory(GiB)' column, sampled at the 100th iteration.",
        "where": "pytorch/torchtitan@%s benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md "
                 "(added by cbccb3878, 2025-07-11); torch 2.8.0a0+5228986c39 (NGC 25.05), "
                 "torchao 0afa4c1, torchtitan e7c0cae934df (2025-06-13); layout from "
                 "torchtitan@e7c0cae torchtitan/models/llama3/train_configs/llama3_8b.toml and "
                 "the command in the document" % TT_COMMIT,
        "measures": "max_memory_reserved, GiB: torchtitan's \"memory: X GiB\" log field "
                    "(torchtitan/components/metrics.py at e7c0cae: max_reserved_gib of "
                    "torch.cuda.memory_stats()[\"reserved_bytes.all.peak\"], reset after every "
                    "log line), rank 0",
    },
    CRUSOE: {
        "what": "Crusoe Cloud's torchtitan results of January to April 2026: Llama 3.1 8B "
                "trained with FSDP2 over all GPUs (seq 8192, per-op selective checkpointing, "
                "eager, bf16) on GB200 NVL72 (12-68 GPUs, local batch 5), HGX B200 (8-16, "
                "batch 5), H200 (32-128, batch 4) and H100 (16-128, batch 2). The log line of "
                "step 100 in their results table.",
        "where": "crusoecloud/distributed-torchrun-on-slurm@e7c38d4f6c78e41a5feacf05fcc9397c9a3257b1 "
                 "torchtitan/README.md (results table, 2026-04-01; GB200 rows from 2026-01-28), "
                 "with torchtitan/llama3_8b-gb200.toml@e82e695c8a29 (the config the README "
                 "names) and torchtitan/multinode_trainer.slurm@90f5e7631d14; torchtitan v0.2.2 "
                 "(73a0e6979dd1, 2026-02-20) per the README, PyTorch nightly (cu128 or cu130)",
        "measures": "max_memory_reserved, GiB: torchtitan v0.2.2 components/metrics.py logs "
                    "\"memory: X GiB(Y%)\" = max_reserved_gib of torch.cuda.memory_stats()"
                    "[\"reserved_bytes.all.peak\"], reset after every log line (log_freq 10); "
                    "rank 0",
    },
    OPENSCI: {
        "what": "open-sci-ref (LAION / OpenEuroLLM) reference run of a 1.7B dense model "
                "(24 layers, hidden 2048, SwiGLU 8192, 32 heads, RoPE, QK-layernorm, tied "
                "embeddings, GPT-NeoX tokenizer) with Megatron-LM on 63 nodes x 4 A100 64GB of "
                "the Leonardo booster (CINECA), March 2025: TP 1, PP 1, DP 252, micro-batch 4, "
                "seq 4096, bf16, distributed optimizer with overlapped gradient reduce and "
                "parameter gather, selective (core attention) recomputation, flash attention. "
                "The Megatron memory report of rank 0 after 50 iterations.",
        "where": "OpenEuroLLM/notebooks@0daa1739c8b3d9da92806ff2f5b02e3df943d74e "
                 "logs-opensci-ref/parse_data.py (the docstring quotes the job's log: the "
                 "environment lines, the full pretrain_gpt.py command line, the parameter "
                 "counts and the first 350 iterations)",
        "measures": "max_memory_allocated, MB = 2^20 bytes: Megatron-LM report_memory prints "
                    "torch.cuda.max_memory_allocated() / (1024 * 1024) as \"max allocated\" "
                    "(megatron/training/utils.py), once, at the first log interval",
    },
}

# ---------------------------------------------------------------------------------------------
# Layout helpers
# ---------------------------------------------------------------------------------------------


def layout(tp=1, pp=1, cp=1, dp=1, mbs=1, gbs=None, seq=8192, sp=False, recompute="none",
           variant=None, zero=3, sharding="fsdp2", precision="bf16", fp8_recipe=None,
           framework="torchtitan", version="", features=(), optimizer="adamw",
           grad_fp32=True):
    return {
        "tp": tp, "pp": pp, "vpp": 1, "cp": cp, "ep": 1, "dp": dp,
        "micro_batch_size": mbs,
        "global_batch_size": gbs if gbs is not None else dp * mbs,
        "seq_length": seq,
        "sequence_parallel": sp,
        "recompute": recompute,
        "recompute_variant": variant,
        "recompute_method": None,
        "recompute_num_layers": None,
        "zero_stage": zero,
        "sharding": sharding,
        "precision": precision,
        "fp8_recipe": fp8_recipe,
        "pipeline_schedule": "none" if pp == 1 else "1f1b",
        "framework": framework,
        "framework_version": version,
        "features": list(features),
        "optimizer": optimizer,
        "grad_reduce_fp32": grad_fp32,
    }


def measured(kind, value, unit, rank, when, pp_stage=None):
    return {"kind": kind, "value": value, "unit": unit, "rank": rank, "pp_stage": pp_stage,
            "when": when}


TT_GRAD = ("grad_reduce_fp32: true -- torchtitan's mixed_precision_reduce defaults to float32 "
           "(FSDP2 MixedPrecisionPolicy reduce_dtype)")
TT_ROOT = ("fsdp-root-embeddings: torchtitan before pytorch/torchtitan@83e694105 (#1094, "
           "2025-07-28) made FSDP2 units of the blocks and of the root holding the embedding, "
           "the final norm and the output (apply_fsdp)")
TT_COMPOSITE = ("composite-rmsnorm: torchtitan@9dec370's RMSNorm (torchtitan/models/norms.py) "
                "normalises x.float() and autograd keeps the fp32 copy; no effect where the "
                "blocks are compiled")
TT_EAGER_LOSS = ("eager-loss: torchtitan compiled its blocks but not its loss until "
                 "pytorch/torchtitan@bbb1b616e (#1033, 2025-04-02)")

# ---------------------------------------------------------------------------------------------
# torchtitan benchmarks, December 2024 (Grand Teton H100 96GB)
# ---------------------------------------------------------------------------------------------

TT_VERSION = ("torchtitan@9dec370ad26b (2024-12-26), torch@1963fc83a1c3 (2024-12-23), "
              "torchao@eab345c2268a")
TT_REF = ("pytorch/torchtitan@%s benchmarks/llama3_h100_202412_torchtitan.md, %s"
          % (TT_COMMIT, "%s"))
TT_FOREACH = ("optimizer: torchtitan@9dec370 builds AdamW with foreach=not "
              "job_config.optimizer.fused, and fused defaults to false (torchtitan/optimizer.py, "
              "config_manager.py): the foreach AdamW of docs/memory.md's 'Not modelled' "
              "(torch._foreach_sqrt of exp_avg_sq as a temporary at the step), fused AdamW "
              "became the default only in 2025-02")


def tt_bench_rows():
    rows = []
    sys8 = ("system grand-teton-h100 (H100 96GB HBM2e, 500 W): the document's hardware section")
    t1 = [  # (id suffix, label, compiled, fp8, value)
        ("fsdp", "FSDP", False, False, 82.4),
        ("fsdp-compile", "FSDP + torch.compile", True, False, 77.0),
        ("fsdp-compile-float8", "FSDP + torch.compile + Float8", True, True, 76.8),
    ]
    for table, gpus, vals in (("Table 1", 8, (5762, 6667, 8532)),
                              ("Table 3", 128, (5605, 6514, 8380))):
        for (suffix, label, compiled, fp8, v), tps in zip(t1, vals):
            if table == "Table 3":
                v = {"fsdp": 67.0, "fsdp-compile": 62.0, "fsdp-compile-float8": 61.8}[suffix]
            feats = ["flash-attention"]
            if compiled:
                feats.insert(0, "torch.compile")
            if fp8:
                feats.append("torchao-float8")
            feats += ["fsdp-root-embeddings", "composite-rmsnorm", "eager-loss"]
            caption = ("%s 1D Parallelism (FSDP). Llama 3.1 8B model. %d GPUs. Local batch "
                       "size 2, global batch size %d. Selective activation checkpointing."
                       % (table, gpus, 2 * gpus))
            rows.append({
                "id": "tt-bench-202412-8b-%dgpu-%s" % (gpus, suffix),
                "source_id": TT_BENCH,
                "ref": TT_REF % ("\"%s\"" % caption),
                "quote": "| %s | %s | %.1f |" % (label, "{:,}".format(tps), v),
                "model": "llama3.1-8b",
                "system": "grand-teton-h100",
                "gpus": gpus,
                "layout": layout(dp=gpus, mbs=2, seq=8192, recompute="selective",
                                 variant="torchtitan-op-sac",
                                 precision="fp8" if fp8 else "bf16",
                                 fp8_recipe="tensorwise" if fp8 else None,
                                 version=TT_VERSION, features=feats),
                "dropout": {"attention": 0.0, "hidden": 0.0},
                "measured": measured("max_memory_reserved", v, "GiB",
                                     "rank 0 (torchtitan's launcher logs rank 0 only)",
                                     "read at the 90th iteration; the document says memory "
                                     "readings are stable over the run"),
                "assumed": [
                    sys8,
                    "seq_len 8192 and selective_ac_option 'op' (per-op selective "
                    "checkpointing): train_configs/llama3_8b.toml@9dec370; the caption says "
                    "only 'Selective activation checkpointing'",
                    "float8 rows: torchao's tensorwise dynamic scaling (the float8 default of "
                    "the time) without float8 all-gather (enable_fsdp_float8_all_gather is "
                    "false in the toml and the caption names no other flag); the output layer "
                    "kept in bf16 is not stated" if fp8 else
                    "bf16 mixed precision (FSDP2 param_dtype bf16 on fp32 parameters)",
                ],
                "derived": [
                    "dp %d = %d GPUs, FSDP2 only (data_parallel_shard_degree -1); global batch "
                    "%d = %d x local batch 2" % (gpus, gpus, 2 * gpus, gpus),
                    TT_GRAD, TT_ROOT, TT_COMPOSITE, TT_EAGER_LOSS, TT_FOREACH,
                ],
                "notes": "tokens/s per GPU %s; MFU 33-39 %% per the document (bf16)"
                         % "{:,}".format(tps),
            })
    # Table 2: FSDP + CP + torch.compile + Float8, local batch 1, full AC
    for dp, cp, seq, tps, v in ((8, 1, 32768, 3890, 83.9), (4, 2, 65536, 2540, 84.2),
                                (2, 4, 131072, 1071, 84.0), (1, 8, 262144, 548, 84.5)):
        rows.append({
            "id": "tt-bench-202412-8b-fsdp%d-cp%d-seq%dk" % (dp, cp, seq // 1024),
            "source_id": TT_BENCH,
            "ref": TT_REF % "\"Table 2 FSDP + CP + torch.compile + Float8. Llama 3.1 8B model. "
                            "8 GPUs. Local batch size 1. Full activation checkpointing.\"",
            "quote": "| FSDP %d, CP %d | %d | %s | %.1f |" % (dp, cp, seq, "{:,}".format(tps), v),
            "model": "llama3.1-8b",
            "system": "grand-teton-h100",
            "gpus": 8,
            "layout": layout(dp=dp, cp=cp, mbs=1, seq=seq, recompute="full",
                             precision="fp8", fp8_recipe="tensorwise", version=TT_VERSION,
                             features=["torch.compile", "flash-attention", "torchao-float8",
                                       "fsdp-root-embeddings", "composite-rmsnorm",
                                       "eager-loss"]),
            "dropout": {"attention": 0.0, "hidden": 0.0},
            "measured": measured("max_memory_reserved", v, "GiB",
                                 "rank 0 (torchtitan's launcher logs rank 0 only)",
                                 "read at the 90th iteration; the document says memory "
                                 "readings are stable over the run"),
            "assumed": [
                sys8,
                "float8: torchao tensorwise dynamic scaling without float8 all-gather (the "
                "toml's default; the caption names no other flag)",
                "full activation checkpointing per block (torchtitan's 'full' mode wraps each "
                "TransformerBlock in checkpoint_wrapper)",
            ],
            "derived": [
                "FSDP %d x CP %d = 8 GPUs: torchtitan shards parameters over the dp_shard x cp "
                "mesh (FSDP over all 8), here as dp %d, cp %d; global batch = dp x local "
                "batch 1" % (dp, cp, dp, cp),
                TT_GRAD, TT_ROOT, TT_COMPOSITE, TT_EAGER_LOSS, TT_FOREACH,
            ],
            "notes": "tokens/s per GPU %s" % "{:,}".format(tps),
        })
    # Table 4: 70B, FSDP 32 x TP 8, local batch 16, full AC, compile, float8
    for suffix, label, tps, v, feats in (
            ("2d", "2D", 829, 71.9, []),
            ("2d-asynctp", "2D + AsyncTP", 876, 67.6, ["async-tp"])):
        rows.append({
            "id": "tt-bench-202412-70b-fsdp32-tp8-%s" % suffix,
            "source_id": TT_BENCH,
            "ref": TT_REF % "\"Table 4 2D parallelism (FSDP + TP) + torch.compile + Float8. "
                            "Llama 3.1 70B model. 256 GPUs (FSDP 32, TP 8). Local batch size "
                            "16, global batch size 512. Full activation checkpointing.\"",
            "quote": "| %s | %d | %.1f |" % (label, tps, v),
            "model": "llama3.1-70b",
            "system": "grand-teton-h100",
            "gpus": 256,
            "layout": layout(tp=8, dp=32, mbs=16, gbs=512, seq=8192, sp=True,
                             recompute="full", precision="fp8", fp8_recipe="tensorwise",
                             version=TT_VERSION,
                             features=["torch.compile", "flash-attention", "torchao-float8",
                                       "fsdp-root-embeddings", "composite-rmsnorm",
                                       "eager-loss"] + feats),
            "dropout": {"attention": 0.0, "hidden": 0.0},
            "measured": measured("max_memory_reserved", v, "GiB",
                                 "rank 0 (torchtitan's launcher logs rank 0 only)",
                                 "read at the 90th iteration; the document says memory "
                                 "readings are stable over the run"),
            "assumed": [
                sys8,
                "seq_len 8192: train_configs/llama3_70b.toml@9dec370 (the caption gives the "
                "batch, not the sequence)",
                "float8: torchao tensorwise dynamic scaling without float8 all-gather (the "
                "70B toml of the time has float8 off and no all-gather flag; the caption says "
                "only 'Float8')",
                "local batch 16 is the micro-batch: torchtitan of the time had no gradient "
                "accumulation (global batch 512 = FSDP 32 x 16)",
            ],
            "derived": [
                "sequence_parallel: torchtitan's tensor parallel plan shards the norms and the "
                "residual stream over the sequence (SequenceParallel on attention_norm and "
                "ffn_norm, parallelize_llama.py apply_tp), with loss parallelism on",
                TT_GRAD, TT_ROOT, TT_EAGER_LOSS, TT_FOREACH,
            ],
            "notes": "tokens/s per GPU %d" % tps,
        })
    # Tables 5 and 6: 405B, FSDP + TP 8 + PP 8, compile, float8 with all-gather, AsyncTP,
    # full AC; the maximum over all GPUs
    pp_common_assumed = [
        sys8,
        "float8 with float8 all-gather and precomputed scales, AsyncTP, compile, full "
        "checkpointing: train_configs/llama3_405b.toml@9dec370 (enable_float8_linear, "
        "enable_fsdp_float8_all_gather, precompute_float8_dynamic_scale_for_fsdp, "
        "enable_async_tensor_parallel, compile true, mode 'full') and the captions",
        "micro-batches: torchtitan@9dec370's default pipeline_parallel_microbatches is the "
        "number of pipeline stages (config_manager.py), so the local batch is split in 8 "
        "(1F1B: one stage per rank) or 16 (Interleaved1F1B: two stages per rank, "
        "pipelining_utils.generate_split_points)",
        "layers: generate_split_points gives the 126 layers to 8 or 16 stages, 15 or 7-8 "
        "each with the remainder in the middle stages; the estimate takes the same split "
        "(bench/runs.c bench_split_settle: the embedding and the loss counted as layers, "
        "15, 16 x 6, 15 and 7, 8 x 14, 7)",
    ]
    for suffix, label, tps, v, vpp, mbs in (
            ("1f1b", "1F1B", 100, 82.5, 1, 4),
            ("interleaved-1f1b", "Interleaved 1F1B", 128, 72.7, 2, 2)):
        lay = layout(tp=8, pp=8, dp=8, mbs=mbs, gbs=256, seq=8192, sp=True,
                     recompute="full", precision="fp8", fp8_recipe="tensorwise",
                     version=TT_VERSION,
                     features=["torch.compile", "flash-attention", "torchao-float8",
                               "fp8-param-gather",
                               "precompute-float8-dynamic-scale-for-fsdp", "async-tp",
                               "fsdp-root-embeddings", "composite-rmsnorm", "eager-loss"])
        lay["vpp"] = vpp
        lay["pipeline_schedule"] = "interleaved-1f1b" if vpp > 1 else "1f1b"
        rows.append({
            "id": "tt-bench-202412-405b-fsdp8-tp8-pp8-%s" % suffix,
            "source_id": TT_BENCH,
            "ref": TT_REF % "\"Table 5 3D parallelism (FSDP + TP + PP) + torch.compile + Float8 "
                            "+ AsyncTP. Llama 3.1 405B model. 512 GPUs (FSDP 8, TP 8, PP8). "
                            "Local batch size 32, global batch size 256. Full activation "
                            "checkpointing.\"",
            "quote": "| %s | %d | %.1f |" % (label, tps, v),
            "model": "llama3.1-405b",
            "system": "grand-teton-h100",
            "gpus": 512,
            "layout": lay,
            "dropout": {"attention": 0.0, "hidden": 0.0},
            "measured": measured("max_memory_reserved", v, "GiB",
                                 "the largest over all GPUs (the document's footnote: "
                                 "'Different PP ranks can have different peak memory usages. "
                                 "We take the maximum across all GPUs.')",
                                 "read at the 90th iteration"),
            "assumed": pp_common_assumed,
            "derived": [
                "micro-batch %d = local batch 32 / %d micro-batches; global batch 256 = FSDP "
                "8 x 32" % (mbs, 32 // mbs),
                "sequence_parallel: torchtitan's TP plan (SequenceParallel on the norms)",
                TT_GRAD, TT_ROOT, TT_EAGER_LOSS, TT_FOREACH,
            ],
            "notes": "tokens/s per GPU %d; with PP torchtitan keeps each stage's weights "
                     "gathered through the step (reshard_after_forward off)" % tps,
        })
    for dp, cp, seq, tps, v in ((8, 1, 32768, 76, 75.3), (4, 2, 65536, 47, 75.9),
                                (2, 4, 131072, 31, 77.1), (1, 8, 262144, 16, 84.9)):
        rows.append({
            "id": "tt-bench-202412-405b-4d-fsdp%d-cp%d-seq%dk" % (dp, cp, seq // 1024),
            "source_id": TT_BENCH,
            "ref": TT_REF % "\"Table 6 4D parallelism (FSDP + TP + PP + CP) + torch.compile + "
                            "Float8 + AsyncTP + 1F1B. Llama 3.1 405B model. 512 GPUs (TP 8, "
                            "PP8). Local batch size 8. Full activation checkpointing.\"",
            "quote": "| FSDP %d, CP %d | %d | %d | %.1f |" % (dp, cp, seq, tps, v),
            "model": "llama3.1-405b",
            "system": "grand-teton-h100",
            "gpus": 512,
            "layout": layout(tp=8, pp=8, dp=dp, cp=cp, mbs=1, gbs=8 * dp, seq=seq, sp=True,
                             recompute="full", precision="fp8", fp8_recipe="tensorwise",
                             version=TT_VERSION,
                             features=["torch.compile", "flash-attention", "torchao-float8",
                                       "fp8-param-gather",
                                       "precompute-float8-dynamic-scale-for-fsdp",
                                       "async-tp", "fsdp-root-embeddings",
                                       "composite-rmsnorm", "eager-loss"]),
            "dropout": {"attention": 0.0, "hidden": 0.0},
            "measured": measured("max_memory_reserved", v, "GiB",
                                 "the largest over all GPUs (the document's footnote)",
                                 "read at the 90th iteration"),
            "assumed": pp_common_assumed,
            "derived": [
                "micro-batch 1 = local batch 8 / 8 micro-batches (1F1B); global batch = FSDP "
                "%d x 8" % dp,
                "FSDP %d x CP %d x TP 8 x PP 8 = 512 GPUs" % (dp, cp),
                TT_GRAD, TT_ROOT, TT_EAGER_LOSS, TT_FOREACH,
            ],
            "notes": "tokens/s per GPU %d" % tps,
        })
    return rows


# ---------------------------------------------------------------------------------------------
# Trainy on WhiteFiber H200, June 2025
# ---------------------------------------------------------------------------------------------


def trainy_rows():
    rows = []
    for nodes, tps, v in ((4, 10938, 47.96), (8, 10753, 46.97)):
        gpus = 8 * nodes
        rows.append({
            "id": "trainy-h200-llama3.1-8b-%dgpu-float8" % gpus,
            "source_id": TRAINY,
            "ref": "pytorch/torchtitan@%s benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md,"
                   " Results table (NUM_NODES %d)" % (TT_COMMIT, nodes),
            "quote": "| %d | %d | %.2f |" % (nodes, tps, v),
            "model": "llama3.1-8b",
            "system": "dgx-h200",
            "gpus": gpus,
            "layout": layout(dp=gpus, mbs=2, seq=8192, recompute="selective",
                             variant="torchtitan-op-sac", precision="fp8",
                             fp8_recipe="tensorwise",
                             version="torchtitan@e7c0cae934df (2025-06-13), torchao@0afa4c1, "
                                     "torch 2.8.0a0+5228986c39 (NGC 25.05)",
                             features=["torch.compile", "flash-attention", "torchao-float8",
                                       "fp8-param-gather",
                                       "precompute-float8-dynamic-scale-for-fsdp",
                                       "force-recompute-fp8-weight-in-bwd",
                                       "fsdp-root-embeddings", "composite-rmsnorm"]),
            "dropout": {"attention": 0.0, "hidden": 0.0},
            "measured": measured("max_memory_reserved", v, "GiB",
                                 "rank 0 (torchtitan's launcher logs rank 0 only)",
                                 "sampled at the 100th iteration (2000-step run)"),
            "assumed": [
                "system dgx-h200: 'Each host has 8 NVIDIA H200 GPUs connected via NVLink', "
                "400 Gb/s CX-7 per GPU",
            ],
            "derived": [
                "layout: torchtitan@e7c0cae llama3_8b.toml (seq_len 8192, "
                "data_parallel_shard_degree -1, activation_checkpoint selective/op) with the "
                "document's flags --training.local_batch_size=2 --training.compile "
                "--model.converters=float8 --float8.enable_fsdp_float8_all_gather "
                "--float8.precompute_float8_dynamic_scale_for_fsdp "
                "--float8.force_recompute_fp8_weight_in_bwd",
                "dp %d = %d nodes x 8 GPUs, FSDP2 only; global batch %d" % (gpus, nodes, 2 * gpus),
                TT_GRAD, TT_ROOT,
                "the loss compiled: pytorch/torchtitan@bbb1b616e (#1033, 2025-04-02) wraps the "
                "loss in torch.compile whenever --training.compile is given",
                "fused AdamW: torchtitan's optimizer implementation defaults to 'fused' "
                "(config_manager.py@e7c0cae)",
            ],
            "notes": "tokens/s per GPU %d; fp8-param-gather: torchao's float8 all-gather "
                     "casts each block's weights to fp8 before FSDP2 gathers them" % tps,
        })
    return rows


# ---------------------------------------------------------------------------------------------
# Crusoe Cloud, torchtitan v0.2.2, 2026
# ---------------------------------------------------------------------------------------------

CRUSOE_RUNS = [
    # gpu label, driver, nodes, gpus, batch, step, loss, grad_norm, GiB, pct, tps, tflops, mfu
    ("GB200", "580/CUDA 13.0", 17, 68, 5, "6.4277", "2.9062", 158.61, "86.20", "17,581",
     "1,018.20", "45.25"),
    ("GB200", "580/CUDA 13.0", 9, 36, 5, "8.2954", "29.3788", 159.31, "86.58", "17,975",
     "1,040.99", "46.27"),
    ("GB200", "580/CUDA 13.0", 3, 12, 5, "6.5572", "3.6680", 161.65, "87.85", "18,284",
     "1,058.93", "47.06"),
    ("B200", "580/CUDA 13.0", 2, 16, 5, "6.1751", "1.4532", 161.51, "90.56", "17,500",
     "1,013.53", "45.05"),
    ("B200", "580/CUDA 13.0", 1, 8, 5, "6.3314", "4.0237", 165.16, "92.60", "17,469",
     "1,011.68", "44.96"),
    ("H200", "570/CUDA 12.8", 16, 128, 4, "7.2984", "5.6297", 128.17, "91.66", "9,044",
     "523.76", "52.96"),
    ("H200", "570/CUDA 12.8", 8, 64, 4, "6.14398", "1.8245", 128.79, "92.11", "8,844",
     "512.21", "51.79"),
    ("H200", "570/CUDA 12.8", 4, 32, 4, "6.15755", "1.5348", 129.80, "92.84", "8,895",
     "515.14", "52.09"),
    ("H100", "570/CUDA 12.8", 16, 128, 2, "6.3626", "5.2285", 66.38, "83.83", "7,169",
     "415.21", "41.98"),
    ("H100", "570/CUDA 12.8", 4, 32, 2, "6.35632", "4.4844", 67.96, "85.82", "7,582",
     "439.14", "44.40"),
    ("H100", "580/CUDA 13.0", 2, 16, 2, "6.47847", "2.8199", 69.85, "88.21", "8,714",
     "504.69", "51.03"),
]

CRUSOE_SYSTEM = {
    "GB200": ("gb200-nvl72", "GB200 NVL72 compute trays of 4 GPUs (the README's GB200 nodes, "
                             "one IMEX partition)"),
    "B200": ("dgx-b200", "HGX B200 hosts of 8 GPUs (Crusoe's B200.8x)"),
    "H200": ("dgx-h200", "HGX H200 hosts of 8 GPUs"),
    "H100": ("eos", "HGX H100 80GB SXM hosts of 8 GPUs; eos is the hwdb's DGX H100 system (the "
                    "network does not enter a memory figure)"),
}


def crusoe_rows():
    rows = []
    for (label, driver, nodes, gpus, batch, loss, gn, gib, pct, tps, tflops,
         mfu) in CRUSOE_RUNS:
        system, sysnote = CRUSOE_SYSTEM[label]
        device = gib / (float(pct) / 100)
        line = ("step: 100  loss:  %s  grad_norm:  %s  memory: %.2fGiB(%s%%)  tps: %s  "
                "tflops: %s  mfu: %s%%" % (loss, gn, gib, pct, tps, tflops, mfu))
        row = {
            "id": "crusoe-torchtitan-%s-%dgpu-b%d" % (label.lower(), gpus, batch),
            "source_id": CRUSOE,
            "ref": "crusoecloud/distributed-torchrun-on-slurm@e7c38d4f6c78 torchtitan/README.md,"
                   " 'Torchtitan performance results for various cluster configs' table, row "
                   "%s %s %d (%d GPU) batch %d" % (label, driver, nodes, gpus, batch),
            "quote": line,
            "model": "llama3.1-8b",
            "system": system,
            "gpus": gpus,
            "layout": layout(dp=gpus, mbs=batch, seq=8192, recompute="selective",
                             variant="torchtitan-op-sac",
                             version="torchtitan v0.2.2 (73a0e6979dd1, 2026-02-20) with a "
                                     "PyTorch nightly of early 2026 (driver %s)" % driver,
                             features=["flash-attention", "gqa-native"]),
            "dropout": {"attention": 0.0, "hidden": 0.0},
            "measured": measured("max_memory_reserved", gib, "GiB",
                                 "rank 0 (torchtitan's launcher logs rank 0; the README shows "
                                 "one log line)",
                                 "the log line of step 100 (the peak since step 90's line)"),
            "assumed": [
                "system %s: %s; the log line's percentage puts the device at %.1f GiB"
                % (system, sysnote, device),
                "layout: torchtitan/llama3_8b-gb200.toml@e82e695 (local_batch_size 5, seq_len "
                "8192, data_parallel_shard_degree -1, tensor/pipeline/context parallel 1, "
                "compile off, activation_checkpoint selective/op, float8 off), which the "
                "README tells the reader to use; the other GPUs' rows change only the "
                "'Batch size' column (here %d)" % batch,
                "torchtitan v0.2.2: the README of 2026-04-01 says 'We have validated v0.2.2'; "
                "the GB200 rows were first published on 2026-01-28, when the README had the "
                "reader clone torchtitan's main branch",
            ],
            "derived": [
                "dp %d = %d nodes x %d GPUs, FSDP2 only; global batch %d = %d x local batch %d"
                % (gpus, nodes, gpus // nodes, gpus * batch, gpus, batch),
                TT_GRAD,
                "FSDP2 units: each block and, since pytorch/torchtitan@83e694105 (#1094), the "
                "embedding and the [final norm, output] as units of their own (no "
                "fsdp-root-embeddings)",
                "no composite-rmsnorm: a PyTorch nightly of 2026 has the fused "
                "aten::_fused_rms_norm",
                "eager (compile off): the blocks and the loss run op by op",
                "fused AdamW: torchtitan's optimizer implementation defaults to 'fused'",
            ],
            "notes": "torchtitan v0.2.2 passes grouped keys and values to SDPA unrepeated "
                     "(enable_gqa, pytorch/torchtitan@ff0829c10 #2259, 2026-01-27) and puts "
                     "cuDNN attention first among SDPA's backends "
                     "(torchtitan/models/attention.py); the estimate assumes torchtitan's "
                     "repeat_kv, 4(q - kv)/t bytes per token and layer more",
        }
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------------
# open-sci-ref 1.7B with Megatron-LM on Leonardo, March 2025
# ---------------------------------------------------------------------------------------------


def opensci_rows():
    model = {
        "model_type": "llama",
        "num_hidden_layers": 24,
        "hidden_size": 2048,
        "intermediate_size": 8192,
        "num_attention_heads": 32,
        "num_key_value_heads": 32,
        "vocab_size": 50304,
        "max_position_embeddings": 4096,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-05,
        "tie_word_embeddings": True,
        "attention_bias": True,
        "mlp_bias": True,
    }
    lay = layout(tp=1, pp=1, dp=252, mbs=4, gbs=1008, seq=4096, sp=False,
                 recompute="selective", variant="megatron-recompute-modules:core_attn",
                 zero=1, sharding="distributed-optimizer", precision="bf16",
                 framework="megatron-core",
                 version="Megatron-LM of March 2025 (Megatron-Core with Transformer Engine; "
                         "the commit is not in the log)",
                 features=["overlap-grad-reduce", "overlap-param-gather",
                           "transformer-engine", "attention-backend=flash"],
                 optimizer="adam")
    return [{
        "id": "opensci-ref-1.7b-leonardo-252gpu-mbs4",
        "source_id": OPENSCI,
        "ref": "OpenEuroLLM/notebooks@0daa1739c8b3 logs-opensci-ref/parse_data.py, the module "
               "docstring's log of job open-sci-ref_model-1.7b_data-Nemotron-cc-2024-HQ-real-"
               "synth-mix_samples-1000B_global_bs-1008_context-4096_rotary-100000_schedule-WSD"
               "_lr-4e-3_warmup-25000_machine-LEONARDO",
        "quote": "[lrdn0137:0]:[Rank 0] (after 50 iterations) memory (MB) | allocated: "
                 "9909.07763671875 | max allocated: 50277.15625 | reserved: 53386.0 | max "
                 "reserved: 53386.0",
        "model": model,
        "system": "perlmutter-80g",
        "gpus": 252,
        "layout": lay,
        "dropout": {"attention": 0.1, "hidden": 0.1},
        "measured": measured("max_memory_allocated", 50277.15625, "MiB",
                             "global rank 0 (the first data-parallel rank; TP 1, PP 1, so "
                             "every rank holds the same)",
                             "torch.cuda.max_memory_allocated() since the start, printed after "
                             "iteration 50 (--log-interval 50): 50 full steps, optimizer "
                             "states allocated in the first"),
        "assumed": [
            "system perlmutter-80g stands in for Leonardo's booster: the same GPU die and "
            "node shape (4 A100 SXM4 per node) but 80 GB instead of Leonardo's 64 GB (the "
            "hwdb has no A100 64GB); the allocated estimate does not depend on the capacity, "
            "and the peak is above half the GPU's memory with either",
            "attention: --use-flash-attn with Transformer Engine's layers (Megatron-Core's "
            "default local spec when TE is installed); the log does not name the backend",
            "dropout 0.1 and 0.1: Megatron-LM's defaults (--attention-dropout, "
            "--hidden-dropout), which the command line does not set",
            "QK-layernorm (--qk-layernorm): its parameters are counted by nothing here (256 "
            "per layer) and its saved inputs (q and k, about 2 x 2 x 2h bytes per token and "
            "layer) are not in the estimate",
        ],
        "derived": [
            "model: --num-layers 24 --hidden-size 2048 --ffn-hidden-size 8192 --swiglu "
            "--num-attention-heads 32 --position-embedding-type rope --normalization RMSNorm "
            "--norm-epsilon 1e-5; biases kept (no --disable-bias-linear); embeddings tied (no "
            "--untie-embeddings-and-output-weights); 1,714,374,656 parameters here against "
            "the log's 'Total number of parameters in billions: 1.71'",
            "vocab_size 50304: the GPT-NeoX-20B tokenizer's 50,277 tokens padded to a "
            "multiple of 128 x TP (--make-vocab-size-divisible-by 128)",
            "dp 252 = 63 nodes x 4 GPUs / (TP 1 x PP 1); micro-batch 4, global batch 1008, "
            "so one micro-batch per step (GRADIENT_ACCUMULATION_STEPS: 1 in the log)",
            "sequence_parallel false: Megatron-LM turns --sequence-parallel off at TP 1 "
            "(megatron/training/arguments.py)",
            "recompute: --recompute-activations = --recompute-granularity selective, whose "
            "default --recompute-modules is core_attn",
            "distributed optimizer over the 252 data-parallel ranks; bf16 gradients reduced "
            "in fp32 (Megatron-LM's bf16 default)",
            "value: MB in Megatron's report is 2^20 bytes (report_memory divides by 1024 x "
            "1024)",
        ],
        "notes": "Theoretical memory footprints: weight and optimizer=9884.48 MB in the same "
                 "log (Megatron's own count of weights, gradients and optimizer states)",
    }]


def main():
    path = os.path.join(HERE, "memory_runs.json")
    with open(path) as f:
        d = json.load(f)
    new = tt_bench_rows() + trainy_rows() + crusoe_rows() + opensci_rows()
    for k, v in SOURCES.items():
        d["sources"][k] = v
    d["runs"] = [r for r in d["runs"] if r["source_id"] not in SOURCES] + new
    ids = [r["id"] for r in d["runs"]]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        sys.stderr.write("make_public_peak_runs: duplicate ids: %s\n" % ", ".join(dup))
        return 1
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(json.dumps(d, indent=1, ensure_ascii=False))
    os.replace(tmp, path)
    for k in SOURCES:
        print("%s: %d rows of %s" % (path, sum(r["source_id"] == k for r in d["runs"]), k))
    return 0


if __name__ == "__main__":
    sys.exit(main())
