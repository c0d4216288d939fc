"""The ops issue 39's registry sweep asked for, end to end against onnxruntime: Log, Reciprocal, Floor,
the comparisons (bool outputs, numpy broadcasting), Not/And/Or and GlobalMaxPool, through the front end,
the compiler and both runtimes (``check_model``); and the refusal of ops zcspec does not take (another
domain's, quantization's), which must say whose op it is and what to do.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from zcspec.impl.compiler import op_limits
from zcspec.impl.compiler.errors import UnsupportedOpError
from zcspec.impl.compiler.frontend import constant_fold
from zcspec.impl.compiler.frontend.errors import UnsupportedFeatureError
from zcspec.impl.compiler.frontend.onnx_import import from_model
from tests.helpers.onnx_e2e import check_model
from tests.helpers.onnx_factory import init, model, vi

RNG = np.random.default_rng(39)
B, I64 = TensorProto.BOOL, TensorProto.INT64


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


def test_log_reciprocal_floor_with_their_edge_values():
    """log(0) = -inf, log(<0) = NaN, 1/0 = inf, floor of negatives and halves, as onnxruntime gives them."""
    x = np.concatenate([RNG.uniform(-3, 3, 20), [0.0, -0.0, -1.0, 2.5, -2.5, 1e-30]]).astype(np.float32).reshape(2, 13)
    nodes = [node("Log", ["x"], ["l"]), node("Reciprocal", ["x"], ["r"]), node("Floor", ["x"], ["f"]),
             node("Abs", ["x"], ["a"]), node("Log", ["a"], ["la"]), node("Floor", ["la"], ["fl"])]
    m = model(nodes, [vi("x", [2, 13])], ["l", "r", "f", "fl"], opset=13)
    graph = check_model(m, {"x": x}, rtol=1e-6, atol=0)
    assert {"Log", "Reciprocal", "Floor"} <= {n.op_type for n in graph.nodes}


@pytest.mark.parametrize("op", ["Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"])
@pytest.mark.parametrize("elem", [TensorProto.FLOAT, TensorProto.INT64])
def test_comparisons_broadcast_and_feed_where_and_cast(op, elem):
    """(2, 3, 4) against a (3, 1) weight and a (4,) input: bool out, read by Where, Cast and Not."""
    dtype = np.float32 if elem == TensorProto.FLOAT else np.int64
    a = RNG.integers(-2, 3, (2, 3, 4)).astype(dtype)
    b = RNG.integers(-2, 3, (4,)).astype(dtype)
    c = np.array([[0], [1], [-1]], dtype)
    nodes = [node(op, ["a", "b"], ["ab"]), node(op, ["c", "a"], ["ca"]),
             node("Where", ["ab", "a", "c"], ["w"]), node("Cast", ["ca"], ["cf"], to=TensorProto.FLOAT),
             node("Not", ["ab"], ["n"]), node("And", ["ab", "ca"], ["both"]), node("Or", ["n", "ca"], ["either"])]
    m = model(nodes, [vi("a", [2, 3, 4], elem), vi("b", [4], elem)],
              ["ab", "w", "cf", "n", "both", "either"], [init("c", c)], opset=13)
    graph = check_model(m, {"a": a, "b": b}, rtol=0, atol=0)
    ops = {n.op_type for n in graph.nodes}
    assert {op, "Where", "Cast", "Not", "And", "Or"} <= ops


def test_equal_of_bools_and_a_nan():
    """Equal takes bool tensors too; NaN equals nothing, itself included."""
    x = np.array([0.0, np.nan, 1.0, np.nan], np.float32)
    nodes = [node("Equal", ["x", "x"], ["self"]), node("Equal", ["self", "t"], ["same"]),
             node("Less", ["x", "x"], ["less"])]
    m = model(nodes, [vi("x", [4])], ["self", "same", "less"], [init("t", np.array([True, False, True, True]))],
              opset=11)
    check_model(m, {"x": x}, rtol=0, atol=0)


def test_run_time_one_hot_as_magika_builds_it():
    """magika's one-hot: Equal of the unsqueezed int input against a constant range, cast to float, MatMul."""
    nodes = [node("Unsqueeze", ["bytes", "axis"], ["u"]), node("Equal", ["u", "range"], ["hot"]),
             node("Cast", ["hot"], ["f"], to=TensorProto.FLOAT), node("MatMul", ["f", "w"], ["y"])]
    inits = [init("axis", np.array([-1], np.int64)), init("range", np.arange(257, dtype=np.int32)),
             init("w", RNG.standard_normal((257, 8)).astype(np.float32))]
    m = model(nodes, [vi("bytes", [1, 64], TensorProto.INT32)], ["y"], inits, opset=13)
    check_model(m, {"bytes": RNG.integers(0, 257, (1, 64)).astype(np.int32)}, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(2, 3, 5, 4), (1, 2, 7), (1, 1, 2, 3, 2)])
def test_global_max_pool(shape):
    m = model([node("GlobalMaxPool", ["x"], ["y"]), node("Neg", ["y"], ["z"])], [vi("x", list(shape))], ["y", "z"])
    check_model(m, {"x": RNG.standard_normal(shape).astype(np.float32)}, rtol=0, atol=0)


def test_another_domains_op_is_refused_naming_the_domain():
    """ddddocr common_old: onnxruntime's dynamic quantization left a com.microsoft DynamicQuantizeLSTM."""
    lstm = helper.make_node("DynamicQuantizeLSTM", ["x"], ["y"], name="LSTM_202_quant", domain="com.microsoft")
    m = model([lstm], [vi("x", [1, 2])], ["y"])
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    with pytest.raises(UnsupportedOpError) as err:
        from_model(m)
    text = str(err.value)
    assert "'LSTM_202_quant'" in text and "'DynamicQuantizeLSTM' of domain 'com.microsoft'" in text
    assert "onnxruntime's contrib ops" in text and "re-export without dynamic quantization" in text
    assert err.value.domain == "com.microsoft"


def test_an_op_named_like_a_claimed_one_in_another_domain_is_refused():
    """com.microsoft's Gelu is onnxruntime's, not ONNX's: the op table describes the default domain only."""
    gelu = helper.make_node("Gelu", ["x"], ["y"], name="g", domain="com.microsoft")
    m = model([gelu], [vi("x", [1, 2])], ["y"])
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    with pytest.raises(UnsupportedOpError, match="'Gelu' of domain 'com.microsoft'.*default-domain ops only"):
        from_model(m)


def test_a_default_domain_quantization_op_says_to_re_export():
    m = model([node("MatMulInteger", ["a", "b"], ["y"], name="mm")],
              [vi("a", [2, 3], TensorProto.UINT8), vi("b", [3, 4], TensorProto.UINT8)], ["y"], opset=13)
    with pytest.raises(UnsupportedOpError, match="'mm' has unsupported op type 'MatMulInteger': re-export without "
                                                 "dynamic quantization"):
        from_model(m)


def test_a_string_tensor_is_refused_naming_the_listed_feature():
    """Equal takes strings from opset 19; the IR's fixed-size tensors do not (op_limits' ``string`` entry)."""
    m = model([node("Equal", ["x", "y"], ["z"], name="eq")],
              [vi("x", [2], TensorProto.STRING), vi("y", [2], TensorProto.STRING)], ["z"], opset=19)
    feature = op_limits.find(op_limits.ANY_OP, "string").feature
    with pytest.raises(UnsupportedFeatureError, match=f"node 'x': {feature} not supported \\(tensor 'x'\\)"):
        from_model(m)


@pytest.mark.parametrize("op", ["Log", "Reciprocal", "Floor", "Equal", "Greater", "Less", "GreaterOrEqual",
                                "LessOrEqual", "Not", "And", "Or"])
def test_the_new_elementwise_ops_of_splats_fold_to_splats(op, monkeypatch):
    """A 2000 x 2000 splat through each op folds as a splat (constant_fold's element-wise shortcut): with
    full evaluation capped at 16 elements, only the shortcut can fold it."""
    monkeypatch.setattr(constant_fold, "MAX_FOLD_ELEMENTS", 16)
    two = np.array([2.0], np.float32)
    fill = {"Not": np.array([True]), "And": np.array([True]), "Or": np.array([False])}.get(op, two)
    ins = ["w"] if op in ("Log", "Reciprocal", "Floor", "Not") else ["w", "k"]
    k = fill.reshape(()) if op in ("And", "Or") else np.array(2.0, np.float32)
    nodes = [helper.make_node("ConstantOfShape", ["s"], ["w"], value=numpy_helper.from_array(fill)),
             node(op, ins, ["c"]), node("Cast", ["c"], ["cf"], to=TensorProto.FLOAT), node("Add", ["x", "cf"], ["y"])]
    inits = [init("s", np.array([2000, 2000], np.int64)), init("k", k)]
    graph = from_model(model(nodes, [vi("x", [2000, 2000])], ["y"], inits, opset=13))
    assert [n.op_type for n in graph.nodes] == ["Data", "Add", "NetOutput"]
    w = graph.weight["cf"]
    want = {"Log": np.log(2.0), "Reciprocal": 0.5, "Floor": 2.0, "Equal": 1.0, "Greater": 0.0, "Less": 0.0,
            "GreaterOrEqual": 1.0, "LessOrEqual": 1.0, "Not": 0.0, "And": 1.0, "Or": 0.0}[op]
    assert w.splat and np.frombuffer(w.data, np.float32)[0] == np.float32(want)
