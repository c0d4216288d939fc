"""Graph topology through networkx: the dependency graph and the execution order."""
from __future__ import annotations

import heapq

import networkx as nx

from zcspec.impl.compiler.errors import CycleError
from zcspec.impl.compiler.ir import Graph


def dependency_graph(graph: Graph) -> nx.DiGraph:
    """Nodes by name, an edge producer -> consumer for every tensor read (weights add no edges) and
    for every control edge."""
    dg = nx.DiGraph()
    dg.add_nodes_from((n.name, {"index": i}) for i, n in enumerate(graph.nodes))
    for name, preds in graph.predecessors.items():
        dg.add_edges_from((p, name) for p in preds)
    return dg


def execution_order(graph: Graph) -> tuple[str, ...]:
    """Stable topological order over data and control edges: among ready nodes, the one inserted first runs first.

    Data nodes only depend on nothing, so with GraphBuilder and the ONNX front end
    (which insert them first) they take the first steps; NetOutput takes the last.
    Raises CycleError naming the nodes of one cycle.

    The same order as ``nx.lexicographical_topological_sort(dependency_graph(graph),
    key=index)`` (a test checks it), by a heap over insertion indexes: the memory
    planner needs it for 100k-node graphs, where building the networkx graph
    first costs seconds.
    """
    index = {n.name: i for i, n in enumerate(graph.nodes)}
    succ: list[list[int]] = [[] for _ in graph.nodes]
    indegree = [0] * len(graph.nodes)
    preds = graph.predecessors
    for i, n in enumerate(graph.nodes):
        for src in preds[n.name]:
            succ[index[src]].append(i)
            indegree[i] += 1
    ready = [i for i, d in enumerate(indegree) if d == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        i = heapq.heappop(ready)
        order.append(graph.nodes[i].name)
        for j in succ[i]:
            indegree[j] -= 1
            if indegree[j] == 0:
                heapq.heappush(ready, j)
    if len(order) < len(graph.nodes):
        cycle = nx.find_cycle(dependency_graph(graph))
        raise CycleError(tuple(edge[0] for edge in cycle))
    return tuple(order)
