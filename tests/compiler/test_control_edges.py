"""Control edges (GE's ``InControlAnchor``): they order nodes, order streams as a data edge does,
and reach the runtimes through ``TaskDef.after``."""
from __future__ import annotations

import copy

import attrs
import pytest

from zcspec.impl.compiler import graph_json
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.errors import CycleError, GraphError, GraphFormatError
from zcspec.impl.compiler.memory import stream_order
from zcspec.impl.compiler.model_file.encode import encode, metadata, pack
from zcspec.impl.compiler.model_file.errors import ModelFormatError
from zcspec.impl.compiler.model_file.load import load_model
from zcspec.impl.compiler.topology import execution_order
from zcspec.impl.compiler.validate import validate


def _two_streams(ctrl=("b",)):
    """a (stream 1) feeds b (stream 0); m on stream 1 reads only x, and follows b by a control edge."""
    b = GraphBuilder("ctrl")
    x = b.input("x", (4, 64))
    a = b.op("Relu", [x], name="a", stream=1)
    bb = b.op("Neg", [a], name="b", stream=0)
    n = b.op("Neg", [b.op("Abs", [x], name="m", stream=1, control_inputs=ctrl)], name="n", stream=1)
    b.output(b.op("Add", [bb, n], name="d", stream=1))
    return b.build()


def test_a_control_edge_orders_the_execution():
    g = GraphBuilder("order")
    x = g.input("x", (2,))
    g.op("Relu", [x], name="late")
    g.op("Abs", [x], name="early", control_inputs=("late",))
    g.output("late:0", "early:0")
    plain = GraphBuilder("order")
    plain.input("x", (2,))
    plain.op("Abs", [x], name="early")
    plain.op("Relu", [x], name="late")
    plain.output("late:0", "early:0")
    assert execution_order(plain.build()).index("early") < execution_order(plain.build()).index("late")
    order = execution_order(g.build())
    assert order.index("late") < order.index("early")


@pytest.mark.parametrize("ctrl, message", [
    (("ghost",), r"control input from 'ghost', which is not a node"),
    (("m",), r"control input from itself"),
    (("b", "b"), r"lists control input 'b' twice"),
])
def test_bad_control_inputs_are_refused_naming_the_node(ctrl, message):
    with pytest.raises(GraphError, match=message) as e:
        _two_streams(ctrl)
    assert e.value.node == "m"


def test_a_cycle_through_a_control_edge_is_refused():
    g = _two_streams()
    a = g.node["a"]
    nodes = tuple(attrs.evolve(n, control_inputs=("n",)) if n is a else n for n in g.nodes)
    with pytest.raises(CycleError):
        validate(attrs.evolve(g, nodes=nodes))


def test_control_inputs_survive_the_graph_json_and_version_1_files_have_none():
    g = _two_streams()
    assert graph_json.from_json(graph_json.to_json(g)) == g
    doc = graph_json.to_dict(g)
    doc["version"] = 1
    for n in doc["nodes"]:
        del n["control_inputs"]
    assert all(not n.control_inputs for n in graph_json.from_dict(doc).nodes)
    doc = graph_json.to_dict(g)
    doc["nodes"][3]["control_inputs"] = "b"
    with pytest.raises(GraphFormatError, match=r"node 'm': \"control_inputs\" must be a list of node names"):
        graph_json.from_dict(doc)
    del doc["nodes"][3]["control_inputs"]
    with pytest.raises(GraphFormatError, match=r"node 'm': no \"control_inputs\""):
        graph_json.from_dict(doc)


def test_a_control_edge_between_streams_is_known_to_the_stream_order():
    """With the edge b -> m, every node of stream 1 from m on knows that stream 0 ran b; without it, none
    before d (which reads b's output) does."""
    for ctrl, knows_b_from in ((("b",), "m"), ((), "d")):
        g = _two_streams(ctrl)
        order = execution_order(g)
        clock = stream_order.known_before(g, order)
        on_1 = [n for n in order if g.node[n].stream == 1 and n not in ("x",)]
        first = next(n for n in on_1 if clock[n].get(0, -1) >= order.index("b"))
        assert first == knows_b_from


def test_tasks_list_what_their_control_edges_order_them_after_and_the_file_keeps_it():
    m = build_model(_two_streams())
    index = {t.node: t.index for t in m.tasks.tasks}
    assert {t.node: t.after for t in m.tasks.tasks} == {"a": (), "b": (), "m": (index["b"],), "n": (), "d": ()}
    assert load_model(encode(m)) == m


def test_a_control_edge_from_a_node_without_a_task_reaches_the_tasks_behind_it():
    """A control edge from a view passes on what the view follows: the producer of its input."""
    g = GraphBuilder("view_ctrl")
    x = g.input("x", (4, 64))
    a = g.op("Relu", [x], name="a", stream=1)
    v = g.op("Reshape", [a], name="v", shape=(256,), stream=1, shape_attr=(256,))
    c = g.op("Abs", [x], name="c", control_inputs=("v", "x"))
    g.output(v, c)
    m = build_model(g.build())
    index = {t.node: t.index for t in m.tasks.tasks}
    assert "v" not in index
    assert next(t.after for t in m.tasks.tasks if t.node == "c") == (index["a"],)


@pytest.mark.parametrize("after, why", [([5], "must name earlier tasks"), ([0, 0], "each once"), (["0"], "integers")])
def test_the_loader_refuses_a_bad_after_list(after, why):
    meta, blob = metadata(build_model(_two_streams()))
    meta = copy.deepcopy(meta)
    next(t for t in meta["tasks"]["tasks"] if t["node"] == "m")["after"] = after
    with pytest.raises(ModelFormatError, match=r"tasks\[\d\]\.after"):
        load_model(pack(meta, blob))


def test_a_control_edge_behind_a_long_chain_of_views_needs_no_recursion():
    """A crafted graph: 3000 views in a row, the last one a control predecessor (no recursion limit hit)."""
    g = GraphBuilder("view_chain")
    x = g.input("x", (4, 4))
    t = g.op("Relu", [x], name="a", stream=1)
    for i in range(3000):
        t = g.op("Identity", [t], name=f"v{i}", stream=1)
    c = g.op("Abs", [x], name="c", control_inputs=("v2999",))
    g.output(t, c)
    m = build_model(g.build())
    index = {t.node: t.index for t in m.tasks.tasks}
    assert next(t.after for t in m.tasks.tasks if t.node == "c") == (index["a"],)
