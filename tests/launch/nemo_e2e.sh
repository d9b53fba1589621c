#!/bin/sh
# nemo_e2e.sh PYTHON TRAINPLAN SRCDIR - the NeMo launch checks of issue 18.
#
# For each search of tests/launch/matrix.txt (run with --format json --top 10
# --no-timing), every ranked and Pareto layout's NeMo launch, in both forms
# (Megatron-Bridge overrides, the default; NeMo 1 YAML keys, --nemo-format
# nemo1), goes through nemo_rules.py; the default one is read back with
# `trainplan estimate --system S --nemo-overrides FILE --format json`, which
# must give the search's iteration_time_s (relative 1e-9); so must the NeMo 1
# form, given the vocabulary its tokenizer would. Layouts the search
# estimated for another framework's software (--framework torchtitan), and
# outputs with a "# not expressible:" comment, are checked but not read
# back: they run another job than the estimate's, as they say.
# Prints the counts; fails on any violation.
set -u
PY=$1
TP=$2
SRC=$3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/nemo_e2e.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT INT TERM

n=0
grep -v '^[[:space:]]*#' "$SRC/tests/launch/matrix.txt" | grep -v '^[[:space:]]*$' \
    >"$TMP/matrix" || exit 1
# and NeMo's own: fp8 as Megatron-Bridge's delayed-scaling recipe runs it
# (fp8 parameters gathered), which the Bridge form expresses exactly
echo "-m llama3-8b --system eos --gpus 64 -s 8192 -B 128 --precision fp8 --fp8-param-gather" \
    >>"$TMP/matrix"
while IFS= read -r line; do
    n=$((n + 1))
    # shellcheck disable=SC2086  # a matrix line is a list of options
    "$TP" search $line --format json --top 10 --no-timing >"$TMP/s$n.bridge.json" \
        2>"$TMP/s$n.err"
    rc=$?
    # shellcheck disable=SC2086
    "$TP" search $line --format json --top 10 --no-timing --nemo-format nemo1 \
        >"$TMP/s$n.nemo1.json" 2>>"$TMP/s$n.err"
    rc1=$?
    # 65 with moe_not_modelled: a model the estimator refuses, said
    if [ "$rc" = 65 ] && grep -q moe_not_modelled "$TMP/s$n.err"; then
        echo "SKIP search $line: $(head -1 "$TMP/s$n.err")"
        echo '{"ranked": [], "pareto": []}' >"$TMP/s$n.bridge.json"
        echo '{"ranked": [], "pareto": []}' >"$TMP/s$n.nemo1.json"
        rc=0 rc1=0
    fi
    # 1: nothing feasible, still an answer
    if [ "$rc" -gt 1 ] || [ "$rc1" -gt 1 ]; then
        echo "FAIL search $line: exit $rc/$rc1: $(cat "$TMP/s$n.err")"
        exit 1
    fi
    printf '%s\n' "$line" >"$TMP/s$n.line"
done <"$TMP/matrix"

# ---- the reader on bad input: exit 65 and a message naming the file, the
# line, the key, the value and what was expected; never a crash ----------
bad=0
okread=0
expect() { # WANT_EXIT NEEDLE...: the overrides are in $TMP/in
    want=$1
    shift
    cp "$TMP/in" "$TMP/bad.txt"
    "$TP" estimate --system eos --nemo-overrides "$TMP/bad.txt" --format json \
        >"$TMP/bad.out" 2>"$TMP/bad.err"
    got=$?
    for k in "$@"; do
        if ! grep -qF -- "$k" "$TMP/bad.err"; then
            echo "FAIL reader: message lacks '$k': $(cat "$TMP/bad.err")"
            bad=$((bad + 1))
            return
        fi
    done
    if [ "$got" != "$want" ]; then
        echo "FAIL reader: exit $got, expected $want: $(cat "$TMP/bad.err")"
        bad=$((bad + 1))
        return
    fi
    okread=$((okread + 1))
}
HEAD='# launch: torchrun --nnodes 1 --nproc-per-node 8 scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config'
JOB="$HEAD
model.tensor_model_parallel_size=2 model.pipeline_model_parallel_size=1
model.context_parallel_size=1 train.micro_batch_size=1
train.global_batch_size=8 dataset.seq_length=4096"
printf '%s\nmodel.tensor_model_parallel_size=abc\n' "$HEAD" >"$TMP/in"; expect 65 bad.txt:2: \
    model.tensor_model_parallel_size "[1, 65536]" "'abc'"
printf '%s\nmodel.recompute_granularity=half\n' "$HEAD" >"$TMP/in"; expect 65 bad.txt:2: \
    "selective, full" "'half'"
printf '%s\nmodel.no_such_key=1\n' "$HEAD" >"$TMP/in"; expect 65 bad.txt:2: \
    model.no_such_key "not a key trainplan reads"
printf '%s\nmodel.tensor_model_parallel_size 2\n' "$HEAD" >"$TMP/in"; expect 65 \
    bad.txt:2: "expected key=value"
printf '%s\nmodel.sequence_parallel=null\n' "$HEAD" >"$TMP/in"; expect 65 bad.txt:2: \
    "null is not a value"
printf '%s\n~model.sequence_parallel\n' "$HEAD" >"$TMP/in"; expect 65 bad.txt:2: "~"
printf '%s\nmodel.attention_dropout=1.5\n' "$HEAD" >"$TMP/in"; expect 65 bad.txt:2: \
    "[0, 1]" "'1.5'"
printf '%s\nmodel:\n' "$HEAD" >"$TMP/in"; expect 65 bad.txt:2: "YAML section"
printf '# launch: --recipe nosuch_recipe\n' >"$TMP/in"; expect 65 bad.txt:1: \
    nosuch_recipe vanilla_gpt_pretrain_config
printf 'model.hidden_size=4096\n' >"$TMP/in"; expect 65 bad.txt "model.num_layers"
printf '%s\nmodel.pipeline_model_parallel_size=2\nmodel.pipeline_model_parallel_layout="Et*3|t*4L"\n' \
    "$JOB" >"$TMP/in"; expect 65 bad.txt:6: "holds 7 transformer layers (t), the model 32" "(layout_layers)"
printf '%s\nmodel.pipeline_model_parallel_layout="Ex|L"\n' "$JOB" >"$TMP/in"; expect 65 \
    bad.txt:5: "invalid layer character 'x'"
printf '# launch: --nnodes\n' >"$TMP/in"; expect 65 bad.txt:1: "--nnodes needs a value"
# a registered recipe trainplan does not model (bf16 first and last layers)
printf 'mixed_precision=nemotron_3_super_bf16_with_nvfp4_mixed\n' >"$TMP/in"; \
    expect 65 bad.txt:1: mixed_precision bf16_with_nvfp4_mixed \
    "'nemotron_3_super_bf16_with_nvfp4_mixed'"
# --nemo-format takes bridge or nemo1 only
"$TP" search -m llama3-8b --system eos --gpus 8 -s 2048 -B 8 --nemo-format nemo3 \
    >/dev/null 2>"$TMP/fmt.err"
if [ $? = 64 ] && grep -q "nemo-format" "$TMP/fmt.err"; then
    okread=$((okread + 1))
else
    echo "FAIL --nemo-format nemo3: $(cat "$TMP/fmt.err")"
    bad=$((bad + 1))
fi
# --recipe twice (issue 31): the same name is one, two names are refused
# naming both; comm_overlap's class must be the one Bridge instantiates
printf '%s --recipe llama3_8b_pretrain_config\n%s\n' "$HEAD" "$(printf '%s\n' "$JOB" | tail -n +2)" >"$TMP/in"; expect 0
printf '%s --recipe llama3_70b_pretrain_config\n%s\n' "$HEAD" "$(printf '%s\n' "$JOB" | tail -n +2)" >"$TMP/in"; expect 65 \
    "bad.txt:1: --recipe given twice, as 'llama3_8b_pretrain_config' (line 1) and 'llama3_70b_pretrain_config'"
printf 'torchrun --nnodes 1 --nproc-per-node 8 scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config --recipe=vanilla_gpt_pretrain_config model.tensor_model_parallel_size=2\n' >"$TMP/in"; expect 65 \
    "bad.txt:1: --recipe given twice, as 'llama3_8b_pretrain_config' (line 1) and 'vanilla_gpt_pretrain_config'"
printf '%s\n++comm_overlap._target_=megatron.bridge.training.comm_overlap.CommOverlapConfig\n' "$JOB" >"$TMP/in"; expect 0
printf '%s\n++comm_overlap._target_=builtins.dict\n' "$JOB" >"$TMP/in"; expect 65 bad.txt:5: \
    comm_overlap._target_ "'builtins.dict'"
# RoPE's share and base, sliding windows and sinks on the generic recipe
# (issue 31): written, read back to the same iteration time, refused by
# name where malformed
for m in "gpt-oss-20b eos 64 8192 128 model.window_size=[127,0] model.window_attn_skip_freq=2 model.softmax_type=learnable model.rotary_base=150000" \
         "gpt-neox-20b perlmutter 64 2048 1024 model.rotary_percent=0.25"; do
    set -- $m
    mdl=$1 sys=$2 g=$3 sq=$4 gb=$5
    shift 5
    "$TP" search -m "$mdl" --system "$sys" --gpus "$g" -s "$sq" -B "$gb" --top 1 --no-timing \
        --format json >"$TMP/mk.json" 2>"$TMP/mk.err"
    "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1]))["ranked"][0]; open(sys.argv[2],"w").write(r["launch"]["nemo"]); print(repr(r["iteration_time_s"]))' \
        "$TMP/mk.json" "$TMP/mk.nemo" >"$TMP/mk.t"
    for k in "$@"; do
        if grep -qxF -- "$k" "$TMP/mk.nemo"; then okread=$((okread + 1)); else
            echo "FAIL writer: $mdl's launch lacks $k"; bad=$((bad + 1)); fi
    done
    "$TP" estimate --system "$sys" --nemo-overrides "$TMP/mk.nemo" --format json >"$TMP/mk.out" 2>"$TMP/mk.err"
    if "$PY" -c 'import json,sys; a=json.load(open(sys.argv[1]))["iteration_time_s"]; b=float(open(sys.argv[2]).read()); sys.exit(abs(a-b) > 1e-9*b)' \
        "$TMP/mk.out" "$TMP/mk.t" 2>/dev/null; then okread=$((okread + 1)); else
        echo "FAIL reader: $mdl's launch does not read back: $(cat "$TMP/mk.err")"; bad=$((bad + 1)); fi
done
printf '%s\nmodel.window_size=[4095,8]\n' "$JOB" >"$TMP/in"; expect 65 bad.txt:5: model.window_size "[LEFT,0]" "'[4095,8]'"
printf '%s\nmodel.softmax_type=off-by-one\n' "$JOB" >"$TMP/in"; expect 65 bad.txt:5: model.softmax_type "'off-by-one'"
printf '%s\nmodel.rotary_percent=2\n' "$JOB" >"$TMP/in"; expect 65 bad.txt:5: model.rotary_percent "'2'"
# well-formed: the writer's forms and a torchrun command line
printf '%s\n' "$JOB" >"$TMP/in"; expect 0
printf 'torchrun --nnodes=1 --nproc_per_node 8 scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config --mode pretrain model.tensor_model_parallel_size=2 train.micro_batch_size=1 train.global_batch_size=8 dataset.seq_length=4096 model.pipeline_model_parallel_size=1 model.context_parallel_size=1\n' \
    >"$TMP/in"
expect 0
# issue 30: a launch script: torchrun over continuation lines, overrides
# in a variable (read as bash expands them); what the file does not give
# is refused where it is read
cat >"$TMP/in" <<'EOF'
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
EOF
expect 0
if grep -qF '"tensor_model_parallel_size":	2' "$TMP/bad.out" && grep -qF '"gpus":	8' "$TMP/bad.out"; then
    okread=$((okread + 1))
else
    echo "FAIL reader: the continued torchrun script: $(head -c 400 "$TMP/bad.out")"
    bad=$((bad + 1))
fi
sed -i 's/model.tensor_model_parallel_size=2/model.tensor_model_parallel_size=$TP/' "$TMP/in"
expect 65 "bad.txt:7: model.tensor_model_parallel_size: its value is not known from the file: \$TP ("
sed -i 's/model.tensor_model_parallel_size=\$TP/model.tensor_model_parallel_size=2 $MORE/' "$TMP/in"
expect 65 "could hold overrides is not known from the file: \$MORE ("
# mutations of a good job: any exit but a crash (>= 128) or a sanitizer's
"$PY" - "$TMP" <<'PYEOF'
import json, random, sys
tmp = sys.argv[1]
# the first search's best layout (gpt-neox-20b: the generic recipe)
good = json.load(open(tmp + "/s1.bridge.json"))["ranked"][0]["launch"][
    "nemo"].encode()
rng = random.Random(18)
for i in range(40):
    b = bytearray(good)
    for _ in range(rng.randint(1, 8)):
        op, j = rng.randrange(3), rng.randrange(len(b))
        if op == 0:
            b[j] = rng.choice(b"=:#|*()\"' \n0123456789-+.ntE~[]")
        elif op == 1:
            del b[j]
        else:
            b[j:j] = bytes(rng.randrange(1, 256) for _ in range(rng.randint(1, 4)))
    open(f"{tmp}/mut{i}.txt", "wb").write(bytes(b).replace(b"\0", b"x"))
PYEOF
i=0
while [ $i -lt 40 ]; do
    "$TP" estimate --system eos --nemo-overrides "$TMP/mut$i.txt" >/dev/null \
        2>"$TMP/mut.err"
    rc=$?
    if [ $rc -ge 128 ] || [ $rc = 70 ] || grep -q "Sanitizer\|runtime error" "$TMP/mut.err"; then
        echo "FAIL reader crashed (exit $rc) on mutation $i: $(head -c 300 "$TMP/mut.err")"
        bad=$((bad + 1))
    else
        okread=$((okread + 1))
    fi
    i=$((i + 1))
done
echo "reader: $okread of $((okread + bad)) input checks passed"
[ "$bad" = 0 ] || exit 1

exec "$PY" - "$TP" "$SRC" "$TMP" "$n" <<'EOF'
import json, os, subprocess, sys
tp, src, tmp, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sys.path.insert(0, os.path.join(src, "tests", "launch"))
import nemo_rules

counts = {"checked": 0, "passed": 0, "round_trips": 0, "round_trips_ok": 0,
          "not_read_back": 0, "comments": 0,
          "inexpressible": {"bridge": 0, "nemo1": 0}}
fails = []
for s in range(1, n + 1):
    line = open(f"{tmp}/s{s}.line").read().strip()
    system = line.split("--system")[1].split()[0]
    for form in ("bridge", "nemo1"):
        d = json.load(open(f"{tmp}/s{s}.{form}.json"))
        rows = [("ranked", r) for r in d.get("ranked", [])] + \
               [("pareto", r) for r in d.get("pareto", [])]
        for set_, r in rows:
            text = r["launch"]["nemo"]
            where = f"[{line}] {set_} {r['rank']} {r['layout']} {form}"
            counts["checked"] += 1
            target, bad, notes = nemo_rules.check(text, r["gpus"])
            counts["comments"] += sum(1 for x in notes
                                      if not x.startswith(("# Megatron-Bridge",
                                                           "# NeMo 1.x",
                                                           "# base recipe")))
            if target != form:
                bad = [f"target {target}, expected {form}"] + bad
            if bad:
                fails += [f"{where}: {b}" for b in bad]
                continue
            counts["passed"] += 1
            if "software; these keys run Megatron-Core's" in text:
                counts["not_read_back"] += 1
                continue
            # what the output says it cannot express makes its job another
            # one than the estimate's: not read back
            if "# not expressible:" in text:
                counts["inexpressible"][form] += 1
                continue
            if form == "nemo1":
                # NeMo 1 takes the vocabulary from its tokenizer files: the
                # check gives it, from the output's comment
                vocab = text.split("# vocabulary ")[1].split(":")[0]
                text += f"tokenizer.vocab_size: {vocab}\n"
            counts["round_trips"] += 1
            path = f"{tmp}/o.txt"
            with open(path, "w") as f:
                f.write(text)
            p = subprocess.run([tp, "estimate", "--system", r["system"],
                                "--nemo-overrides", path, "--format", "json"],
                               capture_output=True, text=True)
            if p.returncode not in (0, 1):
                fails.append(f"{where}: estimate exit {p.returncode}: "
                             f"{p.stderr.strip()}")
                continue
            e = json.loads(p.stdout)
            a, b = r["iteration_time_s"], e["iteration_time_s"]
            if abs(a - b) > 1e-9 * abs(a) or e["layout"]["chosen"]:
                fails.append(f"{where}: round trip {a!r} -> {b!r} (chosen "
                             f"{e['layout']['chosen']})")
                continue
            counts["round_trips_ok"] += 1
            # the allocator: Megatron-Bridge's recipes set expandable
            # segments (env_vars, COMMON_RECIPE_ENV_VARS), NeMo 1 does not
            if e["layout"]["expandable_segments"] != (form == "bridge"):
                fails.append(f"{where}: read back with expandable_segments "
                             f"{e['layout']['expandable_segments']}")
            # the memory mechanisms (Bridge only: NeMo 1 has no keys)
            if form == "bridge":
                for k, dflt in (("cuda_graph_impl", "none"),
                                ("fsdp_double_buffer", False),
                                ("moe_permute_fusion", None),
                                ("moe_router_fusion", None)):
                    want = r.get(k, dflt)
                    if want is not None and e["layout"].get(k, dflt) != want:
                        fails.append(f"{where}: {k} {want!r} read back as "
                                     f"{e['layout'].get(k)!r}")
# the checker itself: outputs broken on purpose must be flagged
d = json.load(open(f"{tmp}/s2.bridge.json"))  # llama3-70b on 1024 GPUs
good = d["ranked"][0]["launch"]["nemo"]
broken = {
    "unknown key": good + "model.no_such_field=1\n",
    "TP not dividing heads": good.replace(
        "model.tensor_model_parallel_size=", "model.tensor_model_parallel_size=3"
        "\n# was "),
    "global batch": good.replace("train.global_batch_size=",
                                 "train.global_batch_size=7\n# was "),
    "comm_overlap without ++": good.replace("++comm_overlap.", "comm_overlap."),
    "bad enum": good.replace("model.cp_comm_type=p2p", "model.cp_comm_type=ring"),
    "no version line": "\n".join(good.split("\n")[1:]),
    "SP with TP 1": good.replace("model.tensor_model_parallel_size=",
                                 "model.tensor_model_parallel_size=1\n# was ")
                        .replace("model.sequence_parallel=false",
                                 "model.sequence_parallel=true"),
}
for name, text in broken.items():
    counts["checker_selftests"] = counts.get("checker_selftests", 0) + 1
    if not nemo_rules.check(text, d["ranked"][0]["gpus"])[1]:
        fails.append(f"nemo_rules.py passed an output with {name}")
for f in fails:
    print("FAIL", f)
print(f"nemo launches: {counts['checked']} checked, {counts['passed']} "
      f"passed; read back: {counts['round_trips']} tried, "
      f"{counts['round_trips_ok']} to the same iteration time, "
      f"{counts['not_read_back']} not read back (estimated for another "
      f"framework's software), {counts['inexpressible']['bridge']} "
      f"Megatron-Bridge and {counts['inexpressible']['nemo1']} NeMo 1 ones "
      f"not (they say what they cannot express); {counts['comments']} comment "
      f"lines on what a target cannot express; "
      f"{counts.get('checker_selftests', 0)} broken outputs flagged")
sys.exit(1 if fails or counts["checked"] == 0 else 0)
EOF
