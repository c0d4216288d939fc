"""Layout along one execution path: the memory a tensor is placed in exists on that path before it.

A plan of a program with conditionals describes one execution path (a choice at every branch that
runs; docs/foreign-planners.md). A planner that allocates its arenas as instructions of the program
(TVM Relax's ``R.memory.alloc_storage``) says on which steps of the path each arena comes into
being (``arena_allocations``); every other planner's arenas exist before the first step.
"""
from __future__ import annotations

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._util import families
from zcspec.spec.observables.plan import PlanObservation


# -- LAYOUT-ARENA-ALLOCATED -------------------------------------------------------------------

def _arena_allocated(plan: PlanObservation):
    for f in families(plan):
        steps = plan.arena_allocations.get(f.region)
        if steps is None or any(s <= f.first for s in steps):
            continue
        if steps:
            why = (f"lives from step {f.first} in arena {f.region!r}, which this execution path allocates only "
                   f"later, at step(s) {sorted(steps)}")
        else:
            why = (f"lives from step {f.first} in arena {f.region!r}, which this execution path never allocates "
                   "(it is allocated on another path, or nowhere): the tensor is placed in memory that does not exist")
        yield violation(f"tensor {f.root!r}", why, arena=f.region, first_step=f.first, allocated_at=sorted(steps))


ARENA_ALLOCATED = Invariant(
    id="LAYOUT-ARENA-ALLOCATED",
    title="A tensor's arena is allocated on its path before the tensor lives in it",
    statement="When the plan gives the steps that allocate an arena (arena_allocations), every tensor in that "
              "arena (a root and its aliases together) starts its lifetime at or after one of those steps. A plan "
              "describes one execution path, so an arena allocated only on another path (the other branch of a "
              "conditional) counts as never allocated.",
    rationale="A planner that reuses one storage for tensors of two branches must allocate it where both "
              "branches see it, before the conditional. If it allocates it inside the first branch only, the "
              "second branch places its tensor in a storage that was never allocated on its path, and the "
              "program reads an undefined handle (apache/tvm#20191: StaticPlanBlockMemory reuses a storage "
              "released in the then branch for a tensor of the else branch, which crashes when the else branch "
              "runs). Non-overlap cannot see this: the bytes are fine, the memory is absent.",
    ge_source="not a GE rule: GE allocates its whole feature map before the first step, so its plans give no "
              "arena_allocations and never exercise this claim",
    applies_to="plan", concern="layout_paths", predicate=_arena_allocated,
    precondition=lambda plan: any(t.region in plan.arena_allocations for t in plan.tensors),
)

INVARIANTS = (ARENA_ALLOCATED,)
