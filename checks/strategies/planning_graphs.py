"""Random graphs for planners: the checker's executable graphs, decorated with planning attributes.

``planning_graphs()`` draws a graph from ``zcspec.checks.strategies.graphs`` and then,
per node, optionally a workspace list, ``_no_reuse``, another stream, a control edge
from an earlier node and a dynamic-batch label, so every planning rule is exercised together.
"""
from __future__ import annotations

import attrs
from hypothesis import strategies as st

from zcspec.checks.strategies.graphs import graphs
from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.topology import execution_order

_WORKSPACES = st.lists(st.sampled_from([0, 100, 512, 1000, 4096]), max_size=2).map(tuple)


@st.composite
def decorate(draw, graph: Graph, extras: bool = True, *, labels: bool = True, other_stream: int = 6,
             streams: int = 2) -> Graph:
    """``graph`` with some nodes given a workspace list, ``_no_reuse``, a stream other than 0 (one
    node in ``other_stream``, on stream 1 to ``streams - 1``), a control edge from a node that runs
    before it (one in four: on several streams it orders them as a data edge does) and, when
    ``labels``, a dynamic-batch label (a label without its Merge makes the graph plannable but not
    executable: executions draw none)."""
    nodes = []
    step = {name: i for i, name in enumerate(execution_order(graph))}
    ops_before = sorted((n for n in graph.nodes if n.op_type not in ("Data", "NetOutput")), key=lambda n: step[n.name])
    for n in graph.nodes:
        if n.op_type in ("Data", "NetOutput") or not extras or not draw(st.booleans()):
            nodes.append(n)
            continue
        changes = {}
        if ws := draw(_WORKSPACES):
            changes["_workspace_bytes"] = ws
        if draw(st.integers(0, 5)) == 0:
            changes["_no_reuse"] = True
        if labels and (label := draw(st.sampled_from(["", "", "", "b1", "b2"]))):
            changes["_batch_label"] = label
        n = n.with_attrs(**changes)
        if draw(st.integers(0, other_stream - 1)) == 0:
            n = attrs.evolve(n, stream=draw(st.integers(1, streams - 1)))
        earlier = [m.name for m in ops_before if step[m.name] < step[n.name]]
        if earlier and draw(st.integers(0, 3)) == 0:
            n = attrs.evolve(n, control_inputs=(draw(st.sampled_from(earlier)),))
        nodes.append(n)
    return attrs.evolve(graph, nodes=nodes)


def planning_graphs(*, max_nodes: int = 12, max_dim: int = 40, extras: bool = True):
    """Valid graphs with sizes from tens of bytes to hundreds of KiB, decorated when ``extras``."""
    return graphs(max_nodes=max_nodes, max_dim=max_dim).flatmap(lambda g: decorate(g, extras))
