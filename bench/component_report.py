#!/usr/bin/env python3
"""Component report: each operator model of the estimator checked on its own
against every measurement it can be checked against, so that an error shows
per component instead of hiding in an end-to-end constant (issue 15).

Four sections, every figure from the trainplan binary given:
  1. in-sample fit quality: `trainplan op cv` (k-fold, hidden-size and
     sequence-length extrapolation) per sample file of every GPU with samples;
  2. held-out checks: published kernel times the fits never saw
     (bench/data/kernel_checks/, sources in its README.md) against the time
     `trainplan op show` says the estimator uses, per row and as MAPE and mean
     signed error per pass;
  3. roofline checks: the share of shapes where the raw fit falls below the
     physical floor (or an fp8 GEMM below half its 16-bit time) and is raised
     to it, over the sampled shapes and over a sweep beyond the grid;
  4. what this says: the checks ranked by their signed error.

It does not tune anything: it reports. Signed error = model time / published
time - 1, so + means the model is slower than the measurement.

Usage: python3 bench/component_report.py build/trainplan [--md bench/results/components.md]
       [--jobs N] [--per-file N]
Standard library only. Deterministic: the same binary and hwdb give the same
bytes at any --jobs (results are gathered in query order, never in finishing
order). About two minutes on two cores.
"""
import argparse
import csv
import itertools
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, "bench", "data", "kernel_checks")
GPUS_DIR = os.path.join(REPO, "hwdb", "data", "gpus")

# The GPUs hwdb holds operator samples of (issue 15's list).
SAMPLED_GPUS = ["a100-80gb", "gh200", "h100-sxm", "b200", "mi300x", "mi355x"]

# Shape columns of the sample format (estimator/samples.c, est_col_names).
SHAPE_COLS = ("mp", "b", "h", "l", "dim", "m", "n", "k", "params")

# Passes: name, published column, op show field(s) summed.
PASSES = [
    ("fwd", "F_dur(us)", ("time_fwd_s",)),
    ("bwd", "B_dur(us)", ("time_bwd_s",)),
    ("fwd+bwd", "FB_dur(us)", ("time_fwd_s", "time_bwd_s")),
]

# The shape sweep of section 3, per sample column: the corners of what a
# training step asks for (1 and 8 TP ranks, 2k and 32k tokens, 4k and 16k
# hidden, GEMM sides from 256 to 64k). h follows dim (head dim 128).
SWEEP = {
    "mp": (1, 8), "b": (1, 4), "l": (2048, 32768), "dim": (4096, 16384),
    "h": (32, 128), "m": (256, 4096, 65536), "n": (256, 4096, 65536),
    "k": (256, 4096, 65536), "params": (10**7, 10**9, 10**11),
}

FA3 = ("Shah, Bikshandi, Zhang, Thakkar, Ramani, Dao, \"FlashAttention-3: Fast "
       "and Accurate Attention with Asynchrony and Low-precision\", arXiv "
       "2407.08608v2 (2024-07-12)")
CUDNN_FE = "NVIDIA/cudnn-frontend (MIT at the commits used)"
H100_SAMPLER = ("our H100 sampler's samples (bench/sampler, PyTorch 2.11, cuDNN "
                "9.19, CUDA 13.0, clocks unlocked up to 1980 MHz, 700 W; "
                "hwdb/data/measured/h100-sxm/README.md)")

FBGEMM_SRC = ("pytorch/FBGEMM pull request #2546 (2024-04-29, \"Add fp8 row/block-wise "
              "scaled GEMMs\"), description: TFLOP/s and ms per shape, converted with "
              "t = 2mnk / TFLOP/s")
FBGEMM_COND = ("\"H100 500W\" (power-capped; form factor and memory not stated); "
               "FBGEMM's CUTLASS kernels of April 2024; shapes 8192^3, 65536x8192x7168, "
               "65536x3584x8192.")
FBGEMM_POWER = ("500 W against the 700 W our samples ran at: at these large shapes "
                "the clock is power-bound, so the model is expected to be fast here.")
FP8_MODEL = ("`gemm --dtype fp8` on h100-sxm: fitted to XLA's sm90 fp8 GEMM table "
             "(cuBLAS GEMMs with per-tensor scales), never faster than half the bf16 "
             "GEMM of the same shape")

TORCHAO_SRC = ("pytorch/ao pull request #2427 ('add-to-benchmarks', 2025-06-23, merged as "
               "faf788a1), description: benchmarks/float8/bench_matmul.py --recipe nvfp4, "
               "time_sec per square shape")
TORCHAO_COND = ("'NVIDIA B200' (peaks printed for the 1,000 W HGX part); GEMM kernel GPU "
                "time from the profiler (use_gpu_kernel_time), quantisation not timed; "
                "bf16 through nn.Linear, NVFP4 through torch._scaled_mm (cuBLAS), bf16 out; "
                "clock, power, CUDA and cuBLAS versions not stated.")
FP4_MODEL = ("`gemm --dtype fp4` on b200: no fit; the fp4 roofline held to the bf16 GEMM "
             "of the shape over b200's fp4_gemm_speedup (3.78) and to the fp8 "
             "GEMM at the fp8 / fp4 peak ratio, the slower")

# The held-out checks. Each file: (CSV in bench/data/kernel_checks, the op
# name `op show` takes, dtype). "alt": another hwdb GPU the source could be
# (the source does not name it, or names a power limit another part has);
# its summary is printed beside. "groups": GROUPS keys whose values split
# the summary.
CHECKS = [
    {
        "id": "fa2-h100-fa3paper",
        "title": "FlashAttention-2 2.5.8 on H100 SXM (FlashAttention-3 paper)",
        "gpu": "h100-sxm",
        "files": [("h100_fa2-2.5.8_flash_atten_fp16.csv", "flash_atten", "fp16"),
                  ("h100_fa2-2.5.8_flash_atten_causal_fp16.csv", "flash_atten_causal", "fp16")],
        "source": FA3 + ", Fig. 5 (forward) and Fig. 6 (backward, non-causal, head "
                  "dims 64 and 128 only): the FlashAttention-2 bars, TFLOP/s converted "
                  "to time with the paper's FLOP convention.",
        "conditions": "H100 80GB SXM5, 700 W, SM clock locked at 1830 MHz; CUDA 12.3, "
                      "PyTorch 2.3.0, flash-attn 2.5.8; fp16; mean of 100 runs; "
                      "batch x seqlen = 16k tokens, hidden 2048, head dim 64/128/256.",
        "model": "`flash_atten` / `flash_atten_causal` on h100-sxm: fitted to " + H100_SAMPLER
                 + ", PyTorch SDPA's FlashAttention-2 kernels.",
        "caveats": ["The paper locked the clock at 1830 MHz; our samples ran unlocked "
                    "(up to 1980 MHz, 8 % more where power allows).",
                    "flash-attn 2.5.8 against PyTorch 2.11's vendored FlashAttention-2."],
        "groups": ["hd", "s"],
    },
    {
        "id": "fa2-h100-readme",
        "title": "FlashAttention-2 (July 2023) on H100 SXM, forward + backward "
                 "(flash-attention README figure)",
        "gpu": "h100-sxm",
        "files": [("h100_fa2-2023-07_flash_atten_fwdbwd_fp16.csv", "flash_atten", "fp16"),
                  ("h100_fa2-2023-07_flash_atten_causal_fwdbwd_fp16.csv",
                   "flash_atten_causal", "fp16")],
        "source": "Dao-AILab/flash-attention, assets/flash2_h100_fwd_bwd_benchmark.png "
                  "@4f285b35 (README section \"H100\"), \"Attention forward + backward "
                  "speed (H100 80GB SXM5)\", the FlashAttention-2 bars; TFLOP/s with the "
                  "repository's fwd_bwd convention (3.5 x the forward FLOPs).",
        "conditions": "H100 80GB SXM5; clock, power and software versions not stated "
                      "(flash-attn 2.0 era, July 2023); fp16/bf16; batch x seqlen = 16k "
                      "tokens, hidden 2048, head dim 64/128.",
        "model": "`flash_atten` / `flash_atten_causal` on h100-sxm, forward + backward "
                 "time summed: fitted to " + H100_SAMPLER + ".",
        "caveats": ["The only published causal backward of FlashAttention-2 on H100 "
                    "found (the FA3 paper has none); the bottom row's panel captions are "
                    "cut off in the PNG, and its values are read as causal (the PyTorch "
                    "bars in those panels are a third of the top row's)."],
        "groups": ["hd", "s"],
    },
    {
        "id": "fa2-hopper-pytorch",
        "title": "PyTorch SDPA FlashAttention-2 on an unnamed Hopper GPU "
                 "(cudnn-frontend benchmark, 2024)",
        "gpu": "h100-sxm", "alt": "h200",
        "files": [("hopper-unnamed_pytorch-sdpa-flash_flash_atten_bf16.csv", "flash_atten", "bf16"),
                  ("hopper-unnamed_pytorch-sdpa-flash_flash_atten_causal_bf16.csv",
                   "flash_atten_causal", "bf16")],
        "source": CUDNN_FE + ", benchmark/benchmark_results.csv @61100c86 (2024-09-20), "
                  "columns \"Pytorch FWD/BWD (TFLOPs/s)\" (torch SDPA, which the "
                  "benchmark's README says does not use cuDNN: its flash backend), "
                  "converted with the script's flops() (FA convention).",
        "conditions": "GPU not named (the README's clock-locking example is an H200: "
                      "-ac 3201,1980, -pl 700); container nvcr.io/nvidia/pytorch:24.07-py3; "
                      "bf16, 16 heads, head dim 128, (b, s) = (4, 4k) ... (1, 64k); "
                      "torch.utils.benchmark wall time, 30 repeats.",
        "model": "`flash_atten` / `flash_atten_causal` on h100-sxm (alt: h200, which "
                 "borrows h100-sxm's fits): fitted to " + H100_SAMPLER + ".",
        "caveats": ["GPU identity unknown (H100 or H200: the same 989 TFLOP/s dense "
                    "peak; these shapes are compute-bound)."],
    },
    {
        "id": "cudnn-hopper",
        "title": "cuDNN fused attention on an unnamed Hopper GPU (cudnn-frontend "
                 "benchmark, 2024)",
        "gpu": "h100-sxm", "alt": "h200",
        "files": [("hopper-unnamed_cudnn-9.x-2024_flash_atten_bf16.csv", "flash_atten_cudnn", "bf16"),
                  ("hopper-unnamed_cudnn-9.x-2024_flash_atten_causal_bf16.csv",
                   "flash_atten_cudnn_causal", "bf16")],
        "source": CUDNN_FE + ", benchmark/benchmark_results.csv @61100c86 (2024-09-20), "
                  "columns \"cuDNN BF16 FWD/BWD (TFLOPs/s)\", converted with the "
                  "script's flops() (FA convention).",
        "conditions": "GPU not named (see above); cuDNN 9.x from apt on "
                      "nvcr.io/nvidia/pytorch:24.07-py3, cudnn-frontend 1.7.0; bf16, "
                      "16 heads, head dim 128, seqlen 4k-64k.",
        "model": "`flash_atten_cudnn*` on h100-sxm (alt: h200): one fit, causal and not, "
                 "to the FA3 paper's cuDNN 9.1.1 bars (H100) and cudnn-frontend's "
                 "cuDNN 9.19 rows (H200) in hwdb/data/measured/h100-sxm/.",
        "caveats": ["GPU identity unknown; a cuDNN version between the two the fit "
                    "pools (9.1.1 and 9.19)."],
    },
    {
        "id": "cudnn-gb200",
        "title": "cuDNN 9.22 fused attention on GB200 (cudnn-frontend)",
        "gpu": "gb200",
        "files": [("gb200_cudnn-9.22_flash_atten_bf16.csv", "flash_atten_cudnn", "bf16"),
                  ("gb200_cudnn-9.22-gqa64q8kv_flash_atten_bf16.csv", "flash_atten_cudnn", "bf16"),
                  ("gb200_cudnn-9.22-gqa64q8kv_flash_atten_causal_bf16.csv",
                   "flash_atten_cudnn_causal", "bf16")],
        "source": CUDNN_FE + " @3929da2e, benchmark/sdpa_benchmark_training/results/"
                  "{wan22,ltx2,llama3.1}/gb200/*_20260424_*.csv: kernel times in ms, "
                  "copied x 1000 (non-deterministic backward).",
        "conditions": "NVIDIA GB200 (up to 1200 W); cuDNN 9.22.0 (backend 92200), "
                      "cudnn-frontend 1.21.1; bf16; torch-profiler kernel time, 256 MB L2 "
                      "flush, median after 5 warm-ups; clock not stated. MHA file: Wan2.2 "
                      "(40 heads) and LTX-2 (32 heads), head dim 128, b = 1, non-causal; "
                      "GQA files: Llama 3.1, 64 query / 8 KV heads, head dim 128, b = 2.",
        "model": "`flash_atten_cudnn*` on gb200: b200's fit (cudnn-frontend cuDNN 9.13.1, "
                 "B200, free clock, causal GQA rows only) applied to gb200's own peaks "
                 "(2.5 PFLOP/s bf16, 8 TB/s).",
        "caveats": ["GQA rows: the format has no KV-head column, so h = query heads and "
                    "the model sees MHA (K/V traffic 8x too high; FLOPs right). These "
                    "shapes are compute-bound.",
                    "b200's fit has no non-causal row: non-causal times are the causal "
                    "efficiency carried to a non-causal roofline."],
    },
    {
        "id": "cudnn-b200-pytorch",
        "title": "PyTorch SDPA's cuDNN backend on B200 (same shapes as the fitted "
                 "cudnn-frontend rows)",
        "gpu": "b200",
        "files": [("b200_pytorch-cudnn-9.13.0-gqa128q8kv_flash_atten_causal_bf16.csv",
                   "flash_atten_cudnn_causal", "bf16")],
        "source": CUDNN_FE + " @bb37575d, benchmark/sdpa_benchmark_training/artifacts/"
                  "sdpa_bf16_benchmark_results_NVIDIA_B200.csv, backend pyt_cudnn: times "
                  "in ms, copied x 1000.",
        "conditions": "B200, free clock; NGC PyTorch 25.09 (CUDA 13.0, PyTorch 2.9.0), "
                      "torch.backends.cudnn.version() = 91300; bf16, causal, b = 1, "
                      "128 query / 8 KV heads, head dim 128, seqlen 512-128k.",
        "model": "`flash_atten_cudnn_causal` on b200: fitted to the cudnn-frontend path "
                 "(cuDNN 9.13.1) at these very shapes.",
        "caveats": ["Not held out in shape: the same shapes, another call path "
                    "(PyTorch's SDPA wrapper) and a separate run. GQA as above."],
    },
    {
        "id": "fa2-b200-pytorch",
        "title": "PyTorch SDPA FlashAttention-2 on B200 (same shapes as the fitted "
                 "flash-attn 2.7.4 rows)",
        "gpu": "b200",
        "files": [("b200_pytorch-flash-fa2-gqa128q8kv_flash_atten_causal_bf16.csv",
                   "flash_atten_causal", "bf16")],
        "source": CUDNN_FE + " @bb37575d, benchmark/sdpa_benchmark_training/artifacts/"
                  "sdpa_bf16_benchmark_results_NVIDIA_B200.csv, backend "
                  "pyt_flash_attention: times in ms, copied x 1000.",
        "conditions": "As the row above (B200, free clock, NGC PyTorch 25.09).",
        "model": "`flash_atten_causal` on b200: hwdb lists flash-attn 2.7.4's times at "
                 "these shapes (hwdb/data/measured/b200/).",
        "caveats": ["Not held out in shape (see above). GQA as above."],
    },
    {
        "id": "deepgemm-h800",
        "title": "DeepGEMM fp8 GEMMs with blockwise scaling on H800 SXM5",
        "gpu": "h100-sxm",
        "files": [("h800_deepgemm-fp8-1x128-128x128_gemm_fp8.csv", "gemm", "fp8")],
        "source": "deepseek-ai/DeepGEMM README.md @a9967bc2 (2025-04-09), table "
                  "\"Normal GEMMs for dense models\" (MIT): TFLOP/s converted with "
                  "t = 2mnk / TFLOP/s (tests/test_core.py's convention; its GB/s column "
                  "gives the same t within 0.1 %).",
        "conditions": "H800 SXM5 (H100 SXM's SMs and HBM3, NVLink cut); NVCC 12.8; clock "
                      "and power not stated; e4m3, activations scaled per 1x128, weights "
                      "per 128x128 block, bf16 out; kernel time (bench_kineto, L2 flushed).",
        "model": FP8_MODEL + ".",
        "caveats": ["A different kernel from the fitted one: blockwise scaling costs "
                    "extra work in the main loop, and DeepGEMM was tuned for these "
                    "shapes."],
        "groups": ["m"],
    },
    {
        "id": "cublas-bf16-b200-torchao",
        "title": "cuBLAS bf16 GEMMs on B200 (pytorch/ao#2427's baseline)",
        "gpu": "b200", "alt": "gb200",
        "files": [("b200_torchao-pr2427-cublas_gemm_bf16.csv", "gemm", "bf16")],
        "source": TORCHAO_SRC + " (the torch.bfloat16 lines).",
        "conditions": TORCHAO_COND,
        "model": "`gemm` bf16 on b200: fitted to XLA's sm100 bf16 GEMM table.",
        "caveats": ["Square shapes only."],
    },
    {
        "id": "cublas-nvfp4-b200-torchao",
        "title": "cuBLAS NVFP4 GEMMs on B200 (pytorch/ao#2427)",
        "gpu": "b200", "alt": "gb200",
        "files": [("b200_torchao-pr2427-cublas-nvfp4_gemm_fp4.csv", "gemm", "fp4")],
        "source": TORCHAO_SRC + " (the nvfp4 lines).",
        "conditions": TORCHAO_COND,
        "model": FP4_MODEL + ".",
        "caveats": ["Not fully held out: the two largest rows (6144^3, 8192^3) give "
                    "b200's fp4_gemm_speedup (their bf16 / nvfp4 time ratio)."],
    },
    {
        "id": "cublas-mxfp4-b200-deepgemm",
        "title": "cuBLAS MXFP4 GEMMs on B200 (DeepGEMM pull request #348's baseline)",
        "gpu": "b200", "alt": "gb200",
        "files": [("b200_cublas-13.3-mxfp4-deepgemm-pr348_gemm_fp4.csv", "gemm", "fp4")],
        "source": "deepseek-ai/DeepGEMM pull request #348 ('feat: support mxfp4 x mxfp4 "
                  "gemm on sm100', 2026-06-01), description, table 'Dense GEMM perf (B200, "
                  "CUDA 12.9, vs cublasTest 13.3 direct binary)', the cBLT TFLOPS column "
                  "(the seven rows shown there): t = 2mnk / TFLOP/s.",
        "conditions": "B200; cuBLAS 13.3 through NVIDIA's cublasTest binary; MXFP4 (e2m1 "
                      "with e8m0 scales per 32, the same fp4 tensor-core rate as NVFP4's "
                      "e4m3 per 16); clock, power and output dtype not stated.",
        "model": FP4_MODEL + ".",
        "caveats": ["MXFP4, not the NVFP4 the estimator times: the same MMA rate, "
                    "half the scale traffic."],
    },
    {
        "id": "fbgemm-bf16-h100-500w",
        "title": "FBGEMM bf16 GEMMs on H100 at 500 W",
        "gpu": "h100-sxm", "alt": "h100-96gb",
        "files": [("h100-500w_fbgemm-pr2546-bf16_gemm_bf16.csv", "gemm", "bf16")],
        "source": FBGEMM_SRC + " (the \"bf16\" lines).",
        "conditions": FBGEMM_COND,
        "model": "`gemm` bf16 on h100-sxm (700 W; alt: h100-96gb, the 500 W H100 of "
                 "Meta's hosts in hwdb, which borrows h100-sxm's fits): fitted to our "
                 "sampler's GEMMs and XLA's sm90 bf16 table.",
        "caveats": [FBGEMM_POWER],
    },
    {
        "id": "sampler-gemm-h200",
        "title": "cuBLAS bf16 GEMMs on H200 (this project's sampler)",
        "gpu": "h200", "alt": "h100-sxm",
        "files": [("h200_trainplan-opsample_gemm_bf16.csv", "gemm", "bf16")],
        "source": "bench/sampler/opsample.py --ops gemm on one H200 of this project's "
                  "lent machine, 2026-11-29 (bench/data/moe_h200/"
                  "provenance_opsample_gemm.json): the grid the H100 samples were "
                  "measured on, 154 shapes.",
        "conditions": "NVIDIA H200 SXM 141 GB, 700 W, clocks unlocked (SM 1965 MHz after "
                      "the op); PyTorch 2.11.0+cu130, torch.mm, bf16; CUDA events behind "
                      "a spin kernel, trimmed mean of 10, no L2 flush.",
        "model": "`gemm` bf16 on h200, which borrows h100-sxm's fits (our sampler's "
                 "GEMMs on an H100 and XLA's sm90 table) with its own 4.8 TB/s "
                 "(alt: h100-sxm, 3.35 TB/s).",
        "caveats": ["The same protocol and grid as the H100 samples the fit holds: a "
                    "check of the borrowing (H200 = H100 but for HBM), not of the fit."],
    },
    {
        "id": "fbgemm-fp8-rowwise-h100-500w",
        "title": "FBGEMM fp8 GEMMs with row-wise scaling on H100 at 500 W",
        "gpu": "h100-sxm", "alt": "h100-96gb",
        "files": [("h100-500w_fbgemm-pr2546-fp8-rowwise_gemm_fp8.csv", "gemm", "fp8")],
        "source": FBGEMM_SRC + " (the \"fp8 row gemm only\" lines: scales per row of "
                  "the activations and per column of the weights, quantisation not timed).",
        "conditions": FBGEMM_COND,
        "model": FP8_MODEL + " (alt: h100-96gb).",
        "caveats": [FBGEMM_POWER],
    },
    {
        "id": "fbgemm-fp8-blockwise-h100-500w",
        "title": "FBGEMM fp8 GEMMs with block-wise scaling on H100 at 500 W",
        "gpu": "h100-sxm", "alt": "h100-96gb",
        "files": [("h100-500w_fbgemm-pr2546-fp8-blockwise_gemm_fp8.csv", "gemm", "fp8")],
        "source": FBGEMM_SRC + " (the \"fp8 block gemm only\" lines: scales per block, "
                  "quantisation not timed).",
        "conditions": FBGEMM_COND,
        "model": FP8_MODEL + " (alt: h100-96gb).",
        "caveats": [FBGEMM_POWER, "Block-wise scaling, as DeepGEMM's: not the fitted "
                    "per-tensor kernel."],
    },
]

NORM_BACKENDS = [
    ("pytorch-eager", "eager", "PyTorch eager (F.rms_norm, F.layer_norm)",
     "The kernels our samples timed (F.rms_norm, F.layer_norm): the like-for-like check."),
    ("cudnn-9.19", "cudnn", "cuDNN 9.19.1 norms (cudnn-frontend 1.19.0)",
     "Another kernel than the fitted one (cuDNN's norm graphs): the spread between "
     "implementations, not an error of the fit."),
    ("torch-compile", "compile", "torch.compile of the same PyTorch functions",
     "Another kernel than the fitted one (Inductor-generated Triton): the spread between "
     "implementations, not an error of the fit."),
]
NORM_GPUS = [
    ("h200", "H200", "all_models_20260227_035147.csv",
     "`RMSlayernorm` / `layernorm` on h200: h100-sxm's fits (our sampler's F.rms_norm / "
     "F.layer_norm, fp16, no L2 flush) applied to h200's 4.8 TB/s."),
    ("gb200", "GB200", "all_models_20260226_180237.csv",
     "`RMSlayernorm` / `layernorm` on gb200: b200 has no norm samples, so the roofline "
     "(estimator/op.c) at gb200's 8 TB/s answers."),
]
for _gpu, _GPU, _src, _model in NORM_GPUS:
    for _tag, _short, _what, _cav in NORM_BACKENDS:
        CHECKS.append({
            "id": "norms-%s-%s" % (_gpu, _short),
            "title": "RMSNorm and LayerNorm on %s: %s" % (_GPU, _what),
            "gpu": _gpu,
            "files": [("%s_%s_RMSlayernorm_bf16.csv" % (_gpu, _tag), "RMSlayernorm", "bf16"),
                      ("%s_%s_layernorm_bf16.csv" % (_gpu, _tag), "layernorm", "bf16")],
            "source": CUDNN_FE + " @3929da2e, benchmark/norms/results/%s/%s: times "
                      "recovered from its GB/s column with its byte count (they agree "
                      "with its 1-us time_ms within 0.5 us)." % (_gpu, _src),
            "conditions": "NVIDIA %s; cuDNN 9.19.1 installed; PyTorch version not "
                          "recorded; bf16 in/out, fp32 statistics; 256 MB L2 flush "
                          "before every timed run, torch-profiler kernel time, 20 "
                          "iterations; the norm shapes of Llama 3, Llama 4, Mixtral, "
                          "Qwen3, DeepSeek-V3, GPT-3 and others (rows x hidden)." % _GPU,
            "model": _model,
            "caveats": [_cav, "Their L2 flush against none in our sampler: small shapes "
                        "read from HBM there and partly from L2 in our samples."],
        })

# Row labels and summary groups, by the columns a file has.
def row_label(c):
    if "m" in c:
        return "%dx%dx%d" % (c["m"], c["n"], c["k"])
    if "h" in c and "dim" in c:
        return "b=%d h=%d s=%d hd=%d" % (c["b"], c["h"], c["l"], c["dim"] // c["h"])
    return "%dx%d" % (c.get("b", 1) * c.get("l", 1), c["dim"])


GROUPS = {
    "hd": lambda c: "head dim %d" % (c["dim"] // c["h"]),
    "s": lambda c: "seq %d" % c["l"],
    "m": lambda c: "m = %d" % c["m"],
}


def num(s):
    v = float(s)
    return int(v) if v == int(v) else v


def shape_arg(c):
    return ",".join("%s=%s" % (k, c[k]) for k in SHAPE_COLS if k in c)


class Trainplan:
    """Runs the binary, one process per query, `jobs` at a time; answers in
    query order; the same query is run once."""

    def __init__(self, exe, jobs):
        self.exe = exe
        self.jobs = jobs
        self.cache = {}
        self.env = dict(os.environ)
        self.env.pop("TRAINPLAN_HWDB", None)  # hwdb of this checkout only
        self.env["OMP_NUM_THREADS"] = "1"

    def run(self, args):
        p = subprocess.run([self.exe, "--threads", "1"] + list(args),
                           capture_output=True, text=True, env=self.env)
        if p.returncode != 0:
            sys.exit("component_report: `trainplan %s` failed (exit %d): %s"
                     % (" ".join(args), p.returncode, p.stderr.strip()))
        return json.loads(p.stdout)

    def many(self, queries):
        todo = [q for q in dict.fromkeys(queries) if q not in self.cache]
        with ThreadPoolExecutor(self.jobs) as ex:
            for q, r in zip(todo, ex.map(self.run, todo)):
                self.cache[q] = r
        return [self.cache[q] for q in queries]


def show_query(gpu, op, dtype, cols):
    return ("op", "show", "--gpu", gpu, "--op", op, "--dtype", dtype,
            "--shape", shape_arg(cols), "--format", "json")


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def flash_flops(c, causal):
    """Forward FLOPs in the FlashAttention convention the sources use:
    4 b s^2 h d, halved when causal."""
    d = c["dim"] // c["h"]
    return 4.0 * c["b"] * c["l"] ** 2 * c["h"] * d / (2 if causal else 1)


def check_conversion(name, rows):
    """Files that carry the published TFLOP/s: their times must be those
    figures through the FLOP convention (attention: fwd 1x, bwd 2.5x,
    fwd+bwd 3.5x; GEMMs: 2mnk)."""
    causal = "_causal" in name
    for i, r in enumerate(rows):
        c = {k: num(r[k]) for k in SHAPE_COLS if k in r}
        for tcol, dcol, mult in (("fwd_tflops", "F_dur(us)", 1.0),
                                 ("bwd_tflops", "B_dur(us)", 2.5),
                                 ("fwdbwd_tflops", "FB_dur(us)", 3.5)):
            if tcol not in r:
                continue
            flops = (2.0 * c["m"] * c["n"] * c["k"] if "m" in c  # GEMMs: 2mnk
                     else flash_flops(c, causal))
            want = mult * flops / (float(r[tcol]) * 1e12) * 1e6
            if abs(want - float(r[dcol])) > 0.006 + 1e-6 * want:
                sys.exit("component_report: %s line %d: %s = %s, but %s = %s gives "
                         "%.2f us" % (name, i + 2, dcol, r[dcol], tcol, r[tcol], want))


def load_check_file(name):
    rows = read_rows(os.path.join(DATA, name))
    check_conversion(name, rows)
    out = []
    for r in rows:
        c = {k: num(r[k]) for k in SHAPE_COLS if k in r}
        pub = {p: float(r[col]) for p, col, _ in PASSES
               if col in r and float(r[col]) > 0}
        out.append((c, pub))
    return out


# ---- statistics and formatting -------------------------------------------

def stats(errs):
    if not errs:
        return None
    return {"n": len(errs), "mape": sum(abs(e) for e in errs) / len(errs),
            "bias": sum(errs) / len(errs), "min": min(errs), "max": max(errs)}


def pct(x, signed=False):
    return ("%+.1f" if signed else "%.1f") % (100 * x)


def table(headers, rows, align=None):
    align = align or "l" * len(headers)
    sep = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]
    return "\n".join(lines)


def short(name):
    return name[:-4] if name.endswith(".csv") else name


# ---- section 1: op cv ------------------------------------------------------

def section_cv(tp):
    res = tp.many([("op", "cv", "--gpu", g, "--format", "json") for g in SAMPLED_GPUS])
    out = ["## 1. In-sample fit quality (`trainplan op cv`)", "",
           "MAPE in percent of the fit to each sample file on its own (and, where an "
           "op has several files, to all of them pooled, source `all`): "
           "%d-fold cross-validation (seed %d), and extrapolation: train on hidden "
           "size <= 6144, test on >= 6656 (`dim>6144`); train on sequence length "
           "<= 4096, test on >= 4608 (`seq>4096`). Cells are forward / backward; - = "
           "no such pass or split. `bad` = samples with an implausible pass (left "
           "out)." % (res[0]["folds"], res[0]["seed"]), ""]
    rows = []
    worst = []
    for g, r in zip(SAMPLED_GPUS, res):
        for o in r["ops"]:
            def cell(split):
                f = o.get(split + "_fwd_mape_pct")
                b = o.get(split + "_bwd_mape_pct")
                return "%s / %s" % ("-" if f is None else "%.1f" % f,
                                    "-" if b is None else "%.1f" % b)
            rows.append([g, o["op"], o["dtype"], short(o["source"]), o["samples"],
                         o["implausible"], cell("cv"), cell("extrap_dim"),
                         cell("extrap_seq")])
            for split in ("cv", "extrap_dim", "extrap_seq"):
                for p in ("fwd", "bwd"):
                    v = o.get("%s_%s_mape_pct" % (split, p))
                    if v is not None and v >= 10:
                        worst.append((v, g, o["op"], o["dtype"], short(o["source"]),
                                      split, p))
    out.append(table(["GPU", "op", "dtype", "source", "n", "bad", "cv %",
                      "dim>6144 %", "seq>4096 %"], rows, "llllrrrrr"))
    out.append("")
    return "\n".join(out), sorted(worst, key=lambda w: (-w[0],) + w[1:])


# ---- section 2: held-out checks --------------------------------------------

def run_checks(tp):
    """Per check and file: the rows with model times and errors, the model's
    source (fit or roofline), per pass statistics; the same on the alt GPU."""
    queries = []
    plan = []
    for chk in CHECKS:
        for name, op, dt in chk["files"]:
            rows = load_check_file(name)
            for gpu in [chk["gpu"]] + ([chk["alt"]] if "alt" in chk else []):
                for c, _ in rows:
                    queries.append(show_query(gpu, op, dt, c))
            plan.append((chk, name, op, dt, rows))
    answers = iter(tp.many(queries))
    results = []
    for chk, name, op, dt, rows in plan:
        per_gpu = {}
        for gpu in [chk["gpu"]] + ([chk["alt"]] if "alt" in chk else []):
            lines = []
            for c, pub in rows:
                j = next(answers)
                model = {p: sum(j[f] for f in fields) * 1e6 for p, _, fields in PASSES}
                err = {p: model[p] / pub[p] - 1 for p in pub}
                flags = [w for w, key in (("floor fwd", "raised_to_floor_fwd"),
                                          ("floor bwd", "raised_to_floor_bwd"),
                                          ("fp8 bound fwd", "fp8_bound_fwd"),
                                          ("fp8 bound bwd", "fp8_bound_bwd"),
                                          ("fp4 bound fwd", "fp4_bound_fwd"),
                                          ("fp4 bound bwd", "fp4_bound_bwd")) if j[key]]
                lines.append({"c": c, "pub": pub, "model": model, "err": err,
                              "flags": flags, "source": j["source"],
                              "fit_samples": j["fit_samples"]})
            st = {p: stats([ln["err"][p] for ln in lines if p in ln["err"]])
                  for p, _, _ in PASSES}
            groups = {}  # label -> lines, in order of first appearance
            for key in chk.get("groups", []):
                for ln in lines:
                    groups.setdefault(GROUPS[key](ln["c"]), []).append(ln)
            per_gpu[gpu] = {"lines": lines, "stats": st, "groups": groups}
        results.append({"check": chk, "file": name, "op": op, "dtype": dt,
                        "per_gpu": per_gpu})
    return results


def model_source(lines):
    srcs = sorted({(ln["source"], ln["fit_samples"]) for ln in lines})
    return "; ".join("fit of %d samples" % n if s == "fit" else "the roofline (no fit)"
                     for s, n in srcs)


def check_totals(results, chk, gpu):
    """Per pass statistics over every file of a check."""
    tot = {}
    for r in results:
        if r["check"] is not chk:
            continue
        for ln in r["per_gpu"][gpu]["lines"]:
            for p, e in ln["err"].items():
                tot.setdefault(p, []).append(e)
    return {p: stats(v) for p, v in tot.items()}


def stat_cells(s):
    if not s:
        return ["", "", "", ""]
    return [s["n"], pct(s["mape"]), pct(s["bias"], True),
            "%s .. %s" % (pct(s["min"], True), pct(s["max"], True))]


def section_checks(results):
    out = ["## 2. Held-out checks against published kernel times", "",
           "Published times the fits never saw (`bench/data/kernel_checks/`, each "
           "file's source, commit, conditions and licence in its README.md) against "
           "`trainplan op show --format json`'s `time_fwd_s` / `time_bwd_s`: the time "
           "the estimator uses, before its in-training kernel efficiency. Error = "
           "model / published - 1 (+ = the model is slower). MAPE and bias (the mean "
           "signed error) in percent.", ""]
    rows = []
    for chk in CHECKS:
        tot = check_totals(results, chk, chk["gpu"])
        for p, _, _ in PASSES:
            if p in tot:
                rows.append([chk["id"], chk["gpu"], p] + stat_cells(tot[p]))
    out += ["### Summary (all files of a check pooled)", "",
            table(["check", "GPU", "pass", "n", "MAPE %", "bias %", "range %"], rows,
                  "lllrrrr"), ""]
    for i, chk in enumerate(CHECKS, 1):
        out += ["### 2.%d %s (`%s`)" % (i, chk["title"], chk["id"]), "",
                "- Source: " + chk["source"],
                "- Published under: " + chk["conditions"],
                "- Our model: " + chk["model"]]
        for cav in chk["caveats"]:
            out.append("- Note: " + cav)
        out.append("")
        mine = [r for r in results if r["check"] is chk]
        srows = []
        for r in mine:
            g = r["per_gpu"][chk["gpu"]]
            for p, _, _ in PASSES:
                if g["stats"][p]:
                    srows.append([short(r["file"]), "`%s` %s" % (r["op"], r["dtype"]),
                                  model_source(g["lines"]), p] + stat_cells(g["stats"][p]))
                for label, lns in g["groups"].items():
                    s = stats([ln["err"][p] for ln in lns if p in ln["err"]])
                    if s:
                        srows.append(["", "", label, p] + stat_cells(s))
        out += [table(["file", "op", "model answered by", "pass", "n", "MAPE %",
                       "bias %", "range %"], srows, "llllrrrr"), ""]
        if "alt" in chk:
            tot = check_totals(results, chk, chk["alt"])
            out.append("On %s instead: %s." % (chk["alt"], "; ".join(
                "%s MAPE %s %%, bias %s %%" % (p, pct(tot[p]["mape"]),
                                               pct(tot[p]["bias"], True))
                for p, _, _ in PASSES if p in tot)))
            out.append("")
        out += ["<details><summary>rows</summary>", ""]
        for r in mine:
            lines = r["per_gpu"][chk["gpu"]]["lines"]
            passes = [p for p, _, _ in PASSES if any(p in ln["pub"] for ln in lines)]
            hdr = ["shape"]
            for p in passes:
                hdr += ["%s published us" % p, "%s model us" % p, "%s err %%" % p]
            hdr.append("bounds hit")
            trows = []
            for ln in lines:
                cells = [row_label(ln["c"])]
                for p in passes:
                    if p in ln["pub"]:
                        cells += ["%.1f" % ln["pub"][p], "%.1f" % ln["model"][p],
                                  pct(ln["err"][p], True)]
                    else:
                        cells += ["-", "%.1f" % ln["model"][p], "-"]
                cells.append(", ".join(ln["flags"]))
                trows.append(cells)
            out += ["`%s` (`%s` %s on %s):" % (r["file"], r["op"], r["dtype"], chk["gpu"]),
                    "", table(hdr, trows, "l" + "rrr" * len(passes) + "l"), ""]
        out += ["</details>", ""]
    return "\n".join(out)


# Published kernel data found but NOT checked here, and why (kept in the
# report so a reader sees what was left out).
NOT_CHECKED = [
    ("FlashAttention-3 on H100 (FA3 paper, fp16 and fp8)",
     "the estimator has no FlashAttention-3 operator: it times FlashAttention-2 "
     "(`flash_atten`) or cuDNN (`flash_atten_cudnn`); FA3 is neither kernel."),
    ("fp8 attention (cuDNN 9.1.1 on H100, 9.19 on H200, 9.13.1 on B200, 9.22 fp8 and "
     "MXFP8 on GB200, the unnamed Hopper's fp8 columns)",
     "the estimator runs attention in the activation dtype even in fp8 training "
     "(estimator/iter.c: `fa.dtype = x->act_dt`, Transformer Engine's default), so "
     "no component times fp8 attention."),
    ("cuDNN attention of the FA3 paper (H100, 9.1.1, fp16), cudnn-frontend H200 "
     "cuDNN 9.19 bf16, B200 cuDNN 9.13.1 and flash-attn 2.7.4 bf16",
     "already in hwdb/data/measured (fitted, or listed for a fit): not held out; "
     "section 1 and 3 cover them."),
    ("DeepGEMM grouped (MoE) GEMMs, DeepSeek-V3 / Kimi / Qwen attention with "
     "asymmetric head dims, FlashAttention-4 text claims, the FBGEMM \"scale + gemm\" "
     "lines, GB300 norms",
     "no operator of the estimator has that shape (group count, d_qk != d_v), no "
     "per-shape numbers, quantisation fused into the timing, or no GB300 in hwdb."),
]


def section_not_checked():
    out = ["### Published data left out", ""]
    for what, why in NOT_CHECKED:
        out.append("- %s: %s" % (what, why))
    out.append("")
    return "\n".join(out)


# ---- section 3: roofline checks --------------------------------------------

def gpu_sample_files(gpu):
    with open(os.path.join(GPUS_DIR, gpu + ".json")) as f:
        d = json.load(f)
    out = []
    for m in d.get("measured", []):
        if m.get("kind") != "operator_samples":
            continue
        path = os.path.normpath(os.path.join(GPUS_DIR, m["file"]))
        out.append((m["op"], m["dtype"], path))
    return out


def sample_shapes(path, cap):
    rows = read_rows(path)
    n = len(rows)
    idx = range(n) if n <= cap else [i * n // cap for i in range(cap)]
    shapes = [{k: num(rows[i][k]) for k in SHAPE_COLS if k in rows[i]} for i in idx]
    return shapes, n


def sweep_shapes(op, cols):
    cols = ["m", "n", "k"] if op == "gemm" else [c for c in SHAPE_COLS if c in cols]
    free = [c for c in cols if not (c == "h" and "dim" in cols)]
    shapes = []
    for vals in itertools.product(*(SWEEP[c] for c in free)):
        c = dict(zip(free, vals))
        if "h" in cols and "dim" in cols:
            c["h"] = c["dim"] // 128
        shapes.append({k: c[k] for k in SHAPE_COLS if k in c})
    return shapes


def flag_shares(answers):
    n = len(answers)
    def share(key):
        k = sum(1 for a in answers if a[key])
        return "0" if k == 0 else "%d%%" % round(100 * k / n)
    return n, "%s / %s" % (share("raised_to_floor_fwd"), share("raised_to_floor_bwd")), \
        "%s / %s" % (share("fp8_bound_fwd"), share("fp8_bound_bwd"))


def section_roofline(tp, cap):
    plan = []
    queries = []
    for gpu in SAMPLED_GPUS:
        swept = set()
        for op, dt, path in gpu_sample_files(gpu):
            shapes, n = sample_shapes(path, cap)
            sw = []
            if (op, dt) not in swept:
                swept.add((op, dt))
                sw = sweep_shapes(op, shapes[0].keys() if shapes else ())
            qs = [show_query(gpu, op, dt, c) for c in shapes]
            qw = [show_query(gpu, op, dt, c) for c in sw]
            plan.append((gpu, op, dt, path, n, len(qs), len(qw)))
            queries += qs + qw
    answers = iter(tp.many(queries))
    rows = []
    leaning = []
    for gpu, op, dt, path, n, ns, nw in plan:
        a_s = [next(answers) for _ in range(ns)]
        a_w = [next(answers) for _ in range(nw)]
        srcs = sorted({(a["source"], a["fit_samples"]) for a in a_s})
        by = "; ".join("fit (%d)" % k if s == "fit" else "**roofline**" for s, k in srcs)
        _, fl_s, f8_s = flag_shares(a_s)
        cells = [gpu, op, dt, short(os.path.basename(path)), by,
                 "%d of %d" % (ns, n), fl_s, f8_s]
        if nw:
            _, fl_w, f8_w = flag_shares(a_w)
            cells += [nw, fl_w, f8_w]
        else:
            cells += ["", "", ""]
        rows.append(cells)
        for what, ans in (("sampled shapes", a_s), ("sweep", a_w)):
            for key in ("raised_to_floor_fwd", "raised_to_floor_bwd",
                        "fp8_bound_fwd", "fp8_bound_bwd"):
                k = sum(1 for a in ans if a[key])
                if k:
                    leaning.append((gpu, op, dt, what, key, k, len(ans)))
        if any(a["source"] == "roofline" for a in a_s):
            leaning.append((gpu, op, dt, "sampled shapes", "no_fit",
                            sum(1 for a in a_s if a["source"] == "roofline"), len(a_s)))
    out = ["## 3. Roofline checks: where the fits lean on the floor", "",
           "For each sample file of each GPU, `op show` at its sample shapes (at most "
           "%d a file, evenly spaced through it) and, once per op and dtype, at a sweep "
           "of shapes beyond the grid (GEMM sides 256, 4096, 65536; otherwise mp 1 and "
           "8, b 1 and 4, sequence 2k and 32k, hidden 4096 and 16384 with 128-wide "
           "heads; Adam 1e7 to 1e11 parameters). `floor` = share of shapes where the "
           "fit fell below the physical floor (dense peak, HBM bandwidth; "
           "estimator/op.c est_op_floor) and was raised to it; `fp8 bound` = share "
           "where an fp8 GEMM fell below half its 16-bit time and was raised to it "
           "(estimator/models.c). Cells are forward / backward. `model` = what answers: "
           "a fit (its pooled sample count) or the roofline." % cap, "",
           table(["GPU", "op", "dtype", "file", "model", "sampled shapes", "floor",
                  "fp8 bound", "sweep", "floor", "fp8 bound"], rows,
                 "llllllrrrrr"), ""]
    return "\n".join(out), leaning


# ---- section 4: what this says -------------------------------------------

def section_summary(results, cv_worst, leaning):
    out = ["## 4. What this says", "",
           "Measured, not tuned. One row per component and published source (each "
           "file of section 2), ordered by the largest bias of its passes: bias = the "
           "mean of model / published - 1 (+ = the model's time is longer), MAPE in "
           "brackets; the worst row; what answered (a fit, or the roofline).", ""]
    items = []
    for r in results:
        chk = r["check"]
        g = r["per_gpu"][chk["gpu"]]
        cells = {}
        big = 0.0
        for p, _, _ in PASSES:
            s = g["stats"][p]
            if s:
                cells[p] = "%s (%s), n %d" % (pct(s["bias"], True), pct(s["mape"]), s["n"])
                big = max(big, abs(s["bias"]))
        worst = max(g["lines"], key=lambda ln: max(abs(e) for e in ln["err"].values()))
        wp, we = max(worst["err"].items(), key=lambda kv: abs(kv[1]))
        items.append((-round(big, 6), chk["id"], r["file"], [
            "`%s` %s, %s" % (r["op"], r["dtype"], chk["gpu"]),
            "%s: %s" % (chk["id"], short(r["file"])),
            cells.get("fwd", "-"), cells.get("bwd", cells.get("fwd+bwd", "-")),
            "%s %s %s" % (row_label(worst["c"]), wp, pct(we, True)),
            model_source(g["lines"])]))
    out += [table(["component", "against", "fwd bias % (MAPE %)",
                   "bwd (or fwd+bwd) bias % (MAPE %)", "worst row, %", "answered by"],
                  [it[3] for it in sorted(items, key=lambda it: it[:3])]), ""]
    if leaning:
        out += ["Bounds the fits lean on (section 3):", ""]
        names = {"raised_to_floor_fwd": "raised to the floor, forward",
                 "raised_to_floor_bwd": "raised to the floor, backward",
                 "fp8_bound_fwd": "raised to half the 16-bit GEMM, forward",
                 "fp8_bound_bwd": "raised to half the 16-bit GEMM, backward",
                 "no_fit": "answered by the roofline although hwdb lists samples"}
        for gpu, op, dt, what, key, k, n in leaning:
            out.append("- %s `%s` %s, %s: %s in %d of %d." % (gpu, op, dt, what,
                                                               names[key], k, n))
        out.append("")
    if cv_worst:
        out += ["In-sample splits with a MAPE of 10 % or more (section 1):", ""]
        for v, g, op, dt, src, split, p in cv_worst:
            out.append("- %s `%s` %s (%s), %s %s: %.1f %%." % (g, op, dt, src, split, p, v))
        out.append("")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trainplan", help="path of the trainplan binary")
    ap.add_argument("--md", help="write the report here (default: stdout)")
    ap.add_argument("--jobs", type=int, default=2,
                    help="trainplan processes at a time (default 2)")
    ap.add_argument("--per-file", type=int, default=16,
                    help="sample shapes per sample file in section 3 (default 16)")
    ap.add_argument("--gpu", action="append", choices=SAMPLED_GPUS,
                    help="only this GPU's files and checks (repeatable; default: "
                    "every GPU with samples); ctest bench_smoke_python runs one")
    a = ap.parse_args()
    if a.jobs < 1 or a.per_file < 1:
        sys.exit("component_report: --jobs and --per-file must be at least 1")
    if a.gpu:
        SAMPLED_GPUS[:] = [g for g in SAMPLED_GPUS if g in a.gpu]
        CHECKS[:] = [c for c in CHECKS if c["gpu"] in a.gpu]
    tp = Trainplan(a.trainplan, a.jobs)
    version = subprocess.run([a.trainplan, "--version"], capture_output=True,
                             text=True).stdout.strip()
    cv_md, cv_worst = section_cv(tp)
    results = run_checks(tp)
    roof_md, leaning = section_roofline(tp, a.per_file)
    doc = "\n".join([
        "# Component report: each operator model against its measurements", "",
        "Written by `python3 bench/component_report.py build/trainplan --md "
        "bench/results/components.md` (%s). Every model time is `trainplan op show "
        "--format json`'s; every in-sample figure is `trainplan op cv`'s. Nothing "
        "here feeds a fit." % (version or "trainplan"), "",
        cv_md,
        section_checks(results),
        section_not_checked(),
        roof_md,
        section_summary(results, cv_worst, leaning),
    ])
    if a.md:
        tmp = a.md + ".tmp"
        with open(tmp, "w") as f:
            f.write(doc)
        os.replace(tmp, a.md)
    else:
        sys.stdout.write(doc)


if __name__ == "__main__":
    main()
