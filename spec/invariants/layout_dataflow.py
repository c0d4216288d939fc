"""Layout as data flow: a read of reused memory sees the bytes written for the tensor it reads.

LAYOUT-NO-OVERLAP and the lifetime claims judge where and when each tensor lives. They cannot see a
read of bytes nothing wrote (a tensor placed and read, but its producer's write sent elsewhere), nor a
write between two in-place results of one root, which share their memory by design and so never
"overlap". This claim follows the writes themselves: from the plan's ``writes`` and ``producers``, the
``alias_of`` chains and the ``in_place`` steps, never from the planner's lifetimes.
"""
from __future__ import annotations

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._util import GE_MEM, write_steps
from zcspec.spec.observables.plan import PlanObservation

# Arena kinds whose bytes hold nothing the program can rely on until a step writes them: memory a
# planner hands from tensor to tensor. The caller's buffers, constants and variables hold data before
# the first step.
REUSED = ("activations", "scratch")


def _line(plan: PlanObservation, name: str) -> list[str]:
    """``name`` and the tensors it is computed over, following ``alias_of`` to the root."""
    out = [name]
    while plan.tensor[out[-1]].alias_of is not None:
        out.append(plan.tensor[out[-1]].alias_of)
    return out


def _judged(plan: PlanObservation, written: dict[str, set[int]]):
    """(tensor, its line, its read steps) for every read tensor of reused memory whose line the plan gives
    write facts for (a tensor listed in no ``writes`` and no ``producers`` is one the plan says nothing
    about, not one nothing writes)."""
    for name, steps in sorted(plan.consumers.items()):
        arena = plan.arena(plan.tensor[name].region)
        line = _line(plan, name)
        if arena is not None and arena.kind in REUSED and any(m in written for m in line):
            yield name, line, sorted(set(steps))


def _clobbers(plan: PlanObservation, name: str, line: list[str]) -> list[tuple[int, str, int, int]]:
    """(step, tensor, lo, hi): the in-place steps of ``name``'s family, off its line, that write its bytes."""
    t = plan.tensor[name]
    out = []
    for s in plan.in_place:
        if s.tensor in line or plan.root(s.tensor) != line[-1]:
            continue
        for w in s.writes:
            lo, hi = max(w.lo, t.offset), min(w.hi, t.end)
            if lo < hi:
                out.append((s.step, s.tensor, lo, hi))
    return out


def _reads_see_writes(plan: PlanObservation):
    written = write_steps(plan)
    filled = set(plan.graph_inputs) | set(plan.fixed)
    for name, line, reads in _judged(plan, written):
        own = sorted({w for m in line for w in written.get(m, ())})
        clobbers = _clobbers(plan, name, line)
        for r in reads:
            before = [w for w in own if w <= r]
            if not before:
                if not filled.intersection(line):
                    over = f" nor the tensors it is computed over ({', '.join(map(repr, line[1:]))})" if line[1:] else ""
                    yield violation(f"tensor {name!r}", f"is read at step {r}, but no step at or before it writes it{over}: "
                                    "the read sees whatever the reused memory held before", step=r)
                continue
            for step, other, lo, hi in clobbers:
                if before[-1] < step < r:
                    yield violation(f"tensor {name!r}", f"is read at step {r}, last written for it at step {before[-1]}, "
                                    f"but step {step} computes {other!r} in place over the same root "
                                    f"({line[-1]!r}) and writes bytes [{lo}, {hi}) of it in between, so the read "
                                    f"sees the data of {other!r}", step=r, written_at=before[-1], by=other, at=step,
                                    bytes=[lo, hi])


def _exercised(plan: PlanObservation) -> bool:
    return any(True for _ in _judged(plan, write_steps(plan)))


READS_SEE_WRITES = Invariant(
    id="LAYOUT-READS-SEE-WRITES",
    title="A read of reused memory sees the bytes written for the tensor it reads",
    statement="For every step r that reads a tensor of reused memory (an arena of kind activations or scratch) "
              "whose writes the plan gives (writes or producers, for it or for a tensor it is computed over): some "
              "step at or before r writes the tensor or a tensor of its alias_of chain, unless the tensor is a "
              "graph input or fixed; and no in-place step of another member of its family (a result computed over "
              "the same root, not over this tensor's chain) writes the bytes it reads after that write and before r.",
    rationale="A reused arena holds garbage, or a dead tensor's data, until a step writes it: a tensor that is "
              "read but that no step wrote reads whatever was there (iree-org/iree#19355: ScheduleAllocation "
              "gave an unused, tied dispatch result its own transient slice, so the dispatch wrote there and the "
              "concatenation that read the tied slice read bytes nothing wrote). In-place results of one root "
              "share its memory by design, so LAYOUT-NO-OVERLAP never compares them; if two of them branch off "
              "the same root, the second one's writes overwrite the first while it is still to be read "
              "(iree-org/iree#21053: both loops of a bidirectional LSTM update the same resource in place, and "
              "the first direction's result is read after the second loop overwrote it). A tensor the plan "
              "lists in neither writes nor producers is not judged: the plan says nothing of its writes.",
    ge_source="not a rule GE states: GE's planner gives a tensor its block at the producing node (" + GE_MEM +
              "block_mem_assigner.cc ApplyMemory), so the tensors it plans are written by their producer first",
    applies_to="plan", concern="layout_dataflow", predicate=_reads_see_writes, precondition=_exercised,
    needs=("writes", "producers"),
)

INVARIANTS = (READS_SEE_WRITES,)
