#!/usr/bin/env python3
"""What the Python module costs per call and per row, against the C++ predictor's own cost
(bench_step: about 0.55 us a step):

* name-based calls: ``cs.step("llama3-70b", "dgx-h100", nodes=8, ...)`` in a loop (the keywords are
  read as a row of the CLI's options; the model and cluster looked up by name on every call);
* handle-based calls: ``m = cs.model(...)``, ``c = cs.cluster(...)`` parsed once, then
  ``cs.step(m, c, ...)`` in a loop (target: at least 50,000 calls/s);
* command lines: ``cs.run("step", ...)`` (CLI11 parsing the flags, as every other command does);
* batches: ``cs.steps`` and ``cs.collectives`` over 100,000 rows on 1 and 2 threads (target: at least
  1,000,000 rows/s on 2 threads), checked row by row against single calls on a sample.

Each figure is the best of `repeats` runs (default 3). Prints the load average beside the figures:
timings taken on a busy machine are not the module's.

    PYTHONPATH=build/python python3 benchmarks/bench_python.py [seconds-per-loop] [repeats]"""

import math
import os
import sys
import time

import commscale as cs

try:
    import numpy
except ImportError:
    numpy = None

ROWS = 100_000


def calls_per_second(call, seconds):
    call()  # warm: presets and interned names
    n, start = 0, time.perf_counter()
    while True:
        for _ in range(1000):
            call()
        n += 1000
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return n / elapsed


def best(measure, repeats):
    return max(measure() for _ in range(repeats))


def report_calls(label, call, seconds, repeats):
    per_s = best(lambda: calls_per_second(call, seconds), repeats)
    print(f"{label:<58} {per_s:12,.0f} calls/s {1e6 / per_s:8.2f} us/call")
    return per_s


def report_rows(label, run, rows, repeats):
    def once():
        start = time.perf_counter()
        run()
        return rows / (time.perf_counter() - start)

    run()  # warm
    per_s = best(once, repeats)
    print(f"{label:<58} {per_s:12,.0f} rows/s  {1e3 * rows / per_s:8.1f} ms/{rows:,} rows")
    return per_s


def step_grid(rows):
    """A what-if grid on Llama 3 70B and 16 DGX H100 nodes: TP, PP, micro-batch, global batch,
    sequence length and recompute varied together, `rows` rows (some plans do not fit in memory;
    every row is a valid plan)."""
    tp, pp, mb, gb, seq, rc = [], [], [], [], [], []
    while len(tp) < rows:
        for t in (1, 2, 4, 8):
            for p in (1, 2, 4, 8):
                for m in (1, 2):
                    for g in (512, 1024, 2048):
                        for s in (2048, 4096, 8192):
                            for r in ("none", "selective", "full"):
                                tp.append(t), pp.append(p), mb.append(m), gb.append(g), seq.append(s), rc.append(r)
    grid = dict(tp=tp[:rows], pp=pp[:rows], micro_batch=mb[:rows], global_batch=gb[:rows], seq=seq[:rows],
                recompute=rc[:rows])
    if numpy is not None:
        grid = {k: numpy.asarray(v) for k, v in grid.items()}
    return grid


def same(a, b):
    return a == b or (a is None and isinstance(b, float) and math.isnan(b)) or \
        (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def check_rows(table, single, rows, sample=200):
    """Every `rows // sample`-th row of a batch equals the single call's document key by key."""
    for i in range(0, rows, max(1, rows // sample)):
        doc = single(i)
        for key, column in table.items():
            if key == "error" or "." in key or key not in doc:
                continue
            value = column[i].item() if hasattr(column[i], "item") else column[i]
            assert same(doc[key], value), (i, key, doc[key], value)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"commscale {cs.__version__}, Python {sys.version.split()[0]}, NumPy {numpy.__version__ if numpy else 'absent'}, "
          f"{os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")

    plan = dict(tp=8, pp=2, micro_batch=1, global_batch=512, seq=8192)
    m = cs.model("llama3-70b")
    c = cs.cluster("dgx-h100", nodes=2)
    c8 = cs.cluster("dgx-h100", nodes=8)
    report_calls("step by name (llama3-70b, dgx-h100 x 8, tp 8 pp 2)",
                 lambda: cs.step("llama3-70b", "dgx-h100", nodes=8, **plan), seconds, repeats)
    report_calls("step with handles (m, c = cs.model(), cs.cluster(nodes=2))",
                 lambda: cs.step(m, c, tp=8, pp=1, micro_batch=1, global_batch=64, seq=8192), seconds, repeats)
    report_calls("step as a command line (cs.run('step', ...))",
                 lambda: cs.run("step", "--model", "llama3-70b", "--cluster", "dgx-h100", "--nodes", "8", "--tp", "8",
                                "--pp", "2", "--micro-batch", "1", "--global-batch", "512", "--seq", "8192"),
                 seconds, repeats)
    report_calls("step demo (GPT-3 175B on 16 DGX A100)", lambda: cs.step(), seconds, repeats)
    report_calls("collective by name (all_reduce 1 GiB, 4 x dgx-h100)",
                 lambda: cs.collective("dgx-h100", "all_reduce", 1 << 30, nodes=4), seconds, repeats)
    report_calls("collective with a handle (all_reduce 1 GiB, 8 x dgx-h100)",
                 lambda: cs.collective(c8, "all_reduce", 1 << 30), seconds, repeats)

    c16 = cs.cluster("dgx-h100", nodes=16)
    grid = step_grid(ROWS)
    for threads in (1, 2):
        report_rows(f"steps, {ROWS:,} rows (llama3-70b, 16 x dgx-h100), {threads} thread(s)",
                    lambda: cs.steps(m, c16, threads=threads, **grid), ROWS, repeats)
    table = cs.steps(m, c16, **grid)
    assert all(e is None for e in table["error"])
    check_rows(table, lambda i: cs.step(m, c16, **{k: v[i].item() if hasattr(v[i], "item") else v[i]
                                                    for k, v in grid.items()}), ROWS)

    sizes = [1 << (10 + i % 21) for i in range(ROWS)]  # 1 KiB .. 1 GiB
    if numpy is not None:
        sizes = numpy.asarray(sizes)
    for threads in (1, 2):
        report_rows(f"collectives, {ROWS:,} sizes (all_reduce, 8 x dgx-h100), {threads} thread(s)",
                    lambda: cs.collectives(c8, "all_reduce", sizes, threads=threads), ROWS, repeats)
    table = cs.collectives(c8, "all_reduce", sizes)
    check_rows(table, lambda i: cs.collective(c8, "all_reduce", int(sizes[i])), ROWS)
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"(load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; batches equal single calls on the rows checked)")


if __name__ == "__main__":
    main()
