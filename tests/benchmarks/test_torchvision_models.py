"""benchmarks/torchvision_models.py: the script behind docs/frontend.md's torchvision table. It needs no
torch when the models are already exported: here a small Conv + Erf + LayerNormalization model stands in
for one, in the folder the script reads."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from tests.helpers.onnx_factory import init, model, vi

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "torchvision_models.py"
pytest.importorskip("onnxruntime")


def _run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)


def test_the_script_imports_and_explains_itself():
    out = _run("--help")
    assert out.returncode == 0, out.stderr
    assert "--torch-python" in out.stdout and "--dir" in out.stdout


def test_a_model_in_the_folder_is_run_through_both_runtimes(tmp_path):
    rng = np.random.default_rng(0)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Erf", ["c"], ["e"]),
             helper.make_node("LayerNormalization", ["e", "s"], ["logits"], axis=-1)]
    m = model(nodes, [vi("x", [1, 3, 8, 8])], [vi("logits", [1, 4, 8, 8])],
              [init("w", rng.standard_normal((4, 3, 3, 3)).astype(np.float32)),
               init("s", rng.standard_normal(8).astype(np.float32))], opset=17)
    onnx.save(m, tmp_path / "tiny.onnx")
    out = _run("--dir", str(tmp_path), "--repeat", "1", "tiny")
    assert out.returncode == 0, out.stderr
    row = next(line for line in out.stdout.splitlines() if line.startswith("| tiny |"))
    assert "| 0 / 0 |" in row and " ok |" in row and row.endswith("| yes |"), row


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="torch is importable: it would export")
def test_a_missing_model_without_torch_says_what_to_do(tmp_path):
    out = _run("--dir", str(tmp_path), "--torch-python", sys.executable, "resnet18")
    assert out.returncode != 0 and "--torch-python" in out.stderr
