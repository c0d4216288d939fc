"""The anchor types of GE's memory-layout conflict checker and the pairs of them that conflict.

GE types every anchor of a symbol (``mem_layout_conflict_util.cc`` ``GetNodeOutputTypes``,
``GetNodeInputTypes``) and checks every pair of types against its checker table (``checker/checker.cc``,
``checker/funcs/*.cc``). Two users read these tables: the conflict optimizer pass
(passes/mem_layout_conflict.py), which puts a copy where a pair conflicts, and in-place (aliases.py),
which refuses an optional in-place pair whose merge would make two symbols' anchors conflict
(``mem_inplace.cc`` ``RemoveSymbolConflicts`` asks ``MemLayoutConflictUtil::IsGraphExistMemConflictSymbol``).
"""
from __future__ import annotations

import attrs

from zcspec.impl.compiler import ops
from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.memory import rules

COPY_TYPES = frozenset({"MemcpyAsync", "MemcpyAddrAsync"})

USER_IN, USER_OUT, IMMUTABLE = "user input", "user output", "immutable output"
UNREFRESH_IN, UNREFRESH_OUT = "unrefreshable input", "unrefreshable output"
CONT_IN, CONT_OUT = "continuous input", "continuous output"
NOPAD_IN, NOPAD_OUT = "NoPadding continuous input", "NoPadding continuous output"

# (type a, type b, the type whose anchor gets the copy). Symmetric: (b, a) is the same pair.
RULES = (
    (USER_IN, CONT_IN, USER_IN),
    (USER_IN, NOPAD_IN, USER_IN),
    (USER_IN, UNREFRESH_IN, UNREFRESH_IN),
    (USER_OUT, CONT_IN, USER_OUT),
    (USER_OUT, NOPAD_IN, USER_OUT),
    (USER_OUT, CONT_OUT, USER_OUT),
    (USER_OUT, NOPAD_OUT, USER_OUT),
    (USER_OUT, IMMUTABLE, USER_OUT),
    (USER_OUT, UNREFRESH_IN, USER_OUT),
    (USER_OUT, UNREFRESH_OUT, USER_OUT),
    (IMMUTABLE, CONT_IN, CONT_IN),
    (IMMUTABLE, NOPAD_IN, NOPAD_IN),
    (CONT_IN, NOPAD_OUT, CONT_IN),
    (NOPAD_IN, NOPAD_OUT, NOPAD_IN),
    (CONT_OUT, CONT_IN, CONT_IN),
    (CONT_OUT, NOPAD_IN, NOPAD_IN),
    (CONT_IN, CONT_IN, CONT_IN),
    (CONT_IN, NOPAD_IN, NOPAD_IN),
    (NOPAD_IN, NOPAD_IN, NOPAD_IN),
)
CONFLICTING = frozenset(frozenset((a, b)) for a, b, _ in RULES)


@attrs.frozen
class Anchor:
    """An output (``side="out"``: ``node`` writes ``tensor``) or an input (``side="in"``: input
    ``index`` of ``node`` reads ``tensor``) of one symbol; ``step`` orders anchors in execution order."""

    side: str
    node: str
    index: int
    tensor: str
    types: frozenset
    step: int


def refreshable(node, soc, *, side: str = "output") -> bool:
    """Whether every task of ``node`` that references its ``side`` ("input"/"output") can be refreshed.

    An atomic-clean (memset) task only references outputs; ``_in_loop=True`` marks a task inside a loop."""
    in_loop = bool(node.attr("_in_loop", False))
    kinds = [k for k in ops.task_kinds(node) if side == "output" or k != "memset"]
    return all(soc.can_refresh(kind, in_loop=in_loop) for kind in kinds)


def unrefreshable(node, soc, side: str) -> bool:
    """A task of ``node`` on ``side`` the SoC cannot refresh. Without zero copy (``SocProfile.zero_copy``
    false) no user buffer is ever bound to a task, so nothing is unrefreshable with respect to it; with
    no SoC (``soc`` None) only the SoC-independent types are asked for."""
    return (soc is not None and soc.zero_copy and bool(ops.task_kinds(node)) and node.op_type not in COPY_TYPES
            and not refreshable(node, soc, side=side))


def piece_view(node) -> bool:
    """An outer-axis Split/Slice view: its outputs are pieces of its input (GE's no-task Split)."""
    return node.attr("_view_offsets") is not None


def out_types(graph: Graph, tensor: str, soc) -> frozenset:
    if tensor in graph.weight:
        return frozenset({IMMUTABLE})
    node = graph.node[graph.producer[tensor]]
    types = set()
    if rules.is_data(node):
        types.add(USER_IN)
    if rules.zero_memory(node):
        types.add(IMMUTABLE)
    if unrefreshable(node, soc, "output"):
        types.add(UNREFRESH_OUT)
    if rules.continuous_output(node):
        types.add(CONT_OUT)
    if piece_view(node):
        types.add(NOPAD_OUT)
    return frozenset(types)


def in_types(graph: Graph, node, soc) -> frozenset:
    if graph.netoutput is not None and node.name == graph.netoutput.name:
        return frozenset({USER_OUT})
    types = set()
    kind = rules.continuous_input(node)
    if kind == "padding":
        types.add(CONT_IN)
    elif kind == "nopadding":
        types.add(NOPAD_IN)
    if unrefreshable(node, soc, "input"):
        types.add(UNREFRESH_IN)
    return frozenset(types)




def spared(graph: Graph, a: Anchor, ta: str, b: Anchor, tb: str, real=None) -> bool:
    """The pairs of listed types that GE's checkers let pass. ``real``: tensor -> the tensor whose memory it
    is through in-place refs (GE's ``GetRealOutAnchor``), which the continuous output x continuous input pair
    needs; without it (``conflict_across``, judging a merge before the symbols exist) that pair conflicts."""
    if USER_OUT in (ta, tb) and {ta, tb} & {CONT_IN, NOPAD_IN}:
        # user_out_and_continuous_input.cc: the NetOutput reads the continuous node's own output.
        out, cont = (a, b) if ta == USER_OUT else (b, a)
        return cont.side == "in" and graph.producer.get(out.tensor) == cont.node
    if {ta, tb} == {NOPAD_IN, NOPAD_OUT}:
        # PhonyConcat -> PhonySplit: the view cuts the concat's own output again.
        view, cont = (a, b) if ta == NOPAD_OUT else (b, a)
        node = graph.node[cont.node]
        return bool(node.outputs) and graph.node[view.node].inputs[0] == node.outputs[0]
    if {ta, tb} == {CONT_OUT, CONT_IN} and real is not None:
        # continuous_output_and_continuous_input.cc: the outputs and the inputs' real sources overlap as one run.
        out, cont = (a, b) if ta == CONT_OUT else (b, a)
        peers = [real(t) for t in graph.node[cont.node].inputs]
        return same_or_partial_same(graph.node[graph.producer[out.tensor]].outputs, peers)
    return False


def same_or_partial_same(outs, peers) -> bool:
    """GE's ``IsSameOrPartialSame`` (mem_layout_conflict_util.cc), which ``IsContinuousOutAndInConflict`` asks of a
    continuous-output node's outputs and a continuous-input node's real input sources: no conflict when their
    common part is one run in both, in one order, that starts one of them and runs to the end of one of them,
    and nothing either has past that run is in the other (one inside the other, or the end of one is the
    start of the other: the outputs as the inputs' header, tail or middle and the other way round). The
    planner lays out exactly these (continuous_groups.merge); the optimizer copies the input of any other overlap."""
    first = next(((i, peers.index(t)) for i, t in enumerate(outs) if t in peers), None)
    if first is None:
        return False    # GE's GetFirstSameIndex finds nothing: both indexes are its "none", not 0
    i, j = first
    if i and j:
        return False
    while i < len(outs) and j < len(peers) and outs[i] == peers[j]:
        i, j = i + 1, j + 1
    if i < len(outs) and j < len(peers):
        return False
    return not set(outs[i:]) & set(peers) and not set(peers[j:]) & set(outs)


CONTINUOUS_INPUTS = frozenset({CONT_IN, NOPAD_IN})


def _typed(graph: Graph, tensors) -> list[tuple[Anchor, str]]:
    """(anchor, type) for every typed anchor of ``tensors``: their outputs and the inputs reading them
    (SoC-independent types only)."""
    out = []
    for m in tensors:
        producer = graph.producer.get(m)
        node = producer or m
        index = graph.node[producer].outputs.index(m) if producer else 0
        for t in out_types(graph, m, None):
            out.append((Anchor("out", node, index, m, frozenset((t,)), 0), t))
        for c in dict.fromkeys(graph.consumers.get(m, ())):
            reader = graph.node[c]
            for t in in_types(graph, reader, None):
                for i, x in enumerate(reader.inputs):
                    if x == m:
                        out.append((Anchor("in", c, i, m, frozenset((t,)), 0), t))
    return out


def conflict_across(graph: Graph, first, second) -> bool:
    """Whether merging the symbols ``first`` and ``second`` (their tensors) would make an anchor of one
    conflict with an anchor of the other (GE's ``RemoveSymbolConflicts``: conflicts each symbol had
    alone were already solved by the optimizer's copies). Types that depend on the SoC (unrefreshable
    tasks) are not asked for."""
    a, b = _typed(graph, first), _typed(graph, second)
    return any(frozenset((ta, tb)) in CONFLICTING and not spared(graph, x, ta, y, tb) for x, ta in a for y, tb in b)
