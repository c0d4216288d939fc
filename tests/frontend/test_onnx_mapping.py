"""ONNX nodes -> IR nodes: names, Data/NetOutput, attributes, views, Dropout, optional operands."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper
from tests.helpers.onnx_factory import init, model, vi

from zcspec.impl.compiler import ops
from zcspec.impl.compiler.frontend.onnx_graph import node_names
from zcspec.impl.compiler.frontend.onnx_import import from_model


def test_unnamed_nodes_get_op_type_and_index():
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["a"], ["y"])]
    graph = from_model(model(nodes, [vi("x", [2])], ["y"]))
    assert [n.name for n in graph.nodes] == ["x", "Relu_0", "Neg_1", "NetOutput"]


def test_names_never_collide_with_data_nodes_netoutput_or_each_other():
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="x"),          # the Data node's name
             helper.make_node("Relu", ["a"], ["b"]),                     # would be Relu_1 ...
             helper.make_node("Relu", ["b"], ["c"], name="Relu_1"),      # ... which this one claims
             helper.make_node("Relu", ["c"], ["d"], name="NetOutput"),
             helper.make_node("Relu", ["d"], ["y"], name="Relu_1")]      # a duplicate explicit name
    graph = from_model(model(nodes, [vi("x", [2])], ["y"]))
    names = [n.name for n in graph.nodes]
    assert len(set(names)) == len(names)
    assert names == ["x", "x_1", "Relu_1_2", "Relu_1", "NetOutput_1", "Relu_1_1", "NetOutput"]


def test_node_names_are_a_pure_function_of_the_node_list():
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Relu", ["a"], ["y"], name="Relu_0")]
    assert node_names(nodes, ["x"]) == node_names(nodes, ["x"]) == ["Relu_0_1", "Relu_0"]


def test_data_indexes_follow_input_order_and_netoutput_the_output_order():
    nodes = [helper.make_node("Add", ["b", "a"], ["s"]), helper.make_node("Sub", ["b", "a"], ["d"])]
    graph = from_model(model(nodes, [vi("b", [2]), vi("a", [2])], ["d", "s"]))
    assert [(n.name, n.attr("index")) for n in graph.data_nodes] == [("b", 0), ("a", 1)]
    assert graph.netoutput.name == "NetOutput" and graph.outputs == ("d", "s")


def test_nodes_are_put_in_execution_order():
    nodes = [helper.make_node("Neg", ["a"], ["y"], name="second"), helper.make_node("Relu", ["x"], ["a"], name="first")]
    graph = from_model(model(nodes, [vi("x", [2])], ["y"]))
    assert [n.name for n in graph.nodes] == ["x", "first", "second", "NetOutput"]


def test_attributes_become_ir_values():
    w = init("w", np.ones((4, 3, 3, 3), np.float32))
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1], strides=[1, 1], group=1),
             helper.make_node("LeakyRelu", ["c"], ["l"], name="leaky", alpha=0.125),
             helper.make_node("Transpose", ["l"], ["t"], name="tr", perm=[0, 2, 3, 1]),
             helper.make_node("AveragePool", ["t"], ["y"], name="pool", kernel_shape=[2, 2], auto_pad="VALID")]
    graph = from_model(model(nodes, [vi("x", [1, 3, 8, 8])], ["y"], [w]))
    assert graph.node["conv"].attr("pads") == (1, 1, 1, 1) and graph.node["conv"].attr("group") == 1
    assert graph.node["leaky"].attr("alpha") == 0.125
    assert graph.node["tr"].attr("perm") == (0, 2, 3, 1)
    assert graph.node["pool"].attr("auto_pad") == "VALID"
    assert graph.desc["y"].shape == (1, 8, 7, 3)  # conv (1,4,8,8) -> NHWC -> 2x2 valid pool


def test_dtypes_map_to_ir_names():
    nodes = [helper.make_node("Cast", ["x"], ["y"], to=onnx.TensorProto.FLOAT16)]
    graph = from_model(model(nodes, [vi("x", [2], onnx.TensorProto.INT64)], ["y"]))
    assert graph.desc["x"].dtype == "int64" and graph.desc["y"].dtype == "float16"


def test_opset13_view_operands_become_attributes():
    nodes = [helper.make_node("Unsqueeze", ["x", "ax"], ["u"], name="unsq"),
             helper.make_node("Squeeze", ["u", "ax"], ["s"], name="sq"),
             helper.make_node("Reshape", ["s", "shape"], ["r"], name="rs", allowzero=0),
             helper.make_node("Flatten", ["r"], ["f"], name="fl", axis=1),
             helper.make_node("Identity", ["f"], ["y"], name="id")]
    inits = [init("ax", np.array([0], np.int64)), init("shape", np.array([3, 2], np.int64))]
    graph = from_model(model(nodes, [vi("x", [2, 3])], ["y"], inits))
    assert graph.node["unsq"].inputs == ("x",) and graph.node["unsq"].attr("axes") == (0,)
    assert graph.node["sq"].attr("axes") == (0,)
    assert graph.node["rs"].attrs == (("allowzero", 0), ("shape", (3, 2)))
    assert all(ops.is_view(graph.node[n]) for n in ("unsq", "sq", "rs", "fl", "id"))
    assert graph.weights == ()


def test_opset11_squeeze_keeps_its_axes_attribute():
    nodes = [helper.make_node("Squeeze", ["x"], ["y"], name="sq", axes=[0])]
    graph = from_model(model(nodes, [vi("x", [1, 3])], ["y"], opset=11))
    assert graph.node["sq"].inputs == ("x",) and graph.node["sq"].attr("axes") == (0,)


def test_dropout_unused_mask_is_dropped_and_ratio_input_becomes_attribute():
    nodes = [helper.make_node("Dropout", ["x", "r"], ["y", "mask"], name="drop")]
    graph = from_model(model(nodes, [vi("x", [2])], ["y"], [init("r", np.array(0.25, np.float32))], opset=13))
    drop = graph.node["drop"]
    assert drop.inputs == ("x",) and drop.outputs == ("y",) and drop.attr("ratio") == 0.25
    assert "mask" not in graph.desc


def test_trailing_omitted_optional_outputs_and_inputs_are_dropped():
    nodes = [helper.make_node("MaxPool", ["x"], ["p", ""], name="mp", kernel_shape=[2]),
             helper.make_node("Slice", ["p", "s", "e", "", ""], ["y"], name="sl")]
    inits = [init("s", np.array([0], np.int64)), init("e", np.array([2], np.int64))]
    graph = from_model(model(nodes, [vi("x", [1, 1, 6])], ["y"], inits))
    assert graph.node["mp"].outputs == ("p",) and graph.node["sl"].inputs == ("p", "s", "e")
    assert {w.name for w in graph.weights} == {"s", "e"}  # compute ops keep constant operands as weights
