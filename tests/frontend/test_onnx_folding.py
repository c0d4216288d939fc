"""Constant folding: what folds, into which weights, without materialising splats."""
from __future__ import annotations

import time
import tracemalloc

import numpy as np
import onnx
import pytest
from onnx import helper
from tests.helpers.onnx_factory import init, model, vi

from zcspec.impl.compiler.frontend import constant_fold
from zcspec.impl.compiler.frontend.onnx_import import from_model


def const_of_shape(shape_name: str, out: str, value: float, dtype=np.float32):
    return helper.make_node("ConstantOfShape", [shape_name], [out],
                            value=onnx.numpy_helper.from_array(np.array([value], dtype)))


def test_huge_constant_of_shape_stays_a_splat():
    # 40000 x 40000 float32 is 6.4 GB: only a splat can import this in well under a second.
    nodes = [const_of_shape("s", "w", 0.25),
             helper.make_node("Unsqueeze", ["w", "ax"], ["w3"]),
             helper.make_node("Add", ["x", "w3"], ["y"])]
    inits = [init("s", np.array([40000, 40000], np.int64)), init("ax", np.array([0], np.int64))]
    m = model(nodes, [vi("x", [1, 40000, 40000])], ["y"], inits)
    tracemalloc.start()
    start = time.perf_counter()
    graph = from_model(m)
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert elapsed < 2.0 and peak < 64 << 20
    w = graph.weight["w3"]
    assert w.splat and np.frombuffer(w.data, np.float32)[0] == 0.25
    assert graph.desc["w3"].shape == (1, 40000, 40000) and graph.weight_bytes() == 6_400_000_000
    assert [n.op_type for n in graph.nodes] == ["Data", "Add", "NetOutput"]


def test_constant_node_and_arithmetic_on_initializers_fold_to_values():
    nodes = [helper.make_node("Constant", [], ["c"], value_floats=[1.0, 2.0, 3.0]),
             helper.make_node("Mul", ["a", "c"], ["ac"]),
             helper.make_node("Add", ["x", "ac"], ["y"])]
    m = model(nodes, [vi("x", [3])], ["y"], [init("a", np.array([4.0, 5.0, 6.0], np.float32))])
    graph = from_model(m)
    assert [n.op_type for n in graph.nodes] == ["Data", "Add", "NetOutput"]
    np.testing.assert_array_equal(graph.weight["ac"].array(graph.desc["ac"]), [4.0, 10.0, 18.0])
    assert "a" not in graph.weight and "c" not in graph.weight  # intermediate constants are not kept


def test_elementwise_on_splats_stays_a_splat():
    nodes = [const_of_shape("s", "w", 2.0), helper.make_node("Mul", ["w", "three"], ["w6"]),
             helper.make_node("Add", ["x", "w6"], ["y"])]
    inits = [init("s", np.array([1000, 1000], np.int64)), init("three", np.array(3.0, np.float32))]
    graph = from_model(model(nodes, [vi("x", [1000, 1000])], ["y"], inits))
    w = graph.weight["w6"]
    assert w.splat and np.frombuffer(w.data, np.float32)[0] == 6.0


def test_shape_chain_of_a_fixed_dynamic_input_folds_into_reshape():
    # The pattern of exported models: Reshape(x, Concat(Gather(Shape(x), 0), [-1])).
    nodes = [helper.make_node("Shape", ["x"], ["sh"]),
             helper.make_node("Gather", ["sh", "zero"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "ax"], ["n1"]),
             helper.make_node("Concat", ["n1", "minus1"], ["target"], axis=0),
             helper.make_node("Reshape", ["x", "target"], ["y"], name="flat")]
    inits = [init("zero", np.array(0, np.int64)), init("ax", np.array([0], np.int64)),
             init("minus1", np.array([-1], np.int64))]
    m = model(nodes, [vi("x", ["N", 3, 4, 4])], ["y"], inits)
    graph = from_model(m, shapes={"x": (2, 3, 4, 4)})
    assert [n.op_type for n in graph.nodes] == ["Data", "Reshape", "NetOutput"]
    flat = graph.node["flat"]
    assert flat.inputs == ("x",) and flat.attr("shape") == (2, -1)
    assert graph.desc["y"].shape == (2, 48) and graph.weights == ()


def test_unused_initializers_are_dropped():
    m = model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [2])], ["y"],
              [init("unused", np.ones(3, np.float32))])
    assert from_model(m).weights == ()


def test_ir_v3_initializers_listed_as_inputs_are_weights_not_data():
    nodes = [helper.make_node("Add", ["x", "b"], ["y"])]
    m = model(nodes, [vi("x", [2]), vi("b", [2])], ["y"], [init("b", np.array([1.0, 2.0], np.float32))],
              ir_version=3, opset=9)
    graph = from_model(m)
    assert graph.inputs == ("x",) and [w.name for w in graph.weights] == ["b"]


def test_constant_graph_output_becomes_a_weight_read_by_netoutput():
    nodes = [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["k"], ["kn"])]
    m = model(nodes, [vi("x", [2])], ["y", "kn"], [init("k", np.array([1.0, -2.0], np.float32))])
    graph = from_model(m)
    assert graph.outputs == ("y", "kn")
    np.testing.assert_array_equal(graph.weight["kn"].array(graph.desc["kn"]), [-1.0, 2.0])


def test_large_constant_computations_stay_in_the_graph(monkeypatch):
    monkeypatch.setattr(constant_fold, "MAX_FOLD_ELEMENTS", 4)
    nodes = [helper.make_node("Add", ["a", "b"], ["ab"], name="big_add"), helper.make_node("Add", ["x", "ab"], ["y"])]
    inits = [init("a", np.arange(6, dtype=np.float32)), init("b", np.ones(6, np.float32))]
    graph = from_model(model(nodes, [vi("x", [6])], ["y"], inits))
    assert graph.node["big_add"].inputs == ("a", "b") and {w.name for w in graph.weights} == {"a", "b"}


def test_random_ops_are_not_folded():
    nodes = [helper.make_node("RandomNormal", [], ["r"], shape=[2], name="rnd"), helper.make_node("Add", ["x", "r"], ["y"])]
    with pytest.raises(Exception) as e:
        from_model(model(nodes, [vi("x", [2])], ["y"]))
    assert getattr(e.value, "node", "") == "rnd"


def test_shapes_that_only_folding_makes_static_are_inferred_again():
    # Data propagation in shape inference stops at Cast/Mul; the folded value fixes the Reshape.
    nodes = [helper.make_node("Shape", ["x"], ["sh"]),
             helper.make_node("Cast", ["sh"], ["shf"], to=onnx.TensorProto.FLOAT),
             helper.make_node("Mul", ["shf", "one"], ["shf2"]),
             helper.make_node("Cast", ["shf2"], ["sh2"], to=onnx.TensorProto.INT64),
             helper.make_node("Reshape", ["z", "sh2"], ["y"], name="rs")]
    m = model(nodes, [vi("x", [2, 3]), vi("z", [6])], ["y"], [init("one", np.array(1.0, np.float32))])
    graph = from_model(m)
    assert graph.desc["y"].shape == (2, 3) and graph.node["rs"].attr("shape") == (2, 3)


def test_ir_only_ops_with_constant_inputs_are_kept():
    # MemcpyAsync is in OPS but not an ONNX op: the file types its output, and it is not folded.
    nodes = [helper.make_node("MemcpyAsync", ["w"], ["m"], name="copy"), helper.make_node("Add", ["x", "m"], ["y"])]
    m = model(nodes, [vi("x", [2])], ["y"], [init("w", np.array([1.0, 2.0], np.float32))])
    m.graph.value_info.append(vi("m", [2]))
    graph = from_model(m)
    assert graph.node["copy"].inputs == ("w",) and graph.desc["m"].shape == (2,)
