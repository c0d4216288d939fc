"""Opset-correct semantics of the claimed ops, end to end (import, compile, both runtimes) against
onnxruntime, and the refusals that name exactly the unsupported feature (impl/compiler/op_limits.py)."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from tests.helpers.onnx_factory import init, model, vi

from zcspec.checks.conformance.cases import Case
from zcspec.checks.conformance.runner import run_case
from zcspec.checks.models import parse_shape
from zcspec.checks.oracle import oracle_outputs
from zcspec.impl.compiler.frontend.errors import RuntimeValueError, UnsupportedFeatureError
from zcspec.impl.compiler.frontend.onnx_import import from_model

ort.set_default_logger_severity(4)


def _ort(m: onnx.ModelProto, feeds: dict) -> list:
    m = onnx.ModelProto.FromString(m.SerializeToString())
    m.ir_version = min(m.ir_version, 9)
    for o in m.graph.output:   # onnxruntime wants no type rather than an undefined one
        if not o.type.tensor_type.elem_type:
            o.CopyFrom(helper.make_empty_tensor_value_info(o.name))
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _through_zcspec(m: onnx.ModelProto, feeds: dict, *, expected=None):
    """run_case on ``m``: both runtimes against onnxruntime (or ``expected``); returns the Result."""
    want = expected if expected is not None else _ort(m, feeds)
    names = tuple(v.name for v in m.graph.input)
    case = Case("t", m, tuple(feeds[n] for n in names), tuple(np.asarray(w) for w in want), 1e-5, 1e-6,
                tuple(sorted({n.op_type for n in m.graph.node})))
    return run_case(case)


def _typed(name, array):
    return vi(name, list(array.shape), helper.np_dtype_to_tensor_dtype(array.dtype))


def _one(op, feeds: dict, out_rank=None, *, opset=13, outputs=("y",), **attrs) -> onnx.ModelProto:
    node = helper.make_node(op, list(feeds), list(outputs), **attrs)
    return model([node], [_typed(n, a) for n, a in feeds.items()], list(outputs), opset=opset)


RNG = np.random.default_rng(0)
X3 = RNG.standard_normal((2, 3, 4)).astype(np.float32)


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_softmax_follows_the_models_opset(opset, axis):
    attrs = {} if axis is None else {"axis": axis}
    m = _one("Softmax", {"x": X3}, opset=opset, **attrs)
    r = _through_zcspec(m, {"x": X3})
    assert r.status == "pass", r.detail
    node = next(n for n in from_model(m).nodes if n.op_type == "Softmax")
    assert node.attr("_opset") == (opset if opset >= 13 else None)


@pytest.mark.parametrize("op", ["Max", "Min", "Sum", "Mean"])
@pytest.mark.parametrize("n", [1, 3])
def test_variadic_ops_take_any_number_of_inputs(op, n):
    shapes = [(2, 3, 4), (3, 1), (4,)][:n]
    feeds = {f"x{i}": RNG.standard_normal(s).astype(np.float32) for i, s in enumerate(shapes)}
    assert _through_zcspec(_one(op, feeds), feeds).status == "pass"


@pytest.mark.parametrize("axes, keepdims, noop", [((), 1, 0), ((), 0, 0), ((), 1, 1), ((1,), 0, 0), ((-1, 0), 1, 0)])
def test_reduce_sum_axes_as_a_runtime_input(axes, keepdims, noop):
    feeds = {"x": X3, "axes": np.array(axes, np.int64)}
    want = _ort(_one("ReduceSum", feeds, keepdims=keepdims, noop_with_empty_axes=noop), feeds)
    # The output's shape depends on the axes' value: declared, as ONNX's node tests declare it.
    m = _one("ReduceSum", feeds, keepdims=keepdims, noop_with_empty_axes=noop)
    m.graph.output[0].CopyFrom(_typed("y", want[0]))
    r = _through_zcspec(m, feeds, expected=want)
    assert r.status == "pass" and not r.frozen, r.detail


def test_reduce_sum_over_a_zero_sized_input():
    feeds = {"x": np.zeros((2, 0, 4), np.float32), "axes": np.array([1], np.int64)}
    m = _one("ReduceSum", feeds, keepdims=1)
    m.graph.output[0].CopyFrom(vi("y", [2, 1, 4]))
    r = _through_zcspec(m, feeds, expected=[np.zeros((2, 1, 4), np.float32)])
    assert r.status == "pass", r.detail


def test_a_zero_sized_output():
    feeds = {"x": X3}
    node = helper.make_node("Slice", ["x", "s", "e"], ["y"])
    m = model([node], [_typed("x", X3)], ["y"], [init("s", np.array([5], np.int64)), init("e", np.array([9], np.int64))])
    graph = from_model(m)
    assert graph.desc["y"].shape == (0, 3, 4)
    assert _through_zcspec(m, feeds, expected=[X3[5:9]]).status == "pass"


def test_batch_norm_training_mode_uses_the_batch_statistics():
    """training_mode=1 normalises with the batch's mean and variance and moves the running ones by momentum."""
    feeds = {"x": X3, **{k: RNG.uniform(0.5, 1.5, 3).astype(np.float32) for k in ("s", "b", "m", "v")}}
    m = _one("BatchNormalization", feeds, opset=15, outputs=("y", "mean", "var"), training_mode=1, momentum=0.8)
    assert _through_zcspec(m, feeds).status == "pass"


def _dropout(inputs, outputs=("y",), *, mask_reader=False):
    nodes = [helper.make_node("Dropout", list(inputs), list(outputs), name="drop")]
    outs = list(outputs)
    if mask_reader:
        nodes.append(helper.make_node("Cast", [outputs[1]], ["m"], to=TensorProto.FLOAT))
        outs = [outputs[0], "m"]
    ins = [_typed("x", X3)] + [vi(n, [], TensorProto.FLOAT if n == "r" else TensorProto.BOOL) for n in inputs[1:]]
    return model(nodes, ins, outs)


def test_inference_dropout_ignores_a_runtime_ratio():
    graph = from_model(_dropout(["x", "r"]))
    assert [n.op_type for n in graph.nodes] == ["Data", "Data", "Dropout", "NetOutput"]
    drop = next(n for n in graph.nodes if n.name == "drop")
    assert drop.inputs == ("x",) and drop.attr("ratio") is None


def test_a_runtime_training_mode_names_the_input_to_freeze():
    with pytest.raises(RuntimeValueError, match="Dropout: a shape- or size-deciding operand known only at run time") as e:
        from_model(_dropout(["x", "r", "t"]))
    assert e.value.inputs == ("t",) and "'training_mode'" in str(e.value)
    with pytest.raises(UnsupportedFeatureError, match="training mode with a non-zero ratio"):
        from_model(_dropout(["x", "r", "t"]), values={"t": True, "r": 0.5})


def test_training_dropout_with_ratio_zero_is_the_identity_and_its_mask_all_true():
    m = _dropout(["x", "r", "t"], ("y", "mask"), mask_reader=True)
    graph = from_model(m, values={"t": True, "r": 0.0})
    assert [n.op_type for n in graph.nodes] == ["Data", "Dropout", "NetOutput"]
    assert graph.weight["m"].array(graph.desc["m"]).tolist() == np.ones(X3.shape).tolist()


def test_an_inference_dropouts_mask_output_is_a_constant():
    m = _dropout(["x"], ("y", "mask"))
    want = [X3, np.ones(X3.shape, bool)]
    assert _through_zcspec(m, {"x": X3}, expected=want).status == "pass"


def test_a_runtime_reshape_shape_is_refused_naming_the_input_then_frozen():
    feeds = {"x": X3, "shape": np.array([4, -1], np.int64)}
    m = _one("Reshape", feeds)
    with pytest.raises(RuntimeValueError, match="Reshape: a shape- or size-deciding operand known only at run time") as e:
        from_model(m, shapes={"x": X3.shape, "shape": (2,)})
    assert e.value.inputs == ("shape",) and "--value" in str(e.value)
    r = _through_zcspec(m, feeds, expected=[X3.reshape(4, -1)])
    assert r.status == "pass" and r.frozen == ("shape",)


def test_a_shape_that_depends_on_runtime_operands_names_them():
    feeds = {"x": X3, "starts": np.array([1], np.int64), "ends": np.array([2], np.int64)}
    with pytest.raises(RuntimeValueError, match="Slice: a shape- or size-deciding operand known only at run time") as e:
        from_model(_one("Slice", feeds))
    assert e.value.inputs == ("ends", "starts") and "the shape of 'y'" in str(e.value)


def test_a_sequence_input_is_refused_naming_its_type():
    x = helper.make_tensor_sequence_value_info("x", TensorProto.FLOAT, None)
    m = model([helper.make_node("Identity", ["x"], ["y"], name="id")], [x],
              [helper.make_tensor_sequence_value_info("y", TensorProto.FLOAT, None)])
    with pytest.raises(UnsupportedFeatureError, match=r"Identity: sequence, map and optional values .*seq\(tensor"):
        from_model(m)


def test_a_sub_byte_tensor_is_refused_by_an_op_not_meant_for_them():
    """Cast (and Transpose, and the views) take sub-byte tensors (tests/frontend/test_sub_byte_types.py); Pad not."""
    cast = helper.make_node("Cast", ["x"], ["x4"], to=TensorProto.INT4)
    pad = helper.make_node("Pad", ["x4", "p"], ["y"])
    m = model([cast, pad], [_typed("x", X3)], ["y"], [init("p", np.array([0, 0, 1] * 2, np.int64))], opset=21)
    with pytest.raises(UnsupportedFeatureError, match="Pad: sub-byte element types not supported .*int4"):
        from_model(m)


def test_legacy_broadcast_is_rewritten_as_numpy_broadcasting():
    """The opset 1-6 attributes are gone after import (tests/frontend/test_legacy_broadcast.py has the rest)."""
    a, b = vi("a", [2, 3]), vi("b", [3])
    m = model([helper.make_node("Add", ["a", "b"], ["y"], broadcast=1, axis=1)], [a, b], [vi("y", [2, 3])], opset=6)
    add = next(n for n in from_model(m).nodes if n.op_type == "Add")
    assert not {"broadcast", "axis"} & set(dict(add.attrs))


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_max_pool_of_integers(dtype):
    x = RNG.integers(0 if dtype == np.uint8 else -100, 100, (1, 2, 5, 5)).astype(dtype)
    m = _one("MaxPool", {"x": x}, opset=12, kernel_shape=[2, 2], pads=[1, 1, 0, 0])
    assert _through_zcspec(m, {"x": x}).status == "pass"


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_the_oracle_keeps_an_opset13_softmax_along_its_axis(axis):
    """checks/oracle.py exports at opset 9, where Softmax means something else: it moves the axis last."""
    graph = from_model(_one("Softmax", {"x": X3}, axis=axis))
    (got,) = oracle_outputs(graph, {"x": X3}).values()
    e = np.exp(X3 - X3.max(axis=axis, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=axis, keepdims=True), rtol=1e-5)


def test_shape_takes_a_zero_sized_dimension():
    assert parse_shape("x=2x0x4") == ("x", (2, 0, 4))


def test_an_opset_without_shape_inference_is_named_not_blamed_on_runtime_values():
    m = model([helper.make_node("Concat", ["x", "x"], ["y"], axis=1)], [vi("x", [2, 3])], ["y"], opset=3)
    with pytest.raises(UnsupportedFeatureError, match="Concat: opsets 1-3 not supported .*opset 4 or later"):
        from_model(m)
    m = model([helper.make_node("Reshape", ["x"], ["y"], shape=[3, 2])], [vi("x", [2, 3])], ["y"], opset=1)
    with pytest.raises(UnsupportedFeatureError, match="Reshape: opsets 1-4 not supported"):
        from_model(m)


@pytest.mark.parametrize("is_test, refused", [(None, True), (0, True), (1, False)])
def test_before_opset_7_is_test_decides_training_mode(is_test, refused):
    attrs = {} if is_test is None else {"is_test": is_test}
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], **attrs)]
    m = model(nodes, [vi("x", [1, 2, 3])], ["y"], [init(n, np.ones(2, np.float32)) for n in "sbmv"], opset=6)
    if refused:
        with pytest.raises(UnsupportedFeatureError, match="BatchNormalization: training mode by is_test=0"):
            from_model(m)
    else:
        assert [n.op_type for n in from_model(m).nodes] == ["Data", "BatchNormalization", "NetOutput"]
