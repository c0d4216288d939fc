"""Graph topology through networkx: the dependency graph and the execution order."""
from __future__ import annotations

import networkx as nx

from impl.compiler.errors import CycleError
from impl.compiler.ir import Graph


def dependency_graph(graph: Graph) -> nx.DiGraph:
    """Nodes by name, an edge producer -> consumer for every tensor read (weights add no edges)."""
    dg = nx.DiGraph()
    dg.add_nodes_from((n.name, {"index": i}) for i, n in enumerate(graph.nodes))
    producer = graph.producer
    for n in graph.nodes:
        for t in n.inputs:
            src = producer.get(t)
            if src is not None:
                dg.add_edge(src, n.name)
    return dg


def execution_order(graph: Graph) -> tuple[str, ...]:
    """Stable topological order: among ready nodes, the one inserted first runs first.

    Data nodes only depend on nothing, so with GraphBuilder and the ONNX front end
    (which insert them first) they take the first steps; NetOutput takes the last.
    Raises CycleError naming the nodes of one cycle.
    """
    dg = dependency_graph(graph)
    index = {n.name: i for i, n in enumerate(graph.nodes)}
    try:
        return tuple(nx.lexicographical_topological_sort(dg, key=index.__getitem__))
    except nx.NetworkXUnfeasible:
        cycle = nx.find_cycle(dg)
        raise CycleError(tuple(edge[0] for edge in cycle)) from None
