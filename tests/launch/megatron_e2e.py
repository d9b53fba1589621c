#!/usr/bin/env python3
"""Every Megatron-LM launch of the matrix's searches starts, and reads back.

    megatron_e2e.py TRAINPLAN SOURCE_DIR SCRATCH

For each search of tests/launch/matrix.txt (--format json --top 10
--no-timing): each ranked and Pareto layout's launch script
(launch.megatron_sbatch) is run under bash with stand-ins for srun,
scontrol and torchrun and what torchrun received is checked against
Megatron-LM's start-up checks (megatron_rules.py, under Slurm and under a
plain torchrun); its one-line form (launch.megatron) is checked too. Where
the search estimated for Megatron-Core (no --framework), both are read back
with `trainplan estimate --megatron-args` to the same iteration time.
Each row's launch_args (issue 20) is checked against its launch text:
Megatron-LM's argument vector is the line's shell words after
pretrain_gpt.py and shell-quotes back to them, its env the assignments
before torchrun and its unset the line's `env -u` names, the NeMo
overrides and the
torchtitan assignments are the text's lines, the notes its comments.
The three Megatron-LM forms are compared (issue 31): the environment
torchrun gets from the script (run with a stale value of each variable
the launches set, to see the script's export or unset replace it) is the
line's, and the script's arguments are the line's plus the script's own
iterations, hyperparameters, data, tokenizer and checkpoints
(SCRIPT_ONLY).
MODEL_SEARCHES (only here) add models whose lines must carry named flags.
Prints the counts; exits 1 on any failure.
"""
import ast
import json
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import megatron_rules  # noqa: E402


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return r.returncode, r.stdout, r.stderr


def check_script(path, arch, errors, gpus=None):
    """Runs the launch script under Slurm and under a plain torchrun and
    checks what torchrun received each time."""
    for slurm in (True, False):
        cap, e = megatron_rules.run_script(path, slurm)
        if e:
            errors.append(e)
            continue
        world, argv = megatron_rules.torchrun_world(cap["argv"], errors)
        if gpus is not None and world != gpus:
            errors.append("torchrun starts %s ranks, the layout has %d"
                          % (world, gpus))
        megatron_rules.check(megatron_rules.parse_args(argv, errors),
                             errors, world=world, env=cap["env"], arch=arch)


# Searches only this test runs (the NeMo and torchtitan checks read
# matrix.txt), each with the model flags every one of its Megatron-LM
# lines must carry (issue 31): RoPE's share and base, local attention,
# sinks, QK norm.
MODEL_SEARCHES = [
    ("-m gpt-oss-20b --system eos --gpus 64 -s 8192 -B 128",
     ["--rotary-base 150000", "--window-size 127,0",
      "--window-attn-skip-freq 2", "--softmax-type learnable"]),
    ("-m mistral-7b --system eos --gpus 64 -s 32768 -B 32",
     ["--window-size 4095,0"]),
    ("-m qwen3-30b-a3b --system eos --gpus 64 -s 4096 -B 256",
     ["--rotary-base 1000000", "--qk-layernorm"]),
    ("-m gpt-neox-20b --system perlmutter --gpus 64 -s 2048 -B 1024",
     ["--rotary-percent 0.25"]),
]

# What the script adds to the line's arguments (launch.h: the line has not
# the data, tokenizer, iterations or hyperparameters); each takes one
# value.
SCRIPT_ONLY = {
    "--train-iters", "--lr", "--min-lr", "--lr-decay-style",
    "--lr-warmup-fraction", "--weight-decay", "--adam-beta1", "--adam-beta2",
    "--clip-grad", "--init-method-std", "--log-interval", "--eval-interval",
    "--eval-iters", "--data-path", "--split", "--tokenizer-type",
    "--tokenizer-model", "--save", "--load", "--save-interval",
}
# The environment the launches set or unset, each preset to a stale value
# when the script runs.
LAUNCH_ENV = {"CUDA_DEVICE_MAX_CONNECTIONS": "8",
              "PYTORCH_CUDA_ALLOC_CONF": "stale", "NVTE_CPU_OFFLOAD_V1": "0",
              "NCCL_GRAPH_REGISTER": "1"}


def flag_groups(argv):
    """pretrain_gpt.py's arguments as (flag, its values) pairs, sorted."""
    groups = []
    for w in argv:
        if w.startswith("--") or not groups:
            groups.append([w])
        else:
            groups[-1].append(w)
    return sorted(tuple(g) for g in groups)


def compare_forms(script, row, errors):
    """The script's environment and arguments against the line's."""
    words = shlex.split(row["launch"]["megatron"].split("  # ")[0])
    env, unset, words = megatron_rules.line_env(words, errors)
    cap, e = megatron_rules.run_script(script, False, LAUNCH_ENV)
    if e:
        errors.append(e)
        return
    for k, stale in LAUNCH_ENV.items():
        want = env.get(k, None if k in unset else stale)
        got = cap["env"].get(k)
        if got != want:
            errors.append("forms: %s is %r under the script, %r under the "
                          "line" % (k, got, want))
    for k in list(env) + unset:
        if k not in LAUNCH_ENV:
            errors.append("forms: the line sets %s, which the test does not "
                          "know (LAUNCH_ENV)" % k)
    _, sargv = megatron_rules.torchrun_world(cap["argv"], errors)
    _, largv = megatron_rules.torchrun_world(words[1:], errors)
    sg = [g for g in flag_groups(sargv) if g[0] not in SCRIPT_ONLY
          and g != ("--ckpt-format", "torch_dist")]
    lg = flag_groups(largv)
    if sg != lg:
        only_s = sorted(set(sg) - set(lg))
        only_l = sorted(set(lg) - set(sg))
        errors.append("forms: the script's arguments differ from the line's:"
                      " script only %s, line only %s" % (only_s, only_l))


def check_launch_args(row, errors):
    """launch_args against the launch text of row: the same, split."""
    la, text = row["launch_args"], row["launch"]
    line, _, comment = text["megatron"].partition("  # ")
    flags = line.split(" pretrain_gpt.py ", 1)[1]
    words = shlex.split(line)
    args = la["megatron"]["args"]
    if words[words.index("pretrain_gpt.py") + 1:] != args:
        errors.append("megatron args are not the line's words after "
                      "pretrain_gpt.py: %s" % args)
    if shlex.join(args) != flags:
        errors.append("megatron args shell-quoted: %r, the line: %r"
                      % (shlex.join(args), flags))
    if "; ".join(la["megatron"]["notes"]) != comment:
        errors.append("megatron notes %s, the line's comment %r"
                      % (la["megatron"]["notes"], comment))
    nemo = la["nemo"]
    lines = [l for l in text["nemo"].split("\n") if l]
    sep = ": " if nemo["format"] == "nemo1" else "="
    keys = [l.split("  # ")[0] for l in lines if not l.startswith("#")]
    if keys != [k + sep + v for k, v in nemo["overrides"].items()]:
        errors.append("nemo overrides are not the text's key lines")
    notes = []
    for l in lines:
        if l.startswith("# "):
            notes.append(l[2:])
        elif "  # " in l:
            body, _, why = l.partition("  # ")
            notes.append(body.split(sep)[0] + ": " + why)
    if notes != nemo["notes"]:
        errors.append("nemo notes %s, the text's comments %s"
                      % (nemo["notes"], notes))
    tt, ttext = la["torchtitan"], text["torchtitan_config"]
    if [l[2:] for l in ttext.split("\n") if l.startswith("# ")] != tt["notes"]:
        errors.append("torchtitan notes are not the text's comment lines")
    main_ = tt["version"] == "main"
    if main_ and "    config = %s()\n" % tt["base"] not in ttext:
        errors.append("torchtitan base %r is not the config's" % tt["base"])
    for k, v in tt["config"].items():
        sec, _, name = k.rpartition(".")
        want = ("    config.%s = " % k) if main_ else ("\n%s = " % name)
        at = ttext.find(want)
        if not main_ and sec and ttext.rfind("[%s]" % sec, 0, at) < 0:
            at = -1
        if at < 0:
            errors.append("torchtitan key %s not in the text" % k)
            continue
        rest = ttext[at + len(want):]
        one = rest.split("\n")[0]
        if one != v:
            # a list spread over lines: the same list on one line
            spread, depth = [], 0
            for piece in rest.split("\n"):
                spread.append(piece)
                depth += piece.count("[") - piece.count("]")
                if depth <= 0:
                    break
            try:
                ok = (depth == 0 and "\n" not in v and ast.literal_eval(v)
                      == ast.literal_eval("\n".join(spread)))
            except (ValueError, SyntaxError):
                ok = False
            if not ok:
                errors.append("torchtitan %s = %r, the text: %r"
                              % (k, v, one))


def arch_of(tp, system, cache):
    if system not in cache:
        rc, out, _ = run([tp, "hw", "show", system, "--format", "json"])
        gpu = json.loads(out).get("gpu") if rc == 0 else None
        if isinstance(gpu, dict):
            gpu = gpu.get("name")
        rc, out, _ = run([tp, "hw", "show", gpu, "--format", "json"])
        cache[system] = json.loads(out).get("arch") if rc == 0 else None
    return cache[system]


def option(words, name):
    return words[words.index(name) + 1] if name in words else None


# Launches the checker must refuse: (a script holding `old`, its
# replacement, the words the error must contain). Each is a mistake the
# launch writer made before issue 18, or one a user's edit could make.
MUTATIONS = [
    ("--num-virtual-stages-per-pipeline-rank 11",
     "--num-virtual-stages-per-pipeline-rank 6", "virtual stages"),
    # the pipeline split (issue 28): the loss no longer counted, the last
    # stage's layers changed
    ("    --account-for-loss-in-pipeline-split\n", "", "not divisible by PP"),
    ("--decoder-last-pipeline-num-layers 10",
     "--decoder-last-pipeline-num-layers 9", "uneven first/last stages"),
    ("export CUDA_DEVICE_MAX_CONNECTIONS=1", "", "CUDA_DEVICE_MAX_CONNECTIONS"),
    ("--cp-comm-type p2p", "--cp-comm-type all_gather", "--cp-comm-type"),
    ("    --sequence-parallel\n", "    --tp-comm-overlap\n", "--tp-comm-overlap"),
    ("--bf16", "--bf17", "unknown flag"),
    ("--ckpt-format fsdp_dtensor", "--ckpt-format torch_dist", "fsdp_dtensor"),
    ("--use-megatron-fsdp", "--use-torch-fsdp2", "--use-torch-fsdp2"),
    ("--micro-batch-size 4\n", "--micro-batch-size 3\n", "not divisible"),
    # mixture of experts (issue 19); the MoE scripts are only there once the
    # estimator models MoE (a mutation without its script is not counted
    # then: see mutants)
    ("--expert-model-parallel-size 1", "--expert-model-parallel-size 3",
     "not divisible by EP"),
    ("--moe-token-dispatcher-type flex", "--moe-token-dispatcher-type deepep",
     "--moe-token-dispatcher-type"),
]
# The mutations above that need an MoE script.
MOE_MUTATIONS = 2


def mutants(scripts, scratch, failures):
    """Each mutation of the first script that holds its text must fail the
    checks with its words; returns how many did."""
    caught = 0
    for i, (old, new, words) in enumerate(MUTATIONS):
        src = next((p for p in scripts if old in open(p).read()), None)
        if src is None and i >= len(MUTATIONS) - MOE_MUTATIONS and \
                not any("--num-experts" in open(p).read() for p in scripts):
            print("SKIP mutation %d: no MoE launch (the estimator refused "
                  "MoE)" % i)
            continue
        if src is None:
            failures.append("mutation %d: no script holds %r" % (i, old))
            continue
        path = os.path.join(scratch, "mutant%02d.sh" % i)
        with open(path, "w") as f:
            f.write(open(src).read().replace(old, new, 1))
        errors = []
        check_script(path, "hopper", errors)
        if any(words in e for e in errors):
            caught += 1
        else:
            failures.append("mutation %d (%r -> %r) of %s: not caught (%s)"
                            % (i, old, new, src, errors))
    return caught


def main():
    tp, src, scratch = sys.argv[1:4]
    os.makedirs(scratch, exist_ok=True)
    failures = []
    counts = {"searches": 0, "layouts": 0, "scripts_ok": 0, "lines_ok": 0,
              "round_trips": 0, "round_trips_ok": 0, "launch_args_ok": 0,
              "forms_ok": 0}
    archs = {}
    scripts = []
    with open(os.path.join(src, "tests", "launch", "matrix.txt")) as f:
        lines = [l.split() for l in f if l.strip() and not l.startswith("#")]
    n_matrix = len(lines)
    lines += [w.split() for w, _ in MODEL_SEARCHES]
    for n, words in enumerate(lines):
        rc, out, err = run([tp, "search"] + words +
                           ["--format", "json", "--top", "10", "--no-timing"])
        if rc == 65 and "moe_not_modelled" in err:
            print("SKIP search %s: the estimator does not model it: %s"
                  % (" ".join(words), err.strip()))
            continue
        if rc != 0:
            failures.append("search %s: exit %d: %s" % (" ".join(words), rc,
                                                        err.strip()))
            continue
        counts["searches"] += 1
        d = json.loads(out)
        megatron_core = "--framework" not in words
        seen = set()
        for row in d["ranked"] + d["pareto"]:
            key = (row["system"], row["layout"])
            if key in seen:
                continue
            seen.add(key)
            counts["layouts"] += 1
            arch = arch_of(tp, row["system"], archs)
            base = os.path.join(scratch, "m%02d_%s" % (n, row["layout"]))
            script, line = base + ".sh", base + ".line"
            with open(script, "w") as f:
                f.write(row["launch"]["megatron_sbatch"])
            scripts.append(script)
            with open(line, "w") as f:
                f.write(row["launch"]["megatron"])
            errors = []
            if n >= n_matrix:
                for flag in MODEL_SEARCHES[n - n_matrix][1]:
                    if flag not in row["launch"]["megatron"]:
                        errors.append("the line lacks %s" % flag)
            check_launch_args(row, errors)
            if errors:
                failures += ["%s: launch_args: %s" % (row["layout"], e)
                             for e in dict.fromkeys(errors)]
            else:
                counts["launch_args_ok"] += 1
            errors = []
            check_script(script, arch, errors, row["gpus"])
            if errors:
                failures += ["%s: %s" % (script, e) for e in dict.fromkeys(errors)]
            else:
                counts["scripts_ok"] += 1
            errors = []
            words_l = shlex.split(row["launch"]["megatron"].split("  # ")[0])
            # the environment the line sets and unsets before torchrun, as
            # launch_args says
            env_l, unset_l, words_l = megatron_rules.line_env(words_l, errors)
            la_m = row["launch_args"]["megatron"]
            if env_l != la_m["env"] or unset_l != la_m["unset"]:
                errors.append("the line sets %r and unsets %r, launch_args."
                              "megatron.env %r and unset %r"
                              % (env_l, unset_l, la_m["env"], la_m["unset"]))
            if not words_l or words_l[0] != "torchrun":
                errors.append("the line does not run torchrun: %r"
                              % words_l[:1])
            world, argv = megatron_rules.torchrun_world(words_l[1:], errors)
            megatron_rules.check(megatron_rules.parse_args(argv, errors),
                                 errors, world=world, env=env_l, arch=arch,
                                 full=False)
            if errors:
                failures += ["%s: %s" % (line, e) for e in dict.fromkeys(errors)]
            else:
                counts["lines_ok"] += 1
            errors = []
            compare_forms(script, row, errors)
            if errors:
                failures += ["%s: %s" % (script, e) for e in dict.fromkeys(errors)]
            else:
                counts["forms_ok"] += 1
            if not megatron_core:
                continue
            for path in (script, line):
                counts["round_trips"] += 1
                rc, out, err = run([tp, "estimate", "--system", row["system"],
                                    "--megatron-args", path, "--format",
                                    "json"])
                if rc != 0:
                    failures.append("%s: estimate exit %d: %s"
                                    % (path, rc, err.strip()))
                    continue
                got = json.loads(out)["iteration_time_s"]
                want = row["iteration_time_s"]
                if abs(got - want) > 1e-9 * max(abs(want), 1e-300):
                    failures.append("%s: read back to %.9g s, the search "
                                    "estimated %.9g s" % (path, got, want))
                else:
                    counts["round_trips_ok"] += 1
    # launch_args of the other forms: NeMo 1 keys, torchtitan's TOML
    for words in lines[:n_matrix:4]:
        rc, out, err = run([tp, "search"] + words +
                           ["--format", "json", "--top", "3", "--no-timing",
                            "--nemo-format", "nemo1", "--torchtitan-version",
                            "0.2"])
        if rc != 0:
            continue  # the searches above report it
        for row in json.loads(out)["ranked"]:
            errors = []
            check_launch_args(row, errors)
            if errors:
                failures += ["%s (nemo1, torchtitan 0.2): launch_args: %s"
                             % (row["layout"], e) for e in dict.fromkeys(errors)]
            else:
                counts["launch_args_ok"] += 1
    # The README's flagship: --sbatch writes the winner's script, which
    # reads back to the winner's iteration time.
    flag = ["search", "--model", "gpt-neox-20b", "--system", "perlmutter",
            "--max-gpus", "128", "--seq-length", "2048",
            "--global-batch-size", "1024", "--tokens", "300e9",
            "--no-timing", "--format", "json"]
    sb = os.path.join(scratch, "flagship.sh")
    rc, out, err = run([tp] + flag + ["--sbatch", sb])
    if rc != 0:
        failures.append("flagship --sbatch: exit %d: %s" % (rc, err.strip()))
    else:
        win = json.loads(out)["ranked"][0]
        if open(sb).read() != win["launch"]["megatron_sbatch"]:
            failures.append("flagship: --sbatch wrote another script than "
                            "the JSON's")
        rc, out, err = run([tp, "estimate", "--system", "perlmutter",
                            "--megatron-args", sb, "--format", "json"])
        got = json.loads(out)["iteration_time_s"] if rc == 0 else None
        if got != win["iteration_time_s"]:
            failures.append("flagship: the script reads back to %s s, the "
                            "winner is %s s" % (got, win["iteration_time_s"]))
        else:
            counts["round_trips"] += 1
            counts["round_trips_ok"] += 1
            print("flagship %s: %.6g s an iteration, its --sbatch script "
                  "reads back to %.6g s" % (win["layout"],
                                            win["iteration_time_s"], got))
    caught = mutants(scripts, scratch, failures)
    print("checker: %d of %d broken launches refused"
          % (caught, len(MUTATIONS)))
    print("megatron launches: %(searches)d searches, %(layouts)d layouts: "
          "%(scripts_ok)d scripts and %(lines_ok)d lines pass Megatron-LM's "
          "checks; %(round_trips_ok)d of %(round_trips)d read back to the "
          "same iteration time; %(launch_args_ok)d launch_args match their "
          "text; %(forms_ok)d scripts give torchrun the line's environment "
          "and arguments" % counts)
    for f in failures:
        print("FAIL:", f)
    print("%d passed, %d failed" % (counts["scripts_ok"] + counts["lines_ok"]
                                    + counts["round_trips_ok"] + caught
                                    + counts["launch_args_ok"]
                                    + counts["forms_ok"],
                                    len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
