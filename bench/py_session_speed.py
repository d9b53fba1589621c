#!/usr/bin/env python3
"""py_session_speed.py - one trainplan.estimate call from Python on the
process's session, and two threads against one (issue 32: at most 1 ms a
call, median of 1,000; two threads at least 1.8 x one thread's calls per
second on 2 cores).

    py_session_speed.py [CALLS] [SECONDS]      defaults 1000 and 2

The library as the package finds it (TRAINPLAN_LIB, or the build directory
beside python/). Prints the first call (the session opens and fits), the
median and 90th percentile of CALLS calls of a pinned layout and of one
estimate completes itself, a call on a fresh session each time (what a
call cost before sessions), and calls per second of 1 and 2 threads.
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
import trainplan  # noqa: E402

PINNED = dict(model="gpt-neox-20b", system="perlmutter", gpus=128,
              seq_length=2048, global_batch_size=1024,
              tensor_model_parallel_size=4, pipeline_model_parallel_size=4,
              context_parallel_size=1, micro_batch_size=1,
              num_virtual_stages_per_pipeline_rank=1,
              recompute_granularity="selective", zero_stage=1,
              sequence_parallel=True)
COMPLETED = dict(model="gpt-neox-20b", system="perlmutter", gpus=128,
                 seq_length=2048, global_batch_size=1024,
                 tensor_model_parallel_size=4, pipeline_model_parallel_size=4,
                 sequence_parallel=True)


def median_p90(f, n):
    dt = []
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        dt.append(time.perf_counter() - t0)
    dt.sort()
    return dt[n // 2], dt[int(0.9 * (n - 1))]


def rate(threads, secs):
    stop = time.perf_counter() + secs
    counts = [0] * threads

    def work(i):
        while time.perf_counter() < stop:
            trainplan.estimate(**PINNED)
            counts[i] += 1
    t0 = time.perf_counter()
    ts = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(counts) / (time.perf_counter() - t0)


def main():
    if os.environ.get("TRAINPLAN_PY_SKIP"):
        print("SKIP: %s" % os.environ["TRAINPLAN_PY_SKIP"])
        return 77
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 2.0
    t0 = time.perf_counter()
    trainplan.estimate(**PINNED)
    first = time.perf_counter() - t0
    pin = median_p90(lambda: trainplan.estimate(**PINNED), calls)
    comp = median_p90(lambda: trainplan.estimate(**COMPLETED), max(1, calls // 10))

    def fresh():
        with trainplan.Session() as s:
            s.estimate(**PINNED)
    fr = median_p90(fresh, 10)
    r1, r2 = rate(1, secs), rate(2, secs)
    print("py_session_speed: trainplan.estimate of gpt-neox-20b on 128 "
          "perlmutter GPUs (TP 4, PP 4), library %s" % trainplan.library_path())
    print("  first call (opens the session, fits):  %8.3f ms" % (1e3 * first))
    print("  a call, pinned layout:                 %8.3f ms median, %.3f ms "
          "p90 (%d calls)" % (1e3 * pin[0], 1e3 * pin[1], calls))
    print("  a call, TP/PP only (13,200 layouts):   %8.3f ms median, %.3f ms "
          "p90 (%d calls)" % (1e3 * comp[0], 1e3 * comp[1], max(1, calls // 10)))
    print("  a call on a fresh session each time:   %8.3f ms median (10 calls)"
          % (1e3 * fr[0]))
    print("  1 thread:                              %8.0f calls/s" % r1)
    print("  2 threads:                             %8.0f calls/s (%.2f x 1 "
          "thread)" % (r2, r2 / r1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
