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

Nodes without a task (NetOutput, views, PhonyConcat, variables) take no place on a
stream: they pass what their inputs know to their consumers, never to the next node of
the stream they are labelled with. A Data node passes nothing on, even what a control edge
into it knows: GE builds no stream edge out of a GE-local node (``GetDiffStreamEdgeLife``
returns for ``kEngineNameGeLocal``: "Data is not an executing node"), so a control edge
through a Data orders nothing for the planner.
"""
from __future__ import annotations

from typing import Mapping

from zcspec.impl.compiler import ops
from zcspec.impl.compiler.memory import rules
from zcspec.impl.compiler.ir import Graph


def known_before(graph: Graph, order: tuple[str, ...]) -> dict[str, Mapping[int, int]]:
    """Node -> {stream: latest step of that stream that has run before the node, itself included}."""
    step = {name: i for i, name in enumerate(order)}
    predecessors = graph.predecessors
    clock: dict[str, dict[int, int]] = {}
    last_on: dict[int, str] = {}   # stream -> its latest node with a task so far
    for name in order:
        node = graph.node[name]
        runs = bool(ops.task_kinds(node))
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

