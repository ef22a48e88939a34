"""The Python module against the command line: every function returns exactly the command's --json
document (parity), invalid input raises ValueError with the CLI's message, dicts round-trip as
models and clusters, plan leaves the GIL to other threads, and the example script runs.

Run by ctest with PYTHONPATH=build/python, COMMSCALE_CLI=build/bin/commscale and
COMMSCALE_SOURCE_DIR set (tests/CMakeLists.txt)."""

import json
import os
import pathlib
import subprocess
import sys
import threading

import pytest

import commscale as cs

CLI = os.environ.get("COMMSCALE_CLI", "build/bin/commscale")
SOURCE = pathlib.Path(os.environ.get("COMMSCALE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
DATA = SOURCE / "data"
FIXTURES = SOURCE / "tests" / "data"


def cli_json(*argv):
    """What `commscale ARGV... --json` prints, parsed."""
    p = subprocess.run([CLI, *argv, "--json"], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def cli_error(*argv):
    """The one line `commscale ARGV... --json` prints on stderr for invalid input (exit 2)."""
    p = subprocess.run([CLI, *argv, "--json"], capture_output=True, text=True, check=False)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert p.stdout == ""
    return p.stderr.rstrip("\n")


# Each function with keyword arguments, and the command line a user would type for the same thing.
PARITY = [
    ("links", lambda: cs.links(), ["links"]),
    ("link", lambda: cs.link("ib-ndr-4x"), ["link", "ib-ndr-4x"]),
    ("accelerators", lambda: cs.accelerators(), ["accelerators"]),
    ("accelerator", lambda: cs.accelerator("h100-sxm"), ["accelerator", "h100-sxm"]),
    ("clusters", lambda: cs.clusters(), ["clusters"]),
    ("cluster", lambda: cs.cluster("dgx-h100", nodes=4), ["cluster", "dgx-h100", "--nodes", "4"]),
    ("cluster gpus+flags", lambda: cs.cluster("dgx-a100", gpus=32, inter="ib-ndr-4x"),
     ["cluster", "dgx-a100", "--gpus", "32", "--inter", "ib-ndr-4x"]),
    ("models", lambda: cs.models(), ["models"]),
    ("model", lambda: cs.model("deepseek-v3", seq=4096), ["model", "deepseek-v3", "--seq", "4096"]),
    ("convert", lambda: cs.convert("400Gbps", "GB/s"), ["convert", "400Gbps", "GB/s"]),
    ("collective", lambda: cs.collective("dgx-h100", "all_reduce", "1GiB", nodes=4),
     ["collective", "--cluster", "dgx-h100", "--op", "all_reduce", "--bytes", "1GiB", "--nodes", "4"]),
    ("collective algo", lambda: cs.collective(op="all_gather", size=1 << 20, algo="ring", efficiency="ideal"),
     ["collective", "--op", "all_gather", "--bytes", "1048576", "--algo", "ring", "--efficiency", "ideal"]),
    ("sweep", lambda: cs.sweep("hgx-h200", op="reduce_scatter", min="1KiB", max="1GiB", factor=4, gpus=16),
     ["sweep", "--cluster", "hgx-h200", "--op", "reduce_scatter", "--min", "1KiB", "--max", "1GiB",
      "--factor", "4", "--gpus", "16"]),
    ("step default", lambda: cs.step(), ["step"]),
    ("step", lambda: cs.step("llama3-70b", "dgx-h100", nodes=8, tp=8, pp=2, micro_batch=1, global_batch=512,
                             seq=8192, sequence_parallel=True, recompute="selective", dp_overlap=False),
     ["step", "--model", "llama3-70b", "--cluster", "dgx-h100", "--nodes", "8", "--tp", "8", "--pp", "2",
      "--micro-batch", "1", "--global-batch", "512", "--seq", "8192", "--sequence-parallel",
      "--recompute", "selective", "--no-dp-overlap"]),
    ("step fsdp", lambda: cs.step("llama2-7b", "dgx-a100", nodes=4, framework="fsdp", zero=3, micro_batch=2,
                                  global_batch=256, compute_efficiency=0.55),
     ["step", "--model", "llama2-7b", "--cluster", "dgx-a100", "--nodes", "4", "--framework", "fsdp",
      "--zero", "3", "--micro-batch", "2", "--global-batch", "256", "--compute-efficiency", "0.55"]),
    ("step moe", lambda: cs.step("mixtral-8x7b", "dgx-h100", gpus=64, tp=2, ep=8, pp=2, micro_batch=1,
                                 global_batch=256, seq=4096, dtype="fp8"),
     ["step", "--model", "mixtral-8x7b", "--cluster", "dgx-h100", "--gpus", "64", "--tp", "2", "--ep", "8",
      "--pp", "2", "--micro-batch", "1", "--global-batch", "256", "--seq", "4096", "--dtype", "fp8"]),
    ("scale", lambda: cs.scale("llama3-8b", "dgx-h100", nodes=[1, 2, 4, 8], tp=2, micro_batch=2, global_batch=512),
     ["scale", "--model", "llama3-8b", "--cluster", "dgx-h100", "--nodes", "1,2,4,8", "--tp", "2",
      "--micro-batch", "2", "--global-batch", "512"]),
    ("capacity", lambda: cs.capacity(params=70e9, tokens=15e12, accelerator="h100-sxm", utilization=0.4, weeks=8),
     ["capacity", "--params", "70000000000.0", "--tokens", "15000000000000.0", "--accelerator", "h100-sxm",
      "--utilization", "0.4", "--weeks", "8"]),
    ("capacity model", lambda: cs.capacity("llama3-8b", "dgx-h100", tokens="1T", days=7, price_per_gpu_hour=2),
     ["capacity", "--model", "llama3-8b", "--cluster", "dgx-h100", "--tokens", "1T", "--days", "7",
      "--price-per-gpu-hour", "2"]),
    ("plan", lambda: cs.plan("llama2-13b", "dgx-a100", gpus=64, global_batch=512, top=5, threads=1),
     ["plan", "--model", "llama2-13b", "--cluster", "dgx-a100", "--gpus", "64", "--global-batch", "512",
      "--top", "5", "--threads", "1"]),
    ("fit", lambda: cs.fit(str(DATA / "measurements" / "dgx_a100_8gpu_allreduce_ml_engineering.log")),
     ["fit", str(DATA / "measurements" / "dgx_a100_8gpu_allreduce_ml_engineering.log")]),
    ("fit short", lambda: cs.fit([DATA / "measurements" / "dgx_a100_8gpu_allreduce_4sizes.log"], op="all_reduce"),
     ["fit", str(DATA / "measurements" / "dgx_a100_8gpu_allreduce_4sizes.log"), "--op", "all_reduce"]),
    ("fit-step", lambda: cs.fit_step(DATA / "measurements" / "nemo_llama31_h100_runs.csv", cluster="dgx-h100"),
     ["fit-step", str(DATA / "measurements" / "nemo_llama31_h100_runs.csv"), "--cluster", "dgx-h100"]),
    ("accuracy", lambda: cs.accuracy(DATA / "measurements" / "nemo_llama31_h100_runs.csv", cluster="dgx-h100"),
     ["accuracy", str(DATA / "measurements" / "nemo_llama31_h100_runs.csv"), "--cluster", "dgx-h100"]),
    ("fit-compute", lambda: cs.fit_compute(DATA / "calibration" / "published_runs.csv", no_cross_validation=True),
     ["fit-compute", str(DATA / "calibration" / "published_runs.csv"), "--no-cross-validation"]),
]


def _without_timing(doc):
    """plan's search_s is a wall-clock measurement: the one key two runs cannot share."""
    if isinstance(doc, dict):
        return {k: _without_timing(v) for k, v in doc.items() if k != "search_s"}
    if isinstance(doc, list):
        return [_without_timing(v) for v in doc]
    return doc


@pytest.mark.parametrize("name,call,argv", PARITY, ids=[p[0] for p in PARITY])
def test_parity_with_the_cli_json(name, call, argv):
    assert _without_timing(call()) == _without_timing(cli_json(*argv))


def test_every_command_has_a_function():
    # the functions of the module cover the commands of the CLI's --help listing
    p = subprocess.run([CLI, "--help"], capture_output=True, text=True, check=True)
    commands = [line.split()[0] for line in p.stdout.splitlines() if line.startswith("  ")]
    assert len(commands) >= 15
    for c in commands:
        if c == "plan-merge":
            continue  # merges shard files; cs.run("plan-merge", ...) covers it
        assert hasattr(cs, c.replace("-", "_")), c


def test_capacity_against_the_datasheet():
    # 6 P D FLOPs (Kaplan et al. 2020) at 40% of the H100 SXM's dense BF16 peak, 989.5 TFLOPS
    # (NVIDIA H100 datasheet: 1,979 TFLOPS with sparsity, halved), for 8 weeks
    r = cs.capacity(params=70e9, tokens=15e12, accelerator="h100-sxm", utilization=0.4, weeks=8)
    flops = 6 * 70e9 * 15e12
    assert r["total_flops"] == pytest.approx(flops, rel=1e-12)
    per_gpu = 1979e12 / 2 * 0.4 * 8 * 7 * 86400
    assert r["gpus_needed"] == -(-flops // per_gpu)  # ceil


def test_capacity_from_the_model():
    # Llama 3 70B, 15T tokens in 30 days on DGX H100 nodes: the count, its plan and the time; a
    # cluster passed as a dict answers the same; 15T and 15e12 are one count
    r = cs.capacity("llama3-70b", "dgx-h100", tokens="15T", days=30)
    assert r["mode"] == "model" and r["gpus"] % 8 == 0
    assert r["failure_free_time_s"] <= r["time_s"] <= 30 * 86400
    p = r["plan"]
    assert p["tp"] * p["pp"] * p["dp"] * p["cp"] == r["gpus"]
    again = cs.capacity(model="llama3-70b", cluster=cs.cluster("dgx-h100"), tokens=15e12, days=30)
    assert again["gpus"] == r["gpus"] and again["time_s"] == r["time_s"]
    with pytest.raises(ValueError, match="--mtbf"):
        cs.capacity("llama3-70b", "dgx-h100", tokens="15T", days=30, mtbf="-1h")


def test_step_demo_is_the_readme_layout():
    r = cs.step()
    assert r["gpus"] == 128 and r["plan"]["tp"] == 8 and r["plan"]["pp"] == 8 and r["plan"]["dp"] == 2
    assert r["bottleneck"] in {"compute", "tp_comm", "pp_comm", "dp_comm", "bubble", "memory"}
    assert r["step_s"] > r["compute_s"] > 0


def test_step_reports_megatrons_model_flops():
    # Llama 3 8B at 8192 tokens, TP 1: Megatron-Bridge 25.11 published 744 Model TFLOP/sec/GPU at
    # 14451 tokens/s/GPU on 8 H100 (calibration set): 51.48 GFLOP per token; Megatron's terms 51.470.
    r = cs.step("llama3-8b", "dgx-h100", nodes=1, tp=1, micro_batch=1, global_batch=128, seq=8192, dtype="fp8")
    assert r["megatron_model_flops_per_token"] == pytest.approx(744e12 / 14451, rel=4e-4)
    assert r["megatron_tflops_per_gpu"] == pytest.approx(
        r["tokens_per_s"] / r["gpus"] * r["megatron_model_flops_per_token"] / 1e12, rel=1e-12)


def test_convert_is_the_decimal_rate():
    assert cs.convert("400Gbps", "GB/s")["result"] == pytest.approx(50.0)


def test_sizes_and_rates_as_strings_or_numbers():
    assert cs.collective(op="all_reduce", size="1GiB") == cs.collective(op="all_reduce", size=1 << 30)
    assert cs.collective(op="all_reduce", size="1GB") == cs.collective(op="all_reduce", size=10 ** 9)


def test_dicts_round_trip_as_model_and_cluster():
    m, c = cs.model("llama3-8b"), cs.cluster("dgx-h100", nodes=2)
    by_dict = cs.step(m, c, tp=2, micro_batch=1, global_batch=64)
    by_name = cs.step("llama3-8b", "dgx-h100", nodes=2, tp=2, micro_batch=1, global_batch=64)
    # the same step; only the cluster's name differs (--nodes on step marks a preset as changed)
    assert by_dict["cluster"] == "dgx-h100" and by_name["cluster"] == "dgx-h100+flags"
    del by_dict["cluster"], by_name["cluster"]
    assert by_dict == by_name
    # a hand-written cluster dict in the CLI.md schema
    pod = {"name": "my-pod", "nodes": 4, "gpus_per_node": 8, "accelerator": "h100-sxm",
           "intra": {"link": "nvlink4", "fabric": "switch"},
           "inter": {"link": "ib-ndr-4x", "nics_per_node": 8, "oversubscription": 1.0}}
    r = cs.collective(pod, "all_reduce", "256MiB")
    assert r["ranks"] == 32 and r["nodes"] == 4


def test_config_json_dict_as_model():
    with open(SOURCE / "data" / "models" / "llama2-7b.json", encoding="utf-8") as f:
        config = json.load(f)
    assert cs.model(config)["parameters"] == cs.model("llama2-7b")["parameters"]


ERRORS = [
    (lambda: cs.step(tp=3), ["step", "--tp", "3"]),
    (lambda: cs.step(model="llama9-7b"), ["step", "--model", "llama9-7b"]),
    (lambda: cs.step(micro_batchh=2), ["step", "--micro-batchh", "2"]),
    (lambda: cs.collective(op="all_reduce", size="1Gbps"), ["collective", "--op", "all_reduce", "--bytes", "1Gbps"]),
    (lambda: cs.collective(op="allreduce", size=1024), ["collective", "--op", "allreduce", "--bytes", "1024"]),
    (lambda: cs.cluster("dgx-h100", gpus=12), ["cluster", "dgx-h100", "--gpus", "12"]),
    (lambda: cs.cluster("dgx-h100", nodes=-1), ["cluster", "dgx-h100", "--nodes", "-1"]),
    (lambda: cs.capacity(flops=float("nan"), peak_tflops=1000, utilization=0.4, weeks=1),
     ["capacity", "--flops", "nan", "--peak-tflops", "1000", "--utilization", "0.4", "--weeks", "1"]),
    (lambda: cs.fit(str(FIXTURES / "does-not-exist.log")), ["fit", str(FIXTURES / "does-not-exist.log")]),
    (lambda: cs.plan("llama2-7b", gpus=0, global_batch=8), ["plan", "--model", "llama2-7b", "--gpus", "0",
                                                              "--global-batch", "8"]),
]


@pytest.mark.parametrize("call,argv", ERRORS, ids=[" ".join(e[1]) for e in ERRORS])
def test_invalid_input_raises_value_error_with_the_cli_message(call, argv):
    expected = cli_error(*argv)
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value) == expected
    assert expected.startswith("commscale: ")


def test_bad_dicts_name_the_field():
    with pytest.raises(ValueError, match=r"--cluster\.gpus_per_node"):
        cs.collective({"name": "x", "nodes": 1, "intra": {"link": "nvlink4"}}, "all_reduce", 1024)
    with pytest.raises(ValueError, match=r"--model"):
        cs.step({"model_type": "llama", "hidden_size": -4})


def test_plan_leaves_the_gil_to_other_threads():
    # While plan searches in one thread, this thread keeps running Python: with the GIL held for the
    # whole search it could not count at all until the search returned.
    done, count = [], 0
    t = threading.Thread(target=lambda: done.append(
        cs.plan("llama3-70b", "dgx-h100", gpus=512, global_batch=1024, top=3, threads=1)))
    t.start()
    while t.is_alive():
        count += 1
    t.join()
    assert done and done[0]["plans"], done
    assert done[0]["evaluated"] > 1000
    assert count > 1000


def test_files_written_by_fit_are_read_back(tmp_path):
    out = tmp_path / "fitted.json"
    svg = tmp_path / "fit.svg"
    r = cs.fit(DATA / "measurements" / "dgx_a100_8gpu_allreduce_ml_engineering.log", out=out, svg=svg)
    assert out.exists() and "<svg" in svg.read_text()
    # the calibrated cluster reproduces the measured table it was fitted to within the fit's own error
    assert r["median_rel_error"] < 0.10
    back = cs.collective(str(out), "all_reduce", "1GiB")
    assert back["ranks"] == 8


def test_example_script_runs_without_matplotlib():
    script = SOURCE / "examples" / "python" / "nic_bandwidth_sweep.py"
    env = dict(os.environ, MPLBACKEND="Agg")
    p = subprocess.run([sys.executable, str(script), "--no-plot"], capture_output=True, text=True, env=env,
                       check=False)
    assert p.returncode == 0, p.stderr
    lines = [line for line in p.stdout.splitlines() if line.strip()]
    assert lines[0].split()[:2] == ["NIC", "Gbps"]
    assert len(lines) >= 6


def test_readme_python_listing_prints_what_the_readme_shows():
    # README "From Python": the python block, run, prints the block that follows it
    text = (SOURCE / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## From Python"):]
    code = section[section.index("```python\n") + len("```python\n"):]
    code, rest = code[:code.index("```\n")], code[code.index("```\n") + 4:]
    shown = rest[rest.index("```\n") + 4:]
    shown = shown[:shown.index("```\n")]
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    assert p.stdout == shown


def test_plan_block_recompute_keyword():
    # plan's --no-block-recompute as a keyword: Llama 3 70B in FP8 on 64 H100 at 8,192 tokens has
    # plans that fit only with part of their layers recomputed (tests/cli/cli_plan.cpp)
    kw = dict(global_batch=128, seq=8192, dtype="fp8", max_virtual_stages=5, top=200, threads=1)
    with_block = cs.plan("llama3-70b", "dgx-h100", gpus=64, **kw)
    without = cs.plan("llama3-70b", "dgx-h100", gpus=64, no_block_recompute=True, **kw)
    assert with_block["space"]["block_recompute"] is True
    assert without["space"]["block_recompute"] is False
    assert any(p.get("recompute_method") == "block" for p in with_block["plans"])
    assert not any("recompute_method" in p for p in without["plans"])
    assert with_block["plans"][0]["step_s"] <= without["plans"][0]["step_s"]


def test_plan_cpu_offloading_keyword():
    # plan's --no-cpu-offloading as a keyword: Llama 3 70B in FP8 on 64 GB200 is fastest with
    # activations offloaded over NVLink-C2C, as Megatron-Bridge's recipe runs it
    kw = dict(global_batch=256, seq=8192, dtype="fp8", top=20, threads=1)
    with_offload = cs.plan("llama3-70b", "gb200-nvl72", gpus=64, **kw)
    without = cs.plan("llama3-70b", "gb200-nvl72", gpus=64, no_cpu_offloading=True, **kw)
    assert with_offload["space"]["cpu_offloading"] is True
    assert without["space"]["cpu_offloading"] is False
    assert with_offload["plans"][0].get("cpu_offloading_num_layers", 0) > 0
    assert not any("cpu_offloading_num_layers" in p for p in without["plans"])
    assert with_offload["plans"][0]["step_s"] < without["plans"][0]["step_s"]
