"""Which tensors share one continuous block, read from the graph: the continuous-input groups (NoPadding concats
nested in the concat that reads their output, a cascade), the continuous-output groups, and the chains in which
continuous outputs feed padding continuous inputs (GE's ContinuousMemMng), and the separate-clean groups that
start with one tensor (``clean_sets``). ``units`` turns each into one unit; any other way a tensor would sit in
two continuous blocks is a PlanError naming it."""
from __future__ import annotations

from typing import Mapping

import attrs

from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.memory import rules
from zcspec.impl.compiler.memory.errors import PlanError
from zcspec.impl.compiler.memory.lifetimes import Lifetimes


def input_groups(graph: Graph, lt: Lifetimes) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Continuous-input node -> its input roots, checked: distinct, in one group only, not fixed; and the
    NoPadding concats nested in another (inner node -> outer node).

    A cascade nests: when an input of a NoPadding concat X is the output of a NoPadding concat Y, and that
    output's root is Y's first piece (a NoPadding concat's output aliases its input 0), Y's pieces sit in
    X's block in Y's place, so X's group takes Y's roots and Y is no unit of its own. GE lays it out so:
    ``ReAssignContinuousMemory`` assigns X's inputs first, then Y's from the offset X gave Y's output
    (graph_mem_assigner.cc ``AssignContinuousInputMemory`` with ``reverse_refresh``), and its conflict
    optimizer inserts no copy there (``nopadding_continuous_input_and_nopadding_continuous_input.cc``).
    Deeper cascades nest by the same rule, innermost first. Any other tensor in two groups, or a cascade
    through a padding (HCCL) group, stays a PlanError. A separate-clean node is no group here (``clean_sets``)."""
    groups: dict[str, list[str]] = {}
    inner: dict[str, str] = {}
    owner: dict[str, str] = {}
    for name in lt.order:
        node = graph.node[name]
        kind = rules.continuous_input(node)
        if kind is None or rules.separate_clean(node):
            continue
        roots = []
        for t in node.inputs:
            r = _planned_root(graph, lt, name, t)
            nested = _cascade(graph, groups, owner, kind, t, r)
            if nested is not None:
                roots += groups.pop(nested)
                inner[nested] = name
                continue
            if r in owner or r in roots:
                other = owner.get(r, name)
                raise PlanError(f"tensor {r!r} (via input {t!r}) would have to sit in two continuous-input "
                                f"blocks (nodes {other!r} and {name!r})", node=name, tensor=t,
                                rule="continuous input, block_mem_assigner.cc AssignContinuousBlocks")
            roots.append(r)
        for r in roots:
            owner[r] = name
        groups[name] = roots
    return groups, inner


def _planned_root(graph: Graph, lt: Lifetimes, name: str, t: str) -> str:
    """The root of continuous input ``t`` of node ``name``, which must be planner memory: a weight or variable
    sits at a fixed address, where no block can put it next to the other inputs."""
    r = lt.root[t]
    if r in graph.weight or rules.zero_memory(graph.node[graph.producer[r]]):
        raise PlanError(f"node {name!r} needs its inputs in one continuous block, but input {t!r} is a "
                        "weight or variable at a fixed address; copy it first (MemcpyAsync)",
                        node=name, tensor=t, rule="continuous input, block_mem_assigner.cc AssignContinuousBlocks")
    return r


@attrs.frozen
class CleanSet:
    """The separate-clean continuous-input nodes (``rules.separate_clean``) whose first inputs share one root,
    ``head``: GE gives that root one ordinary block, as large as the largest of the groups
    (block_mem_assigner.cc ``GetOutputTotalSizeAndOutCount`` takes the largest total over the output's
    continuous-input readers), and lays each group out from its start (graph_mem_assigner.cc
    ``AssignContinuousInputMemory``: input 0's offset, then each input after the one before). ``groups``:
    (node, its input roots, head first), in execution order."""

    head: str
    groups: tuple[tuple[str, tuple[str, ...]], ...]


def clean_sets(graph: Graph, lt: Lifetimes, taken: Mapping[str, list[str]],
               out_groups: Mapping[str, list[str]]) -> list[CleanSet]:
    """The separate-clean groups, one ``CleanSet`` per first input, in execution order of their first node.

    Only the first input is shared: GE applies memory for input 0 alone (``GetNoNeedAssignMemoryFlag``: an
    output that is input 0 of some reader gets its own block; one that is only a later input of a
    separate-clean node gets none) and sizes that block for every group it starts, while a later input takes
    the offset its group gives it (``SetMemOffset``). A later input in two groups, the first input of one
    group and a later input of another, or an input also in a continuous group of another kind (``taken``,
    ``out_groups``: GE would write its offset twice) is a PlanError naming the tensor and both nodes."""
    other = {r: name for groups in (taken, out_groups) for name, roots in groups.items() for r in roots}
    sets: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    place: dict[str, tuple[str, int]] = {}   # root -> (node, input index) of its first clean group
    for name in lt.order:
        node = graph.node[name]
        if not rules.separate_clean(node):
            continue
        roots: list[str] = []
        for k, t in enumerate(node.inputs):
            r = _planned_root(graph, lt, name, t)
            was = place.get(r)
            if r in other:
                clash = other[r]
            elif r in roots:
                clash = name
            elif was is not None and (k > 0 or was[1] > 0):   # a later input here or where it was first seen
                clash = was[0]
            else:
                clash = None
            if clash is not None:
                raise PlanError(f"tensor {r!r} (via input {t!r}) would have to sit in two continuous-input blocks "
                                f"(nodes {clash!r} and {name!r}): only the first input of separate-clean "
                                "continuous inputs may start several groups", node=name, tensor=t,
                                rule="separate clean, block_mem_assigner.cc GetNoNeedAssignMemoryFlag")
            place.setdefault(r, (name, k))
            roots.append(r)
        sets.setdefault(roots[0], []).append((name, tuple(roots)))
    return [CleanSet(head, tuple(groups)) for head, groups in sets.items()]


def _cascade(graph: Graph, groups: dict[str, list[str]], owner: dict[str, str], kind: str, t: str,
             r: str) -> str | None:
    """The NoPadding concat whose group nests in a NoPadding concat's input ``t`` (root ``r``), or None:
    ``t`` is that concat's output, rooted at its first piece, and its group is still a unit of its own."""
    y = graph.producer.get(t)
    if kind != "nopadding" or y is None or owner.get(r) != y or y not in groups or groups[y][0] != r:
        return None
    return y if rules.continuous_input(graph.node[y]) == "nopadding" else None


def output_groups(graph: Graph, lt: Lifetimes, taken: dict[str, list[str]]) -> dict[str, list[str]]:
    """Continuous-output node -> its output roots (GE's block_mem_assigner.cc ``ApplyContinuousMemory``). A node
    whose outputs reuse its inputs is skipped (its outputs are its inputs): in zcspec's IR that is a view,
    whose outputs all alias input 0 (GE's INTERNAL_ERROR for only some cannot arise: in-place ops have one
    output). An output that is also a padding (HCCL) continuous input is laid out with it (``chains``); one
    in a NoPadding group is a PlanError (GE's ContinuousMemMng only joins ``IsContinuousInput`` nodes, and
    checker.cc registers that pair as an absolute conflict: the optimizer copies it)."""
    in_group = {r: name for name, roots in taken.items() for r in roots}
    groups: dict[str, list[str]] = {}
    for name in lt.order:
        node = graph.node[name]
        if not rules.continuous_output(node):
            continue
        if any(lt.root[t] != t for t in node.outputs):
            continue
        for t in node.outputs:
            if t in in_group and rules.continuous_input(graph.node[in_group[t]]) != "padding":
                raise PlanError(f"output {t!r} of continuous-output node {name!r} also feeds the NoPadding continuous "
                                f"inputs of {in_group[t]!r}: it would sit in two continuous blocks; copy it first",
                                node=name, tensor=t,
                                rule="continuous output, block_mem_assigner.cc ApplyContinuousMemory")
        groups[name] = list(node.outputs)
    return groups


@attrs.frozen
class Chain:
    """One block for continuous outputs and the padding continuous inputs they feed (GE's ``ContinuousMem`` of
    scenario ``kContinuousMemScenarioOutIn``): ``roots`` in block order; ``nodes``, the continuous-input and
    continuous-output nodes whose groups it joins, in the order they were joined."""

    roots: tuple[str, ...]
    nodes: tuple[str, ...]


def chains(graph: Graph, groups: dict[str, list[str]], out_groups: dict[str, list[str]]) -> list[Chain]:
    """Join every continuous-output group that shares a root with a padding continuous-input group, and every
    group joined to those, into one sequence in which each group is a run in its own order; the joined groups
    leave ``groups`` and ``out_groups``.

    GE's ``ContinuousMemMng::Init`` (continuous_mem.cc) walks from the first output of such a chain
    (``FindFirstNode``) through each continuous output's outputs and each continuous input's inputs
    (``SaveNodeOutInOrder``), and ``ApplyContinuousMemWithMng`` gives the whole chain one block, each piece at
    the sum of the 512-aligned sizes before it (``SetOffsetForContinuousMem``): an output is a header, a tail
    or the middle of an input sequence and the other way round. Two groups overlapping anywhere else (an
    input sequence in another order than the outputs, a gap) have no such sequence: a PlanError naming the
    tensors (GE's conflict checker copies such an input first, ``IsContinuousOutAndInConflict``). Groups are
    joined breadth first from a continuous-output node in execution order; the sequence does not depend on
    that order, since every joined group shares a run with what is joined already."""
    padding_of = {r: name for name, roots in groups.items() if rules.continuous_input(graph.node[name]) == "padding"
                  for r in roots}
    out_of = {r: name for name, roots in out_groups.items() for r in roots}
    starts = [name for name, roots in out_groups.items() if any(r in padding_of for r in roots)]
    chains, done = [], set()
    for start in starts:
        if ("out", start) in done:
            continue
        key = ("out", start)
        queue, seen, roots, joined = [key], {key}, list(out_groups[start]), []
        while queue:
            side, name = key = queue.pop(0)
            seq = out_groups[name] if side == "out" else groups[name]
            if joined:
                merged = merge(roots, seq)
                if merged is None:
                    raise _overlap_error(graph, side, name, seq, roots, padding_of, out_of)
                roots = merged
            joined.append(key)
            for r in seq:
                other = ("in", padding_of[r]) if side == "out" and r in padding_of else \
                        ("out", out_of[r]) if side == "in" and r in out_of else None
                if other is not None and other not in seen:
                    seen.add(other)
                    queue.append(other)
        done |= set(joined)
        chains.append(Chain(tuple(roots), tuple(name for _, name in joined)))
    for side, name in done:
        (out_groups if side == "out" else groups).pop(name)
    return chains


def merge(seq: list[str], group: list[str]) -> list[str] | None:
    """``seq`` extended so that ``group`` is a run of it in its own order, or None if no sequence holds both:
    their shared roots must be a run of each, in one order, and what ``group`` adds before (after) that run
    needs the run to start (end) ``seq``. GE's ``IsSameOrPartialSame`` (mem_layout_conflict_util.cc) accepts
    the same overlaps: one inside the other, or the end of one is the start of the other."""
    at = {r: i for i, r in enumerate(seq)}
    shared = [k for k, r in enumerate(group) if r in at]
    k0, k1 = shared[0], shared[-1]
    i0 = at[group[k0]]
    if k1 - k0 + 1 != len(shared) or any(at[group[k]] != i0 + k - k0 for k in shared):
        return None
    head, tail = group[:k0], group[k1 + 1:]
    if (head and i0 != 0) or (tail and i0 + len(shared) != len(seq)):
        return None
    return head + seq + tail


def _overlap_error(graph: Graph, side: str, name: str, seq, roots, padding_of, out_of) -> PlanError:
    shared = [r for r in seq if r in roots]
    other_of = out_of if side == "in" else padding_of
    other = next((other_of[r] for r in shared if r in other_of), None)
    cont_in, cont_out = (name, other) if side == "in" else (other, name)
    return PlanError(f"the continuous inputs of {cont_in!r} ({', '.join(graph.node[cont_in].inputs)}) and the "
                     f"continuous outputs of {cont_out!r} ({', '.join(graph.node[cont_out].outputs)}) share "
                     f"{', '.join(shared)} in an order no one block holds (each sequence back to back in its own "
                     "order); copy the input first", node=cont_in, tensor=shared[0],
                     rule="continuous output and continuous input, continuous_mem.cc ContinuousMemMng")
