"""The package's documented offline install, for real: a fresh venv of
this Python (Debian 12's: pip 23, setuptools 66, no wheel, no index),
``pip install --no-build-isolation --no-index ./python``, then the issue's
done-when line run from outside the source tree: the installed package
(its own copy of the library and the hardware database) prints the same
winner as the command line.

Environment: TRAINPLAN_EXE, the executable; TRAINPLAN_BUILD_DIR, the build
whose library the wheel carries; TRAINPLAN_TEST_DIR, a scratch directory;
TRAINPLAN_PY_SKIP, a reason to skip.
"""
import json
import os
import shutil
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)
DONE_WHEN = ("import trainplan; print(trainplan.search(model='gpt-neox-20b', "
             "system='perlmutter', max_gpus=128, seq_length=2048, "
             "global_batch_size=1024)['ranked'][0]['layout'])")


class Install(unittest.TestCase):
    def test_venv_install(self):
        if os.environ.get("TRAINPLAN_PY_SKIP"):
            self.skipTest(os.environ["TRAINPLAN_PY_SKIP"])
        try:
            import ensurepip  # noqa: F401  (Debian: python3-venv)
        except ImportError:
            self.skipTest("no ensurepip: apt-get install python3-venv")
        work = os.environ.get("TRAINPLAN_TEST_DIR") or os.path.join(PKG, "build-test")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        venv = os.path.join(work, "v")
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        py = os.path.join(venv, "bin", "python")
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        env.pop("TRAINPLAN_LIB", None)
        env["PIP_NO_INDEX"] = "1"
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        p = subprocess.run([py, "-m", "pip", "install", "-q",
                            "--no-build-isolation", PKG],
                           cwd=work, env=env, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        # outside the source tree: the installed package, its own library
        p = subprocess.run([py, "-c", "import trainplan; print(trainplan.library_path())"],
                           cwd=work, env=env, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.strip().startswith(venv), p.stdout)
        # estimate_struct's C module, where the build made one: the wheel's
        build = os.environ.get("TRAINPLAN_BUILD_DIR") or os.path.join(PKG, "..", "build")
        if os.path.exists(os.path.join(build, "_trainplan_speedups.abi3.so")):
            p = subprocess.run([py, "-c", "import trainplan; print(trainplan.speedups())"],
                               cwd=work, env=env, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertTrue(p.stdout.strip().startswith(venv), p.stdout)
        p = subprocess.run([py, "-c", DONE_WHEN], cwd=work, env=env,
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        c = subprocess.run([os.environ["TRAINPLAN_EXE"], "search", "--model",
                            "gpt-neox-20b", "--system", "perlmutter",
                            "--max-gpus", "128", "--seq-length", "2048",
                            "--global-batch-size", "1024", "--format", "json"],
                           capture_output=True, text=True, check=True)
        self.assertEqual(p.stdout.strip(), json.loads(c.stdout)["ranked"][0]["layout"])
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
