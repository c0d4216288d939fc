"""A complex Pad with a constant value is refused naming the element type (the value would become an
attribute, which holds no complex number); a complex Pad that pads with the default zero imports."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from zcspec.checks.models import load_graph
from zcspec.impl.compiler.frontend.errors import UnsupportedFeatureError


def _pad(tmp_path, with_value: bool) -> str:
    inits = [numpy_helper.from_array(np.array([1, 1], np.int64), "pads")]
    inputs = ["x", "pads"]
    if with_value:
        inits.append(numpy_helper.from_array(np.array(1.5 + 2j, np.complex64), "value"))
        inputs.append("value")
    node = helper.make_node("Pad", inputs, ["y"], name="the_pad")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.COMPLEX64, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.COMPLEX64, [5])], initializer=inits)
    path = str(tmp_path / f"pad_{with_value}.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def test_a_complex_constant_value_is_refused_naming_node_and_type(tmp_path):
    with pytest.raises(UnsupportedFeatureError) as info:
        load_graph(_pad(tmp_path, True))
    assert "the_pad" in str(info.value) and "complex64" in str(info.value)


def test_a_complex_pad_with_the_default_value_imports(tmp_path):
    graph = load_graph(_pad(tmp_path, False))
    assert [n.op_type for n in graph.nodes if n.op_type == "Pad"] == ["Pad"]
