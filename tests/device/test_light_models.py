"""Whole light models through the emulator (naive executor) agree with onnxruntime."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from zcspec.checks.naive_executor import run
from zcspec.checks.zoo import LIGHT
from zcspec.checks.models import zoo_path
from zcspec.impl.compiler.frontend.onnx_import import load_onnx
from zcspec.impl.device import Device


def check_model(name: str) -> None:
    path = zoo_path(name)
    graph = load_onnx(path)
    rng = np.random.default_rng(0)
    feeds = {t: rng.standard_normal(graph.desc[t].shape).astype(np.float32) for t in graph.inputs}
    dev = Device()
    outs, _ = run(dev, graph, feeds)
    ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(list(graph.outputs), feeds)
    for (t, got), want in zip(outs.items(), ref):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=f"{name} output {t}")
    assert dev.counters.faults == 0


def test_squeezenet_matches_onnxruntime():
    check_model("squeezenet")


@pytest.mark.slow
@pytest.mark.parametrize("name", [z for z in LIGHT if z != "squeezenet"])
def test_light_model_matches_onnxruntime(name):
    check_model(name)
