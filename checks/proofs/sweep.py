"""The independent layout checker: a sweep over lifetimes, then plain integer tests.

It never trusts the planner's blocks: it recomputes which tensors are alive
together from each tensor's (first, last) and compares their address ranges.
The claims (the same ones :mod:`zcspec.checks.proofs.z3_layout` proves symbolically;
the address model is in :mod:`zcspec.checks.proofs.layout`):

- ``overlap``: two tensors alive at a common step (inclusive lifetimes, the
  contract's ``first``/``last``), not sharing an alias root nor in two
  different dynamic-batch branches, both non-empty,
  occupy disjoint address ranges. Tensors in different allocations are
  disjoint by the assumption that allocations do not overlap, provided each
  stays inside its own allocation, which is the next claim;
- ``out_of_bounds``: every non-empty tensor lies inside its allocation (its
  region, or the user buffer bound to its zero-copy block);
- ``misaligned``: every tensor owning memory has an address that is a multiple
  of its required alignment for every admissible base, i.e. the alignment
  divides the base's alignment and the tensor's offset (aliases are exempt);
- ``alias_outside_root``: a non-empty alias lies inside the range of the tensor
  whose memory it shares (the end of its alias_of chain), in the same
  allocation. An alias and its root may overlap: that is the point of an alias.
"""
from __future__ import annotations

import heapq
from typing import Iterator, Mapping, Sequence

import attrs

from zcspec.checks.proofs.layout import Layout, Placement, exempt, read_layout


@attrs.frozen
class SweepFinding:
    """One broken layout claim, naming the tensor(s) and, for bounds, the allocation. (Not the spec's
    ``Violation``: that one names an invariant; these are the address model's own claims.)"""

    kind: str                 # "overlap" | "out_of_bounds" | "misaligned" | "alias_outside_root"
    tensors: tuple[str, ...]  # the offending pair; (tensor, allocation) for out_of_bounds; (tensor,) for misaligned
    message: str


def overlapping_pairs(lifetimes: Sequence[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """Yield each pair ``(i, j)`` of indices whose inclusive lifetimes intersect, once.

    ``lifetimes[k] = (first, last)`` with ``first <= last``. ``i`` starts no later
    than ``j``. A sort by start plus an active set ordered by end: O(N log N + P)
    for P pairs (the sweep that computes the max-live lower bound).
    """
    order = sorted(range(len(lifetimes)), key=lambda k: lifetimes[k][0])
    ends: list[tuple[int, int]] = []   # heap of (last, index) of the active items
    active: dict[int, None] = {}       # insertion-ordered, so the output is deterministic
    for j in order:
        first, last = lifetimes[j]
        while ends and ends[0][0] < first:
            del active[heapq.heappop(ends)[1]]
        for i in active:
            yield i, j
        active[j] = None
        heapq.heappush(ends, (last, j))


def conflict_pairs(layout: Layout) -> list[tuple[Placement, Placement]]:
    """Lifetime-overlapping pairs that must be disjoint: both non-empty, not exempt
    (one alias root, or two different dynamic-batch branches)."""
    ts = layout.tensors
    return [(ts[i], ts[j]) for i, j in overlapping_pairs([(t.first, t.last) for t in ts])
            if ts[i].extent and ts[j].extent and not exempt(ts[i], ts[j])]


def _overlaps(a: Placement, b: Placement) -> bool:
    return a.alloc == b.alloc and a.rel < b.rel + b.extent and b.rel < a.rel + a.extent


def _overlap_violations(pairs) -> Iterator[SweepFinding]:
    for a, b in pairs:
        if _overlaps(a, b):
            yield SweepFinding("overlap", (a.name, b.name),
                            f"tensors {a.name!r} [{a.rel}, {a.rel + a.extent}) and {b.name!r} "
                            f"[{b.rel}, {b.rel + b.extent}) of {a.alloc!r} overlap while both alive "
                            f"(steps {max(a.first, b.first)}..{min(a.last, b.last)})")


def _single_violations(layout: Layout) -> Iterator[SweepFinding]:
    allocs = {a.key: a for a in layout.allocations}
    by_name = layout.by_name()
    for t in layout.tensors:
        alloc = allocs[t.alloc]
        if t.extent and (t.rel < 0 or t.rel + t.extent > alloc.size):
            yield SweepFinding("out_of_bounds", (t.name, t.alloc),
                            f"tensor {t.name!r} [{t.rel}, {t.rel + t.extent}) exceeds {t.alloc!r} of {alloc.size} bytes")
        if alloc.base_align % t.align or t.rel % t.align:
            yield SweepFinding("misaligned", (t.name,),
                            f"tensor {t.name!r} at offset {t.rel} of {t.alloc!r} (base aligned to {alloc.base_align}) "
                            f"is not always {t.align}-byte aligned")
        root = by_name[t.root]
        if t.alias_of is not None and t.extent and not (
                t.alloc == root.alloc and root.rel <= t.rel and t.rel + t.extent <= root.rel + root.extent):
            yield SweepFinding("alias_outside_root", (t.name, root.name),
                            f"alias {t.name!r} [{t.rel}, {t.rel + t.extent}) of {t.alloc!r} is not inside its root "
                            f"{root.name!r} [{root.rel}, {root.rel + root.extent}) of {root.alloc!r}")


def check_layout(layout: Layout) -> list[SweepFinding]:
    """Every broken claim of ``layout``: per-tensor ones first, then overlapping pairs."""
    return list(_single_violations(layout)) + list(_overlap_violations(conflict_pairs(layout)))


def sweep_check(plan: Mapping, **layout_options) -> list[SweepFinding]:
    """Every broken claim of ``plan`` (the JSON contract of docs/plan-format.md); [] when the layout is safe.

    ``layout_options`` go to :func:`zcspec.checks.proofs.layout.read_layout` (alignments,
    declared user-buffer sizes). Raises PlanFormatError on a malformed plan.
    """
    return check_layout(read_layout(plan, **layout_options))
