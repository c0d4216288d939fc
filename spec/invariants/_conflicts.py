"""Where GE's memory-layout conflict optimizer must put its copies, recomputed by the spec from a model file.

GE's ``MemLayoutConflictOptimizer`` (``compiler/graph/optimize/mem_layout_conflict_optimize/``) types every
anchor of a symbol (the tensors that share memory through views and in-place outputs) and checks every pair
of types against its checker table; where a pair conflicts, an Identity goes at the anchor the table names.
The spec rebuilds the graph the optimizer saw from the observation alone: the compiled graph's nodes with
their tensors (``NodeInfo.in_tensors``/``out_tensors``), the conflict copies taken out again (an Identity
that runs a task), the symbols from the views (``NodeInfo.view``) and from the tasks that write an output over
an input (an input slot and an output slot of one task on overlapping bytes), each anchor typed from the
spec's own tables (op_facts.py, capabilities.py) and the tasks the file defines. Nothing is read from the
compiler's own conflict tables.

The types and pairs (GE: ``mem_layout_conflict_util.cc`` ``GetNodeOutputTypes``/``GetNodeInputTypes``;
``checker/checker.cc`` ``RegAllAbsoluteConflict`` and the other registrations; ``checker/funcs/*.cc``)
are ``PAIRS`` below, with the anchor that gets the copy.
"""
from __future__ import annotations

import attrs

from zcspec.spec import op_facts
from zcspec.spec.capabilities import Capabilities
from zcspec.spec.observables.model_file import ModelFileObservation, NodeInfo, Task

USER_IN, USER_OUT, IMMUTABLE = "user input", "user output", "immutable output"
UNREFRESH_IN, UNREFRESH_OUT = "unrefreshable input", "unrefreshable output"
CONT_IN, CONT_OUT = "continuous input", "continuous output"
NOPAD_IN, NOPAD_OUT = "NoPadding continuous input", "NoPadding continuous output"
CONTINUOUS_INPUTS = frozenset({CONT_IN, NOPAD_IN})

# (type a, type b, the type whose anchor gets the copy), symmetric, as GE's checker registrations pair them
# (checker/checker.cc; the files under checker/funcs/ say where each copy goes).
PAIRS = (
    (USER_IN, CONT_IN, USER_IN),         # user_in_and_continuous_in_out_checker.cc: right after the Data
    (USER_IN, NOPAD_IN, USER_IN),
    (USER_IN, UNREFRESH_IN, UNREFRESH_IN),   # RegAllAbsoluteConflict: before the unrefreshable input
    (USER_OUT, CONT_IN, USER_OUT),       # user_out_and_continuous_input.cc
    (USER_OUT, NOPAD_IN, USER_OUT),
    (USER_OUT, CONT_OUT, USER_OUT),      # user_out_and_continuous_output.cc
    (USER_OUT, NOPAD_OUT, USER_OUT),
    (USER_OUT, IMMUTABLE, USER_OUT),     # user_out_and_immutable_out_checker.cc
    (USER_OUT, UNREFRESH_IN, USER_OUT),  # user_out_and_unrefresh_in_checker.cc
    (USER_OUT, UNREFRESH_OUT, USER_OUT),  # user_out_and_unrefresh_out_checker.cc
    (IMMUTABLE, CONT_IN, CONT_IN),
    (IMMUTABLE, NOPAD_IN, NOPAD_IN),
    (CONT_IN, NOPAD_OUT, CONT_IN),
    (NOPAD_IN, NOPAD_OUT, NOPAD_IN),     # nopadding_continuous_input_and_nopadding_continuous_out.cc
    (CONT_OUT, CONT_IN, CONT_IN),        # continuous_output_and_continuous_input.cc
    (CONT_OUT, NOPAD_IN, NOPAD_IN),
)
# Two continuous inputs reached by one symbol (continuous_input_and_continuous_input.cc and its NoPadding
# siblings): every one but the first in execution order gets the copy (``_continuous_inputs``).

COPY_NODE_TYPES = frozenset({"MemcpyAsync", "MemcpyAddrAsync"})
DATA_TYPES = frozenset({"Data", "AippData", "RefData"})
IMMUTABLE_TYPES = frozenset({"Const", "Constant", "Variable"})   # weights; CheckIsZeroMemNodeType
PIECE_VIEW_TYPES = frozenset({"Split", "Slice"})                 # GE's no-task Split: NoPadding continuous output
IDENTITY = "Identity"


@attrs.frozen
class Anchor:
    """An output (``side="out"``: ``node`` writes ``tensor``) or an input (``side="in"``: input ``index`` of ``node``
    reads ``tensor``) of the graph before the conflict copies; ``step`` the node's place in execution order."""

    side: str
    node: str
    index: int
    tensor: str
    step: int


@attrs.frozen
class ConflictCopy:
    """An Identity the optimizer put in: it reads ``source`` (a tensor of the graph before the copies) and
    ``readers`` read it ((node, input index) of the graph before the copies)."""

    name: str
    source: str
    readers: tuple[tuple[str, int], ...]


def conflict_copy(n: NodeInfo) -> bool:
    """The conflict optimizer's copy: an Identity that runs a task (a plain Identity is a view)."""
    return n.type == IDENTITY and not n.view


class Conflicts:
    """The graph the optimizer saw, rebuilt from ``mf``, and the anchors GE's table makes copy. ``caps``: the
    SoC's capabilities as the optimizer judges refreshability (HCCL included in a refreshable-feature-base
    build), or None when the SoC supports no zero copy (then no task is unrefreshable towards user memory).

    ``keep``: conflict copies left in as ordinary copies (GE solves one symbol after another on the graph as the
    earlier ones left it, ``MemLayoutConflictOptimizer::Process``, so a copy may answer a conflict that only the
    earlier copies made: ``IsContinuousOutAndInConflict`` sees them among a continuous input's sources).
    ``inplace``: whether an output a task writes over its input counts as one memory with it, which the file
    cannot tell for the time the optimizer ran (the planner makes optional pairs after it, on a copy's output
    too)."""

    def __init__(self, mf: ModelFileObservation, caps: Capabilities | None, *, inplace: bool = True,
                 keep: frozenset = frozenset()):
        self.mf, self.caps, self.inplace = mf, caps, inplace
        self.removed = {n.name for n in mf.nodes if conflict_copy(n) and n.name not in keep}
        origin: dict[str, str] = {}
        for n in mf.nodes:
            if n.name in self.removed and n.in_tensors and n.out_tensors:
                origin[n.out_tensors[0]] = n.in_tensors[0]

        def orig(t: str) -> str:
            seen = set()
            while t in origin and t not in seen:
                seen.add(t)
                t = origin[t]
            return t

        self.orig = orig
        self.nodes = [n for n in mf.nodes if n.name not in self.removed]
        self.node = {n.name: n for n in self.nodes}
        self.step = {n.name: i for i, n in enumerate(self.nodes)}
        self.ins = {n.name: tuple(orig(t) for t in n.in_tensors) for n in self.nodes}
        self.producer = {t: n.name for n in self.nodes for t in n.out_tensors}
        self.readers: dict[str, list[tuple[str, int]]] = {}
        for n in self.nodes:
            for i, t in enumerate(self.ins[n.name]):
                self.readers.setdefault(t, []).append((n.name, i))
        self.tasks: dict[str, list[Task]] = {}
        for t in mf.tasks:
            self.tasks.setdefault(t.node, []).append(t)
        self.parent = self._parents()
        self.copies = tuple(self._copies())

    # -- symbols -------------------------------------------------------------------------------------------
    def _parents(self) -> dict[str, str]:
        """tensor -> the tensor whose memory it is: a view's outputs are its input 0's; with ``inplace``, an output
        a task writes over one of its inputs (slots on overlapping bytes) is that input's, unless that memory is
        a graph input's, a weight's or a variable's (never written in place), seen before the copies."""
        parent: dict[str, str] = {}
        for n in self.nodes:
            ins = self.ins[n.name]
            if n.view and ins:
                for t in n.out_tensors:
                    parent.setdefault(t, ins[0])
        for n in self.nodes if self.inplace else ():
            for task in self.tasks.get(n.name, ()):
                outs = [s for s in task.slots if s.role == "out" and s.tensor]
                for s_in in (s for s in task.slots if s.role == "in" and s.tensor):
                    for s_out in outs:
                        if (s_in.region == s_out.region and s_in.offset < s_out.offset + max(s_out.size, 1)
                                and s_out.offset < s_in.offset + max(s_in.size, 1)):
                            src = self.orig(s_in.tensor)
                            owner = self.producer.get(_top(parent, src))
                            fixed = owner is None or self.node[owner].type in DATA_TYPES | IMMUTABLE_TYPES
                            if s_out.tensor in self.producer and src != s_out.tensor and not fixed:
                                parent.setdefault(s_out.tensor, src)
        return parent

    def root(self, t: str) -> str:
        return _top(self.parent, t)

    def _address(self, t: str):
        for task in self.mf.tasks:
            for s in task.slots:
                if s.tensor == t:
                    return s.region, s.offset
        return None

    def real(self, t: str) -> str:
        """GE's ``GetRealOutAnchor``: the tensor an in-place or view chain starts from, when ``t`` starts where
        it does (a whole tensor, not a piece of one)."""
        r = self.root(t)
        return r if r == t or (a := self._address(t)) is not None and a == self._address(r) else t

    def symbols(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for t in list(self.producer):
            out.setdefault(self.root(t), []).append(t)
        return out

    # -- anchor types -------------------------------------------------------------------------------------
    def _unrefreshable(self, node: NodeInfo, role: str) -> bool:
        if self.caps is None or is_copy(node):
            return False
        return any((not t.slots or any(s.role in (role, "") for s in t.slots))
                   and not self.caps.can_refresh(t.kind, in_loop=t.in_loop) for t in self.tasks.get(node.name, ()))

    def out_types(self, tensor: str) -> frozenset:
        node = self.node[self.producer[tensor]]
        types = set()
        if node.type in DATA_TYPES:
            types.add(USER_IN)
        if node.type in IMMUTABLE_TYPES:
            types.add(IMMUTABLE)
        if self._unrefreshable(node, "out"):
            types.add(UNREFRESH_OUT)
        if node.continuous_output and len(node.out_tensors) > 1:
            types.add(CONT_OUT)
        if node.view and node.type in PIECE_VIEW_TYPES:
            types.add(NOPAD_OUT)
        return frozenset(types)

    def in_types(self, name: str) -> frozenset:
        node = self.node[name]
        if node.type == "NetOutput":
            return frozenset({USER_OUT})
        types = set()
        kind = op_facts.continuous_input(node.type) if len(self.ins[name]) > 1 else None
        if kind == "padding":
            types.add(CONT_IN)
        elif kind == "nopadding":
            types.add(NOPAD_IN)
        if self._unrefreshable(node, "in"):
            types.add(UNREFRESH_IN)
        return frozenset(types)

    def anchors(self, members: list[str]) -> list[tuple[Anchor, frozenset]]:
        out = []
        for m in members:
            p = self.producer[m]
            out.append((Anchor("out", p, self.node[p].out_tensors.index(m), m, self.step[p]), self.out_types(m)))
        for m in members:
            for c, i in self.readers.get(m, ()):
                out.append((Anchor("in", c, i, m, self.step[c]), self.in_types(c)))
        return sorted(out, key=lambda a: (a[0].side != "out", a[0].step, a[0].index))

    # -- which pairs GE's checkers let pass ---------------------------------------------------------------
    def spared(self, a: Anchor, ta: str, b: Anchor, tb: str) -> bool:
        if USER_OUT in (ta, tb) and {ta, tb} & CONTINUOUS_INPUTS:
            # user_out_and_continuous_input.cc: the NetOutput reads the continuous node's own output.
            out, cont = (a, b) if ta == USER_OUT else (b, a)
            return cont.side == "in" and self.producer.get(out.tensor) == cont.node
        if {ta, tb} == {NOPAD_IN, NOPAD_OUT}:
            # nopadding_continuous_input_and_nopadding_continuous_out.cc: the view cuts the concat's own output.
            view, cont = (a, b) if ta == NOPAD_OUT else (b, a)
            outs = self.node[cont.node].out_tensors
            view_in = self.ins[view.node]
            return bool(outs) and bool(view_in) and view_in[0] == outs[0]
        if {ta, tb} == {CONT_OUT, CONT_IN}:
            # continuous_output_and_continuous_input.cc (IsContinuousOutAndInConflict): no conflict when the
            # outputs and the continuous input node's real sources overlap as one run.
            out, cont = (a, b) if ta == CONT_OUT else (b, a)
            peers = [self.real(t) for t in self.ins[cont.node]]
            return same_or_partial_same(list(self.node[self.producer[out.tensor]].out_tensors), peers)
        return False

    # -- the anchors that get a copy ----------------------------------------------------------------------
    def chosen(self) -> dict[tuple, tuple[Anchor, str]]:
        """(side, node, input index or tensor) -> (the anchor that gets a copy, why)."""
        chosen: dict[tuple, tuple[Anchor, str]] = {}

        def choose(a: Anchor, why: str) -> None:
            chosen.setdefault((a.side, a.node, a.index if a.side == "in" else a.tensor), (a, why))

        for members in self.symbols().values():
            typed = self.anchors(members)
            by_type: dict[str, list[Anchor]] = {}
            for a, types in typed:
                for t in types:
                    by_type.setdefault(t, []).append(a)
            conts = [a for a, types in typed if types & CONTINUOUS_INPUTS]
            cascade = self._cascade(typed)
            rest = [a for a in conts if a not in cascade]
            for a in rest[1:]:
                choose(a, f"tensor {a.tensor!r} reaches continuous inputs of {rest[0].node!r} and {a.node!r}")
            for ta, tb, at in PAIRS:
                if not by_type.get(ta) or not by_type.get(tb):
                    continue
                other = tb if at == ta else ta
                for target in by_type[at]:
                    culprit = next((b for b in by_type[other] if b is not target
                                    and not self.spared(target, at, b, other)), None)
                    if culprit is not None:
                        choose(target, f"{at} ({_name(target)}) x {other} ({_name(culprit)})")
        return chosen

    def _cascade(self, typed) -> list[Anchor]:
        """NoPadding continuous inputs that need no copy: a NoPadding concat's output read by another NoPadding
        concat, its first such reader (nopadding_continuous_input_and_nopadding_continuous_input.cc copies only
        an output that feeds several; GraphMemoryAssigner::ReAssignContinuousMemory lays the cascade in place)."""
        spared, seen = [], set()
        for a, types in typed:
            if a.side != "in" or (types & CONTINUOUS_INPUTS) != {NOPAD_IN} or a.tensor in seen:
                continue
            p = self.producer.get(a.tensor)
            if p is not None and op_facts.continuous_input(self.node[p].type) == "nopadding" and len(self.ins[p]) > 1:
                seen.add(a.tensor)
                spared.append(a)
        return spared

    # -- the copies the file has --------------------------------------------------------------------------
    def _copies(self):
        """Every conflict copy, with the tensor it reads and the anchors that read it, through chains of copies."""
        readers: dict[str, list[tuple[str, int]]] = {}
        copy_of = {n.out_tensors[0]: n for n in self.mf.nodes if n.name in self.removed and n.out_tensors}
        for n in self.nodes:
            for i, t in enumerate(n.in_tensors):
                seen = set()
                while t in copy_of and t not in seen:   # the reader's input, back through the copies
                    seen.add(t)
                    readers.setdefault(copy_of[t].name, []).append((n.name, i))
                    t = copy_of[t].in_tensors[0] if copy_of[t].in_tensors else t
        for n in self.mf.nodes:
            if n.name in self.removed and n.in_tensors:
                yield ConflictCopy(n.name, self.orig(n.in_tensors[0]), tuple(readers.get(n.name, ())))

    def decoupled(self, tensor: str) -> bool:
        """GE's ``IsSkipInsert``: the tensor is already a copy's output with no other reader."""
        p = self.producer.get(tensor)
        return p is not None and is_copy(self.node[p]) and len(self.readers.get(tensor, ())) == 1


def is_copy(n: NodeInfo) -> bool:
    """A copy node: MemcpyAddrAsyncPass's (or a MemcpyAsync) or the conflict optimizer's Identity."""
    return n.type in COPY_NODE_TYPES or conflict_copy(n)


def _top(parent: dict[str, str], t: str) -> str:
    """Where ``t``'s chain of parents ends."""
    seen = {t}
    while (p := parent.get(t)) is not None and p not in seen:
        seen.add(p)
        t = p
    return t


def _name(a: Anchor) -> str:
    return f"{a.node} input {a.index}" if a.side == "in" else f"{a.node} output {a.tensor!r}"


def same_or_partial_same(outs: list[str], peers: list[str]) -> bool:
    """GE's ``IsSameOrPartialSame`` (mem_layout_conflict_util.cc): a continuous-output node's outputs and a
    continuous-input node's real input sources overlap as one run: their common part is consecutive and in one
    order in both, starts one of them, runs to the end of one of them, and nothing either has past it is in
    the other (one inside the other, or the end of one is the start of the other). No common tensor at all is
    no such run (GE's ``GetFirstSameIndex`` finds none)."""
    hits = [(i, peers.index(t)) for i, t in enumerate(outs) if t in peers]
    if not hits:
        return False
    i, j = hits[0]
    if i and j:
        return False    # the common part starts neither list
    run = 0
    while i + run < len(outs) and j + run < len(peers) and outs[i + run] == peers[j + run]:
        run += 1
    rest_outs, rest_peers = outs[i + run:], peers[j + run:]
    if rest_outs and rest_peers:
        return False    # the run ends inside both
    return not set(rest_outs) & set(peers) and not set(rest_peers) & set(outs)
