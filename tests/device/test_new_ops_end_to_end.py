"""Small ONNX models of the production-model ops: import, compile, runtime v1 and v2, against onnxruntime.

One model per op family (activations, indexing, normalisation, reductions, spatial), built with
onnx.helper; constant operands are initializers, so the front end's operand-to-attribute moves
are exercised too.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from zcspec.checks.errors import OracleUnavailable
from zcspec.checks.oracle import oracle_outputs
from zcspec.impl.compiler.frontend.onnx_import import from_model
from zcspec.impl.platform.errors import BadInput
from tests.helpers.onnx_e2e import check_model, ort_outputs
from tests.helpers.onnx_factory import init, model, vi

RNG = np.random.default_rng(7)
I64 = np.int64


def f32(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, size=shape).astype(np.float32)


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


def op_types(graph):
    return {n.op_type for n in graph.nodes}


def test_activations_opset20():
    nodes = [
        node("Clip", ["x", "lo", "hi"], ["c"]),
        node("HardSigmoid", ["c"], ["hs"], alpha=0.3, beta=0.4),
        node("HardSwish", ["x"], ["hw"]),
        node("Pow", ["hs", "two"], ["p"]),
        node("Abs", ["x"], ["ax"]),
        node("Sqrt", ["ax"], ["sq"]),
        node("Erf", ["sq"], ["e"]),
        node("Gelu", ["x"], ["g"], approximate="tanh"),
        node("Gelu", ["p"], ["g2"]),
        node("Cast", ["hw"], ["cond"], to=TensorProto.BOOL),
        node("Where", ["cond", "e", "g"], ["w"]),
        node("Cast", ["w"], ["wi"], to=TensorProto.INT64),
    ]
    inits = [init("lo", np.float32(-0.5)), init("hi", np.float32(1.5)), init("two", np.float32(2.0))]
    m = model(nodes, [vi("x", [2, 3, 4, 5])], ["g2", "w", "wi", "c"], inits, opset=20)
    graph = check_model(m, {"x": f32(2, 3, 4, 5, lo=-6, hi=6)}, rtol=1e-5, atol=1e-6)
    assert {"Clip", "Gelu", "Where", "Erf", "Pow"} <= op_types(graph)


def test_clip_opset6_attributes():
    m = model([node("Clip", ["x"], ["y"], min=-0.25, max=0.5)], [vi("x", [3, 4])], ["y"], opset=6)
    check_model(m, {"x": f32(3, 4)})


def test_indexing_and_shape_opset13():
    """Shape folds to a constant (never a runtime op); Gather reads a runtime index input."""
    nodes = [
        node("Gather", ["x", "idx"], ["g"], axis=1),             # (2, 2, 4) with indices [-1, 0]
        node("Gather", ["x", "k"], ["gk"], axis=-1),             # runtime int64 indices
        node("Shape", ["x"], ["shape"]),
        node("Slice", ["x", "st", "en", "ax", "sp"], ["sl"]),    # negative step on axis 2: (2, 3, 1)
        node("Expand", ["sl", "shape"], ["ex"]),
        node("Tile", ["g", "rep"], ["t"]),
        node("Pad", ["x", "pads", "val"], ["pc"], mode="constant"),
        node("Pad", ["x", "pads"], ["pr"], mode="reflect"),
        node("Pad", ["x", "pads"], ["pe"], mode="edge"),
    ]
    inits = [init("idx", np.array([-1, 0], I64)), init("st", np.array([-1], I64)), init("en", np.array([-(2**63)], I64)),
             init("ax", np.array([2], I64)), init("sp", np.array([-4], I64)), init("rep", np.array([1, 2, 1], I64)),
             init("pads", np.array([0, 1, 2, 1, 0, 1], I64)), init("val", np.float32(3.5))]
    m = model(nodes, [vi("x", [2, 3, 4]), vi("k", [2, 2], TensorProto.INT64)],
              ["g", "gk", "ex", "t", "pc", "pr", "pe"], inits, opset=13)
    graph = check_model(m, {"x": f32(2, 3, 4), "k": np.array([[0, -1], [3, -4]], I64)})
    assert "Shape" not in op_types(graph)


def test_pad_opset18_axes():
    m = model([node("Pad", ["x", "pads", "", "axes"], ["y"], mode="edge")], [vi("x", [2, 3, 4])], ["y"],
              [init("pads", np.array([1, 2, 0, 1], I64)), init("axes", np.array([-1, 0], I64))], opset=18)
    check_model(m, {"x": f32(2, 3, 4)})


def test_normalisation():
    nodes = [node("LayerNormalization", ["x", "s", "b"], ["ln"], axis=-2, epsilon=1e-3),
             node("LayerNormalization", ["x", "s1"], ["ln1", "mean", "inv"]),
             node("InstanceNormalization", ["x", "c", "cb"], ["inorm"], epsilon=1e-4)]
    inits = [init("s", f32(4, 5)), init("b", f32(4, 5)), init("s1", f32(5)), init("c", f32(3)), init("cb", f32(3))]
    m = model(nodes, [vi("x", [2, 3, 4, 5])], ["ln", "ln1", "mean", "inv", "inorm"], inits, opset=17)
    check_model(m, {"x": f32(2, 3, 4, 5)}, atol=1e-4)


@pytest.mark.parametrize("opset", [13, 18])
def test_reductions(opset):
    ops = ["ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2"]
    nodes, inits = [], []
    for i, op in enumerate(ops):
        axes = [[1], [-1, 0], [], [2], [0, 2]][i]
        if opset >= 18:
            ins = ["x", f"a{i}"] if axes else ["x"]
            inits += [init(f"a{i}", np.array(axes, I64))] if axes else []
            nodes.append(node(op, ins, [f"y{i}"], keepdims=i % 2, noop_with_empty_axes=0))
        else:
            nodes.append(node(op, ["x"], [f"y{i}"], keepdims=i % 2, **({"axes": axes} if axes else {})))
    if opset >= 18:   # no axes and noop_with_empty_axes: the identity
        nodes.append(node("ReduceMax", ["x"], ["noop"], noop_with_empty_axes=1))
    outs = [f"y{i}" for i in range(len(ops))] + (["noop"] if opset >= 18 else [])
    m = model(nodes, [vi("x", [2, 3, 4])], outs, inits, opset=opset)
    check_model(m, {"x": f32(2, 3, 4, lo=0.5, hi=1.5)}, rtol=1e-5)


def test_spatial_resize_and_conv_transpose():
    nodes = [
        node("Resize", ["x", "", "sc"], ["up"], mode="nearest", nearest_mode="round_prefer_ceil",
             coordinate_transformation_mode="asymmetric"),
        node("Resize", ["x", "", "", "sz"], ["lin"], mode="linear", coordinate_transformation_mode="half_pixel"),
        node("Resize", ["x", "", "sc"], ["ac"], mode="linear", coordinate_transformation_mode="align_corners"),
        node("ConvTranspose", ["x", "w", "b"], ["ct"], strides=[2, 2], pads=[1, 0, 0, 1], output_padding=[1, 0],
             group=1),
        node("ConvTranspose", ["x", "wg"], ["ctg"], group=2, dilations=[2, 1]),
    ]
    inits = [init("sc", np.array([1, 1, 2.0, 1.5], np.float32)), init("sz", np.array([1, 2, 7, 3], I64)),
             init("w", f32(2, 3, 3, 3)), init("b", f32(3)), init("wg", f32(2, 2, 2, 3))]
    m = model(nodes, [vi("x", [1, 2, 5, 6])], ["up", "lin", "ac", "ct", "ctg"], inits, opset=13)
    check_model(m, {"x": f32(1, 2, 5, 6)}, atol=1e-4)


def test_resize_opset10():
    m = model([node("Resize", ["x", "sc"], ["y"], mode="nearest")], [vi("x", [1, 1, 3, 4])], ["y"],
              [init("sc", np.array([1, 1, 1.7, 2.5], np.float32))], opset=10)
    check_model(m, {"x": f32(1, 1, 3, 4)})


def test_operand_known_only_at_run_time_is_refused_naming_op_and_operand():
    """A shape-deciding one; Clip's bounds decide only values and may be run-time inputs
    (tests/frontend/test_runtime_operands.py)."""
    m = model([node("Pad", ["x", "p"], ["y"])], [vi("x", [3]), vi("p", [2], TensorProto.INT64)], ["y"], opset=13)
    with pytest.raises(BadInput, match=r"Pad.*'pads' decides the output's shape") as e:
        from_model(m)
    assert e.value.node == "Pad_0"


@pytest.mark.parametrize("op,nodes_inits", [
    ("Expand", ([node("Expand", ["x", "s"], ["y"])], [init("s", np.array([2, 3, 4], I64))])),
    ("Tile", ([node("Tile", ["x", "r"], ["y"])], [init("r", np.array([2, 1, 3], I64))])),
    ("Pad", ([node("Pad", ["x", "p", "", "a"], ["y"], mode="reflect")], [init("p", np.array([1, 2], I64)),
                                                                          init("a", np.array([-1], I64))])),
    ("ReduceL2", ([node("ReduceL2", ["x", "a"], ["y"], keepdims=0)], [init("a", np.array([0, -1], I64))])),
    ("ReduceMean", ([node("ReduceMean", ["x"], ["y"])], [])),
    ("ReduceMin", ([node("ReduceMin", ["x"], ["y"], noop_with_empty_axes=1)], [])),
    ("Clip", ([node("Clip", ["x", "", "hi"], ["y"])], [init("hi", np.float32(0.3))])),
    ("Gather", ([node("Gather", ["x", "i"], ["y"], axis=-1)], [init("i", np.array([[3, -1]], I64))])),
])
def test_oracle_exports_opset18_forms_at_opset9(op, nodes_inits):
    """Operands the front end moved into attributes go back as opset-9 inputs or attributes."""
    nodes, inits = nodes_inits
    m = model(nodes, [vi("x", [1, 3, 4])], ["y"], inits, opset=18)
    graph = from_model(m)
    feeds = {"x": f32(1, 3, 4, lo=0.2)}
    want = ort_outputs(m, feeds)
    np.testing.assert_allclose(oracle_outputs(graph, feeds)["y"], want["y"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op,opset,extra", [("HardSwish", 14, {}), ("Gelu", 20, {}),
                                           ("LayerNormalization", 17, {"scale": True})])
def test_oracle_writes_out_ops_opset9_lacks(op, opset, extra):
    """checks/oracle_forms.py spells these in opset-9 arithmetic: held to onnxruntime on the model."""
    ins, inits = (["x", "s"], [init("s", f32(4))]) if extra.get("scale") else (["x"], [])
    m = model([node(op, ins, ["y"])], [vi("x", [1, 3, 4])], ["y"], inits, opset=opset)
    feeds = {"x": f32(1, 3, 4)}
    np.testing.assert_allclose(oracle_outputs(from_model(m), feeds)["y"], ort_outputs(m, feeds)["y"], rtol=1e-5,
                               atol=1e-6)


def test_oracle_refuses_resize_which_opset9_lacks():
    ins, inits = ["x", "", "s"], [init("s", np.array([1, 1, 2], np.float32))]
    graph = from_model(model([node("Resize", ins, ["y"])], [vi("x", [1, 3, 4])], ["y"], inits, opset=13))
    with pytest.raises(OracleUnavailable, match="Resize"):
        oracle_outputs(graph, {"x": f32(1, 3, 4)})
