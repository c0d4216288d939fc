"""Which steps of each stream are known to have run before a node: the order streams guarantee.

Tasks of one stream run in launch order (the execution order). Across streams the only
order is the event GE puts on every data or control edge between nodes on different streams
(``StreamAllocator::InsertSyncEvents`` → ``InsertOneEventInTwoNodes``: a send after the
producer, a receive before the consumer). So node ``u`` has run before node ``v`` starts
in every schedule exactly when a path of data and control edges and same-stream successions
leads from ``u`` to ``v``. Along a stream a node's step says nothing about when it runs
relative to another stream: a node on stream 1 with a late step may run while stream 0
is still at its first steps.

``known_before(graph, order)`` gives, per node, the latest step of each stream known to
have run before it (a vector clock; its own stream maps to its own step). GE keeps the
same knowledge as stream in-edges with their transitive closure (``in_stream_edges_``,
``AddInStreamEdge`` in compiler/graph/build/memory/block_mem_assigner.cc) and reads it in ``GetDiffStreamMinLifeTime``.

A node without a task (views, PhonyConcat, variables) takes a place on its stream only where a
stream edge lands on it (:func:`takes_place`): an edge from a node on another stream that is
not a Data. GE gives every such node a stream and puts the receive event of that edge in front
of it (``StreamAllocator::InsertSyncEvents`` → ``InsertOneEventInTwoNodes`` attaches it to the
node, ``GenerateSyncEventNodes`` makes it a Recv node on the node's stream with a control edge
into it), so the next task of that stream waits; and its memory planner counts the edge at the
node itself (``GetDiffStreamEdgeLife`` builds it into any peer node, ``GetDiffStreamMaxLifeTime``
ends a life there). zcspec's task generation puts the same wait on the next task of the stream
(``tasks/stream_waits.py``). The NetOutput takes no place: it ends the model (the runtimes
synchronize every stream after the last task), and zcspec keeps a life that reaches it on
another stream to the end. Any other node without a task passes what its inputs know to its
consumers, never to the next node of the stream it is labelled with. A Data node passes nothing on, even what a control edge into it knows: GE
builds no stream edge out of a GE-local node (``GetDiffStreamEdgeLife`` returns for
``kEngineNameGeLocal``: "Data is not an executing node"), so a control edge through a Data
orders nothing for the planner.
"""
from __future__ import annotations

from typing import Mapping

from zcspec.impl.compiler import ops
from zcspec.impl.compiler.memory import rules
from zcspec.impl.compiler.ir import Graph


def takes_place(graph: Graph, node) -> bool:
    """Whether ``node`` is a point on its stream: it runs a task there, or it runs none, is neither a Data
    nor the NetOutput (GE-local nodes: the NetOutput ends the model, nothing of it runs after) and an edge
    (data or control) from a node on another stream that is no Data lands on it (module docstring). The
    planner's clocks (:func:`known_before`, ``unit_facts.Facts``) and task generation's waits
    (``tasks/stream_waits.py``) both ask this."""
    if ops.task_kinds(node):
        return True
    kind = ops.info(node.op_type)
    if rules.is_data(node) or (kind is not None and kind.kind == "netoutput"):
        return False
    nodes = graph.node
    return any(nodes[p].stream != node.stream and not rules.is_data(nodes[p]) for p in graph.predecessors[node.name])


def known_before(graph: Graph, order: tuple[str, ...]) -> dict[str, Mapping[int, int]]:
    """Node -> {stream: latest step of that stream that has run before the node, itself included}."""
    step = {name: i for i, name in enumerate(order)}
    predecessors = graph.predecessors
    clock: dict[str, dict[int, int]] = {}
    last_on: dict[int, str] = {}   # stream -> its latest point so far
    for name in order:
        node = graph.node[name]
        runs = takes_place(graph, node)
        preds = set() if rules.is_data(node) else set(predecessors[name])
        if runs and node.stream in last_on:
            preds.add(last_on[node.stream])
        mine: dict[int, int] = {}
        for p in preds:
            for s, k in clock[p].items():
                if k > mine.get(s, -1):
                    mine[s] = k
        if runs:
            mine[node.stream] = step[name]
            last_on[node.stream] = name
        clock[name] = mine
    return clock
