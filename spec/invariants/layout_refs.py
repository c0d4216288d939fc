"""Where GE's rules decide sharing: a ref output, or an in-place output GE keeps, is computed in its input's memory.

A node whose output is declared a ref of one of its inputs (GE's ``IsRefFromInput``; a zcspec graph's
``_reuse_input``) writes that output over the input: block_mem_assigner.cc ``ApplyOutMemory`` gives the
output the input's block instead of a new one, and GE trusts the flag. zcspec keeps a guard GE does not
(docs/ge-deviations.md, row P9): the output gets memory of its own when writing over the input could
change a value something else still reads (a graph input, weight or variable; a symbol read later or on
another stream; a piece of a no-padding concat). Giving a ref output its own memory is always safe, so
no safety claim sees a planner that stops honouring refs; this one does. It applies only where the plan
itself shows that none of the guard's reasons holds, read from the plan's own facts (the ``alias_of``
chains, ``consumers``, ``producers``, ``streams``, ``node_types``, the spec's op facts), never from the
planner's decision:

- the input's memory is a computed tensor's (feature map, or the zero-copy region when a graph output
  shares it), not a graph input's, a weight's or a variable's;
- every tensor of that memory computed before the node (the input and its aliases) is neither a graph
  output nor read after the node, and every task that reads one of them runs on the node's stream;
- none of them is written or read by a no-padding concat (its pieces share one output).

An optional in-place pair (GE's ``_output_inplace_ability``, a zcspec graph's ``_inplace_ability``) is
kept by mem_inplace.cc ``ProcessInplace`` under more conditions, which the second claim reads from the
plan too: output and input of equal raw bytes, the node the last reader of every output of the input's
producer, no ``continuous_output`` on the node; and, where the spec cannot be sure that GE's conflict
table (``RemoveSymbolConflicts``) lets the pair through, it says nothing: an output that is or feeds a
graph output, or lies in a continuous group.

The third claim is the converse: a pair ProcessInplace refuses for a reason the plan shows (raw bytes that
differ, read-only input memory, a continuous-output node, a producer whose outputs are read after the node
or are graph outputs, or anchors of the merged symbol that GE's conflict table pairs, typed from the plan as
PASS-LAYOUT-CONFLICT types them from a model file) does not put the output over that input. The conflict
reason sees what the plan still holds: zcspec's compiler runs the alias analysis before the conflict pass,
so a pair it wrongly kept gets a copy that takes the conflict away again (tests/spec/test_layout_refs.py).
"""
from __future__ import annotations

import attrs

from zcspec.spec import op_facts
from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._conflicts import (CONT_IN, CONT_OUT, CONTINUOUS_INPUTS, DATA_TYPES, IMMUTABLE,
                                               IMMUTABLE_TYPES, NOPAD_IN, NOPAD_OUT, PAIRS, PIECE_VIEW_TYPES,
                                               USER_IN, USER_OUT)
from zcspec.spec.invariants._util import GE_MEM
from zcspec.spec.observables.plan import PlacedTensor, PlanObservation, alias_root

# The regions a computed tensor lives in: the feature map, or the zero-copy region when it is a graph output.
WORK = ("feature_map", "zero_copy")
# Producers whose outputs are the model's fixed memory: graph inputs, state, constants.
FIXED_PRODUCERS = frozenset({"Data", "RefData", "AippData", "Variable", "Const", "Constant"})


def _nopadding(plan: PlanObservation, node: str | None) -> bool:
    return node is not None and op_facts.continuous_input(plan.node_types.get(node, "")) == "nopadding"


def _free_to_overwrite(plan: PlanObservation, out: str, into: str) -> bool:
    """Whether the plan's own facts show that the node writing ``out`` may write over ``into``'s memory."""
    step = {n: i for i, n in enumerate(plan.order)}
    node = plan.producers.get(out)
    if node is None or node not in step:
        return False
    here, by = step[node], plan.tensor
    root = alias_root(by, into)
    owner = plan.producers.get(root)
    if (by[root].region not in WORK or root in plan.fixed or root in plan.graph_inputs or owner is None
            or plan.node_types.get(owner) in FIXED_PRODUCERS):
        return False
    outputs, stream = set(plan.graph_outputs), plan.streams.get(node)
    for t in plan.tensors:
        if t.name == out or alias_root(by, t.name) != root:
            continue
        made = step.get(plan.producers.get(t.name, ""), -1)
        if made >= here:   # computed after the node: over the output, not the input
            continue
        if t.name in outputs or _nopadding(plan, plan.producers.get(t.name)):
            return False
        for r in plan.consumers.get(t.name, ()):
            reader = plan.order[r]
            if r > here or _nopadding(plan, reader):
                return False
            if reader != node and reader in plan.streams and plan.streams[reader] != stream:
                return False
    return True


def _applicable(plan: PlanObservation):
    return [(out, into) for out, into in sorted(plan.refs.items()) if _free_to_overwrite(plan, out, into)]


def _ref_shares_input(plan: PlanObservation):
    for out, into in _applicable(plan):
        o, i = plan.tensor[out], plan.tensor[into]
        if (o.region, o.offset) != (i.region, i.offset):
            yield violation(f"tensor {out!r}", f"is a ref of {into!r} (its node's _reuse_input), which nothing "
                            f"reads after it and no graph input, weight or variable owns, yet it lies at "
                            f"{o.region}+{o.offset} while {into!r} lies at {i.region}+{i.offset}: GE computes a "
                            f"ref output in its input's memory", offset=o.offset, expected=i.offset,
                            region=o.region, input=into)


REF_SHARES_INPUT = Invariant(
    id="LAYOUT-REF-SHARES-INPUT",
    title="A ref output that may overwrite its input lies in its input's memory",
    statement="For every tensor the graph declares a ref of an input of its node (refs), where the plan shows "
              "the node may overwrite that input (the input's memory is a computed tensor's, in the feature map "
              "or the zero-copy region, not a graph input's, a weight's or a variable's; every tensor of that memory computed before the node is no graph output, "
              "is read by no task after the node or on another stream, and is neither written nor read by a "
              "no-padding concat), the output starts at the input's region and offset.",
    rationale="A ref output with memory of its own is safe, so no safety claim notices a planner that stops "
              "honouring refs; but it is not GE's layout: GE gives the output its input's block "
              "(ApplyOutMemory, trusting IsRefFromInput), the kernel writes in place, and the memory the model "
              "asks for is smaller by the output's block. zcspec's guard (docs/ge-deviations.md, P9) gives the "
              "output its own memory only where writing in place could change a value something still reads; "
              "where the plan shows no such reader, the ref must be honoured.",
    ge_source=GE_MEM + "block_mem_assigner.cc (BlockMemAssigner::ApplyOutMemory, IsSymbolExist); graph_metadef/"
              "graph/utils/graph_utils.cc (GraphUtils::IsRefFromInput, GetRefMapping)",
    applies_to="plan", concern="layout_refs", predicate=_ref_shares_input,
    precondition=lambda plan: bool(_applicable(plan)), ge_only=True, needs=("refs",),
)

# -- LAYOUT-INPLACE-SHARES-INPUT ----------------------------------------------------------------

def _outputs_of(plan: PlanObservation, node: str) -> list[str]:
    return [t for t, p in plan.producers.items() if p == node]


def _in_groups(plan: PlanObservation) -> set[str]:
    grouped = {t for g in plan.continuous_groups for t in g.tensors}
    return grouped | {t for g in plan.continuous_outputs for t in g.tensors}


def _views_of(plan: PlanObservation, name: str) -> set[str]:
    """``name`` and every tensor whose alias_of chain passes through it."""
    out = {name}
    for t in plan.tensors:
        chain, seen = t.name, []
        while chain is not None and chain not in seen:
            if chain == name:
                out.add(t.name)
                break
            seen.append(chain)
            chain = plan.tensor[chain].alias_of
    return out


def _pair_kept(plan: PlanObservation, out: str, into: str) -> bool:
    """Whether GE's ProcessInplace keeps the pair (out, into), by what the plan shows."""
    o, i = plan.tensor[out], plan.tensor[into]
    node = plan.producers.get(out)
    if o.nbytes is None or o.nbytes != i.nbytes or node is None or not _free_to_overwrite(plan, out, into):
        return False
    if any(g.node == node for g in plan.continuous_outputs):
        return False
    here = plan.order.index(node)
    owner, outputs = plan.producers.get(into), set(plan.graph_outputs)
    if owner is not None:
        for t in _outputs_of(plan, owner):
            if t in outputs or any(r > here for r in plan.consumers.get(t, ())):
                return False
    mine = _views_of(plan, out)
    return not (mine & outputs or (mine | {into}) & _in_groups(plan))


def _inplace_applicable(plan: PlanObservation):
    return [(out, ins) for out, ins in sorted(plan.inplace.items())
            if out not in plan.refs and any(_pair_kept(plan, out, i) for i in ins)]


def _inplace_shares_input(plan: PlanObservation):
    for out, ins in _inplace_applicable(plan):
        o = plan.tensor[out]
        if not any((o.region, o.offset) == (plan.tensor[i].region, plan.tensor[i].offset) for i in ins):
            kept = [i for i in ins if _pair_kept(plan, out, i)]
            yield violation(f"tensor {out!r}", f"may be computed in place over {kept[0]!r} (an in-place pair of its "
                            f"node: equal raw bytes, nothing reads that input or its producer's other outputs "
                            f"after the node), yet it lies at {o.region}+{o.offset}, over none of its inputs "
                            f"{list(ins)}: GE's ProcessInplace keeps such a pair", offset=o.offset, inputs=list(ins))


INPLACE_SHARES_INPUT = Invariant(
    id="LAYOUT-INPLACE-SHARES-INPUT",
    title="An in-place pair GE keeps puts the output in its input's memory",
    statement="For every tensor the graph gives optional in-place inputs (inplace) and declares no ref, where one "
              "of those inputs passes what GE's ProcessInplace asks (the input may be overwritten as for "
              "LAYOUT-REF-SHARES-INPUT; output and input of equal raw bytes; no output of the input's producer is "
              "a graph output or read after the node; the node carries no continuous_output) and the output is "
              "clear of the conflicts the spec cannot judge (neither it nor a view of it is a graph output or in "
              "a continuous group, nor is the input), the output starts at the region and offset of one of its "
              "in-place inputs.",
    rationale="An in-place output with memory of its own is safe, so no safety claim sees a planner that drops "
              "GE's in-place pairs; but GE keeps the first pair that passes (mem_inplace.cc ProcessInplace) and "
              "the model needs one block fewer. Which of several passing pairs wins is left open: the claim asks "
              "only that the output shares one.",
    ge_source=GE_MEM + "mem_inplace.cc (ProcessInplace, RemoveOutRwConflicts, RemoveSymbolConflicts); "
              "graph_metadef/graph/utils/graph_utils.cc (GraphUtils::GetSupportInplaceOutput)",
    applies_to="plan", concern="layout_refs", predicate=_inplace_shares_input,
    precondition=lambda plan: bool(_inplace_applicable(plan)), ge_only=True, needs=("inplace",),
)

# -- LAYOUT-INPLACE-REFUSED --------------------------------------------------------------------

# The pairs of anchor types GE's checkers make conflict (spec/invariants/_conflicts.py's PAIRS), and two
# continuous inputs reached by one symbol (continuous_input_and_continuous_input.cc and its NoPadding siblings).
CONFLICTING = frozenset({frozenset((a, b)) for a, b, _ in PAIRS}
                        | {frozenset((a, b)) for a in CONTINUOUS_INPUTS for b in CONTINUOUS_INPUTS})


@attrs.frozen
class _Anchor:
    side: str     # "out": ``node`` writes ``tensor``; "in": ``node`` reads it
    node: str | None
    tensor: str
    type: str


def _view_of(plan: PlanObservation, t: PlacedTensor) -> bool:
    """A view's output: aliases its input and its node runs no task (the plan's ``streams`` leaves it out)."""
    node = plan.producers.get(t.name)
    return t.alias_of is not None and node is not None and bool(plan.streams) and node not in plan.streams


def _out_types(plan: PlanObservation, name: str) -> set[str]:
    node = plan.producers.get(name)
    kind = plan.node_types.get(node, "") if node is not None else ""
    types = set()
    if name in plan.graph_inputs or kind in DATA_TYPES:
        types.add(USER_IN)
    if node is None or name in plan.fixed or kind in IMMUTABLE_TYPES:
        types.add(IMMUTABLE)
    if any(g.node == node and len(g.tensors) > 1 for g in plan.continuous_outputs):
        types.add(CONT_OUT)
    if kind in PIECE_VIEW_TYPES and _view_of(plan, plan.tensor[name]):
        types.add(NOPAD_OUT)
    return types


def _in_types(plan: PlanObservation, step: int) -> set[str]:
    node = plan.order[step]
    kind = plan.node_types.get(node, "")
    if kind == "NetOutput":
        return {USER_OUT}
    reads = sum(steps.count(step) for steps in plan.consumers.values())
    continuous = op_facts.continuous_input(kind) if reads > 1 else None
    return {CONT_IN} if continuous == "padding" else {NOPAD_IN} if continuous == "nopadding" else set()


def _anchors(plan: PlanObservation, tensors) -> list[_Anchor]:
    out = []
    for m in tensors:
        out += [_Anchor("out", plan.producers.get(m), m, t) for t in sorted(_out_types(plan, m))]
        for r in dict.fromkeys(plan.consumers.get(m, ())):
            out += [_Anchor("in", plan.order[r], m, t) for t in sorted(_in_types(plan, r))]
    return out


def _spared(plan: PlanObservation, a: _Anchor, b: _Anchor) -> bool:
    """The pairs of listed types GE's checkers let pass (as for PASS-LAYOUT-CONFLICT); a continuous output and a
    continuous input conflict here, since the merge is judged before the symbols it would make exist."""
    types = {a.type, b.type}
    if USER_OUT in types and types & CONTINUOUS_INPUTS:
        out, cont = (a, b) if a.type == USER_OUT else (b, a)   # user_out_and_continuous_input.cc
        return cont.side == "in" and plan.producers.get(out.tensor) == cont.node
    if types == {NOPAD_IN, NOPAD_OUT}:
        view, cont = (a, b) if a.type == NOPAD_OUT else (b, a)   # the view cuts the concat's own output
        return plan.tensor[view.tensor].alias_of in _outputs_of(plan, cont.node)
    return False


def _symbol_root(plan: PlanObservation, name: str) -> str:
    """Where ``name``'s GE symbol starts: its ``alias_of`` chain, up to a piece of a no-padding concat (a piece
    lies in the concat's output without sharing its symbol: GE lays the pieces out, it does not merge them)."""
    seen = [name]
    while (up := plan.tensor[seen[-1]].alias_of) is not None and up not in seen:
        if _nopadding(plan, plan.producers.get(up)):
            break
        seen.append(up)
    return seen[-1]


def _symbol_conflict(plan: PlanObservation, out: str, into: str) -> str | None:
    """GE's RemoveSymbolConflicts: merging ``into``'s symbol (the tensors of its memory computed before the
    node) with ``out`` and its views must not make an anchor of one conflict with an anchor of the other."""
    step = {n: i for i, n in enumerate(plan.order)}
    here = step[plan.producers[out]]
    root = _symbol_root(plan, into)
    mine = {t.name for t in plan.tensors if _symbol_root(plan, t.name) == root
            and step.get(plan.producers.get(t.name, ""), -1) < here} | {into}
    theirs, todo = set(), [out]
    while todo:
        t = todo.pop()
        if t not in theirs:
            theirs.add(t)
            todo += [v.name for v in plan.tensors if v.alias_of == t and _view_of(plan, v)]
    for a in _anchors(plan, sorted(mine)):
        for b in _anchors(plan, sorted(theirs)):
            if frozenset((a.type, b.type)) in CONFLICTING and not _spared(plan, a, b):
                return (f"merging them would put {a.type} ({a.node} {a.side}put {a.tensor!r}) and {b.type} "
                        f"({b.node} {b.side}put {b.tensor!r}) in one symbol (RemoveSymbolConflicts)")
    return None


def _refusal(plan: PlanObservation, out: str, into: str) -> str | None:
    """Why GE's ProcessInplace refuses the optional pair (out, into), where the plan shows a reason; None else."""
    o, i = plan.tensor[out], plan.tensor[into]
    node = plan.producers.get(out)
    if node is None or node not in plan.order:
        return None
    if o.nbytes is not None and i.nbytes is not None and o.nbytes != i.nbytes:
        return f"their raw bytes differ ({o.nbytes} and {i.nbytes}: RemoveSizeNotEqual)"
    root = _symbol_root(plan, into)
    owner = plan.producers.get(root)
    if (root in plan.fixed or root in plan.graph_inputs or owner is None
            or plan.node_types.get(owner) in FIXED_PRODUCERS):
        whose = "a graph input's" if root in plan.graph_inputs else "a weight's, variable's or constant's"
        return (f"{into!r} lies in read-only memory, " + (f"{whose}" if root == into else f"{root!r}'s, {whose}")
                + " (RemoveInRwConflicts)")
    if any(g.node == node for g in plan.continuous_outputs):
        return f"{node!r} has continuous outputs (RemoveOutRwConflicts)"
    here = plan.order.index(node)
    producer = plan.producers.get(into)
    for t in _outputs_of(plan, producer) if producer is not None else ():
        if t in plan.graph_outputs or any(r > here for r in plan.consumers.get(t, ())):
            return (f"{producer!r}'s output {t!r} is " + ("a graph output" if t in plan.graph_outputs else
                    "read after the node") + " (GetSupportInplaceOutput: the node must be its last reader)")
    return _symbol_conflict(plan, out, into)


def _refused(plan: PlanObservation):
    """(output, {input: why}) for every optional pair GE refuses, by what the plan shows."""
    for out, ins in sorted(plan.inplace.items()):
        if out in plan.refs:
            continue
        why = {i: r for i in ins if (r := _refusal(plan, out, i)) is not None}
        if why:
            yield out, ins, why


def _inplace_refused(plan: PlanObservation):
    for out, ins, why in _refused(plan):
        o = plan.tensor[out]
        at = [i for i in ins if (plan.tensor[i].region, plan.tensor[i].offset) == (o.region, o.offset)
              and plan.tensor[i].size and o.size]
        if at and all(i in why for i in at):
            yield violation(f"tensor {out!r}", f"lies at {o.region}+{o.offset}, over its in-place input {at[0]!r}, "
                            f"a pair GE's ProcessInplace refuses: {why[at[0]]}", offset=o.offset, input=at[0],
                            region=o.region)


INPLACE_REFUSED = Invariant(
    id="LAYOUT-INPLACE-REFUSED",
    title="An in-place pair GE refuses does not share its input's memory",
    statement="For every tensor the graph gives optional in-place inputs (inplace) and declares no ref, the output "
              "does not start at the region and offset of an input whose pair GE's ProcessInplace refuses by what "
              "the plan shows: output and input of different raw bytes; the input's memory read-only (a graph "
              "input's, a weight's, a variable's, a constant's); the node carrying continuous outputs; an output of "
              "the input's producer a graph output or read after the node; or the input's symbol (the tensors of "
              "its memory computed before the node) and the output with its views holding anchors of two types "
              "GE's conflict checkers pair (a graph output and a continuous input not its own, two continuous "
              "inputs, a continuous output and a continuous input, ...), unless another input at that memory is "
              "one GE keeps.",
    rationale="GE refuses these pairs before it merges any symbol (mem_inplace.cc: RemoveSizeNotEqual, "
              "RemoveInRwConflicts, RemoveOutRwConflicts, RemoveSymbolConflicts). Most refusals keep a layout "
              "conflict from arising that would otherwise cost a copy or a wrong address, and some are merely "
              "conservative, so a planner that stops refusing can stay safe on its own cases and still not be GE: "
              "the output shares memory GE would give a block of its own. LAYOUT-INPLACE-SHARES-INPUT is the "
              "converse: a pair GE keeps.",
    ge_source=GE_MEM + "mem_inplace.cc (ProcessInplace, RemoveSizeNotEqual, RemoveInRwConflicts, "
              "RemoveOutRwConflicts, RemoveSymbolConflicts); compiler/graph/optimize/mem_layout_conflict_optimize/"
              "mem_layout_conflict_util.cc (MemLayoutConflictUtil::IsGraphExistMemConflictSymbol)",
    applies_to="plan", concern="layout_refs", predicate=_inplace_refused,
    precondition=lambda plan: any(True for _ in _refused(plan)), ge_only=True, needs=("inplace",),
)

INVARIANTS = (REF_SHARES_INPUT, INPLACE_SHARES_INPUT, INPLACE_REFUSED)
