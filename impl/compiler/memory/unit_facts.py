"""The facts the planner reads off the graph per symbol before it builds units (units.py): op kinds,
readers and writers, streams, zero copy, reuse, dynamic-batch labels; each read once and cached."""
from __future__ import annotations

import bisect
from typing import NamedTuple

from zcspec.impl.compiler import ops
from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.memory import rules, stream_order
from zcspec.impl.compiler.memory.lifetimes import Lifetimes
from zcspec.impl.compiler.memory.sizes import raw_bytes


class OpKind(NamedTuple):
    """``rules.is_data``, ``rules.atomic`` and ``rules.reusable_producer`` of one op type."""

    data: bool
    atomic: bool
    reusable_producer: bool


class Facts:
    """Per-symbol facts read off the graph once (cached: each is asked several times per symbol)."""

    def __init__(self, graph: Graph, lt: Lifetimes, options):
        self.graph, self.lt, self.options = graph, lt, options
        self.netoutput_slots: dict[str, int] = {}
        for t in graph.outputs:
            r = lt.root[t]
            self.netoutput_slots[r] = self.netoutput_slots.get(r, 0) + 1
        self._producers: dict[str, list] = {}
        self._readers: dict[str, list] = {}
        self._io: dict[str, bool] = {}
        self._clock = None
        self._on_stream: dict[int, list[str]] | None = None
        self._streams: int | None = None
        # Every node on one stream: no reader or writer is on another stream than a producer's, so
        # stream_last and first_write keep the symbol's own span (their loops would find nothing).
        self.one_stream = len({n.stream for n in graph.nodes}) <= 1
        self._kinds: dict[str, OpKind] = {}

    def kind(self, node) -> "OpKind":
        """The rules that depend on the op type alone, asked once per type (100k symbols share a few types)."""
        found = self._kinds.get(node.op_type)
        if found is None:
            found = self._kinds[node.op_type] = OpKind(
                rules.is_data(node), rules.atomic(node), rules.reusable_producer(node.op_type))
        return found

    def producers(self, r: str):
        found = self._producers.get(r)
        if found is None:
            node, producer = self.graph.node, self.graph.producer
            found = self._producers[r] = [node[producer[m]] for m in self.lt.members[r]]
        return found

    def readers(self, r: str):
        found = self._readers.get(r)
        if found is None:
            names = dict.fromkeys(c for m in self.lt.members[r] for c in self.graph.consumers.get(m, ()))
            found = self._readers[r] = [self.graph.node[c] for c in names]
        return found

    def io(self, r: str) -> bool:
        found = self._io.get(r)
        if found is None:
            found = self._io[r] = self.kind(self.producers(r)[0]).data or self.netoutput_slots.get(r, 0) > 0
        return found

    def zero_copy(self, r: str) -> str | None:
        """IsZeroCopyBlock (inputs) and GetOutputFlowToNetoutputNum (outputs); the caller excludes continuous
        groups (IsZeroCopyBlock)."""
        if not self.io(r):
            return None
        supported = all(rules.supports_zero_copy(n.op_type, self.options)
                        for n in self.producers(r) + self.readers(r))
        if self.kind(self.producers(r)[0]).data:
            return "input" if supported else None
        return "output" if supported and self.netoutput_slots.get(r, 0) == 1 and self._output_holds(r) else None

    def _output_holds(self, r: str) -> bool:
        """The user's output buffer holds only that output: it can be the symbol's memory only when the
        output starts the symbol and is as large as it. An output that is a piece of a larger symbol
        (a view, or an in-place result of a view, of a bigger tensor) would have the symbol's other
        writers run past the user's buffer, so its memory stays the model's and the output is copied."""
        lt, desc = self.lt, self.graph.desc
        extent = max(lt.offset[m] + raw_bytes(desc[m]) for m in lt.members[r])   # the bytes tasks write
        outputs = set(self.graph.outputs)
        return all(lt.offset[m] == 0 and raw_bytes(desc[m]) >= extent for m in lt.members[r] if m in outputs)

    def reusable(self, r: str) -> bool:
        """GE's reuse_mem_ AND (pre-reuse OR post-reuse) for a symbol (InitReuseFlag, ApplyMemory)."""
        if not self.options.reuse or self.io(r):
            return False
        for n in self.producers(r):
            if not self.kind(n).reusable_producer or rules.no_reuse(n):
                return False
        return True

    def atomic(self, nodes) -> bool:
        """Whether any of ``nodes`` writes atomic outputs (``rules.atomic``)."""
        for n in nodes:
            if self.kind(n).atomic:
                return True
        return False

    def _clock_of(self):
        if self._clock is None:
            self._clock = stream_order.known_before(self.graph, self.lt.order)
        return self._clock

    def stream_last(self, r: str, stream: int, last: int) -> int:
        """The last step of ``stream`` at which the memory of ``r`` may still be in use: GE's
        ``GetDiffStreamMaxLifeTime`` (block_mem_assigner.cc). A reader on another
        stream holds it until the first node of ``stream`` known to run after that reader (the stream
        dependency edge back); with no such node it is held to the end. Readers without a task (views,
        the NetOutput) touch no memory themselves. Along a stream each node knows at least what the one
        before it knows, so the first node knowing the reader is found by bisection."""
        if self.one_stream:
            return last
        end, step = self.lt.steps - 1, self.lt.step
        for n in self.readers(r):
            if n.stream == stream or not ops.task_kinds(n):
                continue
            clock, on_stream = self._clock_of(), self._stream_nodes(stream)
            i = bisect.bisect_left(on_stream, step[n.name], key=lambda m: clock[m].get(n.stream, -1))
            if i == len(on_stream):
                return end
            last = max(last, step[on_stream[i]])
        return last

    def order_facts(self, writers, readers=()) -> dict:
        """``Unit.uses`` and ``Unit.known`` (as keyword arguments) of memory written by the nodes
        ``writers`` and read by ``readers``; both empty on one stream. Nodes without a task touch nothing."""
        if not self.multi_stream:
            return {}
        clock, step = self._clock_of(), self.lt.step
        writers = [n for n in writers if ops.task_kinds(n)]
        tasks = writers + [n for n in readers if ops.task_kinds(n)]
        return {"uses": _last_per_stream(tasks, step), "known": _known_before_all(writers, clock, step)}

    @property
    def multi_stream(self) -> bool:
        if self._streams is None:
            self._streams = len({n.stream for n in self.graph.nodes if ops.task_kinds(n)})
        return self._streams > 1

    def _stream_nodes(self, stream: int) -> list[str]:
        """The points of ``stream`` (``stream_order.takes_place``: a task, or a node without one where a
        stream edge lands, which the next task there waits behind), in execution order."""
        if self._on_stream is None:
            self._on_stream = {}
            for name in self.lt.order:
                node = self.graph.node[name]
                if stream_order.takes_place(self.graph, node):
                    self._on_stream.setdefault(node.stream, []).append(name)
        return self._on_stream.get(stream, [])

    def read_elsewhere_only(self, roots, stream: int) -> bool:
        """GE's ``diff_stream_life_time_`` on a block's member (block_mem_assigner.cc ``SetReleaseBlockLifeEnd``):
        set when every release of the memory of ``roots`` came from one stream other than ``stream`` (its
        ``out_stream_life_time_`` has that one entry; a reader on ``stream`` adds its own) and its life there has
        no end (``kMaxLifeTime``: for some reader no node of ``stream`` is known to run after it,
        ``GetDiffStreamMaxLifeTime``). ``CanIntervalLifeReuse`` refuses such a block; a block also read on its own
        stream, or known to be done on it, keeps interval reuse. Readers without a task release nothing here, as
        for ``stream_last``; GE's ``diff_stream_prior_`` (set by the op's reuse strategy) is not modelled."""
        if self.one_stream:
            return False
        readers = [n for r in roots for n in self.readers(r) if ops.task_kinds(n)]
        if len({n.stream for n in readers}) != 1 or readers[0].stream == stream:
            return False
        clock, on_stream, step = self._clock_of(), self._stream_nodes(stream), self.lt.step
        return any(bisect.bisect_left(on_stream, step[n.name], key=lambda m: clock[m].get(n.stream, -1))
                   == len(on_stream) for n in readers)

    def first_write(self, roots, stream: int, first: int) -> int:
        """The step of ``stream`` from which the memory of ``roots`` may already be written.

        A writer on ``stream`` writes at its own step (``first`` covers it). A writer on another
        stream may run at any time after the latest node of ``stream`` known to run before it,
        so the memory's life on ``stream`` begins there, or at step 0 if nothing is known: GE's
        ``CalNodeAsContinuousInputMaxLife`` lowers a NoPadding group's ``life_begin_`` by
        ``GetDiffStreamMinLifeTime`` (block_mem_assigner.cc)."""
        if self.one_stream:
            return first
        for r in roots:
            for p in self.producers(r):
                if p.stream != stream and ops.task_kinds(p):
                    first = min(first, self._clock_of()[p.name].get(stream, 0))
        return first


def _last_per_stream(tasks, step) -> tuple[tuple[int, int], ...]:
    out: dict[int, int] = {}
    for n in tasks:
        out[n.stream] = max(out.get(n.stream, -1), step[n.name])
    return tuple(sorted(out.items()))


def _known_before_all(writers, clock, step) -> tuple[tuple[int, int], ...]:
    """Per stream, the latest step known to have run before every one of ``writers`` (a stream some
    writer knows nothing of is left out)."""
    out: dict[int, int] | None = None
    for w in writers:
        mine = {s: k for s, k in clock[w.name].items() if s != w.stream}
        mine[w.stream] = step[w.name] - 1
        out = mine if out is None else {s: min(k, mine[s]) for s, k in out.items() if s in mine}
    return tuple(sorted((s, k) for s, k in (out or {}).items() if k >= 0))


def common_label(nodes) -> str:
    """A symbol belongs to a batch branch only if every node writing it runs in that branch."""
    if len(nodes) == 1:
        return rules.batch_label(nodes[0])
    labels = {rules.batch_label(n) for n in nodes}
    return labels.pop() if len(labels) == 1 else ""
