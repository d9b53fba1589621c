#!/usr/bin/env python3
"""make_mlperf_runs.py - writes mlperf_runs.json from the MLPerf Training results repositories.

MLCommons publishes every MLPerf Training round as a repository (mlcommons/training_results_v3.0
... v5.1). Each submission ships its launch scripts (benchmarks/<benchmark>/**/config_*.sh, bash
files that export environment variables, plus the Hydra/OmegaConf yaml that turns them into
NeMo settings) and its result logs (results/<system>/<benchmark>/result_*.txt, one ':::MLLOG'
JSON event per line). This script reads both for the LLM benchmarks run with NVIDIA's
NeMo/Megatron stack - gpt3 (GPT-3 175B pre-training), llama31_405b and llama31_8b
(Llama 3.1 pre-training), llama2_70b_lora (LoRA fine-tuning) - and writes one entry per
(round, submitter, system, benchmark): the layout read from the config, the time per training
step measured from the logs, and where every value came from.

What it does not do: it runs no bash. Config scripts are read by a small interpreter that
understands what these files use (export, ${VAR:=default}, $((arithmetic)), source, if/elif/
else on simple [[ ]] tests) and records every line it could not follow. A value the scripts do
not set is taken from the yaml's ${oc.env:VAR,default}; one found in neither is null. The
layout is never guessed: where the config that produced a result cannot be told apart from
others, the fields that differ between the candidates are null and the entry says so.

Usage: python3 make_mlperf_runs.py --mirrors DIR [--output FILE]
  DIR holds the fetched bare repositories as DIR/mlcommons+training_results_vX.Y/repo (the
  layout `fetch github:mlcommons/training_results_vX.Y` leaves under /work/.mirror), or
  DIR/<owner>+training_results_vX.Y/repo for a fork (the entry records which copy was read).
Writes mlperf_runs.json next to this script. Standard library and the git binary only.
Deterministic: same repositories at the same commits, same bytes.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

ROUNDS = ("v3.0", "v3.1", "v4.0", "v4.1", "v5.0", "v5.1")
BENCHMARKS = ("gpt3", "llama31_405b", "llama31_8b", "llama2_70b_lora")

# What one "sample" of each benchmark is, from its reference implementation (mlcommons/training)
# and the rules: GPT-3 trains on sequences of 2048 tokens and its logs count TOKENS in
# epoch_num / epoch_count (an evaluation every 24576 sequences is logged at 50331648 = 24576 x
# 2048); the Llama benchmarks count sequences (samples_count) of 8192 tokens.
BENCH_INFO = {
    "gpt3": {"seq": 2048, "count_unit": "tokens",
             "reference": "mlcommons/training retired_benchmarks/gpt3/megatron-lm (run_gpt3.sh: "
                          "--seq-length 2048; README: 'Evaluate after every 24576 samples')"},
    "llama31_405b": {"seq": 8192, "count_unit": "sequences",
                     "reference": "mlcommons/training large_language_model_pretraining/nemo "
                                  "README (Context Length 8192; evaluation every 46,080 "
                                  "sequences)"},
    "llama31_8b": {"seq": 8192, "count_unit": "sequences",
                   "reference": "mlcommons/training small_llm_pretraining/nemo README (Context "
                                "Length 8192; evaluation every 12288 sequences)"},
    "llama2_70b_lora": {"seq": 8192, "count_unit": "sequences",
                        "reference": "mlcommons/training llama2_70b_lora README (GovReport, "
                                     "sequences of 8192 tokens)"},
}


# ---- the git mirrors --------------------------------------------------------------------------


class Mirror:
    """One fetched bare repository, read at HEAD."""

    def __init__(self, rnd, owner, git_dir):
        self.round, self.owner, self.git_dir = rnd, owner, git_dir
        self.commit = self._git("rev-parse", "HEAD").strip()
        self.blob = {}
        for line in self._git("ls-tree", "-r", "HEAD").splitlines():
            meta, path = line.split("\t", 1)
            self.blob[path] = meta.split()[2]
        self.files = sorted(self.blob)
        self.file_set = set(self.files)
        self._cache = {}

    def _git(self, *args):
        env = dict(os.environ, GIT_NO_LAZY_FETCH="1")
        return subprocess.run(["git", "--git-dir", self.git_dir] + list(args), check=True,
                              capture_output=True, text=True, env=env).stdout

    def read(self, path):
        """The file's text at HEAD, or None where the snapshot lacks its blob."""
        if path in self._cache:
            return self._cache[path]
        env = dict(os.environ, GIT_NO_LAZY_FETCH="1")
        p = subprocess.run(["git", "--git-dir", self.git_dir, "cat-file", "blob",
                            "HEAD:" + path], capture_output=True, env=env)
        text = p.stdout.decode("utf-8", "replace") if p.returncode == 0 else None
        self._cache[path] = text
        return text

    def url(self):
        return "https://github.com/mlcommons/training_results_%s" % self.round


def find_mirrors(root):
    out = {}
    for name in sorted(os.listdir(root)):
        m = re.match(r"([^+]+)\+training_results_(v\d\.\d)$", name)
        if not m or m.group(2) not in ROUNDS:
            continue
        git_dir = os.path.join(root, name, "repo")
        if not os.path.isdir(git_dir):
            continue
        # mlcommons' own copy wins over a fork of the same round.
        if m.group(2) in out and out[m.group(2)].owner == "mlcommons":
            continue
        out[m.group(2)] = Mirror(m.group(2), m.group(1), git_dir)
    return out


# ---- a reader for the config scripts ------------------------------------------------------------
#
# The configs are short bash files: exports, ${VAR:=default} defaults, $((...)) arithmetic,
# `source $(dirname ${BASH_SOURCE[0]})/config_common.sh`, and if/elif/else/fi on [[ ]] tests of
# those variables. BashLite follows exactly that and notes every line it skips, so an entry can
# say what of its config was not read. The environment starts empty (nothing from a launch
# command line), as a submission's README launches them.

class BashLite:
    def __init__(self, mirror, top):
        self.mirror = mirror
        self.top = top
        self.env = {}
        self.sourced = []
        self.skipped = []      # (file, line) not understood
        self.exited = None     # the line of an `exit` that ran
        self.depth = 0
        self.fallback_dirs = readme_pointed_dirs(mirror, os.path.dirname(top))
        self.fallback_used = []

    # -- expansion --

    def _var(self, name):
        return self.env.get(name)

    def _arith(self, expr, where):
        expr = self.expand(expr, where)
        toks = re.findall(r"[A-Za-z_][A-Za-z0-9_]*|\d+|\*\*|[-+*/%()<>=!&|]+|\S", expr)
        out = []
        for t in toks:
            if re.match(r"[A-Za-z_]", t):
                v = self.env.get(t, "0")
                if not re.fullmatch(r"-?\d+", v or ""):
                    raise ValueError("non-integer %s=%r" % (t, v))
                out.append(v)
            elif re.fullmatch(r"\d+", t):
                out.append(t)
            elif t in ("+", "-", "*", "%", "(", ")"):
                out.append(t)
            elif t == "/":
                out.append("//")  # the operands here are never negative
            else:
                raise ValueError("operator %r" % t)
        try:
            return str(int(eval("".join(out), {"__builtins__": {}}, {})))
        except (SyntaxError, ZeroDivisionError, TypeError) as e:
            raise ValueError("arithmetic %r: %s" % (expr, e))

    def _command(self, cmd, where):
        """$(...): the two idioms the configs use; anything else is unknown."""
        if "BASH_SOURCE" in cmd and "basename" in cmd:
            base = os.path.basename(self.top)
            return re.sub(r"^config_", "", re.sub(r"\.sh$", "", base))
        if cmd.strip().startswith("dirname"):
            return os.path.dirname(where[0])
        self.skipped.append((where[0], "$(%s)" % cmd))
        return "<$(%s)>" % cmd

    def _matching(self, s, i, open_c, close_c):
        depth = 0
        while i < len(s):
            if s[i] == open_c:
                depth += 1
            elif s[i] == close_c:
                depth -= 1
                if depth == 0:
                    return i
            i += 1
        raise ValueError("unbalanced %s in %r" % (open_c, s))

    def expand(self, s, where):
        out, i = [], 0
        while i < len(s):
            c = s[i]
            if c == "'":
                j = s.index("'", i + 1)
                out.append(s[i + 1:j])
                i = j + 1
            elif c == '"':
                i += 1
            elif c == "\\" and i + 1 < len(s):
                out.append(s[i + 1])
                i += 2
            elif s.startswith("$((", i):
                j = self._matching(s, i + 1, "(", ")")
                out.append(self._arith(s[i + 3:j - 1], where))
                i = j + 1
            elif s.startswith("$(", i):
                j = self._matching(s, i + 1, "(", ")")
                out.append(self._command(s[i + 2:j], where))
                i = j + 1
            elif s.startswith("${", i):
                j = self._matching(s, i + 1, "{", "}")
                out.append(self._param(s[i + 2:j], where))
                i = j + 1
            elif c == "$" and i + 1 < len(s) and re.match(r"[A-Za-z_]", s[i + 1]):
                m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", s[i + 1:])
                out.append(self._var(m.group(0)) or "")
                i += 1 + len(m.group(0))
            else:
                out.append(c)
                i += 1
        return "".join(out)

    def _param(self, body, where):
        if body.startswith("BASH_SOURCE"):
            return where[0]
        m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)(:?[-=+?])?(.*)$", body, re.S)
        if not m:
            self.skipped.append((where[0], "${%s}" % body))
            return ""
        name, op, rest = m.group(1), m.group(2), m.group(3)
        val = self.env.get(name)
        if op is None:
            if rest:
                self.skipped.append((where[0], "${%s}" % body))
            return val or ""
        empty = val is None or (op.startswith(":") and val == "")
        kind = op[-1]
        if kind == "-":
            return self.expand(rest, where) if empty else val
        if kind == "=":
            if empty:
                self.env[name] = self.expand(rest, where)
            return self.env[name]
        if kind == "+":
            return "" if empty else self.expand(rest, where)
        return val or ""

    # -- statements --

    def _test(self, cond, where):
        """One [[ ]] / [ ] test, or an && / || chain of them."""
        cond = cond.strip()
        for op, f in (("||", any), ("&&", all)):
            parts = split_top(cond, op)
            if len(parts) > 1:
                return f(self._test(p, where) for p in parts)
        m = re.fullmatch(r"\[\[?\s*(.*?)\s*\]?\]", cond)
        if not m:
            raise ValueError("test %r" % cond)
        body = m.group(1)
        neg = body.startswith("! ")
        if neg:
            body = body[2:]
        toks = shell_words(body)
        vals = [self.expand(t, where) for t in toks]
        if len(vals) == 2 and toks[0] in ("-n", "-z"):
            r = (vals[1] != "") == (toks[0] == "-n")
        elif len(vals) == 2 and toks[0] in ("-f", "-d", "-e"):
            raise ValueError("file test")
        elif len(vals) == 3:
            a, op, b = vals[0], toks[1], vals[2]
            if op in ("==", "=", "!="):
                r = (a == b) == (op != "!=")
            elif op in ("-eq", "-ne", "-gt", "-lt", "-ge", "-le"):
                x, y = int(a or 0), int(b or 0)
                r = {"-eq": x == y, "-ne": x != y, "-gt": x > y, "-lt": x < y,
                     "-ge": x >= y, "-le": x <= y}[op]
            else:
                raise ValueError("operator %r" % op)
        else:
            raise ValueError("test %r" % body)
        return r != neg

    def run_file(self, path):
        text = self.mirror.read(path)
        if text is None:
            self.skipped.append((path, "(file missing from the snapshot)"))
            return
        self.sourced.append(path)
        self.depth += 1
        if self.depth > 8:
            raise ValueError("source depth")
        lines = text.replace("\\\n", " ").split("\n")
        # Block stack: each frame is [active, taken] for if/elif/else chains.
        stack = []
        active = True
        skip_block = None  # for/while/case/function bodies we do not follow
        for raw in lines:
            line = strip_comment(raw).strip()
            if not line:
                continue
            where = (path, line)
            if skip_block:
                if re.match(skip_block, line):
                    skip_block = None
                continue
            if re.match(r"(for|while|until)\b", line):
                if active:
                    self.skipped.append(where)
                skip_block = r"done\b"
                continue
            if re.match(r"case\b", line):
                if active:
                    self.skipped.append(where)
                skip_block = r"esac\b"
                continue
            if re.match(r"(function\s+\w+|\w+\s*\(\)\s*)\{?", line) and "{" in line:
                if active:
                    self.skipped.append(where)
                skip_block = r"\}"
                continue
            m = re.match(r"(if|elif)\s+(.*?);?\s*then\s*$", line)
            if m:
                if m.group(1) == "if":
                    stack.append([active, False])
                frame = stack[-1]
                parent = frame[0]
                if m.group(1) == "elif" and frame[1]:
                    active = False
                    continue
                ok = False
                if parent:
                    try:
                        ok = self._test(m.group(2), where)
                    except (ValueError, KeyError) as e:
                        self.skipped.append((path, "%s  [%s; taken as false]" % (line, e)))
                frame[1] = frame[1] or ok
                active = parent and ok
                continue
            if line == "else":
                frame = stack[-1]
                active = frame[0] and not frame[1]
                frame[1] = True
                continue
            if line == "fi":
                active = stack.pop()[0]
                continue
            if not active:
                continue
            self._statement(line, where)
            if self.exited:
                break
        self.depth -= 1

    def _statement(self, line, where):
        line = line.rstrip(";").strip()
        # `[[ test ]] && command` and `[[ test ]] || command`.
        m = re.match(r"(\[\[?.*?\]?\])\s*(&&|\|\|)\s*(.*)$", line)
        if m and line.startswith("["):
            try:
                ok = self._test(m.group(1), where)
            except (ValueError, KeyError) as e:
                self.skipped.append((where[0], "%s  [%s]" % (line, e)))
                return
            rest = m.group(3)
            parts = split_top(rest, "||")
            if m.group(2) == "&&":
                if ok:
                    self._statement(parts[0], where)
                elif len(parts) > 1:
                    self._statement(parts[1], where)
            elif not ok:
                self._statement(rest, where)
            return
        word = line.split()[0]
        if word in ("source", "."):
            target = self.expand(line.split(None, 1)[1].strip(), where)
            here = os.path.dirname(where[0])
            if target.startswith("/"):
                # a path inside the container (/workspace/llm/...): the file beside this one
                target = os.path.join(here, os.path.basename(target))
            elif not target.startswith(here):
                target = os.path.join(here, target)
            target = os.path.normpath(target)
            if target not in self.mirror.file_set:
                # A folder whose README sends the reader to another implementation folder
                # (University of Florida's hpg.dgxb200x8 -> b200_nemo) keeps its helpers there.
                for d in self.fallback_dirs:
                    alt = os.path.join(d, os.path.basename(target))
                    if alt in self.mirror.file_set:
                        self.fallback_used.append(alt)
                        target = alt
                        break
            if target in self.mirror.file_set:
                self.run_file(target)
            else:
                self.skipped.append((where[0], "%s  [not in the snapshot: %s]" % (line, target)))
            return
        if word == "exit":
            self.exited = where
            return
        if word in ("echo", "printf", "set", "shopt", "return", "true", "mkdir", "umask",
                    "(", "jq", "cd"):
            return
        if word == ":":
            try:
                self.expand(line[1:].strip(), where)
            except ValueError as e:
                self.skipped.append((where[0], "%s  [%s]" % (line, e)))
            return
        if word == "unset":
            for name in line.split()[1:]:
                self.env.pop(name, None)
            return
        m = re.match(r"(?:export\s+|readonly\s+|declare\s+-x\s+)?([A-Za-z_][A-Za-z0-9_]*)"
                     r"(\+?=)(.*)$", line)
        if m:
            name, op, value = m.group(1), m.group(2), m.group(3).strip()
            try:
                v = self.expand(value, where)
            except (ValueError, KeyError, ZeroDivisionError) as e:
                self.skipped.append((where[0], "%s  [%s]" % (line, e)))
                return
            self.env[name] = (self.env.get(name, "") + v) if op == "+=" else v
            return
        if re.match(r"export\s+[A-Za-z_][A-Za-z0-9_]*\s*$", line):
            return
        self.skipped.append(where)


def strip_comment(line):
    """Drop a # comment that is not inside quotes or a ${#...}."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t;") :
            return line[:i]
    return line


def split_top(s, sep):
    """Split s on sep outside quotes and brackets."""
    parts, depth, quote, start, i = [], 0, None, 0, 0
    while i < len(s):
        c = s[i]
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and s.startswith(sep, i):
            parts.append(s[start:i].strip())
            i += len(sep)
            start = i
            continue
        i += 1
    parts.append(s[start:].strip())
    return parts


def shell_words(s):
    """Words of a test body, keeping quoted strings and ${...} whole."""
    words, cur, i, quote, depth = [], "", 0, None, 0
    while i < len(s):
        c = s[i]
        if quote:
            cur += c
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
            cur += c
        elif c == "{" or (c == "(" and cur.endswith("$")):
            depth += 1
            cur += c
        elif c in "})" and depth:
            depth -= 1
            cur += c
        elif c.isspace() and depth == 0:
            if cur:
                words.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    if cur:
        words.append(cur)
    return words


def readme_pointed_dirs(mirror, folder):
    """Sibling implementation folders a folder's README links to ("see [x](../x)")."""
    out = []
    for f in mirror.files:
        if os.path.dirname(f) == folder and os.path.basename(f).lower().startswith("readme"):
            for name in re.findall(r"\]\(\.\./([^)/\s]+)/?\)", mirror.read(f) or ""):
                d = os.path.join(os.path.dirname(folder), name)
                if d not in out:
                    out.append(d)
    return out


def run_config(mirror, path):
    sh = BashLite(mirror, path)
    try:
        sh.run_file(path)
    except (ValueError, IndexError, RecursionError) as e:
        sh.skipped.append((path, "[stopped: %s]" % e))
    return sh


# ---- the yaml defaults -------------------------------------------------------------------------
#
# NeMo reads the environment through OmegaConf: `key: ${oc.decode:${oc.env:VAR,DEFAULT}}`. A
# variable the scripts leave unset takes DEFAULT. Only literal defaults are kept (a default that
# is itself an expression is recorded as such and not evaluated).

def yaml_env_defaults(mirror, impl_dir):
    """{VAR: {"default": str or None, "key": yaml key, "file": path}} for the implementation."""
    out = {}
    files = [f for f in mirror.files if f.startswith(impl_dir + "/")
             and f.endswith((".yaml", ".yml")) and "/NeMo/" not in f and "/Megatron-LM/" not in f
             and "/conf/" in "/" + f[len(impl_dir):]]
    for f in sorted(files):
        text = mirror.read(f) or ""
        for line in text.split("\n"):
            if line.lstrip().startswith("#"):
                continue
            km = re.match(r"\s*([A-Za-z_][A-Za-z0-9_@.]*)\s*:", line)
            for m in re.finditer(r"oc\.env:([A-Za-z_][A-Za-z0-9_]*)", line):
                var = m.group(1)
                rest = line[m.end():]
                default = None
                if rest.startswith(","):
                    # up to the brace closing this ${oc.env:...}
                    depth, j = 0, 1
                    while j < len(rest):
                        if rest[j] == "{":
                            depth += 1
                        elif rest[j] == "}":
                            if depth == 0:
                                break
                            depth -= 1
                        j += 1
                    default = rest[1:j].strip()
                if var not in out or (out[var]["default"] is None and default is not None):
                    out[var] = {"default": default, "key": km.group(1) if km else None,
                                "file": f}
    return out


# ---- the result logs ---------------------------------------------------------------------------
#
# A result file is the MLLOG event stream of one timed run. Training alternates with evaluation:
# block_start ... (steps) ... block_stop, eval_start ... eval_stop, and each eval_start carries
# the cumulative amount trained so far (GPT-3: epoch_num in tokens; Llama: samples_count in
# sequences). The training time of interval k is from the end of evaluation k-1 (or the first
# block_start) to the next block_stop (or eval_start where a round logs no block_stop); its
# amount is the difference of the cumulative counts. Evaluation time is excluded, and so is
# everything before the first block (initialisation, checkpoint load, warm-up steps that NeMo
# runs before run_start in v4.0 and later).

STEP_TIMING_KEYS = ("train_step_timing", "train_step_time")


def mllog_events(text):
    out = []
    for line in text.split("\n"):
        i = line.find(":::MLLOG ")
        if i < 0:
            continue
        try:
            out.append(json.loads(line[i + 9:]))
        except ValueError:
            continue
    return out


def first_value(events, key):
    for e in events:
        if e.get("key") == key:
            return e.get("value")
    return None


def count_of(e):
    md = e.get("metadata") or {}
    for k in ("samples_count", "epoch_num"):
        if k in md:
            return md[k]
    return None


def parse_result(text, bench, gbs, seq):
    """Training time and steps of one result file (None fields where it cannot tell)."""
    ev = sorted(mllog_events(text), key=lambda e: e.get("time_ms", 0))
    per_token = BENCH_INFO[bench]["count_unit"] == "tokens"
    unit = gbs * seq if per_token else gbs
    starts = [e["time_ms"] for e in ev if e.get("key") == "block_start"]
    stops = [e["time_ms"] for e in ev if e.get("key") == "block_stop"]
    evals = [(e["time_ms"], count_of(e)) for e in ev if e.get("key") == "eval_start"]
    eval_stops = [(e["time_ms"], count_of(e)) for e in ev if e.get("key") == "eval_stop"]
    run_start = [e["time_ms"] for e in ev if e.get("key") == "run_start"]
    run_stop = [e for e in ev if e.get("key") == "run_stop"]
    train_stats, val_times = [], []
    for e in ev:
        if e.get("key") != "tracked_stats":
            continue
        v = e.get("value") or {}
        src = (e.get("metadata") or {}).get("file", "")
        for k in STEP_TIMING_KEYS:
            # the per-step timer of the benchmark's callbacks, not mlperf_common's block mean
            if k in v and "mlperf_common" not in src:
                train_stats.append((e["time_ms"], float(v[k]), k))
        if any(k.startswith("validation_step") for k in v):
            val_times.append(e["time_ms"])
    res = {"intervals": 0, "steps": None, "train_s": None, "iteration_time_s": None,
           "status": (run_stop[0].get("metadata") or {}).get("status") if run_stop else None,
           "run_s": (run_stop[0]["time_ms"] - run_start[0]) / 1000.0
           if run_stop and run_start else None,
           "end_marker": None, "problem": None}
    # Some rounds log no eval_start (v5.0 GB200 405B): the evaluation's end then marks the
    # interval, and training ends at the last step logged before the first validation step.
    markers = evals if evals else eval_stops
    res["end_marker"] = ("block_stop" if stops else "eval_start") if evals else \
        "last training step logged before the evaluation (no eval_start/block_stop)"
    if not starts or not markers:
        res["problem"] = "no block_start and eval_start/eval_stop events"
        return res
    t_prev, c_prev = starts[0], 0
    steps, train_ms, step_times, key_used = 0, 0, [], None
    for t_mark, c_mark in markers:
        if c_mark is None:
            res["problem"] = "an evaluation event without samples_count/epoch_num"
            return res
        s = max([t for t in starts if t_prev <= t < t_mark] or [t_prev])
        ends = [t for t in stops if s <= t <= t_mark]
        if ends:
            end = ends[0]
        elif evals:
            end = t_mark
        else:
            first_val = min([t for t in val_times if s <= t <= t_mark] or [t_mark])
            last = [t for t, _, _ in train_stats if s <= t <= first_val]
            if not last:
                res["problem"] = "no training step logged before an evaluation"
                return res
            end = max(last)
        amount = c_mark - c_prev
        if amount <= 0 or amount % unit:
            res["problem"] = ("interval of %s %s is not a whole number of steps of %d"
                              % (amount, BENCH_INFO[bench]["count_unit"], unit))
            return res
        steps += amount // unit
        train_ms += end - s
        for t, v, k in train_stats:
            if s <= t <= end:
                step_times.append(v)
                key_used = k
        # the next interval starts when this evaluation ends
        after = [t for t, _ in eval_stops if t >= t_mark]
        t_prev, c_prev = (after[0] if after else t_mark), c_mark
        res["intervals"] += 1
    res["steps"] = steps
    res["train_s"] = train_ms / 1000.0
    res["iteration_time_s"] = train_ms / 1000.0 / steps
    if step_times:
        res["step_timing"] = {"key": key_used, "n": len(step_times),
                              "median_s": statistics.median(step_times)}
    return res


def log_header(text):
    ev = mllog_events(text)
    return {k: first_value(ev, k) for k in (
        "submission_benchmark", "submission_org", "submission_platform", "global_batch_size",
        "gradient_accumulation_steps", "max_sequence_length", "seed")}


# ---- from a config's environment to a layout ---------------------------------------------------

# The variables an entry keeps verbatim (what the scripts set, or the yaml default where they
# do not), grouped by what they change. Names differ between generations: the LoRA scripts say
# TP/PP/CP/MBS/SP where the pre-training ones say TENSOR_MODEL_PARALLEL etc.
RAW_VARS = (
    # size and parallelism
    "DGXNNODES", "DGXNGPU", "MINIBS", "TENSOR_MODEL_PARALLEL", "TP", "PIPELINE_MODEL_PARALLEL",
    "PP", "INTERLEAVED_PIPELINE", "CONTEXT_PARALLEL", "CP", "EXPERT_PARALLEL",
    "MICRO_BATCH_SIZE", "MBS", "SEQ_PARALLEL", "SP", "TP_PP_DP_MAPPING", "MODEL_SIZE",
    "OVERWRITTEN_NUM_LAYERS", "NUM_LAYERS", "HIDDEN_SIZE", "FFN_HIDDEN_SIZE",
    "NUM_ATTENTION_HEADS", "ASYM_PP_EMBED", "ASYM_PP_LOSS",
    # communication overlap
    "TP_COMM_OVERLAP", "MC_TP_OVERLAP_AG", "MC_TP_OVERLAP_RS", "MC_TP_OVERLAP_RS_DGRAD",
    "OVERLAP_P2P_COMM", "BATCH_P2P_COMM", "USE_DIST_OPTIMIZER", "OVERLAP_GRAD_SYNC",
    "OVERLAP_PARAM_SYNC", "OVERLAP_GRAD_REDUCE", "OVERLAP_PARAM_GATHER", "ALIGN_PARAM_GATHER",
    "OVERLAP_PARAM_GATHER_WITH_OPTIM_STEP", "BUCKET_CAP_MB", "BUCKET_SIZE", "SHARP",
    "DEFER_EMBEDDING_WGRAD_COMPUTE", "WGRAD_DEFERRAL_LIMIT", "LORA_A2A",
    # precision
    "FP8", "FP8_HYBRID", "FP8_RECIPE", "FP8_AMAX_HISTORY", "FP8_AMAX_ALGO", "FP8_REDUCE_AMAX",
    "FP8_PARAMS", "FP8_PARAM", "FP8_PARAM_GATHER", "FP8_DPA", "NVTE_DPA_FP8_RECIPE", "FP4",
    "FP4_RECIPE", "FIRST_LAST_LAYERS_BF16", "NUM_LAYERS_AT_START_IN_BF16",
    "NUM_LAYERS_AT_END_IN_BF16",
    # recomputation and graphs
    "ACT_CKPT_GRANULARITY", "ACT_CKPT_METHOD", "ACT_CKPT_NUM_LAYERS", "LAYER_CUDA_GRAPH",
    "MCORE_CUDA_GRAPH", "FULL_CUDA_GRAPH", "CUDA_GRAPH_SCOPE",
    # kernels and runtime
    "NVTE_FUSED_ATTN", "NVTE_FLASH_ATTN", "CUDA_DEVICE_MAX_CONNECTIONS", "USE_TE_OPS",
    "FUSED_QKV_ROPE", "CE_FUSION_IMPL", "NVTE_FWD_LAYERNORM_SM_MARGIN",
    "NVTE_BWD_LAYERNORM_SM_MARGIN", "NCCL_NVLS_ENABLE", "VBOOST_VALUE",
)

TRUE_WORDS = ("true", "1", "yes", "on")
FALSE_WORDS = ("false", "0", "no", "off", "null", "none", "")


def as_bool(v):
    if v is None:
        return None
    s = str(v).strip().strip("'\"").lower()
    if s in TRUE_WORDS:
        return True
    if s in FALSE_WORDS:
        return False
    return None


def as_int(v):
    if v is None:
        return None
    s = str(v).strip().strip("'\"")
    return int(s) if re.fullmatch(r"-?\d+", s) else None


def as_str(v):
    if v is None:
        return None
    s = str(v).strip().strip("'\"")
    return None if s.lower() in ("null", "none", "") else s


class Settings:
    """A config's environment with the yaml defaults behind it."""

    def __init__(self, env, defaults):
        self.env, self.defaults = env, defaults

    def get(self, *names):
        """(value, origin) of the first name the scripts set, else the first yaml default."""
        v, o, _ = self.get_named(*names)
        return v, o

    def get_named(self, *names):
        for n in names:
            if n in self.env:
                return self.env[n], "config", n
        for n in names:
            d = self.defaults.get(n)
            if d is not None and d["default"] is not None and "${" not in d["default"]:
                return d["default"], "default in %s (%s)" % (d["file"].rsplit("/", 1)[-1],
                                                            d["key"]), n
        return None, None, None

    def raw(self):
        set_ = {k: self.env[k] for k in RAW_VARS if k in self.env}
        dflt = {}
        for k in RAW_VARS:
            if k not in self.env and k in self.defaults and self.defaults[k]["default"] is not None:
                dflt[k] = self.defaults[k]["default"]
        return set_, dflt


def impl_dir_of(config_path):
    """The implementation folder: the config's folder, or its parent for .../configs/x.sh."""
    d = os.path.dirname(config_path)
    return os.path.dirname(d) if os.path.basename(d) == "configs" else d


def read_layout(mirror, config_path, bench):
    """Everything the config says, normalized; (layout, settings, sh, notes)."""
    sh = run_config(mirror, config_path)
    defaults = yaml_env_defaults(mirror, impl_dir_of(config_path))
    notes, origin = [], {}
    if not defaults:
        for d in sh.fallback_dirs:
            defaults = yaml_env_defaults(mirror, d)
            if defaults:
                notes.append("yaml defaults read from %s, the folder its README points to" % d)
                break
    # The launchers' own defaults (run_and_time.sh: `: "${SEQ_PARALLEL:=True}"`, run.sub:
    # `: "${DGXNGPU:=8}"`) are set before NeMo reads its yaml, so they win over the yaml's.
    for d in [impl_dir_of(config_path)] + sh.fallback_dirs:
        found = False
        for name in ("run_and_time.sh", "run.sub"):
            path = os.path.join(d, name)
            if path not in mirror.file_set:
                continue
            found = True
            for var, val in re.findall(
                    r'^\s*:\s*"?\$\{([A-Z_][A-Z0-9_]*):=["\']?([A-Za-z0-9_.\-]*)["\']?\}"?\s*$',
                    mirror.read(path) or "", re.M):
                if not (defaults.get(var) or {}).get("launcher"):
                    defaults[var] = {"default": val, "key": "launcher default", "file": path,
                                     "launcher": True}
        if found:
            break
    if sh.fallback_used:
        notes.append("helper scripts missing beside the config were read from the folder its "
                     "README points to: %s" % ", ".join(sorted(set(sh.fallback_used))))
    s = Settings(sh.env, defaults)

    def num(field, *names):
        v, o, n = s.get_named(*names)
        origin[field] = "%s=%s (%s)" % (n, v, o) if v is not None else None
        return as_int(v)

    def flag(field, *names, fallback=None, why=None):
        v, o, n = s.get_named(*names)
        b = as_bool(v)
        if b is None:
            origin[field] = why
            return fallback
        origin[field] = "%s=%s (%s)" % (n, v, o)
        return b

    L = {}
    L["nodes"] = num("nodes", "DGXNNODES", "NNODES")
    L["gpus_per_node"] = num("gpus_per_node", "DGXNGPU", "GPUS_PER_NODE")
    L["tp"] = num("tp", "TENSOR_MODEL_PARALLEL", "TP")
    L["pp"] = num("pp", "PIPELINE_MODEL_PARALLEL", "PP")
    # GPT-3's NeMo 1.x scripts have no context parallelism (no CONTEXT_PARALLEL in its yaml).
    has_cp = any(n in sh.env or n in defaults for n in ("CONTEXT_PARALLEL", "CP"))
    L["cp"] = num("cp", "CONTEXT_PARALLEL", "CP") if has_cp else 1
    if not has_cp:
        origin["cp"] = "1: the implementation has no context parallelism setting"
    vpp_raw, vpp_o = s.get("INTERLEAVED_PIPELINE")
    vpp = as_int(vpp_raw)
    if L["pp"] == 1:
        vpp = 1
        origin["vpp"] = "1: pp = 1"
    elif vpp_raw is not None and vpp is None or vpp == 0:
        vpp = 1
        origin["vpp"] = "INTERLEAVED_PIPELINE=%s (%s): not interleaved" % (vpp_raw, vpp_o)
    elif vpp is not None:
        origin["vpp"] = "INTERLEAVED_PIPELINE=%s (%s)" % (vpp_raw, vpp_o)
    else:
        origin["vpp"] = None
    L["vpp"] = vpp
    L["micro_batch_size"] = num("micro_batch_size", "MICRO_BATCH_SIZE", "MBS")
    L["minibs"] = num("minibs", "MINIBS")
    if None not in (L["nodes"], L["gpus_per_node"]):
        L["gpus"] = L["nodes"] * L["gpus_per_node"]
    else:
        L["gpus"] = None
    mp = None if None in (L["tp"], L["pp"], L["cp"]) else L["tp"] * L["pp"] * L["cp"]
    L["dp"] = L["gpus"] // mp if mp and L["gpus"] and L["gpus"] % mp == 0 else None
    L["global_batch_size"] = L["minibs"] * L["dp"] if L["minibs"] and L["dp"] else None
    L["grad_accum_steps"] = (L["minibs"] // L["micro_batch_size"]
                             if L["minibs"] and L["micro_batch_size"]
                             and L["minibs"] % L["micro_batch_size"] == 0 else None)
    sp = flag("sequence_parallel", "SEQ_PARALLEL", "SP")
    if L["tp"] == 1:
        sp = False
        origin["sequence_parallel"] = "false: tp = 1 (Megatron has nothing to split)"
    L["sequence_parallel"] = sp
    L["tp_comm_overlap"] = flag("tp_comm_overlap", "TP_COMM_OVERLAP", fallback=False,
                                why="not set: NeMo's default, off")
    if L["tp"] == 1:
        L["tp_comm_overlap"] = False
    fp8 = flag("fp8", "FP8", fallback=False, why="FP8 not set: bf16")
    fp4 = flag("fp4", "FP4", fallback=False, why="FP4 not set")
    L["precision"] = "fp4" if fp4 else ("fp8" if fp8 else "bf16")
    if fp8 or fp4:
        L["fp8"] = {
            "format": "hybrid (E4M3 forward, E5M2 backward)" if flag("fp8_hybrid", "FP8_HYBRID")
            else "e4m3",
            "recipe": as_str(s.get("FP8_RECIPE")[0]) or "delayed",
            "amax_history": as_int(s.get("FP8_AMAX_HISTORY")[0]),
            "amax_algo": as_str(s.get("FP8_AMAX_ALGO")[0]),
            "reduce_amax": as_bool(s.get("FP8_REDUCE_AMAX")[0]),
            "fp8_params": bool(as_bool(s.get("FP8_PARAMS")[0]) or as_bool(s.get("FP8_PARAM")[0])
                               or as_bool(s.get("FP8_PARAM_GATHER")[0])),
            "fp8_attention": bool(as_bool(s.get("FP8_DPA")[0])),
        }
        if "FP8_RECIPE" not in sh.env and "FP8_RECIPE" not in defaults:
            notes.append("fp8 recipe: the implementation has no FP8_RECIPE setting; "
                         "Transformer Engine's DelayedScaling (per-tensor scales from an amax "
                         "history) is the one NeMo 1.x and TE of that time used")
        if fp4:
            L["fp8"]["fp4_recipe"] = as_str(s.get("FP4_RECIPE")[0])
    gran_raw = s.get("ACT_CKPT_GRANULARITY")[0]
    # unset everywhere: unknown; set to null: NeMo recomputes nothing
    gran = None if gran_raw is None else (as_str(gran_raw) or "none")
    if gran is None:
        notes.append("activation recomputation: ACT_CKPT_GRANULARITY is neither in the config "
                     "nor defaulted by a yaml or launcher in the submission")
    L["recompute"] = {"granularity": gran,
                      "method": as_str(s.get("ACT_CKPT_METHOD")[0]),
                      "num_layers": as_int(s.get("ACT_CKPT_NUM_LAYERS")[0])}
    if bench == "gpt3":
        dist = flag("distributed_optimizer", "USE_DIST_OPTIMIZER", fallback=None)
        L["optimizer"] = {
            "distributed": dist,
            "impl": "apex DistributedFusedAdam (NeMo optim 'distributed_fused_adam')" if dist
            else "fused Adam",
            "overlap_grad_reduce": as_bool(s.get("OVERLAP_GRAD_SYNC")[0]) if dist else None,
            "overlap_param_gather": as_bool(s.get("OVERLAP_PARAM_SYNC")[0]) if dist else None,
        }
    else:
        dist = flag("distributed_optimizer", "USE_DIST_OPTIMIZER", fallback=None)
        L["optimizer"] = {
            "distributed": dist,
            "impl": "Megatron-Core DistributedOptimizer" if dist else None,
            "overlap_grad_reduce": as_bool(s.get("OVERLAP_GRAD_REDUCE")[0]),
            "overlap_param_gather": as_bool(s.get("OVERLAP_PARAM_GATHER")[0]),
            "overlap_param_gather_with_optimizer_step":
                as_bool(s.get("OVERLAP_PARAM_GATHER_WITH_OPTIM_STEP")[0]),
        }
    L["overlap_p2p_comm"] = as_bool(s.get("OVERLAP_P2P_COMM")[0]) if (L["pp"] or 1) > 1 else None
    L["cuda_graphs"] = {
        "layer": bool(as_bool(s.get("LAYER_CUDA_GRAPH")[0])),
        "mcore": bool(as_bool(s.get("MCORE_CUDA_GRAPH")[0])),
        "full_iteration": bool(as_bool(s.get("FULL_CUDA_GRAPH")[0])),
    }
    L["pipeline_split"] = {"embedding_counts_as_layer": bool(as_bool(s.get("ASYM_PP_EMBED")[0])),
                           "loss_counts_as_layer": bool(as_bool(s.get("ASYM_PP_LOSS")[0]))}
    L["model_size"] = as_str(s.get("MODEL_SIZE")[0])
    L["num_layers_override"] = as_int(s.get("OVERWRITTEN_NUM_LAYERS", "NUM_LAYERS")[0])
    L["env"] = {k: sh.env.get(k) for k in ("NVTE_FUSED_ATTN", "NVTE_FLASH_ATTN",
                                           "CUDA_DEVICE_MAX_CONNECTIONS") if k in sh.env}
    L["origin"] = origin
    return L, s, sh, notes


# ---- which config produced which result ---------------------------------------------------------
#
# A submission's results name a system (results/<system>/), not a config. The config is found
# the way a reader of the submission would find it, in this order:
#   1. the README of the implementation folder named after the system names one config
#      (NVIDIA from v4.0 on: "Launch configuration ... are in the `config_X.sh` script");
#   2. else every config_*.sh of the submission's benchmark folder is read, and those whose
#      node count is the system's and whose global batch (MINIBS x data-parallel size) is the
#      logged one are kept; if they all give the same layout, that is the layout;
#   3. else, where only the node count matches, the same with the batch left to the log.
# Anything left ambiguous is null in the entry, with the candidates listed.

VENDORED = ("/NeMo/", "/Megatron-LM/", "/TransformerEngine/", "/apex/", "/megatron-lm/")

LAYOUT_KEYS = ("nodes", "gpus_per_node", "tp", "pp", "vpp", "cp", "micro_batch_size", "minibs",
               "sequence_parallel", "tp_comm_overlap", "precision", "fp8", "recompute",
               "optimizer", "overlap_p2p_comm", "cuda_graphs", "pipeline_split")


def config_candidates(mirror, sub, bench):
    pre = "%s/benchmarks/%s/" % (sub, bench)
    out = []
    for f in mirror.files:
        if not f.startswith(pre) or any(v in "/" + f for v in VENDORED):
            continue
        base = os.path.basename(f)
        if base.startswith("config_") and base.endswith(".sh"):
            out.append(f)
    return sorted(out)


def readme_named_config(mirror, sub, bench, system):
    """The config the system's README names (NVIDIA's per-system implementation folders keep a
    README-<system>.md that says which; the folder's generic README.md is read only without
    one)."""
    pre = "%s/benchmarks/%s/implementations/%s/" % (sub, bench, system)
    readmes = [f for f in mirror.files if f.startswith(pre) and "/" not in f[len(pre):]
               and os.path.basename(f).lower().startswith("readme")]
    own = [f for f in readmes if os.path.basename(f) == "README-%s.md" % system]
    names = set()
    for f in own or readmes:
        names.update(re.findall(r"(config_[A-Za-z0-9_.+-]+?\.sh)", mirror.read(f) or ""))
    return sorted(names)


def model_size_ok(bench, L):
    size = L.get("model_size")
    if bench == "llama31_8b":
        return size == "8b"
    if bench == "llama31_405b":
        return size in (None, "405b")
    return True


def layout_key(L):
    return json.dumps({k: L.get(k) for k in LAYOUT_KEYS}, sort_keys=True)


GPU_FAMILIES = ("GB300", "GB200", "B300", "B200", "H200", "H100", "L40S", "A100")


def gpu_family(text):
    """The GPU a config's name or an accelerator_model_name speaks of (GB200 before B200)."""
    for fam in GPU_FAMILIES:
        if fam in (text or "").upper():
            return fam
    return None


def choose_config(mirror, sub, bench, system, sys_nodes, sys_gpn, accel, log_gbs, cache,
                  candidates=None):
    """(list of (path, layout, settings, shell, notes), how, notes). candidates: the config
    scripts to choose from (default: the submission's own, config_candidates)."""
    cands = config_candidates(mirror, sub, bench) if candidates is None else candidates
    read = []
    for c in cands:
        if c not in cache:
            cache[c] = read_layout(mirror, c, bench)
        L = cache[c][0]
        if L["nodes"] is None or L["minibs"] is None or L["tp"] is None:
            continue  # a helper (config_common.sh and friends), not a launch config
        if not model_size_ok(bench, L):
            continue
        read.append((c,) + cache[c])
    notes, how = [], []
    # 1. the configs the system's own README names, when it names any that fit
    named = readme_named_config(mirror, sub, bench, system)
    pool = read
    if named:
        hits = [r for r in read if os.path.basename(r[0]) in named]
        fit = [r for r in hits if r[1]["nodes"] == sys_nodes]
        if fit:
            pool = fit
            how.append("named by the system's README (%s)" % ", ".join(named))
        else:
            notes.append("the system's README names %s, none of them for %s nodes; the "
                         "submission's other configs were searched" % (", ".join(named),
                                                                         sys_nodes))
    # 2. node count (and GPUs per node where the config says), then the logged batch
    by_nodes = [r for r in pool if r[1]["nodes"] == sys_nodes
                and r[1]["gpus_per_node"] in (sys_gpn, None)]
    if not by_nodes:
        return [], "no config for %s nodes among %d launch configs" % (sys_nodes, len(read)), \
            notes
    exact = [r for r in by_nodes if r[1]["global_batch_size"] == log_gbs
             or r[1]["global_batch_size"] is None]
    if exact:
        how.append("nodes (%d) and logged global batch (%d) match" % (sys_nodes, log_gbs))
        pick = exact
    else:
        notes.append("no config gives the logged global batch %s at %d nodes; the configs for "
                     "%d nodes give %s" % (log_gbs, sys_nodes, sys_nodes, sorted(
                         {r[1]["global_batch_size"] for r in by_nodes}, key=str)))
        how.append("nodes match, batch from the log")
        pick = by_nodes
    # 3. tie-breakers, only while the candidates disagree on the layout
    def disagree(rs):
        return len({layout_key(r[1]) for r in rs}) > 1
    if disagree(pick):
        named_like = [r for r in pick if system in os.path.basename(r[0])]
        if named_like and len(named_like) < len(pick):
            pick = named_like
            how.append("config file named after the system")
    if disagree(pick):
        own = [r for r in pick if "/%s/" % system in r[0]]
        if own and len(own) < len(pick):
            pick = own
            how.append("in the folder named after the system")
    if disagree(pick):
        fam = gpu_family(accel)
        same = [r for r in pick if gpu_family(os.path.basename(r[0])) == fam]
        if fam and same and len(same) < len(pick):
            pick = same
            how.append("config name says %s like the system" % fam)
    return pick, "; ".join(how), notes


# ---- one entry per (round, submitter, system, benchmark) ---------------------------------------

SYSTEM_KEYS = ("system_name", "status", "number_of_nodes", "accelerators_per_node",
               "accelerator_model_name", "accelerator_memory_capacity",
               "accelerator_interconnect", "host_networking", "host_networking_topology",
               "host_processor_model_name", "framework")


def merge_layouts(picks):
    """One layout from several candidate configs: fields they disagree on become null."""
    base = json.loads(json.dumps(picks[0][1]))
    differ = []
    for k in LAYOUT_KEYS + ("gpus", "dp", "global_batch_size", "grad_accum_steps"):
        vals = {json.dumps(p[1].get(k), sort_keys=True) for p in picks}
        if len(vals) > 1:
            base[k] = None
            differ.append(k)
    return base, differ


def median(xs):
    return statistics.median(xs) if xs else None


# NeMo 2's MLPerf Llama scripts build Megatron-Core's DistributedDataParallelConfig with
# grad_reduce_in_fp32=False: the gradient buffer (main_grad) and its reduction are bf16
# (pretrain.py of every llama31_405b and llama31_8b NeMo submission of v5.0 and v5.1).
DDP_BF16 = re.compile(r"DistributedDataParallelConfig\((?:[^()]|\([^()]*\))*?"
                      r"grad_reduce_in_fp32\s*=\s*False", re.S)


def pretrain_grad_fp32(mirror, cfg):
    """(False, path of pretrain.py) where the NeMo pretrain.py beside config cfg (its folder
    or the nearest above it up to the submission's top; else the submission's only one)
    reduces gradients in bf16; (None, None) where it does not say."""
    if not cfg.endswith(".sh"):
        return None, None
    parts = cfg.split("/")
    top = "/".join(parts[:3])
    py = None
    for k in range(len(parts) - 1, 2, -1):
        cand = "/".join(parts[:k]) + "/pretrain.py"
        if cand in mirror.file_set:
            py = cand
            break
    if py is None:
        found = [f for f in mirror.files if f.startswith(top + "/")
                 and f.endswith("/pretrain.py") and not any(v in "/" + f for v in VENDORED)]
        py = found[0] if len(found) == 1 else None
    text = mirror.read(py) if py else None
    if text and DDP_BF16.search(text):
        return False, py
    return None, None


def build_entry(mirror, sub, system, bench, files, cache, candidates=None):
    rid = "mlperf-%s-%s-%s-%s" % (mirror.round, sub.lower().replace("+", "-"), system, bench)
    e = {"id": rid, "round": mirror.round, "submitter": sub, "system": system,
         "benchmark": bench}
    sj_path = "%s/systems/%s.json" % (sub, system)
    try:
        sj = json.loads(mirror.read(sj_path) or "{}")
    except ValueError:
        sj = {}
    e["system_json"] = {k: sj.get(k) for k in SYSTEM_KEYS}
    notes, assumed, derived = [], [], []

    # The logs first: the batch they ran is the ground truth the config must match.
    headers, texts, unreadable = [], {}, []
    for f in files:
        t = mirror.read(f)
        if t is None:
            unreadable.append(f)
            continue
        texts[f] = t
        headers.append(log_header(t))
    gbs_set = sorted({h["global_batch_size"] for h in headers if h["global_batch_size"]})
    log_gbs = gbs_set[0] if len(gbs_set) == 1 else None
    if len(gbs_set) > 1:
        notes.append("result files log different global batches %s" % gbs_set)
    ga_set = sorted({h["gradient_accumulation_steps"] for h in headers
                     if h["gradient_accumulation_steps"] is not None})
    seq_set = sorted({h["max_sequence_length"] for h in headers if h["max_sequence_length"]})
    e["log"] = {"submission_platform": headers[0]["submission_platform"] if headers else None,
                "global_batch_size": log_gbs,
                "gradient_accumulation_steps": ga_set[0] if len(ga_set) == 1 else ga_set or None,
                "max_sequence_length": seq_set[0] if len(seq_set) == 1 else seq_set or None}
    seq = seq_set[0] if len(seq_set) == 1 else BENCH_INFO[bench]["seq"]
    if not seq_set:
        derived.append("seq_length %d: the logs print no max_sequence_length; %s"
                       % (seq, BENCH_INFO[bench]["reference"]))
    elif seq != BENCH_INFO[bench]["seq"]:
        notes.append("logged sequence length %s differs from the benchmark's %d"
                     % (seq, BENCH_INFO[bench]["seq"]))

    sys_nodes = as_int(sj.get("number_of_nodes"))
    sys_gpn = as_int(sj.get("accelerators_per_node"))
    picks, how, cnotes = choose_config(mirror, sub, bench, system, sys_nodes, sys_gpn,
                                       sj.get("accelerator_model_name"), log_gbs,
                                       cache, candidates) if log_gbs else ([], "no global batch in the log",
                                                               [])
    notes += cnotes
    prov = {"repository": mirror.url(), "copy_read": "%s/training_results_%s" % (
        mirror.owner, mirror.round), "commit": mirror.commit, "config": None,
        "config_choice": how, "system_json": sj_path,
        "result_files": sorted(texts), "unreadable_result_files": unreadable}
    e["provenance"] = prov
    L = None
    if picks:
        L, differ = merge_layouts(picks)
        first = picks[0]
        prov["config"] = first[0] if len(picks) == 1 else None
        prov["config_candidates"] = [p[0] for p in picks] if len(picks) > 1 else None
        prov["sourced"] = first[3].sourced
        prov["yaml_env_defaults_from"] = sorted({d["file"] for d in first[2].defaults.values()})
        raw, raw_d = first[2].raw()
        e["raw"] = raw
        e["raw_yaml_defaults"] = raw_d
        e["config_lines_not_followed"] = sorted({"%s: %s" % (os.path.basename(f), l)
                                                 for f, l in first[3].skipped})
        notes += first[4]
        if len(picks) > 1:
            notes.append("%d candidate configs (%s); %s" % (
                len(picks), ", ".join(os.path.basename(p[0]) for p in picks),
                "they agree on every layout field" if not differ else
                "null where they disagree: %s" % ", ".join(differ)))
        # The log's batch wins where the config's does not give it (matched on nodes only).
        if L["global_batch_size"] != log_gbs and log_gbs and L["dp"]:
            if log_gbs % L["dp"] == 0:
                L["minibs"] = log_gbs // L["dp"]
                L["global_batch_size"] = log_gbs
                mbs = L["micro_batch_size"]
                L["grad_accum_steps"] = L["minibs"] // mbs if mbs and L["minibs"] % mbs == 0 \
                    else None
                assumed.append("global batch %d from the log, not the config (MINIBS %d per "
                               "data-parallel replica); every other setting assumed as in the "
                               "config" % (log_gbs, L["minibs"]))
            else:
                L["global_batch_size"] = None
                notes.append("logged global batch %d is not a multiple of dp %d" % (log_gbs,
                                                                                    L["dp"]))
        L["seq_length"] = seq
        if bench != "gpt3" and prov["config"]:
            grad32, py = pretrain_grad_fp32(mirror, prov["config"])
            L["optimizer"]["grad_reduce_in_fp32"] = grad32
            if py:
                derived.append("gradients in bf16: %s builds DistributedDataParallelConfig with "
                               "grad_reduce_in_fp32=False (main_grad buffer and its reduction "
                               "in bf16)" % py)
                prov["pretrain_py"] = py
        # Cross-checks against the log.
        ga = e["log"]["gradient_accumulation_steps"]
        if isinstance(ga, (int, float)) and L["grad_accum_steps"] is not None \
                and int(ga) != L["grad_accum_steps"]:
            notes.append("logged gradient_accumulation_steps %s differs from MINIBS / micro "
                         "batch = %s" % (ga, L["grad_accum_steps"]))
        if L["gpus"] and sys_nodes and sys_gpn and L["gpus"] != sys_nodes * sys_gpn:
            notes.append("config GPUs %s differ from the system description's %d x %d"
                         % (L["gpus"], sys_nodes, sys_gpn))
    e["layout"] = L

    # Throughput, per result file, then over the submission.
    per = []
    for f in sorted(texts):
        if not log_gbs:
            break
        r = parse_result(texts[f], bench, log_gbs, seq)
        row = {"file": os.path.basename(f), "status": r["status"], "intervals": r["intervals"],
               "steps": r["steps"], "train_s": r["train_s"],
               "iteration_time_s": r["iteration_time_s"], "run_s": r["run_s"]}
        if r.get("step_timing"):
            row["step_timing_median_s"] = r["step_timing"]["median_s"]
            row["step_timing_n"] = r["step_timing"]["n"]
            row["step_timing_key"] = r["step_timing"]["key"]
        if r["problem"]:
            row["problem"] = r["problem"]
        per.append(row)
    its = [p["iteration_time_s"] for p in per if p["iteration_time_s"]]
    sts = [p["step_timing_median_s"] for p in per if p.get("step_timing_median_s")]
    thr = {"unit_counted": BENCH_INFO[bench]["count_unit"],
           "n_files": len(its), "per_file": per,
           "median_iteration_time_s": median(its),
           "min_iteration_time_s": min(its) if its else None,
           "max_iteration_time_s": max(its) if its else None}
    if its and log_gbs:
        thr["median_sequences_per_s"] = log_gbs / thr["median_iteration_time_s"]
        thr["median_tokens_per_s"] = log_gbs * seq / thr["median_iteration_time_s"]
    if sts:
        thr["step_timing_median_s"] = median(sts)
        thr["step_timing_note"] = ("median over files of each file's median logged %s (NeMo's "
                                   "per-step timer; %s)" % (
                                       per[0].get("step_timing_key"),
                                       "logged every step" if all(
                                           p.get("step_timing_n") == p["steps"] for p in per
                                           if p.get("step_timing_n")) else
                                       "logged every few steps, not every step"))
    e["throughput"] = thr
    e["notes"], e["assumed"], e["derived"] = notes, assumed, derived
    return e


def nvidia_gpu(sj):
    name = (sj.get("accelerator_model_name") or "")
    return "NVIDIA" in name.upper() or re.search(r"\b(H100|H200|B200|B300|GB200|GB300|A100|L40S)",
                                                 name) is not None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirrors", required=True, help="folder of the fetched repositories")
    ap.add_argument("--output", default=os.path.join(HERE, "mlperf_runs.json"))
    args = ap.parse_args()
    mirrors = find_mirrors(args.mirrors)
    missing = [r for r in ROUNDS if r not in mirrors]
    if missing:
        sys.exit("make_mlperf_runs: no mirror for round(s) %s under %s (expected "
                 "<owner>+training_results_vX.Y/repo)" % (", ".join(missing), args.mirrors))
    runs, excluded, seen_logs = [], [], {}
    for rnd in ROUNDS:
        m = mirrors[rnd]
        groups = {}
        for f in m.files:
            g = re.match(r"([^/]+)/results/([^/]+)/([^/]+)/result_[^/]*\.txt$", f)
            if g and g.group(3) in BENCHMARKS:
                groups.setdefault((g.group(1), g.group(2), g.group(3)), []).append(f)
        cache = {}
        for (sub, system, bench), files in sorted(groups.items()):
            sj = {}
            try:
                sj = json.loads(m.read("%s/systems/%s.json" % (sub, system)) or "{}")
            except ValueError:
                pass
            base = {"round": rnd, "submitter": sub, "system": system, "benchmark": bench,
                    "accelerator": sj.get("accelerator_model_name"),
                    "framework": sj.get("framework")}
            if not nvidia_gpu(sj):
                excluded.append(dict(base, reason="not an NVIDIA GPU"))
                continue
            e = build_entry(m, sub, system, bench, sorted(files), cache)
            if e["layout"] is None and not config_candidates(m, sub, bench):
                excluded.append(dict(base, reason="no config_*.sh launch script in the "
                                                  "submission's benchmarks/%s folder (not "
                                                  "NVIDIA's NeMo scripts)" % bench))
                continue
            if e["layout"] is None and not any(
                    read_layout(m, c, bench)[0]["minibs"] is not None
                    for c in config_candidates(m, sub, bench)):
                excluded.append(dict(base, reason="its config_*.sh scripts set no MINIBS / "
                                                  "TENSOR_MODEL_PARALLEL: not NVIDIA's NeMo "
                                                  "launch scripts"))
                continue
            # The same logs filed twice (a power-measurement copy of a submission, or a round
            # that re-files an earlier round's results) are one measurement.
            key = tuple(sorted(m.blob[f] for f in files))
            e["provenance"]["result_blobs"] = list(key)
            if key in seen_logs:
                e["duplicate_of"] = seen_logs[key]
            else:
                seen_logs[key] = e["id"]
                e["duplicate_of"] = None
            runs.append(e)
    doc = {
        "schema": "trainplan-mlperf-runs/1",
        "description": "MLPerf Training results of NVIDIA's NeMo/Megatron stack (gpt3, "
                       "llama31_405b, llama31_8b, llama2_70b_lora), one entry per round, "
                       "submitter, system and benchmark: layout read from the submission's "
                       "config scripts, time per step from its result logs. Written by "
                       "make_mlperf_runs.py from the repositories named in 'sources'; do not "
                       "edit by hand. null = not in the config (or not decidable).",
        "sources": {r: {"repository": mirrors[r].url(),
                        "copy_read": "%s/training_results_%s" % (mirrors[r].owner, r),
                        "commit": mirrors[r].commit} for r in ROUNDS},
        "benchmarks": BENCH_INFO,
        "throughput_method": "Per result file: the training time between the end of each "
                             "evaluation (or the first block_start) and the next block_stop "
                             "(or eval_start where a round logs no block_stop; or the last "
                             "training step logged before the evaluation where it logs neither), "
                             "summed, over the steps trained (the increase of the logged count "
                             "- tokens for gpt3, sequences otherwise - over global batch, times "
                             "2048 tokens for gpt3). Evaluation, initialisation and warm-up "
                             "excluded. Over a submission: median, min and max of its files. "
                             "step_timing_median_s: the median over files of each file's median "
                             "NeMo per-step timer (train_step_timing / train_step_time).",
        "runs": runs,
        "excluded": excluded,
    }
    with open(args.output, "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False, sort_keys=False)
        f.write("\n")
    print("%d runs, %d excluded -> %s" % (len(runs), len(excluded), args.output))


if __name__ == "__main__":
    main()
