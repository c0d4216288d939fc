"""``zcspec lower`` and ``zcspec run --runtime v2`` end to end."""
from __future__ import annotations

import json

import numpy as np

from zcspec.checks.cli.main import main
from zcspec.impl.compiler.graph_json import to_json
from tests.helpers.runtime_v2 import relu_neg_graph


def model_file(tmp_path) -> str:
    path = tmp_path / "relu_neg.json"
    path.write_text(to_json(relu_neg_graph()))
    return str(path)


def test_lower_reports_the_rewrite(tmp_path, capsys):
    assert main(["lower", model_file(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "rewritten alloc/neg_2:0: AllocMemory -> AllocModelOutTensor <- allocator/hbm:0, OutputData:0" in out


def test_lower_always_zero_copy_dump_shows_both_graphs(tmp_path, capsys):
    assert main(["lower", model_file(tmp_path), "--dump", "--always-zero-copy", "--trust-shape"]) == 0
    out = capsys.readouterr().out
    before, after = out.split("== after ModelOutTensorZeroCopy, TrustOutTensor ==")
    assert "== before the passes ==" in before and "AllocMemory                alloc/neg_2:0" in before
    assert "SplitTensorForOutputData   alloc/neg_2:0                    <- OutputData:0" in after
    assert "EnsureTensorAtOutMemory" in before and "removed   EnsureTensorAtOutMemory ensure/neg_2:0" in after


def test_lower_bad_model_is_exit_code_2(tmp_path, capsys):
    assert main(["lower", str(tmp_path / "missing.onnx")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_run_with_runtime_v2(tmp_path, capsys):
    x = np.linspace(-1, 1, 100, dtype=np.float32).reshape(10, 10)
    np.save(tmp_path / "x.npy", x)
    args = ["run", model_file(tmp_path), "--runtime", "v2", "--input", f"x={tmp_path / 'x.npy'}",
            "--output-dir", str(tmp_path / "out"), "--json"]
    assert main(args) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["runtime"] == "v2" and info["counters"]["kernel_launches"] == 2
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "neg_2:0.npy"), -np.maximum(x, 0))
