"""A tensor's set size (TensorDesc.size, GE's TensorUtils::SetSize) apart from its shape's bytes.

GE's memory tests set sizes larger than their shapes (CreateOpWithWsSize: 2048 B on a 1x1x16x8
float, 512 B); GE sizes blocks by the set size and lays NoPadding continuous inputs out by the shape's
bytes. These tests pin the IR field (validation, graph JSON), the planner's use of it (block sizes,
NoPadding pieces) and the spec's LAYOUT-TENSOR-SIZE, which reads the set size from the graph.
"""
from __future__ import annotations

import json

import attrs
import pytest

from zcspec.impl.compiler import graph_json
from zcspec.impl.compiler.compile import compile as compile_model
from zcspec.impl.compiler.errors import GraphError, GraphFormatError
from zcspec.impl.compiler.ir import Graph, Node, TensorDesc
from zcspec.impl.compiler.memory.options import PlanOptions
from zcspec.impl.compiler.memory.plan import plan_memory
from zcspec.impl.compiler.observe import observe_plan
from zcspec.impl.compiler.validate import validate
from zcspec.spec.check import check
from zcspec.spec.examples.build import plan as example_plan
from zcspec.spec.invariants.layout import TENSOR_SIZE

SHAPE = (1, 1, 16, 8)   # GE's fixture: 512 B of float32


def _chain(set_size: int | None, *, shape=SHAPE) -> Graph:
    """x -> Relu a (set size ``set_size``) -> Relu b -> NetOutput."""
    nodes = [Node("x", "Data", (), ("x",), {"index": 0}), Node("a", "Relu", ("x",), ("a",)),
             Node("b", "Relu", ("a",), ("b",)), Node("out", "NetOutput", ("b",), ())]
    tensors = [TensorDesc("x", SHAPE), TensorDesc("a", shape, size=set_size), TensorDesc("b", SHAPE)]
    return Graph("set_size_chain", nodes, tensors)


def _concat(set_size: int) -> Graph:
    """p, q (both ``set_size`` on 512 B) -> PhonyConcat c (NoPadding, 1 KiB) -> Relu d -> NetOutput."""
    nodes = [Node("x", "Data", (), ("x",), {"index": 0}), Node("p", "Relu", ("x",), ("p",)),
             Node("q", "Relu", ("x",), ("q",)), Node("c", "PhonyConcat", ("p", "q"), ("c",), {"axis": 0}),
             Node("d", "Relu", ("c",), ("d",)), Node("out", "NetOutput", ("d",), ())]
    tensors = [TensorDesc("x", SHAPE), TensorDesc("p", SHAPE, size=set_size), TensorDesc("q", SHAPE, size=set_size),
               TensorDesc("c", (2, 1, 16, 8)), TensorDesc("d", (2, 1, 16, 8))]
    return validate(Graph("set_size_concat", nodes, tensors))


# -- the IR ------------------------------------------------------------------------------------

def test_a_set_size_below_the_shapes_bytes_is_refused_naming_the_tensor():
    with pytest.raises(GraphError, match=r"tensor 'a' has set size 511 bytes, less than the 512 raw bytes") as e:
        validate(_chain(511))
    assert e.value.tensor == "a"


@pytest.mark.parametrize("bad", [0, -4, 2048.0, True, "2048"])
def test_a_set_size_that_is_no_positive_integer_is_refused(bad):
    with pytest.raises(GraphError, match="tensor 'a' has set size") as e:
        validate(_chain(bad, shape=(0,)))
    assert e.value.tensor == "a"


def test_a_set_size_equal_to_or_above_the_shapes_bytes_is_valid():
    assert validate(_chain(512)).desc["a"].size == 512
    assert validate(_chain(10240)).desc["a"].nbytes == 512


def test_compiling_a_graph_with_a_set_size_into_a_model_file_is_refused_naming_the_tensor():
    """The model file records no set size (its loader sizes tensors from the bytes tasks access)."""
    with pytest.raises(GraphError, match="tensor 'a' has set size 2048 bytes: a model file records no set sizes") as e:
        compile_model(_chain(2048))
    assert e.value.tensor == "a"
    assert compile_model(_chain(None))


# -- graph JSON --------------------------------------------------------------------------------

def test_graph_json_carries_the_set_size_as_version_3():
    graph = validate(_chain(2048))
    doc = graph_json.to_dict(graph)
    assert doc["version"] == 3
    assert [t.get("size") for t in doc["tensors"]] == [None, 2048, None]
    assert graph_json.from_json(graph_json.to_json(graph)) == graph


def test_a_graph_without_set_sizes_is_written_as_before():
    doc = graph_json.to_dict(validate(_chain(None)))
    assert doc["version"] == 2 and all("size" not in t for t in doc["tensors"])
    assert graph_json.from_dict(doc).desc["a"].size is None


def test_a_set_size_in_an_older_version_or_of_the_wrong_type_is_refused():
    doc = graph_json.to_dict(validate(_chain(2048)))
    old = {**doc, "version": 2}
    with pytest.raises(GraphFormatError, match="tensor 'a'.*needs graph format version 3"):
        graph_json.from_dict(json.loads(json.dumps(old)))
    doc["tensors"][1]["size"] = "2048"
    with pytest.raises(GraphFormatError, match="tensor 'a'.*must be an integer"):
        graph_json.from_dict(doc)


# -- the planner -------------------------------------------------------------------------------

def _block_of(plan, tensor: str):
    block = plan.tensor(tensor).block
    return next(b for b in plan.blocks if b.id == block)


def test_the_block_of_a_tensor_with_a_set_size_is_as_large_as_the_set_size():
    assert _block_of(plan_memory(validate(_chain(None))), "a").size == 1024        # align512(512 + 32)
    assert _block_of(plan_memory(validate(_chain(4096))), "a").size == 4096
    assert _block_of(plan_memory(validate(_chain(4097))), "a").size == 4608


def test_nopadding_pieces_advance_by_their_shapes_bytes_in_a_block_as_large_as_the_largest_set_size():
    plan = plan_memory(_concat(2048), PlanOptions(size_align=1, size_padding=0))
    p, q = plan.tensor("p"), plan.tensor("q")
    assert q.offset - p.offset == 512
    assert _block_of(plan, "p").size == 2048
    # Laid out by their set sizes, the pieces would sit 2048 B apart in a 4096 B block.
    assert _block_of(plan_memory(_concat(512), PlanOptions(size_align=1, size_padding=0)), "p").size == 1024


def test_without_set_sizes_the_plan_is_unchanged_by_the_field():
    """None is the old path: the same graph built without the keyword plans identically."""
    graph = validate(_chain(None))
    rebuilt = attrs.evolve(graph, tensors=[TensorDesc(t.name, t.shape, t.dtype, t.format) for t in graph.tensors])
    assert plan_memory(graph) == plan_memory(rebuilt)


# -- the spec: LAYOUT-TENSOR-SIZE reads the set size from the graph ------------------------------

def _tensor_size_violations(obs):
    return check(obs, invariants=[TENSOR_SIZE]).violations


def test_the_observation_transcribes_the_set_size_from_the_graph():
    graph = validate(_chain(4096))
    obs = observe_plan(graph, plan_memory(graph))
    assert {t.name: t.set_size for t in obs.tensors if t.name in graph.desc} == {"x": None, "a": 4096, "b": None}


def test_a_planner_that_sizes_a_tensor_by_its_shape_despite_its_set_size_breaks_tensor_size():
    """The plan of the graph without the set size (what a planner ignoring it makes), observed with the
    graph that sets it: 'a' is 544 B where its graph asks for 4096."""
    graph = validate(_chain(4096))
    ignoring = plan_memory(validate(_chain(None)))
    violations = _tensor_size_violations(observe_plan(graph, ignoring))
    assert [v.culprit for v in violations] == ["tensor 'a'"]
    assert "size=544 for set size 4096; expected 4096" in violations[0].message


def test_tensor_size_holds_a_tensor_to_its_set_size_exactly():
    base = example_plan([("a", "feature_map", 0, 4096, 0, 1)], nbytes={"a": 512})
    with_set = attrs.evolve(base, tensors=[attrs.evolve(base.tensors[0], set_size=4096)])
    assert not _tensor_size_violations(with_set)
    assert _tensor_size_violations(base)          # 512 raw bytes alone ask for 544
    shape_sized = attrs.evolve(with_set, tensors=[attrs.evolve(with_set.tensors[0], size=544, aligned_size=1024)])
    assert [v.culprit for v in _tensor_size_violations(shape_sized)] == ["tensor 'a'"]


def test_the_planner_gives_a_tensor_its_set_size_and_the_plan_satisfies_every_claim():
    graph = validate(_chain(4096))
    plan = plan_memory(graph)
    assert (plan.tensor("a").size, plan.tensor("a").aligned_size) == (4096, 4096)
    assert plan.tensor("b").size == 544
    report = check(observe_plan(graph, plan))
    assert report.ok and "LAYOUT-TENSOR-SIZE" in report.applied
