#!/usr/bin/env python3
"""outputs_e2e.py - the output formats of the trainplan binary (issue 20,
part 4): every JSON output against its JSON Schema in docs/schemas/, and
the CSV conventions (RFC 4180, empty cells for missing values, the three
launch forms of search).

usage: outputs_e2e.py schemas|csv TRAINPLAN SOURCE_DIR SCRATCH [--dump DIR]

schemas: needs python3-jsonschema (Debian 12: 4.10); without it the test
exits 77, which CMake's SKIP_RETURN_CODE reports as skipped. Each schema
is itself checked against its meta-schema, docs/ must list every schema,
and every command below must print a document its schema accepts. --dump
DIR also writes each output there (to look at, or to start a new schema
from). csv: Python's own csv module reads every CSV output back.

Debian's python3 only: no third-party module but jsonschema.
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys

SKIP = 77
failures = 0
checks = 0


def bad(msg):
    global failures
    failures += 1
    print("FAIL: " + msg, file=sys.stderr)


def ok():
    global checks
    checks += 1


if len(sys.argv) < 5 or sys.argv[1] not in ("schemas", "csv"):
    print(__doc__, file=sys.stderr)
    sys.exit(2)
MODE, TP, SRC, SCRATCH = sys.argv[1:5]
TP, SRC, SCRATCH = (os.path.abspath(x) for x in (TP, SRC, SCRATCH))
DUMP = sys.argv[6] if len(sys.argv) > 6 and sys.argv[5] == "--dump" else None
SCHEMAS = os.path.join(SRC, "docs", "schemas")
FIX = os.path.join(SRC, "tests", "fixtures")
HWDB = os.path.join(SRC, "hwdb", "data")
shutil.rmtree(SCRATCH, ignore_errors=True)
os.makedirs(SCRATCH)
ENV = dict(os.environ)
ENV.pop("TRAINPLAN_HWDB", None)


def run(args, rc=0, stdin=None):
    """Runs trainplan with args; returns its standard output as text."""
    p = subprocess.run([TP] + args, capture_output=True, text=True,
                       env=ENV, cwd=SCRATCH, input=stdin)
    if p.returncode != rc:
        bad("trainplan %s: exit %d, expected %d: %s"
            % (" ".join(args), p.returncode, rc, p.stderr.strip()[-400:]))
    return p.stdout


# Inputs of the cases: a small sweep spec, a Megatron-LM job for --near,
# a CSV of samples.
with open(os.path.join(SCRATCH, "spec.json"), "w") as f:
    json.dump({"models": ["gpt3-1.7b", "gpt3-175b"], "systems": ["eos"],
               "gpus": [8], "seq_lengths": [2048],
               "global_batch_sizes": [64], "tokens": [None, 1e10],
               "options": {"top": 2}}, f)
# More scenarios, a MoE model among them, in compact records (the default
# since issue 32: the ranked rows without what their tag says, the front
# as points) and in full ones (the spec's "record": "full").
with open(os.path.join(SCRATCH, "compact.json"), "w") as f:
    json.dump({"models": ["gpt3-1.7b", "gpt3-175b", "mixtral-8x7b"],
               "systems": ["eos"], "gpus": [8, "8-32"], "seq_lengths": [2048],
               "global_batch_sizes": [64], "tokens": [None, 1e10],
               "options": {"top": 2}}, f)
with open(os.path.join(SCRATCH, "full.json"), "w") as f:
    json.dump({"models": ["gpt3-1.7b", "gpt3-175b", "mixtral-8x7b"],
               "systems": ["eos"], "gpus": [8, "8-32"], "seq_lengths": [2048],
               "global_batch_sizes": [64], "tokens": [None, 1e10],
               "options": {"top": 2}, "record": "full"}, f)
with open(os.path.join(SCRATCH, "spec2.json"), "w") as f:
    json.dump({"models": ["gpt3-1.7b", "llama2-7b"], "systems": ["eos"],
               "gpus": [8], "seq_lengths": [2048],
               "global_batch_sizes": [64], "tokens": [None, 1e10],
               "options": {"top": 2}}, f)
# The same scenario at three times eos's price (a --hwdb of its own, no
# measured tables): diff finds it changed.
with open(os.path.join(SCRATCH, "one.json"), "w") as f:
    json.dump({"models": ["gpt3-1.7b"], "systems": ["eos"], "gpus": [8],
               "seq_lengths": [2048], "global_batch_sizes": [64],
               "prices": [None, 3.5], "options": {"top": 1}}, f)
with open(os.path.join(HWDB, "systems", "eos.json")) as f:
    eos = json.load(f)
eos["price_usd_per_gpu_hour"]["value"] *= 3
eos.pop("measured", None)
os.makedirs(os.path.join(SCRATCH, "dear", "systems"))
with open(os.path.join(SCRATCH, "dear", "systems", "eos.json"), "w") as f:
    json.dump(eos, f)
with open(os.path.join(SCRATCH, "own.sh"), "w") as f:
    f.write("torchrun --nnodes 1 --nproc_per_node 8 pretrain_gpt.py "
            "--num-layers 24 --hidden-size 2048 --num-attention-heads 16 "
            "--seq-length 2048 --max-position-embeddings 2048 "
            "--vocab-size 50304 --tensor-model-parallel-size 2 "
            "--micro-batch-size 1 --global-batch-size 64 --bf16\n")

with open(os.path.join(SCRATCH, "big.sh"), "w") as f:  # fits nowhere
    f.write("torchrun --nnodes 1 --nproc_per_node 8 pretrain_gpt.py "
            "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 "
            "--seq-length 2048 --max-position-embeddings 2048 "
            "--vocab-size 50304 --tensor-model-parallel-size 8 "
            "--micro-batch-size 1 --global-batch-size 64 --bf16\n")

DENSE = ["-m", "gpt3-1.7b", "--system", "eos", "-s", "2048", "-B", "64"]
MOE = ["-m", "mixtral-8x7b", "--system", "eos", "-s", "4096", "-B", "256"]
EST = ["estimate", "-m", "gpt3-175b", "--system", "eos", "-g", "1024",
       "-t", "8", "-p", "8", "-b", "1", "-B", "1536", "-s", "2048"]
SRCH = ["search"] + DENSE + ["--max-gpus", "16", "--top", "3", "--no-timing"]
IMP = os.path.join(SCRATCH, "imp")

# (schema, how the output is read, arguments, exit status). Reading:
# json (one document), jsonl (one document a line), sweep (JSON Lines in
# the file -o names).
CASES = [
    ("model-list", "json", ["model", "list"], 0),
    ("model-show", "json", ["model", "show", "gpt3-175b"], 0),
    ("model-show", "json", ["model", "show", "deepseek-v3", "-s", "4096"], 0),
    ("model-show", "json", ["model", "show",
                            os.path.join(FIX, "hf", "gemma-3-1b.json")], 0),
    ("hw-list", "json", ["hw", "list"], 0),
    ("hw-show", "json", ["hw", "show", "h100-sxm"], 0),
    ("hw-show", "json", ["hw", "show", "gh200"], 0),
    ("hw-show", "json", ["hw", "show", "eos"], 0),
    ("hw-show", "json", ["hw", "show", "perlmutter"], 0),
    ("hw-check", "json", ["hw", "check",
                          os.path.join(FIX, "hw", "good", "gpus", "testgpu.json"),
                          os.path.join(FIX, "hw", "bad", "many.json")], 65),
    ("hw-check", "json", ["hw", "check",
                          os.path.join(HWDB, "gpus", "gh200.json")], 0),
    ("hw-import-nccl-tests", "json",
     ["hw", "import-nccl-tests", "--system", "eos", "-o", IMP,
      os.path.join(FIX, "nccl", "all_reduce_perf_2x8.log"),
      os.path.join(FIX, "nccl", "alltoall_perf_2x8.log")], 0),
    ("op-show", "json", ["op", "show", "--gpu", "h100", "--op", "linear3",
                         "--shape", "mp=1,b=4,l=2048,dim=4096"], 0),
    ("op-show", "json", ["op", "show", "--gpu", "h100", "--op", "gemm",
                         "--shape", "m=4096,n=4096,k=4096"], 0),
    ("op-cv", "json", ["op", "cv", "--gpu", "h100-sxm"], 0),
    ("coll-show", "json", ["coll", "show", "--system", "eos", "--op",
                           "allreduce", "--bytes", "8,1G", "--group", "1x8"], 0),
    ("coll-show", "json", ["coll", "show", "--system", "eos", "--op",
                           "alltoall", "--bytes", "1M", "--group", "4x8"], 0),
    ("coll-cv", "json", ["coll", "cv", "--system", "eos"], 0),
    ("coll-cv", "json", ["coll", "cv", "--system", "perlmutter"], 0),
    ("estimate", "json", EST, 0),
    ("estimate", "json", EST + ["--tokens", "300e9", "--ops"], 0),
    ("estimate", "json", ["estimate"] + MOE + ["-g", "64", "--tokens", "1e12"], 0),
    ("estimate", "json", ["estimate", "-m", "gpt3-175b", "--system", "eos",
                          "-g", "8", "-t", "8", "-p", "1", "-b", "1", "-B",
                          "64", "-s", "2048"], 1),
    ("estimate", "json", ["estimate", "-m", "gpt3-175b", "--system", "eos",
                          "-g", "24", "-t", "3", "-p", "8", "-b", "1", "-B",
                          "64", "-s", "2048"], 1),
    ("estimate", "json", ["estimate"] + MOE + ["-g", "64", "--ep", "8",
                                               "--moe-imbalance", "1.5",
                                               "--doc-length", "512:0.3,4096:0.7"], 0),
    ("estimate", "json", ["estimate", "-m", "deepseek-v3", "--system", "eos",
                          "-g", "1024", "-s", "4096", "-B", "1024",
                          "--tokens", "1e12"], 0),
    # fp8 layout fields; DeepSeek-V3's activation storage
    ("estimate", "json", ["estimate", "-m", "deepseek-v3", "--system", "eos",
                          "-g", "1024", "-s", "4096", "-B", "1024",
                          "--precision", "fp8", "--fp8-recipe", "blockwise",
                          "--fp8-activation-cache", "deepseek-v3"], 0),
    ("estimate", "json", ["estimate", "-m", "gpt3-1.7b", "--system", "eos",
                          "-g", "8", "-s", "2048", "-B", "64", "-r", "full",
                          "--recompute-method", "block",
                          "--recompute-num-layers", "2"], 0),
    ("estimate", "json", ["estimate", "--system", "eos", "--megatron-args",
                          os.path.join(SCRATCH, "own.sh")], 0),
    ("estimate", "json", ["estimate", "-m", "llama3-8b", "--system", "eos",
                          "-g", "8", "-t", "2", "-p", "1", "-c", "1", "-b", "1",
                          "-B", "128", "-s", "8192", "--log",
                          os.path.join(FIX, "logs", "megatron.log"),
                          "--calibrate-to-log"], 0),
    ("estimate", "json", ["estimate", "-m", "llama3-8b", "--system", "eos",
                          "-g", "8", "-t", "2", "-p", "1", "-c", "1", "-b", "1",
                          "-B", "128", "-s", "8192", "--framework", "torchtitan",
                          "--log", os.path.join(FIX, "logs", "torchtitan.log")], 0),
    ("search", "json", SRCH, 0),
    ("search", "json", ["search", "--system", "eos", "--near",
                        os.path.join(SCRATCH, "own.sh"), "--log",
                        os.path.join(FIX, "logs", "megatron.log"),
                        "--calibrate-to-log", "--top", "2", "--no-timing"], 0),
    ("search", "json", SRCH + ["--tokens", "1e10"], 0),
    ("search", "json", SRCH + ["--all"], 0),
    ("search", "json", ["search", "-m", "gpt3-1.7b", "--system", "eos,selene",
                        "-s", "2048", "-B", "64", "--max-gpus", "16",
                        "--tokens", "1e10", "--budget-usd", "1e6"], 0),
    ("search", "json", ["search"] + MOE + ["--max-gpus", "32", "--top", "2",
                                           "--no-timing",
                                           "--max-memory-fraction", "0.9"], 0),
    ("search", "json", ["search"] + MOE + ["--max-gpus", "32", "--top", "2",
                                           "--no-timing", "--nemo-format",
                                           "nemo1", "--torchtitan-version",
                                           "0.2"], 0),
    ("search", "json", ["search", "-m", "gpt3-175b", "--system", "perlmutter",
                        "--max-gpus", "8", "-s", "2048", "-B", "64"], 1),
    ("search", "json", SRCH + ["--tokens", "1e10", "--budget-usd", "1"], 1),
    # a miss with two limits and its levers (issue 31 item 2)
    ("search", "json", SRCH + ["--tokens", "1e10", "--budget-usd", "150",
                               "--deadline", "2h"], 1),
    ("search-jsonl", "jsonl", SRCH + ["--tokens", "1e10", "--budget-usd",
                                      "150", "--deadline", "2h"], 1),
    ("search", "json", SRCH + ["--explain", "--precision", "fp8",
                               "--framework", "torchtitan"], 0),
    ("search", "json", ["search", "--system", "eos", "--near",
                        os.path.join(SCRATCH, "own.sh"), "--top", "2",
                        "--no-timing"], 0),
    ("search", "json", ["search", "--system", "eos", "--near",
                        os.path.join(SCRATCH, "big.sh")], 1),
    ("search-jsonl", "jsonl", SRCH + ["--tokens", "1e10"], 0),
    ("search-jsonl", "jsonl", ["search"] + MOE + ["--max-gpus", "32",
                                                  "--top", "2"], 0),
    ("search-jsonl", "jsonl", ["search"] + MOE + ["--max-gpus", "32",
                                                  "--top", "2", "--precision",
                                                  "fp8", "--fp8-activation-cache",
                                                  "deepseek-v3"], 0),
    ("search-jsonl", "jsonl", ["search", "-m", "gpt3-175b", "--system",
                               "perlmutter", "--max-gpus", "8", "-s", "2048",
                               "-B", "64"], 1),
    ("sweep-record", "sweep", ["sweep", "spec.json", "-o", "a.jsonl"], 0),
    ("sweep-record", "sweep", ["sweep", "spec.json", "--shard", "0/2", "-o",
                               "s0.jsonl"], 0),
    ("sweep-record", "sweep", ["sweep", "spec.json", "--shard", "1/2", "-o",
                               "s1.jsonl"], 0),
    ("sweep-record", "sweep", ["merge", "s0.jsonl", "s1.jsonl", "-o",
                               "merged.jsonl"], 0),
    ("sweep-record", "sweep", ["sweep", "spec2.json", "-o", "b.jsonl"], 0),
    # the launch forms a record carries (issue 31; none by default, issue
    # 32): every one, or one framework's
    ("sweep-record", "sweep", ["sweep", "spec.json", "--launch", "all", "-o",
                               "ln.jsonl"], 0),
    ("sweep-record", "sweep", ["sweep", "spec.json", "--launch", "nemo", "-o",
                               "lm.jsonl"], 0),
    ("sweep-record", "sweep", ["sweep", "compact.json", "--launch", "none",
                               "-o", "cp.jsonl"], 0),
    ("sweep-record", "sweep", ["sweep", "compact.json", "--launch",
                               "megatron", "-o", "cpl.jsonl"], 0),
    # full records (issue 32: the spec's "record": "full", or --record
    # full over the spec), with and without launches, and merged
    ("sweep-record", "sweep", ["sweep", "full.json", "--launch", "none",
                               "-o", "fl.jsonl"], 0),
    ("sweep-record", "sweep", ["sweep", "full.json", "--launch", "all",
                               "-o", "fla.jsonl"], 0),
    ("sweep-record", "sweep", ["sweep", "spec.json", "--record", "full",
                               "--shard", "0/2", "-o", "f0.jsonl"], 0),
    ("sweep-record", "sweep", ["sweep", "spec.json", "--record", "full",
                               "--shard", "1/2", "-o", "f1.jsonl"], 0),
    ("sweep-record", "sweep", ["merge", "f0.jsonl", "f1.jsonl", "-o",
                               "fmerged.jsonl"], 0),
    ("diff", "json", ["diff", "a.jsonl", "b.jsonl"], 3),
    ("diff", "json", ["diff", "a.jsonl", "merged.jsonl"], 0),
    # compact against full records of the same scenarios: nothing changed
    ("diff", "json", ["diff", "a.jsonl", "fmerged.jsonl"], 0),
    ("sweep-record", "sweep", ["sweep", "one.json", "-o", "c.jsonl"], 0),
    ("sweep-record", "sweep", ["--hwdb", "dear", "sweep", "one.json", "-o",
                               "d.jsonl"], 0),
    ("diff", "json", ["diff", "c.jsonl", "d.jsonl"], 3),
]


def documents(how, args, out):
    if how == "json":
        return [json.loads(out)]
    if how == "jsonl":
        return [json.loads(line) for line in out.splitlines()]
    path = os.path.join(SCRATCH, args[args.index("-o") + 1])
    with open(path) as f:
        return [json.loads(line) for line in f]


def check_schemas():
    try:
        import jsonschema
    except ImportError:
        print("python3-jsonschema is not installed: skipped")
        sys.exit(SKIP)
    names = sorted(n[:-len(".schema.json")] for n in os.listdir(SCHEMAS)
                   if n.endswith(".schema.json"))
    with open(os.path.join(SRC, "docs", "output-formats.md")) as f:
        doc = f.read()
    validators = {}
    for n in names:
        with open(os.path.join(SCHEMAS, n + ".schema.json")) as f:
            s = json.load(f)
        cls = jsonschema.validators.validator_for(s)
        if cls is not jsonschema.Draft202012Validator:
            bad("%s: $schema is not draft 2020-12" % n)
        try:
            cls.check_schema(s)
            ok()
        except jsonschema.exceptions.SchemaError as x:
            bad("%s.schema.json is not a valid schema: %s" % (n, x.message))
            continue
        if s.get("$id", "").endswith("/%s.schema.json" % n):
            ok()
        else:
            bad("%s.schema.json: $id does not name the file" % n)
        if ("schemas/%s.schema.json" % n) in doc:
            ok()
        else:
            bad("docs/output-formats.md does not list %s.schema.json" % n)
        validators[n] = cls(s)
    used = set()
    for schema, how, args, rc in CASES:
        used.add(schema)
        fmt = ["--format", "jsonl" if how == "jsonl" else "json"]
        out = run(fmt + args, rc)
        try:
            docs = documents(how, args, out)
        except (ValueError, OSError) as x:
            bad("trainplan %s: not JSON: %s" % (" ".join(args), x))
            continue
        if DUMP:
            os.makedirs(DUMP, exist_ok=True)
            k = len(os.listdir(DUMP))
            with open(os.path.join(DUMP, "%02d-%s.json" % (k, schema)), "w") as f:
                json.dump(docs if how != "json" else docs[0], f, indent=1)
        if schema not in validators:
            bad("no schema docs/schemas/%s.schema.json" % schema)
            continue
        if not docs:
            bad("trainplan %s: no output" % " ".join(args))
        for i, d in enumerate(docs):
            errs = sorted(validators[schema].iter_errors(d),
                          key=lambda e: list(e.absolute_path))
            for e in errs[:5]:
                bad("trainplan %s%s: %s at %s" % (
                    " ".join(args), " (line %d)" % (i + 1) if how != "json" else "",
                    e.message[:300], "/".join(str(p) for p in e.absolute_path)))
            if not errs:
                ok()
            # schema_version first: a reader can check it before the rest.
            items = d if isinstance(d, list) else [d]
            for x in items:
                if list(x)[:1] != ["schema_version"]:
                    bad("trainplan %s: schema_version is not the first key"
                        % " ".join(args))
                    break
    for n in names:
        if n not in used:
            bad("%s.schema.json: no case checks it" % n)
    check_compact()


# What a compact record keeps of the full one (sweep/sweep_run.c compact_search),
# written again here as the reader's side of the contract.
COMPACT_ROW_DROP = ("pipeline_split", "memory_savers", "global_batch_size",
                    "seq_length", "precision", "price_usd_per_gpu_hour")
COMPACT_POINT_KEEP = ("rank", "layout", "system", "gpus", "iteration_time_s",
                      "tokens_per_s", "peak_memory_bytes",
                      "cost_per_iteration_usd", "time_to_train_s", "cost_usd")


def compacted(rec):
    s = rec.get("search")
    if not s:
        return rec
    for i, r in enumerate(s["ranked"]):
        for k in COMPACT_ROW_DROP + (("breakdown_s",) if i else ()):
            r.pop(k, None)
    s["pareto"] = [{k: v for k, v in p.items() if k in COMPACT_POINT_KEEP}
                   for p in s["pareto"]]
    st = s["stats"]
    for k, v in list(st.items()):
        if k == "pipeline_sizes":
            st[k] = [x for x in v if x["valid"] != 0]
        elif isinstance(v, dict):
            st[k] = {m: n for m, n in v.items() if n != 0}
    return rec


def check_compact():
    """A compact record (the default) is the full record less what
    compacted() drops, every figure kept to the bit, and at most 8 KB
    without launches; each says which it is; the CSV of compact records
    is that of full ones."""
    with open(os.path.join(SCRATCH, "fl.jsonl")) as f:
        full = [json.loads(x) for x in f]
    with open(os.path.join(SCRATCH, "cp.jsonl")) as f:
        lines = f.read().splitlines()
    comp = [json.loads(x) for x in lines]
    for a, b in zip(full, comp):
        if b.pop("record", None) != "compact":
            bad("compact record %d: no \"record\": \"compact\"" % b["index"])
        if a.pop("record", None) != "full":
            bad("full record %d: no \"record\": \"full\"" % a["index"])
        a.pop("record_fnv1a64")
        b.pop("record_fnv1a64")
        if compacted(a) == b:
            ok()
        else:
            bad("compact record %d is not the full one compacted" % b["index"])
    if len(full) == len(comp) == 12:
        ok()
    else:
        bad("compact sweep: %d and %d records" % (len(full), len(comp)))
    big = [len(x) for x in lines if len(x) + 1 > 8192]
    if not big:
        ok()
    else:
        bad("compact records over 8 KB without launches: %s" % big)
    # merge reads the records as they are (sweep --format csv writes
    # compact ones whatever the spec says)
    csv_full = run(["merge", "fl.jsonl", "--format", "csv"])
    if csv_full and csv_full == run(["merge", "cp.jsonl", "--format", "csv"]) \
       == run(["sweep", "full.json", "--format", "csv"]):
        ok()
    else:
        bad("merge --format csv: compact records give another CSV")


def read_csv(text):
    """The rows of text, read as RFC 4180 (Python's csv module)."""
    return list(csv.reader(io.StringIO(text, newline="")))


def check_csv():
    # Missing values are empty: without --tokens, search's time, GPU-hours
    # and cost to train; with it, numbers.
    for tokens, want_empty in ((None, True), ("1e10", False)):
        args = SRCH + (["--tokens", tokens] if tokens else [])
        rows = read_csv(run(args + ["--format", "csv"]))
        head = rows[0]
        for col in ("megatron", "nemo", "torchtitan_config"):
            if col in head:
                ok()
            else:
                bad("search csv: no %s column" % col)
        if len(rows) < 3 or any(len(r) != len(head) for r in rows):
            bad("search csv: rows of another width than the header")
            continue
        for r in rows[1:]:
            d = dict(zip(head, r))
            for col in ("time_to_train_s", "gpu_hours", "cost_usd"):
                if (d[col] == "") == want_empty:
                    ok()
                else:
                    bad("search csv %s: %s = '%s'" % (tokens, col, d[col]))
            # The three launches, each as JSON has it, quotes and line
            # breaks included.
            if "\n" in d["nemo"] and "\n" in d["torchtitan_config"] \
               and '"' in d["megatron"]:
                ok()
            else:
                bad("search csv: launch cells lost their quotes or lines")
        js = json.loads(run(args + ["--format", "json"]))
        j0, c0 = js["ranked"][0], dict(zip(head, rows[1]))
        for col, key in (("megatron", "megatron"), ("nemo", "nemo"),
                         ("torchtitan_config", "torchtitan_config")):
            if c0[col] == j0["launch"][key]:
                ok()
            else:
                bad("search csv: %s differs from the JSON's launch.%s"
                    % (col, key))
        for col in ("time_to_train_s", "gpu_hours", "cost_usd"):
            if (j0[col] is None) == want_empty:
                ok()
            else:
                bad("search json %s: %s = %r" % (tokens, col, j0[col]))
    # sweep --format csv (issue 31): a header, then one row a scenario;
    # the best layout's cells are search --format csv's #1 row's, column
    # for column, and an infeasible scenario says its nearest miss.
    rows = read_csv(run(["sweep", "spec.json", "--format", "csv"]))
    head = rows[0]
    if len(rows) == 5 and all(len(r) == len(head) for r in rows) \
       and sum(r == head for r in rows) == 1:
        ok()
    else:
        bad("sweep csv: %d rows, widths %s" % (len(rows),
                                              [len(r) for r in rows]))
    seen = set()
    for r in rows[1:]:
        d = dict(zip(head, r))
        seen.add(d["status"])
        args = ["search", "-m", d["model"], "--system", d["scenario_system"],
                "-g", d["scenario_gpus"], "-s", d["seq_length"], "-B",
                d["global_batch_size"], "--top", "2", "--format", "csv"]
        if d["tokens"]:
            args += ["--tokens", d["tokens"]]
        srows = read_csv(run(args, 0 if d["status"] == "ok" else 1))
        s0 = dict(zip(srows[0], srows[1]))
        common = [c for c in head if c in srows[0]]
        if d["status"] == "ok":
            diff = [c for c in common if d[c] != s0[c]]
            if len(common) >= 26 and not diff:
                ok()
            else:
                bad("sweep csv: %d columns of search's, differing: %s"
                    % (len(common), ["%s %s/%s" % (c, d[c], s0[c])
                                     for c in diff]))
        elif d["miss_limit"] == "memory" and float(d["miss_excess"]) > 0 \
                and d["layout"] == "" and d["miss_layout"]:
            ok()
        else:
            bad("sweep csv: an infeasible scenario's miss: %r" % d)
    if seen == {"ok", "infeasible"}:
        ok()
    else:
        bad("sweep csv: statuses %s, expected ok and infeasible" % seen)
    # No "-" standing for a missing value in any table's CSV.
    for args in (["model", "list"], ["hw", "list"],
                 ["op", "cv", "--gpu", "h100-sxm"],
                 ["coll", "show", "--system", "eos", "--op", "allreduce",
                  "--bytes", "8,1G", "--group", "2x8"],
                 ["coll", "cv", "--system", "perlmutter"]):
        rows = read_csv(run(args + ["--format", "csv"]))
        # hw list: a table of GPUs, a blank line, a table of systems.
        tables, cur = [], []
        for r in rows + [[]]:
            if r:
                cur.append(r)
            elif cur:
                tables.append(cur)
                cur = []
        if tables and all(len(r) == len(t[0]) for t in tables for r in t) \
           and not any(c == "-" for r in rows for c in r):
            ok()
        else:
            bad("%s --format csv: ragged rows or a '-' cell" % " ".join(args))
    # The sample reader takes what RFC 4180 allows: a quoted header, CRLF.
    h100 = os.path.join(HWDB, "measured", "h100-sxm",
                        "NVIDIAH10080GBHBM3_linear1_fp16.csv")
    with open(h100, newline="") as f:
        lines = f.read().splitlines()
    q = os.path.join(SCRATCH, "quoted.csv")
    with open(q, "w", newline="") as f:
        f.write('"mp","b",l,"dim",F_dur(us),"B_dur(us)"\r\n')
        f.write("\r\n".join(lines[1:4]) + "\r\n")
    want = os.path.join(SCRATCH, "plain.csv")
    with open(want, "w") as f:
        f.write("\n".join(lines[:4]) + "\n")
    a = run(["op", "predict", "--gpu", "h100", "--op", "linear1", "--train",
             h100, "--shapes", q])
    b = run(["op", "predict", "--gpu", "h100", "--op", "linear1", "--train",
             h100, "--shapes", want])
    if a == b and len(a.splitlines()) == 4:
        ok()
    else:
        bad("a quoted, CRLF sample file reads differently from the plain one")
    broken = os.path.join(SCRATCH, "broken.csv")
    with open(broken, "w") as f:
        f.write(lines[0] + "\n" + lines[1] + "\n" + '1,"2,1024,4608,1,1\n')
    p = subprocess.run([TP, "op", "predict", "--gpu", "h100", "--op",
                        "linear1", "--train", h100, "--shapes", broken],
                       capture_output=True, text=True, env=ENV)
    if p.returncode == 65 and "broken.csv:3:3: the quote opened here is " \
       "never closed" in p.stderr:
        ok()
    else:
        bad("malformed quote: exit %d, %s" % (p.returncode, p.stderr.strip()))


if MODE == "schemas":
    check_schemas()
else:
    check_csv()
print("%d checks, %d failed" % (checks, failures))
sys.exit(1 if failures else 0)
