#!/usr/bin/env python3
"""py_session_speed.py - one estimate from Python on the process's session,
and two threads against one (issue 32: at most 1 ms a call, median of
1,000; two threads at least 1.8 x one thread's calls per second on 2
cores).

    py_session_speed.py [CALLS] [SECONDS] [ROUNDS]    defaults 1000, 1, 5

The library as the package finds it (TRAINPLAN_LIB, or the build directory
beside python/), and the package's C module beside it where the build
made one (python/speedups.c; TRAINPLAN_NO_SPEEDUPS=1 runs without it).
The calls measured:
  estimate_struct  the main figures as a plain struct (EstimateResult), no
                   JSON out. Through the C module the GIL is held only to
                   read the keywords; the request's JSON is written and the
                   library called without it
  ... by ctypes    the same call without the C module (where there is
                   one): the request's JSON made by the json module and
                   passed through ctypes, both under the GIL
  estimate_structs the same for a list of 64 requests in one call: the GIL
                   released once for all of them (figures per estimate)
  estimate         the dict of the command's JSON (made by the library,
                   decoded here under the GIL)
For each: the median and 90th percentile of CALLS calls of a pinned layout,
and the binding's share of a call: the call minus the library's own time
for an estimate (a 64th of a call of 64 requests made beforehand), each
the fastest of 20 batches' mean (a batch a twentieth of CALLS calls, the
two alternating), so that other processes' load, which slows some batches,
cancels. Then calls per second of 1 and 2 threads on the session, ROUNDS
rounds of SECONDS each, 1 and 2 threads alternating and the calls taking
turns within a round, and the median of the rounds' ratios (a shared
machine's load moves from one second to the next; the ratio of
neighbouring rounds is steadier than two long runs, and the lists' ratio,
which holds the GIL once for 64 estimates, says what the machine gave two
threads in the same rounds). Also:
the first call (the session opens, the models load or fit), an estimate
the library completes over 13,200 layouts, a call on a fresh session each
time.

Why the C module, and lists: a single estimate_struct takes about 0.012
ms; two threads making such calls contend for the GIL at every call (each
waits for the other's Python, and a thread woken for the GIL is slow to
run again). Through ctypes a third of the call holds the GIL (the json
module, ctypes' marshalling) and two threads gave 0.9-1.65 x one; the C
module holds it for about 0.3 us of C and the package's own Python. With
64 estimates a call the GIL changes hands 64 times less often.
"""
import ctypes
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
BATCH = [PINNED] * 64
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


def best_batches(fs, n):
    """For each f of fs, the fastest of 20 batches' mean time of f (n // 20
    calls a batch), the batches of the fs alternating so that each sees
    the same moments of the machine's load."""
    k = max(1, n // 20)
    best = [float("inf")] * len(fs)
    for _ in range(20):
        for i, f in enumerate(fs):
            t0 = time.perf_counter()
            for _ in range(k):
                f()
            best[i] = min(best[i], (time.perf_counter() - t0) / k)
    return best


def rate(call, threads, secs):
    """Calls per second of `threads` threads calling call() for secs."""
    stop = time.perf_counter() + secs
    counts = [0] * threads

    def work(i):
        n = 0
        while time.perf_counter() < stop:
            call()
            n += 1
        counts[i] = n
    t0 = time.perf_counter()
    ts = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(counts) / (time.perf_counter() - t0)


def scaling(ways, secs, rounds):
    """For each (call, C module or None) of ways: the medians of its
    1-thread and 2-thread rates and of their ratios over rounds of (1
    thread, 2 threads). The ways take turns within each round, so that a
    moment of other load falls on all of them alike."""
    r1 = [[] for _ in ways]
    r2 = [[] for _ in ways]
    ratio = [[] for _ in ways]
    for _ in range(rounds):
        for i, (call, sp) in enumerate(ways):
            trainplan._speedups = sp
            a, b = rate(call, 1, secs), rate(call, 2, secs)
            r1[i].append(a)
            r2[i].append(b)
            ratio[i].append(b / a)
    med = lambda v: sorted(v)[len(v) // 2]  # noqa: E731
    return [(med(r1[i]), med(r2[i]), med(ratio[i]), min(ratio[i]), max(ratio[i]))
            for i in range(len(ways))]


def library_alone(s):
    """The library calls alone, their arguments made once: what a call
    costs with the GIL released."""
    lib = trainplan._lib
    body = trainplan._body(PINNED)
    err = ctypes.c_void_p()
    out = ctypes.c_void_p()
    handle = s._live()
    k = len(BATCH)
    many = trainplan._body(BATCH)
    rs, st = (trainplan.EstimateResult * k)(), (ctypes.c_int * k)()
    msgs, n = (ctypes.c_void_p * k)(), ctypes.c_int()

    def many_call():
        lib.tp_session_estimate_many_json(handle, many, rs, st, msgs, k,
                                          ctypes.byref(n), ctypes.byref(err))

    def json_call():
        lib.tp_session_call_json(handle, b"estimate", body, ctypes.byref(out),
                                 ctypes.byref(err))
        lib.tp_free(out)
    return many_call, json_call


def main():
    if os.environ.get("TRAINPLAN_PY_SKIP"):
        print("SKIP: %s" % os.environ["TRAINPLAN_PY_SKIP"])
        return 77
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    t0 = time.perf_counter()
    trainplan.estimate(**PINNED)
    first = time.perf_counter() - t0
    s = trainplan._session()
    many_alone, json_alone = library_alone(s)
    k = len(BATCH)
    # (name, call, the library call alone, estimates a call)
    fast = trainplan._speedups
    one = lambda: trainplan.estimate_struct(**PINNED)  # noqa: E731
    # (name, call, the library call alone and the estimates it makes,
    # estimates a call, the C module or None). A single estimate's library
    # time is a 64th of the list's call: its requests made beforehand, no
    # binding's marshalling in it (ctypes' own would count as the
    # library's if timed through ctypes).
    ways = [("estimate_struct", one, (many_alone, k), 1, fast)]
    if fast is not None:
        ways.append(("  ... by ctypes", one, (many_alone, k), 1, None))
    ways += [("estimate_structs", lambda: trainplan.estimate_structs(BATCH),
              (many_alone, 1), k, fast),
             ("estimate (dict)", lambda: trainplan.estimate(**PINNED),
              (json_alone, 1), 1, fast)]
    rows = []
    for name, call, (alone, alone_per), per, sp in ways:
        trainplan._speedups = sp
        call()
        n = max(1, calls // per)
        pin = median_p90(call, n)
        whole, lib = best_batches((call, alone), max(20, n))
        lib /= alone_per
        held = max(0.0, whole - lib)
        rows.append((name, call, per, n, (pin[0] / per, pin[1] / per),
                     (held / per, held / whole), sp))
    trainplan._speedups = fast
    comp = median_p90(lambda: trainplan.estimate_struct(**COMPLETED),
                      max(1, calls // 10))

    def fresh():
        with trainplan.Session() as f:
            f.estimate_struct(**PINNED)
    fr = median_p90(fresh, 10)
    print("py_session_speed: an estimate of gpt-neox-20b on 128 perlmutter "
          "GPUs (TP 4, PP 4), library %s" % trainplan.library_path())
    print("  estimate_struct's C module: %s" % (trainplan.speedups() or
          "none (no CPython headers at build time, or TRAINPLAN_NO_SPEEDUPS): ctypes"))
    print("  first call (opens the session, loads or fits): %8.3f ms"
          % (1e3 * first))
    for name, call, per, n, pin, (held, share), sp in rows:
        print("  %-16s pinned: %8.3f ms median, %.3f ms p90 an estimate "
              "(%d calls of %d); %.3f ms of it the binding's (%.0f %%)"
              % (name, 1e3 * pin[0], 1e3 * pin[1], n, per, 1e3 * held,
                 100 * share))
    print("  estimate_struct, TP/PP only (13,200 layouts): %8.3f ms median "
          "(%d calls)" % (1e3 * comp[0], max(1, calls // 10)))
    print("  estimate_struct on a fresh session each time: %8.3f ms median "
          "(10 calls)" % (1e3 * fr[0]))
    scaled = scaling([(row[1], row[6]) for row in rows], secs, rounds)
    for (name, call, per, n, pin, held, sp), (r1, r2, ratio, lo, hi) in zip(rows, scaled):
        print("  %-16s 1 thread %7.0f estimates/s, 2 threads %7.0f: "
              "%.2f x (median of %d rounds of %g s; %.2f-%.2f)"
              % (name, per * r1, per * r2, ratio, rounds, secs, lo, hi))
    trainplan._speedups = fast
    return 0


if __name__ == "__main__":
    sys.exit(main())
