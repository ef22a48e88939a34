"""tools/doc_figures.py, the check behind the ctest `docs: figures quoted in the prose match what
the commands print`: the written precision and sign, the key grammar, and that a figure which no
longer matches its command fails the check and is rewritten by `write`. A stand-in for the CLI
prints fixed JSON, so these run without a build."""

import importlib.util
import json
import os
import pathlib
import stat

import pytest

SOURCE = pathlib.Path(os.environ.get("COMMSCALE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
spec = importlib.util.spec_from_file_location("doc_figures", SOURCE / "tools" / "doc_figures.py")
doc_figures = importlib.util.module_from_spec(spec)
spec.loader.exec_module(doc_figures)

FIT = {
    "dense": {"leave_one_model_out": 0.04209, "runs": 101},
    "families": [{"family": "NeMo 24.07 / H100 / fp8", "rule_of_thumb": 0.066},
                 {"family": "Megatron-Bridge 25.11 / H100 / fp8", "rule_of_thumb": 0.033}],
    "runs": [{"model": "a", "moe": True, "measured_tokens_per_s_per_gpu": 100.0, "leave_one_model_out": 110.0},
             {"model": "a", "moe": True, "measured_tokens_per_s_per_gpu": 100.0, "leave_one_model_out": 80.0},
             {"model": "b-x", "moe": False, "measured_tokens_per_s_per_gpu": 50.0, "leave_one_model_out": 51.0}],
}


def test_written_precision_sign_and_separators():
    f = doc_figures.formatted
    assert f(0.04209, "", "4.2", "%") == "4.2"
    assert f(0.04209, "", "4.21", "%") == "4.21"
    assert f(1.03, "", "103", "%") == "103"
    assert f(0.0309, "+", "3.1", "%") == "+3.1"
    assert f(-0.094, "-", "9.4", "%") == "-9.4"
    assert f(0.05, "-", "5.0", "%") == "+5.0"  # the sign follows the value, not the text
    assert f(-0.0001, "", "0.0", "%") == "0.0"  # no "-0.0"
    assert f(12345.6, "", "12,346", "") == "12,346"
    assert f(0.5878, "", "0.588", "") == "0.588"


def test_key_grammar():
    r = doc_figures.resolve
    assert r(FIT, "dense.leave_one_model_out") == pytest.approx(0.04209)
    assert r(FIT, "families[Megatron-Bridge 25.11 / H100 / fp8].rule_of_thumb") == pytest.approx(0.033)
    assert r(FIT, "median_abs(runs[moe=True].error:leave_one_model_out)") == pytest.approx(0.15)
    assert r(FIT, "max_abs(runs.error:leave_one_model_out)") == pytest.approx(0.2)
    assert r(FIT, "min(runs.error:leave_one_model_out)") == pytest.approx(-0.2)
    assert r(FIT, "median_abs(runs[model~=b].error:leave_one_model_out)") == pytest.approx(0.02)
    with pytest.raises(KeyError):
        r(FIT, "families[GB300 / fp8].rule_of_thumb")
    with pytest.raises(KeyError):
        r(FIT, "dense.no_such_key")


def fake_cli(tmp_path, doc):
    exe = tmp_path / "commscale"
    exe.write_text("#!/bin/sh\ncat <<'EOF'\n%s\nEOF\n" % json.dumps(doc))
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return str(exe)


def test_a_stale_figure_fails_the_check_and_write_mends_it(tmp_path, capsys):
    exe = fake_cli(tmp_path, FIT)
    readme = tmp_path / "README.md"
    readme.write_text("Dense runs within 4.3%<!-- fig: fit-compute,runs.csv dense.leave_one_model_out --> "
                      "(median), NeMo's rule 6.6%<!-- fig: fit-compute,runs.csv "
                      "families[NeMo 24.07 / H100 / fp8].rule_of_thumb -->.\n")
    assert doc_figures.main(["doc_figures.py", "check", str(tmp_path), exe]) == 1
    out = capsys.readouterr().out
    assert "README.md:1: fit-compute,runs.csv dense.leave_one_model_out: written 4.3%, computed 4.2%" in out
    assert "2 figure(s) quoted in the prose, 1 wrong" in out
    assert doc_figures.main(["doc_figures.py", "write", str(tmp_path), exe]) == 0
    assert "within 4.2%<!-- fig:" in readme.read_text()
    assert doc_figures.main(["doc_figures.py", "check", str(tmp_path), exe]) == 0


def test_an_unknown_key_is_reported_not_skipped(tmp_path, capsys):
    exe = fake_cli(tmp_path, FIT)
    (tmp_path / "README.md").write_text("x 1.0%<!-- fig: fit-compute,runs.csv dense.missing -->\n")
    assert doc_figures.main(["doc_figures.py", "check", str(tmp_path), exe]) == 1
    assert "dense.missing" in capsys.readouterr().out
