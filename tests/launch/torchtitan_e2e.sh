#!/usr/bin/env bash
# torchtitan_e2e.sh PYTHON TRAINPLAN SOURCE_DIR [SCRATCH_DIR]
#
# Issue 18, torchtitan: for each search of tests/launch/matrix.txt and each
# torchtitan version trainplan writes (main, the default, and 0.2), every
# ranked and Pareto layout's launch.torchtitan_config is
#   1. checked by torchtitan_rules.py against the version it names, and
#   2. read back with `trainplan estimate --torchtitan-config`: where the
#      search estimated the layout as torchtitan runs it and the config says
#      nothing is inexpressible, to the same iteration_time_s (relative
#      1e-9: the same layout through the same code, so the same double up
#      to the printing of %.17g); otherwise to the same layout (TP, PP, CP,
#      DP, virtual stages, micro-batch, global batch, sequence), or, where a
#      line says NOT EXPRESSIBLE, to a clean exit (no crash).
# Prints the counts; fails on any violation or mismatch.
set -u
PY=$1
TP=$2
SRC=$3
SCRATCH=${4:-$(mktemp -d)}
mkdir -p "$SCRATCH"
exec "$PY" - "$TP" "$SRC" "$SCRATCH" <<'EOF'
import json, os, shlex, subprocess, sys

tp, src, scratch = sys.argv[1:4]
rules = os.path.join(src, "tests", "launch", "torchtitan_rules.py")
matrix = os.path.join(src, "tests", "launch", "matrix.txt")
versions = ["main", "0.2"]
count = {k: 0 for k in ("configs", "rules_ok", "not_expressible", "round_trip",
                        "round_trip_ok", "layout_back", "layout_back_ok",
                        "clean_refusals")}
fails = []


def run(args):
    return subprocess.run(args, capture_output=True, text=True)


for n, line in enumerate(open(matrix, encoding="utf-8")):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    args = shlex.split(line)
    system = args[args.index("--system") + 1]
    for v in versions:
        r = run([tp, "search", *args, "--format", "json", "--top", "10", "--no-timing",
                 "--torchtitan-version", v])
        if r.returncode == 65 and "moe_not_modelled" in r.stderr:
            print(f"SKIP search {line} ({v}): {r.stderr.strip()}")
            continue
        if r.returncode not in (0, 1):
            fails.append(f"search {line} ({v}): exit {r.returncode}: {r.stderr.strip()}")
            continue
        d = json.loads(r.stdout)
        for kind in ("ranked", "pareto"):
            for row in d.get(kind, []):
                cfg = row["launch"]["torchtitan_config"]
                name = f"{row['layout']} of '{line}' ({kind}, {v})"
                path = os.path.join(scratch, f"tt_{n}_{v}_{kind}_{row['rank']}.cfg")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(cfg)
                count["configs"] += 1
                c = run([sys.executable, rules, "--world-size", str(row["gpus"]),
                         "--version", v, path])
                if c.returncode == 0:
                    count["rules_ok"] += 1
                else:
                    fails.append(f"rules: {name}:\n{c.stdout}{c.stderr}")
                inexpressible = "# NOT EXPRESSIBLE" in cfg
                count["not_expressible"] += inexpressible
                e = run([tp, "estimate", "--system", system, "--torchtitan-config", path,
                         "--format", "json"])
                if inexpressible:
                    if e.returncode in (0, 1, 64, 65) and "Sanitizer" not in e.stderr:
                        count["clean_refusals"] += 1
                    else:
                        fails.append(f"read back: {name}: exit {e.returncode}: {e.stderr}")
                    continue
                if e.returncode not in (0, 1):
                    fails.append(f"read back: {name}: exit {e.returncode}: {e.stderr.strip()}")
                    continue
                back = json.loads(e.stdout)
                if "per iteration as torchtitan runs it" in cfg:
                    count["round_trip"] += 1
                    want, got = row["iteration_time_s"], back["iteration_time_s"]
                    if abs(got - want) <= 1e-9 * abs(want):
                        count["round_trip_ok"] += 1
                    else:
                        fails.append(f"round trip: {name}: {want!r} s searched, {got!r} s "
                                     "read back")
                    continue
                count["layout_back"] += 1
                lb = back["layout"]
                pairs = [("tensor_model_parallel_size",) * 2,
                         ("pipeline_model_parallel_size",) * 2,
                         ("context_parallel_size",) * 2, ("data_parallel_size",) * 2,
                         ("virtual_stages_per_pipeline_rank",) * 2,
                         ("micro_batch_size",) * 2, ("global_batch_size",) * 2,
                         ("seq_length",) * 2]
                diff = [f"{a} {row[a]} -> {lb[b]}" for a, b in pairs if row[a] != lb[b]]
                if diff:
                    fails.append(f"layout back: {name}: " + ", ".join(diff))
                else:
                    count["layout_back_ok"] += 1

# Configs of users' own and bad input: the exit status and what the message
# must name (file, key or line, value, what was expected).
USER_V02 = """[job]
description = "my Llama 3 8B run"
[model]
name = "llama3"
flavor = "8B"
[training]
local_batch_size = 2
seq_len = 8192
steps = 1000
[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1  # the ranks left
tensor_parallel_degree = 2
[compile]
enable = true
components = ["model", "loss"]
[activation_checkpoint]
mode = "selective"
selective_ac_option = "op"
"""
USER_MAIN = """from torchtitan.models.llama3.config_registry import llama3_70b


def my_run():
    config = llama3_70b()
    config.parallelism.data_parallel_shard_degree = 16
    config.training.disable_cuda_graphs = True
    return config
"""
cases = [
    ("user_v02.toml", USER_V02, ["-g", "64"], 0, '"tensor_model_parallel_size":\t2'),
    ("user_v02_nogpus.toml", USER_V02, [], 64, "give -g/--gpus"),
    ("user_main.py", USER_MAIN, [], 0, '"global_batch_size":\t128'),
    ("gpus_disagree.py", USER_MAIN, ["-g", "64"], 64, "--gpus says 64"),
    ("flavor.toml", '[model]\nname = "llama3"\nflavor = "13B"\n', ["-g", "8"], 65,
     'model.flavor = "13B": not a model trainplan knows (known: llama3 with flavor 8B'),
    ("empty.toml", "", ["-g", "8"], 65, 'model.flavor = "debugmodel"'),
    ("hsdp.toml", USER_V02.replace("shard_degree = -1", "shard_degree = 8").replace(
        "replicate_degree = 1", "replicate_degree = 4"), [], 65, "HSDP is not modelled"),
    ("layer_sac.toml", USER_V02.replace('"op"', '"2"'), ["-g", "64"], 65,
     'layer_sac.toml:19: activation_checkpoint.selective_ac_option = 2: full checkpointing '
     'of every n-th layer'),
    ("bad_int.toml", USER_V02.replace("tensor_parallel_degree = 2",
                                      'tensor_parallel_degree = "two"'), ["-g", "64"], 65,
     'bad_int.toml:13: parallelism.tensor_parallel_degree = "two": expected an integer in '
     '[1, 65536]'),
    ("unbalanced.toml", "[parallelism]\nmodule_fqns_per_model_part = [[\"layers.0\"]\n",
     ["-g", "8"], 65, "unbalanced.toml:2: unbalanced brackets"),
    ("float8_v01.toml", USER_V02.replace('flavor = "8B"\n',
                                         'flavor = "8B"\nconverters = ["float8"]\n'),
     ["-g", "64"], 65, 'model.converters = ["float8"]'),
    # issue 30: TOML refuses a table or key given twice (tomllib in
    # torchtitan/config/manager.py), so does the reader
    ("table_twice.toml", USER_V02 + '[model]\nconverters = ["float8"]\n', ["-g", "64"],
     65, "table_twice.toml:20: [model] defined twice (line 3)"),
    ("key_twice.toml", USER_V02.replace("tensor_parallel_degree = 2",
                                        "tensor_parallel_degree = 2\n"
                                        "tensor_parallel_degree = 8"), ["-g", "64"], 65,
     "key_twice.toml:14: parallelism.tensor_parallel_degree given twice (line 13)"),
    # issue 30: several config functions are several jobs: refused with
    # their names, one picked as FILE:NAME
    ("two_fns.py", USER_MAIN + "\n\ndef big_run():\n    config = llama3_70b()\n"
     "    config.parallelism.data_parallel_shard_degree = 128\n    return config\n",
     [], 65, "2 config functions (my_run, big_run): torchtitan runs one"),

    ("schedule.py", USER_MAIN.replace("    return", '    config.parallelism.'
     'pipeline_parallel_degree = 2\n    config.parallelism.pipeline_parallel_schedule = '
     '"LoopedBFS"\n    return'), ["-g", "256"], 65,
     "pipeline_parallel_schedule = LoopedBFS: trainplan times 1F1B, Interleaved1F1B, "
     "InterleavedZeroBubble, ZBVZeroBubble and DualPipeV"),
    ("statement.py", USER_MAIN.replace("    return", "    for x in []: pass\n    return"),
     [], 65, "statement.py:8: expected config = BASE() or config.SECTION.KEY = VALUE"),
    ("section.py", USER_MAIN.replace("    return", "    config.compile = CompileConfig("
     "enable=True)\n    return"), [], 65,
     "section.py:8: expected its fields one by one, config.SECTION.KEY = VALUE: "
     "'config.compile'"),
    ("quotes.py", USER_MAIN.replace("    return", "    config.model_spec = "
     "model_registry('70B')\n    return").replace(
         "from torchtitan.models.llama3.config_registry",
         "from torchtitan.models.llama3 import model_registry\n"
         "from torchtitan.models.llama3.config_registry"), [], 0, '"model":\t"llama3.1-70b"'),
    ("recipe.py", USER_MAIN.replace("config = llama3_70b()", "config = my_base()"), [], 65,
     "recipe.py:5: config = my_base(): expected one of torchtitan's llama3_8b"),
]
cases += [
    ("two_fns.py:big_run", None, [], 0, '"gpus":\t1024'),
    ("two_fns.py:my_run", None, [], 0, '"gpus":\t128'),
    ("two_fns.py:nothing", None, [], 65, "no config function 'nothing' (the file has "
     "my_run, big_run)"),
]
for fname, text, extra, want_rc, want in cases:
    path = os.path.join(scratch, fname)
    if text is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    e = run([tp, "estimate", "--system", "eos", "--torchtitan-config", path, "--format",
             "json", *extra])
    count["bad_input"] = count.get("bad_input", 0) + 1
    out = e.stdout + e.stderr
    if e.returncode != want_rc or want not in out or "Sanitizer" in out:
        fails.append(f"input {fname}: exit {e.returncode} (want {want_rc}), want "
                     f"{want!r} in:\n{out[-600:]}")
    else:
        count["bad_input_ok"] = count.get("bad_input_ok", 0) + 1

# Mangled configs (a fixed stream of cuts, deletions, repeats and stray
# brackets and quotes of the writer's own output): an exit status of the
# table (0, 1, 64, 65), never a crash or a sanitizer report.
import random
rng = random.Random(18)
seeds = sorted(x for x in os.listdir(scratch) if x.startswith("tt_") and x.endswith(".cfg"))
seeds = [open(os.path.join(scratch, x), encoding="utf-8").read() for x in seeds[::16]]
for i in range(240):
    t = seeds[i % len(seeds)]
    k = rng.randrange(len(t))
    op = i % 4
    t = (t[:k] if op == 0 else t[:k] + t[k + 1:] if op == 1 else
         t[:k] + t[k:k + 200] + t[k:] if op == 2 else t[:k] + rng.choice("[]()\"'=#\n") + t[k:])
    path = os.path.join(scratch, f"mangled_{i}.cfg")
    with open(path, "w", encoding="utf-8") as f:
        f.write(t)
    e = run([tp, "estimate", "--system", "eos", "--torchtitan-config", path, "--format", "json"])
    count["mangled"] = count.get("mangled", 0) + 1
    if e.returncode not in (0, 1, 64, 65) or "Sanitizer" in e.stderr \
            or "runtime error" in e.stderr:
        fails.append(f"mangled {path}: exit {e.returncode}: {e.stderr[-400:]}")
    else:
        count["mangled_ok"] = count.get("mangled_ok", 0) + 1

e = run([tp, "search", "-m", "llama3-8b", "--system", "eos", "--gpus", "8", "-s", "2048", "-B",
         "8", "--torchtitan-version", "0.1"])
if e.returncode != 64 or "--torchtitan-version: expected main" not in e.stderr:
    fails.append(f"--torchtitan-version 0.1: exit {e.returncode}: {e.stderr}")

for f in fails:
    print("FAIL", f)
print(f"torchtitan configs: {count['configs']} checked, {count['rules_ok']} pass the rules of "
      f"their version; {count['not_expressible']} say NOT EXPRESSIBLE "
      f"({count['clean_refusals']} read back or refused cleanly); "
      f"{count['round_trip_ok']} of {count['round_trip']} read back to the same iteration time; "
      f"{count['layout_back_ok']} of {count['layout_back']} estimated under another framework "
      f"read back to the same layout; {count.get('bad_input_ok', 0)} of "
      f"{count.get('bad_input', 0)} own and bad inputs read or refused as expected; "
      f"{count.get('mangled_ok', 0)} of {count.get('mangled', 0)} mangled ones exit cleanly")
sys.exit(1 if fails else 0)
EOF
