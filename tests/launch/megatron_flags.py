#!/usr/bin/env python3
"""The command-line flags Megatron-LM's pretrain_gpt.py accepts, read from a
Megatron-LM checkout without importing it (no torch here).

    megatron_flags.py CHECKOUT > megatron_flags.txt

Megatron-LM builds its parser in megatron/training/arguments.py
(parse_args): literal parser.add_argument(...) calls, and argument groups
that ArgumentGroupFactory (megatron/training/argument_utils.py) builds from
config dataclasses: a field becomes --field-name; a bool field defaulting
to False a store_true flag, any other bool a store_false flag named
--no-field-name and --disable-field-name; a field's
metadata["argparse_meta"] overrides both (its "arg_names", "action",
"nargs"). This program repeats those rules over the source's syntax tree.

Output: one flag a line, "NAME KIND", KIND "flag" (takes no value), "one"
(one value) or "many" (nargs + or *: values up to the next flag). The
first lines, starting with '#', name the source.
"""
import ast
import os
import subprocess
import sys

NO_VALUE_ACTIONS = {"store_true", "store_false", "store_const", "count",
                    "help", "version"}


def const(node):
    try:
        return ast.literal_eval(node)
    except Exception:
        return None


def kind_of(action, nargs):
    if action in NO_VALUE_ACTIONS:
        return "flag"
    if nargs in ("+", "*"):
        return "many"
    if nargs == "?":
        return "optional"
    return "one"


def classes_of(root):
    """Every class definition of the megatron package, by name."""
    out = {}
    for d, _, files in os.walk(os.path.join(root, "megatron")):
        for f in files:
            if not f.endswith(".py"):
                continue
            p = os.path.join(d, f)
            try:
                tree = ast.parse(open(p, encoding="utf-8").read())
            except SyntaxError:
                continue
            for n in ast.walk(tree):
                if isinstance(n, ast.ClassDef):
                    out.setdefault(n.name, []).append(n)
    return out


def field_call(value):
    """(default node, metadata dict, init) of `x: T = field(...)` or `= v`."""
    if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
            and value.func.id == "field"):
        kw = {k.arg: k.value for k in value.keywords}
        meta = {}
        if "metadata" in kw and isinstance(kw["metadata"], ast.Dict):
            for k, v in zip(kw["metadata"].keys, kw["metadata"].values):
                if const(k) == "argparse_meta" and isinstance(v, ast.Dict):
                    for kk, vv in zip(v.keys, v.values):
                        meta[const(kk)] = vv
        init = const(kw["init"]) if "init" in kw else True
        default = kw.get("default")
        return default, meta, init
    return value, {}, True


def is_bool(ann):
    src = ast.unparse(ann) if ann is not None else ""
    return src in ("bool", "Optional[bool]", "bool | None", "None | bool")


def dataclass_fields(name, classes, seen=None):
    """Fields of dataclass `name` and its bases, base fields first (as
    dataclasses.fields orders them); a redefined field keeps its place."""
    seen = seen or set()
    if name in seen or name not in classes:
        return []
    seen.add(name)
    cls = classes[name][0]
    fields = []
    for b in cls.bases:
        bname = b.id if isinstance(b, ast.Name) else (
            b.attr if isinstance(b, ast.Attribute) else None)
        if bname:
            fields += dataclass_fields(bname, classes, seen)
    for st in cls.body:
        if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
            if "ClassVar" in ast.unparse(st.annotation):
                continue
            default, meta, init = field_call(st.value) if st.value else (None, {}, True)
            f = (st.target.id, st.annotation, default, meta, init)
            fields = [x for x in fields if x[0] != f[0]] + [f]
    return fields


def factory_flags(name, exclude, classes):
    out = []
    for fname, ann, default, meta, init in dataclass_fields(name, classes):
        if fname in exclude or init is False:
            continue
        names = ["--" + fname.replace("_", "-")]
        action = None
        if is_bool(ann):
            dv = const(default) if default is not None else None
            if dv is False:
                action = "store_true"
            else:
                action = "store_false"
                names = ["--no-" + fname.replace("_", "-"),
                         "--disable-" + fname.replace("_", "-")]
        nargs = None
        src = ast.unparse(ann) if ann is not None else ""
        if src.startswith("list[") or src.startswith("List[") or \
                src.startswith("Optional[list") or src.startswith("Optional[List"):
            nargs = "+"
        if "arg_names" in meta and const(meta["arg_names"]):
            names = const(meta["arg_names"])
        if "action" in meta and const(meta["action"]):
            action = const(meta["action"])
        if "nargs" in meta:
            nargs = const(meta["nargs"])
        for n in names:
            out.append((n, kind_of(action, nargs)))
    return out


def function_lists(fn):
    """Names assigned a literal list inside function fn."""
    out = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.List):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = const(n.value) or []
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: megatron_flags.py MEGATRON_LM_CHECKOUT")
    root = sys.argv[1]
    classes = classes_of(root)
    flags = {}
    for rel in ("megatron/training/arguments.py",):
        tree = ast.parse(open(os.path.join(root, rel), encoding="utf-8").read())
        for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
            lists = function_lists(fn)
            for n in ast.walk(fn):
                if not isinstance(n, ast.Call):
                    continue
                f = n.func
                if isinstance(f, ast.Attribute) and f.attr == "add_argument":
                    names = [const(a) for a in n.args
                             if isinstance(const(a), str) and const(a).startswith("-")]
                    kw = {k.arg: const(k.value) for k in n.keywords}
                    for nm in names:
                        flags[nm] = kind_of(kw.get("action"), kw.get("nargs"))
                elif isinstance(f, ast.Name) and f.id == "ArgumentGroupFactory":
                    cname = n.args[0].id if n.args and isinstance(n.args[0], ast.Name) else None
                    ex = []
                    for k in n.keywords:
                        if k.arg == "exclude":
                            if isinstance(k.value, ast.Name):
                                ex = lists.get(k.value.id, [])
                            else:
                                ex = const(k.value) or []
                    if cname:
                        for nm, kd in factory_flags(cname, set(ex), classes):
                            flags.setdefault(nm, kd)
    try:
        commit = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = ""
    print("# pretrain_gpt.py's flags, megatron/training/arguments.py parse_args")
    print("# NVIDIA/Megatron-LM@%s" % (commit or os.environ.get("MEGATRON_COMMIT", "?")))
    print("# extracted by tests/launch/megatron_flags.py; NAME KIND (flag|one|many|optional)")
    for nm in sorted(flags):
        print(nm, flags[nm])


if __name__ == "__main__":
    main()
