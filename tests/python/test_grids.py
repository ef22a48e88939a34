"""Models and clusters parsed once (cs.Model, cs.Cluster) and grids evaluated in one call
(cs.steps, cs.collectives) against single calls and the command line: every row of a grid equals
the single call with that row's values, key by key, and every single call equals what the CLI
prints; an invalid row reports the CLI's message and leaves the others alone.

Run by ctest with PYTHONPATH=build/python, COMMSCALE_CLI=build/bin/commscale and
COMMSCALE_SOURCE_DIR set (tests/CMakeLists.txt). The NumPy and pandas checks skip, saying so,
where those are not installed."""

import copy
import json
import math
import os
import pathlib
import pickle
import subprocess
import sys
import threading

import pytest

import commscale as cs

CLI = os.environ.get("COMMSCALE_CLI", "build/bin/commscale")
SOURCE = pathlib.Path(os.environ.get("COMMSCALE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
DATA = SOURCE / "data"

try:
    import numpy
except ImportError:
    numpy = None

needs_numpy = pytest.mark.skipif(numpy is None, reason="NumPy is not installed (Debian: python3-numpy)")


def cli_json(*argv):
    p = subprocess.run([CLI, *argv, "--json"], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def cli_error(*argv):
    p = subprocess.run([CLI, *argv, "--json"], capture_output=True, text=True, check=False)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    return p.stderr.rstrip("\n")


def flatten(doc, prefix=""):
    """A --json document's leaves under dotted keys (memory_breakdown_GiB.weights, plan.dp)."""
    out = {}
    for key, value in doc.items():
        if isinstance(value, dict):
            out.update(flatten(value, prefix + key + "."))
        else:
            out[prefix + key] = value
    return out


def plain(value):
    """A column's element as Python has it in a document (NumPy scalars to Python; NaN to None)."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def column_types(command):
    return dict(cs._core.columns(command))


def assert_row_is(table, row, document, command):
    """Row `row` of a grid holds the document's value under every result column."""
    leaves = flatten(document)
    failures = any(e is not None for e in table["error"])
    for key, kind in column_types(command).items():
        assert key in leaves, key
        got, want = plain(table[key][row]), leaves[key]
        if kind == "integer" and failures and numpy is not None and isinstance(table[key], numpy.ndarray):
            want = float(want)  # NaN in the failed rows: the column is float64
        assert got == want and type(got) is type(want), (row, key, got, want)
    assert table["error"][row] is None


# --- handles ---------------------------------------------------------------------------------------

def test_model_and_cluster_are_the_clis_json_as_dicts():
    m, c = cs.model("llama3-70b", seq=4096), cs.cluster("dgx-h100", nodes=2)
    assert isinstance(m, cs.Model) and isinstance(m, dict) and isinstance(c, cs.Cluster) and isinstance(c, dict)
    assert m == cli_json("model", "llama3-70b", "--seq", "4096")
    assert c == cli_json("cluster", "dgx-h100", "--nodes", "2")
    assert m["num_hidden_layers"] == 80 and c["gpus_per_node"] == 8
    assert repr(m) == repr(dict(m)) and str(c) == str(dict(c))
    assert json.loads(json.dumps(c)) == c


def test_handles_give_what_the_dicts_give():
    m, c = cs.model("llama3-70b"), cs.cluster("dgx-h100", nodes=2)
    options = dict(tp=8, pp=2, micro_batch=1, global_batch=64, seq=8192, sequence_parallel=True)
    by_handle = cs.step(m, c, **options)
    assert by_handle == cs.step(dict(m), dict(c), **options)  # the dicts go as inline JSON
    assert by_handle == cli_json("step", "--model", json.dumps({k: v for k, v in m.items() if k not in cs._MODEL_DERIVED}),
                                 "--cluster", json.dumps({k: v for k, v in c.items() if k != "derived"}),
                                 "--tp", "8", "--pp", "2", "--micro-batch", "1", "--global-batch", "64", "--seq", "8192",
                                 "--sequence-parallel")
    # the functions that run a command line take the handles too (their text is not parsed again)
    assert cs.scale(m, c, nodes=[2, 4], tp=8, micro_batch=1, global_batch=64) == \
        cs.scale(dict(m), dict(c), nodes=[2, 4], tp=8, micro_batch=1, global_batch=64)
    assert cs.collective(c, "all_gather", "64MiB") == cs.collective(dict(c), "all_gather", "64MiB")
    assert cs.sweep(c, min="1MiB", max="1GiB", factor=8) == cs.sweep(dict(c), min="1MiB", max="1GiB", factor=8)
    assert cs.model(m, seq=8192) == cs.model(dict(m), seq=8192) == cs.model("llama3-70b", seq=8192)
    assert cs.cluster(c, nodes=4) == cs.cluster(dict(c), nodes=4)


def test_a_changed_handle_is_read_as_the_dict_it_now_is():
    c = cs.cluster("dgx-h100", nodes=2)
    c["nodes"] = 4
    assert cs.step("llama3-8b", c, tp=2)["gpus"] == 32
    c = cs.cluster("dgx-h100", nodes=2)
    c["inter"]["link"] = "roce-200"  # a nested change too
    assert cs.collective(c, "all_reduce", "1GiB") == cs.collective(json.loads(json.dumps(c)), "all_reduce", "1GiB")
    assert "roce-200" in cs.collective(c, "all_reduce", "1GiB")["bottleneck"]
    m = cs.model("llama2-7b")
    del m["parameters"]  # a derived key: the model is the same
    m["num_hidden_layers"] = 16
    assert cs.step(m, "dgx-a100")["plan"]["stage_layers"] == [16]


def test_handles_copy_and_pickle_as_handles():
    m = cs.model("mixtral-8x7b")
    for twin in (copy.copy(m), copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert type(twin) is cs.Model and twin == m and twin._handle() is not None
        assert cs.step(twin, "dgx-h100", gpus=16, ep=8) == cs.step(m, "dgx-h100", gpus=16, ep=8)


def test_a_calibrated_cluster_from_fit_out_is_a_handle(tmp_path):
    out = tmp_path / "fitted.json"
    cs.fit(DATA / "measurements" / "dgx_a100_8gpu_allreduce_ml_engineering.log", out=out)
    c = cs.cluster(out)
    assert type(c) is cs.Cluster and c._handle() is not None and "calibration" in c
    assert c == cli_json("cluster", str(out))
    r = cs.collective(c, "all_reduce", "256MiB")
    assert r == cs.collective(str(out), "all_reduce", "256MiB")
    assert r == cli_json("collective", "--cluster", str(out), "--op", "all_reduce", "--bytes", "256MiB")
    table = cs.collectives(c, "all_reduce", [1 << 20, 256 << 20], arrays=False)
    assert table["time_us"][1] == r["time_us"]


def test_bad_model_or_cluster_texts_keep_the_clis_message():
    with pytest.raises(ValueError) as e:
        cs.step("llama9-7b")
    assert str(e.value) == cli_error("step", "--model", "llama9-7b")
    with pytest.raises(ValueError) as e:
        cs.collective("dgx-h900", "all_reduce", 1024)
    assert str(e.value) == cli_error("collective", "--cluster", "dgx-h900", "--op", "all_reduce", "--bytes", "1024")


# --- one call, read as a row: parity with the CLI beyond test_commscale.py's cases ----------------

SINGLE = [
    (dict(model="llama3-70b", cluster="dgx-h100", nodes=4, inter="roce-200", tp=8, pp=4, micro_batch=1,
          global_batch=512, seq=8192, schedule="interleaved", tp_overlap=True, sequence_parallel=True),
     ["--model", "llama3-70b", "--cluster", "dgx-h100", "--nodes", "4", "--inter", "roce-200", "--tp", "8", "--pp", "4",
      "--micro-batch", "1", "--global-batch", "512", "--seq", "8192", "--schedule", "interleaved", "--tp-overlap",
      "--sequence-parallel"]),
    (dict(model="llama2-13b", cluster="dgx-a100", gpus=32, framework="deepspeed", zero=2, bucket="25MB",
          gradient_bytes=2, compute_efficiency=0.45, attention="unfused", pp_overlap=False),
     ["--model", "llama2-13b", "--cluster", "dgx-a100", "--gpus", "32", "--framework", "deepspeed", "--zero", "2",
      "--bucket", "25MB", "--gradient-bytes", "2", "--compute-efficiency", "0.45", "--attention", "unfused",
      "--no-pp-overlap"]),
    (dict(model="mixtral-8x22b", cluster="dgx-h100", nodes=16, tp=4, ep=8, etp=1, pp=4, micro_batch=1,
          global_batch=512, seq=4096, expert_load=1.25, capacity_factor=1.5, pad_to_capacity=True,
          recompute="full", first_stage_layers=11),
     ["--model", "mixtral-8x22b", "--cluster", "dgx-h100", "--nodes", "16", "--tp", "4", "--ep", "8", "--etp", "1",
      "--pp", "4", "--micro-batch", "1", "--global-batch", "512", "--seq", "4096", "--expert-load", "1.25",
      "--capacity-factor", "1.5", "--pad-to-capacity", "--recompute", "full", "--first-stage-layers", "11"]),
    (dict(model="llama3-405b", cluster="dgx-h100", nodes=64, tp=8, pp=16, virtual_stages=8, schedule="interleaved",
          micro_batch=1, global_batch=2048, seq=8192, account_for_embedding_in_pipeline_split=True,
          account_for_loss_in_pipeline_split=True, dtype="fp8", efficiency="ideal", no_scatter_gather=True),
     ["--model", "llama3-405b", "--cluster", "dgx-h100", "--nodes", "64", "--tp", "8", "--pp", "16",
      "--virtual-stages", "8", "--schedule", "interleaved", "--micro-batch", "1", "--global-batch", "2048", "--seq",
      "8192", "--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split",
      "--dtype", "fp8", "--efficiency", "ideal", "--no-scatter-gather"]),
    (dict(model="llama3-70b", cluster="gb200-nvl72", gpus=64, zero=3, micro_batch=2, global_batch=256, seq=8192,
          cpu_offloading_num_layers=40, dtype="fp8"),
     ["--model", "llama3-70b", "--cluster", "gb200-nvl72", "--gpus", "64", "--zero", "3", "--micro-batch", "2",
      "--global-batch", "256", "--seq", "8192", "--cpu-offloading-num-layers", "40", "--dtype", "fp8"]),
    (dict(model="llama3-8b", cluster="dgx-h100", gpus=8, micro_batch=1, global_batch=128, seq=8192, dtype="fp8",
          gradient_bytes=2, recompute="full", recompute_method="block", recompute_num_layers=5),
     ["--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "8", "--micro-batch", "1", "--global-batch", "128",
      "--seq", "8192", "--dtype", "fp8", "--gradient-bytes", "2", "--recompute", "full", "--recompute-method", "block",
      "--recompute-num-layers", "5"]),
    (dict(cluster="gb200-nvl72", gpus=144, model="llama3-70b", tp=8, sequence_parallel=True, micro_batch=1,
          global_batch=144, seq=8192, dtype="mxfp8", scale_up_domain=72),
     ["--cluster", "gb200-nvl72", "--gpus", "144", "--model", "llama3-70b", "--tp", "8", "--sequence-parallel",
      "--micro-batch", "1", "--global-batch", "144", "--seq", "8192", "--dtype", "mxfp8", "--scale-up-domain", "72"]),
    (dict(model="deepseek-v3", cluster="gb200-nvl72", gpus=256, pp=4, ep=64, micro_batch=1, global_batch=4096,
          seq=4096, pipeline_model_parallel_layout="Et*4|(t*4|)*14tmL"),
     ["--model", "deepseek-v3", "--cluster", "gb200-nvl72", "--gpus", "256", "--pp", "4", "--ep", "64",
      "--micro-batch", "1", "--global-batch", "4096", "--seq", "4096", "--pipeline-model-parallel-layout",
      "Et*4|(t*4|)*14tmL"]),
    (dict(nodes=2, intra="pcie5-x16", inter="ib-hdr-4x", nics_per_node=2, accelerator="h100-pcie",
          oversubscription=2.0, zero=3, zero_overlap=False, cp=2, cp_overlap=False),
     ["--nodes", "2", "--intra", "pcie5-x16", "--inter", "ib-hdr-4x", "--nics-per-node", "2", "--accelerator",
      "h100-pcie", "--oversubscription", "2.0", "--zero", "3", "--no-zero-overlap", "--cp", "2", "--no-cp-overlap"]),
]


@pytest.mark.parametrize("options,argv", SINGLE, ids=[f"step-{i}" for i in range(len(SINGLE))])
def test_step_options_read_as_a_row_equal_the_cli(options, argv):
    assert cs.step(**options) == cli_json("step", *argv)


def test_pipeline_layout_list_form_as_the_recipes_write_it():
    # Kimi K2's (PP 4, VP 4) entry of Megatron-Bridge's recipes (recipes/kimi, _get_kimi_k2_pipeline_layout):
    # [embedding + 4 decoders] + [4 decoders] x 14 + [decoder, loss], the list form of "Et*4|(t*4|)*14tL"
    listed = [["embedding"] + ["decoder"] * 4] + [["decoder"] * 4] * 14 + [["decoder", "loss"]]
    assert cs.pipeline_layout_text(listed) == "Etttt|" + "tttt|" * 14 + "tL"
    options = dict(model="kimi-k2", cluster="gb200-nvl72", gpus=256, pp=4, ep=64, micro_batch=1, global_batch=4096,
                   seq=4096)
    as_list = cs.step(pipeline_model_parallel_layout=listed, **options)
    assert as_list == cs.step(pipeline_model_parallel_layout="Et*4|(t*4|)*14tL", **options)
    # rank r holds stages r, r + 4, r + 8, r + 12: 16 layers each, the last rank 4 + 4 + 4 + 1
    assert as_list["plan"]["stage_layers"] == [16, 16, 16, 13]
    assert as_list["plan"]["virtual_stages"] == 4
    with pytest.raises(ValueError, match=r"pipeline_model_parallel_layout\[1\]: expected embedding, decoder"):
        cs.pipeline_layout_text([["embedding"], ["transformer"]])


SINGLE_ERRORS = [
    (dict(tp=3), ["--tp", "3"]),
    (dict(tp=8.0), ["--tp", "8.0"]),
    (dict(tp=-2), ["--tp", "-2"]),
    (dict(tp=2 ** 70), ["--tp", str(2 ** 70)]),
    (dict(compute_efficiency=float("nan")), ["--compute-efficiency", "nan"]),
    (dict(compute_efficiency=-0.5), ["--compute-efficiency", "-0.5"]),
    (dict(compute_efficiency=1e-320), ["--compute-efficiency", "1e-320"]),
    (dict(compute_efficiency=2), ["--compute-efficiency", "2"]),
    (dict(compute_efficiency="half"), ["--compute-efficiency", "half"]),
    (dict(bucket="25Gbps"), ["--bucket", "25Gbps"]),
    (dict(bucket=-1), ["--bucket", "-1"]),
    (dict(recompute="some"), ["--recompute", "some"]),
    (dict(recompute="full", recompute_method="blocks"), ["--recompute", "full", "--recompute-method", "blocks"]),
    (dict(recompute="selective", recompute_num_layers=4), ["--recompute", "selective", "--recompute-num-layers", "4"]),
    (dict(recompute="full", recompute_method="block"), ["--recompute", "full", "--recompute-method", "block"]),
    (dict(framework="megatron"), ["--framework", "megatron"]),
    (dict(model="deepseek-v3", gpus=64, pp=4, pipeline_model_parallel_layout="Et*4|(t*4|)*14tL"),
     ["--model", "deepseek-v3", "--gpus", "64", "--pp", "4", "--pipeline-model-parallel-layout", "Et*4|(t*4|)*14tL"]),
    (dict(gpus=12, model="llama2-7b"), ["--gpus", "12", "--model", "llama2-7b"]),
    (dict(gpus=16, nodes=2, model="llama2-7b"), ["--gpus", "16", "--nodes", "2", "--model", "llama2-7b"]),
    (dict(dp_overlap=True, no_dp_overlap=True), ["--dp-overlap", "--no-dp-overlap"]),
    (dict(pad_to_capacity=True, model="mixtral-8x7b"), ["--pad-to-capacity", "--model", "mixtral-8x7b"]),
    (dict(dtype="nvfp4", cluster="dgx-h100"), ["--dtype", "nvfp4", "--cluster", "dgx-h100"]),
    (dict(inter="ib-ndr-9x", nodes=2), ["--inter", "ib-ndr-9x", "--nodes", "2"]),
]


@pytest.mark.parametrize("options,argv", SINGLE_ERRORS, ids=[" ".join(e[1]) for e in SINGLE_ERRORS])
def test_invalid_step_options_read_as_a_row_give_the_clis_message(options, argv):
    expected = cli_error("step", *argv)
    with pytest.raises(ValueError) as e:
        cs.step(**options)
    assert str(e.value) == expected


# A row fills the step's request as its options do: numbers of another type read as their text,
# and of several problems the one the command line reports first.
SEVERAL_ERRORS = [
    (dict(tp=3, micro_batch="abc", model="llama2-7b"), ["--tp", "3", "--micro-batch", "abc", "--model", "llama2-7b"]),
    (dict(tp="abc", framework="nope"), ["--tp", "abc", "--framework", "nope"]),
    (dict(gradient_bytes=3, pad_to_capacity=True, model="mixtral-8x7b"),
     ["--gradient-bytes", "3", "--pad-to-capacity", "--model", "mixtral-8x7b"]),
    (dict(tp=3, dp="x", model="llama2-7b"), ["--tp", "3", "--dp", "x", "--model", "llama2-7b"]),
    (dict(gpus=12, tp="abc", model="llama2-7b"), ["--gpus", "12", "--tp", "abc", "--model", "llama2-7b"]),
    (dict(model="nope", seq=0), ["--model", "nope", "--seq", "0"]),
    (dict(recompute=3), ["--recompute", "3"]),
    (dict(zero=1.0), ["--zero", "1.0"]),
    (dict(bucket=1e40), ["--bucket", "1e+40"]),
    (dict(expert_load=0), ["--expert-load", "0"]),
    (dict(capacity_factor=2 ** 60), ["--capacity-factor", str(2 ** 60)]),
    (dict(recompute_modules=7), ["--recompute-modules", "7"]),
    (dict(dp_overlap=False, no_dp_overlap=True, tp="x"), ["--no-dp-overlap", "--tp", "x"]),
    (dict(tp_overlap=True, no_tp_overlap=False, seq=-1), ["--tp-overlap", "--seq", "-1"]),
]


@pytest.mark.parametrize("options,argv", SEVERAL_ERRORS, ids=[" ".join(e[1]) for e in SEVERAL_ERRORS])
def test_a_row_reports_the_error_the_cli_reports_first(options, argv):
    expected = cli_error("step", *argv)
    with pytest.raises(ValueError) as e:
        cs.step(**options)
    assert str(e.value) == expected
    table = cs.steps(**{k: [v, v] for k, v in options.items()}, arrays=False)
    assert table["error"] == [expected, expected]


def test_values_no_command_line_can_spell_are_refused_naming_the_option():
    with pytest.raises(ValueError, match=r"^commscale: --tp: expected a value: tensor-parallel degree, got True$"):
        cs.step(tp=True)
    with pytest.raises(ValueError, match=r"^commscale: --sequence-parallel: expected True, False or None \(a flag\), got 1$"):
        cs.step(sequence_parallel=1)
    with pytest.raises(ValueError, match=r"^commscale: --sequence-parallel: expected .*, got 'yes'$"):
        cs.step(sequence_parallel="yes")
    assert cs.step(tp=False) == cs.step()  # False leaves an option out, as on a command line


def test_float_text_is_pythons_repr():
    values = [0.0, -0.0, 1.0, 0.1, 1e16, 1e15, 123456789012345678.0, 1e-4, 1e-5, 1.5e-7, 2.5e300, 5e-324,
              float("inf"), float("-inf"), float("nan"), 1 / 3, -2.75, 1e22, 9007199254740993.0, 0.55]
    seed = 12345
    for _ in range(2000):  # reproducible pseudo-random doubles over the whole range
        seed = (seed * 6364136223846793005 + 1442695040888963407) % 2 ** 64
        bits = seed & ((1 << 63) - 1)
        value = __import__("struct").unpack("<d", bits.to_bytes(8, "little"))[0]
        values.append(value if not math.isnan(value) else 0.5)
    for v in values:
        assert cs._core.float_text(v) == repr(v), v


# --- grids ---------------------------------------------------------------------------------------

# (model, cluster, keywords) of one row; None leaves a keyword out of that row. Defaults (dp from the
# GPUs, the global batch, seq, the framework's profile), every kind of option, and invalid rows.
ROWS = [
    ("llama3-70b", "dgx-h100", dict(nodes=8)),
    ("llama3-70b", "dgx-h100", dict(nodes=8, tp=8, pp=2, micro_batch=1, global_batch=512, seq=8192,
                                    sequence_parallel=True, recompute="selective", dp_overlap=False)),
    ("llama2-7b", "dgx-a100", dict(nodes=4, framework="fsdp", zero=3, micro_batch=2, global_batch=256,
                                   compute_efficiency=0.55)),
    ("mixtral-8x7b", "dgx-h100", dict(gpus=64, tp=2, ep=8, pp=2, micro_batch=1, global_batch=256, seq=4096,
                                      dtype="fp8", expert_load=1.5)),
    ("llama3-70b", "dgx-h100", dict(nodes=4, inter="roce-200", tp=4, pp=4, schedule="interleaved", micro_batch=1)),
    ("llama3-8b", "dgx-h100", dict(nodes=2, bucket="25MB", gradient_bytes=2, attention="unfused", zero=1)),
    ("llama3-8b", "dgx-h100", dict(nodes=1, seq=8192, dtype="fp8", recompute="full", recompute_method="block",
                                   recompute_num_layers=5)),
    ("qwen3-30b-a3b", "dgx-h100", dict(gpus=16, pp=2, virtual_stages=12, schedule="interleaved", ep=8, etp=1,
                                       micro_batch=2, global_batch=512, seq=4096, dtype="fp8", fp8_recipe="tensorwise",
                                       overlap_moe_expert_parallel_comm=True, moe_token_dispatcher="alltoall")),
    ("llama3-70b", "dgx-h100", dict(nodes=8, tp=4, pp=8, virtual_stages=5, schedule="interleaved", sequence_parallel=True,
                                    micro_batch=1, global_batch=128, seq=8192, dtype="fp8", fp8_recipe="blockwise")),
    ("llama3-8b", "dgx-h100", dict(nodes=1, zero=3, global_batch=64, gradient_accumulation_fusion=True)),
    ("llama3-8b", "dgx-h100", dict(nodes=1, zero=1, global_batch=64, gradient_accumulation_fusion=False)),
    ("llama3-8b", "dgx-h100", dict(nodes=1, framework="fsdp", gradient_accumulation_fusion=False)),  # invalid: not Megatron
    ("llama3-8b", "dgx-h100", dict(nodes=1, fp8_recipe="blockwise")),        # invalid: blockwise without fp8
    ("llama3-8b", "dgx-h100", dict(nodes=2, tp=3)),                          # invalid: 3 does not divide 16
    ("llama3-8b", "dgx-h100", dict(nodes=2, compute_efficiency=float("nan"))),  # invalid: NaN
    ("llama3-8b", "dgx-h100", dict(nodes=2, micro_batch=-1)),               # invalid: negative
    ("llama3-8b", "dgx-h100", dict(nodes=2, framework="megatron")),         # invalid: unknown name
    ("llama3-8b", "dgx-h100", dict(nodes=2, global_batch=8.0)),             # invalid: a float for an integer
    ("llama9-8b", "dgx-h100", dict(nodes=2)),                               # invalid: unknown model
    ("llama3-8b", "dgx-h100", dict(gpus=12)),                               # invalid: not whole nodes
    ("llama3-8b", "dgx-h100", dict(nodes=1, schedule="zb-v", pp=2, micro_batch=4, global_batch=64)),
    (None, None, dict()),                                                    # the demo
    (None, "dgx-a100", dict(nodes=2, oversubscription=4.0, tp_overlap=True, sequence_parallel=True, tp=4)),
]
STEP_KEYWORDS = sorted({k for _, _, kw in ROWS for k in kw})


def grid_columns(rows):
    return {k: [kw.get(k) for _, _, kw in rows] for k in STEP_KEYWORDS}


def single(model, cluster, keywords):
    """cs.step for one row: its document, or the ValueError's message."""
    try:
        return cs.step(model, cluster, **{k: v for k, v in keywords.items() if v is not None})
    except ValueError as e:
        return str(e)


def cli_argv(model, cluster, keywords):
    argv = cs._argv("step", [], {k: v for k, v in keywords.items() if v is not None})[1:]
    return (["--model", model] if model else []) + (["--cluster", cluster] if cluster else []) + argv


@pytest.mark.parametrize("arrays", [False, pytest.param(True, marks=needs_numpy)], ids=["lists", "numpy"])
@pytest.mark.parametrize("threads", [1, 2])
def test_steps_rows_equal_single_steps_and_the_cli(arrays, threads):
    table = cs.steps([r[0] for r in ROWS], [r[1] for r in ROWS], threads=threads, arrays=arrays, **grid_columns(ROWS))
    assert set(len(v) for v in table.values()) == {len(ROWS)}
    for i, (model, cluster, keywords) in enumerate(ROWS):
        expected = single(model, cluster, keywords)
        if isinstance(expected, str):  # invalid: the CLI's message, every number NaN/None
            assert table["error"][i] == expected == cli_error("step", *cli_argv(model, cluster, keywords))
            assert plain(table["step_s"][i]) is None and table["bottleneck"][i] is None
        else:
            assert_row_is(table, i, expected, "step")
            assert expected == cli_json("step", *cli_argv(model, cluster, keywords))
    # the keywords given come back as columns (where no result key has the name)
    assert [plain(v) for v in table["tp"]] == [kw.get("tp") for _, _, kw in ROWS]
    assert [plain(v) for v in table["recompute"]] == [kw.get("recompute") for _, _, kw in ROWS]


def test_every_number_of_step_json_is_a_column():
    columns = column_types("step")
    for model, cluster, keywords in ROWS:
        doc = single(model, cluster, keywords)
        if isinstance(doc, str):
            continue
        for key, value in flatten(doc).items():
            if key in ("verdict", "plan.stage_layers") or key.startswith("plan.account_for_") or \
                    key in ("plan.cpu_offloading_num_layers", "plan.recompute_method", "plan.recompute_num_layers",
                            "plan.fp8_recipe", "plan.fp8_param_gather", "plan.overlap_moe_expert_parallel_comm",
                            "plan.gradient_accumulation_fusion"):
                continue  # a sentence, an array, and the plan keys written only when set (or with FP8)
            assert key in columns, key
            kind = {bool: "boolean", int: "integer", float: "real", str: "label"}[type(value)] if value is not None else "real"
            assert columns[key] == kind, (key, columns[key], kind)


def test_collectives_rows_equal_single_collectives_and_the_cli():
    sizes = [1, 1000, "1KiB", "64MiB", 1 << 30, 1.5e9, 0, -4, "1Gbps", 2 ** 63]
    ops = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all", "send_recv", "reduce",
           "all_reduce", "all_reduce", "allreduce"]
    c = cs.cluster("dgx-h100", nodes=4)
    table = cs.collectives(c, ops, sizes, algo=["auto"] * 9 + ["ring"], arrays=False, threads=2)
    for i, (op, size) in enumerate(zip(ops, sizes)):
        try:
            expected = cs.collective(c, op, size, algo="auto" if i < 9 else "ring")
        except ValueError as e:
            argv = ["--cluster", "dgx-h100", "--nodes", "4", "--op", op, "--bytes", cs._text(size)]
            assert table["error"][i] == str(e) == cli_error("collective", *argv)
            continue
        assert_row_is(table, i, expected, "collective")
        assert expected == cli_json("collective", "--cluster", "dgx-h100", "--nodes", "4", "--op", op, "--bytes",
                                    cs._text(size), "--algo", "auto" if i < 9 else "ring")
    assert table["size"] == sizes


def test_rows_whose_topology_flags_or_model_vary_equal_single_calls():
    # each row's cluster from its own flags (and the demo where a row gives no model, cluster or
    # topology flag), its failures the single call's
    clusters = [None, "dgx-h100", cs.cluster("dgx-a100"), "nope", "dgx-h100", None]
    models = [None, "llama3-8b", None, "llama3-8b", "nope", cs.model("gpt2-large")]
    rows = {"nodes": [None, 2, None, 1, 1, "x"], "intra": [None, None, "nvlink4", None, None, None],
            "gpus": [None, None, None, None, None, 16], "tp": [None, 8, 2, 1, 1, 1]}
    table = cs.steps(models, clusters, arrays=False, **rows)
    for i in range(len(models)):
        kw = {k: v[i] for k, v in rows.items() if v[i] is not None}
        try:
            expected = cs.step(models[i], clusters[i], **kw)
        except ValueError as e:
            assert table["error"][i] == str(e)
            continue
        assert_row_is(table, i, expected, "step")
    sizes = [1 << 20, 1 << 30, "64MiB", 1 << 20, 1 << 30]
    rows = {"nodes": [1, None, 2, 0, None], "gpus": [None, 16, None, None, 12], "ranks": [None, 8, 4, None, None],
            "ranks_per_node": [None, 4, 2, None, None], "algo": ["ring", "fastest", None, None, "nope"]}
    table = cs.collectives(["dgx-h100", cs.cluster("dgx-a100"), "dgx-h100", "dgx-h100", None], "all_reduce", sizes,
                           arrays=False, **rows)
    for i, c in enumerate(["dgx-h100", cs.cluster("dgx-a100"), "dgx-h100", "dgx-h100", None]):
        kw = {k: v[i] for k, v in rows.items() if v[i] is not None}
        try:
            expected = cs.collective(c, "all_reduce", sizes[i], **kw)
        except ValueError as e:
            assert table["error"][i] == str(e)
            continue
        assert_row_is(table, i, expected, "collective")


def test_a_grid_varies_the_cluster_and_the_model_too():
    nodes = [1, 2, 4, 8, 16]
    table = cs.steps(cs.model("llama3-8b"), "dgx-h100", nodes=nodes, tp=2, micro_batch=2, arrays=False)
    assert table["gpus"] == [8 * n for n in nodes] and table["cluster"] == ["dgx-h100+flags"] * 5
    for i, n in enumerate(nodes):
        assert_row_is(table, i, cs.step("llama3-8b", "dgx-h100", nodes=n, tp=2, micro_batch=2), "step")
    models = ["llama3-8b", cs.model("llama2-7b"), {"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 8,
                                                    "num_attention_heads": 16, "intermediate_size": 5632,
                                                    "vocab_size": 32000, "max_position_embeddings": 4096}]
    table = cs.steps(models, cs.cluster("dgx-a100"), tp=[1, 2, 4], arrays=False)
    for i, m in enumerate(models):
        assert_row_is(table, i, cs.step(m, cs.cluster("dgx-a100"), tp=[1, 2, 4][i]), "step")


def test_a_batch_with_scalars_only_is_one_row_and_an_empty_sequence_none():
    one = cs.steps("llama3-8b", "dgx-h100", tp=2, arrays=False)
    assert len(one["step_s"]) == 1
    assert_row_is(one, 0, cs.step("llama3-8b", "dgx-h100", tp=2), "step")
    none = cs.steps("llama3-8b", "dgx-h100", tp=[], arrays=False)
    assert all(v == [] for v in none.values())


def test_a_scalar_error_fails_every_row_with_the_clis_message():
    table = cs.steps("llama3-8b", "dgx-h100", tp=[1, 2], recompute="sometimes", arrays=False)
    assert table["error"] == [cli_error("step", "--model", "llama3-8b", "--cluster", "dgx-h100", "--recompute",
                                        "sometimes")] * 2


def test_grid_input_errors_name_the_keyword():
    with pytest.raises(ValueError, match=r"^commscale: pp: expected 3 values, one per row, as tp has, got 2 values$"):
        cs.steps("llama3-8b", "dgx-h100", tp=[1, 2, 4], pp=[1, 2])
    with pytest.raises(ValueError, match=r"^commscale: sizes: expected 3 values, one per row, as op has, got 2 values$"):
        cs.collectives("dgx-h100", ["all_reduce", "all_gather", "broadcast"], [1024, 2048])
    with pytest.raises(ValueError, match=r"^commscale: sizes: expected one of the two, got given with another keyword for --bytes$"):
        cs.collectives("dgx-h100", "all_reduce", [1024], bytes=[2048])
    assert cs.collectives("dgx-h100", "all_reduce", bytes=[1024], arrays=False)["bytes"] == [1024]
    with pytest.raises(ValueError) as e:
        cs.steps("llama3-8b", "dgx-h100", micro_batchh=[1, 2])
    assert str(e.value) == cli_error("step", "--micro-batchh", "2")
    for threads in (0, 1025, 2.0, True):
        with pytest.raises(ValueError, match=r"^commscale: threads: expected an integer in \[1, 1024\]"):
            cs.steps("llama3-8b", "dgx-h100", tp=[1, 2], threads=threads)
    with pytest.raises(ValueError, match=r"^commscale: svg: "):
        cs.steps("llama3-8b", "dgx-h100", tp=[1, 2], svg="x.svg")
    with pytest.raises(ValueError, match=r"^commscale: arrays: "):
        cs.collectives("dgx-h100", "all_reduce", [1024], arrays="yes")


@needs_numpy
def test_numpy_arrays_as_columns():
    tp = numpy.array([1, 2, 4, 8], dtype=numpy.int32)
    eff = numpy.array([0.3, 0.4, 0.5, 0.6])
    sp = numpy.array([False, True, True, True])
    table = cs.steps("llama3-70b", "dgx-h100", nodes=8, tp=tp, compute_efficiency=eff, sequence_parallel=sp,
                     recompute=numpy.array(["none", "selective", "full", "none"]))
    assert isinstance(table["step_s"], numpy.ndarray) and table["step_s"].dtype == numpy.float64
    assert table["plan.dp"].dtype == numpy.int64 and table["fits_in_memory"].dtype == numpy.bool_
    assert table["tp"] is tp  # an input array comes back as given
    for i in range(4):
        assert_row_is(table, i, cs.step("llama3-70b", "dgx-h100", nodes=8, tp=int(tp[i]), compute_efficiency=float(eff[i]),
                                        sequence_parallel=bool(sp[i]), recompute=str(table["recompute"][i])), "step")
    # str arrays (UTF-8 beyond ASCII too), model arrays, and lists out where arrays=False
    names = numpy.array(["llama3-8b", "llama2-7b"])
    t = cs.steps(names, "dgx-h100", recompute=numpy.array(["none", "full"]), framework=numpy.array(["fsdp", "fsdp"]),
                 arrays=False)
    assert t["model"] == ["llama3-8b", "llama2-7b"] and t["recompute"] == ["none", "full"]
    assert_row_is(t, 1, cs.step("llama2-7b", "dgx-h100", recompute="full", framework="fsdp"), "step")
    bad = cs.steps("llama3-8b", "dgx-h100", recompute=numpy.array(["n\u00f6ne", "\U0001F600"]), arrays=False)
    assert bad["error"] == [cli_error("step", "--model", "llama3-8b", "--cluster", "dgx-h100", "--recompute", v)
                            for v in ("n\u00f6ne", "\U0001F600")]
    # float32 values are read as one call writes them (their own shortest text)
    f32 = cs.steps("llama3-8b", "dgx-h100", compute_efficiency=numpy.array([0.1], dtype=numpy.float32))
    assert f32["step_s"][0] == cs.step("llama3-8b", "dgx-h100", compute_efficiency=numpy.float32(0.1))["step_s"]
    # a failed row turns integer columns into floats (NaN) and boolean ones into objects (None)
    bad = cs.steps("llama3-8b", "dgx-h100", tp=numpy.array([2, 3]))
    assert numpy.isnan(bad["plan.dp"][1]) and bad["fits_in_memory"][1] is None and bad["error"][1].startswith("commscale: ")
    with pytest.raises(ValueError, match=r"^commscale: tp: expected a scalar or a sequence of one value per row, "
                                         r"got a 2-dimensional array of shape \(2, 2\)$"):
        cs.steps("llama3-8b", "dgx-h100", tp=numpy.ones((2, 2), dtype=int))


def test_pandas_dataframe_of_a_grid():
    pandas = pytest.importorskip("pandas", reason="pandas is not installed (Debian: python3-pandas)")
    table = cs.steps("llama3-8b", "dgx-h100", nodes=[1, 2, 4], tp=[1, 2, 3])
    df = pandas.DataFrame(table)
    assert len(df) == 3 and list(df["plan.dp"][:2]) == [8, 8]
    assert df["error"].isna().tolist() == [True, True, False]
    assert df.loc[df["error"].isna(), "step_s"].notna().all()


def test_steps_leave_the_gil_to_other_threads():
    n = 20000
    done, count = [], 0
    t = threading.Thread(target=lambda: done.append(cs.steps("llama3-70b", "dgx-h100", nodes=16, tp=[8] * n,
                                                             pp=[1, 2, 4, 8] * (n // 4), threads=1, arrays=False)))
    t.start()
    while t.is_alive():
        count += 1
    t.join()
    assert done and len(done[0]["step_s"]) == n
    assert count > 1000


def test_the_stub_lists_the_functions_and_keywords():
    import ast
    stub = ast.parse((pathlib.Path(cs.__file__).parent / "__init__.pyi").read_text(encoding="utf-8"))
    functions = {f.name: f for f in stub.body if isinstance(f, ast.FunctionDef)}
    assert set(cs.__all__) - {"Model", "Cluster"} <= set(functions)
    keywords = {name: {a.arg for a in f.args.args + f.args.kwonlyargs} for name, f in functions.items()}
    step_options = {o.replace("-", "_") for o in cs._core.options("step") + cs._core.flags("step")}
    assert step_options - {"svg"} <= keywords["steps"] and step_options <= keywords["step"]
    collective_options = {o.replace("-", "_") for o in cs._core.options("collective") + cs._core.flags("collective")}
    assert collective_options - {"bytes"} <= keywords["collective"] and collective_options - {"bytes"} <= keywords["collectives"]
    typed = {}
    for node in stub.body:  # Name = TypedDict("Name", {...}) and class Name(TypedDict)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "TypedDict":
            typed[node.targets[0].id] = {k.value for k in node.value.args[1].keys}
        if isinstance(node, ast.ClassDef) and any(getattr(b, "id", "") == "TypedDict" for b in node.bases):
            typed[node.name] = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign)}
    assert set(column_types("step")) | {"error"} <= typed["StepColumns"]
    assert set(column_types("collective")) | {"error", "size"} <= typed["CollectiveColumns"]
    assert set(cs.step()) <= typed["StepResult"] and set(cs.step()["plan"]) <= typed["PlanResult"]
    assert set(cs.collective(size=1024)) == typed["CollectiveResult"]


def test_readme_grid_listing_prints_what_the_readme_shows(tmp_path):  # docs/python.md "Grids"
    pytest.importorskip("pandas", reason="pandas is not installed (Debian: python3-pandas)")
    pytest.importorskip("matplotlib", reason="matplotlib is not installed (Debian: python3-matplotlib)")
    text = (SOURCE / "docs" / "python.md").read_text(encoding="utf-8")
    section = text[text.index("## Grids"):]
    code = section[section.index("```python\n") + len("```python\n"):]
    code, rest = code[:code.index("```\n")], code[code.index("```\n") + 4:]
    shown = rest[rest.index("```\n") + 4:]
    shown = shown[:shown.index("```\n")]
    package = str(pathlib.Path(cs.__file__).resolve().parents[1])  # run from tmp_path: an absolute path
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=os.pathsep.join([package, os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout == shown
    assert any(tmp_path.glob("*.png"))  # the plot
