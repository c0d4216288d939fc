"""Layout over time: a tensor's lifetime covers every read and write of it, and an in-place step
reads its root only where it writes it (applies to plans; part of the layout concern, listed in
spec/invariants/layout.py)."""
from __future__ import annotations

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._util import GE_MEM, families, write_steps
from zcspec.spec.observables.plan import PlanObservation


# -- LAYOUT-LIFETIME-COVERS-USES --------------------------------------------------------------

def _outside(t, steps) -> list[int]:
    """The steps of ``steps`` outside ``t``'s lifetime [first, last]."""
    return [s for s in steps if not t.first <= s <= t.last]


def _lifetime_covers_uses(plan: PlanObservation):
    end = len(plan.order) - 1
    for name, steps in sorted(plan.consumers.items()):
        t = plan.tensor[name]
        if late := _outside(t, steps):
            yield violation(f"tensor {name!r}", f"is read at step(s) {late} outside its lifetime "
                            f"{t.first}..{t.last}", steps=late)
    hull = {f.root: f for f in families(plan)}
    for name in plan.graph_inputs:
        f = hull[plan.root(name)]
        if f.first > 0:
            yield violation(f"tensor {name!r}", f"is a graph input but its memory ({f.root!r} and its aliases) is "
                            f"only kept from step {f.first}: the caller's data is there before step 0, so a tensor "
                            f"written before step {f.first} may overwrite it", first_step=f.first)
    for name in plan.graph_outputs:
        f = hull[plan.root(name)]
        if f.last < end:
            yield violation(f"tensor {name!r}", f"is a graph output but its memory ({f.root!r} and its aliases) is "
                            f"only kept until step {f.last}, not to the last step {end}", last_step=end)


LIFETIME_COVERS_USES = Invariant(
    id="LAYOUT-LIFETIME-COVERS-USES",
    title="A tensor's lifetime covers every read of it",
    statement="Every step that reads a tensor (consumers) lies within [first, last], the memory of every "
              "graph input (its root and the root's aliases together) lives from the first step, and that of "
              "every graph output to the last step.",
    rationale="Non-overlap is only as good as the lifetimes it is checked against: a lifetime that ends before "
              "the last read lets the planner hand the memory to another tensor too early. The spec recomputes "
              "this from the consumer steps, as tinygrad's planner test recomputes lifetimes independently. A "
              "graph output that is a view or an in-place result keeps its root's memory alive through the "
              "family's lifetime (the hull of its members'), so the root's own lifetime need not be widened. "
              "A graph input's bytes hold the caller's data before the first step runs: a planner that starts "
              "its life at its first read lets an earlier step's output overwrite it.",
    ge_source=GE_MEM + "block_mem_assigner.cc (ReleaseMemory, ref_count_, kMaxLifeTime for graph outputs)",
    applies_to="plan", concern="layout", predicate=_lifetime_covers_uses,
    precondition=lambda plan: bool(plan.consumers) or bool(plan.graph_inputs) or bool(plan.graph_outputs),
    needs=("consumers",),
)


# -- LAYOUT-LIFETIME-COVERS-WRITES ------------------------------------------------------------

def _lifetime_covers_writes(plan: PlanObservation):
    for name, steps in sorted((n, sorted(s)) for n, s in write_steps(plan).items()):
        t = plan.tensor[name]
        if early := _outside(t, steps):
            yield violation(f"tensor {name!r}", f"is written at step(s) {early} outside its lifetime "
                            f"{t.first}..{t.last}", steps=early)


LIFETIME_COVERS_WRITES = Invariant(
    id="LAYOUT-LIFETIME-COVERS-WRITES",
    title="A tensor's lifetime covers every write of it",
    statement="Every step that writes a tensor (writes: its producer, an in-place update; and the step of "
              "its producer node, producers) lies within [first, last].",
    rationale="A planner that starts a lifetime at the first read instead of the write (or forgets an op that "
              "writes its output early, or a scratch tensor written before its consumer runs) lets another "
              "tensor alive at the write step share the bytes, and the write clobbers it. Reads alone do not "
              "show this: the clobbered tensor is read correctly planned, just with wrong data. The spec takes "
              "the write steps from the program's own op list, never from the planner's lifetimes (the bug "
              "class of ONNX Runtime's pull request 21019 and TFLite Micro's issue 712).",
    ge_source=GE_MEM + "block_mem_assigner.cc (ApplyMemory at the producing node: a life starts at its "
              "node's topological index)",
    applies_to="plan", concern="layout", predicate=_lifetime_covers_writes,
    precondition=lambda plan: bool(plan.writes) or bool(plan.producers),
    needs=("writes", "producers"),
)


# -- LAYOUT-IN-PLACE-READS -------------------------------------------------------------------

def _in_place_reads(plan: PlanObservation):
    for s in plan.in_place:
        root = plan.root(s.tensor)
        for r in s.reads:
            if r.to == r.lo:
                continue
            for w in s.writes:
                lo, hi = max(r.lo, w.lo), min(r.hi, w.hi)
                if lo < hi:
                    yield violation(
                        f"tensor {s.tensor!r}",
                        f"is computed at step {s.step} in place over {root!r}, and that step reads bytes [{r.lo}, "
                        f"{r.hi}) into [{r.to}, {r.to + r.hi - r.lo}) while it writes [{w.lo}, {w.hi}): bytes "
                        f"[{lo}, {hi}) are read at another position than they are written, so the result depends "
                        "on the order the kernel visits them in", step=s.step, root=root, read=[r.lo, r.hi],
                        to=r.to, written=[w.lo, w.hi])
                    break


IN_PLACE_READS = Invariant(
    id="LAYOUT-IN-PLACE-READS",
    title="A step computing in place reads its root only where it writes it",
    statement="When a step computes a tensor in the bytes of its root (in_place), every range of the root it "
              "reads either lies outside every range the step writes or is read element by element (its bytes "
              "go to the same offsets, to = lo).",
    rationale="Sharing an operand's buffer with the output is safe only if no element is overwritten before "
              "every read of it: an elementwise update reads each element exactly where it writes it, but a "
              "shifted copy (out[i + 1] = in[i]) reads bytes the same loop has already written unless it "
              "happens to run backwards. The plan, not the kernel, must rule that out; non-overlap cannot, "
              "since root and result are one family by design. This is the class of openxla/xla#49176, where "
              "an in-place dynamic-update-slice fusion reads a shifted slice of its own operand.",
    ge_source=GE_MEM + "block_mem_assigner.cc (ref and in-place outputs reuse their input's block only for ops "
              "that declare it, REF_VAR_SRC_VAR_NAME and the op's reuse-input attribute): GE's form of the rule",
    applies_to="plan", concern="layout", predicate=_in_place_reads,
    precondition=lambda plan: any(r.to != r.lo for s in plan.in_place for r in s.reads),
)
