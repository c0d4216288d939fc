"""The oracle's HardSwish, Gelu and LayerNormalization: ops after opset 9, which the oracle exports at
opset 9 written out in opset-9 arithmetic (checks/oracle_forms.py). Before, they had no oracle, so the
v1/v2 runs of MobileNetV3 (HardSwish) and of a vision transformer (LayerNormalization) that
``zcspec verify`` makes from a torchvision export were left unjudged. Each form is held to
onnxruntime's own op at the opset that defines it."""
from __future__ import annotations

import numpy as np
import pytest

from zcspec.checks.onnxruntime_oracle import onnxruntime_node
from zcspec.checks.oracle import oracle_outputs
from zcspec.impl.compiler.builder import GraphBuilder

pytest.importorskip("onnxruntime")


def _graph(op, shape, params=(), outputs=None, **attrs):
    rng = np.random.default_rng(5)
    b = GraphBuilder(op.lower())
    x = b.input("x", shape)
    weights = [b.weight(f"p{i}", rng.standard_normal(s).astype(np.float32)) for i, s in enumerate(params)]
    outs = b.op(op, [x, *weights], name="n", outputs=outputs or [(shape, "float32")], **attrs)
    b.output(*(outs if isinstance(outs, (list, tuple)) else [outs]))
    return b.build()


def _oracle(graph, x):
    got = oracle_outputs(graph, {"x": x})
    return [got[t] for t in graph.outputs]


X = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32) * 4


def test_hardswish():
    (want,) = onnxruntime_node("HardSwish", [X], 1, {}, opset=14)
    (got,) = _oracle(_graph("HardSwish", X.shape), X)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate):
    (want,) = onnxruntime_node("Gelu", [X], 1, {"approximate": approximate}, opset=20)
    (got,) = _oracle(_graph("Gelu", X.shape, approximate=approximate), X)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("axis, bias, outputs", [(-1, True, 1), (1, False, 1), (2, True, 3)])
def test_layer_norm(axis, bias, outputs):
    a = axis % X.ndim
    norm = X.shape[a:]
    stat = X.shape[:a] + (1,) * (X.ndim - a)
    graph = _graph("LayerNormalization", X.shape, [norm] * (2 if bias else 1),
                   [(X.shape, "float32")] + [(stat, "float32")] * (outputs - 1), axis=axis, epsilon=1e-3)
    weights = {w.name: w.array(graph.desc[w.name]) for w in graph.weights}
    want = onnxruntime_node("LayerNormalization", [X, *weights.values()], outputs, {"axis": axis, "epsilon": 1e-3},
                            opset=17)
    for got, w in zip(_oracle(graph, X), want):
        np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-5)
