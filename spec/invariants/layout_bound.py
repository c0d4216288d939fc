"""The lower bound of a plan's reused memory: each activation arena's peak of live bytes, exclusive
branches counted by their heaviest (applies to plans; part of the layout concern, listed in
spec/invariants/layout.py). ``arena_peak`` and ``recompute_lower_bound`` are the spec's own
computation of the bound, which the examples and the reports of other compilers' plans use too."""
from __future__ import annotations

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._util import GE_MEM, families
from zcspec.spec.observables.plan import PlanObservation


# -- LAYOUT-LOWER-BOUND -----------------------------------------------------------------------

def _live_peak(plan: PlanObservation, fams) -> list[int]:
    live = [0] * (len(plan.order) + 1)
    for f in fams:
        size = plan.tensor[f.root].aligned_size
        live[f.first] += size
        live[f.last + 1] -= size
    total, out = 0, []
    for d in live[:-1]:
        total += d
        out.append(total)
    return out


def _choices(plan: PlanObservation, root: str) -> list[tuple[str, str]]:
    """The (group, branch) choices a root runs under: dynamic batches count as one group."""
    out = [("batch labels", plan.batch_labels[root])] if plan.batch_labels.get(root) else []
    for g in plan.exclusive_groups:
        out += [(g.name, label) for label, names in g.branches.items() if root in names]
    return out


def arena_peak(plan: PlanObservation, region: str) -> int:
    """Max over steps of the summed aligned sizes of the memory live in ``region`` (aliases counted once),
    in the heaviest execution: at each step each choice (dynamic batches, an exclusive group) adds only
    its heaviest branch, as the branches of a choice never run together. A root under several choices
    at once counts in none (it is live only where all of them agree, which this bound does not follow),
    so the result stays a lower bound."""
    base, by_branch = [], {}
    for f in families(plan):
        if f.region != region:
            continue
        choices = _choices(plan, f.root)
        if not choices:
            base.append(f)
        elif len(choices) == 1:
            by_branch.setdefault(choices[0], []).append(f)
    steps = _live_peak(plan, base)
    groups: dict[str, list[list[int]]] = {}
    for (group, _), fs in by_branch.items():
        groups.setdefault(group, []).append(_live_peak(plan, fs))
    for peaks in groups.values():
        steps = [s + max(p[i] for p in peaks) for i, s in enumerate(steps)]
    return max(steps, default=0)


def activation_arenas(plan: PlanObservation) -> list[str]:
    """The reused arenas, in name order: GE's feature map, or every declared arena of kind activations."""
    return sorted(r for r in {t.region for t in plan.tensors} | set(plan.regions)
                  if getattr(plan.arena(r), "kind", "") == "activations")


def recompute_lower_bound(plan: PlanObservation) -> int:
    """The sum over the activation arenas of their peaks (:func:`arena_peak`)."""
    return sum(arena_peak(plan, r) for r in activation_arenas(plan))


def _lower_bound(plan: PlanObservation):
    arenas = activation_arenas(plan)
    peaks = {r: arena_peak(plan, r) for r in arenas}
    for r in arenas:
        size = plan.regions.get(r, 0)
        if size < peaks[r]:
            yield violation(f"region {r!r}", f"is {size} bytes, below the {peaks[r]} bytes live in it at its peak: "
                            "some live tensors must overlap", size=size, peak=peaks[r])
    if plan.lower_bound is None:
        return
    lb, total = sum(peaks.values()), sum(plan.regions.get(r, 0) for r in arenas)
    if plan.lower_bound < lb:
        yield violation("lower_bound", f"the plan reports lower_bound={plan.lower_bound}, but the live "
                        f"{' + '.join(repr(r) for r in arenas)} bytes already peak at {lb}",
                        reported=plan.lower_bound, recomputed=lb)
    elif total < plan.lower_bound:
        where = f"region {arenas[0]!r}" if len(arenas) == 1 else " + ".join(f"region {r!r}" for r in arenas)
        yield violation(where, f"{'is' if len(arenas) == 1 else 'are'} {total} bytes, below the reported lower "
                        f"bound {plan.lower_bound}: if the bound holds, some live tensors must overlap",
                        reported=plan.lower_bound, size=total)


LOWER_BOUND = Invariant(
    id="LAYOUT-LOWER-BOUND",
    title="The reported lower bound is a real bound, and the reused memory is no smaller",
    statement="Each activation arena (GE: the feature map) is at least its peak, the maximum over steps of "
              "the summed aligned sizes of its memory live at that step (aliases counted once; of the branches "
              "of a dynamic batch or an exclusive group only the heaviest); and where the plan reports a "
              "lower_bound: the sum of those peaks <= lower_bound <= the sum of those arenas' sizes.",
    rationale="The lower bound is how a plan's quality is judged (arena / LB); a planner that under-reports it "
              "flatters itself, and an arena below its live bytes is proof of an overlap. For interval "
              "lifetimes the plain bound equals the heaviest clique, so one sorted sweep computes it. A planner "
              "may report a tighter (higher) bound that accounts for its rules, e.g. a continuous group placed "
              "whole over its joint lifetime; the claim allows that and only requires it to stay a bound the "
              "plan itself meets.",
    ge_source="the max-live lower bound of dynamic storage allocation (docs/packing.md); " + GE_MEM + "hybrid_mem_assigner.cc (planner score); "
              "dynamic_batch_mem_assigner.cc (batches overlap)",
    applies_to="plan", concern="layout", predicate=_lower_bound,
    precondition=lambda plan: bool(activation_arenas(plan)) and any(t.region in activation_arenas(plan)
                                                                    for t in plan.tensors),
)
