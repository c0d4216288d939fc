"""The oracle's BatchNormalization: onnx.reference (1.23) evaluates an opset-9 BatchNormalization with
the batch's own statistics (its momentum default selects the training branch) and cannot evaluate
``spatial``, so an inference-mode node exported at opset 9 came out wrong (opset 15, training_mode=0:
off by 0.05 on the front-end case batchnorm_opset15_training_mode_0) or unjudged (spatial=0). The oracle
now writes it out as (x - mean) / sqrt(var + epsilon) * scale + bias."""
from __future__ import annotations

import numpy as np
import pytest

from zcspec.checks.errors import OracleUnavailable
from zcspec.checks.oracle import oracle_outputs
from zcspec.impl.compiler.builder import GraphBuilder


def _graph(x_shape, param_shape, outputs=1, **attrs):
    rng = np.random.default_rng(3)
    b = GraphBuilder("bn")
    x = b.input("x", x_shape)
    params = [b.weight(n, (rng.random(param_shape) + lo).astype(np.float32))
              for n, lo in (("scale", 0.5), ("bias", -0.5), ("mean", -0.5), ("var", 0.5))]
    specs = [(x_shape, "float32")] + [(param_shape, "float32")] * (outputs - 1)
    b.output(*b.op("BatchNormalization", [x, *params], name="bn", outputs=specs, **attrs))
    return b.build()


def _expected(graph, x, spatial):
    w = {t.name: t for t in graph.weights}
    p = {n: w[n].array(graph.desc[n]).astype(np.float64) for n in ("scale", "bias", "mean", "var")}
    shape = (1, -1) + (1,) * (x.ndim - 2) if spatial else (1,) + p["scale"].shape
    s, b, m, v = (p[k].reshape(shape) for k in ("scale", "bias", "mean", "var"))
    eps = graph.node["bn"].attr("epsilon", 1e-5)
    return (x - m) / np.sqrt(v + eps) * s + b


@pytest.mark.parametrize("spatial, attrs", [(1, {}), (1, {"epsilon": 1e-2}), (0, {"spatial": 0, "epsilon": 1e-3})])
def test_inference_batchnorm_uses_the_given_statistics(spatial, attrs):
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 2)).astype(np.float32)
    graph = _graph(x.shape, (3,) if spatial else (3, 4, 2), **attrs)
    (got,) = oracle_outputs(graph, {"x": x}).values()
    np.testing.assert_allclose(got, _expected(graph, x, spatial), rtol=1e-5, atol=1e-5)


def test_training_mode_outputs_have_no_oracle():
    graph = _graph((2, 3, 2, 2), (3,), outputs=3)
    with pytest.raises(OracleUnavailable, match="training-mode outputs"):
        oracle_outputs(graph, {"x": np.ones((2, 3, 2, 2), np.float32)})
