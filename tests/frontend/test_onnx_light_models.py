"""The 9 ONNX light models import, with node counts and weights checked against numbers
computed here from the .onnx file with the plain onnx API (not through the front end)."""
from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper, shape_inference
from tests.helpers.onnx_factory import LIGHT_MODELS, light_path

from zcspec.impl.compiler.frontend.onnx_import import load_onnx

# Operand inputs the front end turns into attributes (docs/frontend.md, "Views").
OPERANDS = {"Reshape": {1}, "Squeeze": {1}, "Unsqueeze": {1}, "Dropout": {1, 2}}


def expected(path: str) -> dict:
    """Counts after folding by the simplest rule: a node folds when it is a constant source or all
    its inputs are constant. Weights: the constants the remaining nodes read as data."""
    m = onnx.load(path)
    g = m.graph
    consts = {t.name for t in g.initializer}
    kept = []
    for n in g.node:
        if n.op_type in ("Constant", "ConstantOfShape") or all(i in consts for i in n.input if i):
            consts.update(n.output)
        else:
            kept.append(n)
    ops = Counter(n.op_type for n in kept)
    ops["Data"] = sum(1 for v in g.input if v.name not in {t.name for t in g.initializer})
    ops["NetOutput"] = 1
    read = dict.fromkeys(t for n in kept for i, t in enumerate(n.input) if i not in OPERANDS.get(n.op_type, ()))
    weights = [t for t in read if t in consts]
    inferred = shape_inference.infer_shapes(m).graph
    types = {v.name: v.type.tensor_type for v in inferred.value_info}
    types.update({t.name: helper.make_tensor_type_proto(t.data_type, t.dims).tensor_type for t in g.initializer})
    nbytes = sum(
        int(np.prod([d.dim_value for d in types[w].shape.dim])) * helper.tensor_dtype_to_np_dtype(types[w].elem_type).itemsize
        for w in weights
    )
    fills = {n.output[0]: float(numpy_helper.to_array(a.t).reshape(-1)[0])
             for n in g.node if n.op_type == "ConstantOfShape" for a in n.attribute if a.name == "value"}
    return {"ops": dict(ops), "weights": set(weights), "bytes": nbytes, "fills": fills}


@pytest.fixture(scope="module", params=LIGHT_MODELS)
def imported(request):
    path = light_path(request.param)
    return request.param, load_onnx(path), expected(path)


def test_node_counts_by_op_type(imported):
    name, graph, want = imported
    got = Counter(n.op_type for n in graph.nodes)
    assert dict(got) == want["ops"], name
    assert got["ConstantOfShape"] == 0


def test_weights_count_and_bytes(imported):
    _, graph, want = imported
    assert {w.name for w in graph.weights} == want["weights"]
    assert graph.weight_bytes() == want["bytes"]


def test_constant_of_shape_weights_are_splats_of_the_fill_value(imported):
    _, graph, want = imported
    checked = 0
    for w in graph.weights:
        if w.name in want["fills"] and graph.desc[w.name].numel > 1:
            assert w.splat, w.name
            value = np.frombuffer(w.data, dtype=np.float32)[0]
            assert value == np.float32(want["fills"][w.name]), w.name
            checked += 1
    assert checked > 0


def test_alexnet_matches_the_issue_figures():
    graph = load_onnx(light_path("bvlc_alexnet"))
    counts = Counter(n.op_type for n in graph.nodes)
    assert dict(counts) == {"Conv": 5, "Relu": 7, "LRN": 2, "MaxPool": 3, "Reshape": 1, "Gemm": 3,
                            "Dropout": 2, "Softmax": 1, "Data": 1, "NetOutput": 1}
    fill = graph.weight["conv1_b_0"]
    assert fill.splat and np.frombuffer(fill.data, np.float32)[0] == np.float32(0.02)
    assert graph.weight["conv1_b_0"].array(graph.desc["conv1_b_0"]).shape == (96,)
    assert graph.inputs == ("data_0",) and graph.desc["data_0"].shape == (1, 3, 224, 224)
    assert graph.outputs == ("prob_1",) and graph.desc["prob_1"].shape == (1, 1000)


def test_views_have_their_operand_as_attribute_and_one_input():
    graph = load_onnx(light_path("bvlc_alexnet"))
    reshape = next(n for n in graph.nodes if n.op_type == "Reshape")
    assert len(reshape.inputs) == 1 and isinstance(reshape.attr("shape"), tuple)
    dropouts = [n for n in graph.nodes if n.op_type == "Dropout"]
    assert all(len(d.outputs) == 1 and d.attr("ratio") == pytest.approx(0.5) for d in dropouts)


def test_densenet_unsqueeze_of_initializer_folds_to_its_values():
    path = light_path("densenet121")
    graph = load_onnx(path)
    assert not any(n.op_type == "Unsqueeze" for n in graph.nodes)
    g = onnx.load(path).graph
    unsqueeze = next(n for n in g.node if n.op_type == "Unsqueeze")
    source = numpy_helper.to_array(next(t for t in g.initializer if t.name == unsqueeze.input[0]))
    folded = graph.weight[unsqueeze.output[0]]
    np.testing.assert_array_equal(folded.array(graph.desc[folded.name]), source.reshape(-1, 1, 1))
