#!/usr/bin/python3
"""opfit_compare.py: accuracy of per-operator time models on the seed samples, seed method
against trainplan, on identical, deterministic train/test splits.

For each cluster (Perlmutter = A100, Vista = GH200), each main-path operator and each
propagation (fwd from F_dur(us), bwd from B_dur(us)) it
  - cleans the samples (non-positive or non-finite durations; the seed README's known bad
    operator data, see BAD_DATA_RULES),
  - builds three kinds of split: 5-fold CV, extrapolation in hidden size, extrapolation in
    sequence length (SPLIT_RULES), and writes every train/test set as CSV in the seed format
    under --workdir, so any other model can be fed exactly the same rows,
  - fits the seed method (Zhang et al. 2025, arXiv 2509.22832): the regressor the authors chose
    for that operator and propagation (<GPU>.csv: random forest or XGBoost, with its
    Best_config), target = duration in microseconds, and reports its MAPE on the test rows,
  - if --trainplan is given and `trainplan op predict --help` exits 0, runs
    `trainplan op predict --gpu G --op OP --train train.csv --shapes test_features.csv` on the
    same split and reports its MAPE too; otherwise trainplan's columns read "n/a".
It prints a table, and writes it to bench/results/opfit_compare.{json,md}.

Features: by default the raw feature columns of the CSV (mp,b,h,l,dim as the op has them).
--features seed instead maps them as the seed's released code does before fitting
(estimate_train_time layer_input_to_predictor_input: e.g. linear1 -> [b*l, d, 3d/mp]); see
SEED_FEATURE_MAPS.

Deliberately does not: tune hyper-parameters (Best_config is taken as given), touch NCCL
samples or the optimizer tables, or judge trainplan beyond MAPE on these splits.

Needs Debian's python3 with apt packages python3-sklearn python3-xgboost python3-pandas
python3-numpy (no pip). Deterministic: the same inputs give the same figures on rerun.
"""
import argparse
import ast
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd
import sklearn
import xgboost
from sklearn.ensemble import RandomForestRegressor

# ----------------------------------------------------------------------------- constants

# Seed of the CV shuffle: the arXiv id of the seed paper (2509.22832) read as a date.
# A fresh generator with this seed is made for every (cluster, op, propagation), so a
# figure does not depend on which other ops were run or in which order.
CV_SEED = 20250922
N_FOLDS = 5
RANDOM_STATE = 0  # random_state of every regressor (the seed's released code uses 42)

# Extrapolation splits: train on the small side, test on the large side. The grid steps by
# 512, so nothing falls between the two bounds.
DIM_TRAIN_MAX, DIM_TEST_MIN = 6144, 6656
SEQ_TRAIN_MAX, SEQ_TEST_MIN = 4096, 4608

SPLIT_RULES = {
    "cv5": f"5-fold CV: row indices (after cleaning) shuffled with "
           f"numpy.random.default_rng({CV_SEED}).permutation(n); the row at shuffled "
           f"position i is in fold i % {N_FOLDS}; fold k is tested on a model fitted to the "
           f"other four; MAPE pooled over all n out-of-fold predictions",
    "extrap_dim": f"train on dim <= {DIM_TRAIN_MAX}, test on dim >= {DIM_TEST_MIN} "
                  f"(ops with a dim column only)",
    "extrap_seq": f"train on l <= {SEQ_TRAIN_MAX}, test on l >= {SEQ_TEST_MIN} "
                  f"(ops with an l column only)",
}

# Clusters: folder under the seed data, GPU file prefix, trainplan's --gpu name.
# The Perlmutter files say A100-SXM4-80GB (the seed README doubts it; we follow the label).
CLUSTERS = [
    {"cluster": "Perlmutter", "prefix": "NVIDIAA100-SXM4-80GB", "gpu": "a100-80gb"},
    {"cluster": "Vista", "prefix": "NVIDIAGH200120GB", "gpu": "gh200"},
]

# Operators on the main path of a GPT-NeoX-like layer (seed README, "Operator samples").
OPS = ["linear1", "linear2", "linear3", "linear4", "linear_final", "flash_atten", "gelu",
       "layernorm", "RMSlayernorm", "res_add", "embedding", "parallel_cross_entropy_128"]

# Propagation -> the duration column it predicts.
PROPAGATIONS = {"fwd": "F_dur(us)", "bwd": "B_dur(us)"}
DURATION_COLUMNS = tuple(PROPAGATIONS.values())

# Known bad operator data (seed README, "Known problems"). Each rule drops the rows where
# `bad(df)` is true, for that cluster, op and propagation only, unless --keep-bad. The Vista
# flash-attention forward times are plausible (about 1.9x faster than the A100's, as expected
# of FA2 on Hopper), so the forward keeps every row; only the backward loses the bad ones.
BAD_DATA_RULES = [
    {"cluster": "Vista", "op": "flash_atten", "propagation": "bwd",
     "what": "flash-attention backward shorter than the forward (B_dur < F_dur)",
     "bad": lambda df: df["B_dur(us)"] < df["F_dur(us)"],
     # Checked by hand on the 2025 files; says why the survivors are no ground truth either.
     "caveat": "the rows left are the smallest shapes (F_dur 13-58 us, B_dur 40-82 us); on "
               "the shapes both clusters measured, Vista's B_dur is about 55x (median) below "
               "the A100's while its F_dur is 1.9x below, so these backward times are "
               "doubtful too: do not quote this row as accuracy"},
    # Not in the seed README: the rule trainplan's `hw check` applies (estimator/samples.c,
    # floor_bytes). Each TP rank of Megatron's vocab-parallel embedding writes the whole
    # [b*l, dim] fp16 output, so a forward that writes it faster than the GH200's 4.0 TB/s HBM
    # (gh200.json), on outputs more than twice the 50 MB L2, cannot be right.
    {"cluster": "Vista", "op": "embedding", "propagation": "fwd",
     "what": "embedding forward writes its [b*l, dim] fp16 output faster than the 4.0 TB/s HBM",
     "bad": lambda df: ((2.0 * df["b"] * df["l"] * df["dim"] > 2 * 50 * 2**20)
                        & (2.0 * df["b"] * df["l"] * df["dim"] / (df["F_dur(us)"] * 1e-6)
                           > 4.0e12)),
     "caveat": "the rest of this file is doubtful too: from 4096 tokens up, forward and "
               "backward take the same time within 1 %, about 120 us at mp=16 whatever the "
               "hidden size (6656 to 8192), which no memory-bound kernel does"},
]

VOCAB = 50257  # GPT-NeoX vocabulary, as in the seed samples


def padded_vocab(mp):
    """Per-rank vocabulary: 50257 padded to a multiple of 128*mp, divided by mp (Megatron)."""
    return np.ceil(VOCAB / (128 * mp)) * 128


# --features seed: the mapping the seed's code applies to the CSV columns before fitting and
# predicting (shapes of the op's GEMM or tensor, per TP rank; seed README gives the same
# shapes). Ops not listed keep their raw columns.
SEED_FEATURE_MAPS = {
    "linear1": lambda c: [c["b"] * c["l"], c["dim"], c["dim"] * 3 // c["mp"]],
    "linear2": lambda c: [c["b"] * c["l"], c["dim"] // c["mp"], c["dim"]],
    "linear3": lambda c: [c["b"] * c["l"], c["dim"], c["dim"] * 4 // c["mp"]],
    "linear4": lambda c: [c["b"] * c["l"], c["dim"] * 4 // c["mp"], c["dim"]],
    "linear_final": lambda c: [c["b"] * c["l"], c["dim"], padded_vocab(c["mp"])],
    "flash_atten": lambda c: [c["b"], c["l"], c["h"] // c["mp"], c["dim"] // c["h"]],
    "gelu": lambda c: [c["l"], c["b"], c["dim"] * 4 // c["mp"]],
    "embedding": lambda c: [c["b"] * c["l"], padded_vocab(c["mp"]), c["dim"]],
    "parallel_cross_entropy_128": lambda c: [c["b"], c["l"], padded_vocab(c["mp"])],
}

# What each --features mode means, for the markdown.
FEATURE_NOTES = {
    "raw": "Features `raw`: the seed regressors see the CSV's own shape columns. The seed's "
           "code maps them to per-rank GEMM/tensor shapes first (`--features seed`, "
           "SEED_FEATURE_MAPS); that is the run whose CV errors match the paper's.",
    "seed": "Features `seed`: the CSV's shape columns mapped as the seed's code does before "
            "fitting (SEED_FEATURE_MAPS: linear1 -> [b*l, d, 3d/mp], flash_atten -> "
            "[b, l, h/mp, d/h], ...); trainplan still gets the raw shapes.",
}

# Columns of the result table: (key in a record, header).
TABLE_COLUMNS = [
    ("cv5_seed", "cv5 seed"), ("cv5_trainplan", "cv5 tp"),
    ("extrap_dim_seed", "dim seed"), ("extrap_dim_trainplan", "dim tp"),
    ("extrap_seq_seed", "seq seed"), ("extrap_seq_trainplan", "seq tp"),
    ("paper_error_pct", "paper"),
]

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class TrainplanError(Exception):
    """trainplan op predict failed or printed something that does not match the shapes."""


# ----------------------------------------------------------------------------- inputs

def default_data_dir():
    """The seed samples: <repo>/shared/data/seed_samples, else the one beside the repo."""
    for cand in (os.path.join(REPO_ROOT, "shared", "data", "seed_samples"),
                 os.path.join(os.path.dirname(REPO_ROOT), "shared", "data", "seed_samples")):
        if os.path.isdir(cand):
            return cand
    return os.path.join(REPO_ROOT, "shared", "data", "seed_samples")


def load_model_table(path):
    """Read a seed <GPU>.csv (regressor per Function and Propagation).

    Returns {(function, propagation): {"model", "config", "error_fraction"}}, config being the
    Best_config dict parsed with ast.literal_eval. Raises on a missing or malformed file.
    """
    table = {}
    for _, row in pd.read_csv(path).iterrows():
        table[(row["Function"], row["Propagation"])] = {
            "model": row["Best_model"],
            "config": ast.literal_eval(row["Best_config"]),
            "error_fraction": float(row["Best_error%"]),
        }
    return table


def data_observations(df):
    """Facts about a whole samples file worth a note, counted once per file and only
    reported (they change no figure): shapes measured more than once (their copies can fall
    on both sides of a CV split), rows with B_dur < F_dur and rows with B_dur == F_dur."""
    feats = feature_columns(df)
    return {"n_repeated_shape_rows": int(df.duplicated(feats).sum()),
            "n_bwd_lt_fwd": int((df["B_dur(us)"] < df["F_dur(us)"]).sum()),
            "n_bwd_eq_fwd": int((df["B_dur(us)"] == df["F_dur(us)"]).sum())}


def feature_columns(df):
    """The shape columns of a seed operator CSV: every column that is not a duration."""
    return [c for c in df.columns if c not in DURATION_COLUMNS]


def clean_rows(df, cluster, op, prop, keep_bad):
    """Drop the rows unusable for one propagation.

    Drops rows whose duration for `prop` is non-finite or <= 0, then (unless keep_bad) the
    rows a BAD_DATA_RULES entry flags for this cluster/op/prop. Returns (clean frame with a
    fresh 0..n-1 index, notes dict with the counts and the rules applied).
    """
    col = PROPAGATIONS[prop]
    dur = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float)
    ok = np.isfinite(dur) & (dur > 0)
    notes = {"n_raw": int(len(df)), "n_nonpositive_or_nonfinite": int((~ok).sum()),
             "bad_data": [], "file": data_observations(df)}
    for rule in BAD_DATA_RULES:
        if (rule["cluster"], rule["op"], rule["propagation"]) != (cluster, op, prop):
            continue
        bad = rule["bad"](df).to_numpy() & ok
        notes["bad_data"].append({"rule": rule["what"], "n_flagged": int(bad.sum()),
                                  "excluded": not keep_bad, "caveat": rule.get("caveat")})
        if not keep_bad:
            ok &= ~bad
    clean = df[ok].reset_index(drop=True)
    notes["n_used"] = int(len(clean))
    return clean, notes


# ----------------------------------------------------------------------------- splits

def make_splits(df, feats):
    """Deterministic train/test index splits of a cleaned frame (see SPLIT_RULES).

    Returns a list of (split kind, split name, train indices, test indices); a kind that does
    not apply (no dim or l column) or leaves an empty side is left out.
    """
    n = len(df)
    splits = []
    perm = np.random.default_rng(CV_SEED).permutation(n)
    fold = np.empty(n, dtype=int)
    fold[perm] = np.arange(n) % N_FOLDS  # row perm[i] goes to fold i % N_FOLDS
    for k in range(N_FOLDS):
        splits.append(("cv5", f"cv5_fold{k}", np.flatnonzero(fold != k),
                       np.flatnonzero(fold == k)))
    for kind, col, train_max, test_min in (("extrap_dim", "dim", DIM_TRAIN_MAX, DIM_TEST_MIN),
                                           ("extrap_seq", "l", SEQ_TRAIN_MAX, SEQ_TEST_MIN)):
        if col not in feats:
            continue
        tr = np.flatnonzero(df[col].to_numpy() <= train_max)
        te = np.flatnonzero(df[col].to_numpy() >= test_min)
        if len(tr) and len(te):
            splits.append((kind, kind, tr, te))
    return splits


def write_split(split_dir, train, test, feats):
    """Write train.csv, test.csv (seed format, source header) and test_features.csv (feature
    columns only) into split_dir. Returns the paths as a dict."""
    os.makedirs(split_dir, exist_ok=True)
    paths = {name: os.path.join(split_dir, name + ".csv")
             for name in ("train", "test", "test_features")}
    train.to_csv(paths["train"], index=False)
    test.to_csv(paths["test"], index=False)
    test[feats].to_csv(paths["test_features"], index=False)
    return paths


# ----------------------------------------------------------------------------- models

def model_inputs(op, frame, feats, mode):
    """Feature matrix for the seed regressor: raw columns, or the seed's mapping (mode
    'seed', SEED_FEATURE_MAPS) where the op has one."""
    if mode == "seed" and op in SEED_FEATURE_MAPS:
        cols = {c: frame[c].to_numpy(dtype=float) for c in feats}
        return np.column_stack(SEED_FEATURE_MAPS[op](cols)).astype(float)
    return frame[feats].to_numpy(dtype=float)


def build_seed_regressor(spec, jobs, max_estimators):
    """The regressor named in the seed's <GPU>.csv with its Best_config, random_state fixed.

    max_estimators (None = faithful) caps n_estimators; it exists only for slow machines.
    """
    params = dict(spec["config"])
    if max_estimators is not None and params.get("n_estimators", 0) > max_estimators:
        params["n_estimators"] = max_estimators
    if spec["model"] == "rforest":
        return RandomForestRegressor(**params, random_state=RANDOM_STATE, n_jobs=jobs)
    if spec["model"] == "xgboost":
        return xgboost.XGBRegressor(**params, random_state=RANDOM_STATE, n_jobs=jobs)
    raise ValueError(f"unknown Best_model {spec['model']!r} (expected rforest or xgboost)")


def seed_predict(spec, op, train, test, feats, col, args):
    """Fit the seed method on train[col] and predict the test rows (microseconds)."""
    model = build_seed_regressor(spec, args.jobs, args.max_estimators)
    model.fit(model_inputs(op, train, feats, args.features), train[col].to_numpy(dtype=float))
    # A forest predicting on several threads sums its trees in thread order, which moves the
    # last bits of the result from run to run; one thread sums them in tree order.
    model.set_params(n_jobs=1)
    return model.predict(model_inputs(op, test, feats, args.features)).astype(float)


def trainplan_available(path):
    """True if `path op predict --help` runs and exits 0."""
    if not path:
        return False
    try:
        res = subprocess.run([path, "op", "predict", "--help"], capture_output=True,
                             timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return res.returncode == 0


def parse_trainplan_csv(text, header, feats, test, col):
    """Parse trainplan's CSV output: one row per test row, in order, seed columns.

    A header line is optional (if present its names are used, else the seed header order).
    Checks the row count and that the feature columns equal the test shapes. Returns the
    predictions of column `col`. Raises TrainplanError on any mismatch.
    """
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    names = list(header)
    if lines:
        first = lines[0].split(",")
        try:
            [float(x) for x in first]
        except ValueError:  # a header line
            names = [x.strip() for x in first]
            lines = lines[1:]
    if col not in names or any(f not in names for f in feats):
        raise TrainplanError(f"output columns {names} lack {col} or one of {feats}")
    if len(lines) != len(test):
        raise TrainplanError(f"expected {len(test)} rows, got {len(lines)}")
    rows = []
    for i, ln in enumerate(lines):
        fields = ln.split(",")
        if len(fields) != len(names):
            raise TrainplanError(f"row {i + 1}: {len(fields)} fields, expected {len(names)}")
        try:
            rows.append([float(x) for x in fields])
        except ValueError as exc:
            raise TrainplanError(f"row {i + 1}: {exc}") from None
    out = np.array(rows, dtype=float)
    for f in feats:
        got, want = out[:, names.index(f)], test[f].to_numpy(dtype=float)
        if not np.allclose(got, want, rtol=1e-9, atol=1e-6):
            i = int(np.flatnonzero(~np.isclose(got, want, rtol=1e-9, atol=1e-6))[0])
            raise TrainplanError(f"row {i + 1}: {f} = {got[i]:g}, the shapes file says "
                                 f"{want[i]:g}")
    pred = out[:, names.index(col)]
    if not np.all(np.isfinite(pred)):
        raise TrainplanError(f"{int((~np.isfinite(pred)).sum())} non-finite predictions")
    return pred


def trainplan_predict(args, gpu, op, paths, header, feats, test, col, split_dir):
    """Run trainplan op predict on one split; returns the predictions of column `col`.

    Its stdout is kept as pred_trainplan.csv in split_dir. Raises TrainplanError on failure.
    """
    cmd = [args.trainplan, "op", "predict", "--gpu", gpu, "--op", op,
           "--train", paths["train"], "--shapes", paths["test_features"]]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True,
                             timeout=args.trainplan_timeout, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise TrainplanError(f"{' '.join(cmd)}: {exc}") from None
    with open(os.path.join(split_dir, "pred_trainplan.csv"), "w", encoding="utf-8") as fh:
        fh.write(res.stdout)
    if res.returncode != 0:
        msg = res.stderr.strip().splitlines()[-1:] or [""]
        raise TrainplanError(f"exit {res.returncode}: {msg[0]}")
    return parse_trainplan_csv(res.stdout, header, feats, test, col)


def mape_pct(pred, true):
    """Mean absolute percentage error, in percent: 100 * mean(|pred - true| / true)."""
    return float(100.0 * np.mean(np.abs(pred - true) / true))


# ----------------------------------------------------------------------------- evaluation

def evaluate(args, cl, op, prop, df, spec, use_trainplan):
    """Every split of one cluster/op/propagation: write the split files, fit and score the
    seed method, and trainplan if use_trainplan. Returns one result record (a dict)."""
    col = PROPAGATIONS[prop]
    feats = feature_columns(df)
    header = list(df.columns)
    clean, notes = clean_rows(df, cl["cluster"], op, prop, args.keep_bad)
    rec = {"cluster": cl["cluster"], "gpu": cl["gpu"], "op": op, "propagation": prop,
           "n": notes["n_used"], "features": feats, "seed_model": spec["model"],
           "seed_config": spec["config"],
           "paper_error_pct": 100.0 * spec["error_fraction"], "data_notes": notes,
           "splits": {}, "trainplan_errors": []}
    # Pooled predictions per split kind (the CV folds pool into one MAPE).
    pooled = {}
    for kind, name, tr, te in make_splits(clean, feats):
        train, test = clean.iloc[tr], clean.iloc[te]
        split_dir = os.path.join(args.workdir, cl["cluster"], op, prop, name)
        paths = write_split(split_dir, train, test, feats)
        true = test[col].to_numpy(dtype=float)
        pred_seed = seed_predict(spec, op, train, test, feats, col, args)
        pd.DataFrame({**{f: test[f].to_numpy() for f in feats}, col: pred_seed}).to_csv(
            os.path.join(split_dir, "pred_seed.csv"), index=False)
        pred_tp = None
        if use_trainplan:
            try:
                pred_tp = trainplan_predict(args, cl["gpu"], op, paths, header, feats, test,
                                            col, split_dir)
            except TrainplanError as exc:
                rec["trainplan_errors"].append(f"{name}: {exc}")
        p = pooled.setdefault(kind, {"true": [], "seed": [], "tp": [], "tp_ok": True,
                                     "n_train": [], "n_test": 0})
        p["true"].append(true)
        p["seed"].append(pred_seed)
        p["n_train"].append(len(train))
        p["n_test"] += len(test)
        if pred_tp is None:
            p["tp_ok"] = False
        else:
            p["tp"].append(pred_tp)
    for kind in ("cv5", "extrap_dim", "extrap_seq"):
        p = pooled.get(kind)
        if p is None:
            rec[kind + "_seed"] = rec[kind + "_trainplan"] = None
            continue
        true = np.concatenate(p["true"])
        rec[kind + "_seed"] = mape_pct(np.concatenate(p["seed"]), true)
        rec[kind + "_trainplan"] = (mape_pct(np.concatenate(p["tp"]), true)
                                    if use_trainplan and p["tp_ok"] else None)
        rec["splits"][kind] = {"n_train": p["n_train"], "n_test": p["n_test"]}
    return rec


def cluster_means(records):
    """Per cluster, and per cluster and propagation, the mean of each table column over the
    records where that column has a value (count kept beside it)."""
    groups = {}
    for r in records:
        for key in ((r["cluster"], "all"), (r["cluster"], r["propagation"])):
            groups.setdefault(key, []).append(r)
    means = []
    for (cluster, prop), recs in groups.items():
        m = {"cluster": cluster, "propagation": prop, "n_ops": len(recs)}
        for key, _ in TABLE_COLUMNS:
            vals = [r[key] for r in recs if r[key] is not None]
            m[key] = float(np.mean(vals)) if vals else None
            m[key + "_count"] = len(vals)
        means.append(m)
    order = {"fwd": 0, "bwd": 1, "all": 2}
    means.sort(key=lambda m: ([c["cluster"] for c in CLUSTERS].index(m["cluster"]),
                              order[m["propagation"]]))
    return means


# ----------------------------------------------------------------------------- output

def fmt(v):
    """A MAPE cell: one decimal, or n/a."""
    return "n/a" if v is None else f"{v:.1f}"


def flagged(rec):
    """True where the record's data carry a known-bad-data note (marked * in the tables)."""
    return any(b["n_flagged"] for b in rec["data_notes"]["bad_data"])


def table_rows(records, means):
    """Header and rows (lists of strings) of the result table, then the mean rows."""
    head = ["cluster", "op", "prop", "n"] + [h for _, h in TABLE_COLUMNS]
    rows = []
    for r in records:
        rows.append([r["cluster"], r["op"] + ("*" if flagged(r) else ""), r["propagation"],
                     str(r["n"])] + [fmt(r[k]) for k, _ in TABLE_COLUMNS])
    mean_rows = [[m["cluster"], "MEAN", m["propagation"], str(m["n_ops"])]
                 + [fmt(m[k]) for k, _ in TABLE_COLUMNS] for m in means]
    return head, rows, mean_rows


def text_table(head, rows, mean_rows):
    """Fixed-width text table."""
    allrows = [head] + rows + mean_rows
    widths = [max(len(r[i]) for r in allrows) for i in range(len(head))]
    line = lambda r: "  ".join(c.ljust(w) if i < 3 else c.rjust(w)  # noqa: E731
                               for i, (c, w) in enumerate(zip(r, widths)))
    out = [line(head), "-" * len(line(head))]
    out += [line(r) for r in rows]
    out.append("-" * len(line(head)))
    out += [line(r) for r in mean_rows]
    return "\n".join(out)


def notes_lines(meta, records, skipped):
    """Plain-text notes shared by the console, the markdown and the JSON."""
    lines = []
    for r in records:
        for b in r["data_notes"]["bad_data"]:
            if b["n_flagged"]:
                lines.append(f"{r['cluster']} {r['op']} {r['propagation']}: {b['n_flagged']} of "
                             f"{r['data_notes']['n_raw']} rows flagged ({b['rule']}); "
                             f"{'excluded' if b['excluded'] else 'kept (--keep-bad)'}"
                             + (f"; {b['caveat']}" if b["caveat"] and b["excluded"] else ""))
        obs = r["data_notes"]["file"]
        if r["propagation"] == "fwd" and any(obs.values()):  # once per file
            lines.append(f"{r['cluster']} {r['op']} file ({r['data_notes']['n_raw']} rows): "
                         f"{obs['n_repeated_shape_rows']} repeated shapes, "
                         f"{obs['n_bwd_lt_fwd']} rows B_dur < F_dur, "
                         f"{obs['n_bwd_eq_fwd']} rows B_dur == F_dur")
        if r["data_notes"]["n_nonpositive_or_nonfinite"]:
            lines.append(f"{r['cluster']} {r['op']} {r['propagation']}: "
                         f"{r['data_notes']['n_nonpositive_or_nonfinite']} rows with a "
                         f"non-positive or non-finite duration dropped")
        for kind in ("extrap_dim", "extrap_seq"):
            col = "dim" if kind == "extrap_dim" else "l"
            if r[kind + "_seed"] is None and col in r["features"]:
                lines.append(f"{r['cluster']} {r['op']} {r['propagation']}: {kind} n/a "
                             f"(one side of the split is empty)")
        for e in r["trainplan_errors"][:3]:
            lines.append(f"{r['cluster']} {r['op']} {r['propagation']}: trainplan {e}")
    lines += [f"skipped: {s}" for s in skipped]
    lines.append(f"trainplan: {meta['trainplan_status']}")
    return lines


def markdown(meta, head, rows, mean_rows, notes):
    """The result as a markdown document."""
    md = ["# Operator-model accuracy on the seed samples (opfit_compare.py)", "",
          f"Date {meta['date']}; run time {meta['run_time_s']:.0f} s on {meta['jobs']} jobs; "
          f"features `{meta['features']}`; known-bad rows "
          f"{'kept' if meta['keep_bad'] else 'excluded'}; "
          f"scikit-learn {meta['versions']['sklearn']}, xgboost {meta['versions']['xgboost']}, "
          f"numpy {meta['versions']['numpy']}, pandas {meta['versions']['pandas']}.", "",
          "MAPE in percent, 100 * mean(|pred - true| / true). `seed` = the regressor and "
          "Best_config the seed paper chose for the op (random_state 0), `tp` = trainplan op "
          "predict; `paper` = the seed's own Best_error x 100 (one 80/20 split, not these "
          "splits). `*` = known bad data (see notes). MEAN rows average the ops that have a "
          "value in that column.", "",
          FEATURE_NOTES[meta["features"]], "",
          "Splits:", ""]
    md += [f"- `{k}`: {v}" for k, v in meta["split_rules"].items()]
    md += ["", "| " + " | ".join(head) + " |", "|" + "|".join(
        "---" if i < 3 else "---:" for i in range(len(head))) + "|"]
    md += ["| " + " | ".join(r) + " |" for r in rows]
    md += ["| " + " | ".join("**" + c + "**" if i == 1 else c for i, c in enumerate(r)) + " |"
           for r in mean_rows]
    md += ["", "Notes:", ""] + [f"- {n}" for n in notes]
    if meta["max_estimators"] is not None:
        md.append(f"- n_estimators capped at {meta['max_estimators']} (--max-estimators): "
                  f"not the faithful seed configuration")
    return "\n".join(md) + "\n"


# ----------------------------------------------------------------------------- main

def parse_args(argv=None):
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default=default_data_dir(),
                   help="seed samples folder (default: %(default)s)")
    p.add_argument("--trainplan", metavar="PATH",
                   help="trainplan binary; used if `PATH op predict --help` exits 0")
    p.add_argument("--workdir", help="where the split CSVs go (kept); default: a temporary "
                                     "folder, removed at the end")
    p.add_argument("--out", default=os.path.join(REPO_ROOT, "bench", "results"),
                   help="folder for the JSON and markdown results (default: %(default)s)")
    p.add_argument("--name", help="stem of the result files (default: opfit_compare, or "
                                  "opfit_compare_rawfeatures with --features raw)")
    p.add_argument("--features", choices=("raw", "seed"), default="seed",
                   help="seed regressor inputs: the seed code's mapped per-rank shapes "
                        "(default: the seed method as published) or the raw CSV columns")
    p.add_argument("--keep-bad", action="store_true",
                   help="keep the rows the seed README's known-bad-data rules flag")
    p.add_argument("--jobs", type=int, default=2, help="n_jobs of the regressors (default 2)")
    p.add_argument("--max-estimators", type=int, metavar="N",
                   help="cap n_estimators at N (faster, NOT faithful; default: no cap)")
    p.add_argument("--clusters", nargs="+", choices=[c["cluster"] for c in CLUSTERS],
                   default=[c["cluster"] for c in CLUSTERS], help="clusters to run")
    p.add_argument("--ops", nargs="+", choices=OPS, default=OPS, help="operators to run")
    p.add_argument("--trainplan-timeout", type=float, default=300.0,
                   help="seconds allowed per trainplan op predict call (default 300)")
    return p.parse_args(argv)


def main(argv=None):
    """Run every cluster/op/propagation, print the table, write JSON and markdown."""
    args = parse_args(argv)
    t0 = time.monotonic()
    name = args.name or ("opfit_compare" if args.features == "seed"
                         else "opfit_compare_rawfeatures")
    use_tp = trainplan_available(args.trainplan)
    if not args.trainplan:
        tp_status = "not given (--trainplan): columns n/a"
    elif use_tp:
        tp_status = f"{args.trainplan} (op predict --help exits 0)"
    else:
        tp_status = f"{args.trainplan}: `op predict --help` did not exit 0: columns n/a"
    tmp = None
    if args.workdir is None:
        tmp = tempfile.mkdtemp(prefix="opfit_compare_")
        args.workdir = tmp
    records, skipped = [], []
    try:
        for cl in CLUSTERS:
            if cl["cluster"] not in args.clusters:
                continue
            op_dir = os.path.join(args.data, cl["cluster"], "operator")
            specs = load_model_table(os.path.join(op_dir, cl["prefix"] + ".csv"))
            for op in args.ops:
                path = os.path.join(op_dir, f"{cl['prefix']}_{op}_fp16.csv")
                if not os.path.isfile(path):
                    skipped.append(f"{cl['cluster']} {op}: no samples file {path}")
                    continue
                df = pd.read_csv(path)
                for prop in PROPAGATIONS:
                    if (op, prop) not in specs:
                        skipped.append(f"{cl['cluster']} {op} {prop}: not in {cl['prefix']}.csv")
                        continue
                    rec = evaluate(args, cl, op, prop, df, specs[(op, prop)], use_tp)
                    records.append(rec)
                    print(f"  {cl['cluster']:<10} {op:<27} {prop}  n={rec['n']:<5} "
                          f"cv5 {fmt(rec['cv5_seed'])}  dim {fmt(rec['extrap_dim_seed'])}  "
                          f"seq {fmt(rec['extrap_seq_seed'])}  ({time.monotonic() - t0:.0f} s)",
                          file=sys.stderr, flush=True)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)

    means = cluster_means(records)
    meta = {
        "date": datetime.date.today().isoformat(),
        "run_time_s": round(time.monotonic() - t0, 1),
        "command": " ".join([os.path.basename(sys.argv[0])] + (argv or sys.argv[1:])),
        "data": os.path.abspath(args.data),
        "workdir": None if tmp else os.path.abspath(args.workdir),
        "versions": {"python": platform.python_version(), "sklearn": sklearn.__version__,
                     "xgboost": xgboost.__version__, "numpy": np.__version__,
                     "pandas": pd.__version__},
        "cv_seed": CV_SEED, "n_folds": N_FOLDS, "random_state": RANDOM_STATE,
        "split_rules": SPLIT_RULES, "features": args.features, "keep_bad": args.keep_bad,
        "jobs": args.jobs, "max_estimators": args.max_estimators,
        "trainplan_status": tp_status,
        "mape": "100 * mean(|pred - true| / true), percent",
        "paper_error": "seed <GPU>.csv Best_error% (a fraction) x 100: one 80/20 split",
    }
    head, rows, mean_rows = table_rows(records, means)
    notes = notes_lines(meta, records, skipped)
    print(text_table(head, rows, mean_rows))
    print()
    for n in notes:
        print("note:", n)
    print(f"run time {meta['run_time_s']:.0f} s")

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, name + ".json"), "w", encoding="utf-8") as fh:
        json.dump({"meta": meta, "notes": notes, "records": records, "means": means}, fh,
                  indent=1)
        fh.write("\n")
    with open(os.path.join(args.out, name + ".md"), "w", encoding="utf-8") as fh:
        fh.write(markdown(meta, head, rows, mean_rows, notes))
    print(f"wrote {os.path.join(args.out, name)}.{{json,md}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
