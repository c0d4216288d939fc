"""Faults seeded into a real plan of another compiler: each must be caught by its own claim."""
from __future__ import annotations

import attrs

from zcspec.spec.check import check


def _edit(plan, name, **changes):
    return attrs.evolve(plan, tensors=tuple(attrs.evolve(t, **changes) if t.name == name else t for t in plan.tensors))


def _violated(plan) -> set[str]:
    return set(check(plan).violated())


def assert_seeded_faults_caught(plan, *, misalign: int = 4) -> None:
    """Move a tensor onto a live neighbour (LAYOUT-NO-OVERLAP), misalign one (LAYOUT-ARENA-ALIGN),
    start one after its write (LAYOUT-LIFETIME-COVERS-WRITES) and end one before a read
    (LAYOUT-LIFETIME-COVERS-USES): the plan is clean before, and each fault breaks its claim."""
    assert check(plan).ok
    owners = sorted((t for t in plan.tensors if t.alias_of is None and t.size), key=lambda t: (t.first, t.name))
    a, b = next((a, b) for a in owners for b in owners
                if a is not b and a.offset != b.offset and a.first <= b.first <= a.last)
    assert "LAYOUT-NO-OVERLAP" in _violated(_edit(plan, b.name, offset=a.offset))
    assert "LAYOUT-ARENA-ALIGN" in _violated(_edit(plan, a.name, offset=a.offset + misalign))
    assert "LAYOUT-LIFETIME-COVERS-WRITES" in _violated(_edit(plan, b.name, first=b.first + 1))
    read = next(t for t in owners if any(s > t.first for s in plan.consumers.get(t.name, ())))
    late = max(plan.consumers[read.name])
    assert "LAYOUT-LIFETIME-COVERS-USES" in _violated(_edit(plan, read.name, last=late - 1))
