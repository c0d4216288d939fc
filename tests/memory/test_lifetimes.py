"""Lifetimes: inclusive producer..last reader, graph I/O widened, views extend roots, workspaces per node."""
from __future__ import annotations

from hypothesis import given

from zcspec.checks.strategies.planning_graphs import planning_graphs
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.memory.lifetimes import lifetimes


def _chain():
    b = GraphBuilder("chain")
    x = b.input("x", (1, 64))
    a = b.op("Relu", [x], name="a")
    r = b.op("Reshape", [a], name="r", shape=(64,))
    c = b.op("Sigmoid", [x], name="c", _workspace_bytes=(100, 0, 7))
    d = b.op("Abs", [r], name="d")
    b.output(d, c)
    return b.build()


def test_inclusive_lifetimes_and_graph_io():
    lt = lifetimes(_chain())
    assert lt.order == ("x", "a", "r", "c", "d", "NetOutput")
    assert lt.own["x"] == (0, 3)          # graph input from step 0 to its last reader c
    assert lt.own["a:0"] == (1, 2)        # producer a .. reader r (the view)
    assert lt.own["r:0"] == (2, 4)        # the view's own readers
    assert lt.own["d:0"] == (4, 5)        # graph output lives to the end
    assert lt.own["c:0"] == (3, 5)


def test_views_alias_their_root_and_extend_its_span():
    lt = lifetimes(_chain())
    assert lt.root["r:0"] == "a:0"
    assert lt.members["a:0"] == ("a:0", "r:0")
    assert lt.span["a:0"] == (1, 4)


def test_workspaces_live_for_their_node_and_size_zero_is_dropped():
    lt = lifetimes(_chain())
    assert [(w.name, w.nbytes, w.step) for w in lt.workspaces] == [("c#ws0", 100, 3), ("c#ws2", 7, 3)]


def test_in_place_shares_only_when_the_input_is_dead_afterwards():
    b = GraphBuilder("inplace")
    x = b.input("x", (1, 64))
    a = b.op("Relu", [x], name="a")
    ok = b.op("Neg", [a], name="ok", _reuse_input=True)      # last reader of a: shares
    c = b.op("Abs", [ok], name="c")
    bad = b.op("Neg", [c], name="bad", _reuse_input=True)    # c is read later by e: own memory
    e = b.op("Add", [c, bad], name="e")
    fromx = b.op("Neg", [x], name="fromx", _reuse_input=True)  # graph input: never overwritten
    b.output(e, fromx)
    lt = lifetimes(b.build())
    assert lt.root["ok:0"] == "a:0"
    assert lt.root["bad:0"] == "bad:0"
    assert lt.root["fromx:0"] == "fromx:0"


@given(planning_graphs(max_nodes=14))
def test_execution_order_is_networkx_lexicographic_order(graph):
    import networkx as nx

    from zcspec.impl.compiler.topology import dependency_graph, execution_order

    index = {n.name: i for i, n in enumerate(graph.nodes)}
    assert execution_order(graph) == tuple(nx.lexicographical_topological_sort(dependency_graph(graph), key=index.get))
