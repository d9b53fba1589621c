#!/usr/bin/env python3
"""Tests of moesample.py's pure-Python parts (cases, splits, offsets, CSV) and of
fp8sample.py's shape list; no torch."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fp8sample  # noqa: E402
import moesample as m  # noqa: E402


class Splits(unittest.TestCase):
    def test_even(self):
        self.assertEqual(m.split_rows(64, 4, 0), [16, 16, 16, 16])
        self.assertEqual(m.split_rows(80, 4, 0), [32, 16, 16, 16])

    def test_skew_sums_aligned_nonempty(self):
        for total, n in ((16384, 8), (32768, 128), (16384, 128), (100, 64)):
            for skew in (0, 0.25, 1.0):
                got = m.split_rows(total, n, skew)
                self.assertEqual(len(got), n)
                want = max(-(-total // m.ALIGN_M), n) * m.ALIGN_M
                self.assertEqual(sum(got), want)
                self.assertTrue(all(g >= m.ALIGN_M and g % m.ALIGN_M == 0 for g in got))

    def test_skew_is_seeded_and_skewed(self):
        a = m.split_rows(32768, 64, m.SKEW)
        self.assertEqual(a, m.split_rows(32768, 64, m.SKEW))
        self.assertGreater(max(a), 1.3 * 32768 / 64)
        self.assertLess(max(a), 4 * 32768 / 64)

    def test_offsets(self):
        self.assertEqual(m.offsets([16, 32, 16]), [16, 48, 64])


class Cases(unittest.TestCase):
    def test_rows_per_rank_are_tokens_times_topk(self):
        cases = m.grouped_cases()
        self.assertGreater(len(cases), 10)
        for c in cases:
            self.assertEqual(c["nle"] * c["ep"], c["experts"])
            self.assertEqual(c["nle"] * c["rows_per_expert"], c["tokens"] * c["topk"])

    def test_quick_is_small(self):
        self.assertLessEqual(len(m.grouped_cases(True)), 3)

    def test_args(self):
        a = m.parse_args(["--sections", "router,launch"])
        self.assertEqual(a.section_list, ["router", "launch"])
        with self.assertRaises(SystemExit):
            m.parse_args(["--sections", "nope"])


class Fp8(unittest.TestCase):
    def test_shapes_list_without_a_gpu(self):
        import contextlib
        import io
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            self.assertEqual(fp8sample.main(["--list"]), 0)
        self.assertEqual(len(buf.getvalue().splitlines()), len(fp8sample.SHAPES))
        for m_, n, k in fp8sample.SHAPES:
            self.assertEqual(k % 128, 0)  # whole 1 x 128 blocks along K


class FakeTorch:
    """Just enough of torch for Moe's GPU-side glue: a clock the measured calls advance,
    events that read it, synchronize a no-op."""

    def __init__(self):
        self.clock_ms = 0.0
        outer = self

        class Event:
            def __init__(self, enable_timing=False):
                self.t = None

            def record(self):
                self.t = outer.clock_ms

            def elapsed_time(self, other):
                return other.t - self.t

        class Cuda:
            pass
        self.cuda = Cuda()
        self.cuda.Event = Event
        self.cuda.synchronize = lambda: None


class Glue(unittest.TestCase):
    def moe(self):
        import argparse
        m_ = object.__new__(m.Moe)
        m_.torch = FakeTorch()
        m_.a = argparse.Namespace(host_batches=3)
        m_.bench = argparse.Namespace(cycles_per_us=0)  # sleep_us: no spin
        return m_

    def test_queued_us_is_the_time_per_call(self):
        g = self.moe()

        def call():  # 2.5 us of GPU time a call
            g.torch.clock_ms += 0.0025
        self.assertAlmostEqual(g.queued_us(call, 40, 1000), 2.5)

    def test_kernels_sum_kernel_list(self):
        g = self.moe()
        g.kernel_list = lambda fn, n=3: [("a", 2.0, 5.0), ("b", 1.0, 1.5)]
        self.assertEqual(g.kernels(None), (6.5, 3.0))


class Csv(unittest.TestCase):
    def test_sink(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "x.csv")
            s = m.Sink(p, ["a", "b", "c"])
            s.row({"a": "x", "b": 1.234, "c": None})
            s.close()
            with open(p) as f:
                self.assertEqual(f.read(), "a,b,c\nx,1.23,\n")

    def test_sink_quotes_commas(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "x.csv")
            s = m.Sink(p, ["kernel", "us"])
            s.row({"kernel": "void f<a, b>(int, float)", "us": 2.0})
            s.close()
            with open(p) as f:
                self.assertEqual(f.read(), 'kernel,us\n"void f<a, b>(int, float)",2.00\n')


if __name__ == "__main__":
    unittest.main()
