#!/usr/bin/env python3
"""Will Llama 3 70B scale to 64 nodes on slower NICs? A notebook-style what-if: the step time, the
MFU and the bottleneck of one plan on 64 DGX H100 nodes as the per-GPU NIC goes from 100 to 800 Gbps.

    PYTHONPATH=build/python python3 examples/python/nic_bandwidth_sweep.py [--no-plot] [--svg FILE]

Prints a table; with matplotlib installed (and without --no-plot) it also plots step time and MFU
against NIC bandwidth (to nic_bandwidth_sweep.png, or the file --png names). Uses only the standard
library and commscale: no pandas."""

import argparse
import sys

import commscale as cs

NICS = ["eth-100", "roce-200", "ib-hdr-4x", "ib-ndr-4x", "roce-800"]  # per-GPU NIC, 100..800 Gbps


def sweep(model="llama3-70b", cluster="dgx-h100", nodes=64):
    # one call for the whole sweep: a row per NIC (the other keywords are the same in every row)
    t = cs.steps(model, cluster, nodes=nodes, inter=NICS, tp=8, pp=4, micro_batch=1, global_batch=1024,
                 seq=8192, sequence_parallel=True, framework="megatron-core", arrays=False)
    gbps = [cs.link(nic)["per_direction_GBps"] * 8 for nic in NICS]
    return list(zip(gbps, NICS, t["step_s"], t["mfu"], t["dp_comm_exposed_s"], t["bottleneck"]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-plot", action="store_true", help="print the table only")
    ap.add_argument("--png", default="nic_bandwidth_sweep.png", help="where to save the plot")
    args = ap.parse_args(argv)

    rows = sweep()
    print(f"{'NIC Gbps':>8}  {'link':<10} {'step s':>8} {'MFU':>6} {'DP exposed s':>13}  bottleneck")
    for gbps, nic, step_s, mfu, dp_s, verdict in rows:
        print(f"{gbps:8.0f}  {nic:<10} {step_s:8.3f} {100 * mfu:5.1f}% {dp_s:13.3f}  {verdict}")

    if args.no_plot:
        return 0
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib is not installed: no plot)", file=sys.stderr)
        return 0
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot([r[0] for r in rows], [r[2] for r in rows], marker="o", label="step time (s)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("NIC bandwidth per GPU (Gbps)")
    ax.set_ylabel("step time (s)")
    ax2 = ax.twinx()
    ax2.plot([r[0] for r in rows], [100 * r[3] for r in rows], color="tab:orange", marker="s", label="MFU (%)")
    ax2.set_ylabel("MFU (%)")
    ax.set_title("llama3-70b on 64 x dgx-h100, TP 8 x PP 4")
    fig.tight_layout()
    fig.savefig(args.png, dpi=120)
    print(f"plot: {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
