"""Bad ONNX input raises the right GraphError subclass with .file/.node/.tensor set."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper
from tests.helpers.onnx_factory import init, light_path, malformed, model, save, vi

from zcspec.impl.compiler.errors import CycleError, GraphError, MissingTensorError, UnsupportedOpError
from zcspec.impl.compiler.frontend.errors import (
    FoldError,
    InputShapeError,
    OnnxFileError,
    ShapeInferenceError,
    UnknownInputError,
    UnsupportedFeatureError,
)
from zcspec.impl.compiler.frontend.onnx_import import from_model, load_onnx


@pytest.mark.parametrize("cut", [10, 1000, 3000, -1])
def test_truncated_file_names_the_file(tmp_path, cut):
    data = open(light_path("bvlc_alexnet"), "rb").read()
    path = tmp_path / "trunc.onnx"
    path.write_bytes(data[:cut])
    with pytest.raises(OnnxFileError) as e:
        load_onnx(str(path))
    assert e.value.file == str(path) and str(path) in str(e.value)
    assert not isinstance(e.value.__cause__, GraphError)  # chained from the protobuf error


def test_empty_file_is_not_a_model(tmp_path):
    path = tmp_path / "empty.onnx"
    path.write_bytes(b"")
    with pytest.raises(OnnxFileError, match="no graph"):
        load_onnx(str(path))


def test_missing_file(tmp_path):
    with pytest.raises(OnnxFileError) as e:
        load_onnx(str(tmp_path / "nope.onnx"))
    assert e.value.file.endswith("nope.onnx")


@pytest.mark.parametrize("kind, error", [
    ("cycle", CycleError),
    ("missing", MissingTensorError),
    ("unknown_op", UnsupportedOpError),
    ("dynamic", InputShapeError),
])
def test_malformed_models_through_load_onnx(tmp_path, kind, error):
    m, culprit = malformed(kind)
    path = save(m, tmp_path, f"{kind}.onnx")
    with pytest.raises(error) as e:
        load_onnx(path)
    assert e.value.file == path
    for field in ("node", "tensor"):
        if field in culprit:
            assert getattr(e.value, field) == culprit[field]
            assert repr(culprit[field]) in str(e.value)
    if kind == "cycle":
        assert set(culprit["names"]) <= set(e.value.cycle)
    if kind == "dynamic":
        assert "--shape x=1x4" in str(e.value)


def test_shape_fixes_a_dynamic_input_and_reaches_every_tensor():
    m, _ = malformed("dynamic")
    graph = from_model(m, shapes={"x": (8, 4)})
    assert graph.desc["x"].shape == (8, 4) and graph.desc["y"].shape == (8, 4)


def test_shape_for_an_unknown_input():
    m, _ = malformed("dynamic")
    with pytest.raises(UnknownInputError) as e:
        from_model(m, shapes={"x": (1, 4), "nope": (1,)})
    assert e.value.tensor == "nope" and e.value.known == ("x",)


def test_shape_for_an_initializer_says_so():
    nodes = [helper.make_node("Add", ["x", "w"], ["y"])]
    m = model(nodes, [vi("x", [1, 2]), vi("w", [1, 2])], ["y"], [init("w", np.ones((1, 2), np.float32))], ir_version=3, opset=9)
    with pytest.raises(UnknownInputError, match="initializer"):
        from_model(m, shapes={"w": (1, 2)})


@pytest.mark.parametrize("given, match", [((1, 4, 1), "rank 3"), ((2, 5), "dimension 1 = 5")])
def test_shape_contradicting_the_model(given, match):
    m, _ = malformed("dynamic")
    with pytest.raises(InputShapeError, match=match) as e:
        from_model(m, shapes={"x": given})
    assert e.value.tensor == "x"


def test_unknown_rank_input_needs_shape():
    m = model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", None)], ["y"])
    with pytest.raises(InputShapeError, match="rank"):
        from_model(m)
    assert from_model(m, shapes={"x": (2, 3)}).desc["y"].shape == (2, 3)


def test_incompatible_shapes_fail_inference_naming_the_node():
    nodes = [helper.make_node("Add", ["x", "z"], ["y"], name="bad_add")]
    m = model(nodes, [vi("x", [1, 2]), vi("z", [3, 5])], ["y"])
    with pytest.raises(ShapeInferenceError) as e:
        from_model(m, file="m.onnx")
    assert e.value.node == "bad_add" and e.value.file == "m.onnx"


def test_known_onnx_op_outside_the_ir_is_unsupported_after_folding():
    nodes = [helper.make_node("Sin", ["x"], ["y"], name="sin")]
    with pytest.raises(UnsupportedOpError) as e:
        from_model(model(nodes, [vi("x", [2])], ["y"]))
    assert e.value.node == "sin" and e.value.op_type == "Sin"


def test_a_tensor_written_twice():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="a"), helper.make_node("Relu", ["x"], ["y"], name="b")]
    with pytest.raises(GraphError, match="written more than once") as e:
        from_model(model(nodes, [vi("x", [2])], ["y"]))
    assert e.value.tensor == "y"


def test_missing_graph_output():
    m = model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [2])], ["y", "absent"])
    with pytest.raises(MissingTensorError) as e:
        from_model(m)
    assert e.value.tensor == "absent"


def test_dropout_in_training_mode_is_an_error():
    nodes = [helper.make_node("Dropout", ["x", "r", "t"], ["y"], name="drop")]
    inits = [init("r", np.array(0.5, np.float32)), init("t", np.array(True))]
    with pytest.raises(UnsupportedFeatureError, match="Dropout: training mode with a non-zero ratio") as e:
        from_model(model(nodes, [vi("x", [2])], ["y"], inits))
    assert e.value.node == "drop" and "ratio=0.5" in str(e.value)


def test_tensor_attribute_on_a_remaining_node():
    t = helper.make_tensor("v", onnx.TensorProto.FLOAT, [1], [1.0])
    node = helper.make_node("Relu", ["x"], ["y"], name="r")
    node.attribute.append(helper.make_attribute("payload", t))
    with pytest.raises(GraphError, match="payload"):
        from_model(model([node], [vi("x", [2])], ["y"]))


def test_omitted_optional_input_before_a_given_one():
    nodes = [helper.make_node("Slice", ["x", "s", "e", "", "st"], ["y"], name="sl")]
    inits = [init(n, np.array([v], np.int64)) for n, v in (("s", 0), ("e", 2), ("st", 1))]
    with pytest.raises(UnsupportedFeatureError, match="positional") as e:
        from_model(model(nodes, [vi("x", [4])], ["y"], inits))
    assert e.value.node == "sl"


def test_folding_failure_names_the_node():
    nodes = [helper.make_node("Reshape", ["a", "s"], ["b"], name="bad_reshape"), helper.make_node("Add", ["x", "b"], ["y"])]
    inits = [init("a", np.arange(6, dtype=np.float32)), init("s", np.array([4, 4], np.int64))]
    with pytest.raises((FoldError, ShapeInferenceError)) as e:
        from_model(model(nodes, [vi("x", [4, 4])], ["y"], inits))
    assert e.value.node == "bad_reshape"
