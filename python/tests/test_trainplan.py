"""The Python package against the command line: the same dicts as
``trainplan ... --format json``, errors as TrainplanError with the exit
status and the command's message, flags and lists as keywords, repeated
calls in one process, DataFrames where pandas is installed; a sweep's
records as the command writes them, from a spec dict or file.

Environment (tests/CMakeLists.txt sets it): TRAINPLAN_EXE, the executable;
TRAINPLAN_LIB, the library; PYTHONPATH, python/; TRAINPLAN_PY_SKIP, a
reason to skip (a sanitizer build Python cannot load).
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest
import warnings

import trainplan

EXE = os.environ.get("TRAINPLAN_EXE", "")
SEARCH = dict(model="gpt-neox-20b", system="perlmutter", max_gpus=128,
              seq_length=2048, global_batch_size=1024)
SEARCH_ARGS = ["--model", "gpt-neox-20b", "--system", "perlmutter",
               "--max-gpus", "128", "--seq-length", "2048",
               "--global-batch-size", "1024"]
# 4 scenarios, one infeasible (a 70B model on one GPU, whose weights alone
# outgrow it): no winner
SWEEP = {"models": ["gpt3-1.7b", "llama2-70b"], "systems": ["eos"],
         "gpus": [1, 8], "seq_lengths": [2048], "global_batch_sizes": [256],
         "tokens": [1e11], "options": {"top": 2}}


def setUpModule():
    if os.environ.get("TRAINPLAN_PY_SKIP"):
        raise unittest.SkipTest(os.environ["TRAINPLAN_PY_SKIP"])
    if not EXE:
        raise unittest.SkipTest("TRAINPLAN_EXE not set")


def cli(*args):
    p = subprocess.run([EXE, *args, "--format", "json"], capture_output=True,
                       text=True, check=False)
    return p.returncode, (json.loads(p.stdout) if p.stdout else None), p.stderr


class Parity(unittest.TestCase):
    def test_search_winner(self):
        """The issue's done-when: the same winner as the command line."""
        r = trainplan.search(**SEARCH)
        rc, c, _ = cli("search", *SEARCH_ARGS)
        self.assertEqual(rc, 0)
        self.assertEqual(r["ranked"][0]["layout"], c["ranked"][0]["layout"])

    def test_search_equal(self):
        r = trainplan.search(no_timing=True, **SEARCH)
        rc, c, _ = cli("search", *SEARCH_ARGS, "--no-timing")
        self.assertEqual(r, c)
        # again in the same process: the same answer
        self.assertEqual(trainplan.search(no_timing=True, **SEARCH), c)

    def test_estimate_equal(self):
        r = trainplan.estimate(model="gpt-neox-20b", system="perlmutter",
                               gpus=128, seq_length=2048,
                               global_batch_size=1024,
                               tensor_model_parallel_size=4,
                               pipeline_model_parallel_size=4,
                               sequence_parallel=True)
        rc, c, _ = cli("estimate", "--model", "gpt-neox-20b", "--system",
                       "perlmutter", "--gpus", "128", "--seq-length", "2048",
                       "--global-batch-size", "1024", "-t", "4", "-p", "4",
                       "--sequence-parallel")
        self.assertEqual(rc, 0)
        self.assertEqual(r, c)
        self.assertTrue(r["layout"]["sequence_parallel"])

    def test_model_equal(self):
        m = trainplan.model("gpt-neox-20b", seq_length=4096)
        rc, c, _ = cli("model", "show", "gpt-neox-20b", "--seq-length", "4096")
        self.assertEqual(m, c)
        self.assertIn("gpt-neox-20b", [p["name"] for p in trainplan.models()])
        self.assertIn("perlmutter",
                      [s["name"] for s in trainplan.systems()["systems"]])


class Sessions(unittest.TestCase):
    EST = dict(model="gpt-neox-20b", system="perlmutter", gpus=128,
               seq_length=2048, global_batch_size=1024,
               tensor_model_parallel_size=4, pipeline_model_parallel_size=4,
               sequence_parallel=True)

    def test_session_equal(self):
        """A session's calls: the command line's JSON, again and again."""
        rc, c, _ = cli("estimate", "--model", "gpt-neox-20b", "--system",
                       "perlmutter", "--gpus", "128", "--seq-length", "2048",
                       "--global-batch-size", "1024", "-t", "4", "-p", "4",
                       "--sequence-parallel")
        with trainplan.Session() as s:
            for _ in range(3):
                self.assertEqual(s.estimate(**self.EST), c)
            self.assertEqual(s.model("gpt-neox-20b", seq_length=4096),
                             cli("model", "show", "gpt-neox-20b", "--seq-length",
                                 "4096")[1])
            self.assertIn("ranked", s.search(top=1, **SEARCH))

    def test_session_hwdb_and_errors(self):
        here = pathlib.Path(__file__).resolve().parents[2]
        good = here / "tests" / "fixtures" / "hw" / "good"
        with trainplan.Session(hwdb=good) as s:
            self.assertIn("perlmutter",
                          [y["name"] for y in s.call("hw list")["systems"]])
        with self.assertRaises(trainplan.TrainplanError) as cm:
            trainplan.Session(hwdb="/no/such/dir")
        self.assertIn("/no/such/dir", cm.exception.message)
        s = trainplan.Session()
        s.close()
        with self.assertRaises(ValueError):
            s.estimate(**self.EST)
        s.close()  # twice: nothing

    def test_session_threads(self):
        """Four threads on one session: each answer the single call's."""
        import threading
        with trainplan.Session() as s:
            want = s.estimate(**self.EST)
            got, errs = [], []

            def work():
                try:
                    for _ in range(5):
                        got.append(s.estimate(**self.EST))
                except Exception as e:  # reported below
                    errs.append(e)
            ts = [threading.Thread(target=work) for _ in range(4)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            self.assertEqual(errs, [])
            self.assertEqual(len(got), 20)
            self.assertTrue(all(g == want for g in got))


class Structs(unittest.TestCase):
    """estimate_struct: the dict's figures in a plain struct (API 4);
    estimate_structs: a list of them in one call."""
    CASES = [Sessions.EST,
             # MoE: ep and etp from the layout
             dict(model="mixtral-8x7b", system="eos", gpus=64, seq_length=4096,
                  global_batch_size=256, expert_model_parallel_size=4,
                  tensor_model_parallel_size=2),
             dict(model="llama3-8b", system="eos", gpus=16, seq_length=8192,
                  global_batch_size=128, precision="fp8",
                  recompute_granularity="full")]

    def check(self, r, d):
        lay = d["layout"]
        self.assertEqual(r.feasible, int(d["feasible"]))
        self.assertEqual(r.reason, d["reason"])
        self.assertEqual(r.gpu, d["gpu"])
        self.assertEqual(r.system, d["system"])
        self.assertEqual(r.layout.tag, "")
        for f, k in (("gpus", "gpus"), ("tp", "tensor_model_parallel_size"),
                     ("pp", "pipeline_model_parallel_size"),
                     ("cp", "context_parallel_size"),
                     ("dp", "data_parallel_size"),
                     ("vpp", "virtual_stages_per_pipeline_rank"),
                     ("mbs", "micro_batch_size"),
                     ("gbs", "global_batch_size"),
                     ("seq_length", "seq_length"), ("zero_stage", "zero_stage")):
            self.assertEqual(getattr(r.layout, f), lay[k], f)
        self.assertEqual(r.layout.ep, lay.get("expert_model_parallel_size", 1))
        self.assertEqual(r.layout.etp, lay.get("expert_tensor_parallel_size", 1))
        self.assertEqual(r.layout.sequence_parallel, int(lay["sequence_parallel"]))
        self.assertEqual(r.layout.recompute, lay["recompute_granularity"])
        self.assertEqual(r.layout.precision, lay["precision"])
        for f in ("iteration_time_s", "tokens_per_s", "mfu",
                  "peak_memory_bytes", "gpu_memory_bytes"):
            self.assertAlmostEqual(getattr(r, f) / d[f], 1.0, places=13, msg=f)
        self.assertLess(r.layout.cost_per_iteration_usd, 0)

    def test_struct_is_the_dicts_figures(self):
        with trainplan.Session() as s:
            for req in self.CASES:
                for _ in range(2):
                    self.check(s.estimate_struct(**req), s.estimate(**req))
        r = trainplan.estimate_struct(**self.CASES[0])
        self.assertIsInstance(r, trainplan.EstimateResult)
        self.assertEqual(r.to_dict()["layout"]["tp"], 4)
        self.assertIn("iteration_time_s", repr(r))

    def test_struct_errors(self):
        with self.assertRaises(trainplan.TrainplanError) as cm:
            trainplan.estimate_struct(model="gpt-neox-20b", system="perlmutter",
                                      gpus=8, seq_length=2048,
                                      global_batch_size=8,
                                      tensor_model_parallel_size=1,
                                      pipeline_model_parallel_size=1)
        self.assertEqual(cm.exception.status, 1)
        self.assertIn("not feasible (out_of_memory)", cm.exception.message)
        r = cm.exception.result
        self.assertEqual((r.feasible, r.reason), (0, "out_of_memory"))
        self.assertGreater(r.peak_memory_bytes, r.gpu_memory_bytes)
        with self.assertRaises(trainplan.TrainplanError) as cm:
            trainplan.estimate_struct(model="no-such-model", system="eos", gpus=8)
        self.assertEqual(cm.exception.status, 65)
        self.assertIn("no-such-model", cm.exception.message)
        self.assertIsNone(cm.exception.result)
        for kw in ({"no_such_key": 1}, {"output": "x.json"}):
            with self.assertRaises(trainplan.TrainplanError) as cm:
                trainplan.estimate_struct(**dict(Sessions.EST, **kw))
            self.assertEqual(cm.exception.status, 64)
            self.assertIn(next(iter(kw)), cm.exception.message)
        with self.assertRaises(ValueError) as cm:
            trainplan.estimate_struct(**dict(Sessions.EST, model="gpt-neox-20b\0"))
        self.assertIn("'model'", str(cm.exception))
        with self.assertRaises(ValueError):
            trainplan.estimate_struct(**dict(Sessions.EST, model="\ud800"))
        s = trainplan.Session()
        s.close()
        with self.assertRaises(ValueError):
            s.estimate_struct(**Sessions.EST)

    def test_struct_paths_and_flags(self):
        """What _plain converts takes the slow path: the same answer."""
        here = pathlib.Path(__file__).resolve().parents[2]
        good = here / "tests" / "fixtures" / "hw" / "good"
        req = dict(Sessions.EST, system="perlmutter")
        want = trainplan.estimate_struct(**req).to_dict()
        for hwdb in (good, os.fsencode(str(good)), [str(good)]):
            self.assertEqual(trainplan.estimate_struct(hwdb=hwdb, **req).to_dict(),
                             want)
        # False: the flag's no- form; None: left out
        off = trainplan.estimate_struct(**dict(req, sequence_parallel=False))
        self.assertEqual(off.layout.sequence_parallel, 0)
        self.assertEqual(trainplan.estimate_struct(**dict(req, zero_stage=None,
                                                          micro_batch_size=1)).layout.mbs, 1)

    @unittest.skipUnless(hasattr(os, "fork"), "no fork")
    def test_after_fork(self):
        """A child process opens a session of its own for the module's
        calls and refuses its parent's (their lock and memory are the
        parent's); the process id a call checks follows fork; and its
        calls run on one thread, where a parallel region would wait
        forever for the parent's OpenMP threads (lib/dispatch.c)."""
        want = trainplan.estimate_struct(**Sessions.EST).to_dict()
        q = dict(model="llama3-8b", system="eos", max_gpus=16, seq_length=8192,
                 global_batch_size=128)
        best = trainplan.search(threads=2, **q)["ranked"][0]["layout"]
        mine = trainplan.Session()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: report through the pipe, never return
            code = 1
            try:
                ok = (trainplan.estimate_struct(**Sessions.EST).to_dict() == want
                      and trainplan.search(threads=2, **q)["ranked"][0]["layout"] == best)
                try:
                    mine.estimate_struct(**Sessions.EST)
                    refused = False
                except ValueError as e:
                    refused = "after fork" in str(e)
                code = 0 if ok and refused else 3
            finally:
                os.write(w, bytes([code]))
                os._exit(0)
        os.close(w)
        import select
        ready, _, _ = select.select([r], [], [], 120)
        got = os.read(r, 1) if ready else b"hung"
        os.close(r)
        if not ready:
            os.kill(pid, 9)
        os.waitpid(pid, 0)
        self.assertEqual(got, bytes([0]))
        self.assertEqual(mine.estimate_struct(**Sessions.EST).to_dict(), want)
        mine.close()

    def test_speedups_are_ctypes(self):
        """python/speedups.c, where the build made it, gives what ctypes
        gives: results, statuses and messages, for requests it encodes
        and for those it leaves to Python (NotImplemented)."""
        build = os.environ.get("TRAINPLAN_BUILD_DIR")
        made = build and os.path.exists(os.path.join(build, "_trainplan_speedups.abi3.so"))
        trainplan.speedups()  # loads the library, and the module beside it
        fast = trainplan._speedups
        if made and not os.environ.get("TRAINPLAN_NO_SPEEDUPS"):
            self.assertIsNotNone(fast, "built but not loaded")
            self.assertTrue(trainplan.speedups().endswith(".abi3.so"))
        if fast is None:
            self.skipTest("no _trainplan_speedups (no CPython headers at build time)")
        here = pathlib.Path(__file__).resolve().parents[2]
        good = here / "tests" / "fixtures" / "hw" / "good"
        odd = 'a"b\\c\n\t\x01\u00e9\u4e2d/'
        reqs = self.CASES + [
            dict(Sessions.EST, sequence_parallel=False, zero_stage=None),
            dict(Sessions.EST, system="perlmutter", hwdb=[str(good)]),
            dict(Sessions.EST, system="perlmutter", hwdb=(str(good),)),
            dict(Sessions.EST, system="perlmutter", hwdb=good),      # Python's
            dict(Sessions.EST, global_batch_size=1024.0),
            dict(Sessions.EST, tokens=3e11),
            dict(Sessions.EST, tokens=float("inf")),                  # Python's
            dict(Sessions.EST, gpus=2 ** 70),                         # Python's
            dict(Sessions.EST, gpus=True),
            dict(Sessions.EST, model=odd),
            dict(Sessions.EST, model=odd.encode()),                   # Python's
            dict(Sessions.EST, model="x\0"),                          # Python's
            dict(Sessions.EST, model="\ud800"),                       # Python's
            dict(Sessions.EST, model={"a": 1}),                       # Python's
            dict(Sessions.EST, no_such_key=[1, 2.5, None, "x"]),
            {"gpus": 8, "no-such-key": 1}, {}]

        def run(q):
            try:
                return ("ok", trainplan.estimate_struct(**q).to_dict())
            except trainplan.TrainplanError as e:
                return ("error", e.status, e.message,
                        e.result.to_dict() if e.result is not None else None)
            except (TypeError, ValueError) as e:
                return (type(e).__name__, str(e))
        try:
            for q in reqs:
                trainplan._speedups = fast
                a = run(q)
                trainplan._speedups = None
                self.assertEqual(a, run(q), q)
        finally:
            trainplan._speedups = fast

    def test_structs_are_the_single_calls(self):
        oom = dict(model="gpt-neox-20b", system="perlmutter", gpus=8,
                   seq_length=2048, global_batch_size=8,
                   tensor_model_parallel_size=1, pipeline_model_parallel_size=1)
        reqs = self.CASES + [oom]
        with trainplan.Session() as s:
            got = s.estimate_structs(reqs)
            self.assertEqual(len(got), len(reqs))
            for r, q in zip(got[:-1], self.CASES):
                self.assertEqual(r.to_dict(), s.estimate_struct(**q).to_dict())
            # infeasible: a result, not an exception
            self.assertEqual((got[-1].feasible, got[-1].reason), (0, "out_of_memory"))
            self.assertEqual(s.estimate_structs([]), [])
            self.assertEqual(s.estimate_structs(tuple(self.CASES[:1]))[0].to_dict(),
                             got[0].to_dict())
        # a bad request: TrainplanError naming the first, the rest estimated
        with self.assertRaises(trainplan.TrainplanError) as cm:
            trainplan.estimate_structs([Sessions.EST, dict(model="no-such-model",
                                                           system="eos", gpus=8),
                                        {"bogus": 1}])
        self.assertEqual(cm.exception.status, 65)
        self.assertIn("request 1: ", cm.exception.message)
        self.assertIn("no-such-model", cm.exception.message)
        self.assertEqual(cm.exception.result[0].feasible, 1)
        with self.assertRaises(ValueError) as cm:
            trainplan.estimate_structs([Sessions.EST, dict(model="x\0")])
        self.assertIn("request 1", str(cm.exception))
        for bad in (Sessions.EST, 3, [Sessions.EST, "model"]):
            with self.assertRaises(TypeError):
                trainplan.estimate_structs(bad)
        # paths go through _plain in a list too
        here = pathlib.Path(__file__).resolve().parents[2]
        good = here / "tests" / "fixtures" / "hw" / "good"
        self.assertEqual(trainplan.estimate_structs([dict(Sessions.EST, hwdb=good)])[0]
                         .layout.tp, 4)

    def test_struct_threads(self):
        import threading
        with trainplan.Session() as s:
            want = s.estimate_struct(**Sessions.EST).to_dict()
            got, errs = [], []

            def work():
                try:
                    for _ in range(50):
                        got.append(s.estimate_struct(**Sessions.EST).to_dict())
                    for r in s.estimate_structs([Sessions.EST] * 10):
                        got.append(r.to_dict())
                except Exception as e:  # reported below
                    errs.append(e)
            ts = [threading.Thread(target=work) for _ in range(4)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            self.assertEqual(errs, [])
            self.assertEqual(len(got), 240)
            self.assertTrue(all(g == want for g in got))


class Keywords(unittest.TestCase):
    def test_false_is_the_no_flag(self):
        r = trainplan.estimate(model="gpt-neox-20b", system="perlmutter",
                               gpus=128, seq_length=2048,
                               global_batch_size=1024,
                               tensor_model_parallel_size=4,
                               pipeline_model_parallel_size=4,
                               sequence_parallel=False, top=None)
        self.assertFalse(r["layout"]["sequence_parallel"])

    def test_list_and_numbers(self):
        r = trainplan.search(model="gpt-neox-20b", system=["perlmutter"],
                             gpus=[64, 128], seq_length=2048.0,
                             global_batch_size=1024, tokens=300e9, top=2,
                             no_timing=True)
        self.assertEqual(len(r["ranked"]), 2)
        self.assertEqual(r["tokens"], 300e9)
        self.assertIn(r["ranked"][0]["gpus"], (64, 128))


class Errors(unittest.TestCase):
    def test_unknown_model(self):
        with self.assertRaises(trainplan.TrainplanError) as cm:
            trainplan.search(**dict(SEARCH, model="no-such-model"))
        self.assertIn(cm.exception.status, (64, 65, 66))
        self.assertIn("no-such-model", cm.exception.message)
        rc, _, err = cli("search", *SEARCH_ARGS[:1], "no-such-model",
                         *SEARCH_ARGS[2:])
        self.assertEqual(rc, cm.exception.status)
        self.assertEqual(err, cm.exception.message)

    def test_unknown_key(self):
        with self.assertRaises(trainplan.TrainplanError) as cm:
            trainplan.search(max_gpu=8)
        self.assertEqual(cm.exception.status, 64)
        self.assertIn("max-gpus", cm.exception.message)

    def test_bad_value(self):
        with self.assertRaises(trainplan.TrainplanError) as cm:
            trainplan.search(**dict(SEARCH, max_gpus=0))
        self.assertEqual(cm.exception.status, 64)
        self.assertIn("--max-gpus", cm.exception.message)
        with self.assertRaises(trainplan.TrainplanError):
            trainplan.search(format="csv")
        with self.assertRaises(trainplan.TrainplanError):
            trainplan.search(model={"a": 1})

    def test_nothing_feasible_keeps_the_result(self):
        with self.assertRaises(trainplan.TrainplanError) as cm:
            trainplan.search(model="gpt-neox-20b", system="perlmutter",
                             max_gpus=4, seq_length=2048,
                             global_batch_size=1024)
        self.assertEqual(cm.exception.status, 1)
        self.assertIsNotNone(cm.exception.result)
        self.assertEqual(cm.exception.result["ranked"], [])

    def test_nothing_feasible_says_how_near_and_what_fits(self):
        # issue 31: a deadline missed, in days, with the levers that fit
        # (SI suffixes as the command line takes them)
        with self.assertRaises(trainplan.TrainplanError) as cm:
            trainplan.search(model="gpt-neox-20b", system="perlmutter",
                             max_gpus=128, seq_length=2048,
                             global_batch_size=1024, tokens="300B",
                             deadline="10d", no_timing=True)
        self.assertEqual(cm.exception.status, 1)
        self.assertIn("past the deadline of 10 days", cm.exception.message)
        miss = cm.exception.result["nearest_miss"]
        self.assertEqual(miss["binding"], "deadline")
        self.assertFalse(miss["nearest"]["limits"]["deadline"]["met"])
        self.assertTrue(miss["levers"])
        for lever in miss["levers"]:
            self.assertTrue(all(s["met"] for s in lever["limits"].values()))
        self.assertIn("--gpus 256", [l["option"] for l in miss["levers"]])

    def test_still_works_after_errors(self):
        self.assertEqual(trainplan.model("gpt-neox-20b")["name"], "gpt-neox-20b")


class Sweep(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.spec = os.path.join(self.dir.name, "spec.json")
        with open(self.spec, "w") as f:
            json.dump(SWEEP, f)

    def tearDown(self):
        self.dir.cleanup()

    def cli_records(self):
        p = subprocess.run([EXE, "sweep", self.spec], capture_output=True,
                           text=True, check=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        return [json.loads(line) for line in p.stdout.splitlines()]

    def test_sweep_equal(self):
        """The command's records, from the spec as a dict, a path and a
        pathlib.Path, and again in the same process."""
        c = self.cli_records()
        self.assertEqual(len(c), 4)
        self.assertEqual(trainplan.sweep(SWEEP), c)
        self.assertEqual(trainplan.sweep(self.spec, threads=2), c)
        self.assertEqual(trainplan.sweep(pathlib.Path(self.spec)), c)
        self.assertEqual(trainplan.sweep(SWEEP), c)
        self.assertEqual([r["status"] for r in c],
                         ["ok", "ok", "infeasible", "ok"])
        self.assertEqual(trainplan.call("sweep", self.spec), c)

    def test_sweep_shard(self):
        r = trainplan.sweep(SWEEP, shard="1/2")
        self.assertEqual([x["index"] for x in r], [1, 3])

    def test_sweep_errors(self):
        with self.assertRaises(trainplan.TrainplanError) as cm:
            trainplan.sweep(dict(SWEEP, models=["no-such-model"], gpus=[0]))
        self.assertIn(cm.exception.status, (64, 65))
        self.assertIn("no-such-model", cm.exception.message)
        self.assertIn("gpus", cm.exception.message)
        with self.assertRaises(trainplan.TrainplanError) as cm:
            trainplan.sweep(os.path.join(self.dir.name, "missing.json"))
        self.assertEqual(cm.exception.status, 66)
        with self.assertRaises(trainplan.TrainplanError) as cm:
            trainplan.sweep(SWEEP, resume=True)
        self.assertEqual(cm.exception.status, 64)
        with self.assertRaises(TypeError):
            trainplan.sweep(["models"])
        # the spec's temporary file is gone
        left = [n for n in os.listdir(tempfile.gettempdir())
                if n.startswith("trainplan-spec-")]
        self.assertEqual(left, [])

    def test_sweep_rows(self):
        """One row per scenario: its inputs and the winner's figures."""
        recs = trainplan.sweep(SWEEP)
        try:
            import pandas  # noqa: F401
        except ImportError:
            with self.assertRaises(ImportError):
                trainplan.to_dataframe(recs)
            rows = [trainplan._sweep_row(r) for r in recs]
            self.assertEqual(rows[0]["best.layout"], recs[0]["best"]["layout"])
            self.assertEqual(rows[1]["scenario.gpus"], "8")
            self.assertNotIn("best.layout", rows[2])
            self.skipTest("pandas not installed: the rows checked without it")
        df = trainplan.sweep(SWEEP, dataframe=True)
        self.assertEqual(len(df), 4)
        self.assertEqual(list(df["index"]), [0, 1, 2, 3])
        self.assertEqual(df["best.layout"].iloc[0], recs[0]["best"]["layout"])
        self.assertEqual(df["best.iteration_time_s"].iloc[3],
                         recs[3]["best"]["iteration_time_s"])
        self.assertTrue(pandas.isna(df["best.layout"].iloc[2]))
        self.assertEqual(list(df["status"]), ["ok", "ok", "infeasible", "ok"])
        self.assertEqual(df["scenario.model"].iloc[2], "llama2-70b")


class Frames(unittest.TestCase):
    def test_frame_rows(self):
        """Of a search: the ranked, the front, every admitted layout (with
        all=True) and the fastest of each (system, GPU count)."""
        res = trainplan.search(all=True, **SEARCH)
        self.assertEqual(trainplan.frame_rows(res), res["ranked"])
        self.assertEqual(trainplan.frame_rows(res, "pareto"), res["pareto"])
        adm = trainplan.frame_rows(res, "admitted")
        self.assertEqual(len(adm), res["stats"]["admitted"])
        best = trainplan.frame_rows(res, "best")
        keys = [(r["system"], r["gpus"]) for r in best]
        self.assertEqual(keys, sorted(set((r["system"], r["gpus"]) for r in adm)))
        for b in best:
            self.assertEqual(b["iteration_time_s"],
                             min(r["iteration_time_s"] for r in adm
                                 if (r["system"], r["gpus"]) == (b["system"], b["gpus"])))
        self.assertEqual(best[0]["layout"] in [r["layout"] for r in adm], True)
        with self.assertRaises(ValueError):
            trainplan.frame_rows(trainplan.search(**SEARCH), "admitted")
        with self.assertRaises(ValueError):
            trainplan.frame_rows(res, "everything")

    def test_dataframe(self):
        try:
            import pandas  # noqa: F401
        except ImportError:
            with self.assertRaises(ImportError):
                trainplan.search(dataframe=True, **SEARCH)
            self.skipTest("pandas not installed: to_dataframe's ImportError checked")
        df = trainplan.search(dataframe=True, **SEARCH)
        self.assertEqual(df["layout"].iloc[0],
                         trainplan.search(**SEARCH)["ranked"][0]["layout"])
        self.assertIn("breakdown_s.compute_fwd", df.columns)


class Contract(unittest.TestCase):
    """Issue 30: what the library and this module promise at the edges."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def test_infeasible_estimate_says_why(self):
        with self.assertRaises(trainplan.TrainplanError) as cm:
            trainplan.estimate(model="gpt-neox-20b", system="perlmutter",
                               gpus=8, seq_length=2048, global_batch_size=8,
                               tensor_model_parallel_size=1,
                               pipeline_model_parallel_size=1)
        self.assertEqual(cm.exception.status, 1)
        self.assertIn("not feasible (out_of_memory)", cm.exception.message)
        self.assertEqual(cm.exception.result["reason"], "out_of_memory")

    def test_refused_keys(self):
        for kw in ({"output": "x.json"}, {"format": "csv"}, {"svg": "-"},
                   {"help": True}):
            with self.assertRaises(trainplan.TrainplanError) as cm:
                trainplan.search(**dict(SEARCH, **kw))
            self.assertEqual(cm.exception.status, 64)
            self.assertIn(next(iter(kw)), cm.exception.message)

    def test_nul_is_refused(self):
        with self.assertRaises(ValueError) as cm:
            trainplan.search(**dict(SEARCH, model="gpt-neox-20b\0x"))
        self.assertIn("'model'", str(cm.exception))
        self.assertIn("NUL", str(cm.exception))
        with self.assertRaises(ValueError):
            trainplan.model("gpt-neox-20b\0")
        with self.assertRaises(ValueError):
            trainplan.sweep(dict(SWEEP, models=["gpt3-1.7b\0"]))

    def test_completion_is_text(self):
        text = trainplan.call("completion bash")
        self.assertIsInstance(text, str)
        self.assertIn("complete", text)

    def test_non_utf8_path(self):
        src = os.path.join(os.path.dirname(__file__), "..", "..", "tests",
                           "fixtures", "hf", "llama3-8b.json")
        raw = os.fsencode(self.dir.name) + b"/caf\xe9.json"
        with open(src, "rb") as f, open(raw, "wb") as g:
            g.write(f.read())
        want = trainplan.model(src)["params_total"]
        for path in (raw, os.fsdecode(raw), pathlib.Path(os.fsdecode(raw))):
            r = trainplan.model(path)
            self.assertEqual(r["params_total"], want)
            self.assertEqual(r["source"], os.fsdecode(raw))
        # a missing one: the command's message, naming the path, not "the
        # request is not JSON"
        with self.assertRaises(trainplan.TrainplanError) as cm:
            trainplan.model(os.fsencode(self.dir.name) + b"/no\xff.json")
        self.assertEqual(cm.exception.status, 66)
        self.assertIn("no\\xff.json", cm.exception.message)
        # a str no bytes encode: refused here, saying so
        with self.assertRaises(ValueError) as cm:
            trainplan.model("\ud800.json")
        self.assertIn("not text", str(cm.exception))


class Example(unittest.TestCase):
    def test_python_search_example(self):
        root = os.path.join(os.path.dirname(__file__), "..", "..")
        p = subprocess.run([sys.executable,
                            os.path.join(root, "examples", "python_search.py")],
                           capture_output=True, text=True, check=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        rc, c, _ = cli("search", *SEARCH_ARGS)
        self.assertIn("winner: " + c["ranked"][0]["layout"], p.stdout)


if __name__ == "__main__":
    warnings.simplefilter("error", trainplan.TrainplanWarning)
    unittest.main()
