#!/usr/bin/env python3
"""Tests of the sampler's pure-Python parts (no torch, no GPU needed):
    python3 -m unittest discover -s bench/sampler -p 'test_*.py'
"""
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opsample as S  # noqa: E402
import collsample as C  # noqa: E402

SEED_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data",
                        "seed_samples", "Perlmutter", "operator")


class Grid(unittest.TestCase):
    def test_deterministic_and_valid(self):
        for op in S.OPS:
            g1, g2 = S.op_grid(op, False, 0), S.op_grid(op, False, 0)
            self.assertEqual(g1, g2, op.name)
            self.assertNotEqual(g1, S.op_grid(op, False, 1), op.name)
            self.assertGreater(len(g1), 10, op.name)
            keys = {tuple(sorted(s)) for s in g1}
            self.assertEqual(len(keys), 1, op.name)
            for s in g1:
                self.assertTrue(S.valid_shape(s), (op.name, s))

    def test_sizes_in_brief(self):
        for op in S.OPS:
            n = len(S.op_grid(op, False, 0))
            if op.name == "adam":
                self.assertEqual(n, 14)
            else:
                self.assertTrue(60 <= n <= 160, (op.name, n))

    def test_head_dims_and_divisibility(self):
        for s in S.op_grid(S.OP_BY_NAME["flash_atten"], False, 0):
            self.assertEqual(s["h"] % s["mp"], 0)
            self.assertEqual(s["dim"] % s["h"], 0)
            self.assertIn(s["dim"] // s["h"], S.HEAD_DIMS)
        self.assertFalse(S.valid_shape({"mp": 16, "h": 24, "dim": 3072}))
        self.assertFalse(S.valid_shape({"mp": 1, "h": 24, "dim": 2048}))   # d % h
        self.assertFalse(S.valid_shape({"mp": 1, "h": 16, "dim": 8192}))   # d/h = 512
        self.assertTrue(S.valid_shape({"mp": 8, "h": 96, "dim": 12288}))

    def test_out_of_grid_present(self):
        g = S.op_grid(S.OP_BY_NAME["linear1"], False, 0)
        self.assertTrue(any(s["dim"] == 12288 for s in g))
        self.assertTrue(any(s["l"] == 8192 for s in g))

    def test_softmax_cap(self):
        for s in S.op_grid(S.OP_BY_NAME["softmax"], False, 0):
            self.assertLessEqual(2 * s["b"] * s["h"] // s["mp"] * s["l"] ** 2, 10.1e9)

    def test_gemm_and_adam(self):
        g = S.op_grid(S.OP_BY_NAME["gemm"], False, 0)
        for s in g:
            for k in "mnk":
                self.assertTrue(256 <= s[k] <= 16384 and s[k] % 64 == 0, s)
        a = [s["params"] for s in S.op_grid(S.OP_BY_NAME["adam"], False, 0)]
        self.assertEqual(min(a), 10 ** 6)
        self.assertEqual(max(a), 2 * 10 ** 9)

    def test_quick_is_tiny(self):
        for op in S.OPS:
            self.assertLessEqual(len(S.op_grid(op, True, 0)), 4)


class Numbers(unittest.TestCase):
    def test_trimmed_mean(self):
        self.assertAlmostEqual(S.trimmed_mean([1, 2, 3, 4, 100]), 3.0)
        self.assertAlmostEqual(S.trimmed_mean([5, 1, 9]), 5.0)
        self.assertAlmostEqual(S.trimmed_mean([2, 4]), 3.0)
        self.assertAlmostEqual(S.trimmed_mean([10.0] * 10), 10.0)
        with self.assertRaises(ValueError):
            S.trimmed_mean([])

    def test_spread(self):
        self.assertAlmostEqual(S.spread([1, 10, 10, 11, 10, 100]), 0.1)
        self.assertEqual(S.spread([5, 6, 7]), 0.0)
        self.assertAlmostEqual(S.spread([3.0] * 10), 0.0)

    def test_padded_vocab(self):
        self.assertEqual(S.padded_vocab(1), 50304)
        self.assertEqual(S.padded_vocab(2), 25216)   # 50432 / 2
        self.assertEqual(S.padded_vocab(16) % 128, 0)

    def test_prefix_rule_matches_seeds(self):
        self.assertEqual(S.file_prefix("NVIDIA A100-SXM4-80GB"), "NVIDIAA100-SXM4-80GB")
        self.assertEqual(S.file_prefix("NVIDIA GH200 120GB"), "NVIDIAGH200120GB")
        self.assertEqual(S.file_prefix("NVIDIA H100 80GB HBM3"), "NVIDIAH10080GBHBM3")

    def test_work(self):
        f, b, _, _ = S.work("gemm", {"m": 8192, "n": 8192, "k": 8192})
        self.assertEqual(f, 2.0 * 8192 ** 3)
        f, b, _, _ = S.work("flash_atten", {"mp": 2, "b": 4, "h": 32, "l": 2048, "dim": 4096})
        self.assertEqual(f, 4.0 * 4 * (32 // 2) * 2048 ** 2 * 128)
        self.assertEqual(b, 2.5 * f)
        fc, _, _, _ = S.work("flash_atten_causal",
                             {"mp": 2, "b": 4, "h": 32, "l": 2048, "dim": 4096})
        self.assertEqual(fc, f / 2)


class Csv(unittest.TestCase):
    def test_roundtrip_and_columns_match_seeds(self):
        with tempfile.TemporaryDirectory() as d:
            op = S.OP_BY_NAME["linear1"]
            p = os.path.join(d, "NVIDIAH10080GBHBM3_linear1_fp16.csv")
            sink = S.CsvSink(p, op.columns)
            sink.row([1, 2, 1024, 4096, 123.456, 234.5])
            with self.assertRaises(ValueError):
                sink.row([1, 2])
            sink.close()
            with open(p) as f:
                text = f.read()
            self.assertEqual(text, "mp,b,l,dim,F_dur(us),B_dur(us)\n1,2,1024,4096,123.46,234.50\n")
            head, rows = S.read_csv(p)
            self.assertEqual(rows[0]["dim"], 4096.0)

    @unittest.skipUnless(os.path.isdir(SEED_DIR), "seed samples not beside the checkout")
    def test_headers_equal_seed_headers(self):
        for op in S.OPS:
            p = os.path.join(SEED_DIR, f"NVIDIAA100-SXM4-80GB_{op.name}_fp16.csv")
            if not os.path.exists(p):
                continue
            with open(p) as f:
                self.assertEqual(f.readline().strip().split(","), op.columns, op.name)

    def test_sanity_reads_our_files(self):
        with tempfile.TemporaryDirectory() as d:
            g = S.OP_BY_NAME["gemm"]
            sink = S.CsvSink(os.path.join(d, "X_gemm_bf16.csv"), g.columns)
            sink.row([8192, 8192, 8192, 1400.0])  # 785 TFLOP/s
            sink.close()
            fa = S.OP_BY_NAME["flash_atten_causal"]
            sink = S.CsvSink(os.path.join(d, "X_flash_atten_causal_fp16.csv"), fa.columns)
            sink.row([1, 4, 32, 4096, 4096, 500.0, 1200.0])
            sink.close()
            figs = S.sanity(d, out=io.StringIO())
            self.assertAlmostEqual(figs["gemm"]["tflops_fwd_max"], 2 * 8192 ** 3 / 1400e-6 / 1e12)
            self.assertAlmostEqual(figs["flash_atten_causal"]["bwd_over_fwd_median"], 2.4)
            self.assertNotIn("flash_atten", figs)


class Coll(unittest.TestCase):
    def test_size_grid(self):
        g = C.size_grid(1 << 16, 1 << 30, 2, 1024)
        self.assertEqual(g[0], 1 << 16)
        self.assertEqual(g[-1], 1 << 30)
        self.assertEqual(len(g), 29)
        self.assertTrue(all(x % 1024 == 0 for x in g))
        self.assertEqual(g, sorted(set(g)))


if __name__ == "__main__":
    unittest.main()
