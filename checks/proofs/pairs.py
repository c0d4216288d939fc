"""Which tensor pairs the Z3 formula must contain: witness pairs, O(N) instead of O(P).

Encoding every lifetime-overlapping pair (what :func:`zcspec.checks.proofs.sweep.conflict_pairs`
returns) costs O(P) terms, and P is quadratic where many tensors live
together: the 267 weights of ResNet-50 all live for the whole run, so
a plan has 80k pairs, and DenseNet-121 has 900k. Two facts shrink it without
losing a violation:

1. **Across allocations** nothing needs encoding: a tensor lies inside its
   allocation (a claim the formula keeps, per tensor) and allocations are
   disjoint (an assumption), so tensors of two allocations are disjoint.
2. **Within one allocation** the base is shared, so address order is offset
   order. At a moment when the set S of live tensors is fixed, sort S by
   offset; for each y let x(y) be the tensor before y whose range ends
   highest, and take (x(y), y) when the two have different alias roots. If
   some pair of S overlaps, one of these does: take the overlapping pair
   (x, y) whose later member y comes first. x(y) ends at least as high as x,
   so above y's start; if its root differs from y's it overlaps y, and
   otherwise x and x(y) (of different roots, as x's differs from y's) both
   contain y's start: an overlapping pair whose later member comes before y,
   which the choice of (x, y) excludes. S changes only where a lifetime starts or ends,
   and two tensors alive together are both in S at the later of their first
   steps, so the witnesses of those moments cover every pair.

The witnesses are chosen from the offsets, which are constants of the formula
(only the bases are symbolic), so the reduction is exact for every placement
of the bases; Z3 then checks each witness pair with the bases left symbolic.
"""
from __future__ import annotations

import bisect
from collections import defaultdict

from zcspec.checks.proofs.layout import Layout, Placement, exempt


def _moments(group: list[Placement]) -> list[tuple[list[Placement], list[Placement]]]:
    """(tensors starting, tensors ending just before), in step order, at each step where the live set changes."""
    starts, ends = defaultdict(list), defaultdict(list)
    for t in group:
        starts[t.first].append(t)
        ends[t.last + 1].append(t)
    return [(starts.get(s, []), ends.get(s, [])) for s in sorted(set(starts) | set(ends))]


def _witnesses(ordered: list[tuple[int, str, Placement]], out: set) -> None:
    """Add (x(y), y) for every y of ``ordered`` (sorted by offset; see the module docstring) to ``out``."""
    top = None   # the predecessor whose range ends highest
    for _, _, y in ordered:
        if top is not None and not exempt(top, y):
            out.add((top, y))    # overlapping or not: Z3 decides, this loop only chooses
        if top is None or y.rel + y.extent > top.rel + top.extent:
            top = y


def _branches(groups):
    """Each allocation's tensors, once per dynamic-batch branch with the unlabelled ones:
    within one such group only a shared alias root exempts a pair, as the argument needs."""
    for group in groups:
        labels = sorted({t.batch for t in group} - {""})
        common = [t for t in group if not t.batch]
        if not labels:
            yield common
        for label in labels:
            yield common + [t for t in group if t.batch == label]


def witness_pairs(layout: Layout) -> list[tuple[Placement, Placement]]:
    """Pairs of non-empty tensors of one allocation, alive together and not exempt (different
    alias roots and batch branches), such that the layout has no overlapping pair iff none of
    these overlaps."""
    by_alloc: dict[str, list[Placement]] = defaultdict(list)
    for t in layout.tensors:
        if t.extent:
            by_alloc[t.alloc].append(t)
    out: set = set()
    for group in _branches(by_alloc.values()):
        live: list[tuple[int, str, Placement]] = []   # kept sorted by (offset, name)
        for starting, ending in _moments(group):
            for t in ending:
                del live[bisect.bisect_left(live, (t.rel, t.name))]
            for t in starting:
                bisect.insort(live, (t.rel, t.name, t))
            if starting:   # a removal alone cannot create an overlap
                _witnesses(live, out)
    order = {t.name: i for i, t in enumerate(layout.tensors)}
    return sorted(out, key=lambda p: (order[p[0].name], order[p[1].name]))
