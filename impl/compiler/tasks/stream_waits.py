"""Which earlier tasks a node's tasks must follow besides the bytes they read (``TaskDef.after``).

A runtime orders a task after another stream's work in two ways: it matches the bytes the task
reads against the bytes earlier tasks of other streams wrote (a data edge between tasks), and it
reads ``TaskDef.after``, the tasks listed here, each a record on that task's stream and a wait on
this one (runtime v1 ``load.cross_stream_waits``, v2 ``lowering.waits``; GE's send/receive pair,
``StreamAllocator::InsertSyncEvents``). The list holds what bytes cannot show:

- a control edge: the last task of each control predecessor;
- a node without a task stands for the tasks behind it: what its predecessors stand for, and, when
  it is a point on its stream (``stream_order.takes_place``: a stream edge lands on it), the last
  task of its stream before it, as GE's send after it on its stream would wait for that task;
- a task reading the output of a node without a task follows what that node stands for on other
  streams (its control predecessors and its place on a stream are no bytes the reader reads);
- the first task of a stream after a point without a task follows what the point stands for on
  other streams (and so does each task up to the first one outside any dynamic-batch branch: a
  runtime launches only one branch's tasks). GE puts the receive event of the stream edge in
  front of that node on its stream (``GenerateSyncEventNodes``: a Recv node with a control edge
  into it), so the next task of the stream waits; the planner counts the order at the node
  (``stream_order.known_before``) and may give that next task memory another stream's task read
  before the edge.

Tasks of the node's own stream are left out of what the last two add (the stream keeps their
order); a control edge's list keeps them, as it always has.
"""
from __future__ import annotations

from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.memory import stream_order


class StreamWaits:
    """Walks the plan's order: ask :meth:`after` for a node before its tasks are made, then report them
    with :meth:`ran` (also for a node without tasks)."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.stream_of: list[int] = []                # task index -> its stream
        self.last_task: dict[str, int] = {}           # node with tasks -> its last task
        self.behind: dict[str, frozenset] = {}        # node without tasks -> the tasks it stands for
        self.last_on: dict[int, int] = {}             # stream -> its last task so far
        self.pending: dict[int, frozenset] = {}       # stream -> what its next task must follow

    def stands_for(self, name: str) -> frozenset:
        """The tasks node ``name`` stands for: its own last task, or for a node without tasks ``behind``."""
        return frozenset((self.last_task[name],)) if name in self.last_task else self.behind.get(name, frozenset())

    def _elsewhere(self, tasks, stream: int) -> frozenset:
        return frozenset(a for a in tasks if self.stream_of[a] != stream)

    def after(self, name: str) -> tuple[int, ...]:
        """``TaskDef.after`` of node ``name``'s tasks (module docstring)."""
        node = self.graph.node[name]
        out = frozenset().union(*(self.stands_for(p) for p in node.control_inputs))
        producer = self.graph.producer
        for t in node.inputs:
            p = producer.get(t)
            if p is not None and p not in self.last_task:
                out |= self._elsewhere(self.stands_for(p), node.stream)
        out |= self._elsewhere(self.pending.get(node.stream, ()), node.stream)
        return tuple(sorted(out))

    def ran(self, name: str, tasks) -> None:
        """Record node ``name``'s tasks (none for a node without a task)."""
        node = self.graph.node[name]
        if tasks:
            for t in tasks:
                self.stream_of.append(t.stream)
                self.last_on[t.stream] = t.index
            self.last_task[name] = tasks[-1].index
            if not any(t.batch for t in tasks):
                self.pending.pop(node.stream, None)   # a task of one dynamic-batch branch may not launch
            return
        mine = frozenset().union(*(self.stands_for(p) for p in self.graph.predecessors[name]))
        if stream_order.takes_place(self.graph, node):
            if node.stream in self.last_on:
                mine |= {self.last_on[node.stream]}
            self.pending[node.stream] = self.pending.get(node.stream, frozenset()) | mine
        self.behind[name] = mine
