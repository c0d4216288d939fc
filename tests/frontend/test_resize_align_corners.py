"""Resize with align_corners and scales: refused exactly where the output length is fractional.

There ONNX's reference (the data of its node tests) and onnxruntime (with the operator's text) map
coordinates over different lengths and give different results, so the front end refuses it
(op_limits' Resize entry "align-corners-fraction") instead of following either silently.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from tests.helpers.onnx_factory import init, model, vi
from zcspec.impl.compiler.frontend.errors import UnsupportedFeatureError
from zcspec.impl.compiler.frontend.onnx_import import from_model


def _resize(shape, scales, mode="align_corners"):
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], name="up", mode="linear",
                            coordinate_transformation_mode=mode)
    out = tuple(int(np.floor(n * s)) for n, s in zip(shape, scales))
    return model([node], [vi("x", shape)], [vi("y", out)], [init("scales", np.array(scales, np.float32))])


def test_a_fractional_output_length_is_refused_naming_the_axes():
    with pytest.raises(UnsupportedFeatureError,
                       match=r"Resize: align_corners with scales that give a fractional output length not supported "
                             r"\(axis 2: 2 x 0.6, axis 3: 4 x 0.6\)") as caught:
        from_model(_resize((1, 1, 2, 4), (1.0, 1.0, 0.6, 0.6)))
    assert caught.value.node == "up"


@pytest.mark.parametrize("shape, scales, mode", [
    ((1, 1, 2, 4), (1.0, 1.0, 2.0, 2.0), "align_corners"),     # whole lengths
    ((1, 1, 3, 3), (1.0, 1.0, 1 / 3, 1 / 3), "align_corners"),  # whole within float32's rounding of 1/3
    ((1, 1, 2, 4), (1.0, 1.0, 0.6, 0.6), "half_pixel"),         # the two agree off align_corners
])
def test_whole_lengths_and_other_modes_import(shape, scales, mode):
    graph = from_model(_resize(shape, scales, mode))
    assert [n.op_type for n in graph.nodes] == ["Data", "Resize", "NetOutput"]
