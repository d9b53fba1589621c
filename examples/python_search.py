"""Notebook-style tour of trainplan from Python (run it as a script, or
paste the cells into Jupyter). Needs the library built
(cmake -S . -B build && cmake --build build) and either the package
installed (pip install --no-build-isolation ./python) or this checkout's
python/ on sys.path, which the first cell arranges.
"""
# %% Import: the installed package, else this checkout's python/
import os
import sys

try:
    import trainplan
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "python"))
    import trainplan

print("trainplan", trainplan.version(), "from", trainplan.library_path())

# %% The model: parameters and FLOPs per token, as `trainplan model show`
m = trainplan.model("gpt-neox-20b", seq_length=2048)
print(m["name"], "-", m["architecture"]["num_layers"], "layers,",
      m["architecture"]["hidden_size"], "hidden")

# %% Search GPT-NeoX-20B on up to 128 Perlmutter GPUs (the README's search):
# every keyword is a long option of `trainplan search`
res = trainplan.search(model="gpt-neox-20b", system="perlmutter",
                       max_gpus=128, seq_length=2048, global_batch_size=1024,
                       tokens=300e9, top=5)
best = res["ranked"][0]
print("winner:", best["layout"])
print("  %.2f s an iteration, MFU %.1f %%, %.1f GiB peak per GPU"
      % (best["iteration_time_s"], 100 * best["mfu"],
         best["peak_memory_bytes"] / 2**30))

# %% The top layouts side by side (a DataFrame when pandas is installed)
try:
    df = trainplan.to_dataframe(res)
    print(df[["layout", "gpus", "iteration_time_s", "mfu", "cost_usd"]])
except ImportError:
    for r in res["ranked"]:
        print("  %-36s %4d GPUs  %7.2f s  MFU %.3f"
              % (r["layout"], r["gpus"], r["iteration_time_s"], r["mfu"]))

# %% The Pareto front: what each extra GPU buys
for p in res["pareto"]:
    print("  front: %-36s %4d GPUs  %.2f s" % (p["layout"], p["gpus"],
                                               p["iteration_time_s"]))

# %% One layout estimated in full: the winner's TP and PP, pinned
est = trainplan.estimate(model="gpt-neox-20b", system="perlmutter",
                         gpus=best["gpus"], seq_length=2048,
                         global_batch_size=1024,
                         tensor_model_parallel_size=best["tensor_model_parallel_size"],
                         pipeline_model_parallel_size=best["pipeline_model_parallel_size"])
print("estimate: %.2f s, feasible: %s" % (est["iteration_time_s"], est["feasible"]))

# %% Many layouts scored in a loop: estimate_struct gives the main figures
# as a plain struct (no JSON made or decoded: a fraction of a dict's cost,
# and threads on the process's session scale)
for tp in (1, 2, 4, 8):
    try:
        r = trainplan.estimate_struct(model="gpt-neox-20b", system="perlmutter",
                                      gpus=best["gpus"], seq_length=2048,
                                      global_batch_size=1024,
                                      tensor_model_parallel_size=tp)
        print("  TP %d: %.2f s, %.1f GiB of %.0f, DP %d"
              % (tp, r.iteration_time_s, r.peak_memory_bytes / 2**30,
                 r.gpu_memory_bytes / 2**30, r.layout.dp))
    except trainplan.TrainplanError as e:  # 1: infeasible, e.result says why
        print("  TP %d: %s" % (tp, e.result.reason if e.result else e.message))

# %% Errors are exceptions with the command's exit status and message
try:
    trainplan.search(model="gpt-neox-20b", system="perlmutter", max_gpus=4,
                     seq_length=2048, global_batch_size=1024)
except trainplan.TrainplanError as e:
    print("status", e.status, "-", e.message.strip().splitlines()[0][:80])
