#!/usr/bin/env python3
"""Predicts every Megatron-Core run of a runs CSV (data/calibration/published_runs.csv by default)
typed as a user copies it from the publisher's table: `commscale step` with the table's columns
alone (GPUs, TP, PP, CP, VP, EP, MBS, GBS, sequence length, precision; FSDP as --zero 3; Llama 3.1
405B's --account-for-*-in-pipeline-split, which the refusal names) and the framework's defaults for
the rest, beside the same run with the recipe settings the CSV records (`commscale accuracy`).
What is left between the two columns is what the defaults cannot know from a table.

usage: python3 tools/typed_as_published.py [build/bin/commscale] [RUNS.csv]
"""
import csv
import json
import os
import statistics
import subprocess
import sys

cli = sys.argv[1] if len(sys.argv) > 1 else "build/bin/commscale"
path = sys.argv[2] if len(sys.argv) > 2 else "data/calibration/published_runs.csv"
base = os.path.dirname(path)
with open(path) as f:
    rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
recorded = json.loads(subprocess.run([cli, "accuracy", path, "--json"], capture_output=True, text=True, check=True).stdout)["runs"]
typed_errors, recorded_errors, not_fitting = [], [], []
for r, a in zip(rows, recorded):
    if r.get("framework", "megatron-core") != "megatron-core" or r.get("not_expressible"):
        continue
    model = r["model"] if not r["model"].endswith(".json") else os.path.join(base, r["model"])
    args = [cli, "step", "--model", model, "--cluster", r["cluster"], "--gpus", r["gpus"], "--tp", r["tp"], "--pp", r["pp"],
            "--cp", r["cp"] or "1", "--micro-batch", r["micro_batch"], "--global-batch", r["global_batch"], "--seq", r["seq"],
            "--dtype", r["dtype"], "--json"]
    if r.get("ep", "1") not in ("", "1"):
        args += ["--ep", r["ep"]]
    if r.get("virtual_stages", "1") not in ("", "1"):
        args += ["--virtual-stages", r["virtual_stages"]]
    if r.get("zero") == "3":
        args += ["--zero", "3"]
    if r.get("account_for_embedding_in_pipeline_split") == "true":
        args += ["--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split"]
    p = subprocess.run(args, capture_output=True, text=True)
    name = r.get("name") or r["model"]
    if p.returncode != 0:
        print(f"{name[:44]:44s} refused: {p.stderr.strip()}")
        continue
    d = json.loads(p.stdout)
    e = d["tokens_per_s"] / int(r["gpus"]) / float(r["tokens_per_s_per_gpu"]) - 1
    typed_errors.append(abs(e))
    recorded_errors.append(abs(a["rel_error"]))
    if not d["fits_in_memory"]:
        not_fitting.append(f"{name} ({d['memory_per_gpu_GiB']:.1f} of {d['memory_capacity_GiB']:.0f} GiB)")
    print(f"{name[:44]:44s} typed {100 * e:+6.1f}%   with the recipe's settings {100 * a['rel_error']:+6.1f}%"
          f"{'' if d['fits_in_memory'] else '   does not fit'}")
print(f"{len(typed_errors)} runs: median |error| typed {100 * statistics.median(typed_errors):.1f}%, "
      f"with the recipes' settings {100 * statistics.median(recorded_errors):.1f}%")
print("typed, predicted not to fit: " + ("; ".join(not_fitting) or "none"))
