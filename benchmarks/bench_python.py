#!/usr/bin/env python3
"""Per-call cost of the Python module: `commscale.step` calls per second (target: at least 50,000,
issue 15), against the C++ predictor's own cost (bench_step) the difference is the binding's and
the CLI contract's (flag parsing, JSON document, conversion to dicts).

    PYTHONPATH=build/python python3 benchmarks/bench_python.py [seconds]"""

import sys
import time

import commscale as cs


def rate(label, call, seconds):
    call()  # warm: presets and interned names
    n, start = 0, time.perf_counter()
    while True:
        for _ in range(1000):
            call()
        n += 1000
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    per_s = n / elapsed
    print(f"{label:<44} {per_s:10.0f} calls/s  {1e6 / per_s:7.2f} us/call")
    return per_s


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    rate("step (demo: GPT-3 175B on 16 DGX A100)", lambda: cs.step(), seconds)
    rate("step (llama3-70b, dgx-h100 x 8, tp 8 pp 2)",
         lambda: cs.step("llama3-70b", "dgx-h100", nodes=8, tp=8, pp=2, micro_batch=1, global_batch=512, seq=8192),
         seconds)
    rate("collective (all_reduce 1 GiB on 4 x dgx-h100)",
         lambda: cs.collective("dgx-h100", "all_reduce", 1 << 30, nodes=4), seconds)


if __name__ == "__main__":
    main()
