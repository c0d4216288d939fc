"""GE's MemLayoutConflictOptimizer: a copy wherever two anchors of one symbol cannot share memory.

GE runs it from ``GraphManager::MemConflictProc`` (``GraphOptimize::HandleMemoryLayoutConflict``,
``compiler/graph/optimize/mem_layout_conflict_optimize/``), after MemcpyAddrAsyncPass and before
memory assignment. For every symbol (tensors that share memory: views, in-place outputs) it types
each anchor (``mem_layout_conflict_util.cc`` ``GetNodeOutputTypes``, ``GetNodeInputTypes``), checks
every pair (``checker/checker.cc``, ``checker/funcs/*.cc``) and inserts an Identity at the anchor a
conflicting pair names (``SolveConflict``): after an output, for all its consumers, or before one input.
So a Data feeding a continuous input or an unrefreshable task keeps its own zero-copy buffer and only
the copy joins the block or feeds the task (GE: mem_layout_conflict_optimizer.cc
``MemLayoutConflictOptimizer::Run``).

The anchor types zcspec's IR expresses (``OUT_TYPES``, ``IN_TYPES``): a graph input (a Data output);
a graph output (a NetOutput input); an immutable output (a weight or a Variable's); an unrefreshable
input or output (a node with a task the SoC cannot refresh on that side, ``SocProfile.can_refresh``:
GE's ``IsAddressRefreshable`` for HCCL ops without address refresh, generalised to any task kind; in
a build for a refreshable feature base, ``CompileOptions.feature_base_refreshable``, HCCL counts as a
kind the SoC can refresh, as GE's ``IsGraphFeatureMapRefreshable`` exempts HCCL ops, while a task in a
loop keeps the SoC's loop rule, ``refresh_profile``); a (padding) continuous input (HCCL with two
or more inputs) or continuous output (``continuous_output`` with two or more outputs); a NoPadding
continuous input (PhonyConcat with two or more inputs) or output (an outer-axis Split/Slice view, GE's
no-task Split, whose outputs are pieces of its input). Reference outputs (views, in-place results)
are never in conflict themselves; they only put their anchors into one symbol. RTS-special memory
types, StreamSwitch and LabelSwitchByIndex are not in the IR.

The pairs (``RULES``, symmetric) and where the copy goes:

- graph input x continuous or NoPadding continuous input: right after the Data
  (``user_in_and_continuous_in_out_checker.cc``);
- graph input x unrefreshable input: before that input (absolute conflict);
- graph output x continuous or NoPadding continuous input, unless the NetOutput reads that node's own
  output (``user_out_and_continuous_input.cc``); graph output x continuous or NoPadding continuous output,
  immutable output, unrefreshable input or output: before the NetOutput input;
- immutable output x continuous or NoPadding continuous input; continuous input x NoPadding continuous
  output (a PhonyConcat whose own output a view cuts again is spared,
  ``nopadding_continuous_input_and_nopadding_continuous_out.cc``); continuous output x continuous input,
  unless the node's outputs and the input node's real sources overlap as one run (GE's
  ``IsContinuousOutAndInConflict``, ``continuous_output_and_continuous_input.cc``: the planner lays such a
  chain out in one block, continuous_groups.chains); a tensor reaching two continuous inputs, or a
  continuous node's output feeding another (``continuous_input_and_continuous_input.cc``): before the
  continuous input, all but the first in execution order. A NoPadding concat's output read by another
  NoPadding concat (a cascade, its first such reader) gets no copy: GE's
  ``nopadding_continuous_input_and_nopadding_continuous_input.cc`` only copies an output feeding several
  NoPadding concats, and the planner lays the cascade out in place (``ReAssignContinuousMemory``).

A copy is not inserted where the anchor is already decoupled by a copy with a single consumer
(``IsSkipInsert``): a MemcpyAddrAsyncPass node before the NetOutput, for instance. The inserted node is
named ``identity_<input index>_<consumer>_MemLayoutConflict_<n>`` (``CreateIdentityOpDesc``), takes the
consumer's stream and the producer's batch label. GE's Identity runs as a copy task that reads its
addresses through pointers; zcspec's ``Identity`` op is a view with no task, so the node is zcspec's
refreshable copy op, ``MemcpyAddrAsync``, marked ``_inserted_by="mem_layout_conflict"`` (the model file
reports it as GE's Identity).

``mem_layout_conflict(graph, options) -> Graph`` is pure and returns its input when nothing conflicts;
the planner raises PlanError (or drops zero copy) on such graphs when the pass is off.
"""
from __future__ import annotations

import attrs

from zcspec.impl.compiler.anchor_types import (
    CONTINUOUS_INPUTS, COPY_TYPES, NOPAD_IN, RULES, Anchor, in_types, out_types, spared,
)
from zcspec.impl.compiler.ir import Graph, Node
from zcspec.impl.compiler.memory import rules
from zcspec.impl.compiler.memory.lifetimes import lifetimes
from zcspec.impl.compiler.passes.graph_edit import insert_before_output
from zcspec.impl.compiler.validate import validate
from zcspec.impl.platform.soc import SocProfile, get_soc

NAME = "mem_layout_conflict"
OP = "MemcpyAddrAsync"
def _anchors(graph: Graph, lt, soc) -> dict[str, list[Anchor]]:
    """Root -> the typed anchors of its symbol (outputs first, then inputs, each in execution order)."""
    step = dict(lt.step)
    out: dict[str, list[Anchor]] = {}
    for r, members in lt.members.items():
        anchors = []
        for m in members:
            producer = graph.producer.get(m)
            s = step.get(producer, -1) if producer else -1
            anchors.append(Anchor("out", producer or m, 0 if not producer else graph.node[producer].outputs.index(m),
                                  m, out_types(graph, m, soc), s))
        for m in members:
            for c in dict.fromkeys(graph.consumers.get(m, ())):
                node = graph.node[c]
                types = in_types(graph, node, soc)
                for i, t in enumerate(node.inputs):
                    if t == m:
                        anchors.append(Anchor("in", c, i, m, types, step.get(c, lt.steps)))
        out[r] = sorted(anchors, key=lambda a: (a.side != "out", a.step, a.index))
    return out


def _conflicts(graph: Graph, soc) -> list[Anchor]:
    """The anchors that get a copy, found on the graph as it is before any copy (as GE's
    ``FindConflictNodes`` runs before ``SolveConflict``), deduplicated. Linear in a symbol's anchors
    per rule, apart from the spared pairs, so a tensor with thousands of readers stays cheap."""
    lt = lifetimes(graph)
    chosen: dict[tuple, Anchor] = {}

    def real(t: str) -> str:
        """GE's ``GetRealOutAnchor``: the tensor an in-place chain starts from (a whole root, not a piece of one)."""
        return lt.root[t] if lt.offset[t] == 0 else t

    def choose(a: Anchor) -> None:
        chosen.setdefault((a.side, a.node, a.index if a.side == "in" else a.tensor), a)

    for anchors in _anchors(graph, lt, soc).values():
        by_type: dict[str, list[Anchor]] = {}
        for a in anchors:
            for t in a.types:
                by_type.setdefault(t, []).append(a)
        # Continuous inputs reached by one symbol: every one but the first in execution order copies,
        # apart from a NoPadding cascade, which the planner lays out in place.
        cascade = _cascade(graph, anchors)
        for a in [a for a in anchors if a.types & CONTINUOUS_INPUTS and a not in cascade][1:]:
            choose(a)
        for ta, tb, at in RULES:
            if {ta, tb} <= CONTINUOUS_INPUTS or not by_type.get(ta) or not by_type.get(tb):
                continue
            other = tb if at == ta else ta
            for target in by_type[at]:
                if any(b is not target and not spared(graph, target, at, b, other, real)
                       for b in by_type[other]):
                    choose(target)
    return sorted(chosen.values(), key=lambda a: (a.step, a.side != "out", a.index))


def _cascade(graph: Graph, anchors: list[Anchor]) -> list[Anchor]:
    """The NoPadding continuous inputs of a symbol that need no copy: a NoPadding concat's output read by
    another NoPadding concat, its first such reader in execution order (GE's
    ``nopadding_continuous_input_and_nopadding_continuous_input.cc`` copies only where one output feeds
    several NoPadding concats, all but the first; a concat's output and its first piece are two outputs
    of one symbol, so a cascade is no conflict there, and ``ReAssignContinuousMemory`` lays the inner
    concat's pieces inside the outer one's block, as the planner does, continuous_groups.input_groups). A padding
    (HCCL) input is no cascade: it keeps the copy."""
    spared, seen = [], set()
    for a in anchors:
        if a.side != "in" or (a.types & CONTINUOUS_INPUTS) != {NOPAD_IN} or a.tensor in seen:
            continue
        producer = graph.producer.get(a.tensor)
        if producer is not None and rules.continuous_input(graph.node[producer]) == "nopadding":
            seen.add(a.tensor)
            spared.append(a)
    return spared


class _Names:
    """``identity_<input index>_<consumer>_MemLayoutConflict_<n>``, ``n`` counting up over one run of the pass."""

    def __init__(self, graph: Graph):
        self.taken = set(graph.node) | set(graph.desc)
        self.n = 0

    def copy(self, graph: Graph, tensor: str, consumer: str, index: int) -> Node:
        while (name := f"identity_{index}_{consumer}_MemLayoutConflict_{self.n}") in self.taken \
                or f"{name}:0" in self.taken or f"{name}:src" in self.taken:
            self.n += 1
        self.n += 1
        self.taken |= {name, f"{name}:0", f"{name}:src"}
        producer = graph.producer.get(tensor)
        label = rules.batch_label(graph.node[producer]) if producer else ""
        node_attrs = {**({"_batch_label": label} if label else {}), "_inserted_by": NAME}
        return Node(name, OP, (tensor,), (f"{name}:0",), node_attrs, graph.node[consumer].stream)


def _decoupled(graph: Graph, tensor: str) -> bool:
    """GE's ``IsSkipInsert``: the input already reads a copy that has no other consumer."""
    p = graph.producer.get(tensor)
    return p is not None and graph.node[p].op_type in COPY_TYPES and len(graph.consumers.get(tensor, ())) == 1


def _rewire(graph: Graph, before: dict, after: dict) -> Graph:
    """One rebuild for many copies. ``before``: (node, input index) -> copy: that input reads the copy.
    ``after``: tensor -> copy: every reader but this pass's copies reads the copy. Each copy goes right
    before its first reader."""
    nodes, placed, tensors = [], set(), list(graph.tensors)
    for copy in (*before.values(), *after.values()):
        tensors.append(attrs.evolve(graph.desc[copy.inputs[0]], name=copy.outputs[0]))
    for n in graph.nodes:
        if n.attr("_inserted_by") == NAME:
            nodes.append(n)
            continue
        inputs, mine = list(n.inputs), []
        for i, t in enumerate(n.inputs):
            copy = before.get((n.name, i)) or after.get(t)
            if copy is not None:
                inputs[i] = copy.outputs[0]
                mine.append(copy)
        for copy in mine:
            if copy.name not in placed:
                placed.add(copy.name)
                nodes.append(copy)
        nodes.append(attrs.evolve(n, inputs=tuple(inputs)) if mine else n)
    return attrs.evolve(graph, nodes=nodes, tensors=tensors)


def _insert(graph: Graph, conflicts: list[Anchor]) -> Graph:
    """One copy per anchor: NetOutput inputs first, then other inputs, then outputs, each against the
    graph as the earlier copies left it. Before a NetOutput input the copy writes the graph output
    under its own name (users bind buffers by it) and the source is renamed for its other readers
    (graph_edit.insert_before_output). After an output the copy serves all its readers except the
    copies made here: GE puts that Identity before every consumer, then a second one before the
    NetOutput input (two copies in series), where zcspec's NetOutput copy reads the output itself."""
    names, out = _Names(graph), graph.netoutput.name
    for a in (a for a in conflicts if a.side == "in" and a.node == out):
        tensor = graph.netoutput.inputs[a.index]
        if not _decoupled(graph, tensor):
            copy = names.copy(graph, tensor, out, a.index)
            graph = insert_before_output(graph, tensor, OP, copy.name, stream=copy.stream, **dict(copy.attrs))
    before = {}
    for a in (a for a in conflicts if a.side == "in" and a.node != out):
        tensor = graph.node[a.node].inputs[a.index]
        if not _decoupled(graph, tensor):
            before[(a.node, a.index)] = names.copy(graph, tensor, a.node, a.index)
    graph = _rewire(graph, before, {}) if before else graph
    after = {}
    for a in (a for a in conflicts if a.side == "out"):
        readers = [c for c in graph.consumers.get(a.tensor, ()) if graph.node[c].attr("_inserted_by") != NAME]
        if readers and not (len(readers) == 1 and graph.node[readers[0]].op_type in COPY_TYPES):
            after[a.tensor] = names.copy(graph, a.tensor, readers[0], graph.node[readers[0]].inputs.index(a.tensor))
    return validate(_rewire(graph, {}, after) if after else graph)


def refresh_profile(options) -> SocProfile:
    """The SoC profile as the optimizer judges refreshability by: ``options``' own, with HCCL added to the
    kinds it can refresh when the build is for a refreshable feature base (GE: mem_layout_conflict_util.cc
    ``IsAddressRefreshable``: an HCCL-engine node is unrefreshable unless ``IsGraphFeatureMapRefreshable``). Only
    this pass reads it: the tasks' zero-copy flags and the planner keep the SoC's own profile."""
    soc = options.profile
    if options.feature_base_refreshable:
        return attrs.evolve(soc, refreshable_tasks=soc.refreshable_tasks | {"hccl"})
    return soc


def mem_layout_conflict(graph: Graph, options=None) -> Graph:
    """``options``: CompileOptions (its SoC profile, and whether the feature base is refreshable, decide
    what is unrefreshable, ``refresh_profile``); None: the default SoC."""
    if graph.netoutput is None:
        return graph
    soc = get_soc() if options is None else refresh_profile(options)
    for _ in range(4):   # a copy never creates a new conflict; the loop only guards that claim
        conflicts = _conflicts(graph, soc)
        if not conflicts:
            return graph
        graph = _insert(graph, conflicts)
    raise AssertionError(f"graph {graph.name!r}: memory-layout conflicts remain after 4 rounds of copies")
