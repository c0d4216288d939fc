"""GE's hold on memory read across streams: a block read on another stream is not handed on before its own
stream knows that reader is done (applies to plans in GE's terms on two or more streams; part of the layout
concern, listed in spec/invariants/layout.py).

LAYOUT-STREAM-ORDER asks only that memory two tensors share is handed over in an order the streams
guarantee. GE's planner decides more than that, in step numbers: block_mem_assigner.cc
``GetDiffStreamMaxLifeTime`` ends the life of a tensor read by a task of another stream at the first node of
the tensor's own stream known to run after that reader (the stream edge back, ``in_stream_edges_``), or at
the end of the model when there is none; ``ReleaseMemory`` gives the block back only then, after that
node's own outputs have their blocks. So no tensor placed at or before that node takes the memory, even
one the streams would order safely. A planner that ends such a life at the reader's step plans less memory
than GE (safe on many graphs, and not GE); only GE's unit tests' numbers saw that before.

The spec recomputes the order the streams guarantee as LAYOUT-STREAM-ORDER does (its vector clocks over
``streams``, ``stream_labels``, ``producers``, ``consumers``, ``control``), finds that node for every reader
on another stream, and asks that no later piece of memory in the feature map computed on the tensor's own
stream over its bytes starts at or before it. One on another stream GE judges by ``CanBlockLifeReuse``,
which lets it follow a block read on its stream alone right after that read: LAYOUT-STREAM-ORDER judges it. Memory GE lays out by other rules is left alone: graph inputs and outputs (never reused),
weights and variables, atomic outputs, continuous groups and outputs (their blocks end where the group
rules say), dynamic-batch branches exclusive with the tensor.
"""
from __future__ import annotations

import bisect

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._util import GE_MEM, families
from zcspec.spec.invariants.layout_streams import _clocks, _multi_stream
from zcspec.spec.observables.plan import Family, PlanObservation

REGION = "feature_map"


def _points(plan: PlanObservation, clock) -> dict[int, list[int]]:
    """Stream -> the steps that are points of it, in order: its tasks, and a node without a task that an edge
    from another stream makes a point (its clock names it on its labelled stream)."""
    out: dict[int, list[int]] = {}
    for i, node in enumerate(plan.order):
        stream = plan.streams.get(node)
        if stream is None and node in plan.stream_labels and clock[node].get(plan.stream_labels[node]) == i:
            stream = plan.stream_labels[node]
        if stream is not None:
            out.setdefault(stream, []).append(i)
    return out


def _laid_out_otherwise(plan: PlanObservation) -> set[str]:
    grouped = {t for g in plan.continuous_groups for t in g.tensors} | {t for g in plan.continuous_outputs
                                                                        for t in g.tensors}
    return (grouped | set(plan.graph_inputs) | set(plan.graph_outputs) | set(plan.netoutput_inputs)
            | set(plan.fixed) | set(plan.atomic) | set(plan.workspaces))


def _stream_of(plan: PlanObservation, f: Family) -> int | None:
    """The stream of the task that computes ``f``'s root (or owns it, a workspace); None without one."""
    return plan.streams.get(plan.producers.get(f.root) or plan.workspaces.get(f.root, ""))


def _held(plan: PlanObservation):
    """(family, hold step, reader node, the node that knows it or None) for every family of the feature map whose
    memory GE holds past its last read: read by a task of another stream than its root's producer."""
    clock, _ = _clocks(plan)
    points, end = _points(plan, clock), len(plan.order) - 1
    skip = _laid_out_otherwise(plan)
    for f in families(plan):
        if f.region != REGION or skip.intersection(f.members):
            continue
        stream = _stream_of(plan, f)
        if stream is None:
            continue
        on = points.get(stream, [])
        best = None
        for m in f.members:
            for r in plan.consumers.get(m, ()):
                reader = plan.order[r]
                other = plan.streams.get(reader)
                if other is None or other == stream:
                    continue
                i = bisect.bisect_left(on, r, key=lambda k: clock[plan.order[k]].get(other, -1))
                hold = on[i] if i < len(on) else end
                if best is None or hold > best[1]:
                    best = (f, hold, reader, plan.order[on[i]] if i < len(on) else None)
        if best is not None and best[1] > f.last:
            yield best


def _stream_hold(plan: PlanObservation):
    held = list(_held(plan))
    if not held:
        return
    others = [g for g in families(plan) if g.region == REGION and g.end > g.offset]
    for f, hold, reader, knower in held:
        stream = _stream_of(plan, f)
        for g in others:
            if (g.root == f.root or _stream_of(plan, g) != stream or not f.last < g.first <= hold or g.end <= f.offset or f.end <= g.offset
                    or plan.exclusive(f.root, g.root)):
                continue
            until = (f"node {knower!r} (step {hold}), the first of its stream known to run after it" if knower
                     else f"the end of the model (step {hold}): no node of its stream is known to run after it")
            yield violation(f"tensor {g.root!r}", f"starts at step {g.first} over bytes of {f.root!r} "
                            f"[{max(f.offset, g.offset)}, {min(f.end, g.end)}) on the same stream, which node {reader!r} "
                            f"reads on another stream: GE holds that memory until {until}", step=g.first, held=f.root,
                            until=hold, reader=reader)


def _applies(plan: PlanObservation) -> bool:
    return plan.ge_shaped and _multi_stream(plan) and any(True for _ in _held(plan))


STREAM_HOLD = Invariant(
    id="LAYOUT-STREAM-HOLD",
    title="Memory read on another stream is held until its own stream knows the read is done",
    statement="In a plan in GE's terms on two or more streams, for every piece of feature-map memory (a tensor "
              "and its aliases; not a graph input or output, a weight, an atomic output or a member of a "
              "continuous group) read by a task on another stream than the node that computes it, no other "
              "piece of memory computed (or owned, a workspace) on that node's stream over its bytes starts "
              "after it and at or before the first node of that stream known (by data and control edges and stream order) to run after that reader, "
              "or the last step when there is no such node; pieces of dynamic-batch branches exclusive with it "
              "aside.",
    rationale="GE ends such a life at the stream edge back (GetDiffStreamMaxLifeTime) and releases the block "
              "after that node's outputs have theirs (ReleaseMemory), so nothing placed up to that node reuses "
              "it. A planner that ends the life at the reader's own step is often still safe (LAYOUT-STREAM-ORDER "
              "holds) but plans less memory than GE, a different decision that only GE's unit-test numbers "
              "would otherwise see. A piece of memory on another stream is left to LAYOUT-STREAM-ORDER: GE lets "
              "it follow a block read on its own stream only, after that read (CanBlockLifeReuse).",
    ge_source=GE_MEM + "block_mem_assigner.cc (GetDiffStreamMaxLifeTime, CanBlockLifeReuse, "
              "BlockMemAssigner::ReleaseMemory, BlockMemAssigner::AddInStreamEdge)",
    applies_to="plan", concern="layout", predicate=_stream_hold, precondition=_applies, ge_only=True,
    needs=("streams",),
)
