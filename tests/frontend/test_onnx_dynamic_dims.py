"""Dynamic dimensions as exporters write them: a name, ``?``, an absent value, -1 or 0. All are dynamic, all
take ``--shape``, and a declared -1 on an output or an intermediate does not contradict the fixed shapes."""
import pytest
from onnx import TensorProto, helper

from zcspec.impl.compiler.frontend.errors import InputShapeError
from zcspec.impl.compiler.frontend.onnx_import import from_model
from tests.helpers.onnx_factory import model, vi


def _relu(first_dim, *, output_dims=None):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [first_dim, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, output_dims)
    return model([helper.make_node("Relu", ["x"], ["t"]), helper.make_node("Relu", ["t"], ["y"])], [x], [y],
                 opset=13)


@pytest.mark.parametrize("first_dim", ["batch", "?", None, -1, 0])
def test_every_way_of_writing_a_dynamic_dim_takes_shape(first_dim):
    m = _relu(first_dim, output_dims=[-1, 3])
    with pytest.raises(InputShapeError, match=r"dimension 0 .* dynamic .*--shape x=1x3"):
        from_model(m)
    graph = from_model(m, shapes={"x": (5, 3)})
    assert graph.desc["x"].shape == (5, 3) and graph.desc["y"].shape == (5, 3)


def test_a_fixed_dim_still_disagrees_with_a_wrong_shape():
    with pytest.raises(InputShapeError, match="model fixes it to 3"):
        from_model(_relu(-1), shapes={"x": (5, 4)})


def test_a_declared_minus_one_in_the_value_info_is_not_held_against_the_inputs():
    m = _relu(-1, output_dims=[-1, 3])
    m.graph.value_info.append(vi("t", [-1, 3]))
    assert from_model(m, shapes={"x": (2, 3)}).desc["t"].shape == (2, 3)
