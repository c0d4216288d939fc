"""The oracle's Softmax of opsets 1-12: onnx.reference (1.23) evaluates an opset-9 Softmax with opset 13's
meaning (along the last axis), so an exported classifier output of shape (1, 1000, 1, 1) came out all ones
and every runtime looked wrong. The oracle now spells it Flatten -> Softmax -> Reshape."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort

from zcspec.checks.models import zoo_path
from zcspec.checks.oracle import oracle_outputs
from zcspec.checks.zoo import load
from zcspec.impl.compiler.builder import GraphBuilder


def _softmax_graph(shape, **attrs):
    b = GraphBuilder("softmax")
    b.output(b.op("Softmax", [b.input("x", shape)], **attrs))
    return b.build()


def _coerced(x, axis):
    flat = x.reshape(int(np.prod(x.shape[:axis])), -1)
    e = np.exp(flat - flat.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).reshape(x.shape)


def test_an_old_softmax_normalises_over_everything_from_its_axis():
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 1)).astype(np.float32)
    for attrs, axis in (({}, 1), ({"axis": 2}, 2), ({"axis": -1}, 3)):
        (got,) = oracle_outputs(_softmax_graph(x.shape, **attrs), {"x": x}).values()
        np.testing.assert_allclose(got, _coerced(x, axis), rtol=1e-5, atol=1e-6)


def test_the_squeezenet_oracle_matches_onnxruntime_on_the_file():
    g = load("zoo:squeezenet")
    x = np.random.default_rng(1).standard_normal(g.desc[g.inputs[0]].shape).astype(np.float32)
    (want,) = ort.InferenceSession(zoo_path("squeezenet")).run(None, {g.inputs[0]: x})
    (got,) = oracle_outputs(g, {g.inputs[0]: x}).values()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    assert abs(float(got.sum()) - 1.0) < 1e-4
